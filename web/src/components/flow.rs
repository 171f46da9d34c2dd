//! The component flow: kubectl, the API server and its store, the controllers, the scheduler,
//! the kubelets and their container runtimes, with every API write (from the trace) and every
//! CRI call (from the world's notes) travelling between them.

use crate::engine::{FlowItem, FlowKind};
use crate::frame::Frame;
use crate::state::Selection;
use crate::text::clock;
use std::rc::Rc;
use yew::prelude::*;

const W: f64 = 1160.0;
const H: f64 = 470.0;
const MAX_NODE_SLOTS: usize = 5;

#[derive(Clone, Debug, PartialEq)]
struct Place {
    id: String,
    label: String,
    sub: String,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    kind: &'static str,
}

fn actor_kind(actor: &str) -> &'static str {
    if actor == "kubectl" {
        "user"
    } else if actor == "apiserver" {
        "api"
    } else if actor == "scheduler" || actor.contains("scheduler") {
        "sched"
    } else if actor.starts_with("kubelet/") {
        "kubelet"
    } else if actor.starts_with("cri/") {
        "cri"
    } else if actor == "fault" {
        "fault"
    } else {
        "ctrl"
    }
}

struct Layout {
    places: Vec<Place>,
    node_slots: Vec<String>,
    /// Height of the drawing (taller when the controllers need three rows).
    height: f64,
}

impl Layout {
    fn new(frame: &Frame) -> Layout {
        // Controllers and the scheduler: the components seen writing or watching so far, plus
        // the scheduler always; up to three rows of at most eight.
        let mut top: Vec<String> = frame.flow_counts.iter().map(|(a, _, _)| a.clone()).filter(|a| matches!(actor_kind(a), "ctrl" | "sched")).collect();
        if !top.iter().any(|a| a == "scheduler") {
            top.push("scheduler".into());
        }
        kubesim_api::sort::sort_by_key(&mut top, |a| (actor_kind(a) == "sched", a.clone()));
        let rows = top.len().div_ceil(8).clamp(1, 3);
        let per_row = top.len().div_ceil(rows).max(1);
        let row_h = if rows == 1 { 52.0 } else { 40.0 };
        let pitch = row_h + 8.0;
        // Everything below the controllers moves down with the extra rows.
        let dy = (rows as f64 - 1.0) * pitch - if rows > 1 { 10.0 } else { 0.0 };
        let mut places = vec![
            Place { id: "kubectl".into(), label: "kubectl".into(), sub: "you".into(), x: 110.0, y: 200.0 + dy, w: 150.0, h: 56.0, kind: "user" },
            Place {
                id: "fault".into(),
                label: "fault injector".into(),
                sub: "node-down / up".into(),
                x: 110.0,
                y: 360.0 + dy,
                w: 150.0,
                h: 56.0,
                kind: "fault",
            },
            Place {
                id: "apiserver".into(),
                label: "kube-apiserver".into(),
                sub: "admission · validation".into(),
                x: 460.0,
                y: 240.0 + dy,
                w: 180.0,
                h: 76.0,
                kind: "api",
            },
            Place {
                id: "etcd".into(),
                label: "etcd".into(),
                sub: format!("revision {}", frame.revision),
                x: 460.0,
                y: 410.0 + dy,
                w: 150.0,
                h: 52.0,
                kind: "store",
            },
        ];
        let (left, right) = (30.0, W - 30.0);
        // With several rows, odd rows are offset by half a slot so wires from the rows above
        // stay visible (the slots are narrowed so every row still fits).
        let slot = (right - left) / (per_row as f64 + if rows > 1 { 0.5 } else { 0.0 });
        for (i, actor) in top.iter().enumerate() {
            let (row, col) = (i / per_row, i % per_row);
            let shift = if row % 2 == 1 { 0.5 } else { 0.0 };
            let x = left + slot * (col as f64 + 0.5 + shift);
            let y = if rows == 1 { 58.0 } else { 30.0 + pitch * row as f64 };
            let short = actor.strip_suffix("-controller").unwrap_or(actor);
            let label = if short == "scheduler" { "kube-scheduler".to_string() } else { short.to_string() };
            let sub = if actor_kind(actor) == "ctrl" { "controller".to_string() } else { String::new() };
            places.push(Place { id: actor.clone(), label, sub, x, y, w: (slot - 10.0).min(200.0), h: row_h, kind: actor_kind(actor) });
        }
        let mut nodes: Vec<String> = frame.scene.nodes.iter().map(|n| n.name.clone()).collect();
        kubesim_api::sort::sort(&mut nodes);
        let overflow = nodes.len() > MAX_NODE_SLOTS;
        let shown: Vec<String> = if overflow { nodes[..MAX_NODE_SLOTS - 1].to_vec() } else { nodes.clone() };
        let slots = shown.len() + usize::from(overflow);
        let mut node_slots = Vec::new();
        for i in 0..slots {
            let y = 160.0 + dy + (i as f64) * (290.0 / (slots.max(2) - 1) as f64).min(76.0);
            let (name, label) =
                if i < shown.len() { (shown[i].clone(), shown[i].clone()) } else { ("…".to_string(), format!("{} more nodes", nodes.len() - shown.len())) };
            places.push(Place {
                id: format!("kubelet/{name}"),
                label: format!("kubelet · {label}"),
                sub: String::new(),
                x: 820.0,
                y,
                w: 190.0,
                h: 48.0,
                kind: "kubelet",
            });
            places.push(Place { id: format!("cri/{name}"), label: "containerd".into(), sub: "CRI".into(), x: 1065.0, y, w: 150.0, h: 48.0, kind: "cri" });
            node_slots.push(name);
        }
        Layout { places, node_slots, height: H + dy }
    }

