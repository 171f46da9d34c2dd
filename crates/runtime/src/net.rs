//! Packets between hosts: how a container's network call that leaves its host reaches the
//! process serving it. The source host's own pods and loopback are answered by the host's
//! runtime (`ContainerRuntime::deliver_local`); everything else comes here and travels the
//! [`Fabric`]: a pod IP reaches the pod's sandbox on its host, a node IP refuses (no
//! host-network server listens there yet), anything else gets no answer and times out.
//!
//! This is the one routing function: the runtime's outbox delivery and `kubectl exec`'s
//! synchronous calls both use it, so they cannot disagree about where a packet goes.

use crate::fabric::{Endpoint, Fabric, HOST_TO_HOST_LATENCY_MS};
use kubesim_api::Millis;
use kubesim_host::Host;
use kubesim_os::program::{Incoming, NetCall, NetError, NetReply, Outgoing};
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
    let timeout = match call {
        NetCall::Tcp { timeout_ms, .. } | NetCall::Udp { timeout_ms, .. } | NetCall::Dns { timeout_ms, .. } => *timeout_ms,
    };
    Delivery { reply: kubesim_host::cri::timed_out(call), latency_ms: timeout.max(1), served_by: None }
}

/// Routes a call that left its host. The server on the destination answers at send time; the
/// reply travels back with the link latency.
pub fn route_remote(hosts: &mut BTreeMap<String, Host>, fabric: &Fabric, packet: &Packet, now: Millis) -> Delivery {
    let call = packet.call;
    let (dst, port, udp, data) = match call {
        NetCall::Tcp { dst, port, send, .. } => (dst.clone(), *port, false, send.clone()),
        NetCall::Udp { dst, port, send, .. } => (dst.clone(), *port, true, send.clone()),
        NetCall::Dns { .. } => return timed_out(call),
    };
    if hosts.get(packet.from_host).is_some_and(|h| !h.powered) {
        return timed_out(call);
    }
    let Some(to) = fabric.locate(&dst).cloned() else { return timed_out(call) };
    if !hosts.get(to.host()).is_some_and(|h| h.powered) {
        return timed_out(call);
    }
    let latency = if to.host() == packet.from_host { 0 } else { HOST_TO_HOST_LATENCY_MS };
    let round_trip = 2 * latency + 1;
    let Endpoint::Pod { host, .. } = to else {
        return match call {
            NetCall::Tcp { .. } => Delivery { reply: NetReply::Tcp(Err(NetError::Refused)), latency_ms: round_trip, served_by: None },
            _ => timed_out(call),
        };
    };
    let Some(target) = hosts.get_mut(&host) else { return timed_out(call) };
    let Some(sandbox) = target.cri.sandbox_with_ip(&dst).map(|s| s.id.clone()) else { return timed_out(call) };
    let incoming = Incoming { src: packet.src_ip.clone(), src_port: packet.src_port, port, udp, data };
    let answer = target.cri.serve(&sandbox, &incoming, now);
    let reply = match (udp, answer) {
        (false, Some(Outgoing::Reply(bytes))) => NetReply::Tcp(Ok(bytes)),
        (false, Some(Outgoing::Reset)) => NetReply::Tcp(Err(NetError::Reset)),
        (false, None) => NetReply::Tcp(Err(NetError::Refused)),
        (true, Some(Outgoing::Reply(bytes))) => NetReply::Udp(Ok(bytes)),
        (_, Some(Outgoing::Hang)) | (true, _) => return timed_out(call),
    };
    Delivery { reply, latency_ms: round_trip, served_by: Some(host) }
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
    stdin: Vec<u8>,
    now: Millis,
) -> Option<kubesim_host::cri::ExecOutput> {
    let mut caller = hosts.remove(host)?;
    let src_ip = caller.cri.container_ip(container_id).unwrap_or_default();
    let mut port = 40_000u16;
    let output = caller.cri.exec_with(container_id, argv, stdin, now, &mut |call| {
        port = port.wrapping_add(1).max(40_000);
        route_remote(hosts, fabric, &Packet { from_host: host, src_ip: src_ip.clone(), src_port: port, call }, now).reply
    });
    hosts.insert(host.to_string(), caller);
    Some(output)
}
