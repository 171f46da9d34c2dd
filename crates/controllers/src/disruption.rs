//! The disruption controller (pkg/controller/disruption): PodDisruptionBudget status —
//! expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed and the DisruptionAllowed
//! condition.
//!
//! Deviation: PodDisruptionBudget is JSON-kept (decoded per sync); the eviction API's
//! disruptedPods bookkeeping is left to the API server (the map is carried over).

use crate::common::*;
use crate::deployment_util::scaled_value;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::object::Object;
use kubesim_api::selector::Selector;
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;
use std::collections::BTreeSet;

/// Modelled processing latency.
pub const PDB_LATENCY_MS: Millis = 10;

/// The scale of a pod's controller: (controller uid, replicas), following RS → Deployment.
fn controller_scale(ctx: &Ctx, pod: &Pod) -> Option<(String, i32)> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    let r = controller_of(&pod.metadata)?;
    let replicas_of = |o: &Object| -> Option<i32> {
        let json = o.to_json();
        Some(json.get("spec")?.get("replicas").and_then(|v| v.as_i64()).unwrap_or(1) as i32)
    };
    match r.kind.as_str() {
        "ReplicaSet" => {
            let rs = ctx.api.lookup(("apps", "replicasets"), ns, &r.name).filter(|o| uid_of(o.metadata()) == r.uid)?;
            if let Some(d_ref) = controller_of(rs.metadata()).filter(|d| d.kind == "Deployment") {
                let d = ctx.api.lookup(("apps", "deployments"), ns, &d_ref.name).filter(|o| uid_of(o.metadata()) == d_ref.uid)?;
                return Some((d_ref.uid.clone(), replicas_of(d)?));
            }
            Some((r.uid.clone(), replicas_of(rs)?))
        }
        "ReplicationController" => {
            let rc = ctx.api.lookup(("", "replicationcontrollers"), ns, &r.name).filter(|o| uid_of(o.metadata()) == r.uid)?;
            Some((r.uid.clone(), replicas_of(rc)?))
        }
        "StatefulSet" => {
            let s = ctx.api.lookup(("apps", "statefulsets"), ns, &r.name).filter(|o| uid_of(o.metadata()) == r.uid)?;
            Some((r.uid.clone(), replicas_of(s)?))
        }
        _ => None,
    }
}

/// Computes a PDB's status from its pods (`getExpectedPodCount` + `countHealthyPods`).
/// `scales` gives the controllers' scale for percentage / maxUnavailable budgets.
pub fn pdb_status(pdb: &PodDisruptionBudget, pods: &[&Pod], expected_scale: Result<i32, String>, now: Millis) -> PodDisruptionBudgetStatus {
    let spec = pdb.spec.clone().unwrap_or_default();
    let old = pdb.status.clone().unwrap_or_default();
    let healthy = pods.iter().filter(|p| p.metadata.deletion_timestamp.is_none() && is_pod_ready(p)).count() as i32;
    let computed: Result<(i32, i32), String> = if let Some(mu) = &spec.max_unavailable {
        expected_scale.clone().and_then(|expected| Ok((expected, (expected - scaled_value(mu, expected, true)?).max(0))))
    } else if let Some(ma) = &spec.min_available {
        match ma {
            IntOrString::Int(v) => Ok((pods.len() as i32, *v)),
            IntOrString::String(_) => expected_scale.clone().and_then(|expected| Ok((expected, scaled_value(ma, expected, true)?))),
        }
    } else {
        Ok((0, 0))
    };
    let set_condition = |status: &mut PodDisruptionBudgetStatus, value: &str, reason: &str, message: String| {
        let mut cond = Condition {
            type_: "DisruptionAllowed".into(),
            status: value.into(),
            reason: reason.into(),
            message,
            observed_generation: pdb.metadata.generation,
            last_transition_time: time_at(now),
        };
        if let Some(existing) = old.conditions.iter().flatten().find(|c| c.type_ == "DisruptionAllowed") {
            if existing.status == cond.status {
                cond.last_transition_time = existing.last_transition_time.clone();
            }
        }
        status.conditions = Some(vec![cond]);
    };
    let mut status = PodDisruptionBudgetStatus {
        current_healthy: healthy,
        observed_generation: pdb.metadata.generation,
        disrupted_pods: old.disrupted_pods.clone(),
        ..Default::default()
    };
    match computed {
        Err(e) => {
            status.disruptions_allowed = 0;
            status.current_healthy = old.current_healthy;
            status.desired_healthy = old.desired_healthy;
            status.expected_pods = old.expected_pods;
            set_condition(&mut status, "False", "SyncFailed", e);
        }
        Ok((expected, desired)) => {
            status.expected_pods = expected;
            status.desired_healthy = desired;
            status.disruptions_allowed = if expected <= 0 || healthy - desired <= 0 { 0 } else { healthy - desired };
            if status.disruptions_allowed > 0 {
                set_condition(&mut status, "True", "SufficientPods", String::new());
            } else {
                set_condition(&mut status, "False", "InsufficientPods", String::new());
            }
        }
    }
    status
}

