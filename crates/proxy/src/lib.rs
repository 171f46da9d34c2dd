//! kube-proxy in iptables mode, one per node: it watches Services and EndpointSlices and, at
//! most once per `minSyncPeriod`, writes the host's Service table
//! ([`kubesim_host::netfilter::ServiceTable`]) as `iptables-restore` would. Packets from the
//! node's pods, and packets entering the node (node ports, external and load-balancer IPs),
//! are DNAT-ed, dropped or rejected through that table by the fabric (`kubesim_runtime::net`),
//! so a Service answers only once this node's kube-proxy has synced it, and stops answering
//! from an endpoint only once the next sync removed it.
//!
//! [`rules`] is the decision (pure: objects in, table out: per Service port its cluster IP,
//! external IPs, load-balancer IPs with `loadBalancerSourceRanges`, node port, health-check
//! node port, traffic policies, ClientIP affinity and CategorizeEndpoints' cluster and local
//! endpoints); [`KubeProxy`] is the I/O around it. `kubesim_host::iptables` renders the table
//! as the chains upstream writes.
//!
//! At each sync it also updates its HTTP servers on the host
//! ([`kubesim_host::healthcheck`]): the health check of every Service with a
//! `healthCheckNodePort` (SyncServices) and its ready endpoints on this node (SyncEndpoints,
//! [`local_ready_endpoints`]), and the proxy health server's QueuedUpdate/Updated.
//!
//! Left out (README "Networking"): topology hints (trafficDistribution, topology-aware
//! routing), conntrack (a connection's DNAT is decided per call; UDP flows are not flushed),
//! dual-stack, and the nftables and IPVS modes.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kubesim_api::object::Object;
use kubesim_host::netfilter::{ipv4, normalize_cidr, sort_endpoints, EndpointAddr, ServicePort, ServiceTable};
use kubesim_runtime::component::{Component, Ctx, Interest, WatchEvent, WatchFilter};
use kubesim_runtime::HostEvent;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// `--iptables-min-sync-period` (kube-proxy's default, 1s): syncs are at least this far apart.
pub const MIN_SYNC_PERIOD_MS: u64 = 1_000;

/// kube-proxy's `clusterCIDR` as kind configures it (the pod network): its local traffic
/// detector, which the masquerade rule and `externalTrafficPolicy: Local`'s short-circuit of
/// pod traffic use.
pub const CLUSTER_CIDR: &str = "10.244.0.0/16";

/// The label an EndpointSlice names its Service with.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// The label that hands a Service to another proxy: kube-proxy's informers leave it out.
pub const SERVICE_PROXY_NAME_LABEL: &str = "service.kubernetes.io/service-proxy-name";

/// The default `sessionAffinityConfig.clientIP.timeoutSeconds` (3 hours).
pub const DEFAULT_AFFINITY_SECONDS: u32 = 10_800;

/// The table for node `node` from the Services and EndpointSlices: every Service port
/// [`service_ports`] gives, as a full sync writes them.
pub fn rules<'a>(node: &str, services: impl IntoIterator<Item = &'a Service>, slices: impl IntoIterator<Item = &'a EndpointSlice>) -> ServiceTable {
    let mut by_service: BTreeMap<(String, String), Vec<&EndpointSlice>> = BTreeMap::new();
    for slice in slices {
        let Some(name) = slice.metadata.labels.as_ref().and_then(|l| l.get(SERVICE_NAME_LABEL)) else { continue };
        by_service.entry((slice.metadata.namespace.clone().unwrap_or_default(), name.clone())).or_default().push(slice);
    }
    let mut table = ServiceTable { cluster_cidr: CLUSTER_CIDR.to_string(), ..ServiceTable::default() };
    let mut ports = Vec::new();
    for svc in services {
        let key = (svc.metadata.namespace.clone().unwrap_or_default(), svc.metadata.name.clone().unwrap_or_default());
        let slices = by_service.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        ports.extend(service_ports(node, svc, slices.iter().copied()));
    }
    table.replace_all(ports);
    table
}

/// An endpoint as kube-proxy's EndpointSliceCache reads it: ready and serving default to true
/// when unset, terminating to false; only the first address counts.
struct Endpoint {
    addr: EndpointAddr,
    local: bool,
    ready: bool,
    serving_terminating: bool,
}

