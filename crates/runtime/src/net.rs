//! Packets between hosts: how a container's network call that leaves its host reaches the
//! process serving it. The source host's own pods and loopback are answered by the host's
//! runtime (`ContainerRuntime::deliver_local`); everything else comes here: first the source
//! host's Service rules (kube-proxy's DNAT, [`kubesim_host::netfilter`]) rewrite a Service
//! address to an endpoint or reject it, then the packet travels the [`Fabric`]: a pod IP
//! reaches the pod's sandbox on its host, a node IP's node ports go through that node's
//! kube-proxy rules to an endpoint (a second hop), other ports of a node reach the node's own
//! servers (kube-proxy's health checks, `/healthz`, `/proxyMode`; [`node_reply`]) or are
//! refused, anything else gets no answer and times out. A DNS query that reaches a CoreDNS
//! pod listening on port 53 is answered from the cluster DNS view ([`DnsServer`]).
//!
//! Source NAT: a connection a node's rules marked for masquerade (`KUBE-MARK-MASQ`: node ports
//! and load-balancer addresses with `externalTrafficPolicy: Cluster`, off-cluster clients of a
//! cluster IP, a pod reaching itself through its Service) leaves that node with the node's
//! address on the interface towards the endpoint ([`kubesim_host::Host::masquerade_address`]):
//! the endpoint, its NetworkPolicy ingress check and ingress-nginx see that address, not the
//! client's. A load balancer's address is forwarded to a node whose rules know it, among the
//! nodes passing the load balancer's health checks ([`Fabric::load_balancer_unhealthy`],
//! [`health_check`]).
//!
//! This is the one routing function: the runtime's outbox delivery and `kubectl exec`'s
//! synchronous calls both use it, so they cannot disagree about where a packet goes.

use crate::fabric::{Endpoint, Fabric, HOST_TO_HOST_LATENCY_MS};
use kubesim_api::Millis;
use kubesim_host::netfilter::{Dnat, ServiceTable};
use kubesim_host::{Host, Hosts};
use kubesim_os::program::{DnsMessage, DnsQuestion, Incoming, NetCall, NetError, NetReply, Outgoing};

/// One call leaving a host.
pub struct Packet<'a> {
    /// The host it leaves (it may be out of `hosts` while its runtime is borrowed).
    pub from_host: &'a str,
    /// The source address (the container's pod IP).
    pub src_ip: String,
    /// The source port.
    pub src_port: u16,
    /// The call.
    pub call: &'a NetCall,
    /// What the source host's Service rules made of its destination ([`dnat`]).
    pub dnat: Dnat,
    /// Forwarded by a node it entered (a node port, a load balancer): the source pod's egress
    /// was checked on the first leg.
    pub forwarded: bool,
    /// A connection probe (the netpol e2e's `agnhost connect`): it succeeds when something
    /// listens, and nothing is sent to the server.
    pub connect_only: bool,
}

impl<'a> Packet<'a> {
    /// A call leaving `from_host` from `src_ip:src_port`, after the host's rules made `dnat` of it.
    pub fn new(from_host: &'a str, src_ip: String, src_port: u16, call: &'a NetCall, dnat: Dnat) -> Packet<'a> {
        Packet { from_host, src_ip, src_port, call, dnat, forwarded: false, connect_only: false }
    }
}

/// A connection as NetworkPolicy sees it: the addresses after Service DNAT.
#[derive(Clone, Copy, Debug)]
pub struct Flow<'a> {
    /// The source address.
    pub src_ip: &'a str,
    /// The destination address.
    pub dst_ip: &'a str,
    /// The destination port.
    pub port: u16,
    /// UDP (else TCP).
    pub udp: bool,
    /// The uid of the pod the source address belongs to, as the CNI registered it (known
    /// before the API reports the pod's IP).
    pub src_pod: Option<&'a str>,
    /// The uid of the destination pod, likewise.
    pub dst_pod: Option<&'a str>,
}

impl<'a> Flow<'a> {
    /// A flow between two addresses, the pods behind them (if any) located in the fabric.
    pub fn located(fabric: &'a Fabric, src_ip: &'a str, dst_ip: &'a str, port: u16, udp: bool) -> Flow<'a> {
        let pod = |ip: &str| match fabric.locate(ip) {
            Some(Endpoint::Pod { pod_uid, .. }) => Some(pod_uid.as_str()),
            _ => None,
        };
        Flow { src_ip, dst_ip, port, udp, src_pod: pod(src_ip), dst_pod: pod(dst_ip) }
    }
}

/// Which end of a connection a policy verdict is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Leaving the source pod.
    Egress,
    /// Reaching the destination pod.
    Ingress,
}

