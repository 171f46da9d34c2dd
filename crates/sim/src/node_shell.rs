//! A shell on a node (`minikube ssh`, `docker exec -it kind-worker bash`): the commands the
//! Kubernetes docs run on a node itself, such as `sudo mkdir /mnt/data` before a hostPath
//! PersistentVolume uses it. The shell runs as root in a Debian userland (kind's and
//! minikube's node images are Debian/Ubuntu; modelled by the workstation's image plus `sudo`)
//! whose top-level data directories (`/mnt`, `/data`, `/tmp`, `/var`, `/srv`, `/opt`,
//! `/home`) are the node's own filesystem: the same tree hostPath volumes mount
//! ([`kubesim_host::NODE_ROOT`]), so what the shell writes there a pod reads, and the reverse.
//! `/etc` and `/usr` stay the image's. Its calls leave from the node's address through the
//! node's own kube-proxy rules, as a process on the node does.
//!
//! Deliberate simplifications: a directory the shell creates at the top level outside those
//! (`mkdir /foo`) lands in the shell's own root, not the node's; each line runs as its own
//! `bash -c`, so a session keeps files but not the working directory or shell variables.

use kubesim_api::Millis;
use kubesim_host::cri::{ContainerRuntime, ContainerSpec, ExecIo, ExecOutput, SandboxConfig};
use kubesim_host::{node_root, NODE_ROOT};
use kubesim_os::fs::Mount;
use kubesim_runtime::net::{Net, Origin, Packet};
use std::collections::BTreeMap;

/// The node's directories the shell shares with hostPath volumes.
pub const NODE_DIRS: &[&str] = &["/mnt", "/data", "/tmp", "/var", "/srv", "/opt", "/home"];
const CONTAINER: &str = "node-shell";
/// `iptables-save [-t TABLE]`: the tables [`kubesim_host::iptables::iptables_save`] renders
/// from the node's rules before each command.
const IPTABLES_SAVE: &str = "#!/bin/sh\ncase \" $* \" in\n  *\" -t nat \"*|*\" --table=nat \"*|*\" -tnat \"*) cat /run/kubesim/iptables/nat ;;\n  *\" -t filter \"*|*\" --table=filter \"*|*\" -tfilter \"*) cat /run/kubesim/iptables/filter ;;\n  *) cat /run/kubesim/iptables/filter /run/kubesim/iptables/nat ;;\nesac\n";

/// An open shell on one node.
#[derive(Clone, Debug)]
pub struct NodeShell {
    /// The node the shell runs on.
    pub node: String,
    cri: ContainerRuntime,
}

impl NodeShell {
    /// A root shell on `node`.
    pub fn new(node: &str, now: Millis) -> NodeShell {
        let mut cri = ContainerRuntime::new();
        let image = crate::workstation::WORKSTATION_IMAGE;
        let _ = cri.pull_image(image);
        let config = SandboxConfig {
            pod_uid: "node-shell".into(),
            pod_name: "node-shell".into(),
            pod_namespace: String::new(),
            ip: String::new(),
            share_pid: false,
            interfaces: Vec::new(),
        };
        let _ = cri.run_pod_sandbox(&config, "node-shell".into(), now);
        let mut env = BTreeMap::new();
        env.insert("PATH".to_string(), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string());
        env.insert("HOME".to_string(), "/root".to_string());
        let spec = ContainerSpec {
            name: "shell".into(),
            image: image.into(),
            argv: vec!["sleep".into(), "infinity".into()],
            env: env.into(),
            cwd: "/root".into(),
            hostname: node.into(),
            mounts: NODE_DIRS
                .iter()
                .map(|d| Mount { path: d.to_string(), volume: NODE_ROOT.into(), sub_path: Some(d.to_string()), read_only: false, memory: false })
                .collect(),
            files: vec![
                ("/usr/bin/sudo".to_string(), b"#!kubesim sudo\n".to_vec(), 0o755),
                ("/usr/sbin/iptables-save".to_string(), IPTABLES_SAVE.as_bytes().to_vec(), 0o755),
                ("/etc/hostname".to_string(), format!("{node}\n").into_bytes(), 0o644),
                ("/etc/hosts".to_string(), format!("127.0.0.1\tlocalhost\n127.0.1.1\t{node}\n").into_bytes(), 0o644),
            ],
            node_cpus: 2,
            node_memory: 8 << 30,
            ..Default::default()
        };
        let _ = cri.create_container("node-shell", spec, CONTAINER.into(), now);
        let _ = cri.start_container(CONTAINER, now);
        NodeShell { node: node.to_string(), cri }
    }

