//! The root component: owns the port to the simulation, the reducer and the animation loop.

use crate::components::{
    cluster::ClusterView, flow::FlowView, gallery::Gallery, header::Header, lifecycle::LifecycleView, panel::SidePanel, pods::PodsView, timeline::Timeline,
};
use crate::engine::Millis;
use crate::options::Options;
use crate::port::{use_query, Answer, Command, Moment, Port, Query, Start};
use crate::state::{Action, AppState, Selection, Theme, View};
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
    /// How the app reaches its simulation.
    pub connect: Connect,
}

/// How an app reaches its simulation: [`crate::worker::connect`] (a Web Worker) or
/// [`Port::local_start`] (this thread).
#[derive(Clone, Copy)]
pub struct Connect(pub fn(Start) -> Port);

impl PartialEq for Connect {
    /// An app connects once: a new way to connect is no reason to re-render.
    fn eq(&self, _: &Connect) -> bool {
        true
    }
}

pub use crate::port::ForkCommand;

/// Everything a view may do, as callbacks (the effects live here, not in the reducer), and the
/// port for what the views ask of the simulation.
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
    /// The simulation, for queries while rendering.
    pub port: Port,
}

impl Controls {
    /// Controls whose callbacks send commands to `port`.
    pub fn new(port: Port, dispatch: Callback<Action>) -> Controls {
        let apply = {
            let port = port.clone();
            Callback::from(move |text: String| port.send(Command::Apply(text)))
        };
        let command = {
            let port = port.clone();
            Callback::from(move |line: String| {
                // `kubectl explain` reads the API's schemas, which the page fetches on first
                // use (kept out of the wasm bundle); the command runs once they are here.
                let explain = line.split_whitespace().find(|w| *w != "kubectl") == Some("explain");
                if explain && !port.has_definitions() {
                    let port = port.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        if let Some(text) = fetch_text("definitions.json").await {
                            port.send(Command::ProvideDefinitions(text));
                        }
                        port.send(Command::Run(line));
                    });
                    return;
                }
                port.send(Command::Run(line));
            })
        };
        let seek = {
            let port = port.clone();
            Callback::from(move |t: Millis| port.send(Command::Seek(t)))
        };
        let step = {
            let port = port.clone();
            Callback::from(move |direction: i32| port.send(Command::Step(direction)))
        };
        let load = {
            let port = port.clone();
            Callback::from(move |name: String| {
                if crate::scenarios::meta(&name).is_none() {
                    return;
                }
                // Keep the address shareable (full app only: embeds do not own the URL).
                if web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id("kubesim-app")).is_some() {
                    if let Ok(history) = web_sys::window().expect("window").history() {
                        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("?scenario={name}")));
                    }
                }
                port.send(Command::Load(name));
            })
        };
        let fork = {
            let port = port.clone();
            Callback::from(move |command: ForkCommand| port.send(Command::Fork(command)))
        };
        Controls { dispatch, apply, command, seek, step, load, fork, port }
    }
}

pub use crate::port::wall_now;

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
    let port = {
        let options = options.clone();
        let connect = props.connect.0;
        use_memo((), move |_| connect(Start::from_options(&options)))
    };
    let state = {
        let (frame, fork) = (port.frame(), port.fork_state());
        let options = options.clone();
        use_reducer(move || AppState { fork, ..AppState::new(&options, frame) })
    };
    let settings = use_mut_ref(|| (state.playing, state.speed));
    *settings.borrow_mut() = (state.playing, state.speed);

    let controls = {
        let dispatcher = state.dispatcher();
        let port = (*port).clone();
        use_memo((), move |_| {
            let d = dispatcher.clone();
            let dispatch = Callback::from(move |action: Action| d.dispatch(action));
            port.connect(dispatch.clone());
            Controls::new(port, dispatch)
        })
    };

    {
        let port = (*port).clone();
        let settings = settings.clone();
        use_effect_with((), move |_| {
            let ticking = port.clone();
            let stop = animation_loop(move |t| {
                let (playing, speed) = *settings.borrow();
                ticking.tick(t, playing, speed);
            });
            // Unmounted: the animation loop stops and so does the simulation (its worker).
            move || {
                stop();
                port.close();
            }
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
                    <ClusterView scene={frame.scene.clone()} workloads={frame.workloads.clone()} selection={state.selection.clone()} on_select={on_select.clone()} compact=true network={frame.network.clone()} now={frame.t_ms} nodes_down={frame.nodes_down.clone()} />
                    <LifecycleView frame={frame.clone()} selection={state.selection.clone()} on_select={on_select.clone()} />
                </div>
            },
            View::Cluster => {
                html! { <ClusterView scene={frame.scene.clone()} workloads={frame.workloads.clone()} selection={state.selection.clone()} on_select={on_select.clone()} compact=false network={frame.network.clone()} now={frame.t_ms} nodes_down={frame.nodes_down.clone()} /> }
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
    let scenario_title = crate::scenarios::meta(&state.scenario).map_or("", |m| m.title);
    // The inputs change only with a new marker; the moment with the time.
    let moment = use_query(
        &port,
        state.share_open.then_some(Query::Moment),
        (frame.t_ms, frame.generation, frame.markers.clone(), state.fork.as_ref().map(|f| f.label.clone())),
    );
    let share_link = match &*moment {
        Answer::Moment(moment) if state.share_open => Some(share_link(moment.clone(), &state)),
        _ => None,
    };
    html! {
        <ContextProvider<Controls> context={(*controls).clone()}>
            <div ref={root} class={classes!("ks", theme, state.embed.then_some("ks-embed"), format!("ks-view-{}", state.view.name()))} tabindex="-1" aria-label="kubesim: Kubernetes control-plane simulator" data-sim-memory={frame.perf.sim_memory_bytes.to_string()}>
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
                // Revision 0 is no world's: the simulation's module is still on its way.
                if frame.revision == 0 {
                    <div class="ks-notice ks-starting" role="status">
                        <span>{ "Starting the simulated cluster: loading the simulation…" }</span>
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
fn share_link(moment: Moment, state: &AppState) -> (String, usize) {
    use crate::share::SharedSelection;
    let selection = match &state.selection {
        Selection::Pod { namespace, name, .. } => Some(SharedSelection::Pod { namespace: namespace.clone(), name: name.clone() }),
        Selection::Node(name) => Some(SharedSelection::Node(name.clone())),
        _ => None,
    };
    let replayed = moment.inputs.len();
    let mut query = crate::share::query(&crate::share::Moment {
        scenario: &state.scenario,
        seed: moment.seed,
        view: state.view.name(),
        t_ms: moment.t_ms,
        selection,
        inputs: moment.inputs,
        fork: moment.fork,
    });
    if moment.scheduler_annotations {
        query.push_str("&scheduler-annotations=1");
    }
    let base = web_sys::window().map(|w| w.location()).and_then(|l| Some(format!("{}{}", l.origin().ok()?, l.pathname().ok()?))).unwrap_or_default();
    (format!("{base}{query}"), replayed)
}

/// GETs a file next to the page as text (`None` on any failure).
async fn fetch_text(url: &str) -> Option<String> {
    let window = web_sys::window()?;
    let response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(url)).await.ok()?;
    let response: web_sys::Response = response.dyn_into().ok()?;
    if !response.ok() {
        return None;
    }
    wasm_bindgen_futures::JsFuture::from(response.text().ok()?).await.ok()?.as_string()
}
