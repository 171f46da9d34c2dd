//! "Why is this pod like this?": the answers the inspector's Why tab gives, each drawn from the
//! model's own records — the pod object and its history in the trace, the Events the components
//! wrote, the scheduler's attempt history, the claims it uses and the node it runs on — and
//! each carrying the moment it happened, so the UI can take the timeline there.

use crate::view::{events, EventView};
use crate::World;
use kubesim_api::k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use kubesim_api::time::millis_of;
use kubesim_api::Millis;
use kubesim_scheduler::Outcome;

/// One answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhyAnswer {
    /// The question (`Why is it Pending?`).
    pub question: String,
    /// The answer in a sentence.
    pub answer: String,
    /// The facts behind it.
    pub details: Vec<String>,
    /// When it happened (the timeline can go there).
    pub t_ms: Option<Millis>,
    /// Whose record it is (`default-scheduler`, `kubelet/node-2`, `trace`).
    pub source: String,
}

fn answer(question: &str, answer: String, details: Vec<String>, t_ms: Option<Millis>, source: &str) -> WhyAnswer {
    WhyAnswer { question: question.to_string(), answer, details, t_ms, source: source.to_string() }
}

/// The events about this pod object (by name and namespace; the newest last).
fn pod_events(world: &World, pod: &Pod) -> Vec<EventView> {
    let name = pod.metadata.name.as_deref().unwrap_or("");
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
    events(world).into_iter().filter(|e| e.object == format!("pod/{name}") && e.namespace == namespace).collect()
}

fn last_event<'a>(events: &'a [EventView], reasons: &[&str]) -> Option<&'a EventView> {
    events.iter().rev().find(|e| reasons.contains(&e.reason.as_str()))
}

