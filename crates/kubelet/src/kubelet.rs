//! The kubelet component of one node: it watches the pods bound to its node and dispatches
//! them to pod workers, and it owns the managers the other modules implement:
//! [`crate::sync`] (the pod workers' CRI actions), [`crate::pleg`], [`crate::status_manager`],
//! [`crate::node_status`] (registration, node status, Lease), [`crate::eviction`],
//! [`crate::prober`], [`crate::volumes`], [`crate::network`] and [`crate::env`].
//!
//! Structure after upstream pkg/kubelet: watch events and PLEG events trigger a pod worker's
//! sync; a sync first writes the pod status generated from the runtime (status manager), then
//! runs the next CRI calls one after another (sandbox, image pull, create, start), each taking
//! its modelled latency. The container runtime belongs to the node's host: every handler
//! reaches it through `Ctx::host`.

use crate::network;
use crate::pod_worker::{PodWorker, WorkerState};
use crate::prober::Prober;
use kubesim_api::k8s_openapi::api::core::v1::{Node, NodeStatus};
use kubesim_api::Millis;
use kubesim_host::cri::{ContainerState, CriCall, SandboxState};
use kubesim_host::Host;
use kubesim_runtime::{Component, Ctx, HostEvent, Interest, Timers, WatchEvent, WatchFilter};
use kubesim_store::EventType;
use rand_core::RngCore;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Node status heartbeat / lease renewal period (nodeStatusUpdateFrequency, lease renew 25% of 40 s).
pub const HEARTBEAT_MS: Millis = 10_000;
/// nodeStatusReportFrequency: an unchanged node status is still written this often.
pub const NODE_STATUS_REPORT_MS: Millis = 5 * 60_000;
/// The ConfigMap (in kube-system) through which a scenario overrides image sizes and declares
/// missing images.
pub const IMAGE_CATALOGUE_CONFIGMAP: &str = "kubesim-images";
/// PLEG relist period.
pub const RELIST_MS: Millis = 1_000;
pub use crate::pod_worker::{BACKOFF_INITIAL_MS, BACKOFF_MAX_MS};
/// After a sync that ended in an error (CrashLoopBackOff, ErrImagePull, ...), the pod worker
/// requeues the pod after backOffPeriod with jitter factor 0.5 (pod_workers.go).
pub const WORKER_BACKOFF_MS: Millis = 10_000;
/// How long a kubelet takes to react to a watch event (informer + pod worker dispatch).
pub const DISPATCH_MS: Millis = 5;

/// What a kubelet timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Node status and Lease heartbeat.
    Heartbeat,
    /// A PLEG relist on the 1 s grid.
    Relist,
    /// A worker's in-flight CRI call completes.
    Step(u64),
    /// A worker's error requeue.
    Retry(u64),
    /// Dispatch of the pods whose watch events arrived.
    Dispatch,
    /// A probe worker's tick.
    Probe(u64),
    /// The volume manager's reconciler loop.
    VolumeLoop,
    /// A volume operation's CSI call completes.
    VolumeOp(u64),
    /// A worker's WaitForAttachAndMount poll.
    VolumeWait(u64),
    /// The node plugins register.
    RegisterPlugins,
    /// The periodic pod sync reprocesses the volumes of running pods (filesystem resizes).
    VolumeResync,
}

/// How a kubelet comes up.
#[derive(Clone, Debug)]
pub struct NodeSetup {
    /// Node name.
    pub name: String,
    /// 0-based index: the node's IP is 172.18.0.<index+2> (its podCIDR comes from node IPAM).
    pub index: u32,
    /// The Node to register if none exists yet (the default cluster); input Nodes exist already.
    pub register: Option<Node>,
}

/// The kubelet component of one node.
#[derive(Clone, Debug)]
pub struct Kubelet {
    pub(crate) actor: String,
    pub(crate) setup: NodeSetup,
    pub(crate) workers: BTreeMap<String, Box<PodWorker>>,
    pub(crate) seq_to_uid: BTreeMap<u64, String>,
    pub(crate) next_seq: u64,
    pub(crate) pleg_snapshot: BTreeMap<String, (ContainerState, Option<Millis>)>,
    /// The sandboxes' states at the last relist (the generic PLEG records sandboxes as it does
    /// containers, so a new or stopped sandbox is a pod lifecycle event too).
    pub(crate) pleg_sandboxes: BTreeMap<String, SandboxState>,
    pub(crate) relist_at: Option<Millis>,
    pub(crate) dispatch_pending: BTreeSet<String>,
    pub(crate) dispatch_scheduled: bool,
    pub(crate) last_node_status: Option<NodeStatus>,
    pub(crate) last_node_status_write: Millis,
    pub(crate) prober: Prober,
    /// Last time the eviction manager observed memory.available below its hard threshold.
    pub(crate) memory_pressure_at: Option<Millis>,
    pub(crate) timers: Timers<Wake>,
    /// The volume manager (CSI volumes).
    pub(crate) volumes: crate::volume_manager::VolumeManager,
}

