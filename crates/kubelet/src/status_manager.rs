//! The status manager (pkg/kubelet/status, kubelet_pods.go generateAPIPodStatus): the pod
//! status the kubelet writes, generated from the pod worker and the host's runtime — container
//! states and last states, restart counts, readiness from the prober, phase and conditions.

use crate::kubelet::Kubelet;
use crate::pod_worker::PodWorker;
use crate::prober::ProbeKind;
use crate::status::get_phase;
use kubesim_api::k8s_openapi::api::core::v1::{
    Container, ContainerState as ApiContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, HostIP, Pod,
    PodCondition, PodIP, PodStatus,
};
use kubesim_api::object::Object;
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::server::set_pod_condition;
use kubesim_host::cri::{ContainerState, SandboxState, Stream};
use kubesim_host::Host;
use kubesim_runtime::Ctx;

impl Kubelet {
    pub(crate) fn write_status(&mut self, host: &Host, uid: &str, ctx: &mut Ctx, terminal: bool) {
        let Some(worker) = self.workers.get(uid) else { return };
        let status = self.generate_status(host, worker, ctx.now, terminal);
        // The last status written is the one the pod it stored carries (the API server moves
        // the status it is sent into the new version unchanged).
        if worker.written.as_deref().and_then(Object::as_pod).and_then(|p| p.status.as_ref()) == Some(&status) {
            return;
        }
        // The status manager patches the status alone (metadata for the name and
        // resourceVersion); the API server keeps the stored spec.
        let pod = Pod { metadata: worker.pod().metadata.clone(), spec: None, status: Some(status) };
        match ctx.update_status(Object::Pod(Box::new(pod))) {
            Ok(updated) => {
                let worker = self.workers.get_mut(uid).expect("worker");
                worker.written = Some(updated.clone());
                worker.pod = updated;
            }
            // A refused write (a conflict, the API server out of reach) is tried again by the
            // status manager's periodic syncBatch (every 10 s): the pod resyncs after its
            // error backoff and writes the status it then generates.
            Err(_) => self.requeue_after_error(uid, ctx),
        }
    }

    fn container_status(&self, host: &Host, worker: &PodWorker, container: &Container, pending_init: bool, now: Millis) -> ContainerStatus {
        let ids = worker.instances.get(&container.name).cloned().unwrap_or_default();
        let image = container.image.clone().unwrap_or_default();
        let runtime_container = |id: &String| host.cri.container_status(id).ok();
        let fallback_to_logs = container.termination_message_policy.as_deref() == Some("FallbackToLogsOnError");
        let terminated_of = |c: &kubesim_host::cri::Container| ContainerStateTerminated {
            container_id: Some(format!("containerd://{}", c.id)),
            exit_code: c.exit_code.unwrap_or(0),
            reason: c.reason.clone(),
            message: termination_message(c, fallback_to_logs),
            started_at: c.started_at.map(time_at),
            finished_at: c.finished_at.map(time_at),
            ..Default::default()
        };
        let latest = ids.last().and_then(runtime_container);
        let previous = if ids.len() >= 2 { runtime_container(&ids[ids.len() - 2]) } else { None };
        let waiting = worker.waiting.get(&container.name).cloned();
        let mut last_state = previous.map(|p| ApiContainerState { terminated: Some(terminated_of(p)), ..Default::default() });
        let state = match latest {
            Some(c) if c.state == ContainerState::Running => {
                ApiContainerState { running: Some(ContainerStateRunning { started_at: c.started_at.map(time_at) }), ..Default::default() }
            }
            Some(c) if c.state == ContainerState::Exited => match waiting {
                Some((reason, message)) if reason == "CrashLoopBackOff" => {
                    last_state = Some(ApiContainerState { terminated: Some(terminated_of(c)), ..Default::default() });
                    ApiContainerState { waiting: Some(ContainerStateWaiting { reason: Some(reason), message: Some(message) }), ..Default::default() }
                }
                _ => ApiContainerState { terminated: Some(terminated_of(c)), ..Default::default() },
            },
            _ => {
                let (reason, message) =
                    waiting.unwrap_or_else(|| ((if pending_init { "PodInitializing" } else { "ContainerCreating" }).to_string(), String::new()));
                ApiContainerState {
                    waiting: Some(ContainerStateWaiting { reason: Some(reason), message: Some(message).filter(|m| !m.is_empty()) }),
                    ..Default::default()
                }
            }
        };
        let running = state.running.is_some();
        let _ = now;
        let uid = worker.pod().metadata.uid.clone().unwrap_or_default();
        let result = |kind: ProbeKind| self.prober.result(&uid, &container.name, kind);
        let started = running && (container.startup_probe.is_none() || result(ProbeKind::Startup) == Some(true));
        let ready = started && (container.readiness_probe.is_none() || result(ProbeKind::Readiness) == Some(true));
        // A created container reports the image the runtime resolved (docker.io/library/…) and
        // its digest; before that, the spec's image and no id.
        let pulled = host.cri.image_status(&image).filter(|_| latest.is_some());
        ContainerStatus {
            name: container.name.clone(),
            image: pulled.map_or_else(|| image.clone(), |p| p.reference().to_string()),
            image_id: pulled.map_or_else(String::new, |p| p.digest_ref().to_string()),
            container_id: latest.map(|c| format!("containerd://{}", c.id)),
            ready,
            started: Some(started),
            restart_count: (ids.len() as i32 - 1).max(0),
            state: Some(state),
            last_state: Some(last_state.unwrap_or_default()),
            ..Default::default()
        }
    }

