//! kube-proxy in iptables mode, one per node: it watches Services and EndpointSlices and, at
//! most once per `minSyncPeriod`, writes the host's whole Service table
//! ([`kubesim_host::netfilter::ServiceTable`]) as `iptables-restore` would. Packets from the
//! node's pods are DNAT-ed through that table by the fabric (`kubesim_runtime::net`), so a
//! Service answers only once this node's kube-proxy has synced it, and stops answering from an
//! endpoint only once the next sync removed it.
//!
//! [`rules`] is the decision (pure: objects in, table out); [`KubeProxy`] is the I/O around it.
//!
//! Left out (README "Networking"): topology hints, `externalTrafficPolicy: Local` health-check
//! node ports, external IPs and LoadBalancer ingress IPs, the masquerade bit, and the nftables
//! and IPVS modes.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kubesim_api::object::Object;
use kubesim_host::netfilter::{ServiceRule, ServiceTable};
use kubesim_runtime::component::{Component, Ctx, Interest, WatchEvent, WatchFilter};
use kubesim_runtime::HostEvent;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// `--iptables-min-sync-period` (kube-proxy's default, 1s): syncs are at least this far apart.
pub const MIN_SYNC_PERIOD_MS: u64 = 1_000;

/// The label an EndpointSlice names its Service with.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// The table for node `node` from the Services and EndpointSlices (syncProxyRules): one rule
/// per Service port with a cluster IP, and per node port. Endpoints are the ready ones; when a
/// Service has none ready, the serving-and-terminating ones (CategorizeEndpoints, v1.34).
/// `internalTrafficPolicy: Local` keeps only this node's endpoints for cluster IPs, and
/// `externalTrafficPolicy: Local` for node ports.
pub fn rules<'a>(node: &str, services: impl IntoIterator<Item = &'a Service>, slices: impl IntoIterator<Item = &'a EndpointSlice>) -> ServiceTable {
    let mut by_service: BTreeMap<(String, String), Vec<&EndpointSlice>> = BTreeMap::new();
    for slice in slices {
        let Some(name) = slice.metadata.labels.as_ref().and_then(|l| l.get(SERVICE_NAME_LABEL)) else { continue };
        by_service.entry((slice.metadata.namespace.clone().unwrap_or_default(), name.clone())).or_default().push(slice);
    }
    let mut table = ServiceTable::default();
    for svc in services {
        let ns = svc.metadata.namespace.clone().unwrap_or_default();
        let name = svc.metadata.name.clone().unwrap_or_default();
        let Some(spec) = svc.spec.as_ref() else { continue };
        if spec.type_.as_deref() == Some("ExternalName") {
            continue;
        }
        let cluster_ip = spec.cluster_ip.clone().filter(|ip| !ip.is_empty() && ip != "None");
        let slices = by_service.get(&(ns.clone(), name.clone())).map(Vec::as_slice).unwrap_or(&[]);
        let affinity = spec.session_affinity.as_deref() == Some("ClientIP");
        for port in spec.ports.iter().flatten() {
            let udp = port.protocol.as_deref() == Some("UDP");
            let port_name = port.name.clone().unwrap_or_default();
            let label = if port_name.is_empty() { format!("{ns}/{name}") } else { format!("{ns}/{name}:{port_name}") };
            let endpoints = |local_only: bool| -> Vec<(String, u16)> {
                let mut ready = Vec::new();
                let mut terminating = Vec::new();
                for slice in slices {
                    let Some(number) = slice.ports.iter().flatten().find(|p| p.name.clone().unwrap_or_default() == port_name).and_then(|p| p.port) else {
                        continue;
                    };
                    for ep in &slice.endpoints {
                        if local_only && ep.node_name.as_deref() != Some(node) {
                            continue;
                        }
                        let c = ep.conditions.as_ref();
                        let is_ready = c.and_then(|c| c.ready).unwrap_or(true);
                        let serving = c.and_then(|c| c.serving).unwrap_or(is_ready);
                        let terminating_ = c.and_then(|c| c.terminating).unwrap_or(false);
                        for ip in ep.addresses.iter().take(1) {
                            if is_ready {
                                ready.push((ip.clone(), number as u16));
                            } else if serving && terminating_ {
                                terminating.push((ip.clone(), number as u16));
                            }
                        }
                    }
                }
                let mut chosen = if ready.is_empty() { terminating } else { ready };
                chosen.sort();
                chosen.dedup();
                chosen
            };
            if let Some(ip) = &cluster_ip {
                let local = spec.internal_traffic_policy.as_deref() == Some("Local");
                table.vips.insert(
                    (ip.clone(), port.port as u16, udp),
                    ServiceRule { service: label.clone(), endpoints: endpoints(local), client_ip_affinity: affinity },
                );
            }
            // KUBE-EXT: external IPs and load-balancer ingress IPs (ipMode VIP) with the
            // external traffic policy.
            let external: Vec<String> = spec
                .external_ips
                .iter()
                .flatten()
                .cloned()
                .chain(
                    svc.status
                        .as_ref()
                        .and_then(|s| s.load_balancer.as_ref())
                        .and_then(|lb| lb.ingress.as_ref())
                        .into_iter()
                        .flatten()
                        .filter(|i| i.ip_mode.as_deref() != Some("Proxy"))
                        .filter_map(|i| i.ip.clone()),
                )
                .collect();
            for ip in external {
                let local = spec.external_traffic_policy.as_deref() == Some("Local");
                table
                    .vips
                    .insert((ip, port.port as u16, udp), ServiceRule { service: label.clone(), endpoints: endpoints(local), client_ip_affinity: affinity });
            }
            if let Some(node_port) = port.node_port.filter(|p| *p > 0) {
                let local = spec.external_traffic_policy.as_deref() == Some("Local");
                table
                    .node_ports
                    .insert((node_port as u16, udp), ServiceRule { service: label.clone(), endpoints: endpoints(local), client_ip_affinity: affinity });
            }
        }
    }
    table
}