/// Runs `f` with the kubelet's host taken out of the context, so handlers can use the host's
/// container runtime and the API at once.
fn with_host<R>(ctx: &mut Ctx, f: impl FnOnce(&mut Host, &mut Ctx) -> R) -> R {
    let host = ctx.host.take().expect("the kubelet runs on a host");
    let result = f(&mut *host, ctx);
    ctx.host = Some(host);
    result
}

impl Kubelet {
    /// A kubelet for one node.
    pub fn new(setup: NodeSetup) -> Kubelet {
        Kubelet {
            actor: format!("kubelet/{}", setup.name),
            setup,
            workers: BTreeMap::new(),
            seq_to_uid: BTreeMap::new(),
            next_seq: 1,
            pleg_snapshot: BTreeMap::new(),
            pleg_sandboxes: BTreeMap::new(),
            relist_at: None,
            dispatch_pending: BTreeSet::new(),
            dispatch_scheduled: false,
            last_node_status: None,
            last_node_status_write: 0,
            prober: Prober::default(),
            memory_pressure_at: None,
            timers: Timers::default(),
            volumes: Default::default(),
        }
    }

    /// The node name.
    pub fn node_name(&self) -> &str {
        &self.setup.name
    }

    /// kindnetd's part: once the node IPAM controller gave our Node a podCIDR, the CNI
    /// conflist is written for it (host-local over that range).
    pub(crate) fn configure_cni(&self, host: &mut Host, ctx: &mut Ctx) {
        let node = ctx.api.lookup(("", "nodes"), "", &self.setup.name);
        let cidr = node.and_then(|o| o.as_node()).and_then(|n| n.spec.as_ref()).and_then(|s| s.pod_cidr.clone());
        if let Some(cidr) = cidr.filter(|c| !c.is_empty()) {
            let _ = host.cni.configure(&cidr);
        }
    }

    /// The node's IP address.
    pub fn node_ip(&self) -> String {
        kubesim_host::node_ip(self.setup.index)
    }

    /// The volume manager's `volumesInUse` (what the next node status reports).
    pub fn volumes_in_use(&self) -> Vec<String> {
        self.volumes.volumes_in_use()
    }

    /// The image pull back-off the pod worker of `pod_uid` keeps for `image` (client-go's
    /// flowcontrol.Backoff: 10 s doubling to 5 min): (the current window, when it began).
    pub fn pull_backoff(&self, pod_uid: &str, image: &str) -> Option<(Millis, Millis)> {
        let backoff = self.workers.get(pod_uid)?.pull_backoff.get(image)?;
        Some((backoff.duration_ms, backoff.last_update)).filter(|(d, _)| *d > 0)
    }

    /// How many pods the kubelet has workers for.
    pub fn worker_count(&self) -> usize {
        self.workers.len()
    }

    /// Fault: a container's process crashes now (exit code 1); restartPolicy decides the rest.
    pub fn crash_container(&mut self, namespace: &str, pod: &str, container: Option<&str>, ctx: &mut Ctx) -> Result<String, String> {
        with_host(ctx, |host, ctx| {
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
            if !host.cri.crash(&id, ctx.now) {
                return Err(format!("container {name:?} is not running"));
            }
            self.mark_runtime_changed(host, ctx);
            Ok(format!("container {name} in pod {namespace}/{pod} crashed (exit code 1)"))
        })
    }

    pub(crate) fn schedule_dispatch(&mut self, uid: &str, ctx: &mut Ctx) {
        self.dispatch_pending.insert(uid.to_string());
        if !self.dispatch_scheduled {
            self.dispatch_scheduled = true;
            self.timers.arm(ctx, DISPATCH_MS, Wake::Dispatch);
        }
    }

    pub(crate) fn note_cri(&self, ctx: &mut Ctx, call: CriCall, detail: impl FnOnce() -> String) {
        ctx.note_with(|| format!("cri/{}", self.setup.name), call.name(), detail);
    }

