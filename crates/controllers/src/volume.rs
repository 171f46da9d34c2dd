//! The persistent-volume binder (pkg/controller/volume/persistentvolume) with the external
//! provisioner modelled inline: binds claims to the best matching PV (`FindMatchingVolume`),
//! provisions `pvc-<claim uid>` volumes for claims whose StorageClass has a provisioner,
//! releases / deletes volumes whose claims are gone.
//!
//! Deviations: PersistentVolume(Claim) and StorageClass are JSON-kept (decoded per sync). The
//! DefaultStorageClass admission plugin is applied here (a claim without storageClassName uses
//! the default class). For WaitForFirstConsumer classes the scheduler's selected-node
//! annotation is emulated: binding/provisioning starts once a pod using the claim is bound to a
//! node (which then becomes `volume.kubernetes.io/selected-node`). The provisioner's events are
//! recorded by this controller.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{
    CSIPersistentVolumeSource, HostPathVolumeSource, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, ObjectReference, PersistentVolume,
    PersistentVolumeClaim, PersistentVolumeClaimStatus, PersistentVolumeSpec, PersistentVolumeStatus, VolumeNodeAffinity,
};
use kubesim_api::k8s_openapi::api::storage::v1::StorageClass;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::kind_info;
use kubesim_api::quantity::parse_value;
use kubesim_api::selector::Selector;
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

/// `storageclass.kubernetes.io/is-default-class`.
pub const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
/// `volume.kubernetes.io/selected-node`.
pub const SELECTED_NODE_ANNOTATION: &str = "volume.kubernetes.io/selected-node";
/// Modelled processing latency.
pub const PV_LATENCY_MS: Millis = 10;
/// Modelled provisioning time of a new volume.
pub const PROVISION_MS: Millis = 1000;

fn storage(q: Option<&BTreeMap<String, kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity>>) -> i128 {
    q.and_then(|m| m.get("storage")).and_then(|q| parse_value(&q.0).ok()).unwrap_or(0)
}

fn claim_class(claim: &PersistentVolumeClaim) -> Option<String> {
    claim.spec.as_ref().and_then(|s| s.storage_class_name.clone())
}

/// `FindMatchingVolume` (PV-controller path): the smallest Available volume that satisfies the
/// claim, access-mode sets closest to the claim's first; a volume pre-bound to the claim wins.
pub fn find_matching_volume<'a>(claim: &PersistentVolumeClaim, volumes: &'a [PersistentVolume], delayed_binding: bool) -> Option<&'a PersistentVolume> {
    let spec = claim.spec.clone().unwrap_or_default();
    let request = storage(spec.resources.as_ref().and_then(|r| r.requests.as_ref()));
    let modes: Vec<String> = spec.access_modes.clone().unwrap_or_default();
    let class = spec.storage_class_name.clone().unwrap_or_default();
    let claim_mode = spec.volume_mode.clone().unwrap_or_else(|| "Filesystem".into());
    let selector = spec.selector.as_ref().map(Selector::from_label_selector);
    let claim_uid = claim.metadata.uid.clone().unwrap_or_default();
    let claim_ns = claim.metadata.namespace.clone().unwrap_or_default();
    let claim_name = claim.metadata.name.clone().unwrap_or_default();
    // Group by access-mode set, ascending size, supersets of the claim's modes only.
    let mut groups: BTreeMap<(usize, Vec<String>), Vec<&PersistentVolume>> = BTreeMap::new();
    for pv in volumes {
        let mut pv_modes = pv.spec.as_ref().and_then(|s| s.access_modes.clone()).unwrap_or_default();
        kubesim_api::sort::sort(&mut pv_modes);
        pv_modes.dedup();
        if modes.iter().all(|m| pv_modes.contains(m)) {
            groups.entry((pv_modes.len(), pv_modes)).or_default().push(pv);
        }
    }
    for (_, candidates) in groups {
        let mut best: Option<&PersistentVolume> = None;
        for pv in candidates {
            let pv_spec = pv.spec.clone().unwrap_or_default();
            if pv_spec.volume_mode.clone().unwrap_or_else(|| "Filesystem".into()) != claim_mode || pv.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let capacity = storage(pv_spec.capacity.as_ref());
            if let Some(r) = &pv_spec.claim_ref {
                let uid_ok = r.uid.as_deref().is_none_or(|u| u.is_empty() || u == claim_uid);
                if r.namespace.as_deref() == Some(claim_ns.as_str()) && r.name.as_deref() == Some(claim_name.as_str()) && uid_ok && capacity >= request {
                    return Some(pv);
                }
                continue;
            }
            if delayed_binding {
                continue;
            }
            let phase = pv.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
            if phase != "Available" {
                continue;
            }
            if selector.as_ref().is_some_and(|s| !s.matches(pv.metadata.labels.as_ref())) {
                continue;
            }
            if pv_spec.storage_class_name.clone().unwrap_or_default() != class {
                continue;
            }
            if capacity >= request && best.is_none_or(|b| capacity < storage(b.spec.as_ref().and_then(|s| s.capacity.as_ref()))) {
                best = Some(pv);
            }
        }
        if best.is_some() {
            return best;
        }
    }
    None
}

