//! Explanations: one [`Attempt`] per scheduling attempt (filter verdicts per node and plugin,
//! raw and weighted scores, totals, the selected node, preemption victims, virtual time). The
//! scheduler keeps them in its own memory ([`crate::Scheduler::attempts`]); nothing is written
//! to the API objects (kube-scheduler writes no annotations), so `kubectl describe` and
//! `get -o yaml` show the pods upstream would.

use kubesim_api::Millis;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The filter verdict of a passing plugin.
pub const PASSED: &str = "passed";

/// How an attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Bound to the node.
    Scheduled(String),
    /// No feasible node; the FitError message.
    Unschedulable(String),
    /// An error (binding failed, ...).
    Error(String),
}

/// One Filter verdict: plugin `plugin` on node `node` (an index into [`Attempt::nodes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterRecord {
    /// Index into [`Attempt::nodes`].
    pub node: u32,
    /// The plugin.
    pub plugin: &'static str,
    /// None: passed; otherwise the rejection message.
    pub reason: Option<Box<str>>,
}

/// One Score result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreRecord {
    /// Index into [`Attempt::nodes`].
    pub node: u32,
    /// The plugin.
    pub plugin: &'static str,
    /// The raw score.
    pub raw: i64,
    /// Normalized × weight.
    pub weighted: i64,
}

/// One scheduling attempt of one pod. Per-node details are kept in flat vectors (cheap to
/// record); [`Attempt::filter`], [`Attempt::scores`], [`Attempt::final_scores`] and
/// [`Attempt::totals`] give the by-node maps. When the cluster has more nodes than
/// [`crate::Options::detail_max_nodes`], only the three highest-scored nodes (upstream's
/// `numberOfHighestScoredNodesToReport`) and the selected one keep score details, and filter
/// verdicts are summarized by the FitError message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// Virtual time of the decision.
    pub t_ms: Millis,
    /// The scheduling cycle number (1-based, scheduler-wide).
    pub cycle: u64,
    /// The profile (schedulerName).
    pub profile: String,
    /// The pod's `metadata.uid` (an explanation belongs to one pod object, not to a name that
    /// a recreated pod may reuse).
    pub pod_uid: String,
    /// Number of nodes in the snapshot.
    pub num_all_nodes: usize,
    /// Number of nodes Filter ran on.
    pub evaluated_nodes: usize,
    /// The round-robin index filtering started at.
    pub start_node_index: usize,
    /// Whether per-node details were recorded for every evaluated node.
    pub detailed: bool,
    /// PreFilter results that were not Success: (plugin, "skip" or the rejection message).
    pub pre_filter: Vec<(&'static str, String)>,
    /// Node names referenced by the records.
    pub nodes: Vec<Arc<str>>,
    /// Filter verdicts in evaluation order (plugins after a rejection did not run).
    pub filter_records: Vec<FilterRecord>,
    /// Score results.
    pub score_records: Vec<ScoreRecord>,
    /// Total score per node (index into `nodes`).
    pub node_totals: Vec<(u32, i64)>,
    /// The selected node.
    pub selected: Option<String>,
    /// The outcome.
    pub outcome: Outcome,
    /// Pods preempted for this pod (`namespace/name`).
    pub victims: Vec<String>,
    /// The node nominated by preemption.
    pub nominated_node: Option<String>,
    /// Wall-clock nanoseconds the attempt took (native builds only; never feeds the simulation).
    pub wall_ns: Option<u64>,
    /// Wall-clock nanoseconds per (extension point, plugin); Filter is timed as a whole under
    /// ("Filter", "*"); Score includes NormalizeScore. Native builds with history on only.
    pub plugin_ns: Vec<(&'static str, &'static str, u64)>,
}

impl Attempt {
    /// An empty attempt record.
    pub fn new(t_ms: Millis, cycle: u64, profile: &str, num_all_nodes: usize) -> Attempt {
        Attempt {
            t_ms,
            cycle,
            profile: profile.to_string(),
            pod_uid: String::new(),
            num_all_nodes,
            evaluated_nodes: 0,
            start_node_index: 0,
            detailed: true,
            pre_filter: Vec::new(),
            nodes: Vec::new(),
            filter_records: Vec::new(),
            score_records: Vec::new(),
            node_totals: Vec::new(),
            selected: None,
            outcome: Outcome::Error(String::new()),
            victims: Vec::new(),
            nominated_node: None,
            wall_ns: None,
            plugin_ns: Vec::new(),
        }
    }

