//! Deployment arithmetic as pure functions (pkg/controller/deployment/util/deployment_util.go,
//! rolling.go, sync.go), so the upstream unit-test vectors can be checked directly.

use kubesim_api::k8s_openapi::api::apps::v1::Deployment;
use kubesim_api::k8s_openapi::api::core::v1::PodTemplateSpec;
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::Millis;
use std::cmp::Ordering;

/// `deployment.kubernetes.io/revision`.
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// `deployment.kubernetes.io/revision-history`.
pub const REVISION_HISTORY_ANNOTATION: &str = "deployment.kubernetes.io/revision-history";
/// `deployment.kubernetes.io/desired-replicas`.
pub const DESIRED_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/desired-replicas";
/// `deployment.kubernetes.io/max-replicas`.
pub const MAX_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/max-replicas";
/// The deprecated rollback annotation (not copied to replica sets).
pub const DEPRECATED_ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";
/// kubectl's last-applied annotation (not copied to replica sets).
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The label that pins pods to their replica set.
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";
/// Upper bound of the revision-history annotation, in characters (sync.go).
pub const MAX_REV_HISTORY_LENGTH_IN_CHARS: usize = 2000;

/// Reasons of Deployment conditions (deployment_util.go).
pub mod reasons {
    /// Progressing=True: the new RS was created.
    pub const NEW_RS: &str = "NewReplicaSetCreated";
    /// Progressing=True: an existing new RS was found.
    pub const FOUND_NEW_RS: &str = "FoundNewReplicaSet";
    /// Progressing=True: pods are moving.
    pub const RS_UPDATED: &str = "ReplicaSetUpdated";
    /// Progressing=True: the rollout completed.
    pub const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
    /// Progressing=False: the deadline passed.
    pub const TIMED_OUT: &str = "ProgressDeadlineExceeded";
    /// Progressing=Unknown: paused.
    pub const PAUSED: &str = "DeploymentPaused";
    /// Progressing=Unknown: resumed.
    pub const RESUMED: &str = "DeploymentResumed";
    /// Available=True.
    pub const MIN_AVAILABLE: &str = "MinimumReplicasAvailable";
    /// Available=False.
    pub const MIN_UNAVAILABLE: &str = "MinimumReplicasUnavailable";
    /// ReplicaFailure=True (create failed).
    pub const FAILED_RS_CREATE: &str = "ReplicaSetCreateError";
}

/// `intstr.GetScaledValueFromIntOrPercent`.
pub fn scaled_value(value: &IntOrString, total: i32, round_up: bool) -> Result<i32, String> {
    match value {
        IntOrString::Int(v) => Ok(*v),
        IntOrString::String(s) => {
            let Some(number) = s.strip_suffix('%') else {
                return Err("invalid type: string is not a percentage".into());
            };
            let percent: i64 = number.parse().map_err(|_| format!("invalid value {s:?}: strconv.Atoi: parsing {number:?}: invalid syntax"))?;
            let scaled = percent as f64 * total as f64 / 100.0;
            Ok(if round_up { scaled.ceil() } else { scaled.floor() } as i32)
        }
    }
}

/// `ResolveFenceposts`: (surge, unavailable) for `desired` replicas; surge rounds up,
/// unavailable rounds down, and both 0 makes unavailable 1.
pub fn resolve_fenceposts(max_surge: Option<&IntOrString>, max_unavailable: Option<&IntOrString>, desired: i32) -> Result<(i32, i32), String> {
    let zero = IntOrString::Int(0);
    let surge = scaled_value(max_surge.unwrap_or(&zero), desired, true)?;
    let mut unavailable = scaled_value(max_unavailable.unwrap_or(&zero), desired, false)?;
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    Ok((surge, unavailable))
}

/// The deployment knobs the arithmetic needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Strategy {
    /// spec.replicas.
    pub replicas: i32,
    /// RollingUpdate (else Recreate).
    pub rolling: bool,
    /// rollingUpdate.maxSurge.
    pub max_surge: Option<IntOrString>,
    /// rollingUpdate.maxUnavailable.
    pub max_unavailable: Option<IntOrString>,
}

