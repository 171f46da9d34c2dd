//! The engine: one [`World`] plus the inputs that drove it, so any moment can be rebuilt.
//!
//! Guarantees:
//! - Inputs (YAML applies, command lines) are recorded with the virtual time they were applied
//!   at, and are only ever applied when every event at or before that time has run. Replaying
//!   the same inputs with the same seed therefore reproduces the same history exactly, which is
//!   how the timeline travels backwards: back to the latest snapshot at or before the target
//!   (or a rebuild from t=0 when there is none), then run forward to the target time.
//! - Snapshots are clones of the engine's state (the [`World`] is `Clone`, and a clone's future
//!   is bit-identical to the original's), taken while advancing every [`SNAPSHOT_INTERVAL_MS`]
//!   of virtual time or [`SNAPSHOT_INTERVAL_WRITES`] API writes, whichever comes first. Memory is
//!   bounded: at most [`MAX_SNAPSHOTS`] (thinned so they spread over the history), at most
//!   [`SNAPSHOT_POD_BUDGET`] pods in all of them together, none while the world holds more than
//!   [`SNAPSHOT_MAX_PODS`] pods. Applying an input now drops the snapshots at or after now
//!   (their future no longer happens). Everything a seek produces —
//!   the world, lifecycle transitions, pod paths, edge counts, activity, the message flow and
//!   the generation counter — is exactly what a rebuild and replay from t=0 would produce.
//! - Nothing here reads a wall clock. The caller decides how much work a frame may do through
//!   the `should_yield` callback, which is only consulted between distinct virtual timestamps.
//!
//! Derived data (pod lifecycle transitions, API activity per second) is computed from the
//! world's trace, so it is exact whatever the frame rate.

use kubesim_sim::loader::FileOutcome;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::view::{self, Lifecycle};
use kubesim_sim::world::WorldConfig;
use kubesim_sim::World;
use std::collections::BTreeMap;

/// Virtual milliseconds.
pub type Millis = u64;

/// Something a person (or a scenario) does to the cluster.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// `kubectl apply -f` of a YAML text.
    Apply {
        /// A file name for messages.
        name: String,
        /// The YAML.
        text: String,
    },
    /// A command line: `kubectl ...` or `fault ...`.
    Command(String),
}

/// An input and when it happens.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TimedInput {
    /// Virtual time.
    pub t_ms: Millis,
    /// What.
    pub input: Input,
    /// Entered in the UI (as opposed to part of the scenario).
    pub user: bool,
}

impl TimedInput {
    /// A short label for timeline markers.
    pub fn label(&self) -> String {
        match &self.input {
            Input::Apply { name, .. } => format!("apply {name}"),
            Input::Command(line) => line.clone(),
        }
    }
}

/// One problem with an input, with the line it concerns when known.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The message, kubectl style.
    pub message: String,
    /// 1-based line in the YAML text.
    pub line: Option<usize>,
}

/// What applying an input printed.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct InputResult {
    /// stdout lines (`deployment.apps/nginx created`).
    pub lines: Vec<String>,
    /// Warnings.
    pub warnings: Vec<String>,
    /// Errors.
    pub errors: Vec<InputError>,
}

/// What the UI shows for an applied file.
fn input_result(outcome: FileOutcome) -> InputResult {
    InputResult {
        lines: outcome.lines,
        warnings: outcome.warnings,
        errors: outcome.errors.into_iter().map(|e| InputError { message: e.message, line: e.line }).collect(),
    }
}

/// A pod moving from one lifecycle state to another (None = not existing).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// Sequence number (stable identity for animations).
    pub seq: u64,
    /// Virtual time of the write that caused it.
    pub t_ms: Millis,
    /// Pod UID.
    pub uid: String,
    /// `namespace/name`.
    pub pod: String,
    /// Before.
    pub from: Option<Lifecycle>,
    /// After.
    pub to: Option<Lifecycle>,
}

