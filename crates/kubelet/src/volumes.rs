//! Volumes (pkg/kubelet/volumemanager, the volume plugins): what each volume mount of a
//! container shows. configMap, secret and downwardAPI volumes are rendered from the API
//! objects; a persistentVolumeClaim must exist and be Bound before containers start
//! (WaitForAttachAndMount).

use kubesim_api::k8s_openapi::api::core::v1::{Container, Pod};
use kubesim_api::object::Object;
use std::collections::BTreeMap;

/// The files a container's volume mounts show (ConfigMap, Secret, downward API), keyed by
/// absolute path. A missing ConfigMap or Secret that is not optional fails the mount with the
/// kubelet's message.
pub(crate) fn volume_files(pod: &Pod, container: &Container, store: &kubesim_store::Store) -> Result<BTreeMap<String, String>, String> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let mut files = BTreeMap::new();
    let volumes = pod.spec.as_ref().and_then(|s| s.volumes.clone()).unwrap_or_default();
    for mount in container.volume_mounts.iter().flatten() {
        let Some(volume) = volumes.iter().find(|v| v.name == mount.name) else { continue };
        let base = mount.mount_path.trim_end_matches('/').to_string();
        let mut put = |data: BTreeMap<String, String>, items: Option<&Vec<kubesim_api::k8s_openapi::api::core::v1::KeyToPath>>| match items {
            Some(items) => {
                for item in items {
                    if let Some(value) = data.get(&item.key) {
                        files.insert(format!("{base}/{}", item.path), value.clone());
                    }
                }
            }
            None => {
                for (k, v) in data {
                    files.insert(format!("{base}/{k}"), v);
                }
            }
        };
        if let Some(cm) = volume.config_map.as_ref() {
            match store.get(("", "configmaps"), &namespace, &cm.name).and_then(|o| match o.as_ref() {
                Object::ConfigMap(c) => Some(c.data.clone().unwrap_or_default()),
                _ => None,
            }) {
                Some(data) => put(data, cm.items.as_ref()),
                None if cm.optional.unwrap_or(false) => {}
                None => return Err(format!("MountVolume.SetUp failed for volume {:?} : configmap {:?} not found", volume.name, cm.name)),
            }
        } else if let Some(secret) = volume.secret.as_ref() {
            let name = secret.secret_name.clone().unwrap_or_default();
            match store.get(("", "secrets"), &namespace, &name).and_then(|o| match o.as_ref() {
                Object::Secret(s) => Some(
                    s.data.clone().unwrap_or_default().into_iter().map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned())).collect::<BTreeMap<_, _>>(),
                ),
                _ => None,
            }) {
                Some(data) => put(data, secret.items.as_ref()),
                None if secret.optional.unwrap_or(false) => {}
                None => return Err(format!("MountVolume.SetUp failed for volume {:?} : secret {:?} not found", volume.name, name)),
            }
        } else if let Some(claim) = volume.persistent_volume_claim.as_ref() {
            // WaitForAttachAndMount: the claim must exist and be Bound before containers start.
            let pvc = store.get(("", "persistentvolumeclaims"), &namespace, &claim.claim_name).map(|o| o.to_json());
            match pvc {
                None => return Err(format!("persistentvolumeclaim {:?} not found", claim.claim_name)),
                Some(pvc) if pvc.pointer("/status/phase").and_then(|p| p.as_str()) != Some("Bound") => {
                    return Err(format!(
                        "Unable to attach or mount volumes: unmounted volumes=[{}], unattached volumes=[{}]: persistentvolumeclaim {:?} is not bound",
                        volume.name, volume.name, claim.claim_name
                    ));
                }
                Some(_) => {}
            }
        } else if let Some(downward) = volume.downward_api.as_ref() {
            for item in downward.items.iter().flatten() {
                let Some(field) = item.field_ref.as_ref() else { continue };
                let render = |map: &Option<BTreeMap<String, String>>| map.iter().flatten().map(|(k, v)| format!("{k}={v:?}")).collect::<Vec<_>>().join("\n");
                let value = match field.field_path.as_str() {
                    "metadata.labels" => render(&pod.metadata.labels),
                    "metadata.annotations" => render(&pod.metadata.annotations),
                    "metadata.name" => pod.metadata.name.clone().unwrap_or_default(),
                    "metadata.namespace" => namespace.clone(),
                    "metadata.uid" => pod.metadata.uid.clone().unwrap_or_default(),
                    _ => String::new(),
                };
                files.insert(format!("{base}/{}", item.path), value);
            }
        }
    }
    Ok(files)
}
