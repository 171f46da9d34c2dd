//! # kubesim-programs — behavioural models of the programs the Kubernetes docs run
//!
//! Every model is a [`kubesim_os::Program`]: a resumable, cloneable state machine over the
//! modelled OS. [`program_for`] maps an implementation name (what follows `#!kubesim` in an
//! executable, as the image catalogue records it) to its model; [`program_for_image`] does the
//! same for models whose behaviour depends on the image tag (hello-app's version,
//! kubernetes-bootcamp's `v=N`, echoserver's page format); [`generic_server`] stands in for
//! images nobody modelled. See the crate README for the conventions (CPU per request, memory,
//! logs, signals).
#![deny(missing_docs)]
#![allow(clippy::too_many_arguments, clippy::type_complexity, clippy::new_ret_no_self, clippy::large_enum_variant)]

pub mod agnhost;
pub mod apache;
pub mod apt;
pub mod common;
pub mod misc;
pub mod mysql;
pub mod nginx;
pub mod perl;
pub mod pi;
pub mod python;
pub mod redis;
pub mod samples;
pub mod zookeeper;

use kubesim_os::applets::Family;
use kubesim_os::program::{Program, Spawn};

/// Every implementation name [`program_for`] accepts, sorted.
pub fn implemented() -> &'static [&'static str] {
    IMPLEMENTED
}

const IMPLEMENTED: &[&str] = &[
    "agnhost",
    "apache2",
    "apache2-foreground",
    "apt",
    "apt-get",
    "bind9-dig",
    "bind9-nslookup",
    "cassandra",
    "cassandra-entrypoint",
    "cassandra-ready",
    "cassandra-run",
    "coredns",
    "curl-entrypoint",
    "dumb-init",
    "echoserver",
    "envsubst",
    "etcd",
    "fluentd",
    "gb-frontend",
    "gb-redis-follower",
    "generic-server",
    "goproxy",
    "gosu",
    "hello-app",
    "httpd",
    "httpd-foreground",
    "ingress-nginx-controller",
    "ingress-nginx-wait-shutdown",
    "kube-scheduler",
    "kube-webhook-certgen",
    "kubernetes-bootcamp",
    "memcached",
    "memcached-entrypoint",
    "mongo-entrypoint",
    "mongod",
    "mysql",
    "mysql-entrypoint",
    "mysqladmin",
    "mysqld",
    "netcat-openbsd",
    "nginx",
    "nginx-debug",
    "nginx-entrypoint",
    "node",
    "node-entrypoint",
    "node-hello",
    "nodetool",
    "pause",
    "perl",
    "perl-base",
    "php",
    "php-apache",
    "php-entrypoint",
    "ping",
    "postgres",
    "postgres-entrypoint",
    "python",
    "python2",
    "python3",
    "rabbitmq-entrypoint",
    "rabbitmq-server",
    "redis-cli",
    "redis-entrypoint",
    "redis-server",
    "serve-hostname",
    "temurin-entrypoint",
    "tini",
    "vish-stress",
    "wget",
    "zookeeper",
    "zookeeper-scripts",
];

/// The model for an executable whose implementation is `implementation` (the name after
/// `#!kubesim`, or `basename(argv[0])` for multi-call binaries); `None` for names this crate
/// does not implement (the host then runs a generic stand-in).
pub fn program_for(implementation: &str, spawn: &Spawn) -> Option<Box<dyn Program>> {
    program_for_image(implementation, spawn, "")
}

/// The host's hook (`kubesim_host::container::Foreign`): like [`program_for_image`], and the
/// generic stand-in listens on the container's declared ports.
pub fn program_for_container(implementation: &str, spawn: &Spawn, image: &str, ports: &[(u16, bool)]) -> Option<Box<dyn Program>> {
    if implementation == "generic-server" {
        return Some(generic_server(ports));
    }
    program_for_image(implementation, spawn, image)
}

