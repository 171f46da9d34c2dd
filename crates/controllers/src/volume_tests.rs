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
    let mut w = TestWorld::new(storage_controllers());
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

fn storage_controllers() -> Vec<Box<dyn kubesim_runtime::Component>> {
    vec![
        Box::new(crate::framework::Controller(PersistentVolumeController::new())),
        Box::new(crate::framework::Controller(crate::localpath::LocalPathProvisioner::new())),
        Box::new(crate::framework::Controller(crate::pvcprotection::PvcProtectionController::new())),
        Box::new(crate::framework::Controller(crate::pvprotection::PvProtectionController::new())),
    ]
}

fn select_node(w: &mut TestWorld, claim: &str, node: &str) {
    let mut c = get_pvc(w, claim);
    c.metadata.annotations.get_or_insert_with(BTreeMap::new).insert(SELECTED_NODE_ANNOTATION.into(), node.into());
    w.as_user(|ctx| ctx.update(encode(&c, "v1", "PersistentVolumeClaim"))).unwrap();
}

// The kind flow (networking-storage reference §8.4): WaitForFirstConsumer until the scheduler
// selects a node, then ExternalProvisioning, Provisioning, ProvisioningSucceeded; the PV
// `pvc-<uid>` is pinned to the node; Delete reclaims it once the claim is gone.
#[test]
fn wait_for_first_consumer_claims_are_provisioned_on_the_selected_node() {
    let mut w = TestWorld::new(storage_controllers());
    w.create(encode(&class("standard", "WaitForFirstConsumer", true), "storage.k8s.io/v1", "StorageClass")).unwrap();
    w.create(encode(&pvc("data", "2Gi", None), "v1", "PersistentVolumeClaim")).unwrap();
    w.run_for(1_000);
    let claim = get_pvc(&w, "data");
    assert_eq!(claim.spec.as_ref().unwrap().storage_class_name.as_deref(), Some("standard"), "DefaultStorageClass admission");
    assert_eq!(claim.metadata.finalizers.as_deref(), Some(&["kubernetes.io/pvc-protection".to_string()][..]));
    assert!(claim.spec.as_ref().unwrap().volume_name.is_none());
    assert_eq!(w.events(), vec![("WaitForFirstConsumer".to_string(), "waiting for first consumer to be created before binding".to_string())]);
    assert!(w.list(("", "persistentvolumes"), "").is_empty());
    // The resync repeats the event every 15 s.
    w.run_for(15_000);
    assert!(w.list(("", "persistentvolumes"), "").is_empty());
    select_node(&mut w, "data", "node-1");
    w.run_for(5_000);
    let claim = get_pvc(&w, "data");
    let uid = claim.metadata.uid.clone().unwrap();
    let annotations = claim.metadata.annotations.clone().unwrap();
    for (k, v) in [
        ("pv.kubernetes.io/bind-completed", "yes"),
        ("pv.kubernetes.io/bound-by-controller", "yes"),
        ("volume.kubernetes.io/storage-provisioner", "rancher.io/local-path"),
        ("volume.beta.kubernetes.io/storage-provisioner", "rancher.io/local-path"),
        ("volume.kubernetes.io/selected-node", "node-1"),
    ] {
        assert_eq!(annotations.get(k).map(String::as_str), Some(v), "{k}");
    }
    assert_eq!(claim.spec.as_ref().unwrap().volume_name, Some(format!("pvc-{uid}")));
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));
    let volume = get_pv(&w, &format!("pvc-{uid}"));
    assert_eq!(volume.metadata.annotations.as_ref().unwrap()["pv.kubernetes.io/provisioned-by"], "rancher.io/local-path");
    assert!(!volume.metadata.annotations.as_ref().unwrap().contains_key("pv.kubernetes.io/bound-by-controller"), "pre-bound by the provisioner");
    assert_eq!(volume.metadata.finalizers.as_deref(), Some(&["kubernetes.io/pv-protection".to_string()][..]));
    assert_eq!(volume.status.as_ref().unwrap().phase.as_deref(), Some("Bound"));
    let spec = volume.spec.unwrap();
    assert_eq!((spec.storage_class_name.as_deref(), spec.persistent_volume_reclaim_policy.as_deref()), (Some("standard"), Some("Delete")));
    assert_eq!(spec.host_path.unwrap().path, format!("/var/local-path-provisioner/pvc-{uid}_default_data"));
    let term = &spec.node_affinity.unwrap().required.unwrap().node_selector_terms[0];
    assert_eq!(term.match_expressions.as_ref().unwrap()[0].values.as_ref().unwrap()[0], "node-1");
    let reasons: Vec<String> = w.events().into_iter().map(|(r, _)| r).collect();
    let interesting: Vec<&str> = reasons.iter().map(String::as_str).filter(|r| *r != "WaitForFirstConsumer").collect();
    assert_eq!(interesting, ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"]);
    assert!(w.events().contains(&(
        "ExternalProvisioning".into(),
        "Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.".into()
    )));
    assert!(w.events().contains(&("Provisioning".into(), "External provisioner is provisioning volume for claim \"default/data\"".into())));
    assert!(w.events().contains(&("ProvisioningSucceeded".into(), format!("Successfully provisioned volume pvc-{uid}"))));
    // Deleting the claim: pvc-protection lets it go (no pod uses it), the volume is Released
    // and the provisioner deletes it (pv-protection lets it go: not Bound) once its teardown
    // has run on the node's machine.
    w.add_host("node-1");
    let info = kubesim_api::object::kind_info("v1", "PersistentVolumeClaim").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "data", Default::default())).unwrap();
    w.run_for(5_000);
    assert!(w.get(("", "persistentvolumeclaims"), "default", "data").is_none());
    assert!(w.get(("", "persistentvolumes"), "", &format!("pvc-{uid}")).is_none(), "reclaim Delete");
}

