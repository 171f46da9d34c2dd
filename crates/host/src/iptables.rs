//! kube-proxy's iptables rules for the node's Service table ([`ServiceTable`]), in two forms:
//! [`restore_input`], the `iptables-restore` input syncProxyRules writes (a full sync, rule for
//! rule and argument for argument as pkg/proxy/iptables/proxier.go emits them, the form
//! upstream's proxier_test.go compares), and [`iptables_save`], what `iptables-save` on the node
//! prints of them (the kernel's canonical order: `-s`/`-d`/`-p` first, `/32` on addresses, the
//! `recent`, `statistic` and `MARK` options as the extensions print them back), which the node
//! shell's `iptables-save` shows.
//!
//! Per Service port: `KUBE-SERVICES` entries for the cluster IP (to `KUBE-SVC-…`, or `KUBE-SVL-…`
//! with `internalTrafficPolicy: Local`), external IPs (`KUBE-EXT-…`) and load-balancer IPs
//! (`KUBE-EXT-…`, or `KUBE-FW-…` with `loadBalancerSourceRanges`); the node port through
//! `KUBE-NODEPORTS`; `KUBE-EXT-…` with the external traffic policy's masquerade or
//! short-circuit rules; the health-check node port's ACCEPT; `KUBE-SVC-…`/`KUBE-SVL-…` choosing
//! among endpoints with `statistic --mode random --probability 1/(n-i)`, after the
//! `recent --rcheck` rules of ClientIP affinity; a `KUBE-SEP-…` chain per endpoint (hairpin
//! masquerade, `recent --set`, DNAT); and the filter table's REJECT (`has no endpoints`) and DROP
//! (`has no local endpoints`, `traffic not accepted by KUBE-FW-…`) rules. Above 1,000 endpoints
//! (largeClusterEndpointsThreshold) the per-endpoint comments are left out, as upstream does.
//!
//! Chain names are upstream's `portProtoHash`: base32(sha256(servicePortName + protocol))[:16]
//! (`servicePortEndpointChainName` adds the endpoint's `ip:port`). Deviations: the rules are
//! rendered from the table kube-proxy programmed (not parsed from a kernel), so counters are
//! `[0:0]`; the localhost node-port rules with the `nfacct` match (written only when the
//! kernel has nfacct) are not rendered.

use crate::netfilter::{cidr_contains, ServicePort, ServiceTable};
use sha2::Digest;
use std::collections::BTreeMap;

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
    saved_probability(&restore_probability(n))
}

/// kube-proxy's `--probability` argument for the i-th of n endpoints: `%0.10f` of 1/n.
fn restore_probability(n: usize) -> String {
    format!("{:.10}", 1.0 / n as f64)
}

/// The statistic match's stored fraction of a `--probability` argument, as iptables-save prints it.
fn saved_probability(p: &str) -> String {
    let p: f64 = p.parse().unwrap_or(0.0);
    let stored = (p * 2_147_483_648.0).round();
    format!("{:.11}", stored / 2_147_483_648.0)
}

/// largeClusterEndpointsThreshold: above this many endpoints kube-proxy drops the per-endpoint
/// comments.
pub const LARGE_CLUSTER_ENDPOINTS: usize = 1000;

/// How kube-proxy runs (its flags and what it detected).
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// The local traffic detector's `--cluster-cidr` (empty: not implemented).
    pub cluster_cidr: &'a str,
    /// The node's IP (`KUBE-FW-…` lets the load-balancer IP in when a source range holds it).
    pub node_ip: &'a str,
    /// The masquerade mark as kube-proxy formats it (`%#08x` of 1 << 14: `0x004000`).
    pub masquerade_mark: &'a str,
    /// iptables supports `MASQUERADE --random-fully`.
    pub random_fully: bool,
    /// `iptables.localhostNodePorts` (default true): node ports on 127.0.0.1 and the
    /// `KUBE-FIREWALL` rule that guards them.
    pub localhost_node_ports: bool,
}

impl<'a> Options<'a> {
    /// kube-proxy as kind runs it (iptables mode, default masquerade bit, kernel with
    /// `--random-fully`).
    pub fn kind(cluster_cidr: &'a str, node_ip: &'a str) -> Options<'a> {
        Options { cluster_cidr, node_ip, masquerade_mark: "0x004000", random_fully: true, localhost_node_ports: true }
    }
}

/// One rule's arguments as kube-proxy writes them (a comment with spaces is one token, quoted).
type Rule = Vec<String>;

/// syncProxyRules' output: chain lines and rules of the filter and nat tables, in emission order.
#[derive(Default)]
struct Restore {
    filter_chains: Vec<String>,
    filter_rules: Vec<Rule>,
    nat_chains: Vec<String>,
    nat_rules: Vec<Rule>,
}

fn rule(parts: &[&str]) -> Rule {
    parts.iter().map(|s| s.to_string()).collect()
}

fn quoted(text: &str) -> String {
    format!("\"{text}\"")
}

