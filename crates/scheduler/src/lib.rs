//! The kube-scheduler model.
//!
//! Start here:
//! - [`Scheduler`]: the component (watches pods, nodes and the objects plugins consult; one
//!   scheduling cycle per timer tick; binds through the API).
//! - [`framework`]: statuses, cycle state, the [`framework::Plugin`] trait and profiles.
//! - [`plugins`]: the default plugins; their math is in pure functions the unit tests drive
//!   with upstream's test vectors.
//! - [`cache`] and [`queue`]: the scheduler cache (per-node aggregates, assumed pods) and the
//!   scheduling queue (activeQ, backoffQ, unschedulablePods).
//! - [`config`]: KubeSchedulerConfiguration parsing. [`explain`]: attempt history and
//!   annotations. [`preemption`]: DefaultPreemption.
//!
//! Virtual time: see [`latency`].

#![deny(missing_docs)]

pub mod bench;
pub mod cache;
pub mod config;
pub mod explain;
pub mod harness;
pub mod framework;
pub mod plugins;
pub mod preemption;
pub mod queue;
pub mod resources;
pub mod scheduler;

pub use explain::{Attempt, Outcome};
pub use scheduler::{Options, Scheduler, Stats};

/// Modelled latencies of the scheduler (virtual milliseconds), in one place.
pub mod latency {
    use kubesim_api::Millis;
    /// One scheduling cycle (pop → decision → binding call): the next pod is considered this
    /// long after the previous decision, and a newly arrived pod is decided this long after
    /// the scheduler wakes. Upstream's scheduler_perf sees ~1–3 ms per pod at 5,000 nodes.
    pub const SCHEDULING_CYCLE_MS: Millis = 2;
}
