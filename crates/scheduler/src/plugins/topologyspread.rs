//! PodTopologySpread (PreFilter, Filter, PreScore, Score weight 2) — `plugins/podtopologyspread`
//! (filtering.go, scoring.go, common.go).

use crate::cache::{Cache, NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, CycleState, Listers, Plugin, Point, Status, MAX_NODE_SCORE};
use crate::plugins::helper::{CountCache, DomainCache, NO_DOMAIN};
use crate::plugins::nodeaffinity::pod_matches_node_selector_and_affinity;
use crate::plugins::taints::tolerated;
use kubesim_api::selector::{Requirement, Selector};
use std::collections::BTreeSet;

/// Filter reason: skew exceeded.
pub const ERR_CONSTRAINTS_NOT_MATCH: &str = "node(s) didn't match pod topology spread constraints";
/// Filter reason: node lacks a topology key.
pub const ERR_NODE_LABEL_NOT_MATCH: &str = "node(s) didn't match pod topology spread constraints (missing required label)";
const HOSTNAME: &str = "kubernetes.io/hostname";
const FILTER_KEY: &str = "PreFilterPodTopologySpread";
const SCORE_KEY: &str = "PreScorePodTopologySpread";

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

impl SpreadConstraint {
    /// `matchNodeInclusionPolicies`.
    pub fn includes_node(&self, pod: &PodInfo, node: &NodeInfo) -> bool {
        if self.honor_node_affinity && !pod_matches_node_selector_and_affinity(pod, node) {
            return false;
        }
        if self.honor_node_taints {
            let tolerations = pod.pod().spec.as_ref().and_then(|s| s.tolerations.as_deref()).unwrap_or(&[]);
            if node.taints().iter().any(|t| (t.effect == "NoSchedule" || t.effect == "NoExecute") && !tolerated(tolerations, t)) {
                return false;
            }
        }
        true
    }
}

/// The system default constraints (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway).
pub fn system_default_constraints() -> Vec<SpreadConstraint> {
    vec![
        SpreadConstraint { max_skew: 3, topology_key: HOSTNAME.into(), hard: false, min_domains: 1, honor_node_affinity: true, ..Default::default() },
        SpreadConstraint {
            max_skew: 5,
            topology_key: "topology.kubernetes.io/zone".into(),
            hard: false,
            min_domains: 1,
            honor_node_affinity: true,
            ..Default::default()
        },
    ]
}

/// The pod's own constraints of one kind (hard or soft), compiled.
pub fn pod_constraints(pod: &PodInfo, hard: bool) -> Vec<SpreadConstraint> {
    let labels = pod.labels();
    pod.pod()
        .spec
        .as_ref()
        .and_then(|s| s.topology_spread_constraints.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| (c.when_unsatisfiable == "DoNotSchedule") == hard)
        .map(|c| {
            let mut selector = match c.label_selector.as_ref() {
                Some(s) => Selector::from_label_selector(s),
                None => Selector { requirements: Vec::new(), matches_nothing: true },
            };
            for key in c.match_label_keys.iter().flatten() {
                if let Some(v) = labels.and_then(|l| l.get(key)) {
                    selector.requirements.push(Requirement::In(key.clone(), vec![v.clone()]));
                }
            }
            SpreadConstraint {
                max_skew: c.max_skew as i64,
                topology_key: c.topology_key.clone(),
                hard,
                selector,
                min_domains: c.min_domains.unwrap_or(1) as i64,
                honor_node_affinity: c.node_affinity_policy.as_deref() != Some("Ignore"),
                honor_node_taints: c.node_taints_policy.as_deref() == Some("Honor"),
            }
        })
        .collect()
}

/// `DefaultSelector`: the merged selectors of Services selecting the pod and of its controller.
pub fn default_selector(pod: &PodInfo, listers: &Listers) -> Selector {
    let ns = pod.namespace().to_string();
    let labels = pod.labels();
    let mut requirements: Vec<Requirement> = Vec::new();
    // The namespace's Services sit together in the map ("Service/…" keys sort between
    // "ReplicationController/…" and "StatefulSet/…"): range over them alone, not over the
    // namespace's every ReplicaSet.
    let services = listers.workload_selectors.range((ns.clone(), "Service/".to_string())..);
    for (_, sel) in services.take_while(|((n, kind_name), _)| *n == ns && kind_name.starts_with("Service/")) {
        if sel.matches(labels) {
            for r in &sel.requirements {
                if !requirements.contains(r) {
                    requirements.push(r.clone());
                }
            }
        }
    }
    if let Some(owner) = pod.pod().metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true)) {
        let key = (ns.clone(), format!("{}/{}", owner.kind, owner.name));
        if matches!(owner.kind.as_str(), "ReplicaSet" | "StatefulSet" | "ReplicationController") {
            if let Some(sel) = listers.workload_selectors.get(&key) {
                for r in &sel.requirements {
                    if !requirements.contains(r) {
                        requirements.push(r.clone());
                    }
                }
            }
        }
    }
    Selector { requirements, matches_nothing: false }
}

