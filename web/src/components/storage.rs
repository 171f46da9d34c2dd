//! The storage view: every claim with the path its volume takes from the claim to a directory
//! in the pod — provision → bind → attach → stage → publish — the reached steps lit, the
//! current one animated, failures in red with the driver's or the kubelet's words, the node it
//! is on; the StorageClasses, PersistentVolumes and VolumeAttachments with their phases and
//! bindings; the CSI drivers and the nodes they registered on. Clicking a claim opens its
//! details below the table (each step's detail, the Events about it and its pods, the files in
//! its volume wherever they are now) and selects it for the inspector. Everything comes from
//! `view::storage` and `view::volume_files`.

use crate::components::app::Controls;
use crate::port::{use_query, Answer, Port, Query};
use crate::state::Selection;
use crate::text::{clock, short_duration};
use kubesim_sim::view::{ClaimRow, ClaimStage, EventView, ObjectKey, PathStep, StepState, StorageView, VolumeFiles};
use std::rc::Rc;
use yew::prelude::*;

/// Storage view props.
#[derive(Properties, PartialEq)]
pub struct StorageProps {
    /// Classes, claims, volumes and attachments.
    pub storage: Rc<StorageView>,
    /// The event log (for the selected claim's Events).
    pub events: Rc<Vec<EventView>>,
    /// Virtual now.
    pub now: u64,
    /// What is selected.
    pub selection: Selection,
    /// Select something.
    pub on_select: Callback<Selection>,
}

/// The colour class of a claim stage.
pub fn stage_class(claim: &ClaimRow) -> &'static str {
    if claim.problem.is_some() {
        return "s-bad";
    }
    if claim.phase == "Terminating" {
        return "s-term";
    }
    match claim.stage {
        ClaimStage::Published => "s-ok",
        ClaimStage::Lost => "s-bad",
        ClaimStage::Bound => "s-done",
        _ => "s-wait",
    }
}

fn phase_class(phase: &str) -> &'static str {
    match phase {
        "Bound" => "s-ok",
        "Available" => "s-done",
        "Pending" => "s-wait",
        "Released" | "Terminating" => "s-term",
        _ => "s-bad",
    }
}

/// The key of an object the storage view lists.
fn key(group: &str, resource: &str, kind: &str, namespace: &str, name: &str) -> ObjectKey {
    ObjectKey { group: group.into(), resource: resource.into(), kind: kind.into(), namespace: namespace.into(), name: name.into() }
}

fn claim_key(c: &ClaimRow) -> ObjectKey {
    key("", "persistentvolumeclaims", "PersistentVolumeClaim", &c.namespace, &c.name)
}

fn selected_key(selection: &Selection) -> Option<&ObjectKey> {
    match selection {
        Selection::Object(key) => Some(key),
        _ => None,
    }
}

/// The index of the step a claim is at: the first one neither done nor skipped.
fn current_step(path: &[PathStep]) -> Option<usize> {
    path.iter().position(|s| !matches!(s.state, StepState::Done | StepState::Skipped))
}

/// A claim's path as a horizontal track of five steps.
pub fn path_track(claim: &ClaimRow) -> Html {
    let current = current_step(&claim.path);
    html! {
        <ol class="ks-sto-path" aria-label={format!("path of {}/{}", claim.namespace, claim.name)}>
            { for claim.path.iter().enumerate().map(|(i, step)| {
                let is_current = current == Some(i) && step.state != StepState::Todo;
                let title = if step.detail.is_empty() { format!("{}: {}", step.step.label(), step.state.name()) } else { format!("{}: {}", step.step.label(), step.detail) };
                html! {
                    <li class={classes!("ks-sto-step", step.state.name(), is_current.then_some("is-current"))} title={title} data-step={step.step.label()} data-state={step.state.name()}>
                        <span class="ks-sto-dot" aria-hidden="true">
                            { match step.state { StepState::Done => "✓", StepState::Failed => "✕", StepState::Skipped => "–", _ => "" } }
                        </span>
                        <span class="ks-sto-label">{ step.step.label() }</span>
                    </li>
                }
            }) }
        </ol>
    }
}

