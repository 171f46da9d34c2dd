//! The modelled container runtime, behind traits shaped like CRI's RuntimeService and
//! ImageService. Every call has a modelled latency ([`latency_ms`]); the kubelet invokes a call
//! when its latency has elapsed, so the call's effect lands at its completion time. Container
//! processes play their [`Program`] timelines on the virtual clock.

use crate::process::{Effect, Program, TermBehaviour};
use kubesim_api::Millis;
use std::collections::BTreeMap;

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
}

/// Container state (CRI ContainerState).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerState {
    /// Created, not started.
    Created,
    /// Running.
    Running,
    /// Exited.
    Exited,
}

/// What the kubelet asks the runtime to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerConfig {
    /// Container name.
    pub name: String,
    /// Image reference as in the pod spec.
    pub image: String,
    /// The process model.
    pub program: Program,
    /// Memory limit (bytes), if any.
    pub memory_limit: Option<i64>,
    /// Modelled usage: (cpu millicores, memory bytes).
    pub usage: (i64, i64),
}

/// A container and its process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Container {
    /// Container id (64 hex chars).
    pub id: String,
    /// Sandbox it belongs to.
    pub sandbox_id: String,
    /// Config it was created with.
    pub config: ContainerConfig,
    /// State.
    pub state: ContainerState,
    /// Creation time.
    pub created_at: Millis,
    /// Start time.
    pub started_at: Option<Millis>,
    /// Exit time.
    pub finished_at: Option<Millis>,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Reason (`Completed`, `Error`, `OOMKilled`).
    pub reason: Option<String>,
    /// Log lines (virtual time, line).
    pub logs: Vec<(Millis, String)>,
    /// The container's files (plus whatever the script wrote).
    pub files: BTreeMap<String, String>,
    /// Index of the next timeline effect to play.
    next_effect: usize,
    /// When a stop was requested: the SIGKILL deadline and the SIGTERM exit time if handled.
    stop: Option<(Millis, Option<(Millis, i32)>)>,
}

/// A pulled image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Normalized reference (`docker.io/library/nginx:latest`).
    pub reference: String,
    /// Digest reference (`docker.io/library/nginx@sha256:...`).
    pub digest_ref: String,
    /// Size in bytes.
    pub size: u64,
}

/// CRI RuntimeService.
pub trait RuntimeService {
    /// Creates and starts a sandbox; returns its id.
    fn run_pod_sandbox(&mut self, config: &SandboxConfig, id: String, now: Millis) -> Result<String, CriError>;
    /// Stops a sandbox (and any containers still in it).
    fn stop_pod_sandbox(&mut self, id: &str, now: Millis) -> Result<(), CriError>;
    /// Removes a sandbox and its containers.
    fn remove_pod_sandbox(&mut self, id: &str) -> Result<(), CriError>;
    /// Sandbox status.
    fn pod_sandbox_status(&self, id: &str) -> Result<&Sandbox, CriError>;
    /// All sandboxes.
    fn list_pod_sandbox(&self) -> Vec<&Sandbox>;
    /// Creates a container in a sandbox; returns its id.
    fn create_container(&mut self, sandbox_id: &str, config: ContainerConfig, id: String, now: Millis) -> Result<String, CriError>;
    /// Starts a created container.
    fn start_container(&mut self, id: &str, now: Millis) -> Result<(), CriError>;
    /// Sends SIGTERM, then SIGKILL after `timeout_ms`.
    fn stop_container(&mut self, id: &str, timeout_ms: Millis, now: Millis) -> Result<(), CriError>;
    /// Removes an exited container.
    fn remove_container(&mut self, id: &str) -> Result<(), CriError>;
    /// All containers.
    fn list_containers(&self) -> Vec<&Container>;
    /// One container's status.
    fn container_status(&self, id: &str) -> Result<&Container, CriError>;
    /// Runs a command in a container (probes, `kubectl exec`): stdout and exit code.
    fn exec_sync(&mut self, id: &str, command: &[String], now: Millis) -> Result<(String, i32), CriError>;
}

