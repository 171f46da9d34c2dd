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
    /// `Not found: <value>`.
    NotFound(String),
    /// `Forbidden: <detail>`.
    Forbidden,
    /// `Too long: <detail>`.
    TooLong,
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
            FieldErrorKind::NotFound(value) => return write!(f, "{}: Not found: {}", self.path, value),
            FieldErrorKind::Forbidden => write!(f, "{}: Forbidden", self.path)?,
            FieldErrorKind::TooLong => write!(f, "{}: Too long", self.path)?,
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

/// IsDNS1035Label (Service names).
pub fn dns1035_label_errors(text: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if text.len() > 63 {
        errors.push("must be no more than 63 characters".to_string());
    }
    let b = text.as_bytes();
    let ok = !b.is_empty() && b[0].is_ascii_lowercase() && b.iter().all(|&c| is_label_char(c)) && b[b.len() - 1] != b'-';
    if !ok {
        errors.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string());
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

/// path.IsValidPathSegmentName.
pub fn path_segment_name_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"].iter().filter(|c| name.contains(**c)).map(|c| format!("may not contain '{c}'")).collect()
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
                validate_selector_and_template(typed_selector(&spec.selector), Some(&spec.template), "deployment", "ReplicaSet", &mut errors);
                let json = serde_json::to_value(spec).unwrap_or_default();
                validate_deployment_strategy(&json, &mut errors);
            }
        }
        Object::ReplicaSet(rs) => {
            if let Some(spec) = rs.spec.as_ref() {
                validate_replicas(spec.replicas, &mut errors);
                if let Some(seconds) = spec.min_ready_seconds {
                    non_negative(seconds as i64, "spec.minReadySeconds", &mut errors);
                }
                validate_selector_and_template(typed_selector(&spec.selector), spec.template.as_ref(), "deployment", "ReplicaSet", &mut errors);
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
        Object::Ingress(ingress) => validate_ingress_spec(ingress.spec.as_ref(), &mut errors),
        Object::IngressClass(class) => validate_ingress_class_spec(class.spec.as_ref(), &mut errors),
        Object::Dynamic(d) => validate_json_kind(&d.kind, &d.metadata, &serde_json::Value::Object(d.rest.clone()), &mut errors),
        Object::VolumeAttachment(va) => validate_volume_attachment(va, &mut errors),
        Object::CSIDriver(driver) => validate_csi_driver(driver, &mut errors),
        Object::CSINode(node) => validate_csi_node(node, &mut errors),
        Object::Node(_) | Object::Namespace(_) => {}
        _ => {}
    }
    errors
}

