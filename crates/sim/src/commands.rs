//! The bridge from the world to the kubectl command layer (`kubesim-kubectl`): commands run as
//! actor "kubectl" at the world's current virtual time; logs and exec reach the containers
//! through their node's host (as the API server proxies them to the node's kubelet).

use crate::world::World;
use kubesim_kubectl::ClusterView;
use kubesim_kubectl::PodLogOptions;
use std::collections::BTreeMap;

/// What kubectl sees of the cluster beyond the API server: files registered with the world,
/// container logs and exec through the node's host.
struct WorldView<'a, 'n> {
    files: &'a BTreeMap<String, String>,
    net: &'a mut kubesim_runtime::net::Net<'n>,
    pods: BTreeMap<(String, String), std::sync::Arc<kubesim_api::object::Object>>,
    now: kubesim_api::Millis,
}

impl WorldView<'_, '_> {
    fn locate(&self, namespace: &str, pod: &str, container: Option<&str>) -> Result<(String, String, String), String> {
        let object = self.pods.get(&(namespace.to_string(), pod.to_string())).ok_or_else(|| format!("pods {pod:?} not found"))?;
        let p = object.as_pod().expect("the index holds pods");
        let spec = p.spec.as_ref();
        let container = match container {
            Some(c) => c.to_string(),
            None => spec.and_then(|s| s.containers.first()).map(|c| c.name.clone()).unwrap_or_default(),
        };
        let node = spec.and_then(|s| s.node_name.clone()).unwrap_or_default();
        if node.is_empty() {
            return Err(format!("pod {pod} does not have a host assigned"));
        }
        Ok((node, p.metadata.uid.clone().unwrap_or_default(), container))
    }
}

/// The pods by (namespace, name), for logs and exec to find their node and statuses.
fn pod_index(world: &World) -> BTreeMap<(String, String), std::sync::Arc<kubesim_api::object::Object>> {
    world.api().store().list(("", "pods"), None).map(|o| ((o.namespace().to_string(), o.name().to_string()), o.clone())).collect()
}

impl ClusterView for WorldView<'_, '_> {
    fn read_file(&self, path: &str) -> Result<String, String> {
        self.files.get(path).cloned().ok_or_else(|| format!("the path \"{path}\" does not exist"))
    }
    fn list_dir(&self, dir: &str) -> Option<Vec<String>> {
        kubesim_kubectl::list_dir_of(self.files.keys(), dir)
    }
    fn logs(&self, namespace: &str, pod: &str, container: Option<&str>, opts: &PodLogOptions) -> Result<String, String> {
        let (node, _, container) = self.locate(namespace, pod, container)?;
        let object = &self.pods[&(namespace.to_string(), pod.to_string())];
        let id = kubesim_kubelet::logs::validate_container_log_status(object.as_pod().expect("the index holds pods"), &container, opts.previous)?;
        let host = self.net.hosts.get(&node).ok_or_else(|| format!("node {node:?} has no kubelet"))?;
        Ok(kubesim_kubelet::logs::read_logs(host.cri.container_log_lines(&id)?, opts, self.now))
    }
    fn attached(&self, namespace: &str, pod: &str, container: Option<&str>) -> Result<String, String> {
        let (node, _, container) = self.locate(namespace, pod, container)?;
        let object = &self.pods[&(namespace.to_string(), pod.to_string())];
        let id = kubesim_kubelet::logs::validate_container_log_status(object.as_pod().expect("the index holds pods"), &container, false)?;
        let host = self.net.hosts.get(&node).ok_or_else(|| format!("node {node:?} has no kubelet"))?;
        host.cri.attached_output(&id)
    }
    fn exec(&mut self, namespace: &str, pod: &str, container: Option<&str>, command: &[String], tty: bool) -> Result<(String, i32), String> {
        let (node, uid, container) = self.locate(namespace, pod, container)?;
        let output = exec_in_pod(self.net, &node, &uid, &container, command, kubesim_host::cri::ExecIo { stdin: Vec::new(), tty })?;
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Ok((text, output.code))
    }
    fn usage(&self, namespace: &str, pod: &str) -> Option<(i64, i64)> {
        let (node, uid, _) = self.locate(namespace, pod, None).ok()?;
        self.net.hosts.get(&node)?.cri.pod_usage(&uid, self.now)
    }
}

/// Runs `kubectl <args>` against the world as actor "kubectl": (stdout, stderr, exit code).
/// A command that would go on (`get -w`, `rollout status`) ends at once.
pub fn kubectl(world: &mut World, args: &str) -> (String, String, i32) {
    let output = kubectl_output(world, args);
    (output.stdout, output.stderr, output.exit_code)
}

/// Runs `kubectl <args>` now: its output, with the [`kubesim_kubectl::Follow`] of a command
/// that goes on.
pub fn kubectl_output(world: &mut World, args: &str) -> kubesim_kubectl::Output {
    let pods = pod_index(world);
    world.with_kubectl(|api, req, files, net| {
        let mut view = WorldView { files, net, pods, now: req.now };
        let mut output = kubesim_kubectl::run_line(args, api, req, &mut view);
        if let Ok(argv) = split(args) {
            output.stderr.push_str(&apply_warnings(&argv, files));
        }
        output
    })
}

