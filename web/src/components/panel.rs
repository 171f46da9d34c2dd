//! The side panel: YAML editor, kubectl console (with fault buttons), inspector, event log.

use crate::components::app::Controls;
use crate::components::inspector::Inspector;
use crate::components::{distinct, filter_select, set_from_input};
use crate::engine::InputResult;
use crate::frame::Frame;
use crate::state::{Action, AppState, ConsoleEntry, Panel, Selection};
use crate::text::clock;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Side panel props.
#[derive(Properties, PartialEq)]
pub struct SidePanelProps {
    /// The app state.
    pub state: AppState,
}

/// The side panel.
#[function_component(SidePanel)]
pub fn side_panel(props: &SidePanelProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let state = &props.state;
    let tabs = Panel::ALL.iter().map(|&panel| {
        let active = panel == state.panel;
        let onclick = controls.dispatch.reform(move |_: MouseEvent| Action::SetPanel(panel));
        let badge = match panel {
            Panel::Events => {
                let warnings = state.frame.events.iter().filter(|e| e.type_ == "Warning").count();
                (warnings > 0).then(|| html! { <span class="ks-badge bad">{ warnings }</span> })
            }
            _ => None,
        };
        html! {
            <button role="tab" class={classes!("ks-ptab", active.then_some("is-active"))} aria-selected={active.to_string()} {onclick} id={format!("ks-ptab-{}", panel.label())}>
                { panel.label() }{ for badge }
            </button>
        }
    });
    html! {
        <aside class="ks-side" aria-label="Inputs and inspectors">
            <nav class="ks-ptabs" role="tablist" aria-label="Panels">{ for tabs }</nav>
            <div class="ks-panel" role="tabpanel" hidden={state.panel != Panel::Apply}>
                <Editor result={state.last_apply.clone()} />
            </div>
            <div class="ks-panel" role="tabpanel" hidden={state.panel != Panel::Console}>
                <Console entries={state.console.clone()} frame={state.frame.clone()} />
            </div>
            if state.panel == Panel::Inspect {
                <div class="ks-panel" role="tabpanel">
                    <Inspector selection={state.selection.clone()} frame={state.frame.clone()} />
                </div>
            }
            if state.panel == Panel::Events {
                <div class="ks-panel" role="tabpanel">
                    <EventLog frame={state.frame.clone()} selection={state.selection.clone()} />
                </div>
            }
        </aside>
    }
}

