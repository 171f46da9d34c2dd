//! Defaulting, as the API server's SetDefaults functions do it (pkg/apis/core/v1/defaults.go,
//! pkg/apis/apps/v1/defaults.go). Admission-time defaults that need cluster state (service
//! accounts, priority, default tolerations) live in the API server crate.

use crate::object::Object;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentStrategy, ReplicaSet, RollingUpdateDeployment};
use k8s_openapi::api::core::v1::{
    Container, Namespace, NamespaceSpec, NamespaceStatus, Node, PodSecurityContext, PodSpec, PodTemplateSpec, Probe, ResourceRequirements, Service,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Applies the SetDefaults functions of the object's kind in place, and stores quantities in
/// their canonical form (the API server serializes resource.Quantity canonically:
/// `cpu: "0.5"` is stored as `500m`).
pub fn apply_defaults(object: &mut Object) {
    canonicalize_quantities(object);
    match object {
        Object::Pod(pod) => {
            if let Some(spec) = pod.spec.as_mut() {
                default_pod_spec(spec);
            }
        }
        Object::Node(node) => default_node(node),
        Object::Namespace(ns) => default_namespace(ns),
        Object::Deployment(d) => default_deployment(d),
        Object::ReplicaSet(rs) => default_replica_set(rs),
        Object::Service(svc) => default_service(svc),
        Object::Secret(secret) => {
            secret.type_.get_or_insert_with(|| "Opaque".to_string());
            // The secret registry's PrepareForCreate/Update: stringData is write-only and merged
            // into data (pkg/registry/core/secret/strategy.go dropDisabledFields/stringData).
            if let Some(string_data) = secret.string_data.take() {
                let data = secret.data.get_or_insert_with(Default::default);
                for (key, value) in string_data {
                    data.insert(key, k8s_openapi::ByteString(value.into_bytes()));
                }
            }
        }
        Object::IngressClass(class) => {
            // pkg/apis/networking/v1/defaults.go SetDefaults_IngressClass.
            if let Some(parameters) = class.spec.as_mut().and_then(|s| s.parameters.as_mut()) {
                parameters.scope.get_or_insert_with(|| "Cluster".to_string());
            }
        }
        Object::CSIDriver(driver) => default_csi_driver(driver),
        Object::Dynamic(d) => default_dynamic(&d.kind.clone(), &mut d.rest),
        _ => {}
    }
}

/// SetDefaults_CSIDriver (pkg/apis/storage/v1/defaults.go): attachRequired true, podInfoOnMount,
/// storageCapacity and requiresRepublish false, fsGroupPolicy ReadWriteOnceWithFSType,
/// volumeLifecycleModes [Persistent], seLinuxMount false (SELinuxMountReadWriteOncePod is on).
fn default_csi_driver(driver: &mut k8s_openapi::api::storage::v1::CSIDriver) {
    let spec = &mut driver.spec;
    spec.attach_required.get_or_insert(true);
    spec.pod_info_on_mount.get_or_insert(false);
    spec.storage_capacity.get_or_insert(false);
    spec.fs_group_policy.get_or_insert_with(|| "ReadWriteOnceWithFSType".to_string());
    if spec.volume_lifecycle_modes.as_ref().is_none_or(|m| m.is_empty()) {
        spec.volume_lifecycle_modes = Some(vec!["Persistent".to_string()]);
    }
    spec.requires_republish.get_or_insert(false);
    spec.se_linux_mount.get_or_insert(false);
}

/// Quantities in canonical form (resource.Quantity's String) for the kinds that hold them.
fn canonicalize_quantities(object: &mut Object) {
    use crate::quantity::canonicalize_list;
    fn pod_spec(spec: &mut PodSpec) {
        for c in spec.init_containers.iter_mut().flatten().chain(spec.containers.iter_mut()) {
            if let Some(r) = c.resources.as_mut() {
                r.requests.iter_mut().chain(r.limits.iter_mut()).for_each(canonicalize_list);
            }
        }
        for c in spec.ephemeral_containers.iter_mut().flatten() {
            if let Some(r) = c.resources.as_mut() {
                r.requests.iter_mut().chain(r.limits.iter_mut()).for_each(canonicalize_list);
            }
        }
        if let Some(r) = spec.resources.as_mut() {
            r.requests.iter_mut().chain(r.limits.iter_mut()).for_each(canonicalize_list);
        }
        spec.overhead.iter_mut().for_each(canonicalize_list);
        for v in spec.volumes.iter_mut().flatten() {
            if let Some(q) = v.empty_dir.as_mut().and_then(|e| e.size_limit.as_mut()) {
                if let Some(c) = crate::quantity::canonical(&q.0) {
                    q.0 = c;
                }
            }
        }
    }
    match object {
        Object::Pod(p) => {
            if let Some(spec) = p.spec.as_mut() {
                pod_spec(spec);
            }
        }
        Object::Node(n) => {
            if let Some(status) = n.status.as_mut() {
                status.capacity.iter_mut().chain(status.allocatable.iter_mut()).for_each(canonicalize_list);
            }
        }
        Object::Deployment(d) => {
            if let Some(spec) = d.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
                pod_spec(spec);
            }
        }
        Object::ReplicaSet(rs) => {
            if let Some(spec) = rs.spec.as_mut().and_then(|s| s.template.as_mut()).and_then(|t| t.spec.as_mut()) {
                pod_spec(spec);
            }
        }
        Object::Dynamic(d)
            if matches!(
                d.kind.as_str(),
                "LimitRange"
                    | "ResourceQuota"
                    | "PersistentVolumeClaim"
                    | "PersistentVolume"
                    | "Job"
                    | "CronJob"
                    | "StatefulSet"
                    | "DaemonSet"
                    | "ReplicationController"
                    | "PodTemplate"
                    | "HorizontalPodAutoscaler"
            ) =>
        {
            for (key, value) in d.rest.iter_mut() {
                if key != "status" || matches!(d.kind.as_str(), "ResourceQuota" | "PersistentVolumeClaim") {
                    crate::quantity::canonicalize_json(value);
                }
            }
        }
        _ => {}
    }
}

