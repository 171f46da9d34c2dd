//! The pod lifecycle graph: one node per `view::Lifecycle` state with the pods currently in it,
//! edges labelled with how many pods took them, pods moving along edges as the trace records
//! their status changes, and the selected pod's path with virtual timestamps.

use crate::components::app::Controls;
use crate::frame::Frame;
use crate::port::{use_query, Answer, Query};
use crate::state::Selection;
use crate::text::clock;
use kubesim_sim::view::{Lifecycle, PodView};
use std::rc::Rc;
use yew::prelude::*;

const W: f64 = 1160.0;
const H: f64 = 372.0;
const HW: f64 = 71.0;
const HH: f64 = 25.0;

/// Where each state sits.
pub fn position(state: Option<Lifecycle>, to: bool) -> (f64, f64) {
    match state {
        None if to => (1128.0, 355.0),
        None => (22.0, 186.0),
        Some(s) => match s {
            Lifecycle::SchedulingGated => (125.0, 52.0),
            Lifecycle::Pending => (125.0, 186.0),
            Lifecycle::Unschedulable => (125.0, 320.0),
            Lifecycle::Scheduled => (310.0, 186.0),
            Lifecycle::Initializing => (495.0, 52.0),
            Lifecycle::ContainerCreating => (495.0, 186.0),
            Lifecycle::ImagePullBackOff => (495.0, 320.0),
            Lifecycle::Running => (680.0, 186.0),
            Lifecycle::CrashLoopBackOff => (680.0, 320.0),
            Lifecycle::Terminating => (865.0, 52.0),
            Lifecycle::Ready => (865.0, 186.0),
            Lifecycle::OOMKilled => (865.0, 320.0),
            Lifecycle::Succeeded => (1050.0, 106.0),
            Lifecycle::Failed => (1050.0, 196.0),
            Lifecycle::Evicted => (1050.0, 286.0),
        },
    }
}

/// The colour class of a state.
pub fn category(state: Lifecycle) -> &'static str {
    match state {
        Lifecycle::Pending | Lifecycle::SchedulingGated | Lifecycle::Scheduled | Lifecycle::ContainerCreating | Lifecycle::Initializing => "wait",
        Lifecycle::Running => "warm",
        Lifecycle::Ready => "ok",
        Lifecycle::Succeeded => "done",
        Lifecycle::Terminating => "term",
        Lifecycle::Unschedulable
        | Lifecycle::ImagePullBackOff
        | Lifecycle::CrashLoopBackOff
        | Lifecycle::Failed
        | Lifecycle::Evicted
        | Lifecycle::OOMKilled => "bad",
    }
}

/// The edges drawn even before any pod takes them.
pub const BACKBONE: [(Lifecycle, Lifecycle); 16] = [
    (Lifecycle::SchedulingGated, Lifecycle::Pending),
    (Lifecycle::Pending, Lifecycle::Scheduled),
    (Lifecycle::Pending, Lifecycle::Unschedulable),
    (Lifecycle::Unschedulable, Lifecycle::Scheduled),
    (Lifecycle::Scheduled, Lifecycle::ContainerCreating),
    (Lifecycle::Scheduled, Lifecycle::Initializing),
    (Lifecycle::Initializing, Lifecycle::ContainerCreating),
    (Lifecycle::ContainerCreating, Lifecycle::ImagePullBackOff),
    (Lifecycle::ContainerCreating, Lifecycle::Running),
    (Lifecycle::Running, Lifecycle::Ready),
    (Lifecycle::Running, Lifecycle::CrashLoopBackOff),
    (Lifecycle::CrashLoopBackOff, Lifecycle::Running),
    (Lifecycle::Ready, Lifecycle::Terminating),
    (Lifecycle::Running, Lifecycle::Succeeded),
    (Lifecycle::Running, Lifecycle::Failed),
    (Lifecycle::Ready, Lifecycle::OOMKilled),
];

struct Curve {
    start: (f64, f64),
    control: (f64, f64),
    end: (f64, f64),
}

impl Curve {
    fn at(&self, t: f64) -> (f64, f64) {
        let u = 1.0 - t;
        (u * u * self.start.0 + 2.0 * u * t * self.control.0 + t * t * self.end.0, u * u * self.start.1 + 2.0 * u * t * self.control.1 + t * t * self.end.1)
    }
    fn path(&self) -> String {
        format!("M{:.1},{:.1} Q{:.1},{:.1} {:.1},{:.1}", self.start.0, self.start.1, self.control.0, self.control.1, self.end.0, self.end.1)
    }
}

