//! describe.go's volume source printers (`describeVolumes`, `print*VolumeSource`,
//! `print*PersistentVolumeSource`), shared by the pod and pod-template describers (a pod's
//! `spec.volumes`) and describePersistentVolume (a PersistentVolume's `spec`): one function per
//! upstream printer, each reading the source as JSON so both callers use it.
//!
//! Values print as Go's `%v` prints the typed field: a nil pointer to a generated API struct as
//! its gogo `String()` (`nil`), a set one as `&LocalObjectReference{Name:x,}`; a `[]string` as
//! `[a b]`; a `map[string]string` as `map[k:v]` (keys sorted, as fmt sorts maps).

use super::Writer;
use kubesim_api::k8s_openapi::api::core::v1::Volume;
use serde_json::Value;

/// describeVolumes.
pub(super) fn describe_volumes(w: &mut Writer, volumes: &[Volume], space: &str) {
    if volumes.is_empty() {
        w.w(0, format!("{space}Volumes:\t<none>\n"));
        return;
    }
    w.w(0, format!("{space}Volumes:\n"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for volume in volumes {
        w.w(1, format!("{name_indent}{}:\n", volume.name));
        let json = serde_json::to_value(volume).unwrap_or(Value::Null);
        let source = |key: &str| json.get(key).filter(|v| !v.is_null());
        // The order of describeVolumes' switch.
        if let Some(v) = source("hostPath") {
            print_host_path(w, v);
        } else if let Some(v) = source("emptyDir") {
            print_empty_dir(w, v);
        } else if let Some(v) = source("gcePersistentDisk") {
            print_gce_persistent_disk(w, v);
        } else if let Some(v) = source("awsElasticBlockStore") {
            print_aws_elastic_block_store(w, v);
        } else if let Some(v) = source("gitRepo") {
            print_git_repo(w, v);
        } else if let Some(v) = source("secret") {
            print_secret(w, v);
        } else if let Some(v) = source("configMap") {
            print_config_map(w, v);
        } else if let Some(v) = source("nfs") {
            print_nfs(w, v);
        } else if let Some(v) = source("iscsi") {
            print_iscsi(w, v);
        } else if let Some(v) = source("glusterfs") {
            print_glusterfs(w, v);
        } else if let Some(v) = source("persistentVolumeClaim") {
            print_persistent_volume_claim_source(w, v);
        } else if let Some(v) = source("ephemeral") {
            print_ephemeral(w, v);
        } else if let Some(v) = source("rbd") {
            print_rbd(w, v);
        } else if let Some(v) = source("quobyte") {
            print_quobyte(w, v);
        } else if let Some(v) = source("downwardAPI") {
            print_downward_api(w, v);
        } else if let Some(v) = source("azureDisk") {
            print_azure_disk(w, v);
        } else if let Some(v) = source("vsphereVolume") {
            print_vsphere(w, v);
        } else if let Some(v) = source("cinder") {
            print_cinder(w, v);
        } else if let Some(v) = source("photonPersistentDisk") {
            print_photon_persistent_disk(w, v);
        } else if let Some(v) = source("portworxVolume") {
            print_portworx(w, v);
        } else if let Some(v) = source("scaleIO") {
            print_scale_io(w, v);
        } else if let Some(v) = source("cephfs") {
            print_cephfs(w, v);
        } else if let Some(v) = source("storageos") {
            print_storageos(w, v);
        } else if let Some(v) = source("fc") {
            print_fc(w, v);
        } else if let Some(v) = source("azureFile") {
            print_azure_file(w, v);
        } else if let Some(v) = source("flexVolume") {
            print_flex(w, v);
        } else if let Some(v) = source("flocker") {
            print_flocker(w, v);
        } else if let Some(v) = source("projected") {
            print_projected(w, v);
        } else if let Some(v) = source("csi") {
            print_csi(w, v);
        } else if let Some(v) = source("image") {
            print_image(w, v);
        } else {
            w.w(1, "<unknown>\n");
        }
    }
}

/// describePersistentVolume's `Source:` section: the printer for the PV's source, in the order
/// of its switch.
pub(super) fn print_persistent_volume_source(w: &mut Writer, spec: &Value) {
    let source = |key: &str| spec.get(key).filter(|v| !v.is_null());
    if let Some(v) = source("hostPath") {
        print_host_path(w, v);
    } else if let Some(v) = source("gcePersistentDisk") {
        print_gce_persistent_disk(w, v);
    } else if let Some(v) = source("awsElasticBlockStore") {
        print_aws_elastic_block_store(w, v);
    } else if let Some(v) = source("nfs") {
        print_nfs(w, v);
    } else if let Some(v) = source("iscsi") {
        print_iscsi(w, v);
    } else if let Some(v) = source("glusterfs") {
        print_glusterfs_persistent(w, v);
    } else if let Some(v) = source("rbd") {
        print_rbd(w, v);
    } else if let Some(v) = source("quobyte") {
        print_quobyte(w, v);
    } else if let Some(v) = source("vsphereVolume") {
        print_vsphere(w, v);
    } else if let Some(v) = source("cinder") {
        print_cinder(w, v);
    } else if let Some(v) = source("azureDisk") {
        print_azure_disk(w, v);
    } else if let Some(v) = source("photonPersistentDisk") {
        print_photon_persistent_disk(w, v);
    } else if let Some(v) = source("portworxVolume") {
        print_portworx(w, v);
    } else if let Some(v) = source("scaleIO") {
        print_scale_io_persistent(w, v);
    } else if let Some(v) = source("local") {
        print_local(w, v);
    } else if let Some(v) = source("cephfs") {
        print_cephfs(w, v);
    } else if let Some(v) = source("storageos") {
        print_storageos(w, v);
    } else if let Some(v) = source("fc") {
        print_fc(w, v);
    } else if let Some(v) = source("azureFile") {
        print_azure_file_persistent(w, v);
    } else if let Some(v) = source("flexVolume") {
        print_flex(w, v);
    } else if let Some(v) = source("flocker") {
        print_flocker(w, v);
    } else if let Some(v) = source("csi") {
        print_csi_persistent(w, v);
    } else {
        w.w(2, "<unknown>\n");
    }
}

// ---- Go %v of the typed fields, read from JSON ----

/// A string field (`""` when absent).
fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A bool field (`false` when absent).
fn b(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// An integer field (`0` when absent).
fn i(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// A `[]string` as `%v` prints it: `[a b]`.
fn slice(v: &Value, key: &str) -> String {
    let items: Vec<&str> = v.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    format!("[{}]", items.join(" "))
}

/// A `map[string]string` as `%v` prints it: `map[a:b c:d]`, keys sorted.
fn string_map(v: &Value, key: &str) -> String {
    let map: std::collections::BTreeMap<&str, &str> =
        v.get(key).and_then(Value::as_object).into_iter().flatten().map(|(k, v)| (k.as_str(), v.as_str().unwrap_or(""))).collect();
    format!("map[{}]", map.iter().map(|(k, v)| format!("{k}:{v}")).collect::<Vec<_>>().join(" "))
}

/// A `*LocalObjectReference` as its generated `String()` prints it.
fn local_object_reference(v: &Value, key: &str) -> String {
    match v.get(key).filter(|r| r.is_object()) {
        None => "nil".into(),
        Some(r) => format!("&LocalObjectReference{{Name:{},}}", s(r, "name")),
    }
}

/// A `*SecretReference` as its generated `String()` prints it.
fn secret_reference(v: &Value, key: &str) -> String {
    match v.get(key).filter(|r| r.is_object()) {
        None => "nil".into(),
        Some(r) => format!("&SecretReference{{Name:{},Namespace:{},}}", s(r, "name"), s(r, "namespace")),
    }
}

// ---- the printers ----

/// printHostPathVolumeSource.
fn print_host_path(w: &mut Writer, v: &Value) {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("<none>");
    w.w(2, format!("Type:\tHostPath (bare host directory volume)\n    Path:\t{}\n    HostPathType:\t{kind}\n", s(v, "path")));
}

/// printEmptyDirVolumeSource: a size limit prints only when positive.
fn print_empty_dir(w: &mut Writer, v: &Value) {
    let limit = v
        .get("sizeLimit")
        .and_then(|q| match q {
            Value::String(t) => Some(t.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .filter(|q| kubesim_api::quantity::parse_exact(q).is_ok_and(|(m, _, _)| m > 0))
        .map(|q| kubesim_api::quantity::canonical(&q).unwrap_or(q))
        .unwrap_or_else(|| "<unset>".into());
    w.w(2, format!("Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t{}\n    SizeLimit:\t{limit}\n", s(v, "medium")));
}

/// printGCEPersistentDiskVolumeSource.
fn print_gce_persistent_disk(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tGCEPersistentDisk (a Persistent Disk resource in Google Compute Engine)\n    PDName:\t{}\n    FSType:\t{}\n    Partition:\t{}\n    ReadOnly:\t{}\n",
            s(v, "pdName"),
            s(v, "fsType"),
            i(v, "partition"),
            b(v, "readOnly")
        ),
    );
}

/// printAWSElasticBlockStoreVolumeSource.
fn print_aws_elastic_block_store(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tAWSElasticBlockStore (a Persistent Disk resource in AWS)\n    VolumeID:\t{}\n    FSType:\t{}\n    Partition:\t{}\n    ReadOnly:\t{}\n",
            s(v, "volumeID"),
            s(v, "fsType"),
            i(v, "partition"),
            b(v, "readOnly")
        ),
    );
}

/// printGitRepoVolumeSource.
fn print_git_repo(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tGitRepo (a volume that is pulled from git when the pod is created)\n    Repository:\t{}\n    Revision:\t{}\n",
            s(v, "repository"),
            s(v, "revision")
        ),
    );
}

/// printSecretVolumeSource.
fn print_secret(w: &mut Writer, v: &Value) {
    w.w(2, format!("Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t{}\n    Optional:\t{}\n", s(v, "secretName"), b(v, "optional")));
}

/// printConfigMapVolumeSource.
fn print_config_map(w: &mut Writer, v: &Value) {
    w.w(2, format!("Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t{}\n    Optional:\t{}\n", s(v, "name"), b(v, "optional")));
}

/// printProjectedVolumeSource as kubectl v1.33+ prints it (kubernetes/kubernetes#129457): a
/// source's `optional` as `Optional: <bool>`. kubectl v1.32 printed the `*bool` itself
/// (`SecretOptionalName:`/`ConfigMapOptional: <nil>`); the layer follows its v1.34.
fn print_projected(w: &mut Writer, v: &Value) {
    w.w(2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n");
    for source in v.get("sources").and_then(Value::as_array).into_iter().flatten() {
        let part = |key: &str| source.get(key).filter(|p| !p.is_null());
        if let Some(secret) = part("secret") {
            w.w(2, format!("SecretName:\t{}\n    Optional:\t{}\n", s(secret, "name"), b(secret, "optional")));
        } else if part("downwardAPI").is_some() {
            w.w(2, "DownwardAPI:\ttrue\n");
        } else if let Some(cm) = part("configMap") {
            w.w(2, format!("ConfigMapName:\t{}\n    Optional:\t{}\n", s(cm, "name"), b(cm, "optional")));
        } else if let Some(token) = part("serviceAccountToken") {
            // Defaulted to 3600 by the API server.
            w.w(2, format!("TokenExpirationSeconds:\t{}\n", token.get("expirationSeconds").and_then(Value::as_i64).unwrap_or(3600)));
        }
    }
}

/// printNFSVolumeSource.
fn print_nfs(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t{}\n    Path:\t{}\n    ReadOnly:\t{}\n",
            s(v, "server"),
            s(v, "path"),
            b(v, "readOnly")
        ),
    );
}

