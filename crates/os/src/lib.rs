//! # kubesim-os — the operating system a simulated container sees
//!
//! * [`program`]: the process interface — resumable [`program::Program`]s driven by the host
//!   with [`program::Wake`]s, answering with [`program::Step`]s (sleep, compute, network,
//!   spawn, wait, exit) on virtual time; the [`program::Os`] services the host provides.
//! * [`fs`]: copy-on-write trees, container views with mounts over host-owned volumes, and the
//!   [`fs::Fs`] trait with POSIX errors.
//! * [`sh`]: the shell (busybox ash, dash, bash) as a resumable interpreter.
//! * [`applets`]: busybox and GNU coreutils behaviour.
//! * [`net`]: the resolver, HTTP helpers and network clients (wget, curl, nc, nslookup, dig).
//! * [`registry`]: which program an executable file is, and image trees.
//! * [`testing`]: [`testing::FakeOs`] and the [`testing::run`] driver.
//!
//! Everything is deterministic plain data: no clocks, no threads, no hash-ordered iteration,
//! randomness only through [`program::Os::random_u64`].
#![deny(missing_docs)]
// Style lints this codebase opts out of (the shapes mirror the C sources they model).
#![allow(
    clippy::type_complexity,
    clippy::result_unit_err,
    clippy::result_large_err,
    clippy::if_same_then_else,
    clippy::manual_range_contains,
    clippy::manual_checked_ops,
    clippy::manual_is_multiple_of,
    clippy::needless_match,
    clippy::nonminimal_bool,
    clippy::question_mark,
    clippy::redundant_closure,
    clippy::single_char_add_str,
    clippy::unnecessary_to_owned,
    clippy::useless_format,
    clippy::while_let_loop,
    clippy::explicit_counter_loop
)]

pub mod applets;
pub mod fs;
pub mod net;
pub mod pattern;
pub mod program;
pub mod regex;
pub mod registry;
pub mod sh;
pub mod sys;
pub mod testing;
pub mod time;

pub use program::{Os, Program, Signal, Spawn, Step, Wake};

/// Convenience: a shell program for `argv` (`["sh", "-c", "..."]`, `["bash", "-c", "..."]`)
/// in the flavour its name implies (`bash` → bash, `dash` → dash, anything else → busybox
/// ash), with the default environment, cwd `/` and no stdin.
pub fn sh_program(argv: &[&str]) -> Box<dyn Program> {
    let name = argv.first().map(|a| fs::basename(a)).unwrap_or_default();
    let flavor = match name.as_str() {
        "bash" => sh::Flavor::Bash,
        "dash" => sh::Flavor::Dash,
        _ => sh::Flavor::Ash,
    };
    let spawn = Spawn { argv: argv.iter().map(|s| s.to_string()).collect(), env: registry::default_env("pod"), cwd: "/".into(), ..Spawn::default() };
    Box::new(sh::Shell::from_spawn(flavor, &spawn, |_| Err(fs::Errno::ENOENT)))
}

/// Static analysis: the command names `script` would run (in command position) that are
/// neither shell builtins/keywords, functions it defines, nor in `available` — so the host can
/// warn at apply time (`sh: foo: not found` would follow at run time).
pub fn parse_commands(script: &str, flavor: sh::Flavor, available: &std::collections::BTreeSet<String>) -> Vec<String> {
    sh::missing_commands(script, flavor, available)
}
