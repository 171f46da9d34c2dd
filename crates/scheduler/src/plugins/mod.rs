//! The in-tree plugins and their registry (`pkg/scheduler/framework/plugins/registry.go`).

pub mod basic;
pub mod helper;
pub mod imagelocality;
pub mod interpodaffinity;
pub mod nodeaffinity;
pub mod noderesources;
pub mod ports;
pub mod taints;
pub mod topologyspread;

use crate::framework::{Plugin, Point};
use serde_json::Value;

/// DefaultPreemption's place in the profile (PostFilter). The preemption logic itself lives in
/// [`crate::preemption`] because it acts through the API.
#[derive(Debug, Clone)]
pub struct DefaultPreemption {
    /// minCandidateNodesPercentage (default 10).
    pub min_candidate_nodes_percentage: i64,
    /// minCandidateNodesAbsolute (default 100).
    pub min_candidate_nodes_absolute: i64,
}

impl Default for DefaultPreemption {
    fn default() -> Self {
        DefaultPreemption { min_candidate_nodes_percentage: 10, min_candidate_nodes_absolute: 100 }
    }
}

impl Plugin for DefaultPreemption {
    fn name(&self) -> &'static str {
        "DefaultPreemption"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PostFilter]
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// The default MultiPoint plugins, in upstream order, with their score weights
/// (`apis/config/v1/default_plugins.go`).
pub const DEFAULT_PLUGINS: &[(&str, i64)] = &[
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
];

/// Every plugin name the registry knows.
pub const REGISTRY: &[&str] = &[
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
];

/// Instantiates a plugin with its pluginConfig args (None: defaults).
pub fn new_plugin(name: &str, args: Option<&Value>) -> Result<Box<dyn Plugin>, String> {
    Ok(match name {
        "SchedulingGates" => Box::new(basic::SchedulingGates),
        "PrioritySort" => Box::new(basic::PrioritySort),
        "NodeUnschedulable" => Box::new(basic::NodeUnschedulable),
        "NodeName" => Box::new(basic::NodeName),
        "TaintToleration" => Box::new(taints::TaintToleration),
        "NodeAffinity" => Box::new(nodeaffinity::NodeAffinity),
        "NodePorts" => Box::new(ports::NodePorts),
        "NodeResourcesFit" => Box::new(crate::config::fit_args(args)?),
        "VolumeRestrictions" => Box::new(basic::VolumeRestrictions),
        "NodeVolumeLimits" => Box::new(basic::NodeVolumeLimits),
        "VolumeBinding" => Box::new(basic::VolumeBinding),
        "VolumeZone" => Box::new(basic::VolumeZone),
        "PodTopologySpread" => Box::new(crate::config::topology_spread_args(args)?),
        "InterPodAffinity" => Box::new(crate::config::inter_pod_affinity_args(args)?),
        "DefaultPreemption" => Box::new(crate::config::preemption_args(args)?),
        "NodeResourcesBalancedAllocation" => Box::new(crate::config::balanced_args(args)?),
        "ImageLocality" => Box::new(imagelocality::ImageLocality),
        "DefaultBinder" => Box::new(basic::DefaultBinder),
        other => return Err(format!("plugin {other:?} does not exist")),
    })
}
