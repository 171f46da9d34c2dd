//! StatefulSet tests.

use crate::common::{decode, encode};
use crate::statefulset::*;
use crate::testing::{FakeKubelet, TestWorld};
use kubesim_api::k8s_openapi::api::apps::v1::{RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetSpec, StatefulSetUpdateStrategy};
use kubesim_api::k8s_openapi::api::core::v1::{
    Container, PersistentVolumeClaim, PersistentVolumeClaimSpec, PodSpec, PodTemplateSpec, VolumeResourceRequirements,
};
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubesim_api::time::millis_of;
use std::collections::BTreeMap;

fn sts(replicas: i32, parallel: bool) -> StatefulSet {
    let labels = BTreeMap::from([("app".to_string(), "nginx".to_string())]);
    StatefulSet {
        metadata: ObjectMeta { name: Some("web".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(StatefulSetSpec {
            replicas: Some(replicas),
            service_name: Some("nginx".into()),
            pod_management_policy: parallel.then(|| "Parallel".into()),
            selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container { name: "nginx".into(), image: Some("nginx:1".into()), ..Default::default() }],
                    ..Default::default()
                }),
            },
            volume_claim_templates: Some(vec![PersistentVolumeClaim {
                metadata: ObjectMeta { name: Some("www".into()), ..Default::default() },
                spec: Some(PersistentVolumeClaimSpec {
                    access_modes: Some(vec!["ReadWriteOnce".into()]),
                    resources: Some(VolumeResourceRequirements {
                        requests: Some(BTreeMap::from([("storage".to_string(), Quantity("1Gi".into()))])),
                        limits: None,
                    }),
                    ..Default::default()
                }),
                status: None,
            }]),
            ..Default::default()
        }),
        status: None,
    }
}

fn world() -> TestWorld {
    TestWorld::new(vec![Box::new(crate::framework::Controller(StatefulSetController::new())), Box::new(FakeKubelet::new(2000, 1000))])
}

fn get_sts(w: &TestWorld) -> StatefulSet {
    decode(&w.get(("apps", "statefulsets"), "default", "web").unwrap()).unwrap()
}

fn update(w: &mut TestWorld, f: impl FnOnce(&mut StatefulSetSpec)) {
    let mut s = get_sts(w);
    f(s.spec.as_mut().unwrap());
    w.as_user(|ctx| ctx.update(encode(&s, "apps/v1", "StatefulSet"))).unwrap();
}

fn created(w: &TestWorld, name: &str) -> u64 {
    millis_of(w.get(("", "pods"), "default", name).unwrap().metadata().creation_timestamp.as_ref().unwrap())
}

#[test]
fn ordered_ready_creates_pods_and_claims_in_order() {
    let mut w = world();
    w.create(encode(&sts(3, false), "apps/v1", "StatefulSet")).unwrap();
    w.run_for(1_000);
    assert_eq!(w.list(("", "pods"), "default").len(), 1, "one at a time");
    w.run_for(30_000);
    let (t0, t1, t2) = (created(&w, "web-0"), created(&w, "web-1"), created(&w, "web-2"));
    assert!(t0 + 2000 <= t1 && t1 + 2000 <= t2, "each waits for the previous to be ready: {t0} {t1} {t2}");
    for i in 0..3 {
        let pvc = w.get(("", "persistentvolumeclaims"), "default", &format!("www-web-{i}")).expect("claim");
        assert_eq!(pvc.metadata().labels.as_ref().unwrap()["app"], "nginx");
        let pod = w.get(("", "pods"), "default", &format!("web-{i}")).unwrap();
        let pod = pod.as_pod().unwrap();
        let labels = pod.metadata.labels.as_ref().unwrap();
        assert_eq!(labels[POD_NAME_LABEL], format!("web-{i}"));
        assert_eq!(labels[POD_INDEX_LABEL], i.to_string());
        assert!(labels[REVISION_LABEL].starts_with("web-"));
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!((spec.hostname.as_deref(), spec.subdomain.as_deref()), (Some(format!("web-{i}").as_str()), Some("nginx")));
        let vol = spec.volumes.as_ref().unwrap().iter().find(|v| v.name == "www").unwrap();
        assert_eq!(vol.persistent_volume_claim.as_ref().unwrap().claim_name, format!("www-web-{i}"));
    }
    let status = get_sts(&w).status.unwrap();
    assert_eq!((status.replicas, status.ready_replicas, status.current_replicas, status.updated_replicas), (3, Some(3), Some(3), Some(3)));
    assert_eq!(status.current_revision, status.update_revision);
    let events = w.events();
    assert!(events.contains(&("SuccessfulCreate".into(), "create Claim www-web-0 Pod web-0 in StatefulSet web success".into())), "{events:?}");
    assert!(events.contains(&("SuccessfulCreate".into(), "create Pod web-0 in StatefulSet web successful".into())), "{events:?}");
    assert_eq!(w.list(("apps", "controllerrevisions"), "default").len(), 1);
}

#[test]
fn parallel_creates_all_pods_at_once() {
    let mut w = world();
    w.create(encode(&sts(3, true), "apps/v1", "StatefulSet")).unwrap();
    w.run_for(1_000);
    assert_eq!(w.list(("", "pods"), "default").len(), 3);
}

