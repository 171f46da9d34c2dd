//! The cluster view: node cards (zone, conditions, taints, requested vs allocatable) with their
//! pods as chips coloured by kubectl's STATUS, grouped by owner, and the packets of the last
//! two virtual seconds drawn between the pods that sent and answered them (a dot travelling
//! from the client to the endpoint the Service rules chose; dashed red with a cross when a
//! NetworkPolicy dropped it). Large clusters switch to the canvas renderer.

use crate::components::app::Controls;
use crate::components::canvas::ClusterCanvas;
use crate::state::Selection;
use crate::text::{bytes, cpu, status_class};
use kubesim_sim::view::{ClusterSnapshot, NetworkView, NodeView, ObjectKey, PodView, WorkloadView};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Above this many pods (or nodes) the cluster view draws on a canvas.
pub const CANVAS_THRESHOLD_PODS: usize = 300;
/// Above this many nodes the cluster view draws on a canvas.
pub const CANVAS_THRESHOLD_NODES: usize = 24;

/// Cluster view props.
#[derive(Properties, PartialEq)]
pub struct ClusterProps {
    /// Nodes and pods.
    pub scene: Rc<ClusterSnapshot>,
    /// Selection.
    pub selection: Selection,
    /// Select something.
    pub on_select: Callback<Selection>,
    /// Workloads.
    pub workloads: Rc<Vec<WorkloadView>>,
    /// Overview layout (smaller cards).
    pub compact: bool,
    /// Recent packets to draw between the pods.
    #[prop_or_default]
    pub network: Option<Rc<NetworkView>>,
    /// Virtual now (the packets' age).
    #[prop_or_default]
    pub now: u64,
    /// Nodes that are down (drawn dimmed).
    #[prop_or_default]
    pub nodes_down: Rc<Vec<String>>,
}

/// How long a packet stays drawn (virtual ms).
const PACKET_TRAIL_MS: u64 = 2_000;

/// The packets overlay: one quadratic curve per recent packet between the chips of the pods at
/// its ends, positioned from the chips' boxes after layout (an SVG written in place, so a frame
/// costs the packets drawn). A dot travels the curve over the packet's first virtual second.
fn draw_packets(container: &web_sys::Element, svg: &web_sys::Element, network: Option<&NetworkView>, now: u64) {
    let mut out = String::new();
    if let Some(net) = network {
        let origin = container.get_bounding_client_rect();
        let mut centres = std::collections::BTreeMap::new();
        if let Ok(chips) = container.query_selector_all("[data-pod]") {
            for i in 0..chips.length() {
                let Some(el) = chips.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) else { continue };
                let r = el.get_bounding_client_rect();
                if let Some(pod) = el.get_attribute("data-pod") {
                    centres.insert(pod, (r.left() - origin.left() + r.width() / 2.0, r.top() - origin.top() + r.height() / 2.0));
                }
            }
        }
        for p in net.packets.iter().filter(|p| p.t_ms <= now && now - p.t_ms <= PACKET_TRAIL_MS).take(40) {
            let (Some(a), Some(b)) = (centres.get(&p.from), p.to_pod.as_ref().and_then(|t| centres.get(t))) else { continue };
            if a == b {
                continue;
            }
            let age = (now - p.t_ms) as f64;
            let (mx, my) = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
            // The control point bows the curve sideways, proportionally to its length.
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let (cx, cy) = (mx - dy * 0.25, my + dx * 0.25);
            let class = match p.outcome.as_str() {
                "ok" => "ok",
                "dropped" => "dropped",
                _ => "bad",
            };
            let opacity = (1.0 - age / PACKET_TRAIL_MS as f64).clamp(0.15, 1.0);
            out.push_str(&format!(
                "<path class=\"ks-pkt {class}\" d=\"M{:.1} {:.1} Q{cx:.1} {cy:.1} {:.1} {:.1}\" opacity=\"{opacity:.2}\"><title>{} → {} ({})</title></path>",
                a.0,
                a.1,
                b.0,
                b.1,
                p.from,
                p.to_pod.clone().unwrap_or_default(),
                p.outcome
            ));
            // Dropped packets stop halfway.
            let t = (age / 1000.0).min(if class == "dropped" { 0.5 } else { 1.0 });
            let (x, y) =
                ((1.0 - t) * (1.0 - t) * a.0 + 2.0 * (1.0 - t) * t * cx + t * t * b.0, (1.0 - t) * (1.0 - t) * a.1 + 2.0 * (1.0 - t) * t * cy + t * t * b.1);
            if class == "dropped" {
                out.push_str(&format!("<text class=\"ks-pkt-x\" x=\"{x:.1}\" y=\"{:.1}\" opacity=\"{opacity:.2}\">×</text>", y + 5.0));
            } else {
                out.push_str(&format!("<circle class=\"ks-pkt-dot {class}\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" opacity=\"{opacity:.2}\"/>"));
            }
        }
    }
    svg.set_inner_html(&out);
}

