//! The controller runtime every controller is written on, in kube-runtime's shape: a
//! controller declares its informers (watched resources, each with a cache), maps informer
//! events to work-queue keys, and reconciles one key at a time. The glue — filling caches from
//! the initial LIST, applying watch events to them, draining the work queue, retrying failures
//! with backoff, requeueing on request, charging the modelled sync cost — is written once, in
//! [`Controller`], which is the [`Component`] the runtime runs.
//!
//! Expected flow for one key: an informer event arrives → the framework applies it to the
//! informer's cache → [`Reconciler::changed`] queues the keys it concerns → after the queue's
//! latency the framework calls [`Reconciler::reconcile`] for each key → `Ok(Action)` forgets
//! the key's failures (and requeues it after a delay if asked), `Err` requeues it with
//! per-item exponential backoff.
//!
//! Caveat: `reconcile` writes through its `Ctx` (as kube-runtime's reconcilers write through
//! their client) rather than returning the writes; what it decides is still a function of its
//! caches and the key, and every write lands in the trace with the controller as its actor.

use crate::common::{key_of, Cache, Key, WorkQueue, SYNC_NS_PER_OBJECT};
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::{Component, Ctx, Interest, WatchEvent, WatchFilter};
use kubesim_store::Resource;
use std::sync::Arc;

/// One informer: a watched resource, optionally narrowed to one namespace or one name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Informer {
    /// The resource.
    pub resource: Resource,
    /// Only objects of this namespace (the node lifecycle controller's leases).
    pub namespace: Option<&'static str>,
    /// Only objects with this name (the service-account controller's `default` accounts).
    pub name: Option<&'static str>,
}

impl Informer {
    /// Every object of a resource.
    pub const fn all(resource: Resource) -> Informer {
        Informer { resource, namespace: None, name: None }
    }
    /// Objects of a resource in one namespace.
    pub const fn in_namespace(resource: Resource, namespace: &'static str) -> Informer {
        Informer { resource, namespace: Some(namespace), name: None }
    }
    /// Objects of a resource with one name (a field selector on metadata.name).
    pub const fn named(resource: Resource, name: &'static str) -> Informer {
        Informer { resource, namespace: None, name: Some(name) }
    }
    fn admits(&self, object: &Object) -> bool {
        self.namespace.is_none_or(|ns| object.namespace() == ns) && self.name.is_none_or(|n| object.name() == n)
    }
}

/// What a successful reconcile asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing until an informer event queues the key again.
    AwaitChange,
    /// Reconcile the key again after this delay (minReadySeconds, progress deadlines, …).
    RequeueAfter(Millis),
}

/// An informer event after the framework applied it to the cache.
pub struct Change<'a> {
    /// The watch event.
    pub event: &'a WatchEvent,
    /// The object's previous cached state (for update handlers), if it was cached.
    pub old: Option<Arc<Object>>,
}

/// A controller: its informers, event handlers and reconcile function. Implement this; wrap it
/// in [`Controller`] to run it.
pub trait Reconciler: Clone + std::fmt::Debug + 'static {
    /// The actor name its writes carry (`replicaset-controller`).
    fn name(&self) -> &'static str;
    /// Its informers, the primary resource first.
    fn informers(&self) -> Vec<Informer>;
    /// The informer of `resource`, if the controller has one. Asked for every watch event:
    /// the [`informers!`] macro generates one that builds no list.
    fn informer_for(&self, resource: Resource) -> Option<Informer> {
        self.informers().into_iter().find(|i| i.resource == resource)
    }
    /// The primary informer's resource (the first of [`Reconciler::informers`]).
    fn primary_resource(&self) -> Resource {
        self.informers()[0].resource
    }
    /// The cache an informer fills; `None` for informers whose events the controller folds
    /// into its own state (the garbage collector's graph).
    fn cache(&mut self, resource: Resource) -> Option<&mut Cache>;
    /// Whether the cache of `resource`'s informer keeps `object` (default: every object). A
    /// controller that never reads some of a resource's objects leaves them out (the
    /// StatefulSet controller the pods other kinds of controller control): one it stops
    /// keeping leaves the cache, and its handlers still see every event.
    fn keeps(&self, resource: Resource, object: &Object) -> bool {
        let _ = (resource, object);
        true
    }
    /// Its work queue; `None` for controllers that act on events and timers directly.
    fn queue(&mut self) -> Option<&mut WorkQueue>;
    /// After the informers' initial LIST. The default queues every cached primary object.
    fn started(&mut self, ctx: &mut Ctx) {
        let primary = self.primary_resource();
        let keys: Vec<Key> = self.cache(primary).map(|c| c.iter().map(|o| key_of(o)).collect()).unwrap_or_default();
        if let Some(queue) = self.queue() {
            for key in keys {
                queue.add(key, ctx);
            }
        }
    }
    /// The event handlers: which keys an informer event concerns. The default queues the key
    /// of a changed primary object.
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        if change.event.resource == self.primary_resource() {
            let key = key_of(&change.event.object);
            if let Some(queue) = self.queue() {
                queue.add(key, ctx);
            }
        }
    }
    /// Reconciles one key from the work queue.
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let _ = (key, ctx);
        Ok(Action::AwaitChange)
    }
    /// A timer the controller armed itself (periodic monitors, its own delays).
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let _ = (token, ctx);
    }
    /// Objects the last batch of reconciles examined (the modelled sync cost, charged as worker
    /// busy time so that adds arriving meanwhile merge, as client-go's queue merges them).
    fn take_examined(&mut self) -> u64 {
        0
    }
}

