//! The modelled container runtime (containerd behind the CRI): sandboxes, containers and their
//! processes, the image store, and the node's volume storage. Every CRI call has a modelled
//! latency ([`latency_ms`]); the kubelet invokes a call when its latency has elapsed, so the
//! call's effect lands at its completion time. Processes run on the virtual clock
//! ([`ContainerRuntime::advance`]); their network calls wait in an outbox for the fabric to
//! route ([`ContainerRuntime::take_outbox`], [`ContainerRuntime::deliver_reply`]), or — for
//! ExecSync, which must answer synchronously — are routed on the node itself or through the
//! caller ([`ContainerRuntime::exec_with`]).

pub use crate::container::{Container, ContainerSpec, ContainerState, Env, ExecIo, ExecOutput, LogBuffer, LogLine, NetRequest, PreStop, Stream};
use crate::container::{Foreign, SessionEvent};
use crate::images::{ImageStore, PulledImage};
use kubesim_api::Millis;
use kubesim_images::PullError;
use kubesim_os::fs::Volumes;
use kubesim_os::program::{Incoming, NetCall, NetError, NetReply, Outgoing, Wake};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A CRI error (gRPC status message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CriError(pub String);

/// The CRI calls, for latency lookup and the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CriCall {
    /// RunPodSandbox (pause container + CNI).
    RunPodSandbox,
    /// StopPodSandbox.
    StopPodSandbox,
    /// RemovePodSandbox.
    RemovePodSandbox,
    /// CreateContainer.
    CreateContainer,
    /// StartContainer.
    StartContainer,
    /// StopContainer (the call itself; the process may take longer to exit).
    StopContainer,
    /// RemoveContainer.
    RemoveContainer,
    /// ExecSync (probes, kubectl exec).
    ExecSync,
    /// PullImage of a known size (bytes).
    PullImage(u64),
}

impl CriCall {
    /// The CRI method name.
    pub fn name(self) -> &'static str {
        match self {
            CriCall::RunPodSandbox => "RunPodSandbox",
            CriCall::StopPodSandbox => "StopPodSandbox",
            CriCall::RemovePodSandbox => "RemovePodSandbox",
            CriCall::CreateContainer => "CreateContainer",
            CriCall::StartContainer => "StartContainer",
            CriCall::StopContainer => "StopContainer",
            CriCall::RemoveContainer => "RemoveContainer",
            CriCall::ExecSync => "ExecSync",
            CriCall::PullImage(_) => "PullImage",
        }
    }
}

/// Image registry bandwidth of the model (bytes per virtual second): 40 MB/s.
pub const PULL_BYTES_PER_SECOND: u64 = 40_000_000;

/// The latency table of the runtime model (virtual ms). One place, documented in README.
pub fn latency_ms(call: CriCall) -> Millis {
    match call {
        CriCall::RunPodSandbox => 450,  // pause image start + CNI ADD
        CriCall::StopPodSandbox => 120, // CNI DEL + pause stop
        CriCall::RemovePodSandbox => 20,
        CriCall::CreateContainer => 60,
        CriCall::StartContainer => 90,
        CriCall::StopContainer => 10,
        CriCall::RemoveContainer => 15,
        CriCall::ExecSync => 30,
        CriCall::PullImage(bytes) => 300 + bytes * 1000 / PULL_BYTES_PER_SECOND,
    }
}

/// Sandbox state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandboxState {
    /// Running, network ready.
    Ready,
    /// Stopped.
    NotReady,
}

/// What the kubelet tells the runtime about a pod when it creates its sandbox (CRI
/// `PodSandboxMetadata` plus the address the network plugin assigned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The pod's uid.
    pub pod_uid: String,
    /// The pod's name.
    pub pod_name: String,
    /// The pod's namespace.
    pub pod_namespace: String,
    /// The pod IP (the node's IP for hostNetwork pods).
    pub ip: String,
    /// `shareProcessNamespace`: the pod's containers share one PID namespace whose PID 1 is
    /// the sandbox's `/pause`.
    pub share_pid: bool,
    /// The network namespace's interfaces (what CNI ADD set up; the node's for hostNetwork
    /// pods): what `ip addr` in the pod's containers shows. Empty: loopback only.
    pub interfaces: Vec<kubesim_os::net::iface::Interface>,
}

