//! Faults as typed verbs, parsed once and shared by the CLI (`--at 'fault …'`), the kubectl
//! console and the browser's fault buttons. A fault acts on hosts and the fabric (power,
//! partitions, agent restarts) or on one container; its effects follow from the model.

use std::fmt;

/// A fault to inject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The node loses power: every container stops, its agents go silent.
    NodeDown(String),
    /// The node is back: power returns and its network is reconnected.
    NodeUp(String),
    /// The node cannot reach the API server (its containers keep running).
    NetworkPartition(String),
    /// The kubelet process restarts and rebuilds its state from the API server and the runtime.
    KubeletRestart(String),
    /// A container's process crashes now (exit code 1).
    ContainerCrash {
        /// `namespace/name` or `name` (namespace `default`).
        pod: String,
        /// The container (the pod's first if `None`).
        container: Option<String>,
    },
    /// Packets between two nodes or zones are dropped (both directions, or `from` → `to` only).
    Partition {
        /// A node name or `zone=<zone>`.
        from: String,
        /// A node name or `zone=<zone>`.
        to: String,
        /// Only packets from `from` to `to` are dropped.
        one_way: bool,
    },
    /// A share of the packets leaving or reaching a node is lost.
    PacketLoss {
        /// The node.
        node: String,
        /// Percent lost (0–100).
        percent: u8,
    },
    /// Packets leaving or reaching a node take this much longer (one way).
    Latency {
        /// The node.
        node: String,
        /// Added milliseconds.
        ms: u64,
    },
    /// The CoreDNS processes hang: DNS queries get no answer.
    DnsOutage,
    /// kube-proxy stops on a node: its rules stay as last synced and go stale.
    KubeProxyStop(String),
    /// kube-proxy starts again on a node and syncs.
    KubeProxyStart(String),
    /// The registry answers "not found" for an image reference (pulls fail:
    /// ErrImagePull, then ImagePullBackOff) until `heal`. Written as the `missing` key of the
    /// `kube-system/kubesim-images` ConfigMap, which every kubelet reads when it pulls.
    ImagePullFailure(String),
    /// The store compacts its watch history up to now: a watch resuming from an older
    /// resourceVersion gets 410 Gone and relists (`kubesim serve`'s watchers).
    Compaction,
    /// A node's agents lose their watches for an instant: the events in flight to them are
    /// lost and they relist (the node is cut off from the API server and reconnected at once).
    WatchDisconnect(String),
    /// Every node powered and connected again, every link and DNS fault cleared, every image
    /// a fault made fail pullable again.
    Heal,
}

/// The usage line of `fault`.
pub const FAULT_USAGE: &str = "node-down NODE, node-up NODE, network-partition NODE, kubelet-restart NODE, container-crash POD [CONTAINER], partition NODE|zone=Z NODE|zone=Z [--one-way], packet-loss NODE PERCENT%, latency NODE MSms, dns-outage, kube-proxy-stop NODE, kube-proxy-start NODE, image-pull-failure IMAGE, compaction, watch-disconnect NODE, heal";

