//! The scheduler component: watches pods and nodes, keeps the cache and the queue, and runs one
//! scheduling cycle per timer tick (`schedule_one.go`): PreFilter → Filter (adaptive
//! percentageOfNodesToScore, round-robin start) → PostFilter (preemption) → PreScore → Score →
//! NormalizeScore × weight → selectHost → Reserve → Permit → PreBind → Bind → PostBind. Each
//! attempt's explanation is kept in the scheduler ([`Scheduler::attempts`]), never written to the pod.

use crate::cache::{Cache, NodeInfo, PodInfo};
use crate::config::{default_profile, parse_configuration, GlobalConfig};
use crate::explain::{Attempt, FilterRecord, History, Outcome, ScoreRecord, Stopwatch};
use crate::framework::{ClusterEvent, ClusterView, Code, CycleState, Listers, Point, Profile, Status};
use crate::latency;
use crate::queue::{Location, SchedulingQueue, FLUSH_UNSCHEDULABLE_PERIOD_MS};
use k8s_openapi::api::core::v1::{Pod, PodCondition};
use kubesim_api::selector::Selector;
use kubesim_api::time::time_at;
use kubesim_api::{Millis, Object};
use kubesim_runtime::{Component, Ctx, Interest, WatchEvent, WatchFilter};
use kubesim_store::EventType;
use rand_core::RngCore;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const TOKEN_CYCLE: u64 = 1;
const TOKEN_BACKOFF: u64 = 2;
const TOKEN_FLUSH: u64 = 3;
const TOKEN_BIND_POLL: u64 = 4;

/// minFeasibleNodesToFind.
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// minFeasibleNodesPercentageToFind.
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;

/// `numFeasibleNodesToFind(percentageOfNodesToScore, numAllNodes)`.
pub fn num_feasible_nodes_to_find(percentage: i32, num_all_nodes: usize) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    let mut pct = percentage as i64;
    if pct == 0 {
        pct = (50 - num_all_nodes as i64 / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    }
    let n = (num_all_nodes as i64 * pct / 100) as usize;
    n.max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// Builds the FitError message (`FitError.Error()`): `0/N nodes are available: <histogram>.`
/// plus the PostFilter message.
pub fn fit_error_message<'a>(
    num_all_nodes: usize,
    pre_filter_msg: Option<&str>,
    node_reasons: impl IntoIterator<Item = &'a str>,
    post_filter_msg: Option<&str>,
) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    match pre_filter_msg {
        Some(m) if !m.is_empty() => msg.push_str(&format!(" {m}.")),
        _ => {
            let histogram = reasons_histogram(node_reasons);
            if !histogram.is_empty() {
                msg.push_str(&format!(" {}.", histogram.join(", ")));
            }
        }
    }
    if let Some(p) = post_filter_msg.filter(|p| !p.is_empty()) {
        msg.push(' ');
        msg.push_str(p);
        if !p.ends_with('.') {
            msg.push('.');
        }
    }
    msg
}

/// `sortReasonsHistogram`: `"<count> <reason>"` entries sorted as strings, over every
/// node's reasons in turn.
pub fn reasons_histogram<'a>(node_reasons: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in node_reasons {
        *counts.entry(r).or_insert(0) += 1;
    }
    let mut list: Vec<String> = counts.into_iter().map(|(r, c)| format!("{c} {r}")).collect();
    kubesim_api::sort::sort(&mut list);
    list
}

/// Reservoir-sampled choice among the highest totals (`selectHost`); `totals` in feasible order.
pub fn select_host(totals: &[i64], rng: &mut dyn RngCore) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut count = 0u64;
    for (i, t) in totals.iter().enumerate() {
        match best {
            None => {
                best = Some(i);
                count = 1;
            }
            Some(b) if *t > totals[b] => {
                best = Some(i);
                count = 1;
            }
            Some(b) if *t == totals[b] => {
                count += 1;
                if rng.next_u64().is_multiple_of(count) {
                    best = Some(i);
                }
            }
            _ => {}
        }
    }
    best
}

/// Why a scheduling cycle found no node.
#[derive(Clone, Debug, Default)]
pub struct Diagnosis {
    /// Nodes in the snapshot.
    pub num_all_nodes: usize,
    /// PreFilter rejection message.
    pub pre_filter_msg: Option<String>,
    /// Failed nodes: (node index, status).
    pub node_statuses: Vec<(usize, Status)>,
    /// Plugins that rejected the pod.
    pub plugins: BTreeSet<&'static str>,
    /// PostFilter message.
    pub post_filter_msg: Option<String>,
    /// The status of nodes a PreFilter result excluded (not evaluated).
    pub absent: Option<Status>,
}

impl Diagnosis {
    /// The FitError message.
    pub fn message(&self) -> String {
        if self.num_all_nodes == 0 {
            return "no nodes available to schedule pods".to_string();
        }
        let evaluated = self.node_statuses.iter().flat_map(|(_, s)| s.reasons.iter().map(String::as_str));
        let absent = self
            .absent
            .iter()
            .flat_map(|a| std::iter::repeat_n(&a.reasons, self.num_all_nodes.saturating_sub(self.node_statuses.len())))
            .flatten()
            .map(String::as_str);
        fit_error_message(self.num_all_nodes, self.pre_filter_msg.as_deref(), evaluated.chain(absent), self.post_filter_msg.as_deref())
    }
    /// The status of a node (None: it passed or was not evaluated). Linear in the statuses:
    /// for every node at once use [`Diagnosis::statuses_by_node`].
    pub fn status_of(&self, index: usize) -> Option<&Status> {
        self.node_statuses.iter().find(|(i, _)| *i == index).map(|(_, s)| s).or(self.absent.as_ref())
    }
    /// [`Diagnosis::status_of`] for every node index below `nodes`, in one pass.
    pub fn statuses_by_node(&self, nodes: usize) -> Vec<Option<&Status>> {
        let mut out = vec![self.absent.as_ref(); nodes];
        for (i, s) in &self.node_statuses {
            if let Some(slot) = out.get_mut(*i) {
                *slot = Some(s);
            }
        }
        out
    }
}