/// A pod sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sandbox {
    /// Sandbox id (64 hex chars).
    pub id: String,
    /// The pod's uid.
    pub pod_uid: String,
    /// The pod's name.
    pub pod_name: String,
    /// The pod's namespace.
    pub pod_namespace: String,
    /// The pod IP.
    pub ip: String,
    /// State.
    pub state: SandboxState,
    /// Creation time.
    pub created_at: Millis,
    /// `shareProcessNamespace`: one PID namespace for the pod, `/pause` as PID 1.
    pub share_pid: bool,
    /// The network namespace's interfaces.
    pub interfaces: Vec<kubesim_os::net::iface::Interface>,
    /// The shared namespace's next pid.
    next_pid: u32,
}

/// The pause image every node has before any pull.
pub const PAUSE_IMAGE: &str = "registry.k8s.io/pause:3.10";

/// The runtime's containers by ID. Handing one out mutably clears its cached next wake-up, so
/// [`ContainerRuntime::next_wakeup`] rescans only the containers that changed. Boxed: a
/// container is nearly a kilobyte, and a B-tree node holds eleven slots whether filled or not
/// (ids are random, so nodes split half-full) and moves them on every split.
#[derive(Clone, Debug, Default)]
struct Containers(BTreeMap<String, Box<Container>>);

impl Containers {
    fn get(&self, id: &str) -> Option<&Container> {
        self.0.get(id).map(|c| &**c)
    }
    fn get_mut(&mut self, id: &str) -> Option<&mut Container> {
        let c = self.0.get_mut(id)?;
        c.wake_cache.set(None);
        Some(c)
    }
    fn values(&self) -> impl Iterator<Item = &Container> {
        self.0.values().map(|c| &**c)
    }
    fn values_mut(&mut self) -> impl Iterator<Item = &mut Container> {
        self.0.values_mut().map(|c| &mut **c).inspect(|c| c.wake_cache.set(None))
    }
    fn iter(&self) -> impl Iterator<Item = (&String, &Container)> {
        self.0.iter().map(|(id, c)| (id, &**c))
    }
    fn insert(&mut self, id: String, c: Container) {
        self.0.insert(id, Box::new(c));
    }
    fn remove(&mut self, id: &str) -> Option<Container> {
        self.0.remove(id).map(|c| *c)
    }
    fn retain(&mut self, mut keep: impl FnMut(&String, &mut Container) -> bool) {
        self.0.retain(|id, c| keep(id, c))
    }
}

/// The runtime of one node.
#[derive(Clone, Debug)]
pub struct ContainerRuntime {
    sandboxes: BTreeMap<String, Sandbox>,
    containers: Containers,
    /// The image store.
    pub images: ImageStore,
    /// The node's volume storage (emptyDirs, rendered configMaps and secrets, the node's own
    /// directories for hostPath volumes), shared by reference by every container mounting it.
    pub volumes: Volumes,
    /// How programs `kubesim-os` does not implement are built (the application models).
    pub foreign: Foreign,
    outbox: Vec<NetRequest>,
    next_request: u64,
    /// Requests in flight: id → container.
    in_flight: BTreeMap<u64, String>,
    /// Ports published on this machine (docker's `-p`, kind's `extraPortMappings` on the
    /// workstation): a loopback connection to one leaves the machine, as docker-proxy forwards
    /// it to the container it publishes.
    pub published: std::collections::BTreeSet<(u16, bool)>,
    /// StartContainer calls so far ([`ContainerRuntime::starts`]).
    starts: u64,
}

fn no_foreign(_: &str, _: &kubesim_os::program::Spawn, _: &str, _: &[(u16, bool)]) -> Option<Box<dyn kubesim_os::program::Program>> {
    None
}

impl Default for ContainerRuntime {
    fn default() -> Self {
        ContainerRuntime::new()
    }
}

impl ContainerRuntime {
    /// A runtime with the pause image present.
    pub fn new() -> ContainerRuntime {
        let mut images = ImageStore::default();
        images.preload(PAUSE_IMAGE);
        ContainerRuntime {
            sandboxes: BTreeMap::new(),
            containers: Containers::default(),
            images,
            volumes: Volumes::default(),
            foreign: no_foreign,
            starts: 0,
            outbox: Vec::new(),
            next_request: 1,
            in_flight: BTreeMap::new(),
            published: std::collections::BTreeSet::new(),
        }
    }

    // ---------------------------------------------------------------- RuntimeService

