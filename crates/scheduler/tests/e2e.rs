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