/// The kube-proxy of one node.
#[derive(Clone, Debug)]
pub struct KubeProxy {
    actor: String,
    node: String,
    /// The Services, as the API server's objects (shared with its store, not copied per node).
    services: BTreeMap<(String, String), Arc<Object>>,
    /// The EndpointSlices of each Service (by their `kubernetes.io/service-name` label), by
    /// slice name; slices without the label belong to no Service's rules and are not kept. A
    /// slice relabelled to another Service (the EndpointSlice controller never does) stays
    /// with its first Service until it is deleted.
    slices: BTreeMap<(String, String), SliceList>,
    /// The Services whose rules the next sync rewrites (their Service or one of their
    /// EndpointSlices changed); `None`: every Service (the first sync, after a restart).
    dirty: Option<BTreeSet<(String, String)>>,
    /// The rule keys (cluster/external IP ports, node ports) each Service last wrote to the host.
    written: BTreeMap<(String, String), WrittenKeys>,
    last_sync: Option<u64>,
    armed: bool,
    /// The `kube-proxy-stop` fault: the process is gone, the node's rules stay as last written.
    stopped: bool,
}

const SYNC: u64 = 1;

impl KubeProxy {
    /// The kube-proxy for node `node`.
    pub fn new(node: &str) -> KubeProxy {
        KubeProxy {
            actor: format!("kube-proxy/{node}"),
            node: node.to_string(),
            services: BTreeMap::new(),
            slices: BTreeMap::new(),
            dirty: None,
            written: BTreeMap::new(),
            last_sync: None,
            armed: false,
            stopped: false,
        }
    }