    /// The index of `name` in [`Attempt::nodes`], adding it unless it is the last one added.
    pub fn node_index(&mut self, name: &Arc<str>) -> u32 {
        if let Some(last) = self.nodes.last() {
            if Arc::ptr_eq(last, name) || **last == **name {
                return (self.nodes.len() - 1) as u32;
            }
        }
        self.nodes.push(name.clone());
        (self.nodes.len() - 1) as u32
    }

    fn name(&self, i: u32) -> String {
        self.nodes[i as usize].to_string()
    }

    /// Filter verdicts: node → plugin → "passed" or the reason.
    pub fn filter(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for r in &self.filter_records {
            let verdict = r.reason.as_deref().unwrap_or(PASSED).to_string();
            out.entry(self.name(r.node)).or_default().insert(r.plugin.to_string(), verdict);
        }
        out
    }

    /// Raw scores: node → plugin → score.
    pub fn scores(&self) -> BTreeMap<String, BTreeMap<String, i64>> {
        let mut out: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
        for r in &self.score_records {
            out.entry(self.name(r.node)).or_default().insert(r.plugin.to_string(), r.raw);
        }
        out
    }

    /// Normalized × weight: node → plugin → score.
    pub fn final_scores(&self) -> BTreeMap<String, BTreeMap<String, i64>> {
        let mut out: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
        for r in &self.score_records {
            out.entry(self.name(r.node)).or_default().insert(r.plugin.to_string(), r.weighted);
        }
        out
    }

    /// Total per scored node.
    pub fn totals(&self) -> BTreeMap<String, i64> {
        self.node_totals.iter().map(|(n, t)| (self.name(*n), *t)).collect()
    }

    /// Wall-clock nanoseconds of one (point, plugin).
    pub fn plugin_time(&self, point: &str, plugin: &str) -> Option<u64> {
        self.plugin_ns.iter().find(|(p, n, _)| *p == point && *n == plugin).map(|(_, _, t)| *t)
    }
}

/// The annotation prefix of kube-scheduler-simulator's debuggable scheduler
/// (simulator/scheduler/plugin/annotation/annotation.go).
pub const SIMULATOR_PREFIX: &str = "kube-scheduler-simulator.sigs.k8s.io/";
/// Its `result-history` annotation: every attempt's results, oldest first.
pub const SIMULATOR_HISTORY: &str = "kube-scheduler-simulator.sigs.k8s.io/result-history";