fn workload_key(w: &WorkloadView) -> ObjectKey {
    let (group, resource) = match w.kind.as_str() {
        "Deployment" => ("apps", "deployments"),
        "ReplicaSet" => ("apps", "replicasets"),
        "StatefulSet" => ("apps", "statefulsets"),
        "DaemonSet" => ("apps", "daemonsets"),
        "Job" => ("batch", "jobs"),
        _ => ("", "objects"),
    };
    ObjectKey { group: group.into(), resource: resource.into(), kind: w.kind.clone(), namespace: w.namespace.clone(), name: w.name.clone() }
}

fn segments(w: &WorkloadView) -> Html {
    let total = w.desired.max(w.current).max(1) as f64;
    let ready = (w.ready as f64 / total * 100.0).min(100.0);
    let starting = ((w.current - w.ready).max(0) as f64 / total * 100.0).min(100.0 - ready);
    html! {
        <span class="ks-seg" aria-hidden="true">
            <span class="ks-seg-ready" style={format!("width:{ready:.1}%")} />
            <span class="ks-seg-starting" style={format!("width:{starting:.1}%")} />
        </span>
    }
}

fn workload_strip(workloads: &[WorkloadView], selection: &Selection, on_select: &Callback<Selection>) -> Html {
    let is_child =
        |w: &WorkloadView| w.owner.as_ref().is_some_and(|o| workloads.iter().any(|p| format!("{}/{}", p.kind, p.name) == *o && p.namespace == w.namespace));
    let tops: Vec<&WorkloadView> = workloads.iter().filter(|w| !is_child(w)).collect();
    if tops.is_empty() {
        return html! {};
    }
    let row = |w: &WorkloadView, child: bool| {
        let key = workload_key(w);
        let selected = matches!(selection, Selection::Object(k) if *k == key);
        let target = Selection::Object(key);
        let onclick = on_select.reform(move |_: MouseEvent| target.clone());
        let done = if w.kind == "Job" { w.ready >= w.desired } else { w.ready >= w.desired && w.current == w.desired };
        html! {
            <button class={classes!(if child { "ks-wl-child" } else { "ks-wl-main" }, selected.then_some("is-selected"))} {onclick} title={format!("{} {}/{}", w.kind, w.namespace, w.name)}>
                <span class="ks-wl-kind">{ w.kind.to_ascii_lowercase() }</span>
                <span class="ks-wl-name">{ &w.name }</span>
                if child { { segments(w) } }
                <span class={classes!("ks-wl-count", done.then_some("is-done"))}>
                    { format!("{}/{}", w.ready, w.desired) }
                    <span class="ks-muted">{ if w.kind == "Job" { " done" } else { " ready" } }</span>
                </span>
                if !child { { segments(w) } }
                if !child {
                    <span class="ks-wl-meta">
                        { w.images.join(", ") }
                        { w.updated.map(|u| format!(" · {u} up-to-date")).unwrap_or_default() }
                        { w.revision.as_ref().map(|r| format!(" · rev {r}")).unwrap_or_default() }
                    </span>
                }
            </button>
        }
    };
    html! {
        <div class="ks-workloads" aria-label="Workloads">
            { for tops.iter().map(|top| {
                let owner = format!("{}/{}", top.kind, top.name);
                let children: Vec<&WorkloadView> = workloads.iter().filter(|w| w.owner.as_deref() == Some(owner.as_str()) && w.namespace == top.namespace && (w.desired > 0 || w.current > 0)).collect();
                html! {
                    <div class="ks-wl" key={owner.clone()}>
                        { row(top, false) }
                        { for children.iter().map(|c| row(c, true)) }
                    </div>
                }
            }) }
        </div>
    }
}

fn pod_selection(pod: &PodView) -> Selection {
    Selection::Pod { namespace: pod.namespace.clone(), name: pod.name.clone(), uid: pod.uid.clone() }
}

