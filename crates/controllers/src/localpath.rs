//! kind's dynamic provisioner: rancher/local-path-provisioner over
//! sig-storage-lib-external-provisioner v11 (the provision controller). It acts on claims whose
//! `volume.kubernetes.io/storage-provisioner` names it — for WaitForFirstConsumer classes only
//! once the scheduler has set `volume.kubernetes.io/selected-node` — and creates the
//! `pvc-<claim uid>` hostPath volume under `/var/local-path-provisioner` on the selected node,
//! pre-bound to the claim and pinned to the node by node affinity (provisioner.go); it deletes
//! released volumes of reclaim policy Delete that it provisioned.
//!
//! Deleting a released Delete volume runs the teardown (kind's local-path-config:
//! `rm -rf "$VOL_DIR"`) on the volume's node, then deletes the PV object; a Retain volume's
//! directory stays, with its files, for whoever binds the volume next.
//!
//! Events come from `rancher.io/local-path_<its pod>_<uuid>` (the lib's event source).
//! Deviations: the provisioner is not a pod in `local-path-storage`, and its setup/teardown
//! helper pods are not pods: the setup's directory appears when the kubelet mounts the hostPath
//! (DirectoryOrCreate), and the teardown is the same `rm -rf` done on the node's filesystem
//! ([`kubesim_runtime::NodeFsOp`]) after the helper pod's modelled run ([`TEARDOWN_MS`]); a node
//! that cannot run it (gone, powered off, cut off) fails the deletion as the helper pod's wait
//! does: `create process timeout after 120 seconds`, then a retry.

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
/// Modelled run of the teardown helper pod (create, run `rm -rf`, seen Succeeded).
pub const TEARDOWN_MS: Millis = 1000;
/// The helper pod wait's limit (`CmdTimeoutSeconds`, 120 by default).
pub const CMD_TIMEOUT_MS: Millis = 120_000;
/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;
const TOKEN_BASE: u64 = 16;

/// `getProvisionedVolumeNameForClaim`: `pvc-<claim uid>`.
pub fn provisioned_volume_name(claim: &PersistentVolumeClaim) -> String {
    format!("pvc-{}", claim.metadata.uid.as_deref().unwrap_or(""))
}

/// An operation waiting for its timer.
#[derive(Clone, Debug)]
enum Op {
    /// Provisioning a claim (key, uid): the setup helper pod's run.
    Provision(Key, String),
    /// Deleting a volume (name, uid): the teardown helper pod's run.
    Teardown(String, String),
    /// The teardown could not run on the volume's node: the helper pod's wait times out.
    TimedOut(String, String),
}

/// The local-path provisioner.
#[derive(Clone, Debug)]
pub struct LocalPathProvisioner {
    claims: Cache,
    volumes: Cache,
    classes: Cache,
    queue: WorkQueue,
    /// Operations in flight by timer token (uids checked on completion).
    in_flight: BTreeMap<u64, Op>,
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
        if !self.should_provision(&claim) || self.in_flight.values().any(|op| matches!(op, Op::Provision(_, u) if *u == uid)) {
            return Ok(());
        }
        ctx.event(&object, "Normal", "Provisioning", format!("External provisioner is provisioning volume for claim \"{}/{}\"", key.0, key.1));
        let token = self.next_token;
        self.next_token += 1;
        self.in_flight.insert(token, Op::Provision(key.clone(), uid));
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

    /// `shouldDelete`: a released Delete volume it provisioned.
    fn should_delete(pv: &PersistentVolume) -> bool {
        let ours = pv.metadata.annotations.as_ref().and_then(|a| a.get(ANN_DYNAMICALLY_PROVISIONED)).map(String::as_str) == Some(PROVISIONER_NAME);
        let released = pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Released");
        let delete = pv.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.as_deref()) == Some("Delete");
        ours && released && delete && pv.metadata.deletion_timestamp.is_none()
    }

    /// `deleteVolumeOperation` starts: the teardown helper pod is created on the volume's node.
    fn sync_volume(&mut self, name: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.volumes.get_named("", name).cloned() else { return Ok(()) };
        let Some(pv) = decode::<PersistentVolume>(&object) else { return Ok(()) };
        let uid = pv.metadata.uid.clone().unwrap_or_default();
        let busy = self.in_flight.values().any(|op| matches!(op, Op::Teardown(_, u) | Op::TimedOut(_, u) if *u == uid));
        if busy || !Self::should_delete(&pv) {
            return Ok(());
        }
        let token = self.next_token;
        self.next_token += 1;
        self.in_flight.insert(token, Op::Teardown(name.to_string(), uid));
        ctx.after(TEARDOWN_MS, token);
        Ok(())
    }

    /// `Delete` (provisioner.go deleteFor: the teardown on the node the volume's affinity names)
    /// and the lib's removal of the PV object.
    fn teardown(&mut self, name: &str, uid: &str, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = ctx.api.lookup(("", "persistentvolumes"), "", name).cloned() else { return Ok(()) };
        let Some(pv) = object.decode::<PersistentVolume>() else { return Ok(()) };
        if pv.metadata.uid.as_deref() != Some(uid) || !Self::should_delete(&pv) {
            return Ok(());
        }
        let spec = pv.spec.clone().unwrap_or_default();
        let path = spec.host_path.as_ref().map(|h| h.path.clone()).or_else(|| spec.local.as_ref().map(|l| l.path.clone())).unwrap_or_default();
        let hostname = kubesim_api::storage::local_volume_node_names(&pv).into_iter().next().unwrap_or_default();
        let node = ctx
            .api
            .store()
            .list(("", "nodes"), None)
            .find(|n| n.metadata().labels.as_ref().and_then(|l| l.get("kubernetes.io/hostname")) == Some(&hostname))
            .map(|n| n.name().to_string())
            .unwrap_or(hostname);
        if path.is_empty() || ctx.node_fs(&node, kubesim_runtime::NodeFsOp::RemoveAll(path)).is_err() {
            // The helper pod never reports Succeeded: the wait times out.
            let token = self.next_token;
            self.next_token += 1;
            self.in_flight.insert(token, Op::TimedOut(name.to_string(), uid.to_string()));
            ctx.after(CMD_TIMEOUT_MS - TEARDOWN_MS, token);
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
        match self.in_flight.remove(&token) {
            // The lib retries failures with exponential backoff.
            Some(Op::Provision(key, uid)) if self.provision(&key, &uid, ctx).is_err() => self.queue.add_rate_limited(key, ctx),
            Some(Op::Teardown(name, uid)) if self.teardown(&name, &uid, ctx).is_err() => self.queue.add_rate_limited((String::new(), name), ctx),
            Some(Op::TimedOut(name, _)) => {
                if let Some(object) = ctx.api.lookup(("", "persistentvolumes"), "", &name).cloned() {
                    ctx.event(&object, "Warning", "VolumeFailedDelete", format!("create process timeout after {} seconds", CMD_TIMEOUT_MS / 1000));
                }
                self.queue.add_rate_limited((String::new(), name), ctx);
            }
            _ => {}
        }
    }
}
