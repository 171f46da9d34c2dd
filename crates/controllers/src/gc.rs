//! The garbage collector (pkg/controller/garbagecollector): a dependency graph over
//! ownerReferences of every watched resource, with the attemptToDelete and attemptToOrphan
//! workers.
//!
//! - Background: an owner is removed at once; its dependents then have only dangling owners and
//!   are deleted (background, unless they carry orphan/foreground finalizers themselves).
//! - Foreground: the owner carries `foregroundDeletion`; its dependents are deleted (those that
//!   have dependents of their own in the foreground too); once no dependent with
//!   `blockOwnerDeletion: true` remains, the finalizer is removed and the owner goes.
//! - Orphan: the owner carries `orphan`; dependents lose their ownerReference to it, then the
//!   finalizer is removed.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::hash::FixedState;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kubesim_api::object::{all_kinds, kind_info, Object};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions, Propagation};
use kubesim_runtime::Ctx;
use kubesim_store::{resource_of, EventType, Resource};
use std::collections::{BTreeSet, HashMap};

/// Modelled processing latency of the GC's queues.
pub const GC_LATENCY_MS: Millis = 10;
/// `foregroundDeletion`.
pub const FINALIZER_FOREGROUND: &str = "foregroundDeletion";
/// `orphan`.
pub const FINALIZER_ORPHAN: &str = "orphan";

#[derive(Clone, Debug)]
struct Node {
    resource: Resource,
    namespace: String,
    name: String,
    owners: Vec<OwnerReference>,
    deleting: bool,
    finalizers: Vec<String>,
}

impl Node {
    /// The graph's node for `object` of `resource`.
    fn of(resource: Resource, object: &Object) -> Node {
        let meta = object.metadata();
        Node {
            resource,
            namespace: object.namespace().to_string(),
            name: object.name().to_string(),
            owners: meta.owner_references.clone().unwrap_or_default(),
            deleting: meta.deletion_timestamp.is_some(),
            finalizers: meta.finalizers.clone().unwrap_or_default(),
        }
    }

    fn deleting_dependents(&self) -> bool {
        self.deleting && self.finalizers.iter().any(|f| f == FINALIZER_FOREGROUND)
    }
}

/// The garbage collector.
#[derive(Clone, Debug)]
pub struct GarbageCollector {
    /// The graph by uid, and each owner's dependents: hashed, as both are only looked up by
    /// uid (several times per watch event), never walked; the dependents of one owner are
    /// ordered.
    nodes: HashMap<String, Node, FixedState>,
    dependents: HashMap<String, BTreeSet<String>, FixedState>,
    queue: WorkQueue,
}

impl Default for GarbageCollector {
    fn default() -> Self {
        GarbageCollector::new()
    }
}

const DELETE: &str = "delete";
const ORPHAN: &str = "orphan";

/// The resources the garbage collector watches: every served resource except events and
/// virtual ones.
/// Computed once: the collector asks for its informer on every watch event.
pub fn gc_resources() -> &'static [Resource] {
    static RESOURCES: std::sync::OnceLock<Vec<Resource>> = std::sync::OnceLock::new();
    RESOURCES.get_or_init(|| {
        let mut out: Vec<Resource> = Vec::new();
        for info in all_kinds() {
            if matches!(info.kind, "Event" | "Binding" | "ComponentStatus") {
                continue;
            }
            let r = resource_of(info);
            if !out.contains(&r) {
                out.push(r);
            }
        }
        out
    })
}

impl GarbageCollector {
    /// An empty graph.
    pub fn new() -> GarbageCollector {
        GarbageCollector { nodes: HashMap::default(), dependents: HashMap::default(), queue: WorkQueue::new(GC_LATENCY_MS) }
    }

    fn enqueue(&mut self, kind: &str, uid: &str, ctx: &mut Ctx) {
        self.queue.add((kind.to_string(), uid.to_string()), ctx);
    }

