//! Inspectors: the selected object at the current moment (YAML), its history from the trace
//! with a diff against the previous version, and for pods the scheduler's explanation (filter
//! verdicts and scores per node from the scheduler's attempt history, `view::pod_detail`) and
//! the lifecycle path.

use crate::components::app::Controls;
use crate::components::lifecycle::category;
use crate::engine::PodPath;
use crate::frame::Frame;
use crate::port::{use_query, Answer, Query};
use crate::state::{Action, Selection};
use crate::text::{clock, diff_lines, status_class, to_yaml, DiffLine};
use kubesim_sim::view::{self, ObjectKey, ObjectVersion, PodDetail, SchedulingExplanation, VolumeFiles};
use std::rc::Rc;
use yew::prelude::*;

/// Inspector props.
#[derive(Properties, PartialEq)]
pub struct InspectorProps {
    /// What to inspect.
    pub selection: Selection,
    /// The frame (for the revision).
    pub frame: Rc<Frame>,
}

fn key_of(selection: &Selection) -> Option<ObjectKey> {
    match selection {
        Selection::Pod { namespace, name, .. } => {
            Some(ObjectKey { group: String::new(), resource: "pods".into(), kind: "Pod".into(), namespace: namespace.clone(), name: name.clone() })
        }
        Selection::Node(name) => {
            Some(ObjectKey { group: String::new(), resource: "nodes".into(), kind: "Node".into(), namespace: String::new(), name: name.clone() })
        }
        Selection::Object(key) => Some(key.clone()),
        Selection::None => None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tab {
    Summary,
    Why,
    Explain,
    Runtime,
    Yaml,
    History,
}

/// The inspector.
#[function_component(Inspector)]
pub fn inspector(props: &InspectorProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let tab = use_state(|| Tab::Summary);
    let revision = props.frame.revision;
    let generation = props.frame.generation;
    // Every hook runs on every render (with no question when nothing is selected).
    let selected = key_of(&props.selection);
    let is_pod = matches!(props.selection, Selection::Pod { .. });
    let port = &controls.port;
    let versions = use_query(port, selected.clone().map(Query::ObjectVersions), (revision, generation));
    let current = use_query(port, selected.clone().map(Query::ObjectJson), (revision, generation));
    // Pod answers follow the runtime too (containers start and exit between API writes).
    let (namespace, name) = selected.as_ref().map(|k| (k.namespace.clone(), k.name.clone())).unwrap_or_default();
    let stamp = (props.frame.t_ms, revision, generation);
    let pod_query = |make: fn(String, String) -> Query, wanted: bool| (is_pod && wanted).then(|| make(namespace.clone(), name.clone()));
    let detail = use_query(port, pod_query(Query::PodDetail, true), stamp);
    let uid = match &props.selection {
        Selection::Pod { uid, .. } => Some(Query::PodPath(uid.clone())),
        _ => None,
    };
    let path = use_query(port, uid, stamp);
    let why_answers = use_query(port, pod_query(Query::Why, *tab == Tab::Why), stamp);
    let containers = use_query(port, pod_query(Query::PodContainers, *tab == Tab::Runtime), stamp);
    let volume = volume_of(&props.selection, &props.frame.storage);
    let files = use_query(port, volume.clone().map(Query::VolumeFiles), (props.frame.t_ms / 1000, generation));
    let Some(key) = selected else {
        return html! { <ObjectBrowser frame={props.frame.clone()} /> };
    };
    let versions: &[ObjectVersion] = match &*versions {
        Answer::ObjectVersions(versions) => versions,
        _ => &[],
    };
    let current = match &*current {
        Answer::ObjectJson(json) => json.as_ref(),
        _ => None,
    };
    let detail = match &*detail {
        Answer::PodDetail(detail) => detail.as_deref(),
        _ => None,
    };
    let path = match &*path {
        Answer::PodPath(path) => path.as_ref(),
        _ => None,
    };
    let files = match &*files {
        Answer::VolumeFiles(files) => files.as_ref(),
        _ => None,
    };
    let tabs = [
        (Tab::Summary, "Summary"),
        (Tab::Why, "Why?"),
        (Tab::Explain, "Scheduling"),
        (Tab::Runtime, "Containers"),
        (Tab::Yaml, "YAML"),
        (Tab::History, "History"),
    ];
    let pod_only = |t: Tab| matches!(t, Tab::Why | Tab::Explain | Tab::Runtime);
    let active = if !is_pod && pod_only(*tab) { Tab::Summary } else { *tab };
    let clear = controls.dispatch.reform(|_: MouseEvent| Action::Select(Selection::None));
    let body = match active {
        Tab::Summary => summary(&props.selection, &key, &props.frame, Found { current, versions, detail, path, volume: volume.is_some(), files }),
        Tab::Explain => match detail {
            Some(detail) => explanation(&detail.scheduling),
            None => html! { <p class="ks-muted">{ "The pod no longer exists." }</p> },
        },
        Tab::Why => match &*why_answers {
            Answer::Why(answers) => why(answers, &controls.seek),
            _ => html! {},
        },
        Tab::Runtime => match &*containers {
            Answer::PodContainers(containers) => runtime(containers),
            _ => html! {},
        },
        Tab::Yaml => match current {
            Some(json) => html! { <pre class="ks-yaml">{ to_yaml(json) }</pre> },
            None => html! { <p class="ks-muted">{ "Deleted: see History for its last version." }</p> },
        },
        Tab::History => html! { <History versions={Rc::new(versions.to_vec())} /> },
    };
    html! {
        <div class="ks-inspector">
            <div class="ks-inspect-head">
                <div>
                    <div class="ks-kind">{ &key.kind }{ if key.namespace.is_empty() { String::new() } else { format!(" · {}", key.namespace) } }</div>
                    <h3 class="ks-inspect-name">{ &key.name }</h3>
                </div>
                <button class="ks-icon-button" onclick={clear} aria-label="Back to all objects" title="All objects">{ "✕" }</button>
            </div>
            <nav class="ks-subtabs" role="tablist">
                { for tabs.iter().filter(|(t, _)| is_pod || !pod_only(*t)).map(|(t, label)| {
                    let t = *t;
                    let tab = tab.clone();
                    html! { <button role="tab" class={classes!("ks-subtab", (t == active).then_some("is-active"))} aria-selected={(t == active).to_string()} onclick={Callback::from(move |_: MouseEvent| tab.set(t))}>{ *label }</button> }
                }) }
            </nav>
            <div class="ks-inspect-body">{ body }</div>
        </div>
    }
}

/// What the summary shows, as the simulation answered.
struct Found<'a> {
    current: Option<&'a serde_json::Value>,
    versions: &'a [ObjectVersion],
    detail: Option<&'a PodDetail>,
    path: Option<&'a PodPath>,
    /// The object has a volume (whose files follow).
    volume: bool,
    files: Option<&'a VolumeFiles>,
}

/// The PersistentVolume whose files the inspector shows for a claim or volume.
fn volume_of(selection: &Selection, storage: &view::StorageView) -> Option<String> {
    let Selection::Object(k) = selection else { return None };
    if k.kind == "PersistentVolume" {
        return Some(k.name.clone());
    }
    if k.kind != "PersistentVolumeClaim" {
        return None;
    }
    storage.claims.iter().find(|c| c.namespace == k.namespace && c.name == k.name).and_then(|c| c.volume.clone())
}

fn summary(selection: &Selection, key: &ObjectKey, frame: &Frame, found: Found<'_>) -> Html {
    let Found { current, versions, detail, path, volume, files } = found;
    let meta = |json: &serde_json::Value, field: &str| {
        json.pointer(field).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).unwrap_or_default()
    };
    let written = html! {
        <div class="ks-kv">
            <span>{ "versions" }</span><span>{ versions.len() }</span>
            <span>{ "first written" }</span><span>{ versions.first().map(|v| format!("{} by {}", clock(v.t_ms), v.actor)).unwrap_or_default() }</span>
            <span>{ "last written" }</span><span>{ versions.last().map(|v| format!("{} by {}", clock(v.t_ms), v.actor)).unwrap_or_default() }</span>
            if let Some(json) = current {
                <span>{ "resourceVersion" }</span><span class="ks-mono">{ meta(json, "/metadata/resourceVersion") }</span>
                <span>{ "uid" }</span><span class="ks-mono">{ meta(json, "/metadata/uid") }</span>
            }
        </div>
    };
    match selection {
        Selection::Pod { .. } => {
            html! {
                <>
                    if let Some(detail) = detail {
                        <div class="ks-kv">
                            <span>{ "status" }</span><span><span class={classes!("ks-status-pill", format!("s-{}", status_class(&detail.view.status)))}>{ &detail.view.status }</span></span>
                            <span>{ "ready" }</span><span>{ &detail.view.ready }</span>
                            <span>{ "restarts" }</span><span>{ detail.view.restarts }</span>
                            <span>{ "node" }</span><span>{ detail.view.node.clone().unwrap_or_else(|| "—".into()) }</span>
                            <span>{ "IP" }</span><span class="ks-mono">{ detail.view.ip.clone().unwrap_or_else(|| "—".into()) }</span>
                            <span>{ "owner" }</span><span>{ detail.view.owner.clone().unwrap_or_else(|| "—".into()) }</span>
                        </div>
                        <h4>{ "Containers" }</h4>
                        <table class="ks-table">
                            <thead><tr><th>{ "NAME" }</th><th>{ "IMAGE" }</th><th>{ "STATE" }</th></tr></thead>
                            <tbody>{ for detail.containers.iter().map(|(n, i, s)| html! { <tr><td>{ n }</td><td class="ks-mono">{ i }</td><td>{ s }</td></tr> }) }</tbody>
                        </table>
                        <h4>{ "Conditions" }</h4>
                        <table class="ks-table">
                            <thead><tr><th>{ "TYPE" }</th><th>{ "STATUS" }</th><th>{ "REASON" }</th></tr></thead>
                            <tbody>{ for detail.conditions.iter().map(|(t, s, r)| html! { <tr><td>{ t }</td><td class={if s == "True" { "ks-true" } else { "ks-false" }}>{ s }</td><td>{ r }</td></tr> }) }</tbody>
                        </table>
                    } else {
                        <p class="ks-muted">{ "This pod has been deleted." }</p>
                    }
                    if let Some(path) = path {
                        <h4>{ "Lifecycle path" }</h4>
                        <ol class="ks-timeline-list">
                            { for path.steps.iter().map(|(t, state, status, actor)| html! {
                                <li class={format!("c-{}", category(*state))}>
                                    <span class="ks-mono">{ clock(*t) }</span>
                                    <b>{ state.label() }</b>
                                    <span class="ks-muted">{ format!("{status} · {actor}") }</span>
                                </li>
                            }) }
                            if let Some(t) = path.deleted_ms {
                                <li class="c-gone"><span class="ks-mono">{ clock(t) }</span><b>{ "deleted" }</b></li>
                            }
                        </ol>
                    }
                    <h4>{ "Writes" }</h4>
                    { written }
                </>
            }
        }
        Selection::Node(_) => {
            let scene = &frame.scene;
            let node = scene.nodes.iter().find(|n| n.name == key.name).cloned();
            let pods: Vec<_> = scene.pods.iter().filter(|p| p.node.as_deref() == Some(key.name.as_str())).collect();
            let conditions: Vec<(String, String, String)> = current
                .and_then(|j| j.pointer("/status/conditions"))
                .and_then(|c| c.as_array())
                .map(|list| list.iter().map(|c| (meta(c, "/type"), meta(c, "/status"), meta(c, "/reason"))).collect())
                .unwrap_or_default();
            html! {
                <>
                    if let Some(node) = node {
                        <div class="ks-kv">
                            <span>{ "ready" }</span><span class={if node.ready { "ks-true" } else { "ks-false" }}>{ node.ready.to_string() }</span>
                            <span>{ "zone" }</span><span>{ node.zone.clone() }</span>
                            <span>{ "schedulable" }</span><span>{ (!node.unschedulable).to_string() }</span>
                            <span>{ "taints" }</span><span>{ if node.taints.is_empty() { "none".to_string() } else { node.taints.join(", ") } }</span>
                            <span>{ "cpu requested" }</span><span>{ format!("{} / {}", crate::text::cpu(node.cpu_requested_milli), crate::text::cpu(node.cpu_allocatable_milli)) }</span>
                            <span>{ "memory requested" }</span><span>{ format!("{} / {}", crate::text::bytes(node.memory_requested), crate::text::bytes(node.memory_allocatable)) }</span>
                            <span>{ "pods" }</span><span>{ format!("{} / {}", node.pod_count, node.pods_allocatable) }</span>
                        </div>
                    }
                    <h4>{ "Conditions" }</h4>
                    <table class="ks-table">
                        <thead><tr><th>{ "TYPE" }</th><th>{ "STATUS" }</th><th>{ "REASON" }</th></tr></thead>
                        <tbody>{ for conditions.iter().map(|(t, s, r)| html! { <tr><td>{ t }</td><td>{ s }</td><td>{ r }</td></tr> }) }</tbody>
                    </table>
                    <h4>{ format!("Pods ({})", pods.len()) }</h4>
                    <ul class="ks-plain-list">{ for pods.iter().map(|p| html! { <li><span class={classes!("ks-status-pill", format!("s-{}", status_class(&p.status)))}>{ &p.status }</span>{ " " }{ &p.name }</li> }) }</ul>
                    <h4>{ "Writes" }</h4>
                    { written }
                </>
            }
        }
        Selection::Object(k) if k.kind == "PersistentVolumeClaim" || k.kind == "PersistentVolume" => {
            use crate::components::storage::{files_list, stage_class, step_list};
            let claim = frame.storage.claims.iter().find(|c| {
                if k.kind == "PersistentVolume" {
                    c.volume.as_deref() == Some(k.name.as_str())
                } else {
                    c.namespace == k.namespace && c.name == k.name
                }
            });
            html! {
                <>
                    if let Some(c) = claim {
                        <div class="ks-kv">
                            <span>{ "claim" }</span><span class="ks-mono">{ format!("{}/{}", c.namespace, c.name) }</span>
                            <span>{ "stage" }</span><span><span class={classes!("ks-status-pill", stage_class(c))}>{ c.stage.label() }</span></span>
                            <span>{ "phase" }</span><span>{ &c.phase }</span>
                            <span>{ "node" }</span><span class="ks-mono">{ c.node.clone().unwrap_or_else(|| "—".into()) }</span>
                            <span>{ "volume" }</span><span class="ks-mono">{ c.volume.clone().unwrap_or_else(|| "—".into()) }</span>
                            <span>{ "used by" }</span><span class="ks-mono">{ if c.pods.is_empty() { "—".to_string() } else { c.pods.join(", ") } }</span>
                        </div>
                        <h4>{ "Path" }</h4>
                        { step_list(c) }
                    }
                    if volume {
                        <h4>{ "Files" }</h4>
                        { files_list(files) }
                    }
                    <h4>{ "Writes" }</h4>
                    { written }
                </>
            }
        }
        _ => written,
    }
}

