//! Native tests: the views rendered to HTML with Yew's server renderer, from frames the real
//! simulation produced (no browser needed). Run with `cargo test -p kubesim-web`.
#![cfg(not(target_arch = "wasm32"))]

use kubesim_web::components::app::Controls;
use kubesim_web::components::cluster::ClusterView;
use kubesim_web::components::flow::{FlowProps, FlowView};
use kubesim_web::components::inspector::Inspector;
use kubesim_web::components::lifecycle::LifecycleView;
use kubesim_web::components::pods::{PodsProps, PodsView};
use kubesim_web::components::timeline::Timeline;
use kubesim_web::driver::Driver;
use kubesim_web::frame::Frame;
use kubesim_web::port::{Host, Port};
use kubesim_web::scenarios;
use kubesim_web::state::Selection;
use std::rc::Rc;
use yew::prelude::*;
use yew::LocalServerRenderer;

fn render<C: BaseComponent>(props: C::Properties) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let local = tokio::task::LocalSet::new();
    runtime.block_on(local.run_until(LocalServerRenderer::<C>::with_props(props).hydratable(false).render()))
}

/// The nginx scenario after `ms` virtual milliseconds.
fn driver_at(ms: u64) -> (Port, Rc<Frame>) {
    let mut driver = Driver::new(scenarios::by_name("nginx").expect("nginx scenario"), 1);
    driver.engine_mut().advance(ms, &mut || false);
    let frame = driver.refresh(0.0);
    (Port::local(Host::from_driver(driver)), frame)
}

fn count(html: &str, needle: &str) -> usize {
    html.matches(needle).count()
}

#[derive(Properties, PartialEq)]
struct WithControlsProps {
    port: Port,
    children: Html,
}

/// Provides the `Controls` context the panels read (callbacks that do nothing).
#[function_component(WithControls)]
fn with_controls(props: &WithControlsProps) -> Html {
    let controls = Controls {
        dispatch: Callback::noop(),
        apply: Callback::noop(),
        command: Callback::noop(),
        seek: Callback::noop(),
        step: Callback::noop(),
        load: Callback::noop(),
        fork: Callback::noop(),
        port: props.port.clone(),
    };
    html! { <ContextProvider<Controls> context={controls}>{ props.children.clone() }</ContextProvider<Controls>> }
}

#[test]
fn cluster_view_renders_a_card_per_node_and_a_chip_per_pod() {
    let (sim, frame) = driver_at(20_000);
    let (sim, frame) = (sim, frame);
    let children = html! { <ClusterView scene={frame.scene.clone()} selection={Selection::None} on_select={Callback::noop()} workloads={frame.workloads.clone()} compact={false} /> };
    let html = render::<WithControls>(WithControlsProps { port: sim, children });
    assert_eq!(count(&html, "<article aria-label=\"node "), 3, "three node cards: {html}");
    let running = frame.scene.pods.iter().filter(|p| p.status == "Running").count();
    assert!(running >= 3, "the Deployment's pods run after 20 s");
    assert!(count(&html, "class=\"ks-chip ") >= running, "a chip per pod");
    // Names and the kubectl STATUS words, and the requested/allocatable bars.
    for node in ["node-1", "node-2", "node-3"] {
        assert!(html.contains(node), "{node}");
    }
    assert!(html.contains("Running"));
    assert_eq!(count(&html, "aria-label=\"CPU requested\""), 3, "a CPU requested bar per node");
}

#[test]
fn lifecycle_graph_counts_pods_per_state() {
    let (sim, frame) = driver_at(20_000);
    let children = html! { <LifecycleView frame={frame.clone()} selection={Selection::None} on_select={Callback::noop()} /> };
    let html = render::<WithControls>(WithControlsProps { port: sim, children });
    assert_eq!(count(&html, "ks-state-node"), 15, "one graph node per lifecycle state");
    for state in ["Pending", "ContainerCreating", "Ready", "Terminating", "Succeeded", "Failed", "CrashLoopBackOff", "ImagePullBackOff", "Evicted", "OOMKilled"]
    {
        assert!(html.contains(state), "state {state} drawn");
    }
}

#[test]
fn flow_view_shows_components_writes_and_watch_events() {
    // Stop just after the start, while messages are still in the log.
    let (_, frame) = driver_at(2_500);
    let props = FlowProps { frame: frame.clone(), selection: Selection::None, on_select: Callback::noop() };
    let html = render::<FlowView>(props);
    for component in ["kube-apiserver", "etcd", "kube-scheduler", "node-1", "kubelet", "kube-proxy", "containerd", "CNI", "CSI", "kube-dns"] {
        assert!(html.contains(&format!(">{component}</text>")), "{component} box drawn");
    }
    for group in ["Workloads · ", "Nodes · ", "Network · ", "Storage · ", "Namespaces &amp; GC · ", "Add-ons · "] {
        assert!(html.contains(&format!(">{group}")), "{group} group drawn");
    }
    // Groups are closed buttons until opened; the controllers are in them.
    assert!(html.contains("role=\"button\" tabindex=\"0\" aria-expanded=\"false\" aria-label=\"Workloads · "), "a group is a keyboard button");
    assert!(!html.contains(">replicaset</text>"), "closed groups draw no controllers");
    assert!(html.contains("<span class=\"ks-dot watch\"></span>watch MODIFIED pod/"), "watch events in the log");
    assert!(html.contains("<span class=\"ks-dot modified\"></span>MODIFIED pod/"), "writes in the log");
    assert!(html.contains("RunPodSandbox") || html.contains("PullImage"), "CRI calls in the log");
    assert!(html.contains("ks-flow-watches"), "the watch-event filter");
}

#[test]
fn pods_table_lists_every_pod_with_kubectl_columns() {
    let (_, frame) = driver_at(20_000);
    let props = PodsProps { scene: frame.scene.clone(), selection: Selection::None, on_select: Callback::noop() };
    let html = render::<PodsView>(props);
    for column in ["NAME", "READY", "STATUS", "RESTARTS", "NODE"] {
        assert!(html.contains(column), "column {column}");
    }
    for pod in frame.scene.pods.iter() {
        assert!(html.contains(&pod.name), "{} listed", pod.name);
    }
    for filter in ["Filter by status", "Filter by namespace", "Filter by node", "Filter by owner", "Label selector"] {
        assert!(html.contains(filter), "{filter} control");
    }
    assert!(html.contains("<option value=\"node-2\">node-2</option>"), "the node filter lists the nodes");
}

