//! KubeSchedulerConfiguration (`kubescheduler.config.k8s.io/v1`): profiles, plugin sets per
//! extension point and multiPoint (merged with the defaults as upstream's `mergePlugins` and
//! `expandMultiPointPlugins` do), score weights, pluginConfig args, percentageOfNodesToScore and
//! backoff seconds.

use crate::framework::{Point, Profile, ScorePlugin};
use crate::plugins::helper::ShapePoint;
use crate::plugins::interpodaffinity::InterPodAffinity;
use crate::plugins::noderesources::{default_resources, BalancedAllocation, Fit, ResourceSpec, ScoringStrategy};
use crate::plugins::topologyspread::{PodTopologySpread, SpreadConstraint};

use crate::plugins::{default_plugins, new_plugin, DefaultPreemption};
use serde_json::Value;
use std::collections::BTreeMap;

/// The default scheduler name.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// Global settings of a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalConfig {
    /// percentageOfNodesToScore (0: adaptive).
    pub percentage_of_nodes_to_score: i32,
    /// podInitialBackoffSeconds.
    pub pod_initial_backoff_seconds: u64,
    /// podMaxBackoffSeconds.
    pub pod_max_backoff_seconds: u64,
}

impl Default for GlobalConfig {
    fn default() -> Self {
        GlobalConfig { percentage_of_nodes_to_score: 0, pod_initial_backoff_seconds: 1, pod_max_backoff_seconds: 10 }
    }
}

#[derive(Clone, Debug, Default)]
struct PluginSet {
    enabled: Vec<(String, i64)>,
    disabled: Vec<String>,
}

fn parse_set(v: Option<&Value>) -> Result<PluginSet, String> {
    let mut set = PluginSet::default();
    let Some(v) = v else { return Ok(set) };
    for e in v.get("enabled").and_then(Value::as_array).into_iter().flatten() {
        let name = e.get("name").and_then(Value::as_str).ok_or("plugin entry without name")?;
        let weight = e.get("weight").and_then(Value::as_i64).unwrap_or(0);
        set.enabled.push((name.to_string(), weight));
    }
    for e in v.get("disabled").and_then(Value::as_array).into_iter().flatten() {
        let name = e.get("name").and_then(Value::as_str).ok_or("plugin entry without name")?;
        set.disabled.push(name.to_string());
    }
    Ok(set)
}

/// `mergePluginSet`: defaults minus disabled (re-configured defaults replaced in place), then
/// the remaining custom plugins.
fn merge_set(defaults: &[(String, i64)], custom: &PluginSet) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let mut replaced = vec![false; custom.enabled.len()];
    if !custom.disabled.iter().any(|d| d == "*") {
        for (name, weight) in defaults {
            if custom.disabled.contains(name) {
                continue;
            }
            match custom.enabled.iter().position(|(n, _)| n == name) {
                Some(i) => {
                    replaced[i] = true;
                    out.push(custom.enabled[i].clone());
                }
                None => out.push((name.clone(), *weight)),
            }
        }
    }
    for (i, p) in custom.enabled.iter().enumerate() {
        if !replaced[i] {
            out.push(p.clone());
        }
    }
    out
}

