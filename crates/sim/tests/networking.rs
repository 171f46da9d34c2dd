#![cfg(not(target_arch = "wasm32"))]
//! Traffic from outside the pod network: node ports through each node's kube-proxy rules, from
//! a pod and from the workstation (the machine the cluster runs on).

use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;

const APP: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      nodeSelector: {kubernetes.io/hostname: node-3}\n      containers: [{name: web, image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', args: [netexec, '--http-port=8080']}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  type: NodePort\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 8080, nodePort: 30080}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  nodeName: node-1\n  containers: [{name: c, image: 'busybox:1.37', command: [sleep, '3600']}]\n";

fn world() -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    let outcome = apply(&mut world, &InputFile { name: "net.yaml".into(), text: APP.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world.run_until(40_000);
    world
}

fn node_ip(world: &mut World, node: &str) -> String {
    world.run_command(&format!("kubectl get node {node} -o jsonpath={{.status.addresses[0].address}}")).stdout
}

// A node port answers on every node's address, the endpoint being on node-3 (a second hop from
// node-2), from a pod and from the workstation; a port nothing listens on is refused.
#[test]
fn node_ports_answer_on_every_node_from_pods_and_the_workstation() {
    let mut world = world();
    let node2 = node_ip(&mut world, "node-2");
    assert_eq!(node2, "172.18.0.3");
    let from_pod = world.run_command(&format!("kubectl exec client -- wget -qO- http://{node2}:30080/hostname"));
    assert_eq!(from_pod.exit_code, 0, "{from_pod:?}");
    assert!(from_pod.stdout.starts_with("web-"), "agnhost's /hostname: {from_pod:?}");
    let from_host = world.run_command(&format!("curl -s http://{node2}:30080/hostname"));
    assert_eq!(from_host.exit_code, 0, "{from_host:?}");
    assert_eq!(from_host.stdout, from_pod.stdout, "one endpoint");
    let refused = world.run_command(&format!("curl -sS http://{node2}:30081/"));
    assert_eq!(refused.exit_code, 7, "{refused:?}");
    assert!(refused.stderr.contains("Failed to connect to 172.18.0.3 port 30081"), "{refused:?}");
}

// The workstation has no route into the pod and Service networks; the internet is there.
#[test]
fn the_workstation_reaches_nodes_and_the_internet_but_not_cluster_addresses() {
    let mut world = world();
    let cluster_ip = world.run_command("kubectl get svc web -o jsonpath={.spec.clusterIP}").stdout;
    let timeout = world.run_command(&format!("curl -sS --max-time 2 http://{cluster_ip}/"));
    assert_eq!(timeout.exit_code, 28, "{timeout:?}");
    let site = world.run_command("curl -s http://example.com/");
    assert_eq!(site.exit_code, 0, "{site:?}");
    assert!(site.stdout.contains("Example Domain"), "{site:?}");
}

// A LoadBalancer Service gets an address from the load-balancer controller (cloud-provider-kind's
// service controller), shown as EXTERNAL-IP; the workstation reaches the Service through it; a
// type change back to ClusterIP gives the address back.
#[test]
fn load_balancers_get_an_address_that_reaches_the_service() {
    let mut world = world();
    let patch = world.run_command(r#"kubectl patch svc web -p '{"spec":{"type":"LoadBalancer"}}'"#);
    assert_eq!(patch.exit_code, 0, "{patch:?}");
    world.run_until(world.now() + 5_000);
    let get = world.run_command("kubectl get svc web");
    let row: Vec<&str> = get.stdout.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[1..4], &["LoadBalancer", row[2], "172.18.255.1"], "{}", get.stdout);
    assert_eq!(row[4], "80:30080/TCP", "the node port stays");
    world.run_until(world.now() + 2_000);
    let reply = world.run_command("curl -s http://172.18.255.1/hostname");
    assert_eq!(reply.exit_code, 0, "{reply:?}");
    assert!(reply.stdout.starts_with("web-"), "{reply:?}");
    let events = world.run_command("kubectl get events --field-selector involvedObject.name=web -o custom-columns=REASON:.reason --no-headers");
    assert!(events.stdout.contains("EnsuringLoadBalancer\nEnsuredLoadBalancer"), "{}", events.stdout);
    let back = world.run_command(r#"kubectl patch svc web -p '{"spec":{"type":"ClusterIP"}}'"#);
    assert_eq!(back.exit_code, 0, "{back:?}");
    world.run_until(world.now() + 5_000);
    let get = world.run_command("kubectl get svc web");
    assert!(get.stdout.lines().nth(1).unwrap().contains("<none>"), "{}", get.stdout);
    let gone = world.run_command("curl -sS --max-time 2 http://172.18.255.1/");
    assert_ne!(gone.exit_code, 0, "{gone:?}");
}

// The network view names both ends of every packet: a client resolving `web` through kube-dns
// and connecting through the Service to its endpoint.
#[test]
fn the_network_view_shows_services_rules_and_named_packets() {
    let mut world = world();
    let line = "kubectl run loader --image=busybox:1.37 --restart=Never -- sh -c 'while true; do wget -qO- http://web/hostname; sleep 1; done'";
    assert_eq!(world.run_command(line).exit_code, 0);
    world.run_until(world.now() + 20_000);
    let view = kubesim_sim::view::network(&world, 200);
    let web = view.services.iter().find(|s| s.name == "web").unwrap();
    assert_eq!((web.type_.as_str(), web.ports.as_str(), web.endpoints_ready, web.endpoints_total), ("NodePort", "80:30080/TCP", 1, 1));
    assert!(web.recent.0 >= 5 && web.recent.1 == 0, "{:?}", web.recent);
    let dns = view.services.iter().find(|s| s.name == "kube-dns").unwrap();
    assert_eq!((dns.cluster_ip.as_str(), dns.endpoints_ready), ("10.96.0.10", 2));
    assert!(view.nodes.iter().all(|n| n.vips >= 4 && n.node_ports == 1 && n.synced_at.is_some()), "{:?}", view.nodes);
    let query = view.packets.iter().find(|p| p.protocol == "dns").expect("a DNS query");
    assert_eq!(query.from, "default/loader");
    assert_eq!(query.service.as_deref(), Some("kube-system/kube-dns:dns"));
    assert!(query.endpoint.as_deref().unwrap().starts_with("kube-system/coredns-"), "{query:?}");
    let http = view.packets.iter().find(|p| p.protocol == "tcp" && p.outcome == "ok").expect("a request");
    assert_eq!((http.from.as_str(), http.service.as_deref()), ("default/loader", Some("default/web")));
    assert!(http.endpoint.as_deref().unwrap().starts_with("default/web-"), "{http:?}");
    assert!(view.total_packets >= view.packets.len() as u64);
}

// kube-proxy rewrites only the Services that changed (MinimizeIPTablesRestore): after churn —
// scaling, a Service deleted and re-created with another type, a selector changed, a node
// restarted — every node's table is what a full syncProxyRules over the API server's objects
// writes.
#[test]
fn incremental_kube_proxy_syncs_write_what_a_full_sync_would() {
    use kubesim_api::k8s_openapi::api::core::v1::Service;
    use kubesim_api::k8s_openapi::api::discovery::v1::EndpointSlice;
    let mut world = world();
    let more = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: c, image: 'nginx:1.27'}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec:\n  selector: {app: api}\n  ports: [{port: 80}]\n";
    assert!(apply(&mut world, &InputFile { name: "more.yaml".into(), text: more.into() }).errors.is_empty());
    world.run_until(60_000);
    for line in [
        "kubectl scale deployment api --replicas=5",
        "kubectl scale deployment web --replicas=2",
        "kubectl delete service web",
        "kubectl create service clusterip web --tcp=80:8080",
        "kubectl set selector service web app=web",
        "kubectl patch service api -p '{\"spec\":{\"type\":\"NodePort\"}}'",
    ] {
        let r = world.run_command(line);
        assert_eq!(r.exit_code, 0, "{line}: {r:?}");
        world.run_until(world.now() + 700);
    }
    world.run_command("fault node-restart node-2");
    world.run_until(world.now() + 60_000);
    let services: Vec<Service> = world.api().store().list(("", "services"), None).filter_map(|o| o.decode::<Service>()).collect();
    let slices: Vec<EndpointSlice> =
        world.api().store().list(("discovery.k8s.io", "endpointslices"), None).filter_map(|o| o.decode::<EndpointSlice>()).collect();
    for node in ["node-1", "node-2", "node-3"] {
        let full = kubesim_proxy::rules(node, services.iter(), slices.iter());
        let host = &world.host(node).unwrap().netfilter;
        assert_eq!(host.services, full.services, "{node}");
        assert_eq!(host.vips, full.vips, "{node}");
        assert_eq!(host.node_ports, full.node_ports, "{node}");
        assert!(host.services.get("default/api").is_some_and(|sp| sp.cluster_endpoints.len() == 5), "{node}: {:?}", host.services);
    }
}

// Packets `kubectl exec` and the workstation send are in the packet log like a container's own,
// named by who sent them, with every leg: the node a node port entered, that node's
// kube-proxy rule and endpoint, the fabric to the endpoint's node.
#[test]
fn exec_and_workstation_packets_are_logged_with_their_hops() {
    let mut world = world();
    let before = world.runtime().packets().1;
    let from_pod = world.run_command("kubectl exec client -- wget -qO- http://172.18.0.3:30080/hostname");
    assert_eq!(from_pod.exit_code, 0, "{from_pod:?}");
    let sent = kubesim_sim::view::packets_since(&world, before);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let p = &sent[0];
    assert_eq!((p.from.as_str(), p.via, p.outcome.as_str(), p.to_node.as_deref()), ("default/client", Some("kubectl exec"), "ok", Some("node-3")), "{p:?}");
    let places: Vec<&str> = p.hops.iter().map(|h| h.place.as_str()).collect();
    assert_eq!(places[..4], ["default/client on node-1 (kubectl exec)", "fabric", "node-2's kube-proxy rules", "fabric"], "{:#?}", p.hops);
    assert!(p.hops[2].what.starts_with("Service rule default/web DNATs it to default/web-"), "{:#?}", p.hops);
    assert!(p.hops[4].place.starts_with("default/web-") && p.hops[4].place.ends_with(":8080) on node-3"), "{:#?}", p.hops);
    assert_eq!(p.hops[4].what, "accepts and answers");

    let before = world.runtime().packets().1;
    let from_host = world.run_command("curl -s http://172.18.0.3:30080/hostname");
    assert_eq!(from_host.exit_code, 0, "{from_host:?}");
    let sent = kubesim_sim::view::packets_since(&world, before);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!((sent[0].from.as_str(), sent[0].via, sent[0].to_pod.is_some()), ("workstation 172.18.0.1", None, true), "{:?}", sent[0]);
    assert_eq!(sent[0].hops[0].what, "opens a TCP connection to node node-2 (172.18.0.3:30080)");
    let view = kubesim_sim::view::network(&world, 10);
    assert_eq!(view.packets[0], sent[0], "the network view shows the same packet, newest first");

    // A refused node port and a DNS query from the workstation are logged too.
    let before = world.runtime().packets().1;
    assert_eq!(world.run_command("curl -s http://172.18.0.3:30081/").exit_code, 7);
    let sent = kubesim_sim::view::packets_since(&world, before);
    assert_eq!((sent.len(), sent[0].outcome.as_str()), (1, "refused"), "{sent:?}");
    assert_eq!(sent[0].hops.last().unwrap().what, "the node answers: refused", "{:#?}", sent[0].hops);
}

// `hops COMMAND` prints what the command printed, then every packet it sent with its path:
// a node port reached from the workstation, and a load balancer's address.
#[test]
fn hops_prints_the_path_of_requests_from_outside() {
    let mut world = world();
    let out = world.run_command("hops curl -s http://172.18.0.3:30080/hostname");
    assert_eq!(out.exit_code, 0, "{out:?}");
    let (answer, hops) = out.stdout.split_once("packet 1: ").unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(answer.starts_with("web-"), "{}", out.stdout);
    let lines: Vec<&str> = hops.lines().collect();
    assert!(lines[0].starts_with("tcp workstation 172.18.0.1 -> 172.18.0.3:30080: ok ("), "{hops}");
    assert_eq!(lines[1], "  1. workstation 172.18.0.1: opens a TCP connection to node node-2 (172.18.0.3:30080)", "{hops}");
    assert_eq!(lines[2], "  2. fabric: routed from workstation 172.18.0.1 to node-2", "{hops}");
    assert!(lines[3].starts_with("  3. node-2's kube-proxy rules: Service rule default/web DNATs it to default/web-"), "{hops}");
    assert_eq!(lines[4], "  4. fabric: routed from node-2 to node-3", "{hops}");
    assert!(lines[5].starts_with("  5. default/web-") && lines[5].ends_with(":8080) on node-3: accepts and answers"), "{hops}");
    assert_eq!(world.commands().last().unwrap().line, "hops curl -s http://172.18.0.3:30080/hostname");

    let patch = world.run_command(r#"kubectl patch svc web -p '{"spec":{"type":"LoadBalancer"}}'"#);
    assert_eq!(patch.exit_code, 0, "{patch:?}");
    world.run_until(world.now() + 7_000);
    let out = world.run_command("hops curl -s http://172.18.255.1/hostname");
    assert_eq!(out.exit_code, 0, "{out:?}");
    assert!(out.stdout.contains("\n  2. load balancer 172.18.255.1:80: forwards the connection to node node-"), "{}", out.stdout);
    assert!(out.stdout.contains("'s kube-proxy rules: Service rule default/web DNATs it to default/web-"), "{}", out.stdout);
    let none = world.run_command("hops kubectl get svc web -o name");
    assert_eq!(none.stdout, "service/web\nno packets were sent\n");
}

// kubesim's load knob: a Service annotated `kubesim.dev/load` gets a Deployment of clients
// sending that many real requests a second through kube-dns and kube-proxy; changing the
// annotation changes the clients; removing it removes them.
#[test]
fn the_load_annotation_runs_real_clients_against_the_service() {
    let mut world = world();
    let annotate = world.run_command("kubectl annotate service web kubesim.dev/load=100 kubesim.dev/load-path=/hostname");
    assert_eq!(annotate.exit_code, 0, "{annotate:?}");
    world.run_until(world.now() + 30_000);
    let deploy = world.run_command("kubectl get deploy web-load -o jsonpath={.spec.replicas}/{.spec.template.spec.containers[0].env[0].value}");
    assert_eq!(deploy.stdout, "2/0.02", "two clients of 50 requests a second: {deploy:?}");
    let since = world.now() - 10_000;
    let (log, _) = world.runtime().packets();
    let served = log.iter().filter(|p| p.t_ms >= since && p.service.as_deref() == Some("default/web") && p.outcome == "ok").count();
    assert!(served >= 500, "about 100 requests a second reach the Service, got {served} in 10 s");
    world.run_command("kubectl annotate service web kubesim.dev/load=10 --overwrite");
    world.run_until(world.now() + 5_000);
    let deploy = world.run_command("kubectl get deploy web-load -o jsonpath={.spec.replicas}/{.spec.template.spec.containers[0].env[0].value}");
    assert_eq!(deploy.stdout, "1/0.1", "{deploy:?}");
    world.run_command("kubectl annotate service web kubesim.dev/load-");
    world.run_until(world.now() + 5_000);
    let gone = world.run_command("kubectl get deploy web-load");
    assert_eq!(gone.exit_code, 1, "{gone:?}");
}

// The `kubernetes` Service has the API server's address as its endpoint, and a pod reaches it:
// kube-apiserver answers /version to anyone and forbids what RBAC does not allow.
#[test]
fn pods_reach_the_api_server_through_the_kubernetes_service() {
    let mut world = world();
    let endpoints = world.run_command("kubectl get endpointslice kubernetes -o jsonpath={.endpoints[0].addresses[0]}:{.ports[0].port}");
    assert_eq!(endpoints.stdout, "172.18.0.2:6443", "{endpoints:?}");
    let version = world.run_command("kubectl exec client -- wget -qO- https://kubernetes.default.svc/version");
    assert_eq!(version.exit_code, 0, "{version:?}");
    assert!(version.stdout.contains("\"gitVersion\": \"v1.34.0\""), "{version:?}");
    let pods = world.run_command("kubectl exec client -- wget -qO- https://kubernetes.default.svc/api/v1/namespaces/default/pods");
    assert_eq!(pods.exit_code, 1, "a 403: {pods:?}");
    assert!(format!("{}{}", pods.stdout, pods.stderr).contains("server returned error: HTTP/1.1 403 Forbidden"), "{pods:?}");
}

/// A client pod on `node`.
fn client_on(world: &mut World, name: &str, node: &str) {
    let pod = format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  nodeName: {node}\n  containers: [{{name: c, image: 'busybox:1.37', command: [sleep, '3600']}}]\n");
    assert!(apply(world, &InputFile { name: format!("{name}.yaml"), text: pod }).errors.is_empty());
}

fn apply_yaml(world: &mut World, text: &str) {
    let outcome = apply(world, &InputFile { name: "more.yaml".into(), text: text.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
}

// `internalTrafficPolicy: Local` (reference §4.3's truth table, upstream syncProxyRules): a
// Service whose endpoints are all on other nodes DROPs cluster-IP traffic from this node (the
// client times out: "has no local endpoints"); a pod on the endpoint's node reaches it; a
// Service with no endpoints at all REJECTs (connection refused).
#[test]
fn internal_traffic_policy_local_drops_without_a_local_endpoint() {
    let mut world = world();
    client_on(&mut world, "client3", "node-3");
    apply_yaml(
        &mut world,
        "apiVersion: v1\nkind: Service\nmetadata: {name: web-local}\nspec:\n  internalTrafficPolicy: Local\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 8080}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: nothing}\nspec:\n  internalTrafficPolicy: Local\n  selector: {app: nothing}\n  ports: [{port: 80}]\n",
    );
    world.run_until(world.now() + 10_000);
    let dropped = world.run_command("kubectl exec client -- wget -qO- -T 2 http://web-local/hostname");
    assert_ne!(dropped.exit_code, 0, "{dropped:?}");
    assert!(dropped.stdout.contains("wget: download timed out"), "a DROP: {dropped:?}");
    let local = world.run_command("kubectl exec client3 -- wget -qO- -T 2 http://web-local/hostname");
    assert_eq!(local.exit_code, 0, "{local:?}");
    assert!(local.stdout.starts_with("web-"), "{local:?}");
    let refused = world.run_command("kubectl exec client -- wget -qO- -T 2 http://nothing/");
    assert!(refused.stdout.contains("Connection refused"), "a REJECT: {refused:?}");
    // The network view says which rule dropped it.
    let before = world.runtime().packets().1;
    world.run_command("kubectl exec client -- wget -qO- -T 2 http://web-local/hostname");
    let sent = kubesim_sim::view::packets_since(&world, before);
    let p = sent.iter().find(|p| p.protocol == "tcp").expect("the connection");
    assert_eq!(p.outcome, "timeout", "{p:?}");
    assert!(p.hops.iter().any(|h| h.what.ends_with(": DROP") && h.what.contains("default/web-local")), "{:#?}", p.hops);
}

// `externalTrafficPolicy: Local`: a node port on a node without a local endpoint drops
// traffic from outside the cluster (the workstation times out) and serves it on the
// endpoint's node; the node's own pods are short-circuited to the cluster-wide endpoints
// (KUBE-EXT's "pod traffic for ... external destinations" rule), as is the node itself
// ("route LOCAL traffic").
#[test]
fn external_traffic_policy_local_drops_outside_traffic_on_nodes_without_endpoints() {
    let mut world = world();
    let patch = world.run_command(r#"kubectl patch svc web -p '{"spec":{"externalTrafficPolicy":"Local"}}'"#);
    assert_eq!(patch.exit_code, 0, "{patch:?}");
    world.run_until(world.now() + 3_000);
    let dropped = world.run_command("curl -sS --max-time 2 http://172.18.0.2:30080/hostname");
    assert_eq!(dropped.exit_code, 28, "DROP, not REJECT: {dropped:?}");
    let served = world.run_command("curl -s --max-time 2 http://172.18.0.4:30080/hostname");
    assert_eq!(served.exit_code, 0, "node-3 has the endpoint: {served:?}");
    assert!(served.stdout.starts_with("web-"), "{served:?}");
    let pod = world.run_command("kubectl exec client -- wget -qO- -T 2 http://172.18.0.2:30080/hostname");
    assert_eq!(pod.exit_code, 0, "a pod on node-1 to its own node's port: {pod:?}");
    assert_eq!(pod.stdout, served.stdout);
    let node = world.run_command("minikube ssh -n node-1 -- curl -s --max-time 2 http://172.18.0.2:30080/hostname");
    assert_eq!(node.exit_code, 0, "the node itself: {node:?}");
    assert!(node.stdout.starts_with("web-"), "{node:?}");
    // The load balancer sends connections only to nodes whose health check passes.
    let patch = world.run_command(r#"kubectl patch svc web -p '{"spec":{"type":"LoadBalancer"}}'"#);
    assert_eq!(patch.exit_code, 0, "{patch:?}");
    world.run_until(world.now() + 7_000);
    for _ in 0..5 {
        let lb = world.run_command("curl -s --max-time 2 http://172.18.255.1/hostname");
        assert_eq!(lb.exit_code, 0, "{lb:?}");
    }
    let (filter, code) = {
        let r = world.run_command("minikube ssh -n node-1 -- sudo iptables-save -t filter");
        (r.stdout, r.exit_code)
    };
    assert_eq!(code, 0);
    assert!(
        filter.contains("-m comment --comment \"default/web has no local endpoints\" -m addrtype --dst-type LOCAL -m tcp --dport 30080 -j DROP"),
        "{filter}"
    );
}

// `loadBalancerSourceRanges`: kube-proxy's KUBE-FW chain lets a load balancer's address
// answer sources inside the ranges only; others are dropped by KUBE-PROXY-FIREWALL (the
// client times out). Node ports are not subject to the ranges.
#[test]
fn load_balancer_source_ranges_are_enforced() {
    let mut world = world();
    let patch = world.run_command(r#"kubectl patch svc web -p '{"spec":{"type":"LoadBalancer","loadBalancerSourceRanges":["10.0.0.0/8"]}}'"#);
    assert_eq!(patch.exit_code, 0, "{patch:?}");
    world.run_until(world.now() + 7_000);
    let outside = world.run_command("curl -sS --max-time 2 http://172.18.255.1/hostname");
    assert_eq!(outside.exit_code, 28, "the workstation (172.18.0.1) is outside 10.0.0.0/8: {outside:?}");
    let node_port = world.run_command("curl -s --max-time 2 http://172.18.0.3:30080/hostname");
    assert_eq!(node_port.exit_code, 0, "{node_port:?}");
    let pod = world.run_command("kubectl exec client -- wget -qO- -T 2 http://172.18.255.1/hostname");
    assert_eq!(pod.exit_code, 0, "a pod (10.244.x.x) is inside: {pod:?}");
    let patch = world.run_command(r#"kubectl patch svc web -p '{"spec":{"loadBalancerSourceRanges":["172.18.0.0/16"]}}'"#);
    assert_eq!(patch.exit_code, 0, "{patch:?}");
    world.run_until(world.now() + 3_000);
    let inside = world.run_command("curl -s --max-time 2 http://172.18.255.1/hostname");
    assert_eq!(inside.exit_code, 0, "{inside:?}");
    let (nat, _) = {
        let r = world.run_command("minikube ssh -n node-2 -- sudo iptables-save -t nat");
        (r.stdout, r.exit_code)
    };
    assert!(nat.contains("-A KUBE-FW-"), "{nat}");
    assert!(nat.contains("-s 172.18.0.0/16 -m comment --comment \"default/web loadbalancer IP\" -j KUBE-EXT-"), "{nat}");
}

// `sessionAffinity: ClientIP` as the `recent` match implements it: a client's connections
// stick to the endpoint its first one reached, also when the Service gains endpoints, and
// move only when that endpoint goes (then stick to the new one); without affinity they spread.
#[test]
fn client_ip_affinity_sticks_until_the_endpoint_goes() {
    let mut world = world();
    apply_yaml(
        &mut world,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: echo}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: echo}}\n  template:\n    metadata: {labels: {app: echo}}\n    spec:\n      containers: [{name: e, image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', args: [netexec, '--http-port=8080']}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: sticky}\nspec:\n  sessionAffinity: ClientIP\n  selector: {app: echo}\n  ports: [{port: 80, targetPort: 8080}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: spread}\nspec:\n  selector: {app: echo}\n  ports: [{port: 80, targetPort: 8080}]\n",
    );
    world.run_until(world.now() + 30_000);
    // One shell loop: its connections leave from successive source ports, as a real client's do.
    let hostnames = |world: &mut World, service: &str, n: usize| -> Vec<String> {
        let line = format!("kubectl exec client -- sh -c 'for i in $(seq {n}); do wget -qO- -T 2 http://{service}/hostname; echo; done'");
        let r = world.run_command(&line);
        assert_eq!(r.exit_code, 0, "{r:?}");
        world.run_until(world.now() + 1_000);
        r.stdout.lines().map(str::to_string).collect()
    };
    let spread: std::collections::BTreeSet<String> = hostnames(&mut world, "spread", 12).into_iter().collect();
    assert!(spread.len() > 1, "without affinity connections spread: {spread:?}");
    let first = hostnames(&mut world, "sticky", 8);
    assert!(first.iter().all(|h| h == &first[0]), "{first:?}");
    assert_eq!(world.run_command("kubectl scale deployment echo --replicas=6").exit_code, 0);
    world.run_until(world.now() + 30_000);
    let after_scale = hostnames(&mut world, "sticky", 8);
    assert!(after_scale.iter().all(|h| h == &first[0]), "new endpoints do not move the client: {after_scale:?}");
    let (nat, _) = {
        let r = world.run_command("minikube ssh -n node-1 -- sudo iptables-save -t nat");
        (r.stdout, r.exit_code)
    };
    assert!(nat.contains("-m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-"), "{nat}");
    assert!(nat.contains("-m recent --set --name KUBE-SEP-"), "{nat}");
    let delete = world.run_command(&format!("kubectl delete pod {} --grace-period=0 --force", first[0]));
    assert_eq!(delete.exit_code, 0, "{delete:?}");
    world.run_until(world.now() + 10_000);
    let moved = hostnames(&mut world, "sticky", 8);
    assert!(moved.iter().all(|h| h == &moved[0] && h != &first[0]), "{moved:?}");
}

/// The address agnhost's `/clientip` saw (its `ip:port` answer without the port).
fn client_ip(world: &mut World, command: &str) -> Option<String> {
    let out = world.run_command(command);
    (out.exit_code == 0).then(|| out.stdout.trim().rsplit_once(':').map(|(ip, _)| ip.to_string()).unwrap_or_default())
}

// Source NAT as kube-proxy does it (the "Using Source IP" tutorial): a pod reaching a cluster IP
// keeps its address; a node port with `externalTrafficPolicy: Cluster` is masqueraded by the
// node the client entered, as the node's InternalIP towards an endpoint on another node and as
// the node's pod-range gateway towards an endpoint on the node itself; with
// `externalTrafficPolicy: Local` the client's address reaches the endpoint and the other nodes
// drop; a pod reaching itself through its Service is masqueraded (hairpin).
#[test]
fn source_addresses_are_kept_or_masqueraded_as_kube_proxy_does() {
    let mut world = world();
    let pod_ip = world.run_command("kubectl get pod client -o jsonpath={.status.podIP}").stdout;
    assert_eq!(client_ip(&mut world, "kubectl exec client -- wget -qO- http://web/clientip").as_deref(), Some(pod_ip.as_str()), "cluster IP");
    // eTP Cluster, from the workstation: node-1 and node-2 forward to node-3's endpoint.
    assert_eq!(client_ip(&mut world, "curl -s http://172.18.0.2:30080/clientip").as_deref(), Some("172.18.0.2"));
    assert_eq!(client_ip(&mut world, "curl -s http://172.18.0.3:30080/clientip").as_deref(), Some("172.18.0.3"));
    let node3_gateway = world.run_command("kubectl get node node-3 -o jsonpath={.spec.podCIDR}").stdout.replace(".0/24", ".1");
    assert_eq!(client_ip(&mut world, "curl -s http://172.18.0.4:30080/clientip"), Some(node3_gateway), "the endpoint's own node: its veth's address");
    // A pod to a node port is masqueraded too (KUBE-EXT's "masquerade traffic" rule).
    assert_eq!(client_ip(&mut world, "kubectl exec client -- wget -qO- http://172.18.0.3:30080/clientip").as_deref(), Some("172.18.0.3"));
    // The network view names the masquerade.
    let before = world.runtime().packets().1;
    world.run_command("curl -s http://172.18.0.2:30080/clientip");
    let sent = kubesim_sim::view::packets_since(&world, before);
    assert!(sent[0].hops.iter().any(|h| h.what.contains("masquerades it as 172.18.0.2 (SNAT)")), "{:#?}", sent[0].hops);
    // eTP Local: the client's address, only from the endpoint's node.
    world.run_command(r#"kubectl patch svc web -p '{"spec":{"externalTrafficPolicy":"Local"}}'"#);
    world.run_until(world.now() + 3_000);
    assert_eq!(client_ip(&mut world, "curl -s --connect-timeout 1 http://172.18.0.4:30080/clientip").as_deref(), Some("172.18.0.1"));
    assert_eq!(client_ip(&mut world, "curl -s --connect-timeout 1 http://172.18.0.2:30080/clientip"), None, "dropped");
}

// kube-proxy's health-check server and the load balancer that uses it: with
// `externalTrafficPolicy: Local` every node answers the Service's healthCheckNodePort (from the
// node and from outside) — 200 with a local endpoint, 503 without — and once the checks have
// failed on the other nodes the load balancer sends every connection to the endpoint's node,
// which keeps the client's address; with `Cluster` it checks kube-proxy's :10256/healthz, every
// node passes, and the endpoint sees the forwarding node's address.
#[test]
fn load_balancers_follow_kube_proxys_health_checks() {
    let mut world = world();
    world.run_command(r#"kubectl patch svc web -p '{"spec":{"type":"LoadBalancer"}}'"#);
    world.run_until(world.now() + 10_000);
    let seen = client_ip(&mut world, "curl -s --max-time 2 http://172.18.255.1/clientip").unwrap_or_default();
    assert!(seen != "172.18.0.1" && (seen.starts_with("172.18.0.") || seen.starts_with("10.244.")), "masqueraded by the node it entered: {seen}");
    let healthz = world.run_command("curl -s http://172.18.0.2:10256/healthz");
    assert!(healthz.stdout.contains("\"healthy\":true"), "{healthz:?}");
    world.run_command(r#"kubectl patch svc web -p '{"spec":{"externalTrafficPolicy":"Local"}}'"#);
    world.run_until(world.now() + 2_000);
    let port = world.run_command("kubectl get svc web -o jsonpath={.spec.healthCheckNodePort}").stdout;
    let on_node = |world: &mut World, node: &str| world.run_command(&format!("minikube ssh -n {node} -- curl -s localhost:{port}/healthz")).stdout;
    assert!(on_node(&mut world, "node-3").contains("\"localEndpoints\": 1,"), "{}", on_node(&mut world, "node-3"));
    assert!(on_node(&mut world, "node-1").contains("\"localEndpoints\": 0,"));
    let outside = world.run_command(&format!("curl -si http://172.18.0.2:{port}/healthz"));
    assert!(outside.stdout.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "{outside:?}");
    assert!(outside.stdout.contains("X-Load-Balancing-Endpoint-Weight: 0\r\n"), "{outside:?}");
    let metrics = world.run_command("minikube ssh -n node-1 -- curl -s localhost:10249/proxyMode");
    assert_eq!(metrics.stdout, "iptables");
    let not_outside = world.run_command("curl -sS http://172.18.0.2:10249/proxyMode");
    assert_eq!(not_outside.exit_code, 7, "the metrics server binds 127.0.0.1: {not_outside:?}");
    // Three failed checks 3 s apart take node-1 and node-2 out.
    world.run_until(world.now() + 10_000);
    for _ in 0..12 {
        assert_eq!(client_ip(&mut world, "curl -s --max-time 2 http://172.18.255.1/clientip").as_deref(), Some("172.18.0.1"), "the client's address");
    }
    // Back to Cluster: the health check node port closes.
    world.run_command(r#"kubectl patch svc web -p '{"spec":{"externalTrafficPolicy":"Cluster"}}'"#);
    world.run_until(world.now() + 2_000);
    let closed = world.run_command(&format!("curl -sS http://172.18.0.2:{port}/healthz"));
    assert_eq!(closed.exit_code, 7, "{closed:?}");
}

// NetworkPolicy sees a masqueraded connection's new source: with every ingress to the web pod
// denied, a node port entered on another node arrives from that node's address and is dropped,
// while one entered on the pod's own node arrives from that node's address on the pod's veth
// (its pod range's gateway) — traffic from the pod's own node, which is always admitted.
#[test]
fn network_policy_sees_the_masqueraded_source() {
    let mut world = world();
    apply_yaml(&mut world, "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: deny}\nspec:\n  podSelector: {matchLabels: {app: web}}\n  policyTypes: [Ingress]\n");
    world.run_until(world.now() + 3_000);
    let other = world.run_command("curl -s --max-time 2 http://172.18.0.2:30080/clientip");
    assert_eq!(other.exit_code, 28, "from node-1's address: dropped: {other:?}");
    let own = world.run_command("curl -s --max-time 2 http://172.18.0.4:30080/clientip");
    assert_eq!(own.exit_code, 0, "from node-3's gateway: the pod's own node: {own:?}");
}
