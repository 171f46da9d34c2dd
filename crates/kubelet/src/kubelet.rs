//! The kubelet of one node: pod workers over the CRI model, PLEG, the status manager, node
//! registration, node status and the node Lease.
//!
//! Structure after upstream pkg/kubelet: watch events and PLEG events trigger a pod worker's
//! sync; a sync first writes the pod status generated from the runtime (status manager), then
//! runs the next CRI calls one after another (sandbox, image pull, create, start), each taking
//! its modelled latency. PLEG relists on a 1 s grid, but only when the runtime changed (the
//! effect of relisting an unchanged runtime is nothing, so idle nodes cost nothing).

use crate::cri::{digest_ref, latency_ms, normalize_image, ContainerConfig, ContainerState, CriCall, FakeRuntime, ImageService, RuntimeService, SandboxState};
use crate::probe::{run_probe, ProbeKind};
use crate::process::{program_for, program_with_files};
use crate::status::get_phase;
use kubesim_api::k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kubesim_api::k8s_openapi::api::core::v1::{
    Container, ContainerImage, ContainerState as ApiContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus,
    DaemonEndpoint, HostIP, Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeSpec, NodeStatus, NodeSystemInfo, Pod, PodCondition, PodIP, PodStatus,
};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::quantity::parse_milli;
use kubesim_api::time::{micro_time_at, time_at, EPOCH_UNIX_SECONDS};
use kubesim_api::Millis;
use kubesim_apiserver::server::set_pod_condition;
use kubesim_apiserver::{Component, Ctx, DeleteOptions, Interest, WatchEvent, WatchFilter};
use kubesim_store::EventType;
use rand_core::RngCore;
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Node status heartbeat / lease renewal period (nodeStatusUpdateFrequency, lease renew 25% of 40 s).
pub const HEARTBEAT_MS: Millis = 10_000;
/// nodeStatusReportFrequency: an unchanged node status is still written this often.
pub const NODE_STATUS_REPORT_MS: Millis = 5 * 60_000;
/// The ConfigMap (in kube-system) through which a scenario overrides image sizes and declares
/// missing images.
pub const IMAGE_CATALOGUE_CONFIGMAP: &str = "kubesim-images";
/// evictionHard memory.available (bytes).
pub const EVICTION_MEMORY_AVAILABLE_BYTES: i64 = 100 << 20;
/// evictionPressureTransitionPeriod.
pub const EVICTION_PRESSURE_TRANSITION_MS: Millis = 5 * 60_000;
/// PLEG relist period.
pub const RELIST_MS: Millis = 1_000;
/// Container restart backoff (initial, max) and the stable-run reset window.
pub const BACKOFF_INITIAL_MS: Millis = 10_000;
/// Maximum container restart / image pull backoff.
pub const BACKOFF_MAX_MS: Millis = 300_000;
/// After a sync that ended in an error (CrashLoopBackOff, ErrImagePull, ...), the pod worker
/// requeues the pod after backOffPeriod with jitter factor 0.5 (pod_workers.go).
pub const WORKER_BACKOFF_MS: Millis = 10_000;
/// How long a kubelet takes to react to a watch event (informer + pod worker dispatch).
pub const DISPATCH_MS: Millis = 5;

const T_HEARTBEAT: u64 = 1 << 56;
const T_RELIST: u64 = 2 << 56;
const T_RUNTIME: u64 = 3 << 56;
const T_STEP: u64 = 4 << 56;
const T_RETRY: u64 = 5 << 56;
const T_DISPATCH: u64 = 6 << 56;
const T_PROBE: u64 = 7 << 56;
const KIND_MASK: u64 = 0xff << 56;

/// How a kubelet comes up.
#[derive(Clone, Debug)]
pub struct NodeSetup {
    /// Node name.
    pub name: String,
    /// 0-based index: the node's podCIDR is 10.244.<index>.0/24 and its IP 172.18.0.<index+2>.
    pub index: u32,
    /// The Node to register if none exists yet (the default cluster); input Nodes exist already.
    pub register: Option<Node>,
}

#[derive(Clone, Debug)]
enum Step {
    RunSandbox,
    Pull { container: String, image: String, started: Millis },
    Create { container: String },
    Start { container: String, id: String },
    StopSandbox,
}

/// client-go flowcontrol.Backoff for one key: `duration` and the event time of the last `next`.
#[derive(Clone, Debug, Default)]
struct Backoff {
    duration_ms: Millis,
    last_update: Millis,
}

impl Backoff {
    fn expired(&self, event_time: Millis) -> bool {
        event_time.saturating_sub(self.last_update) > 2 * BACKOFF_MAX_MS
    }
    /// IsInBackOffSince(eventTime): inside the window that started at `event_time`.
    fn in_backoff_since(&self, event_time: Millis, now: Millis) -> bool {
        self.duration_ms > 0 && !self.expired(event_time) && now.saturating_sub(event_time) < self.duration_ms
    }
    /// Next(eventTime): 10 s, doubling to 5 min; reset once stable for 2 × max.
    fn next(&mut self, event_time: Millis) {
        if self.duration_ms == 0 || self.expired(event_time) {
            self.duration_ms = BACKOFF_INITIAL_MS;
        } else {
            self.duration_ms = (self.duration_ms * 2).min(BACKOFF_MAX_MS);
        }
        self.last_update = event_time;
    }
}

#[derive(Clone, Debug)]
struct ProbeWorker {
    uid: String,
    container: String,
    container_id: String,
    kind: ProbeKind,
    successes: i32,
    failures: i32,
}

#[derive(Clone, Debug)]
struct PodWorker {
    seq: u64,
    pod: Arc<Object>,
    sandbox: Option<String>,
    ip: Option<String>,
    busy: Option<Step>,
    resync: bool,
    rejected: bool,
    start_time: Option<Millis>,
    instances: BTreeMap<String, Vec<String>>,
    waiting: BTreeMap<String, (String, String)>,
    restart_backoff: BTreeMap<String, Backoff>,
    pull_backoff: BTreeMap<String, Backoff>,
    stop_requested: BTreeSet<String>,
    retry_at: Option<Millis>,
    finished: bool,
    /// Shared: a cloned kubelet (a time-travel snapshot) does not copy it.
    last_status: Option<Arc<PodStatus>>,
}

impl PodWorker {
    fn pod(&self) -> &Pod {
        self.pod.as_pod().expect("pod workers hold pods")
    }
}

/// The kubelet component of one node.
#[derive(Clone, Debug)]
pub struct Kubelet {
    actor: String,
    setup: NodeSetup,
    /// The node's container runtime.
    pub runtime: FakeRuntime,
    workers: BTreeMap<String, PodWorker>,
    seq_to_uid: BTreeMap<u64, String>,
    next_seq: u64,
    next_ip: u32,
    pleg_snapshot: BTreeMap<String, (ContainerState, Option<Millis>)>,
    relist_at: Option<Millis>,
    runtime_wake_at: Option<Millis>,
    dispatch_pending: BTreeSet<String>,
    dispatch_scheduled: bool,
    last_node_status: Option<NodeStatus>,
    last_node_status_write: Millis,
    probes: BTreeMap<u64, ProbeWorker>,
    probe_results: BTreeMap<(String, String, ProbeKind), bool>,
    next_probe_seq: u64,
    /// Last time the eviction manager observed memory.available below its hard threshold.
    memory_pressure_at: Option<Millis>,
    /// False while the node is down (fault injection): no heartbeats, no syncs.
    pub alive: bool,
}

impl Kubelet {
    /// A kubelet for one node.
    pub fn new(setup: NodeSetup) -> Kubelet {
        Kubelet {
            actor: format!("kubelet/{}", setup.name),
            setup,
            runtime: FakeRuntime::new(),
            workers: BTreeMap::new(),
            seq_to_uid: BTreeMap::new(),
            next_seq: 1,
            next_ip: 2,
            pleg_snapshot: BTreeMap::new(),
            relist_at: None,
            runtime_wake_at: None,
            dispatch_pending: BTreeSet::new(),
            dispatch_scheduled: false,
            last_node_status: None,
            last_node_status_write: 0,
            probes: BTreeMap::new(),
            probe_results: BTreeMap::new(),
            next_probe_seq: 1,
            memory_pressure_at: None,
            alive: true,
        }
    }

    /// The node name.
    pub fn node_name(&self) -> &str {
        &self.setup.name
    }

    /// The node's IP address.
    pub fn node_ip(&self) -> String {
        format!("172.18.0.{}", self.setup.index + 2)
    }

    /// The node's pod CIDR.
    pub fn pod_cidr(&self) -> String {
        format!("10.244.{}.0/24", self.setup.index)
    }

    /// Fault: the node loses power. Every container and sandbox stops at once; the kubelet
    /// goes silent (no heartbeats, no status) until [`Kubelet::power_on`].
    pub fn power_off(&mut self, ctx: &mut Ctx) {
        self.alive = false;
        let sandboxes: Vec<String> = self.runtime.list_pod_sandbox().iter().map(|s| s.id.clone()).collect();
        for id in sandboxes {
            let _ = self.runtime.stop_pod_sandbox(&id, ctx.now);
        }
        ctx.note(format!("cri/{}", self.setup.name), "fault", "node powered off: all containers stopped".to_string());
    }

    /// Fault: the kubelet cannot reach the API server (containers keep running).
    pub fn partition(&mut self) {
        self.alive = false;
    }

