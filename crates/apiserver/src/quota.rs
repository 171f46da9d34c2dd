//! The LimitRanger and ResourceQuota admission plugins (plugin/pkg/admission/limitranger,
//! staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota with the core evaluators).
//! LimitRange and ResourceQuota objects are JSON-kept (`DynamicObject`).

use crate::error::{ApiError, Result};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Pod};
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::quantity::parse_milli;
use kubesim_store::{resource_of, Store};
use std::collections::BTreeMap;

fn json_quantities(value: Option<&serde_json::Value>) -> BTreeMap<String, String> {
    value
        .and_then(|v| v.as_object())
        .map(|m| {
            m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())).or_else(|| v.as_i64().map(|n| (k.clone(), n.to_string())))).collect()
        })
        .unwrap_or_default()
}

fn milli(text: &str) -> i128 {
    parse_milli(text).unwrap_or(0)
}

/// LimitRanger for a pod: defaults (default → limits, defaultRequest → requests) then the
/// min / max constraints of every `type: Container` item in the pod's namespace.
pub fn limit_ranger_pod(pod: &mut Pod, store: &Store) -> Result<()> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let Some(info) = kind_info("v1", "LimitRange") else { return Ok(()) };
    let mut errors = Vec::new();
    let ranges: Vec<serde_json::Value> = store
        .list(resource_of(info), Some(&namespace))
        .filter_map(|o| match o.as_ref() {
            Object::Dynamic(d) => d.rest.get("spec").cloned(),
            _ => None,
        })
        .collect();
    for spec in ranges {
        for item in spec.get("limits").and_then(|l| l.as_array()).into_iter().flatten() {
            if item.get("type").and_then(|t| t.as_str()) != Some("Container") {
                continue;
            }
            let max = json_quantities(item.get("max"));
            let min = json_quantities(item.get("min"));
            // SetDefaults_LimitRangeItem: default ← max; defaultRequest ← default.
            let mut default = json_quantities(item.get("default"));
            for (k, v) in &max {
                default.entry(k.clone()).or_insert(v.clone());
            }
            let mut default_request = json_quantities(item.get("defaultRequest"));
            for (k, v) in &default {
                default_request.entry(k.clone()).or_insert(v.clone());
            }
            let Some(spec) = pod.spec.as_mut() else { continue };
            for container in spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten()) {
                apply_container_defaults(container, &default, &default_request);
                check_container(container, &min, &max, &mut errors);
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        let message = if errors.len() == 1 { errors.remove(0) } else { format!("[{}]", errors.join(", ")) };
        Err(ApiError::forbidden("pods", &name, &message))
    }
}

fn apply_container_defaults(container: &mut Container, default: &BTreeMap<String, String>, default_request: &BTreeMap<String, String>) {
    let resources = container.resources.get_or_insert_with(Default::default);
    let had_limits: Vec<String> = resources.limits.iter().flatten().map(|(k, _)| k.clone()).collect();
    let limits = resources.limits.get_or_insert_with(Default::default);
    for (k, v) in default {
        limits.entry(k.clone()).or_insert_with(|| Quantity(v.clone()));
    }
    if limits.is_empty() {
        resources.limits = None;
    }
    let requests = resources.requests.get_or_insert_with(Default::default);
    for (k, v) in default_request {
        // A limit set by the user (not defaulted) is the request's default (defaults.go).
        let value = if had_limits.contains(k) { resources.limits.as_ref().and_then(|l| l.get(k)).map(|q| q.0.clone()).unwrap_or(v.clone()) } else { v.clone() };
        requests.entry(k.clone()).or_insert(Quantity(value));
    }
    if requests.is_empty() {
        resources.requests = None;
    }
}

