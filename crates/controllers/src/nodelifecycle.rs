//! The node lifecycle controller (pkg/controller/nodelifecycle) and the taint eviction
//! controller (pkg/controller/tainteviction).
//!
//! Node health: every node-monitor-period (5 s) each node's last heartbeat — a change of its
//! Ready condition's lastHeartbeatTime or a renewal of its Lease in kube-node-lease — is
//! compared with the grace period (node-monitor-grace-period 50 s; node-startup-grace-period
//! 60 s for nodes that never posted Ready). Past it, Ready/MemoryPressure/DiskPressure/
//! PIDPressure become Unknown ("NodeStatusUnknown", "Kubelet stopped posting node status."),
//! an event NodeNotReady is recorded and the node's pods are marked Ready=False. Condition
//! taints (`node.kubernetes.io/not-ready|unreachable|memory-pressure|...:NoSchedule`) follow the
//! conditions; NoExecute `not-ready` / `unreachable` taints follow the observed Ready status and
//! are removed when the node is Ready again.
//!
//! NoExecute taints (processTaintBaseEviction, markNodeForTainting, doNoExecuteTaintingPass):
//! a node whose observed Ready status is False/Unknown joins its zone's rate-limited queue
//! (`zoneNoExecuteTainter[zone]`, a de-duplicating FIFO: once tainted a node stays in the
//! queue's set, so it is not queued again until it is Ready and removed). A node that already
//! carries the opposite NoExecute taint has it swapped at once. The queues are drained by
//! `RateLimitedTimedQueue.Try`: items in order, each first taking a token from the zone's
//! token bucket (burst 1; a new bucket is full), the zone stopping at the first refusal.
//! Bucket rates follow the zone state (`setLimiterInZone` via `SwapLimiter`, which keeps the
//! limiter when the rate is unchanged and starts the new one empty when the old one was empty):
//! Normal --node-eviction-rate 0.1/s; PartialDisruption 0 (never) for zones of at most
//! --large-cluster-size-threshold 50 nodes, else --secondary-node-eviction-rate 0.01/s;
//! FullDisruption 0.1/s. So nodes of one zone going down together are tainted 10 s apart.
//!
//! Zones (handleDisruption): when every zone is fully disrupted the controller enters
//! master-disruption mode — existing NoExecute taints are removed, the queues emptied and every
//! zone's rate set to 0; on leaving it, probe timestamps are reset and the rates follow the zone
//! states again.
//!
//! Pass timing: upstream runs doNoExecuteTaintingPass every NodeEvictionPeriod (100 ms). kubesim
//! drains the queues right after each monitor pass (after handleDisruption, as upstream's next
//! 100 ms pass would) and, while a queue with a non-zero rate is waiting, sets a one-shot timer
//! for the pass at which the next token is available, rounded up to the 100 ms grid. Zones
//! whose rate is 0 set no timer; their nodes wait for the next monitor pass after a rate change.
//!
//! Verified against kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go,
//! pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go and client-go
//! util/flowcontrol/throttle.go (the never-limiter reports QPS 1, so `SwapLimiter(1)` after a
//! zero rate keeps the never-limiter; unreachable with the default rates, mirrored anyway).
//! Not modelled: nodes labelled `node.kubernetes.io/exclude-disruption`, and the NoExecute
//! clean-up upstream does when it first sees a node.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{Node, NodeCondition, Pod, PodCondition, Taint, Toleration};
use kubesim_api::object::{kind_info, Object};
use kubesim_api::time::{millis_of, time_at};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::Ctx;
use kubesim_store::EventType;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// --node-monitor-period.
pub const NODE_MONITOR_PERIOD_MS: Millis = 5_000;
/// --node-monitor-grace-period (50 s since v1.32).
pub const NODE_MONITOR_GRACE_PERIOD_MS: Millis = 50_000;
/// --node-startup-grace-period.
pub const NODE_STARTUP_GRACE_PERIOD_MS: Millis = 60_000;
/// `node.kubernetes.io/not-ready`.
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// `node.kubernetes.io/unreachable`.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `node.kubernetes.io/unschedulable`.
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

const TOKEN_MONITOR: u64 = 2;

/// --unhealthy-zone-threshold.
pub const UNHEALTHY_ZONE_THRESHOLD: f64 = 0.55;
/// --large-cluster-size-threshold.
pub const LARGE_CLUSTER_SIZE_THRESHOLD: usize = 50;

/// --node-eviction-rate (`evictionLimiterQPS`).
pub const NODE_EVICTION_RATE_QPS: f64 = 0.1;
/// --secondary-node-eviction-rate (`secondaryEvictionLimiterQPS`).
pub const SECONDARY_NODE_EVICTION_RATE_QPS: f64 = 0.01;
/// `scheduler.NodeEvictionPeriod`: how often upstream runs doNoExecuteTaintingPass.
pub const NODE_EVICTION_PERIOD_MS: Millis = 100;
const TOKEN_TAINT_PASS: u64 = 3;

/// The eviction rate (tokens per second) of a zone in a state (`setLimiterInZone`:
/// Normal → evictionLimiterQPS, PartialDisruption → `ReducedQPSFunc(zoneSize)`,
/// FullDisruption → `HealthyQPSFunc`).
pub fn zone_eviction_qps(state: ZoneState, zone_size: usize) -> f64 {
    match state {
        ZoneState::Normal | ZoneState::FullDisruption => NODE_EVICTION_RATE_QPS,
        ZoneState::PartialDisruption if zone_size > LARGE_CLUSTER_SIZE_THRESHOLD => SECONDARY_NODE_EVICTION_RATE_QPS,
        ZoneState::PartialDisruption => 0.0,
    }
}

