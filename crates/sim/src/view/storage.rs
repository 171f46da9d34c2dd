//! The storage view's data: StorageClasses, claims, volumes, VolumeAttachments and the CSI
//! objects, and for each claim the path its volume takes from the claim to a directory in the
//! pod (provision → bind → attach → stage → publish), read from the model's own state — the
//! PVC/PV objects, the VolumeAttachments' status, the node plugins' mount table on each
//! machine (`Host::csi`: staged and published volumes), the containers' mounts in the node's
//! runtime and, for what went wrong, the Events the components recorded. Plus the files in a
//! volume, wherever its bytes are now (a disk's device on its machine or in the cloud, a
//! directory of a node's filesystem).

use crate::world::World;
use kubesim_api::csi::{attach_required, attachment_name, device_mount_path, pod_volume_path, pv_csi_source, HOSTPATH_TOPOLOGY_KEY};
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kubesim_api::k8s_openapi::api::storage::v1::{CSIDriver, StorageClass, VolumeAttachment};
use kubesim_api::object::Object;
use kubesim_api::storage::{claim_class, local_volume_node_names, volume_class, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER};
use kubesim_api::time::millis_of;
use kubesim_api::Millis;
use std::collections::BTreeMap;

/// A StorageClass as the storage view lists it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct StorageClassRow {
    /// Name.
    pub name: String,
    /// The provisioner (`rancher.io/local-path`, `disk.csi.kubesim.io`).
    pub provisioner: String,
    /// Delete / Retain.
    pub reclaim_policy: String,
    /// Immediate / WaitForFirstConsumer.
    pub binding_mode: String,
    /// `storageclass.kubernetes.io/is-default-class`.
    pub default: bool,
    /// allowVolumeExpansion.
    pub allow_expansion: bool,
    /// Parameters as `k=v`.
    pub parameters: Vec<String>,
}

/// One step of a volume's path from claim to mounted directory.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// A PV exists for the claim (created by a provisioner, or pre-provisioned).
    Provision,
    /// The claim and the PV are bound to each other.
    Bind,
    /// The volume is attached to the node (ControllerPublishVolume, a VolumeAttachment).
    Attach,
    /// The node plugin mounted the device at the global mount path (NodeStageVolume).
    Stage,
    /// The volume is in the pod's directory (NodePublishVolume, or the kubelet's mount).
    Publish,
}

impl Step {
    /// Every step, in path order.
    pub const ALL: [Step; 5] = [Step::Provision, Step::Bind, Step::Attach, Step::Stage, Step::Publish];

    /// Display label.
    pub fn label(self) -> &'static str {
        match self {
            Step::Provision => "provision",
            Step::Bind => "bind",
            Step::Attach => "attach",
            Step::Stage => "stage",
            Step::Publish => "publish",
        }
    }
}

/// How far one step is.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StepState {
    /// Not reached yet.
    Todo,
    /// Waiting on something outside the storage path (a first consumer, a node).
    Waiting,
    /// In progress.
    Active,
    /// Done.
    Done,
    /// Tried and failed (the detail says why); retried.
    Failed,
    /// Not part of this volume's path (a driver that does not attach or stage).
    Skipped,
}

impl StepState {
    /// CSS-ish name.
    pub fn name(self) -> &'static str {
        match self {
            StepState::Todo => "todo",
            StepState::Waiting => "waiting",
            StepState::Active => "active",
            StepState::Done => "done",
            StepState::Failed => "failed",
            StepState::Skipped => "skipped",
        }
    }
}

/// One step of a claim's path.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PathStep {
    /// Which.
    pub step: Step,
    /// How far.
    pub state: StepState,
    /// What happened or is awaited (`pvc-… on node-1`, the driver's error).
    pub detail: String,
}

/// Where a claim is on its path, in one word.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClaimStage {
    /// No volume and nothing provisioning it (no provisioner, or waiting for a matching PV).
    Pending,
    /// Its class binds on first use and no pod uses it yet.
    WaitForFirstConsumer,
    /// A provisioner is creating its volume (or the binder has yet to bind it).
    Provisioning,
    /// Bound, not (yet) attached or mounted anywhere.
    Bound,
    /// Being attached to its pod's node (or the attach failed and is retried).
    Attaching,
    /// Attached to the node.
    Attached,
    /// Mounted at the node's global mount path.
    Staged,
    /// In the pod's directory: the containers see it.
    Published,
    /// Its volume is gone (phase Lost).
    Lost,
}