#[test]
fn inspector_describes_the_selected_pod_with_its_events() {
    let (sim, frame) = driver_at(20_000);
    let pod = frame.scene.pods.iter().find(|p| p.status == "Running").expect("a running pod").clone();
    let selection = Selection::Pod { namespace: pod.namespace.clone(), name: pod.name.clone(), uid: pod.uid.clone() };
    let children = html! { <Inspector selection={selection} frame={frame.clone()} /> };
    let html = render::<WithControls>(WithControlsProps { port: sim, children });
    assert!(html.contains(&pod.name));
    assert!(html.contains("Scheduled"), "the scheduler's Event: {html}");
}

#[test]
fn timeline_shows_the_virtual_clock_and_controls() {
    let (sim, frame) = driver_at(12_345);
    let children = html! { <Timeline frame={frame.clone()} playing={false} speed={1.0} compact={false} /> };
    let html = render::<WithControls>(WithControlsProps { port: sim, children });
    assert!(html.contains("00:12.345"), "virtual clock: {html}");
    assert!(html.contains("aria-label=\"Play"), "a labelled play button");
}

/// How long the 10,000-pod scenario takes to converge natively (a benchmark, not a test:
/// `cargo test -p kubesim-web --release --test ssr -- --ignored --nocapture huge`).
#[test]
#[ignore]
fn huge_cluster_converges() {
    let started = std::time::Instant::now();
    let mut driver = Driver::new(scenarios::by_name("huge-cluster").expect("scenario"), 1);
    let mut t = 0;
    loop {
        // Each virtual second, count the Running pods (the 10,000 and the 2 CoreDNS pods, what
        // the e2e waits for) in the store: a refresh would cost 80 ms each time and inflate the
        // figure the browser's is compared with.
        t += 1_000;
        driver.engine_mut().advance(t, &mut || false);
        let store = driver.engine().world().api().store();
        let running =
            store.list(("", "pods"), None).filter_map(|o| o.as_pod()).filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")).count();
        if t % 5_000 == 0 || running >= 10_002 {
            eprintln!("virtual {:>4} s: {running} running, wall {:.1} s", t / 1000, started.elapsed().as_secs_f64());
        }
        if running >= 10_002 || t >= 600_000 {
            break;
        }
    }
    let started = std::time::Instant::now();
    for _ in 0..10 {
        std::hint::black_box(kubesim_sim::view::snapshot(driver.engine().world()));
    }
    eprintln!("view::snapshot of 10,000 pods: {:.1} ms", started.elapsed().as_secs_f64() * 100.0);
    let mut cache = kubesim_sim::view::SnapshotCache::default();
    let first = kubesim_sim::view::snapshot_cached(driver.engine().world(), &mut cache);
    let started = std::time::Instant::now();
    for _ in 0..10 {
        std::hint::black_box(kubesim_sim::view::snapshot_cached(driver.engine().world(), &mut cache));
    }
    eprintln!("  again with the pod views cached (nothing changed): {:.1} ms", started.elapsed().as_secs_f64() * 100.0);
    assert_eq!(first, kubesim_sim::view::snapshot(driver.engine().world()));
    let started = std::time::Instant::now();
    let store = driver.engine().world().api().store();
    for _ in 0..10 {
        let views: Vec<_> = store.list(("", "pods"), None).filter_map(|o| o.as_pod()).map(kubesim_sim::view::pod_view).collect();
        std::hint::black_box(views);
    }
    eprintln!("  of which pod views: {:.1} ms", started.elapsed().as_secs_f64() * 100.0);
    let started = std::time::Instant::now();
    for _ in 0..10 {
        std::hint::black_box(store.list(("", "pods"), None).count());
    }
    eprintln!("  of which listing: {:.1} ms", started.elapsed().as_secs_f64() * 100.0);
    let started = std::time::Instant::now();
    for _ in 0..10 {
        std::hint::black_box(kubesim_sim::view::workloads(driver.engine().world()));
    }
    eprintln!("view::workloads: {:.1} ms", started.elapsed().as_secs_f64() * 100.0);
}

#[test]
fn flow_filter_shows_each_kind_and_follows_the_selection() {
    use kubesim_web::components::flow::FlowFilter;
    use kubesim_web::engine::{FlowItem, FlowKind};
    let key = |name: &str| kubesim_sim::view::ObjectKey {
        group: String::new(),
        resource: "pods".into(),
        kind: "Pod".into(),
        namespace: "default".into(),
        name: name.into(),
    };
    let write =
        FlowItem { kind: FlowKind::Write, t_ms: 1, from: "kubectl".into(), to: "apiserver".into(), what: "ADDED pod/default/a".into(), object: Some(key("a")) };
    let watch = FlowItem {
        kind: FlowKind::Watch,
        t_ms: 3,
        from: "apiserver".into(),
        to: "scheduler".into(),
        what: "watch ADDED pod/default/b".into(),
        object: Some(key("b")),
    };
    let call = FlowItem {
        kind: FlowKind::Call,
        t_ms: 5,
        from: "kubelet/node-1".into(),
        to: "cri/node-1".into(),
        what: "PullImage default/a nginx".into(),
        object: None,
    };
    let all = FlowFilter::default();
    let none = Selection::None;
    assert!(all.shows(&write, &none) && all.shows(&watch, &none) && all.shows(&call, &none));
    let no_watches = FlowFilter { watches: false, ..all };
    assert!(no_watches.shows(&write, &none) && !no_watches.shows(&watch, &none) && no_watches.shows(&call, &none));
    let no_calls = FlowFilter { calls: false, ..all };
    assert!(!no_calls.shows(&call, &none));
    let only = FlowFilter { only_selected: true, ..all };
    let a = Selection::Pod { namespace: "default".into(), name: "a".into(), uid: "u".into() };
    assert!(only.shows(&write, &a), "the selected pod's write");
    assert!(!only.shows(&watch, &a), "another pod's watch event");
    assert!(only.shows(&call, &a), "a CRI call naming the selected pod");
    assert!(only.shows(&watch, &none), "nothing selected: nothing filtered out");
}