/// client-go's `flowcontrol.NewTokenBucketRateLimiter(qps, 1)` in virtual time (a qps of 0 or
/// less is `NewFakeNeverRateLimiter`, which never accepts).
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    /// Tokens per second; ≤ 0 never accepts.
    pub qps: f64,
    /// Available tokens, at most 1 (the burst).
    pub tokens: f64,
    /// When `tokens` was last brought up to date.
    pub last_ms: Millis,
}

/// Tolerance for float rounding when a refill lands exactly on a whole token.
const TOKEN_EPSILON: f64 = 1e-9;

impl TokenBucket {
    /// A limiter created at `now`: a token bucket starts full.
    pub fn new(qps: f64, now: Millis) -> TokenBucket {
        TokenBucket { qps, tokens: if qps > 0.0 { 1.0 } else { 0.0 }, last_ms: now }
    }
    /// Whether this is the never-accepting limiter.
    pub fn is_never(&self) -> bool {
        self.qps <= 0.0
    }
    /// `RateLimiter.QPS()`: the never-limiter reports 1 (client-go throttle.go).
    pub fn reported_qps(&self) -> f64 {
        if self.is_never() {
            1.0
        } else {
            self.qps
        }
    }
    fn refill(&mut self, now: Millis) {
        if self.is_never() {
            return;
        }
        let elapsed_s = now.saturating_sub(self.last_ms) as f64 / 1000.0;
        self.tokens = (self.tokens + elapsed_s * self.qps).min(1.0);
        self.last_ms = self.last_ms.max(now);
    }
    /// `TryAccept`: takes a token if one is available at `now`.
    pub fn try_accept(&mut self, now: Millis) -> bool {
        if self.is_never() {
            return false;
        }
        self.refill(now);
        if self.tokens >= 1.0 - TOKEN_EPSILON {
            self.tokens = (self.tokens - 1.0).max(0.0);
            true
        } else {
            false
        }
    }
    /// When the next token is available (now or later); None for the never-limiter.
    pub fn next_token_at(&self, now: Millis) -> Option<Millis> {
        if self.is_never() {
            return None;
        }
        let mut bucket = self.clone();
        bucket.refill(now);
        if bucket.tokens >= 1.0 - TOKEN_EPSILON {
            return Some(now);
        }
        let wait_ms = ((1.0 - bucket.tokens) / self.qps * 1000.0 - TOKEN_EPSILON).ceil().max(0.0) as Millis;
        Some(bucket.last_ms + wait_ms)
    }
    /// `RateLimitedTimedQueue.SwapLimiter`: nothing if the QPS is unchanged; a new limiter
    /// otherwise, drained if the old one had no token to give.
    pub fn swap(&mut self, qps: f64, now: Millis) {
        if self.reported_qps() == qps {
            return;
        }
        if qps <= 0.0 {
            *self = TokenBucket::new(0.0, now);
            return;
        }
        let old_had_token = self.try_accept(now);
        let mut bucket = TokenBucket::new(qps, now);
        if !old_had_token {
            bucket.try_accept(now);
        }
        *self = bucket;
    }
}

/// `scheduler.RateLimitedTimedQueue` of one zone: a unique FIFO (by time added, ties in
/// insertion order) of node names plus its limiter. A value stays in the de-duplicating set
/// after it was processed until [`RateLimitedTimedQueue::remove`].
#[derive(Clone, Debug, PartialEq)]
pub struct RateLimitedTimedQueue {
    /// (node, process at), in processing order.
    items: Vec<(String, Millis)>,
    set: BTreeSet<String>,
    /// The zone's limiter.
    pub limiter: TokenBucket,
}

impl RateLimitedTimedQueue {
    /// An empty queue with a limiter.
    pub fn new(limiter: TokenBucket) -> RateLimitedTimedQueue {
        RateLimitedTimedQueue { items: Vec::new(), set: BTreeSet::new(), limiter }
    }
    /// `Add`: queues a value unless it is in the set; returns whether it was added.
    pub fn add(&mut self, value: &str, now: Millis) -> bool {
        if !self.set.insert(value.to_string()) {
            return false;
        }
        self.push(value.to_string(), now);
        true
    }
    fn push(&mut self, value: String, process_at: Millis) {
        let at = self.items.iter().position(|(_, t)| *t > process_at).unwrap_or(self.items.len());
        self.items.insert(at, (value, process_at));
    }
    /// `Remove`: drops a value from the queue and the set; returns whether it was in the set.
    pub fn remove(&mut self, value: &str) -> bool {
        self.items.retain(|(v, _)| v != value);
        self.set.remove(value)
    }
    /// `Clear`.
    pub fn clear(&mut self) {
        self.items.clear();
        self.set.clear();
    }
    /// The queued values in processing order.
    pub fn queued(&self) -> Vec<&str> {
        self.items.iter().map(|(v, _)| v.as_str()).collect()
    }
    /// Whether a value is in the de-duplicating set.
    pub fn contains(&self, value: &str) -> bool {
        self.set.contains(value)
    }
    /// `Try`: for the head value, take a token (stop if refused), stop if it is not due yet,
    /// else run `f`; `Ok(())` keeps the value in the set only, `Err(wait_ms)` retries it after
    /// `wait_ms` (+1, as upstream's `wait + 1ns`).
    pub fn try_process(&mut self, now: Millis, mut f: impl FnMut(&str) -> Result<(), Millis>) {
        while let Some((value, process_at)) = self.items.first().cloned() {
            if !self.limiter.try_accept(now) {
                break;
            }
            if now < process_at {
                break;
            }
            self.items.remove(0);
            if let Err(wait_ms) = f(&value) {
                if self.set.contains(&value) {
                    self.push(value, now + wait_ms + 1);
                }
            }
        }
    }
    /// When a pass could process the head next: its token and its due time; None if the queue
    /// is empty or the limiter never accepts.
    pub fn next_attempt(&self, now: Millis) -> Option<Millis> {
        let (_, process_at) = self.items.first()?;
        Some(self.limiter.next_token_at(now)?.max(*process_at))
    }
}

