//! The decision: NetworkPolicies, pods and namespaces compiled into a [`PolicyView`] that
//! answers, for one flow, which policies isolate each end and which rule (if any) allows it.
//! Pure: objects in, verdicts out. The enforcement ([`crate::informer`]) and the explanations
//! (`kubesim netpol check`, the UI) both call [`PolicyView::explain`], so what is enforced and
//! what is explained cannot disagree.
//!
//! Semantics (networking/v1 API; defaults from SetDefaults_NetworkPolicy, which the API server
//! applies on create): a pod is isolated for a direction iff a policy of its namespace selects
//! it and lists the direction in `policyTypes`; an isolated direction admits the union of the
//! rules of all such policies; a flow needs the source's egress and the destination's ingress.
//! A peer's `podSelector` and `namespaceSelector` in one element are ANDed, separate elements
//! ORed; `ipBlock` matches addresses (pod IPs included) in `cidr` outside every `except`; named
//! ports resolve on the destination pod's container ports; `endPort` makes a range.
//!
//! Implementation-defined choices (documented as kindnet's kube-network-policies and most CNIs
//! make them): traffic from the destination pod's own node (kubelet probes, host-network pods,
//! connections the node masqueraded towards the pod, which come from its veth's gateway address)
//! is always admitted; host-network pods are neither selected nor matched as pod peers; SCTP
//! flows do not exist in the model.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::selector::Selector;
use kubesim_runtime::net::{Direction, Flow};
use std::collections::BTreeMap;

/// What the view knows of a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodInfo {
    /// Its uid (the CNI registers its address under it).
    pub uid: String,
    /// Its address as the API reports it (`status.podIP`), once published.
    pub ip: Option<String>,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its node's address (`status.hostIP`).
    pub node_ip: String,
    /// Named container ports: (name, protocol) → number.
    pub named_ports: BTreeMap<(String, String), u16>,
}

impl PodInfo {
    /// The pod as the policy agent sees it: `None` for host-network pods and finished pods
    /// (their address may already belong to another pod).
    pub fn of(pod: &Pod) -> Option<PodInfo> {
        if !PodInfo::admitted(pod) {
            return None;
        }
        let spec = pod.spec.as_ref()?;
        let status = pod.status.as_ref();
        let mut named_ports = BTreeMap::new();
        for c in spec.init_containers.iter().flatten().chain(spec.containers.iter()) {
            for p in c.ports.iter().flatten() {
                if let Some(name) = p.name.clone() {
                    named_ports.insert((name, p.protocol.clone().unwrap_or_else(|| "TCP".into())), p.container_port as u16);
                }
            }
        }
        Some(PodInfo {
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            ip: status.and_then(|s| s.pod_ip.clone()).filter(|ip| !ip.is_empty()),
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            name: pod.metadata.name.clone().unwrap_or_default(),
            labels: pod.metadata.labels.clone().unwrap_or_default(),
            node_ip: status.and_then(|s| s.host_ip.clone()).unwrap_or_default(),
            named_ports,
        })
    }

    /// Whether the agent sees the pod at all ([`PodInfo::of`] is `Some`).
    pub fn admitted(pod: &Pod) -> bool {
        let Some(spec) = pod.spec.as_ref() else { return false };
        spec.host_network != Some(true) && !matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"))
    }

    /// `namespace/name`, as the netpol e2e names pods.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// An IPv4 range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    network: u32,
    prefix: u8,
}

impl Cidr {
    /// Parses `a.b.c.d/n` (IPv6 ranges are not modelled: `None`).
    pub fn parse(text: &str) -> Option<Cidr> {
        let (ip, prefix) = text.split_once('/')?;
        let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 32)?;
        let ip = ipv4(ip)?;
        let mask = mask(prefix);
        Some(Cidr { network: ip & mask, prefix })
    }

    /// Whether the address is in the range.
    pub fn contains(&self, ip: &str) -> bool {
        ipv4(ip).is_some_and(|ip| ip & mask(self.prefix) == self.network)
    }
}

fn mask(prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix))
    }
}

fn ipv4(text: &str) -> Option<u32> {
    text.parse::<std::net::Ipv4Addr>().ok().map(u32::from)
}

