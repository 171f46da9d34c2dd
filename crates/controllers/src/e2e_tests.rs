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
        Box::new(DeploymentController::new()),
        Box::new(ReplicaSetController::new()),
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
