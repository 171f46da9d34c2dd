//! Invariant checkers every world runs (the runtime calls them after each commit; a broken
//! invariant is recorded as a `Violation`, never a panic). They live apart from the code they
//! check and only read commits.
//!
//! - [`PodIpsUnique`]: no two live pods share an IP (the Service networking issue's "Pod IPs are
//!   unique among live pods at every moment").

use kubesim_apiserver::ApiServer;
use kubesim_runtime::Checker;
use kubesim_store::{Commit, EventType};
use std::collections::BTreeMap;

/// No two live (not terminal, not deleted, not hostNetwork) pods have the same `status.podIP`.
#[derive(Clone, Debug, Default)]
pub struct PodIpsUnique {
    /// IP → (pod uid, namespace/name).
    holders: BTreeMap<String, (String, String)>,
    /// Pod uid → its live IP.
    by_pod: BTreeMap<String, String>,
}

impl Checker for PodIpsUnique {
    fn name(&self) -> &str {
        "pod-ips-unique"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let Some(pod) = commit.object.as_pod() else { return Ok(()) };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let status = pod.status.as_ref();
        let terminal = matches!(status.and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"));
        let host_network = pod.spec.as_ref().and_then(|s| s.host_network) == Some(true);
        let live_ip =
            status.and_then(|s| s.pod_ip.clone()).filter(|ip| !ip.is_empty() && !terminal && !host_network && commit.event_type != EventType::Deleted);
        if self.by_pod.get(&uid) == live_ip.as_ref() {
            return Ok(());
        }
        if let Some(old) = self.by_pod.remove(&uid) {
            if self.holders.get(&old).is_some_and(|(holder, _)| *holder == uid) {
                self.holders.remove(&old);
            }
        }
        let Some(ip) = live_ip else { return Ok(()) };
        let name = format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or(""), pod.metadata.name.as_deref().unwrap_or(""));
        self.by_pod.insert(uid.clone(), ip.clone());
        if let Some((_, other)) = self.holders.get(&ip) {
            return Err(format!("pods {other} and {name} are both live with IP {ip}"));
        }
        self.holders.insert(ip, (uid, name));
        Ok(())
    }
}
