//! `kubectl port-forward TYPE/NAME [LOCAL:]REMOTE...`: the workstation's local ports lead into
//! a pod's network namespace (the kubelet's streaming port-forward: a connection to
//! `localhost:REMOTE` inside the pod), for as long as the command runs — in a second terminal
//! ([`crate::world::World::start_background`], or a command line ending in ` &`). kubectl picks
//! the pod as `AttachablePodForObject` does (a pod by name; for a Deployment, ReplicaSet,
//! StatefulSet or Service the first running pod its selector matches) and translates a
//! Service's port to the pod's target port (`translateServicePortToTargetPort`).

use kubesim_api::object::Object;
use kubesim_apiserver::ApiServer;
use std::collections::BTreeMap;

/// One forwarded local port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forward {
    /// The pod's node.
    pub node: String,
    /// The pod's address.
    pub pod_ip: String,
    /// The port inside the pod.
    pub port: u16,
}

/// What `kubectl port-forward` resolved: the forwards by local port and what it prints.
#[derive(Clone, Debug)]
pub struct Started {
    /// Local port → forward.
    pub forwards: BTreeMap<u16, Forward>,
    /// `Forwarding from 127.0.0.1:7000 -> 6379` lines.
    pub stdout: String,
}

/// Whether a command line is `kubectl port-forward ...`.
pub fn is_port_forward(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next() == Some("kubectl") && words.next() == Some("port-forward")
}

/// Resolves `kubectl port-forward ARGS` (the words after `port-forward`) against the API.
pub fn start(api: &ApiServer, args: &[String], default_namespace: &str) -> Result<Started, String> {
    let mut namespace = default_namespace.to_string();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "-n" | "--namespace" => {
                namespace = args.get(i + 1).cloned().unwrap_or_default();
                i += 1;
            }
            "--address" | "--pod-running-timeout" => i += 1,
            _ if a.starts_with("--namespace=") => namespace = a["--namespace=".len()..].to_string(),
            _ if a.starts_with("--") => {}
            _ => positional.push(a.clone()),
        }
        i += 1;
    }
    let Some(target) = positional.first() else {
        return Err("error: TYPE/NAME and list of ports are required for port-forward\nSee 'kubectl port-forward -h' for help and examples".into());
    };
    if positional.len() < 2 {
        return Err("error: TYPE/NAME and list of ports are required for port-forward\nSee 'kubectl port-forward -h' for help and examples".into());
    }
    let (kind, name) = match target.split_once('/') {
        Some((k, n)) => (k.to_ascii_lowercase(), n.to_string()),
        None => ("pod".to_string(), target.clone()),
    };
    let (pod, service) = resolve_pod(api, &kind, &name, &namespace)?;
    let Object::Pod(p) = pod.as_ref() else { return Err("error: not a pod".into()) };
    let phase = p.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
    if phase != "Running" {
        return Err(format!("error: unable to forward port because pod is not running. Current status={phase}"));
    }
    let pod_ip = p.status.as_ref().and_then(|s| s.pod_ip.clone()).unwrap_or_default();
    let node = p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
    let mut forwards = BTreeMap::new();
    let mut stdout = String::new();
    for spec in &positional[1..] {
        let (local, remote) = match spec.split_once(':') {
            Some((l, r)) => (l.to_string(), r.to_string()),
            None => (spec.clone(), spec.clone()),
        };
        let remote_port = match &service {
            Some(svc) => service_target_port(svc, p, &remote)?,
            None => remote.parse::<u16>().map_err(|_| format!("error: Error parsing remote port number: {remote:?}"))?,
        };
        // An empty local port picks a free one (kubectl asks the OS; kubesim counts from 40000).
        let local_port = if local.is_empty() {
            (40_000..).find(|p| !forwards.contains_key(p)).unwrap_or(40_000)
        } else {
            local.parse::<u16>().map_err(|_| format!("error: Error parsing local port {local:?}"))?
        };
        stdout.push_str(&format!("Forwarding from 127.0.0.1:{local_port} -> {remote_port}\nForwarding from [::1]:{local_port} -> {remote_port}\n"));
        forwards.insert(local_port, Forward { node: node.clone(), pod_ip: pod_ip.clone(), port: remote_port });
    }
    Ok(Started { forwards, stdout })
}

