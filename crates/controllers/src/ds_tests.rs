//! DaemonSet tests.

use crate::common::{decode, encode};
use crate::daemonset::*;
use crate::testing::{FakeKubelet, FakeScheduler, TestWorld};
use kubesim_api::k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Node, NodeSpec, PodSpec, PodTemplateSpec, Taint};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubesim_api::object::Object;
use std::collections::BTreeMap;

fn node(name: &str, labels: &[(&str, &str)], taint: Option<&str>) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            ..Default::default()
        },
        spec: taint.map(|k| NodeSpec {
            taints: Some(vec![Taint { key: k.into(), value: Some("x".into()), effect: "NoSchedule".into(), time_added: None }]),
            ..Default::default()
        }),
        status: None,
    }
}

fn ds(node_selector: Option<(&str, &str)>) -> DaemonSet {
    let labels = BTreeMap::from([("app".to_string(), "agent".to_string())]);
    DaemonSet {
        metadata: ObjectMeta { name: Some("agent".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(DaemonSetSpec {
            selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    node_selector: node_selector.map(|(k, v)| BTreeMap::from([(k.to_string(), v.to_string())])),
                    containers: vec![Container { name: "a".into(), image: Some("agent:1".into()), ..Default::default() }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

fn world() -> TestWorld {
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(DaemonSetController::new())),
        Box::new(FakeScheduler),
        Box::new(FakeKubelet::new(2000, 1000)),
    ]);
    w.create(Object::Node(Box::new(node("node-1", &[("disktype", "ssd")], None)))).unwrap();
    w.create(Object::Node(Box::new(node("node-2", &[], None)))).unwrap();
    w.create(Object::Node(Box::new(node("node-3", &[], Some("dedicated"))))).unwrap();
    w
}

fn pods_by_node(w: &TestWorld) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in w.list(("", "pods"), "default") {
        if p.metadata().deletion_timestamp.is_some() {
            continue;
        }
        let pod = p.as_pod().unwrap();
        out.entry(pod.spec.as_ref().unwrap().node_name.clone().unwrap_or_default()).or_default().push(p.name().to_string());
    }
    out
}

fn get_ds(w: &TestWorld) -> DaemonSet {
    decode(&w.get(("apps", "daemonsets"), "default", "agent").unwrap()).unwrap()
}

#[test]
fn one_pod_per_eligible_node_pinned_by_affinity_with_daemon_tolerations() {
    let mut w = world();
    w.create(encode(&ds(None), "apps/v1", "DaemonSet")).unwrap();
    w.run_for(10_000);
    let by_node = pods_by_node(&w);
    assert_eq!(by_node.keys().cloned().collect::<Vec<_>>(), vec!["node-1".to_string(), "node-2".to_string()], "the tainted node is skipped");
    let pod = w.list(("", "pods"), "default")[0].clone();
    let pod = pod.as_pod().unwrap();
    assert!(pod.metadata.name.as_deref().unwrap().starts_with("agent-"));
    let labels = pod.metadata.labels.as_ref().unwrap();
    assert_eq!(labels[TEMPLATE_GENERATION_LABEL], "1");
    assert!(labels.contains_key(REVISION_HASH_LABEL));
    let term = &pod
        .spec
        .as_ref()
        .unwrap()
        .affinity
        .as_ref()
        .unwrap()
        .node_affinity
        .as_ref()
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()
        .node_selector_terms[0];
    assert_eq!(term.match_fields.as_ref().unwrap()[0].key, "metadata.name");
    let tolerations = pod.spec.as_ref().unwrap().tolerations.as_ref().unwrap();
    let unreachable = tolerations.iter().find(|t| t.key.as_deref() == Some("node.kubernetes.io/unreachable")).unwrap();
    assert_eq!((unreachable.effect.as_deref(), unreachable.toleration_seconds), (Some("NoExecute"), None), "no tolerationSeconds for daemon pods");
    assert!(tolerations.iter().any(|t| t.key.as_deref() == Some("node.kubernetes.io/unschedulable")));
    let status = get_ds(&w).status.unwrap();
    assert_eq!((status.desired_number_scheduled, status.current_number_scheduled, status.number_ready, status.number_available), (2, 2, 2, Some(2)));
    // A new node gets a pod.
    w.create(Object::Node(Box::new(node("node-4", &[], None)))).unwrap();
    w.run_for(10_000);
    assert!(pods_by_node(&w).contains_key("node-4"));
    assert_eq!(get_ds(&w).status.unwrap().desired_number_scheduled, 3);
}

#[test]
fn node_selector_limits_the_nodes() {
    let mut w = world();
    w.create(encode(&ds(Some(("disktype", "ssd"))), "apps/v1", "DaemonSet")).unwrap();
    w.run_for(10_000);
    assert_eq!(pods_by_node(&w).keys().cloned().collect::<Vec<_>>(), vec!["node-1".to_string()]);
    // Relabel node-1: its pod is removed as misscheduled.
    let mut n = w.get(("", "nodes"), "", "node-1").unwrap().as_node().unwrap().clone();
    n.metadata.labels = None;
    w.as_user(|ctx| ctx.update(Object::Node(Box::new(n)))).unwrap();
    w.run_for(10_000);
    assert!(pods_by_node(&w).is_empty());
}

#[test]
fn rolling_update_replaces_pods_one_node_at_a_time() {
    let mut w = world();
    w.create(encode(&ds(None), "apps/v1", "DaemonSet")).unwrap();
    w.run_for(10_000);
    let mut d = get_ds(&w);
    d.spec.as_mut().unwrap().template.spec.as_mut().unwrap().containers[0].image = Some("agent:2".into());
    w.as_user(|ctx| ctx.update(encode(&d, "apps/v1", "DaemonSet"))).unwrap();
    w.run_for(1_000);
    let deleting = w.list(("", "pods"), "default").iter().filter(|p| p.metadata().deletion_timestamp.is_some()).count();
    assert_eq!(deleting, 1, "maxUnavailable 1");
    w.run_for(30_000);
    let status = get_ds(&w).status.unwrap();
    assert_eq!((status.updated_number_scheduled, status.number_available), (Some(2), Some(2)));
    for p in w.list(("", "pods"), "default") {
        assert_eq!(p.as_pod().unwrap().spec.as_ref().unwrap().containers[0].image.as_deref(), Some("agent:2"));
    }
    assert_eq!(w.list(("apps", "controllerrevisions"), "default").len(), 2);
}

#[test]
fn surge_rolling_update_starts_the_new_pod_before_removing_the_old_one() {
    use kubesim_api::k8s_openapi::api::apps::v1::{DaemonSetUpdateStrategy, RollingUpdateDaemonSet};
    use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let mut w = world();
    let mut d = ds(None);
    d.spec.as_mut().unwrap().update_strategy = Some(DaemonSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDaemonSet { max_surge: Some(IntOrString::Int(1)), max_unavailable: Some(IntOrString::Int(0)) }),
    });
    w.create(encode(&d, "apps/v1", "DaemonSet")).unwrap();
    w.run_for(10_000);
    let mut d = get_ds(&w);
    d.spec.as_mut().unwrap().template.spec.as_mut().unwrap().containers[0].image = Some("agent:2".into());
    w.as_user(|ctx| ctx.update(encode(&d, "apps/v1", "DaemonSet"))).unwrap();
    w.run_for(1_000);
    let by_node = pods_by_node(&w);
    assert_eq!(by_node.values().filter(|p| p.len() == 2).count(), 1, "one node surges: {by_node:?}");
    assert!(w.list(("", "pods"), "default").iter().all(|p| p.metadata().deletion_timestamp.is_none()), "nothing deleted before the new pod is available");
    w.run_for(30_000);
    let by_node = pods_by_node(&w);
    assert!(by_node.values().all(|p| p.len() == 1), "{by_node:?}");
    for p in w.list(("", "pods"), "default") {
        assert_eq!(p.as_pod().unwrap().spec.as_ref().unwrap().containers[0].image.as_deref(), Some("agent:2"));
    }
    let status = get_ds(&w).status.unwrap();
    assert_eq!((status.updated_number_scheduled, status.number_available), (Some(2), Some(2)));
}
