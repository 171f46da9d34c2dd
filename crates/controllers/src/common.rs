//! The client-go machinery every controller shares: informer caches fed by watch events, a
//! rate-limited work queue driven by virtual-time timers, expectations, and small helpers
//! over ownerReferences, pods and conditions.

use kubesim_api::hash::FixedState;
use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kubesim_api::object::Object;
use kubesim_api::time::{millis_of, time_at};
use kubesim_api::Millis;
use kubesim_runtime::{Ctx, WatchEvent};
use kubesim_store::{ByNamespace, EventType};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

/// An object key: (namespace, name) — `cache.MetaNamespaceKeyFunc`.
pub type Key = (String, String);

/// Whether `object` has no controller or one of `kind`: all of a resource a controller of
/// `kind` ever reads (it claims its own and adopts orphans; objects other kinds control it
/// skips), for [`crate::framework::Reconciler::keeps`].
pub fn controlled_by_kind_or_orphan(object: &Object, kind: &str) -> bool {
    controller_of(object.metadata()).is_none_or(|r| r.kind == kind)
}

/// `Reconciler::keeps` for a controller that acts only on pods with claims (a pod's volumes
/// never change, so a pod is kept or skipped for its whole life): every other object, and
/// the pods that use a PersistentVolumeClaim or an ephemeral volume.
pub fn keeps_pods_with_claims(resource: kubesim_store::Resource, object: &Object) -> bool {
    resource != ("", "pods") || object.as_pod().is_some_and(kubesim_api::pod::uses_claims)
}

/// The key of an object.
pub fn key_of(object: &Object) -> Key {
    (object.namespace().to_string(), object.name().to_string())
}

/// The key rendered as client-go does (`ns/name`, or `name` for cluster-scoped objects).
pub fn key_string(key: &Key) -> String {
    if key.0.is_empty() {
        key.1.clone()
    } else {
        format!("{}/{}", key.0, key.1)
    }
}

fn rv(object: &Object) -> u64 {
    object.resource_version().parse().unwrap_or(0)
}

/// An informer's local store: the last state of every object it has seen, by key, with the
/// indexes controllers need to stay cheap at 150,000 pods (by controller uid; orphans).
#[derive(Clone, Debug, Default)]
pub struct Cache {
    objects: ByNamespace<Arc<Object>>,
    /// Controller uid → the objects it controls (the same `Arc`s as `objects`). Hashed: only
    /// ever looked up by uid, once per informer event, never walked. By namespace and name,
    /// as `objects`: an update finds its entry by the object's own names, with no key to
    /// allocate.
    by_controller: HashMap<String, ByNamespace<Arc<Object>>, FixedState>,
    /// Objects without a controller.
    orphans: ByNamespace<Arc<Object>>,
    /// [`PodFacts`] of the controlled pods, by controller uid like `by_controller` (kept only
    /// by caches made [`Cache::with_pod_facts`]).
    facts: Option<PodFactsIndex>,
}

/// What a sync over all of a controller's pods reads of each pod, kept beside the cache's
/// index so that a ReplicaSet of 30,000 pods is counted from these compact entries instead of
/// by visiting 30,000 objects (each several cache misses away). Derived from the pod alone,
/// when the informer caches it: the same answers `is_pod_active`, `is_pod_ready` and
/// `pod_ready_since` give.
#[derive(Clone, Debug, PartialEq)]
pub struct PodFacts {
    /// `is_pod_active`.
    pub active: bool,
    /// `is_pod_ready`.
    pub ready: bool,
    /// `pod_ready_since` (the Ready condition's lastTransitionTime when ready).
    pub ready_since: Option<Millis>,
    /// The pod's labels, interned: pods with equal labels share one `Arc`, so a sync matches
    /// each distinct set once (compared by pointer).
    pub labels: Option<Arc<BTreeMap<String, String>>>,
}

#[derive(Clone, Debug, Default)]
struct PodFactsIndex {
    by_controller: HashMap<String, ByNamespace<PodFacts>, FixedState>,
    labels: BTreeMap<BTreeMap<String, String>, Arc<BTreeMap<String, String>>>,
    /// The number of interned label sets after the last pruning of unused ones.
    labels_kept: usize,
}

