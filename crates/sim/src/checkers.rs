//! Invariant checkers every world runs (the runtime calls them after each commit; a broken
//! invariant is recorded as a `Violation`, never a panic). They live apart from the code they
//! check and only read commits.
//!
//! - [`PodIpsUnique`]: no two live pods share an IP (the Service networking issue's "Pod IPs are
//!   unique among live pods at every moment").
//! - [`BindingIsPermanent`]: a pod's node never changes once it is bound.
//! - [`VolumeBoundOnce`]: a PersistentVolume is bound to at most one claim.

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

/// A pod's `spec.nodeName`, once set, never changes (binding is permanent; a pod moves only by
/// being replaced).
#[derive(Clone, Debug, Default)]
pub struct BindingIsPermanent {
    /// Pod uid → its node.
    nodes: BTreeMap<String, String>,
}

impl Checker for BindingIsPermanent {
    fn name(&self) -> &str {
        "binding-is-permanent"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let Some(pod) = commit.object.as_pod() else { return Ok(()) };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        if commit.event_type == EventType::Deleted {
            self.nodes.remove(&uid);
            return Ok(());
        }
        let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty()) else { return Ok(()) };
        match self.nodes.get(&uid) {
            Some(old) if *old != node => Err(format!(
                "pod {}/{} moved from node {old} to {node}",
                pod.metadata.namespace.as_deref().unwrap_or(""),
                pod.metadata.name.as_deref().unwrap_or("")
            )),
            Some(_) => Ok(()),
            None => {
                self.nodes.insert(uid, node);
                Ok(())
            }
        }
    }
}

/// A PersistentVolume is bound to at most one claim: no two live PVCs name the same volume.
#[derive(Clone, Debug, Default)]
pub struct VolumeBoundOnce {
    /// Volume name → the claim (namespace/name) bound to it.
    claims: BTreeMap<String, String>,
    /// Claim → its volume.
    by_claim: BTreeMap<String, String>,
}

impl Checker for VolumeBoundOnce {
    fn name(&self) -> &str {
        "volume-bound-once"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        if commit.resource != ("", "persistentvolumeclaims") {
            return Ok(());
        }
        let claim = format!("{}/{}", commit.object.namespace(), commit.object.name());
        let json = commit.object.to_json();
        let volume =
            json.pointer("/spec/volumeName").and_then(|v| v.as_str()).filter(|v| !v.is_empty() && commit.event_type != EventType::Deleted).map(str::to_string);
        if self.by_claim.get(&claim) == volume.as_ref() {
            return Ok(());
        }
        if let Some(old) = self.by_claim.remove(&claim) {
            if self.claims.get(&old) == Some(&claim) {
                self.claims.remove(&old);
            }
        }
        let Some(volume) = volume else { return Ok(()) };
        self.by_claim.insert(claim.clone(), volume.clone());
        if let Some(other) = self.claims.get(&volume) {
            return Err(format!("persistentvolume {volume} is bound to both {other} and {claim}"));
        }
        self.claims.insert(volume, claim);
        Ok(())
    }
}

/// Every checker a world runs.
pub fn all() -> Vec<Box<dyn Checker>> {
    vec![Box::new(PodIpsUnique::default()), Box::new(BindingIsPermanent::default()), Box::new(VolumeBoundOnce::default())]
}
