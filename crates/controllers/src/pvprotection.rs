//! The PV protection controller (pkg/controller/volume/pvprotection): a volume being deleted
//! keeps its `kubernetes.io/pv-protection` finalizer while it is Bound (`isBeingUsed`);
//! volumes that lack the finalizer get it (the StorageObjectInUseProtection admission plugin
//! normally adds it at create).

use crate::common::*;
use crate::framework::{Action, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::PersistentVolume;
use kubesim_api::storage::PV_PROTECTION_FINALIZER;
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;

/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;

/// The controller.
#[derive(Clone, Debug)]
pub struct PvProtectionController {
    volumes: Cache,
    queue: WorkQueue,
}

impl Default for PvProtectionController {
    fn default() -> Self {
        PvProtectionController::new()
    }
}

impl PvProtectionController {
    /// A controller with an empty cache.
    pub fn new() -> PvProtectionController {
        PvProtectionController { volumes: Cache::default(), queue: WorkQueue::new(LATENCY_MS) }
    }
}

impl Reconciler for PvProtectionController {
    fn name(&self) -> &'static str {
        "pv-protection-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "persistentvolumes")) => volumes,
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let Some(object) = self.volumes.get(key).cloned() else { return Ok(Action::AwaitChange) };
        let bound = decode::<PersistentVolume>(&object).and_then(|v| v.status).and_then(|s| s.phase).as_deref() == Some("Bound");
        sync_protection_finalizer(ctx, &mut self.volumes, &object, PV_PROTECTION_FINALIZER, !bound)?;
        Ok(Action::AwaitChange)
    }
}