/// NetworkPolicy enforcement as the CNI's policy agent on each node performs it: egress as a
/// packet leaves its source pod's node, ingress as it reaches the destination pod's.
pub trait PolicyEnforcer: Send + Sync + std::fmt::Debug {
    /// `Err(why)` when the policies drop the flow in that direction.
    fn admit(&self, direction: Direction, flow: &Flow) -> Result<(), String>;
}

/// The cluster DNS answers of CoreDNS's `kubernetes` plugin (and what it forwards), as the
/// DNS pods' informer sees the cluster.
pub trait DnsServer: Send + Sync + std::fmt::Debug {
    /// The response to one question.
    fn answer(&self, question: &DnsQuestion) -> DnsMessage;
}

/// The source host's Service rules applied to a call from `src` at `now` (kube-proxy's DNAT;
/// ClientIP affinity records the connection).
pub fn dnat(rules: &mut ServiceTable, node_ip: &str, src: (&str, u16), call: &NetCall, now: Millis) -> Dnat {
    let (dst, port, udp) = call.destination();
    rules.dnat(src, dst, port, udp, node_ip, now)
}

/// [`dnat`]'s verdict without recording anything (a probe: the simulator's measurement).
pub fn dnat_lookup(rules: &ServiceTable, node_ip: &str, src: (&str, u16), call: &NetCall, now: Millis) -> Dnat {
    let (dst, port, udp) = call.destination();
    rules.lookup(src, dst, port, udp, node_ip, now)
}

/// One connection or query a container process made, as the network view shows it: where it
/// went, which Service rule rewrote it, which endpoint answered and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketRecord {
    /// Virtual time it was sent.
    pub t_ms: Millis,
    /// The host it left.
    pub from_host: String,
    /// Its source address (the container's pod IP).
    pub src_ip: String,
    /// `tcp`, `udp` or `dns`.
    pub protocol: &'static str,
    /// The address and port it was sent to.
    pub dst: (String, u16),
    /// The Service port whose rules rewrote it (`default/web:http`), if any.
    pub service: Option<String>,
    /// The endpoint the rules chose.
    pub endpoint: Option<(String, u16)>,
    /// The source address the sending node's masquerade gave it (`KUBE-MARK-MASQ`), if any.
    pub snat: Option<String>,
    /// The DNS question (`web.default.svc.cluster.local. A`), for queries.
    pub question: Option<String>,
    /// `ok`, `refused`, `timeout`, `reset`, `unreachable`, or the DNS rcode (`NXDOMAIN`).
    pub outcome: String,
    /// When the answer arrived, after the send.
    pub latency_ms: Millis,
    /// The NetworkPolicy verdict that dropped it (`ingress to x/a denied: ...`), if one did.
    pub dropped_by: Option<String>,
    /// A DNS answer's records (`10.96.12.7`, `A 10.244.1.3, A 10.244.2.4`), for queries answered.
    pub answer: Option<String>,
    /// Who sent it.
    pub origin: Origin,
    /// Its legs beyond the source host's own rules ([`Delivery::hops`]).
    pub hops: Vec<Hop>,
    /// The pod address and port it was finally delivered to ([`Delivery::target`]).
    pub target: Option<(String, u16)>,
}

/// Who sent a packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Origin {
    /// A container's own process (the runtime's event loop).
    #[default]
    Process,
    /// A command `kubectl exec` runs in a container (the API server's exec subresource).
    Exec,
    /// The workstation: the machine the cluster runs on, outside the pod network.
    Workstation,
    /// `kubectl port-forward` on the workstation: the kubelet's streaming connection, from the
    /// pod's node into the pod.
    PortForward,
    /// A root shell on a node (`minikube ssh`).
    NodeShell,
}

