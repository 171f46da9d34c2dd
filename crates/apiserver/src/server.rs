//! The API server: the only way anything writes to the store. Create runs defaulting,
//! admission and validation; update enforces optimistic concurrency and immutability; the
//! status and binding subresources write only what they own; delete honours grace periods and
//! finalizers.

use crate::admission;
use crate::allocator::{ipv4_string, parse_ipv4, PortRange, ServiceCidr};
use crate::error::{ApiError, Result};
use crate::SimRng;
use kubesim_api::defaults::apply_defaults;
use kubesim_api::k8s_openapi::api::core::v1::{Node, Pod, PodCondition};
use kubesim_api::object::{kind_info, KindInfo, Object, Scope};
use kubesim_api::time::time_at;
use kubesim_api::validation::{invalid_message, validate_create};
use kubesim_api::Millis;
use kubesim_store::{resource_of, Resource, Store, StoreError};
use rand_core::RngCore;
use std::sync::Arc;

/// Who is calling, when, and with which randomness (the world's one RNG).
pub struct Request<'a> {
    /// Virtual now.
    pub now: Millis,
    /// The world's RNG (uids, generated names).
    pub rng: &'a mut SimRng,
    /// Who writes (recorded in the trace).
    pub actor: &'a Arc<str>,
}

/// How dependents are treated when their owner is deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Owner removed now; the garbage collector deletes dependents afterwards.
    Background,
    /// Owner kept (finalizer `foregroundDeletion`) until blocking dependents are gone.
    Foreground,
    /// Owner removed after its dependents' ownerReferences are stripped (finalizer `orphan`).
    Orphan,
}

/// DeleteOptions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// gracePeriodSeconds, if given.
    pub grace_period_seconds: Option<i64>,
    /// propagationPolicy, if given (else the kind's default).
    pub propagation: Option<Propagation>,
    /// Expected resourceVersion (precondition).
    pub resource_version: Option<u64>,
}

/// The API server over the store.
#[derive(Clone, Debug, Default)]
pub struct ApiServer {
    store: Store,
    /// The event recorders' aggregation caches ([`EventCaches`]): key hash → event, so
    /// repeats are found without scanning every event of a namespace.
    event_index: EventCaches,
    /// `--service-cluster-ip-range`: the default ServiceCIDR's range, served from when no
    /// ServiceCIDR object exists (the ClusterIP allocator's state is the ServiceCIDR and
    /// IPAddress objects in the store).
    service_cidr: ServiceCidrConfig,
    /// The NodePort allocator (`--service-node-port-range`).
    node_ports: PortRange,
    /// kubesim's own cap on how much a world may hold (the browser sets one, so a runaway
    /// workload degrades with refusals instead of freezing the tab); none natively.
    limits: Option<WorldLimits>,
    /// How many creates the limits refused.
    limit_refusals: u64,
    /// The `api-conflicts` fault: the percentage of conditional updates refused with 409
    /// Conflict as if another writer had updated the object first (0: none).
    conflict_percent: u8,
}

/// How many entries an event recorder's aggregation cache keeps (client-go's EventCorrelator:
/// `maxLruCacheEntries`).
pub const EVENT_CACHE_ENTRIES: usize = 4096;

/// The event recorders' aggregation caches: one LRU cache of [`EVENT_CACHE_ENTRIES`] entries per
/// recorder (event source: component and host), as every kube-controller-manager controller,
/// the scheduler and each kubelet has its own broadcaster and EventCorrelator. An entry whose
/// Event is gone (expired after its TTL, deleted) is dropped now and then: the recorder would
/// create a new Event for it anyway.
#[derive(Clone, Debug, Default)]
pub struct EventCaches {
    /// By recorder (`kubelet/node-1234`): hashed, looked up for every Event recorded (a search
    /// of 5,000 kubelets' names compared their common prefix at each step); walked only by
    /// the sweep, whose order does not matter.
    sources: std::collections::HashMap<String, EventLru, kubesim_api::hash::FixedState>,
    /// Entries over all sources.
    len: usize,
    /// Entries over all sources at which the next sweep of entries whose Event is gone runs.
    sweep_at: usize,
    /// The store's deletion count at the last sweep: with none since, no Event is gone and
    /// the sweep is skipped.
    deletions_at_sweep: u64,
}

/// One recorder's LRU cache: key → (namespace, name, last use), and last use → key.
#[derive(Clone, Debug, Default)]
struct EventLru {
    entries: std::collections::BTreeMap<u64, (String, String, u64)>,
    by_use: std::collections::BTreeMap<u64, u64>,
    clock: u64,
}

impl EventCaches {
    /// The name of the event the recorder of `source` recorded under `key`.
    pub fn get(&self, source: &str, key: u64) -> Option<&str> {
        self.sources.get(source)?.entries.get(&key).map(|(_, name, _)| name.as_str())
    }

    /// Records `namespace/name` under `key` for `source` as its most recently used entry,
    /// evicting the least recently used beyond [`EVENT_CACHE_ENTRIES`]; now and then drops
    /// the entries whose Event no longer exists (`exists`), unless nothing was deleted since
    /// the last time (`deletions`: the store's count of deletes, [`Store::deletions`]).
    pub fn remember(&mut self, source: &str, key: u64, namespace: &str, name: &str, deletions: u64, exists: impl Fn(&str, &str) -> bool) {
        if !self.sources.contains_key(source) {
            self.sources.insert(source.to_string(), EventLru::default());
        }
        let Some(lru) = self.sources.get_mut(source) else { return };
        lru.clock += 1;
        let clock = lru.clock;
        match lru.entries.get_mut(&key) {
            Some(entry) => {
                lru.by_use.remove(&entry.2);
                if entry.0 != namespace || entry.1 != name {
                    *entry = (namespace.to_string(), name.to_string(), clock);
                } else {
                    entry.2 = clock;
                }
            }
            None => {
                lru.entries.insert(key, (namespace.to_string(), name.to_string(), clock));
                self.len += 1;
            }
        }
        lru.by_use.insert(clock, key);
        while lru.entries.len() > EVENT_CACHE_ENTRIES {
            let Some((_, oldest)) = lru.by_use.pop_first() else { break };
            lru.entries.remove(&oldest);
            self.len -= 1;
        }
        if self.len > self.sweep_at {
            if deletions != self.deletions_at_sweep {
                self.deletions_at_sweep = deletions;
                self.sweep(exists);
            }
            self.sweep_at = self.len + (self.len / 2).max(EVENT_CACHE_ENTRIES);
        }
    }

    /// Drops the entries whose Event is gone.
    fn sweep(&mut self, exists: impl Fn(&str, &str) -> bool) {
        for lru in self.sources.values_mut() {
            let gone: Vec<(u64, u64)> = lru.entries.iter().filter(|(_, (ns, name, _))| !exists(ns, name)).map(|(key, (_, _, used))| (*key, *used)).collect();
            for (key, used) in gone {
                lru.entries.remove(&key);
                lru.by_use.remove(&used);
            }
        }
        self.sources.retain(|_, lru| !lru.entries.is_empty());
        self.len = self.sources.values().map(|lru| lru.entries.len()).sum();
    }

    /// Entries over all recorders.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no recorder remembers anything.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// kubesim's cap on a world's size (not a Kubernetes feature): creates beyond it are refused
/// with 403 Forbidden naming the limit, as a quota would refuse them, so controllers record
/// FailedCreate events and go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorldLimits {
    /// Pods at most (terminating ones included).
    pub pods: usize,
    /// Objects at most, Events aside.
    pub objects: usize,
}

/// `--service-cluster-ip-range` (kubeadm's default serviceSubnet 10.96.0.0/12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceCidrConfig {
    /// The network address.
    pub network: u32,
    /// The prefix length.
    pub prefix: u8,
}

impl Default for ServiceCidrConfig {
    fn default() -> Self {
        ServiceCidrConfig { network: (10 << 24) | (96 << 16), prefix: 12 }
    }
}

impl ServiceCidrConfig {
    /// Parses `a.b.c.d/p` (IPv4).
    pub fn parse(text: &str) -> Option<ServiceCidrConfig> {
        let (ip, prefix) = text.split_once('/')?;
        let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 32)?;
        let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix as u32) };
        Some(ServiceCidrConfig { network: parse_ipv4(ip)? & mask, prefix })
    }

    /// `a.b.c.d/p`.
    pub fn text(&self) -> String {
        format!("{}/{}", ipv4_string(self.network), self.prefix)
    }
}

/// The name, labels and parent of the IPAddress object a ClusterIP is (ipallocator.go
/// createIPAddress).
const IPADDRESSES: Resource = ("networking.k8s.io", "ipaddresses");
const SERVICECIDRS: Resource = ("networking.k8s.io", "servicecidrs");
/// `ipaddress.kubernetes.io/managed-by` value of the ClusterIP allocator.
pub const IPALLOCATOR_MANAGER: &str = "ipallocator.k8s.io";

