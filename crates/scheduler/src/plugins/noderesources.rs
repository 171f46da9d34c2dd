//! NodeResourcesFit (PreFilter, Filter, PreScore, Score weight 1; LeastAllocated, MostAllocated,
//! RequestedToCapacityRatio) and NodeResourcesBalancedAllocation (PreScore, Score weight 1) —
//! `plugins/noderesources`. The scoring math is in pure functions over [`Amount`] lists.

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterEvent, ClusterView, Code, CycleState, Plugin, Point, Status, MAX_NODE_SCORE};
use crate::plugins::helper::{broken_linear, ShapePoint};
use crate::resources::{Resources, CPU, EPHEMERAL_STORAGE, MEMORY, PODS};

/// A configured resource and its weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceSpec {
    /// Resource name.
    pub name: String,
    /// Weight (1..100).
    pub weight: i64,
}

/// The default `[cpu:1, memory:1]`.
pub fn default_resources() -> Vec<ResourceSpec> {
    vec![ResourceSpec { name: CPU.into(), weight: 1 }, ResourceSpec { name: MEMORY.into(), weight: 1 }]
}

fn is_default_resources(r: &[ResourceSpec]) -> bool {
    r.len() == 2 && r[0].name == CPU && r[0].weight == 1 && r[1].name == MEMORY && r[1].weight == 1
}

/// The NodeResourcesFit scoring strategy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScoringStrategy {
    /// Prefer the least requested nodes (default).
    LeastAllocated,
    /// Prefer the most requested nodes (bin packing).
    MostAllocated,
    /// A broken-linear function of utilization; shape scores in 0..10 (scaled ×10).
    RequestedToCapacityRatio(Vec<ShapePoint>),
}

/// One resource's (allocatable, requested, weight) for a node, after upstream's skip rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Amount {
    /// Allocatable (0: the resource is skipped).
    pub allocatable: i64,
    /// Requested including the incoming pod.
    pub requested: i64,
    /// Weight.
    pub weight: i64,
}

fn is_scalar(name: &str) -> bool {
    !matches!(name, CPU | MEMORY | EPHEMERAL_STORAGE | PODS)
}

/// The incoming pod's request of a resource as scoring sees it (non-zero defaults unless
/// `use_requested`).
pub fn pod_request_for_scoring(pod: &PodInfo, name: &str, use_requested: bool) -> i64 {
    match (name, use_requested) {
        (CPU, false) => pod.requests.non_zero_cpu,
        (MEMORY, false) => pod.requests.non_zero_memory,
        _ => pod.requests.requests.get(name),
    }
}

/// (allocatable, requested) for one resource (`calculateResourceAllocatableRequest`).
pub fn allocatable_request(
    allocatable: &Resources,
    requested: &Resources,
    non_zero: (i64, i64),
    name: &str,
    pod_request: i64,
    use_requested: bool,
) -> (i64, i64) {
    if pod_request == 0 && is_scalar(name) {
        return (0, 0);
    }
    match name {
        CPU => (allocatable.milli_cpu, if use_requested { requested.milli_cpu } else { non_zero.0 } + pod_request),
        MEMORY => (allocatable.memory, if use_requested { requested.memory } else { non_zero.1 } + pod_request),
        EPHEMERAL_STORAGE => (allocatable.ephemeral_storage, requested.ephemeral_storage + pod_request),
        _ => match allocatable.scalar.get(name) {
            Some(a) => (*a, requested.scalar.get(name).copied().unwrap_or(0) + pod_request),
            None => (0, 0),
        },
    }
}

/// The amounts for a node and pod over the configured resources.
pub fn amounts(node: &NodeInfo, pod: &PodInfo, resources: &[ResourceSpec], use_requested: bool) -> Vec<Amount> {
    resources
        .iter()
        .map(|r| {
            let pod_req = pod_request_for_scoring(pod, &r.name, use_requested);
            let (allocatable, requested) =
                allocatable_request(&node.allocatable, &node.requested, (node.non_zero_cpu, node.non_zero_memory), &r.name, pod_req, use_requested);
            Amount { allocatable, requested, weight: r.weight }
        })
        .collect()
}

/// `leastRequestedScore` for one resource.
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

/// `mostRequestedScore` for one resource.
pub fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    requested.min(capacity) * MAX_NODE_SCORE / capacity
}

