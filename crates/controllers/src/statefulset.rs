//! The StatefulSet controller (pkg/controller/statefulset): stable ordinal pod names
//! (`<set>-<ordinal>`), per-pod PVCs from volumeClaimTemplates (`<claim>-<set>-<ordinal>`),
//! OrderedReady (one at a time, in order, waiting for Running+Ready) or Parallel management,
//! RollingUpdate from the highest ordinal down to the partition (or OnDelete), revisions as
//! ControllerRevisions, and status counters.
//!
//! persistentVolumeClaimRetentionPolicy (whenDeleted / whenScaled = Delete) is applied through
//! ownerReferences on the claims, which the garbage collector follows.
//!
//! Deviations: StatefulSet is JSON-kept in kubesim's object model (decoded per sync);
//! `rollingUpdate.maxUnavailable` is ignored, as in v1.34 by default: its feature gate
//! `MaxUnavailableStatefulSet` is alpha and off in v1.34 (pkg/features/kube_features.go; beta and
//! on from v1.35), so updates replace one pod at a time.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use crate::history::{claim_revisions, ensure_revision, owned_revisions, revision_template, truncate_history};
use kubesim_api::k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetSpec, StatefulSetStatus};
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodTemplateSpec, Volume};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::selector::Selector;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::Ctx;
use kubesim_store::EventType;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `controller-revision-hash`.
pub const REVISION_LABEL: &str = "controller-revision-hash";
/// `statefulset.kubernetes.io/pod-name`.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// `apps.kubernetes.io/pod-index`.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// Modelled processing latency.
pub const STS_LATENCY_MS: Millis = 10;

/// The ordinal of a pod name `<set>-<n>` (None if it does not belong to the set's naming).
pub fn ordinal_of(set: &str, pod: &str) -> Option<i32> {
    let rest = pod.strip_prefix(set)?.strip_prefix('-')?;
    if rest.is_empty() || !rest.chars().all(|c| c.is_ascii_digit()) || (rest.len() > 1 && rest.starts_with('0')) {
        return None;
    }
    rest.parse().ok()
}

/// The PVC name for a claim template and ordinal.
pub fn claim_name(claim: &str, set: &str, ordinal: i32) -> String {
    format!("{claim}-{set}-{ordinal}")
}

fn defaulted(spec: &StatefulSetSpec) -> StatefulSetSpec {
    let mut s = spec.clone();
    s.replicas.get_or_insert(1);
    s.pod_management_policy.get_or_insert_with(|| "OrderedReady".into());
    s.revision_history_limit.get_or_insert(10);
    let strategy = s.update_strategy.get_or_insert_with(Default::default);
    strategy.type_.get_or_insert_with(|| "RollingUpdate".into());
    if strategy.type_.as_deref() == Some("RollingUpdate") {
        strategy.rolling_update.get_or_insert_with(Default::default).partition.get_or_insert(0);
    }
    s
}

fn pod_revision(pod: &Pod) -> &str {
    pod.metadata.labels.as_ref().and_then(|l| l.get(REVISION_LABEL)).map(String::as_str).unwrap_or("")
}

fn running_and_ready(pod: &Pod, min_ready: i32, now: Millis) -> bool {
    pod_phase(pod) == "Running" && is_pod_available(pod, min_ready, now)
}

/// The pod for ordinal `ordinal` from `template` (`newStatefulSetPod` + `setPodRevision`).
pub fn new_stateful_pod(set: &StatefulSet, template: &PodTemplateSpec, owner: &Object, ordinal: i32, revision: &str) -> Pod {
    let name = format!("{}-{}", set.metadata.name.clone().unwrap_or_default(), ordinal);
    let mut pod = crate::replicaset::pod_from_template(template, set.metadata.namespace.as_deref().unwrap_or(""), "", controller_ref(owner));
    pod.metadata.generate_name = None;
    pod.metadata.name = Some(name.clone());
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(POD_NAME_LABEL.into(), name.clone());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    labels.insert(REVISION_LABEL.into(), revision.to_string());
    let set_name = set.metadata.name.clone().unwrap_or_default();
    if let Some(spec) = pod.spec.as_mut() {
        spec.hostname = Some(name.clone());
        spec.subdomain = set.spec.as_ref().and_then(|s| s.service_name.clone()).filter(|s| !s.is_empty());
        for claim in set.spec.as_ref().and_then(|s| s.volume_claim_templates.clone()).unwrap_or_default() {
            let claim_template = claim.metadata.name.clone().unwrap_or_default();
            let volumes = spec.volumes.get_or_insert_with(Vec::new);
            volumes.retain(|v| v.name != claim_template);
            volumes.push(Volume {
                name: claim_template.clone(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim_name(&claim_template, &set_name, ordinal),
                    read_only: None,
                }),
                ..Default::default()
            });
        }
    }
    pod
}

