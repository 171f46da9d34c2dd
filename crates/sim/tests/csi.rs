#![cfg(not(target_arch = "wasm32"))]
//! The CSI path end to end: a StatefulSet on the `block` class (disk.csi.kubesim.io, kubesim's
//! network block storage) is provisioned in its node's zone, attached by the attach/detach
//! controller and the external-attacher, staged and published by the kubelet before its
//! containers start; what it writes survives a move to another node of the same zone (detach,
//! attach, the disk's content following it). Plus the Multi-Attach error for a ReadWriteOnce
//! volume used on two nodes, a volume that cannot attach, one that cannot mount, the host-path
//! driver (no attach) and the kubectl views.

use kubesim_api::csi::{attachment_name, device_mount_path, pod_volume_path, DISK_DRIVER, HOSTPATH_DRIVER};
use kubesim_api::object::Object;
use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;
use serde_json::Value;

const NODES: &[(&str, &str)] = &[("a1", "zone-a"), ("a2", "zone-a"), ("b1", "zone-b"), ("b2", "zone-b")];

fn world() -> World {
    let mut world = World::new(3);
    let mut yaml = String::new();
    for (name, zone) in NODES {
        yaml.push_str(&format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{kubernetes.io/hostname: {name}, kubernetes.io/os: linux, topology.kubernetes.io/zone: {zone}}}\nstatus:\n  capacity: {{cpu: \"4\", memory: 16Gi, pods: \"110\"}}\n  allocatable: {{cpu: \"4\", memory: 16Gi, pods: \"110\"}}\n---\n"
        ));
    }
    load(&mut world, &yaml);
    world
}