/// The files of a volume.
pub fn files_list(files: Option<&VolumeFiles>) -> Html {
    match files {
        None => html! { <p class="ks-muted">{ "No files yet: the volume's directory appears when it is first mounted." }</p> },
        Some(files) => html! {
            <div class="ks-sto-files">
                <div class="ks-mono ks-muted ks-sto-where">{ &files.location }</div>
                if files.entries.is_empty() {
                    if !files.location.ends_with("(not formatted yet)") {
                        <p class="ks-muted">{ "Empty." }</p>
                    }
                } else {
                    <ul class="ks-sto-file-list">
                        { for files.entries.iter().map(|f| html! {
                            <li key={f.path.clone()} class={classes!(f.dir.then_some("is-dir"))}>
                                <span class="ks-mono ks-sto-file-name">{ &f.path }</span>
                                if !f.dir {
                                    <span class="ks-muted ks-sto-file-size">{ format!("{} B", f.size) }</span>
                                }
                                if let Some(preview) = f.preview.as_ref().filter(|p| !p.is_empty()) {
                                    <pre class="ks-sto-preview">{ preview }</pre>
                                }
                            </li>
                        }) }
                    </ul>
                    if files.omitted > 0 {
                        <p class="ks-muted">{ format!("{} more entries not shown", files.omitted) }</p>
                    }
                }
            </div>
        },
    }
}

/// Each step of a claim's path with what happened there, as a vertical list.
pub fn step_list(claim: &ClaimRow) -> Html {
    let current = current_step(&claim.path);
    html! {
        <ol class="ks-sto-steps">
            { for claim.path.iter().enumerate().map(|(i, s)| html! {
                <li class={classes!(s.state.name(), (current == Some(i) && s.state != StepState::Todo).then_some("is-current"))}>
                    <span class="ks-sto-step-name">{ s.step.label() }</span>
                    <span class="ks-sto-step-state">{ s.state.name() }</span>
                    <span class="ks-sto-step-detail">{ if s.detail.is_empty() { "—".to_string() } else { s.detail.clone() } }</span>
                </li>
            }) }
        </ol>
    }
}

#[derive(Properties, PartialEq)]
struct DetailProps {
    claim: ClaimRow,
    events: Rc<Vec<EventView>>,
    now: u64,
}

/// The selected claim: its steps, Events, and files.
#[function_component(ClaimDetail)]
fn claim_detail(props: &DetailProps) -> Html {
    let controls = use_context::<Controls>();
    let claim = &props.claim;
    // The files, re-read once per virtual second (containers write between API writes).
    let files = {
        let port = controls.as_ref().map(|c| c.port.clone()).unwrap_or_else(Port::unconnected);
        let files = use_query(&port, claim.volume.clone().map(Query::VolumeFiles), props.now / 1000);
        match &*files {
            Answer::VolumeFiles(files) => files.clone(),
            _ => None,
        }
    };
    let about = |e: &&EventView| {
        e.namespace == claim.namespace
            && (e.object == format!("persistentvolumeclaim/{}", claim.name) || claim.pods.iter().any(|p| e.object == format!("pod/{p}")))
            && (e.object.starts_with("persistentvolumeclaim/") || is_storage_reason(&e.reason))
            || claim.volume.as_ref().is_some_and(|v| e.object == format!("persistentvolume/{v}"))
    };
    let mut events: Vec<&EventView> = props.events.iter().filter(about).collect();
    events.reverse();
    events.truncate(14);
    html! {
        <div class="ks-sto-detail" aria-label={format!("claim {}/{}", claim.namespace, claim.name)}>
            <div class="ks-sto-detail-head">
                <div>
                    <div class="ks-kind">{ format!("PersistentVolumeClaim · {}", claim.namespace) }</div>
                    <h3 class="ks-mono">{ &claim.name }</h3>
                </div>
                <span class={classes!("ks-status-pill", stage_class(claim))}>{ claim.stage.label() }</span>
                if let Some(node) = &claim.node {
                    <span class="ks-sto-node">{ "on " }<b class="ks-mono">{ node }</b></span>
                }
                <span class="ks-muted">{ format!("{} · {} · {}", claim.class, claim.capacity.clone().unwrap_or_else(|| claim.request.clone()), claim.access_modes) }</span>
            </div>
            <div class="ks-sto-detail-body">
                <div>
                    <h4>{ "Path" }</h4>
                    { step_list(claim) }
                    <h4>{ "Events" }<span class="ks-muted">{ " the claim, its volume and its pods' volume events, newest first" }</span></h4>
                    if events.is_empty() {
                        <p class="ks-muted">{ "No events yet." }</p>
                    } else {
                        <ul class="ks-event-list ks-sto-events">
                            { for events.iter().map(|e| html! {
                                <li class={classes!((e.type_ == "Warning").then_some("is-warning"))}>
                                    <div class="ks-event-head">
                                        <span class="ks-mono ks-muted">{ clock(e.last_ms) }</span>
                                        <span class="ks-event-reason">{ &e.reason }</span>
                                        if e.count > 1 { <span class="ks-muted">{ format!("×{}", e.count) }</span> }
                                        <span class="ks-event-object">{ &e.object }</span>
                                    </div>
                                    <div class="ks-event-message">{ &e.message }</div>
                                    <div class="ks-event-source">{ &e.source }</div>
                                </li>
                            }) }
                        </ul>
                    }
                </div>
                <div>
                    <h4>{ "Files" }<span class="ks-muted">{ " in the volume, where its bytes are now" }</span></h4>
                    if claim.volume.is_some() {
                        { files_list(files.as_ref()) }
                    } else {
                        <p class="ks-muted">{ "No volume yet." }</p>
                    }
                </div>
            </div>
        </div>
    }
}

