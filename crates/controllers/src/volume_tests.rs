//! PersistentVolume binder tests.

use crate::common::{decode, encode};
use crate::testing::TestWorld;
use crate::volume::*;
use kubesim_api::k8s_openapi::api::core::v1::{
    HostPathVolumeSource, PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec, PersistentVolumeSpec, VolumeResourceRequirements,
};
use kubesim_api::k8s_openapi::api::storage::v1::StorageClass;
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

fn pv(name: &str, size: &str, class: &str) -> PersistentVolume {
    PersistentVolume {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: Some(PersistentVolumeSpec {
            capacity: Some(BTreeMap::from([("storage".to_string(), Quantity(size.into()))])),
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            storage_class_name: Some(class.into()).filter(|c: &String| !c.is_empty()),
            persistent_volume_reclaim_policy: Some("Retain".into()),
            host_path: Some(HostPathVolumeSource { path: format!("/data/{name}"), type_: None }),
            ..Default::default()
        }),
        status: None,
    }
}

fn pvc(name: &str, size: &str, class: Option<&str>) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            resources: Some(VolumeResourceRequirements { requests: Some(BTreeMap::from([("storage".to_string(), Quantity(size.into()))])), limits: None }),
            storage_class_name: class.map(String::from),
            ..Default::default()
        }),
        status: None,
    }
}

fn class(name: &str, mode: &str, default: bool) -> StorageClass {
    StorageClass {
        metadata: ObjectMeta {
            name: Some(name.into()),
            annotations: default.then(|| BTreeMap::from([(DEFAULT_CLASS_ANNOTATION.to_string(), "true".to_string())])),
            ..Default::default()
        },
        provisioner: "rancher.io/local-path".into(),
        reclaim_policy: Some("Delete".into()),
        volume_binding_mode: Some(mode.into()),
        ..Default::default()
    }
}

fn get_pvc(w: &TestWorld, name: &str) -> PersistentVolumeClaim {
    decode(&w.get(("", "persistentvolumeclaims"), "default", name).unwrap()).unwrap()
}

fn get_pv(w: &TestWorld, name: &str) -> PersistentVolume {
    decode(&w.get(("", "persistentvolumes"), "", name).unwrap()).unwrap()
}

// Mirrors pkg/controller/volume/persistentvolume/index_test.go (TestMatchVolume: smallest fit)
#[test]
fn static_volumes_bind_to_the_smallest_fit() {
    let mut w = TestWorld::new(vec![Box::new(crate::framework::Controller(PersistentVolumeController::new()))]);
    for (n, s) in [("pv-1g", "1Gi"), ("pv-10g", "10Gi"), ("pv-5g", "5Gi")] {
        w.create(encode(&pv(n, s, ""), "v1", "PersistentVolume")).unwrap();
    }
    w.create(encode(&pvc("data", "3Gi", Some("")), "v1", "PersistentVolumeClaim")).unwrap();
    w.run_for(1_000);
    let claim = get_pvc(&w, "data");
    assert_eq!(claim.spec.as_ref().unwrap().volume_name.as_deref(), Some("pv-5g"));
    let status = claim.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Bound"));
    assert_eq!(status.capacity.unwrap()["storage"].0, "5Gi");
    assert_eq!(claim.metadata.annotations.unwrap()["pv.kubernetes.io/bind-completed"], "yes");
    let volume = get_pv(&w, "pv-5g");
    assert_eq!(volume.status.unwrap().phase.as_deref(), Some("Bound"));
    assert_eq!(volume.spec.unwrap().claim_ref.unwrap().name.as_deref(), Some("data"));
    assert_eq!(get_pv(&w, "pv-1g").status.unwrap().phase.as_deref(), Some("Available"));
    // Deleting the claim releases the (Retain) volume.
    let info = kubesim_api::object::kind_info("v1", "PersistentVolumeClaim").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "data", Default::default())).unwrap();
    w.run_for(1_000);
    assert_eq!(get_pv(&w, "pv-5g").status.unwrap().phase.as_deref(), Some("Released"));
}

#[test]
fn no_volume_and_no_class_reports_failed_binding() {
    let mut w = TestWorld::new(vec![Box::new(crate::framework::Controller(PersistentVolumeController::new()))]);
    w.create(encode(&pvc("data", "1Gi", None), "v1", "PersistentVolumeClaim")).unwrap();
    w.run_for(1_000);
    assert!(get_pvc(&w, "data").status.and_then(|s| s.phase).is_none_or(|p| p == "Pending"));
    assert!(w.events().contains(&("FailedBinding".into(), "no persistent volumes available for this claim and no storage class is set".into())));
}