/// syncProxyRules for every Service port of the table (a full sync).
fn build(table: &ServiceTable, o: &Options) -> Restore {
    let mut out = Restore::default();
    for c in ["KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-FORWARD", "KUBE-NODEPORTS", "KUBE-PROXY-FIREWALL"] {
        out.filter_chains.push(c.into());
    }
    for c in ["KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ"] {
        out.nat_chains.push(c.into());
    }
    let mark = o.masquerade_mark;
    let mark_mask = format!("{mark}/{mark}");
    out.nat_rules.push(rule(&["-A", "KUBE-POSTROUTING", "-m", "mark", "!", "--mark", &mark_mask, "-j", "RETURN"]));
    out.nat_rules.push(rule(&["-A", "KUBE-POSTROUTING", "-j", "MARK", "--xor-mark", mark]));
    let mut masq = rule(&["-A", "KUBE-POSTROUTING", "-m", "comment", "--comment", "\"kubernetes service traffic requiring SNAT\"", "-j", "MASQUERADE"]);
    if o.random_fully {
        masq.push("--random-fully".into());
    }
    out.nat_rules.push(masq);
    out.nat_rules.push(rule(&["-A", "KUBE-MARK-MASQ", "-j", "MARK", "--or-mark", mark]));
    if o.localhost_node_ports {
        out.filter_chains.push("KUBE-FIREWALL".into());
        out.filter_rules.push(rule(&[
            "-A",
            "KUBE-FIREWALL",
            "-m",
            "comment",
            "--comment",
            "\"block incoming localnet connections\"",
            "-d",
            "127.0.0.0/8",
            "!",
            "-s",
            "127.0.0.0/8",
            "-m",
            "conntrack",
            "!",
            "--ctstate",
            "RELATED,ESTABLISHED,DNAT",
            "-j",
            "DROP",
        ]));
    }
    let large = table.services.values().map(|sp| sp.endpoint_count).sum::<usize>() > LARGE_CLUSTER_ENDPOINTS;
    for sp in table.services.values() {
        write_service_port(&mut out, sp, o, large);
    }
    let mut last = rule(&[
        "-A",
        "KUBE-SERVICES",
        "-m",
        "comment",
        "--comment",
        "\"kubernetes service nodeports; NOTE: this must be the last rule in this chain\"",
        "-m",
        "addrtype",
        "--dst-type",
        "LOCAL",
    ]);
    if !o.localhost_node_ports {
        last.extend(rule(&["!", "-d", "127.0.0.0/8"]));
    }
    last.extend(rule(&["-j", "KUBE-NODEPORTS"]));
    out.nat_rules.push(last);
    out.filter_rules.push(rule(&["-A", "KUBE-FORWARD", "-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP"]));
    out.filter_rules.push(rule(&[
        "-A",
        "KUBE-FORWARD",
        "-m",
        "comment",
        "--comment",
        "\"kubernetes forwarding rules\"",
        "-m",
        "mark",
        "--mark",
        &mark_mask,
        "-j",
        "ACCEPT",
    ]));
    out.filter_rules.push(rule(&[
        "-A",
        "KUBE-FORWARD",
        "-m",
        "comment",
        "--comment",
        "\"kubernetes forwarding conntrack rule\"",
        "-m",
        "conntrack",
        "--ctstate",
        "RELATED,ESTABLISHED",
        "-j",
        "ACCEPT",
    ]));
    out
}