/// The Job registry's PrepareForCreate (pkg/registry/batch/job/strategy.go generateSelector):
/// unless spec.manualSelector, the template gets the job-name and controller-uid labels (new
/// and legacy keys, keeping any the user set) and the selector matches
/// `batch.kubernetes.io/controller-uid=<uid>`. Then SetDefaults_Job's `metadata.labels` from the
/// template labels when the Job has none (the API server applies it when it reads the object
/// back). The object's uid must be set.
pub fn prepare_job_for_create(object: &mut Object) {
    let Object::Dynamic(job) = object else { return };
    if job.kind != "Job" || job.api_version != "batch/v1" {
        return;
    }
    let name = job.metadata.name.clone().unwrap_or_default();
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let Some(spec) = job.rest.get_mut("spec").and_then(|s| s.as_object_mut()) else { return };
    if spec.get("manualSelector").and_then(|m| m.as_bool()) != Some(true) {
        let template = spec.entry("template").or_insert_with(|| serde_json::json!({}));
        if let Some(t) = template.as_object_mut() {
            let meta = t.entry("metadata").or_insert_with(|| serde_json::json!({}));
            if let Some(m) = meta.as_object_mut() {
                let labels = m.entry("labels").or_insert_with(|| serde_json::json!({}));
                if !labels.is_object() {
                    *labels = serde_json::json!({});
                }
                if let Some(l) = labels.as_object_mut() {
                    for key in ["job-name", "batch.kubernetes.io/job-name"] {
                        l.entry(key).or_insert_with(|| name.clone().into());
                    }
                    for key in ["controller-uid", "batch.kubernetes.io/controller-uid"] {
                        l.entry(key).or_insert_with(|| uid.clone().into());
                    }
                }
            }
        }
        let selector = spec.entry("selector").or_insert_with(|| serde_json::json!({}));
        if !selector.is_object() {
            *selector = serde_json::json!({});
        }
        if let Some(sel) = selector.as_object_mut() {
            let match_labels = sel.entry("matchLabels").or_insert_with(|| serde_json::json!({}));
            if let Some(ml) = match_labels.as_object_mut() {
                ml.entry("batch.kubernetes.io/controller-uid").or_insert_with(|| uid.clone().into());
            }
        }
    }
    let template_labels: Option<std::collections::BTreeMap<String, String>> =
        spec.get("template").and_then(|t| t.get("metadata")).and_then(|m| m.get("labels")).and_then(|l| serde_json::from_value(l.clone()).ok());
    if job.metadata.labels.as_ref().is_none_or(|l| l.is_empty()) {
        if let Some(labels) = template_labels.filter(|l| !l.is_empty()) {
            job.metadata.labels = Some(labels);
        }
    }
}