impl Strategy {
    /// The knobs of a deployment object.
    pub fn of(d: &Deployment) -> Strategy {
        let spec = d.spec.clone().unwrap_or_default();
        let strategy = spec.strategy.unwrap_or_default();
        let rolling = strategy.type_.as_deref().unwrap_or("RollingUpdate") == "RollingUpdate";
        let ru = strategy.rolling_update.unwrap_or_default();
        Strategy { replicas: spec.replicas.unwrap_or(1), rolling, max_surge: ru.max_surge, max_unavailable: ru.max_unavailable }
    }
    /// A rolling strategy with integer surge / unavailable.
    pub fn rolling(replicas: i32, max_surge: i32, max_unavailable: i32) -> Strategy {
        Strategy { replicas, rolling: true, max_surge: Some(IntOrString::Int(max_surge)), max_unavailable: Some(IntOrString::Int(max_unavailable)) }
    }
    /// `MaxUnavailable(d)`.
    pub fn max_unavailable(&self) -> i32 {
        if !self.rolling || self.replicas == 0 {
            return 0;
        }
        let (_, unavailable) = resolve_fenceposts(self.max_surge.as_ref(), self.max_unavailable.as_ref(), self.replicas).unwrap_or((0, 0));
        unavailable.min(self.replicas)
    }
    /// `MaxSurge(d)`.
    pub fn max_surge(&self) -> i32 {
        if !self.rolling {
            return 0;
        }
        resolve_fenceposts(self.max_surge.as_ref(), self.max_unavailable.as_ref(), self.replicas).map(|(s, _)| s).unwrap_or(0)
    }
    /// `MinAvailable`.
    pub fn min_available(&self) -> i32 {
        self.replicas - self.max_unavailable()
    }
}

/// `NewRSNewReplicas`: the size the new RS should have now (`all_replicas` = Σ spec.replicas of
/// all RSs including the new one).
pub fn new_rs_new_replicas(strategy: &Strategy, all_replicas: i32, new_rs_replicas: i32) -> Result<i32, String> {
    if !strategy.rolling {
        return Ok(strategy.replicas);
    }
    let surge = scaled_value(strategy.max_surge.as_ref().unwrap_or(&IntOrString::Int(0)), strategy.replicas, true)?;
    let max_total = strategy.replicas + surge;
    if all_replicas >= max_total {
        return Ok(new_rs_replicas);
    }
    let scale_up = (max_total - all_replicas).min(strategy.replicas - new_rs_replicas);
    Ok(new_rs_replicas + scale_up)
}

/// `reconcileNewReplicaSet`: the new RS's target size, or None when it stays.
pub fn reconcile_new_rs_target(strategy: &Strategy, all_replicas: i32, new_rs_replicas: i32) -> Result<Option<i32>, String> {
    if new_rs_replicas == strategy.replicas {
        return Ok(None);
    }
    if new_rs_replicas > strategy.replicas {
        return Ok(Some(strategy.replicas));
    }
    let target = new_rs_new_replicas(strategy, all_replicas, new_rs_replicas)?;
    Ok((target != new_rs_replicas).then_some(target))
}

/// What the arithmetic needs to know about one replica set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RsView {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// creationTimestamp (virtual ms).
    pub created: Millis,
    /// spec.replicas.
    pub replicas: i32,
    /// status.replicas.
    pub actual: i32,
    /// status.readyReplicas.
    pub ready: i32,
    /// status.availableReplicas.
    pub available: i32,
    /// The max-replicas annotation, if parseable.
    pub max_replicas_annotation: Option<i32>,
    /// The desired-replicas annotation, if parseable.
    pub desired_annotation: Option<i32>,
}

/// `ReplicaSetsByCreationTimestamp`: older first, then by name.
pub fn by_creation(a: &RsView, b: &RsView) -> Ordering {
    a.created.cmp(&b.created).then_with(|| a.name.cmp(&b.name))
}

/// A planned scale: (index into the given slice, new spec.replicas).
pub type Scale = (usize, i32);

