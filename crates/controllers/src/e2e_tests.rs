//! End-to-end tests of the controllers against the in-memory API server.

use crate::deployment::DeploymentController;
use crate::deployment_util::*;
use crate::replicaset::ReplicaSetController;
use crate::testing::{FakeKubelet, TestWorld};
use kubesim_api::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy, ReplicaSet};
use kubesim_api::k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubesim_api::object::Object;
use std::collections::BTreeMap;

pub(crate) fn template(image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta { labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])), ..Default::default() }),
        spec: Some(PodSpec { containers: vec![Container { name: "web".into(), image: Some(image.into()), ..Default::default() }], ..Default::default() }),
    }
}

pub(crate) fn deployment(name: &str, replicas: i32, image: &str) -> Deployment {
    Deployment {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector { match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])), ..Default::default() },
            template: template(image),
            ..Default::default()
        }),
        status: None,
    }
}

fn world() -> TestWorld {
    TestWorld::new(vec![
        Box::new(crate::framework::Controller(DeploymentController::new())),
        Box::new(crate::framework::Controller(ReplicaSetController::new())),
        Box::new(FakeKubelet::new(2000, 1000)),
    ])
}

fn rss(w: &TestWorld) -> Vec<ReplicaSet> {
    w.list(("apps", "replicasets"), "default")
        .iter()
        .filter_map(|o| match o.as_ref() {
            Object::ReplicaSet(rs) => Some((**rs).clone()),
            _ => None,
        })
        .collect()
}

fn get_deployment(w: &TestWorld, name: &str) -> Deployment {
    match w.get(("apps", "deployments"), "default", name).unwrap().as_ref() {
        Object::Deployment(d) => (**d).clone(),
        _ => unreachable!(),
    }
}

fn live_pods(w: &TestWorld) -> usize {
    w.list(("", "pods"), "default").iter().filter(|p| p.metadata().deletion_timestamp.is_none()).count()
}

fn update_image(w: &mut TestWorld, name: &str, image: &str) {
    let mut d = get_deployment(w, name);
    d.spec.as_mut().unwrap().template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
}

#[test]
fn deployment_creates_replica_set_and_pods_and_reports_available() {
    let mut w = world();
    w.create(Object::Deployment(Box::new(deployment("web", 3, "nginx:1.27")))).unwrap();
    w.run_for(30_000);
    let rss = rss(&w);
    assert_eq!(rss.len(), 1);
    let rs = &rss[0];
    let hash = rs.metadata.labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL].clone();
    assert_eq!(rs.metadata.name.as_deref(), Some(format!("web-{hash}").as_str()));
    assert!(hash.chars().all(|c| "456789bcdf".contains(c)), "{hash}");
    let owner = &rs.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.kind.as_str(), owner.controller, owner.block_owner_deletion), ("Deployment", Some(true), Some(true)));
    assert_eq!(rs.metadata.annotations.as_ref().unwrap()[REVISION_ANNOTATION], "1");
    assert_eq!(rs.status.as_ref().unwrap().available_replicas, Some(3));
    let pods = w.list(("", "pods"), "default");
    assert_eq!(pods.len(), 3);
    for p in &pods {
        assert!(p.name().starts_with(&format!("web-{hash}-")), "{}", p.name());
        assert_eq!(p.name().len(), format!("web-{hash}-").len() + 5);
    }
    let d = get_deployment(&w, "web");
    let status = d.status.unwrap();
    assert_eq!((status.replicas, status.updated_replicas, status.ready_replicas, status.available_replicas), (Some(3), Some(3), Some(3), Some(3)));
    assert_eq!(status.observed_generation, d.metadata.generation);
    let conds = status.conditions.unwrap();
    let available = conds.iter().find(|c| c.type_ == "Available").unwrap();
    assert_eq!((available.status.as_str(), available.reason.as_deref()), ("True", Some("MinimumReplicasAvailable")));
    let progressing = conds.iter().find(|c| c.type_ == "Progressing").unwrap();
    assert_eq!(progressing.reason.as_deref(), Some("NewReplicaSetAvailable"));
    assert_eq!(progressing.message.as_deref(), Some(format!("ReplicaSet \"web-{hash}\" has successfully progressed.").as_str()));
    assert_eq!(d.metadata.annotations.unwrap()[REVISION_ANNOTATION], "1");
    let events = w.events();
    assert!(events.contains(&("ScalingReplicaSet".into(), format!("Scaled up replica set web-{hash} from 0 to 3"))), "{events:?}");
    assert_eq!(events.iter().filter(|(r, _)| r == "SuccessfulCreate").count(), 3);
}

