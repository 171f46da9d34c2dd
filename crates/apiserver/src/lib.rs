//! The API server model. Start here:
//! - [`server::ApiServer`]: create / update / status / binding / delete over the store.
//! - [`admission`]: the mutating admission chain (service accounts, priority, default
//!   tolerations, pod status on create) and update validation.
//!
//! Components (controllers, the scheduler, node agents) and the context through which they act
//! live one layer up, in `kubesim-runtime`.
//!
//! Invariant: nothing writes to the store except through [`server::ApiServer`], and every
//! write carries its actor.

#![deny(missing_docs)]

pub mod admission;
pub mod allocator;
pub mod error;
pub mod quota;
pub mod server;

pub use error::ApiError;
pub use server::{drop_type_dependent_fields, ApiServer, DeleteOptions, Deleted, Propagation, Request, WorldLimits};

/// The world's one RNG type: ChaCha8, seeded once per simulation.
pub type SimRng = rand_chacha::ChaCha8Rng;
