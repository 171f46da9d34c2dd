//! The ReplicaSet controller (pkg/controller/replicaset/replica_set.go).
//!
//! Level-triggered: every sync reads the informer caches, claims pods (adoption/release),
//! creates or deletes pods to match spec.replicas — creations in slow-start batches (1, 2, 4,
//! ...), at most `burstReplicas` (500) per sync, guarded by expectations — and writes status.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetCondition, ReplicaSetStatus};
use kubesim_api::k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use kubesim_api::k8s_openapi::api::core::v1::{ReplicationController, ReplicationControllerCondition, ReplicationControllerStatus};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubesim_api::object::{kind_info, Object};
use kubesim_api::selector::Selector;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::{Ctx, WatchEvent};
use kubesim_store::EventType;
use kubesim_store::Resource;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `BurstReplicas`: the most pods one sync creates or deletes.
pub const BURST_REPLICAS: usize = 500;
/// `SlowStartInitialBatchSize`.
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;
/// `controller.kubernetes.io/pod-deletion-cost`.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// Modelled processing latency of the work queue.
pub const SYNC_LATENCY_MS: Millis = 10;

/// The batch sizes `slowStartBatch` uses for `count` creations.
pub fn slow_start_batches(count: usize, initial: usize) -> Vec<usize> {
    let mut batches = Vec::new();
    let mut remaining = count;
    let mut size = initial.min(remaining);
    while size > 0 {
        batches.push(size);
        remaining -= size;
        size = (2 * size).min(remaining);
    }
    batches
}

/// `slowStartBatch`: runs `f` in doubling batches, stopping after the first batch with an error.
/// Returns (successes, first error).
pub fn slow_start_batch<E>(count: usize, initial: usize, mut f: impl FnMut() -> Result<(), E>) -> (usize, Option<E>) {
    let mut successes = 0;
    for size in slow_start_batches(count, initial) {
        let mut first_error = None;
        for _ in 0..size {
            match f() {
                Ok(()) => successes += 1,
                Err(e) => {
                    if first_error.is_none() {
                        first_error = Some(e);
                    }
                }
            }
        }
        if first_error.is_some() {
            return (successes, first_error);
        }
    }
    (successes, None)
}

fn phase_ordinal(pod: &Pod) -> u8 {
    match pod_phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0, // Pending (and unset) — map lookups of other phases give 0 upstream too
    }
}

/// The pod-deletion-cost annotation (0 if absent or invalid).
pub fn deletion_cost(pod: &Pod) -> i32 {
    pod.metadata.annotations.as_ref().and_then(|a| a.get(POD_DELETION_COST)).and_then(|v| v.parse::<i32>().ok()).unwrap_or(0)
}

fn max_restarts(pod: &Pod) -> (i32, i32) {
    let status = pod.status.as_ref();
    let regular = status.and_then(|s| s.container_statuses.as_ref()).into_iter().flatten().map(|c| c.restart_count).max().unwrap_or(0);
    let sidecar_names: Vec<&str> = pod
        .spec
        .as_ref()
        .and_then(|s| s.init_containers.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .map(|c| c.name.as_str())
        .collect();
    let sidecar = status
        .and_then(|s| s.init_container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| sidecar_names.contains(&c.name.as_str()))
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0);
    (regular, sidecar)
}

fn log2_bucket(now: Millis, t: Millis) -> i64 {
    // Durations in nanoseconds, as Go's time.Duration.
    let d = (now as i128 - t as i128) * 1_000_000;
    if d > 0 {
        (d as f64).log2() as i64
    } else {
        -1
    }
}

/// Compares two times the way `afterOrZero` / `logarithmicRankDiff` do; `None` = equal.
fn compare_times(ti: Option<Millis>, tj: Option<Millis>, now: Millis, uid_i: &str, uid_j: &str) -> Option<bool> {
    if ti == tj {
        return None;
    }
    match (ti, tj) {
        (None, _) => Some(true),
        (_, None) => Some(false),
        (Some(a), Some(b)) => {
            let diff = log2_bucket(now, a) - log2_bucket(now, b);
            if diff == 0 {
                Some(uid_i < uid_j)
            } else {
                Some(diff < 0)
            }
        }
    }
}