impl PodFactsIndex {
    /// The facts of `object`; `kept` is the labels its previous facts share, reused when
    /// they are still the pod's (most updates): no search of the interned sets.
    fn facts_of(&mut self, object: &Object, kept: Option<&Arc<BTreeMap<String, String>>>) -> Option<PodFacts> {
        let pod = object.as_pod()?;
        let labels = pod.metadata.labels.as_ref().map(|l| match kept.filter(|shared| ***shared == *l).or_else(|| self.labels.get(l)) {
            Some(shared) => shared.clone(),
            None => {
                if self.labels.len() >= 2 * self.labels_kept + 64 {
                    self.labels.retain(|_, shared| Arc::strong_count(shared) > 1);
                    self.labels_kept = self.labels.len();
                }
                let shared = Arc::new(l.clone());
                self.labels.insert(l.clone(), shared.clone());
                shared
            }
        });
        Some(PodFacts { active: is_pod_active(pod), ready: is_pod_ready(pod), ready_since: pod_ready_since(pod), labels })
    }
    fn set(&mut self, uid: &str, (namespace, name): (&str, &str), object: Option<&Arc<Object>>) {
        let kept = self.by_controller.get(uid).and_then(|m| m.get(namespace, name)).and_then(|f| f.labels.clone());
        match object.and_then(|o| self.facts_of(o, kept.as_ref())) {
            Some(facts) => {
                // Most updates are of a pod already indexed: no name or uid to allocate.
                match self.by_controller.get_mut(uid) {
                    Some(map) => match map.get_mut(namespace, name) {
                        Some(kept) => *kept = facts,
                        None => {
                            map.insert(namespace, name, facts);
                        }
                    },
                    None => {
                        self.by_controller.entry(uid.to_string()).or_default().insert(namespace, name, facts);
                    }
                }
            }
            None => {
                if let Some(map) = self.by_controller.get_mut(uid) {
                    map.remove(namespace, name);
                    if map.is_empty() {
                        self.by_controller.remove(uid);
                    }
                }
            }
        }
    }
}

