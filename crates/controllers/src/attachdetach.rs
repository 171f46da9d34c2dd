//! The attach/detach controller (pkg/controller/volume/attachdetach), for CSI volumes: a desired
//! state of world (which volume each scheduled, non-terminated pod needs on its node: its bound
//! claims' CSI PVs whose driver requires attaching — no CSIDriver object counts as "requires"),
//! an actual state of world (which volumes are attached where, and whether the node reports
//! them in `status.volumesInUse`), and a reconciler that moves one towards the other:
//!
//! - detach first: a volume attached to a node where no pod needs it any more is detached once
//!   the node no longer reports it in use — or after `maxWaitForUnmountDuration` (6 min) if the
//!   node is unhealthy, or at once if it carries the `node.kubernetes.io/out-of-service` taint.
//!   It leaves `status.volumesAttached` first, then the CSI attacher deletes its
//!   VolumeAttachment and waits for the external-attacher to finish (the object goes);
//! - attach: the CSI attacher creates `csi-<sha256(handle+driver+node)>` {attacher, nodeName,
//!   source.persistentVolumeName} and waits for `status.attached` (or an `attachError`, or
//!   2 minutes). Success: the pods get `SuccessfulAttachVolume`, the node's
//!   `status.volumesAttached` gets the volume. Failure: `FailedAttachVolume`, retried with
//!   exponential backoff (500 ms doubling to 2m2s, nestedpendingoperations). A ReadWriteOnce
//!   volume attached to another node is not attached: the pods get the `Multi-Attach error`
//!   once.
//!
//! Upstream's reconciler loops every 100 ms; here every informer event that changes a state
//! queues one reconcile (the work queue merges them), and backoffs and timeouts requeue it.
//! Deviations: every node counts as controller-managed (kubelets run with
//! `--enable-controller-attach-detach`); a deleted Node's volumes count as no longer in use.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::csi::{attach_required, attachment_name, multi_attach_forbidden, pv_csi_source, unique_volume_name};
use kubesim_api::k8s_openapi::api::core::v1::{AttachedVolume, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use kubesim_api::k8s_openapi::api::storage::v1::{VolumeAttachment, VolumeAttachmentSource, VolumeAttachmentSpec};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::Ctx;
use kubesim_store::EventType;
use std::collections::{BTreeMap, BTreeSet};

/// `ReconcilerMaxWaitForUnmountDuration` (DefaultTimerConfig).
pub const MAX_WAIT_FOR_UNMOUNT_MS: Millis = 6 * 60_000;
/// How long the CSI attacher waits for the external-attacher (csi_plugin.go `csiTimeout`).
pub const ATTACH_TIMEOUT_MS: Millis = 2 * 60_000;
/// nestedpendingoperations: the first retry of a failed operation.
pub const BACKOFF_INITIAL_MS: Millis = 500;
/// nestedpendingoperations: the longest wait between retries (2m2s).
pub const BACKOFF_MAX_MS: Millis = 122_000;
/// The taint that lets volumes be detached from a node at once (non-graceful node shutdown).
pub const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service";
/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;

fn reconcile_key() -> Key {
    (String::new(), "reconcile".to_string())
}

/// A volume some pods need on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
struct VolumeToAttach {
    pv: String,
    driver: String,
    handle: String,
    multi_attach_forbidden: bool,
    /// Pod uid → (namespace, name).
    pods: BTreeMap<String, (String, String)>,
    multi_attach_reported: bool,
}

/// A volume attached to a node.
#[derive(Clone, Debug, PartialEq, Eq)]
struct AttachedState {
    pv: String,
    driver: String,
    handle: String,
    mounted_by_node: bool,
    detach_requested_at: Option<Millis>,
    /// Listed in the node's `status.volumesAttached`.
    reported: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Operation {
    Attach { attachment: String, pv: String, driver: String, handle: String, started: Millis },
    Detach { attachment: String },
}

/// The controller.
#[derive(Clone, Debug)]
pub struct AttachDetachController {
    pods: Cache,
    nodes: Cache,
    claims: Cache,
    volumes: Cache,
    drivers: Cache,
    attachments: Cache,
    queue: WorkQueue,
    /// Node → unique volume name → what to attach.
    desired: BTreeMap<String, BTreeMap<String, VolumeToAttach>>,
    /// Pod uid → the (node, volume) entries it contributed.
    pod_entries: BTreeMap<String, Vec<(String, String)>>,
    /// Pods with claims (re-examined when claims, volumes or drivers change).
    claim_pods: BTreeSet<Key>,
    /// (unique volume name, node) → attached state.
    actual: BTreeMap<(String, String), AttachedState>,
    /// (unique volume name, node) → the operation in flight.
    operations: BTreeMap<(String, String), Operation>,
    /// (unique volume name, node) → (no retry before, the last backoff).
    backoff: BTreeMap<(String, String), (Millis, Millis)>,
    /// Nodes whose `status.volumesAttached` must be written.
    dirty_nodes: BTreeSet<String>,
}

impl Default for AttachDetachController {
    fn default() -> Self {
        AttachDetachController::new()
    }
}

fn va_of(object: &Object) -> Option<&VolumeAttachment> {
    match object {
        Object::VolumeAttachment(va) => Some(va),
        _ => None,
    }
}

/// `IsPodTerminated`: a terminal phase, or deleted with no container running.
fn is_pod_terminated(pod: &Pod) -> bool {
    if is_pod_terminal(pod) {
        return true;
    }
    let running =
        pod.status.as_ref().and_then(|s| s.container_statuses.as_ref()).into_iter().flatten().any(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()));
    pod.metadata.deletion_timestamp.is_some() && !running
}

/// `reportMultiAttachError`'s message for a pod in `namespace` that wants `volume` while the
/// pods `holders` (namespace, name) use it on other nodes: the names of its own namespace's pods
/// only, the others counted.
pub fn multi_attach_message(volume: &str, namespace: &str, holders: &[(String, String)]) -> String {
    let suffix = if holders.is_empty() {
        "Volume is already exclusively attached to one node and can't be attached to another".to_string()
    } else {
        let local: Vec<&str> = holders.iter().filter(|(ns, _)| ns == namespace).map(|(_, n)| n.as_str()).collect();
        let others = holders.len() - local.len();
        match (local.is_empty(), others) {
            (false, 0) => format!("Volume is already used by pod(s) {}", local.join(", ")),
            (false, n) => format!("Volume is already used by pod(s) {} and {n} pod(s) in different namespaces", local.join(", ")),
            (true, n) => format!("Volume is already used by {n} pod(s) in different namespaces"),
        }
    };
    format!("Multi-Attach error for volume {volume:?} {suffix}")
}

impl AttachDetachController {
    /// A controller with empty caches and states.
    pub fn new() -> AttachDetachController {
        AttachDetachController {
            pods: Cache::default(),
            nodes: Cache::default(),
            claims: Cache::default(),
            volumes: Cache::default(),
            drivers: Cache::default(),
            attachments: Cache::default(),
            queue: WorkQueue::new(LATENCY_MS),
            desired: BTreeMap::new(),
            pod_entries: BTreeMap::new(),
            claim_pods: BTreeSet::new(),
            actual: BTreeMap::new(),
            operations: BTreeMap::new(),
            backoff: BTreeMap::new(),
            dirty_nodes: BTreeSet::new(),
        }
    }

    /// The volumes attached to a node, as `status.volumesAttached` would list them (tests).
    pub fn attached_to(&self, node: &str) -> Vec<String> {
        self.actual.keys().filter(|(_, n)| n == node).map(|(v, _)| v.clone()).collect()
    }

    /// The attachable CSI volume a claim is bound to: (unique name, PV, driver, handle).
    fn attachable_volume(&self, namespace: &str, claim: &str) -> Option<(String, PersistentVolume, String, String)> {
        let claim: PersistentVolumeClaim = decode(self.claims.get_named(namespace, claim)?)?;
        let pv_name = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty())?;
        if claim.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Bound") {
            return None;
        }
        let pv: PersistentVolume = decode(self.volumes.get_named("", &pv_name)?)?;
        let csi = pv_csi_source(&pv)?.clone();
        let driver = match self.drivers.get_named("", &csi.driver).map(|o| o.as_ref()) {
            Some(Object::CSIDriver(d)) => Some((**d).clone()),
            _ => None,
        };
        if !attach_required(driver.as_ref()) {
            return None;
        }
        Some((unique_volume_name(&csi.driver, &csi.volume_handle), pv, csi.driver, csi.volume_handle))
    }

    /// The desired-state populator for one pod: its current entries in, the ones it no longer
    /// has out (an entry lives as long as some pod needs it, keeping its Multi-Attach report).
    fn process_pod(&mut self, key: &Key, uid: &str) {
        let pod = self.pods.get(key).and_then(|o| o.as_pod()).cloned();
        let claims = pod.as_ref().map(kubesim_api::pod::claim_names).unwrap_or_default();
        if claims.is_empty() {
            self.claim_pods.remove(key);
        } else {
            self.claim_pods.insert(key.clone());
        }
        let mut entries: Vec<(String, String)> = Vec::new();
        if let Some(pod) = pod.as_ref().filter(|p| !pod_node(p).is_empty() && !is_pod_terminated(p)) {
            let node = pod_node(pod).to_string();
            for claim in &claims {
                let Some((volume, pv, driver, handle)) = self.attachable_volume(&key.0, claim) else { continue };
                let entry = self.desired.entry(node.clone()).or_default().entry(volume.clone()).or_insert_with(|| VolumeToAttach {
                    pv: pv.metadata.name.clone().unwrap_or_default(),
                    driver,
                    handle,
                    multi_attach_forbidden: multi_attach_forbidden(&pv),
                    pods: BTreeMap::new(),
                    multi_attach_reported: false,
                });
                entry.pods.insert(uid.to_string(), key.clone());
                entries.push((node.clone(), volume));
            }
        }
        for (node, volume) in self.pod_entries.remove(uid).unwrap_or_default() {
            if entries.contains(&(node.clone(), volume.clone())) {
                continue;
            }
            if let Some(volumes) = self.desired.get_mut(&node) {
                if let Some(entry) = volumes.get_mut(&volume) {
                    entry.pods.remove(uid);
                    if entry.pods.is_empty() {
                        volumes.remove(&volume);
                    }
                }
                if volumes.is_empty() {
                    self.desired.remove(&node);
                }
            }
        }
        if !entries.is_empty() {
            self.pod_entries.insert(uid.to_string(), entries);
        }
    }

    fn reprocess_claim_pods(&mut self) {
        let keys: Vec<Key> = self.claim_pods.iter().cloned().collect();
        for key in keys {
            let uid = self.pods.get(&key).map(|o| uid_of(o.metadata()).to_string()).unwrap_or_default();
            self.process_pod(&key, &uid);
        }
    }

    /// `processVolumesInUse`: the node's `status.volumesInUse` says which of its attached
    /// volumes it still has mounted.
    fn process_volumes_in_use(&mut self, node: &str) {
        let in_use: BTreeSet<String> = self
            .nodes
            .get_named("", node)
            .and_then(|o| o.as_node())
            .and_then(|n| n.status.as_ref())
            .and_then(|s| s.volumes_in_use.clone())
            .unwrap_or_default()
            .into_iter()
            .collect();
        let gone = self.nodes.get_named("", node).is_none();
        for ((volume, n), state) in self.actual.iter_mut() {
            if n == node {
                state.mounted_by_node = !gone && in_use.contains(volume);
            }
        }
    }

    fn events_to_pods(&self, ctx: &mut Ctx, pods: &BTreeMap<String, (String, String)>, type_: &str, reason: &str, message: &str) {
        for (namespace, name) in pods.values() {
            if let Some(pod) = self.pods.get_named(namespace, name).cloned() {
                ctx.event(&pod, type_, reason, message.to_string());
            }
        }
    }

    fn in_backoff(&self, key: &(String, String), now: Millis) -> Option<Millis> {
        self.backoff.get(key).map(|(at, _)| *at).filter(|at| *at > now)
    }

    fn fail_operation(&mut self, key: &(String, String), ctx: &mut Ctx) {
        let last = self.backoff.get(key).map(|(_, d)| *d).unwrap_or(0);
        let next = if last == 0 { BACKOFF_INITIAL_MS } else { (last * 2).min(BACKOFF_MAX_MS) };
        self.backoff.insert(key.clone(), (ctx.now + next, next));
        self.queue.add_after(reconcile_key(), next, ctx);
    }

    /// The CSI attacher's wait for an attach: attached, failed (attachError, deletion) or still
    /// waiting.
    fn check_attach(&mut self, key: &(String, String), ctx: &mut Ctx) {
        let Some(Operation::Attach { attachment, pv, driver, handle, started }) = self.operations.get(key).cloned() else { return };
        let va = self.attachments.get_named("", &attachment).and_then(|o| va_of(o)).cloned();
        let failure = match &va {
            Some(va) if va.metadata.deletion_timestamp.is_some() => Some("volume attachment is being deleted".to_string()),
            Some(va) if va.status.as_ref().is_some_and(|s| s.attached) => None,
            Some(va) => match va.status.as_ref().and_then(|s| s.attach_error.as_ref()) {
                Some(e) => Some(e.message.clone().unwrap_or_default()),
                None if ctx.now >= started + ATTACH_TIMEOUT_MS => {
                    Some(format!("timed out waiting for external-attacher of {driver} CSI driver to attach volume {handle}"))
                }
                None => return,
            },
            None if ctx.now >= started + ATTACH_TIMEOUT_MS => {
                Some(format!("timed out waiting for external-attacher of {driver} CSI driver to attach volume {handle}"))
            }
            None => return,
        };
        self.operations.remove(key);
        let pods = self.desired.get(&key.1).and_then(|v| v.get(&key.0)).map(|w| w.pods.clone()).unwrap_or_default();
        match failure {
            None => {
                self.backoff.remove(key);
                // Assumed mounted until the node's status says otherwise (actual_state_of_world).
                let state = AttachedState { pv: pv.clone(), driver, handle, mounted_by_node: true, detach_requested_at: None, reported: true };
                self.actual.insert(key.clone(), state);
                self.dirty_nodes.insert(key.1.clone());
                self.events_to_pods(ctx, &pods, "Normal", "SuccessfulAttachVolume", &format!("AttachVolume.Attach succeeded for volume {pv:?} "));
            }
            Some(why) => {
                self.events_to_pods(ctx, &pods, "Warning", "FailedAttachVolume", &format!("AttachVolume.Attach failed for volume {pv:?} : {why}"));
                self.fail_operation(key, ctx);
            }
        }
        self.queue.add(reconcile_key(), ctx);
    }

    /// `reportMultiAttachError`: each pod hears which pods of its own namespace hold the volume.
    fn report_multi_attach(&mut self, volume: &str, node: &str, others: &[String], ctx: &mut Ctx) {
        let Some(want) = self.desired.get(node).and_then(|v| v.get(volume)).cloned() else { return };
        let holders: Vec<(String, String)> =
            others.iter().filter_map(|n| self.desired.get(n).and_then(|v| v.get(volume))).flat_map(|w| w.pods.values().cloned()).collect();
        for (namespace, name) in want.pods.values() {
            if let Some(pod) = self.pods.get_named(namespace, name).cloned() {
                ctx.event(&pod, "Warning", "FailedAttachVolume", multi_attach_message(&want.pv, namespace, &holders));
            }
        }
        if let Some(entry) = self.desired.get_mut(node).and_then(|v| v.get_mut(volume)) {
            entry.multi_attach_reported = true;
        }
    }

    fn node_is_healthy(&self, node: &str) -> bool {
        self.nodes
            .get_named("", node)
            .and_then(|o| o.as_node())
            .and_then(|n| n.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
            .is_some_and(|c| c.status == "True")
    }

    fn out_of_service(&self, node: &str) -> bool {
        self.nodes
            .get_named("", node)
            .and_then(|o| o.as_node())
            .and_then(|n| n.spec.as_ref())
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|t| t.iter().any(|t| t.key == OUT_OF_SERVICE_TAINT && t.effect == "NoExecute"))
    }

    /// One pass of the reconciler: detaches, attaches, node statuses.
    fn reconcile_all(&mut self, ctx: &mut Ctx) -> Result<(), ApiError> {
        let now = ctx.now;
        // Detach what no pod on its node needs.
        let keys: Vec<(String, String)> = self.actual.keys().cloned().collect();
        for key in keys {
            let (volume, node) = &key;
            if self.desired.get(node).is_some_and(|v| v.contains_key(volume)) {
                if let Some(state) = self.actual.get_mut(&key) {
                    state.detach_requested_at = None;
                }
                continue;
            }
            if self.operations.contains_key(&key) {
                continue;
            }
            if let Some(at) = self.in_backoff(&key, now) {
                self.queue.add_after(reconcile_key(), at - now, ctx);
                continue;
            }
            let healthy = self.node_is_healthy(node);
            let out_of_service = self.out_of_service(node);
            let Some(state) = self.actual.get_mut(&key) else { continue };
            let requested = *state.detach_requested_at.get_or_insert(now);
            let timed_out = now.saturating_sub(requested) >= MAX_WAIT_FOR_UNMOUNT_MS;
            // Still mounted: wait, unless the node is unhealthy past maxWaitForUnmountDuration or out
            // of service.
            let force = timed_out && !healthy;
            if state.mounted_by_node && !force && !out_of_service {
                if !timed_out {
                    self.queue.add_after(reconcile_key(), requested + MAX_WAIT_FOR_UNMOUNT_MS - now, ctx);
                }
                continue;
            }
            // Off the node's volumesAttached first: no longer safe to mount there.
            if state.reported {
                state.reported = false;
                self.dirty_nodes.insert(node.clone());
            }
            let attachment = attachment_name(&state.handle, &state.driver, node);
            let info = kind_info("storage.k8s.io/v1", "VolumeAttachment").expect("served");
            match ctx.delete(info, "", &attachment, DeleteOptions::default()) {
                Ok(_) => {
                    self.operations.insert(key.clone(), Operation::Detach { attachment: attachment.clone() });
                    self.check_detach(&key, ctx);
                }
                Err(e) if e.code == 404 => {
                    self.actual.remove(&key);
                }
                Err(_) => self.fail_operation(&key, ctx),
            }
        }
        // Attach what pods need.
        let wanted: Vec<(String, String, VolumeToAttach)> =
            self.desired.iter().flat_map(|(node, volumes)| volumes.iter().map(move |(v, w)| (node.clone(), v.clone(), w.clone()))).collect();
        for (node, volume, want) in wanted {
            let key = (volume.clone(), node.clone());
            if self.actual.contains_key(&key) || self.operations.contains_key(&key) {
                continue;
            }
            if want.multi_attach_forbidden {
                let others: Vec<String> = self
                    .actual
                    .keys()
                    .chain(self.operations.iter().filter(|(_, op)| matches!(op, Operation::Attach { .. })).map(|(k, _)| k))
                    .filter(|(v, n)| *v == volume && *n != node)
                    .map(|(_, n)| n.clone())
                    .collect();
                if !others.is_empty() {
                    if !want.multi_attach_reported {
                        self.report_multi_attach(&volume, &node, &others, ctx);
                    }
                    continue;
                }
            }
            if let Some(at) = self.in_backoff(&key, now) {
                self.queue.add_after(reconcile_key(), at - now, ctx);
                continue;
            }
            // csiAttacher.Attach: the VolumeAttachment (AlreadyExists is fine), then the wait.
            let attachment = attachment_name(&want.handle, &want.driver, &node);
            let va = VolumeAttachment {
                metadata: ObjectMeta { name: Some(attachment.clone()), ..Default::default() },
                spec: VolumeAttachmentSpec {
                    attacher: want.driver.clone(),
                    node_name: node.clone(),
                    source: VolumeAttachmentSource { persistent_volume_name: Some(want.pv.clone()), inline_volume_spec: None },
                },
                status: None,
            };
            match ctx.create(Object::VolumeAttachment(Box::new(va))) {
                Ok(created) => {
                    self.attachments.put(created);
                }
                Err(e) if e.reason == "AlreadyExists" => {}
                Err(e) => {
                    let message = format!("AttachVolume.Attach failed for volume {:?} : {}", want.pv, e.message);
                    self.events_to_pods(ctx, &want.pods, "Warning", "FailedAttachVolume", &message);
                    self.fail_operation(&key, ctx);
                    continue;
                }
            }
            self.operations.insert(
                key.clone(),
                Operation::Attach { attachment, pv: want.pv.clone(), driver: want.driver.clone(), handle: want.handle.clone(), started: now },
            );
            self.queue.add_after(reconcile_key(), ATTACH_TIMEOUT_MS, ctx);
            self.check_attach(&key, ctx);
        }
        // Attach timeouts.
        let waiting: Vec<(String, String)> = self.operations.iter().filter(|(_, op)| matches!(op, Operation::Attach { .. })).map(|(k, _)| k.clone()).collect();
        for key in waiting {
            self.check_attach(&key, ctx);
        }
        self.update_node_statuses(ctx)
    }

    /// The CSI detacher's wait: the VolumeAttachment gone (detached) or a detachError (failed).
    fn check_detach(&mut self, key: &(String, String), ctx: &mut Ctx) {
        let Some(Operation::Detach { attachment }) = self.operations.get(key).cloned() else { return };
        match self.attachments.get_named("", &attachment).and_then(|o| va_of(o)) {
            None => {
                self.operations.remove(key);
                self.actual.remove(key);
                self.backoff.remove(key);
            }
            Some(va) if va.status.as_ref().and_then(|s| s.detach_error.as_ref()).is_some() && va.metadata.deletion_timestamp.is_some() => {
                // AddVolumeToReportAsAttached: the detach failed, the volume is still there.
                self.operations.remove(key);
                if let Some(state) = self.actual.get_mut(key) {
                    state.reported = true;
                    self.dirty_nodes.insert(key.1.clone());
                }
                self.fail_operation(key, ctx);
            }
            Some(_) => {}
        }
    }

    /// The node status updater: `status.volumesAttached` of the nodes whose list changed.
    fn update_node_statuses(&mut self, ctx: &mut Ctx) -> Result<(), ApiError> {
        let nodes: Vec<String> = std::mem::take(&mut self.dirty_nodes).into_iter().collect();
        let mut result = Ok(());
        for node in nodes {
            let mut attached: Vec<AttachedVolume> = self
                .actual
                .iter()
                .filter(|((_, n), s)| *n == node && s.reported)
                .map(|((v, _), _)| AttachedVolume { name: v.clone(), device_path: String::new() })
                .collect();
            kubesim_api::sort::sort_by(&mut attached, |a, b| a.name.cmp(&b.name));
            let Some(Object::Node(current)) = ctx.api.lookup(("", "nodes"), "", &node).map(|o| (**o).clone()) else { continue };
            let mut updated: Node = *current;
            let status = updated.status.get_or_insert_with(Default::default);
            let list = (!attached.is_empty()).then_some(attached);
            if status.volumes_attached == list {
                continue;
            }
            status.volumes_attached = list;
            match ctx.update_status(Object::Node(Box::new(updated))) {
                Ok(written) => {
                    self.nodes.put(written);
                }
                Err(e) => {
                    self.dirty_nodes.insert(node);
                    result = Err(e);
                }
            }
        }
        result
    }
}

