//! Discovery (`kubesim serve` and the API server's address inside the cluster): `/api`, `/apis`, `/apis/<group>`, `/api/v1` and `/apis/<group>/<version>` in the
//! legacy format, and aggregated discovery (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`,
//! negotiated by the Accept header as client-go 1.30+ asks for it), plus `/version`.
//!
//! The catalogue is the kind registry (`kubesim_api::object::all_kinds`) and the few virtual
//! resources the server answers without storing (metrics, access reviews).

use crate::object::{all_kinds, KindInfo, Scope};
use serde_json::{json, Value};

/// The `gitVersion` `/version` reports.
pub const GIT_VERSION: &str = "v1.34.0";

/// A subresource: (name, response kind as group/version/kind, verbs).
pub type Subresource = (&'static str, (&'static str, &'static str, &'static str), &'static [&'static str]);

/// One served resource (a row of discovery).
#[derive(Clone, Debug)]
pub struct Resource {
    /// API group ("" for core).
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Plural name.
    pub plural: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Namespaced?
    pub namespaced: bool,
    /// Verbs.
    pub verbs: &'static [&'static str],
    /// Short names.
    pub short_names: &'static [&'static str],
    /// Categories (`all`).
    pub categories: &'static [&'static str],
    /// Subresources: (name, response kind group/version/kind, verbs).
    pub subresources: Vec<Subresource>,
    /// The stored kind, for stored resources.
    pub info: Option<&'static KindInfo>,
}

const CRUD: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
const READ: &[&str] = &["get", "list"];
const CREATE: &[&str] = &["create"];
const GET_PATCH_UPDATE: &[&str] = &["get", "patch", "update"];

fn categories(kind: &str) -> &'static [&'static str] {
    match kind {
        "Pod"
        | "Service"
        | "Deployment"
        | "ReplicaSet"
        | "StatefulSet"
        | "DaemonSet"
        | "Job"
        | "CronJob"
        | "HorizontalPodAutoscaler"
        | "ReplicationController" => &["all"],
        _ => &[],
    }
}

fn has_status(kind: &str) -> bool {
    matches!(
        kind,
        "Pod"
            | "Node"
            | "Namespace"
            | "Service"
            | "Deployment"
            | "ReplicaSet"
            | "StatefulSet"
            | "DaemonSet"
            | "Job"
            | "CronJob"
            | "HorizontalPodAutoscaler"
            | "PodDisruptionBudget"
            | "PersistentVolumeClaim"
            | "PersistentVolume"
            | "ReplicationController"
            | "ResourceQuota"
            | "CertificateSigningRequest"
            | "Ingress"
            | "APIService"
            | "CustomResourceDefinition"
            | "FlowSchema"
            | "PriorityLevelConfiguration"
            | "ServiceCIDR"
            | "ResourceClaim"
            | "VolumeAttachment"
            | "ValidatingAdmissionPolicy"
    )
}

fn split(api_version: &'static str) -> (&'static str, &'static str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// Every served resource, in registry order (built once).
pub fn resources() -> &'static [Resource] {
    static RESOURCES: std::sync::OnceLock<Vec<Resource>> = std::sync::OnceLock::new();
    RESOURCES.get_or_init(build)
}

fn build() -> Vec<Resource> {
    let mut out = Vec::new();
    for info in all_kinds() {
        let (group, version) = split(info.api_version);
        let verbs: &'static [&'static str] = match info.kind {
            "Binding" => CREATE,
            "ComponentStatus" => READ,
            _ => CRUD,
        };
        let mut subresources = Vec::new();
        if has_status(info.kind) {
            subresources.push(("status", (group, version, info.kind), GET_PATCH_UPDATE));
        }
        if matches!(info.kind, "Deployment" | "ReplicaSet" | "StatefulSet" | "ReplicationController") {
            subresources.push(("scale", ("autoscaling", "v1", "Scale"), GET_PATCH_UPDATE));
        }
        if info.kind == "Pod" {
            subresources.push(("binding", ("", "v1", "Binding"), CREATE));
            subresources.push(("eviction", ("policy", "v1", "Eviction"), CREATE));
            subresources.push(("ephemeralcontainers", ("", "v1", "Pod"), GET_PATCH_UPDATE));
            subresources.push(("exec", ("", "v1", "PodExecOptions"), &["create", "get"]));
            subresources.push(("log", ("", "v1", "Pod"), &["get"]));
        }
        if info.kind == "Namespace" {
            subresources.push(("finalize", ("", "v1", "Namespace"), &["update"]));
        }
        out.push(Resource {
            group,
            version,
            plural: info.plural,
            kind: info.kind,
            namespaced: info.scope == Scope::Namespaced,
            verbs,
            short_names: info.short_names,
            categories: categories(info.kind),
            subresources,
            info: Some(info),
        });
    }
    let virtual_resource = |group, version, plural, kind, namespaced, verbs| Resource {
        group,
        version,
        plural,
        kind,
        namespaced,
        verbs,
        short_names: &[],
        categories: &[],
        subresources: Vec::new(),
        info: None,
    };
    out.push(virtual_resource("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false, CREATE));
    out.push(virtual_resource("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false, CREATE));
    out.push(virtual_resource("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", false, CREATE));
    out.push(virtual_resource("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", false, READ));
    out.push(virtual_resource("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", true, READ));
    out
}

/// The groups, each with its versions, preferred first (autoscaling: v2 before v1).
pub fn groups(resources: &[Resource]) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut groups: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for r in resources {
        match groups.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, versions)) => {
                if !versions.contains(&r.version) {
                    versions.push(r.version);
                }
            }
            None => groups.push((r.group, vec![r.version])),
        }
    }
    for (_, versions) in groups.iter_mut() {
        versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
    }
    groups
}