/// The persistent-volume binder.
#[derive(Clone, Debug)]
pub struct PersistentVolumeController {
    volumes: Cache,
    claims: Cache,
    classes: Cache,
    queue: WorkQueue,
    provisioning: BTreeMap<u64, Key>,
    next_token: u64,
}

impl Default for PersistentVolumeController {
    fn default() -> Self {
        PersistentVolumeController::new()
    }
}

impl PersistentVolumeController {
    /// A controller with empty caches.
    pub fn new() -> PersistentVolumeController {
        PersistentVolumeController {
            volumes: Cache::default(),
            claims: Cache::default(),
            classes: Cache::default(),
            queue: WorkQueue::new(PV_LATENCY_MS),
            provisioning: BTreeMap::new(),
            next_token: 1 << 20,
        }
    }

    fn class(&self, name: &str) -> Option<StorageClass> {
        self.classes.get_named("", name).and_then(|o| decode(o))
    }

    fn default_class(&self) -> Option<StorageClass> {
        self.classes
            .iter()
            .filter_map(|o| decode::<StorageClass>(o))
            .find(|c| c.metadata.annotations.as_ref().and_then(|a| a.get(DEFAULT_CLASS_ANNOTATION)).map(String::as_str) == Some("true"))
    }

    fn all_volumes(&self) -> Vec<PersistentVolume> {
        self.volumes.iter().filter_map(|o| decode(o)).collect()
    }

    /// The node of a bound pod using the claim (the emulated selected-node), read from the
    /// API server (only WaitForFirstConsumer claims need it).
    fn consumer_node(ctx: &Ctx, claim: &PersistentVolumeClaim) -> Option<String> {
        let ns = claim.metadata.namespace.clone().unwrap_or_default();
        let name = claim.metadata.name.clone().unwrap_or_default();
        let node = ctx
            .api
            .store()
            .list(("", "pods"), Some(&ns))
            .filter_map(|o| o.as_pod())
            .filter(|p| {
                p.spec
                    .as_ref()
                    .and_then(|s| s.volumes.as_ref())
                    .into_iter()
                    .flatten()
                    .any(|v| v.persistent_volume_claim.as_ref().is_some_and(|c| c.claim_name == name))
            })
            .map(|p| pod_node(p).to_string())
            .find(|n| !n.is_empty());
        node
    }

