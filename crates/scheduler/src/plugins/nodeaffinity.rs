//! NodeAffinity (PreFilter, Filter, PreScore, Score weight 2) — `plugins/nodeaffinity`,
//! including pod.spec.nodeSelector.

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, CycleState, Plugin, Point, Status, MAX_NODE_SCORE};
use crate::plugins::helper::default_normalize_score;
use std::collections::BTreeSet;

/// The NodeAffinity filter reason.
pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
/// PreFilter: every term names nodes, and they conflict.
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";

/// Whether a node selector term matches (expressions and fields ANDed; an empty term matches nothing).
pub use kubesim_api::storage::node_selector_term_matches as term_matches;

/// Whether the pod's nodeSelector and required node affinity match the node.
pub fn pod_matches_node_selector_and_affinity(pod: &PodInfo, node: &NodeInfo) -> bool {
    let Some(spec) = pod.pod().spec.as_ref() else { return true };
    let labels = node.labels();
    if let Some(sel) = spec.node_selector.as_ref() {
        for (k, v) in sel {
            if labels.and_then(|l| l.get(k)) != Some(v) {
                return false;
            }
        }
    }
    if let Some(required) =
        spec.affinity.as_ref().and_then(|a| a.node_affinity.as_ref()).and_then(|na| na.required_during_scheduling_ignored_during_execution.as_ref())
    {
        if !required.node_selector_terms.iter().any(|t| term_matches(t, &node.name, labels)) {
            return false;
        }
    }
    true
}

/// The NodeAffinity plugin.
#[derive(Clone, Debug, Default)]
pub struct NodeAffinity;

impl Plugin for NodeAffinity {
    fn name(&self) -> &'static str {
        "NodeAffinity"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreFilter, Point::Filter, Point::PreScore, Point::Score]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[ClusterEvent::NodeAdd, ClusterEvent::NodeLabel, ClusterEvent::UnscheduledPodUpdate]
    }
    fn pre_filter(&self, _state: &mut CycleState, pod: &PodInfo, _view: &ClusterView) -> (Status, Option<BTreeSet<String>>) {
        let spec = pod.pod().spec.as_ref();
        let has_selector = spec.and_then(|s| s.node_selector.as_ref()).is_some_and(|s| !s.is_empty());
        let has_required = spec
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .is_some_and(|na| na.required_during_scheduling_ignored_during_execution.is_some());
        if !has_selector && !has_required {
            return (Status::skip(), None);
        }
        // Affinity to specific nodes by metadata.name narrows the nodes to evaluate.
        let terms = spec
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|na| na.required_during_scheduling_ignored_during_execution.as_ref())
            .map(|r| r.node_selector_terms.as_slice())
            .unwrap_or(&[]);
        let mut names: Option<BTreeSet<String>> = None;
        for t in terms {
            let mut term_names: Option<BTreeSet<String>> = None;
            for r in t.match_fields.iter().flatten() {
                if r.key == "metadata.name" && r.operator == "In" {
                    let set: BTreeSet<String> = r.values.iter().flatten().cloned().collect();
                    term_names = Some(match term_names {
                        None => set,
                        Some(prev) => prev.intersection(&set).cloned().collect(),
                    });
                }
            }
            let Some(term_names) = term_names else {
                // A term without a node-name requirement makes every node eligible.
                return (Status::success(), None);
            };
            names.get_or_insert_with(BTreeSet::new).extend(term_names);
        }
        match names {
            Some(n) if n.is_empty() => (Status::unresolvable(ERR_REASON_CONFLICT), None),
            Some(n) => (Status::success(), Some(n)),
            None => (Status::success(), None),
        }
    }
    fn filter(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        if pod_matches_node_selector_and_affinity(pod, node) {
            Status::success()
        } else {
            Status::unresolvable(ERR_REASON_POD)
        }
    }
    fn pre_score(&self, _state: &mut CycleState, pod: &PodInfo, _feasible: &[&NodeInfo], _view: &ClusterView) -> Status {
        let has_preferred = pod
            .pod()
            .spec
            .as_ref()
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|na| na.preferred_during_scheduling_ignored_during_execution.as_ref())
            .is_some_and(|p| !p.is_empty());
        if has_preferred {
            Status::success()
        } else {
            Status::skip()
        }
    }
    fn score(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo, _view: &ClusterView) -> i64 {
        let preferred = pod
            .pod()
            .spec
            .as_ref()
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|na| na.preferred_during_scheduling_ignored_during_execution.as_ref());
        let labels = node.labels();
        preferred.into_iter().flatten().filter(|p| p.weight != 0 && term_matches(&p.preference, &node.name, labels)).map(|p| p.weight as i64).sum()
    }
    fn normalize(&self, _state: &CycleState, _pod: &PodInfo, scores: &mut [i64]) {
        default_normalize_score(MAX_NODE_SCORE, false, scores);
    }
}