/// Pods on a node in `namespace` matching the selector and not terminating
/// (`countPodsMatchSelector`).
pub fn count_pods_match_selector(pods: &[std::sync::Arc<PodInfo>], selector: &Selector, namespace: &str) -> i64 {
    if selector.is_empty() && !selector.matches_nothing {
        return pods.iter().filter(|p| p.namespace() == namespace && !p.is_terminating()).count() as i64;
    }
    pods.iter().filter(|p| p.namespace() == namespace && !p.is_terminating() && selector.matches(p.labels())).count() as i64
}

/// PreFilter state: per constraint, matching pod counts per topology domain (as v1.34's
/// per-constraint `TpValueToMatchNum`) and the minimum over eligible domains.
#[derive(Clone, Debug, Default)]
pub struct FilterState {
    /// The hard constraints.
    pub constraints: Vec<SpreadConstraint>,
    /// Per constraint: each node's domain id (by cache index; [`NO_DOMAIN`] if it lacks the key).
    pub node_domains: Vec<std::sync::Arc<[u32]>>,
    /// Per constraint: matching pods per domain id (None: not an eligible domain).
    pub counts: Vec<Vec<Option<i64>>>,
    /// Per constraint: minimum over domains (i64::MAX if no domain).
    pub min_match: Vec<i64>,
    /// Per constraint: number of domains.
    pub domains: Vec<usize>,
}

impl FilterState {
    fn recompute(&mut self) {
        self.min_match.clear();
        self.domains.clear();
        for counts in &self.counts {
            let mut min = i64::MAX;
            let mut n = 0;
            for v in counts.iter().flatten() {
                n += 1;
                min = min.min(*v);
            }
            self.min_match.push(min);
            self.domains.push(n);
        }
    }

    fn domain(&self, i: usize, node: &NodeInfo) -> u32 {
        self.node_domains[i].get(node.index).copied().unwrap_or(NO_DOMAIN)
    }

    /// The Filter verdict for a node (`Filter` of filtering.go).
    pub fn check(&self, pod: &PodInfo, node: &NodeInfo) -> Status {
        for (i, c) in self.constraints.iter().enumerate() {
            let id = self.domain(i, node);
            if id == NO_DOMAIN {
                return Status::unresolvable(ERR_NODE_LABEL_NOT_MATCH);
            }
            let mut min = self.min_match[i];
            if (self.domains[i] as i64) < c.min_domains {
                min = 0;
            }
            let self_match = i64::from(c.selector.matches(pod.labels()));
            let count = self.counts[i].get(id as usize).copied().flatten().unwrap_or(0);
            let skew = count.saturating_add(self_match).saturating_sub(min);
            if skew > c.max_skew {
                return Status::unschedulable(ERR_CONSTRAINTS_NOT_MATCH);
            }
        }
        Status::success()
    }

    fn apply(&mut self, pod: &PodInfo, other: &PodInfo, node: &NodeInfo, delta: i64) {
        if other.namespace() != pod.namespace() || (0..self.constraints.len()).any(|i| self.domain(i, node) == NO_DOMAIN) {
            return;
        }
        for i in 0..self.constraints.len() {
            let c = &self.constraints[i];
            if !c.includes_node(pod, node) || !c.selector.matches(other.labels()) {
                continue;
            }
            let id = self.domain(i, node) as usize;
            if let Some(slot) = self.counts[i].get_mut(id) {
                *slot = Some(slot.unwrap_or(0) + delta);
            }
        }
        self.recompute();
    }
}

/// Matching pods per node, one count per node (by cache index).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeCounts(pub Vec<i64>);