/// The SetDefaults functions of the JSON-kept kinds whose defaults users see in `kubectl get`
/// and `describe` (pkg/apis/{core,apps,batch}/v1/defaults.go): top-level fields only.
fn default_dynamic(kind: &str, rest: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::{json, Value};
    let spec = || json!({});
    let set = |m: &mut serde_json::Map<String, Value>, key: &str, value: Value| {
        if m.get(key).is_none_or(|v| v.is_null()) {
            m.insert(key.to_string(), value);
        }
    };
    match kind {
        "PersistentVolume" => {
            if let Some(s) = rest.entry("spec").or_insert_with(spec).as_object_mut() {
                set(s, "persistentVolumeReclaimPolicy", json!("Retain"));
                set(s, "volumeMode", json!("Filesystem"));
                // SetDefaults_HostPathVolumeSource.
                if let Some(h) = s.get_mut("hostPath").and_then(|h| h.as_object_mut()) {
                    set(h, "type", json!(""));
                }
            }
        }
        "PersistentVolumeClaim" => {
            if let Some(s) = rest.entry("spec").or_insert_with(spec).as_object_mut() {
                set(s, "volumeMode", json!("Filesystem"));
            }
        }
        // pkg/apis/storage/v1/defaults.go SetDefaults_StorageClass.
        "StorageClass" => {
            set(rest, "reclaimPolicy", json!("Delete"));
            set(rest, "volumeBindingMode", json!("Immediate"));
        }
        "PriorityClass" => set(rest, "preemptionPolicy", json!("PreemptLowerPriority")),
        "NetworkPolicy" => {
            // SetDefaults_NetworkPolicy: policyTypes [Ingress] (+ Egress with egress rules);
            // SetDefaults_NetworkPolicyPort: protocol TCP.
            if let Some(s) = rest.entry("spec").or_insert_with(spec).as_object_mut() {
                if s.get("policyTypes").and_then(|t| t.as_array()).is_none_or(|t| t.is_empty()) {
                    let egress = s.get("egress").and_then(|e| e.as_array()).is_some_and(|e| !e.is_empty());
                    s.insert("policyTypes".into(), if egress { json!(["Ingress", "Egress"]) } else { json!(["Ingress"]) });
                }
                for key in ["ingress", "egress"] {
                    for rule in s.get_mut(key).and_then(|r| r.as_array_mut()).into_iter().flatten() {
                        for port in rule.get_mut("ports").and_then(|p| p.as_array_mut()).into_iter().flatten() {
                            if let Some(p) = port.as_object_mut() {
                                set(p, "protocol", json!("TCP"));
                            }
                        }
                    }
                }
            }
        }
        "LimitRange" => {
            // SetDefaults_LimitRangeItem: for Container items, default ← max, defaultRequest ←
            // default, then defaultRequest ← min, per resource not already given.
            let items = rest.get_mut("spec").and_then(|s| s.get_mut("limits")).and_then(|l| l.as_array_mut());
            for item in items.into_iter().flatten() {
                let Some(item) = item.as_object_mut() else { continue };
                if item.get("type").and_then(|t| t.as_str()) != Some("Container") {
                    continue;
                }
                let list = |item: &serde_json::Map<String, Value>, key: &str| item.get(key).and_then(|v| v.as_object()).cloned().unwrap_or_default();
                let mut default = list(item, "default");
                let mut default_request = list(item, "defaultRequest");
                for (k, v) in list(item, "max") {
                    default.entry(k).or_insert(v);
                }
                for (k, v) in &default {
                    default_request.entry(k.clone()).or_insert_with(|| v.clone());
                }
                for (k, v) in list(item, "min") {
                    default_request.entry(k).or_insert(v);
                }
                if !default.is_empty() {
                    item.insert("default".into(), Value::Object(default));
                }
                if !default_request.is_empty() {
                    item.insert("defaultRequest".into(), Value::Object(default_request));
                }
            }
        }
        "StatefulSet" => {
            if let Some(s) = rest.entry("spec").or_insert_with(spec).as_object_mut() {
                set(s, "replicas", json!(1));
                set(s, "podManagementPolicy", json!("OrderedReady"));
                // SetDefaults_StatefulSet: type RollingUpdate, then rollingUpdate.partition 0.
                let strategy = s.entry("updateStrategy").or_insert_with(|| json!({}));
                if let Some(st) = strategy.as_object_mut() {
                    set(st, "type", json!("RollingUpdate"));
                    if st.get("type") == Some(&json!("RollingUpdate")) {
                        let rolling = st.entry("rollingUpdate").or_insert_with(|| json!({}));
                        if let Some(r) = rolling.as_object_mut() {
                            set(r, "partition", json!(0));
                        }
                    }
                }
                set(s, "revisionHistoryLimit", json!(10));
                let retention = s.entry("persistentVolumeClaimRetentionPolicy").or_insert_with(|| json!({}));
                if let Some(r) = retention.as_object_mut() {
                    set(r, "whenDeleted", json!("Retain"));
                    set(r, "whenScaled", json!("Retain"));
                }
            }
        }
        "DaemonSet" => {
            if let Some(s) = rest.entry("spec").or_insert_with(spec).as_object_mut() {
                // SetDefaults_DaemonSet: type RollingUpdate, maxUnavailable 1, maxSurge 0.
                let strategy = s.entry("updateStrategy").or_insert_with(|| json!({}));
                if let Some(st) = strategy.as_object_mut() {
                    set(st, "type", json!("RollingUpdate"));
                    if st.get("type") == Some(&json!("RollingUpdate")) {
                        let rolling = st.entry("rollingUpdate").or_insert_with(|| json!({}));
                        if let Some(r) = rolling.as_object_mut() {
                            set(r, "maxUnavailable", json!(1));
                            set(r, "maxSurge", json!(0));
                        }
                    }
                }
                set(s, "revisionHistoryLimit", json!(10));
            }
        }
        "Job" => {
            if let Some(s) = rest.entry("spec").or_insert_with(spec).as_object_mut() {
                let unset = |k: &str| s.get(k).is_none_or(|v| v.is_null());
                // SetDefaults_Job: backoffLimit is MaxInt32 with backoffLimitPerIndex, and only
                // failed pods are replaced when a podFailurePolicy is set.
                let per_index = !unset("backoffLimitPerIndex");
                let failure_policy = !unset("podFailurePolicy");
                if unset("completions") && unset("parallelism") {
                    s.insert("completions".into(), json!(1));
                }
                set(s, "parallelism", json!(1));
                set(s, "backoffLimit", json!(if per_index { i32::MAX } else { 6 }));
                set(s, "completionMode", json!("NonIndexed"));
                set(s, "suspend", json!(false));
                set(s, "podReplacementPolicy", json!(if failure_policy { "Failed" } else { "TerminatingOrFailed" }));
            }
        }
        "CronJob" => {
            if let Some(s) = rest.entry("spec").or_insert_with(spec).as_object_mut() {
                set(s, "concurrencyPolicy", json!("Allow"));
                set(s, "suspend", json!(false));
                set(s, "successfulJobsHistoryLimit", json!(3));
                set(s, "failedJobsHistoryLimit", json!(1));
            }
        }
        "ReplicationController" => {
            if let Some(s) = rest.entry("spec").or_insert_with(spec).as_object_mut() {
                set(s, "replicas", json!(1));
                let labels = s.get("template").and_then(|t| t.get("metadata")).and_then(|m| m.get("labels")).cloned();
                if let Some(labels) = labels.filter(|l| l.as_object().is_some_and(|m| !m.is_empty())) {
                    set(s, "selector", labels);
                }
            }
        }
        _ => {}
    }
    // The pod templates of the workload kinds get SetDefaults_PodSpec and SetDefaults_Container
    // as their typed counterparts do (defaulter-gen walks into PodTemplateSpec).
    let pointer = match kind {
        "Job" | "StatefulSet" | "DaemonSet" | "ReplicationController" => Some("/spec/template"),
        "CronJob" => Some("/spec/jobTemplate/spec/template"),
        "PodTemplate" => Some("/template"),
        _ => None,
    };
    if let Some(pointer) = pointer {
        let mut body = Value::Object(std::mem::take(rest));
        if let Some(template) = body.pointer_mut(pointer) {
            if let Ok(mut typed) = serde_json::from_value::<PodTemplateSpec>(template.clone()) {
                default_template(&mut typed);
                if let Ok(v) = serde_json::to_value(&typed) {
                    *template = v;
                }
            }
        }
        if let Value::Object(map) = body {
            *rest = map;
        }
    }
}

