//! The Deployment controller (pkg/controller/deployment: deployment_controller.go, sync.go,
//! rolling.go, recreate.go, progress.go). The arithmetic lives in [`crate::deployment_util`].

use crate::common::*;
use crate::deployment_util::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentSpec, DeploymentStatus, ReplicaSet, ReplicaSetSpec};
use kubesim_api::k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kubesim_api::object::{kind_info, Object};
use kubesim_api::selector::Selector;
use kubesim_api::time::{millis_of, time_at};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::{Ctx, WatchEvent};
use kubesim_store::EventType;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Modelled processing latency of the work queue.
pub const SYNC_LATENCY_MS: Millis = 10;

type Result<T> = std::result::Result<T, ApiError>;

fn as_deployment(object: &Object) -> Option<&Deployment> {
    match object {
        Object::Deployment(d) => Some(d),
        _ => None,
    }
}

fn as_rs(object: &Object) -> Option<&ReplicaSet> {
    match object {
        Object::ReplicaSet(rs) => Some(rs),
        _ => None,
    }
}

fn rs_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
}

fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
}

/// The view of a replica set the arithmetic uses.
pub fn rs_view(rs: &ReplicaSet) -> RsView {
    let status = rs.status.clone().unwrap_or_default();
    RsView {
        namespace: rs.metadata.namespace.clone().unwrap_or_default(),
        name: rs.metadata.name.clone().unwrap_or_default(),
        created: created_ms(&rs.metadata),
        replicas: rs_replicas(rs),
        actual: status.replicas,
        ready: status.ready_replicas.unwrap_or(0),
        available: status.available_replicas.unwrap_or(0),
        max_replicas_annotation: annotation(&rs.metadata, MAX_REPLICAS_ANNOTATION).and_then(|v| v.parse().ok()),
        desired_annotation: annotation(&rs.metadata, DESIRED_REPLICAS_ANNOTATION).and_then(|v| v.parse().ok()),
    }
}

/// The revision annotation of an object (0 if absent or invalid).
pub fn revision_of(meta: &ObjectMeta) -> i64 {
    annotation(meta, REVISION_ANNOTATION).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn d_replicas(d: &Deployment) -> i32 {
    d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
}

fn has_progress_deadline(d: &Deployment) -> bool {
    d.spec.as_ref().and_then(|s| s.progress_deadline_seconds).is_some_and(|p| p != i32::MAX)
}

/// `GetDeploymentCondition`.
pub fn get_condition<'a>(status: &'a DeploymentStatus, type_: &str) -> Option<&'a DeploymentCondition> {
    status.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// `NewDeploymentCondition`.
pub fn new_condition(type_: &str, status: &str, reason: &str, message: String, now: Millis) -> DeploymentCondition {
    DeploymentCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message),
        last_update_time: Some(time_at(now)),
        last_transition_time: Some(time_at(now)),
    }
}

/// `SetDeploymentCondition`: no-op when status and reason are unchanged; keeps
/// lastTransitionTime when only the reason changes; the condition moves to the end.
pub fn set_condition(status: &mut DeploymentStatus, mut condition: DeploymentCondition) {
    if let Some(current) = get_condition(status, &condition.type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != condition.type_);
    conditions.push(condition);
}

/// `RemoveDeploymentCondition`.
pub fn remove_condition(status: &mut DeploymentStatus, type_: &str) {
    if let Some(conditions) = status.conditions.as_mut() {
        conditions.retain(|c| c.type_ != type_);
        if conditions.is_empty() {
            status.conditions = None;
        }
    }
}

fn counts(status: &DeploymentStatus) -> StatusCounts {
    StatusCounts {
        replicas: status.replicas.unwrap_or(0),
        updated: status.updated_replicas.unwrap_or(0),
        ready: status.ready_replicas.unwrap_or(0),
        available: status.available_replicas.unwrap_or(0),
        observed_generation: status.observed_generation.unwrap_or(0),
    }
}

fn is_complete(d: &Deployment, status: &DeploymentStatus) -> bool {
    deployment_complete(d_replicas(d), d.metadata.generation.unwrap_or(0), &counts(status))
}

/// `calculateStatus`.
pub fn calculate_status(all: &[&ReplicaSet], new: Option<&ReplicaSet>, d: &Deployment, now: Millis) -> DeploymentStatus {
    let available: i32 = all.iter().map(|r| r.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0)).sum();
    let total: i32 = all.iter().map(|r| rs_replicas(r)).sum();
    let actual: i32 = all.iter().map(|r| r.status.as_ref().map(|s| s.replicas).unwrap_or(0)).sum();
    let ready: i32 = all.iter().map(|r| r.status.as_ref().and_then(|s| s.ready_replicas).unwrap_or(0)).sum();
    let updated: i32 = new.map(|r| r.status.as_ref().map(|s| s.replicas).unwrap_or(0)).unwrap_or(0);
    let old = d.status.clone().unwrap_or_default();
    let mut status = DeploymentStatus {
        observed_generation: d.metadata.generation,
        replicas: nz(actual),
        updated_replicas: nz(updated),
        ready_replicas: nz(ready),
        available_replicas: nz(available),
        unavailable_replicas: nz((total - available).max(0)),
        collision_count: old.collision_count,
        conditions: old.conditions.clone(),
        terminating_replicas: None,
    };
    let strategy = Strategy::of(d);
    if available >= strategy.replicas - strategy.max_unavailable() {
        set_condition(&mut status, new_condition("Available", "True", reasons::MIN_AVAILABLE, "Deployment has minimum availability.".into(), now));
    } else {
        set_condition(&mut status, new_condition("Available", "False", reasons::MIN_UNAVAILABLE, "Deployment does not have minimum availability.".into(), now));
    }
    status
}

