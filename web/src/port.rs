//! The port: the UI's one door to the simulation.
//!
//! The views never touch the [`World`](kubesim_sim::World), the [`Engine`] or a [`Driver`]. They
//! hold a [`Port`] (in [`Controls`](crate::components::app::Controls)) and
//! - send it [`Command`]s (apply YAML, run a console line, travel in time, load a scenario, fork,
//!   send a request from the workstation, one animation frame's tick); what comes back arrives
//!   as the reducer's [`Action`]s (`Frame`, `Applied`, `Console`, `Forked`, `ForkFrame`, ...)
//!   through the dispatcher the app connected, never as a return value;
//! - ask it [`Query`]s for what a frame does not carry (an object's YAML and versions, a pod's
//!   scheduling detail, its "why" answers and containers, a volume's files, a pod's lifecycle
//!   path, what a share link needs), through [`use_query`], memoized on a stamp the caller names
//!   (the revision, the virtual time).
//!
//! The messages are plain data, so the simulation can answer them from another thread (a Web
//! Worker) as well as from this one: [`Host`] is the simulation's side, one function per kind of
//! message, and [`Port`] today hands each message to a `Host` on the same thread.

use crate::components::network::ExternalResult;
use crate::driver::Driver;
use crate::engine::{Engine, Input, Millis, PodPath, TimedInput};
use crate::scenarios::Scenario;
use crate::state::{Action, ConsoleEntry, ForkState};
use kubesim_sim::diff::WorldDiff;
use kubesim_sim::view::{self, ContainerRuntimeView, ObjectKey, ObjectVersion, PodDetail, VolumeFiles};
use kubesim_sim::why::WhyAnswer;
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// What the UI asks the simulation to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// One animation frame: advance with the wall clock (`wall_ms`) at `speed` (0 = as fast as
    /// the budget allows) when `playing`, and hand out the frame when it changed.
    Tick {
        /// performance.now() of this animation frame.
        wall_ms: f64,
        /// Virtual time follows wall time.
        playing: bool,
        /// Speed factor (0 = max).
        speed: f64,
    },
    /// Apply the editor's YAML now (to the fork when it is the target).
    Apply(String),
    /// Run a console line now (`get pods` runs as `kubectl get pods`; faults, `netpol`, `hops`,
    /// the workstation's tools run as typed), on the fork when it is the target.
    Run(String),
    /// Travel to a virtual time.
    Seek(Millis),
    /// Step to the next (+1) or previous (-1) API write, and pause.
    Step(i32),
    /// Load a gallery scenario (drops any fork).
    Load(String),
    /// Open, close or target the fork.
    Fork(ForkCommand),
    /// The API schemas `kubectl explain` reads (the page fetches them on first use).
    ProvideDefinitions(String),
}

/// What the fork controls ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForkCommand {
    /// Fork the history at now (replacing any fork).
    Open,
    /// Drop the fork.
    Close,
    /// The editor and console act on the fork (true) or the original.
    Target(bool),
}

/// What the UI asks about the world now (the original's, not the fork's).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Query {
    /// Every object's key.
    ObjectKeys,
    /// Every version of an object the trace recorded.
    ObjectVersions(ObjectKey),
    /// An object as JSON now (None: it does not exist).
    ObjectJson(ObjectKey),
    /// A pod's summary, containers, conditions and scheduling.
    PodDetail(String, String),
    /// Why the pod is as it is (namespace, name).
    Why(String, String),
    /// The pod's containers as the runtime holds them (namespace, name).
    PodContainers(String, String),
    /// A pod's path through the lifecycle graph, by UID.
    PodPath(String),
    /// A PersistentVolume's files wherever its bytes are.
    VolumeFiles(String),
    /// What a share link of this moment needs.
    Moment,
}

/// A [`Query`]'s answer, the variant of its question.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// [`Query::ObjectKeys`].
    ObjectKeys(Vec<ObjectKey>),
    /// [`Query::ObjectVersions`].
    ObjectVersions(Vec<ObjectVersion>),
    /// [`Query::ObjectJson`].
    ObjectJson(Option<serde_json::Value>),
    /// [`Query::PodDetail`].
    PodDetail(Option<Box<PodDetail>>),
    /// [`Query::Why`].
    Why(Vec<WhyAnswer>),
    /// [`Query::PodContainers`].
    PodContainers(Vec<ContainerRuntimeView>),
    /// [`Query::PodPath`].
    PodPath(Option<PodPath>),
    /// [`Query::VolumeFiles`].
    VolumeFiles(Option<VolumeFiles>),
    /// [`Query::Moment`].
    Moment(Moment),
    /// Nothing was asked ([`use_query`] with no question).
    Nothing,
}

