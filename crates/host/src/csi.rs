//! The CSI drivers kubesim ships, as their gRPC services answer (the CSI spec's Controller and
//! Node services; the Kubernetes sidecars and the kubelet that call them live elsewhere):
//!
//! - [`Driver::Disk`] — `disk.csi.kubesim.io`, kubesim's network block storage (a model in the
//!   style of the cloud disk drivers): CreateVolume makes a zonal disk in the cloud's
//!   [`BlockStore`], ControllerPublishVolume attaches it to the node's machine, NodeStageVolume
//!   formats it on first use and mounts the device at the global mount path, NodePublishVolume
//!   bind-mounts that into the pod. Its content follows the disk from machine to machine.
//! - [`Driver::HostPath`] — `hostpath.csi.k8s.io` (kubernetes-csi/csi-driver-host-path): a
//!   volume is a directory under `/var/lib/csi-hostpath-data` on the node that provisioned it;
//!   no attach, no staging (the driver advertises no STAGE_UNSTAGE_VOLUME), publish bind-mounts
//!   the directory.
//!
//! The node service runs on the machine: [`NodeMounts`] (in [`Host::csi`]) is the mount table
//! the node plugin keeps (staging and publish targets), cleared when the machine loses power.
//! Every call has a modelled latency ([`latency_ms`]); callers wait it out and then invoke the
//! call, so its effect lands at its completion time (as with the CRI).
//!
//! Deviation (README): the node plugins are part of every machine, not DaemonSet pods; the
//! host-path driver creates a volume's directory when it is first published, not in
//! CreateVolume, and DeleteVolume names the directory its node removes (kubesim's controller
//! service does not run on the node).

use crate::cloud::{device_volume, BlockStore, CloudError};
use crate::Host;
use kubesim_api::csi::{DISK_DRIVER, HOSTPATH_DRIVER, HOSTPATH_TOPOLOGY_KEY, ZONE_TOPOLOGY_KEY};
use kubesim_api::Millis;
use kubesim_os::fs::Tree;
use std::collections::BTreeMap;

/// A topology segment (`{topology.kubernetes.io/zone: zone-a}`).
pub type Topology = BTreeMap<String, String>;

/// The volume-context key of the disk driver that makes every ControllerPublishVolume of the
/// volume fail with its value (a StorageClass parameter passed through CreateVolume): how a
/// volume that cannot attach is modelled.
pub const FAIL_ATTACH_PARAMETER: &str = "kubesim.io/fail-attach";
/// Where the host-path driver keeps its volumes (csi-driver-host-path `--statedir`'s default).
pub const HOSTPATH_DATA_DIR: &str = "/var/lib/csi-hostpath-data";
/// The filesystems the disk driver formats and mounts.
pub const FILESYSTEMS: &[&str] = &["ext2", "ext3", "ext4", "xfs"];
/// The disk driver's default filesystem.
pub const DEFAULT_FILESYSTEM: &str = "ext4";

/// A CSI driver kubesim implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Driver {
    /// The network block storage driver.
    Disk,
    /// The host-path driver.
    HostPath,
}

/// A gRPC status from a driver (`rpc error: code = … desc = …` as clients print it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsiError {
    /// The gRPC code name (`Internal`, `NotFound`, …).
    pub code: &'static str,
    /// The description.
    pub message: String,
}

impl std::fmt::Display for CsiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rpc error: code = {} desc = {}", self.code, self.message)
    }
}

fn error(code: &'static str, message: String) -> CsiError {
    CsiError { code, message }
}

/// The CSI calls, for latency lookup and the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsiCall {
    /// NodeGetInfo (plugin registration).
    NodeGetInfo,
    /// CreateVolume.
    CreateVolume,
    /// DeleteVolume.
    DeleteVolume,
    /// ControllerPublishVolume (attach).
    ControllerPublishVolume,
    /// ControllerUnpublishVolume (detach).
    ControllerUnpublishVolume,
    /// NodeStageVolume (format if new, mount the device at the global path).
    NodeStageVolume,
    /// NodeUnstageVolume.
    NodeUnstageVolume,
    /// NodePublishVolume (bind mount into the pod's directory).
    NodePublishVolume,
    /// NodeUnpublishVolume.
    NodeUnpublishVolume,
    /// ControllerExpandVolume (the external-resizer grows the volume).
    ControllerExpandVolume,
    /// NodeExpandVolume (the kubelet grows the filesystem of a mounted volume).
    NodeExpandVolume,
}