/// `apply`/`create`/`replace -f FILE`: the loader's warnings about unmodelled images and
/// commands in the files it read ([`crate::loader::command_warnings`]).
fn apply_warnings(argv: &[String], files: &BTreeMap<String, String>) -> String {
    let verb = argv.iter().map(String::as_str).filter(|a| *a != "kubectl").find(|a| !a.starts_with('-'));
    if !matches!(verb, Some("apply" | "create" | "replace")) {
        return String::new();
    }
    let mut out = String::new();
    for name in files_named(argv) {
        if let Some(text) = files.get(&name) {
            for warning in crate::loader::command_warnings(&crate::scenario::InputFile { name: name.clone(), text: text.clone() }) {
                out.push_str(&warning);
                out.push('\n');
            }
        }
    }
    out
}

/// The running container an exec into `pod_uid`'s `container` on `node` reaches, or the API
/// server's and kubelet's words for why there is none.
pub fn exec_target(hosts: &kubesim_host::Hosts, node: &str, pod_uid: &str, container: &str) -> Result<String, String> {
    let host = hosts.get(node).ok_or_else(|| format!("node {node:?} has no kubelet"))?;
    if !host.powered {
        return Err(format!("error dialing backend: dial tcp {}:10250: connect: no route to host", host.ip()));
    }
    let id = host.cri.latest_attempt(pod_uid, container).ok_or_else(|| format!("container {container:?} in pod is waiting to start: ContainerCreating"))?;
    let running = host.cri.container_status(&id).is_ok_and(|c| c.state == kubesim_host::cri::ContainerState::Running);
    if !running {
        return Err(format!("container {container:?} is not running"));
    }
    Ok(id)
}

/// Runs a command in a pod's container as the API server's exec subresource does (through the
/// node's kubelet to the runtime's ExecSync), its network calls routed over the fabric and
/// recorded in `net`.
pub fn exec_in_pod(
    net: &mut kubesim_runtime::net::Net,
    node: &str,
    pod_uid: &str,
    container: &str,
    argv: &[String],
    io: kubesim_host::cri::ExecIo,
) -> Result<kubesim_host::cri::ExecOutput, String> {
    let now = net.now;
    let id = exec_target(net.hosts, node, pod_uid, container)?;
    let output = kubesim_runtime::net::exec(net, node, &id, argv, io).ok_or_else(|| format!("node {node:?} has no kubelet"))?;
    if output.start_failed {
        // containerd's CRI exec: the process never started, so the API server answers with an
        // internal error naming the exec id (kubectl: `error: Internal error occurred: ...`,
        // exit 1) rather than an exit code.
        let mut exec_id = String::new();
        for round in 0u8..4 {
            let h = kubesim_api::hash::Fnv64::new().bytes(id.as_bytes()).bytes(&now.to_be_bytes()).bytes(argv.join(" ").as_bytes()).bytes(&[round]).finish();
            exec_id.push_str(&format!("{h:016x}"));
        }
        let why = String::from_utf8_lossy(&output.stderr).trim_end().to_string();
        return Err(format!(
            "Internal error occurred: error executing command in container: failed to exec in container: failed to start exec \"{exec_id}\": {why}"
        ));
    }
    Ok(output)
}

/// Runs kubectl with an argv exactly as given (no re-joining or re-splitting; a leading
/// `kubectl` word is dropped), as `kubesim kubectl ... -- ARGS` does: (stdout, stderr, exit code).
pub fn kubectl_argv(world: &mut World, argv: &[String]) -> (String, String, i32) {
    let argv: Vec<String> = match argv.first().map(String::as_str) {
        Some("kubectl") => argv[1..].to_vec(),
        _ => argv.to_vec(),
    };
    let pods = pod_index(world);
    let output = world.with_kubectl(|api, req, files, net| {
        let mut view = WorldView { files, net, pods, now: req.now };
        let mut output = kubesim_kubectl::run(&argv, api, req, &mut view);
        output.stderr.push_str(&apply_warnings(&argv, files));
        output
    });
    (output.stdout, output.stderr, output.exit_code)
}

/// Splits a command line as the `--at` commands are split (POSIX shell quoting).
pub fn split(line: &str) -> Result<Vec<String>, String> {
    kubesim_kubectl::split_command(line)
}