/// One Service's ports as kube-proxy programs them on node `node` (newBaseServiceInfo and
/// CategorizeEndpoints): none for an ExternalName or headless Service, or one another proxy
/// serves.
pub fn service_ports<'a>(node: &str, svc: &Service, slices: impl IntoIterator<Item = &'a EndpointSlice> + Clone) -> Vec<ServicePort> {
    let ns = svc.metadata.namespace.clone().unwrap_or_default();
    let name = svc.metadata.name.clone().unwrap_or_default();
    let Some(spec) = svc.spec.as_ref() else { return Vec::new() };
    if svc.metadata.labels.as_ref().is_some_and(|l| l.contains_key(SERVICE_PROXY_NAME_LABEL)) {
        return Vec::new();
    }
    let type_ = spec.type_.as_deref().unwrap_or("ClusterIP");
    // ShouldSkipService: no cluster IP (headless) or ExternalName.
    let Some(cluster_ip) = spec.cluster_ip.clone().filter(|ip| ipv4(ip).is_some()) else { return Vec::new() };
    if type_ == "ExternalName" {
        return Vec::new();
    }
    let external_ips: Vec<String> = spec.external_ips.iter().flatten().filter(|ip| ipv4(ip).is_some()).cloned().collect();
    // apiservice.ExternallyAccessible / ExternalPolicyLocal / NeedsHealthCheck.
    let accessible = type_ == "LoadBalancer" || type_ == "NodePort" || (type_ == "ClusterIP" && !external_ips.is_empty());
    let external_local = accessible && spec.external_traffic_policy.as_deref() == Some("Local");
    let internal_local = spec.internal_traffic_policy.as_deref() == Some("Local");
    let health_check_node_port = spec.health_check_node_port.filter(|p| *p > 0 && type_ == "LoadBalancer" && external_local).map(|p| p as u16);
    let affinity_seconds = (spec.session_affinity.as_deref() == Some("ClientIP")).then(|| {
        spec.session_affinity_config
            .as_ref()
            .and_then(|c| c.client_ip.as_ref())
            .and_then(|c| c.timeout_seconds)
            .map_or(DEFAULT_AFFINITY_SECONDS, |t| t.max(0) as u32)
    });
    // Load-balancer ingress IPs of ipMode VIP (ipMode Proxy: the load balancer proxies, the
    // node never sees the address).
    let load_balancer_ips: Vec<String> = svc
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .filter(|i| i.ip_mode.as_deref() != Some("Proxy"))
        .filter_map(|i| i.ip.clone())
        .filter(|ip| ipv4(ip).is_some())
        .collect();
    let source_ranges: Vec<String> = spec.load_balancer_source_ranges.iter().flatten().filter_map(|r| normalize_cidr(r)).collect();
    let mut out = Vec::new();
    for port in spec.ports.iter().flatten() {
        let protocol = port.protocol.clone().unwrap_or_else(|| "TCP".to_string());
        let udp = protocol == "UDP";
        let port_name = port.name.clone().unwrap_or_default();
        let label = if port_name.is_empty() { format!("{ns}/{name}") } else { format!("{ns}/{name}:{port_name}") };
        // The endpoints of this ServicePortName (name and protocol), deduplicated by ip:port.
        let mut endpoints: BTreeMap<String, Endpoint> = BTreeMap::new();
        for slice in slices.clone() {
            let Some(number) = slice
                .ports
                .iter()
                .flatten()
                .find(|p| p.name.clone().unwrap_or_default() == port_name && p.protocol.as_deref().unwrap_or("TCP") == protocol)
                .and_then(|p| p.port)
            else {
                continue;
            };
            for ep in &slice.endpoints {
                let Some(ip) = ep.addresses.first() else { continue };
                let c = ep.conditions.as_ref();
                let ready = c.and_then(|c| c.ready).unwrap_or(true);
                let serving = c.and_then(|c| c.serving).unwrap_or(true);
                let terminating = c.and_then(|c| c.terminating).unwrap_or(false);
                let addr = (ip.clone(), number as u16);
                endpoints.insert(
                    format!("{ip}:{number}"),
                    Endpoint { addr, local: ep.node_name.as_deref() == Some(node), ready, serving_terminating: serving && terminating },
                );
            }
        }
        let node_port = port.node_port.filter(|p| *p > 0).map(|p| p as u16);
        let sp = ServicePort {
            name: label,
            udp,
            cluster_ip: cluster_ip.clone(),
            port: port.port as u16,
            node_port,
            external_ips: external_ips.clone(),
            load_balancer_ips: load_balancer_ips.clone(),
            source_ranges: source_ranges.clone(),
            health_check_node_port,
            internal_local,
            external_local,
            affinity_seconds,
            endpoint_count: endpoints.len(),
            ..ServicePort::default()
        };
        out.push(categorize(sp, endpoints.values()));
    }
    out
}