    fn slot_of(&self, id: &str) -> String {
        // The node plugins' CSI calls (`csi/<node>`) land on the machine's runtime place, next
        // to the CRI calls they precede.
        if let Some(node) = id.strip_prefix("csi/").filter(|n| self.node_slots.iter().any(|s| s == n)) {
            return format!("cri/{node}");
        }
        for prefix in ["kubelet/", "cri/"] {
            if let Some(node) = id.strip_prefix(prefix) {
                if self.node_slots.iter().any(|n| n == node) {
                    return id.to_string();
                }
                return format!("{prefix}…");
            }
        }
        id.to_string()
    }

    fn find(&self, id: &str) -> Option<&Place> {
        let id = self.slot_of(id);
        self.places.iter().find(|p| p.id == id)
    }
}

fn edge_point(from: &Place, to: &Place) -> (f64, f64) {
    let (dx, dy) = (to.x - from.x, to.y - from.y);
    if dx.abs() < 1e-6 && dy.abs() < 1e-6 {
        return (from.x, from.y);
    }
    let tx = if dx.abs() > 1e-6 { (from.w / 2.0) / dx.abs() } else { f64::INFINITY };
    let ty = if dy.abs() > 1e-6 { (from.h / 2.0) / dy.abs() } else { f64::INFINITY };
    let t = tx.min(ty);
    (from.x + dx * t, from.y + dy * t)
}

fn segment(a: &Place, b: &Place) -> ((f64, f64), (f64, f64)) {
    (edge_point(a, b), edge_point(b, a))
}

fn lerp(a: (f64, f64), b: (f64, f64), t: f64) -> (f64, f64) {
    (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
}

fn pulse_class(item: &FlowItem) -> &'static str {
    if item.kind == FlowKind::Watch {
        "watch"
    } else if item.object.is_none() {
        "call"
    } else if item.what.starts_with("ADDED") {
        "added"
    } else if item.what.starts_with("DELETED") {
        "deleted"
    } else {
        "modified"
    }
}

fn concerns(item: &FlowItem, selection: &Selection) -> bool {
    match selection {
        Selection::Pod { namespace, name, .. } => {
            item.object.as_ref().is_some_and(|k| k.kind == "Pod" && k.namespace == *namespace && k.name == *name)
                || (item.object.is_none() && item.what.contains(&format!("{namespace}/{name}")))
        }
        Selection::Node(name) => {
            item.from == format!("kubelet/{name}")
                || item.to.ends_with(&format!("/{name}"))
                || item.object.as_ref().is_some_and(|k| k.kind == "Node" && k.name == *name)
        }
        Selection::Object(key) => item.object.as_ref() == Some(key),
        Selection::None => false,
    }
}

/// Which messages the flow view shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowFilter {
    /// API writes.
    pub writes: bool,
    /// Watch notifications.
    pub watches: bool,
    /// CRI calls and faults.
    pub calls: bool,
    /// Only messages about the selected pod, node or object.
    pub only_selected: bool,
}

impl Default for FlowFilter {
    fn default() -> FlowFilter {
        FlowFilter { writes: true, watches: true, calls: true, only_selected: false }
    }
}

impl FlowFilter {
    /// Whether `item` passes the filter.
    pub fn shows(&self, item: &FlowItem, selection: &Selection) -> bool {
        let kind = match item.kind {
            FlowKind::Write => self.writes,
            FlowKind::Watch => self.watches,
            FlowKind::Call => self.calls,
        };
        kind && (!self.only_selected || *selection == Selection::None || concerns(item, selection))
    }
}