/// The StatefulSet controller.
#[derive(Clone, Debug)]
pub struct StatefulSetController {
    sets: Cache,
    pods: Cache,
    revisions: Cache,
    claims: Cache,
    queue: WorkQueue,
}

impl Default for StatefulSetController {
    fn default() -> Self {
        StatefulSetController::new()
    }
}

impl StatefulSetController {
    /// A controller with empty caches.
    pub fn new() -> StatefulSetController {
        StatefulSetController {
            sets: Cache::default(),
            pods: Cache::default(),
            revisions: Cache::default(),
            claims: Cache::default(),
            queue: WorkQueue::new(STS_LATENCY_MS),
        }
    }

    fn event(&self, ctx: &mut Ctx, set: &Object, verb: &str, pod: &str, err: Option<&ApiError>) {
        let title = format!("{}{}", verb[..1].to_uppercase(), &verb[1..]);
        match err {
            None => ctx.event(set, "Normal", &format!("Successful{title}"), format!("{verb} Pod {pod} in StatefulSet {} successful", set.name())),
            Some(e) => {
                ctx.event(set, "Warning", &format!("Failed{title}"), format!("{verb} Pod {pod} in StatefulSet {} failed error: {}", set.name(), e.message))
            }
        }
    }

    fn create_claims(&mut self, ctx: &mut Ctx, set_obj: &Object, set: &StatefulSet, ordinal: i32, pod_name: &str) -> Result<(), ApiError> {
        let spec = set.spec.clone().unwrap_or_default();
        let set_name = set.metadata.name.clone().unwrap_or_default();
        let ns = set.metadata.namespace.clone().unwrap_or_default();
        for template in spec.volume_claim_templates.unwrap_or_default() {
            let name = claim_name(template.metadata.name.as_deref().unwrap_or(""), &set_name, ordinal);
            if self.claims.get_named(&ns, &name).is_some() || ctx.api.lookup(("", "persistentvolumeclaims"), &ns, &name).is_some() {
                continue;
            }
            let mut labels = template.metadata.labels.clone().unwrap_or_default();
            labels.extend(spec.selector.match_labels.clone().unwrap_or_default());
            let claim = PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(ns.clone()),
                    labels: Some(labels),
                    annotations: template.metadata.annotations.clone(),
                    ..Default::default()
                },
                spec: template.spec.clone(),
                status: None,
            };
            match ctx.create(encode(&claim, "v1", "PersistentVolumeClaim")) {
                Ok(created) => {
                    self.claims.put(created);
                    ctx.event(set_obj, "Normal", "SuccessfulCreate", format!("create Claim {name} Pod {pod_name} in StatefulSet {set_name} success"));
                }
                Err(e) if e.reason == "AlreadyExists" => {}
                Err(e) => {
                    ctx.event(
                        set_obj,
                        "Warning",
                        "FailedCreate",
                        format!("create Claim {name} for Pod {pod_name} in StatefulSet {set_name} failed error: {}", e.message),
                    );
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn delete_pod(&mut self, ctx: &mut Ctx, set_obj: &Object, pod: &Pod) -> Result<(), ApiError> {
        let info = kind_info("v1", "Pod").expect("served");
        let name = pod.metadata.name.clone().unwrap_or_default();
        match ctx.delete(info, pod.metadata.namespace.as_deref().unwrap_or(""), &name, DeleteOptions::default()) {
            Ok(_) => {
                self.event(ctx, set_obj, "delete", &name, None);
                Ok(())
            }
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => {
                self.event(ctx, set_obj, "delete", &name, Some(&e));
                Err(e)
            }
        }
    }

    fn create_pod(&mut self, ctx: &mut Ctx, set_obj: &Object, set: &StatefulSet, pod: Pod, ordinal: i32) -> Result<(), ApiError> {
        let name = pod.metadata.name.clone().unwrap_or_default();
        self.create_claims(ctx, set_obj, set, ordinal, &name)?;
        match ctx.create(Object::Pod(Box::new(pod))) {
            Ok(created) => {
                self.pods.put(created);
                self.event(ctx, set_obj, "create", &name, None);
                Ok(())
            }
            Err(e) if e.reason == "AlreadyExists" => Ok(()),
            Err(e) => {
                self.event(ctx, set_obj, "create", &name, Some(&e));
                Err(e)
            }
        }
    }

    /// syncStatefulSet.
    pub fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(set_obj) = self.sets.get(key).cloned() else { return Ok(()) };
        let Some(set) = decode::<StatefulSet>(&set_obj) else { return Ok(()) };
        let now = ctx.now;
        let spec = defaulted(&set.spec.clone().unwrap_or_default());
        let set_name = key.1.clone();
        let selector = Selector::from_label_selector(&spec.selector);
        // Claim pods whose names fit the set.
        let candidates: Vec<Arc<Object>> =
            self.pods.in_namespace(&key.0).filter(|p| ordinal_of(&set_name, p.name()).is_some() || controller_of(p.metadata()).is_some()).cloned().collect();
        let claimed = claim(ctx, &set_obj, &selector, candidates, &mut self.pods)?;
        let pods: Vec<Pod> = claimed.iter().filter_map(|o| o.as_pod()).cloned().collect();
        // Revisions.
        claim_revisions(ctx, &mut self.revisions, &set_obj, &selector)?;
        let mut collision = set.status.as_ref().and_then(|s| s.collision_count);
        let labels = spec.selector.match_labels.clone().unwrap_or_default();
        let update_revision = ensure_revision(ctx, &mut self.revisions, &set_obj, &spec.template, labels, &mut collision)?;
        let revisions = owned_revisions(&self.revisions, &set_obj);
        let update_name = update_revision.metadata.name.clone().unwrap_or_default();
        let current_revision: ControllerRevision = set
            .status
            .as_ref()
            .and_then(|s| s.current_revision.clone())
            .and_then(|name| revisions.iter().find(|r| r.metadata.name.as_deref() == Some(name.as_str())).cloned())
            .unwrap_or_else(|| update_revision.clone());
        let current_name = current_revision.metadata.name.clone().unwrap_or_default();
        let current_template = revision_template(&current_revision).unwrap_or_else(|| spec.template.clone());
        let replicas = spec.replicas.unwrap_or(1);
        let start = spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0);
        let monotonic = spec.pod_management_policy.as_deref() != Some("Parallel");
        let min_ready = spec.min_ready_seconds.unwrap_or(0);
        let strategy = spec.update_strategy.clone().unwrap_or_default();
        let rolling = strategy.type_.as_deref() == Some("RollingUpdate");
        let partition = strategy.rolling_update.as_ref().and_then(|r| r.partition).unwrap_or(0);
        let status_current_replicas = set.status.as_ref().and_then(|s| s.current_replicas).unwrap_or(0);
        // Split into replicas (in range) and condemned.
        let mut slots: BTreeMap<i32, Option<Pod>> = (start..start + replicas).map(|o| (o, None)).collect();
        let mut condemned: Vec<Pod> = Vec::new();
        for pod in &pods {
            match ordinal_of(&set_name, pod.metadata.name.as_deref().unwrap_or("")) {
                Some(o) if slots.contains_key(&o) => {
                    slots.insert(o, Some(pod.clone()));
                }
                _ => condemned.push(pod.clone()),
            }
        }
        kubesim_api::sort::sort_by_key(&mut condemned, |p| std::cmp::Reverse(ordinal_of(&set_name, p.metadata.name.as_deref().unwrap_or("")).unwrap_or(-1)));
        let version_for = |ordinal: i32| -> (PodTemplateSpec, String) {
            let use_current = if rolling { ordinal < start + partition } else { ordinal < start + status_current_replicas };
            if use_current && current_name != update_name {
                (current_template.clone(), current_name.clone())
            } else {
                (spec.template.clone(), update_name.clone())
            }
        };
        let mut result: Result<(), ApiError> = Ok(());
        self.apply_claim_retention(ctx, &set_obj, &set, &pods, start, replicas);
        // If the StatefulSet is being deleted, don't do anything other than updating status
        // (updateStatefulSet): recreating its pods would fight the garbage collector forever.
        let mut blocked = set.metadata.deletion_timestamp.is_some();
        let ordinals: Vec<i32> = slots.keys().copied().collect();
        for ordinal in ordinals.iter().filter(|_| set.metadata.deletion_timestamp.is_none()) {
            let ordinal = *ordinal;
            let existing = slots.get(&ordinal).cloned().flatten();
            match existing {
                Some(pod) if is_pod_terminal(&pod) => {
                    if pod.metadata.deletion_timestamp.is_none() {
                        if let Err(e) = self.delete_pod(ctx, &set_obj, &pod) {
                            result = Err(e);
                        }
                    }
                    if monotonic {
                        blocked = true;
                        break;
                    }
                }
                None => {
                    let (template, revision) = version_for(ordinal);
                    let pod = new_stateful_pod(&set, &template, &set_obj, ordinal, &revision);
                    if let Err(e) = self.create_pod(ctx, &set_obj, &set, pod, ordinal) {
                        result = Err(e);
                        blocked = true;
                        break;
                    }
                    if monotonic {
                        blocked = true;
                        break;
                    }
                }
                Some(pod) => {
                    // Recreate missing claims for a pending, unscheduled pod.
                    if pod_phase(&pod) == "Pending" && pod_node(&pod).is_empty() {
                        let name = pod.metadata.name.clone().unwrap_or_default();
                        if let Err(e) = self.create_claims(ctx, &set_obj, &set, ordinal, &name) {
                            result = Err(e);
                        }
                    }
                    if monotonic && (pod.metadata.deletion_timestamp.is_some() || !running_and_ready(&pod, min_ready, now)) {
                        blocked = true;
                        break;
                    }
                }
            }
        }
        // Scale down condemned pods (highest ordinal first).
        if !blocked {
            for pod in &condemned {
                if pod.metadata.deletion_timestamp.is_some() {
                    if monotonic {
                        blocked = true;
                        break;
                    }
                    continue;
                }
                if let Err(e) = self.delete_pod(ctx, &set_obj, pod) {
                    result = Err(e);
                }
                if monotonic {
                    blocked = true;
                    break;
                }
            }
        }
        // Rolling update: from the highest ordinal down to the partition, one at a time.
        if !blocked && rolling && result.is_ok() {
            for ordinal in ordinals.iter().rev() {
                if *ordinal < start + partition {
                    break;
                }
                let Some(Some(pod)) = slots.get(ordinal) else { continue };
                if pod_revision(pod) != update_name && pod.metadata.deletion_timestamp.is_none() {
                    if let Err(e) = self.delete_pod(ctx, &set_obj, pod) {
                        result = Err(e);
                    }
                    break;
                }
                if !running_and_ready(pod, min_ready, now) {
                    break;
                }
            }
        }
        // Status from the (cached) pods.
        let live: Vec<Pod> = self
            .pods
            .in_namespace(&key.0)
            .filter_map(|o| o.as_pod())
            .filter(|p| controller_of(&p.metadata).is_some_and(|r| r.uid == uid_of(&set.metadata)))
            .cloned()
            .collect();
        let mut status = StatefulSetStatus {
            observed_generation: set.metadata.generation,
            replicas: live.len() as i32,
            ready_replicas: nz(live.iter().filter(|p| is_pod_ready(p)).count() as i32),
            available_replicas: Some(live.iter().filter(|p| is_pod_available(p, min_ready, now)).count() as i32),
            current_replicas: nz(live.iter().filter(|p| pod_revision(p) == current_name).count() as i32),
            updated_replicas: nz(live.iter().filter(|p| pod_revision(p) == update_name).count() as i32),
            current_revision: Some(current_name.clone()),
            update_revision: Some(update_name.clone()),
            collision_count: collision,
            conditions: set.status.as_ref().and_then(|s| s.conditions.clone()),
        };
        // completeRollingUpdate
        if rolling && status.updated_replicas.unwrap_or(0) == replicas && status.ready_replicas.unwrap_or(0) == replicas && status.replicas == replicas {
            status.current_revision = status.update_revision.clone();
            status.current_replicas = status.updated_replicas;
        }
        if set.status.as_ref() != Some(&status) {
            let mut updated = set.clone();
            updated.status = Some(status.clone());
            let written = ctx.update_status(encode(&updated, "apps/v1", "StatefulSet"))?;
            self.sets.put(written);
        }
        // History: keep revisions in use by pods plus the current/update ones.
        let mut in_use: Vec<String> = live.iter().map(|p| pod_revision(p).to_string()).collect();
        in_use.push(current_name);
        in_use.push(update_name);
        truncate_history(ctx, &mut self.revisions, &set_obj, &in_use, spec.revision_history_limit.unwrap_or(10));
        // Re-check availability after minReadySeconds.
        if min_ready > 0 && status.ready_replicas != status.available_replicas.filter(|a| *a > 0) {
            self.queue.add_after(key.clone(), min_ready as Millis * 1000, ctx);
        }
        result
    }

