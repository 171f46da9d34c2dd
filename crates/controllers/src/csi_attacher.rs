//! The external-attacher sidecar (kubernetes-csi/external-attacher, pkg/controller/csi_handler.go),
//! one per CSI driver that attaches, running beside kube-controller-manager as the driver's
//! controller Deployment does. It serves the VolumeAttachments whose `spec.attacher` is its
//! driver:
//!
//! - attach (`syncAttach`): the finalizer `external-attacher/<driver>` on the PV and on the
//!   VolumeAttachment (with the node's CSI id in `csi.alpha.kubernetes.io/node-id`, from the
//!   node's CSINode), then ControllerPublishVolume with the PV's volume attributes, after the
//!   call's modelled latency; success writes `status.attached: true` and the publish context as
//!   `status.attachmentMetadata`, failure `status.attachError` (retried from 1 s, doubling to
//!   5 min: `--retry-interval-start` / `--retry-interval-max`);
//! - detach (`syncDetach`, a VolumeAttachment being deleted): ControllerUnpublishVolume, then
//!   `attached: false` and the finalizer off, so the object goes; failure writes
//!   `status.detachError`;
//! - a PV being deleted loses the finalizer once no VolumeAttachment names it.
//!
//! It records no Events (the attach/detach controller reports attach results on the pods).

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::csi::attacher_finalizer;
use kubesim_api::k8s_openapi::api::core::v1::PersistentVolume;
use kubesim_api::k8s_openapi::api::storage::v1::{VolumeAttachment, VolumeAttachmentStatus, VolumeError};
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_host::csi::{latency_ms, CsiCall, Driver};
use kubesim_runtime::Ctx;
use std::collections::{BTreeMap, BTreeSet};

/// Where the attacher remembers the node's CSI id on a VolumeAttachment (for detaching from a
/// node whose CSINode is gone).
pub const ANN_NODE_ID: &str = "csi.alpha.kubernetes.io/node-id";
/// `--retry-interval-start`.
pub const RETRY_START_MS: Millis = 1_000;
/// `--retry-interval-max`.
pub const RETRY_MAX_MS: Millis = 5 * 60_000;
/// `--timeout` of each CSI call (the modelled calls never take that long).
pub const CALL_TIMEOUT_MS: Millis = 15_000;
/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;
const TOKEN_BASE: u64 = 16;
/// The key namespace of PersistentVolume keys in the work queue (VolumeAttachments use "").
const PV_KEY: &str = "pv";

/// The actor name of a driver's attacher.
pub fn actor(driver: Driver) -> &'static str {
    match driver {
        Driver::Disk => "csi-attacher-disk",
        Driver::HostPath => "csi-attacher-hostpath",
    }
}

#[derive(Clone, Debug)]
enum Op {
    Attach { name: String, uid: String, node_id: String },
    Detach { name: String, uid: String, node_id: String },
}

/// One driver's external-attacher.
#[derive(Clone, Debug)]
pub struct CsiAttacher {
    driver: Driver,
    attachments: Cache,
    volumes: Cache,
    csinodes: Cache,
    queue: WorkQueue,
    in_flight: BTreeMap<u64, Op>,
    busy: BTreeSet<String>,
    /// Consecutive failures per VolumeAttachment (the rate limiter's memory).
    failures: BTreeMap<String, u32>,
    next_token: u64,
}

fn va_of(object: &Object) -> Option<&VolumeAttachment> {
    match object {
        Object::VolumeAttachment(va) => Some(va),
        _ => None,
    }
}

impl CsiAttacher {
    /// The attacher of a driver, with empty caches.
    pub fn new(driver: Driver) -> CsiAttacher {
        CsiAttacher {
            driver,
            attachments: Cache::default(),
            volumes: Cache::default(),
            csinodes: Cache::default(),
            queue: WorkQueue::new(LATENCY_MS),
            in_flight: BTreeMap::new(),
            busy: BTreeSet::new(),
            failures: BTreeMap::new(),
            next_token: TOKEN_BASE,
        }
    }

