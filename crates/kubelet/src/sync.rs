//! The pod workers' sync (pkg/kubelet/kuberuntime computePodActions and SyncPod, plus the
//! termination path): which CRI call comes next — the sandbox, image pulls, init containers
//! in order, sidecars, containers, restarts with backoff — and what each call's completion
//! does. One call is in flight per worker; each takes its modelled latency.

use crate::container_config::{container_spec, ConfigContext, ConfigError};
use crate::kubelet::{format_go_duration, random_id, Kubelet, Wake, IMAGE_CATALOGUE_CONFIGMAP};
use crate::network;
use crate::pod_worker::{Step, WorkerState};
use kubesim_api::k8s_openapi::api::core::v1::{Container, LifecycleHandler};
use kubesim_api::object::{kind_info, Object};
use kubesim_api::quantity::parse_milli;
use kubesim_api::time::EPOCH_UNIX_SECONDS;
use kubesim_api::Millis;
use kubesim_apiserver::DeleteOptions;
use kubesim_host::cri::{latency_ms, ContainerState, CriCall, PreStop, SandboxConfig, SandboxState};
use kubesim_host::Host;
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

impl Kubelet {
    /// Runs one pod sync: status write, then the next CRI calls.
    pub(crate) fn sync(&mut self, host: &mut Host, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get_mut(uid) else { return };
        if !worker.active() {
            return;
        }
        if worker.in_flight.is_some() {
            worker.resync_pending = true;
            return;
        }
        if worker.start_time.is_none() {
            worker.start_time = Some(ctx.now);
        }
        if worker.pod().metadata.deletion_timestamp.is_some() {
            self.terminate(host, uid, ctx);
            return;
        }
        self.write_status(host, uid, ctx, false);
        self.continue_sync(host, uid, ctx);
    }

    /// Chooses and starts the next CRI call of a sync (computePodActions), if any.
    fn continue_sync(&mut self, host: &mut Host, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get(uid) else { return };
        if worker.state == WorkerState::Terminated || worker.state == WorkerState::Rejected || worker.in_flight.is_some() {
            return;
        }
        if worker.pod().metadata.deletion_timestamp.is_some() {
            self.terminate(host, uid, ctx);
            return;
        }
        // WaitForAttachAndMount: the pod's CSI volumes are published before anything starts.
        if !self.volumes_ready(uid, ctx) {
            return;
        }
        let Some(worker) = self.workers.get(uid) else { return };
        let sandbox_ready = worker.sandbox.as_ref().and_then(|s| host.cri.pod_sandbox_status(s).ok()).is_some_and(|s| s.state == SandboxState::Ready);
        if !sandbox_ready {
            // computePodActions: a terminal pod's sandbox is not recreated.
            if worker.sandbox.is_some() && self.is_terminal_now(host, uid, ctx.now) {
                return;
            }
            self.begin(uid, Step::RunSandbox, latency_ms(CriCall::RunPodSandbox), ctx);
            return;
        }
        let object = worker.pod.clone();
        let spec = kubesim_api::pod::spec(object.as_pod().expect("pod workers hold pods"));
        let policy = spec.restart_policy.as_deref().unwrap_or("Always");
        // Init containers strictly in order; sidecars (restartPolicy Always) keep running.
        for container in spec.init_containers.iter().flatten() {
            let sidecar = container.restart_policy.as_deref() == Some("Always");
            match self.latest_state(host, uid, &container.name) {
                None => {
                    self.start_container(host, uid, container, ctx);
                    return;
                }
                Some((ContainerState::Running, _)) if sidecar => continue,
                Some((ContainerState::Running, _)) | Some((ContainerState::Created, _)) => return,
                Some((ContainerState::Exited, code)) => {
                    if sidecar || (code != Some(0) && policy != "Never") {
                        if self.restart_if_due(host, uid, container, ctx) {
                            return;
                        }
                        if !sidecar {
                            return;
                        }
                    } else if code != Some(0) {
                        return; // restartPolicy Never: the pod fails
                    }
                }
            }
        }
        for container in &spec.containers {
            match self.latest_state(host, uid, &container.name) {
                None if self.start_container(host, uid, container, ctx) => {
                    return;
                }
                Some((ContainerState::Exited, code)) => {
                    let restart = match policy {
                        "Always" => true,
                        "OnFailure" => code != Some(0),
                        _ => false,
                    };
                    if restart && self.restart_if_due(host, uid, container, ctx) {
                        return;
                    }
                }
                _ => {}
            }
        }
        // Ephemeral containers (kubectl debug): each started once, never restarted, not in a
        // pod that has finished (computePodActions' ephemeral containers to start).
        let ephemeral = spec.ephemeral_containers.as_deref().unwrap_or_default();
        if !ephemeral.is_empty() && !self.is_terminal_now(host, uid, ctx.now) {
            for ec in ephemeral {
                if self.latest_state(host, uid, &ec.name).is_none() && self.start_container(host, uid, &kubesim_api::pod::ephemeral_as_container(ec), ctx) {
                    return;
                }
            }
        }
        // Nothing to do: the sync is over. A pod that reached a terminal phase has its sandbox
        // stopped (syncTerminatingPod's killPod), which tears its network down: its address
        // goes back to IPAM while status.podIP keeps showing it.
        self.stop_sandbox_if_terminal(host, uid, ctx);
        if let Some(worker) = self.workers.get_mut(uid) {
            if worker.resync_pending {
                worker.resync_pending = false;
                self.sync(host, uid, ctx);
            }
        }
    }