/// printQuobyteVolumeSource.
fn print_quobyte(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tQuobyte (a Quobyte mount on the host that shares a pod's lifetime)\n    Registry:\t{}\n    Volume:\t{}\n    ReadOnly:\t{}\n",
            s(v, "registry"),
            s(v, "volume"),
            b(v, "readOnly")
        ),
    );
}

/// printPortworxVolumeSource.
fn print_portworx(w: &mut Writer, v: &Value) {
    w.w(2, format!("Type:\tPortworxVolume (a Portworx Volume resource)\n    VolumeID:\t{}\n", s(v, "volumeID")));
}

/// printISCSIVolumeSource and printISCSIPersistentVolumeSource (identical output; the
/// persistent one's `*SecretReference` prints as its own type).
fn print_iscsi(w: &mut Writer, v: &Value) {
    let initiator = v.get("initiatorName").and_then(Value::as_str).unwrap_or("<none>");
    let secret = match v.get("secretRef").and_then(|r| r.get("namespace")) {
        Some(_) => secret_reference(v, "secretRef"),
        None => local_object_reference(v, "secretRef"),
    };
    w.w(
        2,
        format!(
            "Type:\tISCSI (an ISCSI Disk resource that is attached to a kubelet's host machine and then exposed to the pod)\n    TargetPortal:\t{}\n    IQN:\t{}\n    Lun:\t{}\n    ISCSIInterface\t{}\n    FSType:\t{}\n    ReadOnly:\t{}\n    Portals:\t{}\n    DiscoveryCHAPAuth:\t{}\n    SessionCHAPAuth:\t{}\n    SecretRef:\t{secret}\n    InitiatorName:\t{initiator}\n",
            s(v, "targetPortal"),
            s(v, "iqn"),
            i(v, "lun"),
            v.get("iscsiInterface").and_then(Value::as_str).unwrap_or("default"),
            s(v, "fsType"),
            b(v, "readOnly"),
            slice(v, "portals"),
            b(v, "chapAuthDiscovery"),
            b(v, "chapAuthSession"),
        ),
    );
}