/// A pod's path through the lifecycle graph.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct PodPath {
    /// `namespace/name`.
    pub pod: String,
    /// (virtual time, state, kubectl STATUS, actor of the write).
    pub steps: Vec<(Millis, Lifecycle, String, String)>,
    /// Deleted from the API (time).
    pub deleted_ms: Option<Millis>,
}

/// What kind of message a [`FlowItem`] is.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// A write to the API server (from the trace).
    Write,
    /// A watch notification from the API server to a watching component.
    Watch,
    /// A call a component made outside the API (CRI calls, faults).
    Call,
}

/// One message between components: an API write, a watch notification, or a call a component
/// made (CRI, faults).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct FlowItem {
    /// Write, watch or call.
    pub kind: FlowKind,
    /// Virtual time.
    pub t_ms: Millis,
    /// Sender (actor).
    pub from: String,
    /// Receiver (`apiserver`, `cri/node-1`, ...).
    pub to: String,
    /// What (`MODIFIED pod/default/nginx`, `PullImage nginx:1.27`).
    pub what: String,
    /// The object written or watched.
    pub object: Option<kubesim_sim::view::ObjectKey>,
}

/// Writes to these resources are housekeeping (heartbeats), not activity worth a marker.
pub fn is_housekeeping(resource: &str) -> bool {
    resource == "leases"
}

/// Virtual time between time-travel snapshots.
pub const SNAPSHOT_INTERVAL_MS: Millis = 20_000;
/// API writes between time-travel snapshots (busy stretches, like the first seconds of a
/// 1,000-pod roll-out, get snapshots closer together than [`SNAPSHOT_INTERVAL_MS`]).
pub const SNAPSHOT_INTERVAL_WRITES: usize = 2_500;
/// At most this many snapshots are kept; beyond it the one whose neighbours are closest (in
/// virtual time and writes) is dropped, so the kept ones spread over the whole history (the
/// t=0 one and the newest always stay).
pub const MAX_SNAPSHOTS: usize = 12;
/// The pods of all snapshots together stay under this (closest ones dropped first). A snapshot
/// costs roughly 12 KB per pod (objects are shared `Arc`s, but component caches, the trace and
/// watch-delivery logs and the derived data are copied): ~12 MB at 1,000 pods, so about
/// 120 MB for the whole budget.
pub const SNAPSHOT_POD_BUDGET: usize = 10_000;
/// No snapshot is taken while the world holds more pods than this (seeking back there restores
/// the latest smaller snapshot, or rebuilds from t=0).
pub const SNAPSHOT_MAX_PODS: usize = 3_000;

/// The flow view's message buffer is cut back by 10,000 when it grows past this.
const FLOW_BUFFER: usize = 20_000;

/// A point of the history to resume from: the world and every cursor and derived datum, so
/// running forward from it gives exactly what running forward from t=0 gives. (The message
/// flow is regenerated from the world's history on restore instead.)
#[derive(Clone)]
struct Snapshot {
    point: SnapshotPoint,
    world: World,
    results: Vec<InputResult>,
    next_input: usize,
    trace_cursor: usize,
    pods: BTreeMap<String, PodPath>,
    current: BTreeMap<String, Lifecycle>,
    transitions: Vec<Transition>,
    edge_counts: BTreeMap<(Option<Lifecycle>, Option<Lifecycle>), u32>,
    activity_seen: usize,
}

/// Where the history stood right after the t=0 inputs (the first batch of the message flow).
#[derive(Clone, Debug, Default)]
struct FlowStart {
    /// The flow items of that batch, as the rebuild produced them.
    items: Vec<FlowItem>,
    trace: usize,
    notes: usize,
    deliveries: usize,
}

/// How far apart two points of a history are for snapshotting: 1000 = one snapshot interval
/// (of virtual time or of writes, whichever is further).
fn snapshot_distance(a: SnapshotPoint, b: SnapshotPoint) -> u64 {
    let time = b.t_ms.saturating_sub(a.t_ms) * 1000 / SNAPSHOT_INTERVAL_MS;
    let writes = (b.writes.saturating_sub(a.writes) * 1000 / SNAPSHOT_INTERVAL_WRITES) as u64;
    time.max(writes)
}