    /// Recovery: the kubelet is back (after a power-off, partition or restart). It relists its
    /// pods from the API server, tears down pods that were deleted meanwhile and resyncs the rest.
    pub fn power_on(&mut self, ctx: &mut Ctx) {
        self.alive = true;
        let current: BTreeMap<String, Arc<Object>> =
            ctx.api.store().pods_on_node(&self.setup.name).map(|o| (o.metadata().uid.clone().unwrap_or_default(), o.clone())).collect();
        let gone: Vec<String> = self.workers.keys().filter(|uid| !current.contains_key(*uid)).cloned().collect();
        for uid in gone {
            if let Some(worker) = self.workers.remove(&uid) {
                if let Some(sandbox) = worker.sandbox.clone() {
                    let _ = self.runtime.stop_pod_sandbox(&sandbox, ctx.now);
                    let _ = self.runtime.remove_pod_sandbox(&sandbox);
                }
                self.seq_to_uid.remove(&worker.seq);
            }
        }
        for (uid, object) in current {
            let event = WatchEvent {
                event_type: if self.workers.contains_key(&uid) { EventType::Modified } else { EventType::Added },
                resource: ("", "pods"),
                object,
                revision: 0,
            };
            self.on_pod_event(&event, ctx);
            self.schedule_dispatch(&uid, ctx);
        }
        self.heartbeat(ctx);
        self.mark_runtime_changed(ctx);
    }

    /// Fault: a container's process crashes now (exit code 1); restartPolicy decides the rest.
    pub fn crash_container(&mut self, namespace: &str, pod: &str, container: Option<&str>, ctx: &mut Ctx) -> Result<String, String> {
        let worker = self
            .workers
            .values()
            .find(|w| w.pod().metadata.namespace.as_deref() == Some(namespace) && w.pod().metadata.name.as_deref() == Some(pod))
            .ok_or_else(|| format!("pod {namespace}/{pod} is not running on {}", self.setup.name))?;
        let name = match container {
            Some(c) => c.to_string(),
            None => worker.pod().spec.as_ref().and_then(|s| s.containers.first()).map(|c| c.name.clone()).unwrap_or_default(),
        };
        let id = worker.instances.get(&name).and_then(|ids| ids.last()).cloned().ok_or_else(|| format!("container {name:?} has not started"))?;
        if !self.runtime.crash(&id, ctx.now) {
            return Err(format!("container {name:?} is not running"));
        }
        self.mark_runtime_changed(ctx);
        Ok(format!("container {name} in pod {namespace}/{pod} crashed (exit code 1)"))
    }

    /// Container logs (`kubectl logs`), in the runtime's words.
    pub fn logs(&self, uid: &str, container: &str, previous: bool) -> Result<String, String> {
        let worker = self.workers.get(uid).ok_or_else(|| "pod not found on its node".to_string())?;
        let ids = worker.instances.get(container).ok_or_else(|| {
            format!("container {container:?} in pod {:?} is waiting to start: ContainerCreating", worker.pod().metadata.name.clone().unwrap_or_default())
        })?;
        let id = if previous {
            ids.iter().rev().nth(1).ok_or_else(|| {
                format!("previous terminated container {container:?} in pod {:?} not found", worker.pod().metadata.name.clone().unwrap_or_default())
            })?
        } else {
            ids.last().expect("instances are non-empty")
        };
        let c = self.runtime.container_status(id).map_err(|e| e.0)?;
        Ok(c.logs.iter().map(|(_, l)| format!("{l}\n")).collect())
    }

    /// Current usage of a pod's running containers: (cpu millicores, memory bytes) — the
    /// metrics-server view `kubectl top` and the HPA read.
    pub fn usage(&self, uid: &str) -> Option<(i64, i64)> {
        let worker = self.workers.get(uid)?;
        let mut total = (0i64, 0i64);
        let mut any = false;
        for ids in worker.instances.values() {
            let Some(c) = ids.last().and_then(|id| self.runtime.container_status(id).ok()) else { continue };
            if c.state == ContainerState::Running {
                any = true;
                total.0 += c.config.usage.0;
                total.1 += c.config.usage.1;
            }
        }
        any.then_some(total)
    }

    /// `kubectl exec`: runs a command in a running container.
    pub fn exec(&mut self, uid: &str, container: &str, command: &[String], now: Millis) -> Result<(String, i32), String> {
        let worker = self.workers.get(uid).ok_or_else(|| "pod not found on its node".to_string())?;
        let id = worker.instances.get(container).and_then(|ids| ids.last()).ok_or_else(|| format!("container {container:?} not found"))?.clone();
        self.runtime.exec_sync(&id, command, now).map_err(|e| e.0)
    }

    fn schedule_dispatch(&mut self, uid: &str, ctx: &mut Ctx) {
        self.dispatch_pending.insert(uid.to_string());
        if !self.dispatch_scheduled {
            self.dispatch_scheduled = true;
            ctx.after(DISPATCH_MS, T_DISPATCH);
        }
    }

    fn note_cri(&self, ctx: &mut Ctx, call: CriCall, detail: String) {
        ctx.note(format!("cri/{}", self.setup.name), call.name(), detail);
    }

    fn mark_runtime_changed(&mut self, ctx: &mut Ctx) {
        // PLEG relists on a 1 s grid (phase-shifted per node so nodes do not tick in lockstep).
        let phase = (self.setup.index as u64 * 137) % RELIST_MS;
        let next_tick = ((ctx.now.saturating_sub(phase)) / RELIST_MS + 1) * RELIST_MS + phase;
        if self.relist_at.is_none_or(|at| at > next_tick) {
            self.relist_at = Some(next_tick);
            ctx.after(next_tick - ctx.now, T_RELIST);
        }
        self.schedule_runtime_wake(ctx);
    }

    fn schedule_runtime_wake(&mut self, ctx: &mut Ctx) {
        if let Some(at) = self.runtime.next_wakeup() {
            let at = at.max(ctx.now);
            if self.runtime_wake_at.is_none_or(|w| w > at || w < ctx.now) {
                self.runtime_wake_at = Some(at);
                ctx.after(at - ctx.now, T_RUNTIME);
            }
        }
    }

    fn relist(&mut self, ctx: &mut Ctx) {
        self.relist_at = None;
        let mut current = BTreeMap::new();
        for c in self.runtime.list_containers() {
            current.insert(c.id.clone(), (c.state, c.finished_at));
        }
        let mut changed_sandboxes = BTreeSet::new();
        for (id, state) in &current {
            if self.pleg_snapshot.get(id) != Some(state) {
                if let Ok(c) = self.runtime.container_status(id) {
                    changed_sandboxes.insert(c.sandbox_id.clone());
                }
            }
        }
        self.pleg_snapshot = current;
        let uids: Vec<String> =
            self.workers.iter().filter(|(_, w)| w.sandbox.as_ref().is_some_and(|s| changed_sandboxes.contains(s))).map(|(uid, _)| uid.clone()).collect();
        if !uids.is_empty() {
            ctx.note(format!("kubelet/{}", self.setup.name), "PLEG", format!("relist: {} pod(s) changed", uids.len()));
        }
        for uid in uids {
            self.sync(&uid, ctx);
        }
    }