    /// Requeues a pod whose sync ended in an error, after 10–15 s (wait.Jitter(10s, 0.5)).
    pub(crate) fn requeue_after_error(&mut self, uid: &str, ctx: &mut Ctx) {
        let jitter = ctx.rng.next_u64() % (WORKER_BACKOFF_MS / 2);
        let Some(worker) = self.workers.get_mut(uid) else { return };
        // An update that arrived during the failed sync (a PLEG event, a pod change) is
        // processed as soon as the worker is free (podWorkers' pending update), not after the
        // backoff: that sync writes the status carrying this sync's error reason.
        if worker.resync_pending {
            worker.resync_pending = false;
            let at = ctx.now + DISPATCH_MS;
            worker.retry_at = Some(at);
            let seq = worker.seq;
            self.timers.arm(ctx, DISPATCH_MS, Wake::Retry(seq));
            return;
        }
        if worker.retry_at.is_some_and(|at| at > ctx.now) {
            return;
        }
        let at = ctx.now + WORKER_BACKOFF_MS + jitter;
        worker.retry_at = Some(at);
        let seq = worker.seq;
        self.timers.arm(ctx, at - ctx.now, Wake::Retry(seq));
    }

    fn on_pod_event(&mut self, host: &mut Host, event: &WatchEvent, ctx: &mut Ctx) {
        let Some(pod) = event.object.as_pod() else { return };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        match event.event_type {
            EventType::Deleted => {
                // Force deletion (or our own final delete): tear everything down now.
                if let Some(worker) = self.workers.remove(&uid) {
                    self.remove_pod_volumes(&uid, ctx);
                    if let Some(sandbox) = worker.sandbox.clone() {
                        let _ = host.cri.stop_pod_sandbox(&sandbox, ctx.now);
                        let _ = host.cri.remove_pod_sandbox(&sandbox);
                        self.release_ip(host, &uid, &sandbox, worker.ip.as_deref(), ctx);
                        let pod_ref = format!("{}/{}", pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default());
                        self.note_cri(ctx, CriCall::RemovePodSandbox, || pod_ref);
                    }
                    self.forget_pod(host, &uid);
                    self.seq_to_uid.remove(&worker.seq);
                }
            }
            _ => {
                if !self.workers.contains_key(&uid) {
                    if crate::status::is_terminal(pod) {
                        return;
                    }
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    self.seq_to_uid.insert(seq, uid.clone());
                    let mut worker = PodWorker::new(seq, event.object.clone());
                    if let Err((reason, message)) = crate::admission::admit(&self.workers, &self.setup.name, pod, ctx) {
                        worker.state = WorkerState::Rejected;
                        let mut rejected = pod.clone();
                        let status = rejected.status.get_or_insert_with(Default::default);
                        status.phase = Some("Failed".into());
                        status.reason = Some(reason.clone());
                        status.message = Some(format!("Pod was rejected: {message}"));
                        let _ = ctx.update_status(kubesim_api::Object::Pod(Box::new(rejected)));
                        ctx.event(&event.object, "Warning", &reason, message);
                    }
                    self.workers.insert(uid.clone(), Box::new(worker));
                } else if let Some(worker) = self.workers.get_mut(&uid) {
                    // The pod config source ignores status-only updates (config.go checkAndUpdatePod).
                    let old_object = std::mem::replace(&mut worker.pod, event.object.clone());
                    let old = old_object.as_pod().expect("pod workers hold pods");
                    let changed = old.spec != pod.spec
                        || old.metadata.labels != pod.metadata.labels
                        || old.metadata.annotations != pod.metadata.annotations
                        || old.metadata.deletion_timestamp != pod.metadata.deletion_timestamp;
                    // HandlePodReconcile: a status-only update that changes what the readiness
                    // gates say (another component set a gate's condition) syncs the pod.
                    // needsReconcile: the API's status is no longer what this kubelet wrote
                    // (another component changed it): write ours again.
                    // (Our own write's echo is the very object we stored: no deep comparison.)
                    let overwritten =
                        worker.written.as_ref().is_some_and(|w| !Arc::ptr_eq(w, &event.object) && w.as_pod().map(|p| &p.status) != Some(&pod.status));
                    if overwritten {
                        worker.written = None;
                    }
                    if !changed && !overwritten && !crate::status_manager::need_to_reconcile_pod_readiness(pod) {
                        return;
                    }
                }
                self.schedule_dispatch(&uid, ctx);
            }
        }
    }

