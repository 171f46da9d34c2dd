//! Validation with the API server's field paths and messages
//! (k8s.io/apimachinery/pkg/util/validation, pkg/apis/core/validation, pkg/apis/apps/validation).

use crate::object::{Object, Scope};
use crate::selector::Selector;
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use std::fmt;

/// What is wrong with one field (field.Error's Type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// `Required value`.
    Required,
    /// `Invalid value: <value>: <detail>`; the value is rendered already (quoted string or number).
    Invalid(String),
    /// `Unsupported value: <value>: supported values: ...`.
    NotSupported(String, Vec<&'static str>),
    /// `Duplicate value: <value>`.
    Duplicate(String),
    /// `Forbidden: <detail>`.
    Forbidden,
}

/// One field error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field path (`spec.containers[0].image`).
    pub path: String,
    /// What kind of error.
    pub kind: FieldErrorKind,
    /// Extra detail.
    pub detail: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            FieldErrorKind::Required => write!(f, "{}: Required value", self.path)?,
            FieldErrorKind::Invalid(value) => write!(f, "{}: Invalid value: {}", self.path, value)?,
            FieldErrorKind::NotSupported(value, allowed) => {
                let allowed: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
                return write!(f, "{}: Unsupported value: {}: supported values: {}", self.path, value, allowed.join(", "));
            }
            FieldErrorKind::Duplicate(value) => return write!(f, "{}: Duplicate value: {}", self.path, value),
            FieldErrorKind::Forbidden => write!(f, "{}: Forbidden", self.path)?,
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

fn required(path: impl Into<String>, detail: &str) -> FieldError {
    FieldError { path: path.into(), kind: FieldErrorKind::Required, detail: detail.into() }
}

fn invalid(path: impl Into<String>, value: String, detail: impl Into<String>) -> FieldError {
    FieldError { path: path.into(), kind: FieldErrorKind::Invalid(value), detail: detail.into() }
}

/// Renders a field error list as the API server's Invalid status message:
/// `Pod "x" is invalid: spec.containers[0].image: Required value` (several errors in `[...]`).
pub fn invalid_message(kind: &str, name: &str, errors: &[FieldError]) -> String {
    let rendered: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    if rendered.len() == 1 {
        format!("{kind} {name:?} is invalid: {}", rendered[0])
    } else {
        format!("{kind} {name:?} is invalid: [{}]", rendered.join(", "))
    }
}

const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn is_label_char(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'
}

fn valid_dns1123_label(text: &str) -> bool {
    let b = text.as_bytes();
    !b.is_empty() && b.iter().all(|&c| is_label_char(c)) && b[0] != b'-' && b[b.len() - 1] != b'-'
}

/// IsDNS1123Label: the error messages for a label (container names, namespace names, ...).
pub fn dns1123_label_errors(text: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if text.len() > 63 {
        errors.push("must be no more than 63 characters".to_string());
    }
    if !valid_dns1123_label(text) {
        errors.push(DNS1123_LABEL_MSG.to_string());
    }
    errors
}

