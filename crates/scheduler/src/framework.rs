//! The scheduling framework: statuses, cycle state, the [`Plugin`] trait with one method per
//! extension point, and [`Profile`] (an ordered set of enabled plugins per extension point with
//! score weights), after upstream `pkg/scheduler/framework`.

use crate::cache::{Cache, NodeInfo, PodInfo};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use kubesim_api::selector::Selector;
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Highest score a Score plugin may give (after normalization).
pub const MAX_NODE_SCORE: i64 = 100;
/// Lowest score.
pub const MIN_NODE_SCORE: i64 = 0;

/// A status code (upstream `framework.Code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Code {
    /// Passed.
    Success,
    /// An internal error.
    Error,
    /// Cannot be scheduled now; preemption may help.
    Unschedulable,
    /// Cannot be scheduled and preemption cannot help.
    UnschedulableAndUnresolvable,
    /// Permit: wait.
    Wait,
    /// PreFilter/PreScore: the plugin has nothing to do for this pod.
    Skip,
    /// PreEnqueue: the pod is gated.
    Pending,
}

/// A plugin's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The code.
    pub code: Code,
    /// Reasons (filter failure messages).
    pub reasons: Vec<String>,
    /// The plugin that produced it.
    pub plugin: &'static str,
}

impl Status {
    /// Success.
    pub fn success() -> Status {
        Status { code: Code::Success, reasons: Vec::new(), plugin: "" }
    }
    /// Skip.
    pub fn skip() -> Status {
        Status { code: Code::Skip, reasons: Vec::new(), plugin: "" }
    }
    /// A status with one reason.
    pub fn new(code: Code, reason: impl Into<String>) -> Status {
        Status { code, reasons: vec![reason.into()], plugin: "" }
    }
    /// Unschedulable with one reason.
    pub fn unschedulable(reason: impl Into<String>) -> Status {
        Status::new(Code::Unschedulable, reason)
    }
    /// UnschedulableAndUnresolvable with one reason.
    pub fn unresolvable(reason: impl Into<String>) -> Status {
        Status::new(Code::UnschedulableAndUnresolvable, reason)
    }
    /// Whether it is a success.
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }
    /// Whether it is a skip.
    pub fn is_skip(&self) -> bool {
        self.code == Code::Skip
    }
    /// Whether it is a rejection (Unschedulable or UnschedulableAndUnresolvable).
    pub fn is_rejected(&self) -> bool {
        matches!(self.code, Code::Unschedulable | Code::UnschedulableAndUnresolvable)
    }
    /// The reasons joined with ", " (upstream `Status.Message`).
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
    /// Sets the plugin name.
    pub fn with_plugin(mut self, plugin: &'static str) -> Status {
        self.plugin = plugin;
        self
    }
}

/// Data a plugin keeps in the cycle state (cloneable, so preemption and nominated-pod checks
/// can work on copies as upstream's `CycleState.Clone` does).
pub trait StateData: Any {
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn StateData>;
    /// As `Any`.
    fn as_any(&self) -> &dyn Any;
    /// As mutable `Any`.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any + Clone> StateData for T {
    fn clone_box(&self) -> Box<dyn StateData> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Per-cycle plugin data (upstream `framework.CycleState`), keyed by plugin name.
#[derive(Default)]
pub struct CycleState {
    data: BTreeMap<&'static str, Box<dyn StateData>>,
    /// Plugins whose PreFilter returned Skip (their Filter is not run).
    pub skip_filter: BTreeSet<&'static str>,
    /// Plugins whose PreScore returned Skip (their Score is not run).
    pub skip_score: BTreeSet<&'static str>,
}

impl std::fmt::Debug for CycleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleState").field("keys", &self.data.keys().collect::<Vec<_>>()).finish()
    }
}

impl Clone for CycleState {
    fn clone(&self) -> Self {
        CycleState {
            data: self.data.iter().map(|(k, v)| (*k, (**v).clone_box())).collect(),
            skip_filter: self.skip_filter.clone(),
            skip_score: self.skip_score.clone(),
        }
    }
}