/// A zone's disruption state (`ComputeZoneState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneState {
    /// Healthy enough: normal eviction rate.
    Normal,
    /// At least 3 and ≥ 55 % of the zone's nodes are not ready.
    PartialDisruption,
    /// No node of the zone is ready.
    FullDisruption,
}

/// `ComputeZoneState` from (ready, not ready) node counts.
pub fn zone_state(ready: usize, not_ready: usize) -> ZoneState {
    if ready == 0 && not_ready > 0 {
        ZoneState::FullDisruption
    } else if not_ready > 2 && not_ready as f64 / (not_ready + ready) as f64 >= UNHEALTHY_ZONE_THRESHOLD {
        ZoneState::PartialDisruption
    } else {
        ZoneState::Normal
    }
}

/// A node's zone key (`GetZoneKey`: region and zone labels).
pub fn zone_of(node: &Node) -> String {
    let label = |key: &str| node.metadata.labels.as_ref().and_then(|l| l.get(key)).map_or("", |v| v.as_str());
    format!("{}:\x00:{}", label("topology.kubernetes.io/region"), label("topology.kubernetes.io/zone"))
}

/// What `tryUpdateNodeHealth` saw of a node: the observed and the current Ready status, and
/// the node (the shared object, or the controller's update of it).
type Observed = (Option<String>, Option<String>, Arc<Object>);

fn as_node(object: &Object) -> Option<&Node> {
    object.as_node()
}

fn node_condition<'a>(node: &'a Node, type_: &str) -> Option<&'a NodeCondition> {
    node.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

fn condition_taint(type_: &str, status: &str) -> Option<&'static str> {
    Some(match (type_, status) {
        ("Ready", "False") => TAINT_NOT_READY,
        ("Ready", "Unknown") => TAINT_UNREACHABLE,
        ("MemoryPressure", "True") => "node.kubernetes.io/memory-pressure",
        ("DiskPressure", "True") => "node.kubernetes.io/disk-pressure",
        ("NetworkUnavailable", "True") => "node.kubernetes.io/network-unavailable",
        ("PIDPressure", "True") => "node.kubernetes.io/pid-pressure",
        _ => return None,
    })
}

fn is_condition_taint_key(key: &str) -> bool {
    matches!(
        key,
        TAINT_NOT_READY
            | TAINT_UNREACHABLE
            | "node.kubernetes.io/memory-pressure"
            | "node.kubernetes.io/disk-pressure"
            | "node.kubernetes.io/network-unavailable"
            | "node.kubernetes.io/pid-pressure"
    )
}

/// The NoSchedule taints a node's conditions and spec.unschedulable call for
/// (`doNoScheduleTaintingPass`).
pub fn no_schedule_taints(node: &Node) -> Vec<String> {
    let mut keys = Vec::new();
    for c in node.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten() {
        if let Some(key) = condition_taint(&c.type_, &c.status) {
            keys.push(key.to_string());
        }
    }
    if node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false) {
        keys.push(TAINT_UNSCHEDULABLE.to_string());
    }
    keys
}

/// `SwapNodeControllerTaint` on a node value: adds (with timeAdded) and removes taints by
/// key+effect; returns whether anything changed.
pub fn swap_taints(node: &mut Node, add: &[(&str, &str)], remove: &[(&str, &str)], now: Millis) -> bool {
    let spec = node.spec.get_or_insert_with(Default::default);
    let taints = spec.taints.get_or_insert_with(Vec::new);
    let before = taints.len();
    taints.retain(|t| !remove.iter().any(|(k, e)| t.key == *k && t.effect == *e));
    let mut changed = taints.len() != before;
    for (key, effect) in add {
        if !taints.iter().any(|t| t.key == *key && t.effect == *effect) {
            taints.push(Taint { key: key.to_string(), effect: effect.to_string(), value: None, time_added: Some(time_at(now)) });
            changed = true;
        }
    }
    if taints.is_empty() {
        spec.taints = None;
    }
    changed
}

#[derive(Clone, Debug, Default)]
struct Health {
    probe: Millis,
    ready_transition: Millis,
    saved: Option<(Option<Millis>, Option<Millis>)>,
    lease_renew: Option<Millis>,
    observed_ready: Option<String>,
}

