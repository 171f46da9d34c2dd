#![cfg(not(target_arch = "wasm32"))]
//! Fault injection through the world, with the node lifecycle controller and taint-based
//! eviction reacting as upstream does (node-monitor-grace-period 50 s, tolerationSeconds 300).

use kubesim_api::object::Object;
use kubesim_sim::run::{run, RunOptions};
use kubesim_sim::scenario::InputFile;

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: 'nginx:1.27'}]}\n";

fn scenario(commands: Vec<(u64, &str)>, duration_ms: u64) -> kubesim_sim::RunOutcome {
    run(RunOptions {
        files: vec![InputFile { name: "web.yaml".into(), text: DEPLOYMENT.into() }],
        seed: 3,
        duration_ms: Some(duration_ms),
        commands: commands.into_iter().map(|(t, c)| (t, c.to_string())).collect(),
        ..Default::default()
    })
}

fn running_pods_by_node(world: &kubesim_sim::World) -> Vec<(String, String)> {
    world
        .api()
        .store()
        .list(("", "pods"), Some("default"))
        .filter_map(|o| o.as_pod())
        .filter(|p| p.metadata.deletion_timestamp.is_none() && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .map(|p| (p.metadata.name.clone().unwrap_or_default(), p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default()))
        .collect()
}

// A node goes down: after node-monitor-grace-period (50 s) it is tainted unreachable, its pods
// are evicted 300 s later (DefaultTolerationSeconds) and the ReplicaSet replaces them elsewhere.
#[test]
fn a_node_going_down_has_its_pods_replaced_after_the_toleration_period() {
    let outcome = scenario(vec![(30_000, "fault node-down node-1")], 30_000 + 50_000 + 300_000 + 60_000);
    let world = &outcome.world;
    let fault_line = world.trace().iter().find(|r| &*r.actor == "fault").expect("the fault is in the trace");
    assert_eq!(fault_line.object.kind(), "Event");
    let node = world.api().lookup(("", "nodes"), "", "node-1").unwrap();
    let Object::Node(node) = node.as_ref() else { panic!() };
    let taints: Vec<String> =
        node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default().into_iter().map(|t| format!("{}:{}", t.key, t.effect)).collect();
    assert!(taints.contains(&"node.kubernetes.io/unreachable:NoExecute".to_string()), "{taints:?}");
    let ready = node.status.as_ref().unwrap().conditions.as_ref().unwrap().iter().find(|c| c.type_ == "Ready").unwrap().clone();
    assert_eq!(ready.status, "Unknown");
    let running = running_pods_by_node(world);
    assert_eq!(running.len(), 3, "{running:?}");
    assert!(running.iter().all(|(_, n)| n != "node-1"), "replacements run elsewhere: {running:?}");
    // The taint arrived ~50 s after the last heartbeat, the eviction ~300 s after the taint.
    let taint_t = world
        .trace()
        .iter()
        .find(|r| {
            r.object.kind() == "Node"
                && r.object.name() == "node-1"
                && r.object.to_json().pointer("/spec/taints").is_some_and(|t| t.to_string().contains("unreachable"))
        })
        .map(|r| r.t_ms)
        .expect("tainted");
    assert!((70_000..=100_000).contains(&taint_t), "taint at {taint_t} ms");
}

// A container crash is restarted by the kubelet (restartPolicy Always), restartCount 1.
#[test]
fn an_injected_container_crash_restarts_the_container() {
    let first = scenario(vec![], 20_000);
    let pod = running_pods_by_node(&first.world)[0].0.clone();
    let outcome = scenario(vec![(20_000, &format!("fault container-crash {pod}"))], 40_000);
    let p = outcome.world.api().lookup(("", "pods"), "default", &pod).unwrap().as_pod().cloned().unwrap();
    let status = &p.status.unwrap().container_statuses.unwrap()[0];
    assert_eq!(status.restart_count, 1);
    assert_eq!(status.last_state.as_ref().unwrap().terminated.as_ref().unwrap().exit_code, 1);
}

// A partitioned node keeps its containers running; when it heals, everything is Ready again.
#[test]
fn a_partition_heals_without_losing_pods() {
    let outcome = scenario(vec![(20_000, "fault network-partition node-2"), (60_000, "fault heal")], 120_000);
    let world = &outcome.world;
    assert!(world.commands().iter().all(|c| c.exit_code == 0), "{:?}", world.commands());
    let node = world.api().lookup(("", "nodes"), "", "node-2").unwrap().to_json();
    let ready = node["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "Ready").unwrap().clone();
    assert_eq!(ready["status"], "True");
    assert_eq!(running_pods_by_node(world).len(), 3);
}

// Determinism with every moving part: controllers, scheduler, kubelets, faults and kubectl
// commands; the same seed twice gives byte-identical traces (madsim-style check).
#[test]
fn a_busy_scenario_is_deterministic_for_a_seed() {
    let commands = [
        (10_000, "kubectl scale deployment/web --replicas=6"),
        (25_000, "fault node-down node-2"),
        (40_000, "kubectl set image deployment/web nginx=nginx:1.28"),
        (70_000, "fault heal"),
    ];
    let hash = |seed: u64| {
        let outcome = run(RunOptions {
            files: vec![InputFile { name: "web.yaml".into(), text: DEPLOYMENT.into() }],
            seed,
            duration_ms: Some(120_000),
            commands: commands.iter().map(|(t, c)| (*t, c.to_string())).collect(),
            ..Default::default()
        });
        kubesim_sim::run::trace_hash(outcome.world.trace())
    };
    let (a, b) = (hash(11), hash(11));
    assert_eq!(a, b, "non-determinism detected; reproduce with SEED=11");
    assert_ne!(a, hash(12));
}

fn zone_nodes(count: usize, zone: &str) -> String {
    (1..=count)
        .map(|i| format!("apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}, topology.kubernetes.io/zone: {zone}}}}}\nstatus: {{capacity: {{cpu: '4', memory: 8Gi, pods: '110'}}}}\n"))
        .collect::<Vec<_>>()
        .join("---\n")
}

/// When each node first got the `unreachable:NoExecute` taint, from the trace.
fn no_execute_taint_times(world: &kubesim_sim::World) -> std::collections::BTreeMap<String, u64> {
    let mut times = std::collections::BTreeMap::new();
    for r in world.trace().iter().filter(|r| r.object.kind() == "Node") {
        let json = r.object.to_json();
        let tainted = json
            .pointer("/spec/taints")
            .and_then(|t| t.as_array())
            .is_some_and(|ts| ts.iter().any(|t| t["key"] == "node.kubernetes.io/unreachable" && t["effect"] == "NoExecute"));
        if tainted {
            times.entry(r.object.name().to_string()).or_insert(r.t_ms);
        }
    }
    times
}

fn zone_scenario(nodes: usize, down: &[&str], duration_ms: u64) -> kubesim_sim::RunOutcome {
    let outcome = run(RunOptions {
        files: vec![InputFile { name: "nodes.yaml".into(), text: zone_nodes(nodes, "zone-a") }],
        seed: 5,
        duration_ms: Some(duration_ms),
        commands: down.iter().map(|n| (30_000, format!("fault node-down {n}"))).collect(),
        ..Default::default()
    });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    outcome
}

// Two nodes of a 6-node zone go down together: 2 of 6 not ready keeps the zone Normal, whose
// --node-eviction-rate 0.1/s token bucket (burst 1) lets the NoExecute taints through 10 s
// apart (upstream zoneNoExecuteTainter / doNoExecuteTaintingPass).
#[test]
fn two_nodes_down_in_one_zone_are_tainted_ten_seconds_apart() {
    let outcome = zone_scenario(6, &["n1", "n2"], 200_000);
    let times = no_execute_taint_times(&outcome.world);
    assert_eq!(times.len(), 2, "only the two down nodes: {times:?}");
    let mut t: Vec<u64> = times.values().copied().collect();
    t.sort();
    assert!((80_000..=100_000).contains(&t[0]), "first taint ~50 s after the last heartbeat: {times:?}");
    assert_eq!(t[1] - t[0], 10_000, "{times:?}");
}

// Three of five nodes of a zone down: PartialDisruption, and a zone of at most 50 nodes
// (--large-cluster-size-threshold) gets no NoExecute taints at all (ReducedQPSFunc → 0).
#[test]
fn a_small_partially_disrupted_zone_gets_no_no_execute_taints() {
    let outcome = zone_scenario(5, &["n1", "n2", "n3"], 300_000);
    let world = &outcome.world;
    assert!(no_execute_taint_times(world).is_empty(), "{:?}", no_execute_taint_times(world));
    for n in ["n1", "n2", "n3"] {
        let node = world.api().lookup(("", "nodes"), "", n).unwrap().to_json();
        let ready = node["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "Ready").unwrap().clone();
        assert_eq!(ready["status"], "Unknown", "{n}");
        assert!(node["spec"]["taints"].as_array().unwrap().iter().any(|t| t["key"] == "node.kubernetes.io/unreachable" && t["effect"] == "NoSchedule"), "{n}");
    }
}

// Found by `kubesim swarm` (seed 191 with the network faults): a pod deleted while its node is
// cut off from the API server, whose kubelet restarts meanwhile (and so learns of the deletion
// and kills the containers while its writes still fail), is deleted once the node reconnects:
// the final status and the deletion are retried on the relist.
#[test]
fn a_pod_terminated_while_partitioned_is_deleted_after_the_heal() {
    let mut world = kubesim_sim::World::new(1);
    world.add_default_nodes();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: node-3\n  containers: [{name: c, image: 'nginx:1.27'}]\n";
    let outcome = kubesim_sim::loader::apply(&mut world, &kubesim_sim::scenario::InputFile { name: "p.yaml".into(), text: pod.into() });
    assert!(outcome.errors.is_empty());
    world.run_until(20_000);
    for (at, line) in [
        (20_000, "fault network-partition node-3"),
        (30_000, "kubectl delete pod p --wait=false"),
        (40_000, "fault kubelet-restart node-3"),
        (50_000, "fault heal"),
    ] {
        world.run_until(at);
        assert_eq!(world.run_command(line).exit_code, 0, "{line}");
    }
    world.run_until(120_000);
    assert_eq!(world.run_command("kubectl get pods").stderr, "No resources found in default namespace.\n");
}

// The registry refuses an image until heal: a roll-out to it stalls in ErrImagePull /
// ImagePullBackOff (the old pods keep serving), and after the heal the kubelet's next retry
// pulls it and the roll-out completes.
#[test]
fn an_image_pull_failure_stalls_a_rollout_until_heal() {
    let outcome = scenario(
        vec![(20_000, "fault image-pull-failure nginx:1.26"), (21_000, "kubectl set image deployment/web nginx=nginx:1.26"), (60_000, "fault heal")],
        60_000,
    );
    let mut world = outcome.world;
    let pods = world.run_command("kubectl get pods").stdout;
    assert!(pods.contains("ImagePullBackOff") || pods.contains("ErrImagePull"), "{pods}");
    assert_eq!(running_pods_by_node(&world).len(), 3, "the old pods keep running: {pods}");
    world.run_until(60_000 + 6 * 60_000);
    let status = world.run_command("kubectl rollout status deployment/web").stdout;
    assert!(status.contains("successfully rolled out"), "{status}\n{}", world.run_command("kubectl get pods").stdout);
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
}

// A watch disconnect: the node's agents relist and miss nothing; a forced compaction leaves
// the cluster working.
#[test]
fn a_watch_disconnect_and_a_compaction_change_nothing_the_cluster_promises() {
    let outcome = scenario(
        vec![
            (20_000, "kubectl scale deployment web --replicas=6"),
            (20_000, "fault watch-disconnect node-1"),
            (20_001, "fault compaction"),
            (20_003, "fault watch-disconnect node-2"),
        ],
        60_000,
    );
    let mut world = outcome.world;
    assert_eq!(running_pods_by_node(&world).len(), 6, "{}", world.run_command("kubectl get pods -o wide").stdout);
    world.runtime_mut().finish_checks();
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
}
