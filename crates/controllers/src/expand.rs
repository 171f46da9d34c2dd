//! The volume expand controller (pkg/controller/volume/expand, kcm's `persistentvolume-expander`)
//! as v1.34 runs it for volumes no in-tree plugin expands: a claim is queued when its storage
//! request grows or its recorded capacity does (`updatePVC`); `syncHandler` checks that the PV
//! is bound to it and that the request exceeds `status.capacity`, finds no expandable in-tree
//! plugin (CSI volumes, and here every volume: kubesim runs no in-tree volume plugin that
//! expands) and records Normal `ExternalExpanding` `waiting for an external controller to
//! expand this PVC` from `volume_expand`, leaving the work to the driver's external-resizer
//! (`csi_resizer`). CSI migration (`CSI migration enabled for …`) and the PV's
//! pre-resize-capacity annotation are not modelled.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kubesim_api::storage::{claim_capacity, claim_request};
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;

/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;

/// The controller.
#[derive(Clone, Debug)]
pub struct ExpandController {
    claims: Cache,
    queue: WorkQueue,
}

impl Default for ExpandController {
    fn default() -> Self {
        ExpandController::new()
    }
}

impl ExpandController {
    /// A controller with an empty cache.
    pub fn new() -> ExpandController {
        ExpandController { claims: Cache::default(), queue: WorkQueue::new(LATENCY_MS) }
    }
}

impl Reconciler for ExpandController {
    fn name(&self) -> &'static str {
        "persistentvolume-expander"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "persistentvolumeclaims")) => claims,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        // AddFunc queues every claim; UpdateFunc only a grown request or a grown capacity.
        let new = decode::<PersistentVolumeClaim>(&change.event.object);
        let queue = match (change.old.as_deref().and_then(decode::<PersistentVolumeClaim>), &new) {
            _ if change.event.event_type == kubesim_store::EventType::Deleted => false,
            (Some(old), Some(new)) => claim_request(new) > claim_request(&old) || claim_capacity(new) > claim_capacity(&old),
            (None, Some(_)) => true,
            _ => false,
        };
        if queue {
            self.queue.add(key_of(&change.event.object), ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let Some(object) = self.claims.get(key).cloned() else { return Ok(Action::AwaitChange) };
        let Some(claim) = decode::<PersistentVolumeClaim>(&object) else { return Ok(Action::AwaitChange) };
        let Some(volume) = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty()) else { return Ok(Action::AwaitChange) };
        // getPersistentVolume (a GET; a claim without its volume is retried).
        let Some(pv) = ctx.api.lookup(("", "persistentvolumes"), "", &volume).and_then(|o| o.decode::<PersistentVolume>()) else {
            return Err(ApiError::not_found("persistentvolumes", &volume));
        };
        let claim_ref = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
        if !claim_ref.is_some_and(|r| r.namespace == claim.metadata.namespace && r.uid == claim.metadata.uid) {
            return Err(ApiError::bad_request(format!("persistent Volume is not bound to PVC being updated : {}/{}", key.0, key.1)));
        }
        if claim_request(&claim) <= claim_capacity(&claim) {
            return Ok(Action::AwaitChange);
        }
        ctx.event(&object, "Normal", "ExternalExpanding", "waiting for an external controller to expand this PVC".into());
        Ok(Action::AwaitChange)
    }
}