/// Where a snapshot is in the history, and its weight.
#[derive(Clone, Copy, Debug)]
struct SnapshotPoint {
    t_ms: Millis,
    writes: usize,
    pods: usize,
}

/// Which of these points (in history order) to keep: while there are more than
/// [`MAX_SNAPSHOTS`] or more than [`SNAPSHOT_POD_BUDGET`] pods in them, the interior one whose
/// neighbours are closest together goes (the first and the last stay), so the kept ones spread
/// over the whole history.
fn thin(points: &[SnapshotPoint]) -> Vec<bool> {
    let mut kept: Vec<usize> = (0..points.len()).collect();
    let over = |kept: &[usize]| kept.len() > MAX_SNAPSHOTS || kept.iter().map(|&i| points[i].pods).sum::<usize>() > SNAPSHOT_POD_BUDGET;
    while kept.len() > 2 && over(&kept) {
        let drop = (1..kept.len() - 1)
            .min_by_key(|&j| (snapshot_distance(points[kept[j - 1]], points[kept[j + 1]]), std::cmp::Reverse(j)))
            .expect("more than two points");
        kept.remove(drop);
    }
    let mut keep = vec![false; points.len()];
    for i in kept {
        keep[i] = true;
    }
    keep
}

/// The flow item of a committed write.
fn write_item(t_ms: Millis, actor: String, event_type: &str, key: view::ObjectKey) -> FlowItem {
    FlowItem { kind: FlowKind::Write, t_ms, from: actor, to: "apiserver".to_string(), what: format!("{} {}", event_type, key.display()), object: Some(key) }
}

/// The flow item of a non-API call (a note: CRI call, fault).
fn call_item(t_ms: Millis, actor: &str, target: &str, call: &str, detail: &str) -> FlowItem {
    FlowItem { kind: FlowKind::Call, t_ms, from: actor.to_string(), to: target.to_string(), what: format!("{call} {detail}"), object: None }
}

/// The flow item of a watch delivery.
fn watch_item(d: view::DeliveryEntry) -> FlowItem {
    FlowItem {
        kind: FlowKind::Watch,
        t_ms: d.t_ms,
        from: "apiserver".to_string(),
        to: d.component,
        what: format!("watch {} {}", d.event_type, d.key.display()),
        object: Some(d.key),
    }
}

/// How many leading inputs form the initial cluster (the t=0 applies, decoded together).
fn initial_count(inputs: &[TimedInput]) -> usize {
    inputs.iter().take_while(|i| i.t_ms == 0 && matches!(i.input, Input::Apply { .. })).count()
}

/// Appends a batch to the flow buffer, bounded as the buffer always is.
fn extend_flow(flow: &mut Vec<FlowItem>, batch: Vec<FlowItem>) {
    flow.extend(batch);
    if flow.len() > FLOW_BUFFER {
        flow.drain(..FLOW_BUFFER / 2);
    }
}

/// The engine. `Clone` gives an independent engine whose future is bit-identical (see
/// [`Engine::fork`]).
#[derive(Clone)]
pub struct Engine {
    seed: u64,
    world: World,
    inputs: Vec<TimedInput>,
    results: Vec<InputResult>,
    next_input: usize,
    high_water_ms: Millis,
    trace_cursor: usize,
    pods: BTreeMap<String, PodPath>,
    current: BTreeMap<String, Lifecycle>,
    transitions: Vec<Transition>,
    transition_seq: u64,
    edge_counts: BTreeMap<(Option<Lifecycle>, Option<Lifecycle>), u32>,
    activity: Vec<Millis>,
    activity_seen: usize,
    generation: u64,
    notes_cursor: usize,
    deliveries_cursor: usize,
    flow: Vec<FlowItem>,
    /// Writes folded into the derived data but not yet into `flow` (see [`Engine::sync`]).
    pending_writes: Vec<FlowItem>,
    flow_start: FlowStart,
    /// Time-travel snapshots, oldest first.
    snapshots: Vec<Snapshot>,
    /// How many leading inputs the last rebuild applied together as the initial cluster.
    initial_inputs: usize,
    /// No snapshots until the next rebuild (the history diverged from what a replay gives).
    snapshots_paused: bool,
    snapshots_enabled: bool,
    /// The scheduler writes kube-scheduler-simulator's result annotations to the pods.
    scheduler_annotations: bool,
}

