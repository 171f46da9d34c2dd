//! The node's Service rules as kube-proxy programs them (iptables mode): which Service VIPs and
//! node ports exist on this host and where a connection to one is DNAT-ed. kube-proxy writes the
//! whole table at each sync (iptables-restore); packets leaving this host's pods are rewritten
//! through it before they travel the fabric. The table also holds the CNI portmap plugin's
//! `CNI-HOSTPORT-DNAT` rules (a pod's `hostPort` on the node's address), which CNI ADD and DEL
//! write and kube-proxy's syncs leave in place.
//!
//! Endpoint choice: iptables picks with `statistic --mode random --probability 1/n`; kubesim
//! picks by a hash of the connection (source address and port, destination), so a history is
//! reproducible and consecutive connections spread uniformly over the endpoints (the FNV-1a
//! hash is finished with splitmix64's mixer: FNV's low bits depend only on the low bits of the
//! input bytes, so with an even number of endpoints a client whose source ports advance by two
//! always reached the same one). With `sessionAffinity: ClientIP` the hash covers the client
//! address only (the `recent` match).

use std::collections::BTreeMap;

/// Whether an address is in the Service CIDR (kubeadm's serviceSubnet 10.96.0.0/12): a
/// ClusterIP, as opposed to an external, load-balancer or pod address.
pub fn in_service_cidr(ip: &str) -> bool {
    let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    matches!(octets.as_slice(), [10, b, _, _] if (96..112).contains(b))
}

/// One Service port's rule: the KUBE-SVC chain and its KUBE-SEP endpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRule {
    /// `namespace/name:port-name` (the chain comment kube-proxy writes).
    pub service: String,
    /// The endpoints traffic is DNAT-ed to: (pod IP, target port).
    pub endpoints: Vec<(String, u16)>,
    /// `sessionAffinity: ClientIP`.
    pub client_ip_affinity: bool,
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
    },
    /// A Service with no usable endpoints: kube-proxy's REJECT rule (ICMP port unreachable, so
    /// TCP sees "connection refused").
    Reject {
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

/// The table kube-proxy last synced into this host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceTable {
    /// ClusterIP (and external IP) rules by (address, port, udp).
    pub vips: BTreeMap<(String, u16, bool), ServiceRule>,
    /// NodePort rules by (port, udp): they match any local node address.
    pub node_ports: BTreeMap<(u16, bool), ServiceRule>,
    /// When kube-proxy last wrote the table (virtual ms), `None` before its first sync.
    pub synced_at: Option<u64>,
    /// The portmap plugin's hostPort rules by (host port, udp); they match the node's address
    /// (`-m addrtype --dst-type LOCAL`) and come first in PREROUTING.
    pub host_ports: BTreeMap<(u16, bool), HostPort>,
}

impl ServiceTable {
    /// Rewrites a connection from `src` to `dst:port` as the rules do; `node_ip` is this host's
    /// address (node ports match it).
    pub fn dnat(&self, src: (&str, u16), dst: &str, port: u16, udp: bool, node_ip: &str) -> Dnat {
        if dst == node_ip {
            if let Some(hp) = self.host_ports.get(&(port, udp)) {
                return Dnat::To { ip: hp.ip.clone(), port: hp.port, service: format!("hostPort {port} → {}", hp.pod) };
            }
        }
        let rule = match self.vips.get(&(dst.to_string(), port, udp)) {
            Some(rule) => rule,
            None if dst == node_ip || dst == "127.0.0.1" => match self.node_ports.get(&(port, udp)) {
                Some(rule) => rule,
                None => return Dnat::Unchanged,
            },
            None => return Dnat::Unchanged,
        };
        if rule.endpoints.is_empty() {
            return Dnat::Reject { service: rule.service.clone() };
        }
        let key = if rule.client_ip_affinity {
            fnv(&[src.0.as_bytes()])
        } else {
            fnv(&[src.0.as_bytes(), &src.1.to_be_bytes(), dst.as_bytes(), &port.to_be_bytes()])
        };
        let (ip, port) = rule.endpoints[(key % rule.endpoints.len() as u64) as usize].clone();
        Dnat::To { ip, port, service: rule.service.clone() }
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

    fn table() -> ServiceTable {
        let mut t = ServiceTable::default();
        let rule = ServiceRule {
            service: "default/web:http".into(),
            endpoints: vec![("10.244.1.2".into(), 8080), ("10.244.2.2".into(), 8080)],
            client_ip_affinity: false,
        };
        t.vips.insert(("10.96.0.20".into(), 80, false), rule.clone());
        t.node_ports.insert((30080, false), rule);
        t.vips.insert(("10.96.0.30".into(), 80, false), ServiceRule { service: "default/empty".into(), endpoints: vec![], client_ip_affinity: false });
        t
    }

    #[test]
    fn cluster_ips_and_node_ports_are_rewritten_and_spread() {
        let t = table();
        let mut seen = std::collections::BTreeSet::new();
        for port in 40_000..40_020 {
            match t.dnat(("10.244.0.5", port), "10.96.0.20", 80, false, "172.18.0.2") {
                Dnat::To { ip, port, .. } => {
                    assert_eq!(port, 8080);
                    seen.insert(ip);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(seen.len(), 2, "connections spread over both endpoints");
        assert!(matches!(t.dnat(("1.2.3.4", 1), "172.18.0.2", 30080, false, "172.18.0.2"), Dnat::To { .. }));
        assert_eq!(t.dnat(("1.2.3.4", 1), "172.18.0.3", 30080, false, "172.18.0.2"), Dnat::Unchanged, "another node's address is routed there");
        assert_eq!(t.dnat(("1.2.3.4", 1), "10.96.0.20", 80, true, "172.18.0.2"), Dnat::Unchanged, "UDP is a different rule");
        assert_eq!(t.dnat(("1.2.3.4", 1), "10.96.0.30", 80, false, "172.18.0.2"), Dnat::Reject { service: "default/empty".into() });
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
                if let Dnat::To { ip, .. } = t.dnat(("10.244.0.5", 40_000 + i * stride), "10.96.0.20", 80, false, "") {
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
            t.dnat(("172.18.0.1", 1), "172.18.0.2", 80, false, "172.18.0.2"),
            Dnat::To { ip: "10.244.0.9".into(), port: 80, service: "hostPort 80 → ingress-nginx/c".into() }
        );
        assert_eq!(t.dnat(("172.18.0.1", 1), "172.18.0.3", 80, false, "172.18.0.2"), Dnat::Unchanged, "another node's address");
        assert!(matches!(t.dnat(("1.2.3.4", 1), "172.18.0.2", 30080, false, "172.18.0.2"), Dnat::To { port: 8080, .. }));
    }

    #[test]
    fn client_ip_affinity_keeps_a_client_on_one_endpoint() {
        let mut t = table();
        t.vips.values_mut().for_each(|r| r.client_ip_affinity = true);
        let first = t.dnat(("10.244.0.5", 40_000), "10.96.0.20", 80, false, "");
        for port in 40_001..40_050 {
            assert_eq!(t.dnat(("10.244.0.5", port), "10.96.0.20", 80, false, ""), first);
        }
    }
}
