//! Admission plugins that run on create (mutating, in upstream order: ServiceAccount, Priority,
//! DefaultTolerationSeconds; then the pod registry's PrepareForCreate; DefaultIngressClass for
//! Ingresses), and update validation.

use crate::error::{ApiError, Result};
use crate::server::{random_suffix, Request};
use kubesim_api::k8s_openapi::api::core::v1::{
    ConfigMapProjection, DownwardAPIProjection, DownwardAPIVolumeFile, KeyToPath, ObjectFieldSelector, Pod, PodStatus, ProjectedVolumeSource,
    ServiceAccountTokenProjection, Toleration, Volume, VolumeMount, VolumeProjection,
};
use kubesim_api::object::{KindInfo, Object};
use kubesim_store::Store;

/// Runs the mutating admission chain on a new object.
pub fn admit_create(object: &mut Object, store: &Store, req: &mut Request) -> Result<()> {
    admit_storage_object_in_use_protection(object);
    if let Object::Pod(pod) = object {
        crate::quota::limit_ranger_pod(pod, store)?;
        admit_service_account(pod, req);
        admit_priority(pod, store)?;
        admit_default_toleration_seconds(pod);
        prepare_pod_for_create(pod);
    }
    if let Object::Ingress(ingress) = object {
        admit_default_ingress_class(ingress, store);
    }
    Ok(())
}

/// The annotation that marks the default IngressClass (k8s.io/api networking/v1).
pub const DEFAULT_INGRESS_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";

/// DefaultIngressClass (plugin/pkg/admission/network/defaultingressclass), CREATE only: an
/// Ingress that names no class, neither in `spec.ingressClassName` nor in the legacy
/// `kubernetes.io/ingress.class` annotation, gets the default IngressClass. Since v1.25 several
/// defaults no longer fail the request: getDefaultClass takes the newest (the lower name
/// between equally old ones). Without a default the Ingress is left alone.
fn admit_default_ingress_class(ingress: &mut kubesim_api::k8s_openapi::api::networking::v1::Ingress, store: &Store) {
    if ingress.spec.as_ref().is_some_and(|s| s.ingress_class_name.is_some()) {
        return;
    }
    if ingress.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(kubesim_api::validation::INGRESS_CLASS_ANNOTATION)) {
        return;
    }
    let mut defaults: Vec<(Option<kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>, String)> = store
        .list(("networking.k8s.io", "ingressclasses"), None)
        .filter(|c| c.metadata().annotations.as_ref().and_then(|a| a.get(DEFAULT_INGRESS_CLASS_ANNOTATION)).is_some_and(|v| v == "true"))
        .map(|c| (c.metadata().creation_timestamp.clone(), c.name().to_string()))
        .collect();
    // Newest first; equal timestamps by name.
    kubesim_api::sort::sort_by(&mut defaults, |a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    if let Some((_, name)) = defaults.into_iter().next() {
        ingress.spec.get_or_insert_with(Default::default).ingress_class_name = Some(name);
    }
}

/// StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection):
/// new claims get `kubernetes.io/pvc-protection`, new volumes `kubernetes.io/pv-protection`.
fn admit_storage_object_in_use_protection(object: &mut Object) {
    let finalizer = match object {
        Object::Dynamic(d) if d.kind == "PersistentVolumeClaim" => kubesim_api::storage::PVC_PROTECTION_FINALIZER,
        Object::Dynamic(d) if d.kind == "PersistentVolume" => kubesim_api::storage::PV_PROTECTION_FINALIZER,
        _ => return,
    };
    let finalizers = object.metadata_mut().finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == finalizer) {
        finalizers.push(finalizer.to_string());
    }
}

