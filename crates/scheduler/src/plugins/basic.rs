//! The small default plugins: SchedulingGates, PrioritySort, NodeUnschedulable, NodeName,
//! NodeVolumeLimits and VolumeZone (which pass: kubesim models no attach limits or zonal
//! in-tree volumes) and DefaultBinder. VolumeRestrictions and VolumeBinding have their own
//! modules.

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, CycleState, Plugin, Point, Status};
use std::collections::BTreeSet;

/// SchedulingGates (PreEnqueue): pods with spec.schedulingGates wait outside activeQ.
#[derive(Clone, Debug, Default)]
pub struct SchedulingGates;
impl Plugin for SchedulingGates {
    fn name(&self) -> &'static str {
        "SchedulingGates"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreEnqueue]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[ClusterEvent::UnscheduledPodUpdate]
    }
    fn pre_enqueue(&self, pod: &PodInfo) -> Status {
        let gates: Vec<String> = pod.pod().spec.as_ref().and_then(|s| s.scheduling_gates.as_ref()).into_iter().flatten().map(|g| g.name.clone()).collect();
        if gates.is_empty() {
            Status::success()
        } else {
            Status::new(crate::framework::Code::Pending, format!("waiting for scheduling gates: [{}]", gates.join(" ")))
        }
    }
}

/// PrioritySort (QueueSort): higher priority first, then earlier queue timestamp. The queue
/// implements the ordering; this plugin only holds its place in the profile.
#[derive(Clone, Debug, Default)]
pub struct PrioritySort;
impl Plugin for PrioritySort {
    fn name(&self) -> &'static str {
        "PrioritySort"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::QueueSort]
    }
}

/// NodeUnschedulable (Filter): nodes with spec.unschedulable reject pods that do not tolerate
/// `node.kubernetes.io/unschedulable:NoSchedule`.
#[derive(Clone, Debug, Default)]
pub struct NodeUnschedulable;
/// The NodeUnschedulable reason.
pub const ERR_NODE_UNSCHEDULABLE: &str = "node(s) were unschedulable";
impl Plugin for NodeUnschedulable {
    fn name(&self) -> &'static str {
        "NodeUnschedulable"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::Filter]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[ClusterEvent::NodeAdd, ClusterEvent::NodeSchedulable, ClusterEvent::NodeTaint]
    }
    fn filter(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        if !node.unschedulable() {
            return Status::success();
        }
        let tolerated = pod
            .pod()
            .spec
            .as_ref()
            .and_then(|s| s.tolerations.as_ref())
            .into_iter()
            .flatten()
            .any(|t| crate::plugins::taints::tolerates(t, "node.kubernetes.io/unschedulable", None, "NoSchedule"));
        if tolerated {
            Status::success()
        } else {
            Status::unresolvable(ERR_NODE_UNSCHEDULABLE)
        }
    }
}

/// NodeName (Filter): spec.nodeName, if set, must be this node.
#[derive(Clone, Debug, Default)]
pub struct NodeName;
/// The NodeName reason.
pub const ERR_NODE_NAME: &str = "node(s) didn't match the requested node name";
impl Plugin for NodeName {
    fn name(&self) -> &'static str {
        "NodeName"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::Filter]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[ClusterEvent::NodeAdd]
    }
    fn filter(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        match pod.node_name.as_deref() {
            Some(n) if n != node.name => Status::unresolvable(ERR_NODE_NAME),
            _ => Status::success(),
        }
    }
}

/// Whether a pod has volumes backed by PersistentVolumeClaims (or generic ephemeral volumes).
pub fn has_pvc_volumes(pod: &PodInfo) -> bool {
    pod.pod().spec.as_ref().and_then(|s| s.volumes.as_ref()).is_some_and(|vs| vs.iter().any(|v| v.persistent_volume_claim.is_some() || v.ephemeral.is_some()))
}

/// Whether a pod has volumes NodeVolumeLimits counts (PVCs, generic ephemeral, inline CSI).
fn has_limited_volumes(pod: &PodInfo) -> bool {
    has_pvc_volumes(pod) || pod.pod().spec.as_ref().and_then(|s| s.volumes.as_ref()).is_some_and(|vs| vs.iter().any(|v| v.csi.is_some()))
}

macro_rules! volume_plugin {
    ($ty:ident, $name:literal, $doc:literal, [$($point:ident),*], $relevant:path) => {
        #[doc = $doc]
        #[derive(Clone, Debug, Default)]
        pub struct $ty;
        impl Plugin for $ty {
            fn name(&self) -> &'static str {
                $name
            }
            fn points(&self) -> &'static [Point] {
                &[$(Point::$point),*]
            }
            fn pre_filter(&self, _state: &mut CycleState, pod: &PodInfo, _view: &ClusterView) -> (Status, Option<BTreeSet<String>>) {
                if $relevant(pod) {
                    (Status::success(), None)
                } else {
                    (Status::skip(), None)
                }
            }
        }
    };
}

volume_plugin!(
    NodeVolumeLimits,
    "NodeVolumeLimits",
    "NodeVolumeLimits (PreFilter, Filter): skipped for pods without PVC/CSI volumes, otherwise passes (no CSI attach limits are modelled).",
    [PreFilter, Filter],
    has_limited_volumes
);
volume_plugin!(
    VolumeZone,
    "VolumeZone",
    "VolumeZone (PreFilter, Filter): skipped for pods without PVCs, otherwise passes (no zonal PersistentVolumes are modelled).",
    [PreFilter, Filter],
    has_pvc_volumes
);

/// DefaultBinder (Bind): the scheduler posts pods/binding through the API.
#[derive(Clone, Debug, Default)]
pub struct DefaultBinder;
impl Plugin for DefaultBinder {
    fn name(&self) -> &'static str {
        "DefaultBinder"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::Bind]
    }
}