/// What a share link of the current moment carries ([`crate::share`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Moment {
    /// The seed.
    pub seed: u64,
    /// Virtual now.
    pub t_ms: Millis,
    /// The inputs entered in the UI, with their times.
    pub inputs: Vec<TimedInput>,
    /// The scheduler writes kube-scheduler-simulator's annotations.
    pub scheduler_annotations: bool,
    /// The fork: when it branched and every user input of its history.
    pub fork: Option<(Millis, Vec<TimedInput>)>,
}

/// How often (wall ms) the fork is compared with the original while playing.
const DIFF_EVERY_MS: f64 = 500.0;

/// The simulation's side of the port: the driver, the fork, and one function per message.
pub struct Host {
    driver: Driver,
    fork: Option<Fork>,
    /// The last frame handed out, to send only changed ones.
    last_frame: Option<Rc<crate::frame::Frame>>,
}

/// The fork being compared ("what if?"): its own driver following the original's clock.
struct Fork {
    driver: Driver,
    /// The virtual time it branched off.
    at_ms: Millis,
    /// How many inputs its history held when it branched (the rest were done to the fork).
    base_inputs: usize,
    /// The editor and the console act on the fork.
    to_fork: bool,
    /// Wall time of the last comparison with the original.
    last_diff_wall: f64,
}

impl Fork {
    /// What was done to the fork since it branched: its inputs' labels.
    fn label(&self) -> String {
        self.driver.engine().inputs().skip(self.base_inputs).map(|(i, _)| i.label()).collect::<Vec<_>>().join(" · ")
    }

    /// Every user input of its history (a shared link recreates the fork from them).
    fn user_inputs(&self) -> Vec<TimedInput> {
        self.driver.engine().inputs().filter(|(i, _)| i.user).map(|(i, _)| i.clone()).collect()
    }

    fn state(&self, main: &Driver) -> ForkState {
        ForkState { at_ms: self.at_ms, label: self.label(), frame: self.driver.frame(), diff: compare(main, &self.driver), to_fork: self.to_fork }
    }
}

/// Compares the fork with the original now.
fn compare(main: &Driver, fork: &Driver) -> Rc<WorldDiff> {
    Rc::new(kubesim_sim::diff::diff_worlds(main.engine().world(), fork.engine().world()))
}

/// Where the app starts: a scenario (with a share link's inputs replayed on top), a seed, a
/// moment and a shared fork.
#[derive(Clone, Debug, PartialEq)]
pub struct Start {
    /// The scenario, its inputs already merged with the link's.
    pub scenario: Scenario,
    /// The seed.
    pub seed: u64,
    /// The scheduler writes kube-scheduler-simulator's annotations.
    pub scheduler_annotations: bool,
    /// Travel here first.
    pub t_ms: Option<Millis>,
    /// A shared fork: when it branched and its inputs.
    pub fork: Option<(Millis, Vec<TimedInput>)>,
}

impl Start {
    /// The start the options describe (the first gallery scenario when theirs is unknown).
    pub fn from_options(options: &crate::options::Options) -> Start {
        let mut scenario = crate::scenarios::by_name(&options.scenario).unwrap_or_else(|| crate::scenarios::all().remove(0));
        // A share link's inputs replay on top of the scenario's, in time order (a stable sort:
        // at one instant the scenario's come first, as they did when recorded).
        scenario.inputs.extend(options.inputs.iter().cloned());
        kubesim_api::sort::sort_by_key(&mut scenario.inputs, |i| i.t_ms);
        Start { scenario, seed: options.seed, scheduler_annotations: options.scheduler_annotations, t_ms: options.t_ms, fork: options.fork.clone() }
    }
}