/// One Service port's rules (the body of syncProxyRules' loop).
fn write_service_port(out: &mut Restore, sp: &ServicePort, o: &Options, large: bool) {
    let p = if sp.udp { "udp" } else { "tcp" };
    let spn = sp.name.as_str();
    let hash = port_proto_hash(spn, p);
    let (svc, svl, ext, fw) = (format!("KUBE-SVC-{hash}"), format!("KUBE-SVL-{hash}"), format!("KUBE-EXT-{hash}"), format!("KUBE-FW-{hash}"));
    let internal_chain = if sp.internal_local { &svl } else { &svc };
    let external_policy_chain = if sp.external_local { &svl } else { &svc };
    let (has_internal, has_external) = (sp.has_internal_endpoints(), sp.has_external_endpoints());
    let (uses_ext, uses_fw) = (sp.uses_external_chain(), sp.uses_firewall_chain());
    let lb_chain = if uses_fw { &fw } else { &ext };
    let (int_target, int_comment, ext_target, ext_comment) = if !sp.has_endpoints {
        let c = quoted(&format!("{spn} has no endpoints"));
        ("REJECT", c.clone(), "REJECT", c)
    } else {
        let c = quoted(&format!("{spn} has no local endpoints"));
        ("DROP", c.clone(), "DROP", c)
    };
    let port = sp.port.to_string();
    let cip = sp.cluster_ip.as_str();
    // Capture the clusterIP.
    if has_internal {
        let comment = quoted(&format!("{spn} cluster IP"));
        out.nat_rules.push(rule(&[
            "-A",
            "KUBE-SERVICES",
            "-m",
            "comment",
            "--comment",
            &comment,
            "-m",
            p,
            "-p",
            p,
            "-d",
            cip,
            "--dport",
            &port,
            "-j",
            internal_chain,
        ]));
    } else {
        out.filter_rules.push(rule(&[
            "-A",
            "KUBE-SERVICES",
            "-m",
            "comment",
            "--comment",
            &int_comment,
            "-m",
            p,
            "-p",
            p,
            "-d",
            cip,
            "--dport",
            &port,
            "-j",
            int_target,
        ]));
    }
    // Capture externalIPs.
    for ip in &sp.external_ips {
        if sp.has_endpoints {
            let comment = quoted(&format!("{spn} external IP"));
            out.nat_rules.push(rule(&[
                "-A",
                "KUBE-SERVICES",
                "-m",
                "comment",
                "--comment",
                &comment,
                "-m",
                p,
                "-p",
                p,
                "-d",
                ip,
                "--dport",
                &port,
                "-j",
                &ext,
            ]));
        }
        if !has_external {
            out.filter_rules.push(rule(&[
                "-A",
                "KUBE-EXTERNAL-SERVICES",
                "-m",
                "comment",
                "--comment",
                &ext_comment,
                "-m",
                p,
                "-p",
                p,
                "-d",
                ip,
                "--dport",
                &port,
                "-j",
                ext_target,
            ]));
        }
    }
    // Capture load-balancer ingress.
    for ip in &sp.load_balancer_ips {
        if sp.has_endpoints {
            let comment = quoted(&format!("{spn} loadbalancer IP"));
            out.nat_rules.push(rule(&[
                "-A",
                "KUBE-SERVICES",
                "-m",
                "comment",
                "--comment",
                &comment,
                "-m",
                p,
                "-p",
                p,
                "-d",
                ip,
                "--dport",
                &port,
                "-j",
                lb_chain,
            ]));
        }
        if uses_fw {
            let comment = quoted(&format!("{spn} traffic not accepted by {fw}"));
            out.filter_rules.push(rule(&[
                "-A",
                "KUBE-PROXY-FIREWALL",
                "-m",
                "comment",
                "--comment",
                &comment,
                "-m",
                p,
                "-p",
                p,
                "-d",
                ip,
                "--dport",
                &port,
                "-j",
                "DROP",
            ]));
        }
    }
    if !has_external {
        for ip in &sp.load_balancer_ips {
            out.filter_rules.push(rule(&[
                "-A",
                "KUBE-EXTERNAL-SERVICES",
                "-m",
                "comment",
                "--comment",
                &ext_comment,
                "-m",
                p,
                "-p",
                p,
                "-d",
                ip,
                "--dport",
                &port,
                "-j",
                ext_target,
            ]));
        }
    }
    // Capture nodeports.
    if let Some(np) = sp.node_port {
        let np = np.to_string();
        if sp.has_endpoints {
            out.nat_rules.push(rule(&["-A", "KUBE-NODEPORTS", "-m", "comment", "--comment", spn, "-m", p, "-p", p, "--dport", &np, "-j", &ext]));
        }
        if !has_external {
            out.filter_rules.push(rule(&[
                "-A",
                "KUBE-EXTERNAL-SERVICES",
                "-m",
                "comment",
                "--comment",
                &ext_comment,
                "-m",
                "addrtype",
                "--dst-type",
                "LOCAL",
                "-m",
                p,
                "-p",
                p,
                "--dport",
                &np,
                "-j",
                ext_target,
            ]));
        }
    }
    // Capture healthCheckNodePorts.
    if let Some(hc) = sp.health_check_node_port {
        let comment = quoted(&format!("{spn} health check node port"));
        out.filter_rules.push(rule(&[
            "-A",
            "KUBE-NODEPORTS",
            "-m",
            "comment",
            "--comment",
            &comment,
            "-m",
            "tcp",
            "-p",
            "tcp",
            "--dport",
            &hc.to_string(),
            "-j",
            "ACCEPT",
        ]));
    }
    // Internal traffic: masquerade off-cluster clients of the cluster IP.
    if has_internal && !o.cluster_cidr.is_empty() {
        let comment = quoted(&format!("{spn} cluster IP"));
        out.nat_rules.push(rule(&[
            "-A",
            internal_chain,
            "-m",
            "comment",
            "--comment",
            &comment,
            "-m",
            p,
            "-p",
            p,
            "-d",
            cip,
            "--dport",
            &port,
            "!",
            "-s",
            o.cluster_cidr,
            "-j",
            "KUBE-MARK-MASQ",
        ]));
    }
    // External traffic.
    if uses_ext {
        out.nat_chains.push(ext.clone());
        if !sp.external_local {
            let comment = quoted(&format!("masquerade traffic for {spn} external destinations"));
            out.nat_rules.push(rule(&["-A", &ext, "-m", "comment", "--comment", &comment, "-j", "KUBE-MARK-MASQ"]));
        } else {
            if !o.cluster_cidr.is_empty() {
                let comment = quoted(&format!("pod traffic for {spn} external destinations"));
                out.nat_rules.push(rule(&["-A", &ext, "-m", "comment", "--comment", &comment, "-s", o.cluster_cidr, "-j", &svc]));
            }
            let comment = quoted(&format!("masquerade LOCAL traffic for {spn} external destinations"));
            out.nat_rules.push(rule(&["-A", &ext, "-m", "comment", "--comment", &comment, "-m", "addrtype", "--src-type", "LOCAL", "-j", "KUBE-MARK-MASQ"]));
            let comment = quoted(&format!("route LOCAL traffic for {spn} external destinations"));
            out.nat_rules.push(rule(&["-A", &ext, "-m", "comment", "--comment", &comment, "-m", "addrtype", "--src-type", "LOCAL", "-j", &svc]));
        }
        if has_external {
            out.nat_rules.push(rule(&["-A", &ext, "-j", external_policy_chain]));
        }
    }
    // The firewall chain (loadBalancerSourceRanges).
    if uses_fw {
        out.nat_chains.push(fw.clone());
        let comment = quoted(&format!("{spn} loadbalancer IP"));
        let mut allow_from_node = false;
        for cidr in &sp.source_ranges {
            out.nat_rules.push(rule(&["-A", &fw, "-m", "comment", "--comment", &comment, "-s", cidr, "-j", &ext]));
            allow_from_node |= cidr_contains(cidr, o.node_ip);
        }
        if allow_from_node {
            for ip in &sp.load_balancer_ips {
                out.nat_rules.push(rule(&["-A", &fw, "-m", "comment", "--comment", &comment, "-s", ip, "-j", &ext]));
            }
        }
        let other = quoted(&format!("other traffic to {spn} will be dropped by KUBE-PROXY-FIREWALL"));
        out.nat_rules.push(rule(&["-A", &fw, "-m", "comment", "--comment", &other]));
    }
    if !sp.cluster_endpoints.is_empty() {
        out.nat_chains.push(svc.clone());
        write_service_to_endpoint_rules(out, sp, p, &svc, &sp.cluster_endpoints, large);
    }
    if !sp.local_endpoints.is_empty() {
        out.nat_chains.push(svl.clone());
        write_service_to_endpoint_rules(out, sp, p, &svl, &sp.local_endpoints, large);
    }
    // The per-endpoint chains.
    for (ip, ep_port) in sp.reachable_endpoints() {
        let endpoint = format!("{ip}:{ep_port}");
        let sep = endpoint_chain(spn, p, &endpoint);
        out.nat_chains.push(sep.clone());
        let mut args = rule(&["-A", &sep]);
        if !large {
            args.extend(rule(&["-m", "comment", "--comment", spn]));
        }
        let mut hairpin = args.clone();
        hairpin.extend(rule(&["-s", &ip, "-j", "KUBE-MARK-MASQ"]));
        out.nat_rules.push(hairpin);
        if sp.affinity_seconds.is_some() {
            args.extend(rule(&["-m", "recent", "--name", &sep, "--set"]));
        }
        args.extend(rule(&["-m", p, "-p", p, "-j", "DNAT", "--to-destination", &endpoint]));
        out.nat_rules.push(args);
    }
}