#[test]
fn rolling_update_moves_all_pods_to_the_new_replica_set() {
    let mut w = world();
    w.create(Object::Deployment(Box::new(deployment("web", 4, "nginx:1.27")))).unwrap();
    w.run_for(30_000);
    update_image(&mut w, "web", "nginx:1.28");
    w.run_for(120_000);
    let rss = rss(&w);
    assert_eq!(rss.len(), 2);
    let d = get_deployment(&w, "web");
    let hash = compute_hash(&d.spec.as_ref().unwrap().template, None);
    let new = rss.iter().find(|r| r.metadata.name.as_deref() == Some(&format!("web-{hash}"))).expect("new RS named by hash");
    assert_eq!(new.spec.as_ref().unwrap().replicas, Some(4));
    assert_eq!(new.metadata.annotations.as_ref().unwrap()[REVISION_ANNOTATION], "2");
    let old = rss.iter().find(|r| r.metadata.name != new.metadata.name).unwrap();
    assert_eq!(old.spec.as_ref().unwrap().replicas, Some(0));
    assert_eq!(live_pods(&w), 4);
    assert_eq!(d.metadata.annotations.as_ref().unwrap()[REVISION_ANNOTATION], "2");
    let status = d.status.unwrap();
    assert_eq!((status.replicas, status.updated_replicas, status.available_replicas), (Some(4), Some(4), Some(4)));
    // 25%/25% of 4: surge 1, unavailable 1 — the first step scales the new RS up to 1.
    let events = w.events();
    assert!(events.contains(&("ScalingReplicaSet".into(), format!("Scaled up replica set web-{hash} from 0 to 1"))), "{events:?}");
}

#[test]
fn recreate_scales_old_to_zero_before_creating_new() {
    let mut w = world();
    let mut d = deployment("web", 2, "nginx:1.27");
    d.spec.as_mut().unwrap().strategy = Some(DeploymentStrategy { type_: Some("Recreate".into()), rolling_update: None });
    w.create(Object::Deployment(Box::new(d))).unwrap();
    w.run_for(30_000);
    update_image(&mut w, "web", "nginx:1.28");
    w.run_for(60_000);
    let events: Vec<String> = w.events().into_iter().filter(|(r, _)| r == "ScalingReplicaSet").map(|(_, m)| m).collect();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events[1].starts_with("Scaled down replica set web-") && events[1].ends_with("from 2 to 0"), "{events:?}");
    assert!(events[2].starts_with("Scaled up replica set web-") && events[2].ends_with("from 0 to 2"), "{events:?}");
    assert_eq!(live_pods(&w), 2);
}

#[test]
fn replica_set_scales_down_and_replaces_deleted_pods() {
    let mut w = world();
    w.create(Object::Deployment(Box::new(deployment("web", 5, "nginx:1.27")))).unwrap();
    w.run_for(30_000);
    let mut d = get_deployment(&w, "web");
    d.spec.as_mut().unwrap().replicas = Some(2);
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
    w.run_for(30_000);
    assert_eq!(live_pods(&w), 2);
    assert_eq!(w.events().iter().filter(|(r, _)| r == "SuccessfulDelete").count(), 3);
    // A deleted pod is replaced.
    let victim = w.list(("", "pods"), "default")[0].name().to_string();
    let info = kubesim_api::object::kind_info("v1", "Pod").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", &victim, Default::default())).unwrap();
    w.run_for(30_000);
    assert_eq!(live_pods(&w), 2);
    assert!(w.get(("", "pods"), "default", &victim).is_none());
}

fn full_world() -> TestWorld {
    TestWorld::new(vec![
        Box::new(crate::framework::Controller(DeploymentController::new())),
        Box::new(crate::framework::Controller(ReplicaSetController::new())),
        Box::new(crate::framework::Controller(crate::gc::GarbageCollector::new())),
        Box::new(crate::framework::Controller(crate::namespace::NamespaceController::new())),
        Box::new(crate::framework::Controller(crate::namespace::ServiceAccountController::new())),
        Box::new(crate::framework::Controller(crate::namespace::RootCaPublisher::new())),
        Box::new(FakeKubelet::new(2000, 1000)),
    ])
}

