//! The network plugin seam (the kubelet's CNI calls): at sandbox creation the plugin's ADD gives
//! the pod its address on the node's pod CIDR; at teardown DEL releases it.
//!
//! [`HostLocal`] is today's plugin: addresses 10.244.<node>.2 … .254 handed out in order,
//! wrapping after .254. Known gap (the Service networking issue replaces this plugin with
//! host-local IPAM semantics): it does not skip addresses still in use after a wrap.

use kubesim_runtime::{Endpoint, Fabric};

/// What the kubelet needs of a CNI plugin. The plugin also tells the fabric which address the
/// pod now has, so packets and probes find it.
pub trait NetworkPlugin {
    /// CNI ADD for a pod sandbox on `host`: the pod IP.
    fn add(&mut self, pod_uid: &str, host: &str, fabric: &mut Fabric) -> String;
    /// CNI DEL: the pod's address is released.
    fn del(&mut self, pod_uid: &str, ip: &str, host: &str, fabric: &mut Fabric);
}

/// Sequential allocation on the node's /24.
#[derive(Clone, Debug)]
pub struct HostLocal {
    node_index: u32,
    next: u32,
}

impl HostLocal {
    /// The plugin for the node with this index (pod CIDR 10.244.<index>.0/24).
    pub fn new(node_index: u32) -> HostLocal {
        HostLocal { node_index, next: 2 }
    }
}

impl NetworkPlugin for HostLocal {
    fn add(&mut self, pod_uid: &str, host: &str, fabric: &mut Fabric) -> String {
        let ip = format!("10.244.{}.{}", self.node_index, self.next);
        self.next = if self.next >= 254 { 2 } else { self.next + 1 };
        fabric.assign(&ip, Endpoint::Pod { host: host.to_string(), pod_uid: pod_uid.to_string() });
        ip
    }
    fn del(&mut self, pod_uid: &str, ip: &str, host: &str, fabric: &mut Fabric) {
        fabric.release(ip, &Endpoint::Pod { host: host.to_string(), pod_uid: pod_uid.to_string() });
    }
}