/// The outcome of a delete request.
#[derive(Clone, Debug, PartialEq)]
pub enum Deleted {
    /// The object is gone.
    Removed(Arc<Object>),
    /// The object is terminating (grace period or finalizers); here is its new state.
    Terminating(Arc<Object>),
}

fn info_of(object: &Object) -> Result<&'static KindInfo> {
    kind_info(object.api_version(), object.kind())
        .ok_or_else(|| ApiError::bad_request(format!("no matches for kind {:?} in version {:?}", object.kind(), object.api_version())))
}

fn store_error(err: StoreError, info: &KindInfo, name: &str) -> ApiError {
    match err {
        StoreError::AlreadyExists => ApiError::already_exists(&info.qualified_resource(), name),
        StoreError::NotFound => ApiError::not_found(&info.qualified_resource(), name),
        StoreError::Conflict => ApiError::conflict(&info.qualified_resource(), name),
    }
}

/// A v4 UUID from the world's RNG (as google/uuid's NewRandom formats it).
pub fn new_uid(rng: &mut SimRng) -> String {
    let mut bytes = [0u8; 16];
    rng.fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid().hyphenated().to_string()
}

/// The 5-character suffix of generateName (names.SimpleNameGenerator).
pub fn random_suffix(rng: &mut SimRng) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5).map(|_| ALPHABET[(rng.next_u64() % ALPHABET.len() as u64) as usize] as char).collect()
}

impl ApiServer {
    /// An API server over an empty store.
    pub fn new() -> ApiServer {
        ApiServer::default()
    }

    /// An API server over a given (empty) store.
    pub fn with_store(store: Store) -> ApiServer {
        ApiServer { store, ..Default::default() }
    }

    /// Read access to the store (components use informers; kubectl and the UI read directly).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The aggregation cache of the event recorder of `source`: the name of the event it
    /// recorded under `key`, if it still remembers it.
    pub fn event_name(&self, source: &str, key: u64) -> Option<&str> {
        self.event_index.get(source, key)
    }

    /// Remembers (or refreshes, as the most recently used entry) the event `namespace/name` the
    /// recorder of `source` recorded under `key` ([`EventCaches::remember`]).
    pub fn remember_event(&mut self, source: &str, key: u64, namespace: &str, name: &str) {
        let store = &self.store;
        self.event_index.remember(source, key, namespace, name, store.deletions(), |ns, n| store.contains(("", "events"), ns, n));
    }

    /// Mutable store access for the world (draining commits, compaction).
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// GET.
    pub fn get(&self, info: &KindInfo, namespace: &str, name: &str) -> Result<Arc<Object>> {
        self.store.get(resource_of(info), namespace, name).cloned().ok_or_else(|| ApiError::not_found(&info.qualified_resource(), name))
    }

    /// GET by resource tuple, None if absent.
    pub fn lookup(&self, resource: Resource, namespace: &str, name: &str) -> Option<&Arc<Object>> {
        self.store.get(resource, namespace, name)
    }

    /// LIST with label and field selectors, through the store's indexes where they apply
    /// (pods by spec.nodeName, equality label requirements). Returns the objects in key order
    /// and the list's resourceVersion.
    pub fn list(
        &self,
        info: &KindInfo,
        namespace: Option<&str>,
        labels: Option<&kubesim_api::selector::Selector>,
        fields: Option<&kubesim_api::selector::FieldSelector>,
    ) -> Result<(Vec<Arc<Object>>, u64)> {
        let resource = resource_of(info);
        let namespace = namespace.filter(|n| !n.is_empty() && info.scope == Scope::Namespaced);
        let mut items: Vec<Arc<Object>> = match (fields.and_then(|f| f.node_name()), resource) {
            (Some(node), ("", "pods")) => self.store.pods_on_node(node).filter(|o| namespace.is_none_or(|ns| o.namespace() == ns)).cloned().collect(),
            _ => match labels {
                Some(selector) => self.store.list_selected(resource, namespace, selector),
                None => self.store.list(resource, namespace).cloned().collect(),
            },
        };
        if let Some(selector) = labels {
            items.retain(|o| selector.matches(o.metadata().labels.as_ref()));
        }
        if let Some(fields) = fields {
            let mut kept = Vec::with_capacity(items.len());
            for item in items {
                if fields.matches(&item).map_err(ApiError::bad_request)? {
                    kept.push(item);
                }
            }
            items = kept;
        }
        Ok((items, self.store.revision()))
    }

    /// WATCH from a resourceVersion: the changes to one resource since then, or 410 Gone
    /// ("too old resource version") once compaction has passed it — the client must relist.
    pub fn watch_since(&self, info: &KindInfo, since: u64) -> Result<Vec<(kubesim_store::EventType, Arc<Object>, u64)>> {
        let resource = resource_of(info);
        match self.store.commits_since(since) {
            Ok(commits) => Ok(commits.filter(|c| c.resource == resource).map(|c| (c.event_type, c.object.clone(), c.revision)).collect()),
            Err(gone) => Err(ApiError { code: 410, reason: "Expired", message: format!("too old resource version: {since} ({})", gone.oldest_available) }),
        }
    }

    /// POST: defaulting, admission, validation, then create.
    pub fn create(&mut self, mut object: Object, req: &mut Request) -> Result<Arc<Object>> {
        let info = info_of(&object)?;
        if object.resource_version() != "" {
            return Err(ApiError::bad_request("resourceVersion should not be set on objects to be created".into()));
        }
        let namespace = match info.scope {
            Scope::Namespaced => {
                let ns = object.namespace().to_string();
                if ns.is_empty() {
                    return Err(ApiError::bad_request("the namespace of the provided object does not match the namespace sent on the request".into()));
                }
                ns
            }
            Scope::Cluster => {
                object.metadata_mut().namespace = None;
                String::new()
            }
        };
        if info.scope == Scope::Namespaced {
            match self.store.get(("", "namespaces"), "", &namespace) {
                None => return Err(ApiError::not_found("namespaces", &namespace)),
                Some(ns) if ns.metadata().deletion_timestamp.is_some() => {
                    return Err(ApiError::forbidden(
                        &info.qualified_resource(),
                        object.name(),
                        &format!("unable to create new content in namespace {namespace} because it is being terminated"),
                    ));
                }
                Some(_) => {}
            }
        }
        // generateName
        if object.name().is_empty() {
            if let Some(base) = object.metadata().generate_name.clone().filter(|g| !g.is_empty()) {
                let base: String = base.chars().take(58).collect();
                let mut attempts = 0;
                loop {
                    let candidate = format!("{base}{}", random_suffix(req.rng));
                    attempts += 1;
                    if self.store.get(resource_of(info), &namespace, &candidate).is_none() || attempts >= 8 {
                        object.metadata_mut().name = Some(candidate);
                        break;
                    }
                }
            }
        }
        self.check_limits(info, &object)?;
        reset_status_on_create(&mut object);
        apply_defaults(&mut object);
        admission::admit_create(&mut object, &self.store, req)?;
        let service_allocations = self.allocate_service(&mut object, req)?;
        // BeforeCreate: the uid (FillObjectMetaSystemFields), then the strategy's
        // PrepareForCreate (a Job's generated selector), then validation.
        let uid = new_uid(req.rng);
        object.metadata_mut().uid = Some(uid.clone());
        kubesim_api::defaults::prepare_job_for_create(&mut object);
        let mut errors = validate_create(&object);
        errors.extend(kubesim_api::validation::validate_create_only(&object));
        if !errors.is_empty() {
            self.release_node_ports(&service_allocations.1);
            // Invalid errors name the qualified kind (`Deployment.apps`), as errors.NewInvalid does.
            let qualified_kind = match info.group() {
                "" => object.kind().to_string(),
                group => format!("{}.{group}", object.kind()),
            };
            return Err(ApiError::invalid(invalid_message(&qualified_kind, object.name(), &errors)));
        }
        default_storage_class(&mut object, &self.store);
        let meta = object.metadata_mut();
        meta.uid = Some(uid);
        meta.creation_timestamp = Some(time_at(req.now));
        meta.deletion_timestamp = None;
        meta.deletion_grace_period_seconds = None;
        if tracks_generation(info) {
            meta.generation = Some(1);
        }
        // ResourceQuota runs last in the admission chain; it reserves usage in quota status.
        let quota_updates = match crate::quota::check_quota(&object, &self.store) {
            Ok(updates) => updates,
            Err(e) => {
                self.release_node_ports(&service_allocations.1);
                return Err(e);
            }
        };
        let name = object.name().to_string();
        // The ClusterIP's IPAddress object is written before the Service (ipallocator).
        if let Some(ip) = &service_allocations.0 {
            if let Err(e) = self.create_ip_address(ip, &object, req) {
                self.release_node_ports(&service_allocations.1);
                return Err(e);
            }
        }
        // The namespace for the error path: the object itself moves into the store.
        let namespace = service_allocations.0.as_ref().map(|_| object.namespace().to_string());
        let created = match self.store.create(resource_of(info), object, req.actor, req.now) {
            Ok(created) => created,
            Err(e) => {
                if let (Some(ip), Some(namespace)) = (&service_allocations.0, &namespace) {
                    self.release_ip(ip, (namespace, &name), req);
                }
                self.release_node_ports(&service_allocations.1);
                return Err(store_error(e, info, &name));
            }
        };
        for (quota_name, used) in quota_updates {
            self.set_quota_status(created.namespace(), &quota_name, used, req);
        }
        Ok(created)
    }