fn load(world: &mut World, yaml: &str) {
    let outcome = apply(world, &InputFile { name: "test.yaml".into(), text: yaml.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
}

fn get(world: &World, resource: (&'static str, &'static str), ns: &str, name: &str) -> Option<Value> {
    world.api().lookup(resource, ns, name).map(|o| o.to_json())
}

fn kubectl(world: &mut World, line: &str) -> String {
    let record = world.run_command(&format!("kubectl {line}"));
    assert_eq!(record.exit_code, 0, "{line}: {}", record.stderr);
    record.stdout
}

/// (reason, message) of the events about one object, in write order (repeats too).
fn events(world: &World, name: &str) -> Vec<(String, String)> {
    world
        .trace()
        .iter()
        .filter_map(|r| match r.object.as_ref() {
            Object::Event(e) if e.involved_object.name.as_deref() == Some(name) => {
                Some((e.reason.clone().unwrap_or_default(), e.message.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .collect()
}

fn phase(world: &World, pod: &str) -> String {
    get(world, ("", "pods"), "default", pod).and_then(|p| p["status"]["phase"].as_str().map(str::to_string)).unwrap_or_default()
}

fn node_of(world: &World, pod: &str) -> String {
    get(world, ("", "pods"), "default", pod).and_then(|p| p["spec"]["nodeName"].as_str().map(str::to_string)).unwrap_or_default()
}

fn run_until_running(world: &mut World, pod: &str, limit: u64) {
    while world.now() < limit && phase(world, pod) != "Running" {
        let next = world.now() + 500;
        world.run_until(next);
    }
    assert_eq!(phase(world, pod), "Running", "{pod} at {} ms: {:?}", world.now(), events(world, pod));
}

fn zone(node: &str) -> &'static str {
    NODES.iter().find(|(n, _)| *n == node).map(|(_, z)| *z).expect("known node")
}

/// The `csi/<node>` and `cri/<node>` notes' calls for a pod or volume, in order.
fn calls(world: &World, node: &str, needle: &str) -> Vec<String> {
    world
        .notes()
        .iter()
        .filter(|n| (n.target == format!("csi/{node}") || n.target == format!("cri/{node}")) && n.detail.contains(needle))
        .map(|n| n.call.clone())
        .collect()
}

const STATEFULSET: &str = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  serviceName: db\n  replicas: 1\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      terminationGracePeriodSeconds: 1\n      containers:\n      - name: c\n        image: busybox:1.36\n        command: [sh, -c, 'sleep 36000']\n        volumeMounts: [{name: data, mountPath: /data}]\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], storageClassName: block, resources: {requests: {storage: 2Gi}}}\n";

// The whole path: provision in the selected node's zone → attach → stage → publish → Running;
// a file written there is read back after the pod moved to the zone's other node.
#[test]
fn a_statefulset_on_block_storage_keeps_its_data_across_nodes_of_a_zone() {
    let mut world = world();
    load(&mut world, STATEFULSET);
    run_until_running(&mut world, "db-0", 60_000);
    let first = node_of(&world, "db-0");

    // Provisioned by the external-provisioner, in the node's zone.
    let claim = get(&world, ("", "persistentvolumeclaims"), "default", "data-db-0").unwrap();
    assert_eq!(claim["status"]["phase"], "Bound");
    assert_eq!(claim["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"], DISK_DRIVER);
    let pv_name = claim["spec"]["volumeName"].as_str().unwrap().to_string();
    let pv = get(&world, ("", "persistentvolumes"), "", &pv_name).unwrap();
    assert_eq!(pv["spec"]["csi"]["driver"], DISK_DRIVER);
    assert_eq!(pv["spec"]["csi"]["fsType"], "ext4");
    assert_eq!(pv["spec"]["capacity"]["storage"], "2Gi");
    let handle = pv["spec"]["csi"]["volumeHandle"].as_str().unwrap().to_string();
    assert!(handle.starts_with("vol-0") && handle.len() == 21, "{handle}");
    let term = &pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0];
    assert_eq!(term["key"], "topology.kubernetes.io/zone");
    assert_eq!(term["values"], serde_json::json!([zone(&first)]));
    let finalizers = pv["metadata"]["finalizers"].as_array().unwrap();
    for f in ["external-provisioner.volume.kubernetes.io/finalizer", "kubernetes.io/pv-protection", "external-attacher/disk-csi-kubesim-io"] {
        assert!(finalizers.iter().any(|x| x == f), "{f} in {finalizers:?}");
    }
    assert_eq!(world.runtime().cloud().disk(&handle).unwrap().zone.as_deref(), Some(zone(&first)));

    // Attached: the VolumeAttachment named after handle + driver + node, by the external-attacher.
    let va_name = attachment_name(&handle, DISK_DRIVER, &first);
    let va = get(&world, ("storage.k8s.io", "volumeattachments"), "", &va_name).unwrap();
    assert_eq!(va["spec"], serde_json::json!({"attacher": DISK_DRIVER, "nodeName": first, "source": {"persistentVolumeName": pv_name}}));
    assert_eq!(va["status"]["attached"], true);
    assert_eq!(va["status"]["attachmentMetadata"]["devicePath"], "/dev/xvdaa");
    assert_eq!(va["metadata"]["finalizers"], serde_json::json!(["external-attacher/disk-csi-kubesim-io"]));
    let patch = world.run_command(&format!("kubectl patch volumeattachment {va_name} --type=merge -p '{{\"spec\":{{\"nodeName\":\"b2\"}}}}'"));
    assert_ne!(patch.exit_code, 0);
    assert!(patch.stderr.contains(&format!("The VolumeAttachment \"{va_name}\" is invalid: spec: Invalid value:")), "{}", patch.stderr);
    assert!(patch.stderr.contains("field is immutable"), "{}", patch.stderr);
    let node = get(&world, ("", "nodes"), "", &first).unwrap();
    let unique = format!("kubernetes.io/csi/{DISK_DRIVER}^{handle}");
    assert_eq!(node["status"]["volumesAttached"], serde_json::json!([{"name": unique, "devicePath": ""}]));
    assert_eq!(node["status"]["volumesInUse"], serde_json::json!([unique]));
    let pod_events = events(&world, "db-0");
    assert!(pod_events.contains(&("SuccessfulAttachVolume".into(), format!("AttachVolume.Attach succeeded for volume {pv_name:?} "))), "{pod_events:?}");

    // Staged, then published, then the sandbox and the container.
    let uid = get(&world, ("", "pods"), "default", "db-0").unwrap()["metadata"]["uid"].as_str().unwrap().to_string();
    let host = world.host(&first).unwrap();
    assert!(host.csi.staged.contains_key(&device_mount_path(DISK_DRIVER, &handle)));
    assert!(host.csi.published.contains_key(&pod_volume_path(&uid, &pv_name)));
    let order: Vec<String> = calls(&world, &first, &pv_name).into_iter().chain(calls(&world, &first, "default/db-0")).collect();
    assert_eq!(&order[..2], ["NodeStageVolume", "NodePublishVolume"], "{order:?}");
    let sandbox_at = world.notes().iter().find(|n| n.call == "RunPodSandbox" && n.detail.starts_with("default/db-0")).unwrap().t_ms;
    let publish_at = world.notes().iter().find(|n| n.call == "NodePublishVolume" && n.detail.contains(&pv_name)).unwrap().t_ms;
    assert!(publish_at <= sandbox_at, "published at {publish_at}, sandbox at {sandbox_at}");

    // Write through the pod; the disk's filesystem has it.
    kubectl(&mut world, "exec db-0 -- sh -c 'echo kept across nodes > /data/hello.txt'");
    assert_eq!(kubectl(&mut world, "exec db-0 -- cat /data/hello.txt"), "kept across nodes\n");
    assert!(kubectl(&mut world, "exec db-0 -- ls /data").contains("lost+found"), "ext4 keeps lost+found");

    // Move it: the node is cordoned and the pod deleted; the StatefulSet brings it back on the
    // zone's other node once the volume left the first one.
    kubectl(&mut world, &format!("cordon {first}"));
    kubectl(&mut world, "delete pod db-0 --wait=false");
    let moved_from = world.now();
    let mut second = String::new();
    while world.now() < moved_from + 120_000 {
        let next = world.now() + 500;
        world.run_until(next);
        second = node_of(&world, "db-0");
        if !second.is_empty() && second != first && phase(&world, "db-0") == "Running" {
            break;
        }
    }
    assert_eq!(phase(&world, "db-0"), "Running", "{:?}", events(&world, "db-0"));
    assert_ne!(second, first);
    assert_eq!(zone(&second), zone(&first), "the PV's node affinity keeps it in its zone");
    assert_eq!(kubectl(&mut world, "exec db-0 -- cat /data/hello.txt"), "kept across nodes\n", "the data followed the disk");

    // The first node let go: unpublished, unstaged, no longer in use, detached.
    let host = world.host(&first).unwrap();
    assert!(host.csi.published.is_empty() && host.csi.staged.is_empty() && host.devices.is_empty());
    assert!(get(&world, ("storage.k8s.io", "volumeattachments"), "", &va_name).is_none(), "the old attachment is gone");
    let old_node = get(&world, ("", "nodes"), "", &first).unwrap();
    assert!(old_node["status"]["volumesInUse"].is_null() && old_node["status"]["volumesAttached"].is_null(), "{}", old_node["status"]);
    let teardown = calls(&world, &first, &pv_name);
    assert_eq!(teardown, ["NodeStageVolume", "NodePublishVolume", "NodeUnpublishVolume", "NodeUnstageVolume"]);
    let new_va = get(&world, ("storage.k8s.io", "volumeattachments"), "", &attachment_name(&handle, DISK_DRIVER, &second)).unwrap();
    assert_eq!(new_va["status"]["attached"], true);
    // The detach came through the cloud (ControllerUnpublishVolume), then the new attach.
    let controller_calls: Vec<&str> =
        world.notes().iter().filter(|n| n.target == format!("csi/{DISK_DRIVER}") && n.detail.contains(&handle)).map(|n| n.call.as_str()).collect();
    assert_eq!(controller_calls, ["ControllerPublishVolume", "ControllerUnpublishVolume", "ControllerPublishVolume"]);
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());

    // kubectl's views.
    let out = kubectl(&mut world, "get volumeattachments");
    let words: Vec<Vec<&str>> = out.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(words[0], ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]);
    assert_eq!(&words[1][..5], [new_va["metadata"]["name"].as_str().unwrap(), DISK_DRIVER, &pv_name, &second, "true"]);
    let out = kubectl(&mut world, "get csidrivers");
    let words: Vec<Vec<&str>> = out.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(words[0], ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES", "AGE"]);
    assert_eq!(&words[1][..7], [DISK_DRIVER, "true", "false", "false", "<unset>", "false", "Persistent"]);
    assert_eq!(&words[2][..7], [HOSTPATH_DRIVER, "false", "true", "false", "<unset>", "false", "Persistent,Ephemeral"]);
    let out = kubectl(&mut world, "get csinodes");
    let words: Vec<Vec<&str>> = out.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(words[0], ["NAME", "DRIVERS", "AGE"]);
    assert_eq!(words.len(), 1 + NODES.len());
    assert!(words[1..].iter().all(|w| w[1] == "2"), "{out}");
    let out = kubectl(&mut world, &format!("describe pv {pv_name}"));
    for line in [
        "Source:".to_string(),
        "    Type:              CSI (a Container Storage Interface (CSI) volume source)".to_string(),
        format!("    Driver:            {DISK_DRIVER}"),
        "    FSType:            ext4".to_string(),
        format!("    VolumeHandle:      {handle}"),
        "    ReadOnly:          false".to_string(),
    ] {
        assert!(out.contains(&format!("{line}\n")), "{line:?} in\n{out}");
    }
    assert!(out.contains("    VolumeAttributes:      storage.kubernetes.io/csiProvisionerIdentity="), "{out}");
}

// Each node's kubelet registered both node plugins: the CSINode lists them with the node's
// CSI ids and topology keys, and the topology became node labels.
#[test]
fn node_plugins_register_in_the_csinode() {
    let mut world = world();
    world.run_until(5_000);
    let csinode = get(&world, ("storage.k8s.io", "csinodes"), "", "b2").unwrap();
    assert_eq!(csinode["metadata"]["ownerReferences"][0]["kind"], "Node");
    assert!(csinode["metadata"]["annotations"]["storage.alpha.kubernetes.io/migrated-plugins"].as_str().unwrap().contains("kubernetes.io/aws-ebs"));
    let drivers = csinode["spec"]["drivers"].as_array().unwrap();
    assert_eq!(drivers[0], serde_json::json!({"name": HOSTPATH_DRIVER, "nodeID": "b2", "topologyKeys": ["topology.hostpath.csi/node"]}));
    assert_eq!(drivers[1]["name"], DISK_DRIVER);
    assert_eq!(drivers[1]["nodeID"], kubesim_host::cloud::instance_id("b2"));
    assert_eq!(drivers[1]["topologyKeys"], serde_json::json!(["topology.kubernetes.io/zone"]));
    assert_eq!(drivers[1]["allocatable"]["count"], 25);
    let labels = &get(&world, ("", "nodes"), "", "b2").unwrap()["metadata"]["labels"];
    assert_eq!(labels["topology.hostpath.csi/node"], "b2");
    assert_eq!(labels["topology.kubernetes.io/zone"], "zone-b");
}

fn pinned_pod(name: &str, node: &str, claim: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  nodeSelector: {{kubernetes.io/hostname: {node}}}\n  containers:\n  - name: c\n    image: busybox:1.36\n    command: [sh, -c, 'sleep 36000']\n    volumeMounts: [{{name: d, mountPath: /data}}]\n  volumes:\n  - name: d\n    persistentVolumeClaim: {{claimName: {claim}}}\n"
    )
}

fn claim(name: &str, class: &str) -> String {
    format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\nspec: {{accessModes: [ReadWriteOnce], storageClassName: {class}, resources: {{requests: {{storage: 1Gi}}}}}}\n")
}

// A ReadWriteOnce volume in use on one node is not attached to a second: the second pod hears
// the Multi-Attach error once and waits in ContainerCreating.
#[test]
fn a_read_write_once_volume_is_not_attached_to_a_second_node() {
    let mut world = world();
    load(&mut world, &format!("{}---\n{}", claim("shared", "block"), pinned_pod("one", "a1", "shared")));
    run_until_running(&mut world, "one", 60_000);
    let pv_name = get(&world, ("", "persistentvolumeclaims"), "default", "shared").unwrap()["spec"]["volumeName"].as_str().unwrap().to_string();
    load(&mut world, &pinned_pod("two", "a2", "shared"));
    let until = world.now() + 150_000;
    world.run_until(until);
    assert_eq!(phase(&world, "two"), "Pending");
    let two = events(&world, "two");
    let multi: Vec<&(String, String)> = two.iter().filter(|(r, _)| r == "FailedAttachVolume").collect();
    assert_eq!(
        multi,
        [&("FailedAttachVolume".to_string(), format!("Multi-Attach error for volume {pv_name:?} Volume is already used by pod(s) one"))],
        "{two:?}"
    );
    // v1.34's kubelet records nothing when its 2m3s wait times out; the trace has the error.
    assert!(!two.iter().any(|(r, _)| r == "FailedMount"), "{two:?}");
    let timeout = world.notes().iter().find(|n| n.call == "WaitForAttachAndMount" && n.actor.as_ref() == "kubelet/a2").expect("the wait timed out");
    assert_eq!(timeout.detail, "unmounted volumes=[d], unattached volumes=[d], failed to process volumes=[]: context deadline exceeded");
    let out = kubectl(&mut world, "get pods two");
    assert!(out.contains("ContainerCreating"), "{out}");
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());

    // Once the first pod is gone, the volume moves.
    kubectl(&mut world, "delete pod one --wait=false");
    let limit = world.now() + 200_000;
    run_until_running(&mut world, "two", limit);
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
}

