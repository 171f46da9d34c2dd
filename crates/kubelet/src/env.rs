//! The container environment (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables): Service
//! variables, envFrom, env with `$(VAR)` references and valueFrom (fieldRef, configMapKeyRef,
//! secretKeyRef).

use kubesim_api::k8s_openapi::api::core::v1::{Container, Pod};
use kubesim_api::object::Object;
use std::collections::BTreeMap;

/// The container's environment as the kubelet builds it (makeEnvironmentVariables): service
/// variables, envFrom, env with $(VAR) expansion and valueFrom. Missing ConfigMaps/Secrets or
/// keys that are not optional fail with the kubelet's messages.
pub(crate) fn container_env(pod: &Pod, container: &Container, store: &kubesim_store::Store) -> Result<BTreeMap<String, String>, String> {
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
    let mut env = BTreeMap::new();
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
    env.insert("HOSTNAME".to_string(), pod.metadata.name.clone().unwrap_or_default());
    env.insert("PATH".to_string(), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string());
    env.insert("KUBERNETES_SERVICE_HOST".to_string(), "10.96.0.1".to_string());
    env.insert("KUBERNETES_SERVICE_PORT".to_string(), "443".to_string());
    env.insert("KUBERNETES_SERVICE_PORT_HTTPS".to_string(), "443".to_string());
    env.insert("KUBERNETES_PORT".to_string(), "tcp://10.96.0.1:443".to_string());
    env.insert("KUBERNETES_PORT_443_TCP".to_string(), "tcp://10.96.0.1:443".to_string());
    env.insert("KUBERNETES_PORT_443_TCP_ADDR".to_string(), "10.96.0.1".to_string());
    env.insert("KUBERNETES_PORT_443_TCP_PORT".to_string(), "443".to_string());
    env.insert("KUBERNETES_PORT_443_TCP_PROTO".to_string(), "tcp".to_string());
    for var in container.env.iter().flatten() {
        if let Some(value) = &var.value {
            // $(VAR) references to earlier variables, as the kubelet expands them.
            let mut expanded = value.clone();
            for (k, v) in &env {
                expanded = expanded.replace(&format!("$({k})"), v);
            }
            env.insert(var.name.clone(), expanded);
        } else if let Some(field) = var.value_from.as_ref().and_then(|v| v.field_ref.as_ref()) {
            let value = match field.field_path.as_str() {
                "metadata.name" => pod.metadata.name.clone().unwrap_or_default(),
                "metadata.namespace" => pod.metadata.namespace.clone().unwrap_or_default(),
                "metadata.uid" => pod.metadata.uid.clone().unwrap_or_default(),
                "spec.nodeName" => pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default(),
                "spec.serviceAccountName" => pod.spec.as_ref().and_then(|s| s.service_account_name.clone()).unwrap_or_default(),
                "status.podIP" => pod.status.as_ref().and_then(|s| s.pod_ip.clone()).unwrap_or_default(),
                "status.hostIP" => pod.status.as_ref().and_then(|s| s.host_ip.clone()).unwrap_or_default(),
                _ => String::new(),
            };
            env.insert(var.name.clone(), value);
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
    Ok(env)
}