#[test]
fn event_log_lists_events_with_object_reason_component_and_type_filters() {
    let (_, frame) = driver_at(20_000);
    let props = kubesim_web::components::panel::EventLogProps { frame: frame.clone(), selection: Selection::None };
    let html = render::<kubesim_web::components::panel::EventLog>(props);
    for filter in ["Filter events by object", "Filter events by reason", "Filter events by component", "Filter events by type"] {
        assert!(html.contains(filter), "{filter} control");
    }
    // The reasons and components of the Events in the store are offered.
    for option in [
        "<option value=\"Scheduled\">Scheduled</option>",
        "<option value=\"Pulled\">Pulled</option>",
        "<option value=\"default-scheduler\">default-scheduler</option>",
        "<option value=\"kubelet\">kubelet</option>",
    ] {
        assert!(html.contains(option), "{option} offered");
    }
    assert!(html.contains(&format!("{} events", frame.events.len())));
}

// The network view of the "Service and DNS" scenario: the web Service with its endpoint, and
// packets named end to end (client → kube-dns → a CoreDNS pod; client → web → a web pod).
#[test]
fn network_view_names_services_and_packets() {
    use kubesim_web::components::network::{NetworkProps, NetworkViewPanel};
    let mut driver = Driver::new(scenarios::by_name("service-dns").expect("service-dns scenario"), 1);
    driver.engine_mut().advance(35_000, &mut || false);
    let frame = driver.refresh(0.0);
    let html = render::<NetworkViewPanel>(NetworkProps { network: frame.network.clone(), now: frame.t_ms, external: None });
    assert!(html.contains("default/web"), "{html}");
    assert!(html.contains(">1/1<"), "one ready endpoint: {html}");
    assert!(html.contains("default/client"), "{html}");
    assert!(html.contains("kube-system/kube-dns:dns"), "{html}");
    assert!(count(&html, "ks-net-packet") >= 10, "{html}");
    assert!(!html.contains("kube-system/coredns<"), "kube-system Services are hidden by default");
}

// The network view's external client: a request from the workstation to the ingress
// controller's node port with a Host header. The view shows curl's answer and selects the
// request's packet: its hops — the workstation, the node's node-port rule, ingress-nginx's
// server and location, the second connection to a web2 pod, the answer relayed — are listed.
#[test]
fn the_external_client_sends_from_the_workstation_and_shows_the_hops() {
    use kubesim_web::components::network::{external_request_line, NetworkProps, NetworkViewPanel};
    use kubesim_web::state::Action;
    assert_eq!(external_request_line("http://172.18.0.2:30080/", ""), Ok("curl -sS -i --max-time 10 'http://172.18.0.2:30080/'".to_string()));
    assert_eq!(
        external_request_line(" http://172.18.0.2/v2 ", "hello.example"),
        Ok("curl -sS -i --max-time 10 -H 'Host: hello.example' 'http://172.18.0.2/v2'".to_string())
    );
    assert!(external_request_line("172.18.0.2", "").is_err(), "a URL");
    assert!(external_request_line("http://x/'; rm -rf /", "").is_err(), "no shell characters");
    let mut driver = scenario_world("ingress", 50_000);
    let frame = driver.refresh(0.0);
    let target = frame.network.external_targets.iter().find(|t| t.starts_with("http://172.18.")).cloned().expect("the controller's node port");
    // Through the port's host, as the view sends it: the console line and a new frame come back.
    let mut host = Host::from_driver(driver);
    let mut actions = Vec::new();
    let result = host.send_external(&format!("{target}v2"), "hello.example", 0.0, &mut |a| actions.push(a)).expect("sent");
    assert!(
        matches!(&actions[..], [Action::Console(entry), Action::Frame(_)] if entry.line.starts_with("curl -sS -i") && entry.stdout == result.output),
        "{actions:?}"
    );
    assert!(result.output.starts_with("HTTP/1.1 200 OK"), "{result:?}");
    assert!(result.output.contains("Version: 2.0.0"), "{result:?}");
    let (_, packet) = result.packet.clone().expect("the request's packet");
    assert_eq!((packet.from.as_str(), packet.outcome.as_str()), ("workstation 172.18.0.1", "ok"), "{packet:?}");
    let frame = host.frame();
    assert_eq!(frame.network.packets.iter().find(|p| p.t_ms == result.t_ms && p.from == packet.from), Some(&packet), "the packet log has it");
    let html = render::<NetworkViewPanel>(NetworkProps { network: frame.network.clone(), now: frame.t_ms, external: Some(Rc::new(result.clone())) });
    assert!(html.contains("aria-label=\"External client\"") && html.contains("aria-label=\"Host header\""), "{html}");
    assert!(html.contains(&target), "the node port is offered: {html}");
    assert!(html.contains("HTTP/1.1 200 OK"), "curl's answer: {html}");
    assert!(html.contains("aria-label=\"Packet path\""), "the request's packet is selected: {html}");
    for hop in [
        "workstation 172.18.0.1",
        "node-1's kube-proxy rules",
        "Service rule ingress-nginx/ingress-nginx-controller:http DNATs it to ingress-nginx/ingress-nginx-controller-",
        "Host hello.example, path /v2: server hello.example, location /v2 (Prefix) of Ingress default/",
        "relays the answer to the client: HTTP 200",
    ] {
        assert!(html.contains(hop), "hop {hop:?}: {html}");
    }
    assert!(count(&html, "class=\"ks-net-hop\"") >= 6, "{html}");
}