impl Engine {
    /// A world built from `inputs` (the t=0 applies form the initial cluster), at t=0.
    pub fn new(seed: u64, inputs: Vec<TimedInput>) -> Engine {
        Engine::with_scheduler_annotations(seed, inputs, false)
    }

    /// [`Engine::new`], with the scheduler writing kube-scheduler-simulator's result annotations
    /// when `scheduler_annotations` (the page's `?scheduler-annotations`).
    pub fn with_scheduler_annotations(seed: u64, inputs: Vec<TimedInput>, scheduler_annotations: bool) -> Engine {
        let mut inputs = inputs;
        kubesim_api::sort::sort_by_key(&mut inputs, |i| i.t_ms);
        let mut engine = Engine {
            seed,
            world: World::new(seed),
            inputs,
            results: Vec::new(),
            next_input: 0,
            high_water_ms: 0,
            trace_cursor: 0,
            pods: BTreeMap::new(),
            current: BTreeMap::new(),
            transitions: Vec::new(),
            transition_seq: 0,
            edge_counts: BTreeMap::new(),
            activity: Vec::new(),
            activity_seen: 0,
            generation: 0,
            notes_cursor: 0,
            deliveries_cursor: 0,
            flow: Vec::new(),
            pending_writes: Vec::new(),
            flow_start: FlowStart::default(),
            snapshots: Vec::new(),
            initial_inputs: 0,
            snapshots_paused: false,
            snapshots_enabled: true,
            scheduler_annotations,
        };
        engine.rebuild();
        engine
    }

    /// Whether the scheduler writes kube-scheduler-simulator's result annotations.
    pub fn scheduler_annotations(&self) -> bool {
        self.scheduler_annotations
    }

    /// Recreates the world from the inputs and applies the t=0 ones, through the one loader the
    /// CLI uses (so a `KubeSchedulerConfiguration` configures the scheduler, and Nodes replace
    /// the default cluster, exactly as `kubesim run` does).
    fn rebuild(&mut self) {
        self.generation += 1;
        self.trace_cursor = 0;
        self.activity_seen = 0;
        self.notes_cursor = 0;
        self.deliveries_cursor = 0;
        self.flow.clear();
        self.pending_writes.clear();
        self.pods.clear();
        self.current.clear();
        self.transitions.clear();
        self.edge_counts.clear();
        self.results = vec![InputResult::default(); self.inputs.len()];
        let initial: Vec<usize> = (0..initial_count(&self.inputs)).collect();
        self.initial_inputs = initial.len();
        self.snapshots_paused = false;
        let files: Vec<InputFile> = initial
            .iter()
            .map(|&n| match &self.inputs[n].input {
                Input::Apply { name, text } => InputFile { name: name.clone(), text: text.clone() },
                Input::Command(_) => unreachable!("filtered above"),
            })
            .collect();
        let (world, outcomes, world_errors) = kubesim_sim::loader::load(
            WorldConfig {
                scheduler_annotations: self.scheduler_annotations,
                limits: Some(kubesim_sim::world::BROWSER_LIMITS),
                // The event list reads every Event each refresh: kept as objects.
                pack_events: false,
                ..WorldConfig::seeded(self.seed)
            },
            &files,
        );
        self.world = world;
        let mut results = std::mem::take(&mut self.results);
        for (&n, outcome) in initial.iter().zip(outcomes) {
            results[n] = input_result(outcome);
        }
        if let Some(&first) = initial.first() {
            results[first].errors.extend(world_errors.into_iter().map(|message| InputError { message, line: None }));
        }
        self.results = results;
        self.next_input = initial.len();
        self.sync();
        self.flow_start = FlowStart { items: self.flow.clone(), trace: self.trace_cursor, notes: self.notes_cursor, deliveries: self.deliveries_cursor };
        // The t=0 snapshot (kept first) spares later rebuilds the decoding of the inputs.
        if self.snapshots.first().is_none_or(|s| s.point.t_ms > 0) {
            self.take_snapshot();
        }
    }

