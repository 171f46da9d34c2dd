//! "Why is this pod like this?": the answers the inspector's Why tab gives, each drawn from the
//! model's own records — the pod object and its history in the trace, the Events the components
//! wrote (at the moment each was written), the scheduler's queue and attempt history, the
//! kubelet's back-off, the container runtime's logs, the claims it uses, its owner and the node
//! it runs on — and each carrying the moment it happened, so the UI can take the timeline there.
//!
//! The first answer is the one for the pod's state on the lifecycle graph ([`view::pod_view`]
//! classifies it; that is the one rule); the others follow (restarts, a finalizer holding a
//! deleted object, why that node, why that address). Nothing here decides anything again: a
//! verdict is quoted from whoever recorded it.

use crate::view::{self, EventView, Lifecycle};
use crate::World;
use kubesim_api::k8s_openapi::api::core::v1::{Container, ContainerStateTerminated, ContainerStatus, Node, Pod, PodCondition, PodSpec, PodStatus};
use kubesim_api::object::Object;
use kubesim_api::time::{clock, millis_of};
use kubesim_api::Millis;
use kubesim_scheduler::queue::Location;
use kubesim_scheduler::Outcome;

/// One answer.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
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

/// The pod's records, read in one pass over the trace: its versions (this UID's, oldest first,
/// with the writer), every write of an Event about it (so each occurrence has its exact moment;
/// the Event objects' own timestamps have second precision) and its node's versions.
struct Records<'a> {
    versions: Vec<(Millis, &'a str, &'a Pod)>,
    events: Vec<EventView>,
    node: Vec<(Millis, &'a Node)>,
}

impl<'a> Records<'a> {
    fn gather(world: &'a World, pod: &Pod) -> Records<'a> {
        let uid = pod.metadata.uid.as_deref().unwrap_or("");
        let name = pod.metadata.name.as_deref().unwrap_or("");
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
        let node_name = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("");
        let about = |e: &kubesim_api::k8s_openapi::api::core::v1::Event| {
            let o = &e.involved_object;
            match o.uid.as_deref() {
                Some(u) if !u.is_empty() => u == uid,
                _ => o.kind.as_deref() == Some("Pod") && o.name.as_deref() == Some(name) && o.namespace.as_deref() == Some(namespace),
            }
        };
        let mut records = Records { versions: Vec::new(), events: Vec::new(), node: Vec::new() };
        for r in world.trace() {
            match r.object.as_ref() {
                Object::Pod(p) if p.metadata.uid.as_deref() == Some(uid) => records.versions.push((r.t_ms, &*r.actor, p)),
                Object::Event(e) if about(e) => {
                    let mut occurrence = view::event_view(e);
                    occurrence.last_ms = r.t_ms;
                    records.events.push(occurrence);
                }
                Object::Node(n) if !node_name.is_empty() && n.metadata.name.as_deref() == Some(node_name) => records.node.push((r.t_ms, n)),
                _ => {}
            }
        }
        if world.trace().is_empty() {
            // Recording off (benchmarks at scale): the Events in the store, to the second.
            records.events = view::events(world).into_iter().filter(|e| e.object == format!("pod/{name}") && e.namespace == namespace).collect();
        }
        records
    }

    /// When the pod entered `state`: the oldest of the newest run of its versions in that state
    /// (the moment the lifecycle graph moved it there).
    fn since(&self, state: Lifecycle) -> Option<Millis> {
        let mut t = None;
        for (at, _, p) in self.versions.iter().rev() {
            if view::pod_view(p).lifecycle != state {
                break;
            }
            t = Some(*at);
        }
        t
    }

    /// The oldest version satisfying `pred`: (when, who wrote it).
    fn first(&self, pred: impl Fn(&Pod) -> bool) -> Option<(Millis, &'a str)> {
        self.versions.iter().find(|(_, _, p)| pred(p)).map(|(t, actor, _)| (*t, *actor))
    }

    /// The newest occurrence of an Event with one of these reasons (at or after `from`).
    fn last_event(&self, reasons: &[&str], from: Millis) -> Option<&EventView> {
        self.events.iter().rev().take_while(|e| e.last_ms >= from).find(|e| reasons.contains(&e.reason.as_str()))
    }

    fn last_event_where(&self, from: Millis, pred: impl Fn(&EventView) -> bool) -> Option<&EventView> {
        self.events.iter().rev().take_while(|e| e.last_ms >= from).find(|e| pred(e))
    }

    /// The node as it was at `t` (its newest version written by then).
    fn node_at(&self, t: Millis) -> Option<&'a Node> {
        self.node.iter().rev().find(|(at, _)| *at <= t).map(|(_, n)| *n)
    }
}

fn condition<'s>(status: &'s PodStatus, type_: &str) -> Option<&'s PodCondition> {
    status.conditions.iter().flatten().find(|c| c.type_ == type_)
}

fn condition_text(c: &PodCondition) -> String {
    let mut text = format!("{} {}", c.type_, c.status);
    if let Some(reason) = c.reason.as_deref().filter(|r| !r.is_empty()) {
        text.push_str(&format!(": {reason}"));
    }
    if let Some(message) = c.message.as_deref().filter(|m| !m.is_empty()) {
        text.push_str(&format!(" — {message}"));
    }
    text
}

/// A container's spec, init, sidecar or regular.
fn container_spec<'s>(spec: &'s PodSpec, name: &str) -> Option<&'s Container> {
    spec.init_containers.iter().flatten().chain(spec.containers.iter()).find(|c| c.name == name)
}

/// `sh -c 'sleep 60'`: the container's command line as written in the spec.
fn command_line(c: &Container) -> Option<String> {
    let words: Vec<String> = c
        .command
        .iter()
        .flatten()
        .chain(c.args.iter().flatten())
        .map(|w| if w.is_empty() || w.contains(char::is_whitespace) { format!("'{w}'") } else { w.clone() })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// `Error (exit code 3)`, with the signal and the termination message when there are.
fn terminated_text(t: &ContainerStateTerminated) -> String {
    let mut text = format!("{} (exit code {})", t.reason.as_deref().filter(|r| !r.is_empty()).unwrap_or("Terminated"), t.exit_code);
    if let Some(signal) = t.signal.filter(|s| *s != 0) {
        text.push_str(&format!(", signal {signal}"));
    }
    text
}

/// The runtime's container record behind a status's container ID (its moments are exact; the
/// status's have second precision).
fn runtime_container<'w>(world: &'w World, node: &str, container_id: Option<&str>) -> Option<&'w kubesim_host::cri::Container> {
    let id = container_id.map(|id| id.rsplit("://").next().unwrap_or(id))?;
    world.host(node)?.cri.container_status(id).ok()
}

/// When a terminated container ran: (started, finished), from the runtime when it still has
/// the container, else from the status.
fn run_times(world: &World, node: &str, t: &ContainerStateTerminated) -> (Option<Millis>, Option<Millis>) {
    match runtime_container(world, node, t.container_id.as_deref()) {
        Some(c) => (c.started_at, c.finished_at),
        None => (t.started_at.as_ref().map(millis_of), t.finished_at.as_ref().map(millis_of)),
    }
}

