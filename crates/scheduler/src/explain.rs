//! Explanations: one [`Attempt`] per scheduling attempt (filter verdicts per node and plugin,
//! raw and weighted scores, totals, the selected node, preemption victims, virtual time), and
//! the `kubesim.dev/*` pod annotations in kube-scheduler-simulator's shape.

use kubesim_api::Millis;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// `kubesim.dev/filter-result`: `{"<node>": {"<FilterPlugin>": "passed" | "<reason>"}}`.
pub const ANNOTATION_FILTER: &str = "kubesim.dev/filter-result";
/// `kubesim.dev/score-result`: `{"<node>": {"<ScorePlugin>": <raw>}}`.
pub const ANNOTATION_SCORE: &str = "kubesim.dev/score-result";
/// `kubesim.dev/finalscore-result`: `{"<node>": {"<ScorePlugin>": <normalized × weight>}}`.
pub const ANNOTATION_FINAL_SCORE: &str = "kubesim.dev/finalscore-result";
/// `kubesim.dev/selected-node`: `"<node>"` (a JSON string).
pub const ANNOTATION_SELECTED: &str = "kubesim.dev/selected-node";
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

/// One scheduling attempt of one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// Virtual time of the decision.
    pub t_ms: Millis,
    /// The scheduling cycle number (1-based, scheduler-wide).
    pub cycle: u64,
    /// The profile (schedulerName).
    pub profile: String,
    /// Number of nodes in the snapshot.
    pub num_all_nodes: usize,
    /// Number of nodes Filter ran on.
    pub evaluated_nodes: usize,
    /// The round-robin index filtering started at.
    pub start_node_index: usize,
    /// PreFilter results that were not Success (plugin → "skip" or the rejection message).
    pub pre_filter: BTreeMap<String, String>,
    /// Filter verdicts: node → plugin → "passed" or the reason.
    pub filter: BTreeMap<String, BTreeMap<String, String>>,
    /// Raw scores: node → plugin → score.
    pub scores: BTreeMap<String, BTreeMap<String, i64>>,
    /// Normalized × weight: node → plugin → score.
    pub final_scores: BTreeMap<String, BTreeMap<String, i64>>,
    /// Total per feasible node.
    pub totals: BTreeMap<String, i64>,
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
    /// Wall-clock nanoseconds per extension point and plugin (`PreFilter/NodeAffinity`,
    /// `Filter` for all filter plugins over all nodes, `PreScore/...`, `Score/...` including
    /// NormalizeScore). Native builds with history on only.
    pub plugin_ns: BTreeMap<String, u64>,
}

impl Attempt {
    /// An empty attempt record.
    pub fn new(t_ms: Millis, cycle: u64, profile: &str, num_all_nodes: usize) -> Attempt {
        Attempt {
            t_ms,
            cycle,
            profile: profile.to_string(),
            num_all_nodes,
            evaluated_nodes: 0,
            start_node_index: 0,
            pre_filter: BTreeMap::new(),
            filter: BTreeMap::new(),
            scores: BTreeMap::new(),
            final_scores: BTreeMap::new(),
            totals: BTreeMap::new(),
            selected: None,
            outcome: Outcome::Error(String::new()),
            victims: Vec::new(),
            nominated_node: None,
            wall_ns: None,
            plugin_ns: BTreeMap::new(),
        }
    }

    /// The annotations to write (key, JSON text).
    pub fn annotations(&self) -> Vec<(&'static str, String)> {
        let filter: Map<String, Value> = self
            .filter
            .iter()
            .map(|(n, m)| (n.clone(), Value::Object(m.iter().map(|(p, v)| (p.clone(), Value::String(v.clone()))).collect())))
            .collect();
        let nums = |src: &BTreeMap<String, BTreeMap<String, i64>>| -> Value {
            Value::Object(src.iter().map(|(n, m)| (n.clone(), Value::Object(m.iter().map(|(p, v)| (p.clone(), Value::from(*v))).collect()))).collect())
        };
        let mut out = vec![
            (ANNOTATION_FILTER, Value::Object(filter).to_string()),
            (ANNOTATION_SCORE, nums(&self.scores).to_string()),
            (ANNOTATION_FINAL_SCORE, nums(&self.final_scores).to_string()),
        ];
        if let Some(node) = &self.selected {
            out.push((ANNOTATION_SELECTED, Value::String(node.clone()).to_string()));
        }
        out
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
    /// Adds the elapsed time to `attempt.plugin_ns[key]`.
    pub fn record(&self, attempt: &mut Attempt, key: impl FnOnce() -> String) {
        if let Some(ns) = self.elapsed_ns() {
            *attempt.plugin_ns.entry(key()).or_insert(0) += ns;
        }
    }
}