fn delete_deployment(w: &mut TestWorld, name: &str, propagation: kubesim_apiserver::Propagation) {
    let info = kubesim_api::object::kind_info("apps/v1", "Deployment").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", name, kubesim_apiserver::DeleteOptions { propagation: Some(propagation), ..Default::default() })).unwrap();
}

#[test]
fn gc_background_deletes_replica_sets_and_pods_after_the_owner() {
    let mut w = full_world();
    w.create(Object::Deployment(Box::new(deployment("web", 3, "nginx")))).unwrap();
    w.run_for(30_000);
    assert_eq!(live_pods(&w), 3);
    delete_deployment(&mut w, "web", kubesim_apiserver::Propagation::Background);
    assert!(w.get(("apps", "deployments"), "default", "web").is_none(), "background: owner removed at once");
    w.run_for(60_000);
    assert!(rss(&w).is_empty());
    assert!(w.list(("", "pods"), "default").is_empty());
}

#[test]
fn gc_foreground_keeps_the_owner_until_dependents_are_gone() {
    let mut w = full_world();
    w.create(Object::Deployment(Box::new(deployment("web", 3, "nginx")))).unwrap();
    w.run_for(30_000);
    delete_deployment(&mut w, "web", kubesim_apiserver::Propagation::Foreground);
    w.run_for(200);
    let d = w.get(("apps", "deployments"), "default", "web").expect("foreground: owner kept");
    assert!(d.metadata().deletion_timestamp.is_some());
    assert_eq!(d.metadata().finalizers.as_deref(), Some(&["foregroundDeletion".to_string()][..]));
    assert!(!w.list(("", "pods"), "default").is_empty(), "pods still terminating");
    w.run_for(60_000);
    assert!(w.get(("apps", "deployments"), "default", "web").is_none());
    assert!(rss(&w).is_empty());
    assert!(w.list(("", "pods"), "default").is_empty());
}

#[test]
fn gc_orphan_strips_owner_references_and_keeps_dependents() {
    let mut w = full_world();
    w.create(Object::Deployment(Box::new(deployment("web", 2, "nginx")))).unwrap();
    w.run_for(30_000);
    delete_deployment(&mut w, "web", kubesim_apiserver::Propagation::Orphan);
    w.run_for(30_000);
    assert!(w.get(("apps", "deployments"), "default", "web").is_none());
    let rss = rss(&w);
    assert_eq!(rss.len(), 1);
    assert!(rss[0].metadata.owner_references.as_ref().is_none_or(|r| r.is_empty()));
    assert_eq!(live_pods(&w), 2);
    // Pods still belong to the ReplicaSet.
    for p in w.list(("", "pods"), "default") {
        assert_eq!(p.metadata().owner_references.as_ref().unwrap()[0].kind, "ReplicaSet");
    }
}

#[test]
fn namespace_deletion_removes_contents_and_the_namespace() {
    use kubesim_api::k8s_openapi::api::core::v1::Namespace;
    let mut w = full_world();
    w.create(Object::Namespace(Box::new(Namespace { metadata: ObjectMeta { name: Some("team".into()), ..Default::default() }, ..Default::default() })))
        .unwrap();
    let mut d = deployment("api", 2, "nginx");
    d.metadata.namespace = Some("team".into());
    w.run_for(1000);
    w.create(Object::Deployment(Box::new(d))).unwrap();
    w.run_for(30_000);
    assert_eq!(w.list(("", "pods"), "team").len(), 2);
    assert!(w.get(("", "serviceaccounts"), "team", "default").is_some());
    assert!(w.get(("", "configmaps"), "team", "kube-root-ca.crt").is_some());
    let info = kubesim_api::object::kind_info("v1", "Namespace").unwrap();
    w.as_user(|ctx| ctx.delete(info, "", "team", Default::default())).unwrap();
    w.run_for(60_000);
    assert!(w.get(("", "namespaces"), "", "team").is_none());
    for r in [("", "pods"), ("apps", "replicasets"), ("apps", "deployments"), ("", "serviceaccounts"), ("", "configmaps")] {
        assert!(w.list(r, "team").is_empty(), "{r:?} left in team");
    }
}

