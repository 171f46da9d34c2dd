//! End-to-end scheduling through the API server with the in-crate harness.

use k8s_openapi::api::core::v1::Taint;
use kubesim_api::Object;
use kubesim_scheduler::harness::{make_node, make_pod, Harness};
use kubesim_scheduler::Scheduler;

fn node(name: &str, cpu: &str, mem: &str) -> Object {
    make_node(name, &[("cpu", cpu), ("memory", mem), ("pods", "110")], &[], vec![])
}

fn condition(h: &Harness, name: &str) -> Option<(String, String, String)> {
    let pod = h.pod("default", name)?;
    let c = pod.status?.conditions?.into_iter().find(|c| c.type_ == "PodScheduled")?;
    Some((c.status, c.reason.unwrap_or_default(), c.message.unwrap_or_default()))
}

#[test]
fn schedules_nginx_and_records_the_scheduled_event() {
    let mut h = Harness::new(Scheduler::new());
    h.create(node("node-1", "4", "8Gi")).unwrap();
    h.create(Object::Pod(Box::new(make_pod("nginx", &[("cpu", "100m"), ("memory", "128Mi")])))).unwrap();
    h.run_until_idle(60_000);
    assert_eq!(h.node_of("default", "nginx").as_deref(), Some("node-1"));
    assert_eq!(h.events("Scheduled"), vec!["Successfully assigned default/nginx to node-1".to_string()]);
    let (status, _, _) = condition(&h, "nginx").unwrap();
    assert_eq!(status, "True");
}