    /// The Service REST's allocators (registry/core/service/storage/alloc.go): a ClusterIP
    /// from the ServiceCIDRs (ipallocator's MetaAllocator) and NodePorts (portallocator), as
    /// the registry does on create. Returns what was allocated: the ClusterIP, whose IPAddress
    /// object [`Self::create_ip_address`] writes once the Service passed every check, and the
    /// node ports, to release if the create fails.
    fn allocate_service(&mut self, object: &mut Object, req: &mut Request) -> Result<(Option<String>, Vec<i32>)> {
        let Object::Service(svc) = object else { return Ok((None, Vec::new())) };
        let name = svc.metadata.name.clone().unwrap_or_default();
        let spec = svc.spec.get_or_insert_with(Default::default);
        let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
        let mut ip = None;
        if type_ != "ExternalName" {
            let allocated = match spec.cluster_ip.as_deref().filter(|ip| !ip.is_empty()) {
                Some("None") => None,
                Some(given) => {
                    // AllocateService: the ServiceCIDR containing the address, then its IPAddress.
                    let given = given.to_string();
                    let error = match self.service_cidrs().iter().find_map(|c| c.index_of(&given)) {
                        None => Some("the provided network does not match the current range"),
                        Some(_) if self.store.get(IPADDRESSES, "", &given).is_some() => Some("provided IP is already allocated"),
                        Some(_) => None,
                    };
                    if let Some(why) = error {
                        return Err(ApiError::invalid(format!(
                            "Service {name:?} is invalid: spec.clusterIPs: Invalid value: []string{{{given:?}}}: failed to allocate IP {given}: {why}"
                        )));
                    }
                    Some(given)
                }
                None => {
                    // AllocateNextService: the first ServiceCIDR with room, a random start in
                    // its upper band, then its static band.
                    let mut found = None;
                    for cidr in self.service_cidrs() {
                        let store = &self.store;
                        let taken = |i: u64| store.get(IPADDRESSES, "", &cidr.ip_at(i)).is_some();
                        let rng = &mut *req.rng;
                        if let Ok(i) = cidr.range().scan_next(&taken, &mut |n| rng.next_u64() % n) {
                            found = Some(cidr.ip_at(i));
                            break;
                        }
                    }
                    let Some(found) = found else {
                        return Err(ApiError {
                            code: 500,
                            reason: "InternalError",
                            message: "Internal error occurred: failed to allocate a serviceIP: range is full".into(),
                        });
                    };
                    Some(found)
                }
            };
            let text = allocated.clone().unwrap_or_else(|| "None".into());
            spec.cluster_ip = Some(text.clone());
            spec.cluster_ips = Some(vec![text]);
            spec.ip_families.get_or_insert_with(|| vec!["IPv4".into()]);
            spec.ip_family_policy.get_or_insert_with(|| "SingleStack".into());
            ip = allocated;
        }
        let mut ports = Vec::new();
        // initNodePorts (registry/core/service/storage/alloc.go): ports with the same port
        // number (53/UDP and 53/TCP) share one nodePort; a requested nodePort is honoured, else
        // the allocator picks one (random in the dynamic band first, then the static band).
        let allocate = type_ == "NodePort" || (type_ == "LoadBalancer" && spec.allocate_load_balancer_node_ports != Some(false));
        if type_ == "NodePort" || type_ == "LoadBalancer" {
            let requested: Vec<(i32, Option<i32>)> = spec.ports.iter().flatten().map(|p| (p.port, p.node_port.filter(|n| *n != 0))).collect();
            let mut by_port: std::collections::BTreeMap<i32, i32> = std::collections::BTreeMap::new();
            for (i, port) in spec.ports.iter_mut().flatten().enumerate() {
                let wanted = port.node_port.filter(|n| *n != 0);
                if wanted.is_none() && !allocate {
                    continue;
                }
                let invalid =
                    |np: i32, why: String| ApiError::invalid(format!("Service {name:?} is invalid: spec.ports[{i}].nodePort: Invalid value: {np}: {why}"));
                match by_port.get(&port.port).copied() {
                    None => {
                        // findRequestedNodePort: the first nodePort asked for this port number.
                        let asked = requested.iter().find(|(p, n)| *p == port.port && n.is_some()).and_then(|(_, n)| *n);
                        let node_port = match asked {
                            Some(np) => {
                                if let Err(e) = self.node_ports.allocate(np) {
                                    let why = self.node_ports.error_text(e);
                                    self.release_node_ports(&ports);
                                    return Err(invalid(np, why));
                                }
                                np
                            }
                            None => match self.allocate_next_node_port(req) {
                                Some(np) => np,
                                None => {
                                    self.release_node_ports(&ports);
                                    return Err(node_ports_full());
                                }
                            },
                        };
                        ports.push(node_port);
                        port.node_port = Some(node_port);
                        by_port.insert(port.port, node_port);
                    }
                    Some(shared) if wanted != Some(shared) => match wanted {
                        None => port.node_port = Some(shared),
                        Some(np) => {
                            if let Err(e) = self.node_ports.allocate(np) {
                                let why = self.node_ports.error_text(e);
                                self.release_node_ports(&ports);
                                return Err(invalid(np, why));
                            }
                            ports.push(np);
                        }
                    },
                    Some(_) => {}
                }
            }
        }
        if kubesim_api::validation::needs_health_check(spec) {
            match self.allocate_health_check_node_port(spec, req) {
                Ok(np) => ports.push(np),
                Err(e) => {
                    self.release_node_ports(&ports);
                    return Err(e);
                }
            }
        }
        Ok((ip, ports))
    }

    /// allocHealthCheckNodePort (registry/core/service/storage/alloc.go): the requested
    /// health-check node port, or the allocator's next; its failure is an internal error, as
    /// upstream wraps it.
    fn allocate_health_check_node_port(&mut self, spec: &mut k8s_openapi::api::core::v1::ServiceSpec, req: &mut Request) -> Result<i32> {
        match spec.health_check_node_port.filter(|n| *n != 0) {
            Some(np) => match self.node_ports.allocate(np) {
                Ok(()) => Ok(np),
                Err(e) => Err(ApiError::internal(format!("failed to allocate requested HealthCheck NodePort {np}: {}", self.node_ports.error_text(e)))),
            },
            None => match self.allocate_next_node_port(req) {
                Some(np) => {
                    spec.health_check_node_port = Some(np);
                    Ok(np)
                }
                None => Err(ApiError::internal("failed to allocate a HealthCheck NodePort 0: range is full")),
            },
        }
    }