fn check_container(container: &Container, min: &BTreeMap<String, String>, max: &BTreeMap<String, String>, errors: &mut Vec<String>) {
    let resources = container.resources.clone().unwrap_or_default();
    let requests = resources.requests.unwrap_or_default();
    let limits = resources.limits.unwrap_or_default();
    for (resource, enforced) in min {
        match requests.get(resource) {
            None => errors.push(format!("minimum {resource} usage per Container is {enforced}.  No request is specified")),
            Some(r) if milli(&r.0) < milli(enforced) => errors.push(format!("minimum {resource} usage per Container is {enforced}, but request is {}", r.0)),
            _ => {}
        }
        if let Some(l) = limits.get(resource) {
            if milli(&l.0) < milli(enforced) {
                errors.push(format!("minimum {resource} usage per Container is {enforced}, but limit is {}", l.0));
            }
        }
    }
    for (resource, enforced) in max {
        match limits.get(resource) {
            None => errors.push(format!("maximum {resource} usage per Container is {enforced}.  No limit is specified")),
            Some(l) if milli(&l.0) > milli(enforced) => errors.push(format!("maximum {resource} usage per Container is {enforced}, but limit is {}", l.0)),
            _ => {}
        }
        if let Some(r) = requests.get(resource) {
            if milli(&r.0) > milli(enforced) {
                errors.push(format!("maximum {resource} usage per Container is {enforced}, but request is {}", r.0));
            }
        }
    }
}

/// The usage one object adds to a quota (the core quota evaluators), in milli-units.
pub fn usage_of(object: &Object) -> BTreeMap<String, i128> {
    let mut usage = BTreeMap::new();
    let Some(info) = object.info() else { return usage };
    let count_key = if info.group().is_empty() { format!("count/{}", info.plural) } else { format!("count/{}.{}", info.plural, info.group()) };
    usage.insert(count_key, 1000);
    match object {
        Object::Pod(pod) => {
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
            if phase == "Succeeded" || phase == "Failed" {
                return BTreeMap::new();
            }
            usage.insert("pods".into(), 1000);
            let spec = pod.spec.clone().unwrap_or_default();
            for (kind, key) in [
                ("requests", "cpu"),
                ("requests", "memory"),
                ("limits", "cpu"),
                ("limits", "memory"),
                ("requests", "ephemeral-storage"),
                ("limits", "ephemeral-storage"),
            ] {
                let of = |c: &Container| {
                    let r = c.resources.clone().unwrap_or_default();
                    let map = if kind == "requests" { r.requests } else { r.limits };
                    map.and_then(|m| m.get(key).map(|q| milli(&q.0))).unwrap_or(0)
                };
                let sum: i128 = spec.containers.iter().map(of).sum();
                let init = spec.init_containers.iter().flatten().map(of).max().unwrap_or(0);
                let total = sum.max(init);
                usage.insert(format!("{kind}.{key}"), total);
                if kind == "requests" {
                    usage.insert(key.to_string(), total);
                }
            }
        }
        Object::Service(svc) => {
            usage.insert("services".into(), 1000);
            let type_ = svc.spec.as_ref().and_then(|s| s.type_.as_deref()).unwrap_or("ClusterIP");
            let ports = svc.spec.as_ref().and_then(|s| s.ports.as_ref()).map_or(0, |p| p.len()) as i128;
            match type_ {
                "LoadBalancer" => {
                    usage.insert("services.loadbalancers".into(), 1000);
                    usage.insert("services.nodeports".into(), ports * 1000);
                }
                "NodePort" => {
                    usage.insert("services.nodeports".into(), ports * 1000);
                }
                _ => {}
            }
        }
        Object::ConfigMap(_) => {
            usage.insert("configmaps".into(), 1000);
        }
        Object::Secret(_) => {
            usage.insert("secrets".into(), 1000);
        }
        Object::Dynamic(d) => {
            let simple = match d.kind.as_str() {
                "PersistentVolumeClaim" => Some("persistentvolumeclaims"),
                "ReplicationController" => Some("replicationcontrollers"),
                "ResourceQuota" => Some("resourcequotas"),
                _ => None,
            };
            if let Some(key) = simple {
                usage.insert(key.into(), 1000);
            }
            if d.kind == "PersistentVolumeClaim" {
                let storage = d.rest.get("spec").and_then(|s| s.pointer("/resources/requests/storage")).and_then(|v| v.as_str()).map(milli).unwrap_or(0);
                usage.insert("requests.storage".into(), storage);
            }
        }
        _ => {}
    }
    usage
}