fn is_selected(selection: &Selection, pod: &PodView) -> bool {
    matches!(selection, Selection::Pod { uid, .. } if *uid == pod.uid)
}

/// A pod chip.
pub fn pod_chip(pod: &PodView, selection: &Selection, on_select: &Callback<Selection>) -> Html {
    let class = status_class(&pod.status);
    let selected = is_selected(selection, pod);
    let target = pod_selection(pod);
    let onclick = on_select.reform(move |_: MouseEvent| target.clone());
    let title = format!("{}/{} · {} · {} ready · {} restarts", pod.namespace, pod.name, pod.status, pod.ready, pod.restarts);
    html! {
        <button key={pod.uid.clone()} data-pod={format!("{}/{}", pod.namespace, pod.name)} class={classes!("ks-chip", format!("s-{class}"), selected.then_some("is-selected"))} {title} {onclick}
            aria-label={format!("pod {} {}", pod.name, pod.status)} aria-pressed={selected.to_string()}>
            <span class="ks-chip-dot" aria-hidden="true" />
            <span class="ks-chip-name">{ &pod.name }</span>
            <span class="ks-chip-status">{ &pod.status }</span>
        </button>
    }
}

fn bar(label: &str, used: i64, total: i64, text: String) -> Html {
    let pct = if total > 0 { (used as f64 / total as f64 * 100.0).clamp(0.0, 100.0) } else { 0.0 };
    let level = if pct > 90.0 {
        "hot"
    } else if pct > 70.0 {
        "warm"
    } else {
        "cool"
    };
    html! {
        <div class="ks-bar" title={format!("{label}: {text} requested ({pct:.0}%)")}>
            <span class="ks-bar-label">{ label }</span>
            <span class="ks-bar-track" role="meter" aria-label={format!("{label} requested")} aria-valuemin="0" aria-valuemax="100" aria-valuenow={format!("{pct:.0}")}>
                <span class={classes!("ks-bar-fill", level)} style={format!("width:{pct:.1}%")} />
            </span>
            <span class="ks-bar-text">{ text }</span>
        </div>
    }
}

fn owner_groups<'a>(pods: &[&'a PodView]) -> Vec<(String, Vec<&'a PodView>)> {
    let mut groups: Vec<(String, Vec<&PodView>)> = Vec::new();
    for pod in pods {
        let owner = pod.owner.clone().unwrap_or_else(|| "no owner".to_string());
        match groups.iter_mut().find(|(o, _)| *o == owner) {
            Some((_, list)) => list.push(pod),
            None => groups.push((owner, vec![pod])),
        }
    }
    groups
}

fn node_card(node: &NodeView, pods: &[&PodView], props: &ClusterProps, down: bool, controls: &Controls) -> Html {
    let selected = matches!(&props.selection, Selection::Node(n) if *n == node.name);
    let name = node.name.clone();
    let select = props.on_select.reform(move |_: MouseEvent| Selection::Node(name.clone()));
    let fault = {
        let command = controls.command.clone();
        let line = if down { format!("fault node-up {}", node.name) } else { format!("fault node-down {}", node.name) };
        Callback::from(move |e: MouseEvent| {
            e.stop_propagation();
            command.emit(line.clone());
        })
    };
    let (state_class, state_text) = if !node.ready {
        ("bad", "NotReady")
    } else if down {
        ("warn", "Ready · kubelet down")
    } else if node.unschedulable {
        ("warn", "Ready · cordoned")
    } else {
        ("ok", "Ready")
    };
    let groups = owner_groups(pods);
    html! {
        <article key={node.name.clone()} class={classes!("ks-node", selected.then_some("is-selected"), (!node.ready || down).then_some("is-down"))} aria-label={format!("node {}", node.name)}>
            <header class="ks-node-head">
                <button class="ks-node-name" onclick={select} aria-pressed={selected.to_string()} title="Inspect node">
                    <span class={classes!("ks-led", state_class)} aria-hidden="true" />
                    { &node.name }
                </button>
                <span class="ks-tag">{ if node.zone.is_empty() { "no zone".to_string() } else { node.zone.clone() } }</span>
                <span class={classes!("ks-state", state_class)}>{ state_text }</span>
            </header>
            <div class="ks-bars">
                { bar("CPU", node.cpu_requested_milli, node.cpu_allocatable_milli, format!("{} / {}", cpu(node.cpu_requested_milli), cpu(node.cpu_allocatable_milli))) }
                { bar("Mem", node.memory_requested, node.memory_allocatable, format!("{} / {}", bytes(node.memory_requested), bytes(node.memory_allocatable))) }
                { bar("Pods", node.pod_count, node.pods_allocatable, format!("{} / {}", node.pod_count, node.pods_allocatable)) }
            </div>
            if !node.taints.is_empty() {
                <div class="ks-taints">{ for node.taints.iter().map(|t| html! { <span class="ks-taint" title="taint">{ t }</span> }) }</div>
            }
            <div class="ks-node-pods">
                if pods.is_empty() {
                    <span class="ks-empty">{ "no pods" }</span>
                }
                { for groups.iter().map(|(owner, list)| html! {
                    <div class="ks-group" key={owner.clone()}>
                        <span class="ks-group-label">{ owner }</span>
                        <div class="ks-chips">{ for list.iter().map(|p| pod_chip(p, &props.selection, &props.on_select)) }</div>
                    </div>
                }) }
            </div>
            <footer class="ks-node-foot">
                <button class="ks-link-button" onclick={fault} title={if down { "Restart this node's kubelet (fault node-up)" } else { "Stop this node's kubelet (fault node-down)" }}>
                    { if down { "▶ Start kubelet" } else { "■ Stop kubelet" } }
                </button>
            </footer>
        </article>
    }
}