    /// The ClusterIP ranges allocation serves from: the ServiceCIDR objects that are ready and
    /// not being deleted, the default `kubernetes` one first, then by creation (Go iterates
    /// its allocators' map); without any, `--service-cluster-ip-range`.
    fn service_cidrs(&self) -> Vec<ServiceCidr> {
        let mut cidrs: Vec<(bool, u64, ServiceCidr)> = Vec::new();
        for object in self.store.list(SERVICECIDRS, None) {
            let meta = object.metadata();
            let json = object.to_json();
            // isReady: a Ready condition that is not True makes it not ready; none at all is ready.
            let ready = json
                .pointer("/status/conditions")
                .and_then(|c| c.as_array())
                .and_then(|c| c.iter().find(|c| c.get("type").and_then(|t| t.as_str()) == Some("Ready")))
                .is_none_or(|c| c.get("status").and_then(|s| s.as_str()) == Some("True"));
            if !ready || meta.deletion_timestamp.is_some() {
                continue;
            }
            let first = meta.name.as_deref() != Some("kubernetes");
            let created = meta.creation_timestamp.as_ref().map(kubesim_api::time::millis_of).unwrap_or(0);
            for cidr in json.pointer("/spec/cidrs").and_then(|c| c.as_array()).into_iter().flatten().filter_map(|c| c.as_str()) {
                if let Some(config) = ServiceCidrConfig::parse(cidr) {
                    cidrs.push((first, created, ServiceCidr::new(config.network, config.prefix)));
                }
            }
        }
        if cidrs.is_empty() {
            return vec![ServiceCidr::new(self.service_cidr.network, self.service_cidr.prefix)];
        }
        kubesim_api::sort::sort_by(&mut cidrs, |a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        cidrs.into_iter().map(|(_, _, c)| c).collect()
    }

    /// `--service-cluster-ip-range`.
    pub fn service_cidr(&self) -> ServiceCidrConfig {
        self.service_cidr
    }

    /// The `api-conflicts` fault: refuse this percentage of conditional updates (and status
    /// updates) with 409 Conflict, as a concurrent writer would make them fail; 0 ends it.
    pub fn set_conflict_percent(&mut self, percent: u8) {
        self.conflict_percent = percent.min(100);
    }

    /// The `api-conflicts` fault's share of conditional updates refused.
    pub fn conflict_percent(&self) -> u8 {
        self.conflict_percent
    }

    /// Whether the `api-conflicts` fault refuses this conditional update (one draw of the
    /// world's RNG while the fault is on, none otherwise).
    fn injected_conflict(&mut self, req: &mut Request) -> bool {
        self.conflict_percent > 0 && req.rng.next_u64() % 100 < u64::from(self.conflict_percent)
    }

    /// Sets the world's size cap (the browser app sets one).
    pub fn set_limits(&mut self, limits: Option<WorldLimits>) {
        self.limits = limits;
    }

    /// The world's size cap, if any.
    pub fn limits(&self) -> Option<WorldLimits> {
        self.limits
    }

    /// How many creates the size cap refused so far.
    pub fn limit_refusals(&self) -> u64 {
        self.limit_refusals
    }

    /// Refuses a create the size cap does not allow.
    fn check_limits(&mut self, info: &KindInfo, object: &Object) -> Result<()> {
        let Some(limits) = self.limits else { return Ok(()) };
        let resource = resource_of(info);
        let why = if resource == ("", "pods") && self.store.count(resource) >= limits.pods {
            format!("this kubesim world holds its limit of {} pods (a cap of the browser app, so a runaway workload cannot freeze the tab; `kubesim run` natively has none)", limits.pods)
        } else if resource != ("", "events")
            && self.store.resources().filter(|r| *r != ("", "events")).map(|r| self.store.count(r)).sum::<usize>() >= limits.objects
        {
            format!("this kubesim world holds its limit of {} objects (a cap of the browser app; `kubesim run` natively has none)", limits.objects)
        } else {
            return Ok(());
        };
        self.limit_refusals += 1;
        Err(ApiError::forbidden(&info.qualified_resource(), object.name(), &why))
    }

    /// Sets `--service-cluster-ip-range` (before the `kubernetes` ServiceCIDR exists).
    pub fn set_service_cidr(&mut self, cidr: ServiceCidrConfig) {
        self.service_cidr = cidr;
    }

    /// The IPAddress object of a Service's ClusterIP (ipallocator createIPAddress), written by
    /// the API server itself.
    fn create_ip_address(&mut self, ip: &str, service: &Object, req: &mut Request) -> Result<()> {
        let info = kind_info("networking.k8s.io/v1", "IPAddress").expect("served");
        let json = serde_json::json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IPAddress",
            "metadata": {
                "name": ip,
                "uid": new_uid(req.rng),
                "creationTimestamp": time_at(req.now),
                "labels": {
                    "ipaddress.kubernetes.io/ip-family": "IPv4",
                    "ipaddress.kubernetes.io/managed-by": IPALLOCATOR_MANAGER,
                },
            },
            "spec": { "parentRef": { "group": "", "resource": "services", "namespace": service.namespace(), "name": service.name() } },
        });
        let object = Object::from_json(info, json).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let actor: Arc<str> = Arc::from(API_SERVER_ACTOR);
        self.store
            .create(IPADDRESSES, object, &actor, req.now)
            .map_err(|_| ApiError::invalid(format!("failed to allocate IP {ip}: provided IP is already allocated")))?;
        Ok(())
    }

    /// Releases a ClusterIP: its IPAddress object goes (if it is this Service's).
    fn release_ip(&mut self, ip: &str, service: (&str, &str), req: &Request) {
        let Some(current) = self.store.get(IPADDRESSES, "", ip) else { return };
        let parent = current.to_json();
        let parent = parent.pointer("/spec/parentRef");
        let ns = parent.and_then(|p| p.get("namespace")).and_then(|v| v.as_str()).unwrap_or("");
        let name = parent.and_then(|p| p.get("name")).and_then(|v| v.as_str()).unwrap_or("");
        if (ns, name) == service {
            let actor: Arc<str> = Arc::from(API_SERVER_ACTOR);
            let _ = self.store.delete(IPADDRESSES, "", ip, None, &actor, req.now);
        }
    }

    /// Releases what a removed Service held: its ClusterIP and node ports.
    fn release_removed_service(&mut self, removed: &Object, req: &Request) {
        if let Object::Service(svc) = removed {
            let spec = svc.spec.clone().unwrap_or_default();
            if let Some(ip) = spec.cluster_ip.as_deref().filter(|ip| !ip.is_empty() && *ip != "None") {
                self.release_ip(ip, (removed.namespace(), removed.name()), req);
            }
            let ports: Vec<i32> = spec.ports.iter().flatten().filter_map(|p| p.node_port).chain(spec.health_check_node_port.filter(|n| *n != 0)).collect();
            self.release_node_ports(&ports);
        }
    }

    /// portallocator `AllocateNext`: random in the dynamic band, scanning up, then the static band.
    fn allocate_next_node_port(&mut self, req: &mut Request) -> Option<i32> {
        let rng = &mut *req.rng;
        self.node_ports.allocate_next(&mut |n| rng.next_u64() % n).ok()
    }

    fn release_node_ports(&mut self, ports: &[i32]) {
        for port in ports {
            self.node_ports.release(*port);
        }
    }

    fn set_quota_status(&mut self, namespace: &str, name: &str, used: std::collections::BTreeMap<String, String>, req: &mut Request) {
        let Some(Object::Dynamic(quota)) = self.store.get(("", "resourcequotas"), namespace, name).map(|o| (**o).clone()) else { return };
        let mut quota = *quota;
        let hard = quota.rest.get("spec").and_then(|s| s.get("hard")).cloned().unwrap_or_default();
        quota.rest.insert("status".into(), serde_json::json!({ "hard": hard, "used": used }));
        let _ = self.store.update(("", "resourcequotas"), Object::Dynamic(Box::new(quota)), None, req.actor, req.now);
    }

    /// PUT: replaces the object (spec and metadata; status is carried over unchanged).
    /// A non-empty resourceVersion makes it conditional (409 on mismatch).
    pub fn update(&mut self, mut object: Object, req: &mut Request) -> Result<Arc<Object>> {
        let info = info_of(&object)?;
        let name = object.name().to_string();
        let current = self.get(info, object.namespace(), &name)?;
        let expected = parse_rv(object.resource_version())?;
        if let Some(expected) = expected {
            if current.resource_version() != expected.to_string() || self.injected_conflict(req) {
                return Err(ApiError::conflict(&info.qualified_resource(), &name));
            }
        }
        drop_type_dependent_fields(&mut object, &current);
        apply_defaults(&mut object);
        preserve_server_fields(&mut object, &current);
        carry_status(&mut object, &current);
        admission::validate_update(&object, &current, info)?;
        // The Service REST's BeginUpdate (node ports, the health-check node port) runs before
        // the strategy's validation, as genericregistry.Store.Update orders them.
        let (allocated, released) = self.update_node_ports(&mut object, &current, req)?;
        let mut errors = validate_create(&object);
        errors.extend(immutable_field_errors(&object, &current, info));
        if !errors.is_empty() {
            self.release_node_ports(&allocated);
            return Err(ApiError::invalid(invalid_message(&qualified_kind(info), object.name(), &errors)));
        }
        if let Err(e) = admission::validate_pvc_resize(&object, &current, &self.store) {
            self.release_node_ports(&allocated);
            return Err(e);
        }
        if tracks_generation(info) && spec_changed(&object, &current, info) {
            object.metadata_mut().generation = Some(current.metadata().generation.unwrap_or(1) + 1);
        }
        match self.finish_update(info, object, expected, req) {
            Ok(updated) => {
                self.release_node_ports(&released);
                Ok(updated)
            }
            Err(e) => {
                self.release_node_ports(&allocated);
                Err(e)
            }
        }
    }

    /// updateNodePorts (registry/core/service/storage/alloc.go): a Service that needs node
    /// ports (NodePort, or LoadBalancer allocating them) gets one for each port that has none,
    /// shared by ports with the same number; a requested new one is allocated; node ports the
    /// Service no longer uses are released once the update commits. Returns (allocated, to
    /// release).
    fn update_node_ports(&mut self, object: &mut Object, current: &Object, req: &mut Request) -> Result<(Vec<i32>, Vec<i32>)> {
        let (Object::Service(new), Object::Service(old)) = (&mut *object, current) else { return Ok((Vec::new(), Vec::new())) };
        let name = new.metadata.name.clone().unwrap_or_default();
        let old_ports: std::collections::BTreeSet<i32> = old.spec.iter().flat_map(|s| s.ports.iter().flatten()).filter_map(|p| p.node_port).collect();
        let spec = new.spec.get_or_insert_with(Default::default);
        let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
        let allocate = type_ == "NodePort" || (type_ == "LoadBalancer" && spec.allocate_load_balancer_node_ports != Some(false));
        let mut allocated = Vec::new();
        let mut by_port: std::collections::BTreeMap<i32, i32> = std::collections::BTreeMap::new();
        for port in spec.ports.iter().flatten() {
            if let Some(np) = port.node_port.filter(|n| *n != 0) {
                by_port.entry(port.port).or_insert(np);
            }
        }
        for (i, port) in spec.ports.iter_mut().flatten().enumerate() {
            match port.node_port.filter(|n| *n != 0) {
                Some(np) if old_ports.contains(&np) || allocated.contains(&np) => {}
                Some(np) => {
                    if let Err(e) = self.node_ports.allocate(np) {
                        let why = self.node_ports.error_text(e);
                        self.release_node_ports(&allocated);
                        return Err(ApiError::invalid(format!("Service {name:?} is invalid: spec.ports[{i}].nodePort: Invalid value: {np}: {why}")));
                    }
                    allocated.push(np);
                }
                None if allocate => {
                    let np = match by_port.get(&port.port) {
                        Some(shared) => *shared,
                        None => match self.allocate_next_node_port(req) {
                            Some(np) => {
                                allocated.push(np);
                                np
                            }
                            None => {
                                self.release_node_ports(&allocated);
                                return Err(node_ports_full());
                            }
                        },
                    };
                    by_port.insert(port.port, np);
                    port.node_port = Some(np);
                }
                None => {}
            }
        }
        let mut released: Vec<i32> = {
            let now_used: std::collections::BTreeSet<i32> = spec.ports.iter().flatten().filter_map(|p| p.node_port).collect();
            old_ports.difference(&now_used).copied().collect()
        };
        // updateHealthCheckNodePort: a Service that starts needing one gets one; one that
        // stops needing it frees it once the update commits.
        let old_spec = old.spec.clone().unwrap_or_default();
        let (needed, needs) = (kubesim_api::validation::needs_health_check(&old_spec), kubesim_api::validation::needs_health_check(spec));
        if !needed && needs {
            match self.allocate_health_check_node_port(spec, req) {
                Ok(np) => allocated.push(np),
                Err(e) => {
                    self.release_node_ports(&allocated);
                    return Err(e);
                }
            }
        } else if needed && !needs {
            released.extend(old_spec.health_check_node_port.filter(|n| *n != 0));
        }
        Ok((allocated, released))
    }

    /// PUT .../status: only the status changes; everything else is taken from the stored object.
    pub fn update_status(&mut self, object: Object, req: &mut Request) -> Result<Arc<Object>> {
        let info = info_of(&object)?;
        let name = object.name().to_string();
        let current = self.get(info, object.namespace(), &name)?;
        let expected = parse_rv(object.resource_version())?;
        if let Some(expected) = expected {
            if current.resource_version() != expected.to_string() || self.injected_conflict(req) {
                return Err(ApiError::conflict(&info.qualified_resource(), &name));
            }
        }
        // The Deployment and ReplicaSet status strategies keep the new object's metadata
        // (annotations) and only reset the spec (deploymentStatusStrategy.PrepareForUpdate).
        let keeps_metadata = matches!(info.kind, "Deployment" | "ReplicaSet");
        let metadata_same = !keeps_metadata || object.metadata().annotations == current.metadata().annotations;
        if metadata_same && Object::status_eq(&object, &current) {
            return Ok(current); // no-op updates do not commit (etcd would not see a change)
        }
        let annotations = keeps_metadata.then(|| object.metadata().annotations.clone());
        let mut merged = with_status_of(&current, object);
        if let Some(annotations) = annotations {
            merged.metadata_mut().annotations = annotations;
        }
        self.finish_update(info, merged, expected, req)
    }

    /// PUT/PATCH pods/ephemeralcontainers: the pod's `spec.ephemeralContainers` becomes
    /// `containers` (ValidatePodEphemeralContainersUpdate); nothing else changes.
    pub fn update_ephemeral_containers(
        &mut self,
        namespace: &str,
        name: &str,
        containers: Vec<kubesim_api::k8s_openapi::api::core::v1::EphemeralContainer>,
        req: &mut Request,
    ) -> Result<Arc<Object>> {
        let info = kind_info("v1", "Pod").expect("pods are served");
        let current = self.get(info, namespace, name)?;
        let mut pod: Pod = match current.as_ref() {
            Object::Pod(p) => (**p).clone(),
            _ => unreachable!("pods resource holds pods"),
        };
        if pod.metadata.annotations.as_ref().is_some_and(|a| a.contains_key("kubernetes.io/config.mirror")) {
            return Err(ApiError::invalid(format!("Pod {name:?} is invalid: : Forbidden: static pods do not support ephemeral containers")));
        }
        let old_spec = pod.spec.clone().unwrap_or_default();
        let spec = pod.spec.get_or_insert_with(Default::default);
        // Defaults as for any container (SetDefaults_EphemeralContainer).
        let mut containers = containers;
        for c in &mut containers {
            if c.image_pull_policy.is_none() {
                c.image_pull_policy = Some(kubesim_api::defaults::default_image_pull_policy(c.image.as_deref().unwrap_or("")).to_string());
            }
            c.termination_message_path.get_or_insert_with(|| "/dev/termination-log".into());
            c.termination_message_policy.get_or_insert_with(|| "File".into());
        }
        spec.ephemeral_containers = Some(containers);
        let errors = kubesim_api::validation::validate_ephemeral_containers_update(spec, &old_spec);
        if !errors.is_empty() {
            return Err(ApiError::invalid(invalid_message("Pod", name, &errors)));
        }
        if spec == &old_spec {
            return Ok(current);
        }
        let expected = parse_rv(current.resource_version())?;
        self.finish_update(info, Object::Pod(Box::new(pod)), expected, req)
    }

    /// POST pods/binding: assigns an unbound pod to a node and marks it PodScheduled.
    pub fn bind(&mut self, namespace: &str, name: &str, node: &str, req: &mut Request) -> Result<Arc<Object>> {
        let info = kind_info("v1", "Pod").expect("pods are served");
        let current = self.get(info, namespace, name)?;
        let mut pod: Pod = match current.as_ref() {
            Object::Pod(p) => (**p).clone(),
            _ => unreachable!("pods resource holds pods"),
        };
        if pod.metadata.deletion_timestamp.is_some() {
            return Err(ApiError::conflict_with("pods/binding", name, "pod is being deleted, cannot be assigned to a host"));
        }
        let spec = pod.spec.get_or_insert_with(Default::default);
        if let Some(existing) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
            return Err(ApiError::conflict_with("pods/binding", name, &format!("pod {name} is already assigned to node {existing:?}")));
        }
        spec.node_name = Some(node.to_string());
        let status = pod.status.get_or_insert_with(Default::default);
        set_pod_condition(
            status.conditions.get_or_insert_with(Vec::new),
            PodCondition { type_: "PodScheduled".into(), status: "True".into(), last_transition_time: Some(time_at(req.now)), ..Default::default() },
        );
        let expected = parse_rv(current.resource_version())?;
        self.finish_update(info, Object::Pod(Box::new(pod)), expected, req)
    }

    /// DELETE with options: graceful for pods, finalizers and propagation for everything.
    pub fn delete(&mut self, info: &KindInfo, namespace: &str, name: &str, options: DeleteOptions, req: &mut Request) -> Result<Deleted> {
        let current = self.get(info, namespace, name)?;
        if let Some(expected) = options.resource_version {
            if current.resource_version() != expected.to_string() {
                return Err(ApiError::conflict(&info.qualified_resource(), name));
            }
        }
        let mut object = (*current).clone();
        // A namespace with spec.finalizers goes Terminating; the namespace controller empties
        // it and finalizes it (pkg/registry/core/namespace/storage.go Delete).
        if let Object::Namespace(ns) = &mut object {
            let spec_finalizers = ns.spec.as_ref().and_then(|s| s.finalizers.as_ref()).is_some_and(|f| !f.is_empty());
            if spec_finalizers {
                if ns.metadata.deletion_timestamp.is_some() {
                    return Ok(Deleted::Terminating(current));
                }
                ns.metadata.deletion_timestamp = Some(time_at(req.now));
                ns.metadata.deletion_grace_period_seconds = Some(0);
                ns.status.get_or_insert_with(Default::default).phase = Some("Terminating".into());
                let updated = self.store.update(resource_of(info), object, None, req.actor, req.now).map_err(|e| store_error(e, info, name))?;
                return Ok(Deleted::Terminating(updated));
            }
        }
        let propagation = options.propagation.unwrap_or(if info.kind == "ReplicationController" { Propagation::Orphan } else { Propagation::Background });
        // Grace period: pods only (CheckGracefulDelete).
        let mut grace: i64 = 0;
        if let Object::Pod(pod) = &object {
            grace = options.grace_period_seconds.unwrap_or_else(|| pod.spec.as_ref().and_then(|s| s.termination_grace_period_seconds).unwrap_or(30));
            let unscheduled = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("").is_empty();
            let terminal = matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded") | Some("Failed"));
            if unscheduled || terminal {
                grace = 0;
            }
            if grace < 0 {
                grace = 1;
            }
        }
        let meta = object.metadata_mut();
        let mut finalizers = meta.finalizers.clone().unwrap_or_default();
        let already_deleting = meta.deletion_timestamp.is_some();
        match propagation {
            Propagation::Orphan if has_dependents_possible(info) => push_unique(&mut finalizers, "orphan"),
            Propagation::Foreground => push_unique(&mut finalizers, "foregroundDeletion"),
            _ => {}
        }
        if grace == 0 && finalizers.is_empty() {
            let resource = resource_of(info);
            let removed = self.store.delete(resource, namespace, name, None, req.actor, req.now).map_err(|e| store_error(e, info, name))?;
            self.release_removed_service(&removed, req);
            return Ok(Deleted::Removed(removed));
        }
        // Terminating: set (or shorten) the deletion timestamp.
        let new_deadline = req.now + (grace.max(0) as u64) * 1000;
        let keep_existing =
            already_deleting && meta.deletion_grace_period_seconds.unwrap_or(0) <= grace && meta.finalizers.clone().unwrap_or_default() == finalizers;
        if keep_existing {
            return Ok(Deleted::Terminating(current));
        }
        meta.deletion_timestamp = Some(time_at(new_deadline));
        meta.deletion_grace_period_seconds = Some(grace);
        meta.finalizers = if finalizers.is_empty() { None } else { Some(finalizers) };
        let updated = self.store.update(resource_of(info), object, None, req.actor, req.now).map_err(|e| store_error(e, info, name))?;
        Ok(Deleted::Terminating(updated))
    }

    /// POST pods/eviction (policy/v1 Eviction): deletes the pod gracefully unless a
    /// PodDisruptionBudget forbids it (429), as pkg/registry/core/pod/storage/eviction.go.
    pub fn evict(&mut self, namespace: &str, name: &str, options: DeleteOptions, req: &mut Request) -> Result<Deleted> {
        let info = kind_info("v1", "Pod").expect("pods are served");
        let current = self.get(info, namespace, name)?;
        let pod = current.as_pod().expect("pods resource holds pods").clone();
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
        // Terminal or not-yet-running pods can always be evicted (they cannot be disrupted).
        let guarded = !matches!(phase, "Succeeded" | "Failed" | "Pending") && pod.metadata.deletion_timestamp.is_none();
        if guarded {
            let labels = pod.metadata.labels.clone();
            let budgets: Vec<kubesim_api::DynamicObject> = self
                .store
                .list(("policy", "poddisruptionbudgets"), Some(namespace))
                .filter_map(|o| match o.as_ref() {
                    Object::Dynamic(d) => Some((**d).clone()),
                    _ => None,
                })
                .filter(|pdb| {
                    let selector = pdb.rest.get("spec").and_then(|s| s.get("selector")).cloned().unwrap_or_default();
                    let selector: kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
                        serde_json::from_value(selector).unwrap_or_default();
                    let empty = selector.match_labels.as_ref().is_none_or(|m| m.is_empty()) && selector.match_expressions.as_ref().is_none_or(|e| e.is_empty());
                    !empty && kubesim_api::selector::Selector::from_label_selector(&selector).matches(labels.as_ref())
                })
                .collect();
            if budgets.len() > 1 {
                return Err(ApiError {
                    code: 500,
                    reason: "InternalError",
                    message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.".into(),
                });
            }
            if let Some(mut pdb) = budgets.into_iter().next() {
                let status = pdb.rest.get("status").cloned().unwrap_or_default();
                let allowed = status.get("disruptionsAllowed").and_then(|v| v.as_i64()).unwrap_or(0);
                if allowed <= 0 {
                    let desired = status.get("desiredHealthy").and_then(|v| v.as_i64()).unwrap_or(0);
                    let healthy = status.get("currentHealthy").and_then(|v| v.as_i64()).unwrap_or(0);
                    return Err(ApiError::too_many_requests(format!(
                        "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget {} needs {desired} healthy pods and has {healthy} currently",
                        pdb.metadata.name.clone().unwrap_or_default()
                    )));
                }
                let status = pdb.rest.entry("status").or_insert_with(|| serde_json::json!({}));
                status["disruptionsAllowed"] = serde_json::Value::from(allowed - 1);
                status["disruptedPods"][name] = serde_json::to_value(time_at(req.now)).expect("times serialize");
                self.store
                    .update(("policy", "poddisruptionbudgets"), Object::Dynamic(Box::new(pdb)), None, req.actor, req.now)
                    .map_err(|_| ApiError::conflict("poddisruptionbudgets.policy", name))?;
            }
        }
        // The DisruptionTarget condition, then the graceful delete.
        let mut with_condition = pod.clone();
        let status = with_condition.status.get_or_insert_with(Default::default);
        set_pod_condition(
            status.conditions.get_or_insert_with(Vec::new),
            PodCondition {
                type_: "DisruptionTarget".into(),
                status: "True".into(),
                reason: Some("EvictionByEvictionAPI".into()),
                message: Some("Eviction API: evicting".into()),
                last_transition_time: Some(time_at(req.now)),
                ..Default::default()
            },
        );
        let _ = self.update_status(Object::Pod(Box::new(with_condition)), req);
        self.delete(info, namespace, name, options, req)
    }

    /// GET .../scale: the autoscaling/v1 Scale of a Deployment, ReplicaSet, StatefulSet or
    /// ReplicationController.
    pub fn get_scale(&self, info: &KindInfo, namespace: &str, name: &str) -> Result<serde_json::Value> {
        if !matches!(info.kind, "Deployment" | "ReplicaSet" | "StatefulSet" | "ReplicationController") {
            return Err(ApiError::not_found(&format!("{}/scale", info.qualified_resource()), name));
        }
        let object = self.get(info, namespace, name)?.to_json();
        let selector = object.pointer("/spec/selector").cloned().unwrap_or_default();
        let selector_text = match selector.get("matchLabels").or(if info.kind == "ReplicationController" { Some(&selector) } else { None }) {
            Some(map) => {
                map.as_object().map(|m| m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect::<Vec<_>>().join(",")).unwrap_or_default()
            }
            None => String::new(),
        };
        Ok(serde_json::json!({
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": { "name": name, "namespace": namespace, "uid": object["metadata"]["uid"], "resourceVersion": object["metadata"]["resourceVersion"], "creationTimestamp": object["metadata"]["creationTimestamp"] },
            "spec": { "replicas": object.pointer("/spec/replicas").cloned().unwrap_or(serde_json::Value::from(1)) },
            "status": { "replicas": object.pointer("/status/replicas").cloned().unwrap_or(serde_json::Value::from(0)), "selector": selector_text },
        }))
    }

    /// PUT .../scale: sets spec.replicas (the only field the scale subresource writes).
    pub fn update_scale(&mut self, info: &KindInfo, namespace: &str, name: &str, replicas: i32, req: &mut Request) -> Result<Arc<Object>> {
        self.get_scale(info, namespace, name)?;
        if replicas < 0 {
            return Err(ApiError::invalid(format!(
                "Scale.autoscaling {name:?} is invalid: spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
            )));
        }
        let mut json = self.get(info, namespace, name)?.to_json();
        json["spec"]["replicas"] = serde_json::Value::from(replicas);
        // The server's own read-modify-write (GuaranteedUpdate retries it), so unconditional:
        // neither a concurrent writer nor the `api-conflicts` fault makes it fail.
        if let Some(metadata) = json.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            metadata.remove("resourceVersion");
        }
        let object = Object::from_json(info, json).map_err(|e| ApiError::bad_request(e.to_string()))?;
        self.update(object, req)
    }

    fn finish_update(&mut self, info: &KindInfo, object: Object, expected: Option<u64>, req: &mut Request) -> Result<Arc<Object>> {
        let name = object.name().to_string();
        let namespace = object.namespace().to_string();
        let resource = resource_of(info);
        // An object being deleted whose last finalizer was removed is deleted by this update.
        let deleting = object.metadata().deletion_timestamp.is_some();
        let spec_finalizers = match &object {
            Object::Namespace(ns) => ns.spec.as_ref().and_then(|s| s.finalizers.as_ref()).is_some_and(|f| !f.is_empty()),
            _ => false,
        };
        let no_finalizers = object.metadata().finalizers.as_ref().is_none_or(|f| f.is_empty()) && !spec_finalizers;
        let graceful_pending = matches!(&object, Object::Pod(_)) && object.metadata().deletion_grace_period_seconds.unwrap_or(0) > 0;
        if deleting && no_finalizers && !graceful_pending {
            self.store.update(resource, object, expected, req.actor, req.now).map_err(|e| store_error(e, info, &name))?;
            let removed = self.store.delete(resource, &namespace, &name, None, req.actor, req.now).map_err(|e| store_error(e, info, &name))?;
            self.release_removed_service(&removed, req);
            return Ok(removed);
        }
        self.store.update(resource, object, expected, req.actor, req.now).map_err(|e| store_error(e, info, &name))
    }
}