/// SetDefaults_PodSpec + SetDefaults_Pod + SetDefaults_Container for every container.
pub fn default_pod_spec(spec: &mut PodSpec) {
    spec.dns_policy.get_or_insert_with(|| "ClusterFirst".into());
    spec.restart_policy.get_or_insert_with(|| "Always".into());
    spec.termination_grace_period_seconds.get_or_insert(30);
    spec.security_context.get_or_insert_with(PodSecurityContext::default);
    spec.scheduler_name.get_or_insert_with(|| "default-scheduler".into());
    spec.enable_service_links.get_or_insert(true);
    let host_network = spec.host_network.unwrap_or(false);
    for container in spec.init_containers.iter_mut().flatten() {
        default_container(container, host_network);
    }
    for container in spec.containers.iter_mut() {
        default_container(container, host_network);
    }
    for volume in spec.volumes.iter_mut().flatten() {
        let has_source = volume.config_map.is_some()
            || volume.secret.is_some()
            || volume.persistent_volume_claim.is_some()
            || volume.host_path.is_some()
            || volume.projected.is_some()
            || volume.downward_api.is_some()
            || volume.nfs.is_some()
            || volume.csi.is_some()
            || volume.ephemeral.is_some()
            || volume.empty_dir.is_some()
            || volume.image.is_some();
        if !has_source {
            volume.empty_dir = Some(Default::default());
        }
        if let Some(cm) = volume.config_map.as_mut() {
            cm.default_mode.get_or_insert(0o644);
        }
        if let Some(secret) = volume.secret.as_mut() {
            secret.default_mode.get_or_insert(0o644);
        }
        // SetDefaults_HostPathVolumeSource: an unset type is HostPathUnset ("").
        if let Some(host_path) = volume.host_path.as_mut() {
            host_path.type_.get_or_insert_with(String::new);
        }
    }
}

