//! The top bar: brand, scenario picker, view tabs, cluster summary, theme.

use crate::components::app::Controls;
use crate::state::{Action, Theme, View};
use kubesim_sim::view::ClusterSnapshot;
use std::rc::Rc;
use yew::prelude::*;

/// Header props.
#[derive(Properties, PartialEq)]
pub struct HeaderProps {
    /// Current view.
    pub view: View,
    /// Current theme.
    pub theme: Theme,
    /// Current scenario title.
    pub scenario_title: AttrValue,
    /// For the summary counts.
    pub scene: Rc<ClusterSnapshot>,
    /// The store's revision.
    pub revision: u64,
}

/// The kubesim mark: a helm-like heptagon.
pub fn logo() -> Html {
    html! {
        <svg class="ks-logo" viewBox="0 0 32 32" aria-hidden="true">
            <path d="M16 2 L27.5 7.6 L30.3 20 L22.4 30 L9.6 30 L1.7 20 L4.5 7.6 Z" class="ks-logo-shape" />
            <circle cx="16" cy="16" r="4.2" class="ks-logo-hub" />
            <path d="M16 6.5 V11.8 M16 20.2 V25.5 M7 12.6 L12 14.5 M20 17.5 L25 19.4 M7 19.4 L12 17.5 M20 14.5 L25 12.6" class="ks-logo-spokes" />
        </svg>
    }
}

/// The header.
#[function_component(Header)]
pub fn header(props: &HeaderProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let tabs = View::ALL.iter().map(|&view| {
        let selected = view == props.view;
        let onclick = controls.dispatch.reform(move |_: MouseEvent| Action::SetView(view));
        html! {
            <button role="tab" class={classes!("ks-tab", selected.then_some("is-active"))} aria-selected={selected.to_string()} {onclick}>{ view.label() }</button>
        }
    });
    let open_gallery = controls.dispatch.reform(|_: MouseEvent| Action::Gallery(true));
    let toggle_theme = controls.dispatch.reform(|_: MouseEvent| Action::ToggleTheme);
    let help = controls.dispatch.reform(|_: MouseEvent| Action::Help(true));
    let share = controls.dispatch.reform(|_: MouseEvent| Action::Share(true));
    let scene = &props.scene;
    let running = scene.pods.iter().filter(|p| p.status == "Running").count();
    let ready_nodes = scene.nodes.iter().filter(|n| n.ready).count();
    html! {
        <header class="ks-header">
            <div class="ks-brand">
                { logo() }
                <span class="ks-brand-name">{ "kubesim" }</span>
            </div>
            <button class="ks-scenario" onclick={open_gallery} aria-label="Choose a scenario" title="Scenario gallery">
                <span class="ks-scenario-label">{ "Scenario" }</span>
                <span class="ks-scenario-title">{ props.scenario_title.clone() }</span>
                <span class="ks-caret" aria-hidden="true">{ "▾" }</span>
            </button>
            <nav class="ks-tabs" role="tablist" aria-label="Views">{ for tabs }</nav>
            <div class="ks-spacer" />
            <div class="ks-summary" aria-label="Cluster summary">
                <span><b>{ ready_nodes }</b>{ "/" }{ scene.nodes.len() }{ " nodes ready" }</span>
                <span><b>{ running }</b>{ "/" }{ scene.pods.len() }{ " pods running" }</span>
                <span class="ks-rev" title="etcd revision">{ "rev " }{ props.revision }</span>
            </div>
            <button class="ks-button ks-share" onclick={share} aria-label="Share a link to this moment" title="Share a link to this moment">{ "Share" }</button>
            <button class="ks-icon-button" onclick={toggle_theme} aria-label="Toggle dark theme" title="Toggle theme">
                { if props.theme == Theme::Dark { "☀" } else { "☾" } }
            </button>
            <button class="ks-icon-button" onclick={help} aria-label="Keyboard shortcuts" title="Keyboard shortcuts">{ "?" }</button>
        </header>
    }
}

