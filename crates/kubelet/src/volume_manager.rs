//! The volume manager for CSI volumes (pkg/kubelet/volumemanager over the `kubernetes.io/csi`
//! plugin, pkg/volume/csi), and the kubelet's CSI plugin registration.
//!
//! Plugin registration (pluginmanager + csi_plugin.go `RegisterPlugin` + nodeinfomanager): the
//! node plugins of the machine (`Host::csi.plugins`, see `kubesim_host::csi` for why they are
//! part of the machine) register once the kubelet is up: NodeGetInfo, the driver's topology
//! segment as labels on the Node (a value that differs from an existing label is a collision
//! and fails the registration), and the driver in the node's CSINode
//! `spec.drivers[{name, nodeID, topologyKeys, allocatable.count}]` — the CSINode is created with
//! the Node as owner and the migrated-plugins annotation.
//!
//! The volume manager keeps a desired state (the CSI volumes of the pods the kubelet runs, from
//! their bound claims; the populator runs when a pod syncs) and an actual state (attached,
//! device-mounted = staged, mounted = published), and its reconciler (every 100 ms while there
//! is work) moves one towards the other, one operation per volume at a time, each with the
//! driver's modelled latency and recorded as a `csi/<node>` note:
//!
//! - unmount: NodeUnpublishVolume for volumes of pods that are gone or terminated;
//! - attach/mount: VerifyControllerAttachedVolume (for drivers that attach: the volume must be
//!   reported in `node.status.volumesInUse` and listed in `status.volumesAttached` by the
//!   attach/detach controller), MountDevice = WaitForAttach (the VolumeAttachment is attached)
//!   then NodeStageVolume at the global mount path (drivers with STAGE_UNSTAGE_VOLUME), SetUp =
//!   NodePublishVolume at the pod's target path; failures are `FailedMount` events
//!   (`MountVolume.MountDevice failed for volume …`, `MountVolume.SetUp failed …`) retried with
//!   exponential backoff (500 ms doubling to 2m2s);
//! - unmount devices: NodeUnstageVolume once no pod on the node uses the volume; then the volume
//!   leaves the actual state and `volumesInUse`, and the controller may detach it.
//! - expand (volume expansion, node_expander.go): a mounted, writable volume whose PV is larger
//!   than its claim's `status.capacity` while the claim's `allocatedResourceStatuses.storage`
//!   is NodeResizePending (or NodeResizeInProgress) gets `MarkNodeExpansionInProgress`, then
//!   NodeExpandVolume; success is event Normal `FileSystemResizeSuccessful` `MountVolume.
//!   NodeExpandVolume succeeded for volume "<pv>" <node>` on the pod and on the claim and
//!   `MarkNodeExpansionFinishedWithRecovery` (capacity = the PV's, the resize conditions and
//!   status gone). A volume just published for a new pod counts as unmounted until its
//!   expansion ended (the mount operation includes it); a running pod's volumes are looked at
//!   again at the pod resync (`syncFrequency`, 1 min), as `ReprocessPod` does. A read-only
//!   mount is not grown: Warning `FileSystemResizeFailed` `MountVolume.NodeExpandVolume failed
//!   for volume "<pv>" requested read-only file system` on the pod and the claim.
//!
//! A pod's sync waits for its CSI volumes (`WaitForAttachAndMount`: polled every 300 ms, up to
//! 2m3s) before its sandbox is created. On a timeout v1.34's kubelet records no event
//! (`wait.Interrupted` is true for the poll deadline): the error is noted in the trace and the
//! pod worker retries after its backoff. Errors of the desired-state populator (a claim that is
//! not bound, a volume that does not exist) end the wait at once with `FailedMount`
//! `Unable to attach or mount volumes: unmounted volumes=[…], unattached volumes=[…], failed to
//! process volumes=[…]: <error>`. A terminating pod is deleted only after its volumes are
//! unpublished (`podResourcesAreReclaimed`).

use crate::kubelet::{Kubelet, Wake};
use kubesim_api::csi::{attach_required, attachment_name, device_mount_path, pod_volume_path, pv_csi_source, unique_volume_name};
use kubesim_api::k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use kubesim_api::k8s_openapi::api::storage::v1::{CSINode, CSINodeDriver, CSINodeSpec, VolumeNodeResources};
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::Object;
use kubesim_api::quantity::{format_value, Format};
use kubesim_api::storage::{claim_capacity, claim_resize_status, merge_resize_conditions, volume_capacity, NODE_RESIZE_IN_PROGRESS, NODE_RESIZE_PENDING};
use kubesim_api::Millis;
use kubesim_host::csi::{latency_ms, CsiCall, Driver};
use kubesim_host::Host;
use kubesim_runtime::Ctx;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// `reconcilerLoopSleepPeriod`.
pub const RECONCILER_LOOP_MS: Millis = 100;
/// `podAttachAndMountTimeout` (2m3s).
pub const POD_ATTACH_AND_MOUNT_TIMEOUT_MS: Millis = 123_000;
/// `podAttachAndMountRetryInterval`.
pub const POD_ATTACH_AND_MOUNT_RETRY_MS: Millis = 300;
/// nestedpendingoperations: the first retry after a failed volume operation.
pub const OPERATION_BACKOFF_INITIAL_MS: Millis = 500;
/// nestedpendingoperations: the longest wait between retries (2m2s).
pub const OPERATION_BACKOFF_MAX_MS: Millis = 122_000;
/// `syncFrequency` (KubeletConfiguration default 1m): how often a running pod is synced again,
/// which reprocesses its volumes (`ReprocessPod`) and so notices a claim that waits for the
/// node to grow its filesystem.
pub const SYNC_FREQUENCY_MS: Millis = 60_000;
/// How long after the kubelet starts the node plugins register (node-driver-registrar).
pub const PLUGIN_REGISTRATION_MS: Millis = 1_000;
/// The annotation nodeinfomanager puts on every CSINode.
pub const MIGRATED_PLUGINS_ANNOTATION: &str = "storage.alpha.kubernetes.io/migrated-plugins";
/// The in-tree plugins v1.34 migrates to CSI (the annotation's value).
pub const MIGRATED_PLUGINS: &str =
    "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume";