impl Cache {
    /// A cache that also keeps [`PodFacts`] of the pods each controller controls
    /// ([`Cache::controlled_pod_facts`]).
    pub fn with_pod_facts() -> Cache {
        Cache { facts: Some(PodFactsIndex::default()), ..Cache::default() }
    }
    /// The [`PodFacts`] of the pods in `namespace` that the controller `owner_uid` controls, in
    /// name order (the order [`Cache::claim_candidates`] yields them); `None` unless the cache
    /// keeps facts.
    pub fn controlled_pod_facts<'a>(&'a self, namespace: &'a str, owner_uid: &str) -> Option<impl Iterator<Item = &'a PodFacts> + 'a> {
        let index = self.facts.as_ref()?;
        Some(index.by_controller.get(owner_uid).into_iter().flat_map(move |m| m.in_namespace(namespace)))
    }
    /// The orphans (objects without a controller) in `namespace`, in key order.
    pub fn orphans_in<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        self.orphans.in_namespace(namespace)
    }
    /// Applies a watch event; returns the previous state (for update handlers).
    pub fn apply(&mut self, event: &WatchEvent) -> Option<Arc<Object>> {
        match event.event_type {
            EventType::Deleted => self.remove_named(event.object.namespace(), event.object.name()),
            _ => self.put(event.object.clone()),
        }
    }
    /// Inserts an object unless a newer version is already cached (the result of our own
    /// write may arrive before the watch event of an older one); returns the previous state.
    pub fn put(&mut self, object: Arc<Object>) -> Option<Arc<Object>> {
        // One lookup by the object's own names: 150,000 pods are cached by a dozen
        // controllers, and nearly every put is an update of a cached object.
        let names = (object.namespace(), object.name());
        match self.objects.get_mut(names.0, names.1) {
            Some(existing) if rv(existing) > rv(&object) => Some(existing.clone()),
            Some(existing) => {
                let old = std::mem::replace(existing, object.clone());
                self.index(names, Some(&old), Some(&object));
                Some(old)
            }
            None => {
                self.index(names, None, Some(&object));
                self.objects.insert(names.0, names.1, object.clone());
                None
            }
        }
    }
    /// Fills the cache from the store's current list of a resource (the informer's initial LIST).
    pub fn fill(&mut self, store: &kubesim_store::Store, resource: kubesim_store::Resource) {
        for object in store.list(resource, None) {
            self.put(object.clone());
        }
    }
    /// Removes an object (our own successful delete).
    pub fn remove(&mut self, key: &Key) -> Option<Arc<Object>> {
        self.remove_named(&key.0, &key.1)
    }
    /// Removes an object by namespace and name.
    pub fn remove_named(&mut self, namespace: &str, name: &str) -> Option<Arc<Object>> {
        let old = self.objects.remove(namespace, name);
        self.index((namespace, name), old.as_ref(), None);
        old
    }
    /// Moves the object at `(namespace, name)` in the indexes from its `old` state (`None`:
    /// not cached) to `new` (`None`: removed).
    fn index(&mut self, (namespace, name): (&str, &str), old: Option<&Arc<Object>>, new: Option<&Arc<Object>>) {
        let key = (namespace, name);
        // The old owner's uid is borrowed from `old`: no allocation on any path but a new
        // controller's first object.
        // An update that keeps the controller (nearly every update) replaces the indexed
        // `Arc` in place.
        if let (Some(old), Some(new)) = (old, new) {
            let owner = controller_of(old.metadata()).map(|r| r.uid.as_str());
            if owner == controller_of(new.metadata()).map(|r| r.uid.as_str()) {
                let slot = match owner {
                    Some(uid) => self.by_controller.get_mut(uid).and_then(|m| m.get_mut(namespace, name)),
                    None => self.orphans.get_mut(namespace, name),
                };
                let slot = slot.expect("every cached object is indexed under its controller");
                *slot = new.clone();
                if let (Some(index), Some(uid)) = (self.facts.as_mut(), owner) {
                    index.set(uid, key, Some(new));
                }
                return;
            }
        }
        if let Some(old) = old {
            match controller_of(old.metadata()).map(|r| r.uid.as_str()) {
                Some(uid) => {
                    if let Some(map) = self.by_controller.get_mut(uid) {
                        map.remove(namespace, name);
                        if map.is_empty() {
                            self.by_controller.remove(uid);
                        }
                    }
                    if let Some(index) = self.facts.as_mut() {
                        index.set(uid, key, None);
                    }
                }
                None => {
                    self.orphans.remove(namespace, name);
                }
            }
        }
        if let Some(new) = new {
            match controller_of(new.metadata()) {
                Some(r) => {
                    match self.by_controller.get_mut(r.uid.as_str()) {
                        Some(map) => map.insert(namespace, name, new.clone()),
                        None => self.by_controller.entry(r.uid.clone()).or_default().insert(namespace, name, new.clone()),
                    };
                    if let Some(index) = self.facts.as_mut() {
                        index.set(&r.uid, key, Some(new));
                    }
                }
                None => {
                    self.orphans.insert(namespace, name, new.clone());
                }
            }
        }
    }
    /// The objects a controller's ClaimObjects can act on in a namespace: those it controls
    /// and the orphans (objects controlled by others are skipped by claim anyway). Owned and
    /// orphan objects are disjoint and each set is in key order.
    pub fn claim_candidates<'a>(&'a self, namespace: &'a str, owner_uid: &str) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        let owned = self.by_controller.get(owner_uid).into_iter().flat_map(move |m| m.in_namespace(namespace));
        owned.chain(self.orphans_in(namespace))
    }
    /// `resolveControllerRef`: the key of the cached object a controllerRef names, if the
    /// reference is to `kind` and the cached object's uid is the one referenced.
    pub fn resolve_controller_ref(&self, namespace: &str, reference: &OwnerReference, kind: &str) -> Option<Key> {
        if reference.kind != kind {
            return None;
        }
        let owner = self.get_named(namespace, &reference.name)?;
        (uid_of(owner.metadata()) == reference.uid).then(|| key_of(owner))
    }
    /// The key of the cached `kind` object that controls `object` (through its controllerRef).
    pub fn controller_key(&self, object: &Object, kind: &str) -> Option<Key> {
        self.resolve_controller_ref(object.namespace(), controller_of(object.metadata())?, kind)
    }
    /// Looks an object up.
    pub fn get(&self, key: &Key) -> Option<&Arc<Object>> {
        self.objects.get(&key.0, &key.1)
    }
    /// Looks an object up by namespace and name.
    pub fn get_named(&self, namespace: &str, name: &str) -> Option<&Arc<Object>> {
        self.objects.get(namespace, name)
    }
    /// Every cached object, in key order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Object>> {
        self.objects.values()
    }
    /// The objects of one namespace, in name order.
    pub fn in_namespace<'a>(&'a self, namespace: &str) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        self.objects.in_namespace(namespace)
    }
    /// Number of cached objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }
    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

/// Timer token the work queue uses to drain itself.
pub const TOKEN_DRAIN: u64 = 1;
/// Timer tokens from here up are delayed adds.
const TOKEN_DELAYED_BASE: u64 = 1 << 32;

/// Base delay of the per-item exponential rate limiter (client-go DefaultControllerRateLimiter).
pub const RATE_LIMIT_BASE_MS: Millis = 5;
/// Modelled sync cost per object a sync examines (lister scans, claim, status): 1 µs, so a
/// 10,000-pod ReplicaSet keeps its worker busy ~10 ms per sync.
pub const SYNC_NS_PER_OBJECT: u64 = 1_000;

/// Cap of the per-item exponential rate limiter.
pub const RATE_LIMIT_MAX_MS: Millis = 1000 * 1000;

/// A rate-limited, de-duplicating work queue (client-go workqueue). Keys added while queued are
/// merged; the queue drains after a modelled processing latency; failed keys are re-added with
/// per-item exponential backoff (5 ms × 2^failures, capped at 1000 s).
#[derive(Clone, Debug)]
pub struct WorkQueue {
    queue: VecDeque<Key>,
    dirty: BTreeSet<Key>,
    failures: BTreeMap<Key, u32>,
    delayed: BTreeMap<u64, Key>,
    /// Per key, the earliest pending delayed add (to avoid piling up timers).
    delayed_at: BTreeMap<Key, Millis>,
    next_token: u64,
    drain_scheduled: bool,
    latency_ms: Millis,
    /// The worker is busy with the previous batch until then (see [`WorkQueue::busy_until`]).
    busy_until: Millis,
}

