//! Packets between hosts: how a container's network call that leaves its host reaches the
//! process serving it. The source host's own pods and loopback are answered by the host's
//! runtime (`ContainerRuntime::deliver_local`); everything else comes here: first the source
//! host's Service rules (kube-proxy's DNAT, [`kubesim_host::netfilter`]) rewrite a Service
//! address to an endpoint or reject it, then the packet travels the [`Fabric`]: a pod IP
//! reaches the pod's sandbox on its host, a node IP's node ports go through that node's
//! kube-proxy rules to an endpoint (a second hop), other node ports refuse, anything else gets no answer and times out. A DNS query that reaches a CoreDNS
//! pod listening on port 53 is answered from the cluster DNS view ([`DnsServer`]).
//!
//! This is the one routing function: the runtime's outbox delivery and `kubectl exec`'s
//! synchronous calls both use it, so they cannot disagree about where a packet goes.

use crate::fabric::{Endpoint, Fabric, HOST_TO_HOST_LATENCY_MS};
use kubesim_api::Millis;
use kubesim_host::netfilter::{Dnat, ServiceTable};
use kubesim_host::Host;
use kubesim_os::program::{DnsMessage, DnsQuestion, Incoming, NetCall, NetError, NetReply, Outgoing};
use std::collections::BTreeMap;

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
}

/// The cluster DNS answers of CoreDNS's `kubernetes` plugin (and what it forwards), as the
/// DNS pods' informer sees the cluster.
pub trait DnsServer: Send + Sync + std::fmt::Debug {
    /// The response to one question.
    fn answer(&self, question: &DnsQuestion) -> DnsMessage;
}

/// The source host's Service rules applied to a call from `src` (kube-proxy's DNAT).
pub fn dnat(rules: &ServiceTable, node_ip: &str, src: (&str, u16), call: &NetCall) -> Dnat {
    let (dst, port, udp) = call.destination();
    rules.dnat(src, dst, port, udp, node_ip)
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
    /// The DNS question (`web.default.svc.cluster.local. A`), for queries.
    pub question: Option<String>,
    /// `ok`, `refused`, `timeout`, `reset`, `unreachable`, or the DNS rcode (`NXDOMAIN`).
    pub outcome: String,
    /// When the answer arrived, after the send.
    pub latency_ms: Millis,
}