// A class whose disks the cloud refuses to attach: the external-attacher records the driver's
// error in the VolumeAttachment, the attach/detach controller reports FailedAttachVolume (again
// on each retry), the pod stays ContainerCreating.
#[test]
fn a_volume_that_cannot_attach_reports_failed_attach_volume() {
    let mut world = world();
    let class = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: broken}\nprovisioner: disk.csi.kubesim.io\nvolumeBindingMode: WaitForFirstConsumer\nparameters: {kubesim.io/fail-attach: \"the disk's encryption key is disabled\"}\n";
    load(&mut world, &format!("{class}---\n{}---\n{}", claim("locked", "broken"), pinned_pod("locked", "b1", "locked")));
    world.run_until(60_000);
    let pv = get(
        &world,
        ("", "persistentvolumes"),
        "",
        get(&world, ("", "persistentvolumeclaims"), "default", "locked").unwrap()["spec"]["volumeName"].as_str().unwrap(),
    )
    .unwrap();
    let pv_name = pv["metadata"]["name"].as_str().unwrap().to_string();
    let handle = pv["spec"]["csi"]["volumeHandle"].as_str().unwrap().to_string();
    let node_id = kubesim_host::cloud::instance_id("b1");
    let va = get(&world, ("storage.k8s.io", "volumeattachments"), "", &attachment_name(&handle, DISK_DRIVER, "b1")).unwrap();
    assert_eq!(va["status"]["attached"], false);
    let error = format!("rpc error: code = Internal desc = Could not attach volume {handle:?} to node {node_id:?}: the disk's encryption key is disabled");
    assert_eq!(va["status"]["attachError"]["message"], error.as_str());
    let failed: Vec<(String, String)> = events(&world, "locked").into_iter().filter(|(r, _)| r == "FailedAttachVolume").collect();
    assert!(failed.len() >= 2, "retried: {failed:?}");
    assert_eq!(failed[0].1, format!("AttachVolume.Attach failed for volume {pv_name:?} : {error}"));
    assert_eq!(phase(&world, "locked"), "Pending");
    assert!(world.host("b1").unwrap().csi.published.is_empty());
    // The attacher backs off: 1 s, 2 s, 4 s, ... (not a call per status write).
    let publishes = world.notes().iter().filter(|n| n.call == "ControllerPublishVolume" && n.detail.contains(&handle)).count();
    assert!((4..=8).contains(&publishes), "{publishes} ControllerPublishVolume calls in a minute");
    // The kubelet's wait ends after 2m3s without an event (v1.34: wait.Interrupted), the pod
    // worker retries; the reason stays the controller's FailedAttachVolume.
    world.run_until(200_000);
    assert!(!events(&world, "locked").iter().any(|(r, _)| r == "FailedMount"));
    let timeouts: Vec<_> = world.notes().iter().filter(|n| n.call == "WaitForAttachAndMount" && n.actor.as_ref() == "kubelet/b1").collect();
    assert!(!timeouts.is_empty());
    assert_eq!(timeouts[0].detail, "unmounted volumes=[d], unattached volumes=[d], failed to process volumes=[]: context deadline exceeded");
    let out = kubectl(&mut world, "describe pod locked");
    assert!(out.contains("FailedAttachVolume") && out.contains("AttachVolume.Attach failed for volume"), "{out}");
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
}