/// Switches for what the scheduler records. The history defaults bound memory to roughly
/// `max_history_pods × max_attempts_per_pod × (evaluated nodes × ~300 bytes)` in the worst case
/// (all pods retried, detailed records); typical runs keep one attempt per pod, and a deleted
/// pod's attempts are dropped with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Record v1 Events (Scheduled, FailedScheduling, Preempted).
    pub events: bool,
    /// Keep an [`Attempt`] history (the explanation the UI shows).
    pub history: bool,
    /// Attempts kept per pod (oldest dropped).
    pub max_attempts_per_pod: usize,
    /// Live pods whose history is kept (the pod first recorded longest ago is dropped first).
    pub max_history_pods: usize,
    /// Above this many nodes, attempts keep per-node filter verdicts only in
    /// the FitError summary and scores only for the top 3 nodes and the selected one.
    pub detail_max_nodes: usize,
    /// Write kube-scheduler-simulator's result annotations (`kube-scheduler-simulator.sigs.k8s.io/*`)
    /// to each pod after its scheduling attempt, as its debuggable scheduler does. Off by
    /// default: kube-scheduler writes no annotations (`--scheduler-annotations` turns it on).
    pub simulator_annotations: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { events: true, history: true, max_attempts_per_pod: 8, max_history_pods: 10_000, detail_max_nodes: 500, simulator_annotations: false }
    }
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Scheduling cycles run.
    pub cycles: u64,
    /// Pods bound.
    pub scheduled: u64,
    /// Unschedulable results.
    pub unschedulable: u64,
    /// Errors (binding failures).
    pub errors: u64,
    /// Pods preempted.
    pub preempted: u64,
}

/// The scheduler component.
#[derive(Clone, Debug)]
pub struct Scheduler {
    pub(crate) profiles: Vec<Profile>,
    pub(crate) global: GlobalConfig,
    pub(crate) cache: Cache,
    pub(crate) listers: Listers,
    pub(crate) queue: SchedulingQueue,
    /// node → pods nominated to it.
    pub(crate) nominated: BTreeMap<String, Vec<Arc<PodInfo>>>,
    next_start_node_index: usize,
    options: Options,
    /// Per live pod, shared copy-on-write: a cloned scheduler (a time-travel snapshot) shares
    /// the recorded attempts instead of copying them.
    history: History,
    cycle_pending: bool,
    backoff_timer_at: Option<Millis>,
    flush_timer: bool,
    stats: Stats,
    /// Binding cycles parked in a waiting PreBind (VolumeBinding), by pod key.
    waiting: BTreeMap<String, WaitingBinding>,
    bind_poll_at: Option<Millis>,
}

/// A binding cycle waiting in PreBind (upstream: its binding goroutine, blocked in
/// BindPodVolumes' poll).
#[derive(Clone, Debug)]
pub(crate) struct WaitingBinding {
    pi: usize,
    pod: Arc<PodInfo>,
    state: CycleState,
    node: String,
    attempt: Attempt,
    reserved: Vec<usize>,
    /// The PreBind plugin (position in the profile) it waits in.
    pre_bind_at: usize,
    deadline: Millis,
    next_poll: Millis,
}

enum BindResult {
    Done(Box<Attempt>),
    Parked,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler::new()
    }
}

impl Scheduler {
    /// A scheduler with the default profile.
    pub fn new() -> Scheduler {
        Scheduler::with_profiles(GlobalConfig::default(), vec![default_profile()])
    }

    fn with_profiles(global: GlobalConfig, profiles: Vec<Profile>) -> Scheduler {
        let queue = SchedulingQueue::new(global.pod_initial_backoff_seconds * 1000, global.pod_max_backoff_seconds * 1000);
        Scheduler {
            profiles,
            global,
            cache: Cache::default(),
            listers: Listers::default(),
            queue,
            nominated: BTreeMap::new(),
            next_start_node_index: 0,
            options: Options::default(),
            history: History::default(),
            cycle_pending: false,
            backoff_timer_at: None,
            flush_timer: false,
            stats: Stats::default(),
            waiting: BTreeMap::new(),
            bind_poll_at: None,
        }
    }

    /// A scheduler from a KubeSchedulerConfiguration (`kubescheduler.config.k8s.io/v1`) as JSON.
    pub fn from_config(config: &serde_json::Value) -> Result<Scheduler, String> {
        let (global, profiles) = parse_configuration(config)?;
        Ok(Scheduler::with_profiles(global, profiles))
    }

