//! The node's Service rules as kube-proxy programs them (iptables mode): which Service VIPs and
//! node ports exist on this host and where a connection to one is DNAT-ed, dropped or rejected.
//! kube-proxy writes the table at each sync (iptables-restore); packets leaving this host's pods,
//! and packets entering it from outside (node ports, load-balancer and external IPs), are
//! rewritten through it. The table also holds the CNI portmap plugin's `CNI-HOSTPORT-DNAT`
//! rules (a pod's `hostPort` on the node's address), which CNI ADD and DEL write and
//! kube-proxy's syncs leave in place, and the `recent` match's lists that implement
//! `sessionAffinity: ClientIP` (kernel state: a sync keeps them, a reboot loses them).
//!
//! One [`ServicePort`] per Service port holds what syncProxyRules turns into chains: its
//! addresses, traffic policies, affinity and the endpoints CategorizeEndpoints chose (the
//! cluster-policy ones behind `KUBE-SVC-…`, the local-policy ones behind `KUBE-SVL-…`).
//! [`ServiceTable::dnat`] walks those chains as netfilter does: `KUBE-SERVICES` (cluster IP,
//! external IP, load-balancer IP), `KUBE-NODEPORTS` for the node's own addresses, `KUBE-FW-…`
//! (`loadBalancerSourceRanges`), `KUBE-EXT-…` (the external traffic policy, with upstream's
//! short-circuit of pod and node traffic to the cluster-wide endpoints), then the filter table's
//! verdict for what was not DNAT-ed: REJECT when the Service has no endpoints at all, DROP when
//! it has endpoints but none this traffic may use (`has no local endpoints`, or a source
//! outside `loadBalancerSourceRanges`).
//!
//! Endpoint choice: iptables picks with `statistic --mode random --probability 1/(n-i)`;
//! kubesim picks by a hash of the connection (source address and port, destination), so a
//! history is reproducible and consecutive connections spread uniformly over the endpoints (the
//! FNV-1a hash is finished with splitmix64's mixer: FNV's low bits depend only on the low bits
//! of the input bytes, so with an even number of endpoints a client whose source ports advance
//! by two always reached the same one). With `sessionAffinity: ClientIP` the `recent` rules
//! come first, as upstream writes them: a client address seen by an endpoint's `KUBE-SEP-…`
//! list within `timeoutSeconds` goes back to it (`--rcheck --seconds N --reap`), every
//! connection DNAT-ed to an endpoint refreshes its entry (`--set`), and a list goes with its
//! endpoint's chain.

use std::collections::BTreeMap;

/// Whether an address is in the Service CIDR (kubeadm's serviceSubnet 10.96.0.0/12): a
/// ClusterIP, as opposed to an external, load-balancer or pod address.
pub fn in_service_cidr(ip: &str) -> bool {
    let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    matches!(octets.as_slice(), [10, b, _, _] if (96..112).contains(b))
}

/// An IPv4 address as a number.
pub fn ipv4(ip: &str) -> Option<u32> {
    let mut out = 0u32;
    let mut parts = 0;
    for part in ip.split('.') {
        out = (out << 8) | u32::from(part.parse::<u8>().ok()?);
        parts += 1;
    }
    (parts == 4).then_some(out)
}

/// An IPv4 CIDR (`a.b.c.d/n`, surrounding whitespace ignored as kube-proxy's
/// ParseCIDRSloppy of the trimmed string does) as its network and prefix length.
pub fn parse_cidr(cidr: &str) -> Option<(u32, u32)> {
    let (ip, bits) = cidr.trim().split_once('/')?;
    let bits: u32 = bits.parse().ok().filter(|b| *b <= 32)?;
    Some((ipv4(ip)? & mask(bits), bits))
}

fn mask(bits: u32) -> u32 {
    if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    }
}

/// A CIDR in Go's `IPNet.String()` form: the network address and prefix (`203.0.113.0/25`).
pub fn normalize_cidr(cidr: &str) -> Option<String> {
    let (net, bits) = parse_cidr(cidr)?;
    Some(format!("{}/{bits}", std::net::Ipv4Addr::from(net)))
}

/// Whether `ip` is inside `cidr` (false when either does not parse).
pub fn cidr_contains(cidr: &str, ip: &str) -> bool {
    match (parse_cidr(cidr), ipv4(ip)) {
        (Some((net, bits)), Some(ip)) => ip & mask(bits) == net,
        _ => false,
    }
}

/// An endpoint: (pod IP, target port).
pub type EndpointAddr = (String, u16);

/// kube-proxy's endpoint order: by the `ip:port` string (byEndpoint), so `10.244.0.10:80`
/// comes before `10.244.0.2:80`.
pub fn sort_endpoints(endpoints: &mut [EndpointAddr]) {
    endpoints.sort_by_cached_key(|(ip, port)| format!("{ip}:{port}"));
}

