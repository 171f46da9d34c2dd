//! The NetworkPolicy questions a user asks of the cluster (`netpol ...` command lines, the UI):
//! can A reach B on port P, and why — which policies isolate each end and which rule allows the
//! flow, from [`kubesim_netpol::PolicyView::explain`], the function the fabric enforces with —
//! and the connectivity matrix of a set of namespaces in the upstream netpol e2e's truth-table
//! format, computed from the policies and confirmed by probing: each cell is a real connection
//! attempt from the source pod through its node's rules and the fabric (`agnhost connect`'s
//! SYN: it reaches the server's socket, nothing is sent to the program).

use crate::world::World;
use kubesim_netpol::matrix::TruthTable;
use kubesim_netpol::PolicyView;
use kubesim_os::program::{NetCall, NetError, NetReply};
use kubesim_runtime::net::{route_remote, Flow, Packet};

/// How long a probe waits (the netpol e2e's `agnhost connect --timeout=1s`).
pub const PROBE_TIMEOUT_MS: u64 = 1_000;

/// What one probe saw.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum ProbeResult {
    /// The connection was accepted.
    Connected,
    /// Nothing listens (or a Service has no endpoints).
    Refused,
    /// No answer; `Some(why)` when a policy dropped it.
    TimedOut(Option<String>),
}

impl ProbeResult {
    /// Whether the connection was accepted.
    pub fn connected(&self) -> bool {
        *self == ProbeResult::Connected
    }

    /// Whether the packet got through to the destination pod (accepted, or refused there
    /// because nothing listens): what a policy verdict of "allowed" predicts.
    pub fn reached(&self) -> bool {
        matches!(self, ProbeResult::Connected | ProbeResult::Refused)
    }

    /// In words, for the matrix's cells.
    pub fn describe(&self) -> String {
        match self {
            ProbeResult::Connected => "connected".into(),
            ProbeResult::Refused => "connection refused (nothing listens on that port)".into(),
            ProbeResult::TimedOut(Some(why)) => format!("timed out (dropped: {why})"),
            ProbeResult::TimedOut(None) => "timed out".into(),
        }
    }
}

/// A pod named `namespace/name` (or `name` in `default`).
fn split_pod(text: &str) -> (String, String) {
    match text.split_once('/') {
        Some((ns, name)) => (ns.to_string(), name.to_string()),
        None => ("default".to_string(), text.to_string()),
    }
}

/// `PORT`, `PORT/TCP` or `PORT/UDP`.
fn parse_port(text: &str) -> Result<(u16, bool), String> {
    let (number, protocol) = text.split_once('/').unwrap_or((text, "TCP"));
    let port = number.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| format!("invalid port {number:?}: want 1-65535"))?;
    match protocol.to_ascii_uppercase().as_str() {
        "TCP" => Ok((port, false)),
        "UDP" => Ok((port, true)),
        other => Err(format!("unsupported protocol {other:?}: want TCP or UDP")),
    }
}

impl World {
    /// The policy agents' view of the cluster as the API server holds it now.
    pub fn policy_view(&self) -> PolicyView {
        let store = self.api().store();
        let pods: Vec<_> = store.list(("", "pods"), None).filter_map(|o| o.as_pod().cloned()).collect();
        let namespaces: Vec<(String, std::collections::BTreeMap<String, String>)> =
            store.list(("", "namespaces"), None).map(|o| (o.name().to_string(), o.metadata().labels.clone().unwrap_or_default())).collect();
        let policies: Vec<_> =
            store.list(("networking.k8s.io", "networkpolicies"), None).filter_map(|o| o.decode::<k8s_openapi::api::networking::v1::NetworkPolicy>()).collect();
        PolicyView::build(pods.iter(), namespaces.iter().map(|(n, l)| (n.as_str(), l)), policies.iter())
    }