    /// RunPodSandbox.
    pub fn run_pod_sandbox(&mut self, config: &SandboxConfig, id: String, now: Millis) -> Result<String, CriError> {
        let sandbox = Sandbox {
            id: id.clone(),
            pod_uid: config.pod_uid.clone(),
            pod_name: config.pod_name.clone(),
            pod_namespace: config.pod_namespace.clone(),
            ip: config.ip.clone(),
            state: SandboxState::Ready,
            created_at: now,
            share_pid: config.share_pid,
            interfaces: config.interfaces.clone(),
            next_pid: 2,
        };
        self.sandboxes.insert(id.clone(), sandbox);
        Ok(id)
    }
    /// StopPodSandbox: every container in it is killed.
    pub fn stop_pod_sandbox(&mut self, id: &str, now: Millis) -> Result<(), CriError> {
        let sandbox = self.sandboxes.get_mut(id).ok_or_else(|| CriError(format!("sandbox {id} not found")))?;
        sandbox.state = SandboxState::NotReady;
        for container in self.containers.values_mut().filter(|c| c.sandbox_id == id) {
            container.sandbox_stopped(now);
            container.capture_termination_message(&mut self.volumes);
        }
        Ok(())
    }
    /// RemovePodSandbox: the sandbox and its containers are gone.
    pub fn remove_pod_sandbox(&mut self, id: &str) -> Result<(), CriError> {
        self.sandboxes.remove(id);
        self.containers.retain(|_, c| c.sandbox_id != id);
        Ok(())
    }
    /// PodSandboxStatus.
    pub fn pod_sandbox_status(&self, id: &str) -> Result<&Sandbox, CriError> {
        self.sandboxes.get(id).ok_or_else(|| CriError(format!("sandbox {id} not found")))
    }
    /// ListPodSandbox.
    pub fn list_pod_sandbox(&self) -> Vec<&Sandbox> {
        self.sandboxes.values().collect()
    }
    /// CreateContainer: the image must have been pulled.
    pub fn create_container(&mut self, sandbox_id: &str, spec: ContainerSpec, id: String, now: Millis) -> Result<String, CriError> {
        if !self.sandboxes.contains_key(sandbox_id) {
            return Err(CriError(format!("sandbox {sandbox_id} not found")));
        }
        let image = self.images.status(&spec.image).cloned().ok_or_else(|| CriError(format!("image {:?} not found", spec.image)))?;
        let mut spec = spec;
        if spec.interfaces.is_empty() {
            // The container joins its sandbox's network namespace.
            spec.interfaces = self.sandboxes.get(sandbox_id).map(|s| s.interfaces.clone()).unwrap_or_default();
        }
        let container = Container::new(id.clone(), sandbox_id.to_string(), spec, &image.tree, &mut self.volumes, now);
        self.containers.insert(id.clone(), container);
        Ok(id)
    }
    /// StartContainer.
    pub fn start_container(&mut self, id: &str, now: Millis) -> Result<(), CriError> {
        self.pid_ns_enter(id);
        let container = self.containers.get_mut(id).ok_or_else(|| CriError(format!("container {id} not found")))?;
        container.start(&mut self.volumes, self.foreign, now);
        self.starts += 1;
        container.start_serial = self.starts;
        self.pid_ns_leave(id);
        Ok(())
    }
    /// StopContainer: the preStop hook, the stop signal, SIGKILL after `timeout_ms`.
    pub fn stop_container(&mut self, id: &str, timeout_ms: Millis, pre_stop: Option<PreStop>, now: Millis) -> Result<(), CriError> {
        self.pid_ns_enter(id);
        let container = self.containers.get_mut(id).ok_or_else(|| CriError(format!("container {id} not found")))?;
        container.stop(timeout_ms, pre_stop, &mut self.volumes, self.foreign, now);
        self.pid_ns_leave(id);
        Ok(())
    }
    /// RemoveContainer.
    pub fn remove_container(&mut self, id: &str) -> Result<(), CriError> {
        self.containers.remove(id);
        Ok(())
    }
    /// ListContainers.
    pub fn list_containers(&self) -> Vec<&Container> {
        self.containers.values().collect()
    }
    /// ContainerStatus.
    pub fn container_status(&self, id: &str) -> Result<&Container, CriError> {
        self.containers.get(id).ok_or_else(|| CriError(format!("container {id} not found")))
    }
    /// A container, mutably (the kubelet reads termination messages).
    pub fn container_mut(&mut self, id: &str) -> Option<(&mut Container, &mut Volumes)> {
        let container = self.containers.get_mut(id)?;
        Some((container, &mut self.volumes))
    }
    /// Fault injection: a running container's main process dies now with exit code 1.
    pub fn crash(&mut self, id: &str, now: Millis) -> bool {
        let crashed = self.containers.get_mut(id).is_some_and(|c| c.crash(now));
        if let Some(c) = self.containers.get_mut(id) {
            c.capture_termination_message(&mut self.volumes);
        }
        crashed
    }