/// printGlusterfsVolumeSource.
fn print_glusterfs(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tGlusterfs (a Glusterfs mount on the host that shares a pod's lifetime)\n    EndpointsName:\t{}\n    Path:\t{}\n    ReadOnly:\t{}\n",
            s(v, "endpoints"),
            s(v, "path"),
            b(v, "readOnly")
        ),
    );
}

/// printGlusterfsPersistentVolumeSource.
fn print_glusterfs_persistent(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tGlusterfs (a Glusterfs mount on the host that shares a pod's lifetime)\n    EndpointsName:\t{}\n    EndpointsNamespace:\t{}\n    Path:\t{}\n    ReadOnly:\t{}\n",
            s(v, "endpoints"),
            v.get("endpointsNamespace").and_then(Value::as_str).unwrap_or("<unset>"),
            s(v, "path"),
            b(v, "readOnly")
        ),
    );
}

/// printPersistentVolumeClaimVolumeSource.
fn print_persistent_volume_claim_source(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t{}\n    ReadOnly:\t{}\n",
            s(v, "claimName"),
            b(v, "readOnly")
        ),
    );
}

/// printEphemeralVolumeSource: the claim template through printPersistentVolumeClaim (not a
/// full claim), nested two levels.
fn print_ephemeral(w: &mut Writer, v: &Value) {
    w.w(2, "Type:\tEphemeralVolume (an inline specification for a volume that gets created and deleted with the pod)\n");
    if let Some(template) = v.get("volumeClaimTemplate").filter(|t| t.is_object()) {
        let claim = serde_json::json!({
            "metadata": template.get("metadata").cloned().unwrap_or_else(|| serde_json::json!({})),
            "spec": template.get("spec").cloned().unwrap_or_else(|| serde_json::json!({})),
        });
        w.indent += 2;
        super::print_persistent_volume_claim(w, &claim, None, 0);
        w.indent -= 2;
    }
}

