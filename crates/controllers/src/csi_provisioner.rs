//! The external-provisioner sidecar (kubernetes-csi/external-provisioner over
//! sig-storage-lib-external-provisioner), one per CSI driver, running beside
//! kube-controller-manager as the driver's controller Deployment does. It acts on claims whose
//! `volume.kubernetes.io/storage-provisioner` names its driver — for WaitForFirstConsumer
//! classes once the scheduler has set `volume.kubernetes.io/selected-node` — and:
//!
//! 1. computes the accessibility requirements (`GenerateAccessibilityRequirements`, non-strict
//!    topology): the topology keys of the driver in the selected node's CSINode, the segment of
//!    every node that has them as requisite, the selected node's segment preferred first;
//! 2. calls the driver's CreateVolume (the StorageClass parameters without the reserved
//!    `csi.storage.k8s.io/` keys) and waits its modelled latency;
//! 3. creates the PV `pvc-<claim uid>`: `spec.csi {driver, volumeHandle, fsType, volumeAttributes
//!    (+ storage.kubernetes.io/csiProvisionerIdentity)}`, node affinity from the volume's
//!    accessible topology, pre-bound to the claim, with the
//!    `external-provisioner.volume.kubernetes.io/finalizer` finalizer and the deletion-secret
//!    annotations;
//! 4. deletes released volumes of reclaim policy Delete it provisioned (DeleteVolume, then the
//!    finalizer, then the PV object); a disk that is still attached cannot be deleted and is
//!    retried.
//!
//! Events: `Provisioning`, `ProvisioningSucceeded`, `ProvisioningFailed` on the claim and
//! `VolumeFailedDelete` on the volume, from `<driver>_<controller pod>_<uuid>` (the lib's event
//! source). Failures are retried with the lib's exponential backoff.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::csi::sha256_hex;
use kubesim_api::k8s_openapi::api::core::v1::{
    CSIPersistentVolumeSource, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim, PersistentVolumeSpec,
    VolumeNodeAffinity,
};
use kubesim_api::k8s_openapi::api::storage::v1::StorageClass;
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::Object;
use kubesim_api::quantity::{format_value, Format};
use kubesim_api::storage::{
    claim_class, claim_reference, claim_request, ANN_BETA_STORAGE_PROVISIONER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER,
};
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_host::csi::{latency_ms, CreateVolumeRequest, CsiCall, Driver, Topology};
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

/// The finalizer the provisioner keeps on the volumes it created until it deleted them.
pub const PROVISIONER_FINALIZER: &str = "external-provisioner.volume.kubernetes.io/finalizer";
/// The volume attribute naming the provisioner instance that created a volume.
pub const PROVISIONER_IDENTITY_KEY: &str = "storage.kubernetes.io/csiProvisionerIdentity";
/// The StorageClass parameter that becomes the PV's `csi.fsType`.
pub const FSTYPE_PARAMETER: &str = "csi.storage.k8s.io/fstype";
/// The prefix of the parameters the provisioner keeps to itself.
pub const RESERVED_PARAMETER_PREFIX: &str = "csi.storage.k8s.io/";
/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;
const TOKEN_BASE: u64 = 16;

/// The actor name of a driver's provisioner.
pub fn actor(driver: Driver) -> &'static str {
    match driver {
        Driver::Disk => "csi-provisioner-disk",
        Driver::HostPath => "csi-provisioner-hostpath",
    }
}

#[derive(Clone, Debug)]
enum Op {
    Provision { key: Key, uid: String },
    Delete { name: String, uid: String },
}

/// One driver's external-provisioner.
#[derive(Clone, Debug)]
pub struct CsiProvisioner {
    driver: Driver,
    claims: Cache,
    volumes: Cache,
    classes: Cache,
    nodes: Cache,
    csinodes: Cache,
    queue: WorkQueue,
    in_flight: BTreeMap<u64, Op>,
    next_token: u64,
    identity: String,
}

fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
}

impl CsiProvisioner {
    /// The provisioner of a driver, with empty caches.
    pub fn new(driver: Driver) -> CsiProvisioner {
        CsiProvisioner {
            driver,
            claims: Cache::default(),
            volumes: Cache::default(),
            classes: Cache::default(),
            nodes: Cache::default(),
            csinodes: Cache::default(),
            queue: WorkQueue::new(LATENCY_MS),
            in_flight: BTreeMap::new(),
            next_token: TOKEN_BASE,
            identity: String::new(),
        }
    }

    fn class_of(&self, claim: &PersistentVolumeClaim) -> Option<StorageClass> {
        self.classes.get_named("", &claim_class(claim)).and_then(|o| decode(o))
    }

    /// `shouldProvision`.
    fn should_provision(&self, claim: &PersistentVolumeClaim) -> bool {
        if claim.metadata.deletion_timestamp.is_some() || claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()).is_some_and(|v| !v.is_empty()) {
            return false;
        }
        let asked = annotation(&claim.metadata, ANN_STORAGE_PROVISIONER).or_else(|| annotation(&claim.metadata, ANN_BETA_STORAGE_PROVISIONER));
        if asked != Some(self.driver.name()) {
            return false;
        }
        let Some(class) = self.class_of(claim) else { return false };
        if class.provisioner != self.driver.name() {
            return false;
        }
        if class.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer") && annotation(&claim.metadata, ANN_SELECTED_NODE).is_none() {
            return false;
        }
        self.volumes.get_named("", &crate::localpath::provisioned_volume_name(claim)).is_none()
    }

    fn take_token(&mut self) -> u64 {
        let token = self.next_token;
        self.next_token += 1;
        token
    }

    fn sync_claim(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.claims.get(key).cloned() else { return Ok(()) };
        let Some(claim) = decode::<PersistentVolumeClaim>(&object) else { return Ok(()) };
        let uid = claim.metadata.uid.clone().unwrap_or_default();
        let busy = self.in_flight.values().any(|op| matches!(op, Op::Provision { uid: u, .. } if *u == uid));
        if !self.should_provision(&claim) || busy {
            return Ok(());
        }
        ctx.event(&object, "Normal", "Provisioning", format!("External provisioner is provisioning volume for claim \"{}/{}\"", key.0, key.1));
        let token = self.take_token();
        self.in_flight.insert(token, Op::Provision { key: key.clone(), uid });
        ctx.after(latency_ms(self.driver, CsiCall::CreateVolume), token);
        Ok(())
    }

    /// The driver's topology keys on a node (its CSINode entry), if it registered there.
    fn topology_keys(&self, node: &str) -> Option<Vec<String>> {
        let Some(Object::CSINode(csinode)) = self.csinodes.get_named("", node).map(|o| o.as_ref()) else { return None };
        csinode.spec.drivers.iter().find(|d| d.name == self.driver.name()).map(|d| d.topology_keys.clone().unwrap_or_default())
    }

    fn segment(&self, node: &str, keys: &[String]) -> Option<Topology> {
        let labels = self.nodes.get_named("", node)?.metadata().labels.clone().unwrap_or_default();
        keys.iter().map(|k| labels.get(k).map(|v| (k.clone(), v.clone()))).collect()
    }

    /// `GenerateAccessibilityRequirements` (non-strict topology): (requisite, preferred).
    fn accessibility(&self, class: &StorageClass, selected: Option<&str>) -> Result<(Vec<Topology>, Vec<Topology>), String> {
        let keys = match selected {
            Some(node) => {
                if self.csinodes.get_named("", node).is_none() {
                    return Err(format!("error getting CSINode for selected node {node:?}: csinode.storage.k8s.io {node:?} not found"));
                }
                self.topology_keys(node).ok_or_else(|| format!("topology keys of driver {:?} not found on the selected node {node:?}", self.driver.name()))?
            }
            None => self.csinodes.iter().filter_map(|o| self.topology_keys(o.name())).find(|k| !k.is_empty()).unwrap_or_default(),
        };
        if keys.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut requisite: Vec<Topology> = Vec::new();
        let allowed: Vec<Topology> = class
            .allowed_topologies
            .iter()
            .flatten()
            .flat_map(|term| {
                let exprs = term.match_label_expressions.clone().unwrap_or_default();
                let mut segments: Vec<Topology> = vec![Topology::new()];
                for e in exprs {
                    let mut next = Vec::new();
                    for segment in &segments {
                        for v in &e.values {
                            let mut s = segment.clone();
                            s.insert(e.key.clone(), v.clone());
                            next.push(s);
                        }
                    }
                    segments = next;
                }
                segments
            })
            .collect();
        if !allowed.is_empty() {
            requisite = allowed;
        } else {
            for csinode in self.csinodes.iter() {
                if self.topology_keys(csinode.name()).is_some_and(|k| k == keys) {
                    if let Some(segment) = self.segment(csinode.name(), &keys) {
                        if !requisite.contains(&segment) {
                            requisite.push(segment);
                        }
                    }
                }
            }
            kubesim_api::sort::sort(&mut requisite);
        }
        let mut preferred = requisite.clone();
        if let Some(node) = selected {
            let Some(own) = self.segment(node, &keys) else {
                return Err(format!("topology labels from selected node {node:?} do not match the topology keys {keys:?} of its CSINode"));
            };
            preferred.retain(|s| *s != own);
            preferred.insert(0, own);
        }
        Ok((requisite, preferred))
    }

    /// `Provision`: CreateVolume and the PV.
    fn provision(&mut self, key: &Key, uid: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = ctx.api.lookup(("", "persistentvolumeclaims"), &key.0, &key.1).cloned() else { return Ok(()) };
        let Some(claim) = object.decode::<PersistentVolumeClaim>() else { return Ok(()) };
        if claim.metadata.uid.as_deref() != Some(uid) || !self.should_provision(&claim) {
            return Ok(());
        }
        let class = self.class_of(&claim).unwrap_or_default();
        let class_name = claim_class(&claim);
        let fail = |ctx: &mut Ctx, why: String| {
            ctx.event(&object, "Warning", "ProvisioningFailed", format!("failed to provision volume with StorageClass {class_name:?}: {why}"));
            Err(ApiError::bad_request(why))
        };
        let selected = annotation(&claim.metadata, ANN_SELECTED_NODE).map(str::to_string);
        let (requisite, preferred) = match self.accessibility(&class, selected.as_deref()) {
            Ok(r) => r,
            Err(why) => return fail(ctx, format!("error generating accessibility requirements: {why}")),
        };
        let parameters = class.parameters.clone().unwrap_or_default();
        let name = crate::localpath::provisioned_volume_name(&claim);
        let request = CreateVolumeRequest {
            name: name.clone(),
            capacity_bytes: claim_request(&claim),
            parameters: parameters.iter().filter(|(k, _)| !k.starts_with(RESERVED_PARAMETER_PREFIX)).map(|(k, v)| (k.clone(), v.clone())).collect(),
            requisite,
            preferred,
        };
        ctx.note(format!("csi/{}", self.driver.name()), CsiCall::CreateVolume.name(), format!("{name} for {}/{}", key.0, key.1));
        let created = match self.driver.create_volume(ctx.cloud, &request) {
            Ok(created) => created,
            Err(e) => return fail(ctx, e.to_string()),
        };
        let spec = claim.spec.clone().unwrap_or_default();
        let mut attributes = created.volume_context.clone();
        attributes.insert(PROVISIONER_IDENTITY_KEY.to_string(), self.identity.clone());
        let terms: Vec<NodeSelectorTerm> = created
            .accessible_topology
            .iter()
            .map(|segment| NodeSelectorTerm {
                match_expressions: Some(
                    segment.iter().map(|(k, v)| NodeSelectorRequirement { key: k.clone(), operator: "In".into(), values: Some(vec![v.clone()]) }).collect(),
                ),
                match_fields: None,
            })
            .collect();
        let pv = PersistentVolume {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                annotations: Some(BTreeMap::from([
                    (ANN_DYNAMICALLY_PROVISIONED.to_string(), self.driver.name().to_string()),
                    ("volume.kubernetes.io/provisioner-deletion-secret-name".to_string(), String::new()),
                    ("volume.kubernetes.io/provisioner-deletion-secret-namespace".to_string(), String::new()),
                ])),
                finalizers: Some(vec![PROVISIONER_FINALIZER.to_string()]),
                ..Default::default()
            },
            spec: Some(PersistentVolumeSpec {
                access_modes: spec.access_modes.clone(),
                capacity: Some(BTreeMap::from([("storage".to_string(), Quantity(format_value(created.capacity_bytes, Format::BinarySI)))])),
                claim_ref: Some(claim_reference(&claim)),
                persistent_volume_reclaim_policy: Some(class.reclaim_policy.clone().unwrap_or_else(|| "Delete".into())),
                storage_class_name: Some(class_name.clone()),
                volume_mode: Some(spec.volume_mode.clone().unwrap_or_else(|| "Filesystem".into())),
                mount_options: class.mount_options.clone(),
                csi: Some(CSIPersistentVolumeSource {
                    driver: self.driver.name().to_string(),
                    volume_handle: created.volume_id.clone(),
                    fs_type: parameters.get(FSTYPE_PARAMETER).cloned(),
                    volume_attributes: Some(attributes),
                    ..Default::default()
                }),
                node_affinity: (!terms.is_empty()).then_some(VolumeNodeAffinity { required: Some(NodeSelector { node_selector_terms: terms }) }),
                ..Default::default()
            }),
            status: None,
        };
        crate::common::create_provisioned_volume(ctx, &mut self.volumes, &object, &pv, &class_name, &name)
    }

    /// `shouldDelete`: a released volume this driver provisioned, reclaim policy Delete (one
    /// being deleted only while it still has our finalizer).
    fn should_delete(&self, pv: &PersistentVolume) -> bool {
        let ours = annotation(&pv.metadata, ANN_DYNAMICALLY_PROVISIONED) == Some(self.driver.name());
        let delete = pv.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.as_deref()) == Some("Delete");
        let released = pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Released");
        let finalized = pv.metadata.finalizers.iter().flatten().any(|f| f == PROVISIONER_FINALIZER);
        ours && delete && released && (pv.metadata.deletion_timestamp.is_none() || finalized)
    }

    fn sync_volume(&mut self, name: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.volumes.get_named("", name).cloned() else { return Ok(()) };
        let Some(pv) = decode::<PersistentVolume>(&object) else { return Ok(()) };
        let uid = pv.metadata.uid.clone().unwrap_or_default();
        let busy = self.in_flight.values().any(|op| matches!(op, Op::Delete { uid: u, .. } if *u == uid));
        if busy || !self.should_delete(&pv) {
            return Ok(());
        }
        let token = self.take_token();
        self.in_flight.insert(token, Op::Delete { name: name.to_string(), uid });
        ctx.after(latency_ms(self.driver, CsiCall::DeleteVolume), token);
        Ok(())
    }

    /// `deleteVolumeOperation`: DeleteVolume, our finalizer off, the PV object deleted.
    fn delete(&mut self, name: &str, uid: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = ctx.api.lookup(("", "persistentvolumes"), "", name).cloned() else { return Ok(()) };
        let Some(pv) = object.decode::<PersistentVolume>() else { return Ok(()) };
        if pv.metadata.uid.as_deref() != Some(uid) || !self.should_delete(&pv) {
            return Ok(());
        }
        let handle = pv.spec.as_ref().and_then(|s| s.csi.as_ref()).map(|c| c.volume_handle.clone()).unwrap_or_default();
        ctx.note(format!("csi/{}", self.driver.name()), CsiCall::DeleteVolume.name(), format!("{handle} ({name})"));
        match self.driver.delete_volume(ctx.cloud, &handle) {
            Err(e) => {
                ctx.event(&object, "Warning", "VolumeFailedDelete", e.to_string());
                return Err(ApiError::bad_request(e.to_string()));
            }
            Ok(Some(dir)) => {
                // The host-path volume's directory goes from the node its topology names (with
                // `--node-deployment` that node's provisioner handles it; while the node is
                // down nobody does: retried later).
                let node = pv
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_affinity.as_ref())
                    .and_then(|a| a.required.as_ref())
                    .and_then(|r| r.node_selector_terms.iter().flat_map(|t| t.match_expressions.iter().flatten()).find(|e| e.key == self.driver.topology_key()))
                    .and_then(|e| e.values.as_ref().and_then(|v| v.first().cloned()))
                    .unwrap_or_default();
                if let Err(e) = ctx.node_fs(&node, kubesim_runtime::NodeFsOp::RemoveAll(dir)) {
                    return Err(ApiError::bad_request(e));
                }
            }
            Ok(None) => {}
        }
        let updated = patch_meta(ctx, &object, |m| {
            if let Some(f) = m.finalizers.as_mut() {
                f.retain(|x| x != PROVISIONER_FINALIZER);
                if f.is_empty() {
                    m.finalizers = None;
                }
            }
        })?;
        self.volumes.put(updated);
        crate::common::delete_provisioned_volume(ctx, &object, name)
    }
}