    /// Takes a snapshot now unless one is less than a snapshot interval away (or the world is
    /// too large).
    fn maybe_snapshot(&mut self) {
        if !self.snapshots_enabled || self.snapshots_paused {
            return;
        }
        let here = SnapshotPoint { t_ms: self.world.now(), writes: self.world.trace_total(), pods: 0 };
        let at = self.snapshots.partition_point(|s| s.point.t_ms <= here.t_ms);
        let far_from_previous = at == 0 || snapshot_distance(self.snapshots[at - 1].point, here) >= 1000;
        let far_from_next = self.snapshots.get(at).is_none_or(|next| snapshot_distance(here, next.point) >= 1000);
        if far_from_previous && far_from_next {
            self.take_snapshot();
        }
    }

    fn take_snapshot(&mut self) {
        let point = SnapshotPoint { t_ms: self.world.now(), writes: self.world.trace_total(), pods: self.world.api().store().count(("", "pods")) };
        if !self.snapshots_enabled || self.snapshots_paused || point.pods > SNAPSHOT_MAX_PODS {
            return;
        }
        let at = self.snapshots.partition_point(|s| s.point.t_ms <= point.t_ms);
        let mut points: Vec<SnapshotPoint> = self.snapshots.iter().map(|s| s.point).collect();
        points.insert(at, point);
        let keep = thin(&points);
        if !keep[at] {
            return; // it would be the first to go: not worth the copy
        }
        self.fold_trace();
        // The recorded history is append-only: a snapshot keeps how far it went and a restore
        // takes it back from the current world (`World::rewind_history`).
        let mut world = self.world.clone();
        world.forget_history();
        let snapshot = Snapshot {
            point,
            world,
            results: self.results[..self.next_input].to_vec(),
            next_input: self.next_input,
            trace_cursor: self.trace_cursor,
            pods: self.pods.clone(),
            current: self.current.clone(),
            transitions: self.transitions.clone(),
            edge_counts: self.edge_counts.clone(),
            activity_seen: self.activity_seen,
        };
        self.snapshots.insert(at, snapshot);
        let mut keep = keep.into_iter();
        self.snapshots.retain(|_| keep.next().unwrap_or(true));
    }

    /// Restores the latest snapshot at or before `t_ms`; false if there is none.
    fn restore(&mut self, t_ms: Millis) -> bool {
        let Some(snapshot) = self.snapshots.iter().rev().find(|s| s.point.t_ms <= t_ms) else { return false };
        let mut snapshot = snapshot.clone();
        snapshot.world.rewind_history(&self.world);
        self.world = snapshot.world;
        // As a rebuild does: a new generation; `activity` keeps the history beyond now.
        self.generation += 1;
        self.results = snapshot.results;
        self.results.resize(self.inputs.len(), InputResult::default());
        self.next_input = snapshot.next_input;
        self.trace_cursor = snapshot.trace_cursor;
        self.pods = snapshot.pods;
        self.current = snapshot.current;
        // Transition numbers are never reused (they identify animations): a replay numbers the
        // transitions it re-derives after the current counter, and so does a restore.
        self.transitions = snapshot.transitions;
        for transition in &mut self.transitions {
            self.transition_seq += 1;
            transition.seq = self.transition_seq;
        }
        self.edge_counts = snapshot.edge_counts;
        self.activity_seen = snapshot.activity_seen;
        // The flow is regenerated after running forward (see `replay_flow`).
        self.pending_writes.clear();
        self.flow.clear();
        self.notes_cursor = self.world.notes_total();
        self.deliveries_cursor = self.world.deliveries_total();
        true
    }

