//! VolumeBinding (PreFilter, Filter, Reserve, PreBind) — `plugins/volumebinding` with its
//! `binder.go` (release-1.34): pods whose claims are unbound and Immediate wait in PreFilter;
//! bound claims restrict the pod to their volumes' nodes; WaitForFirstConsumer claims are
//! matched to static volumes on each node (`FindMatchingVolume` with the node) or must be
//! provisionable there; Reserve assumes the choice for the selected node, and PreBind writes it
//! (the volume's claimRef, or `volume.kubernetes.io/selected-node` on the claim for the
//! provisioner) and then waits, polling every second up to `bindTimeoutSeconds`, until the PV
//! controller has bound every claim.
//!
//! Deviations: no assume cache — the scheduler's PV/PVC listers see the PreBind writes when
//! their watch events arrive; no CSIStorageCapacity or CSI migration; no Score
//! (StorageCapacityScoring is off by default).

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, Code, CycleState, Plugin, Point, Status};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, TopologySelectorTerm};
use kubesim_api::storage::{
    bind_volume_to_claim, check_node_affinity, claim_class, claim_request, find_matching_volume, is_claim_fully_bound, is_delay_binding_mode,
    local_volume_node_names, ANN_SELECTED_NODE, NOT_SUPPORTED_PROVISIONER,
};
use kubesim_api::Millis;
use kubesim_runtime::Ctx;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// ErrReasonBindConflict.
pub const ERR_REASON_BIND_CONFLICT: &str = "node(s) didn't find available persistent volumes to bind";
/// ErrReasonNodeConflict (v1.33+; "node(s) had volume node affinity conflict" before).
pub const ERR_REASON_NODE_CONFLICT: &str = "node(s) didn't match PersistentVolume's node affinity";
/// ErrReasonNotEnoughSpace (CSIStorageCapacity; not modelled).
pub const ERR_REASON_NOT_ENOUGH_SPACE: &str = "node(s) did not have enough free storage";
/// ErrReasonPVNotExist.
pub const ERR_REASON_PV_NOT_EXIST: &str = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
/// The PreFilter reason for unbound Immediate claims.
pub const ERR_UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";
/// VolumeBindingArgs.bindTimeoutSeconds default (600 s).
pub const BIND_TIMEOUT_MS: Millis = 600_000;
/// BindPodVolumes' poll interval (`wait.PollUntilContextTimeout(ctx, time.Second, ...)`).
pub const BIND_POLL_MS: Millis = 1000;

const KEY: &str = "VolumeBinding";

/// The plugin.
#[derive(Clone, Debug, Default)]
pub struct VolumeBinding;

/// A pod's volume decisions for one node (`PodVolumes`).
#[derive(Clone, Debug, Default)]
pub struct PodVolumes {
    /// Static volumes to pre-bind: (the volume with its new claimRef, the claim).
    pub static_bindings: Vec<(PersistentVolume, Arc<PersistentVolumeClaim>)>,
    /// Claims to provision, with the selected-node annotation set.
    pub dynamic_provisions: Vec<PersistentVolumeClaim>,
}

#[derive(Clone, Debug, Default)]
struct StateData {
    all_bound: bool,
    bound_claims: Vec<Arc<PersistentVolumeClaim>>,
    delay_claims: Vec<Arc<PersistentVolumeClaim>>,
    /// PVs of the delay-binding claims' classes (`unboundVolumesDelayBinding`).
    class_volumes: BTreeMap<String, Vec<Arc<PersistentVolume>>>,
    /// The bound claims' volumes (None: missing).
    bound_volumes: BTreeMap<String, Option<Arc<PersistentVolume>>>,
    /// The classes of the delay-binding claims.
    classes: BTreeMap<String, Option<Arc<k8s_openapi::api::storage::v1::StorageClass>>>,
    /// Reserve's decision for the chosen node.
    chosen: Option<PodVolumes>,
    /// PreBind's API updates were made.
    api_done: bool,
}

/// The claim name a pod volume uses (`ephemeral.VolumeClaimName` for generic ephemeral ones).
fn claim_names(pod: &PodInfo) -> Vec<(String, bool)> {
    let p = pod.pod();
    let pod_name = p.metadata.name.as_deref().unwrap_or_default();
    p.spec.as_ref().and_then(|s| s.volumes.as_ref()).into_iter().flatten().filter_map(|v| kubesim_api::pod::volume_claim(pod_name, v)).collect()
}