/// One Service port as kube-proxy programs it (servicePortInfo plus CategorizeEndpoints' result).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServicePort {
    /// The ServicePortName, `namespace/name:port-name` (`namespace/name` for an unnamed port):
    /// the chain comment, and with the protocol the chain-name hash.
    pub name: String,
    /// UDP (else TCP).
    pub udp: bool,
    /// The cluster IP.
    pub cluster_ip: String,
    /// The Service port.
    pub port: u16,
    /// The node port, if the Service has one.
    pub node_port: Option<u16>,
    /// `spec.externalIPs` (IPv4).
    pub external_ips: Vec<String>,
    /// The load-balancer ingress IPs (`ipMode: VIP`).
    pub load_balancer_ips: Vec<String>,
    /// `loadBalancerSourceRanges`, normalized (`203.0.113.0/25`); invalid ones dropped.
    pub source_ranges: Vec<String>,
    /// `healthCheckNodePort` (LoadBalancer with `externalTrafficPolicy: Local` only).
    pub health_check_node_port: Option<u16>,
    /// `internalTrafficPolicy: Local`.
    pub internal_local: bool,
    /// `externalTrafficPolicy: Local` (on an externally accessible Service).
    pub external_local: bool,
    /// `sessionAffinity: ClientIP`: its `timeoutSeconds`.
    pub affinity_seconds: Option<u32>,
    /// The Cluster-policy endpoints (`KUBE-SVC-…`), in kube-proxy's order; empty when the port
    /// never uses them.
    pub cluster_endpoints: Vec<EndpointAddr>,
    /// The Local-policy endpoints (`KUBE-SVL-…`): this node's; empty when unused.
    pub local_endpoints: Vec<EndpointAddr>,
    /// Whether the Service has usable endpoints anywhere in the cluster (hasAnyEndpoints).
    pub has_endpoints: bool,
    /// How many endpoints kube-proxy knows for the port, usable or not (large-cluster mode
    /// counts them).
    pub endpoint_count: usize,
}

impl ServicePort {
    /// ExternallyAccessible: a node port, a load-balancer IP or an external IP.
    pub fn externally_accessible(&self) -> bool {
        self.node_port.is_some() || !self.load_balancer_ips.is_empty() || !self.external_ips.is_empty()
    }

    /// hasInternalEndpoints: cluster-IP traffic has endpoints to go to.
    pub fn has_internal_endpoints(&self) -> bool {
        self.has_endpoints && (!self.internal_local || !self.local_endpoints.is_empty())
    }

    /// hasExternalEndpoints: external traffic from outside the node has endpoints to go to.
    pub fn has_external_endpoints(&self) -> bool {
        self.has_endpoints && (!self.external_local || !self.local_endpoints.is_empty())
    }

    /// Whether the `KUBE-EXT-…` chain exists (it does even without external endpoints, for the
    /// short-circuit of local traffic).
    pub fn uses_external_chain(&self) -> bool {
        self.has_endpoints && self.externally_accessible()
    }

    /// Whether the `KUBE-FW-…` chain exists (`loadBalancerSourceRanges` on a load balancer).
    pub fn uses_firewall_chain(&self) -> bool {
        self.has_endpoints && !self.load_balancer_ips.is_empty() && !self.source_ranges.is_empty()
    }

    /// The endpoints with a `KUBE-SEP-…` chain on this node (allLocallyReachableEndpoints).
    pub fn reachable_endpoints(&self) -> Vec<EndpointAddr> {
        let mut all: Vec<EndpointAddr> = self.cluster_endpoints.iter().chain(&self.local_endpoints).cloned().collect();
        sort_endpoints(&mut all);
        all.dedup();
        all
    }

    /// Whether a connection from `src` to load-balancer IP `dst` passes `KUBE-FW-…`: a source
    /// range holds the source, or (a range holding this node's address) it comes from the
    /// load-balancer IP itself.
    pub fn source_allowed(&self, src: &str, node_ip: &str) -> bool {
        self.source_ranges.iter().any(|r| cidr_contains(r, src))
            || (self.source_ranges.iter().any(|r| cidr_contains(r, node_ip)) && self.load_balancer_ips.iter().any(|ip| ip == src))
    }
}

/// How an address entered `KUBE-SERVICES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Entry {
    /// `"<spn> cluster IP"`: the internal traffic policy.
    ClusterIp,
    /// `"<spn> external IP"`: through `KUBE-EXT-…`.
    ExternalIp,
    /// `"<spn> loadbalancer IP"`: through `KUBE-FW-…` (with source ranges) and `KUBE-EXT-…`.
    LoadBalancer,
}

