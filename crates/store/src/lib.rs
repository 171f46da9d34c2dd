//! The etcd model. One global revision counter; every write commits a new revision, and an
//! object's `metadata.resourceVersion` is the revision of its last write (etcd's modRevision).
//! Objects are shared as `Arc<Object>`: watchers, caches and the trace hold the same allocation.
//!
//! The store knows nothing about admission, defaulting or validation (the API server's job);
//! it enforces only what etcd's transactions enforce: create-if-absent, compare-and-swap on the
//! revision, and delete.
//!
//! Guarantees: revisions are strictly increasing in commit order; [`Store::drain_commits`]
//! returns every commit exactly once, in order; iteration orders are key orders (no hashing).

#![deny(missing_docs)]

use kubesim_api::hash::FixedState;
use kubesim_api::selector::{Requirement, Selector};
use kubesim_api::{KindInfo, Millis, Object};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

mod packed;

/// A resource: (API group, plural), e.g. `("", "pods")` or `("apps", "deployments")`.
pub type Resource = (&'static str, &'static str);

/// The resource a kind is stored under.
pub fn resource_of(info: &KindInfo) -> Resource {
    (info.group(), info.plural)
}

/// An object's key within its resource: (namespace, name). Cluster-scoped objects use "".
pub type ObjectKey = (String, String);

/// The kind of change a commit made, as a watch reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    /// Created.
    Added,
    /// Updated.
    Modified,
    /// Removed.
    Deleted,
}

impl EventType {
    /// The watch event type string.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One committed write.
#[derive(Clone, Debug)]
pub struct Commit {
    /// The revision this write created.
    pub revision: u64,
    /// Virtual time of the write.
    pub t_ms: Millis,
    /// What happened.
    pub event_type: EventType,
    /// The resource written.
    pub resource: Resource,
    /// The object after the write (for deletes: the last state, with the deletion's revision).
    pub object: Arc<Object>,
    /// The object before the write (None for creates).
    pub previous: Option<Arc<Object>>,
    /// Who wrote it (`kubectl`, `scheduler`, `kubelet/node-1`, ...).
    pub actor: Arc<str>,
}

/// What etcd refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The key exists (create).
    AlreadyExists,
    /// The key does not exist (update, delete).
    NotFound,
    /// The expected revision does not match the stored one (compare-and-swap failed).
    Conflict,
}

/// A watch asked to start from a revision older than the compacted history (HTTP 410).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gone {
    /// The oldest revision still in history.
    pub oldest_available: u64,
}

/// Values by namespace, then name: iterated in key order like a map by `(namespace, name)`,
/// but a lookup compares the namespace once and then names alone (with 150,000 pods in one
/// namespace, a search by `(namespace, name)` compared both strings at every step, each a
/// cache miss), needs no allocated key, and stores each namespace's name once. The store's
/// objects and the controllers' informer caches keep their objects in one.
#[derive(Clone, Debug)]
pub struct ByNamespace<V> {
    namespaces: BTreeMap<String, BTreeMap<String, V>>,
    len: usize,
}

impl<V> Default for ByNamespace<V> {
    fn default() -> Self {
        ByNamespace { namespaces: BTreeMap::new(), len: 0 }
    }
}

impl<V> ByNamespace<V> {
    /// The value at (namespace, name).
    pub fn get(&self, namespace: &str, name: &str) -> Option<&V> {
        self.namespaces.get(namespace)?.get(name)
    }
    /// The value at (namespace, name), mutably.
    pub fn get_mut(&mut self, namespace: &str, name: &str) -> Option<&mut V> {
        self.namespaces.get_mut(namespace)?.get_mut(name)
    }
    /// Puts a value at (namespace, name); returns the one it replaced.
    pub fn insert(&mut self, namespace: &str, name: &str, value: V) -> Option<V> {
        let names = match self.namespaces.get_mut(namespace) {
            Some(names) => names,
            None => self.namespaces.entry(namespace.to_string()).or_default(),
        };
        let replaced = match names.get_mut(name) {
            Some(slot) => Some(std::mem::replace(slot, value)),
            None => names.insert(name.to_string(), value),
        };
        if replaced.is_none() {
            self.len += 1;
        }
        replaced
    }
    /// Removes the value at (namespace, name); a namespace left empty goes with it.
    pub fn remove(&mut self, namespace: &str, name: &str) -> Option<V> {
        let names = self.namespaces.get_mut(namespace)?;
        let removed = names.remove(name)?;
        self.len -= 1;
        if names.is_empty() {
            self.namespaces.remove(namespace);
        }
        Some(removed)
    }
    /// Every value, in (namespace, name) order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.namespaces.values().flat_map(|names| names.values())
    }
    /// The values of one namespace, in name order.
    pub fn in_namespace<'a>(&'a self, namespace: &str) -> impl Iterator<Item = &'a V> + 'a {
        self.namespaces.get(namespace).into_iter().flat_map(|names| names.values())
    }
    /// How many values.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The versioned store.
