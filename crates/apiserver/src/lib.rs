//! The API server model. Start here:
//! - [`server::ApiServer`]: create / update / status / binding / delete over the store.
//! - [`admission`]: the mutating admission chain (service accounts, priority, default
//!   tolerations, pod status on create) and update validation.
//! - [`component`]: the [`component::Component`] trait every controller, the scheduler and
//!   every kubelet implement, and the [`component::Ctx`] through which they act.
//!
//! Invariant: nothing writes to the store except through [`server::ApiServer`], and every
//! write carries its actor.

#![deny(missing_docs)]

pub mod admission;
pub mod component;
pub mod error;
pub mod quota;
pub mod server;

pub use component::{Component, ComponentClone, Ctx, Interest, Note, TimerRequest, WatchEvent, WatchFilter};
pub use error::ApiError;
pub use server::{ApiServer, DeleteOptions, Deleted, Propagation, Request};

/// The world's one RNG type: ChaCha8, seeded once per simulation.
pub type SimRng = rand_chacha::ChaCha8Rng;