/// Like [`program_for`], with the container's image reference (`gcr.io/google-samples/
/// hello-app:2.0`) for the models whose output depends on the tag. Pass it for every process
/// of the container; `""` when unknown.
pub fn program_for_image(implementation: &str, spawn: &Spawn, image: &str) -> Option<Box<dyn Program>> {
    let p: Box<dyn Program> = match implementation {
        // One catalogue implementation for every APT binary; apt and apt-get are modelled.
        "apt" | "apt-get" => {
            match kubesim_os::fs::basename(if spawn.path.is_empty() { spawn.argv.first().map(String::as_str).unwrap_or("") } else { &spawn.path }).as_str() {
                "apt" | "apt-get" => Box::new(apt::Apt::new(spawn)),
                _ => return None,
            }
        }
        "nginx" | "nginx-debug" => Box::new(nginx::Nginx::new(spawn)),
        "nginx-entrypoint" => Box::new(nginx::NginxEntrypoint::new(spawn)),
        "agnhost" => Box::new(agnhost::Agnhost::new(spawn)),
        "serve-hostname" => {
            let mut sp = spawn.clone();
            sp.argv = std::iter::once("/serve_hostname".to_string())
                .chain(std::iter::once("serve-hostname".to_string()))
                .chain(spawn.argv.iter().skip(1).cloned())
                .collect();
            Box::new(agnhost::Agnhost::new(&sp))
        }
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
        "hello-app" => Box::new(samples::Sample::hello_app(spawn, image)),
        "kubernetes-bootcamp" => Box::new(samples::Sample::bootcamp(spawn, image)),
        "node-hello" => Box::new(samples::Sample::node_hello(spawn)),
        "echoserver" => Box::new(samples::Sample::echoserver(spawn, image)),
        "goproxy" => Box::new(samples::Sample::goproxy(spawn)),
        "node" => samples::node(spawn, image),
        "node-entrypoint" => Box::new(samples::NodeEntrypoint::new(spawn)),
        "zookeeper-scripts" => zookeeper::scripts(spawn),
        "zookeeper" => zookeeper::zookeeper(spawn),
        "pause" => Box::new(misc::Pause::new(spawn)),
        "etcd" => Box::new(misc::Daemon::etcd(spawn)),
        "postgres" => Box::new(misc::Daemon::postgres(spawn)),
        "postgres-entrypoint" => Box::new(misc::PostgresEntrypoint::new(spawn)),
        "mongod" => Box::new(misc::Daemon::mongod(spawn)),
        "memcached" => Box::new(misc::Daemon::memcached(spawn)),
        "rabbitmq-server" => Box::new(misc::Daemon::rabbitmq(spawn)),
        "fluentd" => Box::new(misc::Daemon::fluentd(spawn)),
        "kube-scheduler" => Box::new(misc::Daemon::kube_scheduler(spawn)),
        "coredns" => Box::new(misc::Daemon::coredns(spawn)),
        "ingress-nginx-controller" => Box::new(misc::Daemon::ingress_nginx(spawn, image)),
        "ingress-nginx-wait-shutdown" => Box::new(misc::WaitShutdown),
        "kube-webhook-certgen" => Box::new(misc::WebhookCertgen::new(spawn)),
        "cassandra" | "cassandra-run" => Box::new(misc::Daemon::cassandra(spawn)),
        "nodetool" => Box::new(misc::Nodetool::new(spawn, false)),
        "cassandra-ready" => Box::new(misc::Nodetool::new(spawn, true)),
        "envsubst" => misc::envsubst(spawn),
        "generic-server" => generic_server(&[]),
        // Entrypoint scripts that (for the docs' commands) only exec their arguments.
        "temurin-entrypoint" | "curl-entrypoint" | "mongo-entrypoint" | "memcached-entrypoint" | "rabbitmq-entrypoint" | "cassandra-entrypoint" => {
            let mut argv: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
            let default = match implementation {
                "mongo-entrypoint" => "mongod",
                "memcached-entrypoint" => "memcached",
                "rabbitmq-entrypoint" => "rabbitmq-server",
                "cassandra-entrypoint" => "cassandra",
                "curl-entrypoint" => "curl",
                _ => "",
            };
            if !default.is_empty() && argv.first().is_none_or(|a| a.starts_with('-')) {
                argv.insert(0, default.to_string());
            }
            common::ExecAs::boxed(spawn, argv)
        }
        "gosu" => {
            if spawn.argv.len() < 3 {
                return Some(common::Print::boxed("", "Usage: gosu user-spec command [args]\n   eg: gosu tianon bash\n       gosu nobody:root bash -c 'whoami && id'\n       gosu 1000:1 id\n\ngosu version: 1.17 (go1.18.2 on linux/amd64; gc)\nlicense: Apache-2.0 (full text at https://github.com/tianon/gosu)\n\n", 1));
            }
            let script = spawn.argv.first().cloned().unwrap_or_default();
            Box::new(common::ExecAs::new(spawn, spawn.argv.iter().skip(2).cloned().collect(), String::new(), String::new(), &script).with_user(&spawn.argv[1]))
        }
        "dumb-init" | "tini" => {
            let argv: Vec<String> = spawn.argv.iter().skip(1).skip_while(|a| a.starts_with('-')).cloned().collect();
            common::ExecAs::boxed(spawn, argv)
        }
        // Tools kubesim-os implements under other catalogue names.
        "vish-stress" => Box::new(kubesim_os::applets::stress::Stress::new(spawn)),
        "bind9-dig" => Box::new(kubesim_os::net::dig::Dig::new(spawn)),
        "bind9-nslookup" => Box::new(kubesim_os::net::nslookup::Nslookup::new(spawn, kubesim_os::net::nslookup::Style::Bind)),
        "netcat-openbsd" => Box::new(kubesim_os::net::nc::Nc::new(spawn)),
        "ping" => Box::new(kubesim_os::net::ping::Ping::new(spawn, Family::Gnu)),
        "wget" => Box::new(kubesim_os::net::wget::Wget::new(spawn)),
        _ => return None,
    };
    Some(p)
}

/// A long-running server for images the catalogue does not know: answers HTTP on its declared
/// containerPorts `(port, udp)` with a small page naming the host, logs one start-up line and
/// one access line per request, ignores SIGTERM as PID 1 (like most unhandled programs) and
/// dies with 128+n otherwise. With no ports it listens on 80.
pub fn generic_server(ports: &[(u16, bool)]) -> Box<dyn Program> {
    Box::new(misc::Daemon::generic(ports))
}
