//! Browser tests: the app renders its views from the world; the reducer is pure; the engine
//! travels back in time exactly. Run with
//! `CHROMEDRIVER=/usr/bin/chromedriver cargo test -p kubesim-web --target wasm32-unknown-unknown`.
#![cfg(target_arch = "wasm32")]

use kubesim_web::driver::Driver;
use kubesim_web::engine::{Engine, Input};
use kubesim_web::frame::Frame;
use kubesim_web::options::Options;
use kubesim_web::scenarios;
use kubesim_web::state::{Action, AppState, Panel, Selection, Theme, View};
use kubesim_web::text::{clock, diff_lines, to_yaml, DiffLine};

/// The app with its simulation on this thread (the test's module holds it; the site's UI
/// module reaches it in a Web Worker).
fn mount(root: web_sys::Element, options: Options) -> yew::AppHandle<kubesim_web::components::app::App> {
    kubesim_web::mount_with(root, options, kubesim_web::components::app::Connect(kubesim_web::port::Port::local_start))
}
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use yew::Reducible;

wasm_bindgen_test_configure!(run_in_browser);

fn container() -> web_sys::Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let element = document.create_element("div").unwrap();
    element.set_attribute("style", "width:1280px;height:800px").unwrap();
    document.body().unwrap().append_child(&element).unwrap();
    element
}

fn count(root: &web_sys::Element, selector: &str) -> u32 {
    root.query_selector_all(selector).unwrap().length()
}

#[wasm_bindgen_test]
async fn app_renders_nodes_and_the_lifecycle_graph() {
    let root = container();
    mount(root.clone(), Options { autoplay: false, ..Options::default() });
    yew::scheduler::flush().await;
    assert_eq!(count(&root, ".ks-node:not(.ks-unscheduled)"), 3, "three node cards for the default cluster");
    assert_eq!(count(&root, ".ks-state-node"), 15, "one graph node per lifecycle state");
    assert_eq!(count(&root, ".ks-tab"), 7, "seven views");
    let clock_text = root.query_selector(".ks-clock-value").unwrap().unwrap().text_content().unwrap();
    assert_eq!(clock_text, "00:00.000", "paused at virtual time zero");
    // The nginx Deployment and the debug pod are in the store at t=0, not yet bound.
    assert!(root.query_selector(".ks-unscheduled").unwrap().is_some(), "pending pods are shown as not scheduled");
}

#[wasm_bindgen_test]
async fn embed_mode_shows_only_the_requested_view() {
    let root = container();
    let options = Options::from_query("?scenario=crashloop&view=lifecycle&embed=1&autoplay=0", Options::default());
    mount(root.clone(), options);
    yew::scheduler::flush().await;
    assert_eq!(count(&root, ".ks-embed"), 1);
    assert_eq!(count(&root, ".ks-header"), 0, "no chrome when embedded");
    assert_eq!(count(&root, ".ks-side"), 0, "no side panel when embedded");
    assert_eq!(count(&root, ".ks-graph"), 1, "the lifecycle graph");
}

#[wasm_bindgen_test]
async fn unmount_removes_the_app_and_stops_it() {
    let root = container();
    let handle = mount(root.clone(), Options::from_query("?scenario=nginx&view=flow&embed=1&autoplay=1", Options::default()));
    yew::scheduler::flush().await;
    assert_eq!(count(&root, ".ks-flow-svg"), 1, "mounted");
    handle.destroy();
    yew::scheduler::flush().await;
    assert_eq!(root.child_element_count(), 0, "nothing left in the element");
}

