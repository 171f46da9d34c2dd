//! InterPodAffinity (PreFilter, Filter, PreScore, Score weight 2) — `plugins/interpodaffinity`
//! (filtering.go, scoring.go).

use crate::cache::{AffinityTerm, NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, CycleState, Listers, Plugin, Point, Status, MAX_NODE_SCORE};
use crate::plugins::helper::{CountCache, DomainCache, PairCounts};
use std::collections::{BTreeMap, BTreeSet};

/// Incoming pod's required affinity unsatisfied.
pub const ERR_AFFINITY: &str = "node(s) didn't match pod affinity rules";
/// Incoming pod's required anti-affinity violated.
pub const ERR_ANTI_AFFINITY: &str = "node(s) didn't match pod anti-affinity rules";
/// An existing pod's required anti-affinity would be violated.
pub const ERR_EXISTING_ANTI_AFFINITY: &str = "node(s) didn't satisfy existing pods anti-affinity rules";
const FILTER_KEY: &str = "PreFilterInterPodAffinity";
const SCORE_KEY: &str = "PreScoreInterPodAffinity";

/// PreFilter state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilterState {
    /// Topology pairs where existing pods' required anti-affinity matches the incoming pod.
    pub existing_anti_affinity: PairCounts,
    /// Topology pairs with pods matching all the incoming pod's required affinity terms.
    pub affinity: PairCounts,
    /// Topology pairs with pods matching the incoming pod's required anti-affinity terms.
    pub anti_affinity: PairCounts,
}

fn ns_labels<'a>(listers: &'a Listers, ns: &str) -> Option<&'a BTreeMap<String, String>> {
    listers.namespaces.get(ns)
}

fn matches_all(terms: &[AffinityTerm], pod: &PodInfo, listers: &Listers) -> bool {
    !terms.is_empty() && terms.iter().all(|t| t.matches(pod, ns_labels(listers, pod.namespace())))
}

fn bump(map: &mut PairCounts, key: &str, node: &NodeInfo, delta: i64) {
    if let Some(v) = node.shared_label(key) {
        map.bump_shared(key, v, delta);
    }
}

impl FilterState {
    fn account_existing(&mut self, pod: &PodInfo, existing: &PodInfo, node: &NodeInfo, listers: &Listers, delta: i64) {
        for t in &existing.required_anti_affinity {
            if t.matches(pod, ns_labels(listers, pod.namespace())) {
                bump(&mut self.existing_anti_affinity, &t.topology_key, node, delta);
            }
        }
        if matches_all(&pod.required_affinity, existing, listers) {
            for t in &pod.required_affinity {
                bump(&mut self.affinity, &t.topology_key, node, delta);
            }
        }
        for t in &pod.required_anti_affinity {
            if t.matches(existing, ns_labels(listers, existing.namespace())) {
                bump(&mut self.anti_affinity, &t.topology_key, node, delta);
            }
        }
    }

    /// The Filter verdict for a node.
    pub fn check(&self, pod: &PodInfo, node: &NodeInfo, listers: &Listers) -> Status {
        let labels = node.labels();
        // satisfyPodAffinity
        let mut pods_exist = true;
        for t in &pod.required_affinity {
            match labels.and_then(|l| l.get(&t.topology_key)) {
                Some(v) => {
                    if self.affinity.get(&t.topology_key, v) <= 0 {
                        pods_exist = false;
                    }
                }
                None => return Status::unresolvable(ERR_AFFINITY),
            }
        }
        if !(pods_exist || self.affinity.is_empty() && matches_all(&pod.required_affinity, pod, listers)) {
            return Status::unresolvable(ERR_AFFINITY);
        }
        // satisfyPodAntiAffinity
        for t in &pod.required_anti_affinity {
            if let Some(v) = labels.and_then(|l| l.get(&t.topology_key)) {
                if self.anti_affinity.get(&t.topology_key, v) > 0 {
                    return Status::unschedulable(ERR_ANTI_AFFINITY);
                }
            }
        }
        // satisfyExistingPodsAntiAffinity
        if !self.existing_anti_affinity.is_empty() {
            for (k, v) in labels.into_iter().flatten() {
                if self.existing_anti_affinity.get(k, v) > 0 {
                    return Status::unschedulable(ERR_EXISTING_ANTI_AFFINITY);
                }
            }
        }
        Status::success()
    }
}