#[test]
fn immediate_local_path_claims_fail_without_a_node() {
    let mut w = TestWorld::new(storage_controllers());
    w.create(encode(&class("fast", "Immediate", false), "storage.k8s.io/v1", "StorageClass")).unwrap();
    w.create(encode(&pvc("data", "1Gi", Some("fast")), "v1", "PersistentVolumeClaim")).unwrap();
    w.run_for(3_000);
    assert!(w
        .events()
        .contains(&("ProvisioningFailed".into(), "failed to provision volume with StorageClass \"fast\": configuration error, no node was specified".into())));
    assert!(w.list(("", "persistentvolumes"), "").is_empty());
}

#[test]
fn an_in_use_claim_stays_terminating_until_its_pod_is_gone() {
    use kubesim_api::k8s_openapi::api::core::v1::{Container, PersistentVolumeClaimVolumeSource, Pod, PodSpec, Volume};
    use kubesim_api::object::Object;
    let mut components = storage_controllers();
    components.push(Box::new(crate::testing::FakeKubelet::new(1000, 1000)));
    let mut w = TestWorld::new(components);
    w.create(encode(&pv("pv-1", "1Gi", ""), "v1", "PersistentVolume")).unwrap();
    w.create(encode(&pvc("data", "1Gi", Some("")), "v1", "PersistentVolumeClaim")).unwrap();
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
    w.run_for(3_000);
    let info = kubesim_api::object::kind_info("v1", "PersistentVolumeClaim").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "data", Default::default())).unwrap();
    w.run_for(3_000);
    let claim = get_pvc(&w, "data");
    assert!(claim.metadata.deletion_timestamp.is_some(), "Terminating");
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"), "still usable");
    let info = kubesim_api::object::kind_info("v1", "Pod").unwrap();
    w.as_user(|ctx| ctx.delete(info, "default", "user", Default::default())).unwrap();
    w.run_for(5_000);
    assert!(w.get(("", "persistentvolumeclaims"), "default", "data").is_none());
    // The Retain volume is Released and keeps its claimRef; pv-protection no longer blocks
    // its deletion.
    let volume = get_pv(&w, "pv-1");
    assert_eq!(volume.status.unwrap().phase.as_deref(), Some("Released"));
    assert!(volume.spec.unwrap().claim_ref.is_some());
    let info = kubesim_api::object::kind_info("v1", "PersistentVolume").unwrap();
    w.as_user(|ctx| ctx.delete(info, "", "pv-1", Default::default())).unwrap();
    w.run_for(1_000);
    assert!(w.get(("", "persistentvolumes"), "", "pv-1").is_none());
}

#[test]
fn ephemeral_volumes_get_pod_owned_claims_that_are_bound_and_collected() {
    use kubesim_api::k8s_openapi::api::core::v1::{Container, EphemeralVolumeSource, PersistentVolumeClaimTemplate, Pod, PodSpec, Volume};
    use kubesim_api::object::Object;
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(crate::ephemeral::EphemeralVolumeController::new())),
        Box::new(crate::framework::Controller(PersistentVolumeController::new())),
        Box::new(crate::framework::Controller(crate::gc::GarbageCollector::new())),
        Box::new(crate::framework::Controller(crate::pvcprotection::PvcProtectionController::new())),
    ]);
    w.create(encode(&class("standard", "Immediate", true), "storage.k8s.io/v1", "StorageClass")).unwrap();
    w.create(encode(&pv("pv-1", "1Gi", "standard"), "v1", "PersistentVolume")).unwrap();
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