    pub(crate) fn generate_status(&self, host: &Host, worker: &PodWorker, now: Millis, terminal: bool) -> PodStatus {
        let pod = worker.pod();
        let spec = kubesim_api::pod::spec(pod);
        let mut status = pod.status.clone().unwrap_or_default();
        let node_ip = self.node_ip();
        status.host_ip = Some(node_ip.clone());
        status.host_ips = Some(vec![HostIP { ip: node_ip }]);
        if let Some(ip) = &worker.ip {
            status.pod_ip = Some(ip.clone());
            status.pod_ips = Some(vec![PodIP { ip: ip.clone() }]);
        }
        if status.start_time.is_none() {
            status.start_time = worker.start_time.map(time_at);
        }
        // Init containers first. A container not yet created waits with reason PodInitializing
        // whenever the pod has init containers, init and app containers alike
        // (convertToAPIContainerStatuses' defaultWaitingState, hasInitContainers).
        let has_init = spec.init_containers.as_ref().is_some_and(|c| !c.is_empty());
        let mut init_statuses = Vec::new();
        let mut init_done = true;
        for c in spec.init_containers.iter().flatten() {
            let mut s = self.container_status(host, worker, c, has_init, now);
            let sidecar = c.restart_policy.as_deref() == Some("Always");
            if !sidecar {
                // prober_manager.go UpdatePodStatus: a (non-restartable) init container is ready
                // once it has exited 0, never while it runs.
                s.ready = s.state.as_ref().and_then(|st| st.terminated.as_ref()).is_some_and(|t| t.exit_code == 0);
            }
            let complete =
                if sidecar { s.started == Some(true) } else { s.state.as_ref().and_then(|st| st.terminated.as_ref()).is_some_and(|t| t.exit_code == 0) };
            if !complete {
                init_done = false;
            }
            init_statuses.push(s);
        }
        let statuses: Vec<ContainerStatus> = spec.containers.iter().map(|c| self.container_status(host, worker, c, has_init, now)).collect();
        let previous_phase = status.phase.clone().unwrap_or_default();
        let phase = if previous_phase == "Failed" || previous_phase == "Succeeded" {
            previous_phase
        } else {
            get_phase(spec, &init_statuses, &statuses, terminal).to_string()
        };
        status.phase = Some(phase.clone());
        status.init_container_statuses = if init_statuses.is_empty() { None } else { Some(init_statuses.clone()) };
        // Conditions (status/generate.go), in the kubelet's order.
        let now_time = time_at(now);
        let mut conditions = status.conditions.take().unwrap_or_default();
        let sandbox_ready = worker.sandbox.as_ref().and_then(|s| host.cri.pod_sandbox_status(s).ok()).is_some_and(|s| s.state == SandboxState::Ready);
        let cond = |type_: &str, ok: bool, reason: Option<&str>, message: Option<String>| PodCondition {
            type_: type_.into(),
            status: if ok { "True" } else { "False" }.into(),
            reason: reason.map(str::to_string),
            message,
            last_transition_time: Some(now_time.clone()),
            ..Default::default()
        };
        set_pod_condition(&mut conditions, cond("PodReadyToStartContainers", sandbox_ready, None, None));
        let any_regular_started =
            statuses.iter().any(|s| s.state.as_ref().is_some_and(|st| st.running.is_some() || st.terminated.is_some()) || s.restart_count > 0);
        let initialized = phase == "Succeeded" || any_regular_started || init_done;
        let incomplete: Vec<String> = spec
            .init_containers
            .iter()
            .flatten()
            .zip(init_statuses.iter())
            .filter(|(c, s)| {
                if c.restart_policy.as_deref() == Some("Always") {
                    s.started != Some(true)
                } else {
                    s.state.as_ref().and_then(|st| st.terminated.as_ref()).is_none_or(|t| t.exit_code != 0)
                }
            })
            .map(|(c, _)| c.name.clone())
            .collect();
        set_pod_condition(
            &mut conditions,
            if initialized {
                cond("Initialized", true, if phase == "Succeeded" { Some("PodCompleted") } else { None }, None)
            } else {
                cond("Initialized", false, Some("ContainersNotInitialized"), Some(format!("containers with incomplete status: [{}]", incomplete.join(" "))))
            },
        );
        let unready: Vec<String> = init_statuses
            .iter()
            .zip(spec.init_containers.iter().flatten())
            .filter(|(s, c)| c.restart_policy.as_deref() == Some("Always") && !s.ready)
            .map(|(s, _)| s.name.clone())
            .chain(statuses.iter().filter(|s| !s.ready).map(|s| s.name.clone()))
            .collect();
        let containers_ready = match phase.as_str() {
            "Succeeded" => cond("ContainersReady", false, Some("PodCompleted"), None),
            "Failed" => cond("ContainersReady", false, Some("PodFailed"), None),
            _ if !unready.is_empty() => {
                cond("ContainersReady", false, Some("ContainersNotReady"), Some(format!("containers with unready status: [{}]", unready.join(" "))))
            }
            _ => cond("ContainersReady", true, None, None),
        };
        // GeneratePodReadyCondition: ContainersReady's verdict, then the readiness gates'.
        let mut ready = containers_ready.clone();
        ready.type_ = "Ready".into();
        if ready.status == "True" {
            if let Some(message) = unready_gates(spec, &conditions) {
                ready = cond("Ready", false, Some(READINESS_GATES_NOT_READY), Some(message));
            }
        }
        set_pod_condition(&mut conditions, ready);
        set_pod_condition(&mut conditions, containers_ready);
        // Order as the kubelet writes them; PodScheduled (from the scheduler) last.
        let order = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"];
        kubesim_api::sort::sort_by_key(&mut conditions, |c| order.iter().position(|o| *o == c.type_).unwrap_or(order.len()));
        // The stored Pod keeps this Vec: no room for eight 160-byte conditions for five.
        conditions.shrink_to_fit();
        status.conditions = Some(conditions);
        // Sorted by name (convertToAPIContainerStatuses: sort.Sort(SortedContainerStatuses));
        // init container statuses stay in spec order (SortStatusesOfInitContainers). The
        // conditions' container lists above are in spec order, as generate.go builds them.
        let mut statuses = statuses;
        kubesim_api::sort::sort_by(&mut statuses, |a, b| a.name.cmp(&b.name));
        status.container_statuses = Some(statuses);
        let mut ephemeral: Vec<ContainerStatus> = spec
            .ephemeral_containers
            .iter()
            .flatten()
            .map(|c| {
                // The prober manager updates only regular and init containers' readiness
                // (prober_manager.go UpdatePodStatus): an ephemeral container is never ready.
                let mut s = self.container_status(host, worker, &kubesim_api::pod::ephemeral_as_container(c), false, now);
                s.ready = false;
                s.started = None;
                s
            })
            .collect();
        kubesim_api::sort::sort_by(&mut ephemeral, |a, b| a.name.cmp(&b.name));
        status.ephemeral_container_statuses = if ephemeral.is_empty() { None } else { Some(ephemeral) };
        status
    }
}