impl Reconciler for CsiProvisioner {
    fn name(&self) -> &'static str {
        actor(self.driver)
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "persistentvolumeclaims")) => claims,
        Informer::all(("", "persistentvolumes")) => volumes,
        Informer::all(("storage.k8s.io", "storageclasses")) => classes,
        Informer::all(("", "nodes")) => nodes,
        Informer::all(("storage.k8s.io", "csinodes")) => csinodes,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        // `<start unix ms>-<number>-<driver>` (the provisioner's identity).
        let start = kubesim_api::time::EPOCH_UNIX_SECONDS as u64 * 1000 + ctx.now;
        let number = u64::from_str_radix(&sha256_hex(self.driver.name())[..4], 16).unwrap_or(0) % 10_000;
        self.identity = format!("{start}-{number}-{}", self.driver.name());
        let keys: Vec<Key> = self.claims.iter().map(|o| key_of(o)).chain(self.volumes.iter().map(|o| key_of(o))).collect();
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        if change.event.event_type == kubesim_store::EventType::Deleted {
            return;
        }
        match change.event.resource {
            ("", "persistentvolumeclaims") | ("", "persistentvolumes") => self.queue.add(key_of(&change.event.object), ctx),
            ("storage.k8s.io", "storageclasses") => {
                let keys: Vec<Key> = self.claims.iter().map(|o| key_of(o)).collect();
                for key in keys {
                    self.queue.add(key, ctx);
                }
            }
            _ => {}
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let result = if key.0.is_empty() { self.sync_volume(&key.1, ctx) } else { self.sync_claim(key, ctx) };
        result.map(|_| Action::AwaitChange)
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let Some(op) = self.in_flight.remove(&token) else { return };
        let (key, result) = match op {
            Op::Provision { key, uid } => {
                let result = self.provision(&key, &uid, ctx);
                (key, result)
            }
            Op::Delete { name, uid } => {
                let result = self.delete(&name, &uid, ctx);
                ((String::new(), name), result)
            }
        };
        if result.is_err() {
            // The lib retries with exponential backoff.
            self.queue.add_rate_limited(key, ctx);
        }
    }
}
