//! The one narrow interface the UI consumes: plain-data snapshots of the world, computed on
//! demand. The UI never touches the store, components or k8s-openapi types directly.

use crate::world::World;
use kubesim_api::k8s_openapi::api::core::v1::{Node, Pod, PodSpec, PodStatus};
use kubesim_api::object::Object;
use kubesim_api::quantity::parse_milli;
use kubesim_api::time::millis_of;
use kubesim_api::Millis;

mod storage;
pub use storage::*;

/// Where a pod is in its life, as the lifecycle graph draws it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lifecycle {
    /// Waiting for the scheduler (or no feasible node yet).
    Pending,
    /// Scheduling gates present.
    SchedulingGated,
    /// The scheduler found no node (PodScheduled=False, Unschedulable).
    Unschedulable,
    /// Bound to a node, kubelet not yet reporting.
    Scheduled,
    /// Sandbox, image pulls, containers being created.
    ContainerCreating,
    /// Init containers running.
    Initializing,
    /// An image cannot be pulled.
    ImagePullBackOff,
    /// Running but not Ready.
    Running,
    /// Running and Ready.
    Ready,
    /// Restarting with backoff.
    CrashLoopBackOff,
    /// Being deleted.
    Terminating,
    /// Completed successfully.
    Succeeded,
    /// Failed.
    Failed,
    /// Evicted by the kubelet.
    Evicted,
    /// A container was OOM-killed.
    OOMKilled,
}

impl Lifecycle {
    /// Every state, in graph order.
    pub const ALL: [Lifecycle; 15] = [
        Lifecycle::Pending,
        Lifecycle::SchedulingGated,
        Lifecycle::Unschedulable,
        Lifecycle::Scheduled,
        Lifecycle::ContainerCreating,
        Lifecycle::Initializing,
        Lifecycle::ImagePullBackOff,
        Lifecycle::Running,
        Lifecycle::Ready,
        Lifecycle::CrashLoopBackOff,
        Lifecycle::Terminating,
        Lifecycle::Succeeded,
        Lifecycle::Failed,
        Lifecycle::Evicted,
        Lifecycle::OOMKilled,
    ];

    /// Display label.
    pub fn label(self) -> &'static str {
        match self {
            Lifecycle::Pending => "Pending",
            Lifecycle::SchedulingGated => "SchedulingGated",
            Lifecycle::Unschedulable => "Unschedulable",
            Lifecycle::Scheduled => "Scheduled",
            Lifecycle::ContainerCreating => "ContainerCreating",
            Lifecycle::Initializing => "Init",
            Lifecycle::ImagePullBackOff => "ImagePullBackOff",
            Lifecycle::Running => "Running (not Ready)",
            Lifecycle::Ready => "Ready",
            Lifecycle::CrashLoopBackOff => "CrashLoopBackOff",
            Lifecycle::Terminating => "Terminating",
            Lifecycle::Succeeded => "Succeeded",
            Lifecycle::Failed => "Failed",
            Lifecycle::Evicted => "Evicted",
            Lifecycle::OOMKilled => "OOMKilled",
        }
    }
}

/// A node as the cluster view draws it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct NodeView {
    /// Name.
    pub name: String,
    /// topology.kubernetes.io/zone.
    pub zone: String,
    /// Ready condition is True.
    pub ready: bool,
    /// spec.unschedulable.
    pub unschedulable: bool,
    /// Taints as `key=value:Effect`.
    pub taints: Vec<String>,
    /// Allocatable cpu (millicores).
    pub cpu_allocatable_milli: i64,
    /// Allocatable memory (bytes).
    pub memory_allocatable: i64,
    /// Allocatable pods.
    pub pods_allocatable: i64,
    /// Sum of requests of non-terminal pods bound here (millicores).
    pub cpu_requested_milli: i64,
    /// Sum of memory requests (bytes).
    pub memory_requested: i64,
    /// Non-terminal pods bound here.
    pub pod_count: i64,
}

/// A pod as the views draw it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PodView {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID.
    pub uid: String,
    /// Bound node.
    pub node: Option<String>,
    /// status.phase.
    pub phase: String,
    /// kubectl's STATUS column.
    pub status: String,
    /// READY column (`1/1`).
    pub ready: String,
    /// RESTARTS column.
    pub restarts: i32,
    /// Controlling owner as `Kind/name`.
    pub owner: Option<String>,
    /// Pod IP.
    pub ip: Option<String>,
    /// Lifecycle state.
    pub lifecycle: Lifecycle,
    /// creationTimestamp (virtual ms).
    pub created_ms: Millis,
    /// Labels as `k=v`.
    pub labels: Vec<String>,
}

/// A snapshot of the cluster at the world's current time.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ClusterSnapshot {
    /// Virtual time.
    pub t_ms: Millis,
    /// The store's revision.
    pub revision: u64,
    /// Nodes by name.
    pub nodes: Vec<NodeView>,
    /// Pods by namespace and name.
    pub pods: Vec<PodView>,
}

/// Builds the snapshot.
pub fn snapshot(world: &World) -> ClusterSnapshot {
    snapshot_cached(world, &mut SnapshotCache::default())
}

/// What [`snapshot_cached`] remembers of each pod version it described: the view and what the
/// pod adds to its node's sums. Keyed by the address of the stored version (`Arc<Object>`),
/// which the cache holds, so an address is never reused while it is remembered; a pod the
/// store replaced (a new version) or removed is described anew.
#[derive(Default)]
pub struct SnapshotCache {
    pods: std::collections::BTreeMap<usize, CachedPod>,
}

struct CachedPod {
    /// Keeps the address unique while cached.
    _version: std::sync::Arc<Object>,
    view: PodView,
    /// Millicores and bytes requested; `None` for a terminal pod (it counts towards no node).
    load: Option<(i64, i64)>,
}

impl CachedPod {
    fn of(object: &std::sync::Arc<Object>, pod: &Pod) -> CachedPod {
        CachedPod { _version: object.clone(), view: pod_view(pod), load: node_load(pod) }
    }
}

/// What a pod adds to its node's sums: millicores and bytes requested; `None` for a terminal
/// pod.
fn node_load(pod: &Pod) -> Option<(i64, i64)> {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
    (phase != "Succeeded" && phase != "Failed").then(|| {
        let requests = kubesim_api::resources::pod_requests(pod).requests;
        (requests.milli_cpu, requests.memory)
    })
}

/// [`snapshot`], describing again only the pods that changed since the last call with the same
/// `cache` (a refresh of a 10,000-pod world while a few hundred pods change).
pub fn snapshot_cached(world: &World, cache: &mut SnapshotCache) -> ClusterSnapshot {
    let store = world.api().store();
    let mut fresh = std::collections::BTreeMap::new();
    let mut pods = Vec::new();
    for object in store.list(("", "pods"), None) {
        let Some(pod) = object.as_pod() else { continue };
        let address = std::sync::Arc::as_ptr(object) as usize;
        let cached = cache.pods.remove(&address).unwrap_or_else(|| CachedPod::of(object, pod));
        pods.push(cached.view.clone());
        fresh.insert(address, cached);
    }
    cache.pods = fresh;
    let nodes = store
        .list(("", "nodes"), None)
        .filter_map(|o| match o.as_ref() {
            Object::Node(n) => Some(n),
            _ => None,
        })
        .map(|node| node_view(node, world, &cache.pods))
        .collect();
    ClusterSnapshot { t_ms: world.now(), revision: store.revision(), nodes, pods }
}

fn quantity(map: Option<&std::collections::BTreeMap<String, kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity>>, key: &str) -> i128 {
    map.and_then(|m| m.get(key)).and_then(|q| parse_milli(&q.0).ok()).unwrap_or(0)
}

