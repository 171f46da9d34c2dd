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
//! The messages are plain data, so the simulation answers them from a Web Worker
//! ([`crate::worker`], the messages as bytes by [`crate::wire`]) as well as from this thread
//! (the `local` feature: tests and server-side rendering): [`Host`] is the simulation's side,
//! one function per kind of message, and [`Port`] reaches it through a transport.

use crate::components::network::ExternalResult;
use crate::driver::Driver;
use crate::engine::{Engine, Input, Millis, PodPath, TimedInput};
use crate::state::{Action, ConsoleEntry, ForkState};
use crate::wire::ToSim;
use kubesim_sim::diff::WorldDiff;
use kubesim_sim::view::{self, ContainerRuntimeView, ObjectKey, ObjectVersion, PodDetail, VolumeFiles};
use kubesim_sim::why::WhyAnswer;
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// What the UI asks the simulation to do.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
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
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForkCommand {
    /// Fork the history at now (replacing any fork).
    Open,
    /// Drop the fork.
    Close,
    /// The editor and console act on the fork (true) or the original.
    Target(bool),
}

/// What the UI asks about the world now (the original's, not the fork's).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
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
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
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
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
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
    /// Wall ms the simulation may run per tick ([`TICK_BUDGET_MS`] on the page's thread).
    tick_budget_ms: f64,
}

/// Wall ms the simulation may run per animation frame on the page's thread (the rest of the
/// 16.7 ms frame is the views'): the local port's and the page-thread fallback's
/// ([`crate::worker::sim_channel`]).
pub const TICK_BUDGET_MS: f64 = 9.0;

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
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub struct Start {
    /// The scenario's URL name (the first gallery scenario when it is unknown).
    pub scenario: String,
    /// A share link's inputs, replayed on top of the scenario's.
    pub inputs: Vec<TimedInput>,
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
    /// The start the options describe.
    pub fn from_options(options: &crate::options::Options) -> Start {
        Start {
            scenario: options.scenario.clone(),
            inputs: options.inputs.clone(),
            seed: options.seed,
            scheduler_annotations: options.scheduler_annotations,
            t_ms: options.t_ms,
            fork: options.fork.clone(),
        }
    }
}

impl Host {
    /// The simulation of `start`, built and run to its moment.
    pub fn new(start: Start) -> Host {
        let Start { scenario, inputs, seed, scheduler_annotations, t_ms, fork } = start;
        let mut scenario = crate::scenarios::by_name(&scenario)
            .unwrap_or_else(|| crate::scenarios::by_name(crate::scenarios::DEFAULT_SCENARIO).expect("the default scenario exists"));
        // A share link's inputs replay on top of the scenario's, in time order (a stable sort:
        // at one instant the scenario's come first, as they did when recorded).
        scenario.inputs.extend(inputs);
        kubesim_api::sort::sort_by_key(&mut scenario.inputs, |i| i.t_ms);
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
        Host { driver, fork, last_frame: None, tick_budget_ms: TICK_BUDGET_MS }
    }

    /// A host over a driver (tests), without a fork.
    pub fn from_driver(driver: Driver) -> Host {
        Host { driver, fork: None, last_frame: None, tick_budget_ms: TICK_BUDGET_MS }
    }

