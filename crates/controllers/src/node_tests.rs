//! Node lifecycle and taint eviction tests.

use crate::nodelifecycle::*;
use crate::testing::TestWorld;
use kubesim_api::k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Namespace, Node, NodeCondition, NodeStatus, Pod, PodCondition, PodSpec, Taint, Toleration};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kubesim_api::object::Object;
use kubesim_api::time::{micro_time_at, time_at};
use kubesim_api::Millis;

fn node(name: &str, ready: &str, heartbeat: Millis) -> Node {
    Node {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: None,
        status: Some(NodeStatus {
            conditions: Some(vec![NodeCondition {
                type_: "Ready".into(),
                status: ready.into(),
                reason: Some("KubeletReady".into()),
                last_heartbeat_time: Some(time_at(heartbeat)),
                last_transition_time: Some(time_at(0)),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

fn get_node(w: &TestWorld, name: &str) -> Node {
    w.get(("", "nodes"), "", name).unwrap().as_node().unwrap().clone()
}

fn taints(n: &Node) -> Vec<(String, String)> {
    n.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default().into_iter().map(|t| (t.key, t.effect)).collect()
}

fn ready_pod(name: &str, node: &str, tolerations: Option<Vec<Toleration>>) -> Pod {
    Pod {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(PodSpec {
            node_name: Some(node.into()),
            containers: vec![Container { name: "c".into(), image: Some("nginx".into()), ..Default::default() }],
            tolerations,
            ..Default::default()
        }),
        status: None,
    }
}

fn make_ready(w: &mut TestWorld, name: &str) {
    let mut pod = w.get(("", "pods"), "default", name).unwrap().as_pod().unwrap().clone();
    let status = pod.status.get_or_insert_with(Default::default);
    status.phase = Some("Running".into());
    status.conditions = Some(vec![PodCondition { type_: "Ready".into(), status: "True".into(), last_transition_time: Some(time_at(w.now)), ..Default::default() }]);
    w.as_user(|ctx| ctx.update_status(Object::Pod(Box::new(pod)))).unwrap();
}

fn world() -> TestWorld {
    TestWorld::new(vec![Box::new(NodeLifecycleController::new()), Box::new(TaintEvictionController::new())])
}

#[test]
fn silent_node_becomes_unknown_tainted_and_its_pods_are_evicted_after_toleration_seconds() {
    let mut w = world();
    w.create(Object::Node(Box::new(node("n1", "True", 0)))).unwrap();
    // A healthy second node in the same zone keeps the zone out of full disruption.
    w.create(Object::Node(Box::new(node("n2", "True", 0)))).unwrap();
    w.add(Box::new(crate::testing::FakeHeartbeat { nodes: vec!["n2".into()] }));
    w.create(Object::Pod(Box::new(ready_pod("web", "n1", None)))).unwrap();
    let forever = Toleration { key: Some(TAINT_UNREACHABLE.into()), operator: Some("Exists".into()), effect: Some("NoExecute".into()), ..Default::default() };
    w.create(Object::Pod(Box::new(ready_pod("agent", "n1", Some(vec![forever]))))).unwrap();
    make_ready(&mut w, "web");
    w.run_for(45_000);
    let n = get_node(&w, "n1");
    assert_eq!(n.status.as_ref().unwrap().conditions.as_ref().unwrap()[0].status, "True", "within the grace period");
    assert!(taints(&n).is_empty());
    w.run_for(20_000); // t = 65 s > 50 s grace (+ monitor period)
    let n = get_node(&w, "n1");
    let ready = n.status.as_ref().unwrap().conditions.as_ref().unwrap().iter().find(|c| c.type_ == "Ready").unwrap().clone();
    assert_eq!((ready.status.as_str(), ready.reason.as_deref(), ready.message.as_deref()), ("Unknown", Some("NodeStatusUnknown"), Some("Kubelet stopped posting node status.")));
    for t in ["MemoryPressure", "DiskPressure", "PIDPressure"] {
        let c = n.status.as_ref().unwrap().conditions.as_ref().unwrap().iter().find(|c| c.type_ == t).unwrap().clone();
        assert_eq!((c.status.as_str(), c.reason.as_deref()), ("Unknown", Some("NodeStatusNeverUpdated")));
    }
    let ts = taints(&n);
    assert!(ts.contains(&(TAINT_UNREACHABLE.into(), "NoExecute".into())), "{ts:?}");
    assert!(ts.contains(&(TAINT_UNREACHABLE.into(), "NoSchedule".into())), "{ts:?}");
    let web = w.get(("", "pods"), "default", "web").unwrap();
    assert!(!crate::common::is_pod_ready(web.as_pod().unwrap()), "pods on the node are marked not ready");
    assert!(web.metadata().deletion_timestamp.is_none());
    let events = w.events();
    assert!(events.contains(&("NodeNotReady".into(), "Node n1 status is now: NodeNotReady".into())), "{events:?}");
    assert!(events.contains(&("NodeNotReady".into(), "Node is not ready".into())), "{events:?}");
    // DefaultTolerationSeconds: 300 s after the taint, the pod is evicted; the forever-tolerating one stays.
    w.run_for(280_000);
    assert!(w.get(("", "pods"), "default", "web").unwrap().metadata().deletion_timestamp.is_none(), "still tolerated");
    w.run_for(30_000);
    let web = w.get(("", "pods"), "default", "web").unwrap();
    assert!(web.metadata().deletion_timestamp.is_some(), "evicted after tolerationSeconds");
    let disruption = crate::common::pod_condition(web.as_pod().unwrap(), "DisruptionTarget").unwrap().clone();
    assert_eq!(disruption.reason.as_deref(), Some("DeletionByTaintManager"));
    assert!(w.get(("", "pods"), "default", "agent").unwrap().metadata().deletion_timestamp.is_none());
    assert!(w.events().contains(&("TaintManagerEviction".into(), "Marking for deletion Pod default/web".into())));
}

#[test]
fn lease_renewals_keep_a_node_healthy_and_recovery_removes_taints() {
    let mut w = world();
    w.create(Object::Node(Box::new(node("n2", "True", 0)))).unwrap();
    w.add(Box::new(crate::testing::FakeHeartbeat { nodes: vec!["n2".into()] }));
    w.create(Object::Namespace(Box::new(Namespace { metadata: ObjectMeta { name: Some("kube-node-lease".into()), ..Default::default() }, ..Default::default() }))).unwrap();
    w.create(Object::Node(Box::new(node("n1", "True", 0)))).unwrap();
    let lease = Lease {
        metadata: ObjectMeta { name: Some("n1".into()), namespace: Some("kube-node-lease".into()), ..Default::default() },
        spec: Some(LeaseSpec { holder_identity: Some("n1".into()), lease_duration_seconds: Some(40), renew_time: Some(micro_time_at(0)), ..Default::default() }),
    };
    w.create(Object::Lease(Box::new(lease))).unwrap();
    for i in 1..=12u64 {
        w.run_until(i * 10_000);
        let mut l = match w.get(("coordination.k8s.io", "leases"), "kube-node-lease", "n1").unwrap().as_ref() {
            Object::Lease(l) => (**l).clone(),
            _ => unreachable!(),
        };
        l.spec.as_mut().unwrap().renew_time = Some(MicroTime(micro_time_at(w.now).0));
        w.as_user(|ctx| ctx.update(Object::Lease(Box::new(l)))).unwrap();
    }
    let n = get_node(&w, "n1");
    assert_eq!(n.status.as_ref().unwrap().conditions.as_ref().unwrap()[0].status, "True", "lease renewals count as heartbeats");
    // Stop renewing: Unknown + taints. Then the kubelet posts Ready again: taints go away.
    w.run_for(70_000);
    assert!(taints(&get_node(&w, "n1")).contains(&(TAINT_UNREACHABLE.into(), "NoExecute".into())));
    let mut n = get_node(&w, "n1");
    let c = &mut n.status.as_mut().unwrap().conditions.as_mut().unwrap()[0];
    c.status = "True".into();
    c.reason = Some("KubeletReady".into());
    c.last_heartbeat_time = Some(time_at(w.now));
    c.last_transition_time = Some(time_at(w.now));
    w.as_user(|ctx| ctx.update_status(Object::Node(Box::new(n)))).unwrap();
    w.run_for(6_000);
    assert!(taints(&get_node(&w, "n1")).is_empty(), "{:?}", taints(&get_node(&w, "n1")));
}

#[test]
fn unschedulable_and_condition_taints_follow_the_node() {
    let mut w = world();
    let mut n = node("n1", "False", 0);
    n.spec = Some(kubesim_api::k8s_openapi::api::core::v1::NodeSpec { unschedulable: Some(true), ..Default::default() });
    w.create(Object::Node(Box::new(n))).unwrap();
    w.create(Object::Node(Box::new(node("n2", "True", 0)))).unwrap();
    w.run_for(6_000);
    let ts = taints(&get_node(&w, "n1"));
    assert!(ts.contains(&(TAINT_UNSCHEDULABLE.into(), "NoSchedule".into())), "{ts:?}");
    assert!(ts.contains(&(TAINT_NOT_READY.into(), "NoSchedule".into())), "{ts:?}");
    assert!(ts.contains(&(TAINT_NOT_READY.into(), "NoExecute".into())), "{ts:?}");
}

// Mirrors pkg/controller/tainteviction/taint_eviction_test.go TestGetMinTolerationTime
#[test]
fn min_toleration_time() {
    let taint = |k: &str| Taint { key: k.into(), effect: "NoExecute".into(), ..Default::default() };
    let tol = |k: &str, s: Option<i64>| Toleration { key: Some(k.into()), operator: Some("Exists".into()), effect: Some("NoExecute".into()), toleration_seconds: s, ..Default::default() };
    assert_eq!(toleration_time(&[taint("a")], &[]), None, "untolerated → evict now");
    assert_eq!(toleration_time(&[taint("a")], &[tol("a", None)]), Some(None), "forever");
    assert_eq!(toleration_time(&[taint("a"), taint("b")], &[tol("a", Some(300)), tol("b", Some(60))]), Some(Some(60)));
    assert_eq!(toleration_time(&[taint("a")], &[tol("a", Some(-5))]), Some(Some(0)));
    assert_eq!(toleration_time(&[], &[]), Some(Some(0)));
    let any = Toleration { operator: Some("Exists".into()), ..Default::default() };
    assert_eq!(toleration_time(&[taint("x")], &[any]), Some(None), "empty key + Exists tolerates everything");
}

#[test]
fn pod_gc_removes_pods_of_deleted_nodes_and_terminated_pods_over_the_threshold() {
    let mut w = TestWorld::new(vec![Box::new(crate::podgc::PodGcController::with_threshold(1))]);
    w.create(Object::Node(Box::new(node("n1", "True", 0)))).unwrap();
    w.create(Object::Pod(Box::new(ready_pod("orphan", "n1", None)))).unwrap();
    for name in ["done-1", "done-2"] {
        w.run_for(1_000);
        w.create(Object::Pod(Box::new(ready_pod(name, "n1", None)))).unwrap();
        let mut pod = w.get(("", "pods"), "default", name).unwrap().as_pod().unwrap().clone();
        pod.status.get_or_insert_with(Default::default).phase = Some("Succeeded".into());
        w.as_user(|ctx| ctx.update_status(Object::Pod(Box::new(pod)))).unwrap();
    }
    w.run_for(20_000);
    assert!(w.get(("", "pods"), "default", "done-1").is_none(), "oldest terminated pod beyond the threshold");
    assert!(w.get(("", "pods"), "default", "done-2").is_some());
    let info = kubesim_api::object::kind_info("v1", "Node").unwrap();
    w.as_user(|ctx| ctx.delete(info, "", "n1", Default::default())).unwrap();
    w.run_for(30_000);
    assert!(w.get(("", "pods"), "default", "orphan").is_some(), "quarantine");
    w.run_for(40_000);
    assert!(w.get(("", "pods"), "default", "orphan").is_none());
}

#[test]
fn resource_quota_usage_is_recomputed_and_replenished() {
    use kubesim_api::k8s_openapi::api::core::v1::ResourceRequirements;
    use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    let mut w = TestWorld::new(vec![Box::new(crate::resourcequota::ResourceQuotaController::new())]);
    let info = kubesim_api::object::kind_info("v1", "ResourceQuota").unwrap();
    let quota = Object::from_json(
        info,
        serde_json::json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"}, "spec": {"hard": {"pods": "2", "requests.cpu": "1"}}}),
    )
    .unwrap();
    w.create(quota).unwrap();
    w.run_for(1_000);
    let used = |w: &TestWorld| w.get(("", "resourcequotas"), "default", "q").unwrap().to_json()["status"]["used"].clone();
    assert_eq!(used(&w), serde_json::json!({"pods": "0", "requests.cpu": "0"}));
    let with_cpu = |name: &str| {
        let mut p = ready_pod(name, "n1", None);
        p.spec.as_mut().unwrap().containers[0].resources =
            Some(ResourceRequirements { requests: Some(std::collections::BTreeMap::from([("cpu".to_string(), Quantity("200m".into()))])), ..Default::default() });
        Object::Pod(Box::new(p))
    };
    w.create(with_cpu("a")).unwrap();
    w.create(with_cpu("b")).unwrap();
    w.run_for(1_000);
    assert_eq!(used(&w), serde_json::json!({"pods": "2", "requests.cpu": "400m"}));
    assert!(w.create(with_cpu("c")).is_err(), "quota exhausted");
    let pod_info = kubesim_api::object::kind_info("v1", "Pod").unwrap();
    w.as_user(|ctx| ctx.delete(pod_info, "default", "a", kubesim_apiserver::DeleteOptions { grace_period_seconds: Some(0), ..Default::default() })).unwrap();
    w.run_for(1_000);
    assert_eq!(used(&w), serde_json::json!({"pods": "1", "requests.cpu": "200m"}), "replenished");
    assert!(w.create(with_cpu("c")).is_ok());
}

#[test]
fn all_zones_down_enters_master_disruption_mode_without_eviction_taints() {
    let mut w = world();
    for n in ["n1", "n2"] {
        w.create(Object::Node(Box::new(node(n, "True", 0)))).unwrap();
    }
    w.run_for(70_000);
    for n in ["n1", "n2"] {
        let node = get_node(&w, n);
        assert_eq!(node.status.as_ref().unwrap().conditions.as_ref().unwrap()[0].status, "Unknown");
        let ts = taints(&node);
        assert!(!ts.contains(&(TAINT_UNREACHABLE.into(), "NoExecute".into())), "no eviction taints: {ts:?}");
        assert!(ts.contains(&(TAINT_UNREACHABLE.into(), "NoSchedule".into())), "{ts:?}");
    }
}

// Mirrors pkg/controller/nodelifecycle/node_lifecycle_controller_test.go (ComputeZoneState)
#[test]
fn zone_states() {
    assert_eq!(zone_state(3, 0), ZoneState::Normal);
    assert_eq!(zone_state(0, 1), ZoneState::FullDisruption);
    assert_eq!(zone_state(1, 2), ZoneState::Normal, "fewer than 3 not ready");
    assert_eq!(zone_state(2, 3), ZoneState::PartialDisruption);
    assert_eq!(zone_state(3, 3), ZoneState::Normal, "50 % < 55 %");
}