/// Per-node counts over `nodes`: memoized in `counter` under `key` while a node is unchanged,
/// or computed afresh when there is no key (a term with a namespace selector depends on
/// namespace labels, which no node generation tracks).
fn node_counts(counter: &CountCache, key: Option<String>, nodes: &[NodeInfo], f: impl Fn(&NodeInfo) -> i64) -> Vec<i64> {
    match key {
        Some(key) => counter.counts(&key, nodes, f),
        None => nodes.iter().map(f).collect(),
    }
}

/// A memo key naming what a term matches (selector and namespaces), or None when it has a
/// namespace selector.
fn term_key(kind: &str, t: &AffinityTerm) -> Option<String> {
    t.namespace_selector.is_none().then(|| format!("{kind}|{:?}|{:?}", t.selector, t.namespaces))
}

/// Below one pod with affinity terms per this many nodes, PreScore walks the nodes holding
/// them instead of memoizing counts over all nodes.
const SPARSE_AFFINITY_PODS: usize = 16;

/// A memo key naming what existing pods' terms see of an incoming pod: its namespace, that
/// namespace's labels and its own labels.
fn incoming_key(pod: &PodInfo, listers: &Listers) -> String {
    format!("{}|{:?}|{:?}", pod.namespace(), ns_labels(listers, pod.namespace()), pod.labels())
}

/// Computes the PreFilter state over all nodes, memoizing per-node counts in `counter`
/// (exact: the same counts `filter_state` computes, reused while a node is unchanged).
pub fn filter_state_cached(pod: &PodInfo, cache: &crate::cache::Cache, listers: &Listers, counter: &CountCache) -> FilterState {
    let nodes = cache.nodes();
    let mut s = FilterState::default();
    let ns = pod.namespace();
    let labels_key = incoming_key(pod, listers);
    // Existing pods' anti-affinity terms matching the incoming pod, per topology key.
    if cache.pods_with_required_anti_affinity() > 0 {
        let ns_l = ns_labels(listers, ns);
        for key in cache.anti_affinity_keys() {
            let counts = counter.counts(&format!("existing|{key}|{labels_key}"), nodes, |node| {
                if node.pods_with_required_anti_affinity == 0 {
                    return 0;
                }
                let mut n = 0;
                for existing in node.pods.iter().filter(|p| !p.required_anti_affinity.is_empty()) {
                    n += existing.required_anti_affinity.iter().filter(|t| t.topology_key == key && t.matches(pod, ns_l)).count() as i64;
                }
                n
            });
            for (i, node) in nodes.iter().enumerate() {
                if counts[i] > 0 {
                    bump(&mut s.existing_anti_affinity, key, node, counts[i]);
                }
            }
        }
    }
    // The incoming pod's required anti-affinity terms, per term.
    for t in &pod.required_anti_affinity {
        let counts = node_counts(counter, term_key("anti", t), nodes, |node| {
            node.pods.iter().filter(|e| t.matches(e, ns_labels(listers, e.namespace()))).count() as i64
        });
        for (i, node) in nodes.iter().enumerate() {
            if counts[i] > 0 {
                bump(&mut s.anti_affinity, &t.topology_key, node, counts[i]);
            }
        }
    }
    // The incoming pod's required affinity terms (all must match one existing pod): per node,
    // the pods matching every term.
    if !pod.required_affinity.is_empty() {
        let key: Option<Vec<String>> = pod.required_affinity.iter().map(|t| term_key("", t)).collect();
        let key = key.map(|k| format!("affinity{}", k.concat()));
        let counts = node_counts(counter, key, nodes, |node| node.pods.iter().filter(|e| matches_all(&pod.required_affinity, e, listers)).count() as i64);
        for (i, node) in nodes.iter().enumerate() {
            if counts[i] > 0 {
                for t in &pod.required_affinity {
                    bump(&mut s.affinity, &t.topology_key, node, counts[i]);
                }
            }
        }
    }
    s
}