#[test]
fn service_accounts_and_root_ca_are_published_and_restored() {
    let mut w = full_world();
    w.run_for(1000);
    let sa = w.get(("", "serviceaccounts"), "default", "default").expect("default SA");
    assert_eq!(sa.metadata().owner_references, None);
    let cm = w.get(("", "configmaps"), "default", "kube-root-ca.crt").expect("root CA");
    let Object::ConfigMap(cm) = cm.as_ref() else { unreachable!() };
    assert!(cm.data.as_ref().unwrap()["ca.crt"].starts_with("-----BEGIN CERTIFICATE-----"));
    // Deleted → recreated; edited → reset.
    let info = kubesim_api::object::kind_info("v1", "ConfigMap").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "kube-root-ca.crt", Default::default())).unwrap();
    let sa_info = kubesim_api::object::kind_info("v1", "ServiceAccount").unwrap();
    w.as_user(|ctx| ctx.delete(sa_info, "default", "default", Default::default())).unwrap();
    w.run_for(1000);
    assert!(w.get(("", "configmaps"), "default", "kube-root-ca.crt").is_some());
    assert!(w.get(("", "serviceaccounts"), "default", "default").is_some());
    let mut edited = (**cm).clone();
    edited.metadata = w.get(("", "configmaps"), "default", "kube-root-ca.crt").unwrap().metadata().clone();
    edited.data = Some(BTreeMap::from([("ca.crt".to_string(), "tampered".to_string())]));
    w.as_user(|ctx| ctx.update(Object::ConfigMap(Box::new(edited)))).unwrap();
    w.run_for(1000);
    let Object::ConfigMap(cm) = w.get(("", "configmaps"), "default", "kube-root-ca.crt").unwrap().as_ref().clone() else { unreachable!() };
    assert_ne!(cm.data.unwrap()["ca.crt"], "tampered");
}

fn rs_by_revision(w: &TestWorld) -> BTreeMap<String, ReplicaSet> {
    rss(w).into_iter().map(|rs| (rs.metadata.annotations.as_ref().unwrap()[REVISION_ANNOTATION].clone(), rs)).collect()
}

#[test]
fn rollback_reuses_the_old_replica_set_with_a_new_revision_and_history() {
    let mut w = world();
    w.create(Object::Deployment(Box::new(deployment("web", 2, "nginx:1.27")))).unwrap();
    w.run_for(30_000);
    update_image(&mut w, "web", "nginx:1.28");
    w.run_for(60_000);
    // kubectl rollout undo: copy revision 1's template (without the hash label) into the Deployment.
    let revs = rs_by_revision(&w);
    let mut template = revs["1"].spec.as_ref().unwrap().template.clone().unwrap();
    template.metadata.as_mut().unwrap().labels.as_mut().unwrap().remove(POD_TEMPLATE_HASH_LABEL);
    let mut d = get_deployment(&w, "web");
    d.spec.as_mut().unwrap().template = template;
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
    w.run_for(60_000);
    let rss = rss(&w);
    assert_eq!(rss.len(), 2, "no third replica set");
    let revs = rs_by_revision(&w);
    assert_eq!(revs.keys().cloned().collect::<Vec<_>>(), vec!["2".to_string(), "3".to_string()]);
    let rolled_back = &revs["3"];
    assert_eq!(rolled_back.metadata.annotations.as_ref().unwrap()[REVISION_HISTORY_ANNOTATION], "1");
    assert!(rolled_back.spec.as_ref().unwrap().template.as_ref().unwrap().spec.as_ref().unwrap().containers[0].image.as_deref() == Some("nginx:1.27"));
    assert_eq!(rolled_back.spec.as_ref().unwrap().replicas, Some(2));
    assert_eq!(revs["2"].spec.as_ref().unwrap().replicas, Some(0));
    assert_eq!(get_deployment(&w, "web").metadata.annotations.unwrap()[REVISION_ANNOTATION], "3");
}

#[test]
fn revision_history_limit_deletes_the_oldest_empty_replica_sets() {
    let mut w = world();
    let mut d = deployment("web", 1, "nginx:1");
    d.spec.as_mut().unwrap().revision_history_limit = Some(1);
    w.create(Object::Deployment(Box::new(d))).unwrap();
    w.run_for(30_000);
    for image in ["nginx:2", "nginx:3", "nginx:4"] {
        update_image(&mut w, "web", image);
        w.run_for(60_000);
    }
    let revs = rs_by_revision(&w);
    assert_eq!(revs.keys().cloned().collect::<Vec<_>>(), vec!["3".to_string(), "4".to_string()]);
}

