//! The volume manager (pkg/kubelet/volumemanager and the volume plugins): each of a pod's
//! volumes becomes a tree in the node's volume storage, and each of a container's
//! volumeMounts a mount of it — by reference, so the pod's containers share the bytes.
//!
//! - emptyDir: an empty directory per pod (`<pod-uid>/<volume>`), kept across container
//!   restarts, gone with the pod.
//! - configMap, secret, downwardAPI, projected: rendered with Kubernetes' atomic-writer layout
//!   (`..data` → a timestamped directory), honouring items, paths and modes; mounted read-only.
//! - hostPath: a directory of the node's own filesystem (`node`), created for
//!   DirectoryOrCreate / FileOrCreate, checked for Directory / File.
//! - persistentVolumeClaim: the claim must be Bound; a CSI volume is what the driver published
//!   at the pod's target path (the volume manager, [`crate::volume_manager`], attached, staged
//!   and published it before the pod's sandbox started); otherwise its data is the PV's
//!   hostPath/local path on this node, or a per-volume tree (`pv/<name>`) that outlives the
//!   pods using it.
//!
//! Errors are the kubelet's MountVolume.SetUp and WaitForAttachAndMount messages.

use crate::env::{field_value, resource_value};
use kubesim_api::k8s_openapi::api::core::v1::{Container, KeyToPath, Pod, Volume};
use kubesim_api::object::Object;
use kubesim_os::fs::{atomic_volume, Mount, Tree, Volumes};
use std::collections::BTreeMap;

pub use kubesim_host::{node_root, NODE_ROOT};

/// The atomic writer's timestamped directory name for content written at `now`.
fn stamp(now_unix_ms: u64) -> String {
    let secs = now_unix_ms / 1000;
    let t = kubesim_api::time::time_at(now_unix_ms.saturating_sub(kubesim_api::time::EPOCH_UNIX_SECONDS as u64 * 1000));
    let text = t.0.to_string();
    let date = text.get(0..19).unwrap_or("1970-01-01T00:00:00").replace(['-', ':'], "_").replace('T', "_");
    format!("{date}.{}", 100_000_000 + secs % 900_000_000)
}

fn keyed(data: &BTreeMap<String, Vec<u8>>, items: Option<&Vec<KeyToPath>>, default_mode: u32) -> Result<Vec<(String, Vec<u8>, u32)>, String> {
    Ok(match items {
        Some(items) => {
            let mut out = Vec::new();
            for item in items {
                match data.get(&item.key) {
                    Some(value) => out.push((item.path.clone(), value.clone(), item.mode.map(|m| m as u32).unwrap_or(default_mode))),
                    None => return Err(format!("configmap references non-existent config key: {}", item.key)),
                }
            }
            out
        }
        None => data.iter().map(|(k, v)| (k.clone(), v.clone(), default_mode)).collect(),
    })
}

fn atomic(files: &[(String, Vec<u8>, u32)], now_unix_ms: u64) -> Tree {
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, d, _)| (p.as_str(), d.as_slice())).collect();
    let mode = files.first().map_or(0o644, |f| f.2);
    atomic_volume(&refs, &stamp(now_unix_ms), mode)
}

/// The data of a ConfigMap (data and binaryData) or Secret, if it exists.
fn source_data(store: &kubesim_store::Store, namespace: &str, kind: &str, name: &str) -> Option<BTreeMap<String, Vec<u8>>> {
    match kind {
        "configmap" => store.get(("", "configmaps"), namespace, name).and_then(|o| match o.as_ref() {
            Object::ConfigMap(cm) => {
                let mut data: BTreeMap<String, Vec<u8>> = cm.data.clone().unwrap_or_default().into_iter().map(|(k, v)| (k, v.into_bytes())).collect();
                data.extend(cm.binary_data.clone().unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)));
                Some(data)
            }
            _ => None,
        }),
        _ => store.get(("", "secrets"), namespace, name).and_then(|o| match o.as_ref() {
            Object::Secret(s) => {
                let mut data: BTreeMap<String, Vec<u8>> = s.data.clone().unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)).collect();
                data.extend(s.string_data.clone().unwrap_or_default().into_iter().map(|(k, v)| (k, v.into_bytes())));
                Some(data)
            }
            _ => None,
        }),
    }
}

/// Everything the volume manager needs to know about the node and the moment.
pub struct VolumeContext<'a> {
    /// The API server's store (ConfigMaps, Secrets, claims, volumes).
    pub store: &'a kubesim_store::Store,
    /// Unix ms now (file times, the atomic writer's directory name).
    pub now_unix_ms: u64,
    /// The node's allocatable (downward API resource fields default to it), in milli-units.
    pub node_allocatable: &'a BTreeMap<String, i128>,
    /// What the CSI node plugins published, by target path.
    pub csi_published: &'a BTreeMap<String, kubesim_host::csi::Published>,
}