// The who-can-connect matrix is confirmed by probes (the driver probes it when it builds the
// network view); after a partition of node-1 from the other nodes, the cells between node-1's
// pods and the others disagree with the policies' verdicts and are marked.
#[test]
fn the_matrix_is_confirmed_by_probes_and_marks_disagreements() {
    use kubesim_web::components::network::{NetworkProps, NetworkViewPanel};
    use kubesim_web::engine::Input;
    let mut driver = scenario_world("netpol", 45_000);
    let frame = driver.refresh(0.0);
    let matrix = frame.network.matrix.clone().expect("a policy exists");
    assert_eq!(matrix.probed_at, Some(45_000), "probed when the view was built");
    assert!(matrix.disagreements().is_empty(), "{matrix:?}");
    let html = render::<NetworkViewPanel>(NetworkProps { network: frame.network.clone(), now: frame.t_ms, external: None });
    assert!(html.contains("connection probes at 00:45.000: they agree"), "{html}");
    assert!(!html.contains("disagree\""), "{html}");
    for line in ["fault partition node-1 node-2", "fault partition node-1 node-3"] {
        let result = driver.engine_mut().apply_now(Input::Command(line.into()));
        assert!(result.errors.is_empty(), "{result:?}");
    }
    let frame = driver.refresh(0.0);
    let matrix = frame.network.matrix.clone().expect("a policy exists");
    let disagree = matrix.disagreements();
    assert!(!disagree.is_empty(), "the partition cuts allowed flows: {matrix:?}");
    let html = render::<NetworkViewPanel>(NetworkProps { network: frame.network.clone(), now: frame.t_ms, external: None });
    assert!(html.contains("cells disagree (marked !)"), "{html}");
    assert_eq!(count(&html, "disagree\""), disagree.len(), "{html}");
    assert!(html.contains("the probe disagrees"), "{html}");
}

/// The gallery scenario `name` after `ms` virtual milliseconds: its world.
fn scenario_run(name: &str, ms: u64) -> Driver {
    let mut driver = Driver::new(scenarios::by_name(name).unwrap_or_else(|| panic!("scenario {name}")), 1);
    driver.engine_mut().advance(ms, &mut || false);
    driver
}

fn scenario_world(name: &str, ms: u64) -> Driver {
    let driver = scenario_run(name, ms);
    for (input, result) in driver.engine().inputs() {
        if input.t_ms <= ms {
            let result = result.unwrap_or_else(|| panic!("{name}: {} not applied", input.label()));
            assert!(result.errors.is_empty(), "{name}: {}: {:?}", input.label(), result.errors);
        }
    }
    driver
}

fn pods_of(driver: &Driver, prefix: &str) -> Vec<kubesim_sim::view::PodView> {
    kubesim_sim::view::snapshot(driver.engine().world()).pods.into_iter().filter(|p| p.name.starts_with(prefix)).collect()
}

// Each gallery scenario shows what its card promises.
#[test]
fn gallery_scenarios_do_what_they_say() {
    let hpa = scenario_world("hpa", 200_000);
    let replicas = pods_of(&hpa, "php-apache-").iter().filter(|p| p.status == "Running").count();
    assert!(replicas >= 2, "the HPA scaled php-apache under load: {replicas}");

    let sts = scenario_world("statefulset", 90_000);
    let web: Vec<_> = pods_of(&sts, "web-").into_iter().filter(|p| p.status == "Running").map(|p| p.name).collect();
    assert_eq!(web, vec!["web-0", "web-1", "web-2"], "web-1 came back");
    let bound = kubesim_sim::view::object_keys(sts.engine().world()).into_iter().filter(|k| k.kind == "PersistentVolumeClaim").count();
    assert_eq!(bound, 3, "one claim per ordinal");

    let ds = scenario_world("daemonset", 15_000);
    assert_eq!(pods_of(&ds, "log-agent-").iter().filter(|p| p.status == "Running").count(), 3, "one per node");

    let cron = scenario_world("cronjob", 190_000);
    assert!(pods_of(&cron, "hello-").iter().filter(|p| p.status == "Completed").count() >= 2, "a Job a minute");

    let probes = scenario_world("probes", 75_000);
    let liveness = pods_of(&probes, "liveness-exec").remove(0);
    assert!(liveness.restarts >= 1, "restarted by its liveness probe: {liveness:?}");
    assert_eq!(pods_of(&probes, "readiness-exec")[0].ready, "1/1");

    let ingress = scenario_world("ingress", 90_000);
    let world = ingress.engine().world();
    let client = world.api().store().get(("", "pods"), "default", "client").and_then(|p| p.as_pod().cloned()).unwrap();
    let node = client.spec.and_then(|s| s.node_name).unwrap();
    let id = world.host(&node).unwrap().cri.pod_container_attempts(client.metadata.uid.as_deref().unwrap(), "client").last().map(|c| c.id.clone()).unwrap();
    let log = world.host(&node).unwrap().cri.container_logs(&id).unwrap_or_default();
    assert!(log.contains("hello.example/: Hello, world! Version: 1.0.0 Hostname: web-"), "the path fan-out: {log}");
    assert!(log.contains("hello.example/v2: Hello, world! Version: 2.0.0 Hostname: web2-"), "{log}");
    assert!(log.contains("v1.example/: Hello, world! Version: 1.0.0") && log.contains("shop.example.com/: Hello, world! Version: 2.0.0"), "by host: {log}");
    assert!(log.contains("hello.example/v2: wget: server returned error: HTTP/1.1 503 Service Temporarily Unavailable"), "web2 at 0 replicas: {log}");
    let block = scenario_world("block-storage", 100_000);
    let world = block.engine().world();
    let db = world.api().lookup(("", "pods"), "default", "db-0").and_then(|o| o.as_pod().cloned()).expect("db-0");
    assert_eq!(db.spec.as_ref().and_then(|s| s.node_name.as_deref()), Some("a2"), "moved to the zone's other node");
    let uid = db.metadata.uid.clone().unwrap_or_default();
    let logs = world.host("a2").unwrap().cri.logs(&uid, "db", false).unwrap();
    assert_eq!(logs, "started on a1\nstarted on a2\n", "the disk's file followed it");

    let preemption = scenario_world("preemption", 70_000);
    assert_eq!(pods_of(&preemption, "frontend")[0].status, "Running", "the high-priority pod runs");
    assert!(pods_of(&preemption, "batch-").iter().any(|p| p.status == "Pending"), "a preempted batch pod's replacement waits");

    let probes = scenario_world("probes", 45_000);
    let slow = pods_of(&probes, "slow-start").remove(0);
    assert_eq!((slow.ready.as_str(), slow.restarts), ("1/1", 0), "the startup probe held the liveness probe off: {slow:?}");
}