#[derive(Clone, Debug)]
pub struct Store {
    revision: u64,
    /// The objects of each resource. Hashed: every read and write looks its resource up, and
    /// a search of ~40 resources compared group and resource strings at each step.
    objects: HashMap<Resource, ByNamespace<Slot>, FixedState>,
    pods_by_node: BTreeMap<String, BTreeSet<ObjectKey>>,
    by_label: BTreeMap<(Resource, String, String), BTreeSet<ObjectKey>>,
    history: VecDeque<Commit>,
    history_capacity: usize,
    compacted_revision: u64,
    undrained: Vec<Commit>,
    /// Leases in the order they run out ([`Lease`]). The first is always live.
    expiries: VecDeque<Lease>,
    /// How many deletes (expiries included) the store has committed.
    deletions: u64,
    /// Whether Events are kept packed ([`Slot::Packed`]; [`Store::pack_events`]).
    pack_events: bool,
}

/// The lease a write of a leased resource granted: it runs out `at`, unless the key was
/// written again (a renewal: a newer version with its own lease) or deleted first. The
/// version is held weakly and a lease is live while that version is still the key's current
/// one, so a renewal or a delete needs no search for the old lease: it goes stale, and is
/// dropped when it reaches the front of the queue. One TTL for every leased resource and
/// writes in time order keep the queue in time order. (A key index and a time-ordered set
/// cost ~350 bytes per Event, two copies of each key among them, at 750,000 Events.)
#[derive(Clone, Debug)]
struct Lease {
    at: Millis,
    resource: Resource,
    version: Leased,
}

/// The version a lease is for, held weakly as its slot holds it.
#[derive(Clone, Debug)]
enum Leased {
    Object(std::sync::Weak<Object>),
    Packed(std::sync::Weak<Packed>),
}

/// One stored version: the object itself, or (an Event: written once or a few times, read
/// rarely, kept an hour, 750,000 of them at 150,000 pods) a compact encoding of it
/// ([`packed`]), decoded on the first read. A k8s-openapi Event is a 1,000-byte struct and
/// ~16 strings; packed it is ~350 bytes in one allocation. What a write returns, its commit
/// and its watchers share the decoded object as for every other kind.
#[derive(Clone, Debug)]
enum Slot {
    Live(Arc<Object>),
    Packed(Arc<Packed>),
}

/// An object kept packed ([`Slot::Packed`]).
#[derive(Debug)]
struct Packed {
    /// The encoding ([`packed::pack`]); its key is read without decoding ([`Packed::key`]).
    bytes: Box<[u8]>,
    /// The object, once read.
    decoded: std::sync::OnceLock<Arc<Object>>,
}

impl Slot {
    /// `object`'s slot: packed for the kinds kept packed.
    fn of(resource: Resource, object: &Arc<Object>, pack_events: bool) -> Slot {
        let Object::Event(event) = object.as_ref() else { return Slot::Live(object.clone()) };
        if !pack_events || lease_ms(resource).is_none() {
            return Slot::Live(object.clone());
        }
        let packed = Packed { bytes: packed::pack(event), decoded: std::sync::OnceLock::new() };
        debug_assert!(packed.decode() == **object, "an Event reads back as it was written");
        debug_assert_eq!(packed.key(), (object.namespace(), object.name()), "a packed Event's key reads back");
        Slot::Packed(Arc::new(packed))
    }

    /// The stored object (a packed one decoded on first use, then kept).
    fn object(&self) -> &Arc<Object> {
        match self {
            Slot::Live(object) => object,
            Slot::Packed(packed) => packed.decoded.get_or_init(|| Arc::new(packed.decode())),
        }
    }

    fn leased(&self) -> Leased {
        match self {
            Slot::Live(object) => Leased::Object(Arc::downgrade(object)),
            Slot::Packed(packed) => Leased::Packed(Arc::downgrade(packed)),
        }
    }
}

impl Packed {
    fn decode(&self) -> Object {
        Object::Event(Box::new(packed::unpack(&self.bytes)))
    }

    /// (namespace, name): read from the encoding, or (an Event kept as JSON) from the object.
    fn key(&self) -> (&str, &str) {
        packed::key(&self.bytes).unwrap_or_else(|| {
            let object = self.decoded.get_or_init(|| Arc::new(self.decode()));
            (object.namespace(), object.name())
        })
    }
}

