//! The external-resizer sidecar (kubernetes-csi/external-resizer, pkg/controller/controller.go
//! and expand_and_recover.go, the RecoverVolumeExpansionFailure flow v1.34 runs), one per CSI
//! driver, running beside kube-controller-manager as the driver's controller Deployment does.
//! It serves the bound claims whose PV is a CSI volume of its driver and whose storage request
//! is larger than `status.capacity`:
//!
//! 1. `markControllerResizeInProgress`: the claim's status gets the `Resizing` condition,
//!    `allocatedResources.storage` = the new size and `allocatedResourceStatuses.storage:
//!    ControllerResizeInProgress`; event Normal `Resizing` `External resizer is resizing volume
//!    <pv>`;
//! 2. ControllerExpandVolume with the driver's modelled latency; the PV's `spec.capacity`
//!    becomes the size the driver answers;
//! 3. when the driver needs the node to finish (`node_expansion_required`),
//!    `markForPendingNodeExpansion`: condition `FileSystemResizePending` ("Waiting for user to
//!    (re-)start a pod to finish file system resize of volume on node.") instead of `Resizing`,
//!    `allocatedResourceStatuses.storage: NodeResizePending`, event Normal
//!    `FileSystemResizeRequired` `Require file system resize of volume on node` — the kubelet
//!    that mounts the volume finishes (see the kubelet's volume manager); otherwise
//!    `markOverallExpansionAsFinished`: `status.capacity` = the new size, the resize
//!    conditions and status gone, event Normal `VolumeResizeSuccessful` `Resize volume
//!    succeeded`.
//!
//! A failed call is a Warning `VolumeResizeFailed` `resize volume "<pv>" by resizer "<driver>"
//! failed: <error>`, retried with the work queue's backoff. Events come from
//! `external-resizer <driver>`.
//!
//! Not modelled: kube-controller-manager's expand controller (its `ExternalExpanding` event and
//! the `volume.kubernetes.io/storage-resizer` annotation), offline-only drivers (in-use
//! errors), infeasible errors and the slow retry set, the PV's pre-resize-capacity annotation.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimCondition};
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::quantity::{format_value, Format};
use kubesim_api::storage::{
    claim_capacity, claim_request, claim_resize_status, merge_resize_conditions, volume_capacity, CONDITION_FS_RESIZE_PENDING, CONDITION_RESIZING,
    CONTROLLER_RESIZE_IN_PROGRESS, FS_RESIZE_PENDING_MESSAGE, NODE_RESIZE_IN_PROGRESS, NODE_RESIZE_PENDING,
};
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_host::csi::{latency_ms, CsiCall, Driver};
use kubesim_runtime::Ctx;
use std::collections::{BTreeMap, BTreeSet};

/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;
const TOKEN_BASE: u64 = 16;

/// The actor name of a driver's resizer.
pub fn actor(driver: Driver) -> &'static str {
    match driver {
        Driver::Disk => "csi-resizer-disk",
        Driver::HostPath => "csi-resizer-hostpath",
    }
}

#[derive(Clone, Debug)]
struct Op {
    key: Key,
    uid: String,
    pv: String,
    size: i128,
}

/// One driver's external-resizer.
#[derive(Clone, Debug)]
pub struct CsiResizer {
    driver: Driver,
    claims: Cache,
    volumes: Cache,
    queue: WorkQueue,
    in_flight: BTreeMap<u64, Op>,
    busy: BTreeSet<Key>,
    next_token: u64,
}

fn bytes(size: i128) -> Quantity {
    Quantity(format_value(size, Format::BinarySI))
}

fn has_condition(claim: &PersistentVolumeClaim, type_: &str) -> bool {
    claim.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|c| c.iter().any(|c| c.type_ == type_ && c.status == "True"))
}

impl CsiResizer {
    /// The resizer of a driver, with empty caches.
    pub fn new(driver: Driver) -> CsiResizer {
        CsiResizer {
            driver,
            claims: Cache::default(),
            volumes: Cache::default(),
            queue: WorkQueue::new(LATENCY_MS),
            in_flight: BTreeMap::new(),
            busy: BTreeSet::new(),
            next_token: TOKEN_BASE,
        }
    }