#[test]
fn paused_deployments_do_not_roll_out_but_scale_and_resume() {
    let mut w = world();
    w.create(Object::Deployment(Box::new(deployment("web", 2, "nginx:1")))).unwrap();
    w.run_for(30_000);
    let mut d = get_deployment(&w, "web");
    d.spec.as_mut().unwrap().paused = Some(true);
    d.spec.as_mut().unwrap().template.spec.as_mut().unwrap().containers[0].image = Some("nginx:2".into());
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
    w.run_for(30_000);
    assert_eq!(rss(&w).len(), 1, "no rollout while paused");
    let d = get_deployment(&w, "web");
    let status = d.status.clone().unwrap();
    let progressing = crate::deployment::get_condition(&status, "Progressing").unwrap();
    assert_eq!(
        (progressing.status.as_str(), progressing.reason.as_deref(), progressing.message.as_deref()),
        ("Unknown", Some("DeploymentPaused"), Some("Deployment is paused"))
    );
    // Scaling still happens.
    let mut d = get_deployment(&w, "web");
    d.spec.as_mut().unwrap().replicas = Some(4);
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
    w.run_for(30_000);
    assert_eq!(live_pods(&w), 4);
    // Resume → rollout.
    let mut d = get_deployment(&w, "web");
    d.spec.as_mut().unwrap().paused = None;
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
    w.run_for(120_000);
    let revs = rs_by_revision(&w);
    assert_eq!(revs["2"].spec.as_ref().unwrap().replicas, Some(4));
    assert_eq!(revs["1"].spec.as_ref().unwrap().replicas, Some(0));
    let d = get_deployment(&w, "web");
    let progressing = crate::deployment::get_condition(d.status.as_ref().unwrap(), "Progressing").unwrap().clone();
    assert_eq!(progressing.reason.as_deref(), Some("NewReplicaSetAvailable"));
}

#[test]
fn progress_deadline_exceeded_when_new_pods_never_become_ready() {
    let mut kubelet = FakeKubelet::new(2000, 1000);
    kubelet.never_ready_prefix = Some("web-".into());
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(DeploymentController::new())),
        Box::new(crate::framework::Controller(ReplicaSetController::new())),
        Box::new(kubelet),
    ]);
    let mut d = deployment("web", 2, "nginx:broken");
    d.spec.as_mut().unwrap().progress_deadline_seconds = Some(10);
    w.create(Object::Deployment(Box::new(d))).unwrap();
    w.run_for(5_000);
    let d = get_deployment(&w, "web");
    let cond = crate::deployment::get_condition(d.status.as_ref().unwrap(), "Progressing").unwrap().clone();
    assert_eq!((cond.status.as_str(), cond.reason.as_deref()), ("True", Some("ReplicaSetUpdated")), "pods were created: progress");
    w.run_for(20_000);
    let d = get_deployment(&w, "web");
    let status = d.status.unwrap();
    let cond = crate::deployment::get_condition(&status, "Progressing").unwrap().clone();
    let rs_name = rss(&w)[0].metadata.name.clone().unwrap();
    assert_eq!((cond.status.as_str(), cond.reason.as_deref()), ("False", Some("ProgressDeadlineExceeded")));
    assert_eq!(cond.message, Some(format!("ReplicaSet {rs_name:?} has timed out progressing.")));
    let available = crate::deployment::get_condition(&status, "Available").unwrap();
    assert_eq!((available.status.as_str(), available.reason.as_deref()), ("False", Some("MinimumReplicasUnavailable")));
    assert_eq!(available.message.as_deref(), Some("Deployment does not have minimum availability."));
}