#[test]
fn default_class_provisions_and_deletes_volumes() {
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(PersistentVolumeController::new())),
        Box::new(crate::framework::Controller(crate::gc::GarbageCollector::new())),
    ]);
    w.create(encode(&class("standard", "Immediate", true), "storage.k8s.io/v1", "StorageClass")).unwrap();
    w.create(encode(&pvc("data", "2Gi", None), "v1", "PersistentVolumeClaim")).unwrap();
    w.run_for(5_000);
    let claim = get_pvc(&w, "data");
    let uid = claim.metadata.uid.clone().unwrap();
    assert_eq!(claim.spec.as_ref().unwrap().volume_name, Some(format!("pvc-{uid}")));
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));
    let volume = get_pv(&w, &format!("pvc-{uid}"));
    let spec = volume.spec.unwrap();
    assert_eq!((spec.storage_class_name.as_deref(), spec.persistent_volume_reclaim_policy.as_deref()), (Some("standard"), Some("Delete")));
    let events: Vec<String> = w.events().into_iter().map(|(r, _)| r).collect();
    for r in ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"] {
        assert!(events.contains(&r.to_string()), "{events:?}");
    }
    let info = kubesim_api::object::kind_info("v1", "PersistentVolumeClaim").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "data", Default::default())).unwrap();
    w.run_for(5_000);
    assert!(w.get(("", "persistentvolumes"), "", &format!("pvc-{uid}")).is_none(), "reclaim Delete");
}

#[test]
fn wait_for_first_consumer_binds_after_the_pod_is_scheduled() {
    use kubesim_api::k8s_openapi::api::core::v1::{Container, PersistentVolumeClaimVolumeSource, Pod, PodSpec, Volume};
    use kubesim_api::object::Object;
    let mut w =
        TestWorld::new(vec![Box::new(crate::framework::Controller(PersistentVolumeController::new())), Box::new(crate::testing::FakeKubelet::new(2000, 1000))]);
    w.create(encode(&class("local", "WaitForFirstConsumer", true), "storage.k8s.io/v1", "StorageClass")).unwrap();
    w.create(encode(&pvc("data", "1Gi", None), "v1", "PersistentVolumeClaim")).unwrap();
    w.run_for(1_000);
    assert!(get_pvc(&w, "data").spec.unwrap().volume_name.is_none());
    assert!(w.events().iter().any(|(r, _)| r == "WaitForFirstConsumer"));
    let pod = Pod {
        metadata: ObjectMeta { name: Some("user".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(PodSpec {
            containers: vec![Container { name: "c".into(), image: Some("busybox".into()), ..Default::default() }],
            volumes: Some(vec![Volume {
                name: "d".into(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource { claim_name: "data".into(), read_only: None }),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    };
    w.create(Object::Pod(Box::new(pod))).unwrap();
    w.run_for(10_000);
    let claim = get_pvc(&w, "data");
    assert_eq!(claim.metadata.annotations.as_ref().unwrap()[SELECTED_NODE_ANNOTATION], "node-1");
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));
    let volume = get_pv(&w, claim.spec.unwrap().volume_name.as_deref().unwrap());
    let term = &volume.spec.unwrap().node_affinity.unwrap().required.unwrap().node_selector_terms[0];
    assert_eq!(term.match_expressions.as_ref().unwrap()[0].values.as_ref().unwrap()[0], "node-1");
}

#[test]
fn ephemeral_volumes_get_pod_owned_claims_that_are_bound_and_collected() {
    use kubesim_api::k8s_openapi::api::core::v1::{Container, EphemeralVolumeSource, PersistentVolumeClaimTemplate, Pod, PodSpec, Volume};
    use kubesim_api::object::Object;
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(crate::ephemeral::EphemeralVolumeController::new())),
        Box::new(crate::framework::Controller(PersistentVolumeController::new())),
        Box::new(crate::framework::Controller(crate::gc::GarbageCollector::new())),
    ]);
    w.create(encode(&class("standard", "Immediate", true), "storage.k8s.io/v1", "StorageClass")).unwrap();
    let pod = Pod {
        metadata: ObjectMeta { name: Some("scratch".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(PodSpec {
            containers: vec![Container { name: "c".into(), image: Some("busybox".into()), ..Default::default() }],
            volumes: Some(vec![Volume {
                name: "data".into(),
                ephemeral: Some(EphemeralVolumeSource {
                    volume_claim_template: Some(PersistentVolumeClaimTemplate { metadata: None, spec: pvc("x", "1Gi", None).spec.unwrap() }),
                }),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    };
    w.create(Object::Pod(Box::new(pod))).unwrap();
    w.run_for(5_000);
    let claim = get_pvc(&w, "scratch-data");
    assert_eq!(claim.metadata.owner_references.as_ref().unwrap()[0].kind, "Pod");
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));
    let info = kubesim_api::object::kind_info("v1", "Pod").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "scratch", Default::default())).unwrap();
    w.run_for(5_000);
    assert!(w.get(("", "persistentvolumeclaims"), "default", "scratch-data").is_none());
}