/// One leg of a packet's path that the source host's own rules do not show: a node it
/// entered from outside (a node port, a load balancer's address) and that node's kube-proxy
/// rule, ingress-nginx's routing of a request and its second connection to the backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hop {
    /// A load balancer's address: the load balancer forwarded the connection to `node`.
    Balanced {
        /// The node it chose.
        node: String,
    },
    /// A node the packet entered whose rules rewrote it: kube-proxy's (KUBE-NODEPORTS,
    /// KUBE-EXT) or the CNI portmap plugin's hostPort rule.
    Forwarded {
        /// The node.
        node: String,
        /// The Service port (`default/web:http`), or `hostPort 80 → namespace/pod`.
        service: String,
        /// The endpoint the rules chose; `None`: REJECT.
        endpoint: Option<(String, u16)>,
        /// The source address the node's masquerade gave the connection, if its rules marked it.
        snat: Option<String>,
    },
    /// A request that reached an ingress-nginx controller pod, routed by its configuration.
    Ingress {
        /// The controller pod's address and the port the request arrived on.
        controller: (String, u16),
        /// The request's `Host` (without port; empty when it had none).
        host: String,
        /// The request's path.
        path: String,
        /// The nginx server that took it (`_`: the catch-all).
        server: String,
        /// The location (`/app (Prefix)`), if one matched.
        location: Option<String>,
        /// The Ingress that defined the location (`default/example`).
        ingress: Option<String>,
        /// The upstream (`default-web-8080`) and the endpoint nginx opened its second
        /// connection to; `None` when nginx answered itself.
        upstream: Option<(String, (String, u16))>,
        /// The status nginx answered the client with.
        status: u16,
    },
    /// nginx's second connection ended (`ok`, `timeout`, `refused`, `dropped`, ...); a
    /// NetworkPolicy verdict if one dropped it.
    Upstream {
        /// How it ended.
        outcome: String,
        /// The verdict that dropped it.
        dropped_by: Option<String>,
    },
}

impl PacketRecord {
    /// The record of a call, its source host's rewrite and its reply.
    pub fn of(t_ms: Millis, packet: &Packet, delivery: &Delivery) -> PacketRecord {
        let (reply, latency_ms) = (&delivery.reply, delivery.latency_ms);
        let (dst, port, udp) = packet.call.destination();
        let (protocol, question) = match packet.call {
            NetCall::Dns { question, .. } => ("dns", Some(format!("{} {}", question.name, format!("{:?}", question.qtype).to_ascii_uppercase()))),
            _ if udp => ("udp", None),
            _ => ("tcp", None),
        };
        let (service, endpoint) = match &packet.dnat {
            Dnat::To { ip, port, service, .. } => (Some(service.clone()), Some((ip.clone(), *port))),
            Dnat::Reject { service } | Dnat::Drop { service } => (Some(service.clone()), None),
            Dnat::Unchanged => (None, None),
        };
        let outcome = outcome(reply, delivery.dropped_by.is_some());
        let answer = match reply {
            NetReply::Dns(Ok(m)) if !m.answers.is_empty() => {
                Some(m.answers.iter().map(|r| format!("{} {}", format!("{:?}", r.rtype).to_ascii_uppercase(), r.data)).collect::<Vec<_>>().join(", "))
            }
            _ => None,
        };
        PacketRecord {
            answer,
            t_ms,
            from_host: packet.from_host.to_string(),
            src_ip: packet.src_ip.clone(),
            protocol,
            dst: (dst.to_string(), port),
            service,
            endpoint,
            snat: delivery.snat.clone(),
            question,
            outcome,
            latency_ms,
            dropped_by: delivery.dropped_by.clone(),
            origin: Origin::Process,
            hops: delivery.hops.clone(),
            target: delivery.target.clone(),
        }
    }
}

/// A connection's end as the packet log names it: `ok`, `refused`, `timeout`, `reset`,
/// `unreachable`, `dropped` or a DNS rcode.
fn outcome(reply: &NetReply, dropped: bool) -> String {
    let error = |e: &NetError| match e {
        NetError::Refused => "refused",
        NetError::TimedOut => "timeout",
        NetError::Reset => "reset",
        NetError::HostUnreachable | NetError::NetworkUnreachable => "unreachable",
    };
    match reply {
        _ if dropped => "dropped".to_string(),
        NetReply::Tcp(Ok(_)) | NetReply::Udp(Ok(_)) => "ok".to_string(),
        NetReply::Dns(Ok(m)) => format!("{:?}", m.rcode).to_ascii_uppercase().replace("NOERROR", "ok"),
        NetReply::Tcp(Err(e)) | NetReply::Udp(Err(e)) | NetReply::Dns(Err(e)) => error(e).to_string(),
    }
}