#[test]
fn rolling_update_goes_from_the_highest_ordinal_and_respects_the_partition() {
    let mut w = world();
    w.create(encode(&sts(3, false), "apps/v1", "StatefulSet")).unwrap();
    w.run_for(30_000);
    let old_revision = get_sts(&w).status.unwrap().current_revision.unwrap();
    update(&mut w, |s| {
        s.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateStatefulSetStrategy { partition: Some(2), max_unavailable: None }),
        });
        s.template.spec.as_mut().unwrap().containers[0].image = Some("nginx:2".into());
    });
    w.run_for(30_000);
    let status = get_sts(&w).status.unwrap();
    let new_revision = status.update_revision.clone().unwrap();
    assert_ne!(new_revision, old_revision);
    let rev = |w: &TestWorld, i: i32| w.get(("", "pods"), "default", &format!("web-{i}")).unwrap().metadata().labels.as_ref().unwrap()[REVISION_LABEL].clone();
    assert_eq!((rev(&w, 0), rev(&w, 1), rev(&w, 2)), (old_revision.clone(), old_revision.clone(), new_revision.clone()), "partition 2");
    assert_eq!(status.current_revision.as_deref(), Some(old_revision.as_str()));
    assert_eq!(status.updated_replicas, Some(1));
    // Lower the partition: the rest update, highest first.
    let before1 = created(&w, "web-1");
    update(&mut w, |s| s.update_strategy.as_mut().unwrap().rolling_update.as_mut().unwrap().partition = Some(0));
    w.run_for(60_000);
    assert_eq!((rev(&w, 0), rev(&w, 1)), (new_revision.clone(), new_revision.clone()));
    assert!(created(&w, "web-1") > before1);
    assert!(created(&w, "web-0") > created(&w, "web-1"), "web-1 before web-0");
    let status = get_sts(&w).status.unwrap();
    assert_eq!(status.current_revision.as_deref(), Some(new_revision.as_str()), "rollout complete");
    assert_eq!(status.current_replicas, Some(3));
}

#[test]
fn scale_down_removes_the_highest_ordinals_first_and_keeps_claims() {
    let mut w = world();
    w.create(encode(&sts(3, false), "apps/v1", "StatefulSet")).unwrap();
    w.run_for(30_000);
    update(&mut w, |s| s.replicas = Some(1));
    w.run_for(500);
    let web2 = w.get(("", "pods"), "default", "web-2");
    assert!(web2.is_none() || web2.unwrap().metadata().deletion_timestamp.is_some());
    assert!(w.get(("", "pods"), "default", "web-1").unwrap().metadata().deletion_timestamp.is_none(), "one at a time");
    w.run_for(30_000);
    let names: Vec<String> = w.list(("", "pods"), "default").iter().map(|p| p.name().to_string()).collect();
    assert_eq!(names, vec!["web-0".to_string()]);
    assert_eq!(w.list(("", "persistentvolumeclaims"), "default").len(), 3, "claims are retained");
    let events: Vec<String> = w.events().into_iter().filter(|(r, _)| r == "SuccessfulDelete").map(|(_, m)| m).collect();
    assert_eq!(events, vec!["delete Pod web-2 in StatefulSet web successful".to_string(), "delete Pod web-1 in StatefulSet web successful".to_string()]);
}

#[test]
fn ordinals_parse_strictly() {
    assert_eq!(ordinal_of("web", "web-0"), Some(0));
    assert_eq!(ordinal_of("web", "web-12"), Some(12));
    assert_eq!(ordinal_of("web", "web-01"), None);
    assert_eq!(ordinal_of("web", "web-x"), None);
    assert_eq!(ordinal_of("web", "webx-1"), None);
    assert_eq!(claim_name("www", "web", 2), "www-web-2");
}

#[test]
fn claim_retention_policy_delete_removes_claims_on_scale_down_and_deletion() {
    use kubesim_api::k8s_openapi::api::apps::v1::StatefulSetPersistentVolumeClaimRetentionPolicy;
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(StatefulSetController::new())),
        Box::new(crate::framework::Controller(crate::gc::GarbageCollector::new())),
        Box::new(crate::framework::Controller(crate::pvcprotection::PvcProtectionController::new())),
        Box::new(FakeKubelet::new(2000, 1000)),
    ]);
    let mut s = sts(3, false);
    s.spec.as_mut().unwrap().persistent_volume_claim_retention_policy =
        Some(StatefulSetPersistentVolumeClaimRetentionPolicy { when_deleted: Some("Delete".into()), when_scaled: Some("Delete".into()) });
    w.create(encode(&s, "apps/v1", "StatefulSet")).unwrap();
    w.run_for(30_000);
    let claim = w.get(("", "persistentvolumeclaims"), "default", "www-web-0").unwrap();
    assert_eq!(claim.metadata().owner_references.as_ref().unwrap()[0].kind, "StatefulSet");
    update(&mut w, |s| s.replicas = Some(1));
    w.run_for(30_000);
    let claims: Vec<String> = w.list(("", "persistentvolumeclaims"), "default").iter().map(|c| c.name().to_string()).collect();
    assert_eq!(claims, vec!["www-web-0".to_string()], "whenScaled=Delete");
    let info = kubesim_api::object::kind_info("apps/v1", "StatefulSet").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "web", Default::default())).unwrap();
    w.run_for(30_000);
    assert!(w.list(("", "persistentvolumeclaims"), "default").is_empty(), "whenDeleted=Delete");
    assert!(w.list(("", "pods"), "default").is_empty());
}
