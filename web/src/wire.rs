//! The port's messages as they cross to a Web Worker and back: plain data, JSON-encoded.
//!
//! A frame crosses as a [`FrameDelta`]: the parts that did not change since the previous frame
//! of the same history (the original's or the fork's) are left out and the receiving side keeps
//! its own `Rc` of them — so the views' memoized renders skip them as before, and a heartbeat
//! frame of a 10,000-pod world is a few hundred bytes, not megabytes. The activity list (the
//! times of every write, for the timeline) grows within a generation unless an input cuts the
//! history's future (which lowers its high-water mark): while it grows it crosses as the new
//! tail, otherwise whole. A changed scene crosses as a [`ScenePatch`]: the pods that changed,
//! and runs of the previous scene's pods that did not.
//!
//! [`Encoder`] (the simulation's side) turns the host's actions into [`FromSim`] messages;
//! [`Decoder`] (the UI's side) turns them back into actions, with the same frames.

use crate::components::network::ExternalResult;
use crate::engine::{FlowItem, InputResult, Millis, Transition};
use crate::frame::{EdgeCount, Frame, Marker, Mover, Perf, Pulse};
use crate::port::{Answer, Command, Query, Start};
use crate::state::{Action, ConsoleEntry, ForkState, View};
use kubesim_sim::diff::WorldDiff;
use kubesim_sim::view::{ClusterSnapshot, EventView, NetworkView, NodeView, PodView, StorageView, WorkloadView};
use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// What the UI sends the simulation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum ToSim {
    /// Build the world (the first message).
    Start(Start),
    /// A command, at the UI's wall time.
    Command {
        /// performance.now() on the UI's side when it was sent.
        wall_ms: f64,
        /// The command.
        command: Command,
    },
    /// A question; the answer comes back with the same `id`.
    Query {
        /// Which asking this answers.
        id: u64,
        /// The question.
        query: Query,
    },
    /// A request from the workstation ([`crate::port::Port::send_external`]).
    External {
        /// Which asking this answers.
        id: u64,
        /// performance.now() on the UI's side.
        wall_ms: f64,
        /// The URL.
        url: String,
        /// The Host header, or empty.
        host: String,
    },
}

/// What the simulation sends the UI.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum FromSim {
    /// The world is built; messages may follow.
    Ready,
    /// The original's new frame.
    Frame(FrameDelta),
    /// The fork's new frame, label and (when one was made) comparison.
    ForkFrame(FrameDelta, String, Option<WorldDiff>),
    /// The editor's YAML was applied.
    Applied(InputResult),
    /// A console line ran.
    Console(ConsoleEntry),
    /// A fork was opened (`Some`: at, label, frame, comparison, target) or closed.
    Forked(Option<(Millis, String, FrameDelta, WorldDiff, bool)>),
    /// The fork is (not) the target.
    ForkTarget(bool),
    /// Pause.
    Pause,
    /// Play.
    Play,
    /// Switch to a view.
    SetView(View),
    /// A scenario was loaded: its name and first frame.
    ScenarioLoaded(String, FrameDelta),
    /// A query's answer.
    Answer(u64, Answer),
    /// A workstation request's result.
    External(u64, Result<ExternalResult, String>),
}

/// A frame, with the parts unchanged since the previous one of its history left out (`None`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct FrameDelta {
    t_ms: Millis,
    revision: u64,
    high_water_ms: Millis,
    busy: bool,
    generation: u64,
    lagging: bool,
    perf: Perf,
    limit_refusals: u64,
    scene: Option<ScenePatch>,
    workloads: Option<Vec<WorkloadView>>,
    events: Option<Vec<EventView>>,
    network: Option<NetworkView>,
    storage: Option<StorageView>,
    pulses: Vec<Pulse>,
    movers: Vec<Mover>,
    flow_log: Option<Vec<Rc<FlowItem>>>,
    flow_counts: Option<Vec<(String, u32, u32)>>,
    edges: Option<Vec<EdgeCount>>,
    markers: Option<Vec<Marker>>,
    /// Keep this many of the previous activity times, then append these.
    activity: Option<(usize, Vec<Millis>)>,
    nodes_down: Option<Vec<String>>,
    recent_transitions: Option<Vec<Transition>>,
}

/// The part of `next` when it is not the same `Rc` as in `previous`.
fn changed<T: Clone>(previous: Option<&Rc<T>>, next: &Rc<T>) -> Option<T> {
    match previous {
        Some(p) if Rc::ptr_eq(p, next) => None,
        _ => Some((**next).clone()),
    }
}