/// What became of a packet.
pub struct Delivery {
    /// The answer the caller sees.
    pub reply: NetReply,
    /// When it arrives, after the send (the round trip, or the caller's timeout).
    pub latency_ms: Millis,
    /// The host whose process answered (its runtime may have new work).
    pub served_by: Option<String>,
    /// Why a NetworkPolicy dropped it (the caller sees a timeout).
    pub dropped_by: Option<String>,
    /// Its legs beyond the source host's own rules ([`Hop`]), in order.
    pub hops: Vec<Hop>,
    /// The pod address and port it was finally delivered to, after every rewrite (the
    /// backend, for a request ingress-nginx proxied), whether a process there answered or the
    /// pod's ingress policy dropped it.
    pub target: Option<(String, u16)>,
    /// The source address its own leg's masquerade gave it (the sending node's rules marked it).
    pub snat: Option<String>,
}

impl Delivery {
    /// An answer after `latency_ms`, no process's state changed.
    pub fn answer(reply: NetReply, latency_ms: Millis) -> Delivery {
        Delivery { reply, latency_ms, served_by: None, dropped_by: None, hops: Vec::new(), target: None, snat: None }
    }

    /// The leg `hop` put before this delivery's own.
    fn after(mut self, hop: Hop) -> Delivery {
        self.hops.insert(0, hop);
        self
    }

    /// How the connection ended, as the packet log names it.
    pub fn outcome(&self) -> String {
        outcome(&self.reply, self.dropped_by.is_some())
    }
}

/// The timeout a call gets when nothing answers it.
fn timed_out(call: &NetCall) -> Delivery {
    Delivery::answer(kubesim_host::cri::timed_out(call), call.timeout_ms().max(1))
}

/// A packet a NetworkPolicy dropped: the caller waits out its timeout (blocked connections
/// time out, they are not refused).
fn dropped(call: &NetCall, why: String) -> Delivery {
    Delivery { dropped_by: Some(why), ..timed_out(call) }
}

/// The identity of one packet for the link faults' loss draw.
fn draw(packet: &Packet, dst: &str, port: u16, now: Millis) -> u64 {
    kubesim_api::hash::Fnv64::new()
        .bytes(packet.src_ip.as_bytes())
        .bytes(&packet.src_port.to_be_bytes())
        .bytes(dst.as_bytes())
        .bytes(&port.to_be_bytes())
        .bytes(&now.to_be_bytes())
        .finish()
}

/// The link faults between `from` and `to` for this packet: the added one-way latency, or
/// `None` when it is lost (the caller times out).
fn link(fabric: &Fabric, from: &str, to: &str, packet: &Packet, dst: &str, port: u16, now: Millis) -> Option<Millis> {
    match fabric.link(from, to, draw(packet, dst, port, now)) {
        crate::fabric::LinkVerdict::Delayed(ms) => Some(ms),
        crate::fabric::LinkVerdict::Dropped => None,
    }
}

/// Routes a call that left its host. The server on the destination answers at send time; the
/// reply travels back with the link latency. A connection the source host's rules marked for
/// masquerade travels on with that host's address ([`masquerade_source`]).
pub fn route_remote(hosts: &mut Hosts, fabric: &Fabric, packet: &Packet, now: Millis) -> Delivery {
    let snat = masquerade_source(hosts, fabric, packet);
    let src_ip = snat.clone().unwrap_or_else(|| packet.src_ip.clone());
    let mut delivery = route_leg(hosts, fabric, packet, &src_ip, now);
    delivery.snat = snat;
    delivery
}

/// KUBE-POSTROUTING's MASQUERADE: the source address a connection the source host's rules
/// marked (`KUBE-MARK-MASQ`) leaves with — the host's address on the interface towards the
/// endpoint (the pod's veth for an endpoint on this host, else the node's InternalIP).
pub fn masquerade_source(hosts: &Hosts, fabric: &Fabric, packet: &Packet) -> Option<String> {
    let Dnat::To { ip, masquerade: true, .. } = &packet.dnat else { return None };
    let host = hosts.get(packet.from_host)?;
    let local = matches!(fabric.locate(ip), Some(Endpoint::Pod { host: h, .. }) if h == packet.from_host);
    Some(host.masquerade_address(local))
}

