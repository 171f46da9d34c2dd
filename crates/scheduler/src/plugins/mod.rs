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
pub mod volumebinding;
pub mod volumerestrictions;

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

/// A plugin constructor: pluginConfig args (`None`: the defaults) to the plugin.
pub type PluginFactory = fn(Option<&Value>) -> Result<Box<dyn Plugin>, String>;

/// One in-tree plugin: its name, its score weight in the default MultiPoint set, and how it is
/// built from its pluginConfig args (`None`: the defaults).
pub struct Registration {
    /// The plugin's name.
    pub name: &'static str,
    /// Its weight when the default profile scores with it (0: it does not score).
    pub default_weight: i64,
    /// Builds the plugin from its args.
    pub new: PluginFactory,
}

fn plain<P: Plugin + Default + 'static>(_: Option<&Value>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(P::default()))
}

fn with_args<P: Plugin + 'static>(parse: fn(Option<&Value>) -> Result<P, String>) -> impl Fn(Option<&Value>) -> Result<Box<dyn Plugin>, String> {
    move |args| parse(args).map(|p| Box::new(p) as Box<dyn Plugin>)
}

/// The registry (`registry.go` NewInTreeRegistry) — every plugin kubesim knows, in the order
/// of the default MultiPoint set (`apis/config/v1/default_plugins.go`), which enables all of
/// them. The one place a plugin's name, default weight and constructor are written.
pub const REGISTRY: &[Registration] = &[
    Registration { name: "SchedulingGates", default_weight: 0, new: plain::<basic::SchedulingGates> },
    Registration { name: "PrioritySort", default_weight: 0, new: plain::<basic::PrioritySort> },
    Registration { name: "NodeUnschedulable", default_weight: 0, new: plain::<basic::NodeUnschedulable> },
    Registration { name: "NodeName", default_weight: 0, new: plain::<basic::NodeName> },
    Registration { name: "TaintToleration", default_weight: 3, new: plain::<taints::TaintToleration> },
    Registration { name: "NodeAffinity", default_weight: 2, new: plain::<nodeaffinity::NodeAffinity> },
    Registration { name: "NodePorts", default_weight: 0, new: plain::<ports::NodePorts> },
    Registration { name: "NodeResourcesFit", default_weight: 1, new: |a| with_args(crate::config::fit_args)(a) },
    Registration { name: "VolumeRestrictions", default_weight: 0, new: plain::<volumerestrictions::VolumeRestrictions> },
    Registration { name: "NodeVolumeLimits", default_weight: 0, new: plain::<basic::NodeVolumeLimits> },
    Registration { name: "VolumeBinding", default_weight: 0, new: plain::<volumebinding::VolumeBinding> },
    Registration { name: "VolumeZone", default_weight: 0, new: plain::<basic::VolumeZone> },
    Registration { name: "PodTopologySpread", default_weight: 2, new: |a| with_args(crate::config::topology_spread_args)(a) },
    Registration { name: "InterPodAffinity", default_weight: 2, new: |a| with_args(crate::config::inter_pod_affinity_args)(a) },
    Registration { name: "DefaultPreemption", default_weight: 0, new: |a| with_args(crate::config::preemption_args)(a) },
    Registration { name: "NodeResourcesBalancedAllocation", default_weight: 1, new: |a| with_args(crate::config::balanced_args)(a) },
    Registration { name: "ImageLocality", default_weight: 1, new: plain::<imagelocality::ImageLocality> },
    Registration { name: "DefaultBinder", default_weight: 0, new: plain::<basic::DefaultBinder> },
];

/// The default MultiPoint plugins with their score weights, in order.
pub fn default_plugins() -> impl Iterator<Item = (&'static str, i64)> {
    REGISTRY.iter().map(|r| (r.name, r.default_weight))
}

/// Instantiates a plugin with its pluginConfig args (None: defaults).
pub fn new_plugin(name: &str, args: Option<&Value>) -> Result<Box<dyn Plugin>, String> {
    let registration = REGISTRY.iter().find(|r| r.name == name).ok_or_else(|| format!("plugin {name:?} does not exist"))?;
    let plugin = (registration.new)(args)?;
    debug_assert_eq!(plugin.name(), registration.name, "a registration builds the plugin it names");
    Ok(plugin)
}