    fn finalizer(&self) -> String {
        attacher_finalizer(self.driver.name())
    }

    /// The exponential backoff after a failure (1 s doubling to 5 min).
    fn backoff(&mut self, name: &str) -> Millis {
        let n = self.failures.entry(name.to_string()).or_default();
        let delay = RETRY_START_MS.saturating_mul(1 << (*n).min(20)).min(RETRY_MAX_MS);
        *n += 1;
        delay
    }

    /// `getNodeID`: the node's id in its CSINode, else the one remembered on the attachment.
    fn node_id(&self, va: &VolumeAttachment) -> Result<String, String> {
        let node = &va.spec.node_name;
        if let Some(Object::CSINode(csinode)) = self.csinodes.get_named("", node).map(|o| o.as_ref()) {
            if let Some(d) = csinode.spec.drivers.iter().find(|d| d.name == self.driver.name()) {
                return Ok(d.node_id.clone());
            }
        }
        va.metadata.annotations.as_ref().and_then(|a| a.get(ANN_NODE_ID)).cloned().ok_or_else(|| format!("node {node:?} has no NodeID annotation"))
    }

    fn start(&mut self, op: Op, call: CsiCall, ctx: &mut Ctx) {
        let (Op::Attach { name, .. } | Op::Detach { name, .. }) = &op;
        self.busy.insert(name.clone());
        let token = self.next_token;
        self.next_token += 1;
        self.in_flight.insert(token, op);
        ctx.after(latency_ms(self.driver, call), token);
    }

    /// Writes the attachment's status (the status subresource), keeping the cache fresh.
    fn save_status(&mut self, ctx: &mut Ctx, va: &VolumeAttachment, status: VolumeAttachmentStatus) -> Result<VolumeAttachment, ApiError> {
        let mut updated = va.clone();
        updated.status = Some(status);
        let written = ctx.update_status(Object::VolumeAttachment(Box::new(updated)))?;
        let fresh = va_of(&written).cloned().unwrap_or_default();
        self.attachments.put(written);
        Ok(fresh)
    }

    fn sync_attachment(&mut self, name: &str, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let Some(object) = self.attachments.get_named("", name).cloned() else { return Ok(Action::AwaitChange) };
        let Some(va) = va_of(&object).cloned() else { return Ok(Action::AwaitChange) };
        if va.spec.attacher != self.driver.name() || self.busy.contains(name) {
            return Ok(Action::AwaitChange);
        }
        let finalizer = self.finalizer();
        let has_finalizer = va.metadata.finalizers.iter().flatten().any(|f| *f == finalizer);
        if va.metadata.deletion_timestamp.is_some() {
            if !has_finalizer {
                return Ok(Action::AwaitChange);
            }
            let node_id = match self.node_id(&va) {
                Ok(id) => id,
                Err(why) => {
                    let status = VolumeAttachmentStatus { detach_error: Some(volume_error(ctx, why)), ..va.status.clone().unwrap_or_default() };
                    self.save_status(ctx, &va, status)?;
                    return Ok(Action::RequeueAfter(self.backoff(name)));
                }
            };
            let uid = va.metadata.uid.clone().unwrap_or_default();
            self.start(Op::Detach { name: name.to_string(), uid, node_id }, CsiCall::ControllerUnpublishVolume, ctx);
            return Ok(Action::AwaitChange);
        }
        if va.status.as_ref().is_some_and(|s| s.attached) {
            return Ok(Action::AwaitChange);
        }
        // csiAttach: the PV, its finalizer, ours, the node's id, then the call.
        let pv_name = va.spec.source.persistent_volume_name.clone().unwrap_or_default();
        let pv_object = self.volumes.get_named("", &pv_name).cloned();
        let Some(pv_object) = pv_object else {
            let status = VolumeAttachmentStatus {
                attach_error: Some(volume_error(ctx, format!("persistentvolume {pv_name:?} not found"))),
                ..va.status.clone().unwrap_or_default()
            };
            self.save_status(ctx, &va, status)?;
            return Ok(Action::RequeueAfter(self.backoff(name)));
        };
        if !pv_object.metadata().finalizers.iter().flatten().any(|f| *f == finalizer) {
            let updated = patch_meta(ctx, &pv_object, |m| m.finalizers.get_or_insert_with(Vec::new).push(finalizer.clone()))?;
            self.volumes.put(updated);
        }
        let node_id = self.node_id(&va);
        let remembered = va.metadata.annotations.as_ref().and_then(|a| a.get(ANN_NODE_ID)).cloned();
        let mut va = va;
        if !has_finalizer || (node_id.is_ok() && remembered.as_ref() != node_id.as_ref().ok()) {
            let id = node_id.clone().ok();
            let updated = patch_meta(ctx, &object, |m| {
                let finalizers = m.finalizers.get_or_insert_with(Vec::new);
                if !finalizers.contains(&finalizer) {
                    finalizers.push(finalizer.clone());
                }
                if let Some(id) = id {
                    m.annotations.get_or_insert_with(Default::default).insert(ANN_NODE_ID.to_string(), id);
                }
            })?;
            va = va_of(&updated).cloned().unwrap_or(va);
            self.attachments.put(updated);
        }
        let node_id = match node_id {
            Ok(id) => id,
            Err(why) => {
                let status = VolumeAttachmentStatus { attach_error: Some(volume_error(ctx, why)), ..va.status.clone().unwrap_or_default() };
                self.save_status(ctx, &va, status)?;
                return Ok(Action::RequeueAfter(self.backoff(name)));
            }
        };
        let uid = va.metadata.uid.clone().unwrap_or_default();
        self.start(Op::Attach { name: name.to_string(), uid, node_id }, CsiCall::ControllerPublishVolume, ctx);
        Ok(Action::AwaitChange)
    }