    /// The process stops (the `kube-proxy-stop` fault): the node's rules stay as last synced
    /// and go stale as Services and endpoints change.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The process starts again and syncs at once.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.stopped = false;
        self.last_sync = None;
        self.armed = false;
        self.dirty = None;
        self.request_sync(ctx);
    }

    /// Whether the process is stopped.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// The informers' list: every Service and EndpointSlice as the API server has them now
    /// (at start, and again whenever the watches broke: power back, reconnected, restarted).
    fn list(&mut self, ctx: &mut Ctx) {
        self.services.clear();
        for o in ctx.api.store().list(("", "services"), None) {
            if let Object::Service(_) = o.as_ref() {
                self.services.insert(key(o), o.clone());
            }
        }
        self.slices.clear();
        for o in ctx.api.store().list(("discovery.k8s.io", "endpointslices"), None) {
            if let (Some(svc), Some(slice)) = (slice_service(o), o.decode_shared::<EndpointSlice>()) {
                insert_slice(self.slices.entry(svc).or_default(), o.name(), slice);
            }
        }
    }

    fn request_sync(&mut self, ctx: &mut Ctx) {
        if self.armed || self.stopped {
            return;
        }
        self.armed = true;
        let at = self.last_sync.map_or(ctx.now, |t| (t + MIN_SYNC_PERIOD_MS).max(ctx.now));
        ctx.after(at - ctx.now, SYNC);
    }

    /// The rules of one Service (empty when it is gone), from its own EndpointSlices.
    fn service_rules(&self, key: &(String, String)) -> ServiceTable {
        let Some(Object::Service(svc)) = self.services.get(key).map(|o| o.as_ref()) else { return ServiceTable::default() };
        let slices = self.slices.get(key).into_iter().flatten().map(|(_, s)| s.as_ref());
        rules(&self.node, std::iter::once(svc.as_ref()), slices)
    }

    /// syncProxyRules. As kube-proxy does with MinimizeIPTablesRestore (on by default since
    /// v1.27), a sync rewrites only the chains of Services that changed since the last one; the
    /// first sync, and the first after a restart, writes everything (the hourly forced full
    /// resync is not modelled: a full table would be the same).
    fn sync(&mut self, ctx: &mut Ctx) {
        self.armed = false;
        self.last_sync = Some(ctx.now);
        let now = ctx.now;
        if ctx.host_mut().is_none() {
            return;
        }
        let dirty = self.dirty.replace(BTreeSet::new());
        let Some(host) = ctx.host_mut() else { return };
        let changed = match dirty {
            None => {
                self.written.clear();
                let keys: Vec<(String, String)> = self.services.keys().cloned().collect();
                let mut table = ServiceTable::default();
                for k in keys {
                    let part = self.service_rules(&k);
                    self.written.insert(k, WrittenKeys::of(&part));
                    table.vips.extend(part.vips);
                    table.node_ports.extend(part.node_ports);
                }
                let changed = host.netfilter.vips != table.vips || host.netfilter.node_ports != table.node_ports;
                if changed {
                    // iptables-restore --noflush of kube-proxy's chains: the portmap plugin's stay.
                    table.host_ports = std::mem::take(&mut host.netfilter.host_ports);
                    host.netfilter = table;
                }
                changed
            }
            Some(dirty) => {
                let mut changed = false;
                let nf = &mut host.netfilter;
                for k in dirty {
                    let old = self.written.remove(&k).unwrap_or_default();
                    let new = self.service_rules(&k);
                    let owned = |r: &ServiceRule| owned_by(r, &k);
                    for a in old.vips.iter().filter(|a| !new.vips.contains_key(*a)) {
                        if nf.vips.get(a).is_some_and(owned) {
                            nf.vips.remove(a);
                            changed = true;
                        }
                    }
                    for a in old.node_ports.iter().filter(|a| !new.node_ports.contains_key(*a)) {
                        if nf.node_ports.get(a).is_some_and(owned) {
                            nf.node_ports.remove(a);
                            changed = true;
                        }
                    }
                    if self.services.contains_key(&k) {
                        self.written.insert(k, WrittenKeys::of(&new));
                    }
                    for (a, r) in new.vips {
                        if nf.vips.get(&a) != Some(&r) {
                            nf.vips.insert(a, r);
                            changed = true;
                        }
                    }
                    for (a, r) in new.node_ports {
                        if nf.node_ports.get(&a) != Some(&r) {
                            nf.node_ports.insert(a, r);
                            changed = true;
                        }
                    }
                }
                changed
            }
        };
        if !changed {
            return;
        }
        host.netfilter.synced_at = Some(now);
        let nf = &host.netfilter;
        let (vips, endpoints) = (nf.vips.len() + nf.node_ports.len(), nf.vips.values().map(|r| r.endpoints.len()).sum::<usize>());
        let node = self.node.clone();
        ctx.note(format!("iptables/{node}"), "iptables-restore", format!("{vips} service ports, {endpoints} endpoints"));
    }

    /// Marks a Service's rules for the next sync.
    fn touch(&mut self, key: (String, String)) {
        if let Some(d) = self.dirty.as_mut() {
            d.insert(key);
        }
    }
}