    // ---------------------------------------------------------------- ImageService

    /// PullImage.
    pub fn pull_image(&mut self, image: &str) -> Result<Arc<PulledImage>, PullError> {
        self.images.pull(image)
    }
    /// ImageStatus.
    pub fn image_status(&self, image: &str) -> Option<&Arc<PulledImage>> {
        self.images.status(image)
    }
    /// ListImages.
    pub fn list_images(&self) -> Vec<&Arc<PulledImage>> {
        self.images.list().collect()
    }

    // ---------------------------------------------------------------- processes

    /// Runs every container's processes that have something to do at `now`. Returns whether a
    /// container exited (the kubelet's PLEG should relist).
    pub fn advance(&mut self, now: Millis) -> bool {
        let mut changed = false;
        let ids: Vec<String> = self.containers.iter().filter(|(_, c)| c.next_wakeup(now).is_some_and(|t| t <= now)).map(|(id, _)| id.clone()).collect();
        for id in ids {
            self.pid_ns_enter(&id);
            let Some(container) = self.containers.get_mut(&id) else { continue };
            let before = self.outbox.len();
            if container.run(now, &mut self.volumes, self.foreign, &mut self.outbox, &mut self.next_request) {
                changed = true;
                container.capture_termination_message(&mut self.volumes);
            }
            self.pid_ns_leave(&id);
            for request in &self.outbox[before..] {
                self.in_flight.insert(request.id, request.container.clone());
            }
        }
        changed
    }

    /// The earliest time a process has something to do on its own.
    pub fn next_wakeup(&self, now: Millis) -> Option<Millis> {
        self.containers.values().filter_map(|c| c.next_wakeup(now)).min()
    }

    /// Network calls made since the last call, for the fabric to route.
    pub fn take_outbox(&mut self) -> Vec<NetRequest> {
        std::mem::take(&mut self.outbox)
    }

    /// Delivers the reply to a routed request.
    pub fn deliver_reply(&mut self, id: u64, reply: NetReply) -> bool {
        let Some(container) = self.in_flight.remove(&id) else { return false };
        self.containers.get_mut(&container).is_some_and(|c| c.deliver_reply(id, reply))
    }

    /// The sandbox with this IP, if it runs on this node.
    pub fn sandbox_with_ip(&self, ip: &str) -> Option<&Sandbox> {
        self.sandboxes.values().filter(|s| s.ip == ip && s.state == SandboxState::Ready).max_by_key(|s| s.created_at)
    }

    /// An incoming connection for `sandbox`'s network namespace: the answer of the container
    /// process listening on the port, or `None` when nothing listens.
    pub fn serve(&mut self, sandbox_id: &str, incoming: &Incoming, now: Millis) -> Option<Outgoing> {
        self.serve_timed(sandbox_id, incoming, now).map(|(answer, _)| answer)
    }

    /// Like [`ContainerRuntime::serve`], with how long the answer waits for the serving
    /// container's CPU ([`crate::container::Container::serve_timed`]).
    pub fn serve_timed(&mut self, sandbox_id: &str, incoming: &Incoming, now: Millis) -> Option<(Outgoing, Millis)> {
        let ids: Vec<String> =
            self.containers.iter().filter(|(_, c)| c.sandbox_id == sandbox_id && c.state == ContainerState::Running).map(|(id, _)| id.clone()).collect();
        for id in ids {
            let container = self.containers.get_mut(&id).expect("listed above");
            if container.listening().contains(&(incoming.port, incoming.udp)) {
                return container.serve_timed(incoming, &mut self.volumes, now);
            }
        }
        None
    }

    /// The image of the running container of `sandbox_id` that listens on (port, udp).
    pub fn serving_image(&self, sandbox_id: &str, port: u16, udp: bool) -> Option<&str> {
        self.containers
            .values()
            .filter(|c| c.sandbox_id == sandbox_id && c.state == ContainerState::Running)
            .find(|c| c.listening().contains(&(port, udp)))
            .map(|c| c.spec.image.as_str())
    }

