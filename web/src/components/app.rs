//! The root component: owns the driver, the reducer and the animation loop.

use crate::components::{
    cluster::ClusterView, flow::FlowView, gallery::Gallery, header::Header, lifecycle::LifecycleView, panel::SidePanel, pods::PodsView, timeline::Timeline,
};
use crate::driver::Driver;
use crate::engine::{Input, Millis};
use crate::options::Options;
use crate::state::{Action, AppState, ConsoleEntry, Selection, Theme, View};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Root props.
#[derive(Properties, PartialEq, Clone)]
pub struct AppProps {
    /// Start-up options.
    pub options: Options,
}

/// Shared access to the driver (identity comparison).
#[derive(Clone)]
pub struct Sim(pub Rc<RefCell<Driver>>);

impl PartialEq for Sim {
    fn eq(&self, other: &Sim) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The fork being compared ("what if?"): its own driver following the original's clock.
pub struct Fork {
    /// The fork's driver.
    pub driver: Driver,
    /// The virtual time it branched off.
    pub at_ms: Millis,
    /// How many inputs its history held when it branched (the rest were done to the fork).
    pub base_inputs: usize,
    /// The editor and the console act on the fork.
    pub to_fork: bool,
    /// Wall time of the last comparison with the original.
    last_diff_wall: f64,
}

impl Fork {
    /// What was done to the fork since it branched: its inputs' labels.
    pub fn label(&self) -> String {
        self.driver.engine().inputs().skip(self.base_inputs).map(|(i, _)| i.label()).collect::<Vec<_>>().join(" · ")
    }