/// Whether an address is a loopback address.
fn loopback(ip: &str) -> bool {
    ip.starts_with("127.") || ip == "::1" || ip == "localhost"
}

/// A connection to a node's own address (`loopback`: to 127.0.0.1 from the node itself) that
/// its rules left alone: the node's own servers — kube-proxy's health checks, `:10256/healthz`,
/// `127.0.0.1:10249/proxyMode` — answer it; `None` when nothing listens (TCP is refused).
pub fn node_reply(host: &Host, port: u16, udp: bool, loopback: bool, data: &[u8], now: Millis) -> Option<Vec<u8>> {
    if udp || !host.powered {
        return None;
    }
    host.kube_proxy.serve(port, loopback, data, now)
}

/// The delivery of a packet its rules left alone to a node's own servers ([`node_reply`]).
fn to_node(host: &Host, packet: &Packet, loopback: bool, round_trip: Millis, now: Millis) -> Delivery {
    let call = packet.call;
    let (_, port, udp) = call.destination();
    match call {
        NetCall::Tcp { .. } if packet.connect_only => {
            let reply = if host.kube_proxy.listens(port, loopback) { NetReply::Tcp(Ok(Vec::new())) } else { NetReply::Tcp(Err(NetError::Refused)) };
            Delivery::answer(reply, round_trip)
        }
        NetCall::Tcp { send, .. } => match node_reply(host, port, udp, loopback, send, now) {
            Some(bytes) => Delivery::answer(NetReply::Tcp(Ok(bytes)), round_trip),
            None => Delivery::answer(NetReply::Tcp(Err(NetError::Refused)), round_trip),
        },
        _ => timed_out(call),
    }
}

/// An HTTP health check from a load balancer outside the nodes (the address `from`, on the
/// nodes' network) to `node`'s `port` (`GET path`): the status the node's server answered, or
/// `None` when the check failed to connect (no power, a cut or lossy link, nothing listening).
/// The same servers and link faults as any packet ([`node_reply`], [`Fabric::link`]).
pub fn health_check(hosts: &Hosts, fabric: &Fabric, from: &str, node: &str, port: u16, path: &str, now: Millis) -> Option<u16> {
    let host = hosts.get(node).filter(|h| h.powered)?;
    let draw = kubesim_api::hash::Fnv64::new().bytes(from.as_bytes()).bytes(node.as_bytes()).bytes(&port.to_be_bytes()).bytes(&now.to_be_bytes()).finish();
    if fabric.link("", node, draw) == crate::fabric::LinkVerdict::Dropped {
        return None;
    }
    let request = format!("GET {path} HTTP/1.1\r\nHost: {}:{port}\r\nUser-Agent: Envoy/HC\r\n\r\n", host.ip());
    let bytes = node_reply(host, port, false, false, request.as_bytes(), now)?;
    kubesim_os::net::http::Response::parse(&bytes).ok().map(|r| r.status)
}

