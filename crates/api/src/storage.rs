//! Persistent-volume helpers shared by the scheduler's VolumeBinding plugin and the PV
//! controller (k8s.io/component-helpers/storage/volume, release-1.34): annotation and finalizer
//! names, `FindMatchingVolume`, `CheckNodeAffinity`, `IsVolumeBoundToClaim`, the class of a
//! claim or volume, and `IsDelayBindingMode`. One implementation each.

use crate::quantity::parse_value;
use crate::selector::Selector;
use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use std::collections::BTreeMap;

/// `pv.kubernetes.io/bind-completed` (PVC): the PV controller finished binding.
pub const ANN_BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// `pv.kubernetes.io/bound-by-controller` (PV and PVC): the controller, not the user, bound it.
pub const ANN_BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
/// `volume.kubernetes.io/selected-node` (PVC): the node the scheduler chose for provisioning.
pub const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// `volume.kubernetes.io/storage-provisioner` (PVC): the provisioner expected to create the PV.
pub const ANN_STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
/// The deprecated beta form of [`ANN_STORAGE_PROVISIONER`], still written.
pub const ANN_BETA_STORAGE_PROVISIONER: &str = "volume.beta.kubernetes.io/storage-provisioner";
/// `pv.kubernetes.io/provisioned-by` (PV): the provisioner that created it.
pub const ANN_DYNAMICALLY_PROVISIONED: &str = "pv.kubernetes.io/provisioned-by";
/// `volume.alpha.kubernetes.io/pre-resize-capacity` (pkg/volume/util: a volume that needs a
/// file-system resize records the claim's capacity before it here).
pub const ANN_PRE_RESIZE_CAPACITY: &str = "volume.alpha.kubernetes.io/pre-resize-capacity";
/// `pv.kubernetes.io/migrated-to` (PV/PVC): CSI migration; the PV controller stands down.
pub const ANN_MIGRATED_TO: &str = "pv.kubernetes.io/migrated-to";
/// `storageclass.beta.kubernetes.io/is-default-class`: the beta default-class annotation.
pub const BETA_DEFAULT_CLASS_ANNOTATION: &str = "storageclass.beta.kubernetes.io/is-default-class";
/// `volume.beta.kubernetes.io/storage-class`: the deprecated class annotation, read first.
pub const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
/// `storageclass.kubernetes.io/is-default-class`.
pub const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
/// A StorageClass provisioner meaning "no dynamic provisioning".
pub const NOT_SUPPORTED_PROVISIONER: &str = "kubernetes.io/no-provisioner";
/// The StorageObjectInUseProtection finalizer on claims.
pub const PVC_PROTECTION_FINALIZER: &str = "kubernetes.io/pvc-protection";
/// The StorageObjectInUseProtection finalizer on volumes.
pub const PV_PROTECTION_FINALIZER: &str = "kubernetes.io/pv-protection";

/// `allocatedResourceStatuses[storage]`: the external-resizer is expanding the volume.
pub const CONTROLLER_RESIZE_IN_PROGRESS: &str = "ControllerResizeInProgress";
/// `allocatedResourceStatuses[storage]`: the volume grew, the node must grow its filesystem.
pub const NODE_RESIZE_PENDING: &str = "NodeResizePending";
/// `allocatedResourceStatuses[storage]`: the kubelet is growing the filesystem.
pub const NODE_RESIZE_IN_PROGRESS: &str = "NodeResizeInProgress";
/// The PVC condition of an expansion the external-resizer is making.
pub const CONDITION_RESIZING: &str = "Resizing";
/// The PVC condition of an expansion that waits for the node.
pub const CONDITION_FS_RESIZE_PENDING: &str = "FileSystemResizePending";
/// The message of [`CONDITION_FS_RESIZE_PENDING`] (external-resizer markForPendingNodeExpansion).
pub const FS_RESIZE_PENDING_MESSAGE: &str = "Waiting for user to (re-)start a pod to finish file system resize of volume on node.";

/// `knownResizeConditions` (pkg/volume/util/resize_util.go).
const RESIZE_CONDITIONS: [&str; 4] = [CONDITION_RESIZING, CONDITION_FS_RESIZE_PENDING, "ControllerResizeError", "NodeResizeError"];