    /// `updateClaimOwnerRefForSetAndPod` for every pod's claims: with
    /// persistentVolumeClaimRetentionPolicy whenDeleted=Delete the claims are owned by the set,
    /// with whenScaled=Delete a condemned pod's claims are owned by the pod (the garbage
    /// collector then deletes them).
    fn apply_claim_retention(&mut self, ctx: &mut Ctx, set_obj: &Object, set: &StatefulSet, pods: &[Pod], start: i32, replicas: i32) {
        let spec = set.spec.clone().unwrap_or_default();
        let policy = spec.persistent_volume_claim_retention_policy.clone().unwrap_or_default();
        let when_deleted = policy.when_deleted.as_deref().unwrap_or("Retain") == "Delete";
        let when_scaled = policy.when_scaled.as_deref().unwrap_or("Retain") == "Delete";
        let set_name = set.metadata.name.clone().unwrap_or_default();
        let ns = set.metadata.namespace.clone().unwrap_or_default();
        let set_ref = {
            let mut r = controller_ref(set_obj);
            r.controller = None;
            r.block_owner_deletion = None;
            r
        };
        for pod in pods {
            let Some(ordinal) = ordinal_of(&set_name, pod.metadata.name.as_deref().unwrap_or("")) else { continue };
            let scaled_down = ordinal < start || ordinal >= start + replicas;
            let pod_ref = kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: pod.metadata.name.clone().unwrap_or_default(),
                uid: pod.metadata.uid.clone().unwrap_or_default(),
                controller: None,
                block_owner_deletion: None,
            };
            let (want_set, want_pod) = match (when_scaled, when_deleted) {
                (false, false) => (false, false),
                (false, true) => (true, false),
                (true, false) => (false, scaled_down),
                (true, true) => (!scaled_down, scaled_down),
            };
            for template in spec.volume_claim_templates.iter().flatten() {
                let name = claim_name(template.metadata.name.as_deref().unwrap_or(""), &set_name, ordinal);
                let Some(claim) = self.claims.get_named(&ns, &name).cloned() else { continue };
                let refs = claim.metadata().owner_references.clone().unwrap_or_default();
                let mut wanted: Vec<_> = refs.iter().filter(|r| r.uid != set_ref.uid && r.uid != pod_ref.uid).cloned().collect();
                let has = |uid: &str| refs.iter().find(|r| r.uid == uid).cloned();
                if want_set {
                    wanted.push(has(&set_ref.uid).unwrap_or_else(|| set_ref.clone()));
                }
                if want_pod {
                    wanted.push(has(&pod_ref.uid).unwrap_or_else(|| pod_ref.clone()));
                }
                let mut sorted_have = refs.clone();
                let mut sorted_want = wanted.clone();
                kubesim_api::sort::sort_by(&mut sorted_have, |a, b| a.uid.cmp(&b.uid));
                kubesim_api::sort::sort_by(&mut sorted_want, |a, b| a.uid.cmp(&b.uid));
                if sorted_have == sorted_want {
                    continue;
                }
                if let Ok(updated) = patch_meta(ctx, &claim, |m| m.owner_references = if wanted.is_empty() { None } else { Some(wanted.clone()) }) {
                    self.claims.put(updated);
                }
            }
        }
    }

    fn owner_key(&self, pod: &Object) -> Option<Key> {
        self.sets.controller_key(pod, "StatefulSet")
    }
}