fn node_view(node: &Node, world: &World, described: &std::collections::BTreeMap<usize, CachedPod>) -> NodeView {
    let name = node.metadata.name.clone().unwrap_or_default();
    let status = node.status.as_ref();
    let allocatable = status.and_then(|s| s.allocatable.as_ref());
    let mut cpu = 0i128;
    let mut memory = 0i128;
    let mut count = 0;
    for object in world.api().store().pods_on_node(&name) {
        let Some(pod) = object.as_pod() else { continue };
        // Every stored pod was just described; the fallback only keeps this total right.
        let load = match described.get(&(std::sync::Arc::as_ptr(object) as usize)) {
            Some(cached) => cached.load,
            None => node_load(pod),
        };
        let Some((milli_cpu, bytes)) = load else { continue };
        count += 1;
        cpu += milli_cpu as i128;
        memory += bytes as i128 * 1000;
    }
    NodeView {
        zone: node.metadata.labels.as_ref().and_then(|l| l.get("topology.kubernetes.io/zone").cloned()).unwrap_or_default(),
        ready: status.and_then(|s| s.conditions.as_ref()).is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True")),
        unschedulable: node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false),
        taints: node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .map(|t| t.iter().map(|t| format!("{}{}:{}", t.key, t.value.as_ref().map(|v| format!("={v}")).unwrap_or_default(), t.effect)).collect())
            .unwrap_or_default(),
        cpu_allocatable_milli: quantity(allocatable, "cpu") as i64,
        memory_allocatable: (quantity(allocatable, "memory") / 1000) as i64,
        pods_allocatable: (quantity(allocatable, "pods") / 1000) as i64,
        cpu_requested_milli: cpu as i64,
        memory_requested: (memory / 1000) as i64,
        pod_count: count,
        name,
    }
}

/// Derives the lifecycle state and kubectl's STATUS word for a pod.
pub fn pod_view(pod: &Pod) -> PodView {
    // Borrow, never clone, the spec and status: this runs for every pod on every refresh.
    let no_status = PodStatus::default();
    let no_spec = PodSpec::default();
    let status = pod.status.as_ref().unwrap_or(&no_status);
    let spec = pod.spec.as_ref().unwrap_or(&no_spec);
    let phase = status.phase.clone().unwrap_or_else(|| "Pending".into());
    let statuses: &[kubesim_api::k8s_openapi::api::core::v1::ContainerStatus] = status.container_statuses.as_deref().unwrap_or(&[]);
    let init_statuses: &[kubesim_api::k8s_openapi::api::core::v1::ContainerStatus] = status.init_container_statuses.as_deref().unwrap_or(&[]);
    let waiting_reason = |list: &[kubesim_api::k8s_openapi::api::core::v1::ContainerStatus]| {
        list.iter().find_map(|s| s.state.as_ref().and_then(|st| st.waiting.as_ref()).and_then(|w| w.reason.clone()))
    };
    let last_oom = statuses.iter().any(|s| {
        s.last_state.as_ref().and_then(|l| l.terminated.as_ref()).and_then(|t| t.reason.as_deref()) == Some("OOMKilled")
            || s.state.as_ref().and_then(|l| l.terminated.as_ref()).and_then(|t| t.reason.as_deref()) == Some("OOMKilled")
    });
    let conditions: &[kubesim_api::k8s_openapi::api::core::v1::PodCondition] = status.conditions.as_deref().unwrap_or(&[]);
    let condition = |t: &str| conditions.iter().find(|c| c.type_ == t);
    let scheduled = condition("PodScheduled");
    let bound = spec.node_name.as_deref().is_some_and(|n| !n.is_empty());
    // READY, STATUS and RESTARTS exactly as kubectl prints them (sidecars included); an init
    // container still to complete is kubectl's `Init:N/M` (or `Init:<reason>`).
    let print = kubesim_api::pod::print_pod(pod);
    let init_running = print.status.starts_with("Init:");
    let lifecycle = if pod.metadata.deletion_timestamp.is_some() && phase != "Succeeded" && phase != "Failed" {
        Lifecycle::Terminating
    } else if status.reason.as_deref() == Some("Evicted") {
        Lifecycle::Evicted
    } else if phase == "Succeeded" {
        Lifecycle::Succeeded
    } else if phase == "Failed" {
        if last_oom {
            Lifecycle::OOMKilled
        } else {
            Lifecycle::Failed
        }
    } else if !bound {
        match scheduled.and_then(|c| c.reason.as_deref()) {
            Some("SchedulingGated") => Lifecycle::SchedulingGated,
            Some("Unschedulable") => Lifecycle::Unschedulable,
            _ => Lifecycle::Pending,
        }
    } else {
        match waiting_reason(statuses).or_else(|| waiting_reason(init_statuses)).as_deref() {
            Some("CrashLoopBackOff") => {
                if last_oom {
                    Lifecycle::OOMKilled
                } else {
                    Lifecycle::CrashLoopBackOff
                }
            }
            Some("ImagePullBackOff") | Some("ErrImagePull") | Some("ErrImageNeverPull") | Some("InvalidImageName") => Lifecycle::ImagePullBackOff,
            _ if status.container_statuses.is_none() && status.host_ip.is_none() => Lifecycle::Scheduled,
            _ if init_running => Lifecycle::Initializing,
            _ if phase == "Running" && condition("Ready").is_some_and(|c| c.status == "True") => Lifecycle::Ready,
            _ if phase == "Running" => Lifecycle::Running,
            _ => Lifecycle::ContainerCreating,
        }
    };
    PodView {
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        node: spec.node_name.clone().filter(|n| !n.is_empty()),
        phase,
        status: print.status,
        ready: format!("{}/{}", print.ready, print.total),
        restarts: print.restarts as i32,
        owner: pod.metadata.owner_references.as_ref().and_then(|o| o.iter().find(|r| r.controller == Some(true))).map(|r| format!("{}/{}", r.kind, r.name)),
        ip: status.pod_ip.clone(),
        lifecycle,
        created_ms: pod.metadata.creation_timestamp.as_ref().map(millis_of).unwrap_or(0),
        labels: pod.metadata.labels.iter().flatten().map(|(k, v)| format!("{k}={v}")).collect(),
    }
}

/// Which object a trace record or an inspector concerns.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// API group ("" for core).
    pub group: String,
    /// Plural resource (`pods`).
    pub resource: String,
    /// Kind (`Pod`).
    pub kind: String,
    /// Namespace ("" for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectKey {
    /// The key of an object.
    pub fn of(object: &Object) -> ObjectKey {
        let info = object.info();
        ObjectKey {
            group: info.map(|i| i.group()).unwrap_or("").to_string(),
            resource: info.map(|i| i.plural).unwrap_or("objects").to_string(),
            kind: object.kind().to_string(),
            namespace: object.namespace().to_string(),
            name: object.name().to_string(),
        }
    }

    /// `Kind/name` or `Kind/namespace/name`... as people read it: `pod/default/nginx`.
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{}/{}", self.kind.to_ascii_lowercase(), self.name)
        } else {
            format!("{}/{}/{}", self.kind.to_ascii_lowercase(), self.namespace, self.name)
        }
    }
}

/// One committed write of the trace, without the object body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// Index in [`World::trace`].
    pub index: usize,
    /// Virtual time.
    pub t_ms: Millis,
    /// Revision of the commit.
    pub revision: u64,
    /// ADDED / MODIFIED / DELETED.
    pub event_type: &'static str,
    /// Who wrote it.
    pub actor: String,
    /// What was written.
    pub key: ObjectKey,
    /// For pods: the lifecycle state after the write.
    pub lifecycle: Option<Lifecycle>,
    /// For pods: kubectl's STATUS after the write.
    pub status: Option<String>,
    /// For pods: the UID.
    pub uid: Option<String>,
    /// For pods: the node it is bound to after the write.
    pub node: Option<String>,
}