/// ServiceAccount admission: default service account and the projected token volume.
fn admit_service_account(pod: &mut Pod, req: &mut Request) {
    let Some(spec) = pod.spec.as_mut() else { return };
    let account = spec
        .service_account_name
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| spec.service_account.clone().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "default".to_string());
    spec.service_account_name = Some(account.clone());
    spec.service_account = Some(account);
    if spec.automount_service_account_token == Some(false) {
        return;
    }
    const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
    let already_mounted =
        spec.containers.iter().chain(spec.init_containers.iter().flatten()).any(|c| c.volume_mounts.iter().flatten().any(|m| m.mount_path == MOUNT_PATH));
    if already_mounted {
        return;
    }
    let volume_name = format!("kube-api-access-{}", random_suffix(req.rng));
    // Exactly one more: a first push into an empty Vec makes room for four, and a Volume is
    // 3,208 bytes in k8s-openapi's layout (a VolumeMount 152) — the created Pod kept 13 KB
    // of room for its one volume.
    let volumes = spec.volumes.get_or_insert_with(Vec::new);
    volumes.reserve_exact(1);
    volumes.push(Volume {
        name: volume_name.clone(),
        projected: Some(ProjectedVolumeSource {
            default_mode: Some(420),
            sources: Some(vec![
                VolumeProjection {
                    service_account_token: Some(ServiceAccountTokenProjection { expiration_seconds: Some(3607), path: "token".into(), ..Default::default() }),
                    ..Default::default()
                },
                VolumeProjection {
                    config_map: Some(ConfigMapProjection {
                        name: "kube-root-ca.crt".into(),
                        items: Some(vec![KeyToPath { key: "ca.crt".into(), path: "ca.crt".into(), mode: None }]),
                        optional: None,
                    }),
                    ..Default::default()
                },
                VolumeProjection {
                    downward_api: Some(DownwardAPIProjection {
                        items: Some(vec![DownwardAPIVolumeFile {
                            path: "namespace".into(),
                            field_ref: Some(ObjectFieldSelector { api_version: Some("v1".into()), field_path: "metadata.namespace".into() }),
                            ..Default::default()
                        }]),
                    }),
                    ..Default::default()
                },
            ]),
        }),
        ..Default::default()
    });
    for container in spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten()) {
        let mounts = container.volume_mounts.get_or_insert_with(Vec::new);
        mounts.reserve_exact(1);
        mounts.push(VolumeMount { name: volume_name.clone(), mount_path: MOUNT_PATH.into(), read_only: Some(true), ..Default::default() });
    }
}

/// Priority admission: spec.priority from the PriorityClass (or 0), preemptionPolicy default.
fn admit_priority(pod: &mut Pod, store: &Store) -> Result<()> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let Some(spec) = pod.spec.as_mut() else { return Ok(()) };
    let (priority, policy) = match spec.priority_class_name.as_deref().filter(|n| !n.is_empty()) {
        Some(class) => {
            let (value, policy) = match class {
                "system-node-critical" => (2_000_001_000, None),
                "system-cluster-critical" => (2_000_000_000, None),
                _ => {
                    let object = store
                        .get(("scheduling.k8s.io", "priorityclasses"), "", class)
                        .ok_or_else(|| ApiError::forbidden("pods", &name, &format!("no PriorityClass with name {class} was found")))?;
                    let Object::Dynamic(pc) = object.as_ref() else { unreachable!("priority classes are stored as JSON") };
                    let value = pc.rest.get("value").and_then(|v| v.as_i64()).unwrap_or(0) as i32;
                    let policy = pc.rest.get("preemptionPolicy").and_then(|v| v.as_str()).map(str::to_string);
                    (value, policy)
                }
            };
            (value, policy)
        }
        None => {
            // The global default PriorityClass, if one exists.
            let default = store
                .list(("scheduling.k8s.io", "priorityclasses"), None)
                .filter_map(|o| match o.as_ref() {
                    Object::Dynamic(pc) if pc.rest.get("globalDefault").and_then(|v| v.as_bool()) == Some(true) => Some(pc),
                    _ => None,
                })
                .next();
            match default {
                Some(pc) => {
                    spec.priority_class_name = pc.metadata.name.clone();
                    (
                        pc.rest.get("value").and_then(|v| v.as_i64()).unwrap_or(0) as i32,
                        pc.rest.get("preemptionPolicy").and_then(|v| v.as_str()).map(str::to_string),
                    )
                }
                None => (0, None),
            }
        }
    };
    if let Some(given) = spec.priority {
        if given != priority {
            return Err(ApiError::forbidden("pods", &name, &format!("the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name")));
        }
    }
    spec.priority = Some(priority);
    if spec.preemption_policy.is_none() {
        spec.preemption_policy = Some(policy.unwrap_or_else(|| "PreemptLowerPriority".into()));
    }
    Ok(())
}

/// DefaultTolerationSeconds: tolerate not-ready and unreachable NoExecute taints for 300 s.
fn admit_default_toleration_seconds(pod: &mut Pod) {
    let Some(spec) = pod.spec.as_mut() else { return };
    let tolerations = spec.tolerations.get_or_insert_with(Vec::new);
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let tolerated = tolerations.iter().any(|t| {
            let effect_ok = t.effect.as_deref().is_none_or(|e| e.is_empty() || e == "NoExecute");
            let key_ok = t.key.as_deref() == Some(key) || (t.key.as_deref().unwrap_or("").is_empty() && t.operator.as_deref() == Some("Exists"));
            effect_ok && key_ok
        });
        if !tolerated {
            tolerations.push(Toleration {
                key: Some(key.into()),
                operator: Some("Exists".into()),
                effect: Some("NoExecute".into()),
                toleration_seconds: Some(300),
                value: None,
            });
        }
    }
}