fn terminated_details(world: &World, node: &str, t: &ContainerStateTerminated) -> Vec<String> {
    let mut details = Vec::new();
    if let (Some(started), Some(finished)) = run_times(world, node, t) {
        details.push(format!("ran from {} to {}", clock(started), clock(finished)));
    }
    if let Some(message) = t.message.as_deref().map(str::trim_end).filter(|m| !m.is_empty()) {
        details.push(format!("termination message: {message}"));
    }
    details
}

/// The last lines a container instance wrote, from its node's container runtime (what
/// `kubectl logs` reads), by the container ID its status names.
fn last_log_lines(world: &World, node: &str, container_id: Option<&str>, n: usize) -> Vec<String> {
    let Some(c) = runtime_container(world, node, container_id) else { return Vec::new() };
    c.io.logs.tail(n).map(|l| l.text).collect()
}

/// `its 1 container is` / `all 3 containers are`.
fn containers_are(n: usize) -> String {
    if n == 1 {
        "its 1 container is".into()
    } else {
        format!("all {n} containers are")
    }
}

fn memory_limit(c: &Container) -> Option<String> {
    c.resources.as_ref().and_then(|r| r.limits.as_ref()).and_then(|l| l.get("memory")).map(|q| q.0.clone())
}

fn all_statuses(status: &PodStatus) -> impl Iterator<Item = &ContainerStatus> {
    status.init_container_statuses.iter().flatten().chain(status.container_statuses.iter().flatten())
}

fn waiting_reason(c: &ContainerStatus) -> Option<&str> {
    c.state.as_ref().and_then(|s| s.waiting.as_ref()).and_then(|w| w.reason.as_deref())
}

/// Every answer that applies to the pod `namespace/name` now (empty once it is gone): first the
/// one for its state on the lifecycle graph, then the others.
pub fn why(world: &World, namespace: &str, name: &str) -> Vec<WhyAnswer> {
    let Some(object) = world.api().store().get(("", "pods"), namespace, name) else { return Vec::new() };
    let Some(pod) = object.as_pod() else { return Vec::new() };
    let records = Records::gather(world, pod);
    let view = view::pod_view(pod);
    let cx = Cx { world, pod, spec: pod.spec.clone().unwrap_or_default(), status: pod.status.clone().unwrap_or_default(), records, state: view.lifecycle };
    let mut out = Vec::new();
    match cx.state {
        Lifecycle::Pending | Lifecycle::SchedulingGated | Lifecycle::Unschedulable => out.extend(cx.pending()),
        Lifecycle::Scheduled => out.push(cx.scheduled()),
        Lifecycle::Initializing => out.push(cx.initializing()),
        Lifecycle::ContainerCreating => out.push(cx.container_creating()),
        Lifecycle::ImagePullBackOff => out.push(cx.image_pull_back_off()),
        Lifecycle::Running => out.push(cx.not_ready()),
        Lifecycle::Ready => out.push(cx.ready()),
        Lifecycle::CrashLoopBackOff => out.push(cx.crash_loop()),
        Lifecycle::OOMKilled => out.push(cx.oom_killed()),
        Lifecycle::Terminating => out.push(cx.terminating()),
        Lifecycle::Succeeded | Lifecycle::Failed => out.push(cx.finished()),
        Lifecycle::Evicted => out.push(cx.evicted()),
    }
    out.extend(cx.restarts());
    out.extend(cx.held_by_finalizers());
    out.extend(cx.placement());
    out
}

/// What every answer reads.
struct Cx<'a> {
    world: &'a World,
    pod: &'a Pod,
    spec: PodSpec,
    status: PodStatus,
    records: Records<'a>,
    state: Lifecycle,
}