/// `cleanupUnhealthyReplicas`: scale down unhealthy replicas of old RSs (oldest first) by at most
/// `max_cleanup`. Returns the scales and the total scaled down, or upstream's error when an
/// old RS reports more available replicas than it is asked for (its pods are not deleted yet)
/// so the "scale-down" would scale it up.
pub fn plan_cleanup_unhealthy(old: &[RsView], max_cleanup: i32) -> Result<(Vec<Scale>, i32), String> {
    let mut order: Vec<usize> = (0..old.len()).collect();
    kubesim_api::sort::sort_by(&mut order, |&a, &b| by_creation(&old[a], &old[b]));
    let mut total = 0;
    let mut scales = Vec::new();
    for i in order {
        if total >= max_cleanup {
            break;
        }
        let rs = &old[i];
        if rs.replicas == 0 || rs.replicas == rs.available {
            continue;
        }
        let count = (max_cleanup - total).min(rs.replicas - rs.available);
        let new_replicas = rs.replicas - count;
        if new_replicas > rs.replicas {
            return Err(format!(
                "when cleaning up unhealthy replicas, got invalid request to scale down {}/{} {} -> {new_replicas}",
                rs.namespace, rs.name, rs.replicas
            ));
        }
        scales.push((i, new_replicas));
        total += count;
    }
    Ok((scales, total))
}

/// `scaleDownOldReplicaSetsForRollingUpdate`: scale old RSs (oldest first) down by as many as
/// the available pods above minAvailable allow. `all_available` = Σ availableReplicas of all RSs.
pub fn plan_scale_down_old(old: &[RsView], all_available: i32, strategy: &Strategy) -> (Vec<Scale>, i32) {
    let min_available = strategy.min_available();
    if all_available <= min_available {
        return (Vec::new(), 0);
    }
    let mut order: Vec<usize> = (0..old.len()).collect();
    kubesim_api::sort::sort_by(&mut order, |&a, &b| by_creation(&old[a], &old[b]));
    let wanted = all_available - min_available;
    let mut total = 0;
    let mut scales = Vec::new();
    for i in order {
        if total >= wanted {
            break;
        }
        let rs = &old[i];
        if rs.replicas == 0 {
            continue;
        }
        let count = rs.replicas.min(wanted - total);
        scales.push((i, rs.replicas - count));
        total += count;
    }
    (scales, total)
}

/// `reconcileOldReplicaSets`: cleanup of unhealthy old replicas, then the rolling scale-down.
/// Returns the final size of every old RS that changed (index into `old`).
pub fn plan_reconcile_old(old: &[RsView], new: &RsView, strategy: &Strategy) -> Result<Vec<Scale>, String> {
    let old_count: i32 = old.iter().map(|r| r.replicas).sum();
    if old_count == 0 {
        return Ok(Vec::new());
    }
    let all_count = old_count + new.replicas;
    let min_available = strategy.min_available();
    let new_unavailable = new.replicas - new.available;
    let max_scaled_down = all_count - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return Ok(Vec::new());
    }
    let (cleanup, _) = plan_cleanup_unhealthy(old, max_scaled_down)?;
    let mut after: Vec<RsView> = old.to_vec();
    for (i, size) in &cleanup {
        after[*i].replicas = *size;
    }
    let all_available: i32 = after.iter().map(|r| r.available).sum::<i32>() + new.available;
    let (scale_down, _) = plan_scale_down_old(&after, all_available, strategy);
    for (i, size) in &scale_down {
        after[*i].replicas = *size;
    }
    Ok((0..old.len()).filter(|&i| after[i].replicas != old[i].replicas).map(|i| (i, after[i].replicas)).collect())
}

/// `getReplicaSetFraction`: how many replicas an RS gains (or loses) in a proportional scale.
pub fn replica_set_fraction(rs: &RsView, strategy: &Strategy, status_replicas: i32) -> i32 {
    if strategy.replicas == 0 {
        return -rs.replicas;
    }
    let max_replicas = strategy.replicas + strategy.max_surge();
    let before = match rs.max_replicas_annotation {
        Some(v) if v != 0 => v,
        _ => {
            if status_replicas == 0 {
                return 0;
            }
            status_replicas
        }
    };
    let size = (rs.replicas as f64 * max_replicas as f64) / before as f64;
    size.round() as i32 - rs.replicas
}