impl WorkQueue {
    /// A queue that processes items `latency_ms` after they are first added.
    pub fn new(latency_ms: Millis) -> WorkQueue {
        WorkQueue {
            queue: VecDeque::new(),
            dirty: BTreeSet::new(),
            failures: BTreeMap::new(),
            delayed: BTreeMap::new(),
            delayed_at: BTreeMap::new(),
            next_token: TOKEN_DELAYED_BASE,
            drain_scheduled: false,
            latency_ms,
            busy_until: 0,
        }
    }
    /// Adds a key (no-op if already queued).
    pub fn add(&mut self, key: Key, ctx: &mut Ctx) {
        if self.dirty.insert(key.clone()) {
            self.queue.push_back(key);
        }
        if !self.drain_scheduled {
            self.drain_scheduled = true;
            ctx.after(self.latency_ms.max(self.busy_until.saturating_sub(ctx.now)), TOKEN_DRAIN);
        }
    }
    /// Models the time a sync takes in a real controller: the worker stays busy until `at`, and
    /// keys added meanwhile wait (and merge) until then, as client-go's queue merges the adds
    /// that arrive while a worker is syncing. Controllers charge work proportional to the
    /// objects a sync examined (see [`SYNC_NS_PER_OBJECT`]); small clusters round to 0 ms.
    pub fn busy_until(&mut self, at: Millis) {
        self.busy_until = self.busy_until.max(at);
    }
    /// Adds the key of every object in `cache` (a resync, or the initial sync after the
    /// informer's first LIST).
    pub fn add_all(&mut self, cache: &Cache, ctx: &mut Ctx) {
        for object in cache.iter() {
            self.add(key_of(object), ctx);
        }
    }
    /// Adds a key after a delay (`AddAfter`).
    pub fn add_after(&mut self, key: Key, delay_ms: Millis, ctx: &mut Ctx) {
        if delay_ms == 0 {
            return self.add(key, ctx);
        }
        let at = ctx.now + delay_ms;
        if let Some(existing) = self.delayed_at.get(&key) {
            if *existing <= at && *existing > ctx.now {
                return;
            }
        }
        self.delayed_at.insert(key.clone(), at);
        let token = self.next_token;
        self.next_token += 1;
        self.delayed.insert(token, key);
        ctx.after(delay_ms, token);
    }
    /// Re-adds a key with per-item exponential backoff (`AddRateLimited`).
    pub fn add_rate_limited(&mut self, key: Key, ctx: &mut Ctx) {
        let failures = self.failures.entry(key.clone()).or_insert(0);
        let delay = RATE_LIMIT_BASE_MS.saturating_mul(1u64 << (*failures).min(40)).min(RATE_LIMIT_MAX_MS);
        *failures += 1;
        self.add_after(key, delay, ctx);
    }
    /// Finishes processing a key as every controller's processNextWorkItem does: a successful
    /// sync forgets its failure history, a failed one is re-added with backoff.
    pub fn done(&mut self, key: Key, succeeded: bool, ctx: &mut Ctx) {
        if succeeded {
            self.forget(&key);
        } else {
            self.add_rate_limited(key, ctx);
        }
    }
    /// Clears a key's failure history (`Forget`).
    pub fn forget(&mut self, key: &Key) {
        self.failures.remove(key);
    }
    /// How often a key has failed in a row.
    pub fn num_requeues(&self, key: &Key) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }
    /// Handles a timer; returns the keys to process now (empty for foreign tokens).
    pub fn on_timer(&mut self, token: u64, ctx: &mut Ctx) -> Vec<Key> {
        if token == TOKEN_DRAIN {
            self.drain_scheduled = false;
            self.dirty.clear();
            return self.queue.drain(..).collect();
        }
        if let Some(key) = self.delayed.remove(&token) {
            if self.delayed_at.get(&key).is_some_and(|at| *at <= ctx.now) {
                self.delayed_at.remove(&key);
            }
            self.add(key, ctx);
        }
        Vec::new()
    }
    /// Whether a token belongs to this queue.
    pub fn owns(&self, token: u64) -> bool {
        token == TOKEN_DRAIN || token >= TOKEN_DELAYED_BASE
    }
    /// Number of keys waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// ExpectationsTimeout (controller_utils.go): unmet expectations older than this are ignored.
pub const EXPECTATIONS_TIMEOUT_MS: Millis = 5 * 60 * 1000;