    /// A PV being deleted keeps our finalizer while an attachment names it.
    fn sync_volume(&mut self, name: &str, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let Some(object) = self.volumes.get_named("", name).cloned() else { return Ok(Action::AwaitChange) };
        let finalizer = self.finalizer();
        if object.metadata().deletion_timestamp.is_none() || !object.metadata().finalizers.iter().flatten().any(|f| *f == finalizer) {
            return Ok(Action::AwaitChange);
        }
        let needed = self.attachments.iter().filter_map(|o| va_of(o)).any(|va| va.spec.source.persistent_volume_name.as_deref() == Some(name));
        if !needed {
            let updated = patch_meta(ctx, &object, |m| {
                if let Some(f) = m.finalizers.as_mut() {
                    f.retain(|x| *x != finalizer);
                    if f.is_empty() {
                        m.finalizers = None;
                    }
                }
            })?;
            self.volumes.put(updated);
        }
        Ok(Action::AwaitChange)
    }

    /// A ControllerPublishVolume / ControllerUnpublishVolume call's latency has passed: make it
    /// and record the result.
    fn complete(&mut self, op: Op, ctx: &mut Ctx) -> Result<(), ApiError> {
        let (Op::Attach { name, uid, .. } | Op::Detach { name, uid, .. }) = &op;
        let name = name.clone();
        self.busy.remove(&name);
        let Some(Object::VolumeAttachment(va)) = ctx.api.lookup(("storage.k8s.io", "volumeattachments"), "", &name).map(|o| (**o).clone()) else {
            return Ok(());
        };
        if va.metadata.uid.as_deref() != Some(uid.as_str()) {
            return Ok(());
        }
        let va = *va;
        let pv_name = va.spec.source.persistent_volume_name.clone().unwrap_or_default();
        let pv = ctx.api.lookup(("", "persistentvolumes"), "", &pv_name).and_then(|o| o.decode::<PersistentVolume>());
        let csi = pv.as_ref().and_then(kubesim_api::csi::pv_csi_source).cloned().unwrap_or_default();
        match op {
            Op::Attach { node_id, .. } => {
                if va.metadata.deletion_timestamp.is_some() {
                    self.queue.add((String::new(), name), ctx);
                    return Ok(());
                }
                ctx.note(
                    format!("csi/{}", self.driver.name()),
                    CsiCall::ControllerPublishVolume.name(),
                    format!("{} to {node_id} ({})", csi.volume_handle, va.spec.node_name),
                );
                let attributes = csi.volume_attributes.clone().unwrap_or_default();
                let result = self.driver.controller_publish(ctx.cloud, &csi.volume_handle, &node_id, &attributes);
                let status = match result {
                    Ok(context) => {
                        self.failures.remove(&name);
                        VolumeAttachmentStatus { attached: true, attachment_metadata: Some(context), attach_error: None, detach_error: None }
                    }
                    Err(e) => {
                        let delay = self.backoff(&name);
                        self.queue.add_after((String::new(), name.clone()), delay, ctx);
                        VolumeAttachmentStatus { attach_error: Some(volume_error(ctx, e.to_string())), ..va.status.clone().unwrap_or_default() }
                    }
                };
                self.save_status(ctx, &va, status)?;
            }
            Op::Detach { node_id, .. } => {
                ctx.note(
                    format!("csi/{}", self.driver.name()),
                    CsiCall::ControllerUnpublishVolume.name(),
                    format!("{} from {node_id} ({})", csi.volume_handle, va.spec.node_name),
                );
                match self.driver.controller_unpublish(ctx.cloud, &csi.volume_handle, &node_id) {
                    Ok(()) => {
                        self.failures.remove(&name);
                        // markAsDetached: attached false, then the finalizer off (the object goes).
                        let status = VolumeAttachmentStatus { attached: false, attachment_metadata: None, attach_error: None, detach_error: None };
                        let va = self.save_status(ctx, &va, status)?;
                        let finalizer = self.finalizer();
                        let object = Object::VolumeAttachment(Box::new(va));
                        patch_meta(ctx, &object, |m| {
                            if let Some(f) = m.finalizers.as_mut() {
                                f.retain(|x| *x != finalizer);
                                if f.is_empty() {
                                    m.finalizers = None;
                                }
                            }
                        })?;
                        // The PV may now lose its finalizer.
                        self.queue.add((PV_KEY.to_string(), pv_name), ctx);
                    }
                    Err(e) => {
                        let delay = self.backoff(&name);
                        self.queue.add_after((String::new(), name.clone()), delay, ctx);
                        let status = VolumeAttachmentStatus { detach_error: Some(volume_error(ctx, e.to_string())), ..va.status.clone().unwrap_or_default() };
                        self.save_status(ctx, &va, status)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// `shouldEnqueueVAChange`: a change that only posts an attach or detach error (our own write
/// a moment ago) is not queued, or the next call would break the exponential backoff. (Upstream
/// queues an unchanged resourceVersion as a periodic resync; here it is the echo of a write
/// already in our cache, and there is no resync.)
fn should_enqueue_change(old: &VolumeAttachment, new: &VolumeAttachment) -> bool {
    if old.metadata.resource_version == new.metadata.resource_version {
        return false;
    }
    let errors = |va: &VolumeAttachment| va.status.as_ref().map(|s| (s.attach_error.clone(), s.detach_error.clone())).unwrap_or_default();
    if errors(old) == (None, None) && errors(new) == (None, None) {
        return true;
    }
    let mut sanitized = new.clone();
    sanitized.metadata.resource_version = old.metadata.resource_version.clone();
    let status = sanitized.status.get_or_insert_with(Default::default);
    let (attach, detach) = errors(old);
    status.attach_error = attach;
    status.detach_error = detach;
    let old_status = old.status.clone().unwrap_or_default();
    let mut old = old.clone();
    old.status = Some(old_status);
    old != sanitized
}

fn volume_error(ctx: &Ctx, message: String) -> VolumeError {
    VolumeError { message: Some(message), time: Some(now_time(ctx)), error_code: None }
}

impl Reconciler for CsiAttacher {
    fn name(&self) -> &'static str {
        actor(self.driver)
    }
    crate::informers! {
        queue: queue;
        Informer::all(("storage.k8s.io", "volumeattachments")) => attachments,
        Informer::all(("", "persistentvolumes")) => volumes,
        Informer::all(("storage.k8s.io", "csinodes")) => csinodes,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let keys: Vec<Key> = self
            .attachments
            .iter()
            .map(|o| (String::new(), o.name().to_string()))
            .chain(self.volumes.iter().map(|o| (PV_KEY.to_string(), o.name().to_string())))
            .collect();
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("storage.k8s.io", "volumeattachments") => {
                if event.event_type == kubesim_store::EventType::Deleted {
                    self.failures.remove(event.object.name());
                    if let Some(pv) = va_of(&event.object).and_then(|va| va.spec.source.persistent_volume_name.clone()) {
                        self.queue.add((PV_KEY.to_string(), pv), ctx);
                    }
                    return;
                }
                let filtered = match (change.old.as_deref().and_then(va_of), va_of(&event.object)) {
                    (Some(old), Some(new)) => !should_enqueue_change(old, new),
                    _ => false,
                };
                if !filtered {
                    self.queue.add((String::new(), event.object.name().to_string()), ctx);
                }
            }
            ("", "persistentvolumes") if event.event_type != kubesim_store::EventType::Deleted => {
                self.queue.add((PV_KEY.to_string(), event.object.name().to_string()), ctx);
            }
            _ => {}
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        if key.0 == PV_KEY {
            self.sync_volume(&key.1, ctx)
        } else {
            self.sync_attachment(&key.1, ctx)
        }
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let Some(op) = self.in_flight.remove(&token) else { return };
        let name = match &op {
            Op::Attach { name, .. } | Op::Detach { name, .. } => name.clone(),
        };
        if self.complete(op, ctx).is_err() {
            self.busy.remove(&name);
            self.queue.add_rate_limited((String::new(), name), ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_api::k8s_openapi::api::storage::v1::VolumeAttachmentSpec;

    // external-attacher pkg/controller/controller_test.go TestShouldEnqueueVAChange: changes that
    // only post Status.AttachError / DetachError are not queued. (An unchanged resourceVersion
    // is a periodic resync upstream and queued; here it is our own write's echo.)
    #[test]
    fn only_error_postings_are_not_queued() {
        let base = |rv: &str| VolumeAttachment {
            metadata: kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta { resource_version: Some(rv.into()), ..Default::default() },
            spec: VolumeAttachmentSpec { attacher: "a".into(), node_name: "n".into(), ..Default::default() },
            status: None,
        };
        let error = |m: &str| Some(VolumeError { message: Some(m.into()), ..Default::default() });
        let with_status = |rv: &str, status: VolumeAttachmentStatus| VolumeAttachment { status: Some(status), ..base(rv) };
        let with_finalizer = |va: VolumeAttachment| {
            let mut va = va;
            va.metadata.finalizers = Some(vec!["f".into()]);
            va
        };
        let cases: Vec<(&str, VolumeAttachment, VolumeAttachment, bool)> = vec![
            ("same resourceVersion", base("1"), base("1"), false),
            ("metadata change", base("1"), with_finalizer(base("2")), true),
            ("attachError posted", base("1"), with_status("2", VolumeAttachmentStatus { attach_error: error("x"), ..Default::default() }), false),
            ("detachError posted", base("1"), with_status("2", VolumeAttachmentStatus { detach_error: error("x"), ..Default::default() }), false),
            (
                "attachError changed",
                with_status("1", VolumeAttachmentStatus { attach_error: error("x"), ..Default::default() }),
                with_status("2", VolumeAttachmentStatus { attach_error: error("y"), ..Default::default() }),
                false,
            ),
            (
                "attachError and a finalizer",
                base("1"),
                with_finalizer(with_status("2", VolumeAttachmentStatus { attach_error: error("x"), ..Default::default() })),
                true,
            ),
            ("attached", base("1"), with_status("2", VolumeAttachmentStatus { attached: true, ..Default::default() }), true),
        ];
        for (name, old, new, want) in cases {
            assert_eq!(should_enqueue_change(&old, &new), want, "{name}");
        }
    }
}
