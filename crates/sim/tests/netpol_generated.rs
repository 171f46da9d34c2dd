#![cfg(not(target_arch = "wasm32"))]
//! A generated connectivity suite in the style of the upstream netpol e2e: namespaces x, y, z
//! with pods a, b, c serving TCP and UDP on ports 80 and 81 (named ports `serve-80-tcp`, ...),
//! and random NetworkPolicies drawn from fixed seeds — podSelector, namespaceSelector, both in
//! one peer and separate peers, ipBlock with except, numeric and named ports, endPort ranges,
//! protocols, explicit and defaulted policyTypes, empty rules. For every case three truth
//! tables are compared cell by cell (loopback cells ignored, as upstream does):
//!
//! - the oracle: written here from the NetworkPolicy API's documented semantics (the
//!   `networking/v1` field comments and the concept page), sharing no code with
//!   `kubesim-netpol`;
//! - the model's verdicts (`World::netpol_matrix`'s expected table, from the policy agents'
//!   `PolicyView`);
//! - probes: a real connection attempt per cell from the source pod through its node's rules
//!   and the fabric.
//!
//! `KUBESIM_NETPOL_SEEDS=N` runs seeds 1..=N instead of the fixed ones.

use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;
use std::collections::BTreeMap;

const NAMESPACES: [&str; 3] = ["x", "y", "z"];
const PODS: [&str; 3] = ["a", "b", "c"];
/// The seeds CI runs.
const SEEDS: [u64; 4] = [1, 2, 3, 4];
/// Cases per seed, each with one to three policies.
const CASES: usize = 10;

// ---------------------------------------------------------------------------------------------
// The cluster
// ---------------------------------------------------------------------------------------------

/// A namespace's labels (the control plane adds `kubernetes.io/metadata.name`).
fn namespace_labels(ns: &str) -> BTreeMap<String, String> {
    let team = if ns == "z" { "beta" } else { "alpha" };
    [("kubernetes.io/metadata.name", ns), ("team", team)].into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A pod's labels: `pod=<name>`, and `tier` on a and b only (so Exists/DoesNotExist differ).
fn pod_labels(pod: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([("pod".to_string(), pod.to_string())]);
    match pod {
        "a" => labels.insert("tier".into(), "front".into()),
        "b" => labels.insert("tier".into(), "back".into()),
        _ => None,
    };
    labels
}

fn model_yaml() -> String {
    let mut out = String::new();
    for ns in NAMESPACES {
        out.push_str(&format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}, labels: {{team: {}}}}}\n---\n", namespace_labels(ns)["team"]));
        for pod in PODS {
            let labels: Vec<String> = pod_labels(pod).iter().map(|(k, v)| format!("{k}: {v}")).collect();
            out.push_str(&format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {pod}, namespace: {ns}, labels: {{{}}}}}\nspec:\n  containers:\n",
                labels.join(", ")
            ));
            for port in [80, 81] {
                for proto in ["tcp", "udp"] {
                    out.push_str(&format!(
                        "  - name: cont-{port}-{proto}\n    image: registry.k8s.io/e2e-test-images/agnhost:2.53\n    command: [/agnhost, serve-hostname, --{proto}, --http=false, --port, '{port}']\n    ports: [{{containerPort: {port}, name: serve-{port}-{proto}, protocol: {}}}]\n",
                        proto.to_ascii_uppercase()
                    ));
                }
            }
            out.push_str("---\n");
        }
    }
    out
}

