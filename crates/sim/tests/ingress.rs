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
    // `hops`: the same request with its path — node-3's node-port rule to the controller pod on
    // node-1, nginx's server and location, its second connection to a web2 pod, the answer.
    let traced = hello(&mut world, &format!("hops curl -s -H 'Host: hello.example' http://{node3}:{node_port}/v2"));
    let hops = traced.split_once("packet 1: ").map(|(_, h)| h).unwrap_or_else(|| panic!("{traced}"));
    let lines: Vec<&str> = hops.lines().collect();
    assert!(lines[0].starts_with(&format!("tcp workstation 172.18.0.1 -> {node3}:{node_port}: ok (")), "{hops}");
    assert_eq!(lines[2], "  2. fabric: routed from workstation 172.18.0.1 to node-3", "{hops}");
    assert!(
        lines[3].starts_with(
            "  3. node-3's kube-proxy rules: Service rule ingress-nginx/ingress-nginx-controller:http DNATs it to ingress-nginx/ingress-nginx-controller-"
        ),
        "{hops}"
    );
    assert_eq!(lines[4], "  4. fabric: routed from node-3 to node-1", "{hops}");
    assert!(
        lines[5].starts_with("  5. ingress-nginx ingress-nginx/ingress-nginx-controller-")
            && lines[5].contains(":80): Host hello.example, path /v2: server hello.example, location /v2 (Prefix) of Ingress default/fanout → upstream default-web2-http: opens a second connection to default/web2-"),
        "{hops}"
    );
    let last = lines.last().unwrap();
    assert!(last.starts_with("  ") && last.ends_with(": relays the answer to the client: HTTP 200"), "{hops}");
    assert!(lines[lines.len() - 2].contains(":8080) on node-") && lines[lines.len() - 2].ends_with(": accepts and answers"), "{hops}");
    // nginx's own 404 for a host no server has.
    let miss = world.run_command(&format!("hops curl -s -H 'Host: a.b.example.com' http://{node1}/"));
    assert!(
        miss.stdout.contains("  3. node-1's hostPort rules (CNI portmap): hostPort 80 DNATs it to ingress-nginx/ingress-nginx-controller-"),
        "{}",
        miss.stdout
    );
    assert!(
        miss.stdout.contains("Host a.b.example.com, path /: the catch-all server _, location / (Prefix) (the default backend): nginx answers 404 itself\n"),
        "{}",
        miss.stdout
    );
    assert!(!miss.stdout.contains("  5. "), "nginx's own answer ends the path: {}", miss.stdout);
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

/// kind's ingress guide: a cluster whose control-plane node is labelled `ingress-ready=true`
/// and maps ports 80/443 to the host (`extraPortMappings`), then `curl localhost/...`.
#[test]
fn kind_extra_port_mappings_bring_localhost_to_the_controller() {
    let cluster = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n  kubeadmConfigPatches:\n  - |\n    kind: InitConfiguration\n    nodeRegistration:\n      kubeletExtraArgs:\n        node-labels: \"ingress-ready=true\"\n  extraPortMappings:\n  - containerPort: 80\n    hostPort: 80\n    protocol: TCP\n  - containerPort: 443\n    hostPort: 443\n    protocol: TCP\n- role: worker\n";
    let files = [kubesim_sim::scenario::InputFile { name: "kind.yaml".into(), text: cluster.into() }];
    let (mut world, outcomes, errors) = kubesim_sim::loader::load(kubesim_sim::world::WorldConfig::seeded(1), &files);
    assert!(errors.is_empty() && outcomes.iter().all(|o| o.errors.is_empty()), "{errors:?} {outcomes:?}");
    world.run_until(2_000);
    let nodes = run(&mut world, "kubectl get nodes --show-labels");
    assert!(
        nodes.stdout.contains("kind-control-plane") && nodes.stdout.contains("ingress-ready=true") && nodes.stdout.contains("kind-worker"),
        "{}",
        nodes.stdout
    );
    run(&mut world, &format!("kubectl apply -f {KIND_DEPLOY}"));
    world.add_file("apps.yaml", &APPS.replace("  nodeName: node-4\n", ""));
    world.add_file("ingresses.yaml", INGRESSES);
    run(&mut world, "kubectl apply -f apps.yaml");
    world.run_until(60_000);
    let controller = run(&mut world, "kubectl get pods -n ingress-nginx -l app.kubernetes.io/component=controller -o wide");
    assert!(
        controller.stdout.contains("Running") && controller.stdout.contains("kind-control-plane"),
        "the control-plane toleration and ingress-ready: {}",
        controller.stdout
    );
    run(&mut world, "kubectl apply -f ingresses.yaml");
    world.run_until(70_000);
    let v2 = world.run_command("curl -s -H 'Host: hello.example' localhost/v2");
    assert!(v2.stdout.contains("Version: 2.0.0"), "{v2:?}");
    let v1 = world.run_command("curl -s --resolve hello.example:80:127.0.0.1 http://hello.example/");
    assert!(v1.stdout.contains("Version: 1.0.0"), "{v1:?}");
    let unmapped = world.run_command("curl -sS localhost:8080/");
    assert_eq!(unmapped.exit_code, 7, "nothing listens on the workstation's 8080: {unmapped:?}");
}