fn events_of(driver: &Driver, reason: &str) -> Vec<kubesim_sim::view::EventView> {
    kubesim_sim::view::events(driver.engine().world()).into_iter().filter(|e| e.reason == reason).collect()
}

// The scheduling, disruption and container-lifecycle scenarios show what their cards promise.
#[test]
fn lifecycle_and_scheduling_scenarios_do_what_they_say() {
    let sidecar = scenario_world("sidecar", 30_000);
    assert_eq!(pods_of(&sidecar, "app-with-sidecar")[0].ready, "2/2", "the sidecar counts in READY");
    let sidecar = scenario_world("sidecar", 80_000);
    assert!(pods_of(&sidecar, "app-with-sidecar").is_empty(), "the pod went");
    let killing: Vec<String> = events_of(&sidecar, "Killing").into_iter().map(|e| e.message).collect();
    let app = killing.iter().position(|m| m.contains("container app"));
    let shipper = killing.iter().position(|m| m.contains("container log-shipper"));
    assert!(app.is_some() && shipper.is_some() && app < shipper, "the app stops before its sidecar: {killing:?}");

    let prestop = scenario_world("prestop", 25_000);
    assert_eq!(pods_of(&prestop, "web")[0].status, "Terminating", "the hook is running");
    let prestop = scenario_world("prestop", 45_000);
    assert!(pods_of(&prestop, "web").is_empty(), "gone once the hook and SIGTERM are done");

    // A drain the budget blocks fails (kubectl would retry): the scenario runs it again.
    let drain = scenario_run("pdb-drain", 100_000);
    let web = pods_of(&drain, "web-");
    assert!(web.iter().all(|p| p.node.as_deref() != Some("node-1")), "node-1 emptied: {web:?}");
    assert_eq!(web.iter().filter(|p| p.status == "Running").count(), 3);
    let refused = kubesim_sim::view::events(drain.engine().world()).into_iter().any(|e| e.message.contains("disruption budget"));
    let drains: Vec<String> = drain.engine().inputs().filter_map(|(_, r)| r.map(|r| format!("{:?}", r))).collect();
    assert!(refused || drains.iter().any(|o| o.contains("violate the pod's disruption budget")), "the budget refused an eviction: {drains:?}");

    let taints = scenario_world("taints", 30_000);
    let web = pods_of(&taints, "web-");
    assert!(web.iter().all(|p| p.node.as_deref() != Some("node-1")), "web avoids the tainted node: {web:?}");
    assert_eq!(pods_of(&taints, "gpu-job")[0].node.as_deref(), Some("node-1"), "the toleration lets gpu-job in");
    let taints = scenario_world("taints", 60_000);
    let web = pods_of(&taints, "web-");
    assert!(web.iter().filter(|p| p.status == "Running").all(|p| p.node.as_deref() == Some("node-3")), "NoExecute evicted node-2's pods: {web:?}");

    let spread = scenario_world("topology-spread", 25_000);
    let mut zones = std::collections::BTreeMap::new();
    for p in pods_of(&spread, "web-") {
        *zones.entry(p.node.unwrap_or_default()).or_insert(0) += 1;
    }
    assert_eq!(zones.values().copied().collect::<Vec<_>>(), vec![2, 2, 2], "two per zone: {zones:?}");
    let spread = scenario_world("topology-spread", 70_000);
    assert_eq!(pods_of(&spread, "web-").iter().filter(|p| p.status == "Pending").count(), 1, "one cannot keep the skew");

    let quota = scenario_world("quota", 30_000);
    assert_eq!(pods_of(&quota, "web-").len(), 3, "the quota allows 3 pods");
    assert!(events_of(&quota, "FailedCreate").iter().any(|e| e.message.contains("exceeded quota: team-a-quota")), "the refusals are events");
    let quota = scenario_world("quota", 70_000);
    assert_eq!(pods_of(&quota, "web-").iter().filter(|p| p.status == "Running").count(), 5, "raised quota, all 5 run");
}

/// The latest packet `from` sent with this protocol at or after `since`.
fn last_packet(driver: &Driver, from: &str, protocol: &str, since: u64) -> Option<kubesim_sim::view::PacketView> {
    kubesim_sim::view::network(driver.engine().world(), 400).packets.into_iter().find(|p| p.from == from && p.protocol == protocol && p.t_ms >= since)
}