impl Cx<'_> {
    fn node(&self) -> &str {
        self.spec.node_name.as_deref().unwrap_or("")
    }

    fn kubelet(&self) -> String {
        format!("kubelet/{}", self.node())
    }

    fn since(&self) -> Option<Millis> {
        self.records.since(self.state)
    }

    fn uid(&self) -> &str {
        self.pod.metadata.uid.as_deref().unwrap_or("")
    }

    /// The scheduler's newest attempt for this pod object.
    fn attempt(&self) -> Option<&kubesim_scheduler::Attempt> {
        let namespace = self.pod.metadata.namespace.as_deref().unwrap_or("");
        let name = self.pod.metadata.name.as_deref().unwrap_or("");
        self.world.scheduler().and_then(|s| s.last_attempt(namespace, name)).filter(|a| a.pod_uid == self.uid())
    }

    fn queued(&self) -> Option<&kubesim_scheduler::queue::QueuedPod> {
        let namespace = self.pod.metadata.namespace.as_deref().unwrap_or("");
        let name = self.pod.metadata.name.as_deref().unwrap_or("");
        self.world
            .scheduler()
            .and_then(|s| s.queue().get(&format!("{namespace}/{name}")))
            .filter(|q| q.info.object.metadata().uid.as_deref() == Some(self.uid()))
    }

    /// Not on a node: gated, waiting for the scheduler, or no node fits; then its claims.
    fn pending(&self) -> Vec<WhyAnswer> {
        const Q: &str = "Why is it Pending?";
        let mut out = Vec::new();
        let since = self.since();
        let scheduled = condition(&self.status, "PodScheduled");
        let created = self.records.versions.first().map(|(t, actor, _)| format!("created at {} by {actor}", clock(*t)));
        let queued = self.queued();
        let queue_detail = queued.map(|q| {
            let at = match q.location {
                Location::Active => "activeQ (next to be popped by priority, then arrival)",
                Location::Backoff => "backoffQ (backing off before its next attempt)",
                Location::Unschedulable => "unschedulablePods (until a cluster event may make it schedulable, at most 5 min)",
                Location::Gated => "the gated pods (PreEnqueue: SchedulingGates)",
                Location::InFlight => "flight (popped; a scheduling or binding cycle is running)",
            };
            format!("in the scheduling queue: {at}; {} attempt(s) so far, queued at {}", q.attempts, clock(q.timestamp))
        });
        match self.state {
            Lifecycle::SchedulingGated => {
                let gates: Vec<String> = self.spec.scheduling_gates.iter().flatten().map(|g| g.name.clone()).collect();
                let mut details = vec![format!("spec.schedulingGates: {}", gates.join(", "))];
                details.extend(scheduled.map(condition_text));
                details.extend(queue_detail);
                details.push("the scheduler does not try a gated pod: each gate is removed by whoever added it".into());
                out.push(answer(Q, format!("its scheduling gates hold it back from the scheduler: {}", gates.join(", ")), details, since, "default-scheduler"));
            }
            Lifecycle::Unschedulable => out.push(self.unschedulable(scheduled, queue_detail)),
            _ => {
                let scheduler_name = self.spec.scheduler_name.clone().unwrap_or_else(|| "default-scheduler".into());
                let names: Vec<String> = self.world.scheduler().map(|s| s.scheduler_names().into_iter().map(str::to_string).collect()).unwrap_or_default();
                let mut details: Vec<String> = created.into_iter().collect();
                let text = if !names.contains(&scheduler_name) {
                    details.push(format!("spec.schedulerName: {scheduler_name}"));
                    details.push(if names.is_empty() {
                        "no scheduler runs in this cluster".into()
                    } else {
                        format!("kube-scheduler's profiles: {}", names.join(", "))
                    });
                    format!("no scheduler named {scheduler_name} runs: nothing will place it until one does (or spec.nodeName is set)")
                } else {
                    match (queued.map(|q| q.location), self.attempt()) {
                        (Some(Location::InFlight), Some(a)) if a.selected.is_some() => {
                            details.extend(queue_detail);
                            format!(
                                "the scheduler chose {} at {} and is binding it (PreBind, then Bind)",
                                a.selected.clone().unwrap_or_default(),
                                clock(a.t_ms)
                            )
                        }
                        (Some(Location::InFlight), _) => {
                            details.extend(queue_detail);
                            "the scheduler is placing it now (its scheduling cycle is running)".into()
                        }
                        (Some(_), Some(kubesim_scheduler::Attempt { outcome: Outcome::Error(message), t_ms, .. })) => {
                            details.extend(queue_detail);
                            format!("the scheduler's last attempt, at {}, failed: {message}", clock(*t_ms))
                        }
                        (Some(_), _) => {
                            details.extend(queue_detail);
                            "it waits in the scheduling queue: the scheduler has not tried to place it yet".into()
                        }
                        (None, _) => {
                            details.push("watch events reach the scheduler 2 ms after each commit".into());
                            "the scheduler has not seen it yet (its watch event is on the way to the scheduling queue)".into()
                        }
                    }
                };
                out.push(answer(Q, text, details, since, "default-scheduler"));
            }
        }
        out.extend(self.unbound_claims());
        out
    }

    /// The scheduler found no node: its FitError and each node's failing filter.
    fn unschedulable(&self, scheduled: Option<&PodCondition>, queue_detail: Option<String>) -> WhyAnswer {
        const Q: &str = "Why is it Pending?";
        let message = scheduled.and_then(|c| c.message.clone()).unwrap_or_default();
        let Some(a) = self.attempt() else {
            // The scheduler's history is off or was trimmed: the condition it wrote.
            let mut details: Vec<String> = scheduled.map(condition_text).into_iter().collect();
            details.extend(queue_detail);
            return answer(Q, format!("the scheduler found no node for it: {message}"), details, self.since(), "default-scheduler");
        };
        let text = match &a.outcome {
            Outcome::Unschedulable(m) => m.clone(),
            Outcome::Error(m) => format!("the scheduler's last attempt failed: {m}"),
            Outcome::Scheduled(node) => format!("the scheduler chose {node} but the binding did not happen: {message}"),
        };
        let mut details: Vec<String> = a
            .filter()
            .into_iter()
            .filter_map(|(node, plugins)| plugins.into_iter().find(|(_, v)| v != "passed").map(|(plugin, reason)| format!("{node}: {plugin} — {reason}")))
            .collect();
        details.extend(a.pre_filter.iter().filter(|(_, why)| why != "skip").map(|(plugin, why)| format!("PreFilter {plugin}: {why}")));
        if let Some(node) = &a.nominated_node {
            details.push(format!("preemption nominated {node} (victims: {})", a.victims.join(", ")));
        }
        if let Some(e) = self.records.last_event(&["FailedScheduling"], 0) {
            details.push(format!("FailedScheduling ×{} ({}): {}", e.count, e.source, e.message));
        }
        details.extend(queue_detail);
        answer(Q, text, details, Some(a.t_ms), "default-scheduler")
    }

    /// Claims the pod uses that are not bound (the storage view's path says how far each got).
    fn unbound_claims(&self) -> Vec<WhyAnswer> {
        let names = kubesim_api::pod::claim_names(self.pod);
        if names.is_empty() {
            return Vec::new();
        }
        let namespace = self.pod.metadata.namespace.as_deref().unwrap_or("");
        let storage = view::storage(self.world);
        let mut out = Vec::new();
        for claim in names {
            let row = storage.claims.iter().find(|c| c.namespace == namespace && c.name == claim);
            if row.is_some_and(|r| r.phase == "Bound") {
                continue;
            }
            let (text, details, t) = match row {
                None => (format!("its PersistentVolumeClaim {claim} does not exist"), Vec::new(), None),
                Some(r) => {
                    let mut details: Vec<String> = r.path.iter().map(|s| format!("{}: {} {}", s.step.label(), s.state.name(), s.detail)).collect();
                    details.extend(r.problem.clone());
                    (format!("its PersistentVolumeClaim {claim} is {} ({})", r.phase, r.stage.label()), details, Some(r.created_ms))
                }
            };
            out.push(answer("Why is it Pending?", text, details, t, "persistentvolume-controller"));
        }
        out
    }

    /// Bound, and the kubelet has not reported it yet.
    fn scheduled(&self) -> WhyAnswer {
        let node = self.node();
        let bound = self.records.first(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty()));
        let who = bound.map(|(_, actor)| actor.to_string()).unwrap_or_else(|| "spec".into());
        let mut details = vec![format!("bound by {who}{}", bound.map(|(t, _)| format!(" at {}", clock(t))).unwrap_or_default())];
        let node_object = self.world.api().store().get(("", "nodes"), "", node);
        let ready = node_object
            .as_ref()
            .and_then(|n| n.as_node())
            .and_then(|n| n.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready").cloned());
        let text = match &ready {
            None if node_object.is_none() => format!("it is bound to {node}, which does not exist: no kubelet will run it"),
            Some(c) if c.status != "True" => {
                details.push(format!("{node}: Ready {} — {}", c.status, c.message.clone().unwrap_or_default()));
                format!("it is bound to {node}, whose kubelet is not reporting (the node is NotReady): nothing starts it until the kubelet is back")
            }
            _ => format!("it is bound to {node}; the kubelet there has not reported on it yet (it syncs the pod as soon as its watch delivers it)"),
        };
        answer("Why has it not started yet?", text, details, bound.map(|(t, _)| t), &who)
    }

    /// An init container still to complete.
    fn initializing(&self) -> WhyAnswer {
        let init: Vec<&Container> = self.spec.init_containers.iter().flatten().collect();
        let statuses: &[ContainerStatus] = self.status.init_container_statuses.as_deref().unwrap_or(&[]);
        let mut details = Vec::new();
        let mut text = String::from("its init containers have not completed");
        let mut t = self.since();
        for (i, c) in init.iter().enumerate() {
            let s = statuses.iter().find(|s| s.name == c.name);
            let state = s.and_then(|s| s.state.clone()).unwrap_or_default();
            let sidecar = c.restart_policy.as_deref() == Some("Always");
            if let Some(done) = state.terminated.as_ref().filter(|t| t.exit_code == 0) {
                details.push(format!("init container {}: {}", c.name, terminated_text(done)));
                continue;
            }
            if sidecar && s.is_some_and(|s| s.started == Some(true)) {
                details.push(format!("sidecar {}: started", c.name));
                continue;
            }
            let position = format!("{} of {}", i + 1, init.len());
            if state.running.is_some() {
                let started = self.records.first(|p| {
                    p.status.as_ref().and_then(|s| s.init_container_statuses.as_ref()).is_some_and(|l| {
                        l.iter().any(|x| {
                            x.name == c.name
                                && x.container_id == s.and_then(|s| s.container_id.clone())
                                && x.state.as_ref().is_some_and(|st| st.running.is_some())
                        })
                    })
                });
                t = started.map(|(at, _)| at).or(t);
                text = if sidecar {
                    format!("sidecar {} ({position}) is running but has not started yet (its startup probe has not succeeded)", c.name)
                } else {
                    format!("init container {} ({position}) is running; the app containers start once it exits 0", c.name)
                };
            } else if let Some(w) = state.waiting.as_ref() {
                text = format!("init container {} ({position}) is waiting: {}", c.name, w.reason.clone().unwrap_or_default());
                details.extend(w.message.clone().filter(|m| !m.is_empty()));
            } else if let Some(failed) = state.terminated.as_ref() {
                text = format!("init container {} ({position}) exited: {}; the kubelet runs it again", c.name, terminated_text(failed));
            }
            if let Some(command) = command_line(c) {
                details.push(format!("{}: {command}", c.name));
            }
            let lines = last_log_lines(self.world, self.node(), s.and_then(|s| s.container_id.as_deref()), 3);
            if !lines.is_empty() {
                details.push(format!("its last output: {}", lines.join(" / ")));
            }
            break;
        }
        answer("Why is it initializing?", text, details, t, &self.kubelet())
    }

    /// On the node, containers not running yet: what the kubelet waits on.
    fn container_creating(&self) -> WhyAnswer {
        const Q: &str = "Why is it not running yet?";
        let since = self.since().unwrap_or(0);
        let kubelet = self.kubelet();
        // A container the kubelet could not create (its configuration, its runtime).
        for c in all_statuses(&self.status) {
            let Some(w) = c.state.as_ref().and_then(|s| s.waiting.as_ref()) else { continue };
            let reason = w.reason.clone().unwrap_or_default();
            if matches!(reason.as_str(), "ContainerCreating" | "PodInitializing" | "") {
                continue;
            }
            let event = self.records.last_event(&["Failed"], since);
            let t = self
                .records
                .first(|p| p.status.as_ref().is_some_and(|s| all_statuses(s).any(|x| x.name == c.name && waiting_reason(x) == Some(reason.as_str()))))
                .map(|(t, _)| t.max(since));
            let mut details: Vec<String> = event.map(|e| format!("{} ({}): {}", e.reason, e.source, e.message)).into_iter().collect();
            details.push("the kubelet retries on its next sync".into());
            let message = w.message.clone().filter(|m| !m.is_empty()).map(|m| format!(": {m}")).unwrap_or_default();
            return answer(Q, format!("container {} cannot be created: {reason}{message}", c.name), details, t.or(Some(since)), &kubelet);
        }
        // The sandbox.
        if let Some(e) = self.records.last_event(&["FailedCreatePodSandBox"], since) {
            return answer(
                Q,
                format!("the pod sandbox cannot be created: {}", e.message),
                vec![format!("{} ×{}", e.reason, e.count)],
                Some(e.last_ms),
                &kubelet,
            );
        }
        // Volumes: the claims' paths, then the mount errors.
        let namespace = self.pod.metadata.namespace.as_deref().unwrap_or("");
        let claims = kubesim_api::pod::claim_names(self.pod);
        if !claims.is_empty() {
            let storage = view::storage(self.world);
            for claim in &claims {
                let Some(row) = storage.claims.iter().find(|r| r.namespace == namespace && &r.name == claim) else { continue };
                if row.stage == view::ClaimStage::Published {
                    continue;
                }
                let volume = self
                    .spec
                    .volumes
                    .iter()
                    .flatten()
                    .find(|v| v.persistent_volume_claim.as_ref().is_some_and(|c| &c.claim_name == claim))
                    .map(|v| v.name.clone())
                    .unwrap_or_else(|| claim.clone());
                let step = row.path.iter().find(|s| !matches!(s.state, view::StepState::Done | view::StepState::Skipped));
                let mut details: Vec<String> = row.path.iter().map(|s| format!("{}: {} {}", s.step.label(), s.state.name(), s.detail)).collect();
                let event = self.records.last_event(&["FailedAttachVolume", "FailedMount"], since);
                details.extend(event.map(|e| format!("{} ×{} ({}): {}", e.reason, e.count, e.source, e.message)));
                let waiting = match step {
                    Some(s) if s.state == view::StepState::Failed => format!("{} failed: {}", s.step.label(), s.detail),
                    Some(s) => format!("waiting to {}{}", s.step.label(), if s.detail.is_empty() { String::new() } else { format!(" ({})", s.detail) }),
                    None => row.stage.label().to_string(),
                };
                let text = format!("it waits for volume {volume} (claim {claim}, {}): {waiting}", row.stage.label());
                return answer(Q, text, details, event.map(|e| e.last_ms).or(Some(since)), &kubelet);
            }
        }
        if let Some(e) = self.records.last_event(&["FailedMount", "FailedAttachVolume"], since) {
            return answer(
                Q,
                format!("a volume cannot be mounted: {}", e.message),
                vec![format!("{} ×{} ({})", e.reason, e.count, e.source), "the kubelet retries the mount with back-off".into()],
                Some(e.last_ms),
                &kubelet,
            );
        }
        // An image pull in progress: a Pulling with no answer yet.
        if let Some(pulling) = self.records.last_event(&["Pulling"], since) {
            let image = pulling.message.strip_prefix("Pulling image ").unwrap_or(&pulling.message).to_string();
            let answered = self
                .records
                .events
                .iter()
                .any(|e| e.last_ms >= pulling.last_ms && matches!(e.reason.as_str(), "Pulled" | "Failed") && e.message.contains(&image));
            if !answered {
                return answer(
                    Q,
                    format!("the kubelet is pulling image {image} (since {})", clock(pulling.last_ms)),
                    vec![format!("{} ({}): {}", pulling.reason, pulling.source, pulling.message)],
                    Some(pulling.last_ms),
                    &kubelet,
                );
            }
        }
        // Nothing failed and nothing is pulled: the step in progress.
        let created = self.records.last_event_where(since, |e| matches!(e.reason.as_str(), "Created" | "Pulled"));
        let text = match (&self.status.pod_ip, created) {
            (None, None) => format!("the kubelet on {} is creating the pod sandbox (the pause container, then CNI ADD for its address)", self.node()),
            (_, Some(e)) => format!("the kubelet is starting its containers: {}", e.message),
            (Some(ip), None) => format!("the sandbox is up ({ip}); the kubelet is creating its containers"),
        };
        answer(Q, text, Vec::new(), created.map(|e| e.last_ms).or(Some(since)), &kubelet)
    }

    /// An image cannot be pulled: the registry's error, and the kubelet's back-off.
    fn image_pull_back_off(&self) -> WhyAnswer {
        let since = self.since();
        let Some(c) = all_statuses(&self.status)
            .find(|c| matches!(waiting_reason(c), Some("ImagePullBackOff" | "ErrImagePull" | "ErrImageNeverPull" | "InvalidImageName")))
        else {
            return answer("Why is its image not pulled?", "an image cannot be pulled".into(), Vec::new(), since, &self.kubelet());
        };
        let waiting = c.state.as_ref().and_then(|s| s.waiting.clone()).unwrap_or_default();
        let reason = waiting.reason.clone().unwrap_or_default();
        let image = container_spec(&self.spec, &c.name).and_then(|s| s.image.clone()).unwrap_or_default();
        let error = self.records.last_event_where(0, |e| {
            (e.reason == "Failed" && e.message.starts_with("Failed to pull image")) || matches!(e.reason.as_str(), "InspectFailed" | "ErrImageNeverPull")
        });
        let mut text = format!("container {} cannot get image {image:?}: {reason}", c.name);
        if let Some(e) = error {
            text.push_str(&format!(" — {}", e.message));
        }
        let mut details: Vec<String> = waiting.message.iter().cloned().collect();
        if let Some((window, from)) = self.world.kubelet(self.node()).and_then(|k| k.pull_backoff(self.uid(), &image)) {
            details.push(format!(
                "back-off {} from {}: the kubelet pulls again after {} (10 s doubling to 5 min)",
                kubesim_kubelet::kubelet::format_go_duration(window),
                clock(from),
                clock(from + window)
            ));
        }
        let pulls = self.records.events.iter().filter(|e| e.reason == "Pulling" && e.message.contains(&format!("{image:?}"))).count();
        details.push(format!("pull attempts: {pulls}"));
        if let Some(e) = error {
            details.push(format!("last failure at {} ({})", clock(e.last_ms), e.source));
        }
        answer("Why is its image not pulled?", text, details, since.or(error.map(|e| e.last_ms)), &self.kubelet())
    }

    /// Running, not Ready: a readiness gate, a probe, or containers not started.
    fn not_ready(&self) -> WhyAnswer {
        const Q: &str = "Why is it not Ready?";
        let since = self.since();
        let kubelet = self.kubelet();
        let ready = condition(&self.status, "Ready");
        let mut details: Vec<String> = ready.map(condition_text).into_iter().collect();
        if ready.and_then(|c| c.reason.as_deref()) == Some("ReadinessGatesNotReady") {
            for gate in self.spec.readiness_gates.iter().flatten() {
                details.push(match condition(&self.status, &gate.condition_type) {
                    Some(c) => format!("readiness gate {}: {}", gate.condition_type, condition_text(c)),
                    None => format!("readiness gate {}: no such condition yet (whoever owns the gate sets it)", gate.condition_type),
                });
            }
            let text = format!("its containers are ready but a readiness gate is not: {}", ready.and_then(|c| c.message.clone()).unwrap_or_default());
            return answer(Q, text, details, since, &kubelet);
        }
        let from = since.unwrap_or(0);
        let probe =
            self.records.last_event_where(from, |e| e.reason == "Unhealthy" && (e.message.starts_with("Readiness") || e.message.starts_with("Startup")));
        let unready: Vec<&ContainerStatus> = self.status.container_statuses.iter().flatten().filter(|c| !c.ready).collect();
        let describe = |name: &str, startup: bool| {
            container_spec(&self.spec, name)
                .and_then(|c| if startup { c.startup_probe.as_ref() } else { c.readiness_probe.as_ref() })
                .map(kubesim_kubectl::reuse::describe_probe)
        };
        let text = match probe {
            Some(e) => {
                let startup = e.message.starts_with("Startup");
                let container = unready.iter().find(|c| describe(&c.name, startup).is_some()).map(|c| c.name.clone());
                if let Some(p) = container.as_deref().and_then(|c| describe(c, startup)) {
                    details.push(format!("{} probe of {}: {p}", if startup { "startup" } else { "readiness" }, container.unwrap_or_default()));
                }
                details.push(format!("{} probe failures in all, the last at {}", e.count, clock(e.last_ms)));
                format!("its probe keeps failing: {}", e.message)
            }
            None => {
                let mut parts = Vec::new();
                for c in &unready {
                    let running = c.state.as_ref().is_some_and(|s| s.running.is_some());
                    if running && c.started == Some(false) {
                        parts.push(format!("{} has not passed its startup probe yet", c.name));
                        details.extend(describe(&c.name, true).map(|p| format!("startup probe of {}: {p}", c.name)));
                    } else if running {
                        parts.push(format!("{} has not passed its readiness probe yet", c.name));
                        details.extend(describe(&c.name, false).map(|p| format!("readiness probe of {}: {p}", c.name)));
                    } else {
                        let state = c
                            .state
                            .as_ref()
                            .map(|s| match (&s.waiting, &s.terminated) {
                                (Some(w), _) => format!("waiting: {}", w.reason.clone().unwrap_or_default()),
                                (_, Some(t)) => format!("terminated: {}", terminated_text(t)),
                                _ => "not running".into(),
                            })
                            .unwrap_or_default();
                        parts.push(format!("{} is {state}", c.name));
                    }
                }
                let print = kubesim_api::pod::print_pod(self.pod);
                if parts.is_empty() {
                    format!("{} of {} containers are ready", print.ready, print.total)
                } else {
                    format!("{} of {} containers are ready: {}", print.ready, print.total, parts.join("; "))
                }
            }
        };
        answer(Q, text, details, since.or(probe.map(|e| e.last_ms)), &kubelet)
    }

    /// Running and Ready.
    fn ready(&self) -> WhyAnswer {
        let print = kubesim_api::pod::print_pod(self.pod);
        let since = self.since();
        let mut details = Vec::new();
        for c in all_statuses(&self.status).filter(|c| c.ready) {
            let spec = container_spec(&self.spec, &c.name);
            let started = c.state.as_ref().and_then(|s| s.running.as_ref()).and_then(|r| r.started_at.as_ref()).map(millis_of);
            let how = match spec.and_then(|s| s.readiness_probe.as_ref()) {
                Some(p) => format!("its readiness probe passes ({})", kubesim_kubectl::reuse::describe_probe(p)),
                None => "no readiness probe: ready once started".into(),
            };
            details.push(format!("{}: running{}, {how}", c.name, started.map(|t| format!(" since {}", clock(t))).unwrap_or_default()));
        }
        for gate in self.spec.readiness_gates.iter().flatten() {
            details.extend(condition(&self.status, &gate.condition_type).map(|c| format!("readiness gate {}", condition_text(c))));
        }
        let text = format!(
            "{} ready{}, so the kubelet set Ready=True",
            containers_are(print.total),
            since.map(|t| format!(" (since {})", clock(t))).unwrap_or_default()
        );
        answer("Why is it Ready?", text, details, since, &self.kubelet())
    }

    /// A container exits again and again: its exit, the back-off, its last words.
    fn crash_loop(&self) -> WhyAnswer {
        let since = self.since();
        let Some(c) = all_statuses(&self.status).find(|c| waiting_reason(c) == Some("CrashLoopBackOff")) else {
            return answer("Why is it crash-looping?", "a container keeps exiting".into(), Vec::new(), since, &self.kubelet());
        };
        let waiting = c.state.as_ref().and_then(|s| s.waiting.clone()).unwrap_or_default();
        let last = c.last_state.as_ref().and_then(|s| s.terminated.clone());
        let back_off = waiting.message.as_deref().and_then(|m| m.strip_prefix("back-off ")).and_then(|m| m.split_whitespace().next()).map(str::to_string);
        let mut text = format!("container {} keeps exiting", c.name);
        if let Some(t) = &last {
            text.push_str(&format!(": its last run ended {}", terminated_text(t)));
        }
        text.push_str(&format!(
            "; the kubelet restarts it after a back-off{} (10 s doubling to 5 min)",
            back_off.as_deref().map(|b| format!(" of {b}")).unwrap_or_default()
        ));
        let mut details: Vec<String> = waiting.message.iter().cloned().collect();
        details.push(format!("restarts: {}", c.restart_count));
        if let Some(t) = &last {
            details.extend(terminated_details(self.world, self.node(), t));
            let lines = last_log_lines(self.world, self.node(), t.container_id.as_deref(), 5);
            if !lines.is_empty() {
                details.push(format!("its last output: {}", lines.join(" / ")));
            }
        }
        if let Some(e) = self.records.last_event(&["Killing"], 0).filter(|e| e.message.contains(&format!("Container {} failed", c.name))) {
            details.push(format!("the kubelet killed it: {}", e.message));
        }
        if let Some(command) = container_spec(&self.spec, &c.name).and_then(command_line) {
            details.push(format!("{}: {command}", c.name));
        }
        answer("Why is it crash-looping?", text, details, since, &self.kubelet())
    }

    /// A container was killed for memory: its limit, the kernel's reason.
    fn oom_killed(&self) -> WhyAnswer {
        let since = self.since();
        let oom = |s: &Option<kubesim_api::k8s_openapi::api::core::v1::ContainerState>| {
            s.as_ref().and_then(|s| s.terminated.clone()).filter(|t| t.reason.as_deref() == Some("OOMKilled"))
        };
        let found = self.status.container_statuses.iter().flatten().find_map(|c| oom(&c.state).or_else(|| oom(&c.last_state)).map(|t| (c, t)));
        let Some((c, t)) = found else {
            return answer("Why was it OOM-killed?", "a container was OOM-killed".into(), Vec::new(), since, &self.kubelet());
        };
        let limit = container_spec(&self.spec, &c.name).and_then(memory_limit);
        let mut text = match &limit {
            Some(l) => format!("container {} used more memory than its limit of {l} and the kernel killed it: {}", c.name, terminated_text(&t)),
            None => format!("container {} was killed for memory (it has no limit of its own): {}", c.name, terminated_text(&t)),
        };
        let mut details = vec![format!("resources.limits.memory: {}", limit.unwrap_or_else(|| "none".into()))];
        details.push(format!("QoS class: {}", kubesim_api::pod::qos_class(self.pod)));
        details.extend(terminated_details(self.world, self.node(), &t));
        details.push(format!("restarts: {}", c.restart_count));
        match waiting_reason(c) {
            Some("CrashLoopBackOff") => {
                text.push_str("; the kubelet restarts it after a back-off");
                details.extend(c.state.as_ref().and_then(|s| s.waiting.as_ref()).and_then(|w| w.message.clone()));
            }
            _ if self.status.phase.as_deref() == Some("Failed") => {
                text.push_str(&format!("; restartPolicy {} does not restart it, so the pod failed", self.spec.restart_policy.clone().unwrap_or_default()))
            }
            _ => {}
        }
        answer("Why was it OOM-killed?", text, details, since.or(run_times(self.world, self.node(), &t).1), &self.kubelet())
    }

    /// Being deleted: who asked, why, and what it waits for.
    fn terminating(&self) -> WhyAnswer {
        let request = self.records.versions.iter().find(|(_, _, p)| p.metadata.deletion_timestamp.is_some());
        let deadline = self.pod.metadata.deletion_timestamp.as_ref().map(millis_of);
        let t = request.map(|(t, _, _)| *t).or(deadline);
        let who = request.map(|(_, actor, _)| actor.to_string()).unwrap_or_else(|| "someone".into());
        let grace = request.and_then(|(_, _, p)| p.metadata.deletion_grace_period_seconds).or(self.pod.metadata.deletion_grace_period_seconds).unwrap_or(0);
        let disruption = condition(&self.status, "DisruptionTarget").filter(|c| c.status == "True");
        let mut details = Vec::new();
        let owner = self.pod.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true)).map(|r| format!("{}/{}", r.kind, r.name));
        let text = match disruption.and_then(|c| c.reason.as_deref()) {
            Some("EvictionByEvictionAPI") => {
                format!("{who} evicted it through the Eviction API (pods/eviction, as kubectl drain does); the API server then deleted it")
            }
            Some("DeletionByTaintManager") => {
                let (taints, text) = self.taint_eviction(t.unwrap_or(0));
                details.extend(taints);
                text
            }
            Some("PreemptionByScheduler") => {
                format!("the scheduler preempted it to make room: {}", disruption.and_then(|c| c.message.clone()).unwrap_or_default())
            }
            Some("DeletionByPodGC") => format!("the pod garbage collector deleted it: {}", disruption.and_then(|c| c.message.clone()).unwrap_or_default()),
            _ => match who.as_str() {
                "garbage-collector" => {
                    let owners: Vec<String> = self
                        .pod
                        .metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .map(|r| match self.owner_json(r) {
                            None => format!("{}/{} is gone", r.kind, r.name),
                            Some(o) if o.pointer("/metadata/deletionTimestamp").is_some() => format!("{}/{} is being deleted (foreground)", r.kind, r.name),
                            Some(_) => format!("{}/{} exists", r.kind, r.name),
                        })
                        .collect();
                    format!("the garbage collector deleted it: its owner {}", owners.join(", "))
                }
                "kubectl" => "a user deleted it (kubectl)".to_string(),
                actor if actor.ends_with("-controller") => {
                    let controller = self.pod.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true));
                    if let Some(replicas) = controller.and_then(|r| self.owner_json(r)).and_then(|o| o.pointer("/spec/replicas").and_then(|v| v.as_i64())) {
                        details.push(format!("{}: spec.replicas {replicas}", owner.clone().unwrap_or_default()));
                    }
                    format!("{actor} deleted it{}", owner.as_ref().map(|o| format!(" (its owner is {o})")).unwrap_or_default())
                }
                actor => format!("{actor} deleted it"),
            },
        };
        details.extend(disruption.map(condition_text));
        details.push(format!("grace period: {grace} s{}", deadline.map(|d| format!(": what still runs at {} is killed", clock(d))).unwrap_or_default()));
        for c in self.spec.init_containers.iter().flatten().chain(self.spec.containers.iter()) {
            let Some(hook) = c.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref()) else { continue };
            let what = if let Some(e) = &hook.exec {
                format!("exec {}", e.command.clone().unwrap_or_default().join(" "))
            } else if let Some(s) = &hook.sleep {
                format!("sleep {} s", s.seconds)
            } else if let Some(h) = &hook.http_get {
                format!("httpGet {}", h.path.clone().unwrap_or_default())
            } else {
                "a hook".into()
            };
            details.push(format!("preStop of {}: {what} runs before SIGTERM", c.name));
        }
        let running: Vec<&str> = self
            .status
            .container_statuses
            .iter()
            .flatten()
            .filter(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
            .map(|c| c.name.as_str())
            .collect();
        if !running.is_empty() {
            details.push(format!("still running: {}", running.join(", ")));
        }
        if let Some(e) = self.records.last_event(&["Killing"], t.unwrap_or(0)) {
            details.push(format!("{} ({}): {}", e.reason, e.source, e.message));
        }
        let finalizers: Vec<String> = self.pod.metadata.finalizers.iter().flatten().cloned().collect();
        if !finalizers.is_empty() {
            details.push(format!("finalizers keep the object until they are removed: {}", finalizers.join(", ")));
        }
        answer("Why is it terminating?", text, details, t, &who)
    }

    /// An owner object as it is now (None once it is gone).
    fn owner_json(&self, r: &kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference) -> Option<serde_json::Value> {
        let info = kubesim_api::object::kind_info(&r.api_version, &r.kind)?;
        let namespace = if info.scope == kubesim_api::object::Scope::Cluster { "" } else { self.pod.metadata.namespace.as_deref().unwrap_or("") };
        self.world
            .api()
            .store()
            .get((info.group(), info.plural), namespace, &r.name)
            .filter(|o| o.metadata().uid.as_deref() == Some(r.uid.as_str()))
            .map(|o| o.to_json())
    }

    /// The taint-eviction-controller's NoExecute verdict: the node's NoExecute taints when it
    /// acted and the pod's matching tolerations.
    fn taint_eviction(&self, at: Millis) -> (Vec<String>, String) {
        let node = self.node();
        let taints: Vec<kubesim_api::k8s_openapi::api::core::v1::Taint> = self
            .records
            .node_at(at)
            .and_then(|n| n.spec.as_ref())
            .and_then(|s| s.taints.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|t| t.effect == "NoExecute")
            .collect();
        let tolerations = self.spec.tolerations.clone().unwrap_or_default();
        let mut details = Vec::new();
        for taint in &taints {
            let name = format!("{}{}:NoExecute", taint.key, taint.value.as_ref().map(|v| format!("={v}")).unwrap_or_default());
            let added = taint.time_added.as_ref().map(|t| format!(" (added at {})", clock(millis_of(t)))).unwrap_or_default();
            let tolerated = tolerations.iter().find(|t| kubesim_controllers::nodelifecycle::tolerates(t, taint));
            details.push(match tolerated {
                None => format!("{node}'s taint {name}{added}: not tolerated, evicted at once"),
                Some(t) => match t.toleration_seconds {
                    Some(s) => format!("{node}'s taint {name}{added}: tolerated for {s} s (tolerationSeconds)"),
                    None => format!("{node}'s taint {name}{added}: tolerated"),
                },
            });
        }
        let names: Vec<String> = taints.iter().map(|t| t.key.clone()).collect();
        let text = format!(
            "the taint-eviction-controller deleted it: {node} has the NoExecute taint{} {}{}",
            if names.len() == 1 { "" } else { "s" },
            names.join(", "),
            match kubesim_controllers::nodelifecycle::toleration_time(&taints, &tolerations) {
                Some(Some(s)) if s > 0 => format!(", which the pod tolerated for {s} s"),
                Some(Some(_)) | None => ", which the pod does not tolerate".to_string(),
                Some(None) => String::new(),
            }
        );
        (details, text)
    }

    /// Finished: every container's exit, and its Job's verdict.
    fn finished(&self) -> WhyAnswer {
        let since = self.since();
        let succeeded = self.state == Lifecycle::Succeeded;
        let question = if succeeded { "Why did it complete?" } else { "Why did it fail?" };
        let restart_policy = self.spec.restart_policy.clone().unwrap_or_else(|| "Always".into());
        let mut details = Vec::new();
        let mut failed = Vec::new();
        for c in self.status.container_statuses.iter().flatten() {
            let Some(t) = c.state.as_ref().and_then(|s| s.terminated.as_ref()) else {
                details.push(format!("{}: did not run to completion", c.name));
                continue;
            };
            details.push(format!("{}: {}", c.name, terminated_text(t)));
            details.extend(terminated_details(self.world, self.node(), t).into_iter().map(|d| format!("{}: {d}", c.name)));
            if t.exit_code != 0 {
                failed.push((c, t.clone()));
                let lines = last_log_lines(self.world, self.node(), t.container_id.as_deref(), 3);
                if !lines.is_empty() {
                    details.push(format!("{}'s last output: {}", c.name, lines.join(" / ")));
                }
            }
        }
        let deleted = self.records.first(|p| p.metadata.deletion_timestamp.is_some());
        let text = if let (true, Some((at, actor))) = (succeeded, deleted) {
            format!("{actor} deleted it at {} and every container then exited 0, so the kubelet recorded it Succeeded", clock(at))
        } else if succeeded {
            format!("every container exited 0 and restartPolicy {restart_policy} does not run them again")
        } else if let Some(reason) = self.status.reason.as_deref().filter(|r| !r.is_empty()) {
            format!("{reason}: {}", self.status.message.clone().unwrap_or_default())
        } else if let Some((c, t)) = failed.first() {
            format!("container {} exited {} and restartPolicy {restart_policy} does not restart it", c.name, terminated_text(t))
        } else {
            "its containers did not complete".into()
        };
        if let Some(deadline) = self.spec.active_deadline_seconds {
            details.push(format!("activeDeadlineSeconds: {deadline}"));
        }
        details.extend(self.job_verdict());
        answer(question, text, details, since, &self.kubelet())
    }

    /// The owning Job's counts, limits and conditions.
    fn job_verdict(&self) -> Vec<String> {
        let Some(owner) = self.pod.metadata.owner_references.iter().flatten().find(|r| r.kind == "Job" && r.controller == Some(true)) else {
            return Vec::new();
        };
        let namespace = self.pod.metadata.namespace.as_deref().unwrap_or("");
        let Some(job) = self.world.api().store().get(("batch", "jobs"), namespace, &owner.name).map(|o| o.to_json()) else {
            return vec![format!("its Job {} is gone", owner.name)];
        };
        let n = |p: &str| job.pointer(p).and_then(|v| v.as_i64());
        let mut out = vec![format!(
            "Job {}: {} succeeded, {} failed (backoffLimit {}{})",
            owner.name,
            n("/status/succeeded").unwrap_or(0),
            n("/status/failed").unwrap_or(0),
            n("/spec/backoffLimit").unwrap_or(6),
            n("/spec/activeDeadlineSeconds").map(|d| format!(", activeDeadlineSeconds {d}")).unwrap_or_default()
        )];
        for c in job.pointer("/status/conditions").and_then(|c| c.as_array()).into_iter().flatten() {
            if c["status"] == "True" && matches!(c["type"].as_str(), Some("Failed" | "Complete" | "FailureTarget" | "SuccessCriteriaMet")) {
                out.push(format!(
                    "Job {}: {} — {}: {}",
                    owner.name,
                    c["type"].as_str().unwrap_or(""),
                    c["reason"].as_str().unwrap_or(""),
                    c["message"].as_str().unwrap_or("")
                ));
            }
        }
        out
    }

    /// The kubelet evicted it: the signal, the threshold, the node's pressure.
    fn evicted(&self) -> WhyAnswer {
        let since = self.since();
        let by = self.records.first(|p| p.status.as_ref().and_then(|s| s.reason.as_deref()) == Some("Evicted"));
        let who = by.map(|(_, actor)| actor.to_string()).unwrap_or_else(|| self.kubelet());
        let message = self.status.message.clone().unwrap_or_default();
        // The message is the kubelet's (status, condition and Event say it alike): once.
        let mut details: Vec<String> = condition(&self.status, "DisruptionTarget")
            .map(|c| format!("DisruptionTarget {}: {}", c.status, c.reason.clone().unwrap_or_default()))
            .into_iter()
            .collect();
        if let Some(e) = self.records.last_event(&["Evicted"], 0) {
            details.push(format!("Evicted event by {} at {}", e.source, clock(e.last_ms)));
        }
        let at = by.map(|(t, _)| t).or(since).unwrap_or(0);
        for c in self.records.node_at(at).and_then(|n| n.status.as_ref()).and_then(|s| s.conditions.as_ref()).into_iter().flatten() {
            if c.type_.ends_with("Pressure") && c.status == "True" {
                details.push(format!("{}: {} {} — {}", self.node(), c.type_, c.status, c.message.clone().unwrap_or_default()));
            }
        }
        let text = format!("{who} evicted it to relieve node pressure: {}", message.trim_end());
        answer("Why was it evicted?", text, details, by.map(|(t, _)| t).or(since), &who)
    }

    /// Containers that restarted (the state's answer may say more).
    fn restarts(&self) -> Vec<WhyAnswer> {
        let mut out = Vec::new();
        for c in all_statuses(&self.status).filter(|c| c.restart_count > 0) {
            let Some(t) = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) else { continue };
            let reason = t.reason.clone().unwrap_or_default();
            let killed_by_probe = self.records.last_event(&["Killing"], 0).filter(|e| e.message.contains(&format!("Container {} failed", c.name)));
            let text = match (&killed_by_probe, reason.as_str()) {
                (Some(e), _) => format!("the kubelet restarted {}: {}", c.name, e.message),
                (None, "OOMKilled") => format!(
                    "{} used more memory than its limit{} and was OOM-killed (exit code {})",
                    c.name,
                    container_spec(&self.spec, &c.name).and_then(memory_limit).map(|l| format!(" of {l}")).unwrap_or_default(),
                    t.exit_code
                ),
                (None, "Completed") => format!("{} exited 0 and restartPolicy Always started it again", c.name),
                (None, _) => format!("{} exited with code {} ({reason})", c.name, t.exit_code),
            };
            let mut details = vec![format!("restarts: {}", c.restart_count)];
            if let Some(e) = self.records.last_event(&["Unhealthy"], 0) {
                details.push(format!("last probe failure: {}", e.message));
            }
            out.push(answer("Why did it restart?", text, details, run_times(self.world, self.node(), t).1, &self.kubelet()));
        }
        out
    }

    /// A deleted pod that finished but stays: its finalizers (Terminating says it itself).
    fn held_by_finalizers(&self) -> Option<WhyAnswer> {
        if self.state == Lifecycle::Terminating || self.pod.metadata.deletion_timestamp.is_none() {
            return None;
        }
        let finalizers: Vec<String> = self.pod.metadata.finalizers.iter().flatten().cloned().collect();
        if finalizers.is_empty() {
            return None;
        }
        let request = self.records.first(|p| p.metadata.deletion_timestamp.is_some());
        Some(answer(
            "Why is it still there?",
            format!("it was deleted but its finalizers keep the object until they are removed: {}", finalizers.join(", ")),
            request.map(|(t, actor)| format!("deleted by {actor} at {}", clock(t))).into_iter().collect(),
            request.map(|(t, _)| t),
            "trace",
        ))
    }

    /// Why that node, and why that address.
    fn placement(&self) -> Vec<WhyAnswer> {
        let node = self.node().to_string();
        if node.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        match self.attempt().filter(|a| a.selected.as_deref() == Some(node.as_str())) {
            Some(a) => {
                let totals = a.final_scores();
                let mut ranked: Vec<(String, i64)> = totals.iter().map(|(n, plugins)| (n.clone(), plugins.values().sum())).collect();
                kubesim_api::sort::sort_by(&mut ranked, |x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
                let filtered: Vec<String> = a
                    .filter()
                    .into_iter()
                    .filter_map(|(n, plugins)| {
                        plugins.into_iter().find(|(_, v)| v != "passed").map(|(plugin, reason)| format!("{n} filtered out by {plugin}: {reason}"))
                    })
                    .collect();
                let mut details: Vec<String> = ranked.iter().take(5).map(|(n, score)| format!("{n}: {score}")).collect();
                if let Some(plugins) = totals.get(&node) {
                    let mut top: Vec<(&String, &i64)> = plugins.iter().collect();
                    kubesim_api::sort::sort_by(&mut top, |x, y| y.1.cmp(x.1));
                    details.push(format!("{node}'s score: {}", top.iter().map(|(p, s)| format!("{p} {s}")).collect::<Vec<_>>().join(", ")));
                }
                let ties = ranked.iter().filter(|(_, s)| Some(*s) == ranked.first().map(|r| r.1)).count();
                if ties > 1 {
                    details.push(format!("{ties} nodes tied for the top score: the scheduler picked one of them at random (selectHost's reservoir sampling)"));
                }
                let count = filtered.len();
                details.extend(filtered);
                out.push(answer(
                    "Why this node?",
                    format!("the scheduler scored {node} highest among {} feasible node(s); {count} were filtered out", ranked.len()),
                    details,
                    Some(a.t_ms),
                    "default-scheduler",
                ));
            }
            None => {
                let bound = self.records.first(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty()));
                let text = match bound {
                    Some((_, actor))
                        if actor != "default-scheduler"
                            && self
                                .records
                                .versions
                                .first()
                                .is_some_and(|(_, _, p)| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node.as_str())) =>
                    {
                        format!("spec.nodeName named {node} when {actor} created it: the pod never passed through the scheduler")
                    }
                    Some((_, actor)) => format!("{actor} bound it to {node} (the scheduler's record of that attempt is no longer kept)"),
                    None => format!("spec.nodeName named {node}: the pod never passed through the scheduler"),
                };
                out.push(answer("Why this node?", text, Vec::new(), bound.map(|(t, _)| t), "spec"));
            }
        }
        if let Some(ip) = self.status.pod_ip.as_deref().filter(|ip| !ip.is_empty()) {
            let first = self.records.first(|p| p.status.as_ref().and_then(|s| s.pod_ip.as_deref()) == Some(ip));
            let text = if self.spec.host_network == Some(true) {
                format!("it uses the host's network: {ip} is {node}'s own address")
            } else {
                let cidr = self
                    .world
                    .api()
                    .store()
                    .get(("", "nodes"), "", &node)
                    .and_then(|n| n.as_node().and_then(|n| n.spec.as_ref()).and_then(|s| s.pod_cidr.clone()));
                format!(
                    "the CNI plugin on {node} gave it {ip} from the node's range {} (host-local: round robin, never an address in use)",
                    cidr.unwrap_or_else(|| "?".into())
                )
            };
            let mut details = Vec::new();
            let sandbox =
                self.world.notes().iter().rev().find(|n| n.actor.as_ref() == self.kubelet() && n.call == "ADD" && n.detail.ends_with(&format!(" {ip}")));
            if let Some(n) = sandbox {
                details.push(format!("CNI ADD at {}: {}", clock(n.t_ms), n.detail));
            }
            out.push(answer("Why this IP?", text, details, first.map(|(t, _)| t), &self.kubelet()));
        }
        out
    }
}