    fn observe(&mut self, resource: Resource, object: &Object, deleted: bool, ctx: &mut Ctx) {
        let meta = object.metadata();
        let uid = uid_of(meta);
        if uid.is_empty() {
            return;
        }
        // Most updates (status writes) change nothing the graph holds: same owners and
        // finalizers, not being deleted. Such an update enqueues nothing below either.
        if !deleted && meta.deletion_timestamp.is_none() {
            let unchanged = self.nodes.get(uid).is_some_and(|old| {
                !old.deleting
                    && old.resource == resource
                    && old.owners.as_slice() == meta.owner_references.as_deref().unwrap_or_default()
                    && old.finalizers.as_slice() == meta.finalizers.as_deref().unwrap_or_default()
            });
            if unchanged {
                return;
            }
        }
        let uid = uid.to_string();
        let old = self.nodes.remove(&uid);
        if let Some(old) = &old {
            for r in &old.owners {
                if let Some(set) = self.dependents.get_mut(&r.uid) {
                    set.remove(&uid);
                    if set.is_empty() {
                        self.dependents.remove(&r.uid);
                    }
                }
            }
        }
        let node = Node::of(resource, object);
        if deleted {
            for dep in self.dependents.get(&uid).cloned().unwrap_or_default() {
                self.enqueue(DELETE, &dep, ctx);
            }
            for r in &node.owners {
                if self.nodes.get(&r.uid).is_some_and(Node::deleting_dependents) {
                    self.enqueue(DELETE, &r.uid, ctx);
                }
            }
            return;
        }
        for r in &node.owners {
            self.dependents.entry(r.uid.clone()).or_default().insert(uid.clone());
        }
        // Owners removed from the list may be waiting for this dependent (foreground).
        if let Some(old) = &old {
            for r in &old.owners {
                if !node.owners.iter().any(|n| n.uid == r.uid) && self.nodes.get(&r.uid).is_some_and(Node::deleting_dependents) {
                    self.enqueue(DELETE, &r.uid, ctx);
                }
            }
        }
        let started_deleting = node.deleting && old.as_ref().is_none_or(|o| !o.deleting || o.finalizers != node.finalizers);
        if node.deleting && node.finalizers.iter().any(|f| f == FINALIZER_ORPHAN) {
            self.enqueue(ORPHAN, &uid, ctx);
        }
        if node.deleting_dependents() {
            self.enqueue(DELETE, &uid, ctx);
            if started_deleting {
                for dep in self.dependents.get(&uid).cloned().unwrap_or_default() {
                    self.enqueue(DELETE, &dep, ctx);
                }
            }
        }
        let has_absent_owner = node.owners.iter().any(|r| !self.nodes.contains_key(&r.uid));
        let owners_changed = old.as_ref().is_none_or(|o| o.owners != node.owners);
        if has_absent_owner && owners_changed {
            self.enqueue(DELETE, &uid, ctx);
        }
        self.nodes.insert(uid, node);
    }

    /// Whether an ownerReference points at nothing (`isDangling`): the owner, looked up by kind,
    /// name and the dependent's namespace, is absent or has another uid.
    fn is_dangling(&self, reference: &OwnerReference, namespace: &str, ctx: &Ctx) -> bool {
        let Some(info) = kind_info(&reference.api_version, &reference.kind) else { return false };
        let ns = match info.scope {
            kubesim_api::Scope::Namespaced => namespace,
            kubesim_api::Scope::Cluster => "",
        };
        match ctx.api.lookup(resource_of(info), ns, &reference.name) {
            None => true,
            Some(owner) => uid_of(owner.metadata()) != reference.uid,
        }
    }

    fn blocking_dependents(&self, uid: &str) -> Vec<String> {
        self.dependents
            .get(uid)
            .into_iter()
            .flatten()
            .filter(|dep| self.nodes.get(*dep).is_some_and(|n| n.owners.iter().any(|r| r.uid == uid && r.block_owner_deletion == Some(true))))
            .cloned()
            .collect()
    }

    fn latest(&self, uid: &str, ctx: &Ctx) -> Option<std::sync::Arc<Object>> {
        let node = self.nodes.get(uid)?;
        let latest = ctx.api.lookup(node.resource, &node.namespace, &node.name)?;
        (uid_of(latest.metadata()) == uid).then(|| latest.clone())
    }