impl FrameDelta {
    /// `next` as a change from `previous` (the last frame of the same history sent; `None`:
    /// send everything).
    pub fn between(previous: Option<&Frame>, next: &Frame) -> FrameDelta {
        let activity = match previous {
            // Within a generation, and unless an input cut the future (lowering the high-water
            // mark), the list only grows: send the new tail.
            Some(p)
                if p.generation == next.generation
                    && p.high_water_ms <= next.high_water_ms
                    && p.activity.len() <= next.activity.len()
                    && (p.activity.is_empty() || p.activity.last() == next.activity.get(p.activity.len() - 1)) =>
            {
                (!Rc::ptr_eq(&p.activity, &next.activity)).then(|| (p.activity.len(), next.activity[p.activity.len()..].to_vec()))
            }
            _ => Some((0, next.activity.to_vec())),
        };
        FrameDelta {
            t_ms: next.t_ms,
            revision: next.revision,
            high_water_ms: next.high_water_ms,
            busy: next.busy,
            generation: next.generation,
            lagging: next.lagging,
            perf: next.perf.clone(),
            limit_refusals: next.limit_refusals,
            scene: match previous {
                Some(p) if Rc::ptr_eq(&p.scene, &next.scene) => None,
                _ => Some(ScenePatch::between(previous.map(|p| &*p.scene), &next.scene)),
            },
            workloads: changed(previous.map(|p| &p.workloads), &next.workloads),
            events: changed(previous.map(|p| &p.events), &next.events),
            network: changed(previous.map(|p| &p.network), &next.network),
            storage: changed(previous.map(|p| &p.storage), &next.storage),
            pulses: next.pulses.to_vec(),
            movers: next.movers.to_vec(),
            flow_log: changed(previous.map(|p| &p.flow_log), &next.flow_log),
            flow_counts: changed(previous.map(|p| &p.flow_counts), &next.flow_counts),
            edges: changed(previous.map(|p| &p.edges), &next.edges),
            markers: changed(previous.map(|p| &p.markers), &next.markers),
            activity,
            nodes_down: changed(previous.map(|p| &p.nodes_down), &next.nodes_down),
            recent_transitions: changed(previous.map(|p| &p.recent_transitions), &next.recent_transitions),
        }
    }

    /// The frame this delta makes of `previous` (the last frame of its history received).
    pub fn apply(self, previous: &Frame) -> Frame {
        fn keep<T>(part: Option<T>, previous: &Rc<T>) -> Rc<T> {
            part.map_or_else(|| previous.clone(), Rc::new)
        }
        let activity = match self.activity {
            None => previous.activity.clone(),
            Some((0, all)) => Rc::new(all),
            Some((kept, tail)) => {
                let mut all = previous.activity[..kept.min(previous.activity.len())].to_vec();
                all.extend(tail);
                Rc::new(all)
            }
        };
        let same_pulses = self.pulses.is_empty() && previous.pulses.is_empty();
        let same_movers = self.movers.is_empty() && previous.movers.is_empty();
        Frame {
            t_ms: self.t_ms,
            revision: self.revision,
            high_water_ms: self.high_water_ms,
            busy: self.busy,
            generation: self.generation,
            lagging: self.lagging,
            scene: self.scene.map_or_else(|| previous.scene.clone(), |patch| Rc::new(patch.apply(&previous.scene))),
            workloads: keep(self.workloads, &previous.workloads),
            events: keep(self.events, &previous.events),
            network: keep(self.network, &previous.network),
            storage: keep(self.storage, &previous.storage),
            pulses: if same_pulses { previous.pulses.clone() } else { Rc::new(self.pulses) },
            movers: if same_movers { previous.movers.clone() } else { Rc::new(self.movers) },
            flow_log: keep(self.flow_log, &previous.flow_log),
            flow_counts: keep(self.flow_counts, &previous.flow_counts),
            edges: keep(self.edges, &previous.edges),
            markers: keep(self.markers, &previous.markers),
            activity,
            perf: self.perf,
            limit_refusals: self.limit_refusals,
            nodes_down: keep(self.nodes_down, &previous.nodes_down),
            recent_transitions: keep(self.recent_transitions, &previous.recent_transitions),
        }
    }
}

/// A scene as a change from the previous one of the same history: its nodes when they changed,
/// its pods as runs of the previous list's pods that are unchanged and the pods that are new
/// or changed. While a 10,000-pod world rolls out, a refresh crosses as the few hundred pods
/// that changed instead of all 10,000 (megabytes of JSON to encode and parse).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ScenePatch {
    t_ms: Millis,
    revision: u64,
    nodes: Option<Vec<NodeView>>,
    pods: Vec<PodRun>,
}