/// Who the API server's own writes are recorded as (the IPAddress objects, the `kubernetes`
/// Service's endpoints).
pub const API_SERVER_ACTOR: &str = "kube-apiserver";

/// `failed to allocate a nodePort: range is full` (alloc.go, an internal error).
fn node_ports_full() -> ApiError {
    ApiError { code: 500, reason: "InternalError", message: "Internal error occurred: failed to allocate a nodePort: range is full".into() }
}

/// DefaultStorageClass admission: a PVC with no storageClassName gets the default class.
fn default_storage_class(object: &mut Object, store: &Store) {
    let Object::Dynamic(pvc) = object else { return };
    if pvc.kind != "PersistentVolumeClaim" {
        return;
    }
    // PersistentVolumeClaimHasClass: the beta annotation counts as a class.
    if pvc.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(kubesim_api::storage::BETA_STORAGE_CLASS_ANNOTATION)) {
        return;
    }
    let Some(spec) = pvc.rest.get_mut("spec").and_then(|s| s.as_object_mut()) else { return };
    if spec.get("storageClassName").is_some_and(|c| !c.is_null()) {
        return;
    }
    // GetDefaultClass: of the classes marked default (GA or beta annotation), the newest, then
    // by name.
    let is_default = |a: Option<&std::collections::BTreeMap<String, String>>, key: &str| a.and_then(|a| a.get(key)).map(String::as_str) == Some("true");
    let mut defaults: Vec<_> = store
        .list(("storage.k8s.io", "storageclasses"), None)
        .filter(|sc| {
            let a = sc.metadata().annotations.as_ref();
            is_default(a, kubesim_api::storage::DEFAULT_CLASS_ANNOTATION) || is_default(a, kubesim_api::storage::BETA_DEFAULT_CLASS_ANNOTATION)
        })
        .collect();
    kubesim_api::sort::sort_by(&mut defaults, |a, b| {
        let created = |o: &Object| o.metadata().creation_timestamp.clone().map(|t| t.0);
        created(b).cmp(&created(a)).then_with(|| a.name().cmp(b.name()))
    });
    if let Some(class) = defaults.first() {
        spec.insert("storageClassName".into(), class.name().into());
    }
}