/// printRBDVolumeSource and printRBDPersistentVolumeSource.
fn print_rbd(w: &mut Writer, v: &Value) {
    let secret = match v.get("secretRef").and_then(|r| r.get("namespace")) {
        Some(_) => secret_reference(v, "secretRef"),
        None => local_object_reference(v, "secretRef"),
    };
    w.w(
        2,
        format!(
            "Type:\tRBD (a Rados Block Device mount on the host that shares a pod's lifetime)\n    CephMonitors:\t{}\n    RBDImage:\t{}\n    FSType:\t{}\n    RBDPool:\t{}\n    RadosUser:\t{}\n    Keyring:\t{}\n    SecretRef:\t{secret}\n    ReadOnly:\t{}\n",
            slice(v, "monitors"),
            s(v, "image"),
            s(v, "fsType"),
            v.get("pool").and_then(Value::as_str).unwrap_or("rbd"),
            v.get("user").and_then(Value::as_str).unwrap_or("admin"),
            v.get("keyring").and_then(Value::as_str).unwrap_or("/etc/ceph/keyring"),
            b(v, "readOnly")
        ),
    );
}

/// printDownwardAPIVolumeSource.
fn print_downward_api(w: &mut Writer, v: &Value) {
    w.w(2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n");
    for item in v.get("items").and_then(Value::as_array).into_iter().flatten() {
        if let Some(f) = item.get("fieldRef").filter(|f| f.is_object()) {
            w.w(3, format!("{} -> {}\n", s(f, "fieldPath"), s(item, "path")));
        }
        if let Some(r) = item.get("resourceFieldRef").filter(|r| r.is_object()) {
            w.w(3, format!("{} -> {}\n", s(r, "resource"), s(item, "path")));
        }
    }
}

/// printAzureDiskVolumeSource (its pointers are set by defaulting).
fn print_azure_disk(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tAzureDisk (an Azure Data Disk mount on the host and bind mount to the pod)\n    DiskName:\t{}\n    DiskURI:\t{}\n    Kind: \t{}\n    FSType:\t{}\n    CachingMode:\t{}\n    ReadOnly:\t{}\n",
            s(v, "diskName"),
            s(v, "diskURI"),
            v.get("kind").and_then(Value::as_str).unwrap_or("Shared"),
            v.get("fsType").and_then(Value::as_str).unwrap_or("ext4"),
            v.get("cachingMode").and_then(Value::as_str).unwrap_or("ReadWrite"),
            b(v, "readOnly")
        ),
    );
}

