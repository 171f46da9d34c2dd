//! The namespace controller (pkg/controller/namespace) and the namespace-scoped publishers:
//! the ServiceAccount controller ("default" in every namespace) and the root CA publisher
//! (ConfigMap `kube-root-ca.crt` in every namespace).
//!
//! Namespace deletion model: upstream, DELETE on a namespace sets deletionTimestamp and phase
//! Terminating while `spec.finalizers` contains `kubernetes`; this controller deletes every
//! namespaced object in it, reports progress in the namespace's status conditions, then
//! removes `kubernetes` from spec.finalizers (the `finalize` subresource), after which the API
//! server removes the namespace. kubesim models the finalize call as an update of
//! spec.finalizers followed by a DELETE (which the API server completes at once, as no
//! metadata finalizers remain). If the API server removes a namespace immediately (no
//! Terminating phase), the controller still deletes the namespace's leftover contents when it
//! sees the namespace gone.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{ConfigMap, Namespace, NamespaceCondition, ServiceAccount};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{all_kinds, Object, Scope};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::{Ctx, WatchEvent};
use kubesim_store::{resource_of, EventType, Resource};
use std::collections::BTreeMap;

/// Modelled processing latency.
pub const NAMESPACE_LATENCY_MS: Millis = 10;
/// Re-check interval while a terminating namespace still has content.
pub const NAMESPACE_RECHECK_MS: Millis = 1000;

fn namespaced_resources() -> Vec<(Resource, &'static kubesim_api::KindInfo)> {
    let mut out: Vec<(Resource, &'static kubesim_api::KindInfo)> = Vec::new();
    for info in all_kinds() {
        if info.scope != Scope::Namespaced || matches!(info.kind, "Binding") {
            continue;
        }
        let r = resource_of(info);
        if !out.iter().any(|(x, _)| *x == r) {
            out.push((r, info));
        }
    }
    out
}

fn as_namespace(object: &Object) -> Option<&Namespace> {
    match object {
        Object::Namespace(n) => Some(n),
        _ => None,
    }
}

fn ns_condition(type_: &str, status: &str, reason: &str, message: String, now: Millis) -> NamespaceCondition {
    NamespaceCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message),
        last_transition_time: Some(kubesim_api::time::time_at(now)),
    }
}

/// The namespace controller.
#[derive(Clone, Debug)]
pub struct NamespaceController {
    namespaces: Cache,
    queue: WorkQueue,
}

impl Default for NamespaceController {
    fn default() -> Self {
        NamespaceController::new()
    }
}

impl NamespaceController {
    /// A controller with an empty cache.
    pub fn new() -> NamespaceController {
        NamespaceController { namespaces: Cache::default(), queue: WorkQueue::new(NAMESPACE_LATENCY_MS) }
    }