/// The registry strategies' PrepareForCreate: a client cannot create an object with a status
/// (workloads, services, budgets start empty; volumes and claims start Pending). Nodes keep
/// theirs (the kubelet registers with it), pods get theirs from admission.
fn reset_status_on_create(object: &mut Object) {
    match object {
        Object::Deployment(d) => d.status = None,
        Object::ReplicaSet(rs) => rs.status = None,
        Object::Service(svc) => svc.status = Some(Default::default()),
        Object::Dynamic(d) => match d.kind.as_str() {
            "StatefulSet" | "DaemonSet" | "Job" | "CronJob" | "HorizontalPodAutoscaler" | "PodDisruptionBudget" | "ReplicationController" => {
                d.rest.remove("status");
            }
            "PersistentVolumeClaim" | "PersistentVolume" => {
                d.rest.insert("status".into(), serde_json::json!({ "phase": "Pending" }));
            }
            // servicecidr strategy PrepareForCreate: the controllers write its conditions.
            "ServiceCIDR" => {
                d.rest.remove("status");
            }
            _ => {}
        },
        _ => {}
    }
}

/// ValidateUpdate's immutable fields: workload selectors (apps/v1), a Job's selector and
/// template, a PVC's spec (ValidatePersistentVolumeClaimUpdate), a ConfigMap/Secret marked
/// immutable.
fn immutable_field_errors(new: &Object, old: &Object, info: &KindInfo) -> Vec<kubesim_api::validation::FieldError> {
    use kubesim_api::validation::{FieldError, FieldErrorKind};
    let immutable = |path: &str, value: &serde_json::Value| FieldError {
        path: path.to_string(),
        kind: FieldErrorKind::Invalid(render_go_value(value)),
        detail: "field is immutable".into(),
    };
    let (a, b) = (new.to_json(), old.to_json());
    let mut errors = Vec::new();
    let pointers: &[&str] = match info.kind {
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => &["/spec/selector"],
        "Job" => &["/spec/selector", "/spec/completionMode"],
        // validateIngressClassSpecUpdate.
        "IngressClass" => &["/spec/controller"],
        // ValidateVolumeAttachmentUpdate: the spec never changes; ValidateCSIDriverUpdate.
        "VolumeAttachment" => &["/spec"],
        "CSIDriver" => &["/spec/attachRequired", "/spec/fsGroupPolicy", "/spec/volumeLifecycleModes"],
        _ => &[],
    };
    for pointer in pointers {
        let (x, y) = (a.pointer(pointer), b.pointer(pointer));
        if x != y && y.is_some() {
            errors.push(immutable(&pointer[1..].replace('/', "."), x.unwrap_or(&serde_json::Value::Null)));
        }
    }
    if info.kind == "PersistentVolumeClaim" {
        errors.extend(kubesim_api::validation::validate_pvc_update(&a, &b));
    }
    // validateServiceExternalTrafficFieldsUpdate.
    if let (Object::Service(n), Object::Service(o)) = (new, old) {
        let (ns, os) = (n.spec.clone().unwrap_or_default(), o.spec.clone().unwrap_or_default());
        if kubesim_api::validation::needs_health_check(&ns)
            && kubesim_api::validation::needs_health_check(&os)
            && ns.health_check_node_port != os.health_check_node_port
        {
            errors.push(FieldError { path: "spec.healthCheckNodePort".into(), kind: FieldErrorKind::Forbidden, detail: "field is immutable".into() });
        }
    }
    // ValidateStatefulSetUpdate: only these spec fields may change.
    if info.kind == "StatefulSet" {
        let strip = |v: &serde_json::Value| {
            let mut spec = v.get("spec").cloned().unwrap_or_default();
            if let Some(m) = spec.as_object_mut() {
                for key in ["replicas", "template", "updateStrategy", "minReadySeconds", "ordinals", "persistentVolumeClaimRetentionPolicy"] {
                    m.remove(key);
                }
            }
            spec
        };
        if strip(&a) != strip(&b) {
            errors.push(FieldError {
                path: "spec".into(),
                kind: FieldErrorKind::Forbidden,
                detail: "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden".into(),
            });
        }
    }
    // ValidateJobUpdate: completions are immutable unless the Job is Indexed (elastic).
    if info.kind == "Job" && a.pointer("/spec/completionMode").and_then(|m| m.as_str()) != Some("Indexed") {
        let (x, y) = (a.pointer("/spec/completions"), b.pointer("/spec/completions"));
        if x != y {
            errors.push(immutable("spec.completions", x.unwrap_or(&serde_json::Value::Null)));
        }
    }
    if matches!(info.kind, "ConfigMap" | "Secret")
        && b.get("immutable") == Some(&serde_json::Value::Bool(true))
        && (a.get("data") != b.get("data") || a.get("binaryData") != b.get("binaryData"))
    {
        errors.push(FieldError { path: "data".into(), kind: FieldErrorKind::Forbidden, detail: "field is immutable when `immutable` is set".into() });
    }
    errors
}

