//! VolumeRestrictions (PreFilter, Filter, PreFilterExtensions) — `plugins/volumerestrictions`
//! (release-1.34): the in-tree disk conflicts (the same GCE PD, AWS EBS volume, RBD image or
//! iSCSI IQN used read-write by two pods on one node) and ReadWriteOncePod: a pod whose claim
//! has the ReadWriteOncePod access mode cannot be scheduled while any scheduled pod uses that
//! claim (cluster-wide, counted in PreFilter; preemption's AddPod/RemovePod adjust the count, so
//! evicting the user makes room).
//!
//! Deviation: the PVC-added queueing hint cannot see the claim (kubesim's hints get the pod an
//! event involves, not a claim) and always queues.

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, CycleState, Plugin, Point, Status};
use k8s_openapi::api::core::v1::{Pod, Volume};
use std::collections::BTreeSet;

/// ErrReasonDiskConflict.
pub const ERR_REASON_DISK_CONFLICT: &str = "node(s) had no available disk";
/// ErrReasonReadWriteOncePodConflict.
pub const ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: &str = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

/// preFilterStateKey.
const KEY: &str = "PreFilterVolumeRestrictions";

/// The plugin.
#[derive(Clone, Debug, Default)]
pub struct VolumeRestrictions;

/// `preFilterState`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreFilterState {
    /// Names of the pod's claims with the ReadWriteOncePod access mode.
    pub read_write_once_pod_pvcs: BTreeSet<String>,
    /// How many references scheduled pods hold to those claims.
    pub conflicting_pvc_ref_count: i64,
}

impl PreFilterState {
    /// `conflictingPVCRefCountForPod` (by claim name, as upstream counts).
    fn conflicting_for_pod(&self, pod: &PodInfo) -> i64 {
        volumes(pod.pod()).iter().filter_map(|v| v.persistent_volume_claim.as_ref()).filter(|c| self.read_write_once_pod_pvcs.contains(&c.claim_name)).count()
            as i64
    }
    /// `updateWithPod`.
    fn update_with_pod(&mut self, pod: &PodInfo, multiplier: i64) {
        self.conflicting_pvc_ref_count += multiplier * self.conflicting_for_pod(pod);
    }
}

fn volumes(pod: &Pod) -> &[Volume] {
    pod.spec.as_ref().and_then(|s| s.volumes.as_deref()).unwrap_or(&[])
}

/// `isVolumeConflict`: the volume conflicts with one of `pod`'s.
fn is_volume_conflict(volume: &Volume, pod: &Pod) -> bool {
    volumes(pod).iter().any(|existing| {
        if let (Some(disk), Some(other)) = (&volume.gce_persistent_disk, &existing.gce_persistent_disk) {
            // The same GCE disk conflicts unless every pod mounts it read-only.
            if disk.pd_name == other.pd_name && !(disk.read_only == Some(true) && other.read_only == Some(true)) {
                return true;
            }
        }
        if let (Some(a), Some(b)) = (&volume.aws_elastic_block_store, &existing.aws_elastic_block_store) {
            if a.volume_id == b.volume_id {
                return true;
            }
        }
        if let (Some(a), Some(b)) = (&volume.iscsi, &existing.iscsi) {
            // The same IQN: only one read-write mount.
            if a.iqn == b.iqn && !(a.read_only == Some(true) && b.read_only == Some(true)) {
                return true;
            }
        }
        if let (Some(a), Some(b)) = (&volume.rbd, &existing.rbd) {
            // The same image: a shared monitor, the same pool and image name.
            let pool = |p: &Option<String>| p.clone().unwrap_or_default();
            if have_overlap(&a.monitors, &b.monitors)
                && pool(&a.pool) == pool(&b.pool)
                && a.image == b.image
                && !(a.read_only == Some(true) && b.read_only == Some(true))
            {
                return true;
            }
        }
        false
    })
}

/// `haveOverlap`.
fn have_overlap(a: &[String], b: &[String]) -> bool {
    a.iter().any(|x| b.contains(x))
}