/// Builds a profile from its `plugins` and `pluginConfig` (None: the default profile).
pub fn build_profile(scheduler_name: &str, plugins: Option<&Value>, plugin_config: Option<&Value>, percentage: Option<i32>) -> Result<Profile, String> {
    let defaults: Vec<(String, i64)> = default_plugins().map(|(n, w)| (n.to_string(), w)).collect();
    let multi = merge_set(&defaults, &parse_set(plugins.and_then(|p| p.get("multiPoint")))?);
    let mut per_point: BTreeMap<Point, PluginSet> = BTreeMap::new();
    for point in Point::ALL {
        per_point.insert(point, parse_set(plugins.and_then(|p| p.get(point.config_name())))?);
    }
    let mut args: BTreeMap<String, Value> = BTreeMap::new();
    for pc in plugin_config.and_then(Value::as_array).into_iter().flatten() {
        let name = pc.get("name").and_then(Value::as_str).ok_or("pluginConfig entry without name")?;
        if args.insert(name.to_string(), pc.get("args").cloned().unwrap_or(Value::Null)).is_some() {
            return Err(format!("repeated config for plugin {name:?}"));
        }
    }
    // Instantiate every plugin mentioned anywhere, once, in first-mention order.
    let mut names: Vec<String> = multi.iter().map(|(n, _)| n.clone()).collect();
    for set in per_point.values() {
        for (n, _) in &set.enabled {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let mut plugins_vec = Vec::new();
    for n in &names {
        plugins_vec.push(new_plugin(n, args.get(n).filter(|v| !v.is_null()))?);
    }
    let index_of = |n: &str| names.iter().position(|x| x == n).expect("instantiated");
    let mut points: BTreeMap<Point, Vec<usize>> = BTreeMap::new();
    let mut score = Vec::new();
    for point in Point::ALL {
        let set = &per_point[&point];
        let explicit: Vec<(String, i64)> = set.enabled.clone();
        let mut part1 = Vec::new();
        let mut part2 = Vec::new();
        if !set.disabled.iter().any(|d| d == "*") {
            for (n, w) in &multi {
                let idx = index_of(n);
                if !plugins_vec[idx].points().contains(&point) || set.disabled.contains(n) {
                    continue;
                }
                if explicit.iter().any(|(e, _)| e == n) {
                    part1.push(n.clone());
                    continue;
                }
                if part2.iter().any(|(x, _): &(String, i64)| x == n) {
                    return Err(format!("plugin {n:?} already registered as {point:?}"));
                }
                part2.push((n.clone(), *w));
            }
        }
        let mut ordered: Vec<(String, i64)> = Vec::new();
        for n in &part1 {
            ordered.push(explicit.iter().find(|(e, _)| e == n).cloned().expect("explicit"));
        }
        ordered.extend(part2);
        for e in &explicit {
            if !part1.contains(&e.0) {
                if ordered.iter().any(|(x, _)| x == &e.0) {
                    return Err(format!("plugin {:?} already registered as {point:?}", e.0));
                }
                ordered.push(e.clone());
            }
        }
        for (n, w) in ordered {
            let idx = index_of(&n);
            if !plugins_vec[idx].points().contains(&point) {
                return Err(format!("plugin {n:?} does not extend {} plugin", point.config_name()));
            }
            if point == Point::Score {
                let weight = if w == 0 { 1 } else { w };
                if !(0..=100).contains(&weight) {
                    return Err(format!("score plugin {n:?} weight {weight} out of range"));
                }
                score.push(ScorePlugin { index: idx, weight });
            }
            points.entry(point).or_default().push(idx);
        }
    }
    if points.get(&Point::QueueSort).is_none_or(|v| v.len() != 1) {
        return Err("one queue sort plugin required for profile".into());
    }
    if points.get(&Point::Bind).is_none_or(|v| v.is_empty()) {
        return Err("at least one bind plugin is needed for profile".into());
    }
    Ok(Profile { scheduler_name: scheduler_name.to_string(), plugins: plugins_vec, points, score, percentage_of_nodes_to_score: percentage })
}

/// The default profile.
pub fn default_profile() -> Profile {
    build_profile(DEFAULT_SCHEDULER_NAME, None, None, None).expect("the default profile is valid")
}

fn percentage_field(v: Option<&Value>) -> Result<Option<i32>, String> {
    match v.and_then(Value::as_i64) {
        None => Ok(None),
        Some(p) if (0..=100).contains(&p) => Ok(Some(p as i32)),
        Some(p) => Err(format!("percentageOfNodesToScore: Invalid value: {p}: not in valid range [0-100]")),
    }
}

/// Parses a whole configuration into global settings and profiles.
pub fn parse_configuration(v: &Value) -> Result<(GlobalConfig, Vec<Profile>), String> {
    if let Some(api) = v.get("apiVersion").and_then(Value::as_str) {
        if api != "kubescheduler.config.k8s.io/v1" {
            return Err(format!("unsupported apiVersion {api:?} (want kubescheduler.config.k8s.io/v1)"));
        }
    }
    if let Some(kind) = v.get("kind").and_then(Value::as_str) {
        if kind != "KubeSchedulerConfiguration" {
            return Err(format!("unsupported kind {kind:?}"));
        }
    }
    let mut global = GlobalConfig::default();
    if let Some(p) = percentage_field(v.get("percentageOfNodesToScore"))? {
        global.percentage_of_nodes_to_score = p;
    }
    if let Some(s) = v.get("podInitialBackoffSeconds").and_then(Value::as_i64) {
        if s <= 0 {
            return Err(format!("podInitialBackoffSeconds: Invalid value: {s}: must be greater than 0"));
        }
        global.pod_initial_backoff_seconds = s as u64;
    }
    if let Some(s) = v.get("podMaxBackoffSeconds").and_then(Value::as_i64) {
        if (s as u64) < global.pod_initial_backoff_seconds {
            return Err(format!("podMaxBackoffSeconds: Invalid value: {s}: must be greater than or equal to PodInitialBackoffSeconds"));
        }
        global.pod_max_backoff_seconds = s as u64;
    }
    let mut profiles = Vec::new();
    let list = v.get("profiles").and_then(Value::as_array).cloned().unwrap_or_default();
    if list.is_empty() {
        profiles.push(default_profile());
    }
    for p in &list {
        let name = p.get("schedulerName").and_then(Value::as_str).unwrap_or(DEFAULT_SCHEDULER_NAME);
        if profiles.iter().any(|x: &Profile| x.scheduler_name == name) {
            return Err(format!("profiles[].schedulerName: Duplicate value: {name:?}"));
        }
        let percentage = percentage_field(p.get("percentageOfNodesToScore"))?;
        profiles.push(build_profile(name, p.get("plugins"), p.get("pluginConfig"), percentage)?);
    }
    Ok((global, profiles))
}

fn resources_arg(v: Option<&Value>) -> Result<Vec<ResourceSpec>, String> {
    let Some(list) = v.and_then(Value::as_array) else { return Ok(default_resources()) };
    let mut out = Vec::new();
    for r in list {
        let name = r.get("name").and_then(Value::as_str).ok_or("resource without name")?;
        let weight = r.get("weight").and_then(Value::as_i64).unwrap_or(1);
        let weight = if weight == 0 { 1 } else { weight };
        if !(1..=100).contains(&weight) {
            return Err(format!("resources[].weight: Invalid value: {weight}: resource weight of {name} should be in range [1, 100]"));
        }
        out.push(ResourceSpec { name: name.to_string(), weight });
    }
    Ok(out)
}

/// NodeResourcesFitArgs.
pub fn fit_args(args: Option<&Value>) -> Result<Fit, String> {
    let mut fit = Fit::default();
    let Some(strategy) = args.and_then(|a| a.get("scoringStrategy")) else { return Ok(fit) };
    fit.resources = resources_arg(strategy.get("resources"))?;
    fit.strategy = match strategy.get("type").and_then(Value::as_str).unwrap_or("LeastAllocated") {
        "LeastAllocated" => ScoringStrategy::LeastAllocated,
        "MostAllocated" => ScoringStrategy::MostAllocated,
        "RequestedToCapacityRatio" => {
            let mut shape = Vec::new();
            for p in strategy.pointer("/requestedToCapacityRatio/shape").and_then(Value::as_array).into_iter().flatten() {
                let utilization = p.get("utilization").and_then(Value::as_i64).unwrap_or(0);
                let score = p.get("score").and_then(Value::as_i64).unwrap_or(0);
                if !(0..=100).contains(&utilization) || !(0..=10).contains(&score) {
                    return Err("requestedToCapacityRatio shape point out of range".into());
                }
                shape.push(ShapePoint { utilization, score });
            }
            if shape.is_empty() {
                return Err("requestedToCapacityRatio.shape: Required value: at least one point must be specified".into());
            }
            if shape.windows(2).any(|w| w[0].utilization >= w[1].utilization) {
                return Err("requestedToCapacityRatio.shape: utilization values must be sorted in increasing order".into());
            }
            ScoringStrategy::RequestedToCapacityRatio(shape)
        }
        other => return Err(format!("scoringStrategy.type: Unsupported value: {other:?}")),
    };
    Ok(fit)
}

/// NodeResourcesBalancedAllocationArgs.
pub fn balanced_args(args: Option<&Value>) -> Result<BalancedAllocation, String> {
    Ok(BalancedAllocation { resources: resources_arg(args.and_then(|a| a.get("resources")))? })
}

/// InterPodAffinityArgs.
pub fn inter_pod_affinity_args(args: Option<&Value>) -> Result<InterPodAffinity, String> {
    let w = args.and_then(|a| a.get("hardPodAffinityWeight")).and_then(Value::as_i64).unwrap_or(1);
    if !(0..=100).contains(&w) {
        return Err(format!("hardPodAffinityWeight: Invalid value: {w}: not in valid range [0-100]"));
    }
    Ok(InterPodAffinity { hard_pod_affinity_weight: w, ..Default::default() })
}

/// DefaultPreemptionArgs.
pub fn preemption_args(args: Option<&Value>) -> Result<DefaultPreemption, String> {
    let mut d = DefaultPreemption::default();
    if let Some(p) = args.and_then(|a| a.get("minCandidateNodesPercentage")).and_then(Value::as_i64) {
        d.min_candidate_nodes_percentage = p;
    }
    if let Some(a) = args.and_then(|a| a.get("minCandidateNodesAbsolute")).and_then(Value::as_i64) {
        d.min_candidate_nodes_absolute = a;
    }
    Ok(d)
}

/// PodTopologySpreadArgs.
pub fn topology_spread_args(args: Option<&Value>) -> Result<PodTopologySpread, String> {
    let mut pts = PodTopologySpread::default();
    let Some(args) = args else { return Ok(pts) };
    match args.get("defaultingType").and_then(Value::as_str).unwrap_or("System") {
        "System" => {
            if args.get("defaultConstraints").and_then(Value::as_array).is_some_and(|a| !a.is_empty()) {
                return Err("defaultConstraints: Invalid value: when .defaultingType is \"System\", .defaultConstraints must be empty".into());
            }
        }
        "List" => {
            pts.system_defaulted = false;
            pts.default_constraints.clear();
            for c in args.get("defaultConstraints").and_then(Value::as_array).into_iter().flatten() {
                pts.default_constraints.push(SpreadConstraint {
                    max_skew: c.get("maxSkew").and_then(Value::as_i64).unwrap_or(1),
                    topology_key: c.get("topologyKey").and_then(Value::as_str).unwrap_or_default().to_string(),
                    hard: c.get("whenUnsatisfiable").and_then(Value::as_str) == Some("DoNotSchedule"),
                    min_domains: 1,
                    honor_node_affinity: true,
                    ..Default::default()
                });
            }
        }
        other => return Err(format!("defaultingType: Unsupported value: {other:?}")),
    }
    Ok(pts)
}