impl Reconciler for AttachDetachController {
    fn name(&self) -> &'static str {
        "attachdetach-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "pods")) => pods,
        Informer::all(("", "nodes")) => nodes,
        Informer::all(("", "persistentvolumeclaims")) => claims,
        Informer::all(("", "persistentvolumes")) => volumes,
        Informer::all(("storage.k8s.io", "csidrivers")) => drivers,
        Informer::all(("storage.k8s.io", "volumeattachments")) => attachments,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        // populateActualStateOfWorld: attachments the external-attacher reports attached.
        let attached: Vec<VolumeAttachment> =
            self.attachments.iter().filter_map(|o| va_of(o)).filter(|va| va.status.as_ref().is_some_and(|s| s.attached)).cloned().collect();
        for va in attached {
            let pv_name = va.spec.source.persistent_volume_name.clone().unwrap_or_default();
            let Some(pv) = self.volumes.get_named("", &pv_name).and_then(|o| decode::<PersistentVolume>(o)) else { continue };
            let Some(csi) = pv_csi_source(&pv) else { continue };
            let key = (unique_volume_name(&csi.driver, &csi.volume_handle), va.spec.node_name.clone());
            let state = AttachedState {
                pv: pv_name,
                driver: csi.driver.clone(),
                handle: csi.volume_handle.clone(),
                mounted_by_node: true,
                detach_requested_at: None,
                reported: true,
            };
            self.actual.insert(key, state);
        }
        let nodes: Vec<String> = self.nodes.iter().map(|o| o.name().to_string()).collect();
        for node in nodes {
            self.process_volumes_in_use(&node);
        }
        let pods: Vec<(Key, String)> = self.pods.iter().map(|o| (key_of(o), uid_of(o.metadata()).to_string())).collect();
        for (key, uid) in pods {
            self.process_pod(&key, &uid);
        }
        self.queue.add(reconcile_key(), ctx);
    }
    fn keeps(&self, resource: kubesim_store::Resource, object: &Object) -> bool {
        // Upstream's shared informer holds every pod; no handler here acts on one without claims.
        keeps_pods_with_claims(resource, object)
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("", "pods") => {
                let key = key_of(&event.object);
                let uid = uid_of(event.object.metadata()).to_string();
                let relevant = self.pod_entries.contains_key(&uid) || event.object.as_pod().is_some_and(|p| !kubesim_api::pod::claim_names(p).is_empty());
                if !relevant {
                    return;
                }
                self.process_pod(&key, &uid);
            }
            ("", "nodes") => {
                let node = event.object.name().to_string();
                // Most node updates (heartbeats) concern no volume.
                let attached_here = self.actual.keys().any(|(_, n)| *n == node);
                if !attached_here && !self.desired.contains_key(&node) {
                    return;
                }
                if event.event_type == EventType::Deleted {
                    self.desired.remove(&node);
                }
                self.process_volumes_in_use(&node);
            }
            ("storage.k8s.io", "volumeattachments") => {
                let keys: Vec<(String, String)> = self
                    .operations
                    .iter()
                    .filter(
                        |(_, op)| matches!(op, Operation::Attach { attachment, .. } | Operation::Detach { attachment } if attachment == event.object.name()),
                    )
                    .map(|(k, _)| k.clone())
                    .collect();
                for key in keys {
                    self.check_attach(&key, ctx);
                    self.check_detach(&key, ctx);
                }
            }
            _ => {
                if self.claim_pods.is_empty() {
                    return;
                }
                self.reprocess_claim_pods();
            }
        }
        self.queue.add(reconcile_key(), ctx);
    }
    fn reconcile(&mut self, _key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.reconcile_all(ctx).map(|_| Action::AwaitChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // pkg/controller/volume/attachdetach/reconciler/reconciler_test.go Test_ReportMultiAttachError:
    // node1's pod ns1/pod1 wants the volume; the other nodes' pods hold it.
    #[test]
    fn multi_attach_messages_follow_report_multi_attach_error() {
        let pods = |names: &[&str]| -> Vec<(String, String)> {
            names.iter().map(|n| n.split_once('/').map(|(a, b)| (a.to_string(), b.to_string())).unwrap()).collect()
        };
        type Case = (&'static str, Vec<(String, String)>, &'static str);
        let cases: [Case; 4] = [
            (
                "no pods use the volume",
                pods(&[]),
                "Multi-Attach error for volume \"volume-name\" Volume is already exclusively attached to one node and can't be attached to another",
            ),
            (
                "pods in the same namespace use the volume",
                pods(&["ns1/pod2"]),
                "Multi-Attach error for volume \"volume-name\" Volume is already used by pod(s) pod2",
            ),
            (
                "pods in another namespace use the volume",
                pods(&["ns2/pod2"]),
                "Multi-Attach error for volume \"volume-name\" Volume is already used by 1 pod(s) in different namespaces",
            ),
            (
                "pods both in the same and another namespace use the volume",
                pods(&["ns2/pod2", "ns1/pod3"]),
                "Multi-Attach error for volume \"volume-name\" Volume is already used by pod(s) pod3 and 1 pod(s) in different namespaces",
            ),
        ];
        for (name, holders, want) in cases {
            assert_eq!(multi_attach_message("volume-name", "ns1", &holders), want, "{name}");
        }
    }

    #[test]
    fn terminated_pods_need_no_volumes() {
        use kubesim_api::k8s_openapi::api::core::v1::{ContainerState, ContainerStateRunning, ContainerStatus, PodStatus};
        let mut pod = Pod { status: Some(PodStatus { phase: Some("Running".into()), ..Default::default() }), ..Default::default() };
        assert!(!is_pod_terminated(&pod));
        pod.metadata.deletion_timestamp = Some(kubesim_api::time::time_at(0));
        assert!(is_pod_terminated(&pod), "deleted with no container running");
        pod.status.as_mut().unwrap().container_statuses = Some(vec![ContainerStatus {
            state: Some(ContainerState { running: Some(ContainerStateRunning::default()), ..Default::default() }),
            ..Default::default()
        }]);
        assert!(!is_pod_terminated(&pod), "a container still runs");
        pod.status.as_mut().unwrap().phase = Some("Succeeded".into());
        assert!(is_pod_terminated(&pod));
    }
}