    fn bind(&mut self, ctx: &mut Ctx, claim: &PersistentVolumeClaim, pv: &PersistentVolume) -> Result<(), ApiError> {
        let by_controller = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).is_none();
        // Volume side.
        let mut volume = pv.clone();
        let spec = volume.spec.get_or_insert_with(Default::default);
        spec.claim_ref = Some(ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("PersistentVolumeClaim".into()),
            namespace: claim.metadata.namespace.clone(),
            name: claim.metadata.name.clone(),
            uid: claim.metadata.uid.clone(),
            resource_version: claim.metadata.resource_version.clone(),
            field_path: None,
        });
        if by_controller {
            volume.metadata.annotations.get_or_insert_with(BTreeMap::new).insert("pv.kubernetes.io/bound-by-controller".into(), "yes".into());
        }
        let volume_changed = Some(&volume) != Some(pv);
        let mut volume = if volume_changed {
            let updated = ctx.update(encode(&volume, "v1", "PersistentVolume"))?;
            self.volumes.put(updated.clone());
            decode::<PersistentVolume>(&updated).unwrap_or(volume)
        } else {
            volume
        };
        if volume.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Bound") {
            volume.status =
                Some(PersistentVolumeStatus { phase: Some("Bound".into()), last_phase_transition_time: Some(time_at(ctx.now)), ..Default::default() });
            let updated = ctx.update_status(encode(&volume, "v1", "PersistentVolume"))?;
            self.volumes.put(updated);
        }
        // Claim side.
        let mut c = claim.clone();
        c.spec.get_or_insert_with(Default::default).volume_name = volume.metadata.name.clone();
        let annotations = c.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert("pv.kubernetes.io/bind-completed".into(), "yes".into());
        annotations.insert("pv.kubernetes.io/bound-by-controller".into(), "yes".into());
        let updated = ctx.update(encode(&c, "v1", "PersistentVolumeClaim"))?;
        let mut c: PersistentVolumeClaim = decode(&updated).unwrap_or(c);
        let vspec = volume.spec.clone().unwrap_or_default();
        c.status = Some(PersistentVolumeClaimStatus {
            phase: Some("Bound".into()),
            access_modes: vspec.access_modes.clone(),
            capacity: vspec.capacity.clone(),
            ..Default::default()
        });
        let updated = ctx.update_status(encode(&c, "v1", "PersistentVolumeClaim"))?;
        self.claims.put(updated);
        Ok(())
    }

    fn sync_claim(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.claims.get(key).cloned() else { return Ok(()) };
        let Some(mut claim) = decode::<PersistentVolumeClaim>(&object) else { return Ok(()) };
        if claim.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let phase = claim.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
        let volume_name = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty());
        if phase == "Bound" {
            // syncBoundClaim: the volume must still exist.
            if let Some(v) = &volume_name {
                if self.volumes.get_named("", v).is_none() && ctx.api.lookup(("", "persistentvolumes"), "", v).is_none() {
                    let mut c = claim.clone();
                    c.status.get_or_insert_with(Default::default).phase = Some("Lost".into());
                    ctx.event(&object, "Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!".into());
                    let updated = ctx.update_status(encode(&c, "v1", "PersistentVolumeClaim"))?;
                    self.claims.put(updated);
                }
            }
            return Ok(());
        }
        // DefaultStorageClass admission, applied late.
        if claim_class(&claim).is_none() {
            if let Some(default) = self.default_class() {
                claim.spec.get_or_insert_with(Default::default).storage_class_name = default.metadata.name.clone();
            }
        }
        let class_name = claim_class(&claim).unwrap_or_default();
        let class = (!class_name.is_empty()).then(|| self.class(&class_name)).flatten();
        let delayed = class.as_ref().and_then(|c| c.volume_binding_mode.as_deref()) == Some("WaitForFirstConsumer");
        let selected_node = claim.metadata.annotations.as_ref().and_then(|a| a.get(SELECTED_NODE_ANNOTATION)).cloned().or_else(|| {
            if delayed {
                Self::consumer_node(ctx, &claim)
            } else {
                None
            }
        });
        let volumes = self.all_volumes();
        if let Some(v) = volume_name {
            // Pre-bound claim: bind once the volume exists.
            if let Some(pv) = volumes.iter().find(|p| p.metadata.name.as_deref() == Some(v.as_str())) {
                let free = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).is_none_or(|r| r.uid == claim.metadata.uid || r.uid.is_none());
                if free {
                    return self.bind(ctx, &claim, pv);
                }
            }
            return Ok(());
        }
        let waiting = delayed && selected_node.is_none();
        if let Some(pv) = find_matching_volume(&claim, &volumes, waiting) {
            let pv = pv.clone();
            return self.bind(ctx, &claim, &pv);
        }
        if waiting {
            ctx.event(&object, "Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding".into());
            return Ok(());
        }
        match class {
            None if class_name.is_empty() => {
                ctx.event(&object, "Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set".into());
                Ok(())
            }
            None => {
                ctx.event(&object, "Warning", "ProvisioningFailed", format!("storageclass.storage.k8s.io {class_name:?} not found"));
                Ok(())
            }
            Some(class) if class.provisioner == "kubernetes.io/no-provisioner" => {
                ctx.event(&object, "Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set".into());
                Ok(())
            }
            Some(class) => {
                // Hand over to the (external) provisioner.
                let annotations = claim.metadata.annotations.clone().unwrap_or_default();
                if annotations.get("volume.kubernetes.io/storage-provisioner") != Some(&class.provisioner)
                    || (selected_node.is_some() && annotations.get(SELECTED_NODE_ANNOTATION) != selected_node.as_ref())
                {
                    let mut c = claim.clone();
                    let a = c.metadata.annotations.get_or_insert_with(BTreeMap::new);
                    a.insert("volume.beta.kubernetes.io/storage-provisioner".into(), class.provisioner.clone());
                    a.insert("volume.kubernetes.io/storage-provisioner".into(), class.provisioner.clone());
                    if let Some(n) = &selected_node {
                        a.insert(SELECTED_NODE_ANNOTATION.into(), n.clone());
                    }
                    let updated = ctx.update(encode(&c, "v1", "PersistentVolumeClaim"))?;
                    self.claims.put(updated.clone());
                    ctx.event(&updated, "Normal", "ExternalProvisioning", format!("Waiting for a volume to be created either by the external provisioner '{}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.", class.provisioner));
                    ctx.event(&updated, "Normal", "Provisioning", format!("External provisioner is provisioning volume for claim \"{}/{}\"", key.0, key.1));
                    let token = self.next_token;
                    self.next_token += 1;
                    self.provisioning.insert(token, key.clone());
                    ctx.after(PROVISION_MS, token);
                }
                Ok(())
            }
        }
    }

    /// The external provisioner: creates the volume pre-bound to the claim.
    fn provision(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.claims.get(key).cloned() else { return Ok(()) };
        let Some(claim) = decode::<PersistentVolumeClaim>(&object) else { return Ok(()) };
        if claim.spec.as_ref().and_then(|s| s.volume_name.as_ref()).is_some() {
            return Ok(());
        }
        let uid = claim.metadata.uid.clone().unwrap_or_default();
        let name = format!("pvc-{uid}");
        if ctx.api.lookup(("", "persistentvolumes"), "", &name).is_some() {
            return Ok(());
        }
        let class_name = claim_class(&claim).or_else(|| self.default_class().and_then(|c| c.metadata.name)).unwrap_or_default();
        let Some(class) = self.class(&class_name) else { return Ok(()) };
        let spec = claim.spec.clone().unwrap_or_default();
        let node = claim.metadata.annotations.as_ref().and_then(|a| a.get(SELECTED_NODE_ANNOTATION)).cloned();
        let local = class.provisioner.contains("local-path") || class.provisioner.contains("hostpath");
        let pv = PersistentVolume {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                annotations: Some(BTreeMap::from([("pv.kubernetes.io/provisioned-by".to_string(), class.provisioner.clone())])),
                finalizers: Some(vec!["kubernetes.io/pv-protection".into()]),
                ..Default::default()
            },
            spec: Some(PersistentVolumeSpec {
                access_modes: spec.access_modes.clone(),
                capacity: spec.resources.as_ref().and_then(|r| r.requests.clone()).map(|r| r.into_iter().filter(|(k, _)| k == "storage").collect()),
                claim_ref: Some(ObjectReference {
                    api_version: Some("v1".into()),
                    kind: Some("PersistentVolumeClaim".into()),
                    namespace: claim.metadata.namespace.clone(),
                    name: claim.metadata.name.clone(),
                    uid: claim.metadata.uid.clone(),
                    resource_version: claim.metadata.resource_version.clone(),
                    field_path: None,
                }),
                persistent_volume_reclaim_policy: Some(class.reclaim_policy.clone().unwrap_or_else(|| "Delete".into())),
                storage_class_name: Some(class_name.clone()),
                volume_mode: Some(spec.volume_mode.clone().unwrap_or_else(|| "Filesystem".into())),
                host_path: local.then(|| HostPathVolumeSource {
                    path: format!("/var/local-path-provisioner/{name}_{}_{}", key.0, key.1),
                    type_: Some("DirectoryOrCreate".into()),
                }),
                csi: (!local).then(|| CSIPersistentVolumeSource { driver: class.provisioner.clone(), volume_handle: name.clone(), ..Default::default() }),
                node_affinity: node.filter(|_| local).map(|n| VolumeNodeAffinity {
                    required: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: Some(vec![NodeSelectorRequirement {
                                key: "kubernetes.io/hostname".into(),
                                operator: "In".into(),
                                values: Some(vec![n]),
                            }]),
                            match_fields: None,
                        }],
                    }),
                }),
                ..Default::default()
            }),
            status: None,
        };
        match ctx.create(encode(&pv, "v1", "PersistentVolume")) {
            Ok(created) => {
                self.volumes.put(created);
                ctx.event(&object, "Normal", "ProvisioningSucceeded", format!("Successfully provisioned volume {name}"));
                self.queue.add(key.clone(), ctx);
                Ok(())
            }
            Err(e) if e.reason == "AlreadyExists" => Ok(()),
            Err(e) => {
                ctx.event(&object, "Warning", "ProvisioningFailed", format!("failed to provision volume with StorageClass {class_name:?}: {}", e.message));
                Err(e)
            }
        }
    }

    fn sync_volume(&mut self, name: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.volumes.get_named("", name).cloned() else { return Ok(()) };
        let Some(pv) = decode::<PersistentVolume>(&object) else { return Ok(()) };
        if pv.metadata.deletion_timestamp.is_some() {
            // pv-protection: release once no claim is bound to it.
            let bound = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).is_some_and(|r| {
                self.claims
                    .get_named(r.namespace.as_deref().unwrap_or(""), r.name.as_deref().unwrap_or(""))
                    .is_some_and(|c| uid_of(c.metadata()) == r.uid.as_deref().unwrap_or(""))
            });
            if !bound && pv.metadata.finalizers.iter().flatten().any(|f| f == "kubernetes.io/pv-protection") {
                let _ = patch_meta(ctx, &object, |m| {
                    if let Some(f) = m.finalizers.as_mut() {
                        f.retain(|x| x != "kubernetes.io/pv-protection");
                        if f.is_empty() {
                            m.finalizers = None;
                        }
                    }
                });
            }
            return Ok(());
        }
        let phase = pv.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_else(|| "Pending".into());
        let claim_ref = pv.spec.as_ref().and_then(|s| s.claim_ref.clone());
        let new_phase = match &claim_ref {
            None => "Available".to_string(),
            Some(r) => {
                let claim = self.claims.get_named(r.namespace.as_deref().unwrap_or(""), r.name.as_deref().unwrap_or("")).cloned();
                match claim {
                    Some(c) if r.uid.as_deref().is_none_or(|u| u.is_empty() || u == uid_of(c.metadata())) => {
                        if phase == "Bound" || phase == "Released" {
                            phase.clone()
                        } else {
                            // Pre-bound volume: the claim sync binds it.
                            let key = key_of(&c);
                            self.queue.add(key, ctx);
                            "Available".to_string()
                        }
                    }
                    _ if r.uid.as_deref().is_none_or(|u| u.is_empty()) => "Available".to_string(),
                    _ => "Released".to_string(),
                }
            }
        };
        if new_phase == "Released" && pv.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.as_deref()) == Some("Delete") {
            let info = kind_info("v1", "PersistentVolume").expect("served");
            let _ = ctx.delete(info, "", name, DeleteOptions::default());
            return Ok(());
        }
        if new_phase != phase {
            let mut v = pv.clone();
            v.status = Some(PersistentVolumeStatus { phase: Some(new_phase), last_phase_transition_time: Some(time_at(ctx.now)), ..Default::default() });
            let updated = ctx.update_status(encode(&v, "v1", "PersistentVolume"))?;
            self.volumes.put(updated);
        }
        Ok(())
    }
}