/// `SetNewReplicaSetAnnotations`: copies the deployment's annotations, raises the revision
/// (recording the previous one in revision-history when an old RS is re-used), and for a new RS
/// sets desired/max replicas. Returns whether anything changed.
pub fn set_new_rs_annotations(d: &Deployment, rs: &mut ReplicaSet, new_revision: &str, exists: bool) -> bool {
    let mut changed = copy_deployment_annotations(d, rs);
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let old_revision = annotations.get(REVISION_ANNOTATION).cloned();
    let old_int: i64 = match old_revision.as_deref() {
        None | Some("") => 0,
        Some(text) => match text.parse() {
            Ok(v) => v,
            Err(_) => return false,
        },
    };
    let Ok(new_int) = new_revision.parse::<i64>() else { return false };
    if old_int < new_int {
        annotations.insert(REVISION_ANNOTATION.into(), new_revision.to_string());
        changed = true;
    }
    if let Some(old_revision) = old_revision.filter(|_| old_int < new_int) {
        let history = annotations.get(REVISION_HISTORY_ANNOTATION).cloned().unwrap_or_default();
        if let Some(updated) = append_revision_history(&history, &old_revision, MAX_REV_HISTORY_LENGTH_IN_CHARS) {
            annotations.insert(REVISION_HISTORY_ANNOTATION.into(), updated);
        }
    }
    if !exists {
        let strategy = Strategy::of(d);
        if set_replicas_annotations(rs, strategy.replicas, strategy.replicas + strategy.max_surge()) {
            changed = true;
        }
    }
    changed
}

fn skip_copy_annotation(key: &str) -> bool {
    matches!(
        key,
        LAST_APPLIED_ANNOTATION
            | REVISION_ANNOTATION
            | REVISION_HISTORY_ANNOTATION
            | DESIRED_REPLICAS_ANNOTATION
            | MAX_REPLICAS_ANNOTATION
            | DEPRECATED_ROLLBACK_TO
    )
}

fn copy_deployment_annotations(d: &Deployment, rs: &mut ReplicaSet) -> bool {
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let mut changed = false;
    for (k, v) in d.metadata.annotations.iter().flatten() {
        if skip_copy_annotation(k) || annotations.get(k) == Some(v) {
            continue;
        }
        annotations.insert(k.clone(), v.clone());
        changed = true;
    }
    changed
}

/// `SetReplicasAnnotations`.
pub fn set_replicas_annotations(rs: &mut ReplicaSet, desired: i32, max: i32) -> bool {
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let mut changed = false;
    for (key, value) in [(DESIRED_REPLICAS_ANNOTATION, desired), (MAX_REPLICAS_ANNOTATION, max)] {
        let value = value.to_string();
        if annotations.get(key) != Some(&value) {
            annotations.insert(key.into(), value);
            changed = true;
        }
    }
    changed
}

fn set_deployment_revision(d: &mut Deployment, revision: &str) -> bool {
    let annotations = d.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if annotations.get(REVISION_ANNOTATION).map(String::as_str) != Some(revision) {
        annotations.insert(REVISION_ANNOTATION.into(), revision.to_string());
        return true;
    }
    false
}

fn selector_with_hash(selector: &LabelSelector, hash: &str) -> LabelSelector {
    let mut s = selector.clone();
    s.match_labels.get_or_insert_with(BTreeMap::new).insert(POD_TEMPLATE_HASH_LABEL.into(), hash.into());
    s
}

/// The Deployment controller.
#[derive(Clone, Debug)]
pub struct DeploymentController {
    deployments: Cache,
    rss: Cache,
    pods: Cache,
    queue: WorkQueue,
}

impl Default for DeploymentController {
    fn default() -> Self {
        DeploymentController::new()
    }
}

impl DeploymentController {
    /// A controller with empty caches.
    pub fn new() -> DeploymentController {
        DeploymentController { deployments: Cache::default(), rss: Cache::default(), pods: Cache::default(), queue: WorkQueue::new(SYNC_LATENCY_MS) }
    }

    fn resolve(&self, namespace: &str, reference: &OwnerReference) -> Option<Key> {
        self.deployments.resolve_controller_ref(namespace, reference, "Deployment")
    }

    fn deployments_for_rs(&self, rs: &Object) -> Vec<Key> {
        let labels = rs.metadata().labels.clone();
        self.deployments
            .in_namespace(rs.namespace())
            .filter(|o| {
                let sel = as_deployment(o).and_then(|d| d.spec.as_ref()).map(|s| Selector::from_label_selector(&s.selector)).unwrap_or_default();
                !sel.is_empty() && sel.matches(labels.as_ref())
            })
            .map(|o| key_of(o))
            .collect()
    }