/// The Ready condition's reason when a readiness gate is not satisfied.
pub const READINESS_GATES_NOT_READY: &str = "ReadinessGatesNotReady";

/// The readiness gates whose condition is missing or not True, in GeneratePodReadyCondition's
/// words (None when every gate is satisfied).
pub(crate) fn unready_gates(spec: &kubesim_api::k8s_openapi::api::core::v1::PodSpec, conditions: &[PodCondition]) -> Option<String> {
    let messages: Vec<String> = spec
        .readiness_gates
        .iter()
        .flatten()
        .filter_map(|gate| match conditions.iter().find(|c| c.type_ == gate.condition_type) {
            None => Some(format!("corresponding condition of pod readiness gate {:?} does not exist.", gate.condition_type)),
            Some(c) if c.status != "True" => Some(format!("the status of pod readiness gate {:?} is not \"True\", but {}", gate.condition_type, c.status)),
            Some(_) => None,
        })
        .collect();
    if messages.is_empty() {
        None
    } else {
        Some(messages.join(", "))
    }
}

/// NeedToReconcilePodReadiness: a pod with readiness gates whose Ready condition no longer
/// says what its gates and ContainersReady say (another component set a gate's condition).
pub(crate) fn need_to_reconcile_pod_readiness(pod: &kubesim_api::k8s_openapi::api::core::v1::Pod) -> bool {
    let Some(spec) = pod.spec.as_ref().filter(|s| s.readiness_gates.as_ref().is_some_and(|g| !g.is_empty())) else { return false };
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or(&[]);
    let Some(current) = conditions.iter().find(|c| c.type_ == "Ready") else { return false };
    let containers_ready = conditions.iter().find(|c| c.type_ == "ContainersReady");
    let (status, message) = match containers_ready {
        Some(c) if c.status != "True" => (c.status.clone(), c.message.clone()),
        _ => match unready_gates(spec, conditions) {
            Some(message) => ("False".to_string(), Some(message)),
            None => ("True".to_string(), None),
        },
    };
    current.status != status || current.message != message
}

/// The terminated state's message (kuberuntime getTerminationMessage): what the container wrote
/// to its terminationMessagePath; with FallbackToLogsOnError and a failure, the last 80 lines
/// (at most 2048 bytes) of its log instead; for a failed start, the runtime's error.
fn termination_message(c: &kubesim_host::cri::Container, fallback_to_logs: bool) -> Option<String> {
    if let Some(error) = &c.start_error {
        return Some(error.clone());
    }
    let written = c.termination_message.clone().unwrap_or_default();
    if !written.is_empty() {
        return Some(written);
    }
    if fallback_to_logs && c.exit_code.is_some_and(|code| code != 0) {
        let lines: Vec<String> = c.io.logs.iter().filter(|l| matches!(l.stream, Stream::Stdout | Stream::Stderr)).map(|l| l.text).collect();
        let tail = lines[lines.len().saturating_sub(80)..].iter().map(|l| format!("{l}\n")).collect::<String>();
        let bytes = tail.as_bytes();
        let start = bytes.len().saturating_sub(2048);
        let text = String::from_utf8_lossy(&bytes[start..]).into_owned();
        return Some(text).filter(|t| !t.is_empty());
    }
    None
}
