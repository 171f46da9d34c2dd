//! The DaemonSet controller (pkg/controller/daemon): one pod per eligible node, pinned with a
//! required node affinity on `metadata.name` (the default scheduler binds it), the DaemonSet
//! default tolerations, RollingUpdate by maxUnavailable (or OnDelete), revisions as
//! ControllerRevisions (`controller-revision-hash` = hash, `pod-template-generation`), status.
//!
//! Rolling updates use maxUnavailable, or maxSurge (a new pod beside each old one, the old one
//! deleted once the new one is available).
//!
//! Deviations: DaemonSet is JSON-kept in kubesim's object model (decoded per sync); the failed-pod
//! backoff is not modelled (failed pods are deleted at once).

use crate::common::*;
use crate::deployment_util::scaled_value;
use crate::framework::{Action, Change, Informer, Reconciler};
use crate::history::{claim_revisions, ensure_revision, truncate_history, HASH_LABEL};
use crate::nodelifecycle::tolerates;
use kubesim_api::k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetStatus};
use kubesim_api::k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSpec, Toleration,
};
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::selector::Selector;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `pod-template-generation`.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// `controller-revision-hash`.
pub const REVISION_HASH_LABEL: &str = "controller-revision-hash";
/// Modelled processing latency.
pub const DS_LATENCY_MS: Millis = 10;