    /// `pvcNeedResize`: bound, with a volume, asking for more than it has.
    fn claim_needs_resize(claim: &PersistentVolumeClaim) -> bool {
        claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
            && claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()).is_some_and(|v| !v.is_empty())
            && claim_request(claim) > claim_capacity(claim)
    }

    /// `CanSupport` and the claim-reference check of `pvCanBeExpanded`.
    fn serves(&self, claim: &PersistentVolumeClaim, pv: &PersistentVolume) -> bool {
        let ours = kubesim_api::csi::pv_csi_source(pv).is_some_and(|c| c.driver == self.driver.name());
        let claim_ref = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
        ours && claim_ref.is_some_and(|r| r.namespace == claim.metadata.namespace && r.uid == claim.metadata.uid)
    }

    /// The size to expand to (`expandAndRecover`'s choice), or `None` when there is nothing
    /// for the controller to do.
    fn new_size(claim: &PersistentVolumeClaim, pv: &PersistentVolume) -> Option<i128> {
        let spec = claim_request(claim);
        let pv_size = volume_capacity(pv);
        let status = claim_resize_status(claim);
        let allocated = claim
            .status
            .as_ref()
            .and_then(|s| s.allocated_resources.as_ref())
            .filter(|a| a.contains_key("storage"))
            .map(|a| kubesim_api::storage::storage_of(Some(a)));
        if pv_size < spec {
            match status.as_str() {
                NODE_RESIZE_PENDING | NODE_RESIZE_IN_PROGRESS => {
                    // Let the node finish the earlier expansion first.
                    let size = allocated.unwrap_or(spec);
                    (pv_size < size).then_some(size)
                }
                CONTROLLER_RESIZE_IN_PROGRESS => Some(allocated.unwrap_or(spec)),
                _ => Some(spec),
            }
        } else {
            match status.as_str() {
                NODE_RESIZE_PENDING | NODE_RESIZE_IN_PROGRESS => None,
                CONTROLLER_RESIZE_IN_PROGRESS => Some(allocated.unwrap_or(spec)),
                "" if allocated.is_some() => allocated,
                _ if has_condition(claim, CONDITION_FS_RESIZE_PENDING) => None,
                _ => Some(spec),
            }
        }
    }

    fn save_status(&mut self, ctx: &mut Ctx, claim: &PersistentVolumeClaim) -> Result<PersistentVolumeClaim, ApiError> {
        let written = ctx.update_status(encode(claim, "v1", "PersistentVolumeClaim"))?;
        let fresh = decode::<PersistentVolumeClaim>(&written).unwrap_or_else(|| claim.clone());
        self.claims.put(written);
        Ok(fresh)
    }

    fn sync_claim(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        if self.busy.contains(key) {
            return Ok(());
        }
        let Some(object) = self.claims.get(key).cloned() else { return Ok(()) };
        let Some(claim) = decode::<PersistentVolumeClaim>(&object) else { return Ok(()) };
        if !Self::claim_needs_resize(&claim) {
            return Ok(());
        }
        let pv_name = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).unwrap_or_default();
        let Some(pv) = self.volumes.get_named("", &pv_name).and_then(|o| decode::<PersistentVolume>(o)) else { return Ok(()) };
        if !self.serves(&claim, &pv) {
            return Ok(());
        }
        let Some(size) = Self::new_size(&claim, &pv) else { return Ok(()) };
        // markControllerResizeInProgress (no write when the same size is allocated already).
        let mut claim = claim;
        let allocated = claim.status.as_ref().and_then(|s| s.allocated_resources.as_ref()).map(|a| kubesim_api::storage::storage_of(Some(a)));
        if allocated != Some(size) || claim_resize_status(&claim) != CONTROLLER_RESIZE_IN_PROGRESS {
            let mut updated = claim.clone();
            let status = updated.status.get_or_insert_with(Default::default);
            let resizing = PersistentVolumeClaimCondition {
                type_: CONDITION_RESIZING.into(),
                status: "True".into(),
                last_transition_time: Some(now_time(ctx)),
                ..Default::default()
            };
            status.conditions = Some(merge_resize_conditions(status.conditions.as_deref().unwrap_or_default(), vec![resizing]));
            status.allocated_resource_statuses.get_or_insert_with(Default::default).insert("storage".into(), CONTROLLER_RESIZE_IN_PROGRESS.into());
            status.allocated_resources.get_or_insert_with(Default::default).insert("storage".into(), bytes(size));
            claim = self.save_status(ctx, &updated)?;
        }
        let object = self.claims.get(key).cloned().unwrap_or(object);
        ctx.event(&object, "Normal", "Resizing", format!("External resizer is resizing volume {pv_name}"));
        let token = self.next_token;
        self.next_token += 1;
        self.busy.insert(key.clone());
        self.in_flight.insert(token, Op { key: key.clone(), uid: claim.metadata.uid.clone().unwrap_or_default(), pv: pv_name, size });
        ctx.after(latency_ms(self.driver, CsiCall::ControllerExpandVolume), token);
        Ok(())
    }

    /// `callResizeOnPlugin`: the call's latency has passed.
    fn complete(&mut self, op: &Op, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = ctx.api.lookup(("", "persistentvolumeclaims"), &op.key.0, &op.key.1).cloned() else { return Ok(()) };
        let Some(claim) = object.decode::<PersistentVolumeClaim>() else { return Ok(()) };
        if claim.metadata.uid.as_deref() != Some(op.uid.as_str()) {
            return Ok(());
        }
        let Some(pv) = ctx.api.lookup(("", "persistentvolumes"), "", &op.pv).and_then(|o| o.decode::<PersistentVolume>()) else { return Ok(()) };
        let handle = kubesim_api::csi::pv_csi_source(&pv).map(|c| c.volume_handle.clone()).unwrap_or_default();
        ctx.note(
            format!("csi/{}", self.driver.name()),
            CsiCall::ControllerExpandVolume.name(),
            format!("{handle} ({}) to {}", op.pv, format_value(op.size, Format::BinarySI)),
        );
        let (size, node_expansion) = match self.driver.controller_expand(ctx.cloud, &handle, op.size) {
            Ok(answer) => answer,
            Err(e) => {
                let message = format!("resize volume {:?} by resizer {:?} failed: {e}", op.pv, self.driver.name());
                ctx.event(&object, "Warning", "VolumeResizeFailed", message.clone());
                return Err(ApiError::bad_request(message));
            }
        };
        // updatePVCapacity.
        let mut updated_pv = pv.clone();
        updated_pv.spec.get_or_insert_with(Default::default).capacity.get_or_insert_with(Default::default).insert("storage".into(), bytes(size));
        let written = ctx.update(encode(&updated_pv, "v1", "PersistentVolume"))?;
        self.volumes.put(written);
        let mut updated = claim.clone();
        let status = updated.status.get_or_insert_with(Default::default);
        let old_conditions = status.conditions.clone().unwrap_or_default();
        if node_expansion {
            // markForPendingNodeExpansion.
            let pending = PersistentVolumeClaimCondition {
                type_: CONDITION_FS_RESIZE_PENDING.into(),
                status: "True".into(),
                last_transition_time: Some(now_time(ctx)),
                message: Some(FS_RESIZE_PENDING_MESSAGE.into()),
                ..Default::default()
            };
            status.conditions = Some(merge_resize_conditions(&old_conditions, vec![pending])).filter(|c| !c.is_empty());
            status.allocated_resource_statuses.get_or_insert_with(Default::default).insert("storage".into(), NODE_RESIZE_PENDING.into());
            self.save_status(ctx, &updated)?;
            let object = self.claims.get(&op.key).cloned().unwrap_or(object);
            ctx.event(&object, "Normal", "FileSystemResizeRequired", "Require file system resize of volume on node".into());
        } else {
            // markOverallExpansionAsFinished.
            status.capacity.get_or_insert_with(Default::default).insert("storage".into(), bytes(size));
            status.conditions = Some(merge_resize_conditions(&old_conditions, Vec::new())).filter(|c| !c.is_empty());
            if let Some(statuses) = status.allocated_resource_statuses.as_mut() {
                statuses.remove("storage");
            }
            if status.allocated_resource_statuses.as_ref().is_some_and(|s| s.is_empty()) {
                status.allocated_resource_statuses = None;
            }
            self.save_status(ctx, &updated)?;
            let object = self.claims.get(&op.key).cloned().unwrap_or(object);
            ctx.event(&object, "Normal", "VolumeResizeSuccessful", "Resize volume succeeded".into());
        }
        Ok(())
    }
}