impl PacketRecord {
    /// The record of a call, its source host's rewrite and its reply.
    pub fn of(t_ms: Millis, packet: &Packet, reply: &NetReply, latency_ms: Millis) -> PacketRecord {
        let (dst, port, udp) = packet.call.destination();
        let (protocol, question) = match packet.call {
            NetCall::Dns { question, .. } => ("dns", Some(format!("{} {}", question.name, format!("{:?}", question.qtype).to_ascii_uppercase()))),
            _ if udp => ("udp", None),
            _ => ("tcp", None),
        };
        let (service, endpoint) = match &packet.dnat {
            Dnat::To { ip, port, service } => (Some(service.clone()), Some((ip.clone(), *port))),
            Dnat::Reject { service } => (Some(service.clone()), None),
            Dnat::Unchanged => (None, None),
        };
        let error = |e: &NetError| match e {
            NetError::Refused => "refused",
            NetError::TimedOut => "timeout",
            NetError::Reset => "reset",
            NetError::HostUnreachable | NetError::NetworkUnreachable => "unreachable",
        };
        let outcome = match reply {
            NetReply::Tcp(Ok(_)) | NetReply::Udp(Ok(_)) => "ok".to_string(),
            NetReply::Dns(Ok(m)) => format!("{:?}", m.rcode).to_ascii_uppercase().replace("NOERROR", "ok"),
            NetReply::Tcp(Err(e)) | NetReply::Udp(Err(e)) | NetReply::Dns(Err(e)) => error(e).to_string(),
        };
        PacketRecord {
            t_ms,
            from_host: packet.from_host.to_string(),
            src_ip: packet.src_ip.clone(),
            protocol,
            dst: (dst.to_string(), port),
            service,
            endpoint,
            question,
            outcome,
            latency_ms,
        }
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
}

/// The timeout a call gets when nothing answers it.
fn timed_out(call: &NetCall) -> Delivery {
    Delivery { reply: kubesim_host::cri::timed_out(call), latency_ms: call.timeout_ms().max(1), served_by: None }
}

/// Routes a call that left its host. The server on the destination answers at send time; the
/// reply travels back with the link latency.
pub fn route_remote(hosts: &mut BTreeMap<String, Host>, fabric: &Fabric, packet: &Packet, now: Millis) -> Delivery {
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
        Dnat::Reject { .. } => return Delivery { reply: call.failed(NetError::Refused), latency_ms: 1, served_by: None },
    };
    let Some(to) = fabric.locate(&dst).cloned() else {
        // A load balancer's address: the load balancer forwards to a node (chosen per
        // connection among the powered nodes whose kube-proxy has rules for it), where the
        // rules pick an endpoint.
        if matches!(packet.dnat, Dnat::Unchanged) {
            let nodes: Vec<&Host> = hosts.values().filter(|h| h.powered && h.netfilter.vips.contains_key(&(dst.clone(), port, udp))).collect();
            if !nodes.is_empty() {
                let node = nodes[packet.src_port as usize % nodes.len()].name.clone();
                if let Some(delivery) = enter_node(hosts, fabric, &node, packet, (&dst, port, udp), HOST_TO_HOST_LATENCY_MS, now) {
                    return delivery;
                }
            }
        }
        return outside(call, &dst, port, udp, &data);
    };
    if !hosts.get(to.host()).is_some_and(|h| h.powered) {
        return timed_out(call);
    }
    let latency = if to.host() == packet.from_host { 0 } else { HOST_TO_HOST_LATENCY_MS };
    let round_trip = 2 * latency + 1;
    if let (Endpoint::Node { host: node }, Dnat::Unchanged) = (&to, &packet.dnat) {
        // A node address: that node's kube-proxy rules (KUBE-NODEPORTS) forward a node port to
        // an endpoint, which may be on a third node: a second hop from there.
        let node = node.clone();
        if let Some(delivery) = enter_node(hosts, fabric, &node, packet, (&dst, port, udp), latency, now) {
            return delivery;
        }
    }
    let Endpoint::Pod { host, .. } = to else {
        return match call {
            NetCall::Tcp { .. } => Delivery { reply: NetReply::Tcp(Err(NetError::Refused)), latency_ms: round_trip, served_by: None },
            _ => timed_out(call),
        };
    };
    let Some(target) = hosts.get_mut(&host) else { return timed_out(call) };
    let Some(sandbox) = target.cri.sandbox_with_ip(&dst).map(|s| s.id.clone()) else { return timed_out(call) };
    if let NetCall::Dns { question, .. } = call {
        // A DNS server: CoreDNS answers from the cluster view; nothing else serves DNS here.
        let serves_dns = target.cri.serving_image(&sandbox, port, udp).is_some_and(|image| image.contains("coredns"));
        return match (serves_dns, &fabric.cluster_dns) {
            (true, Some(dns)) => Delivery { reply: NetReply::Dns(Ok(dns.answer(question))), latency_ms: round_trip, served_by: None },
            (false, _) if !udp && !target.cri.listening(&sandbox).contains(&(port, false)) => {
                Delivery { reply: NetReply::Dns(Err(NetError::Refused)), latency_ms: round_trip, served_by: None }
            }
            _ => timed_out(call),
        };
    }
    // ingress-nginx: a controller pod's nginx routes the request by the rendered configuration.
    let controller = !udp && (port == 80 || port == 443) && target.cri.serving_image(&sandbox, port, udp).is_some_and(crate::ingress::is_controller_image);
    if let (true, Some(config)) = (controller, &fabric.ingress) {
        let arrival = crate::ingress::Arrival { controller: (&host, &dst), client: (&packet.src_ip, packet.src_port), port, data: &data, now, round_trip };
        return crate::ingress::proxy(hosts, fabric, config, &arrival);
    }
    let incoming = Incoming { src: packet.src_ip.clone(), src_port: packet.src_port, port, udp, data };
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
        (_, Some(Outgoing::Hang)) | (true, _) => return timed_out(call),
    };
    Delivery { reply, latency_ms: round_trip, served_by: Some(host) }
}