// A disk that attaches but cannot be mounted (an unknown filesystem type): NodeStageVolume fails
// and the kubelet reports FailedMount with the driver's error, retrying with backoff.
#[test]
fn a_volume_that_cannot_mount_reports_failed_mount() {
    let mut world = world();
    let class = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: oddfs}\nprovisioner: disk.csi.kubesim.io\nvolumeBindingMode: WaitForFirstConsumer\nparameters: {csi.storage.k8s.io/fstype: btrfs9}\n";
    load(&mut world, &format!("{class}---\n{}---\n{}", claim("odd", "oddfs"), pinned_pod("odd", "a2", "odd")));
    world.run_until(60_000);
    let pv_name = get(&world, ("", "persistentvolumeclaims"), "default", "odd").unwrap()["spec"]["volumeName"].as_str().unwrap().to_string();
    let mounts: Vec<(String, String)> = events(&world, "odd").into_iter().filter(|(r, _)| r == "FailedMount").collect();
    assert!(mounts.len() >= 2, "{mounts:?}");
    assert_eq!(
        mounts[0].1,
        format!("MountVolume.MountDevice failed for volume {pv_name:?} : rpc error: code = InvalidArgument desc = NodeStageVolume: invalid fstype btrfs9")
    );
    assert!(events(&world, "odd").iter().any(|(r, _)| r == "SuccessfulAttachVolume"));
    assert_eq!(phase(&world, "odd"), "Pending");
}