    fn remove_finalizer(&mut self, object: &Object, finalizer: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        match patch_meta(ctx, object, |m| {
            if let Some(f) = m.finalizers.as_mut() {
                f.retain(|x| x != finalizer);
                if f.is_empty() {
                    m.finalizers = None;
                }
            }
        }) {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `attemptToDeleteItem`.
    fn attempt_to_delete(&mut self, uid: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(latest) = self.latest(uid, ctx) else { return Ok(()) };
        let meta = latest.metadata().clone();
        let finalizers = meta.finalizers.clone().unwrap_or_default();
        let deleting = meta.deletion_timestamp.is_some();
        if deleting {
            if !finalizers.iter().any(|f| f == FINALIZER_FOREGROUND) {
                return Ok(());
            }
            // processDeletingDependentsItem
            let blocking = self.blocking_dependents(uid);
            if blocking.is_empty() {
                return self.remove_finalizer(&latest, FINALIZER_FOREGROUND, ctx);
            }
            for dep in blocking {
                if !self.nodes.get(&dep).is_some_and(Node::deleting_dependents) {
                    self.enqueue(DELETE, &dep, ctx);
                }
            }
            return Ok(());
        }
        let owners = meta.owner_references.clone().unwrap_or_default();
        if owners.is_empty() {
            return Ok(());
        }
        let mut solid = Vec::new();
        let mut dangling = Vec::new();
        let mut waiting = Vec::new();
        for r in &owners {
            if self.is_dangling(r, latest.namespace(), ctx) {
                dangling.push(r.clone());
                continue;
            }
            let owner_waiting = self.nodes.get(&r.uid).is_some_and(Node::deleting_dependents);
            if owner_waiting {
                waiting.push(r.clone());
            } else {
                solid.push(r.clone());
            }
        }
        if !solid.is_empty() {
            if dangling.is_empty() && waiting.is_empty() {
                return Ok(());
            }
            let remove: BTreeSet<String> = dangling.iter().chain(waiting.iter()).map(|r| r.uid.clone()).collect();
            return match patch_meta(ctx, &latest, |m| {
                if let Some(refs) = m.owner_references.as_mut() {
                    refs.retain(|r| !remove.contains(&r.uid));
                }
            }) {
                Ok(_) => Ok(()),
                Err(e) if is_not_found(&e) => Ok(()),
                Err(e) => Err(e),
            };
        }
        let has_dependents = self.dependents.get(uid).is_some_and(|d| !d.is_empty());
        let info = latest.info().ok_or_else(|| ApiError::bad_request("unknown kind".into()))?;
        let policy = if !waiting.is_empty() && has_dependents {
            // Cycle guard: if one of our dependents is itself deleting its dependents, make our
            // references non-blocking first so the owners do not wait on us forever.
            let cycle = self.dependents.get(uid).into_iter().flatten().any(|d| self.nodes.get(d).is_some_and(Node::deleting_dependents));
            if cycle {
                let waiting_uids: BTreeSet<String> = waiting.iter().map(|r| r.uid.clone()).collect();
                let unblocked = patch_meta(ctx, &latest, |m| {
                    for r in m.owner_references.iter_mut().flatten() {
                        if waiting_uids.contains(&r.uid) {
                            r.block_owner_deletion = Some(false);
                        }
                    }
                });
                if let Err(e) = unblocked {
                    return if is_not_found(&e) { Ok(()) } else { Err(e) };
                }
            }
            Propagation::Foreground
        } else if finalizers.iter().any(|f| f == FINALIZER_ORPHAN) {
            Propagation::Orphan
        } else if finalizers.iter().any(|f| f == FINALIZER_FOREGROUND) {
            Propagation::Foreground
        } else {
            Propagation::Background
        };
        match ctx.delete(info, latest.namespace(), latest.name(), DeleteOptions { propagation: Some(policy), ..Default::default() }) {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `attemptToOrphan`: strip the owner's references from its dependents, then drop `orphan`.
    fn attempt_to_orphan(&mut self, uid: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(latest) = self.latest(uid, ctx) else { return Ok(()) };
        let deps: Vec<String> = self.dependents.get(uid).cloned().unwrap_or_default().into_iter().collect();
        for dep in deps {
            let Some(dep_obj) = self.latest(&dep, ctx) else { continue };
            match patch_meta(ctx, &dep_obj, |m| {
                if let Some(refs) = m.owner_references.as_mut() {
                    refs.retain(|r| r.uid != uid);
                    if refs.is_empty() {
                        m.owner_references = None;
                    }
                }
            }) {
                Ok(_) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(e),
            }
        }
        self.remove_finalizer(&latest, FINALIZER_ORPHAN, ctx)
    }
}

impl Reconciler for GarbageCollector {
    fn name(&self) -> &'static str {
        "garbage-collector"
    }
    fn informers(&self) -> Vec<Informer> {
        gc_resources().iter().copied().map(Informer::all).collect()
    }
    fn informer_for(&self, resource: Resource) -> Option<Informer> {
        gc_resources().contains(&resource).then_some(Informer::all(resource))
    }
    fn primary_resource(&self) -> Resource {
        gc_resources()[0]
    }
    /// The collector keeps its own graph (owners → dependents) instead of caches.
    fn cache(&mut self, _resource: Resource) -> Option<&mut Cache> {
        None
    }
    fn queue(&mut self) -> Option<&mut WorkQueue> {
        Some(&mut self.queue)
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let mut objects = Vec::new();
        for &resource in gc_resources() {
            for object in ctx.api.store().list(resource, None) {
                objects.push((resource, object.clone()));
            }
        }
        // Build the graph first, then look for dangling references.
        for (resource, object) in &objects {
            let uid = uid_of(object.metadata()).to_string();
            let node = Node::of(*resource, object);
            for r in &node.owners {
                self.dependents.entry(r.uid.clone()).or_default().insert(uid.clone());
            }
            self.nodes.insert(uid, node);
        }
        for (resource, object) in objects {
            let _ = resource;
            let uid = uid_of(object.metadata()).to_string();
            let node = self.nodes.get(&uid).cloned().expect("inserted");
            if node.owners.iter().any(|r| !self.nodes.contains_key(&r.uid)) || node.deleting {
                self.enqueue(DELETE, &uid, ctx);
            }
            if node.deleting && node.finalizers.iter().any(|f| f == FINALIZER_ORPHAN) {
                self.enqueue(ORPHAN, &uid, ctx);
            }
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        self.observe(event.resource, &event.object, event.event_type == EventType::Deleted, ctx);
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let result = match key.0.as_str() {
            ORPHAN => self.attempt_to_orphan(&key.1, ctx),
            _ => self.attempt_to_delete(&key.1, ctx),
        };
        result.map(|_| Action::AwaitChange)
    }
}