/// A pod as the oracle sees it.
#[derive(Clone, Debug)]
struct PodInfo {
    namespace: String,
    name: String,
    ip: u32,
    labels: BTreeMap<String, String>,
    /// Container ports: name → (port, protocol).
    ports: BTreeMap<String, (u16, &'static str)>,
}

impl PodInfo {
    fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

fn parse_ip(text: &str) -> u32 {
    let o: Vec<u32> = text.split('.').map(|p| p.parse().expect("an IPv4 address")).collect();
    (o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]
}

fn format_ip(ip: u32) -> String {
    format!("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255)
}

fn world() -> (World, Vec<PodInfo>) {
    let mut world = World::new(11);
    world.add_default_nodes();
    let outcome = apply(&mut world, &InputFile { name: "model.yaml".into(), text: model_yaml() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world.run_until(60_000);
    let mut pods = Vec::new();
    for ns in NAMESPACES {
        for pod in PODS {
            let ip = world.run_command(&format!("kubectl get pod {pod} -n {ns} -o jsonpath={{.status.podIP}}")).stdout;
            assert!(!ip.is_empty(), "{ns}/{pod} has an address");
            let ports = [80u16, 81].iter().flat_map(|p| [("tcp", "TCP"), ("udp", "UDP")].map(|(l, u)| (format!("serve-{p}-{l}"), (*p, u)))).collect();
            pods.push(PodInfo { namespace: ns.into(), name: pod.into(), ip: parse_ip(&ip), labels: pod_labels(pod), ports });
        }
    }
    (world, pods)
}

// ---------------------------------------------------------------------------------------------
// Random policies
// ---------------------------------------------------------------------------------------------

/// splitmix64: the test's own generator, seeded per case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A label selector requirement's operator.
#[derive(Clone, Copy, Debug)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// A label selector.
#[derive(Clone, Debug)]
struct Selector {
    labels: Vec<(String, String)>,
    expressions: Vec<(String, Op, Vec<String>)>,
}

impl Selector {
    fn everything() -> Selector {
        Selector { labels: Vec::new(), expressions: Vec::new() }
    }

    fn yaml(&self) -> String {
        let labels: Vec<String> = self.labels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let expressions: Vec<String> = self
            .expressions
            .iter()
            .map(|(k, op, values)| match op {
                Op::Exists | Op::DoesNotExist => format!("{{key: {k}, operator: {op:?}}}"),
                _ => format!("{{key: {k}, operator: {op:?}, values: [{}]}}", values.join(", ")),
            })
            .collect();
        match (labels.is_empty(), expressions.is_empty()) {
            (true, true) => "{}".into(),
            (false, true) => format!("{{matchLabels: {{{}}}}}", labels.join(", ")),
            (true, false) => format!("{{matchExpressions: [{}]}}", expressions.join(", ")),
            (false, false) => format!("{{matchLabels: {{{}}}, matchExpressions: [{}]}}", labels.join(", "), expressions.join(", ")),
        }
    }

    /// The LabelSelector semantics: every matchLabels pair and every expression holds; an
    /// empty selector matches everything.
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.expressions.iter().all(|(k, op, values)| match op {
                Op::In => labels.get(k).is_some_and(|v| values.contains(v)),
                Op::NotIn => labels.get(k).is_none_or(|v| !values.contains(v)),
                Op::Exists => labels.contains_key(k),
                Op::DoesNotExist => !labels.contains_key(k),
            })
    }
}

fn pod_selector(rng: &mut Rng) -> Selector {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    match rng.below(7) {
        0 => Selector::everything(),
        1 | 2 => Selector { labels: vec![("pod".into(), rng.pick(&PODS).to_string())], expressions: Vec::new() },
        3 => Selector { labels: vec![("tier".into(), rng.pick(&["front", "back"]).to_string())], expressions: Vec::new() },
        4 => {
            let choices: [&[&str]; 3] = [&["a", "b"], &["c"], &["b"]];
            let picked: &[&str] = choices[rng.below(choices.len())];
            let values = v(picked);
            Selector { labels: Vec::new(), expressions: vec![("pod".into(), *rng.pick(&[Op::In, Op::NotIn]), values)] }
        }
        5 => Selector { labels: Vec::new(), expressions: vec![("tier".into(), *rng.pick(&[Op::Exists, Op::DoesNotExist]), Vec::new())] },
        _ => Selector { labels: vec![("tier".into(), "front".into())], expressions: vec![("pod".into(), Op::In, v(&["a", "c"]))] },
    }
}

fn namespace_selector(rng: &mut Rng) -> Selector {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    match rng.below(6) {
        0 => Selector::everything(),
        1 | 2 => Selector { labels: vec![("kubernetes.io/metadata.name".into(), rng.pick(&NAMESPACES).to_string())], expressions: Vec::new() },
        3 => Selector { labels: vec![("team".into(), rng.pick(&["alpha", "beta"]).to_string())], expressions: Vec::new() },
        4 => Selector { labels: Vec::new(), expressions: vec![("kubernetes.io/metadata.name".into(), Op::NotIn, v(&[*rng.pick(&NAMESPACES)]))] },
        _ => Selector { labels: Vec::new(), expressions: vec![("team".into(), Op::In, v(&["beta"]))] },
    }
}

/// An IP block: a CIDR and its exceptions (each a strict subset).
#[derive(Clone, Debug)]
struct IpBlock {
    cidr: (u32, u32),
    except: Vec<(u32, u32)>,
}

fn cidr_text((ip, bits): (u32, u32)) -> String {
    format!("{}/{bits}", format_ip(ip))
}

fn mask(bits: u32) -> u32 {
    if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    }
}

fn in_cidr(ip: u32, (net, bits): (u32, u32)) -> bool {
    ip & mask(bits) == net & mask(bits)
}

fn ip_block(rng: &mut Rng, pods: &[PodInfo]) -> IpBlock {
    let pod = rng.pick(pods).ip;
    let other = rng.pick(pods).ip;
    let net24 = |ip: u32| (ip & mask(24), 24);
    match rng.below(5) {
        0 => IpBlock { cidr: (pod, 32), except: Vec::new() },
        1 => IpBlock { cidr: net24(pod), except: Vec::new() },
        2 => IpBlock { cidr: (parse_ip("10.244.0.0"), 16), except: vec![(other, 32)] },
        3 => IpBlock { cidr: (parse_ip("10.0.0.0"), 8), except: vec![net24(other)] },
        _ => {
            // A /24 with one of its addresses left out (when it has one of the pods).
            let except = if in_cidr(other, net24(pod)) && other != pod { vec![(other, 32)] } else { Vec::new() };
            IpBlock { cidr: net24(pod), except }
        }
    }
}

/// One `from`/`to` entry.
#[derive(Clone, Debug)]
enum Peer {
    Pods(Selector),
    Namespaces(Selector),
    Both(Selector, Selector),
    Block(IpBlock),
}

/// A `ports` entry's port.
#[derive(Clone, Debug)]
enum PortSpec {
    Number(u16, Option<u16>),
    Name(String),
}

/// A `ports` entry.
#[derive(Clone, Debug)]
struct Port {
    /// `None`: the field left out (TCP).
    protocol: Option<&'static str>,
    port: Option<PortSpec>,
}

/// An ingress or egress rule; `None` lists are left out of the YAML.
#[derive(Clone, Debug)]
struct Rule {
    peers: Option<Vec<Peer>>,
    ports: Option<Vec<Port>>,
}

#[derive(Clone, Debug)]
struct Policy {
    name: String,
    namespace: String,
    selector: Selector,
    /// `None`: left out (defaulted by the API server).
    types: Option<Vec<&'static str>>,
    ingress: Option<Vec<Rule>>,
    egress: Option<Vec<Rule>>,
}

fn port(rng: &mut Rng) -> Port {
    let protocol = match rng.below(4) {
        0 => None,
        1 => Some("UDP"),
        _ => Some("TCP"),
    };
    let port = match rng.below(6) {
        0 => None,
        1 | 2 => Some(PortSpec::Number(*rng.pick(&[80, 81, 82]), None)),
        3 => Some(PortSpec::Number(*rng.pick(&[79, 80, 81]), Some(*rng.pick(&[80, 81, 90])))),
        _ => Some(PortSpec::Name(rng.pick(&["serve-80-tcp", "serve-81-tcp", "serve-80-udp", "serve-81-udp", "serve-99-tcp"]).to_string())),
    };
    // endPort below port is invalid: raise it to the port.
    let port = match port {
        Some(PortSpec::Number(p, Some(e))) => Some(PortSpec::Number(p, Some(e.max(p)))),
        other => other,
    };
    Port { protocol, port }
}

fn rule(rng: &mut Rng, pods: &[PodInfo]) -> Rule {
    let peers = match rng.below(5) {
        0 => None,
        1 => Some(Vec::new()),
        _ => Some(
            (0..1 + rng.below(2))
                .map(|_| match rng.below(4) {
                    0 => Peer::Pods(pod_selector(rng)),
                    1 => Peer::Namespaces(namespace_selector(rng)),
                    2 => Peer::Both(namespace_selector(rng), pod_selector(rng)),
                    _ => Peer::Block(ip_block(rng, pods)),
                })
                .collect(),
        ),
    };
    let ports = match rng.below(4) {
        0 => None,
        1 => Some(Vec::new()),
        _ => Some((0..1 + rng.below(2)).map(|_| port(rng)).collect()),
    };
    Rule { peers, ports }
}

fn policy(rng: &mut Rng, pods: &[PodInfo], name: String) -> Policy {
    let rules = |rng: &mut Rng| -> Option<Vec<Rule>> {
        match rng.below(5) {
            0 => None,
            1 => Some(Vec::new()),
            _ => Some((0..1 + rng.below(2)).map(|_| rule(rng, pods)).collect()),
        }
    };
    let ingress = rules(rng);
    let egress = rules(rng);
    let types = match rng.below(5) {
        0 | 1 => None,
        2 => Some(vec!["Ingress"]),
        3 => Some(vec!["Egress"]),
        _ => Some(vec!["Ingress", "Egress"]),
    };
    Policy { name, namespace: rng.pick(&NAMESPACES).to_string(), selector: pod_selector(rng), types, ingress, egress }
}

impl Policy {
    fn yaml(&self) -> String {
        let mut out = format!(
            "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {{name: {}, namespace: {}}}\nspec:\n  podSelector: {}\n",
            self.name,
            self.namespace,
            self.selector.yaml()
        );
        if let Some(types) = &self.types {
            out.push_str(&format!("  policyTypes: [{}]\n", types.join(", ")));
        }
        for (field, peers_field, rules) in [("ingress", "from", &self.ingress), ("egress", "to", &self.egress)] {
            let Some(rules) = rules else { continue };
            if rules.is_empty() {
                out.push_str(&format!("  {field}: []\n"));
                continue;
            }
            out.push_str(&format!("  {field}:\n"));
            for rule in rules {
                let mut parts = Vec::new();
                if let Some(peers) = &rule.peers {
                    let peers: Vec<String> = peers
                        .iter()
                        .map(|p| match p {
                            Peer::Pods(s) => format!("{{podSelector: {}}}", s.yaml()),
                            Peer::Namespaces(s) => format!("{{namespaceSelector: {}}}", s.yaml()),
                            Peer::Both(n, s) => format!("{{namespaceSelector: {}, podSelector: {}}}", n.yaml(), s.yaml()),
                            Peer::Block(b) => {
                                let except: Vec<String> = b.except.iter().map(|e| cidr_text(*e)).collect();
                                if except.is_empty() {
                                    format!("{{ipBlock: {{cidr: {}}}}}", cidr_text(b.cidr))
                                } else {
                                    format!("{{ipBlock: {{cidr: {}, except: [{}]}}}}", cidr_text(b.cidr), except.join(", "))
                                }
                            }
                        })
                        .collect();
                    parts.push(format!("{peers_field}: [{}]", peers.join(", ")));
                }
                if let Some(ports) = &rule.ports {
                    let ports: Vec<String> = ports
                        .iter()
                        .map(|p| {
                            let mut fields = Vec::new();
                            if let Some(proto) = p.protocol {
                                fields.push(format!("protocol: {proto}"));
                            }
                            match &p.port {
                                Some(PortSpec::Number(n, end)) => {
                                    fields.push(format!("port: {n}"));
                                    if let Some(e) = end {
                                        fields.push(format!("endPort: {e}"));
                                    }
                                }
                                Some(PortSpec::Name(name)) => fields.push(format!("port: {name}")),
                                None => {}
                            }
                            format!("{{{}}}", fields.join(", "))
                        })
                        .collect();
                    parts.push(format!("ports: [{}]", ports.join(", ")));
                }
                out.push_str(&format!("  - {{{}}}\n", parts.join(", ")));
            }
        }
        out
    }

    // -----------------------------------------------------------------------------------------
    // The oracle, from the networking/v1 API's field documentation:
    //
    // - policyTypes: "If this field is not specified, it will default based on the existence of
    //   ingress or egress rules; policies that contain an egress section are assumed to affect
    //   egress, and all policies (whether or not they contain an ingress section) are assumed
    //   to affect ingress." (An empty egress list is no egress section: SetDefaults checks its
    //   length.)
    // - A pod is isolated for a direction when a policy of its namespace selects it and has
    //   that type; then a connection is allowed when some such policy's rule matches it (rules
    //   and policies are additive). Both the source's egress and the destination's ingress must
    //   allow it.
    // - A rule matches when its peers match (an empty or missing list: all sources or
    //   destinations) and its ports match (an empty or missing list: all ports).
    // - A peer: podSelector alone selects pods of the policy's namespace; namespaceSelector
    //   alone, all pods of the selected namespaces; both, the selected pods of the selected
    //   namespaces; ipBlock, addresses in the CIDR and in none of the except CIDRs.
    // - A port: the protocol (TCP when left out) must be the connection's; no port matches
    //   every port; a number matches that port, or the range to endPort inclusive; a name
    //   matches a container port of that name and protocol on the destination pod.
    // -----------------------------------------------------------------------------------------

    fn has_type(&self, direction: &str) -> bool {
        match &self.types {
            Some(types) => types.contains(&direction),
            None => direction == "Ingress" || self.egress.as_ref().is_some_and(|e| !e.is_empty()),
        }
    }

    fn peer_matches(&self, peer: &Peer, other: &PodInfo) -> bool {
        let ns_labels = namespace_labels(&other.namespace);
        match peer {
            Peer::Pods(s) => other.namespace == self.namespace && s.matches(&other.labels),
            Peer::Namespaces(n) => n.matches(&ns_labels),
            Peer::Both(n, s) => n.matches(&ns_labels) && s.matches(&other.labels),
            Peer::Block(b) => in_cidr(other.ip, b.cidr) && !b.except.iter().any(|e| in_cidr(other.ip, *e)),
        }
    }

    fn rule_matches(&self, rule: &Rule, peer: &PodInfo, destination: &PodInfo, port: u16, protocol: &str) -> bool {
        let peers_ok = match &rule.peers {
            None => true,
            Some(peers) => peers.is_empty() || peers.iter().any(|p| self.peer_matches(p, peer)),
        };
        let ports_ok = match &rule.ports {
            None => true,
            Some(ports) => {
                ports.is_empty()
                    || ports.iter().any(|p| {
                        let proto = p.protocol.unwrap_or("TCP");
                        proto == protocol
                            && match &p.port {
                                None => true,
                                Some(PortSpec::Number(n, None)) => *n == port,
                                Some(PortSpec::Number(n, Some(end))) => (*n..=*end).contains(&port),
                                Some(PortSpec::Name(name)) => destination.ports.get(name) == Some(&(port, proto)),
                            }
                    })
            }
        };
        peers_ok && ports_ok
    }
}

/// The oracle's verdict for a connection from `src` to `dst` on `port`/`protocol`.
fn oracle(policies: &[Policy], src: &PodInfo, dst: &PodInfo, port: u16, protocol: &str) -> bool {
    let direction_allows = |direction: &str, subject: &PodInfo, peer: &PodInfo| {
        let applying: Vec<&Policy> =
            policies.iter().filter(|p| p.namespace == subject.namespace && p.selector.matches(&subject.labels) && p.has_type(direction)).collect();
        if applying.is_empty() {
            return true;
        }
        applying.iter().any(|p| {
            let rules = if direction == "Ingress" { &p.ingress } else { &p.egress };
            rules.iter().flatten().any(|r| p.rule_matches(r, peer, dst, port, protocol))
        })
    };
    direction_allows("Egress", src, dst) && direction_allows("Ingress", dst, src)
}

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

fn seeds() -> Vec<u64> {
    match std::env::var("KUBESIM_NETPOL_SEEDS").ok().and_then(|n| n.parse::<u64>().ok()) {
        Some(n) => (1..=n).collect(),
        None => SEEDS.to_vec(),
    }
}

/// A table of `.`/`X` in the netpol e2e's layout, for failure messages.
fn table(pods: &[PodInfo], cell: impl Fn(&PodInfo, &PodInfo) -> Option<bool>) -> String {
    let mut out = String::from("-\t");
    out.push_str(&pods.iter().map(PodInfo::key).collect::<Vec<_>>().join("\t"));
    for from in pods {
        out.push_str(&format!("\n{}", from.key()));
        for to in pods {
            out.push_str(match cell(from, to) {
                Some(true) => "\t.",
                Some(false) => "\tX",
                None => "\t#",
            });
        }
    }
    out
}

#[test]
fn generated_policies_agree_with_the_oracle_and_the_probes() {
    let (base, pods) = world();
    let namespaces: Vec<String> = NAMESPACES.iter().map(|n| n.to_string()).collect();
    let mut policies_checked = 0;
    let mut cells_checked = 0;
    let mut cells_blocked = 0;
    let mut shapes: BTreeMap<&str, usize> = BTreeMap::new();
    for seed in seeds() {
        let mut world = base.clone();
        for case in 0..CASES {
            let mut rng = Rng(seed.wrapping_mul(1_000_003).wrapping_add(case as u64));
            let policies: Vec<Policy> = (0..1 + rng.below(3)).map(|i| policy(&mut rng, &pods, format!("gen-{case}-{i}"))).collect();
            let yaml: String = policies.iter().map(|p| format!("{}---\n", p.yaml())).collect();
            for p in &policies {
                policies_checked += 1;
                *shapes.entry(if p.types.is_some() { "explicit policyTypes" } else { "defaulted policyTypes" }).or_default() += 1;
                for rule in p.ingress.iter().chain(&p.egress).flatten() {
                    for peer in rule.peers.iter().flatten() {
                        *shapes
                            .entry(match peer {
                                Peer::Pods(_) => "podSelector peer",
                                Peer::Namespaces(_) => "namespaceSelector peer",
                                Peer::Both(..) => "namespaceSelector+podSelector peer",
                                Peer::Block(b) if b.except.is_empty() => "ipBlock peer",
                                Peer::Block(_) => "ipBlock peer with except",
                            })
                            .or_default() += 1;
                    }
                    for port in rule.ports.iter().flatten() {
                        *shapes
                            .entry(match &port.port {
                                None => "protocol-only port",
                                Some(PortSpec::Number(_, None)) => "numeric port",
                                Some(PortSpec::Number(_, Some(_))) => "endPort range",
                                Some(PortSpec::Name(_)) => "named port",
                            })
                            .or_default() += 1;
                    }
                }
            }
            let file = format!("/tmp/gen-{seed}-{case}.yaml");
            world.add_file(&file, &yaml);
            let applied = world.run_command(&format!("kubectl apply -f {file}"));
            assert_eq!(applied.exit_code, 0, "seed {seed} case {case}: {applied:?}\n{yaml}");
            // The policy agents' informer publishes within milliseconds.
            let now = world.now();
            world.run_until(now + 1_000);
            for (port, protocol) in [(80u16, "TCP"), (81, "TCP"), (80, "UDP")] {
                let (verdicts, probed) = world.netpol_matrix(&namespaces, port, protocol == "UDP").expect("the matrix");
                let mut wrong = Vec::new();
                for src in &pods {
                    for dst in &pods {
                        if src.key() == dst.key() {
                            continue;
                        }
                        cells_checked += 1;
                        let want = oracle(&policies, src, dst, port, protocol);
                        cells_blocked += usize::from(!want);
                        let model = verdicts.get(&src.key(), &dst.key());
                        let probe = probed.get(&src.key(), &dst.key());
                        if model != Some(want) || probe != Some(want) {
                            wrong.push(format!("{} -> {}: oracle {want}, model {model:?}, probe {probe:?}", src.key(), dst.key()));
                        }
                    }
                }
                assert!(
                    wrong.is_empty(),
                    "seed {seed} case {case}, port {port}/{protocol}: {} cells differ\n{}\n\npolicies:\n{yaml}\noracle:\n{}\n\nmodel:\n{}\n\nprobed:\n{}\n\nreplay: KUBESIM_NETPOL_SEEDS={seed} cargo test -p kubesim-sim --test netpol_generated",
                    wrong.len(),
                    wrong.join("\n"),
                    table(&pods, |s, d| (s.key() != d.key()).then(|| oracle(&policies, s, d, port, protocol))),
                    table(&pods, |s, d| verdicts.get(&s.key(), &d.key())),
                    table(&pods, |s, d| probed.get(&s.key(), &d.key())),
                );
            }
            for ns in NAMESPACES {
                let deleted = world.run_command(&format!("kubectl delete networkpolicy --all -n {ns}"));
                assert_eq!(deleted.exit_code, 0, "{deleted:?}");
            }
            let now = world.now();
            world.run_until(now + 1_000);
        }
    }
    // Dozens of policies, every shape the generator knows drawn at least once.
    assert!(policies_checked >= 40, "{policies_checked} policies");
    for shape in [
        "explicit policyTypes",
        "defaulted policyTypes",
        "podSelector peer",
        "namespaceSelector peer",
        "namespaceSelector+podSelector peer",
        "ipBlock peer",
        "ipBlock peer with except",
        "protocol-only port",
        "numeric port",
        "endPort range",
        "named port",
    ] {
        assert!(shapes.get(shape).is_some_and(|n| *n > 0), "no {shape} drawn: {shapes:?}");
    }
    // Neither everything allowed nor everything blocked.
    assert!(cells_blocked > cells_checked / 10 && cells_blocked < cells_checked * 9 / 10, "{cells_blocked} of {cells_checked} cells blocked");
    eprintln!("{policies_checked} policies, {cells_checked} cells ({cells_blocked} blocked); shapes: {shapes:?}");
}

// The oracle itself, on cases whose answers the API documentation spells out.
#[test]
fn the_oracle_follows_the_documented_semantics() {
    let pod = |ns: &str, name: &str, ip: &str| PodInfo {
        namespace: ns.into(),
        name: name.into(),
        ip: parse_ip(ip),
        labels: pod_labels(name),
        ports: BTreeMap::from([("serve-80-tcp".to_string(), (80, "TCP"))]),
    };
    let (xa, ya, zb) = (pod("x", "a", "10.244.1.2"), pod("y", "a", "10.244.2.2"), pod("z", "b", "10.244.3.2"));
    let select_a = Selector { labels: vec![("pod".into(), "a".into())], expressions: Vec::new() };
    let base = |ingress: Option<Vec<Rule>>, egress: Option<Vec<Rule>>, types: Option<Vec<&'static str>>| Policy {
        name: "p".into(),
        namespace: "x".into(),
        selector: select_a.clone(),
        types,
        ingress,
        egress,
    };
    let all = Rule { peers: None, ports: None };
    // No ingress rules: deny all ingress; egress untouched (not an egress policy by default).
    let deny = base(None, None, None);
    assert!(!oracle(std::slice::from_ref(&deny), &ya, &xa, 80, "TCP"));
    assert!(oracle(&[deny], &xa, &ya, 80, "TCP"));
    // An empty egress list is no egress section; one rule makes it an egress policy.
    assert!(oracle(&[base(Some(vec![all.clone()]), Some(Vec::new()), None)], &xa, &ya, 80, "TCP"));
    let egress_to_z =
        Rule { peers: Some(vec![Peer::Namespaces(Selector { labels: vec![("team".into(), "beta".into())], expressions: Vec::new() })]), ports: None };
    let p = base(Some(vec![all.clone()]), Some(vec![egress_to_z]), None);
    assert!(!oracle(std::slice::from_ref(&p), &xa, &ya, 80, "TCP") && oracle(&[p], &xa, &zb, 80, "TCP"));
    // podSelector alone: the policy's namespace only; with a namespaceSelector: AND.
    let from = |peers: Vec<Peer>| base(Some(vec![Rule { peers: Some(peers), ports: None }]), None, None);
    let only_pod_a = Peer::Pods(select_a.clone());
    assert!(!oracle(&[from(vec![only_pod_a.clone()])], &ya, &xa, 80, "TCP"), "podSelector alone is the policy's namespace");
    let any_ns = Selector::everything();
    assert!(oracle(&[from(vec![Peer::Both(any_ns.clone(), select_a.clone())])], &ya, &xa, 80, "TCP"));
    assert!(!oracle(&[from(vec![Peer::Both(any_ns, select_a.clone())])], &zb, &xa, 80, "TCP"), "z/b is not pod=a");
    // ipBlock with except; named ports with their protocol; endPort inclusive.
    let block = Peer::Block(IpBlock { cidr: (parse_ip("10.244.0.0"), 16), except: vec![(parse_ip("10.244.2.0"), 24)] });
    assert!(oracle(&[from(vec![block.clone()])], &zb, &xa, 80, "TCP") && !oracle(&[from(vec![block])], &ya, &xa, 80, "TCP"));
    let on = |port: Port| base(Some(vec![Rule { peers: None, ports: Some(vec![port]) }]), None, None);
    assert!(oracle(&[on(Port { protocol: None, port: Some(PortSpec::Name("serve-80-tcp".into())) })], &ya, &xa, 80, "TCP"));
    assert!(!oracle(&[on(Port { protocol: Some("UDP"), port: Some(PortSpec::Name("serve-80-tcp".into())) })], &ya, &xa, 80, "UDP"));
    assert!(oracle(&[on(Port { protocol: None, port: Some(PortSpec::Number(79, Some(80))) })], &ya, &xa, 80, "TCP"));
    assert!(!oracle(&[on(Port { protocol: None, port: Some(PortSpec::Number(79, Some(80))) })], &ya, &xa, 81, "TCP"));
    // Policies add up: a second policy admitting y/a opens what the first closed.
    let mut second = from(vec![Peer::Namespaces(Selector { labels: vec![("kubernetes.io/metadata.name".into(), "y".into())], expressions: Vec::new() })]);
    second.name = "q".into();
    assert!(oracle(&[base(None, None, None), second], &ya, &xa, 80, "TCP"));
}