impl Reconciler for PersistentVolumeController {
    fn name(&self) -> &'static str {
        "persistent-volume-binder"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "persistentvolumes")) => volumes,
        Informer::all(("", "persistentvolumeclaims")) => claims,
        Informer::all(("storage.k8s.io", "storageclasses")) => classes,
        Informer::all(("", "pods")) => none,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let keys: Vec<Key> = self.claims.iter().map(|o| key_of(o)).chain(self.volumes.iter().map(|o| key_of(o))).collect();
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("", "persistentvolumes") => {
                self.queue.add(key_of(&event.object), ctx);
                // Claims waiting for volumes.
                let pending: Vec<Key> = self
                    .claims
                    .iter()
                    .filter(|c| decode::<PersistentVolumeClaim>(c).is_some_and(|c| c.status.and_then(|s| s.phase).as_deref() != Some("Bound")))
                    .map(|c| key_of(c))
                    .collect();
                for key in pending {
                    self.queue.add(key, ctx);
                }
            }
            ("", "persistentvolumeclaims") => {
                if event.event_type == kubesim_store::EventType::Deleted {
                    // Its volume may be released.
                    if let Some(v) = decode::<PersistentVolumeClaim>(&event.object).and_then(|c| c.spec).and_then(|s| s.volume_name) {
                        self.queue.add((String::new(), v), ctx);
                    }
                    let uid = uid_of(event.object.metadata()).to_string();
                    let bound: Vec<Key> = self
                        .volumes
                        .iter()
                        .filter(|v| decode::<PersistentVolume>(v).and_then(|v| v.spec).and_then(|s| s.claim_ref).and_then(|r| r.uid) == Some(uid.clone()))
                        .map(|v| key_of(v))
                        .collect();
                    for key in bound {
                        self.queue.add(key, ctx);
                    }
                    return;
                }
                self.queue.add(key_of(&event.object), ctx);
            }
            ("storage.k8s.io", "storageclasses") => {
                let pending: Vec<Key> = self.claims.iter().map(|c| key_of(c)).collect();
                for key in pending {
                    self.queue.add(key, ctx);
                }
            }
            _ => {
                // A scheduled pod using claims: delayed-binding claims may proceed.
                let Some(pod) = event.object.as_pod() else { return };
                if pod_node(pod).is_empty() || event.event_type == kubesim_store::EventType::Deleted {
                    return;
                }
                let ns = pod.metadata.namespace.clone().unwrap_or_default();
                for v in pod.spec.as_ref().and_then(|s| s.volumes.clone()).unwrap_or_default() {
                    if let Some(c) = v.persistent_volume_claim {
                        self.queue.add((ns.clone(), c.claim_name), ctx);
                    }
                }
            }
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let result = if key.0.is_empty() { self.sync_volume(&key.1, ctx) } else { self.sync_claim(key, ctx) };
        result.map(|_| Action::AwaitChange)
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if let Some(key) = self.provisioning.remove(&token) {
            let _ = self.provision(&key, ctx);
        }
    }
}