    fn register_node(&mut self, ctx: &mut Ctx) {
        let name = self.setup.name.clone();
        let node_info = kind_info("v1", "Node").expect("nodes are served");
        let existing = ctx.api.get(node_info, "", &name).ok();
        let mut node: Node = match existing.as_deref() {
            Some(Object::Node(n)) => (**n).clone(),
            _ => match self.setup.register.clone() {
                Some(template) => {
                    let created = ctx.create(Object::Node(Box::new(template)));
                    match created {
                        Ok(o) => o.as_node().cloned().expect("created a node"),
                        Err(_) => return,
                    }
                }
                None => return,
            },
        };
        // The kubelet owns spec.podCIDR here (node IPAM simplification, see README).
        let spec = node.spec.get_or_insert_with(NodeSpec::default);
        if spec.pod_cidr.is_none() {
            spec.pod_cidr = Some(self.pod_cidr());
            spec.pod_cidrs = Some(vec![self.pod_cidr()]);
            if let Ok(updated) = ctx.update(Object::Node(Box::new(node.clone()))) {
                node = updated.as_node().cloned().expect("node");
            }
        }
        let status = self.node_status(&node, ctx.now, true);
        let mut with_status = node.clone();
        with_status.status = Some(status.clone());
        let _ = ctx.update_status(Object::Node(Box::new(with_status)));
        self.last_node_status = Some(status);
        self.last_node_status_write = ctx.now;
        ctx.event(&Object::Node(Box::new(node.clone())), "Normal", "Starting", "Starting kubelet.".into());
        ctx.event(&Object::Node(Box::new(node.clone())), "Normal", "NodeReady", format!("Node {name} status is now: NodeReady"));
        // The node Lease.
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some("kube-node-lease".into()),
                owner_references: Some(vec![kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    api_version: "v1".into(),
                    kind: "Node".into(),
                    name: name.clone(),
                    uid: node.metadata.uid.clone().unwrap_or_default(),
                    ..Default::default()
                }]),
                ..Default::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(name.clone()),
                lease_duration_seconds: Some(40),
                renew_time: Some(micro_time_at(ctx.now)),
                ..Default::default()
            }),
        };
        let _ = ctx.create(Object::Lease(Box::new(lease)));
    }

    fn node_status(&self, node: &Node, now: Millis, heartbeat: bool) -> NodeStatus {
        let mut status = node.status.clone().unwrap_or_default();
        if status.allocatable.is_none() {
            status.allocatable = status.capacity.clone();
        }
        let now_time = time_at(now);
        let previous: BTreeMap<String, NodeCondition> = status.conditions.iter().flatten().map(|c| (c.type_.clone(), c.clone())).collect();
        let condition = |type_: &str, value: &str, reason: &str, message: &str| {
            let prev = previous.get(type_);
            let transition = match prev {
                Some(p) if p.status == value => p.last_transition_time.clone(),
                _ => Some(now_time.clone()),
            };
            let heartbeat_time = if heartbeat { Some(now_time.clone()) } else { prev.and_then(|p| p.last_heartbeat_time.clone()) };
            NodeCondition {
                type_: type_.into(),
                status: value.into(),
                reason: Some(reason.into()),
                message: Some(message.into()),
                last_heartbeat_time: heartbeat_time,
                last_transition_time: transition,
            }
        };
        // A Node given with Ready=False stays so (scenario control); otherwise the kubelet is ready.
        let given_not_ready = previous.get("Ready").is_some_and(|c| c.status == "False" && c.reason.as_deref() != Some("KubeletNotReady"));
        status.conditions = Some(vec![
            if self.memory_pressure_at.is_some_and(|at| now.saturating_sub(at) < EVICTION_PRESSURE_TRANSITION_MS) {
                condition("MemoryPressure", "True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available")
            } else {
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available")
            },
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            if given_not_ready { previous["Ready"].clone() } else { condition("Ready", "True", "KubeletReady", "kubelet is posting ready status") },
        ]);
        status.addresses = Some(vec![
            NodeAddress { type_: "InternalIP".into(), address: self.node_ip() },
            NodeAddress { type_: "Hostname".into(), address: self.setup.name.clone() },
        ]);
        status.daemon_endpoints = Some(NodeDaemonEndpoints { kubelet_endpoint: Some(DaemonEndpoint { port: 10250 }) });
        let id = format!("{:032x}", fnv64(&self.setup.name) as u128 * 0x1_0000_0001);
        status.node_info = Some(NodeSystemInfo {
            architecture: node.metadata.labels.as_ref().and_then(|l| l.get("kubernetes.io/arch").cloned()).unwrap_or_else(|| "amd64".into()),
            boot_id: id.clone(),
            container_runtime_version: "containerd://2.1.4".into(),
            kernel_version: "6.8.0-kubesim".into(),
            kube_proxy_version: String::new(),
            kubelet_version: "v1.34.0".into(),
            machine_id: id.clone(),
            operating_system: "linux".into(),
            os_image: "Debian GNU/Linux 12 (bookworm)".into(),
            system_uuid: id,
            ..Default::default()
        });
        let mut images: Vec<ContainerImage> = self
            .runtime
            .list_images()
            .into_iter()
            .map(|i| ContainerImage { names: Some(vec![i.digest_ref.clone(), i.reference.clone()]), size_bytes: Some(i.size as i64) })
            .collect();
        kubesim_api::sort::sort_by(&mut images, |a, b| b.size_bytes.cmp(&a.size_bytes).then(a.names.cmp(&b.names)));
        images.truncate(50);
        status.images = Some(images);
        status
    }

    /// The eviction manager's synchronize (pkg/kubelet/eviction): memory.available = capacity −
    /// working set of running containers; below the hard threshold (100Mi) the node reports
    /// MemoryPressure and one pod is evicted per monitoring interval, ranked by whether its
    /// usage exceeds its request, then priority, then usage above request.
    fn evict_if_under_pressure(&mut self, ctx: &mut Ctx) {
        let Some(Object::Node(node)) = ctx.api.lookup(("", "nodes"), "", &self.setup.name).map(|o| (**o).clone()) else { return };
        let capacity = node
            .status
            .as_ref()
            .and_then(|s| s.capacity.as_ref())
            .and_then(|c| c.get("memory"))
            .and_then(|q| parse_milli(&q.0).ok())
            .map(|m| (m / 1000) as i64)
            .unwrap_or(i64::MAX);
        let mut candidates: Vec<(bool, i32, i64, String, i64, i64, String)> = Vec::new();
        let mut used = 0i64;
        for (uid, worker) in &self.workers {
            if worker.finished || worker.rejected {
                continue;
            }
            let Some((_, memory)) = self.usage(uid) else { continue };
            used += memory;
            let pod = worker.pod();
            let request = (pod_request_milli(pod, "memory") / 1000) as i64;
            let priority = pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0);
            let container = pod.spec.as_ref().and_then(|s| s.containers.first()).map(|c| c.name.clone()).unwrap_or_default();
            candidates.push((memory <= request, priority, -(memory - request), uid.clone(), memory, request, container));
        }
        let available = capacity.saturating_sub(used);
        if available >= EVICTION_MEMORY_AVAILABLE_BYTES {
            return;
        }
        self.memory_pressure_at = Some(ctx.now);
        kubesim_api::sort::sort(&mut candidates);
        let Some((_, _, _, uid, memory, request, container)) = candidates.into_iter().next() else { return };
        let message = format!(
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: {}Ki. Container {container} was using {}Ki, request is {}, has larger consumption of memory. ",
            available.max(0) / 1024,
            memory / 1024,
            if request == 0 { "0".to_string() } else { kubesim_api::quantity::format_bytes(request as i128) }
        );
        let worker = self.workers.get_mut(&uid).expect("candidate exists");
        worker.finished = true;
        let object = worker.pod.clone();
        if let Some(sandbox) = worker.sandbox.clone() {
            let _ = self.runtime.stop_pod_sandbox(&sandbox, ctx.now);
        }
        ctx.event(&object, "Warning", "Evicted", message.clone());
        let mut pod = worker.pod().clone();
        let mut status = self.generate_status(&self.workers[&uid], ctx.now, true);
        status.phase = Some("Failed".into());
        status.reason = Some("Evicted".into());
        status.message = Some(message.clone());
        set_pod_condition(
            status.conditions.get_or_insert_with(Vec::new),
            PodCondition {
                type_: "DisruptionTarget".into(),
                status: "True".into(),
                reason: Some("TerminationByKubelet".into()),
                message: Some(message),
                last_transition_time: Some(time_at(ctx.now)),
                ..Default::default()
            },
        );
        pod.status = Some(status);
        let _ = ctx.update_status(Object::Pod(Box::new(pod)));
        self.mark_runtime_changed(ctx);
    }

    fn heartbeat(&mut self, ctx: &mut Ctx) {
        self.evict_if_under_pressure(ctx);
        let name = self.setup.name.clone();
        // Lease renewal.
        if let Some(Object::Lease(lease)) = ctx.api.lookup(("coordination.k8s.io", "leases"), "kube-node-lease", &name).map(|o| (**o).clone()) {
            let mut lease = *lease;
            if let Some(spec) = lease.spec.as_mut() {
                spec.renew_time = Some(micro_time_at(ctx.now));
            }
            let _ = ctx.update(Object::Lease(Box::new(lease)));
        }
        // Node status: written when it changed, or every nodeStatusReportFrequency.
        let Some(Object::Node(node)) = ctx.api.lookup(("", "nodes"), "", &name).map(|o| (**o).clone()) else { return };
        let fresh = self.node_status(&node, ctx.now, false);
        let changed = self.last_node_status.as_ref().is_none_or(|last| strip_heartbeats(last) != strip_heartbeats(&fresh));
        if changed || ctx.now.saturating_sub(self.last_node_status_write) >= NODE_STATUS_REPORT_MS {
            let status = self.node_status(&node, ctx.now, true);
            let mut updated = *node;
            updated.status = Some(status.clone());
            if ctx.update_status(Object::Node(Box::new(updated))).is_ok() {
                self.last_node_status = Some(status);
                self.last_node_status_write = ctx.now;
            }
        }
    }

    fn admit(&self, pod: &Pod, ctx: &Ctx) -> Result<(), (String, String)> {
        let Some(Object::Node(node)) = ctx.api.lookup(("", "nodes"), "", &self.setup.name).map(|o| (**o).clone()) else { return Ok(()) };
        let allocatable = node.status.as_ref().and_then(|s| s.allocatable.clone()).unwrap_or_default();
        let max_pods = allocatable.get("pods").and_then(|q| parse_milli(&q.0).ok()).map(|m| m / 1000).unwrap_or(110);
        let active: Vec<&PodWorker> = self.workers.values().filter(|w| !w.rejected && !w.finished && !is_terminal(w.pod())).collect();
        if active.len() as i128 >= max_pods {
            return Err(("OutOfpods".into(), format!("Node didn't have enough resource: pods, requested: 1, used: {}, capacity: {}", active.len(), max_pods)));
        }
        for resource in ["cpu", "memory"] {
            let capacity = match allocatable.get(resource).and_then(|q| parse_milli(&q.0).ok()) {
                Some(c) => c,
                None => continue,
            };
            let used: i128 = active.iter().map(|w| pod_request_milli(w.pod(), resource)).sum();
            let requested = pod_request_milli(pod, resource);
            if requested > 0 && used + requested > capacity {
                let unit = |m: i128| if resource == "cpu" { m } else { m / 1000 };
                return Err((
                    format!("OutOf{resource}"),
                    format!("Node didn't have enough resource: {resource}, requested: {}, used: {}, capacity: {}", unit(requested), unit(used), unit(capacity)),
                ));
            }
        }
        Ok(())
    }

    fn on_pod_event(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        let Some(pod) = event.object.as_pod() else { return };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        match event.event_type {
            EventType::Deleted => {
                // Force deletion (or our own final delete): tear everything down now.
                if let Some(worker) = self.workers.remove(&uid) {
                    if let Some(sandbox) = worker.sandbox.clone() {
                        let _ = self.runtime.stop_pod_sandbox(&sandbox, ctx.now);
                        let _ = self.runtime.remove_pod_sandbox(&sandbox);
                        let pod_ref = format!("{}/{}", pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default());
                        self.note_cri(ctx, CriCall::RemovePodSandbox, pod_ref);
                    }
                    self.seq_to_uid.remove(&worker.seq);
                }
            }
            _ => {
                if !self.workers.contains_key(&uid) {
                    if is_terminal(pod) {
                        return;
                    }
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    self.seq_to_uid.insert(seq, uid.clone());
                    let mut worker = PodWorker {
                        seq,
                        pod: event.object.clone(),
                        sandbox: None,
                        ip: None,
                        busy: None,
                        resync: false,
                        rejected: false,
                        start_time: None,
                        instances: BTreeMap::new(),
                        waiting: BTreeMap::new(),
                        restart_backoff: BTreeMap::new(),
                        pull_backoff: BTreeMap::new(),
                        stop_requested: BTreeSet::new(),
                        retry_at: None,
                        finished: false,
                        last_status: None,
                    };
                    if let Err((reason, message)) = self.admit(pod, ctx) {
                        worker.rejected = true;
                        let mut rejected = pod.clone();
                        let status = rejected.status.get_or_insert_with(Default::default);
                        status.phase = Some("Failed".into());
                        status.reason = Some(reason.clone());
                        status.message = Some(format!("Pod was rejected: {message}"));
                        let _ = ctx.update_status(Object::Pod(Box::new(rejected)));
                        ctx.event(&event.object, "Warning", &reason, message);
                    }
                    self.workers.insert(uid.clone(), worker);
                } else if let Some(worker) = self.workers.get_mut(&uid) {
                    // The pod config source ignores status-only updates (config.go checkAndUpdatePod).
                    let old = worker.pod().clone();
                    worker.pod = event.object.clone();
                    let changed = old.spec != pod.spec
                        || old.metadata.labels != pod.metadata.labels
                        || old.metadata.annotations != pod.metadata.annotations
                        || old.metadata.deletion_timestamp != pod.metadata.deletion_timestamp;
                    if !changed {
                        return;
                    }
                }
                self.schedule_dispatch(&uid, ctx);
            }
        }
    }

    /// Runs one pod sync: status write, then the next CRI calls.
    fn sync(&mut self, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get_mut(uid) else { return };
        if worker.finished || worker.rejected {
            return;
        }
        if worker.busy.is_some() {
            worker.resync = true;
            return;
        }
        if worker.start_time.is_none() {
            worker.start_time = Some(ctx.now);
        }
        if worker.pod().metadata.deletion_timestamp.is_some() {
            self.terminate(uid, ctx);
            return;
        }
        self.write_status(uid, ctx, false);
        self.continue_sync(uid, ctx);
    }

    /// Chooses and starts the next CRI call of a sync (computePodActions), if any.
    fn continue_sync(&mut self, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get(uid) else { return };
        if worker.finished || worker.busy.is_some() {
            return;
        }
        if worker.pod().metadata.deletion_timestamp.is_some() {
            self.terminate(uid, ctx);
            return;
        }
        let sandbox_ready = worker.sandbox.as_ref().and_then(|s| self.runtime.pod_sandbox_status(s).ok()).is_some_and(|s| s.state == SandboxState::Ready);
        if !sandbox_ready {
            self.begin(uid, Step::RunSandbox, latency_ms(CriCall::RunPodSandbox), ctx);
            return;
        }
        let pod = worker.pod().clone();
        let spec = pod.spec.clone().unwrap_or_default();
        let policy = spec.restart_policy.clone().unwrap_or_else(|| "Always".into());
        // Init containers strictly in order; sidecars (restartPolicy Always) keep running.
        for container in spec.init_containers.iter().flatten() {
            let sidecar = container.restart_policy.as_deref() == Some("Always");
            match self.latest_state(uid, &container.name) {
                None => {
                    self.start_container(uid, container, ctx);
                    return;
                }
                Some((ContainerState::Running, _)) if sidecar => continue,
                Some((ContainerState::Running, _)) | Some((ContainerState::Created, _)) => return,
                Some((ContainerState::Exited, code)) => {
                    if sidecar || (code != Some(0) && policy != "Never") {
                        if self.restart_if_due(uid, container, ctx) {
                            return;
                        }
                        if !sidecar {
                            return;
                        }
                    } else if code != Some(0) {
                        return; // restartPolicy Never: the pod fails
                    }
                }
            }
        }
        for container in &spec.containers {
            match self.latest_state(uid, &container.name) {
                None => {
                    if self.start_container(uid, container, ctx) {
                        return;
                    }
                }
                Some((ContainerState::Exited, code)) => {
                    let restart = match policy.as_str() {
                        "Always" => true,
                        "OnFailure" => code != Some(0),
                        _ => false,
                    };
                    if restart && self.restart_if_due(uid, container, ctx) {
                        return;
                    }
                }
                _ => {}
            }
        }
        // Nothing to do: the sync is over.
        if let Some(worker) = self.workers.get_mut(uid) {
            if worker.resync {
                worker.resync = false;
                self.sync(uid, ctx);
            }
        }
    }

    fn latest_state(&self, uid: &str, name: &str) -> Option<(ContainerState, Option<i32>)> {
        let id = self.workers.get(uid)?.instances.get(name)?.last()?;
        let c = self.runtime.container_status(id).ok()?;
        Some((c.state, c.exit_code))
    }

    /// Restarts an exited container unless its restart backoff is running (CrashLoopBackOff),
    /// as kuberuntime's doBackOff: the window is measured from the container's finishedAt.
    fn restart_if_due(&mut self, uid: &str, container: &Container, ctx: &mut Ctx) -> bool {
        let finished = self.workers[uid]
            .instances
            .get(&container.name)
            .and_then(|ids| ids.last())
            .and_then(|id| self.runtime.container_status(id).ok())
            .and_then(|c| c.finished_at)
            .unwrap_or(ctx.now);
        let worker = self.workers.get_mut(uid).expect("worker exists");
        let backoff = worker.restart_backoff.entry(container.name.clone()).or_default().clone();
        if backoff.in_backoff_since(finished, ctx.now) {
            let pod = worker.pod().clone();
            let (name, namespace, pod_uid) = (
                pod.metadata.name.clone().unwrap_or_default(),
                pod.metadata.namespace.clone().unwrap_or_default(),
                pod.metadata.uid.clone().unwrap_or_default(),
            );
            let message = format!(
                "back-off {} restarting failed container={} pod={name}_{namespace}({pod_uid})",
                format_go_duration(backoff.duration_ms).replace("300s", "5m0s"),
                container.name
            );
            worker.waiting.insert(container.name.clone(), ("CrashLoopBackOff".into(), message));
            let object = worker.pod.clone();
            ctx.event(&object, "Warning", "BackOff", format!("Back-off restarting failed container {} in pod {name}_{namespace}({pod_uid})", container.name));
            self.write_status(uid, ctx, false);
            self.requeue_after_error(uid, ctx);
            return false;
        }
        worker.restart_backoff.get_mut(&container.name).expect("inserted above").next(finished);
        self.start_container(uid, container, ctx)
    }

    /// Starts the image/create/start chain for a container. Returns whether a call is in flight.
    fn start_container(&mut self, uid: &str, container: &Container, ctx: &mut Ctx) -> bool {
        let image = container.image.clone().unwrap_or_default();
        let policy = container.image_pull_policy.clone().unwrap_or_else(|| kubesim_api::defaults::default_image_pull_policy(&image).to_string());
        let present = self.runtime.image_status(&image).is_some();
        let worker = self.workers.get_mut(uid).expect("worker exists");
        let object = worker.pod.clone();
        match (policy.as_str(), present) {
            ("Never", false) => {
                let message = format!("Container image {image:?} is not present with pull policy of Never");
                worker.waiting.insert(container.name.clone(), ("ErrImageNeverPull".into(), message.clone()));
                ctx.event(&object, "Warning", "ErrImageNeverPull", message);
                self.write_status(uid, ctx, false);
                self.requeue_after_error(uid, ctx);
                false
            }
            ("IfNotPresent", true) | ("Never", true) => {
                ctx.event(&object, "Normal", "Pulled", format!("Container image {image:?} already present on machine"));
                self.begin(uid, Step::Create { container: container.name.clone() }, latency_ms(CriCall::CreateContainer), ctx);
                true
            }
            _ => {
                let backoff = worker.pull_backoff.entry(image.clone()).or_default().clone();
                if backoff.in_backoff_since(backoff.last_update, ctx.now) {
                    let message = format!("Back-off pulling image {image:?}");
                    worker.waiting.insert(container.name.clone(), ("ImagePullBackOff".into(), message.clone()));
                    ctx.event(&object, "Normal", "BackOff", message);
                    self.write_status(uid, ctx, false);
                    self.requeue_after_error(uid, ctx);
                    return false;
                }
                ctx.event(&object, "Normal", "Pulling", format!("Pulling image {image:?}"));
                self.load_image_catalogue(ctx);
                let bytes = if present || crate::cri::image_unresolvable(&image) { 0 } else { self.runtime.image_size(&image) };
                self.begin(uid, Step::Pull { container: container.name.clone(), image, started: ctx.now }, latency_ms(CriCall::PullImage(bytes)), ctx);
                true
            }
        }
    }

    /// Scenario overrides of the image catalogue: a ConfigMap `kubesim-images` in kube-system
    /// with key `sizes` (lines of `IMAGE BYTES`, image references or base names) and key
    /// `missing` (references the registry does not have, comma- or line-separated).
    fn load_image_catalogue(&mut self, ctx: &Ctx) {
        let Some(Object::ConfigMap(cm)) = ctx.api.lookup(("", "configmaps"), "kube-system", IMAGE_CATALOGUE_CONFIGMAP).map(|o| o.as_ref()) else { return };
        let data = cm.data.clone().unwrap_or_default();
        if let Some(missing) = data.get("missing") {
            self.runtime.missing_images = missing.split([',', '\n']).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
        }
        for line in data.get("sizes").map(String::as_str).unwrap_or("").lines() {
            let mut words = line.split_whitespace();
            if let (Some(image), Some(size)) = (words.next(), words.next().and_then(|w| w.parse::<u64>().ok())) {
                self.runtime.image_sizes.insert(image.to_string(), size);
            }
        }
    }

    /// Requeues a pod whose sync ended in an error, after 10–15 s (wait.Jitter(10s, 0.5)).
    fn requeue_after_error(&mut self, uid: &str, ctx: &mut Ctx) {
        let jitter = ctx.rng.next_u64() % (WORKER_BACKOFF_MS / 2);
        let Some(worker) = self.workers.get_mut(uid) else { return };
        if worker.retry_at.is_some_and(|at| at > ctx.now) {
            return;
        }
        let at = ctx.now + WORKER_BACKOFF_MS + jitter;
        worker.retry_at = Some(at);
        ctx.after(at - ctx.now, T_RETRY | worker.seq);
    }

    fn begin(&mut self, uid: &str, step: Step, latency: Millis, ctx: &mut Ctx) {
        let worker = self.workers.get_mut(uid).expect("worker exists");
        worker.busy = Some(step);
        ctx.after(latency, T_STEP | worker.seq);
    }

    /// A CRI call's latency has elapsed: perform it and continue the sync.
    fn complete_step(&mut self, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get_mut(uid) else { return };
        let Some(step) = worker.busy.take() else { return };
        let object = worker.pod.clone();
        let pod = worker.pod().clone();
        let pod_ref = format!("{}/{}", pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default());
        let spec = pod.spec.clone().unwrap_or_default();
        let find_container = |name: &str| spec.init_containers.iter().flatten().chain(spec.containers.iter()).find(|c| c.name == name).cloned();
        match step {
            Step::RunSandbox => {
                let ip = if spec.host_network == Some(true) {
                    self.node_ip()
                } else {
                    let ip = format!("10.244.{}.{}", self.setup.index, self.next_ip);
                    self.next_ip = if self.next_ip >= 254 { 2 } else { self.next_ip + 1 };
                    ip
                };
                let id = random_id(ctx);
                let _ = self.runtime.run_pod_sandbox(&pod.metadata.uid.clone().unwrap_or_default(), &ip, id.clone(), ctx.now);
                self.note_cri(ctx, CriCall::RunPodSandbox, format!("{pod_ref} ip={ip}"));
                let worker = self.workers.get_mut(uid).expect("worker exists");
                worker.sandbox = Some(id);
                worker.ip = Some(ip);
                self.mark_runtime_changed(ctx);
            }
            Step::Pull { container, image, started } => {
                self.note_cri(ctx, CriCall::PullImage(0), format!("{image}"));
                match self.runtime.pull_image(&image) {
                    Ok(_) => {
                        let took = ctx.now - started;
                        let size = self.runtime.image_status(&image).map_or(0, |i| i.size);
                        let secs = format_go_duration(took);
                        ctx.event(
                            &object,
                            "Normal",
                            "Pulled",
                            format!("Successfully pulled image {image:?} in {secs} ({secs} including waiting). Image size: {size} bytes."),
                        );
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.pull_backoff.remove(&image);
                        worker.busy = Some(Step::Create { container });
                        let seq = worker.seq;
                        ctx.after(latency_ms(CriCall::CreateContainer), T_STEP | seq);
                        return;
                    }
                    Err(err) => {
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.pull_backoff.entry(image.clone()).or_default().next(ctx.now);
                        let message = format!("Failed to pull image {image:?}: {}", err.0);
                        worker.waiting.insert(container.clone(), ("ErrImagePull".into(), message.clone()));
                        ctx.event(&object, "Warning", "Failed", message);
                        ctx.event(&object, "Warning", "Failed", "Error: ErrImagePull".into());
                        self.write_status(uid, ctx, false);
                        self.requeue_after_error(uid, ctx);
                        return; // SyncPod returns the pull error; the worker retries later
                    }
                }
            }
            Step::Create { container } => {
                let Some(spec_container) = find_container(&container) else { return };
                let env = match container_env(&pod, &spec_container, ctx.api.store()) {
                    Ok(env) => env,
                    Err(message) => {
                        // generateContainerConfig failed: CreateContainerConfigError, retried later.
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.waiting.insert(container.clone(), ("CreateContainerConfigError".into(), message.clone()));
                        ctx.event(&object, "Warning", "Failed", format!("Error: {message}"));
                        self.write_status(uid, ctx, false);
                        self.requeue_after_error(uid, ctx);
                        return;
                    }
                };
                let files = match volume_files(&pod, &spec_container, ctx.api.store()) {
                    Ok(files) => files,
                    Err(message) => {
                        // MountVolume.SetUp failed: the pod stays ContainerCreating and retries.
                        ctx.event(&object, "Warning", "FailedMount", message);
                        self.requeue_after_error(uid, ctx);
                        return;
                    }
                };
                let program = program_with_files(
                    spec_container.image.as_deref().unwrap_or(""),
                    spec_container.command.as_deref().unwrap_or(&[]),
                    spec_container.args.as_deref().unwrap_or(&[]),
                    &env,
                    &files,
                    EPOCH_UNIX_SECONDS + (ctx.now / 1000) as i64,
                );
                let memory_limit = spec_container
                    .resources
                    .as_ref()
                    .and_then(|r| r.limits.as_ref())
                    .and_then(|l| l.get("memory"))
                    .and_then(|q| parse_milli(&q.0).ok())
                    .map(|m| (m / 1000) as i64);
                let usage = container_usage(&pod, &program);
                let config = ContainerConfig { name: container.clone(), image: spec_container.image.clone().unwrap_or_default(), program, memory_limit, usage };
                let id = random_id(ctx);
                let sandbox = self.workers[uid].sandbox.clone().unwrap_or_default();
                match self.runtime.create_container(&sandbox, config, id.clone(), ctx.now) {
                    Ok(_) => {
                        self.note_cri(ctx, CriCall::CreateContainer, format!("{pod_ref} {container}"));
                        ctx.event(&object, "Normal", "Created", format!("Created container: {container}"));
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.waiting.remove(&container);
                        worker.busy = Some(Step::Start { container, id });
                        let seq = worker.seq;
                        ctx.after(latency_ms(CriCall::StartContainer), T_STEP | seq);
                        return;
                    }
                    Err(err) => {
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.waiting.insert(container.clone(), ("CreateContainerError".into(), err.0.clone()));
                        ctx.event(&object, "Warning", "Failed", format!("Error: {}", err.0));
                        self.write_status(uid, ctx, false);
                        self.requeue_after_error(uid, ctx);
                        return;
                    }
                }
            }
            Step::Start { container, id } => {
                let _ = self.runtime.start_container(&id, ctx.now);
                self.note_cri(ctx, CriCall::StartContainer, format!("{pod_ref} {container}"));
                ctx.event(&object, "Normal", "Started", format!("Started container {container}"));
                let worker = self.workers.get_mut(uid).expect("worker exists");
                let instances = worker.instances.entry(container.clone()).or_default();
                instances.push(id.clone());
                self.add_probes(uid, &container, &id, ctx);
                self.mark_runtime_changed(ctx);
            }
            Step::StopSandbox => {
                if let Some(sandbox) = self.workers[uid].sandbox.clone() {
                    let _ = self.runtime.stop_pod_sandbox(&sandbox, ctx.now);
                    self.note_cri(ctx, CriCall::StopPodSandbox, pod_ref);
                }
                self.terminate(uid, ctx);
                return;
            }
        }
        self.continue_sync(uid, ctx);
    }

    /// Graceful termination: SIGTERM every container with the grace period, wait for them,
    /// stop the sandbox, write the final status, then delete the pod with grace 0.
    fn terminate(&mut self, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get(uid) else { return };
        if worker.busy.is_some() || worker.finished {
            return;
        }
        let pod = worker.pod().clone();
        let grace_ms = pod.metadata.deletion_grace_period_seconds.unwrap_or(30).max(0) as u64 * 1000;
        let running: Vec<(String, String)> = worker
            .instances
            .iter()
            .filter_map(|(name, ids)| ids.last().map(|id| (name.clone(), id.clone())))
            .filter(|(_, id)| self.runtime.container_status(id).is_ok_and(|c| c.state == ContainerState::Running))
            .collect();
        let mut any_new = false;
        for (name, id) in &running {
            if self.workers[uid].stop_requested.contains(id) {
                continue;
            }
            any_new = true;
            let object = self.workers[uid].pod.clone();
            ctx.event(&object, "Normal", "Killing", format!("Stopping container {name}"));
            // The preStop hook runs first and counts against the grace period.
            let hook_ms = pod
                .spec
                .as_ref()
                .and_then(|s| s.containers.iter().chain(s.init_containers.iter().flatten()).find(|c| &c.name == name))
                .and_then(|c| c.lifecycle.as_ref())
                .and_then(|l| l.pre_stop.as_ref())
                .map(|hook| prestop_duration_ms(hook, grace_ms))
                .unwrap_or(0);
            if hook_ms > 0 {
                ctx.note(format!("cri/{}", self.setup.name), "ExecSync", format!("preStop hook {name}: {} ms", hook_ms));
            }
            let _ = self.runtime.stop_container_after(id, hook_ms.min(grace_ms), grace_ms, ctx.now);
            self.note_cri(
                ctx,
                CriCall::StopContainer,
                format!(
                    "{}/{} {name} timeout={}s",
                    pod.metadata.namespace.clone().unwrap_or_default(),
                    pod.metadata.name.clone().unwrap_or_default(),
                    grace_ms / 1000
                ),
            );
            self.workers.get_mut(uid).expect("worker").stop_requested.insert(id.clone());
        }
        if any_new {
            self.mark_runtime_changed(ctx);
        }
        let still_running = running.iter().any(|(_, id)| self.runtime.container_status(id).is_ok_and(|c| c.state == ContainerState::Running));
        if still_running {
            return; // PLEG brings us back when they exit
        }
        let sandbox_ready =
            self.workers[uid].sandbox.as_ref().and_then(|s| self.runtime.pod_sandbox_status(s).ok()).is_some_and(|s| s.state == SandboxState::Ready);
        if sandbox_ready {
            self.begin(uid, Step::StopSandbox, latency_ms(CriCall::StopPodSandbox), ctx);
            return;
        }
        // Final status, then the deletion with grace 0 (the status manager's canBeDeleted path).
        self.write_status(uid, ctx, true);
        let worker = self.workers.get_mut(uid).expect("worker");
        worker.finished = true;
        let name = pod.metadata.name.clone().unwrap_or_default();
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let info = kind_info("v1", "Pod").expect("pods are served");
        let _ = ctx.delete(info, &namespace, &name, DeleteOptions { grace_period_seconds: Some(0), ..Default::default() });
    }

    fn write_status(&mut self, uid: &str, ctx: &mut Ctx, terminal: bool) {
        let Some(worker) = self.workers.get(uid) else { return };
        let status = self.generate_status(worker, ctx.now, terminal);
        if worker.last_status.as_deref() == Some(&status) {
            return;
        }
        let mut pod = worker.pod().clone();
        pod.status = Some(status.clone());
        let result = ctx.update_status(Object::Pod(Box::new(pod)));
        if let Ok(updated) = result {
            let worker = self.workers.get_mut(uid).expect("worker");
            worker.last_status = Some(Arc::new(status));
            worker.pod = updated;
        }
    }

    fn container_status(&self, worker: &PodWorker, container: &Container, pending_init: bool, now: Millis) -> ContainerStatus {
        let ids = worker.instances.get(&container.name).cloned().unwrap_or_default();
        let image = container.image.clone().unwrap_or_default();
        let runtime_container = |id: &String| self.runtime.container_status(id).ok();
        let terminated_of = |c: &crate::cri::Container| ContainerStateTerminated {
            container_id: Some(format!("containerd://{}", c.id)),
            exit_code: c.exit_code.unwrap_or(0),
            reason: c.reason.clone(),
            started_at: c.started_at.map(time_at),
            finished_at: c.finished_at.map(time_at),
            ..Default::default()
        };
        let latest = ids.last().and_then(runtime_container);
        let previous = if ids.len() >= 2 { runtime_container(&ids[ids.len() - 2]) } else { None };
        let waiting = worker.waiting.get(&container.name).cloned();
        let mut last_state = previous.map(|p| ApiContainerState { terminated: Some(terminated_of(p)), ..Default::default() });
        let state = match latest {
            Some(c) if c.state == ContainerState::Running => {
                ApiContainerState { running: Some(ContainerStateRunning { started_at: c.started_at.map(time_at) }), ..Default::default() }
            }
            Some(c) if c.state == ContainerState::Exited => match waiting {
                Some((reason, message)) if reason == "CrashLoopBackOff" => {
                    last_state = Some(ApiContainerState { terminated: Some(terminated_of(c)), ..Default::default() });
                    ApiContainerState { waiting: Some(ContainerStateWaiting { reason: Some(reason), message: Some(message) }), ..Default::default() }
                }
                _ => ApiContainerState { terminated: Some(terminated_of(c)), ..Default::default() },
            },
            _ => {
                let (reason, message) =
                    waiting.unwrap_or_else(|| ((if pending_init { "PodInitializing" } else { "ContainerCreating" }).to_string(), String::new()));
                ApiContainerState {
                    waiting: Some(ContainerStateWaiting { reason: Some(reason), message: Some(message).filter(|m| !m.is_empty()) }),
                    ..Default::default()
                }
            }
        };
        let running = state.running.is_some();
        let _ = now;
        let uid = worker.pod().metadata.uid.clone().unwrap_or_default();
        let result = |kind: ProbeKind| self.probe_results.get(&(uid.clone(), container.name.clone(), kind)).copied();
        let started = running && (container.startup_probe.is_none() || result(ProbeKind::Startup) == Some(true));
        let ready = started && (container.readiness_probe.is_none() || result(ProbeKind::Readiness) == Some(true));
        let pulled = self.runtime.image_status(&image).is_some() && latest.is_some();
        ContainerStatus {
            name: container.name.clone(),
            image: if pulled { normalize_image(&image) } else { image.clone() },
            image_id: if pulled { digest_ref(&image) } else { String::new() },
            container_id: latest.map(|c| format!("containerd://{}", c.id)),
            ready,
            started: Some(started),
            restart_count: (ids.len() as i32 - 1).max(0),
            state: Some(state),
            last_state: Some(last_state.unwrap_or_default()),
            ..Default::default()
        }
    }

    fn generate_status(&self, worker: &PodWorker, now: Millis, terminal: bool) -> PodStatus {
        let pod = worker.pod();
        let spec = pod.spec.clone().unwrap_or_default();
        let mut status = pod.status.clone().unwrap_or_default();
        let node_ip = self.node_ip();
        status.host_ip = Some(node_ip.clone());
        status.host_ips = Some(vec![HostIP { ip: node_ip }]);
        if let Some(ip) = &worker.ip {
            status.pod_ip = Some(ip.clone());
            status.pod_ips = Some(vec![PodIP { ip: ip.clone() }]);
        }
        if status.start_time.is_none() {
            status.start_time = worker.start_time.map(time_at);
        }
        // Init containers first.
        let mut init_statuses = Vec::new();
        let mut init_done = true;
        for c in spec.init_containers.iter().flatten() {
            let s = self.container_status(worker, c, false, now);
            let sidecar = c.restart_policy.as_deref() == Some("Always");
            let complete =
                if sidecar { s.started == Some(true) } else { s.state.as_ref().and_then(|st| st.terminated.as_ref()).is_some_and(|t| t.exit_code == 0) };
            if !complete {
                init_done = false;
            }
            init_statuses.push(s);
        }
        let statuses: Vec<ContainerStatus> = spec.containers.iter().map(|c| self.container_status(worker, c, !init_done, now)).collect();
        let previous_phase = status.phase.clone().unwrap_or_default();
        let phase = if previous_phase == "Failed" || previous_phase == "Succeeded" {
            previous_phase
        } else {
            get_phase(&spec, &init_statuses, &statuses, terminal).to_string()
        };
        status.phase = Some(phase.clone());
        status.init_container_statuses = if init_statuses.is_empty() { None } else { Some(init_statuses.clone()) };
        // Conditions (status/generate.go), in the kubelet's order.
        let now_time = time_at(now);
        let mut conditions = status.conditions.clone().unwrap_or_default();
        let sandbox_ready = worker.sandbox.as_ref().and_then(|s| self.runtime.pod_sandbox_status(s).ok()).is_some_and(|s| s.state == SandboxState::Ready);
        let cond = |type_: &str, ok: bool, reason: Option<&str>, message: Option<String>| PodCondition {
            type_: type_.into(),
            status: if ok { "True" } else { "False" }.into(),
            reason: reason.map(str::to_string),
            message,
            last_transition_time: Some(now_time.clone()),
            ..Default::default()
        };
        set_pod_condition(&mut conditions, cond("PodReadyToStartContainers", sandbox_ready, None, None));
        let any_regular_started =
            statuses.iter().any(|s| s.state.as_ref().is_some_and(|st| st.running.is_some() || st.terminated.is_some()) || s.restart_count > 0);
        let initialized = phase == "Succeeded" || any_regular_started || init_done;
        let incomplete: Vec<String> = spec
            .init_containers
            .iter()
            .flatten()
            .zip(init_statuses.iter())
            .filter(|(c, s)| {
                if c.restart_policy.as_deref() == Some("Always") {
                    s.started != Some(true)
                } else {
                    !s.state.as_ref().and_then(|st| st.terminated.as_ref()).is_some_and(|t| t.exit_code == 0)
                }
            })
            .map(|(c, _)| c.name.clone())
            .collect();
        set_pod_condition(
            &mut conditions,
            if initialized {
                cond("Initialized", true, if phase == "Succeeded" { Some("PodCompleted") } else { None }, None)
            } else {
                cond("Initialized", false, Some("ContainersNotInitialized"), Some(format!("containers with incomplete status: [{}]", incomplete.join(" "))))
            },
        );
        let unready: Vec<String> = init_statuses
            .iter()
            .zip(spec.init_containers.iter().flatten())
            .filter(|(s, c)| c.restart_policy.as_deref() == Some("Always") && !s.ready)
            .map(|(s, _)| s.name.clone())
            .chain(statuses.iter().filter(|s| !s.ready).map(|s| s.name.clone()))
            .collect();
        let containers_ready = match phase.as_str() {
            "Succeeded" => cond("ContainersReady", false, Some("PodCompleted"), None),
            "Failed" => cond("ContainersReady", false, Some("PodFailed"), None),
            _ if !unready.is_empty() => {
                cond("ContainersReady", false, Some("ContainersNotReady"), Some(format!("containers with unready status: [{}]", unready.join(" "))))
            }
            _ => cond("ContainersReady", true, None, None),
        };
        let mut ready = containers_ready.clone();
        ready.type_ = "Ready".into();
        set_pod_condition(&mut conditions, ready);
        set_pod_condition(&mut conditions, containers_ready);
        // Order as the kubelet writes them; PodScheduled (from the scheduler) last.
        let order = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"];
        kubesim_api::sort::sort_by_key(&mut conditions, |c| order.iter().position(|o| *o == c.type_).unwrap_or(order.len()));
        status.conditions = Some(conditions);
        status.container_statuses = Some(statuses);
        status
    }

    /// Starts the probe workers of a container that just started (prober_manager AddPod).
    fn add_probes(&mut self, uid: &str, container: &str, container_id: &str, ctx: &mut Ctx) {
        let Some(spec) = self.workers.get(uid).and_then(|w| w.pod().spec.clone()) else { return };
        let Some(c) = spec.init_containers.iter().flatten().chain(spec.containers.iter()).find(|c| c.name == container).cloned() else { return };
        for kind in [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness] {
            let Some(probe) = kind.of(&c) else { continue };
            self.probe_results.remove(&(uid.to_string(), container.to_string(), kind));
            let seq = self.next_probe_seq;
            self.next_probe_seq += 1;
            self.probes.insert(
                seq,
                ProbeWorker { uid: uid.to_string(), container: container.to_string(), container_id: container_id.to_string(), kind, successes: 0, failures: 0 },
            );
            // Probes tick every period from the container's start; ticks before
            // initialDelaySeconds are skipped (worker.go doProbe).
            let period = probe.period_seconds.unwrap_or(10).max(1) as u64 * 1000;
            let delay = probe.initial_delay_seconds.unwrap_or(0).max(0) as u64 * 1000;
            let first = delay.div_ceil(period) * period;
            ctx.after(first, T_PROBE | seq);
        }
    }

    /// One probe tick: run the handler, apply the thresholds, act (restart or readiness).
    fn probe_tick(&mut self, seq: u64, ctx: &mut Ctx) {
        let Some(mut probe_worker) = self.probes.get(&seq).cloned() else { return };
        let Some(worker) = self.workers.get(&probe_worker.uid) else {
            self.probes.remove(&seq);
            return;
        };
        if !self.alive {
            return;
        }
        let pod = worker.pod().clone();
        let object = worker.pod.clone();
        let pod_ip = worker.ip.clone().unwrap_or_default();
        let latest = worker.instances.get(&probe_worker.container).and_then(|ids| ids.last()).cloned();
        let key = (probe_worker.uid.clone(), probe_worker.container.clone(), probe_worker.kind);
        // The container this worker probes is gone or stopped: the worker ends.
        let running = latest.as_deref() == Some(probe_worker.container_id.as_str())
            && self.runtime.container_status(&probe_worker.container_id).is_ok_and(|c| c.state == ContainerState::Running)
            && pod.metadata.deletion_timestamp.is_none();
        if !running {
            self.probes.remove(&seq);
            return;
        }
        if self.runtime.advance(ctx.now) {
            self.mark_runtime_changed(ctx);
        }
        let spec = pod.spec.clone().unwrap_or_default();
        let Some(container) = spec.init_containers.iter().flatten().chain(spec.containers.iter()).find(|c| c.name == probe_worker.container).cloned() else {
            return;
        };
        let Some(probe) = probe_worker.kind.of(&container).cloned() else { return };
        let period = probe.period_seconds.unwrap_or(10).max(1) as u64 * 1000;
        // Liveness and readiness wait for the startup probe to succeed.
        let startup_pending = container.startup_probe.is_some()
            && probe_worker.kind != ProbeKind::Startup
            && self.probe_results.get(&(key.0.clone(), key.1.clone(), ProbeKind::Startup)) != Some(&true);
        if startup_pending {
            ctx.after(period, T_PROBE | seq);
            return;
        }
        let result = run_probe(&probe, &container, &probe_worker.container_id, &mut self.runtime, &pod_ip, ctx.now);
        ctx.note(
            format!("cri/{}", self.setup.name),
            "ExecSync",
            format!(
                "{} probe {}/{} {}: {}",
                probe_worker.kind.label(),
                pod.metadata.namespace.clone().unwrap_or_default(),
                pod.metadata.name.clone().unwrap_or_default(),
                probe_worker.container,
                if result.success { "success" } else { "failure" }
            ),
        );
        if result.success {
            probe_worker.successes += 1;
            probe_worker.failures = 0;
        } else {
            probe_worker.failures += 1;
            probe_worker.successes = 0;
            ctx.event(&object, "Warning", "Unhealthy", format!("{} probe failed: {}", probe_worker.kind.label(), result.output));
        }
        let success_threshold = probe.success_threshold.unwrap_or(1).max(1);
        let failure_threshold = probe.failure_threshold.unwrap_or(3).max(1);
        let previous = self.probe_results.get(&key).copied();
        let mut new_result = previous;
        if probe_worker.successes >= success_threshold {
            new_result = Some(true);
        } else if probe_worker.failures >= failure_threshold {
            new_result = Some(false);
        }
        let mut steady = result.success && probe_worker.failures == 0;
        if new_result == Some(false) && probe_worker.kind != ProbeKind::Readiness {
            // Liveness / startup failure: kill the container; restartPolicy decides the rest.
            let grace = probe.termination_grace_period_seconds.or(spec.termination_grace_period_seconds).unwrap_or(30).max(0) as u64 * 1000;
            ctx.event(
                &object,
                "Normal",
                "Killing",
                format!("Container {} failed {} probe, will be restarted", probe_worker.container, probe_worker.kind.label().to_ascii_lowercase()),
            );
            let _ = self.runtime.stop_container(&probe_worker.container_id, grace, ctx.now);
            ctx.note(
                format!("cri/{}", self.setup.name),
                "StopContainer",
                format!(
                    "{}/{} {} timeout={}s",
                    pod.metadata.namespace.clone().unwrap_or_default(),
                    pod.metadata.name.clone().unwrap_or_default(),
                    probe_worker.container,
                    grace / 1000
                ),
            );
            self.mark_runtime_changed(ctx);
            self.probes.remove(&seq);
            self.probe_results.insert(key, false);
            return;
        }
        if new_result != previous {
            if let Some(r) = new_result {
                self.probe_results.insert(key.clone(), r);
            }
            // A readiness or startup transition changes the pod status: resync.
            let uid = key.0.clone();
            self.schedule_dispatch(&uid, ctx);
            steady = false;
        }
        self.probes.insert(seq, probe_worker);
        // Steady successes are housekeeping; anything that may still change is real work.
        if steady {
            ctx.after_periodic(period, T_PROBE | seq);
        } else {
            ctx.after(period, T_PROBE | seq);
        }
    }

    fn on_dispatch(&mut self, ctx: &mut Ctx) {
        self.dispatch_scheduled = false;
        let pending = std::mem::take(&mut self.dispatch_pending);
        for uid in pending {
            self.sync(&uid, ctx);
        }
    }
}

