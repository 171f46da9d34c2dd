//! The pods table: searchable, sortable, filterable by status.

use crate::state::Selection;
use crate::text::{clock, status_class};
use kubesim_sim::view::{ClusterSnapshot, PodView};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Pods view props.
#[derive(Properties, PartialEq)]
pub struct PodsProps {
    /// Nodes and pods.
    pub scene: Rc<ClusterSnapshot>,
    /// Selection.
    pub selection: Selection,
    /// Select something.
    pub on_select: Callback<Selection>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Column {
    Name,
    Ready,
    Status,
    Restarts,
    Node,
    Age,
}

/// The pods table.
#[function_component(PodsView)]
pub fn pods_view(props: &PodsProps) -> Html {
    let query = use_state(String::new);
    let filter = use_state(|| "all".to_string());
    let sort = use_state(|| (Column::Name, true));
    let on_query = {
        let query = query.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
                query.set(input.value());
            }
        })
    };
    let on_filter = {
        let filter = filter.clone();
        Callback::from(move |e: Event| {
            if let Some(select) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok()) {
                filter.set(select.value());
            }
        })
    };
    let now = props.scene.t_ms;
    let q = query.to_ascii_lowercase();
    let mut pods: Vec<&PodView> = props
        .scene
        .pods
        .iter()
        .filter(|p| q.is_empty() || p.name.contains(&q) || p.node.as_deref().is_some_and(|n| n.contains(&q)) || p.labels.iter().any(|l| l.contains(&q)) || p.status.to_ascii_lowercase().contains(&q))
        .filter(|p| *filter == "all" || status_class(&p.status) == filter.as_str())
        .collect();
    let (column, ascending) = *sort;
    kubesim_api::sort::sort_by(&mut pods, |a, b| {
        let ordering = match column {
            Column::Name => (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)),
            Column::Ready => a.ready.cmp(&b.ready),
            Column::Status => a.status.cmp(&b.status),
            Column::Restarts => a.restarts.cmp(&b.restarts),
            Column::Node => a.node.cmp(&b.node),
            Column::Age => b.created_ms.cmp(&a.created_ms),
        };
        if ascending { ordering } else { ordering.reverse() }
    });
    let header = |label: &str, col: Column| {
        let sort = sort.clone();
        let active = column == col;
        let arrow = if active { if ascending { " ▲" } else { " ▼" } } else { "" };
        let onclick = Callback::from(move |_: MouseEvent| {
            let (c, asc) = *sort;
            sort.set((col, if c == col { !asc } else { true }));
        });
        html! { <th aria-sort={if active { if ascending { "ascending" } else { "descending" } } else { "none" }}><button class="ks-th" {onclick}>{ label }{ arrow }</button></th> }
    };
    html! {
        <section class="ks-pods" aria-label="Pods">
            <div class="ks-section-head">
                <h2>{ "Pods" }</h2>
                <input class="ks-input ks-search" type="search" placeholder="Search name, node, label, status" value={(*query).clone()} oninput={on_query} aria-label="Search pods" />
                <select class="ks-select" onchange={on_filter} aria-label="Filter by status">
                    { for [("all", "All statuses"), ("ok", "Running"), ("wait", "Pending / creating"), ("done", "Completed"), ("bad", "Errors / back-off"), ("term", "Terminating")].iter().map(|(v, l)| html! { <option value={*v} selected={*filter == *v}>{ *l }</option> }) }
                </select>
                <span class="ks-muted">{ format!("{} of {}", pods.len(), props.scene.pods.len()) }</span>
            </div>
            <div class="ks-table-wrap">
                <table class="ks-table ks-pod-table">
                    <thead><tr>
                        { header("NAME", Column::Name) }{ header("READY", Column::Ready) }{ header("STATUS", Column::Status) }{ header("RESTARTS", Column::Restarts) }
                        { header("AGE", Column::Age) }<th>{ "IP" }</th>{ header("NODE", Column::Node) }<th>{ "OWNER" }</th>
                    </tr></thead>
                    <tbody>
                        { for pods.iter().take(1000).map(|p| {
                            let selected = matches!(&props.selection, Selection::Pod { uid, .. } if *uid == p.uid);
                            let target = Selection::Pod { namespace: p.namespace.clone(), name: p.name.clone(), uid: p.uid.clone() };
                            let onclick = props.on_select.reform(move |_: MouseEvent| target.clone());
                            html! {
                                <tr key={p.uid.clone()} class={classes!("is-clickable", selected.then_some("is-selected"))} {onclick}>
                                    <td class="ks-mono">{ &p.name }</td>
                                    <td>{ &p.ready }</td>
                                    <td><span class={classes!("ks-status-pill", format!("s-{}", status_class(&p.status)))}>{ &p.status }</span></td>
                                    <td>{ p.restarts }</td>
                                    <td class="ks-mono">{ crate::text::short_duration(now.saturating_sub(p.created_ms)) }</td>
                                    <td class="ks-mono">{ p.ip.clone().unwrap_or_else(|| "<none>".into()) }</td>
                                    <td class="ks-mono">{ p.node.clone().unwrap_or_else(|| "<none>".into()) }</td>
                                    <td class="ks-muted">{ p.owner.clone().unwrap_or_default() }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
            </div>
            <p class="ks-muted ks-foot-note">{ format!("Snapshot at {}", clock(now)) }</p>
        </section>
    }
}
