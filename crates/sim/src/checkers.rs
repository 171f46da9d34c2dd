//! Invariant checkers every world runs (the runtime calls them after each commit; a broken
//! invariant is recorded as a `Violation`, never a panic). They live apart from the code they
//! check and only read commits.
//!
//! - [`PodIpsUnique`]: no two live pods share an IP (the Service networking issue's "Pod IPs are
//!   unique among live pods at every moment").
//! - [`BindingIsPermanent`]: a pod's node never changes once it is bound.
//! - [`VolumeBoundOnce`]: a PersistentVolume is bound to at most one claim.
//! - [`ClaimCapacityWithinVolume`]: a bound claim never records more capacity than its volume
//!   has (expansion grows the PV first, the claim's `status.capacity` after).
//! - [`SingleNodeVolumePublishedOnce`]: a ReadWriteOnce CSI volume is published on at most one
//!   node (a ReadWriteOncePod one for at most one pod).
//! - [`ContainersStartAfterPublish`]: no container starts before every CSI volume of its pod is
//!   published on its node.
//!
//! - [`NodeAllocatableRespected`]: no node's pods exceed its allocatable (cpu, memory, pods).
//! - [`ResourceVersionsIncrease`]: revisions strictly increase across commits.
//! - [`WatchesComplete`]: every watcher sees every event of its selection in order, or relists.
//! - [`DeploymentRolloutBounds`]: `replicas + maxSurge` and `replicas − maxUnavailable` during
//!   rolling updates (where they apply: see the type).
//! - [`StatefulSetOrdering`]: OrderedReady creation and highest-ordinal-first scale-down.
//! - [`EvictionsRespectBudgets`]: the eviction subresource never takes a disruption a
//!   PodDisruptionBudget does not allow.
//! - [`EndpointSlicesMatchSelectors`]: controller-managed EndpointSlices list only pods their
//!   Service selects.
//! - [`NoDanglingOwners`]: at the end of a run, no dependent names a controller owner that is
//!   gone ([`Checker::finish`]).
//!
//! `SingleNodeVolumePublishedOnce` and `ContainersStartAfterPublish` read hosts (the node
//! plugins' mount table, the container runtime) as well. A checker that judges a controller's
//! write by the state it could see allows the informer lag of [`STALE_VIEW_MS`].

mod capacity;
mod endpoints;
mod store;
mod workloads;

pub use capacity::NodeAllocatableRespected;
pub use endpoints::EndpointSlicesMatchSelectors;
pub use store::{ResourceVersionsIncrease, WatchesComplete, DELIVERY_DEADLINE_MS};
pub use workloads::{dangling_owners, DeploymentRolloutBounds, EvictionsRespectBudgets, NoDanglingOwners, StatefulSetOrdering, STALE_VIEW_MS};

use kubesim_api::hash::FixedState;
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kubesim_api::object::Object;
use kubesim_apiserver::ApiServer;
use kubesim_host::Host;
use kubesim_runtime::Checker;
use kubesim_store::{Commit, EventType};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// No two live (not terminal, not deleted, not hostNetwork) pods have the same `status.podIP`.
/// (Hashed maps: only looked up, never iterated; every pod commit asks them.)
#[derive(Clone, Debug, Default)]
pub struct PodIpsUnique {
    /// IP → (pod uid, namespace/name).
    holders: HashMap<String, (String, String), FixedState>,
    /// Pod uid → its live IP.
    by_pod: HashMap<String, String, FixedState>,
}