impl Reconciler for CsiResizer {
    fn name(&self) -> &'static str {
        actor(self.driver)
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "persistentvolumeclaims")) => claims,
        Informer::all(("", "persistentvolumes")) => volumes,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let keys: Vec<Key> = self.claims.iter().map(|o| key_of(o)).collect();
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        if change.event.event_type == kubesim_store::EventType::Deleted {
            return;
        }
        match change.event.resource {
            ("", "persistentvolumeclaims") => {
                let object = &change.event.object;
                if decode::<PersistentVolumeClaim>(object).is_some_and(|c| Self::claim_needs_resize(&c)) {
                    self.queue.add(key_of(object), ctx);
                }
            }
            ("", "persistentvolumes") => {
                // A volume's change may unblock its claim (the claim reference).
                let claim = decode::<PersistentVolume>(&change.event.object)
                    .and_then(|pv| pv.spec.and_then(|s| s.claim_ref))
                    .map(|r| (r.namespace.unwrap_or_default(), r.name.unwrap_or_default()));
                if let Some(key) = claim.filter(|k| self.claims.get(k).is_some()) {
                    self.queue.add(key, ctx);
                }
            }
            _ => {}
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync_claim(key, ctx).map(|_| Action::AwaitChange)
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let Some(op) = self.in_flight.remove(&token) else { return };
        self.busy.remove(&op.key);
        if self.complete(&op, ctx).is_err() {
            self.queue.add_rate_limited(op.key, ctx);
        }
    }
}
