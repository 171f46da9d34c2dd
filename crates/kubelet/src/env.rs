//! The container environment (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables): Service
//! link variables, envFrom, env with `$(VAR)` references and valueFrom (fieldRef,
//! resourceFieldRef, configMapKeyRef, secretKeyRef).

use crate::expansion::{expand, mapping_for};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Pod, Service};
use kubesim_api::object::Object;
use kubesim_api::quantity::parse_milli;
use std::collections::BTreeMap;

/// The Service link variables for a pod (getServiceEnvVarMap + envvars.FromServices): every
/// Service of the pod's namespace with a cluster IP when `enableServiceLinks` (default true),
/// and always the `kubernetes` Service of `default`.
pub fn service_env(pod: &Pod, store: &kubesim_store::Store) -> BTreeMap<String, String> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let links = pod.spec.as_ref().and_then(|s| s.enable_service_links).unwrap_or(true);
    // Borrowed from the store: a container start reads every Service of its namespace.
    let mut services: BTreeMap<&str, &Service> = BTreeMap::new();
    for object in store.list(("", "services"), None) {
        let Object::Service(svc) = object.as_ref() else { continue };
        let name = svc.metadata.name.as_deref().unwrap_or_default();
        let ns = svc.metadata.namespace.as_deref().unwrap_or_default();
        if ns == "default" && name == "kubernetes" {
            services.entry(name).or_insert(svc);
        } else if ns == namespace && links {
            services.insert(name, svc);
        }
    }
    let mut env = BTreeMap::new();
    let no_ports = Vec::new();
    for (name, svc) in &services {
        let Some(spec) = svc.spec.as_ref() else { continue };
        let Some(ip) = spec.cluster_ip.as_ref().filter(|ip| !ip.is_empty() && *ip != "None") else { continue };
        let ports = spec.ports.as_ref().unwrap_or(&no_ports);
        let Some(first) = ports.first() else { continue };
        let prefix = name.to_ascii_uppercase().replace('-', "_");
        env.insert(format!("{prefix}_SERVICE_HOST"), ip.clone());
        env.insert(format!("{prefix}_SERVICE_PORT"), first.port.to_string());
        for port in ports {
            if let Some(port_name) = port.name.as_deref().filter(|n| !n.is_empty()) {
                env.insert(format!("{prefix}_SERVICE_PORT_{}", port_name.to_ascii_uppercase().replace('-', "_")), port.port.to_string());
            }
        }
        let protocol = |p: &kubesim_api::k8s_openapi::api::core::v1::ServicePort| p.protocol.clone().unwrap_or_else(|| "TCP".into());
        env.insert(format!("{prefix}_PORT"), format!("{}://{ip}:{}", protocol(first).to_ascii_lowercase(), first.port));
        for port in ports {
            let proto = protocol(port);
            let key = format!("{prefix}_PORT_{}_{}", port.port, proto.to_ascii_uppercase());
            env.insert(key.clone(), format!("{}://{ip}:{}", proto.to_ascii_lowercase(), port.port));
            env.insert(format!("{key}_PROTO"), proto.to_ascii_lowercase());
            env.insert(format!("{key}_PORT"), port.port.to_string());
            env.insert(format!("{key}_ADDR"), ip.clone());
        }
    }
    env
}

/// A resource field of a container (`resourceFieldRef`): limits default to the node's
/// allocatable, values are divided by the divisor and rounded up (ExtractContainerResourceValue).
fn resource_field(container: &Container, resource: &str, divisor: Option<&str>, node_allocatable: &BTreeMap<String, i128>) -> String {
    let (kind, name) = resource.split_once('.').unwrap_or(("limits", resource));
    let list = container.resources.as_ref().and_then(|r| if kind == "requests" { r.requests.as_ref() } else { r.limits.as_ref() });
    let value = list.and_then(|l| l.get(name)).and_then(|q| parse_milli(&q.0).ok()).or_else(|| node_allocatable.get(name).copied()).unwrap_or(0);
    let divisor = divisor.and_then(|d| parse_milli(d).ok()).filter(|d| *d > 0).unwrap_or(1000);
    let quotient = (value + divisor - 1) / divisor;
    quotient.to_string()
}