fn random_id(ctx: &mut Ctx) -> String {
    let mut bytes = [0u8; 32];
    ctx.rng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn fnv64(text: &str) -> u64 {
    kubesim_api::hash::fnv64a(text.as_bytes())
}

/// Go's time.Duration.String for the Pulled event ("1.802s", "543ms").
pub fn format_go_duration(ms: Millis) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{}s", s.trim_end_matches('0'))
    }
}

fn strip_heartbeats(status: &NodeStatus) -> NodeStatus {
    let mut s = status.clone();
    for c in s.conditions.iter_mut().flatten() {
        c.last_heartbeat_time = None;
    }
    s
}

fn is_terminal(pod: &Pod) -> bool {
    matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded") | Some("Failed"))
}

/// A pod's request for a resource in milli-units (upstream `resourcehelper.PodRequests`: init
/// containers, sidecars, pod-level resources and overhead, as the scheduler computes it).
pub fn pod_request_milli(pod: &Pod, resource: &str) -> i128 {
    let requests = kubesim_api::resources::pod_requests(pod).requests;
    let value = requests.get(resource) as i128;
    if resource == kubesim_api::resources::CPU {
        value
    } else {
        value * 1000
    }
}

/// The files a container's volume mounts show (ConfigMap, Secret, downward API), keyed by
/// absolute path. A missing ConfigMap or Secret that is not optional fails the mount with the
/// kubelet's message.
fn volume_files(pod: &Pod, container: &Container, store: &kubesim_store::Store) -> Result<BTreeMap<String, String>, String> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let mut files = BTreeMap::new();
    let volumes = pod.spec.as_ref().and_then(|s| s.volumes.clone()).unwrap_or_default();
    for mount in container.volume_mounts.iter().flatten() {
        let Some(volume) = volumes.iter().find(|v| v.name == mount.name) else { continue };
        let base = mount.mount_path.trim_end_matches('/').to_string();
        let mut put = |data: BTreeMap<String, String>, items: Option<&Vec<kubesim_api::k8s_openapi::api::core::v1::KeyToPath>>| match items {
            Some(items) => {
                for item in items {
                    if let Some(value) = data.get(&item.key) {
                        files.insert(format!("{base}/{}", item.path), value.clone());
                    }
                }
            }
            None => {
                for (k, v) in data {
                    files.insert(format!("{base}/{k}"), v);
                }
            }
        };
        if let Some(cm) = volume.config_map.as_ref() {
            match store.get(("", "configmaps"), &namespace, &cm.name).and_then(|o| match o.as_ref() {
                Object::ConfigMap(c) => Some(c.data.clone().unwrap_or_default()),
                _ => None,
            }) {
                Some(data) => put(data, cm.items.as_ref()),
                None if cm.optional.unwrap_or(false) => {}
                None => return Err(format!("MountVolume.SetUp failed for volume {:?} : configmap {:?} not found", volume.name, cm.name)),
            }
        } else if let Some(secret) = volume.secret.as_ref() {
            let name = secret.secret_name.clone().unwrap_or_default();
            match store.get(("", "secrets"), &namespace, &name).and_then(|o| match o.as_ref() {
                Object::Secret(s) => Some(
                    s.data.clone().unwrap_or_default().into_iter().map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned())).collect::<BTreeMap<_, _>>(),
                ),
                _ => None,
            }) {
                Some(data) => put(data, secret.items.as_ref()),
                None if secret.optional.unwrap_or(false) => {}
                None => return Err(format!("MountVolume.SetUp failed for volume {:?} : secret {:?} not found", volume.name, name)),
            }
        } else if let Some(claim) = volume.persistent_volume_claim.as_ref() {
            // WaitForAttachAndMount: the claim must exist and be Bound before containers start.
            let pvc = store.get(("", "persistentvolumeclaims"), &namespace, &claim.claim_name).map(|o| o.to_json());
            match pvc {
                None => return Err(format!("persistentvolumeclaim {:?} not found", claim.claim_name)),
                Some(pvc) if pvc.pointer("/status/phase").and_then(|p| p.as_str()) != Some("Bound") => {
                    return Err(format!(
                        "Unable to attach or mount volumes: unmounted volumes=[{}], unattached volumes=[{}]: persistentvolumeclaim {:?} is not bound",
                        volume.name, volume.name, claim.claim_name
                    ));
                }
                Some(_) => {}
            }
        } else if let Some(downward) = volume.downward_api.as_ref() {
            for item in downward.items.iter().flatten() {
                let Some(field) = item.field_ref.as_ref() else { continue };
                let render = |map: &Option<BTreeMap<String, String>>| map.iter().flatten().map(|(k, v)| format!("{k}={v:?}")).collect::<Vec<_>>().join("\n");
                let value = match field.field_path.as_str() {
                    "metadata.labels" => render(&pod.metadata.labels),
                    "metadata.annotations" => render(&pod.metadata.annotations),
                    "metadata.name" => pod.metadata.name.clone().unwrap_or_default(),
                    "metadata.namespace" => namespace.clone(),
                    "metadata.uid" => pod.metadata.uid.clone().unwrap_or_default(),
                    _ => String::new(),
                };
                files.insert(format!("{base}/{}", item.path), value);
            }
        }
    }
    Ok(files)
}