/// Example manifests offered by the editor.
pub const SNIPPETS: [(&str, &str); 5] = [
    ("Pod", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hello\n  labels:\n    app: hello\nspec:\n  containers:\n  - name: hello\n    image: nginx:1.27\n    resources:\n      requests:\n        cpu: 200m\n        memory: 64Mi\n"),
    ("Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        resources:\n          requests:\n            cpu: 250m\n            memory: 128Mi\n"),
    ("CrashLoopBackOff", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: crasher\nspec:\n  containers:\n  - name: app\n    image: busybox:1.36\n    command: [\"sh\", \"-c\", \"sleep 5; exit 1\"]\n"),
    ("ImagePullBackOff", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad-image\nspec:\n  containers:\n  - name: app\n    image: registry.invalid/app:1\n"),
    ("Too big to schedule", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: too-big\nspec:\n  containers:\n  - name: app\n    image: nginx:1.27\n    resources:\n      requests:\n        cpu: \"16\"\n"),
];

/// Editor props.
#[derive(Properties, PartialEq)]
pub struct EditorProps {
    /// The last apply's result.
    pub result: Option<Rc<InputResult>>,
}

/// The YAML editor with a line gutter and inline errors.
#[function_component(Editor)]
pub fn editor(props: &EditorProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let text = use_state(|| SNIPPETS[0].1.to_string());
    let textarea = use_node_ref();
    let gutter = use_node_ref();
    let oninput = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(area) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlTextAreaElement>().ok()) {
                text.set(area.value());
            }
        })
    };
    let onscroll = {
        let (textarea, gutter) = (textarea.clone(), gutter.clone());
        Callback::from(move |_: Event| {
            if let (Some(area), Some(g)) = (textarea.cast::<web_sys::Element>(), gutter.cast::<web_sys::Element>()) {
                g.set_scroll_top(area.scroll_top());
            }
        })
    };
    let apply = {
        let (text, apply) = (text.clone(), controls.apply.clone());
        Callback::from(move |_: MouseEvent| apply.emit((*text).clone()))
    };
    let onkeydown = {
        let (text, apply) = (text.clone(), controls.apply.clone());
        Callback::from(move |e: KeyboardEvent| {
            if (e.ctrl_key() || e.meta_key()) && e.key() == "Enter" {
                e.prevent_default();
                apply.emit((*text).clone());
            }
        })
    };
    let on_snippet = {
        let text = text.clone();
        Callback::from(move |e: Event| {
            if let Some(select) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok()) {
                if let Some((_, snippet)) = SNIPPETS.iter().find(|(name, _)| *name == select.value()) {
                    text.set(snippet.to_string());
                }
                select.set_value("");
            }
        })
    };
    let error_lines: Vec<usize> = props.result.iter().flat_map(|r| r.errors.iter().filter_map(|e| e.line)).collect();
    let line_count = text.lines().count().max(1) + usize::from(text.ends_with('\n'));
    let gutter_lines = (1..=line_count).map(|n| html! { <span class={classes!(error_lines.contains(&n).then_some("is-error"))}>{ n }</span> });
    let jump = {
        let textarea = textarea.clone();
        let text = text.clone();
        move |line: usize| {
            let (textarea, text) = (textarea.clone(), text.clone());
            Callback::from(move |_: MouseEvent| {
                if let Some(area) = textarea.cast::<web_sys::HtmlTextAreaElement>() {
                    let start: usize = text.lines().take(line.saturating_sub(1)).map(|l| l.encode_utf16().count() + 1).sum();
                    let end = start + text.lines().nth(line.saturating_sub(1)).map(|l| l.encode_utf16().count()).unwrap_or(0);
                    let _ = area.focus();
                    let _ = area.set_selection_range(start as u32, end as u32);
                }
            })
        }
    };
    html! {
        <div class="ks-editor">
            <div class="ks-editor-bar">
                <span class="ks-panel-title">{ "kubectl apply -f -" }</span>
                <select class="ks-select" onchange={on_snippet} aria-label="Insert an example manifest">
                    <option value="" selected=true>{ "Examples…" }</option>
                    { for SNIPPETS.iter().map(|(name, _)| html! { <option value={*name}>{ *name }</option> }) }
                </select>
            </div>
            <div class="ks-code">
                <div class="ks-gutter" ref={gutter} aria-hidden="true">{ for gutter_lines }</div>
                <textarea ref={textarea} class="ks-textarea" spellcheck="false" value={(*text).clone()} {oninput} {onscroll} {onkeydown}
                    aria-label="YAML manifest to apply" autocomplete="off" autocapitalize="off" />
            </div>
            <div class="ks-editor-actions">
                <button class="ks-button primary" onclick={apply} id="ks-apply">{ "Apply" }</button>
                <span class="ks-muted">{ "Ctrl+Enter · applied at the current virtual time" }</span>
            </div>
            if let Some(result) = &props.result {
                <div class="ks-result" role="status" aria-live="polite">
                    { for result.lines.iter().map(|l| html! { <div class="ks-ok-line">{ l }</div> }) }
                    { for result.warnings.iter().map(|l| html! { <div class="ks-warn-line">{ l }</div> }) }
                    { for result.errors.iter().map(|e| html! {
                        <div class="ks-err-line">
                            if let Some(line) = e.line {
                                <button class="ks-link-button" onclick={jump(line)}>{ format!("line {line}") }</button>{ " " }
                            }
                            { &e.message }
                        </div>
                    }) }
                </div>
            }
        </div>
    }
}

/// Console props.
#[derive(Properties, PartialEq)]
pub struct ConsoleProps {
    /// History.
    pub entries: Rc<Vec<ConsoleEntry>>,
    /// For node names.
    pub frame: Rc<Frame>,
}

