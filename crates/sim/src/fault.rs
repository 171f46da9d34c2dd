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
    /// Every node powered and connected again.
    Heal,
}

/// The usage line of `fault`.
pub const FAULT_USAGE: &str = "node-down NODE, node-up NODE, network-partition NODE, kubelet-restart NODE, container-crash POD [CONTAINER], heal";

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
            ["heal"] => Fault::Heal,
            _ => return Err(format!("fault: unknown fault {:?} ({FAULT_USAGE})", text.trim())),
        };
        Ok(fault)
    }

    /// The node a fault targets, if it targets one.
    pub fn node(&self) -> Option<&str> {
        match self {
            Fault::NodeDown(n) | Fault::NodeUp(n) | Fault::NetworkPartition(n) | Fault::KubeletRestart(n) => Some(n),
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
            Fault::Heal => write!(f, "heal"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_round_trip_through_their_text() {
        for text in
            ["node-down node-1", "node-up node-2", "network-partition n", "kubelet-restart n", "container-crash web", "container-crash ns/web c", "heal"]
        {
            assert_eq!(Fault::parse(text).unwrap().to_string(), text);
        }
        assert!(Fault::parse("node-down").unwrap_err().contains("unknown fault"));
        assert!(Fault::parse("melt node-1").is_err());
    }
}
