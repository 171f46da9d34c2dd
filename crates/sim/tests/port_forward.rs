#![cfg(not(target_arch = "wasm32"))]
//! `kubectl port-forward`: the workstation's local port leads into a pod for as long as the
//! command runs (in a second terminal, or with `&`).

use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.27\n        ports: [{name: http, containerPort: 80}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 8000, targetPort: http}]\n";

fn world() -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    let outcome = apply(&mut world, &InputFile { name: "web.yaml".into(), text: WEB.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world.run_until(40_000);
    world
}

#[test]
fn a_forwarded_local_port_reaches_the_pod_while_the_command_runs() {
    let mut world = world();
    // A Service port (8000) is translated to the pod's named target port (http = 80).
    let handle = world.start_background("kubectl port-forward svc/web 7080:8000");
    let page = world.run_command("hops curl -s localhost:7080");
    assert_eq!(page.exit_code, 0, "{}", page.stderr);
    assert!(page.stdout.contains("Welcome to nginx!"), "{}", page.stdout);
    // The connection is in the packet log: from the workstation, through the kubelet on the
    // pod's node.
    let node = world.run_command("kubectl get pods -l app=web -o jsonpath={.items[0].spec.nodeName}").stdout;
    assert!(page.stdout.contains("packet 1: tcp workstation 172.18.0.1 (kubectl port-forward) -> 10.244."), "{}", page.stdout);
    assert!(page.stdout.contains(&format!("  1. workstation 172.18.0.1 (kubectl port-forward through {node}'s kubelet, 172.18.0.")), "{}", page.stdout);
    assert!(page.stdout.contains(&format!(":80) on {node}: accepts and answers\n")), "{}", page.stdout);
    world.run_until(45_000);
    let record = world.finish_background(handle).unwrap();
    assert_eq!(record.stdout, "Forwarding from 127.0.0.1:7080 -> 80\nForwarding from [::1]:7080 -> 80\nHandling connection for 7080\n");
    assert!(record.interrupted);
    // Once stopped, nothing listens there.
    let refused = world.run_command("curl -s localhost:7080");
    assert_ne!(refused.exit_code, 0);
}

#[test]
fn port_forward_names_the_pod_it_cannot_use() {
    let mut world = world();
    let r = world.run_command("kubectl port-forward deployment/nope 8080:80 &");
    assert_eq!(r.exit_code, 1);
    assert!(r.stderr.contains("deployments \"nope\" not found"), "{}", r.stderr);
    // `&` in a shell line: the forward keeps running while later commands use it.
    let r = world.run_command("kubectl port-forward deployment/web 8081:80 &");
    assert_eq!((r.exit_code, r.stdout.lines().next()), (0, Some("Forwarding from 127.0.0.1:8081 -> 80")), "{}", r.stderr);
    assert!(world.run_command("curl -s http://127.0.0.1:8081/").stdout.contains("Welcome to nginx!"));
}
