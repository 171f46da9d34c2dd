//! The kube-scheduler model (behaviour target: Kubernetes v1.34).
//!
//! Start here:
//! - [`Scheduler`]: the component. It watches pods, nodes, namespaces, Services, ReplicaSets,
//!   StatefulSets, ReplicationControllers and PodDisruptionBudgets, keeps its own cache, and runs
//!   one scheduling cycle per timer tick ([`latency::SCHEDULING_CYCLE_MS`]), binding through
//!   `pods/binding`. Pods whose `spec.schedulerName` names no profile stay Pending.
//! - [`framework`]: statuses, cycle state, the [`framework::Plugin`] trait (one method per
//!   extension point: PreEnqueue, QueueSort, PreFilter (+AddPod/RemovePod), Filter, PostFilter,
//!   PreScore, Score, NormalizeScore, Reserve/Unreserve, Permit, PreBind, Bind, PostBind) and
//!   [`framework::Profile`].
//! - [`plugins`]: the 18 default plugins in upstream order and weights; their math is in pure
//!   functions that `tests/vectors.rs` drives with upstream's unit-test vectors.
//! - [`cache`]: per-node aggregates (requested, non-zero requested, ports, images, affinity
//!   counts) updated incrementally from watch events and assumed pods. [`queue`]: activeQ
//!   (priority, timestamp), backoffQ (1 s doubling to 10 s), unschedulablePods (moved by the
//!   cluster events the rejecting plugins registered, or after 5 minutes), gated pods.
//! - [`config`]: KubeSchedulerConfiguration (`kubescheduler.config.k8s.io/v1`) parsing:
//!   [`Scheduler::from_config`].
//! - [`explain`]: the per-attempt history ([`Scheduler::attempts`], [`Scheduler::last_attempt`]),
//!   kept in the component (it survives clones of the world) and read by the UI's explanation.
//! - [`preemption`]: DefaultPreemption. [`mod@bench`]: scheduler_perf-shaped benchmarks.
//!   [`harness`]: a minimal driver for tests and benchmarks.
//!
//! Determinism: maps that are iterated are BTreeMaps or ordered Vecs (the few hash maps use a
//! fixed-key hasher and are only looked up or folded order-independently); randomness (selectHost ties,
//! the preemption candidate offset) comes only from `ctx.rng`; the wall clock is read only to
//! fill [`Attempt::wall_ns`] and the benchmark figures, never on wasm, and never feeds decisions.
//!
//! # Deviations from upstream kube-scheduler v1.34
//! - One cycle at a time, no goroutines: filtering and scoring are sequential (upstream runs 16
//!   in parallel; results are identical because filtering stops at the same count and scoring is
//!   per node). Binding is synchronous at the end of the cycle (upstream binds asynchronously);
//!   the cycle's modelled duration is [`latency::SCHEDULING_CYCLE_MS`].
//! - Node order is creation order (upstream interleaves zones in its node tree); the
//!   round-robin start index and `percentageOfNodesToScore` follow upstream exactly.
//! - Ties in selectHost use reservoir sampling over the feasible order with `ctx.rng` (upstream
//!   samples in heap order with math/rand): same distribution, different draws.
//! - Preemption runs synchronously (upstream v1.34 may run the API calls asynchronously): the
//!   victims get the DisruptionTarget condition and a graceful delete in the same cycle. The
//!   dry run checks candidates sequentially from a random offset. Extenders are not modelled.
//! - With a PreFilter node restriction (NodeAffinity `matchFields` on `metadata.name`, as
//!   DaemonSet pods use), the named nodes are evaluated in snapshot order and the round-robin
//!   start index is left unchanged.
//! - QueueingHints are approximated by plugin-level cluster-event registration
//!   ([`framework::Plugin::events`]); a pod moves when any plugin that rejected it registered the
//!   event, with upstream's hints for an assigned pod's arrival applied to PodTopologySpread (the
//!   new pod must match the rejected pod's own spread selector) and InterPodAffinity (it must
//!   match a required affinity term). SchedulerPopFromBackoffQ is on (pods in backoffQ are
//!   popped when activeQ is empty).
//! - VolumeBinding is modelled (PreFilter with GetEligibleNodes, Filter = FindPodVolumes,
//!   Reserve, a PreBind that writes the claim/volume updates and then parks the binding cycle,
//!   polled every second for up to 600 s, as the binding goroutine blocks upstream) without an
//!   assume cache, CSIStorageCapacity or CSI migration, and without Score. VolumeRestrictions
//!   is modelled (in-tree disk conflicts, ReadWriteOncePod with preemption's AddPod/RemovePod).
//!   NodeVolumeLimits and VolumeZone keep their places and skip at PreFilter for pods without
//!   their volumes, but otherwise pass (no attach limits or zonal in-tree volumes).
//!   DynamicResources is not in the profile.
//! - Pods in phase Succeeded/Failed release their resources in the cache (upstream keeps them
//!   until deletion only when the kubelet has not yet reported them terminal).
//! - The FitError PostFilter part is appended as `" <message>"` with a final "." only if missing,
//!   which gives upstream's observed text ("... 3 Insufficient cpu. preemption: 0/3 nodes are
//!   available: 3 No preemption victims found for incoming pod.").
//! - PodTopologySpread and InterPodAffinity memoize per-node match counts keyed by the cache's
//!   node generation ([`plugins::helper::CountCache`]) and per-node topology domains keyed by
//!   the node's label generation ([`plugins::helper::DomainCache`]), and PodTopologySpread
//!   refills its memo from the cache's label index ([`cache::Cache::selector_counts`]) when
//!   that visits fewer pods than recounting the changed nodes; this is exact (tests compare against fresh
//!   computations) and only changes cost. A pod status update that changes
//!   nothing the cache aggregates does not change the node's generation.
//! - Explanations stay in the scheduler: like upstream, it writes to pods only the binding, the
//!   PodScheduled condition, `nominatedNodeName` and the preemption victims' DisruptionTarget
//!   condition (no result annotations, unlike kube-scheduler-simulator). The history costs
//!   memory proportional to the nodes evaluated per attempt; turn it off for very large runs
//!   ([`Scheduler::with_history`]). It keeps at most [`Options::max_history_pods`] pods and
//!   forgets deleted ones, and above [`Options::detail_max_nodes`] nodes an attempt keeps scores
//!   only for the top 3 nodes and the selected one (upstream's
//!   `numberOfHighestScoredNodesToReport`), with filter verdicts summarized by the FitError.
//! - The events plugins register for requeueing, and the modelled cycle time, are
//!   approximations; Permit never waits (no default plugin does).

#![deny(missing_docs)]

pub mod bench;
pub mod cache;
pub mod config;
pub mod explain;
pub mod framework;
pub mod harness;
pub mod plugins;
pub mod preemption;
pub mod queue;
pub use kubesim_api::resources;
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