/// One element of a rule's `from`/`to`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Peer {
    /// `podSelector` and/or `namespaceSelector` (both: AND).
    Pods { pods: Option<Selector>, namespaces: Option<Selector> },
    /// `ipBlock`.
    Block { cidr: Option<Cidr>, except: Vec<Cidr> },
}

/// One element of a rule's `ports`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Port {
    protocol: String,
    port: Option<IntOrString>,
    end_port: Option<u16>,
}

/// One ingress or egress rule.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    /// Empty: every peer.
    peers: Vec<Peer>,
    /// Empty: every port.
    ports: Vec<Port>,
}

/// A compiled policy.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Policy {
    namespace: String,
    name: String,
    selector: Selector,
    /// `None` when the policy does not isolate ingress.
    ingress: Option<Vec<Rule>>,
    egress: Option<Vec<Rule>>,
}

fn compile_peer(peer: &NetworkPolicyPeer) -> Peer {
    if let Some(block) = &peer.ip_block {
        return Peer::Block { cidr: Cidr::parse(&block.cidr), except: block.except.iter().flatten().filter_map(|c| Cidr::parse(c)).collect() };
    }
    Peer::Pods {
        pods: peer.pod_selector.as_ref().map(Selector::from_label_selector),
        namespaces: peer.namespace_selector.as_ref().map(Selector::from_label_selector),
    }
}

fn compile_ports(ports: Option<&Vec<NetworkPolicyPort>>) -> Vec<Port> {
    ports
        .into_iter()
        .flatten()
        .map(|p| Port { protocol: p.protocol.clone().unwrap_or_else(|| "TCP".into()), port: p.port.clone(), end_port: p.end_port.map(|e| e as u16) })
        .collect()
}

impl Policy {
    fn compile(policy: &NetworkPolicy) -> Policy {
        let spec = policy.spec.clone().unwrap_or_default();
        // SetDefaults_NetworkPolicy (applied on create; repeated here for objects that bypassed it).
        let types: Vec<String> = match spec.policy_types.clone().filter(|t| !t.is_empty()) {
            Some(types) => types,
            None if spec.egress.as_ref().is_some_and(|e| !e.is_empty()) => vec!["Ingress".into(), "Egress".into()],
            None => vec!["Ingress".into()],
        };
        let ingress = types.iter().any(|t| t == "Ingress").then(|| {
            spec.ingress
                .iter()
                .flatten()
                .map(|r| Rule { peers: r.from.iter().flatten().map(compile_peer).collect(), ports: compile_ports(r.ports.as_ref()) })
                .collect()
        });
        let egress = types.iter().any(|t| t == "Egress").then(|| {
            spec.egress
                .iter()
                .flatten()
                .map(|r| Rule { peers: r.to.iter().flatten().map(compile_peer).collect(), ports: compile_ports(r.ports.as_ref()) })
                .collect()
        });
        Policy {
            namespace: policy.metadata.namespace.clone().unwrap_or_default(),
            name: policy.metadata.name.clone().unwrap_or_default(),
            selector: spec.pod_selector.as_ref().map(Selector::from_label_selector).unwrap_or_default(),
            ingress,
            egress,
        }
    }

    fn rules(&self, direction: Direction) -> Option<&Vec<Rule>> {
        match direction {
            Direction::Ingress => self.ingress.as_ref(),
            Direction::Egress => self.egress.as_ref(),
        }
    }
}

/// One end's verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Side {
    /// The pod this direction is about (`namespace/name`); `None` when that end is no pod
    /// (a node, the workstation, the internet): nothing isolates it.
    pub pod: Option<String>,
    /// The policies isolating the pod in this direction (`namespace/name`).
    pub isolated_by: Vec<String>,
    /// The rules admitting the flow (`namespace/name spec.ingress[0]`).
    pub allowed_by: Vec<String>,
    /// Ingress from the pod's own node (always admitted).
    pub node_local: bool,
}

impl Side {
    /// Whether this end admits the flow.
    pub fn allowed(&self) -> bool {
        self.isolated_by.is_empty() || self.node_local || !self.allowed_by.is_empty()
    }