/// `ActivePodsWithRanks.Less`: whether pod `i` (with `rank_i` co-located related pods) should
/// be deleted before pod `j`. `deletion_cost_enabled` mirrors the PodDeletionCost gate.
pub fn pod_deletes_before(i: &Pod, rank_i: usize, j: &Pod, rank_j: usize, now: Millis, deletion_cost_enabled: bool) -> bool {
    let (ni, nj) = (pod_node(i), pod_node(j));
    if ni != nj && (ni.is_empty() || nj.is_empty()) {
        return ni.is_empty();
    }
    let (pi, pj) = (phase_ordinal(i), phase_ordinal(j));
    if pi != pj {
        return pi < pj;
    }
    let (ri, rj) = (is_pod_ready(i), is_pod_ready(j));
    if ri != rj {
        return !ri;
    }
    if deletion_cost_enabled {
        let (ci, cj) = (deletion_cost(i), deletion_cost(j));
        if ci != cj {
            return ci < cj;
        }
    }
    if rank_i != rank_j {
        return rank_i > rank_j;
    }
    let uid_i = i.metadata.uid.as_deref().unwrap_or("");
    let uid_j = j.metadata.uid.as_deref().unwrap_or("");
    if ri && rj {
        if let Some(result) = compare_times(pod_ready_since(i), pod_ready_since(j), now, uid_i, uid_j) {
            return result;
        }
    }
    let (restarts_i, restarts_j) = (max_restarts(i), max_restarts(j));
    if restarts_i.0 != restarts_j.0 {
        return restarts_i.0 > restarts_j.0;
    }
    if restarts_i.1 != restarts_j.1 {
        return restarts_i.1 > restarts_j.1;
    }
    let ci = i.metadata.creation_timestamp.as_ref().map(kubesim_api::time::millis_of);
    let cj = j.metadata.creation_timestamp.as_ref().map(kubesim_api::time::millis_of);
    compare_times(ci, cj, now, uid_i, uid_j).unwrap_or(false)
}

/// `getPodsToDelete`: the `diff` pods to delete among `pods`, ranking by co-located active
/// related pods (pods of every RS with the same controller).
pub fn pods_to_delete<'a>(pods: &[&'a Pod], related: &[&Pod], diff: usize, now: Millis) -> Vec<&'a Pod> {
    if diff >= pods.len() {
        return pods.to_vec();
    }
    let mut on_node: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in related {
        if is_pod_active(pod) {
            *on_node.entry(pod_node(pod)).or_insert(0) += 1;
        }
    }
    let mut ranked: Vec<(&Pod, usize)> = pods.iter().map(|p| (*p, on_node.get(pod_node(p)).copied().unwrap_or(0))).collect();
    sort_by_less(&mut ranked, &|a: &(&Pod, usize), b: &(&Pod, usize)| pod_deletes_before(a.0, a.1, b.0, b.1, now, true));
    ranked.into_iter().take(diff).map(|(p, _)| p).collect()
}

/// `GetPodFromTemplate`: the pod a controller creates from its template.
pub fn pod_from_template(template: &PodTemplateSpec, namespace: &str, prefix_name: &str, owner: OwnerReference) -> Pod {
    let meta = template.metadata.clone().unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            namespace: Some(namespace.to_string()),
            generate_name: Some(format!("{prefix_name}-")),
            labels: meta.labels.clone(),
            annotations: meta.annotations.clone(),
            finalizers: meta.finalizers.clone(),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

/// calculateStatus: the RS status for its owned active pods.
pub fn calculate_status(rs: &ReplicaSet, pods: &[&Pod], manage_error: Option<&str>, now: Millis) -> ReplicaSetStatus {
    let spec = rs.spec.as_ref();
    let template_labels = template_labels(rs);
    let min_ready = spec.and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let mut counts = PodCounts { replicas: pods.len(), ..PodCounts::default() };
    for pod in pods {
        if fully_labeled(template_labels, pod.metadata.labels.as_ref()) {
            counts.fully_labeled += 1;
        }
        if is_pod_ready(pod) {
            counts.ready += 1;
            if is_pod_available(pod, min_ready, now) {
                counts.available += 1;
            }
        }
    }
    status_of_counts(rs, counts, manage_error, now)
}

/// A label map.
type Labels = BTreeMap<String, String>;

/// The template's labels, if set.
fn template_labels(rs: &ReplicaSet) -> Option<&Labels> {
    rs.spec.as_ref().and_then(|s| s.template.as_ref()).and_then(|t| t.metadata.as_ref()).and_then(|m| m.labels.as_ref())
}

/// Whether a pod's labels carry every template label (the status' fullyLabeledReplicas).
fn fully_labeled(template_labels: Option<&Labels>, labels: Option<&Labels>) -> bool {
    template_labels.is_none_or(|t| t.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v)))
}

