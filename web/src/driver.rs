//! The driver: maps wall time to virtual time, runs the engine within a per-frame budget, and
//! turns what happened into a [`Frame`] (including the wall-clock animations of messages and
//! pods). It takes wall time as arguments and never reads a clock itself, so it is testable.

use crate::engine::{Engine, FlowItem, Millis, Transition};
use crate::frame::{Frame, Marker, Mover, Perf, Pulse};
use crate::scenarios::Scenario;
use kubesim_sim::view;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// A frame whose refresh overruns the 60 Hz frame period by more than this (wall ms, besides
/// the simulation's budget) is heavy.
pub const HEAVY_FRAME_MS: f64 = 14.0;

/// The simulation's budget per animation frame while refreshes are heavy (wall ms).
pub const HEAVY_SIM_BUDGET_MS: f64 = 28.0;

/// While refreshes are heavy, the views refresh once per this many refresh costs, so the
/// simulation keeps about 3/4 of the wall time.
pub const REFRESH_SHARE: f64 = 4.0;

/// The shortest wait between refreshes while refreshes are heavy (wall ms): the views of a big
/// world playing flat out follow it four times a second, and the simulation keeps the rest.
pub const MIN_REFRESH_INTERVAL_MS: f64 = 250.0;

/// The longest wait between refreshes while playing (wall ms). A 30,000-pod world's refresh
/// takes over a second in the browser; a cap of one second (as this once was) left its
/// simulation a sliver of each second, and it crawled as pods came up.
pub const MAX_REFRESH_INTERVAL_MS: f64 = 8_000.0;

/// How long a message takes to cross the flow view (wall ms).
pub const PULSE_MS: f64 = 1100.0;
/// How long a pod takes to cross a lifecycle edge (wall ms).
pub const MOVER_MS: f64 = 900.0;
/// At most this many messages animate at once; the rest only go to the log.
pub const MAX_PULSES: usize = 48;
/// At most this many pods animate at once.
pub const MAX_MOVERS: usize = 160;
/// Messages kept for the log.
pub const LOG_LEN: usize = 300;
/// How often (virtual ms) the who-can-connect matrix is probed again while its verdicts stay.
pub const MATRIX_PROBE_EVERY_MS: Millis = 2_000;
/// At "max" speed, one frame may advance at most this much virtual time.
pub const MAX_SPEED_WINDOW_MS: Millis = 5 * 60_000;

/// The driver.
pub struct Driver {
    engine: Engine,
    scenario: Scenario,
    last_wall: Option<f64>,
    carry_ms: f64,
    generation: u64,
    transitions_cursor: usize,
    pulse_seq: u64,
    pulses: VecDeque<(u64, Rc<FlowItem>, f64)>,
    movers: VecDeque<(Transition, f64)>,
    flow_log: VecDeque<Rc<FlowItem>>,
    flow_counts: BTreeMap<String, (u32, u32)>,
    frame: Rc<Frame>,
    frame_walls: VecDeque<f64>,
    lagging: bool,
    sim_ms: f64,
    /// Wall ms a frame costs besides the simulation (snapshot, views, paint): an average over
    /// frames that followed a refresh.
    overhead_ms: f64,
    /// Wall ms the last refresh took in the simulation's own thread (the snapshot and views;
    /// encoding and the page's part excluded): the floor of `overhead_ms`'s next sample.
    refresh_ms: f64,
    /// Whether the last tick handed out a new frame.
    refreshed: bool,
    /// Wall time of the last refresh.
    refresh_wall: f64,
    events_wall: f64,
    playing: bool,
    scene_writes: usize,
    events_stale: bool,
    /// The who-can-connect matrix as last confirmed by probes.
    matrix_probes: Option<(usize, view::MatrixView)>,
    /// The pod views of the last snapshot, reused for the pods that did not change.
    snapshot_cache: view::SnapshotCache,
}

impl Driver {
    /// A driver at t=0 of `scenario`.
    pub fn new(scenario: Scenario, seed: u64) -> Driver {
        Driver::with_scheduler_annotations(scenario, seed, false)
    }

