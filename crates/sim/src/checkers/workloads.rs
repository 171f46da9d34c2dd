//! Workload controllers' promises: Deployment rollout bounds, StatefulSet ordering, eviction
//! and PodDisruptionBudgets, garbage collection of dependents.

use kubesim_api::k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::object::Object;
use kubesim_api::selector::Selector;
use kubesim_api::Millis;
use kubesim_apiserver::ApiServer;
use kubesim_runtime::Checker;
use kubesim_store::{Commit, EventType};
use std::collections::{BTreeMap, BTreeSet};

/// How stale a controller's informer view of the store may be when it acts: the watch latency
/// (2 ms) plus its queue. A pod that stopped being healthy (or a label that changed) less than
/// this long before a controller's write may still look as before to the controller, as with
/// upstream's informers; checkers that judge a write by what the writer could know allow it.
pub const STALE_VIEW_MS: Millis = 100;

fn pod_ready(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending")
}

/// Running and Ready and not being deleted (the StatefulSet controller's `isHealthy`).
fn healthy(pod: &Pod) -> bool {
    phase(pod) == "Running" && pod_ready(pod) && pod.metadata.deletion_timestamp.is_none()
}

/// The pod started being deleted with this commit (a deletion timestamp appeared, or it went
/// at once).
fn deletion_started(commit: &Commit) -> bool {
    let had = commit.previous.as_deref().is_some_and(|p| p.metadata().deletion_timestamp.is_some());
    let has = commit.object.metadata().deletion_timestamp.is_some() || commit.event_type == EventType::Deleted;
    has && !had
}

/// upstream `GetScaledValueFromIntOrPercent`.
fn scaled(value: Option<&IntOrString>, total: i32, round_up: bool) -> i32 {
    match value {
        None => 0,
        Some(IntOrString::Int(i)) => *i,
        Some(IntOrString::String(s)) => {
            let percent: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
            let product = percent * total as i64;
            (if round_up { (product + 99) / 100 } else { product / 100 }) as i32
        }
    }
}

#[derive(Clone, Debug, Default)]
struct DeploymentState {
    key: String,
    replicas: i32,
    rolling: bool,
    max_surge: i32,
    max_unavailable: i32,
    paused: bool,
    deleting: bool,
    available: i32,
    /// The availability bound applies: the deployment was complete (every replica updated
    /// and available) and nothing disrupted it since.
    armed: bool,
    /// Reported and not yet back within (surge, availability).
    over_surge: bool,
    under_available: bool,
}

#[derive(Clone, Debug, Default)]
struct RsState {
    deployment: String,
    name: String,
    replicas: i32,
    desired_annotation: Option<i32>,
    max_annotation: Option<i32>,
}

/// A Deployment's rolling update stays within its bounds, as upstream's e2e framework checks
/// them while a rollout runs (`WaitForDeploymentCompleteAndCheckRolling`):
///
/// - **Surge**: the pods the Deployment's ReplicaSets are asked for (`Σ spec.replicas`,
///   upstream's "total pods created", `GetReplicaCountForReplicaSets`) never exceed
///   `spec.replicas + maxSurge`. Checked at every commit while the Deployment uses the
///   RollingUpdate strategy, is not paused or being deleted, and **no scale is in progress**:
///   no active ReplicaSet (spec.replicas > 0) carries a `deployment.kubernetes.io/desired-replicas`
///   annotation other than `spec.replicas` (upstream's `isScalingEvent`: the user or an HPA
///   changed the replicas and proportional scaling has not finished) or a
///   `deployment.kubernetes.io/max-replicas` other than `replicas + maxSurge` (the strategy
///   itself changed under a rollout: the controller stops scaling up but does not scale the
///   surplus away). Pods the ReplicaSet controller has yet to create or delete are not
///   counted; terminating pods never are (as in v1.34 without DeploymentPodReplacementPolicy).
/// - **Availability**: `status.availableReplicas` never drops below `spec.replicas −
///   maxUnavailable` — once the Deployment has been complete (`DeploymentComplete`: every
///   replica updated, available, observed) and as long as nothing outside the rollout touches
///   it. The bound stops applying (until the Deployment is complete again) when its replicas
///   change, it is paused or deleted, or one of its pods is disrupted: deleted or evicted by
///   anyone but the ReplicaSet controller, or Ready turning False while it is not being
///   deleted (a crash, a failed probe, a lost node). It stops for good once a fault has been
///   injected into the run (faults disturb availability in ways a pod's own history does not
///   always show: a partitioned kubelet cannot report it). Upstream allows a rollout to start
///   below the bound (a new Deployment starts at 0 available); that is why it needs the
///   complete state first.
#[derive(Clone, Debug, Default)]
pub struct DeploymentRolloutBounds {
    deployments: BTreeMap<String, DeploymentState>,
    replicasets: BTreeMap<String, RsState>,
    /// Deployment uid → the uids of the ReplicaSets it controls.
    owned: BTreeMap<String, BTreeSet<String>>,
    faulted: bool,
}

