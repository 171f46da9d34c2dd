//! Upstream's PV controller sync tables, ported: pkg/controller/volume/persistentvolume
//! binder_test.go `TestSync`, `TestSyncBlockVolume` and `TestMultiSync`, provision_test.go
//! `TestProvisionSync` and delete_test.go `TestDeleteSync` (the v1.34-era tables; rows keep
//! upstream's names). The harness follows framework_test.go: starting volumes and claims are
//! written through the API server (and loaded into a fresh controller's caches, except claims
//! marked `pv-testing-skip-local-store`), the controller's `syncClaim` (of the first claim) or
//! `syncVolume` (of the first volume) runs once — or, for the multi-sync tables, every claim
//! and volume is synced until nothing changes — and the resulting volumes, claims and events
//! are compared with the row's.
//!
//! How the harness differs from upstream's fake client, and why:
//! - The API server gives objects their own uids: the rows' uids (`uid1-1`) name the claims they
//!   are given to, and expected claimRefs are translated the same way; a uid no claim has
//!   (`uid1-777`) stays as written, so it still matches nothing.
//! - Admission adds the protection finalizers (StorageObjectInUseProtection); the harness removes
//!   them before the sync, as upstream's fake client never adds them, so a deleted volume goes.
//! - Events are compared as upstream's `checkEvents` does: the first N events must start with
//!   the N expected prefixes (`"Warning VolumeMismatch"`); later ones are not read.
//! - kubesim has no in-tree volume plugins besides hostPath's deleter (v1.34's kcm has no
//!   in-tree provisioner either), so rows built on upstream's mock plugin (`kubernetes.io/
//!   mock-volume` provisioning or deleting with injected results) are either expressed with the
//!   hostPath deleter where that is the same code path (8-1, 8-2, 8-5, 8-9, 8-11: noted per row)
//!   or left out (11-1, 11-3, 11-4, 11-7 to 11-13, 11-19 to 11-21, 11-23, 11-25, 8-4, 8-6,
//!   8-7: mock provisioner results, injected API errors and operations racing the sync).

use crate::common::{decode, encode};
use crate::testing::TestWorld;
use crate::volume::PersistentVolumeController;
use kubesim_api::k8s_openapi::api::core::v1::{
    GCEPersistentDiskVolumeSource, HostPathVolumeSource, ObjectReference, PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec,
    PersistentVolumeClaimStatus, PersistentVolumeSpec, PersistentVolumeStatus, TypedLocalObjectReference, VolumeResourceRequirements,
};
use kubesim_api::k8s_openapi::api::storage::v1::StorageClass;
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubesim_api::object::Object;
use kubesim_api::storage::{
    ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER,
};
use std::collections::BTreeMap;
use std::sync::Arc;

const NS: &str = "default";
const MOCK_PLUGIN: &str = "kubernetes.io/mock-volume";
const SKIP_LOCAL_STORE: &str = "pv-testing-skip-local-store";
const CLASS_EMPTY: &str = "";
const CLASS_GOLD: &str = "gold";
const CLASS_SILVER: &str = "silver";
const CLASS_COPPER: &str = "copper";
const CLASS_WAIT: &str = "wait";
const CLASS_EXTERNAL: &str = "external";
const CLASS_EXTERNAL_WAIT: &str = "external-wait";
const CLASS_UNKNOWN_INTERNAL: &str = "unknown-internal";
const CLASS_NON_EXISTING: &str = "non-existing";
const CLASS_CSI: &str = "csi";
const BOUND_BY: &str = ANN_BOUND_BY_CONTROLLER;
const COMPLETED: &str = ANN_BIND_COMPLETED;
const PROVISIONED_BY: &str = ANN_DYNAMICALLY_PROVISIONED;
const RETAIN: &str = "Retain";
const DELETE: &str = "Delete";

// ---- framework_test.go's builders ----

/// `newVolume`: a GCE PD volume (RWO+ROX, Filesystem) optionally bound to a claim in
/// `default`; `pv.kubernetes.io/provisioned-by` gets the mock plugin's name, other
/// annotations "yes". (Upstream's signature, argument for argument.)
#[allow(clippy::too_many_arguments)]
fn new_volume(name: &str, capacity: &str, uid: &str, claim: &str, phase: &str, policy: &str, class: &str, annotations: &[&str]) -> PersistentVolume {
    let (name, claim) = (&dns_name(name), &dns_name(claim));
    PersistentVolume {
        metadata: ObjectMeta {
            name: Some(name.into()),
            annotations: (!annotations.is_empty())
                .then(|| annotations.iter().map(|a| (a.to_string(), if *a == PROVISIONED_BY { MOCK_PLUGIN } else { "yes" }.to_string())).collect()),
            ..Default::default()
        },
        spec: Some(PersistentVolumeSpec {
            capacity: Some(BTreeMap::from([("storage".to_string(), Quantity(capacity.into()))])),
            gce_persistent_disk: Some(GCEPersistentDiskVolumeSource::default()),
            access_modes: Some(vec!["ReadWriteOnce".into(), "ReadOnlyMany".into()]),
            persistent_volume_reclaim_policy: Some(policy.into()),
            storage_class_name: Some(class.into()),
            volume_mode: Some("Filesystem".into()),
            claim_ref: (!claim.is_empty()).then(|| ObjectReference {
                kind: Some("PersistentVolumeClaim".into()),
                api_version: Some("v1".into()),
                uid: (!uid.is_empty()).then(|| uid.into()),
                namespace: Some(NS.into()),
                name: Some(claim.into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: Some(PersistentVolumeStatus { phase: (!phase.is_empty()).then(|| phase.into()), ..Default::default() }),
    }
}

/// `newClaim`: a claim in `default` (RWO+ROX, Filesystem); a Bound one has its status access
/// modes and capacity; `volume.kubernetes.io/storage-provisioner` gets the mock plugin's name.
fn new_claim(name: &str, uid: &str, capacity: &str, volume: &str, phase: &str, class: Option<&str>, annotations: &[&str]) -> PersistentVolumeClaim {
    let (name, volume) = (&dns_name(name), &dns_name(volume));
    let modes = vec!["ReadWriteOnce".to_string(), "ReadOnlyMany".to_string()];
    let requests = BTreeMap::from([("storage".to_string(), Quantity(capacity.into()))]);
    let bound = phase == "Bound";
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            uid: Some(uid.into()),
            annotations: (!annotations.is_empty())
                .then(|| annotations.iter().map(|a| (a.to_string(), if *a == ANN_STORAGE_PROVISIONER { MOCK_PLUGIN } else { "yes" }.to_string())).collect()),
            ..Default::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(modes.clone()),
            resources: Some(VolumeResourceRequirements { requests: Some(requests.clone()), limits: None }),
            volume_name: (!volume.is_empty()).then(|| volume.into()),
            storage_class_name: class.map(String::from),
            volume_mode: Some("Filesystem".into()),
            ..Default::default()
        }),
        status: Some(PersistentVolumeClaimStatus {
            phase: (!phase.is_empty()).then(|| phase.into()),
            access_modes: bound.then_some(modes),
            capacity: bound.then_some(requests),
            ..Default::default()
        }),
    }
}

/// The API server validates names (upstream's fake client does not): `volume1-4_1` is
/// written `volume1-4-1`.
fn dns_name(name: &str) -> String {
    name.replace('_', "-")
}

fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([("foo".to_string(), "true".to_string()), ("bar".to_string(), "false".to_string())])
}
fn with_labels(mut v: PersistentVolume) -> PersistentVolume {
    v.metadata.labels = Some(labels());
    v
}
fn with_label_selector(mut c: PersistentVolumeClaim) -> PersistentVolumeClaim {
    c.spec.as_mut().unwrap().selector = Some(LabelSelector { match_labels: Some(labels()), match_expressions: None });
    c
}
fn with_expected_capacity(capacity: &str, mut c: PersistentVolumeClaim) -> PersistentVolumeClaim {
    c.status.as_mut().unwrap().capacity = Some(BTreeMap::from([("storage".to_string(), Quantity(capacity.into()))]));
    c
}
fn with_volume_mode(mode: &str, mut v: PersistentVolume) -> PersistentVolume {
    v.spec.as_mut().unwrap().volume_mode = Some(mode.into());
    v
}
fn with_claim_mode(mode: &str, mut c: PersistentVolumeClaim) -> PersistentVolumeClaim {
    c.spec.as_mut().unwrap().volume_mode = Some(mode.into());
    c
}
fn with_message(message: &str, mut v: PersistentVolume) -> PersistentVolume {
    v.status.as_mut().unwrap().message = Some(message.into());
    v
}
fn claim_with_annotation(key: &str, value: &str, mut c: PersistentVolumeClaim) -> PersistentVolumeClaim {
    c.metadata.annotations.get_or_insert_with(BTreeMap::new).insert(key.into(), value.into());
    c
}
fn volume_with_annotation(key: &str, value: &str, mut v: PersistentVolume) -> PersistentVolume {
    v.metadata.annotations.get_or_insert_with(BTreeMap::new).insert(key.into(), value.into());
    v
}
fn claim_with_access_mode(modes: &[&str], mut c: PersistentVolumeClaim) -> PersistentVolumeClaim {
    c.spec.as_mut().unwrap().access_modes = Some(modes.iter().map(|m| m.to_string()).collect());
    c
}
fn volume_with_vac(vac: &str, mut v: PersistentVolume) -> PersistentVolume {
    v.spec.as_mut().unwrap().volume_attributes_class_name = Some(vac.into());
    v
}
fn claim_with_vac(vac: &str, mut c: PersistentVolumeClaim) -> PersistentVolumeClaim {
    c.spec.as_mut().unwrap().volume_attributes_class_name = Some(vac.into());
    c
}
fn with_expected_vac(vac: &str, mut c: PersistentVolumeClaim) -> PersistentVolumeClaim {
    c.status.as_mut().unwrap().current_volume_attributes_class_name = Some(vac.into());
    c
}
fn claim_with_data_source(name: &str, kind: &str, group: &str, mut c: PersistentVolumeClaim) -> PersistentVolumeClaim {
    c.spec.as_mut().unwrap().data_source = Some(TypedLocalObjectReference { api_group: Some(group.into()), kind: kind.into(), name: name.into() });
    c
}
/// kubesim's stand-in for upstream's injected mock deleter: the in-tree hostPath deleter
/// (volumes under /tmp), the one deleter kube-controller-manager has.
fn with_host_path(path: &str, mut v: PersistentVolume) -> PersistentVolume {
    let spec = v.spec.as_mut().unwrap();
    spec.gce_persistent_disk = None;
    spec.host_path = Some(HostPathVolumeSource { path: path.into(), type_: None });
    v
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Call {
    /// `testSyncClaim`: syncClaim of the first claim.
    SyncClaim,
    /// `testSyncClaimError`: the same, expecting an error.
    SyncClaimError,
    /// `testSyncVolume`: syncVolume of the first volume.
    SyncVolume,
    /// `runMultisyncTests`: the first claim, then every claim and volume until nothing changes.
    MultiSync,
}

struct Row {
    name: &'static str,
    initial_volumes: Vec<PersistentVolume>,
    expected_volumes: Vec<PersistentVolume>,
    initial_claims: Vec<PersistentVolumeClaim>,
    expected_claims: Vec<PersistentVolumeClaim>,
    events: &'static [&'static str],
    call: Call,
}

fn row(
    name: &'static str,
    initial_volumes: Vec<PersistentVolume>,
    expected_volumes: Vec<PersistentVolume>,
    initial_claims: Vec<PersistentVolumeClaim>,
    expected_claims: Vec<PersistentVolumeClaim>,
    events: &'static [&'static str],
    call: Call,
) -> Row {
    Row { name, initial_volumes, expected_volumes, initial_claims, expected_claims, events, call }
}