/// Computes the PreFilter state over all nodes.
pub fn filter_state(pod: &PodInfo, nodes: &[NodeInfo], listers: &Listers) -> FilterState {
    let mut s = FilterState::default();
    let incoming = !pod.required_affinity.is_empty() || !pod.required_anti_affinity.is_empty();
    for node in nodes {
        if node.pods_with_required_anti_affinity > 0 {
            for existing in node.pods.iter().filter(|p| !p.required_anti_affinity.is_empty()) {
                for t in &existing.required_anti_affinity {
                    if t.matches(pod, ns_labels(listers, pod.namespace())) {
                        bump(&mut s.existing_anti_affinity, &t.topology_key, node, 1);
                    }
                }
            }
        }
        if incoming {
            for existing in &node.pods {
                if matches_all(&pod.required_affinity, existing, listers) {
                    for t in &pod.required_affinity {
                        bump(&mut s.affinity, &t.topology_key, node, 1);
                    }
                }
                for t in &pod.required_anti_affinity {
                    if t.matches(existing, ns_labels(listers, existing.namespace())) {
                        bump(&mut s.anti_affinity, &t.topology_key, node, 1);
                    }
                }
            }
        }
    }
    s
}

/// PreScore state: topology key → value → accumulated weight.
#[derive(Clone, Debug, Default)]
pub struct ScoreState {
    /// The topology score map (built by [`ScoreState::process_existing_pod`]).
    pub topology_score: BTreeMap<String, BTreeMap<String, i64>>,
    /// The same map resolved to each node's raw score, by node index, and whether the map
    /// has any entry (built by [`score_state_cached`]).
    pub by_node: Option<(Vec<i64>, bool)>,
}

impl ScoreState {
    fn process_term(&mut self, term: &AffinityTerm, weight: i64, pod: &PodInfo, listers: &Listers, node: &NodeInfo, multiplier: i64) {
        if term.matches(pod, ns_labels(listers, pod.namespace())) {
            if let Some(v) = node.labels().and_then(|l| l.get(&term.topology_key)) {
                *self.topology_score.entry(term.topology_key.clone()).or_default().entry(v.clone()).or_insert(0) += weight * multiplier;
            }
        }
    }

    /// `processExistingPod`.
    pub fn process_existing_pod(&mut self, incoming: &PodInfo, existing: &PodInfo, node: &NodeInfo, hard_weight: i64, listers: &Listers) {
        if node.labels().is_none_or(|l| l.is_empty()) {
            return;
        }
        for t in &incoming.preferred_affinity {
            self.process_term(t, t.weight, existing, listers, node, 1);
        }
        for t in &incoming.preferred_anti_affinity {
            self.process_term(t, t.weight, existing, listers, node, -1);
        }
        if hard_weight > 0 {
            for t in &existing.required_affinity {
                self.process_term(t, hard_weight, incoming, listers, node, 1);
            }
        }
        for t in &existing.preferred_affinity {
            self.process_term(t, t.weight, incoming, listers, node, 1);
        }
        for t in &existing.preferred_anti_affinity {
            self.process_term(t, t.weight, incoming, listers, node, -1);
        }
    }

    /// Whether no term matched (PreScore skips the plugin).
    pub fn is_empty(&self) -> bool {
        match &self.by_node {
            Some((_, any)) => !any,
            None => self.topology_score.is_empty(),
        }
    }

    /// The raw score of a node.
    pub fn score(&self, node: &NodeInfo) -> i64 {
        if let Some((scores, _)) = &self.by_node {
            return scores.get(node.index).copied().unwrap_or(0);
        }
        let labels = node.labels();
        self.topology_score.iter().filter_map(|(k, values)| labels.and_then(|l| l.get(k)).and_then(|v| values.get(v))).sum()
    }
}

