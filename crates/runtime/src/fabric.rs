//! The network fabric between the control plane, the hosts and the pods (turmoil's shape: a
//! router that knows addresses and links, not a socket layer): which address belongs to which
//! host or pod, whether one end can reach the other, and how long a packet takes.
//!
//! It answers reachability for the API server (partitions) and routes for probes and for every
//! packet [`crate::net`] delivers (after kube-proxy's rules); it holds the cluster DNS view.
//! It holds the NetworkPolicy verdicts too ([`crate::net::PolicyEnforcer`]).

use kubesim_api::Millis;
use kubesim_host::Hosts;
use std::collections::{BTreeMap, BTreeSet};

/// One-way latency of a packet between two hosts (kind's docker bridge: sub-millisecond;
/// the model rounds to whole virtual milliseconds).
pub const HOST_TO_HOST_LATENCY_MS: Millis = 1;

/// What an address belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A node's InternalIP.
    Node {
        /// The host.
        host: String,
    },
    /// A pod's IP on a host.
    Pod {
        /// The host.
        host: String,
        /// The pod's uid.
        pod_uid: String,
    },
}

impl Endpoint {
    /// The host the address lives on.
    pub fn host(&self) -> &str {
        match self {
            Endpoint::Node { host } | Endpoint::Pod { host, .. } => host,
        }
    }
}

/// Why a packet does not arrive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unreachable {
    /// No interface has the address.
    NoRoute,
    /// The destination host has no power.
    HostDown,
    /// A partition separates the two ends.
    Partitioned,
}

/// A route a packet takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Where it arrives.
    pub to: Endpoint,
    /// One-way latency.
    pub latency_ms: Millis,
}

/// The fabric's state.
#[derive(Clone, Debug, Default)]
pub struct Fabric {
    /// Hosts cut off from the control plane (the API server).
    partitioned: BTreeSet<String>,
    /// Every assigned address.
    addresses: BTreeMap<String, Endpoint>,
    /// What the cluster DNS servers (CoreDNS's `kubernetes` plugin) know, kept current by their
    /// informer; queries reaching a CoreDNS pod are answered from it ([`crate::net`]).
    pub cluster_dns: Option<std::sync::Arc<dyn crate::net::DnsServer>>,
    /// The NetworkPolicy verdicts of the CNI's policy agents, kept current by their informer
    /// (`None` while no NetworkPolicy exists: every flow is admitted).
    pub network_policy: Option<std::sync::Arc<dyn crate::net::PolicyEnforcer>>,
    /// Links that drop every packet: (from host, to host), one direction each.
    cut_links: BTreeSet<(String, String)>,
    /// Per-host impairments of packets leaving or reaching the host.
    impairments: BTreeMap<String, Impairment>,
    /// The CoreDNS processes hang: queries reaching them get no answer.
    pub dns_outage: bool,
    /// The ingress-nginx controller's rendered configuration, kept current by its informer;
    /// requests reaching a controller pod on 80/443 are routed by it ([`crate::ingress`]).
    pub ingress: Option<std::sync::Arc<crate::ingress::Config>>,
    /// The load balancers' health checks, kept by the load balancer model: each load-balancer
    /// address → the nodes failing its checks. A node not listed passes (a backend is healthy
    /// until its checks fail); the load balancer forwards to the nodes that pass.
    pub load_balancer_unhealthy: BTreeMap<String, BTreeSet<String>>,
}

/// A host's network impairment (the `packet-loss` and `latency` faults).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Impairment {
    /// Percent of packets dropped (0–100).
    pub loss_percent: u8,
    /// Added one-way latency.
    pub extra_latency_ms: Millis,
}

/// What the link faults make of one packet between two hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkVerdict {
    /// It arrives, this much later than the base latency (one way).
    Delayed(Millis),
    /// It is lost (the link is cut, or the loss draw dropped it).
    Dropped,
}

impl Fabric {
    /// Registers an address (a node joining, CNI ADD).
    pub fn assign(&mut self, ip: &str, endpoint: Endpoint) {
        self.addresses.insert(ip.to_string(), endpoint);
    }

    /// Releases an address (CNI DEL) if it still belongs to `endpoint`.
    pub fn release(&mut self, ip: &str, endpoint: &Endpoint) {
        if self.addresses.get(ip) == Some(endpoint) {
            self.addresses.remove(ip);
        }
    }

    /// Who has an address.
    pub fn locate(&self, ip: &str) -> Option<&Endpoint> {
        self.addresses.get(ip)
    }

    /// Every assigned address, in address order.
    pub fn addresses(&self) -> impl Iterator<Item = (&String, &Endpoint)> {
        self.addresses.iter()
    }

    /// Cuts a host off from the control plane; false if it already was.
    pub fn partition(&mut self, host: &str) -> bool {
        self.partitioned.insert(host.to_string())
    }

    /// Reconnects a host to the control plane; false if it was not cut off.
    pub fn heal(&mut self, host: &str) -> bool {
        self.partitioned.remove(host)
    }

    /// Whether a host reaches the control plane.
    pub fn reaches_control_plane(&self, host: &str) -> bool {
        !self.partitioned.contains(host)
    }

    /// Hosts cut off from the control plane.
    pub fn partitioned_hosts(&self) -> impl Iterator<Item = &String> {
        self.partitioned.iter()
    }