#[test]
fn scaling_mid_rollout_is_proportional() {
    // New pods never become ready, so the rollout stalls with both replica sets active.
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(DeploymentController::new())),
        Box::new(crate::framework::Controller(ReplicaSetController::new())),
    ]);
    w.create(Object::Deployment(Box::new(deployment("web", 10, "nginx:1")))).unwrap();
    w.add(Box::new(FakeKubelet::new(2000, 1000)));
    w.run_for(30_000);
    let old_hash = rss(&w)[0].metadata.labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL].clone();
    // Stop readiness for the new template's pods: swap in a kubelet that never readies them.
    update_image(&mut w, "web", "nginx:2");
    let new_hash = compute_hash(&get_deployment(&w, "web").spec.unwrap().template, None);
    w.component_mut::<FakeKubelet>("kubelet/node-1").never_ready_prefix = Some(format!("web-{new_hash}"));
    w.run_for(30_000);
    // 25%/25% of 10: surge 3, unavailable 2 → new 5 (unready), old 8.
    let sizes = |w: &TestWorld| -> (i32, i32) {
        let rss = rss(w);
        let size = |h: &str| rss.iter().find(|r| r.metadata.name.as_deref() == Some(&format!("web-{h}"))).unwrap().spec.as_ref().unwrap().replicas.unwrap();
        (size(&old_hash), size(&new_hash))
    };
    assert_eq!(sizes(&w), (8, 5));
    let mut d = get_deployment(&w, "web");
    d.spec.as_mut().unwrap().replicas = Some(20);
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
    w.run_for(5_000);
    // allowed 20 + 5 = 25, 12 to add: old 8 → round(8×25/13)=15, new 5 → round(5×25/13)=10.
    assert_eq!(sizes(&w), (15, 10));
    let events = w.events();
    assert!(events.contains(&("ScalingReplicaSet".into(), format!("Scaled up replica set web-{old_hash} from 8 to 15"))), "{events:?}");
}

#[test]
fn replication_controller_manages_pods_and_orphans_them_on_default_delete() {
    use kubesim_api::k8s_openapi::api::core::v1::{ReplicationController, ReplicationControllerSpec};
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(ReplicaSetController::replication_manager())),
        Box::new(crate::framework::Controller(crate::gc::GarbageCollector::new())),
        Box::new(FakeKubelet::new(2000, 1000)),
    ]);
    let rc = ReplicationController {
        metadata: ObjectMeta { name: Some("legacy".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(ReplicationControllerSpec { replicas: Some(2), selector: None, template: Some(template("nginx")), ..Default::default() }),
        status: None,
    };
    w.create(crate::common::encode(&rc, "v1", "ReplicationController")).unwrap();
    w.run_for(10_000);
    let pods = w.list(("", "pods"), "default");
    assert_eq!(pods.len(), 2);
    let owner = &pods[0].metadata().owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.api_version.as_str(), owner.kind.as_str()), ("v1", "ReplicationController"));
    assert!(pods[0].name().starts_with("legacy-"));
    let rc: ReplicationController = crate::common::decode(&w.get(("", "replicationcontrollers"), "default", "legacy").unwrap()).unwrap();
    let status = rc.status.unwrap();
    assert_eq!((status.replicas, status.ready_replicas, status.available_replicas), (2, Some(2), Some(2)));
    assert!(w.events().iter().any(|(r, m)| r == "SuccessfulCreate" && m.starts_with("Created pod: legacy-")));
    // DELETE without a policy orphans an RC's pods.
    let info = kubesim_api::object::kind_info("v1", "ReplicationController").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "legacy", Default::default())).unwrap();
    w.run_for(10_000);
    assert!(w.get(("", "replicationcontrollers"), "default", "legacy").is_none());
    let pods = w.list(("", "pods"), "default");
    assert_eq!(pods.len(), 2);
    assert!(pods.iter().all(|p| p.metadata().owner_references.as_ref().is_none_or(|r| r.is_empty())));
}

