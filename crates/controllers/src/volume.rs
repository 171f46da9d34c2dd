//! The persistent-volume binder (pkg/controller/volume/persistentvolume/pv_controller.go,
//! release-1.34; events from `persistentvolume-controller`): binds claims to the best matching
//! volume (`findBestMatchForClaim`: access-mode sets closest to the claim's first, then
//! `FindMatchingVolume`), hands claims of a provisioning class to their (external) provisioner
//! — `volume.kubernetes.io/storage-provisioner` plus the `ExternalProvisioning` event — and for
//! WaitForFirstConsumer classes only once the scheduler has written
//! `volume.kubernetes.io/selected-node`; completes the binding of volumes pre-bound by the
//! provisioner or the scheduler; marks volumes Available / Bound / Released / Failed and
//! reclaims released ones (Retain keeps them; Delete is left to the external provisioner that
//! created the volume; the in-tree hostPath deleter only deletes under /tmp).
//!
//! Claims and volumes are re-synced every 15 s (`--pvclaimbinder-sync-period`), which repeats
//! the waiting events as upstream does. Deviations: PersistentVolume(Claim) and StorageClass
//! are JSON-kept (decoded per sync); no in-tree provisioners, recycler or CSI migration;
//! binding operations run inline instead of on the operation executor.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimStatus, PersistentVolumeStatus};
use kubesim_api::k8s_openapi::api::storage::v1::StorageClass;
use kubesim_api::object::kind_info;
use kubesim_api::storage::{
    bind_volume_to_claim, claim_class, find_matching_volume, is_delay_binding_mode, is_volume_bound_to_claim, volume_capacity, ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER,
};
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

pub use kubesim_api::storage::DEFAULT_CLASS_ANNOTATION;
/// `volume.kubernetes.io/selected-node`.
pub const SELECTED_NODE_ANNOTATION: &str = ANN_SELECTED_NODE;
/// Modelled processing latency.
pub const PV_LATENCY_MS: Millis = 10;
/// `--pvclaimbinder-sync-period` (15 s).
pub const SYNC_PERIOD_MS: Millis = 15_000;
const TOKEN_RESYNC: u64 = 2;

/// `findBestMatchForClaim` over the volumes (the index: volumes grouped by access-mode set,
/// sets that contain the claim's modes tried smallest first).
pub fn find_best_match_for_claim<'a>(claim: &PersistentVolumeClaim, volumes: &'a [PersistentVolume], delay_binding: bool) -> Option<&'a PersistentVolume> {
    let modes: Vec<String> = claim.spec.as_ref().and_then(|s| s.access_modes.clone()).unwrap_or_default();
    let mut groups: BTreeMap<(usize, Vec<String>), Vec<&PersistentVolume>> = BTreeMap::new();
    for pv in volumes {
        let mut pv_modes = pv.spec.as_ref().and_then(|s| s.access_modes.clone()).unwrap_or_default();
        kubesim_api::sort::sort(&mut pv_modes);
        pv_modes.dedup();
        if modes.iter().all(|m| pv_modes.contains(m)) {
            groups.entry((pv_modes.len(), pv_modes)).or_default().push(pv);
        }
    }
    groups.into_values().find_map(|candidates| find_matching_volume(claim, &candidates, None, &[], delay_binding))
}

fn annotation<'a>(meta: &'a kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str) -> Option<&'a String> {
    meta.annotations.as_ref().and_then(|a| a.get(key))
}

fn phase_of(pv: &PersistentVolume) -> &str {
    pv.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending")
}

/// The persistent-volume binder.
#[derive(Clone, Debug)]
pub struct PersistentVolumeController {
    volumes: Cache,
    claims: Cache,
    classes: Cache,
    queue: WorkQueue,
}

impl Default for PersistentVolumeController {
    fn default() -> Self {
        PersistentVolumeController::new()
    }
}