/// writeServiceToEndpointRules: ClientIP affinity's `recent` checks, then the random choice.
fn write_service_to_endpoint_rules(out: &mut Restore, sp: &ServicePort, p: &str, chain: &str, endpoints: &[(String, u16)], large: bool) {
    let spn = sp.name.as_str();
    let comment = |endpoint: &str| if large { Vec::new() } else { rule(&["-m", "comment", "--comment", &quoted(&format!("{spn} -> {endpoint}"))]) };
    if let Some(seconds) = sp.affinity_seconds {
        for (ip, port) in endpoints {
            let endpoint = format!("{ip}:{port}");
            let sep = endpoint_chain(spn, p, &endpoint);
            let mut args = rule(&["-A", chain]);
            args.extend(comment(&endpoint));
            args.extend(rule(&["-m", "recent", "--name", &sep, "--rcheck", "--seconds", &seconds.to_string(), "--reap", "-j", &sep]));
            out.nat_rules.push(args);
        }
    }
    let n = endpoints.len();
    for (i, (ip, port)) in endpoints.iter().enumerate() {
        let endpoint = format!("{ip}:{port}");
        let sep = endpoint_chain(spn, p, &endpoint);
        let mut args = rule(&["-A", chain]);
        args.extend(comment(&endpoint));
        if i + 1 < n {
            args.extend(rule(&["-m", "statistic", "--mode", "random", "--probability", &restore_probability(n - i)]));
        }
        args.extend(rule(&["-j", &sep]));
        out.nat_rules.push(args);
    }
}

/// kube-proxy's `iptables-restore --noflush` input for a full sync of the table.
pub fn restore_input(table: &ServiceTable, o: &Options) -> String {
    let r = build(table, o);
    let mut text = String::from("*filter\n");
    for c in &r.filter_chains {
        text.push_str(&format!(":{c} - [0:0]\n"));
    }
    for rule in &r.filter_rules {
        text.push_str(&rule.join(" "));
        text.push('\n');
    }
    text.push_str("COMMIT\n*nat\n");
    for c in &r.nat_chains {
        text.push_str(&format!(":{c} - [0:0]\n"));
    }
    for rule in &r.nat_rules {
        text.push_str(&rule.join(" "));
        text.push('\n');
    }
    text.push_str("COMMIT\n");
    text
}