impl CsiCall {
    /// The gRPC method name.
    pub fn name(self) -> &'static str {
        match self {
            CsiCall::NodeGetInfo => "NodeGetInfo",
            CsiCall::CreateVolume => "CreateVolume",
            CsiCall::DeleteVolume => "DeleteVolume",
            CsiCall::ControllerPublishVolume => "ControllerPublishVolume",
            CsiCall::ControllerUnpublishVolume => "ControllerUnpublishVolume",
            CsiCall::NodeStageVolume => "NodeStageVolume",
            CsiCall::NodeUnstageVolume => "NodeUnstageVolume",
            CsiCall::NodePublishVolume => "NodePublishVolume",
            CsiCall::NodeUnpublishVolume => "NodeUnpublishVolume",
            CsiCall::ControllerExpandVolume => "ControllerExpandVolume",
            CsiCall::NodeExpandVolume => "NodeExpandVolume",
        }
    }
}

/// The latency table of the drivers (virtual ms). One place, documented in README.
pub fn latency_ms(driver: Driver, call: CsiCall) -> Millis {
    match (driver, call) {
        (_, CsiCall::NodeGetInfo) => 5,
        (Driver::Disk, CsiCall::CreateVolume) => 1_500, // the cloud creates the disk
        (Driver::Disk, CsiCall::DeleteVolume) => 500,
        (Driver::Disk, CsiCall::ControllerPublishVolume) => 2_500, // the cloud attaches it
        (Driver::Disk, CsiCall::ControllerUnpublishVolume) => 1_500,
        (Driver::Disk, CsiCall::NodeStageVolume) => 300, // blkid, mkfs on first use, mount
        (Driver::Disk, CsiCall::NodeUnstageVolume) => 100,
        (_, CsiCall::NodePublishVolume) => 40, // bind mount
        (_, CsiCall::NodeUnpublishVolume) => 20,
        (Driver::Disk, CsiCall::ControllerExpandVolume) => 2_000, // the cloud modifies the disk
        (Driver::Disk, CsiCall::NodeExpandVolume) => 200,         // resize2fs / xfs_growfs online
        (Driver::HostPath, CsiCall::CreateVolume) => 50,
        (Driver::HostPath, _) => 20,
    }
}

/// NodeGetInfo's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// The node's id as the driver knows it (the instance id, or the node name).
    pub node_id: String,
    /// `max_volumes_per_node` (0 = unset).
    pub max_volumes_per_node: i64,
    /// The node's topology segment.
    pub accessible_topology: Topology,
}

/// CreateVolume's request (what the external-provisioner sends).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateVolumeRequest {
    /// The volume name (`pvc-<claim uid>`): the idempotency key.
    pub name: String,
    /// Requested bytes.
    pub capacity_bytes: i128,
    /// The StorageClass parameters, without the `csi.storage.k8s.io/` keys.
    pub parameters: BTreeMap<String, String>,
    /// Accessibility requirements: topologies the volume must be reachable from.
    pub requisite: Vec<Topology>,
    /// Accessibility requirements: the preferred topologies, best first (the selected node's).
    pub preferred: Vec<Topology>,
}

/// CreateVolume's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedVolume {
    /// The volume id (the PV's `volumeHandle`).
    pub volume_id: String,
    /// Its size.
    pub capacity_bytes: i128,
    /// The volume context (the PV's `volumeAttributes`).
    pub volume_context: BTreeMap<String, String>,
    /// Where the volume is reachable from (the PV's node affinity).
    pub accessible_topology: Vec<Topology>,
}