/// PreScore's topology scores over all nodes (`processExistingPod` for every existing pod),
/// memoizing per-node sums in `counter` and resolving the topology map to each node's score:
/// the same scores as calling [`ScoreState::process_existing_pod`] for each pod, with the
/// map's (key, value) sums kept in a borrowed scratch map instead of owned strings.
pub fn score_state_cached(pod: &PodInfo, view: &ClusterView, hard_weight: i64, counter: &CountCache, domains: &DomainCache) -> ScoreState {
    let nodes = view.nodes();
    let listers = view.listers;
    // Topology key → per-node domain ids and the summed weight per domain: upstream's
    // topologyScore with each key's values numbered by the domain cache.
    let mut map: Vec<(String, std::sync::Arc<[u32]>, Vec<i64>)> = Vec::new();
    // Returns whether the node has the key's label (processTerm makes an entry only then).
    let mut put = |key: &str, i: usize, weight: i64| -> bool {
        let at = match map.iter().position(|(k, _, _)| k == key) {
            Some(at) => at,
            None => {
                let (ids, count) = domains.ids(key, nodes, Some(view.cache.label_epoch()));
                map.push((key.to_string(), ids, vec![0; count]));
                map.len() - 1
            }
        };
        let (_, ids, sums) = &mut map[at];
        match sums.get_mut(ids[i] as usize) {
            Some(sum) => {
                *sum += weight;
                true
            }
            None => false,
        }
    };
    let mut any = false;
    // The incoming pod's preferred terms against every existing pod: matches per node.
    for (terms, sign, kind) in [(&pod.preferred_affinity, 1, "score-affinity"), (&pod.preferred_anti_affinity, -1, "score-anti")] {
        for t in terms {
            let counts = node_counts(counter, term_key(kind, t), nodes, |node| {
                node.pods.iter().filter(|e| t.matches(e, ns_labels(listers, e.namespace()))).count() as i64
            });
            for (i, count) in counts.iter().enumerate() {
                if *count > 0 {
                    any |= put(&t.topology_key, i, t.weight * sign * count);
                }
            }
        }
    }
    // Existing pods' terms against the incoming pod, per topology key: the summed weight and
    // the number of matching terms (a match makes an entry even where weights cancel).
    if view.cache.pods_with_affinity() > 0 {
        let ns_l = ns_labels(listers, pod.namespace());
        // The incoming pod's memo key, made only when a memo is used (below).
        let mut who: Option<String> = None;
        for key in view.cache.score_keys() {
            // (summed weight, matching terms) of a node's pods.
            let walk = |node: &NodeInfo| {
                let (mut total, mut matched) = (0, 0);
                if node.pods_with_affinity == 0 {
                    return (total, matched);
                }
                for e in node.pods.iter().filter(|p| p.has_affinity()) {
                    let hard = e.required_affinity.iter().filter(|_| hard_weight > 0).map(|t| (t, hard_weight));
                    let soft = e.preferred_affinity.iter().map(|t| (t, t.weight)).chain(e.preferred_anti_affinity.iter().map(|t| (t, -t.weight)));
                    for (t, w) in hard.chain(soft) {
                        if t.topology_key == key && t.matches(pod, ns_l) {
                            total += w;
                            matched += 1;
                        }
                    }
                }
                (total, matched)
            };
            // Only pods with affinity terms can match (upstream walks its
            // `HavePodsWithAffinityList` alone). When there are few (a CoreDNS among
            // thousands of Deployments), walking their nodes costs less than a memo keyed by
            // the incoming pod's labels, which misses as Deployments interleave; when there
            // are many (every pod has terms, or pods drawn together by preferred affinity
            // onto a few nodes), the memo recounts only the nodes changed since the labels'
            // last cycle.
            if view.cache.pods_with_affinity() * SPARSE_AFFINITY_PODS <= nodes.len() {
                for (i, node) in nodes.iter().enumerate().filter(|(_, n)| n.pods_with_affinity > 0) {
                    let (weight, matched) = walk(node);
                    if matched > 0 {
                        any |= put(key, i, weight);
                    }
                }
            } else {
                let who = who.get_or_insert_with(|| incoming_key(pod, listers));
                let weights = counter.counts(&format!("score-existing|{key}|{hard_weight}|{who}"), nodes, |node| walk(node).0);
                let matches = counter.counts(&format!("score-existing-n|{key}|{hard_weight}|{who}"), nodes, |node| walk(node).1);
                for i in 0..nodes.len() {
                    if matches[i] > 0 {
                        any |= put(key, i, weights[i]);
                    }
                }
            }
        }
    }
    let scores = nodes.iter().enumerate().map(|(i, _)| map.iter().filter_map(|(_, ids, sums)| sums.get(ids[i] as usize)).sum()).collect();
    ScoreState { topology_score: BTreeMap::new(), by_node: Some((scores, any)) }
}

