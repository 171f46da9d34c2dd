//! The component flow: kubectl, the API server and its store, the scheduler, the controllers in
//! groups (workloads, nodes, network, storage, namespaces and GC, add-ons; one open at a time
//! shows its controllers), each node's agents in a column under it (kubelet, kube-proxy and its
//! rules, containerd, the CNI and CSI plugins) and kube-dns, with every API write (from the
//! trace), watch event, agent call and a sample of pods' DNS queries (from the world's notes)
//! travelling between them.

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

/// kube-controller-manager's controllers and the add-ons beside it, grouped as the flow view
/// draws them: (id, label, the actors in it by name with `-controller` dropped, name prefixes).
const GROUPS: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "workloads",
        "Workloads",
        &[
            "deployment",
            "replicaset",
            "replication",
            "statefulset",
            "daemonset",
            "job",
            "cronjob",
            "ttl-after-finished",
            "disruption",
            "horizontal-pod-autoscaler",
        ],
        &[],
    ),
    ("nodes", "Nodes", &["node", "node-lifecycle", "node-ipam", "taint-eviction", "pod-garbage-collector", "cloud-node"], &[]),
    (
        "network",
        "Network",
        &[
            "endpointslice",
            "endpoint",
            "endpointslice-mirroring",
            "service",
            "service-cidr",
            "nginx-ingress-controller",
            "kube-webhook-certgen",
            "kubesim-load-generator",
        ],
        &["ingress"],
    ),
    (
        "storage",
        "Storage",
        &[
            "persistentvolume",
            "persistentvolume-binder",
            "persistentvolume-expander",
            "attachdetach",
            "pvc-protection",
            "pv-protection",
            "ephemeral-volume",
            "local-path-provisioner",
        ],
        &["csi-"],
    ),
    ("lifecycle", "Namespaces & GC", &["namespace", "serviceaccount", "root-ca-cert-publisher", "garbage-collector", "resourcequota"], &[]),
    ("addons", "Add-ons", &["metrics-server", "coredns"], &[]),
];

/// The node agents the view lays out under each node, top to bottom: (place prefix, label).
const AGENTS: &[(&str, &str)] =
    &[("kubelet", "kubelet"), ("kube-proxy", "kube-proxy"), ("iptables", "iptables"), ("cri", "containerd"), ("cni", "CNI"), ("csi", "CSI")];

fn actor_kind(actor: &str) -> &'static str {
    if actor == "kubectl" {
        "user"
    } else if actor == "apiserver" {
        "api"
    } else if actor == "scheduler" || actor.contains("scheduler") {
        "sched"
    } else if actor == "coredns" {
        "dns"
    } else if actor == "fault" {
        "fault"
    } else if AGENTS.iter().any(|(prefix, _)| actor.strip_prefix(prefix).is_some_and(|r| r.starts_with('/')))
        || actor.starts_with("pods/")
        || actor.starts_with("node/")
    {
        "agent"
    } else {
        "ctrl"
    }
}

/// The group a controller or add-on belongs to (unknown ones are add-ons).
fn group_of(actor: &str) -> &'static str {
    let short = actor.strip_suffix("-controller").unwrap_or(actor);
    let short = short.split('/').next().unwrap_or(short);
    GROUPS
        .iter()
        .find(|(_, _, members, prefixes)| members.contains(&short) || prefixes.iter().any(|p| short.starts_with(p)))
        .map(|(id, _, _, _)| *id)
        .unwrap_or("addons")
}

struct Layout {
    places: Vec<Place>,
    node_slots: Vec<String>,
    /// Every node's name (a name among them not in `node_slots` is in the overflow column).
    all_nodes: Vec<String>,
    /// The expanded group, whose controllers have places of their own.
    expanded: Option<String>,
    /// Height of the drawing (taller while a group is expanded).
    height: f64,
}