/// A staged volume: the device mounted at the global mount path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Staged {
    /// The driver.
    pub driver: Driver,
    /// The volume id.
    pub volume_id: String,
    /// The volume tree in the machine's storage.
    pub volume: String,
}

/// A published volume: what the pod's directory shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    /// The driver.
    pub driver: Driver,
    /// The volume id.
    pub volume_id: String,
    /// The volume tree in the machine's storage.
    pub volume: String,
    /// The directory inside it (the host-path driver's volume directory in the node's tree).
    pub sub_path: Option<String>,
    /// Mounted read-only.
    pub read_only: bool,
}

/// The node plugins' mount table on one machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMounts {
    /// The node plugins running on the machine.
    pub plugins: Vec<Driver>,
    /// Staging path → the staged volume.
    pub staged: BTreeMap<String, Staged>,
    /// Publish target → the published volume.
    pub published: BTreeMap<String, Published>,
}

impl Default for NodeMounts {
    fn default() -> Self {
        NodeMounts { plugins: vec![Driver::HostPath, Driver::Disk], staged: BTreeMap::new(), published: BTreeMap::new() }
    }
}

impl NodeMounts {
    /// The machine lost power: its mounts are gone with its kernel (the devices stay attached).
    pub fn unmount_all(&mut self) {
        self.staged.clear();
        self.published.clear();
    }
}

/// Where the host-path driver keeps a volume on its node.
pub fn host_path_volume_dir(volume_id: &str) -> String {
    format!("{HOSTPATH_DATA_DIR}/{volume_id}")
}

