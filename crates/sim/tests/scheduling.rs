#![cfg(not(target_arch = "wasm32"))]
//! The scheduler's plugins end to end through `kubesim run`, read back through the explanation
//! annotations (`kubesim.dev/filter-result`, `score-result`, `finalscore-result`,
//! `selected-node`) and FailedScheduling messages.

use kubesim_sim::run::{run, RunOptions};
use kubesim_sim::scenario::InputFile;
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

fn annotation(world: &kubesim_sim::World, pod: &str, key: &str) -> Value {
    let json = world.api().lookup(("", "pods"), "default", pod).unwrap().to_json();
    serde_json::from_str(json["metadata"]["annotations"][key].as_str().unwrap_or("null")).unwrap()
}

fn node_of(world: &kubesim_sim::World, pod: &str) -> String {
    world.api().lookup(("", "pods"), "default", pod).unwrap().to_json()["spec"]["nodeName"].as_str().unwrap_or("").to_string()
}

// NodeAffinity (nodeSelector) and TaintToleration filters, with their reasons per node.
#[test]
fn node_selector_and_taints_filter_nodes() {
    let w = world("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: {disk: ssd}, containers: [{name: c, image: nginx}]}\n");
    assert_eq!(node_of(&w, "p"), "a");
    let filters = annotation(&w, "p", "kubesim.dev/filter-result");
    assert_eq!(filters["a"]["NodeAffinity"], "passed");
    assert_eq!(filters["b"]["TaintToleration"], "node(s) had untolerated taint {dedicated: gpu}");
    assert_eq!(filters["c"]["NodeAffinity"], "node(s) didn't match Pod's node affinity/selector");
    assert_eq!(annotation(&w, "p", "kubesim.dev/selected-node"), "a");
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
    let raw = annotation(&w, "s", "kubesim.dev/score-result");
    let fit_a = raw["a"]["NodeResourcesFit"].as_i64().unwrap();
    let fit_c = raw["c"]["NodeResourcesFit"].as_i64().unwrap();
    // LeastAllocated: a (4 cpu): cpu (4-1)/4 = 75, mem (8-1)/8 = 87 → 81; c (2 cpu): 50, 87 → 68.
    assert_eq!((fit_a, fit_c), (81, 68));
    let final_scores = annotation(&w, "s", "kubesim.dev/finalscore-result");
    assert_eq!(final_scores["a"]["TaintToleration"], 300);
    assert!(raw.get("b").is_none(), "filtered-out nodes are not scored");
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
    });
    let w = outcome.world;
    assert!(w.commands().iter().all(|c| c.exit_code == 0), "{:?}", w.commands());
    let filters = annotation(&w, "late", "kubesim.dev/filter-result");
    assert_eq!(filters["a"]["NodeUnschedulable"], "node(s) were unschedulable");
    assert_eq!(node_of(&w, "late"), "c");
}
