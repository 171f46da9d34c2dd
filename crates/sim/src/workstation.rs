//! The workstation: the machine the cluster runs on (kind's docker host, 172.18.0.1 on the
//! nodes' network), where a user types `curl`, `wget`, `nslookup`, `dig`, `ping` or `nc`
//! outside any pod. Its shell is a Debian userland (the `buildpack-deps:bookworm-curl` image's
//! programs) whose calls travel the fabric like a pod's: a node's address and node ports reach
//! that node (kube-proxy's KUBE-NODEPORTS rules forward them to an endpoint), the internet is
//! reachable, but pod and Service addresses are not (the host has no route into the cluster
//! networks, as on a kind host). Ports a kind cluster's `extraPortMappings` publish are open on
//! the workstation's own addresses (`localhost`, 172.18.0.1) and lead to that node's port.

use kubesim_api::Millis;
use kubesim_host::cri::{ContainerRuntime, ContainerSpec, ExecIo, ExecOutput, SandboxConfig};
use kubesim_os::program::NetCall;
use kubesim_runtime::net::{Net, Origin, Packet};
use std::collections::BTreeMap;

/// The workstation's address on the nodes' network.
pub const WORKSTATION_IP: &str = "172.18.0.1";
/// The host its packets leave from, as the fabric sees it: no node (no node's rules apply, no
/// link fault of a node is the workstation's).
pub const WORKSTATION_HOST: &str = "";
/// Its image (a Debian userland with curl and wget).
pub const WORKSTATION_IMAGE: &str = "buildpack-deps:bookworm-curl";
/// The programs a command line may start with to run on the workstation.
/// (`for` starts a shell loop typed there: `for node in $NODES; do curl -s $node:$NODEPORT; done`.)
pub const WORKSTATION_COMMANDS: &[&str] = &["curl", "wget", "nslookup", "dig", "ping", "nc", "host", "sh", "bash", "for"];
const CONTAINER: &str = "workstation-shell";

/// Whether a command line is for the workstation's shell (`curl http://172.18.0.2:30080`).
pub fn is_workstation_command(line: &str) -> bool {
    line.split_whitespace().next().is_some_and(|w| WORKSTATION_COMMANDS.contains(&w))
}

/// The workstation's container runtime, holding one shell container.
#[derive(Clone, Debug)]
pub struct Workstation {
    cri: ContainerRuntime,
}

impl Workstation {
    /// A workstation whose shell is ready.
    pub fn new(now: Millis) -> Workstation {
        let mut cri = ContainerRuntime::new();
        let _ = cri.pull_image(WORKSTATION_IMAGE);
        let config = SandboxConfig {
            pod_uid: "workstation".into(),
            pod_name: "workstation".into(),
            pod_namespace: String::new(),
            ip: WORKSTATION_IP.into(),
            share_pid: false,
            interfaces: Vec::new(),
        };
        let _ = cri.run_pod_sandbox(&config, "workstation".into(), now);
        let mut env = BTreeMap::new();
        env.insert("PATH".to_string(), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string());
        env.insert("HOME".to_string(), "/root".to_string());
        let spec = ContainerSpec {
            name: "shell".into(),
            image: WORKSTATION_IMAGE.into(),
            argv: vec!["sleep".into(), "infinity".into()],
            env: env.into(),
            cwd: "/root".into(),
            hostname: "workstation".into(),
            files: vec![
                ("/etc/resolv.conf".to_string(), format!("nameserver {}\n", kubesim_runtime::internet::UPSTREAM_RESOLVER).into_bytes(), 0o644),
                ("/etc/hosts".to_string(), b"127.0.0.1\tlocalhost\n".to_vec(), 0o644),
            ],
            node_cpus: 2,
            node_memory: 8 << 30,
            ..Default::default()
        };
        let _ = cri.create_container("workstation", spec, CONTAINER.into(), now);
        let _ = cri.start_container(CONTAINER, now);
        Workstation { cri }
    }

    /// Runs a command line in the workstation's shell to completion now. `published`: the
    /// ports kind publishes here, (host port, udp) → (node, container port).
    /// Its packets are recorded in `net` as [`Origin::Workstation`]'s (a port-forwarded
    /// connection as [`Origin::PortForward`]'s).
    pub fn run(
        &mut self,
        net: &mut Net,
        published: &PortMappings,
        forwards: &BTreeMap<u16, crate::port_forward::Forward>,
        line: &str,
    ) -> (ExecOutput, Vec<u16>) {
        let now = net.now;
        let argv = vec!["sh".to_string(), "-c".to_string(), line.to_string()];
        let mut port = 40_000u16;
        let io = ExecIo { stdin: Vec::new(), tty: true };
        self.cri.published = published.keys().copied().chain(forwards.keys().map(|p| (*p, false))).collect();
        let mut handled = Vec::new();
        let output = self.cri.exec_with(CONTAINER, &argv, io, now, &mut |call| {
            port = port.wrapping_add(1).max(40_000);
            let (dst, dst_port, udp) = call.destination();
            // kubectl port-forward: a local port leads into the pod's network namespace, from
            // the pod's node (the kubelet's streaming connection).
            if let Some(f) = forwards.get(&dst_port).filter(|_| !udp && (dst.starts_with("127.") || dst == "::1" || dst == "localhost")) {
                handled.push(dst_port);
                let Some(node_ip) = net.hosts.get(&f.node).map(|h| h.ip()) else { return kubesim_host::cri::timed_out(call) };
                let forwarded = redirect(call, &f.pod_ip, f.port);
                let packet = Packet::new(&f.node, node_ip, port, &forwarded, kubesim_host::netfilter::Dnat::Unchanged);
                return net.send(&packet, Origin::PortForward).reply;
            }
            if in_cluster_networks(dst) {
                return kubesim_host::cri::timed_out(call);
            }
            // docker-proxy: a published port on this machine leads to the node's port.
            let local = dst.starts_with("127.") || dst == WORKSTATION_IP;
            if let Some((node, container_port)) = published.get(&(dst_port, udp)).filter(|_| local) {
                let Some(node_ip) = net.hosts.get(node).map(|h| h.ip()) else { return kubesim_host::cri::timed_out(call) };
                let forwarded = redirect(call, &node_ip, *container_port);
                return send(net, &forwarded, port);
            }
            send(net, call, port)
        });
        (output, handled)
    }
}

/// kind's `extraPortMappings`: (host port, udp) → (node, container port).
pub type PortMappings = BTreeMap<(u16, bool), (String, u16)>;

/// The same call to another address and port.
fn redirect(call: &NetCall, ip: &str, to_port: u16) -> NetCall {
    let mut call = call.clone();
    match &mut call {
        NetCall::Tcp { dst, port, .. } | NetCall::Udp { dst, port, .. } => {
            *dst = ip.to_string();
            *port = to_port;
        }
        NetCall::Dns { server, port, .. } => {
            *server = ip.to_string();
            *port = to_port;
        }
    }
    call
}

/// A packet from the workstation's address (it enters the cluster through a node's address).
fn send(net: &mut Net, call: &NetCall, port: u16) -> kubesim_os::program::NetReply {
    let packet = Packet::new(WORKSTATION_HOST, WORKSTATION_IP.into(), port, call, kubesim_host::netfilter::Dnat::Unchanged);
    net.send(&packet, Origin::Workstation).reply
}

/// Pod (10.244.0.0/16) and Service (10.96.0.0/12) addresses: no route from the host.
fn in_cluster_networks(ip: &str) -> bool {
    let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    matches!(octets.as_slice(), [10, 244, _, _]) || kubesim_host::netfilter::in_service_cidr(ip)
}