/// The trace from write number `from_index` on (see [`World::trace_dropped`]; writes no
/// longer held are skipped), as plain entries (pods carry their lifecycle state).
pub fn trace_entries(world: &World, from_index: usize) -> Vec<TraceEntry> {
    let trace = world.trace_since(from_index);
    let from_index = world.trace_total() - trace.len();
    trace
        .iter()
        .enumerate()
        .map(|(offset, record)| {
            let pod = record.object.as_pod().map(pod_view);
            TraceEntry {
                index: from_index + offset,
                t_ms: record.t_ms,
                revision: record.revision,
                event_type: record.event_type.as_str(),
                actor: record.actor.to_string(),
                key: ObjectKey::of(&record.object),
                lifecycle: pod.as_ref().map(|p| p.lifecycle),
                status: pod.as_ref().map(|p| p.status.clone()),
                uid: pod.as_ref().map(|p| p.uid.clone()),
                node: pod.and_then(|p| p.node),
            }
        })
        .collect()
}

/// One watch notification, as the flow view animates it (API server → watcher).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryEntry {
    /// Virtual time of delivery.
    pub t_ms: Millis,
    /// Revision of the commit delivered.
    pub revision: u64,
    /// ADDED / MODIFIED / DELETED as the watcher saw it.
    pub event_type: &'static str,
    /// The watching component.
    pub component: String,
    /// The object the event is about.
    pub key: ObjectKey,
}

/// Watch deliveries from number `from` on (counting every delivery since the start; see
/// [`World::deliveries`]), with their objects looked up in the trace by revision. Returns them
/// and the number to continue from.
pub fn delivery_entries(world: &World, from: usize) -> (Vec<DeliveryEntry>, usize) {
    let trace = world.trace();
    let entries = world
        .deliveries_since(from)
        .iter()
        .filter_map(|d| {
            let at = trace.binary_search_by_key(&d.revision, |r| r.revision).ok()?;
            Some(DeliveryEntry {
                t_ms: d.t_ms,
                revision: d.revision,
                event_type: d.event_type.as_str(),
                component: d.component.to_string(),
                key: ObjectKey::of(&trace[at].object),
            })
        })
        .collect();
    (entries, world.deliveries_total())
}

/// The number of writes recorded since the start (cheap; lets the UI poll for new writes).
pub fn trace_len(world: &World) -> usize {
    world.trace_total()
}

/// One version of an object, as an inspector shows it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub struct ObjectVersion {
    /// Virtual time of the write.
    pub t_ms: Millis,
    /// Revision of the write.
    pub revision: u64,
    /// ADDED / MODIFIED / DELETED.
    #[serde(deserialize_with = "static_str::deserialize")]
    pub event_type: static_str::Name,
    /// Who wrote it.
    pub actor: String,
    /// The object after the write, as the API serves it.
    pub json: serde_json::Value,
}

/// Every recorded version of one object, oldest first.
pub fn object_versions(world: &World, key: &ObjectKey) -> Vec<ObjectVersion> {
    world
        .trace()
        .iter()
        .filter(|r| r.object.name() == key.name && r.object.namespace() == key.namespace && r.object.kind() == key.kind)
        .map(|r| ObjectVersion { t_ms: r.t_ms, revision: r.revision, event_type: r.event_type.as_str(), actor: r.actor.to_string(), json: r.object.to_json() })
        .collect()
}

/// Every object in the store now, by resource, namespace and name.
pub fn object_keys(world: &World) -> Vec<ObjectKey> {
    let store = world.api().store();
    let mut keys = Vec::new();
    for resource in store.resources() {
        for object in store.list(resource, None) {
            keys.push(ObjectKey::of(object));
        }
    }
    keys
}

/// An Event object as the event log shows it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct EventView {
    /// lastTimestamp (virtual ms).
    pub last_ms: Millis,
    /// firstTimestamp (virtual ms).
    pub first_ms: Millis,
    /// Normal / Warning.
    pub type_: String,
    /// Reason (`Scheduled`, `Pulled`, `BackOff`, ...).
    pub reason: String,
    /// The involved object as `kind/name`.
    pub object: String,
    /// Namespace of the involved object.
    pub namespace: String,
    /// The message.
    pub message: String,
    /// Reporting component (and host).
    pub source: String,
    /// How many times it happened.
    pub count: i32,
}

/// One Event object as the event log shows it.
pub fn event_view(e: &kubesim_api::k8s_openapi::api::core::v1::Event) -> EventView {
    let involved = &e.involved_object;
    let source = e.source.as_ref();
    EventView {
        last_ms: e.last_timestamp.as_ref().map(millis_of).unwrap_or(0),
        first_ms: e.first_timestamp.as_ref().map(millis_of).unwrap_or(0),
        type_: e.type_.clone().unwrap_or_default(),
        reason: e.reason.clone().unwrap_or_default(),
        object: format!("{}/{}", involved.kind.clone().unwrap_or_default().to_ascii_lowercase(), involved.name.clone().unwrap_or_default()),
        namespace: involved.namespace.clone().unwrap_or_default(),
        message: e.message.clone().unwrap_or_default(),
        source: match (source.and_then(|s| s.component.clone()), source.and_then(|s| s.host.clone())) {
            (Some(c), Some(h)) => format!("{c}, {h}"),
            (Some(c), None) => c,
            (None, Some(h)) => h,
            (None, None) => String::new(),
        },
        count: e.count.unwrap_or(1),
    }
}

/// Every Event in the store, oldest first (by last timestamp, then name).
pub fn events(world: &World) -> Vec<EventView> {
    let mut events: Vec<EventView> = world
        .api()
        .store()
        .list(("", "events"), None)
        .filter_map(|o| match o.as_ref() {
            Object::Event(e) => Some(event_view(e)),
            _ => None,
        })
        .collect();
    kubesim_api::sort::sort_by(&mut events, |a, b| (a.last_ms, &a.object, &a.reason).cmp(&(b.last_ms, &b.object, &b.reason)));
    events
}

/// The scheduler's explanation of its last decision for a pod (kube-scheduler-simulator's
/// filter/score/final-score tables), read from the scheduler component's attempt history: the
/// pod objects carry no explanation (kube-scheduler writes no annotations).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedulingExplanation {
    /// Node → [(filter plugin, "passed" or the reason)], nodes and plugins in name order.
    pub filter: Vec<(String, Vec<(String, String)>)>,
    /// Node → [(score plugin, raw score)].
    pub scores: Vec<(String, Vec<(String, i64)>)>,
    /// Node → [(score plugin, normalized × weight)].
    pub final_scores: Vec<(String, Vec<(String, i64)>)>,
    /// The selected node.
    pub selected: Option<String>,
}

impl SchedulingExplanation {
    /// Whether there is no explanation at all (not yet attempted, or the history is off).
    pub fn is_empty(&self) -> bool {
        self.filter.is_empty() && self.scores.is_empty() && self.final_scores.is_empty() && self.selected.is_none()
    }
}

/// A pod with everything its inspector needs.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PodDetail {
    /// The summary view.
    pub view: PodView,
    /// Annotations as (key, value).
    pub annotations: Vec<(String, String)>,
    /// The scheduler's explanation of its last attempt ([`scheduling_explanation`]).
    pub scheduling: SchedulingExplanation,
    /// Conditions as (type, status, reason).
    pub conditions: Vec<(String, String, String)>,
    /// Containers as (name, image, state word).
    pub containers: Vec<(String, String, String)>,
}

/// The scheduler's explanation of its last attempt to place the pod `namespace/name` as it
/// exists now (an attempt recorded for an earlier pod of the same name is not shown). Empty
/// when the pod does not exist, has not been attempted, or the scheduler history is off.
pub fn scheduling_explanation(world: &World, namespace: &str, name: &str) -> SchedulingExplanation {
    let Some(object) = world.api().store().get(("", "pods"), namespace, name) else { return SchedulingExplanation::default() };
    let uid = object.metadata().uid.as_deref().unwrap_or("");
    let Some(attempt) = world.scheduler().and_then(|s| s.last_attempt(namespace, name)).filter(|a| a.pod_uid == uid) else {
        return SchedulingExplanation::default();
    };
    let table = |map: std::collections::BTreeMap<String, std::collections::BTreeMap<String, i64>>| -> Vec<(String, Vec<(String, i64)>)> {
        map.into_iter().map(|(node, plugins)| (node, plugins.into_iter().collect())).collect()
    };
    SchedulingExplanation {
        filter: attempt.filter().into_iter().map(|(node, plugins)| (node, plugins.into_iter().collect())).collect(),
        scores: table(attempt.scores()),
        final_scores: table(attempt.final_scores()),
        selected: attempt.selected.clone(),
    }
}