/// validateVolumeAttachmentSpec (pkg/apis/storage/validation): an attacher, exactly one
/// source, a valid node name.
fn validate_volume_attachment(va: &k8s_openapi::api::storage::v1::VolumeAttachment, errors: &mut Vec<FieldError>) {
    let spec = &va.spec;
    if spec.attacher.is_empty() {
        errors.push(required("spec.attacher", ""));
    }
    const ONE_SOURCE: &str = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
    match (&spec.source.inline_volume_spec, &spec.source.persistent_volume_name) {
        (None, None) => errors.push(required("spec.source", ONE_SOURCE)),
        (Some(_), Some(_)) => errors.push(FieldError { path: "spec.source".into(), kind: FieldErrorKind::Forbidden, detail: ONE_SOURCE.into() }),
        (None, Some(name)) if name.is_empty() => errors.push(required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName")),
        _ => {}
    }
    for problem in dns1123_subdomain_errors(&spec.node_name) {
        errors.push(invalid("spec.nodeName", format!("{:?}", spec.node_name), problem));
    }
}

/// A CSI driver name (ValidateCSIDriverName): at most 63 characters, a DNS-1123 subdomain once
/// lower-cased.
fn csi_driver_name_errors(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    if name.is_empty() {
        errors.push(required(path, ""));
        return;
    }
    if name.len() > 63 {
        errors.push(FieldError { path: path.into(), kind: FieldErrorKind::Invalid(format!("{name:?}")), detail: "must be no more than 63 characters".into() });
    }
    for problem in dns1123_subdomain_errors(&name.to_ascii_lowercase()) {
        errors.push(invalid(path, format!("{name:?}"), problem));
    }
}

/// ValidateCSIDriver: the name, and the enumerated spec fields.
fn validate_csi_driver(driver: &k8s_openapi::api::storage::v1::CSIDriver, errors: &mut Vec<FieldError>) {
    csi_driver_name_errors(driver.metadata.name.as_deref().unwrap_or(""), "metadata.name", errors);
    let spec = &driver.spec;
    if spec.attach_required.is_none() {
        errors.push(required("spec.attachRequired", ""));
    }
    if let Some(policy) = spec.fs_group_policy.as_deref() {
        if !["File", "None", "ReadWriteOnceWithFSType"].contains(&policy) {
            errors.push(not_supported("spec.fsGroupPolicy", policy, vec!["File", "None", "ReadWriteOnceWithFSType"]));
        }
    }
    for (i, mode) in spec.volume_lifecycle_modes.iter().flatten().enumerate() {
        if mode != "Persistent" && mode != "Ephemeral" {
            errors.push(not_supported(format!("spec.volumeLifecycleModes[{i}]"), mode, vec!["Ephemeral", "Persistent"]));
        }
    }
}

/// ValidateCSINode: each driver named once, validly, with a node ID of at most 192 characters.
fn validate_csi_node(node: &k8s_openapi::api::storage::v1::CSINode, errors: &mut Vec<FieldError>) {
    let mut seen = std::collections::BTreeSet::new();
    for (i, driver) in node.spec.drivers.iter().enumerate() {
        let path = format!("spec.drivers[{i}]");
        csi_driver_name_errors(&driver.name, &format!("{path}.name"), errors);
        if !seen.insert(driver.name.clone()) {
            errors.push(FieldError { path: format!("{path}.name"), kind: FieldErrorKind::Duplicate(format!("{:?}", driver.name)), detail: String::new() });
        }
        if driver.node_id.is_empty() {
            errors.push(required(format!("{path}.nodeID"), ""));
        } else if driver.node_id.len() > 192 {
            errors.push(invalid(format!("{path}.nodeID"), format!("{:?}", driver.node_id), "must be 192 characters or less"));
        }
        for (j, key) in driver.topology_keys.iter().flatten().enumerate() {
            if let Some(problem) = label_key_error(key) {
                errors.push(invalid(format!("{path}.topologyKeys[{j}]"), format!("{key:?}"), problem));
            }
        }
    }
}

/// What ValidateIngressCreate adds to the rules creates and updates share: the legacy
/// `kubernetes.io/ingress.class` annotation must agree with `spec.ingressClassName`.
pub fn validate_create_only(object: &Object) -> Vec<FieldError> {
    let Object::Ingress(ingress) = object else { return Vec::new() };
    let annotation = ingress.metadata.annotations.as_ref().and_then(|a| a.get(INGRESS_CLASS_ANNOTATION));
    let class = ingress.spec.as_ref().and_then(|s| s.ingress_class_name.as_ref());
    match (annotation, class) {
        (Some(annotation), Some(class)) if annotation != class => {
            vec![invalid(format!("annotations.{INGRESS_CLASS_ANNOTATION}"), format!("{annotation:?}"), "must match `ingressClassName` when both are specified")]
        }
        _ => Vec::new(),
    }
}

/// The legacy class annotation (networking/v1beta1 AnnotationIngressClass).
pub const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

const WILDCARD_DNS1123_SUBDOMAIN_MSG: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// IsWildcardDNS1123Subdomain (`*.example.com`).
pub fn wildcard_dns1123_subdomain_errors(text: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if text.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    let ok = text.strip_prefix("*.").is_some_and(|rest| !rest.is_empty() && rest.split('.').all(valid_dns1123_label));
    if !ok {
        errors.push(WILDCARD_DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errors
}

/// Whether a host is an IPv4 or IPv6 literal (netutils.ParseIPSloppy).
fn is_ip_literal(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
        || host.split('.').count() == 4 && host.split('.').all(|o| !o.is_empty() && o.len() <= 3 && o.parse::<u8>().is_ok())
}

/// ValidateIngressSpec (pkg/apis/networking/validation): rules or a default backend, each
/// rule's host, paths and backends, the TLS hosts and secret names, the class name.
fn validate_ingress_spec(spec: Option<&k8s_openapi::api::networking::v1::IngressSpec>, errors: &mut Vec<FieldError>) {
    let default = Default::default();
    let spec = spec.unwrap_or(&default);
    let rules = spec.rules.as_deref().unwrap_or(&[]);
    if rules.is_empty() && spec.default_backend.is_none() {
        // field.Invalid renders the Go value: a nil or empty []networking.IngressRule.
        let value = if spec.rules.is_some() { "[]networking.IngressRule{}" } else { "[]networking.IngressRule(nil)" };
        errors.push(invalid("spec", value.to_string(), "either `defaultBackend` or `rules` must be specified"));
    }
    if let Some(backend) = &spec.default_backend {
        validate_ingress_backend(backend, "spec.defaultBackend", errors);
    }
    for (i, rule) in rules.iter().enumerate() {
        let path = format!("spec.rules[{i}]");
        if let Some(host) = rule.host.as_deref().filter(|h| !h.is_empty()) {
            if is_ip_literal(host) {
                errors.push(invalid(format!("{path}.host"), format!("{host:?}"), "must be a DNS name, not an IP address"));
            }
            let problems = if host.contains('*') { wildcard_dns1123_subdomain_errors(host) } else { dns1123_subdomain_errors(host) };
            for problem in problems {
                errors.push(invalid(format!("{path}.host"), format!("{host:?}"), problem));
            }
        }
        let Some(http) = &rule.http else { continue };
        if http.paths.is_empty() {
            errors.push(required(format!("{path}.http.paths"), ""));
        }
        for (j, p) in http.paths.iter().enumerate() {
            validate_http_ingress_path(p, &format!("{path}.http.paths[{j}]"), errors);
        }
    }
    for (i, tls) in spec.tls.iter().flatten().enumerate() {
        for (j, host) in tls.hosts.iter().flatten().enumerate() {
            let problems = if host.contains('*') { wildcard_dns1123_subdomain_errors(host) } else { dns1123_subdomain_errors(host) };
            for problem in problems {
                errors.push(invalid(format!("spec.tls[{i}].hosts[{j}]"), format!("{host:?}"), problem));
            }
        }
        if let Some(secret) = tls.secret_name.as_deref().filter(|s| !s.is_empty()) {
            for problem in dns1123_subdomain_errors(secret) {
                errors.push(invalid(format!("spec.tls[{i}].secretName"), format!("{secret:?}"), problem));
            }
        }
    }
    if let Some(class) = &spec.ingress_class_name {
        for problem in dns1123_subdomain_errors(class) {
            errors.push(invalid("spec.ingressClassName", format!("{class:?}"), problem));
        }
    }
}

/// validateHTTPIngressPath: pathType is required; Exact and Prefix paths are absolute and
/// clean; ImplementationSpecific paths, when given, are absolute.
fn validate_http_ingress_path(p: &k8s_openapi::api::networking::v1::HTTPIngressPath, path: &str, errors: &mut Vec<FieldError>) {
    let value = p.path.as_deref().unwrap_or("");
    match p.path_type.as_str() {
        // The decoder leaves an absent pathType empty (the API server's nil).
        "" => {
            errors.push(required(format!("{path}.pathType"), "pathType must be specified"));
            return;
        }
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errors.push(invalid(format!("{path}.path"), format!("{value:?}"), "must be an absolute path"));
            }
            for sequence in ["//", "/./", "/../", "%2f", "%2F"] {
                if value.contains(sequence) {
                    errors.push(invalid(format!("{path}.path"), format!("{value:?}"), format!("must not contain '{sequence}'")));
                }
            }
            for suffix in ["/..", "/."] {
                if value.ends_with(suffix) {
                    errors.push(invalid(format!("{path}.path"), format!("{value:?}"), format!("cannot end with '{suffix}'")));
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errors.push(invalid(format!("{path}.path"), format!("{value:?}"), "must be an absolute path"));
            }
        }
        other => errors.push(not_supported(format!("{path}.pathType"), other, vec!["Exact", "ImplementationSpecific", "Prefix"])),
    }
    validate_ingress_backend(&p.backend, &format!("{path}.backend"), errors);
}

/// validateIngressBackend: exactly one of a service or a resource; a service names itself
/// and one port (by name or number).
fn validate_ingress_backend(backend: &k8s_openapi::api::networking::v1::IngressBackend, path: &str, errors: &mut Vec<FieldError>) {
    match (&backend.resource, &backend.service) {
        (Some(_), Some(_)) => errors.push(invalid(path, "\"\"".into(), "cannot set both resource and service backends")),
        (Some(resource), None) => {
            let at = format!("{path}.resource");
            if let Some(group) = resource.api_group.as_deref() {
                for problem in dns1123_subdomain_errors(group) {
                    errors.push(invalid(format!("{at}.apiGroup"), format!("{group:?}"), problem));
                }
            }
            for (field, value) in [("kind", resource.kind.as_str()), ("name", resource.name.as_str())] {
                if value.is_empty() {
                    errors.push(required(format!("{at}.{field}"), ""));
                } else {
                    for problem in path_segment_name_errors(value) {
                        errors.push(invalid(format!("{at}.{field}"), format!("{value:?}"), problem));
                    }
                }
            }
        }
        (None, Some(service)) => {
            if service.name.is_empty() {
                errors.push(required(format!("{path}.service.name"), ""));
            } else {
                // ValidateServiceName: a DNS-1035 label.
                for problem in dns1035_label_errors(&service.name) {
                    errors.push(invalid(format!("{path}.service.name"), format!("{:?}", service.name), problem));
                }
            }
            let port = service.port.clone().unwrap_or_default();
            let name = port.name.as_deref().unwrap_or("");
            let number = port.number.unwrap_or(0);
            match (!name.is_empty(), number != 0) {
                (true, true) => errors.push(invalid(path, "\"\"".into(), "cannot set both port name & port number")),
                (true, false) => {
                    for problem in port_name_errors(name) {
                        errors.push(invalid(format!("{path}.service.port.name"), format!("{name:?}"), problem));
                    }
                }
                (false, true) => {
                    if !(1..=65535).contains(&number) {
                        errors.push(invalid(format!("{path}.service.port.number"), number.to_string(), "must be between 1 and 65535, inclusive"));
                    }
                }
                (false, false) => errors.push(required(path, "port name or number is required")),
            }
        }
        (None, None) => errors.push(invalid(path, "\"\"".into(), "resource or service backend is required")),
    }
}

/// validateIngressClassSpec: a domain-prefixed controller name of at most 250 bytes and a
/// well-formed parameters reference.
fn validate_ingress_class_spec(spec: Option<&k8s_openapi::api::networking::v1::IngressClassSpec>, errors: &mut Vec<FieldError>) {
    let default = Default::default();
    let spec = spec.unwrap_or(&default);
    let controller = spec.controller.as_deref().unwrap_or("");
    if controller.is_empty() {
        errors.push(required("spec.controller", ""));
    } else {
        if controller.len() > 250 {
            errors.push(FieldError { path: "spec.controller".into(), kind: FieldErrorKind::TooLong, detail: "may not be more than 250 bytes".into() });
        }
        // IsDomainPrefixedPath.
        match controller.split_once('/') {
            Some((host, rest)) if !host.is_empty() && !rest.is_empty() => {
                for problem in dns1123_subdomain_errors(host) {
                    errors.push(invalid("spec.controller", format!("{host:?}"), problem));
                }
                if !rest.chars().all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c)) {
                    errors.push(invalid(
                        "spec.controller",
                        format!("{rest:?}"),
                        "must be a valid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
                    ));
                }
            }
            _ => errors.push(invalid("spec.controller", format!("{controller:?}"), "must be a domain-prefixed path (such as \"acme.io/foo\")")),
        }
    }
    let Some(params) = &spec.parameters else { return };
    if let Some(group) = params.api_group.as_deref() {
        for problem in dns1123_subdomain_errors(group) {
            errors.push(invalid("spec.parameters.apiGroup", format!("{group:?}"), problem));
        }
    }
    for (field, value) in [("kind", params.kind.as_str()), ("name", params.name.as_str())] {
        if value.is_empty() {
            errors.push(required(format!("spec.parameters.{field}"), ""));
        } else {
            for problem in path_segment_name_errors(value) {
                errors.push(invalid(format!("spec.parameters.{field}"), format!("{value:?}"), problem));
            }
        }
    }
    match params.scope.as_deref() {
        None => errors.push(required("spec.parameters.scope", "")),
        Some("Namespace") => match params.namespace.as_deref() {
            None => errors.push(required("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'")),
            Some(ns) => {
                for problem in dns1123_label_errors(ns) {
                    errors.push(invalid("spec.parameters.namespace", format!("{ns:?}"), problem));
                }
            }
        },
        Some("Cluster") if params.namespace.is_some() => errors.push(forbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'")),
        Some("Cluster") => {}
        Some(other) => errors.push(not_supported("spec.parameters.scope", other, vec!["Cluster", "Namespace"])),
    }
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
    let mut seen: Vec<(i32, String)> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        if ports.len() > 1 && port.name.as_deref().unwrap_or("").is_empty() {
            errors.push(required(format!("spec.ports[{i}].name"), ""));
        }
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            for problem in dns1123_label_errors(name) {
                errors.push(invalid(format!("spec.ports[{i}].name"), format!("{name:?}"), problem));
            }
        }
        let protocol = port.protocol.clone().unwrap_or_else(|| "TCP".into());
        if seen.contains(&(port.port, protocol.clone())) {
            errors.push(FieldError {
                path: format!("spec.ports[{i}]"),
                kind: FieldErrorKind::Duplicate(format!(
                    "core.ServicePort{{Name:\"\", Protocol:{protocol:?}, AppProtocol:(*string)(nil), Port:{}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
                    port.port
                )),
                detail: String::new(),
            });
        } else {
            seen.push((port.port, protocol));
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
        match &port.target_port {
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(t)) if !(1..=65535).contains(t) => {
                errors.push(invalid(format!("spec.ports[{i}].targetPort"), t.to_string(), "must be between 1 and 65535, inclusive"));
            }
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(t)) => {
                for problem in port_name_errors(t) {
                    errors.push(invalid(format!("spec.ports[{i}].targetPort"), format!("{t:?}"), problem));
                }
            }
            _ => {}
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
    validate_service_policies(spec, type_, errors);
}

/// IsValidPortName (a named container or target port).
pub fn port_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters".to_string());
    }
    if !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        errors.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string());
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".to_string());
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens".to_string());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen".to_string());
    }
    errors
}

/// apiservice.NeedsHealthCheck: a LoadBalancer Service whose external traffic policy is
/// Local gets a health-check node port (the load balancer asks each node whether it has a
/// local endpoint).
pub fn needs_health_check(spec: &k8s_openapi::api::core::v1::ServiceSpec) -> bool {
    spec.type_.as_deref() == Some("LoadBalancer") && spec.external_traffic_policy.as_deref() == Some("Local")
}

