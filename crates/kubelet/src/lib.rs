//! The kubelet model. Start here:
//! - [`kubelet::Kubelet`]: the per-node component (pod workers, PLEG, status manager, node
//!   registration, node status and Lease heartbeats).
//! - [`cri`]: the CRI runtime model behind `RuntimeService` / `ImageService` traits, with the
//!   latency table and the image catalogue.
//! - [`process`]: what a container's process does (image entrypoints, the shell subset).
//! - [`status`]: getPhase and pod conditions as pure functions.
//!
//! Invariant: the kubelet talks to the API server only through its `Ctx` (watch on its own
//! pods, status writes, events, its Node and Lease) and to containers only through the CRI
//! traits.

#![deny(missing_docs)]

pub mod cri;
pub mod kubelet;
pub mod probe;
pub mod process;
pub mod status;

pub use kubelet::{Kubelet, NodeSetup};