/// `MergeResizeConditionOnPVC` (keepOldResizeConditions false): conditions that are not about
/// resizing stay; a resize condition stays only when `new` has its type (the old one kept if
/// its status is the same, so its transition time stays); `new`'s other conditions follow.
pub fn merge_resize_conditions(
    old: &[k8s_openapi::api::core::v1::PersistentVolumeClaimCondition],
    new: Vec<k8s_openapi::api::core::v1::PersistentVolumeClaimCondition>,
) -> Vec<k8s_openapi::api::core::v1::PersistentVolumeClaimCondition> {
    let mut processed = vec![false; new.len()];
    let mut result = Vec::new();
    for condition in old {
        if !RESIZE_CONDITIONS.contains(&condition.type_.as_str()) {
            result.push(condition.clone());
            continue;
        }
        if let Some(i) = new.iter().position(|c| c.type_ == condition.type_) {
            result.push(if new[i].status != condition.status { new[i].clone() } else { condition.clone() });
            processed[i] = true;
        }
    }
    result.extend(new.into_iter().zip(processed).filter(|(_, done)| !done).map(|(c, _)| c));
    result
}

/// `allocatedResourceStatuses[storage]` of a claim ("" when unset).
pub fn claim_resize_status(claim: &PersistentVolumeClaim) -> String {
    claim.status.as_ref().and_then(|s| s.allocated_resource_statuses.as_ref()).and_then(|m| m.get("storage")).cloned().unwrap_or_default()
}

/// `status.capacity.storage` of a claim in bytes.
pub fn claim_capacity(claim: &PersistentVolumeClaim) -> i128 {
    storage_of(claim.status.as_ref().and_then(|s| s.capacity.as_ref()))
}

/// The `storage` quantity of a resource list, in bytes (0 when absent or unparsable).
pub fn storage_of(list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>) -> i128 {
    list.and_then(|m| m.get("storage")).and_then(|q| parse_value(&q.0).ok()).unwrap_or(0)
}

/// A claim's requested storage.
pub fn claim_request(claim: &PersistentVolumeClaim) -> i128 {
    storage_of(claim.spec.as_ref().and_then(|s| s.resources.as_ref()).and_then(|r| r.requests.as_ref()))
}

/// A volume's capacity.
pub fn volume_capacity(pv: &PersistentVolume) -> i128 {
    storage_of(pv.spec.as_ref().and_then(|s| s.capacity.as_ref()))
}

/// `GetPersistentVolumeClaimClass`: the beta annotation, else `spec.storageClassName`, else "".
pub fn claim_class(claim: &PersistentVolumeClaim) -> String {
    if let Some(class) = claim.metadata.annotations.as_ref().and_then(|a| a.get(BETA_STORAGE_CLASS_ANNOTATION)) {
        return class.clone();
    }
    claim.spec.as_ref().and_then(|s| s.storage_class_name.clone()).unwrap_or_default()
}

/// `GetPersistentVolumeClass`: the beta annotation, else `spec.storageClassName`, else "".
pub fn volume_class(pv: &PersistentVolume) -> String {
    if let Some(class) = pv.metadata.annotations.as_ref().and_then(|a| a.get(BETA_STORAGE_CLASS_ANNOTATION)) {
        return class.clone();
    }
    pv.spec.as_ref().and_then(|s| s.storage_class_name.clone()).unwrap_or_default()
}

/// `IsVolumeBoundToClaim`: the claimRef names the claim (and its uid, if the ref has one).
pub fn is_volume_bound_to_claim(pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
    let Some(r) = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else { return false };
    if r.name.as_deref().unwrap_or("") != claim.metadata.name.as_deref().unwrap_or("")
        || r.namespace.as_deref().unwrap_or("") != claim.metadata.namespace.as_deref().unwrap_or("")
    {
        return false;
    }
    let uid = r.uid.as_deref().unwrap_or("");
    uid.is_empty() || Some(uid) == claim.metadata.uid.as_deref()
}

/// `CheckAccessModes`: the volume offers every mode the claim asks for.
pub fn check_access_modes(claim: &PersistentVolumeClaim, pv: &PersistentVolume) -> bool {
    let pv_modes = pv.spec.as_ref().and_then(|s| s.access_modes.as_deref()).unwrap_or(&[]);
    claim.spec.as_ref().and_then(|s| s.access_modes.as_deref()).unwrap_or(&[]).iter().all(|m| pv_modes.contains(m))
}