fn controller_uid<'a>(object: &'a Object, kind: &str) -> Option<&'a str> {
    super::controller_ref(object).filter(|r| r.kind == kind).map(|r| r.uid.as_str())
}

impl DeploymentRolloutBounds {
    fn on_deployment(&mut self, commit: &Commit) -> Option<String> {
        let uid = commit.object.metadata().uid.clone().unwrap_or_default();
        if commit.event_type == EventType::Deleted {
            self.deployments.remove(&uid);
            if self.owned.get(&uid).is_some_and(|s| s.is_empty()) {
                self.owned.remove(&uid);
            }
            return None;
        }
        let d: &Deployment = match commit.object.as_ref() {
            Object::Deployment(d) => d,
            _ => return None,
        };
        let spec = d.spec.as_ref();
        let replicas = spec.and_then(|s| s.replicas).unwrap_or(1);
        let strategy = spec.and_then(|s| s.strategy.as_ref());
        let rolling = strategy.and_then(|s| s.type_.as_deref()) != Some("Recreate");
        let ru = strategy.and_then(|s| s.rolling_update.as_ref());
        let surge = scaled(ru.and_then(|r| r.max_surge.as_ref()), replicas, true);
        let mut unavailable = scaled(ru.and_then(|r| r.max_unavailable.as_ref()), replicas, false);
        if surge == 0 && unavailable == 0 {
            unavailable = 1;
        }
        let status = d.status.clone().unwrap_or_default();
        let complete = status.updated_replicas.unwrap_or(0) == replicas
            && status.replicas.unwrap_or(0) == replicas
            && status.available_replicas.unwrap_or(0) == replicas
            && status.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0);
        let state = self.deployments.entry(uid.clone()).or_default();
        let replicas_changed = state.replicas != replicas;
        state.key = super::key(&commit.object);
        state.replicas = replicas;
        state.rolling = rolling;
        state.max_surge = if rolling { surge } else { 0 };
        state.max_unavailable = if !rolling || replicas == 0 { 0 } else { unavailable.min(replicas) };
        state.paused = spec.and_then(|s| s.paused).unwrap_or(false);
        state.deleting = d.metadata.deletion_timestamp.is_some();
        state.available = status.available_replicas.unwrap_or(0);
        if replicas_changed || state.paused || state.deleting || self.faulted {
            state.armed = false;
        }
        if complete && !state.paused && !state.deleting && !self.faulted {
            state.armed = true;
        }
        Some(uid)
    }

    fn on_replicaset(&mut self, commit: &Commit) -> Option<String> {
        let uid = commit.object.metadata().uid.clone().unwrap_or_default();
        let owner = controller_uid(&commit.object, "Deployment").map(str::to_string);
        if commit.event_type == EventType::Deleted || owner.is_none() {
            let removed = self.replicasets.remove(&uid)?;
            if let Some(set) = self.owned.get_mut(&removed.deployment) {
                set.remove(&uid);
            }
            return Some(removed.deployment);
        }
        let rs: &ReplicaSet = match commit.object.as_ref() {
            Object::ReplicaSet(rs) => rs,
            _ => return None,
        };
        let annotation = |key: &str| rs.metadata.annotations.as_ref().and_then(|a| a.get(key)).and_then(|v| v.parse::<i32>().ok());
        let state = RsState {
            deployment: owner.clone().unwrap_or_default(),
            name: commit.object.name().to_string(),
            replicas: rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
            desired_annotation: annotation("deployment.kubernetes.io/desired-replicas"),
            max_annotation: annotation("deployment.kubernetes.io/max-replicas"),
        };
        let old = self.replicasets.insert(uid.clone(), state);
        if let Some(old) = old.filter(|o| Some(&o.deployment) != owner.as_ref()) {
            if let Some(set) = self.owned.get_mut(&old.deployment) {
                set.remove(&uid);
            }
        }
        self.owned.entry(owner.clone().unwrap_or_default()).or_default().insert(uid);
        owner
    }

    fn on_pod(&mut self, commit: &Commit) -> Option<String> {
        let pod = commit.object.as_pod()?;
        // The pod's ReplicaSet: its controller now, or (deleted, or released by its
        // ReplicaSet in this write) the one it had.
        let now = controller_uid(&commit.object, "ReplicaSet").filter(|_| commit.event_type != EventType::Deleted);
        let rs = now.or_else(|| controller_uid(commit.previous.as_deref()?, "ReplicaSet")).or_else(|| controller_uid(&commit.object, "ReplicaSet"))?;
        let by_rs_controller = &*commit.actor == "replicaset-controller";
        let was_ready = commit.previous.as_deref().and_then(Object::as_pod).is_some_and(pod_ready);
        let disrupted = (deletion_started(commit) && !by_rs_controller)
            || (was_ready && !pod_ready(pod) && pod.metadata.deletion_timestamp.is_none())
            || (phase(pod) == "Failed" && commit.previous.as_deref().and_then(Object::as_pod).is_some_and(|p| phase(p) != "Failed"));
        if disrupted {
            let deployment = &self.replicasets.get(rs)?.deployment;
            if let Some(d) = self.deployments.get_mut(deployment) {
                d.armed = false;
            }
        }
        None // pods alone never change the bounds
    }

    fn evaluate(&mut self, uid: &str) -> Result<(), String> {
        let Some(d) = self.deployments.get(uid) else { return Ok(()) };
        let owned: Vec<&RsState> = self.owned.get(uid).into_iter().flatten().filter_map(|rs| self.replicasets.get(rs)).collect();
        let applies = d.rolling && !d.paused && !d.deleting;
        let scaling = owned
            .iter()
            .filter(|rs| rs.replicas > 0)
            .any(|rs| rs.desired_annotation.is_some_and(|v| v != d.replicas) || rs.max_annotation.is_some_and(|v| v != d.replicas + d.max_surge));
        let total: i32 = owned.iter().map(|rs| rs.replicas).sum();
        let max = d.replicas + d.max_surge;
        let mut problems = Vec::new();
        let over = applies && !scaling && total > max;
        if over && !d.over_surge {
            let mut sizes: Vec<String> = owned.iter().map(|rs| format!("{}={}", rs.name, rs.replicas)).collect();
            kubesim_api::sort::sort(&mut sizes);
            problems.push(format!(
                "deployment {}: its ReplicaSets ask for {total} pods ({}), more than replicas {} + maxSurge {} = {max}",
                d.key,
                sizes.join(", "),
                d.replicas,
                d.max_surge
            ));
        }
        let min = d.replicas - d.max_unavailable;
        let under = applies && d.armed && !self.faulted && d.available < min;
        if under && !d.under_available {
            problems.push(format!(
                "deployment {}: {} available during its rolling update, fewer than replicas {} - maxUnavailable {} = {min}",
                d.key, d.available, d.replicas, d.max_unavailable
            ));
        }
        let d = self.deployments.get_mut(uid).expect("looked up above");
        d.over_surge = over;
        d.under_available = under;
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

impl Checker for DeploymentRolloutBounds {
    fn name(&self) -> &str {
        "deployment-rollout-bounds"
    }
    fn fault_injected(&mut self, _t_ms: Millis, _fault: &str) {
        self.faulted = true;
        for d in self.deployments.values_mut() {
            d.armed = false;
        }
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let touched = match commit.resource {
            ("apps", "deployments") => self.on_deployment(commit),
            ("apps", "replicasets") => self.on_replicaset(commit),
            ("", "pods") => self.on_pod(commit),
            _ => None,
        };
        match touched {
            Some(uid) => self.evaluate(&uid),
            None => Ok(()),
        }
    }
}

#[derive(Clone, Debug, Default)]
struct SetState {
    name: String,
    replicas: i64,
    start: i64,
    ordered: bool,
}

#[derive(Clone, Debug, Default)]
struct Slot {
    /// The pod now holding the ordinal (uid), if any.
    pod: Option<String>,
    healthy: bool,
    /// When the ordinal's pod (any incarnation) last stopped being healthy.
    healthy_until: Option<Millis>,
}

/// A StatefulSet with the OrderedReady pod management policy (the default) creates and
/// removes pods in order:
///
/// - **Creation**: the controller creates the pod of ordinal N+1 only when every lower ordinal
///   (from `spec.ordinals.start`) has a pod that is Running and Ready and not being deleted
///   (`isHealthy`; no `minReadySeconds` is taken into account). A lower pod that stopped being
///   healthy less than [`STALE_VIEW_MS`] before the creation counts as healthy (the
///   controller's informer may not have seen it yet); one that never was healthy never does.
/// - **Scale-down**: when the controller starts deleting a condemned pod (ordinal at or above
///   `start + replicas`), no pod of a higher ordinal exists any more, terminating ones
///   included (the controller deletes the highest ordinal first and waits for it to go).
///
/// Only the StatefulSet controller's own writes are judged (pods deleted by users, evictions
/// or the garbage collector are not ordered). The Parallel policy is not checked.
#[derive(Clone, Debug, Default)]
pub struct StatefulSetOrdering {
    sets: BTreeMap<String, SetState>,
    /// (set uid, ordinal) → the ordinal's state.
    slots: BTreeMap<(String, i64), Slot>,
}

impl Checker for StatefulSetOrdering {
    fn name(&self) -> &str {
        "statefulset-ordering"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        if commit.resource == ("apps", "statefulsets") {
            let uid = commit.object.metadata().uid.clone().unwrap_or_default();
            if commit.event_type == EventType::Deleted {
                self.sets.remove(&uid);
                return Ok(());
            }
            let json = commit.object.to_json();
            let spec = json.get("spec");
            let state = SetState {
                name: commit.object.name().to_string(),
                replicas: spec.and_then(|s| s.get("replicas")).and_then(|v| v.as_i64()).unwrap_or(1),
                start: spec.and_then(|s| s.pointer("/ordinals/start")).and_then(|v| v.as_i64()).unwrap_or(0),
                ordered: spec.and_then(|s| s.get("podManagementPolicy")).and_then(|v| v.as_str()) != Some("Parallel"),
            };
            self.sets.insert(uid, state);
            return Ok(());
        }
        let Some(pod) = commit.object.as_pod() else { return Ok(()) };
        let Some(set_uid) = controller_uid(&commit.object, "StatefulSet").map(str::to_string) else { return Ok(()) };
        let Some(set) = self.sets.get(&set_uid).cloned() else { return Ok(()) };
        let Some(ordinal) = commit.object.name().strip_prefix(&format!("{}-", set.name)).and_then(|o| o.parse::<i64>().ok()) else { return Ok(()) };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let now = commit.t_ms;
        let by_controller = &*commit.actor == "statefulset-controller";
        let mut problems = Vec::new();
        if set.ordered && by_controller && commit.event_type == EventType::Added {
            for lower in set.start..ordinal {
                let slot = self.slots.get(&(set_uid.clone(), lower));
                let fine = slot.is_some_and(|s| (s.pod.is_some() && s.healthy) || s.healthy_until.is_some_and(|t| t + STALE_VIEW_MS >= now));
                if !fine {
                    let why = match slot.and_then(|s| s.pod.as_ref()) {
                        Some(_) => "is not Running and Ready",
                        None => "does not exist",
                    };
                    problems.push(format!("statefulset {}: pod {} was created while pod {}-{lower} {why}", set.name, commit.object.name(), set.name));
                    break;
                }
            }
        }
        if set.ordered && by_controller && deletion_started(commit) && ordinal >= set.start + set.replicas {
            let higher: Vec<String> = self
                .slots
                .range((set_uid.clone(), ordinal + 1)..)
                .take_while(|((s, _), _)| *s == set_uid)
                .filter(|(_, slot)| slot.pod.is_some())
                .map(|((_, o), _)| format!("{}-{o}", set.name))
                .collect();
            if !higher.is_empty() {
                problems.push(format!(
                    "statefulset {}: scale-down deleted pod {} while higher ordinal(s) {} still exist",
                    set.name,
                    commit.object.name(),
                    higher.join(", ")
                ));
            }
        }
        let slot = self.slots.entry((set_uid, ordinal)).or_default();
        let is_healthy = commit.event_type != EventType::Deleted && healthy(pod);
        if slot.healthy && !is_healthy {
            slot.healthy_until = Some(now);
        }
        slot.healthy = is_healthy;
        if commit.event_type == EventType::Deleted {
            if slot.pod.as_deref() == Some(uid.as_str()) {
                slot.pod = None;
            }
        } else {
            slot.pod = Some(uid);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// The eviction subresource never takes a disruption a PodDisruptionBudget does not allow:
///
/// - a budget's `status.disruptedPods` gains a pod (the eviction's write, pkg/registry/core/pod/
///   storage/eviction.go) only when the budget had `status.disruptionsAllowed` ≥ 1 before;
/// - a pod the Eviction API evicts (`DisruptionTarget` with reason `EvictionByEvictionAPI`
///   appears) while it is covered (not Pending, Succeeded or Failed, not being deleted) by a
///   budget selecting it (a non-empty selector in its namespace) had a disruption taken from
///   that budget in the same request (the same virtual instant, just before).
///
/// The budget's status is the disruption controller's: the eviction judges by it, and so does
/// this checker (a stale status that still allows a disruption is upstream's behaviour too).
#[derive(Clone, Debug, Default)]
pub struct EvictionsRespectBudgets {
    /// (namespace, name) → the budget's selector (None: empty, selects nothing).
    budgets: BTreeMap<(String, String), Option<Selector>>,
    /// (namespace, pod) → when a disruption was taken for it.
    grants: BTreeMap<(String, String), Millis>,
}

fn disrupted_pods(object: &Object) -> BTreeSet<String> {
    let json = object.to_json();
    json.pointer("/status/disruptedPods").and_then(|d| d.as_object()).map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

fn eviction_condition(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "DisruptionTarget" && c.status == "True" && c.reason.as_deref() == Some("EvictionByEvictionAPI")))
}

impl Checker for EvictionsRespectBudgets {
    fn name(&self) -> &str {
        "evictions-respect-budgets"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        if commit.resource != ("policy", "poddisruptionbudgets") && commit.resource != ("", "pods") {
            return Ok(());
        }
        let ns = commit.object.namespace().to_string();
        if commit.resource == ("policy", "poddisruptionbudgets") {
            let key = (ns.clone(), commit.object.name().to_string());
            if commit.event_type == EventType::Deleted {
                self.budgets.remove(&key);
                return Ok(());
            }
            let json = commit.object.to_json();
            let selector: Option<kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector> =
                json.pointer("/spec/selector").and_then(|s| serde_json::from_value(s.clone()).ok());
            let selector = selector.map(|s| Selector::from_label_selector(&s)).filter(|s| !s.is_empty());
            self.budgets.insert(key.clone(), selector);
            let Some(previous) = commit.previous.as_deref() else { return Ok(()) };
            let before = disrupted_pods(previous);
            let fresh: Vec<String> = disrupted_pods(&commit.object).into_iter().filter(|p| !before.contains(p)).collect();
            if fresh.is_empty() {
                return Ok(());
            }
            let allowed = previous.to_json().pointer("/status/disruptionsAllowed").and_then(|v| v.as_i64()).unwrap_or(0);
            for pod in &fresh {
                self.grants.insert((ns.clone(), pod.clone()), commit.t_ms);
            }
            if allowed < 1 {
                return Err(format!(
                    "poddisruptionbudget {}/{}: a disruption was taken for {} while disruptionsAllowed was {allowed}",
                    key.0,
                    key.1,
                    fresh.join(", ")
                ));
            }
            return Ok(());
        }
        let Some(pod) = commit.object.as_pod() else { return Ok(()) };
        let previous = commit.previous.as_deref().and_then(Object::as_pod);
        let Some(previous) = previous else { return Ok(()) };
        if !eviction_condition(pod) || eviction_condition(previous) {
            return Ok(());
        }
        let name = commit.object.name().to_string();
        let grant = self.grants.remove(&(ns.clone(), name.clone()));
        let covered = !matches!(phase(previous), "Pending" | "Succeeded" | "Failed") && previous.metadata.deletion_timestamp.is_none();
        if !covered {
            return Ok(());
        }
        let labels = pod.metadata.labels.as_ref();
        let budgets: Vec<&String> =
            self.budgets.iter().filter(|((n, _), s)| *n == ns && s.as_ref().is_some_and(|s| s.matches(labels))).map(|((_, b), _)| b).collect();
        if budgets.is_empty() || grant == Some(commit.t_ms) {
            return Ok(());
        }
        Err(format!(
            "pod {ns}/{name} was evicted without a disruption taken from its budget(s) {}",
            budgets.iter().map(|b| b.as_str()).collect::<Vec<_>>().join(", ")
        ))
    }
}

/// No dependent is left with a controller `ownerReference` whose owner is gone (or was
/// replaced: another uid) once the garbage collector had time: checked at the end of a run
/// ([`Checker::finish`], after a swarm's liveness phase). Dependents already being deleted
/// (the collector did its part; their grace period or finalizers run) are left out.
#[derive(Clone, Debug, Default)]
pub struct NoDanglingOwners;

/// Every live object whose controller owner does not exist (`namespace/name` of the
/// dependent, its kind, and the owner it names), dependents being deleted included when
/// `include_deleting`.
pub fn dangling_owners(api: &ApiServer, include_deleting: bool) -> Vec<String> {
    let store = api.store();
    let mut found = Vec::new();
    for resource in store.resources() {
        for object in store.list(resource, None) {
            let Some(owner) = super::controller_ref(object) else { continue };
            if object.metadata().deletion_timestamp.is_some() && !include_deleting {
                continue;
            }
            let Some(info) = kubesim_api::object::kind_info(&owner.api_version, &owner.kind) else { continue };
            let namespace = if info.scope == kubesim_api::object::Scope::Namespaced { object.namespace() } else { "" };
            let exists =
                store.get((info.group(), info.plural), namespace, &owner.name).is_some_and(|o| o.metadata().uid.as_deref() == Some(owner.uid.as_str()));
            if !exists {
                found.push(format!(
                    "{} {} names {} {} (uid {}) as its controller, which is gone",
                    object.kind(),
                    super::key(object),
                    owner.kind,
                    owner.name,
                    owner.uid
                ));
            }
        }
    }
    found
}

impl Checker for NoDanglingOwners {
    fn name(&self) -> &str {
        "no-dangling-owners"
    }
    fn check(&mut self, _commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        Ok(())
    }
    fn finish(&mut self, api: &ApiServer, _now: Millis) -> Result<(), String> {
        let found = dangling_owners(api, false);
        if found.is_empty() {
            Ok(())
        } else {
            Err(found.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_scale_as_upstream() {
        let p = |s: &str| Some(IntOrString::String(s.into()));
        assert_eq!(scaled(p("25%").as_ref(), 10, true), 3);
        assert_eq!(scaled(p("25%").as_ref(), 10, false), 2);
        assert_eq!(scaled(Some(&IntOrString::Int(2)), 10, false), 2);
        assert_eq!(scaled(None, 10, true), 0);
    }
}