/// How long a preStop hook keeps the container from receiving SIGTERM: the sleep action's
/// seconds, or the exec command's own runtime (`sleep 5`, `sh -c 'sleep 5'`); httpGet returns at once.
fn prestop_duration_ms(hook: &kubesim_api::k8s_openapi::api::core::v1::LifecycleHandler, grace_ms: Millis) -> Millis {
    if let Some(sleep) = hook.sleep.as_ref() {
        return (sleep.seconds.max(0) as u64 * 1000).min(grace_ms);
    }
    if let Some(exec) = hook.exec.as_ref() {
        let command = exec.command.clone().unwrap_or_default();
        let program = program_for("busybox", &command, &[], &BTreeMap::new(), EPOCH_UNIX_SECONDS);
        return program.timeline.iter().find_map(|(t, e)| matches!(e, crate::process::Effect::Exit(_)).then_some(*t)).unwrap_or(grace_ms).min(grace_ms);
    }
    0
}

/// Pod annotation overriding each container's modelled cpu usage (a quantity, e.g. `250m`).
pub const CPU_USAGE_ANNOTATION: &str = "kubesim.dev/cpu-usage";
/// Pod annotation overriding each container's modelled memory usage (e.g. `300Mi`).
pub const MEMORY_USAGE_ANNOTATION: &str = "kubesim.dev/memory-usage";

