//! The prober (pkg/kubelet/prober): one probe worker per container probe, ticking every
//! period from the container's start; results feed readiness and startup in the pod status,
//! and liveness/startup failures kill the container. The probe handlers (exec, httpGet,
//! tcpSocket, grpc) run against the host's runtime model with the prober's result and message
//! shapes.

use crate::kubelet::{Kubelet, Wake};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Probe};
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::Millis;
use kubesim_host::cri::{ContainerRuntime, ContainerState};
use kubesim_host::Host;
use kubesim_os::program::{Incoming, Outgoing};
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

/// One probe worker (prober/worker.go).
#[derive(Clone, Debug)]
pub(crate) struct ProbeWorker {
    uid: String,
    container: String,
    container_id: String,
    kind: ProbeKind,
    successes: i32,
    failures: i32,
}

/// The prober manager: probe workers by number, and the latest result per (pod uid,
/// container, kind).
#[derive(Clone, Debug)]
pub struct Prober {
    workers: BTreeMap<u64, ProbeWorker>,
    results: BTreeMap<(String, String, ProbeKind), bool>,
    next_seq: u64,
}

impl Default for Prober {
    fn default() -> Self {
        Prober { workers: BTreeMap::new(), results: BTreeMap::new(), next_seq: 1 }
    }
}

impl Prober {
    /// The latest result of a probe, if any.
    pub fn result(&self, uid: &str, container: &str, kind: ProbeKind) -> Option<bool> {
        self.results.get(&(uid.to_string(), container.to_string(), kind)).copied()
    }
    /// Forgets every probe worker (the containers they probed are gone).
    pub fn clear(&mut self) {
        self.workers.clear();
    }
    /// prober_manager RemovePod: the pod's probe workers stop and its results are dropped.
    pub(crate) fn remove_pod(&mut self, uid: &str) {
        self.workers.retain(|_, w| w.uid != uid);
        self.results.retain(|(pod, _, _), _| pod != uid);
    }
}

impl Kubelet {
    /// Starts the probe workers of a container that just started (prober_manager AddPod).
    pub(crate) fn add_probes(&mut self, uid: &str, container: &str, container_id: &str, ctx: &mut Ctx) {
        // The pod's version, shared (not its spec copied for each container start).
        let Some(object) = self.workers.get(uid).map(|w| w.pod.clone()) else { return };
        let Some(spec) = object.as_pod().and_then(|p| p.spec.as_ref()) else { return };
        let Some(c) = spec.init_containers.iter().flatten().chain(spec.containers.iter()).find(|c| c.name == container) else { return };
        for kind in [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness] {
            let Some(probe) = kind.of(c) else { continue };
            self.prober.results.remove(&(uid.to_string(), container.to_string(), kind));
            let seq = self.prober.next_seq;
            self.prober.next_seq += 1;
            self.prober.workers.insert(
                seq,
                ProbeWorker { uid: uid.to_string(), container: container.to_string(), container_id: container_id.to_string(), kind, successes: 0, failures: 0 },
            );
            // Probes tick every period from the container's start; ticks before
            // initialDelaySeconds are skipped (worker.go doProbe).
            let period = probe.period_seconds.unwrap_or(10).max(1) as u64 * 1000;
            let delay = probe.initial_delay_seconds.unwrap_or(0).max(0) as u64 * 1000;
            let first = delay.div_ceil(period) * period;
            self.timers.arm(ctx, first, Wake::Probe(seq));
        }
    }

