//! DefaultPreemption (PostFilter) — `plugins/defaultpreemption/default_preemption.go` and
//! `framework/preemption/preemption.go`: eligibility, candidate nodes (dry run that removes all
//! lower-priority pods, then reprieves PDB-violating and other victims highest priority first),
//! `pickOneNodeForPreemption`, and the API effects (DisruptionTarget condition, graceful
//! deletion, nominatedNodeName, clearing lower-priority nominations).

use crate::cache::{NodeInfo, PodInfo};
use crate::explain::Attempt;
use crate::framework::{Code, CycleState, Listers, Point, Status};
use crate::plugins::DefaultPreemption;
use crate::scheduler::{reasons_histogram, Diagnosis, Scheduler};
use k8s_openapi::api::core::v1::PodCondition;
use kubesim_api::time::time_at;
use kubesim_api::Object;
use kubesim_apiserver::DeleteOptions;
use kubesim_runtime::Ctx;
use rand_core::RngCore;
use std::cmp::Ordering;
use std::sync::Arc;

/// The reason for nodes where preemption cannot help.
pub const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// The reason for nodes without victims.
pub const NO_VICTIMS: &str = "No preemption victims found for incoming pod";

/// Victims on one candidate node.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The node.
    pub node: String,
    /// Victims, most important first.
    pub victims: Vec<Arc<PodInfo>>,
    /// How many victims violate a PDB.
    pub num_pdb_violations: i64,
}

/// `MoreImportantPod`: higher priority, then earlier start time.
pub fn more_important(a: &PodInfo, b: &PodInfo) -> Ordering {
    b.priority.cmp(&a.priority).then(a.start_time.cmp(&b.start_time))
}

/// `calculateNumCandidates`.
pub fn num_candidates(args: &DefaultPreemption, num_nodes: usize) -> usize {
    let mut n = num_nodes as i64 * args.min_candidate_nodes_percentage / 100;
    if n < args.min_candidate_nodes_absolute {
        n = args.min_candidate_nodes_absolute;
    }
    (n.max(0) as usize).min(num_nodes)
}

/// `filterPodsWithPDBViolation`: (violating, non-violating), keeping order.
pub fn split_by_pdb(pods: &[Arc<PodInfo>], listers: &Listers) -> (Vec<Arc<PodInfo>>, Vec<Arc<PodInfo>>) {
    let pdbs: Vec<_> = listers.pdbs.iter().collect();
    let mut allowed: Vec<i64> = pdbs.iter().map(|(_, (_, a))| *a).collect();
    let (mut violating, mut ok) = (Vec::new(), Vec::new());
    for p in pods {
        let mut violated = false;
        if p.labels().is_some_and(|l| !l.is_empty()) {
            for (i, ((ns, _), (selector, _))) in pdbs.iter().enumerate() {
                if ns != p.namespace() || selector.is_empty() || !selector.matches(p.labels()) {
                    continue;
                }
                allowed[i] -= 1;
                if allowed[i] < 0 {
                    violated = true;
                }
            }
        }
        if violated {
            violating.push(p.clone());
        } else {
            ok.push(p.clone());
        }
    }
    (violating, ok)
}

/// `pickOneNodeForPreemption` over candidates (in discovery order; the first survivor wins ties).
pub fn pick_one_node(candidates: &[Candidate]) -> Option<usize> {
    if candidates.is_empty() {
        return None;
    }
    let score_fns: [&dyn Fn(&Candidate) -> i64; 5] = [
        &|c| -c.num_pdb_violations,
        &|c| -(c.victims.first().map(|p| p.priority as i64).unwrap_or(0)),
        &|c| -c.victims.iter().map(|p| p.priority as i64 + i32::MAX as i64 + 1).sum::<i64>(),
        &|c| -(c.victims.len() as i64),
        &|c| {
            // The earliest start time among the highest-priority victims; later is better.
            let Some(top) = c.victims.iter().map(|p| p.priority).max() else { return i64::MIN };
            c.victims.iter().filter(|p| p.priority == top).map(|p| p.start_time as i64).min().unwrap_or(i64::MIN)
        },
    ];
    let mut remaining: Vec<usize> = (0..candidates.len()).collect();
    for f in score_fns {
        let mut best = i64::MIN;
        let mut selected = Vec::new();
        for &i in &remaining {
            let s = f(&candidates[i]);
            if s > best {
                best = s;
                selected.clear();
            }
            if s == best {
                selected.push(i);
            }
        }
        if selected.len() == 1 {
            return Some(selected[0]);
        }
        remaining = selected;
    }
    remaining.first().copied()
}