/// Sets up the volumes a container mounts and returns its mounts.
pub fn prepare_mounts(pod: &Pod, container: &Container, volumes: &mut Volumes, cx: &VolumeContext) -> Result<Vec<Mount>, String> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let pod_volumes: &[Volume] = pod.spec.as_ref().and_then(|s| s.volumes.as_deref()).unwrap_or_default();
    let mut mounts = Vec::with_capacity(container.volume_mounts.as_ref().map_or(0, Vec::len));
    for mount in container.volume_mounts.iter().flatten() {
        let Some(volume) = pod_volumes.iter().find(|v| v.name == mount.name) else {
            return Err(format!("volume {:?} not found in the pod", mount.name));
        };
        let (id, base, read_only) = set_up(pod, &uid, &namespace, volume, volumes, cx)?;
        let sub_path = match (mount.sub_path.as_deref().filter(|s| !s.is_empty()), base) {
            (Some(sub), Some(base)) => Some(format!("{}/{sub}", base.trim_end_matches('/'))),
            (Some(sub), None) => Some(sub.to_string()),
            (None, base) => base,
        };
        mounts.push(Mount {
            path: mount.mount_path.clone(),
            volume: id,
            sub_path,
            read_only: read_only || mount.read_only.unwrap_or(false),
            memory: memory_backed(volume),
        });
    }
    Ok(mounts)
}

/// Whether the volume plugin backs `volume` with memory (a tmpfs): secret, projected and
/// downwardAPI volumes wrap an emptyDir of medium Memory (pkg/volume/secret, projected,
/// downwardapi: wrappedVolumeSpec), and an emptyDir asks for it with `medium: Memory`.
fn memory_backed(volume: &Volume) -> bool {
    volume.secret.is_some()
        || volume.projected.is_some()
        || volume.downward_api.is_some()
        || volume.empty_dir.as_ref().is_some_and(|e| e.medium.as_deref() == Some("Memory"))
}

/// Removes a pod's own volumes (`<pod-uid>/<volume>`: emptyDirs and the rendered configMap,
/// secret, downwardAPI and projected volumes) from the node's storage once the pod is gone,
/// as the volume plugins' TearDown and the kubelet's cleanupOrphanedPodDirs remove
/// `/var/lib/kubelet/pods/<uid>`. Claims' data (`pv/<name>`, the node's own directories, CSI
/// devices) outlives the pod.
pub(crate) fn remove_pod_dirs(volumes: &mut Volumes, uid: &str) {
    if uid.is_empty() {
        return;
    }
    let prefix = format!("{uid}/");
    let ids: Vec<String> = volumes.trees.range(prefix.clone()..).take_while(|(id, _)| id.starts_with(&prefix)).map(|(id, _)| id.clone()).collect();
    for id in ids {
        volumes.trees.remove(&id);
    }
}

