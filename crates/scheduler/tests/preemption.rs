//! DefaultPreemption: node choice criteria and PDB handling.

use k8s_openapi::api::core::v1::{Pod, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::time::time_at;
use kubesim_api::Object;
use kubesim_scheduler::cache::PodInfo;
use kubesim_scheduler::framework::Listers;
use kubesim_scheduler::harness::{make_node, make_pod, Harness};
use kubesim_scheduler::plugins::DefaultPreemption;
use kubesim_scheduler::preemption::{num_candidates, pick_one_node, split_by_pdb, Candidate};
use kubesim_scheduler::Scheduler;
use std::sync::Arc;

fn victim(name: &str, priority: i32, start_s: u64) -> Arc<PodInfo> {
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            labels: Some([("app".to_string(), name.to_string())].into()),
            ..Default::default()
        },
        spec: Some(PodSpec { priority: Some(priority), ..Default::default() }),
        status: Some(PodStatus { start_time: Some(time_at(start_s * 1000)), ..Default::default() }),
    };
    Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(pod)))))
}

fn cand(node: &str, victims: &[(i32, u64)], pdb: i64) -> Candidate {
    Candidate {
        node: node.into(),
        victims: victims.iter().enumerate().map(|(i, (p, s))| victim(&format!("{node}-{i}"), *p, *s)).collect(),
        num_pdb_violations: pdb,
    }
}

// Mirrors pkg/scheduler/framework/preemption/preemption_test.go TestPickOneNodeForPreemption
// (one case per criterion, in order).
#[test]
fn pick_one_node_criteria_in_order() {
    let pick = |cs: Vec<Candidate>| cs[pick_one_node(&cs).unwrap()].node.clone();
    // 1. fewest PDB violations
    assert_eq!(pick(vec![cand("a", &[(1, 0)], 1), cand("b", &[(5, 0), (5, 0)], 0)]), "b");
    // 2. lowest highest-victim priority
    assert_eq!(pick(vec![cand("a", &[(10, 0)], 0), cand("b", &[(5, 0), (5, 0)], 0)]), "b");
    // 3. smallest sum of priorities
    assert_eq!(pick(vec![cand("a", &[(10, 0), (5, 0)], 0), cand("b", &[(10, 0), (1, 0)], 0)]), "b");
    // 4. fewest victims (same sum shifted by MaxInt32+1 per pod makes more pods worse)
    assert_eq!(pick(vec![cand("a", &[(10, 0), (0, 0), (0, 0)], 0), cand("b", &[(10, 0), (0, 0)], 0)]), "b");
    // 5. latest start time of the highest-priority victims
    assert_eq!(pick(vec![cand("a", &[(10, 100)], 0), cand("b", &[(10, 200)], 0)]), "b");
    // 6. otherwise the first
    assert_eq!(pick(vec![cand("a", &[(10, 100)], 0), cand("b", &[(10, 100)], 0)]), "a");
    assert_eq!(pick_one_node(&[]), None);
}

// Mirrors default_preemption_test.go TestCalculateNumCandidates / GetOffsetAndNumCandidates.
#[test]
fn number_of_candidates() {
    let d = DefaultPreemption::default();
    assert_eq!(num_candidates(&d, 10), 10);
    assert_eq!(num_candidates(&d, 1000), 100);
    assert_eq!(num_candidates(&d, 5000), 500);
    let custom = DefaultPreemption { min_candidate_nodes_percentage: 40, min_candidate_nodes_absolute: 10 };
    assert_eq!(num_candidates(&custom, 100), 40);
}

// Mirrors default_preemption_test.go (filterPodsWithPDBViolation): victims beyond the budget violate it.
#[test]
fn pdb_violations_are_counted_against_disruptions_allowed() {
    let mut listers = Listers::default();
    let sel = kubesim_api::selector::Selector::parse("app in (x0,x1)").unwrap();
    listers.pdbs.insert(("default".into(), "pdb".into()), (sel, 1));
    let pods = vec![victim("x0", 1, 0), victim("x1", 1, 0), victim("y", 1, 0)];
    let (violating, ok) = split_by_pdb(&pods, &listers);
    assert_eq!(violating.iter().map(|p| p.name()).collect::<Vec<_>>(), vec!["x1"]);
    assert_eq!(ok.iter().map(|p| p.name()).collect::<Vec<_>>(), vec!["x0", "y"]);
}

#[test]
fn preemption_prefers_nodes_without_pdb_violations() {
    let mut h = Harness::new(Scheduler::new());
    let pc = kubesim_api::kind_info("scheduling.k8s.io/v1", "PriorityClass").unwrap();
    h.create(
        Object::from_json(pc, serde_json::json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}))
            .unwrap(),
    )
    .unwrap();
    for n in ["node-a", "node-b"] {
        h.create(make_node(n, &[("cpu", "1"), ("memory", "8Gi"), ("pods", "110")], &[], vec![])).unwrap();
    }
    let mut protected = make_pod("protected", &[("cpu", "1")]);
    protected.metadata.labels = Some([("app".to_string(), "db".to_string())].into());
    protected.spec.as_mut().unwrap().node_name = Some("node-a".into());
    h.create(Object::Pod(Box::new(protected))).unwrap();
    let mut plain = make_pod("plain", &[("cpu", "1")]);
    plain.spec.as_mut().unwrap().node_name = Some("node-b".into());
    h.create(Object::Pod(Box::new(plain))).unwrap();
    let pdb = kubesim_api::kind_info("policy/v1", "PodDisruptionBudget").unwrap();
    h.create(
        Object::from_json(
            pdb,
            serde_json::json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "default"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}, "status": {"disruptionsAllowed": 0}}),
        )
        .unwrap(),
    )
    .unwrap();
    h.run_until_idle(10_000);
    let mut high = make_pod("high", &[("cpu", "1")]);
    high.spec.as_mut().unwrap().priority_class_name = Some("high".into());
    h.create(Object::Pod(Box::new(high))).unwrap();
    h.run_until_idle(10_000);
    let a = &h.scheduler().attempts("default", "high")[0];
    assert_eq!(a.nominated_node.as_deref(), Some("node-b"));
    assert_eq!(a.victims, vec!["default/plain".to_string()]);
    assert!(h.pod("default", "protected").unwrap().metadata.deletion_timestamp.is_none());
}
