//! The network plugin seam (the kubelet's CNI calls through containerd): at sandbox creation
//! CNI ADD gives the pod its address from the node's pod CIDR (host-local IPAM, state on the
//! host: `kubesim_host::cni`); at teardown CNI DEL releases it. The plugin also tells the fabric
//! which address the pod now has, so packets and probes find it.
//!
//! kindnetd's conflist chains the `portmap` plugin after `ptp`: a container port with a
//! `hostPort` gets a DNAT rule from the node's address to the pod (CNI-HOSTPORT-DNAT), removed
//! at DEL.
//!
//! The CNI configuration follows the node's `spec.podCIDR`, which the node IPAM controller
//! assigns (kindnetd writes the conflist when it sees it; here the kubelet does so when it reads
//! its Node). Until then sandboxes fail with containerd's `cni plugin not initialized`.

use kubesim_api::k8s_openapi::api::core::v1::PodSpec;
use kubesim_host::netfilter::HostPort;
use kubesim_host::Host;
use kubesim_runtime::{Endpoint, Fabric};

/// CNI ADD for sandbox `sandbox_id` of `pod` (its uid and `namespace/name`): its address, or
/// containerd's error. The portmap plugin then maps the pod's host ports.
pub fn add(host: &mut Host, fabric: &mut Fabric, pod: (&str, &str), sandbox_id: &str, spec: &PodSpec) -> Result<String, String> {
    let (pod_uid, pod_ref) = pod;
    let ip = host.cni.add(sandbox_id).map_err(|e| format!("failed to setup network for sandbox {sandbox_id:?}: {e}"))?.to_string();
    fabric.assign(&ip, Endpoint::Pod { host: host.name.clone(), pod_uid: pod_uid.to_string() });
    for port in spec.containers.iter().flat_map(|c| c.ports.iter().flatten()) {
        let Some(host_port) = port.host_port.filter(|p| (1..=65535).contains(p)) else { continue };
        let udp = port.protocol.as_deref() == Some("UDP");
        let mapping = HostPort { ip: ip.clone(), port: port.container_port as u16, sandbox: sandbox_id.to_string(), pod: pod_ref.to_string() };
        host.netfilter.host_ports.insert((host_port as u16, udp), mapping);
    }
    Ok(ip)
}

/// CNI DEL: the sandbox's address is released and its host ports unmapped.
pub fn del(host: &mut Host, fabric: &mut Fabric, pod_uid: &str, sandbox_id: &str, ip: &str) {
    host.cni.del(sandbox_id);
    host.netfilter.host_ports.retain(|_, m| m.sandbox != sandbox_id);
    fabric.release(ip, &Endpoint::Pod { host: host.name.clone(), pod_uid: pod_uid.to_string() });
}