    /// The inputs a shared link recreates the fork from: every user input of its history.
    pub fn user_inputs(&self) -> Vec<crate::engine::TimedInput> {
        self.driver.engine().inputs().filter(|(i, _)| i.user).map(|(i, _)| i.clone()).collect()
    }
}

/// Shared access to the fork, if any (identity comparison).
#[derive(Clone, Default)]
pub struct ForkSlot(pub Rc<RefCell<Option<Fork>>>);

impl PartialEq for ForkSlot {
    fn eq(&self, other: &ForkSlot) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
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

/// How often (wall ms) the fork is compared with the original while playing.
const DIFF_EVERY_MS: f64 = 500.0;

/// Compares the fork with the original now.
fn compare(main: &Driver, fork: &Driver) -> Rc<kubesim_sim::diff::WorldDiff> {
    Rc::new(kubesim_sim::diff::diff_worlds(main.engine().world(), fork.engine().world()))
}

/// Everything a view may do, as callbacks (the effects live here, not in the reducer).
#[derive(Clone, PartialEq)]
pub struct Controls {
    /// Dispatch a UI action.
    pub dispatch: Callback<Action>,
    /// Apply YAML now (from the editor).
    pub apply: Callback<String>,
    /// Run a command line now (`kubectl ...`, `fault ...`).
    pub command: Callback<String>,
    /// Travel to a virtual time.
    pub seek: Callback<Millis>,
    /// Step to the next (+1) or previous (-1) API write.
    pub step: Callback<i32>,
    /// Load a scenario by name.
    pub load: Callback<String>,
    /// Open, close or target the fork.
    pub fork: Callback<ForkCommand>,
    /// The driver, for read-only queries while rendering.
    pub sim: Sim,
    /// The fork, if any.
    pub forked: ForkSlot,
}

/// Wall clock in ms (performance.now), for animation and frame budgets only.
pub fn wall_now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map(|p| p.now()).unwrap_or(0.0)
}

fn request_frame(callback: &Closure<dyn FnMut(f64)>) {
    if let Some(window) = web_sys::window() {
        let _ = window.request_animation_frame(callback.as_ref().unchecked_ref());
    }
}

type FrameCallback = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;

/// Runs `tick` on every animation frame until the returned stopper is called.
fn animation_loop(mut tick: impl FnMut(f64) + 'static) -> impl FnOnce() {
    let alive = Rc::new(std::cell::Cell::new(true));
    let slot: FrameCallback = Rc::new(RefCell::new(None));
    let slot_inner = slot.clone();
    let alive_inner = alive.clone();
    *slot.borrow_mut() = Some(Closure::new(move |t: f64| {
        if !alive_inner.get() {
            return;
        }
        tick(t);
        if let Some(callback) = slot_inner.borrow().as_ref() {
            request_frame(callback);
        }
    }));
    if let Some(callback) = slot.borrow().as_ref() {
        request_frame(callback);
    }
    move || {
        alive.set(false);
    }
}

/// The app.
#[function_component(App)]
pub fn app(props: &AppProps) -> Html {
    let options = props.options.clone();
    let sim = {
        let options = options.clone();
        use_memo((), move |_| {
            let mut scenario = crate::scenarios::by_name(&options.scenario).unwrap_or_else(|| crate::scenarios::all().remove(0));
            // A share link's inputs replay on top of the scenario's, in time order (a stable
            // sort: at one instant the scenario's come first, as they did when recorded).
            scenario.inputs.extend(options.inputs.iter().cloned());
            kubesim_api::sort::sort_by_key(&mut scenario.inputs, |i| i.t_ms);
            let mut driver = Driver::with_scheduler_annotations(scenario, options.seed, options.scheduler_annotations);
            if let Some(t) = options.t_ms {
                driver.engine_mut().seek(t);
                driver.refresh(0.0);
            }
            // A shared fork: its own history, replayed from the scenario and its inputs.
            let fork = options.fork.as_ref().map(|(at_ms, inputs)| {
                let mut scenario = driver.scenario().clone();
                let base = scenario.inputs.len() + inputs.iter().filter(|i| i.t_ms < *at_ms).count();
                scenario.inputs.extend(inputs.iter().cloned());
                kubesim_api::sort::sort_by_key(&mut scenario.inputs, |i| i.t_ms);
                let engine = crate::engine::Engine::with_scheduler_annotations(options.seed, scenario.inputs.clone(), options.scheduler_annotations);
                let mut fork_driver = Driver::from_engine(engine, scenario);
                fork_driver.engine_mut().seek(driver.engine().now());
                fork_driver.refresh(0.0);
                Fork { driver: fork_driver, at_ms: *at_ms, base_inputs: base, to_fork: true, last_diff_wall: f64::NEG_INFINITY }
            });
            (Sim(Rc::new(RefCell::new(driver))), ForkSlot(Rc::new(RefCell::new(fork))))
        })
    };
    let forked = sim.1.clone();
    let sim = Rc::new(sim.0.clone());
    let state = {
        let frame = sim.0.borrow().frame();
        let options = options.clone();
        let fork = forked.0.borrow().as_ref().map(|f| crate::state::ForkState {
            at_ms: f.at_ms,
            label: f.label(),
            frame: f.driver.frame(),
            diff: compare(&sim.0.borrow(), &f.driver),
            to_fork: f.to_fork,
        });
        use_reducer(move || AppState { fork, ..AppState::new(&options, frame) })
    };
    let settings = use_mut_ref(|| (state.playing, state.speed));
    *settings.borrow_mut() = (state.playing, state.speed);

    let controls = {
        let dispatcher = state.dispatcher();
        let sim = (*sim).clone();
        let forked = forked.clone();
        use_memo((), move |_| {
            let d = dispatcher.clone();
            let dispatch = Callback::from(move |action: Action| d.dispatch(action));
            // The editor and console act on the fork when it is the target.
            let on_fork = {
                let (d, forked) = (dispatcher.clone(), forked.clone());
                move |act: &mut dyn FnMut(&mut Driver)| -> bool {
                    let mut slot = forked.0.borrow_mut();
                    let Some(fork) = slot.as_mut().filter(|f| f.to_fork) else { return false };
                    act(&mut fork.driver);
                    let frame = fork.driver.refresh(wall_now());
                    d.dispatch(Action::ForkFrame(frame, fork.label(), None));
                    true
                }
            };
            let apply = {
                let (d, sim, on_fork) = (dispatcher.clone(), sim.clone(), on_fork.clone());
                Callback::from(move |text: String| {
                    let input = Input::Apply { name: "editor.yaml".into(), text };
                    let mut result = None;
                    if !on_fork(&mut |fork| result = Some(fork.engine_mut().apply_now(input.clone()))) {
                        result = Some(sim.0.borrow_mut().engine_mut().apply_now(input.clone()));
                        let frame = sim.0.borrow_mut().refresh(wall_now());
                        d.dispatch(Action::Frame(frame));
                    }
                    d.dispatch(Action::Applied(Rc::new(result.unwrap_or_default())));
                })
            };
            let command = {
                let (d, sim, on_fork) = (dispatcher.clone(), sim.clone(), on_fork.clone());
                Callback::from(move |line: String| {
                    let line = line.trim().to_string();
                    if line.is_empty() {
                        return;
                    }
                    // The console is kubectl's (`get pods` runs `kubectl get pods`); the other
                    // command lines the world knows run as typed (faults, `netpol`, `hops`,
                    // `minikube`, and the workstation's curl, wget, nslookup, ...).
                    let first = line.split_whitespace().next().unwrap_or("");
                    let ours = matches!(first, "kubectl" | "fault" | "netpol" | "hops" | "minikube" | "reseed")
                        || kubesim_sim::workstation::is_workstation_command(&line);
                    let full = if ours { line.clone() } else { format!("kubectl {line}") };
                    let t_ms = sim.0.borrow().engine().now();
                    let input = Input::Command(full.clone());
                    let mut result = None;
                    let shown = if on_fork(&mut |fork| result = Some(fork.engine_mut().apply_now(input.clone()))) {
                        format!("[fork] {full}")
                    } else {
                        result = Some(sim.0.borrow_mut().engine_mut().apply_now(input.clone()));
                        let frame = sim.0.borrow_mut().refresh(wall_now());
                        d.dispatch(Action::Frame(frame));
                        full
                    };
                    let result = result.unwrap_or_default();
                    let stdout = result.lines.join("\n");
                    let stderr = result.errors.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("\n");
                    d.dispatch(Action::Console(ConsoleEntry { t_ms, line: shown, stdout, stderr }));
                })
            };
            let seek = {
                let (d, sim) = (dispatcher.clone(), sim.clone());
                Callback::from(move |t: Millis| {
                    sim.0.borrow_mut().engine_mut().seek(t);
                    let frame = sim.0.borrow_mut().refresh(wall_now());
                    d.dispatch(Action::Frame(frame));
                })
            };
            let step = {
                let (d, sim) = (dispatcher.clone(), sim.clone());
                Callback::from(move |direction: i32| {
                    {
                        let mut driver = sim.0.borrow_mut();
                        let engine = driver.engine_mut();
                        if direction >= 0 {
                            let limit = engine.now() + 10 * 60_000;
                            engine.step_to_next_write(limit);
                        } else {
                            let now = engine.now();
                            let previous = engine.activity().iter().rev().find(|t| **t < now).copied().unwrap_or(0);
                            engine.seek(previous);
                        }
                    }
                    let frame = sim.0.borrow_mut().refresh(wall_now());
                    d.dispatch(Action::Pause);
                    d.dispatch(Action::Frame(frame));
                })
            };
            let load = {
                let (d, sim, forked) = (dispatcher.clone(), sim.clone(), forked.clone());
                Callback::from(move |name: String| {
                    let Some(scenario) = crate::scenarios::by_name(&name) else { return };
                    let view = View::parse(scenario.view);
                    *forked.0.borrow_mut() = None;
                    let frame = sim.0.borrow_mut().load(scenario, wall_now());
                    // Keep the address shareable (full app only: embeds do not own the URL).
                    if web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id("kubesim-app")).is_some() {
                        if let Ok(history) = web_sys::window().expect("window").history() {
                            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("?scenario={name}")));
                        }
                    }
                    d.dispatch(Action::ScenarioLoaded(name, frame));
                    if let Some(view) = view {
                        d.dispatch(Action::SetView(view));
                    }
                    d.dispatch(Action::Play);
                })
            };
            let fork = {
                let (d, sim, forked) = (dispatcher.clone(), sim.clone(), forked.clone());
                Callback::from(move |command: ForkCommand| match command {
                    ForkCommand::Open => {
                        let main = sim.0.borrow();
                        let driver = main.fork(wall_now());
                        let at_ms = main.engine().now();
                        let base_inputs = driver.engine().inputs().count();
                        let state =
                            crate::state::ForkState { at_ms, label: String::new(), frame: driver.frame(), diff: compare(&main, &driver), to_fork: true };
                        *forked.0.borrow_mut() = Some(Fork { driver, at_ms, base_inputs, to_fork: true, last_diff_wall: wall_now() });
                        d.dispatch(Action::Pause);
                        d.dispatch(Action::Forked(Some(state)));
                    }
                    ForkCommand::Close => {
                        *forked.0.borrow_mut() = None;
                        d.dispatch(Action::Forked(None));
                    }
                    ForkCommand::Target(to_fork) => {
                        if let Some(fork) = forked.0.borrow_mut().as_mut() {
                            fork.to_fork = to_fork;
                            d.dispatch(Action::ForkTarget(to_fork));
                        }
                    }
                })
            };
            Controls { dispatch, apply, command, seek, step, load, fork, sim, forked }
        })
    };

    {
        let sim = (*sim).clone();
        let forked = forked.clone();
        let dispatcher = state.dispatcher();
        let settings = settings.clone();
        use_effect_with((), move |_| {
            let mut last: Option<Rc<crate::frame::Frame>> = None;
            let stop = animation_loop(move |t| {
                let (playing, speed) = *settings.borrow();
                let frame = sim.0.borrow_mut().tick(t, playing, speed, 9.0, &wall_now);
                if last.as_ref().is_none_or(|l| !Rc::ptr_eq(l, &frame)) {
                    last = Some(frame.clone());
                    dispatcher.dispatch(Action::Frame(frame.clone()));
                }
                // The fork follows the original's clock, with its own budget.
                if let Some(fork) = forked.0.borrow_mut().as_mut() {
                    let before = fork.driver.frame();
                    let fork_frame = fork.driver.follow(frame.t_ms, t, playing, 6.0, &wall_now);
                    if !Rc::ptr_eq(&before, &fork_frame) {
                        let due = !playing || t - fork.last_diff_wall >= DIFF_EVERY_MS;
                        let diff = due.then(|| compare(&sim.0.borrow(), &fork.driver));
                        if due {
                            fork.last_diff_wall = t;
                        }
                        dispatcher.dispatch(Action::ForkFrame(fork_frame, fork.label(), diff));
                    }
                }
            });
            move || stop()
        });
    }

    // Keyboard: space play/pause, arrows step, [ ] speed. Document-wide for the full app,
    // on the app element when embedded (several embeds may share a page).
    let root = use_node_ref();
    {
        let controls = (*controls).clone();
        let embed = state.embed;
        let root = root.clone();
        use_effect_with((), move |_| {
            let handler = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(move |event: web_sys::KeyboardEvent| {
                let target_tag = event.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()).map(|e| e.tag_name()).unwrap_or_default();
                if matches!(target_tag.as_str(), "TEXTAREA" | "INPUT" | "SELECT") || event.ctrl_key() || event.meta_key() || event.alt_key() {
                    return;
                }
                match event.key().as_str() {
                    " " => {
                        event.prevent_default();
                        controls.dispatch.emit(Action::TogglePlay);
                    }
                    "ArrowRight" => {
                        event.prevent_default();
                        controls.step.emit(1);
                    }
                    "ArrowLeft" => {
                        event.prevent_default();
                        controls.step.emit(-1);
                    }
                    "]" => controls.dispatch.emit(Action::NudgeSpeed(1)),
                    "[" => controls.dispatch.emit(Action::NudgeSpeed(-1)),
                    "?" => controls.dispatch.emit(Action::Help(true)),
                    key @ ("1" | "2" | "3" | "4" | "5" | "6" | "7") if !embed => {
                        let index = key.parse::<usize>().unwrap_or(1) - 1;
                        controls.dispatch.emit(Action::SetView(View::ALL[index]));
                    }
                    "Escape" => {
                        controls.dispatch.emit(Action::Help(false));
                        controls.dispatch.emit(Action::Share(false));
                        controls.dispatch.emit(Action::Gallery(false));
                    }
                    _ => {}
                }
            });
            let target: Option<web_sys::EventTarget> =
                if embed { root.cast::<web_sys::Element>().map(|e| e.into()) } else { web_sys::window().and_then(|w| w.document()).map(|d| d.into()) };
            if let Some(target) = &target {
                let _ = target.add_event_listener_with_callback("keydown", handler.as_ref().unchecked_ref());
            }
            move || {
                if let Some(target) = &target {
                    let _ = target.remove_event_listener_with_callback("keydown", handler.as_ref().unchecked_ref());
                }
                drop(handler);
            }
        });
    }

    let frame = state.frame.clone();
    let on_select = controls.dispatch.reform(Action::Select);
    let stage = |view: View| -> Html {
        if let (Some(fork), View::Overview | View::Cluster) = (&state.fork, view) {
            return html! { <crate::components::fork::ForkCompare frame={frame.clone()} fork={fork.clone()} selection={state.selection.clone()} on_select={on_select.clone()} /> };
        }
        match view {
            View::Overview => html! {
                <div class="ks-overview">
                    <ClusterView scene={frame.scene.clone()} workloads={frame.workloads.clone()} selection={state.selection.clone()} on_select={on_select.clone()} compact=true network={frame.network.clone()} now={frame.t_ms} />
                    <LifecycleView frame={frame.clone()} selection={state.selection.clone()} on_select={on_select.clone()} />
                </div>
            },
            View::Cluster => {
                html! { <ClusterView scene={frame.scene.clone()} workloads={frame.workloads.clone()} selection={state.selection.clone()} on_select={on_select.clone()} compact=false network={frame.network.clone()} now={frame.t_ms} /> }
            }
            View::Lifecycle => {
                html! { <LifecycleView frame={frame.clone()} selection={state.selection.clone()} on_select={on_select.clone()} show_log={!state.embed} /> }
            }
            View::Flow => html! { <FlowView frame={frame.clone()} selection={state.selection.clone()} on_select={on_select.clone()} /> },
            View::Pods => html! { <PodsView scene={frame.scene.clone()} selection={state.selection.clone()} on_select={on_select.clone()} /> },
            View::Network => html! { <crate::components::network::NetworkViewPanel network={frame.network.clone()} now={frame.t_ms} /> },
            View::Storage => html! {
                <crate::components::storage::StorageViewPanel storage={frame.storage.clone()} events={frame.events.clone()} now={frame.t_ms} selection={state.selection.clone()} on_select={on_select.clone()} />
            },
        }
    };
    let theme = match state.theme {
        Theme::Light => "ks-light",
        Theme::Dark => "ks-dark",
    };
    let scenario_title = sim.0.borrow().scenario().title;
    let share_link = state.share_open.then(|| share_link(&sim.0.borrow(), forked.0.borrow().as_ref(), &state));
    html! {
        <ContextProvider<Controls> context={(*controls).clone()}>
            <div ref={root} class={classes!("ks", theme, state.embed.then_some("ks-embed"), format!("ks-view-{}", state.view.name()))} tabindex="-1" aria-label="kubesim: Kubernetes control-plane simulator">
                if !state.embed {
                    <Header view={state.view} theme={state.theme} scenario_title={scenario_title} scene={frame.scene.clone()} revision={frame.revision} />
                }
                if frame.limit_refusals > 0 {
                    <div class="ks-notice ks-limit" role="alert">
                        <span>{ format!(
                            "This cluster reached the browser's cap of {} pods or {} objects: {} creates were refused (FailedCreate events name the cap) and the rest runs on. Scale down or delete to make room; `kubesim run` natively has no cap.",
                            kubesim_sim::world::BROWSER_LIMITS.pods, kubesim_sim::world::BROWSER_LIMITS.objects, frame.limit_refusals
                        ) }</span>
                    </div>
                }
                if let Some(notice) = state.notice.clone() {
                    <div class="ks-notice" role="status">
                        <span>{ notice }</span>
                        <button class="ks-button ks-small" onclick={controls.dispatch.reform(|_: MouseEvent| Action::DismissNotice)}>{ "Dismiss" }</button>
                    </div>
                }
                <div class="ks-body">
                    <main class="ks-stage" aria-label={format!("{} view", state.view.label())}>
                        if let Some(fork) = state.fork.clone() {
                            <crate::components::fork::ForkBar {fork} />
                        }
                        { stage(state.view) }
                    </main>
                    if !state.embed {
                        <SidePanel state={(*state).clone()} />
                    }
                </div>
                <Timeline frame={frame.clone()} playing={state.playing} speed={state.speed} compact={state.embed} fork_at={state.fork.as_ref().map(|f| f.at_ms)} />
                if state.gallery_open {
                    <Gallery current={state.scenario.clone()} />
                }
                if state.help_open {
                    <crate::components::header::Help />
                }
                if let Some((link, replayed)) = share_link {
                    <crate::components::header::ShareDialog {link} t_ms={frame.t_ms} {replayed} />
                }
            </div>
        </ContextProvider<Controls>>
    }
}

