//! Node lifecycle and taint eviction tests.

use crate::nodelifecycle::*;
use crate::testing::TestWorld;
use kubesim_api::k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Namespace, Node, NodeCondition, NodeStatus, Pod, PodCondition, PodSpec, Taint, Toleration};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kubesim_api::object::Object;
use kubesim_api::time::{micro_time_at, time_at};
use kubesim_api::Millis;
use std::collections::BTreeMap;

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
    status.conditions =
        Some(vec![PodCondition { type_: "Ready".into(), status: "True".into(), last_transition_time: Some(time_at(w.now())), ..Default::default() }]);
    w.as_user(|ctx| ctx.update_status(Object::Pod(Box::new(pod)))).unwrap();
}

fn world() -> TestWorld {
    TestWorld::new(vec![
        Box::new(crate::framework::Controller(NodeLifecycleController::new())),
        Box::new(crate::framework::Controller(TaintEvictionController::new())),
    ])
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
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_deref(), ready.message.as_deref()),
        ("Unknown", Some("NodeStatusUnknown"), Some("Kubelet stopped posting node status."))
    );
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
    w.create(Object::Namespace(Box::new(Namespace {
        metadata: ObjectMeta { name: Some("kube-node-lease".into()), ..Default::default() },
        ..Default::default()
    })))
    .unwrap();
    w.create(Object::Node(Box::new(node("n1", "True", 0)))).unwrap();
    let lease = Lease {
        metadata: ObjectMeta { name: Some("n1".into()), namespace: Some("kube-node-lease".into()), ..Default::default() },
        spec: Some(LeaseSpec {
            holder_identity: Some("n1".into()),
            lease_duration_seconds: Some(40),
            renew_time: Some(micro_time_at(0)),
            ..Default::default()
        }),
    };
    w.create(Object::Lease(Box::new(lease))).unwrap();
    for i in 1..=12u64 {
        w.run_until(i * 10_000);
        let mut l = match w.get(("coordination.k8s.io", "leases"), "kube-node-lease", "n1").unwrap().as_ref() {
            Object::Lease(l) => (**l).clone(),
            _ => unreachable!(),
        };
        l.spec.as_mut().unwrap().renew_time = Some(MicroTime(micro_time_at(w.now()).0));
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
    c.last_heartbeat_time = Some(time_at(w.now()));
    c.last_transition_time = Some(time_at(w.now()));
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
    let tol = |k: &str, s: Option<i64>| Toleration {
        key: Some(k.into()),
        operator: Some("Exists".into()),
        effect: Some("NoExecute".into()),
        toleration_seconds: s,
        ..Default::default()
    };
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
    let mut w = TestWorld::new(vec![Box::new(crate::framework::Controller(crate::podgc::PodGcController::with_threshold(1)))]);
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
    let mut w = TestWorld::new(vec![Box::new(crate::framework::Controller(crate::resourcequota::ResourceQuotaController::new()))]);
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
        p.spec.as_mut().unwrap().containers[0].resources = Some(ResourceRequirements {
            requests: Some(std::collections::BTreeMap::from([("cpu".to_string(), Quantity("200m".into()))])),
            ..Default::default()
        });
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

fn no_execute(n: &Node) -> Vec<String> {
    taints(n).into_iter().filter(|(_, e)| e == "NoExecute").map(|(k, _)| k).collect()
}

// client-go flowcontrol.NewTokenBucketRateLimiter(qps, burst 1) in virtual time: (qps, [(t ms,
// TryAccept expected)]). A new bucket is full; refills at qps up to one token.
#[test]
fn token_bucket_try_accept() {
    let cases: &[(f64, &[(Millis, bool)])] = &[
        (0.1, &[(0, true), (0, false), (9_999, false), (10_000, true), (15_000, false), (20_000, true)]),
        (0.1, &[(5_000, true), (60_000, true), (60_000, false), (69_999, false), (70_000, true)]),
        (0.01, &[(0, true), (10_000, false), (99_999, false), (100_000, true)]),
        (0.0, &[(0, false), (1_000_000, false)]),
        (-1.0, &[(0, false)]),
    ];
    for (qps, steps) in cases {
        let mut bucket = TokenBucket::new(*qps, 0);
        for (t, want) in steps.iter() {
            assert_eq!(bucket.try_accept(*t), *want, "qps {qps} at {t} ms");
        }
    }
    // When the next token is available.
    let mut bucket = TokenBucket::new(0.1, 0);
    assert_eq!(bucket.next_token_at(0), Some(0));
    assert!(bucket.try_accept(0));
    assert_eq!(bucket.next_token_at(0), Some(10_000));
    assert_eq!(bucket.next_token_at(4_000), Some(10_000));
    assert_eq!(bucket.next_token_at(12_000), Some(12_000));
    assert_eq!(TokenBucket::new(0.0, 0).next_token_at(0), None);
    let mut slow = TokenBucket::new(0.01, 0);
    assert!(slow.try_accept(0));
    assert_eq!(slow.next_token_at(30_000), Some(100_000));
}

// Mirrors pkg/controller/nodelifecycle/scheduler/rate_limited_queue_test.go TestSwapLimiter
// (never-limiter reports QPS 1; an unchanged QPS keeps the limiter) plus SwapLimiter's drain
// rule: (from qps, consume first?, to qps, swap at ms) → (reported QPS, token at swap time?).
#[test]
fn swap_limiter() {
    let cases: &[(f64, bool, f64, Millis, f64, bool)] = &[
        (0.1, false, 0.0, 0, 1.0, false),      // → never limiter, which reports QPS 1
        (0.1, false, 5.5, 0, 5.5, true),       // old had a token: the new one starts full
        (0.1, true, 0.01, 1_000, 0.01, false), // old was empty: the new one is drained
        (0.1, true, 0.01, 10_000, 0.01, true), // old refilled by then: full
        (0.0, false, 0.1, 0, 0.1, false),      // from never: drained
        (0.0, false, 1.0, 0, 1.0, false),      // QPS 1 equals the never-limiter's: kept (upstream quirk)
    ];
    for (from, consume, to, at, want_qps, want_token) in cases {
        let mut bucket = TokenBucket::new(*from, 0);
        if *consume {
            assert!(bucket.try_accept(0));
        }
        bucket.swap(*to, *at);
        assert_eq!(bucket.reported_qps(), *want_qps, "{from} → {to}");
        assert_eq!(bucket.try_accept(*at), *want_token, "{from} → {to} at {at}");
    }
    // Unchanged QPS: the limiter (and its empty bucket) is kept.
    let mut bucket = TokenBucket::new(0.1, 0);
    assert!(bucket.try_accept(0));
    let before = bucket.clone();
    bucket.swap(0.1, 3_000);
    assert_eq!(bucket, before);
    // A drained new limiter gives its first token 1/qps later.
    let mut never = TokenBucket::new(0.0, 0);
    never.swap(0.1, 7_000);
    assert_eq!(never.next_token_at(7_000), Some(17_000));
}

// setLimiterInZone: (ready, not ready) → ComputeZoneState → eviction QPS for the zone's size.
#[test]
fn zone_eviction_rates() {
    let cases: &[(usize, usize, ZoneState, f64)] = &[
        (6, 0, ZoneState::Normal, 0.1),
        (4, 2, ZoneState::Normal, 0.1),
        (2, 3, ZoneState::PartialDisruption, 0.0),    // 5 nodes ≤ 50: stop
        (20, 30, ZoneState::PartialDisruption, 0.0),  // exactly 50: stop
        (20, 31, ZoneState::PartialDisruption, 0.01), // 51 > 50: secondary rate
        (0, 1, ZoneState::FullDisruption, 0.1),
        (0, 100, ZoneState::FullDisruption, 0.1),
        (60, 40, ZoneState::Normal, 0.1),
    ];
    for (ready, not_ready, state, qps) in cases {
        assert_eq!(zone_state(*ready, *not_ready), *state, "{ready}/{not_ready}");
        assert_eq!(zone_eviction_qps(*state, ready + not_ready), *qps, "{ready}/{not_ready}");
    }
}

// Mirrors rate_limited_queue_test.go TestAddNode, TestDelNode, TestTry and TestAddAfterTry, with
// a 0.1/s bucket in place of the always-limiter (one item per 10 s pass).
#[test]
fn rate_limited_timed_queue() {
    let new = || {
        let mut q = RateLimitedTimedQueue::new(TokenBucket::new(0.1, 0));
        for v in ["first", "second", "third"] {
            assert!(q.add(v, 0));
        }
        q
    };
    let q = new();
    assert_eq!(q.queued(), vec!["first", "second", "third"]);
    for (removed, left) in [("first", ["second", "third"]), ("second", ["first", "third"]), ("third", ["first", "second"])] {
        let mut q = new();
        assert!(q.remove(removed));
        assert_eq!(q.queued(), left.to_vec());
        assert!(!q.contains(removed));
    }
    // TestTry / TestAddAfterTry: processed values leave the queue but stay in the set.
    let mut q = new();
    q.remove("second");
    let mut done = Vec::new();
    for t in [0, 5_000, 10_000, 20_000] {
        q.try_process(t, |v| {
            done.push((t, v.to_string()));
            Ok(())
        });
    }
    assert_eq!(done, vec![(0, "first".to_string()), (10_000, "third".to_string())], "one token per 10 s");
    assert!(q.queued().is_empty());
    assert!(!q.add("first", 30_000), "still in the set until removed");
    q.try_process(30_000, |_| panic!("the same value is not processed twice without remove"));
    assert_eq!(q.limiter.next_token_at(30_000), Some(30_000), "an empty queue takes no token");
    // A failed action is retried after its wait (+1 ms); the attempt before that takes a token.
    let mut q = RateLimitedTimedQueue::new(TokenBucket::new(1000.0, 0));
    q.add("x", 0);
    let mut calls = 0;
    q.try_process(0, |_| {
        calls += 1;
        Err(50)
    });
    assert_eq!((calls, q.next_attempt(0)), (1, Some(51)));
    q.try_process(51, |_| {
        calls += 1;
        Ok(())
    });
    assert_eq!(calls, 2);
}

fn zoned_node(name: &str, zone: &str) -> Node {
    let mut n = node(name, "True", 0);
    n.metadata.labels = Some([("topology.kubernetes.io/zone".to_string(), zone.to_string())].into());
    n
}

// Two nodes of a 6-node zone stop at once; the zone stays Normal (2 < 3 not ready) and its
// 0.1/s limiter taints them 10 s apart: the first at the monitor pass that sees it Unknown, the
// second at the 100 ms-grid pass when the next token is there.
#[test]
fn nodes_of_one_normal_zone_are_tainted_at_the_eviction_rate() {
    let mut w = world();
    let names: Vec<String> = (1..=6).map(|i| format!("n{i}")).collect();
    for n in &names {
        w.create(Object::Node(Box::new(zoned_node(n, "z1")))).unwrap();
    }
    w.add(Box::new(crate::testing::FakeHeartbeat { nodes: names[2..].to_vec() }));
    let mut first_tainted: BTreeMap<String, Millis> = BTreeMap::new();
    while w.now() < 120_000 {
        w.run_for(100);
        for n in ["n1", "n2"] {
            if no_execute(&get_node(&w, n)).contains(&TAINT_UNREACHABLE.to_string()) {
                first_tainted.entry(n.to_string()).or_insert(w.now());
            }
        }
    }
    let (a, b) = (first_tainted["n1"], first_tainted["n2"]);
    assert_eq!(a % NODE_MONITOR_PERIOD_MS, 0, "the first taint lands in a monitor pass: {a}");
    assert_eq!(b - a, 10_000, "1 / 0.1 per second: {first_tainted:?}");
    for n in &names[2..] {
        assert!(no_execute(&get_node(&w, n)).is_empty());
    }
}

// A partially disrupted zone of ≤ 50 nodes (3 of 5 not ready) gets no NoExecute taints; when
// enough nodes come back for the zone to be Normal again, the new (drained) 0.1/s limiter
// taints the nodes still down one per 10 s, the first 10 s after the rate change.
#[test]
fn a_small_partially_disrupted_zone_gets_no_eviction_taints_until_it_is_normal() {
    let mut w = world();
    let names: Vec<String> = (1..=5).map(|i| format!("n{i}")).collect();
    for n in &names {
        w.create(Object::Node(Box::new(zoned_node(n, "z1")))).unwrap();
    }
    // A second healthy zone keeps the cluster out of master-disruption mode.
    w.create(Object::Node(Box::new(zoned_node("other", "z2")))).unwrap();
    w.add(Box::new(crate::testing::FakeHeartbeat { nodes: vec!["n4".into(), "n5".into(), "other".into()] }));
    w.run_for(120_000);
    for n in ["n1", "n2", "n3"] {
        let node = get_node(&w, n);
        assert_eq!(node.status.as_ref().unwrap().conditions.as_ref().unwrap()[0].status, "Unknown");
        assert!(no_execute(&node).is_empty(), "{n}: {:?}", taints(&node));
        assert!(taints(&node).contains(&(TAINT_UNREACHABLE.into(), "NoSchedule".into())));
    }
    // n3's kubelet comes back: 2 of 5 not ready → Normal.
    w.add(Box::new(crate::testing::FakeHeartbeat { nodes: vec!["n3".into()] }));
    let mut n3 = get_node(&w, "n3");
    let c = &mut n3.status.as_mut().unwrap().conditions.as_mut().unwrap()[0];
    c.status = "True".into();
    c.last_heartbeat_time = Some(time_at(w.now()));
    c.last_transition_time = Some(time_at(w.now()));
    w.as_user(|ctx| ctx.update_status(Object::Node(Box::new(n3)))).unwrap();
    let back = w.now();
    let mut first_tainted: BTreeMap<String, Millis> = BTreeMap::new();
    while w.now() < back + 60_000 {
        w.run_for(100);
        for n in ["n1", "n2"] {
            if no_execute(&get_node(&w, n)).contains(&TAINT_UNREACHABLE.to_string()) {
                first_tainted.entry(n.to_string()).or_insert(w.now());
            }
        }
    }
    let (a, b) = (first_tainted["n1"], first_tainted["n2"]);
    // The pass at `back` already ran; the next one sees n3 Ready and swaps in the new limiter.
    let normal_at = (back / NODE_MONITOR_PERIOD_MS + 1) * NODE_MONITOR_PERIOD_MS;
    assert_eq!((a - normal_at, b - a), (10_000, 10_000), "{first_tainted:?}, zone Normal at {normal_at}");
    assert!(no_execute(&get_node(&w, "n3")).is_empty());
}
