//! The simulation world and everything around it. Start here:
//! - [`world::World`]: the component runtime (clock, RNG, queue, API server, hosts, fabric)
//!   wired as a cluster: controllers, scheduler, metrics-server, and per node a host with its
//!   agents; `step()` is the only driver.
//! - [`fault`]: faults as typed verbs, parsed once for the CLI, `--at` and the browser.
//! - [`metrics_server`]: the metrics-server addon (resource metrics API).
//! - [`ingress_nginx`]: the ingress-nginx controller's informers, configuration and status.
//! - [`load_balancer`]: the load balancers' health checks of the nodes (which nodes a
//!   LoadBalancer Service's address forwards to).
//! - [`loader`]: the one loader — input files in, a world out (CLI, browser and tests alike).
//! - [`scenario`]: input files and their decoding.
//! - [`cluster`]: the built-in namespaces and the default nodes.
//! - [`commands`]: `kubectl ...` and `fault ...` commands against the world.
//! - [`netpol`]: `netpol check` and `netpol matrix` — can A reach B and why, and the
//!   connectivity matrix confirmed by probing.
//! - [`minikube`]: the `minikube` commands the docs run (addons, ip, service --url).
//! - [`swarm`]: swarm testing — random clusters, workloads, actions and faults from a seed,
//!   checked for safety (the checkers) and liveness (convergence after a heal).
//! - [`view`]: the one narrow interface the UI consumes (plain data snapshots).
//!
//! Invariant: nothing in this crate reads a wall clock or iterates a hash map.

#![deny(missing_docs)]

pub mod checkers;
pub mod cluster;
pub mod commands;
pub mod coredns;
pub mod diff;
pub mod fault;
pub mod ingress_nginx;
pub mod load_balancer;
pub mod loader;
pub mod metrics_server;
pub mod minikube;
pub mod netpol;
pub mod node_shell;
pub mod port_forward;
pub mod run;
pub mod scenario;
pub mod swarm;
pub mod view;
pub mod why;
pub mod workstation;
pub mod world;

pub use fault::Fault;
pub use run::{RunOptions, RunOutcome};
pub use world::World;
