//! The `minikube` commands the Kubernetes docs run on the workstation, against the world as
//! minikube runs them against its cluster: `minikube addons enable ingress` (applies the
//! addon's manifest, [`kubesim_kubectl::manifests`], then waits as minikube's "Verifying
//! ingress addon..." does until the controller pod is ready), `minikube ip` (the primary
//! node's address) and `minikube service NAME --url` (the node port URLs).

use crate::world::World;
use kubesim_api::object::Object;
use kubesim_api::Millis;

/// minikube's wait for an addon's pods (addons.go: 6 minutes).
const ADDON_WAIT_MS: Millis = 6 * 60_000;

/// Whether a command line is a minikube command.
pub fn is_minikube_command(line: &str) -> bool {
    line.split_whitespace().next() == Some("minikube")
}

/// Runs `minikube ARGS` now; the command may let virtual time pass, at most to `until`.
/// Returns (stdout, stderr, exit code, interrupted).
pub fn run(world: &mut World, line: &str, until: Millis) -> (String, String, i32, bool) {
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    match words.as_slice() {
        ["addons", "enable", "ingress", ..] => enable_ingress(world, until),
        ["ip", ..] => match primary_ip(world) {
            Some(ip) => (format!("{ip}\n"), String::new(), 0, false),
            None => (String::new(), "🤷  The control-plane node minikube host does not exist\n".into(), 85, false),
        },
        ["service", rest @ ..] if rest.contains(&"--url") => service_urls(world, rest),
        ["ssh", rest @ ..] => ssh(world, rest),
        _ => (
            String::new(),
            format!("kubesim models these minikube commands: addons enable ingress, ip, service NAME --url, ssh [-n NODE] [-- COMMAND] (not {line:?})\n"),
            64,
            false,
        ),
    }
}

/// `minikube ssh [-n NODE] [--] [COMMAND...]`: a root shell on the node (the primary one
/// unless `-n` names another). Without a command the shell stays open: the command lines that
/// follow run there until `exit` ([`crate::node_shell`]).
fn ssh(world: &mut World, args: &[&str]) -> (String, String, i32, bool) {
    let mut node = None;
    let mut command: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-n" | "--node" => {
                node = args.get(i + 1).map(|n| n.to_string());
                i += 1;
            }
            a if a.starts_with("--node=") => node = Some(a["--node=".len()..].to_string()),
            "--" => {
                command.extend(&args[i + 1..]);
                break;
            }
            a => command.push(a),
        }
        i += 1;
    }
    let node = match node.or_else(|| primary_node(world)) {
        Some(n) => n,
        None => return (String::new(), "🤷  The control-plane node minikube host does not exist\n".into(), 85, false),
    };
    if world.host(&node).is_none() {
        return (String::new(), format!("❌  Exiting due to GUEST_NODE_RETRIEVE: retrieving node: Could not find node {node}\n"), 85, false);
    }
    if command.is_empty() {
        return match world.open_node_shell(&node) {
            Ok(()) => (String::new(), String::new(), 0, false),
            Err(err) => (String::new(), format!("{err}\n"), 255, false),
        };
    }
    // The user's shell removed one level of quoting; ssh joins the words with spaces and the
    // node's shell parses the result again (`minikube ssh "sudo sh -c 'echo x > f'"`).
    let words = match kubesim_kubectl::split_command(&command.join(" ")) {
        Ok(w) => w,
        Err(e) => return (String::new(), format!("{e}\n"), 2, false),
    };
    let line = words.join(" ");
    match world.run_on_node(&node, &line) {
        Ok(out) => (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned(), out.code, false),
        Err(err) => (String::new(), format!("{err}\n"), 255, false),
    }
}

/// The primary node's name.
fn primary_node(world: &World) -> Option<String> {
    let nodes: Vec<_> = world.api().store().list(("", "nodes"), None).cloned().collect();
    let primary =
        nodes.iter().find(|n| n.metadata().labels.as_ref().and_then(|l| l.get("minikube.k8s.io/primary")).is_some_and(|v| v == "true")).or(nodes.first())?;
    Some(primary.name().to_string())
}

/// The primary node: the one labelled `minikube.k8s.io/primary=true`, else the first.
fn primary_ip(world: &World) -> Option<String> {
    let nodes: Vec<_> = world.api().store().list(("", "nodes"), None).cloned().collect();
    let primary =
        nodes.iter().find(|n| n.metadata().labels.as_ref().and_then(|l| l.get("minikube.k8s.io/primary")).is_some_and(|v| v == "true")).or(nodes.first())?;
    let Object::Node(node) = primary.as_ref() else { return None };
    node.status.as_ref()?.addresses.as_ref()?.iter().find(|a| a.type_ == "InternalIP").map(|a| a.address.clone())
}