// The network scenarios show what their cards promise: policies dropping and admitting live
// traffic, a DNS-forgetting egress policy, and a zone partition Kubernetes does not see.
#[test]
fn network_scenarios_do_what_they_say() {
    let netpol = scenario_world("netpol", 35_000);
    for client in ["default/frontend", "default/intruder"] {
        let p = last_packet(&netpol, client, "tcp", 25_000).unwrap_or_else(|| panic!("{client} sent nothing"));
        assert_eq!(p.outcome, "dropped", "{p:?}");
        assert!(p.dropped_by.as_deref().is_some_and(|w| w.contains("isolated by default/default-deny-ingress")), "{p:?}");
    }
    let matrix = kubesim_sim::view::network(netpol.engine().world(), 10).matrix.expect("a policy exists");
    assert!(matrix.pods.iter().any(|p| p == "default/intruder"), "{matrix:?}");
    let netpol = scenario_world("netpol", 55_000);
    assert_eq!(last_packet(&netpol, "default/frontend", "tcp", 45_000).expect("frontend").outcome, "ok");
    assert_eq!(last_packet(&netpol, "default/intruder", "tcp", 45_000).expect("intruder").outcome, "dropped");

    let dns = scenario_world("netpol-dns", 40_000);
    let q = last_packet(&dns, "default/client", "dns", 25_000).expect("the client's queries");
    assert_eq!(q.outcome, "dropped", "{q:?}");
    assert!(q.dropped_by.as_deref().is_some_and(|w| w.starts_with("egress of default/client")), "{q:?}");
    let dns = scenario_world("netpol-dns", 60_000);
    assert_eq!(last_packet(&dns, "default/client", "tcp", 50_000).expect("fetches again").outcome, "ok");

    let zones = scenario_world("zone-partition", 50_000);
    let net = kubesim_sim::view::network(zones.engine().world(), 400);
    let tcp: Vec<_> = net.packets.iter().filter(|p| p.from == "default/client" && p.protocol == "tcp" && p.t_ms >= 25_000).collect();
    assert!(tcp.iter().any(|p| p.outcome == "timeout"), "connections to the zone-b endpoint time out: {tcp:?}");
    assert!(tcp.iter().any(|p| p.outcome == "ok"), "the others still work: {tcp:?}");
    let web = net.services.iter().find(|s| s.name == "web").expect("web");
    assert_eq!((web.endpoints_ready, web.endpoints_total), (3, 3), "every endpoint stays ready");

    // Rolling update: only new pods answer after the rollout; connections that hit an old
    // pod after it stopped and before kube-proxy's sync were refused.
    let rolling = scenario_world("rolling-service", 70_000);
    let log = logs_of(&rolling, "client");
    let pods: Vec<String> = pods_of(&rolling, "web-").into_iter().map(|p| p.name).collect();
    let last: Vec<&str> = log.lines().filter(|l| l.starts_with("web-")).rev().take(20).collect();
    assert!(last.iter().all(|l| pods.iter().any(|p| p == l)), "after the rollout only the new pods answer: {last:?} vs {pods:?}");
    let old: Vec<&str> = log.lines().filter(|l| l.starts_with("web-") && !pods.iter().any(|p| p == l)).collect();
    assert!(!old.is_empty(), "the old pods answered before: {log}");
    assert!(log.contains("Connection refused"), "a connection reached a stopped pod before kube-proxy's sync: {log}");

    // Readiness: web-b gets no traffic while not ready, and gets it again after.
    let count = |log: &str, from: usize, to: usize, pod: &str| log.lines().skip(from).take(to - from).filter(|l| *l == pod).count();
    let ready = scenario_world("readiness", 29_000);
    let before = logs_of(&ready, "client").lines().count();
    assert!(count(&logs_of(&ready, "client"), 0, before, "web-b") > 0, "both pods serve at first");
    let unready = scenario_world("readiness", 59_000);
    let log = logs_of(&unready, "client");
    let during = log.lines().count();
    assert_eq!(pods_of(&unready, "web-b")[0].ready, "0/1", "web-b not Ready, still running");
    let skip = before + 20; // three failed probes and kube-proxy's sync after the removal
    assert_eq!(count(&log, skip, during, "web-b"), 0, "no traffic to web-b: {log}");
    assert!(count(&log, skip, during, "web-a") > 20, "{log}");
    let back = scenario_world("readiness", 90_000);
    let log = logs_of(&back, "client");
    assert!(count(&log, during + 20, log.lines().count(), "web-b") > 0, "web-b serves again: {log}");

    // A thousand requests a second: the web Service's last 10 s of traffic, all answered.
    let traffic = scenario_world("traffic", 40_000);
    let net = kubesim_sim::view::network(traffic.engine().world(), 10);
    let web = net.services.iter().find(|s| s.name == "web").expect("web");
    let load = net.load_generators.iter().find(|g| g.name == "load").expect("the clients are a load generator");
    assert_eq!((load.replicas, load.interval_s), (25, 0.02), "25 clients every 20 ms: the rate control's nominal 1,250/s");
    let per_second = web.recent.0 as u64 * 1000 / net.recent_window_ms.max(1);
    assert!(
        per_second >= 900 && web.recent.1 == 0,
        "about 1,000 requests a virtual second, none failed: {per_second}/s {:?} over {} ms",
        web.recent,
        net.recent_window_ms
    );

    // Headless DNS: the Service's name answers one record per ready pod; web-2 after the scale.
    let headless = scenario_world("headless-dns", 35_000);
    let log = logs_of(&headless, "client");
    assert!(log.contains("web-0.nginx.default.svc.cluster.local") && log.contains("web-1.nginx.default.svc.cluster.local"), "{log}");
    assert!(!log.contains("web-2.nginx"), "{log}");
    let scaled = scenario_world("headless-dns", 80_000);
    let log = logs_of(&scaled, "client");
    assert!(log.contains("Address 3: ") && log.contains("web-2.nginx.default.svc.cluster.local"), "{log}");
}

/// The storage view's claim `namespace/name` in a scenario's world now.
fn claim_of(driver: &Driver, name: &str) -> kubesim_sim::view::ClaimRow {
    kubesim_sim::view::storage(driver.engine().world()).claims.into_iter().find(|c| c.name == name).unwrap_or_else(|| panic!("claim {name}"))
}

fn render_storage(mut driver: Driver, selection: Selection) -> String {
    use kubesim_web::components::storage::StorageViewPanel;
    let frame = driver.refresh(0.0);
    let port = Port::local(Host::from_driver(driver));
    let children = html! { <StorageViewPanel storage={frame.storage.clone()} events={frame.events.clone()} now={frame.t_ms} selection={selection} on_select={Callback::noop()} /> };
    render::<WithControls>(WithControlsProps { port, children })
}

fn pvc_selection(name: &str) -> Selection {
    Selection::Object(kubesim_sim::view::ObjectKey {
        group: String::new(),
        resource: "persistentvolumeclaims".into(),
        kind: "PersistentVolumeClaim".into(),
        namespace: "default".into(),
        name: name.into(),
    })
}

fn logs_of(driver: &Driver, pod: &str) -> String {
    let world = driver.engine().world();
    let p = world.api().lookup(("", "pods"), "default", pod).and_then(|o| o.as_pod().cloned()).unwrap_or_else(|| panic!("{pod}"));
    let node = p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_else(|| panic!("{pod} on a node"));
    let container = p.spec.as_ref().unwrap().containers[0].name.clone();
    world.host(&node).unwrap().cri.logs(p.metadata.uid.as_deref().unwrap(), &container, false).unwrap_or_default()
}

