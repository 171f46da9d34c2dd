#![cfg(not(target_arch = "wasm32"))]
//! Ingress end to end: the ingress-nginx controller installed from its release manifest (kind's
//! and the cloud provider's), two hello-app Deployments behind Services, Ingresses fanning out by
//! path and by host, and requests from a pod and from the workstation answered by the backend the
//! rules pick (gcr.io/google-samples/hello-app prints its version and pod name).

use kubesim_sim::World;

const KIND_DEPLOY: &str = "https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.12.1/deploy/static/provider/kind/deploy.yaml";

const APPS: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: hello-app, image: 'gcr.io/google-samples/hello-app:1.0'}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web2}\nspec:\n  selector: {matchLabels: {app: web2}}\n  template:\n    metadata: {labels: {app: web2}}\n    spec:\n      containers: [{name: hello-app, image: 'gcr.io/google-samples/hello-app:2.0'}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 8080}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web2}\nspec:\n  selector: {app: web2}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  nodeName: node-4\n  containers: [{name: c, image: 'curlimages/curl:8.11.0', command: [sleep, '3600']}]\n";

/// Fan-out by path on one host, and by host (`*.example.com` covering one label).
const INGRESSES: &str = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: fanout}\nspec:\n  ingressClassName: nginx\n  rules:\n  - host: hello.example\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 8080}}}}\n      - {path: /v2, pathType: Prefix, backend: {service: {name: web2, port: {name: http}}}}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: vhosts}\nspec:\n  ingressClassName: nginx\n  rules:\n  - host: one.example.com\n    http:\n      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 8080}}}}]\n  - host: '*.example.com'\n    http:\n      paths: [{path: /, pathType: Prefix, backend: {service: {name: web2, port: {number: 80}}}}]\n";

fn run(world: &mut World, line: &str) -> kubesim_sim::world::CommandRecord {
    let record = world.run_command(line);
    assert_eq!(record.exit_code, 0, "{line}: {record:?}");
    record
}

/// kind's ingress cluster: the node labelled `ingress-ready=true` takes the controller.
fn kind_world() -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    // The client's own node: `kubectl exec`'s calls to a Service endpoint on the caller's
    // node are not routed (a limitation of net::exec), so nothing else runs there.
    world.add_node(kubesim_sim::cluster::node_template("node-4", "zone-a", "4", "8Gi", "110"));
    world.run_until(2_000);
    run(&mut world, "kubectl taint node node-4 client=only:NoSchedule");
    run(&mut world, "kubectl label node node-1 ingress-ready=true");
    let apply = run(&mut world, &format!("kubectl apply -f {KIND_DEPLOY}"));
    assert!(apply.stdout.starts_with("namespace/ingress-nginx created\nserviceaccount/ingress-nginx created\n"), "{}", apply.stdout);
    assert!(
        apply.stdout.contains("deployment.apps/ingress-nginx-controller created\n") && apply.stdout.contains("ingressclass.networking.k8s.io/nginx created\n"),
        "{}",
        apply.stdout
    );
    world.add_file("apps.yaml", APPS);
    world.add_file("ingresses.yaml", INGRESSES);
    run(&mut world, "kubectl apply -f apps.yaml");
    world.run_until(60_000);
    run(&mut world, "kubectl apply -f ingresses.yaml");
    world.run_until(180_000);
    world
}

fn node_ip(world: &mut World, node: &str) -> String {
    world.run_command(&format!("kubectl get node {node} -o jsonpath={{.status.addresses[0].address}}")).stdout
}

#[test]
fn the_kind_manifest_installs_a_running_controller_and_publishes_localhost() {
    let mut world = kind_world();
    let pods = run(&mut world, "kubectl get pods -n ingress-nginx -o wide");
    let controller = pods.stdout.lines().find(|l| l.starts_with("ingress-nginx-controller-")).unwrap_or_else(|| panic!("{}", pods.stdout));
    assert!(controller.contains("1/1") && controller.contains("Running") && controller.contains("node-1"), "{}", pods.stdout);
    let get = run(&mut world, "kubectl get ingress");
    assert_eq!(
        get.stdout,
        "NAME     CLASS   HOSTS                           ADDRESS     PORTS   AGE\nfanout   nginx   hello.example                   localhost   80      2m\nvhosts   nginx   one.example.com,*.example.com   localhost   80      2m\n",
    );
    let classes = run(&mut world, "kubectl get ingressclass");
    assert!(classes.stdout.starts_with("NAME    CONTROLLER             PARAMETERS   AGE\nnginx   k8s.io/ingress-nginx   <none>       "), "{}", classes.stdout);
    let svc = run(&mut world, "kubectl get svc -n ingress-nginx ingress-nginx-controller");
    assert!(svc.stdout.contains("NodePort") && svc.stdout.contains("80:3") && svc.stdout.contains("443:3"), "{}", svc.stdout);
}