/// Where a connection to a destination goes after the host's rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dnat {
    /// Not a Service address: routed as addressed.
    Unchanged,
    /// DNAT to this endpoint.
    To {
        /// The endpoint's pod IP.
        ip: String,
        /// Its target port.
        port: u16,
        /// The Service port's chain comment.
        service: String,
        /// The chains jumped to `KUBE-MARK-MASQ`: `KUBE-POSTROUTING` masquerades the
        /// connection as it leaves this node ([`crate::Host::masquerade_address`]).
        masquerade: bool,
    },
    /// A Service with no usable endpoints anywhere: the filter table's REJECT (ICMP port
    /// unreachable, so TCP sees "connection refused").
    Reject {
        /// The Service port's chain comment.
        service: String,
    },
    /// A Service with endpoints none of which this traffic may use (`has no local endpoints`,
    /// or a source outside `loadBalancerSourceRanges`): the filter table's DROP, so the client
    /// waits out its timeout.
    Drop {
        /// The Service port's chain comment.
        service: String,
    },
}

/// One `hostPort` mapping the portmap plugin set up for a sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort {
    /// The pod's IP.
    pub ip: String,
    /// The container port.
    pub port: u16,
    /// The sandbox that asked for it (CNI DEL removes its mappings).
    pub sandbox: String,
    /// `namespace/name` of the pod (shown where a Service name would be).
    pub pod: String,
}

/// xt_recent's `ip_list_tot`: the entries one list keeps; a new address evicts the least
/// recently seen one.
pub const RECENT_LIST_MAX: usize = 200;

/// The `recent` match's lists, one per `KUBE-SEP-…` chain (named by the Service port and the
/// endpoint's `ip:port`): client address → when it was last `--set` (virtual ms).
pub type RecentLists = BTreeMap<(String, String), BTreeMap<String, u64>>;

/// The table kube-proxy last synced into this host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceTable {
    /// The Service ports by ServicePortName.
    pub services: BTreeMap<String, ServicePort>,
    /// `KUBE-SERVICES`' addresses by (address, port, udp): the Service port that owns each and
    /// how it entered (an address two Services claim goes to the one synced last).
    pub vips: BTreeMap<(String, u16, bool), (String, Entry)>,
    /// `KUBE-NODEPORTS` by (port, udp): they match any local node address.
    pub node_ports: BTreeMap<(u16, bool), String>,
    /// kube-proxy's local traffic detector (`--cluster-cidr`): pod sources; empty: none.
    pub cluster_cidr: String,
    /// When kube-proxy last wrote the table (virtual ms), `None` before its first sync.
    pub synced_at: Option<u64>,
    /// The portmap plugin's hostPort rules by (host port, udp); they match the node's address
    /// (`-m addrtype --dst-type LOCAL`) and come first in PREROUTING.
    pub host_ports: BTreeMap<(u16, bool), HostPort>,
    /// The `recent` lists of ClientIP affinity.
    pub recent: RecentLists,
}

impl ServiceTable {
    /// Writes one Service port's rules, replacing its previous ones (its addresses' entries
    /// follow; the affinity lists of endpoints it no longer has go with their chains).
    pub fn insert(&mut self, sp: ServicePort) {
        let name = sp.name.clone();
        if let Some(old) = self.services.get(&name) {
            if old == &sp {
                return;
            }
            let same_addresses = old.udp == sp.udp
                && old.cluster_ip == sp.cluster_ip
                && old.port == sp.port
                && old.node_port == sp.node_port
                && old.external_ips == sp.external_ips
                && old.load_balancer_ips == sp.load_balancer_ips;
            if !same_addresses {
                self.unindex(&name);
                self.index(&sp);
            }
        } else {
            self.index(&sp);
        }
        self.prune_recent(&name, Some(&sp));
        self.services.insert(name, sp);
    }

    /// Removes one Service port's rules; whether it had any.
    pub fn remove(&mut self, name: &str) -> bool {
        if !self.services.contains_key(name) {
            return false;
        }
        self.unindex(name);
        self.prune_recent(name, None);
        self.services.remove(name);
        true
    }

    /// Replaces every Service port's rules (a full sync); hostPort rules and the affinity lists
    /// of endpoints that keep their chains stay.
    pub fn replace_all(&mut self, services: impl IntoIterator<Item = ServicePort>) {
        let host_ports = std::mem::take(&mut self.host_ports);
        let mut recent = std::mem::take(&mut self.recent);
        let (cluster_cidr, synced_at) = (std::mem::take(&mut self.cluster_cidr), self.synced_at);
        *self = ServiceTable { cluster_cidr, synced_at, host_ports, ..ServiceTable::default() };
        for sp in services {
            self.index(&sp);
            self.services.insert(sp.name.clone(), sp);
        }
        recent.retain(|(name, endpoint), _| {
            self.services
                .get(name)
                .is_some_and(|sp| sp.affinity_seconds.is_some() && sp.reachable_endpoints().iter().any(|(ip, port)| &format!("{ip}:{port}") == endpoint))
        });
        self.recent = recent;
    }