/// A JSON value as Go's %v renders it in field errors (`v1.LabelSelector{...}` is approximated by JSON).
fn render_go_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// `Kind.group` as API errors name a kind (`Deployment.apps`), `Kind` for the core group.
fn qualified_kind(info: &KindInfo) -> String {
    match info.group() {
        "" => info.kind.to_string(),
        group => format!("{}.{group}", info.kind),
    }
}

fn push_unique(list: &mut Vec<String>, value: &str) {
    if !list.iter().any(|f| f == value) {
        list.push(value.to_string());
    }
}

fn has_dependents_possible(_info: &KindInfo) -> bool {
    true
}

fn parse_rv(text: &str) -> Result<Option<u64>> {
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<u64>().map(Some).map_err(|_| ApiError::bad_request(format!("invalid resource version: {text:?}")))
}

/// Kinds whose metadata.generation the API server maintains.
fn tracks_generation(info: &KindInfo) -> bool {
    !matches!(
        info.kind,
        "Event" | "Lease" | "ConfigMap" | "Secret" | "Endpoints" | "EndpointSlice" | "Namespace" | "Node" | "Binding" | "ServiceCIDR" | "IPAddress"
    )
}

fn spec_changed(new: &Object, old: &Object, info: &KindInfo) -> bool {
    let strip = |o: &Object| {
        let mut v = o.to_json();
        if let Some(map) = v.as_object_mut() {
            map.remove("status");
            let keep_annotations = info.kind == "Deployment";
            if let Some(meta) = map.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                let annotations = meta.get("annotations").cloned();
                meta.clear();
                if keep_annotations {
                    if let Some(a) = annotations {
                        meta.insert("annotations".into(), a);
                    }
                }
            }
        }
        v
    };
    strip(new) != strip(old)
}