/// printVsphereVolumeSource.
fn print_vsphere(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tvSphereVolume (a Persistent Disk resource in vSphere)\n    VolumePath:\t{}\n    FSType:\t{}\n    StoragePolicyName:\t{}\n",
            s(v, "volumePath"),
            s(v, "fsType"),
            s(v, "storagePolicyName")
        ),
    );
}

/// printPhotonPersistentDiskVolumeSource.
fn print_photon_persistent_disk(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!("Type:\tPhotonPersistentDisk (a Persistent Disk resource in photon platform)\n    PdID:\t{}\n    FSType:\t{}\n", s(v, "pdID"), s(v, "fsType")),
    );
}

/// printCinderVolumeSource and printCinderPersistentVolumeSource.
fn print_cinder(w: &mut Writer, v: &Value) {
    let secret = match v.get("secretRef").and_then(|r| r.get("namespace")) {
        Some(_) => secret_reference(v, "secretRef"),
        None => local_object_reference(v, "secretRef"),
    };
    w.w(
        2,
        format!(
            "Type:\tCinder (a Persistent Disk resource in OpenStack)\n    VolumeID:\t{}\n    FSType:\t{}\n    ReadOnly:\t{}\n    SecretRef:\t{secret}\n",
            s(v, "volumeID"),
            s(v, "fsType"),
            b(v, "readOnly")
        ),
    );
}