    /// Lets the simulation run `ms` of wall time per tick (a Web Worker takes no frames from the
    /// page, so it may run longer between frames).
    pub fn set_tick_budget(&mut self, ms: f64) {
        self.tick_budget_ms = ms;
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
        let frame = self.driver.tick(wall_ms, playing, speed, self.tick_budget_ms, clock);
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

/// What came back for one asking ([`Query`] or workstation request).
enum Reply {
    Answer(Answer),
    External(Box<Result<ExternalResult, String>>),
}

/// Where the simulation runs, as the port sees it.
pub(crate) trait Transport {
    /// Hands a message to the simulation; what comes of it reaches `port` (now, or later).
    fn post(&self, message: ToSim, port: &Port);
    /// Whether the simulation runs on this thread (queries are answered while rendering).
    fn is_local(&self) -> bool;
    /// The answer now, when the simulation runs on this thread.
    fn answer_now(&self, query: &Query) -> Option<Answer>;
    /// The simulation runs beside the page (a worker): it may get its next tick as soon as it
    /// answers the last. One on the page's thread answers synchronously and must wait for the
    /// next animation frame, or the page would never get a turn.
    fn paces_by_answers(&self) -> bool {
        false
    }
    /// Stops the simulation (the app is unmounted).
    fn close(&self) {}
}

/// The simulation on this thread: messages are handled as they are sent.
#[cfg(feature = "local")]
struct Local(RefCell<Host>);

#[cfg(feature = "local")]
impl Transport for Local {
    fn post(&self, message: ToSim, port: &Port) {
        let mut actions = Vec::new();
        let mut reply = None;
        {
            let mut host = self.0.borrow_mut();
            match message {
                ToSim::Start(_) => {}
                ToSim::Command { wall_ms, command } => host.handle(command, wall_ms, &wall_now, &mut |a| actions.push(a)),
                ToSim::Query { id, query } => reply = Some((id, Reply::Answer(host.answer(&query)))),
                ToSim::External { id, wall_ms, url, host: header } => {
                    let result = host.send_external(&url, &header, wall_ms, &mut |a| actions.push(a));
                    reply = Some((id, Reply::External(Box::new(result))));
                }
            }
        }
        // Delivered with the host released: a view rendering now may ask it again.
        port.received(actions, reply.into_iter().collect(), true);
    }

    fn is_local(&self) -> bool {
        true
    }

    fn answer_now(&self, query: &Query) -> Option<Answer> {
        Some(self.0.borrow().answer(query))
    }
}

/// What to do with a reply when it comes.
type OnReply = Box<dyn FnOnce(Reply)>;

struct Shared {
    transport: RefCell<Option<Rc<dyn Transport>>>,
    dispatch: RefCell<Option<Callback<Action>>>,
    pending: RefCell<std::collections::BTreeMap<u64, OnReply>>,
    next_id: std::cell::Cell<u64>,
    /// Messages sent and not yet answered (a remote simulation answers each with one batch).
    in_flight: std::cell::Cell<u32>,
    definitions: std::cell::Cell<bool>,
    /// A tick is among the messages in flight.
    tick_in_flight: std::cell::Cell<bool>,
    /// The last tick's (playing, speed), and whether the simulation lagged behind it.
    pace: std::cell::Cell<(bool, f64, bool)>,
    /// Before the first frame of a remote simulation: the frame to show.
    initial: RefCell<Option<(Rc<crate::frame::Frame>, Option<ForkState>)>>,
}

/// The UI's handle on the simulation (identity comparison: one per app).
#[derive(Clone)]
pub struct Port(Rc<Shared>);

impl PartialEq for Port {
    fn eq(&self, other: &Port) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Port {
    fn new(transport: Option<Rc<dyn Transport>>, initial: Option<(Rc<crate::frame::Frame>, Option<ForkState>)>) -> Port {
        Port(Rc::new(Shared {
            transport: RefCell::new(transport),
            dispatch: RefCell::default(),
            pending: RefCell::default(),
            next_id: std::cell::Cell::new(1),
            in_flight: std::cell::Cell::new(0),
            definitions: std::cell::Cell::new(false),
            tick_in_flight: std::cell::Cell::new(false),
            pace: std::cell::Cell::new((false, 1.0, false)),
            initial: RefCell::new(initial),
        }))
    }

    /// A port to a simulation on this thread.
    #[cfg(feature = "local")]
    pub fn local(host: Host) -> Port {
        let initial = (host.frame(), host.fork_state());
        Port::new(Some(Rc::new(Local(RefCell::new(host)))), Some(initial))
    }

    /// A port to a simulation of `start` on this thread.
    #[cfg(feature = "local")]
    pub fn local_start(start: Start) -> Port {
        Port::local(Host::new(start))
    }

    /// A port not (yet) connected to a simulation: it answers nothing.
    pub fn unconnected() -> Port {
        Port::new(None, None)
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn set_transport(&self, transport: Rc<dyn Transport>) {
        *self.0.transport.borrow_mut() = Some(transport);
    }

    /// Builds the world elsewhere (the first message to a remote simulation).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn start(&self, start: Start) {
        self.post(ToSim::Start(start));
    }

    /// Where what comes back goes (the app's reducer).
    pub fn connect(&self, dispatch: Callback<Action>) {
        *self.0.dispatch.borrow_mut() = Some(dispatch);
    }

    /// The frame to start from: the simulation's on this thread; an empty one (the first frame
    /// follows) when it runs elsewhere.
    pub fn frame(&self) -> Rc<crate::frame::Frame> {
        self.0.initial.borrow().as_ref().map(|(f, _)| f.clone()).unwrap_or_else(|| Rc::new(crate::frame::Frame::empty()))
    }

    /// The fork as the views show it at the start (a shared link's fork).
    pub fn fork_state(&self) -> Option<ForkState> {
        self.0.initial.borrow().as_ref().and_then(|(_, f)| f.clone())
    }

    /// Stops the simulation (a worker is terminated); the port answers nothing afterwards.
    pub fn close(&self) {
        if let Some(transport) = self.0.transport.borrow_mut().take() {
            transport.close();
        }
    }

    /// Whether the simulation runs on this thread.
    pub fn is_local(&self) -> bool {
        self.transport().is_some_and(|t| t.is_local())
    }

    fn transport(&self) -> Option<Rc<dyn Transport>> {
        self.0.transport.borrow().clone()
    }

    fn post(&self, message: ToSim) {
        if let Some(transport) = self.transport() {
            self.0.in_flight.set(self.0.in_flight.get() + 1);
            transport.post(message, self);
        }
    }

    /// Sends a command; what comes of it arrives as actions.
    pub fn send(&self, command: Command) {
        // The explain schemas are provided once.
        if let Command::ProvideDefinitions(_) = &command {
            self.0.definitions.set(true);
        }
        self.post(ToSim::Command { wall_ms: wall_now(), command });
    }

    /// One animation frame (skipped while the simulation elsewhere still works on the last:
    /// the next frame asks again, with the time that has passed).
    ///
    /// A simulation in a worker that runs flat out (max speed, or behind the requested speed)
    /// gets its next tick as soon as it answers the last, not at the next animation frame: it
    /// never waits for the page.
    pub fn tick(&self, wall_ms: f64, playing: bool, speed: f64) {
        let (_, _, lagging) = self.0.pace.get();
        self.0.pace.set((playing, speed, lagging));
        if self.0.in_flight.get() == 0 {
            self.0.tick_in_flight.set(self.transport().is_some_and(|t| t.paces_by_answers()));
            self.post(ToSim::Command { wall_ms, command: Command::Tick { wall_ms, playing, speed } });
        }
    }

    /// Whether `kubectl explain` has its schemas (else the page fetches them first).
    pub fn has_definitions(&self) -> bool {
        self.0.definitions.get() || (self.is_local() && kubesim_api::openapi::available())
    }

    /// Sends a request from the workstation; `done` gets what came back (or why it was not
    /// sent) after the console line and frame arrived.
    pub fn send_external(&self, url: &str, host: &str, done: impl FnOnce(Result<Rc<ExternalResult>, String>) + 'static) {
        let id = self.ask(move |reply| {
            if let Reply::External(result) = reply {
                done((*result).map(Rc::new));
            }
        });
        self.post(ToSim::External { id, wall_ms: wall_now(), url: url.to_string(), host: host.to_string() });
    }

    /// Asks a query; `done` gets the answer (now, when the simulation runs on this thread).
    pub fn query(&self, query: Query, done: impl FnOnce(Answer) + 'static) {
        let id = self.ask(move |reply| {
            if let Reply::Answer(answer) = reply {
                done(answer);
            }
        });
        self.post(ToSim::Query { id, query });
    }

    /// Answers a query now when the simulation runs on this thread (views use [`use_query`]).
    pub fn answer_now(&self, query: &Query) -> Option<Answer> {
        self.transport()?.answer_now(query)
    }

    fn ask(&self, done: impl FnOnce(Reply) + 'static) -> u64 {
        let id = self.0.next_id.get();
        self.0.next_id.set(id + 1);
        self.0.pending.borrow_mut().insert(id, Box::new(done));
        id
    }

    /// What came back for one message: actions for the reducer, answers for their askers.
    /// `answers_a_message`: the batch answers a message sent (every batch but a remote
    /// simulation's first, unasked `Ready`, and notices the UI's end raises itself).
    fn received(&self, actions: Vec<Action>, replies: Vec<(u64, Reply)>, answers_a_message: bool) {
        if answers_a_message {
            self.0.in_flight.set(self.0.in_flight.get().saturating_sub(1));
        }
        let (playing, speed, mut lagging) = self.0.pace.get();
        if let Some(frame) = actions.iter().rev().find_map(|a| if let Action::Frame(f) = a { Some(f) } else { None }) {
            lagging = frame.lagging;
            self.0.pace.set((playing, speed, lagging));
        }
        let dispatch = self.0.dispatch.borrow().clone();
        if let Some(dispatch) = dispatch {
            for action in actions {
                dispatch.emit(action);
            }
        }
        for (id, reply) in replies {
            let done = self.0.pending.borrow_mut().remove(&id);
            if let Some(done) = done {
                done(reply);
            }
        }
        // A tick answered: a simulation running flat out gets the next one now.
        if self.0.in_flight.get() == 0 && self.0.tick_in_flight.replace(false) && playing && (speed <= 0.0 || lagging) {
            self.tick(wall_now(), playing, speed);
        }
    }

    /// A batch of messages from a simulation elsewhere (one batch per message sent, except
    /// the first, unasked `Ready`).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn receive(&self, batch: Vec<crate::wire::Received>, answers_a_message: bool) {
        use crate::wire::Received;
        let mut actions = Vec::new();
        let mut replies = Vec::new();
        for received in batch {
            match received {
                Received::Action(action) => actions.push(action),
                Received::Answer(id, answer) => replies.push((id, Reply::Answer(answer))),
                Received::External(id, result) => replies.push((id, Reply::External(result))),
                Received::Ready => {}
            }
        }
        self.received(actions, replies, answers_a_message);
    }
}

/// A query's answer, asked again when `stamp` changes (a revision, a virtual time: whatever
/// the answer follows) or the question does; [`Answer::Nothing`] when nothing is asked (hooks
/// run on every render, questions only when a view needs them). On this thread the answer is
/// computed while rendering; from a simulation elsewhere it arrives later, and until then the
/// previous answer stands.
#[hook]
pub fn use_query<S: PartialEq + Clone + 'static>(port: &Port, query: Option<Query>, stamp: S) -> Rc<Answer> {
    let local = port.is_local();
    let now = {
        let port = port.clone();
        use_memo((query.clone(), stamp.clone()), move |(query, _)| match query {
            Some(query) if local => port.answer_now(query).unwrap_or(Answer::Nothing),
            _ => Answer::Nothing,
        })
    };
    // The latest answer with the question it answers.
    let later = use_state(|| (None::<Query>, Rc::new(Answer::Nothing)));
    let latest = use_mut_ref(|| 0u64);
    {
        let (port, later, latest) = (port.clone(), later.clone(), latest.clone());
        use_effect_with((query.clone(), stamp), move |(query, _)| {
            if !local {
                // Only the latest asking counts (answers come in order anyway).
                let asked = *latest.borrow() + 1;
                *latest.borrow_mut() = asked;
                if let Some(query) = query.clone() {
                    port.query(query.clone(), move |answer| {
                        if *latest.borrow() == asked {
                            later.set((Some(query), Rc::new(answer)));
                        }
                    });
                }
            }
        });
    }
    if local {
        now
    } else {
        // An answer to another question (the previous selection's) is no answer to this one.
        match &*later {
            (Some(answered), answer) if Some(answered) == query.as_ref() => answer.clone(),
            _ => Rc::new(Answer::Nothing),
        }
    }
}

/// Wall clock in ms (performance.now), for animation and frame budgets only.
/// The page's or, in the simulation's worker, the worker's clock (each global has its own
/// `performance`).
pub fn wall_now() -> f64 {
    use wasm_bindgen::JsCast;
    js_sys::Reflect::get(&js_sys::global(), &wasm_bindgen::JsValue::from_str("performance"))
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
        .map(|p| p.now())
        .unwrap_or(0.0)
}