/// The disruption controller.
#[derive(Clone, Debug)]
pub struct DisruptionController {
    pdbs: Cache,
    pods: Cache,
    queue: WorkQueue,
}

impl Default for DisruptionController {
    fn default() -> Self {
        DisruptionController::new()
    }
}

impl DisruptionController {
    /// A controller with empty caches.
    pub fn new() -> DisruptionController {
        DisruptionController { pdbs: Cache::default(), pods: Cache::default(), queue: WorkQueue::new(PDB_LATENCY_MS) }
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.pdbs.get(key).cloned() else { return Ok(()) };
        let Some(pdb) = decode::<PodDisruptionBudget>(&object) else { return Ok(()) };
        let selector = pdb.spec.as_ref().and_then(|s| s.selector.clone()).map(|s| Selector::from_label_selector(&s));
        let pods: Vec<Pod> = match &selector {
            // A nil selector selects nothing (policy/v1); an empty one selects everything.
            None => Vec::new(),
            Some(sel) => self.pods.in_namespace(&key.0).filter_map(|o| o.as_pod()).filter(|p| sel.matches(p.metadata.labels.as_ref())).cloned().collect(),
        };
        let mut seen = BTreeSet::new();
        let mut expected: Result<i32, String> = Ok(0);
        for p in &pods {
            match controller_scale(ctx, p) {
                Some((uid, replicas)) if seen.insert(uid.clone()) => {
                    expected = expected.map(|e| e + replicas);
                }
                Some(_) => {}
                None if controller_of(&p.metadata).is_some() => {
                    expected = Err(format!("found no controllers for pod {:?}", p.metadata.name.clone().unwrap_or_default()));
                }
                None => {}
            }
        }
        let refs: Vec<&Pod> = pods.iter().collect();
        let status = pdb_status(&pdb, &refs, expected, ctx.now);
        if pdb.status.as_ref() == Some(&status) {
            return Ok(());
        }
        let mut copy = pdb.clone();
        copy.status = Some(status);
        let updated = ctx.update_status(encode(&copy, "policy/v1", "PodDisruptionBudget"))?;
        self.pdbs.put(updated);
        Ok(())
    }
}

impl Reconciler for DisruptionController {
    fn name(&self) -> &'static str {
        "disruption-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("policy", "poddisruptionbudgets")) => pdbs,
        Informer::all(("", "pods")) => pods,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("policy", "poddisruptionbudgets") => {
                let spec_of = |o: &Object| decode::<PodDisruptionBudget>(o).map(|p| (p.spec, p.metadata.generation));
                if change.old.as_deref().map(spec_of) == Some(spec_of(&event.object)) {
                    return;
                }
                self.queue.add(key_of(&event.object), ctx);
            }
            _ => {
                // Borrowed: every pod write reaches here, and most namespaces have no budget.
                let labels = [change.old.as_ref().and_then(|o| o.metadata().labels.as_ref()), event.object.metadata().labels.as_ref()];
                let keys: Vec<Key> = self
                    .pdbs
                    .in_namespace(event.object.namespace())
                    .filter(|o| {
                        let sel = decode::<PodDisruptionBudget>(o).and_then(|p| p.spec).and_then(|s| s.selector).map(|s| Selector::from_label_selector(&s));
                        sel.is_some_and(|sel| labels.iter().any(|l| sel.matches(*l)))
                    })
                    .map(|o| key_of(o))
                    .collect();
                for key in keys {
                    self.queue.add(key, ctx);
                }
            }
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}