impl Layout {
    fn new(frame: &Frame, expanded: Option<&str>) -> Layout {
        // The control plane's top band: the scheduler and one box per group; below it the
        // expanded group's controllers (those seen writing or watching so far).
        let controllers: Vec<String> = frame.flow_counts.iter().map(|(a, _, _)| a.clone()).filter(|a| actor_kind(a) == "ctrl").collect();
        let mut places = Vec::new();
        let slots = GROUPS.len() + 1;
        let slot = (W - 40.0) / slots as f64;
        let top_y = 44.0;
        places.push(Place {
            id: "scheduler".into(),
            label: "kube-scheduler".into(),
            sub: String::new(),
            x: 20.0 + slot * 0.5,
            y: top_y,
            w: slot - 12.0,
            h: 52.0,
            kind: "sched",
        });
        for (i, (id, label, _, _)) in GROUPS.iter().enumerate() {
            let members = controllers.iter().filter(|c| group_of(c) == *id).count();
            places.push(Place {
                id: format!("group:{id}"),
                label: format!("{label} · {members}"),
                sub: String::new(),
                x: 20.0 + slot * (i as f64 + 1.5),
                y: top_y,
                w: slot - 6.0,
                h: 52.0,
                kind: "group",
            });
        }
        let mut dy = 0.0;
        let expanded = expanded.filter(|g| GROUPS.iter().any(|(id, _, _, _)| id == g)).map(str::to_string);
        if let Some(group) = &expanded {
            let mut members: Vec<&String> = controllers.iter().filter(|c| group_of(c) == group.as_str()).collect();
            kubesim_api::sort::sort(&mut members);
            // As many per row as the longest name allows (dense labels, ~7 units a character).
            let longest = members.iter().map(|a| a.strip_suffix("-controller").unwrap_or(a).chars().count()).max().unwrap_or(0);
            let per_row = (((W - 40.0) / (longest as f64 * 7.0 + 26.0)).floor() as usize).clamp(3, 7);
            let rows = members.len().div_ceil(per_row).max(1);
            let width = (W - 40.0) / per_row.min(members.len().max(1)) as f64;
            for (i, actor) in members.iter().enumerate() {
                let (row, col) = (i / per_row, i % per_row);
                let short = actor.strip_suffix("-controller").unwrap_or(actor);
                places.push(Place {
                    id: actor.to_string(),
                    label: short.to_string(),
                    sub: String::new(),
                    x: 20.0 + width * (col as f64 + 0.5),
                    y: 112.0 + 44.0 * row as f64,
                    w: (width - 10.0).min(200.0),
                    h: 36.0,
                    kind: "ctrl",
                });
            }
            dy = 44.0 * rows as f64 + 10.0;
        }
        places.push(Place { id: "kubectl".into(), label: "kubectl".into(), sub: "you".into(), x: 100.0, y: 220.0 + dy, w: 150.0, h: 52.0, kind: "user" });
        places.push(Place {
            id: "fault".into(),
            label: "fault injector".into(),
            sub: "node-down / up".into(),
            x: 100.0,
            y: 400.0 + dy,
            w: 150.0,
            h: 52.0,
            kind: "fault",
        });
        places.push(Place {
            id: "apiserver".into(),
            label: "kube-apiserver".into(),
            sub: "admission · validation".into(),
            x: 380.0,
            y: 260.0 + dy,
            w: 180.0,
            h: 70.0,
            kind: "api",
        });
        places.push(Place {
            id: "etcd".into(),
            label: "etcd".into(),
            sub: format!("revision {}", frame.revision),
            x: 380.0,
            y: 420.0 + dy,
            w: 150.0,
            h: 50.0,
            kind: "store",
        });
        places.push(Place { id: "coredns".into(), label: "kube-dns".into(), sub: "CoreDNS".into(), x: 590.0, y: 420.0 + dy, w: 130.0, h: 50.0, kind: "dns" });
        // The nodes: a column each, its agents stacked under its name.
        let mut nodes: Vec<String> = frame.scene.nodes.iter().map(|n| n.name.clone()).collect();
        kubesim_api::sort::sort(&mut nodes);
        let overflow = nodes.len() > MAX_NODE_SLOTS;
        let shown: Vec<String> = if overflow { nodes[..MAX_NODE_SLOTS - 1].to_vec() } else { nodes.clone() };
        let columns = shown.len() + usize::from(overflow);
        let (left, right) = (700.0, W - 10.0);
        let col_w = ((right - left) / columns.max(1) as f64).min(150.0);
        let mut node_slots = Vec::new();
        for i in 0..columns {
            let (name, title) =
                if i < shown.len() { (shown[i].clone(), shown[i].clone()) } else { ("…".to_string(), format!("+{} nodes", nodes.len() - shown.len())) };
            let x = left + col_w * (i as f64 + 0.5);
            places.push(Place { id: format!("node/{name}"), label: title, sub: String::new(), x, y: 150.0 + dy, w: col_w - 8.0, h: 22.0, kind: "node" });
            for (j, (prefix, label)) in AGENTS.iter().enumerate() {
                places.push(Place {
                    id: format!("{prefix}/{name}"),
                    label: label.to_string(),
                    sub: String::new(),
                    x,
                    y: 190.0 + dy + 44.0 * j as f64,
                    w: col_w - 12.0,
                    h: 34.0,
                    kind: if *prefix == "kubelet" { "kubelet" } else { "agent" },
                });
            }
            node_slots.push(name);
        }
        Layout { places, node_slots, all_nodes: nodes, expanded, height: H + dy }
    }

