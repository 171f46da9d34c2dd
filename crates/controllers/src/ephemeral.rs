//! The ephemeral volume controller (pkg/controller/volume/ephemeral): for every pod volume with
//! `ephemeral.volumeClaimTemplate` it creates the PVC `<pod>-<volume>`, controlled by the pod (so
//! the garbage collector deletes it with the pod).

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;
use kubesim_store::EventType;

/// Modelled processing latency.
pub const EPHEMERAL_LATENCY_MS: Millis = 10;

pub use kubesim_api::pod::ephemeral_claim_name;

/// The ephemeral volume controller.
#[derive(Clone, Debug)]
pub struct EphemeralVolumeController {
    pods: Cache,
    queue: WorkQueue,
}

impl Default for EphemeralVolumeController {
    fn default() -> Self {
        EphemeralVolumeController::new()
    }
}

impl EphemeralVolumeController {
    /// A controller with an empty cache.
    pub fn new() -> EphemeralVolumeController {
        EphemeralVolumeController { pods: Cache::default(), queue: WorkQueue::new(EPHEMERAL_LATENCY_MS) }
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.pods.get(key).cloned() else { return Ok(()) };
        let Some(pod) = object.as_pod() else { return Ok(()) };
        if pod.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let pod: Pod = pod.clone();
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        let pod_uid = pod.metadata.uid.clone().unwrap_or_default();
        for volume in pod.spec.as_ref().and_then(|s| s.volumes.clone()).unwrap_or_default() {
            let Some(template) = volume.ephemeral.as_ref().and_then(|e| e.volume_claim_template.clone()) else { continue };
            let name = ephemeral_claim_name(&pod_name, &volume.name);
            if let Some(existing) = ctx.api.lookup(("", "persistentvolumeclaims"), &key.0, &name) {
                if controller_of(existing.metadata()).is_none_or(|r| r.uid != pod_uid) {
                    ctx.event(
                        &object,
                        "Warning",
                        "FailedBinding",
                        format!("PVC {}/{name} was not created for pod {}/{pod_name} (pod is not owner)", key.0, key.0),
                    );
                }
                continue;
            }
            let meta = template.metadata.clone().unwrap_or_default();
            let claim = PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(key.0.clone()),
                    labels: meta.labels.clone(),
                    annotations: meta.annotations.clone(),
                    owner_references: Some(vec![controller_ref(&object)]),
                    ..Default::default()
                },
                spec: Some(template.spec.clone()),
                status: None,
            };
            match ctx.create(encode(&claim, "v1", "PersistentVolumeClaim")) {
                Ok(_) => {}
                Err(e) if e.reason == "AlreadyExists" => {}
                Err(e) => {
                    ctx.event(&object, "Warning", "FailedCreate", format!("create PVC {name}: {}", e.message));
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

impl Reconciler for EphemeralVolumeController {
    fn name(&self) -> &'static str {
        "ephemeral-volume-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "pods")) => pods,
    }
    /// Pods with generic ephemeral volumes only (a pod's volumes never change).
    fn keeps(&self, _resource: kubesim_store::Resource, object: &Object) -> bool {
        has_ephemeral(object)
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let keys: Vec<Key> = self.pods.iter().filter(|o| has_ephemeral(o)).map(|o| key_of(o)).collect();
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        if change.event.event_type == EventType::Added && has_ephemeral(&change.event.object) {
            self.queue.add(key_of(&change.event.object), ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}

fn has_ephemeral(object: &Object) -> bool {
    object.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.volumes.as_ref()).is_some_and(|v| v.iter().any(|v| v.ephemeral.is_some()))
}
