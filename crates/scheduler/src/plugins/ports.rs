//! NodePorts (PreFilter, Filter) — `plugins/nodeports`.

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, CycleState, Plugin, Point, Status};
use std::collections::BTreeSet;

/// The NodePorts reason.
pub const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";

/// The NodePorts plugin.
#[derive(Clone, Debug, Default)]
pub struct NodePorts;

impl Plugin for NodePorts {
    fn name(&self) -> &'static str {
        "NodePorts"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreFilter, Point::Filter]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[ClusterEvent::NodeAdd, ClusterEvent::AssignedPodDelete]
    }
    fn pre_filter(&self, _state: &mut CycleState, pod: &PodInfo, _view: &ClusterView) -> (Status, Option<BTreeSet<String>>) {
        if pod.host_ports.is_empty() {
            (Status::skip(), None)
        } else {
            (Status::success(), None)
        }
    }
    fn filter(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        let conflict = pod.host_ports.iter().any(|want| node.used_ports.iter().any(|used| used.conflicts(want)));
        if conflict {
            Status::unschedulable(ERR_REASON)
        } else {
            Status::success()
        }
    }
}
