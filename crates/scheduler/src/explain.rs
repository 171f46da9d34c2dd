//! Explanations: one [`Attempt`] per scheduling attempt (filter verdicts per node and plugin,
//! raw and weighted scores, totals, the selected node, preemption victims, virtual time), and
//! the `kubesim.dev/*` pod annotations in kube-scheduler-simulator's shape.

use kubesim_api::Millis;
use std::collections::BTreeMap;
use std::sync::Arc;

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

    /// The annotations to write (key, JSON text), serialized directly (no intermediate maps):
    /// nodes and plugins in key order, as the by-node maps would serialize.
    pub fn annotations(&self) -> Vec<(&'static str, String)> {
        // Node indices grouped by name, in name order (a node evaluated twice appears under
        // two indices; the later records win, as with the maps).
        let mut order: Vec<u32> = (0..self.nodes.len() as u32).collect();
        kubesim_api::sort::sort_by(&mut order, |a, b| self.nodes[*a as usize].cmp(&self.nodes[*b as usize]).then(a.cmp(b)));
        let mut groups: Vec<(&str, Vec<u32>)> = Vec::new();
        for i in order {
            let name = &*self.nodes[i as usize];
            match groups.last_mut() {
                Some((n, ids)) if *n == name => ids.push(i),
                _ => groups.push((name, vec![i])),
            }
        }
        let mut filter_by: Vec<Vec<(&'static str, Option<&str>)>> = vec![Vec::new(); self.nodes.len()];
        for r in &self.filter_records {
            filter_by[r.node as usize].push((r.plugin, r.reason.as_deref()));
        }
        let mut score_by: Vec<Vec<(&'static str, i64, i64)>> = vec![Vec::new(); self.nodes.len()];
        for r in &self.score_records {
            score_by[r.node as usize].push((r.plugin, r.raw, r.weighted));
        }
        let mut filter = String::with_capacity(2 + self.filter_records.len() * 40);
        filter.push('{');
        let mut raw = String::with_capacity(2 + self.score_records.len() * 32);
        raw.push('{');
        let mut weighted = String::with_capacity(2 + self.score_records.len() * 32);
        weighted.push('{');
        for (name, ids) in &groups {
            let mut f: Vec<(&'static str, Option<&str>)> = Vec::new();
            let mut sc: Vec<(&'static str, i64, i64)> = Vec::new();
            for id in ids {
                for e in &filter_by[*id as usize] {
                    f.retain(|x| x.0 != e.0);
                    f.push(*e);
                }
                for e in &score_by[*id as usize] {
                    sc.retain(|x| x.0 != e.0);
                    sc.push(*e);
                }
            }
            kubesim_api::sort::sort_by(&mut f, |a, b| a.0.cmp(b.0));
            kubesim_api::sort::sort_by(&mut sc, |a, b| a.0.cmp(b.0));
            if !f.is_empty() {
                open_entry(&mut filter, name);
                for (k, (plugin, reason)) in f.iter().enumerate() {
                    if k > 0 {
                        filter.push(',');
                    }
                    push_json_str(&mut filter, plugin);
                    filter.push(':');
                    push_json_str(&mut filter, reason.unwrap_or(PASSED));
                }
                filter.push('}');
            }
            if !sc.is_empty() {
                open_entry(&mut raw, name);
                open_entry(&mut weighted, name);
                for (k, (plugin, r, w)) in sc.iter().enumerate() {
                    if k > 0 {
                        raw.push(',');
                        weighted.push(',');
                    }
                    push_json_str(&mut raw, plugin);
                    raw.push(':');
                    raw.push_str(&r.to_string());
                    push_json_str(&mut weighted, plugin);
                    weighted.push(':');
                    weighted.push_str(&w.to_string());
                }
                raw.push('}');
                weighted.push('}');
            }
        }
        filter.push('}');
        raw.push('}');
        weighted.push('}');
        let mut out = vec![(ANNOTATION_FILTER, filter), (ANNOTATION_SCORE, raw), (ANNOTATION_FINAL_SCORE, weighted)];
        if let Some(node) = &self.selected {
            let mut v = String::new();
            push_json_str(&mut v, node);
            out.push((ANNOTATION_SELECTED, v));
        }
        out
    }
}

fn open_entry(out: &mut String, name: &str) {
    if out.len() > 1 {
        out.push(',');
    }
    push_json_str(out, name);
    out.push_str(":{");
}

/// Appends `s` as a JSON string literal (serde_json's escaping).
fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
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

    // The hand-written serializer must agree with serializing the by-node maps.
    #[test]
    fn annotations_match_the_maps() {
        let mut a = Attempt::new(0, 1, "default-scheduler", 3);
        let names: Vec<Arc<str>> = ["node-b", "node-a", "node \"q\"\n"].iter().map(|n| Arc::from(*n)).collect();
        for n in &names {
            let i = a.node_index(n);
            a.filter_records.push(FilterRecord { node: i, plugin: "NodeUnschedulable", reason: None });
            a.filter_records.push(FilterRecord { node: i, plugin: "NodeResourcesFit", reason: (i == 1).then(|| "Insufficient cpu".into()) });
        }
        // node-b evaluated again (nominated node first): later records win.
        let again = a.node_index(&names[0]);
        a.filter_records.push(FilterRecord { node: again, plugin: "NodeResourcesFit", reason: Some("Too many pods".into()) });
        a.score_records.push(ScoreRecord { node: 0, plugin: "TaintToleration", raw: 0, weighted: 300 });
        a.score_records.push(ScoreRecord { node: 0, plugin: "ImageLocality", raw: 3, weighted: 3 });
        a.score_records.push(ScoreRecord { node: 2, plugin: "ImageLocality", raw: 1, weighted: 1 });
        a.selected = Some("node-b".into());
        let ann: BTreeMap<&str, String> = a.annotations().into_iter().collect();
        let parse = |k: &str| serde_json::from_str::<serde_json::Value>(&ann[k]).unwrap();
        assert_eq!(parse(ANNOTATION_FILTER), serde_json::to_value(a.filter()).unwrap());
        assert_eq!(parse(ANNOTATION_SCORE), serde_json::to_value(a.scores()).unwrap());
        assert_eq!(parse(ANNOTATION_FINAL_SCORE), serde_json::to_value(a.final_scores()).unwrap());
        assert_eq!(a.filter()["node-b"]["NodeResourcesFit"], "Too many pods");
        assert_eq!(ann[ANNOTATION_FILTER], serde_json::to_string(&a.filter()).unwrap());
        assert_eq!(ann[ANNOTATION_SELECTED], "\"node-b\"");
    }
}