/// The keys of the rules one Service wrote.
#[derive(Clone, Debug, Default)]
struct WrittenKeys {
    vips: Vec<(String, u16, bool)>,
    node_ports: Vec<(u16, bool)>,
}

impl WrittenKeys {
    fn of(table: &ServiceTable) -> WrittenKeys {
        WrittenKeys { vips: table.vips.keys().cloned().collect(), node_ports: table.node_ports.keys().cloned().collect() }
    }
}

/// Whether a rule is one of Service `key`'s (its chain comment `ns/name` or `ns/name:port`).
fn owned_by(rule: &ServiceRule, key: &(String, String)) -> bool {
    let prefix = format!("{}/{}", key.0, key.1);
    rule.service == prefix || rule.service.strip_prefix(&prefix).is_some_and(|rest| rest.starts_with(':'))
}

/// One Service's EndpointSlices by name, sorted.
type SliceList = Vec<(String, Arc<EndpointSlice>)>;

/// The Service an EndpointSlice belongs to (its namespace and `kubernetes.io/service-name`).
fn slice_service(slice: &Object) -> Option<(String, String)> {
    slice.metadata().labels.as_ref().and_then(|l| l.get(SERVICE_NAME_LABEL)).map(|n| (slice.namespace().to_string(), n.clone()))
}

/// Puts a slice into its Service's list (kept sorted by name), replacing the slice's last state.
fn insert_slice(bucket: &mut SliceList, name: &str, slice: Arc<EndpointSlice>) {
    match bucket.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
        Ok(i) => bucket[i].1 = slice,
        Err(i) => bucket.insert(i, (name.to_string(), slice)),
    }
}

fn key(object: &Object) -> (String, String) {
    (object.namespace().to_string(), object.name().to_string())
}

impl Component for KubeProxy {
    fn name(&self) -> &str {
        &self.actor
    }

    fn interests(&self) -> Vec<Interest> {
        vec![
            Interest { resource: ("", "services"), filter: WatchFilter::All },
            Interest { resource: ("discovery.k8s.io", "endpointslices"), filter: WatchFilter::All },
        ]
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.list(ctx);
        self.dirty = None;
        self.request_sync(ctx);
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        let k = key(&event.object);
        let deleted = event.event_type == kubesim_store::EventType::Deleted;
        match event.object.as_ref() {
            Object::Service(_) if deleted => {
                self.services.remove(&k);
                self.touch(k);
            }
            Object::Service(_) => {
                self.services.insert(k.clone(), event.object.clone());
                self.touch(k);
            }
            o => {
                let Some(svc) = slice_service(o) else { return };
                let bucket = self.slices.entry(svc.clone()).or_default();
                if deleted {
                    bucket.retain(|(n, _)| n != &k.1);
                    if bucket.is_empty() {
                        self.slices.remove(&svc);
                    }
                } else if let Some(slice) = o.decode_shared::<EndpointSlice>() {
                    insert_slice(bucket, &k.1, slice);
                }
                self.touch(svc);
            }
        }
        self.request_sync(ctx);
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if token == SYNC {
            self.sync(ctx);
        }
    }

    fn on_host(&mut self, event: HostEvent, ctx: &mut Ctx) {
        match event {
            // A restarted node has empty tables until kube-proxy syncs again.
            HostEvent::PowerOn | HostEvent::Restart | HostEvent::Reconnected => {
                // The watches broke (or the process is new): relist, then a full sync.
                self.list(ctx);
                self.last_sync = None;
                self.armed = false;
                self.dirty = None;
                self.request_sync(ctx);
            }
            _ => {}
        }
    }
}