/// `needsRestrictionsCheck`: the in-tree disk types.
fn needs_restrictions_check(v: &Volume) -> bool {
    v.gce_persistent_disk.is_some() || v.aws_elastic_block_store.is_some() || v.rbd.is_some() || v.iscsi.is_some()
}

/// `satisfyVolumeConflicts`: no disk volume of the pod conflicts with a pod on the node.
fn satisfy_volume_conflicts<'a>(pod: &Pod, node_pods: impl Iterator<Item = &'a Pod> + Clone) -> bool {
    volumes(pod).iter().filter(|v| needs_restrictions_check(v)).all(|v| node_pods.clone().all(|existing| !is_volume_conflict(v, existing)))
}

impl Plugin for VolumeRestrictions {
    fn name(&self) -> &'static str {
        "VolumeRestrictions"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreFilter, Point::Filter]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[ClusterEvent::AssignedPodDelete, ClusterEvent::NodeAdd, ClusterEvent::PvcChange]
    }
    fn queueing_hint(&self, rejected: &PodInfo, event: ClusterEvent, involved: Option<&PodInfo>) -> bool {
        // isSchedulableAfterPodDeleted: a deleted pod in the namespace that held a conflicting
        // disk or one of the pod's claims.
        let (ClusterEvent::AssignedPodDelete, Some(deleted)) = (event, involved) else { return true };
        if deleted.namespace() != rejected.namespace() {
            return false;
        }
        if !satisfy_volume_conflicts(rejected.pod(), std::iter::once(deleted.pod())) {
            return true;
        }
        let claims: BTreeSet<&str> = volumes(rejected.pod()).iter().filter_map(|v| v.persistent_volume_claim.as_ref()).map(|c| c.claim_name.as_str()).collect();
        volumes(deleted.pod()).iter().filter_map(|v| v.persistent_volume_claim.as_ref()).any(|c| claims.contains(c.claim_name.as_str()))
    }
    fn pre_filter(&self, state: &mut CycleState, pod: &PodInfo, view: &ClusterView) -> (Status, Option<BTreeSet<String>>) {
        let needs_check = volumes(pod.pod()).iter().any(needs_restrictions_check);
        // readWriteOncePodPVCsForPod: every claim must exist.
        let ns = pod.namespace().to_string();
        let mut pvcs = BTreeSet::new();
        for claim in volumes(pod.pod()).iter().filter_map(|v| v.persistent_volume_claim.as_ref()) {
            let Some(pvc) = view.listers.pvcs.get(&(ns.clone(), claim.claim_name.clone())) else {
                return (Status::unresolvable(format!("persistentvolumeclaim {:?} not found", claim.claim_name)), None);
            };
            if pvc.spec.as_ref().and_then(|s| s.access_modes.as_ref()).is_some_and(|m| m.iter().any(|m| m == "ReadWriteOncePod")) {
                pvcs.insert(pvc.metadata.name.clone().unwrap_or_default());
            }
        }
        // calPreFilterState: IsPVCUsedByPods over the snapshot's (scheduled and assumed) pods.
        let mut count = 0;
        if !pvcs.is_empty() {
            let used: BTreeSet<(&str, &str)> = view
                .nodes()
                .iter()
                .flat_map(|n| n.pods.iter())
                .flat_map(|p| volumes(p.pod()).iter().filter_map(|v| v.persistent_volume_claim.as_ref()).map(move |c| (p.namespace(), c.claim_name.as_str())))
                .collect();
            count = pvcs.iter().filter(|name| used.contains(&(ns.as_str(), name.as_str()))).count() as i64;
        }
        if !needs_check && count == 0 {
            return (Status::skip(), None);
        }
        state.write(KEY, PreFilterState { read_write_once_pod_pvcs: pvcs, conflicting_pvc_ref_count: count });
        (Status::success(), None)
    }
    fn pre_filter_add_pod(&self, state: &mut CycleState, _pod: &PodInfo, added: &PodInfo, _node: &NodeInfo) {
        if let Some(s) = state.read_mut::<PreFilterState>(KEY) {
            s.update_with_pod(added, 1);
        }
    }
    fn pre_filter_remove_pod(&self, state: &mut CycleState, _pod: &PodInfo, removed: &PodInfo, _node: &NodeInfo) {
        if let Some(s) = state.read_mut::<PreFilterState>(KEY) {
            s.update_with_pod(removed, -1);
        }
    }
    fn filter(&self, state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        if !satisfy_volume_conflicts(pod.pod(), node.pods.iter().map(|p| p.pod())) {
            return Status::unschedulable(ERR_REASON_DISK_CONFLICT);
        }
        let Some(s) = state.read::<PreFilterState>(KEY) else {
            return Status::new(crate::framework::Code::Error, format!("cannot read {KEY:?} from cycleState"));
        };
        if s.conflicting_pvc_ref_count > 0 {
            return Status::unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT);
        }
        Status::success()
    }
}