    /// Cuts the link from `from` to `to` (packets that way are dropped); false if it was.
    pub fn cut_link(&mut self, from: &str, to: &str) -> bool {
        self.cut_links.insert((from.to_string(), to.to_string()))
    }

    /// Every cut link, in order.
    pub fn cut_links(&self) -> impl Iterator<Item = &(String, String)> {
        self.cut_links.iter()
    }

    /// Sets a host's impairment (the default clears it).
    pub fn impair(&mut self, host: &str, impairment: Impairment) {
        if impairment == Impairment::default() {
            self.impairments.remove(host);
        } else {
            self.impairments.insert(host.to_string(), impairment);
        }
    }

    /// A host's impairment.
    pub fn impairment(&self, host: &str) -> Option<&Impairment> {
        self.impairments.get(host)
    }

    /// Clears every link fault, impairment and the DNS outage.
    pub fn heal_links(&mut self) {
        self.cut_links.clear();
        self.impairments.clear();
        self.dns_outage = false;
    }

    /// The link faults' verdict on one packet from `from` to `to` (host names; `""` is the
    /// workstation). `draw` identifies the packet (a hash of its addresses, ports and send
    /// time): the loss decision is a function of it, so a history is reproducible without
    /// consuming the world's RNG.
    pub fn link(&self, from: &str, to: &str, draw: u64) -> LinkVerdict {
        // A call needs its reply: a cut in either direction loses it.
        if from != to && (self.cut_links.contains(&(from.to_string(), to.to_string())) || self.cut_links.contains(&(to.to_string(), from.to_string()))) {
            return LinkVerdict::Dropped;
        }
        let mut delay = 0;
        for (i, host) in [from, to].into_iter().enumerate() {
            if i == 1 && from == to {
                break;
            }
            if let Some(imp) = self.impairments.get(host) {
                if imp.loss_percent > 0 && (draw.rotate_left(17 * i as u32) % 100) < u64::from(imp.loss_percent) {
                    return LinkVerdict::Dropped;
                }
                delay += imp.extra_latency_ms;
            }
        }
        LinkVerdict::Delayed(delay)
    }

    /// The route from `from_host` (`None`: the control plane) to an address.
    pub fn route(&self, hosts: &Hosts, from_host: Option<&str>, to_ip: &str) -> Result<Route, Unreachable> {
        let to = self.addresses.get(to_ip).ok_or(Unreachable::NoRoute)?;
        if !hosts.get(to.host()).is_some_and(|h| h.powered) {
            return Err(Unreachable::HostDown);
        }
        let latency_ms = match from_host {
            Some(from) if from == to.host() => 0,
            Some(from) => {
                if !hosts.get(from).is_some_and(|h| h.powered) {
                    return Err(Unreachable::HostDown);
                }
                HOST_TO_HOST_LATENCY_MS
            }
            None => {
                if self.partitioned.contains(to.host()) {
                    return Err(Unreachable::Partitioned);
                }
                HOST_TO_HOST_LATENCY_MS
            }
        };
        Ok(Route { to: to.clone(), latency_ms })
    }

    /// Whether a packet from `host` to `ip` stays on that host and arrives: the route a kubelet's
    /// probes take to its own pods (no partition or power loss can come between them).
    pub fn route_local(&self, host: &str, ip: &str) -> Result<Route, Unreachable> {
        match self.addresses.get(ip) {
            Some(to) if to.host() == host => Ok(Route { to: to.clone(), latency_ms: 0 }),
            _ => Err(Unreachable::NoRoute),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_host::Host;

    fn hosts() -> Hosts {
        let mut hosts = Hosts::new();
        for (i, name) in ["node-1", "node-2"].iter().enumerate() {
            hosts.insert(name.to_string(), Host::new(name, i as u32));
        }
        hosts
    }

    #[test]
    fn routes_know_local_remote_down_and_partitioned_destinations() {
        let mut hosts = hosts();
        let mut fabric = Fabric::default();
        fabric.assign("10.244.0.2", Endpoint::Pod { host: "node-1".into(), pod_uid: "a".into() });
        fabric.assign("10.244.1.2", Endpoint::Pod { host: "node-2".into(), pod_uid: "b".into() });
        assert_eq!(fabric.route(&hosts, Some("node-1"), "10.244.0.2").unwrap().latency_ms, 0);
        assert_eq!(fabric.route(&hosts, Some("node-1"), "10.244.1.2").unwrap().latency_ms, HOST_TO_HOST_LATENCY_MS);
        assert_eq!(fabric.route(&hosts, Some("node-1"), "10.244.9.9"), Err(Unreachable::NoRoute));
        fabric.partition("node-2");
        assert_eq!(fabric.route(&hosts, None, "10.244.1.2"), Err(Unreachable::Partitioned));
        assert!(fabric.route(&hosts, Some("node-1"), "10.244.1.2").is_ok(), "a control-plane partition leaves node-to-node links up");
        hosts.get_mut("node-2").unwrap().power_off(0);
        assert_eq!(fabric.route(&hosts, Some("node-1"), "10.244.1.2"), Err(Unreachable::HostDown));
        fabric.release("10.244.0.2", &Endpoint::Pod { host: "node-1".into(), pod_uid: "a".into() });
        assert_eq!(fabric.locate("10.244.0.2"), None);
    }
}