    /// The place a message's endpoint is drawn at: a controller in its group's box unless the
    /// group is expanded; a node agent in its node's column (or the overflow column); a pod's
    /// DNS query leaves through its node's kube-proxy rules.
    fn slot_of(&self, id: &str) -> String {
        let id = match id.strip_prefix("pods/") {
            Some(node) => format!("kube-proxy/{node}"),
            None => id.to_string(),
        };
        match actor_kind(&id) {
            "agent" | "kubelet" => {
                let (prefix, node) = id.split_once('/').unwrap_or((&id, ""));
                let prefix = if prefix == "node" { "kubelet" } else { prefix };
                if prefix == "csi" && !self.all_nodes.iter().any(|n| n == node) {
                    // A CSI driver's controller service (`csi/<driver>`): its sidecars' side.
                    return self.slot_of("csi-provisioner");
                }
                if self.node_slots.iter().any(|n| n == node) {
                    format!("{prefix}/{node}")
                } else {
                    format!("{prefix}/…")
                }
            }
            "ctrl" => {
                let group = group_of(&id);
                if self.expanded.as_deref() == Some(group) {
                    id
                } else {
                    format!("group:{group}")
                }
            }
            _ => id,
        }
    }

    fn find(&self, id: &str) -> Option<&Place> {
        let id = self.slot_of(id);
        self.places.iter().find(|p| p.id == id)
    }
}

/// A message count in at most four characters (`950`, `2.4k`, `28k`, `1.2M`), so a box's
/// activity line fits its box however long the run.
fn compact(n: u32) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=9_999 => format!("{}.{}k", n / 1_000, n % 1_000 / 100),
        10_000..=999_999 => format!("{}k", n / 1_000),
        _ => format!("{}.{}M", n / 1_000_000, n % 1_000_000 / 100_000),
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

/// Whether a call is a pod's DNS query (the runtime notes a sample of them).
fn is_dns(item: &FlowItem) -> bool {
    item.kind == FlowKind::Call && item.what.starts_with("DNS ")
}

fn pulse_class(item: &FlowItem) -> &'static str {
    if item.kind == FlowKind::Watch {
        "watch"
    } else if is_dns(item) {
        "dns"
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
    /// CRI, CNI and CSI calls, kube-proxy's rule syncs and faults.
    pub calls: bool,
    /// Pods' DNS queries to kube-dns (a sample: the runtime notes at most ten a second per node).
    pub dns: bool,
    /// Only messages about the selected pod, node or object.
    pub only_selected: bool,
}

impl Default for FlowFilter {
    fn default() -> FlowFilter {
        FlowFilter { writes: true, watches: true, calls: true, dns: true, only_selected: false }
    }
}

