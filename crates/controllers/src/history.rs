//! ControllerRevisions (pkg/controller/history): snapshots of a StatefulSet's or DaemonSet's pod
//! template, named `<owner>-<hash>`, labelled `controller.kubernetes.io/hash`, numbered by
//! `revision`.

use crate::common::*;
use crate::deployment_util::compute_hash;
use kubesim_api::k8s_openapi::api::apps::v1::ControllerRevision;
use kubesim_api::k8s_openapi::api::core::v1::PodTemplateSpec;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kubesim_api::object::{kind_info, Object};
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

/// `controller.kubernetes.io/hash`.
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// The patch a revision stores: the template, replacing the owner's.
pub fn revision_data(template: &PodTemplateSpec) -> serde_json::Value {
    let mut t = serde_json::to_value(template).unwrap_or_default();
    if let Some(map) = t.as_object_mut() {
        map.insert("$patch".into(), "replace".into());
    }
    serde_json::json!({ "spec": { "template": t } })
}

/// The template a revision stores.
pub fn revision_template(revision: &ControllerRevision) -> Option<PodTemplateSpec> {
    let data = revision.data.as_ref()?.0.clone();
    let mut t = data.get("spec")?.get("template")?.clone();
    if let Some(map) = t.as_object_mut() {
        map.remove("$patch");
    }
    serde_json::from_value(t).ok()
}

/// A new revision of `owner` for `template`.
pub fn new_revision(
    owner: &Object,
    template: &PodTemplateSpec,
    labels: BTreeMap<String, String>,
    revision: i64,
    collision_count: Option<i32>,
) -> ControllerRevision {
    let hash = compute_hash(template, collision_count);
    let mut labels = labels;
    labels.insert(HASH_LABEL.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(format!("{}-{}", owner.name(), hash)),
            namespace: Some(owner.namespace().to_string()),
            labels: Some(labels),
            owner_references: Some(vec![controller_ref(owner)]),
            ..Default::default()
        },
        data: Some(RawExtension(revision_data(template))),
        revision,
    }
}

/// The revisions `owner` controls, oldest revision first.
pub fn owned_revisions(cache: &Cache, owner: &Object) -> Vec<ControllerRevision> {
    let uid = uid_of(owner.metadata());
    let mut out: Vec<ControllerRevision> = cache
        .in_namespace(owner.namespace())
        .filter(|o| controller_of(o.metadata()).is_some_and(|r| r.uid == uid))
        .filter_map(|o| decode::<ControllerRevision>(o))
        .collect();
    kubesim_api::sort::sort_by(&mut out, |a, b| a.revision.cmp(&b.revision).then_with(|| a.metadata.name.cmp(&b.metadata.name)));
    out
}

/// `ClaimControllerRevisions` / `adoptOrphanRevisions`: adopts the namespace's orphaned
/// revisions the owner's selector matches and releases owned ones it no longer matches, so a
/// StatefulSet or DaemonSet re-created after `kubectl delete --cascade=orphan` takes its
/// history back (pkg/controller/statefulset/stateful_set.go adoptOrphanRevisions,
/// pkg/controller/daemon/update.go controlledHistories).
pub fn claim_revisions(ctx: &mut Ctx, cache: &mut Cache, owner: &Object, selector: &kubesim_api::selector::Selector) -> Result<(), ApiError> {
    let candidates: Vec<std::sync::Arc<Object>> = cache.claim_candidates(owner.namespace(), uid_of(owner.metadata())).cloned().collect();
    claim(ctx, owner, selector, candidates, cache).map(|_| ())
}

/// Finds the revision for `template` or creates it with the next revision number (bumping an
/// equal revision that is not the newest, as `history.CreateControllerRevision` callers do).
/// Returns (revision, all revisions after the change).
pub fn ensure_revision(
    ctx: &mut Ctx,
    cache: &mut Cache,
    owner: &Object,
    template: &PodTemplateSpec,
    labels: BTreeMap<String, String>,
    collision_count: &mut Option<i32>,
) -> Result<ControllerRevision, ApiError> {
    let revisions = owned_revisions(cache, owner);
    let max = revisions.iter().map(|r| r.revision).max().unwrap_or(0);
    let data = revision_data(template);
    if let Some(existing) = revisions.iter().rev().find(|r| r.data.as_ref().map(|d| &d.0) == Some(&data)) {
        if existing.revision == max {
            return Ok(existing.clone());
        }
        // Rolling back to an old template: it becomes the newest revision.
        let mut bumped = existing.clone();
        bumped.revision = max + 1;
        let updated = ctx.update(encode(&bumped, "apps/v1", "ControllerRevision"))?;
        cache.put(updated.clone());
        return decode(&updated).ok_or_else(|| ApiError::bad_request("bad revision".into()));
    }
    // realHistory.CreateControllerRevision: a name already taken by an equal revision (same
    // data and hash) is the one wanted; anything else is a hash collision, resolved by bumping
    // collisionCount (which the caller writes to status) and hashing again.
    loop {
        let revision = new_revision(owner, template, labels.clone(), max + 1, *collision_count);
        match ctx.create(encode(&revision, "apps/v1", "ControllerRevision")) {
            Ok(created) => {
                cache.put(created.clone());
                return decode(&created).ok_or_else(|| ApiError::bad_request("bad revision".into()));
            }
            Err(e) if e.reason == "AlreadyExists" => {
                let info = kind_info("apps/v1", "ControllerRevision").expect("served");
                let existing = ctx.api.get(info, owner.namespace(), revision.metadata.name.as_deref().unwrap_or(""))?;
                let existing: ControllerRevision = decode(&existing).ok_or_else(|| ApiError::bad_request("bad revision".into()))?;
                let hash = |r: &ControllerRevision| r.metadata.labels.as_ref().and_then(|l| l.get(HASH_LABEL)).cloned();
                if existing.data.as_ref().map(|d| &d.0) == Some(&data) && hash(&existing) == hash(&revision) {
                    return Ok(existing);
                }
                *collision_count = Some(collision_count.unwrap_or(0) + 1);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Deletes the oldest revisions beyond `limit` that no live revision name in `in_use` refers to.
pub fn truncate_history(ctx: &mut Ctx, cache: &mut Cache, owner: &Object, in_use: &[String], limit: i32) {
    let revisions = owned_revisions(cache, owner);
    let unused: Vec<&ControllerRevision> = revisions.iter().filter(|r| !in_use.contains(&r.metadata.name.clone().unwrap_or_default())).collect();
    let excess = unused.len() as i64 - limit.max(0) as i64;
    if excess <= 0 {
        return;
    }
    let info = kind_info("apps/v1", "ControllerRevision").expect("served");
    for r in unused.into_iter().take(excess as usize) {
        let name = r.metadata.name.clone().unwrap_or_default();
        if ctx.delete(info, owner.namespace(), &name, DeleteOptions::default()).is_ok() {
            cache.remove(&(owner.namespace().to_string(), name));
        }
    }
}