impl PersistentVolumeController {
    /// A controller with empty caches.
    pub fn new() -> PersistentVolumeController {
        PersistentVolumeController { volumes: Cache::default(), claims: Cache::default(), classes: Cache::default(), queue: WorkQueue::new(PV_LATENCY_MS) }
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

    fn update_volume_phase(&mut self, ctx: &mut Ctx, pv: &PersistentVolume, phase: &str) -> Result<PersistentVolume, ApiError> {
        if phase_of(pv) == phase && pv.status.is_some() {
            return Ok(pv.clone());
        }
        let mut v = pv.clone();
        let status = v.status.get_or_insert_with(PersistentVolumeStatus::default);
        status.phase = Some(phase.into());
        status.last_phase_transition_time = Some(time_at(ctx.now));
        let updated = ctx.update_status(encode(&v, "v1", "PersistentVolume"))?;
        self.volumes.put(updated.clone());
        Ok(decode(&updated).unwrap_or(v))
    }

    /// `bind`: the volume's claimRef and phase, then the claim's volumeName, annotations and
    /// status.
    fn bind(&mut self, ctx: &mut Ctx, claim: &PersistentVolumeClaim, pv: &PersistentVolume) -> Result<(), ApiError> {
        // bindVolumeToClaim.
        let (volume, dirty) = bind_volume_to_claim(pv, claim);
        let volume = if dirty {
            let updated = ctx.update(encode(&volume, "v1", "PersistentVolume"))?;
            self.volumes.put(updated.clone());
            decode::<PersistentVolume>(&updated).unwrap_or(volume)
        } else {
            volume
        };
        let volume = self.update_volume_phase(ctx, &volume, "Bound")?;
        // bindClaimToVolume.
        let mut c = claim.clone();
        let volume_name = volume.metadata.name.clone();
        let should_bind = c.spec.as_ref().and_then(|s| s.volume_name.clone()) != volume_name;
        if should_bind {
            c.spec.get_or_insert_with(Default::default).volume_name = volume_name;
        }
        let annotations = c.metadata.annotations.get_or_insert_with(BTreeMap::new);
        if should_bind {
            annotations.entry(ANN_BOUND_BY_CONTROLLER.into()).or_insert_with(|| "yes".into());
        }
        annotations.entry(ANN_BIND_COMPLETED.into()).or_insert_with(|| "yes".into());
        let mut c = if &c != claim {
            let updated = ctx.update(encode(&c, "v1", "PersistentVolumeClaim"))?;
            self.claims.put(updated.clone());
            decode(&updated).unwrap_or(c)
        } else {
            c
        };
        // updateClaimStatus(Bound, volume).
        let vspec = volume.spec.clone().unwrap_or_default();
        let status = c.status.get_or_insert_with(PersistentVolumeClaimStatus::default);
        if status.phase.as_deref() != Some("Bound") || status.capacity.is_none() {
            status.phase = Some("Bound".into());
            status.access_modes = vspec.access_modes.clone();
            status.capacity = vspec.capacity.clone();
            let updated = ctx.update_status(encode(&c, "v1", "PersistentVolumeClaim"))?;
            self.claims.put(updated);
        }
        Ok(())
    }

    fn set_claim_pending(&mut self, ctx: &mut Ctx, claim: &PersistentVolumeClaim) -> Result<(), ApiError> {
        if claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending") {
            return Ok(());
        }
        let mut c = claim.clone();
        c.status.get_or_insert_with(Default::default).phase = Some("Pending".into());
        let updated = ctx.update_status(encode(&c, "v1", "PersistentVolumeClaim"))?;
        self.claims.put(updated);
        Ok(())
    }

