//! The CSI names every component agrees on, computed in one place each: the VolumeAttachment
//! name (pkg/volume/csi/csi_attacher.go `getAttachmentName`), the unique volume name the
//! attach/detach controller and the kubelet key volumes by (csi_plugin.go `GetVolumeName` under
//! the `kubernetes.io/csi` plugin), the kubelet's global (staging) mount and per-pod publish
//! paths (csi_attacher.go `makeDeviceMountPath`, csi_mounter.go `GetPath`), the
//! external-attacher's finalizer (pkg/controller/util.go `GetFinalizerName` /
//! `SanitizeDriverName`), and CSIDriver's `attachRequired` rule.
//!
//! Also the two drivers kubesim ships (their controller and node services are modelled in
//! `kubesim_host::csi`; their CSIDriver objects and StorageClasses are bootstrap objects of the
//! simulation's cluster).

use k8s_openapi::api::core::v1::{CSIPersistentVolumeSource, PersistentVolume};
use k8s_openapi::api::storage::v1::CSIDriver;

/// The in-tree CSI volume plugin's name (`kubernetes.io/csi`).
pub const CSI_PLUGIN_NAME: &str = "kubernetes.io/csi";
/// The kubelet's root directory.
pub const KUBELET_ROOT: &str = "/var/lib/kubelet";
/// kubesim's network block storage driver (a model in the style of the cloud disk drivers:
/// zonal disks attached to one machine at a time by the cloud, `attachRequired: true`).
pub const DISK_DRIVER: &str = "disk.csi.kubesim.io";
/// The host-path driver (kubernetes-csi/csi-driver-host-path): volumes are directories on the
/// node that provisioned them, `attachRequired: false`.
pub const HOSTPATH_DRIVER: &str = "hostpath.csi.k8s.io";
/// The topology key the disk driver reports (the well-known zone label).
pub const ZONE_TOPOLOGY_KEY: &str = "topology.kubernetes.io/zone";
/// The topology key the host-path driver reports (csi-driver-host-path's `TopologyKeyNode`).
pub const HOSTPATH_TOPOLOGY_KEY: &str = "topology.hostpath.csi/node";
/// The StorageClass of the disk driver.
pub const BLOCK_CLASS: &str = "block";
/// The StorageClass of the host-path driver (the driver's example class name).
pub const HOSTPATH_CLASS: &str = "csi-hostpath-sc";

/// Lowercase hex SHA-256 of a string (csi_attacher.go / csi_util.go `generateSha`).
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    crate::hash::hex(&sha2::Sha256::digest(text.as_bytes()))
}

/// `getAttachmentName`: `csi-` + hex sha256(volumeHandle + driver + node).
pub fn attachment_name(volume_handle: &str, driver: &str, node: &str) -> String {
    format!("csi-{}", sha256_hex(&format!("{volume_handle}{driver}{node}")))
}

/// The unique volume name (`kubernetes.io/csi/<driver>^<volumeHandle>`): the key of the
/// attach/detach controller's and the volume manager's caches, and what `node.status`
/// `volumesInUse` / `volumesAttached` list.
pub fn unique_volume_name(driver: &str, volume_handle: &str) -> String {
    format!("{CSI_PLUGIN_NAME}/{driver}^{volume_handle}")
}

/// The global (staging) mount path of a volume on a node: NodeStageVolume's target.
pub fn device_mount_path(driver: &str, volume_handle: &str) -> String {
    format!("{KUBELET_ROOT}/plugins/{CSI_PLUGIN_NAME}/{driver}/{}/globalmount", sha256_hex(volume_handle))
}

/// The per-pod publish path of a PV: NodePublishVolume's target (the plugin directory is the
/// escaped plugin name `kubernetes.io~csi`).
pub fn pod_volume_path(pod_uid: &str, pv_name: &str) -> String {
    format!("{KUBELET_ROOT}/pods/{pod_uid}/volumes/kubernetes.io~csi/{pv_name}/mount")
}

/// `SanitizeDriverName`: every character outside `[a-zA-Z0-9-]` becomes `-`; a name ending in
/// `-` gets an `X`.
pub fn sanitize_driver_name(driver: &str) -> String {
    let mut name: String = driver.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect();
    if name.ends_with('-') {
        name.push('X');
    }
    name
}

/// `GetFinalizerName`: the finalizer the external-attacher puts on VolumeAttachments and PVs.
pub fn attacher_finalizer(driver: &str) -> String {
    format!("external-attacher/{}", sanitize_driver_name(driver))
}