/// dropTypeDependentFields (registry/core/service/strategy.go): a Service switching to a type
/// that does not use node ports or an external traffic policy loses the values it carried, when
/// the user left them unchanged.
pub fn drop_type_dependent_fields(object: &mut Object, current: &Object) {
    let (Object::Service(new), Object::Service(old)) = (&mut *object, current) else { return };
    let (Some(n), Some(o)) = (new.spec.as_mut(), old.spec.as_ref()) else { return };
    let external = |t: Option<&String>| matches!(t.map(String::as_str), Some("NodePort" | "LoadBalancer"));
    if external(o.type_.as_ref()) && !external(n.type_.as_ref()) {
        let old_ports: Vec<(i32, Option<i32>)> = o.ports.iter().flatten().map(|p| (p.port, p.node_port)).collect();
        let same = n.ports.iter().flatten().all(|p| p.node_port.is_none() || old_ports.iter().any(|(port, np)| *port == p.port && *np == p.node_port));
        if same {
            for port in n.ports.iter_mut().flatten() {
                port.node_port = None;
            }
        }
        if n.external_traffic_policy == o.external_traffic_policy {
            n.external_traffic_policy = None;
        }
    }
    // A Service that stops needing a health-check node port loses the one it carried, when the
    // user left it unchanged.
    if kubesim_api::validation::needs_health_check(o) && !kubesim_api::validation::needs_health_check(n) && n.health_check_node_port == o.health_check_node_port
    {
        n.health_check_node_port = None;
    }
    if o.type_.as_deref() == Some("LoadBalancer")
        && n.type_.as_deref() != Some("LoadBalancer")
        && n.allocate_load_balancer_node_ports == o.allocate_load_balancer_node_ports
    {
        n.allocate_load_balancer_node_ports = None;
    }
}

/// Fields the client cannot change on update (uid, creationTimestamp, deletion state), and the
/// Service fields the registry keeps from the old object when an update omits them
/// (patchAllocatedValues: clusterIP(s), IP families, node ports).
fn preserve_server_fields(object: &mut Object, current: &Object) {
    if let (Object::Service(new), Object::Service(old)) = (&mut *object, current) {
        if let (Some(n), Some(o)) = (new.spec.as_mut(), old.spec.as_ref()) {
            if n.cluster_ip.as_deref().unwrap_or("").is_empty() {
                n.cluster_ip = o.cluster_ip.clone();
                n.cluster_ips = o.cluster_ips.clone();
            }
            if n.ip_families.is_none() {
                n.ip_families = o.ip_families.clone();
            }
            if n.ip_family_policy.is_none() {
                n.ip_family_policy = o.ip_family_policy.clone();
            }
            // patchAllocatedValues: a health-check node port the update left out is kept.
            if kubesim_api::validation::needs_health_check(n) && kubesim_api::validation::needs_health_check(o) && n.health_check_node_port.unwrap_or(0) == 0 {
                n.health_check_node_port = o.health_check_node_port;
            }
            let needs_node_ports = |t: Option<&String>| matches!(t.map(String::as_str), Some("NodePort" | "LoadBalancer"));
            let keep_node_ports = needs_node_ports(n.type_.as_ref()) && needs_node_ports(o.type_.as_ref());
            for port in n.ports.iter_mut().flatten().filter(|_| keep_node_ports) {
                if port.node_port.is_none() {
                    port.node_port = o.ports.iter().flatten().find(|p| p.port == port.port && p.protocol == port.protocol).and_then(|p| p.node_port);
                }
            }
        }
    }
    let cur = current.metadata();
    let meta = object.metadata_mut();
    meta.uid = cur.uid.clone();
    meta.creation_timestamp = cur.creation_timestamp.clone();
    meta.generation = cur.generation;
    meta.deletion_timestamp = cur.deletion_timestamp.clone();
    meta.deletion_grace_period_seconds = cur.deletion_grace_period_seconds;
    meta.namespace = cur.namespace.clone();
}

/// `current` with `from`'s status (a status update's new object): pods' and nodes' statuses
/// move over without copying the current one first.
fn with_status_of(current: &Object, from: Object) -> Object {
    match (current, from) {
        (Object::Pod(cur), Object::Pod(new)) => Object::Pod(Box::new(Pod { metadata: cur.metadata.clone(), spec: cur.spec.clone(), status: new.status })),
        (Object::Node(cur), Object::Node(new)) => Object::Node(Box::new(Node { metadata: cur.metadata.clone(), spec: cur.spec.clone(), status: new.status })),
        (_, from) => {
            let mut merged = current.clone();
            carry_status(&mut merged, &from);
            merged
        }
    }
}

/// Copies `from`'s status onto `to` (status is owned by the status subresource).
fn carry_status(to: &mut Object, from: &Object) {
    to.copy_status_from(from);
}

/// Sets a condition, keeping lastTransitionTime when the status did not change
/// (podutil.UpdatePodCondition).
pub fn set_pod_condition(conditions: &mut Vec<PodCondition>, mut condition: PodCondition) {
    if let Some(existing) = conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        if existing.status == condition.status {
            condition.last_transition_time = existing.last_transition_time.clone();
        }
        *existing = condition;
    } else {
        conditions.push(condition);
    }
}

#[cfg(test)]
mod event_cache_tests {
    use super::*;

    #[test]
    fn each_recorder_keeps_its_4096_most_recently_used_events() {
        let mut caches = EventCaches::default();
        let live = |_: &str, _: &str| true;
        for key in 0..EVENT_CACHE_ENTRIES as u64 {
            caches.remember("kubelet/a", key, "default", &format!("e{key}"), 0, live);
        }
        caches.remember("kubelet/a", 0, "default", "e0", 0, live); // used again: now the newest
        caches.remember("kubelet/b", 7, "default", "other", 0, live); // another recorder's own cache
        caches.remember("kubelet/a", 99_999, "default", "new", 0, live); // evicts the oldest: key 1
        assert_eq!(caches.get("kubelet/a", 0), Some("e0"));
        assert_eq!(caches.get("kubelet/a", 1), None);
        assert_eq!(caches.get("kubelet/a", 2), Some("e2"));
        assert_eq!(caches.get("kubelet/a", 99_999), Some("new"));
        assert_eq!(caches.get("kubelet/b", 7), Some("other"));
        assert_eq!(caches.get("kubelet/a", 7), Some("e7"));
        assert_eq!(caches.len(), EVENT_CACHE_ENTRIES + 1);
    }

    #[test]
    fn entries_of_events_that_are_gone_are_dropped() {
        let mut caches = EventCaches::default();
        for key in 0..3 * EVENT_CACHE_ENTRIES as u64 {
            // Only the events of even keys still exist (the odd ones were deleted, one each).
            caches.remember(&format!("controller-{}", key % 3), key, "ns", &format!("e{key}"), key / 2, |_, name| {
                name.trim_start_matches('e').parse::<u64>().is_ok_and(|k| k % 2 == 0)
            });
        }
        // At most the live entries (half) and what was remembered since the last sweep.
        assert!(caches.len() <= 3 * EVENT_CACHE_ENTRIES / 2 + EVENT_CACHE_ENTRIES, "{}", caches.len());
        assert_eq!(caches.get("controller-0", 0), Some("e0"));
        assert_eq!(caches.get("controller-1", 1), None);
    }

    /// With no deletion since the last sweep no Event can be gone: the sweep (a lookup of
    /// every remembered Event) is skipped.
    #[test]
    fn no_sweep_without_deletions() {
        let mut caches = EventCaches { deletions_at_sweep: 5, ..Default::default() };
        for key in 0..3 * EVENT_CACHE_ENTRIES as u64 {
            caches.remember(&format!("controller-{}", key % 3), key, "ns", &format!("e{key}"), 5, |_, _| panic!("swept"));
        }
        assert_eq!(caches.len(), 3 * EVENT_CACHE_ENTRIES);
    }
}