/// `ephemeral.VolumeIsForPod`.
fn volume_is_for_pod(pod: &PodInfo, pvc: &PersistentVolumeClaim) -> Result<(), String> {
    let uid = pod.pod().metadata.uid.as_deref().unwrap_or("");
    let owned = pvc.metadata.owner_references.iter().flatten().any(|o| o.controller == Some(true) && o.uid == uid);
    if owned {
        Ok(())
    } else {
        Err(format!(
            "PVC {}/{} was not created for pod {}/{} (pod is not owner)",
            pvc.metadata.namespace.as_deref().unwrap_or(""),
            pvc.metadata.name.as_deref().unwrap_or(""),
            pod.namespace(),
            pod.name()
        ))
    }
}

fn matches_topology(terms: Option<&Vec<TopologySelectorTerm>>, labels: Option<&BTreeMap<String, String>>) -> bool {
    let Some(terms) = terms.filter(|t| !t.is_empty()) else { return true };
    terms
        .iter()
        .any(|term| term.match_label_expressions.iter().flatten().all(|req| labels.and_then(|l| l.get(&req.key)).is_some_and(|v| req.values.contains(v))))
}

impl StateData {
    /// `FindPodVolumes` for one node: the decisions, or the conflict reasons (Err: an error).
    fn find_pod_volumes(&self, node: &str, labels: Option<&BTreeMap<String, String>>) -> Result<(PodVolumes, Vec<&'static str>), String> {
        let mut volumes = PodVolumes::default();
        let mut reasons = Vec::new();
        let (mut bound_satisfied, mut bound_found, mut unbound_satisfied) = (true, true, true);
        let finish = |bound_satisfied: bool, unbound_satisfied: bool, bound_found: bool, mut reasons: Vec<&'static str>| {
            if !bound_satisfied {
                reasons.push(ERR_REASON_NODE_CONFLICT);
            }
            if !unbound_satisfied {
                reasons.push(ERR_REASON_BIND_CONFLICT);
            }
            if !bound_found {
                reasons.push(ERR_REASON_PV_NOT_EXIST);
            }
            reasons
        };
        // checkBoundClaims.
        for pvc in &self.bound_claims {
            let name = pvc.spec.as_ref().and_then(|s| s.volume_name.clone()).unwrap_or_default();
            match self.bound_volumes.get(&name).cloned().flatten() {
                None => {
                    bound_found = false;
                    break;
                }
                Some(pv) => {
                    if check_node_affinity(&pv, labels).is_err() {
                        bound_satisfied = false;
                        break;
                    }
                }
            }
        }
        if !self.delay_claims.is_empty() {
            let mut to_match = Vec::new();
            let mut to_provision: Vec<Arc<PersistentVolumeClaim>> = Vec::new();
            for claim in &self.delay_claims {
                match claim.metadata.annotations.as_ref().and_then(|a| a.get(ANN_SELECTED_NODE)) {
                    Some(selected) if selected != node => {
                        unbound_satisfied = false;
                        reasons = finish(bound_satisfied, unbound_satisfied, bound_found, reasons);
                        return Ok((volumes, reasons));
                    }
                    Some(_) => to_provision.push(claim.clone()),
                    None => to_match.push(claim.clone()),
                }
            }
            // findMatchingVolumes: smallest requests first, each chosen volume excluded.
            kubesim_api::sort::sort_by(&mut to_match, |a, b| claim_request(a).cmp(&claim_request(b)));
            let mut chosen: Vec<String> = Vec::new();
            for claim in to_match {
                let class = claim_class(&claim);
                let candidates: Vec<&PersistentVolume> = self.class_volumes.get(&class).into_iter().flatten().map(|v| v.as_ref()).collect();
                match find_matching_volume(&claim, &candidates, Some(labels), &chosen, true) {
                    Some(pv) => {
                        chosen.push(pv.metadata.name.clone().unwrap_or_default());
                        volumes.static_bindings.push((pv.clone(), claim.clone()));
                    }
                    None => {
                        unbound_satisfied = false;
                        to_provision.push(claim);
                    }
                }
            }
            // checkVolumeProvisions.
            if !to_provision.is_empty() {
                let mut provisions = Vec::new();
                let mut satisfied = true;
                for claim in &to_provision {
                    let class_name = claim_class(claim);
                    let key = format!("{}/{}", claim.metadata.namespace.as_deref().unwrap_or(""), claim.metadata.name.as_deref().unwrap_or(""));
                    if class_name.is_empty() {
                        return Err(format!("no class for claim {key:?}"));
                    }
                    let Some(class) = self.classes.get(&class_name).cloned().flatten() else {
                        return Err(format!("failed to find storage class {class_name:?}"));
                    };
                    if class.provisioner.is_empty()
                        || class.provisioner == NOT_SUPPORTED_PROVISIONER
                        || !matches_topology(class.allowed_topologies.as_ref(), labels)
                    {
                        satisfied = false;
                        provisions.clear();
                        break;
                    }
                    let mut annotated = (**claim).clone();
                    annotated.metadata.annotations.get_or_insert_with(BTreeMap::new).insert(ANN_SELECTED_NODE.into(), node.to_string());
                    provisions.push(annotated);
                }
                unbound_satisfied = satisfied;
                if satisfied {
                    volumes.dynamic_provisions = provisions;
                } else {
                    volumes = PodVolumes::default();
                }
            }
        }
        reasons = finish(bound_satisfied, unbound_satisfied, bound_found, reasons);
        Ok((volumes, reasons))
    }
}