/// Pod Events that concern volumes.
fn is_storage_reason(reason: &str) -> bool {
    matches!(
        reason,
        "FailedAttachVolume"
            | "SuccessfulAttachVolume"
            | "FailedMount"
            | "FailedScheduling"
            | "Scheduled"
            | "FailedDetachVolume"
            | "VolumeResizeFailed"
            | "FileSystemResizeSuccessful"
    )
}

/// The storage view.
#[function_component(StorageViewPanel)]
pub fn storage_view(props: &StorageProps) -> Html {
    let st = &props.storage;
    let selected = selected_key(&props.selection);
    let select = |k: ObjectKey| {
        let on_select = props.on_select.clone();
        Callback::from(move |_: MouseEvent| on_select.emit(Selection::Object(k.clone())))
    };
    let is_selected = |k: &ObjectKey| selected == Some(k);
    // The claim whose details show: the selected claim, or the claim of the selected volume.
    let detail = selected.and_then(|k| match k.kind.as_str() {
        "PersistentVolumeClaim" => st.claims.iter().find(|c| c.namespace == k.namespace && c.name == k.name),
        "PersistentVolume" => st.claims.iter().find(|c| c.volume.as_deref() == Some(k.name.as_str())),
        _ => None,
    });
    let published = st.claims.iter().filter(|c| c.stage == ClaimStage::Published).count();
    let bound = st.claims.iter().filter(|c| c.phase == "Bound").count();
    html! {
        <section class="ks-storage" aria-label="Storage">
            <div class="ks-section-head">
                <h2>{ "PersistentVolumeClaims" }</h2>
                <span class="ks-muted">{ format!("{} claims · {bound} bound · {published} mounted", st.claims.len()) }</span>
                <span class="ks-sto-legend" aria-label="Legend">
                    <span class="done"><i />{ "done" }</span>
                    <span class="active"><i />{ "in progress" }</span>
                    <span class="waiting"><i />{ "waiting" }</span>
                    <span class="failed"><i />{ "failed" }</span>
                    <span class="skipped"><i />{ "not needed" }</span>
                </span>
            </div>
            if st.claims.is_empty() {
                <p class="ks-muted ks-sto-empty">{ "No PersistentVolumeClaims yet. Apply one (or a StatefulSet with volumeClaimTemplates), or pick a storage scenario from the gallery." }</p>
            } else {
                <div class="ks-table-wrap ks-sto-claims">
                    <table class="ks-table">
                        <thead><tr><th>{ "CLAIM" }</th><th>{ "STATUS" }</th><th>{ "PATH" }</th><th>{ "NODE" }</th><th>{ "VOLUME" }</th><th>{ "SIZE" }</th><th>{ "CLASS" }</th><th>{ "USED BY" }</th><th>{ "AGE" }</th></tr></thead>
                        <tbody>
                            { for st.claims.iter().map(|c| {
                                let k = claim_key(c);
                                let sel = is_selected(&k) || detail.is_some_and(|d| d.name == c.name && d.namespace == c.namespace);
                                html! {
                                    <tr key={format!("{}/{}", c.namespace, c.name)} class={classes!("is-clickable", sel.then_some("is-selected"), c.problem.is_some().then_some("has-problem"))} tabindex="0" onkeydown={crate::components::click_on_key(&select(k.clone()))} onclick={select(k)} data-claim={format!("{}/{}", c.namespace, c.name)} data-stage={c.stage.label()}>
                                        <td class="ks-mono"><b>{ &c.name }</b><div class="ks-muted ks-sto-ns">{ &c.namespace }</div></td>
                                        <td>
                                            <span class={classes!("ks-status-pill", stage_class(c))} title={format!("phase {}", c.phase)}>{ c.stage.label() }</span>
                                            if c.phase == "Terminating" { <span class="ks-status-pill s-term">{ "Terminating" }</span> }
                                        </td>
                                        <td class="ks-sto-path-cell">
                                            { path_track(c) }
                                            if let Some(problem) = &c.problem {
                                                <div class="ks-sto-problem" title={problem.clone()}>{ problem }</div>
                                            }
                                        </td>
                                        <td class="ks-mono">{ c.node.clone().unwrap_or_else(|| "—".into()) }</td>
                                        <td class="ks-mono ks-sto-volname" title={c.volume.clone().unwrap_or_default()}>{ c.volume.clone().unwrap_or_else(|| "—".into()) }</td>
                                        <td class="ks-mono" title={if c.capacity.is_some() { "capacity · access modes" } else { "requested · access modes" }}>{ format!("{} · {}", c.capacity.clone().unwrap_or_else(|| c.request.clone()), c.access_modes) }</td>
                                        <td class="ks-mono">{ &c.class }</td>
                                        <td class="ks-mono">{ if c.pods.is_empty() { "—".to_string() } else { c.pods.join(", ") } }</td>
                                        <td class="ks-mono ks-muted">{ short_duration(props.now.saturating_sub(c.created_ms)) }</td>
                                    </tr>
                                }
                            }) }
                        </tbody>
                    </table>
                </div>
            }
            if let Some(claim) = detail {
                <ClaimDetail claim={claim.clone()} events={props.events.clone()} now={props.now} />
            }
            <div class="ks-sto-columns">
                <div>
                    <h3>{ "PersistentVolumes" }</h3>
                    if st.volumes.is_empty() {
                        <p class="ks-muted">{ "None yet: provisioners create them for claims." }</p>
                    } else {
                        <div class="ks-table-wrap">
                            <table class="ks-table">
                                <thead><tr><th>{ "NAME" }</th><th>{ "CAPACITY" }</th><th>{ "ACCESS" }</th><th>{ "RECLAIM" }</th><th>{ "STATUS" }</th><th>{ "CLAIM" }</th><th>{ "WHERE" }</th><th>{ "SOURCE" }</th></tr></thead>
                                <tbody>
                                    { for st.volumes.iter().map(|v| {
                                        let k = key("", "persistentvolumes", "PersistentVolume", "", &v.name);
                                        html! {
                                            <tr key={v.name.clone()} class={classes!("is-clickable", is_selected(&k).then_some("is-selected"))} tabindex="0" onkeydown={crate::components::click_on_key(&select(k.clone()))} onclick={select(k)}>
                                                <td class="ks-mono">{ &v.name }</td>
                                                <td class="ks-mono">{ &v.capacity }</td>
                                                <td class="ks-mono">{ &v.access_modes }</td>
                                                <td>{ &v.reclaim_policy }</td>
                                                <td><span class={classes!("ks-status-pill", phase_class(&v.phase))}>{ &v.phase }</span></td>
                                                <td class="ks-mono">{ v.claim.clone().unwrap_or_else(|| "—".into()) }</td>
                                                <td class="ks-mono">{ if v.affinity.is_empty() { "anywhere".to_string() } else { v.affinity.clone() } }</td>
                                                <td class="ks-mono ks-muted ks-sto-source" title={v.source.clone()}>{ &v.source }</td>
                                            </tr>
                                        }
                                    }) }
                                </tbody>
                            </table>
                        </div>
                    }
                </div>
                <div>
                    <h3>{ "VolumeAttachments" }</h3>
                    if st.attachments.is_empty() {
                        <p class="ks-muted">{ "None: only volumes of drivers that attach (disk.csi.kubesim.io) get one, for the node their pod runs on." }</p>
                    } else {
                        <div class="ks-table-wrap">
                            <table class="ks-table">
                                <thead><tr><th>{ "NAME" }</th><th>{ "ATTACHER" }</th><th>{ "PV" }</th><th>{ "NODE" }</th><th>{ "ATTACHED" }</th><th>{ "DEVICE" }</th></tr></thead>
                                <tbody>
                                    { for st.attachments.iter().map(|a| {
                                        let k = key("storage.k8s.io", "volumeattachments", "VolumeAttachment", "", &a.name);
                                        let (word, class) = if a.detaching { ("detaching", "s-term") } else if a.attached { ("true", "s-ok") } else if a.error.is_some() { ("false", "s-bad") } else { ("false", "s-wait") };
                                        html! {
                                            <>
                                                <tr key={a.name.clone()} class={classes!("is-clickable", is_selected(&k).then_some("is-selected"))} tabindex="0" onkeydown={crate::components::click_on_key(&select(k.clone()))} onclick={select(k)}>
                                                    <td class="ks-mono" title={a.name.clone()}>{ format!("{}…", a.name.chars().take(16).collect::<String>()) }</td>
                                                    <td class="ks-mono">{ &a.attacher }</td>
                                                    <td class="ks-mono">{ &a.pv }</td>
                                                    <td class="ks-mono">{ &a.node }</td>
                                                    <td><span class={classes!("ks-status-pill", class)}>{ word }</span></td>
                                                    <td class="ks-mono">{ a.device.clone().unwrap_or_else(|| "—".into()) }</td>
                                                </tr>
                                                if let Some(error) = &a.error {
                                                    <tr key={format!("{}-error", a.name)} class="ks-sto-error-row"><td colspan="6">{ error }</td></tr>
                                                }
                                            </>
                                        }
                                    }) }
                                </tbody>
                            </table>
                        </div>
                    }
                </div>
            </div>
            <div class="ks-sto-columns">
                <div>
                    <h3>{ "StorageClasses" }</h3>
                    <div class="ks-table-wrap">
                        <table class="ks-table">
                            <thead><tr><th>{ "NAME" }</th><th>{ "PROVISIONER" }</th><th>{ "RECLAIM" }</th><th>{ "BINDING MODE" }</th><th>{ "EXPANSION" }</th><th>{ "PARAMETERS" }</th></tr></thead>
                            <tbody>
                                { for st.classes.iter().map(|c| {
                                    let k = key("storage.k8s.io", "storageclasses", "StorageClass", "", &c.name);
                                    html! {
                                        <tr key={c.name.clone()} class={classes!("is-clickable", is_selected(&k).then_some("is-selected"))} tabindex="0" onkeydown={crate::components::click_on_key(&select(k.clone()))} onclick={select(k)}>
                                            <td class="ks-mono">{ &c.name }if c.default { <span class="ks-tag ks-sto-default">{ "default" }</span> }</td>
                                            <td class="ks-mono">{ &c.provisioner }</td>
                                            <td>{ &c.reclaim_policy }</td>
                                            <td>{ &c.binding_mode }</td>
                                            <td>{ if c.allow_expansion { "allowed" } else { "—" } }</td>
                                            <td class="ks-mono ks-muted">{ if c.parameters.is_empty() { "—".to_string() } else { c.parameters.join(" ") } }</td>
                                        </tr>
                                    }
                                }) }
                            </tbody>
                        </table>
                    </div>
                </div>
                <div>
                    <h3>{ "CSI drivers" }<span class="ks-muted">{ " and the nodes their plugins registered on" }</span></h3>
                    <table class="ks-table ks-sto-drivers">
                        <thead><tr><th>{ "DRIVER" }</th><th>{ "ATTACH" }</th><th>{ "POD INFO" }</th><th>{ "MODES" }</th><th>{ "NODES" }</th></tr></thead>
                        <tbody>
                            { for st.drivers.iter().map(|d| {
                                let nodes: Vec<&str> = st.csi_nodes.iter().filter(|n| n.drivers.iter().any(|(name, _, _)| *name == d.name)).map(|n| n.node.as_str()).collect();
                                html! {
                                    <tr key={d.name.clone()}>
                                        <td class="ks-mono">{ &d.name }</td>
                                        <td>{ if d.attach_required { "required" } else { "no" } }</td>
                                        <td>{ if d.pod_info_on_mount { "yes" } else { "no" } }</td>
                                        <td>{ &d.modes }</td>
                                        <td class="ks-mono">{ if nodes.is_empty() { "—".to_string() } else { nodes.join(", ") } }</td>
                                    </tr>
                                }
                            }) }
                        </tbody>
                    </table>
                </div>
            </div>
        </section>
    }
}