/// Sets up one volume: (volume id, sub-path inside it, read-only by nature).
fn set_up(pod: &Pod, uid: &str, namespace: &str, volume: &Volume, volumes: &mut Volumes, cx: &VolumeContext) -> Result<(String, Option<String>, bool), String> {
    let id = format!("{uid}/{}", volume.name);
    let setup_failed = |why: String| format!("MountVolume.SetUp failed for volume {:?} : {why}", volume.name);
    if volume.empty_dir.is_some() {
        volumes.trees.entry(id.clone()).or_insert_with(|| {
            let mut tree = Tree::new();
            tree.add_dir("/", 0o777);
            tree
        });
        return Ok((id, None, false));
    }
    if let Some(cm) = volume.config_map.as_ref() {
        let mode = cm.default_mode.unwrap_or(0o644) as u32;
        match source_data(cx.store, namespace, "configmap", &cm.name) {
            Some(data) => {
                let files = keyed(&data, cm.items.as_ref(), mode).map_err(setup_failed)?;
                volumes.trees.insert(id.clone(), atomic(&files, cx.now_unix_ms));
            }
            None if cm.optional.unwrap_or(false) => {
                volumes.trees.entry(id.clone()).or_insert_with(|| atomic(&[], cx.now_unix_ms));
            }
            None => return Err(setup_failed(format!("configmap {:?} not found", cm.name))),
        }
        return Ok((id, None, true));
    }
    if let Some(secret) = volume.secret.as_ref() {
        let name = secret.secret_name.clone().unwrap_or_default();
        let mode = secret.default_mode.unwrap_or(0o644) as u32;
        match source_data(cx.store, namespace, "secret", &name) {
            Some(data) => {
                let files = keyed(&data, secret.items.as_ref(), mode).map_err(setup_failed)?;
                volumes.trees.insert(id.clone(), atomic(&files, cx.now_unix_ms));
            }
            None if secret.optional.unwrap_or(false) => {
                volumes.trees.entry(id.clone()).or_insert_with(|| atomic(&[], cx.now_unix_ms));
            }
            None => return Err(setup_failed(format!("secret {name:?} not found"))),
        }
        return Ok((id, None, true));
    }
    if let Some(downward) = volume.downward_api.as_ref() {
        let mode = downward.default_mode.unwrap_or(0o644) as u32;
        let files: Vec<(String, Vec<u8>, u32)> = downward
            .items
            .iter()
            .flatten()
            .map(|item| (item.path.clone(), downward_item(pod, item, cx).into_bytes(), item.mode.map(|m| m as u32).unwrap_or(mode)))
            .collect();
        volumes.trees.insert(id.clone(), atomic(&files, cx.now_unix_ms));
        return Ok((id, None, true));
    }
    if let Some(projected) = volume.projected.as_ref() {
        let mode = projected.default_mode.unwrap_or(0o644) as u32;
        let mut files: Vec<(String, Vec<u8>, u32)> = Vec::new();
        for source in projected.sources.iter().flatten() {
            if let Some(cm) = source.config_map.as_ref() {
                match source_data(cx.store, namespace, "configmap", &cm.name) {
                    Some(data) => files.extend(keyed(&data, cm.items.as_ref(), mode).map_err(setup_failed)?),
                    None if cm.optional.unwrap_or(false) => {}
                    None => return Err(setup_failed(format!("configmap {:?} not found", cm.name))),
                }
            }
            if let Some(secret) = source.secret.as_ref() {
                match source_data(cx.store, namespace, "secret", &secret.name) {
                    Some(data) => files.extend(keyed(&data, secret.items.as_ref(), mode).map_err(setup_failed)?),
                    None if secret.optional.unwrap_or(false) => {}
                    None => return Err(setup_failed(format!("secret {:?} not found", secret.name))),
                }
            }
            if let Some(downward) = source.downward_api.as_ref() {
                files.extend(downward.items.iter().flatten().map(|item| (item.path.clone(), downward_item(pod, item, cx).into_bytes(), mode)));
            }
            if let Some(token) = source.service_account_token.as_ref() {
                files.push((token.path.clone(), service_account_token(pod).into_bytes(), mode));
            }
            if let Some(bundle) = source.cluster_trust_bundle.as_ref() {
                files.push((bundle.path.clone(), ROOT_CA.as_bytes().to_vec(), mode));
            }
        }
        volumes.trees.insert(id.clone(), atomic(&files, cx.now_unix_ms));
        return Ok((id, None, true));
    }
    if let Some(host_path) = volume.host_path.as_ref() {
        let path = host_path.path.clone();
        let kind = host_path.type_.clone().unwrap_or_default();
        let node = volumes.trees.entry(NODE_ROOT.to_string()).or_insert_with(node_root);
        let exists = node.get_path(&path);
        let is_dir = exists.is_some_and(|n| matches!(n.kind, kubesim_os::fs::NodeKind::Dir(_)));
        match kind.as_str() {
            "DirectoryOrCreate" | "" if exists.is_none() => node.add_dir(&path, 0o755),
            "FileOrCreate" if exists.is_none() => node.add_file(&path, Vec::new(), 0o644),
            "Directory" if !is_dir => return Err(setup_failed(format!("hostPath type check failed: {path} is not a directory"))),
            "File" if exists.is_none() || is_dir => return Err(setup_failed(format!("hostPath type check failed: {path} is not a file"))),
            _ => {}
        }
        return Ok((NODE_ROOT.to_string(), Some(path), false));
    }
    if let Some(claim) = volume.persistent_volume_claim.as_ref() {
        return claim_volume(uid, &claim.claim_name, &volume.name, namespace, volumes, cx)
            .map(|(id, base, ro)| (id, base, ro || claim.read_only.unwrap_or(false)));
    }
    if volume.ephemeral.is_some() {
        let claim = format!("{}-{}", pod.metadata.name.clone().unwrap_or_default(), volume.name);
        return claim_volume(uid, &claim, &volume.name, namespace, volumes, cx);
    }
    // Volume types the model has no data path for (nfs, iscsi, csi inline…): an empty
    // directory, so containers still start.
    volumes.trees.entry(id.clone()).or_default();
    Ok((id, None, false))
}