/// LeastAllocated node score.
pub fn least_allocated(amounts: &[Amount]) -> i64 {
    weighted(amounts, least_requested_score)
}

/// MostAllocated node score.
pub fn most_allocated(amounts: &[Amount]) -> i64 {
    weighted(amounts, most_requested_score)
}

fn weighted(amounts: &[Amount], f: fn(i64, i64) -> i64) -> i64 {
    let (mut score, mut weights) = (0i64, 0i64);
    for a in amounts.iter().filter(|a| a.allocatable != 0) {
        score += f(a.requested, a.allocatable) * a.weight;
        weights += a.weight;
    }
    if weights == 0 {
        0
    } else {
        score / weights
    }
}

/// RequestedToCapacityRatio node score; `shape` as configured (scores 0..10).
pub fn requested_to_capacity_ratio(amounts: &[Amount], shape: &[ShapePoint]) -> i64 {
    let scaled: Vec<ShapePoint> = shape.iter().map(|p| ShapePoint { utilization: p.utilization, score: p.score * (MAX_NODE_SCORE / 10) }).collect();
    let (mut score, mut weights) = (0f64, 0i64);
    for a in amounts.iter().filter(|a| a.allocatable != 0) {
        let util = if a.requested > a.allocatable { 100 } else { a.requested * 100 / a.allocatable };
        let s = broken_linear(&scaled, util);
        if s > 0 {
            score += (s * a.weight) as f64;
            weights += a.weight;
        }
    }
    if weights == 0 {
        0
    } else {
        (score / weights as f64).round() as i64
    }
}

/// BalancedAllocation node score (`balancedResourceScorer`).
pub fn balanced_allocation(amounts: &[Amount]) -> i64 {
    let mut buf = [0f64; 8];
    let mut heap = Vec::new();
    let mut n = 0;
    for a in amounts.iter().filter(|a| a.allocatable != 0) {
        let f = (a.requested as f64 / a.allocatable as f64).min(1.0);
        if n < buf.len() {
            buf[n] = f;
        } else {
            if heap.is_empty() {
                heap.extend_from_slice(&buf);
            }
            heap.push(f);
        }
        n += 1;
    }
    let fractions: &[f64] = if n <= buf.len() { &buf[..n] } else { &heap };
    let std = match fractions.len() {
        0 | 1 => 0.0,
        2 => ((fractions[0] - fractions[1]) / 2.0).abs(),
        n => {
            let mean = fractions.iter().sum::<f64>() / n as f64;
            (fractions.iter().map(|f| (f - mean) * (f - mean)).sum::<f64>() / n as f64).sqrt()
        }
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// One insufficient resource (`InsufficientResource`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Insufficient {
    /// Resource name.
    pub resource: String,
    /// The reason (`Insufficient cpu`, `Too many pods`).
    pub reason: String,
    /// Whether even an empty node could not fit the pod.
    pub unresolvable: bool,
}

/// `fitsRequest`: what does not fit.
pub fn fits_request(pod: &Resources, node: &NodeInfo) -> Vec<Insufficient> {
    let mut out = Vec::new();
    let pods = node.pods.len() as i64;
    if pods + 1 > node.allocatable.allowed_pod_number {
        out.push(Insufficient { resource: PODS.into(), reason: "Too many pods".into(), unresolvable: false });
    }
    if pod.is_zero() {
        return out;
    }
    let a = &node.allocatable;
    let r = &node.requested;
    let mut check = |name: &str, want: i64, alloc: i64, used: i64| {
        if want > 0 && want > alloc - used {
            out.push(Insufficient { resource: name.into(), reason: format!("Insufficient {name}"), unresolvable: want > alloc });
        }
    };
    check(CPU, pod.milli_cpu, a.milli_cpu, r.milli_cpu);
    check(MEMORY, pod.memory, a.memory, r.memory);
    check(EPHEMERAL_STORAGE, pod.ephemeral_storage, a.ephemeral_storage, r.ephemeral_storage);
    for (name, want) in &pod.scalar {
        check(name, *want, a.scalar.get(name).copied().unwrap_or(0), r.scalar.get(name).copied().unwrap_or(0));
    }
    out
}

/// NodeResourcesFit.
#[derive(Debug, Clone)]
pub struct Fit {
    /// Scoring strategy.
    pub strategy: ScoringStrategy,
    /// Scored resources.
    pub resources: Vec<ResourceSpec>,
}

impl Default for Fit {
    fn default() -> Self {
        Fit { strategy: ScoringStrategy::LeastAllocated, resources: default_resources() }
    }
}

impl Fit {
    /// The score for already computed amounts.
    pub fn score_amounts(&self, amounts: &[Amount]) -> i64 {
        match &self.strategy {
            ScoringStrategy::LeastAllocated => least_allocated(amounts),
            ScoringStrategy::MostAllocated => most_allocated(amounts),
            ScoringStrategy::RequestedToCapacityRatio(shape) => requested_to_capacity_ratio(amounts, shape),
        }
    }
}

impl Plugin for Fit {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreFilter, Point::Filter, Point::PreScore, Point::Score]
    }
    fn events(&self) -> &'static [ClusterEvent] {
        &[ClusterEvent::NodeAdd, ClusterEvent::NodeAllocatable, ClusterEvent::AssignedPodDelete, ClusterEvent::UnscheduledPodUpdate]
    }
    fn filter(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        let insufficient = fits_request(&pod.requests.requests, node);
        if insufficient.is_empty() {
            return Status::success();
        }
        let code = if insufficient.iter().any(|i| i.unresolvable) { Code::UnschedulableAndUnresolvable } else { Code::Unschedulable };
        Status { code, reasons: insufficient.into_iter().map(|i| i.reason).collect(), plugin: "" }
    }
    fn score(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo, _view: &ClusterView) -> i64 {
        if self.strategy == ScoringStrategy::LeastAllocated && is_default_resources(&self.resources) {
            // Fast path for the default configuration (same math as `least_allocated`).
            let cpu = least_requested_score(node.non_zero_cpu + pod.requests.non_zero_cpu, node.allocatable.milli_cpu);
            let mem = least_requested_score(node.non_zero_memory + pod.requests.non_zero_memory, node.allocatable.memory);
            return match (node.allocatable.milli_cpu != 0, node.allocatable.memory != 0) {
                (true, true) => (cpu + mem) / 2,
                (true, false) => cpu,
                (false, true) => mem,
                (false, false) => 0,
            };
        }
        self.score_amounts(&amounts(node, pod, &self.resources, false))
    }
}