fn class(name: &str, provisioner: &str, mode: &str) -> StorageClass {
    StorageClass {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        provisioner: provisioner.into(),
        parameters: Some(BTreeMap::from([("param1".to_string(), "value1".to_string())])),
        reclaim_policy: Some(DELETE.into()),
        volume_binding_mode: Some(mode.into()),
        ..Default::default()
    }
}

/// binder_test.go's classes: only `wait` exists (gold and silver are names without objects).
fn binder_classes() -> Vec<StorageClass> {
    vec![StorageClass {
        metadata: ObjectMeta { name: Some(CLASS_WAIT.into()), ..Default::default() },
        provisioner: String::new(),
        volume_binding_mode: Some("WaitForFirstConsumer".into()),
        ..Default::default()
    }]
}

/// provision_test.go's `storageClasses` (without `unsupported-mountoptions`, whose row needs the
/// mock plugin).
fn provision_classes() -> Vec<StorageClass> {
    vec![
        class(CLASS_GOLD, MOCK_PLUGIN, "Immediate"),
        class(CLASS_SILVER, MOCK_PLUGIN, "Immediate"),
        class(CLASS_COPPER, MOCK_PLUGIN, "WaitForFirstConsumer"),
        class(CLASS_EXTERNAL, "vendor.com/my-volume", "Immediate"),
        class(CLASS_EXTERNAL_WAIT, "vendor.com/my-volume-wait", "WaitForFirstConsumer"),
        class(CLASS_UNKNOWN_INTERNAL, "kubernetes.io/unknown", "Immediate"),
        class(CLASS_CSI, "mydriver.csi.k8s.io", "Immediate"),
    ]
}

// ---- the harness ----

/// Writes an object's status and drops the finalizers admission added.
fn settle(w: &mut TestWorld, created: Arc<Object>, status: serde_json::Value) -> Arc<Object> {
    let info = kubesim_api::object::kind_info("v1", created.kind()).unwrap();
    let mut json = created.to_json();
    json["status"] = status;
    let object = Object::from_json(info, json).unwrap();
    let updated = w.as_user(|ctx| ctx.update_status(object)).unwrap();
    let mut json = updated.to_json();
    json["metadata"].as_object_mut().unwrap().remove("finalizers");
    w.as_user(|ctx| ctx.update(Object::from_json(info, json).unwrap())).unwrap()
}

struct Harness {
    world: TestWorld,
    /// The rows' uids → the API server's.
    uids: BTreeMap<String, String>,
    controller: PersistentVolumeController,
}

impl Harness {
    fn new(row: &Row, classes: &[StorageClass]) -> Harness {
        let mut world = TestWorld::new(Vec::new());
        for c in classes {
            world.create(encode(c, "storage.k8s.io/v1", "StorageClass")).unwrap();
        }
        let mut uids = BTreeMap::new();
        let mut cached_claims: Vec<Arc<Object>> = Vec::new();
        for (i, claim) in row.initial_claims.iter().enumerate() {
            let name = claim.metadata.name.clone().unwrap();
            let later = row.initial_claims[i + 1..].iter().any(|c| c.metadata.name.as_deref() == Some(name.as_str()));
            let skip = claim.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(SKIP_LOCAL_STORE));
            if later {
                // Superseded in the API server by a later claim of the same name: only the
                // controller's cache has this version (4-12).
                cached_claims.push(Arc::new(encode(claim, "v1", "PersistentVolumeClaim")));
                continue;
            }
            let mut c = claim.clone();
            c.metadata.uid = None;
            let status = serde_json::to_value(c.status.take().unwrap_or_default()).unwrap();
            let created = world.create(encode(&c, "v1", "PersistentVolumeClaim")).unwrap();
            uids.insert(claim.metadata.uid.clone().unwrap(), created.metadata().uid.clone().unwrap());
            let settled = settle(&mut world, created, status);
            if !skip {
                cached_claims.push(settled);
            }
        }
        for volume in &row.initial_volumes {
            let mut v = volume.clone();
            map_volume_uid(&mut v, &uids);
            let status = serde_json::to_value(v.status.take().unwrap_or_default()).unwrap();
            let created = world.create(encode(&v, "v1", "PersistentVolume")).unwrap();
            settle(&mut world, created, status);
        }
        let mut controller = PersistentVolumeController::new();
        controller.load_caches(world.api().store(), cached_claims);
        Harness { world, uids, controller }
    }

    fn run(&mut self, row: &Row) -> Result<(), kubesim_apiserver::ApiError> {
        let claim_key = row.initial_claims.first().map(|c| (NS.to_string(), c.metadata.name.clone().unwrap()));
        let volume_key = row.initial_volumes.first().map(|v| (String::new(), v.metadata.name.clone().unwrap()));
        let controller = &mut self.controller;
        match row.call {
            Call::SyncClaim | Call::SyncClaimError => {
                self.world.as_actor("persistentvolume-controller", |ctx| controller.sync_claim(&claim_key.clone().expect("a claim"), ctx))
            }
            Call::SyncVolume => self.world.as_actor("persistentvolume-controller", |ctx| controller.sync_volume(&volume_key.clone().expect("a volume").1, ctx)),
            Call::MultiSync => {
                let first = self.world.as_actor("persistentvolume-controller", |ctx| controller.sync_claim(&claim_key.clone().expect("a claim"), ctx));
                // Watch events and the periodic resync: every object again (the caches
                // refreshed from the API server) until a round changes nothing.
                for _ in 0..10 {
                    let before = self.world.api().store().revision();
                    let mut controller = PersistentVolumeController::new();
                    controller.load_caches(self.world.api().store(), self.world.list(("", "persistentvolumeclaims"), NS));
                    let claims: Vec<String> = self.world.list(("", "persistentvolumeclaims"), NS).iter().map(|o| o.name().to_string()).collect();
                    let volumes: Vec<String> = self.world.list(("", "persistentvolumes"), "").iter().map(|o| o.name().to_string()).collect();
                    self.world.as_actor("persistentvolume-controller", |ctx| {
                        for c in &claims {
                            let _ = controller.sync_claim(&(NS.to_string(), c.clone()), ctx);
                        }
                        for v in &volumes {
                            let _ = controller.sync_volume(v, ctx);
                        }
                    });
                    if self.world.api().store().revision() == before {
                        break;
                    }
                }
                first
            }
        }
    }

    /// Events, oldest first, as the FakeRecorder prints them: `<type> <reason> <message>`.
    fn events(&self) -> Vec<String> {
        let mut events: Vec<(u64, String)> = self
            .world
            .list(("", "events"), NS)
            .into_iter()
            .chain(self.world.list(("", "events"), ""))
            .filter_map(|o| match o.as_ref() {
                Object::Event(e) => Some((
                    o.resource_version().parse().unwrap_or(0),
                    format!("{} {} {}", e.type_.clone().unwrap_or_default(), e.reason.clone().unwrap_or_default(), e.message.clone().unwrap_or_default()),
                )),
                _ => None,
            })
            .collect();
        events.sort();
        events.dedup();
        events.into_iter().map(|(_, e)| e).collect()
    }
}