/// The pod registry's PrepareForCreate: status Pending with the QoS class.
fn prepare_pod_for_create(pod: &mut Pod) {
    let qos = kubesim_api::pod::qos_class(pod);
    let gated = pod.spec.as_ref().and_then(|s| s.scheduling_gates.as_ref()).is_some_and(|g| !g.is_empty());
    let mut status = PodStatus { phase: Some("Pending".into()), qos_class: Some(qos.into()), ..Default::default() };
    if gated {
        status.conditions = Some(vec![kubesim_api::k8s_openapi::api::core::v1::PodCondition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some("SchedulingGated".into()),
            message: Some("Scheduling is blocked due to non-empty scheduling gates".into()),
            ..Default::default()
        }]);
    }
    pod.status = Some(status);
}

/// Update validation: a pod's spec is immutable except for container images,
/// activeDeadlineSeconds, tolerations (additions) and scheduling gates (removals).
pub fn validate_update(new: &Object, old: &Object, info: &KindInfo) -> Result<()> {
    if let (Object::Pod(a), Object::Pod(b)) = (new, old) {
        let mut a_spec = a.spec.clone().unwrap_or_default();
        let b_spec = b.spec.clone().unwrap_or_default();
        for (ca, cb) in a_spec.containers.iter_mut().zip(b_spec.containers.iter()) {
            ca.image = cb.image.clone();
        }
        for (ca, cb) in a_spec.init_containers.iter_mut().flatten().zip(b_spec.init_containers.iter().flatten()) {
            ca.image = cb.image.clone();
        }
        a_spec.active_deadline_seconds = b_spec.active_deadline_seconds;
        a_spec.tolerations = b_spec.tolerations.clone();
        a_spec.scheduling_gates = b_spec.scheduling_gates.clone();
        if a_spec != b_spec {
            let name = a.metadata.name.clone().unwrap_or_default();
            return Err(ApiError::invalid(format!(
                "Pod {name:?} is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
            )));
        }
    }
    let _ = info;
    Ok(())
}

/// The PersistentVolumeClaimResize validating admission plugin
/// (plugin/pkg/admission/storage/persistentvolume/resize/admission.go): a claim's storage
/// request may grow only while it is bound, and only when its StorageClass (the same before
/// and after) has `allowVolumeExpansion: true`. Runs after validation, as validating
/// admission does.
pub fn validate_pvc_resize(new: &Object, old: &Object, store: &Store) -> Result<()> {
    let (Object::Dynamic(n), Object::Dynamic(o)) = (new, old) else { return Ok(()) };
    if n.kind != "PersistentVolumeClaim" {
        return Ok(());
    }
    let (a, b) = (new.to_json(), old.to_json());
    let size = |v: &serde_json::Value| {
        v.pointer("/spec/resources/requests/storage")
            .map(|q| q.as_str().map(str::to_string).unwrap_or_else(|| q.to_string()))
            .and_then(|t| kubesim_api::quantity::parse_value(&t).ok())
            .unwrap_or(0)
    };
    if size(&a) <= size(&b) {
        return Ok(());
    }
    let name = o.metadata.name.clone().unwrap_or_default();
    if b.pointer("/status/phase").and_then(|p| p.as_str()) != Some("Bound") {
        return Err(ApiError::forbidden("persistentvolumeclaims", &name, "Only bound persistent volume claims can be expanded"));
    }
    // GetPersistentVolumeClaimClass: spec.storageClassName, else the beta annotation.
    let class = |v: &serde_json::Value| {
        v.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
            .or_else(|| v.pointer("/spec/storageClassName"))
            .and_then(|c| c.as_str())
            .unwrap_or("")
            .to_string()
    };
    let (new_class, old_class) = (class(&a), class(&b));
    let allowed = !new_class.is_empty()
        && new_class == old_class
        && store
            .get(("storage.k8s.io", "storageclasses"), "", &new_class)
            .is_some_and(|sc| sc.to_json().get("allowVolumeExpansion").and_then(|v| v.as_bool()) == Some(true));
    if !allowed {
        return Err(ApiError::forbidden(
            "persistentvolumeclaims",
            &name,
            "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
        ));
    }
    Ok(())
}