    /// The message flow buffer exactly as a rebuild from t=0 followed by one run forward to now
    /// leaves it: the t=0 batch, then every later message in one time-sorted batch.
    fn replay_flow(&self) -> Vec<FlowItem> {
        let start = &self.flow_start;
        let mut batch: Vec<FlowItem> = Vec::new();
        for record in self.world.trace_since(start.trace) {
            batch.push(write_item(record.t_ms, record.actor.to_string(), record.event_type.as_str(), view::ObjectKey::of(&record.object)));
        }
        batch.extend(self.world.notes_since(start.notes).iter().map(|n| call_item(n.t_ms, &n.actor, &n.target, &n.call, &n.detail)));
        let (deliveries, _) = view::delivery_entries(&self.world, start.deliveries);
        batch.extend(deliveries.into_iter().map(watch_item));
        kubesim_api::sort::sort_by_key(&mut batch, |f| f.t_ms);
        let mut flow = start.items.clone();
        extend_flow(&mut flow, batch);
        flow
    }

    fn apply_input(&mut self, index: usize) {
        let input = self.inputs[index].input.clone();
        let mut result = InputResult::default();
        match input {
            Input::Apply { name, text } => {
                result = input_result(kubesim_sim::loader::apply(&mut self.world, &InputFile { name, text }));
            }
            Input::Command(line) => {
                let record = self.world.run_command(&line);
                result.lines.extend(record.stdout.lines().map(str::to_string));
                result.errors.extend(record.stderr.lines().filter(|l| !l.trim().is_empty()).map(|l| InputError { message: l.to_string(), line: None }));
            }
        }
        self.results[index] = result;
    }

    /// Runs the world forward to virtual time `target_ms`, applying due inputs on the way.
    /// Returns false when `should_yield` asked to stop early (the clock then rests at the last
    /// timestamp whose events have all run).
    pub fn advance(&mut self, target_ms: Millis, should_yield: &mut dyn FnMut() -> bool) -> bool {
        let mut checks = 0u32;
        let reached = loop {
            let next_event = self.world.next_event_time();
            if let Some(input_t) = self.inputs.get(self.next_input).map(|i| i.t_ms).filter(|t| *t <= target_ms) {
                if next_event.is_none_or(|e| e > input_t) {
                    self.world.run_until(input_t);
                    let index = self.next_input;
                    self.next_input += 1;
                    self.apply_input(index);
                    continue;
                }
            }
            match next_event {
                Some(e) if e <= target_ms => {
                    if e > self.world.now() {
                        // Every event and input at or before now has run: a resumable point.
                        self.maybe_snapshot();
                        checks += 1;
                        if checks.is_multiple_of(2) && should_yield() {
                            break false;
                        }
                    }
                    self.world.step();
                }
                _ => break true,
            }
        };
        if reached {
            self.world.run_until(target_ms);
        }
        self.high_water_ms = self.high_water_ms.max(self.world.now());
        self.sync();
        reached
    }

    /// Runs events until the next API write that is not housekeeping (or `limit_ms`).
    pub fn step_to_next_write(&mut self, limit_ms: Millis) {
        let start = self.world.trace_total();
        loop {
            let next_event = self.world.next_event_time();
            let next_input = self.inputs.get(self.next_input).map(|i| i.t_ms);
            let next = match (next_event, next_input) {
                (Some(e), Some(i)) => e.min(i),
                (Some(e), None) => e,
                (None, Some(i)) => i,
                (None, None) => break,
            };
            if next > limit_ms {
                break;
            }
            // Finish the whole timestamp so inputs stay replayable.
            self.advance(next, &mut || false);
            if self.world.trace_since(start).iter().any(|r| !is_housekeeping(r.object.info().map(|i| i.plural).unwrap_or(""))) {
                break;
            }
        }
        self.sync();
    }