/// xtables_save_string: a value of letters, digits, `_` and `-` bare, anything else quoted.
fn save_string(value: &str) -> String {
    if !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        value.to_string()
    } else {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// A mark as the kernel prints it back (`0x004000` → `0x4000`).
fn saved_mark(mark: &str) -> String {
    let value = |m: &str| u32::from_str_radix(m.trim_start_matches("0x"), 16).map(|v| format!("{v:#x}")).unwrap_or_else(|_| m.to_string());
    match mark.split_once('/') {
        Some((v, m)) => format!("{}/{}", value(v), value(m)),
        None => value(mark),
    }
}

/// An address as iptables-save prints it (`10.180.0.1` → `10.180.0.1/32`).
fn saved_address(address: &str) -> String {
    if address.contains('/') {
        address.to_string()
    } else {
        format!("{address}/32")
    }
}

/// One option of a match: negated, its name, its values.
type MatchOption = (bool, String, Vec<String>);

/// One rule as `iptables-save` prints it back from the kernel.
fn saved_rule(tokens: &[String]) -> String {
    let chain = tokens.get(1).cloned().unwrap_or_default();
    // `-s`/`-d`: (negated, address).
    let mut src: Option<(bool, String)> = None;
    let mut dst: Option<(bool, String)> = None;
    let mut proto: Option<String> = None;
    let mut matches: Vec<(String, Vec<MatchOption>)> = Vec::new();
    let mut target: Vec<String> = Vec::new();
    let mut negate = false;
    let mut i = 2;
    while i < tokens.len() {
        let t = tokens[i].as_str();
        let value = tokens.get(i + 1).cloned().unwrap_or_default();
        match t {
            "!" => {
                negate = true;
                i += 1;
                continue;
            }
            "-s" => src = Some((negate, saved_address(&value))),
            "-d" => dst = Some((negate, saved_address(&value))),
            "-p" => proto = Some(value),
            "-m" => matches.push((value, Vec::new())),
            "-j" => {
                target = tokens[i + 1..].to_vec();
                break;
            }
            option if option.starts_with("--") => {
                let mut values = Vec::new();
                let mut j = i + 1;
                while j < tokens.len() && !tokens[j].starts_with('-') && tokens[j] != "!" {
                    values.push(tokens[j].clone());
                    j += 1;
                }
                // `--dport` belongs to the protocol's match wherever it is written.
                let owner = match option {
                    "--dport" | "--sport" => matches.iter().rposition(|(m, _)| Some(m) == proto.as_ref() || m == "tcp" || m == "udp" || m == "sctp"),
                    _ => None,
                };
                let index = owner.or(matches.len().checked_sub(1));
                if let Some(index) = index {
                    matches[index].1.push((negate, option.to_string(), values));
                }
                negate = false;
                i = j;
                continue;
            }
            _ => {}
        }
        negate = false;
        i += 2;
    }
    let mut line = format!("-A {chain}");
    for (flag, address) in [("-s", &src), ("-d", &dst)] {
        if let Some((neg, a)) = address {
            line.push_str(&format!("{} {flag} {a}", if *neg { " !" } else { "" }));
        }
    }
    if let Some(p) = &proto {
        line.push_str(&format!(" -p {p}"));
    }
    for (name, options) in &matches {
        line.push_str(&format!(" -m {name}"));
        let option = |o: &str| options.iter().find(|(_, n, _)| n == o);
        match name.as_str() {
            "comment" => {
                if let Some((_, _, v)) = option("--comment") {
                    let text = v.join(" ");
                    line.push_str(&format!(" --comment {}", save_string(text.trim_matches('"'))));
                }
            }
            "statistic" => {
                if let Some((_, _, v)) = option("--mode") {
                    line.push_str(&format!(" --mode {}", v.join(" ")));
                }
                if let Some((_, _, v)) = option("--probability") {
                    line.push_str(&format!(" --probability {}", saved_probability(&v.join(""))));
                }
            }
            "recent" => {
                for flag in ["--set", "--rcheck", "--update", "--remove"] {
                    if let Some((neg, _, _)) = option(flag) {
                        line.push_str(&format!("{} {flag}", if *neg { " !" } else { "" }));
                    }
                }
                if let Some((_, _, v)) = option("--seconds") {
                    line.push_str(&format!(" --seconds {}", v.join("")));
                }
                if option("--reap").is_some() {
                    line.push_str(" --reap");
                }
                let name = option("--name").map_or("DEFAULT".to_string(), |(_, _, v)| v.join(""));
                line.push_str(&format!(" --name {name} --mask 255.255.255.255 --rsource"));
            }
            "mark" => {
                for (neg, n, v) in options {
                    line.push_str(&format!("{} {n} {}", if *neg { " !" } else { "" }, saved_mark(&v.join(""))));
                }
            }
            _ => {
                for (neg, n, v) in options {
                    line.push_str(&format!("{} {n}", if *neg { " !" } else { "" }));
                    for value in v {
                        line.push_str(&format!(" {value}"));
                    }
                }
            }
        }
    }
    match target.first().map(String::as_str) {
        None => {}
        Some("MARK") => {
            let (how, mark) = (target.get(1).map(String::as_str).unwrap_or(""), target.get(2).cloned().unwrap_or_default());
            let mark = saved_mark(&mark);
            let xmark = match how {
                "--or-mark" => format!("{mark}/{mark}"),
                "--xor-mark" => format!("{mark}/0x0"),
                _ => mark,
            };
            line.push_str(&format!(" -j MARK --set-xmark {xmark}"));
        }
        Some("REJECT") if target.len() == 1 => line.push_str(" -j REJECT --reject-with icmp-port-unreachable"),
        Some(_) => line.push_str(&format!(" -j {}", target.join(" "))),
    }
    line
}

/// `iptables-save`'s text for the node: the filter table, then the nat table, each with
/// `header` before it. kube-proxy's and the kubelet's chains (canaries included), the jump
/// rules from the built-in chains, then each chain's rules in chain order.
pub fn iptables_save(table: &ServiceTable, o: &Options, header: &str) -> (String, String) {
    let r = build(table, o);
    let group = |chains: &[String], rules: &[Rule], extra: &[&str]| {
        let mut by_chain: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in chains.iter().map(String::as_str).chain(extra.iter().copied()) {
            by_chain.entry(c.to_string()).or_default();
        }
        for rule in rules {
            by_chain.entry(rule[1].clone()).or_default().push(saved_rule(rule));
        }
        by_chain
    };
    let nat = group(&r.nat_chains, &r.nat_rules, &["KUBE-KUBELET-CANARY", "KUBE-PROXY-CANARY"]);
    let mut nat_text = format!("{header}*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n");
    for chain in nat.keys() {
        nat_text.push_str(&format!(":{chain} - [0:0]\n"));
    }
    nat_text.push_str("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
    nat_text.push_str("-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
    nat_text.push_str("-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n");
    for rules in nat.values() {
        for line in rules {
            nat_text.push_str(line);
            nat_text.push('\n');
        }
    }
    nat_text.push_str("COMMIT\n");
    let filter = group(&r.filter_chains, &r.filter_rules, &["KUBE-FIREWALL", "KUBE-KUBELET-CANARY", "KUBE-PROXY-CANARY"]);
    let mut filter_text = format!("{header}*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    for chain in filter.keys() {
        filter_text.push_str(&format!(":{chain} - [0:0]\n"));
    }
    for jump in [
        "-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL",
        "-A INPUT -m comment --comment \"kubernetes health check service ports\" -j KUBE-NODEPORTS",
        "-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES",
        "-A INPUT -j KUBE-FIREWALL",
        "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL",
        "-A FORWARD -m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD",
        "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES",
        "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES",
        "-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL",
        "-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES",
        "-A OUTPUT -j KUBE-FIREWALL",
    ] {
        filter_text.push_str(jump);
        filter_text.push('\n');
    }
    for rules in filter.values() {
        for line in rules {
            filter_text.push_str(line);
            filter_text.push('\n');
        }
    }
    filter_text.push_str("COMMIT\n");
    (filter_text, nat_text)
}

/// upstream's sortIPTablesRules (pkg/proxy/iptables/proxier_test.go), which its tests compare
/// [`restore_input`]-style dumps after, as the order Services are processed in is a Go map's:
/// tables by name; chains with
/// KUBE-NODEPORTS first, KUBE-SERVICES second, then KUBE-* alphabetically; each chain's
/// rules after the chain lines, in their order, except that KUBE-NODEPORTS and
/// KUBE-SERVICES are stably sorted by the service name in their comment (the "must be the
/// last rule" rule last).
pub fn sort_restore_rules(data: &str) -> String {
    struct Table {
        name: String,
        chains: Vec<String>,
        rules: BTreeMap<String, Vec<String>>,
    }
    let mut tables: Vec<Table> = Vec::new();
    for line in data.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(name) = line.strip_prefix('*') {
            tables.push(Table { name: name.to_string(), chains: Vec::new(), rules: BTreeMap::new() });
        } else if line == "COMMIT" {
            continue;
        } else if let (Some(chain), Some(t)) = (line.strip_prefix(':'), tables.last_mut()) {
            t.chains.push(chain.split(' ').next().unwrap_or_default().to_string());
        } else if let (Some(rest), Some(t)) = (line.strip_prefix("-A "), tables.last_mut()) {
            let chain = rest.split(' ').next().unwrap_or_default().to_string();
            t.rules.entry(chain).or_default().push(line.to_string());
        }
    }
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    let rank = |c: &str| match c {
        "KUBE-NODEPORTS" => (0, String::new()),
        "KUBE-SERVICES" => (1, String::new()),
        c if c.starts_with("KUBE-") => (2, c.to_string()),
        c => (3, c.to_string()),
    };
    let service_name = |rule: &str| -> Option<String> {
        let comment = rule.split_once("--comment ")?.1;
        let comment = match comment.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default(),
            None => comment.split(' ').next().unwrap_or_default(),
        };
        Some(comment.split([' ', ':']).next().unwrap_or_default().to_string())
    };
    let mut out = String::new();
    for t in &mut tables {
        t.chains.sort_by_key(|a| rank(a));
        out.push_str(&format!("*{}\n", t.name));
        for c in &t.chains {
            out.push_str(&format!(":{c} - [0:0]\n"));
        }
        for c in &t.chains {
            let mut rules = t.rules.remove(c).unwrap_or_default();
            if c == "KUBE-NODEPORTS" || c == "KUBE-SERVICES" {
                let last = |r: &String| r.contains("must be the last rule");
                // A stable sort by (last rule, service name); rules without a comment keep their place among equals.
                rules.sort_by(|a, b| match (last(a), last(b)) {
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    _ => match (service_name(a), service_name(b)) {
                        (Some(x), Some(y)) => x.cmp(&y),
                        _ => std::cmp::Ordering::Equal,
                    },
                });
            }
            for r in rules {
                out.push_str(&r);
                out.push('\n');
            }
        }
        out.push_str("COMMIT\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netfilter::ServicePort;

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
            // Computed by the formula (reference §4.2).
            ("default/web", "tcp", "LOLE4ISW44XBNF3G"),
        ] {
            assert_eq!(port_proto_hash(spn, proto), hash, "{spn} {proto}");
        }
        for (spn, proto, endpoint, chain) in [
            ("ns1/svc1:p80", "tcp", "10.180.0.1:80", "KUBE-SEP-SXIVWICOYRO3J4NJ"),
            ("ns1/svc1:p80", "tcp", "10.180.2.1:80", "KUBE-SEP-ZX7GRIZKSNUQ3LAJ"),
            ("ns1/svc1:p80", "tcp", "10.0.1.1:80", "KUBE-SEP-SNQ3ZNILQDEJNDQO"),
            ("ns2/svc2:p80", "tcp", "10.180.0.2:80", "KUBE-SEP-RS4RBKLTHTF2IUXJ"),
            ("ns2/svc2:p8080", "tcp", "10.0.2.1:8080", "KUBE-SEP-UHEGFW77JX3KXTOV"),
            ("ns3/svc3:p80", "tcp", "10.180.0.3:80", "KUBE-SEP-OYPFS5VJICHGATKP"),
            ("ns4/svc4:p80", "tcp", "10.180.0.4:80", "KUBE-SEP-UKSFD7AGPMPPLUHC"),
            ("ns4/svc4:p80", "tcp", "10.180.0.5:80", "KUBE-SEP-C6EBXVWJJZMIWKLZ"),
            ("ns5/svc5:p80", "tcp", "10.180.0.3:80", "KUBE-SEP-I77PXRDZVX7PMWMN"),
            // Computed by the formula (reference §4.2).
            ("default/web", "tcp", "10.244.1.2:80", "KUBE-SEP-MQ4W7Q2CV67URU6Q"),
            ("default/kubernetes:https", "tcp", "172.18.0.2:6443", "KUBE-SEP-V2PECCYPB6X2GSCW"),
            ("kube-system/kube-dns:dns", "udp", "10.244.0.2:53", "KUBE-SEP-YIL6JZP7A3QYXJU2"),
            ("kube-system/kube-dns:dns", "udp", "10.244.0.3:53", "KUBE-SEP-6E7XQMQ4RAYOWTTM"),
        ] {
            assert_eq!(endpoint_chain(spn, proto, endpoint), chain, "{spn} {endpoint}");
        }
    }

    // iptables-save prints the statistic match's stored fraction: 1/2 → 0.50000000000,
    // 1/3 → 0.33333333349, 1/4 → 0.25000000000 (as on real nodes); kube-proxy writes `%0.10f`
    // (reference §4.4's probability vectors).
    #[test]
    fn probabilities_print_as_iptables_save_does() {
        assert_eq!(probability(2), "0.50000000000");
        assert_eq!(probability(3), "0.33333333349");
        assert_eq!(probability(4), "0.25000000000");
        let restore: Vec<String> = (2..=5).rev().map(restore_probability).collect();
        assert_eq!(restore, ["0.2000000000", "0.2500000000", "0.3333333333", "0.5000000000"]);
    }

    fn dns_table() -> ServiceTable {
        let mut t = ServiceTable { cluster_cidr: "10.244.0.0/16".into(), ..ServiceTable::default() };
        t.insert(ServicePort {
            name: "kube-system/kube-dns:dns".into(),
            udp: true,
            cluster_ip: "10.96.0.10".into(),
            port: 53,
            cluster_endpoints: vec![("10.244.0.2".into(), 53), ("10.244.0.3".into(), 53)],
            has_endpoints: true,
            endpoint_count: 2,
            ..ServicePort::default()
        });
        t.insert(ServicePort { name: "default/empty".into(), cluster_ip: "10.96.0.30".into(), port: 80, ..ServicePort::default() });
        t
    }

    #[test]
    fn a_service_with_two_endpoints_and_one_without() {
        let t = dns_table();
        let (filter, nat) = iptables_save(&t, &Options::kind("10.244.0.0/16", "172.18.0.2"), "");
        assert!(nat.contains("-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment \"kube-system/kube-dns:dns cluster IP\" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU\n"), "{nat}");
        assert!(nat.contains("-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment \"kube-system/kube-dns:dns cluster IP\" -m udp --dport 53 -j KUBE-MARK-MASQ\n"), "{nat}");
        assert!(
            nat.contains("-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment \"kube-system/kube-dns:dns -> 10.244.0.2:53\" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-YIL6JZP7A3QYXJU2\n"),
            "endpoints in ip:port order, the first with probability 1/2: {nat}"
        );
        assert!(
            nat.contains("-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment \"kube-system/kube-dns:dns -> 10.244.0.3:53\" -j KUBE-SEP-6E7XQMQ4RAYOWTTM\n"),
            "{nat}"
        );
        assert!(nat.contains("-A KUBE-SEP-YIL6JZP7A3QYXJU2 -s 10.244.0.2/32 -m comment --comment \"kube-system/kube-dns:dns\" -j KUBE-MARK-MASQ\n"), "{nat}");
        assert!(
            nat.contains(
                "-A KUBE-SEP-YIL6JZP7A3QYXJU2 -p udp -m comment --comment \"kube-system/kube-dns:dns\" -m udp -j DNAT --to-destination 10.244.0.2:53\n"
            ),
            "{nat}"
        );
        assert!(nat.contains("-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n"), "{nat}");
        assert!(nat.contains("-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0\n"), "{nat}");
        assert!(nat.contains("-j MASQUERADE --random-fully\n"), "{nat}");
        assert!(filter.contains("-A KUBE-SERVICES -d 10.96.0.30/32 -p tcp -m comment --comment \"default/empty has no endpoints\" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable\n"), "{filter}");
        assert!(filter.contains("-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment \"block incoming localnet connections\" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\n"), "{filter}");
        assert!(nat.trim_end().ends_with("COMMIT") && nat.contains(":KUBE-SEP-YIL6JZP7A3QYXJU2 - [0:0]\n"));
        assert!(nat.contains(":KUBE-PROXY-CANARY - [0:0]\n"), "{nat}");
    }

    /// sessionAffinity ClientIP (writeServiceToEndpointRules and the SEP chain): one `recent
    /// --rcheck --seconds <timeoutSeconds> --reap` rule per endpoint before the statistic
    /// rules, `recent --set` before the DNAT; iptables-save prints the match with its mask and
    /// side.
    #[test]
    fn client_ip_affinity_renders_the_recent_rules() {
        let mut t = ServiceTable { cluster_cidr: "10.0.0.0/8".into(), ..ServiceTable::default() };
        t.insert(ServicePort {
            name: "ns1/svc1:p80".into(),
            cluster_ip: "172.30.0.41".into(),
            port: 80,
            affinity_seconds: Some(10_800),
            cluster_endpoints: vec![("10.180.0.1".into(), 80), ("10.180.2.1".into(), 80)],
            has_endpoints: true,
            endpoint_count: 2,
            ..ServicePort::default()
        });
        let o = Options { masquerade_mark: "0x4000", random_fully: false, ..Options::kind("10.0.0.0/8", "192.168.0.2") };
        let restore = restore_input(&t, &o);
        let lines: Vec<&str> =
            restore.lines().filter(|l| l.starts_with("-A KUBE-SVC-XPGD46QRK7WJZT7O") || l.starts_with("-A KUBE-SEP-SXIVWICOYRO3J4NJ")).collect();
        assert_eq!(
            lines,
            [
                "-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 cluster IP\" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ",
                "-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 -> 10.180.0.1:80\" -m recent --name KUBE-SEP-SXIVWICOYRO3J4NJ --rcheck --seconds 10800 --reap -j KUBE-SEP-SXIVWICOYRO3J4NJ",
                "-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 -> 10.180.2.1:80\" -m recent --name KUBE-SEP-ZX7GRIZKSNUQ3LAJ --rcheck --seconds 10800 --reap -j KUBE-SEP-ZX7GRIZKSNUQ3LAJ",
                "-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 -> 10.180.0.1:80\" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-SXIVWICOYRO3J4NJ",
                "-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 -> 10.180.2.1:80\" -j KUBE-SEP-ZX7GRIZKSNUQ3LAJ",
                "-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ",
                "-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m recent --name KUBE-SEP-SXIVWICOYRO3J4NJ --set -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80",
            ]
        );
        let (_, nat) = iptables_save(&t, &o, "");
        assert!(
            nat.contains("-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 -> 10.180.0.1:80\" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-SXIVWICOYRO3J4NJ --mask 255.255.255.255 --rsource -j KUBE-SEP-SXIVWICOYRO3J4NJ\n"),
            "{nat}"
        );
        assert!(
            nat.contains("-A KUBE-SEP-SXIVWICOYRO3J4NJ -p tcp -m comment --comment \"ns1/svc1:p80\" -m recent --set --name KUBE-SEP-SXIVWICOYRO3J4NJ --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.180.0.1:80\n"),
            "{nat}"
        );
    }

    /// Upstream's test vector with a local endpoint (reference §4.5, TestInternalTrafficPolicy's
    /// eTP Local form): KUBE-EXT ends in a jump to KUBE-SVL, which holds the local endpoint only,
    /// while KUBE-SVC keeps both.
    #[test]
    fn external_traffic_policy_local_with_a_local_endpoint_jumps_to_kube_svl() {
        let mut t = ServiceTable { cluster_cidr: "10.0.0.0/8".into(), ..ServiceTable::default() };
        t.insert(ServicePort {
            name: "ns1/svc1:p80".into(),
            cluster_ip: "172.30.0.41".into(),
            port: 80,
            node_port: Some(3001),
            external_local: true,
            cluster_endpoints: vec![("10.180.0.1".into(), 80), ("10.180.2.1".into(), 80)],
            local_endpoints: vec![("10.180.2.1".into(), 80)],
            has_endpoints: true,
            endpoint_count: 2,
            ..ServicePort::default()
        });
        let o = Options { masquerade_mark: "0x4000", random_fully: false, ..Options::kind("10.0.0.0/8", "192.168.0.2") };
        let restore = restore_input(&t, &o);
        for line in [
            "-A KUBE-EXT-XPGD46QRK7WJZT7O -j KUBE-SVL-XPGD46QRK7WJZT7O",
            "-A KUBE-SVL-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 -> 10.180.2.1:80\" -j KUBE-SEP-ZX7GRIZKSNUQ3LAJ",
            "-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 -> 10.180.0.1:80\" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-SXIVWICOYRO3J4NJ",
            "-A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp --dport 3001 -j KUBE-EXT-XPGD46QRK7WJZT7O",
        ] {
            assert!(restore.lines().any(|l| l == line), "{line}\n{restore}");
        }
        assert!(!restore.contains("has no local endpoints"), "{restore}");
    }
}
