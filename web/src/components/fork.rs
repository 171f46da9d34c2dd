//! "What if?": a fork of the history next to the original — the bar that says where it
//! branched, what was done to it and which branch the editor and console act on; both clusters
//! side by side; and what differs between them (objects, fields, events).

use crate::components::app::{Controls, ForkCommand};
use crate::components::cluster::ClusterView;
use crate::frame::Frame;
use crate::state::{ForkState, Selection};
use crate::text::clock;
use kubesim_sim::diff::{ChangedObject, EventLine, WorldDiff};
use kubesim_sim::view::ObjectKey;
use std::rc::Rc;
use yew::prelude::*;

/// At most this many entries are listed per section of the comparison.
const MAX_LISTED: usize = 40;

/// Fork bar props.
#[derive(Properties, PartialEq)]
pub struct ForkBarProps {
    /// The fork.
    pub fork: ForkState,
}

/// The bar over the stage while a fork is open.
#[function_component(ForkBar)]
pub fn fork_bar(props: &ForkBarProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let fork = &props.fork;
    let target = |to_fork: bool, label: &'static str| {
        let onclick = controls.fork.reform(move |_: MouseEvent| ForkCommand::Target(to_fork));
        let active = fork.to_fork == to_fork;
        html! { <button class={classes!("ks-segbtn", active.then_some("is-active"))} aria-pressed={active.to_string()} {onclick}>{ label }</button> }
    };
    let close = controls.fork.reform(|_: MouseEvent| ForkCommand::Close);
    // Another roll of the dice for the fork: a seed derived from what it has seen (so the
    // same clicks give the same seeds), through the console like any other command.
    let reroll = {
        let command = controls.command.clone();
        let seed = 1 + fork.at_ms.wrapping_mul(31).wrapping_add(fork.label.len() as u64);
        Callback::from(move |_: MouseEvent| command.emit(format!("reseed {seed}")))
    };
    let changed = if fork.label.is_empty() {
        html! { <span class="ks-muted">{ "nothing done to the fork yet: apply a change, run a command or a fault (try " }<code>{ "fault node-down node-2" }</code>{ " or " }<code>{ "reseed 7" }</code>{ ")" }</span> }
    } else {
        html! { <span class="ks-fork-label" title={fork.label.clone()}>{ fork.label.clone() }</span> }
    };
    html! {
        <div class="ks-fork-bar" role="region" aria-label="What if? fork">
            <span class="ks-fork-title">{ "What if?" }</span>
            <span class="ks-fork-at">{ format!("forked at {}", clock(fork.at_ms)) }</span>
            { changed }
            <span class="ks-spacer" />
            <span class="ks-fork-target" role="group" aria-label="The editor and the console act on">
                <span class="ks-muted">{ "acting on" }</span>
                { target(false, "Original") }
                { target(true, "Fork") }
            </span>
            if fork.to_fork {
                <button class="ks-button ks-small" onclick={reroll} title="Give the fork another seed from now on: the same cluster, other names, IPs, endpoint choices and timings">{ "Reroll dice" }</button>
            }
            <button class="ks-button ks-small" onclick={close} aria-label="Close the fork">{ "Close fork" }</button>
        </div>
    }
}

/// Comparison props.
#[derive(Properties, PartialEq)]
pub struct ForkCompareProps {
    /// The original's frame.
    pub frame: Rc<Frame>,
    /// The fork.
    pub fork: ForkState,
    /// Selection (in the original).
    pub selection: Selection,
    /// Select something (in the original).
    pub on_select: Callback<Selection>,
}

/// Both clusters side by side, and what differs.
#[function_component(ForkCompare)]
pub fn fork_compare(props: &ForkCompareProps) -> Html {
    let (frame, fork) = (&props.frame, &props.fork);
    let ignore = Callback::from(|_: Selection| {});
    let summary = |f: &Frame| {
        let running = f.scene.pods.iter().filter(|p| p.status == "Running").count();
        let ready = f.scene.nodes.iter().filter(|n| n.ready).count();
        format!("{ready}/{} nodes ready · {running}/{} pods running", f.scene.nodes.len(), f.scene.pods.len())
    };
    html! {
        <div class="ks-fork">
            <div class="ks-fork-sides">
                <section class="ks-fork-side" aria-label="The original">
                    <h3>{ "Original" }<span class="ks-muted">{ summary(frame) }</span></h3>
                    <ClusterView scene={frame.scene.clone()} workloads={frame.workloads.clone()} selection={props.selection.clone()} on_select={props.on_select.clone()} compact=true network={frame.network.clone()} now={frame.t_ms} nodes_down={frame.nodes_down.clone()} />
                </section>
                <section class="ks-fork-side is-fork" aria-label="The fork">
                    <h3>{ "Fork" }<span class="ks-muted">{ summary(&fork.frame) }</span></h3>
                    <ClusterView scene={fork.frame.scene.clone()} workloads={fork.frame.workloads.clone()} selection={Selection::None} on_select={ignore} compact=true network={fork.frame.network.clone()} now={fork.frame.t_ms} nodes_down={fork.frame.nodes_down.clone()} />
                </section>
            </div>
            <DiffPanel diff={fork.diff.clone()} />
        </div>
    }
}