/// kube-apiserver's `--event-ttl` (default one hour): Events are written to etcd with a lease
/// that long (`pkg/registry/core/event/storage`: the TTL function returns it on create and on
/// update alike), so an Event vanishes an hour after its last write, and watchers see it
/// DELETED, as etcd's lease expiry deletes the key.
pub const EVENT_TTL_MS: Millis = 60 * 60_000;

/// The lease a write to `resource` carries, if any: Events (core/v1 and events.k8s.io/v1, one
/// storage upstream) live [`EVENT_TTL_MS`] after their last write.
pub fn lease_ms(resource: Resource) -> Option<Millis> {
    (resource.1 == "events" && (resource.0.is_empty() || resource.0 == "events.k8s.io")).then_some(EVENT_TTL_MS)
}

impl Default for Store {
    fn default() -> Self {
        Store::new(1_000_000)
    }
}

impl Store {
    /// An empty store at revision 1 (as a fresh etcd), keeping at most `history_capacity`
    /// commits for watches that start from an older revision.
    pub fn new(history_capacity: usize) -> Store {
        Store {
            revision: 1,
            objects: HashMap::default(),
            pods_by_node: BTreeMap::new(),
            by_label: BTreeMap::new(),
            history: VecDeque::new(),
            history_capacity,
            compacted_revision: 1,
            undrained: Vec::new(),
            expiries: VecDeque::new(),
            deletions: 0,
            pack_events: true,
        }
    }

    /// Whether Events written from now on are kept packed, decoded on their first read (the
    /// default), or as objects: a viewer that reads every Event anyway (the browser app's
    /// event list) would hold both.
    pub fn pack_events(&mut self, pack: bool) {
        self.pack_events = pack;
    }

    /// The current global revision (a list's resourceVersion).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Reads one object.
    pub fn get(&self, resource: Resource, namespace: &str, name: &str) -> Option<&Arc<Object>> {
        self.objects.get(&resource)?.get(namespace, name).map(Slot::object)
    }

    /// Whether an object exists (without reading it: a packed Event stays packed).
    pub fn contains(&self, resource: Resource, namespace: &str, name: &str) -> bool {
        self.objects.get(&resource).is_some_and(|map| map.get(namespace, name).is_some())
    }

