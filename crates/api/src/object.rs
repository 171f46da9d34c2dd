//! The object model: one [`Object`] enum over the k8s-openapi types kubesim's components act on,
//! plus [`DynamicObject`] for every other built-in kind (stored, listed and served, but kept as
//! JSON so the wasm bundle does not pay for the serde code of kinds nothing reads).

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::coordination::v1 as coordination;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::networking::v1 as networking;
use k8s_openapi::api::storage::v1 as storage;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Whether a kind lives in a namespace or at cluster scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Namespaced (pods, deployments, ...).
    Namespaced,
    /// Cluster-scoped (nodes, namespaces, ...).
    Cluster,
}

/// A built-in kind the API server serves: the row `kubectl api-resources` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// `group/version` or `v1` for the core group.
    pub api_version: &'static str,
    /// The kind, e.g. `Pod`.
    pub kind: &'static str,
    /// The plural resource name, e.g. `pods`.
    pub plural: &'static str,
    /// Short names kubectl accepts.
    pub short_names: &'static [&'static str],
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
}

impl KindInfo {
    /// The API group ("" for core).
    pub fn group(&self) -> &'static str {
        match self.api_version.split_once('/') {
            Some((group, _)) => group,
            None => "",
        }
    }
    /// `plural` or `plural.group` as used in API error messages (`pods`, `deployments.apps`).
    pub fn qualified_resource(&self) -> String {
        match self.group() {
            "" => self.plural.to_string(),
            group => format!("{}.{}", self.plural, group),
        }
    }
}

/// A built-in kind that kubesim keeps as JSON (see module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DynamicObject {
    /// `apiVersion`.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Every other top-level field (spec, status, data, ...), in key order.
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
    /// The typed form [`Object::decode_shared`] made of this object, shared by every holder of
    /// the store's `Arc` (kube-proxy on each node reads one EndpointSlice, not a copy each).
    /// Never cloned: a copy is a new object that may be changed.
    #[serde(skip)]
    pub cache: DecodeCache,
}

/// A decode of a JSON-kept object, made once ([`Object::decode_shared`]) for the
/// resourceVersion it was made at.
#[derive(Default)]
pub struct DecodeCache(std::sync::OnceLock<(Option<String>, Arc<dyn std::any::Any + Send + Sync>)>);

impl Clone for DecodeCache {
    fn clone(&self) -> DecodeCache {
        DecodeCache::default()
    }
}

impl std::fmt::Debug for DecodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DecodeCache")
    }
}

impl PartialEq for DecodeCache {
    fn eq(&self, _: &DecodeCache) -> bool {
        true
    }
}

macro_rules! copy_status {
    (status, $a:ident, $b:ident) => {
        $a.status = $b.status.clone()
    };
    (nostatus, $a:ident, $b:ident) => {{
        let _ = ($a, $b);
    }};
}

macro_rules! status_eq {
    (status, $a:ident, $b:ident) => {
        $a.status == $b.status
    };
    (nostatus, $a:ident, $b:ident) => {{
        let _ = ($a, $b);
        true
    }};
}