    fn claim_lost(&mut self, ctx: &mut Ctx, claim: &PersistentVolumeClaim, object: &kubesim_api::Object, reason: &str, message: &str) -> Result<(), ApiError> {
        if claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost") {
            return Ok(());
        }
        let mut c = claim.clone();
        c.status.get_or_insert_with(Default::default).phase = Some("Lost".into());
        let updated = ctx.update_status(encode(&c, "v1", "PersistentVolumeClaim"))?;
        self.claims.put(updated);
        ctx.event(object, "Warning", reason, message.into());
        Ok(())
    }

    /// `findNonScheduledPodsByPVC`: names of pods using the claim that are not scheduled yet.
    fn unscheduled_pods(ctx: &Ctx, claim: &PersistentVolumeClaim) -> Vec<String> {
        let ns = claim.metadata.namespace.clone().unwrap_or_default();
        let name = claim.metadata.name.clone().unwrap_or_default();
        ctx.api
            .store()
            .list(("", "pods"), Some(&ns))
            .filter_map(|o| o.as_pod())
            .filter(|p| pod_node(p).is_empty() && !is_pod_terminal(p))
            .filter(|p| kubesim_api::pod::claim_names(p).contains(&name))
            .filter_map(|p| p.metadata.name.clone())
            .collect()
    }

    fn sync_claim(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.claims.get(key).cloned() else { return Ok(()) };
        let Some(claim) = decode::<PersistentVolumeClaim>(&object) else { return Ok(()) };
        if annotation(&claim.metadata, ANN_BIND_COMPLETED).is_some() {
            return self.sync_bound_claim(ctx, &claim, &object);
        }
        let volume_name = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty());
        let volumes = self.all_volumes();
        if let Some(v) = volume_name {
            // The user asked for a particular volume.
            let Some(pv) = volumes.iter().find(|p| p.metadata.name.as_deref() == Some(v.as_str())) else {
                return self.set_claim_pending(ctx, &claim);
            };
            match pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) {
                None => {
                    if let Some(reason) = check_volume_satisfy_claim(pv, &claim) {
                        ctx.event(&object, "Warning", "VolumeMismatch", format!("Cannot bind to requested volume {v:?}: {reason}"));
                        return self.set_claim_pending(ctx, &claim);
                    }
                    return self.bind(ctx, &claim, pv);
                }
                Some(_) if is_volume_bound_to_claim(pv, &claim) => return self.bind(ctx, &claim, pv),
                Some(_) => {
                    ctx.event(&object, "Warning", "FailedBinding", format!("volume {v:?} already bound to a different claim."));
                    return self.set_claim_pending(ctx, &claim);
                }
            }
        }
        // syncUnboundClaim with no volumeName.
        let class_name = claim_class(&claim);
        let class = (!class_name.is_empty()).then(|| self.class(&class_name)).flatten();
        let delay = match is_delay_binding_mode(&claim, class.as_ref()) {
            Ok(d) => d,
            Err(e) => return Err(ApiError::bad_request(e)),
        };
        if let Some(pv) = find_best_match_for_claim(&claim, &volumes, delay) {
            let pv = pv.clone();
            return self.bind(ctx, &claim, &pv);
        }
        // Retroactive default StorageClass for claims created before one existed.
        if claim.spec.as_ref().and_then(|s| s.storage_class_name.as_ref()).is_none() {
            if let Some(default) = self.default_class() {
                let mut c = claim.clone();
                c.spec.get_or_insert_with(Default::default).storage_class_name = default.metadata.name.clone();
                let updated = ctx.update(encode(&c, "v1", "PersistentVolumeClaim"))?;
                self.claims.put(updated);
                return Ok(());
            }
        }
        if delay && annotation(&claim.metadata, ANN_SELECTED_NODE).is_none() {
            // emitEventForUnboundDelayBindingClaim.
            let pods = Self::unscheduled_pods(ctx, &claim);
            let (reason, message) = match pods.len() {
                0 => ("WaitForFirstConsumer", "waiting for first consumer to be created before binding".to_string()),
                1 => ("WaitForPodScheduled", format!("waiting for pod {} to be scheduled", pods[0])),
                _ => ("WaitForPodScheduled", format!("waiting for pods {} to be scheduled", pods.join(","))),
            };
            ctx.event(&object, "Normal", reason, message);
            return Ok(());
        }
        if !class_name.is_empty() {
            return self.provision_claim(ctx, &claim, &object, &class_name, class);
        }
        ctx.event(&object, "Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set".into());
        self.set_claim_pending(ctx, &claim)
    }

    /// `provisionClaimOperation` for external provisioners: annotate the claim with the
    /// provisioner and wait for it.
    fn provision_claim(
        &mut self,
        ctx: &mut Ctx,
        claim: &PersistentVolumeClaim,
        object: &kubesim_api::Object,
        class_name: &str,
        class: Option<StorageClass>,
    ) -> Result<(), ApiError> {
        let Some(class) = class else {
            ctx.event(object, "Warning", "ProvisioningFailed", format!("storageclass.storage.k8s.io {class_name:?} not found"));
            return self.set_claim_pending(ctx, claim);
        };
        if class.provisioner.starts_with("kubernetes.io/") {
            // findProvisionablePlugin: kubesim has no in-tree provisioners.
            ctx.event(object, "Warning", "ProvisioningFailed", format!("no volume plugin matched name: {}", class.provisioner));
            return self.set_claim_pending(ctx, claim);
        }
        // setClaimProvisioner.
        let mut object = object.clone();
        let current = (
            annotation(&claim.metadata, ANN_STORAGE_PROVISIONER).map(String::as_str),
            annotation(&claim.metadata, ANN_BETA_STORAGE_PROVISIONER).map(String::as_str),
        );
        if current != (Some(class.provisioner.as_str()), Some(class.provisioner.as_str())) {
            let mut c = claim.clone();
            let a = c.metadata.annotations.get_or_insert_with(BTreeMap::new);
            a.insert(ANN_BETA_STORAGE_PROVISIONER.into(), class.provisioner.clone());
            a.insert(ANN_STORAGE_PROVISIONER.into(), class.provisioner.clone());
            let updated = ctx.update(encode(&c, "v1", "PersistentVolumeClaim"))?;
            self.claims.put(updated.clone());
            object = (*updated).clone();
        }
        ctx.event(
            &object,
            "Normal",
            "ExternalProvisioning",
            format!(
                "Waiting for a volume to be created either by the external provisioner '{}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
                class.provisioner
            ),
        );
        Ok(())
    }

    /// `syncBoundClaim`.
    fn sync_bound_claim(&mut self, ctx: &mut Ctx, claim: &PersistentVolumeClaim, object: &kubesim_api::Object) -> Result<(), ApiError> {
        let Some(v) = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty()) else {
            return self.claim_lost(ctx, claim, object, "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!");
        };
        let pv = self.volumes.get_named("", &v).and_then(|o| decode::<PersistentVolume>(o));
        let Some(pv) = pv else {
            if ctx.api.lookup(("", "persistentvolumes"), "", &v).is_some() {
                return Ok(()); // not in the cache yet
            }
            return self.claim_lost(ctx, claim, object, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
        };
        match pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) {
            None => self.bind(ctx, claim, &pv),
            Some(r) if r.uid == claim.metadata.uid => self.bind(ctx, claim, &pv),
            Some(_) => self.claim_lost(ctx, claim, object, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly"),
        }
    }

    fn sync_volume(&mut self, name: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.volumes.get_named("", name).cloned() else { return Ok(()) };
        let Some(pv) = decode::<PersistentVolume>(&object) else { return Ok(()) };
        let Some(claim_ref) = pv.spec.as_ref().and_then(|s| s.claim_ref.clone()) else {
            // Unbound: Available.
            self.update_volume_phase(ctx, &pv, "Available")?;
            return Ok(());
        };
        if claim_ref.uid.as_deref().unwrap_or("").is_empty() {
            // Pre-bound by the user or a provisioner; the claim sync binds it.
            self.update_volume_phase(ctx, &pv, "Available")?;
            let key = (claim_ref.namespace.clone().unwrap_or_default(), claim_ref.name.clone().unwrap_or_default());
            if self.claims.get(&key).is_some() {
                self.queue.add(key, ctx);
            }
            return Ok(());
        }
        let key = (claim_ref.namespace.clone().unwrap_or_default(), claim_ref.name.clone().unwrap_or_default());
        let claim = self.claims.get(&key).and_then(|o| decode::<PersistentVolumeClaim>(o)).filter(|c| c.metadata.uid == claim_ref.uid).or_else(|| {
            // Double-check with the API server before releasing.
            ctx.api
                .lookup(("", "persistentvolumeclaims"), &key.0, &key.1)
                .and_then(|o| o.decode::<PersistentVolumeClaim>())
                .filter(|c| c.metadata.uid == claim_ref.uid)
        });
        match claim {
            None => {
                // The claim is gone: Released, then reclaim.
                let pv = if matches!(phase_of(&pv), "Released" | "Failed") { pv } else { self.update_volume_phase(ctx, &pv, "Released")? };
                self.reclaim_volume(ctx, &pv, &object)
            }
            Some(c) => {
                let bound_here = c.spec.as_ref().and_then(|s| s.volume_name.as_deref()) == pv.metadata.name.as_deref();
                if c.spec.as_ref().and_then(|s| s.volume_name.as_deref()).unwrap_or("").is_empty() {
                    // Not bound yet (the scheduler or a provisioner pre-bound the volume).
                    if phase_of(&pv) != "Available" && phase_of(&pv) != "Bound" {
                        self.update_volume_phase(ctx, &pv, "Available")?;
                    }
                    self.queue.add(key, ctx);
                    Ok(())
                } else if bound_here {
                    self.update_volume_phase(ctx, &pv, "Bound")?;
                    Ok(())
                } else if annotation(&pv.metadata, ANN_DYNAMICALLY_PROVISIONED).is_some()
                    && pv.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.as_deref()) == Some("Delete")
                {
                    let pv = if phase_of(&pv) == "Released" { pv } else { self.update_volume_phase(ctx, &pv, "Released")? };
                    self.reclaim_volume(ctx, &pv, &object)
                } else {
                    // unbindVolume: the claim is bound elsewhere.
                    let mut v = pv.clone();
                    let by_controller = annotation(&pv.metadata, ANN_BOUND_BY_CONTROLLER).is_some();
                    if by_controller {
                        v.spec.get_or_insert_with(Default::default).claim_ref = None;
                        if let Some(a) = v.metadata.annotations.as_mut() {
                            a.remove(ANN_BOUND_BY_CONTROLLER);
                        }
                    } else if let Some(r) = v.spec.as_mut().and_then(|s| s.claim_ref.as_mut()) {
                        r.uid = None;
                    }
                    let updated = ctx.update(encode(&v, "v1", "PersistentVolume"))?;
                    self.volumes.put(updated.clone());
                    let v = decode(&updated).unwrap_or(v);
                    self.update_volume_phase(ctx, &v, "Available")?;
                    Ok(())
                }
            }
        }
    }

    /// `reclaimVolume`.
    fn reclaim_volume(&mut self, ctx: &mut Ctx, pv: &PersistentVolume, object: &kubesim_api::Object) -> Result<(), ApiError> {
        let policy = pv.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.clone()).unwrap_or_default();
        match policy.as_str() {
            "Retain" => Ok(()),
            "Delete" => {
                if pv.metadata.deletion_timestamp.is_some() {
                    return Ok(());
                }
                if let Some(provisioner) = annotation(&pv.metadata, ANN_DYNAMICALLY_PROVISIONED) {
                    if !provisioner.starts_with("kubernetes.io/") {
                        return Ok(()); // the external provisioner deletes it
                    }
                }
                // findDeletablePlugin by spec: only hostPath has an in-tree deleter (under /tmp).
                let host_path = pv.spec.as_ref().and_then(|s| s.host_path.as_ref()).map(|h| h.path.clone());
                let error = match host_path {
                    Some(path) if path.starts_with("/tmp/") && path.len() > 5 => {
                        let info = kind_info("v1", "PersistentVolume").expect("served");
                        return match ctx.delete(info, "", pv.metadata.name.as_deref().unwrap_or(""), DeleteOptions::default()) {
                            Ok(_) => Ok(()),
                            Err(e) if e.code == 404 => Ok(()),
                            Err(e) => Err(e),
                        };
                    }
                    Some(path) => format!("host_path deleter only supports /tmp/.+ but received provided {path}"),
                    None => format!(
                        "error getting deleter volume plugin for volume {:?}: no deletable volume plugin matched",
                        pv.metadata.name.as_deref().unwrap_or("")
                    ),
                };
                if phase_of(pv) != "Failed" {
                    self.update_volume_phase(ctx, pv, "Failed")?;
                    ctx.event(object, "Warning", "VolumeFailedDelete", error);
                }
                Ok(())
            }
            "Recycle" => {
                if phase_of(pv) != "Failed" {
                    self.update_volume_phase(ctx, pv, "Failed")?;
                    ctx.event(object, "Warning", "VolumeFailedRecycle", "No recycler plugin found for the volume!".into());
                }
                Ok(())
            }
            _ => {
                if phase_of(pv) != "Failed" {
                    self.update_volume_phase(ctx, pv, "Failed")?;
                    ctx.event(object, "Warning", "VolumeUnknownReclaimPolicy", "Volume has unrecognized PersistentVolumeReclaimPolicy".into());
                }
                Ok(())
            }
        }
    }
}

