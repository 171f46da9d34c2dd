//! kind's dynamic provisioner: rancher/local-path-provisioner over
//! sig-storage-lib-external-provisioner v11 (the provision controller). It acts on claims whose
//! `volume.kubernetes.io/storage-provisioner` names it — for WaitForFirstConsumer classes only
//! once the scheduler has set `volume.kubernetes.io/selected-node` — and creates the
//! `pvc-<claim uid>` hostPath volume under `/var/local-path-provisioner` on the selected node,
//! pre-bound to the claim and pinned to the node by node affinity (provisioner.go); it deletes
//! released volumes of reclaim policy Delete that it provisioned.
//!
//! Events come from `rancher.io/local-path_<its pod>_<uuid>` (the lib's event source).
//! Deviations: the provisioner is not a pod in `local-path-storage`; its setup/teardown helper
//! pods are not run: the volume's directory appears when the kubelet mounts the hostPath
//! (DirectoryOrCreate), and deleting a volume does not remove its directory on the node.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{
    HostPathVolumeSource, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim, PersistentVolumeSpec,
    VolumeNodeAffinity,
};
use kubesim_api::k8s_openapi::api::storage::v1::StorageClass;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::storage::{
    claim_class, claim_reference, ANN_BETA_STORAGE_PROVISIONER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER,
};
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

/// The provisioner name (the StorageClass's `provisioner`).
pub const PROVISIONER_NAME: &str = "rancher.io/local-path";
/// The default `nodePathMap` path (kind's local-path-config).
pub const DEFAULT_PATH: &str = "/var/local-path-provisioner";
/// `local.path.provisioner/selected-node` on the volumes it creates.
pub const ANN_LOCAL_SELECTED_NODE: &str = "local.path.provisioner/selected-node";
/// Modelled time from `Provisioning` to the volume's creation (the setup helper pod's run).
pub const PROVISION_MS: Millis = 1000;
/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;
const TOKEN_BASE: u64 = 16;

/// `getProvisionedVolumeNameForClaim`: `pvc-<claim uid>`.
pub fn provisioned_volume_name(claim: &PersistentVolumeClaim) -> String {
    format!("pvc-{}", claim.metadata.uid.as_deref().unwrap_or(""))
}

/// The local-path provisioner.
#[derive(Clone, Debug)]
pub struct LocalPathProvisioner {
    claims: Cache,
    volumes: Cache,
    classes: Cache,
    queue: WorkQueue,
    /// Provisioning operations in flight: timer token → claim (uid checked on completion).
    in_flight: BTreeMap<u64, (Key, String)>,
    next_token: u64,
}

impl Default for LocalPathProvisioner {
    fn default() -> Self {
        LocalPathProvisioner::new()
    }
}

impl LocalPathProvisioner {
    /// A provisioner with empty caches.
    pub fn new() -> LocalPathProvisioner {
        LocalPathProvisioner {
            claims: Cache::default(),
            volumes: Cache::default(),
            classes: Cache::default(),
            queue: WorkQueue::new(LATENCY_MS),
            in_flight: BTreeMap::new(),
            next_token: TOKEN_BASE,
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
        let annotations = claim.metadata.annotations.clone().unwrap_or_default();
        let asked = annotations.get(ANN_STORAGE_PROVISIONER).or_else(|| annotations.get(ANN_BETA_STORAGE_PROVISIONER));
        if asked.map(String::as_str) != Some(PROVISIONER_NAME) {
            return false;
        }
        let Some(class) = self.class_of(claim) else { return false };
        if class.provisioner != PROVISIONER_NAME {
            return false;
        }
        if class.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer") && !annotations.contains_key(ANN_SELECTED_NODE) {
            return false;
        }
        let name = provisioned_volume_name(claim);
        self.volumes.get_named("", &name).is_none()
    }

    fn sync_claim(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.claims.get(key).cloned() else { return Ok(()) };
        let Some(claim) = decode::<PersistentVolumeClaim>(&object) else { return Ok(()) };
        let uid = claim.metadata.uid.clone().unwrap_or_default();
        if !self.should_provision(&claim) || self.in_flight.values().any(|(_, u)| *u == uid) {
            return Ok(());
        }
        ctx.event(&object, "Normal", "Provisioning", format!("External provisioner is provisioning volume for claim \"{}/{}\"", key.0, key.1));
        let token = self.next_token;
        self.next_token += 1;
        self.in_flight.insert(token, (key.clone(), uid));
        ctx.after(PROVISION_MS, token);
        Ok(())
    }

