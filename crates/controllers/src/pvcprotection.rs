//! The PVC protection controller (pkg/controller/volume/pvcprotection): a claim being deleted
//! keeps its `kubernetes.io/pvc-protection` finalizer — and stays usable, `Terminating` in
//! `kubectl get pvc` — while a scheduled, non-terminated pod uses it (the informer's pods, then
//! a live list, as `isBeingUsed` asks both); claims that lack the finalizer get it (the
//! StorageObjectInUseProtection admission plugin normally adds it at create).

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::storage::PVC_PROTECTION_FINALIZER;
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;

/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;

/// Whether a pod uses the claim (`podUsesPVC`): scheduled, not terminated, and one of its
/// volumes is the claim (a generic ephemeral volume's claim is `<pod>-<volume>`).
pub fn pod_uses_pvc(pod: &Pod, claim: &str) -> bool {
    if pod_node(pod).is_empty() || is_pod_terminal(pod) {
        return false;
    }
    kubesim_api::pod::claim_names(pod).iter().any(|c| c == claim)
}

/// The controller.
#[derive(Clone, Debug)]
pub struct PvcProtectionController {
    claims: Cache,
    pods: Cache,
    queue: WorkQueue,
}

impl Default for PvcProtectionController {
    fn default() -> Self {
        PvcProtectionController::new()
    }
}

impl PvcProtectionController {
    /// A controller with empty caches.
    pub fn new() -> PvcProtectionController {
        PvcProtectionController { claims: Cache::default(), pods: Cache::default(), queue: WorkQueue::new(LATENCY_MS) }
    }

    /// `isBeingUsed`: the informer's pods, then the API server's.
    fn is_being_used(&self, ctx: &Ctx, namespace: &str, claim: &str) -> bool {
        let used = |o: &std::sync::Arc<kubesim_api::Object>| o.as_pod().is_some_and(|p| pod_uses_pvc(p, claim));
        self.pods.in_namespace(namespace).any(used) || ctx.api.store().list(("", "pods"), Some(namespace)).any(used)
    }
}

impl Reconciler for PvcProtectionController {
    fn name(&self) -> &'static str {
        "pvc-protection-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "persistentvolumeclaims")) => claims,
        Informer::all(("", "pods")) => pods,
    }
    fn keeps(&self, resource: kubesim_store::Resource, object: &kubesim_api::Object) -> bool {
        // Upstream's shared informer holds every pod; no handler here acts on one without claims.
        keeps_pods_with_claims(resource, object)
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("", "persistentvolumeclaims") => {
                if event.event_type != kubesim_store::EventType::Deleted {
                    self.queue.add(key_of(&event.object), ctx);
                }
            }
            _ => {
                // podAddedDeletedUpdated: a deleted, terminated or newly scheduled pod may free
                // (or hold) its claims.
                let Some(pod) = event.object.as_pod() else { return };
                let ns = pod.metadata.namespace.clone().unwrap_or_default();
                for claim in kubesim_api::pod::claim_names(pod) {
                    let key = (ns.clone(), claim);
                    if self.claims.get(&key).is_some() {
                        self.queue.add(key, ctx);
                    }
                }
            }
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let Some(object) = self.claims.get(key).cloned() else { return Ok(Action::AwaitChange) };
        let in_use = object.metadata().deletion_timestamp.is_some() && self.is_being_used(ctx, &key.0, &key.1);
        sync_protection_finalizer(ctx, &mut self.claims, &object, PVC_PROTECTION_FINALIZER, !in_use)?;
        Ok(Action::AwaitChange)
    }
}