fn boundary(center: (f64, f64), toward: (f64, f64), is_point: bool) -> (f64, f64) {
    if is_point {
        return center;
    }
    let (dx, dy) = (toward.0 - center.0, toward.1 - center.1);
    if dx.abs() < 1e-6 && dy.abs() < 1e-6 {
        return center;
    }
    let tx = if dx.abs() > 1e-6 { (HW + 3.0) / dx.abs() } else { f64::INFINITY };
    let ty = if dy.abs() > 1e-6 { (HH + 3.0) / dy.abs() } else { f64::INFINITY };
    let t = tx.min(ty);
    (center.0 + dx * t, center.1 + dy * t)
}

fn curve(from: Option<Lifecycle>, to: Option<Lifecycle>, bend: f64) -> Curve {
    let a = position(from, false);
    let b = position(to, true);
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let (nx, ny) = (-dy / len, dx / len);
    let control = ((a.0 + b.0) / 2.0 + nx * bend, (a.1 + b.1) / 2.0 + ny * bend);
    Curve { start: boundary(a, control, from.is_none()), control, end: boundary(b, control, to.is_none()) }
}

fn bend_for(from: Option<Lifecycle>, to: Option<Lifecycle>, both_ways: bool) -> f64 {
    let a = position(from, false);
    let b = position(to, true);
    let long_straight = (a.1 - b.1).abs() < 1.0 && (a.0 - b.0).abs() > 200.0;
    let mut bend = if both_ways { 20.0 } else { 0.0 };
    if long_straight {
        bend += 70.0;
    }
    if from.is_none() || to.is_none() {
        bend = 0.0;
    }
    bend
}

/// `1 pod`, `3 pods`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn ease(t: f64) -> f64 {
    if t < 0.5 {
        2.0 * t * t
    } else {
        1.0 - (-2.0 * t + 2.0).powi(2) / 2.0
    }
}

/// Lifecycle view props.
#[derive(Properties, PartialEq)]
pub struct LifecycleProps {
    /// The frame.
    pub frame: Rc<Frame>,
    /// Selection.
    pub selection: Selection,
    /// Select something.
    pub on_select: Callback<Selection>,
    /// Show the log of recent transitions under the graph (the full view).
    #[prop_or_default]
    pub show_log: bool,
}

