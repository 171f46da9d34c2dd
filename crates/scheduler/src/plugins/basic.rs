//! The small default plugins: SchedulingGates, PrioritySort, NodeUnschedulable, NodeName,
//! the volume plugins (which pass: kubesim models no volume topology yet) and DefaultBinder.

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, CycleState, Plugin, Point, Status};

/// SchedulingGates (PreEnqueue): pods with spec.schedulingGates wait outside activeQ.
#[derive(Debug, Default)]
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
        let gates: Vec<String> = pod
            .pod()
            .spec
            .as_ref()
            .and_then(|s| s.scheduling_gates.as_ref())
            .into_iter()
            .flatten()
            .map(|g| g.name.clone())
            .collect();
        if gates.is_empty() {
            Status::success()
        } else {
            Status::new(crate::framework::Code::Pending, format!("waiting for scheduling gates: [{}]", gates.join(" ")))
        }
    }
}

/// PrioritySort (QueueSort): higher priority first, then earlier queue timestamp. The queue
/// implements the ordering; this plugin only holds its place in the profile.
#[derive(Debug, Default)]
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
#[derive(Debug, Default)]
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
        let tolerated = pod.pod().spec.as_ref().and_then(|s| s.tolerations.as_ref()).into_iter().flatten().any(|t| {
            crate::plugins::taints::tolerates(t, "node.kubernetes.io/unschedulable", None, "NoSchedule")
        });
        if tolerated {
            Status::success()
        } else {
            Status::unresolvable(ERR_NODE_UNSCHEDULABLE)
        }
    }
}

/// NodeName (Filter): spec.nodeName, if set, must be this node.
#[derive(Debug, Default)]
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
        match pod.pod().spec.as_ref().and_then(|s| s.node_name.as_deref()) {
            Some(n) if !n.is_empty() && n != node.name => Status::unresolvable(ERR_NODE_NAME),
            _ => Status::success(),
        }
    }
}

macro_rules! passing_plugin {
    ($ty:ident, $name:literal, $doc:literal, [$($point:ident),*]) => {
        #[doc = $doc]
        #[derive(Debug, Default)]
        pub struct $ty;
        impl Plugin for $ty {
            fn name(&self) -> &'static str {
                $name
            }
            fn points(&self) -> &'static [Point] {
                &[$(Point::$point),*]
            }
        }
    };
}

passing_plugin!(VolumeRestrictions, "VolumeRestrictions", "VolumeRestrictions (PreFilter, Filter): passes (kubesim does not model volume access modes on nodes).", [PreFilter, Filter]);
passing_plugin!(NodeVolumeLimits, "NodeVolumeLimits", "NodeVolumeLimits (PreFilter, Filter): passes (no CSI attach limits are modelled).", [PreFilter, Filter]);
passing_plugin!(VolumeBinding, "VolumeBinding", "VolumeBinding (PreFilter, Filter, Reserve, PreBind): passes (no delayed-binding volume topology is modelled).", [PreFilter, Filter, Reserve, PreBind]);
passing_plugin!(VolumeZone, "VolumeZone", "VolumeZone (PreFilter, Filter): passes (no zonal PersistentVolumes are modelled).", [PreFilter, Filter]);
passing_plugin!(DefaultBinder, "DefaultBinder", "DefaultBinder (Bind): the scheduler posts pods/binding through the API.", [Bind]);
