//! One machine of the simulated cluster: what lives on a node independently of the agents that
//! manage it. Start here:
//! - [`Host`]: a machine with its name, addresses, power state and container runtime.
//! - [`cri`]: the container runtime (containerd behind the CRI): sandboxes, containers, the
//!   image store, the node's volume storage, ExecSync, local routing; the latency table.
//! - [`container`]: a container and its processes (`kubesim-os` programs and the application
//!   models) on virtual time: sleeps, CPU work under the CPU limit, spawns, signals, OOM kills.
//! - [`cni`]: the node's CNI configuration and host-local IPAM (pod addresses from the node's
//!   podCIDR, round robin, never one in use).
//! - [`images`]: the image store: pulls resolved through the catalogue (`kubesim-images`),
//!   containerd's errors, each image's filesystem tree.
//! - [`csi`]: the CSI drivers' controller and node services (the disk and host-path drivers)
//!   and the node plugins' mount table.
//! - [`cloud`]: the cloud's block storage (zonal disks attached to one machine at a time; a
//!   disk's content follows the disk).
//! - [`netfilter`] and [`iptables`]: kube-proxy's rules (the decision and its rendering);
//!   [`healthcheck`]: kube-proxy's HTTP servers (service health checks, `/healthz`,
//!   `/proxyMode`).
//!
//! Node agents (the kubelet, kube-proxy) reach their host through the runtime's `Ctx::host`;
//! the kubelet calls the machine's CSI node plugins there too. The host knows nothing of the
//! API server or of the agents.
//!
//! Invariant: a host holds plain, cloneable data (a cloned world has a bit-identical future)
//! and performs no I/O.

#![deny(missing_docs)]

pub mod cloud;
pub mod cni;
pub mod container;
pub mod cri;
pub mod csi;
pub mod healthcheck;
pub mod hosts;
pub mod images;
pub mod iptables;
pub mod netfilter;

pub use hosts::{HostId, Hosts};

use kubesim_api::Millis;

/// A machine: a Kubernetes node's host.
#[derive(Clone, Debug)]
pub struct Host {
    /// The host (and Node) name.
    pub name: String,
    /// 0-based index in the order hosts joined: it fixes the addresses below.
    pub index: u32,
    /// Whether the machine has power. A host that loses power loses every process and
    /// sandbox at once; its agents are suspended by the runtime until power returns.
    pub powered: bool,
    /// The container runtime (containerd).
    pub cri: cri::ContainerRuntime,
    /// When power was last lost (for the UI).
    pub powered_off_at: Option<Millis>,
    /// The Service rules kube-proxy programmed (iptables).
    pub netfilter: netfilter::ServiceTable,
    /// kube-proxy's HTTP servers (health checks on the Services' `healthCheckNodePort`s,
    /// `:10256/healthz`, `127.0.0.1:10249/proxyMode`), as the running process serves them.
    pub kube_proxy: healthcheck::KubeProxyServers,
    /// The CNI configuration and host-local IPAM state (kept on the machine, so a restarted
    /// kubelet never hands out an address still in use).
    pub cni: cni::Cni,
    /// The machine's availability zone (cloud metadata; the node's `topology.kubernetes.io/zone`).
    pub zone: Option<String>,
    /// The CSI node plugins' mount table (staged and published volumes).
    pub csi: csi::NodeMounts,
    /// The cloud disks attached to the machine, by disk id (their content is the volume tree
    /// [`cloud::device_volume`] in the runtime's storage).
    pub devices: std::collections::BTreeMap<String, cloud::AttachedDevice>,
}

/// The volume id of the node's own filesystem (hostPath volumes mount parts of it).
pub const NODE_ROOT: &str = "node";

/// The node's own filesystem, as hostPath volumes see it.
pub fn node_root() -> kubesim_os::fs::Tree {
    let mut tree = kubesim_os::fs::Tree::new();
    for dir in ["/etc", "/mnt", "/tmp", "/var", "/var/log", "/var/lib", "/data", "/usr", "/usr/share"] {
        tree.add_dir(dir, 0o755);
    }
    tree.add_file("/etc/hostname", "kind-worker\n", 0o644);
    tree
}

impl Host {
    /// A powered-on host with an empty container runtime.
    pub fn new(name: &str, index: u32) -> Host {
        Host {
            name: name.to_string(),
            index,
            powered: true,
            cri: cri::ContainerRuntime::new(),
            powered_off_at: None,
            netfilter: netfilter::ServiceTable::default(),
            kube_proxy: healthcheck::KubeProxyServers::default(),
            cni: cni::Cni::default(),
            zone: None,
            csi: csi::NodeMounts::default(),
            devices: std::collections::BTreeMap::new(),
        }
    }

    /// The node's InternalIP: 172.18.0.<index+2>, as kind numbers its node containers.
    pub fn ip(&self) -> String {
        node_ip(self.index)
    }

    /// The source address `KUBE-POSTROUTING`'s MASQUERADE gives a connection this host
    /// forwards to an endpoint: the address of the interface it leaves by. For an endpoint on
    /// this host that is the pod's veth, whose host side the CNI's ptp plugin gives the pod
    /// range's gateway (`10.244.N.1`); for any other, the node's InternalIP.
    pub fn masquerade_address(&self, endpoint_on_this_host: bool) -> String {
        match self.cni.gateway() {
            Some(gateway) if endpoint_on_this_host => gateway,
            _ => self.ip(),
        }
    }

    /// The node's own interfaces (what a hostNetwork pod sees): loopback and `eth0` on the
    /// kind network (172.18.0.0/16), with the MAC docker derives from the address (the index
    /// of its other end, in docker's namespace, is not modelled).
    pub fn interfaces(&self) -> Vec<kubesim_os::net::iface::Interface> {
        use kubesim_os::net::iface::Interface;
        let ip = self.ip();
        let last = ip.rsplit('.').next().and_then(|o| o.parse().ok()).unwrap_or(0);
        vec![Interface::loopback(), Interface::veth(2, 3 + self.index, &ip, 16, [0x02, 0x42, 172, 18, 0, last], 1500)]
    }

    /// The machine loses power: every container and sandbox stops at once.
    pub fn power_off(&mut self, now: Millis) {
        self.netfilter = netfilter::ServiceTable::default();
        self.kube_proxy.stop();
        self.powered = false;
        self.powered_off_at = Some(now);
        self.csi.unmount_all();
        let sandboxes: Vec<String> = self.cri.list_pod_sandbox().iter().map(|s| s.id.clone()).collect();
        for id in sandboxes {
            let _ = self.cri.stop_pod_sandbox(&id, now);
        }
    }

    /// Power returns (the runtime's state survives: containerd keeps its records on disk).
    pub fn power_on(&mut self) {
        self.powered = true;
        self.powered_off_at = None;
    }
}

/// The InternalIP of the host with this index.
pub fn node_ip(index: u32) -> String {
    format!("172.18.0.{}", index + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MASQUERADE picks the address of the interface the connection leaves by: the pod range's
    /// gateway on the veth of a pod of this node (ptp), else the node's InternalIP; before the
    /// CNI is configured there is only the node's.
    #[test]
    fn masquerade_uses_the_address_towards_the_endpoint() {
        let mut host = Host::new("node-2", 1);
        assert_eq!(host.masquerade_address(true), "172.18.0.3");
        host.cni.configure("10.244.1.0/24").unwrap();
        assert_eq!(host.masquerade_address(true), "10.244.1.1");
        assert_eq!(host.masquerade_address(false), "172.18.0.3");
    }
}