fn args_of(s: &Scheduler, pi: usize) -> DefaultPreemption {
    s.profiles[pi].plugins.iter().find_map(|p| p.as_any().and_then(|a| a.downcast_ref::<DefaultPreemption>()).cloned()).unwrap_or_default()
}

/// `SelectVictimsOnNode`: Ok((victims, pdb violations)) or the status why the node cannot help.
fn select_victims_on_node(s: &Scheduler, pi: usize, pod: &PodInfo, state: &CycleState, node: &NodeInfo) -> Result<(Vec<Arc<PodInfo>>, i64), Status> {
    let profile = &s.profiles[pi];
    let filters: Vec<usize> = profile.at(Point::Filter).iter().copied().filter(|i| !state.skip_filter.contains(profile.plugin(*i).name())).collect();
    let prefilters = profile.at(Point::PreFilter).to_vec();
    let mut node = node.clone();
    let mut state = state.clone();
    let mut potential: Vec<Arc<PodInfo>> = node.pods.iter().filter(|p| p.priority < pod.priority).cloned().collect();
    if potential.is_empty() {
        return Err(Status::unresolvable(NO_VICTIMS));
    }
    for v in &potential {
        node.remove_pod(&v.key);
        for i in &prefilters {
            profile.plugin(*i).pre_filter_remove_pod(&mut state, pod, v, &node);
        }
    }
    let mut scratch = Attempt::new(0, 0, "", 0);
    let view = crate::framework::ClusterView { cache: &s.cache, listers: &s.listers };
    let status = s.run_filters_with_nominated(profile, &filters, &state, pod, &node, &mut scratch, None, &view);
    if !status.is_success() {
        return Err(status);
    }
    kubesim_api::sort::sort_by(&mut potential, |a, b| more_important(a, b));
    let (violating, non_violating) = split_by_pdb(&potential, &s.listers);
    let mut victims: Vec<Arc<PodInfo>> = Vec::new();
    let mut violations = 0;
    let mut reprieve = |p: &Arc<PodInfo>, node: &mut NodeInfo, state: &mut CycleState| -> bool {
        node.add_pod(p.clone());
        for i in &prefilters {
            profile.plugin(*i).pre_filter_add_pod(state, pod, p, node);
        }
        let fits = s.run_filters_with_nominated(profile, &filters, state, pod, node, &mut scratch, None, &view).is_success();
        if !fits {
            node.remove_pod(&p.key);
            for i in &prefilters {
                profile.plugin(*i).pre_filter_remove_pod(state, pod, p, node);
            }
            victims.push(p.clone());
        }
        fits
    };
    for p in &violating {
        if !reprieve(p, &mut node, &mut state) {
            violations += 1;
        }
    }
    for p in &non_violating {
        reprieve(p, &mut node, &mut state);
    }
    if !violating.is_empty() && !non_violating.is_empty() {
        kubesim_api::sort::sort_by(&mut victims, |a, b| more_important(a, b));
    }
    Ok((victims, violations))
}

