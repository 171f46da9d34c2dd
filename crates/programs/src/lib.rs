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
pub mod apache;
pub mod common;
pub mod mysql;
pub mod nginx;
pub mod perl;
pub mod pi;
pub mod python;
pub mod redis;

use kubesim_os::program::{Program, Spawn};

/// Every implementation name [`program_for`] accepts.
pub fn implemented() -> &'static [&'static str] {
    IMPLEMENTED
}

const IMPLEMENTED: &[&str] = &[
    "agnhost",
    "nginx",
    "nginx-debug",
    "nginx-entrypoint",
    "perl",
    "perl-base",
    "python",
    "python2",
    "python3",
    "redis-server",
    "redis-cli",
    "redis-entrypoint",
    "gb-redis-follower",
    "gosu",
    "dumb-init",
    "tini",
];

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
        "redis-server" => Box::new(redis::RedisServer::new(spawn)),
        "redis-cli" => Box::new(redis::RedisCli::new(spawn)),
        "redis-entrypoint" => redis::entrypoint(spawn),
        "gb-redis-follower" => {
            let host = if spawn.env.get("GET_HOSTS_FROM").map(String::as_str).unwrap_or("dns") == "env" {
                spawn.env.get("REDIS_LEADER_SERVICE_HOST").cloned().unwrap_or_default()
            } else {
                "redis-leader".to_string()
            };
            common::ExecAs::boxed(spawn, vec!["redis-server".into(), "--replicaof".into(), host, "6379".into()])
        }
        "gosu" => {
            // gosu USER COMMAND...
            let argv: Vec<String> = spawn.argv.iter().skip(2).cloned().collect();
            if argv.is_empty() {
                return Some(common::Print::boxed(
                    "",
                    "Usage: gosu user-spec command [args]
   eg: gosu tianon bash
       gosu nobody:root bash -c 'whoami && id'
       gosu 1000:1 id

gosu version: 1.17 (go1.18.2 on linux/amd64; gc)
license: Apache-2.0 (full text at https://github.com/tianon/gosu)

",
                    1,
                ));
            }
            common::ExecAs::boxed(spawn, argv)
        }
        "dumb-init" | "tini" => {
            let argv: Vec<String> = spawn.argv.iter().skip(1).skip_while(|a| a.starts_with('-')).cloned().collect();
            common::ExecAs::boxed(spawn, argv)
        }
        "mysqld" => Box::new(mysql::Mysqld::new(spawn)),
        "mysql" => Box::new(mysql::MysqlClient::new(spawn, false)),
        "mysqladmin" => Box::new(mysql::MysqlClient::new(spawn, true)),
        "mysql-entrypoint" => Box::new(mysql::MysqlEntrypoint::new(spawn)),
        "httpd" => Box::new(apache::Apache::httpd(spawn, false)),
        "httpd-foreground" => Box::new(apache::Apache::httpd(spawn, true)),
        "apache2" => Box::new(apache::Apache::debian(spawn, false)),
        "php-apache" | "apache2-foreground" => Box::new(apache::Apache::debian(spawn, true)),
        "php-entrypoint" => apache::php_entrypoint(spawn),
        "php" | "gb-frontend" => apache::php_cli(spawn),
        "nginx-entrypoint" => Box::new(nginx::NginxEntrypoint::new(spawn)),
        _ => return None,
    };
    Some(p)
}