    fn on_rs(&mut self, event: &WatchEvent, old: Option<Arc<Object>>, ctx: &mut Ctx) {
        let rs = &event.object;
        let cur_ref = controller_of(rs.metadata()).cloned();
        if event.event_type == EventType::Modified {
            if let Some(old) = &old {
                let old_ref = controller_of(old.metadata()).cloned();
                if old_ref != cur_ref {
                    if let Some(key) = old_ref.as_ref().and_then(|r| self.resolve(rs.namespace(), r)) {
                        self.queue.add(key, ctx);
                    }
                }
                if cur_ref.is_none() && (old_ref != cur_ref || old.metadata().labels != rs.metadata().labels) {
                    for key in self.deployments_for_rs(rs) {
                        self.queue.add(key, ctx);
                    }
                    return;
                }
            }
        }
        match cur_ref {
            Some(r) => {
                if let Some(key) = self.resolve(rs.namespace(), &r) {
                    self.queue.add(key, ctx);
                }
            }
            None if event.event_type == EventType::Added => {
                for key in self.deployments_for_rs(rs) {
                    self.queue.add(key, ctx);
                }
            }
            None => {}
        }
    }

    fn on_pod_deleted(&mut self, pod: &Object, ctx: &mut Ctx) {
        let Some(rs_ref) = controller_of(pod.metadata()).filter(|r| r.kind == "ReplicaSet") else { return };
        let Some(rs) = self.rss.get_named(pod.namespace(), &rs_ref.name).cloned() else { return };
        let Some(d_ref) = controller_of(rs.metadata()) else { return };
        let Some(key) = self.resolve(pod.namespace(), d_ref) else { return };
        let Some(d) = self.deployments.get(&key).and_then(|o| as_deployment(o)).cloned() else { return };
        let recreate = d.spec.as_ref().and_then(|s| s.strategy.as_ref()).and_then(|s| s.type_.as_deref()) == Some("Recreate");
        if !recreate {
            return;
        }
        let rs_list = self.owned_rss(&d);
        let pods = self.pod_map(&d, &rs_list);
        if pods.values().all(|v| v.is_empty()) {
            self.queue.add(key, ctx);
        }
    }

    fn owned_rss(&self, d: &Deployment) -> Vec<&ReplicaSet> {
        let uid = uid_of(&d.metadata);
        let ns = d.metadata.namespace.as_deref().unwrap_or_default();
        self.rss.in_namespace(ns).filter_map(|o| as_rs(o)).filter(|rs| controller_of(&rs.metadata).is_some_and(|r| r.uid == uid)).collect()
    }

    /// `getPodMapForDeployment`: pods matching the selector, grouped by owning RS uid.
    fn pod_map(&self, d: &Deployment, rs_list: &[&ReplicaSet]) -> BTreeMap<String, Vec<Pod>> {
        let mut map: BTreeMap<String, Vec<Pod>> = rs_list.iter().map(|rs| (uid_of(&rs.metadata).to_string(), Vec::new())).collect();
        let selector = d.spec.as_ref().map(|s| Selector::from_label_selector(&s.selector)).unwrap_or_default();
        let ns = d.metadata.namespace.clone().unwrap_or_default();
        for pod in self.pods.in_namespace(&ns).filter_map(|o| o.as_pod()) {
            if !selector.matches(pod.metadata.labels.as_ref()) {
                continue;
            }
            if let Some(r) = controller_of(&pod.metadata) {
                if let Some(list) = map.get_mut(&r.uid) {
                    list.push(pod.clone());
                }
            }
        }
        map
    }

    /// syncDeployment for one key.
    pub fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<()> {
        let Some(object) = self.deployments.get(key).cloned() else { return Ok(()) };
        let Some(stored) = as_deployment(&object) else { return Ok(()) };
        let mut d = stored.clone();
        let no_spec = DeploymentSpec::default();
        let spec = stored.spec.as_ref().unwrap_or(&no_spec);
        let selector_empty =
            spec.selector.match_labels.as_ref().is_none_or(|m| m.is_empty()) && spec.selector.match_expressions.as_ref().is_none_or(|m| m.is_empty());
        if selector_empty {
            ctx.event(&object, "Warning", "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.".into());
            let status = d.status.get_or_insert_with(Default::default);
            if status.observed_generation.unwrap_or(0) < d.metadata.generation.unwrap_or(0) {
                status.observed_generation = d.metadata.generation;
                self.write_status(&mut d, ctx)?;
            }
            return Ok(());
        }
        let selector = Selector::from_label_selector(&spec.selector);
        let candidates: Vec<Arc<Object>> = self.rss.claim_candidates(&key.0, object.metadata().uid.as_deref().unwrap_or("")).cloned().collect();
        let claimed = claim(ctx, &object, &selector, candidates, &mut self.rss)?;
        // Borrowed from the claimed versions: get_all_and_sync_revision copies what it returns.
        let rs_list: Vec<&ReplicaSet> = claimed.iter().filter_map(|o| as_rs(o)).collect();
        if is_deleting(&d.metadata) {
            let (new_rs, old) = self.get_all_and_sync_revision(&mut d, &rs_list, false, ctx)?;
            return self.sync_status_only(&mut d, new_rs.as_deref(), &old, ctx);
        }
        self.check_paused_conditions(&mut d, ctx)?;
        if spec.paused == Some(true) {
            return self.sync_scale(&mut d, &rs_list, ctx);
        }
        if self.is_scaling_event(&mut d, &rs_list, ctx)? {
            return self.sync_scale(&mut d, &rs_list, ctx);
        }
        if Strategy::of(&d).rolling {
            self.rollout_rolling(&mut d, &rs_list, ctx)
        } else {
            let pod_map = self.pod_map(&d, &rs_list);
            self.rollout_recreate(&mut d, &rs_list, &pod_map, ctx)
        }
    }