impl ClaimStage {
    /// Display label.
    pub fn label(self) -> &'static str {
        match self {
            ClaimStage::Pending => "Pending",
            ClaimStage::WaitForFirstConsumer => "WaitForFirstConsumer",
            ClaimStage::Provisioning => "Provisioning",
            ClaimStage::Bound => "Bound",
            ClaimStage::Attaching => "Attaching",
            ClaimStage::Attached => "Attached",
            ClaimStage::Staged => "Staged",
            ClaimStage::Published => "Published",
            ClaimStage::Lost => "Lost",
        }
    }
}

/// A PersistentVolumeClaim with its path.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ClaimRow {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// status.phase, or Terminating while it is being deleted.
    pub phase: String,
    /// The bound volume (spec.volumeName).
    pub volume: Option<String>,
    /// status.capacity.storage.
    pub capacity: Option<String>,
    /// spec.resources.requests.storage.
    pub request: String,
    /// Access modes in kubectl's short form (`RWO,ROX`).
    pub access_modes: String,
    /// The class.
    pub class: String,
    /// The pods using it (not finished), by name.
    pub pods: Vec<String>,
    /// Where it is on its path.
    pub stage: ClaimStage,
    /// The node the path below shows (a consuming pod's, the selected node's).
    pub node: Option<String>,
    /// The pod the path's attach, stage and publish steps are for.
    pub pod: Option<String>,
    /// The five steps.
    pub path: Vec<PathStep>,
    /// The failure holding it up, if any.
    pub problem: Option<String>,
    /// creationTimestamp (virtual ms).
    pub created_ms: Millis,
}

/// A PersistentVolume as the storage view lists it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct VolumeRow {
    /// Name.
    pub name: String,
    /// spec.capacity.storage.
    pub capacity: String,
    /// Access modes (`RWO`).
    pub access_modes: String,
    /// persistentVolumeReclaimPolicy.
    pub reclaim_policy: String,
    /// status.phase, or Terminating.
    pub phase: String,
    /// The claim it is bound to (`namespace/name`).
    pub claim: Option<String>,
    /// Its class.
    pub class: String,
    /// Its source (`disk.csi.kubesim.io vol-0…`, `hostPath /var/local-path-provisioner/…`).
    pub source: String,
    /// Where it can be used (its node affinity: `zone-a`, `node-1`).
    pub affinity: String,
}

/// A VolumeAttachment.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct AttachmentRow {
    /// Name (`csi-<sha256>`).
    pub name: String,
    /// spec.attacher (the driver).
    pub attacher: String,
    /// spec.source.persistentVolumeName.
    pub pv: String,
    /// spec.nodeName.
    pub node: String,
    /// status.attached.
    pub attached: bool,
    /// status.attachError / detachError message.
    pub error: Option<String>,
    /// The device path the driver answered (attachmentMetadata.devicePath).
    pub device: Option<String>,
    /// Being deleted (detaching).
    pub detaching: bool,
}

/// A CSIDriver.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct CsiDriverRow {
    /// Name.
    pub name: String,
    /// attachRequired.
    pub attach_required: bool,
    /// podInfoOnMount.
    pub pod_info_on_mount: bool,
    /// volumeLifecycleModes.
    pub modes: String,
}

/// A CSINode: the drivers registered on a node.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct CsiNodeRow {
    /// The node.
    pub node: String,
    /// (driver, node id, allocatable count).
    pub drivers: Vec<(String, String, Option<i32>)>,
}

/// Everything the storage view shows.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct StorageView {
    /// StorageClasses by name.
    pub classes: Vec<StorageClassRow>,
    /// Claims by namespace and name.
    pub claims: Vec<ClaimRow>,
    /// PersistentVolumes by name.
    pub volumes: Vec<VolumeRow>,
    /// VolumeAttachments by name.
    pub attachments: Vec<AttachmentRow>,
    /// CSIDrivers by name.
    pub drivers: Vec<CsiDriverRow>,
    /// CSINodes by name.
    pub csi_nodes: Vec<CsiNodeRow>,
}

