//! TaintToleration (Filter, PreScore, Score weight 3) — `plugins/tainttoleration`.

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, Code, CycleState, Plugin, Point, Status, MAX_NODE_SCORE};
use crate::plugins::helper::default_normalize_score;
use k8s_openapi::api::core::v1::{Taint, Toleration};

/// Whether a toleration tolerates a taint (`Toleration.ToleratesTaint`).
pub fn tolerates(t: &Toleration, key: &str, value: Option<&str>, effect: &str) -> bool {
    if let Some(e) = t.effect.as_deref().filter(|e| !e.is_empty()) {
        if e != effect {
            return false;
        }
    }
    if let Some(k) = t.key.as_deref().filter(|k| !k.is_empty()) {
        if k != key {
            return false;
        }
    }
    match t.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "" | "Equal" => t.value.as_deref().unwrap_or("") == value.unwrap_or(""),
        _ => false,
    }
}

/// Whether any toleration tolerates the taint.
pub fn tolerated(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates(t, &taint.key, taint.value.as_deref(), &taint.effect))
}

/// The filter reason for an untolerated taint.
pub fn untolerated_reason(taint: &Taint) -> String {
    format!("node(s) had untolerated taint {{{}: {}}}", taint.key, taint.value.as_deref().unwrap_or(""))
}

/// The TaintToleration plugin.
#[derive(Clone, Debug, Default)]
pub struct TaintToleration;

fn pod_tolerations(pod: &PodInfo) -> &[Toleration] {
    pod.pod().spec.as_ref().and_then(|s| s.tolerations.as_deref()).unwrap_or(&[])
}

/// Counts PreferNoSchedule taints not tolerated by the (PreferNoSchedule-or-empty-effect) tolerations.
pub fn count_intolerable_prefer_no_schedule(taints: &[Taint], tolerations: &[Toleration]) -> i64 {
    let relevant: Vec<&Toleration> = tolerations.iter().filter(|t| matches!(t.effect.as_deref(), None | Some("") | Some("PreferNoSchedule"))).collect();
    taints
        .iter()
        .filter(|taint| taint.effect == "PreferNoSchedule")
        .filter(|taint| !relevant.iter().any(|t| tolerates(t, &taint.key, taint.value.as_deref(), &taint.effect)))
        .count() as i64
}

impl Plugin for TaintToleration {
    fn name(&self) -> &'static str {
        "TaintToleration"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::Filter, Point::PreScore, Point::Score]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[ClusterEvent::NodeAdd, ClusterEvent::NodeTaint, ClusterEvent::UnscheduledPodUpdate]
    }
    fn filter(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        let taints = node.taints();
        if taints.is_empty() {
            return Status::success();
        }
        let tolerations = pod_tolerations(pod);
        for taint in taints {
            if (taint.effect == "NoSchedule" || taint.effect == "NoExecute") && !tolerated(tolerations, taint) {
                return Status::new(Code::UnschedulableAndUnresolvable, untolerated_reason(taint));
            }
        }
        Status::success()
    }
    fn score(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo, _view: &ClusterView) -> i64 {
        let taints = node.taints();
        if taints.is_empty() {
            return 0;
        }
        count_intolerable_prefer_no_schedule(taints, pod_tolerations(pod))
    }
    fn normalize(&self, _state: &CycleState, _pod: &PodInfo, scores: &mut [i64]) {
        default_normalize_score(MAX_NODE_SCORE, true, scores);
    }
}