/// Runs a [`Reconciler`] as a component.
#[derive(Clone, Debug)]
pub struct Controller<R>(pub R);

impl<R: Reconciler> Controller<R> {
    /// The reconciler (tests and the UI read its state).
    pub fn reconciler(&self) -> &R {
        &self.0
    }
    /// The reconciler, mutably.
    pub fn reconciler_mut(&mut self) -> &mut R {
        &mut self.0
    }
    fn informer_for(&self, resource: Resource) -> Option<Informer> {
        self.0.informer_for(resource)
    }
    /// The cache of `resource`'s informer, if the controller keeps one (tests and the UI).
    pub fn cache_of(&mut self, resource: Resource) -> Option<&Cache> {
        self.0.cache(resource).map(|cache| &*cache)
    }
}

impl<R: Reconciler> Component for Controller<R> {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn interests(&self) -> Vec<Interest> {
        self.0
            .informers()
            .into_iter()
            .map(|i| Interest { resource: i.resource, filter: i.name.map_or(WatchFilter::All, |n| WatchFilter::Named(n.to_string())) })
            .collect()
    }

    fn start(&mut self, ctx: &mut Ctx) {
        for informer in self.0.informers() {
            if self.0.cache(informer.resource).is_none() {
                continue;
            }
            let objects: Vec<Arc<Object>> = ctx
                .api
                .store()
                .list(informer.resource, informer.namespace)
                .filter(|o| informer.admits(o) && self.0.keeps(informer.resource, o))
                .cloned()
                .collect();
            if let Some(cache) = self.0.cache(informer.resource) {
                for object in objects {
                    cache.put(object);
                }
            }
        }
        self.0.started(ctx);
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        let Some(informer) = self.informer_for(event.resource) else { return };
        if !informer.admits(&event.object) {
            return;
        }
        let keeps = self.0.keeps(event.resource, &event.object);
        let old = self.0.cache(event.resource).and_then(|cache| {
            if keeps {
                cache.apply(event)
            } else if cache.get_named(event.object.namespace(), event.object.name()).is_some() {
                cache.remove(&key_of(&event.object))
            } else {
                None
            }
        });
        self.0.changed(Change { event, old }, ctx);
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let keys = match self.0.queue() {
            Some(queue) if queue.owns(token) => queue.on_timer(token, ctx),
            _ => return self.0.on_timer(token, ctx),
        };
        for key in keys {
            let result = self.0.reconcile(&key, ctx);
            let queue = self.0.queue().expect("the keys came from the queue");
            match result {
                Ok(action) => {
                    queue.done(key.clone(), true, ctx);
                    if let Action::RequeueAfter(delay) = action {
                        queue.add_after(key, delay, ctx);
                    }
                }
                Err(_) => queue.done(key, false, ctx),
            }
        }
        let examined = self.0.take_examined();
        if let Some(queue) = self.0.queue() {
            queue.busy_until(ctx.now + examined * SYNC_NS_PER_OBJECT / 1_000_000);
        }
    }
}

/// Declares a [`Reconciler`]'s informers, the cache each fills and its work queue as one
/// table, generating `informers`, `cache` and `queue`:
///
/// ```ignore
/// informers! {
///     queue: queue;
///     Informer::all(("apps", "deployments")) => deployments,
///     Informer::all(("", "pods")) => shared.pods,
///     Informer::all(("", "nodes")) => none,
/// }
/// ```
/// `none` (for the queue or a cache) means the controller has none: it folds those events
/// into its own state, or acts on events and timers directly.
#[macro_export]
macro_rules! informers {
    (queue: $($queue:ident).+; $($informer:expr => $($cache:ident).+),+ $(,)?) => {
        fn informers(&self) -> Vec<$crate::framework::Informer> {
            vec![$($informer),+]
        }
        fn informer_for(&self, resource: kubesim_store::Resource) -> Option<$crate::framework::Informer> {
            $(
                if resource == ($informer).resource {
                    return Some($informer);
                }
            )+
            None
        }
        fn primary_resource(&self) -> kubesim_store::Resource {
            [$(($informer).resource),+][0]
        }
        fn cache(&mut self, resource: kubesim_store::Resource) -> Option<&mut $crate::common::Cache> {
            $(
                if resource == ($informer).resource {
                    return $crate::informers!(@field self $($cache).+);
                }
            )+
            None
        }
        fn queue(&mut self) -> Option<&mut $crate::common::WorkQueue> {
            $crate::informers!(@field self $($queue).+)
        }
    };
    (@field $self:ident none) => {
        None
    };
    (@field $self:ident $($field:ident).+) => {
        Some(&mut $self.$($field).+)
    };
}