    /// Travels to virtual time `t_ms`: forward by running; backward by restoring the latest
    /// snapshot at or before `t_ms` (or rebuilding from t=0) and running forward from there.
    pub fn seek(&mut self, t_ms: Millis) {
        if t_ms < self.world.now() {
            if self.restore(t_ms) {
                self.advance(t_ms, &mut || false);
                self.flow = self.replay_flow();
                return;
            }
            self.rebuild();
        }
        self.advance(t_ms, &mut || false);
    }

    /// The virtual times of the time-travel snapshots kept, oldest first.
    pub fn snapshot_times(&self) -> Vec<Millis> {
        self.snapshots.iter().map(|s| s.point.t_ms).collect()
    }

    /// Turns time-travel snapshots on (the default) or off (dropping them): without them every
    /// backward seek rebuilds from t=0 and replays. The results are the same either way.
    pub fn set_snapshots(&mut self, enabled: bool) {
        self.snapshots_enabled = enabled;
        if !enabled {
            self.snapshots.clear();
        }
    }

    /// Applies an input now. Inputs recorded after now (from a branch left by time travel) are
    /// dropped: the new input starts a new future. Returns the result.
    pub fn apply_now(&mut self, input: Input) -> InputResult {
        let now = self.world.now();
        self.cut_future();
        self.inputs.push(TimedInput { t_ms: now, input, user: true });
        self.results.push(InputResult::default());
        if initial_count(&self.inputs) > self.initial_inputs {
            // A replay decodes every leading t=0 apply together as the initial cluster, so it
            // would not reproduce the history this input starts (a Node applied now joins the
            // default cluster; in a replay it replaces it). Snapshots could only restore this
            // history: none until the next rebuild, so time travel stays a replay.
            self.snapshots.clear();
            self.snapshots_paused = true;
        }
        let index = self.next_input;
        self.next_input += 1;
        self.apply_input(index);
        self.sync();
        self.results[index].clone()
    }

    /// Forgets the future beyond now (left by time travel): its inputs, their results, its
    /// activity and its snapshots. The snapshots at now go too: one taken before an input
    /// applied now would replay it as if it came later (and a replay treats a t=0 apply as part
    /// of the initial cluster).
    fn cut_future(&mut self) {
        let now = self.world.now();
        self.snapshots.retain(|s| s.point.t_ms < now);
        self.inputs.truncate(self.next_input);
        self.results.truncate(self.next_input);
        self.high_water_ms = now;
        self.activity.truncate(self.activity_seen);
    }

    /// A fork of this history at now ("what if?"): an independent engine sharing the past (the
    /// world, every derived datum and the snapshots before now) and none of the future. Inputs
    /// applied to either then change only that one; this engine is untouched, so its future is
    /// byte for byte what it would have been without the fork. A fork is itself an ordinary
    /// engine: its inputs replayed from t=0 give its history (which is how a shared link
    /// recreates it).
    pub fn fork(&self) -> Engine {
        let mut fork = self.clone();
        fork.cut_future();
        fork.flow.clear();
        fork
    }

    /// Folds new trace records into the derived data (lifecycle transitions, activity) and new
    /// messages into the flow buffer (one time-sorted batch per call).
    fn sync(&mut self) {
        self.fold_trace();
        let mut flow: Vec<FlowItem> = std::mem::take(&mut self.pending_writes);
        flow.extend(self.world.notes_since(self.notes_cursor).iter().map(|n| call_item(n.t_ms, &n.actor, &n.target, &n.call, &n.detail)));
        self.notes_cursor = self.world.notes_total();
        let (deliveries, next) = view::delivery_entries(&self.world, self.deliveries_cursor);
        flow.extend(deliveries.into_iter().map(watch_item));
        self.deliveries_cursor = next;
        kubesim_api::sort::sort_by_key(&mut flow, |f| f.t_ms);
        extend_flow(&mut self.flow, flow);
    }

