#![cfg(not(target_arch = "wasm32"))]
//! The scheduler's plugins end to end through `kubesim run`, read back through the explanation
//! the UI shows (`view::scheduling_explanation`, from the scheduler's attempt history; the pods
//! carry no annotations, as with the real kube-scheduler) and FailedScheduling messages.

use kubesim_sim::run::{run, RunOptions};
use kubesim_sim::scenario::InputFile;
use kubesim_sim::view::{self, SchedulingExplanation};
use serde_json::Value;

const NODES: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {kubernetes.io/hostname: a, topology.kubernetes.io/zone: z1, disk: ssd}}\nstatus: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b, labels: {kubernetes.io/hostname: b, topology.kubernetes.io/zone: z2}}\nspec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\nstatus: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: c, labels: {kubernetes.io/hostname: c, topology.kubernetes.io/zone: z3}}\nstatus: {capacity: {cpu: '2', memory: 8Gi, pods: '110'}}\n";

fn world(extra: &str) -> kubesim_sim::World {
    let outcome = run(RunOptions {
        files: vec![InputFile { name: "s.yaml".into(), text: format!("{NODES}---\n{extra}") }],
        seed: 2,
        duration_ms: Some(30_000),
        ..Default::default()
    });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    outcome.world
}

fn explanation(world: &kubesim_sim::World, pod: &str) -> SchedulingExplanation {
    view::scheduling_explanation(world, "default", pod)
}

/// One cell of a node → [(plugin, value)] table.
fn cell<'a, T>(table: &'a [(String, Vec<(String, T)>)], node: &str, plugin: &str) -> Option<&'a T> {
    table.iter().find(|(n, _)| n == node)?.1.iter().find(|(p, _)| p == plugin).map(|(_, v)| v)
}

fn node_of(world: &kubesim_sim::World, pod: &str) -> String {
    world.api().lookup(("", "pods"), "default", pod).unwrap().to_json()["spec"]["nodeName"].as_str().unwrap_or("").to_string()
}

// NodeAffinity (nodeSelector) and TaintToleration filters, with their reasons per node.
#[test]
fn node_selector_and_taints_filter_nodes() {
    let w = world("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: {disk: ssd}, containers: [{name: c, image: nginx}]}\n");
    assert_eq!(node_of(&w, "p"), "a");
    let e = explanation(&w, "p");
    assert_eq!(cell(&e.filter, "a", "NodeAffinity").unwrap(), "passed");
    assert_eq!(cell(&e.filter, "b", "TaintToleration").unwrap(), "node(s) had untolerated taint {dedicated: gpu}");
    assert_eq!(cell(&e.filter, "c", "NodeAffinity").unwrap(), "node(s) didn't match Pod's node affinity/selector");
    assert_eq!(e.selected.as_deref(), Some("a"));
}