    /// HandlePodCleanups for a pod gone from the API whose worker was removed: its probe
    /// workers and results are dropped and its own volume directories removed
    /// (cleanupOrphanedPodDirs).
    fn forget_pod(&mut self, host: &mut Host, uid: &str) {
        self.prober.remove_pod(uid);
        crate::volumes::remove_pod_dirs(&mut host.cri.volumes, uid);
    }

    /// CNI DEL for a torn-down sandbox (hostNetwork pods have no address of their own).
    pub(crate) fn release_ip(&mut self, host: &mut Host, uid: &str, sandbox: &str, ip: Option<&str>, ctx: &mut Ctx) {
        if let Some(ip) = ip.filter(|ip| *ip != self.node_ip()) {
            network::del(host, ctx.fabric, uid, sandbox, ip);
            ctx.note_with(|| format!("cni/{}", self.setup.name), "DEL", || format!("{sandbox} {ip}"));
        }
    }

    fn on_dispatch(&mut self, host: &mut Host, ctx: &mut Ctx) {
        self.dispatch_scheduled = false;
        let pending = std::mem::take(&mut self.dispatch_pending);
        for uid in pending {
            self.sync(host, &uid, ctx);
        }
    }

    /// The host lost power: every process died with it, and the runtime dropped our timers.
    fn powered_off(&mut self, ctx: &mut Ctx) {
        self.timers.clear();
        self.dispatch_pending.clear();
        self.dispatch_scheduled = false;
        self.relist_at = None;
        self.prober.clear();
        for worker in self.workers.values_mut() {
            worker.in_flight = None; // the CRI call died with the machine
            worker.resync_pending = false;
            worker.retry_at = None;
            worker.volume_wait_since = None;
            worker.unmount_wait = false;
        }
        self.volumes.powered_off();
        ctx.note(format!("cri/{}", self.setup.name), "fault", "node powered off: all containers stopped".to_string());
    }

    /// Back from a power loss, a partition or a restart: relist our pods from the API server,
    /// tear down pods deleted meanwhile and resync the rest.
    fn relist_pods(&mut self, host: &mut Host, ctx: &mut Ctx) {
        let current: BTreeMap<String, Arc<kubesim_api::Object>> =
            ctx.api.store().pods_on_node(&self.setup.name).map(|o| (o.metadata().uid.clone().unwrap_or_default(), o.clone())).collect();
        let gone: Vec<String> = self.workers.keys().filter(|uid| !current.contains_key(*uid)).cloned().collect();
        for uid in gone {
            if let Some(worker) = self.workers.remove(&uid) {
                self.remove_pod_volumes(&uid, ctx);
                if let Some(sandbox) = worker.sandbox.clone() {
                    let _ = host.cri.stop_pod_sandbox(&sandbox, ctx.now);
                    let _ = host.cri.remove_pod_sandbox(&sandbox);
                    self.release_ip(host, &uid, &sandbox, worker.ip.as_deref(), ctx);
                }
                self.forget_pod(host, &uid);
                self.seq_to_uid.remove(&worker.seq);
            }
        }
        for (uid, object) in current {
            let event_type = if self.workers.contains_key(&uid) { EventType::Modified } else { EventType::Added };
            // A pod this kubelet finished terminating while its writes failed (partitioned):
            // the status manager's sync retries the final status and the deletion.
            let unfinished =
                self.workers.get(&uid).is_some_and(|w| w.state == crate::pod_worker::WorkerState::Terminated) && object.metadata().deletion_timestamp.is_some();
            let event = WatchEvent { event_type, resource: ("", "pods"), object, revision: 0 };
            self.on_pod_event(host, &event, ctx);
            if unfinished {
                self.finish_deletion(host, &uid, ctx);
            }
            self.schedule_dispatch(&uid, ctx);
        }
        self.heartbeat(host, ctx);
        self.mark_runtime_changed(host, ctx);
    }