#[test]
fn unschedulable_pods_get_the_fit_error_message() {
    let mut h = Harness::new(Scheduler::new());
    h.create(node("node-1", "1", "8Gi")).unwrap();
    h.create(node("node-2", "1", "8Gi")).unwrap();
    let taint = Taint { key: "dedicated".into(), value: Some("gpu".into()), effect: "NoSchedule".into(), time_added: None };
    h.create(make_node("node-3", &[("cpu", "8"), ("memory", "8Gi"), ("pods", "110")], &[], vec![taint])).unwrap();
    h.create(Object::Pod(Box::new(make_pod("big", &[("cpu", "2")])))).unwrap();
    h.run_until_idle(60_000);
    assert_eq!(h.node_of("default", "big"), None);
    let (status, reason, message) = condition(&h, "big").unwrap();
    assert_eq!((status.as_str(), reason.as_str()), ("False", "Unschedulable"));
    assert_eq!(
        message,
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    assert_eq!(h.events("FailedScheduling"), vec![message]);
}

#[test]
fn spreads_pods_by_least_allocated() {
    let mut h = Harness::new(Scheduler::new());
    for i in 1..=3 {
        h.create(node(&format!("node-{i}"), "4", "8Gi")).unwrap();
    }
    for i in 0..6 {
        h.create(Object::Pod(Box::new(make_pod(&format!("p{i}"), &[("cpu", "500m"), ("memory", "512Mi")])))).unwrap();
    }
    h.run_until_idle(60_000);
    let mut per_node = std::collections::BTreeMap::new();
    for i in 0..6 {
        *per_node.entry(h.node_of("default", &format!("p{i}")).expect("bound")).or_insert(0) += 1;
    }
    assert_eq!(per_node.values().copied().collect::<Vec<_>>(), vec![2, 2, 2]);
}

#[test]
fn pods_for_unknown_schedulers_stay_pending() {
    let mut h = Harness::new(Scheduler::new());
    h.create(node("node-1", "4", "8Gi")).unwrap();
    let mut pod = make_pod("custom", &[]);
    pod.spec.as_mut().unwrap().scheduler_name = Some("my-scheduler".into());
    h.create(Object::Pod(Box::new(pod))).unwrap();
    h.run_until_idle(60_000);
    assert_eq!(h.node_of("default", "custom"), None);
    assert!(condition(&h, "custom").is_none_or(|c| c.0 != "False"));
}

mod more {
    use super::*;
    use k8s_openapi::api::core::v1::{Affinity, PodAffinityTerm, PodAntiAffinity, PodSchedulingGate, TopologySpreadConstraint};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use std::collections::BTreeMap;

    fn labelled(mut pod: k8s_openapi::api::core::v1::Pod, labels: &[(&str, &str)]) -> k8s_openapi::api::core::v1::Pod {
        pod.metadata.labels = Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        pod
    }

    fn priority_class(h: &mut Harness, name: &str, value: i64, policy: Option<&str>) {
        let info = kubesim_api::kind_info("scheduling.k8s.io/v1", "PriorityClass").unwrap();
        let mut json = serde_json::json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value});
        if let Some(p) = policy {
            json["preemptionPolicy"] = serde_json::json!(p);
        }
        h.create(Object::from_json(info, json).unwrap()).unwrap();
    }

    fn selector(k: &str, v: &str) -> LabelSelector {
        LabelSelector { match_labels: Some([(k.to_string(), v.to_string())].into()), ..Default::default() }
    }

    // Mirrors the message example of pkg/scheduler/framework/types.go FitError.Error (reference 1.8b).
    #[test]
    fn fit_error_histogram_sorted_as_strings() {
        let mut h = Harness::new(Scheduler::new());
        let mut n1 = make_node("node-1", &[("cpu", "4"), ("memory", "8Gi"), ("pods", "110")], &[], vec![]);
        if let Object::Node(n) = &mut n1 {
            n.metadata.labels.as_mut().unwrap().insert("disk".into(), "hdd".into());
        }
        h.create(n1).unwrap();
        let cp = Taint { key: "node-role.kubernetes.io/control-plane".into(), value: None, effect: "NoSchedule".into(), time_added: None };
        h.create(make_node("cp", &[("cpu", "4"), ("memory", "8Gi"), ("pods", "110")], &[("disk", "ssd")], vec![cp])).unwrap();
        for i in 0..4 {
            let gpu = Taint { key: "nvidia.com/gpu".into(), value: Some("present".into()), effect: "NoSchedule".into(), time_added: None };
            h.create(make_node(&format!("gpu-{i}"), &[("cpu", "4"), ("memory", "8Gi"), ("pods", "110")], &[("disk", "ssd")], vec![gpu])).unwrap();
        }
        let mut pod = make_pod("p", &[]);
        pod.spec.as_mut().unwrap().node_selector = Some([("disk".to_string(), "ssd".to_string())].into());
        h.create(Object::Pod(Box::new(pod))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(
            condition(&h, "p").unwrap().2,
            "0/6 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 4 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling."
        );
    }

    // Mirrors pkg/scheduler/schedule_one_test.go TestFairEvaluationForNodes.
    #[test]
    fn fair_evaluation_round_robins_the_start_index() {
        let config = serde_json::json!({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 30});
        let mut h = Harness::new(Scheduler::from_config(&config).unwrap().with_events(false));
        for i in 0..500 {
            h.create(node(&format!("n{i:03}"), "100", "100Gi")).unwrap();
        }
        for i in 0..5 {
            h.create(Object::Pod(Box::new(make_pod(&format!("p{i}"), &[("cpu", "10m")])))).unwrap();
        }
        h.run_until_idle(60_000);
        for i in 0..5 {
            let a = &h.scheduler().attempts("default", &format!("p{i}"))[0];
            assert_eq!(a.evaluated_nodes, 150, "pod {i}");
            assert_eq!(a.start_node_index, (i * 150) % 500, "pod {i}");
        }
    }

    #[test]
    fn attempts_explain_the_decision_without_annotating_the_pod() {
        let mut h = Harness::new(Scheduler::new());
        h.create(node("node-1", "4", "8Gi")).unwrap();
        h.create(node("node-2", "2", "8Gi")).unwrap();
        let taint = Taint { key: "k".into(), value: Some("v".into()), effect: "NoSchedule".into(), time_added: None };
        h.create(make_node("node-3", &[("cpu", "4"), ("memory", "8Gi"), ("pods", "110")], &[], vec![taint])).unwrap();
        h.create(Object::Pod(Box::new(make_pod("web", &[("cpu", "1"), ("memory", "1Gi")])))).unwrap();
        h.run_until_idle(10_000);
        let pod = h.pod("default", "web").unwrap();
        assert!(pod.metadata.annotations.is_none(), "kube-scheduler writes no annotations: {:?}", pod.metadata.annotations);
        let attempts = h.scheduler().attempts("default", "web");
        assert_eq!(attempts.len(), 1);
        let filter = attempts[0].filter();
        assert_eq!(filter["node-1"]["NodeResourcesFit"], "passed");
        assert_eq!(filter["node-3"]["TaintToleration"], "node(s) had untolerated taint {k: v}");
        assert!(!filter["node-3"].contains_key("NodeResourcesFit"), "plugins after a rejection do not run");
        let score = attempts[0].scores();
        // node-1: cpu (4000-1000)/4000 = 75, memory (8Gi-1Gi)/8Gi = 87 → 81.
        assert_eq!(score["node-1"]["NodeResourcesFit"], 81);
        assert_eq!(score["node-2"]["NodeResourcesFit"], 68);
        assert!(!score["node-1"].contains_key("NodeAffinity"), "skipped by PreScore");
        assert_eq!(attempts[0].final_scores()["node-1"]["TaintToleration"], 300);
        assert_eq!(attempts[0].selected.as_deref(), Some("node-1"));
        assert_eq!(attempts[0].outcome, kubesim_scheduler::Outcome::Scheduled("node-1".into()));
        assert_eq!(h.node_of("default", "web").as_deref(), Some("node-1"));
        assert!(attempts[0].plugin_time("Filter", "*").is_some(), "{:?}", attempts[0].plugin_ns);
        assert!(attempts[0].plugin_time("Score", "NodeResourcesFit").is_some());
        assert!(attempts[0].wall_ns.is_some());
        let finals = attempts[0].final_scores();
        assert_eq!(attempts[0].totals()["node-1"], 300 + 81 + finals["node-1"]["NodeResourcesBalancedAllocation"] + finals["node-1"]["ImageLocality"]);
        assert_eq!(attempts[0].filter()["node-3"]["TaintToleration"], "node(s) had untolerated taint {k: v}");
    }

    #[test]
    fn history_can_be_turned_off() {
        let mut h = Harness::new(Scheduler::new().with_history(false));
        h.create(node("node-1", "4", "8Gi")).unwrap();
        h.create(Object::Pod(Box::new(make_pod("web", &[])))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(h.node_of("default", "web").as_deref(), Some("node-1"));
        assert!(h.scheduler().attempts("default", "web").is_empty());
        assert!(h.pod("default", "web").unwrap().metadata.annotations.is_none());
    }

    #[test]
    fn unschedulable_pod_is_retried_when_a_node_is_added() {
        let mut h = Harness::new(Scheduler::new());
        h.create(node("small", "1", "1Gi")).unwrap();
        h.create(Object::Pod(Box::new(make_pod("big", &[("cpu", "2")])))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(h.node_of("default", "big"), None);
        assert_eq!(h.scheduler().queue_location("default", "big"), Some(kubesim_scheduler::queue::Location::Unschedulable));
        h.create(node("large", "4", "8Gi")).unwrap();
        h.run_until_idle(60_000);
        assert_eq!(h.node_of("default", "big").as_deref(), Some("large"));
        assert_eq!(h.scheduler().attempts("default", "big").len(), 2);
    }

    #[test]
    fn gated_pods_wait_until_their_gates_are_removed() {
        let mut h = Harness::new(Scheduler::new());
        h.create(node("node-1", "4", "8Gi")).unwrap();
        let mut pod = make_pod("gated", &[]);
        pod.spec.as_mut().unwrap().scheduling_gates = Some(vec![PodSchedulingGate { name: "example.com/wait".into() }]);
        h.create(Object::Pod(Box::new(pod))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(h.scheduler().queue_location("default", "gated"), Some(kubesim_scheduler::queue::Location::Gated));
        assert!(h.scheduler().attempts("default", "gated").is_empty());
        // Removing the gate lets the pod into activeQ.
        let mut pod = h.pod("default", "gated").unwrap();
        pod.spec.as_mut().unwrap().scheduling_gates = None;
        pod.metadata.resource_version = None;
        h.update(Object::Pod(Box::new(pod))).unwrap();
        h.run_until_idle(20_000);
        assert_eq!(h.node_of("default", "gated").as_deref(), Some("node-1"));
    }

    #[test]
    fn required_anti_affinity_puts_replicas_on_distinct_nodes() {
        let mut h = Harness::new(Scheduler::new());
        for i in 1..=3 {
            h.create(node(&format!("node-{i}"), "4", "8Gi")).unwrap();
        }
        for i in 0..4 {
            let mut pod = labelled(make_pod(&format!("db-{i}"), &[("cpu", "100m")]), &[("app", "db")]);
            pod.spec.as_mut().unwrap().affinity = Some(Affinity {
                pod_anti_affinity: Some(PodAntiAffinity {
                    required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                        label_selector: Some(selector("app", "db")),
                        topology_key: "kubernetes.io/hostname".into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
                ..Default::default()
            });
            h.create(Object::Pod(Box::new(pod))).unwrap();
        }
        h.run_until_idle(60_000);
        let nodes: std::collections::BTreeSet<String> = (0..4).filter_map(|i| h.node_of("default", &format!("db-{i}"))).collect();
        assert_eq!(nodes.len(), 3);
        let pending: Vec<String> = (0..4).map(|i| format!("db-{i}")).filter(|n| h.node_of("default", n).is_none()).collect();
        assert_eq!(pending.len(), 1);
        let msg = condition(&h, &pending[0]).unwrap().2;
        assert!(msg.starts_with("0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."), "{msg}");
    }

    #[test]
    fn hard_topology_spread_balances_zones() {
        let mut h = Harness::new(Scheduler::new());
        for (name, zone) in [("a1", "a"), ("a2", "a"), ("b1", "b")] {
            h.create(make_node(name, &[("cpu", "8"), ("memory", "8Gi"), ("pods", "110")], &[("topology.kubernetes.io/zone", zone)], vec![])).unwrap();
        }
        for i in 0..6 {
            let mut pod = labelled(make_pod(&format!("w{i}"), &[("cpu", "100m")]), &[("app", "w")]);
            pod.spec.as_mut().unwrap().topology_spread_constraints = Some(vec![TopologySpreadConstraint {
                max_skew: 1,
                topology_key: "topology.kubernetes.io/zone".into(),
                when_unsatisfiable: "DoNotSchedule".into(),
                label_selector: Some(selector("app", "w")),
                ..Default::default()
            }]);
            h.create(Object::Pod(Box::new(pod))).unwrap();
        }
        h.run_until_idle(60_000);
        let mut per_zone: BTreeMap<&str, usize> = BTreeMap::new();
        for i in 0..6 {
            let n = h.node_of("default", &format!("w{i}")).expect("bound");
            *per_zone.entry(if n.starts_with('a') { "a" } else { "b" }).or_default() += 1;
        }
        assert_eq!(per_zone, BTreeMap::from([("a", 3), ("b", 3)]));
    }

    #[test]
    fn preemption_evicts_lower_priority_pods_and_nominates_the_node() {
        let mut h = Harness::new(Scheduler::new());
        h.create(node("node-1", "2", "8Gi")).unwrap();
        for i in 0..2 {
            h.create(Object::Pod(Box::new(make_pod(&format!("low-{i}"), &[("cpu", "1")])))).unwrap();
        }
        h.run_until_idle(10_000);
        assert!(h.node_of("default", "low-0").is_some() && h.node_of("default", "low-1").is_some());
        priority_class(&mut h, "high", 1000, None);
        let mut high = make_pod("high", &[("cpu", "1")]);
        high.spec.as_mut().unwrap().priority_class_name = Some("high".into());
        h.create(Object::Pod(Box::new(high))).unwrap();
        h.run_until_idle(20_000);
        let attempt = h.scheduler().attempts("default", "high")[0].clone();
        assert_eq!(attempt.nominated_node.as_deref(), Some("node-1"));
        assert_eq!(attempt.victims.len(), 1);
        let victim = attempt.victims[0].split('/').nth(1).unwrap().to_string();
        let vp = h.pod("default", &victim).unwrap();
        assert!(vp.metadata.deletion_timestamp.is_some(), "victim deleted gracefully");
        let dt = vp.status.unwrap().conditions.unwrap().into_iter().find(|c| c.type_ == "DisruptionTarget").unwrap();
        assert_eq!(dt.reason.as_deref(), Some("PreemptionByScheduler"));
        assert_eq!(h.pod("default", "high").unwrap().status.unwrap().nominated_node_name.as_deref(), Some("node-1"));
        // The kubelet finishes the graceful deletion; the preemptor then lands on the node.
        h.delete_pod("default", &victim);
        h.run_until_idle(60_000);
        assert_eq!(h.node_of("default", "high").as_deref(), Some("node-1"));
    }

    #[test]
    fn preemption_policy_never_does_not_preempt() {
        let mut h = Harness::new(Scheduler::new());
        h.create(node("node-1", "1", "8Gi")).unwrap();
        h.create(Object::Pod(Box::new(make_pod("low", &[("cpu", "1")])))).unwrap();
        h.run_until_idle(10_000);
        priority_class(&mut h, "high-never", 1000, Some("Never"));
        let mut high = make_pod("high", &[("cpu", "1")]);
        high.spec.as_mut().unwrap().priority_class_name = Some("high-never".into());
        h.create(Object::Pod(Box::new(high))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(condition(&h, "high").unwrap().2, "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.");
        assert!(h.pod("default", "low").unwrap().metadata.deletion_timestamp.is_none());
    }

    #[test]
    fn equal_priority_pods_find_no_victims() {
        let mut h = Harness::new(Scheduler::new());
        h.create(node("node-1", "1", "8Gi")).unwrap();
        h.create(Object::Pod(Box::new(make_pod("a", &[("cpu", "1")])))).unwrap();
        h.run_until_idle(10_000);
        h.create(Object::Pod(Box::new(make_pod("b", &[("cpu", "1")])))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(
            condition(&h, "b").unwrap().2,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn config_profiles_and_unknown_schedulers() {
        let config = serde_json::json!({
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {"schedulerName": "default-scheduler"},
                {"schedulerName": "bin-packing",
                 "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]}
            ]
        });
        let mut h = Harness::new(Scheduler::from_config(&config).unwrap());
        h.create(node("node-1", "4", "8Gi")).unwrap();
        h.create(node("node-2", "4", "8Gi")).unwrap();
        let mut first = make_pod("first", &[("cpu", "1")]);
        first.spec.as_mut().unwrap().node_name = Some("node-2".into());
        h.create(Object::Pod(Box::new(first))).unwrap();
        for i in 0..3 {
            let mut p = make_pod(&format!("packed-{i}"), &[("cpu", "500m")]);
            p.spec.as_mut().unwrap().scheduler_name = Some("bin-packing".into());
            h.create(Object::Pod(Box::new(p))).unwrap();
        }
        let mut other = make_pod("other", &[]);
        other.spec.as_mut().unwrap().scheduler_name = Some("nobody".into());
        h.create(Object::Pod(Box::new(other))).unwrap();
        h.run_until_idle(60_000);
        for i in 0..3 {
            assert_eq!(h.node_of("default", &format!("packed-{i}")).as_deref(), Some("node-2"), "MostAllocated packs");
        }
        assert_eq!(h.node_of("default", "other"), None);
        assert!(Scheduler::from_config(
            &serde_json::json!({"profiles": [{"schedulerName": "x", "plugins": {"score": {"enabled": [{"name": "Frobnicate"}]}}}]})
        )
        .is_err());
    }
}

mod queue_behaviour {
    use super::*;
    use kubesim_scheduler::queue::{Location, SchedulingQueue};

    fn priority_class(h: &mut Harness, name: &str, value: i64) {
        let info = kubesim_api::kind_info("scheduling.k8s.io/v1", "PriorityClass").unwrap();
        let json = serde_json::json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value, "preemptionPolicy": "Never"});
        h.create(Object::from_json(info, json).unwrap()).unwrap();
    }

    // PrioritySort: the highest priority pod is popped first, whatever the creation order.
    #[test]
    fn higher_priority_pods_are_scheduled_first() {
        let mut h = Harness::new(Scheduler::new());
        priority_class(&mut h, "p100", 100);
        priority_class(&mut h, "p200", 200);
        h.create(node("node-1", "1", "8Gi")).unwrap();
        for (name, class) in [("low", None), ("mid", Some("p100")), ("top", Some("p200"))] {
            let mut pod = make_pod(name, &[("cpu", "1")]);
            pod.spec.as_mut().unwrap().priority_class_name = class.map(String::from);
            h.create(Object::Pod(Box::new(pod))).unwrap();
        }
        h.run_until_idle(10_000);
        assert_eq!(h.node_of("default", "top").as_deref(), Some("node-1"));
        assert_eq!(h.node_of("default", "mid"), None);
        assert_eq!(h.node_of("default", "low"), None);
        let t = |n: &str| h.scheduler().attempts("default", n)[0].t_ms;
        assert!(t("top") < t("mid") && t("mid") < t("low"));
    }

    // flushUnschedulablePodsLeftover: after 5 minutes in unschedulablePods a pod is retried
    // even without a cluster event.
    #[test]
    fn unschedulable_pods_are_retried_after_five_minutes() {
        let mut h = Harness::new(Scheduler::new());
        h.create(node("node-1", "1", "8Gi")).unwrap();
        h.create(Object::Pod(Box::new(make_pod("big", &[("cpu", "2")])))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(h.scheduler().attempts("default", "big").len(), 1);
        h.advance_to(4 * 60 * 1000);
        assert_eq!(h.scheduler().attempts("default", "big").len(), 1, "not before 5 minutes");
        h.advance_to(6 * 60 * 1000);
        let attempts = h.scheduler().attempts("default", "big");
        assert_eq!(attempts.len(), 2);
        assert!(attempts[1].t_ms > 5 * 60 * 1000 && attempts[1].t_ms <= 5 * 60 * 1000 + 30_000 + 10, "{}", attempts[1].t_ms);
        assert_eq!(h.scheduler().queue_location("default", "big"), Some(Location::Unschedulable));
    }

    // A cluster event while the pod is in flight sends it to backoffQ (1 s after the first
    // failure, rounded up to the 1-s window), not to unschedulablePods.
    #[test]
    fn queue_moves_and_backoff_expiry() {
        let q = SchedulingQueue::default();
        assert_eq!(q.backoff_duration(1), 1000);
        let mut h = Harness::new(Scheduler::new());
        h.create(node("node-1", "1", "8Gi")).unwrap();
        h.create(Object::Pod(Box::new(make_pod("big", &[("cpu", "2")])))).unwrap();
        h.run_until_idle(10_000);
        // An unrelated node event (labels) does not move a pod NodeResourcesFit rejected.
        let mut n = h.api().lookup(("", "nodes"), "", "node-1").unwrap().as_node().unwrap().clone();
        n.metadata.labels.as_mut().unwrap().insert("x".into(), "y".into());
        n.metadata.resource_version = None;
        h.update(Object::Node(Box::new(n))).unwrap();
        h.run_until_idle(60_000);
        assert_eq!(h.scheduler().attempts("default", "big").len(), 1);
        assert_eq!(h.scheduler().queue_location("default", "big"), Some(Location::Unschedulable));
    }
}

// The same inputs and seed give the same decisions, attempt records and store contents.
#[test]
fn runs_are_deterministic() {
    let run = || {
        let mut h = Harness::new(Scheduler::new());
        for i in 0..8 {
            h.create(node(&format!("node-{i}"), "4", "8Gi")).unwrap();
        }
        for i in 0..40 {
            h.create(Object::Pod(Box::new(make_pod(&format!("p{i}"), &[("cpu", "300m")])))).unwrap();
        }
        h.run_until_idle(60_000);
        let placements: Vec<Option<String>> = (0..40).map(|i| h.node_of("default", &format!("p{i}"))).collect();
        let attempts: Vec<(u64, Option<String>, std::collections::BTreeMap<String, i64>)> = (0..40)
            .map(|i| {
                let a = &h.scheduler().attempts("default", &format!("p{i}"))[0];
                (a.t_ms, a.selected.clone(), a.totals())
            })
            .collect();
        (placements, attempts, h.api().store().revision())
    };
    let first = run();
    assert!(first.0.iter().all(Option::is_some));
    assert_eq!(first, run());
}

// Above `detail_max_nodes`, attempts keep the top 3 scored nodes and the selected one.
#[test]
fn large_clusters_keep_summarized_details() {
    let options = kubesim_scheduler::Options { detail_max_nodes: 5, ..Default::default() };
    let mut h = Harness::new(Scheduler::new().with_options(options));
    for i in 0..8 {
        h.create(node(&format!("node-{i}"), "4", "8Gi")).unwrap();
    }
    h.create(Object::Pod(Box::new(make_pod("p", &[("cpu", "100m")])))).unwrap();
    h.run_until_idle(10_000);
    let a = &h.scheduler().attempts("default", "p")[0];
    assert!(!a.detailed);
    assert!(a.filter_records.is_empty());
    let totals = a.totals();
    assert_eq!(totals.len(), 3, "{totals:?}");
    assert!(totals.contains_key(a.selected.as_deref().unwrap()));
    assert_eq!(a.scores().len(), 3);
}

mod node_name_affinity {
    use super::*;
    use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};

    fn pinned(name: &str, node: &str, cpu: &str) -> k8s_openapi::api::core::v1::Pod {
        let mut pod = make_pod(name, &[("cpu", cpu)]);
        pod.spec.as_mut().unwrap().affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: None,
                        match_fields: Some(vec![NodeSelectorRequirement {
                            key: "metadata.name".into(),
                            operator: "In".into(),
                            values: Some(vec![node.into()]),
                        }]),
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        pod
    }

    // Mirrors pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go TestNodeAffinity
    // PreFilter results and schedule_one.go's handling of PreFilterResult.NodeNames.
    #[test]
    fn daemonset_style_pods_evaluate_only_their_node() {
        let mut h = Harness::new(Scheduler::new());
        for i in 1..=3 {
            h.create(node(&format!("node-{i}"), "1", "8Gi")).unwrap();
        }
        h.create(Object::Pod(Box::new(pinned("ds-a", "node-2", "100m")))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(h.node_of("default", "ds-a").as_deref(), Some("node-2"));
        assert_eq!(h.scheduler().attempts("default", "ds-a")[0].evaluated_nodes, 1);
        let mut filler = make_pod("filler", &[("cpu", "1")]);
        filler.spec.as_mut().unwrap().node_name = Some("node-1".into());
        h.create(Object::Pod(Box::new(filler))).unwrap();
        h.create(Object::Pod(Box::new(pinned("ds-b", "node-1", "500m")))).unwrap();
        h.run_until_idle(10_000);
        assert_eq!(
            condition(&h, "ds-b").unwrap().2,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
        );
        h.create(Object::Pod(Box::new(pinned("ds-c", "node-9", "100m")))).unwrap();
        h.run_until_idle(10_000);
        assert!(condition(&h, "ds-c").unwrap().2.starts_with("0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."));
    }
}

// QueueingHints: an assigned pod's arrival requeues a pod PodTopologySpread rejected only if
// the new pod matches its spread selector.
#[test]
fn spread_rejected_pods_requeue_only_for_matching_pods() {
    use k8s_openapi::api::core::v1::TopologySpreadConstraint;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    let mut h = Harness::new(Scheduler::new());
    for (name, zone) in [("a1", "a"), ("b1", "b")] {
        h.create(make_node(name, &[("cpu", "8"), ("memory", "8Gi"), ("pods", "110")], &[("zone", zone)], vec![])).unwrap();
    }
    let labelled = |name: &str, app: &str, node: Option<&str>| {
        let mut p = make_pod(name, &[]);
        p.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        p.spec.as_mut().unwrap().node_name = node.map(String::from);
        p
    };
    // Zone a has two "w" pods, zone b none; a new "w" pod may only go to b, which is cordoned.
    h.create(Object::Pod(Box::new(labelled("w0", "w", Some("a1"))))).unwrap();
    h.create(Object::Pod(Box::new(labelled("w1", "w", Some("a1"))))).unwrap();
    let mut b = h.api().lookup(("", "nodes"), "", "b1").unwrap().as_node().unwrap().clone();
    b.spec.get_or_insert_with(Default::default).unschedulable = Some(true);
    b.metadata.resource_version = None;
    h.update(Object::Node(Box::new(b))).unwrap();
    let mut spread = labelled("w2", "w", None);
    spread.spec.as_mut().unwrap().topology_spread_constraints = Some(vec![TopologySpreadConstraint {
        max_skew: 1,
        topology_key: "zone".into(),
        when_unsatisfiable: "DoNotSchedule".into(),
        label_selector: Some(LabelSelector { match_labels: Some([("app".to_string(), "w".to_string())].into()), ..Default::default() }),
        ..Default::default()
    }]);
    h.create(Object::Pod(Box::new(spread))).unwrap();
    h.run_until_idle(10_000);
    assert_eq!(h.scheduler().attempts("default", "w2").len(), 1);
    // An unrelated pod lands: no retry.
    h.create(Object::Pod(Box::new(labelled("other", "x", None)))).unwrap();
    h.run_until_idle(20_000);
    assert_eq!(h.node_of("default", "other").as_deref(), Some("a1"));
    assert_eq!(h.scheduler().attempts("default", "w2").len(), 1);
    // A matching pod lands: the spread pod is retried.
    h.create(Object::Pod(Box::new(labelled("w3", "w", Some("a1"))))).unwrap();
    h.run_until_idle(30_000);
    assert_eq!(h.scheduler().attempts("default", "w2").len(), 2);
}