// The storage scenarios show what their cards promise, and the storage view draws each claim
// with its path: WaitForFirstConsumer until the first pod, then provisioned on its node and
// mounted; a StatefulSet's claims and files kept through a rolling restart; an attach that
// fails at the attach step with the driver's error while a working claim is published; the
// block disk that moves between the nodes of its zone.
#[test]
fn storage_scenarios_do_what_they_say() {
    use kubesim_sim::view::{ClaimStage, StepState};
    for name in ["wffc", "statefulset-restart", "attach-failure", "block-storage", "statefulset"] {
        assert_eq!(scenarios::by_name(name).unwrap().view, "storage", "{name} opens the storage view");
    }

    // WaitForFirstConsumer: Pending with nothing provisioned until 20 s.
    let wffc = scenario_world("wffc", 15_000);
    let notes = claim_of(&wffc, "notes");
    assert_eq!(
        (notes.stage, notes.phase.as_str(), notes.class.as_str(), notes.volume.as_ref()),
        (ClaimStage::WaitForFirstConsumer, "Pending", "standard", None)
    );
    assert_eq!(notes.path[0].state, StepState::Waiting);
    assert!(kubesim_sim::view::storage(wffc.engine().world()).volumes.is_empty(), "nothing provisioned");
    let events = kubesim_sim::view::events(wffc.engine().world());
    assert!(events.iter().any(|e| e.reason == "WaitForFirstConsumer" && e.object == "persistentvolumeclaim/notes"), "{events:?}");
    let html = render_storage(wffc, Selection::None);
    assert!(html.contains("data-claim=\"default/notes\"") && html.contains("data-stage=\"WaitForFirstConsumer\""), "{html}");
    assert!(html.contains("data-step=\"provision\" data-state=\"waiting\""), "{html}");
    // Then provisioned on the writer's node, bound and mounted; the file is in the volume.
    let wffc = scenario_world("wffc", 40_000);
    let notes = claim_of(&wffc, "notes");
    assert_eq!(notes.stage, ClaimStage::Published, "{notes:?}");
    let node = notes.node.clone().expect("on a node");
    assert_eq!(notes.pods, ["writer"]);
    assert!(notes.path[0].detail.contains(&format!("on {node} by rancher.io/local-path")), "{:?}", notes.path[0]);
    assert_eq!(
        notes.path.iter().map(|s| s.state).collect::<Vec<_>>(),
        [StepState::Done, StepState::Done, StepState::Skipped, StepState::Skipped, StepState::Done]
    );
    assert_eq!(logs_of(&wffc, "writer"), format!("written by writer on {node}\n"));
    let files = kubesim_sim::view::volume_files(wffc.engine().world(), notes.volume.as_deref().unwrap()).expect("files");
    assert!(files.location.starts_with(&format!("{node}:/var/local-path-provisioner/pvc-")), "{}", files.location);
    assert_eq!(
        files.entries.iter().map(|e| (e.path.as_str(), e.preview.clone())).collect::<Vec<_>>(),
        [("/notes.txt", Some(format!("written by writer on {node}\n")))]
    );
    let html = render_storage(wffc, pvc_selection("notes"));
    assert!(html.contains("data-stage=\"Published\""), "{html}");
    assert!(html.contains("aria-label=\"claim default/notes\""), "the selected claim's details: {html}");
    assert!(html.contains("/notes.txt") && html.contains("written by writer on"), "its files: {html}");
    assert!(html.contains("ProvisioningSucceeded"), "its events: {html}");

    // A StatefulSet's claims keep their volumes and files through a rolling restart.
    let sts = scenario_world("statefulset-restart", 30_000);
    let before: Vec<_> = ["data-counter-0", "data-counter-1"].iter().map(|c| claim_of(&sts, c)).collect();
    assert!(before.iter().all(|c| c.stage == ClaimStage::Published), "{before:?}");
    let sts = scenario_world("statefulset-restart", 120_000);
    for (old, pod) in before.iter().zip(["counter-0", "counter-1"]) {
        let now = claim_of(&sts, &old.name);
        assert_eq!((now.stage, &now.volume, &now.node), (ClaimStage::Published, &old.volume, &old.node), "the same volume on the same node");
        let node = now.node.clone().unwrap();
        assert_eq!(logs_of(&sts, pod), format!("{pod} started on {node}\n{pod} started on {node}\n"), "the history survived the restart");
    }
    let restarted = sts.engine().world().api().lookup(("", "pods"), "default", "counter-0").unwrap();
    assert!(restarted.to_json().pointer("/metadata/annotations/kubectl.kubernetes.io~1restartedAt").is_some(), "a new pod of the restarted template");

    // The attach that fails: vault's claim is stuck at the attach step with the driver's error.
    let broken = scenario_world("attach-failure", 40_000);
    let vault = claim_of(&broken, "vault-data");
    assert_eq!(vault.stage, ClaimStage::Attaching);
    assert_eq!(vault.path[2].state, StepState::Failed);
    assert!(vault.problem.as_deref().is_some_and(|p| p.contains("the disk's encryption key is disabled")), "{vault:?}");
    assert_eq!(pods_of(&broken, "vault")[0].status, "ContainerCreating");
    let app = claim_of(&broken, "app-data");
    assert_eq!(app.stage, ClaimStage::Published, "{app:?}");
    assert_eq!(pods_of(&broken, "app")[0].status, "Running");
    let events = kubesim_sim::view::events(broken.engine().world());
    let failed = events.iter().find(|e| e.reason == "FailedAttachVolume" && e.object == "pod/vault").expect("FailedAttachVolume");
    assert!(failed.count >= 2, "retried: {failed:?}");
    let html = render_storage(broken, pvc_selection("vault-data"));
    assert!(html.contains("data-step=\"attach\" data-state=\"failed\""), "{html}");
    assert!(html.contains("ks-sto-error-row"), "the VolumeAttachment's error: {html}");
    assert!(html.contains("FailedAttachVolume"), "the pod's attach events: {html}");
    assert_eq!(count(&html, "class=\"ks-sto-step "), 10, "five steps per claim");

    // The block disk: published on a1, then (after the move) on a2, attached there.
    let block = scenario_world("block-storage", 20_000);
    let data = claim_of(&block, "data-db-0");
    assert_eq!((data.stage, data.node.as_deref()), (ClaimStage::Published, Some("a1")));
    assert!(data.path[2].detail.starts_with("attached to a1 as /dev/xvd"), "{:?}", data.path[2]);
    let block = scenario_world("block-storage", 100_000);
    let data = claim_of(&block, "data-db-0");
    assert_eq!((data.stage, data.node.as_deref()), (ClaimStage::Published, Some("a2")));
    let storage = kubesim_sim::view::storage(block.engine().world());
    assert_eq!(storage.attachments.iter().map(|a| (a.node.as_str(), a.attached)).collect::<Vec<_>>(), [("a2", true)]);
    let files = kubesim_sim::view::volume_files(block.engine().world(), data.volume.as_deref().unwrap()).unwrap();
    assert!(files.location.contains("attached to a2"), "{}", files.location);
    assert!(files.entries.iter().any(|f| f.path == "/log" && f.preview.as_deref() == Some("started on a1\nstarted on a2\n")), "{files:?}");
    let html = render_storage(block, Selection::None);
    for table in ["PersistentVolumeClaims", "PersistentVolumes", "VolumeAttachments", "StorageClasses", "CSI drivers"] {
        assert!(html.contains(table), "{table}: {html}");
    }
    assert!(html.contains("disk.csi.kubesim.io") && html.contains(">default<"), "the classes, the default one marked: {html}");
}