    /// Lists a resource, in key order, optionally within one namespace.
    pub fn list<'a>(&'a self, resource: Resource, namespace: Option<&'a str>) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        let objects: Box<dyn Iterator<Item = &Arc<Object>>> = match (self.objects.get(&resource), namespace) {
            (None, _) => Box::new(std::iter::empty()),
            (Some(map), None) => Box::new(map.values().map(Slot::object)),
            (Some(map), Some(ns)) => Box::new(map.in_namespace(ns).map(Slot::object)),
        };
        objects
    }

    /// Every resource that has objects, in order.
    pub fn resources(&self) -> impl Iterator<Item = Resource> + '_ {
        let mut resources: Vec<Resource> = self.objects.iter().filter(|(_, m)| !m.is_empty()).map(|(r, _)| *r).collect();
        resources.sort_unstable();
        resources.into_iter()
    }

    /// Number of objects of a resource.
    pub fn count(&self, resource: Resource) -> usize {
        self.objects.get(&resource).map_or(0, |m| m.len())
    }

    /// The pods whose spec.nodeName is `node` (index; the kubelet's field-selector list).
    pub fn pods_on_node<'a>(&'a self, node: &str) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        let pods = self.objects.get(&("", "pods"));
        self.pods_by_node.get(node).into_iter().flatten().filter_map(move |key| pods.and_then(|p| p.get(&key.0, &key.1)).map(Slot::object))
    }

    /// Lists the objects a label selector selects, optionally in one namespace, in key order.
    /// An equality requirement (`app=web`, `app in (web)`) narrows the scan to the label index;
    /// other selectors scan the resource.
    pub fn list_selected(&self, resource: Resource, namespace: Option<&str>, selector: &Selector) -> Vec<Arc<Object>> {
        let Some(map) = self.objects.get(&resource) else { return Vec::new() };
        let in_namespace = |key: &ObjectKey| namespace.is_none_or(|ns| key.0 == ns);
        let candidates = selector
            .requirements
            .iter()
            .filter_map(|r| match r {
                Requirement::In(key, values) if values.len() == 1 => {
                    Some(self.by_label.get(&(resource, key.clone(), values[0].clone())).map_or(0, |s| s.len())).map(|n| (n, key.clone(), values[0].clone()))
                }
                _ => None,
            })
            .min();
        match candidates {
            Some((_, key, value)) => self
                .by_label
                .get(&(resource, key, value))
                .into_iter()
                .flatten()
                .filter(|k| in_namespace(k))
                .filter_map(|k| map.get(&k.0, &k.1))
                .map(Slot::object)
                .filter(|o| selector.matches(o.metadata().labels.as_ref()))
                .cloned()
                .collect(),
            None => self.list(resource, namespace).filter(|o| selector.matches(o.metadata().labels.as_ref())).cloned().collect(),
        }
    }

    /// Creates an object; fails if the key exists. Sets resourceVersion.
    pub fn create(&mut self, resource: Resource, mut object: Object, actor: &Arc<str>, t_ms: Millis) -> Result<Arc<Object>, StoreError> {
        let map = self.objects.entry(resource).or_default();
        if map.get(object.namespace(), object.name()).is_some() {
            return Err(StoreError::AlreadyExists);
        }
        let key = (object.namespace().to_string(), object.name().to_string());
        self.revision += 1;
        object.metadata_mut().resource_version = Some(self.revision.to_string());
        let object = Arc::new(object);
        let slot = Slot::of(resource, &object, self.pack_events);
        let leased = slot.leased();
        map.insert(&key.0, &key.1, slot);
        self.index(resource, &key, None, Some(&object));
        self.lease(resource, leased, t_ms);
        self.record(EventType::Added, resource, object.clone(), None, actor, t_ms);
        Ok(object)
    }

    /// Replaces an object. With `expected_revision`, fails with Conflict unless the stored
    /// object's resourceVersion equals it.
    pub fn update(
        &mut self,
        resource: Resource,
        mut object: Object,
        expected_revision: Option<u64>,
        actor: &Arc<str>,
        t_ms: Millis,
    ) -> Result<Arc<Object>, StoreError> {
        let map = self.objects.entry(resource).or_default();
        let slot = map.get_mut(object.namespace(), object.name()).ok_or(StoreError::NotFound)?;
        if let Some(expected) = expected_revision {
            if slot.object().resource_version() != expected.to_string() {
                return Err(StoreError::Conflict);
            }
        }
        self.revision += 1;
        object.metadata_mut().resource_version = Some(self.revision.to_string());
        let object = Arc::new(object);
        let new_slot = Slot::of(resource, &object, self.pack_events);
        let leased = new_slot.leased();
        let previous = std::mem::replace(slot, new_slot).object().clone();
        let key = (object.namespace().to_string(), object.name().to_string());
        self.index(resource, &key, Some(&previous), Some(&object));
        self.lease(resource, leased, t_ms);
        self.record(EventType::Modified, resource, object.clone(), Some(previous), actor, t_ms);
        Ok(object)
    }

    /// Removes an object. With `expected_revision`, compare-and-swap as for update.
    pub fn delete(
        &mut self,
        resource: Resource,
        namespace: &str,
        name: &str,
        expected_revision: Option<u64>,
        actor: &Arc<str>,
        t_ms: Millis,
    ) -> Result<Arc<Object>, StoreError> {
        let map = self.objects.get_mut(&resource).ok_or(StoreError::NotFound)?;
        let previous = map.get(namespace, name).map(Slot::object).cloned().ok_or(StoreError::NotFound)?;
        if let Some(expected) = expected_revision {
            if previous.resource_version() != expected.to_string() {
                return Err(StoreError::Conflict);
            }
        }
        map.remove(namespace, name);
        let key = (namespace.to_string(), name.to_string());
        self.revision += 1;
        self.deletions += 1;
        let mut last = (*previous).clone();
        last.metadata_mut().resource_version = Some(self.revision.to_string());
        let last = Arc::new(last);
        self.index(resource, &key, Some(&previous), None);
        // The key's lease (if any) went stale with it.
        self.drop_stale_leases();
        self.record(EventType::Deleted, resource, last.clone(), Some(previous), actor, t_ms);
        Ok(last)
    }

    /// Grants (or renews) the lease of `version`, written at `t_ms`, if its resource has
    /// leases. The lease of the version it replaces goes stale.
    fn lease(&mut self, resource: Resource, version: Leased, t_ms: Millis) {
        let Some(ttl) = lease_ms(resource) else { return };
        let at = t_ms + ttl;
        debug_assert!(self.expiries.back().is_none_or(|last| last.at <= at), "leases are granted in time order");
        self.expiries.push_back(Lease { at, resource, version });
        self.drop_stale_leases();
    }

    /// Whether `lease` is still live: its version is its key's current one (the same
    /// allocation: a world's clone shares them, and holds its own). `key` hears the key of a
    /// live one.
    fn live_lease(&self, lease: &Lease, key: impl FnOnce(&str, &str)) -> bool {
        let Some(map) = self.objects.get(&lease.resource) else { return false };
        match &lease.version {
            Leased::Object(version) => {
                let Some(version) = version.upgrade() else { return false };
                let live = matches!(map.get(version.namespace(), version.name()), Some(Slot::Live(current)) if Arc::ptr_eq(current, &version));
                if live {
                    key(version.namespace(), version.name());
                }
                live
            }
            Leased::Packed(version) => {
                let Some(version) = version.upgrade() else { return false };
                let (namespace, name) = version.key();
                let live = matches!(map.get(namespace, name), Some(Slot::Packed(current)) if Arc::ptr_eq(current, &version));
                if live {
                    key(namespace, name);
                }
                live
            }
        }
    }

    /// Drops the stale leases at the front of the queue (the first lease is always live).
    fn drop_stale_leases(&mut self) {
        while let Some(first) = self.expiries.front() {
            if self.live_lease(first, |_, _| {}) {
                break;
            }
            self.expiries.pop_front();
        }
    }

    /// How many deletes (lease expiries included) were committed so far: a reader that saw
    /// the same count knows nothing was removed since.
    pub fn deletions(&self) -> u64 {
        self.deletions
    }

    /// When the next lease runs out, if any key is leased.
    pub fn next_expiry(&self) -> Option<Millis> {
        self.expiries.front().map(|lease| lease.at)
    }

    /// Deletes every key whose lease ran out at or before `now` (as etcd's lessor revokes an
    /// expired lease and its keys), recording DELETED commits by `actor`. Returns how many.
    pub fn expire(&mut self, now: Millis, actor: &Arc<str>) -> usize {
        // The keys whose leases ran out, deleted in (time, resource, key) order.
        let mut due = Vec::new();
        while self.expiries.front().is_some_and(|lease| lease.at <= now) {
            let lease = self.expiries.pop_front().expect("checked");
            let mut key = None;
            if self.live_lease(&lease, |namespace, name| key = Some((namespace.to_string(), name.to_string()))) {
                due.push((lease.at, lease.resource, key.expect("a live lease has a key")));
            }
        }
        due.sort();
        let mut expired = 0;
        for (_, resource, key) in due {
            if self.delete(resource, &key.0, &key.1, None, actor, now).is_ok() {
                expired += 1;
            }
        }
        self.drop_stale_leases();
        expired
    }

    /// Every commit since the last drain, in commit order. The world fans these out to watchers
    /// and to the trace.
    pub fn drain_commits(&mut self) -> Vec<Commit> {
        std::mem::take(&mut self.undrained)
    }

    /// Whether commits are waiting to be drained.
    pub fn has_undrained(&self) -> bool {
        !self.undrained.is_empty()
    }

    /// The commits after `revision` for a watch starting there, or [`Gone`] if history no
    /// longer reaches back that far ("too old resource version").
    pub fn commits_since(&self, revision: u64) -> Result<impl Iterator<Item = &Commit>, Gone> {
        if revision < self.compacted_revision {
            return Err(Gone { oldest_available: self.compacted_revision });
        }
        // History is in revision order: find the first later commit by binary search.
        let start = self.history.partition_point(|c| c.revision <= revision);
        Ok(self.history.range(start..))
    }

    /// Drops history up to and including `revision` (etcd compaction).
    pub fn compact(&mut self, revision: u64) {
        while self.history.front().is_some_and(|c| c.revision <= revision) {
            self.history.pop_front();
        }
        self.compacted_revision = self.compacted_revision.max(revision);
    }

    fn record(&mut self, event_type: EventType, resource: Resource, object: Arc<Object>, previous: Option<Arc<Object>>, actor: &Arc<str>, t_ms: Millis) {
        let commit = Commit { revision: self.revision, t_ms, event_type, resource, object, previous, actor: actor.clone() };
        if self.history_capacity > 0 {
            if self.history.len() == self.history_capacity {
                let dropped = self.history.pop_front().expect("history is full");
                self.compacted_revision = dropped.revision;
            }
            self.history.push_back(commit.clone());
        }
        self.undrained.push(commit);
    }

    fn index(&mut self, resource: Resource, key: &ObjectKey, old: Option<&Arc<Object>>, new: Option<&Arc<Object>>) {
        let empty = std::collections::BTreeMap::new();
        let old_labels = old.and_then(|o| o.metadata().labels.as_ref()).unwrap_or(&empty);
        let new_labels = new.and_then(|o| o.metadata().labels.as_ref()).unwrap_or(&empty);
        if old_labels != new_labels {
            for (k, v) in old_labels {
                if new_labels.get(k) != Some(v) {
                    let index_key = (resource, k.clone(), v.clone());
                    if let Some(set) = self.by_label.get_mut(&index_key) {
                        set.remove(key);
                        if set.is_empty() {
                            self.by_label.remove(&index_key);
                        }
                    }
                }
            }
            for (k, v) in new_labels {
                if old_labels.get(k) != Some(v) {
                    self.by_label.entry((resource, k.clone(), v.clone())).or_default().insert(key.clone());
                }
            }
        }
        if resource != ("", "pods") {
            return;
        }
        let node_of = |o: Option<&Arc<Object>>| o.and_then(|o| o.as_pod()).and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.clone());
        let (old_node, new_node) = (node_of(old), node_of(new));
        if old_node == new_node {
            return;
        }
        if let Some(node) = old_node {
            if let Some(set) = self.pods_by_node.get_mut(&node) {
                set.remove(key);
                if set.is_empty() {
                    self.pods_by_node.remove(&node);
                }
            }
        }
        if let Some(node) = new_node {
            self.pods_by_node.entry(node).or_default().insert(key.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_api::k8s_openapi::api::core::v1::{Pod, PodSpec};
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    const PODS: Resource = ("", "pods");

    fn pod(name: &str, node: Option<&str>) -> Object {
        Object::Pod(Box::new(Pod {
            metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
            spec: Some(PodSpec { node_name: node.map(Into::into), ..Default::default() }),
            ..Default::default()
        }))
    }

    #[test]
    fn every_write_takes_the_next_global_revision() {
        let mut store = Store::default();
        let actor: Arc<str> = "test".into();
        let a = store.create(PODS, pod("a", None), &actor, 0).unwrap();
        let b = store.create(PODS, pod("b", None), &actor, 0).unwrap();
        assert_eq!(a.resource_version(), "2");
        assert_eq!(b.resource_version(), "3");
        let a2 = store.update(PODS, pod("a", Some("n1")), Some(2), &actor, 5).unwrap();
        assert_eq!(a2.resource_version(), "4");
        let revisions: Vec<u64> = store.drain_commits().iter().map(|c| c.revision).collect();
        assert_eq!(revisions, vec![2, 3, 4]);
        assert!(store.drain_commits().is_empty());
    }

    #[test]
    fn stale_revisions_conflict_and_duplicates_already_exist() {
        let mut store = Store::default();
        let actor: Arc<str> = "test".into();
        store.create(PODS, pod("a", None), &actor, 0).unwrap();
        assert_eq!(store.create(PODS, pod("a", None), &actor, 0).unwrap_err(), StoreError::AlreadyExists);
        store.update(PODS, pod("a", None), Some(2), &actor, 0).unwrap();
        assert_eq!(store.update(PODS, pod("a", None), Some(2), &actor, 0).unwrap_err(), StoreError::Conflict);
        assert_eq!(store.delete(PODS, "default", "zzz", None, &actor, 0).unwrap_err(), StoreError::NotFound);
    }

    #[test]
    fn node_index_follows_binding_and_deletion() {
        let mut store = Store::default();
        let actor: Arc<str> = "test".into();
        store.create(PODS, pod("a", None), &actor, 0).unwrap();
        assert_eq!(store.pods_on_node("n1").count(), 0);
        store.update(PODS, pod("a", Some("n1")), None, &actor, 0).unwrap();
        assert_eq!(store.pods_on_node("n1").count(), 1);
        store.delete(PODS, "default", "a", None, &actor, 0).unwrap();
        assert_eq!(store.pods_on_node("n1").count(), 0);
    }

    #[test]
    fn watches_from_compacted_revisions_are_gone() {
        let mut store = Store::new(2);
        let actor: Arc<str> = "test".into();
        for name in ["a", "b", "c"] {
            store.create(PODS, pod(name, None), &actor, 0).unwrap();
        }
        assert!(store.commits_since(1).is_err());
        assert_eq!(store.commits_since(3).unwrap().count(), 1);
        store.compact(4);
        assert_eq!(store.commits_since(3).err(), Some(Gone { oldest_available: 4 }));
    }

    #[test]
    fn label_selected_lists_use_the_index_and_agree_with_a_scan() {
        let mut store = Store::default();
        let actor: Arc<str> = "test".into();
        for i in 0..20 {
            let mut p = pod(&format!("p{i}"), None);
            let mut labels = std::collections::BTreeMap::new();
            labels.insert("app".to_string(), format!("a{}", i % 3));
            labels.insert("tier".to_string(), if i % 2 == 0 { "web" } else { "db" }.to_string());
            p.metadata_mut().labels = Some(labels);
            store.create(PODS, p, &actor, 0).unwrap();
        }
        for text in ["app=a1", "app=a1,tier=web", "tier!=web", "app in (a0,a2)", "!app", ""] {
            let selector = Selector::parse(text).unwrap();
            let indexed: Vec<String> = store.list_selected(PODS, Some("default"), &selector).iter().map(|o| o.name().to_string()).collect();
            let scanned: Vec<String> =
                store.list(PODS, Some("default")).filter(|o| selector.matches(o.metadata().labels.as_ref())).map(|o| o.name().to_string()).collect();
            assert_eq!(indexed, scanned, "{text}");
        }
        // Relabelling moves the object between index entries.
        let mut p = (**store.get(PODS, "default", "p1").unwrap()).clone();
        p.metadata_mut().labels.as_mut().unwrap().insert("app".into(), "zz".into());
        store.update(PODS, p, None, &actor, 0).unwrap();
        assert_eq!(store.list_selected(PODS, None, &Selector::parse("app=zz").unwrap()).len(), 1);
        assert_eq!(store.list_selected(PODS, None, &Selector::parse("app=a1").unwrap()).len(), 6);
    }

    #[test]
    fn list_by_namespace_stays_within_it() {
        let mut store = Store::default();
        let actor: Arc<str> = "test".into();
        store.create(PODS, pod("a", None), &actor, 0).unwrap();
        let mut other = pod("b", None);
        other.metadata_mut().namespace = Some("kube-system".into());
        store.create(PODS, other, &actor, 0).unwrap();
        assert_eq!(store.list(PODS, Some("default")).count(), 1);
        assert_eq!(store.list(PODS, None).count(), 2);
    }

    // ByNamespace answers as a map by (namespace, name): key order across namespaces (a
    // namespace that is a prefix of another sorts first), replacement, counts, removal.
    #[test]
    fn by_namespace_is_a_map_by_namespace_and_name() {
        let mut map = ByNamespace::default();
        for (ns, name) in [("b", "x"), ("ab", "y"), ("a", "z"), ("", "n"), ("a", "b")] {
            assert_eq!(map.insert(ns, name, format!("{ns}/{name}")), None);
        }
        assert_eq!(map.insert("a", "z", "a/z2".to_string()), Some("a/z".to_string()));
        assert_eq!(map.values().cloned().collect::<Vec<_>>(), ["/n", "a/b", "a/z2", "ab/y", "b/x"]);
        assert_eq!(map.in_namespace("a").cloned().collect::<Vec<_>>(), ["a/b", "a/z2"]);
        assert_eq!((map.len(), map.get("ab", "y").cloned(), map.get("a", "y")), (5, Some("ab/y".to_string()), None));
        *map.get_mut("b", "x").unwrap() = "b/x2".into();
        assert_eq!(map.remove("b", "x"), Some("b/x2".to_string()));
        assert_eq!(map.remove("b", "x"), None);
        assert_eq!((map.len(), map.in_namespace("b").count(), map.is_empty()), (4, 0, false));
    }

    /// `--event-ttl`: an Event lives an hour after its last write (an update renews the
    /// lease), then etcd deletes it and watchers see DELETED; other kinds carry no lease.
    #[test]
    fn events_expire_an_hour_after_their_last_write() {
        use kubesim_api::k8s_openapi::api::core::v1::Event;
        const EVENTS: Resource = ("", "events");
        let event = |message: &str| {
            Object::Event(Box::new(Event {
                metadata: ObjectMeta { name: Some("web.1".into()), namespace: Some("default".into()), ..Default::default() },
                message: Some(message.into()),
                ..Default::default()
            }))
        };
        let actor: Arc<str> = "kubelet".into();
        let etcd: Arc<str> = "etcd".into();
        let mut store = Store::new(100);
        store.create(EVENTS, event("Pulling"), &actor, 0).unwrap();
        store.create(PODS, pod("web", None), &actor, 0).unwrap();
        assert_eq!(store.next_expiry(), Some(EVENT_TTL_MS));
        store.update(EVENTS, event("Pulling (x2)"), None, &actor, 30 * 60_000).unwrap();
        assert_eq!(store.next_expiry(), Some(30 * 60_000 + EVENT_TTL_MS), "an update renews the lease");
        store.drain_commits();
        assert_eq!(store.expire(EVENT_TTL_MS, &etcd), 0);
        assert_eq!(store.expire(30 * 60_000 + EVENT_TTL_MS, &etcd), 1);
        let commits = store.drain_commits();
        assert_eq!(commits.len(), 1);
        assert_eq!((commits[0].event_type, commits[0].resource, &*commits[0].actor), (EventType::Deleted, EVENTS, "etcd"));
        assert!(store.get(EVENTS, "default", "web.1").is_none());
        assert!(store.get(PODS, "default", "web").is_some(), "pods carry no lease");
        assert_eq!(store.next_expiry(), None);
        // A deleted Event's lease goes with it.
        store.create(EVENTS, event("Pulled"), &actor, 0).unwrap();
        store.delete(EVENTS, "default", "web.1", None, &actor, 1).unwrap();
        assert_eq!(store.next_expiry(), None);
    }

    #[test]
    fn leases_run_out_in_time_then_resource_and_key_order() {
        use kubesim_api::k8s_openapi::api::core::v1::Event;
        const EVENTS: Resource = ("", "events");
        const NEW_EVENTS: Resource = ("events.k8s.io", "events");
        let event = |namespace: &str, name: &str| {
            Object::Event(Box::new(Event {
                metadata: ObjectMeta { name: Some(name.into()), namespace: Some(namespace.into()), ..Default::default() },
                ..Default::default()
            }))
        };
        let actor: Arc<str> = "kubelet".into();
        let etcd: Arc<str> = "etcd".into();
        let mut store = Store::new(100);
        // Written at the same millisecond in an order unlike the key order.
        for (namespace, name) in [("b", "z"), ("a", "y"), ("b", "a"), ("a", "x")] {
            store.create(EVENTS, event(namespace, name), &actor, 5).unwrap();
        }
        // A lease renewed in the middle of the queue, and one of a key deleted and created
        // again: each key keeps only its last lease.
        store.update(EVENTS, event("a", "y"), None, &actor, 7).unwrap();
        store.delete(EVENTS, "b", "a", None, &actor, 8).unwrap();
        store.create(EVENTS, event("b", "a"), &actor, 9).unwrap();
        store.create(NEW_EVENTS, event("a", "a"), &actor, 9).unwrap();
        store.drain_commits();
        assert_eq!(store.next_expiry(), Some(5 + EVENT_TTL_MS));
        assert_eq!(store.expire(9 + EVENT_TTL_MS, &etcd), 5);
        let deleted: Vec<(Resource, String)> =
            store.drain_commits().iter().map(|c| (c.resource, format!("{}/{}", c.object.namespace(), c.object.name()))).collect();
        let expected: Vec<(Resource, String)> =
            [(EVENTS, "a/x"), (EVENTS, "b/z"), (EVENTS, "a/y"), (EVENTS, "b/a"), (NEW_EVENTS, "a/a")].into_iter().map(|(r, k)| (r, k.to_string())).collect();
        assert_eq!(deleted, expected, "by expiry time, then resource, namespace and name");
        assert_eq!(store.next_expiry(), None);
        assert!(store.expiries.is_empty(), "stale leases are dropped");
    }

    #[test]
    fn events_are_kept_packed_and_read_back_as_written_in_each_clone_of_the_store() {
        use kubesim_api::k8s_openapi::api::core::v1::{Event, ObjectReference};
        const EVENTS: Resource = ("", "events");
        let event = |count: i32| {
            Object::Event(Box::new(Event {
                metadata: ObjectMeta { name: Some("web-1.18c2f3a4b5c6d7e8".into()), namespace: Some("default".into()), ..Default::default() },
                involved_object: ObjectReference { kind: Some("Pod".into()), name: Some("web-1".into()), ..Default::default() },
                reason: Some("Started".into()),
                message: Some("Started container web".into()),
                count: Some(count),
                first_timestamp: Some(kubesim_api::time::time_at(1_000)),
                event_time: Some(kubesim_api::time::micro_time_at(1_234)),
                ..Default::default()
            }))
        };
        let actor: Arc<str> = "kubelet".into();
        let etcd: Arc<str> = "etcd".into();
        let mut store = Store::new(100);
        let written = store.create(EVENTS, event(1), &actor, 5).unwrap();
        let slot = store.objects[&EVENTS].get("default", "web-1.18c2f3a4b5c6d7e8").unwrap();
        assert!(matches!(slot, Slot::Packed(p) if p.decoded.get().is_none()), "kept packed, not decoded until read");
        let read = store.get(EVENTS, "default", "web-1.18c2f3a4b5c6d7e8").unwrap().clone();
        assert_eq!(*read, *written, "read back as written (the MicroTime's milliseconds too)");
        assert!(Arc::ptr_eq(&read, store.get(EVENTS, "default", "web-1.18c2f3a4b5c6d7e8").unwrap()), "decoded once");
        assert_eq!(store.list(EVENTS, Some("default")).count(), 1);
        // A clone shares the packed version; each store renews and expires its own.
        let mut fork = store.clone();
        store.update(EVENTS, event(2), None, &actor, 60_000).unwrap();
        assert_eq!(fork.expire(5 + EVENT_TTL_MS, &etcd), 1, "the fork's version ran out");
        assert_eq!(store.expire(5 + EVENT_TTL_MS, &etcd), 0, "the renewed version did not");
        let kept = store.get(EVENTS, "default", "web-1.18c2f3a4b5c6d7e8").and_then(|o| match o.as_ref() {
            Object::Event(e) => e.count,
            _ => None,
        });
        assert_eq!(kept, Some(2));
        assert_eq!(store.expire(60_000 + EVENT_TTL_MS, &etcd), 1);
        assert_eq!(store.count(EVENTS), 0);
    }
}