/// The link that reopens this moment ([`crate::share`]), with how many user inputs it replays.
fn share_link(driver: &Driver, fork: Option<&Fork>, state: &AppState) -> (String, usize) {
    use crate::share::{Moment, SharedSelection};
    let engine = driver.engine();
    let inputs: Vec<crate::engine::TimedInput> = engine.inputs().filter(|(i, _)| i.user).map(|(i, _)| i.clone()).collect();
    let selection = match &state.selection {
        Selection::Pod { namespace, name, .. } => Some(SharedSelection::Pod { namespace: namespace.clone(), name: name.clone() }),
        Selection::Node(name) => Some(SharedSelection::Node(name.clone())),
        _ => None,
    };
    let replayed = inputs.len();
    let fork = fork.map(|f| (f.at_ms, f.user_inputs()));
    let mut query =
        crate::share::query(&Moment { scenario: &state.scenario, seed: engine.seed(), view: state.view.name(), t_ms: engine.now(), selection, inputs, fork });
    if engine.scheduler_annotations() {
        query.push_str("&scheduler-annotations=1");
    }
    let base = web_sys::window().map(|w| w.location()).and_then(|l| Some(format!("{}{}", l.origin().ok()?, l.pathname().ok()?))).unwrap_or_default();
    (format!("{base}{query}"), replayed)
}