impl NodeCounts {
    /// `(node index, count)` of the nodes whose count is not zero, by index.
    pub fn nonzero(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        self.0.iter().copied().enumerate().filter(|(_, c)| *c != 0)
    }
    /// The count of the node at `index`.
    pub fn get(&self, index: usize) -> i64 {
        self.0.get(index).copied().unwrap_or(0)
    }
}

/// Per-node counts of pods matching a constraint's selector in the pod's namespace: memoized
/// in `counter` when given, recounting the nodes that changed since the key's last query, or
/// taken from the cache's label index when given (and `nodes` are its nodes) where that visits
/// fewer pods (many Deployments interleaved: most nodes changed in between; one large one: a
/// node or two); else from the label index; else counted node by node.
pub fn node_counts(pod: &PodInfo, c: &SpreadConstraint, nodes: &[NodeInfo], counter: Option<&CountCache>, cache: Option<&Cache>) -> NodeCounts {
    let ns = pod.namespace();
    debug_assert!(cache.is_none_or(|cache| std::ptr::eq(cache.nodes(), nodes)), "node_counts: nodes must be the cache's");
    let f = |n: &NodeInfo| count_pods_match_selector(&n.pods, &c.selector, ns);
    let from_index = |cache: &Cache| {
        let mut dense = vec![0i64; nodes.len()];
        for (i, n) in cache.selector_counts(ns, &c.selector)? {
            dense[i] = n;
        }
        Some(dense)
    };
    NodeCounts(match (counter, cache) {
        (Some(cc), cache) => {
            let fill = |stale_pods: usize| {
                let cache = cache?;
                if cache.selector_candidates(ns, &c.selector)? >= stale_pods {
                    return None;
                }
                from_index(cache)
            };
            cc.counts_or_fill(&format!("{ns}|{:?}", c.selector), nodes, cache, f, fill)
        }
        (None, Some(cache)) => from_index(cache).unwrap_or_else(|| nodes.iter().map(f).collect()),
        (None, None) => nodes.iter().map(f).collect(),
    })
}

/// Computes the PreFilter state over all nodes (memoizing counts and domains when given).
pub fn filter_state(
    pod: &PodInfo,
    constraints: Vec<SpreadConstraint>,
    nodes: &[NodeInfo],
    counter: Option<&CountCache>,
    domains: Option<&DomainCache>,
    cache: Option<&Cache>,
) -> FilterState {
    let fresh = DomainCache::default();
    let domains = domains.unwrap_or(&fresh);
    let mut s = FilterState { constraints, ..Default::default() };
    let per_node: Vec<NodeCounts> = s.constraints.iter().map(|c| node_counts(pod, c, nodes, counter, cache)).collect();
    let epoch = cache.filter(|cache| std::ptr::eq(cache.nodes(), nodes)).map(|cache| cache.label_epoch());
    for c in &s.constraints {
        let (ids, n) = domains.ids(&c.topology_key, nodes, epoch);
        s.node_domains.push(ids);
        s.counts.push(vec![None; n]);
    }
    let simple_affinity = pod
        .pod()
        .spec
        .as_ref()
        .is_none_or(|sp| sp.node_selector.as_ref().is_none_or(|m| m.is_empty()) && sp.affinity.as_ref().is_none_or(|a| a.node_affinity.is_none()));
    for (n, node) in nodes.iter().enumerate() {
        if s.node_domains.iter().any(|ids| ids[n] == NO_DOMAIN) {
            continue;
        }
        for (i, c) in s.constraints.iter().enumerate() {
            let included = if simple_affinity && !c.honor_node_taints { true } else { c.includes_node(pod, node) };
            if !included {
                continue;
            }
            let slot = &mut s.counts[i][s.node_domains[i][n] as usize];
            *slot = Some(slot.unwrap_or(0) + per_node[i].get(n));
        }
    }
    s.recompute();
    s
}

/// PreScore state.
#[derive(Clone, Debug, Default)]
pub struct ScoreState {
    /// The soft constraints in effect.
    pub constraints: Vec<SpreadConstraint>,
    /// Feasible nodes ignored (missing keys), by name.
    pub ignored: BTreeSet<String>,
    /// Per constraint: domain id → matching pods (non-hostname keys; domains of feasible nodes).
    pub domain_counts: Vec<Vec<i64>>,
    /// Per constraint: each node's domain id (by cache index).
    pub domain_ids: Vec<std::sync::Arc<[u32]>>,
    /// Per constraint: ln(size + 2).
    pub weights: Vec<f64>,
    /// Ignored flags in feasible order (for NormalizeScore).
    pub ignored_in_order: Vec<bool>,
    /// Per constraint with the hostname key: matching pods per node (by cache index).
    pub host_counts: Vec<Option<NodeCounts>>,
}