    fn is_terminal_now(&self, host: &Host, uid: &str, now: Millis) -> bool {
        let Some(worker) = self.workers.get(uid) else { return false };
        matches!(self.generate_status(host, worker, now, false).phase.as_deref(), Some("Succeeded" | "Failed"))
    }

    fn stop_sandbox_if_terminal(&mut self, host: &mut Host, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get(uid) else { return };
        let Some(sandbox) = worker.sandbox.clone() else { return };
        let running =
            worker.instances.values().filter_map(|ids| ids.last()).any(|id| host.cri.container_status(id).is_ok_and(|c| c.state != ContainerState::Exited));
        let ready = host.cri.pod_sandbox_status(&sandbox).is_ok_and(|s| s.state == SandboxState::Ready);
        if running || !ready || !self.is_terminal_now(host, uid, ctx.now) {
            return;
        }
        let _ = host.cri.stop_pod_sandbox(&sandbox, ctx.now);
        let ip = self.workers[uid].ip.clone();
        self.release_ip(host, uid, &sandbox, ip.as_deref(), ctx);
        // A terminated pod's volumes are unmounted (the populator drops it).
        self.workers.get_mut(uid).expect("worker exists").volumes_released = true;
        self.remove_pod_volumes(uid, ctx);
        let pod = self.workers[uid].pod();
        let pod_ref = format!("{}/{}", pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default());
        self.note_cri(ctx, CriCall::StopPodSandbox, || pod_ref);
    }

    fn latest_state(&self, host: &Host, uid: &str, name: &str) -> Option<(ContainerState, Option<i32>)> {
        let id = self.workers.get(uid)?.instances.get(name)?.last()?;
        let c = host.cri.container_status(id).ok()?;
        Some((c.state, c.exit_code))
    }

    /// Restarts an exited container unless its restart backoff is running (CrashLoopBackOff),
    /// as kuberuntime's doBackOff: the window is measured from the container's finishedAt.
    fn restart_if_due(&mut self, host: &mut Host, uid: &str, container: &Container, ctx: &mut Ctx) -> bool {
        let finished = self.workers[uid]
            .instances
            .get(&container.name)
            .and_then(|ids| ids.last())
            .and_then(|id| host.cri.container_status(id).ok())
            .and_then(|c| c.finished_at)
            .unwrap_or(ctx.now);
        let worker = self.workers.get_mut(uid).expect("worker exists");
        let backoff = worker.restart_backoff.entry(container.name.clone()).or_default().clone();
        if backoff.in_backoff_since(finished, ctx.now) {
            let pod_object = worker.pod.clone();
            let pod = pod_object.as_pod().expect("pod workers hold pods");
            let (name, namespace, pod_uid) = (
                pod.metadata.name.clone().unwrap_or_default(),
                pod.metadata.namespace.clone().unwrap_or_default(),
                pod.metadata.uid.clone().unwrap_or_default(),
            );
            let message = format!(
                "back-off {} restarting failed container={} pod={name}_{namespace}({pod_uid})",
                format_go_duration(backoff.duration_ms).replace("300s", "5m0s"),
                container.name
            );
            worker.waiting.insert(container.name.clone(), ("CrashLoopBackOff".into(), message));
            let object = worker.pod.clone();
            ctx.event(&object, "Warning", "BackOff", format!("Back-off restarting failed container {} in pod {name}_{namespace}({pod_uid})", container.name));
            // The reason reaches the status at the next sync (the reasonCache).
            self.requeue_after_error(uid, ctx);
            return false;
        }
        worker.restart_backoff.get_mut(&container.name).expect("inserted above").next(finished);
        self.start_container(host, uid, container, ctx)
    }