    /// The (port, udp) pairs processes of a sandbox's running containers listen on.
    pub fn listening(&self, sandbox_id: &str) -> Vec<(u16, bool)> {
        let mut ports: Vec<(u16, bool)> =
            self.containers.values().filter(|c| c.sandbox_id == sandbox_id && c.state == ContainerState::Running).flat_map(|c| c.listening()).collect();
        ports.sort();
        ports.dedup();
        ports
    }

    /// Routes a call that stays in the caller's pod: loopback, or the pod's own IP. `None` when
    /// the destination is elsewhere (other pods of this node included).
    fn route_local(&mut self, from_sandbox: &str, call: &NetCall, now: Millis) -> Option<NetReply> {
        self.route_local_timed(from_sandbox, call, now).map(|(reply, _)| reply)
    }

    /// Like `route_local`, with how long the answer waits for the server's CPU.
    fn route_local_timed(&mut self, from_sandbox: &str, call: &NetCall, now: Millis) -> Option<(NetReply, Millis)> {
        if let NetCall::Dns { .. } = call {
            // No DNS server in a pod of this node answers the local way; the fabric routes DNS.
            return None;
        }
        let (dst, port, udp) = call.destination();
        let data = match call {
            NetCall::Tcp { send, .. } | NetCall::Udp { send, .. } => send.clone(),
            NetCall::Dns { .. } => Vec::new(),
        };
        let from_ip = self.sandboxes.get(from_sandbox).map(|s| s.ip.clone()).unwrap_or_default();
        if (dst.starts_with("127.") || dst == "::1") && self.published.contains(&(port, udp)) {
            return None;
        }
        // Only the caller's own network namespace: other pods of this node are reached over the
        // node's bridge, through the fabric (`kubesim_runtime::net`), where NetworkPolicy applies.
        let own = dst.starts_with("127.") || dst == "::1" || (!from_ip.is_empty() && dst == from_ip);
        let sandbox = own.then(|| from_sandbox.to_string())?;
        let incoming = Incoming { src: from_ip, src_port: 40_000, port, udp, data };
        let (answer, wait) = match self.serve_timed(&sandbox, &incoming, now) {
            Some((answer, wait)) => (Some(answer), wait),
            None => (None, 0),
        };
        let reply = match (call, answer) {
            (NetCall::Tcp { .. }, Some(Outgoing::Reply(bytes))) => NetReply::Tcp(Ok(bytes)),
            (NetCall::Tcp { .. }, Some(Outgoing::Reset)) => NetReply::Tcp(Err(NetError::Reset)),
            (NetCall::Tcp { .. }, Some(Outgoing::Hang)) => NetReply::Tcp(Err(NetError::TimedOut)),
            (NetCall::Tcp { .. }, None) => NetReply::Tcp(Err(NetError::Refused)),
            (_, Some(Outgoing::Reply(bytes))) => NetReply::Udp(Ok(bytes)),
            _ => NetReply::Udp(Err(NetError::TimedOut)),
        };
        Some((reply, wait))
    }

    /// Answers a network call of a container when it stays on this node (loopback, or a pod
    /// IP of this node); `None` when the fabric must route it.
    pub fn deliver_local(&mut self, container: &str, call: &NetCall, now: Millis) -> Option<(NetReply, Millis)> {
        let sandbox = self.containers.get(container)?.sandbox_id.clone();
        self.route_local_timed(&sandbox, call, now)
    }

    /// The pod IP a container's packets come from.
    pub fn container_ip(&self, container: &str) -> Option<String> {
        let sandbox = &self.containers.get(container)?.sandbox_id;
        self.sandboxes.get(sandbox).map(|s| s.ip.clone())
    }

    /// ExecSync: runs a command in a container to completion now, its network calls routed on
    /// this node (loopback and this node's pods) and otherwise timing out.
    pub fn exec_sync(&mut self, id: &str, argv: &[String], now: Millis) -> ExecOutput {
        self.exec_with(id, argv, ExecIo::default(), now, &mut |call| timed_out(call))
    }

    /// Like [`ContainerRuntime::exec_sync`], with `remote` answering calls that leave the
    /// caller's pod. Sleeps are fast-forwarded; the command runs against the container's live
    /// filesystem and processes.
    pub fn exec_with(&mut self, id: &str, argv: &[String], io: ExecIo, now: Millis, remote: &mut dyn FnMut(&NetCall) -> NetReply) -> ExecOutput {
        let mut session = match self.exec_begin(id, argv, io, now) {
            Ok(session) => session,
            Err(output) => return output,
        };
        loop {
            match self.exec_step(&mut session) {
                ExecStep::Net(call) => {
                    let reply = remote(&call);
                    self.exec_reply(&mut session, reply);
                }
                ExecStep::Done(output) => return output,
            }
        }
    }

