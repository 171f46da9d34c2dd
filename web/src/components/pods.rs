//! The pods table: searchable, sortable, filterable by namespace, label selector (kubectl's
//! `-l` syntax), node, status and owner. At most 1,000 rows are drawn.

use crate::components::{distinct, filter_select, set_from_input, set_from_select};
use crate::state::Selection;
use crate::text::{clock, status_class};
use kubesim_sim::view::{ClusterSnapshot, PodView};
use std::rc::Rc;
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
    let namespace = use_state(|| "all".to_string());
    let node = use_state(|| "all".to_string());
    let owner = use_state(|| "all".to_string());
    let labels = use_state(String::new);
    let sort = use_state(|| (Column::Name, true));
    let (on_query, on_filter, on_labels) = (set_from_input(&query), set_from_select(&filter), set_from_input(&labels));
    let now = props.scene.t_ms;
    let q = query.to_ascii_lowercase();
    // kubectl's label selector syntax; an invalid one filters nothing and says why.
    let selector = if labels.trim().is_empty() { Ok(None) } else { kubesim_api::selector::Selector::parse(labels.trim()).map(Some) };
    let label_selected = |p: &PodView| match &selector {
        Ok(Some(selector)) => selector.matches(Some(&p.labels.iter().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect())),
        _ => true,
    };
    let all = &props.scene.pods;
    let namespaces = distinct(all.iter().map(|p| p.namespace.clone()));
    let nodes = distinct(all.iter().map(|p| p.node.clone().unwrap_or_else(|| "<none>".into())));
    let owners = distinct(all.iter().map(|p| p.owner.clone().unwrap_or_else(|| "<none>".into())));
    let mut pods: Vec<&PodView> = props
        .scene
        .pods
        .iter()
        .filter(|p| {
            q.is_empty()
                || p.name.contains(&q)
                || p.node.as_deref().is_some_and(|n| n.contains(&q))
                || p.labels.iter().any(|l| l.contains(&q))
                || p.status.to_ascii_lowercase().contains(&q)
        })
        .filter(|p| *filter == "all" || status_class(&p.status) == filter.as_str())
        .filter(|p| *namespace == "all" || p.namespace == *namespace)
        .filter(|p| *node == "all" || p.node.as_deref().unwrap_or("<none>") == node.as_str())
        .filter(|p| *owner == "all" || p.owner.as_deref().unwrap_or("<none>") == owner.as_str())
        .filter(|p| label_selected(p))
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
        if ascending {
            ordering
        } else {
            ordering.reverse()
        }
    });
    let header = |label: &str, col: Column| {
        let sort = sort.clone();
        let active = column == col;
        let arrow = if active {
            if ascending {
                " ▲"
            } else {
                " ▼"
            }
        } else {
            ""
        };
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
                { filter_select("Filter by namespace".into(), "ks-select", "All namespaces", &namespaces, &namespace) }
                { filter_select("Filter by node".into(), "ks-select", "All nodes", &nodes, &node) }
                { filter_select("Filter by owner".into(), "ks-select", "All owners", &owners, &owner) }
                <input class={classes!("ks-input", "ks-labels", selector.is_err().then_some("is-invalid"))} type="search" placeholder="-l app=web,tier!=db" value={(*labels).clone()} oninput={on_labels} aria-label="Label selector" title={selector.as_ref().err().cloned().unwrap_or_else(|| "Label selector, as kubectl get -l".into())} />
                <span class="ks-muted">{ if pods.len() > 1000 { format!("{} of {} (first 1,000 shown)", pods.len(), props.scene.pods.len()) } else { format!("{} of {}", pods.len(), props.scene.pods.len()) } }</span>
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
                            let onkeydown = crate::components::click_on_key(&onclick);
                            html! {
                                <tr key={p.uid.clone()} class={classes!("is-clickable", selected.then_some("is-selected"))} tabindex="0" aria-selected={selected.to_string()} {onclick} {onkeydown}>
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
