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
//! the waiting events as upstream does. `pv_sync_tests` runs upstream's sync tables (binder,
//! provision and delete tests) against this controller. Deviations: PersistentVolume(Claim)
//! and StorageClass are JSON-kept (decoded per sync); no in-tree provisioners, recycler or CSI
//! migration; binding, provisioning and deleting run inline instead of on the operation
//! executor; a volume pre-bound to a claim enqueues the claim at once; a bound claim whose
//! volume the informer has not delivered yet waits instead of being marked Lost.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimStatus, PersistentVolumeStatus};
use kubesim_api::k8s_openapi::api::storage::v1::StorageClass;
use kubesim_api::object::kind_info;
use kubesim_api::storage::{
    bind_volume_to_claim, claim_class, find_matching_volume, is_delay_binding_mode, is_volume_bound_to_claim, volume_capacity, ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_DYNAMICALLY_PROVISIONED, ANN_MIGRATED_TO, ANN_PRE_RESIZE_CAPACITY, ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
};
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

use kubesim_api::storage::BETA_DEFAULT_CLASS_ANNOTATION;
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

    /// Fills the caches as the informers' first LIST would (the claims given: a test may hold
    /// back some or cache an older version).
    #[cfg(test)]
    pub(crate) fn load_caches(&mut self, store: &kubesim_store::Store, claims: Vec<std::sync::Arc<kubesim_api::Object>>) {
        self.volumes.fill(store, ("", "persistentvolumes"));
        self.classes.fill(store, ("storage.k8s.io", "storageclasses"));
        for c in claims {
            self.claims.put(c);
        }
    }

    fn class(&self, name: &str) -> Option<StorageClass> {
        self.classes.get_named("", name).and_then(|o| decode(o))
    }

    /// `GetDefaultClass`: of the classes marked default, the newest (then by name).
    fn default_class(&self) -> Option<StorageClass> {
        let mut defaults: Vec<StorageClass> = self
            .classes
            .iter()
            .filter_map(|o| decode::<StorageClass>(o))
            .filter(|c| {
                let a = c.metadata.annotations.as_ref();
                a.and_then(|a| a.get(DEFAULT_CLASS_ANNOTATION)).map(String::as_str) == Some("true")
                    || a.and_then(|a| a.get(BETA_DEFAULT_CLASS_ANNOTATION)).map(String::as_str) == Some("true")
            })
            .collect();
        kubesim_api::sort::sort_by(&mut defaults, |a, b| {
            let created = |c: &StorageClass| c.metadata.creation_timestamp.clone().map(|t| t.0);
            created(b).cmp(&created(a)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
        });
        defaults.into_iter().next()
    }

    fn all_volumes(&self) -> Vec<PersistentVolume> {
        self.volumes.iter().filter_map(|o| decode(o)).collect()
    }

    /// `updateVolumePhase`: saves the phase (and clears or sets `status.message`) unless the
    /// phase is already set.
    fn update_volume_phase(&mut self, ctx: &mut Ctx, pv: &PersistentVolume, phase: &str, message: &str) -> Result<PersistentVolume, ApiError> {
        if pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some(phase) {
            return Ok(pv.clone());
        }
        let mut v = pv.clone();
        let status = v.status.get_or_insert_with(PersistentVolumeStatus::default);
        status.phase = Some(phase.into());
        status.message = (!message.is_empty()).then(|| message.to_string());
        status.last_phase_transition_time = Some(time_at(ctx.now));
        let updated = ctx.update_status(encode(&v, "v1", "PersistentVolume"))?;
        self.volumes.put(updated.clone());
        Ok(decode(&updated).unwrap_or(v))
    }

    /// `updateVolumePhaseWithEvent`: the phase and, only when it changed, the event.
    fn update_volume_phase_with_event(
        &mut self,
        ctx: &mut Ctx,
        pv: &PersistentVolume,
        phase: &str,
        type_: &str,
        reason: &str,
        message: &str,
    ) -> Result<(), ApiError> {
        if pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some(phase) {
            return Ok(());
        }
        let updated = self.update_volume_phase(ctx, pv, phase, message)?;
        ctx.event(&encode(&updated, "v1", "PersistentVolume"), type_, reason, message.into());
        Ok(())
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
            pv.clone()
        };
        let volume = self.update_volume_phase(ctx, &volume, "Bound", "")?;
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
        let c = if &c != claim {
            let updated = ctx.update(encode(&c, "v1", "PersistentVolumeClaim"))?;
            self.claims.put(updated.clone());
            decode(&updated).unwrap_or(c)
        } else {
            c
        };
        self.update_claim_status(ctx, &c, "Bound", Some(&volume))?;
        Ok(())
    }

    /// `updateClaimStatus`: the phase; with a volume, its access modes and (only when the phase
    /// changes) its capacity — or the pre-resize capacity it records; without one, access modes
    /// and capacity are cleared.
    fn update_claim_status(
        &mut self,
        ctx: &mut Ctx,
        claim: &PersistentVolumeClaim,
        phase: &str,
        volume: Option<&PersistentVolume>,
    ) -> Result<PersistentVolumeClaim, ApiError> {
        let mut c = claim.clone();
        let old_phase = claim.status.as_ref().and_then(|s| s.phase.clone());
        let status = c.status.get_or_insert_with(PersistentVolumeClaimStatus::default);
        let mut dirty = false;
        if old_phase.as_deref() != Some(phase) {
            status.phase = Some(phase.into());
            dirty = true;
        }
        match volume {
            None => {
                if status.access_modes.is_some() {
                    status.access_modes = None;
                    dirty = true;
                }
                if status.capacity.is_some() {
                    status.capacity = None;
                    dirty = true;
                }
            }
            Some(volume) => {
                let vspec = volume.spec.clone().unwrap_or_default();
                if status.access_modes != vspec.access_modes {
                    status.access_modes = vspec.access_modes.clone();
                    dirty = true;
                }
                // The current VolumeAttributesClass is set while binding a statically
                // provisioned volume, never after (the resizer owns it then).
                if old_phase.as_deref() != Some(phase)
                    && vspec.volume_attributes_class_name.is_some()
                    && status.current_volume_attributes_class_name != vspec.volume_attributes_class_name
                {
                    status.current_volume_attributes_class_name = vspec.volume_attributes_class_name.clone();
                    dirty = true;
                }
                if old_phase.as_deref() != Some(phase) {
                    let volume_cap = vspec.capacity.as_ref().and_then(|c| c.get("storage")).cloned();
                    let Some(volume_cap) = volume_cap else {
                        return Err(ApiError::bad_request(format!(
                            "PersistentVolume {:?} is without a storage capacity",
                            volume.metadata.name.as_deref().unwrap_or("")
                        )));
                    };
                    if let Some(pre) = annotation(&volume.metadata, ANN_PRE_RESIZE_CAPACITY) {
                        let q = kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity(pre.clone());
                        let q = if kubesim_api::quantity::parse_value(&q.0).is_ok() { q } else { volume_cap.clone() };
                        status.capacity.get_or_insert_with(BTreeMap::new).insert("storage".into(), q);
                        dirty = true;
                    } else if kubesim_api::storage::storage_of(status.capacity.as_ref()) != kubesim_api::storage::storage_of(vspec.capacity.as_ref())
                        || status.capacity.as_ref().is_none_or(|c| !c.contains_key("storage"))
                    {
                        status.capacity = vspec.capacity.clone();
                        dirty = true;
                    }
                }
            }
        }
        if !dirty {
            return Ok(claim.clone());
        }
        let updated = ctx.update_status(encode(&c, "v1", "PersistentVolumeClaim"))?;
        self.claims.put(updated.clone());
        Ok(decode(&updated).unwrap_or(c))
    }

    /// `updateClaimStatusWithEvent`: the status and, only when the phase changes, the event.
    fn update_claim_status_with_event(
        &mut self,
        ctx: &mut Ctx,
        claim: &PersistentVolumeClaim,
        phase: &str,
        type_: &str,
        reason: &str,
        message: &str,
    ) -> Result<(), ApiError> {
        if claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some(phase) {
            return Ok(());
        }
        let updated = self.update_claim_status(ctx, claim, phase, None)?;
        ctx.event(&encode(&updated, "v1", "PersistentVolumeClaim"), type_, reason, message.into());
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

    /// `syncClaim`: `syncUnboundClaim` until `bind-completed`, then `syncBoundClaim`.
    pub(crate) fn sync_claim(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.claims.get(key).cloned() else { return Ok(()) };
        let Some(claim) = decode::<PersistentVolumeClaim>(&object) else { return Ok(()) };
        if annotation(&claim.metadata, ANN_BIND_COMPLETED).is_some() {
            return self.sync_bound_claim(ctx, &claim);
        }
        let volume_name = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty());
        if let Some(v) = volume_name {
            return self.sync_claim_with_volume_name(ctx, &claim, &v);
        }
        // [Unit test set 1] The user did not care which volume they get.
        let class_name = claim_class(&claim);
        let class = (!class_name.is_empty()).then(|| self.class(&class_name)).flatten();
        let delay = is_delay_binding_mode(&claim, class.as_ref()).map_err(ApiError::bad_request)?;
        let volumes = self.all_volumes();
        if let Some(pv) = find_best_match_for_claim(&claim, &volumes, delay) {
            let pv = pv.clone();
            return self.bind(ctx, &claim, &pv);
        }
        // assignDefaultStorageClass: claims created before a default class existed.
        if !has_class(&claim) {
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
        } else if !class_name.is_empty() {
            return self.provision_claim(ctx, &claim, &object, &class_name, class);
        } else {
            ctx.event(&object, "Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set".into());
        }
        self.update_claim_status(ctx, &claim, "Pending", None).map(|_| ())
    }

    /// `syncUnboundClaim` when the user asked for a particular volume ([Unit test set 2]).
    fn sync_claim_with_volume_name(&mut self, ctx: &mut Ctx, claim: &PersistentVolumeClaim, v: &str) -> Result<(), ApiError> {
        let pv = self.volumes.get_named("", v).and_then(|o| decode::<PersistentVolume>(o));
        let Some(pv) = pv else {
            // Not there (yet): Pending, retried on the next sync.
            return self.update_claim_status(ctx, claim, "Pending", None).map(|_| ());
        };
        let object = encode(claim, "v1", "PersistentVolumeClaim");
        match pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) {
            None => {
                if let Some(reason) = check_volume_satisfy_claim(&pv, claim) {
                    ctx.event(&object, "Warning", "VolumeMismatch", format!("Cannot bind to requested volume {v:?}: {reason}"));
                    return self.update_claim_status(ctx, claim, "Pending", None).map(|_| ());
                }
                self.bind(ctx, claim, &pv)
            }
            Some(_) if is_volume_bound_to_claim(&pv, claim) => self.bind(ctx, claim, &pv),
            Some(r) => {
                ctx.event(&object, "Warning", "FailedBinding", format!("volume {v:?} already bound to a different claim."));
                if annotation(&claim.metadata, ANN_BOUND_BY_CONTROLLER).is_none() {
                    // The user asked for a volume someone else has: retry later.
                    return self.update_claim_status(ctx, claim, "Pending", None).map(|_| ());
                }
                // "This should never happen": someone removed bind-completed.
                Err(ApiError::bad_request(format!(
                    "invalid binding of claim \"{}/{}\" to volume {v:?}: volume already claimed by \"{}/{}\"",
                    claim.metadata.namespace.as_deref().unwrap_or(""),
                    claim.metadata.name.as_deref().unwrap_or(""),
                    r.namespace.as_deref().unwrap_or(""),
                    r.name.as_deref().unwrap_or("")
                )))
            }
        }
    }

    /// `provisionClaim` → `provisionClaimOperationExternal`: annotate the claim with the
    /// provisioner and wait for it (kubesim has no in-tree provisioners).
    fn provision_claim(
        &mut self,
        ctx: &mut Ctx,
        claim: &PersistentVolumeClaim,
        object: &kubesim_api::Object,
        class_name: &str,
        class: Option<StorageClass>,
    ) -> Result<(), ApiError> {
        // findProvisionablePlugin.
        let Some(class) = class else {
            ctx.event(object, "Warning", "ProvisioningFailed", format!("storageclass.storage.k8s.io {class_name:?} not found"));
            return Ok(());
        };
        if class.provisioner.starts_with("kubernetes.io/") {
            ctx.event(object, "Warning", "ProvisioningFailed", format!("no volume plugin matched name: {}", class.provisioner));
            return Ok(());
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
            let updated = ctx.update(encode(&c, "v1", "PersistentVolumeClaim"));
            let updated = match updated {
                Ok(u) => u,
                Err(e) => {
                    ctx.event(&object, "Warning", "ProvisioningFailed", format!("Error saving claim: {}", e.message));
                    return Err(e);
                }
            };
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

    /// `syncBoundClaim` ([Unit test set 3]).
    fn sync_bound_claim(&mut self, ctx: &mut Ctx, claim: &PersistentVolumeClaim) -> Result<(), ApiError> {
        let Some(v) = claim.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty()) else {
            return self.update_claim_status_with_event(
                ctx,
                claim,
                "Lost",
                "Warning",
                "ClaimLost",
                "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
            );
        };
        let pv = self.volumes.get_named("", &v).and_then(|o| decode::<PersistentVolume>(o));
        let Some(pv) = pv else {
            if ctx.api.lookup(("", "persistentvolumes"), "", &v).is_some() {
                // Deviation: upstream marks the claim Lost at once; kubesim's informer may
                // not have delivered a volume just written by another component yet.
                return Ok(());
            }
            return self.update_claim_status_with_event(
                ctx,
                claim,
                "Lost",
                "Warning",
                "ClaimLost",
                "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
            );
        };
        match pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) {
            None => self.bind(ctx, claim, &pv),
            Some(r) if r.uid.as_deref().unwrap_or("") == claim.metadata.uid.as_deref().unwrap_or("") => self.bind(ctx, claim, &pv),
            Some(_) => self.update_claim_status_with_event(
                ctx,
                claim,
                "Lost",
                "Warning",
                "ClaimMisbound",
                "Two claims are bound to the same volume, this one is bound incorrectly",
            ),
        }
    }

    /// `syncVolume` ([Unit test set 4]).
    pub(crate) fn sync_volume(&mut self, name: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.volumes.get_named("", name).cloned() else { return Ok(()) };
        let Some(pv) = decode::<PersistentVolume>(&object) else { return Ok(()) };
        let Some(claim_ref) = pv.spec.as_ref().and_then(|s| s.claim_ref.clone()) else {
            // Unused: Available.
            return self.update_volume_phase(ctx, &pv, "Available", "").map(|_| ());
        };
        if claim_ref.uid.as_deref().unwrap_or("").is_empty() {
            // Pre-bound by the user or a provisioner; the claim's sync binds it.
            self.update_volume_phase(ctx, &pv, "Available", "")?;
            let key = (claim_ref.namespace.clone().unwrap_or_default(), claim_ref.name.clone().unwrap_or_default());
            if self.claims.get(&key).is_some() {
                // Deviation: upstream waits for the claim's own sync; enqueueing it speeds up
                // binding by a resync period and changes nothing else.
                self.queue.add(key, ctx);
            }
            return Ok(());
        }
        let key = (claim_ref.namespace.clone().unwrap_or_default(), claim_ref.name.clone().unwrap_or_default());
        let lookup = |ctx: &Ctx| ctx.api.lookup(("", "persistentvolumeclaims"), &key.0, &key.1).and_then(|o| o.decode::<PersistentVolumeClaim>());
        let mut claim = self.claims.get(&key).and_then(|o| decode::<PersistentVolumeClaim>(o));
        if claim.is_none() && !matches!(phase_of(&pv), "Released" | "Failed") {
            // Not in the cache: double-check with the API server before releasing.
            claim = lookup(ctx);
        }
        if claim.as_ref().is_some_and(|c| c.metadata.uid != claim_ref.uid) {
            // The cached claim may be older than the volume's claimRef: ask the API server.
            claim = lookup(ctx).filter(|c| c.metadata.uid == claim_ref.uid);
        }
        let Some(c) = claim else {
            // The claim is gone: Released (unless Failed already), then reclaim.
            let pv = if matches!(phase_of(&pv), "Released" | "Failed") { pv } else { self.update_volume_phase(ctx, &pv, "Released", "")? };
            return self.reclaim_volume(ctx, &pv);
        };
        let claim_volume = c.spec.as_ref().and_then(|s| s.volume_name.clone()).unwrap_or_default();
        if claim_volume.is_empty() {
            if kubesim_api::storage::volume_mode_mismatches(&c, &pv) {
                // findBestMatchForClaim never returns this volume: say so on both.
                let claim_name = c.metadata.name.clone().unwrap_or_default();
                ctx.event(
                    &object,
                    "Warning",
                    "VolumeMismatch",
                    format!("Cannot bind PersistentVolume to requested PersistentVolumeClaim {claim_name:?} due to incompatible volumeMode."),
                );
                ctx.event(
                    &encode(&c, "v1", "PersistentVolumeClaim"),
                    "Warning",
                    "VolumeMismatch",
                    format!("Cannot bind PersistentVolume {name:?} to requested PersistentVolumeClaim due to incompatible volumeMode."),
                );
                return Ok(());
            }
            // The binding is not complete (or the volume is dangling): the claim's sync
            // finishes it.
            self.queue.add(key, ctx);
            return Ok(());
        }
        if claim_volume == name {
            return self.update_volume_phase(ctx, &pv, "Bound", "").map(|_| ());
        }
        // The claim is bound to another volume.
        if annotation(&pv.metadata, ANN_DYNAMICALLY_PROVISIONED).is_some()
            && pv.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.as_deref()) == Some("Delete")
        {
            // Provisioned for this claim and lost the race: Released, then deleted.
            let pv = if matches!(phase_of(&pv), "Released" | "Failed") { pv } else { self.update_volume_phase(ctx, &pv, "Released", "")? };
            return self.reclaim_volume(ctx, &pv);
        }
        self.unbind_volume(ctx, &pv)
    }

    /// `unbindVolume`: a controller-made binding is undone (claimRef and annotation go); a
    /// user's pre-binding keeps its claimRef without the uid. Then Available.
    fn unbind_volume(&mut self, ctx: &mut Ctx, pv: &PersistentVolume) -> Result<(), ApiError> {
        let mut v = pv.clone();
        if annotation(&pv.metadata, ANN_BOUND_BY_CONTROLLER).is_some() {
            v.spec.get_or_insert_with(Default::default).claim_ref = None;
            if let Some(a) = v.metadata.annotations.as_mut() {
                a.remove(ANN_BOUND_BY_CONTROLLER);
                if a.is_empty() {
                    v.metadata.annotations = None;
                }
            }
        } else if let Some(r) = v.spec.as_mut().and_then(|s| s.claim_ref.as_mut()) {
            r.uid = None;
        }
        let updated = ctx.update(encode(&v, "v1", "PersistentVolume"))?;
        self.volumes.put(updated.clone());
        let v = decode(&updated).unwrap_or(v);
        self.update_volume_phase(ctx, &v, "Available", "").map(|_| ())
    }

    /// `reclaimVolume`.
    fn reclaim_volume(&mut self, ctx: &mut Ctx, pv: &PersistentVolume) -> Result<(), ApiError> {
        if annotation(&pv.metadata, ANN_MIGRATED_TO).is_some_and(|m| !m.is_empty()) {
            return Ok(()); // migrated: the external provisioner handles it
        }
        let policy = pv.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.clone()).unwrap_or_default();
        match policy.as_str() {
            "Retain" => Ok(()),
            "Delete" => self.delete_volume_operation(ctx, pv),
            "Recycle" => {
                // recycleVolumeOperation: the deprecated recyclers are not modelled.
                self.update_volume_phase_with_event(ctx, pv, "Failed", "Warning", "VolumeFailedRecycle", "No recycler plugin found for the volume!")
            }
            _ => self.update_volume_phase_with_event(
                ctx,
                pv,
                "Failed",
                "Warning",
                "VolumeUnknownReclaimPolicy",
                "Volume has unrecognized PersistentVolumeReclaimPolicy",
            ),
        }
    }

    /// `deleteVolumeOperation` (inline instead of on the operation executor;
    /// HonorPVReclaimPolicy is GA, so a volume already being deleted is still reclaimed).
    fn delete_volume_operation(&mut self, ctx: &mut Ctx, pv: &PersistentVolume) -> Result<(), ApiError> {
        let name = pv.metadata.name.clone().unwrap_or_default();
        // isVolumeReleased, on the newest copy.
        let Some(current) = ctx.api.lookup(("", "persistentvolumes"), "", &name).and_then(|o| o.decode::<PersistentVolume>()) else { return Ok(()) };
        if !self.is_volume_released(&current) {
            return Ok(());
        }
        match find_deletable_plugin(pv) {
            Err(message) => self.update_volume_phase_with_event(ctx, pv, "Failed", "Warning", "VolumeFailedDelete", &message),
            Ok(None) => Ok(()), // the external provisioner deletes it
            Ok(Some(Deleter::HostPath(path))) => {
                // The in-tree hostPath deleter (NewDeleter): only under /tmp, and it removes the
                // directory on kube-controller-manager's own machine, not on a node.
                if !(path.starts_with("/tmp/") && path.len() > 5) {
                    let message = format!("host_path deleter only supports /tmp/.+ but received provided {path}");
                    return self.update_volume_phase_with_event(ctx, pv, "Failed", "Warning", "VolumeFailedDelete", &message);
                }
                let info = kind_info("v1", "PersistentVolume").expect("served");
                match ctx.delete(info, "", &name, DeleteOptions::default()) {
                    Ok(_) => Ok(()),
                    Err(e) if e.code == 404 => Ok(()),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// `isVolumeReleased`: bound (with a uid) to a claim that is gone or bound elsewhere.
    fn is_volume_released(&self, pv: &PersistentVolume) -> bool {
        let Some(r) = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else { return false };
        let uid = r.uid.as_deref().unwrap_or("");
        if uid.is_empty() {
            return false;
        }
        let claim =
            self.claims.get_named(r.namespace.as_deref().unwrap_or(""), r.name.as_deref().unwrap_or("")).and_then(|o| decode::<PersistentVolumeClaim>(o));
        match claim {
            Some(c) if c.metadata.uid.as_deref() == Some(uid) => {
                let bound_to = c.spec.as_ref().and_then(|s| s.volume_name.as_deref()).unwrap_or("");
                !bound_to.is_empty() && Some(bound_to) != pv.metadata.name.as_deref()
            }
            _ => true,
        }
    }
}

/// The in-tree deleters kube-controller-manager has (ProbeControllerVolumePlugins): only
/// hostPath's.
enum Deleter {
    HostPath(String),
}

/// `findDeletablePlugin`: the plugin that provisioned the volume (an external provisioner
/// deletes its own volumes: none), CSI and migrated volumes (external: none), else a plugin
/// for the volume's source — kcm has hostPath, nfs, fc and iscsi, and only hostPath deletes.
fn find_deletable_plugin(pv: &PersistentVolume) -> Result<Option<Deleter>, String> {
    let name = pv.metadata.name.as_deref().unwrap_or("");
    let spec = pv.spec.clone().unwrap_or_default();
    if let Some(provisioner) = annotation(&pv.metadata, ANN_DYNAMICALLY_PROVISIONED).filter(|p| !p.is_empty()) {
        return match provisioner.as_str() {
            "kubernetes.io/host-path" => match spec.host_path {
                Some(h) => Ok(Some(Deleter::HostPath(h.path))),
                None => Err(format!("failed to create deleter for volume {name:?}: spec.PersistentVolumeSource.HostPath is nil")),
            },
            p if p.starts_with("kubernetes.io/") => Err(format!("no volume plugin matched name: {p}")),
            _ => Ok(None),
        };
    }
    if annotation(&pv.metadata, ANN_MIGRATED_TO).is_some() || spec.csi.is_some() {
        return Ok(None);
    }
    if let Some(h) = spec.host_path {
        return Ok(Some(Deleter::HostPath(h.path)));
    }
    let reason =
        if spec.nfs.is_some() || spec.fc.is_some() || spec.iscsi.is_some() { "no deletable volume plugin matched" } else { "no volume plugin matched" };
    Err(format!("error getting deleter volume plugin for volume {name:?}: {reason}"))
}

/// `PersistentVolumeClaimHasClass`: the beta annotation or `spec.storageClassName` is set.
fn has_class(claim: &PersistentVolumeClaim) -> bool {
    claim.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(kubesim_api::storage::BETA_STORAGE_CLASS_ANNOTATION))
        || claim.spec.as_ref().and_then(|s| s.storage_class_name.as_ref()).is_some()
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
    // VolumeAttributesClass (GA in v1.34).
    let vac = |s: Option<&String>| s.cloned().unwrap_or_default();
    if vac(claim.spec.as_ref().and_then(|s| s.volume_attributes_class_name.as_ref()))
        != vac(pv.spec.as_ref().and_then(|s| s.volume_attributes_class_name.as_ref()))
    {
        return Some("volumeAttributesClassName does not match".into());
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
