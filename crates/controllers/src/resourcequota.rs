//! The ResourceQuota controller (pkg/controller/resourcequota): recomputes status.hard and
//! status.used from the objects in the namespace — on quota changes, when tracked objects are
//! deleted or pods finish (replenishment), and every 5 minutes — so usage the API server's
//! admission reserved is released again.
//!
//! Usage follows the core evaluators: pods (non-terminal), requests/limits of cpu, memory and
//! ephemeral-storage (max of init containers vs the sum of containers), services (+ nodeports,
//! loadbalancers), configmaps, secrets, persistentvolumeclaims (+ requests.storage),
//! replicationcontrollers, resourcequotas and `count/<resource>`. Pod scopes Terminating,
//! NotTerminating, BestEffort and NotBestEffort are honoured; scopeSelector is not modelled.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::object::{all_kinds, Object};
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;
use kubesim_store::{resource_of, EventType, Resource};
use std::collections::{BTreeMap, BTreeSet};

/// --resource-quota-sync-period.
pub const QUOTA_RESYNC_MS: Millis = 300_000;
/// Modelled processing latency.
pub const QUOTA_LATENCY_MS: Millis = 10;
const TOKEN_RESYNC: u64 = 2;

fn is_best_effort(pod: &Pod) -> bool {
    kubesim_api::pod::qos_class(pod) == "BestEffort"
}

fn pod_in_scopes(pod: &Pod, scopes: &[String]) -> bool {
    scopes.iter().all(|s| match s.as_str() {
        "Terminating" => pod.spec.as_ref().and_then(|s| s.active_deadline_seconds).is_some(),
        "NotTerminating" => pod.spec.as_ref().and_then(|s| s.active_deadline_seconds).is_none(),
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        _ => true,
    })
}

/// The usage one object contributes (milli-units per resource name): the API server's quota
/// evaluators, shared so admission and this controller agree.
pub use kubesim_apiserver::quota::{format_usage, usage_of};

/// The resources a quota key is counted over.
fn resources_for(key: &str) -> Vec<Resource> {
    if let Some(rest) = key.strip_prefix("count/") {
        let (plural, group) = rest.split_once('.').unwrap_or((rest, ""));
        return all_kinds().map(resource_of).filter(|r| r.1 == plural && r.0 == group).take(1).collect();
    }
    match key {
        "services" | "services.nodeports" | "services.loadbalancers" => vec![("", "services")],
        "configmaps" => vec![("", "configmaps")],
        "secrets" => vec![("", "secrets")],
        "persistentvolumeclaims" | "requests.storage" => vec![("", "persistentvolumeclaims")],
        "replicationcontrollers" => vec![("", "replicationcontrollers")],
        "resourcequotas" => vec![("", "resourcequotas")],
        _ => vec![("", "pods")],
    }
}

/// The ResourceQuota controller.
#[derive(Clone, Debug)]
pub struct ResourceQuotaController {
    quotas: Cache,
    queue: WorkQueue,
}

impl Default for ResourceQuotaController {
    fn default() -> Self {
        ResourceQuotaController::new()
    }
}

impl ResourceQuotaController {
    /// A controller with an empty cache.
    pub fn new() -> ResourceQuotaController {
        ResourceQuotaController { quotas: Cache::default(), queue: WorkQueue::new(QUOTA_LATENCY_MS) }
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.quotas.get(key).cloned() else { return Ok(()) };
        let Object::Dynamic(quota) = object.as_ref() else { return Ok(()) };
        let spec = quota.rest.get("spec").cloned().unwrap_or_default();
        let hard: BTreeMap<String, String> = spec
            .get("hard")
            .and_then(|h| h.as_object())
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().map(String::from).unwrap_or_else(|| v.to_string()))).collect())
            .unwrap_or_default();
        let scopes: Vec<String> =
            spec.get("scopes").and_then(|s| s.as_array()).map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect()).unwrap_or_default();
        let resources: BTreeSet<Resource> = hard.keys().flat_map(|k| resources_for(k)).collect();
        let mut totals: BTreeMap<String, i128> = BTreeMap::new();
        for resource in resources {
            for o in ctx.api.store().list(resource, Some(&key.0)) {
                if let Object::Pod(p) = o.as_ref() {
                    if !pod_in_scopes(p, &scopes) {
                        continue;
                    }
                }
                for (k, v) in usage_of(o) {
                    *totals.entry(k).or_insert(0) += v;
                }
            }
        }
        let used: serde_json::Map<String, serde_json::Value> =
            hard.keys().map(|k| (k.clone(), serde_json::Value::String(format_usage(k, totals.get(k).copied().unwrap_or(0))))).collect();
        let status = serde_json::json!({ "hard": spec.get("hard").cloned().unwrap_or_default(), "used": used });
        if quota.rest.get("status") == Some(&status) {
            return Ok(());
        }
        let mut copy = (**quota).clone();
        copy.rest.insert("status".into(), status);
        let written = ctx.update_status(Object::Dynamic(Box::new(copy)))?;
        self.quotas.put(written);
        Ok(())
    }

    fn enqueue_namespace(&mut self, namespace: &str, ctx: &mut Ctx) {
        let keys: Vec<Key> = self.quotas.in_namespace(namespace).map(|o| key_of(o)).collect();
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
}

const REPLENISHED: &[Resource] =
    &[("", "pods"), ("", "services"), ("", "configmaps"), ("", "secrets"), ("", "persistentvolumeclaims"), ("", "replicationcontrollers")];

impl Reconciler for ResourceQuotaController {
    fn name(&self) -> &'static str {
        "resourcequota-controller"
    }
    fn informers(&self) -> Vec<Informer> {
        let mut v = vec![Informer::all(("", "resourcequotas"))];
        v.extend(REPLENISHED.iter().map(|r| Informer::all(*r)));
        v
    }
    fn informer_for(&self, resource: Resource) -> Option<Informer> {
        (resource == ("", "resourcequotas") || REPLENISHED.contains(&resource)).then_some(Informer::all(resource))
    }
    fn primary_resource(&self) -> Resource {
        ("", "resourcequotas")
    }
    fn cache(&mut self, resource: Resource) -> Option<&mut Cache> {
        (resource == ("", "resourcequotas")).then_some(&mut self.quotas)
    }
    fn queue(&mut self) -> Option<&mut WorkQueue> {
        Some(&mut self.queue)
    }
    fn started(&mut self, ctx: &mut Ctx) {
        self.queue.add_all(&self.quotas, ctx);
        ctx.after_periodic(QUOTA_RESYNC_MS, TOKEN_RESYNC);
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        if event.resource == ("", "resourcequotas") {
            let spec = |o: &Object| o.to_json().get("spec").cloned();
            if event.event_type != EventType::Deleted && change.old.as_deref().map(spec) != Some(spec(&event.object)) {
                self.queue.add(key_of(&event.object), ctx);
            }
            return;
        }
        if self.quotas.in_namespace(event.object.namespace()).next().is_none() {
            return;
        }
        // Replenishment: deletions, and pods turning terminal.
        let replenish = match event.event_type {
            EventType::Deleted => true,
            EventType::Modified => event.object.as_pod().is_some_and(is_pod_terminal),
            EventType::Added => false,
        };
        if replenish {
            self.enqueue_namespace(event.object.namespace(), ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if token == TOKEN_RESYNC {
            self.queue.add_all(&self.quotas, ctx);
            ctx.after_periodic(QUOTA_RESYNC_MS, TOKEN_RESYNC);
        }
    }
}