    /// Folds new trace records into the derived data. The writes wait in `pending_writes` for
    /// the next [`Engine::sync`], so the flow's batches do not depend on when this runs.
    fn fold_trace(&mut self) {
        let entries = view::trace_entries(&self.world, self.trace_cursor);
        self.trace_cursor = self.world.trace_total();
        for entry in entries {
            self.pending_writes.push(write_item(entry.t_ms, entry.actor.clone(), entry.event_type, entry.key.clone()));
            if !is_housekeeping(&entry.key.resource) {
                if self.activity_seen >= self.activity.len() {
                    self.activity.push(entry.t_ms);
                }
                self.activity_seen += 1;
            }
            let (Some(lifecycle), Some(uid)) = (entry.lifecycle, entry.uid.clone()) else { continue };
            let pod = format!("{}/{}", entry.key.namespace, entry.key.name);
            let path = self.pods.entry(uid.clone()).or_insert_with(|| PodPath { pod: pod.clone(), ..Default::default() });
            let before = self.current.get(&uid).copied();
            let after = if entry.event_type == "DELETED" { None } else { Some(lifecycle) };
            if entry.event_type == "DELETED" {
                path.deleted_ms = Some(entry.t_ms);
                self.current.remove(&uid);
            } else {
                if before != after {
                    path.steps.push((entry.t_ms, lifecycle, entry.status.clone().unwrap_or_default(), entry.actor.clone()));
                }
                self.current.insert(uid.clone(), lifecycle);
            }
            if before != after {
                self.transition_seq += 1;
                *self.edge_counts.entry((before, after)).or_insert(0) += 1;
                self.transitions.push(Transition { seq: self.transition_seq, t_ms: entry.t_ms, uid, pod, from: before, to: after });
            }
        }
    }

    /// Takes the messages recorded since the last call.
    pub fn take_flow(&mut self) -> Vec<FlowItem> {
        std::mem::take(&mut self.flow)
    }

    /// Confirms a who-can-connect matrix of the world now by probing
    /// ([`view::probe_matrix`]; connect-only probes change nothing, so the recorded history and
    /// time travel are unaffected).
    pub fn probe_matrix(&mut self, matrix: &mut view::MatrixView) {
        view::probe_matrix(&mut self.world, matrix);
    }

    /// The world (read-only).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Virtual now.
    pub fn now(&self) -> Millis {
        self.world.now()
    }

    /// The furthest virtual time reached in this history.
    pub fn high_water_ms(&self) -> Millis {
        self.high_water_ms.max(self.world.now())
    }

    /// Whether anything but housekeeping is pending (or an input is still due).
    pub fn busy(&self) -> bool {
        self.world.busy() || self.next_input < self.inputs.len()
    }

    /// The inputs of this history, with their results (None = not yet applied).
    pub fn inputs(&self) -> impl Iterator<Item = (&TimedInput, Option<&InputResult>)> {
        self.inputs.iter().enumerate().map(move |(n, i)| (i, (n < self.next_input).then(|| &self.results[n])))
    }

    /// Nodes that are down now: without power, or cut off from the API server (read from the
    /// hosts and the fabric, not re-parsed from fault commands).
    pub fn nodes_down(&self) -> Vec<String> {
        self.world.node_names().filter(|n| !self.world.host(n).is_some_and(|h| h.powered) || !self.world.is_connected(n)).cloned().collect()
    }

    /// Lifecycle transitions so far (this generation), oldest first.
    pub fn transitions(&self) -> &[Transition] {
        &self.transitions
    }

    /// How many pods took each edge so far.
    pub fn edge_counts(&self) -> &BTreeMap<(Option<Lifecycle>, Option<Lifecycle>), u32> {
        &self.edge_counts
    }

    /// A pod's path by UID.
    pub fn pod_path(&self, uid: &str) -> Option<&PodPath> {
        self.pods.get(uid)
    }

    /// Virtual times of non-housekeeping API writes, over the whole history seen (including
    /// the part beyond now after travelling back).
    pub fn activity(&self) -> &[Millis] {
        &self.activity
    }

    /// The number of non-housekeeping writes in this history so far: when it has not changed,
    /// nothing the views draw from the store has either (only Lease renewals happened).
    pub fn content_writes(&self) -> usize {
        self.activity_seen
    }

    /// Increments each time the world is rebuilt (time travel), so views can drop animations.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}