/// The kubectl console: the same command layer as the CLI (`world.run_command`).
#[function_component(Console)]
pub fn console(props: &ConsoleProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let line = use_state(String::new);
    let history_index = use_state(|| None::<usize>);
    let output = use_node_ref();
    {
        let output = output.clone();
        use_effect_with(props.entries.len(), move |_| {
            if let Some(element) = output.cast::<web_sys::Element>() {
                element.set_scroll_top(element.scroll_height());
            }
        });
    }
    let oninput = set_from_input(&line);
    let onkeydown = {
        let (line, command, entries, history_index) = (line.clone(), controls.command.clone(), props.entries.clone(), history_index.clone());
        Callback::from(move |e: KeyboardEvent| match e.key().as_str() {
            "Enter" => {
                command.emit((*line).clone());
                line.set(String::new());
                history_index.set(None);
            }
            "ArrowUp" | "ArrowDown" => {
                e.prevent_default();
                if entries.is_empty() {
                    return;
                }
                let last = entries.len() - 1;
                let next = match (*history_index, e.key() == "ArrowUp") {
                    (None, true) => Some(last),
                    (Some(i), true) => Some(i.saturating_sub(1)),
                    (Some(i), false) if i < last => Some(i + 1),
                    _ => None,
                };
                history_index.set(next);
                line.set(next.map(|i| entries[i].line.clone()).unwrap_or_default());
            }
            _ => {}
        })
    };
    let quick = ["get pods -o wide", "get deployments", "get replicasets", "get nodes", "get events"];
    html! {
        <div class="ks-console">
            <div class="ks-console-out" ref={output} aria-live="polite">
                if props.entries.is_empty() {
                    <div class="ks-muted">{ "Commands run against the simulated API server at the current virtual time, through the same command layer as the kubesim CLI. Try one of the buttons below." }</div>
                }
                { for props.entries.iter().map(|entry| html! {
                    <div class="ks-console-entry">
                        <div class="ks-console-cmd"><span class="ks-console-time">{ clock(entry.t_ms) }</span>{ "$ " }{ &entry.line }</div>
                        if !entry.stdout.is_empty() { <pre class="ks-console-stdout">{ &entry.stdout }</pre> }
                        if !entry.stderr.is_empty() { <pre class="ks-console-stderr">{ &entry.stderr }</pre> }
                    </div>
                }) }
            </div>
            <div class="ks-console-in">
                <span class="ks-prompt" aria-hidden="true">{ "$ kubectl" }</span>
                <input class="ks-input" value={(*line).clone()} {oninput} {onkeydown} aria-label="kubectl command" placeholder="get pods" spellcheck="false" autocomplete="off" />
            </div>
            <div class="ks-quick">
                { for quick.iter().map(|q| {
                    let command = controls.command.clone();
                    let q = q.to_string();
                    html! { <button class="ks-pill" onclick={Callback::from({ let q = q.clone(); move |_: MouseEvent| command.emit(q.clone()) })}>{ q }</button> }
                }) }
            </div>
            <div class="ks-faults" aria-label="Faults">
                <span class="ks-panel-title">{ "Faults" }</span>
                { for props.frame.scene.nodes.iter().map(|node| {
                    let is_down = props.frame.nodes_down.contains(&node.name);
                    let line = if is_down { format!("fault node-up {}", node.name) } else { format!("fault node-down {}", node.name) };
                    let command = controls.command.clone();
                    html! {
                        <button class={classes!("ks-pill", if is_down { "is-danger" } else { "" })} onclick={Callback::from(move |_: MouseEvent| command.emit(line.clone()))}>
                            { if is_down { format!("▶ {} up", node.name) } else { format!("■ {} down", node.name) } }
                        </button>
                    }
                }) }
                <button class="ks-pill" onclick={controls.command.reform(|_: MouseEvent| "fault heal".to_string())}>{ "heal all" }</button>
            </div>
            <div class="ks-faults" aria-label="Network faults">
                <span class="ks-panel-title">{ "Network" }</span>
                { for network_faults(&props.frame.scene.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>()).into_iter().map(|(label, line)| {
                    let command = controls.command.clone();
                    html! { <button class="ks-pill" title={line.clone()} onclick={Callback::from(move |_: MouseEvent| command.emit(line.clone()))}>{ label }</button> }
                }) }
            </div>
        </div>
    }
}