#[wasm_bindgen_test]
fn reducer_is_pure_and_handles_every_action() {
    let options = Options { autoplay: false, ..Options::default() };
    let state = Rc::new(AppState::new(&options, Rc::new(Frame::empty())));
    let state = state.reduce(Action::TogglePlay);
    assert!(state.playing);
    let state = state.reduce(Action::SetSpeed(1.0)).reduce(Action::NudgeSpeed(1));
    assert_eq!(state.speed, 2.0);
    let state = state.reduce(Action::NudgeSpeed(100));
    assert_eq!(state.speed, 0.0, "the last speed is max");
    let state = state.reduce(Action::SetView(View::Flow));
    assert_eq!(state.view, View::Flow);
    let selection = Selection::Node("node-1".into());
    let state = state.reduce(Action::Select(selection.clone()));
    assert_eq!(state.selection, selection);
    assert_eq!(state.panel, Panel::Inspect, "selecting opens the inspector");
    let theme = state.theme;
    let state = state.reduce(Action::ToggleTheme);
    assert_ne!(state.theme, theme);
    let same = state.clone().reduce(Action::Frame(state.frame.clone()));
    assert!(Rc::ptr_eq(&same, &state), "the same frame is not a change");
    let state = state.reduce(Action::ScenarioLoaded("crashloop".into(), Rc::new(Frame::empty())));
    assert_eq!(state.scenario, "crashloop");
    assert_eq!(state.selection, Selection::None);
    assert_eq!(Theme::Light, Options::from_query("theme=light", Options::default()).theme);
    assert_eq!(Options::from_query("speed=4", Options::default()).speed, 5.0, "speeds snap to the transport's steps");
    assert_eq!(Options::from_query("speed=max", Options::default()).speed, 0.0);
}

#[wasm_bindgen_test]
fn time_travel_replays_the_same_history() {
    let scenario = scenarios::by_name("nginx").unwrap();
    let mut engine = Engine::new(7, scenario.inputs.clone());
    engine.advance(4_000, &mut || false);
    let user = engine.apply_now(Input::Apply {
        name: "x.yaml".into(),
        text: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: late\nspec:\n  containers:\n  - name: c\n    image: nginx\n".into(),
    });
    assert_eq!(user.lines, vec!["pod/late created".to_string()]);
    engine.advance(20_000, &mut || false);
    let forward = kubesim_sim::view::snapshot(engine.world());
    let writes = engine.world().trace().len();
    engine.seek(2_000);
    assert_eq!(engine.now(), 2_000);
    assert!(kubesim_sim::view::snapshot(engine.world()).pods.iter().all(|p| p.name != "late"), "at 2s the late pod does not exist yet");
    engine.seek(20_000);
    assert_eq!(kubesim_sim::view::snapshot(engine.world()), forward, "replaying reaches the identical state");
    assert_eq!(engine.world().trace().len(), writes);
    assert!(forward.pods.iter().any(|p| p.name == "late" && p.status == "Running"));
}

#[wasm_bindgen_test]
fn lifecycle_transitions_come_from_the_trace() {
    let scenario = scenarios::by_name("nginx").unwrap();
    let mut driver = Driver::new(scenario, 1);
    driver.engine_mut().advance(15_000, &mut || false);
    let frame = driver.refresh(0.0);
    let ready = frame.scene.pods.iter().filter(|p| p.lifecycle == kubesim_sim::view::Lifecycle::Ready).count();
    assert!(ready >= 1, "pods became Ready");
    let into_ready: u32 = frame.edges.iter().filter(|(_, to, _)| *to == Some(kubesim_sim::view::Lifecycle::Ready)).map(|e| e.2).sum();
    assert_eq!(into_ready as usize, ready, "every Ready pod took an edge into Ready");
    let uid = &frame.scene.pods[0].uid;
    let path = driver.engine().pod_path(uid).unwrap();
    assert_eq!(path.steps[0].1, kubesim_sim::view::Lifecycle::Pending);
}