    /// UpdateStatus. The status subresource of a Deployment also persists metadata.annotations
    /// upstream (the revision annotation is written this way); if kubesim's API server drops
    /// them, fall back to a plain update (which bumps metadata.generation — a documented
    /// deviation).
    fn write_status(&mut self, d: &mut Deployment, ctx: &mut Ctx) -> Result<()> {
        // Sent rather than copied: every caller returns on an error, and on success `d`
        // becomes the stored version.
        let annotations = d.metadata.annotations.clone();
        let mut latest = ctx.update_status(Object::Deployment(Box::new(std::mem::take(d))))?;
        if latest.metadata().annotations != annotations {
            let mut copy = as_deployment(&latest).cloned().unwrap_or_default();
            copy.metadata.annotations = annotations;
            latest = ctx.update(Object::Deployment(Box::new(copy)))?;
        }
        self.deployments.put(latest.clone());
        if let Some(fresh) = as_deployment(&latest) {
            *d = fresh.clone();
        }
        Ok(())
    }

    fn check_paused_conditions(&mut self, d: &mut Deployment, ctx: &mut Ctx) -> Result<()> {
        if !has_progress_deadline(d) {
            return Ok(());
        }
        let status = d.status.clone().unwrap_or_default();
        let cond = get_condition(&status, "Progressing");
        if cond.is_some_and(|c| c.reason.as_deref() == Some(reasons::TIMED_OUT)) {
            return Ok(());
        }
        let paused_exists = cond.is_some_and(|c| c.reason.as_deref() == Some(reasons::PAUSED));
        let paused = d.spec.as_ref().and_then(|s| s.paused).unwrap_or(false);
        let mut status = status.clone();
        if paused && !paused_exists {
            set_condition(&mut status, new_condition("Progressing", "Unknown", reasons::PAUSED, "Deployment is paused".into(), ctx.now));
        } else if !paused && paused_exists {
            set_condition(&mut status, new_condition("Progressing", "Unknown", reasons::RESUMED, "Deployment is resumed".into(), ctx.now));
        } else {
            return Ok(());
        }
        d.status = Some(status);
        self.write_status(d, ctx)
    }