    /// Starts an exec session (a command run to completion at once, its network calls handed
    /// to the driver one at a time by [`ContainerRuntime::exec_step`]); `Err` is the output of
    /// a command that could not start.
    pub fn exec_begin(&mut self, id: &str, argv: &[String], io: ExecIo, now: Millis) -> Result<ExecSession, ExecOutput> {
        let foreign = self.foreign;
        let Some(container) = self.containers.get_mut(id) else {
            return Err(ExecOutput { stderr: format!("container {id} not found").into_bytes(), code: 126, ..Default::default() });
        };
        let sandbox = container.sandbox_id.clone();
        self.pid_ns_enter(id);
        let container = self.containers.get_mut(id).expect("looked up above");
        let started = container.session_start(argv, io.stdin, io.tty, &mut self.volumes, foreign, now);
        self.pid_ns_leave(id);
        match started {
            Ok(pid) => Ok(ExecSession { container: id.to_string(), sandbox, session: pid, start: now, clock: now, waiting: None, steps: 0 }),
            Err(message) => {
                let code = if message.contains("not found") || message.contains("no such file") { 127 } else { 126 };
                // runc exec's form of the start error (runc create's is the container's).
                let message = message.replace(
                    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: ",
                    "OCI runtime exec failed: exec failed: ",
                );
                Err(ExecOutput { stderr: format!("{message}\n").into_bytes(), code, start_failed: true, ..Default::default() })
            }
        }
    }

    /// Runs an exec session until it needs the network beyond its own pod (the driver routes
    /// the call and answers with [`ContainerRuntime::exec_reply`]) or ends.
    pub fn exec_step(&mut self, s: &mut ExecSession) -> ExecStep {
        let foreign = self.foreign;
        let mut code = None;
        while s.steps < 200_000 {
            s.steps += 1;
            let Some(container) = self.containers.get_mut(&s.container) else { break };
            let Some((pid, wake_at)) = container.session_next(s.session) else { break };
            if let Some(at) = wake_at {
                if at.saturating_sub(s.start) > 24 * 3_600_000 {
                    break; // sleeps past a day: the exec would outlive any caller
                }
                s.clock = s.clock.max(at);
            }
            self.pid_ns_enter(&s.container);
            let Some(container) = self.containers.get_mut(&s.container) else { break };
            let event = container.session_resume(pid, &mut self.volumes, foreign, s.clock);
            self.pid_ns_leave(&s.container);
            match event {
                SessionEvent::Net(call) => match self.route_local(&s.sandbox, &call, s.clock) {
                    Some(reply) => {
                        if let Some(c) = self.containers.get_mut(&s.container) {
                            c.session_wake(pid, Wake::Net(reply));
                        }
                    }
                    None => {
                        s.waiting = Some(pid);
                        return ExecStep::Net(call);
                    }
                },
                SessionEvent::Exited(c) if pid == s.session => {
                    code = Some(c);
                    break;
                }
                _ => {}
            }
        }
        let (stdout, stderr) = match self.containers.get_mut(&s.container) {
            Some(container) => container.session_finish(s.session),
            None => (Vec::new(), Vec::new()),
        };
        ExecStep::Done(ExecOutput { stdout, stderr, code: code.unwrap_or(137), elapsed_ms: s.clock - s.start, start_failed: false })
    }

    /// Answers the network call an exec session is waiting on.
    pub fn exec_reply(&mut self, s: &mut ExecSession, reply: NetReply) {
        if let (Some(pid), Some(c)) = (s.waiting.take(), self.containers.get_mut(&s.container)) {
            c.session_wake(pid, Wake::Net(reply));
        }
    }

    // ---------------------------------------------------------------- shared PID namespaces