/// The CSI source of a PersistentVolume, if it has one.
pub fn pv_csi_source(pv: &PersistentVolume) -> Option<&CSIPersistentVolumeSource> {
    pv.spec.as_ref().and_then(|s| s.csi.as_ref())
}

/// Whether volumes of a driver need attaching (csi_attacher.go / csi_plugin.go
/// `skipAttach` inverted): a missing CSIDriver object or an unset `attachRequired` means yes.
pub fn attach_required(driver: Option<&CSIDriver>) -> bool {
    driver.and_then(|d| d.spec.attach_required).unwrap_or(true)
}

/// `podInfoOnMount` of a driver (false without a CSIDriver object).
pub fn pod_info_on_mount(driver: Option<&CSIDriver>) -> bool {
    driver.and_then(|d| d.spec.pod_info_on_mount).unwrap_or(false)
}

/// `isMultiAttachForbidden` (attachdetach reconciler.go) for a PV: forbidden unless the PV
/// lists no access modes or offers ReadWriteMany / ReadOnlyMany.
pub fn multi_attach_forbidden(pv: &PersistentVolume) -> bool {
    let modes = pv.spec.as_ref().and_then(|s| s.access_modes.as_deref()).unwrap_or(&[]);
    !modes.is_empty() && !modes.iter().any(|m| m == "ReadWriteMany" || m == "ReadOnlyMany")
}

#[cfg(test)]
mod tests {
    use super::*;

    // The reference's computed vector for csi_attacher.go getAttachmentName (volumeHandle
    // vol-1, driver hostpath.csi.k8s.io, node kind-worker), plus the shape every name has.
    #[test]
    fn attachment_names_follow_get_attachment_name() {
        let cases = [
            ("vol-1", "hostpath.csi.k8s.io", "kind-worker", "csi-007f180dd2d8040f3bf395e188750689440e6509107b16c150921682c153f6a4"),
            ("", "", "", "csi-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ];
        for (handle, driver, node, want) in cases {
            assert_eq!(attachment_name(handle, driver, node), want, "{handle} {driver} {node}");
        }
        let name = attachment_name("vol-0a1b2c3d4e5f60718", DISK_DRIVER, "node-1");
        assert_eq!(name.len(), 68);
        assert!(name.starts_with("csi-") && name[4..].chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    // external-attacher pkg/controller/util.go SanitizeDriverName / GetFinalizerName.
    #[test]
    fn attacher_finalizers_sanitize_the_driver_name() {
        let cases = [
            ("hostpath.csi.k8s.io", "external-attacher/hostpath-csi-k8s-io"),
            ("ebs.csi.aws.com", "external-attacher/ebs-csi-aws-com"),
            ("disk.csi.kubesim.io", "external-attacher/disk-csi-kubesim-io"),
            ("foo/bar_baz", "external-attacher/foo-bar-baz"),
            ("driver.", "external-attacher/driver-X"),
            ("Mixed-Case-1", "external-attacher/Mixed-Case-1"),
        ];
        for (driver, want) in cases {
            assert_eq!(attacher_finalizer(driver), want, "{driver}");
        }
    }

    #[test]
    fn kubelet_paths_and_unique_names() {
        assert_eq!(unique_volume_name(DISK_DRIVER, "vol-1"), "kubernetes.io/csi/disk.csi.kubesim.io^vol-1");
        assert_eq!(
            device_mount_path("hostpath.csi.k8s.io", "vol-1"),
            format!("/var/lib/kubelet/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/{}/globalmount", sha256_hex("vol-1"))
        );
        assert_eq!(pod_volume_path("uid-1", "pvc-1"), "/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi/pvc-1/mount");
    }

    #[test]
    fn multi_attach_is_forbidden_for_single_node_modes() {
        let pv = |modes: &[&str]| PersistentVolume {
            spec: Some(k8s_openapi::api::core::v1::PersistentVolumeSpec {
                access_modes: Some(modes.iter().map(|m| m.to_string()).collect()),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(multi_attach_forbidden(&pv(&["ReadWriteOnce"])));
        assert!(multi_attach_forbidden(&pv(&["ReadWriteOncePod"])));
        assert!(!multi_attach_forbidden(&pv(&["ReadWriteOnce", "ReadOnlyMany"])));
        assert!(!multi_attach_forbidden(&pv(&["ReadWriteMany"])));
        assert!(!multi_attach_forbidden(&pv(&[])));
    }
}