/// printScaleIOVolumeSource.
fn print_scale_io(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tScaleIO (a persistent volume backed by a block device in ScaleIO)\n    Gateway:\t{}\n    System:\t{}\n    Protection Domain:\t{}\n    Storage Pool:\t{}\n    Storage Mode:\t{}\n    VolumeName:\t{}\n    FSType:\t{}\n    ReadOnly:\t{}\n",
            s(v, "gateway"),
            s(v, "system"),
            s(v, "protectionDomain"),
            s(v, "storagePool"),
            v.get("storageMode").and_then(Value::as_str).unwrap_or("ThinProvisioned"),
            s(v, "volumeName"),
            v.get("fsType").and_then(Value::as_str).unwrap_or("xfs"),
            b(v, "readOnly")
        ),
    );
}

/// printScaleIOPersistentVolumeSource.
fn print_scale_io_persistent(w: &mut Writer, v: &Value) {
    let secret = v.get("secretRef").cloned().unwrap_or(Value::Null);
    w.w(
        2,
        format!(
            "Type:\tScaleIO (a persistent volume backed by a block device in ScaleIO)\n    Gateway:\t{}\n    System:\t{}\n    Protection Domain:\t{}\n    Storage Pool:\t{}\n    Storage Mode:\t{}\n    VolumeName:\t{}\n    SecretName:\t{}\n    SecretNamespace:\t{}\n    FSType:\t{}\n    ReadOnly:\t{}\n",
            s(v, "gateway"),
            s(v, "system"),
            s(v, "protectionDomain"),
            s(v, "storagePool"),
            v.get("storageMode").and_then(Value::as_str).unwrap_or("ThinProvisioned"),
            s(v, "volumeName"),
            s(&secret, "name"),
            s(&secret, "namespace"),
            v.get("fsType").and_then(Value::as_str).unwrap_or("xfs"),
            b(v, "readOnly")
        ),
    );
}

/// printLocalVolumeSource.
fn print_local(w: &mut Writer, v: &Value) {
    w.w(2, format!("Type:\tLocalVolume (a persistent volume backed by local storage on a node)\n    Path:\t{}\n", s(v, "path")));
}

/// printCephFSVolumeSource and printCephFSPersistentVolumeSource.
fn print_cephfs(w: &mut Writer, v: &Value) {
    let secret = match v.get("secretRef").and_then(|r| r.get("namespace")) {
        Some(_) => secret_reference(v, "secretRef"),
        None => local_object_reference(v, "secretRef"),
    };
    w.w(
        2,
        format!(
            "Type:\tCephFS (a CephFS mount on the host that shares a pod's lifetime)\n    Monitors:\t{}\n    Path:\t{}\n    User:\t{}\n    SecretFile:\t{}\n    SecretRef:\t{secret}\n    ReadOnly:\t{}\n",
            slice(v, "monitors"),
            s(v, "path"),
            s(v, "user"),
            s(v, "secretFile"),
            b(v, "readOnly")
        ),
    );
}

/// printStorageOSVolumeSource and printStorageOSPersistentVolumeSource.
fn print_storageos(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tStorageOS (a StorageOS Persistent Disk resource)\n    VolumeName:\t{}\n    VolumeNamespace:\t{}\n    FSType:\t{}\n    ReadOnly:\t{}\n",
            s(v, "volumeName"),
            s(v, "volumeNamespace"),
            s(v, "fsType"),
            b(v, "readOnly")
        ),
    );
}

/// printFCVolumeSource.
fn print_fc(w: &mut Writer, v: &Value) {
    let wwns: Vec<&str> = v.get("targetWWNs").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let lun = v.get("lun").and_then(Value::as_i64).map(|l| l.to_string()).unwrap_or_else(|| "<none>".into());
    w.w(
        2,
        format!(
            "Type:\tFC (a Fibre Channel disk)\n    TargetWWNs:\t{}\n    LUN:\t{lun}\n    FSType:\t{}\n    ReadOnly:\t{}\n",
            wwns.join(", "),
            s(v, "fsType"),
            b(v, "readOnly")
        ),
    );
}