    /// Before a container of a `shareProcessNamespace` pod runs: it allocates pids from the
    /// pod's counter and sees the pod's other processes (`/pause` as PID 1, the other
    /// containers') and their root filesystems.
    fn pid_ns_enter(&mut self, id: &str) {
        let Some(sandbox_id) = self.containers.get(id).map(|c| c.sandbox_id.clone()) else { return };
        let shared = self.sandboxes.get(&sandbox_id).is_some_and(|s| s.share_pid);
        // An ephemeral container targeting another container joins that container's PID
        // namespace: it sees the target's processes and allocates pids after them.
        if let Some(target) = self.containers.get(id).and_then(|c| c.spec.pid_target.clone()).filter(|_| !shared) {
            let Some(t) = self.containers.get(&target).filter(|t| t.state == ContainerState::Running) else { return };
            let mut ns = crate::container::PidNamespace::default();
            for p in t.processes() {
                ns.roots.insert(p.pid, t.rootfs.clone());
                ns.peers.push(p);
            }
            let next = t.next_pid();
            let container = self.containers.get_mut(id).expect("looked up above");
            container.set_next_pid(next.max(container.next_pid()));
            container.pid_ns = Some(ns);
            return;
        }
        let Some(next) = self.sandboxes.get(&sandbox_id).filter(|s| s.share_pid).map(|s| s.next_pid) else { return };
        let mut ns = crate::container::PidNamespace::default();
        // registry.k8s.io/pause (3.6 on) runs as USER 65535:65535.
        ns.peers.push(kubesim_os::program::ProcessInfo { pid: 1, ppid: 0, uid: 65535, cpu_ms: 0, cmdline: "/pause".into(), rss_bytes: 1 << 20, state: 'S' });
        for other in self.containers.values().filter(|c| c.sandbox_id == sandbox_id && c.id != id && c.state == ContainerState::Running) {
            for p in other.processes() {
                ns.roots.insert(p.pid, other.rootfs.clone());
                ns.peers.push(p);
            }
        }
        let container = self.containers.get_mut(id).expect("looked up above");
        container.set_next_pid(next.max(container.next_pid()));
        container.pid_ns = Some(ns);
    }

    /// After it ran: the pod's counter moves on and the signals its processes sent to the
    /// other containers' processes are delivered.
    fn pid_ns_leave(&mut self, id: &str) {
        let Some(container) = self.containers.get_mut(id) else { return };
        let Some(ns) = container.pid_ns.take() else { return };
        let next = container.next_pid();
        let sandbox_id = container.sandbox_id.clone();
        if let Some(target) = container.spec.pid_target.clone().filter(|_| !self.sandboxes.get(&sandbox_id).is_some_and(|s| s.share_pid)) {
            if let Some(t) = self.containers.get_mut(&target) {
                t.set_next_pid(next.max(t.next_pid()));
                for (pid, sig) in ns.signals {
                    t.signal(pid, sig);
                }
            }
            return;
        }
        if let Some(sandbox) = self.sandboxes.get_mut(&sandbox_id) {
            sandbox.next_pid = sandbox.next_pid.max(next);
        }
        for (pid, sig) in ns.signals {
            if let Some(target) = self.containers.values_mut().find(|c| c.sandbox_id == sandbox_id && c.state == ContainerState::Running && c.has_pid(pid)) {
                target.signal(pid, sig);
            }
        }
    }

    // ---------------------------------------------------------------- pod-level queries

    /// Every container ever created for a pod's container (across the pod's sandboxes),
    /// oldest first: the attempts the kubelet counts restarts over.
    pub fn pod_container_attempts(&self, pod_uid: &str, container: &str) -> Vec<&Container> {
        let sandboxes: Vec<&str> = self.sandboxes.values().filter(|s| s.pod_uid == pod_uid).map(|s| s.id.as_str()).collect();
        let mut list: Vec<&Container> = self.containers.values().filter(|c| c.spec.name == container && sandboxes.contains(&c.sandbox_id.as_str())).collect();
        kubesim_api::sort::sort_by_key(&mut list, |c| (c.created_at, c.id.clone()));
        list
    }

    fn pod_name(&self, pod_uid: &str) -> String {
        self.sandboxes.values().filter(|s| s.pod_uid == pod_uid).max_by_key(|s| s.created_at).map(|s| s.pod_name.clone()).unwrap_or_default()
    }

    /// The log lines of a pod's container (`kubectl logs`): the newest attempt, or the one
    /// before it (`--previous`), in the kubelet's words when there is none.
    pub fn log_lines(&self, pod_uid: &str, container: &str, previous: bool) -> Result<&LogBuffer, String> {
        let attempts = self.pod_container_attempts(pod_uid, container);
        let pod = self.pod_name(pod_uid);
        let chosen = if previous {
            attempts.iter().rev().nth(1).ok_or_else(|| format!("previous terminated container {container:?} in pod {pod:?} not found"))?
        } else {
            attempts.last().ok_or_else(|| format!("container {container:?} in pod {pod:?} is waiting to start: ContainerCreating"))?
        };
        Ok(&chosen.io.logs)
    }