/// Go's `json.Marshal` of a string map: compact, keys sorted, and `<`, `>`, `&` escaped as
/// `\u003c`, `\u003e`, `\u0026` (HTMLEscape). The three characters occur only inside strings.
pub fn go_json(value: serde_json::Value) -> String {
    value.to_string().replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

impl Attempt {
    /// The result annotations kube-scheduler-simulator writes for this attempt (each value a
    /// JSON document, as its resultstore stores them): `prefilter-result-status` (plugin →
    /// `success`, `""` for Skip, or the rejection), `filter-result` (node → plugin → `passed` or
    /// the reason), `score-result` (node → plugin → raw score), `finalscore-result` (normalized ×
    /// weight), `prebind-result`/`bind-result` and `selected-node` (the plain node name) once
    /// bound. Scores are strings, as the simulator writes them (`"76"`).
    ///
    /// Deviation: the PreScore, Reserve and Permit maps are not written (kubesim does not
    /// record per-plugin statuses there).
    pub fn simulator_annotations(&self, pre_filter_plugins: &[&str], pre_bind_plugins: &[&str]) -> BTreeMap<String, String> {
        let key = |name: &str| format!("{SIMULATOR_PREFIX}{name}");
        let mut out = BTreeMap::new();
        let pre: BTreeMap<&str, String> = pre_filter_plugins
            .iter()
            .map(|p| {
                let status = match self.pre_filter.iter().find(|(q, _)| q == p) {
                    Some((_, s)) if s == "skip" => String::new(),
                    Some((_, s)) => s.clone(),
                    None => "success".to_string(),
                };
                (*p, status)
            })
            .collect();
        out.insert(key("prefilter-result-status"), go_json(serde_json::json!(pre)));
        out.insert(key("filter-result"), go_json(serde_json::json!(self.filter())));
        let strings = |m: BTreeMap<String, BTreeMap<String, i64>>| -> BTreeMap<String, BTreeMap<String, String>> {
            m.into_iter().map(|(n, p)| (n, p.into_iter().map(|(k, v)| (k, v.to_string())).collect())).collect()
        };
        out.insert(key("score-result"), go_json(serde_json::json!(strings(self.scores()))));
        out.insert(key("finalscore-result"), go_json(serde_json::json!(strings(self.final_scores()))));
        if let Outcome::Scheduled(node) = &self.outcome {
            let success: BTreeMap<&str, &str> = pre_bind_plugins.iter().map(|p| (*p, "success")).collect();
            out.insert(key("prebind-result"), go_json(serde_json::json!(success)));
            out.insert(key("bind-result"), go_json(serde_json::json!({"DefaultBinder": "success"})));
            out.insert(key("selected-node"), node.clone());
        }
        out
    }
}

/// The recorded attempts per pod (`namespace/name`), oldest first, bounded by pods and by
/// attempts per pod. Eviction order is first-recorded order (a sequence number, not a hash), so
/// it is deterministic; a deleted pod's entry is removed with it ([`History::remove`]), which
/// keeps a recreated pod of the same name from showing its predecessor's explanation.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// Pod → (first-recorded sequence number, attempts). The attempts are shared copy-on-write,
    /// so a cloned scheduler (a time-travel snapshot) shares them instead of copying.
    pods: BTreeMap<String, (u64, Arc<Vec<Attempt>>)>,
    /// First-recorded sequence number → pod.
    order: BTreeMap<u64, String>,
    next: u64,
}

impl History {
    /// Appends an attempt for `key`, dropping its oldest attempt beyond `max_attempts` and the
    /// longest-recorded pod beyond `max_pods`.
    pub fn record(&mut self, key: &str, attempt: Attempt, max_pods: usize, max_attempts: usize) {
        if !self.pods.contains_key(key) {
            while self.pods.len() >= max_pods.max(1) {
                let Some((_, old)) = self.order.pop_first() else { break };
                self.pods.remove(&old);
            }
            self.pods.insert(key.to_string(), (self.next, Arc::new(Vec::new())));
            self.order.insert(self.next, key.to_string());
            self.next += 1;
        }
        let (_, list) = self.pods.get_mut(key).expect("inserted above");
        let list = Arc::make_mut(list);
        if list.len() >= max_attempts.max(1) {
            list.remove(0);
        }
        list.push(attempt);
    }

    /// Forgets a pod (deleted).
    pub fn remove(&mut self, key: &str) {
        if let Some((seq, _)) = self.pods.remove(key) {
            self.order.remove(&seq);
        }
    }

    /// The attempts of a pod, oldest first.
    pub fn get(&self, key: &str) -> &[Attempt] {
        self.pods.get(key).map(|(_, v)| v.as_slice()).unwrap_or(&[])
    }

    /// The pods with attempts, in key order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.pods.keys().map(String::as_str)
    }

    /// How many pods have attempts.
    pub fn len(&self) -> usize {
        self.pods.len()
    }

    /// Whether no pod has attempts.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }
}

/// A stopwatch that reads the wall clock only on native builds and only when enabled.
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch {
    #[cfg(not(target_arch = "wasm32"))]
    start: Option<std::time::Instant>,
}