    /// The address of pod `namespace/name`, or the text itself if it is an address.
    fn address_of(&self, text: &str) -> Result<String, String> {
        if text.parse::<std::net::Ipv4Addr>().is_ok() {
            return Ok(text.to_string());
        }
        let (ns, name) = split_pod(text);
        let pod = self.api().store().get(("", "pods"), &ns, &name).ok_or_else(|| format!("pods \"{name}\" not found in namespace {ns:?}"))?;
        pod.as_pod()
            .and_then(|p| p.status.as_ref())
            .and_then(|s| s.pod_ip.clone())
            .filter(|ip| !ip.is_empty())
            .ok_or_else(|| format!("pod {ns}/{name} has no IP address yet"))
    }

    /// One connection attempt from pod `from` (`namespace/name`) to `to_ip:port`, through the
    /// source node's Service rules and the fabric, as a process in the pod would make it.
    pub fn probe(&mut self, from: &str, to_ip: &str, port: u16, udp: bool) -> Result<ProbeResult, String> {
        let (ns, name) = split_pod(from);
        let pod = self.api().store().get(("", "pods"), &ns, &name).ok_or_else(|| format!("pods \"{name}\" not found in namespace {ns:?}"))?;
        let p = pod.as_pod().expect("pods hold pods");
        let node = p.spec.as_ref().and_then(|s| s.node_name.clone()).ok_or_else(|| format!("pod {ns}/{name} is not scheduled"))?;
        let uid = p.metadata.uid.clone().unwrap_or_default();
        let container = p.spec.as_ref().and_then(|s| s.containers.first()).map(|c| c.name.clone()).unwrap_or_default();
        let id = crate::commands::exec_target(self.runtime().hosts(), &node, &uid, &container)?;
        let call = if udp {
            NetCall::Udp { dst: to_ip.to_string(), port, send: Vec::new(), timeout_ms: PROBE_TIMEOUT_MS }
        } else {
            NetCall::Tcp { dst: to_ip.to_string(), port, send: Vec::new(), timeout_ms: PROBE_TIMEOUT_MS }
        };
        // Probes are the simulator's measurement, not the pod's traffic: routed, neither
        // logged nor changing anything (a connect-only packet reaches no program).
        let delivery = self.runtime_mut().probe_network(|hosts, fabric, now| {
            let host = hosts.get(&node)?;
            let src_ip = host.cri.container_ip(&id)?;
            let dnat = kubesim_runtime::net::dnat_lookup(&host.netfilter, &host.ip(), (&src_ip, 39_999), &call, now);
            let packet = Packet { connect_only: true, ..Packet::new(&node, src_ip, 39_999, &call, dnat) };
            Some(route_remote(hosts, fabric, &packet, now))
        });
        let delivery = delivery.ok_or_else(|| format!("pod {ns}/{name} has no running container"))?;
        Ok(match (&delivery.reply, delivery.dropped_by) {
            (_, Some(why)) => ProbeResult::TimedOut(Some(why)),
            (NetReply::Tcp(Ok(_)) | NetReply::Udp(Ok(_)), None) => ProbeResult::Connected,
            (NetReply::Tcp(Err(NetError::Refused)) | NetReply::Udp(Err(NetError::Refused)), None) => ProbeResult::Refused,
            _ => ProbeResult::TimedOut(None),
        })
    }

    /// `netpol check FROM TO [PORT[/PROTO]]`: whether pod FROM reaches TO (a pod or an address)
    /// and why, then what a probe saw.
    pub fn netpol_check(&mut self, from: &str, to: &str, port: &str) -> Result<String, String> {
        let (port, udp) = parse_port(port)?;
        let src = self.address_of(from)?;
        let dst = self.address_of(to)?;
        let view = self.policy_view();
        let flow = Flow::located(self.runtime().fabric(), &src, &dst, port, udp);
        let explanation = view.explain(&flow);
        let name = |ip: &str| view.pod(ip).map_or_else(|| ip.to_string(), |p| format!("{} ({ip})", p.key()));
        let proto = if udp { "UDP" } else { "TCP" };
        let verdict = if explanation.allowed() { "allowed" } else { "blocked" };
        let mut out = format!("{} -> {} port {port}/{proto}: {verdict}\n", name(&src), name(&dst));
        out.push_str(&format!("  {}\n", explanation.egress.reason(kubesim_runtime::net::Direction::Egress)));
        out.push_str(&format!("  {}\n", explanation.ingress.reason(kubesim_runtime::net::Direction::Ingress)));
        let probe = self.probe(from, &dst, port, udp)?;
        out.push_str(&match probe {
            ProbeResult::Connected => "probe: connected\n".to_string(),
            ProbeResult::Refused => "probe: connection refused (nothing listens on that port)\n".to_string(),
            ProbeResult::TimedOut(Some(_)) => "probe: timed out (dropped by policy)\n".to_string(),
            ProbeResult::TimedOut(None) => "probe: timed out\n".to_string(),
        });
        Ok(out)
    }

