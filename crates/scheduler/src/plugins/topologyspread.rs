//! PodTopologySpread (PreFilter, Filter, PreScore, Score weight 2) — `plugins/podtopologyspread`.

use crate::framework::{Plugin, Point};
use kubesim_api::selector::Selector;

/// A compiled topology spread constraint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpreadConstraint {
    /// maxSkew.
    pub max_skew: i64,
    /// topologyKey.
    pub topology_key: String,
    /// whenUnsatisfiable == DoNotSchedule.
    pub hard: bool,
    /// The selector (labelSelector with matchLabelKeys merged).
    pub selector: Selector,
    /// minDomains (1 if unset).
    pub min_domains: i64,
    /// nodeAffinityPolicy Honor (default) vs Ignore.
    pub honor_node_affinity: bool,
    /// nodeTaintsPolicy Honor vs Ignore (default).
    pub honor_node_taints: bool,
}

/// The system default constraints (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway).
pub fn system_default_constraints() -> Vec<SpreadConstraint> {
    vec![
        SpreadConstraint { max_skew: 3, topology_key: "kubernetes.io/hostname".into(), hard: false, min_domains: 1, honor_node_affinity: true, ..Default::default() },
        SpreadConstraint { max_skew: 5, topology_key: "topology.kubernetes.io/zone".into(), hard: false, min_domains: 1, honor_node_affinity: true, ..Default::default() },
    ]
}

/// The PodTopologySpread plugin.
#[derive(Debug, Clone)]
pub struct PodTopologySpread {
    /// Whether the defaults are the system defaults (defaultingType System).
    pub system_defaulted: bool,
    /// Default constraints for pods without their own (selector filled in per pod).
    pub default_constraints: Vec<SpreadConstraint>,
}

impl Default for PodTopologySpread {
    fn default() -> Self {
        PodTopologySpread { system_defaulted: true, default_constraints: system_default_constraints() }
    }
}

impl Plugin for PodTopologySpread {
    fn name(&self) -> &'static str {
        "PodTopologySpread"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreFilter, Point::Filter, Point::PreScore, Point::Score]
    }
}