/// The node lifecycle controller.
#[derive(Clone, Debug)]
pub struct NodeLifecycleController {
    nodes: Cache,
    leases: Cache,
    health: BTreeMap<String, Health>,
    queue: WorkQueue,
    registered: BTreeSet<String>,
    /// `zoneStates` (None = stateInitial).
    zone_states: BTreeMap<String, Option<ZoneState>>,
    /// `zoneNoExecuteTainter`.
    tainters: BTreeMap<String, RateLimitedTimedQueue>,
    /// The pending one-shot tainting-pass timer, if any.
    taint_pass_at: Option<Millis>,
}

impl Default for NodeLifecycleController {
    fn default() -> Self {
        NodeLifecycleController::new()
    }
}

impl NodeLifecycleController {
    /// A controller with empty caches.
    pub fn new() -> NodeLifecycleController {
        NodeLifecycleController {
            nodes: Cache::default(),
            leases: Cache::default(),
            health: BTreeMap::new(),
            queue: WorkQueue::new(10),
            registered: BTreeSet::new(),
            zone_states: BTreeMap::new(),
            tainters: BTreeMap::new(),
            taint_pass_at: None,
        }
    }

    /// `tryUpdateNodeHealth`: returns (observed Ready status, current Ready status).
    fn try_update_health(&mut self, object: &Arc<Object>, ctx: &mut Ctx) -> Result<Observed, ApiError> {
        let node = as_node(object).expect("a node");
        let name = node.metadata.name.clone().unwrap_or_default();
        let created = created_ms(&node.metadata);
        let now = ctx.now;
        let current = node_condition(node, "Ready").cloned();
        let (observed_status, grace) = match &current {
            None => ("Unknown".to_string(), NODE_STARTUP_GRACE_PERIOD_MS),
            Some(c) => (c.status.clone(), NODE_MONITOR_GRACE_PERIOD_MS),
        };
        let stamps = |c: &NodeCondition| (c.last_heartbeat_time.as_ref().map(millis_of), c.last_transition_time.as_ref().map(millis_of));
        let mut health = match self.health.get(&name).cloned() {
            None => {
                if current.is_none() {
                    Health { probe: created, ready_transition: created, ..Default::default() }
                } else {
                    Health { probe: now, ready_transition: now, saved: current.as_ref().map(stamps), ..Default::default() }
                }
            }
            Some(h) => {
                let keep = |probe, ready_transition, saved| Health {
                    probe,
                    ready_transition,
                    saved,
                    lease_renew: h.lease_renew,
                    observed_ready: h.observed_ready.clone(),
                };
                match (&h.saved, &current) {
                    (None, Some(c)) => keep(now, now, Some(stamps(c))),
                    (Some(_), None) => keep(now, now, None),
                    (Some(saved), Some(c)) if saved.0 != stamps(c).0 => {
                        let transition = if saved.1 != stamps(c).1 { now } else { h.ready_transition };
                        keep(now, transition, Some(stamps(c)))
                    }
                    _ => h.clone(),
                }
            }
        };
        if let Some(lease) = self.leases.get_named("kube-node-lease", &name) {
            if let Object::Lease(lease) = lease.as_ref() {
                let renew = lease
                    .spec
                    .as_ref()
                    .and_then(|s| s.renew_time.as_ref())
                    .map(|t| (t.0.as_millisecond() - kubesim_api::time::EPOCH_UNIX_SECONDS * 1000).max(0) as Millis);
                if renew.is_some() && (health.lease_renew.is_none() || health.lease_renew < renew) {
                    health.lease_renew = renew;
                    health.probe = now;
                }
            }
        }
        let mut object = object.clone();
        let mut current_status = current.as_ref().map(|c| c.status.clone());
        if now > health.probe + grace {
            let mut node = node.clone();
            let status = node.status.get_or_insert_with(Default::default);
            let conditions = status.conditions.get_or_insert_with(Vec::new);
            for type_ in ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"] {
                match conditions.iter_mut().find(|c| c.type_ == type_) {
                    None => conditions.push(NodeCondition {
                        type_: type_.into(),
                        status: "Unknown".into(),
                        reason: Some("NodeStatusNeverUpdated".into()),
                        message: Some("Kubelet never posted node status.".into()),
                        last_heartbeat_time: node.metadata.creation_timestamp.clone(),
                        last_transition_time: Some(time_at(now)),
                    }),
                    Some(c) => {
                        if c.status != "Unknown" {
                            c.status = "Unknown".into();
                            c.reason = Some("NodeStatusUnknown".into());
                            c.message = Some("Kubelet stopped posting node status.".into());
                            c.last_transition_time = Some(time_at(now));
                        }
                    }
                }
            }
            let new_ready = node_condition(&node, "Ready").cloned();
            if new_ready != current {
                let updated = ctx.update_status(Object::Node(Box::new(node)))?;
                self.nodes.put(updated.clone());
                health.ready_transition = now;
                health.saved = as_node(&updated).and_then(|n| node_condition(n, "Ready")).map(stamps);
                current_status = Some("Unknown".into());
                object = updated;
            }
        }
        self.health.insert(name, health);
        Ok((Some(observed_status), current_status, object))
    }

    /// The pods bound to a node, from the API server's node index.
    fn pods_on(ctx: &Ctx, node: &str) -> Vec<Arc<Object>> {
        ctx.api.store().pods_on_node(node).cloned().collect()
    }

    fn monitor(&mut self, ctx: &mut Ctx) {
        // The cached objects are shared; a node is copied only where it is changed.
        let nodes: Vec<Arc<Object>> = self.nodes.iter().filter(|o| as_node(o).is_some()).cloned().collect();
        // classifyNodes / addPodEvictorForNewZone: a queue with a full bucket per new zone.
        for node in nodes.iter().filter_map(|o| as_node(o)) {
            let zone = zone_of(node);
            if !self.zone_states.contains_key(&zone) {
                self.zone_states.insert(zone.clone(), None);
                self.tainters.insert(zone, RateLimitedTimedQueue::new(TokenBucket::new(NODE_EVICTION_RATE_QPS, ctx.now)));
            }
        }
        // First pass: tryUpdateNodeHealth for every node.
        let mut results = Vec::new();
        for node in nodes {
            let Ok((observed, current, node)) = self.try_update_health(&node, ctx) else { continue };
            results.push((observed, current, node));
        }
        // Zone sizes and ready counts from the current Ready conditions.
        let mut zones: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for (_, current, node) in &results {
            let entry = zones.entry(zone_of(as_node(node).expect("a node"))).or_insert((0, 0));
            if current.as_deref() == Some("True") {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
        let mut seen = Vec::new();
        for (observed, current, object) in results {
            seen.push(object.clone());
            let node = as_node(&object).expect("a node");
            let name = node.metadata.name.clone().unwrap_or_default();
            if node_condition(node, "Ready").is_none() {
                continue;
            }
            let observed = observed.unwrap_or_default();
            self.process_taint_based_eviction(node, &observed, ctx);
            let current = current.unwrap_or_default();
            let previous_observed = self.health.get(&name).and_then(|h| h.observed_ready.clone());
            if current != "True" && observed == "True" {
                ctx.event(&object, "Normal", "NodeNotReady", format!("Node {name} status is now: NodeNotReady"));
            }
            if current != "True" && (observed == "True" || previous_observed.as_deref() != Some(current.as_str())) {
                self.mark_pods_not_ready(&name, ctx);
            }
            if let Some(h) = self.health.get_mut(&name) {
                h.observed_ready = Some(current);
            }
        }
        self.handle_disruption(&zones, &seen, ctx);
        // doNoExecuteTaintingPass, as the next 100 ms pass would run it.
        self.no_execute_tainting_pass(ctx);
    }

    /// `processTaintBaseEviction` on the observed Ready status.
    fn process_taint_based_eviction(&mut self, node: &Node, observed: &str, ctx: &mut Ctx) {
        let has = |node: &Node, key: &str| {
            node.spec.as_ref().and_then(|s| s.taints.as_ref()).is_some_and(|ts| ts.iter().any(|t| t.key == key && t.effect == "NoExecute"))
        };
        let (want, opposite) = match observed {
            "False" => (TAINT_NOT_READY, TAINT_UNREACHABLE),
            "Unknown" => (TAINT_UNREACHABLE, TAINT_NOT_READY),
            _ => {
                // markNodeAsReachable (a copy of the node only if it has a taint to remove).
                if has(node, TAINT_NOT_READY) || has(node, TAINT_UNREACHABLE) {
                    let mut node = node.clone();
                    if swap_taints(&mut node, &[], &[(TAINT_NOT_READY, "NoExecute"), (TAINT_UNREACHABLE, "NoExecute")], ctx.now) {
                        if let Ok(updated) = ctx.update(Object::Node(Box::new(node))) {
                            self.nodes.put(updated);
                        }
                    }
                }
                let name = node.metadata.name.clone().unwrap_or_default();
                if let Some(q) = self.tainters.get_mut(&zone_of(node)) {
                    q.remove(&name);
                }
                return;
            }
        };
        if has(node, opposite) {
            // The opposite NoExecute taint is swapped straight away.
            let mut node = node.clone();
            if swap_taints(&mut node, &[(want, "NoExecute")], &[(opposite, "NoExecute")], ctx.now) {
                if let Ok(updated) = ctx.update(Object::Node(Box::new(node))) {
                    self.nodes.put(updated);
                }
            }
            return;
        }
        // markNodeForTainting.
        let name = node.metadata.name.clone().unwrap_or_default();
        let tainted = has(node, want);
        if let Some(q) = self.tainters.get_mut(&zone_of(node)) {
            if !tainted {
                q.remove(&name);
            }
            q.add(&name, ctx.now);
        }
    }

    /// `handleDisruption` and `setLimiterInZone`.
    fn handle_disruption(&mut self, zones: &BTreeMap<String, (usize, usize)>, nodes: &[Arc<Object>], ctx: &mut Ctx) {
        let nodes = nodes.iter().filter_map(|o| as_node(o));
        let now = ctx.now;
        let new_states: BTreeMap<String, ZoneState> = zones.iter().map(|(z, (ready, not_ready))| (z.clone(), zone_state(*ready, *not_ready))).collect();
        let all_are_fully_disrupted = new_states.values().all(|s| *s == ZoneState::FullDisruption);
        for zone in new_states.keys() {
            self.zone_states.entry(zone.clone()).or_insert(None);
        }
        self.zone_states.retain(|z, _| zones.contains_key(z));
        let all_were_fully_disrupted = self.zone_states.values().all(|s| *s == Some(ZoneState::FullDisruption));
        if all_are_fully_disrupted && all_were_fully_disrupted {
            return;
        }
        let size = |z: &str| zones.get(z).map(|(r, n)| r + n).unwrap_or(0);
        if all_are_fully_disrupted {
            // Entering master disruption mode: no NoExecute taints, no evictions.
            for node in nodes {
                let mut node = self
                    .nodes
                    .get_named("", node.metadata.name.as_deref().unwrap_or_default())
                    .and_then(|o| as_node(o))
                    .cloned()
                    .unwrap_or_else(|| node.clone());
                if swap_taints(&mut node, &[], &[(TAINT_NOT_READY, "NoExecute"), (TAINT_UNREACHABLE, "NoExecute")], now) {
                    if let Ok(updated) = ctx.update(Object::Node(Box::new(node.clone()))) {
                        self.nodes.put(updated);
                    }
                }
                let name = node.metadata.name.clone().unwrap_or_default();
                if let Some(q) = self.tainters.get_mut(&zone_of(&node)) {
                    q.remove(&name);
                }
            }
            let zone_names: Vec<String> = self.zone_states.keys().cloned().collect();
            for zone in zone_names {
                if let Some(q) = self.tainters.get_mut(&zone) {
                    q.limiter.swap(0.0, now);
                }
                self.zone_states.insert(zone, Some(ZoneState::FullDisruption));
            }
            return;
        }
        if all_were_fully_disrupted {
            // Leaving master disruption mode: every node gets a fresh probe timestamp.
            for node in nodes {
                if let Some(h) = self.health.get_mut(node.metadata.name.as_deref().unwrap_or_default()) {
                    h.probe = now;
                    h.ready_transition = now;
                }
            }
        }
        let zone_names: Vec<String> = self.zone_states.keys().cloned().collect();
        for zone in zone_names {
            let new_state = new_states[&zone];
            if !all_were_fully_disrupted && self.zone_states[&zone] == Some(new_state) {
                continue;
            }
            if let Some(q) = self.tainters.get_mut(&zone) {
                q.limiter.swap(zone_eviction_qps(new_state, size(&zone)), now);
            }
            self.zone_states.insert(zone, Some(new_state));
        }
    }

    /// `doNoExecuteTaintingPass`, then a one-shot timer for the next pass that can take a token.
    fn no_execute_tainting_pass(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        let zones: Vec<String> = self.tainters.keys().cloned().collect();
        for zone in zones {
            let Some(mut q) = self.tainters.remove(&zone) else { continue };
            q.try_process(now, |name| self.apply_no_execute_taint(name, ctx));
            self.tainters.insert(zone, q);
        }
        let next = self.tainters.values().filter_map(|q| q.next_attempt(now)).min();
        let Some(next) = next else { return };
        let grid = NODE_EVICTION_PERIOD_MS;
        let mut at = next.div_ceil(grid) * grid;
        if at <= now {
            at = (now / grid + 1) * grid;
        }
        if self.taint_pass_at.is_some_and(|pending| pending > now && pending <= at) {
            return;
        }
        self.taint_pass_at = Some(at);
        ctx.after(at - now, TOKEN_TAINT_PASS);
    }

    /// The action of doNoExecuteTaintingPass for one queued node: the taint its current Ready
    /// condition calls for (`Err(retry ms)` when it cannot be applied now).
    fn apply_no_execute_taint(&mut self, name: &str, ctx: &mut Ctx) -> Result<(), Millis> {
        let Some(node) = self.nodes.get_named("", name).and_then(|o| as_node(o)).cloned() else { return Ok(()) };
        let Some(ready) = node_condition(&node, "Ready") else { return Err(50) };
        let (add, remove) = match ready.status.as_str() {
            "False" => (TAINT_NOT_READY, TAINT_UNREACHABLE),
            "Unknown" => (TAINT_UNREACHABLE, TAINT_NOT_READY),
            _ => return Ok(()),
        };
        let mut tainted = node.clone();
        if !swap_taints(&mut tainted, &[(add, "NoExecute")], &[(remove, "NoExecute")], ctx.now) {
            return Ok(());
        }
        // SwapNodeControllerTaint retries a conflict with the node read from the API server.
        let result = match ctx.update(Object::Node(Box::new(tainted))) {
            Ok(updated) => Ok(updated),
            Err(_) => {
                let info = kind_info("v1", "Node").expect("served");
                let Some(mut fresh) = ctx.api.get(info, "", name).ok().and_then(|o| as_node(&o).cloned()) else { return Ok(()) };
                if !swap_taints(&mut fresh, &[(add, "NoExecute")], &[(remove, "NoExecute")], ctx.now) {
                    return Ok(());
                }
                ctx.update(Object::Node(Box::new(fresh)))
            }
        };
        match result {
            Ok(updated) => {
                self.nodes.put(updated);
                Ok(())
            }
            Err(_) => Err(0),
        }
    }

    /// `MarkPodsNotReady`.
    fn mark_pods_not_ready(&mut self, node: &str, ctx: &mut Ctx) {
        for object in Self::pods_on(ctx, node) {
            let Some(pod) = object.as_pod() else { continue };
            if !is_pod_ready(pod) {
                continue;
            }
            let mut pod: Pod = pod.clone();
            if let Some(c) = pod.status.as_mut().and_then(|s| s.conditions.as_mut()).and_then(|c| c.iter_mut().find(|c| c.type_ == "Ready")) {
                c.status = "False".into();
                c.last_transition_time = Some(time_at(ctx.now));
            }
            if let Ok(updated) = ctx.update_status(Object::Pod(Box::new(pod))) {
                ctx.event(&updated, "Warning", "NodeNotReady", "Node is not ready".into());
            }
        }
    }

    /// `doNoScheduleTaintingPass` for one node.
    fn no_schedule_pass(&mut self, name: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(node) = self.nodes.get_named("", name).and_then(|o| as_node(o)).cloned() else { return Ok(()) };
        let want = no_schedule_taints(&node);
        let have: Vec<String> = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .into_iter()
            .flatten()
            .filter(|t| t.effect == "NoSchedule" && (t.key == TAINT_UNSCHEDULABLE || is_condition_taint_key(&t.key)))
            .map(|t| t.key.clone())
            .collect();
        let add: Vec<(&str, &str)> = want.iter().filter(|k| !have.contains(k)).map(|k| (k.as_str(), "NoSchedule")).collect();
        let del: Vec<(&str, &str)> = have.iter().filter(|k| !want.contains(k)).map(|k| (k.as_str(), "NoSchedule")).collect();
        if add.is_empty() && del.is_empty() {
            return Ok(());
        }
        let mut node = node.clone();
        swap_taints(&mut node, &add, &del, ctx.now);
        let updated = ctx.update(Object::Node(Box::new(node)))?;
        self.nodes.put(updated);
        Ok(())
    }
}

impl Reconciler for NodeLifecycleController {
    fn name(&self) -> &'static str {
        "node-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "nodes")) => nodes,
        Informer::in_namespace(("coordination.k8s.io", "leases"), "kube-node-lease") => leases,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let names: Vec<String> = self.nodes.iter().map(|o| o.name().to_string()).collect();
        for name in names {
            self.queue.add((String::new(), name), ctx);
        }
        ctx.after_periodic(NODE_MONITOR_PERIOD_MS, TOKEN_MONITOR);
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        if event.resource != ("", "nodes") {
            return;
        }
        let name = event.object.name().to_string();
        match event.event_type {
            EventType::Deleted => {
                self.health.remove(&name);
                if self.registered.remove(&name) {
                    ctx.event(&event.object, "Normal", "RemovingNode", format!("Node {name} event: Removing Node {name} from Controller"));
                }
            }
            _ => {
                if self.registered.insert(name.clone()) {
                    ctx.event(&event.object, "Normal", "RegisteredNode", format!("Node {name} event: Registered Node {name} in Controller"));
                }
                self.queue.add((String::new(), name), ctx);
            }
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.no_schedule_pass(&key.1, ctx).map(|_| Action::AwaitChange)
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if token == TOKEN_MONITOR {
            self.monitor(ctx);
            ctx.after_periodic(NODE_MONITOR_PERIOD_MS, TOKEN_MONITOR);
            return;
        }
        if token == TOKEN_TAINT_PASS {
            if self.taint_pass_at == Some(ctx.now) {
                self.taint_pass_at = None;
            }
            self.no_execute_tainting_pass(ctx);
        }
    }
}

/// `ToleratesTaint` (pkg/apis/core/v1/helper).
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    let operator = toleration.operator.as_deref().unwrap_or("Equal");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match operator {
        "Exists" => true,
        "" | "Equal" => toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        _ => false,
    }
}