/// SetDefaults_Container (and the requests-from-limits rule of SetDefaults_Pod).
pub fn default_container(container: &mut Container, host_network: bool) {
    if container.image_pull_policy.is_none() {
        container.image_pull_policy = Some(default_image_pull_policy(container.image.as_deref().unwrap_or("")).into());
    }
    container.termination_message_path.get_or_insert_with(|| "/dev/termination-log".into());
    container.termination_message_policy.get_or_insert_with(|| "File".into());
    for port in container.ports.iter_mut().flatten() {
        port.protocol.get_or_insert_with(|| "TCP".into());
        if host_network && port.host_port.is_none() {
            port.host_port = Some(port.container_port);
        }
    }
    let resources = container.resources.get_or_insert_with(ResourceRequirements::default);
    if let Some(limits) = resources.limits.clone() {
        let requests = resources.requests.get_or_insert_with(Default::default);
        for (name, quantity) in limits {
            requests.entry(name).or_insert(quantity);
        }
    }
    for probe in [&mut container.liveness_probe, &mut container.readiness_probe, &mut container.startup_probe].into_iter().flatten() {
        default_probe(probe);
    }
}

/// SetDefaults_Probe and the handler defaults (httpGet path "/" and scheme HTTP).
pub fn default_probe(probe: &mut Probe) {
    probe.timeout_seconds.get_or_insert(1);
    probe.period_seconds.get_or_insert(10);
    probe.success_threshold.get_or_insert(1);
    probe.failure_threshold.get_or_insert(3);
    if let Some(http) = probe.http_get.as_mut() {
        http.path.get_or_insert_with(|| "/".into());
        http.scheme.get_or_insert_with(|| "HTTP".into());
    }
    // GRPCAction.Service's `+default=""` (zz_generated.defaults.go): kubectl describe
    // dereferences it.
    if let Some(grpc) = probe.grpc.as_mut() {
        grpc.service.get_or_insert_with(String::new);
    }
}