/// Declares the typed kinds: `Variant => type, plural, [short names], scope, status|nostatus;`.
/// To give a JSON-kept kind a typed variant, add it here and remove it from [`DYNAMIC_KINDS`].
macro_rules! typed_kinds {
    ($( $variant:ident => $ty:ty, $plural:literal, [$($short:literal),*], $scope:ident, $status:ident; )*) => {
        /// A stored API object. Typed variants for the kinds components act on; `Dynamic` for the rest.
        #[derive(Clone, Debug, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum Object {
            $(
                #[doc = concat!("A `", stringify!($variant), "`.")]
                $variant(Box<$ty>),
            )*
            /// Any other built-in kind, kept as JSON.
            Dynamic(Box<DynamicObject>),
        }

        /// The typed kinds, in a fixed order.
        pub const TYPED_KINDS: &[KindInfo] = &[
            $( KindInfo {
                api_version: <$ty as k8s_openapi::Resource>::API_VERSION,
                kind: <$ty as k8s_openapi::Resource>::KIND,
                plural: $plural,
                short_names: &[$($short),*],
                scope: Scope::$scope,
            }, )*
        ];

        impl Object {
    /// The object as another Rust type of its kind (a k8s-openapi struct for a kind kept as
    /// JSON, such as EndpointSlice); `None` if it does not fit.
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(self.to_json()).ok()
    }

    /// [`Object::decode`], shared: a JSON-kept object is decoded once per resourceVersion and
    /// every caller gets the same `Arc` (for readers of objects in the store, which no one
    /// changes in place).
    pub fn decode_shared<T: serde::de::DeserializeOwned + Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let Object::Dynamic(d) = self else { return self.decode::<T>().map(Arc::new) };
        let rv = &d.metadata.resource_version;
        if let Some((at, any)) = d.cache.0.get() {
            if at == rv {
                if let Ok(t) = any.clone().downcast::<T>() {
                    return Some(t);
                }
            }
            return self.decode::<T>().map(Arc::new);
        }
        let t = Arc::new(self.decode::<T>()?);
        let _ = d.cache.0.set((rv.clone(), t.clone() as Arc<dyn std::any::Any + Send + Sync>));
        Some(t)
    }

            /// The object's metadata.
            pub fn metadata(&self) -> &ObjectMeta {
                match self {
                    $( Object::$variant(o) => &o.metadata, )*
                    Object::Dynamic(o) => &o.metadata,
                }
            }
            /// The object's metadata, mutably.
            pub fn metadata_mut(&mut self) -> &mut ObjectMeta {
                match self {
                    $( Object::$variant(o) => &mut o.metadata, )*
                    Object::Dynamic(o) => &mut o.metadata,
                }
            }
            /// `apiVersion`.
            pub fn api_version(&self) -> &str {
                match self {
                    $( Object::$variant(_) => <$ty as k8s_openapi::Resource>::API_VERSION, )*
                    Object::Dynamic(o) => &o.api_version,
                }
            }
            /// `kind`.
            pub fn kind(&self) -> &str {
                match self {
                    $( Object::$variant(_) => <$ty as k8s_openapi::Resource>::KIND, )*
                    Object::Dynamic(o) => &o.kind,
                }
            }
            /// Serializes the object as the API server would serve it (apiVersion and kind first).
            pub fn to_json(&self) -> serde_json::Value {
                let value = match self {
                    $( Object::$variant(o) => serde_json::to_value(o.as_ref()), )*
                    Object::Dynamic(o) => serde_json::to_value(o.as_ref()),
                };
                value.expect("API objects always serialize to JSON")
            }
            /// Replaces this object's status with `other`'s (the status subresource's ownership
            /// rule). Objects of different kinds, and kinds without status, are left alone.
            pub fn copy_status_from(&mut self, other: &Object) {
                match (self, other) {
                    $( (Object::$variant(a), Object::$variant(b)) => copy_status!($status, a, b), )*
                    (Object::Dynamic(a), Object::Dynamic(b)) => match b.rest.get("status") {
                        Some(status) => {
                            a.rest.insert("status".into(), status.clone());
                        }
                        None => {
                            a.rest.remove("status");
                        }
                    },
                    _ => {}
                }
            }
            /// Whether `other` has this object's status: `other` with this object's status
            /// copied over ([`Object::copy_status_from`]) would equal `other` (for objects that
            /// are otherwise equal), without copying either.
            pub fn status_eq(&self, other: &Object) -> bool {
                match (self, other) {
                    $( (Object::$variant(a), Object::$variant(b)) => status_eq!($status, a, b), )*
                    (Object::Dynamic(a), Object::Dynamic(b)) => a.rest.get("status") == b.rest.get("status"),
                    _ => true,
                }
            }
            /// Decodes a JSON document of the given kind into its typed form; the error carries
            /// the JSON path of the offending field.
            pub fn from_json(info: &KindInfo, value: serde_json::Value) -> Result<Object, FieldDecodeError> {
                $(
                    if info.kind == <$ty as k8s_openapi::Resource>::KIND
                        && info.api_version == <$ty as k8s_openapi::Resource>::API_VERSION {
                        return decode_typed::<$ty>(value).map(|o| Object::$variant(Box::new(o)));
                    }
                )*
                decode_typed::<DynamicObject>(value).map(|o| Object::Dynamic(Box::new(o)))
            }
        }
    };
}