/// The pod `namespace/name` now, with its details.
pub fn pod_detail(world: &World, namespace: &str, name: &str) -> Option<PodDetail> {
    let object = world.api().store().get(("", "pods"), namespace, name)?;
    let pod = object.as_pod()?;
    let annotations: Vec<(String, String)> = pod.metadata.annotations.iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
    let scheduling = scheduling_explanation(world, namespace, name);
    let status = pod.status.clone().unwrap_or_default();
    let conditions = status.conditions.iter().flatten().map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone().unwrap_or_default())).collect();
    let statuses = status.container_statuses.clone().unwrap_or_default();
    let containers = pod
        .spec
        .iter()
        .flat_map(|s| s.init_containers.iter().flatten().map(|c| (c, true)).chain(s.containers.iter().map(|c| (c, false))))
        .map(|(c, init)| {
            let list = if init { status.init_container_statuses.clone().unwrap_or_default() } else { statuses.clone() };
            let state = list.iter().find(|s| s.name == c.name).and_then(|s| s.state.clone());
            let word = match state {
                Some(st) if st.running.is_some() => "running".to_string(),
                Some(st) if st.terminated.is_some() => {
                    let t = st.terminated.unwrap_or_default();
                    format!("terminated: {} (exit {})", t.reason.unwrap_or_default(), t.exit_code)
                }
                Some(st) if st.waiting.is_some() => format!("waiting: {}", st.waiting.and_then(|w| w.reason).unwrap_or_default()),
                _ => "-".to_string(),
            };
            let name = if init { format!("{} (init)", c.name) } else { c.name.clone() };
            (name, c.image.clone().unwrap_or_default(), word)
        })
        .collect();
    Some(PodDetail { view: pod_view(pod), annotations, scheduling, conditions, containers })
}

/// The current object for a key, as the API serves it (None once deleted).
pub fn object_json(world: &World, key: &ObjectKey) -> Option<serde_json::Value> {
    let store = world.api().store();
    let resource = store.resources().find(|(g, r)| *g == key.group && *r == key.resource)?;
    store.get(resource, &key.namespace, &key.name).map(|o| o.to_json())
}

/// A workload controller (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job) as the cluster
/// view summarizes it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct WorkloadView {
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Desired pods (spec.replicas, Job completions, DaemonSet desiredNumberScheduled).
    pub desired: i64,
    /// Current pods (status.replicas / active / currentNumberScheduled).
    pub current: i64,
    /// Ready pods (status.readyReplicas / numberReady; Jobs: succeeded).
    pub ready: i64,
    /// Up to date (status.updatedReplicas), where the kind has it.
    pub updated: Option<i64>,
    /// Controlling owner as `Kind/name`.
    pub owner: Option<String>,
    /// Container images of the pod template.
    pub images: Vec<String>,
    /// `deployment.kubernetes.io/revision`, where present.
    pub revision: Option<String>,
}

/// Every workload in the store, by kind, namespace and name.
pub fn workloads(world: &World) -> Vec<WorkloadView> {
    let store = world.api().store();
    let mut out = Vec::new();
    for resource in [("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets"), ("apps", "daemonsets"), ("batch", "jobs")] {
        for object in store.list(resource, None) {
            let json = object.to_json();
            let int = |pointer: &str| json.pointer(pointer).and_then(|v| v.as_i64());
            let (desired, current, ready, updated) = match resource.1 {
                "daemonsets" => (
                    int("/status/desiredNumberScheduled").unwrap_or(0),
                    int("/status/currentNumberScheduled").unwrap_or(0),
                    int("/status/numberReady").unwrap_or(0),
                    int("/status/updatedNumberScheduled"),
                ),
                "jobs" => (int("/spec/completions").unwrap_or(1), int("/status/active").unwrap_or(0), int("/status/succeeded").unwrap_or(0), None),
                "replicasets" => (int("/spec/replicas").unwrap_or(1), int("/status/replicas").unwrap_or(0), int("/status/readyReplicas").unwrap_or(0), None),
                _ => (
                    int("/spec/replicas").unwrap_or(1),
                    int("/status/replicas").unwrap_or(0),
                    int("/status/readyReplicas").unwrap_or(0),
                    Some(int("/status/updatedReplicas").unwrap_or(0)),
                ),
            };
            let images = json
                .pointer("/spec/template/spec/containers")
                .and_then(|c| c.as_array())
                .map(|list| list.iter().filter_map(|c| c.get("image").and_then(|i| i.as_str()).map(str::to_string)).collect())
                .unwrap_or_default();
            out.push(WorkloadView {
                kind: object.kind().to_string(),
                namespace: object.namespace().to_string(),
                name: object.name().to_string(),
                desired,
                current,
                ready,
                updated,
                owner: object
                    .metadata()
                    .owner_references
                    .as_ref()
                    .and_then(|o| o.iter().find(|r| r.controller == Some(true)))
                    .map(|r| format!("{}/{}", r.kind, r.name)),
                images,
                revision: object.metadata().annotations.as_ref().and_then(|a| a.get("deployment.kubernetes.io/revision").cloned()),
            });
        }
    }
    out
}

/// A Service as the network view lists it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ServiceView {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// ClusterIP, NodePort, LoadBalancer, ExternalName.
    pub type_: String,
    /// The ClusterIP (`None` for headless).
    pub cluster_ip: String,
    /// The load balancer's address or external IPs, if any.
    pub external_ip: Option<String>,
    /// `kubectl get svc`'s PORT(S) column.
    pub ports: String,
    /// Endpoints ready / in the slices.
    pub endpoints_ready: usize,
    /// Endpoints in the slices.
    pub endpoints_total: usize,
    /// Whether it selects pods (a Service without a selector has its endpoints managed by
    /// someone else, as `kubernetes` by the API server).
    pub selector: bool,
    /// Packets that went to it in the last 10 s of the packet log, and how many failed.
    pub recent: (u32, u32),
}

/// One node's kube-proxy rules.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct NodeRulesView {
    /// The node.
    pub node: String,
    /// Service-port rules (ClusterIP, external and load-balancer IPs).
    pub vips: usize,
    /// Node-port rules.
    pub node_ports: usize,
    /// Endpoint chains (KUBE-SEP) across them.
    pub endpoints: usize,
    /// When kube-proxy last synced (virtual ms).
    pub synced_at: Option<Millis>,
}

/// One packet, named the way a user thinks of it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PacketView {
    /// When it was sent.
    pub t_ms: Millis,
    /// The sending pod (`default/client`), or the host.
    pub from: String,
    /// `tcp`, `udp`, `dns`.
    #[serde(deserialize_with = "static_str::deserialize")]
    pub protocol: static_str::Name,
    /// Where it was sent (`10.96.0.10:53`).
    pub dst: String,
    /// The Service whose rules rewrote it.
    pub service: Option<String>,
    /// The endpoint chosen (`default/web-6d4f…` at `10.244.1.3:80`).
    pub endpoint: Option<String>,
    /// The DNS question.
    pub question: Option<String>,
    /// `ok`, `refused`, `timeout`, `reset`, `unreachable` or a DNS rcode.
    pub outcome: String,
    /// Round trip (virtual ms).
    pub latency_ms: Millis,
    /// The NetworkPolicy verdict that dropped it.
    pub dropped_by: Option<String>,
    /// The pod it reached (the endpoint the rules chose, or the pod addressed), if any.
    pub to_pod: Option<String>,
    /// The node it left (whose kube-proxy rules rewrote it).
    pub from_node: String,
    /// The node of the pod it reached.
    pub to_node: Option<String>,
    /// The DNS answer's records, for a query answered.
    pub answer: Option<String>,
    /// How a packet not sent by a container's own process was sent (`kubectl exec`,
    /// `kubectl port-forward`, `minikube ssh`); the workstation's packets are named by `from`.
    #[serde(deserialize_with = "static_str::deserialize_option")]
    pub via: Option<static_str::Name>,
    /// Its path, hop by hop ([`packet_hops`]).
    pub hops: Vec<HopView>,
}

