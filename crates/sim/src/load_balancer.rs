//! The load balancers of LoadBalancer Services, as their health checks see the nodes:
//! cloud-provider-kind runs one envoy per Service (pkg/loadbalancer/proxy.go) whose backends
//! are the nodes, checked with `health_checks: timeout 5s, interval 3s, unhealthy_threshold 3,
//! healthy_threshold 1, http_health_check: path /healthz` on the Service's
//! `healthCheckNodePort` when its `externalTrafficPolicy` is `Local`, on kube-proxy's
//! `10256` otherwise. Every 3 s each load balancer checks every node through the fabric
//! ([`kubesim_runtime::net::health_check`]: kube-proxy's servers answer, link faults and power
//! apply). As envoy does, a node is unhealthy until a check passes, one passing check makes it
//! healthy and three failing in a row make it unhealthy again. The result is published in the
//! fabric ([`Fabric::load_balancer_unhealthy`]), where the packet routing picks among the
//! nodes that pass. A new configuration (another health-check port) restarts the load
//! balancer, as cloud-provider-kind restarts envoy: the checks start over.
//!
//! Deviations (README "Networking"): the load balancer forwards the client's packets to the
//! node (GCE's passthrough load balancers do; envoy proxies the connection from its own
//! address), and when every node fails its checks it keeps using all of them (GCE's
//! behaviour; envoy's panic threshold does so below 50% healthy nodes). The checks are not
//! shown in the packet log.
//!
//! [`Fabric::load_balancer_unhealthy`]: kubesim_runtime::fabric::Fabric::load_balancer_unhealthy

use kubesim_api::object::Object;
use kubesim_runtime::component::{Component, Ctx, Interest, WatchEvent, WatchFilter};
use std::collections::{BTreeMap, BTreeSet};

/// The health checks' interval (envoy `interval: 3s`).
pub const HEALTH_CHECK_INTERVAL_MS: u64 = 3_000;
/// Failed checks in a row that take a node out (`unhealthy_threshold: 3`).
pub const UNHEALTHY_THRESHOLD: u32 = 3;
/// The path checked (`http_health_check: path: /healthz`).
pub const HEALTH_CHECK_PATH: &str = "/healthz";

const CHECK: u64 = 1;

/// One load balancer's health checking.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Balancer {
    /// The Service it balances for.
    service: (String, String),
    /// The port its checks go to on every node.
    port: u16,
    /// Per node: whether it is healthy, and its failed checks in a row.
    nodes: BTreeMap<String, (bool, u32)>,
}

impl Balancer {
    /// The nodes that are not healthy, as the fabric is told.
    fn unhealthy(&self) -> BTreeSet<String> {
        self.nodes.iter().filter(|(_, (healthy, _))| !healthy).map(|(n, _)| n.clone()).collect()
    }
}

/// The load balancers' health checks (a control-plane component standing for the load
/// balancer containers cloud-provider-kind runs).
#[derive(Clone, Debug, Default)]
pub struct LoadBalancers {
    /// By load-balancer address.
    balancers: BTreeMap<String, Balancer>,
    armed: bool,
}

/// The addresses and health-check port the load balancers of a Service use, if it has any.
fn wanted(object: &Object) -> Option<(Vec<String>, u16)> {
    let Object::Service(svc) = object else { return None };
    let spec = svc.spec.as_ref()?;
    if spec.type_.as_deref() != Some("LoadBalancer") || object.metadata().deletion_timestamp.is_some() {
        return None;
    }
    let ips: Vec<String> = svc
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|i| i.ip.clone())
        .collect();
    if ips.is_empty() {
        return None;
    }
    // generateConfig: kube-proxy's healthz port, or the Service's health-check node port.
    let port = if spec.external_traffic_policy.as_deref() == Some("Local") {
        spec.health_check_node_port.unwrap_or(0).clamp(0, i32::from(u16::MAX)) as u16
    } else {
        kubesim_host::healthcheck::HEALTHZ_PORT
    };
    Some((ips, port))
}

impl LoadBalancers {
    /// Brings the load balancers of one Service in line with it.
    fn apply(&mut self, key: (String, String), object: Option<&Object>, ctx: &mut Ctx) {
        let want = object.and_then(wanted);
        let gone: Vec<String> = self
            .balancers
            .iter()
            .filter(|(ip, b)| b.service == key && !want.as_ref().is_some_and(|(ips, port)| ips.contains(ip) && b.port == *port))
            .map(|(ip, _)| ip.clone())
            .collect();
        for ip in gone {
            self.balancers.remove(&ip);
            ctx.fabric.load_balancer_unhealthy.remove(&ip);
        }
        let Some((ips, port)) = want else { return };
        let nodes: BTreeMap<String, (bool, u32)> = ctx.hosts.into_iter().flat_map(|h| h.keys()).map(|n| (n.clone(), (false, 0))).collect();
        for ip in ips {
            // A new or reconfigured load balancer: no node has passed a check yet.
            if let std::collections::btree_map::Entry::Vacant(slot) = self.balancers.entry(ip.clone()) {
                let b = slot.insert(Balancer { service: key.clone(), port, nodes: nodes.clone() });
                ctx.fabric.load_balancer_unhealthy.insert(ip, b.unhealthy());
            }
        }
        if !self.armed {
            self.armed = true;
            ctx.after_periodic(HEALTH_CHECK_INTERVAL_MS, CHECK);
        }
    }

    /// One round of health checks.
    fn check(&mut self, ctx: &mut Ctx) {
        let Some(hosts) = ctx.hosts else { return };
        let nodes: Vec<String> = hosts.keys().cloned().collect();
        for (ip, b) in self.balancers.iter_mut() {
            b.nodes.retain(|n, _| nodes.contains(n));
            for node in &nodes {
                let passed = kubesim_runtime::net::health_check(hosts, ctx.fabric, ip, node, b.port, HEALTH_CHECK_PATH, ctx.now) == Some(200);
                let (healthy, failures) = b.nodes.entry(node.clone()).or_insert((false, 0));
                if passed {
                    // healthy_threshold 1.
                    (*healthy, *failures) = (true, 0);
                } else {
                    *failures += 1;
                    if *failures >= UNHEALTHY_THRESHOLD {
                        *healthy = false;
                    }
                }
            }
            let unhealthy = b.unhealthy();
            if ctx.fabric.load_balancer_unhealthy.get(ip) != Some(&unhealthy) {
                ctx.fabric.load_balancer_unhealthy.insert(ip.clone(), unhealthy);
            }
        }
    }
}

impl Component for LoadBalancers {
    fn name(&self) -> &str {
        "load-balancers"
    }

    fn interests(&self) -> Vec<Interest> {
        vec![Interest { resource: ("", "services"), filter: WatchFilter::All }]
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let services: Vec<_> = ctx.api.store().list(("", "services"), None).cloned().collect();
        for o in services {
            self.apply((o.namespace().to_string(), o.name().to_string()), Some(&o), ctx);
        }
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        let key = (event.object.namespace().to_string(), event.object.name().to_string());
        let deleted = event.event_type == kubesim_store::EventType::Deleted;
        self.apply(key, (!deleted).then_some(event.object.as_ref()), ctx);
    }

    fn on_timer(&mut self, _token: u64, ctx: &mut Ctx) {
        if self.balancers.is_empty() {
            self.armed = false;
            return;
        }
        self.check(ctx);
        ctx.after_periodic(HEALTH_CHECK_INTERVAL_MS, CHECK);
    }
}