    fn index(&mut self, sp: &ServicePort) {
        let name = &sp.name;
        self.vips.insert((sp.cluster_ip.clone(), sp.port, sp.udp), (name.clone(), Entry::ClusterIp));
        for ip in &sp.external_ips {
            self.vips.insert((ip.clone(), sp.port, sp.udp), (name.clone(), Entry::ExternalIp));
        }
        for ip in &sp.load_balancer_ips {
            self.vips.insert((ip.clone(), sp.port, sp.udp), (name.clone(), Entry::LoadBalancer));
        }
        if let Some(np) = sp.node_port {
            self.node_ports.insert((np, sp.udp), name.clone());
        }
    }

    fn unindex(&mut self, name: &str) {
        let Some(sp) = self.services.get(name) else { return };
        let mut keys = vec![(sp.cluster_ip.clone(), sp.port, sp.udp)];
        keys.extend(sp.external_ips.iter().chain(&sp.load_balancer_ips).map(|ip| (ip.clone(), sp.port, sp.udp)));
        for k in keys {
            if self.vips.get(&k).is_some_and(|(owner, _)| owner == name) {
                self.vips.remove(&k);
            }
        }
        if let Some(np) = sp.node_port {
            if self.node_ports.get(&(np, sp.udp)).is_some_and(|owner| owner == name) {
                self.node_ports.remove(&(np, sp.udp));
            }
        }
    }

    /// Drops the affinity lists of `name` whose `KUBE-SEP-…` chain (or `recent` rule) is gone.
    fn prune_recent(&mut self, name: &str, now: Option<&ServicePort>) {
        let keep: Vec<String> = match now {
            Some(sp) if sp.affinity_seconds.is_some() => sp.reachable_endpoints().iter().map(|(ip, port)| format!("{ip}:{port}")).collect(),
            _ => Vec::new(),
        };
        let stale: Vec<(String, String)> = self
            .recent
            .range((name.to_string(), String::new())..)
            .take_while(|((n, _), _)| n == name)
            .filter(|((_, ep), _)| !keep.contains(ep))
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            self.recent.remove(&k);
        }
    }

    /// The rules' verdict on a connection from `src` to `dst:port`, recording it in the
    /// affinity lists as the SEP chain's `--set` does. `node_ip` is this host's address (node
    /// ports match it and loopback); `now` the virtual time (ms).
    pub fn dnat(&mut self, src: (&str, u16), dst: &str, port: u16, udp: bool, node_ip: &str, now: u64) -> Dnat {
        let (verdict, set) = self.decide(src, dst, port, udp, node_ip, now);
        if let Some(key) = set {
            let list = self.recent.entry(key).or_default();
            if !list.contains_key(src.0) && list.len() >= RECENT_LIST_MAX {
                if let Some(oldest) = list.iter().min_by_key(|(client, t)| (**t, (*client).clone())).map(|(c, _)| c.clone()) {
                    list.remove(&oldest);
                }
            }
            list.insert(src.0.to_string(), now);
        }
        verdict
    }

    /// [`ServiceTable::dnat`]'s verdict without recording anything (a measurement, not traffic).
    pub fn lookup(&self, src: (&str, u16), dst: &str, port: u16, udp: bool, node_ip: &str, now: u64) -> Dnat {
        self.decide(src, dst, port, udp, node_ip, now).0
    }

    /// Whether this node has a `KUBE-SERVICES` rule for `ip:port` (a load balancer forwards a
    /// connection for its address only to nodes whose kube-proxy wrote one).
    pub fn has_address(&self, ip: &str, port: u16, udp: bool) -> bool {
        self.vips.contains_key(&(ip.to_string(), port, udp))
    }

    fn decide(&self, src: (&str, u16), dst: &str, port: u16, udp: bool, node_ip: &str, now: u64) -> (Dnat, Option<(String, String)>) {
        if dst == node_ip {
            if let Some(hp) = self.host_ports.get(&(port, udp)) {
                return (Dnat::To { ip: hp.ip.clone(), port: hp.port, service: format!("hostPort {port} → {}", hp.pod), masquerade: false }, None);
            }
        }
        let local_dst = dst == node_ip || dst == "127.0.0.1";
        let (name, entry) = match self.vips.get(&(dst.to_string(), port, udp)) {
            Some((name, entry)) => (name, Some(*entry)),
            None if local_dst => match self.node_ports.get(&(port, udp)) {
                Some(name) => (name, None),
                None => return (Dnat::Unchanged, None),
            },
            None => return (Dnat::Unchanged, None),
        };
        let Some(sp) = self.services.get(name) else { return (Dnat::Unchanged, None) };
        let service = sp.name.clone();
        // No usable endpoint anywhere: no nat rule matches, the filter table REJECTs.
        if !sp.has_endpoints {
            return (Dnat::Reject { service }, None);
        }
        // kube-proxy's local traffic detector (`-s <clusterCIDR>`): the source is a pod.
        let pod_source = !self.cluster_cidr.is_empty() && cidr_contains(&self.cluster_cidr, src.0);
        // The chain the connection reaches and whether a rule on the way jumped to KUBE-MARK-MASQ.
        let (chain, mut masquerade) = match entry {
            Some(Entry::ClusterIp) if !sp.has_internal_endpoints() => return (Dnat::Drop { service }, None),
            // The internal chain's first rule: `… cluster IP" -d <clusterIP> ! -s <clusterCIDR>
            // -j KUBE-MARK-MASQ` masquerades off-cluster clients of the cluster IP (the node
            // itself, a host-network pod); pods keep their address. No rule without a detector.
            Some(Entry::ClusterIp) => {
                let chain = if sp.internal_local { &sp.local_endpoints } else { &sp.cluster_endpoints };
                (chain, !self.cluster_cidr.is_empty() && !pod_source)
            }
            // KUBE-FW: sources outside the ranges fall through, KUBE-PROXY-FIREWALL drops them.
            Some(Entry::LoadBalancer) if sp.uses_firewall_chain() && !sp.source_allowed(src.0, node_ip) => return (Dnat::Drop { service }, None),
            // KUBE-EXT.
            _ => {
                let local_source = src.0 == node_ip || src.0 == "127.0.0.1";
                if !sp.external_local {
                    // "masquerade traffic for <spn> external destinations", then KUBE-SVC.
                    (&sp.cluster_endpoints, true)
                } else if pod_source {
                    // "pod traffic for <spn> external destinations" → KUBE-SVC, unmarked.
                    (&sp.cluster_endpoints, false)
                } else if local_source {
                    // "masquerade LOCAL traffic …" (--src-type LOCAL), then "route LOCAL traffic …".
                    (&sp.cluster_endpoints, true)
                } else if sp.has_external_endpoints() {
                    // KUBE-SVL: the client's address is kept.
                    (&sp.local_endpoints, false)
                } else {
                    return (Dnat::Drop { service }, None);
                }
            }
        };
        if chain.is_empty() {
            return (Dnat::Drop { service }, None);
        }
        let sticky = sp.affinity_seconds.and_then(|seconds| {
            let window = u64::from(seconds) * 1000;
            chain.iter().find(|(ip, port)| {
                self.recent
                    .get(&(sp.name.clone(), format!("{ip}:{port}")))
                    .and_then(|list| list.get(src.0))
                    .is_some_and(|seen| now.saturating_sub(*seen) <= window)
            })
        });
        let (ip, ep_port) = match sticky {
            Some(ep) => ep.clone(),
            None => {
                let key = fnv(&[src.0.as_bytes(), &src.1.to_be_bytes(), dst.as_bytes(), &port.to_be_bytes()]);
                chain[(key % chain.len() as u64) as usize].clone()
            }
        };
        // The endpoint chain's first rule, `-s <endpoint IP> -j KUBE-MARK-MASQ`: a pod reaching
        // itself through the Service (hairpin) is masqueraded.
        masquerade |= ip == src.0;
        let set = sp.affinity_seconds.map(|_| (sp.name.clone(), format!("{ip}:{ep_port}")));
        (Dnat::To { ip, port: ep_port, service, masquerade }, set)
    }
}

fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    // splitmix64's finalizer: every input bit reaches the low bits the modulo reads.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODE: &str = "172.18.0.2";

    fn web() -> ServicePort {
        ServicePort {
            name: "default/web:http".into(),
            cluster_ip: "10.96.0.20".into(),
            port: 80,
            node_port: Some(30080),
            cluster_endpoints: vec![("10.244.1.2".into(), 8080), ("10.244.2.2".into(), 8080)],
            has_endpoints: true,
            endpoint_count: 2,
            ..ServicePort::default()
        }
    }

    fn table() -> ServiceTable {
        let mut t = ServiceTable { cluster_cidr: "10.244.0.0/16".into(), ..ServiceTable::default() };
        t.insert(web());
        t.insert(ServicePort { name: "default/empty".into(), cluster_ip: "10.96.0.30".into(), port: 80, ..ServicePort::default() });
        t
    }

    #[test]
    fn cluster_ips_and_node_ports_are_rewritten_and_spread() {
        let mut t = table();
        let mut seen = std::collections::BTreeSet::new();
        for port in 40_000..40_020 {
            match t.dnat(("10.244.0.5", port), "10.96.0.20", 80, false, NODE, 0) {
                Dnat::To { ip, port, .. } => {
                    assert_eq!(port, 8080);
                    seen.insert(ip);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(seen.len(), 2, "connections spread over both endpoints");
        assert!(matches!(t.dnat(("1.2.3.4", 1), NODE, 30080, false, NODE, 0), Dnat::To { .. }));
        assert_eq!(t.dnat(("1.2.3.4", 1), "172.18.0.3", 30080, false, NODE, 0), Dnat::Unchanged, "another node's address is routed there");
        assert_eq!(t.dnat(("1.2.3.4", 1), "10.96.0.20", 80, true, NODE, 0), Dnat::Unchanged, "UDP is a different rule");
        assert_eq!(t.dnat(("1.2.3.4", 1), "10.96.0.30", 80, false, NODE, 0), Dnat::Reject { service: "default/empty".into() });
        assert!(t.recent.is_empty(), "no affinity, no lists");
    }

    // iptables' `statistic --mode random --probability 1/n` chains give each endpoint 1/n of the
    // connections; source ports that advance by two (a client alternating a DNS query and a
    // connection) must still reach both of two endpoints about equally.
    #[test]
    fn connections_spread_uniformly_whatever_the_source_port_stride() {
        let t = table();
        for stride in [1u16, 2, 4] {
            let mut counts = std::collections::BTreeMap::new();
            for i in 0..400u16 {
                if let Dnat::To { ip, .. } = t.lookup(("10.244.0.5", 40_000 + i * stride), "10.96.0.20", 80, false, "", 0) {
                    *counts.entry(ip).or_insert(0) += 1;
                }
            }
            assert_eq!(counts.len(), 2, "stride {stride}: {counts:?}");
            assert!(counts.values().all(|c| (160..=240).contains(c)), "stride {stride}: {counts:?}");
        }
    }

    #[test]
    fn host_ports_match_the_node_address_before_node_ports() {
        let mut t = table();
        t.host_ports.insert((80, false), HostPort { ip: "10.244.0.9".into(), port: 80, sandbox: "s".into(), pod: "ingress-nginx/c".into() });
        assert_eq!(
            t.dnat(("172.18.0.1", 1), NODE, 80, false, NODE, 0),
            Dnat::To { ip: "10.244.0.9".into(), port: 80, service: "hostPort 80 → ingress-nginx/c".into(), masquerade: false }
        );
        assert_eq!(t.dnat(("172.18.0.1", 1), "172.18.0.3", 80, false, NODE, 0), Dnat::Unchanged, "another node's address");
        assert!(matches!(t.dnat(("1.2.3.4", 1), NODE, 30080, false, NODE, 0), Dnat::To { port: 8080, .. }));
    }

    /// `internalTrafficPolicy: Local` (upstream's truth table, reference §4.3): a Service with
    /// endpoints, none on this node, DROPs cluster-IP traffic (`has no local endpoints`); one
    /// with no endpoints at all REJECTs it.
    #[test]
    fn internal_traffic_policy_local_drops_without_local_endpoints_and_rejects_without_any() {
        let mut t = table();
        let local = ServicePort { internal_local: true, ..web() };
        t.insert(local.clone());
        assert_eq!(t.dnat(("10.244.0.5", 1), "10.96.0.20", 80, false, NODE, 0), Dnat::Drop { service: "default/web:http".into() });
        t.insert(ServicePort { local_endpoints: vec![("10.244.0.7".into(), 8080)], ..local.clone() });
        for p in 0..20 {
            assert_eq!(
                t.dnat(("10.244.0.5", p), "10.96.0.20", 80, false, NODE, 0),
                Dnat::To { ip: "10.244.0.7".into(), port: 8080, service: "default/web:http".into(), masquerade: false },
                "only the local endpoint"
            );
        }
        t.insert(ServicePort { cluster_endpoints: vec![], has_endpoints: false, ..local });
        assert_eq!(t.dnat(("10.244.0.5", 1), "10.96.0.20", 80, false, NODE, 0), Dnat::Reject { service: "default/web:http".into() });
    }

    /// `externalTrafficPolicy: Local`: traffic from outside to a node port or a load-balancer
    /// IP of a node without local endpoints is dropped; traffic from the node's pods
    /// (`-s <clusterCIDR>`) and from the node itself (`--src-type LOCAL`) is short-circuited to
    /// the cluster-wide endpoints (KUBE-EXT → KUBE-SVC).
    #[test]
    fn external_traffic_policy_local_short_circuits_pods_and_the_node() {
        let mut t = table();
        let sp = ServicePort { external_local: true, load_balancer_ips: vec!["1.2.3.4".into()], ..web() };
        t.insert(sp.clone());
        let drop = Dnat::Drop { service: "default/web:http".into() };
        assert_eq!(t.dnat(("203.0.113.9", 1), NODE, 30080, false, NODE, 0), drop, "outside client, node port");
        assert_eq!(t.dnat(("203.0.113.9", 1), "1.2.3.4", 80, false, NODE, 0), drop, "outside client, LB IP");
        assert!(matches!(t.dnat(("10.244.0.5", 1), NODE, 30080, false, NODE, 0), Dnat::To { .. }), "a pod");
        assert!(matches!(t.dnat((NODE, 1), "127.0.0.1", 30080, false, NODE, 0), Dnat::To { .. }), "the node itself");
        assert!(matches!(t.dnat(("10.244.0.5", 1), "1.2.3.4", 80, false, NODE, 0), Dnat::To { .. }), "a pod to the LB IP");
        assert!(matches!(t.dnat(("10.244.0.5", 1), "10.96.0.20", 80, false, NODE, 0), Dnat::To { .. }), "cluster IP: Cluster policy");
        // With a local endpoint, outside traffic goes to it only (the source is kept).
        t.insert(ServicePort { local_endpoints: vec![("10.244.0.7".into(), 8080)], ..sp });
        for p in 0..20 {
            assert!(matches!(t.dnat(("203.0.113.9", p), NODE, 30080, false, NODE, 0), Dnat::To { ref ip, .. } if ip == "10.244.0.7"));
        }
    }

    /// `loadBalancerSourceRanges` (KUBE-FW): a load-balancer IP answers sources inside the
    /// ranges only; node ports are not subject to them, as upstream says.
    #[test]
    fn load_balancer_source_ranges_drop_other_sources() {
        let mut t = table();
        t.insert(ServicePort { load_balancer_ips: vec!["5.6.7.8".into()], source_ranges: vec!["203.0.113.0/25".into()], ..web() });
        assert!(matches!(t.dnat(("203.0.113.9", 1), "5.6.7.8", 80, false, NODE, 0), Dnat::To { .. }));
        assert_eq!(t.dnat(("203.0.113.200", 1), "5.6.7.8", 80, false, NODE, 0), Dnat::Drop { service: "default/web:http".into() });
        assert_eq!(t.dnat(("10.244.0.5", 1), "5.6.7.8", 80, false, NODE, 0), Dnat::Drop { service: "default/web:http".into() }, "pods too");
        assert!(matches!(t.dnat(("203.0.113.200", 1), NODE, 30080, false, NODE, 0), Dnat::To { .. }), "node port");
        assert_eq!(normalize_cidr(" 203.0.113.7/25").as_deref(), Some("203.0.113.0/25"));
    }

    /// sessionAffinity ClientIP as the `recent` match does it: the first connection picks an
    /// endpoint, later ones from the client address stick to it until `timeoutSeconds` passed
    /// since its last use, and move only when the endpoint goes.
    #[test]
    fn client_ip_affinity_sticks_until_the_timeout_or_the_endpoint_goes() {
        let mut t = table();
        let sticky = ServicePort { affinity_seconds: Some(10_800), ..web() };
        t.insert(sticky.clone());
        let first = t.dnat(("10.244.0.5", 40_000), "10.96.0.20", 80, false, NODE, 0);
        let Dnat::To { ip: chosen, .. } = first.clone() else { panic!("{first:?}") };
        for (i, port) in (40_001..40_050).enumerate() {
            // Each use refreshes the entry: an hour apart, for two days.
            assert_eq!(t.dnat(("10.244.0.5", port), "10.96.0.20", 80, false, NODE, i as u64 * 3_600_000), first);
        }
        let last_use = 48 * 3_600_000;
        // Another client is placed independently; the lists are per endpoint.
        let other = t.dnat(("10.244.0.6", 40_000), "10.96.0.20", 80, false, NODE, last_use);
        assert!(matches!(other, Dnat::To { .. }));
        // Adding an endpoint does not move the client (a hash of the address would).
        let mut three = sticky.clone();
        three.cluster_endpoints.push(("10.244.3.2".into(), 8080));
        t.insert(three.clone());
        for port in 0..30 {
            assert_eq!(t.dnat(("10.244.0.5", port), "10.96.0.20", 80, false, NODE, last_use), first);
        }
        // After timeoutSeconds without a connection, the client is placed afresh (on any).
        let later = last_use + 10_801_000;
        let mut placed = std::collections::BTreeSet::new();
        for (i, client) in ["10.244.0.5", "10.244.0.8", "10.244.0.9", "10.244.0.10", "10.244.0.11", "10.244.0.12"].iter().enumerate() {
            if let Dnat::To { ip, .. } = t.dnat((client, 41_000 + i as u16), "10.96.0.20", 80, false, NODE, later) {
                placed.insert(ip);
            }
        }
        assert!(placed.len() > 1, "{placed:?}");
        // The chosen endpoint goes: its list goes with its chain, the client moves and sticks.
        let Dnat::To { ip: now_on, .. } = t.dnat(("10.244.0.5", 1), "10.96.0.20", 80, false, NODE, later) else { panic!() };
        let mut fewer = three;
        fewer.cluster_endpoints.retain(|(ip, _)| ip != &now_on);
        t.insert(fewer);
        assert!(!t.recent.keys().any(|(_, ep)| ep.starts_with(&format!("{now_on}:"))), "{:?}", t.recent);
        let moved = t.dnat(("10.244.0.5", 2), "10.96.0.20", 80, false, NODE, later + 1);
        let Dnat::To { ip: moved_to, .. } = moved.clone() else { panic!() };
        assert_ne!(moved_to, now_on);
        for port in 3..30 {
            assert_eq!(t.dnat(("10.244.0.5", port), "10.96.0.20", 80, false, NODE, later + 2), moved);
        }
        let _ = chosen;
        // Affinity off: the lists go.
        t.insert(web());
        assert!(t.recent.is_empty());
    }

    /// Which connections the rules mark for masquerade (the `masquerade` of a DNAT), as the
    /// source-IP tutorial exercises them on a kind node (node 172.18.0.2, pods 10.244.0.0/16,
    /// the workstation 172.18.0.1 outside): pods keep their address on the cluster IP, node ports
    /// and load-balancer addresses are masqueraded with `externalTrafficPolicy: Cluster` and not
    /// with `Local` (whose node without a local endpoint DROPs instead), the node itself is always
    /// masqueraded, and so is a pod reaching itself. Upstream's full table is
    /// TestInternalExternalMasquerade in `crates/proxy/tests/iptables.rs`.
    #[test]
    fn the_rules_mark_the_connections_kube_proxy_masquerades() {
        let masq = |t: &ServiceTable, src: &str, dst: &str, port: u16| match t.lookup((src, 40_000), dst, port, false, NODE, 0) {
            Dnat::To { masquerade, .. } => Some(masquerade),
            _ => None,
        };
        let mut t = table();
        t.insert(ServicePort { load_balancer_ips: vec!["172.18.255.1".into()], ..web() });
        // (source, destination, port, masqueraded; None: not DNAT-ed)
        let cluster: &[(&str, &str, u16, Option<bool>)] = &[
            ("10.244.0.5", "10.96.0.20", 80, Some(false)),
            ("172.18.0.1", NODE, 30080, Some(true)),
            ("172.18.0.1", "172.18.255.1", 80, Some(true)),
            ("10.244.0.5", NODE, 30080, Some(true)),
            (NODE, "10.96.0.20", 80, Some(true)),
            ("127.0.0.1", "127.0.0.1", 30080, Some(true)),
            ("10.244.0.5", "10.96.0.30", 80, None),
        ];
        for &(src, dst, port, want) in cluster {
            assert_eq!(masq(&t, src, dst, port), want, "eTP Cluster: {src} -> {dst}:{port}");
        }
        // Hairpin: an endpoint reaching itself through the cluster IP is marked.
        let mut hairpin = ServiceTable { cluster_cidr: t.cluster_cidr.clone(), ..ServiceTable::default() };
        hairpin.insert(ServicePort { cluster_endpoints: vec![("10.244.1.2".into(), 8080)], endpoint_count: 1, ..web() });
        assert_eq!(masq(&hairpin, "10.244.1.2", "10.96.0.20", 80), Some(true), "hairpin");
        assert_eq!(masq(&hairpin, "10.244.1.3", "10.96.0.20", 80), Some(false), "another pod");
        let local =
            ServicePort { external_local: true, load_balancer_ips: vec!["172.18.255.1".into()], local_endpoints: vec![("10.244.0.7".into(), 8080)], ..web() };
        t.insert(local.clone());
        let local_flows: &[(&str, &str, u16, Option<bool>)] = &[
            ("172.18.0.1", NODE, 30080, Some(false)),
            ("172.18.0.1", "172.18.255.1", 80, Some(false)),
            ("10.244.0.5", NODE, 30080, Some(false)),
            (NODE, NODE, 30080, Some(true)),
            ("10.244.0.5", "10.96.0.20", 80, Some(false)),
        ];
        for &(src, dst, port, want) in local_flows {
            assert_eq!(masq(&t, src, dst, port), want, "eTP Local: {src} -> {dst}:{port}");
        }
        t.insert(ServicePort { local_endpoints: vec![], ..local });
        assert_eq!(t.lookup(("172.18.0.1", 1), NODE, 30080, false, NODE, 0), Dnat::Drop { service: "default/web:http".into() }, "no local endpoint");
        // Without a local traffic detector the cluster IP masquerades nobody.
        t.cluster_cidr.clear();
        assert_eq!(masq(&t, NODE, "10.96.0.20", 80), Some(false));
    }

    #[test]
    fn a_list_keeps_two_hundred_clients() {
        let mut t = table();
        t.insert(ServicePort { affinity_seconds: Some(10_800), cluster_endpoints: vec![("10.244.1.2".into(), 8080)], ..web() });
        for i in 0..=RECENT_LIST_MAX {
            t.dnat((&format!("10.244.{}.{}", i / 200, i % 200 + 1), 1), "10.96.0.20", 80, false, NODE, i as u64);
        }
        let list = &t.recent[&("default/web:http".to_string(), "10.244.1.2:8080".to_string())];
        assert_eq!(list.len(), RECENT_LIST_MAX);
        assert!(!list.contains_key("10.244.0.1"), "the least recently seen went");
    }
}