/// CRI ImageService.
pub trait ImageService {
    /// Pulls an image; returns the image reference.
    fn pull_image(&mut self, image: &str) -> Result<String, CriError>;
    /// The image, if present.
    fn image_status(&self, image: &str) -> Option<&Image>;
    /// Every image present.
    fn list_images(&self) -> Vec<&Image>;
    /// Removes an image.
    fn remove_image(&mut self, image: &str) -> Result<(), CriError>;
}

/// The built-in image catalogue: (base name, compressed size in bytes). Overridable per world.
pub const IMAGE_CATALOGUE: &[(&str, u64)] = &[
    ("nginx", 72_099_501),
    ("httpd", 58_060_000),
    ("redis", 45_100_000),
    ("postgres", 158_300_000),
    ("mysql", 172_600_000),
    ("busybox", 2_155_000),
    ("alpine", 3_650_000),
    ("pause", 320_000),
    ("agnhost", 51_200_000),
    ("php-hpa-example", 181_000_000),
    ("hpa-example", 181_000_000),
    ("ubuntu", 29_750_000),
    ("debian", 48_500_000),
    ("perl", 335_000_000),
    ("mongo", 250_000_000),
    ("memcached", 31_000_000),
    ("cassandra", 145_000_000),
    ("kubernetes-zookeeper", 120_000_000),
    ("fluentd-elasticsearch", 140_000_000),
    ("gb-frontend", 120_000_000),
    ("xtrabackup", 150_000_000),
    ("wordpress", 250_000_000),
];

/// Default size for images not in the catalogue.
pub const DEFAULT_IMAGE_SIZE: u64 = 50_000_000;

/// Normalizes an image reference as containerd does (`nginx` → `docker.io/library/nginx:latest`).
pub fn normalize_image(image: &str) -> String {
    let (name, suffix) = match image.split_once('@') {
        Some((name, digest)) => (name.to_string(), format!("@{digest}")),
        None => {
            let last = image.rsplit('/').next().unwrap_or(image);
            if last.contains(':') {
                let cut = image.len() - last.len() + last.find(':').unwrap();
                (image[..cut].to_string(), image[cut..].to_string())
            } else {
                (image.to_string(), ":latest".to_string())
            }
        }
    };
    let first = name.split('/').next().unwrap_or("");
    let has_registry = name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let full = if has_registry {
        name
    } else if name.contains('/') {
        format!("docker.io/{name}")
    } else {
        format!("docker.io/library/{name}")
    };
    format!("{full}{suffix}")
}

/// Whether pulling this image fails (registry under the reserved `.invalid` TLD).
pub fn image_unresolvable(image: &str) -> bool {
    let normalized = normalize_image(image);
    let registry = normalized.split('/').next().unwrap_or("");
    let host = registry.split(':').next().unwrap_or("");
    host.ends_with(".invalid") || host == "invalid"
}

/// The modelled runtime of one node (containerd-like).
#[derive(Clone, Debug, Default)]
pub struct FakeRuntime {
    sandboxes: BTreeMap<String, Sandbox>,
    containers: BTreeMap<String, Container>,
    images: BTreeMap<String, Image>,
    /// Image sizes by base name or full reference (the catalogue plus scenario overrides).
    pub image_sizes: BTreeMap<String, u64>,
    /// Image references the scenario declares missing from their registry.
    pub missing_images: Vec<String>,
}

impl FakeRuntime {
    /// A runtime with the built-in image catalogue and the pause image present.
    pub fn new() -> FakeRuntime {
        let mut runtime = FakeRuntime::default();
        for (name, size) in IMAGE_CATALOGUE {
            runtime.image_sizes.insert(name.to_string(), *size);
        }
        let pause = "registry.k8s.io/pause:3.10";
        runtime.images.insert(normalize_image(pause), Image { reference: normalize_image(pause), digest_ref: digest_ref(pause), size: 320_000 });
        runtime
    }

    /// The size the model uses for an image.
    pub fn image_size(&self, image: &str) -> u64 {
        let normalized = normalize_image(image);
        if let Some(size) = self.image_sizes.get(&normalized).or_else(|| self.image_sizes.get(image)) {
            return *size;
        }
        let base = crate::process::image_base_name(image);
        self.image_sizes.get(&base).copied().unwrap_or(DEFAULT_IMAGE_SIZE)
    }