#[test]
fn requests_fan_out_by_path_and_host_from_a_pod_and_the_workstation() {
    let mut world = kind_world();
    let cluster_ip = run(&mut world, "kubectl get svc -n ingress-nginx ingress-nginx-controller -o jsonpath={.spec.clusterIP}").stdout;
    let hello = |world: &mut World, line: &str| {
        let r = world.run_command(line);
        assert_eq!(r.exit_code, 0, "{line}: {r:?}");
        r.stdout
    };
    // From a pod, through the controller's Service.
    let v1 = hello(&mut world, &format!("kubectl exec client -- curl -s -H 'Host: hello.example' http://{cluster_ip}/"));
    assert!(v1.starts_with("Hello, world!\nVersion: 1.0.0\nHostname: web-"), "{v1}");
    let v2 = hello(&mut world, &format!("kubectl exec client -- curl -s -H 'Host: hello.example' http://{cluster_ip}/v2/anything"));
    assert!(v2.starts_with("Hello, world!\nVersion: 2.0.0\nHostname: web2-"), "{v2}");
    // From the workstation, through node-1's hostPort 80 (kind maps it to the host).
    let node1 = node_ip(&mut world, "node-1");
    let by_host = hello(&mut world, &format!("curl -s --resolve one.example.com:80:{node1} http://one.example.com/"));
    assert!(by_host.contains("Version: 1.0.0"), "{by_host}");
    let wildcard = hello(&mut world, &format!("curl -s -H 'Host: two.example.com' http://{node1}/"));
    assert!(wildcard.contains("Version: 2.0.0"), "{wildcard}");
    // Two labels are not covered by the wildcard: the default server's 404.
    let deep = world.run_command(&format!("curl -s -i -H 'Host: a.b.example.com' http://{node1}/"));
    assert!(deep.stdout.starts_with("HTTP/1.1 404 Not Found\r\n"), "{deep:?}");
    assert!(deep.stdout.ends_with("<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"), "{deep:?}");
    assert!(!deep.stdout.contains("Server:"), "server tokens off: {deep:?}");
    // Through the controller Service's node port, on another node.
    let node_port = run(&mut world, "kubectl get svc -n ingress-nginx ingress-nginx-controller -o jsonpath={.spec.ports[0].nodePort}").stdout;
    let node3 = node_ip(&mut world, "node-3");
    let via_node_port = hello(&mut world, &format!("curl -s -H 'Host: hello.example' http://{node3}:{node_port}/v2"));
    assert!(via_node_port.contains("Version: 2.0.0"), "{via_node_port}");
}

#[test]
fn a_backend_without_endpoints_is_503_and_describe_lists_the_endpoints() {
    let mut world = kind_world();
    let describe = run(&mut world, "kubectl describe ingress fanout");
    let web_ip = run(&mut world, "kubectl get pods -l app=web -o jsonpath={.items[0].status.podIP}").stdout;
    assert!(describe.stdout.contains(&format!("  hello.example  \n                 /     web:8080 ({web_ip}:8080)\n")), "{}", describe.stdout);
    assert!(describe.stdout.contains("Address:          localhost\n"), "{}", describe.stdout);
    assert!(describe.stdout.contains("Normal  Sync") && describe.stdout.contains("nginx-ingress-controller  Scheduled for sync"), "{}", describe.stdout);
    run(&mut world, "kubectl scale deployment web2 --replicas=0");
    world.run_until(world.now() + 30_000);
    let node1 = node_ip(&mut world, "node-1");
    let r = world.run_command(&format!("curl -s -i -H 'Host: hello.example' http://{node1}/v2"));
    assert!(r.stdout.starts_with("HTTP/1.1 503 Service Temporarily Unavailable\r\n"), "{r:?}");
    assert!(r.stdout.contains("<title>503 Service Temporarily Unavailable</title>"), "{r:?}");
}