/// A container's modelled usage: the pod's usage annotations, else the image's idle defaults.
fn container_usage(pod: &Pod, program: &crate::process::Program) -> (i64, i64) {
    let annotation = |key: &str| pod.metadata.annotations.as_ref().and_then(|a| a.get(key)).and_then(|v| parse_milli(v).ok());
    let cpu = annotation(CPU_USAGE_ANNOTATION).map(|m| m as i64).unwrap_or(program.idle_cpu_milli);
    let memory = annotation(MEMORY_USAGE_ANNOTATION).map(|m| (m / 1000) as i64).unwrap_or(program.idle_memory_bytes);
    (cpu, memory)
}

/// The container's environment as the kubelet builds it (makeEnvironmentVariables): service
/// variables, envFrom, env with $(VAR) expansion and valueFrom. Missing ConfigMaps/Secrets or
/// keys that are not optional fail with the kubelet's messages.
fn container_env(pod: &Pod, container: &Container, store: &kubesim_store::Store) -> Result<BTreeMap<String, String>, String> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let lookup = |kind: &str, name: &str| -> Option<BTreeMap<String, String>> {
        match kind {
            "ConfigMap" => store.get(("", "configmaps"), &namespace, name).and_then(|o| match o.as_ref() {
                Object::ConfigMap(cm) => Some(cm.data.clone().unwrap_or_default()),
                _ => None,
            }),
            _ => store.get(("", "secrets"), &namespace, name).and_then(|o| match o.as_ref() {
                Object::Secret(secret) => Some(
                    secret
                        .data
                        .clone()
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                        .chain(secret.string_data.clone().unwrap_or_default())
                        .collect(),
                ),
                _ => None,
            }),
        }
    };
    let not_found = |kind: &str, name: &str| format!("{} {name:?} not found", kind.to_ascii_lowercase());
    let mut env = BTreeMap::new();
    for source in container.env_from.iter().flatten() {
        let (kind, name, optional) = match (&source.config_map_ref, &source.secret_ref) {
            (Some(cm), _) => ("ConfigMap", cm.name.clone(), cm.optional.unwrap_or(false)),
            (_, Some(secret)) => ("Secret", secret.name.clone(), secret.optional.unwrap_or(false)),
            _ => continue,
        };
        match lookup(kind, &name) {
            Some(data) => {
                for (k, v) in data {
                    env.insert(format!("{}{k}", source.prefix.clone().unwrap_or_default()), v);
                }
            }
            None if optional => {}
            None => return Err(not_found(kind, &name)),
        }
    }
    env.insert("HOSTNAME".to_string(), pod.metadata.name.clone().unwrap_or_default());
    env.insert("PATH".to_string(), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string());
    env.insert("KUBERNETES_SERVICE_HOST".to_string(), "10.96.0.1".to_string());
    env.insert("KUBERNETES_SERVICE_PORT".to_string(), "443".to_string());
    env.insert("KUBERNETES_SERVICE_PORT_HTTPS".to_string(), "443".to_string());
    env.insert("KUBERNETES_PORT".to_string(), "tcp://10.96.0.1:443".to_string());
    env.insert("KUBERNETES_PORT_443_TCP".to_string(), "tcp://10.96.0.1:443".to_string());
    env.insert("KUBERNETES_PORT_443_TCP_ADDR".to_string(), "10.96.0.1".to_string());
    env.insert("KUBERNETES_PORT_443_TCP_PORT".to_string(), "443".to_string());
    env.insert("KUBERNETES_PORT_443_TCP_PROTO".to_string(), "tcp".to_string());
    for var in container.env.iter().flatten() {
        if let Some(value) = &var.value {
            // $(VAR) references to earlier variables, as the kubelet expands them.
            let mut expanded = value.clone();
            for (k, v) in &env {
                expanded = expanded.replace(&format!("$({k})"), v);
            }
            env.insert(var.name.clone(), expanded);
        } else if let Some(field) = var.value_from.as_ref().and_then(|v| v.field_ref.as_ref()) {
            let value = match field.field_path.as_str() {
                "metadata.name" => pod.metadata.name.clone().unwrap_or_default(),
                "metadata.namespace" => pod.metadata.namespace.clone().unwrap_or_default(),
                "metadata.uid" => pod.metadata.uid.clone().unwrap_or_default(),
                "spec.nodeName" => pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default(),
                "spec.serviceAccountName" => pod.spec.as_ref().and_then(|s| s.service_account_name.clone()).unwrap_or_default(),
                "status.podIP" => pod.status.as_ref().and_then(|s| s.pod_ip.clone()).unwrap_or_default(),
                "status.hostIP" => pod.status.as_ref().and_then(|s| s.host_ip.clone()).unwrap_or_default(),
                _ => String::new(),
            };
            env.insert(var.name.clone(), value);
        } else if let Some(source) = var.value_from.as_ref() {
            let (kind, name, key, optional) = match (&source.config_map_key_ref, &source.secret_key_ref) {
                (Some(r), _) => ("ConfigMap", r.name.clone(), r.key.clone(), r.optional.unwrap_or(false)),
                (_, Some(r)) => ("Secret", r.name.clone(), r.key.clone(), r.optional.unwrap_or(false)),
                _ => continue,
            };
            match lookup(kind, &name) {
                Some(data) => match data.get(&key) {
                    Some(value) => {
                        env.insert(var.name.clone(), value.clone());
                    }
                    None if optional => {}
                    None => return Err(format!("couldn't find key {key} in {kind} {namespace}/{name}")),
                },
                None if optional => {}
                None => return Err(not_found(kind, &name)),
            }
        }
    }
    Ok(env)
}