/// `GetProportion`.
pub fn proportion(rs: &RsView, strategy: &Strategy, status_replicas: i32, to_add: i32, added: i32) -> i32 {
    if rs.replicas == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = replica_set_fraction(rs, strategy, status_replicas);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// `FilterActiveReplicaSets` as indices.
pub fn active(rss: &[RsView]) -> Vec<usize> {
    (0..rss.len()).filter(|&i| rss[i].replicas > 0).collect()
}

/// `FindActiveOrLatest`: `new` (if any) is index `new` in `rss`.
pub fn find_active_or_latest(rss: &[RsView], new: Option<usize>) -> Option<usize> {
    if rss.is_empty() {
        return None;
    }
    let act = active(rss);
    match act.len() {
        0 => {
            if new.is_some() {
                return new;
            }
            // the newest old RS
            (0..rss.len()).filter(|i| Some(*i) != new).max_by(|&a, &b| by_creation(&rss[a], &rss[b]))
        }
        1 => Some(act[0]),
        _ => None,
    }
}

/// `IsSaturated`.
pub fn is_saturated(strategy: &Strategy, new: &RsView) -> bool {
    new.desired_annotation == Some(strategy.replicas) && new.replicas == strategy.replicas && new.available == strategy.replicas
}

/// The deployment controller's `scale`: the new size of every RS that changes (index into `rss`;
/// `new` marks the new RS, if one exists). `status_replicas` = the deployment's status.replicas.
pub fn plan_scale(rss: &[RsView], new: Option<usize>, strategy: &Strategy, status_replicas: i32) -> Vec<Scale> {
    if let Some(i) = find_active_or_latest(rss, new) {
        if rss[i].replicas == strategy.replicas {
            return Vec::new();
        }
        return vec![(i, strategy.replicas)];
    }
    if let Some(n) = new {
        if is_saturated(strategy, &rss[n]) {
            return active(rss).into_iter().filter(|&i| i != n).map(|i| (i, 0)).collect();
        }
    }
    if !strategy.rolling {
        return Vec::new();
    }
    let mut act = active(rss);
    let current: i32 = act.iter().map(|&i| rss[i].replicas).sum();
    let allowed = if strategy.replicas > 0 { strategy.replicas + strategy.max_surge() } else { 0 };
    let to_add = allowed - current;
    match to_add.cmp(&0) {
        Ordering::Greater => kubesim_api::sort::sort_by(&mut act, |&a, &b| rss[b].replicas.cmp(&rss[a].replicas).then_with(|| by_creation(&rss[b], &rss[a]))),
        Ordering::Less => kubesim_api::sort::sort_by(&mut act, |&a, &b| rss[b].replicas.cmp(&rss[a].replicas).then_with(|| by_creation(&rss[a], &rss[b]))),
        Ordering::Equal => {}
    }
    let mut added = 0;
    let mut sizes: Vec<i32> = Vec::with_capacity(act.len());
    for &i in &act {
        if to_add != 0 {
            let p = proportion(&rss[i], strategy, status_replicas, to_add, added);
            sizes.push(rss[i].replicas + p);
            added += p;
        } else {
            sizes.push(rss[i].replicas);
        }
    }
    if to_add != 0 && !sizes.is_empty() {
        sizes[0] = (sizes[0] + to_add - added).max(0);
    }
    // Every active RS is touched (its annotations are refreshed even when its size stays).
    act.into_iter().zip(sizes).collect()
}

/// The status counters `DeploymentComplete` / `DeploymentProgressing` read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusCounts {
    /// status.replicas.
    pub replicas: i32,
    /// status.updatedReplicas.
    pub updated: i32,
    /// status.readyReplicas.
    pub ready: i32,
    /// status.availableReplicas.
    pub available: i32,
    /// status.observedGeneration.
    pub observed_generation: i64,
}

/// `DeploymentComplete`.
pub fn deployment_complete(desired: i32, generation: i64, status: &StatusCounts) -> bool {
    status.updated == desired && status.replicas == desired && status.available == desired && status.observed_generation >= generation
}

/// `DeploymentProgressing`: whether the new status shows progress over the old one.
pub fn deployment_progressing(old: &StatusCounts, new: &StatusCounts) -> bool {
    let old_old = old.replicas - old.updated;
    let new_old = new.replicas - new.updated;
    new.updated > old.updated || new_old < old_old || new.ready > old.ready || new.available > old.available
}

/// `DeploymentTimedOut`: `progressing` = (reason, lastUpdateTime ms) of the Progressing condition.
pub fn deployment_timed_out(deadline_seconds: Option<i32>, progressing: Option<(&str, Millis)>, now: Millis) -> bool {
    let Some(deadline) = deadline_seconds.filter(|d| *d != i32::MAX) else { return false };
    let Some((reason, last_update)) = progressing else { return false };
    if reason == reasons::NEW_RS_AVAILABLE {
        return false;
    }
    if reason == reasons::TIMED_OUT {
        return true;
    }
    last_update + (deadline as Millis) * 1000 < now
}