/// `CheckVolumeModeMismatches` (nil is Filesystem).
pub fn volume_mode_mismatches(claim: &PersistentVolumeClaim, pv: &PersistentVolume) -> bool {
    let claim_mode = claim.spec.as_ref().and_then(|s| s.volume_mode.as_deref()).unwrap_or("Filesystem");
    let pv_mode = pv.spec.as_ref().and_then(|s| s.volume_mode.as_deref()).unwrap_or("Filesystem");
    claim_mode != pv_mode
}

fn requirement_matches(req: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = req.values.as_deref().unwrap_or(&[]);
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (value.and_then(|v| v.parse::<i64>().ok()), values.first().and_then(|b| b.parse::<i64>().ok())) else {
                return false;
            };
            if values.len() != 1 {
                return false;
            }
            if req.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

/// Whether a node selector term matches a node (component-helpers `MatchNodeSelectorTerms` for
/// one term: expressions and fields ANDed; an empty term matches nothing; the only field is
/// `metadata.name`).
pub fn node_selector_term_matches(term: &NodeSelectorTerm, name: &str, labels: Option<&BTreeMap<String, String>>) -> bool {
    let exprs = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields = term.match_fields.as_deref().unwrap_or(&[]);
    if exprs.is_empty() && fields.is_empty() {
        return false;
    }
    exprs.iter().all(|r| requirement_matches(r, labels.and_then(|l| l.get(&r.key)).map(String::as_str)))
        && fields.iter().all(|r| r.key == "metadata.name" && requirement_matches(r, Some(name)))
}

/// `CheckNodeAffinity`: the volume's required node affinity matches a node with these labels
/// (the node is given by its labels only, as upstream does, so `matchFields` never match).
pub fn check_node_affinity(pv: &PersistentVolume, node_labels: Option<&BTreeMap<String, String>>) -> Result<(), String> {
    let Some(required) = pv.spec.as_ref().and_then(|s| s.node_affinity.as_ref()).and_then(|a| a.required.as_ref()) else { return Ok(()) };
    if required.node_selector_terms.iter().any(|t| node_selector_term_matches(t, "", node_labels)) {
        Ok(())
    } else {
        Err("no matching NodeSelectorTerms".into())
    }
}

/// `GetLocalPersistentVolumeNodeNames`: the node names a volume's required affinity pins it to
/// through `kubernetes.io/hostname In [...]` (a term's expressions intersected, terms united).
pub fn local_volume_node_names(pv: &PersistentVolume) -> Vec<String> {
    let Some(required) = pv.spec.as_ref().and_then(|s| s.node_affinity.as_ref()).and_then(|a| a.required.as_ref()) else { return Vec::new() };
    let mut result: std::collections::BTreeSet<String> = Default::default();
    for term in &required.node_selector_terms {
        let mut nodes: Option<std::collections::BTreeSet<String>> = None;
        for expr in term.match_expressions.iter().flatten() {
            if expr.key == "kubernetes.io/hostname" && expr.operator == "In" {
                let values: std::collections::BTreeSet<String> = expr.values.iter().flatten().cloned().collect();
                nodes = Some(match nodes {
                    None => values,
                    Some(n) => n.intersection(&values).cloned().collect(),
                });
            }
        }
        result.extend(nodes.unwrap_or_default());
    }
    result.into_iter().collect()
}

/// `FindMatchingVolume` (release-1.34, VolumeAttributesClass enabled): the volume pre-bound to
/// the claim, else the smallest Available one of the claim's class that satisfies it. `node`
/// (its labels) is the scheduler path: node affinity and access modes are checked there; the PV
/// controller passes None and, for delayed binding, leaves unbound volumes to the scheduler.
pub fn find_matching_volume<'a>(
    claim: &PersistentVolumeClaim,
    volumes: &[&'a PersistentVolume],
    node: Option<Option<&BTreeMap<String, String>>>,
    excluded: &[String],
    delay_binding: bool,
) -> Option<&'a PersistentVolume> {
    let requested = claim_request(claim);
    let requested_class = claim_class(claim);
    let spec = claim.spec.as_ref();
    let selector = spec.and_then(|s| s.selector.as_ref()).map(Selector::from_label_selector);
    let claim_vac = spec.and_then(|s| s.volume_attributes_class_name.as_deref()).unwrap_or("");
    let mut smallest: Option<(&'a PersistentVolume, i128)> = None;
    for &pv in volumes {
        let name = pv.metadata.name.as_deref().unwrap_or("");
        if excluded.iter().any(|e| e == name) {
            continue;
        }
        let pv_spec = pv.spec.as_ref();
        if pv_spec.and_then(|s| s.claim_ref.as_ref()).is_some() && !is_volume_bound_to_claim(pv, claim) {
            continue;
        }
        let capacity = volume_capacity(pv);
        if capacity < requested {
            continue;
        }
        if volume_mode_mismatches(claim, pv) {
            continue;
        }
        if pv_spec.and_then(|s| s.volume_attributes_class_name.as_deref()).unwrap_or("") != claim_vac {
            continue;
        }
        if pv.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let node_affinity_valid = node.is_none_or(|labels| check_node_affinity(pv, labels).is_ok());
        if is_volume_bound_to_claim(pv, claim) {
            // A pre-bound volume that does not fit the node means no match at all.
            return node_affinity_valid.then_some(pv);
        }
        if node.is_none() && delay_binding {
            continue;
        }
        if pv.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Available") {
            continue;
        }
        if selector.as_ref().is_some_and(|s| !s.matches(pv.metadata.labels.as_ref())) {
            continue;
        }
        if volume_class(pv) != requested_class || !node_affinity_valid {
            continue;
        }
        if node.is_some() && !check_access_modes(claim, pv) {
            continue;
        }
        if smallest.is_none_or(|(_, q)| q > capacity) {
            smallest = Some((pv, capacity));
        }
    }
    smallest.map(|(pv, _)| pv)
}