/// A stretch of a scene's pod list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
enum PodRun {
    /// `len` pods of the previous list from index `start`, as they were.
    Keep(usize, usize),
    /// Pods new to the list or changed.
    New(Vec<PodView>),
}

impl ScenePatch {
    /// `next` as a change from `previous` (`None`: all of it).
    pub fn between(previous: Option<&ClusterSnapshot>, next: &ClusterSnapshot) -> ScenePatch {
        let Some(previous) = previous else {
            return ScenePatch { t_ms: next.t_ms, revision: next.revision, nodes: Some(next.nodes.clone()), pods: vec![PodRun::New(next.pods.clone())] };
        };
        // Both lists are in the store's order (namespace, then name): walk them together.
        let mut runs: Vec<PodRun> = Vec::new();
        let mut i = 0;
        for pod in &next.pods {
            while previous.pods.get(i).is_some_and(|p| (&p.namespace, &p.name) < (&pod.namespace, &pod.name)) {
                i += 1;
            }
            if previous.pods.get(i) == Some(pod) {
                match runs.last_mut() {
                    Some(PodRun::Keep(start, len)) if *start + *len == i => *len += 1,
                    _ => runs.push(PodRun::Keep(i, 1)),
                }
                i += 1;
            } else {
                match runs.last_mut() {
                    Some(PodRun::New(pods)) => pods.push(pod.clone()),
                    _ => runs.push(PodRun::New(vec![pod.clone()])),
                }
            }
        }
        let nodes = (previous.nodes != next.nodes).then(|| next.nodes.clone());
        ScenePatch { t_ms: next.t_ms, revision: next.revision, nodes, pods: runs }
    }

    /// The scene this patch makes of `previous`.
    pub fn apply(self, previous: &ClusterSnapshot) -> ClusterSnapshot {
        let mut pods = Vec::new();
        for run in self.pods {
            match run {
                PodRun::Keep(start, len) => pods.extend(previous.pods.iter().skip(start).take(len).cloned()),
                PodRun::New(new) => pods.extend(new),
            }
        }
        ClusterSnapshot { t_ms: self.t_ms, revision: self.revision, nodes: self.nodes.unwrap_or_else(|| previous.nodes.clone()), pods }
    }
}

/// The simulation's side: the last frame of each history sent, to send only what changed.
#[derive(Default)]
pub struct Encoder {
    main: Option<Rc<Frame>>,
    fork: Option<Rc<Frame>>,
}

impl Encoder {
    /// The message for one of the host's actions.
    pub fn encode(&mut self, action: Action) -> Option<FromSim> {
        Some(match action {
            Action::Frame(frame) => FromSim::Frame(self.main(frame)),
            Action::ScenarioLoaded(name, frame) => {
                self.fork = None;
                FromSim::ScenarioLoaded(name, self.main(frame))
            }
            Action::ForkFrame(frame, label, diff) => {
                let delta = FrameDelta::between(self.fork.as_deref(), &frame);
                self.fork = Some(frame);
                FromSim::ForkFrame(delta, label, diff.map(|d| (*d).clone()))
            }
            Action::Forked(Some(fork)) => {
                let delta = FrameDelta::between(None, &fork.frame);
                self.fork = Some(fork.frame.clone());
                FromSim::Forked(Some((fork.at_ms, fork.label, delta, (*fork.diff).clone(), fork.to_fork)))
            }
            Action::Forked(None) => {
                self.fork = None;
                FromSim::Forked(None)
            }
            Action::Applied(result) => FromSim::Applied((*result).clone()),
            Action::Console(entry) => FromSim::Console(entry),
            Action::ForkTarget(to_fork) => FromSim::ForkTarget(to_fork),
            Action::Pause => FromSim::Pause,
            Action::Play => FromSim::Play,
            Action::SetView(view) => FromSim::SetView(view),
            // The host emits nothing else.
            _ => return None,
        })
    }

    fn main(&mut self, frame: Rc<Frame>) -> FrameDelta {
        let delta = FrameDelta::between(self.main.as_deref(), &frame);
        self.main = Some(frame);
        delta
    }
}

/// The UI's side: the last frame of each history received, to rebuild frames from deltas.
pub struct Decoder {
    main: Rc<Frame>,
    fork: Rc<Frame>,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder { main: Rc::new(Frame::empty()), fork: Rc::new(Frame::empty()) }
    }
}