/// The Why tab: every answer that applies to the pod now, each with the moment it happened (a
/// button that takes the timeline there).
pub fn why(answers: &[kubesim_sim::why::WhyAnswer], seek: &Callback<kubesim_api::Millis>) -> Html {
    if answers.is_empty() {
        return html! { <p class="ks-muted">{ "The pod no longer exists." }</p> };
    }
    html! {
        <div class="ks-why">
            { for answers.iter().map(|a| {
                let at = a.t_ms.map(|t| {
                    let onclick = seek.reform(move |_: MouseEvent| t);
                    html! { <button class="ks-why-at" {onclick} aria-label={format!("Go to {} on the timeline", clock(t))} title="Go to this moment">{ clock(t) }</button> }
                });
                html! {
                    <section class="ks-why-item">
                        <h4>{ &a.question }</h4>
                        <p>{ &a.answer }</p>
                        if !a.details.is_empty() {
                            <ul>{ for a.details.iter().map(|d| html! { <li>{ d }</li> }) }</ul>
                        }
                        <div class="ks-why-source"><span class="ks-mono">{ &a.source }</span>{ for at }</div>
                    </section>
                }
            }) }
        </div>
    }
}

fn explanation(explanation: &SchedulingExplanation) -> Html {
    if explanation.is_empty() {
        return html! { <p class="ks-muted">{ "No scheduling decision recorded for this pod yet (the scheduler records its filter verdicts and scores per node each time it tries to place the pod; pods created with a nodeName never pass through it)." }</p> };
    }
    let plugins = |rows: &[(String, Vec<(String, String)>)]| -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for (_, list) in rows {
            for (plugin, _) in list {
                if !names.contains(plugin) {
                    names.push(plugin.clone());
                }
            }
        }
        names
    };
    let selected = explanation.selected.clone().unwrap_or_default();
    // Rows are plugins, columns are nodes (clusters have fewer nodes than plugins, usually).
    let nodes: Vec<String> = {
        let mut nodes: Vec<String> = explanation.filter.iter().map(|(n, _)| n.clone()).collect();
        for (n, _) in explanation.final_scores.iter() {
            if !nodes.contains(n) {
                nodes.push(n.clone());
            }
        }
        nodes
    };
    let filter_plugins = plugins(&explanation.filter);
    let score_rows: Vec<(String, Vec<(String, String)>)> =
        explanation.final_scores.iter().map(|(n, l)| (n.clone(), l.iter().map(|(p, s)| (p.clone(), s.to_string())).collect())).collect();
    let score_plugins = plugins(&score_rows);
    let verdict = |node: &str, plugin: &str| {
        explanation.filter.iter().find(|(n, _)| n == node).and_then(|(_, l)| l.iter().find(|(p, _)| p == plugin)).map(|(_, v)| v.clone())
    };
    let final_score = |node: &str, plugin: &str| {
        explanation.final_scores.iter().find(|(n, _)| n == node).and_then(|(_, l)| l.iter().find(|(p, _)| p == plugin)).map(|(_, s)| *s)
    };
    let raw =
        |node: &str, plugin: &str| explanation.scores.iter().find(|(n, _)| n == node).and_then(|(_, l)| l.iter().find(|(p, _)| p == plugin)).map(|(_, s)| *s);
    let total = |node: &str| explanation.final_scores.iter().find(|(n, _)| n == node).map(|(_, l)| l.iter().map(|(_, s)| *s).sum::<i64>());
    let feasible = |node: &str| explanation.filter.iter().find(|(n, _)| n == node).is_none_or(|(_, l)| l.iter().all(|(_, v)| v == "passed"));
    let head = html! {
        <tr><th>{ "PLUGIN" }</th>{ for nodes.iter().map(|n| html! { <th class={classes!("ks-num", (*n == selected).then_some("is-selected-col"))}>{ n }</th> }) }</tr>
    };
    html! {
        <>
            <div class="ks-kv">
                <span>{ "selected node" }</span><span><b>{ if selected.is_empty() { "none".to_string() } else { selected.clone() } }</b></span>
                <span>{ "feasible nodes" }</span><span>{ format!("{} of {}", nodes.iter().filter(|n| feasible(n)).count(), nodes.len()) }</span>
            </div>
            <h4>{ "Filter" }</h4>
            <div class="ks-scroll-x">
                <table class="ks-table ks-matrix">
                    <thead>{ head.clone() }</thead>
                    <tbody>
                        { for filter_plugins.iter().map(|p| html! {
                            <tr>
                                <td>{ p }</td>
                                { for nodes.iter().map(|node| match verdict(node, p) {
                                    Some(v) if v == "passed" => html! { <td class={classes!("ks-pass", (*node == selected).then_some("is-selected-col"))} title="passed">{ "✓" }</td> },
                                    Some(v) => html! { <td class="ks-fail" title={v.clone()}>{ v }</td> },
                                    None => html! { <td class="ks-muted ks-num">{ "—" }</td> },
                                }) }
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            if !score_plugins.is_empty() {
                <h4>{ "Score: normalized × weight (raw)" }</h4>
                <div class="ks-scroll-x">
                    <table class="ks-table ks-matrix">
                        <thead>{ head }</thead>
                        <tbody>
                            { for score_plugins.iter().map(|p| html! {
                                <tr>
                                    <td>{ p }</td>
                                    { for nodes.iter().map(|node| html! {
                                        <td class={classes!("ks-num", (*node == selected).then_some("is-selected-col"))}>
                                            { final_score(node, p).map(|s| s.to_string()).unwrap_or_else(|| "—".into()) }
                                            <span class="ks-muted">{ raw(node, p).map(|r| format!(" ({r})")).unwrap_or_default() }</span>
                                        </td>
                                    }) }
                                </tr>
                            }) }
                            <tr class="ks-total">
                                <td><b>{ "Total" }</b></td>
                                { for nodes.iter().map(|node| html! { <td class={classes!("ks-num", (*node == selected).then_some("is-selected-col"))}><b>{ total(node).map(|t| t.to_string()).unwrap_or_else(|| "—".into()) }</b></td> }) }
                            </tr>
                        </tbody>
                    </table>
                </div>
            }
        </>
    }
}

/// History props.
#[derive(Properties, PartialEq)]
pub struct HistoryProps {
    /// Versions, oldest first.
    pub versions: Rc<Vec<ObjectVersion>>,
}

/// Every version from the trace, with a diff against the previous one.
#[function_component(History)]
pub fn history(props: &HistoryProps) -> Html {
    let chosen = use_state(|| None::<usize>);
    let versions = &props.versions;
    if versions.is_empty() {
        return html! { <p class="ks-muted">{ "No writes recorded." }</p> };
    }
    let index = chosen.unwrap_or(versions.len() - 1).min(versions.len() - 1);
    let version = &versions[index];
    let new_yaml = to_yaml(&version.json);
    let old_yaml = if index > 0 { to_yaml(&versions[index - 1].json) } else { String::new() };
    let diff = diff_lines(&old_yaml, &new_yaml);
    // Show changed lines with 2 lines of context.
    let changed: Vec<bool> = diff.iter().map(|d| !matches!(d, DiffLine::Same(_))).collect();
    let near = |i: usize| (i.saturating_sub(2)..=(i + 2).min(diff.len() - 1)).any(|j| changed[j]);
    let mut rows = Vec::new();
    let mut skipped = 0;
    for (i, line) in diff.iter().enumerate() {
        if index > 0 && !near(i) {
            skipped += 1;
            continue;
        }
        if skipped > 0 {
            rows.push(html! { <div class="ks-diff-skip">{ format!("… {skipped} unchanged lines") }</div> });
            skipped = 0;
        }
        rows.push(match line {
            DiffLine::Same(l) => html! { <div class="ks-diff-same">{ format!("  {l}") }</div> },
            DiffLine::Added(l) => html! { <div class="ks-diff-add">{ format!("+ {l}") }</div> },
            DiffLine::Removed(l) => html! { <div class="ks-diff-del">{ format!("- {l}") }</div> },
        });
    }
    if skipped > 0 {
        rows.push(html! { <div class="ks-diff-skip">{ format!("… {skipped} unchanged lines") }</div> });
    }
    html! {
        <div class="ks-history">
            <ol class="ks-versions">
                { for versions.iter().enumerate().rev().map(|(i, v)| {
                    let chosen = chosen.clone();
                    html! {
                        <li>
                            <button class={classes!("ks-version", (i == index).then_some("is-active"))} onclick={Callback::from(move |_: MouseEvent| chosen.set(Some(i)))}>
                                <span class="ks-mono">{ clock(v.t_ms) }</span>
                                <span class={classes!("ks-etype", v.event_type.to_ascii_lowercase())}>{ v.event_type }</span>
                                <span class="ks-actor">{ &v.actor }</span>
                                <span class="ks-muted ks-mono">{ format!("rv {}", v.revision) }</span>
                            </button>
                        </li>
                    }
                }) }
            </ol>
            <div class="ks-diff" aria-label="Changes against the previous version">
                <div class="ks-diff-title">{ if index == 0 { "created".to_string() } else { format!("changes since {}", clock(versions[index - 1].t_ms)) } }</div>
                { for rows }
            </div>
        </div>
    }
}

/// Object browser props.
#[derive(Properties, PartialEq)]
pub struct ObjectBrowserProps {
    /// For the revision.
    pub frame: Rc<Frame>,
}

/// Every object in the store, by kind.
#[function_component(ObjectBrowser)]
pub fn object_browser(props: &ObjectBrowserProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let keys = use_query(&controls.port, Some(Query::ObjectKeys), (props.frame.revision, props.frame.generation));
    let keys: &[ObjectKey] = match &*keys {
        Answer::ObjectKeys(keys) => keys,
        _ => &[],
    };
    let mut kinds: Vec<(String, Vec<ObjectKey>)> = Vec::new();
    for key in keys.iter().filter(|k| k.kind != "Event" && k.kind != "Lease") {
        match kinds.iter_mut().find(|(k, _)| *k == key.kind) {
            Some((_, list)) => list.push(key.clone()),
            None => kinds.push((key.kind.clone(), vec![key.clone()])),
        }
    }
    html! {
        <div class="ks-browser">
            <p class="ks-muted">{ "Select a pod or node in a view, or any object here, to see its YAML at this moment, every version the trace recorded (with diffs) and, for pods, the scheduler's reasoning." }</p>
            { for kinds.iter().map(|(kind, list)| html! {
                <details open={matches!(kind.as_str(), "Pod" | "Deployment" | "ReplicaSet" | "Node" | "Job")}>
                    <summary>{ format!("{kind} ({})", list.len()) }</summary>
                    <ul class="ks-plain-list">
                        { for list.iter().map(|key| {
                            let pod = props.frame.scene.pods.iter().find(|p| key.kind == "Pod" && p.namespace == key.namespace && p.name == key.name);
                            let selection = match (key.kind.as_str(), pod) {
                                ("Node", _) => Selection::Node(key.name.clone()),
                                ("Pod", Some(p)) => Selection::Pod { namespace: p.namespace.clone(), name: p.name.clone(), uid: p.uid.clone() },
                                _ => Selection::Object(key.clone()),
                            };
                            let onclick = controls.dispatch.reform(move |_: MouseEvent| Action::Select(selection.clone()));
                            html! { <li><button class="ks-link-button" {onclick}>{ if key.namespace.is_empty() { key.name.clone() } else { format!("{}/{}", key.namespace, key.name) } }</button></li> }
                        }) }
                    </ul>
                </details>
            }) }
        </div>
    }
}

/// What runs in each of the pod's containers: PID 1's command line, usage, the process table,
/// mounts with what they hold, the environment and the log's last lines.
fn runtime(containers: &[view::ContainerRuntimeView]) -> Html {
    if containers.is_empty() {
        return html! { <p class="ks-muted">{ "No containers yet: the pod is not running on a node." }</p> };
    }
    html! {
        <>
            { for containers.iter().map(|c| html! {
                <div class="ks-runtime" key={c.id.clone()}>
                    <h4>{ &c.name }<span class="ks-muted">{ format!(" · {} · {}", c.state, c.id) }</span></h4>
                    <pre class="ks-yaml ks-cmdline">{ c.argv.iter().map(|a| if a.contains(' ') || a.is_empty() { format!("{a:?}") } else { a.clone() }).collect::<Vec<_>>().join(" ") }</pre>
                    <div class="ks-kv">
                        <span>{ "CPU" }</span><span class="ks-mono">{ format!("{}m", c.usage.0) }</span>
                        <span>{ "memory" }</span><span class="ks-mono">{ format!("{:.1}Mi", c.usage.1 as f64 / (1024.0 * 1024.0)) }</span>
                    </div>
                    <table class="ks-table">
                        <thead><tr><th>{ "PID" }</th><th>{ "USER" }</th><th>{ "S" }</th><th>{ "TIME" }</th><th>{ "RSS" }</th><th>{ "COMMAND" }</th></tr></thead>
                        <tbody>{ for c.processes.iter().map(|p| html! {
                            <tr><td>{ p.pid }</td><td>{ &p.user }</td><td>{ p.state.to_string() }</td><td class="ks-mono">{ format!("{:.1}s", p.cpu_ms as f64 / 1000.0) }</td><td class="ks-mono">{ format!("{}Ki", p.rss_bytes / 1024) }</td><td class="ks-mono">{ &p.cmdline }</td></tr>
                        }) }</tbody>
                    </table>
                    if !c.mounts.is_empty() {
                        <table class="ks-table">
                            <thead><tr><th>{ "MOUNT" }</th><th>{ "VOLUME" }</th><th>{ "HOLDS" }</th></tr></thead>
                            <tbody>{ for c.mounts.iter().map(|m| html! {
                                <tr><td class="ks-mono">{ &m.path }{ if m.read_only { " (ro)" } else { "" } }</td><td class="ks-mono">{ &m.volume }</td><td class="ks-mono">{ if m.entries.is_empty() { "(empty)".to_string() } else { m.entries.join("  ") } }</td></tr>
                            }) }</tbody>
                        </table>
                    }
                    <details class="ks-env">
                        <summary>{ format!("Environment ({})", c.env.len()) }</summary>
                        <pre class="ks-yaml">{ c.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("\n") }</pre>
                    </details>
                    <details class="ks-env" open={!c.log_tail.is_empty()}>
                        <summary>{ "Log (last lines)" }</summary>
                        <pre class="ks-yaml">{ if c.log_tail.is_empty() { "(no output)".to_string() } else { c.log_tail.join("\n") } }</pre>
                    </details>
                </div>
            }) }
        </>
    }
}