/// The network fault buttons for a cluster's first nodes: (label, command line).
fn network_faults(nodes: &[String]) -> Vec<(String, String)> {
    let mut out = vec![("DNS outage".to_string(), "fault dns-outage".to_string()), ("policy matrix".to_string(), "netpol matrix default".to_string())];
    if let [a, b, ..] = nodes {
        out.push((format!("cut {a} ↔ {b}"), format!("fault partition {a} {b}")));
    }
    if let Some(a) = nodes.first() {
        out.push((format!("{a} 30% loss"), format!("fault packet-loss {a} 30%")));
        out.push((format!("{a} +200 ms"), format!("fault latency {a} 200ms")));
        out.push((format!("stop kube-proxy on {a}"), format!("fault kube-proxy-stop {a}")));
    }
    out
}

/// Event log props.
#[derive(Properties, PartialEq)]
pub struct EventLogProps {
    /// The frame.
    pub frame: Rc<Frame>,
    /// Selection (to filter).
    pub selection: Selection,
}

/// The event log (Event objects in the store, newest first).
#[function_component(EventLog)]
pub fn event_log(props: &EventLogProps) -> Html {
    let only_selected = use_state(|| false);
    let object_query = use_state(String::new);
    let reason = use_state(|| "all".to_string());
    let component = use_state(|| "all".to_string());
    let type_ = use_state(|| "all".to_string());
    let selected_name = match &props.selection {
        Selection::Pod { name, .. } => Some(format!("pod/{name}")),
        Selection::Node(name) => Some(format!("node/{name}")),
        Selection::Object(key) => Some(format!("{}/{}", key.kind.to_ascii_lowercase(), key.name)),
        Selection::None => None,
    };
    let toggle = {
        let only_selected = only_selected.clone();
        Callback::from(move |_: Event| only_selected.set(!*only_selected))
    };
    let on_object = set_from_input(&object_query);
    // The reporting component is the source before its host (`kubelet, node-1` → `kubelet`).
    let component_of = |source: &str| source.split(',').next().unwrap_or("").trim().to_string();
    let reasons = distinct(props.frame.events.iter().map(|e| e.reason.clone()));
    let components = distinct(props.frame.events.iter().map(|e| component_of(&e.source)));
    let query = object_query.trim().to_ascii_lowercase();
    let events: Vec<_> = props
        .frame
        .events
        .iter()
        .rev()
        .filter(|e| !*only_selected || selected_name.as_ref().is_none_or(|n| e.object == *n))
        .filter(|e| query.is_empty() || e.object.to_ascii_lowercase().contains(&query) || e.namespace.contains(&query))
        .filter(|e| *reason == "all" || e.reason == *reason)
        .filter(|e| *component == "all" || component_of(&e.source) == *component)
        .filter(|e| *type_ == "all" || e.type_ == *type_)
        .collect();
    let select = |label: &str, all: &str, values: &[String], state: &UseStateHandle<String>| {
        filter_select(format!("Filter events by {label}"), "ks-select ks-select-small", all, values, state)
    };
    html! {
        <div class="ks-events">
            <div class="ks-editor-bar ks-event-filters">
                <span class="ks-panel-title">{ format!("{} events", events.len()) }</span>
                <input class="ks-input ks-input-small" type="search" placeholder="object, e.g. pod/web" value={(*object_query).clone()} oninput={on_object} aria-label="Filter events by object" />
                { select("reason", "All reasons", &reasons, &reason) }
                { select("component", "All components", &components, &component) }
                { select("type", "Normal + Warning", &["Normal".to_string(), "Warning".to_string()], &type_) }
                if let Some(name) = &selected_name {
                    <label class="ks-check"><input type="checkbox" checked={*only_selected} onchange={toggle} />{ format!(" only {name}") }</label>
                }
            </div>
            <ol class="ks-event-list">
                { for events.iter().take(300).map(|e| html! {
                    <li class={classes!((e.type_ == "Warning").then_some("is-warning"))}>
                        <div class="ks-event-head">
                            <span class="ks-mono ks-muted">{ clock(e.last_ms) }</span>
                            <span class="ks-event-reason">{ &e.reason }</span>
                            if e.count > 1 { <span class="ks-badge">{ format!("×{}", e.count) }</span> }
                            <span class="ks-event-object">{ &e.object }</span>
                        </div>
                        <div class="ks-event-message">{ &e.message }</div>
                        <div class="ks-event-source">{ &e.source }</div>
                    </li>
                }) }
            </ol>
        </div>
    }
}