/// `reference.GetReference` of a claim: the ObjectReference a volume's claimRef holds.
pub fn claim_reference(claim: &PersistentVolumeClaim) -> k8s_openapi::api::core::v1::ObjectReference {
    k8s_openapi::api::core::v1::ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("PersistentVolumeClaim".into()),
        namespace: claim.metadata.namespace.clone(),
        name: claim.metadata.name.clone(),
        uid: claim.metadata.uid.clone(),
        resource_version: claim.metadata.resource_version.clone(),
        field_path: None,
    }
}

/// `GetBindVolumeToClaim`: the volume with its claimRef pointing at the claim and, unless the
/// user pre-bound it, `bound-by-controller`; and whether anything changed.
pub fn bind_volume_to_claim(pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> (PersistentVolume, bool) {
    let should_set_bound_by_controller = !is_volume_bound_to_claim(pv, claim);
    let mut clone = pv.clone();
    let mut dirty = false;
    let current = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
    let same = current.is_some_and(|r| {
        r.name == claim.metadata.name
            && r.namespace == claim.metadata.namespace
            && r.uid.as_deref().unwrap_or("") == claim.metadata.uid.as_deref().unwrap_or("")
    });
    if !same {
        clone.spec.get_or_insert_with(Default::default).claim_ref = Some(claim_reference(claim));
        dirty = true;
    }
    if should_set_bound_by_controller && clone.metadata.annotations.as_ref().is_none_or(|a| !a.contains_key(ANN_BOUND_BY_CONTROLLER)) {
        clone.metadata.annotations.get_or_insert_with(BTreeMap::new).insert(ANN_BOUND_BY_CONTROLLER.into(), "yes".into());
        dirty = true;
    }
    (clone, dirty)
}

/// Whether a claim is fully bound (`spec.volumeName` and `bind-completed`).
pub fn is_claim_fully_bound(claim: &PersistentVolumeClaim) -> bool {
    claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()).is_some_and(|v| !v.is_empty())
        && claim.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(ANN_BIND_COMPLETED))
}

