//! `iptables-save` on a node: the node's Service rules ([`ServiceTable`]) in the form
//! kube-proxy's iptables mode writes them (pkg/proxy/iptables/proxier.go syncProxyRules):
//! `KUBE-SERVICES` entries per Service port, a `KUBE-SVC-<hash>` chain per port choosing among
//! its endpoints with `statistic --mode random --probability 1/(n-i)`, a `KUBE-SEP-<hash>`
//! chain per endpoint doing the DNAT, node ports through `KUBE-NODEPORTS` and `KUBE-EXT-<hash>`,
//! and the filter table's REJECT for Service ports without endpoints.
//!
//! Chain names are upstream's `portProtoHash`: base32(sha256(servicePortName + protocol))[:16]
//! (`servicePortEndpointChainName` adds the endpoint's `ip:port`). Deviations: the rules are
//! rendered from the table kube-proxy programmed (not parsed from a kernel), so counters are
//! `[0:0]`; `sessionAffinity` `recent` matches, Local traffic policies' `KUBE-SVL` chains,
//! `loadBalancerSourceRanges` firewalls and health-check node ports are not rendered.

use crate::netfilter::{ServiceRule, ServiceTable};
use sha2::Digest;
use std::collections::BTreeMap;

/// The fwmark kube-proxy uses for SNAT (`--iptables-masquerade-bit` 14).
const MASQ_MARK: &str = "0x4000/0x4000";