/// printAzureFileVolumeSource.
fn print_azure_file(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tAzureFile (an Azure File Service mount on the host and bind mount to the pod)\n    SecretName:\t{}\n    ShareName:\t{}\n    ReadOnly:\t{}\n",
            s(v, "secretName"),
            s(v, "shareName"),
            b(v, "readOnly")
        ),
    );
}

/// printAzureFilePersistentVolumeSource.
fn print_azure_file_persistent(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tAzureFile (an Azure File Service mount on the host and bind mount to the pod)\n    SecretName:\t{}\n    SecretNamespace:\t{}\n    ShareName:\t{}\n    ReadOnly:\t{}\n",
            s(v, "secretName"),
            s(v, "secretNamespace"),
            s(v, "shareName"),
            b(v, "readOnly")
        ),
    );
}

/// printFlexVolumeSource and printFlexPersistentVolumeSource.
fn print_flex(w: &mut Writer, v: &Value) {
    let secret = match v.get("secretRef").and_then(|r| r.get("namespace")) {
        Some(_) => secret_reference(v, "secretRef"),
        None => local_object_reference(v, "secretRef"),
    };
    w.w(
        2,
        format!(
            "Type:\tFlexVolume (a generic volume resource that is provisioned/attached using an exec based plugin)\n    Driver:\t{}\n    FSType:\t{}\n    SecretRef:\t{secret}\n    ReadOnly:\t{}\n    Options:\t{}\n",
            s(v, "driver"),
            s(v, "fsType"),
            b(v, "readOnly"),
            string_map(v, "options")
        ),
    );
}

/// printFlockerVolumeSource.
fn print_flocker(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tFlocker (a Flocker volume mounted by the Flocker agent)\n    DatasetName:\t{}\n    DatasetUUID:\t{}\n",
            s(v, "datasetName"),
            s(v, "datasetUUID")
        ),
    );
}

/// printCSIVolumeSource (inline, in a pod).
fn print_csi(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t{}\n    FSType:\t{}\n    ReadOnly:\t{}\n",
            s(v, "driver"),
            s(v, "fsType"),
            b(v, "readOnly")
        ),
    );
    print_csi_attributes(w, "VolumeAttributes", v.get("volumeAttributes"));
}

/// printCSIPersistentVolumeSource.
fn print_csi_persistent(w: &mut Writer, v: &Value) {
    w.w(
        2,
        format!(
            "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t{}\n    FSType:\t{}\n    VolumeHandle:\t{}\n    ReadOnly:\t{}\n",
            s(v, "driver"),
            s(v, "fsType"),
            s(v, "volumeHandle"),
            b(v, "readOnly")
        ),
    );
    print_csi_attributes(w, "VolumeAttributes", v.get("volumeAttributes"));
}

/// printCSIPersistentVolumeAttributesMultiline: every write at LEVEL_2, so the values after the
/// first line's tab carry the level's indent too; keys sorted, lines cut at maxAnnotationLen.
fn print_csi_attributes(w: &mut Writer, title: &str, attributes: Option<&Value>) {
    w.w(2, format!("{title}:\t"));
    let attributes: std::collections::BTreeMap<&str, &str> =
        attributes.and_then(Value::as_object).into_iter().flatten().map(|(k, v)| (k.as_str(), v.as_str().unwrap_or(""))).collect();
    if attributes.is_empty() {
        // WriteLine: at LEVEL_0.
        w.w(0, "<none>\n");
        return;
    }
    for (n, (key, value)) in attributes.iter().enumerate() {
        if n != 0 {
            w.w(2, "");
            w.w(2, "\t");
        }
        let line = format!("{key}={value}");
        match line.char_indices().nth(140) {
            Some((cut, _)) => w.w(2, format!("{}...\n", &line[..cut])),
            None => w.w(2, format!("{line}\n")),
        }
    }
}