/// NodeResourcesBalancedAllocation.
#[derive(Debug, Clone)]
pub struct BalancedAllocation {
    /// Resources (default cpu, memory).
    pub resources: Vec<ResourceSpec>,
}

impl Default for BalancedAllocation {
    fn default() -> Self {
        BalancedAllocation { resources: default_resources() }
    }
}

impl Plugin for BalancedAllocation {
    fn name(&self) -> &'static str {
        "NodeResourcesBalancedAllocation"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::PreScore, Point::Score]
    }
    fn pre_score(&self, _state: &mut CycleState, pod: &PodInfo, _feasible: &[&NodeInfo], _view: &ClusterView) -> Status {
        let best_effort = self.resources.iter().all(|r| pod_request_for_scoring(pod, &r.name, true) == 0);
        if best_effort {
            Status::skip()
        } else {
            Status::success()
        }
    }
    fn score(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo, _view: &ClusterView) -> i64 {
        if is_default_resources(&self.resources) {
            // Fast path for [cpu, memory] (same math as `balanced_allocation`, no allocation).
            let a = [
                Amount { allocatable: node.allocatable.milli_cpu, requested: node.requested.milli_cpu + pod.requests.requests.milli_cpu, weight: 1 },
                Amount { allocatable: node.allocatable.memory, requested: node.requested.memory + pod.requests.requests.memory, weight: 1 },
            ];
            return balanced_allocation(&a);
        }
        balanced_allocation(&amounts(node, pod, &self.resources, true))
    }
}

/// Validates scoring resources as upstream's `validateResources` does (weights 1..100).
pub fn validate_resources(resources: &[ResourceSpec]) -> Result<(), String> {
    for r in resources {
        if !(1..=100).contains(&r.weight) {
            return Err(format!("resources[].weight: Invalid value: {}: resource weight of {} should be in range [1, 100]", r.weight, r.name));
        }
    }
    Ok(())
}