/// `checkVolumeSatisfyClaim`: why a requested volume cannot serve the claim.
fn check_volume_satisfy_claim(pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> Option<String> {
    if pv.metadata.deletion_timestamp.is_some() {
        return Some(format!("the volume is marked for deletion {:?}", pv.metadata.name.as_deref().unwrap_or("")));
    }
    if volume_capacity(pv) < kubesim_api::storage::claim_request(claim) {
        return Some("requested PV is too small".into());
    }
    if kubesim_api::storage::volume_class(pv) != claim_class(claim) {
        return Some("storageClassName does not match".into());
    }
    if kubesim_api::storage::volume_mode_mismatches(claim, pv) {
        return Some("incompatible volumeMode".into());
    }
    if !kubesim_api::storage::check_access_modes(claim, pv) {
        return Some("incompatible accessMode".into());
    }
    None
}

impl Reconciler for PersistentVolumeController {
    fn name(&self) -> &'static str {
        "persistentvolume-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "persistentvolumes")) => volumes,
        Informer::all(("", "persistentvolumeclaims")) => claims,
        Informer::all(("storage.k8s.io", "storageclasses")) => classes,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        self.resync(ctx);
        ctx.after_periodic(SYNC_PERIOD_MS, TOKEN_RESYNC);
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("", "persistentvolumes") => {
                self.queue.add(key_of(&event.object), ctx);
                // A claim the volume is (pre-)bound to.
                if let Some(r) = decode::<PersistentVolume>(&event.object).and_then(|v| v.spec).and_then(|s| s.claim_ref) {
                    let key = (r.namespace.unwrap_or_default(), r.name.unwrap_or_default());
                    if self.claims.get(&key).is_some() {
                        self.queue.add(key, ctx);
                    }
                }
            }
            ("", "persistentvolumeclaims") => {
                if event.event_type == kubesim_store::EventType::Deleted {
                    // Its volume may be released.
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
            _ => {}
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let result = if key.0.is_empty() { self.sync_volume(&key.1, ctx) } else { self.sync_claim(key, ctx) };
        result.map(|_| Action::AwaitChange)
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if token == TOKEN_RESYNC {
            self.resync(ctx);
            ctx.after_periodic(SYNC_PERIOD_MS, TOKEN_RESYNC);
        }
    }
}

impl PersistentVolumeController {
    /// `resync`: every claim and volume again.
    fn resync(&mut self, ctx: &mut Ctx) {
        let keys: Vec<Key> = self.claims.iter().map(|o| key_of(o)).chain(self.volumes.iter().map(|o| key_of(o))).collect();
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
}