/// A claim's data: what the CSI driver published for this pod, the bound PV's hostPath/local
/// path on this node, else its own tree. (volume id, sub-path, read-only).
fn claim_volume(
    pod_uid: &str,
    claim: &str,
    volume_name: &str,
    namespace: &str,
    volumes: &mut Volumes,
    cx: &VolumeContext,
) -> Result<(String, Option<String>, bool), String> {
    let pvc = cx.store.get(("", "persistentvolumeclaims"), namespace, claim).map(|o| o.to_json());
    let Some(pvc) = pvc else { return Err(format!("persistentvolumeclaim {claim:?} not found")) };
    if pvc.pointer("/status/phase").and_then(|p| p.as_str()) != Some("Bound") {
        return Err(format!("Unable to attach or mount volumes: unmounted volumes=[{volume_name}], unattached volumes=[{volume_name}]: persistentvolumeclaim {claim:?} is not bound"));
    }
    let pv_name = pvc.pointer("/spec/volumeName").and_then(|v| v.as_str()).unwrap_or_default().to_string();
    let pv = cx.store.get(("", "persistentvolumes"), "", &pv_name).map(|o| o.to_json());
    if pv.as_ref().is_some_and(|pv| pv.pointer("/spec/csi").is_some()) {
        let target = kubesim_api::csi::pod_volume_path(pod_uid, &pv_name);
        return match cx.csi_published.get(&target) {
            Some(p) => Ok((p.volume.clone(), p.sub_path.clone(), p.read_only)),
            None => Err(format!("MountVolume.SetUp failed for volume {pv_name:?} : volume is not published at {target}")),
        };
    }
    let local_path =
        pv.as_ref().and_then(|pv| pv.pointer("/spec/hostPath/path").or_else(|| pv.pointer("/spec/local/path"))).and_then(|p| p.as_str()).map(str::to_string);
    match local_path {
        Some(path) => {
            let node = volumes.trees.entry(NODE_ROOT.to_string()).or_insert_with(node_root);
            if node.get_path(&path).is_none() {
                node.add_dir(&path, 0o755);
            }
            Ok((NODE_ROOT.to_string(), Some(path), false))
        }
        None => {
            let id = format!("pv/{pv_name}");
            volumes.trees.entry(id.clone()).or_insert_with(|| {
                let mut tree = Tree::new();
                tree.add_dir("/", 0o777);
                tree
            });
            Ok((id, None, false))
        }
    }
}

fn downward_item(pod: &Pod, item: &kubesim_api::k8s_openapi::api::core::v1::DownwardAPIVolumeFile, cx: &VolumeContext) -> String {
    if let Some(field) = item.field_ref.as_ref() {
        return field_value(pod, &field.field_path);
    }
    if let Some(resource) = item.resource_field_ref.as_ref() {
        let divisor = resource.divisor.as_ref().map(|d| d.0.as_str());
        return resource_value(pod, resource.container_name.as_deref().unwrap_or(""), &resource.resource, divisor, cx.node_allocatable);
    }
    String::new()
}

/// A bound service-account token: a JWT whose claims are the TokenRequest API's (issuer,
/// audience, `sub: system:serviceaccount:<namespace>:<name>`, the pod it is bound to), so the
/// API server's address inside the cluster knows who calls; the signature is a stable hash of
/// the pod's uid (not verifiable).
fn service_account_token(pod: &Pod) -> String {
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let account = pod.spec.as_ref().and_then(|s| s.service_account_name.clone()).unwrap_or_else(|| "default".into());
    let claims = serde_json::json!({
        "aud": ["https://kubernetes.default.svc.cluster.local"],
        "iss": "https://kubernetes.default.svc.cluster.local",
        "kubernetes.io": {
            "namespace": namespace,
            "pod": { "name": pod.metadata.name.clone().unwrap_or_default(), "uid": uid },
            "serviceaccount": { "name": account },
        },
        "sub": format!("system:serviceaccount:{namespace}:{account}"),
    });
    let base64url = |bytes: &[u8]| kubesim_os::applets::hash::base64_encode(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_");
    let h = kubesim_api::hash::fnv64a(uid.as_bytes());
    format!("{}.{}.{h:016x}", base64url(br#"{"alg":"RS256","kid":"kubesim"}"#), base64url(claims.to_string().as_bytes()))
}

/// The cluster's root CA (the `kube-root-ca.crt` ConfigMap's ca.crt).
pub const ROOT_CA: &str = "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAjMSEwHwYDVQQDDBhrdWJlc2lt\n-----END CERTIFICATE-----\n";