impl Host {
    /// The simulation of `start`, built and run to its moment.
    pub fn new(start: Start) -> Host {
        let Start { scenario, seed, scheduler_annotations, t_ms, fork } = start;
        let mut driver = Driver::with_scheduler_annotations(scenario, seed, scheduler_annotations);
        if let Some(t) = t_ms {
            driver.engine_mut().seek(t);
            driver.refresh(0.0);
        }
        // A shared fork: its own history, replayed from the scenario and its inputs.
        let fork = fork.map(|(at_ms, inputs)| {
            let mut scenario = driver.scenario().clone();
            let base = scenario.inputs.len() + inputs.iter().filter(|i| i.t_ms < at_ms).count();
            scenario.inputs.extend(inputs);
            kubesim_api::sort::sort_by_key(&mut scenario.inputs, |i| i.t_ms);
            let engine = Engine::with_scheduler_annotations(seed, scenario.inputs.clone(), scheduler_annotations);
            let mut fork_driver = Driver::from_engine(engine, scenario);
            fork_driver.engine_mut().seek(driver.engine().now());
            fork_driver.refresh(0.0);
            Fork { driver: fork_driver, at_ms, base_inputs: base, to_fork: true, last_diff_wall: f64::NEG_INFINITY }
        });
        Host { driver, fork, last_frame: None }
    }

    /// A host over a driver (tests), without a fork.
    pub fn from_driver(driver: Driver) -> Host {
        Host { driver, fork: None, last_frame: None }
    }

    /// The latest frame.
    pub fn frame(&self) -> Rc<crate::frame::Frame> {
        self.driver.frame()
    }

    /// The fork as the views show it, if any.
    pub fn fork_state(&self) -> Option<ForkState> {
        self.fork.as_ref().map(|f| f.state(&self.driver))
    }

    /// Handles a command at wall time `wall_now`, emitting what came of it. `clock` reads the
    /// wall clock for the simulation's per-frame budget.
    pub fn handle(&mut self, command: Command, wall_now: f64, clock: &dyn Fn() -> f64, emit: &mut dyn FnMut(Action)) {
        match command {
            Command::Tick { wall_ms, playing, speed } => self.tick(wall_ms, playing, speed, clock, emit),
            Command::Apply(text) => {
                let input = Input::Apply { name: "editor.yaml".into(), text };
                let result = self.apply(input, wall_now, emit);
                emit(Action::Applied(Rc::new(result)));
            }
            Command::Run(line) => {
                let line = line.trim().to_string();
                if line.is_empty() {
                    return;
                }
                // The console is kubectl's (`get pods` runs `kubectl get pods`); the other
                // command lines the world knows run as typed (faults, `netpol`, `hops`,
                // `minikube`, and the workstation's curl, wget, nslookup, ...).
                let first = line.split_whitespace().next().unwrap_or("");
                let ours =
                    matches!(first, "kubectl" | "fault" | "netpol" | "hops" | "minikube" | "reseed") || kubesim_sim::workstation::is_workstation_command(&line);
                let full = if ours { line } else { format!("kubectl {line}") };
                let t_ms = self.driver.engine().now();
                let on_fork = self.fork.as_ref().is_some_and(|f| f.to_fork);
                let result = self.apply(Input::Command(full.clone()), wall_now, emit);
                let shown = if on_fork { format!("[fork] {full}") } else { full };
                let stdout = result.lines.join("\n");
                let stderr = result.errors.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("\n");
                emit(Action::Console(ConsoleEntry { t_ms, line: shown, stdout, stderr }));
            }
            Command::Seek(t) => {
                self.driver.engine_mut().seek(t);
                emit(Action::Frame(self.refresh(wall_now)));
            }
            Command::Step(direction) => {
                let engine = self.driver.engine_mut();
                if direction >= 0 {
                    let limit = engine.now() + 10 * 60_000;
                    engine.step_to_next_write(limit);
                } else {
                    let now = engine.now();
                    let previous = engine.activity().iter().rev().find(|t| **t < now).copied().unwrap_or(0);
                    engine.seek(previous);
                }
                let frame = self.refresh(wall_now);
                emit(Action::Pause);
                emit(Action::Frame(frame));
            }
            Command::Load(name) => {
                let Some(scenario) = crate::scenarios::by_name(&name) else { return };
                let view = crate::state::View::parse(scenario.view);
                self.fork = None;
                let frame = self.driver.load(scenario, wall_now);
                self.last_frame = Some(frame.clone());
                emit(Action::ScenarioLoaded(name, frame));
                if let Some(view) = view {
                    emit(Action::SetView(view));
                }
                emit(Action::Play);
            }
            Command::Fork(ForkCommand::Open) => {
                let driver = self.driver.fork(wall_now);
                let at_ms = self.driver.engine().now();
                let base_inputs = driver.engine().inputs().count();
                let fork = Fork { driver, at_ms, base_inputs, to_fork: true, last_diff_wall: wall_now };
                let state = fork.state(&self.driver);
                self.fork = Some(fork);
                emit(Action::Pause);
                emit(Action::Forked(Some(state)));
            }
            Command::Fork(ForkCommand::Close) => {
                self.fork = None;
                emit(Action::Forked(None));
            }
            Command::Fork(ForkCommand::Target(to_fork)) => {
                if let Some(fork) = self.fork.as_mut() {
                    fork.to_fork = to_fork;
                    emit(Action::ForkTarget(to_fork));
                }
            }
            Command::ProvideDefinitions(text) => kubesim_api::openapi::provide_definitions(text),
        }
    }