fn short_modes(modes: Option<&Vec<String>>) -> String {
    modes
        .into_iter()
        .flatten()
        .map(|m| match m.as_str() {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn storage_quantity(map: Option<&BTreeMap<String, kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity>>) -> Option<String> {
    map.and_then(|m| m.get("storage")).map(|q| q.0.clone())
}

/// A pod that uses a claim.
#[derive(Clone, Debug)]
struct Consumer {
    name: String,
    uid: String,
    node: Option<String>,
}

/// The latest Warning of each involved object (kind, namespace, name): (reason, message).
fn latest_warnings(world: &World) -> BTreeMap<(String, String, String), (Millis, String, String)> {
    let mut out: BTreeMap<(String, String, String), (Millis, String, String)> = BTreeMap::new();
    for object in world.api().store().list(("", "events"), None) {
        let Object::Event(e) = object.as_ref() else { continue };
        let involved = &e.involved_object;
        let key = (involved.kind.clone().unwrap_or_default(), involved.namespace.clone().unwrap_or_default(), involved.name.clone().unwrap_or_default());
        let t = e.last_timestamp.as_ref().map(millis_of).unwrap_or(0);
        let warning = e.type_.as_deref() == Some("Warning");
        let entry = out.entry(key).or_insert((0, String::new(), String::new()));
        // Later events win; a Normal event after a Warning clears it (the thing succeeded).
        if t >= entry.0 {
            *entry = if warning { (t, e.reason.clone().unwrap_or_default(), e.message.clone().unwrap_or_default()) } else { (t, String::new(), String::new()) };
        }
    }
    out.retain(|_, v| !v.1.is_empty());
    out
}

/// The storage view of the world now.
pub fn storage(world: &World) -> StorageView {
    let store = world.api().store();
    let classes_typed: Vec<StorageClass> = store.list(("storage.k8s.io", "storageclasses"), None).filter_map(|o| o.decode::<StorageClass>()).collect();
    let classes = classes_typed
        .iter()
        .map(|c| StorageClassRow {
            name: c.metadata.name.clone().unwrap_or_default(),
            provisioner: c.provisioner.clone(),
            reclaim_policy: c.reclaim_policy.clone().unwrap_or_else(|| "Delete".into()),
            binding_mode: c.volume_binding_mode.clone().unwrap_or_else(|| "Immediate".into()),
            default: c.metadata.annotations.as_ref().and_then(|a| a.get("storageclass.kubernetes.io/is-default-class")).is_some_and(|v| v == "true"),
            allow_expansion: c.allow_volume_expansion.unwrap_or(false),
            parameters: c.parameters.iter().flatten().map(|(k, v)| format!("{k}={v}")).collect(),
        })
        .collect();
    let drivers_typed: BTreeMap<String, CSIDriver> = store
        .list(("storage.k8s.io", "csidrivers"), None)
        .filter_map(|o| match o.as_ref() {
            Object::CSIDriver(d) => Some((d.metadata.name.clone().unwrap_or_default(), (**d).clone())),
            _ => None,
        })
        .collect();
    let pvs: BTreeMap<String, PersistentVolume> =
        store.list(("", "persistentvolumes"), None).filter_map(|o| o.decode::<PersistentVolume>().map(|pv| (o.name().to_string(), pv))).collect();
    let attachments_typed: Vec<VolumeAttachment> = store
        .list(("storage.k8s.io", "volumeattachments"), None)
        .filter_map(|o| match o.as_ref() {
            Object::VolumeAttachment(va) => Some((**va).clone()),
            _ => None,
        })
        .collect();
    // The pods using each claim (not finished). Without claims (a 10,000-pod Deployment) the
    // pods and Events are not read at all.
    let any_claims = store.list(("", "persistentvolumeclaims"), None).next().is_some();
    let mut consumers: BTreeMap<(String, String), Vec<Consumer>> = BTreeMap::new();
    let pods = if any_claims { Some(store.list(("", "pods"), None)) } else { None };
    for object in pods.into_iter().flatten() {
        let Some(pod) = object.as_pod() else { continue };
        if matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed")) {
            continue;
        }
        for claim in kubesim_api::pod::claim_names(pod) {
            consumers.entry((object.namespace().to_string(), claim)).or_default().push(Consumer {
                name: object.name().to_string(),
                uid: pod.metadata.uid.clone().unwrap_or_default(),
                node: pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty()),
            });
        }
    }
    let warnings = if any_claims { latest_warnings(world) } else { BTreeMap::new() };
    let mut claims = Vec::new();
    for object in store.list(("", "persistentvolumeclaims"), None) {
        let Some(pvc) = object.decode::<PersistentVolumeClaim>() else { continue };
        let namespace = object.namespace().to_string();
        let name = object.name().to_string();
        let users = consumers.get(&(namespace.clone(), name.clone())).cloned().unwrap_or_default();
        claims.push(claim_row(world, &pvc, &namespace, &name, &users, &classes_typed, &pvs, &drivers_typed, &attachments_typed, &warnings));
    }
    let volumes = pvs
        .iter()
        .map(|(name, pv)| {
            let spec = pv.spec.clone().unwrap_or_default();
            let source = if let Some(csi) = &spec.csi {
                format!("{} {}", csi.driver, csi.volume_handle)
            } else if let Some(h) = &spec.host_path {
                format!("hostPath {}", h.path)
            } else if let Some(l) = &spec.local {
                format!("local {}", l.path)
            } else {
                "other".to_string()
            };
            VolumeRow {
                name: name.clone(),
                capacity: storage_quantity(spec.capacity.as_ref()).unwrap_or_default(),
                access_modes: short_modes(spec.access_modes.as_ref()),
                reclaim_policy: spec.persistent_volume_reclaim_policy.clone().unwrap_or_else(|| "Retain".into()),
                phase: if pv.metadata.deletion_timestamp.is_some() {
                    "Terminating".into()
                } else {
                    pv.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_else(|| "Pending".into())
                },
                claim: spec.claim_ref.as_ref().map(|r| format!("{}/{}", r.namespace.clone().unwrap_or_default(), r.name.clone().unwrap_or_default())),
                class: volume_class(pv),
                source,
                affinity: affinity(pv),
            }
        })
        .collect();
    let attachments = attachments_typed
        .iter()
        .map(|va| {
            let status = va.status.as_ref();
            AttachmentRow {
                name: va.metadata.name.clone().unwrap_or_default(),
                attacher: va.spec.attacher.clone(),
                pv: va.spec.source.persistent_volume_name.clone().unwrap_or_default(),
                node: va.spec.node_name.clone(),
                attached: status.is_some_and(|s| s.attached),
                error: status.and_then(|s| s.detach_error.as_ref().or(s.attach_error.as_ref())).and_then(|e| e.message.clone()),
                device: status.and_then(|s| s.attachment_metadata.as_ref()).and_then(|m| m.get("devicePath").cloned()),
                detaching: va.metadata.deletion_timestamp.is_some(),
            }
        })
        .collect();
    let drivers = drivers_typed
        .values()
        .map(|d| CsiDriverRow {
            name: d.metadata.name.clone().unwrap_or_default(),
            attach_required: attach_required(Some(d)),
            pod_info_on_mount: kubesim_api::csi::pod_info_on_mount(Some(d)),
            modes: d.spec.volume_lifecycle_modes.clone().unwrap_or_else(|| vec!["Persistent".into()]).join(","),
        })
        .collect();
    let csi_nodes = store
        .list(("storage.k8s.io", "csinodes"), None)
        .filter_map(|o| match o.as_ref() {
            Object::CSINode(n) => Some(CsiNodeRow {
                node: n.metadata.name.clone().unwrap_or_default(),
                drivers: n.spec.drivers.iter().map(|d| (d.name.clone(), d.node_id.clone(), d.allocatable.as_ref().and_then(|a| a.count))).collect(),
            }),
            _ => None,
        })
        .collect();
    StorageView { classes, claims, volumes, attachments, drivers, csi_nodes }
}

/// A PV's node affinity in a few words: the zone(s) or node(s) it is pinned to.
fn affinity(pv: &PersistentVolume) -> String {
    let Some(required) = pv.spec.as_ref().and_then(|s| s.node_affinity.as_ref()).and_then(|a| a.required.as_ref()) else { return String::new() };
    let mut parts: Vec<String> = Vec::new();
    for term in &required.node_selector_terms {
        for expr in term.match_expressions.iter().flatten() {
            let values = expr.values.clone().unwrap_or_default().join(",");
            let key = match expr.key.as_str() {
                "topology.kubernetes.io/zone" => "zone",
                "kubernetes.io/hostname" | HOSTPATH_TOPOLOGY_KEY => "node",
                other => other,
            };
            let part = format!("{key} {values}");
            if !parts.contains(&part) {
                parts.push(part);
            }
        }
    }
    parts.join("; ")
}

/// The node a PV's data lives on, for volumes that live on one node (hostPath, local, the
/// host-path CSI driver).
fn volume_node(pv: &PersistentVolume) -> Option<String> {
    if let Some(node) = local_volume_node_names(pv).into_iter().next() {
        return Some(node);
    }
    let required = pv.spec.as_ref()?.node_affinity.as_ref()?.required.as_ref()?;
    required
        .node_selector_terms
        .iter()
        .flat_map(|t| t.match_expressions.iter().flatten())
        .find(|e| e.key == HOSTPATH_TOPOLOGY_KEY)
        .and_then(|e| e.values.as_ref()?.first().cloned())
}

#[allow(clippy::too_many_arguments)]
fn claim_row(
    world: &World,
    pvc: &PersistentVolumeClaim,
    namespace: &str,
    name: &str,
    users: &[Consumer],
    classes: &[StorageClass],
    pvs: &BTreeMap<String, PersistentVolume>,
    drivers: &BTreeMap<String, CSIDriver>,
    attachments: &[VolumeAttachment],
    warnings: &BTreeMap<(String, String, String), (Millis, String, String)>,
) -> ClaimRow {
    let spec = pvc.spec.clone().unwrap_or_default();
    let annotations = pvc.metadata.annotations.clone().unwrap_or_default();
    let class_name = claim_class(pvc);
    let class = classes.iter().find(|c| c.metadata.name.as_deref() == Some(class_name.as_str()));
    let wait_for_consumer = class.and_then(|c| c.volume_binding_mode.as_deref()) == Some("WaitForFirstConsumer");
    let phase_word = pvc.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_else(|| "Pending".into());
    let bound = phase_word == "Bound";
    let volume_name = spec.volume_name.clone().filter(|v| !v.is_empty());
    let pv = volume_name.as_ref().and_then(|v| pvs.get(v));
    let selected_node = annotations.get(ANN_SELECTED_NODE).cloned();
    let warning = |kind: &str, name: &str| warnings.get(&(kind.to_string(), namespace.to_string(), name.to_string())).map(|(_, r, m)| (r.clone(), m.clone()));
    let claim_warning = warning("PersistentVolumeClaim", name);

    // provision
    let provisioner = annotations.get(ANN_STORAGE_PROVISIONER).cloned().or_else(|| annotations.get("volume.beta.kubernetes.io/storage-provisioner").cloned());
    let provision = match pv {
        Some(pv) => {
            let by = pv.metadata.annotations.as_ref().and_then(|a| a.get("pv.kubernetes.io/provisioned-by").cloned());
            let on = volume_node(pv)
                .map(|n| format!(" on {n}"))
                .or_else(|| Some(affinity(pv)).filter(|a| !a.is_empty()).map(|a| format!(" in {a}")))
                .unwrap_or_default();
            let detail = match by {
                Some(by) => format!("{}{on} by {by}", pv.metadata.name.clone().unwrap_or_default()),
                None => format!("{}{on} (pre-provisioned)", pv.metadata.name.clone().unwrap_or_default()),
            };
            PathStep { step: Step::Provision, state: StepState::Done, detail }
        }
        None if volume_name.is_some() => {
            PathStep { step: Step::Provision, state: StepState::Failed, detail: format!("volume {} does not exist", volume_name.clone().unwrap_or_default()) }
        }
        None if wait_for_consumer && selected_node.is_none() => {
            PathStep { step: Step::Provision, state: StepState::Waiting, detail: "waiting for first consumer to be created before binding".into() }
        }
        None => match (&claim_warning, &provisioner) {
            (Some((reason, message)), _) if reason == "ProvisioningFailed" => {
                PathStep { step: Step::Provision, state: StepState::Failed, detail: message.clone() }
            }
            (_, Some(p)) => PathStep {
                step: Step::Provision,
                state: StepState::Active,
                detail: match &selected_node {
                    Some(n) => format!("{p} is creating a volume for {n}"),
                    None => format!("{p} is creating a volume"),
                },
            },
            _ => PathStep {
                step: Step::Provision,
                state: StepState::Waiting,
                detail: if class.is_none() && !class_name.is_empty() {
                    format!("storageclass {class_name:?} not found")
                } else {
                    "waiting for a matching volume".into()
                },
            },
        },
    };
    // bind
    let bind = if bound {
        PathStep { step: Step::Bind, state: StepState::Done, detail: format!("bound to {}", volume_name.clone().unwrap_or_default()) }
    } else if phase_word == "Lost" {
        PathStep { step: Step::Bind, state: StepState::Failed, detail: "the bound volume is gone (Lost)".into() }
    } else if provision.state == StepState::Done {
        PathStep { step: Step::Bind, state: StepState::Active, detail: "the PV controller is binding".into() }
    } else {
        PathStep { step: Step::Bind, state: StepState::Todo, detail: String::new() }
    };

    // The consumer whose node the rest of the path is shown for: one whose volume is
    // published, else the first on a node.
    let csi = pv.and_then(pv_csi_source);
    let published_for = |c: &Consumer| -> bool {
        let (Some(node), Some(pv)) = (&c.node, pv) else { return false };
        let Some(host) = world.host(node) else { return false };
        let pv_name = pv.metadata.name.clone().unwrap_or_default();
        match csi {
            Some(_) => host.csi.published.contains_key(&pod_volume_path(&c.uid, &pv_name)),
            None => {
                // The kubelet mounted it into a container: the runtime's mounts say so.
                let local = pv.spec.as_ref().and_then(|s| s.host_path.as_ref().map(|h| h.path.clone()).or_else(|| s.local.as_ref().map(|l| l.path.clone())));
                let pod = world.api().store().get(("", "pods"), namespace, &c.name).and_then(|o| o.as_pod().cloned());
                let containers: Vec<String> = pod
                    .and_then(|p| p.spec)
                    .map(|s| s.init_containers.iter().flatten().chain(s.containers.iter()).map(|c| c.name.clone()).collect())
                    .unwrap_or_default();
                containers.iter().filter_map(|n| host.cri.latest_attempt(&c.uid, n)).filter_map(|id| host.cri.container_status(&id).ok()).any(|status| {
                    status.spec.mounts.iter().any(|m| match &local {
                        Some(path) => {
                            m.volume == kubesim_host::NODE_ROOT && m.sub_path.as_deref().is_some_and(|s| s == path || s.starts_with(&format!("{path}/")))
                        }
                        None => m.volume == format!("pv/{pv_name}"),
                    })
                })
            }
        }
    };
    let consumer = users.iter().find(|c| published_for(c)).or_else(|| users.iter().find(|c| c.node.is_some()));
    let node = consumer.and_then(|c| c.node.clone()).or_else(|| selected_node.clone());
    let pod_warning = consumer.and_then(|c| warning("Pod", &c.name));
    let ready_for_node = bound && consumer.is_some();

    // attach
    // The CSI driver: the PV's, else (not provisioned yet) the class's provisioner when it is
    // a CSI driver. Volumes of other provisioners (local-path) are directories on a node.
    let driver = csi.map(|c| c.driver.clone()).or_else(|| class.map(|c| c.provisioner.clone()).filter(|p| pv.is_none() && drivers.contains_key(p)));
    let needs_attach = driver.is_some() && attach_required(driver.as_ref().and_then(|d| drivers.get(d)));
    let attach = if !needs_attach {
        PathStep {
            step: Step::Attach,
            state: StepState::Skipped,
            detail: match &driver {
                Some(d) => format!("{d} does not attach"),
                None => "a directory on its node: nothing to attach".into(),
            },
        }
    } else if let (Some(csi), Some(node)) = (csi, consumer.and_then(|c| c.node.clone())) {
        let va_name = attachment_name(&csi.volume_handle, &csi.driver, &node);
        let va = attachments.iter().find(|va| va.metadata.name.as_deref() == Some(va_name.as_str()));
        match va {
            Some(va) if va.status.as_ref().is_some_and(|s| s.attached) => {
                let device = va.status.as_ref().and_then(|s| s.attachment_metadata.as_ref()).and_then(|m| m.get("devicePath").cloned());
                PathStep {
                    step: Step::Attach,
                    state: StepState::Done,
                    detail: match device {
                        Some(d) => format!("attached to {node} as {d}"),
                        None => format!("attached to {node}"),
                    },
                }
            }
            Some(va) => match va.status.as_ref().and_then(|s| s.attach_error.as_ref()).and_then(|e| e.message.clone()) {
                Some(error) => PathStep { step: Step::Attach, state: StepState::Failed, detail: error },
                None => PathStep { step: Step::Attach, state: StepState::Active, detail: format!("{} is attaching it to {node}", csi.driver) },
            },
            None => match &pod_warning {
                Some((reason, message)) if reason == "FailedAttachVolume" => PathStep { step: Step::Attach, state: StepState::Failed, detail: message.clone() },
                _ if bound => {
                    PathStep { step: Step::Attach, state: StepState::Active, detail: format!("the attach/detach controller is to attach it to {node}") }
                }
                _ => PathStep { step: Step::Attach, state: StepState::Todo, detail: String::new() },
            },
        }
    } else {
        PathStep { step: Step::Attach, state: StepState::Todo, detail: if bound { "no pod on a node uses it".into() } else { String::new() } }
    };
    let attached = matches!(attach.state, StepState::Done | StepState::Skipped) && ready_for_node;
    let mount_failure = |device: bool| -> Option<String> {
        pod_warning.as_ref().filter(|(r, m)| r == "FailedMount" && m.contains("MountDevice") == device).map(|(_, m)| m.clone())
    };

    // stage
    let stages = driver.as_deref().and_then(kubesim_host::csi::Driver::from_name).is_some_and(|d| d.stages());
    let staged = match (csi, &node) {
        (Some(csi), Some(node)) => world.host(node).is_some_and(|h| h.csi.staged.contains_key(&device_mount_path(&csi.driver, &csi.volume_handle))),
        _ => false,
    };
    let node_word = node.clone().unwrap_or_default();
    let stage = if !stages {
        PathStep {
            step: Step::Stage,
            state: StepState::Skipped,
            detail: match &driver {
                Some(d) => format!("{d} does not stage"),
                None => "a directory on its node: nothing to stage".into(),
            },
        }
    } else if staged && attached {
        let fs = csi.and_then(|c| c.fs_type.clone()).unwrap_or_else(|| "ext4".into());
        PathStep { step: Step::Stage, state: StepState::Done, detail: format!("{fs} mounted at the global mount path on {node_word}") }
    } else if attached {
        match mount_failure(true) {
            Some(m) => PathStep { step: Step::Stage, state: StepState::Failed, detail: m },
            None => PathStep { step: Step::Stage, state: StepState::Active, detail: format!("the kubelet on {node_word} is staging it") },
        }
    } else {
        PathStep { step: Step::Stage, state: StepState::Todo, detail: String::new() }
    };

    // publish
    let published = consumer.is_some_and(published_for);
    let pod_name = consumer.map(|c| c.name.clone());
    let publish = if published {
        PathStep {
            step: Step::Publish,
            state: StepState::Done,
            detail: format!("in {}/{}'s directory on {node_word}", namespace, pod_name.clone().unwrap_or_default()),
        }
    } else if attached && matches!(stage.state, StepState::Done | StepState::Skipped) {
        match mount_failure(false).or_else(|| if stages { None } else { mount_failure(true) }) {
            Some(m) => PathStep { step: Step::Publish, state: StepState::Failed, detail: m },
            None => PathStep { step: Step::Publish, state: StepState::Active, detail: format!("the kubelet on {node_word} is mounting it") },
        }
    } else {
        PathStep { step: Step::Publish, state: StepState::Todo, detail: String::new() }
    };

    let path = vec![provision, bind, attach, stage, publish];
    let last_done = path.iter().rev().find(|s| s.state == StepState::Done).map(|s| s.step);
    let stage = match last_done {
        _ if phase_word == "Lost" => ClaimStage::Lost,
        None => match path[0].state {
            StepState::Waiting if wait_for_consumer => ClaimStage::WaitForFirstConsumer,
            StepState::Active | StepState::Failed => ClaimStage::Provisioning,
            _ => ClaimStage::Pending,
        },
        Some(Step::Provision) => ClaimStage::Provisioning,
        Some(Step::Bind) if matches!(path[2].state, StepState::Active | StepState::Failed) => ClaimStage::Attaching,
        Some(Step::Bind) => ClaimStage::Bound,
        Some(Step::Attach) => ClaimStage::Attached,
        Some(Step::Stage) => ClaimStage::Staged,
        Some(Step::Publish) => ClaimStage::Published,
    };
    let problem = path.iter().find(|s| s.state == StepState::Failed).map(|s| s.detail.clone());
    ClaimRow {
        namespace: namespace.to_string(),
        name: name.to_string(),
        phase: if pvc.metadata.deletion_timestamp.is_some() { "Terminating".into() } else { phase_word },
        volume: volume_name,
        capacity: storage_quantity(pvc.status.as_ref().and_then(|s| s.capacity.as_ref())),
        request: storage_quantity(spec.resources.as_ref().and_then(|r| r.requests.as_ref())).unwrap_or_default(),
        access_modes: short_modes(spec.access_modes.as_ref()),
        class: class_name,
        pods: users.iter().map(|c| c.name.clone()).collect(),
        stage,
        node,
        pod: pod_name,
        path,
        problem,
        created_ms: pvc.metadata.creation_timestamp.as_ref().map(millis_of).unwrap_or(0),
    }
}

/// One entry of a volume's file listing.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    /// Path inside the volume (`/log`, `/lost+found/`).
    pub path: String,
    /// A directory.
    pub dir: bool,
    /// Size in bytes (files).
    pub size: u64,
    /// The start of a small text file's content.
    pub preview: Option<String>,
}

