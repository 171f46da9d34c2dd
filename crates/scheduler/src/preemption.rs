//! DefaultPreemption (PostFilter) — `plugins/defaultpreemption` + `framework/preemption`.

use crate::cache::PodInfo;
use crate::framework::{Code, CycleState};
use crate::scheduler::{reasons_histogram, Diagnosis, Scheduler};
use kubesim_apiserver::Ctx;
use std::sync::Arc;

/// The reason for nodes where preemption cannot help.
pub const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// The reason for nodes without victims.
pub const NO_VICTIMS: &str = "No preemption victims found for incoming pod";

/// Runs preemption for an unschedulable pod: (nominated node, PostFilter message, victims).
pub(crate) fn post_filter(
    _s: &mut Scheduler,
    _pi: usize,
    pod: &Arc<PodInfo>,
    _state: &mut CycleState,
    diagnosis: &Diagnosis,
    _ctx: &mut Ctx,
) -> (Option<String>, Option<String>, Vec<String>) {
    if pod.pod().spec.as_ref().and_then(|s| s.preemption_policy.as_deref()) == Some("Never") {
        return (None, Some("preemption: not eligible due to preemptionPolicy=Never.".into()), Vec::new());
    }
    let num_all = diagnosis.num_all_nodes;
    let mut reasons: Vec<Vec<String>> = Vec::new();
    for i in 0..num_all {
        let helpful = diagnosis.status_of(i).is_some_and(|s| s.code == Code::Unschedulable);
        reasons.push(vec![if helpful { NO_VICTIMS.to_string() } else { NOT_HELPFUL.to_string() }]);
    }
    let msg = format!("preemption: 0/{num_all} nodes are available: {}.", reasons_histogram(&reasons).join(", "));
    (None, Some(msg), Vec::new())
}