impl CycleState {
    /// Stores a plugin's data.
    pub fn write<T: Any + Clone>(&mut self, key: &'static str, value: T) {
        self.data.insert(key, Box::new(value));
    }
    /// Reads a plugin's data.
    pub fn read<T: Any>(&self, key: &'static str) -> Option<&T> {
        self.data.get(key).and_then(|b| b.as_ref().as_any().downcast_ref())
    }
    /// Reads a plugin's data mutably.
    pub fn read_mut<T: Any>(&mut self, key: &'static str) -> Option<&mut T> {
        self.data.get_mut(key).and_then(|b| b.as_mut().as_any_mut().downcast_mut())
    }
}

/// Cluster objects plugins consult besides nodes and pods (upstream listers).
#[derive(Clone, Debug, Default)]
pub struct Listers {
    /// Namespace labels by name.
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// Selectors of the workloads that may select pods (Services, ReplicationControllers,
    /// ReplicaSets, StatefulSets) by (namespace, kind/name) — used for PodTopologySpread's system
    /// default constraints.
    pub workload_selectors: BTreeMap<(String, String), Selector>,
    /// PodDisruptionBudgets by (namespace, name): selector and status.disruptionsAllowed.
    pub pdbs: BTreeMap<(String, String), (Selector, i64)>,
    /// PersistentVolumeClaims by (namespace, name) (VolumeBinding).
    pub pvcs: BTreeMap<(String, String), Arc<PersistentVolumeClaim>>,
    /// PersistentVolumes by name (VolumeBinding).
    pub pvs: BTreeMap<String, Arc<PersistentVolume>>,
    /// StorageClasses by name (VolumeBinding).
    pub storage_classes: BTreeMap<String, Arc<StorageClass>>,
}

/// What plugins see of the cluster during a cycle.
#[derive(Clone, Copy, Debug)]
pub struct ClusterView<'a> {
    /// The cache (nodes, pods, image counts).
    pub cache: &'a Cache,
    /// Other listers.
    pub listers: &'a Listers,
}

impl<'a> ClusterView<'a> {
    /// All nodes, in snapshot order.
    pub fn nodes(&self) -> &'a [NodeInfo] {
        self.cache.nodes()
    }
}

/// An extension point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Point {
    /// PreEnqueue.
    PreEnqueue,
    /// QueueSort.
    QueueSort,
    /// PreFilter.
    PreFilter,
    /// Filter.
    Filter,
    /// PostFilter.
    PostFilter,
    /// PreScore.
    PreScore,
    /// Score (with NormalizeScore).
    Score,
    /// Reserve / Unreserve.
    Reserve,
    /// Permit.
    Permit,
    /// PreBind.
    PreBind,
    /// Bind.
    Bind,
    /// PostBind.
    PostBind,
}

impl Point {
    /// Every point, in pipeline order.
    pub const ALL: [Point; 12] = [
        Point::PreEnqueue,
        Point::QueueSort,
        Point::PreFilter,
        Point::Filter,
        Point::PostFilter,
        Point::PreScore,
        Point::Score,
        Point::Reserve,
        Point::Permit,
        Point::PreBind,
        Point::Bind,
        Point::PostBind,
    ];
    /// The config field name (`preFilter`, ...).
    pub fn config_name(self) -> &'static str {
        match self {
            Point::PreEnqueue => "preEnqueue",
            Point::QueueSort => "queueSort",
            Point::PreFilter => "preFilter",
            Point::Filter => "filter",
            Point::PostFilter => "postFilter",
            Point::PreScore => "preScore",
            Point::Score => "score",
            Point::Reserve => "reserve",
            Point::Permit => "permit",
            Point::PreBind => "preBind",
            Point::Bind => "bind",
            Point::PostBind => "postBind",
        }
    }
}