/// The imagePullPolicy SetDefaults_Container picks: `Always` for `:latest` or no tag (and no
/// digest), `IfNotPresent` otherwise.
pub fn default_image_pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last_segment = image.rsplit('/').next().unwrap_or(image);
    match last_segment.split_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

fn default_node(node: &mut Node) {
    let status = node.status.get_or_insert_with(Default::default);
    if status.allocatable.is_none() {
        status.allocatable = status.capacity.clone();
    }
}

fn default_namespace(ns: &mut Namespace) {
    // The namespace strategy's PrepareForCreate/PrepareForUpdate: the immutable
    // `kubernetes.io/metadata.name` label (NamespaceDefaultLabelName, GA in v1.22).
    if let Some(name) = ns.metadata.name.clone().filter(|n| !n.is_empty()) {
        ns.metadata.labels.get_or_insert_with(Default::default).insert("kubernetes.io/metadata.name".to_string(), name);
    }
    ns.spec.get_or_insert_with(|| NamespaceSpec { finalizers: Some(vec!["kubernetes".into()]) });
    ns.status.get_or_insert_with(|| NamespaceStatus { phase: Some("Active".into()), ..Default::default() });
}

fn default_template(template: &mut PodTemplateSpec) {
    if let Some(spec) = template.spec.as_mut() {
        default_pod_spec(spec);
    }
}

fn default_deployment(d: &mut Deployment) {
    let spec = d.spec.get_or_insert_with(Default::default);
    spec.replicas.get_or_insert(1);
    let strategy = spec.strategy.get_or_insert_with(DeploymentStrategy::default);
    let type_ = strategy.type_.get_or_insert_with(|| "RollingUpdate".into()).clone();
    if type_ == "RollingUpdate" {
        let rolling = strategy.rolling_update.get_or_insert_with(RollingUpdateDeployment::default);
        rolling.max_unavailable.get_or_insert_with(|| IntOrString::String("25%".into()));
        rolling.max_surge.get_or_insert_with(|| IntOrString::String("25%".into()));
    }
    spec.revision_history_limit.get_or_insert(10);
    spec.progress_deadline_seconds.get_or_insert(600);
    default_template(&mut spec.template);
}

fn default_replica_set(rs: &mut ReplicaSet) {
    let spec = rs.spec.get_or_insert_with(Default::default);
    spec.replicas.get_or_insert(1);
    if let Some(template) = spec.template.as_mut() {
        default_template(template);
    }
}