    /// One probe tick: run the handler, apply the thresholds, act (restart or readiness).
    pub(crate) fn probe_tick(&mut self, host: &mut Host, seq: u64, ctx: &mut Ctx) {
        let Some(mut probe_worker) = self.prober.workers.get(&seq).cloned() else { return };
        let Some(worker) = self.workers.get(&probe_worker.uid) else {
            self.prober.workers.remove(&seq);
            return;
        };
        let object = worker.pod.clone();
        let pod = object.as_pod().expect("pod workers hold pods");
        let pod_ip = worker.ip.clone().unwrap_or_default();
        let latest = worker.instances.get(&probe_worker.container).and_then(|ids| ids.last()).cloned();
        let key = (probe_worker.uid.clone(), probe_worker.container.clone(), probe_worker.kind);
        // The container this worker probes is gone or stopped: the worker ends.
        let running = latest.as_deref() == Some(probe_worker.container_id.as_str())
            && host.cri.container_status(&probe_worker.container_id).is_ok_and(|c| c.state == ContainerState::Running)
            && pod.metadata.deletion_timestamp.is_none();
        if !running {
            self.prober.workers.remove(&seq);
            return;
        }
        let sandbox = worker.sandbox.clone().unwrap_or_default();
        let spec = pod.spec.clone().unwrap_or_default();
        let Some(container) = spec.init_containers.iter().flatten().chain(spec.containers.iter()).find(|c| c.name == probe_worker.container).cloned() else {
            return;
        };
        let Some(probe) = probe_worker.kind.of(&container).cloned() else { return };
        let period = probe.period_seconds.unwrap_or(10).max(1) as u64 * 1000;
        // Liveness and readiness wait for the startup probe to succeed.
        let startup_pending = container.startup_probe.is_some()
            && probe_worker.kind != ProbeKind::Startup
            && self.prober.results.get(&(key.0.clone(), key.1.clone(), ProbeKind::Startup)) != Some(&true);
        if startup_pending {
            self.timers.arm(ctx, period, Wake::Probe(seq));
            return;
        }
        // Network probes travel the fabric to the pod's address on this node.
        let routed = ctx.fabric.route_local(&host.name, &pod_ip).is_ok();
        let target = ProbeTarget { container_id: &probe_worker.container_id, sandbox_id: &sandbox, pod_ip: &pod_ip, routed };
        let result = run_probe(&probe, &container, &target, &mut host.cri, ctx.now);
        ctx.note(
            format!("cri/{}", self.setup.name),
            "ExecSync",
            format!(
                "{} probe {}/{} {}: {}",
                probe_worker.kind.label(),
                pod.metadata.namespace.clone().unwrap_or_default(),
                pod.metadata.name.clone().unwrap_or_default(),
                probe_worker.container,
                if result.success { "success" } else { "failure" }
            ),
        );
        if result.success {
            probe_worker.successes += 1;
            probe_worker.failures = 0;
        } else {
            probe_worker.failures += 1;
            probe_worker.successes = 0;
            ctx.event(&object, "Warning", "Unhealthy", format!("{} probe failed: {}", probe_worker.kind.label(), result.output));
        }
        let success_threshold = probe.success_threshold.unwrap_or(1).max(1);
        let failure_threshold = probe.failure_threshold.unwrap_or(3).max(1);
        let previous = self.prober.results.get(&key).copied();
        let mut new_result = previous;
        if probe_worker.successes >= success_threshold {
            new_result = Some(true);
        } else if probe_worker.failures >= failure_threshold {
            new_result = Some(false);
        }
        let mut steady = result.success && probe_worker.failures == 0;
        if new_result == Some(false) && probe_worker.kind != ProbeKind::Readiness {
            // Liveness / startup failure: kill the container; restartPolicy decides the rest.
            let grace = probe.termination_grace_period_seconds.or(spec.termination_grace_period_seconds).unwrap_or(30).max(0) as u64 * 1000;
            ctx.event(
                &object,
                "Normal",
                "Killing",
                format!("Container {} failed {} probe, will be restarted", probe_worker.container, probe_worker.kind.label().to_ascii_lowercase()),
            );
            let _ = host.cri.stop_container(&probe_worker.container_id, grace, None, ctx.now);
            ctx.note(
                format!("cri/{}", self.setup.name),
                "StopContainer",
                format!(
                    "{}/{} {} timeout={}s",
                    pod.metadata.namespace.clone().unwrap_or_default(),
                    pod.metadata.name.clone().unwrap_or_default(),
                    probe_worker.container,
                    grace / 1000
                ),
            );
            self.mark_runtime_changed(host, ctx);
            self.prober.workers.remove(&seq);
            self.prober.results.insert(key, false);
            return;
        }
        if new_result != previous {
            if let Some(r) = new_result {
                self.prober.results.insert(key.clone(), r);
            }
            // A readiness or startup transition changes the pod status: resync.
            let uid = key.0.clone();
            self.schedule_dispatch(&uid, ctx);
            steady = false;
        }
        self.prober.workers.insert(seq, probe_worker);
        // Steady successes are housekeeping; anything that may still change is real work.
        if steady {
            self.timers.arm_periodic(ctx, period, Wake::Probe(seq));
        } else {
            self.timers.arm(ctx, period, Wake::Probe(seq));
        }
    }
}