/// The lifecycle graph.
#[function_component(LifecycleView)]
pub fn lifecycle_view(props: &LifecycleProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let frame = &props.frame;
    let pods = &frame.scene.pods;
    let selected_uid = match &props.selection {
        Selection::Pod { uid, .. } => Some(uid.clone()),
        _ => None,
    };
    let path = use_query(&controls.port, selected_uid.clone().map(Query::PodPath), (frame.t_ms, frame.generation));
    let path = match &*path {
        Answer::PodPath(path) => path.clone(),
        _ => None,
    };
    let path_edges: Vec<(Option<Lifecycle>, Option<Lifecycle>)> = path
        .as_ref()
        .map(|p| {
            let mut edges = Vec::new();
            let mut previous = None;
            for (_, state, _, _) in &p.steps {
                edges.push((previous, Some(*state)));
                previous = Some(*state);
            }
            if p.deleted_ms.is_some() {
                edges.push((previous, None));
            }
            edges
        })
        .unwrap_or_default();

    // Edges: the backbone plus everything observed.
    let mut edges: Vec<(Option<Lifecycle>, Option<Lifecycle>, u32)> = BACKBONE.iter().map(|(a, b)| (Some(*a), Some(*b), 0)).collect();
    for (from, to, count) in frame.edges.iter() {
        match edges.iter_mut().find(|(a, b, _)| a == from && b == to) {
            Some(edge) => edge.2 = *count,
            None => edges.push((*from, *to, *count)),
        }
    }
    let has = |a: Option<Lifecycle>, b: Option<Lifecycle>| edges.iter().any(|(x, y, _)| *x == a && *y == b);
    let edge_html = edges.iter().map(|(from, to, count)| {
        let c = curve(*from, *to, bend_for(*from, *to, has(*to, *from)));
        let on_path = path_edges.contains(&(*from, *to));
        let class = classes!("ks-edge", (*count > 0).then_some("is-used"), on_path.then_some("is-path"), (from.is_none() || to.is_none()).then_some("is-terminal"));
        let mid = c.at(0.5);
        html! {
            <g key={format!("{from:?}-{to:?}")}>
                <path d={c.path()} class={class} marker-end={if on_path { "url(#ks-arrow-path)" } else if *count > 0 { "url(#ks-arrow-used)" } else { "url(#ks-arrow)" }} />
                if *count > 0 && from.is_some() && to.is_some() {
                    <g class="ks-edge-count" transform={format!("translate({:.1},{:.1})", mid.0, mid.1)}>
                        <rect x={format!("{:.1}", -edge_pill(*count) / 2.0)} y="-9" width={format!("{:.1}", edge_pill(*count))} height="18" rx="9" />
                        <text y="4" text-anchor="middle">{ count }</text>
                    </g>
                }
            </g>
        }
    });

    let moving: Vec<&str> = frame.movers.iter().filter(|m| m.progress < 1.0).map(|m| m.uid.as_str()).collect();
    let state_html = Lifecycle::ALL.iter().map(|&state| {
        let (x, y) = position(Some(state), false);
        let here: Vec<&PodView> = pods.iter().filter(|p| p.lifecycle == state).collect();
        let count = here.len();
        let settled: Vec<&&PodView> = here.iter().filter(|p| !moving.contains(&p.uid.as_str())).collect();
        let is_current = selected_uid.as_ref().is_some_and(|uid| here.iter().any(|p| p.uid == *uid));
        let on_path = path.as_ref().is_some_and(|p| p.steps.iter().any(|(_, s, _, _)| *s == state));
        let class = classes!("ks-state-node", format!("c-{}", category(state)), (count > 0).then_some("is-occupied"), is_current.then_some("is-current"), on_path.then_some("is-path"));
        // As many dots as fit beside the count (and the "+N" after them).
        let digits = |n: usize| n.to_string().len() as f64;
        let big = count >= 1000;
        let count_w = digits(count) * if big { 9.0 } else { 12.0 };
        let room = HW * 2.0 - 31.0 - count_w;
        let shown = (0..=settled.len().min(10))
            .rev()
            .find(|&n| n as f64 * 10.0 + if settled.len() > n { (1.0 + digits(settled.len() - n)) * 6.5 + 4.0 } else { 0.0 } <= room)
            .unwrap_or(0);
        let dots = settled.iter().take(shown).enumerate().map(|(i, pod)| {
            let dx = x - HW + 15.0 + (i as f64) * 10.0;
            let dy = y + 10.0;
            let selected = selected_uid.as_deref() == Some(pod.uid.as_str());
            let target = Selection::Pod { namespace: pod.namespace.clone(), name: pod.name.clone(), uid: pod.uid.clone() };
            let onclick = props.on_select.reform(move |_: MouseEvent| target.clone());
            html! {
                <circle key={pod.uid.clone()} cx={format!("{dx:.1}")} cy={format!("{dy:.1}")} r={if selected { "5" } else { "3.6" }} class={classes!("ks-pod-dot", selected.then_some("is-selected"))} {onclick}>
                    <title>{ format!("{} ({})", pod.name, pod.status) }</title>
                </circle>
            }
        });
        html! {
            <g key={format!("{state:?}")} class={class} role="group" aria-label={format!("{}: {} pods", state.label(), count)}>
                <rect x={format!("{:.1}", x - HW)} y={format!("{:.1}", y - HH)} width={format!("{:.1}", HW * 2.0)} height={format!("{:.1}", HH * 2.0)} rx="12" />
                <text x={format!("{:.1}", x - HW + 11.0)} y={format!("{:.1}", y - 6.0)} class={classes!("ks-state-label", (state.label().len() > 18).then_some("is-long"))}>{ state.label() }</text>
                <text x={format!("{:.1}", x + HW - 10.0)} y={format!("{:.1}", y + 18.0)} text-anchor="end" class={classes!("ks-state-count", big.then_some("is-big"))}>{ count }</text>
                { for dots }
                if settled.len() > shown {
                    <text x={format!("{:.1}", x - HW + 15.0 + 10.0 * shown as f64)} y={format!("{:.1}", y + 15.0)} class="ks-state-more">{ format!("+{}", settled.len() - shown) }</text>
                }
            </g>
        }
    });

    let movers = frame.movers.iter().filter(|m| m.progress < 1.0).map(|m| {
        let c = curve(m.from, m.to, bend_for(m.from, m.to, has(m.to, m.from)));
        let (x, y) = c.at(ease(m.progress));
        let selected = selected_uid.as_deref() == Some(m.uid.as_str());
        let cat = m.to.map(category).unwrap_or("gone");
        html! { <circle key={m.id} cx={format!("{x:.1}")} cy={format!("{y:.1}")} r={if selected { "7" } else { "5" }} class={classes!("ks-mover", format!("c-{cat}"), selected.then_some("is-selected"))} /> }
    });

    let path_strip = match (&path, &props.selection) {
        (Some(path), _) => html! {
            <div class="ks-path" aria-label="Selected pod's path">
                <span class="ks-path-title">{ &path.pod }</span>
                <ol class="ks-path-steps">
                    { for path.steps.iter().map(|(t, state, status, actor)| html! {
                        <li class={format!("c-{}", category(*state))} title={format!("written by {actor}")}>
                            <span class="ks-path-state">{ state.label() }</span>
                            <span class="ks-path-time">{ clock(*t) }</span>
                            <span class="ks-path-status">{ status }</span>
                        </li>
                    }) }
                    if let Some(t) = path.deleted_ms {
                        <li class="c-gone"><span class="ks-path-state">{ "deleted" }</span><span class="ks-path-time">{ clock(t) }</span></li>
                    }
                </ol>
            </div>
        },
        _ => {
            html! { <div class="ks-path is-hint">{ "Click a pod (a chip or a dot) to follow its path through the graph, with the virtual time of every step." }</div> }
        }
    };

    let log = if props.show_log {
        let transitions = &frame.recent_transitions;
        let rows: Vec<Html> = transitions
            .iter()
            .rev()
            .take(60)
            .map(|t| {
                let selected = selected_uid.as_deref() == Some(t.uid.as_str());
                let pod = frame.scene.pods.iter().find(|p| p.uid == t.uid);
                let onclick = pod.map(|p| {
                    let target = Selection::Pod { namespace: p.namespace.clone(), name: p.name.clone(), uid: p.uid.clone() };
                    props.on_select.reform(move |_: MouseEvent| target.clone())
                });
                let state = |s: Option<Lifecycle>, end: &str| match s {
                    Some(s) => html! { <span class={classes!("ks-status-pill", format!("c-{}", category(s)))}>{ s.label() }</span> },
                    None => html! { <span class="ks-muted">{ end.to_string() }</span> },
                };
                let onkeydown = onclick.as_ref().map(crate::components::click_on_key);
                let tabindex = onclick.as_ref().map(|_| "0");
                html! {
                    <tr key={t.seq} class={classes!(onclick.is_some().then_some("is-clickable"), selected.then_some("is-selected"))} {tabindex} onclick={onclick} {onkeydown}>
                        <td class="ks-mono">{ clock(t.t_ms) }</td>
                        <td class="ks-mono">{ &t.pod }</td>
                        <td>{ state(t.from, "created") }{ " → " }{ state(t.to, "deleted") }</td>
                    </tr>
                }
            })
            .collect();
        html! {
            <div class="ks-transitions">
                <h4>{ "Recent transitions" }</h4>
                <table class="ks-table">
                    <thead><tr><th>{ "TIME" }</th><th>{ "POD" }</th><th>{ "TRANSITION" }</th></tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            </div>
        }
    } else {
        html! {}
    };

    html! {
        <section class="ks-lifecycle" aria-label="Pod lifecycle graph">
            <div class="ks-section-head">
                <h2>{ "Pod lifecycle" }</h2>
                <span class="ks-muted">{ format!("{} · {}", plural(pods.len(), "pod"), plural(frame.edges.iter().map(|e| e.2 as usize).sum::<usize>(), "transition")) }</span>
            </div>
            <svg class="ks-graph" viewBox={format!("0 0 {W} {H}")} role="img" aria-label="States a pod passes through, with the number of pods in each">
                <defs>
                    <marker id="ks-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="ks-arrow" /></marker>
                    <marker id="ks-arrow-used" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="ks-arrow-used" /></marker>
                    <marker id="ks-arrow-path" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="ks-arrow-path" /></marker>
                </defs>
                <g class="ks-terminals">
                    <circle cx="22" cy="186" r="6" class="ks-terminal" />
                    <text x="22" y="210" text-anchor="middle" class="ks-terminal-label">{ "created" }</text>
                    <circle cx="1128" cy="355" r="6" class="ks-terminal" />
                    <text x="1128" y="340" text-anchor="middle" class="ks-terminal-label">{ "deleted" }</text>
                </g>
                <g>{ for edge_html }</g>
                <g>{ for state_html }</g>
                <g>{ for movers }</g>
            </svg>
            { path_strip }
            { log }
        </section>
    }
}

/// Width of an edge's count pill.
fn edge_pill(count: u32) -> f64 {
    (count.to_string().len() as f64 * 7.0 + 10.0).max(26.0)
}