/// `arePodVolumesBound` against the listers.
fn pod_volumes_bound(pod: &PodInfo, view: &ClusterView) -> bool {
    claim_names(pod).iter().all(|(name, _)| view.listers.pvcs.get(&(pod.namespace().to_string(), name.clone())).is_some_and(|c| is_claim_fully_bound(c)))
}

fn resource_version(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> u64 {
    meta.resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// `checkBindings`: Ok(true) when every claim the pod's PreBind operated on is fully bound,
/// Ok(false) to keep waiting, Err to give up (the pod is retried).
fn check_bindings(volumes: &PodVolumes, pod: &PodInfo, node: &str, view: &ClusterView) -> Result<bool, String> {
    let Some(node_info) = view.cache.node(node) else { return Err(format!("failed to get node {node:?}: node {node:?} not found")) };
    if view.cache.pod(&pod.key).is_none() {
        return Err(format!("pod does not exist any more: pod {:?} not found", pod.name()));
    }
    let labels = node_info.labels();
    let pvc_of = |claim: &PersistentVolumeClaim| {
        let ns = claim.metadata.namespace.clone().unwrap_or_default();
        let name = claim.metadata.name.clone().unwrap_or_default();
        view.listers
            .pvcs
            .get(&(ns.clone(), name.clone()))
            .cloned()
            .ok_or_else(|| format!("failed to check binding: PVC {:?} not found", format!("{ns}/{name}")))
    };
    for (written, claim) in &volumes.static_bindings {
        let name = written.metadata.name.clone().unwrap_or_default();
        let pv = view.listers.pvs.get(&name).cloned().ok_or_else(|| format!("failed to check binding: PV {name:?} not found"))?;
        let pvc = pvc_of(claim)?;
        if resource_version(&written.metadata) > resource_version(&pv.metadata) {
            return Ok(false);
        }
        if let Err(e) = check_node_affinity(&pv, labels) {
            return Err(format!("pv {name:?} node affinity doesn't match node {node:?}: {e}"));
        }
        if pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).is_none_or(|r| r.uid.as_deref().unwrap_or("").is_empty()) {
            return Err(format!("ClaimRef got reset for pv {name:?}"));
        }
        if !is_claim_fully_bound(&pvc) {
            return Ok(false);
        }
    }
    for claim in &volumes.dynamic_provisions {
        let pvc = pvc_of(claim)?;
        let name = pvc.metadata.name.clone().unwrap_or_default();
        if resource_version(&claim.metadata) > resource_version(&pvc.metadata) {
            return Ok(false);
        }
        let Some(annotations) = pvc.metadata.annotations.as_ref() else { return Err(format!("selectedNode annotation reset for PVC {name:?}")) };
        if annotations.get(ANN_SELECTED_NODE).map(String::as_str) != Some(node) {
            return Err(format!("provisioning failed for PVC {name:?}"));
        }
        if let Some(volume) = pvc.spec.as_ref().and_then(|s| s.volume_name.as_deref()).filter(|v| !v.is_empty()) {
            let Some(pv) = view.listers.pvs.get(volume) else { return Ok(false) };
            if let Err(e) = check_node_affinity(pv, labels) {
                return Err(format!("pv {volume:?} node affinity doesn't match node {node:?}: {e}"));
            }
        }
        if !is_claim_fully_bound(&pvc) {
            return Ok(false);
        }
    }
    Ok(true)
}

impl Plugin for VolumeBinding {
    fn name(&self) -> &'static str {
        "VolumeBinding"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreFilter, Point::Filter, Point::Reserve, Point::PreBind]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[
            ClusterEvent::StorageClassChange,
            ClusterEvent::PvcChange,
            ClusterEvent::PvChange,
            ClusterEvent::NodeAdd,
            ClusterEvent::NodeLabel,
            ClusterEvent::NodeTaint,
        ]
    }
    fn queueing_hint(&self, rejected: &PodInfo, event: ClusterEvent, _involved: Option<&PodInfo>) -> bool {
        // isSchedulableAfterPersistentVolumeChange: only pods with claims.
        event != ClusterEvent::PvChange || !claim_names(rejected).is_empty()
    }
    fn pre_filter(&self, state: &mut CycleState, pod: &PodInfo, view: &ClusterView) -> (Status, Option<BTreeSet<String>>) {
        let claims = claim_names(pod);
        if claims.is_empty() {
            state.write(KEY, StateData::default());
            return (Status::skip(), None);
        }
        let ns = pod.namespace().to_string();
        // podHasPVCs.
        let mut pvcs = Vec::new();
        for (name, ephemeral) in &claims {
            let Some(pvc) = view.listers.pvcs.get(&(ns.clone(), name.clone())) else {
                let msg = if *ephemeral {
                    format!("waiting for ephemeral volume controller to create the persistentvolumeclaim {name:?}")
                } else {
                    format!("persistentvolumeclaim {name:?} not found")
                };
                return (Status::unresolvable(msg), None);
            };
            if pvc.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost") {
                let volume = pvc.spec.as_ref().and_then(|s| s.volume_name.clone()).unwrap_or_default();
                return (Status::unresolvable(format!("persistentvolumeclaim {name:?} bound to non-existent persistentvolume {volume:?}")), None);
            }
            if pvc.metadata.deletion_timestamp.is_some() {
                return (Status::unresolvable(format!("persistentvolumeclaim {name:?} is being deleted")), None);
            }
            if *ephemeral {
                if let Err(e) = volume_is_for_pod(pod, pvc) {
                    return (Status::unresolvable(e), None);
                }
            }
            pvcs.push(pvc.clone());
        }
        // GetPodVolumeClaims.
        let mut data = StateData::default();
        let mut immediate = false;
        for pvc in pvcs {
            if is_claim_fully_bound(&pvc) {
                data.bound_claims.push(pvc);
                continue;
            }
            let class_name = claim_class(&pvc);
            let class = view.listers.storage_classes.get(&class_name).cloned();
            let delay = match is_delay_binding_mode(&pvc, class.as_deref()) {
                Ok(d) => d,
                Err(e) => return (Status::new(Code::Error, e), None),
            };
            if delay && pvc.spec.as_ref().and_then(|s| s.volume_name.as_deref()).unwrap_or("").is_empty() {
                data.classes.insert(class_name, class);
                data.delay_claims.push(pvc);
            } else {
                immediate = true;
            }
        }
        if immediate {
            return (Status::unresolvable(ERR_UNBOUND_IMMEDIATE), None);
        }
        for pvc in &data.delay_claims {
            let class = claim_class(pvc);
            let volumes = view.listers.pvs.values().filter(|pv| kubesim_api::storage::volume_class(pv) == class).cloned().collect();
            data.class_volumes.insert(class, volumes);
        }
        // GetEligibleNodes: local volumes of bound claims pin the pod to their nodes.
        let mut eligible: Option<BTreeSet<String>> = None;
        for pvc in &data.bound_claims {
            let name = pvc.spec.as_ref().and_then(|s| s.volume_name.clone()).unwrap_or_default();
            let pv = view.listers.pvs.get(&name).cloned();
            if let Some(pv) = &pv {
                let nodes: BTreeSet<String> = local_volume_node_names(pv).into_iter().collect();
                if !nodes.is_empty() {
                    eligible = Some(match eligible {
                        None => nodes,
                        Some(e) => e.intersection(&nodes).cloned().collect(),
                    });
                }
            }
            data.bound_volumes.insert(name, pv);
        }
        state.write(KEY, data);
        (Status::success(), eligible)
    }
    fn filter(&self, state: &CycleState, _pod: &PodInfo, node: &NodeInfo) -> Status {
        let Some(data) = state.read::<StateData>(KEY) else { return Status::success() };
        match data.find_pod_volumes(&node.name, node.labels()) {
            Err(e) => Status::new(Code::Error, e),
            Ok((_, reasons)) if !reasons.is_empty() => {
                Status { code: Code::UnschedulableAndUnresolvable, reasons: reasons.iter().map(|r| r.to_string()).collect(), plugin: "" }
            }
            Ok(_) => Status::success(),
        }
    }
    fn reserve(&self, state: &mut CycleState, pod: &PodInfo, node: &str, view: &ClusterView) -> Status {
        let labels = view.cache.node(node).and_then(|n| n.labels().cloned());
        let Some(data) = state.read_mut::<StateData>(KEY) else { return Status::success() };
        if data.bound_claims.is_empty() && data.delay_claims.is_empty() {
            data.all_bound = true;
            return Status::success();
        }
        // AssumePodVolumes.
        if pod_volumes_bound(pod, view) {
            data.all_bound = true;
            return Status::success();
        }
        match data.find_pod_volumes(node, labels.as_ref()) {
            Err(e) => Status::new(Code::Error, e),
            Ok((mut volumes, _)) => {
                volumes.static_bindings = volumes.static_bindings.into_iter().map(|(pv, claim)| (bind_volume_to_claim(&pv, &claim).0, claim)).collect();
                data.chosen = Some(volumes);
                Status::success()
            }
        }
    }
    fn unreserve(&self, state: &mut CycleState, _pod: &PodInfo, _node: &str) {
        if let Some(data) = state.read_mut::<StateData>(KEY) {
            data.chosen = None;
        }
    }
    fn pre_bind(&self, state: &mut CycleState, pod: &PodInfo, node: &str, view: &ClusterView, ctx: &mut Ctx) -> Status {
        let Some(data) = state.read_mut::<StateData>(KEY) else { return Status::success() };
        if data.all_bound {
            return Status::success();
        }
        let Some(volumes) = data.chosen.as_mut() else { return Status::new(Code::Error, format!("no pod volumes found for node {node:?}")) };
        if !data.api_done {
            // bindAPIUpdate: pre-bind the static volumes, then ask for provisioning.
            for (pv, _) in volumes.static_bindings.iter_mut() {
                let object = pv_object(pv);
                match ctx.update(object) {
                    Ok(updated) => {
                        if let Some(v) = updated.decode::<PersistentVolume>() {
                            *pv = v;
                        }
                    }
                    Err(e) => return Status::new(Code::Error, e.message),
                }
            }
            for claim in volumes.dynamic_provisions.iter_mut() {
                match ctx.update(pvc_object(claim)) {
                    Ok(updated) => {
                        if let Some(c) = updated.decode::<PersistentVolumeClaim>() {
                            *claim = c;
                        }
                    }
                    Err(e) => return Status::new(Code::Error, e.message),
                }
            }
            data.api_done = true;
            return Status::new(Code::Wait, "waiting for volumes to be bound");
        }
        match check_bindings(volumes, pod, node, view) {
            Ok(true) => Status::success(),
            Ok(false) => Status::new(Code::Wait, "waiting for volumes to be bound"),
            Err(e) => Status::new(Code::Error, format!("binding volumes: {e}")),
        }
    }
}