/// client-go's `ServerPreferredResources`: for every group (in discovery order) and each of its
/// versions (preferred first), the group's resources, a resource named in several versions
/// taken from the preferred one only; one `(group, plural)` once, at the version chosen.
pub fn preferred(resources: &[Resource]) -> Vec<&Resource> {
    let mut chosen: Vec<&Resource> = Vec::new();
    for (group, versions) in groups(resources) {
        let preferred_version = versions[0];
        for version in versions {
            for r in in_group_version(resources, group, version) {
                match chosen.iter().position(|c| c.group == r.group && c.plural == r.plural) {
                    Some(_) if version != preferred_version => {}
                    Some(i) => chosen[i] = r,
                    None => chosen.push(r),
                }
            }
        }
    }
    chosen
}

/// `kubectl api-versions`' list (metav1.ExtractGroupVersions of `/api` and `/apis`): every
/// group-version, `v1` for the core group.
pub fn group_versions(resources: &[Resource]) -> Vec<String> {
    let mut out = Vec::new();
    for (group, versions) in groups(resources) {
        for v in versions {
            out.push(if group.is_empty() { v.to_string() } else { format!("{group}/{v}") });
        }
    }
    out
}

/// Kubernetes version ordering (v2 > v1 > v1beta2 > v1beta1 > v1alpha1).
fn version_priority(v: &str) -> (u32, u32, u32) {
    let rest = v.trim_start_matches('v');
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    let (stability, minor) = if let Some(n) = tail.strip_prefix("beta") {
        (1, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (0, n.parse().unwrap_or(0))
    } else {
        (2, 0)
    };
    (stability, major, minor)
}

/// A group-version's resources, by name (as kube-apiserver lists them; `kubectl get all`
/// follows this order).
fn in_group_version<'a>(resources: &'a [Resource], group: &str, version: &str) -> Vec<&'a Resource> {
    let mut selected: Vec<&Resource> = resources.iter().filter(|r| r.group == group && r.version == version).collect();
    selected.sort_by_key(|r| r.plural);
    selected
}

fn singular(kind: &str) -> String {
    kind.to_ascii_lowercase()
}

/// `/api` (legacy), as `kubesim serve` answers it on loopback.
pub fn api_versions() -> Value {
    api_versions_at("127.0.0.1")
}

/// `/api` (legacy) from a server at `address` (`serverAddressByClientCIDRs`).
pub fn api_versions_at(address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": address }],
    })
}

fn group_json(group: &str, versions: &[&str]) -> Value {
    let versions: Vec<Value> = versions.iter().map(|v| json!({ "groupVersion": format!("{group}/{v}"), "version": v })).collect();
    json!({ "name": group, "versions": versions, "preferredVersion": versions[0] })
}

