//! # kubesim-programs — behavioural models of the programs the Kubernetes docs run
//!
//! Every model is a [`kubesim_os::Program`]: a resumable, cloneable state machine over the
//! modelled OS. [`program_for`] maps an implementation name (what follows `#!kubesim` in an
//! executable, as the image catalogue records it) to its model; [`generic_server`] stands in for
//! images nobody modelled. See the crate README for the conventions (CPU per request, memory,
//! logs, signals).
#![deny(missing_docs)]
#![allow(clippy::too_many_arguments, clippy::type_complexity, clippy::new_ret_no_self)]

pub mod agnhost;
pub mod common;
pub mod nginx;
pub mod perl;
pub mod pi;
pub mod python;

use kubesim_os::program::{Program, Spawn};

/// Every implementation name [`program_for`] accepts.
pub fn implemented() -> &'static [&'static str] {
    IMPLEMENTED
}

const IMPLEMENTED: &[&str] = &["agnhost", "nginx", "nginx-debug", "nginx-entrypoint", "perl", "perl-base", "python", "python2", "python3"];

/// The model for an executable whose implementation is `implementation` (the name after
/// `#!kubesim`, or `basename(argv[0])` for multi-call binaries); `None` when this crate does
/// not implement it.
pub fn program_for(implementation: &str, spawn: &Spawn) -> Option<Box<dyn Program>> {
    let p: Box<dyn Program> = match implementation {
        "nginx" | "nginx-debug" => Box::new(nginx::Nginx::new(spawn)),
        "agnhost" => Box::new(agnhost::Agnhost::new(spawn)),
        "perl" | "perl-base" => Box::new(perl::Perl::new(spawn)),
        "python3" | "python" => Box::new(python::Python::new(spawn, false)),
        "python2" => Box::new(python::Python::new(spawn, true)),
        "nginx-entrypoint" => Box::new(nginx::NginxEntrypoint::new(spawn)),
        _ => return None,
    };
    Some(p)
}
