//! InterPodAffinity (PreFilter, Filter, PreScore, Score weight 2) — `plugins/interpodaffinity`.

use crate::framework::{Plugin, Point};

/// The InterPodAffinity plugin.
#[derive(Debug, Clone)]
pub struct InterPodAffinity {
    /// hardPodAffinityWeight (default 1).
    pub hard_pod_affinity_weight: i64,
}

impl Default for InterPodAffinity {
    fn default() -> Self {
        InterPodAffinity { hard_pod_affinity_weight: 1 }
    }
}

impl Plugin for InterPodAffinity {
    fn name(&self) -> &'static str {
        "InterPodAffinity"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreFilter, Point::Filter, Point::PreScore, Point::Score]
    }
}