/// One hop of a packet's path: where it was and what happened there.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HopView {
    /// The place (`default/client on node-1`, `node-2's kube-proxy rules`, `fabric`, ...).
    pub place: String,
    /// What happened there.
    pub what: String,
    /// A NetworkPolicy dropped the packet here.
    pub dropped: bool,
}

/// The workstation as the network view names it (`workstation 172.18.0.1`).
pub fn workstation_name() -> String {
    format!("workstation {}", crate::workstation::WORKSTATION_IP)
}

/// What the network view knows to name addresses by: pods and nodes.
struct Names {
    /// Pod IP → `namespace/name`.
    pod_by_ip: std::collections::BTreeMap<String, String>,
    /// `namespace/name` → node.
    node_of_pod: std::collections::BTreeMap<String, String>,
    /// Node address → node.
    node_by_ip: std::collections::BTreeMap<String, String>,
}

impl Names {
    fn of(world: &World) -> Names {
        let mut pod_by_ip = std::collections::BTreeMap::new();
        let mut node_of_pod = std::collections::BTreeMap::new();
        for object in world.api().store().list(("", "pods"), None) {
            let Some(pod) = object.as_pod() else { continue };
            let status = pod.status.as_ref();
            let terminal = matches!(status.and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"));
            if let Some(ip) = status.and_then(|s| s.pod_ip.clone()).filter(|ip| !ip.is_empty() && !terminal) {
                if pod.spec.as_ref().and_then(|s| s.host_network) != Some(true) {
                    let key = format!("{}/{}", object.namespace(), object.name());
                    if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                        node_of_pod.insert(key.clone(), node);
                    }
                    pod_by_ip.insert(ip, key);
                }
            }
        }
        let node_by_ip = world.node_names().filter_map(|n| world.host(n)).map(|h| (h.ip(), h.name.clone())).collect();
        Names { pod_by_ip, node_of_pod, node_by_ip }
    }

    /// `default/web-1 (10.244.1.3:80)`, `node node-2 (172.18.0.3:30080)` or the address.
    fn address(&self, ip: &str, port: u16) -> String {
        match (self.pod_by_ip.get(ip), self.node_by_ip.get(ip)) {
            (Some(pod), _) => format!("{pod} ({ip}:{port})"),
            (None, Some(node)) => format!("node {node} ({ip}:{port})"),
            _ => format!("{ip}:{port}"),
        }
    }

    /// The pod at `ip` and its node.
    fn pod(&self, ip: &str) -> Option<(&String, Option<&String>)> {
        self.pod_by_ip.get(ip).map(|pod| (pod, self.node_of_pod.get(pod)))
    }
}

/// A packet's path, hop by hop, from the packet log's record: the sender (a pod and its node,
/// the workstation, a node's shell), the source node's kube-proxy rule that rewrote a Service
/// address and the endpoint it chose (or REJECT), a load balancer and the node it chose, that
/// node's node-port rule, ingress-nginx's server and location and its second connection to the
/// upstream's endpoint, the fabric between nodes, a NetworkPolicy verdict, and the answer (a
/// DNS answer's records, or how the connection ended). The network view shows it when a packet
/// is selected; `hops COMMAND` prints it.
fn packet_hops(p: &kubesim_runtime::net::PacketRecord, from: &str, names: &Names) -> Vec<HopView> {
    use kubesim_runtime::net::{Hop, Origin};
    let hop = |place: String, what: String| HopView { place, what, dropped: false };
    let mut hops = Vec::new();
    let dst = names.address(&p.dst.0, p.dst.1);
    let sender = match p.origin {
        Origin::Process => format!("{from} on {}", p.from_host),
        Origin::Exec => format!("{from} on {} (kubectl exec)", p.from_host),
        Origin::Workstation => from.to_string(),
        // The kubelet's streaming connection leaves the pod's node, from the node's address.
        Origin::PortForward => format!("{from} (kubectl port-forward through {}'s kubelet, {})", p.from_host, p.src_ip),
        Origin::NodeShell => format!("{from} (minikube ssh)"),
    };
    let asks = match p.origin {
        Origin::Process | Origin::Exec => " (the pod's resolv.conf nameserver)",
        _ => "",
    };
    hops.push(hop(
        sender,
        match &p.question {
            Some(q) => format!("asks {dst}{asks} {q}"),
            None => format!("opens a {} connection to {dst}", p.protocol.to_ascii_uppercase()),
        },
    ));
    let rule = |node: &str, service: &str, endpoint: &Option<(String, u16)>, snat: Option<&String>| match endpoint {
        // The CNI portmap plugin's hostPort rule (`hostPort 80 → namespace/pod`).
        Some((ip, port)) if service.starts_with("hostPort ") => hop(
            format!("{node}'s hostPort rules (CNI portmap)"),
            format!("{} DNATs it to {}", service.split(" →").next().unwrap_or(service), names.address(ip, *port)),
        ),
        // KUBE-MARK-MASQ, then KUBE-POSTROUTING's MASQUERADE as it leaves the node.
        Some((ip, port)) => hop(
            format!("{node}'s kube-proxy rules"),
            match snat {
                Some(from) => format!("Service rule {service} DNATs it to {} and masquerades it as {from} (SNAT)", names.address(ip, *port)),
                None => format!("Service rule {service} DNATs it to {}", names.address(ip, *port)),
            },
        ),
        // REJECT when the Service has no endpoint at all; DROP when it has some but none this
        // traffic may use (no local endpoint for a Local traffic policy, a source outside
        // loadBalancerSourceRanges): the client times out.
        None if p.outcome == "refused" => {
            hop(format!("{node}'s kube-proxy rules"), format!("Service rule {service} has no ready endpoint: REJECT (connection refused)"))
        }
        None => hop(
            format!("{node}'s kube-proxy rules"),
            format!("Service rule {service} has no endpoint this traffic may use (no local endpoint, or a source outside loadBalancerSourceRanges): DROP"),
        ),
    };
    if let Some(service) = &p.service {
        hops.push(rule(&p.from_host, service, &p.endpoint, p.snat.as_ref()));
    }
    // The machine the packet is on, and the fabric between machines.
    let mut at = if p.from_host.is_empty() { from.to_string() } else { p.from_host.clone() };
    let fabric = |hops: &mut Vec<HopView>, at: &mut String, to: &str| {
        if at != to {
            hops.push(hop("fabric".into(), format!("routed from {at} to {to}")));
            *at = to.to_string();
        }
    };
    let mut outcome = p.outcome.clone();
    let mut upstream_dropped = None;
    let mut relay: Option<(String, u16)> = None;
    let mut nginx_answered = false;
    for h in &p.hops {
        match h {
            Hop::Balanced { node } => {
                hops.push(hop(format!("load balancer {}:{}", p.dst.0, p.dst.1), format!("forwards the connection to node {node}")));
                fabric(&mut hops, &mut at, node);
            }
            Hop::Forwarded { node, service, endpoint, snat } => {
                fabric(&mut hops, &mut at, node);
                hops.push(rule(node, service, endpoint, snat.as_ref()));
            }
            Hop::Ingress { controller, host, path, server, location, ingress, upstream, status } => {
                let (pod, node) = names.pod(&controller.0).map_or((controller.0.clone(), None), |(p, n)| (p.clone(), n.cloned()));
                if let Some(node) = &node {
                    fabric(&mut hops, &mut at, node);
                }
                let host = if host.is_empty() { "(no Host)".to_string() } else { format!("Host {host}") };
                let server = if server == kubesim_runtime::ingress::DEFAULT_SERVER { "the catch-all server _".to_string() } else { format!("server {server}") };
                let routed = match (location, ingress) {
                    (Some(l), Some(i)) => format!("{server}, location {l} of Ingress {i}"),
                    (Some(l), None) => format!("{server}, location {l} (the default backend)"),
                    _ => format!("{server}, no location matches"),
                };
                let then = match upstream {
                    Some((name, (ip, port))) => format!(" → upstream {name}: opens a second connection to {}", names.address(ip, *port)),
                    None => format!(": nginx answers {status} itself"),
                };
                let place = format!("ingress-nginx {pod} ({}:{})", controller.0, controller.1);
                hops.push(hop(place.clone(), format!("{host}, path {path}: {routed}{then}")));
                match upstream {
                    // The backend's answer goes back through nginx to the client.
                    Some(_) => relay = Some((place, *status)),
                    None => nginx_answered = true,
                }
            }
            Hop::Upstream { outcome: o, dropped_by } => {
                outcome = o.clone();
                upstream_dropped = dropped_by.clone();
            }
        }
    }
    let target = p.target.as_ref().or(p.endpoint.as_ref()).map(|(ip, port)| (ip.clone(), *port)).unwrap_or_else(|| p.dst.clone());
    let pod = names.pod(&target.0);
    if let Some((_, Some(node))) = pod {
        fabric(&mut hops, &mut at, node);
    }
    if let Some(why) = p.dropped_by.as_ref().or(upstream_dropped.as_ref()) {
        hops.push(HopView { place: "NetworkPolicy".into(), what: format!("dropped: {why}"), dropped: true });
    }
    match pod {
        // The ingress hop said what nginx answered.
        Some(_) if nginx_answered => {}
        Some((name, node)) => {
            let answer = match (&p.answer, p.protocol) {
                (Some(a), _) => format!("answers {a}"),
                (None, "dns") => format!("answers {}", p.outcome),
                _ if outcome == "ok" => "accepts and answers".to_string(),
                _ => format!("the connection ends: {outcome}"),
            };
            let place = match node {
                Some(node) => format!("{name} ({}:{}) on {node}", target.0, target.1),
                None => format!("{name} ({}:{})", target.0, target.1),
            };
            hops.push(hop(place, answer));
        }
        None if p.dropped_by.is_none() && p.service.as_ref().is_none_or(|_| p.endpoint.is_some()) => {
            let place = names.address(&target.0, target.1);
            let what =
                if names.node_by_ip.contains_key(&target.0) { format!("the node answers: {outcome}") } else { format!("outside the pod network: {outcome}") };
            hops.push(hop(place, what));
        }
        None => {}
    }
    if let Some((place, status)) = relay {
        hops.push(hop(place, format!("relays the answer to the client: HTTP {status}")));
    }
    hops
}