    /// ReadLogs of one container by its ID (the kubelet picked it from the pod's statuses):
    /// every line, stdout and stderr interleaved as written.
    pub fn container_logs(&self, id: &str) -> Result<String, String> {
        let container =
            self.containers.get(id).ok_or_else(|| format!("failed to try resolving symlinks in path \"/var/log/pods/{id}.log\": no such file or directory"))?;
        Ok(container.io.logs.iter().map(|l| format!("{}\n", l.text)).collect())
    }

    /// The log lines of one container by its ID, oldest first (the runtime's log file).
    pub fn container_log_lines(&self, id: &str) -> Result<&LogBuffer, String> {
        let container =
            self.containers.get(id).ok_or_else(|| format!("failed to try resolving symlinks in path \"/var/log/pods/{id}.log\": no such file or directory"))?;
        Ok(&container.io.logs)
    }

    /// What a terminal attached to a container by its ID shows: its output, the line it has
    /// not finished yet included.
    pub fn attached_output(&self, id: &str) -> Result<String, String> {
        let mut out = self.container_logs(id)?;
        if let Some(c) = self.containers.get(id) {
            out.push_str(&c.io.partial_text());
        }
        Ok(out)
    }

    /// Container logs as text (every line, stdout and stderr interleaved as written).
    pub fn logs(&self, pod_uid: &str, container: &str, previous: bool) -> Result<String, String> {
        Ok(self.log_lines(pod_uid, container, previous)?.iter().map(|l| format!("{}\n", l.text)).collect())
    }

    /// Current usage of a pod's running containers: (cpu millicores, memory bytes), as the
    /// kubelet's resource metrics endpoint reports it to the metrics-server.
    pub fn pod_usage(&self, pod_uid: &str, now: Millis) -> Option<(i64, i64)> {
        let sandboxes: Vec<&str> = self.sandboxes.values().filter(|s| s.pod_uid == pod_uid).map(|s| s.id.as_str()).collect();
        let mut total = (0i64, 0i64);
        let mut any = false;
        for c in self.containers.values().filter(|c| c.state == ContainerState::Running && sandboxes.contains(&c.sandbox_id.as_str())) {
            any = true;
            total.0 += c.cpu_milli(now);
            total.1 += c.memory_bytes() as i64;
        }
        any.then_some(total)
    }

    /// The memory half of [`ContainerRuntime::pod_usage`] for every pod with a running
    /// container, by pod uid, in one pass over the containers (the eviction manager reads every
    /// pod's working set each interval, and no CPU).
    pub fn memory_by_pod(&self) -> BTreeMap<&str, i64> {
        let mut usage: BTreeMap<&str, i64> = BTreeMap::new();
        for c in self.containers.values().filter(|c| c.state == ContainerState::Running) {
            let Some(sandbox) = self.sandboxes.get(&c.sandbox_id) else { continue };
            *usage.entry(sandbox.pod_uid.as_str()).or_default() += c.memory_bytes() as i64;
        }
        usage
    }

    /// How many containers this runtime has started: a watcher that saw the same number last
    /// time knows no container started since.
    pub fn starts(&self) -> u64 {
        self.starts
    }

    /// The newest attempt of a pod's container.
    pub fn latest_attempt(&self, pod_uid: &str, container: &str) -> Option<String> {
        self.pod_container_attempts(pod_uid, container).last().map(|c| c.id.clone())
    }
}

/// An exec session in progress ([`ContainerRuntime::exec_begin`]).
#[derive(Clone, Debug)]
pub struct ExecSession {
    container: String,
    sandbox: String,
    session: u32,
    start: Millis,
    clock: Millis,
    waiting: Option<u32>,
    steps: u32,
}

/// What an exec session needs next.
#[derive(Debug)]
pub enum ExecStep {
    /// A network call leaving the pod, for the driver to route.
    Net(NetCall),
    /// The command ended.
    Done(ExecOutput),
}

/// The timeout a call gets when nothing answers it.
pub fn timed_out(call: &NetCall) -> NetReply {
    call.failed(NetError::TimedOut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_latency_follows_image_size() {
        assert_eq!(latency_ms(CriCall::PullImage(72_099_501)), 300 + 1802);
    }
}