/// One leg of [`route_remote`], the source address being `src_ip` (after any masquerade).
fn route_leg(hosts: &mut Hosts, fabric: &Fabric, packet: &Packet, src_ip: &str, now: Millis) -> Delivery {
    let call = packet.call;
    let (dst, port, udp) = call.destination();
    let data = match call {
        NetCall::Tcp { send, .. } | NetCall::Udp { send, .. } => send.clone(),
        NetCall::Dns { .. } => Vec::new(),
    };
    if hosts.get(packet.from_host).is_some_and(|h| !h.powered) {
        return timed_out(call);
    }
    let (dst, port) = match &packet.dnat {
        Dnat::Unchanged => (dst.to_string(), port),
        Dnat::To { ip, port, .. } => (ip.clone(), *port),
        // kube-proxy's REJECT: ICMP port unreachable, which every caller sees as refused.
        Dnat::Reject { .. } => return Delivery::answer(call.failed(NetError::Refused), 1),
        // kube-proxy's DROP: nothing answers, the caller times out.
        Dnat::Drop { .. } => return timed_out(call),
    };
    // A process on a node (its shell) connecting to 127.0.0.1: the node's own servers.
    if loopback(&dst) && matches!(packet.dnat, Dnat::Unchanged) {
        if let Some(host) = hosts.get(packet.from_host) {
            return to_node(host, packet, true, 1, now);
        }
    }
    if let (Some(policy), false) = (&fabric.network_policy, packet.forwarded) {
        let flow = Flow::located(fabric, &packet.src_ip, &dst, port, udp);
        if let Err(why) = policy.admit(Direction::Egress, &flow) {
            return dropped(call, why);
        }
    }
    // The API server's address (the `kubernetes` Service's endpoint): kube-apiserver answers,
    // whichever node's machine holds the address, and whatever became of that machine.
    if dst == crate::apiserver_endpoint::API_SERVER_IP && port == crate::apiserver_endpoint::API_SERVER_PORT {
        let round_trip = 2 * HOST_TO_HOST_LATENCY_MS + 1;
        return match call {
            NetCall::Tcp { .. } if packet.connect_only => Delivery::answer(NetReply::Tcp(Ok(Vec::new())), round_trip),
            NetCall::Tcp { .. } => Delivery::answer(NetReply::Tcp(Ok(crate::apiserver_endpoint::answer(&data, now))), round_trip),
            _ => timed_out(call),
        };
    }
    let Some(to) = fabric.locate(&dst).cloned() else {
        // A load balancer's address: the load balancer forwards to a node (chosen per
        // connection among the powered nodes whose kube-proxy has rules for it), where the
        // rules pick an endpoint.
        if matches!(packet.dnat, Dnat::Unchanged) {
            let mut nodes: Vec<&Host> = hosts.values().filter(|h| h.powered && h.netfilter.has_address(&dst, port, udp)).collect();
            // The load balancer's health checks (kube-proxy's healthCheckNodePort with
            // `externalTrafficPolicy: Local`, its /healthz otherwise) fail on some nodes: it
            // sends connections to the nodes that pass, while any does.
            if let Some(failing) = fabric.load_balancer_unhealthy.get(&dst) {
                if nodes.iter().any(|h| !failing.contains(&h.name)) {
                    nodes.retain(|h| !failing.contains(&h.name));
                }
            }
            if !nodes.is_empty() {
                let node = nodes[packet.src_port as usize % nodes.len()].name.clone();
                let Some(extra) = link(fabric, packet.from_host, &node, packet, &dst, port, now) else { return timed_out(call) };
                if let Some(delivery) = enter_node(hosts, fabric, &node, packet, (&dst, port, udp), HOST_TO_HOST_LATENCY_MS + extra, now) {
                    return delivery.after(Hop::Balanced { node });
                }
            }
        }
        if link(fabric, packet.from_host, "internet", packet, &dst, port, now).is_none() {
            return timed_out(call);
        }
        return outside(call, &dst, port, udp, &data);
    };
    if !hosts.get(to.host()).is_some_and(|h| h.powered) {
        return timed_out(call);
    }
    let Some(extra) = link(fabric, packet.from_host, to.host(), packet, &dst, port, now) else { return timed_out(call) };
    let latency = if to.host() == packet.from_host { 0 } else { HOST_TO_HOST_LATENCY_MS } + extra;
    let round_trip = 2 * latency + 1;
    if let (Endpoint::Node { host: node }, Dnat::Unchanged) = (&to, &packet.dnat) {
        // A node address: that node's kube-proxy rules (KUBE-NODEPORTS) forward a node port to
        // an endpoint, which may be on a third node: a second hop from there.
        let node = node.clone();
        if let Some(delivery) = enter_node(hosts, fabric, &node, packet, (&dst, port, udp), latency, now) {
            return delivery;
        }
        // Not a node port: the node's own servers answer, or the connection is refused.
        if let Some(host) = hosts.get(&node) {
            return to_node(host, packet, false, round_trip, now);
        }
    }
    let Endpoint::Pod { host, .. } = to else {
        return match call {
            NetCall::Tcp { .. } => Delivery::answer(NetReply::Tcp(Err(NetError::Refused)), round_trip),
            _ => timed_out(call),
        };
    };
    let Some(target) = hosts.get_mut(&host) else { return timed_out(call) };
    let Some(sandbox) = target.cri.sandbox_with_ip(&dst).map(|s| s.id.clone()) else { return timed_out(call) };
    let delivered = |d: Delivery| Delivery { target: Some((dst.clone(), port)), ..d };
    if let Some(policy) = &fabric.network_policy {
        let flow = Flow::located(fabric, src_ip, &dst, port, udp);
        if let Err(why) = policy.admit(Direction::Ingress, &flow) {
            return delivered(dropped(call, why));
        }
    }
    if packet.connect_only && !matches!(call, NetCall::Dns { .. }) {
        let listening = target.cri.listening(&sandbox).contains(&(port, udp));
        let reply = match (listening, udp) {
            (true, false) => NetReply::Tcp(Ok(Vec::new())),
            (true, true) => NetReply::Udp(Ok(Vec::new())),
            (false, _) => call.failed(NetError::Refused),
        };
        return delivered(Delivery::answer(reply, round_trip));
    }
    if let NetCall::Dns { question, .. } = call {
        // A DNS server: CoreDNS answers from the cluster view; nothing else serves DNS here.
        let serves_dns = target.cri.serving_image(&sandbox, port, udp).is_some_and(|image| image.contains("coredns"));
        if serves_dns && fabric.dns_outage {
            // The dns-outage fault: CoreDNS hangs, queries get no answer.
            return delivered(timed_out(call));
        }
        return delivered(match (serves_dns, &fabric.cluster_dns) {
            (true, Some(dns)) => Delivery::answer(NetReply::Dns(Ok(dns.answer(question))), round_trip),
            (false, _) if !udp && !target.cri.listening(&sandbox).contains(&(port, false)) => {
                Delivery::answer(NetReply::Dns(Err(NetError::Refused)), round_trip)
            }
            _ => timed_out(call),
        });
    }
    // ingress-nginx: a controller pod's nginx routes the request by the rendered configuration.
    let controller = !udp && (port == 80 || port == 443) && target.cri.serving_image(&sandbox, port, udp).is_some_and(crate::ingress::is_controller_image);
    if let (true, Some(config)) = (controller, &fabric.ingress) {
        let arrival = crate::ingress::Arrival { controller: (&host, &dst), client: (src_ip, packet.src_port), port, data: &data, now, round_trip };
        return crate::ingress::proxy(hosts, fabric, config, &arrival);
    }
    let incoming = Incoming { src: src_ip.to_string(), src_port: packet.src_port, port, udp, data };
    let (answer, wait) = match target.cri.serve_timed(&sandbox, &incoming, now) {
        Some((answer, wait)) => (Some(answer), wait),
        None => (None, 0),
    };
    let round_trip = round_trip + wait;
    let reply = match (udp, answer) {
        (false, Some(Outgoing::Reply(bytes))) => NetReply::Tcp(Ok(bytes)),
        (false, Some(Outgoing::Reset)) => NetReply::Tcp(Err(NetError::Reset)),
        (false, None) => NetReply::Tcp(Err(NetError::Refused)),
        (true, Some(Outgoing::Reply(bytes))) => NetReply::Udp(Ok(bytes)),
        (_, Some(Outgoing::Hang)) | (true, _) => return delivered(timed_out(call)),
    };
    delivered(Delivery { served_by: Some(host), ..Delivery::answer(reply, round_trip) })
}