#[test]
fn pdb_status_counts_healthy_pods_against_the_budget() {
    use kubesim_api::k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
    use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let mut w = world();
    w.add(Box::new(crate::framework::Controller(crate::disruption::DisruptionController::new())));
    w.create(Object::Deployment(Box::new(deployment("web", 3, "nginx")))).unwrap();
    let selector = LabelSelector { match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])), ..Default::default() };
    let pdb = |name: &str, min: Option<IntOrString>, max: Option<IntOrString>| PodDisruptionBudget {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(PodDisruptionBudgetSpec { min_available: min, max_unavailable: max, selector: Some(selector.clone()), ..Default::default() }),
        status: None,
    };
    w.create(crate::common::encode(&pdb("min2", Some(IntOrString::Int(2)), None), "policy/v1", "PodDisruptionBudget")).unwrap();
    w.create(crate::common::encode(&pdb("max50", None, Some(IntOrString::String("50%".into()))), "policy/v1", "PodDisruptionBudget")).unwrap();
    w.run_for(30_000);
    let status = |w: &TestWorld, name: &str| {
        crate::common::decode::<PodDisruptionBudget>(&w.get(("policy", "poddisruptionbudgets"), "default", name).unwrap()).unwrap().status.unwrap()
    };
    let s = status(&w, "min2");
    assert_eq!((s.expected_pods, s.current_healthy, s.desired_healthy, s.disruptions_allowed), (3, 3, 2, 1));
    let c = &s.conditions.unwrap()[0];
    assert_eq!((c.type_.as_str(), c.status.as_str(), c.reason.as_str()), ("DisruptionAllowed", "True", "SufficientPods"));
    let s = status(&w, "max50");
    assert_eq!((s.expected_pods, s.desired_healthy, s.disruptions_allowed), (3, 1, 2), "maxUnavailable 50% of 3 rounds up to 2");
    // Scale to 1: the min2 budget allows nothing.
    let mut d = get_deployment(&w, "web");
    d.spec.as_mut().unwrap().replicas = Some(1);
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
    w.run_for(30_000);
    let s = status(&w, "min2");
    assert_eq!((s.current_healthy, s.disruptions_allowed), (1, 0));
    assert_eq!(s.conditions.unwrap()[0].reason, "InsufficientPods");
}

#[test]
fn quota_failures_surface_as_replica_failure_conditions() {
    use kubesim_api::k8s_openapi::api::core::v1::ResourceRequirements;
    use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    let mut w = world();
    w.add(Box::new(crate::framework::Controller(crate::resourcequota::ResourceQuotaController::new())));
    let info = kubesim_api::object::kind_info("v1", "ResourceQuota").unwrap();
    let quota = Object::from_json(
        info,
        serde_json::json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"}, "spec": {"hard": {"pods": "2"}}}),
    )
    .unwrap();
    w.create(quota).unwrap();
    let mut d = deployment("web", 3, "nginx");
    d.spec.as_mut().unwrap().template.spec.as_mut().unwrap().containers[0].resources =
        Some(ResourceRequirements { requests: Some(BTreeMap::from([("cpu".to_string(), Quantity("100m".into()))])), ..Default::default() });
    w.create(Object::Deployment(Box::new(d))).unwrap();
    w.run_for(30_000);
    assert_eq!(live_pods(&w), 2);
    let events = w.events();
    assert!(events.iter().any(|(r, m)| r == "FailedCreate" && m.starts_with("Error creating: pods \"web-") && m.contains("exceeded quota")), "{events:?}");
    let rs = &rss(&w)[0];
    let cond = rs.status.as_ref().unwrap().conditions.as_ref().unwrap().iter().find(|c| c.type_ == "ReplicaFailure").unwrap().clone();
    assert_eq!((cond.status.as_str(), cond.reason.as_deref()), ("True", Some("FailedCreate")));
    let d = get_deployment(&w, "web");
    let dc = crate::deployment::get_condition(d.status.as_ref().unwrap(), "ReplicaFailure").unwrap();
    assert_eq!(dc.reason.as_deref(), Some("FailedCreate"));
    // Raise the quota: the third pod is created and the failure condition clears.
    let mut q = w.get(("", "resourcequotas"), "default", "q").unwrap().to_json();
    q["spec"]["hard"]["pods"] = serde_json::json!("5");
    w.as_user(|ctx| ctx.update(Object::from_json(info, q).unwrap())).unwrap();
    w.run_for(120_000);
    assert_eq!(live_pods(&w), 3);
    let rs = &rss(&w)[0];
    assert!(rs.status.as_ref().unwrap().conditions.is_none(), "{:?}", rs.status);
    assert!(crate::deployment::get_condition(get_deployment(&w, "web").status.as_ref().unwrap(), "ReplicaFailure").is_none());
}