/// `AddOrUpdateDaemonPodTolerations`.
pub fn add_daemon_tolerations(spec: &mut PodSpec) {
    let mut wanted: Vec<(&str, &str)> = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if spec.host_network == Some(true) {
        wanted.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    let tolerations = spec.tolerations.get_or_insert_with(Vec::new);
    for (key, effect) in wanted {
        tolerations.retain(|t| !(t.key.as_deref() == Some(key) && t.effect.as_deref() == Some(effect)));
        tolerations.push(Toleration {
            key: Some(key.into()),
            operator: Some("Exists".into()),
            effect: Some(effect.into()),
            value: None,
            toleration_seconds: None,
        });
    }
}

/// Replaces the pod's required node affinity with `metadata.name In [node]`
/// (`ReplaceDaemonSetPodNodeNameNodeAffinity`).
pub fn pin_to_node(spec: &mut PodSpec, node: &str) {
    let term = NodeSelectorTerm {
        match_expressions: None,
        match_fields: Some(vec![NodeSelectorRequirement { key: "metadata.name".into(), operator: "In".into(), values: Some(vec![node.into()]) }]),
    };
    let affinity = spec.affinity.get_or_insert_with(Affinity::default);
    let node_affinity = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(NodeSelector { node_selector_terms: vec![term] });
}

fn requirement_matches(req: &NodeSelectorRequirement, value: Option<&String>) -> bool {
    let values = req.values.clone().unwrap_or_default();
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => value.is_none_or(|v| !values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (value.and_then(|v| v.parse::<i64>().ok()), values.first().and_then(|b| b.parse::<i64>().ok())) else { return false };
            if req.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

/// Whether a node satisfies a pod's nodeSelector and required node affinity.
pub fn node_matches(spec: &PodSpec, node: &Node) -> bool {
    let labels = node.metadata.labels.clone().unwrap_or_default();
    if let Some(selector) = &spec.node_selector {
        if !selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
            return false;
        }
    }
    let Some(required) =
        spec.affinity.as_ref().and_then(|a| a.node_affinity.as_ref()).and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref())
    else {
        return true;
    };
    let name = node.metadata.name.clone().unwrap_or_default();
    required.node_selector_terms.iter().any(|term| {
        let exprs = term.match_expressions.clone().unwrap_or_default();
        let fields = term.match_fields.clone().unwrap_or_default();
        if exprs.is_empty() && fields.is_empty() {
            return false;
        }
        exprs.iter().all(|r| requirement_matches(r, labels.get(&r.key)))
            && fields.iter().all(|r| r.key == "metadata.name" && requirement_matches(r, Some(&name)))
    })
}

/// `NodeShouldRunDaemonPod`: the node fits the template and its NoSchedule/NoExecute taints are
/// tolerated (with the daemon tolerations added).
pub fn should_run(template_spec: &PodSpec, node: &Node) -> bool {
    let mut spec = template_spec.clone();
    add_daemon_tolerations(&mut spec);
    if !node_matches(&spec, node) {
        return false;
    }
    let tolerations = spec.tolerations.clone().unwrap_or_default();
    node.spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default()
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .all(|t| tolerations.iter().any(|tol| tolerates(tol, t)))
}

/// The DaemonSet controller.
#[derive(Clone, Debug)]
pub struct DaemonSetController {
    sets: Cache,
    pods: Cache,
    nodes: Cache,
    revisions: Cache,
    queue: WorkQueue,
    expectations: Expectations,
}

impl Default for DaemonSetController {
    fn default() -> Self {
        DaemonSetController::new()
    }
}

impl DaemonSetController {
    /// A controller with empty caches.
    pub fn new() -> DaemonSetController {
        DaemonSetController {
            sets: Cache::default(),
            pods: Cache::default(),
            nodes: Cache::default(),
            revisions: Cache::default(),
            queue: WorkQueue::new(DS_LATENCY_MS),
            expectations: Expectations::default(),
        }
    }

    fn owner_key(&self, pod: &Object) -> Option<Key> {
        self.sets.controller_key(pod, "DaemonSet")
    }

    fn delete_pods(&mut self, ctx: &mut Ctx, set_obj: &Object, key: &Key, victims: &[Pod]) -> Result<(), ApiError> {
        let info = kind_info("v1", "Pod").expect("served");
        let keys: Vec<Key> = victims.iter().map(|p| (p.metadata.namespace.clone().unwrap_or_default(), p.metadata.name.clone().unwrap_or_default())).collect();
        self.expectations.expect_deletions(key, keys.clone(), ctx.now);
        let mut error = None;
        for k in keys {
            match ctx.delete(info, &k.0, &k.1, DeleteOptions::default()) {
                Ok(_) => ctx.event(set_obj, "Normal", "SuccessfulDelete", format!("Deleted pod: {}", k.1)),
                Err(e) => {
                    self.expectations.deletion_observed(key, &k);
                    if !is_not_found(&e) {
                        ctx.event(set_obj, "Warning", "FailedDelete", format!("Error deleting: {}", e.message));
                        error.get_or_insert(e);
                    }
                }
            }
        }
        error.map_or(Ok(()), Err)
    }

    /// syncDaemonSet.
    pub fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(set_obj) = self.sets.get(key).cloned() else {
            self.expectations.forget(key);
            return Ok(());
        };
        let Some(ds) = decode::<DaemonSet>(&set_obj) else { return Ok(()) };
        let now = ctx.now;
        let spec = ds.spec.clone().unwrap_or_default();
        let selector = Selector::from_label_selector(&spec.selector);
        let candidates: Vec<Arc<Object>> = self.pods.claim_candidates(&key.0, set_obj.metadata().uid.as_deref().unwrap_or("")).cloned().collect();
        let claimed = claim(ctx, &set_obj, &selector, candidates, &mut self.pods)?;
        let pods: Vec<Pod> = claimed.iter().filter_map(|o| o.as_pod()).cloned().collect();
        claim_revisions(ctx, &mut self.revisions, &set_obj, &selector)?;
        let mut collision = ds.status.as_ref().and_then(|s| s.collision_count);
        let revision =
            ensure_revision(ctx, &mut self.revisions, &set_obj, &spec.template, spec.selector.match_labels.clone().unwrap_or_default(), &mut collision)?;
        let hash = revision.metadata.labels.as_ref().and_then(|l| l.get(HASH_LABEL)).cloned().unwrap_or_default();
        let generation = ds.metadata.generation.unwrap_or(1);
        let is_updated = |p: &Pod| {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            labels.get(REVISION_HASH_LABEL) == Some(&hash)
                || (!labels.contains_key(REVISION_HASH_LABEL) && labels.get(TEMPLATE_GENERATION_LABEL) == Some(&generation.to_string()))
        };
        let template_spec = spec.template.spec.clone().unwrap_or_default();
        let strategy = spec.update_strategy.clone().unwrap_or_default();
        let rolling = strategy.type_.as_deref().unwrap_or("RollingUpdate") == "RollingUpdate";
        let surge_spec = strategy.rolling_update.as_ref().and_then(|r| r.max_surge.clone());
        let surge_allowed = rolling && surge_spec.as_ref().is_some_and(|v| !matches!(v, IntOrString::Int(0)) && *v != IntOrString::String("0%".into()));
        let min_ready = spec.min_ready_seconds.unwrap_or(0);
        let mut by_node: BTreeMap<String, Vec<Pod>> = BTreeMap::new();
        for p in &pods {
            by_node.entry(pod_node_or_affinity(p)).or_default().push(p.clone());
        }
        let nodes: Vec<Node> = self.nodes.iter().filter_map(|o| o.as_node()).cloned().collect();
        let mut to_create: Vec<String> = Vec::new();
        let mut to_delete: Vec<Pod> = Vec::new();
        let mut desired = 0;
        let mut current = 0;
        let mut misscheduled = 0;
        let mut ready = 0;
        let mut available = 0;
        let mut updated = 0;
        let satisfied = self.expectations.satisfied(key, now);
        for node in &nodes {
            let name = node.metadata.name.clone().unwrap_or_default();
            let run = should_run(&template_spec, node);
            let mut existing: Vec<Pod> = by_node.remove(&name).unwrap_or_default().into_iter().filter(|p| p.metadata.deletion_timestamp.is_none()).collect();
            if run {
                desired += 1;
                // Failed pods are killed (and replaced on a later sync).
                let (failed, alive): (Vec<Pod>, Vec<Pod>) = existing.drain(..).partition(|p| pod_phase(p) == "Failed");
                for p in &failed {
                    ctx.event(
                        &set_obj,
                        "Warning",
                        "FailedDaemonPod",
                        format!("Found failed daemon pod {}/{} on node {name}, will try to kill it", key.0, p.metadata.name.clone().unwrap_or_default()),
                    );
                }
                to_delete.extend(failed.iter().cloned());
                if alive.is_empty() && failed.is_empty() {
                    to_create.push(name.clone());
                } else if !alive.is_empty() {
                    current += 1;
                    let mut alive = alive;
                    kubesim_api::sort::sort_by_key(&mut alive, |p| (created_ms(&p.metadata), p.metadata.name.clone()));
                    let keep_idx: Vec<usize> = if surge_allowed {
                        // During a surge: keep the oldest old pod and the newest updated pod.
                        let oldest_old = alive.iter().position(|p| !is_updated(p));
                        let newest_new = alive.iter().rposition(&is_updated);
                        oldest_old.into_iter().chain(newest_new).collect()
                    } else {
                        vec![0]
                    };
                    to_delete.extend(alive.iter().enumerate().filter(|(i, _)| !keep_idx.contains(i)).map(|(_, p)| p.clone()));
                    // Status counts the updated pod when there is one.
                    let keep = keep_idx.iter().rev().map(|i| &alive[*i]).next().unwrap_or(&alive[0]);
                    if is_pod_ready(keep) {
                        ready += 1;
                    }
                    if is_pod_available(keep, min_ready, now) {
                        available += 1;
                    }
                    if is_updated(keep) {
                        updated += 1;
                    }
                }
            } else if !existing.is_empty() {
                misscheduled += 1;
                to_delete.extend(existing);
            }
        }
        // Pods on nodes that no longer exist.
        for (_, rest) in by_node {
            to_delete.extend(rest.into_iter().filter(|p| p.metadata.deletion_timestamp.is_none()));
        }
        let mut result = Ok(());
        if satisfied && ds.metadata.deletion_timestamp.is_none() {
            if !to_delete.is_empty() {
                result = self.delete_pods(ctx, &set_obj, key, &to_delete);
            }
            if !to_create.is_empty() && result.is_ok() {
                result = self.create_pods(ctx, &set_obj, &ds, key, &to_create, &hash, generation);
            }
            // Rolling update with surge: a new pod next to each old one (up to maxSurge at a time),
            // the old pod deleted once the new one is available.
            if result.is_ok() && to_delete.is_empty() && to_create.is_empty() && surge_allowed {
                let max_surge = surge_spec.as_ref().map(|v| scaled_value(v, desired, true).unwrap_or(1)).unwrap_or(0).max(1);
                let mut num_surge = 0;
                let mut candidates: Vec<String> = Vec::new();
                let mut allowed: Vec<String> = Vec::new();
                let mut old_to_delete: Vec<Pod> = Vec::new();
                let mut per_node: BTreeMap<String, (Option<Pod>, Option<Pod>)> = BTreeMap::new();
                for p in pods.iter().filter(|p| p.metadata.deletion_timestamp.is_none() && !is_pod_terminal(p)) {
                    let entry = per_node.entry(pod_node_or_affinity(p)).or_default();
                    if is_updated(p) {
                        entry.0 = Some(p.clone());
                    } else if entry.1.is_none() {
                        entry.1 = Some(p.clone());
                    }
                }
                for (node, (new_pod, old_pod)) in per_node {
                    match (new_pod, old_pod) {
                        (_, None) => {}
                        (None, Some(old)) => {
                            if !is_pod_available(&old, min_ready, now) {
                                allowed.push(node);
                            } else if num_surge < max_surge {
                                candidates.push(node);
                            }
                        }
                        (Some(new), Some(old)) => {
                            if is_pod_available(&new, min_ready, now) {
                                old_to_delete.push(old);
                            } else {
                                num_surge += 1;
                            }
                        }
                    }
                }
                let remaining = (max_surge - num_surge).max(0) as usize;
                allowed.extend(candidates.into_iter().take(remaining));
                if !old_to_delete.is_empty() {
                    result = self.delete_pods(ctx, &set_obj, key, &old_to_delete);
                }
                if !allowed.is_empty() && result.is_ok() {
                    result = self.create_pods(ctx, &set_obj, &ds, key, &allowed, &hash, generation);
                }
            }
            // Rolling update by maxUnavailable.
            if result.is_ok() && to_delete.is_empty() && to_create.is_empty() && rolling && !surge_allowed {
                let max_unavailable = strategy
                    .rolling_update
                    .as_ref()
                    .and_then(|r| r.max_unavailable.clone())
                    .map(|v| scaled_value(&v, desired, true).unwrap_or(1))
                    .unwrap_or_else(|| scaled_value(&IntOrString::Int(1), desired, true).unwrap_or(1))
                    .max(if desired > 0 { 1 } else { 0 });
                let mut unavailable = desired - available;
                let mut old_pods: Vec<Pod> =
                    pods.iter().filter(|p| p.metadata.deletion_timestamp.is_none() && !is_updated(p) && !is_pod_terminal(p)).cloned().collect();
                // Unavailable old pods first, then available ones while the budget allows.
                kubesim_api::sort::sort_by_key(&mut old_pods, |p| (is_pod_available(p, min_ready, now), pod_node(p).to_string()));
                let mut victims = Vec::new();
                for p in old_pods {
                    if !is_pod_available(&p, min_ready, now) {
                        victims.push(p);
                    } else if unavailable < max_unavailable {
                        unavailable += 1;
                        victims.push(p);
                    }
                }
                if !victims.is_empty() {
                    result = self.delete_pods(ctx, &set_obj, key, &victims);
                }
            }
        }
        let status = DaemonSetStatus {
            collision_count: collision,
            conditions: ds.status.as_ref().and_then(|s| s.conditions.clone()),
            current_number_scheduled: current,
            desired_number_scheduled: desired,
            number_available: nz(available),
            number_misscheduled: misscheduled,
            number_ready: ready,
            number_unavailable: nz(desired - available),
            observed_generation: ds.metadata.generation,
            updated_number_scheduled: nz(updated),
        };
        if ds.status.as_ref() != Some(&status) {
            let mut copy = ds.clone();
            copy.status = Some(status.clone());
            let written = ctx.update_status(encode(&copy, "apps/v1", "DaemonSet"))?;
            self.sets.put(written);
        }
        let in_use = vec![revision.metadata.name.clone().unwrap_or_default()];
        truncate_history(ctx, &mut self.revisions, &set_obj, &in_use, spec.revision_history_limit.unwrap_or(10));
        if min_ready > 0 && ready != available {
            self.queue.add_after(key.clone(), min_ready as Millis * 1000, ctx);
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn create_pods(
        &mut self,
        ctx: &mut Ctx,
        set_obj: &Object,
        ds: &DaemonSet,
        key: &Key,
        nodes: &[String],
        hash: &str,
        generation: i64,
    ) -> Result<(), ApiError> {
        let spec = ds.spec.clone().unwrap_or_default();
        let mut template = spec.template.clone();
        let labels = template.metadata.get_or_insert_with(Default::default).labels.get_or_insert_with(BTreeMap::new);
        labels.insert(REVISION_HASH_LABEL.into(), hash.to_string());
        labels.insert(TEMPLATE_GENERATION_LABEL.into(), generation.to_string());
        if let Some(s) = template.spec.as_mut() {
            add_daemon_tolerations(s);
        }
        self.expectations.expect_creations(key, nodes.len() as i64, ctx.now);
        let owner = controller_ref(set_obj);
        let mut queue = nodes.iter();
        let name = key.1.clone();
        let (successes, error) = crate::replicaset::slow_start_batch(nodes.len(), 1, || {
            let node = queue.next().expect("one per node");
            let mut pod = crate::replicaset::pod_from_template(&template, &key.0, &name, owner.clone());
            if let Some(s) = pod.spec.as_mut() {
                pin_to_node(s, node);
            }
            match ctx.create(Object::Pod(Box::new(pod))) {
                Ok(created) => {
                    ctx.event(set_obj, "Normal", "SuccessfulCreate", format!("Created pod: {}", created.name()));
                    Ok(())
                }
                Err(e) if e.code == 403 && e.message.contains("because it is being terminated") => Ok(()),
                Err(e) => {
                    ctx.event(set_obj, "Warning", "FailedCreate", format!("Error creating: {}", e.message));
                    Err(e)
                }
            }
        });
        for _ in successes..nodes.len() {
            self.expectations.creation_observed(key);
        }
        error.map_or(Ok(()), Err)
    }
}

/// The node a daemon pod is for: its nodeName, or the node its affinity pins it to.
fn pod_node_or_affinity(pod: &Pod) -> String {
    let node = pod_node(pod);
    if !node.is_empty() {
        return node.to_string();
    }
    pod.spec
        .as_ref()
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref())
        .and_then(|r| r.node_selector_terms.first())
        .and_then(|t| t.match_fields.as_ref())
        .and_then(|f| f.iter().find(|r| r.key == "metadata.name"))
        .and_then(|r| r.values.as_ref())
        .and_then(|v| v.first().cloned())
        .unwrap_or_default()
}

impl Reconciler for DaemonSetController {
    fn name(&self) -> &'static str {
        "daemonset-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("apps", "daemonsets")) => sets,
        Informer::all(("", "pods")) => pods,
        Informer::all(("", "nodes")) => nodes,
        Informer::all(("apps", "controllerrevisions")) => revisions,
    }
    /// Pods of its own kind and orphans only: the claim skips pods other controllers own.
    fn keeps(&self, resource: kubesim_store::Resource, object: &Object) -> bool {
        resource != ("", "pods") || controlled_by_kind_or_orphan(object, "DaemonSet")
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("apps", "daemonsets") => {
                if event.event_type == kubesim_store::EventType::Deleted {
                    self.expectations.forget(&key_of(&event.object));
                }
                self.queue.add(key_of(&event.object), ctx);
            }
            ("", "pods") => {
                if let Some(key) = self.owner_key(&event.object) {
                    let pk = key_of(&event.object);
                    match event.event_type {
                        kubesim_store::EventType::Added => self.expectations.creation_observed(&key),
                        kubesim_store::EventType::Deleted => self.expectations.deletion_observed(&key, &pk),
                        kubesim_store::EventType::Modified => {
                            if is_deleting(event.object.metadata()) && change.old.is_some_and(|o| !is_deleting(o.metadata())) {
                                self.expectations.deletion_observed(&key, &pk);
                            }
                        }
                    }
                    self.queue.add(key, ctx);
                }
            }
            ("", "nodes") => {
                let relevant = |o: &Object| o.as_node().map(|n| (n.metadata.labels.clone(), n.spec.as_ref().and_then(|s| s.taints.clone())));
                if change.old.as_deref().map(relevant) == Some(relevant(&event.object)) {
                    return;
                }
                self.queue.add_all(&self.sets, ctx);
            }
            _ => {}
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}