// NodeResourcesFit: a pod bigger than every node's allocatable is Unschedulable with
// upstream's FitError text; requests above allocatable are UnschedulableAndUnresolvable, so
// preemption is "not helpful" on every node (reference 1.8b).
#[test]
fn insufficient_resources_explain_the_failure() {
    let w = world("apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: '5'}}}]}\n");
    let pod = w.api().lookup(("", "pods"), "default", "huge").unwrap().to_json();
    let message =
        pod["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "PodScheduled").unwrap()["message"].as_str().unwrap().to_string();
    assert_eq!(message, "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
}

// NodeResourcesFit LeastAllocated + BalancedAllocation scores prefer the emptier, larger node;
// TaintToleration's PreferNoSchedule-free nodes all score 100 × 3.
#[test]
fn scores_follow_least_allocated() {
    let w = world(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n",
    );
    let e = explanation(&w, "s");
    let fit_a = *cell(&e.scores, "a", "NodeResourcesFit").unwrap();
    let fit_c = *cell(&e.scores, "c", "NodeResourcesFit").unwrap();
    // LeastAllocated: a (4 cpu): cpu (4-1)/4 = 75, mem (8-1)/8 = 87 → 81; c (2 cpu): 50, 87 → 68.
    assert_eq!((fit_a, fit_c), (81, 68));
    assert_eq!(cell(&e.final_scores, "a", "TaintToleration"), Some(&300));
    assert!(e.scores.iter().all(|(n, _)| n != "b"), "filtered-out nodes are not scored");
    assert_eq!(node_of(&w, "s"), "a");
}

// PodTopologySpread: a hard zone constraint spreads replicas one per zone they may use.
#[test]
fn topology_spread_constraints_spread_replicas() {
    let w = world("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: spread}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: spread}}\n  template:\n    metadata: {labels: {app: spread}}\n    spec:\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}]\n      containers: [{name: c, image: nginx}]\n");
    let nodes: Vec<String> =
        w.api().store().list(("", "pods"), Some("default")).map(|p| p.to_json()["spec"]["nodeName"].as_str().unwrap_or("").to_string()).collect();
    let mut sorted = nodes.clone();
    sorted.sort();
    assert_eq!(sorted, vec!["a".to_string(), "c".to_string()], "one per untainted zone: {nodes:?}");
}

// InterPodAffinity: required anti-affinity on hostname keeps replicas apart; the third waits.
#[test]
fn required_anti_affinity_keeps_replicas_apart() {
    let w = world("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: anti}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: anti}}\n  template:\n    metadata: {labels: {app: anti}}\n    spec:\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: anti}}}]}}\n      containers: [{name: c, image: nginx}]\n");
    let pods: Vec<Value> = w.api().store().list(("", "pods"), Some("default")).map(|p| p.to_json()).collect();
    let bound: Vec<&str> = pods.iter().filter_map(|p| p["spec"]["nodeName"].as_str()).collect();
    assert_eq!(bound.len(), 2, "two schedulable nodes");
    assert_ne!(bound[0], bound[1]);
    let pending = pods.iter().find(|p| p["spec"]["nodeName"].is_null()).unwrap();
    let message =
        pending["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "PodScheduled").unwrap()["message"].as_str().unwrap().to_string();
    assert!(message.contains("2 node(s) didn't match pod anti-affinity rules"), "{message}");
}

// NodeUnschedulable: a cordoned node is filtered out ("node(s) were unschedulable").
#[test]
fn cordoned_nodes_are_skipped() {
    let outcome = run(RunOptions {
        files: vec![InputFile { name: "s.yaml".into(), text: NODES.into() }],
        seed: 2,
        duration_ms: Some(30_000),
        commands: vec![(0, "kubectl cordon a".into()), (1_000, "kubectl run late --image=nginx".into())],
        ..Default::default()
    });
    let w = outcome.world;
    assert!(w.commands().iter().all(|c| c.exit_code == 0), "{:?}", w.commands());
    let e = explanation(&w, "late");
    assert_eq!(cell(&e.filter, "a", "NodeUnschedulable").unwrap(), "node(s) were unschedulable");
    assert_eq!(node_of(&w, "late"), "c");
}

// Like the real kube-scheduler, the scheduler writes no annotations: `kubectl describe pod`
// shows `Annotations: <none>` and `get -o yaml` has no scheduler annotations. The explanation
// is still there for the UI, it survives a clone of the world (the UI's time-travel forks),
// and it is gone with the pod — a new pod of the same name does not inherit it.
#[test]
fn scheduled_pods_carry_no_annotations_and_keep_their_explanation() {
    let mut w = world("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: {disk: ssd}, containers: [{name: c, image: nginx}]}\n");
    assert_eq!(node_of(&w, "p"), "a");
    let pod = w.api().lookup(("", "pods"), "default", "p").unwrap().to_json();
    // (The input file was applied: kubectl's last-applied-configuration is the only annotation.)
    let keys: Vec<&String> = pod["metadata"]["annotations"].as_object().map(|a| a.keys().collect()).unwrap_or_default();
    assert_eq!(keys, ["kubectl.kubernetes.io/last-applied-configuration"], "{}", pod["metadata"]);
    for record in w.trace() {
        let line = record.to_json_line();
        assert!(!line.contains("kubesim.dev/"), "no kubesim.dev annotation is ever written: {line}");
    }
    let describe = w.run_command("kubectl describe pod p");
    assert!(describe.stdout.lines().any(|l| l.starts_with("Annotations:") && l.ends_with("<none>")), "{}", describe.stdout);

    let e = view::pod_detail(&w, "default", "p").unwrap().scheduling;
    assert!(!e.is_empty());
    assert_eq!(e.selected.as_deref(), Some("a"));
    assert_eq!(cell(&e.filter, "b", "TaintToleration").unwrap(), "node(s) had untolerated taint {dedicated: gpu}");
    assert_eq!(explanation(&w.clone(), "p"), e, "a forked world keeps the explanation");

    let deleted = w.run_command("kubectl delete pod p --wait=false");
    assert_eq!(deleted.exit_code, 0, "{}", deleted.stderr);
    let until = w.now() + 60_000;
    w.run_until(until);
    assert!(w.api().lookup(("", "pods"), "default", "p").is_none());
    assert!(w.scheduler().unwrap().attempts("default", "p").is_empty(), "a deleted pod's attempts are dropped");
    // A new pod of the same name, created with nodeName (it never passes through the scheduler).
    w.add_file("p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: c, containers: [{name: c, image: nginx}]}\n");
    let applied = w.run_command("kubectl apply -f p.yaml");
    assert_eq!(applied.exit_code, 0, "{}", applied.stderr);
    let until = w.now() + 5_000;
    w.run_until(until);
    assert_eq!(node_of(&w, "p"), "c");
    assert!(explanation(&w, "p").is_empty(), "the new pod has no explanation of its own");
}

// `--scheduler-annotations`: kube-scheduler-simulator's result annotations
// (simulator/scheduler/plugin/annotation/annotation.go keys; values JSON documents with string
// scores, the selected node plain), the same numbers the explanation shows, and every attempt
// in result-history. Without the option the pods carry none (kube-scheduler writes none).
#[test]
fn scheduler_annotations_follow_kube_scheduler_simulator() {
    let text = format!("{NODES}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{nodeSelector: {{disk: ssd}}, containers: [{{name: c, image: nginx}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: free}}\nspec: {{containers: [{{name: c, image: nginx}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: big}}\nspec: {{containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: '64'}}}}}}]}}\n");
    let options = |on: bool| RunOptions {
        files: vec![InputFile { name: "s.yaml".into(), text: text.clone() }],
        seed: 2,
        duration_ms: Some(30_000),
        scheduler_annotations: on,
        ..Default::default()
    };
    let plain = run(options(false)).world;
    let plain = plain.api().lookup(("", "pods"), "default", "p").unwrap().to_json();
    assert!(plain["metadata"]["annotations"].as_object().unwrap().keys().all(|k| !k.starts_with("kube-scheduler-simulator")), "{plain}");
    let w = run(options(true)).world;
    let pod = w.api().lookup(("", "pods"), "default", "p").unwrap().to_json();
    let a = &pod["metadata"]["annotations"];
    let key = |k: &str| a[format!("kube-scheduler-simulator.sigs.k8s.io/{k}")].as_str().unwrap_or_else(|| panic!("{k} in {a}")).to_string();
    assert_eq!(key("selected-node"), "a");
    assert_eq!(key("bind-result"), r#"{"DefaultBinder":"success"}"#);
    let filter: Value = serde_json::from_str(&key("filter-result")).unwrap();
    assert_eq!(filter["a"]["NodeAffinity"], "passed");
    assert_eq!(filter["c"]["NodeAffinity"], "node(s) didn't match Pod's node affinity/selector");
    assert_eq!(key("score-result"), "{}", "one feasible node: no scoring (schedulePod's shortcut)");
    // Two feasible nodes (b is tainted): scored.
    let free = w.api().lookup(("", "pods"), "default", "free").unwrap().to_json();
    let fa = &free["metadata"]["annotations"];
    let fkey = |k: &str| fa[format!("kube-scheduler-simulator.sigs.k8s.io/{k}")].as_str().unwrap_or_else(|| panic!("{k} in {fa}")).to_string();
    let scores: Value = serde_json::from_str(&fkey("score-result")).unwrap();
    let finals: Value = serde_json::from_str(&fkey("finalscore-result")).unwrap();
    let explained = explanation(&w, "free");
    let fit = *cell(&explained.scores, "a", "NodeResourcesFit").unwrap();
    assert_eq!(scores["a"]["NodeResourcesFit"], fit.to_string(), "scores are strings");
    assert_eq!(finals["a"]["TaintToleration"], "300", "TaintToleration normalized 100 × weight 3");
    let prefilter: Value = serde_json::from_str(&key("prefilter-result-status")).unwrap();
    assert_eq!(prefilter["NodeResourcesFit"], "success");
    let history: Vec<Value> = serde_json::from_str(&key("result-history")).unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["kube-scheduler-simulator.sigs.k8s.io/selected-node"], "a");
    // An unschedulable pod: its filter verdicts, no selected node, one history entry per attempt.
    let big = w.api().lookup(("", "pods"), "default", "big").unwrap().to_json();
    let a = &big["metadata"]["annotations"];
    let filter: Value = serde_json::from_str(a["kube-scheduler-simulator.sigs.k8s.io/filter-result"].as_str().unwrap()).unwrap();
    assert_eq!(filter["a"]["NodeResourcesFit"], "Insufficient cpu");
    assert!(a.get("kube-scheduler-simulator.sigs.k8s.io/selected-node").is_none());
    let history: Vec<Value> = serde_json::from_str(a["kube-scheduler-simulator.sigs.k8s.io/result-history"].as_str().unwrap()).unwrap();
    let attempts = w.scheduler().map_or(0, |s| s.attempts("default", "big").len());
    assert!(!history.is_empty() && history.len() >= attempts.min(8), "{} entries for {attempts} attempts", history.len());
}