/// NormalizeScore of InterPodAffinity (min-max scaling with float math).
pub fn normalize_affinity(scores: &mut [i64]) {
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    for s in scores.iter() {
        min = min.min(*s);
        max = max.max(*s);
    }
    let diff = max.saturating_sub(min);
    for s in scores.iter_mut() {
        let f = if diff > 0 { MAX_NODE_SCORE as f64 * ((*s - min) as f64 / diff as f64) } else { 0.0 };
        *s = f as i64;
    }
}

/// The InterPodAffinity plugin.
#[derive(Debug, Clone)]
pub struct InterPodAffinity {
    /// hardPodAffinityWeight (default 1).
    pub hard_pod_affinity_weight: i64,
    /// Memoized per-node counts for PreFilter and PreScore.
    pub counter: CountCache,
    /// Memoized per-node topology domain ids for PreScore.
    pub domains: DomainCache,
}

impl Default for InterPodAffinity {
    fn default() -> Self {
        InterPodAffinity { hard_pod_affinity_weight: 1, counter: CountCache::default(), domains: DomainCache::default() }
    }
}

/// The listers are needed at Filter time for namespace selectors; the plugin keeps a copy of
/// the namespace labels in its state.
#[derive(Clone, Debug, Default)]
struct FilterData {
    state: FilterState,
    listers: Listers,
}