/// A packet that reached `node` from outside it (a node port, a load balancer's address): if
/// that node's kube-proxy rules rewrite `dst`, it is routed on from there, the hop's round trip
/// (`2 × hop_ms`) added; `None` when the rules leave it alone.
fn enter_node(
    hosts: &mut BTreeMap<String, Host>,
    fabric: &Fabric,
    node: &str,
    packet: &Packet,
    dst: (&str, u16, bool),
    hop_ms: Millis,
    now: Millis,
) -> Option<Delivery> {
    let host = hosts.get(node)?;
    let dnat = host.netfilter.dnat((&packet.src_ip, packet.src_port), dst.0, dst.1, dst.2, &host.ip());
    if matches!(dnat, Dnat::Unchanged) {
        return None;
    }
    let forwarded = Packet { from_host: node, src_ip: packet.src_ip.clone(), src_port: packet.src_port, call: packet.call, dnat };
    let mut delivery = route_remote(hosts, fabric, &forwarded, now);
    delivery.latency_ms += 2 * hop_ms;
    Some(delivery)
}

/// A call to an address no cluster interface has: the node's upstream resolver, a public site
/// ([`crate::internet`]), or nothing (a timeout).
fn outside(call: &NetCall, dst: &str, port: u16, udp: bool, data: &[u8]) -> Delivery {
    use crate::internet;
    let rtt = internet::INTERNET_RTT_MS;
    if dst == internet::UPSTREAM_RESOLVER && port == 53 {
        return match call {
            NetCall::Dns { question, .. } => Delivery { reply: NetReply::Dns(Ok(internet::resolve(question))), latency_ms: 1, served_by: None },
            _ => timed_out(call),
        };
    }
    let Some(site) = internet::site_at(dst) else { return timed_out(call) };
    match (call, port, udp) {
        (NetCall::Tcp { .. }, 80, false) => Delivery { reply: NetReply::Tcp(Ok(internet::http(site, data))), latency_ms: rtt, served_by: None },
        // TLS is not modelled: the handshake bytes get a reset.
        (NetCall::Tcp { .. }, 443, false) => Delivery { reply: NetReply::Tcp(Err(NetError::Reset)), latency_ms: rtt, served_by: None },
        _ => timed_out(call),
    }
}

/// Runs a command in a container to completion now (`kubectl exec`, the API server's exec
/// subresource): its calls that leave the host travel the fabric as [`route_remote`] routes
/// them. Returns the output, or `None` if the host does not exist.
pub fn exec(
    hosts: &mut BTreeMap<String, Host>,
    fabric: &Fabric,
    host: &str,
    container_id: &str,
    argv: &[String],
    io: kubesim_host::cri::ExecIo,
    now: Millis,
) -> Option<kubesim_host::cri::ExecOutput> {
    let mut caller = hosts.remove(host)?;
    let src_ip = caller.cri.container_ip(container_id).unwrap_or_default();
    let node_ip = caller.ip();
    let mut port = 40_000u16;
    let rules = &caller.netfilter;
    let output = caller.cri.exec_with(container_id, argv, io, now, &mut |call| {
        port = port.wrapping_add(1).max(40_000);
        let dnat = dnat(rules, &node_ip, (&src_ip, port), call);
        route_remote(hosts, fabric, &Packet { from_host: host, src_ip: src_ip.clone(), src_port: port, call, dnat }, now).reply
    });
    hosts.insert(host.to_string(), caller);
    Some(output)
}
