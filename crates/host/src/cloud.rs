//! The cloud's block storage, the model behind kubesim's disk CSI driver
//! (`disk.csi.kubesim.io`, in the style of the cloud disk drivers): zonal disks that exist apart
//! from any machine and are attached to at most one machine at a time, in that machine's zone.
//! A disk's bytes follow the disk: while it is attached they are the machine's block device (a
//! volume tree in its storage, [`device_volume`], plus the device's superblock in
//! [`crate::Host::devices`]); when it is detached they are back in the cloud. The runtime calls
//! [`BlockStore::place_devices`] after every handler that changed an attachment, which is where
//! a disk physically moves.
//!
//! Errors are the cloud API's (EC2-style codes, as the disk drivers pass them on).
//! Plain data: disk and instance ids are derived from counters and names, never from a clock.

use kubesim_os::fs::Tree;
use std::collections::BTreeMap;

/// The most disks one machine can have attached (the driver reports it as
/// `max_volumes_per_node`, the kubelet as CSINode `allocatable.count`).
pub const MAX_ATTACHMENTS_PER_INSTANCE: usize = 25;

/// The volume id of a disk's block device in its machine's storage.
pub fn device_volume(disk: &str) -> String {
    format!("dev/{disk}")
}

/// The instance id of a machine (`i-0` + 16 hex digits of its name's FNV-64a hash): what the
/// cloud calls it and what the disk driver's NodeGetInfo answers.
pub fn instance_id(node: &str) -> String {
    format!("i-0{:016x}", kubesim_api::hash::fnv64a(node.as_bytes()))
}

/// A cloud API error (`Code: message`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloudError {
    /// The error code (`InvalidVolume.ZoneMismatch`).
    pub code: &'static str,
    /// The message.
    pub message: String,
}

impl std::fmt::Display for CloudError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// A machine as the cloud knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The instance id (`i-0…`).
    pub id: String,
    /// Its availability zone (the node's `topology.kubernetes.io/zone`), if it has one.
    pub zone: Option<String>,
}

/// Where a disk is attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attachment {
    /// The machine (node name).
    pub node: String,
    /// The device path on it (`/dev/xvdaa`).
    pub device: String,
}

/// A disk's content: its filesystem (written by the first format) and its files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskContent {
    /// The filesystem on the disk, `None` while unformatted.
    pub filesystem: Option<String>,
    /// The files.
    pub tree: Tree,
}

/// Where a disk's content is right now.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Placement {
    /// In the cloud (detached).
    Cloud(DiskContent),
    /// On this machine, as its block device.
    Host(String),
}

/// One disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disk {
    /// The disk id (`vol-0…`): the CSI volume handle.
    pub id: String,
    /// Its zone (`None` in a cluster whose machines have no zone).
    pub zone: Option<String>,
    /// Its size.
    pub size_bytes: i128,
    /// The machine it is attached to.
    pub attachment: Option<Attachment>,
    /// The name the provisioner created it for (CreateVolume's idempotency key).
    pub name: String,
    placement: Placement,
}

/// The device a machine has for an attached disk (what `blkid` would tell).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachedDevice {
    /// The device path.
    pub path: String,
    /// The filesystem on it, `None` while unformatted.
    pub filesystem: Option<String>,
}

/// The cloud's block storage and the machines it knows.
#[derive(Clone, Debug, Default)]
pub struct BlockStore {
    disks: BTreeMap<String, Disk>,
    instances: BTreeMap<String, Instance>,
    created: u64,
    dirty: bool,
}

impl BlockStore {
    /// A machine joins (its instance id is derived from its name).
    pub fn register_instance(&mut self, node: &str, zone: Option<String>) {
        self.instances.insert(node.to_string(), Instance { id: instance_id(node), zone });
    }

    /// A machine by node name.
    pub fn instance(&self, node: &str) -> Option<&Instance> {
        self.instances.get(node)
    }

    /// The node name of an instance id.
    pub fn node_of_instance(&self, id: &str) -> Option<&str> {
        self.instances.iter().find(|(_, i)| i.id == id).map(|(n, _)| n.as_str())
    }

    /// A disk by id.
    pub fn disk(&self, id: &str) -> Option<&Disk> {
        self.disks.get(id)
    }

    /// Every disk, by id.
    pub fn disks(&self) -> impl Iterator<Item = &Disk> {
        self.disks.values()
    }

    /// The content of a detached disk (tests and the UI look inside).
    pub fn detached_content(&self, id: &str) -> Option<&DiskContent> {
        match &self.disks.get(id)?.placement {
            Placement::Cloud(content) => Some(content),
            Placement::Host(_) => None,
        }
    }