/// The local files a kubectl argv reads, for callers that must load them first: `-f`/
/// `--filename` (not `logs -f`), `--patch-file`, `--from-file` (`[key=]path`), `--from-env-file`,
/// and `-o go-template-file=`/`templatefile=`/`jsonpath-file=`/`custom-columns-file=` (or their
/// path in `--template`). Paths are returned once each, in order; `-` (stdin) included.
pub fn files_named(argv: &[String]) -> Vec<String> {
    let is_logs = argv.iter().filter(|a| !a.starts_with('-')).find(|a| *a != "kubectl").is_some_and(|a| a == "logs" || a == "log");
    let mut out: Vec<String> = Vec::new();
    let push = |p: &str, out: &mut Vec<String>| {
        if !p.is_empty() && !out.iter().any(|x| x == p) {
            out.push(p.to_string());
        }
    };
    let file_output = argv.iter().enumerate().any(|(i, a)| {
        let value = a
            .strip_prefix("--output=")
            .or_else(|| a.strip_prefix("-o").filter(|v| !v.is_empty() && !a.starts_with("--")))
            .map(|v| v.trim_start_matches('=').to_string())
            .or_else(|| (a == "-o" || a == "--output").then(|| argv.get(i + 1).cloned().unwrap_or_default()));
        value.is_some_and(|v| ["go-template-file", "templatefile", "jsonpath-file", "custom-columns-file"].iter().any(|f| v.starts_with(f)))
    });
    // `kubectl kustomize [DIR]` reads the directory (default `.`).
    let words: Vec<&String> = argv.iter().filter(|a| *a != "kubectl").collect();
    if words.first().is_some_and(|w| *w == "kustomize") {
        push(words.get(1).filter(|w| !w.starts_with('-')).map_or(".", |w| w.as_str()), &mut out);
    }
    let mut i = 0;
    while i < argv.len() {
        let a = argv[i].as_str();
        let next = argv.get(i + 1).map(String::as_str).unwrap_or("");
        let (flag, value, consumed) = if let Some((f, v)) = a.split_once('=').filter(|(f, _)| f.starts_with("--")) {
            (f.to_string(), v.to_string(), 1)
        } else if a == "-f" || a == "-k" || (a.starts_with("--") && !a.contains('=') && !kubesim_kubectl::is_bool_flag(a)) {
            (a.to_string(), next.to_string(), 2)
        } else if let Some(v) = a.strip_prefix("-f").filter(|v| !v.is_empty() && !a.starts_with("--")) {
            ("-f".to_string(), v.trim_start_matches('=').to_string(), 1)
        } else if let Some(v) = a.strip_prefix("-o").filter(|v| !v.is_empty() && !a.starts_with("--")) {
            ("--output".to_string(), v.trim_start_matches('=').to_string(), 1)
        } else if a == "-o" {
            ("--output".to_string(), next.to_string(), 2)
        } else {
            (String::new(), String::new(), 1)
        };
        match flag.as_str() {
            "-f" | "--filename" if !(is_logs && flag == "-f") => {
                for p in value.split(',') {
                    push(p, &mut out);
                }
            }
            "--patch-file" | "--from-env-file" | "-k" | "--kustomize" | "--cert" | "--key" | "--custom" => push(&value, &mut out),
            "--from-file" => push(value.split_once('=').map(|(_, p)| p).unwrap_or(&value), &mut out),
            "--template" if file_output => push(&value, &mut out),
            "--output" => {
                if let Some((kind, path)) = value.split_once('=') {
                    if ["go-template-file", "templatefile", "jsonpath-file", "custom-columns-file"].contains(&kind) {
                        push(path, &mut out);
                    }
                }
            }
            _ => {}
        }
        i += if flag.is_empty() { 1 } else { consumed.min(argv.len() - i).max(1) };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::files_named;

    fn v(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn finds_the_files_a_command_reads() {
        assert_eq!(files_named(&v(&["apply", "-f", "a.yaml", "--filename=b.yaml", "-fc.yaml"])), v(&["a.yaml", "b.yaml", "c.yaml"]));
        assert_eq!(files_named(&v(&["logs", "-f", "pod"])), Vec::<String>::new());
        assert_eq!(files_named(&v(&["patch", "deploy", "x", "--patch-file", "p.yaml"])), v(&["p.yaml"]));
        assert_eq!(files_named(&v(&["create", "configmap", "c", "--from-file=key=cfg.txt", "--from-env-file", "e.env"])), v(&["cfg.txt", "e.env"]));
        assert_eq!(files_named(&v(&["get", "pods", "-o", "go-template-file=t.tmpl"])), v(&["t.tmpl"]));
        assert_eq!(files_named(&v(&["get", "pods", "-o", "templatefile", "--template", "t.tmpl"])), v(&["t.tmpl"]));
        assert_eq!(files_named(&v(&["get", "pods", "--template", "{{.x}}"])), Vec::<String>::new());
        assert_eq!(files_named(&v(&["delete", "-f", "a.yaml,b.yaml"])), v(&["a.yaml", "b.yaml"]));
        // Boolean flags take no value word.
        assert_eq!(files_named(&v(&["label", "--local", "-f", "a.yaml", "x=y"])), v(&["a.yaml"]));
        assert_eq!(files_named(&v(&["apply", "-k", "dir"])), v(&["dir"]));
        assert_eq!(files_named(&v(&["kustomize"])), v(&["."]));
    }
}