fn map_volume_uid(v: &mut PersistentVolume, uids: &BTreeMap<String, String>) {
    if let Some(r) = v.spec.as_mut().and_then(|s| s.claim_ref.as_mut()) {
        if let Some(uid) = r.uid.as_mut() {
            if let Some(real) = uids.get(uid.as_str()) {
                *uid = real.clone();
            }
        }
    }
}

fn non_empty(s: Option<&String>) -> Option<String> {
    s.filter(|s| !s.is_empty()).cloned()
}

fn storage(list: Option<&BTreeMap<String, Quantity>>) -> Option<i128> {
    list.and_then(|l| l.get("storage")).map(|q| kubesim_api::quantity::parse_value(&q.0).unwrap())
}

/// What framework_test.go's CheckVolumes compares (everything but resourceVersion, the
/// transition time and, here, the API server's own metadata).
fn volume_view(v: &PersistentVolume) -> String {
    let spec = v.spec.clone().unwrap_or_default();
    let status = v.status.clone().unwrap_or_default();
    format!(
        "{} capacity={:?} claimRef={:?} phase={:?} message={:?} annotations={:?} labels={:?} class={:?} policy={:?} mode={:?} vac={:?} deleting={}",
        v.metadata.name.as_deref().unwrap_or(""),
        storage(spec.capacity.as_ref()),
        spec.claim_ref.as_ref().map(|r| (r.namespace.clone(), r.name.clone(), non_empty(r.uid.as_ref()))),
        non_empty(status.phase.as_ref()),
        non_empty(status.message.as_ref()),
        v.metadata.annotations.clone().unwrap_or_default(),
        v.metadata.labels.clone().unwrap_or_default(),
        non_empty(spec.storage_class_name.as_ref()),
        spec.persistent_volume_reclaim_policy,
        spec.volume_mode,
        spec.volume_attributes_class_name,
        v.metadata.deletion_timestamp.is_some(),
    )
}

fn claim_view(c: &PersistentVolumeClaim) -> String {
    let spec = c.spec.clone().unwrap_or_default();
    let status = c.status.clone().unwrap_or_default();
    format!(
        "{} uid={:?} volume={:?} phase={:?} annotations={:?} class={:?} selector={:?} modes={:?} mode={:?} status.modes={:?} status.capacity={:?} request={:?} vac={:?} status.vac={:?} dataSource={:?}",
        c.metadata.name.as_deref().unwrap_or(""),
        c.metadata.uid,
        non_empty(spec.volume_name.as_ref()),
        non_empty(status.phase.as_ref()),
        c.metadata.annotations.clone().unwrap_or_default(),
        spec.storage_class_name,
        spec.selector,
        spec.access_modes,
        spec.volume_mode,
        status.access_modes,
        storage(status.capacity.as_ref()),
        storage(spec.resources.as_ref().and_then(|r| r.requests.as_ref())),
        spec.volume_attributes_class_name,
        status.current_volume_attributes_class_name,
        spec.data_source.map(|d| d.name),
    )
}