typed_kinds! {
    Pod => core::Pod, "pods", ["po"], Namespaced, status;
    Node => core::Node, "nodes", ["no"], Cluster, status;
    Namespace => core::Namespace, "namespaces", ["ns"], Cluster, status;
    Event => core::Event, "events", ["ev"], Namespaced, nostatus;
    ServiceAccount => core::ServiceAccount, "serviceaccounts", ["sa"], Namespaced, nostatus;
    ConfigMap => core::ConfigMap, "configmaps", ["cm"], Namespaced, nostatus;
    Secret => core::Secret, "secrets", [], Namespaced, nostatus;
    Service => core::Service, "services", ["svc"], Namespaced, status;
    Deployment => apps::Deployment, "deployments", ["deploy"], Namespaced, status;
    ReplicaSet => apps::ReplicaSet, "replicasets", ["rs"], Namespaced, status;
    Lease => coordination::Lease, "leases", [], Namespaced, nostatus;
    Ingress => networking::Ingress, "ingresses", ["ing"], Namespaced, status;
    IngressClass => networking::IngressClass, "ingressclasses", [], Cluster, nostatus;
    CSIDriver => storage::CSIDriver, "csidrivers", [], Cluster, nostatus;
    CSINode => storage::CSINode, "csinodes", [], Cluster, nostatus;
    VolumeAttachment => storage::VolumeAttachment, "volumeattachments", [], Cluster, status;
}