// Mirrors pkg/controller/replicaset/replica_set_test.go (TestPodControllerLookup / adoption and
// TestUpdateLabelsRemoveControllerRef / release)
#[test]
fn replica_sets_adopt_matching_orphans_and_release_relabelled_pods() {
    use kubesim_api::k8s_openapi::api::apps::v1::ReplicaSetSpec;
    use kubesim_api::k8s_openapi::api::core::v1::Pod;
    let mut w = TestWorld::new(vec![Box::new(crate::framework::Controller(ReplicaSetController::new())), Box::new(FakeKubelet::new(2000, 1000))]);
    let t = template("nginx");
    let orphan = Pod {
        metadata: ObjectMeta {
            name: Some("orphan".into()),
            namespace: Some("default".into()),
            labels: t.metadata.as_ref().unwrap().labels.clone(),
            ..Default::default()
        },
        spec: t.spec.clone(),
        status: None,
    };
    w.create(Object::Pod(Box::new(orphan))).unwrap();
    w.run_for(1_000);
    let rs = ReplicaSet {
        metadata: ObjectMeta { name: Some("frontend".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(ReplicaSetSpec {
            replicas: Some(2),
            selector: LabelSelector { match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])), ..Default::default() },
            template: Some(t.clone()),
            min_ready_seconds: None,
        }),
        status: None,
    };
    w.create(Object::ReplicaSet(Box::new(rs))).unwrap();
    w.run_for(10_000);
    assert_eq!(live_pods(&w), 2, "the orphan counts");
    let orphan = w.get(("", "pods"), "default", "orphan").unwrap();
    let owner = &orphan.metadata().owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.kind.as_str(), owner.name.as_str(), owner.controller), ("ReplicaSet", "frontend", Some(true)));
    assert_eq!(w.events().iter().filter(|(r, _)| r == "SuccessfulCreate").count(), 1);
    // Relabel the orphan: released, and replaced.
    let mut pod = orphan.as_pod().unwrap().clone();
    pod.metadata.labels = Some(BTreeMap::from([("app".to_string(), "debug".to_string())]));
    w.as_user(|ctx| ctx.update(Object::Pod(Box::new(pod)))).unwrap();
    w.run_for(10_000);
    let released = w.get(("", "pods"), "default", "orphan").unwrap();
    assert!(released.metadata().owner_references.as_ref().is_none_or(|r| r.is_empty()), "released");
    assert_eq!(live_pods(&w), 3, "two owned + the released one");
}

// Mirrors pkg/controller/deployment/util/deployment_util_test.go TestSetNewReplicaSetAnnotations /
// TestAnnotationUtils (copy skip list, revision only raised, replicas annotations on new RSs)
#[test]
fn new_replica_set_annotations() {
    use crate::deployment::set_new_rs_annotations;
    let mut d = deployment("web", 4, "nginx");
    d.metadata.annotations = Some(BTreeMap::from([
        ("team".to_string(), "blue".to_string()),
        (LAST_APPLIED_ANNOTATION.to_string(), "{}".to_string()),
        (REVISION_ANNOTATION.to_string(), "9".to_string()),
    ]));
    // API defaults: 25% surge of 4 → max-replicas 5.
    let mut object = Object::Deployment(Box::new(d));
    kubesim_api::defaults::apply_defaults(&mut object);
    let Object::Deployment(d) = object else { unreachable!() };
    let mut rs = ReplicaSet::default();
    assert!(set_new_rs_annotations(&d, &mut rs, "3", false));
    let a = rs.metadata.annotations.clone().unwrap();
    assert_eq!(a.get("team").map(String::as_str), Some("blue"));
    assert!(!a.contains_key(LAST_APPLIED_ANNOTATION), "last-applied is not copied");
    assert_eq!(a[REVISION_ANNOTATION], "3", "the deployment's revision is not copied");
    assert_eq!((a[DESIRED_REPLICAS_ANNOTATION].as_str(), a[MAX_REPLICAS_ANNOTATION].as_str()), ("4", "5"));
    assert!(!set_new_rs_annotations(&d, &mut rs, "2", true), "revisions are never lowered");
    assert_eq!(rs.metadata.annotations.as_ref().unwrap()[REVISION_ANNOTATION], "3");
    assert!(set_new_rs_annotations(&d, &mut rs, "5", true));
    let a = rs.metadata.annotations.unwrap();
    assert_eq!((a[REVISION_ANNOTATION].as_str(), a[REVISION_HISTORY_ANNOTATION].as_str()), ("5", "3"));
}