/// What a message from the simulation means on the UI's side.
pub enum Received {
    /// Actions for the reducer.
    Action(Action),
    /// The simulation is ready.
    Ready,
    /// A query's answer.
    Answer(u64, Answer),
    /// A workstation request's result.
    External(u64, Box<Result<ExternalResult, String>>),
}

impl Decoder {
    /// The meaning of one message.
    pub fn decode(&mut self, message: FromSim) -> Received {
        Received::Action(match message {
            FromSim::Ready => return Received::Ready,
            FromSim::Answer(id, answer) => return Received::Answer(id, answer),
            FromSim::External(id, result) => return Received::External(id, Box::new(result)),
            FromSim::Frame(delta) => Action::Frame(self.main(delta)),
            FromSim::ScenarioLoaded(name, delta) => Action::ScenarioLoaded(name, self.main(delta)),
            FromSim::ForkFrame(delta, label, diff) => {
                self.fork = Rc::new(delta.apply(&self.fork));
                Action::ForkFrame(self.fork.clone(), label, diff.map(Rc::new))
            }
            FromSim::Forked(Some((at_ms, label, delta, diff, to_fork))) => {
                self.fork = Rc::new(delta.apply(&Frame::empty()));
                Action::Forked(Some(ForkState { at_ms, label, frame: self.fork.clone(), diff: Rc::new(diff), to_fork }))
            }
            FromSim::Forked(None) => Action::Forked(None),
            FromSim::Applied(result) => Action::Applied(Rc::new(result)),
            FromSim::Console(entry) => Action::Console(entry),
            FromSim::ForkTarget(to_fork) => Action::ForkTarget(to_fork),
            FromSim::Pause => Action::Pause,
            FromSim::Play => Action::Play,
            FromSim::SetView(view) => Action::SetView(view),
        })
    }

    fn main(&mut self, delta: FrameDelta) -> Rc<Frame> {
        self.main = Rc::new(delta.apply(&self.main));
        self.main.clone()
    }
}

#[cfg(test)]
mod scene_patch_tests {
    use super::*;
    use kubesim_sim::view::Lifecycle;

    fn pod(namespace: &str, name: &str, status: &str) -> PodView {
        PodView {
            namespace: namespace.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            node: None,
            phase: "Pending".into(),
            status: status.into(),
            ready: "0/1".into(),
            restarts: 0,
            owner: None,
            ip: None,
            lifecycle: Lifecycle::Pending,
            created_ms: 0,
            labels: Vec::new(),
        }
    }

    fn scene(pods: Vec<PodView>) -> ClusterSnapshot {
        ClusterSnapshot { t_ms: 1, revision: 2, nodes: Vec::new(), pods }
    }

    /// Pods added before, between and after the kept ones, removed, changed, in another
    /// namespace: the patch rebuilds exactly the next scene and sends only what changed.
    #[test]
    fn a_patch_rebuilds_the_next_scene_from_the_previous() {
        let previous = scene(vec![
            pod("a", "x", "Running"),
            pod("default", "b", "Running"),
            pod("default", "c", "Pending"),
            pod("default", "d", "Running"),
            pod("default", "e", "Running"),
            pod("kube-system", "dns", "Running"),
        ]);
        let next = scene(vec![
            pod("a", "w", "Pending"),
            pod("a", "x", "Running"),
            pod("default", "b", "Running"),
            pod("default", "c", "Running"),
            pod("default", "ca", "Pending"),
            pod("default", "e", "Running"),
            pod("kube-system", "dns", "Running"),
            pod("z", "last", "Pending"),
        ]);
        let patch = ScenePatch::between(Some(&previous), &next);
        let sent: usize = patch.pods.iter().map(|r| if let PodRun::New(p) = r { p.len() } else { 0 }).sum();
        assert_eq!(sent, 4, "w, c (changed), ca and last: {:?}", patch.pods);
        assert_eq!(patch.pods.iter().filter(|r| matches!(r, PodRun::Keep(..))).count(), 2, "x and b, e and dns: {:?}", patch.pods);
        assert_eq!(patch.nodes, None);
        assert_eq!(patch.clone().apply(&previous), next);
        // Through JSON, as it crosses.
        let crossed: ScenePatch = serde_json::from_str(&serde_json::to_string(&patch).expect("encode")).expect("decode");
        assert_eq!(crossed.apply(&previous), next);
        // From nothing: everything, whatever the receiver had.
        assert_eq!(ScenePatch::between(None, &next).apply(&previous), next);
        assert_eq!(ScenePatch::between(Some(&next), &scene(Vec::new())).apply(&next), scene(Vec::new()));
    }
}