    /// Plays every running container's timeline up to `now`: logs, files, exits, kills.
    /// Returns whether anything changed.
    pub fn advance(&mut self, now: Millis) -> bool {
        let mut changed = false;
        for container in self.containers.values_mut() {
            if container.state != ContainerState::Running {
                continue;
            }
            let started = container.started_at.unwrap_or(now);
            // Stop deadlines first if they come before the next effect.
            loop {
                let next_effect_at = container.config.program.timeline.get(container.next_effect).map(|(off, _)| started + off);
                let stop_at = container.stop.map(|(kill, term)| term.map_or(kill, |(t, _)| t.min(kill)));
                let next = match (next_effect_at, stop_at) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) => a,
                    (None, Some(b)) => b,
                    (None, None) => break,
                };
                if next > now {
                    break;
                }
                if stop_at == Some(next) && next_effect_at.is_none_or(|e| e >= next) {
                    let (kill, term) = container.stop.expect("stop_at implies stop");
                    let (code, reason) = match term {
                        Some((t, code)) if t <= kill => (code, if code == 0 { "Completed" } else { "Error" }),
                        _ => (137, "Error"),
                    };
                    exit(container, next, code, reason);
                    changed = true;
                    break;
                }
                let (_, effect) = container.config.program.timeline[container.next_effect].clone();
                container.next_effect += 1;
                changed = true;
                match effect {
                    Effect::Log(line) => container.logs.push((next, line)),
                    Effect::WriteFile(path, content) => {
                        container.files.insert(path, content);
                    }
                    Effect::RemoveFile(path) => {
                        container.files.remove(&path);
                    }
                    Effect::Exit(code) => {
                        exit(container, next, code, if code == 0 { "Completed" } else { "Error" });
                        break;
                    }
                    Effect::OomKill => {
                        exit(container, next, 137, "OOMKilled");
                        break;
                    }
                }
            }
        }
        changed
    }

    /// The earliest virtual time at which [`FakeRuntime::advance`] would change something.
    pub fn next_wakeup(&self) -> Option<Millis> {
        self.containers
            .values()
            .filter(|c| c.state == ContainerState::Running)
            .filter_map(|c| {
                let started = c.started_at?;
                let effect = c.config.program.timeline.get(c.next_effect).map(|(off, _)| started + off);
                let stop = c.stop.map(|(kill, term)| term.map_or(kill, |(t, _)| t.min(kill)));
                match (effect, stop) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            })
            .min()
    }

    /// StopContainer after a preStop hook: SIGTERM `term_delay_ms` from now, SIGKILL at
    /// `timeout_ms` from now.
    pub fn stop_container_after(&mut self, id: &str, term_delay_ms: Millis, timeout_ms: Millis, now: Millis) -> Result<(), CriError> {
        let container = self.containers.get_mut(id).ok_or_else(|| CriError(format!("container {id} not found")))?;
        if container.state != ContainerState::Running {
            return Ok(());
        }
        let term = match container.config.program.on_term {
            TermBehaviour::ExitsAfter(ms, code) => Some((now + term_delay_ms + ms, code)),
            TermBehaviour::Ignores => None,
        };
        container.stop = Some((now + timeout_ms, term));
        self.advance(now);
        Ok(())
    }

    /// Fault injection: a running container's process dies now with exit code 1.
    pub fn crash(&mut self, id: &str, now: Millis) -> bool {
        match self.containers.get_mut(id) {
            Some(c) if c.state == ContainerState::Running => {
                c.logs.push((now, "panic: injected fault (kubesim fault container-crash)".into()));
                exit(c, now, 1, "Error");
                true
            }
            _ => false,
        }
    }

    /// Every container ever created for a pod's container (across the pod's sandboxes),
    /// oldest first: the attempts the kubelet counts restarts over.
    pub fn pod_container_attempts(&self, pod_uid: &str, container: &str) -> Vec<&Container> {
        let sandboxes: Vec<&str> = self.sandboxes.values().filter(|s| s.pod_uid == pod_uid).map(|s| s.id.as_str()).collect();
        let mut list: Vec<&Container> = self.containers.values().filter(|c| c.config.name == container && sandboxes.contains(&c.sandbox_id.as_str())).collect();
        kubesim_api::sort::sort_by_key(&mut list, |c| (c.created_at, c.id.clone()));
        list
    }

    /// The pod's name as its newest sandbox records it.
    fn pod_name(&self, pod_uid: &str) -> String {
        self.sandboxes.values().filter(|s| s.pod_uid == pod_uid).max_by_key(|s| s.created_at).map(|s| s.pod_name.clone()).unwrap_or_default()
    }

    /// Container logs (`kubectl logs`, through the kubelet's log endpoint), in the runtime's
    /// and the kubelet's words.
    pub fn logs(&self, pod_uid: &str, container: &str, previous: bool) -> Result<String, String> {
        let attempts = self.pod_container_attempts(pod_uid, container);
        let pod = self.pod_name(pod_uid);
        let chosen = if previous {
            attempts.iter().rev().nth(1).ok_or_else(|| format!("previous terminated container {container:?} in pod {pod:?} not found"))?
        } else {
            attempts.last().ok_or_else(|| format!("container {container:?} in pod {pod:?} is waiting to start: ContainerCreating"))?
        };
        Ok(chosen.logs.iter().map(|(_, l)| format!("{l}\n")).collect())
    }

    /// Current usage of a pod's running containers: (cpu millicores, memory bytes), as the
    /// kubelet's resource metrics endpoint reports it to the metrics-server.
    pub fn pod_usage(&self, pod_uid: &str) -> Option<(i64, i64)> {
        let sandboxes: Vec<&str> = self.sandboxes.values().filter(|s| s.pod_uid == pod_uid).map(|s| s.id.as_str()).collect();
        let mut total = (0i64, 0i64);
        let mut any = false;
        for c in self.containers.values().filter(|c| c.state == ContainerState::Running && sandboxes.contains(&c.sandbox_id.as_str())) {
            any = true;
            total.0 += c.config.usage.0;
            total.1 += c.config.usage.1;
        }
        any.then_some(total)
    }

    /// `kubectl exec`: runs a command in the newest instance of a pod's container.
    pub fn exec_in(&mut self, pod_uid: &str, container: &str, command: &[String], now: Millis) -> Result<(String, i32), String> {
        let id = self.pod_container_attempts(pod_uid, container).last().map(|c| c.id.clone()).ok_or_else(|| format!("container {container:?} not found"))?;
        self.exec_sync(&id, command, now).map_err(|e| e.0)
    }

    /// Containers of one sandbox, oldest first.
    pub fn containers_in(&self, sandbox_id: &str) -> Vec<&Container> {
        let mut list: Vec<&Container> = self.containers.values().filter(|c| c.sandbox_id == sandbox_id).collect();
        kubesim_api::sort::sort_by_key(&mut list, |c| (c.created_at, c.id.clone()));
        list
    }
}