/// The remaining built-in kinds of Kubernetes v1.34, served and stored as JSON.
pub const DYNAMIC_KINDS: &[KindInfo] = &[
    dynamic("v1", "Binding", "bindings", &[], Scope::Namespaced),
    dynamic("v1", "ComponentStatus", "componentstatuses", &["cs"], Scope::Cluster),
    dynamic("v1", "Endpoints", "endpoints", &["ep"], Scope::Namespaced),
    dynamic("v1", "LimitRange", "limitranges", &["limits"], Scope::Namespaced),
    dynamic("v1", "PersistentVolumeClaim", "persistentvolumeclaims", &["pvc"], Scope::Namespaced),
    dynamic("v1", "PersistentVolume", "persistentvolumes", &["pv"], Scope::Cluster),
    dynamic("v1", "PodTemplate", "podtemplates", &[], Scope::Namespaced),
    dynamic("v1", "ReplicationController", "replicationcontrollers", &["rc"], Scope::Namespaced),
    dynamic("v1", "ResourceQuota", "resourcequotas", &["quota"], Scope::Namespaced),
    dynamic("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", &[], Scope::Cluster),
    dynamic("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", &[], Scope::Cluster),
    dynamic("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", &[], Scope::Cluster),
    dynamic("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", &[], Scope::Cluster),
    dynamic("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", &["crd", "crds"], Scope::Cluster),
    dynamic("apiregistration.k8s.io/v1", "APIService", "apiservices", &[], Scope::Cluster),
    dynamic("apps/v1", "ControllerRevision", "controllerrevisions", &[], Scope::Namespaced),
    dynamic("apps/v1", "DaemonSet", "daemonsets", &["ds"], Scope::Namespaced),
    dynamic("apps/v1", "StatefulSet", "statefulsets", &["sts"], Scope::Namespaced),
    dynamic("autoscaling/v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", &["hpa"], Scope::Namespaced),
    dynamic("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", &["hpa"], Scope::Namespaced),
    dynamic("batch/v1", "CronJob", "cronjobs", &["cj"], Scope::Namespaced),
    dynamic("batch/v1", "Job", "jobs", &[], Scope::Namespaced),
    dynamic("certificates.k8s.io/v1", "CertificateSigningRequest", "certificatesigningrequests", &["csr"], Scope::Cluster),
    dynamic("discovery.k8s.io/v1", "EndpointSlice", "endpointslices", &[], Scope::Namespaced),
    dynamic("events.k8s.io/v1", "Event", "events", &["ev"], Scope::Namespaced),
    dynamic("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", "flowschemas", &[], Scope::Cluster),
    dynamic("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration", "prioritylevelconfigurations", &[], Scope::Cluster),
    dynamic("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", &["netpol"], Scope::Namespaced),
    dynamic("networking.k8s.io/v1", "IPAddress", "ipaddresses", &[], Scope::Cluster),
    dynamic("networking.k8s.io/v1", "ServiceCIDR", "servicecidrs", &[], Scope::Cluster),
    dynamic("node.k8s.io/v1", "RuntimeClass", "runtimeclasses", &[], Scope::Cluster),
    dynamic("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", &["pdb"], Scope::Namespaced),
    dynamic("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", &[], Scope::Cluster),
    dynamic("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", &[], Scope::Cluster),
    dynamic("rbac.authorization.k8s.io/v1", "Role", "roles", &[], Scope::Namespaced),
    dynamic("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", &[], Scope::Namespaced),
    dynamic("resource.k8s.io/v1", "DeviceClass", "deviceclasses", &[], Scope::Cluster),
    dynamic("resource.k8s.io/v1", "ResourceClaim", "resourceclaims", &[], Scope::Namespaced),
    dynamic("resource.k8s.io/v1", "ResourceClaimTemplate", "resourceclaimtemplates", &[], Scope::Namespaced),
    dynamic("resource.k8s.io/v1", "ResourceSlice", "resourceslices", &[], Scope::Cluster),
    dynamic("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", &["pc"], Scope::Cluster),
    dynamic("storage.k8s.io/v1", "CSIStorageCapacity", "csistoragecapacities", &[], Scope::Namespaced),
    dynamic("storage.k8s.io/v1", "StorageClass", "storageclasses", &["sc"], Scope::Cluster),
    dynamic("storage.k8s.io/v1", "VolumeAttributesClass", "volumeattributesclasses", &[], Scope::Cluster),
];

const fn dynamic(api_version: &'static str, kind: &'static str, plural: &'static str, short_names: &'static [&'static str], scope: Scope) -> KindInfo {
    KindInfo { api_version, kind, plural, short_names, scope }
}

/// Every kind the API server serves: the typed ones first, then the JSON-kept ones.
pub fn all_kinds() -> impl Iterator<Item = &'static KindInfo> {
    TYPED_KINDS.iter().chain(DYNAMIC_KINDS.iter())
}

/// Looks a kind up by `apiVersion` and `kind`, as the API server's REST mapper does.
pub fn kind_info(api_version: &str, kind: &str) -> Option<&'static KindInfo> {
    all_kinds().find(|k| k.api_version == api_version && k.kind == kind)
}

/// Resolves what a kubectl user typed (`po`, `pods`, `pod`, `deployments.apps`, `Deployment`,
/// `deployment.v1.apps`, `ingresses.networking.k8s.io`) to a kind, as kubectl's
/// schema.ParseResourceArg and the REST mapper do: with two or more dots, `TYPE.VERSION.GROUP`
/// is tried first, then `TYPE.GROUP` with everything after the first dot as the group. Where
/// several versions serve one resource (HPA) and none is named, the first listed wins.
pub fn resolve_resource(name: &str) -> Option<&'static KindInfo> {
    let lower = name.to_ascii_lowercase();
    let matches = |k: &KindInfo, resource: &str| k.plural == resource || k.kind.to_ascii_lowercase() == resource || k.short_names.contains(&resource);
    let version_of = |k: &KindInfo| k.api_version.rsplit('/').next().unwrap_or(k.api_version).to_string();
    let Some((resource, rest)) = lower.split_once('.') else {
        return all_kinds().find(|k| matches(k, &lower));
    };
    if let Some((version, group)) = rest.split_once('.') {
        if let Some(k) = all_kinds().find(|k| matches(k, resource) && k.group() == group && version_of(k) == version) {
            return Some(k);
        }
    }
    // `pods.v1` names the core group's version v1 (the core group is "").
    if let Some(k) = all_kinds().find(|k| matches(k, resource) && k.group().is_empty() && version_of(k) == rest) {
        return Some(k);
    }
    all_kinds().find(|k| matches(k, resource) && k.group() == rest)
}