/// A packet that reached `node` from outside it (a node port, a load balancer's address): if
/// that node's kube-proxy rules rewrite `dst`, it is routed on from there, the hop's round trip
/// (`2 × hop_ms`) added; `None` when the rules leave it alone.
fn enter_node(hosts: &mut Hosts, fabric: &Fabric, node: &str, packet: &Packet, dst: (&str, u16, bool), hop_ms: Millis, now: Millis) -> Option<Delivery> {
    let host = hosts.get_mut(node)?;
    let node_ip = host.ip();
    let src = (packet.src_ip.as_str(), packet.src_port);
    // A connection probe measures; it leaves no affinity entry behind.
    let dnat = if packet.connect_only {
        host.netfilter.lookup(src, dst.0, dst.1, dst.2, &node_ip, now)
    } else {
        host.netfilter.dnat(src, dst.0, dst.1, dst.2, &node_ip, now)
    };
    let mut hop = match &dnat {
        Dnat::To { ip, port, service, .. } => {
            Hop::Forwarded { node: node.to_string(), service: service.clone(), endpoint: Some((ip.clone(), *port)), snat: None }
        }
        Dnat::Reject { service } | Dnat::Drop { service } => Hop::Forwarded { node: node.to_string(), service: service.clone(), endpoint: None, snat: None },
        Dnat::Unchanged => return None,
    };
    let forwarded = Packet { forwarded: true, ..Packet::new(node, packet.src_ip.clone(), packet.src_port, packet.call, dnat) };
    let forwarded = Packet { connect_only: packet.connect_only, ..forwarded };
    let mut delivery = route_remote(hosts, fabric, &forwarded, now);
    delivery.latency_ms += 2 * hop_ms;
    if let Hop::Forwarded { snat, .. } = &mut hop {
        *snat = delivery.snat.take();
    }
    Some(delivery.after(hop))
}