impl Component for Kubelet {
    fn name(&self) -> &str {
        &self.actor
    }

    fn interests(&self) -> Vec<Interest> {
        vec![Interest { resource: ("", "pods"), filter: WatchFilter::PodsOnNode(self.setup.name.clone()) }]
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.register_node(ctx);
        // Heartbeats start at a per-node phase so 5,000 nodes do not all write in one millisecond.
        let phase = (self.setup.index as u64 * 7_919) % HEARTBEAT_MS;
        ctx.after_periodic(HEARTBEAT_MS + phase, T_HEARTBEAT);
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        if !self.alive {
            return;
        }
        self.on_pod_event(event, ctx);
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let seq = token & !KIND_MASK;
        match token & KIND_MASK {
            T_HEARTBEAT => {
                if self.alive {
                    self.heartbeat(ctx);
                }
                ctx.after_periodic(HEARTBEAT_MS, T_HEARTBEAT);
            }
            T_RELIST => {
                if self.relist_at == Some(ctx.now) {
                    self.relist(ctx);
                }
            }
            T_RUNTIME => {
                if self.runtime_wake_at == Some(ctx.now) {
                    self.runtime_wake_at = None;
                    if self.runtime.advance(ctx.now) {
                        self.mark_runtime_changed(ctx);
                    } else {
                        self.schedule_runtime_wake(ctx);
                    }
                }
            }
            T_STEP => {
                if let Some(uid) = self.seq_to_uid.get(&seq).cloned() {
                    self.complete_step(&uid, ctx);
                }
            }
            T_RETRY => {
                if let Some(uid) = self.seq_to_uid.get(&seq).cloned() {
                    if let Some(worker) = self.workers.get_mut(&uid) {
                        if worker.retry_at != Some(ctx.now) {
                            return;
                        }
                        worker.retry_at = None;
                    }
                    self.sync(&uid, ctx);
                }
            }
            T_DISPATCH => self.on_dispatch(ctx),
            T_PROBE => self.probe_tick(seq, ctx),
            _ => {}
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_render_like_time_duration_string() {
        assert_eq!(format_go_duration(543), "543ms");
        assert_eq!(format_go_duration(2102), "2.102s");
        assert_eq!(format_go_duration(2500), "2.5s");
        assert_eq!(format_go_duration(3000), "3s");
    }

    // Mirrors client-go/util/flowcontrol/backoff_test.go (TestSlowBackoff, TestBackoffReset)
    // with the kubelet's 10 s initial and 300 s maximum.
    #[test]
    fn restart_backoff_doubles_to_five_minutes_and_resets_after_stability() {
        let mut b = Backoff::default();
        let mut delays = Vec::new();
        let mut now = 0;
        for _ in 0..7 {
            b.next(now);
            delays.push(b.duration_ms / 1000);
            now += 1_000;
        }
        assert_eq!(delays, vec![10, 20, 40, 80, 160, 300, 300]);
        assert!(b.in_backoff_since(now, now + 299_000));
        assert!(!b.in_backoff_since(now, now + 300_000));
        b.next(now + 2 * BACKOFF_MAX_MS + 1);
        assert_eq!(b.duration_ms, BACKOFF_INITIAL_MS);
    }
}