    /// Deletes the namespace's contents; returns (remaining resource counts, finalizers seen).
    fn delete_contents(&mut self, namespace: &str, ctx: &mut Ctx) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
        let mut remaining = BTreeMap::new();
        let mut finalizers = BTreeMap::new();
        for (resource, info) in namespaced_resources() {
            // Events are deleted too, but last (they describe the deletion of everything else).
            let objects: Vec<_> = ctx.api.store().list(resource, Some(namespace)).cloned().collect();
            if objects.is_empty() {
                continue;
            }
            let label = if info.group().is_empty() { format!("{}.", info.plural) } else { format!("{}.{}", info.plural, info.group()) };
            *remaining.entry(label).or_insert(0) += objects.len();
            for object in objects {
                for f in object.metadata().finalizers.iter().flatten() {
                    *finalizers.entry(f.clone()).or_insert(0) += 1;
                }
                if object.metadata().deletion_timestamp.is_some() {
                    continue;
                }
                let info = object.info().unwrap_or(info);
                let _ = ctx.delete(info, namespace, object.name(), DeleteOptions::default());
            }
        }
        (remaining, finalizers)
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let name = key.1.clone();
        let Some(object) = self.namespaces.get(key).cloned() else {
            // Gone without a Terminating phase: clean up whatever it left behind.
            let (remaining, _) = self.delete_contents(&name, ctx);
            if !remaining.is_empty() {
                self.queue.add_after(key.clone(), NAMESPACE_RECHECK_MS, ctx);
            }
            return Ok(());
        };
        let Some(ns) = as_namespace(&object) else { return Ok(()) };
        if ns.metadata.deletion_timestamp.is_none() {
            return Ok(());
        }
        let mut ns = ns.clone();
        let (remaining, finalizers) = self.delete_contents(&name, ctx);
        // Status: phase Terminating and the deletion conditions.
        let now = ctx.now;
        let mut conditions = vec![
            ns_condition("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered".into(), now),
            ns_condition(
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed".into(),
                now,
            ),
            ns_condition(
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization".into(),
                now,
            ),
        ];
        if remaining.is_empty() {
            conditions.push(ns_condition("NamespaceContentRemaining", "False", "ContentRemoved", "All content successfully removed".into(), now));
        } else {
            let parts: Vec<String> = remaining.iter().map(|(r, n)| format!("{r} has {n} resource instances")).collect();
            conditions.push(ns_condition(
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                format!("Some resources are remaining: {}", parts.join(", ")),
                now,
            ));
        }
        if finalizers.is_empty() {
            conditions.push(ns_condition(
                "NamespaceFinalizersRemaining",
                "False",
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished".into(),
                now,
            ));
        } else {
            let parts: Vec<String> = finalizers.iter().map(|(f, n)| format!("{f} in {n} resource instances")).collect();
            conditions.push(ns_condition(
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                format!("Some content in the namespace has finalizers remaining: {}", parts.join(", ")),
                now,
            ));
        }
        let status = ns.status.get_or_insert_with(Default::default);
        // Keep transition times of unchanged conditions.
        let old: Vec<NamespaceCondition> = status.conditions.clone().unwrap_or_default();
        for c in conditions.iter_mut() {
            if let Some(o) = old.iter().find(|o| o.type_ == c.type_ && o.status == c.status && o.reason == c.reason && o.message == c.message) {
                c.last_transition_time = o.last_transition_time.clone();
            }
        }
        status.phase = Some("Terminating".into());
        status.conditions = Some(conditions);
        if Some(&ns.status) != as_namespace(&object).map(|n| &n.status) {
            match ctx.update_status(Object::Namespace(Box::new(ns.clone()))) {
                Ok(updated) => {
                    self.namespaces.put(updated.clone());
                    if let Some(n) = as_namespace(&updated) {
                        ns = n.clone();
                    }
                }
                Err(e) if is_not_found(&e) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        if !remaining.is_empty() {
            self.queue.add_after(key.clone(), NAMESPACE_RECHECK_MS, ctx);
            return Ok(());
        }
        // finalize: drop "kubernetes" from spec.finalizers, then the API server removes it.
        let has_kubernetes = ns.spec.as_ref().and_then(|s| s.finalizers.as_ref()).is_some_and(|f| f.iter().any(|x| x == "kubernetes"));
        if has_kubernetes {
            let mut copy = ns.clone();
            if let Some(f) = copy.spec.as_mut().and_then(|s| s.finalizers.as_mut()) {
                f.retain(|x| x != "kubernetes");
            }
            match ctx.update(Object::Namespace(Box::new(copy))) {
                Ok(updated) => {
                    self.namespaces.put(updated);
                }
                Err(e) if is_not_found(&e) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        let info = kubesim_api::kind_info("v1", "Namespace").expect("served");
        match ctx.delete(info, "", &name, DeleteOptions::default()) {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl Reconciler for NamespaceController {
    fn name(&self) -> &'static str {
        "namespace-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "namespaces")) => namespaces,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let keys: Vec<Key> = self.namespaces.iter().filter(|o| o.metadata().deletion_timestamp.is_some()).map(|o| key_of(o)).collect();
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        if event.event_type == EventType::Deleted || event.object.metadata().deletion_timestamp.is_some() {
            self.queue.add(key_of(&event.object), ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}

fn namespace_active(ns: &Object) -> bool {
    ns.metadata().deletion_timestamp.is_none() && as_namespace(ns).and_then(|n| n.status.as_ref()).and_then(|s| s.phase.as_deref()) != Some("Terminating")
}

/// The ServiceAccount controller: ensures ServiceAccount "default" in every active namespace.
#[derive(Clone, Debug)]
pub struct ServiceAccountController {
    namespaces: Cache,
    accounts: Cache,
    queue: WorkQueue,
}

impl Default for ServiceAccountController {
    fn default() -> Self {
        ServiceAccountController::new()
    }
}

impl ServiceAccountController {
    /// A controller with empty caches.
    pub fn new() -> ServiceAccountController {
        ServiceAccountController { namespaces: Cache::default(), accounts: Cache::default(), queue: WorkQueue::new(NAMESPACE_LATENCY_MS) }
    }

    fn sync(&mut self, namespace: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(ns) = self.namespaces.get_named("", namespace) else { return Ok(()) };
        if !namespace_active(ns) || self.accounts.get_named(namespace, "default").is_some() {
            return Ok(());
        }
        let sa = ServiceAccount {
            metadata: ObjectMeta { name: Some("default".into()), namespace: Some(namespace.into()), ..Default::default() },
            ..Default::default()
        };
        match ctx.create(Object::ServiceAccount(Box::new(sa))) {
            Ok(created) => {
                self.accounts.put(created);
                Ok(())
            }
            Err(e) if e.reason == "AlreadyExists" || e.code == 403 || is_not_found(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Queues every namespace (the per-namespace publishers' initial sync).
fn queue_per_namespace(namespaces: &Cache, queue: &mut WorkQueue, ctx: &mut Ctx) {
    for namespace in namespaces.iter() {
        queue.add((String::new(), namespace.name().to_string()), ctx);
    }
}

/// The per-namespace publishers' handler: a namespace event queues that namespace (unless it
/// was deleted); an event of the published object queues the namespace it lives in.
fn namespace_changed(event: &WatchEvent, queue: &mut WorkQueue, ctx: &mut Ctx) {
    match event.resource {
        ("", "namespaces") if event.event_type != EventType::Deleted => queue.add((String::new(), event.object.name().to_string()), ctx),
        ("", "namespaces") => {}
        _ => queue.add((String::new(), event.object.namespace().to_string()), ctx),
    }
}

impl Reconciler for ServiceAccountController {
    fn name(&self) -> &'static str {
        "serviceaccount-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "namespaces")) => namespaces,
        Informer::named(("", "serviceaccounts"), "default") => accounts,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        queue_per_namespace(&self.namespaces, &mut self.queue, ctx);
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        // A namespace appeared or changed, or its `default` account went: make sure it has one.
        if event.resource != ("", "namespaces") && event.event_type != EventType::Deleted {
            return;
        }
        namespace_changed(event, &mut self.queue, ctx);
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(&key.1, ctx).map(|_| Action::AwaitChange)
    }
}

/// Name of the root CA ConfigMap.
pub const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";
/// The description annotation the publisher sets.
pub const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";
/// The simulated cluster CA (a fixed, non-functional PEM block).
pub const ROOT_CA_PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIC/jCCAeagAwIBAgIBADANBgkqhkiG9w0BAQsFADAVMRMwEQYDVQQDEwprdWJl\ncm5ldGVzMB4XDTI1MDEwMTAwMDAwMFoXDTM1MDEwMTAwMDAwMFowFTETMBEGA1UE\nAxMKa3ViZXJuZXRlczCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAKub\nZXNpbS1zaW11bGF0ZWQtY2EtY2VydGlmaWNhdGUtbm90LWEtcmVhbC1rZXk=\n-----END CERTIFICATE-----\n";

/// The root-ca-cert-publisher: ConfigMap `kube-root-ca.crt` (data `ca.crt`) in every active
/// namespace, recreated if deleted and reset if edited.
#[derive(Clone, Debug)]
pub struct RootCaPublisher {
    namespaces: Cache,
    configmaps: Cache,
    queue: WorkQueue,
}

impl Default for RootCaPublisher {
    fn default() -> Self {
        RootCaPublisher::new()
    }
}

fn desired_root_ca(namespace: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(ROOT_CA_CONFIGMAP.into()),
            namespace: Some(namespace.into()),
            annotations: Some(BTreeMap::from([("kubernetes.io/description".to_string(), ROOT_CA_DESCRIPTION.to_string())])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("ca.crt".to_string(), ROOT_CA_PEM.to_string())])),
        ..Default::default()
    }
}

impl RootCaPublisher {
    /// A publisher with empty caches.
    pub fn new() -> RootCaPublisher {
        RootCaPublisher { namespaces: Cache::default(), configmaps: Cache::default(), queue: WorkQueue::new(NAMESPACE_LATENCY_MS) }
    }

    fn sync(&mut self, namespace: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(ns) = self.namespaces.get_named("", namespace) else { return Ok(()) };
        if !namespace_active(ns) {
            return Ok(());
        }
        let desired = desired_root_ca(namespace);
        match self.configmaps.get_named(namespace, ROOT_CA_CONFIGMAP).cloned() {
            None => match ctx.create(Object::ConfigMap(Box::new(desired))) {
                Ok(created) => {
                    self.configmaps.put(created);
                    Ok(())
                }
                Err(e) if e.reason == "AlreadyExists" || e.code == 403 || is_not_found(&e) => Ok(()),
                Err(e) => Err(e),
            },
            Some(existing) => {
                let Object::ConfigMap(cm) = existing.as_ref() else { return Ok(()) };
                let annotation_ok =
                    cm.metadata.annotations.as_ref().and_then(|a| a.get("kubernetes.io/description")).map(String::as_str) == Some(ROOT_CA_DESCRIPTION);
                if cm.data == desired.data && annotation_ok && cm.binary_data.is_none() {
                    return Ok(());
                }
                let mut copy = (**cm).clone();
                copy.data = desired.data;
                copy.binary_data = None;
                copy.metadata.annotations.get_or_insert_with(BTreeMap::new).insert("kubernetes.io/description".into(), ROOT_CA_DESCRIPTION.into());
                match ctx.update(Object::ConfigMap(Box::new(copy))) {
                    Ok(updated) => {
                        self.configmaps.put(updated);
                        Ok(())
                    }
                    Err(e) if is_not_found(&e) => Ok(()),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

impl Reconciler for RootCaPublisher {
    fn name(&self) -> &'static str {
        "root-ca-cert-publisher"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "namespaces")) => namespaces,
        Informer::named(("", "configmaps"), ROOT_CA_CONFIGMAP) => configmaps,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        queue_per_namespace(&self.namespaces, &mut self.queue, ctx);
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        // A namespace appeared or changed, or its root CA ConfigMap did: republish it.
        namespace_changed(event, &mut self.queue, ctx);
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(&key.1, ctx).map(|_| Action::AwaitChange)
    }
}