/// What a volume holds and where its bytes are.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct VolumeFiles {
    /// Where the bytes are (`disk vol-0… attached to a1 as /dev/xvdaa`, `node-1:/var/…`).
    pub location: String,
    /// The entries, depth first in name order (at most [`FILES_CAP`]).
    pub entries: Vec<FileEntry>,
    /// Entries left out.
    pub omitted: usize,
}

/// The most entries [`volume_files`] lists.
pub const FILES_CAP: usize = 200;

fn walk(node: &kubesim_os::fs::Node, prefix: &str, out: &mut Vec<FileEntry>, omitted: &mut usize) {
    let kubesim_os::fs::NodeKind::Dir(children) = &node.kind else { return };
    for (name, child) in children {
        let path = format!("{prefix}/{name}");
        if out.len() >= FILES_CAP {
            *omitted += 1;
            walk(child, &path, &mut Vec::new(), omitted);
            continue;
        }
        match &child.kind {
            kubesim_os::fs::NodeKind::Dir(_) => {
                out.push(FileEntry { path: format!("{path}/"), dir: true, size: 0, preview: None });
                walk(child, &path, out, omitted);
            }
            kubesim_os::fs::NodeKind::File(data) => {
                let preview = (data.len() <= 4096).then(|| std::str::from_utf8(data).ok()).flatten().map(|s| s.chars().take(400).collect::<String>());
                out.push(FileEntry { path, dir: false, size: data.len() as u64, preview });
            }
            kubesim_os::fs::NodeKind::Symlink(target) => out.push(FileEntry { path: format!("{path} -> {target}"), dir: false, size: 0, preview: None }),
            _ => out.push(FileEntry { path, dir: false, size: 0, preview: None }),
        }
    }
}