/// A NetworkPolicy as the network view lists it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PolicyRow {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its pod selector (`app=web`, `<none>` for all pods).
    pub pod_selector: String,
    /// Its policy types (`Ingress, Egress`).
    pub types: String,
    /// How many ingress and egress rules it has.
    pub rules: (usize, usize),
}

/// Who may connect to whom: the connectivity matrix of the pods outside kube-system, from the
/// verdicts the fabric enforces (`kubesim_netpol::PolicyView::explain`), in the netpol e2e's
/// `.`/`X` terms.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct MatrixView {
    /// The pods (`namespace/name`), rows and columns alike.
    pub pods: Vec<String>,
    /// Each column's probe port (the destination pod's first container port, else 80/TCP).
    pub ports: Vec<String>,
    /// `allowed[from][to]`.
    pub allowed: Vec<Vec<bool>>,
    /// Why, per cell (the two ends' reasons).
    pub reasons: Vec<Vec<String>>,
    /// Pods left out (the matrix shows at most [`MATRIX_CAP`]).
    pub omitted: usize,
    /// Each pod's address.
    pub addresses: Vec<String>,
    /// What a connection probe from the row's pod to the column's saw when the matrix was last
    /// confirmed ([`probe_matrix`]); `None` before, or for a pod with no running container.
    pub probed: Vec<Vec<Option<crate::netpol::ProbeResult>>>,
    /// When the probes ran (virtual ms).
    pub probed_at: Option<Millis>,
}

impl MatrixView {
    /// The cells whose probe disagrees with the verdict: allowed but the packet did not get
    /// through, or blocked but it did (a policy agent not yet updated, a network fault).
    pub fn disagreements(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, row) in self.probed.iter().enumerate() {
            for (j, probe) in row.iter().enumerate() {
                if probe.as_ref().is_some_and(|p| p.reached() != self.allowed[i][j]) {
                    out.push((i, j));
                }
            }
        }
        out
    }

    /// Whether `other` has the same pods, ports and verdicts (its probes may be reused).
    pub fn same_cells(&self, other: &MatrixView) -> bool {
        self.pods == other.pods && self.addresses == other.addresses && self.ports == other.ports && self.allowed == other.allowed
    }
}

/// Confirms the matrix by probing: one connection attempt per cell from the row's pod to the
/// column's address and port, through the source node's rules and the fabric, as `netpol
/// matrix` probes (at most [`MATRIX_CAP`]² probes; a probe changes nothing in the world).
pub fn probe_matrix(world: &mut World, matrix: &mut MatrixView) {
    let mut probed = Vec::with_capacity(matrix.pods.len());
    for from in &matrix.pods {
        let mut row = Vec::with_capacity(matrix.pods.len());
        for (to, port) in matrix.addresses.iter().zip(&matrix.ports) {
            let (number, proto) = port.split_once('/').unwrap_or((port, "TCP"));
            let number = number.parse::<u16>().unwrap_or(80);
            row.push(world.probe(from, to, number, proto == "UDP").ok());
        }
        probed.push(row);
    }
    matrix.probed = probed;
    matrix.probed_at = Some(world.now());
}

/// The most pods the matrix shows.
pub const MATRIX_CAP: usize = 16;

/// The connectivity matrix ([`MatrixView`]) of the pods outside kube-system with addresses.
pub fn policy_matrix(world: &World) -> MatrixView {
    use kubesim_runtime::net::{Direction, Flow};
    let view = world.policy_view();
    let store = world.api().store();
    let mut pods: Vec<(String, String, (u16, bool))> = Vec::new();
    for (ip, pod) in view.pods() {
        if pod.namespace == "kube-system" {
            continue;
        }
        let port = store
            .get(("", "pods"), &pod.namespace, &pod.name)
            .and_then(|o| o.as_pod().and_then(|p| p.spec.clone()))
            .and_then(|s| {
                s.containers.iter().flat_map(|c| c.ports.iter().flatten()).next().map(|p| (p.container_port as u16, p.protocol.as_deref() == Some("UDP")))
            })
            .unwrap_or((80, false));
        pods.push((pod.key(), ip.clone(), port));
    }
    pods.sort();
    let omitted = pods.len().saturating_sub(MATRIX_CAP);
    pods.truncate(MATRIX_CAP);
    let fabric = world.runtime().fabric();
    let mut allowed = Vec::new();
    let mut reasons = Vec::new();
    for (_, src, _) in &pods {
        let mut row = Vec::new();
        let mut why = Vec::new();
        for (_, dst, (port, udp)) in &pods {
            let e = view.explain(&Flow::located(fabric, src, dst, *port, *udp));
            row.push(e.allowed());
            why.push(format!("{}\n{}", e.egress.reason(Direction::Egress), e.ingress.reason(Direction::Ingress)));
        }
        allowed.push(row);
        reasons.push(why);
    }
    MatrixView {
        pods: pods.iter().map(|p| p.0.clone()).collect(),
        ports: pods.iter().map(|(_, _, (port, udp))| format!("{port}/{}", if *udp { "UDP" } else { "TCP" })).collect(),
        allowed,
        reasons,
        omitted,
        addresses: pods.iter().map(|p| p.1.clone()).collect(),
        probed: Vec::new(),
        probed_at: None,
    }
}