/// Flow view props.
#[derive(Properties, PartialEq)]
pub struct FlowProps {
    /// The frame.
    pub frame: Rc<Frame>,
    /// Selection (its messages are highlighted).
    pub selection: Selection,
    /// Select something.
    pub on_select: Callback<Selection>,
}

/// The component flow view.
#[function_component(FlowView)]
pub fn flow_view(props: &FlowProps) -> Html {
    let frame = &props.frame;
    let filter = use_state(FlowFilter::default);
    let layout = Layout::new(frame);
    let count_of = |id: &str| frame.flow_counts.iter().find(|(a, _, _)| a == id).map(|(_, sent, watched)| (*sent, *watched)).unwrap_or((0, 0));
    let api = layout.find("apiserver").cloned().expect("apiserver place");
    let etcd = layout.find("etcd").cloned().expect("etcd place");
    let active: Vec<String> = frame.pulses.iter().filter(|p| p.progress < 0.35).map(|p| layout.slot_of(&p.item.from)).collect();

    // Static wires.
    let mut wires: Vec<Html> = Vec::new();
    for place in &layout.places {
        let target = match place.kind {
            "user" | "ctrl" | "sched" | "kubelet" => Some(&api),
            "api" => Some(&etcd),
            _ => None,
        };
        if let Some(target) = target {
            let (a, b) = segment(place, target);
            wires.push(html! { <line key={format!("w-{}", place.id)} x1={format!("{:.1}", a.0)} y1={format!("{:.1}", a.1)} x2={format!("{:.1}", b.0)} y2={format!("{:.1}", b.1)} class="ks-wire" /> });
        }
        if place.kind == "kubelet" {
            if let Some(cri) = layout.find(&place.id.replace("kubelet/", "cri/")) {
                let (a, b) = segment(place, cri);
                wires.push(html! { <line key={format!("c-{}", place.id)} x1={format!("{:.1}", a.0)} y1={format!("{:.1}", a.1)} x2={format!("{:.1}", b.0)} y2={format!("{:.1}", b.1)} class="ks-wire is-cri" /> });
            }
        }
        if place.kind == "fault" {
            for kubelet in layout.places.iter().filter(|p| p.kind == "kubelet").take(1) {
                let (a, b) = segment(place, kubelet);
                wires.push(html! { <line key="w-fault" x1={format!("{:.1}", a.0)} y1={format!("{:.1}", a.1)} x2={format!("{:.1}", b.0)} y2={format!("{:.1}", b.1)} class="ks-wire is-fault" /> });
            }
        }
    }

    let boxes = layout.places.iter().map(|place| {
        let (count, watched) = if place.kind == "cri" { (0, 0) } else { count_of(&place.id) };
        let activity = match (count, watched) {
            (0, 0) => "idle".to_string(),
            (0, w) => format!("{w} events in"),
            (c, 0) => format!("{c} writes"),
            (c, w) => format!("{c} writes · {w} in"),
        };
        let sub = match place.kind {
            "api" | "store" | "cri" | "fault" => place.sub.clone(),
            "ctrl" => activity,
            _ if !place.sub.is_empty() => format!("{} · {activity}", place.sub),
            _ => activity,
        };
        let flashing = active.contains(&place.id);
        let selected = match &props.selection {
            Selection::Node(n) => place.id == format!("kubelet/{n}") || place.id == format!("cri/{n}"),
            _ => false,
        };
        html! {
            <g key={place.id.clone()} class={classes!("ks-comp", format!("k-{}", place.kind), flashing.then_some("is-active"), selected.then_some("is-selected"))} role="group" aria-label={place.label.clone()}>
                <rect x={format!("{:.1}", place.x - place.w / 2.0)} y={format!("{:.1}", place.y - place.h / 2.0)} width={format!("{:.1}", place.w)} height={format!("{:.1}", place.h)} rx="10" />
                <text x={format!("{:.1}", place.x)} y={format!("{:.1}", place.y - 3.0)} text-anchor="middle" class={classes!("ks-comp-label", (place.w < 150.0).then_some("is-dense"))}>{ &place.label }</text>
                <text x={format!("{:.1}", place.x)} y={format!("{:.1}", place.y + 14.0)} text-anchor="middle" class="ks-comp-sub">{ sub }</text>
            </g>
        }
    });

    let pulses = frame.pulses.iter().filter(|p| filter.shows(&p.item, &props.selection)).filter_map(|pulse| {
        let item = &pulse.item;
        let from = layout.find(&item.from)?;
        let highlighted = concerns(item, &props.selection);
        let (x, y) = if item.kind == FlowKind::Watch {
            // etcd's watch → the API server's watch cache → the component's informer.
            let to = layout.find(&item.to)?;
            if pulse.progress < 0.3 {
                let (c, d) = segment(&etcd, &api);
                lerp(c, d, pulse.progress / 0.3)
            } else {
                let (a, b) = segment(&api, to);
                lerp(a, b, (pulse.progress - 0.3) / 0.7)
            }
        } else if item.to == "apiserver" {
            let (a, b) = segment(from, &api);
            if pulse.progress < 0.62 {
                lerp(a, b, pulse.progress / 0.62)
            } else {
                let (c, d) = segment(&api, &etcd);
                lerp(c, d, (pulse.progress - 0.62) / 0.38)
            }
        } else {
            let to = layout.find(&item.to)?;
            let (a, b) = segment(from, to);
            lerp(a, b, pulse.progress)
        };
        Some(html! {
            <circle key={pulse.id} cx={format!("{x:.1}")} cy={format!("{y:.1}")} r={if highlighted { "8" } else { "5.5" }} class={classes!("ks-pulse", pulse_class(item), highlighted.then_some("is-selected"))}>
                <title>{ format!("{} → {}: {}", item.from, item.to, item.what) }</title>
            </circle>
        })
    });

    let log =
        frame.flow_log.iter().rev().filter(|i| i.object.as_ref().is_none_or(|k| k.resource != "leases") && filter.shows(i, &props.selection)).take(80).map(
            |item| {
                let highlighted = concerns(item, &props.selection);
                let select = item.object.clone().map(|key| {
                    let scene_pod = frame.scene.pods.iter().find(|p| key.kind == "Pod" && p.namespace == key.namespace && p.name == key.name);
                    match (key.kind.as_str(), scene_pod) {
                        ("Pod", Some(p)) => Selection::Pod { namespace: p.namespace.clone(), name: p.name.clone(), uid: p.uid.clone() },
                        ("Node", _) => Selection::Node(key.name.clone()),
                        _ => Selection::Object(key),
                    }
                });
                let onclick = select.map(|s| props.on_select.reform(move |_: MouseEvent| s.clone()));
                html! {
                    <tr class={classes!(highlighted.then_some("is-selected"), onclick.is_some().then_some("is-clickable"))} onclick={onclick}>
                        <td class="ks-mono">{ clock(item.t_ms) }</td>
                        <td class="ks-mono">{ &item.from }</td>
                        <td class="ks-mono">{ &item.to }</td>
                        <td><span class={classes!("ks-dot", pulse_class(item))} />{ &item.what }</td>
                    </tr>
                }
            },
        );

    html! {
        <section class="ks-flow" aria-label="Component flow">
            <div class="ks-section-head">
                <h2>{ "Component flow" }</h2>
                <span class="ks-muted">{ "API writes (from the trace), watch events to each informer, and container-runtime calls, as they happen" }</span>
                <span class="ks-legend">
                    <span class="f-added"><i />{ "created" }</span>
                    <span class="f-modified"><i />{ "updated" }</span>
                    <span class="f-deleted"><i />{ "deleted" }</span>
                    <span class="f-watch"><i />{ "watch event" }</span>
                    <span class="f-call"><i />{ "CRI call" }</span>
                </span>
            </div>
            <div class="ks-flow-filters" role="group" aria-label="Which messages to show">
                { toggle(&filter, "writes", "API writes", |f| &mut f.writes) }
                { toggle(&filter, "watches", "watch events", |f| &mut f.watches) }
                { toggle(&filter, "calls", "CRI calls", |f| &mut f.calls) }
                { toggle(&filter, "only", "only the selected object", |f| &mut f.only_selected) }
            </div>
            <svg class="ks-flow-svg" viewBox={format!("0 0 {W} {:.0}", layout.height)} role="img" aria-label="Components and the messages between them">
                <g>{ for wires }</g>
                <g>{ for boxes }</g>
                <g>{ for pulses }</g>
            </svg>
            <div class="ks-flow-log">
                <table class="ks-table">
                    <thead><tr><th>{ "TIME" }</th><th>{ "FROM" }</th><th>{ "TO" }</th><th>{ "MESSAGE" }</th></tr></thead>
                    <tbody>{ for log }</tbody>
                </table>
            </div>
        </section>
    }
}

fn toggle(filter: &UseStateHandle<FlowFilter>, id: &str, label: &str, field: fn(&mut FlowFilter) -> &mut bool) -> Html {
    let mut current = **filter;
    let checked = *field(&mut current);
    let onchange = {
        let filter = filter.clone();
        Callback::from(move |_: Event| {
            let mut next = *filter;
            let value = field(&mut next);
            *value = !*value;
            filter.set(next);
        })
    };
    html! {
        <label>
            <input type="checkbox" id={format!("ks-flow-{id}")} checked={checked} onchange={onchange} />
            { label }
        </label>
    }
}