fn enable_ingress(world: &mut World, until: Millis) -> (String, String, i32, bool) {
    let release = kubesim_kubectl::manifests::MINIKUBE_INGRESS_RELEASE;
    let Some(manifest) = kubesim_kubectl::manifests::ingress_nginx(kubesim_kubectl::manifests::Provider::Minikube, release) else {
        return (String::new(), "❌  ingress: the addon manifest is missing\n".into(), 1, false);
    };
    let results = world.api_request(kubesim_kubectl::ACTOR, |api, req| kubesim_kubectl::apply_text("ingress-deploy.yaml", &manifest, "default", api, req));
    if let Some(err) = results.iter().find_map(|r| r.outcome.as_ref().err()) {
        return (String::new(), format!("❌  Exiting due to MK_ADDON_ENABLE: enable failed: run callbacks: running callbacks: [sudo KUBECONFIG=/var/lib/minikube/kubeconfig kubectl apply -f /etc/kubernetes/addons/ingress-deploy.yaml: {err}]\n"), 10, false);
    }
    let certgen = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("image: registry.k8s.io/ingress-nginx/kube-webhook-certgen:"))
        .unwrap_or("")
        .split('@')
        .next()
        .unwrap_or("")
        .to_string();
    let mut out = format!(
        "💡  ingress is an addon maintained by Kubernetes. For any concerns contact minikube on GitHub.\nYou can view the list of minikube maintainers at: https://github.com/kubernetes/minikube/blob/master/OWNERS\n    ▪ Using image registry.k8s.io/ingress-nginx/controller:v{release}\n    ▪ Using image registry.k8s.io/ingress-nginx/kube-webhook-certgen:{certgen}\n    ▪ Using image registry.k8s.io/ingress-nginx/kube-webhook-certgen:{certgen}\n🔎  Verifying ingress addon...\n"
    );
    // Verifying: the controller pods Running and Ready, waiting with the world running.
    let wait_end = world.now() + ADDON_WAIT_MS;
    let deadline = wait_end.min(until.max(world.now()));
    while !controller_ready(world) {
        match world.next_event_time().filter(|t| *t <= deadline) {
            Some(_) => {
                world.step();
            }
            None => {
                world.run_until(deadline);
                break;
            }
        }
    }
    if controller_ready(world) {
        out.push_str("🌟  The 'ingress' addon is enabled\n");
        return (out, String::new(), 0, false);
    }
    if deadline < wait_end {
        return (out, String::new(), 130, true);
    }
    let err = "❌  Exiting due to MK_ADDON_ENABLE: enable failed: run callbacks: running callbacks: [waiting for app.kubernetes.io/name=ingress-nginx pods: context deadline exceeded]\n";
    (out, err.to_string(), 10, false)
}

fn controller_ready(world: &World) -> bool {
    let pods: Vec<_> = world.api().store().list(("", "pods"), Some("ingress-nginx")).cloned().collect();
    let controllers: Vec<_> = pods
        .iter()
        .filter_map(|p| p.as_pod())
        .filter(|p| p.metadata.labels.as_ref().and_then(|l| l.get("app.kubernetes.io/component")).is_some_and(|c| c == "controller"))
        .collect();
    !controllers.is_empty()
        && controllers
            .iter()
            .all(|p| p.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True")))
}

/// `minikube service NAME --url [-n NAMESPACE]`: `http://<node ip>:<node port>` per port.
fn service_urls(world: &World, args: &[&str]) -> (String, String, i32, bool) {
    let mut namespace = "default".to_string();
    let mut name = None;
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-n" | "--namespace" => {
                namespace = args.get(i + 1).copied().unwrap_or("default").to_string();
                i += 1;
            }
            a if a.starts_with("--namespace=") => namespace = a["--namespace=".len()..].to_string(),
            a if a.starts_with('-') => {}
            a => name = name.or(Some(a.to_string())),
        }
        i += 1;
    }
    let Some(name) = name else { return (String::new(), "❌  Exiting due to MK_USAGE: You must specify a service name\n".into(), 64, false) };
    let Some(service) = world.api().store().get(("", "services"), &namespace, &name).cloned() else {
        return (String::new(), format!("❌  Exiting due to SVC_NOT_FOUND: Service '{name}' was not found in '{namespace}' namespace.\nYou may select another namespace by using 'minikube service {name} -n <namespace>'. Or list out all the services using 'minikube service list'\n"), 30, false);
    };
    let Object::Service(svc) = service.as_ref() else { return (String::new(), String::new(), 1, false) };
    let ip = primary_ip(world).unwrap_or_default();
    let urls: Vec<String> =
        svc.spec.iter().flat_map(|s| s.ports.iter().flatten()).filter_map(|p| p.node_port).map(|np| format!("http://{ip}:{np}\n")).collect();
    if urls.is_empty() {
        return (String::new(), format!("😿  service {namespace}/{name} has no node port\n"), 0, false);
    }
    (urls.concat(), String::new(), 0, false)
}