impl Checker for PodIpsUnique {
    fn name(&self) -> &str {
        "pod-ips-unique"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let Some(pod) = commit.object.as_pod() else { return Ok(()) };
        let status = pod.status.as_ref();
        let terminal = matches!(status.and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"));
        let host_network = pod.spec.as_ref().and_then(|s| s.host_network) == Some(true);
        let live_ip =
            status.and_then(|s| s.pod_ip.as_deref()).filter(|ip| !ip.is_empty() && !terminal && !host_network && commit.event_type != EventType::Deleted);
        if self.by_pod.get(pod.metadata.uid.as_deref().unwrap_or_default()).map(String::as_str) == live_ip {
            return Ok(());
        }
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let live_ip = live_ip.map(str::to_string);
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
    /// Pod uid → its node (hashed: only looked up, never iterated).
    nodes: HashMap<String, String, FixedState>,
}

impl Checker for BindingIsPermanent {
    fn name(&self) -> &str {
        "binding-is-permanent"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let Some(pod) = commit.object.as_pod() else { return Ok(()) };
        let uid = pod.metadata.uid.as_deref().unwrap_or_default();
        if commit.event_type == EventType::Deleted {
            self.nodes.remove(uid);
            return Ok(());
        }
        let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty()) else { return Ok(()) };
        match self.nodes.get(uid) {
            Some(old) if *old != node => Err(format!(
                "pod {}/{} moved from node {old} to {node}",
                pod.metadata.namespace.as_deref().unwrap_or(""),
                pod.metadata.name.as_deref().unwrap_or("")
            )),
            Some(_) => Ok(()),
            None => {
                self.nodes.insert(uid.to_string(), node.to_string());
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

/// A bound claim's `status.capacity.storage` never exceeds its PV's `spec.capacity.storage`:
/// the external-resizer grows the volume before anyone records the new size on the claim
/// (itself, or the kubelet after NodeExpandVolume).
#[derive(Clone, Debug, Default)]
pub struct ClaimCapacityWithinVolume;

impl Checker for ClaimCapacityWithinVolume {
    fn name(&self) -> &str {
        "claim-capacity-within-volume"
    }
    fn check(&mut self, commit: &Commit, api: &ApiServer) -> Result<(), String> {
        if commit.event_type == EventType::Deleted {
            return Ok(());
        }
        let check = |claim: &PersistentVolumeClaim, pv: &PersistentVolume| -> Result<(), String> {
            let bound = claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
                && claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()) == pv.metadata.name.as_deref()
                && pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).is_some_and(|r| r.uid == claim.metadata.uid);
            let (recorded, size) = (kubesim_api::storage::claim_capacity(claim), kubesim_api::storage::volume_capacity(pv));
            if bound && recorded > size {
                return Err(format!(
                    "claim {}/{} records {recorded} bytes but its volume {} has {size}",
                    claim.metadata.namespace.as_deref().unwrap_or(""),
                    claim.metadata.name.as_deref().unwrap_or(""),
                    pv.metadata.name.as_deref().unwrap_or("")
                ));
            }
            Ok(())
        };
        match commit.resource {
            ("", "persistentvolumeclaims") => {
                let Some(claim) = commit.object.decode::<PersistentVolumeClaim>() else { return Ok(()) };
                let Some(name) = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty()) else { return Ok(()) };
                let Some(pv) = api.lookup(("", "persistentvolumes"), "", &name).and_then(|o| o.decode::<PersistentVolume>()) else { return Ok(()) };
                check(&claim, &pv)
            }
            ("", "persistentvolumes") => {
                let Some(pv) = commit.object.decode::<PersistentVolume>() else { return Ok(()) };
                let Some(r) = pv.spec.as_ref().and_then(|s| s.claim_ref.clone()) else { return Ok(()) };
                let (ns, name) = (r.namespace.unwrap_or_default(), r.name.unwrap_or_default());
                let Some(claim) = api.lookup(("", "persistentvolumeclaims"), &ns, &name).and_then(|o| o.decode::<PersistentVolumeClaim>()) else {
                    return Ok(());
                };
                check(&claim, &pv)
            }
            _ => Ok(()),
        }
    }
}

/// The PV of a pod volume target path (`/var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount`).
fn target_pod_and_pv(target: &str) -> Option<(&str, &str)> {
    let rest = target.strip_prefix("/var/lib/kubelet/pods/")?;
    let (pod, rest) = rest.split_once('/')?;
    let pv = rest.strip_prefix("volumes/kubernetes.io~csi/")?.strip_suffix("/mount")?;
    Some((pod, pv))
}

fn access_modes(api: &ApiServer, pv: &str) -> Vec<String> {
    api.store()
        .get(("", "persistentvolumes"), "", pv)
        .and_then(|o| o.decode::<PersistentVolume>())
        .and_then(|p| p.spec)
        .and_then(|s| s.access_modes)
        .unwrap_or_default()
}

/// (driver, volume id) → (its PV, the pod uids it is published for) on one host.
type HostPublications = BTreeMap<(String, String), (String, BTreeSet<String>)>;

/// A CSI volume whose PV offers only ReadWriteOnce (or ReadWriteOncePod) is published on at most
/// one node at a time — a ReadWriteOncePod one for at most one pod. Read from the node plugins'
/// mount tables.
#[derive(Clone, Debug, Default)]
pub struct SingleNodeVolumePublishedOnce {
    /// Host → (driver, volume id) → the pod uids it is published for (and the PV).
    published: BTreeMap<String, HostPublications>,
    reported: BTreeSet<String>,
}

impl Checker for SingleNodeVolumePublishedOnce {
    fn name(&self) -> &str {
        "single-node-volume-published-once"
    }
    fn check(&mut self, _commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        Ok(())
    }
    fn check_host(&mut self, host: &Host, api: &ApiServer) -> Result<(), String> {
        if host.csi.published.is_empty() {
            // Nothing published here: nothing to judge, and nothing for other hosts to meet.
            self.published.remove(&host.name);
            return Ok(());
        }
        let mut mine: HostPublications = BTreeMap::new();
        for (target, p) in &host.csi.published {
            let Some((pod, pv)) = target_pod_and_pv(target) else { continue };
            let entry = mine.entry((p.driver.name().to_string(), p.volume_id.clone())).or_insert_with(|| (pv.to_string(), BTreeSet::new()));
            entry.1.insert(pod.to_string());
        }
        let mut problems = Vec::new();
        for (volume, (pv, pods)) in &mine {
            let modes = access_modes(api, pv);
            let single_node = !modes.is_empty() && modes.iter().all(|m| m == "ReadWriteOnce" || m == "ReadWriteOncePod");
            if !single_node {
                continue;
            }
            for (other, volumes) in &self.published {
                if *other != host.name && volumes.contains_key(volume) {
                    problems.push(format!("{} volume {pv} ({}) is published on nodes {other} and {}", modes.join(","), volume.1, host.name));
                }
            }
            if modes.iter().all(|m| m == "ReadWriteOncePod") && pods.len() > 1 {
                problems.push(format!("ReadWriteOncePod volume {pv} ({}) is published for {} pods on {}", volume.1, pods.len(), host.name));
            }
        }
        self.published.insert(host.name.clone(), mine);
        let fresh: Vec<String> = problems.into_iter().filter(|p| self.reported.insert(p.clone())).collect();
        if fresh.is_empty() {
            Ok(())
        } else {
            Err(fresh.join("; "))
        }
    }
}

/// No container of a pod starts before every CSI volume of the pod is published on its node
/// (the volume manager's WaitForAttachAndMount comes before the sandbox). Checked for each
/// container the first time it is seen started.
#[derive(Clone, Debug, Default)]
pub struct ContainersStartAfterPublish {
    /// Host → its runtime's start count at the last look: the containers started since are
    /// those with a higher start serial.
    seen: BTreeMap<String, u64>,
}

impl Checker for ContainersStartAfterPublish {
    fn name(&self) -> &str {
        "containers-start-after-publish"
    }
    fn check(&mut self, _commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        Ok(())
    }
    fn check_host(&mut self, host: &Host, api: &ApiServer) -> Result<(), String> {
        let starts = host.cri.starts();
        let last = match self.seen.get_mut(&host.name) {
            Some(last) if *last == starts => return Ok(()), // nothing started since the last look
            // A lower count is a new runtime (the machine was replaced): all of it is new.
            Some(last) => Some(std::mem::replace(last, starts)).filter(|&l| l < starts).unwrap_or(0),
            None => {
                self.seen.insert(host.name.clone(), starts);
                0
            }
        };
        let mut problems = Vec::new();
        for container in host.cri.list_containers() {
            if container.start_serial <= last || container.started_at.is_none() {
                continue;
            }
            let Ok(sandbox) = host.cri.pod_sandbox_status(&container.sandbox_id) else { continue };
            let Some(pod) = api.store().get(("", "pods"), &sandbox.pod_namespace, &sandbox.pod_name).and_then(|o| o.as_pod()) else { continue };
            if pod.metadata.uid.as_deref() != Some(sandbox.pod_uid.as_str()) {
                continue;
            }
            for volume in pod.spec.as_ref().and_then(|s| s.volumes.as_ref()).into_iter().flatten() {
                let claim = match (&volume.persistent_volume_claim, &volume.ephemeral) {
                    (Some(c), _) => c.claim_name.clone(),
                    (None, Some(_)) => format!("{}-{}", sandbox.pod_name, volume.name),
                    _ => continue,
                };
                let Some(pv_name) = api
                    .store()
                    .get(("", "persistentvolumeclaims"), &sandbox.pod_namespace, &claim)
                    .and_then(|o| o.decode::<PersistentVolumeClaim>())
                    .and_then(|c| c.spec)
                    .and_then(|s| s.volume_name)
                else {
                    continue;
                };
                let is_csi = api
                    .store()
                    .get(("", "persistentvolumes"), "", &pv_name)
                    .and_then(|o| o.decode::<PersistentVolume>())
                    .is_some_and(|pv| kubesim_api::csi::pv_csi_source(&pv).is_some());
                if is_csi && !host.csi.published.contains_key(&kubesim_api::csi::pod_volume_path(&sandbox.pod_uid, &pv_name)) {
                    problems.push(format!(
                        "container {} of pod {}/{} started on {} before its CSI volume {pv_name} ({}) was published",
                        container.spec.name, sandbox.pod_namespace, sandbox.pod_name, host.name, volume.name
                    ));
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// `namespace/name` (or `name` for cluster-scoped objects).
fn key(object: &Object) -> String {
    match object.namespace() {
        "" => object.name().to_string(),
        ns => format!("{ns}/{}", object.name()),
    }
}

/// The object's controller reference (`ownerReferences[].controller: true`).
fn controller_ref(object: &Object) -> Option<&OwnerReference> {
    object.metadata().owner_references.as_ref()?.iter().find(|r| r.controller == Some(true))
}

/// Every checker a world runs.
pub fn all() -> Vec<Box<dyn Checker>> {
    vec![
        Box::new(PodIpsUnique::default()),
        Box::new(BindingIsPermanent::default()),
        Box::new(VolumeBoundOnce::default()),
        Box::new(ClaimCapacityWithinVolume),
        Box::new(SingleNodeVolumePublishedOnce::default()),
        Box::new(ContainersStartAfterPublish::default()),
        Box::new(NodeAllocatableRespected::default()),
        Box::new(ResourceVersionsIncrease::default()),
        Box::new(WatchesComplete::default()),
        Box::new(DeploymentRolloutBounds::default()),
        Box::new(StatefulSetOrdering::default()),
        Box::new(EvictionsRespectBudgets::default()),
        Box::new(EndpointSlicesMatchSelectors::default()),
        Box::new(NoDanglingOwners),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn object(yaml: &str) -> Object {
        let (docs, errors) = kubesim_api::decode::parse_documents("t.yaml", yaml);
        assert!(errors.is_empty(), "{errors:?}");
        kubesim_api::decode::decode_document("t.yaml", &docs[0]).expect("decodes").remove(0)
    }

    // A claim that records more than its volume has is a violation; equal sizes are not.
    #[test]
    fn a_claim_never_records_more_than_its_volume() {
        let mut api = ApiServer::new();
        let actor: Arc<str> = Arc::from("test");
        let pv = object("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1}\nspec:\n  capacity: {storage: 2Gi}\n  accessModes: [ReadWriteOnce]\n  claimRef: {namespace: default, name: c, uid: u-1}\n  hostPath: {path: /tmp/x}\n");
        api.store_mut().create(("", "persistentvolumes"), pv, &actor, 0).unwrap();
        let claim = |capacity: &str| {
            Arc::new(object(&format!(
                "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: c, namespace: default, uid: u-1}}\nspec:\n  accessModes: [ReadWriteOnce]\n  volumeName: pv-1\n  resources: {{requests: {{storage: 4Gi}}}}\nstatus:\n  phase: Bound\n  capacity: {{storage: {capacity}}}\n"
            )))
        };
        let commit = |object: Arc<Object>| Commit {
            revision: 2,
            t_ms: 0,
            event_type: EventType::Modified,
            resource: ("", "persistentvolumeclaims"),
            object,
            previous: None,
            actor: actor.clone(),
        };
        let mut checker = ClaimCapacityWithinVolume;
        assert!(checker.check(&commit(claim("2Gi")), &api).is_ok());
        let err = checker.check(&commit(claim("4Gi")), &api).unwrap_err();
        assert_eq!(err, "claim default/c records 4294967296 bytes but its volume pv-1 has 2147483648");
    }
}