/// The cluster view.
#[function_component(ClusterView)]
pub fn cluster_view(props: &ClusterProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let scene = &props.scene;
    if scene.pods.len() > CANVAS_THRESHOLD_PODS || scene.nodes.len() > CANVAS_THRESHOLD_NODES {
        return html! { <ClusterCanvas scene={scene.clone()} selection={props.selection.clone()} on_select={props.on_select.clone()} /> };
    }
    let unscheduled: Vec<&PodView> = scene.pods.iter().filter(|p| p.node.is_none()).collect();
    let nodes_ref = use_node_ref();
    let svg_ref = use_node_ref();
    {
        let (nodes_ref, svg_ref, network, now) = (nodes_ref.clone(), svg_ref.clone(), props.network.clone(), props.now);
        use_effect(move || {
            if let (Some(container), Some(svg)) = (nodes_ref.cast::<web_sys::Element>(), svg_ref.cast::<web_sys::Element>()) {
                draw_packets(&container, &svg, network.as_deref(), now);
            }
        });
    }
    html! {
        <section class={classes!("ks-cluster", props.compact.then_some("is-compact"))} aria-label="Nodes">
            <div class="ks-section-head">
                <h2>{ "Cluster" }</h2>
                <span class="ks-muted">{ format!("{} nodes · {} pods", scene.nodes.len(), scene.pods.len()) }</span>
                <span class="ks-legend" aria-label="Status colours">
                    <span class="s-ok"><i />{ "Running" }</span>
                    <span class="s-wait"><i />{ "Pending / creating" }</span>
                    <span class="s-done"><i />{ "Completed" }</span>
                    <span class="s-bad"><i />{ "Error / back-off" }</span>
                    <span class="s-term"><i />{ "Terminating" }</span>
                </span>
            </div>
            { workload_strip(&props.workloads, &props.selection, &props.on_select) }
            <div class="ks-nodes" ref={nodes_ref}>
                <svg class="ks-packets" ref={svg_ref} aria-hidden="true" />
                { for scene.nodes.iter().map(|node| {
                    let pods: Vec<&PodView> = scene.pods.iter().filter(|p| p.node.as_deref() == Some(node.name.as_str())).collect();
                    let down = props.nodes_down.contains(&node.name);
                    node_card(node, &pods, props, down, &controls)
                }) }
                if !unscheduled.is_empty() {
                    <article class="ks-node ks-unscheduled" aria-label="Pods not bound to a node">
                        <header class="ks-node-head">
                            <span class="ks-node-name is-static"><span class="ks-led wait" aria-hidden="true" />{ "Not scheduled" }</span>
                            <span class="ks-state wait">{ format!("{} pending", unscheduled.len()) }</span>
                        </header>
                        <div class="ks-node-pods">
                            { for owner_groups(&unscheduled).iter().map(|(owner, list)| html! {
                                <div class="ks-group" key={owner.clone()}>
                                    <span class="ks-group-label">{ owner }</span>
                                    <div class="ks-chips">{ for list.iter().map(|p| pod_chip(p, &props.selection, &props.on_select)) }</div>
                                </div>
                            }) }
                        </div>
                    </article>
                }
            </div>
        </section>
    }
}