    /// `Provision` (provisioner.go) and the lib's volume creation.
    fn provision(&mut self, key: &Key, uid: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = ctx.api.lookup(("", "persistentvolumeclaims"), &key.0, &key.1).cloned() else { return Ok(()) };
        let Some(claim) = object.decode::<PersistentVolumeClaim>() else { return Ok(()) };
        if claim.metadata.uid.as_deref() != Some(uid) || !self.should_provision(&claim) {
            return Ok(());
        }
        let class = self.class_of(&claim).unwrap_or_default();
        let class_name = claim_class(&claim);
        let spec = claim.spec.clone().unwrap_or_default();
        let node = claim.metadata.annotations.as_ref().and_then(|a| a.get(ANN_SELECTED_NODE)).cloned();
        let failure = if spec.selector.is_some() {
            Some("claim.Spec.Selector is not supported".to_string())
        } else if spec.access_modes.iter().flatten().any(|m| m != "ReadWriteOnce" && m != "ReadWriteOncePod") {
            Some("NodePath only supports ReadWriteOnce and ReadWriteOncePod (1.22+) access modes".to_string())
        } else if node.is_none() {
            Some("configuration error, no node was specified".to_string())
        } else {
            None
        };
        if let Some(reason) = failure {
            ctx.event(&object, "Warning", "ProvisioningFailed", format!("failed to provision volume with StorageClass {class_name:?}: {reason}"));
            // A final error on a claim with a selected node: give the node back to the scheduler.
            if node.is_some() {
                patch_meta(ctx, &object, |m| {
                    if let Some(a) = m.annotations.as_mut() {
                        a.remove(ANN_SELECTED_NODE);
                    }
                })?;
            }
            return Ok(());
        }
        let node = node.unwrap_or_default();
        // The node's hostname label (or its name) pins the volume.
        let hostname = ctx
            .api
            .lookup(("", "nodes"), "", &node)
            .and_then(|n| n.metadata().labels.as_ref().and_then(|l| l.get("kubernetes.io/hostname")).cloned())
            .unwrap_or_else(|| node.clone());
        let name = provisioned_volume_name(&claim);
        let pv = PersistentVolume {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                annotations: Some(BTreeMap::from([
                    (ANN_LOCAL_SELECTED_NODE.to_string(), node.clone()),
                    (ANN_DYNAMICALLY_PROVISIONED.to_string(), PROVISIONER_NAME.to_string()),
                ])),
                ..Default::default()
            },
            spec: Some(PersistentVolumeSpec {
                access_modes: spec.access_modes.clone(),
                capacity: spec.resources.as_ref().and_then(|r| r.requests.clone()).map(|r| r.into_iter().filter(|(k, _)| k == "storage").collect()),
                claim_ref: Some(claim_reference(&claim)),
                persistent_volume_reclaim_policy: Some(class.reclaim_policy.clone().unwrap_or_else(|| "Delete".into())),
                storage_class_name: Some(class_name.clone()),
                volume_mode: Some("Filesystem".into()),
                host_path: Some(HostPathVolumeSource { path: format!("{DEFAULT_PATH}/{name}_{}_{}", key.0, key.1), type_: Some("DirectoryOrCreate".into()) }),
                node_affinity: Some(VolumeNodeAffinity {
                    required: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: Some(vec![NodeSelectorRequirement {
                                key: "kubernetes.io/hostname".into(),
                                operator: "In".into(),
                                values: Some(vec![hostname]),
                            }]),
                            match_fields: None,
                        }],
                    }),
                }),
                ..Default::default()
            }),
            status: None,
        };
        crate::common::create_provisioned_volume(ctx, &mut self.volumes, &object, &pv, &class_name, &name)
    }

    /// `shouldDelete` and `deleteVolumeOperation`: released Delete volumes it provisioned.
    fn sync_volume(&mut self, name: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.volumes.get_named("", name).cloned() else { return Ok(()) };
        let Some(pv) = decode::<PersistentVolume>(&object) else { return Ok(()) };
        let ours = pv.metadata.annotations.as_ref().and_then(|a| a.get(ANN_DYNAMICALLY_PROVISIONED)).map(String::as_str) == Some(PROVISIONER_NAME);
        let released = pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Released");
        let delete = pv.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.as_deref()) == Some("Delete");
        if !(ours && released && delete) || pv.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        crate::common::delete_provisioned_volume(ctx, &object, name)
    }
}

impl Reconciler for LocalPathProvisioner {
    fn name(&self) -> &'static str {
        "local-path-provisioner"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "persistentvolumeclaims")) => claims,
        Informer::all(("", "persistentvolumes")) => volumes,
        Informer::all(("storage.k8s.io", "storageclasses")) => classes,
    }
    fn started(&mut self, ctx: &mut Ctx) {
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
            ("storage.k8s.io", "storageclasses") => {
                let keys: Vec<Key> = self.claims.iter().map(|o| key_of(o)).collect();
                for key in keys {
                    self.queue.add(key, ctx);
                }
            }
            _ => self.queue.add(key_of(&change.event.object), ctx),
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let result = if key.0.is_empty() { self.sync_volume(&key.1, ctx) } else { self.sync_claim(key, ctx) };
        result.map(|_| Action::AwaitChange)
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if let Some((key, uid)) = self.in_flight.remove(&token) {
            if self.provision(&key, &uid, ctx).is_err() {
                // The lib retries with exponential backoff.
                self.queue.add_rate_limited(key, ctx);
            }
        }
    }
}