/// A document that could not be decoded into its kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct FieldDecodeError {
    /// The JSON path of the field (`spec.replicas`), `.` for the document itself.
    pub path: String,
    /// What was wrong.
    pub message: String,
}

fn decode_typed<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, FieldDecodeError> {
    match serde_json::from_value::<T>(value.clone()) {
        Ok(object) => Ok(object),
        Err(err) => {
            let message = err.to_string();
            let path = locate_error::<T>(&value, &message);
            Err(FieldDecodeError { path, message })
        }
    }
}

/// Finds the JSON path of a decode error by elimination: a field is the culprit when removing
/// it makes that error go away; descend into it until no single child does. Runs only on the
/// error path, and reuses the one `serde_json::Value` deserializer every typed kind already
/// has (a path-tracking deserializer would double the wasm code for every kind).
fn locate_error<T: serde::de::DeserializeOwned>(root: &serde_json::Value, message: &str) -> String {
    fn pointer_mut<'a>(value: &'a mut serde_json::Value, path: &[PathStep]) -> Option<&'a mut serde_json::Value> {
        let mut current = value;
        for step in path {
            current = match step {
                PathStep::Key(k) => current.as_object_mut()?.get_mut(k)?,
                PathStep::Index(i) => current.as_array_mut()?.get_mut(*i)?,
            };
        }
        Some(current)
    }
    let still_fails = |candidate: serde_json::Value| match serde_json::from_value::<T>(candidate) {
        Ok(_) => false,
        Err(e) => e.to_string() == message,
    };
    let mut path: Vec<PathStep> = Vec::new();
    // Bounded: at most 32 levels, each trying the children of one node.
    'descend: for _ in 0..32 {
        let Some(node) = pointer_mut(&mut root.clone(), &path).map(|n| n.clone()) else { break };
        let children: Vec<PathStep> = match &node {
            serde_json::Value::Object(map) => map.keys().cloned().map(PathStep::Key).collect(),
            serde_json::Value::Array(items) => (0..items.len()).map(PathStep::Index).collect(),
            _ => break,
        };
        for child in children {
            let mut candidate = root.clone();
            let Some(parent) = pointer_mut(&mut candidate, &path) else { break 'descend };
            match (&child, parent) {
                (PathStep::Key(k), serde_json::Value::Object(map)) => {
                    map.remove(k);
                }
                (PathStep::Index(i), serde_json::Value::Array(items)) => {
                    items.remove(*i);
                }
                _ => continue,
            }
            if !still_fails(candidate) {
                path.push(child);
                continue 'descend;
            }
        }
        break;
    }
    if path.is_empty() {
        return ".".to_string();
    }
    let mut text = String::new();
    for step in &path {
        match step {
            PathStep::Key(k) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(k);
            }
            PathStep::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

impl Object {
    /// The namespace, or "" for cluster-scoped objects.
    pub fn namespace(&self) -> &str {
        self.metadata().namespace.as_deref().unwrap_or("")
    }
    /// The name ("" if not yet named).
    pub fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or("")
    }
    /// The decimal resourceVersion ("" if never stored).
    pub fn resource_version(&self) -> &str {
        self.metadata().resource_version.as_deref().unwrap_or("")
    }
    /// The kind's registry entry.
    pub fn info(&self) -> Option<&'static KindInfo> {
        kind_info(self.api_version(), self.kind())
    }
    /// The pod, if this is one.
    pub fn as_pod(&self) -> Option<&core::Pod> {
        match self {
            Object::Pod(p) => Some(p),
            _ => None,
        }
    }
    /// The node, if this is one.
    pub fn as_node(&self) -> Option<&core::Node> {
        match self {
            Object::Node(n) => Some(n),
            _ => None,
        }
    }
}