/// A cluster event kind that can make a rejected pod schedulable (upstream `ClusterEvent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClusterEvent {
    /// A node was added.
    NodeAdd,
    /// A node's allocatable changed.
    NodeAllocatable,
    /// A node's labels changed.
    NodeLabel,
    /// A node's taints changed.
    NodeTaint,
    /// A node's spec.unschedulable changed.
    NodeSchedulable,
    /// A node's images changed (or anything else about it).
    NodeOther,
    /// An assigned pod was added.
    AssignedPodAdd,
    /// An assigned pod's labels changed.
    AssignedPodUpdate,
    /// An assigned pod was deleted.
    AssignedPodDelete,
    /// An unscheduled pod itself changed.
    UnscheduledPodUpdate,
    /// A PersistentVolumeClaim was added or updated.
    PvcChange,
    /// A PersistentVolume was added or updated.
    PvChange,
    /// A StorageClass was added or updated.
    StorageClassChange,
}

/// Cloning a boxed plugin (a cloned scheduler gets its own plugins, memo caches included).
/// Implemented for every `Plugin + Clone`: derive `Clone` on the plugin.
pub trait PluginClone {
    /// An independent copy.
    fn clone_box(&self) -> Box<dyn Plugin>;
}

impl<T: Plugin + Clone + 'static> PluginClone for T {
    fn clone_box(&self) -> Box<dyn Plugin> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Plugin> {
    fn clone(&self) -> Box<dyn Plugin> {
        self.as_ref().clone_box()
    }
}

/// A scheduler plugin. Every method has a neutral default; [`Plugin::points`] lists the
/// extension points the plugin implements (used to expand `multiPoint`).
pub trait Plugin: std::fmt::Debug + PluginClone {
    /// The plugin name (`NodeResourcesFit`).
    fn name(&self) -> &'static str;
    /// The extension points it implements.
    fn points(&self) -> &'static [Point];
    /// Downcasting to the concrete plugin (to read its args).
    fn as_any(&self) -> Option<&dyn Any> {
        None
    }
    /// Cluster events that may make a pod this plugin rejected schedulable.
    fn events(&self) -> &'static [ClusterEvent] {
        &[]
    }
    /// The plugin's QueueingHint for one of its [`Plugin::events`]: whether `event` (involving
    /// `involved`, the pod it concerns, if any) may make `rejected`, which this plugin
    /// rejected, schedulable. The default is upstream's: Queue.
    fn queueing_hint(&self, rejected: &PodInfo, event: ClusterEvent, involved: Option<&PodInfo>) -> bool {
        let _ = (rejected, event, involved);
        true
    }
    /// PreEnqueue: Success lets the pod into activeQ; Pending keeps it out.
    fn pre_enqueue(&self, _pod: &PodInfo) -> Status {
        Status::success()
    }
    /// PreFilter: precompute into `state`; may restrict the candidate nodes; Skip disables Filter.
    fn pre_filter(&self, _state: &mut CycleState, _pod: &PodInfo, _view: &ClusterView) -> (Status, Option<BTreeSet<String>>) {
        (Status::success(), None)
    }
    /// PreFilterExtensions.AddPod: `added` is (hypothetically) placed on `node`.
    fn pre_filter_add_pod(&self, _state: &mut CycleState, _pod: &PodInfo, _added: &PodInfo, _node: &NodeInfo) {}
    /// PreFilterExtensions.RemovePod: `removed` is (hypothetically) removed from `node`.
    fn pre_filter_remove_pod(&self, _state: &mut CycleState, _pod: &PodInfo, _removed: &PodInfo, _node: &NodeInfo) {}
    /// Filter.
    fn filter(&self, _state: &CycleState, _pod: &PodInfo, _node: &NodeInfo) -> Status {
        Status::success()
    }
    /// PreScore over the feasible nodes; Skip disables Score for this pod.
    fn pre_score(&self, _state: &mut CycleState, _pod: &PodInfo, _feasible: &[&NodeInfo], _view: &ClusterView) -> Status {
        Status::success()
    }
    /// Score one node (raw).
    fn score(&self, _state: &CycleState, _pod: &PodInfo, _node: &NodeInfo, _view: &ClusterView) -> i64 {
        0
    }
    /// NormalizeScore over the feasible nodes' raw scores (in feasible order).
    fn normalize(&self, _state: &CycleState, _pod: &PodInfo, _scores: &mut [i64]) {}
    /// Reserve.
    fn reserve(&self, _state: &mut CycleState, _pod: &PodInfo, _node: &str, _view: &ClusterView) -> Status {
        Status::success()
    }
    /// Unreserve.
    fn unreserve(&self, _state: &mut CycleState, _pod: &PodInfo, _node: &str) {}
    /// Permit.
    fn permit(&self, _state: &mut CycleState, _pod: &PodInfo, _node: &str) -> Status {
        Status::success()
    }
    /// PreBind: may write through the API (VolumeBinding's claim and volume updates). `Wait`
    /// parks the binding cycle: the scheduler calls PreBind again on its poll until it
    /// succeeds or fails, binding the pod only then (upstream's binding goroutine blocks there).
    fn pre_bind(&self, _state: &mut CycleState, _pod: &PodInfo, _node: &str, _view: &ClusterView, _ctx: &mut kubesim_runtime::Ctx) -> Status {
        Status::success()
    }
    /// PostBind.
    fn post_bind(&self, _state: &mut CycleState, _pod: &PodInfo, _node: &str) {}
}