impl Stopwatch {
    /// Starts (if `on`).
    pub fn start(on: bool) -> Stopwatch {
        #[cfg(not(target_arch = "wasm32"))]
        {
            Stopwatch { start: on.then(std::time::Instant::now) }
        }
        #[cfg(target_arch = "wasm32")]
        {
            let _ = on;
            Stopwatch {}
        }
    }
    /// Nanoseconds since start (None when off or on wasm).
    pub fn elapsed_ns(&self) -> Option<u64> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.start.map(|s| s.elapsed().as_nanos() as u64)
        }
        #[cfg(target_arch = "wasm32")]
        {
            None
        }
    }
    /// Adds the elapsed time to `attempt.plugin_ns` under (point, plugin).
    pub fn record(&self, attempt: &mut Attempt, point: &'static str, plugin: &'static str) {
        if let Some(ns) = self.elapsed_ns() {
            match attempt.plugin_ns.iter_mut().find(|(p, n, _)| *p == point && *n == plugin) {
                Some(e) => e.2 += ns,
                None => attempt.plugin_ns.push((point, plugin, ns)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A node evaluated twice (the nominated node first) appears under two indices; the
    // by-node maps merge them, later records winning.
    #[test]
    fn by_node_maps_merge_repeated_nodes() {
        let mut a = Attempt::new(0, 1, "default-scheduler", 3);
        let names: Vec<Arc<str>> = ["node-b", "node-a"].iter().map(|n| Arc::from(*n)).collect();
        for n in &names {
            let i = a.node_index(n);
            a.filter_records.push(FilterRecord { node: i, plugin: "NodeUnschedulable", reason: None });
            a.filter_records.push(FilterRecord { node: i, plugin: "NodeResourcesFit", reason: (i == 1).then(|| "Insufficient cpu".into()) });
        }
        let again = a.node_index(&names[0]);
        assert_eq!(again, 2);
        a.filter_records.push(FilterRecord { node: again, plugin: "NodeResourcesFit", reason: Some("Too many pods".into()) });
        a.score_records.push(ScoreRecord { node: 0, plugin: "TaintToleration", raw: 0, weighted: 300 });
        a.score_records.push(ScoreRecord { node: 1, plugin: "ImageLocality", raw: 3, weighted: 3 });
        a.node_totals = vec![(0, 300), (1, 3)];
        let filter = a.filter();
        assert_eq!(filter.keys().collect::<Vec<_>>(), ["node-a", "node-b"]);
        assert_eq!(filter["node-b"]["NodeResourcesFit"], "Too many pods");
        assert_eq!(filter["node-b"]["NodeUnschedulable"], PASSED);
        assert_eq!(filter["node-a"]["NodeResourcesFit"], "Insufficient cpu");
        assert_eq!(a.scores()["node-a"]["ImageLocality"], 3);
        assert_eq!(a.final_scores()["node-b"]["TaintToleration"], 300);
        assert_eq!(a.totals(), BTreeMap::from([("node-a".to_string(), 3), ("node-b".to_string(), 300)]));
    }

    #[test]
    fn history_is_bounded_and_forgets_removed_pods() {
        let attempt = |cycle| Attempt::new(0, cycle, "default-scheduler", 1);
        let mut h = History::default();
        h.record("ns/a", attempt(1), 2, 2);
        h.record("ns/b", attempt(2), 2, 2);
        h.record("ns/a", attempt(3), 2, 2);
        h.record("ns/a", attempt(4), 2, 2);
        assert_eq!(h.get("ns/a").iter().map(|a| a.cycle).collect::<Vec<_>>(), [3, 4], "oldest attempt dropped");
        // A third pod evicts the one recorded first (a), not the one touched least recently.
        h.record("ns/c", attempt(5), 2, 2);
        assert_eq!(h.keys().collect::<Vec<_>>(), ["ns/b", "ns/c"]);
        h.remove("ns/b");
        assert!(h.get("ns/b").is_empty());
        h.record("ns/d", attempt(6), 2, 2);
        assert_eq!(h.keys().collect::<Vec<_>>(), ["ns/c", "ns/d"], "a removed pod frees its place");
        // Clones share the attempts until one side records.
        let snapshot = h.clone();
        h.record("ns/c", attempt(7), 2, 2);
        assert_eq!(snapshot.get("ns/c").len(), 1);
        assert_eq!(h.get("ns/c").len(), 2);
    }
}

#[cfg(test)]
mod go_json_tests {
    // encoding/json's HTMLEscape: `<`, `>` and `&` inside strings become \u003c, \u003e, \u0026.
    #[test]
    fn go_json_escapes_html_characters_as_encoding_json_does() {
        let value = serde_json::json!({"b": "x < y && z > 1", "a": "plain"});
        assert_eq!(super::go_json(value), r#"{"a":"plain","b":"x \u003c y \u0026\u0026 z \u003e 1"}"#);
    }
}