// The host-path driver does not attach: no VolumeAttachment, no staging, the volume is a
// directory on the node that provisioned it.
#[test]
fn host_path_csi_volumes_are_published_without_attaching() {
    let mut world = world();
    load(&mut world, &format!("{}---\n{}", claim("local", "csi-hostpath-sc"), pinned_pod("local", "b2", "local")));
    run_until_running(&mut world, "local", 30_000);
    let pv_name = get(&world, ("", "persistentvolumeclaims"), "default", "local").unwrap()["spec"]["volumeName"].as_str().unwrap().to_string();
    let pv = get(&world, ("", "persistentvolumes"), "", &pv_name).unwrap();
    assert_eq!(pv["spec"]["csi"]["driver"], HOSTPATH_DRIVER);
    assert_eq!(pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"], serde_json::json!(["b2"]));
    assert!(world.api().store().list(("storage.k8s.io", "volumeattachments"), None).next().is_none());
    assert_eq!(calls(&world, "b2", &pv_name), ["NodePublishVolume"]);
    kubectl(&mut world, "exec local -- sh -c 'echo on the node > /data/f'");
    let handle = pv["spec"]["csi"]["volumeHandle"].as_str().unwrap();
    let dir = format!("/var/lib/csi-hostpath-data/{handle}/f");
    let host = world.host("b2").unwrap();
    assert!(host.cri.volumes.trees[kubesim_host::NODE_ROOT].get_path(&dir).is_some(), "{dir} on the node");
    let out = kubectl(&mut world, "get volumeattachments");
    assert_eq!(out, "", "no attachments");
}

// A kubelet restart keeps the mounts (the volume manager rebuilds its state from the node
// plugins'); a power loss takes them, and the kubelet stages and publishes again when the
// machine is back — the disk stayed attached and kept its files.
#[test]
fn mounts_survive_a_kubelet_restart_and_come_back_after_a_power_loss() {
    let mut world = world();
    load(&mut world, &format!("{}---\n{}", claim("data", "block"), pinned_pod("app", "a1", "data")));
    run_until_running(&mut world, "app", 60_000);
    kubectl(&mut world, "exec app -- sh -c 'echo before > /data/f'");
    let pv_name = get(&world, ("", "persistentvolumeclaims"), "default", "data").unwrap()["spec"]["volumeName"].as_str().unwrap().to_string();
    let stages = |world: &World| world.notes().iter().filter(|n| n.call == "NodeStageVolume" && n.detail.contains(&pv_name)).count();

    assert_eq!(world.run_command("fault kubelet-restart a1").exit_code, 0);
    let until = world.now() + 20_000;
    world.run_until(until);
    assert_eq!(phase(&world, "app"), "Running");
    assert_eq!(stages(&world), 1, "nothing staged again after a restart");
    assert_eq!(kubectl(&mut world, "exec app -- cat /data/f"), "before\n");

    assert_eq!(world.run_command("fault node-down a1").exit_code, 0);
    assert!(world.host("a1").unwrap().csi.published.is_empty(), "the mounts went with the power");
    let until = world.now() + 5_000;
    world.run_until(until);
    assert_eq!(world.run_command("fault node-up a1").exit_code, 0);
    let until = world.now() + 60_000;
    world.run_until(until);
    assert_eq!(phase(&world, "app"), "Running", "{:?}", events(&world, "app"));
    assert_eq!(stages(&world), 2, "staged again after the power came back");
    assert!(world.host("a1").unwrap().csi.published.keys().any(|t| t.ends_with(&format!("{pv_name}/mount"))));
    assert_eq!(kubectl(&mut world, "exec app -- cat /data/f"), "before\n", "the disk kept its files");
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
}

// The storage view follows a claim along its path as the model moves it: WaitForFirstConsumer
// until a pod uses it, then provision → bind → attach → stage → publish on the pod's node, each
// stage read from the objects and the machine's mount table; the volume's files are the disk's.
#[test]
fn the_storage_view_follows_a_claim_from_provision_to_publish() {
    use kubesim_sim::view::{self, ClaimStage, Step, StepState};
    let mut world = world();
    load(&mut world, &claim("data", "block"));
    world.run_until(5_000);
    let storage = view::storage(&world);
    let row = storage.claims.iter().find(|c| c.name == "data").expect("the claim");
    assert_eq!((row.stage, row.phase.as_str(), row.class.as_str()), (ClaimStage::WaitForFirstConsumer, "Pending", "block"));
    assert_eq!(row.path.iter().map(|s| s.step).collect::<Vec<_>>(), Step::ALL);
    assert_eq!(row.path[0].state, StepState::Waiting);
    assert!(row.path[1..].iter().all(|s| s.state == StepState::Todo), "{:?}", row.path);
    let block = storage.classes.iter().find(|c| c.name == "block").unwrap();
    assert_eq!(
        (block.provisioner.as_str(), block.binding_mode.as_str(), block.allow_expansion, block.default),
        (DISK_DRIVER, "WaitForFirstConsumer", true, false)
    );
    assert!(storage.classes.iter().any(|c| c.default), "the default class");
    assert_eq!(storage.drivers.iter().map(|d| (d.name.as_str(), d.attach_required)).collect::<Vec<_>>(), [(DISK_DRIVER, true), (HOSTPATH_DRIVER, false)]);
    assert_eq!(storage.csi_nodes.len(), NODES.len());

    load(&mut world, &pinned_pod("app", "b1", "data"));
    let mut stages = vec![ClaimStage::WaitForFirstConsumer];
    while world.now() < 60_000 {
        let next = world.now() + 10;
        world.run_until(next);
        let stage = view::storage(&world).claims.iter().find(|c| c.name == "data").unwrap().stage;
        if stages.last() != Some(&stage) {
            stages.push(stage);
        }
        if stage == ClaimStage::Published {
            break;
        }
    }
    assert_eq!(
        stages,
        [
            ClaimStage::WaitForFirstConsumer,
            ClaimStage::Provisioning,
            ClaimStage::Bound, // until the scheduler binds the pod (PreBind waited for the claim)
            ClaimStage::Attaching,
            ClaimStage::Attached,
            ClaimStage::Staged,
            ClaimStage::Published
        ],
        "every stage in order"
    );
    let storage = view::storage(&world);
    let row = storage.claims.iter().find(|c| c.name == "data").unwrap();
    assert_eq!(row.node.as_deref(), Some("b1"));
    assert_eq!(row.pods, ["app"]);
    assert_eq!((row.phase.as_str(), row.capacity.as_deref(), row.access_modes.as_str()), ("Bound", Some("1Gi"), "RWO"));
    assert!(row.path.iter().all(|s| s.state == StepState::Done), "{:?}", row.path);
    assert_eq!(row.path[2].detail, "attached to b1 as /dev/xvdaa");
    assert!(row.problem.is_none());
    let pv_name = row.volume.clone().unwrap();
    let pv = storage.volumes.iter().find(|v| v.name == pv_name).unwrap();
    assert_eq!(
        (pv.phase.as_str(), pv.claim.as_deref(), pv.affinity.as_str(), pv.reclaim_policy.as_str()),
        ("Bound", Some("default/data"), "zone zone-b", "Delete")
    );
    assert!(pv.source.starts_with("disk.csi.kubesim.io vol-0"), "{}", pv.source);
    assert_eq!(storage.attachments.len(), 1);
    let va = &storage.attachments[0];
    assert_eq!(
        (va.pv.as_str(), va.node.as_str(), va.attached, va.device.as_deref(), va.error.as_deref()),
        (pv_name.as_str(), "b1", true, Some("/dev/xvdaa"), None)
    );

    // The volume's files: the disk's filesystem on b1, with what the pod wrote.
    while phase(&world, "app") != "Running" {
        let next = world.now() + 500;
        world.run_until(next);
    }
    kubectl(&mut world, "exec app -- sh -c 'echo hello from b1 > /data/hello.txt'");
    let files = view::volume_files(&world, &pv_name).expect("files");
    assert!(files.location.contains("attached to b1 as /dev/xvdaa"), "{}", files.location);
    let paths: Vec<&str> = files.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["/hello.txt", "/lost+found/"]);
    assert_eq!(files.entries[0].preview.as_deref(), Some("hello from b1\n"));

    // Deleted: the pod's volume is unpublished and unstaged, the disk detached; its files are
    // in the cloud now.
    kubectl(&mut world, "delete pod app --wait=false");
    let until = world.now() + 60_000; // its 30 s grace period, then the teardown
    world.run_until(until);
    let storage = view::storage(&world);
    let row = storage.claims.iter().find(|c| c.name == "data").unwrap();
    assert_eq!((row.stage, row.pods.len()), (ClaimStage::Bound, 0));
    assert!(storage.attachments.is_empty(), "{:?}", storage.attachments);
    let files = view::volume_files(&world, &pv_name).expect("files");
    assert!(files.location.ends_with("in zone-b, detached"), "{}", files.location);
    assert_eq!(files.entries[0].path, "/hello.txt");
}