/// `cleanupDeployment`: which old RSs to delete, given (name, created, revision, spec.replicas,
/// status.replicas, generation, observedGeneration, deleting) and the history limit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistoryEntry {
    /// Name.
    pub name: String,
    /// creationTimestamp (virtual ms).
    pub created: Millis,
    /// The revision annotation, if it parses.
    pub revision: Option<i64>,
    /// spec.replicas.
    pub replicas: i32,
    /// status.replicas.
    pub actual: i32,
    /// metadata.generation.
    pub generation: i64,
    /// status.observedGeneration.
    pub observed_generation: i64,
    /// Whether it has a deletionTimestamp.
    pub deleting: bool,
}

/// The names of the old RSs `cleanupDeployment` deletes.
pub fn plan_history_cleanup(old: &[HistoryEntry], limit: Option<i32>) -> Vec<String> {
    let Some(limit) = limit.filter(|l| *l != i32::MAX) else { return Vec::new() };
    let mut alive: Vec<&HistoryEntry> = old.iter().filter(|r| !r.deleting).collect();
    let diff = alive.len() as i64 - limit as i64;
    if diff <= 0 {
        return Vec::new();
    }
    // ReplicaSetsByRevision: by revision; unparsable / equal revisions fall back to creation.
    crate::common::sort_by_less(&mut alive, &|a: &&HistoryEntry, b: &&HistoryEntry| match (a.revision, b.revision) {
        (Some(x), Some(y)) if x != y => x < y,
        _ => (a.created, &a.name) < (b.created, &b.name),
    });
    alive.iter().take(diff as usize).filter(|r| r.actual == 0 && r.replicas == 0 && r.generation <= r.observed_generation).map(|r| r.name.clone()).collect()
}

/// Appends `old_revision` to a revision-history annotation, dropping the oldest entries to stay
/// within [`MAX_REV_HISTORY_LENGTH_IN_CHARS`] (None: it cannot fit).
pub fn append_revision_history(history: &str, old_revision: &str, limit: usize) -> Option<String> {
    if history.is_empty() {
        return Some(old_revision.to_string());
    }
    let entries: Vec<&str> = history.split(',').collect();
    let mut total = history.len() + old_revision.len() + 1;
    let mut start = 0;
    while total > limit && start < entries.len() {
        total -= entries[start].len() + 1;
        start += 1;
    }
    if total > limit {
        return None;
    }
    let mut kept: Vec<&str> = entries[start..].to_vec();
    kept.push(old_revision);
    Some(kept.join(","))
}

pub use kubesim_api::hash::fnv32a;

/// `rand.SafeEncodeString`: each character → alphabet[codepoint % 27].
pub fn safe_encode_string(text: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    text.chars().map(|c| ALPHABET[(c as u32 as usize) % ALPHABET.len()] as char).collect()
}

/// `controller.ComputeHash`: FNV-32a over a canonical serialization of the template (JSON with
/// sorted keys, standing in for go-spew's dump), plus the collision count, SafeEncoded.
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut template = template.clone();
    if let Some(labels) = template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        labels.remove(POD_TEMPLATE_HASH_LABEL);
    }
    let value = serde_json::to_value(&template).unwrap_or_default();
    let mut data = canonical_json(&value).into_bytes();
    if let Some(count) = collision_count {
        data.extend_from_slice(&(count as u32).to_le_bytes());
        data.extend_from_slice(&[0, 0, 0, 0]);
    }
    safe_encode_string(&fnv32a(&data).to_string())
}

fn canonical_json(value: &serde_json::Value) -> String {
    // Keys sorted explicitly (serde_json's map order depends on a feature flag).
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            kubesim_api::sort::sort(&mut keys);
            let body: Vec<String> = keys.into_iter().map(|k| format!("{}:{}", serde_json::Value::String(k.clone()), canonical_json(&map[k]))).collect();
            format!("{{{}}}", body.join(","))
        }
        serde_json::Value::Array(items) => format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Whether two templates are equal ignoring the pod-template-hash label (`EqualIgnoreHash`).
pub fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    let strip = |t: &PodTemplateSpec| {
        let mut t = t.clone();
        if let Some(meta) = t.metadata.as_mut() {
            if let Some(labels) = meta.labels.as_mut() {
                labels.remove(POD_TEMPLATE_HASH_LABEL);
                if labels.is_empty() {
                    meta.labels = None;
                }
            }
        }
        t
    };
    strip(a) == strip(b)
}