/// A pod volume backed by a CSI PersistentVolume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsiVolume {
    /// The pod's name for it (`spec.volumes[].name`).
    pub outer_name: String,
    /// The unique volume name (`kubernetes.io/csi/<driver>^<handle>`).
    pub unique: String,
    /// The PV.
    pub pv: String,
    /// The driver name.
    pub driver: String,
    /// The volume handle.
    pub handle: String,
    /// Whether the driver attaches (CSIDriver `attachRequired`).
    pub attachable: bool,
    /// The PV's `csi.fsType`.
    pub fs_type: String,
    /// Mounted read-only (the claim reference or the PV says so).
    pub read_only: bool,
    /// The claim's namespace and name ("" for volumes reconstructed from the node's mounts).
    pub claim: (String, String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct AttachedVolume {
    volume: CsiVolume,
    device_mounted: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Operation {
    MountDevice {
        unique: String,
        pod: String,
    },
    UnmountDevice {
        unique: String,
    },
    SetUp {
        unique: String,
        pod: String,
    },
    TearDown {
        unique: String,
        pod: String,
    },
    /// NodeExpandVolume of a pod's mounted volume to `size` bytes.
    Expand {
        unique: String,
        pod: String,
        size: i128,
    },
}

/// The pending/backoff key of a volume's node expansion.
const EXPAND_KEY: &str = "expand";

/// The volume manager's state.
#[derive(Clone, Debug, Default)]
pub struct VolumeManager {
    /// Pod uid → outer volume name → volume.
    desired: BTreeMap<String, BTreeMap<String, CsiVolume>>,
    /// Pod uid → the pod (events are recorded on it).
    pods: BTreeMap<String, Arc<Object>>,
    /// Pod uid → the populator's errors (outer name, message).
    pod_errors: BTreeMap<String, Vec<(String, String)>>,
    /// Unique name → attached volume.
    attached: BTreeMap<String, AttachedVolume>,
    /// (pod uid, unique name) → the mounted volume.
    mounted: BTreeMap<(String, String), CsiVolume>,
    /// The volumes the last node status write reported in use.
    reported_in_use: BTreeSet<String>,
    /// Operations in flight, by timer id.
    operations: BTreeMap<u64, Operation>,
    /// (unique name, pod uid or "") with an operation in flight.
    pending: BTreeSet<(String, String)>,
    /// (unique name, pod uid or "") → (no retry before, the last backoff).
    backoff: BTreeMap<(String, String), (Millis, Millis)>,
    next_operation: u64,
    loop_armed: bool,
    /// (pod uid, unique name) mounted by a SetUp whose node expansion has not finished: still
    /// unmounted for WaitForAttachAndMount (the mount operation includes the expansion).
    expanding_on_mount: BTreeSet<(String, String)>,
    /// The periodic pod resync that re-reads claims of mounted volumes is armed.
    resync_armed: bool,
    /// The node plugins registered.
    pub registered: bool,
}

impl VolumeManager {
    /// `GetVolumesInUse`: the attachable volumes desired or attached, sorted.
    pub fn volumes_in_use(&self) -> Vec<String> {
        let mut names: BTreeSet<String> = self.desired.values().flat_map(|v| v.values()).filter(|v| v.attachable).map(|v| v.unique.clone()).collect();
        names.extend(self.attached.values().filter(|a| a.volume.attachable).map(|a| a.volume.unique.clone()));
        names.into_iter().collect()
    }

    /// `MarkVolumesAsReportedInUse`, after a node status write that listed them.
    pub fn mark_reported_in_use(&mut self, names: &[String]) {
        self.reported_in_use = names.iter().cloned().collect();
    }

    /// Whether a pod still has CSI volumes mounted.
    pub fn has_mounted(&self, pod_uid: &str) -> bool {
        self.mounted.keys().any(|(p, _)| p == pod_uid)
    }

    /// The pod's desired volumes that are not mounted (outer names, sorted) and those of them
    /// not attached yet.
    fn unmounted(&self, pod_uid: &str) -> (Vec<String>, Vec<String>) {
        let mut unmounted = Vec::new();
        let mut unattached = Vec::new();
        for (name, volume) in self.desired.get(pod_uid).into_iter().flatten() {
            let key = (pod_uid.to_string(), volume.unique.clone());
            if !self.mounted.contains_key(&key) || self.expanding_on_mount.contains(&key) {
                unmounted.push(name.clone());
                if !self.attached.contains_key(&volume.unique) {
                    unattached.push(name.clone());
                }
            }
        }
        for (name, _) in self.pod_errors.get(pod_uid).into_iter().flatten() {
            if !unmounted.contains(name) {
                unmounted.push(name.clone());
            }
            if !unattached.contains(name) {
                unattached.push(name.clone());
            }
        }
        kubesim_api::sort::sort(&mut unmounted);
        kubesim_api::sort::sort(&mut unattached);
        (unmounted, unattached)
    }

    /// The process died (power loss): in-flight calls and armed timers are gone, and the
    /// machine's mounts with them.
    pub fn powered_off(&mut self) {
        self.operations.clear();
        self.pending.clear();
        self.loop_armed = false;
        self.resync_armed = false;
        self.expanding_on_mount.clear();
        self.registered = false;
        self.mounted.clear();
        self.attached.clear();
        self.reported_in_use.clear();
    }

    /// `reconstructVolumes` after a restart: what the node plugins have staged and published.
    pub fn reconstruct(&mut self, host: &Host) {
        self.operations.clear();
        self.pending.clear();
        self.loop_armed = false;
        self.resync_armed = false;
        self.expanding_on_mount.clear();
        self.mounted.clear();
        self.attached.clear();
        for (target, published) in &host.csi.published {
            let Some(rest) = target.strip_prefix(&format!("{}/pods/", kubesim_api::csi::KUBELET_ROOT)) else { continue };
            let Some((pod, rest)) = rest.split_once('/') else { continue };
            let pv = rest.trim_start_matches("volumes/kubernetes.io~csi/").trim_end_matches("/mount").to_string();
            let volume = CsiVolume {
                outer_name: String::new(),
                unique: unique_volume_name(published.driver.name(), &published.volume_id),
                pv,
                driver: published.driver.name().to_string(),
                handle: published.volume_id.clone(),
                attachable: published.driver != Driver::HostPath,
                fs_type: String::new(),
                read_only: published.read_only,
                claim: (String::new(), String::new()),
            };
            self.attached.entry(volume.unique.clone()).or_insert_with(|| AttachedVolume { volume: volume.clone(), device_mounted: true });
            self.mounted.insert((pod.to_string(), volume.unique.clone()), volume);
        }
        for staged in host.csi.staged.values() {
            let unique = unique_volume_name(staged.driver.name(), &staged.volume_id);
            if let Some(a) = self.attached.get_mut(&unique) {
                a.device_mounted = true;
            } else {
                let volume = CsiVolume {
                    outer_name: String::new(),
                    unique: unique.clone(),
                    pv: String::new(),
                    driver: staged.driver.name().to_string(),
                    handle: staged.volume_id.clone(),
                    attachable: staged.driver != Driver::HostPath,
                    fs_type: String::new(),
                    read_only: false,
                    claim: (String::new(), String::new()),
                };
                self.attached.insert(unique, AttachedVolume { volume, device_mounted: true });
            }
        }
    }
}

/// The CSI volumes of a pod from its bound claims (claims that are not bound to a CSI volume
/// are the other volume plugins' business), and the populator's errors.
fn pod_csi_volumes(pod: &Pod, ctx: &Ctx) -> (BTreeMap<String, CsiVolume>, Vec<(String, String)>) {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let mut volumes = BTreeMap::new();
    let mut errors = Vec::new();
    for volume in pod.spec.as_ref().and_then(|s| s.volumes.as_ref()).into_iter().flatten() {
        let Some((claim, _)) = kubesim_api::pod::volume_claim(&pod_name, volume) else { continue };
        let claim_ro = volume.persistent_volume_claim.as_ref().and_then(|c| c.read_only).unwrap_or(false);
        let Some(pvc) = ctx.api.lookup(("", "persistentvolumeclaims"), &namespace, &claim).and_then(|o| o.decode::<PersistentVolumeClaim>()) else { continue };
        let Some(pv_name) = pvc.spec.as_ref().and_then(|s| s.volume_name.clone()).filter(|v| !v.is_empty()) else { continue };
        if pvc.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Bound") {
            continue;
        }
        let Some(pv) = ctx.api.lookup(("", "persistentvolumes"), "", &pv_name).and_then(|o| o.decode::<PersistentVolume>()) else {
            errors.push((
                volume.name.clone(),
                format!("error processing PVC {namespace}/{claim}: failed to fetch PV {pv_name:?} from API server: persistentvolumes {pv_name:?} not found"),
            ));
            continue;
        };
        let Some(csi) = pv_csi_source(&pv) else { continue };
        let driver = match ctx.api.lookup(("storage.k8s.io", "csidrivers"), "", &csi.driver).map(|o| o.as_ref()) {
            Some(Object::CSIDriver(d)) => Some((**d).clone()),
            _ => None,
        };
        volumes.insert(
            volume.name.clone(),
            CsiVolume {
                outer_name: volume.name.clone(),
                unique: unique_volume_name(&csi.driver, &csi.volume_handle),
                pv: pv_name,
                driver: csi.driver.clone(),
                handle: csi.volume_handle.clone(),
                attachable: attach_required(driver.as_ref()),
                fs_type: csi.fs_type.clone().unwrap_or_default(),
                read_only: claim_ro || csi.read_only.unwrap_or(false),
                claim: (namespace.clone(), claim.clone()),
            },
        );
    }
    (volumes, errors)
}

/// The claim of a volume, typed.
fn volume_claim_of(volume: &CsiVolume, ctx: &Ctx) -> Option<(Arc<Object>, PersistentVolumeClaim)> {
    let object = ctx.api.lookup(("", "persistentvolumeclaims"), &volume.claim.0, &volume.claim.1)?.clone();
    let claim = object.decode::<PersistentVolumeClaim>()?;
    Some((object, claim))
}

/// `checkVolumeFSResize` and the NodeExpander's pre-check (node_expander.go `runPreCheck`):
/// the size to grow a mounted, writable volume's filesystem to — its PV's capacity — when the
/// claim records less and its `allocatedResourceStatuses.storage` says the node's part is
/// pending or in progress.
fn node_expansion_size(volume: &CsiVolume, ctx: &Ctx) -> Option<i128> {
    if volume.read_only {
        return None;
    }
    expansion_wanted(volume, ctx)
}

/// [`node_expansion_size`] whether or not the volume is mounted read-only.
fn expansion_wanted(volume: &CsiVolume, ctx: &Ctx) -> Option<i128> {
    if volume.claim.1.is_empty() {
        return None;
    }
    let (_, claim) = volume_claim_of(volume, ctx)?;
    let pv = ctx.api.lookup(("", "persistentvolumes"), "", &volume.pv)?.decode::<PersistentVolume>()?;
    let size = volume_capacity(&pv);
    let status = claim_resize_status(&claim);
    (size > claim_capacity(&claim) && (status == NODE_RESIZE_PENDING || status == NODE_RESIZE_IN_PROGRESS)).then_some(size)
}

/// A claim as the API server keeps it (JSON).
fn encode_claim(claim: &PersistentVolumeClaim) -> Option<Object> {
    let json = serde_json::to_value(claim).ok()?;
    Object::from_json(kubesim_api::kind_info("v1", "PersistentVolumeClaim")?, json).ok()
}

impl Kubelet {
    /// Plugin registration of the machine's node plugins: topology labels on the Node, the
    /// drivers in the CSINode.
    pub(crate) fn register_csi_plugins(&mut self, host: &mut Host, ctx: &mut Ctx) {
        let name = self.setup.name.clone();
        let Some(Object::Node(node)) = ctx.api.lookup(("", "nodes"), "", &name).map(|o| (**o).clone()) else { return };
        let mut node = *node;
        let mut drivers: Vec<CSINodeDriver> = Vec::new();
        let mut labels = node.metadata.labels.clone().unwrap_or_default();
        for driver in host.csi.plugins.clone() {
            let info = driver.node_get_info(host);
            ctx.note(format!("csi/{name}"), CsiCall::NodeGetInfo.name(), format!("{} nodeID={}", driver.name(), info.node_id));
            // nodeinfomanager updateTopologyLabels: a different existing value is a collision.
            if let Some((key, value)) = info.accessible_topology.iter().find(|(k, v)| labels.get(*k).is_some_and(|existing| existing != *v)) {
                let existing = labels.get(key).cloned().unwrap_or_default();
                ctx.note(
                    format!("kubelet/{name}"),
                    "RegisterPlugin",
                    format!(
                        "{} failed: detected topology value collision: driver reported {key:?}:{value:?} but existing label is {key:?}:{existing:?}",
                        driver.name()
                    ),
                );
                continue;
            }
            labels.extend(info.accessible_topology.iter().map(|(k, v)| (k.clone(), v.clone())));
            drivers.push(CSINodeDriver {
                name: driver.name().to_string(),
                node_id: info.node_id,
                topology_keys: Some(info.accessible_topology.keys().cloned().collect()).filter(|k: &Vec<String>| !k.is_empty()),
                allocatable: (info.max_volumes_per_node > 0).then_some(VolumeNodeResources { count: Some(info.max_volumes_per_node as i32) }),
            });
        }
        if node.metadata.labels.as_ref() != Some(&labels) {
            node.metadata.labels = Some(labels);
            let _ = ctx.update(Object::Node(Box::new(node.clone())));
        }
        let existing = match ctx.api.lookup(("storage.k8s.io", "csinodes"), "", &name).map(|o| o.as_ref()) {
            Some(Object::CSINode(c)) => Some((**c).clone()),
            _ => None,
        };
        let written = match existing {
            Some(mut csinode) => {
                for driver in drivers {
                    match csinode.spec.drivers.iter_mut().find(|d| d.name == driver.name) {
                        Some(d) => *d = driver,
                        None => csinode.spec.drivers.push(driver),
                    }
                }
                ctx.update(Object::CSINode(Box::new(csinode))).is_ok()
            }
            None => {
                let csinode = CSINode {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        annotations: Some([(MIGRATED_PLUGINS_ANNOTATION.to_string(), MIGRATED_PLUGINS.to_string())].into_iter().collect()),
                        owner_references: Some(vec![crate::node_status::node_owner(&node)]),
                        ..Default::default()
                    },
                    spec: CSINodeSpec { drivers },
                };
                ctx.create(Object::CSINode(Box::new(csinode))).is_ok()
            }
        };
        self.volumes.registered = written;
    }

    /// The desired-state populator for one pod (ReprocessPod).
    pub(crate) fn populate_pod_volumes(&mut self, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get(uid) else { return };
        let (volumes, errors) = pod_csi_volumes(worker.pod(), ctx);
        let object = worker.pod.clone();
        let vm = &mut self.volumes;
        if volumes.is_empty() && errors.is_empty() {
            let had = vm.desired.remove(uid).is_some();
            vm.pod_errors.remove(uid);
            vm.pods.remove(uid);
            if had {
                self.arm_volume_loop(ctx);
            }
            return;
        }
        let changed = vm.desired.get(uid) != Some(&volumes);
        vm.desired.insert(uid.to_string(), volumes);
        vm.pods.insert(uid.to_string(), object);
        if errors.is_empty() {
            vm.pod_errors.remove(uid);
        } else {
            vm.pod_errors.insert(uid.to_string(), errors);
        }
        if changed {
            self.arm_volume_loop(ctx);
        }
    }

    /// The pod's volumes leave the desired state (terminated, gone).
    pub(crate) fn remove_pod_volumes(&mut self, uid: &str, ctx: &mut Ctx) {
        let vm = &mut self.volumes;
        let had = vm.desired.remove(uid).is_some();
        vm.pod_errors.remove(uid);
        if had || vm.has_mounted(uid) {
            self.arm_volume_loop(ctx);
        }
    }

    pub(crate) fn arm_volume_loop(&mut self, ctx: &mut Ctx) {
        if !self.volumes.loop_armed {
            self.volumes.loop_armed = true;
            self.timers.arm(ctx, RECONCILER_LOOP_MS, Wake::VolumeLoop);
        }
    }

    /// `WaitForAttachAndMount` as SyncPod calls it: true when every CSI volume of the pod is
    /// mounted; otherwise the worker polls (every 300 ms, up to 2m3s) and the sync stops here.
    pub(crate) fn volumes_ready(&mut self, uid: &str, ctx: &mut Ctx) -> bool {
        self.populate_pod_volumes(uid, ctx);
        let (unmounted, _) = self.volumes.unmounted(uid);
        let Some(worker) = self.workers.get_mut(uid) else { return false };
        if unmounted.is_empty() {
            worker.volume_wait_since = None;
            return true;
        }
        if worker.volume_wait_since.is_none() {
            worker.volume_wait_since = Some(ctx.now);
            let seq = worker.seq;
            self.timers.arm(ctx, POD_ATTACH_AND_MOUNT_RETRY_MS, Wake::VolumeWait(seq));
        }
        false
    }

    /// One poll of a waiting pod worker.
    pub(crate) fn on_volume_wait(&mut self, host: &mut Host, uid: &str, ctx: &mut Ctx) {
        let Some(worker) = self.workers.get(uid) else { return };
        let Some(since) = worker.volume_wait_since else { return };
        let seq = worker.seq;
        let object = worker.pod.clone();
        if !worker.active() || worker.pod().metadata.deletion_timestamp.is_some() {
            // The pod worker's context was cancelled: the wait ends without an event.
            self.workers.get_mut(uid).expect("worker").volume_wait_since = None;
            self.sync(host, uid, ctx);
            return;
        }
        let (unmounted, unattached) = self.volumes.unmounted(uid);
        if unmounted.is_empty() {
            self.workers.get_mut(uid).expect("worker").volume_wait_since = None;
            self.sync(host, uid, ctx);
            return;
        }
        let failed: Vec<String> = self.volumes.pod_errors.get(uid).into_iter().flatten().map(|(n, _)| n.clone()).collect();
        let list = |names: &[String]| format!("[{}]", names.join(" "));
        let prefix = format!("unmounted volumes={}, unattached volumes={}, failed to process volumes={}", list(&unmounted), list(&unattached), list(&failed));
        if !failed.is_empty() {
            // PopPodErrors: a real error ends the wait at once, and is reported.
            let errors: Vec<String> = self.volumes.pod_errors.remove(uid).unwrap_or_default().into_iter().map(|(_, e)| e).collect();
            ctx.event(&object, "Warning", "FailedMount", format!("Unable to attach or mount volumes: {prefix}: {}", errors.join("; ")));
        } else if ctx.now.saturating_sub(since) >= POD_ATTACH_AND_MOUNT_TIMEOUT_MS {
            // The poll deadline: wait.Interrupted, so no event; the pod worker logs and retries.
            ctx.note(format!("kubelet/{}", self.setup.name), "WaitForAttachAndMount", format!("{prefix}: context deadline exceeded"));
        } else {
            self.timers.arm(ctx, POD_ATTACH_AND_MOUNT_RETRY_MS, Wake::VolumeWait(seq));
            return;
        }
        self.workers.get_mut(uid).expect("worker").volume_wait_since = None;
        self.requeue_after_error(uid, ctx);
    }

    fn volume_event(&self, pod: &str, ctx: &mut Ctx, type_: &str, reason: &str, message: String) {
        if let Some(object) = self.volumes.pods.get(pod).cloned().or_else(|| self.workers.get(pod).map(|w| w.pod.clone())) {
            ctx.event(&object, type_, reason, message);
        }
    }

    fn start_operation(&mut self, op: Operation, driver: Driver, call: CsiCall, ctx: &mut Ctx) {
        let key = match &op {
            Operation::MountDevice { unique, .. } | Operation::UnmountDevice { unique } => (unique.clone(), String::new()),
            Operation::SetUp { unique, pod } | Operation::TearDown { unique, pod } => (unique.clone(), pod.clone()),
            Operation::Expand { unique, .. } => (unique.clone(), EXPAND_KEY.to_string()),
        };
        self.volumes.pending.insert(key);
        let id = self.volumes.next_operation;
        self.volumes.next_operation += 1;
        self.volumes.operations.insert(id, op);
        self.timers.arm(ctx, latency_ms(driver, call), Wake::VolumeOp(id));
    }

    /// ExpandInUseVolume: `MarkNodeExpansionInProgress` on the claim, then NodeExpandVolume
    /// after the call's latency.
    fn start_expand(&mut self, volume: &CsiVolume, pod: String, size: i128, driver: Driver, ctx: &mut Ctx) {
        let key = (volume.unique.clone(), EXPAND_KEY.to_string());
        if let Some((_, mut claim)) = volume_claim_of(volume, ctx) {
            if claim_resize_status(&claim) != NODE_RESIZE_IN_PROGRESS {
                let status = claim.status.get_or_insert_with(Default::default);
                status.allocated_resource_statuses.get_or_insert_with(Default::default).insert("storage".into(), NODE_RESIZE_IN_PROGRESS.into());
                if encode_claim(&claim).is_none_or(|object| ctx.update_status(object).is_err()) {
                    self.operation_failed(key, ctx);
                    return;
                }
            }
        }
        self.start_operation(Operation::Expand { unique: volume.unique.clone(), pod, size }, driver, CsiCall::NodeExpandVolume, ctx);
    }

    fn arm_volume_resync(&mut self, ctx: &mut Ctx) {
        if !self.volumes.resync_armed {
            self.volumes.resync_armed = true;
            self.timers.arm_periodic(ctx, SYNC_FREQUENCY_MS, Wake::VolumeResync);
        }
    }

    /// The periodic pod sync's `ReprocessPod`: a mounted volume whose claim waits for the
    /// node starts the reconciler. Re-armed while volumes are mounted.
    pub(crate) fn on_volume_resync(&mut self, ctx: &mut Ctx) {
        self.volumes.resync_armed = false;
        if self.volumes.mounted.is_empty() {
            return;
        }
        let pending = self.volumes.mounted.keys().any(|(pod, unique)| {
            self.volumes.desired.get(pod).and_then(|v| v.values().find(|d| d.unique == *unique)).is_some_and(|v| node_expansion_size(v, ctx).is_some())
        });
        if pending {
            self.arm_volume_loop(ctx);
        }
        self.arm_volume_resync(ctx);
    }

    fn ready_to_try(&self, key: &(String, String), now: Millis) -> bool {
        !self.volumes.pending.contains(key) && self.volumes.backoff.get(key).is_none_or(|(at, _)| *at <= now)
    }

    fn operation_failed(&mut self, key: (String, String), ctx: &mut Ctx) {
        let last = self.volumes.backoff.get(&key).map(|(_, d)| *d).unwrap_or(0);
        let next = if last == 0 { OPERATION_BACKOFF_INITIAL_MS } else { (last * 2).min(OPERATION_BACKOFF_MAX_MS) };
        self.volumes.backoff.insert(key, (ctx.now + next, next));
    }

    /// One reconciler pass (reconciler.go `reconcile`): unmounts, attaches and mounts, device
    /// unmounts. Re-arms itself while anything is left to do.
    pub(crate) fn volume_reconcile(&mut self, host: &mut Host, ctx: &mut Ctx) {
        self.volumes.loop_armed = false;
        let now = ctx.now;
        // The populator runs for the pods the manager knows.
        let known: Vec<String> = self.volumes.desired.keys().chain(self.volumes.pod_errors.keys()).cloned().collect();
        for uid in known {
            let keep = self.workers.get(&uid).is_some_and(|w| w.active() && !w.volumes_released);
            if keep {
                self.populate_pod_volumes(&uid, ctx);
            } else {
                self.volumes.desired.remove(&uid);
                self.volumes.pod_errors.remove(&uid);
            }
        }
        // The pod objects kept for events: only while the pod has volumes wanted, mounted or
        // in an operation.
        let vm = &mut self.volumes;
        let in_use: BTreeSet<&String> = vm.desired.keys().chain(vm.mounted.keys().map(|(p, _)| p)).chain(vm.pending.iter().map(|(_, p)| p)).collect();
        vm.pods.retain(|uid, _| in_use.contains(uid));
        let mut work_left = false;
        // 1. Unmount volumes no pod wants.
        let mounted: Vec<((String, String), CsiVolume)> = self.volumes.mounted.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        for ((pod, unique), volume) in mounted {
            if self.volumes.desired.get(&pod).is_some_and(|v| v.values().any(|d| d.unique == unique)) {
                continue;
            }
            work_left = true;
            let key = (unique.clone(), pod.clone());
            let Some(driver) = Driver::from_name(&volume.driver) else {
                self.volumes.mounted.remove(&(pod, unique));
                continue;
            };
            if self.ready_to_try(&key, now) {
                self.start_operation(Operation::TearDown { unique, pod }, driver, CsiCall::NodeUnpublishVolume, ctx);
            }
        }
        // 2. Attach (verify) and mount what pods want.
        let node = ctx.api.lookup(("", "nodes"), "", &self.setup.name).and_then(|o| o.as_node().cloned());
        let attached_by_controller: BTreeSet<String> =
            node.as_ref().and_then(|n| n.status.as_ref()).and_then(|s| s.volumes_attached.as_ref()).into_iter().flatten().map(|v| v.name.clone()).collect();
        let wanted: Vec<(String, CsiVolume)> = self.volumes.desired.iter().flat_map(|(pod, v)| v.values().map(move |v| (pod.clone(), v.clone()))).collect();
        for (pod, volume) in wanted {
            if self.volumes.mounted.contains_key(&(pod.clone(), volume.unique.clone())) {
                continue;
            }
            work_left = true;
            let attached = self.volumes.attached.get(&volume.unique).cloned();
            // VerifyControllerAttachedVolume: reported in volumesInUse, and attached according
            // to the node's status (the attach/detach controller's volumesAttached).
            let verified = !volume.attachable || (self.volumes.reported_in_use.contains(&volume.unique) && attached_by_controller.contains(&volume.unique));
            if attached.is_none() && !verified {
                continue;
            }
            let Some(driver) = Driver::from_name(&volume.driver).filter(|d| host.csi.plugins.contains(d) && self.volumes.registered) else {
                let key = (volume.unique.clone(), String::new());
                if self.ready_to_try(&key, now) {
                    let message = format!(
                        "MountVolume.MountDevice failed for volume {:?} : kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name {} not found in the list of registered CSI drivers",
                        volume.pv, volume.driver
                    );
                    self.volume_event(&pod, ctx, "Warning", "FailedMount", message);
                    self.operation_failed(key, ctx);
                }
                continue;
            };
            match attached {
                None => {
                    self.volumes.attached.insert(volume.unique.clone(), AttachedVolume { volume: volume.clone(), device_mounted: !driver.stages() });
                    if driver.stages() {
                        let key = (volume.unique.clone(), String::new());
                        if self.ready_to_try(&key, now) {
                            self.start_operation(Operation::MountDevice { unique: volume.unique.clone(), pod }, driver, CsiCall::NodeStageVolume, ctx);
                        }
                    } else {
                        let key = (volume.unique.clone(), pod.clone());
                        if self.ready_to_try(&key, now) {
                            self.start_operation(Operation::SetUp { unique: volume.unique.clone(), pod }, driver, CsiCall::NodePublishVolume, ctx);
                        }
                    }
                }
                Some(a) if !a.device_mounted => {
                    let key = (volume.unique.clone(), String::new());
                    if self.ready_to_try(&key, now) {
                        self.start_operation(Operation::MountDevice { unique: volume.unique.clone(), pod }, driver, CsiCall::NodeStageVolume, ctx);
                    }
                }
                Some(_) => {
                    let key = (volume.unique.clone(), pod.clone());
                    if self.ready_to_try(&key, now) && !self.volumes.pending.contains(&(volume.unique.clone(), String::new())) {
                        self.start_operation(Operation::SetUp { unique: volume.unique.clone(), pod }, driver, CsiCall::NodePublishVolume, ctx);
                    }
                }
            }
        }
        // 2b. Grow the filesystems of mounted volumes whose claims wait for the node
        // (ExpandInUseVolume, or the expansion step of a mount that just finished).
        let mounted_wanted: Vec<(String, CsiVolume)> = self
            .volumes
            .mounted
            .keys()
            .filter_map(|(pod, unique)| self.volumes.desired.get(pod).and_then(|v| v.values().find(|d| d.unique == *unique)).map(|v| (pod.clone(), v.clone())))
            .collect();
        for (pod, volume) in mounted_wanted {
            let Some(size) = node_expansion_size(&volume, ctx) else {
                self.volumes.expanding_on_mount.remove(&(pod, volume.unique));
                continue;
            };
            work_left = true;
            let key = (volume.unique.clone(), EXPAND_KEY.to_string());
            let Some(driver) = Driver::from_name(&volume.driver) else { continue };
            if self.ready_to_try(&key, now) {
                self.start_expand(&volume, pod, size, driver, ctx);
            }
        }
        // 3. Unmount devices (and forget volumes) no pod uses or wants.
        let attached: Vec<AttachedVolume> = self.volumes.attached.values().cloned().collect();
        for a in attached {
            let unique = a.volume.unique.clone();
            let wanted = self.volumes.desired.values().flat_map(|v| v.values()).any(|v| v.unique == unique);
            let in_use = self.volumes.mounted.keys().any(|(_, u)| *u == unique);
            if wanted || in_use {
                continue;
            }
            work_left = true;
            let key = (unique.clone(), String::new());
            let busy = self.volumes.pending.iter().any(|(u, _)| *u == unique);
            match Driver::from_name(&a.volume.driver).filter(|d| d.stages() && a.device_mounted) {
                Some(driver) if !busy && self.ready_to_try(&key, now) => {
                    self.start_operation(Operation::UnmountDevice { unique }, driver, CsiCall::NodeUnstageVolume, ctx);
                }
                Some(_) => {}
                // MarkVolumeAsDetached: the controller detaches it.
                None if !busy => {
                    self.volumes.attached.remove(&unique);
                }
                None => {}
            }
        }
        if work_left || !self.volumes.operations.is_empty() {
            self.arm_volume_loop(ctx);
        }
        if !self.volumes.mounted.is_empty() {
            // Volumes reconstructed after a restart are resynced too.
            self.arm_volume_resync(ctx);
        }
    }

    /// A volume operation's latency has passed: make the CSI call and record the result.
    pub(crate) fn complete_volume_operation(&mut self, host: &mut Host, id: u64, ctx: &mut Ctx) {
        let Some(op) = self.volumes.operations.remove(&id) else { return };
        let node = self.setup.name.clone();
        let target = format!("csi/{node}");
        match op {
            Operation::MountDevice { unique, pod } => {
                let key = (unique.clone(), String::new());
                self.volumes.pending.remove(&key);
                let Some(volume) = self.volumes.attached.get(&unique).map(|a| a.volume.clone()) else { return };
                let Some(driver) = Driver::from_name(&volume.driver) else { return };
                // WaitForAttach: the VolumeAttachment must be attached; its metadata is the
                // publish context.
                let mut publish_context = BTreeMap::new();
                if volume.attachable {
                    let name = attachment_name(&volume.handle, &volume.driver, &node);
                    let va = match ctx.api.lookup(("storage.k8s.io", "volumeattachments"), "", &name).map(|o| o.as_ref()) {
                        Some(Object::VolumeAttachment(va)) => Some((**va).clone()),
                        _ => None,
                    };
                    let failure = match &va {
                        None => Some(format!(
                            "volume {} has GET error for volume attachment {name}: volumeattachments.storage.k8s.io {name:?} not found",
                            volume.handle
                        )),
                        Some(va) if va.metadata.deletion_timestamp.is_some() => Some("volume attachment is being deleted".to_string()),
                        Some(va) => match va.status.as_ref() {
                            Some(s) if s.attached => {
                                publish_context = s.attachment_metadata.clone().unwrap_or_default();
                                None
                            }
                            Some(s) => s.attach_error.as_ref().map(|e| e.message.clone().unwrap_or_default()),
                            None => None,
                        },
                    };
                    let attached = va.as_ref().and_then(|va| va.status.as_ref()).is_some_and(|s| s.attached);
                    if !attached {
                        // Still waiting (or failed): the operation ends and is retried.
                        if let Some(why) = failure {
                            self.volume_event(
                                &pod,
                                ctx,
                                "Warning",
                                "FailedMount",
                                format!("MountVolume.WaitForAttach failed for volume {:?} : {why}", volume.pv),
                            );
                        }
                        self.operation_failed(key, ctx);
                        self.arm_volume_loop(ctx);
                        return;
                    }
                }
                let staging = device_mount_path(&volume.driver, &volume.handle);
                ctx.note(&target, CsiCall::NodeStageVolume.name(), format!("{} {} at {staging}", volume.pv, volume.handle));
                match driver.node_stage(host, &volume.handle, &staging, &publish_context, &volume.fs_type) {
                    Ok(()) => {
                        self.volumes.backoff.remove(&key);
                        if let Some(a) = self.volumes.attached.get_mut(&unique) {
                            a.device_mounted = true;
                        }
                    }
                    Err(e) => {
                        self.volume_event(&pod, ctx, "Warning", "FailedMount", format!("MountVolume.MountDevice failed for volume {:?} : {e}", volume.pv));
                        self.operation_failed(key, ctx);
                    }
                }
            }
            Operation::SetUp { unique, pod } => {
                let key = (unique.clone(), pod.clone());
                self.volumes.pending.remove(&key);
                let Some(volume) = self.volumes.desired.get(&pod).and_then(|v| v.values().find(|v| v.unique == unique)).cloned() else {
                    self.arm_volume_loop(ctx);
                    return;
                };
                let Some(driver) = Driver::from_name(&volume.driver) else { return };
                let staging = driver.stages().then(|| device_mount_path(&volume.driver, &volume.handle));
                let target_path = pod_volume_path(&pod, &volume.pv);
                ctx.note(&target, CsiCall::NodePublishVolume.name(), format!("{} {} at {target_path}", volume.pv, volume.handle));
                match driver.node_publish(host, &volume.handle, staging.as_deref(), &target_path, volume.read_only) {
                    Ok(()) => {
                        self.volumes.backoff.remove(&key);
                        if node_expansion_size(&volume, ctx).is_some() {
                            // The mount operation grows the filesystem before it completes.
                            self.volumes.expanding_on_mount.insert((pod.clone(), unique.clone()));
                        } else if expansion_wanted(&volume, ctx).is_some() {
                            // nodeExpandVolume of a read-only mount: reported, and the mount
                            // goes on without it.
                            let message = format!("MountVolume.NodeExpandVolume failed for volume {:?} requested read-only file system", volume.pv);
                            self.volume_event(&pod, ctx, "Warning", "FileSystemResizeFailed", message.clone());
                            if let Some((object, _)) = volume_claim_of(&volume, ctx) {
                                ctx.event(&object, "Warning", "FileSystemResizeFailed", message);
                            }
                        }
                        self.volumes.mounted.insert((pod.clone(), unique), volume.clone());
                        self.arm_volume_resync(ctx);
                    }
                    Err(e) => {
                        self.volume_event(&pod, ctx, "Warning", "FailedMount", format!("MountVolume.SetUp failed for volume {:?} : {e}", volume.pv));
                        self.operation_failed(key, ctx);
                    }
                }
            }
            Operation::TearDown { unique, pod } => {
                let key = (unique.clone(), pod.clone());
                self.volumes.pending.remove(&key);
                let Some(volume) = self.volumes.mounted.get(&(pod.clone(), unique.clone())).cloned() else { return };
                let Some(driver) = Driver::from_name(&volume.driver) else { return };
                let target_path = pod_volume_path(&pod, &volume.pv);
                ctx.note(&target, CsiCall::NodeUnpublishVolume.name(), format!("{} {} at {target_path}", volume.pv, volume.handle));
                match driver.node_unpublish(host, &target_path) {
                    Ok(()) => {
                        self.volumes.backoff.remove(&key);
                        self.volumes.mounted.remove(&(pod, unique));
                    }
                    Err(_) => self.operation_failed(key, ctx),
                }
            }
            Operation::Expand { unique, pod, size } => {
                let key = (unique.clone(), EXPAND_KEY.to_string());
                self.volumes.pending.remove(&key);
                let volume = self.volumes.desired.get(&pod).and_then(|v| v.values().find(|v| v.unique == unique)).cloned();
                let driver = volume.as_ref().and_then(|v| Driver::from_name(&v.driver));
                if let (Some(volume), Some(driver)) = (volume, driver) {
                    let target_path = pod_volume_path(&pod, &volume.pv);
                    ctx.note(
                        &target,
                        CsiCall::NodeExpandVolume.name(),
                        format!("{} {} at {target_path} to {}", volume.pv, volume.handle, format_value(size, Format::BinarySI)),
                    );
                    match driver.node_expand(host, &volume.handle, &target_path, size) {
                        Ok(_) => {
                            self.volumes.backoff.remove(&key);
                            // GenerateMsg("MountVolume.NodeExpandVolume succeeded", nodeName), on
                            // the pod and on the claim.
                            let message = format!("MountVolume.NodeExpandVolume succeeded for volume {:?} {node}", volume.pv);
                            self.volume_event(&pod, ctx, "Normal", "FileSystemResizeSuccessful", message.clone());
                            if let Some((object, mut claim)) = volume_claim_of(&volume, ctx) {
                                ctx.event(&object, "Normal", "FileSystemResizeSuccessful", message);
                                // MarkNodeExpansionFinishedWithRecovery.
                                let status = claim.status.get_or_insert_with(Default::default);
                                status.capacity.get_or_insert_with(Default::default).insert("storage".into(), Quantity(format_value(size, Format::BinarySI)));
                                let conditions = merge_resize_conditions(status.conditions.as_deref().unwrap_or_default(), Vec::new());
                                status.conditions = (!conditions.is_empty()).then_some(conditions);
                                if let Some(statuses) = status.allocated_resource_statuses.as_mut() {
                                    statuses.remove("storage");
                                }
                                if status.allocated_resource_statuses.as_ref().is_some_and(|s| s.is_empty()) {
                                    status.allocated_resource_statuses = None;
                                }
                                if let Some(object) = encode_claim(&claim) {
                                    if ctx.update_status(object).is_err() {
                                        self.operation_failed(key, ctx);
                                    }
                                }
                            }
                        }
                        Err(e) => {
                            // The reason is upstream's (kevents.FileSystemResizeFailed); the
                            // text of a failed NodeExpandVolume is UNVERIFIED.
                            let message = format!("MountVolume.NodeExpandVolume failed for volume {:?} : {e}", volume.pv);
                            self.volume_event(&pod, ctx, "Warning", "FileSystemResizeFailed", message);
                            self.operation_failed(key, ctx);
                        }
                    }
                }
                self.volumes.expanding_on_mount.remove(&(pod, unique));
            }
            Operation::UnmountDevice { unique } => {
                let key = (unique.clone(), String::new());
                self.volumes.pending.remove(&key);
                let Some(volume) = self.volumes.attached.get(&unique).map(|a| a.volume.clone()) else { return };
                let Some(driver) = Driver::from_name(&volume.driver) else { return };
                let staging = device_mount_path(&volume.driver, &volume.handle);
                ctx.note(&target, CsiCall::NodeUnstageVolume.name(), format!("{} {} at {staging}", volume.pv, volume.handle));
                match driver.node_unstage(host, &volume.handle, &staging) {
                    Ok(()) => {
                        self.volumes.backoff.remove(&key);
                        // MarkDeviceAsUnmounted, then MarkVolumeAsDetached (the controller detaches).
                        self.volumes.attached.remove(&unique);
                    }
                    Err(_) => self.operation_failed(key, ctx),
                }
            }
        }
        self.arm_volume_loop(ctx);
        // A pod whose volumes became ready (or released) continues.
        let waiting: Vec<String> = self.workers.iter().filter(|(_, w)| w.unmount_wait).map(|(uid, _)| uid.clone()).collect();
        for uid in waiting {
            if !self.volumes.has_mounted(&uid) {
                if let Some(w) = self.workers.get_mut(&uid) {
                    w.unmount_wait = false;
                }
                self.terminate(host, &uid, ctx);
            }
        }
    }
}