fn exit(container: &mut Container, at: Millis, code: i32, reason: &str) {
    container.state = ContainerState::Exited;
    container.finished_at = Some(at);
    container.exit_code = Some(code);
    container.reason = Some(reason.to_string());
    container.stop = None;
}

/// A stable fake digest reference for an image (sha256 of nothing real, but fixed per name).
pub fn digest_ref(image: &str) -> String {
    let normalized = normalize_image(image);
    let repo = match normalized.rfind(['@']) {
        Some(i) => normalized[..i].to_string(),
        None => {
            let last_slash = normalized.rfind('/').unwrap_or(0);
            match normalized[last_slash..].find(':') {
                Some(i) => normalized[..last_slash + i].to_string(),
                None => normalized.clone(),
            }
        }
    };
    // FNV-1a over the reference, widened to 64 hex chars deterministically.
    let mut hex = String::new();
    let mut h = kubesim_api::hash::Fnv64::new();
    for round in 0..4u8 {
        h = h.bytes(normalized.as_bytes()).byte(round);
        hex.push_str(&format!("{:016x}", h.finish()));
    }
    format!("{repo}@sha256:{hex}")
}

impl RuntimeService for FakeRuntime {
    fn run_pod_sandbox(&mut self, config: &SandboxConfig, id: String, now: Millis) -> Result<String, CriError> {
        let sandbox = Sandbox {
            id: id.clone(),
            pod_uid: config.pod_uid.clone(),
            pod_name: config.pod_name.clone(),
            pod_namespace: config.pod_namespace.clone(),
            ip: config.ip.clone(),
            state: SandboxState::Ready,
            created_at: now,
        };
        self.sandboxes.insert(id.clone(), sandbox);
        Ok(id)
    }
    fn stop_pod_sandbox(&mut self, id: &str, now: Millis) -> Result<(), CriError> {
        let sandbox = self.sandboxes.get_mut(id).ok_or_else(|| CriError(format!("sandbox {id} not found")))?;
        sandbox.state = SandboxState::NotReady;
        for container in self.containers.values_mut().filter(|c| c.sandbox_id == id && c.state == ContainerState::Running) {
            exit(container, now, 137, "Error");
        }
        Ok(())
    }
    fn remove_pod_sandbox(&mut self, id: &str) -> Result<(), CriError> {
        self.sandboxes.remove(id);
        self.containers.retain(|_, c| c.sandbox_id != id);
        Ok(())
    }
    fn pod_sandbox_status(&self, id: &str) -> Result<&Sandbox, CriError> {
        self.sandboxes.get(id).ok_or_else(|| CriError(format!("sandbox {id} not found")))
    }
    fn list_pod_sandbox(&self) -> Vec<&Sandbox> {
        self.sandboxes.values().collect()
    }
    fn create_container(&mut self, sandbox_id: &str, config: ContainerConfig, id: String, now: Millis) -> Result<String, CriError> {
        if !self.sandboxes.contains_key(sandbox_id) {
            return Err(CriError(format!("sandbox {sandbox_id} not found")));
        }
        if self.image_status(&config.image).is_none() {
            return Err(CriError(format!("image {:?} not found", config.image)));
        }
        let files = config.program.files.clone();
        self.containers.insert(
            id.clone(),
            Container {
                id: id.clone(),
                sandbox_id: sandbox_id.to_string(),
                config,
                state: ContainerState::Created,
                created_at: now,
                started_at: None,
                finished_at: None,
                exit_code: None,
                reason: None,
                logs: Vec::new(),
                files,
                next_effect: 0,
                stop: None,
            },
        );
        Ok(id)
    }
    fn start_container(&mut self, id: &str, now: Millis) -> Result<(), CriError> {
        let container = self.containers.get_mut(id).ok_or_else(|| CriError(format!("container {id} not found")))?;
        container.state = ContainerState::Running;
        container.started_at = Some(now);
        // Memory usage over the limit: the OOM killer strikes as the process allocates.
        if container.config.memory_limit.is_some_and(|limit| container.config.usage.1 > limit) {
            let timeline = &mut container.config.program.timeline;
            let at = timeline.iter().position(|(off, _)| *off > 50).unwrap_or(timeline.len());
            timeline.insert(at, (50, Effect::OomKill));
            timeline.truncate(at + 1);
        }
        self.advance(now);
        Ok(())
    }
    fn stop_container(&mut self, id: &str, timeout_ms: Millis, now: Millis) -> Result<(), CriError> {
        let container = self.containers.get_mut(id).ok_or_else(|| CriError(format!("container {id} not found")))?;
        if container.state != ContainerState::Running {
            return Ok(());
        }
        let term = match container.config.program.on_term {
            TermBehaviour::ExitsAfter(ms, code) => Some((now + ms, code)),
            TermBehaviour::Ignores => None,
        };
        let kill = now + timeout_ms;
        container.stop = Some(match container.stop {
            Some((old_kill, old_term)) => (old_kill.min(kill), old_term.or(term)),
            None => (kill, term),
        });
        self.advance(now);
        Ok(())
    }
    fn remove_container(&mut self, id: &str) -> Result<(), CriError> {
        self.containers.remove(id);
        Ok(())
    }
    fn list_containers(&self) -> Vec<&Container> {
        self.containers.values().collect()
    }
    fn container_status(&self, id: &str) -> Result<&Container, CriError> {
        self.containers.get(id).ok_or_else(|| CriError(format!("container {id} not found")))
    }
    fn exec_sync(&mut self, id: &str, command: &[String], now: Millis) -> Result<(String, i32), CriError> {
        self.advance(now);
        let container = self.containers.get(id).ok_or_else(|| CriError(format!("container {id} not found")))?;
        if container.state != ContainerState::Running {
            return Err(CriError("container is not running".into()));
        }
        let argv: Vec<&str> = command.iter().map(|s| s.as_str()).collect();
        let (argv, _) = match argv.as_slice() {
            ["sh", "-c", script] | ["/bin/sh", "-c", script] | ["bash", "-c", script] => (script.split_whitespace().collect::<Vec<_>>(), ()),
            other => (other.to_vec(), ()),
        };
        Ok(match argv.as_slice() {
            ["cat", path] => match container.files.get(*path) {
                Some(content) => (content.clone(), 0),
                None => (format!("cat: can't open '{path}': No such file or directory\n"), 1),
            },
            ["ls", path] => {
                let entries: Vec<&str> = container.files.keys().filter(|k| k.starts_with(path)).map(|k| k.as_str()).collect();
                (entries.join("\n"), 0)
            }
            ["true"] | [] => (String::new(), 0),
            ["false"] => (String::new(), 1),
            ["echo", rest @ ..] => (rest.join(" ") + "\n", 0),
            ["test", "-f", path] | ["test", "-e", path] => (String::new(), if container.files.contains_key(*path) { 0 } else { 1 }),
            ["hostname"] => (String::new(), 0),
            [program, ..] => (format!("OCI runtime exec failed: exec failed: unable to start container process: exec: \"{program}\": executable file not found in $PATH: unknown\n"), 126),
        })
    }
}