/// IsDNS1123Subdomain: the error messages for most object names.
pub fn dns1123_subdomain_errors(text: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if text.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    if text.is_empty() || !text.split('.').all(valid_dns1123_label) {
        errors.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errors
}

/// Validates an object about to be created. Returns every error found (empty = valid).
pub fn validate_create(object: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let scope = object.info().map(|i| i.scope).unwrap_or(Scope::Namespaced);
    validate_metadata(object.metadata(), object.kind(), scope, &mut errors);
    match object {
        Object::Pod(pod) => match pod.spec.as_ref() {
            Some(spec) => validate_pod_spec(spec, "spec", &mut errors),
            None => errors.push(required("spec", "")),
        },
        Object::Deployment(d) => {
            if let Some(spec) = d.spec.as_ref() {
                validate_replicas(spec.replicas, &mut errors);
                validate_selector_and_template(Some(&spec.selector), Some(&spec.template), &mut errors);
                if let Some(limit) = spec.revision_history_limit {
                    non_negative(limit as i64, "spec.revisionHistoryLimit", &mut errors);
                }
                if let Some(seconds) = spec.min_ready_seconds {
                    non_negative(seconds as i64, "spec.minReadySeconds", &mut errors);
                }
            }
        }
        Object::ReplicaSet(rs) => {
            if let Some(spec) = rs.spec.as_ref() {
                validate_replicas(spec.replicas, &mut errors);
                validate_selector_and_template(Some(&spec.selector), spec.template.as_ref(), &mut errors);
            }
        }
        Object::Service(svc) => validate_service(svc, &mut errors),
        Object::ConfigMap(cm) => {
            for key in cm.data.iter().flat_map(|d| d.keys()).chain(cm.binary_data.iter().flat_map(|d| d.keys())) {
                config_key(key, &format!("data[{key}]"), &mut errors);
            }
        }
        Object::Secret(secret) => {
            for key in secret.data.iter().flat_map(|d| d.keys()) {
                config_key(key, &format!("data[{key}]"), &mut errors);
            }
        }
        Object::Dynamic(d) => validate_json_kind(&d.kind, &serde_json::Value::Object(d.rest.clone()), &mut errors),
        Object::Node(_) | Object::Namespace(_) => {}
        _ => {}
    }
    errors
}

fn config_key(key: &str, path: &str, errors: &mut Vec<FieldError>) {
    let ok = !key.is_empty() && key.len() <= 253 && key.chars().all(|c| c.is_ascii_alphanumeric() || "-._".contains(c)) && key != "." && key != "..";
    if !ok {
        errors.push(invalid(path, format!("{key:?}"), "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"));
    }
}

fn not_supported(path: impl Into<String>, value: &str, allowed: Vec<&'static str>) -> FieldError {
    FieldError { path: path.into(), kind: FieldErrorKind::NotSupported(format!("{value:?}"), allowed), detail: String::new() }
}

/// ValidateService (the common rules).
fn validate_service(svc: &k8s_openapi::api::core::v1::Service, errors: &mut Vec<FieldError>) {
    let Some(spec) = svc.spec.as_ref() else { return };
    let type_ = spec.type_.as_deref().unwrap_or("ClusterIP");
    if !["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"].contains(&type_) {
        errors.push(not_supported("spec.type", type_, vec!["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]));
    }
    let headless = spec.cluster_ip.as_deref() == Some("None");
    let ports = spec.ports.clone().unwrap_or_default();
    if ports.is_empty() && type_ != "ExternalName" && !headless {
        errors.push(required("spec.ports", ""));
    }
    if type_ == "ExternalName" && spec.external_name.as_deref().unwrap_or("").is_empty() {
        errors.push(required("spec.externalName", ""));
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        if ports.len() > 1 && port.name.as_deref().unwrap_or("").is_empty() {
            errors.push(required(format!("spec.ports[{i}].name"), ""));
        }
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            if !names.insert(name.to_string()) {
                errors.push(FieldError { path: format!("spec.ports[{i}].name"), kind: FieldErrorKind::Duplicate(format!("{name:?}")), detail: String::new() });
            }
        }
        if !(1..=65535).contains(&port.port) {
            errors.push(invalid(format!("spec.ports[{i}].port"), port.port.to_string(), "must be between 1 and 65535, inclusive"));
        }
        if let Some(protocol) = port.protocol.as_deref() {
            if !["TCP", "UDP", "SCTP"].contains(&protocol) {
                errors.push(not_supported(format!("spec.ports[{i}].protocol"), protocol, vec!["SCTP", "TCP", "UDP"]));
            }
        }
        if let Some(node_port) = port.node_port {
            if type_ == "ClusterIP" {
                errors.push(FieldError {
                    path: format!("spec.ports[{i}].nodePort"),
                    kind: FieldErrorKind::Forbidden,
                    detail: "may not be used when `type` is 'ClusterIP'".into(),
                });
            } else if !(1..=65535).contains(&node_port) {
                errors.push(invalid(format!("spec.ports[{i}].nodePort"), node_port.to_string(), "must be between 1 and 65535, inclusive"));
            }
        }
    }
}

fn int_at(value: &serde_json::Value, pointer: &str) -> Option<i64> {
    value.pointer(pointer).and_then(|v| v.as_i64())
}

/// Validation of the JSON-kept kinds the docs use most (apps, batch, autoscaling, policy, PVCs).
fn validate_json_kind(kind: &str, body: &serde_json::Value, errors: &mut Vec<FieldError>) {
    let template = || -> Option<PodTemplateSpec> { body.pointer("/spec/template").and_then(|t| serde_json::from_value(t.clone()).ok()) };
    let selector = || -> Option<LabelSelector> { body.pointer("/spec/selector").and_then(|t| serde_json::from_value(t.clone()).ok()) };
    match kind {
        "StatefulSet" | "DaemonSet" => {
            if kind == "StatefulSet" {
                if let Some(r) = int_at(body, "/spec/replicas") {
                    non_negative(r, "spec.replicas", errors);
                }
            }
            validate_selector_and_template(selector().as_ref(), template().as_ref(), errors);
        }
        "ReplicationController" => {
            if let Some(r) = int_at(body, "/spec/replicas") {
                non_negative(r, "spec.replicas", errors);
            }
            if body.pointer("/spec/template").is_none() {
                errors.push(required("spec.template", ""));
            }
        }
        "Job" => validate_job_spec(body.get("spec"), "spec", errors),
        "CronJob" => {
            match body.pointer("/spec/schedule").and_then(|s| s.as_str()) {
                None | Some("") => errors.push(required("spec.schedule", "")),
                Some(_) => {}
            }
            if let Some(policy) = body.pointer("/spec/concurrencyPolicy").and_then(|s| s.as_str()) {
                if !["Allow", "Forbid", "Replace"].contains(&policy) {
                    errors.push(not_supported("spec.concurrencyPolicy", policy, vec!["Allow", "Forbid", "Replace"]));
                }
            }
            validate_job_spec(body.pointer("/spec/jobTemplate/spec"), "spec.jobTemplate.spec", errors);
        }
        "HorizontalPodAutoscaler" => {
            let max = int_at(body, "/spec/maxReplicas");
            match max {
                None => errors.push(required("spec.maxReplicas", "")),
                Some(m) if m < 1 => errors.push(invalid("spec.maxReplicas", m.to_string(), "must be greater than or equal to 1")),
                _ => {}
            }
            if let (Some(min), Some(max)) = (int_at(body, "/spec/minReplicas"), max) {
                if min < 1 {
                    errors.push(invalid("spec.minReplicas", min.to_string(), "must be greater than or equal to 1"));
                } else if min > max {
                    errors.push(invalid("spec.maxReplicas", max.to_string(), "must be greater than or equal to `minReplicas`"));
                }
            }
            if body.pointer("/spec/scaleTargetRef/name").and_then(|n| n.as_str()).unwrap_or("").is_empty() {
                errors.push(required("spec.scaleTargetRef.name", ""));
            }
        }
        "PodDisruptionBudget" if body.pointer("/spec/minAvailable").is_some() && body.pointer("/spec/maxUnavailable").is_some() => {
            errors.push(invalid("spec", "{...}".into(), "minAvailable and maxUnavailable cannot be both set"));
        }
        "PersistentVolumeClaim" => {
            if body.pointer("/spec/accessModes").and_then(|a| a.as_array()).is_none_or(|a| a.is_empty()) && body.pointer("/spec/dataSourceRef").is_none() {
                errors.push(required("spec.accessModes", "at least 1 access mode is required"));
            }
            if body.pointer("/spec/resources/requests/storage").is_none() {
                errors.push(required("spec.resources[storage]", ""));
            }
        }
        _ => {}
    }
}

fn validate_job_spec(spec: Option<&serde_json::Value>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(spec) = spec else {
        errors.push(required(path, ""));
        return;
    };
    for field in ["parallelism", "completions", "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"] {
        if let Some(v) = spec.get(field).and_then(|v| v.as_i64()) {
            non_negative(v, &format!("{path}.{field}"), errors);
        }
    }
    let template: Option<PodTemplateSpec> = spec.get("template").and_then(|t| serde_json::from_value(t.clone()).ok());
    match template.as_ref().and_then(|t| t.spec.as_ref()) {
        None => errors.push(required(format!("{path}.template.spec"), "")),
        Some(pod) => {
            validate_pod_spec(pod, &format!("{path}.template.spec"), errors);
            match pod.restart_policy.as_deref() {
                Some("OnFailure") | Some("Never") => {}
                Some(other) => errors.push(not_supported(format!("{path}.template.spec.restartPolicy"), other, vec!["OnFailure", "Never"])),
                None => errors.push(required(format!("{path}.template.spec.restartPolicy"), "valid values: \"OnFailure\", \"Never\"")),
            }
        }
    }
}

fn non_negative(value: i64, path: &str, errors: &mut Vec<FieldError>) {
    if value < 0 {
        errors.push(invalid(path, value.to_string(), "must be greater than or equal to 0"));
    }
}

fn validate_replicas(replicas: Option<i32>, errors: &mut Vec<FieldError>) {
    if let Some(replicas) = replicas {
        non_negative(replicas as i64, "spec.replicas", errors);
    }
}

fn validate_selector_and_template(selector: Option<&LabelSelector>, template: Option<&PodTemplateSpec>, errors: &mut Vec<FieldError>) {
    let selector = match selector {
        Some(s) if s.match_labels.as_ref().is_some_and(|m| !m.is_empty()) || s.match_expressions.as_ref().is_some_and(|e| !e.is_empty()) => s,
        _ => {
            errors.push(required("spec.selector", ""));
            errors.push(invalid("spec.selector", "{}".into(), "empty selector is invalid for deployment"));
            return;
        }
    };
    let Some(template) = template else {
        errors.push(required("spec.template", ""));
        return;
    };
    let labels = template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    if !Selector::from_label_selector(selector).matches(labels) {
        let rendered = labels
            .map(|l| format!("map[string]string{{{}}}", l.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect::<Vec<_>>().join(", ")))
            .unwrap_or_else(|| "map[string]string(nil)".into());
        errors.push(invalid("spec.template.metadata.labels", rendered, "`selector` does not match template `labels`"));
    }
    match template.spec.as_ref() {
        Some(spec) => {
            validate_pod_spec(spec, "spec.template.spec", errors);
            if let Some(policy) = spec.restart_policy.as_deref() {
                if policy != "Always" {
                    errors.push(FieldError {
                        path: "spec.template.spec.restartPolicy".into(),
                        kind: FieldErrorKind::NotSupported(format!("{policy:?}"), vec!["Always"]),
                        detail: String::new(),
                    });
                }
            }
        }
        None => errors.push(required("spec.template.spec", "")),
    }
}

fn validate_metadata(meta: &ObjectMeta, kind: &str, scope: Scope, errors: &mut Vec<FieldError>) {
    match (meta.name.as_deref(), meta.generate_name.as_deref()) {
        (None | Some(""), None | Some("")) => errors.push(required("metadata.name", "name or generateName is required")),
        (Some(name), _) if !name.is_empty() => {
            let problems = if kind == "Namespace" { dns1123_label_errors(name) } else { dns1123_subdomain_errors(name) };
            for problem in problems {
                errors.push(invalid("metadata.name", format!("{name:?}"), problem));
            }
        }
        _ => {}
    }
    if scope == Scope::Cluster && meta.namespace.as_deref().is_some_and(|n| !n.is_empty()) {
        // The API server ignores (clears) namespace for cluster-scoped kinds; no error.
    }
    for (key, value) in meta.labels.iter().flatten() {
        if let Some(problem) = label_key_error(key) {
            errors.push(invalid("metadata.labels", format!("{key:?}"), problem));
        }
        if let Some(problem) = label_value_error(value) {
            errors.push(invalid("metadata.labels".to_string(), format!("{value:?}"), problem));
        }
    }
}

/// IsQualifiedName for label and annotation keys.
pub fn label_key_error(key: &str) -> Option<String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        if !dns1123_subdomain_errors(prefix).is_empty() {
            return Some("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into());
        }
    }
    if name.is_empty() || name.len() > 63 || !qualified_name_chars(name) {
        return Some("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into());
    }
    None
}

fn qualified_name_chars(text: &str) -> bool {
    let b = text.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// IsValidLabelValue.
pub fn label_value_error(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    if value.len() > 63 {
        return Some("must be no more than 63 characters".into());
    }
    if !qualified_name_chars(value) {
        return Some("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into());
    }
    None
}

/// ValidatePodSpec (the subset kubesim enforces; see README for what is not checked).
pub fn validate_pod_spec(spec: &PodSpec, path: &str, errors: &mut Vec<FieldError>) {
    if spec.containers.is_empty() {
        errors.push(required(format!("{path}.containers"), ""));
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        validate_container(c, &format!("{path}.initContainers[{i}]"), &mut names, errors);
    }
    for (i, c) in spec.containers.iter().enumerate() {
        validate_container(c, &format!("{path}.containers[{i}]"), &mut names, errors);
    }
    if let Some(policy) = spec.restart_policy.as_deref() {
        if !["Always", "OnFailure", "Never"].contains(&policy) {
            errors.push(FieldError {
                path: format!("{path}.restartPolicy"),
                kind: FieldErrorKind::NotSupported(format!("{policy:?}"), vec!["Always", "OnFailure", "Never"]),
                detail: String::new(),
            });
        }
    }
    if let Some(policy) = spec.dns_policy.as_deref() {
        if !["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"].contains(&policy) {
            errors.push(FieldError {
                path: format!("{path}.dnsPolicy"),
                kind: FieldErrorKind::NotSupported(format!("{policy:?}"), vec!["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]),
                detail: String::new(),
            });
        }
    }
    if let Some(grace) = spec.termination_grace_period_seconds {
        non_negative(grace, &format!("{path}.terminationGracePeriodSeconds"), errors);
    }
}

fn validate_container(container: &Container, path: &str, names: &mut std::collections::BTreeSet<String>, errors: &mut Vec<FieldError>) {
    if container.name.is_empty() {
        errors.push(required(format!("{path}.name"), ""));
    } else {
        for problem in dns1123_label_errors(&container.name) {
            errors.push(invalid(format!("{path}.name"), format!("{:?}", container.name), problem));
        }
        if !names.insert(container.name.clone()) {
            errors.push(FieldError { path: format!("{path}.name"), kind: FieldErrorKind::Duplicate(format!("{:?}", container.name)), detail: String::new() });
        }
    }
    match container.image.as_deref() {
        None | Some("") => errors.push(required(format!("{path}.image"), "")),
        Some(image) if image.trim() != image => {
            errors.push(invalid(format!("{path}.image"), format!("{image:?}"), "must not have leading or trailing whitespace"));
        }
        _ => {}
    }
    if let Some(policy) = container.image_pull_policy.as_deref() {
        if !["Always", "IfNotPresent", "Never"].contains(&policy) {
            errors.push(FieldError {
                path: format!("{path}.imagePullPolicy"),
                kind: FieldErrorKind::NotSupported(format!("{policy:?}"), vec!["Always", "IfNotPresent", "Never"]),
                detail: String::new(),
            });
        }
    }
    for (i, port) in container.ports.iter().flatten().enumerate() {
        if !(1..=65535).contains(&port.container_port) {
            errors.push(invalid(format!("{path}.ports[{i}].containerPort"), port.container_port.to_string(), "must be between 1 and 65535, inclusive"));
        }
    }
    if let Some(resources) = container.resources.as_ref() {
        for (map, name) in [(&resources.requests, "requests"), (&resources.limits, "limits")] {
            for (resource, quantity) in map.iter().flatten() {
                match crate::quantity::parse_milli(&quantity.0) {
                    Err(e) => errors.push(invalid(format!("{path}.resources.{name}[{resource}]"), format!("{:?}", quantity.0), e.to_string())),
                    Ok(v) if v < 0 => {
                        errors.push(invalid(format!("{path}.resources.{name}[{resource}]"), format!("{:?}", quantity.0), "must be greater than or equal to 0"))
                    }
                    Ok(_) => {}
                }
            }
        }
        if let (Some(requests), Some(limits)) = (&resources.requests, &resources.limits) {
            for (resource, request) in requests {
                if let Some(limit) = limits.get(resource) {
                    if let (Ok(r), Ok(l)) = (crate::quantity::parse_milli(&request.0), crate::quantity::parse_milli(&limit.0)) {
                        if r > l {
                            errors.push(invalid(
                                format!("{path}.resources.requests"),
                                format!("{:?}", request.0),
                                format!("must be less than or equal to {resource} limit of {}", limit.0),
                            ));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode_document, parse_documents};

    fn validate_yaml(text: &str) -> String {
        let (docs, errs) = parse_documents("t.yaml", text);
        assert!(errs.is_empty(), "{errs:?}");
        let obj = decode_document("t.yaml", &docs[0]).unwrap().remove(0);
        let errors = validate_create(&obj);
        invalid_message(obj.kind(), obj.name(), &errors)
    }

    // Messages mirror pkg/apis/core/validation/validation_test.go and apimachinery validation.go.
    #[test]
    fn invalid_objects_get_the_api_servers_messages() {
        let cases: &[(&str, &str)] = &[
            ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n",
             "Pod \"x\" is invalid: spec.containers[0].image: Required value"),
            ("apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: c, image: nginx}]}\n",
             "Pod \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of"),
            ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: -2, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: nginx}]}}}\n",
             "Deployment \"d\" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0"),
            ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: c}}, spec: {containers: [{name: c, image: nginx}]}}}\n",
             "Deployment \"d\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"c\"}: `selector` does not match template `labels`"),
            ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {restartPolicy: Sometimes, containers: [{name: c, image: nginx}]}\n",
             "Pod \"x\" is invalid: spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""),
            ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: nginx}, {name: c, image: redis}]}\n",
             "Pod \"x\" is invalid: spec.containers[1].name: Duplicate value: \"c\""),
        ];
        for (yaml, want) in cases {
            let got = validate_yaml(yaml);
            assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
        }
    }

    #[test]
    fn more_kinds_get_the_api_servers_messages() {
        let cases: &[(&str, &str)] = &[
            ("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: {a: b}}\n",
             "Service \"s\" is invalid: spec.ports: Required value"),
            ("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: Magic, ports: [{port: 80}]}\n",
             "Service \"s\" is invalid: spec.type: Unsupported value: \"Magic\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""),
            ("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 70000}]}\n",
             "Service \"s\" is invalid: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"),
            ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {restartPolicy: Always, containers: [{name: c, image: busybox}]}}}\n",
             "Job \"j\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\""),
            ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {backoffLimit: -1, template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n",
             "Job \"j\" is invalid: spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
            ("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}\n",
             "CronJob \"c\" is invalid: spec.schedule: Required value"),
            ("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 0}\n",
             "HorizontalPodAutoscaler \"h\" is invalid: spec.maxReplicas: Invalid value: 0: must be greater than or equal to 1"),
            ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: x}}, spec: {containers: [{name: c, image: nginx}]}}}\n",
             "StatefulSet \"s\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"x\"}: `selector` does not match template `labels`"),
            ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p}\nspec: {resources: {requests: {storage: 1Gi}}}\n",
             "PersistentVolumeClaim \"p\" is invalid: spec.accessModes: Required value: at least 1 access mode is required"),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {'bad key': x}\n",
             "ConfigMap \"c\" is invalid: data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters"),
        ];
        for (yaml, want) in cases {
            let got = validate_yaml(yaml);
            assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
        }
    }

    #[test]
    fn valid_names_pass() {
        assert!(dns1123_subdomain_errors("my-app.example").is_empty());
        assert!(!dns1123_label_errors("a.b").is_empty());
        assert!(label_key_error("app.kubernetes.io/name").is_none());
        assert!(label_key_error("-bad").is_some());
    }
}