    /// Runs a command line in the shell to completion now. `None` if the node is gone or
    /// powered off (ssh cannot connect).
    /// Its packets are recorded in `net` as [`Origin::NodeShell`]'s.
    pub fn run(&mut self, net: &mut Net, line: &str) -> Option<ExecOutput> {
        let now = net.now;
        let host = net.hosts.get_mut(&self.node).filter(|h| h.powered)?;
        let node_ip = host.ip();
        // The node's filesystem is lent to the shell for the command and handed back after it.
        let mut tree = host.cri.volumes.trees.remove(NODE_ROOT).unwrap_or_else(node_root);
        for dir in NODE_DIRS {
            tree.add_dir(dir, 0o755);
        }
        self.cri.volumes.trees.insert(NODE_ROOT.to_string(), tree);
        // `iptables-save` prints the rules kube-proxy programmed on this node.
        let stamp = kubesim_os::time::strftime("%a %b %e %H:%M:%S %Y", kubesim_api::time::EPOCH_UNIX_SECONDS + (now / 1000) as i64, 0);
        let header = format!("# Generated by iptables-save v1.8.9 (nf_tables) on {stamp}\n");
        let options = kubesim_host::iptables::Options::kind(kubesim_controllers::nodeipam::CLUSTER_CIDR, &node_ip);
        let (filter, nat) = kubesim_host::iptables::iptables_save(&host.netfilter, &options, &header);
        if let Some((container, _)) = self.cri.container_mut(CONTAINER) {
            let footer = format!("# Completed on {stamp}\n");
            container.rootfs.add_file("/run/kubesim/iptables/filter", format!("{filter}{footer}").into_bytes(), 0o644);
            container.rootfs.add_file("/run/kubesim/iptables/nat", format!("{nat}{footer}").into_bytes(), 0o644);
        }
        // The shell shares the node's network namespace: connections to 127.0.0.1 reach the
        // node's own listeners (kube-proxy's servers, node ports on localhost), not the shell's.
        self.cri.published = host.netfilter.node_ports.keys().copied().chain(host.kube_proxy.ports(true).into_iter().map(|p| (p, false))).collect();
        let argv = vec!["bash".to_string(), "-c".to_string(), line.to_string()];
        let io = ExecIo { stdin: Vec::new(), tty: true };
        let node = self.node.clone();
        let mut port = 40_000u16;
        let output = self.cri.exec_with(CONTAINER, &argv, io, now, &mut |call| {
            port = port.wrapping_add(1).max(40_000);
            let (dst, dst_port, udp) = call.destination();
            let now = net.now;
            // A connection to 127.0.0.1 comes from 127.0.0.1.
            let src = if dst.starts_with("127.") || dst == "localhost" { "127.0.0.1".to_string() } else { node_ip.clone() };
            let dnat = net
                .hosts
                .get_mut(&node)
                .map(|h| h.netfilter.dnat((&src, port), dst, dst_port, udp, &node_ip, now))
                .unwrap_or(kubesim_host::netfilter::Dnat::Unchanged);
            let packet = Packet::new(&node, src, port, call, dnat);
            net.send(&packet, Origin::NodeShell).reply
        });
        let tree = self.cri.volumes.trees.remove(NODE_ROOT).unwrap_or_else(node_root);
        if let Some(host) = net.hosts.get_mut(&self.node) {
            host.cri.volumes.trees.insert(NODE_ROOT.to_string(), tree);
        }
        Some(output)
    }
}