#[derive(Clone, Debug, Default)]
struct Expectation {
    add: i64,
    del: BTreeSet<Key>,
    timestamp: Millis,
}

/// `UIDTrackingControllerExpectations`: how many creations and which deletions a controller
/// still expects to observe before it trusts its cache again.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    records: BTreeMap<Key, Expectation>,
}

impl Expectations {
    /// Whether the controller may sync `key` (satisfied, expired, or never set).
    pub fn satisfied(&self, key: &Key, now: Millis) -> bool {
        match self.records.get(key) {
            None => true,
            Some(e) => (e.add <= 0 && e.del.is_empty()) || now.saturating_sub(e.timestamp) > EXPECTATIONS_TIMEOUT_MS,
        }
    }
    /// `ExpectCreations`.
    pub fn expect_creations(&mut self, key: &Key, count: i64, now: Millis) {
        self.records.insert(key.clone(), Expectation { add: count, del: BTreeSet::new(), timestamp: now });
    }
    /// `ExpectDeletions` (tracking pod keys).
    pub fn expect_deletions(&mut self, key: &Key, pods: Vec<Key>, now: Millis) {
        self.records.insert(key.clone(), Expectation { add: 0, del: pods.into_iter().collect(), timestamp: now });
    }
    /// `CreationObserved` (also used to lower expectations for creations never attempted).
    pub fn creation_observed(&mut self, key: &Key) {
        if let Some(e) = self.records.get_mut(key) {
            e.add -= 1;
        }
    }
    /// `DeletionObserved`.
    pub fn deletion_observed(&mut self, key: &Key, pod: &Key) {
        if let Some(e) = self.records.get_mut(key) {
            e.del.remove(pod);
        }
    }
    /// `DeleteExpectations`.
    pub fn forget(&mut self, key: &Key) {
        self.records.remove(key);
    }
}