/// What DefaultPreemption's PostFilter decided for an unschedulable pod. Planning only reads
/// the scheduler's state; [`Scheduler::apply_preemption`] performs the plan (API writes,
/// nominations), so the decision and its effects stay apart.
#[derive(Clone, Debug)]
pub enum PreemptionPlan {
    /// Preemption does not apply (preemptionPolicy Never, a terminating victim on the
    /// nominated node): the PostFilter message.
    Ineligible(String),
    /// No node would fit the pod after preemption: the PostFilter message, and whether the
    /// pod's stale nomination is cleared (ClearNominatedNodeName) because no node could help.
    NoCandidate {
        /// The PostFilter message.
        message: String,
        /// Clear the pod's existing nominatedNodeName.
        clear_stale_nomination: bool,
    },
    /// Preempt `victims` on `node` and nominate the pod there; lower-priority pods nominated
    /// to that node lose their nomination.
    Preempt {
        /// The chosen node.
        node: String,
        /// The pods to evict, most important last.
        victims: Vec<Arc<PodInfo>>,
        /// Lower-priority pods nominated to the node.
        lower_nominated: Vec<Arc<PodInfo>>,
    },
}

/// Plans preemption for an unschedulable pod (DefaultPreemption.PostFilter up to
/// prepareCandidate): eligibility, candidate nodes from a seeded offset, victims per node,
/// the best candidate.
pub(crate) fn plan(
    s: &Scheduler,
    pi: usize,
    pod: &Arc<PodInfo>,
    state: &mut CycleState,
    diagnosis: &Diagnosis,
    rng: &mut kubesim_runtime::SimRng,
) -> PreemptionPlan {
    let spec = pod.pod().spec.as_ref();
    if spec.and_then(|s| s.preemption_policy.as_deref()) == Some("Never") {
        return PreemptionPlan::Ineligible("preemption: not eligible due to preemptionPolicy=Never.".into());
    }
    if let Some(nn) = pod.pod().status.as_ref().and_then(|st| st.nominated_node_name.as_deref()).filter(|n| !n.is_empty()) {
        let unresolvable = s.cache.node_index(nn).and_then(|i| diagnosis.status_of(i)).is_some_and(|st| st.code == Code::UnschedulableAndUnresolvable);
        if !unresolvable {
            if let Some(node) = s.cache.node(nn) {
                if node.pods.iter().any(|p| p.is_terminating() && p.priority < pod.priority) {
                    return PreemptionPlan::Ineligible("preemption: not eligible due to a terminating pod on the nominated node.".into());
                }
            }
        }
    }
    let num_all = diagnosis.num_all_nodes;
    let nodes = s.cache.nodes();
    let by_node = diagnosis.statuses_by_node(nodes.len());
    let potential: Vec<usize> = (0..nodes.len()).filter(|i| by_node[*i].is_none_or(|st| st.code != Code::UnschedulableAndUnresolvable)).collect();
    // Preemption cannot help anywhere: a stale nomination is cleared (ClearNominatedNodeName).
    let clear_stale_nomination =
        potential.is_empty() && pod.pod().status.as_ref().and_then(|st| st.nominated_node_name.as_deref()).is_some_and(|n| !n.is_empty());
    let mut statuses: Vec<Option<Status>> = vec![None; nodes.len()];
    let mut candidates: Vec<Candidate> = Vec::new();
    if !potential.is_empty() {
        let args = args_of(s, pi);
        let want = num_candidates(&args, potential.len());
        let offset = (rng.next_u64() % potential.len() as u64) as usize;
        let (mut non_violating, mut violating) = (Vec::new(), Vec::new());
        for k in 0..potential.len() {
            let idx = potential[(offset + k) % potential.len()];
            let node = &nodes[idx];
            match select_victims_on_node(s, pi, pod, state, node) {
                Ok((victims, violations)) if !victims.is_empty() => {
                    let c = Candidate { node: node.name.clone(), victims, num_pdb_violations: violations };
                    if violations == 0 {
                        non_violating.push(c);
                    } else {
                        violating.push(c);
                    }
                    if !non_violating.is_empty() && non_violating.len() + violating.len() >= want {
                        break;
                    }
                }
                Ok(_) => statuses[idx] = Some(Status::new(Code::Error, format!("expected at least one victim pod on node {:?}", node.name))),
                Err(st) => statuses[idx] = Some(st),
            }
        }
        candidates = non_violating;
        candidates.extend(violating);
    }
    let Some(chosen) = pick_one_node(&candidates) else {
        let reasons = statuses.iter().flat_map(|st| st.iter().flat_map(|st| st.reasons.iter().map(String::as_str)).chain(st.is_none().then_some(NOT_HELPFUL)));
        let message = format!("preemption: 0/{num_all} nodes are available: {}.", reasons_histogram(reasons).join(", "));
        return PreemptionPlan::NoCandidate { message, clear_stale_nomination };
    };
    let candidate = candidates.swap_remove(chosen);
    let lower_nominated: Vec<Arc<PodInfo>> =
        s.nominated.get(&candidate.node).into_iter().flatten().filter(|p| p.priority < pod.priority && p.key != pod.key).cloned().collect();
    PreemptionPlan::Preempt { node: candidate.node, victims: candidate.victims, lower_nominated }
}