    /// CreateVolume: a new, unformatted disk in a zone. A disk already created under `name`
    /// is returned again (the call is idempotent by name).
    pub fn create_disk(&mut self, name: &str, zone: Option<String>, size_bytes: i128) -> Result<&Disk, CloudError> {
        if let Some(id) = self.disks.values().find(|d| d.name == name).map(|d| d.id.clone()) {
            return Ok(&self.disks[&id]);
        }
        if let Some(zone) = &zone {
            if !self.instances.values().any(|i| i.zone.as_ref() == Some(zone)) {
                return Err(CloudError { code: "InvalidZone.NotFound", message: format!("The zone '{zone}' does not exist.") });
            }
        }
        self.created += 1;
        let id = format!("vol-0{:016x}", kubesim_api::hash::fnv64a(format!("disk-{}", self.created).as_bytes()));
        let disk = Disk { id: id.clone(), zone, size_bytes, attachment: None, name: name.to_string(), placement: Placement::Cloud(DiskContent::default()) };
        self.disks.insert(id.clone(), disk);
        Ok(&self.disks[&id])
    }

    /// ModifyVolume (the disk driver's ControllerExpandVolume): a disk grows, attached or not,
    /// and never shrinks (a smaller size answers the current one). Returns the new size.
    pub fn resize_disk(&mut self, id: &str, size_bytes: i128) -> Result<i128, CloudError> {
        let Some(disk) = self.disks.get_mut(id) else {
            return Err(CloudError { code: "InvalidVolume.NotFound", message: format!("The volume '{id}' does not exist.") });
        };
        disk.size_bytes = disk.size_bytes.max(size_bytes);
        Ok(disk.size_bytes)
    }

    /// DeleteVolume: only a detached disk can go; a missing one is already gone.
    pub fn delete_disk(&mut self, id: &str) -> Result<(), CloudError> {
        match self.disks.get(id) {
            None => Ok(()),
            Some(disk) => match &disk.attachment {
                Some(a) => {
                    let instance = self.instances.get(&a.node).map(|i| i.id.clone()).unwrap_or_default();
                    Err(CloudError { code: "VolumeInUse", message: format!("Volume {id} is currently attached to {instance}") })
                }
                None => {
                    self.disks.remove(id);
                    Ok(())
                }
            },
        }
    }

    /// AttachVolume: the disk becomes a device of the machine (same zone, one machine at a
    /// time, at most [`MAX_ATTACHMENTS_PER_INSTANCE`]). Attaching it where it is attached
    /// already answers its device again.
    pub fn attach(&mut self, id: &str, instance_id: &str) -> Result<String, CloudError> {
        let Some(node) = self.node_of_instance(instance_id).map(str::to_string) else {
            return Err(CloudError { code: "InvalidInstanceID.NotFound", message: format!("The instance ID '{instance_id}' does not exist") });
        };
        let Some(disk) = self.disks.get(id) else {
            return Err(CloudError { code: "InvalidVolume.NotFound", message: format!("The volume '{id}' does not exist.") });
        };
        match &disk.attachment {
            Some(a) if a.node == node => return Ok(a.device.clone()),
            Some(_) => return Err(CloudError { code: "VolumeInUse", message: format!("{id} is already attached to an instance") }),
            None => {}
        }
        let zone = self.instances[&node].zone.clone();
        if disk.zone.is_some() && disk.zone != zone {
            return Err(CloudError {
                code: "InvalidVolume.ZoneMismatch",
                message: format!("The volume '{id}' is not in the same availability zone as instance '{instance_id}'"),
            });
        }
        let used: Vec<&str> = self.disks.values().filter_map(|d| d.attachment.as_ref()).filter(|a| a.node == node).map(|a| a.device.as_str()).collect();
        if used.len() >= MAX_ATTACHMENTS_PER_INSTANCE {
            return Err(CloudError {
                code: "AttachmentLimitExceeded",
                message: format!("Instance '{instance_id}' has reached its limit of {MAX_ATTACHMENTS_PER_INSTANCE} volume attachments"),
            });
        }
        let device = (0..26 * 26)
            .map(|i| format!("/dev/xvd{}{}", (b'a' + (i / 26) as u8) as char, (b'a' + (i % 26) as u8) as char))
            .find(|d| !used.contains(&d.as_str()))
            .unwrap_or_else(|| "/dev/xvdzz".to_string());
        if let Some(disk) = self.disks.get_mut(id) {
            disk.attachment = Some(Attachment { node, device: device.clone() });
        }
        self.dirty = true;
        Ok(device)
    }

    /// DetachVolume: the device leaves the machine. Detaching a detached disk (or one that is
    /// gone) succeeds.
    pub fn detach(&mut self, id: &str, instance_id: &str) -> Result<(), CloudError> {
        let node = self.node_of_instance(instance_id).map(str::to_string);
        let Some(disk) = self.disks.get_mut(id) else { return Ok(()) };
        match (&disk.attachment, node) {
            (Some(a), Some(node)) if a.node == node => {
                disk.attachment = None;
                self.dirty = true;
                Ok(())
            }
            (Some(_), _) => {
                Err(CloudError { code: "IncorrectState", message: format!("Volume '{id}' is attached to a different instance than '{instance_id}'") })
            }
            (None, _) => Ok(()),
        }
    }