/// RFC 4648 base32 (Go's `base32.StdEncoding`) of the bytes, with padding.
fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for b in bytes {
        buffer = (buffer << 8) | u32::from(*b);
        bits += 8;
        while bits >= 5 {
            out.push(ALPHABET[((buffer >> (bits - 5)) & 31) as usize] as char);
            bits -= 5;
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    while !out.len().is_multiple_of(8) {
        out.push('=');
    }
    out
}

/// `portProtoHash`: the 16 characters after `KUBE-SVC-`, `KUBE-EXT-`, ... for a Service port.
pub fn port_proto_hash(service_port: &str, protocol: &str) -> String {
    base32(&sha2::Sha256::digest(format!("{service_port}{protocol}").as_bytes()))[..16].to_string()
}

/// `servicePortEndpointChainName`: `KUBE-SEP-` + the hash of the port and its endpoint.
pub fn endpoint_chain(service_port: &str, protocol: &str, endpoint: &str) -> String {
    format!("KUBE-SEP-{}", &base32(&sha2::Sha256::digest(format!("{service_port}{protocol}{endpoint}").as_bytes()))[..16])
}

/// The probability iptables-save prints for kube-proxy's `--probability %0.10f` of 1/n: the
/// statistic match stores round(2^31 × p) and prints it back with 11 decimals.
pub fn probability(n: usize) -> String {
    let p: f64 = format!("{:.10}", 1.0 / n as f64).parse().unwrap_or(0.0);
    let stored = (p * 2_147_483_648.0).round();
    format!("{:.11}", stored / 2_147_483_648.0)
}

/// `iptables-save`'s text for the node: the filter table, then the nat table. `cluster_cidr` is
/// the pod network (the `! -s` of the masquerade rule).
pub fn iptables_save(table: &ServiceTable, cluster_cidr: &str, header: &str) -> (String, String) {
    let proto = |udp: bool| if udp { "udp" } else { "tcp" };
    // Chains and their rules, in iptables-save's order (built-ins, then the others sorted).
    let mut nat: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut filter_services: Vec<String> = Vec::new();
    let mut filter_external: Vec<String> = Vec::new();
    let mut services: Vec<String> = Vec::new();
    let mut nodeports: Vec<String> = Vec::new();
    let emit_chains = |rule: &ServiceRule, udp: bool, nat: &mut BTreeMap<String, Vec<String>>| -> String {
        let p = proto(udp);
        let hash = port_proto_hash(&rule.service, p);
        let svc_chain = format!("KUBE-SVC-{hash}");
        if nat.contains_key(&svc_chain) {
            return hash;
        }
        let mut endpoints: Vec<String> = rule.endpoints.iter().map(|(ip, port)| format!("{ip}:{port}")).collect();
        endpoints.sort();
        let mut svc_rules = Vec::new();
        let n = endpoints.len();
        for (i, endpoint) in endpoints.iter().enumerate() {
            let sep = endpoint_chain(&rule.service, p, endpoint);
            let statistic = if i + 1 < n { format!(" -m statistic --mode random --probability {}", probability(n - i)) } else { String::new() };
            svc_rules.push(format!("-A {svc_chain} -m comment --comment \"{} -> {endpoint}\"{statistic} -j {sep}", rule.service));
            let ip = endpoint.rsplit_once(':').map_or(endpoint.as_str(), |(ip, _)| ip);
            nat.insert(
                sep.clone(),
                vec![
                    format!("-A {sep} -s {ip}/32 -m comment --comment \"{}\" -j KUBE-MARK-MASQ", rule.service),
                    format!("-A {sep} -p {p} -m comment --comment \"{}\" -m {p} -j DNAT --to-destination {endpoint}", rule.service),
                ],
            );
        }
        nat.insert(svc_chain, svc_rules);
        hash
    };
    for ((vip, port, udp), rule) in &table.vips {
        let p = proto(*udp);
        let kind = if crate::netfilter::in_service_cidr(vip) { "cluster IP" } else { "external IP" };
        if rule.endpoints.is_empty() {
            let line = format!(
                "-A KUBE-{} -d {vip}/32 -p {p} -m comment --comment \"{} has no endpoints\" -m {p} --dport {port} -j REJECT --reject-with icmp-port-unreachable",
                if kind == "cluster IP" { "SERVICES" } else { "EXTERNAL-SERVICES" },
                rule.service
            );
            if kind == "cluster IP" {
                filter_services.push(line);
            } else {
                filter_external.push(line);
            }
            continue;
        }
        let hash = emit_chains(rule, *udp, &mut nat);
        services.push(format!("-A KUBE-SERVICES -d {vip}/32 -p {p} -m comment --comment \"{} {kind}\" -m {p} --dport {port} -j KUBE-SVC-{hash}", rule.service));
        if kind == "cluster IP" {
            if let Some(rules) = nat.get_mut(&format!("KUBE-SVC-{hash}")) {
                let masq = format!(
                    "-A KUBE-SVC-{hash} ! -s {cluster_cidr} -d {vip}/32 -p {p} -m comment --comment \"{} cluster IP\" -m {p} --dport {port} -j KUBE-MARK-MASQ",
                    rule.service
                );
                if !rules.contains(&masq) {
                    rules.insert(0, masq);
                }
            }
        }
    }
    for ((port, udp), rule) in &table.node_ports {
        let p = proto(*udp);
        if rule.endpoints.is_empty() {
            filter_external.push(format!(
                "-A KUBE-EXTERNAL-SERVICES -p {p} -m comment --comment \"{} has no endpoints\" -m addrtype --dst-type LOCAL -m {p} --dport {port} -j REJECT --reject-with icmp-port-unreachable",
                rule.service
            ));
            continue;
        }
        let hash = emit_chains(rule, *udp, &mut nat);
        nodeports.push(format!("-A KUBE-NODEPORTS -p {p} -m comment --comment \"{}\" -m {p} --dport {port} -j KUBE-EXT-{hash}", rule.service));
        nat.insert(
            format!("KUBE-EXT-{hash}"),
            vec![
                format!("-A KUBE-EXT-{hash} -m comment --comment \"masquerade traffic for {} external destinations\" -j KUBE-MARK-MASQ", rule.service),
                format!("-A KUBE-EXT-{hash} -j KUBE-SVC-{hash}"),
            ],
        );
    }
    services.sort();
    services.push("-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS".into());
    nodeports.sort();
    nat.insert("KUBE-MARK-MASQ".into(), vec![format!("-A KUBE-MARK-MASQ -j MARK --set-xmark {MASQ_MARK}")]);
    nat.insert("KUBE-NODEPORTS".into(), nodeports);
    nat.insert(
        "KUBE-POSTROUTING".into(),
        vec![
            format!("-A KUBE-POSTROUTING -m mark ! --mark {MASQ_MARK} -j RETURN"),
            "-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0".into(),
            "-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE --random-fully".into(),
        ],
    );
    nat.insert("KUBE-SERVICES".into(), services);
    let mut nat_text = format!("{header}*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n");
    for chain in nat.keys() {
        nat_text.push_str(&format!(":{chain} - [0:0]\n"));
    }
    nat_text.push_str("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
    nat_text.push_str("-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
    nat_text.push_str("-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n");
    for rules in nat.values() {
        for r in rules {
            nat_text.push_str(r);
            nat_text.push('\n');
        }
    }
    nat_text.push_str("COMMIT\n");
    let mut filter = format!("{header}*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    for chain in [
        "KUBE-EXTERNAL-SERVICES",
        "KUBE-FIREWALL",
        "KUBE-FORWARD",
        "KUBE-KUBELET-CANARY",
        "KUBE-NODEPORTS",
        "KUBE-PROXY-CANARY",
        "KUBE-PROXY-FIREWALL",
        "KUBE-SERVICES",
    ] {
        filter.push_str(&format!(":{chain} - [0:0]\n"));
    }
    filter.push_str("-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL\n");
    filter.push_str("-A INPUT -m comment --comment \"kubernetes health check service ports\" -j KUBE-NODEPORTS\n");
    filter.push_str("-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES\n");
    filter.push_str("-A INPUT -j KUBE-FIREWALL\n");
    filter.push_str("-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL\n");
    filter.push_str("-A FORWARD -m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD\n");
    filter.push_str("-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
    filter.push_str("-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES\n");
    filter.push_str("-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL\n");
    filter.push_str("-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
    filter.push_str("-A OUTPUT -j KUBE-FIREWALL\n");
    filter_external.sort();
    for r in &filter_external {
        filter.push_str(r);
        filter.push('\n');
    }
    filter.push_str("-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment \"block incoming localnet connections\" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\n");
    filter.push_str("-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\n");
    filter.push_str(&format!("-A KUBE-FORWARD -m comment --comment \"kubernetes forwarding rules\" -m mark --mark {MASQ_MARK} -j ACCEPT\n"));
    filter.push_str("-A KUBE-FORWARD -m comment --comment \"kubernetes forwarding conntrack rule\" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n");
    filter_services.sort();
    for r in &filter_services {
        filter.push_str(r);
        filter.push('\n');
    }
    filter.push_str("COMMIT\n");
    (filter, nat_text)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The chain-name vectors of the reference (upstream proxier_test.go and real clusters):
    // KUBE-SVC-/KUBE-SEP- + base32(sha256(servicePortName + protocol [+ endpoint]))[:16].
    #[test]
    fn chain_names_follow_upstream_port_proto_hash() {
        for (spn, proto, hash) in [
            ("ns1/svc1:p80", "tcp", "XPGD46QRK7WJZT7O"),
            ("ns2/svc2:p80", "tcp", "GNZBNJ2PO5MGZ6GT"),
            ("ns3/svc3:p80", "tcp", "X27LE4BHSL4DOUIK"),
            ("ns4/svc4:p80", "tcp", "4SW47YFZTEDKD3PK"),
            ("ns5/svc5:p80", "tcp", "NUKIZ6OKUXPJNT4C"),
            ("ns2/svc2:p8080", "tcp", "2VJB64SDSIJUP5T6"),
            ("default/kubernetes:https", "tcp", "NPX46M4PTMTKRN6Y"),
            ("kube-system/kube-dns:dns", "udp", "TCOU7JCQXEZGVUNU"),
            ("kube-system/kube-dns:dns-tcp", "tcp", "ERIFXISQEP7F7OF4"),
            ("kube-system/kube-dns:metrics", "tcp", "JD5MR3NA4I4DYORP"),
        ] {
            assert_eq!(port_proto_hash(spn, proto), hash, "{spn} {proto}");
        }
        for (spn, endpoint, chain) in [
            ("ns1/svc1:p80", "10.180.0.1:80", "KUBE-SEP-SXIVWICOYRO3J4NJ"),
            ("ns1/svc1:p80", "10.180.2.1:80", "KUBE-SEP-ZX7GRIZKSNUQ3LAJ"),
            ("ns1/svc1:p80", "10.0.1.1:80", "KUBE-SEP-SNQ3ZNILQDEJNDQO"),
            ("ns2/svc2:p80", "10.180.0.2:80", "KUBE-SEP-RS4RBKLTHTF2IUXJ"),
            ("ns2/svc2:p8080", "10.0.2.1:8080", "KUBE-SEP-UHEGFW77JX3KXTOV"),
            ("ns4/svc4:p80", "10.180.0.4:80", "KUBE-SEP-UKSFD7AGPMPPLUHC"),
            ("ns4/svc4:p80", "10.180.0.5:80", "KUBE-SEP-C6EBXVWJJZMIWKLZ"),
        ] {
            assert_eq!(endpoint_chain(spn, "tcp", endpoint), chain, "{spn} {endpoint}");
        }
    }

    // iptables-save prints the statistic match's stored fraction: 1/2 → 0.50000000000,
    // 1/3 → 0.33333333349, 1/4 → 0.25000000000 (as on real nodes).
    #[test]
    fn probabilities_print_as_iptables_save_does() {
        assert_eq!(probability(2), "0.50000000000");
        assert_eq!(probability(3), "0.33333333349");
        assert_eq!(probability(4), "0.25000000000");
    }

    #[test]
    fn a_service_with_two_endpoints_and_one_without() {
        let mut t = ServiceTable::default();
        t.vips.insert(
            ("10.96.0.10".into(), 53, true),
            ServiceRule {
                service: "kube-system/kube-dns:dns".into(),
                endpoints: vec![("10.244.0.3".into(), 53), ("10.244.0.2".into(), 53)],
                client_ip_affinity: false,
            },
        );
        t.vips.insert(("10.96.0.30".into(), 80, false), ServiceRule { service: "default/empty".into(), endpoints: vec![], client_ip_affinity: false });
        let (filter, nat) = iptables_save(&t, "10.244.0.0/16", "");
        assert!(nat.contains("-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment \"kube-system/kube-dns:dns cluster IP\" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU\n"), "{nat}");
        assert!(nat.contains("-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp"), "{nat}");
        assert!(
            nat.contains("-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment \"kube-system/kube-dns:dns -> 10.244.0.2:53\" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-YIL6JZP7A3QYXJU2\n"),
            "endpoints in ip:port order, the first with probability 1/2: {nat}"
        );
        assert!(
            nat.contains("-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment \"kube-system/kube-dns:dns -> 10.244.0.3:53\" -j KUBE-SEP-6E7XQMQ4RAYOWTTM\n"),
            "{nat}"
        );
        assert!(
            nat.contains(
                "-A KUBE-SEP-YIL6JZP7A3QYXJU2 -p udp -m comment --comment \"kube-system/kube-dns:dns\" -m udp -j DNAT --to-destination 10.244.0.2:53\n"
            ),
            "{nat}"
        );
        assert!(filter.contains("-A KUBE-SERVICES -d 10.96.0.30/32 -p tcp -m comment --comment \"default/empty has no endpoints\" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable\n"), "{filter}");
        assert!(nat.trim_end().ends_with("COMMIT") && nat.contains(":KUBE-SEP-YIL6JZP7A3QYXJU2 - [0:0]\n"));
    }
}