/// runSyncTests / runMultisyncTests for one table.
fn run_table(table: &str, rows: Vec<Row>, classes: &[StorageClass]) {
    let mut failures = Vec::new();
    for row in &rows {
        let mut h = Harness::new(row, classes);
        let events_before = h.events().len();
        let result = h.run(row);
        let mut problems = Vec::new();
        match (row.call, &result) {
            (Call::SyncClaimError, Ok(())) => problems.push("expected an error, got none".to_string()),
            (Call::SyncClaim | Call::SyncVolume | Call::MultiSync, Err(e)) => problems.push(format!("unexpected error: {}", e.message)),
            _ => {}
        }
        // Volumes.
        let mut expected: Vec<String> = row
            .expected_volumes
            .iter()
            .map(|v| {
                let mut v = v.clone();
                map_volume_uid(&mut v, &h.uids);
                volume_view(&v)
            })
            .collect();
        let mut got: Vec<String> = h.world.list(("", "persistentvolumes"), "").iter().map(|o| volume_view(&decode(o).unwrap())).collect();
        expected.sort();
        got.sort();
        if expected != got {
            problems.push(format!("volumes:\n    expected {expected:#?}\n    got      {got:#?}"));
        }
        // Claims.
        let mut expected: Vec<String> = row
            .expected_claims
            .iter()
            .map(|c| {
                let mut c = c.clone();
                let uid = c.metadata.uid.clone().unwrap();
                c.metadata.uid = Some(h.uids.get(&uid).cloned().unwrap_or(uid));
                claim_view(&c)
            })
            .collect();
        let mut got: Vec<String> = h.world.list(("", "persistentvolumeclaims"), NS).iter().map(|o| claim_view(&decode(o).unwrap())).collect();
        expected.sort();
        got.sort();
        if expected != got {
            problems.push(format!("claims:\n    expected {expected:#?}\n    got      {got:#?}"));
        }
        // Events (checkEvents: prefixes of the first N).
        let events: Vec<String> = h.events().into_iter().skip(events_before).collect();
        for (i, prefix) in row.events.iter().enumerate() {
            match events.get(i) {
                Some(e) if e.starts_with(prefix) => {}
                Some(e) => problems.push(format!("event {i}: expected {prefix:?}, got {e:?}")),
                None => problems.push(format!("event {prefix:?} not emitted")),
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{table} {:?}:\n  {}\n  (events: {events:?})", row.name, problems.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{} of {} rows failed:\n{}", failures.len(), rows.len(), failures.join("\n"));
}

use Call::*;

// ---- binder_test.go TestSync ----

#[test]
fn binder_test_test_sync() {
    let v = new_volume;
    let c = new_claim;
    let a = "Available";
    let b = "Bound";
    let p = "Pending";
    let gold = Some(CLASS_GOLD);
    let wait = Some(CLASS_WAIT);
    let empty = Some(CLASS_EMPTY);
    let rows = vec![
        // [Unit test set 1] User did not care which PV they get.
        row(
            "1-1 - successful bind",
            vec![v("volume1-1", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume1-1", "1Gi", "uid1-1", "claim1-1", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim1-1", "uid1-1", "1Gi", "", p, None, &[])],
            vec![c("claim1-1", "uid1-1", "1Gi", "volume1-1", b, None, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "1-2 - noop",
            vec![v("volume1-2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume1-2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim1-2", "uid1-2", "10Gi", "", p, None, &[])],
            vec![c("claim1-2", "uid1-2", "10Gi", "", p, None, &[])],
            &["Normal FailedBinding"],
            SyncClaim,
        ),
        row(
            "1-3 - reset to Pending",
            vec![v("volume1-3", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume1-3", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim1-3", "uid1-3", "10Gi", "", b, None, &[])],
            vec![c("claim1-3", "uid1-3", "10Gi", "", p, None, &[])],
            &["Normal FailedBinding"],
            SyncClaim,
        ),
        row(
            "1-4 - smallest volume",
            vec![v("volume1-4_1", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]), v("volume1-4_2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![
                v("volume1-4_1", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]),
                v("volume1-4_2", "1Gi", "uid1-4", "claim1-4", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]),
            ],
            vec![c("claim1-4", "uid1-4", "1Gi", "", p, None, &[])],
            vec![c("claim1-4", "uid1-4", "1Gi", "volume1-4_2", b, None, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "1-5 - prebound volume by name - success",
            vec![v("volume1-5_1", "10Gi", "", "claim1-5", a, RETAIN, CLASS_EMPTY, &[]), v("volume1-5_2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume1-5_1", "10Gi", "uid1-5", "claim1-5", b, RETAIN, CLASS_EMPTY, &[]), v("volume1-5_2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim1-5", "uid1-5", "1Gi", "", p, None, &[])],
            vec![with_expected_capacity("10Gi", c("claim1-5", "uid1-5", "1Gi", "volume1-5_1", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "1-6 - prebound volume by UID - success",
            vec![v("volume1-6_1", "10Gi", "uid1-6", "claim1-6", a, RETAIN, CLASS_EMPTY, &[]), v("volume1-6_2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume1-6_1", "10Gi", "uid1-6", "claim1-6", b, RETAIN, CLASS_EMPTY, &[]), v("volume1-6_2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim1-6", "uid1-6", "1Gi", "", p, None, &[])],
            vec![with_expected_capacity("10Gi", c("claim1-6", "uid1-6", "1Gi", "volume1-6_1", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "1-7 - prebound volume to different claim",
            vec![v("volume1-7", "10Gi", "uid1-777", "claim1-7", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume1-7", "10Gi", "uid1-777", "claim1-7", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim1-7", "uid1-7", "1Gi", "", p, None, &[])],
            vec![c("claim1-7", "uid1-7", "1Gi", "", p, None, &[])],
            &["Normal FailedBinding"],
            SyncClaim,
        ),
        row(
            "1-8 - complete bind after crash - PV bound",
            vec![v("volume1-8", "1Gi", "uid1-8", "claim1-8", a, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![v("volume1-8", "1Gi", "uid1-8", "claim1-8", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim1-8", "uid1-8", "1Gi", "", p, None, &[])],
            vec![c("claim1-8", "uid1-8", "1Gi", "volume1-8", b, None, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "1-9 - complete bind after crash - PV status saved",
            vec![v("volume1-9", "1Gi", "uid1-9", "claim1-9", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![v("volume1-9", "1Gi", "uid1-9", "claim1-9", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim1-9", "uid1-9", "1Gi", "", p, None, &[])],
            vec![c("claim1-9", "uid1-9", "1Gi", "volume1-9", b, None, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "1-10 - complete bind after crash - PVC bound",
            vec![v("volume1-10", "1Gi", "uid1-10", "claim1-10", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![v("volume1-10", "1Gi", "uid1-10", "claim1-10", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim1-10", "uid1-10", "1Gi", "volume1-10", p, None, &[BOUND_BY, COMPLETED])],
            vec![c("claim1-10", "uid1-10", "1Gi", "volume1-10", b, None, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "1-11 - bind when selector matches",
            vec![with_labels(v("volume1-1", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![with_labels(v("volume1-1", "1Gi", "uid1-1", "claim1-1", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![with_label_selector(c("claim1-1", "uid1-1", "1Gi", "", p, None, &[]))],
            vec![with_label_selector(c("claim1-1", "uid1-1", "1Gi", "volume1-1", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "1-12 - do not bind when selector does not match",
            vec![v("volume1-1", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume1-1", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![with_label_selector(c("claim1-1", "uid1-1", "1Gi", "", p, None, &[]))],
            vec![with_label_selector(c("claim1-1", "uid1-1", "1Gi", "", p, None, &[]))],
            &["Normal FailedBinding"],
            SyncClaim,
        ),
        row(
            "1-13 - delayed binding",
            vec![v("volume1-1", "1Gi", "", "", a, RETAIN, CLASS_WAIT, &[])],
            vec![v("volume1-1", "1Gi", "", "", a, RETAIN, CLASS_WAIT, &[])],
            vec![c("claim1-1", "uid1-1", "1Gi", "", p, wait, &[])],
            vec![c("claim1-1", "uid1-1", "1Gi", "", p, wait, &[])],
            &["Normal WaitForFirstConsumer"],
            SyncClaim,
        ),
        row(
            "1-14 - successful prebound PV",
            vec![v("volume1-1", "1Gi", "", "claim1-1", a, RETAIN, CLASS_WAIT, &[])],
            vec![v("volume1-1", "1Gi", "uid1-1", "claim1-1", b, RETAIN, CLASS_WAIT, &[])],
            vec![c("claim1-1", "uid1-1", "1Gi", "", p, wait, &[])],
            vec![c("claim1-1", "uid1-1", "1Gi", "volume1-1", b, wait, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "1-15 - successful prebound PVC",
            vec![v("volume1-15_1", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]), v("volume1-15_2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![
                v("volume1-15_1", "10Gi", "uid1-15", "claim1-15", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]),
                v("volume1-15_2", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]),
            ],
            vec![c("claim1-15", "uid1-15", "1Gi", "volume1-15_1", p, None, &[])],
            vec![with_expected_capacity("10Gi", c("claim1-15", "uid1-15", "1Gi", "volume1-15_1", b, None, &[COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "1-16 - successful prebound PVC",
            vec![v("volume1-16", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume1-16", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![claim_with_access_mode(&["ReadWriteMany"], c("claim1-16", "uid1-16", "1Gi", "volume1-16", p, None, &[]))],
            vec![claim_with_access_mode(&["ReadWriteMany"], c("claim1-16", "uid1-16", "1Gi", "volume1-16", p, None, &[]))],
            &[],
            SyncClaim,
        ),
        row(
            "1-17 - skip non-available PV if it's not pre-bind",
            vec![
                v("volume1-17-pending", "1Gi", "", "", p, RETAIN, CLASS_EMPTY, &[]),
                v("volume1-17-failed", "1Gi", "", "", "Failed", RETAIN, CLASS_EMPTY, &[]),
                v("volume1-17-released", "1Gi", "", "", "Released", RETAIN, CLASS_EMPTY, &[]),
                v("volume1-17-empty", "1Gi", "", "", "", RETAIN, CLASS_EMPTY, &[]),
            ],
            vec![
                v("volume1-17-pending", "1Gi", "", "", p, RETAIN, CLASS_EMPTY, &[]),
                v("volume1-17-failed", "1Gi", "", "", "Failed", RETAIN, CLASS_EMPTY, &[]),
                v("volume1-17-released", "1Gi", "", "", "Released", RETAIN, CLASS_EMPTY, &[]),
                v("volume1-17-empty", "1Gi", "", "", "", RETAIN, CLASS_EMPTY, &[]),
            ],
            vec![c("claim1-17", "uid1-17", "1Gi", "", p, None, &[])],
            vec![c("claim1-17", "uid1-17", "1Gi", "", p, None, &[])],
            &[],
            SyncClaim,
        ),
        row(
            "1-18 - successful pre-bound PV to PVC provisioning",
            vec![v("volume1-18", "1Gi", "uid1-18", "claim1-18", a, RETAIN, CLASS_WAIT, &[])],
            vec![v("volume1-18", "1Gi", "uid1-18", "claim1-18", b, RETAIN, CLASS_WAIT, &[])],
            vec![claim_with_annotation(ANN_SELECTED_NODE, "node1", c("claim1-18", "uid1-18", "1Gi", "", p, wait, &[]))],
            vec![claim_with_annotation(ANN_SELECTED_NODE, "node1", c("claim1-18", "uid1-18", "1Gi", "volume1-18", b, wait, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        // [Unit test set 2] User asked for a specific PV.
        row(
            "2-1 - claim prebound to non-existing volume - noop",
            vec![],
            vec![],
            vec![c("claim2-1", "uid2-1", "10Gi", "volume2-1", p, None, &[])],
            vec![c("claim2-1", "uid2-1", "10Gi", "volume2-1", p, None, &[])],
            &[],
            SyncClaim,
        ),
        row(
            "2-2 - claim prebound to non-existing volume - reset status",
            vec![],
            vec![],
            vec![c("claim2-2", "uid2-2", "10Gi", "volume2-2", b, None, &[])],
            vec![c("claim2-2", "uid2-2", "10Gi", "volume2-2", p, None, &[])],
            &[],
            SyncClaim,
        ),
        row(
            "2-3 - claim prebound to unbound volume",
            vec![v("volume2-3", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume2-3", "1Gi", "uid2-3", "claim2-3", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim2-3", "uid2-3", "1Gi", "volume2-3", p, None, &[])],
            vec![c("claim2-3", "uid2-3", "1Gi", "volume2-3", b, None, &[COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "2-4 - claim prebound to prebound volume by name",
            vec![v("volume2-4", "1Gi", "", "claim2-4", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume2-4", "1Gi", "uid2-4", "claim2-4", b, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim2-4", "uid2-4", "1Gi", "volume2-4", p, None, &[])],
            vec![c("claim2-4", "uid2-4", "1Gi", "volume2-4", b, None, &[COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "2-5 - claim prebound to prebound volume by UID",
            vec![v("volume2-5", "1Gi", "uid2-5", "claim2-5", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume2-5", "1Gi", "uid2-5", "claim2-5", b, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim2-5", "uid2-5", "1Gi", "volume2-5", p, None, &[])],
            vec![c("claim2-5", "uid2-5", "1Gi", "volume2-5", b, None, &[COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            // Upstream's row expects no event, but its checkEvents reads none beyond the
            // expected ones; v1.34's syncUnboundClaim does emit this FailedBinding.
            "2-6 - claim prebound to already bound volume",
            vec![v("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", b, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", b, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim2-6", "uid2-6", "1Gi", "volume2-6", b, None, &[])],
            vec![c("claim2-6", "uid2-6", "1Gi", "volume2-6", p, None, &[])],
            &[],
            SyncClaim,
        ),
        row(
            "2-7 - claim bound by controller to already bound volume",
            vec![v("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", b, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", b, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim2-7", "uid2-7", "1Gi", "volume2-7", b, None, &[BOUND_BY])],
            vec![c("claim2-7", "uid2-7", "1Gi", "volume2-7", b, None, &[BOUND_BY])],
            &[],
            SyncClaimError,
        ),
        row(
            "2-8 - claim prebound to unbound volume that does not match the selector",
            vec![v("volume2-8", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume2-8", "1Gi", "uid2-8", "claim2-8", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![with_label_selector(c("claim2-8", "uid2-8", "1Gi", "volume2-8", p, None, &[]))],
            vec![with_label_selector(c("claim2-8", "uid2-8", "1Gi", "volume2-8", b, None, &[COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "2-9 - claim prebound to unbound volume that size is smaller than requested",
            vec![v("volume2-9", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume2-9", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim2-9", "uid2-9", "2Gi", "volume2-9", b, None, &[])],
            vec![c("claim2-9", "uid2-9", "2Gi", "volume2-9", p, None, &[])],
            &["Warning VolumeMismatch"],
            SyncClaim,
        ),
        row(
            // The volume's uid "1" is a claimRef-less uid in upstream's builder (no claim
            // name, so no claimRef at all): the same here.
            "2-10 - claim prebound to unbound volume that class is different",
            vec![v("volume2-10", "1Gi", "1", "", a, RETAIN, CLASS_GOLD, &[])],
            vec![v("volume2-10", "1Gi", "", "", a, RETAIN, CLASS_GOLD, &[])],
            vec![c("claim2-10", "uid2-10", "1Gi", "volume2-10", b, None, &[])],
            vec![c("claim2-10", "uid2-10", "1Gi", "volume2-10", p, None, &[])],
            &["Warning VolumeMismatch"],
            SyncClaim,
        ),
        // VolumeAttributesClass rows (the gate is GA in v1.34).
        row(
            "2-11 - claim prebound to unbound volume that volume attributes class is different",
            vec![volume_with_vac(CLASS_GOLD, v("volume2-11", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![volume_with_vac(CLASS_GOLD, v("volume2-11", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![c("claim2-11", "uid2-11", "1Gi", "volume2-11", b, None, &[])],
            vec![c("claim2-11", "uid2-11", "1Gi", "volume2-11", p, None, &[])],
            &["Warning VolumeMismatch"],
            SyncClaim,
        ),
        row(
            "2-12 - claim prebound to unbound volume that volume attributes class is same",
            vec![volume_with_vac(CLASS_GOLD, v("volume2-12", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![volume_with_vac(CLASS_GOLD, v("volume2-12", "1Gi", "uid2-12", "claim2-12", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![claim_with_vac(CLASS_GOLD, c("claim2-12", "uid2-12", "1Gi", "volume2-12", p, None, &[]))],
            vec![with_expected_vac(CLASS_GOLD, claim_with_vac(CLASS_GOLD, c("claim2-12", "uid2-12", "1Gi", "volume2-12", b, None, &[COMPLETED])))],
            &[],
            SyncClaim,
        ),
        // [Unit test set 3] Syncing bound claim
        row(
            "3-1 - bound claim with missing VolumeName",
            vec![],
            vec![],
            vec![c("claim3-1", "uid3-1", "10Gi", "", b, None, &[BOUND_BY, COMPLETED])],
            vec![c("claim3-1", "uid3-1", "10Gi", "", "Lost", None, &[BOUND_BY, COMPLETED])],
            &["Warning ClaimLost"],
            SyncClaim,
        ),
        row(
            "3-2 - bound claim with missing volume",
            vec![],
            vec![],
            vec![c("claim3-2", "uid3-2", "10Gi", "volume3-2", b, None, &[BOUND_BY, COMPLETED])],
            vec![c("claim3-2", "uid3-2", "10Gi", "volume3-2", "Lost", None, &[BOUND_BY, COMPLETED])],
            &["Warning ClaimLost"],
            SyncClaim,
        ),
        row(
            "3-3 - bound claim with unbound volume",
            vec![v("volume3-3", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume3-3", "10Gi", "uid3-3", "claim3-3", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim3-3", "uid3-3", "10Gi", "volume3-3", p, None, &[BOUND_BY, COMPLETED])],
            vec![c("claim3-3", "uid3-3", "10Gi", "volume3-3", b, None, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "3-4 - bound claim with prebound volume",
            vec![v("volume3-4", "10Gi", "claim3-4-x", "claim3-4", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume3-4", "10Gi", "claim3-4-x", "claim3-4", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim3-4", "uid3-4", "10Gi", "volume3-4", p, None, &[BOUND_BY, COMPLETED])],
            vec![c("claim3-4", "uid3-4", "10Gi", "volume3-4", "Lost", None, &[BOUND_BY, COMPLETED])],
            &["Warning ClaimMisbound"],
            SyncClaim,
        ),
        row(
            "3-5 - bound claim with bound volume",
            vec![v("volume3-5", "10Gi", "uid3-5", "claim3-5", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume3-5", "10Gi", "uid3-5", "claim3-5", b, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim3-5", "uid3-5", "10Gi", "volume3-5", p, None, &[COMPLETED])],
            vec![c("claim3-5", "uid3-5", "10Gi", "volume3-5", b, None, &[COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "3-6 - bound claim with bound volume",
            vec![v("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim3-6", "uid3-6", "10Gi", "volume3-6", p, None, &[COMPLETED])],
            vec![c("claim3-6", "uid3-6", "10Gi", "volume3-6", "Lost", None, &[COMPLETED])],
            &["Warning ClaimMisbound"],
            SyncClaim,
        ),
        row(
            "3-7 - bound claim with unbound volume where selector doesn't match",
            vec![v("volume3-3", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume3-3", "10Gi", "uid3-3", "claim3-3", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![with_label_selector(c("claim3-3", "uid3-3", "10Gi", "volume3-3", p, None, &[BOUND_BY, COMPLETED]))],
            vec![with_label_selector(c("claim3-3", "uid3-3", "10Gi", "volume3-3", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        // [Unit test set 4] All syncVolume tests.
        row(
            "4-1 - pending volume",
            vec![v("volume4-1", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume4-1", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![],
            vec![],
            &[],
            SyncVolume,
        ),
        row(
            "4-2 - pending prebound volume",
            vec![v("volume4-2", "10Gi", "", "claim4-2", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume4-2", "10Gi", "", "claim4-2", a, RETAIN, CLASS_EMPTY, &[])],
            vec![],
            vec![],
            &[],
            SyncVolume,
        ),
        row(
            "4-3 - bound volume with missing claim",
            vec![v("volume4-3", "10Gi", "uid4-3", "claim4-3", b, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume4-3", "10Gi", "uid4-3", "claim4-3", "Released", RETAIN, CLASS_EMPTY, &[])],
            vec![],
            vec![],
            &[],
            SyncVolume,
        ),
        row(
            "4-4 - volume bound to claim with different UID",
            vec![v("volume4-4", "10Gi", "uid4-4", "claim4-4", b, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume4-4", "10Gi", "uid4-4", "claim4-4", "Released", RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim4-4", "uid4-4-x", "10Gi", "volume4-4", b, None, &[COMPLETED])],
            vec![c("claim4-4", "uid4-4-x", "10Gi", "volume4-4", b, None, &[COMPLETED])],
            &[],
            SyncVolume,
        ),
        row(
            "4-5 - volume bound by controller to unbound claim",
            vec![v("volume4-5", "10Gi", "uid4-5", "claim4-5", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![v("volume4-5", "10Gi", "uid4-5", "claim4-5", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim4-5", "uid4-5", "10Gi", "", p, None, &[])],
            vec![c("claim4-5", "uid4-5", "10Gi", "", p, None, &[])],
            &[],
            SyncVolume,
        ),
        row(
            "4-5 - volume bound by user to bound claim",
            vec![v("volume4-5", "10Gi", "uid4-5", "claim4-5", b, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume4-5", "10Gi", "uid4-5", "claim4-5", b, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim4-5", "uid4-5", "10Gi", "", p, None, &[])],
            vec![c("claim4-5", "uid4-5", "10Gi", "", p, None, &[])],
            &[],
            SyncVolume,
        ),
        row(
            "4-6 - volume bound by to bound claim",
            vec![v("volume4-6", "10Gi", "uid4-6", "claim4-6", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume4-6", "10Gi", "uid4-6", "claim4-6", b, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim4-6", "uid4-6", "10Gi", "volume4-6", b, None, &[])],
            vec![c("claim4-6", "uid4-6", "10Gi", "volume4-6", b, None, &[])],
            &[],
            SyncVolume,
        ),
        row(
            "4-7 - volume bound by controller to claim bound somewhere else",
            vec![v("volume4-7", "10Gi", "uid4-7", "claim4-7", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![v("volume4-7", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim4-7", "uid4-7", "10Gi", "volume4-7-x", b, None, &[])],
            vec![c("claim4-7", "uid4-7", "10Gi", "volume4-7-x", b, None, &[])],
            &[],
            SyncVolume,
        ),
        row(
            "4-8 - volume bound by user to claim bound somewhere else",
            vec![v("volume4-8", "10Gi", "uid4-8", "claim4-8", b, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume4-8", "10Gi", "", "claim4-8", a, RETAIN, CLASS_EMPTY, &[])],
            vec![c("claim4-8", "uid4-8", "10Gi", "volume4-8-x", b, None, &[])],
            vec![c("claim4-8", "uid4-8", "10Gi", "volume4-8-x", b, None, &[])],
            &[],
            SyncVolume,
        ),
        row(
            "4-9 - volume bound to bound claim, with PersistentVolumeReclaimDelete",
            vec![v("volume4-9", "10Gi", "uid4-9", "claim4-9", a, DELETE, CLASS_EMPTY, &[])],
            vec![v("volume4-9", "10Gi", "uid4-9", "claim4-9", b, DELETE, CLASS_EMPTY, &[])],
            vec![c("claim4-9", "uid4-9", "10Gi", "volume4-9", b, None, &[])],
            vec![c("claim4-9", "uid4-9", "10Gi", "volume4-9", b, None, &[])],
            &[],
            SyncVolume,
        ),
        row(
            "4-10 - volume bound to missing claim",
            vec![v("volume4-10", "10Gi", "uid4-10", "claim4-10", a, DELETE, CLASS_EMPTY, &[])],
            vec![with_message(
                "error getting deleter volume plugin for volume \"volume4-10\": no volume plugin matched",
                v("volume4-10", "10Gi", "uid4-10", "claim4-10", "Failed", DELETE, CLASS_EMPTY, &[]),
            )],
            vec![],
            vec![],
            &[],
            SyncVolume,
        ),
        row(
            "4-11 - volume bound to unknown claim",
            vec![v("volume4-11", "10Gi", "uid4-11", "claim4-11", a, DELETE, CLASS_EMPTY, &[])],
            vec![v("volume4-11", "10Gi", "uid4-11", "claim4-11", b, DELETE, CLASS_EMPTY, &[])],
            vec![c("claim4-11", "uid4-11", "10Gi", "volume4-11", b, None, &[SKIP_LOCAL_STORE])],
            vec![c("claim4-11", "uid4-11", "10Gi", "volume4-11", b, None, &[SKIP_LOCAL_STORE])],
            &[],
            SyncVolume,
        ),
        row(
            "4-12 - volume bound to newest claim but not updated to local cache",
            vec![v("volume4-12", "10Gi", "uid4-12-new", "claim4-12", a, DELETE, CLASS_EMPTY, &[])],
            vec![v("volume4-12", "10Gi", "uid4-12-new", "claim4-12", b, DELETE, CLASS_EMPTY, &[])],
            vec![
                c("claim4-12", "uid4-12", "10Gi", "volume4-12", b, None, &[]),
                c("claim4-12", "uid4-12-new", "10Gi", "volume4-12", b, None, &[SKIP_LOCAL_STORE]),
            ],
            vec![c("claim4-12", "uid4-12-new", "10Gi", "volume4-12", b, None, &[SKIP_LOCAL_STORE])],
            &[],
            SyncVolume,
        ),
        // PVC with class
        row(
            "13-1 - binding to class",
            vec![v("volume13-1-1", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]), v("volume13-1-2", "10Gi", "", "", a, RETAIN, CLASS_GOLD, &[])],
            vec![
                v("volume13-1-1", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]),
                v("volume13-1-2", "10Gi", "uid13-1", "claim13-1", b, RETAIN, CLASS_GOLD, &[BOUND_BY]),
            ],
            vec![c("claim13-1", "uid13-1", "1Gi", "", p, gold, &[])],
            vec![with_expected_capacity("10Gi", c("claim13-1", "uid13-1", "1Gi", "volume13-1-2", b, gold, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "13-2 - binding without a class",
            vec![v("volume13-2-1", "1Gi", "", "", a, RETAIN, CLASS_GOLD, &[]), v("volume13-2-2", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![
                v("volume13-2-1", "1Gi", "", "", a, RETAIN, CLASS_GOLD, &[]),
                v("volume13-2-2", "10Gi", "uid13-2", "claim13-2", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]),
            ],
            vec![c("claim13-2", "uid13-2", "1Gi", "", p, None, &[])],
            vec![with_expected_capacity("10Gi", c("claim13-2", "uid13-2", "1Gi", "volume13-2-2", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "13-3 - binding to specific a class",
            vec![v("volume13-3-1", "1Gi", "", "", a, RETAIN, CLASS_SILVER, &[]), v("volume13-3-2", "10Gi", "", "", a, RETAIN, CLASS_GOLD, &[])],
            vec![
                v("volume13-3-1", "1Gi", "", "", a, RETAIN, CLASS_SILVER, &[]),
                v("volume13-3-2", "10Gi", "uid13-3", "claim13-3", b, RETAIN, CLASS_GOLD, &[BOUND_BY]),
            ],
            vec![c("claim13-3", "uid13-3", "1Gi", "", p, gold, &[])],
            vec![with_expected_capacity("10Gi", c("claim13-3", "uid13-3", "1Gi", "volume13-3-2", b, gold, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "13-4 - empty class",
            vec![v("volume13-4", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume13-4", "1Gi", "uid13-4", "claim13-4", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim13-4", "uid13-4", "1Gi", "", p, empty, &[])],
            vec![c("claim13-4", "uid13-4", "1Gi", "volume13-4", b, empty, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "13-5 - nil class",
            vec![v("volume13-5", "1Gi", "", "", a, RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume13-5", "1Gi", "uid13-5", "claim13-5", b, RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim13-5", "uid13-5", "1Gi", "", p, None, &[])],
            vec![c("claim13-5", "uid13-5", "1Gi", "volume13-5", b, None, &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
    ];
    run_table("TestSync", rows, &binder_classes());
}

// ---- binder_test.go TestSyncBlockVolume ----

#[test]
fn binder_test_test_sync_block_volume() {
    let v = new_volume;
    let c = new_claim;
    let (a, b, p) = ("Available", "Bound", "Pending");
    let (block, file) = ("Block", "Filesystem");
    let vm = with_volume_mode;
    let cm = with_claim_mode;
    let gold = Some(CLASS_GOLD);
    let silver = Some(CLASS_SILVER);
    let rows = vec![
        row(
            "14-1 - binding to volumeMode block",
            vec![vm(block, v("volume14-1", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(block, v("volume14-1", "10Gi", "uid14-1", "claim14-1", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![cm(block, c("claim14-1", "uid14-1", "10Gi", "", p, None, &[]))],
            vec![cm(block, c("claim14-1", "uid14-1", "10Gi", "volume14-1", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "14-2 - binding to volumeMode filesystem",
            vec![vm(file, v("volume14-2", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(file, v("volume14-2", "10Gi", "uid14-2", "claim14-2", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![cm(file, c("claim14-2", "uid14-2", "10Gi", "", p, None, &[]))],
            vec![cm(file, c("claim14-2", "uid14-2", "10Gi", "volume14-2", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "14-3 - do not bind pv volumeMode filesystem and pvc volumeMode block",
            vec![vm(file, v("volume14-3", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(file, v("volume14-3", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![cm(block, c("claim14-3", "uid14-3", "10Gi", "", p, None, &[]))],
            vec![cm(block, c("claim14-3", "uid14-3", "10Gi", "", p, None, &[]))],
            &["Normal FailedBinding"],
            SyncClaim,
        ),
        row(
            "14-4 - do not bind pv volumeMode block and pvc volumeMode filesystem",
            vec![vm(block, v("volume14-4", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(block, v("volume14-4", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![cm(file, c("claim14-4", "uid14-4", "10Gi", "", p, None, &[]))],
            vec![cm(file, c("claim14-4", "uid14-4", "10Gi", "", p, None, &[]))],
            &["Normal FailedBinding"],
            SyncClaim,
        ),
        row(
            "14-5 - do not bind when matching class but not volumeMode",
            vec![vm(file, v("volume14-5", "10Gi", "", "", a, RETAIN, CLASS_GOLD, &[]))],
            vec![vm(file, v("volume14-5", "10Gi", "", "", a, RETAIN, CLASS_GOLD, &[]))],
            vec![cm(block, c("claim14-5", "uid14-5", "10Gi", "", p, gold, &[]))],
            vec![cm(block, c("claim14-5", "uid14-5", "10Gi", "", p, gold, &[]))],
            &["Warning ProvisioningFailed"],
            SyncClaim,
        ),
        row(
            "14-5-1 - do not bind when matching volumeModes but class does not match",
            vec![vm(file, v("volume14-5-1", "10Gi", "", "", a, RETAIN, CLASS_GOLD, &[]))],
            vec![vm(file, v("volume14-5-1", "10Gi", "", "", a, RETAIN, CLASS_GOLD, &[]))],
            vec![cm(file, c("claim14-5-1", "uid14-5-1", "10Gi", "", p, silver, &[]))],
            vec![cm(file, c("claim14-5-1", "uid14-5-1", "10Gi", "", p, silver, &[]))],
            &["Warning ProvisioningFailed"],
            SyncClaim,
        ),
        row(
            "14-5-2 - do not bind when pvc is prebound to pv with matching volumeModes but class does not match",
            vec![vm(file, v("volume14-5-2", "10Gi", "", "", a, RETAIN, CLASS_GOLD, &[]))],
            vec![vm(file, v("volume14-5-2", "10Gi", "", "", a, RETAIN, CLASS_GOLD, &[]))],
            vec![cm(file, c("claim14-5-2", "uid14-5-2", "10Gi", "volume14-5-2", p, silver, &[]))],
            vec![cm(file, c("claim14-5-2", "uid14-5-2", "10Gi", "volume14-5-2", p, silver, &[]))],
            &["Warning VolumeMismatch"],
            SyncClaim,
        ),
        row(
            "14-7 - bind when pv volume is prebound and volumeModes match",
            vec![vm(block, v("volume14-7", "10Gi", "", "claim14-7", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(block, v("volume14-7", "10Gi", "uid14-7", "claim14-7", b, RETAIN, CLASS_EMPTY, &[]))],
            vec![cm(block, c("claim14-7", "uid14-7", "10Gi", "", p, None, &[]))],
            vec![cm(block, c("claim14-7", "uid14-7", "10Gi", "volume14-7", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "14-8 - do not bind when pvc is prebound to pv with mismatching volumeModes",
            vec![vm(block, v("volume14-8", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(block, v("volume14-8", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![cm(file, c("claim14-8", "uid14-8", "10Gi", "volume14-8", p, None, &[]))],
            vec![cm(file, c("claim14-8", "uid14-8", "10Gi", "volume14-8", p, None, &[]))],
            &["Warning VolumeMismatch"],
            SyncClaim,
        ),
        row(
            "14-8-1 - do not bind when pvc is prebound to pv with mismatching volumeModes",
            vec![vm(block, v("volume14-8-1", "10Gi", "", "claim14-8-1", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(block, v("volume14-8-1", "10Gi", "", "claim14-8-1", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![cm(file, c("claim14-8-1", "uid14-8-1", "10Gi", "", p, None, &[]))],
            vec![cm(file, c("claim14-8-1", "uid14-8-1", "10Gi", "", p, None, &[]))],
            &["Normal FailedBinding"],
            SyncClaim,
        ),
        row(
            "14-9 - bind when pvc is prebound to pv with matching volumeModes block",
            vec![vm(block, v("volume14-9", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(block, v("volume14-9", "10Gi", "uid14-9", "claim14-9", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![cm(block, c("claim14-9", "uid14-9", "10Gi", "volume14-9", p, None, &[]))],
            vec![cm(block, c("claim14-9", "uid14-9", "10Gi", "volume14-9", b, None, &[COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "14-10 - bind when pv is prebound to pvc with matching volumeModes block",
            vec![vm(block, v("volume14-10", "10Gi", "", "claim14-10", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(block, v("volume14-10", "10Gi", "uid14-10", "claim14-10", b, RETAIN, CLASS_EMPTY, &[]))],
            vec![cm(block, c("claim14-10", "uid14-10", "10Gi", "", p, None, &[]))],
            vec![cm(block, c("claim14-10", "uid14-10", "10Gi", "volume14-10", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "14-11 - bind when pvc is prebound to pv with matching volumeModes filesystem",
            vec![vm(file, v("volume14-11", "10Gi", "", "", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(file, v("volume14-11", "10Gi", "uid14-11", "claim14-11", b, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![cm(file, c("claim14-11", "uid14-11", "10Gi", "volume14-11", p, None, &[]))],
            vec![cm(file, c("claim14-11", "uid14-11", "10Gi", "volume14-11", b, None, &[COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "14-12 - bind when pv is prebound to pvc with matching volumeModes filesystem",
            vec![vm(file, v("volume14-12", "10Gi", "", "claim14-12", a, RETAIN, CLASS_EMPTY, &[]))],
            vec![vm(file, v("volume14-12", "10Gi", "uid14-12", "claim14-12", b, RETAIN, CLASS_EMPTY, &[]))],
            vec![cm(file, c("claim14-12", "uid14-12", "10Gi", "", p, None, &[]))],
            vec![cm(file, c("claim14-12", "uid14-12", "10Gi", "volume14-12", b, None, &[BOUND_BY, COMPLETED]))],
            &[],
            SyncClaim,
        ),
        row(
            "14-13 - output warning when pv is prebound to pvc with different volumeModes",
            vec![vm(file, v("volume14-13", "10Gi", "uid14-13", "claim14-13", a, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![vm(file, v("volume14-13", "10Gi", "uid14-13", "claim14-13", a, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![cm(block, c("claim14-13", "uid14-13", "10Gi", "", p, None, &[]))],
            vec![cm(block, c("claim14-13", "uid14-13", "10Gi", "", p, None, &[]))],
            &["Warning VolumeMismatch"],
            SyncVolume,
        ),
        row(
            "14-13-1 - output warning when pv is prebound to pvc with different volumeModes",
            vec![vm(block, v("volume14-13-1", "10Gi", "uid14-13-1", "claim14-13-1", a, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![vm(block, v("volume14-13-1", "10Gi", "uid14-13-1", "claim14-13-1", a, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![cm(file, c("claim14-13-1", "uid14-13-1", "10Gi", "", p, None, &[]))],
            vec![cm(file, c("claim14-13-1", "uid14-13-1", "10Gi", "", p, None, &[]))],
            &["Warning VolumeMismatch"],
            SyncVolume,
        ),
        row(
            "14-14 - wait for synClaim without warning when pv is prebound to pvc with matching volumeModes block",
            vec![vm(block, v("volume14-14", "10Gi", "uid14-14", "claim14-14", a, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![vm(block, v("volume14-14", "10Gi", "uid14-14", "claim14-14", a, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![cm(block, c("claim14-14", "uid14-14", "10Gi", "", p, None, &[]))],
            vec![cm(block, c("claim14-14", "uid14-14", "10Gi", "", p, None, &[]))],
            &[],
            SyncVolume,
        ),
        row(
            "14-14-1 - wait for synClaim without warning when pv is prebound to pvc with matching volumeModes file",
            vec![vm(file, v("volume14-14-1", "10Gi", "uid14-14-1", "claim14-14-1", a, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![vm(file, v("volume14-14-1", "10Gi", "uid14-14-1", "claim14-14-1", a, RETAIN, CLASS_EMPTY, &[BOUND_BY]))],
            vec![cm(file, c("claim14-14-1", "uid14-14-1", "10Gi", "", p, None, &[]))],
            vec![cm(file, c("claim14-14-1", "uid14-14-1", "10Gi", "", p, None, &[]))],
            &[],
            SyncVolume,
        ),
    ];
    run_table("TestSyncBlockVolume", rows, &[]);
}

// ---- binder_test.go TestMultiSync ----

#[test]
fn binder_test_test_multi_sync() {
    let v = new_volume;
    let c = new_claim;
    let rows = vec![
        row(
            "10-1 - successful bind",
            vec![v("volume10-1", "1Gi", "", "", "Pending", RETAIN, CLASS_EMPTY, &[])],
            vec![v("volume10-1", "1Gi", "uid10-1", "claim10-1", "Bound", RETAIN, CLASS_EMPTY, &[BOUND_BY])],
            vec![c("claim10-1", "uid10-1", "1Gi", "", "Pending", None, &[])],
            vec![c("claim10-1", "uid10-1", "1Gi", "volume10-1", "Bound", None, &[BOUND_BY, COMPLETED])],
            &[],
            MultiSync,
        ),
        row(
            "10-2 - bind PV race",
            vec![
                v("volume10-2-1", "1Gi", "uid10-2", "claim10-2", "Bound", RETAIN, CLASS_EMPTY, &[BOUND_BY]),
                v("volume10-2-2", "1Gi", "uid10-2", "claim10-2", "Bound", RETAIN, CLASS_EMPTY, &[BOUND_BY]),
            ],
            vec![
                v("volume10-2-1", "1Gi", "uid10-2", "claim10-2", "Bound", RETAIN, CLASS_EMPTY, &[BOUND_BY]),
                v("volume10-2-2", "1Gi", "", "", "Available", RETAIN, CLASS_EMPTY, &[]),
            ],
            vec![c("claim10-2", "uid10-2", "1Gi", "volume10-2-1", "Bound", None, &[BOUND_BY, COMPLETED])],
            vec![c("claim10-2", "uid10-2", "1Gi", "volume10-2-1", "Bound", None, &[BOUND_BY, COMPLETED])],
            &[],
            MultiSync,
        ),
    ];
    run_table("TestMultiSync", rows, &[]);
}

// ---- provision_test.go TestProvisionSync ----

#[test]
fn provision_test_test_provision_sync() {
    let v = new_volume;
    let c = new_claim;
    let (a, b, p) = ("Available", "Bound", "Pending");
    let rows = vec![
        row(
            // kubesim (like v1.34's kcm) has no in-tree provisioners: the mock plugin is not found.
            "11-2 - plugin not found",
            vec![],
            vec![],
            vec![c("claim11-2", "uid11-2", "1Gi", "", p, Some(CLASS_GOLD), &[])],
            vec![c("claim11-2", "uid11-2", "1Gi", "", p, Some(CLASS_GOLD), &[])],
            &["Warning ProvisioningFailed"],
            SyncClaim,
        ),
        row(
            "11-6 - provisioning when there is a volume available",
            vec![v("volume11-6", "1Gi", "", "", a, RETAIN, CLASS_GOLD, &[])],
            vec![v("volume11-6", "1Gi", "uid11-6", "claim11-6", b, RETAIN, CLASS_GOLD, &[BOUND_BY])],
            vec![c("claim11-6", "uid11-6", "1Gi", "", p, Some(CLASS_GOLD), &[])],
            vec![c("claim11-6", "uid11-6", "1Gi", "volume11-6", b, Some(CLASS_GOLD), &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "11-14 - fail due to non-existing class",
            vec![],
            vec![],
            vec![c("claim11-14", "uid11-14", "1Gi", "", p, Some(CLASS_NON_EXISTING), &[])],
            vec![c("claim11-14", "uid11-14", "1Gi", "", p, Some(CLASS_NON_EXISTING), &[])],
            &[],
            SyncClaim,
        ),
        row(
            "11-15 - no provisioning with class=''",
            vec![],
            vec![],
            vec![c("claim11-15", "uid11-15", "1Gi", "", p, Some(CLASS_EMPTY), &[])],
            vec![c("claim11-15", "uid11-15", "1Gi", "", p, Some(CLASS_EMPTY), &[])],
            &[],
            SyncClaim,
        ),
        row(
            "11-16 - no provisioning with class=nil",
            vec![],
            vec![],
            vec![c("claim11-15", "uid11-15", "1Gi", "", p, None, &[])],
            vec![c("claim11-15", "uid11-15", "1Gi", "", p, None, &[])],
            &[],
            SyncClaim,
        ),
        row(
            "11-17 - external provisioner",
            vec![],
            vec![],
            vec![c("claim11-17", "uid11-17", "1Gi", "", p, Some(CLASS_EXTERNAL), &[])],
            vec![claim_with_annotation(
                ANN_BETA_STORAGE_PROVISIONER,
                "vendor.com/my-volume",
                claim_with_annotation(ANN_STORAGE_PROVISIONER, "vendor.com/my-volume", c("claim11-17", "uid11-17", "1Gi", "", p, Some(CLASS_EXTERNAL), &[])),
            )],
            &["Normal ExternalProvisioning"],
            SyncClaim,
        ),
        row(
            "11-18 - unknown internal provisioner",
            vec![],
            vec![],
            vec![c("claim11-18", "uid11-18", "1Gi", "", p, Some(CLASS_UNKNOWN_INTERNAL), &[])],
            vec![c("claim11-18", "uid11-18", "1Gi", "", p, Some(CLASS_UNKNOWN_INTERNAL), &[])],
            &["Warning ProvisioningFailed"],
            SyncClaim,
        ),
        row(
            "11-22 - external provisioner with volume available",
            vec![v("volume11-22", "1Gi", "", "", a, RETAIN, CLASS_EXTERNAL, &[])],
            vec![v("volume11-22", "1Gi", "uid11-22", "claim11-22", b, RETAIN, CLASS_EXTERNAL, &[BOUND_BY])],
            vec![c("claim11-22", "uid11-22", "1Gi", "", p, Some(CLASS_EXTERNAL), &[])],
            vec![c("claim11-22", "uid11-22", "1Gi", "volume11-22", b, Some(CLASS_EXTERNAL), &[BOUND_BY, COMPLETED])],
            &[],
            SyncClaim,
        ),
        row(
            "11-24 - skip finding PV and wait external provisioner for PVC annotated with AnnSelectedNode",
            vec![v("volume11-24", "1Gi", "", "", a, DELETE, CLASS_EXTERNAL_WAIT, &[])],
            vec![v("volume11-24", "1Gi", "", "", a, DELETE, CLASS_EXTERNAL_WAIT, &[])],
            vec![claim_with_annotation(ANN_SELECTED_NODE, "node1", c("claim11-24", "uid11-24", "1Gi", "", p, Some(CLASS_EXTERNAL_WAIT), &[]))],
            vec![claim_with_annotation(
                ANN_BETA_STORAGE_PROVISIONER,
                "vendor.com/my-volume-wait",
                claim_with_annotation(
                    ANN_STORAGE_PROVISIONER,
                    "vendor.com/my-volume-wait",
                    claim_with_annotation(ANN_SELECTED_NODE, "node1", c("claim11-24", "uid11-24", "1Gi", "", p, Some(CLASS_EXTERNAL_WAIT), &[])),
                ),
            )],
            &["Normal ExternalProvisioning"],
            SyncClaim,
        ),
        row(
            "11-26 - csi with data source",
            vec![],
            vec![],
            vec![claim_with_annotation(
                ANN_STORAGE_PROVISIONER,
                "mydriver.csi.k8s.io",
                claim_with_data_source(
                    "test-snap",
                    "VolumeSnapshot",
                    "snapshot.storage.k8s.io",
                    c("claim11-26", "uid11-26", "1Gi", "", p, Some(CLASS_CSI), &[]),
                ),
            )],
            vec![claim_with_annotation(
                ANN_BETA_STORAGE_PROVISIONER,
                "mydriver.csi.k8s.io",
                claim_with_annotation(
                    ANN_STORAGE_PROVISIONER,
                    "mydriver.csi.k8s.io",
                    claim_with_data_source(
                        "test-snap",
                        "VolumeSnapshot",
                        "snapshot.storage.k8s.io",
                        c("claim11-26", "uid11-26", "1Gi", "", p, Some(CLASS_CSI), &[]),
                    ),
                ),
            )],
            &["Normal ExternalProvisioning"],
            SyncClaim,
        ),
    ];
    run_table("TestProvisionSync", rows, &provision_classes());
}

// ---- delete_test.go TestDeleteSync ----

#[test]
fn delete_test_test_delete_sync() {
    let v = new_volume;
    let c = new_claim;
    let hp = |path: &str, pv: PersistentVolume| with_host_path(path, pv);
    let rows = vec![
        row(
            // The mock deleter that succeeds is the hostPath deleter here (a volume under /tmp).
            "8-1 - successful delete",
            vec![hp("/tmp/volume8-1", v("volume8-1", "1Gi", "uid8-1", "claim8-1", "Bound", DELETE, CLASS_EMPTY, &[BOUND_BY]))],
            vec![],
            vec![],
            vec![],
            &[],
            SyncVolume,
        ),
        row(
            "8-2 - successful delete with prebound volume",
            vec![hp("/tmp/volume8-2", v("volume8-2", "1Gi", "uid8-2", "claim8-2", "Bound", DELETE, CLASS_EMPTY, &[]))],
            vec![],
            vec![],
            vec![],
            &[],
            SyncVolume,
        ),
        row(
            "8-3 - plugin not found",
            vec![v("volume8-3", "1Gi", "uid8-3", "claim8-3", "Bound", DELETE, CLASS_EMPTY, &[])],
            vec![with_message(
                "error getting deleter volume plugin for volume \"volume8-3\": no volume plugin matched",
                v("volume8-3", "1Gi", "uid8-3", "claim8-3", "Failed", DELETE, CLASS_EMPTY, &[]),
            )],
            vec![],
            vec![],
            &["Warning VolumeFailedDelete"],
            SyncVolume,
        ),
        row(
            // The deleter's own error: the hostPath deleter refuses paths outside /tmp.
            "8-5 - delete returns error",
            vec![hp("/data/volume8-5", v("volume8-5", "1Gi", "uid8-5", "claim8-5", "Bound", DELETE, CLASS_EMPTY, &[]))],
            vec![with_message(
                "host_path deleter only supports /tmp/.+ but received provided /data/volume8-5",
                hp("/data/volume8-5", v("volume8-5", "1Gi", "uid8-5", "claim8-5", "Failed", DELETE, CLASS_EMPTY, &[])),
            )],
            vec![],
            vec![],
            &["Warning VolumeFailedDelete"],
            SyncVolume,
        ),
        row(
            "8-9 - prebound volume is deleted while the claim exists",
            vec![hp("/tmp/volume8-9", v("volume8-9", "1Gi", "uid8-9", "claim8-9", "Bound", DELETE, CLASS_EMPTY, &[]))],
            vec![],
            vec![c("claim8-9", "uid8-9-x", "10Gi", "", "Pending", None, &[])],
            vec![c("claim8-9", "uid8-9-x", "10Gi", "", "Pending", None, &[])],
            &[],
            SyncVolume,
        ),
        row(
            "8-10 - external deleter",
            vec![volume_with_annotation(
                PROVISIONED_BY,
                "external.io/test",
                v("volume8-10", "1Gi", "uid10-1", "claim10-1", "Bound", DELETE, CLASS_EMPTY, &[BOUND_BY]),
            )],
            vec![volume_with_annotation(
                PROVISIONED_BY,
                "external.io/test",
                v("volume8-10", "1Gi", "uid10-1", "claim10-1", "Released", DELETE, CLASS_EMPTY, &[BOUND_BY]),
            )],
            vec![],
            vec![],
            &[],
            SyncVolume,
        ),
        row(
            // Provisioned by the in-tree hostPath provisioner (the mock plugin upstream).
            "8-11 - two PVs provisioned for a single claim",
            vec![
                volume_with_annotation(
                    PROVISIONED_BY,
                    "kubernetes.io/host-path",
                    hp("/tmp/volume8-11-1", v("volume8-11-1", "1Gi", "uid8-11", "claim8-11", "Bound", DELETE, CLASS_EMPTY, &[])),
                ),
                volume_with_annotation(
                    PROVISIONED_BY,
                    "kubernetes.io/host-path",
                    hp("/tmp/volume8-11-2", v("volume8-11-2", "1Gi", "uid8-11", "claim8-11", "Bound", DELETE, CLASS_EMPTY, &[])),
                ),
            ],
            vec![volume_with_annotation(
                PROVISIONED_BY,
                "kubernetes.io/host-path",
                hp("/tmp/volume8-11-2", v("volume8-11-2", "1Gi", "uid8-11", "claim8-11", "Bound", DELETE, CLASS_EMPTY, &[])),
            )],
            vec![c("claim8-11", "uid8-11", "10Gi", "volume8-11-2", "Bound", None, &[])],
            vec![c("claim8-11", "uid8-11", "10Gi", "volume8-11-2", "Bound", None, &[])],
            &[],
            SyncVolume,
        ),
        row(
            "8-12 - two PVs externally provisioned for a single claim",
            vec![
                volume_with_annotation(PROVISIONED_BY, "external.io/test", v("volume8-12-1", "1Gi", "uid8-12", "claim8-12", "Bound", DELETE, CLASS_EMPTY, &[])),
                v("volume8-12-2", "1Gi", "uid8-12", "claim8-12", "Bound", DELETE, CLASS_EMPTY, &[PROVISIONED_BY]),
            ],
            vec![
                volume_with_annotation(
                    PROVISIONED_BY,
                    "external.io/test",
                    v("volume8-12-1", "1Gi", "uid8-12", "claim8-12", "Released", DELETE, CLASS_EMPTY, &[]),
                ),
                v("volume8-12-2", "1Gi", "uid8-12", "claim8-12", "Bound", DELETE, CLASS_EMPTY, &[PROVISIONED_BY]),
            ],
            vec![c("claim8-12", "uid8-12", "10Gi", "volume8-12-2", "Bound", None, &[])],
            vec![c("claim8-12", "uid8-12", "10Gi", "volume8-12-2", "Bound", None, &[])],
            &[],
            SyncVolume,
        ),
    ];
    run_table("TestDeleteSync", rows, &[]);
}