fn volume_uuid(name: &str) -> String {
    let a = kubesim_api::hash::fnv64a(name.as_bytes());
    let b = kubesim_api::hash::fnv64a(format!("{name}/hostpath").as_bytes());
    format!("{:08x}-{:04x}-11f0-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, b >> 48, b & 0xffff_ffff_ffff)
}

impl Driver {
    /// Both drivers.
    pub const ALL: [Driver; 2] = [Driver::HostPath, Driver::Disk];

    /// The driver of a CSI driver name.
    pub fn from_name(name: &str) -> Option<Driver> {
        Driver::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The driver name (GetPluginInfo).
    pub fn name(self) -> &'static str {
        match self {
            Driver::Disk => DISK_DRIVER,
            Driver::HostPath => HOSTPATH_DRIVER,
        }
    }

    /// Whether the node service advertises STAGE_UNSTAGE_VOLUME.
    pub fn stages(self) -> bool {
        self == Driver::Disk
    }

    /// The topology key the driver reports.
    pub fn topology_key(self) -> &'static str {
        match self {
            Driver::Disk => ZONE_TOPOLOGY_KEY,
            Driver::HostPath => HOSTPATH_TOPOLOGY_KEY,
        }
    }

    /// NodeGetInfo on a machine: the disk driver answers the machine's instance id and zone
    /// (instance metadata; a machine without a zone reports no topology), the host-path
    /// driver the node name.
    pub fn node_get_info(self, host: &Host) -> NodeInfo {
        match self {
            Driver::Disk => NodeInfo {
                node_id: crate::cloud::instance_id(&host.name),
                max_volumes_per_node: crate::cloud::MAX_ATTACHMENTS_PER_INSTANCE as i64,
                accessible_topology: host.zone.iter().map(|z| (ZONE_TOPOLOGY_KEY.to_string(), z.clone())).collect(),
            },
            Driver::HostPath => NodeInfo {
                node_id: host.name.clone(),
                max_volumes_per_node: 0,
                accessible_topology: [(HOSTPATH_TOPOLOGY_KEY.to_string(), host.name.clone())].into_iter().collect(),
            },
        }
    }

    // ------------------------------------------------------------------ Controller service

    /// CreateVolume.
    pub fn create_volume(self, cloud: &mut BlockStore, req: &CreateVolumeRequest) -> Result<CreatedVolume, CsiError> {
        let key = self.topology_key();
        let wanted = req.preferred.iter().chain(req.requisite.iter()).find_map(|t| t.get(key).cloned());
        match self {
            Driver::Disk => {
                let mut context = BTreeMap::new();
                for (k, v) in &req.parameters {
                    match k.as_str() {
                        "type" if v == "ssd" || v == "hdd" => {}
                        "type" => return Err(error("InvalidArgument", format!("Could not create volume {:?}: invalid disk type {v:?}", req.name))),
                        FAIL_ATTACH_PARAMETER => {
                            context.insert(k.clone(), v.clone());
                        }
                        _ => return Err(error("InvalidArgument", format!("Invalid parameter key {k} for CreateVolume"))),
                    }
                }
                // Disks come in whole GiB, at least one.
                let gib = 1i128 << 30;
                let size = ((req.capacity_bytes.max(1) + gib - 1) / gib) * gib;
                let disk = cloud
                    .create_disk(&req.name, wanted.clone(), size)
                    .map_err(|e: CloudError| error("Internal", format!("Could not create volume {:?}: {e}", req.name)))?;
                Ok(CreatedVolume {
                    volume_id: disk.id.clone(),
                    capacity_bytes: disk.size_bytes,
                    volume_context: context,
                    accessible_topology: disk.zone.iter().map(|z| [(key.to_string(), z.clone())].into_iter().collect()).collect(),
                })
            }
            Driver::HostPath => {
                let Some(node) = wanted else {
                    return Err(error(
                        "ResourceExhausted",
                        "no node in the accessibility requirements (this driver provisions on the selected node: use volumeBindingMode WaitForFirstConsumer)"
                            .into(),
                    ));
                };
                Ok(CreatedVolume {
                    volume_id: volume_uuid(&req.name),
                    capacity_bytes: req.capacity_bytes,
                    volume_context: BTreeMap::new(),
                    accessible_topology: vec![[(key.to_string(), node)].into_iter().collect()],
                })
            }
        }
    }

    /// DeleteVolume (a volume that is gone is deleted). The disk driver deletes the cloud disk,
    /// and its content with it. The host-path driver's volume is a directory on its node: the
    /// answer is that directory, for the node to remove (`os.RemoveAll`; upstream the driver's
    /// controller service runs on the node and removes it itself).
    pub fn delete_volume(self, cloud: &mut BlockStore, volume_id: &str) -> Result<Option<String>, CsiError> {
        match self {
            Driver::Disk => {
                cloud.delete_disk(volume_id).map_err(|e| error("Internal", format!("Could not delete volume ID {volume_id:?}: {e}")))?;
                Ok(None)
            }
            Driver::HostPath => Ok(Some(host_path_volume_dir(volume_id))),
        }
    }

    /// ControllerPublishVolume: the publish context (`devicePath`) on success.
    pub fn controller_publish(
        self,
        cloud: &mut BlockStore,
        volume_id: &str,
        node_id: &str,
        volume_context: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, CsiError> {
        if self != Driver::Disk {
            return Err(error("Unimplemented", "ControllerPublishVolume is not supported".into()));
        }
        if cloud.disk(volume_id).is_none() {
            return Err(error("NotFound", format!("Volume {volume_id:?} not found")));
        }
        if cloud.node_of_instance(node_id).is_none() {
            return Err(error("NotFound", format!("Instance {node_id:?} not found")));
        }
        if let Some(reason) = volume_context.get(FAIL_ATTACH_PARAMETER) {
            return Err(error("Internal", format!("Could not attach volume {volume_id:?} to node {node_id:?}: {reason}")));
        }
        match cloud.attach(volume_id, node_id) {
            Ok(device) => Ok([("devicePath".to_string(), device)].into_iter().collect()),
            Err(e) => Err(error("Internal", format!("Could not attach volume {volume_id:?} to node {node_id:?}: {e}"))),
        }
    }

    /// ControllerUnpublishVolume.
    pub fn controller_unpublish(self, cloud: &mut BlockStore, volume_id: &str, node_id: &str) -> Result<(), CsiError> {
        if self != Driver::Disk {
            return Err(error("Unimplemented", "ControllerUnpublishVolume is not supported".into()));
        }
        cloud.detach(volume_id, node_id).map_err(|e| error("Internal", format!("Could not detach volume {volume_id:?} from node {node_id:?}: {e}")))
    }

    /// ControllerExpandVolume: the volume grows to at least `capacity_bytes`; answers the new
    /// size and `node_expansion_required`. The disk driver grows the cloud disk (whole GiB)
    /// and needs the node to grow the filesystem; the host-path driver's volumes are
    /// directories, and csi-driver-host-path (pkg/hostpath/controllerserver.go
    /// ControllerExpandVolume) records the larger size and answers `NodeExpansionRequired:
    /// true` (its maximum volume size is not modelled).
    pub fn controller_expand(self, cloud: &mut BlockStore, volume_id: &str, capacity_bytes: i128) -> Result<(i128, bool), CsiError> {
        match self {
            Driver::Disk => {
                let gib = 1i128 << 30;
                let size = ((capacity_bytes.max(1) + gib - 1) / gib) * gib;
                let size = cloud.resize_disk(volume_id, size).map_err(|e| error("Internal", format!("Could not resize volume {volume_id:?}: {e}")))?;
                Ok((size, true))
            }
            Driver::HostPath => Ok((capacity_bytes, true)),
        }
    }

    // ------------------------------------------------------------------------ Node service

    /// NodeStageVolume: the disk's device, formatted with `fs_type` if it has no filesystem
    /// yet, mounted at `staging_path`. Staging a staged volume succeeds.
    pub fn node_stage(
        self,
        host: &mut Host,
        volume_id: &str,
        staging_path: &str,
        publish_context: &BTreeMap<String, String>,
        fs_type: &str,
    ) -> Result<(), CsiError> {
        if !self.stages() {
            return Err(error("Unimplemented", "NodeStageVolume is not supported".into()));
        }
        if host.csi.staged.get(staging_path).is_some_and(|s| s.volume_id == volume_id) {
            return Ok(());
        }
        let fs_type = if fs_type.is_empty() { DEFAULT_FILESYSTEM } else { fs_type };
        if !FILESYSTEMS.contains(&fs_type) {
            return Err(error("InvalidArgument", format!("NodeStageVolume: invalid fstype {fs_type}")));
        }
        let device_path = publish_context.get("devicePath").cloned().unwrap_or_default();
        let Some(device) = host.devices.get_mut(volume_id) else {
            return Err(error(
                "NotFound",
                format!("Failed to find device path {device_path}. no device path for device {device_path:?} volume {volume_id:?} found"),
            ));
        };
        if device.filesystem.is_none() {
            // mkfs: a fresh filesystem (ext* keep lost+found at the root).
            let mut tree = Tree::new();
            tree.add_dir("/", 0o755);
            if fs_type.starts_with("ext") {
                tree.add_dir("/lost+found", 0o700);
            }
            host.cri.volumes.trees.insert(device_volume(volume_id), tree);
            device.filesystem = Some(fs_type.to_string());
        }
        host.csi.staged.insert(staging_path.to_string(), Staged { driver: self, volume_id: volume_id.to_string(), volume: device_volume(volume_id) });
        Ok(())
    }

    /// NodeUnstageVolume (unstaging what is not staged succeeds).
    pub fn node_unstage(self, host: &mut Host, volume_id: &str, staging_path: &str) -> Result<(), CsiError> {
        if host.csi.published.values().any(|p| p.volume_id == volume_id && p.driver == self) {
            return Err(error("FailedPrecondition", format!("volume {volume_id:?} is still published")));
        }
        host.csi.staged.remove(staging_path);
        Ok(())
    }

    /// NodePublishVolume: the staged device (disk) or the volume's directory (host-path) at the
    /// pod's target path.
    pub fn node_publish(self, host: &mut Host, volume_id: &str, staging_path: Option<&str>, target_path: &str, read_only: bool) -> Result<(), CsiError> {
        let published = match self {
            Driver::Disk => {
                let staged = staging_path.and_then(|p| host.csi.staged.get(p)).filter(|s| s.volume_id == volume_id);
                let Some(staged) = staged else {
                    return Err(error("FailedPrecondition", format!("volume {volume_id:?} is not staged at {:?}", staging_path.unwrap_or(""))));
                };
                Published { driver: self, volume_id: volume_id.to_string(), volume: staged.volume.clone(), sub_path: None, read_only }
            }
            Driver::HostPath => {
                let dir = host_path_volume_dir(volume_id);
                let node = host.cri.volumes.trees.entry(crate::NODE_ROOT.to_string()).or_insert_with(crate::node_root);
                if node.get_path(&dir).is_none() {
                    node.add_dir(&dir, 0o777);
                }
                Published { driver: self, volume_id: volume_id.to_string(), volume: crate::NODE_ROOT.to_string(), sub_path: Some(dir), read_only }
            }
        };
        host.csi.published.insert(target_path.to_string(), published);
        Ok(())
    }

    /// NodeExpandVolume on a mounted volume (online expansion): the filesystem at
    /// `volume_path` (the pod's publish target) grows to the volume's size. The volume must be
    /// published there; the disk's device must be on the machine.
    pub fn node_expand(self, host: &mut Host, volume_id: &str, volume_path: &str, capacity_bytes: i128) -> Result<i128, CsiError> {
        let published = host.csi.published.get(volume_path).filter(|p| p.volume_id == volume_id && p.driver == self);
        if published.is_none() {
            return Err(error("NotFound", format!("volume {volume_id:?} is not published at {volume_path:?}")));
        }
        if self == Driver::Disk && !host.devices.contains_key(volume_id) {
            return Err(error("NotFound", format!("Failed to find device path for volume {volume_id:?}")));
        }
        Ok(capacity_bytes)
    }

    /// NodeUnpublishVolume (unpublishing what is not published succeeds).
    pub fn node_unpublish(self, host: &mut Host, target_path: &str) -> Result<(), CsiError> {
        host.csi.published.remove(target_path);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zoned_host(name: &str, index: u32, zone: &str, cloud: &mut BlockStore) -> Host {
        let mut host = Host::new(name, index);
        host.zone = Some(zone.to_string());
        cloud.register_instance(name, host.zone.clone());
        host
    }

    #[test]
    fn a_disk_is_created_in_the_preferred_zone_attached_staged_and_published() {
        let mut cloud = BlockStore::default();
        let mut hosts = crate::Hosts::new();
        hosts.insert("a".into(), zoned_host("a", 0, "zone-a", &mut cloud));
        hosts.insert("b".into(), zoned_host("b", 1, "zone-b", &mut cloud));
        let zone = |z: &str| -> Topology { [(ZONE_TOPOLOGY_KEY.to_string(), z.to_string())].into_iter().collect() };
        let req = CreateVolumeRequest {
            name: "pvc-1".into(),
            capacity_bytes: 1 << 30,
            preferred: vec![zone("zone-b")],
            requisite: vec![zone("zone-a"), zone("zone-b")],
            ..Default::default()
        };
        let created = Driver::Disk.create_volume(&mut cloud, &req).unwrap();
        assert_eq!(created.accessible_topology, vec![zone("zone-b")]);
        let info = Driver::Disk.node_get_info(&hosts["b"]);
        assert_eq!(info.accessible_topology, zone("zone-b"));
        let wrong = Driver::Disk.node_get_info(&hosts["a"]).node_id;
        let err = Driver::Disk.controller_publish(&mut cloud, &created.volume_id, &wrong, &BTreeMap::new()).unwrap_err();
        assert!(err.to_string().starts_with("rpc error: code = Internal desc = Could not attach volume"), "{err}");
        assert!(err.to_string().contains("InvalidVolume.ZoneMismatch: The volume"), "{err}");
        let context = Driver::Disk.controller_publish(&mut cloud, &created.volume_id, &info.node_id, &BTreeMap::new()).unwrap();
        assert_eq!(context["devicePath"], "/dev/xvdaa");
        cloud.place_devices(&mut hosts);
        let host = hosts.get_mut("b").unwrap();
        let staging = kubesim_api::csi::device_mount_path(DISK_DRIVER, &created.volume_id);
        let err = Driver::Disk.node_stage(host, &created.volume_id, &staging, &context, "btrfs9").unwrap_err();
        assert_eq!(err.to_string(), "rpc error: code = InvalidArgument desc = NodeStageVolume: invalid fstype btrfs9");
        Driver::Disk.node_stage(host, &created.volume_id, &staging, &context, "").unwrap();
        assert_eq!(host.devices[&created.volume_id].filesystem.as_deref(), Some("ext4"));
        assert!(host.cri.volumes.trees[&device_volume(&created.volume_id)].get_path("/lost+found").is_some());
        let target = kubesim_api::csi::pod_volume_path("uid", "pvc-1");
        assert!(Driver::Disk.node_publish(host, &created.volume_id, None, &target, false).is_err());
        Driver::Disk.node_publish(host, &created.volume_id, Some(&staging), &target, false).unwrap();
        assert_eq!(host.csi.published[&target].volume, device_volume(&created.volume_id));
        assert_eq!(Driver::Disk.node_unstage(host, &created.volume_id, &staging).unwrap_err().code, "FailedPrecondition");
        Driver::Disk.node_unpublish(host, &target).unwrap();
        Driver::Disk.node_unstage(host, &created.volume_id, &staging).unwrap();
        assert!(host.csi.staged.is_empty() && host.csi.published.is_empty());
    }

    #[test]
    fn a_failing_parameter_makes_every_attach_fail_and_unknown_parameters_are_refused() {
        let mut cloud = BlockStore::default();
        let host = zoned_host("a", 0, "zone-a", &mut cloud);
        let mut req = CreateVolumeRequest { name: "pvc-1".into(), capacity_bytes: 1 << 30, ..Default::default() };
        req.parameters.insert(FAIL_ATTACH_PARAMETER.into(), "the disk's encryption key is disabled".into());
        let created = Driver::Disk.create_volume(&mut cloud, &req).unwrap();
        let node = Driver::Disk.node_get_info(&host).node_id;
        let err = Driver::Disk.controller_publish(&mut cloud, &created.volume_id, &node, &created.volume_context).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "rpc error: code = Internal desc = Could not attach volume {:?} to node {node:?}: the disk's encryption key is disabled",
                created.volume_id
            )
        );
        req.parameters.insert("iops".into(), "3000".into());
        assert_eq!(
            Driver::Disk.create_volume(&mut cloud, &req).unwrap_err().to_string(),
            "rpc error: code = InvalidArgument desc = Invalid parameter key iops for CreateVolume"
        );
    }

    #[test]
    fn host_path_volumes_live_on_their_node() {
        let mut cloud = BlockStore::default();
        let mut host = Host::new("n", 0);
        let topology: Topology = [(HOSTPATH_TOPOLOGY_KEY.to_string(), "n".to_string())].into_iter().collect();
        let req = CreateVolumeRequest { name: "pvc-1".into(), capacity_bytes: 1, preferred: vec![topology.clone()], ..Default::default() };
        let created = Driver::HostPath.create_volume(&mut cloud, &req).unwrap();
        assert_eq!(created.accessible_topology, vec![topology]);
        assert_eq!(created.volume_id, Driver::HostPath.create_volume(&mut cloud, &req).unwrap().volume_id, "stable per name");
        assert!(Driver::HostPath.create_volume(&mut cloud, &CreateVolumeRequest { name: "x".into(), ..Default::default() }).is_err());
        Driver::HostPath.node_publish(&mut host, &created.volume_id, None, "/t", false).unwrap();
        let dir = format!("{HOSTPATH_DATA_DIR}/{}", created.volume_id);
        assert!(host.cri.volumes.trees[crate::NODE_ROOT].get_path(&dir).is_some());
        assert_eq!(host.csi.published["/t"].sub_path.as_deref(), Some(dir.as_str()));
    }
}