// A volume that cannot attach: the view names the attach step as failed with the driver's
// error; a host-path volume skips attach and stage.
#[test]
fn the_storage_view_shows_a_failed_attach_and_skipped_steps() {
    use kubesim_sim::view::{self, ClaimStage, StepState};
    let mut world = world();
    let class = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: broken}\nprovisioner: disk.csi.kubesim.io\nvolumeBindingMode: WaitForFirstConsumer\nparameters: {kubesim.io/fail-attach: \"the disk's encryption key is disabled\"}\n";
    load(
        &mut world,
        &format!(
            "{class}---\n{}---\n{}---\n{}---\n{}",
            claim("locked", "broken"),
            pinned_pod("locked", "b1", "locked"),
            claim("local", "csi-hostpath-sc"),
            pinned_pod("local", "a2", "local")
        ),
    );
    world.run_until(30_000);
    let storage = view::storage(&world);
    let locked = storage.claims.iter().find(|c| c.name == "locked").unwrap();
    assert_eq!(locked.stage, ClaimStage::Attaching);
    assert_eq!(locked.path[2].state, StepState::Failed);
    assert!(locked.path[2].detail.contains("the disk's encryption key is disabled"), "{:?}", locked.path[2]);
    assert_eq!(locked.problem.as_deref(), Some(locked.path[2].detail.as_str()));
    assert!(locked.path[3..].iter().all(|s| s.state == StepState::Todo));
    let va = storage.attachments.iter().find(|a| a.node == "b1").unwrap();
    assert!(!va.attached && va.error.as_deref().is_some_and(|e| e.contains("Could not attach volume")), "{va:?}");
    let local = storage.claims.iter().find(|c| c.name == "local").unwrap();
    assert_eq!(local.stage, ClaimStage::Published);
    assert_eq!(
        local.path.iter().map(|s| s.state).collect::<Vec<_>>(),
        [StepState::Done, StepState::Done, StepState::Skipped, StepState::Skipped, StepState::Done]
    );
    assert_eq!(local.node.as_deref(), Some("a2"));
    kubectl(&mut world, "exec local -- sh -c 'echo x > /data/f'");
    let files = view::volume_files(&world, local.volume.as_deref().unwrap()).unwrap();
    assert!(files.location.starts_with("a2:/var/lib/csi-hostpath-data/"), "{}", files.location);
    assert_eq!(files.entries.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(), ["/f"]);
}