/// A call to an address no cluster interface has: the node's upstream resolver, a public site
/// ([`crate::internet`]), or nothing (a timeout).
fn outside(call: &NetCall, dst: &str, port: u16, udp: bool, data: &[u8]) -> Delivery {
    use crate::internet;
    let rtt = internet::INTERNET_RTT_MS;
    if dst == internet::UPSTREAM_RESOLVER && port == 53 {
        return match call {
            NetCall::Dns { question, .. } => Delivery::answer(NetReply::Dns(Ok(internet::resolve(question))), 1),
            _ => timed_out(call),
        };
    }
    let Some(site) = internet::site_at(dst) else { return timed_out(call) };
    match (call, port, udp) {
        (NetCall::Tcp { .. }, 80, false) => Delivery::answer(NetReply::Tcp(Ok(internet::http(site, data))), rtt),
        // TLS is not modelled: the handshake bytes get a reset.
        (NetCall::Tcp { .. }, 443, false) => Delivery::answer(NetReply::Tcp(Err(NetError::Reset)), rtt),
        _ => timed_out(call),
    }
}

/// The network as a client outside the runtime's event loop uses it (`kubectl exec`, the
/// workstation, a node's shell): every packet it [`Net::send`]s is routed by [`route_remote`]
/// and recorded, and the runtime puts the records in its packet log when the client is done
/// ([`crate::Runtime::with_network`]), so the network view shows these packets as it shows a
/// container's own.
pub struct Net<'a> {
    /// Every host.
    pub hosts: &'a mut Hosts,
    /// The fabric.
    pub fabric: &'a Fabric,
    /// Virtual now.
    pub now: Millis,
    /// The packets sent so far.
    pub log: Vec<PacketRecord>,
}

impl<'a> Net<'a> {
    /// The network now, nothing sent yet.
    pub fn new(hosts: &'a mut Hosts, fabric: &'a Fabric, now: Millis) -> Net<'a> {
        Net { hosts, fabric, now, log: Vec::new() }
    }

    /// Routes a packet ([`route_remote`]) and records it as sent by `origin`.
    pub fn send(&mut self, packet: &Packet, origin: Origin) -> Delivery {
        let delivery = route_remote(self.hosts, self.fabric, packet, self.now);
        self.log.push(PacketRecord { origin, ..PacketRecord::of(self.now, packet, &delivery) });
        delivery
    }
}

/// Runs a command in a container to completion now (`kubectl exec`, the API server's exec
/// subresource): its calls that leave the host travel the fabric as [`route_remote`] routes
/// them, recorded as [`Origin::Exec`] packets. Returns the output, or `None` if the host does
/// not exist.
pub fn exec(net: &mut Net, host: &str, container_id: &str, argv: &[String], io: kubesim_host::cri::ExecIo) -> Option<kubesim_host::cri::ExecOutput> {
    use kubesim_host::cri::ExecStep;
    let now = net.now;
    let caller = net.hosts.get_mut(host)?;
    let src_ip = caller.cri.container_ip(container_id).unwrap_or_default();
    let mut session = match caller.cri.exec_begin(container_id, argv, io, now) {
        Ok(session) => session,
        Err(output) => return Some(output),
    };
    let mut port = 40_000u16;
    loop {
        let caller = net.hosts.get_mut(host)?;
        match caller.cri.exec_step(&mut session) {
            ExecStep::Done(output) => return Some(output),
            ExecStep::Net(call) => {
                // The caller stays in `hosts`: a call to a pod of its own node is routed like
                // any other (its Service rules, policies and the destination's socket).
                port = port.wrapping_add(1).max(40_000);
                let node_ip = caller.ip();
                let dnat = dnat(&mut caller.netfilter, &node_ip, (&src_ip, port), &call, now);
                // Served at the world's now (the session's fast-forwarded clock is its own).
                let reply = net.send(&Packet::new(host, src_ip.clone(), port, &call, dnat), Origin::Exec).reply;
                net.hosts.get_mut(host)?.cri.exec_reply(&mut session, reply);
            }
        }
    }
}