/// The keyboard help overlay.
#[function_component(Help)]
pub fn help() -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let close = controls.dispatch.reform(|_: MouseEvent| Action::Help(false));
    let rows = [
        ("Space", "Play / pause"),
        ("→", "Step to the next API write"),
        ("←", "Step back to the previous API write (time travel)"),
        ("[  ]", "Slower / faster"),
        ("1 – 7", "Overview, Cluster, Lifecycle, Flow, Pods, Network, Storage"),
        ("+  −  0", "Zoom in / out / fit the canvas cluster view (when focused; arrows scroll it)"),
        ("?", "This help"),
        ("Esc", "Close overlays"),
    ];
    html! {
        <div class="ks-overlay" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" onclick={close.clone()}>
            <div class="ks-dialog ks-help" onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
                <h2>{ "Keyboard" }</h2>
                <table>
                    { for rows.iter().map(|(k, v)| html! { <tr><td><kbd>{ *k }</kbd></td><td>{ *v }</td></tr> }) }
                </table>
                <p class="ks-muted">{ "Everything on screen is read from the simulated API server's state and its write trace. Virtual time only: the same scenario and seed replay identically, so the timeline can travel backwards (from periodic snapshots of the world)." }</p>
                <button class="ks-button" onclick={close}>{ "Close" }</button>
            </div>
        </div>
    }
}

/// The share dialog's inputs.
#[derive(Properties, PartialEq)]
pub struct ShareDialogProps {
    /// The link ([`crate::share::query`]).
    pub link: String,
    /// The moment it opens at.
    pub t_ms: u64,
    /// How many of the user's inputs it replays.
    pub replayed: usize,
}

/// Share this moment: a link that reopens the app paused here (scenario, seed, view, time,
/// selection, the user's inputs), and the same as an embed snippet for a documentation page.
#[function_component(ShareDialog)]
pub fn share_dialog(props: &ShareDialogProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let copied = use_state(|| None::<&'static str>);
    let close = controls.dispatch.reform(|_: MouseEvent| Action::Share(false));
    let embed = format!(
        "<iframe src=\"{}\" width=\"100%\" height=\"520\" style=\"border:0\" title=\"kubesim\" loading=\"lazy\"></iframe>",
        props.link.replace("&autoplay=0", "&autoplay=0&embed=1").replace('"', "&quot;")
    );
    let copy = |which: &'static str, text: String| {
        let copied = copied.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(window) = web_sys::window() {
                let _ = window.navigator().clipboard().write_text(&text);
            }
            copied.set(Some(which));
        })
    };
    let select_all = Callback::from(|e: FocusEvent| {
        if let Some(input) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
            input.select();
        }
    });
    let what = match props.replayed {
        0 => "the scenario as it is".to_string(),
        1 => "the scenario and the 1 input you applied or ran, at the time you did".to_string(),
        n => format!("the scenario and the {n} inputs you applied or ran, each at the time you did"),
    };
    html! {
        <div class="ks-overlay" role="dialog" aria-modal="true" aria-labelledby="ks-share-title" onclick={close.clone()}>
            <div class="ks-dialog ks-share-dialog" onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
                <h2 id="ks-share-title">{ "Share this moment" }</h2>
                <p class="ks-muted">{ format!("The link opens paused at {} with {what}: the same seed replays the same history, so whoever opens it sees what you see, selection included.", crate::text::clock(props.t_ms)) }</p>
                <label class="ks-field">
                    <span>{ "Link" }</span>
                    <div class="ks-copy-row">
                        <input class="ks-input" readonly=true value={props.link.clone()} onfocus={select_all.clone()} aria-label="Link to this moment" />
                        <button class="ks-button" onclick={copy("link", props.link.clone())}>{ if *copied == Some("link") { "Copied" } else { "Copy" } }</button>
                    </div>
                </label>
                <label class="ks-field">
                    <span>{ "Embed in a page" }</span>
                    <div class="ks-copy-row">
                        <input class="ks-input" readonly=true value={embed.clone()} onfocus={select_all} aria-label="Embed snippet" />
                        <button class="ks-button" onclick={copy("embed", embed)}>{ if *copied == Some("embed") { "Copied" } else { "Copy" } }</button>
                    </div>
                </label>
                <button class="ks-button" onclick={close}>{ "Close" }</button>
            </div>
        </div>
    }
}