// The flow view's node agents and DNS: kube-proxy's rule syncs, the CNI plugin's ADDs and a
// sample of the pods' DNS queries to kube-dns are messages in the flow.
#[test]
fn the_flow_has_node_agent_calls_and_dns_queries() {
    let mut driver = scenario_world("service-dns", 40_000);
    let flow = driver.engine_mut().take_flow();
    let has = |from: &str, to: &str, what: &str| flow.iter().any(|i| i.from.starts_with(from) && i.to.starts_with(to) && i.what.starts_with(what));
    assert!(has("kube-proxy/", "iptables/", "iptables-restore"), "kube-proxy's syncs");
    assert!(has("kubelet/", "cni/", "ADD "), "CNI ADD");
    assert!(has("pods/", "coredns", "DNS "), "DNS queries");
    let dns: Vec<_> = flow.iter().filter(|i| i.what.starts_with("DNS ")).collect();
    assert!(dns.iter().any(|i| i.what.contains(" → ok")), "answered queries: {dns:?}");
    // Sampled: at most ten a second per node.
    let per_node = dns.iter().filter(|i| i.from == dns[0].from && i.t_ms / 1000 == dns[0].t_ms / 1000).count();
    assert!(per_node <= 10, "{per_node}");
}

fn why_of(driver: &Driver, namespace: &str, name: &str) -> Vec<kubesim_sim::why::WhyAnswer> {
    kubesim_sim::why::why(driver.engine().world(), namespace, name)
}

fn answer_to<'a>(answers: &'a [kubesim_sim::why::WhyAnswer], question: &str) -> &'a kubesim_sim::why::WhyAnswer {
    answers.iter().find(|a| a.question == question).unwrap_or_else(|| panic!("no {question:?} in {answers:#?}"))
}

// The inspector's Why tab answers from the model's records, each with its moment.
#[test]
fn the_why_tab_answers_from_the_records() {
    let nginx = scenario_world("nginx", 30_000);
    let pod = pods_of(&nginx, "nginx-").remove(0);
    let answers = why_of(&nginx, &pod.namespace, &pod.name);
    let node = answer_to(&answers, "Why this node?");
    assert!(node.answer.starts_with(&format!("the scheduler scored {} highest", pod.node.clone().unwrap())), "{node:?}");
    assert!(node.t_ms.is_some() && node.source == "default-scheduler");
    let ip = answer_to(&answers, "Why this IP?");
    assert!(ip.answer.contains(pod.ip.as_deref().unwrap()) && ip.answer.contains("10.244."), "{ip:?}");

    let pending = scenario_world("unschedulable", 20_000);
    let pod = pods_of(&pending, "").into_iter().find(|p| p.status == "Pending").expect("a pending pod");
    let answers = why_of(&pending, &pod.namespace, &pod.name);
    let why = answer_to(&answers, "Why is it Pending?");
    assert!(why.answer.contains("nodes are available"), "the FitError: {why:?}");
    assert!(!why.details.is_empty(), "per-node verdicts: {why:?}");

    let probes = scenario_world("probes", 15_000);
    let answers = why_of(&probes, "default", "readiness-exec");
    let not_ready = answer_to(&answers, "Why is it not Ready?");
    assert!(not_ready.answer.contains("Readiness probe failed"), "{not_ready:?}");
    let probes = scenario_world("probes", 75_000);
    let answers = why_of(&probes, "default", "liveness-exec");
    let restart = answer_to(&answers, "Why did it restart?");
    assert!(restart.answer.contains("failed liveness probe"), "{restart:?}");

    let prestop = scenario_world("prestop", 25_000);
    let answers = why_of(&prestop, "default", "web");
    let terminating = answer_to(&answers, "Why is it terminating?");
    assert_eq!(terminating.t_ms, Some(20_000), "{terminating:?}");

    // Rendered: each answer with a button to its moment.
    let html = kubesim_web::components::inspector::why(&answers, &Callback::noop());
    let html = render_html(html);
    assert!(html.contains("Why is it terminating?") && html.contains("aria-label=\"Go to 00:20.000 on the timeline\""), "{html}");
}

#[derive(Properties, PartialEq)]
struct HtmlProps {
    html: Html,
}

#[function_component(Wrap)]
fn wrap(props: &HtmlProps) -> Html {
    props.html.clone()
}

fn render_html(html: Html) -> String {
    render::<Wrap>(HtmlProps { html })
}