/// The cloud manifest: a LoadBalancer Service and `--publish-service`, so the Ingress shows
/// the load balancer's address, which reaches the controller. Three nodes, one controller pod:
/// the Service's `externalTrafficPolicy: Local` leaves the nodes without it unhealthy, so the
/// load balancer sends every connection to the controller's node.
#[test]
fn the_cloud_manifest_publishes_the_load_balancer_address() {
    let mut world = World::new(1);
    world.add_default_nodes();
    world.run_until(2_000);
    run(&mut world, "kubectl apply -f https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.15.1/deploy/static/provider/cloud/deploy.yaml");
    world.add_file("apps.yaml", &APPS.replace("  nodeName: node-4\n", ""));
    world.add_file("ingresses.yaml", INGRESSES);
    run(&mut world, "kubectl apply -f apps.yaml");
    world.run_until(60_000);
    run(&mut world, "kubectl apply -f ingresses.yaml");
    world.run_until(180_000);
    let lb = run(&mut world, "kubectl get svc -n ingress-nginx ingress-nginx-controller -o jsonpath={.status.loadBalancer.ingress[0].ip}").stdout;
    assert!(lb.starts_with("172.18.255."), "{lb}");
    let address = run(&mut world, "kubectl get ingress fanout -o jsonpath={.status.loadBalancer.ingress[0].ip}").stdout;
    assert_eq!(address, lb);
    for _ in 0..6 {
        let v1 = world.run_command(&format!("curl -s -H 'Host: hello.example' http://{lb}/"));
        assert!(v1.stdout.contains("Version: 1.0.0"), "{v1:?}");
    }
}

/// A TLS section with its Secret: plain HTTP is redirected (308, ssl-redirect), https is
/// served with HSTS; `rewrite-target: /` hands the backend `/`; an Ingress of another class is
/// not this controller's (the default server's 404).
#[test]
fn tls_redirects_rewrites_and_other_classes() {
    let mut world = kind_world();
    let extra = "apiVersion: v1\nkind: Secret\nmetadata: {name: tls-secret}\ntype: kubernetes.io/tls\ndata: {tls.crt: Y2VydA==, tls.key: a2V5}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: secure}\nspec:\n  ingressClassName: nginx\n  tls: [{hosts: [secure.example], secretName: tls-secret}]\n  rules:\n  - host: secure.example\n    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 8080}}}}]}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: rewrite\n  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}\nspec:\n  ingressClassName: nginx\n  rules:\n  - host: rewrite.example\n    http: {paths: [{path: /app, pathType: Prefix, backend: {service: {name: web2, port: {number: 80}}}}]}\n---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: other}\nspec: {controller: example.com/other}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: elsewhere}\nspec:\n  ingressClassName: other\n  rules:\n  - host: elsewhere.example\n    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 8080}}}}]}\n";
    world.add_file("extra.yaml", extra);
    run(&mut world, "kubectl apply -f extra.yaml");
    world.run_until(world.now() + 5_000);
    let node1 = node_ip(&mut world, "node-1");
    let redirect = world.run_command(&format!("curl -s -i -H 'Host: secure.example' http://{node1}/x?y=1"));
    assert!(redirect.stdout.starts_with("HTTP/1.1 308 Permanent Redirect\r\n"), "{redirect:?}");
    assert!(redirect.stdout.contains("Location: https://secure.example/x?y=1\r\n"), "{redirect:?}");
    let secure = world.run_command(&format!("curl -s -i -k --resolve secure.example:443:{node1} https://secure.example/"));
    assert!(
        secure.stdout.contains("Strict-Transport-Security: max-age=31536000; includeSubDomains\r\n") && secure.stdout.contains("Version: 1.0.0"),
        "{secure:?}"
    );
    let rewritten = world.run_command(&format!("curl -s -H 'Host: rewrite.example' http://{node1}/app/deep/path"));
    assert!(rewritten.stdout.contains("Version: 2.0.0"), "{rewritten:?}");
    let other = world.run_command(&format!("curl -s -i -H 'Host: elsewhere.example' http://{node1}/"));
    assert!(other.stdout.starts_with("HTTP/1.1 404 Not Found\r\n"), "{other:?}");
    let get = run(&mut world, "kubectl get ingress secure elsewhere");
    assert!(get.stdout.contains("secure      nginx   secure.example      ") && get.stdout.contains("80, 443"), "{}", get.stdout);
    assert!(get.stdout.contains("elsewhere   other   elsewhere.example             80"), "another controller's Ingress gets no address: {}", get.stdout);
}