// DeleteVolume removes the data: a released Delete volume of the host-path driver loses its
// directory on its node; a disk is deleted in the cloud with its files, and a claim of the same
// name gets a fresh, empty disk.
#[test]
fn delete_volume_removes_the_data() {
    let mut world = world();
    load(&mut world, &format!("{}---\n{}", claim("local", "csi-hostpath-sc"), pinned_pod("local", "b2", "local")));
    load(&mut world, &format!("{}---\n{}", claim("disk", "block"), pinned_pod("disk", "a1", "disk")));
    run_until_running(&mut world, "local", 30_000);
    run_until_running(&mut world, "disk", 60_000);
    kubectl(&mut world, "exec local -- sh -c 'echo on the node > /data/f'");
    kubectl(&mut world, "exec disk -- sh -c 'echo on the disk > /data/f'");
    let volume = |world: &World, claim: &str| {
        let name = get(world, ("", "persistentvolumeclaims"), "default", claim).unwrap()["spec"]["volumeName"].as_str().unwrap().to_string();
        let handle = get(world, ("", "persistentvolumes"), "", &name).unwrap()["spec"]["csi"]["volumeHandle"].as_str().unwrap().to_string();
        (name, handle)
    };
    let (local_pv, local_handle) = volume(&world, "local");
    let (disk_pv, disk_handle) = volume(&world, "disk");
    let dir = format!("/var/lib/csi-hostpath-data/{local_handle}");
    assert!(world.host("b2").unwrap().cri.volumes.trees[kubesim_host::NODE_ROOT].get_path(&format!("{dir}/f")).is_some());
    kubectl(&mut world, "delete pod local disk");
    kubectl(&mut world, "delete pvc local disk");
    let until = world.now() + 60_000;
    world.run_until(until);
    assert!(get(&world, ("", "persistentvolumes"), "", &local_pv).is_none());
    assert!(world.host("b2").unwrap().cri.volumes.trees[kubesim_host::NODE_ROOT].get_path(&dir).is_none(), "{dir} removed from b2");
    assert!(get(&world, ("", "persistentvolumes"), "", &disk_pv).is_none());
    assert!(world.runtime().cloud().disk(&disk_handle).is_none(), "the disk is deleted in the cloud");
    load(&mut world, &format!("{}---\n{}", claim("disk", "block"), pinned_pod("again", "a1", "disk")));
    let limit = world.now() + 60_000;
    run_until_running(&mut world, "again", limit);
    let (_, new_handle) = volume(&world, "disk");
    assert_ne!(new_handle, disk_handle);
    assert_eq!(kubectl(&mut world, "exec again -- ls -A /data"), "lost+found\n", "a fresh filesystem");
}