/// The Service's health check as kube-proxy's ServiceHealthServer gets it on node `node`: its
/// `healthCheckNodePort` (only a LoadBalancer with `externalTrafficPolicy: Local` needs one;
/// HealthCheckNodePorts) and the number of distinct ready endpoint addresses on this node
/// (LocalReadyEndpoints: terminating endpoints fail the check even while they serve).
pub fn health_check<'a>(node: &str, svc: &Service, slices: impl IntoIterator<Item = &'a EndpointSlice>) -> Option<(u16, usize)> {
    let spec = svc.spec.as_ref()?;
    let needs = spec.type_.as_deref() == Some("LoadBalancer") && spec.external_traffic_policy.as_deref() == Some("Local");
    let port = spec.health_check_node_port.filter(|p| *p > 0 && needs)? as u16;
    if svc.metadata.labels.as_ref().is_some_and(|l| l.contains_key(SERVICE_PROXY_NAME_LABEL)) || spec.cluster_ip.as_deref().is_none_or(|ip| ipv4(ip).is_none())
    {
        return None;
    }
    Some((port, local_ready_endpoints(node, slices)))
}

/// LocalReadyEndpoints for one Service: its ready endpoints on `node`, counted by address (an
/// endpoint serving two ports counts once).
pub fn local_ready_endpoints<'a>(node: &str, slices: impl IntoIterator<Item = &'a EndpointSlice>) -> usize {
    let mut ips = BTreeSet::new();
    for slice in slices {
        for ep in &slice.endpoints {
            let ready = ep.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true);
            if ready && ep.node_name.as_deref() == Some(node) {
                if let Some(ip) = ep.addresses.first() {
                    ips.insert(ip.clone());
                }
            }
        }
    }
    ips.len()
}