    /// The connectivity among the pods of `namespaces` on one port: (expected from the
    /// policies, probed). Rows and columns are `namespace/pod` in name order.
    pub fn netpol_matrix(&mut self, namespaces: &[String], port: u16, udp: bool) -> Result<(TruthTable, TruthTable), String> {
        let view = self.policy_view();
        let mut pods: Vec<(String, String)> = view.pods().filter(|(_, p)| namespaces.contains(&p.namespace)).map(|(ip, p)| (p.key(), ip.clone())).collect();
        pods.sort();
        let names: Vec<String> = pods.iter().map(|(k, _)| k.clone()).collect();
        let mut expected = TruthTable::new(names.clone(), names.clone());
        let mut probed = TruthTable::new(names.clone(), names);
        for (from, src) in &pods {
            for (to, dst) in &pods {
                let flow = Flow::located(self.runtime().fabric(), src, dst, port, udp);
                expected.set(from, to, view.explain(&flow).allowed());
                probed.set(from, to, self.probe(from, dst, port, udp)?.connected());
            }
        }
        Ok((expected, probed))
    }

    /// Every pair's verdict among the pods of `namespaces` on one port, without probing:
    /// (cells, allowed cells). What the matrix costs when only the policies are evaluated.
    pub fn netpol_verdicts(&self, namespaces: &[String], port: u16, udp: bool) -> (usize, usize) {
        let view = self.policy_view();
        let ips: Vec<&String> = view.pods().filter(|(_, p)| namespaces.contains(&p.namespace)).map(|(ip, _)| ip).collect();
        let mut allowed = 0;
        for src in &ips {
            for dst in &ips {
                allowed += usize::from(view.explain(&Flow::located(self.runtime().fabric(), src, dst, port, udp)).allowed());
            }
        }
        (ips.len() * ips.len(), allowed)
    }

    /// Runs a `netpol` command line (`check FROM TO [PORT[/PROTO]]`, `matrix [NAMESPACE...]
    /// [--port PORT[/PROTO]]`): its output or error.
    pub fn netpol_command(&mut self, line: &str) -> Result<String, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["check", from, to] => self.netpol_check(from, to, "80"),
            ["check", from, to, port] => self.netpol_check(from, to, port),
            ["matrix", rest @ ..] => {
                let mut namespaces = Vec::new();
                let mut port = "80".to_string();
                let mut it = rest.iter();
                while let Some(word) = it.next() {
                    if let Some(p) = word.strip_prefix("--port=") {
                        port = p.to_string();
                    } else if *word == "--port" {
                        port = it.next().ok_or("--port needs a value")?.to_string();
                    } else {
                        namespaces.push(word.to_string());
                    }
                }
                if namespaces.is_empty() {
                    namespaces.push("default".into());
                }
                let (number, udp) = parse_port(&port)?;
                let (expected, probed) = self.netpol_matrix(&namespaces, number, udp)?;
                let mut out = format!("expected (from the policies), port {port}:\n{}\n\nprobed:\n{}\n", expected.pretty_print(""), probed.pretty_print(""));
                let differences = expected.differences(&probed);
                if differences.is_empty() {
                    out.push_str("\nthe probes agree with the policies\n");
                } else {
                    out.push_str(&format!("\n{} cells differ:\n{}\n", differences.len(), expected.compare(&probed).pretty_print("")));
                }
                Ok(out)
            }
            _ => Err("usage: netpol check FROM TO [PORT[/TCP|/UDP]] | netpol matrix [NAMESPACE...] [--port PORT[/TCP|/UDP]]".into()),
        }
    }
}