impl Plugin for InterPodAffinity {
    fn name(&self) -> &'static str {
        "InterPodAffinity"
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
            ClusterEvent::UnscheduledPodUpdate,
        ]
    }
    /// Only required affinity can become satisfied by a pod's arrival
    /// (isSchedulableAfterPodChange).
    fn queueing_hint(&self, rejected: &PodInfo, event: ClusterEvent, involved: Option<&PodInfo>) -> bool {
        let (ClusterEvent::AssignedPodAdd, Some(added)) = (event, involved) else { return true };
        rejected.required_affinity.iter().any(|t| t.namespace_selector.is_some() || t.matches(added, None))
    }
    fn pre_filter(&self, state: &mut CycleState, pod: &PodInfo, view: &ClusterView) -> (Status, Option<BTreeSet<String>>) {
        if view.cache.pods_with_required_anti_affinity() == 0 && pod.required_affinity.is_empty() && pod.required_anti_affinity.is_empty() {
            return (Status::skip(), None);
        }
        let s = filter_state_cached(pod, view.cache, view.listers, &self.counter);
        if s.existing_anti_affinity.is_empty() && pod.required_affinity.is_empty() && pod.required_anti_affinity.is_empty() {
            return (Status::skip(), None);
        }
        let listers = Listers { namespaces: view.listers.namespaces.clone(), ..Default::default() };
        state.write(FILTER_KEY, FilterData { state: s, listers });
        (Status::success(), None)
    }
    fn pre_filter_add_pod(&self, state: &mut CycleState, pod: &PodInfo, added: &PodInfo, node: &NodeInfo) {
        if let Some(d) = state.read_mut::<FilterData>(FILTER_KEY) {
            let listers = std::mem::take(&mut d.listers);
            d.state.account_existing(pod, added, node, &listers, 1);
            d.listers = listers;
        }
    }
    fn pre_filter_remove_pod(&self, state: &mut CycleState, pod: &PodInfo, removed: &PodInfo, node: &NodeInfo) {
        if let Some(d) = state.read_mut::<FilterData>(FILTER_KEY) {
            let listers = std::mem::take(&mut d.listers);
            d.state.account_existing(pod, removed, node, &listers, -1);
            d.listers = listers;
        }
    }
    fn filter(&self, state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        match state.read::<FilterData>(FILTER_KEY) {
            Some(d) => d.state.check(pod, node, &d.listers),
            None => Status::success(),
        }
    }
    fn pre_score(&self, state: &mut CycleState, pod: &PodInfo, _feasible: &[&NodeInfo], view: &ClusterView) -> Status {
        let has_constraints = !pod.preferred_affinity.is_empty() || !pod.preferred_anti_affinity.is_empty();
        if !has_constraints && view.cache.pods_with_affinity() == 0 {
            return Status::skip();
        }
        let s = score_state_cached(pod, view, self.hard_pod_affinity_weight, &self.counter, &self.domains);
        if s.is_empty() {
            return Status::skip();
        }
        state.write(SCORE_KEY, s);
        Status::success()
    }
    fn score(&self, state: &CycleState, _pod: &PodInfo, node: &NodeInfo, _view: &ClusterView) -> i64 {
        state.read::<ScoreState>(SCORE_KEY).map(|s| s.score(node)).unwrap_or(0)
    }
    fn normalize(&self, state: &CycleState, _pod: &PodInfo, scores: &mut [i64]) {
        if state.read::<ScoreState>(SCORE_KEY).is_some() {
            normalize_affinity(scores);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::harness::{make_node, make_pod};
    use k8s_openapi::api::core::v1::{Affinity, PodAffinityTerm, PodAntiAffinity};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use kubesim_api::Object;
    use std::sync::Arc;

    fn anti_pod(name: &str, app: &str, key: &str) -> Arc<PodInfo> {
        let mut p = make_pod(name, &[]);
        p.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        p.spec.as_mut().unwrap().affinity = Some(Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                    label_selector: Some(LabelSelector { match_labels: Some([("app".to_string(), app.to_string())].into()), ..Default::default() }),
                    topology_key: key.into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        });
        Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(p)))))
    }

    // The memoized PreFilter must equal the plain computation, before and after the cluster changes.
    #[test]
    fn cached_filter_state_equals_the_plain_one() {
        let mut cache = Cache::default();
        for i in 0..6 {
            let zone = if i % 2 == 0 { "a" } else { "b" };
            cache.upsert_node(Arc::new(make_node(&format!("n{i}"), &[("cpu", "4"), ("pods", "110")], &[("zone", zone)], vec![])));
        }
        let listers = Listers::default();
        let counter = CountCache::default();
        let incoming = anti_pod("in", "web", "kubernetes.io/hostname");
        for step in 0..6 {
            let p = anti_pod(&format!("p{step}"), if step % 2 == 0 { "web" } else { "db" }, if step % 3 == 0 { "zone" } else { "kubernetes.io/hostname" });
            cache.upsert_pod(p, &format!("n{}", step % 6));
            let plain = filter_state(&incoming, cache.nodes(), &listers);
            let cached = filter_state_cached(&incoming, &cache, &listers, &counter);
            assert_eq!(plain, cached, "step {step}");
            assert!(!plain.anti_affinity.is_empty() || step == 0 || step == 1);
        }
        cache.remove_pod("default/p0");
        assert_eq!(filter_state(&incoming, cache.nodes(), &listers), filter_state_cached(&incoming, &cache, &listers, &counter));
    }

    fn term(app: &str, key: &str) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(LabelSelector { match_labels: Some([("app".to_string(), app.to_string())].into()), ..Default::default() }),
            topology_key: key.into(),
            ..Default::default()
        }
    }

    /// A pod labelled app=`app` with a mix of required affinity and preferred (anti-)affinity
    /// terms chosen by `shape`.
    fn mixed_pod(name: &str, app: &str, shape: usize) -> Arc<PodInfo> {
        use k8s_openapi::api::core::v1::{PodAffinity, WeightedPodAffinityTerm};
        let mut p = make_pod(name, &[]);
        p.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        let keys = ["kubernetes.io/hostname", "zone"];
        let weighted = |w: i32, app: &str, key: &str| WeightedPodAffinityTerm { weight: w, pod_affinity_term: term(app, key) };
        p.spec.as_mut().unwrap().affinity = Some(Affinity {
            pod_affinity: Some(PodAffinity {
                required_during_scheduling_ignored_during_execution: shape.is_multiple_of(3).then(|| vec![term(app, keys[shape % 2])]),
                preferred_during_scheduling_ignored_during_execution: shape.is_multiple_of(2).then(|| vec![weighted(3, "web", keys[(shape / 2) % 2])]),
            }),
            pod_anti_affinity: Some(PodAntiAffinity {
                preferred_during_scheduling_ignored_during_execution: (shape % 4 == 1).then(|| vec![weighted(3, "web", keys[0]), weighted(5, "db", keys[1])]),
                ..Default::default()
            }),
            ..Default::default()
        });
        Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(p)))))
    }

    // The memoized PreScore must equal processExistingPod over every pod, as the cluster
    // changes (pods added and removed, incoming pods of several shapes), and the memoized
    // required-affinity PreFilter the plain one.
    #[test]
    fn cached_score_state_equals_the_plain_one() {
        let mut cache = Cache::default();
        for i in 0..6 {
            let zone = if i % 2 == 0 { "a" } else { "b" };
            let labels: &[(&str, &str)] = if i == 5 { &[] } else { &[("zone", zone)] };
            cache.upsert_node(Arc::new(make_node(&format!("n{i}"), &[("cpu", "4"), ("pods", "110")], labels, vec![])));
        }
        let listers = Listers::default();
        let counter = CountCache::default();
        let domains = DomainCache::default();
        let plain = |pod: &PodInfo, cache: &Cache| {
            let mut s = ScoreState::default();
            for node in cache.nodes() {
                for existing in &node.pods {
                    s.process_existing_pod(pod, existing, node, 1, &listers);
                }
            }
            s
        };
        for step in 0..12 {
            let p = mixed_pod(&format!("p{step}"), ["web", "db"][step % 2], step);
            cache.upsert_pod(p, &format!("n{}", step % 6));
            if step == 7 {
                cache.remove_pod("default/p2");
            }
            for shape in 0..6 {
                let incoming = mixed_pod("in", ["web", "db"][shape % 2], shape);
                let view = ClusterView { cache: &cache, listers: &listers };
                let cached = score_state_cached(&incoming, &view, 1, &counter, &domains);
                let expected = plain(&incoming, &cache);
                assert_eq!(expected.is_empty(), cached.is_empty(), "step {step}, shape {shape}");
                for node in cache.nodes() {
                    assert_eq!(expected.score(node), cached.score(node), "step {step}, shape {shape}, {}", node.name);
                }
                assert_eq!(
                    filter_state(&incoming, cache.nodes(), &listers),
                    filter_state_cached(&incoming, &cache, &listers, &counter),
                    "step {step}, shape {shape}"
                );
            }
        }
        // The comparison covered real scores: both signs, both topology keys.
        let scores = plain(&mixed_pod("in", "web", 0), &cache).topology_score;
        assert!(scores.contains_key("zone") && scores.contains_key("kubernetes.io/hostname"), "{scores:?}");
        assert!(scores.values().flat_map(|v| v.values()).any(|w| *w < 0) && scores.values().flat_map(|v| v.values()).any(|w| *w > 0), "{scores:?}");
    }
}