    /// `getAllReplicaSetsAndSyncRevision`: (new RS, old RSs).
    fn get_all_and_sync_revision<'r>(
        &mut self,
        d: &mut Deployment,
        rs_list: &[&'r ReplicaSet],
        create: bool,
        ctx: &mut Ctx,
    ) -> Result<(Option<Cow<'r, ReplicaSet>>, Vec<ReplicaSet>)> {
        // Sorted by reference, the template borrowed: the old ReplicaSets (a pod template each)
        // are copied once, into what this returns (a sync calls this twice); the new one is
        // returned as it is stored unless its annotations are updated.
        let mut sorted: Vec<&'r ReplicaSet> = rs_list.to_vec();
        kubesim_api::sort::sort_by(&mut sorted, |a, b| {
            created_ms(&a.metadata).cmp(&created_ms(&b.metadata)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
        });
        let no_template = PodTemplateSpec::default();
        let template = d.spec.as_ref().map_or(&no_template, |s| &s.template);
        let new_index = sorted.iter().position(|rs| rs.spec.as_ref().and_then(|s| s.template.as_ref()).is_some_and(|t| equal_ignore_hash(t, template)));
        let existing_new = new_index.map(|i| sorted[i]);
        let old: Vec<ReplicaSet> = sorted.iter().enumerate().filter(|(i, _)| Some(*i) != new_index).map(|(_, r)| (*r).clone()).collect();
        let max_old_revision = old.iter().map(|r| revision_of(&r.metadata)).max().unwrap_or(0);
        let new_revision = (max_old_revision + 1).to_string();
        let min_ready = d.spec.as_ref().and_then(|s| s.min_ready_seconds);
        if let Some(existing) = existing_new {
            // The annotations alone are tried first: the ReplicaSet is copied only to be updated.
            let mut trial =
                ReplicaSet { metadata: ObjectMeta { annotations: existing.metadata.annotations.clone(), ..Default::default() }, ..Default::default() };
            let annotations_updated = set_new_rs_annotations(d, &mut trial, &new_revision, true);
            let min_ready_update = existing.spec.as_ref().and_then(|s| s.min_ready_seconds) != min_ready;
            if annotations_updated || min_ready_update {
                let mut copy = existing.clone();
                copy.metadata.annotations = trial.metadata.annotations;
                copy.spec.get_or_insert_with(Default::default).min_ready_seconds = min_ready;
                let updated = ctx.update(Object::ReplicaSet(Box::new(copy)))?;
                self.rss.put(updated.clone());
                return Ok((as_rs(&updated).cloned().map(Cow::Owned), old));
            }
            let revision = annotation(&existing.metadata, REVISION_ANNOTATION).unwrap_or("").to_string();
            let mut needs_update = set_deployment_revision(d, &revision);
            d.status.get_or_insert_with(Default::default);
            if has_progress_deadline(d) && get_condition(d.status.as_ref().expect("set above"), "Progressing").is_none() {
                let cond = new_condition(
                    "Progressing",
                    "True",
                    reasons::FOUND_NEW_RS,
                    format!("Found new replica set {:?}", existing.metadata.name.clone().unwrap_or_default()),
                    ctx.now,
                );
                set_condition(d.status.as_mut().expect("set above"), cond);
                needs_update = true;
            }
            if needs_update {
                self.write_status(d, ctx)?;
            }
            return Ok((Some(Cow::Borrowed(existing)), old));
        }
        if !create {
            return Ok((None, old));
        }
        // Create the new replica set.
        let template = d.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default();
        let collision_count = d.status.as_ref().and_then(|s| s.collision_count);
        let hash = compute_hash(&template, collision_count);
        let mut rs_template = template.clone();
        rs_template.metadata.get_or_insert_with(Default::default).labels.get_or_insert_with(BTreeMap::new).insert(POD_TEMPLATE_HASH_LABEL.into(), hash.clone());
        let d_spec = d.spec.clone().unwrap_or_default();
        let d_object = Object::Deployment(Box::new(d.clone()));
        let name = format!("{}-{}", d.metadata.name.clone().unwrap_or_default(), hash);
        let namespace = d.metadata.namespace.clone().unwrap_or_default();
        let mut new_rs = ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                owner_references: Some(vec![controller_ref(&d_object)]),
                labels: rs_template.metadata.as_ref().and_then(|m| m.labels.clone()),
                ..Default::default()
            },
            spec: Some(ReplicaSetSpec {
                replicas: Some(0),
                min_ready_seconds: d_spec.min_ready_seconds,
                selector: selector_with_hash(&d_spec.selector, &hash),
                template: Some(rs_template),
            }),
            status: None,
        };
        let strategy = Strategy::of(d);
        let all_replicas: i32 = old.iter().map(rs_replicas).sum();
        let new_replicas = new_rs_new_replicas(&strategy, all_replicas, 0).map_err(ApiError::invalid)?;
        new_rs.spec.as_mut().expect("set").replicas = Some(new_replicas);
        set_new_rs_annotations(d, &mut new_rs, &new_revision, false);
        let created = match ctx.create(Object::ReplicaSet(Box::new(new_rs))) {
            Ok(created) => {
                self.rss.put(created.clone());
                if new_replicas > 0 {
                    ctx.event(&d_object, "Normal", "ScalingReplicaSet", format!("Scaled up replica set {name} from 0 to {new_replicas}"));
                }
                created
            }
            Err(e) if e.reason == "AlreadyExists" => {
                let info = kind_info("apps/v1", "ReplicaSet").expect("served");
                let existing = ctx.api.get(info, &namespace, &name)?;
                let rs = as_rs(&existing).cloned().unwrap_or_default();
                let owned = controller_of(&rs.metadata).is_some_and(|r| r.uid == uid_of(&d.metadata));
                let same = rs.spec.as_ref().and_then(|s| s.template.as_ref()).is_some_and(|t| equal_ignore_hash(t, &template));
                if owned && same {
                    self.rss.put(existing.clone());
                    return Ok((Some(Cow::Owned(rs)), old));
                }
                let status = d.status.get_or_insert_with(Default::default);
                status.collision_count = Some(status.collision_count.unwrap_or(0) + 1);
                let _ = self.write_status(d, ctx);
                return Err(e);
            }
            Err(e) if e.code == 403 && e.message.contains("because it is being terminated") => return Err(e),
            Err(e) => {
                let message = format!("Failed to create new replica set {name:?}: {}", e.message);
                if has_progress_deadline(d) {
                    let status = d.status.get_or_insert_with(Default::default);
                    set_condition(status, new_condition("Progressing", "False", reasons::FAILED_RS_CREATE, message.clone(), ctx.now));
                    let _ = self.write_status(d, ctx);
                }
                ctx.event(&d_object, "Warning", reasons::FAILED_RS_CREATE, message);
                return Err(e);
            }
        };
        let mut needs_update = set_deployment_revision(d, &new_revision);
        if has_progress_deadline(d) {
            let status = d.status.get_or_insert_with(Default::default);
            set_condition(status, new_condition("Progressing", "True", reasons::NEW_RS, format!("Created new replica set {name:?}"), ctx.now));
            needs_update = true;
        }
        if needs_update {
            self.write_status(d, ctx)?;
        }
        Ok((as_rs(&created).cloned().map(Cow::Owned), old))
    }

    /// `scaleReplicaSetAndRecordEvent`.
    fn scale_and_record(&mut self, rs: &ReplicaSet, new_scale: i32, d: &Deployment, ctx: &mut Ctx) -> Result<(bool, ReplicaSet)> {
        if rs_replicas(rs) == new_scale {
            return Ok((false, rs.clone()));
        }
        let op = if rs_replicas(rs) < new_scale { "up" } else { "down" };
        self.scale_rs(rs, new_scale, d, op, ctx)
    }

    /// `scaleReplicaSet`.
    fn scale_rs(&mut self, rs: &ReplicaSet, new_scale: i32, d: &Deployment, op: &str, ctx: &mut Ctx) -> Result<(bool, ReplicaSet)> {
        let old_scale = rs_replicas(rs);
        let size_update = old_scale != new_scale;
        let strategy = Strategy::of(d);
        let mut copy = rs.clone();
        let annotations_update = set_replicas_annotations(&mut copy, strategy.replicas, strategy.replicas + strategy.max_surge());
        if !size_update && !annotations_update {
            return Ok((false, rs.clone()));
        }
        copy.spec.get_or_insert_with(Default::default).replicas = Some(new_scale);
        let updated = ctx.update(Object::ReplicaSet(Box::new(copy)))?;
        self.rss.put(updated.clone());
        let updated_rs = as_rs(&updated).cloned().unwrap_or_default();
        if size_update {
            let d_object = Object::Deployment(Box::new(d.clone()));
            ctx.event(
                &d_object,
                "Normal",
                "ScalingReplicaSet",
                format!("Scaled {op} replica set {} from {old_scale} to {new_scale}", updated_rs.metadata.name.clone().unwrap_or_default()),
            );
        }
        Ok((size_update, updated_rs))
    }

    fn rollout_rolling(&mut self, d: &mut Deployment, rs_list: &[&ReplicaSet], ctx: &mut Ctx) -> Result<()> {
        let (new_rs, mut old) = self.get_all_and_sync_revision(d, rs_list, true, ctx)?;
        let Some(mut new_rs) = new_rs else { return Ok(()) };
        // reconcileNewReplicaSet
        let new_replicas = rs_replicas(&new_rs);
        let all: i32 = old.iter().map(rs_replicas).sum::<i32>() + new_replicas;
        let scaled_up = match reconcile_new_rs_target(&Strategy::of(d), all, new_replicas).map_err(ApiError::invalid)? {
            None => false,
            Some(count) => {
                let (scaled, updated) = self.scale_and_record(&new_rs, count, d, ctx)?;
                new_rs = Cow::Owned(updated);
                scaled
            }
        };
        if scaled_up {
            return self.sync_rollout_status(d, Some(&new_rs), &old, ctx);
        }
        // reconcileOldReplicaSets
        let strategy = Strategy::of(d);
        let old_count: i32 = old.iter().map(rs_replicas).sum();
        let mut scaled_down = false;
        if old_count > 0 {
            let new_view = rs_view(&new_rs);
            let all_count = old_count + new_view.replicas;
            let max_scaled_down = all_count - strategy.min_available() - (new_view.replicas - new_view.available);
            if max_scaled_down > 0 {
                let views: Vec<RsView> = old.iter().map(rs_view).collect();
                let (cleanup, _) = plan_cleanup_unhealthy(&views, max_scaled_down).map_err(ApiError::invalid)?;
                for (i, size) in cleanup {
                    let (scaled, updated) = self.scale_and_record(&old[i].clone(), size, d, ctx)?;
                    scaled_down |= scaled;
                    old[i] = updated;
                }
                let views: Vec<RsView> = old.iter().map(rs_view).collect();
                let all_available: i32 = views.iter().map(|v| v.available).sum::<i32>() + new_view.available;
                let (scale_down, _) = plan_scale_down_old(&views, all_available, &strategy);
                for (i, size) in scale_down {
                    let (scaled, updated) = self.scale_and_record(&old[i].clone(), size, d, ctx)?;
                    scaled_down |= scaled;
                    old[i] = updated;
                }
            }
        }
        if scaled_down {
            return self.sync_rollout_status(d, Some(&new_rs), &old, ctx);
        }
        if is_complete(d, &d.status.clone().unwrap_or_default()) {
            self.cleanup_deployment(&old, d, ctx)?;
        }
        self.sync_rollout_status(d, Some(&new_rs), &old, ctx)
    }

    fn rollout_recreate(&mut self, d: &mut Deployment, rs_list: &[&ReplicaSet], pod_map: &BTreeMap<String, Vec<Pod>>, ctx: &mut Ctx) -> Result<()> {
        let (mut new_rs, mut old) = self.get_all_and_sync_revision(d, rs_list, false, ctx)?;
        let mut scaled = false;
        for rs in old.iter_mut() {
            if rs_replicas(rs) == 0 {
                continue;
            }
            let (s, updated) = self.scale_and_record(&rs.clone(), 0, d, ctx)?;
            if s {
                *rs = updated;
                scaled = true;
            }
        }
        if scaled {
            return self.sync_rollout_status(d, new_rs.as_deref(), &old, ctx);
        }
        if old_pods_running(new_rs.as_deref(), &old, pod_map) {
            return self.sync_rollout_status(d, new_rs.as_deref(), &old, ctx);
        }
        if new_rs.is_none() {
            let (n, o) = self.get_all_and_sync_revision(d, rs_list, true, ctx)?;
            new_rs = n;
            old = o;
        }
        if let Some(rs) = new_rs.clone() {
            let (_, updated) = self.scale_and_record(&rs, d_replicas(d), d, ctx)?;
            new_rs = Some(Cow::Owned(updated));
        }
        if is_complete(d, &d.status.clone().unwrap_or_default()) {
            self.cleanup_deployment(&old, d, ctx)?;
        }
        self.sync_rollout_status(d, new_rs.as_deref(), &old, ctx)
    }

    fn is_scaling_event(&mut self, d: &mut Deployment, rs_list: &[&ReplicaSet], ctx: &mut Ctx) -> Result<bool> {
        let (new_rs, old) = self.get_all_and_sync_revision(d, rs_list, false, ctx)?;
        let desired = d_replicas(d);
        Ok(old
            .iter()
            .chain(new_rs.as_deref())
            .filter(|rs| rs_replicas(rs) > 0)
            .any(|rs| annotation(&rs.metadata, DESIRED_REPLICAS_ANNOTATION).and_then(|v| v.parse::<i32>().ok()).is_some_and(|v| v != desired)))
    }

    /// `sync`: scaling (proportional) and status, for paused deployments and scaling events.
    fn sync_scale(&mut self, d: &mut Deployment, rs_list: &[&ReplicaSet], ctx: &mut Ctx) -> Result<()> {
        let (mut new_rs, mut old) = self.get_all_and_sync_revision(d, rs_list, false, ctx)?;
        // scale
        let mut all: Vec<ReplicaSet> = old.clone();
        let new_index = new_rs.as_deref().map(|rs| {
            all.push(rs.clone());
            all.len() - 1
        });
        let views: Vec<RsView> = all.iter().map(rs_view).collect();
        let status_replicas = d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0);
        let plan = plan_scale(&views, new_index, &Strategy::of(d), status_replicas);
        let current: i32 = views.iter().filter(|v| v.replicas > 0).map(|v| v.replicas).sum();
        let strategy = Strategy::of(d);
        let allowed = if strategy.replicas > 0 { strategy.replicas + strategy.max_surge() } else { 0 };
        let global_op = if allowed > current { "up" } else { "down" };
        for (i, size) in plan {
            let rs = all[i].clone();
            let op = if size > rs_replicas(&rs) {
                "up"
            } else if size < rs_replicas(&rs) {
                "down"
            } else {
                global_op
            };
            let (_, updated) = self.scale_rs(&rs, size, d, op, ctx)?;
            all[i] = updated;
        }
        if let Some(n) = new_index {
            new_rs = Some(Cow::Owned(all[n].clone()));
            all.truncate(n);
        }
        old = all;
        if d.spec.as_ref().and_then(|s| s.paused).unwrap_or(false) {
            self.cleanup_deployment(&old, d, ctx)?;
        }
        self.sync_status_only(d, new_rs.as_deref(), &old, ctx)
    }

    /// `syncDeploymentStatus`.
    fn sync_status_only(&mut self, d: &mut Deployment, new_rs: Option<&ReplicaSet>, old: &[ReplicaSet], ctx: &mut Ctx) -> Result<()> {
        let all: Vec<&ReplicaSet> = old.iter().chain(new_rs).collect();
        let status = calculate_status(&all, new_rs, d, ctx.now);
        if d.status.as_ref() == Some(&status) {
            return Ok(());
        }
        d.status = Some(status);
        self.write_status(d, ctx)
    }

    /// `syncRolloutStatus`, with `requeueStuckDeployment`.
    fn sync_rollout_status(&mut self, d: &mut Deployment, new_rs: Option<&ReplicaSet>, old: &[ReplicaSet], ctx: &mut Ctx) -> Result<()> {
        let all: Vec<&ReplicaSet> = old.iter().chain(new_rs).collect();
        let mut status = calculate_status(&all, new_rs, d, ctx.now);
        if !has_progress_deadline(d) {
            remove_condition(&mut status, "Progressing");
        }
        let old_status = d.status.clone().unwrap_or_default();
        let current = get_condition(&old_status, "Progressing").cloned();
        let complete_already =
            status.replicas == status.updated_replicas && current.as_ref().is_some_and(|c| c.reason.as_deref() == Some(reasons::NEW_RS_AVAILABLE));
        let d_name = d.metadata.name.clone().unwrap_or_default();
        let rs_name = new_rs.and_then(|r| r.metadata.name.clone());
        if has_progress_deadline(d) && !complete_already {
            if is_complete(d, &status) {
                let msg = match &rs_name {
                    Some(n) => format!("ReplicaSet {n:?} has successfully progressed."),
                    None => format!("Deployment {d_name:?} has successfully progressed."),
                };
                set_condition(&mut status, new_condition("Progressing", "True", reasons::NEW_RS_AVAILABLE, msg, ctx.now));
            } else if deployment_progressing(&counts(&old_status), &counts(&status)) {
                let msg = match &rs_name {
                    Some(n) => format!("ReplicaSet {n:?} is progressing."),
                    None => format!("Deployment {d_name:?} is progressing."),
                };
                let mut cond = new_condition("Progressing", "True", reasons::RS_UPDATED, msg, ctx.now);
                if let Some(c) = &current {
                    if c.status == "True" {
                        cond.last_transition_time = c.last_transition_time.clone();
                    }
                    remove_condition(&mut status, "Progressing");
                }
                set_condition(&mut status, cond);
            } else if deployment_timed_out(
                d.spec.as_ref().and_then(|s| s.progress_deadline_seconds),
                current.as_ref().map(|c| (c.reason.as_deref().unwrap_or(""), c.last_update_time.as_ref().map(millis_of).unwrap_or(0))),
                ctx.now,
            ) {
                let msg = match &rs_name {
                    Some(n) => format!("ReplicaSet {n:?} has timed out progressing."),
                    None => format!("Deployment {d_name:?} has timed out progressing."),
                };
                set_condition(&mut status, new_condition("Progressing", "False", reasons::TIMED_OUT, msg, ctx.now));
            }
        }
        // ReplicaFailure mirrors the replica sets'.
        let failure = new_rs
            .into_iter()
            .chain(old.iter())
            .flat_map(|rs| rs.status.iter().flat_map(|s| s.conditions.iter().flatten()))
            .find(|c| c.type_ == "ReplicaFailure")
            .cloned();
        match failure {
            Some(c) => set_condition(
                &mut status,
                DeploymentCondition {
                    type_: c.type_,
                    status: c.status,
                    reason: c.reason,
                    message: c.message,
                    last_update_time: c.last_transition_time.clone(),
                    last_transition_time: c.last_transition_time,
                },
            ),
            None => remove_condition(&mut status, "ReplicaFailure"),
        }
        if d.status.as_ref() == Some(&status) {
            self.requeue_stuck(d, &status, ctx);
            return Ok(());
        }
        d.status = Some(status);
        self.write_status(d, ctx)
    }

    fn requeue_stuck(&mut self, d: &Deployment, status: &DeploymentStatus, ctx: &mut Ctx) {
        let old_status = d.status.clone().unwrap_or_default();
        let Some(current) = get_condition(&old_status, "Progressing") else { return };
        if !has_progress_deadline(d) {
            return;
        }
        if is_complete(d, status) || current.reason.as_deref() == Some(reasons::TIMED_OUT) {
            return;
        }
        let deadline = d.spec.as_ref().and_then(|s| s.progress_deadline_seconds).unwrap_or(600) as i64 * 1000;
        let last = current.last_update_time.as_ref().map(millis_of).unwrap_or(0) as i64;
        let after = last + deadline - ctx.now as i64;
        let key = (d.metadata.namespace.clone().unwrap_or_default(), d.metadata.name.clone().unwrap_or_default());
        if after < 1000 {
            self.queue.add_rate_limited(key, ctx);
        } else {
            self.queue.add_after(key, after as Millis + 1000, ctx);
        }
    }

    /// `cleanupDeployment`: deletes the oldest empty RSs beyond revisionHistoryLimit.
    fn cleanup_deployment(&mut self, old: &[ReplicaSet], d: &Deployment, ctx: &mut Ctx) -> Result<()> {
        let limit = d.spec.as_ref().and_then(|s| s.revision_history_limit);
        let entries: Vec<HistoryEntry> = old
            .iter()
            .map(|rs| HistoryEntry {
                name: rs.metadata.name.clone().unwrap_or_default(),
                created: created_ms(&rs.metadata),
                revision: annotation(&rs.metadata, REVISION_ANNOTATION).and_then(|v| v.parse().ok()),
                replicas: rs_replicas(rs),
                actual: rs.status.as_ref().map(|s| s.replicas).unwrap_or(0),
                generation: rs.metadata.generation.unwrap_or(0),
                observed_generation: rs.status.as_ref().and_then(|s| s.observed_generation).unwrap_or(0),
                deleting: is_deleting(&rs.metadata),
            })
            .collect();
        let info = kind_info("apps/v1", "ReplicaSet").expect("served");
        let ns = d.metadata.namespace.clone().unwrap_or_default();
        for name in plan_history_cleanup(&entries, limit) {
            match ctx.delete(info, &ns, &name, DeleteOptions::default()) {
                Ok(_) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// `oldPodsRunning` (Recreate).
fn old_pods_running(new_rs: Option<&ReplicaSet>, old: &[ReplicaSet], pod_map: &BTreeMap<String, Vec<Pod>>) -> bool {
    let actual: i32 = old.iter().map(|r| r.status.as_ref().map(|s| s.replicas).unwrap_or(0)).sum();
    if actual > 0 {
        return true;
    }
    let new_uid = new_rs.map(|r| uid_of(&r.metadata).to_string());
    pod_map.iter().any(|(uid, pods)| Some(uid) != new_uid.as_ref() && pods.iter().any(|p| !matches!(pod_phase(p), "Failed" | "Succeeded")))
}

impl Reconciler for DeploymentController {
    fn name(&self) -> &'static str {
        "deployment-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("apps", "deployments")) => deployments,
        Informer::all(("apps", "replicasets")) => rss,
        Informer::all(("", "pods")) => pods,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("apps", "deployments") => self.queue.add(key_of(&event.object), ctx),
            ("apps", "replicasets") => self.on_rs(event, change.old, ctx),
            _ => {
                if event.event_type == EventType::Deleted {
                    self.on_pod_deleted(&event.object, ctx);
                }
            }
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> std::result::Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}