fn pv_object(pv: &PersistentVolume) -> kubesim_api::Object {
    let info = kubesim_api::kind_info("v1", "PersistentVolume").expect("served");
    kubesim_api::Object::from_json(info, serde_json::to_value(pv).expect("serializes")).expect("round-trips")
}

fn pvc_object(pvc: &PersistentVolumeClaim) -> kubesim_api::Object {
    let info = kubesim_api::kind_info("v1", "PersistentVolumeClaim").expect("served");
    kubesim_api::Object::from_json(info, serde_json::to_value(pvc).expect("serializes")).expect("round-trips")
}

// Mirrors pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go TestVolumeBinding:
// the PreFilter statuses and eligible nodes and the Filter reasons of its rows (scores are not
// modelled: StorageCapacityScoring is off by default).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::framework::{ClusterView, Listers};
    use k8s_openapi::api::core::v1::{
        Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PersistentVolumeClaimSpec, PersistentVolumeClaimStatus,
        PersistentVolumeClaimVolumeSource, PersistentVolumeSpec, PersistentVolumeStatus, Pod, PodSpec, Volume, VolumeNodeAffinity, VolumeResourceRequirements,
    };
    use k8s_openapi::api::storage::v1::StorageClass;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kubesim_api::Object;

    const WAIT: &str = "wait-sc";
    const WAIT_HDD: &str = "wait-hdd-sc";
    const IMMEDIATE: &str = "immediate-sc";

    fn class(name: &str, mode: &str) -> StorageClass {
        StorageClass { metadata: ObjectMeta { name: Some(name.into()), ..Default::default() }, volume_binding_mode: Some(mode.into()), ..Default::default() }
    }
    /// makeNode: labelled with its hostname.
    fn node(name: &str, extra: &[(&str, &str)]) -> Node {
        let mut labels: BTreeMap<String, String> = [("kubernetes.io/hostname".to_string(), name.to_string())].into();
        labels.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Node { metadata: ObjectMeta { name: Some(name.into()), labels: Some(labels), ..Default::default() }, ..Default::default() }
    }
    /// makePV(name, class) with a phase, a capacity and node affinity `key In [values]`.
    fn pv(name: &str, class: &str, phase: &str, capacity: Option<&str>, affinity: &[(&str, &str)]) -> PersistentVolume {
        PersistentVolume {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            spec: Some(PersistentVolumeSpec {
                storage_class_name: Some(class.into()),
                capacity: capacity.map(|c| [("storage".to_string(), Quantity(c.into()))].into()),
                node_affinity: (!affinity.is_empty()).then(|| VolumeNodeAffinity {
                    required: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: Some(
                                affinity
                                    .iter()
                                    .map(|(k, v)| NodeSelectorRequirement { key: k.to_string(), operator: "In".into(), values: Some(vec![v.to_string()]) })
                                    .collect(),
                            ),
                            match_fields: None,
                        }],
                    }),
                }),
                ..Default::default()
            }),
            status: Some(PersistentVolumeStatus { phase: Some(phase.into()), ..Default::default() }),
        }
    }
    /// makePVC(name, class), optionally withBoundPV (volumeName + bind-completed) and a request.
    fn pvc(name: &str, class: &str, bound_to: Option<&str>, request: Option<&str>, phase: Option<&str>) -> PersistentVolumeClaim {
        PersistentVolumeClaim {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                annotations: bound_to.map(|_| [(kubesim_api::storage::ANN_BIND_COMPLETED.to_string(), "true".to_string())].into()),
                ..Default::default()
            },
            spec: Some(PersistentVolumeClaimSpec {
                storage_class_name: Some(class.into()),
                volume_name: bound_to.map(String::from),
                resources: request.map(|r| VolumeResourceRequirements { requests: Some([("storage".to_string(), Quantity(r.into()))].into()), limits: None }),
                ..Default::default()
            }),
            status: phase.map(|p| PersistentVolumeClaimStatus { phase: Some(p.into()), ..Default::default() }),
        }
    }
    /// makePod("pod-a") with PVC volumes.
    fn pod(claims: &[&str]) -> Arc<PodInfo> {
        let volumes = claims
            .iter()
            .map(|c| Volume {
                name: c.to_string(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource { claim_name: c.to_string(), read_only: None }),
                ..Default::default()
            })
            .collect();
        let p = Pod {
            metadata: ObjectMeta { name: Some("pod-a".into()), namespace: Some("default".into()), ..Default::default() },
            spec: Some(PodSpec { volumes: Some(volumes), ..Default::default() }),
            status: None,
        };
        Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(p)))))
    }

    struct Row {
        name: &'static str,
        pod: Arc<PodInfo>,
        nodes: Vec<Node>,
        pvcs: Vec<PersistentVolumeClaim>,
        pvs: Vec<PersistentVolume>,
        /// PreFilter's code and reasons.
        pre_filter: (Code, Vec<&'static str>),
        /// PreFilterResult node names (None: all nodes).
        eligible: Option<Vec<&'static str>>,
        /// Filter per node (only when PreFilter succeeded): (code, reasons).
        filter: Vec<(Code, Vec<&'static str>)>,
    }

    fn ok() -> (Code, Vec<&'static str>) {
        (Code::Success, vec![])
    }
    fn rejected(reasons: &[&'static str]) -> (Code, Vec<&'static str>) {
        (Code::UnschedulableAndUnresolvable, reasons.to_vec())
    }

    #[test]
    fn test_volume_binding_filter_reasons() {
        let hostname = "kubernetes.io/hostname";
        let rows = vec![
            Row {
                name: "pod has not pvcs",
                pod: pod(&[]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![],
                pvs: vec![],
                pre_filter: (Code::Skip, vec![]),
                eligible: None,
                filter: vec![],
            },
            Row {
                name: "all bound",
                pod: pod(&["pvc-a"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![pvc("pvc-a", WAIT, Some("pv-a"), None, None)],
                pvs: vec![pv("pv-a", WAIT, "Available", None, &[])],
                pre_filter: ok(),
                eligible: None,
                filter: vec![ok()],
            },
            Row {
                name: "all bound with local volumes",
                pod: pod(&["pvc-a", "pvc-b"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![pvc("pvc-a", WAIT, Some("pv-a"), None, None), pvc("pvc-b", WAIT, Some("pv-b"), None, None)],
                pvs: vec![pv("pv-a", WAIT, "Bound", None, &[(hostname, "node-a")]), pv("pv-b", WAIT, "Bound", None, &[(hostname, "node-a")])],
                pre_filter: ok(),
                eligible: Some(vec!["node-a"]),
                filter: vec![ok()],
            },
            Row {
                name: "PVC does not exist",
                pod: pod(&["pvc-a"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![],
                pvs: vec![],
                pre_filter: rejected(&["persistentvolumeclaim \"pvc-a\" not found"]),
                eligible: None,
                filter: vec![],
            },
            Row {
                name: "Part of PVCs do not exist",
                pod: pod(&["pvc-a", "pvc-b"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![pvc("pvc-a", WAIT, Some("pv-a"), None, None)],
                pvs: vec![],
                pre_filter: rejected(&["persistentvolumeclaim \"pvc-b\" not found"]),
                eligible: None,
                filter: vec![],
            },
            Row {
                name: "immediate claims not bound",
                pod: pod(&["pvc-a"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![pvc("pvc-a", IMMEDIATE, None, None, None)],
                pvs: vec![],
                pre_filter: rejected(&[ERR_UNBOUND_IMMEDIATE]),
                eligible: None,
                filter: vec![],
            },
            Row {
                name: "unbound claims no matches",
                pod: pod(&["pvc-a"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![pvc("pvc-a", WAIT, None, None, None)],
                pvs: vec![],
                pre_filter: ok(),
                eligible: None,
                filter: vec![rejected(&[ERR_REASON_BIND_CONFLICT])],
            },
            Row {
                name: "bound and unbound unsatisfied",
                pod: pod(&["pvc-a", "pvc-b"]),
                nodes: vec![node("node-a", &[("foo", "barbar")])],
                pvcs: vec![pvc("pvc-a", WAIT, Some("pv-a"), None, None), pvc("pvc-b", WAIT, None, None, None)],
                pvs: vec![pv("pv-a", WAIT, "Available", None, &[("foo", "bar")])],
                pre_filter: ok(),
                eligible: None,
                filter: vec![rejected(&[ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT])],
            },
            Row {
                name: "pvc not found",
                pod: pod(&["pvc-a"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![],
                pvs: vec![],
                pre_filter: rejected(&["persistentvolumeclaim \"pvc-a\" not found"]),
                eligible: None,
                filter: vec![],
            },
            Row {
                name: "pv not found",
                pod: pod(&["pvc-a"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![pvc("pvc-a", WAIT, Some("pv-a"), None, None)],
                pvs: vec![],
                pre_filter: ok(),
                eligible: None,
                filter: vec![rejected(&[ERR_REASON_PV_NOT_EXIST])],
            },
            Row {
                name: "pv not found claim lost",
                pod: pod(&["pvc-a"]),
                nodes: vec![node("node-a", &[])],
                pvcs: vec![pvc("pvc-a", WAIT, Some("pv-a"), None, Some("Lost"))],
                pvs: vec![],
                pre_filter: rejected(&["persistentvolumeclaim \"pvc-a\" bound to non-existent persistentvolume \"pv-a\""]),
                eligible: None,
                filter: vec![],
            },
            Row {
                name: "local volumes with close capacity are preferred",
                pod: pod(&["pvc-a"]),
                nodes: vec![node("node-a", &[]), node("node-b", &[]), node("node-c", &[])],
                pvcs: vec![pvc("pvc-a", WAIT, None, Some("50Gi"), None)],
                pvs: vec![
                    pv("pv-a-0", WAIT, "Available", Some("200Gi"), &[(hostname, "node-a")]),
                    pv("pv-a-1", WAIT, "Available", Some("200Gi"), &[(hostname, "node-a")]),
                    pv("pv-b-0", WAIT, "Available", Some("100Gi"), &[(hostname, "node-b")]),
                    pv("pv-b-1", WAIT, "Available", Some("100Gi"), &[(hostname, "node-b")]),
                ],
                pre_filter: ok(),
                eligible: None,
                filter: vec![ok(), ok(), rejected(&[ERR_REASON_BIND_CONFLICT])],
            },
            Row {
                name: "local volumes with close capacity are preferred (multiple pvcs)",
                pod: pod(&["pvc-0", "pvc-1"]),
                nodes: vec![node("node-a", &[]), node("node-b", &[]), node("node-c", &[])],
                pvcs: vec![pvc("pvc-0", WAIT, None, Some("50Gi"), None), pvc("pvc-1", WAIT_HDD, None, Some("100Gi"), None)],
                pvs: vec![
                    pv("pv-a-0", WAIT, "Available", Some("200Gi"), &[(hostname, "node-a")]),
                    pv("pv-a-1", WAIT, "Available", Some("200Gi"), &[(hostname, "node-a")]),
                    pv("pv-a-2", WAIT_HDD, "Available", Some("200Gi"), &[(hostname, "node-a")]),
                    pv("pv-a-3", WAIT_HDD, "Available", Some("200Gi"), &[(hostname, "node-a")]),
                    pv("pv-b-0", WAIT, "Available", Some("100Gi"), &[(hostname, "node-b")]),
                    pv("pv-b-1", WAIT, "Available", Some("100Gi"), &[(hostname, "node-b")]),
                    pv("pv-b-2", WAIT_HDD, "Available", Some("100Gi"), &[(hostname, "node-b")]),
                    pv("pv-b-3", WAIT_HDD, "Available", Some("100Gi"), &[(hostname, "node-b")]),
                ],
                pre_filter: ok(),
                eligible: None,
                filter: vec![ok(), ok(), rejected(&[ERR_REASON_BIND_CONFLICT])],
            },
        ];
        let mut failures = Vec::new();
        for row in rows {
            let mut cache = Cache::default();
            for n in &row.nodes {
                cache.upsert_node(Arc::new(Object::Node(Box::new(n.clone()))));
            }
            let listers = Listers {
                pvcs: row.pvcs.iter().map(|c| (("default".to_string(), c.metadata.name.clone().unwrap()), Arc::new(c.clone()))).collect(),
                pvs: row.pvs.iter().map(|v| (v.metadata.name.clone().unwrap(), Arc::new(v.clone()))).collect(),
                storage_classes: [class(WAIT, "WaitForFirstConsumer"), class(WAIT_HDD, "WaitForFirstConsumer"), class(IMMEDIATE, "Immediate")]
                    .into_iter()
                    .map(|c| (c.metadata.name.clone().unwrap(), Arc::new(c)))
                    .collect(),
                ..Default::default()
            };
            let view = ClusterView { cache: &cache, listers: &listers };
            let mut state = CycleState::default();
            let (pre, eligible) = VolumeBinding.pre_filter(&mut state, &row.pod, &view);
            let got_pre = (pre.code, pre.reasons.clone());
            let want_pre = (row.pre_filter.0, row.pre_filter.1.iter().map(|r| r.to_string()).collect::<Vec<_>>());
            if got_pre != want_pre {
                failures.push(format!("{}: PreFilter {got_pre:?}, want {want_pre:?}", row.name));
                continue;
            }
            let want_eligible = row.eligible.map(|e| e.into_iter().map(String::from).collect::<BTreeSet<_>>());
            if eligible != want_eligible {
                failures.push(format!("{}: PreFilterResult {eligible:?}, want {want_eligible:?}", row.name));
            }
            if !pre.is_success() {
                continue;
            }
            let got: Vec<(Code, Vec<String>)> = cache.nodes().iter().map(|n| VolumeBinding.filter(&state, &row.pod, n)).map(|s| (s.code, s.reasons)).collect();
            let want: Vec<(Code, Vec<String>)> = row.filter.iter().map(|(c, r)| (*c, r.iter().map(|r| r.to_string()).collect())).collect();
            if got != want {
                failures.push(format!("{}: Filter {got:?}, want {want:?}", row.name));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    // The selected-node fast path of FindPodVolumes: a claim already provisioning for another
    // node is a bind conflict here.
    #[test]
    fn a_claim_selected_for_another_node_is_a_bind_conflict() {
        let mut claim = pvc("pvc-a", WAIT, None, None, None);
        claim.metadata.annotations = Some([(ANN_SELECTED_NODE.to_string(), "node-b".to_string())].into());
        let mut cache = Cache::default();
        for n in ["node-a", "node-b"] {
            cache.upsert_node(Arc::new(Object::Node(Box::new(node(n, &[])))));
        }
        let mut provisioned = class(WAIT, "WaitForFirstConsumer");
        provisioned.provisioner = "rancher.io/local-path".into();
        let listers = Listers {
            pvcs: [(("default".to_string(), "pvc-a".to_string()), Arc::new(claim))].into(),
            storage_classes: [(WAIT.to_string(), Arc::new(provisioned))].into(),
            ..Default::default()
        };
        let view = ClusterView { cache: &cache, listers: &listers };
        let statuses = crate::framework::filter_all_nodes(&VolumeBinding, &pod(&["pvc-a"]), &view);
        assert_eq!(statuses[0].reasons, vec![ERR_REASON_BIND_CONFLICT.to_string()]);
        assert!(statuses[1].is_success());
    }
}