/// One record of the packet log as the network view shows it.
fn packet_view(p: &kubesim_runtime::net::PacketRecord, names: &Names) -> PacketView {
    use kubesim_runtime::net::Origin;
    // The pod it reached: where it was delivered, else the endpoint the rules chose, else the
    // address itself.
    let reached = p.target.as_ref().or(p.endpoint.as_ref()).map_or(p.dst.0.as_str(), |(ip, _)| ip.as_str());
    let to_pod = names.pod_by_ip.get(reached).cloned();
    let from = match p.origin {
        Origin::Workstation | Origin::PortForward => workstation_name(),
        Origin::NodeShell => format!("node {} ({})", p.from_host, p.src_ip),
        _ => names.pod_by_ip.get(&p.src_ip).cloned().unwrap_or_else(|| p.from_host.clone()),
    };
    let via = match p.origin {
        Origin::Exec => Some("kubectl exec"),
        Origin::PortForward => Some("kubectl port-forward"),
        Origin::NodeShell => Some("minikube ssh"),
        Origin::Process | Origin::Workstation => None,
    };
    let hops = packet_hops(p, &from, names);
    PacketView {
        t_ms: p.t_ms,
        protocol: p.protocol,
        dst: format!("{}:{}", p.dst.0, p.dst.1),
        service: p.service.clone(),
        endpoint: p.endpoint.as_ref().map(|(ip, port)| names.address(ip, *port)),
        question: p.question.clone(),
        outcome: p.outcome.clone(),
        latency_ms: p.latency_ms,
        dropped_by: p.dropped_by.clone(),
        to_node: to_pod.as_ref().and_then(|pod| names.node_of_pod.get(pod)).cloned(),
        to_pod,
        from_node: p.from_host.clone(),
        answer: p.answer.clone(),
        from,
        via,
        hops,
    }
}

/// The packets logged since the log counted `since` (at most the log's capacity), as the
/// network view shows them, oldest first: what a command sent (`hops COMMAND`).
pub fn packets_since(world: &World, since: u64) -> Vec<PacketView> {
    let (log, total) = world.runtime().packets();
    let new = total.saturating_sub(since).min(log.len() as u64) as usize;
    let names = Names::of(world);
    log.iter().skip(log.len() - new).map(|p| packet_view(p, &names)).collect()
}

/// Packets and their hops as text (`hops COMMAND`): one header line per packet — protocol,
/// sender, destination, outcome, round trip — then its hops, numbered.
pub fn hops_text(packets: &[PacketView]) -> String {
    let mut out = String::new();
    for (i, p) in packets.iter().enumerate() {
        let via = p.via.map(|v| format!(" ({v})")).unwrap_or_default();
        out.push_str(&format!("packet {}: {} {}{via} -> {}: {} ({} ms)\n", i + 1, p.protocol, p.from, p.dst, p.outcome, p.latency_ms));
        for (n, h) in p.hops.iter().enumerate() {
            out.push_str(&format!("  {}. {}: {}\n", n + 1, h.place, h.what));
        }
    }
    if packets.is_empty() {
        out.push_str("no packets were sent\n");
    }
    out
}

/// Services, kube-proxy rules and recent traffic.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct NetworkView {
    /// Every Service.
    pub services: Vec<ServiceView>,
    /// Every node's rules.
    pub nodes: Vec<NodeRulesView>,
    /// The most recent packets, newest first (at most `limit`).
    pub packets: Vec<PacketView>,
    /// Packets logged since the world began.
    pub total_packets: u64,
    /// Every NetworkPolicy.
    pub policies: Vec<PolicyRow>,
    /// The connectivity matrix, when a policy exists.
    pub matrix: Option<MatrixView>,
    /// The span the Services' recent traffic counts cover: 10 s, or less when more packets
    /// than the runtime's packet log keeps were sent in the last 10 s.
    pub recent_window_ms: Millis,
    /// The load generators: Deployments whose pods pace their requests by a
    /// [`LOAD_INTERVAL_ENV`] environment variable.
    pub load_generators: Vec<LoadGeneratorView>,
    /// URLs the workstation reaches the cluster by, for the external client: each node port
    /// on the first node's address and each load balancer's address, by Service.
    pub external_targets: Vec<String>,
}

/// The environment variable a load generator's clients sleep between requests (seconds): the
/// network view's requests-per-second control sets it with `kubectl set env`.
pub const LOAD_INTERVAL_ENV: &str = "REQUEST_INTERVAL";

/// A Deployment of clients pacing requests by [`LOAD_INTERVAL_ENV`].
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub struct LoadGeneratorView {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its replicas (clients).
    pub replicas: i32,
    /// Seconds each client sleeps between requests (the template's value).
    pub interval_s: f64,
}

impl Eq for LoadGeneratorView {}

/// The network view: Services with their endpoints, each node's kube-proxy rules and the last
/// `limit` packets container processes sent (with the pods at either end named).
pub fn network(world: &World, limit: usize) -> NetworkView {
    let store = world.api().store();
    let names = Names::of(world);
    let (log, total_packets) = world.runtime().packets();
    let now = world.now();
    let recent_window_ms = match log.front() {
        Some(oldest) if log.len() >= kubesim_runtime::runtime::PACKET_LOG_CAP && oldest.t_ms + 10_000 > now => now - oldest.t_ms,
        _ => 10_000,
    };
    let mut recent: std::collections::BTreeMap<String, (u32, u32)> = std::collections::BTreeMap::new();
    for p in log.iter().filter(|p| p.t_ms + 10_000 >= now) {
        if let Some(service) = &p.service {
            let name = service.split(':').next().unwrap_or(service).to_string();
            let entry = recent.entry(name).or_default();
            entry.0 += 1;
            if p.outcome != "ok" {
                entry.1 += 1;
            }
        }
    }
    // (namespace, service) → (ready, all) endpoints across its slices.
    let mut endpoint_counts: std::collections::BTreeMap<(String, String), (usize, usize)> = std::collections::BTreeMap::new();
    for slice in store.list(("discovery.k8s.io", "endpointslices"), None) {
        let json = slice.to_json();
        let Some(service) = json.pointer("/metadata/labels/kubernetes.io~1service-name").and_then(|v| v.as_str()) else { continue };
        let entry = endpoint_counts.entry((slice.namespace().to_string(), service.to_string())).or_default();
        for ep in json.get("endpoints").and_then(|e| e.as_array()).into_iter().flatten() {
            entry.1 += 1;
            if ep.pointer("/conditions/ready").and_then(|v| v.as_bool()).unwrap_or(true) {
                entry.0 += 1;
            }
        }
    }
    let mut services = Vec::new();
    let first_node_ip = world.node_names().filter_map(|n| world.host(n)).map(|h| h.ip()).next();
    let mut external_targets = Vec::new();
    for object in store.list(("", "services"), None) {
        let Object::Service(svc) = object.as_ref() else { continue };
        let spec = svc.spec.clone().unwrap_or_default();
        let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
        let ports = spec
            .ports
            .iter()
            .flatten()
            .map(|p| {
                let proto = p.protocol.clone().unwrap_or_else(|| "TCP".into());
                match p.node_port {
                    Some(np) => format!("{}:{np}/{proto}", p.port),
                    None => format!("{}/{proto}", p.port),
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        let lb: Vec<String> = svc
            .status
            .as_ref()
            .and_then(|s| s.load_balancer.as_ref())
            .and_then(|l| l.ingress.clone())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|i| i.ip.or(i.hostname))
            .collect();
        let external: Vec<String> = lb.iter().cloned().chain(spec.external_ips.clone().unwrap_or_default()).collect();
        let (ready, all) = endpoint_counts.get(&(object.namespace().to_string(), object.name().to_string())).copied().unwrap_or_default();
        let key = format!("{}/{}", object.namespace(), object.name());
        for p in spec.ports.iter().flatten().filter(|p| p.protocol.as_deref().unwrap_or("TCP") == "TCP") {
            let scheme = if p.port == 443 { "https" } else { "http" };
            if let (Some(np), Some(node)) = (p.node_port, &first_node_ip) {
                external_targets.push(format!("{scheme}://{node}:{np}/"));
            }
            for ip in &lb {
                external_targets.push(if p.port == 80 { format!("http://{ip}/") } else { format!("{scheme}://{ip}:{}/", p.port) });
            }
        }
        services.push(ServiceView {
            namespace: object.namespace().to_string(),
            name: object.name().to_string(),
            type_: type_.clone(),
            cluster_ip: spec.cluster_ip.clone().unwrap_or_default(),
            external_ip: if external.is_empty() { None } else { Some(external.join(",")) },
            ports,
            endpoints_ready: ready,
            endpoints_total: all,
            selector: spec.selector.as_ref().is_some_and(|s| !s.is_empty()),
            recent: recent.get(&key).copied().unwrap_or_default(),
        });
    }
    let nodes = world
        .node_names()
        .filter_map(|n| world.host(n))
        .map(|h| NodeRulesView {
            node: h.name.clone(),
            vips: h.netfilter.vips.len(),
            node_ports: h.netfilter.node_ports.len(),
            endpoints: h.netfilter.services.values().map(|sp| sp.reachable_endpoints().len()).sum(),
            synced_at: h.netfilter.synced_at,
        })
        .collect();
    let packets = log.iter().rev().take(limit).map(|p| packet_view(p, &names)).collect();
    let mut load_generators = Vec::new();
    for object in store.list(("apps", "deployments"), None) {
        let Object::Deployment(d) = object.as_ref() else { continue };
        let Some(spec) = d.spec.as_ref() else { continue };
        let interval =
            spec.template.spec.iter().flat_map(|s| s.containers.iter()).flat_map(|c| c.env.iter().flatten()).find_map(|e| {
                (e.name == LOAD_INTERVAL_ENV).then(|| e.value.as_deref().and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite())).flatten()
            });
        if let Some(interval_s) = interval {
            load_generators.push(LoadGeneratorView {
                namespace: object.namespace().to_string(),
                name: object.name().to_string(),
                replicas: spec.replicas.unwrap_or(1),
                interval_s,
            });
        }
    }
    let mut policies = Vec::new();
    for object in store.list(("networking.k8s.io", "networkpolicies"), None) {
        let Some(policy) = object.decode::<k8s_openapi::api::networking::v1::NetworkPolicy>() else { continue };
        let spec = policy.spec.unwrap_or_default();
        let selector = spec.pod_selector.and_then(|s| s.match_labels).unwrap_or_default();
        let pod_selector =
            if selector.is_empty() { "<none>".to_string() } else { selector.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",") };
        policies.push(PolicyRow {
            namespace: object.namespace().to_string(),
            name: object.name().to_string(),
            pod_selector,
            types: spec.policy_types.unwrap_or_default().join(", "),
            rules: (spec.ingress.map_or(0, |r| r.len()), spec.egress.map_or(0, |r| r.len())),
        });
    }
    let matrix = (!policies.is_empty()).then(|| policy_matrix(world));
    NetworkView { services, nodes, packets, total_packets, policies, matrix, recent_window_ms, load_generators, external_targets }
}