/// The ownerReference a controller puts on what it creates (controller: true,
/// blockOwnerDeletion: true).
pub fn controller_ref(owner: &Object) -> OwnerReference {
    OwnerReference {
        api_version: owner.api_version().to_string(),
        kind: owner.kind().to_string(),
        name: owner.name().to_string(),
        uid: owner.metadata().uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The controlling ownerReference (`metav1.GetControllerOf`).
pub fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references.iter().flatten().find(|r| r.controller == Some(true))
}

/// The object's uid ("" if unset).
pub fn uid_of(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

/// Whether an object is being deleted.
pub fn is_deleting(meta: &ObjectMeta) -> bool {
    meta.deletion_timestamp.is_some()
}

/// The virtual millisecond of the creation timestamp (0 if unset).
pub fn created_ms(meta: &ObjectMeta) -> Millis {
    meta.creation_timestamp.as_ref().map(millis_of).unwrap_or(0)
}

/// `Time` at virtual now.
pub fn now_time(ctx: &Ctx) -> Time {
    time_at(ctx.now)
}

/// The pod's phase ("" if unset).
pub fn pod_phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

/// `controller.IsPodActive`: not Succeeded/Failed and not being deleted.
pub fn is_pod_active(pod: &Pod) -> bool {
    !matches!(pod_phase(pod), "Succeeded" | "Failed") && pod.metadata.deletion_timestamp.is_none()
}

/// `IsPodTerminal`: phase Succeeded or Failed.
pub fn is_pod_terminal(pod: &Pod) -> bool {
    matches!(pod_phase(pod), "Succeeded" | "Failed")
}

/// The pod's node name ("" if unscheduled).
pub fn pod_node(pod: &Pod) -> &str {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("")
}

/// The pod's condition of a type.
pub fn pod_condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a kubesim_api::k8s_openapi::api::core::v1::PodCondition> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// `podutil.IsPodReady`.
pub fn is_pod_ready(pod: &Pod) -> bool {
    pod_condition(pod, "Ready").is_some_and(|c| c.status == "True")
}

/// The virtual time the pod became Ready (its Ready condition's lastTransitionTime), if ready.
pub fn pod_ready_since(pod: &Pod) -> Option<Millis> {
    pod_condition(pod, "Ready").filter(|c| c.status == "True").and_then(|c| c.last_transition_time.as_ref()).map(millis_of)
}

/// `podutil.IsPodAvailable`: Ready, and Ready for longer than minReadySeconds.
pub fn is_pod_available(pod: &Pod, min_ready_seconds: i32, now: Millis) -> bool {
    is_pod_ready(pod) && ready_long_enough(pod_ready_since(pod), min_ready_seconds, now)
}

/// The time test of `podutil.IsPodAvailable` for a ready pod that became Ready at
/// `ready_since`: minReadySeconds of 0 or less always passes, else it must have passed
/// (and a Ready condition without a transition time never passes).
pub fn ready_long_enough(ready_since: Option<Millis>, min_ready_seconds: i32, now: Millis) -> bool {
    min_ready_seconds <= 0 || ready_since.is_some_and(|t| t + (min_ready_seconds as Millis) * 1000 < now)
}

/// The object's labels as a map (empty if unset).
pub fn labels_of(meta: &ObjectMeta) -> BTreeMap<String, String> {
    meta.labels.clone().unwrap_or_default()
}

/// Go-style `omitempty` for counters: 0 → None.
pub fn nz(value: i32) -> Option<i32> {
    if value == 0 {
        None
    } else {
        Some(value)
    }
}

/// Whether an API error is a 409 Conflict (stale resourceVersion) or AlreadyExists.
pub fn is_conflict(err: &kubesim_apiserver::ApiError) -> bool {
    err.code == 409
}

/// Whether an API error is NotFound.
pub fn is_not_found(err: &kubesim_apiserver::ApiError) -> bool {
    err.code == 404
}

/// The protection controllers' step (pvc-protection, pv-protection): a live object gets the
/// `finalizer`; a deleting one loses it once `releasable` (nothing uses it any more). The
/// written object goes into `cache`.
pub fn sync_protection_finalizer(ctx: &mut Ctx, cache: &mut Cache, object: &Object, finalizer: &str, releasable: bool) -> kubesim_apiserver::error::Result<()> {
    let meta = object.metadata();
    let has = meta.finalizers.iter().flatten().any(|f| f == finalizer);
    if meta.deletion_timestamp.is_some() {
        if has && releasable {
            let updated = patch_meta(ctx, object, |m| {
                if let Some(f) = m.finalizers.as_mut() {
                    f.retain(|x| x != finalizer);
                    if f.is_empty() {
                        m.finalizers = None;
                    }
                }
            })?;
            cache.put(updated);
        }
    } else if !has {
        let updated = patch_meta(ctx, object, |m| m.finalizers.get_or_insert_with(Vec::new).push(finalizer.into()))?;
        cache.put(updated);
    }
    Ok(())
}

/// Applies a metadata change to the freshest copy of an object, as a PATCH would (read from the
/// API server, mutate, conditional update).
pub fn patch_meta(ctx: &mut Ctx, object: &Object, mutate: impl FnOnce(&mut ObjectMeta)) -> kubesim_apiserver::error::Result<Arc<Object>> {
    let info = object.info().ok_or_else(|| kubesim_apiserver::ApiError::bad_request(format!("unknown kind {}", object.kind())))?;
    let current = ctx.api.get(info, object.namespace(), object.name())?;
    if object.metadata().uid.is_some() && current.metadata().uid != object.metadata().uid {
        return Err(kubesim_apiserver::ApiError::not_found(&info.qualified_resource(), object.name()));
    }
    let mut fresh = (*current).clone();
    mutate(fresh.metadata_mut());
    if fresh == *current {
        return Ok(current);
    }
    ctx.update(fresh)
}

/// `ControllerRefManager.ClaimObjects`: keeps the candidates this owner controls and whose labels
/// match, adopts matching orphans (unless the owner or the orphan is being deleted), and
/// releases owned objects that no longer match. Results of writes are put into `cache`.
pub fn claim(
    ctx: &mut Ctx,
    owner: &Object,
    selector: &kubesim_api::selector::Selector,
    candidates: Vec<Arc<Object>>,
    cache: &mut Cache,
) -> kubesim_apiserver::error::Result<Vec<Arc<Object>>> {
    let owner_uid = uid_of(owner.metadata()).to_string();
    let owner_deleting = is_deleting(owner.metadata());
    let mut claimed = Vec::new();
    let mut adoption_checked = false;
    for object in candidates {
        let matches = selector.matches(object.metadata().labels.as_ref());
        match controller_of(object.metadata()) {
            Some(r) if r.uid != owner_uid => continue,
            Some(_) => {
                if matches {
                    claimed.push(object);
                } else if !owner_deleting {
                    match patch_meta(ctx, &object, |m| {
                        if let Some(refs) = m.owner_references.as_mut() {
                            refs.retain(|r| r.uid != owner_uid);
                            if refs.is_empty() {
                                m.owner_references = None;
                            }
                        }
                    }) {
                        Ok(updated) => {
                            cache.put(updated);
                        }
                        Err(e) if is_not_found(&e) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            None => {
                if owner_deleting || !matches || is_deleting(object.metadata()) || object.namespace() != owner.namespace() {
                    continue;
                }
                if !adoption_checked {
                    // RecheckDeletionTimestamp: a fresh read of the owner must still be it.
                    let info = owner.info().expect("controllers are served kinds");
                    let fresh = ctx.api.get(info, owner.namespace(), owner.name())?;
                    if uid_of(fresh.metadata()) != owner_uid {
                        return Err(kubesim_apiserver::ApiError::conflict_with(
                            &info.qualified_resource(),
                            owner.name(),
                            &format!("original {}/{} is gone: got uid {}, wanted {}", owner.namespace(), owner.name(), uid_of(fresh.metadata()), owner_uid),
                        ));
                    }
                    if is_deleting(fresh.metadata()) {
                        return Err(kubesim_apiserver::ApiError::conflict_with(
                            &info.qualified_resource(),
                            owner.name(),
                            &format!("{}/{} has just been deleted", owner.namespace(), owner.name()),
                        ));
                    }
                    adoption_checked = true;
                }
                let reference = controller_ref(owner);
                match patch_meta(ctx, &object, |m| {
                    if controller_of(m).is_none() {
                        m.owner_references.get_or_insert_with(Vec::new).push(reference);
                    }
                }) {
                    Ok(updated) => {
                        if controller_of(updated.metadata()).is_some_and(|r| r.uid == owner_uid) {
                            cache.put(updated.clone());
                            claimed.push(updated);
                        }
                    }
                    Err(e) if is_not_found(&e) => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(claimed)
}

/// Decodes a JSON-kept object (`Object::Dynamic`) into its k8s-openapi type.
pub fn decode<T: serde::de::DeserializeOwned>(object: &Object) -> Option<T> {
    object.decode()
}

/// Encodes a k8s-openapi value as the API server stores its kind (typed or JSON-kept).
pub fn encode<T: serde::Serialize>(value: &T, api_version: &str, kind: &str) -> Object {
    let json = serde_json::to_value(value).expect("API types serialize");
    let info = kubesim_api::kind_info(api_version, kind).expect("served kind");
    Object::from_json(info, json).expect("round-trips through its own type")
}

/// The ActivePods order (controller.ActivePods): unassigned < assigned, Pending < Unknown <
/// Running, not ready < ready, more recently ready first, more restarts first, newer first.
pub fn active_pods_order(a: &Pod, b: &Pod) -> std::cmp::Ordering {
    let key_phase = |p: &Pod| match pod_phase(p) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    };
    let (na, nb) = (pod_node(a).is_empty(), pod_node(b).is_empty());
    if na != nb {
        return if na { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater };
    }
    let (pa, pb) = (key_phase(a), key_phase(b));
    if pa != pb {
        return pa.cmp(&pb);
    }
    let (ra, rb) = (is_pod_ready(a), is_pod_ready(b));
    if ra != rb {
        return if !ra { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater };
    }
    if ra && rb {
        let (ta, tb) = (pod_ready_since(a), pod_ready_since(b));
        if ta != tb {
            // later (or zero) first
            return match (ta, tb) {
                (None, _) => std::cmp::Ordering::Less,
                (_, None) => std::cmp::Ordering::Greater,
                (Some(x), Some(y)) => y.cmp(&x),
            };
        }
    }
    let restarts = |p: &Pod| p.status.as_ref().and_then(|s| s.container_statuses.as_ref()).into_iter().flatten().map(|c| c.restart_count).max().unwrap_or(0);
    let (xa, xb) = (restarts(a), restarts(b));
    if xa != xb {
        return xb.cmp(&xa);
    }
    created_ms(&b.metadata).cmp(&created_ms(&a.metadata))
}

/// A stable merge sort driven by a `less` predicate, like Go's `sort.Sort` over a `Less` that
/// need not be a strict weak order (upstream's pod ranking is not transitive across log-scale
/// buckets; Rust's slice sorts may panic on such comparators).
pub fn sort_by_less<T: Clone>(items: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let n = items.len();
    if n < 2 {
        return;
    }
    let mid = n / 2;
    sort_by_less(&mut items[..mid], less);
    sort_by_less(&mut items[mid..], less);
    let mut merged: Vec<T> = Vec::with_capacity(n);
    let (mut i, mut j) = (0, mid);
    while i < mid && j < n {
        if less(&items[j], &items[i]) {
            merged.push(items[j].clone());
            j += 1;
        } else {
            merged.push(items[i].clone());
            i += 1;
        }
    }
    merged.extend_from_slice(&items[i..mid]);
    merged.extend_from_slice(&items[j..n]);
    items.clone_from_slice(&merged);
}

/// The external provisioner library's last step of deleteVolumeOperation: the PV object is
/// deleted once its storage is gone; a PV already gone is fine, another failure is a
/// `VolumeFailedDelete` event and a retry.
pub fn delete_provisioned_volume(ctx: &mut Ctx, object: &Object, name: &str) -> Result<(), kubesim_apiserver::ApiError> {
    let info = kubesim_api::object::kind_info("v1", "PersistentVolume").expect("served");
    match ctx.delete(info, "", name, kubesim_apiserver::DeleteOptions::default()) {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => {
            ctx.event(object, "Warning", "VolumeFailedDelete", e.message.clone());
            Err(e)
        }
    }
}

/// The provisioner library's provisionClaimOperation, its last step: the new PV object is
/// created (one that exists already came from an earlier attempt), `ProvisioningSucceeded` on
/// the claim; a failure is `ProvisioningFailed` and a retry.
pub fn create_provisioned_volume(
    ctx: &mut Ctx,
    volumes: &mut Cache,
    claim: &Object,
    pv: &kubesim_api::k8s_openapi::api::core::v1::PersistentVolume,
    class_name: &str,
    name: &str,
) -> Result<(), kubesim_apiserver::ApiError> {
    match ctx.create(encode(pv, "v1", "PersistentVolume")) {
        Ok(created) => {
            volumes.put(created);
            ctx.event(claim, "Normal", "ProvisioningSucceeded", format!("Successfully provisioned volume {name}"));
            Ok(())
        }
        Err(e) if e.reason == "AlreadyExists" => Ok(()),
        Err(e) => {
            ctx.event(claim, "Warning", "ProvisioningFailed", format!("failed to provision volume with StorageClass {class_name:?}: {}", e.message));
            Err(e)
        }
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use kubesim_api::k8s_openapi::api::core::v1::{ConfigMap, Pod};
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(ns: &str, name: &str, rv: u64, owner: Option<&str>) -> Arc<Object> {
        let owner_references = owner
            .map(|uid| vec![OwnerReference { kind: "ReplicaSet".into(), name: "rs".into(), uid: uid.into(), controller: Some(true), ..Default::default() }]);
        let metadata =
            ObjectMeta { namespace: Some(ns.into()), name: Some(name.into()), resource_version: Some(rv.to_string()), owner_references, ..Default::default() };
        Arc::new(Object::Pod(Box::new(Pod { metadata, ..Default::default() })))
    }
    fn names<'a>(objects: impl Iterator<Item = &'a Arc<Object>>) -> Vec<String> {
        objects.map(|o| format!("{}/{}", o.namespace(), o.name())).collect()
    }

    // The cache answers as a map by (namespace, name) would: key order across namespaces,
    // one namespace alone, counts through updates and removals, orphans apart from owned
    // objects, and no older version replacing a newer one.
    #[test]
    fn cache_keeps_key_order_counts_and_indexes() {
        let mut cache = Cache::default();
        for (ns, name, owner) in
            [("b", "p2", None), ("a", "p9", Some("u1")), ("b", "p1", Some("u1")), ("", "cluster", None), ("ab", "p0", None), ("a", "p10", None)]
        {
            assert!(cache.put(pod(ns, name, 5, owner)).is_none());
        }
        assert_eq!(names(cache.iter()), ["/cluster", "a/p10", "a/p9", "ab/p0", "b/p1", "b/p2"]);
        assert_eq!(names(cache.in_namespace("a")), ["a/p10", "a/p9"]);
        assert_eq!(names(cache.in_namespace("c")), Vec::<String>::new());
        assert_eq!((cache.len(), cache.is_empty()), (6, false));
        assert_eq!(names(cache.orphans_in("b")), ["b/p2"]);
        assert_eq!(names(cache.claim_candidates("b", "u1")), ["b/p1", "b/p2"]);
        // An older version is not taken; a newer one replaces the cached one and moves it
        // between the indexes when its controller changes.
        assert_eq!(cache.put(pod("b", "p2", 4, Some("u1"))).map(|o| o.resource_version().to_string()), Some("5".into()));
        assert_eq!(names(cache.orphans_in("b")), ["b/p2"]);
        cache.put(pod("b", "p2", 6, Some("u1")));
        assert_eq!(names(cache.orphans_in("b")), Vec::<String>::new());
        assert_eq!(names(cache.claim_candidates("b", "u1")), ["b/p1", "b/p2"]);
        assert_eq!(cache.len(), 6);
        assert_eq!(cache.get_named("a", "p9").map(|o| o.name().to_string()), Some("p9".into()));
        assert!(cache.get(&("a".to_string(), "p9".to_string())).is_some());
        assert!(cache.get_named("b", "p9").is_none());
        // Removing the last object of a namespace leaves no trace of it.
        assert!(cache.remove(&("ab".to_string(), "p0".to_string())).is_some());
        assert!(cache.remove(&("ab".to_string(), "p0".to_string())).is_none());
        assert_eq!(names(cache.iter()), ["/cluster", "a/p10", "a/p9", "b/p1", "b/p2"]);
        assert_eq!(cache.len(), 5);
        // Other kinds are cached alike.
        let cm = Object::ConfigMap(Box::new(ConfigMap {
            metadata: ObjectMeta { namespace: Some("a".into()), name: Some("c".into()), ..Default::default() },
            ..Default::default()
        }));
        cache.put(Arc::new(cm));
        assert_eq!(names(cache.in_namespace("a")), ["a/c", "a/p10", "a/p9"]);
    }
}