fn default_service(svc: &mut Service) {
    let spec = svc.spec.get_or_insert_with(Default::default);
    let type_ = spec.type_.get_or_insert_with(|| "ClusterIP".into()).clone();
    spec.session_affinity.get_or_insert_with(|| "None".into());
    for port in spec.ports.iter_mut().flatten() {
        port.protocol.get_or_insert_with(|| "TCP".into());
        if port.target_port.is_none() {
            port.target_port = Some(IntOrString::Int(port.port));
        }
    }
    if type_ == "NodePort" || type_ == "LoadBalancer" {
        spec.external_traffic_policy.get_or_insert_with(|| "Cluster".into());
    }
    if type_ != "ExternalName" {
        spec.internal_traffic_policy.get_or_insert_with(|| "Cluster".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Mirrors pkg/apis/core/v1/defaults_test.go (TestSetDefaultsContainerImagePullPolicy cases).
    #[test]
    fn image_pull_policy_defaults_follow_the_tag() {
        let cases = [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("nginx@sha256:abc", "IfNotPresent"),
            ("registry:5000/app", "Always"),
            ("registry:5000/app:v2", "IfNotPresent"),
        ];
        for (image, want) in cases {
            assert_eq!(default_image_pull_policy(image), want, "{image}");
        }
    }

    #[test]
    fn pod_spec_defaults_match_set_defaults_pod_spec() {
        let mut spec = PodSpec { containers: vec![Container { name: "c".into(), image: Some("nginx".into()), ..Default::default() }], ..Default::default() };
        default_pod_spec(&mut spec);
        assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirst"));
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(spec.termination_grace_period_seconds, Some(30));
        assert_eq!(spec.scheduler_name.as_deref(), Some("default-scheduler"));
        assert_eq!(spec.enable_service_links, Some(true));
        let c = &spec.containers[0];
        assert_eq!(c.image_pull_policy.as_deref(), Some("Always"));
        assert_eq!(c.termination_message_path.as_deref(), Some("/dev/termination-log"));
        assert_eq!(c.termination_message_policy.as_deref(), Some("File"));
    }

    #[test]
    fn secret_string_data_is_merged_into_data() {
        let mut secret = Object::Secret(Box::new(k8s_openapi::api::core::v1::Secret {
            string_data: Some([("username".to_string(), "admin".to_string())].into()),
            ..Default::default()
        }));
        apply_defaults(&mut secret);
        let Object::Secret(s) = secret else { unreachable!() };
        assert_eq!(s.string_data, None);
        assert_eq!(s.data.unwrap()["username"].0, b"admin".to_vec());
        assert_eq!(s.type_.as_deref(), Some("Opaque"));
    }

    // Mirrors pkg/apis/core/v1/defaults_test.go TestSetDefaultLimitRangeItem and the docs page
    // tasks/administer-cluster/manage-resources/memory-constraint-namespace (the stored
    // LimitRange shows default and defaultRequest from max and min).
    #[test]
    fn limit_range_items_get_default_and_default_request() {
        let mut lr = Object::Dynamic(Box::new(crate::DynamicObject {
            api_version: "v1".into(),
            kind: "LimitRange".into(),
            cache: Default::default(),
            metadata: Default::default(),
            rest: serde_json::json!({"spec": {"limits": [
                {"type": "Container", "max": {"memory": "1Gi"}, "min": {"memory": "500Mi"}},
                {"type": "Container", "max": {"cpu": "800m"}, "default": {"cpu": "700m"}, "min": {"cpu": "0.2"}},
                {"type": "Pod", "max": {"cpu": "2"}},
            ]}})
            .as_object()
            .unwrap()
            .clone(),
        }));
        apply_defaults(&mut lr);
        let limits = &lr.to_json()["spec"]["limits"];
        assert_eq!(
            limits[0],
            serde_json::json!({"type": "Container", "max": {"memory": "1Gi"}, "min": {"memory": "500Mi"}, "default": {"memory": "1Gi"}, "defaultRequest": {"memory": "1Gi"}})
        );
        assert_eq!(limits[1]["default"], serde_json::json!({"cpu": "700m"}));
        assert_eq!(limits[1]["defaultRequest"], serde_json::json!({"cpu": "700m"}));
        assert_eq!(limits[1]["min"], serde_json::json!({"cpu": "200m"}), "quantities are canonical");
        assert_eq!(limits[2], serde_json::json!({"type": "Pod", "max": {"cpu": "2"}}));
    }

    // Mirrors pkg/apis/batch/v1/defaults_test.go and pkg/apis/core/v1/defaults_test.go
    // (TestSetDefaultJob, TestSetDefaultPersistentVolume) for the JSON-kept kinds.
    #[test]
    fn json_kept_kinds_get_their_defaults() {
        let mut job = Object::Dynamic(Box::new(crate::DynamicObject {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            cache: Default::default(),
            metadata: Default::default(),
            rest: serde_json::json!({"spec": {"template": {}}}).as_object().unwrap().clone(),
        }));
        apply_defaults(&mut job);
        let spec = &job.to_json()["spec"];
        assert_eq!((spec["completions"].clone(), spec["parallelism"].clone(), spec["backoffLimit"].clone()), (1.into(), 1.into(), 6.into()));
        let mut parallel = Object::Dynamic(Box::new(crate::DynamicObject {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            cache: Default::default(),
            metadata: Default::default(),
            rest: serde_json::json!({"spec": {"parallelism": 3}}).as_object().unwrap().clone(),
        }));
        apply_defaults(&mut parallel);
        assert!(parallel.to_json()["spec"].get("completions").is_none(), "completions stay unset with parallelism");
        let mut pv = Object::Dynamic(Box::new(crate::DynamicObject {
            api_version: "v1".into(),
            kind: "PersistentVolume".into(),
            cache: Default::default(),
            metadata: Default::default(),
            rest: serde_json::json!({"spec": {"persistentVolumeReclaimPolicy": "Delete"}}).as_object().unwrap().clone(),
        }));
        apply_defaults(&mut pv);
        assert_eq!(pv.to_json()["spec"], serde_json::json!({"persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Filesystem"}));
        // pkg/apis/storage/v1/defaults_test.go TestSetDefaultVolumeBindingMode / reclaimPolicy.
        let mut sc = Object::Dynamic(Box::new(crate::DynamicObject {
            api_version: "storage.k8s.io/v1".into(),
            kind: "StorageClass".into(),
            cache: Default::default(),
            metadata: Default::default(),
            rest: serde_json::json!({"provisioner": "x"}).as_object().unwrap().clone(),
        }));
        apply_defaults(&mut sc);
        let sc = sc.to_json();
        assert_eq!((sc["reclaimPolicy"].clone(), sc["volumeBindingMode"].clone()), ("Delete".into(), "Immediate".into()));
    }

    #[test]
    fn csi_driver_defaults_match_storage_v1() {
        let mut driver = Object::CSIDriver(Box::default());
        apply_defaults(&mut driver);
        let json = driver.to_json();
        assert_eq!(
            json["spec"],
            serde_json::json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false, "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "volumeLifecycleModes": ["Persistent"], "requiresRepublish": false, "seLinuxMount": false})
        );
    }

    #[test]
    fn deployment_defaults_match_apps_v1() {
        let mut d = Deployment::default();
        default_deployment(&mut d);
        let spec = d.spec.unwrap();
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(spec.revision_history_limit, Some(10));
        assert_eq!(spec.progress_deadline_seconds, Some(600));
        let rolling = spec.strategy.unwrap().rolling_update.unwrap();
        assert_eq!(rolling.max_surge, Some(IntOrString::String("25%".into())));
        assert_eq!(rolling.max_unavailable, Some(IntOrString::String("25%".into())));
    }
}
