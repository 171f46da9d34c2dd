//! The one component runtime every part of kubesim runs on. Start here:
//! - [`component`]: the [`Component`] trait every controller, the scheduler and every node
//!   agent implement, the [`Ctx`] through which they act (API writes under their actor name,
//!   timers, the RNG, their host, notes), [`Interest`]s (watches) and [`HostEvent`]s.
//! - [`runtime`]: the [`Runtime`] — one event queue on virtual time, watch delivery with the
//!   API server's filtered-watch semantics, hosts with power and connectivity, the recorded
//!   history (trace, notes, deliveries) and the invariant [`Checker`] hook.
//! - [`fabric`]: the network between the control plane, hosts and pods (addresses, routes,
//!   partitions, the modelled Service load).
//! - [`net`]: packets between hosts — the one routing function for containers' calls.
//! - [`ingress`]: ingress-nginx's data plane (servers, locations, the proxy hop).
//! - [`metrics`]: the resource metrics API the metrics-server serves and the HPA reads.
//! - [`timers`]: named timers (a value per timer instead of bit-packed tokens).
//!
//! Layering: `api` ← `store` ← `apiserver` ← `host` ← **`runtime`** ← {`scheduler`,
//! `controllers`, `kubelet`} ← `sim`. The simulation's `World`, the controller tests and the
//! scheduler harness are all a `Runtime` plus wiring, so components are tested on the
//! delivery model production uses.
//!
//! Invariant: nothing here reads a wall clock or iterates a hash map; everything is `Clone`
//! with a bit-identical future.

#![deny(missing_docs)]

pub mod apiserver_endpoint;
pub mod component;
pub mod fabric;
pub mod history;
pub mod ingress;
pub mod internet;
pub mod metrics;
pub mod net;
pub mod runtime;
pub mod timers;

pub use component::{unreachable_error, AsAny, Component, ComponentClone, Ctx, HostEvent, Interest, NodeFsOp, Note, TimerRequest, WatchEvent, WatchFilter};
pub use fabric::{Endpoint, Fabric, Route, Unreachable};
pub use kubesim_apiserver::SimRng;
pub use kubesim_host::Host;
pub use metrics::{PodUsage, ResourceMetrics};
pub use runtime::{is_housekeeping, Checker, Placement, Runtime, RuntimeConfig, Stepped, TraceRecord, Violation, WatchDelivery};
pub use timers::Timers;