// Mirrors pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions_test.go.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::framework::{Code, Listers};
    use k8s_openapi::api::core::v1::{
        AWSElasticBlockStoreVolumeSource, GCEPersistentDiskVolumeSource, ISCSIVolumeSource, Node, PersistentVolumeClaim, PersistentVolumeClaimSpec,
        PersistentVolumeClaimVolumeSource, PodSpec, RBDVolumeSource,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kubesim_api::Object;
    use std::sync::Arc;

    fn pod(name: &str, volumes: Vec<Volume>) -> Pod {
        Pod {
            metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
            spec: Some(PodSpec { volumes: Some(volumes), ..Default::default() }),
            status: None,
        }
    }
    fn pvc_volume(claim: &str) -> Volume {
        Volume {
            name: claim.into(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource { claim_name: claim.into(), read_only: None }),
            ..Default::default()
        }
    }
    fn info(p: Pod) -> Arc<PodInfo> {
        Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(p)))))
    }
    fn cache(pods: Vec<Pod>) -> Cache {
        let mut c = Cache::default();
        let node = Node { metadata: ObjectMeta { name: Some("node-1".into()), ..Default::default() }, ..Default::default() };
        c.upsert_node(Arc::new(Object::Node(Box::new(node))));
        for p in pods {
            c.upsert_pod(info(p), "node-1");
        }
        c
    }
    fn pvc(name: &str, mode: &str) -> PersistentVolumeClaim {
        PersistentVolumeClaim {
            metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
            spec: Some(PersistentVolumeClaimSpec { access_modes: Some(vec![mode.into()]), ..Default::default() }),
            status: None,
        }
    }

    /// PreFilter, then (if it succeeded) Filter on the node holding `node_pods`.
    fn run(p: Pod, node_pods: Vec<Pod>, pvcs: Vec<PersistentVolumeClaim>) -> (Status, Option<Status>) {
        let c = cache(node_pods);
        let listers = Listers {
            pvcs: pvcs.into_iter().map(|c| (("default".to_string(), c.metadata.name.clone().unwrap()), Arc::new(c))).collect(),
            ..Default::default()
        };
        let view = ClusterView { cache: &c, listers: &listers };
        let mut state = CycleState::default();
        let pod = info(p);
        let (pre, _) = VolumeRestrictions.pre_filter(&mut state, &pod, &view);
        let filter = pre.is_success().then(|| VolumeRestrictions.filter(&state, &pod, &c.nodes()[0]));
        (pre, filter)
    }

    /// The four disk tables (TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts,
    /// TestISCSIDiskConflicts) share their rows: nothing, one state, same state, different state.
    /// (name, pod, the node's pods, PreFilter code, Filter code).
    type DiskRow = (&'static str, Pod, Vec<Pod>, Code, Option<Code>);

    fn disk_table(table: &str, vol: Volume, vol2: Volume) {
        let rows: Vec<DiskRow> = vec![
            ("nothing", pod("p", vec![]), vec![], Code::Skip, None),
            ("one state", pod("p", vec![]), vec![pod("e", vec![vol.clone()])], Code::Skip, None),
            ("same state", pod("p", vec![vol.clone()]), vec![pod("e", vec![vol.clone()])], Code::Success, Some(Code::Unschedulable)),
            ("different state", pod("p", vec![vol2.clone()]), vec![pod("e", vec![vol.clone()])], Code::Success, Some(Code::Success)),
        ];
        for (name, p, existing, want_pre, want_filter) in rows {
            let (pre, filter) = run(p, existing, vec![]);
            assert_eq!(pre.code, want_pre, "{table} {name}: PreFilter");
            assert_eq!(filter.as_ref().map(|f| f.code), want_filter, "{table} {name}: Filter");
            if want_filter == Some(Code::Unschedulable) {
                assert_eq!(filter.unwrap().reasons, vec![ERR_REASON_DISK_CONFLICT.to_string()], "{table} {name}");
            }
        }
    }

    #[test]
    fn gce_disk_conflicts() {
        let gce = |name: &str| Volume {
            gce_persistent_disk: Some(GCEPersistentDiskVolumeSource { pd_name: name.into(), ..Default::default() }),
            ..Default::default()
        };
        disk_table("TestGCEDiskConflicts", gce("foo"), gce("bar"));
        // "pod with a volume that doesn't have restrictions".
        let (pre, _) = run(pod("p", vec![Volume { name: "volume with no restriction".into(), ..Default::default() }]), vec![], vec![]);
        assert_eq!(pre.code, Code::Skip);
        // Read-only on both sides is no conflict.
        let ro = Volume {
            gce_persistent_disk: Some(GCEPersistentDiskVolumeSource { pd_name: "foo".into(), read_only: Some(true), ..Default::default() }),
            ..Default::default()
        };
        assert_eq!(run(pod("p", vec![ro.clone()]), vec![pod("e", vec![ro])], vec![]).1.unwrap().code, Code::Success);
    }

    #[test]
    fn aws_disk_conflicts() {
        let ebs = |id: &str| Volume {
            aws_elastic_block_store: Some(AWSElasticBlockStoreVolumeSource { volume_id: id.into(), ..Default::default() }),
            ..Default::default()
        };
        disk_table("TestAWSDiskConflicts", ebs("foo"), ebs("bar"));
    }

    #[test]
    fn rbd_disk_conflicts() {
        let rbd = |mons: &[&str]| Volume {
            rbd: Some(RBDVolumeSource {
                monitors: mons.iter().map(|m| m.to_string()).collect(),
                pool: Some("foo".into()),
                image: "bar".into(),
                fs_type: Some("ext4".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        disk_table("TestRBDDiskConflicts", rbd(&["a", "b"]), rbd(&["c", "d"]));
    }

    #[test]
    fn iscsi_disk_conflicts() {
        let iscsi = |iqn: &str| Volume {
            iscsi: Some(ISCSIVolumeSource {
                target_portal: "127.0.0.1:3260".into(),
                iqn: iqn.into(),
                fs_type: Some("ext4".into()),
                lun: 0,
                ..Default::default()
            }),
            ..Default::default()
        };
        disk_table("TestISCSIDiskConflicts", iscsi("iqn.2016-12.server:storage.target01"), iscsi("iqn.2017-12.server:storage.target01"));
    }

    #[test]
    fn access_mode_conflicts() {
        let with_one_pvc = || pod("pod-with-one-pvc", vec![pvc_volume("claim-with-rwop-1")]);
        let with_two_pvcs = || pod("pod-with-two-pvcs", vec![pvc_volume("claim-with-rwop-1"), pvc_volume("claim-with-rwop-2")]);
        let one_conflict = || pod("pod-with-one-conflict", vec![pvc_volume("claim-with-rwop-1")]);
        let two_conflicts = || pod("pod-with-two-conflicts", vec![pvc_volume("claim-with-rwop-1"), pvc_volume("claim-with-rwop-2")]);
        let rwx = || pod("pod-with-rwx", vec![pvc_volume("claim-with-rwx")]);
        let (rwop1, rwop2, rwx_pvc) =
            (pvc("claim-with-rwop-1", "ReadWriteOncePod"), pvc("claim-with-rwop-2", "ReadWriteOncePod"), pvc("claim-with-rwx", "ReadWriteMany"));

        // "nothing".
        assert_eq!(run(pod("p", vec![]), vec![], vec![]).0.code, Code::Skip);
        // "failed to get PVC".
        let (pre, _) = run(with_one_pvc(), vec![], vec![]);
        assert_eq!((pre.code, pre.reasons), (Code::UnschedulableAndUnresolvable, vec!["persistentvolumeclaim \"claim-with-rwop-1\" not found".to_string()]));
        // "no access mode conflict".
        let (pre, _) = run(with_one_pvc(), vec![rwx()], vec![rwop1.clone(), rwx_pvc.clone()]);
        assert_eq!(pre.code, Code::Skip);
        // "access mode conflict, unschedulable".
        let (pre, filter) = run(one_conflict(), vec![with_one_pvc(), rwx()], vec![rwop1.clone(), rwx_pvc.clone()]);
        assert_eq!(pre.code, Code::Success);
        let filter = filter.unwrap();
        assert_eq!((filter.code, filter.reasons), (Code::Unschedulable, vec![ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT.to_string()]));
        // "two conflicts, unschedulable".
        let (pre, filter) = run(two_conflicts(), vec![with_two_pvcs(), rwx()], vec![rwop1, rwop2, rwx_pvc]);
        assert_eq!(pre.code, Code::Success);
        assert_eq!(filter.unwrap().code, Code::Unschedulable);
    }

    // PreFilterExtensions: removing the pod that uses the claim (a preemption victim) makes the
    // pod fit; adding it back conflicts again.
    #[test]
    fn add_pod_and_remove_pod_adjust_the_conflict_count() {
        let user = pod("user", vec![pvc_volume("claim-with-rwop-1")]);
        let c = cache(vec![user.clone()]);
        let listers = Listers {
            pvcs: [(("default".to_string(), "claim-with-rwop-1".to_string()), Arc::new(pvc("claim-with-rwop-1", "ReadWriteOncePod")))].into(),
            ..Default::default()
        };
        let view = ClusterView { cache: &c, listers: &listers };
        let mut state = CycleState::default();
        let incoming = info(pod("incoming", vec![pvc_volume("claim-with-rwop-1")]));
        assert!(VolumeRestrictions.pre_filter(&mut state, &incoming, &view).0.is_success());
        let node = &c.nodes()[0];
        assert_eq!(VolumeRestrictions.filter(&state, &incoming, node).code, Code::Unschedulable);
        VolumeRestrictions.pre_filter_remove_pod(&mut state, &incoming, &info(user.clone()), node);
        assert_eq!(state.read::<PreFilterState>(KEY).unwrap().conflicting_pvc_ref_count, 0);
        assert!(VolumeRestrictions.filter(&state, &incoming, node).is_success());
        VolumeRestrictions.pre_filter_add_pod(&mut state, &incoming, &info(user), node);
        assert_eq!(VolumeRestrictions.filter(&state, &incoming, node).code, Code::Unschedulable);
    }

    // isSchedulableAfterPodDeleted.
    #[test]
    fn pod_deletion_requeues_only_pods_it_blocked() {
        let rejected = info(pod("p", vec![pvc_volume("claim")]));
        let same_claim = info(pod("old", vec![pvc_volume("claim")]));
        let other = info(pod("other", vec![pvc_volume("unrelated")]));
        let mut elsewhere = pod("old", vec![pvc_volume("claim")]);
        elsewhere.metadata.namespace = Some("other".into());
        assert!(VolumeRestrictions.queueing_hint(&rejected, ClusterEvent::AssignedPodDelete, Some(&same_claim)));
        assert!(!VolumeRestrictions.queueing_hint(&rejected, ClusterEvent::AssignedPodDelete, Some(&other)));
        assert!(!VolumeRestrictions.queueing_hint(&rejected, ClusterEvent::AssignedPodDelete, Some(&info(elsewhere))));
    }
}