/// `scoreForCount`.
pub fn score_for_count(count: i64, max_skew: i64, weight: f64) -> f64 {
    count as f64 * weight + (max_skew - 1) as f64
}

/// NormalizeScore of PodTopologySpread.
pub fn normalize_spread(scores: &mut [i64], ignored: &[bool]) {
    let mut min = i64::MAX;
    let mut max = 0i64;
    for (i, s) in scores.iter().enumerate() {
        if ignored.get(i).copied().unwrap_or(false) {
            continue;
        }
        min = min.min(*s);
        max = max.max(*s);
    }
    for (i, s) in scores.iter_mut().enumerate() {
        if ignored.get(i).copied().unwrap_or(false) {
            *s = 0;
        } else if max == 0 {
            *s = MAX_NODE_SCORE;
        } else {
            *s = MAX_NODE_SCORE * (max + min - *s) / max;
        }
    }
}

/// The PodTopologySpread plugin.
#[derive(Debug, Clone)]
pub struct PodTopologySpread {
    /// Whether the defaults are the system defaults (defaultingType System).
    pub system_defaulted: bool,
    /// Default constraints for pods without their own (selector filled in per pod).
    pub default_constraints: Vec<SpreadConstraint>,
    /// Memoized per-node matching-pod counts.
    pub counter: CountCache,
    /// Memoized per-node topology domains.
    pub domains: DomainCache,
}

impl Default for PodTopologySpread {
    fn default() -> Self {
        PodTopologySpread {
            system_defaulted: true,
            default_constraints: system_default_constraints(),
            counter: CountCache::default(),
            domains: DomainCache::default(),
        }
    }
}

impl PodTopologySpread {
    fn has_own_constraints(pod: &PodInfo) -> bool {
        pod.pod().spec.as_ref().and_then(|s| s.topology_spread_constraints.as_ref()).is_some_and(|c| !c.is_empty())
    }

    /// `getConstraints` for hard (filter) or soft (score) constraints.
    pub fn constraints(&self, pod: &PodInfo, listers: &Listers, hard: bool) -> Vec<SpreadConstraint> {
        if Self::has_own_constraints(pod) {
            return pod_constraints(pod, hard);
        }
        let wanted: Vec<&SpreadConstraint> = self.default_constraints.iter().filter(|c| c.hard == hard).collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        let selector = default_selector(pod, listers);
        if selector.is_empty() {
            return Vec::new();
        }
        wanted.into_iter().map(|c| SpreadConstraint { selector: selector.clone(), ..c.clone() }).collect()
    }
}