    /// One line: why this end admits or drops the flow.
    pub fn reason(&self, direction: Direction) -> String {
        let dir = match direction {
            Direction::Egress => "egress",
            Direction::Ingress => "ingress",
        };
        let Some(pod) = &self.pod else { return format!("{dir}: not a pod, no policy applies") };
        if self.isolated_by.is_empty() {
            return format!("{dir} of {pod}: not isolated (no policy selects it for {dir})");
        }
        let isolated = self.isolated_by.join(", ");
        if self.node_local {
            format!("{dir} of {pod}: isolated by {isolated}; traffic from its own node is always allowed")
        } else if self.allowed_by.is_empty() {
            format!("{dir} of {pod}: isolated by {isolated}; no rule allows it")
        } else {
            format!("{dir} of {pod}: isolated by {isolated}; allowed by {}", self.allowed_by.join(", "))
        }
    }
}

/// Both ends' verdicts for one flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Explanation {
    /// The source pod's egress.
    pub egress: Side,
    /// The destination pod's ingress.
    pub ingress: Side,
}

impl Explanation {
    /// Whether the flow is admitted (both ends allow it).
    pub fn allowed(&self) -> bool {
        self.egress.allowed() && self.ingress.allowed()
    }
}

/// The policies, pods and namespaces, indexed for per-flow verdicts.
#[derive(Clone, Debug, Default)]
pub struct PolicyView {
    /// Pods by uid.
    pods: BTreeMap<String, PodInfo>,
    /// Pod uids by published address.
    by_ip: BTreeMap<String, String>,
    namespaces: BTreeMap<String, BTreeMap<String, String>>,
    policies: BTreeMap<String, Vec<Policy>>,
}

impl PolicyView {
    /// The view of these objects: pods by address, namespace labels, policies by namespace.
    pub fn build<'a>(
        pods: impl IntoIterator<Item = &'a Pod>,
        namespaces: impl IntoIterator<Item = (&'a str, &'a BTreeMap<String, String>)>,
        policies: impl IntoIterator<Item = &'a NetworkPolicy>,
    ) -> PolicyView {
        PolicyView::from_parts(pods.into_iter().filter_map(PodInfo::of), namespaces, policies)
    }

    /// The view of pods already reduced to what the agent keeps of them.
    pub fn from_parts<'a>(
        pods: impl IntoIterator<Item = PodInfo>,
        namespaces: impl IntoIterator<Item = (&'a str, &'a BTreeMap<String, String>)>,
        policies: impl IntoIterator<Item = &'a NetworkPolicy>,
    ) -> PolicyView {
        let mut view = PolicyView::default();
        for pod in pods {
            if let Some(ip) = &pod.ip {
                view.by_ip.insert(ip.clone(), pod.uid.clone());
            }
            view.pods.insert(pod.uid.clone(), pod);
        }
        for (name, labels) in namespaces {
            view.namespaces.insert(name.to_string(), labels.clone());
        }
        for policy in policies {
            let p = Policy::compile(policy);
            view.policies.entry(p.namespace.clone()).or_default().push(p);
        }
        for list in view.policies.values_mut() {
            list.sort_by(|a, b| a.name.cmp(&b.name));
        }
        view
    }

    /// Whether any policy exists (without one, every flow is admitted).
    pub fn has_policies(&self) -> bool {
        self.policies.values().any(|p| !p.is_empty())
    }

    /// The pod with this published address.
    pub fn pod(&self, ip: &str) -> Option<&PodInfo> {
        self.by_ip.get(ip).and_then(|uid| self.pods.get(uid))
    }

    /// The pod behind one end of a flow: by the uid the CNI registered, else by address.
    fn locate(&self, uid: Option<&str>, ip: &str) -> Option<&PodInfo> {
        uid.and_then(|u| self.pods.get(u)).or_else(|| self.pod(ip))
    }

    /// Every pod with a published address: (address, pod), in address order.
    pub fn pods(&self) -> impl Iterator<Item = (&String, &PodInfo)> {
        self.by_ip.iter().filter_map(|(ip, uid)| self.pods.get(uid).map(|p| (ip, p)))
    }

    /// Which policies isolate each end of `flow` and which rules admit it.
    pub fn explain(&self, flow: &Flow) -> Explanation {
        Explanation { egress: self.side(Direction::Egress, flow), ingress: self.side(Direction::Ingress, flow) }
    }

    /// One end's verdict.
    pub fn side(&self, direction: Direction, flow: &Flow) -> Side {
        let (subject, peer_ip, peer) = match direction {
            Direction::Egress => (self.locate(flow.src_pod, flow.src_ip), flow.dst_ip, self.locate(flow.dst_pod, flow.dst_ip)),
            Direction::Ingress => (self.locate(flow.dst_pod, flow.dst_ip), flow.src_ip, self.locate(flow.src_pod, flow.src_ip)),
        };
        let Some(subject) = subject else { return Side::default() };
        let mut side = Side { pod: Some(subject.key()), ..Side::default() };
        // Named ports resolve on the destination pod.
        let destination = match direction {
            Direction::Ingress => Some(subject),
            Direction::Egress => peer,
        };
        let protocol = if flow.udp { "UDP" } else { "TCP" };
        for policy in self.policies.get(&subject.namespace).into_iter().flatten() {
            let Some(rules) = policy.rules(direction) else { continue };
            if !policy.selector.matches(Some(&subject.labels)) {
                continue;
            }
            side.isolated_by.push(format!("{}/{}", policy.namespace, policy.name));
            for (i, rule) in rules.iter().enumerate() {
                let peer_ok = rule.peers.is_empty() || rule.peers.iter().any(|p| self.peer_matches(p, &policy.namespace, peer_ip, peer));
                let port_ok = rule.ports.is_empty() || rule.ports.iter().any(|p| port_matches(p, protocol, flow.port, destination));
                if peer_ok && port_ok {
                    let field = match direction {
                        Direction::Ingress => "ingress",
                        Direction::Egress => "egress",
                    };
                    side.allowed_by.push(format!("{}/{} spec.{field}[{i}]", policy.namespace, policy.name));
                }
            }
        }
        side.node_local =
            direction == Direction::Ingress && !subject.node_ip.is_empty() && (flow.src_ip == subject.node_ip || is_node_gateway(flow.src_ip, subject));
        side
    }

    fn peer_matches(&self, peer: &Peer, policy_namespace: &str, ip: &str, pod: Option<&PodInfo>) -> bool {
        match peer {
            Peer::Block { cidr, except } => cidr.is_some_and(|c| c.contains(ip)) && !except.iter().any(|e| e.contains(ip)),
            Peer::Pods { pods, namespaces } => {
                let Some(pod) = pod else { return false };
                let namespace_ok = match namespaces {
                    None => pod.namespace == policy_namespace,
                    Some(selector) => {
                        let labels = self.namespaces.get(&pod.namespace);
                        labels.is_some() && selector.matches(labels)
                    }
                };
                namespace_ok && pods.as_ref().is_none_or(|s| s.matches(Some(&pod.labels)))
            }
        }
    }
}