/// `GetMatchingTolerations` + `getMinTolerationTime`: None if some taint is not tolerated
/// (evict now); Some(None) if tolerated forever; Some(Some(seconds)) otherwise.
pub fn toleration_time(taints: &[Taint], tolerations: &[Toleration]) -> Option<Option<i64>> {
    let mut used: Vec<&Toleration> = Vec::new();
    for taint in taints {
        let t = tolerations.iter().find(|t| tolerates(t, taint))?;
        used.push(t);
    }
    if used.is_empty() {
        return Some(Some(0));
    }
    let mut min: Option<i64> = None;
    for t in used {
        if let Some(s) = t.toleration_seconds {
            if s <= 0 {
                return Some(Some(0));
            }
            min = Some(min.map_or(s, |m| m.min(s)));
        }
    }
    Some(min)
}

/// The taint eviction controller: deletes pods that do not tolerate their node's NoExecute
/// taints, at once or after the smallest matching tolerationSeconds.
#[derive(Clone, Debug, Default)]
pub struct TaintEvictionController {
    nodes: Cache,
    pods: Cache,
    /// Pod key → (created at, fires at, token).
    scheduled: BTreeMap<Key, (Millis, Millis, u64)>,
    tokens: BTreeMap<u64, Key>,
    next_token: u64,
}

