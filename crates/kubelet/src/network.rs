//! The network plugin seam (the kubelet's CNI calls through containerd): at sandbox creation
//! CNI ADD gives the pod its address from the node's pod CIDR (host-local IPAM, state on the
//! host: `kubesim_host::cni`); at teardown CNI DEL releases it. The plugin also tells the fabric
//! which address the pod now has, so packets and probes find it.
//!
//! The CNI configuration follows the node's `spec.podCIDR`, which the node IPAM controller
//! assigns (kindnetd writes the conflist when it sees it; here the kubelet does so when it reads
//! its Node). Until then sandboxes fail with containerd's `cni plugin not initialized`.

use kubesim_host::Host;
use kubesim_runtime::{Endpoint, Fabric};

/// CNI ADD for sandbox `sandbox_id` of pod `pod_uid`: its address, or containerd's error.
pub fn add(host: &mut Host, fabric: &mut Fabric, pod_uid: &str, sandbox_id: &str) -> Result<String, String> {
    let ip = host.cni.add(sandbox_id).map_err(|e| format!("failed to setup network for sandbox {sandbox_id:?}: {e}"))?.to_string();
    fabric.assign(&ip, Endpoint::Pod { host: host.name.clone(), pod_uid: pod_uid.to_string() });
    Ok(ip)
}

/// CNI DEL: the sandbox's address is released.
pub fn del(host: &mut Host, fabric: &mut Fabric, pod_uid: &str, sandbox_id: &str, ip: &str) {
    host.cni.del(sandbox_id);
    fabric.release(ip, &Endpoint::Pod { host: host.name.clone(), pod_uid: pod_uid.to_string() });
}