/// Which probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProbeKind {
    /// startupProbe.
    Startup,
    /// livenessProbe.
    Liveness,
    /// readinessProbe.
    Readiness,
}

impl ProbeKind {
    /// "Startup", "Liveness", "Readiness" as the Unhealthy event words it.
    pub fn label(self) -> &'static str {
        match self {
            ProbeKind::Startup => "Startup",
            ProbeKind::Liveness => "Liveness",
            ProbeKind::Readiness => "Readiness",
        }
    }
    /// The container's probe of this kind.
    pub fn of(self, container: &Container) -> Option<&Probe> {
        match self {
            ProbeKind::Startup => container.startup_probe.as_ref(),
            ProbeKind::Liveness => container.liveness_probe.as_ref(),
            ProbeKind::Readiness => container.readiness_probe.as_ref(),
        }
    }
}

/// One probe execution's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    /// Success or failure.
    pub success: bool,
    /// The failure output, as the Unhealthy event quotes it.
    pub output: String,
}

fn resolve_port(port: &IntOrString, container: &Container) -> Option<i32> {
    match port {
        IntOrString::Int(p) => Some(*p),
        IntOrString::String(name) => match name.parse::<i32>() {
            Ok(p) => Some(p),
            Err(_) => container.ports.iter().flatten().find(|p| p.name.as_deref() == Some(name.as_str())).map(|p| p.container_port),
        },
    }
}

/// What a probe runs against.
pub struct ProbeTarget<'a> {
    /// The container (exec probes run in it).
    pub container_id: &'a str,
    /// The pod's sandbox (network probes connect to its network namespace).
    pub sandbox_id: &'a str,
    /// The pod IP, for messages.
    pub pod_ip: &'a str,
    /// Whether the fabric routes the node's packets to the pod IP: when it does not, the
    /// network probes (httpGet, tcpSocket, grpc) fail as a dial with no route does.
    pub routed: bool,
}

/// The User-Agent of the kubelet's HTTP probes (probe/http/request.go: `kube-probe/<major>.<minor>`).
pub const PROBE_USER_AGENT: &str = "kube-probe/1.34";

/// The HTTP request an httpGet probe sends (probe/http/request.go NewRequestForHTTPGetAction:
/// User-Agent and Accept defaults, the probe's headers override them).
pub fn probe_request(path: &str, host: &str, port: i32, headers: &[(String, String)]) -> Vec<u8> {
    let mut fields: Vec<(String, String)> =
        vec![("Host".into(), format!("{host}:{port}")), ("User-Agent".into(), PROBE_USER_AGENT.into()), ("Accept".into(), "*/*".into())];
    for (name, value) in headers {
        match fields.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some(field) => field.1 = value.clone(),
            None => fields.push((name.clone(), value.clone())),
        }
    }
    let mut request = format!("GET {path} HTTP/1.1\r\n");
    for (name, value) in fields {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    request.into_bytes()
}

/// The status code of an HTTP response, if it is one.
pub fn status_code(response: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(&response[..response.len().min(64)]).ok()?;
    let mut words = text.split_whitespace();
    words.next().filter(|w| w.starts_with("HTTP/"))?;
    words.next()?.parse().ok()
}