/// The ValidateService rules after the ports: sessionAffinity, the traffic policies and the
/// fields only some service types may set.
fn validate_service_policies(spec: &k8s_openapi::api::core::v1::ServiceSpec, type_: &str, errors: &mut Vec<FieldError>) {
    if let Some(affinity) = spec.session_affinity.as_deref() {
        if affinity != "ClientIP" && affinity != "None" {
            errors.push(not_supported("spec.sessionAffinity", affinity, vec!["ClientIP", "None"]));
        }
    }
    // validateServiceExternalTrafficPolicy: apiservice.ExternallyAccessible is NodePort,
    // LoadBalancer, or a ClusterIP Service with externalIPs.
    let external = type_ == "NodePort" || type_ == "LoadBalancer" || (type_ == "ClusterIP" && spec.external_ips.as_ref().is_some_and(|ips| !ips.is_empty()));
    if let Some(policy) = spec.external_traffic_policy.as_deref().filter(|p| !p.is_empty()) {
        if !external {
            errors.push(invalid("spec.externalTrafficPolicy", format!("{policy:?}"), "may only be set for externally-accessible services"));
        } else if policy != "Cluster" && policy != "Local" {
            errors.push(not_supported("spec.externalTrafficPolicy", policy, vec!["Cluster", "Local"]));
        }
    }
    let health_check_node_port = spec.health_check_node_port.unwrap_or(0);
    if !needs_health_check(spec) {
        if health_check_node_port != 0 {
            errors.push(invalid(
                "spec.healthCheckNodePort",
                health_check_node_port.to_string(),
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if health_check_node_port == 0 {
        errors.push(required("spec.healthCheckNodePort", ""));
    } else if !(1..=65535).contains(&health_check_node_port) {
        errors.push(invalid("spec.healthCheckNodePort", health_check_node_port.to_string(), "must be between 1 and 65535, inclusive"));
    }
    if let Some(policy) = spec.internal_traffic_policy.as_deref() {
        if policy != "Cluster" && policy != "Local" {
            errors.push(not_supported("spec.internalTrafficPolicy", policy, vec!["Cluster", "Local"]));
        }
    }
    if type_ != "LoadBalancer" && spec.load_balancer_source_ranges.as_ref().is_some_and(|r| !r.is_empty()) {
        errors.push(forbidden("spec.loadBalancerSourceRanges", "may only be used when `type` is 'LoadBalancer'"));
    }
    if type_ == "ExternalName" {
        if let Some(name) = spec.external_name.as_deref().filter(|n| !n.is_empty()) {
            for problem in dns1123_subdomain_errors(name.trim_end_matches('.')) {
                errors.push(invalid("spec.externalName", format!("{name:?}"), problem));
            }
        }
    }
}

fn int_at(value: &serde_json::Value, pointer: &str) -> Option<i64> {
    value.pointer(pointer).and_then(|v| v.as_i64())
}

/// Validation of the JSON-kept kinds the docs use most (apps, batch, autoscaling, policy, PVCs).
fn validate_json_kind(kind: &str, meta: &ObjectMeta, body: &serde_json::Value, errors: &mut Vec<FieldError>) {
    let template = || -> Option<PodTemplateSpec> { body.pointer("/spec/template").and_then(|t| serde_json::from_value(t.clone()).ok()) };
    let selector = || -> Option<LabelSelector> { body.pointer("/spec/selector").and_then(|t| serde_json::from_value(t.clone()).ok()) };
    match kind {
        "APIService" => {
            // ValidateAPIService: the name *must* be version.group.
            let name = meta.name.as_deref().unwrap_or("");
            let at = |p: &str| body.pointer(p).and_then(|v| v.as_str()).unwrap_or("").to_string();
            let want = format!("{}.{}", at("/spec/version"), at("/spec/group"));
            if !name.is_empty() && path_segment_name_errors(name).is_empty() && name != want {
                errors.push(invalid("metadata.name", format!("{name:?}"), "must be `spec.version+\".\"+spec.group`"));
            }
        }
        "StatefulSet" => {
            let spec = body.get("spec").cloned().unwrap_or_default();
            validate_stateful_set_spec(&spec, errors);
            validate_selector_and_template(selector().as_ref(), template().as_ref(), "statefulset", "StatefulSet", errors);
        }
        "DaemonSet" => {
            let spec = body.get("spec").cloned().unwrap_or_default();
            validate_selector_and_template(selector().as_ref(), template().as_ref(), "daemonset", "DaemonSet", errors);
            validate_daemon_set_spec(&spec, errors);
        }
        "ReplicationController" => {
            if let Some(r) = int_at(body, "/spec/replicas") {
                non_negative(r, "spec.replicas", errors);
            }
            if body.pointer("/spec/template").is_none() {
                errors.push(required("spec.template", ""));
            }
        }
        "Job" => {
            validate_job_selector(meta.name.as_deref().unwrap_or(""), meta.uid.as_deref().unwrap_or(""), body, errors);
            validate_job_spec(body.get("spec"), "spec", errors);
            let name = meta.name.as_deref().unwrap_or("");
            if body.pointer("/spec/completionMode").and_then(|m| m.as_str()) == Some("Indexed") {
                if let Some(c) = int_at(body, "/spec/completions").filter(|c| *c > 0) {
                    let hostname = format!("{name}-{}", c - 1);
                    if !dns1123_label_errors(&hostname).is_empty() {
                        errors.push(invalid("metadata.name", format!("{name:?}"), format!("will not able to create pod with invalid DNS label: {hostname}")));
                    }
                }
            }
        }
        "CronJob" => validate_cron_job(meta.name.as_deref().unwrap_or(""), body, errors),
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
        "NetworkPolicy" => validate_network_policy_spec(body.get("spec"), errors),
        "PodDisruptionBudget" if body.pointer("/spec/minAvailable").is_some() && body.pointer("/spec/maxUnavailable").is_some() => {
            errors.push(invalid("spec", "{...}".into(), "minAvailable and maxUnavailable cannot be both set"));
        }
        "PersistentVolumeClaim" => {
            // ValidatePersistentVolumeClaimSpec.
            let modes: Vec<String> =
                body.pointer("/spec/accessModes").and_then(|a| a.as_array()).into_iter().flatten().filter_map(|m| m.as_str().map(str::to_string)).collect();
            if modes.is_empty() && body.pointer("/spec/dataSourceRef").is_none() {
                errors.push(required("spec.accessModes", "at least 1 access mode is required"));
            }
            for mode in &modes {
                if !["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"].contains(&mode.as_str()) {
                    errors.push(not_supported("spec.accessModes", mode, vec!["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]));
                }
            }
            if modes.iter().any(|m| m == "ReadWriteOncePod") && modes.len() > 1 {
                errors.push(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"));
            }
            match body.pointer("/spec/resources/requests/storage") {
                None => errors.push(required("spec.resources[storage]", "")),
                Some(q) => {
                    let text = q.as_str().map(str::to_string).unwrap_or_else(|| q.to_string());
                    match crate::quantity::parse_milli(&text) {
                        Err(e) => errors.push(invalid("spec.resources.requests[storage]", format!("{text:?}"), e.to_string())),
                        Ok(v) if v <= 0 => errors.push(invalid("spec.resources.requests[storage]", format!("{text:?}"), "must be greater than zero")),
                        Ok(_) => {}
                    }
                }
            }
            if let Some(mode) = body.pointer("/spec/volumeMode").and_then(|m| m.as_str()) {
                if mode != "Block" && mode != "Filesystem" {
                    errors.push(not_supported("spec.volumeMode", mode, vec!["Block", "Filesystem"]));
                }
            }
            if let Some(class) = body.pointer("/spec/storageClassName").and_then(|c| c.as_str()).filter(|c| !c.is_empty()) {
                for problem in dns1123_subdomain_errors(class) {
                    errors.push(invalid("spec.storageClassName", format!("{class:?}"), problem));
                }
            }
        }
        _ => {}
    }
}

/// ValidateNetworkPolicySpec (pkg/apis/networking/validation): each rule's ports
/// (ValidateNetworkPolicyPort: protocol, port number or name, the endPort rules) and peers
/// (ValidateNetworkPolicyPeer, ValidateIPBlock), and the policy types. Label selectors are not
/// checked here.
fn validate_network_policy_spec(spec: Option<&serde_json::Value>, errors: &mut Vec<FieldError>) {
    let Some(spec) = spec else { return };
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in spec.get(direction).and_then(|r| r.as_array()).into_iter().flatten().enumerate() {
            let rule_path = format!("spec.{direction}[{i}]");
            for (j, port) in rule.get("ports").and_then(|p| p.as_array()).into_iter().flatten().enumerate() {
                validate_network_policy_port(port, &format!("{rule_path}.ports[{j}]"), errors);
            }
            for (j, peer) in rule.get(peers).and_then(|p| p.as_array()).into_iter().flatten().enumerate() {
                validate_network_policy_peer(peer, &format!("{rule_path}.{peers}[{j}]"), errors);
            }
        }
    }
    let types: Vec<&serde_json::Value> = spec.get("policyTypes").and_then(|t| t.as_array()).into_iter().flatten().collect();
    if types.len() > 2 {
        let listed: Vec<String> = types.iter().map(|t| t.as_str().unwrap_or("").to_string()).collect();
        errors.push(invalid("spec.policyTypes", format!("[{}]", listed.join(" ")), "may not specify more than two policyTypes"));
        return;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or("");
        if t != "Ingress" && t != "Egress" {
            errors.push(not_supported(format!("spec.policyTypes[{i}]"), t, vec!["Ingress", "Egress"]));
        }
    }
}

/// ValidateNetworkPolicyPort. As upstream, an `endPort` below `port` is reported with the
/// value of `port`.
fn validate_network_policy_port(port: &serde_json::Value, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(protocol) = port.get("protocol").and_then(|p| p.as_str()) {
        if !["TCP", "UDP", "SCTP"].contains(&protocol) {
            errors.push(not_supported(format!("{path}.protocol"), protocol, vec!["TCP", "UDP", "SCTP"]));
        }
    }
    let end_port = port.get("endPort").and_then(|e| e.as_i64());
    let range = |n: i64| (1..=65535).contains(&n);
    match port.get("port") {
        Some(serde_json::Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            if !range(n) {
                errors.push(invalid(format!("{path}.port"), n.to_string(), "must be between 1 and 65535, inclusive"));
            }
            if let Some(end) = end_port {
                if end < n {
                    errors.push(invalid(format!("{path}.endPort"), n.to_string(), "must be greater than or equal to `port`"));
                }
                if !range(end) {
                    errors.push(invalid(format!("{path}.endPort"), end.to_string(), "must be between 1 and 65535, inclusive"));
                }
            }
        }
        Some(serde_json::Value::String(name)) => {
            if let Some(end) = end_port {
                errors.push(invalid(format!("{path}.endPort"), end.to_string(), "may not be specified when `port` is non-numeric"));
            }
            for problem in port_name_errors(name) {
                errors.push(invalid(format!("{path}.port"), format!("{name:?}"), problem));
            }
        }
        _ => {
            if let Some(end) = end_port {
                errors.push(invalid(format!("{path}.endPort"), end.to_string(), "may not be specified when `port` is not specified"));
            }
        }
    }
}

/// ValidateNetworkPolicyPeer and ValidateIPBlock.
fn validate_network_policy_peer(peer: &serde_json::Value, path: &str, errors: &mut Vec<FieldError>) {
    let has = |key: &str| peer.get(key).is_some_and(|v| !v.is_null());
    let ip_block = peer.get("ipBlock").filter(|v| !v.is_null());
    let count = usize::from(has("podSelector")) + usize::from(has("namespaceSelector")) + usize::from(ip_block.is_some());
    if let Some(block) = ip_block {
        validate_ip_block(block, &format!("{path}.ipBlock"), errors);
    }
    if count == 0 {
        errors.push(required(path, "must specify a peer"));
    } else if count > 1 && ip_block.is_some() {
        errors.push(forbidden(path, "may not specify both ipBlock and another peer"));
    }
}

/// An IPv4 CIDR as (network address, prefix length), or `None`.
fn parse_ipv4_cidr(text: &str) -> Option<(u32, u32)> {
    let (ip, bits) = text.split_once('/')?;
    let ip: std::net::Ipv4Addr = ip.parse().ok()?;
    let bits: u32 = bits.parse().ok().filter(|b| *b <= 32)?;
    let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
    Some((u32::from(ip) & mask, bits))
}

/// IsValidCIDR's message.
const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

fn validate_ip_block(block: &serde_json::Value, path: &str, errors: &mut Vec<FieldError>) {
    let cidr = block.get("cidr").and_then(|c| c.as_str()).unwrap_or("");
    if cidr.is_empty() {
        errors.push(required(format!("{path}.cidr"), ""));
        return;
    }
    // IPv6 blocks are accepted unchecked (kubesim's networks are IPv4).
    if cidr.contains(':') {
        return;
    }
    let Some((network, bits)) = parse_ipv4_cidr(cidr) else {
        errors.push(invalid(format!("{path}.cidr"), format!("{cidr:?}"), CIDR_MSG));
        return;
    };
    for (i, except) in block.get("except").and_then(|e| e.as_array()).into_iter().flatten().enumerate() {
        let except = except.as_str().unwrap_or("");
        let except_path = format!("{path}.except[{i}]");
        let Some((address, except_bits)) = parse_ipv4_cidr(except) else {
            errors.push(invalid(except_path, format!("{except:?}"), CIDR_MSG));
            continue;
        };
        let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
        if address & mask != network || bits >= except_bits {
            errors.push(invalid(except_path, format!("{except:?}"), "must be a strict subset of `cidr`"));
        }
    }
}

/// validateJobSpec (pkg/apis/batch/validation): the counters, completion mode, indexed-job
/// rules and the pod template with its restartPolicy rule. `path` is `spec` for a Job and
/// `spec.jobTemplate.spec` for a CronJob.
fn validate_job_spec(spec: Option<&serde_json::Value>, path: &str, errors: &mut Vec<FieldError>) {
    let empty = serde_json::json!({});
    let spec = spec.unwrap_or(&empty);
    let int = |f: &str| spec.get(f).and_then(|v| v.as_i64());
    for field in ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished", "backoffLimitPerIndex", "maxFailedIndexes"]
    {
        if let Some(v) = int(field) {
            non_negative(v, &format!("{path}.{field}"), errors);
        }
    }
    if int("maxFailedIndexes").is_some() && int("backoffLimitPerIndex").is_none() {
        errors.push(required(format!("{path}.backoffLimitPerIndex"), "when maxFailedIndexes is specified"));
    }
    let mode = spec.get("completionMode").and_then(|v| v.as_str());
    if let Some(mode) = mode {
        if mode != "NonIndexed" && mode != "Indexed" {
            errors.push(not_supported(format!("{path}.completionMode"), mode, vec!["NonIndexed", "Indexed"]));
        }
        if mode == "Indexed" {
            if int("completions").is_none() {
                errors.push(required(format!("{path}.completions"), "when completion mode is Indexed"));
            }
            if let Some(p) = int("parallelism").filter(|p| *p > 100_000) {
                errors.push(invalid(format!("{path}.parallelism"), p.to_string(), "must be less than or equal to 100000 when completion mode is Indexed"));
            }
            if let (Some(c), Some(m)) = (int("completions"), int("maxFailedIndexes")) {
                if m > c {
                    errors.push(invalid(format!("{path}.maxFailedIndexes"), m.to_string(), "must be less than or equal to completions"));
                }
            }
        }
    }
    if mode.is_none_or(|m| m == "NonIndexed") {
        for field in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if let Some(v) = int(field) {
                errors.push(invalid(format!("{path}.{field}"), v.to_string(), "requires indexed completion mode"));
            }
        }
        if spec.get("successPolicy").is_some_and(|v| !v.is_null()) {
            errors.push(invalid(format!("{path}.successPolicy"), "batch.SuccessPolicy{...}".into(), "requires indexed completion mode"));
        }
    }
    if let Some(policy) = spec.get("podReplacementPolicy").and_then(|v| v.as_str()) {
        if policy != "Failed" && policy != "TerminatingOrFailed" {
            errors.push(not_supported(format!("{path}.podReplacementPolicy"), policy, vec!["Failed", "TerminatingOrFailed"]));
        }
    }
    let has_failure_policy = spec.get("podFailurePolicy").is_some_and(|v| !v.is_null());
    let template: PodTemplateSpec = spec.get("template").and_then(|t| serde_json::from_value(t.clone()).ok()).unwrap_or_default();
    let pod = template.spec.clone().unwrap_or_default();
    validate_pod_spec(&pod, &format!("{path}.template.spec"), errors);
    match pod.restart_policy.as_deref() {
        None | Some("") | Some("Always") => errors.push(required(format!("{path}.template.spec.restartPolicy"), "valid values: \"OnFailure\", \"Never\"")),
        Some("OnFailure") if has_failure_policy => errors.push(invalid(
            format!("{path}.template.spec.restartPolicy"),
            "\"OnFailure\"".into(),
            "only \"Never\" is supported when podFailurePolicy is specified",
        )),
        Some("OnFailure") | Some("Never") => {}
        Some(other) => errors.push(not_supported(format!("{path}.template.spec.restartPolicy"), other, vec!["OnFailure", "Never"])),
    }
}

/// ValidateJob's selector rules (ValidateJobSpec, validateGeneratedSelector): the selector is
/// required and must match the template's labels; unless spec.manualSelector, it must be the
/// generated one. Runs after the registry generated it (see defaults::prepare_job_for_create).
fn validate_job_selector(name: &str, uid: &str, body: &serde_json::Value, errors: &mut Vec<FieldError>) {
    let selector: Option<LabelSelector> = body.pointer("/spec/selector").filter(|s| !s.is_null()).and_then(|s| serde_json::from_value(s.clone()).ok());
    let labels: Option<std::collections::BTreeMap<String, String>> =
        body.pointer("/spec/template/metadata/labels").and_then(|l| serde_json::from_value(l.clone()).ok());
    let manual = body.pointer("/spec/manualSelector").and_then(|m| m.as_bool()) == Some(true);
    let Some(selector) = selector else {
        errors.push(required("spec.selector", ""));
        return;
    };
    if !manual && !uid.is_empty() {
        let expected: std::collections::BTreeMap<String, String> =
            [("batch.kubernetes.io/controller-uid", uid), ("batch.kubernetes.io/job-name", name), ("controller-uid", uid), ("job-name", name)]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        if !Selector::from_label_selector(&selector).matches(Some(&expected)) {
            errors.push(invalid("spec.selector", go_label_selector(&selector), "`selector` not auto-generated"));
        }
    }
    if !Selector::from_label_selector(&selector).matches(labels.as_ref()) {
        errors.push(invalid("spec.template.metadata.labels", go_labels(labels.as_ref()), "`selector` does not match template `labels`"));
    }
}

/// robfig/cron's ParseStandard (the CronJob schedule check): 5 fields or a descriptor.
pub fn cron_schedule_error(schedule: &str) -> Option<String> {
    let schedule = schedule.trim();
    let schedule = match schedule.strip_prefix("TZ=").or_else(|| schedule.strip_prefix("CRON_TZ=")) {
        Some(rest) => rest.split_once(' ').map(|(_, s)| s.trim()).unwrap_or(""),
        None => schedule,
    };
    if let Some(descriptor) = schedule.strip_prefix('@') {
        return match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => None,
            d if d.starts_with("every ") => None,
            _ => Some(format!("unrecognized descriptor: {schedule}")),
        };
    }
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    const MONTHS: &[&str] = &["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bounds: [(i64, i64, &[&str], i64); 5] = [(0, 59, &[], 0), (0, 23, &[], 0), (1, 31, &[], 0), (1, 12, MONTHS, 1), (0, 6, DAYS, 0)];
    for (field, (min, max, names, base)) in fields.iter().zip(bounds) {
        for expr in field.split(',') {
            let (range, step) = match expr.split_once('/') {
                Some((r, s)) => {
                    if s.contains('/') {
                        return Some(format!("too many slashes: {expr}"));
                    }
                    (r, Some(s))
                }
                None => (expr, None),
            };
            let number = |text: &str| -> Result<i64, String> {
                if let Some(i) = names.iter().position(|n| text.eq_ignore_ascii_case(n)) {
                    return Ok(i as i64 + base);
                }
                match text.parse::<i64>() {
                    Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {text}")),
                    Ok(n) => Ok(n),
                    Err(_) => Err(format!("failed to parse int from {text}: strconv.Atoi: parsing {text:?}: invalid syntax")),
                }
            };
            let (start, end) = if range == "*" || range == "?" {
                (min, max)
            } else {
                let parts: Vec<&str> = range.split('-').collect();
                if parts.len() > 2 {
                    return Some(format!("too many hyphens: {expr}"));
                }
                let start = match number(parts[0]) {
                    Ok(n) => n,
                    Err(e) => return Some(e),
                };
                let end = match parts.get(1) {
                    Some(e) => match number(e) {
                        Ok(n) => n,
                        Err(e) => return Some(e),
                    },
                    None if step.is_some() => max,
                    None => start,
                };
                (start, end)
            };
            if let Some(step) = step {
                match number(step) {
                    Ok(0) => return Some(format!("step of range should be a positive number: {expr}")),
                    Ok(_) => {}
                    Err(e) => return Some(e),
                }
            }
            if start < min {
                return Some(format!("beginning of range ({start}) below minimum ({min}): {expr}"));
            }
            if end > max {
                return Some(format!("end of range ({end}) above maximum ({max}): {expr}"));
            }
            if start > end {
                return Some(format!("beginning of range ({start}) beyond end of range ({end}): {expr}"));
            }
        }
    }
    None
}

/// validateCronJobSpec and ValidateCronJobCreate.
fn validate_cron_job(name: &str, body: &serde_json::Value, errors: &mut Vec<FieldError>) {
    match body.pointer("/spec/schedule").and_then(|s| s.as_str()) {
        None | Some("") => errors.push(required("spec.schedule", "")),
        Some(schedule) => {
            if let Some(e) = cron_schedule_error(schedule) {
                errors.push(invalid("spec.schedule", format!("{schedule:?}"), e));
            }
            if schedule.contains("TZ") {
                errors.push(invalid("spec.schedule", format!("{schedule:?}"), "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"));
            }
        }
    }
    if let Some(v) = int_at(body, "/spec/startingDeadlineSeconds") {
        non_negative(v, "spec.startingDeadlineSeconds", errors);
    }
    if let Some(tz) = body.pointer("/spec/timeZone").and_then(|t| t.as_str()) {
        let bad_part = tz.split('/').any(|p| {
            p == "." || p == ".." || p.starts_with('-') || p.is_empty() || p.len() > 14 || !p.chars().all(|c| c.is_ascii_alphanumeric() || ".-_+".contains(c))
        });
        if tz.is_empty() {
            errors.push(invalid("spec.timeZone", "\"\"".into(), "timeZone must be nil or non-empty string"));
        } else if bad_part {
            errors.push(invalid("spec.timeZone", format!("{tz:?}"), format!("unknown time zone {tz}")));
        } else if tz.eq_ignore_ascii_case("Local") {
            errors.push(invalid("spec.timeZone", format!("{tz:?}"), "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"));
        }
    }
    match body.pointer("/spec/concurrencyPolicy").and_then(|s| s.as_str()).unwrap_or("") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errors.push(required("spec.concurrencyPolicy", "")),
        other => errors.push(not_supported("spec.concurrencyPolicy", other, vec!["Allow", "Forbid", "Replace"])),
    }
    validate_job_spec(body.pointer("/spec/jobTemplate/spec"), "spec.jobTemplate.spec", errors);
    if let Some(selector) = body.pointer("/spec/jobTemplate/spec/selector").filter(|s| !s.is_null()) {
        let selector: LabelSelector = serde_json::from_value(selector.clone()).unwrap_or_default();
        errors.push(invalid("spec.jobTemplate.spec.selector", go_label_selector(&selector), "`selector` will be auto-generated"));
    }
    if body.pointer("/spec/jobTemplate/spec/manualSelector").and_then(|m| m.as_bool()) == Some(true) {
        errors.push(not_supported("spec.jobTemplate.spec.manualSelector", "true", vec!["nil", "false"]));
    }
    for field in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        if let Some(v) = int_at(body, &format!("/spec/{field}")) {
            non_negative(v, &format!("spec.{field}"), errors);
        }
    }
    if name.len() > 52 {
        errors.push(invalid("metadata.name", format!("{name:?}"), "must be no more than 52 characters"));
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

/// `metav1.LabelSelector` as field errors render it (`%#v` of the dereferenced struct).
pub fn go_label_selector(selector: &LabelSelector) -> String {
    let labels = match &selector.match_labels {
        None => "map[string]string(nil)".to_string(),
        Some(m) => format!("map[string]string{{{}}}", m.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect::<Vec<_>>().join(", ")),
    };
    let exprs = match &selector.match_expressions {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => format!(
            "[]v1.LabelSelectorRequirement{{{}}}",
            list.iter()
                .map(|e| format!(
                    "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{}}}",
                    e.key,
                    e.operator,
                    match &e.values {
                        None => "[]string(nil)".to_string(),
                        Some(v) => format!("[]string{{{}}}", v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ")),
                    }
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{exprs}}}")
}

fn go_labels(labels: Option<&std::collections::BTreeMap<String, String>>) -> String {
    labels
        .map(|l| format!("map[string]string{{{}}}", l.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect::<Vec<_>>().join(", ")))
        .unwrap_or_else(|| "map[string]string(nil)".into())
}

/// A typed (non-optional) selector as the optional pointer upstream validates: k8s-openapi
/// decodes a missing `selector` and `selector: {}` alike, and both are treated as missing.
fn typed_selector(selector: &LabelSelector) -> Option<&LabelSelector> {
    (selector.match_labels.is_some() || selector.match_expressions.is_some()).then_some(selector)
}

fn forbidden(path: impl Into<String>, detail: impl Into<String>) -> FieldError {
    FieldError { path: path.into(), kind: FieldErrorKind::Forbidden, detail: detail.into() }
}

/// The selector and pod template rules of ValidateDeploymentSpec / ValidateReplicaSetSpec /
/// ValidateStatefulSetSpec / ValidateDaemonSetSpec (pkg/apis/apps/validation): `kind` is the
/// word their messages use (`deployment`, `statefulset`, `daemonset`) and `owner` the kind in
/// the activeDeadlineSeconds message (`ReplicaSet` for Deployments and ReplicaSets).
fn validate_selector_and_template(selector: Option<&LabelSelector>, template: Option<&PodTemplateSpec>, kind: &str, owner: &str, errors: &mut Vec<FieldError>) {
    let selector = match selector {
        None => {
            errors.push(required("spec.selector", ""));
            // LabelSelectorAsSelector(nil) selects nothing, so the template cannot match it.
            if let Some(t) = template {
                let labels = t.metadata.as_ref().and_then(|m| m.labels.as_ref());
                errors.push(invalid("spec.template.metadata.labels", go_labels(labels), "`selector` does not match template `labels`"));
            }
            None
        }
        Some(s) if s.match_labels.as_ref().is_none_or(|m| m.is_empty()) && s.match_expressions.as_ref().is_none_or(|e| e.is_empty()) => {
            errors.push(invalid("spec.selector", go_label_selector(s), format!("empty selector is invalid for {kind}")));
            None
        }
        Some(s) => Some(s),
    };
    let Some(template) = template else {
        errors.push(required("spec.template", ""));
        return;
    };
    let labels = template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    if let Some(selector) = selector {
        if !Selector::from_label_selector(selector).matches(labels) {
            errors.push(invalid("spec.template.metadata.labels", go_labels(labels), "`selector` does not match template `labels`"));
        }
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
            if spec.active_deadline_seconds.is_some() {
                errors.push(forbidden("spec.template.spec.activeDeadlineSeconds", format!("activeDeadlineSeconds in {owner} is not Supported")));
            }
        }
        None => errors.push(required("spec.template.spec", "")),
    }
}

/// IsValidPercent's message.
const PERCENT_MSG: &str =
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/// An IntOrString from JSON: (is string, int value, string value).
fn int_or_string(value: &serde_json::Value) -> Option<(bool, i64, String)> {
    match value {
        serde_json::Value::String(s) => Some((true, 0, s.clone())),
        serde_json::Value::Number(n) => n.as_i64().map(|i| (false, i, String::new())),
        _ => None,
    }
}

fn go_int_or_string((is_str, i, s): &(bool, i64, String)) -> String {
    format!("intstr.IntOrString{{Type:{}, IntVal:{}, StrVal:{s:?}}}", if *is_str { 1 } else { 0 }, if *is_str { 0 } else { *i })
}

fn percent_value(v: &(bool, i64, String)) -> Option<i64> {
    if !v.0 {
        return None;
    }
    let digits = v.2.strip_suffix('%')?;
    (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())).then(|| digits.parse().unwrap_or(i64::MAX))
}

/// getIntOrPercentValue.
fn int_or_percent_value(v: &(bool, i64, String)) -> i64 {
    percent_value(v).unwrap_or(if v.0 { 0 } else { v.1 })
}

/// ValidatePositiveIntOrPercent + IsNotMoreThan100Percent (when `max100`).
fn validate_int_or_percent(v: &(bool, i64, String), path: &str, max100: bool, errors: &mut Vec<FieldError>) {
    if v.0 {
        if percent_value(v).is_none() {
            errors.push(invalid(path, go_int_or_string(v), PERCENT_MSG));
        }
    } else if v.1 < 0 {
        errors.push(invalid(path, v.1.to_string(), "must be greater than or equal to 0"));
    }
    if max100 && percent_value(v).is_some_and(|p| p > 100) {
        errors.push(invalid(path, go_int_or_string(v), "must not be greater than 100%"));
    }
}

/// ValidateDeploymentSpec's strategy, minReadySeconds, revisionHistoryLimit and
/// progressDeadlineSeconds rules (ValidateDeploymentStrategy, ValidateRollingUpdateDeployment).
fn validate_deployment_strategy(spec: &serde_json::Value, errors: &mut Vec<FieldError>) {
    let strategy = spec.get("strategy").cloned().unwrap_or_default();
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy.get("type").and_then(|t| t.as_str()).unwrap_or("") {
        "Recreate" => {
            if rolling.is_some() {
                errors.push(forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"));
            }
        }
        "RollingUpdate" => match rolling {
            None => errors.push(required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")),
            Some(r) => {
                let unavailable = r.get("maxUnavailable").and_then(int_or_string).unwrap_or((false, 0, String::new()));
                let surge = r.get("maxSurge").and_then(int_or_string).unwrap_or((false, 0, String::new()));
                validate_int_or_percent(&unavailable, "spec.strategy.rollingUpdate.maxUnavailable", false, errors);
                validate_int_or_percent(&surge, "spec.strategy.rollingUpdate.maxSurge", false, errors);
                if int_or_percent_value(&unavailable) == 0 && int_or_percent_value(&surge) == 0 {
                    errors.push(invalid("spec.strategy.rollingUpdate.maxUnavailable", go_int_or_string(&unavailable), "may not be 0 when `maxSurge` is 0"));
                }
                if percent_value(&unavailable).is_some_and(|p| p > 100) {
                    errors.push(invalid("spec.strategy.rollingUpdate.maxUnavailable", go_int_or_string(&unavailable), "must not be greater than 100%"));
                }
            }
        },
        other => errors.push(FieldError {
            path: "spec.strategy".into(),
            kind: FieldErrorKind::NotSupported(
                format!("apps.DeploymentStrategy{{Type:{other:?}, RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}}"),
                vec!["Recreate", "RollingUpdate"],
            ),
            detail: String::new(),
        }),
    }
    let min_ready = spec.get("minReadySeconds").and_then(|v| v.as_i64()).unwrap_or(0);
    non_negative(min_ready, "spec.minReadySeconds", errors);
    if let Some(limit) = spec.get("revisionHistoryLimit").and_then(|v| v.as_i64()) {
        non_negative(limit, "spec.revisionHistoryLimit", errors);
    }
    if let Some(deadline) = spec.get("progressDeadlineSeconds").and_then(|v| v.as_i64()) {
        non_negative(deadline, "spec.progressDeadlineSeconds", errors);
        if deadline <= min_ready {
            errors.push(invalid("spec.progressDeadlineSeconds", deadline.to_string(), "must be greater than minReadySeconds"));
        }
    }
}

/// ValidateStatefulSetSpec's policy, strategy and counter rules.
fn validate_stateful_set_spec(spec: &serde_json::Value, errors: &mut Vec<FieldError>) {
    match spec.get("podManagementPolicy").and_then(|v| v.as_str()).unwrap_or("") {
        "" => errors.push(required("spec.podManagementPolicy", "")),
        "OrderedReady" | "Parallel" => {}
        other => errors.push(invalid("spec.podManagementPolicy", format!("{other:?}"), "must be 'OrderedReady' or 'Parallel'")),
    }
    let strategy = spec.get("updateStrategy").cloned().unwrap_or_default();
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy.get("type").and_then(|t| t.as_str()).unwrap_or("") {
        "" => errors.push(required("spec.updateStrategy", "")),
        "OnDelete" => {
            if let Some(r) = rolling {
                let partition = r.get("partition").and_then(|p| p.as_i64()).unwrap_or(0);
                errors.push(invalid(
                    "spec.updateStrategy.rollingUpdate",
                    format!("apps.RollingUpdateStatefulSetStrategy{{Partition:{partition}, MaxUnavailable:(*intstr.IntOrString)(nil)}}"),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(r) = rolling {
                non_negative(r.get("partition").and_then(|p| p.as_i64()).unwrap_or(0), "spec.updateStrategy.rollingUpdate.partition", errors);
                if let Some(mu) = r.get("maxUnavailable").and_then(int_or_string) {
                    validate_int_or_percent(&mu, "spec.updateStrategy.rollingUpdate.maxUnavailable", false, errors);
                    if int_or_percent_value(&mu) == 0 {
                        errors.push(invalid("spec.updateStrategy.rollingUpdate.maxUnavailable", go_int_or_string(&mu), "cannot be 0"));
                    }
                    if percent_value(&mu).is_some_and(|p| p > 100) {
                        errors.push(invalid("spec.updateStrategy.rollingUpdate.maxUnavailable", go_int_or_string(&mu), "must not be greater than 100%"));
                    }
                }
            }
        }
        other => errors.push(invalid(
            "spec.updateStrategy",
            format!("apps.StatefulSetUpdateStrategy{{Type:{other:?}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}}"),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    for field in ["whenDeleted", "whenScaled"] {
        if let Some(policy) = spec.pointer(&format!("/persistentVolumeClaimRetentionPolicy/{field}")).and_then(|v| v.as_str()) {
            if policy != "Retain" && policy != "Delete" {
                errors.push(not_supported(format!("spec.persistentVolumeClaimRetentionPolicy.{field}"), policy, vec!["Retain", "Delete"]));
            }
        }
    }
    if let Some(r) = spec.get("replicas").and_then(|v| v.as_i64()) {
        non_negative(r, "spec.replicas", errors);
    }
    if let Some(m) = spec.get("minReadySeconds").and_then(|v| v.as_i64()) {
        non_negative(m, "spec.minReadySeconds", errors);
    }
    if let Some(start) = spec.pointer("/ordinals/start").and_then(|v| v.as_i64()) {
        non_negative(start, "spec.ordinals.start", errors);
    }
}

/// ValidateDaemonSetSpec's strategy and counter rules (ValidateDaemonSetUpdateStrategy,
/// ValidateRollingUpdateDaemonSet).
fn validate_daemon_set_spec(spec: &serde_json::Value, errors: &mut Vec<FieldError>) {
    if let Some(m) = spec.get("minReadySeconds").and_then(|v| v.as_i64()) {
        non_negative(m, "spec.minReadySeconds", errors);
    }
    let strategy = spec.get("updateStrategy").cloned().unwrap_or_default();
    match strategy.get("type").and_then(|t| t.as_str()).unwrap_or("") {
        "OnDelete" => {}
        "RollingUpdate" => match strategy.get("rollingUpdate").filter(|r| !r.is_null()) {
            None => errors.push(required("spec.updateStrategy.rollingUpdate", "")),
            Some(r) => {
                let unavailable = r.get("maxUnavailable").and_then(int_or_string).unwrap_or((false, 0, String::new()));
                let surge = r.get("maxSurge").and_then(int_or_string).unwrap_or((false, 0, String::new()));
                validate_int_or_percent(&unavailable, "spec.updateStrategy.rollingUpdate.maxUnavailable", true, errors);
                validate_int_or_percent(&surge, "spec.updateStrategy.rollingUpdate.maxSurge", true, errors);
                match (int_or_percent_value(&unavailable) != 0, int_or_percent_value(&surge) != 0) {
                    (true, true) => errors.push(invalid(
                        "spec.updateStrategy.rollingUpdate.maxSurge",
                        go_int_or_string(&surge),
                        "may not be set when maxUnavailable is non-zero",
                    )),
                    (false, false) => errors.push(required("spec.updateStrategy.rollingUpdate.maxUnavailable", "cannot be 0 when maxSurge is 0")),
                    _ => {}
                }
            }
        },
        other => errors.push(FieldError {
            path: "spec.updateStrategy".into(),
            kind: FieldErrorKind::NotSupported(
                format!("apps.DaemonSetUpdateStrategy{{Type:{other:?}, RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}}"),
                vec!["RollingUpdate", "OnDelete"],
            ),
            detail: String::new(),
        }),
    }
    if let Some(limit) = spec.get("revisionHistoryLimit").and_then(|v| v.as_i64()) {
        non_negative(limit, "spec.revisionHistoryLimit", errors);
    }
}

fn validate_metadata(meta: &ObjectMeta, kind: &str, scope: Scope, errors: &mut Vec<FieldError>) {
    match (meta.name.as_deref(), meta.generate_name.as_deref()) {
        (None | Some(""), None | Some("")) => errors.push(required("metadata.name", "name or generateName is required")),
        (Some(name), _) if !name.is_empty() => {
            // NameIsDNSLabel for namespaces and StatefulSets (ValidateStatefulSetName),
            // NameIsDNS1035Label for Services (ValidateServiceName), subdomains otherwise.
            let problems = match kind {
                "Namespace" | "StatefulSet" => dns1123_label_errors(name),
                "Service" => dns1035_label_errors(name),
                // ValidateAPIService: path.IsValidPathSegmentName ("v1." names the core group).
                "APIService" => path_segment_name_errors(name),
                _ => dns1123_subdomain_errors(name),
            };
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
            errors.push(invalid("metadata.labels", format!("{value:?}"), problem));
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

/// The storage request of a claim (`spec.resources.requests.storage`) or its recorded size
/// (`status.capacity.storage`) in bytes, 0 when unset or unparsable.
fn storage_at(body: &serde_json::Value, pointer: &str) -> i128 {
    let Some(q) = body.pointer(pointer) else { return 0 };
    let text = q.as_str().map(str::to_string).unwrap_or_else(|| q.to_string());
    crate::quantity::parse_value(&text).unwrap_or(0)
}

/// `ValidatePersistentVolumeClaimUpdate` (pkg/apis/core/validation/validation.go, v1.34, with
/// RecoverVolumeExpansionFailure GA): the spec is immutable except `volumeName` while it is
/// empty, `storageClassName` from unset (the retroactive default class), and for a bound
/// claim `resources.requests.storage` and `volumeAttributesClassName`; the storage request may
/// go down (recovery from a failed expansion) but not to `status.capacity` or below; the
/// volume mode never changes. `new` carries the stored status (the main resource never
/// changes it).
pub fn validate_pvc_update(new: &serde_json::Value, old: &serde_json::Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = |v: &serde_json::Value| {
        let mut s = v.get("spec").cloned().unwrap_or_else(|| serde_json::json!({}));
        crate::quantity::canonicalize_json(&mut s);
        s
    };
    let (mut new_spec, mut old_spec) = (spec(new), spec(old));
    let (Some(n), Some(o)) = (new_spec.as_object_mut(), old_spec.as_object_mut()) else { return errors };
    if o.get("volumeName").and_then(|v| v.as_str()).unwrap_or("").is_empty() {
        // volumeName changes are allowed once.
        match n.get("volumeName").cloned() {
            Some(v) => o.insert("volumeName".into(), v),
            None => o.remove("volumeName"),
        };
    }
    // validateStorageClassUpgradeFromNil (the beta annotation path is not modelled).
    let old_class_annotation = old.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class").is_some();
    if !old_class_annotation && !o.contains_key("storageClassName") && n.get("storageClassName").and_then(|c| c.as_str()).is_some_and(|c| !c.is_empty()) {
        n.remove("storageClassName");
    }
    let bound = new.pointer("/status/phase").and_then(|p| p.as_str()) == Some("Bound");
    if bound {
        if let Some(requests) = n.get_mut("resources").and_then(|r| r.get_mut("requests")).and_then(|r| r.as_object_mut()) {
            match o.get("resources").and_then(|r| r.get("requests")).and_then(|r| r.get("storage")).cloned() {
                Some(v) => requests.insert("storage".into(), v),
                None => requests.remove("storage"),
            };
        }
        if n.contains_key("volumeAttributesClassName") {
            match o.get("volumeAttributesClassName").cloned() {
                Some(v) => n.insert("volumeAttributesClassName".into(), v),
                None => n.remove("volumeAttributesClassName"),
            };
        }
    }
    if n != o {
        // cmp.Diff of the two specs; UNVERIFIED: this renders only the differing fields, in
        // cmp's `-`/`+` line style, not its full output.
        let mut diff = String::from("  core.PersistentVolumeClaimSpec{\n");
        let keys: std::collections::BTreeSet<&String> = n.keys().chain(o.keys()).collect();
        for key in keys {
            let (a, b) = (o.get(key.as_str()), n.get(key.as_str()));
            if a != b {
                let go_name = format!("{}{}", key[..1].to_uppercase(), &key[1..]);
                let render = |v: Option<&serde_json::Value>| v.map(|v| v.to_string()).unwrap_or_else(|| "nil".into());
                diff.push_str(&format!("- \t{go_name}: {},\n+ \t{go_name}: {},\n", render(a), render(b)));
            }
        }
        diff.push_str("  }\n");
        errors.push(forbidden(
            "spec",
            format!("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{diff}"),
        ));
    }
    let (old_size, new_size) = (storage_at(old, "/spec/resources/requests/storage"), storage_at(new, "/spec/resources/requests/storage"));
    let status_size = storage_at(old, "/status/capacity/storage");
    if new_size < old_size && new_size <= status_size {
        // This permits reducing the request down to (not including) the recorded capacity,
        // so that users can recover from a failed expansion; volumes never shrink.
        errors.push(forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"));
    }
    if new.pointer("/spec/volumeMode") != old.pointer("/spec/volumeMode") {
        let value = new.pointer("/spec/volumeMode").map(|v| v.to_string()).unwrap_or_else(|| "nil".into());
        errors.push(invalid("volumeMode", value, "field is immutable"));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode_document, parse_documents};

    fn validate_yaml(text: &str) -> String {
        let (docs, errs) = parse_documents("t.yaml", text);
        assert!(errs.is_empty(), "{errs:?}");
        let mut obj = decode_document("t.yaml", &docs[0]).unwrap().remove(0);
        // As the API server runs them: defaulting, the uid, PrepareForCreate, validation.
        crate::defaults::apply_defaults(&mut obj);
        obj.metadata_mut().uid = Some("uid-1".into());
        crate::defaults::prepare_job_for_create(&mut obj);
        let errors = validate_create(&obj);
        invalid_message(obj.kind(), obj.name(), &errors)
    }

    // ValidateNetworkPolicySpec (pkg/apis/networking/validation/validation.go): the endPort
    // restrictions the NetworkPolicy concept page lists, peers and ipBlocks.
    #[test]
    fn network_policies_are_validated_as_upstream() {
        let policy = |rule: &str| format!("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {{name: p}}\nspec:\n  podSelector: {{}}\n{rule}");
        let cases: &[(&str, &str)] = &[
            ("  egress: [{ports: [{port: 32000, endPort: 32768}]}]\n", ""),
            ("  egress: [{ports: [{port: 32000, endPort: 31000}]}]\n", "NetworkPolicy \"p\" is invalid: spec.egress[0].ports[0].endPort: Invalid value: 32000: must be greater than or equal to `port`"),
            ("  egress: [{ports: [{endPort: 32768}]}]\n", "NetworkPolicy \"p\" is invalid: spec.egress[0].ports[0].endPort: Invalid value: 32768: may not be specified when `port` is not specified"),
            ("  ingress: [{ports: [{port: http, endPort: 81}]}]\n", "NetworkPolicy \"p\" is invalid: spec.ingress[0].ports[0].endPort: Invalid value: 81: may not be specified when `port` is non-numeric"),
            ("  ingress: [{ports: [{port: 70000}]}]\n", "NetworkPolicy \"p\" is invalid: spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"),
            ("  ingress: [{ports: [{port: 80, protocol: ICMP}]}]\n", "NetworkPolicy \"p\" is invalid: spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\""),
            ("  ingress: [{from: [{}]}]\n", "NetworkPolicy \"p\" is invalid: spec.ingress[0].from[0]: Required value: must specify a peer"),
            ("  ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/8}, podSelector: {}}]}]\n", "NetworkPolicy \"p\" is invalid: spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer"),
            ("  ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}]}]\n", ""),
            ("  ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/16, except: [10.1.0.0/24]}}]}]\n", "NetworkPolicy \"p\" is invalid: spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`"),
            ("  ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/16, except: [10.0.0.0/16]}}]}]\n", "NetworkPolicy \"p\" is invalid: spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"10.0.0.0/16\": must be a strict subset of `cidr`"),
            ("  egress: [{to: [{ipBlock: {cidr: 10.0.0.0/33}}]}]\n", "NetworkPolicy \"p\" is invalid: spec.egress[0].to[0].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
            ("  policyTypes: [Ingress, Sideways]\n", "NetworkPolicy \"p\" is invalid: spec.policyTypes[1]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\""),
        ];
        for (rule, want) in cases {
            let got = validate_yaml(&policy(rule));
            let want = if want.is_empty() { "NetworkPolicy \"p\" is invalid: []" } else { want };
            assert_eq!(got, *want, "{rule}");
        }
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
             "Service \"s\" is invalid: [spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]"),
            ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {restartPolicy: Always, containers: [{name: c, image: busybox}]}}}\n",
             "Job \"j\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""),
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
            // pkg/apis/storage/validation: validateVolumeAttachmentSpec, ValidateCSIDriver, ValidateCSINode.
            ("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: '', nodeName: n1, source: {}}\n",
             "VolumeAttachment \"va\" is invalid: [spec.attacher: Required value, spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName]"),
            ("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: d, nodeName: n1, source: {persistentVolumeName: ''}}\n",
             "VolumeAttachment \"va\" is invalid: spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName"),
            ("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d.example.com}\nspec: {attachRequired: true, volumeLifecycleModes: [Forever]}\n",
             "CSIDriver \"d.example.com\" is invalid: spec.volumeLifecycleModes[0]: Unsupported value: \"Forever\": supported values: \"Ephemeral\", \"Persistent\""),
            ("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec: {drivers: [{name: d.example.com, nodeID: ''}, {name: d.example.com, nodeID: x}]}\n",
             "CSINode \"n1\" is invalid: [spec.drivers[0].nodeID: Required value, spec.drivers[1].name: Duplicate value: \"d.example.com\"]"),
        ];
        for (yaml, want) in cases {
            let got = validate_yaml(yaml);
            assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
        }
    }

    const POD: &str = "template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: nginx}]}}";

    fn deployment(spec: &str) -> String {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec: {{selector: {{matchLabels: {{a: b}}}}, {POD}, {spec}}}\n")
    }

    // Mirrors pkg/apis/apps/validation/validation_test.go TestValidateDeployment /
    // TestValidateDeploymentStrategy / TestValidateRollingUpdateDeployment, and the docs page
    // tasks/manage-kubernetes-objects/update-api-object-kubectl-patch (retainkeys-demo).
    #[test]
    fn validate_deployment_mirrors_upstream() {
        let cases: &[(&str, &str)] = &[
            ("strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}", "Deployment \"d\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"),
            ("strategy: {type: Blue}", "Deployment \"d\" is invalid: spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"Blue\", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", \"RollingUpdate\""),
            ("strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}", "Deployment \"d\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0"),
            ("strategy: {rollingUpdate: {maxUnavailable: 110%}}", "Deployment \"d\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"110%\"}: must not be greater than 100%"),
            ("strategy: {rollingUpdate: {maxSurge: 'x'}}", "Deployment \"d\" is invalid: spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"x\"}: a valid percent string must be a numeric string followed by an ending '%'"),
            ("strategy: {rollingUpdate: {maxSurge: -1}}", "Deployment \"d\" is invalid: spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0"),
            ("minReadySeconds: 700", "Deployment \"d\" is invalid: spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"),
            ("revisionHistoryLimit: -1", "Deployment \"d\" is invalid: spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"),
        ];
        for (spec, want) in cases {
            let got = validate_yaml(&deployment(spec));
            assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
        }
        // Recreate without rollingUpdate is valid (no errors).
        assert_eq!(validate_yaml(&deployment("strategy: {type: Recreate}")), "Deployment \"d\" is invalid: []");
        let active = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {activeDeadlineSeconds: 5, containers: [{name: c, image: nginx}]}}}\n";
        assert_eq!(
            validate_yaml(active),
            "Deployment \"d\" is invalid: spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"
        );
    }

    // Mirrors TestValidateStatefulSet and TestValidateDaemonSet(UpdateStrategy).
    #[test]
    fn validate_stateful_and_daemon_sets_mirror_upstream() {
        let sts = |spec: &str, name: &str| {
            format!("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: {name}}}\nspec: {{selector: {{matchLabels: {{a: b}}}}, {POD}{spec}}}\n")
        };
        let ds =
            |spec: &str| format!("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: ds}}\nspec: {{selector: {{matchLabels: {{a: b}}}}, {POD}{spec}}}\n");
        let cases: Vec<(String, &str)> = vec![
            (sts(", podManagementPolicy: Sometimes", "s"), "StatefulSet \"s\" is invalid: spec.podManagementPolicy: Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'"),
            (sts(", updateStrategy: {type: Sideways}", "s"), "StatefulSet \"s\" is invalid: spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:\"Sideways\", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'"),
            (sts(", updateStrategy: {type: OnDelete, rollingUpdate: {partition: 1}}", "s"), "StatefulSet \"s\" is invalid: spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'"),
            (sts(", updateStrategy: {rollingUpdate: {partition: -1}}", "s"), "StatefulSet \"s\" is invalid: spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"),
            (sts(", persistentVolumeClaimRetentionPolicy: {whenDeleted: Keep}", "s"), "StatefulSet \"s\" is invalid: spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\""),
            (sts("", "a.b"), "StatefulSet \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": a lowercase RFC 1123 label must consist of"),
            (sts(", minReadySeconds: -1", "s"), "StatefulSet \"s\" is invalid: spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
            (ds(", updateStrategy: {rollingUpdate: {maxUnavailable: 1, maxSurge: 1}}"), "DaemonSet \"ds\" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: may not be set when maxUnavailable is non-zero"),
            (ds(", updateStrategy: {rollingUpdate: {maxUnavailable: 0}}"), "DaemonSet \"ds\" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"),
            (ds(", updateStrategy: {type: Never}"), "DaemonSet \"ds\" is invalid: spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:\"Never\", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: \"RollingUpdate\", \"OnDelete\""),
        ];
        for (yaml, want) in &cases {
            let got = validate_yaml(yaml);
            assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
        }
        let empty =
            "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\nspec: {selector: {}, template: {spec: {containers: [{name: c, image: nginx}]}}}\n";
        assert_eq!(validate_yaml(empty), "DaemonSet \"ds\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset");
    }

    // Mirrors pkg/apis/batch/validation/validation_test.go TestValidateJob / TestValidateCronJob*.
    #[test]
    fn validate_jobs_and_cron_jobs_mirror_upstream() {
        let job = |spec: &str| {
            format!("apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j}}\nspec: {{template: {{spec: {{restartPolicy: Never, containers: [{{name: c, image: busybox}}]}}}}{spec}}}\n")
        };
        let cj = |spec: &str, name: &str| {
            format!("apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: {name}}}\nspec: {{jobTemplate: {{spec: {{template: {{spec: {{restartPolicy: OnFailure, containers: [{{name: c, image: busybox}}]}}}}}}}}{spec}}}\n")
        };
        let cases: Vec<(String, &str)> = vec![
            (job(", completionMode: Sometimes"), "Job \"j\" is invalid: spec.completionMode: Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\""),
            (job(", completionMode: Indexed, parallelism: 2"), "Job \"j\" is invalid: spec.completions: Required value: when completion mode is Indexed"),
            (job(", backoffLimitPerIndex: 1"), "Job \"j\" is invalid: spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"),
            (job(", manualSelector: true"), "Job \"j\" is invalid: spec.selector: Required value"),
            (job(", selector: {matchLabels: {app: x}}"), "Job \"j\" is invalid: [spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"x\", \"batch.kubernetes.io/controller-uid\":\"uid-1\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated"),
            (job(", activeDeadlineSeconds: -5"), "Job \"j\" is invalid: spec.activeDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0"),
            (cj(", schedule: '* * *'", "c"), "CronJob \"c\" is invalid: spec.schedule: Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]"),
            (cj(", schedule: '61 * * * *'", "c"), "CronJob \"c\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61"),
            (cj(", schedule: '@sometimes'", "c"), "CronJob \"c\" is invalid: spec.schedule: Invalid value: \"@sometimes\": unrecognized descriptor: @sometimes"),
            (cj(", schedule: 'TZ=UTC * * * * *'", "c"), "CronJob \"c\" is invalid: spec.schedule: Invalid value: \"TZ=UTC * * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
            (cj(", schedule: '*/5 * * * *', concurrencyPolicy: Sometimes", "c"), "CronJob \"c\" is invalid: spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\""),
            (cj(", schedule: '*/5 * * * *', timeZone: Local", "c"), "CronJob \"c\" is invalid: spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"),
            (cj(", schedule: '*/5 * * * *'", &"x".repeat(53)), "CronJob \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" is invalid: metadata.name: Invalid value: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\": must be no more than 52 characters"),
        ];
        for (yaml, want) in &cases {
            let got = validate_yaml(yaml);
            assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
        }
        for ok in ["*/5 * * * *", "0 0 * * sun", "15 3 1-10/2 jan-mar mon-fri", "@hourly", "@every 1h"] {
            assert_eq!(cron_schedule_error(ok), None, "{ok}");
        }
    }

    // Mirrors pkg/apis/core/validation/validation_test.go TestValidateServiceCreate /
    // TestValidatePersistentVolumeClaim.
    #[test]
    fn validate_service_and_pvc_mirror_upstream() {
        let svc = |spec: &str| format!("apiVersion: v1\nkind: Service\nmetadata: {{name: s}}\nspec: {spec}\n");
        let pvc = |spec: &str| format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: p}}\nspec: {spec}\n");
        let cases: Vec<(String, &str)> = vec![
            (svc("{ports: [{name: Http, port: 80}]}"), "Service \"s\" is invalid: spec.ports[0].name: Invalid value: \"Http\": a lowercase RFC 1123 label must consist of"),
            (svc("{ports: [{port: 80, targetPort: 70000}]}"), "Service \"s\" is invalid: spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive"),
            (svc("{ports: [{port: 80, targetPort: http--web}]}"), "Service \"s\" is invalid: spec.ports[0].targetPort: Invalid value: \"http--web\": must not contain consecutive hyphens"),
            (svc("{ports: [{name: a, port: 80}, {name: b, port: 80}]}"), "Service \"s\" is invalid: spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}"),
            (svc("{ports: [{port: 80}], externalTrafficPolicy: Local}"), "Service \"s\" is invalid: spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set for externally-accessible services"),
            (svc("{type: NodePort, ports: [{port: 80}], healthCheckNodePort: 30001}"), "Service \"s\" is invalid: spec.healthCheckNodePort: Invalid value: 30001: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"),
            (svc("{ports: [{port: 80}], sessionAffinity: Sticky}"), "Service \"s\" is invalid: spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\""),
            (svc("{type: ExternalName, externalName: 'my_db'}"), "Service \"s\" is invalid: spec.externalName: Invalid value: \"my_db\": a lowercase RFC 1123 subdomain"),
            ("apiVersion: v1\nkind: Service\nmetadata: {name: 1svc}\nspec: {ports: [{port: 80}]}\n".to_string(), "Service \"1svc\" is invalid: metadata.name: Invalid value: \"1svc\": a DNS-1035 label must consist of"),
            (pvc("{accessModes: [ReadWriteSometimes], resources: {requests: {storage: 1Gi}}}"), "PersistentVolumeClaim \"p\" is invalid: spec.accessModes: Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""),
            (pvc("{accessModes: [ReadWriteOncePod, ReadWriteOnce], resources: {requests: {storage: 1Gi}}}"), "PersistentVolumeClaim \"p\" is invalid: spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"),
            (pvc("{accessModes: [ReadWriteOnce], resources: {requests: {storage: '0'}}}"), "PersistentVolumeClaim \"p\" is invalid: spec.resources.requests[storage]: Invalid value: \"0\": must be greater than zero"),
            (pvc("{accessModes: [ReadWriteOnce], volumeMode: Raw, resources: {requests: {storage: 1Gi}}}"), "PersistentVolumeClaim \"p\" is invalid: spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\""),
        ];
        for (yaml, want) in &cases {
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

#[cfg(test)]
mod pvc_update_tests {
    use super::validate_pvc_update;
    use serde_json::json;

    fn claim(request: &str, phase: &str, capacity: Option<&str>) -> serde_json::Value {
        let mut c = json!({
            "metadata": {"name": "p"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "block", "volumeMode": "Filesystem", "resources": {"requests": {"storage": request}}},
            "status": {"phase": phase},
        });
        if let Some(cap) = capacity {
            c["status"]["capacity"] = json!({"storage": cap});
        }
        c
    }

    fn rendered(new: &serde_json::Value, old: &serde_json::Value) -> Vec<String> {
        validate_pvc_update(new, old).iter().map(|e| e.to_string()).collect()
    }

    // TestValidatePersistentVolumeClaimUpdate's resize cases (RecoverVolumeExpansionFailure on).
    #[test]
    fn bound_claims_may_change_their_request_but_not_below_their_capacity() {
        let old = claim("1Gi", "Bound", Some("1Gi"));
        assert!(rendered(&claim("2Gi", "Bound", Some("1Gi")), &old).is_empty(), "valid-size-update");
        assert!(rendered(&claim("1024Mi", "Bound", Some("1Gi")), &old).is_empty(), "same quantity in other units");
        assert_eq!(
            rendered(&claim("500Mi", "Bound", Some("1Gi")), &old),
            ["spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]
        );
        // Recovery from a failed expansion: down to above the recorded capacity.
        let failed = claim("3Gi", "Bound", Some("1Gi"));
        assert!(rendered(&claim("2Gi", "Bound", Some("1Gi")), &failed).is_empty(), "valid-expand-shrink-resize-enabled");
        assert_eq!(
            rendered(&claim("1Gi", "Bound", Some("1Gi")), &failed),
            ["spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]
        );
    }

    #[test]
    fn unbound_claims_keep_their_spec_but_get_a_volume_name_and_a_default_class_once() {
        let old = claim("1Gi", "Pending", None);
        let errors = rendered(&claim("2Gi", "Pending", None), &old);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0]
                .starts_with("spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"),
            "{errors:?}"
        );
        let mut named = old.clone();
        named["spec"]["volumeName"] = json!("pv-1");
        assert!(rendered(&named, &old).is_empty(), "volumeName is set once");
        let mut renamed = named.clone();
        renamed["spec"]["volumeName"] = json!("pv-2");
        assert_eq!(rendered(&renamed, &named).len(), 1, "and not changed after");
        let mut classless = old.clone();
        classless["spec"].as_object_mut().unwrap().remove("storageClassName");
        assert!(rendered(&old, &classless).is_empty(), "the retroactive default class");
        let mut other_mode = old.clone();
        other_mode["spec"]["accessModes"] = json!(["ReadWriteMany"]);
        assert_eq!(rendered(&other_mode, &old).len(), 1);
    }
}

/// ValidatePodEphemeralContainersUpdate (pkg/apis/core/validation/validation.go) for the
/// `pods/ephemeralcontainers` subresource: existing ephemeral containers may be neither removed
/// nor changed, and each new one is valid (validateEphemeralContainers): a unique name among
/// all the pod's containers, an image, a targetContainerName naming a container or init
/// container, none of the fields ephemeral containers may not set.
pub fn validate_ephemeral_containers_update(new: &PodSpec, old: &PodSpec) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let path = "spec.ephemeralContainers";
    let new_list = new.ephemeral_containers.clone().unwrap_or_default();
    for o in old.ephemeral_containers.iter().flatten() {
        match new_list.iter().find(|n| n.name == o.name) {
            None => errors.push(FieldError {
                path: path.into(),
                kind: FieldErrorKind::Forbidden,
                detail: format!("existing ephemeral containers {:?} may not be removed\n", o.name),
            }),
            Some(n) if n != o => errors.push(FieldError {
                path: format!("{path}[{}]", o.name),
                kind: FieldErrorKind::Forbidden,
                detail: format!("existing ephemeral containers {:?} may not be changed\n", o.name),
            }),
            Some(_) => {}
        }
    }
    let regular: Vec<&str> = new.init_containers.iter().flatten().chain(new.containers.iter()).map(|c| c.name.as_str()).collect();
    let mut seen: Vec<&str> = regular.clone();
    for (i, ec) in new_list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if ec.name.is_empty() {
            errors.push(FieldError { path: format!("{at}.name"), kind: FieldErrorKind::Required, detail: String::new() });
        } else if seen.contains(&ec.name.as_str()) {
            errors.push(FieldError { path: format!("{at}.name"), kind: FieldErrorKind::Duplicate(format!("{:?}", ec.name)), detail: String::new() });
        } else {
            seen.push(ec.name.as_str());
        }
        if ec.image.as_deref().is_none_or(str::is_empty) {
            errors.push(FieldError { path: format!("{at}.image"), kind: FieldErrorKind::Required, detail: String::new() });
        }
        if let Some(target) = ec.target_container_name.as_deref().filter(|t| !t.is_empty()) {
            if !regular.contains(&target) {
                errors.push(FieldError {
                    path: format!("{at}.targetContainerName"),
                    kind: FieldErrorKind::NotFound(format!("{target:?}")),
                    detail: String::new(),
                });
            }
        }
        let forbidden = [
            ("ports", ec.ports.as_ref().is_some_and(|p| !p.is_empty())),
            ("livenessProbe", ec.liveness_probe.is_some()),
            ("readinessProbe", ec.readiness_probe.is_some()),
            ("startupProbe", ec.startup_probe.is_some()),
            ("lifecycle", ec.lifecycle.is_some()),
            (
                "resources",
                ec.resources.as_ref().is_some_and(|r| r.limits.as_ref().is_some_and(|l| !l.is_empty()) || r.requests.as_ref().is_some_and(|l| !l.is_empty())),
            ),
            ("restartPolicy", ec.restart_policy.is_some()),
        ];
        for (field, set) in forbidden {
            if set {
                errors.push(FieldError {
                    path: format!("{at}.{field}"),
                    kind: FieldErrorKind::Forbidden,
                    detail: "cannot be set for an Ephemeral Container".into(),
                });
            }
        }
    }
    errors
}
