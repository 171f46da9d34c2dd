//! The kubelet model. Start here:
//! - [`kubelet::Kubelet`]: the per-node component: the watch on its pods, dispatch to pod
//!   workers, timers and host events (power, partitions, restarts).
//! - [`pod_worker`]: a pod worker's explicit state machine (syncing → terminating →
//!   terminated; rejected) and its in-flight CRI call.
//! - [`sync`]: computePodActions/SyncPod — which CRI call comes next and what its completion
//!   does; graceful termination.
//! - [`pleg`]: the relist that turns runtime changes into pod syncs.
//! - [`status_manager`]: the pod status generated from the worker and the runtime.
//! - [`node_status`]: node registration, node status and the Lease heartbeat.
//! - [`eviction`], [`prober`], [`admission`]: the eviction manager, probes, node admission.
//! - The seams the data plane plugs into: [`network`] (CNI ADD/DEL), [`volumes`] (what each
//!   volume mount shows) and [`volume_manager`] (CSI plugin registration; attach, stage and
//!   publish of CSI volumes before a pod starts, the reverse after it stops); [`env`] builds
//!   container environments.
//! - [`status`]: getPhase as a pure function.
//!
//! The container runtime it drives (the CRI model) belongs to the node's host
//! (`kubesim_host::cri`); every handler reaches it through `Ctx::host`.
//!
//! Invariant: the kubelet talks to the API server only through its `Ctx` (watch on its own
//! pods, status writes, events, its Node and Lease) and to containers only through the CRI
//! traits of its host.

#![deny(missing_docs)]

pub mod admission;
pub mod container_config;
pub mod dns;
pub mod env;
pub mod eviction;
pub mod expansion;
pub mod kubelet;
pub mod logs;
pub mod network;
pub mod node_status;
pub mod pleg;
pub mod pod_worker;
pub mod prober;
pub mod status;
pub mod status_manager;
pub mod sync;
pub mod volume_manager;
pub mod volumes;

pub use admission::pod_request_milli;
pub use kubelet::{Kubelet, NodeSetup};