impl FlowFilter {
    /// Whether `item` passes the filter.
    pub fn shows(&self, item: &FlowItem, selection: &Selection) -> bool {
        let kind = match item.kind {
            FlowKind::Write => self.writes,
            FlowKind::Watch => self.watches,
            FlowKind::Call if is_dns(item) => self.dns,
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
    let expanded = use_state(|| None::<String>);
    let layout = Layout::new(frame, expanded.as_deref());
    let count_of = |id: &str| -> (u32, u32) {
        if let Some(group) = id.strip_prefix("group:") {
            return frame
                .flow_counts
                .iter()
                .filter(|(a, _, _)| actor_kind(a) == "ctrl" && group_of(a) == group)
                .fold((0, 0), |(s, w), (_, sent, watched)| (s + sent, w + watched));
        }
        frame.flow_counts.iter().find(|(a, _, _)| a == id).map(|(_, sent, watched)| (*sent, *watched)).unwrap_or((0, 0))
    };
    let api = layout.find("apiserver").cloned().expect("apiserver place");
    let etcd = layout.find("etcd").cloned().expect("etcd place");
    let active: Vec<String> = frame.pulses.iter().filter(|p| p.progress < 0.35).map(|p| layout.slot_of(&p.item.from)).collect();
    let line = |key: String, a: (f64, f64), b: (f64, f64), class: &'static str| {
        html! { <line key={key} x1={format!("{:.1}", a.0)} y1={format!("{:.1}", a.1)} x2={format!("{:.1}", b.0)} y2={format!("{:.1}", b.1)} class={classes!("ks-wire", class)} /> }
    };

    // Static wires: every API client to the API server, the API server to etcd, each kubelet
    // down its node's runtime, kube-proxy to its rules.
    let mut wires: Vec<Html> = Vec::new();
    for place in &layout.places {
        let open_group = place.kind == "group" && layout.expanded.as_deref() == place.id.strip_prefix("group:");
        let to_api = (matches!(place.kind, "user" | "ctrl" | "sched" | "group" | "kubelet") && !open_group) || place.id.starts_with("kube-proxy/");
        if to_api {
            let (a, b) = segment(place, &api);
            wires.push(line(format!("w-{}", place.id), a, b, ""));
        }
        if place.kind == "api" {
            let (a, b) = segment(place, &etcd);
            wires.push(line("w-etcd".into(), a, b, ""));
        }
        if place.kind == "fault" {
            if let Some(kubelet) = layout.places.iter().find(|p| p.kind == "kubelet") {
                let (a, b) = segment(place, kubelet);
                wires.push(line("w-fault".into(), a, b, "is-fault"));
            }
        }
    }
    for node in &layout.node_slots {
        let column: Vec<&Place> = AGENTS.iter().filter_map(|(prefix, _)| layout.places.iter().find(|p| p.id == format!("{prefix}/{node}"))).collect();
        if let (Some(first), Some(last)) = (column.first(), column.last()) {
            wires.push(line(format!("n-{node}"), (first.x, first.y + first.h / 2.0), (last.x, last.y - last.h / 2.0), "is-cri"));
        }
    }

    let boxes = layout.places.iter().map(|place| {
        let (count, watched) = match place.kind {
            "cri" | "api" | "store" | "node" | "fault" => (0, 0),
            _ => count_of(&place.id),
        };
        let activity = match (count, watched) {
            (0, 0) => "idle".to_string(),
            (0, w) => format!("{} events in", compact(w)),
            (c, 0) => format!("{} writes", compact(c)),
            (c, w) => format!("{} writes · {} in", compact(c), compact(w)),
        };
        let sub = match place.kind {
            "api" | "store" | "fault" | "dns" | "node" | "agent" => place.sub.clone(),
            "group" => activity,
            "ctrl" | "kubelet" => activity,
            _ if !place.sub.is_empty() => format!("{} · {activity}", place.sub),
            _ => activity,
        };
        let flashing = active.contains(&place.id);
        let selected = match &props.selection {
            Selection::Node(n) => place.id.ends_with(&format!("/{n}")) && (place.kind == "agent" || place.kind == "kubelet" || place.kind == "node"),
            _ => false,
        };
        let rect = html! { <rect x={format!("{:.1}", place.x - place.w / 2.0)} y={format!("{:.1}", place.y - place.h / 2.0)} width={format!("{:.1}", place.w)} height={format!("{:.1}", place.h)} rx={if place.kind == "node" { "6" } else { "10" }} /> };
        let dense = place.w < 150.0 || matches!(place.kind, "agent" | "kubelet" | "ctrl") || (place.kind == "group" && place.label.len() > 14);
        let (label_y, has_sub) = if place.h < 40.0 || sub.is_empty() { (place.y + 4.0, false) } else { (place.y - 3.0, true) };
        // A group's label leaves room on its right for the caret.
        let label_x = if place.kind == "group" { place.x - 6.0 } else { place.x };
        let texts = html! {
            <>
                <text x={format!("{label_x:.1}")} y={format!("{label_y:.1}")} text-anchor="middle" class={classes!("ks-comp-label", dense.then_some("is-dense"))}>{ &place.label }</text>
                if has_sub {
                    <text x={format!("{:.1}", place.x)} y={format!("{:.1}", place.y + 14.0)} text-anchor="middle" class="ks-comp-sub">{ sub.clone() }</text>
                }
            </>
        };
        if place.kind == "group" {
            // A group opens (its controllers get places of their own) and closes on click, Enter
            // or Space.
            let group = place.id.trim_start_matches("group:").to_string();
            let open = expanded.as_deref() == Some(group.as_str());
            let toggle = {
                let expanded = expanded.clone();
                let group = group.clone();
                move || expanded.set(if expanded.as_deref() == Some(group.as_str()) { None } else { Some(group.clone()) })
            };
            let onclick = {
                let toggle = toggle.clone();
                Callback::from(move |_: MouseEvent| toggle())
            };
            let onkeydown = Callback::from(move |e: KeyboardEvent| {
                if e.key() == "Enter" || e.key() == " " {
                    e.prevent_default();
                    toggle();
                }
            });
            let label = format!("{}: {} ({})", place.label, sub, if open { "open, press to close" } else { "closed, press to show its controllers" });
            return html! {
                <g key={place.id.clone()} class={classes!("ks-comp", "k-group", open.then_some("is-open"), flashing.then_some("is-active"))} role="button" tabindex="0" aria-expanded={open.to_string()} aria-label={label} {onclick} {onkeydown}>
                    { rect }
                    { texts }
                    <text x={format!("{:.1}", place.x + place.w / 2.0 - 9.0)} y={format!("{label_y:.1}")} text-anchor="middle" class="ks-comp-caret" aria-hidden="true">{ if open { "▾" } else { "▸" } }</text>
                </g>
            };
        }
        html! {
            <g key={place.id.clone()} class={classes!("ks-comp", format!("k-{}", place.kind), flashing.then_some("is-active"), selected.then_some("is-selected"))} role="group" aria-label={place.label.clone()}>
                { rect }
                { texts }
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
                let onkeydown = onclick.as_ref().map(crate::components::click_on_key);
                let tabindex = onclick.as_ref().map(|_| "0");
                html! {
                    <tr class={classes!(highlighted.then_some("is-selected"), onclick.is_some().then_some("is-clickable"))} {tabindex} onclick={onclick} {onkeydown}>
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
                <span class="ks-muted">{ "API writes (from the trace), watch events to each informer, the node agents' calls and pods' DNS queries, as they happen; open a group to see its controllers" }</span>
                <span class="ks-legend">
                    <span class="f-added"><i />{ "created" }</span>
                    <span class="f-modified"><i />{ "updated" }</span>
                    <span class="f-deleted"><i />{ "deleted" }</span>
                    <span class="f-watch"><i />{ "watch event" }</span>
                    <span class="f-call"><i />{ "agent call" }</span>
                    <span class="f-dns"><i />{ "DNS query" }</span>
                </span>
            </div>
            <div class="ks-flow-filters" role="group" aria-label="Which messages to show">
                { toggle(&filter, "writes", "API writes", |f| &mut f.writes) }
                { toggle(&filter, "watches", "watch events", |f| &mut f.watches) }
                { toggle(&filter, "calls", "agent calls", |f| &mut f.calls) }
                { toggle(&filter, "dns", "DNS queries", |f| &mut f.dns) }
                { toggle(&filter, "only", "only the selected object", |f| &mut f.only_selected) }
            </div>
            <svg class="ks-flow-svg" viewBox={format!("0 0 {W} {:.0}", layout.height)} role="group" aria-label="Components and the messages between them">
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

#[cfg(test)]
mod tests {
    #[test]
    fn compact_counts_fit_four_characters() {
        for (n, text) in [(0, "0"), (999, "999"), (1_000, "1.0k"), (2_420, "2.4k"), (9_999, "9.9k"), (28_839, "28k"), (999_999, "999k"), (1_250_000, "1.2M")] {
            assert_eq!(super::compact(n), text);
        }
    }
}