/// One process of a container, as `ps` shows it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ProcessView {
    /// PID in the container.
    pub pid: u32,
    /// User.
    pub user: String,
    /// State letter.
    pub state: char,
    /// CPU time (ms).
    pub cpu_ms: u64,
    /// Resident memory (bytes).
    pub rss_bytes: u64,
    /// Command line.
    pub cmdline: String,
}

/// A volume mount and the first entries of what it holds.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct MountView {
    /// Mount point.
    pub path: String,
    /// The volume (`<pod-uid>/<name>`, `pv/<name>`, `node`).
    pub volume: String,
    /// Read-only.
    pub read_only: bool,
    /// Entries at the mount point (`name` or `name/` for directories), at most 20.
    pub entries: Vec<String>,
}

/// What runs in one container, from the node's runtime (its latest attempt).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ContainerRuntimeView {
    /// Container name.
    pub name: String,
    /// Runtime id (first 12 characters).
    pub id: String,
    /// created, running, exited (code).
    pub state: String,
    /// PID 1's command line, after `$(VAR)` expansion and image entrypoint/cmd.
    pub argv: Vec<String>,
    /// The environment, sorted.
    pub env: Vec<(String, String)>,
    /// Volume mounts.
    pub mounts: Vec<MountView>,
    /// The process table.
    pub processes: Vec<ProcessView>,
    /// The last lines of its log.
    pub log_tail: Vec<String>,
    /// CPU now (millicores) and memory (bytes).
    pub usage: (i64, u64),
}

/// The containers of pod `namespace/name` as its node's runtime runs them (empty before the
/// pod is bound or when its node is gone).
pub fn pod_containers(world: &World, namespace: &str, name: &str) -> Vec<ContainerRuntimeView> {
    let Some(pod) = world.api().lookup(("", "pods"), namespace, name).and_then(|o| o.as_pod().cloned()) else { return Vec::new() };
    let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) else { return Vec::new() };
    let Some(host) = world.host(&node) else { return Vec::new() };
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let spec = pod.spec.clone().unwrap_or_default();
    let now = world.now();
    let mut out = Vec::new();
    for container in spec.init_containers.iter().flatten().chain(spec.containers.iter()) {
        let Some(id) = host.cri.latest_attempt(&uid, &container.name) else { continue };
        let Ok(c) = host.cri.container_status(&id) else { continue };
        let state = match c.state {
            kubesim_host::cri::ContainerState::Created => "created".to_string(),
            kubesim_host::cri::ContainerState::Running => "running".to_string(),
            kubesim_host::cri::ContainerState::Exited => format!("exited ({})", c.exit_code.unwrap_or(0)),
        };
        let mounts = c
            .spec
            .mounts
            .iter()
            .map(|m| {
                let tree = host.cri.volumes.trees.get(&m.volume);
                let at = m.sub_path.as_deref().map(|p| format!("/{}", p.trim_start_matches('/'))).unwrap_or_else(|| "/".into());
                let entries = match tree.and_then(|t| t.get_path(&at)).map(|n| &n.kind) {
                    Some(kubesim_os::fs::NodeKind::Dir(children)) => children
                        .iter()
                        .take(20)
                        .map(|(name, node)| if matches!(node.kind, kubesim_os::fs::NodeKind::Dir(_)) { format!("{name}/") } else { name.to_string() })
                        .collect(),
                    Some(_) => vec![m.sub_path.clone().unwrap_or_default()],
                    None => Vec::new(),
                };
                MountView { path: m.path.clone(), volume: m.volume.clone(), read_only: m.read_only, entries }
            })
            .collect();
        let logs = host.cri.container_logs(&id).unwrap_or_default();
        let lines: Vec<&str> = logs.lines().collect();
        out.push(ContainerRuntimeView {
            name: container.name.clone(),
            id: id.chars().take(12).collect(),
            state,
            argv: c.spec.argv.clone(),
            env: c.spec.env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            mounts,
            processes: c
                .processes()
                .into_iter()
                .map(|p| ProcessView { pid: p.pid, user: c.user_name(p.uid), state: p.state, cpu_ms: p.cpu_ms, rss_bytes: p.rss_bytes, cmdline: p.cmdline })
                .collect(),
            log_tail: lines[lines.len().saturating_sub(20)..].iter().map(|l| l.to_string()).collect(),
            usage: (c.cpu_milli(now), c.memory_bytes()),
        });
    }
    out
}

/// Reading back the `&'static str` fields of views (event types, protocols, `via`: each a short,
/// closed set of names) when a view crosses to another thread as data: each distinct string is
/// allocated once and kept, so equal names are the same `&'static str` again.
pub mod static_str {
    use serde::Deserialize;
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    /// A `&'static str` field (spelled as an alias: serde's derive borrows fields written as
    /// `&str` from the input, which a message between threads cannot lend).
    pub type Name = &'static str;

    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

    /// The interned `name`.
    pub fn intern(name: &str) -> &'static str {
        let mut names = NAMES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = names.get(name) {
            return known;
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        names.insert(leaked);
        leaked
    }

    /// `#[serde(deserialize_with)]` for a `&'static str`.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        Ok(intern(&String::deserialize(d)?))
    }

    /// `#[serde(deserialize_with)]` for an `Option<&'static str>`.
    pub fn deserialize_option<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.map(|name| intern(&name)))
    }
}