    fn on_wake(&mut self, host: &mut Host, wake: Wake, ctx: &mut Ctx) {
        match wake {
            Wake::Heartbeat => {
                self.heartbeat(host, ctx);
                self.timers.arm_periodic(ctx, HEARTBEAT_MS, Wake::Heartbeat);
            }
            Wake::Relist => {
                if self.relist_at == Some(ctx.now) {
                    self.relist(host, ctx);
                }
            }
            Wake::Step(seq) => {
                if let Some(uid) = self.seq_to_uid.get(&seq).cloned() {
                    self.complete_step(host, &uid, ctx);
                }
            }
            Wake::Retry(seq) => {
                if let Some(uid) = self.seq_to_uid.get(&seq).cloned() {
                    if let Some(worker) = self.workers.get_mut(&uid) {
                        if worker.retry_at != Some(ctx.now) {
                            return;
                        }
                        worker.retry_at = None;
                    }
                    self.sync(host, &uid, ctx);
                }
            }
            Wake::Dispatch => self.on_dispatch(host, ctx),
            Wake::Probe(seq) => self.probe_tick(host, seq, ctx),
            Wake::VolumeLoop => self.volume_reconcile(host, ctx),
            Wake::VolumeOp(id) => self.complete_volume_operation(host, id, ctx),
            Wake::VolumeResync => self.on_volume_resync(ctx),
            Wake::VolumeWait(seq) => {
                if let Some(uid) = self.seq_to_uid.get(&seq).cloned() {
                    self.on_volume_wait(host, &uid, ctx);
                }
            }
            Wake::RegisterPlugins => {
                self.register_csi_plugins(host, ctx);
                self.arm_volume_loop(ctx);
            }
        }
    }

    /// Arms the next heartbeat on the node's grid: `phase + k × 10 s` (k ≥ 1), so a node that
    /// comes back keeps the cadence it had. The per-node phase keeps 5,000 nodes from all
    /// writing in one millisecond.
    fn arm_heartbeat(&mut self, ctx: &mut Ctx) {
        let phase = (self.setup.index as u64 * 7_919) % HEARTBEAT_MS;
        let k = ctx.now.saturating_sub(phase) / HEARTBEAT_MS + 1;
        let next = (phase + k * HEARTBEAT_MS).max(phase + HEARTBEAT_MS);
        self.timers.arm_periodic(ctx, next - ctx.now, Wake::Heartbeat);
    }
}

/// A 64-hex-digit runtime id from the world's RNG.
pub(crate) fn random_id(ctx: &mut Ctx) -> String {
    let mut bytes = [0u8; 32];
    ctx.rng.fill_bytes(&mut bytes);
    kubesim_api::hash::hex(&bytes)
}

/// Go's time.Duration.String for the Pulled event ("1.802s", "543ms").
pub fn format_go_duration(ms: Millis) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{}s", s.trim_end_matches('0'))
    }
}

impl Component for Kubelet {
    fn name(&self) -> &str {
        &self.actor
    }

    fn interests(&self) -> Vec<Interest> {
        vec![Interest { resource: ("", "pods"), filter: WatchFilter::PodsOnNode(self.setup.name.clone()) }]
    }

    fn start(&mut self, ctx: &mut Ctx) {
        with_host(ctx, |host, ctx| self.register_node(host, ctx));
        self.arm_heartbeat(ctx);
        self.timers.arm(ctx, crate::volume_manager::PLUGIN_REGISTRATION_MS, Wake::RegisterPlugins);
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        with_host(ctx, |host, ctx| self.on_pod_event(host, event, ctx));
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let Some(wake) = self.timers.fire(token) else { return };
        with_host(ctx, |host, ctx| self.on_wake(host, wake, ctx));
    }

    fn on_host(&mut self, event: HostEvent, ctx: &mut Ctx) {
        match event {
            HostEvent::PowerOff => self.powered_off(ctx),
            HostEvent::PowerOn => {
                self.arm_heartbeat(ctx);
                self.timers.arm(ctx, crate::volume_manager::PLUGIN_REGISTRATION_MS, Wake::RegisterPlugins);
                with_host(ctx, |host, ctx| self.relist_pods(host, ctx));
            }
            // Partitioned: nothing to do now (writes fail, watch events stop); the containers
            // and probes keep running.
            HostEvent::Disconnected => {}
            HostEvent::Reconnected => with_host(ctx, |host, ctx| self.relist_pods(host, ctx)),
            HostEvent::Restart => with_host(ctx, |host, ctx| {
                // The volume manager rebuilds its actual state from the node plugins' mounts.
                self.volumes.reconstruct(host);
                self.relist_pods(host, ctx);
                self.arm_volume_loop(ctx);
            }),
            // A container exited or a process changed state: the PLEG relists at its next tick.
            HostEvent::RuntimeChanged => with_host(ctx, |host, ctx| self.mark_runtime_changed(host, ctx)),
        }
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
}