/// `/apis` (legacy APIGroupList).
pub fn api_group_list(resources: &[Resource]) -> Value {
    let groups: Vec<Value> = groups(resources).iter().filter(|(g, _)| !g.is_empty()).map(|(g, v)| group_json(g, v)).collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// `/apis/<group>` (legacy APIGroup).
pub fn api_group(resources: &[Resource], group: &str) -> Option<Value> {
    let groups = groups(resources);
    let (g, versions) = groups.iter().find(|(g, _)| *g == group && !g.is_empty())?;
    let mut value = group_json(g, versions);
    value["kind"] = "APIGroup".into();
    value["apiVersion"] = "v1".into();
    Some(value)
}

/// `/api/v1`, `/apis/<group>/<version>` (legacy APIResourceList).
pub fn resource_list(resources: &[Resource], group: &str, version: &str) -> Option<Value> {
    let selected = in_group_version(resources, group, version);
    if selected.is_empty() {
        return None;
    }
    let mut list = Vec::new();
    for r in selected {
        let mut entry = json!({
            "name": r.plural,
            "singularName": singular(r.kind),
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
        });
        if !r.short_names.is_empty() {
            entry["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            entry["categories"] = json!(r.categories);
        }
        list.push(entry);
        for (sub, (g, v, k), verbs) in &r.subresources {
            let mut entry = json!({ "name": format!("{}/{sub}", r.plural), "singularName": "", "namespaced": r.namespaced, "kind": k, "verbs": verbs });
            if (*g, *v) != (group, version) {
                entry["group"] = (*g).into();
                entry["version"] = (*v).into();
            }
            list.push(entry);
        }
    }
    let group_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(json!({ "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list }))
}

/// The aggregated discovery document for `/api` (core) or `/apis` (every other group).
pub fn aggregated(resources: &[Resource], core: bool) -> Value {
    let mut items = Vec::new();
    for (group, versions) in groups(resources) {
        if group.is_empty() != core {
            continue;
        }
        let versions: Vec<Value> = versions
            .iter()
            .map(|version| {
                let list: Vec<Value> = in_group_version(resources, group, version)
                    .into_iter()
                    .map(|r| {
                        let mut entry = json!({
                            "resource": r.plural,
                            "responseKind": { "group": r.group, "version": r.version, "kind": r.kind },
                            "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
                            "singularResource": singular(r.kind),
                            "verbs": r.verbs,
                        });
                        if !r.short_names.is_empty() {
                            entry["shortNames"] = json!(r.short_names);
                        }
                        if !r.categories.is_empty() {
                            entry["categories"] = json!(r.categories);
                        }
                        if !r.subresources.is_empty() {
                            entry["subresources"] = r
                                .subresources
                                .iter()
                                .map(|(sub, (g, v, k), verbs)| json!({ "subresource": sub, "responseKind": { "group": g, "version": v, "kind": k }, "verbs": verbs }))
                                .collect();
                        }
                        entry
                    })
                    .collect();
                json!({ "version": version, "resources": list, "freshness": "Current" })
            })
            .collect();
        let mut metadata = json!({ "creationTimestamp": null });
        if !group.is_empty() {
            metadata["name"] = group.into();
        }
        items.push(json!({ "metadata": metadata, "versions": versions }));
    }
    json!({ "kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items })
}

/// `/version`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "34",
        "emulationMajor": "1",
        "emulationMinor": "34",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "33",
        "gitVersion": GIT_VERSION,
        "gitCommit": "kubesim",
        "gitTreeState": "clean",
        "buildDate": "2025-08-27T00:00:00Z",
        "goVersion": "go1.24.6",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// Finds the served resource for a URL's group, version and plural.
pub fn find<'a>(resources: &'a [Resource], group: &str, version: &str, plural: &str) -> Option<&'a Resource> {
    resources.iter().find(|r| r.group == group && r.version == version && r.plural == plural)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferred_versions_come_first() {
        let all = resources();
        let groups = groups(all);
        let autoscaling = groups.iter().find(|(g, _)| *g == "autoscaling").unwrap();
        assert_eq!(autoscaling.1, vec!["v2", "v1"]);
        assert!(resource_list(all, "", "v1").unwrap()["resources"].as_array().unwrap().iter().any(|r| r["name"] == "pods/log"));
        let agg = aggregated(all, false);
        assert!(agg["items"].as_array().unwrap().iter().any(|g| g["metadata"]["name"] == "apps"));
    }

    #[test]
    fn preferred_resources_take_each_resource_once_at_the_preferred_version() {
        let all = resources();
        let chosen = preferred(all);
        let hpa: Vec<&&Resource> = chosen.iter().filter(|r| r.plural == "horizontalpodautoscalers").collect();
        assert_eq!(hpa.len(), 1);
        assert_eq!(hpa[0].version, "v2");
        assert!(chosen.iter().any(|r| r.group == "metrics.k8s.io" && r.plural == "pods"));
        assert!(chosen.iter().any(|r| r.group.is_empty() && r.plural == "events") && chosen.iter().any(|r| r.group == "events.k8s.io" && r.plural == "events"));
        let versions = group_versions(all);
        assert!(versions.contains(&"v1".to_string()) && versions.contains(&"autoscaling/v1".to_string()) && versions.contains(&"autoscaling/v2".to_string()));
    }
}