/// `IsDelayBindingMode`: whether the claim's class (if it exists) waits for the first consumer;
/// a class without a binding mode is an error.
pub fn is_delay_binding_mode(claim: &PersistentVolumeClaim, class: Option<&StorageClass>) -> Result<bool, String> {
    let name = claim_class(claim);
    if name.is_empty() {
        return Ok(false);
    }
    let Some(class) = class else { return Ok(false) };
    match class.volume_binding_mode.as_deref() {
        None => Err(format!("VolumeBindingMode not set for StorageClass {name:?}")),
        Some(mode) => Ok(mode == "WaitForFirstConsumer"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn resize_conditions_merge_as_merge_resize_condition_on_pvc() {
        use k8s_openapi::api::core::v1::PersistentVolumeClaimCondition as C;
        let c = |t: &str, s: &str, m: &str| C { type_: t.into(), status: s.into(), message: Some(m.into()), ..Default::default() };
        let old = vec![c("Other", "True", "kept"), c("Resizing", "True", "old")];
        // A resize condition of the same status is kept as it was; others go; new ones follow.
        assert_eq!(super::merge_resize_conditions(&old, vec![c("Resizing", "True", "new")]), vec![c("Other", "True", "kept"), c("Resizing", "True", "old")]);
        assert_eq!(
            super::merge_resize_conditions(&old, vec![c("FileSystemResizePending", "True", "p")]),
            vec![c("Other", "True", "kept"), c("FileSystemResizePending", "True", "p")]
        );
        assert_eq!(super::merge_resize_conditions(&old, Vec::new()), vec![c("Other", "True", "kept")]);
    }

    use super::*;
    use k8s_openapi::api::core::v1::{
        LocalVolumeSource, NodeSelector, ObjectReference, PersistentVolumeClaimSpec, PersistentVolumeSpec, PersistentVolumeStatus, VolumeNodeAffinity,
        VolumeResourceRequirements,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn affinity(key: &str, value: &str) -> Option<VolumeNodeAffinity> {
        Some(VolumeNodeAffinity {
            required: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_expressions: Some(vec![NodeSelectorRequirement { key: key.into(), operator: "In".into(), values: Some(vec![value.into()]) }]),
                    match_fields: None,
                }],
            }),
        })
    }

    fn volume(uid: &str, name: &str, capacity: &str, available: bool, modify: impl FnOnce(&mut PersistentVolume)) -> PersistentVolume {
        let mut pv = PersistentVolume {
            metadata: ObjectMeta { uid: Some(uid.into()), name: Some(name.into()), ..Default::default() },
            spec: Some(PersistentVolumeSpec {
                capacity: Some(BTreeMap::from([("storage".to_string(), Quantity(capacity.into()))])),
                local: Some(LocalVolumeSource::default()),
                access_modes: Some(vec!["ReadWriteOnce".into(), "ReadOnlyMany".into()]),
                volume_mode: Some("Filesystem".into()),
                ..Default::default()
            }),
            status: available.then(|| PersistentVolumeStatus { phase: Some("Available".into()), ..Default::default() }),
        };
        modify(&mut pv);
        pv
    }

    fn claim(name: &str, size: &str, mode: &str) -> PersistentVolumeClaim {
        PersistentVolumeClaim {
            metadata: ObjectMeta { name: Some(name.into()), namespace: Some("myns".into()), ..Default::default() },
            spec: Some(PersistentVolumeClaimSpec {
                access_modes: Some(vec![mode.into()]),
                resources: Some(VolumeResourceRequirements { requests: Some(BTreeMap::from([("storage".to_string(), Quantity(size.into()))])), limits: None }),
                storage_class_name: Some("wait".into()),
                volume_mode: Some("Filesystem".into()),
                ..Default::default()
            }),
            status: None,
        }
    }

    fn set_class(pv: &mut PersistentVolume, class: &str) {
        pv.spec.as_mut().unwrap().storage_class_name = Some(class.into());
    }

    // Mirrors staging/src/k8s.io/component-helpers/storage/volume/pv_helpers_test.go
    // TestFindMatchVolumeWithNode (release-1.34): the expected match is the volume's uid; the
    // excluded volumes are names (affinity-prebound and affinity-pv3 share "affinity003").
    #[test]
    fn find_match_volume_with_node() {
        let volumes = [
            volume("local-small", "local001", "5G", true, |_| {}),
            volume("local-pd-very-large", "local002", "200E", true, |pv| set_class(pv, "large")),
            volume("affinity-pv", "affinity001", "100G", true, |pv| {
                set_class(pv, "wait");
                pv.spec.as_mut().unwrap().node_affinity = affinity("key1", "value1");
            }),
            volume("affinity-pv2", "affinity002", "150G", true, |pv| {
                set_class(pv, "wait");
                pv.spec.as_mut().unwrap().node_affinity = affinity("key1", "value1");
            }),
            volume("affinity-prebound", "affinity003", "100G", true, |pv| {
                set_class(pv, "wait");
                pv.spec.as_mut().unwrap().claim_ref =
                    Some(ObjectReference { name: Some("claim02".into()), namespace: Some("myns".into()), ..Default::default() });
                pv.spec.as_mut().unwrap().node_affinity = affinity("key1", "value1");
            }),
            volume("affinity-pv3", "affinity003", "200G", true, |pv| {
                set_class(pv, "wait");
                pv.spec.as_mut().unwrap().node_affinity = affinity("key1", "value3");
            }),
            volume("affinity-pv4", "affinity004", "200G", false, |pv| {
                set_class(pv, "wait");
                pv.spec.as_mut().unwrap().node_affinity = affinity("key1", "value4");
            }),
        ];
        let refs: Vec<&PersistentVolume> = volumes.iter().collect();
        let node = |v: &str| BTreeMap::from([("key1".to_string(), v.to_string())]);
        // (scenario, claim, access mode, node's key1 label, excluded volumes, expected uid)
        type Row<'a> = (&'a str, &'a str, &'a str, &'a str, &'a [&'a str], &'a str);
        let table: &[Row] = &[
            ("success-match", "claim01", "ReadWriteOnce", "value1", &[], "affinity-pv"),
            ("success-prebound", "claim02", "ReadWriteOnce", "value1", &[], "affinity-prebound"),
            ("success-exclusion", "claim01", "ReadWriteOnce", "value1", &["affinity001"], "affinity-pv2"),
            ("fail-exclusion", "claim01", "ReadWriteOnce", "value1", &["affinity001", "affinity002"], ""),
            ("fail-accessmode", "claim01", "ReadWriteMany", "value1", &[], ""),
            ("fail-nodeaffinity", "claim01", "ReadWriteOnce", "value2", &[], ""),
            ("fail-prebound-node-affinity", "claim02", "ReadWriteOnce", "value3", &[], ""),
            ("fail-nonavaliable", "claim04", "ReadWriteOnce", "value4", &[], ""),
            ("success-bad-and-good-node-affinity", "claim03", "ReadWriteOnce", "value3", &[], "affinity-pv3"),
        ];
        for (scenario, claim_name, mode, value, excluded, expected) in table {
            let labels = node(value);
            let excluded: Vec<String> = excluded.iter().map(|s| s.to_string()).collect();
            let found = find_matching_volume(&claim(claim_name, "100G", mode), &refs, Some(Some(&labels)), &excluded, true);
            assert_eq!(found.and_then(|pv| pv.metadata.uid.as_deref()).unwrap_or(""), *expected, "{scenario}");
        }
        // The VolumeAttributesClass rows (the gate is on in 1.34): every volume in class gold.
        let gold: Vec<PersistentVolume> = volumes
            .iter()
            .cloned()
            .map(|mut pv| {
                pv.spec.as_mut().unwrap().volume_attributes_class_name = Some("gold".into());
                pv
            })
            .collect();
        let gold_refs: Vec<&PersistentVolume> = gold.iter().collect();
        let with_vac = |name: &str, vac: &str| {
            let mut c = claim(name, "100G", "ReadWriteOnce");
            c.spec.as_mut().unwrap().volume_attributes_class_name = Some(vac.into());
            c
        };
        let labels = node("value1");
        for (scenario, c, expected) in [
            ("success-match-with-vac", with_vac("claim01", "gold"), "affinity-pv"),
            ("fail-vac", with_vac("claim01", "silver"), ""),
            ("fail-prebound-vac", with_vac("claim02", "silver"), ""),
        ] {
            let found = find_matching_volume(&c, &gold_refs, Some(Some(&labels)), &[], true);
            assert_eq!(found.and_then(|pv| pv.metadata.uid.as_deref()).unwrap_or(""), expected, "{scenario}");
        }
    }

    // Mirrors pv_helpers_test.go TestDelayBindingMode.
    #[test]
    fn delay_binding_mode() {
        let class = |mode: Option<&str>| StorageClass { volume_binding_mode: mode.map(String::from), ..Default::default() };
        let pvc = |class: Option<&str>| PersistentVolumeClaim {
            spec: Some(PersistentVolumeClaimSpec { storage_class_name: class.map(String::from), ..Default::default() }),
            ..Default::default()
        };
        assert_eq!(is_delay_binding_mode(&pvc(None), None), Ok(false), "nil-class");
        assert_eq!(is_delay_binding_mode(&pvc(Some("not-here")), None), Ok(false), "class-not-found");
        assert!(is_delay_binding_mode(&pvc(Some("no-mode")), Some(&class(None))).is_err(), "no-mode-class");
        assert_eq!(is_delay_binding_mode(&pvc(Some("immediate-mode")), Some(&class(Some("Immediate")))), Ok(false), "immediate-mode-class");
        assert_eq!(is_delay_binding_mode(&pvc(Some("wait-mode")), Some(&class(Some("WaitForFirstConsumer")))), Ok(true), "wait-mode-class");
    }
}