/// The pod a port-forward target names, and the Service when it is one.
fn resolve_pod(api: &ApiServer, kind: &str, name: &str, namespace: &str) -> Result<(std::sync::Arc<Object>, Option<std::sync::Arc<Object>>), String> {
    let (resource, selector_path): ((&str, &str), &str) = match kind {
        "pod" | "pods" | "po" => {
            return api
                .lookup(("", "pods"), namespace, name)
                .cloned()
                .map(|p| (p, None))
                .ok_or_else(|| format!("Error from server (NotFound): pods {name:?} not found"));
        }
        "service" | "services" | "svc" => (("", "services"), "/spec/selector"),
        "deployment" | "deployments" | "deploy" => (("apps", "deployments"), "/spec/selector/matchLabels"),
        "replicaset" | "replicasets" | "rs" => (("apps", "replicasets"), "/spec/selector/matchLabels"),
        "statefulset" | "statefulsets" | "sts" => (("apps", "statefulsets"), "/spec/selector/matchLabels"),
        other => return Err(format!("error: cannot attach to *{other}: selector for {other} not implemented")),
    };
    let object = api.lookup(resource, namespace, name).cloned().ok_or_else(|| format!("Error from server (NotFound): {} {name:?} not found", resource.1))?;
    let selector: BTreeMap<String, String> = object.to_json().pointer(selector_path).and_then(|s| serde_json::from_value(s.clone()).ok()).unwrap_or_default();
    if selector.is_empty() {
        return Err(format!("error: cannot attach to {kind}/{name}: the {kind} has no selector"));
    }
    let mut pods: Vec<std::sync::Arc<Object>> = api
        .store()
        .list(("", "pods"), Some(namespace))
        .filter(|p| p.metadata().deletion_timestamp.is_none())
        .filter(|p| p.metadata().labels.as_ref().is_some_and(|l| selector.iter().all(|(k, v)| l.get(k) == Some(v))))
        .cloned()
        .collect();
    // GetFirstPod: active pods first (running before pending), then the oldest.
    let rank = |p: &Object| match p.as_pod().and_then(|p| p.status.as_ref()).and_then(|s| s.phase.as_deref()) {
        Some("Running") => 0,
        Some("Pending") => 1,
        _ => 2,
    };
    kubesim_api::sort::sort_by_key(&mut pods, |p| {
        (rank(p), p.metadata().creation_timestamp.as_ref().map(|t| t.0.to_string()).unwrap_or_default(), p.name().to_string())
    });
    let pod = pods.into_iter().next().ok_or_else(|| format!("error: no pods found for {kind}/{name}"))?;
    Ok((pod, (resource.1 == "services").then_some(object)))
}

/// translateServicePortToTargetPort: a Service port (number or name) becomes the pod's port —
/// the targetPort number, or the container port its name names.
fn service_target_port(service: &Object, pod: &kubesim_api::k8s_openapi::api::core::v1::Pod, remote: &str) -> Result<u16, String> {
    use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let Object::Service(svc) = service else { return Err("error: not a service".into()) };
    let ports = svc.spec.as_ref().and_then(|s| s.ports.clone()).unwrap_or_default();
    let port = ports
        .iter()
        .find(|p| remote.parse::<i32>().ok() == Some(p.port) || p.name.as_deref() == Some(remote))
        .ok_or_else(|| format!("error: Service {} does not have a service port {remote}", svc.metadata.name.clone().unwrap_or_default()))?;
    match &port.target_port {
        None => Ok(port.port as u16),
        Some(IntOrString::Int(n)) => Ok(*n as u16),
        Some(IntOrString::String(name)) => pod
            .spec
            .iter()
            .flat_map(|s| s.containers.iter())
            .flat_map(|c| c.ports.iter().flatten())
            .find(|p| p.name.as_deref() == Some(name.as_str()))
            .map(|p| p.container_port as u16)
            .ok_or_else(|| format!("error: Pod '{}' does not have a named port '{name}'", pod.metadata.name.clone().unwrap_or_default())),
    }
}