/// CategorizeEndpoints (pkg/proxy/topology.go, without topology hints): the Cluster-policy
/// endpoints are the ready ones, else the serving-and-terminating ones; the Local-policy ones
/// likewise among this node's; hasAnyEndpoints when either kind exists anywhere.
fn categorize<'a>(mut sp: ServicePort, endpoints: impl Iterator<Item = &'a Endpoint> + Clone) -> ServicePort {
    let uses_cluster = !sp.internal_local || sp.externally_accessible();
    let uses_local = sp.internal_local || (sp.external_local && sp.externally_accessible());
    let pick = |f: &dyn Fn(&Endpoint) -> bool| -> Vec<EndpointAddr> {
        let mut v: Vec<EndpointAddr> = endpoints.clone().filter(|e| f(e)).map(|e| e.addr.clone()).collect();
        sort_endpoints(&mut v);
        v
    };
    if uses_cluster {
        sp.cluster_endpoints = pick(&|e| e.ready);
        if sp.cluster_endpoints.is_empty() {
            sp.cluster_endpoints = pick(&|e| e.serving_terminating);
        }
        sp.has_endpoints = !sp.cluster_endpoints.is_empty();
    }
    if uses_local {
        sp.has_endpoints |= endpoints.clone().any(|e| e.ready || e.serving_terminating);
        sp.local_endpoints = pick(&|e| e.local && e.ready);
        if sp.local_endpoints.is_empty() {
            sp.local_endpoints = pick(&|e| e.local && e.serving_terminating);
        }
    }
    sp
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
    /// The Service port names each Service last wrote to the host.
    written: BTreeMap<(String, String), Vec<String>>,
    /// The Services with a health check: their `healthCheckNodePort` and ready endpoints here.
    health: BTreeMap<(String, String), (u16, usize)>,
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
            health: BTreeMap::new(),
            last_sync: None,
            armed: false,
            stopped: false,
        }
    }

    /// The process stops (the `kube-proxy-stop` fault): the node's rules stay as last synced
    /// and go stale as Services and endpoints change; its HTTP servers stop listening.
    pub fn stop(&mut self, ctx: &mut Ctx) {
        self.stopped = true;
        self.health.clear();
        if let Some(host) = ctx.host_mut() {
            host.kube_proxy.stop();
        }
    }

    /// The process starts again and syncs at once.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.stopped = false;
        self.run_servers(ctx);
        self.last_sync = None;
        self.armed = false;
        self.dirty = None;
        self.request_sync(ctx);
    }

    /// Whether the process is stopped.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// The process runs: its servers listen (the health checks open at the first sync).
    fn run_servers(&mut self, ctx: &mut Ctx) {
        if let Some(host) = ctx.host_mut() {
            host.kube_proxy.running = true;
        }
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

    /// The rules of one Service (none when it is gone), from its own EndpointSlices.
    fn service_rules(&self, key: &(String, String)) -> Vec<ServicePort> {
        let Some(Object::Service(svc)) = self.services.get(key).map(|o| o.as_ref()) else { return Vec::new() };
        let slices = self.slices.get(key).into_iter().flatten().map(|(_, s)| s.as_ref());
        service_ports(&self.node, svc, slices)
    }

    /// The health check of one Service (none when it is gone or needs none).
    fn service_health(&self, key: &(String, String)) -> Option<(u16, usize)> {
        let Some(Object::Service(svc)) = self.services.get(key).map(|o| o.as_ref()) else { return None };
        let slices = self.slices.get(key).into_iter().flatten().map(|(_, s)| s.as_ref());
        health_check(&self.node, svc, slices)
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
        let keys: Vec<(String, String)> = match &dirty {
            None => self.services.keys().cloned().collect(),
            Some(d) => d.iter().cloned().collect(),
        };
        let fresh: Vec<((String, String), Vec<ServicePort>)> = keys
            .into_iter()
            .map(|k| {
                let ports = self.service_rules(&k);
                (k, ports)
            })
            .collect();
        // The health checks of the Services synced (all of them on a full sync).
        if dirty.is_none() {
            self.health.clear();
        }
        for (k, _) in &fresh {
            match self.service_health(k) {
                Some(hc) => self.health.insert(k.clone(), hc),
                None => self.health.remove(k),
            };
        }
        let Some(host) = ctx.host_mut() else { return };
        // SyncServices, SyncEndpoints, then Updated: the sync succeeded.
        let ports: BTreeMap<(String, String), u16> = self.health.iter().map(|(k, (port, _))| (k.clone(), *port)).collect();
        let counts: BTreeMap<(String, String), usize> = self.health.iter().map(|(k, (_, n))| (k.clone(), *n)).collect();
        host.kube_proxy.running = true;
        host.kube_proxy.sync_services(&ports);
        host.kube_proxy.sync_endpoints(&counts);
        host.kube_proxy.updated(now);
        let nf = &mut host.netfilter;
        let mut changed = false;
        if nf.cluster_cidr != CLUSTER_CIDR {
            nf.cluster_cidr = CLUSTER_CIDR.to_string();
        }
        match dirty {
            None => {
                self.written.clear();
                let mut all = Vec::new();
                for (k, ports) in fresh {
                    self.written.insert(k, ports.iter().map(|p| p.name.clone()).collect());
                    all.extend(ports);
                }
                let same = nf.services.len() == all.len() && all.iter().all(|p| nf.services.get(&p.name) == Some(p));
                if !same {
                    // iptables-restore --noflush of kube-proxy's chains: the portmap plugin's
                    // stay, and the `recent` lists of endpoints that keep their chains.
                    nf.replace_all(all);
                    changed = true;
                }
            }
            Some(_) => {
                for (k, ports) in fresh {
                    let old = self.written.remove(&k).unwrap_or_default();
                    for name in old.iter().filter(|n| !ports.iter().any(|p| &p.name == *n)) {
                        changed |= nf.remove(name);
                    }
                    if self.services.contains_key(&k) {
                        self.written.insert(k, ports.iter().map(|p| p.name.clone()).collect());
                    }
                    for p in ports {
                        if nf.services.get(&p.name) != Some(&p) {
                            nf.insert(p);
                            changed = true;
                        }
                    }
                }
            }
        }
        if !changed {
            return;
        }
        nf.synced_at = Some(now);
        let (vips, endpoints) = (nf.vips.len() + nf.node_ports.len(), entry_endpoints(nf));
        let node = self.node.clone();
        ctx.note_with(|| format!("iptables/{node}"), "iptables-restore", || format!("{vips} service ports, {endpoints} endpoints"));
    }

    /// Marks a Service's rules for the next sync.
    fn touch(&mut self, key: (String, String)) {
        if let Some(d) = self.dirty.as_mut() {
            d.insert(key);
        }
    }
}

/// The endpoints behind each `KUBE-SERVICES` address, summed (the sync note's count): the
/// policy chain each address's traffic takes from outside the node.
fn entry_endpoints(nf: &ServiceTable) -> usize {
    use kubesim_host::netfilter::Entry;
    nf.vips
        .values()
        .filter_map(|(name, entry)| {
            let sp = nf.services.get(name)?;
            let local = match entry {
                Entry::ClusterIp => sp.internal_local,
                Entry::ExternalIp | Entry::LoadBalancer => sp.external_local,
            };
            Some(if local {
                sp.local_endpoints.len()
            } else if sp.has_endpoints {
                sp.cluster_endpoints.len()
            } else {
                0
            })
        })
        .sum()
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
        self.run_servers(ctx);
        self.request_sync(ctx);
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        // QueuedUpdate: a change the proxier has not synced yet.
        let now = ctx.now;
        if let Some(host) = ctx.host_mut().filter(|_| !self.stopped) {
            host.kube_proxy.queued_update(now);
        }
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
                if !self.stopped {
                    self.run_servers(ctx);
                }
                self.request_sync(ctx);
            }
            _ => {}
        }
    }
}