impl Plugin for PodTopologySpread {
    fn name(&self) -> &'static str {
        "PodTopologySpread"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreFilter, Point::Filter, Point::PreScore, Point::Score]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[
            ClusterEvent::AssignedPodAdd,
            ClusterEvent::AssignedPodUpdate,
            ClusterEvent::AssignedPodDelete,
            ClusterEvent::NodeAdd,
            ClusterEvent::NodeLabel,
            ClusterEvent::NodeTaint,
            ClusterEvent::UnscheduledPodUpdate,
        ]
    }
    /// An assigned pod's arrival can only help if it matches the rejected pod's own spread
    /// selector in its namespace (isSchedulableAfterPodChange).
    fn queueing_hint(&self, rejected: &PodInfo, event: ClusterEvent, involved: Option<&PodInfo>) -> bool {
        let (ClusterEvent::AssignedPodAdd, Some(added)) = (event, involved) else { return true };
        let own = pod_constraints(rejected, true);
        own.is_empty() || (added.namespace() == rejected.namespace() && own.iter().any(|c| c.selector.matches(added.labels())))
    }
    fn pre_filter(&self, state: &mut CycleState, pod: &PodInfo, view: &ClusterView) -> (Status, Option<BTreeSet<String>>) {
        let constraints = self.constraints(pod, view.listers, true);
        if constraints.is_empty() {
            return (Status::skip(), None);
        }
        state.write(FILTER_KEY, filter_state(pod, constraints, view.nodes(), Some(&self.counter), Some(&self.domains), Some(view.cache)));
        (Status::success(), None)
    }
    fn pre_filter_add_pod(&self, state: &mut CycleState, pod: &PodInfo, added: &PodInfo, node: &NodeInfo) {
        if let Some(s) = state.read_mut::<FilterState>(FILTER_KEY) {
            s.apply(pod, added, node, 1);
        }
    }
    fn pre_filter_remove_pod(&self, state: &mut CycleState, pod: &PodInfo, removed: &PodInfo, node: &NodeInfo) {
        if let Some(s) = state.read_mut::<FilterState>(FILTER_KEY) {
            s.apply(pod, removed, node, -1);
        }
    }
    fn filter(&self, state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        match state.read::<FilterState>(FILTER_KEY) {
            Some(s) => s.check(pod, node),
            None => Status::success(),
        }
    }
    fn pre_score(&self, state: &mut CycleState, pod: &PodInfo, feasible: &[&NodeInfo], view: &ClusterView) -> Status {
        let constraints = self.constraints(pod, view.listers, false);
        if constraints.is_empty() {
            return Status::skip();
        }
        let require_all = Self::has_own_constraints(pod) || !self.system_defaulted;
        let nodes = view.nodes();
        let mut s = ScoreState::default();
        // Domain ids per node for every constraint's key (memoized label lookups).
        let domains: Vec<(std::sync::Arc<[u32]>, usize)> =
            constraints.iter().map(|c| self.domains.ids(&c.topology_key, nodes, Some(view.cache.label_epoch()))).collect();
        // Hostname constraints count per node (`host_counts`): no per-domain tables for them.
        let per_domain = |i: usize| constraints[i].topology_key != HOSTNAME;
        let mut present: Vec<Vec<bool>> = domains.iter().enumerate().map(|(i, (_, n))| vec![false; if per_domain(i) { *n } else { 0 }]).collect();
        let mut sizes = vec![0usize; constraints.len()];
        for node in feasible {
            if require_all && domains.iter().any(|(ids, _)| ids[node.index] == NO_DOMAIN) {
                s.ignored.insert(node.name.clone());
                s.ignored_in_order.push(true);
                continue;
            }
            s.ignored_in_order.push(false);
            for (i, c) in constraints.iter().enumerate() {
                if c.topology_key == HOSTNAME {
                    continue;
                }
                let id = domains[i].0[node.index];
                if id != NO_DOMAIN && !present[i][id as usize] {
                    present[i][id as usize] = true;
                    sizes[i] += 1;
                }
            }
        }
        for (i, c) in constraints.iter().enumerate() {
            let size = if c.topology_key == HOSTNAME { feasible.len() - s.ignored.len() } else { sizes[i] };
            s.weights.push(((size + 2) as f64).ln());
        }
        let per_node: Vec<Option<NodeCounts>> =
            constraints.iter().map(|c| (c.topology_key != HOSTNAME).then(|| node_counts(pod, c, nodes, Some(&self.counter), Some(view.cache)))).collect();
        s.host_counts =
            constraints.iter().map(|c| (c.topology_key == HOSTNAME).then(|| node_counts(pod, c, nodes, Some(&self.counter), Some(view.cache)))).collect();
        let simple_affinity = pod
            .pod()
            .spec
            .as_ref()
            .is_none_or(|sp| sp.node_selector.as_ref().is_none_or(|m| m.is_empty()) && sp.affinity.as_ref().is_none_or(|a| a.node_affinity.is_none()));
        s.domain_counts = domains.iter().enumerate().map(|(i, (_, n))| vec![0i64; if per_domain(i) { *n } else { 0 }]).collect();
        // Only nodes holding matching pods add to a domain's count (a sparse count visits just
        // those; zeros add nothing).
        for (i, c) in constraints.iter().enumerate() {
            let Some(counts) = per_node[i].as_ref() else { continue };
            for (n, count) in counts.nonzero() {
                if require_all && domains.iter().any(|(ids, _)| ids[n] == NO_DOMAIN) {
                    continue;
                }
                let id = domains[i].0[n];
                if id == NO_DOMAIN || !present[i][id as usize] {
                    continue;
                }
                let included = if simple_affinity && !c.honor_node_taints { true } else { c.includes_node(pod, &nodes[n]) };
                if included {
                    s.domain_counts[i][id as usize] += count;
                }
            }
        }
        s.domain_ids = domains.into_iter().map(|(ids, _)| ids).collect();
        s.constraints = constraints;
        state.write(SCORE_KEY, s);
        Status::success()
    }
    fn score(&self, state: &CycleState, pod: &PodInfo, node: &NodeInfo, _view: &ClusterView) -> i64 {
        let Some(s) = state.read::<ScoreState>(SCORE_KEY) else { return 0 };
        if !s.ignored.is_empty() && s.ignored.contains(&node.name) {
            return 0;
        }
        let mut score = 0f64;
        for (i, c) in s.constraints.iter().enumerate() {
            let id = s.domain_ids[i].get(node.index).copied().unwrap_or(NO_DOMAIN);
            if id == NO_DOMAIN {
                continue;
            }
            let count = if c.topology_key == HOSTNAME {
                match s.host_counts.get(i).and_then(|h| h.as_ref()) {
                    Some(counts) => counts.get(node.index),
                    None => count_pods_match_selector(&node.pods, &c.selector, pod.namespace()),
                }
            } else {
                s.domain_counts[i][id as usize]
            };
            score += score_for_count(count, c.max_skew, s.weights[i]);
        }
        score.round() as i64
    }
    fn normalize(&self, state: &CycleState, _pod: &PodInfo, scores: &mut [i64]) {
        if let Some(s) = state.read::<ScoreState>(SCORE_KEY) {
            normalize_spread(scores, &s.ignored_in_order);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::{score_all_nodes, Listers};
    use crate::harness::{make_node, make_pod};
    use k8s_openapi::api::core::v1::TopologySpreadConstraint;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use kubesim_api::Object;
    use std::sync::Arc;

    fn pod(name: &str, soft: bool) -> Arc<PodInfo> {
        let mut p = make_pod(name, &[]);
        p.metadata.labels = Some([("app".to_string(), "w".to_string())].into());
        if soft {
            p.spec.as_mut().unwrap().topology_spread_constraints = Some(vec![TopologySpreadConstraint {
                max_skew: 2,
                topology_key: "zone".into(),
                when_unsatisfiable: "ScheduleAnyway".into(),
                label_selector: Some(LabelSelector { match_labels: Some([("app".to_string(), "w".to_string())].into()), ..Default::default() }),
                ..Default::default()
            }]);
        }
        Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(p)))))
    }

    // `DefaultSelector` (pkg/scheduler/framework/plugins/helper/spread.go): the requirements of
    // every Service of the pod's namespace that selects it, in lister order, then its
    // controller's (ReplicaSet, ReplicationController or StatefulSet), each requirement once.
    #[test]
    fn default_selector_merges_selecting_services_and_the_controller() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
        use std::collections::BTreeMap;
        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> { pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() };
        let mut listers = Listers::default();
        let mut add = |ns: &str, kind_name: &str, pairs: &[(&str, &str)]| {
            listers.workload_selectors.insert((ns.to_string(), kind_name.to_string()), Selector::from_map(&map(pairs)));
        };
        add("ns", "ReplicaSet/rs1", &[("app", "web"), ("rs", "one")]);
        add("ns", "ReplicaSet/rs2", &[("app", "web"), ("rs", "two")]);
        add("ns", "ReplicationController/rc", &[("app", "web"), ("rc", "x")]);
        add("ns", "Service/a", &[("app", "web")]);
        add("ns", "Service/b", &[("app", "other")]);
        add("ns", "Service/c", &[("tier", "fe")]);
        add("ns", "StatefulSet/s", &[("app", "web"), ("sts", "y")]);
        // A workload that is no Service selects the pod too: it adds nothing unless it owns it.
        add("ns", "StatefulSet/t", &[("zone", "before")]);
        // Services of other namespaces (sorting before and after "ns") select nothing here.
        add("nr", "Service/z", &[("zone", "before")]);
        add("nt", "Service/z", &[("zone", "after")]);
        let mut p = make_pod("p", &[]);
        p.metadata.namespace = Some("ns".into());
        p.metadata.labels = Some(map(&[("app", "web"), ("tier", "fe"), ("zone", "before")]));
        p.metadata.owner_references =
            Some(vec![OwnerReference { kind: "ReplicaSet".into(), name: "rs1".into(), controller: Some(true), ..Default::default() }]);
        let info = PodInfo::new(Arc::new(Object::Pod(Box::new(p.clone()))));
        let want = |pairs: &[(&str, &str)]| -> Vec<Requirement> { pairs.iter().map(|(k, v)| Requirement::In(k.to_string(), vec![v.to_string()])).collect() };
        assert_eq!(default_selector(&info, &listers).requirements, want(&[("app", "web"), ("tier", "fe"), ("rs", "one")]));
        // Owned by a StatefulSet: its selector instead; a Deployment owner adds nothing.
        p.metadata.owner_references.as_mut().unwrap()[0].kind = "StatefulSet".into();
        p.metadata.owner_references.as_mut().unwrap()[0].name = "s".into();
        let info = PodInfo::new(Arc::new(Object::Pod(Box::new(p.clone()))));
        assert_eq!(default_selector(&info, &listers).requirements, want(&[("app", "web"), ("tier", "fe"), ("sts", "y")]));
        p.metadata.owner_references.as_mut().unwrap()[0].kind = "Deployment".into();
        let info = PodInfo::new(Arc::new(Object::Pod(Box::new(p))));
        assert_eq!(default_selector(&info, &listers).requirements, want(&[("app", "web"), ("tier", "fe")]));
    }

    // The memoizing plugin (reused across cycles) must score exactly like a fresh one after
    // pods move and node labels change.
    #[test]
    fn memoized_scoring_tracks_cluster_changes() {
        let mut cache = Cache::default();
        for i in 0..6 {
            let zone = ["a", "b", "c"][i % 3];
            cache.upsert_node(Arc::new(make_node(&format!("n{i}"), &[("cpu", "4"), ("pods", "110")], &[("zone", zone)], vec![])));
        }
        let listers = Listers::default();
        let reused = PodTopologySpread::default();
        let incoming = pod("in", true);
        for step in 0..8 {
            cache.upsert_pod(pod(&format!("p{step}"), false), &format!("n{}", (step * 5) % 6));
            if step == 4 {
                cache.upsert_node(Arc::new(make_node("n1", &[("cpu", "4"), ("pods", "110")], &[("zone", "c")], vec![])));
            }
            if step == 6 {
                cache.upsert_node(Arc::new(make_node("n2", &[("cpu", "4"), ("pods", "110")], &[], vec![])));
            }
            let view = ClusterView { cache: &cache, listers: &listers };
            let fresh = PodTopologySpread::default();
            assert_eq!(score_all_nodes(&reused, &incoming, &view), score_all_nodes(&fresh, &incoming, &view), "step {step}");
            // Filtering with a hard version of the constraint: memoized and fresh agree node by node.
            let mut hard = pod_constraints(&incoming, false);
            for c in &mut hard {
                c.hard = true;
            }
            let memo = filter_state(&incoming, hard.clone(), cache.nodes(), Some(&reused.counter), Some(&reused.domains), Some(&cache));
            let plain = filter_state(&incoming, hard, cache.nodes(), None, None, None);
            for n in cache.nodes() {
                assert_eq!(memo.check(&incoming, n), plain.check(&incoming, n), "step {step} node {}", n.name);
            }
            assert_eq!((memo.min_match.clone(), memo.domains.clone()), (plain.min_match.clone(), plain.domains.clone()));
        }
    }

    // The cache's label index counts exactly what a node-by-node count does, through
    // assumed, confirmed, relabelled, terminating, orphaned and removed pods and a removed node.
    #[test]
    fn label_index_counts_match_node_by_node_counts() {
        let mut cache = Cache::default();
        for i in 0..4 {
            cache.upsert_node(Arc::new(make_node(&format!("n{i}"), &[("cpu", "4"), ("pods", "110")], &[], vec![])));
        }
        let labelled = |name: &str, ns: &str, labels: &[(&str, &str)], terminating: bool| {
            let mut p = make_pod(name, &[]);
            p.metadata.namespace = Some(ns.into());
            p.metadata.labels = Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
            if terminating {
                p.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Default::default()));
            }
            Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(p)))))
        };
        let selectors: Vec<Selector> = vec![
            Selector { requirements: vec![Requirement::In("app".into(), vec!["a".into()])], matches_nothing: false },
            Selector {
                requirements: vec![
                    Requirement::In("app".into(), vec!["a".into(), "b".into(), "a".into()]),
                    Requirement::NotIn("tier".into(), vec!["x".into()]),
                ],
                matches_nothing: false,
            },
            Selector { requirements: vec![Requirement::Exists("tier".into()), Requirement::In("app".into(), vec!["b".into()])], matches_nothing: false },
            Selector { requirements: vec![Requirement::In("app".into(), vec!["a".into()])], matches_nothing: true },
        ];
        let check = |cache: &Cache, step: &str| {
            for ns in ["default", "other"] {
                for sel in &selectors {
                    let sparse = cache.selector_counts(ns, sel).expect("an In requirement");
                    assert!(sparse.windows(2).all(|w| w[0].0 < w[1].0) && sparse.iter().all(|(i, n)| *i < cache.nodes().len() && *n > 0), "{sparse:?}");
                    let plain: Vec<i64> = cache.nodes().iter().map(|n| count_pods_match_selector(&n.pods, sel, ns)).collect();
                    let mut indexed = vec![0; plain.len()];
                    for (i, n) in sparse {
                        indexed[i] = n;
                    }
                    assert_eq!(indexed, plain, "{step}: {ns} {sel:?}");
                }
            }
        };
        cache.assume_pod(labelled("p1", "default", &[("app", "a")], false), "n0");
        cache.upsert_pod(labelled("p2", "default", &[("app", "b"), ("tier", "x")], false), "n1");
        cache.upsert_pod(labelled("p3", "other", &[("app", "a")], false), "n1");
        cache.upsert_pod(labelled("p4", "default", &[("app", "a"), ("tier", "y")], false), "n9");
        check(&cache, "added (one orphan)");
        cache.upsert_pod(labelled("p1", "default", &[("app", "a")], false), "n2");
        cache.upsert_pod(labelled("p2", "default", &[("app", "a"), ("tier", "z")], false), "n1");
        check(&cache, "confirmed elsewhere, relabelled");
        assert!(cache.refresh_pod(labelled("p2", "default", &[("app", "a"), ("tier", "z")], true), "n1"));
        check(&cache, "terminating");
        cache.upsert_node(Arc::new(make_node("n9", &[("cpu", "4"), ("pods", "110")], &[], vec![])));
        check(&cache, "orphan's node arrives");
        cache.remove_node("n1");
        check(&cache, "node removed");
        cache.remove_pod("default/p1");
        cache.remove_pod("default/p4");
        check(&cache, "pods removed");
        let empty = Selector { requirements: vec![Requirement::Exists("app".into())], matches_nothing: false };
        assert_eq!(cache.selector_counts("default", &empty), None, "no In requirement: counted node by node");
    }

    // Memoized counts: a key's first query and one after a few changed nodes recount those
    // nodes; after many other pods landed on every node (more to recount than pods carrying
    // the selector's value) the counts come from the label index. Each time the same as
    // counting node by node.
    #[test]
    fn memoized_counts_refill_from_the_label_index_when_cheaper() {
        let mut cache = Cache::default();
        for i in 0..4 {
            cache.upsert_node(Arc::new(make_node(&format!("n{i}"), &[("cpu", "4"), ("pods", "110")], &[("zone", "a")], vec![])));
        }
        let incoming = pod("in", true);
        let constraints = pod_constraints(&incoming, false);
        let c = &constraints[0];
        let counter = CountCache::default();
        let plain = |cache: &Cache| NodeCounts(cache.nodes().iter().map(|n| count_pods_match_selector(&n.pods, &c.selector, incoming.namespace())).collect());
        cache.upsert_pod(pod("w0", false), "n0");
        assert_eq!(node_counts(&incoming, c, cache.nodes(), Some(&counter), Some(&cache)), plain(&cache));
        cache.upsert_pod(pod("w1", false), "n1");
        assert_eq!(node_counts(&incoming, c, cache.nodes(), Some(&counter), Some(&cache)), plain(&cache));
        for i in 0..40 {
            let mut p = make_pod(&format!("x{i}"), &[]);
            p.metadata.labels = Some([("app".to_string(), "x".to_string())].into());
            cache.upsert_pod(Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(p))))), &format!("n{}", i % 4));
        }
        cache.upsert_pod(pod("w2", false), "n3");
        assert!(cache.selector_candidates(incoming.namespace(), &c.selector) == Some(3));
        assert_eq!(node_counts(&incoming, c, cache.nodes(), Some(&counter), Some(&cache)), plain(&cache));
    }
}