impl ImageService for FakeRuntime {
    fn pull_image(&mut self, image: &str) -> Result<String, CriError> {
        let normalized = normalize_image(image);
        if image_unresolvable(image) {
            let host = normalized.split('/').next().unwrap_or("");
            return Err(CriError(format!(
                "failed to pull and unpack image {normalized:?}: failed to resolve reference {normalized:?}: failed to do request: Head \"https://{host}/v2/\": dial tcp: lookup {host}: no such host"
            )));
        }
        if self.missing_images.iter().any(|m| normalize_image(m) == normalized) {
            return Err(CriError(format!(
                "failed to pull and unpack image {normalized:?}: failed to resolve reference {normalized:?}: {normalized}: not found"
            )));
        }
        let size = self.image_size(image);
        self.images.insert(normalized.clone(), Image { reference: normalized.clone(), digest_ref: digest_ref(image), size });
        Ok(normalized)
    }
    fn image_status(&self, image: &str) -> Option<&Image> {
        self.images.get(&normalize_image(image))
    }
    fn list_images(&self) -> Vec<&Image> {
        self.images.values().collect()
    }
    fn remove_image(&mut self, image: &str) -> Result<(), CriError> {
        self.images.remove(&normalize_image(image));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_normalize_like_containerd() {
        assert_eq!(normalize_image("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(normalize_image("nginx:1.27"), "docker.io/library/nginx:1.27");
        assert_eq!(normalize_image("bitnami/redis"), "docker.io/bitnami/redis:latest");
        assert_eq!(normalize_image("registry.k8s.io/pause:3.10"), "registry.k8s.io/pause:3.10");
        assert_eq!(normalize_image("localhost:5000/app"), "localhost:5000/app:latest");
        assert!(digest_ref("nginx").starts_with("docker.io/library/nginx@sha256:"));
        assert_eq!(digest_ref("nginx").len(), "docker.io/library/nginx@sha256:".len() + 64);
    }

    #[test]
    fn invalid_registries_fail_to_pull() {
        let mut runtime = FakeRuntime::new();
        assert!(runtime.pull_image("registry.invalid/app:1").unwrap_err().0.contains("no such host"));
        assert!(runtime.pull_image("nginx").is_ok());
        assert!(runtime.image_status("nginx:latest").is_some());
    }

    #[test]
    fn pull_latency_follows_image_size() {
        assert_eq!(latency_ms(CriCall::PullImage(72_099_501)), 300 + 1802);
    }
}