/// What [`calculate_status`] counts of the owned pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodCounts {
    /// Owned active pods.
    pub replicas: usize,
    /// Of them, those carrying every template label.
    pub fully_labeled: i32,
    /// Ready ones.
    pub ready: i32,
    /// Ready for minReadySeconds.
    pub available: i32,
}

/// calculateStatus from the counts: the status fields and the ReplicaFailure condition.
fn status_of_counts(rs: &ReplicaSet, counts: PodCounts, manage_error: Option<&str>, now: Millis) -> ReplicaSetStatus {
    let PodCounts { fully_labeled, ready, available, .. } = counts;
    let old = rs.status.clone().unwrap_or_default();
    let mut conditions = old.conditions.clone().unwrap_or_default();
    let has_failure = conditions.iter().any(|c| c.type_ == "ReplicaFailure");
    match manage_error {
        Some(message) if !has_failure => {
            let diff = counts.replicas as i64 - rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1) as i64;
            let reason = match diff.cmp(&0) {
                Ordering::Less => "FailedCreate",
                Ordering::Greater => "FailedDelete",
                Ordering::Equal => "",
            };
            conditions.push(ReplicaSetCondition {
                type_: "ReplicaFailure".into(),
                status: "True".into(),
                reason: Some(reason.into()),
                message: Some(message.to_string()),
                last_transition_time: Some(kubesim_api::time::time_at(now)),
            });
        }
        None if has_failure => conditions.retain(|c| c.type_ != "ReplicaFailure"),
        _ => {}
    }
    ReplicaSetStatus {
        replicas: counts.replicas as i32,
        fully_labeled_replicas: nz(fully_labeled),
        ready_replicas: nz(ready),
        available_replicas: nz(available),
        observed_generation: old.observed_generation,
        conditions: if conditions.is_empty() { None } else { Some(conditions) },
        terminating_replicas: None,
    }
}

/// The ReplicaSet controller.
#[derive(Clone, Debug)]
pub struct ReplicaSetController {
    rc: bool,
    rss: Cache,
    pods: Cache,
    queue: WorkQueue,
    expectations: Expectations,
    /// Pods examined by the syncs of the current batch (for the modelled sync cost).
    examined: u64,
}

impl Default for ReplicaSetController {
    fn default() -> Self {
        ReplicaSetController::new()
    }
}

/// The ReplicaSet view of a ReplicaSet or a ReplicationController (whose map selector —
/// defaulting to the template labels — becomes matchLabels).
fn as_rs(object: &Object) -> Option<std::borrow::Cow<'_, ReplicaSet>> {
    match object {
        Object::ReplicaSet(rs) => Some(std::borrow::Cow::Borrowed(rs)),
        Object::Dynamic(d) if d.kind == "ReplicationController" => {
            let rc: ReplicationController = decode(object)?;
            let spec = rc.spec.unwrap_or_default();
            let template_labels = spec.template.as_ref().and_then(|t| t.metadata.as_ref()).and_then(|m| m.labels.clone());
            let selector = spec.selector.clone().filter(|s| !s.is_empty()).or(template_labels);
            let status = rc.status.map(|s| ReplicaSetStatus {
                replicas: s.replicas,
                fully_labeled_replicas: s.fully_labeled_replicas,
                ready_replicas: s.ready_replicas,
                available_replicas: s.available_replicas,
                observed_generation: s.observed_generation,
                conditions: s.conditions.map(|c| {
                    c.into_iter()
                        .map(|c| ReplicaSetCondition {
                            type_: c.type_,
                            status: c.status,
                            reason: c.reason,
                            message: c.message,
                            last_transition_time: c.last_transition_time,
                        })
                        .collect()
                }),
                terminating_replicas: None,
            });
            let _ = d;
            Some(std::borrow::Cow::Owned(ReplicaSet {
                metadata: rc.metadata,
                spec: Some(kubesim_api::k8s_openapi::api::apps::v1::ReplicaSetSpec {
                    replicas: Some(spec.replicas.unwrap_or(1)),
                    min_ready_seconds: spec.min_ready_seconds,
                    selector: kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector { match_labels: selector, match_expressions: None },
                    template: spec.template,
                }),
                status,
            }))
        }
        _ => None,
    }
}