impl Scheduler {
    /// Performs a [`PreemptionPlan`] (prepareCandidate and the nomination bookkeeping):
    /// returns (nominated node, PostFilter message, victims' keys).
    pub(crate) fn apply_preemption(&mut self, plan: PreemptionPlan, pod: &Arc<PodInfo>, ctx: &mut Ctx) -> (Option<String>, Option<String>, Vec<String>) {
        match plan {
            PreemptionPlan::Ineligible(message) => (None, Some(message), Vec::new()),
            PreemptionPlan::NoCandidate { message, clear_stale_nomination } => {
                if clear_stale_nomination {
                    self.clear_nomination(&pod.key);
                    clear_nominated_node_name(pod, ctx);
                }
                (None, Some(message), Vec::new())
            }
            PreemptionPlan::Preempt { node, victims, lower_nominated } => {
                let spec = pod.pod().spec.as_ref();
                let scheduler_name = spec.and_then(|s| s.scheduler_name.clone()).unwrap_or_else(|| crate::config::DEFAULT_SCHEDULER_NAME.to_string());
                let pod_info = kubesim_api::kind_info("v1", "Pod").expect("pods are served");
                let mut victim_keys = Vec::new();
                for v in &victims {
                    victim_keys.push(v.key.clone());
                    let Some(current) = ctx.api.lookup(("", "pods"), v.namespace(), v.name()).cloned() else { continue };
                    if let Some(p) = current.as_pod() {
                        let mut p = p.clone();
                        let conditions = p.status.get_or_insert_with(Default::default).conditions.get_or_insert_with(Vec::new);
                        kubesim_apiserver::server::set_pod_condition(
                            conditions,
                            PodCondition {
                                type_: "DisruptionTarget".into(),
                                status: "True".into(),
                                reason: Some("PreemptionByScheduler".into()),
                                message: Some(format!("{scheduler_name}: preempting to accommodate a higher priority pod")),
                                last_transition_time: Some(time_at(ctx.now)),
                                ..Default::default()
                            },
                        );
                        p.metadata.resource_version = None;
                        let _ = ctx.update_status(Object::Pod(Box::new(p)));
                    }
                    let _ = ctx.delete(pod_info, v.namespace(), v.name(), DeleteOptions::default());
                    if self.options().events {
                        let uid = pod.pod().metadata.uid.clone().unwrap_or_default();
                        ctx.event(&current, "Normal", "Preempted", format!("Preempted by pod {uid} on node {node}"));
                    }
                }
                self.stats_mut().preempted += victims.len() as u64;
                for p in lower_nominated {
                    self.clear_nomination(&p.key);
                    clear_nominated_node_name(&p, ctx);
                }
                self.clear_nomination(&pod.key);
                self.nominated.entry(node.clone()).or_default().push(pod.clone());
                (Some(node), None, victim_keys)
            }
        }
    }
}

/// Clears a pod's status.nominatedNodeName through the API.
fn clear_nominated_node_name(pod: &PodInfo, ctx: &mut Ctx) {
    let Some(current) = ctx.api.lookup(("", "pods"), pod.namespace(), pod.name()).cloned() else { return };
    let Some(cp) = current.as_pod() else { return };
    let mut cp = cp.clone();
    if let Some(st) = cp.status.as_mut() {
        st.nominated_node_name = None;
    }
    cp.metadata.resource_version = None;
    let _ = ctx.update_status(Object::Pod(Box::new(cp)));
}