    /// Moves each disk's content to where its attachment says (a machine's device, or back
    /// to the cloud); `true` if something moved. The runtime calls it after handlers that
    /// changed an attachment.
    pub fn place_devices(&mut self, hosts: &mut crate::Hosts) -> bool {
        if !std::mem::take(&mut self.dirty) {
            return false;
        }
        let mut moved = false;
        for disk in self.disks.values_mut() {
            let target = disk.attachment.as_ref().map(|a| a.node.clone()).filter(|n| hosts.contains_key(n));
            let current = match &disk.placement {
                Placement::Host(node) => Some(node.clone()),
                Placement::Cloud(_) => None,
            };
            if target == current {
                if let (Some(node), Some(a)) = (&target, &disk.attachment) {
                    if let Some(device) = hosts.get_mut(node).and_then(|h| h.devices.get_mut(&disk.id)) {
                        device.path = a.device.clone();
                    }
                }
                continue;
            }
            moved = true;
            // Off the machine it was on (a machine that is gone took nothing with it).
            let content = match std::mem::replace(&mut disk.placement, Placement::Cloud(DiskContent::default())) {
                Placement::Cloud(content) => content,
                Placement::Host(node) => match hosts.get_mut(&node) {
                    Some(host) => {
                        let device = host.devices.remove(&disk.id);
                        let tree = host.cri.volumes.trees.remove(&device_volume(&disk.id)).unwrap_or_default();
                        DiskContent { filesystem: device.and_then(|d| d.filesystem), tree }
                    }
                    None => DiskContent::default(),
                },
            };
            disk.placement = match (&target, &disk.attachment) {
                (Some(node), Some(a)) => {
                    let host = hosts.get_mut(node).expect("target hosts exist");
                    host.devices.insert(disk.id.clone(), AttachedDevice { path: a.device.clone(), filesystem: content.filesystem });
                    host.cri.volumes.trees.insert(device_volume(&disk.id), content.tree);
                    Placement::Host(node.clone())
                }
                _ => Placement::Cloud(content),
            };
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Host;

    fn store() -> (BlockStore, crate::Hosts) {
        let mut store = BlockStore::default();
        let mut hosts = crate::Hosts::new();
        for (i, (node, zone)) in [("a1", "zone-a"), ("a2", "zone-a"), ("b1", "zone-b")].iter().enumerate() {
            store.register_instance(node, Some(zone.to_string()));
            hosts.insert(node.to_string(), Host::new(node, i as u32));
        }
        (store, hosts)
    }

    #[test]
    fn a_disks_content_follows_its_attachment() {
        let (mut store, mut hosts) = store();
        let id = store.create_disk("pvc-1", Some("zone-a".into()), 1 << 30).unwrap().id.clone();
        let a1 = store.instance("a1").unwrap().id.clone();
        let a2 = store.instance("a2").unwrap().id.clone();
        assert_eq!(store.attach(&id, &a1).unwrap(), "/dev/xvdaa");
        assert!(store.place_devices(&mut hosts));
        hosts.get_mut("a1").unwrap().cri.volumes.trees.get_mut(&device_volume(&id)).unwrap().add_file("/data.txt", "hello", 0o644);
        assert_eq!(store.attach(&id, &a2).unwrap_err().code, "VolumeInUse");
        store.detach(&id, &a1).unwrap();
        store.place_devices(&mut hosts);
        assert!(!hosts["a1"].cri.volumes.trees.contains_key(&device_volume(&id)));
        assert!(store.detached_content(&id).unwrap().tree.get_path("/data.txt").is_some());
        store.attach(&id, &a2).unwrap();
        store.place_devices(&mut hosts);
        assert!(hosts["a2"].cri.volumes.trees[&device_volume(&id)].get_path("/data.txt").is_some());
        assert!(!store.place_devices(&mut hosts), "nothing changed");
    }

    #[test]
    fn the_cloud_refuses_what_a_cloud_refuses() {
        let (mut store, _) = store();
        let id = store.create_disk("pvc-1", Some("zone-a".into()), 1 << 30).unwrap().id.clone();
        assert_eq!(store.create_disk("pvc-1", Some("zone-a".into()), 1 << 30).unwrap().id, id, "idempotent by name");
        let b1 = store.instance("b1").unwrap().id.clone();
        let err = store.attach(&id, &b1).unwrap_err();
        assert_eq!(err.code, "InvalidVolume.ZoneMismatch");
        assert_eq!(err.to_string(), format!("InvalidVolume.ZoneMismatch: The volume '{id}' is not in the same availability zone as instance '{b1}'"));
        assert_eq!(store.attach("vol-missing", &b1).unwrap_err().code, "InvalidVolume.NotFound");
        assert_eq!(store.attach(&id, "i-nope").unwrap_err().code, "InvalidInstanceID.NotFound");
        assert_eq!(store.create_disk("pvc-2", Some("zone-x".into()), 1).unwrap_err().code, "InvalidZone.NotFound");
        let a1 = store.instance("a1").unwrap().id.clone();
        store.attach(&id, &a1).unwrap();
        assert_eq!(store.delete_disk(&id).unwrap_err().code, "VolumeInUse");
        store.detach(&id, &a1).unwrap();
        store.detach(&id, &a1).unwrap();
        store.delete_disk(&id).unwrap();
        store.delete_disk(&id).unwrap();
        assert!(store.disk(&id).is_none());
    }
}