/// The benchmark cluster of `kubesim bench netpol` and the browser measurement: 10 nodes,
/// `pods` agnhost pods serving TCP 80 over 5 namespaces (labels `app`, `tier`), and `policies`
/// NetworkPolicies cycling through the shapes the docs use (default deny, allow by pod label,
/// by namespace, both, ports, egress). Returns the world with every pod running, and the
/// namespaces.
pub fn bench_world(pods: usize, policies: usize) -> (World, Vec<String>) {
    let mut world = World::new(1);
    for i in 0..10 {
        world.add_node(crate::cluster::node_template(&format!("node-{}", i + 1), ["zone-a", "zone-b", "zone-c"][i % 3], "32", "64Gi", "110"));
    }
    let namespaces: Vec<String> = (0..5).map(|i| format!("ns-{i}")).collect();
    let mut yaml = String::new();
    for ns in &namespaces {
        yaml.push_str(&format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}, labels: {{team: t{}}}}}\n---\n", ns.len() % 2));
    }
    for i in 0..pods {
        let ns = &namespaces[i % namespaces.len()];
        yaml.push_str(&format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p-{i}, namespace: {ns}, labels: {{app: a{}, tier: t{}}}}}\nspec:\n  containers:\n  - name: c\n    image: registry.k8s.io/e2e-test-images/agnhost:2.53\n    command: [/agnhost, serve-hostname, --tcp, --http=false, --port, '80']\n    ports: [{{containerPort: 80, name: http}}]\n---\n",
            i % 7,
            i % 3
        ));
    }
    for i in 0..policies {
        let ns = &namespaces[i % namespaces.len()];
        let body = match i % 6 {
            0 => format!("  podSelector: {{matchLabels: {{app: a{}}}}}\n  policyTypes: [Ingress]\n", i % 7),
            1 => format!("  podSelector: {{matchLabels: {{app: a{}}}}}\n  ingress:\n  - from: [{{podSelector: {{matchLabels: {{tier: t{}}}}}}}]\n", i % 7, i % 3),
            2 => format!("  podSelector: {{matchLabels: {{tier: t{}}}}}\n  ingress:\n  - from: [{{namespaceSelector: {{matchLabels: {{team: t{}}}}}}}]\n    ports: [{{port: 80}}]\n", i % 3, i % 2),
            3 => format!("  podSelector: {{matchLabels: {{app: a{}}}}}\n  ingress:\n  - from: [{{namespaceSelector: {{}}, podSelector: {{matchLabels: {{app: a{}}}}}}}]\n    ports: [{{port: http}}]\n", i % 7, (i + 1) % 7),
            4 => format!("  podSelector: {{matchLabels: {{app: a{}}}}}\n  policyTypes: [Egress]\n  egress:\n  - to: [{{podSelector: {{matchLabels: {{tier: t{}}}}}}}]\n", i % 7, i % 3),
            _ => "  podSelector: {}\n  ingress:\n  - from: [{ipBlock: {cidr: 10.244.0.0/16, except: [10.244.1.0/24]}}]\n    ports: [{port: 79, endPort: 81}]\n".to_string(),
        };
        yaml.push_str(&format!("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {{name: np-{i}, namespace: {ns}}}\nspec:\n{body}---\n"));
    }
    let outcome = crate::loader::apply(&mut world, &crate::scenario::InputFile { name: "bench-netpol.yaml".into(), text: yaml });
    assert!(outcome.errors.is_empty(), "the benchmark's objects are valid: {:?}", outcome.errors);
    world.run_until(60_000);
    (world, namespaces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_and_pods_parse() {
        assert_eq!(parse_port("80"), Ok((80, false)));
        assert_eq!(parse_port("53/udp"), Ok((53, true)));
        assert!(parse_port("0").is_err());
        assert!(parse_port("80/SCTP").is_err());
        assert_eq!(split_pod("x/a"), ("x".into(), "a".into()));
        assert_eq!(split_pod("web"), ("default".into(), "web".into()));
    }
}