/// The object to PUT for a status change of `object` (a ReplicaSet or a ReplicationController).
fn with_status(object: &Object, rs: ReplicaSet) -> Object {
    match object {
        Object::Dynamic(_) => {
            let mut rc: ReplicationController = decode(object).unwrap_or_default();
            rc.metadata = rs.metadata;
            rc.status = rs.status.map(|s| ReplicationControllerStatus {
                replicas: s.replicas,
                fully_labeled_replicas: s.fully_labeled_replicas,
                ready_replicas: s.ready_replicas,
                available_replicas: s.available_replicas,
                observed_generation: s.observed_generation,
                conditions: s.conditions.map(|c| {
                    c.into_iter()
                        .map(|c| ReplicationControllerCondition {
                            type_: c.type_,
                            status: c.status,
                            reason: c.reason,
                            message: c.message,
                            last_transition_time: c.last_transition_time,
                        })
                        .collect()
                }),
            });
            encode(&rc, "v1", "ReplicationController")
        }
        _ => Object::ReplicaSet(Box::new(rs)),
    }
}

fn rs_selector(rs: &ReplicaSet) -> Selector {
    rs.spec.as_ref().map(|s| Selector::from_label_selector(&s.selector)).unwrap_or_default()
}

impl ReplicaSetController {
    /// A controller with empty caches.
    pub fn new() -> ReplicaSetController {
        ReplicaSetController {
            rc: false,
            rss: Cache::default(),
            pods: Cache::with_pod_facts(),
            queue: WorkQueue::new(SYNC_LATENCY_MS),
            expectations: Expectations::default(),
            examined: 0,
        }
    }

    /// The ReplicationManager: the same controller over ReplicationControllers
    /// (pkg/controller/replication wraps the ReplicaSet controller the same way).
    pub fn replication_manager() -> ReplicaSetController {
        ReplicaSetController { rc: true, ..ReplicaSetController::new() }
    }