    /// [`Driver::new`], the scheduler writing kube-scheduler-simulator's result annotations
    /// when `scheduler_annotations`.
    pub fn with_scheduler_annotations(scenario: Scenario, seed: u64, scheduler_annotations: bool) -> Driver {
        let engine = Engine::with_scheduler_annotations(seed, scenario.inputs.clone(), scheduler_annotations);
        Driver::from_engine(engine, scenario)
    }

    /// A driver over an engine (at whatever time it stands).
    pub fn from_engine(engine: Engine, scenario: Scenario) -> Driver {
        let mut driver = Driver {
            engine,
            scenario,
            last_wall: None,
            carry_ms: 0.0,
            generation: 0,
            transitions_cursor: 0,
            pulse_seq: 0,
            pulses: VecDeque::new(),
            movers: VecDeque::new(),
            flow_log: VecDeque::new(),
            flow_counts: BTreeMap::new(),
            frame: Rc::new(Frame::empty()),
            frame_walls: VecDeque::new(),
            lagging: false,
            sim_ms: 0.0,
            overhead_ms: 0.0,
            refresh_ms: 0.0,
            refreshed: false,
            refresh_wall: f64::NEG_INFINITY,
            events_wall: f64::NEG_INFINITY,
            playing: false,
            scene_writes: usize::MAX,
            events_stale: true,
            matrix_probes: None,
            snapshot_cache: view::SnapshotCache::default(),
        };
        driver.collect(0.0, true);
        driver
    }

    /// Confirms the who-can-connect matrix by probing ([`view::probe_matrix`]: at most
    /// [`view::MATRIX_CAP`]² connection attempts, none of which changes the world): again when
    /// its pods, ports or verdicts changed, when time went back, or every
    /// [`MATRIX_PROBE_EVERY_MS`] of virtual time; otherwise the last probes are kept.
    fn confirm_matrix(&mut self, matrix: &mut view::MatrixView, now: Millis) {
        // An input applied since (a fault, a command) may change what the probes see.
        let applied = self.engine.inputs().filter(|(_, result)| result.is_some()).count();
        let reusable = self
            .matrix_probes
            .as_ref()
            .filter(|(inputs, old)| *inputs == applied && old.same_cells(matrix) && old.probed_at.is_some_and(|t| now >= t && now < t + MATRIX_PROBE_EVERY_MS));
        match reusable {
            Some((_, old)) => {
                matrix.probed = old.probed.clone();
                matrix.probed_at = old.probed_at;
            }
            None => {
                self.engine.probe_matrix(matrix);
                self.matrix_probes = Some((applied, matrix.clone()));
            }
        }
    }