    /// Starts the image/create/start chain for a container (EnsureImageExists, then
    /// CreateContainer). Returns whether a call is in flight.
    fn start_container(&mut self, host: &mut Host, uid: &str, container: &Container, ctx: &mut Ctx) -> bool {
        let image = container.image.clone().unwrap_or_default();
        let worker = self.workers.get_mut(uid).expect("worker exists");
        let object = worker.pod.clone();
        // applyDefaultImageTag: an unparsable reference never reaches the runtime.
        if let Err(error) = kubesim_images::parse_reference(&image) {
            let message = error.kubelet_message(&image);
            worker.waiting.insert(container.name.clone(), ("InvalidImageName".into(), message.clone()));
            ctx.event(&object, "Warning", "InspectFailed", message);
            ctx.event(&object, "Warning", "Failed", "Error: InvalidImageName".into());
            // The reason reaches the status at the next sync (the reasonCache).
            self.requeue_after_error(uid, ctx);
            return false;
        }
        let policy = container.image_pull_policy.clone().unwrap_or_else(|| kubesim_api::defaults::default_image_pull_policy(&image).to_string());
        let present = host.cri.image_status(&image).is_some();
        match (policy.as_str(), present) {
            ("Never", false) => {
                let message = format!("Container image {image:?} is not present with pull policy of Never");
                worker.waiting.insert(container.name.clone(), ("ErrImageNeverPull".into(), message.clone()));
                ctx.event(&object, "Warning", "ErrImageNeverPull", message);
                ctx.event(&object, "Warning", "Failed", "Error: ErrImageNeverPull".into());
                // The reason reaches the status at the next sync (the reasonCache).
                self.requeue_after_error(uid, ctx);
                false
            }
            ("IfNotPresent", true) | ("Never", true) => {
                ctx.event(&object, "Normal", "Pulled", format!("Container image {image:?} already present on machine"));
                self.begin(uid, Step::Create { container: container.name.clone() }, latency_ms(CriCall::CreateContainer), ctx);
                true
            }
            _ => {
                let backoff = worker.pull_backoff.entry(image.clone()).or_default().clone();
                if backoff.in_backoff_since(backoff.last_update, ctx.now) {
                    let message = format!("Back-off pulling image {image:?}");
                    worker.waiting.insert(container.name.clone(), ("ImagePullBackOff".into(), message.clone()));
                    ctx.event(&object, "Normal", "BackOff", message);
                    ctx.event(&object, "Warning", "Failed", "Error: ImagePullBackOff".into());
                    // The reason reaches the status at the next sync (the reasonCache).
                    self.requeue_after_error(uid, ctx);
                    return false;
                }
                ctx.event(&object, "Normal", "Pulling", format!("Pulling image {image:?}"));
                self.load_image_catalogue(host, ctx);
                // Pulling a tag the node has (policy Always) re-checks the manifest only.
                let bytes = if present { 0 } else { host.cri.images.pull_size(&image) };
                self.begin(uid, Step::Pull { container: container.name.clone(), image, started: ctx.now }, latency_ms(CriCall::PullImage(bytes)), ctx);
                true
            }
        }
    }

    /// Scenario overrides of the image catalogue: a ConfigMap `kubesim-images` in kube-system
    /// with key `sizes` (lines of `IMAGE BYTES`, image references or base names) and key
    /// `missing` (references the registry does not have, comma- or line-separated).
    fn load_image_catalogue(&mut self, host: &mut Host, ctx: &Ctx) {
        let Some(Object::ConfigMap(cm)) = ctx.api.lookup(("", "configmaps"), "kube-system", IMAGE_CATALOGUE_CONFIGMAP).map(|o| o.as_ref()) else { return };
        let data = cm.data.clone().unwrap_or_default();
        if let Some(missing) = data.get("missing") {
            host.cri.images.missing = missing.split([',', '\n']).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
        }
        for line in data.get("sizes").map(String::as_str).unwrap_or("").lines() {
            let mut words = line.split_whitespace();
            if let (Some(image), Some(size)) = (words.next(), words.next().and_then(|w| w.parse::<u64>().ok())) {
                host.cri.images.size_overrides.insert(image.to_string(), size);
            }
        }
    }