impl Fault {
    /// Parses the words after `fault` (`node-down node-1`).
    pub fn parse(text: &str) -> Result<Fault, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let fault = match words.as_slice() {
            ["node-down", node] => Fault::NodeDown(node.to_string()),
            ["node-up", node] => Fault::NodeUp(node.to_string()),
            ["network-partition", node] => Fault::NetworkPartition(node.to_string()),
            ["kubelet-restart", node] => Fault::KubeletRestart(node.to_string()),
            ["container-crash", pod] => Fault::ContainerCrash { pod: pod.to_string(), container: None },
            ["container-crash", pod, container] => Fault::ContainerCrash { pod: pod.to_string(), container: Some(container.to_string()) },
            ["partition", from, to] => Fault::Partition { from: from.to_string(), to: to.to_string(), one_way: false },
            ["partition", from, to, "--one-way"] => Fault::Partition { from: from.to_string(), to: to.to_string(), one_way: true },
            ["packet-loss", node, percent] => {
                let percent = percent.strip_suffix('%').unwrap_or(percent);
                let percent =
                    percent.parse::<u8>().ok().filter(|p| *p <= 100).ok_or_else(|| format!("fault: packet-loss wants a percentage 0-100%, not {percent:?}"))?;
                Fault::PacketLoss { node: node.to_string(), percent }
            }
            ["latency", node, ms] => {
                let ms = ms
                    .strip_suffix("ms")
                    .unwrap_or(ms)
                    .parse::<u64>()
                    .ok()
                    .filter(|m| *m <= 60_000)
                    .ok_or_else(|| format!("fault: latency wants milliseconds (0-60000ms), not {ms:?}"))?;
                Fault::Latency { node: node.to_string(), ms }
            }
            ["dns-outage"] => Fault::DnsOutage,
            ["kube-proxy-stop", node] => Fault::KubeProxyStop(node.to_string()),
            ["kube-proxy-start", node] => Fault::KubeProxyStart(node.to_string()),
            ["image-pull-failure", image] => Fault::ImagePullFailure(image.to_string()),
            ["compaction"] => Fault::Compaction,
            ["watch-disconnect", node] => Fault::WatchDisconnect(node.to_string()),
            ["heal"] => Fault::Heal,
            _ => return Err(format!("fault: unknown fault {:?} ({FAULT_USAGE})", text.trim())),
        };
        Ok(fault)
    }

    /// The node a fault targets, if it targets one.
    pub fn node(&self) -> Option<&str> {
        match self {
            Fault::NodeDown(n)
            | Fault::NodeUp(n)
            | Fault::NetworkPartition(n)
            | Fault::KubeletRestart(n)
            | Fault::KubeProxyStop(n)
            | Fault::KubeProxyStart(n)
            | Fault::WatchDisconnect(n) => Some(n),
            Fault::PacketLoss { node, .. } | Fault::Latency { node, .. } => Some(node),
            _ => None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::NodeDown(n) => write!(f, "node-down {n}"),
            Fault::NodeUp(n) => write!(f, "node-up {n}"),
            Fault::NetworkPartition(n) => write!(f, "network-partition {n}"),
            Fault::KubeletRestart(n) => write!(f, "kubelet-restart {n}"),
            Fault::ContainerCrash { pod, container: None } => write!(f, "container-crash {pod}"),
            Fault::ContainerCrash { pod, container: Some(c) } => write!(f, "container-crash {pod} {c}"),
            Fault::Partition { from, to, one_way: false } => write!(f, "partition {from} {to}"),
            Fault::Partition { from, to, one_way: true } => write!(f, "partition {from} {to} --one-way"),
            Fault::PacketLoss { node, percent } => write!(f, "packet-loss {node} {percent}%"),
            Fault::Latency { node, ms } => write!(f, "latency {node} {ms}ms"),
            Fault::DnsOutage => write!(f, "dns-outage"),
            Fault::KubeProxyStop(n) => write!(f, "kube-proxy-stop {n}"),
            Fault::KubeProxyStart(n) => write!(f, "kube-proxy-start {n}"),
            Fault::ImagePullFailure(image) => write!(f, "image-pull-failure {image}"),
            Fault::Compaction => write!(f, "compaction"),
            Fault::WatchDisconnect(n) => write!(f, "watch-disconnect {n}"),
            Fault::Heal => write!(f, "heal"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_round_trip_through_their_text() {
        for text in [
            "node-down node-1",
            "node-up node-2",
            "network-partition n",
            "kubelet-restart n",
            "container-crash web",
            "container-crash ns/web c",
            "partition node-1 node-2",
            "partition zone=a zone=b --one-way",
            "packet-loss node-1 30%",
            "latency node-2 200ms",
            "dns-outage",
            "kube-proxy-stop node-1",
            "kube-proxy-start node-1",
            "image-pull-failure nginx:1.26",
            "compaction",
            "watch-disconnect node-2",
            "heal",
        ] {
            assert_eq!(Fault::parse(text).unwrap().to_string(), text);
        }
        assert!(Fault::parse("node-down").unwrap_err().contains("unknown fault"));
        assert!(Fault::parse("melt node-1").is_err());
        assert!(Fault::parse("packet-loss node-1 140%").unwrap_err().contains("0-100%"));
        assert!(Fault::parse("latency node-1 soon").is_err());
    }
}