    /// Applies an input now to the fork when it is the target, else to the original, and
    /// emits the new frame.
    fn apply(&mut self, input: Input, wall_now: f64, emit: &mut dyn FnMut(Action)) -> crate::engine::InputResult {
        if let Some(fork) = self.fork.as_mut().filter(|f| f.to_fork) {
            let result = fork.driver.engine_mut().apply_now(input);
            let frame = fork.driver.refresh(wall_now);
            emit(Action::ForkFrame(frame, fork.label(), None));
            return result;
        }
        let result = self.driver.engine_mut().apply_now(input);
        emit(Action::Frame(self.refresh(wall_now)));
        result
    }

    fn refresh(&mut self, wall_now: f64) -> Rc<crate::frame::Frame> {
        let frame = self.driver.refresh(wall_now);
        self.last_frame = Some(frame.clone());
        frame
    }

    fn tick(&mut self, wall_ms: f64, playing: bool, speed: f64, clock: &dyn Fn() -> f64, emit: &mut dyn FnMut(Action)) {
        let frame = self.driver.tick(wall_ms, playing, speed, 9.0, clock);
        if self.last_frame.as_ref().is_none_or(|l| !Rc::ptr_eq(l, &frame)) {
            self.last_frame = Some(frame.clone());
            emit(Action::Frame(frame.clone()));
        }
        // The fork follows the original's clock, with its own budget.
        if let Some(fork) = self.fork.as_mut() {
            let before = fork.driver.frame();
            let fork_frame = fork.driver.follow(frame.t_ms, wall_ms, playing, 6.0, clock);
            if !Rc::ptr_eq(&before, &fork_frame) {
                let due = !playing || wall_ms - fork.last_diff_wall >= DIFF_EVERY_MS;
                let diff = due.then(|| compare(&self.driver, &fork.driver));
                if due {
                    fork.last_diff_wall = wall_ms;
                }
                emit(Action::ForkFrame(fork_frame, fork.label(), diff));
            }
        }
    }

    /// Sends a request to `url` (with an optional `Host` header) from the workstation now, as
    /// the console would run its curl (a recorded input: time travel replays it), and emits
    /// the console line and the new frame: what came back and the request's packet.
    pub fn send_external(&mut self, url: &str, host: &str, wall_now: f64, emit: &mut dyn FnMut(Action)) -> Result<ExternalResult, String> {
        let result = send_external(self.driver.engine_mut(), url, host)?;
        emit(Action::Console(ConsoleEntry { t_ms: result.t_ms, line: result.line.clone(), stdout: result.output.clone(), stderr: String::new() }));
        emit(Action::Frame(self.refresh(wall_now)));
        Ok(result)
    }

    /// Answers a query from the original's world now.
    pub fn answer(&self, query: &Query) -> Answer {
        let engine = self.driver.engine();
        let world = engine.world();
        match query {
            Query::ObjectKeys => Answer::ObjectKeys(view::object_keys(world)),
            Query::ObjectVersions(key) => Answer::ObjectVersions(view::object_versions(world, key)),
            Query::ObjectJson(key) => Answer::ObjectJson(view::object_json(world, key)),
            Query::PodDetail(namespace, name) => Answer::PodDetail(view::pod_detail(world, namespace, name).map(Box::new)),
            Query::Why(namespace, name) => Answer::Why(kubesim_sim::why::why(world, namespace, name)),
            Query::PodContainers(namespace, name) => Answer::PodContainers(view::pod_containers(world, namespace, name)),
            Query::PodPath(uid) => Answer::PodPath(engine.pod_path(uid).cloned()),
            Query::VolumeFiles(volume) => Answer::VolumeFiles(view::volume_files(world, volume)),
            Query::Moment => Answer::Moment(Moment {
                seed: engine.seed(),
                t_ms: engine.now(),
                inputs: engine.inputs().filter(|(i, _)| i.user).map(|(i, _)| i.clone()).collect(),
                scheduler_annotations: engine.scheduler_annotations(),
                fork: self.fork.as_ref().map(|f| (f.at_ms, f.user_inputs())),
            }),
        }
    }
}