impl TaintEvictionController {
    /// A controller with empty caches.
    pub fn new() -> TaintEvictionController {
        TaintEvictionController { next_token: 100, ..Default::default() }
    }

    fn no_execute_taints(&self, node: &str) -> Vec<Taint> {
        self.nodes
            .get_named("", node)
            .and_then(|o| as_node(o))
            .and_then(|n| n.spec.as_ref())
            .and_then(|s| s.taints.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|t| t.effect == "NoExecute")
            .collect()
    }

    fn cancel(&mut self, key: &Key, ctx: &mut Ctx) {
        if let Some((_, _, token)) = self.scheduled.remove(key) {
            self.tokens.remove(&token);
            if let Some(pod) = self.pods.get(key).cloned() {
                ctx.event(&pod, "Normal", "TaintManagerEviction", format!("Cancelling deletion of Pod {}", key_string(key)));
            }
        }
    }

    fn schedule(&mut self, key: Key, created: Millis, fire: Millis, ctx: &mut Ctx) {
        let token = self.next_token;
        self.next_token += 1;
        self.tokens.insert(token, key.clone());
        self.scheduled.insert(key, (created, fire, token));
        ctx.after(fire.saturating_sub(ctx.now), token);
    }

    /// `processPodOnNode`.
    fn process_pod(&mut self, key: &Key, ctx: &mut Ctx) {
        let Some(object) = self.pods.get(key).cloned() else {
            self.scheduled.remove(key);
            return;
        };
        let Some(pod) = object.as_pod() else { return };
        if pod.metadata.deletion_timestamp.is_some() {
            return;
        }
        let node = pod_node(pod).to_string();
        if node.is_empty() {
            return;
        }
        let taints = self.no_execute_taints(&node);
        if taints.is_empty() {
            self.cancel(key, ctx);
            return;
        }
        let tolerations = pod.spec.as_ref().and_then(|s| s.tolerations.as_deref()).unwrap_or_default();
        match toleration_time(&taints, tolerations) {
            None => {
                self.cancel(key, ctx);
                self.schedule(key.clone(), ctx.now, ctx.now, ctx);
            }
            Some(None) => self.cancel(key, ctx),
            Some(Some(seconds)) => {
                let mut start = ctx.now;
                let trigger = start + seconds as Millis * 1000;
                if let Some((created, _, _)) = self.scheduled.get(key).cloned() {
                    start = created;
                    if start + (seconds as Millis) * 1000 < trigger {
                        return;
                    }
                    self.cancel(key, ctx);
                }
                self.schedule(key.clone(), start, start + seconds as Millis * 1000, ctx);
            }
        }
    }

