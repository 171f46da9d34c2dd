//! The probe handlers (exec, httpGet, tcpSocket, grpc) against the runtime model, with the
//! kubelet prober's result and message shapes (pkg/kubelet/prober).

use crate::cri::{FakeRuntime, RuntimeService};
use crate::process::Serving;
use kubesim_api::k8s_openapi::api::core::v1::{Container, Probe};
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::Millis;

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

/// Runs a probe of a running container.
pub fn run_probe(probe: &Probe, container: &Container, container_id: &str, runtime: &mut FakeRuntime, pod_ip: &str, now: Millis) -> ProbeResult {
    let Ok(state) = runtime.container_status(container_id) else {
        return ProbeResult { success: false, output: "container not found".into() };
    };
    let serving = state.config.program.serving;
    let started = state.started_at.unwrap_or(now);
    let refused = |port: i32, scheme: &str, path: &str| match scheme {
        "tcp" => format!("dial tcp {pod_ip}:{port}: connect: connection refused"),
        _ => format!("Get \"{}://{pod_ip}:{port}{path}\": dial tcp {pod_ip}:{port}: connect: connection refused", scheme.to_ascii_lowercase()),
    };
    if let Some(exec) = probe.exec.as_ref() {
        let command = exec.command.clone().unwrap_or_default();
        return match runtime.exec_sync(container_id, &command, now) {
            Ok((_, 0)) => ProbeResult { success: true, output: String::new() },
            Ok((output, code)) => ProbeResult {
                success: false,
                output: if output.trim().is_empty() { format!("command {:?} exited with {code}", command.join(" ")) } else { output.trim_end().to_string() },
            },
            Err(e) => ProbeResult { success: false, output: e.0 },
        };
    }
    if let Some(http) = probe.http_get.as_ref() {
        let Some(port) = resolve_port(&http.port, container) else {
            return ProbeResult { success: false, output: format!("unable to resolve named port {:?}", http.port) };
        };
        let path = http.path.clone().unwrap_or_else(|| "/".into());
        let scheme = http.scheme.clone().unwrap_or_else(|| "HTTP".into());
        return match serving {
            Serving::No => ProbeResult { success: false, output: refused(port, &scheme, &path) },
            Serving::Yes { unhealthy_after_ms: Some(after) } if now.saturating_sub(started) >= after => {
                ProbeResult { success: false, output: "HTTP probe failed with statuscode: 500".into() }
            }
            Serving::Yes { .. } => ProbeResult { success: true, output: String::new() },
        };
    }
    if let Some(tcp) = probe.tcp_socket.as_ref() {
        let Some(port) = resolve_port(&tcp.port, container) else {
            return ProbeResult { success: false, output: format!("unable to resolve named port {:?}", tcp.port) };
        };
        return match serving {
            Serving::No => ProbeResult { success: false, output: refused(port, "tcp", "") },
            Serving::Yes { .. } => ProbeResult { success: true, output: String::new() },
        };
    }
    if let Some(grpc) = probe.grpc.as_ref() {
        return match serving {
            Serving::No => ProbeResult {
                success: false,
                output: format!("timeout: failed to connect service \"{pod_ip}:{}\" within 1s: context deadline exceeded", grpc.port),
            },
            Serving::Yes { .. } => ProbeResult { success: true, output: String::new() },
        };
    }
    ProbeResult { success: false, output: "probe has no handler".into() }
}