    /// Turns v1 Events on or off (default on).
    pub fn with_events(mut self, on: bool) -> Scheduler {
        self.options.events = on;
        self
    }
    /// Turns the attempt history on or off (default on).
    pub fn with_history(mut self, on: bool) -> Scheduler {
        self.options.history = on;
        self
    }
    /// Writes kube-scheduler-simulator's result annotations ([`Options::simulator_annotations`]).
    pub fn with_simulator_annotations(mut self, on: bool) -> Scheduler {
        self.options.simulator_annotations = on;
        self
    }
    /// The options.
    pub fn options(&self) -> Options {
        self.options
    }
    /// Replaces the options.
    pub fn with_options(mut self, options: Options) -> Scheduler {
        self.options = options;
        self
    }
    /// Counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }
    pub(crate) fn stats_mut(&mut self) -> &mut Stats {
        &mut self.stats
    }
    /// The profiles' scheduler names.
    pub fn scheduler_names(&self) -> Vec<&str> {
        self.profiles.iter().map(|p| p.scheduler_name.as_str()).collect()
    }
    /// The profile serving `scheduler_name`.
    pub fn profile(&self, scheduler_name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.scheduler_name == scheduler_name)
    }
    /// The global configuration.
    pub fn global_config(&self) -> &GlobalConfig {
        &self.global
    }
    /// Every recorded attempt for a pod, oldest first (empty once the pod is deleted, or with
    /// the history off).
    pub fn attempts(&self, namespace: &str, name: &str) -> &[Attempt] {
        self.history.get(&format!("{namespace}/{name}"))
    }
    /// The latest attempt for a pod: the explanation of the scheduler's last decision.
    pub fn last_attempt(&self, namespace: &str, name: &str) -> Option<&Attempt> {
        self.attempts(namespace, name).last()
    }
    /// Every pod with recorded attempts (`namespace/name`), in key order.
    pub fn attempted_pods(&self) -> impl Iterator<Item = &str> {
        self.history.keys()
    }
    /// The cache (nodes and their aggregates).
    pub fn cache(&self) -> &Cache {
        &self.cache
    }
    /// The scheduling queue (pending pods and where they wait).
    pub fn queue(&self) -> &SchedulingQueue {
        &self.queue
    }
    /// Pods nominated to nodes by preemption (node → pod keys), in node order.
    pub fn nominations(&self) -> Vec<(String, Vec<String>)> {
        self.nominated.iter().map(|(n, pods)| (n.clone(), pods.iter().map(|p| p.key.clone()).collect())).collect()
    }
    /// Where a pending pod is in the queue.
    pub fn queue_location(&self, namespace: &str, name: &str) -> Option<Location> {
        self.queue.get(&format!("{namespace}/{name}")).map(|p| p.location)
    }
    /// Number of pods the queue knows (active, backoff, unschedulable, gated).
    pub fn pending_pods(&self) -> usize {
        self.queue.len()
    }

    fn handles(&self, pod: &Pod) -> bool {
        let name = pod.spec.as_ref().and_then(|s| s.scheduler_name.as_deref()).unwrap_or(crate::config::DEFAULT_SCHEDULER_NAME);
        self.profiles.iter().any(|p| p.scheduler_name == name)
    }

    fn profile_index(&self, pod: &Pod) -> usize {
        let name = pod.spec.as_ref().and_then(|s| s.scheduler_name.as_deref()).unwrap_or(crate::config::DEFAULT_SCHEDULER_NAME);
        self.profiles.iter().position(|p| p.scheduler_name == name).unwrap_or(0)
    }

    fn gated(&self, info: &PodInfo) -> bool {
        let profile = &self.profiles[self.profile_index(info.pod())];
        profile.at(Point::PreEnqueue).iter().any(|i| !profile.plugin(*i).pre_enqueue(info).is_success())
    }

    fn cluster_event(&mut self, event: ClusterEvent, now: Millis) {
        self.cluster_event_for(event, now, None);
    }

    /// Moves the unschedulable pods `event` may help: those rejected by a plugin that registered
    /// for the event and whose queueing hint says it may help.
    fn cluster_event_for(&mut self, event: ClusterEvent, now: Millis, involved: Option<&PodInfo>) {
        let profiles = &self.profiles;
        self.queue.on_cluster_event(event, now, |queued, ev| {
            queued.unschedulable_plugins.iter().any(|name| {
                profiles
                    .iter()
                    .any(|profile| profile.plugins.iter().any(|p| p.name() == *name && p.events().contains(&ev) && p.queueing_hint(&queued.info, ev, involved)))
            })
        });
    }

    // ---------------------------------------------------------------- event handling

    fn on_pod(&mut self, event_type: EventType, object: &Arc<Object>, ctx: &mut Ctx) {
        let Some(pod) = object.as_pod() else { return };
        let key = format!("{}/{}", object.namespace(), object.name());
        let node_name = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty());
        if event_type == EventType::Deleted {
            if self.cache.remove_pod(&key).is_some() {
                self.cluster_event(ClusterEvent::AssignedPodDelete, ctx.now);
            }
            self.queue.delete(&key);
            self.clear_nomination(&key);
            self.history.remove(&key);
            return;
        }
        if let Some(node) = node_name {
            let terminal = matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded") | Some("Failed"));
            self.queue.delete(&key);
            self.clear_nomination(&key);
            if terminal {
                if self.cache.remove_pod(&key).is_some() {
                    self.cluster_event(ClusterEvent::AssignedPodDelete, ctx.now);
                }
                return;
            }
            let previous = self.cache.pod(&key).cloned();
            let was_assumed = self.cache.pod_node(&key).is_none_or(|(_, assumed)| assumed);
            let unchanged = previous.as_ref().is_some_and(|prev| prev.pod().spec == pod.spec && prev.pod().metadata.labels == pod.metadata.labels);
            let info = match &previous {
                Some(prev) if unchanged => {
                    let mut info = (**prev).clone();
                    info.object = object.clone();
                    info.start_time = crate::cache::pod_start_time(pod);
                    info
                }
                _ => PodInfo::new(object.clone()),
            };
            let info = Arc::new(info);
            if unchanged && !was_assumed && self.cache.refresh_pod(info.clone(), node) {
                return;
            }
            let labels_changed = previous.as_ref().is_some_and(|p| p.pod().metadata.labels != pod.metadata.labels);
            self.cache.upsert_pod(info.clone(), node);
            if was_assumed {
                self.cluster_event_for(ClusterEvent::AssignedPodAdd, ctx.now, Some(&info));
            } else if labels_changed {
                self.cluster_event(ClusterEvent::AssignedPodUpdate, ctx.now);
            }
            return;
        }
        // Unassigned.
        if self.cache.pod_node(&key).is_some() {
            return; // assumed: our own writes before the binding lands
        }
        if pod.metadata.deletion_timestamp.is_some() || !self.handles(pod) {
            self.queue.delete(&key);
            self.clear_nomination(&key);
            return;
        }
        let info = Arc::new(PodInfo::new(object.clone()));
        let gated = self.gated(&info);
        self.update_nomination(&info);
        match self.queue.get(&key) {
            Some(existing) => {
                let changed = pod_updated(existing.info.pod(), pod);
                self.queue.update(info, ctx.now, gated, changed);
            }
            None => self.queue.add(info, ctx.now, gated),
        }
        self.arm_timers(ctx);
    }

    fn on_node(&mut self, event_type: EventType, object: &Arc<Object>, ctx: &mut Ctx) {
        let name = object.name().to_string();
        match event_type {
            EventType::Deleted => self.cache.remove_node(&name),
            _ => {
                let before = self.cache.node(&name).map(|n| (n.allocatable.clone(), n.labels().cloned(), n.taints().to_vec(), n.unschedulable()));
                self.cache.upsert_node(object.clone());
                let after = self.cache.node(&name).expect("just inserted");
                let events: Vec<ClusterEvent> = match before {
                    None => vec![ClusterEvent::NodeAdd],
                    Some((alloc, labels, taints, unsched)) => {
                        let mut evs = Vec::new();
                        if alloc != after.allocatable {
                            evs.push(ClusterEvent::NodeAllocatable);
                        }
                        if labels.as_ref() != after.labels() {
                            evs.push(ClusterEvent::NodeLabel);
                        }
                        if taints.as_slice() != after.taints() {
                            evs.push(ClusterEvent::NodeTaint);
                        }
                        if unsched != after.unschedulable() {
                            evs.push(ClusterEvent::NodeSchedulable);
                        }
                        evs
                    }
                };
                for ev in events {
                    self.cluster_event(ev, ctx.now);
                }
                self.arm_timers(ctx);
            }
        }
    }

    fn on_other(&mut self, event: &WatchEvent, now: Millis) {
        let obj = &event.object;
        let ns = obj.namespace().to_string();
        let name = obj.name().to_string();
        let deleted = event.event_type == EventType::Deleted;
        match (obj.as_ref(), event.resource) {
            (Object::Namespace(n), _) => {
                if deleted {
                    self.listers.namespaces.remove(&name);
                } else {
                    self.listers.namespaces.insert(name, n.metadata.labels.clone().unwrap_or_default());
                }
            }
            (Object::Service(s), _) => {
                let key = (ns, format!("Service/{name}"));
                match s.spec.as_ref().and_then(|sp| sp.selector.as_ref()).filter(|m| !m.is_empty()) {
                    Some(sel) if !deleted => {
                        self.listers.workload_selectors.insert(key, Selector::from_map(sel));
                    }
                    _ => {
                        self.listers.workload_selectors.remove(&key);
                    }
                }
            }
            (Object::ReplicaSet(rs), _) => {
                let key = (ns, format!("ReplicaSet/{name}"));
                match rs.spec.as_ref().map(|s| Selector::from_label_selector(&s.selector)) {
                    Some(sel) if !deleted => {
                        self.listers.workload_selectors.insert(key, sel);
                    }
                    _ => {
                        self.listers.workload_selectors.remove(&key);
                    }
                }
            }
            (Object::Dynamic(d), _) => {
                let kind = d.kind.clone();
                match kind.as_str() {
                    "PodDisruptionBudget" => {
                        let key = (ns, name);
                        if deleted {
                            self.listers.pdbs.remove(&key);
                        } else {
                            let selector = d
                                .rest
                                .get("spec")
                                .and_then(|s| s.get("selector"))
                                .and_then(|s| serde_json::from_value(s.clone()).ok())
                                .map(|s| Selector::from_label_selector(&s))
                                .unwrap_or(Selector { requirements: Vec::new(), matches_nothing: true });
                            let allowed = d.rest.get("status").and_then(|s| s.get("disruptionsAllowed")).and_then(|v| v.as_i64()).unwrap_or(0);
                            self.listers.pdbs.insert(key, (selector, allowed));
                        }
                    }
                    "PersistentVolumeClaim" | "PersistentVolume" | "StorageClass" => {
                        let event = match kind.as_str() {
                            "PersistentVolumeClaim" => {
                                let key = (ns, name);
                                match obj.decode() {
                                    Some(pvc) if !deleted => self.listers.pvcs.insert(key, Arc::new(pvc)),
                                    _ => self.listers.pvcs.remove(&key),
                                };
                                ClusterEvent::PvcChange
                            }
                            "PersistentVolume" => {
                                match obj.decode() {
                                    Some(pv) if !deleted => self.listers.pvs.insert(name, Arc::new(pv)),
                                    _ => self.listers.pvs.remove(&name),
                                };
                                ClusterEvent::PvChange
                            }
                            _ => {
                                match obj.decode() {
                                    Some(sc) if !deleted => self.listers.storage_classes.insert(name, Arc::new(sc)),
                                    _ => self.listers.storage_classes.remove(&name),
                                };
                                ClusterEvent::StorageClassChange
                            }
                        };
                        // VolumeBinding registers for Add and Update only.
                        if !deleted {
                            self.cluster_event(event, now);
                        }
                    }
                    "StatefulSet" | "ReplicationController" => {
                        let key = (ns, format!("{kind}/{name}"));
                        let sel = d.rest.get("spec").and_then(|s| s.get("selector"));
                        let selector = if kind == "StatefulSet" {
                            sel.and_then(|s| serde_json::from_value(s.clone()).ok()).map(|s| Selector::from_label_selector(&s))
                        } else {
                            sel.and_then(|s| serde_json::from_value::<BTreeMap<String, String>>(s.clone()).ok())
                                .filter(|m| !m.is_empty())
                                .map(|m| Selector::from_map(&m))
                        };
                        match selector {
                            Some(s) if !deleted => {
                                self.listers.workload_selectors.insert(key, s);
                            }
                            _ => {
                                self.listers.workload_selectors.remove(&key);
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    pub(crate) fn clear_nomination(&mut self, key: &str) {
        for list in self.nominated.values_mut() {
            list.retain(|p| p.key != key);
        }
        self.nominated.retain(|_, l| !l.is_empty());
    }

    fn update_nomination(&mut self, info: &Arc<PodInfo>) {
        self.clear_nomination(&info.key);
        if let Some(node) = info.pod().status.as_ref().and_then(|s| s.nominated_node_name.as_deref()).filter(|n| !n.is_empty()) {
            self.nominated.entry(node.to_string()).or_default().push(info.clone());
        }
    }

    fn arm_timers(&mut self, ctx: &mut Ctx) {
        if !self.cycle_pending && self.queue.has_poppable() {
            self.cycle_pending = true;
            ctx.after(latency::SCHEDULING_CYCLE_MS, TOKEN_CYCLE);
        }
        if let Some(exp) = self.queue.next_backoff_expiry() {
            if self.backoff_timer_at.is_none_or(|t| exp < t || t <= ctx.now) {
                self.backoff_timer_at = Some(exp);
                ctx.after(exp.saturating_sub(ctx.now), TOKEN_BACKOFF);
            }
        }
        if let Some(next) = self.waiting.values().map(|b| b.next_poll).min() {
            if self.bind_poll_at.is_none_or(|t| next < t || t < ctx.now) {
                self.bind_poll_at = Some(next);
                ctx.after(next.saturating_sub(ctx.now), TOKEN_BIND_POLL);
            }
        }
        if !self.flush_timer && self.queue.has_unschedulable() {
            self.flush_timer = true;
            ctx.after_periodic(FLUSH_UNSCHEDULABLE_PERIOD_MS, TOKEN_FLUSH);
        }
    }

    // ---------------------------------------------------------------- the scheduling cycle

    /// Runs one scheduling cycle now (the timer handler; also usable directly by harnesses).
    pub fn schedule_one(&mut self, ctx: &mut Ctx) {
        self.queue.flush_backoff(ctx.now);
        let Some(queued) = self.queue.pop() else { return };
        self.stats.cycles += 1;
        let started = Stopwatch::start(self.options.history);
        let pod = queued.info.clone();
        let pi = self.profile_index(pod.pod());
        let record = self.options.history || self.options.simulator_annotations;
        let mut attempt = Attempt::new(ctx.now, self.stats.cycles, &self.profiles[pi].scheduler_name, self.cache.nodes().len());
        attempt.pod_uid = pod.object.metadata().uid.clone().unwrap_or_default();
        let mut state = CycleState::default();
        let result = self.schedule_pod(pi, &pod, &mut state, &mut attempt, record, ctx.rng);
        match result {
            Ok(node) => match self.bind_cycle(pi, &pod, state, &node, attempt, ctx) {
                BindResult::Done(done) => attempt = *done,
                // The attempt is recorded when the parked binding cycle ends.
                BindResult::Parked => return,
            },
            Err(mut diagnosis) => {
                let mut nominated = None;
                if diagnosis.num_all_nodes > 0 && !self.profiles[pi].at(Point::PostFilter).is_empty() {
                    let plan = crate::preemption::plan(self, pi, &pod, &mut state, &diagnosis, ctx.rng);
                    let (node, msg, victims) = self.apply_preemption(plan, &pod, ctx);
                    diagnosis.post_filter_msg = msg;
                    nominated = node;
                    attempt.victims = victims;
                }
                let message = diagnosis.message();
                attempt.outcome = Outcome::Unschedulable(message.clone());
                attempt.nominated_node = nominated.clone();
                self.stats.unschedulable += 1;
                self.record_failure(&pod, "Unschedulable", &message, nominated, ctx);
                self.queue.failed(&pod.key, diagnosis.plugins.clone(), false, ctx.now);
            }
        }
        attempt.wall_ns = started.elapsed_ns();
        self.finish_attempt(&pod.key, attempt, ctx);
    }

    /// An attempt is over: kept for the explanation and, with
    /// [`Options::simulator_annotations`], written to the pod.
    fn finish_attempt(&mut self, key: &str, attempt: Attempt, ctx: &mut Ctx) {
        if self.options.simulator_annotations {
            self.write_simulator_annotations(key, &attempt, ctx);
        }
        if self.options.history {
            self.history.record(key, attempt, self.options.max_history_pods, self.options.max_attempts_per_pod);
        }
    }

    /// kube-scheduler-simulator's resultstore: after an attempt, the pod gets the attempt's
    /// result annotations and the attempt appended to `result-history` (one update; a pod
    /// deleted or replaced meanwhile is left alone).
    fn write_simulator_annotations(&mut self, key: &str, attempt: &Attempt, ctx: &mut Ctx) {
        let Some((namespace, name)) = key.split_once('/') else { return };
        let Some(current) = ctx.api.lookup(("", "pods"), namespace, name) else { return };
        let Some(pod) = current.as_pod() else { return };
        if pod.metadata.uid.as_deref().unwrap_or("") != attempt.pod_uid {
            return;
        }
        let names = |point: Point| -> Vec<&'static str> {
            self.profiles
                .iter()
                .find(|p| p.scheduler_name == attempt.profile)
                .map_or_else(Vec::new, |p| p.at(point).iter().map(|i| p.plugin(*i).name()).collect())
        };
        let results = attempt.simulator_annotations(&names(Point::PreFilter), &names(Point::PreBind));
        let mut pod = pod.clone();
        let annotations = pod.metadata.annotations.get_or_insert_with(Default::default);
        let mut history: Vec<serde_json::Value> =
            annotations.get(crate::explain::SIMULATOR_HISTORY).and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
        history.push(serde_json::json!(results));
        for (k, v) in results {
            annotations.insert(k, v);
        }
        annotations.insert(crate::explain::SIMULATOR_HISTORY.to_string(), crate::explain::go_json(serde_json::Value::Array(history)));
        let _ = ctx.update(Object::Pod(Box::new(pod)));
    }

    /// Assume, Reserve and Permit, then the binding cycle.
    fn bind_cycle(&mut self, pi: usize, pod: &Arc<PodInfo>, mut state: CycleState, node: &str, attempt: Attempt, ctx: &mut Ctx) -> BindResult {
        self.cache.assume_pod(pod.clone(), node);
        self.clear_nomination(&pod.key);
        let view = ClusterView { cache: &self.cache, listers: &self.listers };
        let profile = &self.profiles[pi];
        let mut failure: Option<Status> = None;
        let mut reserved = Vec::new();
        for i in profile.at(Point::Reserve) {
            let s = profile.plugin(*i).reserve(&mut state, pod, node, &view);
            reserved.push(*i);
            if !s.is_success() {
                failure = Some(s.with_plugin(profile.plugin(*i).name()));
                break;
            }
        }
        if failure.is_none() {
            for i in profile.at(Point::Permit) {
                let s = profile.plugin(*i).permit(&mut state, pod, node);
                if !s.is_success() && s.code != Code::Wait {
                    failure = Some(s.with_plugin(profile.plugin(*i).name()));
                    break;
                }
            }
        }
        let mut binding = WaitingBinding {
            pi,
            pod: pod.clone(),
            state,
            node: node.to_string(),
            attempt,
            reserved,
            pre_bind_at: 0,
            deadline: ctx.now + crate::plugins::volumebinding::BIND_TIMEOUT_MS,
            next_poll: ctx.now,
        };
        match failure {
            Some(status) => BindResult::Done(Box::new(self.binding_failed(binding, status, ctx))),
            None => {
                binding.attempt.selected = Some(node.to_string());
                self.run_binding(binding, ctx)
            }
        }
    }

    /// The binding cycle from where it stands: PreBind (a plugin answering Wait parks it until
    /// the next poll), Bind, PostBind.
    fn run_binding(&mut self, mut b: WaitingBinding, ctx: &mut Ctx) -> BindResult {
        let mut failure: Option<Status> = None;
        let mut wait = false;
        {
            let view = ClusterView { cache: &self.cache, listers: &self.listers };
            let profile = &self.profiles[b.pi];
            let points = profile.at(Point::PreBind);
            while b.pre_bind_at < points.len() {
                let plugin = profile.plugin(points[b.pre_bind_at]);
                let s = plugin.pre_bind(&mut b.state, &b.pod, &b.node, &view, ctx);
                if s.code == Code::Wait {
                    if ctx.now >= b.deadline {
                        failure = Some(
                            Status::new(Code::Error, format!("running PreBind plugin {:?}: binding volumes: context deadline exceeded", plugin.name()))
                                .with_plugin(plugin.name()),
                        );
                    } else {
                        wait = true;
                    }
                    break;
                }
                if !s.is_success() {
                    let message = format!("running PreBind plugin {:?}: {}", plugin.name(), s.message());
                    failure = Some(Status::new(s.code, message).with_plugin(plugin.name()));
                    break;
                }
                b.pre_bind_at += 1;
            }
        }
        if wait {
            b.next_poll = ctx.now + crate::plugins::volumebinding::BIND_POLL_MS;
            self.waiting.insert(b.pod.key.clone(), b);
            return BindResult::Parked;
        }
        if let Some(status) = failure {
            return BindResult::Done(Box::new(self.binding_failed(b, status, ctx)));
        }
        let (pi, pod, node) = (b.pi, b.pod.clone(), b.node.clone());
        match ctx.bind(pod.namespace(), pod.name(), &node) {
            Ok(bound) => {
                // Confirm the assumed pod with the bound object right away.
                let mut info = (*pod).clone();
                info.object = bound;
                self.cache.upsert_pod(Arc::new(info), &node);
                let profile = &self.profiles[pi];
                for i in profile.at(Point::PostBind) {
                    profile.plugin(*i).post_bind(&mut b.state, &pod, &node);
                }
                self.queue.done(&pod.key);
                self.stats.scheduled += 1;
                b.attempt.outcome = Outcome::Scheduled(node.clone());
                if self.options.events {
                    let message = format!("Successfully assigned {} to {}", pod.key, node);
                    ctx.event(&pod.object, "Normal", "Scheduled", message);
                }
                self.cluster_event_for(ClusterEvent::AssignedPodAdd, ctx.now, Some(&pod));
                BindResult::Done(Box::new(b.attempt))
            }
            Err(err) => {
                let status = Status::new(Code::Error, format!("binding rejected: {}", err.message));
                BindResult::Done(Box::new(self.binding_failed(b, status, ctx)))
            }
        }
    }

    /// Failure after assume: forget, unreserve, requeue with error backoff.
    fn binding_failed(&mut self, mut b: WaitingBinding, status: Status, ctx: &mut Ctx) -> Attempt {
        let pod = b.pod.clone();
        self.cache.remove_pod(&pod.key);
        let profile = &self.profiles[b.pi];
        for i in b.reserved.iter().rev() {
            profile.plugin(*i).unreserve(&mut b.state, &pod, &b.node);
        }
        let message = status.message();
        b.attempt.outcome = Outcome::Error(message.clone());
        b.attempt.selected = None;
        self.stats.errors += 1;
        let pod_exists = ctx
            .api
            .lookup(("", "pods"), pod.namespace(), pod.name())
            .is_some_and(|p| p.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.as_deref()).unwrap_or("").is_empty());
        if pod_exists {
            let reason = if status.code == Code::Error { "SchedulerError" } else { "Unschedulable" };
            self.record_failure(&pod, reason, &message, None, ctx);
            let plugins: BTreeSet<&'static str> = if status.plugin.is_empty() { BTreeSet::new() } else { [status.plugin].into() };
            self.queue.failed(&pod.key, plugins, status.code == Code::Error, ctx.now);
        } else {
            self.queue.delete(&pod.key);
        }
        b.attempt
    }

    /// Resumes the parked binding cycles whose poll is due.
    fn poll_bindings(&mut self, ctx: &mut Ctx) {
        let due: Vec<String> = self.waiting.iter().filter(|(_, b)| b.next_poll <= ctx.now).map(|(k, _)| k.clone()).collect();
        for key in due {
            let Some(binding) = self.waiting.remove(&key) else { continue };
            if let BindResult::Done(attempt) = self.run_binding(binding, ctx) {
                self.finish_attempt(&key, *attempt, ctx);
            }
        }
    }

    /// PreFilter, Filter, PreScore, Score, NormalizeScore and selectHost for one pod.
    pub(crate) fn schedule_pod(
        &mut self,
        pi: usize,
        pod: &Arc<PodInfo>,
        state: &mut CycleState,
        attempt: &mut Attempt,
        record: bool,
        rng: &mut dyn RngCore,
    ) -> Result<String, Box<Diagnosis>> {
        let num_all = self.cache.nodes().len();
        let mut diagnosis = Box::new(Diagnosis { num_all_nodes: num_all, ..Default::default() });
        if num_all == 0 {
            return Err(diagnosis);
        }
        let profile = &self.profiles[pi];
        let view = ClusterView { cache: &self.cache, listers: &self.listers };
        let timed = self.options.history;
        let detailed = record && num_all <= self.options.detail_max_nodes;
        attempt.detailed = detailed;
        let mut feasible_ni: Vec<u32> = Vec::new();
        // PreFilter.
        let mut allowed: Option<BTreeSet<String>> = None;
        let mut restricting: Vec<&'static str> = Vec::new();
        for i in profile.at(Point::PreFilter) {
            let plugin = profile.plugin(*i);
            let watch = Stopwatch::start(timed);
            let (status, nodes) = plugin.pre_filter(state, pod, &view);
            watch.record(attempt, "PreFilter", plugin.name());
            if status.is_skip() {
                state.skip_filter.insert(plugin.name());
                if record {
                    attempt.pre_filter.push((plugin.name(), "skip".into()));
                }
                continue;
            }
            if !status.is_success() {
                let msg = status.message();
                if record {
                    attempt.pre_filter.push((plugin.name(), msg.clone()));
                }
                diagnosis.pre_filter_msg = Some(msg);
                diagnosis.plugins.insert(plugin.name());
                let all = Status { code: status.code, reasons: status.reasons.clone(), plugin: plugin.name() };
                diagnosis.node_statuses = (0..num_all).map(|n| (n, all.clone())).collect();
                return Err(diagnosis);
            }
            if let Some(nodes) = nodes {
                restricting.push(plugin.name());
                allowed = Some(match allowed {
                    None => nodes,
                    Some(prev) => prev.intersection(&nodes).cloned().collect(),
                });
            }
        }
        let filters: Vec<usize> = profile.at(Point::Filter).iter().copied().filter(|i| !state.skip_filter.contains(profile.plugin(*i).name())).collect();
        // The nominated node first.
        let mut feasible: Vec<usize> = Vec::new();
        if let Some(nn) = pod.pod().status.as_ref().and_then(|s| s.nominated_node_name.as_deref()).filter(|n| !n.is_empty()) {
            if let Some(idx) = self.cache.node_index(nn) {
                let node = &self.cache.nodes()[idx];
                if allowed.as_ref().is_none_or(|a| a.contains(&node.name)) {
                    let ni = detailed.then(|| attempt.node_index(&node.shared_name));
                    let status = self.run_filters_with_nominated(profile, &filters, state, pod, node, attempt, ni, &view);
                    if status.is_success() {
                        feasible.push(idx);
                        feasible_ni.extend(ni);
                    }
                }
            }
        }
        let filter_watch = Stopwatch::start(timed);
        if feasible.is_empty() {
            // A PreFilter result restricts evaluation to its nodes (in snapshot order); the
            // others get one "didn't satisfy plugin(s)" status.
            let candidates: Option<Vec<usize>> = allowed.as_ref().map(|names| {
                let mut v: Vec<usize> = names.iter().filter_map(|n| self.cache.node_index(n)).collect();
                kubesim_api::sort::sort(&mut v);
                v
            });
            if candidates.is_some() {
                diagnosis.absent = Some(Status::unresolvable(format!("node(s) didn't satisfy plugin(s) [{}]", restricting.join(" "))));
            }
            let total = candidates.as_ref().map_or(num_all, |c| c.len());
            let to_find = if filters.is_empty() {
                total
            } else {
                num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score.unwrap_or(self.global.percentage_of_nodes_to_score), total)
            };
            let start = if candidates.is_some() { 0 } else { self.next_start_node_index % num_all };
            attempt.start_node_index = start;
            let mut processed = 0;
            for offset in 0..total {
                if feasible.len() >= to_find {
                    break;
                }
                let idx = match &candidates {
                    Some(c) => c[offset],
                    None => (start + offset) % num_all,
                };
                processed += 1;
                let node = &self.cache.nodes()[idx];
                let ni = detailed.then(|| attempt.node_index(&node.shared_name));
                let status = self.run_filters_with_nominated(profile, &filters, state, pod, node, attempt, ni, &view);
                if status.is_success() {
                    feasible.push(idx);
                    feasible_ni.extend(ni);
                } else {
                    diagnosis.plugins.insert(status.plugin);
                    diagnosis.node_statuses.push((idx, status));
                }
            }
            if candidates.is_none() {
                self.next_start_node_index = (start + processed) % num_all;
            }
            attempt.evaluated_nodes = processed;
        } else {
            attempt.evaluated_nodes = 1;
        }
        filter_watch.record(attempt, "Filter", "*");
        if feasible.is_empty() {
            return Err(diagnosis);
        }
        if feasible.len() == 1 {
            return Ok(self.cache.nodes()[feasible[0]].name.clone());
        }
        // PreScore.
        let nodes = self.cache.nodes();
        let feasible_nodes: Vec<&NodeInfo> = feasible.iter().map(|i| &nodes[*i]).collect();
        for i in profile.at(Point::PreScore) {
            let plugin = profile.plugin(*i);
            let watch = Stopwatch::start(timed);
            if plugin.pre_score(state, pod, &feasible_nodes, &view).is_skip() {
                state.skip_score.insert(plugin.name());
            }
            watch.record(attempt, "PreScore", plugin.name());
        }
        // Score, NormalizeScore, weights.
        let mut totals = vec![0i64; feasible.len()];
        let mut raw = vec![0i64; feasible.len()];
        let mut pending: Vec<ScoreRecord> = Vec::new();
        for sp in &profile.score {
            let plugin = profile.plugin(sp.index);
            if state.skip_score.contains(plugin.name()) {
                continue;
            }
            let watch = Stopwatch::start(timed);
            for (k, node) in feasible_nodes.iter().enumerate() {
                raw[k] = plugin.score(state, pod, node, &view);
            }
            let raw_scores = if record { raw.clone() } else { Vec::new() };
            plugin.normalize(state, pod, &mut raw);
            watch.record(attempt, "Score", plugin.name());
            for k in 0..feasible_nodes.len() {
                let weighted = raw[k].clamp(0, crate::framework::MAX_NODE_SCORE) * sp.weight;
                totals[k] += weighted;
                if record {
                    pending.push(ScoreRecord { node: k as u32, plugin: plugin.name(), raw: raw_scores[k], weighted });
                }
            }
        }
        let chosen = select_host(&totals, rng).expect("feasible is not empty");
        if record {
            // Map feasible positions to attempt node indices (all of them, or the top 3 + chosen).
            let mut slot: Vec<Option<u32>> = vec![None; feasible_nodes.len()];
            if detailed {
                for (k, ni) in feasible_ni.iter().enumerate() {
                    slot[k] = Some(*ni);
                }
            } else {
                let mut order: Vec<usize> = (0..totals.len()).collect();
                kubesim_api::sort::sort_by(&mut order, |a, b| totals[*b].cmp(&totals[*a]).then(a.cmp(b)));
                let mut keep: Vec<usize> = order.into_iter().take(3).collect();
                if !keep.contains(&chosen) {
                    keep.push(chosen);
                }
                for k in keep {
                    slot[k] = Some(attempt.node_index(&feasible_nodes[k].shared_name));
                }
            }
            for r in pending {
                if let Some(ni) = slot[r.node as usize] {
                    attempt.score_records.push(ScoreRecord { node: ni, ..r });
                }
            }
            for (k, t) in totals.iter().enumerate() {
                if let Some(ni) = slot[k] {
                    attempt.node_totals.push((ni, *t));
                }
            }
        }
        Ok(feasible_nodes[chosen].name.clone())
    }

    /// Filter on one node, with higher-or-equal priority nominated pods added first
    /// (`RunFilterPluginsWithNominatedPods`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_filters_with_nominated(
        &self,
        profile: &Profile,
        filters: &[usize],
        state: &CycleState,
        pod: &PodInfo,
        node: &NodeInfo,
        attempt: &mut Attempt,
        record: Option<u32>,
        _view: &ClusterView,
    ) -> Status {
        let nominated: Vec<&Arc<PodInfo>> =
            self.nominated.get(&node.name).into_iter().flatten().filter(|p| p.key != pod.key && p.priority >= pod.priority).collect();
        if nominated.is_empty() {
            return run_filters(profile, filters, state, pod, node, attempt, record);
        }
        let mut with = node.clone();
        for p in &nominated {
            with.add_pod((*p).clone());
        }
        // Plugins with PreFilter state see the nominated pods through AddPod.
        let mut state_with = state.clone();
        for p in &nominated {
            for i in profile.at(Point::PreFilter) {
                profile.plugin(*i).pre_filter_add_pod(&mut state_with, pod, p, &with);
            }
        }
        let s = run_filters(profile, filters, &state_with, pod, &with, attempt, record);
        if !s.is_success() {
            return s;
        }
        run_filters(profile, filters, state, pod, node, attempt, None)
    }

    /// Sets PodScheduled=False (and nominatedNodeName) and records FailedScheduling.
    fn record_failure(&mut self, pod: &PodInfo, reason: &str, message: &str, nominated: Option<String>, ctx: &mut Ctx) {
        let Some(current) = ctx.api.lookup(("", "pods"), pod.namespace(), pod.name()).cloned() else { return };
        let Some(p) = current.as_pod() else { return };
        let mut p = p.clone();
        let status = p.status.get_or_insert_with(Default::default);
        let conditions = status.conditions.get_or_insert_with(Vec::new);
        let same = conditions
            .iter()
            .any(|c| c.type_ == "PodScheduled" && c.status == "False" && c.reason.as_deref() == Some(reason) && c.message.as_deref() == Some(message));
        let nominated_changed = nominated.is_some() && status.nominated_node_name != nominated;
        if !same || nominated_changed {
            let condition = PodCondition {
                type_: "PodScheduled".into(),
                status: "False".into(),
                reason: Some(reason.to_string()),
                message: Some(message.to_string()),
                last_transition_time: Some(time_at(ctx.now)),
                ..Default::default()
            };
            kubesim_apiserver::server::set_pod_condition(conditions, condition);
            if nominated.is_some() {
                status.nominated_node_name = nominated;
            }
            p.metadata.resource_version = None;
            let _ = ctx.update_status(Object::Pod(Box::new(p)));
        }
        if self.options.events {
            ctx.event(&current, "Warning", "FailedScheduling", message.to_string());
        }
    }
}

/// Runs the Filter plugins on one node, stopping at the first rejection.
pub(crate) fn run_filters(
    profile: &Profile,
    filters: &[usize],
    state: &CycleState,
    pod: &PodInfo,
    node: &NodeInfo,
    attempt: &mut Attempt,
    record: Option<u32>,
) -> Status {
    for i in filters {
        let plugin = profile.plugin(*i);
        let status = plugin.filter(state, pod, node);
        if let Some(ni) = record {
            let reason = (!status.is_success()).then(|| status.message().into_boxed_str());
            attempt.filter_records.push(FilterRecord { node: ni, plugin: plugin.name(), reason });
        }
        if !status.is_success() {
            return status.with_plugin(plugin.name());
        }
    }
    Status::success()
}

/// Whether a pending pod changed in a way that may make it schedulable (upstream
/// `isPodUpdated`, ignoring status).
fn pod_updated(old: &Pod, new: &Pod) -> bool {
    // Deviation: kube-scheduler-simulator's own result annotations do not count as an update
    // (requeueing on them would retry an unschedulable pod right after its attempt's write).
    fn own(p: &Pod) -> Option<Vec<(&String, &String)>> {
        p.metadata.annotations.as_ref().map(|a| a.iter().filter(|(k, _)| !k.starts_with(crate::explain::SIMULATOR_PREFIX)).collect())
    }
    old.spec != new.spec || old.metadata.labels != new.metadata.labels || own(old) != own(new)
}

impl Component for Scheduler {
    fn name(&self) -> &str {
        "scheduler"
    }
    fn interests(&self) -> Vec<Interest> {
        [
            ("", "pods"),
            ("", "nodes"),
            ("", "namespaces"),
            ("", "services"),
            ("", "replicationcontrollers"),
            ("apps", "replicasets"),
            ("apps", "statefulsets"),
            ("policy", "poddisruptionbudgets"),
            ("", "persistentvolumeclaims"),
            ("", "persistentvolumes"),
            ("storage.k8s.io", "storageclasses"),
        ]
        .into_iter()
        .map(|resource| Interest { resource, filter: WatchFilter::All })
        .collect()
    }
    fn start(&mut self, ctx: &mut Ctx) {
        self.arm_timers(ctx);
    }
    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        match event.resource {
            ("", "pods") => self.on_pod(event.event_type, &event.object, ctx),
            ("", "nodes") => self.on_node(event.event_type, &event.object, ctx),
            _ => self.on_other(event, ctx.now),
        }
        self.arm_timers(ctx);
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        match token {
            TOKEN_CYCLE => {
                self.cycle_pending = false;
                self.schedule_one(ctx);
            }
            TOKEN_BACKOFF => {
                if self.backoff_timer_at.is_some_and(|t| t <= ctx.now) {
                    self.backoff_timer_at = None;
                }
                self.queue.flush_backoff(ctx.now);
            }
            TOKEN_BIND_POLL => {
                if self.bind_poll_at.is_some_and(|t| t <= ctx.now) {
                    self.bind_poll_at = None;
                }
                self.poll_bindings(ctx);
            }
            TOKEN_FLUSH => {
                self.flush_timer = false;
                self.queue.flush_unschedulable_leftover(ctx.now);
                self.queue.flush_backoff(ctx.now);
            }
            _ => {}
        }
        self.arm_timers(ctx);
    }
}