fn port_matches(port: &Port, protocol: &str, number: u16, destination: Option<&PodInfo>) -> bool {
    if port.protocol != protocol {
        return false;
    }
    match &port.port {
        None => true,
        Some(IntOrString::Int(p)) => {
            let low = *p as i64;
            let high = port.end_port.map_or(low, i64::from);
            (low..=high).contains(&i64::from(number))
        }
        Some(IntOrString::String(name)) => match name.parse::<u16>() {
            Ok(p) => p == number,
            Err(_) => destination.and_then(|d| d.named_ports.get(&(name.clone(), protocol.to_string()))) == Some(&number),
        },
    }
}

impl kubesim_runtime::net::PolicyEnforcer for PolicyView {
    fn admit(&self, direction: Direction, flow: &Flow) -> Result<(), String> {
        let side = self.side(direction, flow);
        if side.allowed() {
            return Ok(());
        }
        Err(side.reason(direction))
    }
}

/// Whether `ip` is the pod's node's address on the pod's veth: the ptp plugin gives the host
/// end of every pod's veth its node's pod-range gateway (network+1 of the node's /24), which is
/// the source of a connection the node masquerades towards its own pod (a node port, a load
/// balancer). Traffic from it comes from the pod's own node.
fn is_node_gateway(ip: &str, pod: &PodInfo) -> bool {
    let Some(pod_ip) = pod.ip.as_deref() else { return false };
    let Some((net, _)) = pod_ip.rsplit_once('.') else { return false };
    ip == format!("{net}.1") && ip != pod_ip
}