/// One enabled score plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScorePlugin {
    /// Index into [`Profile::plugins`].
    pub index: usize,
    /// Weight.
    pub weight: i64,
}

/// A scheduling profile: plugins enabled per extension point, in order.
#[derive(Clone, Debug)]
pub struct Profile {
    /// `schedulerName` pods select this profile with.
    pub scheduler_name: String,
    /// Instantiated plugins (each once).
    pub plugins: Vec<Box<dyn Plugin>>,
    /// Enabled plugins (indices) per point, in order. Score is in [`Profile::score`].
    pub points: BTreeMap<Point, Vec<usize>>,
    /// Enabled score plugins with weights.
    pub score: Vec<ScorePlugin>,
    /// percentageOfNodesToScore (None: the global setting).
    pub percentage_of_nodes_to_score: Option<i32>,
}

impl Profile {
    /// The plugin indices enabled at a point.
    pub fn at(&self, point: Point) -> &[usize] {
        self.points.get(&point).map(|v| v.as_slice()).unwrap_or(&[])
    }
    /// Whether a plugin is enabled at a point.
    pub fn enabled(&self, point: Point, name: &str) -> bool {
        self.at(point).iter().any(|i| self.plugins[*i].name() == name)
    }
    /// The plugin at an index.
    pub fn plugin(&self, index: usize) -> &dyn Plugin {
        self.plugins[index].as_ref()
    }
}

/// Runs one score plugin alone over every node of the view (PreScore, Score, NormalizeScore),
/// as upstream's plugin unit tests do. None if PreScore returned Skip. The scores are the
/// normalized ones (before weighting).
pub fn score_all_nodes(plugin: &dyn Plugin, pod: &PodInfo, view: &ClusterView) -> Option<Vec<i64>> {
    let mut state = CycleState::default();
    let nodes: Vec<&NodeInfo> = view.nodes().iter().collect();
    if plugin.pre_score(&mut state, pod, &nodes, view).is_skip() {
        return None;
    }
    let mut scores: Vec<i64> = nodes.iter().map(|n| plugin.score(&state, pod, n, view)).collect();
    plugin.normalize(&state, pod, &mut scores);
    Some(scores)
}

/// Runs one filter plugin alone (PreFilter then Filter) on every node of the view.
pub fn filter_all_nodes(plugin: &dyn Plugin, pod: &PodInfo, view: &ClusterView) -> Vec<Status> {
    let mut state = CycleState::default();
    let (pre, _) = plugin.pre_filter(&mut state, pod, view);
    view.nodes()
        .iter()
        .map(|n| {
            if pre.is_skip() {
                Status::success()
            } else if !pre.is_success() {
                pre.clone()
            } else {
                plugin.filter(&state, pod, n)
            }
        })
        .collect()
}