/// Diff props.
#[derive(Properties, PartialEq)]
pub struct DiffPanelProps {
    /// The comparison.
    pub diff: Rc<WorldDiff>,
}

fn more(total: usize) -> Html {
    if total > MAX_LISTED {
        html! { <li class="ks-muted">{ format!("and {} more", total - MAX_LISTED) }</li> }
    } else {
        html! {}
    }
}

fn keys(title: &str, keys: &[ObjectKey], class: &'static str) -> Html {
    if keys.is_empty() {
        return html! {};
    }
    html! {
        <details class="ks-wdiff-section" open={keys.len() <= 12}>
            <summary>{ format!("{title} ({})", keys.len()) }</summary>
            <ul class={classes!("ks-wdiff-keys", class)}>
                { for keys.iter().take(MAX_LISTED).map(|k| html! { <li><code>{ k.display() }</code></li> }) }
                { more(keys.len()) }
            </ul>
        </details>
    }
}

fn changed(objects: &[ChangedObject]) -> Html {
    if objects.is_empty() {
        return html! {};
    }
    html! {
        <details class="ks-wdiff-section" open=true>
            <summary>{ format!("Changed in both ({})", objects.len()) }</summary>
            { for objects.iter().take(MAX_LISTED).map(|o| html! {
                <div class="ks-wdiff-object">
                    <code class="ks-wdiff-key">{ o.key.display() }</code>
                    <table class="ks-wdiff-fields">
                        <thead><tr><th>{ "field" }</th><th>{ "original" }</th><th>{ "fork" }</th></tr></thead>
                        <tbody>
                            { for o.fields.iter().map(|f| html! { <tr><td><code>{ f.path.clone() }</code></td><td class="is-a">{ f.a.clone() }</td><td class="is-b">{ f.b.clone() }</td></tr> }) }
                        </tbody>
                    </table>
                    if o.total > o.fields.len() {
                        <div class="ks-muted">{ format!("and {} more fields", o.total - o.fields.len()) }</div>
                    }
                </div>
            }) }
            <ul>{ more(objects.len()) }</ul>
        </details>
    }
}

fn events(title: &str, events: &[EventLine]) -> Html {
    if events.is_empty() {
        return html! {};
    }
    html! {
        <details class="ks-wdiff-section" open={events.len() <= 12}>
            <summary>{ format!("{title} ({})", events.len()) }</summary>
            <ul class="ks-wdiff-events">
                { for events.iter().take(MAX_LISTED).map(|e| html! {
                    <li class={classes!((e.type_ == "Warning").then_some("is-warning"))}>
                        <b>{ e.reason.clone() }</b>{ " " }<code>{ e.object.clone() }</code>{ " " }{ e.message.clone() }
                        if e.count > 1 { <span class="ks-muted">{ format!(" ×{}", e.count) }</span> }
                    </li>
                }) }
                { more(events.len()) }
            </ul>
        </details>
    }
}

/// What differs between the original and the fork.
#[function_component(DiffPanel)]
pub fn diff_panel(props: &DiffPanelProps) -> Html {
    let diff = &props.diff;
    html! {
        <section class="ks-wdiff" aria-label="What differs">
            <h3>{ "What differs" }</h3>
            if diff.is_empty() {
                <p class="ks-muted">{ "Nothing yet: both branches hold the same objects and events." }</p>
            } else {
                <p class="ks-muted">{ format!(
                    "{} changed · {} only in the original · {} only in the fork · {} events only in the original · {} only in the fork",
                    diff.changed.len(), diff.only_a.len(), diff.only_b.len(), diff.events_a.len(), diff.events_b.len()
                ) }</p>
                { changed(&diff.changed) }
                { keys("Only in the original", &diff.only_a, "is-a") }
                { keys("Only in the fork", &diff.only_b, "is-b") }
                { events("Events only in the original", &diff.events_a) }
                { events("Events only in the fork", &diff.events_b) }
            }
        </section>
    }
}