fn success() -> ProbeResult {
    ProbeResult { success: true, output: String::new() }
}

fn failure(output: String) -> ProbeResult {
    ProbeResult { success: false, output }
}

/// Runs a probe of a running container, with the prober's result and message shapes
/// (pkg/probe/exec, http, tcp, grpc).
pub fn run_probe(probe: &Probe, container: &Container, target: &ProbeTarget, runtime: &mut ContainerRuntime, now: Millis) -> ProbeResult {
    let pod_ip = target.pod_ip;
    let timeout_ms = probe.timeout_seconds.unwrap_or(1).max(1) as u64 * 1000;
    if let Some(exec) = probe.exec.as_ref() {
        let command = exec.command.clone().unwrap_or_default();
        let output = runtime.exec_sync(target.container_id, &command, now);
        if output.elapsed_ms > timeout_ms {
            return failure(format!("command {:?} timed out", command.join(" ")));
        }
        let mut data = output.stdout;
        data.extend_from_slice(&output.stderr);
        let text = String::from_utf8_lossy(&data).trim_end().to_string();
        return if output.code == 0 { success() } else { failure(text) };
    }
    let network_probe = probe.http_get.is_some() || probe.tcp_socket.is_some() || probe.grpc.is_some();
    if network_probe && !target.routed {
        return failure(format!("dial tcp {pod_ip}: connect: no route to host"));
    }
    let connect = |runtime: &mut ContainerRuntime, port: i32, data: Vec<u8>| {
        let incoming = Incoming { src: String::new(), src_port: 0, port: port.clamp(0, 65_535) as u16, udp: false, data };
        runtime.serve(target.sandbox_id, &incoming, now)
    };
    if let Some(http) = probe.http_get.as_ref() {
        let Some(port) = resolve_port(&http.port, container) else {
            return failure(format!("unable to resolve named port {:?}", http.port));
        };
        let path = http.path.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| "/".into());
        let scheme = http.scheme.clone().unwrap_or_else(|| "HTTP".into()).to_ascii_lowercase();
        let host = http.host.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| pod_ip.to_string());
        let url = format!("{scheme}://{host}:{port}{path}");
        let headers: Vec<(String, String)> = http.http_headers.iter().flatten().map(|h| (h.name.clone(), h.value.clone())).collect();
        return match connect(runtime, port, probe_request(&path, &host, port, &headers)) {
            None => failure(format!("Get {url:?}: dial tcp {host}:{port}: connect: connection refused")),
            Some(Outgoing::Reset) => failure(format!("Get {url:?}: read tcp {host}:{port}: read: connection reset by peer")),
            Some(Outgoing::Hang) => failure(format!("Get {url:?}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)")),
            Some(Outgoing::Reply(bytes)) => match status_code(&bytes) {
                Some(code) if (200..400).contains(&code) => success(),
                Some(code) => failure(format!("HTTP probe failed with statuscode: {code}")),
                None => failure(format!("Get {url:?}: net/http: HTTP/1.x transport connection broken: malformed HTTP response")),
            },
        };
    }
    if let Some(tcp) = probe.tcp_socket.as_ref() {
        let Some(port) = resolve_port(&tcp.port, container) else {
            return failure(format!("unable to resolve named port {:?}", tcp.port));
        };
        let host = tcp.host.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| pod_ip.to_string());
        let listening = runtime.container_status(target.container_id).is_ok_and(|_| runtime.listening(target.sandbox_id).contains(&(port as u16, false)));
        return if listening { success() } else { failure(format!("dial tcp {host}:{port}: connect: connection refused")) };
    }
    if let Some(grpc) = probe.grpc.as_ref() {
        let listening = runtime.listening(target.sandbox_id).contains(&(grpc.port as u16, false));
        return if listening {
            success()
        } else {
            failure(format!("timeout: failed to connect service \"{pod_ip}:{}\" within {}s: context deadline exceeded", grpc.port, timeout_ms / 1000))
        };
    }
    failure("probe has no handler".into())
}