/// The container's environment as the kubelet builds it (makeEnvironmentVariables): envFrom,
/// then env (each value expanded against the variables defined before it and the Service
/// links), valueFrom, and the Service link variables underneath. Missing ConfigMaps/Secrets or
/// keys that are not optional fail with the kubelet's messages.
pub fn container_env(
    pod: &Pod,
    container: &Container,
    store: &kubesim_store::Store,
    node_allocatable: &BTreeMap<String, i128>,
) -> Result<BTreeMap<String, String>, String> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let lookup = |kind: &str, name: &str| -> Option<BTreeMap<String, String>> {
        match kind {
            "ConfigMap" => store.get(("", "configmaps"), &namespace, name).and_then(|o| match o.as_ref() {
                Object::ConfigMap(cm) => Some(cm.data.clone().unwrap_or_default()),
                _ => None,
            }),
            _ => store.get(("", "secrets"), &namespace, name).and_then(|o| match o.as_ref() {
                Object::Secret(secret) => Some(
                    secret
                        .data
                        .clone()
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                        .chain(secret.string_data.clone().unwrap_or_default())
                        .collect(),
                ),
                _ => None,
            }),
        }
    };
    let not_found = |kind: &str, name: &str| format!("{} {name:?} not found", kind.to_ascii_lowercase());
    let services = service_env(pod, store);
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    for source in container.env_from.iter().flatten() {
        let (kind, name, optional) = match (&source.config_map_ref, &source.secret_ref) {
            (Some(cm), _) => ("ConfigMap", cm.name.clone(), cm.optional.unwrap_or(false)),
            (_, Some(secret)) => ("Secret", secret.name.clone(), secret.optional.unwrap_or(false)),
            _ => continue,
        };
        match lookup(kind, &name) {
            Some(data) => {
                for (k, v) in data {
                    env.insert(format!("{}{k}", source.prefix.clone().unwrap_or_default()), v);
                }
            }
            None if optional => {}
            None => return Err(not_found(kind, &name)),
        }
    }
    for var in container.env.iter().flatten() {
        if let Some(value) = &var.value {
            let contexts = [&env, &services];
            let expanded = expand(value, &mapping_for(&contexts));
            env.insert(var.name.clone(), expanded);
        } else if let Some(field) = var.value_from.as_ref().and_then(|v| v.field_ref.as_ref()) {
            let value = field_value(pod, &field.field_path);
            env.insert(var.name.clone(), value);
        } else if let Some(resource) = var.value_from.as_ref().and_then(|v| v.resource_field_ref.as_ref()) {
            let target = match resource.container_name.as_deref().filter(|c| !c.is_empty()) {
                Some(name) => pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.containers.iter().chain(s.init_containers.iter().flatten()).find(|c| c.name == name).cloned())
                    .unwrap_or_else(|| container.clone()),
                None => container.clone(),
            };
            let divisor = resource.divisor.as_ref().map(|d| d.0.as_str());
            env.insert(var.name.clone(), resource_field(&target, &resource.resource, divisor, node_allocatable));
        } else if let Some(source) = var.value_from.as_ref() {
            let (kind, name, key, optional) = match (&source.config_map_key_ref, &source.secret_key_ref) {
                (Some(r), _) => ("ConfigMap", r.name.clone(), r.key.clone(), r.optional.unwrap_or(false)),
                (_, Some(r)) => ("Secret", r.name.clone(), r.key.clone(), r.optional.unwrap_or(false)),
                _ => continue,
            };
            match lookup(kind, &name) {
                Some(data) => match data.get(&key) {
                    Some(value) => {
                        env.insert(var.name.clone(), value.clone());
                    }
                    None if optional => {}
                    None => return Err(format!("couldn't find key {key} in {kind} {namespace}/{name}")),
                },
                None if optional => {}
                None => return Err(not_found(kind, &name)),
            }
        }
    }
    for (k, v) in services {
        env.entry(k).or_insert(v);
    }
    Ok(env)
}

/// A downward-API field of the pod (`fieldRef`): the value the kubelet exposes.
pub fn field_value(pod: &Pod, path: &str) -> String {
    let meta = &pod.metadata;
    let render = |map: &Option<BTreeMap<String, String>>| map.iter().flatten().map(|(k, v)| format!("{k}={v:?}")).collect::<Vec<_>>().join("\n");
    if let Some(key) = path.strip_prefix("metadata.labels['").and_then(|k| k.strip_suffix("']")) {
        return meta.labels.as_ref().and_then(|l| l.get(key)).cloned().unwrap_or_default();
    }
    if let Some(key) = path.strip_prefix("metadata.annotations['").and_then(|k| k.strip_suffix("']")) {
        return meta.annotations.as_ref().and_then(|l| l.get(key)).cloned().unwrap_or_default();
    }
    let spec = pod.spec.as_ref();
    let status = pod.status.as_ref();
    match path {
        "metadata.name" => meta.name.clone().unwrap_or_default(),
        "metadata.namespace" => meta.namespace.clone().unwrap_or_default(),
        "metadata.uid" => meta.uid.clone().unwrap_or_default(),
        "metadata.labels" => render(&meta.labels),
        "metadata.annotations" => render(&meta.annotations),
        "spec.nodeName" => spec.and_then(|s| s.node_name.clone()).unwrap_or_default(),
        "spec.serviceAccountName" => spec.and_then(|s| s.service_account_name.clone()).unwrap_or_default(),
        "status.podIP" => status.and_then(|s| s.pod_ip.clone()).unwrap_or_default(),
        "status.podIPs" => {
            status.and_then(|s| s.pod_ips.as_ref()).map(|ips| ips.iter().map(|i| i.ip.clone()).collect::<Vec<_>>().join(",")).unwrap_or_default()
        }
        "status.hostIP" => status.and_then(|s| s.host_ip.clone()).unwrap_or_default(),
        "status.hostIPs" => {
            status.and_then(|s| s.host_ips.as_ref()).map(|ips| ips.iter().map(|i| i.ip.clone()).collect::<Vec<_>>().join(",")).unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// The resource value a downward-API volume file shows (resourceFieldRef).
pub fn resource_value(pod: &Pod, container: &str, resource: &str, divisor: Option<&str>, node_allocatable: &BTreeMap<String, i128>) -> String {
    let found = pod
        .spec
        .as_ref()
        .and_then(|s| s.containers.iter().chain(s.init_containers.iter().flatten()).find(|c| c.name == container).cloned())
        .unwrap_or_default();
    resource_field(&found, resource, divisor, node_allocatable)
}
