//! The bridge from the world to the kubectl command layer (`kubesim-kubectl`): commands run as
//! actor "kubectl" at the world's current virtual time; logs and exec reach the containers
//! through their node's host (as the API server proxies them to the node's kubelet).

use crate::world::World;
use kubesim_kubectl::ClusterView;
use std::collections::BTreeMap;

/// What kubectl sees of the cluster beyond the API server: files registered with the world,
/// container logs and exec through the node's host.
struct WorldView<'a> {
    files: &'a BTreeMap<String, String>,
    hosts: &'a mut BTreeMap<String, kubesim_host::Host>,
    fabric: &'a kubesim_runtime::Fabric,
    pods: BTreeMap<(String, String), (String, String, Vec<String>)>,
    now: kubesim_api::Millis,
}

impl WorldView<'_> {
    fn locate(&self, namespace: &str, pod: &str, container: Option<&str>) -> Result<(String, String, String), String> {
        let (node, uid, containers) = self.pods.get(&(namespace.to_string(), pod.to_string())).ok_or_else(|| format!("pods {pod:?} not found"))?;
        let container = match container {
            Some(c) => c.to_string(),
            None => containers.first().cloned().unwrap_or_default(),
        };
        if node.is_empty() {
            return Err(format!("pod {pod} does not have a host assigned"));
        }
        Ok((node.clone(), uid.clone(), container))
    }
}

impl ClusterView for WorldView<'_> {
    fn read_file(&self, path: &str) -> Result<String, String> {
        self.files.get(path).cloned().ok_or_else(|| format!("the path \"{path}\" does not exist"))
    }
    fn logs(&self, namespace: &str, pod: &str, container: Option<&str>, previous: bool) -> Result<String, String> {
        let (node, uid, container) = self.locate(namespace, pod, container)?;
        let host = self.hosts.get(&node).ok_or_else(|| format!("node {node:?} has no kubelet"))?;
        host.cri.logs(&uid, &container, previous)
    }
    fn exec(&mut self, namespace: &str, pod: &str, container: Option<&str>, command: &[String]) -> Result<(String, i32), String> {
        let (node, uid, container) = self.locate(namespace, pod, container)?;
        let now = self.now;
        let output = exec_in_pod(self.hosts, self.fabric, &node, &uid, &container, command, Vec::new(), now)?;
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Ok((text, output.code))
    }
    fn usage(&self, namespace: &str, pod: &str) -> Option<(i64, i64)> {
        let (node, uid, _) = self.locate(namespace, pod, None).ok()?;
        self.hosts.get(&node)?.cri.pod_usage(&uid, self.now)
    }
}

/// Runs `kubectl <args>` against the world as actor "kubectl": (stdout, stderr, exit code).
pub fn kubectl(world: &mut World, args: &str) -> (String, String, i32) {
    let pods: BTreeMap<(String, String), (String, String, Vec<String>)> = world
        .api()
        .store()
        .list(("", "pods"), None)
        .filter_map(|o| o.as_pod())
        .map(|p| {
            let spec = p.spec.clone().unwrap_or_default();
            (
                (p.metadata.namespace.clone().unwrap_or_default(), p.metadata.name.clone().unwrap_or_default()),
                (
                    spec.node_name.clone().unwrap_or_default(),
                    p.metadata.uid.clone().unwrap_or_default(),
                    spec.containers.iter().map(|c| c.name.clone()).collect(),
                ),
            )
        })
        .collect();
    let output = world.with_kubectl(|api, req, files, hosts, fabric| {
        let mut view = WorldView { files, hosts, fabric, pods, now: req.now };
        kubesim_kubectl::run_line(args, api, req, &mut view)
    });
    (output.stdout, output.stderr, output.exit_code)
}

/// Runs a command in a pod's container as the API server's exec subresource does (through the
/// node's kubelet to the runtime's ExecSync), its network calls routed over the fabric. The
/// errors are the API server's and kubelet's words.
#[allow(clippy::too_many_arguments)]
pub fn exec_in_pod(
    hosts: &mut BTreeMap<String, kubesim_host::Host>,
    fabric: &kubesim_runtime::Fabric,
    node: &str,
    pod_uid: &str,
    container: &str,
    argv: &[String],
    stdin: Vec<u8>,
    now: kubesim_api::Millis,
) -> Result<kubesim_host::cri::ExecOutput, String> {
    let host = hosts.get(node).ok_or_else(|| format!("node {node:?} has no kubelet"))?;
    if !host.powered {
        return Err(format!("error dialing backend: dial tcp {}:10250: connect: no route to host", host.ip()));
    }
    let id = host.cri.latest_attempt(pod_uid, container).ok_or_else(|| format!("container {container:?} in pod is waiting to start: ContainerCreating"))?;
    let running = host.cri.container_status(&id).is_ok_and(|c| c.state == kubesim_host::cri::ContainerState::Running);
    if !running {
        return Err(format!("container {container:?} is not running"));
    }
    kubesim_runtime::net::exec(hosts, fabric, node, &id, argv, stdin, now).ok_or_else(|| format!("node {node:?} has no kubelet"))
}
