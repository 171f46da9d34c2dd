//! Pod facts derived the one way upstream derives them, shared by every component that needs
//! them: the kubectl printers and describers, the UI's views, kubelet admission, the API
//! server's admission and the controllers.
//!
//! - [`print_pod`]: the READY, STATUS and RESTARTS cells of `kubectl get pods`
//!   (kubectl `pkg/printers/internalversion/printers.go` printPod).
//! - [`qos_class`]: the QoS class (`pkg/apis/core/v1/helper/qos` ComputePodQOS).
//! - Requests: [`crate::resources::pod_requests`] (`component-helpers/resource` PodRequests).

use crate::quantity::parse_milli;
use crate::time::millis_of;
use crate::Millis;
use k8s_openapi::api::core::v1::{Pod, Volume};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use std::collections::BTreeMap;

/// What `kubectl get pods` prints about a pod's containers: printPod's derived cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodPrint {
    /// Ready containers (regular plus started-and-ready sidecars).
    pub ready: usize,
    /// Containers counted (regular plus restartable init containers).
    pub total: usize,
    /// The STATUS word (`Running`, `Init:0/2`, `CrashLoopBackOff`, `Terminating`, ...).
    pub status: String,
    /// The RESTARTS count.
    pub restarts: i64,
    /// When the last counted restart's container terminated (for "(5s ago)").
    pub last_restart_ms: Option<Millis>,
}

/// The pod's spec, or the empty spec when it has none, without copying it (hot paths read
/// the spec of every pod they touch; a clone of a `PodSpec` is a few kilobytes of allocations).
pub fn spec(pod: &Pod) -> &k8s_openapi::api::core::v1::PodSpec {
    static EMPTY: std::sync::OnceLock<k8s_openapi::api::core::v1::PodSpec> = std::sync::OnceLock::new();
    pod.spec.as_ref().unwrap_or_else(|| EMPTY.get_or_init(Default::default))
}

/// printPod: the READY, STATUS and RESTARTS cells, derived as upstream derives them.
pub fn print_pod(pod: &Pod) -> PodPrint {
    // Borrowed, never cloned: the UI derives every pod's row on every refresh.
    let no_spec = k8s_openapi::api::core::v1::PodSpec::default();
    let no_status = k8s_openapi::api::core::v1::PodStatus::default();
    let spec = pod.spec.as_ref().unwrap_or(&no_spec);
    let status = pod.status.as_ref().unwrap_or(&no_status);
    let mut restarts: i64 = 0;
    let mut restartable_restarts: i64 = 0;
    let mut total = spec.containers.len();
    let mut ready = 0;
    let mut last_restart: Option<Millis> = None;
    let mut last_restartable_restart: Option<Millis> = None;
    let phase = status.phase.clone().unwrap_or_default();
    let mut reason = phase.clone();
    if let Some(r) = status.reason.as_deref().filter(|r| !r.is_empty()) {
        reason = r.to_string();
    }
    for c in status.conditions.iter().flatten() {
        if c.type_ == "PodScheduled" && c.reason.as_deref() == Some("SchedulingGated") {
            reason = "SchedulingGated".into();
        }
    }
    let init_containers: &[k8s_openapi::api::core::v1::Container] = spec.init_containers.as_deref().unwrap_or(&[]);
    let restartable = |name: &str| init_containers.iter().any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"));
    total += init_containers.iter().filter(|c| c.restart_policy.as_deref() == Some("Always")).count();
    let later = |a: Option<Millis>, b: Option<&Time>| -> Option<Millis> {
        match (a, b.map(millis_of)) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        }
    };
    let mut initializing = false;
    for (i, c) in status.init_container_statuses.iter().flatten().enumerate() {
        restarts += c.restart_count as i64;
        let last_term = c.last_state.as_ref().and_then(|s| s.terminated.as_ref());
        if let Some(t) = last_term {
            last_restart = later(last_restart, t.finished_at.as_ref());
        }
        if restartable(&c.name) {
            restartable_restarts += c.restart_count as i64;
            if let Some(t) = last_term {
                last_restartable_restart = later(last_restartable_restart, t.finished_at.as_ref());
            }
        }
        let no_state = k8s_openapi::api::core::v1::ContainerState::default();
        let state = c.state.as_ref().unwrap_or(&no_state);
        if state.terminated.as_ref().is_some_and(|t| t.exit_code == 0) {
            continue;
        }
        if restartable(&c.name) && c.started == Some(true) {
            if c.ready {
                ready += 1;
            }
            continue;
        }
        if let Some(t) = &state.terminated {
            reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                Some(r) => format!("Init:{r}"),
                None if t.signal.unwrap_or(0) != 0 => format!("Init:Signal:{}", t.signal.unwrap_or(0)),
                None => format!("Init:ExitCode:{}", t.exit_code),
            };
        } else if let Some(r) = state.waiting.as_ref().and_then(|w| w.reason.as_deref()).filter(|r| !r.is_empty() && *r != "PodInitializing") {
            reason = format!("Init:{r}");
        } else {
            reason = format!("Init:{i}/{}", init_containers.len());
        }
        initializing = true;
        break;
    }
    let initialized = status.conditions.iter().flatten().any(|c| c.type_ == "Initialized" && c.status == "True");
    if !initializing || initialized {
        restarts = restartable_restarts;
        last_restart = last_restartable_restart;
        let mut has_running = false;
        for c in status.container_statuses.iter().flatten().rev() {
            restarts += c.restart_count as i64;
            if let Some(t) = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) {
                last_restart = later(last_restart, t.finished_at.as_ref());
            }
            let no_state = k8s_openapi::api::core::v1::ContainerState::default();
            let state = c.state.as_ref().unwrap_or(&no_state);
            if let Some(r) = state.waiting.as_ref().and_then(|w| w.reason.clone()).filter(|r| !r.is_empty()) {
                reason = r;
            } else if let Some(t) = &state.terminated {
                reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                    Some(r) => r.to_string(),
                    None if t.signal.unwrap_or(0) != 0 => format!("Signal:{}", t.signal.unwrap_or(0)),
                    None => format!("ExitCode:{}", t.exit_code),
                };
            } else if c.ready && state.running.is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = status.conditions.iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True");
            reason = if pod_ready { "Running".into() } else { "NotReady".into() };
        }
    }
    if pod.metadata.deletion_timestamp.is_some() && status.reason.as_deref() == Some("NodeLost") {
        reason = "Unknown".into();
    } else if pod.metadata.deletion_timestamp.is_some() && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".into();
    }
    PodPrint { ready, total, status: reason, restarts, last_restart_ms: last_restart }
}