/// Sends a request from the workstation now, as the console would run its curl (a recorded
/// input: time travel replays it): what came back and the request's packet.
fn send_external(engine: &mut Engine, url: &str, host: &str) -> Result<ExternalResult, String> {
    let line = crate::components::network::external_request_line(url, host)?;
    let before = engine.world().runtime().packets().1;
    let t_ms = engine.now();
    let result = engine.apply_now(Input::Command(line.clone()));
    let world = engine.world();
    let sent = view::packets_since(world, before);
    let first = world.runtime().packets().1 - sent.len() as u64;
    // A name in the URL is looked up first: the request is the last TCP packet.
    let packet = sent.into_iter().enumerate().rfind(|(_, p)| p.protocol == "tcp").map(|(i, p)| (first + i as u64, p));
    let mut output = result.lines.join("\n");
    for error in &result.errors {
        if !output.is_empty() {
            output.push('\n');
        }
        output.push_str(&error.message);
    }
    Ok(ExternalResult { t_ms, line, output, packet })
}

/// The UI's handle on the simulation (identity comparison: one per app).
#[derive(Clone)]
pub struct Port {
    host: Rc<RefCell<Host>>,
    dispatch: Rc<RefCell<Option<Callback<Action>>>>,
    definitions: Rc<std::cell::Cell<bool>>,
}

impl PartialEq for Port {
    fn eq(&self, other: &Port) -> bool {
        Rc::ptr_eq(&self.host, &other.host)
    }
}

impl Port {
    /// A port to a simulation on this thread.
    pub fn local(host: Host) -> Port {
        Port { host: Rc::new(RefCell::new(host)), dispatch: Rc::default(), definitions: Rc::default() }
    }

    /// Where what comes back goes (the app's reducer).
    pub fn connect(&self, dispatch: Callback<Action>) {
        *self.dispatch.borrow_mut() = Some(dispatch);
    }

    /// The frame the simulation stands at (before the first tick: start-up).
    pub fn frame(&self) -> Rc<crate::frame::Frame> {
        self.host.borrow().frame()
    }

    /// The fork as the views show it (start-up: a shared link's fork).
    pub fn fork_state(&self) -> Option<ForkState> {
        self.host.borrow().fork_state()
    }

    /// Sends a command; what comes of it arrives as actions.
    pub fn send(&self, command: Command) {
        let mut actions = Vec::new();
        // The explain schemas are provided once.
        if let Command::ProvideDefinitions(_) = &command {
            self.definitions.set(true);
        }
        self.host.borrow_mut().handle(command, wall_now(), &wall_now, &mut |a| actions.push(a));
        self.deliver(actions);
    }

    /// Whether `kubectl explain` has its schemas (else the page fetches them first).
    pub fn has_definitions(&self) -> bool {
        self.definitions.get() || kubesim_api::openapi::available()
    }

    /// Sends a request from the workstation; `done` gets what came back (or why it was not
    /// sent) after the console line and frame arrived.
    pub fn send_external(&self, url: &str, host: &str, done: impl FnOnce(Result<Rc<ExternalResult>, String>)) {
        let mut actions = Vec::new();
        let result = self.host.borrow_mut().send_external(url, host, wall_now(), &mut |a| actions.push(a));
        self.deliver(actions);
        done(result.map(Rc::new));
    }

    /// Answers a query now (views use [`use_query`]).
    pub fn answer(&self, query: &Query) -> Answer {
        self.host.borrow().answer(query)
    }

    fn deliver(&self, actions: Vec<Action>) {
        let dispatch = self.dispatch.borrow().clone();
        if let Some(dispatch) = dispatch {
            for action in actions {
                dispatch.emit(action);
            }
        }
    }
}

/// A query's answer, asked again when `stamp` changes (a revision, a virtual time: whatever
/// the answer follows) or the question does; [`Answer::Nothing`] when nothing is asked (hooks
/// run on every render, questions only when a view needs them).
#[hook]
pub fn use_query<S: PartialEq + 'static>(port: &Port, query: Option<Query>, stamp: S) -> Rc<Answer> {
    let port = port.clone();
    use_memo((query, stamp), move |(query, _)| query.as_ref().map_or(Answer::Nothing, |q| port.answer(q)))
}

/// Wall clock in ms (performance.now), for animation and frame budgets only.
pub fn wall_now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map(|p| p.now()).unwrap_or(0.0)
}