    /// Replaces the scenario (a new world at t=0).
    pub fn load(&mut self, scenario: Scenario, wall_now: f64) -> Rc<Frame> {
        let seed = self.engine.seed();
        self.engine = Engine::with_scheduler_annotations(seed, scenario.inputs.clone(), self.engine.scheduler_annotations());
        self.scenario = scenario;
        self.generation = 0;
        self.last_wall = None;
        self.matrix_probes = None;
        self.collect(wall_now, true)
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, for inputs and time travel; call [`Driver::refresh`] afterwards.
    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// The scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The latest frame.
    pub fn frame(&self) -> Rc<Frame> {
        self.frame.clone()
    }

    /// One animation frame: advances virtual time by the wall time since the last tick × speed
    /// (speed 0 = as much as `budget_ms` of wall time allows), then builds the frame.
    /// `clock` reads the wall clock (ms) for the budget.
    ///
    /// Big clusters: when refreshing the views costs more than [`HEAVY_FRAME_MS`] (measured on
    /// the frames after a refresh), the views are refreshed only every [`REFRESH_SHARE`] of
    /// those costs while playing ([`MIN_REFRESH_INTERVAL_MS`] to [`MAX_REFRESH_INTERVAL_MS`]
    /// apart), and the simulation gets a larger budget in between — otherwise a 10,000-pod
    /// world would spend most of each frame redrawing and advance at a crawl.
    pub fn tick(&mut self, wall_now: f64, playing: bool, speed: f64, budget_ms: f64, clock: &dyn Fn() -> f64) -> Rc<Frame> {
        if let (Some(last), true) = (self.last_wall, self.refreshed) {
            // Beyond one 60 Hz frame period: what the refresh cost over the simulation's share
            // (the page's decoding and drawing included). At least what the refresh itself
            // took: in a Web Worker running flat out, ticks follow one another with no frame
            // period between them, and a refresh under 17 ms would otherwise look free.
            let overhead = (wall_now - last - self.sim_ms - 16.7).max(self.refresh_ms);
            self.overhead_ms = 0.7 * self.overhead_ms + 0.3 * overhead;
        }
        let heavy = playing && self.overhead_ms > HEAVY_FRAME_MS;
        let budget_ms = if heavy { budget_ms.max(HEAVY_SIM_BUDGET_MS) } else { budget_ms };
        let dt = self.last_wall.map_or(0.0, |last| (wall_now - last).clamp(0.0, 100.0));
        self.last_wall = Some(wall_now);
        self.playing = playing;
        self.frame_walls.push_back(wall_now);
        while self.frame_walls.front().is_some_and(|w| wall_now - w > 1000.0) {
            self.frame_walls.pop_front();
        }
        if playing {
            let now = self.engine.now();
            let target = if speed <= 0.0 {
                now + MAX_SPEED_WINDOW_MS
            } else {
                self.carry_ms += dt * speed;
                let whole = self.carry_ms.floor();
                self.carry_ms -= whole;
                now + whole as Millis
            };
            if target > now {
                let start = clock();
                let reached = self.engine.advance(target, &mut || clock() - start > budget_ms);
                self.sim_ms = clock() - start;
                self.lagging = !reached && speed > 0.0;
            }
        } else {
            self.carry_ms = 0.0;
            self.lagging = false;
            self.sim_ms = 0.0;
        }
        if heavy && wall_now - self.refresh_wall < (REFRESH_SHARE * self.overhead_ms).clamp(MIN_REFRESH_INTERVAL_MS, MAX_REFRESH_INTERVAL_MS) {
            self.refreshed = false;
            return self.frame.clone();
        }
        let before = Rc::as_ptr(&self.frame);
        let start = clock();
        let frame = self.collect(wall_now, false);
        self.refresh_ms = clock() - start;
        self.refreshed = !std::ptr::eq(before, Rc::as_ptr(&frame));
        if self.refreshed {
            self.refresh_wall = wall_now;
        }
        frame
    }

    /// A fork of this history at now ([`Engine::fork`]) with a driver of its own.
    pub fn fork(&self, wall_now: f64) -> Driver {
        let mut fork = Driver::from_engine(self.engine.fork(), self.scenario.clone());
        fork.collect(wall_now, true);
        fork
    }

    /// Brings this (a fork's) history to virtual time `t_ms`, the original's clock: forward
    /// within `budget_ms` of wall time (the rest next frame), or back by time travel. Then
    /// builds the frame.
    pub fn follow(&mut self, t_ms: Millis, wall_now: f64, playing: bool, budget_ms: f64, clock: &dyn Fn() -> f64) -> Rc<Frame> {
        self.playing = playing;
        let now = self.engine.now();
        if t_ms < now {
            self.engine.seek(t_ms);
        } else if t_ms > now {
            let start = clock();
            let reached = self.engine.advance(t_ms, &mut || clock() - start > budget_ms);
            self.lagging = !reached;
        }
        self.last_wall = Some(wall_now);
        self.collect(wall_now, false)
    }

    /// Rebuilds the frame after a direct engine operation (apply, seek, step).
    pub fn refresh(&mut self, wall_now: f64) -> Rc<Frame> {
        self.collect(wall_now, true)
    }

    fn collect(&mut self, wall_now: f64, force: bool) -> Rc<Frame> {
        let mut changed = force;
        let new_flow = self.engine.take_flow();
        if self.engine.generation() != self.generation {
            // Rebuilt (time travel or a new scenario): drop animations, recount from the
            // history the rebuild replayed.
            self.generation = self.engine.generation();
            self.pulses.clear();
            self.movers.clear();
            self.flow_log.clear();
            self.flow_counts.clear();
            for item in &new_flow {
                count_message(&mut self.flow_counts, item);
            }
            let skip = new_flow.len().saturating_sub(LOG_LEN);
            self.flow_log.extend(new_flow.into_iter().skip(skip).map(Rc::new));
            self.transitions_cursor = self.engine.transitions().len();
            changed = true;
        } else if !new_flow.is_empty() {
            changed = true;
            let first_animated = new_flow.len().saturating_sub(MAX_PULSES);
            for (n, item) in new_flow.into_iter().enumerate() {
                count_message(&mut self.flow_counts, &item);
                let item = Rc::new(item);
                let housekeeping = item.object.as_ref().is_some_and(|k| crate::engine::is_housekeeping(&k.resource));
                if n >= first_animated && !housekeeping {
                    self.pulse_seq += 1;
                    self.pulses.push_back((self.pulse_seq, item.clone(), wall_now));
                }
                self.flow_log.push_back(item);
            }
            while self.pulses.len() > MAX_PULSES {
                self.pulses.pop_front();
            }
            while self.flow_log.len() > LOG_LEN {
                self.flow_log.pop_front();
            }
        }
        let transitions = self.engine.transitions();
        if transitions.len() > self.transitions_cursor {
            changed = true;
            let fresh = &transitions[self.transitions_cursor..];
            let first = fresh.len().saturating_sub(MAX_MOVERS);
            for transition in &fresh[first..] {
                self.movers.push_back((transition.clone(), wall_now));
            }
            while self.movers.len() > MAX_MOVERS {
                self.movers.pop_front();
            }
            self.transitions_cursor = transitions.len();
        }
        let had_animations = !self.pulses.is_empty() || !self.movers.is_empty();
        self.pulses.retain(|(_, _, start)| wall_now - start < PULSE_MS);
        self.movers.retain(|(_, start)| wall_now - start < MOVER_MS);
        changed |= had_animations;

        let previous = self.frame.clone();
        let world = self.engine.world();
        let now = self.engine.now();
        if now != previous.t_ms || self.events_stale {
            changed = true;
        }
        if !changed {
            return previous;
        }
        let revision = world.api().store().revision();
        let writes = self.engine.content_writes();
        let content_changed = writes != self.scene_writes;
        self.scene_writes = writes;
        let scene = if content_changed || force {
            // Heartbeats change the revision but rarely what the views draw: keep the old
            // snapshot (and the views' memoized renders) when nodes and pods are unchanged.
            let fresh = view::snapshot_cached(world, &mut self.snapshot_cache);
            if !force && fresh.nodes == previous.scene.nodes && fresh.pods == previous.scene.pods {
                previous.scene.clone()
            } else {
                Rc::new(fresh)
            }
        } else {
            previous.scene.clone()
        };
        let workloads = if content_changed || force {
            let fresh = view::workloads(world);
            if *previous.workloads == fresh {
                previous.workloads.clone()
            } else {
                Rc::new(fresh)
            }
        } else {
            previous.workloads.clone()
        };
        // The event log is throttled while playing (thousands of Events at scale).
        let events_due = force || !self.playing || wall_now - self.events_wall > 400.0;
        self.events_stale |= content_changed || force;
        let events = if self.events_stale && events_due {
            self.events_wall = wall_now;
            self.events_stale = false;
            let fresh = view::events(world);
            if *previous.events == fresh {
                previous.events.clone()
            } else {
                Rc::new(fresh)
            }
        } else {
            previous.events.clone()
        };
        // The network view, throttled like the event log (it names pods by address).
        let packets_total = world.runtime().packets().1;
        let probes_due = self.matrix_probes.as_ref().is_some_and(|(_, m)| m.probed_at.is_some_and(|t| now >= t + MATRIX_PROBE_EVERY_MS));
        let network = if (events_due && (packets_total != previous.network.total_packets || content_changed || probes_due)) || force {
            let mut fresh = view::network(world, 80);
            match fresh.matrix.as_mut() {
                Some(matrix) => self.confirm_matrix(matrix, now),
                None => self.matrix_probes = None,
            }
            if *previous.network == fresh {
                previous.network.clone()
            } else {
                Rc::new(fresh)
            }
        } else {
            previous.network.clone()
        };
        let world = self.engine.world();
        // The storage view, throttled like the event log: its stages also follow the machines'
        // mount tables, which change between API writes (NodeStage, NodePublish).
        let storage = if events_due || force {
            let fresh = view::storage(world);
            if *previous.storage == fresh {
                previous.storage.clone()
            } else {
                Rc::new(fresh)
            }
        } else {
            previous.storage.clone()
        };
        let markers: Vec<Marker> = self
            .engine
            .inputs()
            .filter(|(input, _)| input.t_ms > 0 || input.user)
            .map(|(input, result)| Marker { t_ms: input.t_ms, label: input.label(), user: input.user, error: result.is_some_and(|r| !r.errors.is_empty()) })
            .collect();
        let markers = if *previous.markers == markers { previous.markers.clone() } else { Rc::new(markers) };
        let activity = self.engine.activity();
        let activity = if previous.activity.len() == activity.len() && !force { previous.activity.clone() } else { Rc::new(activity.to_vec()) };
        let edges: Vec<_> = self.engine.edge_counts().iter().map(|((from, to), n)| (*from, *to, *n)).collect();
        let edges = if *previous.edges == edges { previous.edges.clone() } else { Rc::new(edges) };
        let pulses: Vec<Pulse> = self
            .pulses
            .iter()
            .map(|(id, item, start)| Pulse { id: *id, item: item.clone(), progress: ((wall_now - start) / PULSE_MS).clamp(0.0, 1.0) })
            .collect();
        let movers: Vec<Mover> = self
            .movers
            .iter()
            .map(|(t, start)| Mover { id: t.seq, uid: t.uid.clone(), from: t.from, to: t.to, progress: ((wall_now - start) / MOVER_MS).clamp(0.0, 1.0) })
            .collect();
        let flow_log: Vec<Rc<FlowItem>> = self.flow_log.iter().cloned().collect();
        let flow_log = if previous.flow_log.len() == flow_log.len() && previous.flow_log.last().map(Rc::as_ptr) == flow_log.last().map(Rc::as_ptr) {
            previous.flow_log.clone()
        } else {
            Rc::new(flow_log)
        };
        let flow_counts: Vec<(String, u32, u32)> = self.flow_counts.iter().map(|(k, (sent, watched))| (k.clone(), *sent, *watched)).collect();
        let flow_counts = if *previous.flow_counts == flow_counts { previous.flow_counts.clone() } else { Rc::new(flow_counts) };
        let nodes_down = self.engine.nodes_down();
        let nodes_down = if *previous.nodes_down == nodes_down { previous.nodes_down.clone() } else { Rc::new(nodes_down) };
        let transitions = self.engine.transitions();
        let recent = &transitions[transitions.len().saturating_sub(crate::frame::RECENT_TRANSITIONS)..];
        let recent_transitions = if previous.generation == self.generation
            && previous.recent_transitions.last().map(|t| t.seq) == recent.last().map(|t| t.seq)
            && previous.recent_transitions.len() == recent.len()
        {
            previous.recent_transitions.clone()
        } else {
            Rc::new(recent.to_vec())
        };
        let frame = Frame {
            t_ms: now,
            revision,
            high_water_ms: self.engine.high_water_ms(),
            busy: self.engine.busy(),
            generation: self.generation,
            lagging: self.lagging,
            scene,
            workloads,
            events,
            network,
            storage,
            pulses: if pulses.is_empty() && previous.pulses.is_empty() { previous.pulses.clone() } else { Rc::new(pulses) },
            movers: if movers.is_empty() && previous.movers.is_empty() { previous.movers.clone() } else { Rc::new(movers) },
            flow_log,
            flow_counts,
            edges,
            markers,
            activity,
            perf: Perf { sim_ms: self.sim_ms, fps: self.frame_walls.len() as f64, sim_memory_bytes: memory_bytes() },
            limit_refusals: self.engine.world().api().limit_refusals(),
            nodes_down,
            recent_transitions,
        };
        self.frame = Rc::new(frame);
        self.frame.clone()
    }
}

/// Counts a message: a write or call for its sender, a watch notification for its receiver.
fn count_message(counts: &mut BTreeMap<String, (u32, u32)>, item: &FlowItem) {
    match item.kind {
        crate::engine::FlowKind::Watch => counts.entry(item.to.clone()).or_default().1 += 1,
        _ => counts.entry(item.from.clone()).or_default().0 += 1,
    }
}

/// This module's WebAssembly memory in bytes (0 natively).
fn memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        wasm_bindgen::memory()
            .dyn_into::<js_sys::WebAssembly::Memory>()
            .map(|m| m.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length() as f64)
            .unwrap_or(0.0)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0.0
    }
}