/// The STATUS word alone (see [`print_pod`]).
pub fn status_word(pod: &Pod) -> String {
    print_pod(pod).status
}

/// The QoS class: `Guaranteed`, `Burstable` or `BestEffort` (ComputePodQOS, v1.34, with
/// PodLevelResources enabled as it is by default in v1.34: pod-level cpu/memory requests and
/// limits decide when the pod sets them).
///
/// Requests and limits are summed over every container (regular and init); the pod is
/// Guaranteed when every container limits both cpu and memory and the summed requests equal
/// the summed limits. A limit without a request counts as its own request, as the API server's
/// defaulting (requests default to limits) makes it by the time the class is computed.
pub fn qos_class(pod: &Pod) -> &'static str {
    let Some(spec) = pod.spec.as_ref() else { return "BestEffort" };
    let positive = |list: Option<&BTreeMap<String, Quantity>>| -> BTreeMap<&'static str, i128> {
        let mut out = BTreeMap::new();
        for name in ["cpu", "memory"] {
            if let Some(v) = list.and_then(|l| l.get(name)).and_then(|q| parse_milli(&q.0).ok()).filter(|v| *v > 0) {
                out.insert(name, v);
            }
        }
        out
    };
    let mut requests: BTreeMap<&str, i128> = BTreeMap::new();
    let mut limits: BTreeMap<&str, i128> = BTreeMap::new();
    let mut guaranteed = true;
    let pod_level = spec.resources.as_ref().filter(|r| {
        let has = |l: &Option<BTreeMap<String, Quantity>>| l.as_ref().is_some_and(|l| l.contains_key("cpu") || l.contains_key("memory"));
        has(&r.requests) || has(&r.limits)
    });
    match pod_level {
        Some(resources) => {
            let limit = positive(resources.limits.as_ref());
            let mut request = positive(resources.requests.as_ref());
            for (name, value) in &limit {
                request.entry(name).or_insert(*value);
            }
            if !(limit.contains_key("cpu") && limit.contains_key("memory")) {
                guaranteed = false;
            }
            requests = request;
            limits = limit;
        }
        None => {
            for container in spec.containers.iter().chain(spec.init_containers.iter().flatten()) {
                let resources = container.resources.as_ref();
                let limit = positive(resources.and_then(|r| r.limits.as_ref()));
                let mut request = positive(resources.and_then(|r| r.requests.as_ref()));
                for (name, value) in &limit {
                    request.entry(name).or_insert(*value);
                }
                for (name, value) in request {
                    *requests.entry(name).or_insert(0) += value;
                }
                for (name, value) in &limit {
                    *limits.entry(name).or_insert(0) += value;
                }
                if !(limit.contains_key("cpu") && limit.contains_key("memory")) {
                    guaranteed = false;
                }
            }
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed && requests.iter().all(|(name, value)| limits.get(name) == Some(value)) && requests.len() == limits.len() {
        return "Guaranteed";
    }
    "Burstable"
}

/// The name of a generic ephemeral volume's claim (ephemeral.VolumeClaimName):
/// `<pod>-<volume>`.
pub fn ephemeral_claim_name(pod: &str, volume: &str) -> String {
    format!("{pod}-{volume}")
}

/// The claim a pod volume uses, with whether it is a generic ephemeral volume's: a
/// persistentVolumeClaim's claimName, or [`ephemeral_claim_name`]; `None` for other volumes.
pub fn volume_claim(pod_name: &str, volume: &Volume) -> Option<(String, bool)> {
    match (&volume.persistent_volume_claim, &volume.ephemeral) {
        (Some(c), _) => Some((c.claim_name.clone(), false)),
        (None, Some(_)) => Some((ephemeral_claim_name(pod_name, &volume.name), true)),
        _ => None,
    }
}

/// Whether any of a pod's volumes uses a claim ([`claim_names`] is not empty), without
/// naming them.
pub fn uses_claims(pod: &Pod) -> bool {
    pod.spec.as_ref().and_then(|s| s.volumes.as_ref()).into_iter().flatten().any(|v| v.persistent_volume_claim.is_some() || v.ephemeral.is_some())
}

/// Every claim a pod's volumes use, in volume order.
pub fn claim_names(pod: &Pod) -> Vec<String> {
    let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
    pod.spec.as_ref().and_then(|s| s.volumes.as_ref()).into_iter().flatten().filter_map(|v| volume_claim(pod_name, v)).map(|(c, _)| c).collect()
}

/// An ephemeral container as the container it runs as (kubelet's
/// `ephemeralContainerCommon` is a `Container`'s fields minus ports, probes, lifecycle and
/// resources, which validation forbids on ephemeral containers).
pub fn ephemeral_as_container(ec: &k8s_openapi::api::core::v1::EphemeralContainer) -> k8s_openapi::api::core::v1::Container {
    k8s_openapi::api::core::v1::Container {
        name: ec.name.clone(),
        image: ec.image.clone(),
        command: ec.command.clone(),
        args: ec.args.clone(),
        working_dir: ec.working_dir.clone(),
        env: ec.env.clone(),
        env_from: ec.env_from.clone(),
        volume_mounts: ec.volume_mounts.clone(),
        volume_devices: ec.volume_devices.clone(),
        image_pull_policy: ec.image_pull_policy.clone(),
        security_context: ec.security_context.clone(),
        stdin: ec.stdin,
        stdin_once: ec.stdin_once,
        tty: ec.tty,
        termination_message_path: ec.termination_message_path.clone(),
        termination_message_policy: ec.termination_message_policy.clone(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodSpec, ResourceRequirements};

    fn container(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
        let list = |pairs: &[(&str, &str)]| -> Option<BTreeMap<String, Quantity>> {
            (!pairs.is_empty()).then(|| pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect())
        };
        Container {
            name: "c".into(),
            resources: Some(ResourceRequirements { requests: list(requests), limits: list(limits), ..Default::default() }),
            ..Default::default()
        }
    }

    fn pod(containers: Vec<Container>, init: Vec<Container>) -> Pod {
        Pod { spec: Some(PodSpec { containers, init_containers: Some(init).filter(|i| !i.is_empty()), ..Default::default() }), ..Default::default() }
    }

    // Mirrors pkg/apis/core/v1/helper/qos/qos_test.go TestComputePodQOS (the cpu/memory cases).
    #[test]
    fn qos_classes_follow_compute_pod_qos() {
        let cases: Vec<(&str, Pod, &str)> = vec![
            ("no requests or limits", pod(vec![container(&[], &[])], vec![]), "BestEffort"),
            ("guaranteed", pod(vec![container(&[("cpu", "100m"), ("memory", "1Gi")], &[("cpu", "100m"), ("memory", "1Gi")])], vec![]), "Guaranteed"),
            ("limits only: requests default to limits", pod(vec![container(&[], &[("cpu", "100m"), ("memory", "100Mi")])], vec![]), "Guaranteed"),
            ("cpu request only", pod(vec![container(&[("cpu", "100m")], &[])], vec![]), "Burstable"),
            ("request below limit", pod(vec![container(&[("cpu", "100m"), ("memory", "1Gi")], &[("cpu", "200m"), ("memory", "1Gi")])], vec![]), "Burstable"),
            (
                "one best-effort container makes the pod burstable",
                pod(vec![container(&[("cpu", "1"), ("memory", "1Gi")], &[("cpu", "1"), ("memory", "1Gi")]), container(&[], &[])], vec![]),
                "Burstable",
            ),
            (
                "an init container counts",
                pod(vec![container(&[("cpu", "1"), ("memory", "1Gi")], &[("cpu", "1"), ("memory", "1Gi")])], vec![container(&[("cpu", "1")], &[])]),
                "Burstable",
            ),
            ("zero quantities are ignored", pod(vec![container(&[("cpu", "0")], &[("memory", "0")])], vec![]), "BestEffort"),
            ("extended resources do not count", pod(vec![container(&[("nvidia.com/gpu", "1")], &[("nvidia.com/gpu", "1")])], vec![]), "BestEffort"),
        ];
        for (name, pod, want) in cases {
            assert_eq!(qos_class(&pod), want, "{name}");
        }
    }
}