fn listing(tree: &kubesim_os::fs::Tree, at: &str, location: String) -> VolumeFiles {
    let mut entries = Vec::new();
    let mut omitted = 0;
    if let Some(node) = tree.get_path(at) {
        walk(node, "", &mut entries, &mut omitted);
    }
    VolumeFiles { location, entries, omitted }
}

/// The files in PersistentVolume `pv_name`, wherever its bytes are now: a disk's device on the
/// machine it is attached to (or its content in the cloud while detached), the host-path
/// driver's directory on its node, a hostPath/local PV's directory on its node. `None` when
/// the PV does not exist or its data is nowhere yet (a directory not created until the first
/// mount).
pub fn volume_files(world: &World, pv_name: &str) -> Option<VolumeFiles> {
    let pv = world.api().store().get(("", "persistentvolumes"), "", pv_name)?.decode::<PersistentVolume>()?;
    let spec = pv.spec.clone().unwrap_or_default();
    if let Some(csi) = &spec.csi {
        let handle = csi.volume_handle.as_str();
        match kubesim_host::csi::Driver::from_name(&csi.driver)? {
            kubesim_host::csi::Driver::Disk => {
                let cloud = world.runtime().cloud();
                let disk = cloud.disk(handle)?;
                if let Some(a) = &disk.attachment {
                    if let Some(tree) = world.host(&a.node).and_then(|h| h.cri.volumes.trees.get(&kubesim_host::cloud::device_volume(handle))) {
                        return Some(listing(tree, "/", format!("disk {handle} attached to {} as {}", a.node, a.device)));
                    }
                    let formatted = world.host(&a.node).and_then(|h| h.devices.get(handle)).is_some_and(|d| d.filesystem.is_some());
                    if !formatted {
                        return Some(VolumeFiles {
                            location: format!("disk {handle} attached to {} as {} (not formatted yet)", a.node, a.device),
                            entries: Vec::new(),
                            omitted: 0,
                        });
                    }
                }
                let content = cloud.detached_content(handle)?;
                let zone = disk.zone.clone().map(|z| format!(" in {z}")).unwrap_or_default();
                if content.filesystem.is_none() {
                    return Some(VolumeFiles { location: format!("disk {handle}{zone}, detached (not formatted yet)"), entries: Vec::new(), omitted: 0 });
                }
                Some(listing(&content.tree, "/", format!("disk {handle}{zone}, detached")))
            }
            kubesim_host::csi::Driver::HostPath => {
                let node = volume_node(&pv)?;
                let dir = format!("{}/{handle}", kubesim_host::csi::HOSTPATH_DATA_DIR);
                let tree = world.host(&node)?.cri.volumes.trees.get(kubesim_host::NODE_ROOT)?;
                tree.get_path(&dir)?;
                Some(listing(tree, &dir, format!("{node}:{dir}")))
            }
        }
    } else if let Some(path) = spec.host_path.as_ref().map(|h| h.path.clone()).or_else(|| spec.local.as_ref().map(|l| l.path.clone())) {
        let nodes: Vec<String> = match volume_node(&pv) {
            Some(n) => vec![n],
            None => world.node_names().cloned().collect(),
        };
        nodes.into_iter().find_map(|node| {
            let tree = world.host(&node)?.cri.volumes.trees.get(kubesim_host::NODE_ROOT)?;
            tree.get_path(&path)?;
            Some(listing(tree, &path, format!("{node}:{path}")))
        })
    } else {
        let id = format!("pv/{pv_name}");
        world.node_names().cloned().collect::<Vec<_>>().into_iter().find_map(|node| {
            let tree = world.host(&node)?.cri.volumes.trees.get(&id)?;
            Some(listing(tree, "/", format!("{node}: volume {id}")))
        })
    }
}