impl Reconciler for StatefulSetController {
    fn name(&self) -> &'static str {
        "statefulset-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("apps", "statefulsets")) => sets,
        Informer::all(("", "pods")) => pods,
        Informer::all(("apps", "controllerrevisions")) => revisions,
        Informer::all(("", "persistentvolumeclaims")) => claims,
    }
    /// Pods of its own kind and orphans only: the claim skips pods other controllers own.
    fn keeps(&self, resource: kubesim_store::Resource, object: &Object) -> bool {
        resource != ("", "pods") || controlled_by_kind_or_orphan(object, "StatefulSet")
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("apps", "statefulsets") => self.queue.add(key_of(&event.object), ctx),
            ("", "pods") => match self.owner_key(&event.object) {
                Some(key) => self.queue.add(key, ctx),
                None => {
                    if controller_of(event.object.metadata()).is_none() && event.event_type != EventType::Deleted {
                        let labels = event.object.metadata().labels.clone();
                        let keys: Vec<Key> = self
                            .sets
                            .in_namespace(event.object.namespace())
                            .filter(|s| {
                                decode::<StatefulSet>(s).and_then(|s| s.spec).is_some_and(|spec| {
                                    let sel = Selector::from_label_selector(&spec.selector);
                                    !sel.is_empty() && sel.matches(labels.as_ref())
                                })
                            })
                            .map(|s| key_of(s))
                            .collect();
                        for key in keys {
                            self.queue.add(key, ctx);
                        }
                    }
                }
            },
            _ => {}
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}