    fn kind(&self) -> &'static str {
        if self.rc {
            "ReplicationController"
        } else {
            "ReplicaSet"
        }
    }

    fn resource(&self) -> (&'static str, &'static str) {
        if self.rc {
            ("", "replicationcontrollers")
        } else {
            ("apps", "replicasets")
        }
    }

    fn resolve(&self, namespace: &str, reference: &OwnerReference) -> Option<Key> {
        self.rss.resolve_controller_ref(namespace, reference, self.kind())
    }

    fn matching_rss(&self, pod: &Object) -> Vec<Key> {
        let labels = pod.metadata().labels.clone();
        self.rss
            .in_namespace(pod.namespace())
            .filter(|o| {
                let sel = as_rs(o).map(|r| rs_selector(&r)).unwrap_or_default();
                !sel.is_empty() && sel.matches(labels.as_ref())
            })
            .map(|o| key_of(o))
            .collect()
    }

    fn pod_deleted(&mut self, pod: &Object, ctx: &mut Ctx) {
        let Some(reference) = controller_of(pod.metadata()) else { return };
        let Some(key) = self.resolve(pod.namespace(), reference) else { return };
        self.expectations.deletion_observed(&key, &key_of(pod));
        self.queue.add(key, ctx);
    }

    fn on_pod(&mut self, event: &WatchEvent, old: Option<Arc<Object>>, ctx: &mut Ctx) {
        let pod = &event.object;
        match event.event_type {
            EventType::Deleted => self.pod_deleted(pod, ctx),
            EventType::Added => {
                if is_deleting(pod.metadata()) {
                    return self.pod_deleted(pod, ctx);
                }
                if let Some(reference) = controller_of(pod.metadata()) {
                    if let Some(key) = self.resolve(pod.namespace(), reference) {
                        self.expectations.creation_observed(&key);
                        self.queue.add(key, ctx);
                    }
                    return;
                }
                for key in self.matching_rss(pod) {
                    self.queue.add(key, ctx);
                }
            }
            EventType::Modified => {
                let Some(old) = old else {
                    // First sight of this pod (it entered the cache late, or was another
                    // kind's and is ours or an orphan now): treat it as an add.
                    match controller_of(pod.metadata()) {
                        Some(reference) => {
                            if let Some(key) = self.resolve(pod.namespace(), reference) {
                                self.queue.add(key, ctx);
                            }
                        }
                        None if !is_deleting(pod.metadata()) => {
                            for key in self.matching_rss(pod) {
                                self.queue.add(key, ctx);
                            }
                        }
                        None => {}
                    }
                    return;
                };
                if old.resource_version() == pod.resource_version() {
                    return;
                }
                let label_changed = old.metadata().labels != pod.metadata().labels;
                if is_deleting(pod.metadata()) {
                    self.pod_deleted(pod, ctx);
                    if label_changed {
                        self.pod_deleted(&old, ctx);
                    }
                    return;
                }
                let cur_ref = controller_of(pod.metadata());
                let old_ref = controller_of(old.metadata());
                let ref_changed = cur_ref != old_ref;
                if ref_changed {
                    if let Some(key) = old_ref.as_ref().and_then(|r| self.resolve(pod.namespace(), r)) {
                        self.queue.add(key, ctx);
                    }
                }
                if let Some(reference) = cur_ref {
                    let Some(key) = self.resolve(pod.namespace(), reference) else { return };
                    self.queue.add(key.clone(), ctx);
                    let min_ready = self.rss.get(&key).and_then(|o| as_rs(o)).and_then(|rs| rs.spec.as_ref().and_then(|s| s.min_ready_seconds)).unwrap_or(0);
                    let (was_ready, is_ready) = (old.as_pod().is_some_and(is_pod_ready), pod.as_pod().is_some_and(is_pod_ready));
                    if !was_ready && is_ready && min_ready > 0 {
                        self.queue.add_after(key, (min_ready as Millis) * 1000 + 1000, ctx);
                    }
                    return;
                }
                if label_changed || ref_changed {
                    for key in self.matching_rss(pod) {
                        self.queue.add(key, ctx);
                    }
                }
            }
        }
    }

    /// syncReplicaSet for one key.
    pub fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.rss.get(key).cloned() else {
            self.expectations.forget(key);
            return Ok(());
        };
        let Some(rs) = as_rs(&object) else { return Ok(()) };
        let rs: &ReplicaSet = &rs;
        let needs_sync = self.expectations.satisfied(key, ctx.now);
        let selector = rs_selector(rs);
        let owner_uid = rs.metadata.uid.clone().unwrap_or_default();
        // Where claiming would change nothing (no orphan to adopt, no owned pod to release),
        // the owned pods are counted from the cache's facts; else, and where scaling down
        // must rank the pods themselves, they are claimed one by one.
        let manages = needs_sync && !is_deleting(&rs.metadata);
        let want = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1) as i64;
        let counted = self.count_owned(&key.0, &owner_uid, rs, &selector, ctx.now).filter(|(_, counts)| !(manages && counts.replicas as i64 > want));
        let owned: Vec<Arc<Object>> = match counted {
            Some((examined, _)) => {
                self.examined += examined;
                Vec::new()
            }
            None => {
                let candidates: Vec<Arc<Object>> =
                    self.pods.claim_candidates(&key.0, &owner_uid).filter(|o| o.as_pod().is_some_and(is_pod_active)).cloned().collect();
                self.examined += candidates.len() as u64;
                claim(ctx, &object, &selector, candidates, &mut self.pods)?
            }
        };
        let owned_pods: Vec<&Pod> = owned.iter().filter_map(|o| o.as_pod()).collect();
        let replicas = counted.map_or(owned_pods.len(), |(_, counts)| counts.replicas);
        let mut manage_error = None;
        if manages {
            if let Err(e) = self.manage_replicas(key, &object, rs, replicas, &owned_pods, ctx) {
                manage_error = Some(e);
            }
        }
        let manage_message = manage_error.as_ref().map(|e| e.message.as_str());
        let new_status = match counted {
            Some((_, counts)) => status_of_counts(rs, counts, manage_message, ctx.now),
            None => calculate_status(rs, &owned_pods, manage_message, ctx.now),
        };
        let updated = self.update_status(&object, rs, new_status, ctx)?;
        if let Some(rs) = as_rs(&updated).as_deref() {
            let min_ready = rs.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
            let replicas = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
            let status = rs.status.as_ref();
            let ready = status.and_then(|s| s.ready_replicas).unwrap_or(0);
            let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
            if manage_error.is_none() && min_ready > 0 && ready == replicas && available != replicas {
                self.queue.add_after(key.clone(), (min_ready as Millis) * 1000, ctx);
            }
        }
        match manage_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn update_status(&mut self, object: &Arc<Object>, rs: &ReplicaSet, mut status: ReplicaSetStatus, ctx: &mut Ctx) -> Result<Arc<Object>, ApiError> {
        let generation = rs.metadata.generation.unwrap_or(0);
        let old = rs.status.clone().unwrap_or_default();
        status.observed_generation = Some(generation);
        if old == status {
            return Ok(object.clone());
        }
        // The status subresource takes the metadata (name, resourceVersion) and the status;
        // the API server keeps the stored spec, so none is copied into the request.
        let mut metadata = std::borrow::Cow::Borrowed(&rs.metadata);
        for attempt in 0..2 {
            let current = ReplicaSet { metadata: metadata.clone().into_owned(), spec: None, status: Some(status.clone()) };
            match ctx.update_status(with_status(object, current)) {
                Ok(updated) => {
                    self.rss.put(updated.clone());
                    return Ok(updated);
                }
                Err(e) if attempt == 0 && is_conflict(&e) => {
                    let info = object.info().expect("served");
                    let fresh = ctx.api.get(info, rs.metadata.namespace.as_deref().unwrap_or(""), rs.metadata.name.as_deref().unwrap_or(""))?;
                    match as_rs(&fresh) {
                        Some(f) => metadata = std::borrow::Cow::Owned(f.metadata.clone()),
                        None => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(object.clone())
    }

    fn related_pods(&self, rs: &ReplicaSet) -> Vec<Arc<Object>> {
        let namespace = rs.metadata.namespace.clone().unwrap_or_default();
        let related_rss: Vec<ReplicaSet> = match controller_of(&rs.metadata) {
            None => vec![rs.clone()],
            Some(owner) => self
                .rss
                .in_namespace(&namespace)
                .filter_map(|o| as_rs(o).map(|r| r.into_owned()))
                .filter(|r| controller_of(&r.metadata).is_some_and(|c| c.uid == owner.uid))
                .collect(),
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for r in &related_rss {
            let sel = rs_selector(r);
            for pod in self.pods.in_namespace(&namespace) {
                if sel.matches(pod.metadata().labels.as_ref()) && seen.insert(key_of(pod)) {
                    out.push(pod.clone());
                }
            }
        }
        out
    }

    /// The owned active pods counted from the cache's [`PodFacts`] with what the sync charges
    /// for examining them, or `None` where claiming would write (an owned pod whose labels no
    /// longer match the selector is released, a matching orphan adopted) or the cache keeps no
    /// facts: the same counts [`calculate_status`] takes from the claimed pods.
    fn count_owned(&self, namespace: &str, owner_uid: &str, rs: &ReplicaSet, selector: &Selector, now: Millis) -> Option<(u64, PodCounts)> {
        let owner_deleting = is_deleting(&rs.metadata);
        let template = template_labels(rs);
        let min_ready = rs.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
        // Distinct label sets (by their interned pointer): whether each matches the selector
        // and carries the template's labels.
        let mut seen: Vec<(Option<*const Labels>, bool, bool)> = Vec::new();
        let mut examined = 0;
        let mut counts = PodCounts::default();
        for facts in self.pods.controlled_pod_facts(namespace, owner_uid)? {
            if !facts.active {
                continue;
            }
            examined += 1;
            let id = facts.labels.as_ref().map(Arc::as_ptr);
            let (matches, full) = match seen.iter().find(|s| s.0 == id) {
                Some(&(_, matches, full)) => (matches, full),
                None => {
                    let labels = facts.labels.as_deref();
                    let answer = (selector.matches(labels), fully_labeled(template, labels));
                    seen.push((id, answer.0, answer.1));
                    answer
                }
            };
            if !matches {
                if owner_deleting {
                    continue;
                }
                return None;
            }
            counts.replicas += 1;
            counts.fully_labeled += i32::from(full);
            if facts.ready {
                counts.ready += 1;
                if ready_long_enough(facts.ready_since, min_ready, now) {
                    counts.available += 1;
                }
            }
        }
        for orphan in self.pods.orphans_in(namespace) {
            if !orphan.as_pod().is_some_and(is_pod_active) {
                continue;
            }
            examined += 1;
            if !(owner_deleting || !selector.matches(orphan.metadata().labels.as_ref()) || is_deleting(orphan.metadata())) {
                return None;
            }
        }
        Some((examined, counts))
    }

    /// Creates or deletes pods toward `spec.replicas`; `replicas` is the owned active pods'
    /// number, `pods` the pods themselves (needed, and given, only when scaling down).
    fn manage_replicas(&mut self, key: &Key, object: &Arc<Object>, rs: &ReplicaSet, replicas: usize, pods: &[&Pod], ctx: &mut Ctx) -> Result<(), ApiError> {
        let spec = rs.spec.clone().unwrap_or_default();
        let want = spec.replicas.unwrap_or(1) as i64;
        let diff = replicas as i64 - want;
        if diff < 0 {
            let count = ((-diff) as usize).min(BURST_REPLICAS);
            self.expectations.expect_creations(key, count as i64, ctx.now);
            let template = spec.template.clone().unwrap_or_default();
            let has_labels = template.metadata.as_ref().and_then(|m| m.labels.as_ref()).is_some_and(|l| !l.is_empty());
            let owner = controller_ref(object);
            let name = key.1.clone();
            let (successes, error) = slow_start_batch(count, SLOW_START_INITIAL_BATCH_SIZE, || {
                if !has_labels {
                    return Err(ApiError::invalid("unable to create pods, no labels".into()));
                }
                let pod = pod_from_template(&template, &key.0, &name, owner.clone());
                match ctx.create(Object::Pod(Box::new(pod))) {
                    Ok(created) => {
                        ctx.event(object, "Normal", "SuccessfulCreate", format!("Created pod: {}", created.name()));
                        Ok(())
                    }
                    Err(e) => {
                        let terminating = e.code == 403 && e.message.contains("because it is being terminated");
                        if terminating {
                            return Ok(());
                        }
                        ctx.event(object, "Warning", "FailedCreate", format!("Error creating: {}", e.message));
                        Err(e)
                    }
                }
            });
            for _ in successes..count {
                self.expectations.creation_observed(key);
            }
            return match error {
                Some(e) => Err(e),
                None => Ok(()),
            };
        }
        if diff > 0 {
            let count = (diff as usize).min(BURST_REPLICAS);
            let related = self.related_pods(rs);
            let related_pods: Vec<&Pod> = related.iter().filter_map(|o| o.as_pod()).collect();
            let victims = pods_to_delete(pods, &related_pods, count, ctx.now);
            let victim_keys: Vec<Key> =
                victims.iter().map(|p| (p.metadata.namespace.clone().unwrap_or_default(), p.metadata.name.clone().unwrap_or_default())).collect();
            self.expectations.expect_deletions(key, victim_keys.clone(), ctx.now);
            let info = kind_info("v1", "Pod").expect("served");
            let mut first_error = None;
            for pod_key in victim_keys {
                match ctx.delete(info, &pod_key.0, &pod_key.1, DeleteOptions::default()) {
                    Ok(_) => ctx.event(object, "Normal", "SuccessfulDelete", format!("Deleted pod: {}", pod_key.1)),
                    Err(e) => {
                        self.expectations.deletion_observed(key, &pod_key);
                        if !is_not_found(&e) {
                            ctx.event(object, "Warning", "FailedDelete", format!("Error deleting: {}", e.message));
                            first_error.get_or_insert(e);
                        }
                    }
                }
            }
            if let Some(e) = first_error {
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Reconciler for ReplicaSetController {
    fn name(&self) -> &'static str {
        if self.rc {
            "replication-controller"
        } else {
            "replicaset-controller"
        }
    }
    fn informers(&self) -> Vec<Informer> {
        vec![Informer::all(self.resource()), Informer::all(("", "pods"))]
    }
    fn informer_for(&self, resource: Resource) -> Option<Informer> {
        (resource == self.resource() || resource == ("", "pods")).then_some(Informer::all(resource))
    }
    fn primary_resource(&self) -> Resource {
        self.resource()
    }
    fn cache(&mut self, resource: Resource) -> Option<&mut Cache> {
        match resource {
            ("", "pods") => Some(&mut self.pods),
            _ => Some(&mut self.rss),
        }
    }
    fn queue(&mut self) -> Option<&mut WorkQueue> {
        Some(&mut self.queue)
    }
    fn keeps(&self, resource: Resource, object: &Object) -> bool {
        // ClaimPods acts only on its own kind's pods and on orphans: the others (a
        // ReplicationController's pods here, every ReplicaSet's in the replication manager)
        // stay out of the cache; the handlers still see their events.
        resource != ("", "pods") || controlled_by_kind_or_orphan(object, self.kind())
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        if event.resource == ("", "pods") {
            return self.on_pod(event, change.old, ctx);
        }
        let key = key_of(&event.object);
        if event.event_type == EventType::Deleted {
            self.expectations.forget(&key);
        }
        self.queue.add(key, ctx);
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|()| Action::AwaitChange)
    }
    fn take_examined(&mut self) -> u64 {
        std::mem::take(&mut self.examined)
    }
}

#[cfg(test)]
mod facts_tests {
    use super::*;

    fn pod(name: &str, labels: serde_json::Value, owner: Option<&str>, phase: &str, ready: Option<(&str, &str)>, deleting: bool) -> Arc<Object> {
        let mut meta = serde_json::json!({"name": name, "namespace": "default", "labels": labels, "resourceVersion": "1"});
        if let Some(uid) = owner {
            meta["ownerReferences"] = serde_json::json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": uid, "controller": true}]);
        }
        if deleting {
            meta["deletionTimestamp"] = serde_json::json!("2025-01-01T00:00:05Z");
        }
        let mut status = serde_json::json!({"phase": phase});
        if let Some((s, at)) = ready {
            status["conditions"] = serde_json::json!([{"type": "Ready", "status": s, "lastTransitionTime": at}]);
        }
        let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": meta, "spec": {"containers": []}, "status": status})).expect("a pod");
        Arc::new(Object::Pod(Box::new(pod)))
    }

    fn rs(min_ready: i32, template_labels: serde_json::Value, deleting: bool) -> ReplicaSet {
        let mut meta = serde_json::json!({"name": "web", "namespace": "default", "uid": "rs-uid"});
        if deleting {
            meta["deletionTimestamp"] = serde_json::json!("2025-01-01T00:00:05Z");
        }
        serde_json::from_value(serde_json::json!({
            "metadata": meta,
            "spec": {"replicas": 3, "minReadySeconds": min_ready, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": template_labels}}}
        }))
        .expect("a replicaset")
    }

    /// The sync's count from the cache's facts gives the status calculate_status gives over
    /// the pods claim returns, or declines where claim would write.
    #[test]
    fn counts_from_pod_facts_match_calculate_status_over_the_claimed_pods() {
        let web = serde_json::json!({"app": "web", "tier": "front"});
        let pods = [
            pod("a", web.clone(), Some("rs-uid"), "Running", Some(("True", "2025-01-01T00:00:01Z")), false),
            pod("b", web.clone(), Some("rs-uid"), "Running", Some(("True", "2025-01-01T00:00:09Z")), false),
            pod("c", serde_json::json!({"app": "web"}), Some("rs-uid"), "Pending", Some(("False", "2025-01-01T00:00:01Z")), false),
            pod("d", web.clone(), Some("rs-uid"), "Running", Some(("True", "2025-01-01T00:00:01Z")), true),
            pod("e", web.clone(), Some("rs-uid"), "Succeeded", None, false),
            pod("f", web.clone(), Some("other-uid"), "Running", Some(("True", "2025-01-01T00:00:01Z")), false),
            pod("g", serde_json::json!({"app": "db"}), None, "Running", None, false),
            pod("h", web.clone(), None, "Running", None, true),
        ];
        for (min_ready, now) in [(0, 10_000), (5, 10_000), (5, 20_000)] {
            for template in [web.clone(), serde_json::json!({"app": "web"}), serde_json::json!(null)] {
                let rs = rs(min_ready, template, false);
                let mut controller = ReplicaSetController::new();
                for p in &pods {
                    controller.pods.put(p.clone());
                }
                let (examined, counts) = controller.count_owned("default", "rs-uid", &rs, &rs_selector(&rs), now).expect("nothing to adopt or release");
                let claimed: Vec<&Pod> = ["a", "b", "c"].iter().map(|n| pods.iter().find(|p| p.name() == *n).and_then(|p| p.as_pod()).expect("pod")).collect();
                assert_eq!(examined, 4, "a, b, c and the orphan g are active candidates");
                assert_eq!(status_of_counts(&rs, counts, None, now), calculate_status(&rs, &claimed, None, now), "minReadySeconds {min_ready} at {now}");
            }
        }
        // An orphan that matches is adopted and an owned pod that no longer matches is
        // released: claim writes, so the count declines.
        let rs = rs(0, web.clone(), false);
        let mut controller = ReplicaSetController::new();
        controller.pods.put(pod("orphan", web.clone(), None, "Running", None, false));
        assert!(controller.count_owned("default", "rs-uid", &rs, &rs_selector(&rs), 0).is_none());
        let mut controller = ReplicaSetController::new();
        controller.pods.put(pod("stray", serde_json::json!({"app": "db"}), Some("rs-uid"), "Running", None, false));
        assert!(controller.count_owned("default", "rs-uid", &rs, &rs_selector(&rs), 0).is_none());
        // Unless the ReplicaSet is being deleted: then neither happens and the stray is skipped.
        let deleting = super::facts_tests::rs(0, web, true);
        let (examined, counts) = controller.count_owned("default", "rs-uid", &deleting, &rs_selector(&deleting), 0).expect("nothing written");
        assert_eq!((examined, counts.replicas), (1, 0));
        // Relabelled pods keep their facts current.
        let mut controller = ReplicaSetController::new();
        controller.pods.put(pod("a", serde_json::json!({"app": "web"}), Some("rs-uid"), "Running", None, false));
        let mut relabelled = pod("a", serde_json::json!({"app": "db"}), Some("rs-uid"), "Running", None, false);
        Arc::make_mut(&mut relabelled).metadata_mut().resource_version = Some("2".into());
        controller.pods.put(relabelled);
        assert!(controller.count_owned("default", "rs-uid", &rs, &rs_selector(&rs), 0).is_none());
    }
}