/// Where Go's encoding/json writes what serde omits, applied to an object's JSON as the API
/// server serves it (kube-apiserver and kubectl's output both show these): a PodCondition's
/// `lastProbeTime` is a metav1.Time struct (omitempty does not drop structs), so an unset one is
/// written `null`. The one place this rule lives; the HTTP API and the kubectl layer both call it.
pub fn go_encoding(kind: &str, object: &mut serde_json::Value) {
    if kind == "Pod" {
        if let Some(conditions) = object.pointer_mut("/status/conditions").and_then(serde_json::Value::as_array_mut) {
            for c in conditions.iter_mut().filter_map(serde_json::Value::as_object_mut) {
                c.entry("lastProbeTime").or_insert(serde_json::Value::Null);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_kubectl_resource_names_like_the_rest_mapper() {
        assert_eq!(resolve_resource("po").unwrap().kind, "Pod");
        assert_eq!(resolve_resource("pods").unwrap().kind, "Pod");
        assert_eq!(resolve_resource("Deployment").unwrap().kind, "Deployment");
        assert_eq!(resolve_resource("deployments.apps").unwrap().kind, "Deployment");
        assert_eq!(resolve_resource("deploy").unwrap().api_version, "apps/v1");
        assert!(resolve_resource("deployments.batch").is_none());
        // schema.ParseResourceArg: TYPE.VERSION.GROUP, then TYPE.GROUP (the docs'
        // `kubectl set image deployment.v1.apps/nginx-deployment nginx=nginx:1.16.1`).
        assert_eq!(resolve_resource("deployment.v1.apps").unwrap().kind, "Deployment");
        assert_eq!(resolve_resource("deploy.v1.apps").unwrap().kind, "Deployment");
        assert_eq!(resolve_resource("deployments.apps").unwrap().kind, "Deployment");
        assert_eq!(resolve_resource("hpa.v1.autoscaling").unwrap().api_version, "autoscaling/v1");
        assert_eq!(resolve_resource("horizontalpodautoscalers.v2.autoscaling").unwrap().api_version, "autoscaling/v2");
        assert_eq!(resolve_resource("ingresses.networking.k8s.io").unwrap().kind, "Ingress");
        assert_eq!(resolve_resource("ingress.v1.networking.k8s.io").unwrap().kind, "Ingress");
        assert_eq!(resolve_resource("jobs.v1.batch").unwrap().kind, "Job");
        assert_eq!(resolve_resource("pods.v1").unwrap().kind, "Pod");
        assert!(resolve_resource("deployment.v2.apps").is_none());
        assert!(resolve_resource("frobnicators").is_none());
    }

    #[test]
    fn typed_objects_serialize_with_api_version_and_kind() {
        let pod = Object::Pod(Box::default());
        let json = pod.to_json();
        assert_eq!(json["apiVersion"], "v1");
        assert_eq!(json["kind"], "Pod");
    }

    #[test]
    fn decode_errors_name_the_field_path() {
        let info = kind_info("apps/v1", "Deployment").unwrap();
        let value = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "x"}, "spec": {"replicas": "three", "selector": {}, "template": {}}});
        let err = Object::from_json(info, value).unwrap_err();
        assert_eq!(err.path, "spec.replicas");
        assert!(err.message.contains("invalid type"), "{}", err.message);
        let info = kind_info("v1", "Pod").unwrap();
        let value = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y", "ports": [{"containerPort": "eighty"}]}]}});
        let err = Object::from_json(info, value).unwrap_err();
        assert_eq!(err.path, "spec.containers[1].ports[0].containerPort");
    }
}