/// Every answer that applies to the pod `namespace/name` now (empty once it is gone).
pub fn why(world: &World, namespace: &str, name: &str) -> Vec<WhyAnswer> {
    let Some(object) = world.api().store().get(("", "pods"), namespace, name) else { return Vec::new() };
    let Some(pod) = object.as_pod() else { return Vec::new() };
    let spec = pod.spec.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let evs = pod_events(world, pod);
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    let attempt = world.scheduler().and_then(|s| s.last_attempt(namespace, name)).filter(|a| a.pod_uid == uid);
    let print = kubesim_api::pod::print_pod(pod);
    let mut out = Vec::new();

    // Being deleted: who asked, and why the components did.
    if let Some(deadline) = pod.metadata.deletion_timestamp.as_ref() {
        // deletionTimestamp is the deadline (request + grace): the request is the first version
        // of the object that carries one.
        let request = crate::view::object_versions(world, &crate::view::ObjectKey::of(object))
            .into_iter()
            .find(|v| v.json.pointer("/metadata/deletionTimestamp").is_some());
        let t = request.as_ref().map(|v| v.t_ms).unwrap_or_else(|| millis_of(deadline));
        let deleter = request.map(|v| v.actor);
        let disruption = status.conditions.iter().flatten().find(|c| c.type_ == "DisruptionTarget" && c.status == "True");
        let mut details = Vec::new();
        if let Some(c) = disruption {
            details.push(format!("DisruptionTarget: {} — {}", c.reason.clone().unwrap_or_default(), c.message.clone().unwrap_or_default()));
        }
        if let Some(e) = last_event(&evs, &["Evicted", "Preempted", "TaintManagerEviction", "Killing"]) {
            details.push(format!("{} ({}): {}", e.reason, e.source, e.message));
        }
        details.push(format!("grace period: {} s", pod.metadata.deletion_grace_period_seconds.unwrap_or(0)));
        let who = deleter.clone().unwrap_or_else(|| "someone".into());
        out.push(answer(
            "Why is it terminating?",
            format!("{who} deleted it; its containers are being stopped within the grace period"),
            details,
            Some(t),
            &who,
        ));
    }

    // Not on a node yet.
    let bound = spec.node_name.as_deref().is_some_and(|n| !n.is_empty());
    if !bound {
        if let Some(gates) = spec.scheduling_gates.as_ref().filter(|g| !g.is_empty()) {
            let names: Vec<String> = gates.iter().map(|g| g.name.clone()).collect();
            out.push(answer(
                "Why is it Pending?",
                format!("its scheduling gates hold it back from the scheduler: {}", names.join(", ")),
                vec!["the scheduler ignores a pod until every gate in spec.schedulingGates is removed".into()],
                None,
                "spec",
            ));
        }
        for claim in kubesim_api::pod::claim_names(pod) {
            let pvc = world.api().store().get(("", "persistentvolumeclaims"), namespace, &claim);
            let phase = pvc.as_ref().map(|o| o.to_json()).and_then(|j| j.pointer("/status/phase").and_then(|p| p.as_str()).map(str::to_string));
            if phase.as_deref() != Some("Bound") {
                let claim_events: Vec<String> = events(world)
                    .into_iter()
                    .filter(|e| e.object == format!("persistentvolumeclaim/{claim}") && e.namespace == namespace)
                    .map(|e| format!("{}: {}", e.reason, e.message))
                    .collect();
                let state = match (&pvc, phase) {
                    (None, _) => "does not exist".to_string(),
                    (_, Some(p)) => format!("is {p}"),
                    _ => "is not bound".to_string(),
                };
                out.push(answer("Why is it Pending?", format!("its PersistentVolumeClaim {claim} {state}"), claim_events, None, "persistentvolume-controller"));
            }
        }
        match attempt.map(|a| (&a.outcome, a)) {
            Some((Outcome::Unschedulable(message), a)) => {
                let mut details: Vec<String> = a
                    .filter()
                    .into_iter()
                    .filter_map(|(node, plugins)| {
                        plugins.into_iter().find(|(_, v)| v != "passed").map(|(plugin, reason)| format!("{node}: {plugin} — {reason}"))
                    })
                    .collect();
                details.extend(a.pre_filter.iter().map(|(plugin, why)| format!("PreFilter {plugin}: {why}")));
                if let Some(node) = &a.nominated_node {
                    details.push(format!("preemption nominated {node} (victims: {})", a.victims.join(", ")));
                }
                out.push(answer("Why is it Pending?", message.clone(), details, Some(a.t_ms), "default-scheduler"));
            }
            Some((Outcome::Error(message), a)) => {
                out.push(answer("Why is it Pending?", format!("the scheduler's last attempt failed: {message}"), Vec::new(), Some(a.t_ms), "default-scheduler"))
            }
            _ if out.is_empty() => out.push(answer(
                "Why is it Pending?",
                "the scheduler has not tried to place it yet (it waits in the scheduling queue)".into(),
                Vec::new(),
                None,
                "default-scheduler",
            )),
            _ => {}
        }
        return out;
    }

    // On a node: why that node, and why that address (asked after the state's own questions).
    let node = spec.node_name.clone().unwrap_or_default();
    let mut placement = Vec::new();
    match attempt.filter(|a| a.selected.as_deref() == Some(node.as_str())) {
        Some(a) => {
            let totals = a.final_scores();
            let mut ranked: Vec<(String, i64)> = totals.iter().map(|(n, plugins)| (n.clone(), plugins.values().sum())).collect();
            kubesim_api::sort::sort_by(&mut ranked, |x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
            let filtered = a.filter().into_iter().filter(|(_, plugins)| plugins.values().any(|v| v != "passed")).count();
            let mut details: Vec<String> = ranked.iter().take(5).map(|(n, score)| format!("{n}: {score}")).collect();
            if let Some(plugins) = totals.get(&node) {
                let mut top: Vec<(&String, &i64)> = plugins.iter().collect();
                kubesim_api::sort::sort_by(&mut top, |x, y| y.1.cmp(x.1));
                details.push(format!("{node}'s score: {}", top.iter().map(|(p, s)| format!("{p} {s}")).collect::<Vec<_>>().join(", ")));
            }
            placement.push(answer(
                "Why this node?",
                format!("the scheduler scored {node} highest among {} feasible node(s); {filtered} were filtered out", ranked.len()),
                details,
                Some(a.t_ms),
                "default-scheduler",
            ));
        }
        None => out.push(answer("Why this node?", format!("spec.nodeName named {node}: the pod never passed through the scheduler"), Vec::new(), None, "spec")),
    }
    if let Some(ip) = status.pod_ip.as_deref().filter(|ip| !ip.is_empty()) {
        let first = crate::view::object_versions(world, &crate::view::ObjectKey::of(object))
            .into_iter()
            .find(|v| v.json.pointer("/status/podIP").and_then(|p| p.as_str()) == Some(ip));
        let answer_text = if spec.host_network == Some(true) {
            format!("it uses the host's network: {ip} is {node}'s own address")
        } else {
            let cidr =
                world.api().store().get(("", "nodes"), "", &node).and_then(|n| n.as_node().and_then(|n| n.spec.as_ref()).and_then(|s| s.pod_cidr.clone()));
            format!(
                "the CNI plugin on {node} gave it {ip} from the node's range {} (host-local: round robin, never an address in use)",
                cidr.unwrap_or_else(|| "?".into())
            )
        };
        placement.push(answer("Why this IP?", answer_text, Vec::new(), first.map(|v| v.t_ms), &format!("kubelet/{node}")));
    }

    // Containers not running.
    let all: Vec<&ContainerStatus> = status.init_container_statuses.iter().flatten().chain(status.container_statuses.iter().flatten()).collect();
    for c in &all {
        if let Some(w) = c.state.as_ref().and_then(|s| s.waiting.as_ref()) {
            let reason = w.reason.clone().unwrap_or_default();
            let (question, event_reasons): (&str, &[&str]) = match reason.as_str() {
                "ImagePullBackOff" | "ErrImagePull" | "InvalidImageName" => ("Why is its image not pulled?", &["Failed", "BackOff"]),
                "CrashLoopBackOff" => ("Why is it crash-looping?", &["BackOff"]),
                _ => ("Why is it not running yet?", &["Failed", "FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox", "Pulling"]),
            };
            let e = last_event(&evs, event_reasons);
            let mut details: Vec<String> = w.message.iter().cloned().collect();
            if let Some(t) = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) {
                details.push(format!("last run ended: {} (exit code {})", t.reason.clone().unwrap_or_default(), t.exit_code));
            }
            if let Some(e) = e {
                details.push(format!("{} ({}): {}", e.reason, e.source, e.message));
            }
            out.push(answer(question, format!("container {} is waiting: {reason}", c.name), details, e.map(|e| e.last_ms), &format!("kubelet/{node}")));
        }
    }

    // Restarts.
    for c in all.iter().filter(|c| c.restart_count > 0) {
        let Some(t) = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) else { continue };
        let reason = t.reason.clone().unwrap_or_default();
        let killed_by_probe = last_event(&evs, &["Killing"]).filter(|e| e.message.contains(&format!("Container {} failed", c.name)));
        let answer_text = match (&killed_by_probe, reason.as_str()) {
            (Some(e), _) => format!("the kubelet restarted {}: {}", c.name, e.message),
            (None, "OOMKilled") => format!("{} used more memory than its limit and was OOM-killed (exit code {})", c.name, t.exit_code),
            (None, "Completed") => format!("{} exited 0 and restartPolicy Always started it again", c.name),
            (None, _) => format!("{} exited with code {} ({reason})", c.name, t.exit_code),
        };
        let mut details = vec![format!("restarts: {}", c.restart_count)];
        if let Some(e) = last_event(&evs, &["Unhealthy"]) {
            details.push(format!("last probe failure: {}", e.message));
        }
        out.push(answer("Why did it restart?", answer_text, details, t.finished_at.as_ref().map(millis_of), &format!("kubelet/{node}")));
    }

    // Running but not Ready.
    let ready = status.conditions.iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True");
    if !ready && pod.metadata.deletion_timestamp.is_none() && status.phase.as_deref() == Some("Running") {
        let condition = status.conditions.iter().flatten().find(|c| c.type_ == "Ready");
        let probe = last_event(&evs, &["Unhealthy"]).filter(|e| e.message.starts_with("Readiness") || e.message.starts_with("Startup"));
        let mut details: Vec<String> = condition
            .iter()
            .map(|c| format!("Ready {}: {} {}", c.status, c.reason.clone().unwrap_or_default(), c.message.clone().unwrap_or_default()))
            .collect();
        let text = match probe {
            Some(e) => {
                details.push(format!("{} probe failures in all", e.count));
                format!("its probe keeps failing: {}", e.message)
            }
            None => format!("{} of {} containers are ready", print.ready, print.total),
        };
        out.push(answer("Why is it not Ready?", text, details, probe.map(|e| e.last_ms), &format!("kubelet/{node}")));
    }
    out.extend(placement);
    out
}