fn pretty(map: &BTreeMap<String, String>) -> String {
    map.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// Formats a usage value as quota status shows it (cpu in m/cores, memory and storage binary).
pub fn format_usage(key: &str, milli: i128) -> String {
    if key.contains("memory") || key.contains("storage") {
        kubesim_api::quantity::format_bytes(milli / 1000)
    } else if key.ends_with("cpu") || key == "cpu" {
        kubesim_api::quantity::format_cpu_milli(milli)
    } else {
        (milli / 1000).to_string()
    }
}

/// ResourceQuota admission for a create: the pod quota evaluator's "must specify" check, then
/// every quota in the namespace must still hold with the new object. Returns the quotas whose
/// status.used must be updated (name, new used map).
pub fn check_quota(object: &Object, store: &Store) -> Result<Vec<(String, BTreeMap<String, String>)>> {
    let namespace = object.namespace().to_string();
    let Some(info) = kind_info("v1", "ResourceQuota") else { return Ok(Vec::new()) };
    let quotas: Vec<(String, BTreeMap<String, String>)> = store
        .list(resource_of(info), Some(&namespace))
        .filter_map(|o| match o.as_ref() {
            Object::Dynamic(d) => Some((d.metadata.name.clone().unwrap_or_default(), json_quantities(d.rest.get("spec").and_then(|s| s.get("hard"))))),
            _ => None,
        })
        .collect();
    if quotas.is_empty() {
        return Ok(Vec::new());
    }
    let object_info = object.info();
    let resource = object_info.map(|i| i.qualified_resource()).unwrap_or_default();
    let delta = usage_of(object);
    let mut updates = Vec::new();
    for (quota_name, hard) in quotas {
        // Pods must state requests/limits for every compute resource the quota tracks.
        if let Object::Pod(pod) = object {
            let spec = pod.spec.clone().unwrap_or_default();
            let mut missing = Vec::new();
            for key in hard.keys() {
                let (kind, res) = match key.split_once('.') {
                    Some((k @ ("requests" | "limits"), r)) if r == "cpu" || r == "memory" => (k, r),
                    None if key == "cpu" || key == "memory" => ("requests", key.as_str()),
                    _ => continue,
                };
                let lacking: Vec<String> = spec
                    .containers
                    .iter()
                    .filter(|c| {
                        let r = c.resources.clone().unwrap_or_default();
                        let map = if kind == "requests" { r.requests } else { r.limits };
                        !map.is_some_and(|m| m.contains_key(res))
                    })
                    .map(|c| c.name.clone())
                    .collect();
                if !lacking.is_empty() {
                    missing.push(format!("{kind}.{res} for: {}", lacking.join(",")));
                }
            }
            if !missing.is_empty() {
                kubesim_api::sort::sort(&mut missing);
                return Err(ApiError::forbidden(&resource, object.name(), &format!("failed quota: {quota_name}: must specify {}", missing.join("; "))));
            }
        }
        // Current usage of the namespace, as the quota controller would compute it.
        let mut used: BTreeMap<String, i128> = BTreeMap::new();
        for resource_key in store.resources() {
            for existing in store.list(resource_key, Some(&namespace)) {
                for (k, v) in usage_of(existing) {
                    if hard.contains_key(&k) {
                        *used.entry(k).or_default() += v;
                    }
                }
            }
        }
        let requested: BTreeMap<String, i128> = delta.iter().filter(|(k, v)| hard.contains_key(*k) && **v != 0).map(|(k, v)| (k.clone(), *v)).collect();
        let exceeded: Vec<String> =
            requested.iter().filter(|(k, v)| used.get(*k).copied().unwrap_or(0) + **v > milli(&hard[*k])).map(|(k, _)| k.clone()).collect();
        if !exceeded.is_empty() {
            let pick = |source: &dyn Fn(&str) -> String| exceeded.iter().map(|k| (k.clone(), source(k))).collect::<BTreeMap<_, _>>();
            let requested_s = pick(&|k| format_usage(k, requested[k]));
            let used_s = pick(&|k| format_usage(k, used.get(k).copied().unwrap_or(0)));
            let hard_s = pick(&|k| hard[k].clone());
            return Err(ApiError::forbidden(
                &resource,
                object.name(),
                &format!("exceeded quota: {quota_name}, requested: {}, used: {}, limited: {}", pretty(&requested_s), pretty(&used_s), pretty(&hard_s)),
            ));
        }
        if !requested.is_empty() {
            let new_used: BTreeMap<String, String> =
                hard.keys().map(|k| (k.clone(), format_usage(k, used.get(k).copied().unwrap_or(0) + requested.get(k).copied().unwrap_or(0)))).collect();
            updates.push((quota_name, new_used));
        }
    }
    Ok(updates)
}