/// printImageVolumeSource.
fn print_image(w: &mut Writer, v: &Value) {
    w.w(2, format!("Type:\tImage (a container image or OCI artifact)\n    Reference:\t{}\n    PullPolicy:\t{}\n", s(v, "reference"), s(v, "pullPolicy")));
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_api::k8s_openapi::api::core::v1::Volume;

    fn render(volumes: serde_json::Value) -> String {
        let volumes: Vec<Volume> = serde_json::from_value(volumes).unwrap();
        let mut w = Writer::default();
        describe_volumes(&mut w, &volumes, "");
        w.finish()
    }

    // describe_test.go TestDescribePodVolumes: an image volume's lines.
    #[test]
    fn describe_pod_volumes_image() {
        let out = render(serde_json::json!([{"name": "image", "image": {"reference": "image", "pullPolicy": "IfNotPresent"}}]));
        assert_eq!(
            out,
            "Volumes:\n  image:\n    Type:        Image (a container image or OCI artifact)\n    Reference:   image\n    PullPolicy:  IfNotPresent\n"
        );
    }

    // v1.33+'s printProjectedVolumeSource: each source's optional flag as a bool.
    #[test]
    fn projected_sources_print_their_optional_flags() {
        let out = render(serde_json::json!([{
            "name": "kube-api-access-x",
            "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": []}},
                {"secret": {"name": "s", "optional": true}}
            ]}
        }]));
        assert_eq!(
            out,
            "Volumes:\n  kube-api-access-x:\n    Type:                    Projected (a volume that contains injected data from multiple sources)\n    TokenExpirationSeconds:  3607\n    ConfigMapName:           kube-root-ca.crt\n    Optional:                false\n    DownwardAPI:             true\n    SecretName:              s\n    Optional:                true\n"
        );
    }

    #[test]
    fn host_path_empty_dir_csi_and_unknown_follow_upstream() {
        let out = render(serde_json::json!([
            {"name": "h", "hostPath": {"path": "/data"}},
            {"name": "e", "emptyDir": {"sizeLimit": "1024Mi"}},
            {"name": "z", "emptyDir": {"sizeLimit": "0"}},
            {"name": "c", "csi": {"driver": "d", "volumeAttributes": {"b": "2", "a": "1"}}},
            {"name": "i", "image": {"reference": "busybox", "pullPolicy": "IfNotPresent"}},
        ]));
        let want = [
            "Volumes:",
            "  h:",
            "    Type:          HostPath (bare host directory volume)",
            "    Path:          /data",
            "    HostPathType:  <none>",
            "  e:",
            "    Type:          EmptyDir (a temporary directory that shares a pod's lifetime)",
            "    Medium:        ",
            "    SizeLimit:     1Gi",
            "  z:",
            "    Type:          EmptyDir (a temporary directory that shares a pod's lifetime)",
            "    Medium:        ",
            "    SizeLimit:     <unset>",
            "  c:",
            "    Type:              CSI (a Container Storage Interface (CSI) volume source)",
            "    Driver:            d",
            "    FSType:            ",
            "    ReadOnly:          false",
            "    VolumeAttributes:      a=1",
            "                           b=2",
            "  i:",
            "    Type:       Image (a container image or OCI artifact)",
            "    Reference:  busybox",
            "    PullPolicy:  IfNotPresent",
        ];
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(got.len(), want.len(), "{out}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.split_whitespace().collect::<Vec<_>>(), w.split_whitespace().collect::<Vec<_>>(), "{out}");
        }
    }

    #[test]
    fn go_value_formatting() {
        let v = serde_json::json!({"monitors": ["a", "b"], "options": {"z": "1", "a": "2"}, "secretRef": {"name": "s"}});
        assert_eq!(slice(&v, "monitors"), "[a b]");
        assert_eq!(slice(&v, "missing"), "[]");
        assert_eq!(string_map(&v, "options"), "map[a:2 z:1]");
        assert_eq!(local_object_reference(&v, "secretRef"), "&LocalObjectReference{Name:s,}");
        assert_eq!(local_object_reference(&v, "missing"), "nil");
    }
}