    fn begin(&mut self, uid: &str, step: Step, latency: Millis, ctx: &mut Ctx) {
        let worker = self.workers.get_mut(uid).expect("worker exists");
        worker.in_flight = Some(step);
        self.timers.arm(ctx, latency, Wake::Step(worker.seq));
    }

    /// A CRI call's latency has elapsed: perform it and continue the sync.
    pub(crate) fn complete_step(&mut self, host: &mut Host, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get_mut(uid) else { return };
        let Some(step) = worker.in_flight.take() else { return };
        let object = worker.pod.clone();
        let pod = object.as_pod().expect("pod workers hold pods");
        let pod_ref = format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.metadata.name.as_deref().unwrap_or_default());
        let spec = kubesim_api::pod::spec(pod);
        let find_container = |name: &str| {
            spec.init_containers
                .iter()
                .flatten()
                .chain(spec.containers.iter())
                .find(|c| c.name == name)
                .cloned()
                .or_else(|| spec.ephemeral_containers.iter().flatten().find(|c| c.name == name).map(kubesim_api::pod::ephemeral_as_container))
        };
        match step {
            Step::RunSandbox => {
                let pod_uid = pod.metadata.uid.clone().unwrap_or_default();
                // A sandbox that died (power loss, a killed pod) is torn down first: CNI DEL.
                if let Some(old) = self.workers[uid].sandbox.clone() {
                    let old_ip = self.workers[uid].ip.clone();
                    self.release_ip(host, uid, &old, old_ip.as_deref(), ctx);
                }
                let id = random_id(ctx);
                // CNI ADD: the network plugin gives the pod its address.
                let ip = if spec.host_network == Some(true) {
                    self.node_ip()
                } else {
                    self.configure_cni(host, ctx);
                    match network::add(host, ctx.fabric, (&pod_uid, &pod_ref), &id, spec) {
                        Ok(ip) => {
                            ctx.note_with(|| format!("cni/{}", self.setup.name), "ADD", || format!("{pod_ref} {ip}"));
                            ip
                        }
                        Err(err) => {
                            ctx.event(
                                &object,
                                "Warning",
                                "FailedCreatePodSandBox",
                                format!("Failed to create pod sandbox: rpc error: code = Unknown desc = {err}"),
                            );
                            self.requeue_after_error(uid, ctx);
                            return;
                        }
                    }
                };
                // The network namespace: the node's for hostNetwork pods, else the veth CNI ADD made.
                let interfaces = if spec.host_network == Some(true) { host.interfaces() } else { host.cni.interfaces(&id, &ip) };
                let config = SandboxConfig {
                    pod_uid,
                    pod_name: pod.metadata.name.clone().unwrap_or_default(),
                    pod_namespace: pod.metadata.namespace.clone().unwrap_or_default(),
                    ip: ip.clone(),
                    share_pid: pod.spec.as_ref().and_then(|s| s.share_process_namespace).unwrap_or(false),
                    interfaces,
                };
                let _ = host.cri.run_pod_sandbox(&config, id.clone(), ctx.now);
                self.note_cri(ctx, CriCall::RunPodSandbox, || format!("{pod_ref} ip={ip}"));
                let worker = self.workers.get_mut(uid).expect("worker exists");
                worker.sandbox = Some(id);
                worker.ip = Some(ip);
                self.mark_runtime_changed(host, ctx);
            }
            Step::Pull { container, image, started } => {
                self.note_cri(ctx, CriCall::PullImage(0), || image.to_string());
                match host.cri.pull_image(&image) {
                    Ok(pulled) => {
                        let took = ctx.now - started;
                        let secs = format_go_duration(took);
                        ctx.event(
                            &object,
                            "Normal",
                            "Pulled",
                            format!("Successfully pulled image {image:?} in {secs} ({secs} including waiting). Image size: {} bytes.", pulled.size),
                        );
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.pull_backoff.remove(&image);
                        worker.in_flight = Some(Step::Create { container });
                        let seq = worker.seq;
                        self.timers.arm(ctx, latency_ms(CriCall::CreateContainer), Wake::Step(seq));
                        return;
                    }
                    Err(err) => {
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.pull_backoff.entry(image.clone()).or_default().next(ctx.now);
                        let message = err.kubelet_message(&image);
                        let reason = err.kubelet_reason();
                        worker.waiting.insert(container.clone(), (reason.into(), message.clone()));
                        ctx.event(&object, "Warning", "Failed", message);
                        ctx.event(&object, "Warning", "Failed", format!("Error: {reason}"));
                        // The reason reaches the status at the next sync (the reasonCache).
                        self.requeue_after_error(uid, ctx);
                        return; // SyncPod returns the pull error; the worker retries later
                    }
                }
            }
            Step::Create { container } => {
                let Some(spec_container) = find_container(&container) else { return };
                let image = spec_container.image.clone().unwrap_or_default();
                let Some(pulled) = host.cri.image_status(&image).cloned() else {
                    // The image went away between the pull and the create: pull again.
                    self.requeue_after_error(uid, ctx);
                    return;
                };
                let node_allocatable: BTreeMap<String, i128> = ctx
                    .api
                    .lookup(("", "nodes"), "", &self.setup.name)
                    .and_then(|o| o.as_node())
                    .and_then(|n| n.status.as_ref()?.allocatable.as_ref())
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, q)| parse_milli(&q.0).ok().map(|m| (k.clone(), m)))
                    .collect();
                let pod_ip = self.workers[uid].ip.clone().unwrap_or_default();
                let node_ip = self.node_ip();
                let cx = ConfigContext {
                    store: ctx.api.store(),
                    image: &pulled.info,
                    pod_ip: &pod_ip,
                    node: (&self.setup.name, &node_ip),
                    node_allocatable: &node_allocatable,
                    now_unix_ms: EPOCH_UNIX_SECONDS as u64 * 1000 + ctx.now,
                    csi_published: &host.csi.published,
                };
                let config = match container_spec(pod, &spec_container, &mut host.cri.volumes, &cx) {
                    // An ephemeral container with a targetContainerName joins that
                    // container's PID namespace (NamespaceMode TARGET).
                    Ok(mut config) => {
                        let target = spec.ephemeral_containers.iter().flatten().find(|c| c.name == container).and_then(|c| c.target_container_name.clone());
                        config.pid_target = target.and_then(|t| self.workers[uid].instances.get(&t).and_then(|ids| ids.last().cloned()));
                        config
                    }
                    Err(ConfigError::Config(message)) => {
                        // generateContainerConfig failed: CreateContainerConfigError, retried later.
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.waiting.insert(container.clone(), ("CreateContainerConfigError".into(), message.clone()));
                        ctx.event(&object, "Warning", "Failed", format!("Error: {message}"));
                        // The reason reaches the status at the next sync (the reasonCache).
                        self.requeue_after_error(uid, ctx);
                        return;
                    }
                    Err(ConfigError::Mount(message)) => {
                        // MountVolume.SetUp failed: the pod stays ContainerCreating and retries.
                        ctx.event(&object, "Warning", "FailedMount", message);
                        self.requeue_after_error(uid, ctx);
                        return;
                    }
                };
                for (reason, message) in crate::dns::pod_dns(pod).warnings {
                    ctx.event(&object, "Warning", reason, message);
                }
                let id = random_id(ctx);
                let sandbox = self.workers[uid].sandbox.clone().unwrap_or_default();
                match host.cri.create_container(&sandbox, config, id.clone(), ctx.now) {
                    Ok(_) => {
                        self.note_cri(ctx, CriCall::CreateContainer, || format!("{pod_ref} {container}"));
                        ctx.event(&object, "Normal", "Created", format!("Created container: {container}"));
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.waiting.remove(&container);
                        worker.in_flight = Some(Step::Start { container, id });
                        let seq = worker.seq;
                        self.timers.arm(ctx, latency_ms(CriCall::StartContainer), Wake::Step(seq));
                        return;
                    }
                    Err(err) => {
                        let worker = self.workers.get_mut(uid).expect("worker exists");
                        worker.waiting.insert(container.clone(), ("CreateContainerError".into(), err.0.clone()));
                        ctx.event(&object, "Warning", "Failed", format!("Error: {}", err.0));
                        // The reason reaches the status at the next sync (the reasonCache).
                        self.requeue_after_error(uid, ctx);
                        return;
                    }
                }
            }
            Step::Start { container, id } => {
                let _ = host.cri.start_container(&id, ctx.now);
                self.note_cri(ctx, CriCall::StartContainer, || format!("{pod_ref} {container}"));
                let start_error = host.cri.container_status(&id).ok().and_then(|c| c.start_error.clone());
                match start_error {
                    // runc could not exec the command: the container is created but never ran.
                    Some(message) => ctx.event(&object, "Warning", "Failed", format!("Error: {message}")),
                    None => {
                        ctx.event(&object, "Normal", "Started", format!("Started container {container}"));
                        self.post_start(host, &object, &container, &id, ctx);
                    }
                }
                let worker = self.workers.get_mut(uid).expect("worker exists");
                let instances = worker.instances.entry(container.clone()).or_default();
                instances.push(id.clone());
                self.add_probes(uid, &container, &id, ctx);
                self.mark_runtime_changed(host, ctx);
            }
            Step::StopSandbox => {
                if let Some(sandbox) = self.workers[uid].sandbox.clone() {
                    let _ = host.cri.stop_pod_sandbox(&sandbox, ctx.now);
                    // StopPodSandbox tears down the pod network (status keeps the pod IP).
                    let ip = self.workers[uid].ip.clone();
                    self.release_ip(host, uid, &sandbox, ip.as_deref(), ctx);
                    self.note_cri(ctx, CriCall::StopPodSandbox, || pod_ref);
                }
                self.terminate(host, uid, ctx);
                return;
            }
        }
        self.continue_sync(host, uid, ctx);
    }

    /// The postStart hook, run as startContainer runs it right after StartContainer: an exec
    /// hook runs in the container (ExecSync), a sleep hook just passes. A failing hook records
    /// `FailedPostStartHook` ("PostStartHook failed": upstream keeps the output out of the event
    /// so that secrets do not leak) and kills the container (killContainer with message and
    /// reason FailedPostStartHook); the restart policy takes it from there.
    fn post_start(&mut self, host: &mut Host, object: &Object, container: &str, id: &str, ctx: &mut Ctx) {
        let hook = object
            .as_pod()
            .and_then(|p| p.spec.as_ref())
            .and_then(|s| s.containers.iter().chain(s.init_containers.iter().flatten()).find(|c| c.name == container))
            .and_then(|c| c.lifecycle.as_ref())
            .and_then(|l| l.post_start.clone());
        let Some(hook) = hook else { return };
        let failure = if let Some(argv) = hook.exec.as_ref().and_then(|e| e.command.clone()).filter(|c| !c.is_empty()) {
            ctx.note(format!("cri/{}", self.setup.name), "ExecSync", format!("postStart hook {container}: {argv:?}"));
            let output = host.cri.exec_sync(id, &argv, ctx.now);
            (output.code != 0).then(|| format!("command '{}' exited with {}: {}", argv.join(" "), output.code, String::from_utf8_lossy(&output.stderr)))
        } else {
            // Sleep hooks just pass; httpGet hooks (the kubelet's HTTP client) are not run:
            // kubesim runs exec and sleep hooks only (deliberate gap, README "Containers").
            None
        };
        if let Some(message) = failure {
            ctx.note(format!("kubelet/{}", self.setup.name), "PostStartHook", message);
            ctx.event(object, "Warning", "FailedPostStartHook", "PostStartHook failed".to_string());
            ctx.event(object, "Normal", "Killing", "FailedPostStartHook".to_string());
            let grace_ms = object.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.termination_grace_period_seconds).unwrap_or(30).max(0) as u64 * 1000;
            let _ = host.cri.stop_container(id, grace_ms, None, ctx.now);
        }
    }

    /// Graceful termination: SIGTERM every container with the grace period, wait for them,
    /// stop the sandbox, write the final status, then delete the pod with grace 0.
    pub(crate) fn terminate(&mut self, host: &mut Host, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get(uid) else { return };
        if worker.in_flight.is_some() || !worker.active() {
            return;
        }
        let pod_object = worker.pod.clone();
        let pod = pod_object.as_pod().expect("pod workers hold pods");
        let grace_ms = pod.metadata.deletion_grace_period_seconds.unwrap_or(30).max(0) as u64 * 1000;
        let running: Vec<(String, String)> = worker
            .instances
            .iter()
            .filter_map(|(name, ids)| ids.last().map(|id| (name.clone(), id.clone())))
            .filter(|(_, id)| host.cri.container_status(id).is_ok_and(|c| c.state == ContainerState::Running))
            .collect();
        self.workers.get_mut(uid).expect("worker exists").become_(WorkerState::Terminating);
        let mut any_new = false;
        for (name, id) in &running {
            if self.workers[uid].stop_requested.contains(id) {
                continue;
            }
            any_new = true;
            let object = self.workers[uid].pod.clone();
            ctx.event(&object, "Normal", "Killing", format!("Stopping container {name}"));
            // The preStop hook runs first and counts against the grace period.
            let hook = pod
                .spec
                .as_ref()
                .and_then(|s| s.containers.iter().chain(s.init_containers.iter().flatten()).find(|c| &c.name == name))
                .and_then(|c| c.lifecycle.as_ref())
                .and_then(|l| l.pre_stop.as_ref())
                .and_then(pre_stop);
            if let Some(hook) = &hook {
                ctx.note(format!("cri/{}", self.setup.name), "ExecSync", format!("preStop hook {name}: {hook:?}"));
            }
            let _ = host.cri.stop_container(id, grace_ms, hook, ctx.now);
            self.note_cri(ctx, CriCall::StopContainer, || {
                format!(
                    "{}/{} {name} timeout={}s",
                    pod.metadata.namespace.clone().unwrap_or_default(),
                    pod.metadata.name.clone().unwrap_or_default(),
                    grace_ms / 1000
                )
            });
            self.workers.get_mut(uid).expect("worker").stop_requested.insert(id.clone());
        }
        if any_new {
            self.mark_runtime_changed(host, ctx);
        }
        let still_running = running.iter().any(|(_, id)| host.cri.container_status(id).is_ok_and(|c| c.state == ContainerState::Running));
        if still_running {
            return; // PLEG brings us back when they exit
        }
        let sandbox_ready =
            self.workers[uid].sandbox.as_ref().and_then(|s| host.cri.pod_sandbox_status(s).ok()).is_some_and(|s| s.state == SandboxState::Ready);
        if sandbox_ready {
            self.begin(uid, Step::StopSandbox, latency_ms(CriCall::StopPodSandbox), ctx);
            return;
        }
        // SyncTerminatedPod: the volumes are unmounted first (podResourcesAreReclaimed).
        if !self.workers[uid].volumes_released {
            self.workers.get_mut(uid).expect("worker").volumes_released = true;
            self.remove_pod_volumes(uid, ctx);
        }
        if self.volumes.has_mounted(uid) {
            self.workers.get_mut(uid).expect("worker").unmount_wait = true;
            return;
        }
        self.workers.get_mut(uid).expect("worker").become_(WorkerState::Terminated);
        self.finish_deletion(host, uid, ctx);
    }

    /// A terminated pod's final status, then its deletion with grace 0 (the status manager's
    /// canBeDeleted path). Writes that fail (the node is cut off from the API server) are
    /// retried when the kubelet relists (`relist_pods`: after a partition, restart or power loss).
    pub(crate) fn finish_deletion(&mut self, host: &mut Host, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get(uid) else { return };
        let pod_object = worker.pod.clone();
        let pod = pod_object.as_pod().expect("pod workers hold pods");
        self.write_status(host, uid, ctx, true);
        let name = pod.metadata.name.clone().unwrap_or_default();
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let info = kind_info("v1", "Pod").expect("pods are served");
        let _ = ctx.delete(info, &namespace, &name, DeleteOptions { grace_period_seconds: Some(0), ..Default::default() });
    }
}

/// What the runtime runs for a preStop handler: an exec action's command, or a sleep action
/// (the kubelet sleeps before sending the stop signal). An httpGet hook's request is answered
/// at once by the model and does not delay the stop.
fn pre_stop(hook: &LifecycleHandler) -> Option<PreStop> {
    if let Some(sleep) = hook.sleep.as_ref() {
        return Some(PreStop::Sleep(sleep.seconds.max(0) as u64 * 1000));
    }
    hook.exec.as_ref().and_then(|e| e.command.clone()).filter(|c| !c.is_empty()).map(PreStop::Exec)
}