    fn evict(&mut self, key: &Key, ctx: &mut Ctx) {
        self.scheduled.remove(key);
        let info = kind_info("v1", "Pod").expect("served");
        let Ok(current) = ctx.api.get(info, &key.0, &key.1) else { return };
        ctx.event(&current, "Normal", "TaintManagerEviction", format!("Marking for deletion Pod {}", key_string(key)));
        if let Some(pod) = current.as_pod() {
            let mut pod = pod.clone();
            let status = pod.status.get_or_insert_with(Default::default);
            let conditions = status.conditions.get_or_insert_with(Vec::new);
            if !conditions.iter().any(|c| c.type_ == "DisruptionTarget" && c.status == "True") {
                conditions.retain(|c| c.type_ != "DisruptionTarget");
                conditions.push(PodCondition {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                    reason: Some("DeletionByTaintManager".into()),
                    message: Some("Taint manager: deleting due to NoExecute taint".into()),
                    last_transition_time: Some(time_at(ctx.now)),
                    ..Default::default()
                });
                let _ = ctx.update_status(Object::Pod(Box::new(pod)));
            }
        }
        let _ = ctx.delete(info, &key.0, &key.1, DeleteOptions::default());
    }
}

impl Reconciler for TaintEvictionController {
    fn name(&self) -> &'static str {
        "taint-eviction-controller"
    }
    crate::informers! {
        queue: none;
        Informer::all(("", "nodes")) => nodes,
        Informer::all(("", "pods")) => pods,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let keys: Vec<Key> = self.pods.iter().map(|o| key_of(o)).collect();
        for key in keys {
            self.process_pod(&key, ctx);
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        let old = change.old;
        match event.resource {
            ("", "nodes") => {
                let taints = |o: Option<&Object>| -> Vec<Taint> {
                    o.and_then(as_node)
                        .and_then(|n| n.spec.as_ref())
                        .and_then(|s| s.taints.clone())
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|t| t.effect == "NoExecute")
                        .collect()
                };
                let (before, after) = (taints(old.as_deref()), taints(Some(&event.object)));
                if before == after && event.event_type != EventType::Deleted {
                    return;
                }
                let name = event.object.name().to_string();
                let keys: Vec<Key> = self.pods.iter().filter(|o| o.as_pod().is_some_and(|p| pod_node(p) == name)).map(|o| key_of(o)).collect();
                for key in keys {
                    self.process_pod(&key, ctx);
                }
            }
            _ => {
                let key = key_of(&event.object);
                if event.event_type == EventType::Deleted {
                    if let Some((_, _, token)) = self.scheduled.remove(&key) {
                        self.tokens.remove(&token);
                    }
                    return;
                }
                // (Borrowed: compared for every pod update of the cluster.)
                fn relevant(o: &Object) -> Option<(&str, Option<&Vec<Toleration>>)> {
                    o.as_pod().map(|p| (pod_node(p), p.spec.as_ref().and_then(|s| s.tolerations.as_ref())))
                }
                if old.as_deref().map(relevant) == Some(relevant(&event.object)) {
                    return;
                }
                self.process_pod(&key, ctx);
            }
        }
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if let Some(key) = self.tokens.remove(&token) {
            if self.scheduled.get(&key).is_some_and(|(_, _, t)| *t == token) {
                self.evict(&key, ctx);
            }
        }
    }
}
