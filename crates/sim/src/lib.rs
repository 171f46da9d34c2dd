//! The simulation world and everything around it. Start here:
//! - [`world::World`]: the virtual clock, the seeded RNG, the event queue, the API server and
//!   every component; `step()` is the only driver.
//! - [`scenario`]: input files in, objects applied at t=0.
//! - [`cluster`]: the built-in namespaces and the default nodes.
//! - [`commands`]: `kubectl ...` and `fault ...` commands against the world.
//! - [`view`]: the one narrow interface the UI consumes (plain data snapshots).
//!
//! Invariant: nothing in this crate reads a wall clock or iterates a hash map.

#![deny(missing_docs)]

pub mod cluster;
pub mod commands;
pub mod run;
pub mod scenario;
pub mod view;
pub mod world;

pub use run::{RunOptions, RunOutcome};
pub use world::World;