#[wasm_bindgen_test]
fn editor_errors_carry_line_numbers() {
    let mut engine = Engine::new(1, Vec::new());
    let result =
        engine.apply_now(Input::Apply { name: "bad.yaml".into(), text: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: [\n".into() });
    assert!(!result.errors.is_empty());
    assert!(result.errors.iter().any(|e| e.line.is_some()), "{:?}", result.errors);
}

#[wasm_bindgen_test]
fn text_helpers() {
    let value = serde_json::json!({"metadata": {"name": "a", "labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "args": ["-c", "sleep 5; exit 1"]}], "replicas": 3}, "on": "yes"});
    let yaml = to_yaml(&value);
    assert_eq!(yaml, "metadata:\n  labels:\n    app: web\n  name: a\n\"on\": \"yes\"\nspec:\n  containers:\n  - args:\n    - \"-c\"\n    - sleep 5; exit 1\n    name: c\n  replicas: 3\n");
    let diff = diff_lines("a\nb\nc\n", "a\nc\nd\n");
    assert_eq!(diff, vec![DiffLine::Same("a".into()), DiffLine::Removed("b".into()), DiffLine::Same("c".into()), DiffLine::Added("d".into())]);
    assert_eq!(clock(65_250), "01:05.250");
}

#[wasm_bindgen_test]
fn every_gallery_scenario_applies_cleanly() {
    for scenario in scenarios::all() {
        let mut engine = Engine::new(1, scenario.inputs.clone());
        // Run past every input (the big cluster only to t=0 and the hour of churn through its
        // first restart and scale: they are slow in debug builds).
        let until = match scenario.name {
            "big-cluster" | "huge-cluster" | "huge-cluster-30k" => 0,
            "churn" => 180_001,
            _ => scenario.inputs.iter().map(|i| i.t_ms).max().unwrap_or(0) + 1,
        };
        engine.advance(until, &mut || false);
        for (input, result) in engine.inputs().filter(|(input, _)| input.t_ms < until.max(1)) {
            let result = result.unwrap_or_else(|| panic!("{}: input {} was not applied", scenario.name, input.label()));
            // pdb-drain's drains are refused by the budget by design: kubectl prints the
            // refusals (and that the node is still pending) on stderr.
            let budget_refusal = |e: &&kubesim_web::engine::InputError| {
                e.message.contains("disruption budget")
                    || e.message.contains("unable to drain node")
                    || e.message.contains("pending nodes")
                    || e.message.trim() == "node-1"
            };
            let expected = scenario.name == "pdb-drain" && input.label().starts_with("kubectl drain");
            let unexpected: Vec<_> = result.errors.iter().filter(|e| !(expected && budget_refusal(e))).collect();
            assert!(unexpected.is_empty(), "{}: {} failed: {:?}", scenario.name, input.label(), unexpected);
            // A command in a container (`kubectl exec POD -- rm FILE`) may rightly print nothing.
            let silent_ok = input.label().starts_with("kubectl exec ");
            assert!(silent_ok || !result.lines.is_empty(), "{}: {} printed nothing", scenario.name, input.label());
        }
        assert!(!kubesim_sim::view::snapshot(engine.world()).nodes.is_empty(), "{}: has nodes", scenario.name);
    }
}

// The NetworkPolicy benchmark in the browser: 100 pods under 50 policies, every pair's verdict
// and the matrix confirmed by probing, timed with performance.now() (printed, never asserted).
#[wasm_bindgen_test]
fn netpol_matrix_of_100_pods_and_50_policies_in_the_browser() {
    let performance = web_sys::window().unwrap().performance().unwrap();
    let (mut world, namespaces) = kubesim_sim::netpol::bench_world(100, 50);
    let t0 = performance.now();
    let (cells, allowed) = world.netpol_verdicts(&namespaces, 80, false);
    let t1 = performance.now();
    let (expected, probed) = world.netpol_matrix(&namespaces, 80, false).unwrap();
    let t2 = performance.now();
    assert_eq!(cells, 10_000);
    assert!(expected.differences(&probed).is_empty(), "the probes agree with the verdicts");
    web_sys::console::log_1(
        &format!("netpol benchmark (browser): {cells} cells, {allowed} allowed; verdicts {:.0} ms; matrix with probes {:.0} ms", t1 - t0, t2 - t1).into(),
    );
}

// A share link opens paused at its moment, with its selection inspected and its inputs
// replayed; a bad parameter is refused with a notice and the rest of the link still applies.
#[wasm_bindgen_test]
async fn a_share_link_opens_at_its_moment() {
    let inputs = kubesim_web::share::encode_inputs(&[kubesim_web::engine::TimedInput {
        t_ms: 3_000,
        input: Input::Command("kubectl scale deployment/nginx --replicas=4".into()),
        user: true,
    }]);
    let root = container();
    let options =
        Options::from_query(&format!("?scenario=nginx&seed=1&view=pods&t=20s&autoplay=0&select=pod/default/debug&inputs={inputs}"), Options::default());
    assert_eq!(options.link_error, None);
    mount(root.clone(), options);
    yew::scheduler::flush().await;
    let clock_text = root.query_selector(".ks-clock-value").unwrap().unwrap().text_content().unwrap();
    assert_eq!(clock_text, "00:20.000");
    let rows = root.query_selector_all(".ks-pods tbody tr").unwrap();
    let nginx = (0..rows.length()).filter_map(|i| rows.item(i)?.text_content()).filter(|row| row.starts_with("nginx-")).count();
    assert_eq!(nginx, 4, "the link's scale replayed");
    assert_eq!(count(&root, ".ks-ptab.is-active#ks-ptab-Inspect"), 1, "the selection is inspected");
    assert_eq!(count(&root, ".ks-notice"), 0);

    let root = container();
    let options = Options::from_query("?scenario=nginx&t=forever&select=secret/default/x&autoplay=0", Options::default());
    mount(root.clone(), options);
    yew::scheduler::flush().await;
    let notice = root.query_selector(".ks-notice").unwrap().expect("a notice").text_content().unwrap();
    assert!(notice.contains("\"forever\"") && notice.contains("secret/default/x"), "{notice}");
}

// "What if?": the button forks the history here; a link recreates a fork with what was done
// to it, the original and the fork side by side with what differs.
#[wasm_bindgen_test]
async fn what_if_forks_and_compares() {
    let root = container();
    mount(root.clone(), Options { autoplay: false, ..Options::default() });
    yew::scheduler::flush().await;
    assert_eq!(count(&root, ".ks-fork-bar"), 0);
    root.query_selector(".ks-whatif").unwrap().expect("the What if? button").dyn_into::<web_sys::HtmlElement>().unwrap().click();
    yew::scheduler::flush().await;
    assert_eq!(count(&root, ".ks-fork-bar"), 1, "the fork bar");
    assert_eq!(count(&root, ".ks-fork-side"), 2, "both clusters");
    assert!(root.text_content().unwrap().contains("Nothing yet"), "no difference at the fork point");

    let inputs = kubesim_web::share::encode_inputs(&[kubesim_web::engine::TimedInput {
        t_ms: 10_000,
        input: Input::Command("fault node-down node-2".into()),
        user: true,
    }]);
    let root = container();
    mount(root.clone(), Options::from_query(&format!("?scenario=nginx&t=70s&autoplay=0&fork=10s&fork-inputs={inputs}"), Options::default()));
    yew::scheduler::flush().await;
    let bar = root.query_selector(".ks-fork-bar").unwrap().expect("the fork bar").text_content().unwrap();
    assert!(bar.contains("forked at 00:10.000") && bar.contains("fault node-down node-2"), "{bar}");
    let sides = root.query_selector_all(".ks-fork-side").unwrap();
    let original = sides.item(0).unwrap().text_content().unwrap();
    let fork = sides.item(1).unwrap().text_content().unwrap();
    assert!(!original.contains("NotReady"), "{original}");
    assert!(fork.contains("NotReady"), "{fork}");
    let diff = root.query_selector(".ks-wdiff").unwrap().expect("the comparison").text_content().unwrap();
    assert!(diff.contains("node/node-2") && diff.contains("node.kubernetes.io/unreachable"), "{diff}");
}

/// Waits `ms` of wall time.
async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window().unwrap().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

// The real connection (a Web Worker, else the simulation's module loaded by the page) where the
// simulation's files are not served (the test page has only its own module): the app says so
// instead of loading forever.
#[wasm_bindgen_test]
async fn without_the_simulations_module_the_app_says_so() {
    let root = container();
    kubesim_web::mount(root.clone(), Options { autoplay: false, ..Options::default() });
    yew::scheduler::flush().await;
    assert_eq!(count(&root, ".ks-starting"), 1, "loading notice while the simulation comes");
    let mut text = String::new();
    for _ in 0..100 {
        sleep(100).await;
        yew::scheduler::flush().await;
        text = root.query_selector(".ks-notice:not(.ks-starting)").unwrap().and_then(|n| n.text_content()).unwrap_or_default();
        if !text.is_empty() {
            break;
        }
    }
    assert!(text.contains("The simulation could not be loaded") && text.contains("kubesim-worker.js"), "{text:?}");
}
