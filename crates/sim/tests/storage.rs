#![cfg(not(target_arch = "wasm32"))]
//! Storage end to end as on a kind cluster: the default StorageClass `standard`
//! (rancher.io/local-path, WaitForFirstConsumer), the scheduler's VolumeBinding plugin choosing
//! the node, the local-path provisioner creating `pvc-<uid>` pinned to it, the PV controller
//! binding, data surviving the pod, and the protection finalizers.

use kubesim_api::object::Object;
use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;
use serde_json::Value;

fn world_with(yaml: &str) -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    load(&mut world, yaml);
    world
}

fn load(world: &mut World, yaml: &str) {
    let outcome = apply(world, &InputFile { name: "test.yaml".into(), text: yaml.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
}

fn get(world: &World, resource: (&'static str, &'static str), ns: &str, name: &str) -> Option<Value> {
    world.api().lookup(resource, ns, name).map(|o| o.to_json())
}

/// (reason, message, source) of the events about one object, in order of writes (repeats too).
fn events(world: &World, name: &str) -> Vec<(String, String, String)> {
    world
        .trace()
        .iter()
        .filter_map(|r| match r.object.as_ref() {
            Object::Event(e) if e.involved_object.name.as_deref() == Some(name) => Some((
                e.reason.clone().unwrap_or_default(),
                e.message.clone().unwrap_or_default(),
                e.source.as_ref().and_then(|s| s.component.clone()).unwrap_or_default(),
            )),
            _ => None,
        })
        .collect()
}

fn kubectl(world: &mut World, line: &str) -> String {
    let record = world.run_command(&format!("kubectl {line}"));
    assert_eq!(record.exit_code, 0, "{line}: {}", record.stderr);
    record.stdout
}

const CLAIM: &str =
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";

fn writer(name: &str, command: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  restartPolicy: Never\n  containers:\n  - name: c\n    image: busybox:1.36\n    command: [sh, -c, '{command}']\n    volumeMounts: [{{name: d, mountPath: /data}}]\n  volumes:\n  - name: d\n    persistentVolumeClaim: {{claimName: data}}\n"
    )
}

// A claim of the default class waits for its first consumer; the pod's scheduling picks the
// node, which the claim carries as volume.kubernetes.io/selected-node; local-path provisions
// pvc-<uid> with node affinity to that node; the claim binds; the pod runs; and what it wrote
// is there for the next pod using the claim (pinned to the same node by the volume).
#[test]
fn wait_for_first_consumer_then_provision_on_the_chosen_node() {
    let mut world = world_with(CLAIM);
    world.run_until(20_000);
    let claim = get(&world, ("", "persistentvolumeclaims"), "default", "data").unwrap();
    assert_eq!(claim["spec"]["storageClassName"], "standard");
    assert_eq!(claim["status"]["phase"], "Pending");
    assert_eq!(claim["metadata"]["finalizers"], serde_json::json!(["kubernetes.io/pvc-protection"]));
    let waiting = events(&world, "data");
    assert!(waiting.len() >= 2, "repeated on resync: {waiting:?}");
    assert!(waiting
        .iter()
        .all(|(r, m, s)| r == "WaitForFirstConsumer" && m == "waiting for first consumer to be created before binding" && s == "persistentvolume-controller"));
    let out = kubectl(&mut world, "get pvc");
    let row: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..row.len() - 1], ["data", "Pending", "standard", "<unset>"], "{out}");

    load(&mut world, &writer("first", "echo hello > /data/greeting"));
    world.run_until(60_000);
    let claim = get(&world, ("", "persistentvolumeclaims"), "default", "data").unwrap();
    let uid = claim["metadata"]["uid"].as_str().unwrap().to_string();
    let pod = get(&world, ("", "pods"), "default", "first").unwrap();
    let node = pod["spec"]["nodeName"].as_str().unwrap().to_string();
    assert!(!node.is_empty());
    assert_eq!(claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"], node.as_str());
    assert_eq!(claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"], "yes");
    assert_eq!(claim["status"]["phase"], "Bound");
    assert_eq!(claim["spec"]["volumeName"], format!("pvc-{uid}"));
    let pv = get(&world, ("", "persistentvolumes"), "", &format!("pvc-{uid}")).unwrap();
    assert_eq!(pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"][0], node.as_str());
    assert_eq!(pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"], "rancher.io/local-path");
    assert_eq!(pod["status"]["phase"], "Succeeded", "{pod}");
    // (ExternalProvisioning repeats on every sync of the claim while it waits: aggregated as x2.)
    let mut reasons: Vec<String> = events(&world, "data").into_iter().map(|(r, _, _)| r).filter(|r| r != "WaitForFirstConsumer").collect();
    reasons.dedup();
    assert_eq!(reasons, ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"]);
    let sources: Vec<String> = events(&world, "data").into_iter().filter(|(r, _, _)| r.starts_with("Provisioning")).map(|(_, _, s)| s).collect();
    assert!(sources.iter().all(|s| s.starts_with("rancher.io/local-path_local-path-provisioner-")), "{sources:?}");
    // The pod waited in PreBind: it was bound only after the claim was.
    let scheduled = world
        .trace()
        .iter()
        .position(
            |r| matches!(r.object.as_ref(), Object::Event(e) if e.reason.as_deref() == Some("Scheduled") && e.involved_object.name.as_deref() == Some("first")),
        )
        .unwrap();
    let provisioned =
        world.trace().iter().position(|r| matches!(r.object.as_ref(), Object::Event(e) if e.reason.as_deref() == Some("ProvisioningSucceeded"))).unwrap();
    assert!(provisioned < scheduled);

    let describe = kubectl(&mut world, "describe pvc data");
    for line in ["StorageClass:  standard", "Status:        Bound", "Finalizers:    [kubernetes.io/pvc-protection]", "Used By:       first"] {
        assert!(describe.contains(line), "{line:?} in\n{describe}");
    }
    assert!(describe.contains("volume.kubernetes.io/selected-node: "), "{describe}");

    load(&mut world, &writer("second", "cat /data/greeting"));
    world.run_until(100_000);
    let second = get(&world, ("", "pods"), "default", "second").unwrap();
    assert_eq!(second["spec"]["nodeName"], node.as_str(), "the volume pins the pod to its node");
    assert_eq!(kubectl(&mut world, "logs second"), "hello\n");
}

// kubectl delete pvc of a claim a running pod uses: the claim stays Terminating (and usable)
// until the pod is gone; then the Delete-policy volume goes too.
#[test]
fn deleting_an_in_use_claim_waits_for_its_pod() {
    let mut world = world_with(&format!("{CLAIM}---\n{}", writer("user", "sleep 3600")));
    world.run_until(40_000);
    let uid = get(&world, ("", "persistentvolumeclaims"), "default", "data").unwrap()["metadata"]["uid"].as_str().unwrap().to_string();
    assert_eq!(get(&world, ("", "pods"), "default", "user").unwrap()["status"]["phase"], "Running");
    let record = world.run_command("kubectl delete pvc data --wait=false");
    assert_eq!(record.stdout, "persistentvolumeclaim \"data\" deleted\n", "{}", record.stderr);
    world.run_until(60_000);
    let out = kubectl(&mut world, "get pvc");
    let row: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..2], ["data", "Terminating"], "{out}");
    assert!(get(&world, ("", "persistentvolumes"), "", &format!("pvc-{uid}")).is_some());
    kubectl(&mut world, "delete pod user --wait=false");
    world.run_until(120_000);
    assert!(get(&world, ("", "persistentvolumeclaims"), "default", "data").is_none());
    assert!(get(&world, ("", "persistentvolumes"), "", &format!("pvc-{uid}")).is_none(), "reclaim Delete");
}

// A pod whose Immediate claim is not bound waits in PreFilter with upstream's message.
#[test]
fn unbound_immediate_claims_keep_the_pod_pending() {
    let world = world_with(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: manual, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: nginx}]\n  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]\n",
    );
    let mut world = world;
    world.run_until(10_000);
    let pod = get(&world, ("", "pods"), "default", "p").unwrap();
    let condition = pod["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "PodScheduled").unwrap().clone();
    assert_eq!(
        condition["message"],
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    // A static volume of the class lets it go.
    load(
        &mut world,
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1}\nspec: {storageClassName: manual, capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /mnt/data}}\n",
    );
    world.run_until(30_000);
    assert!(get(&world, ("", "pods"), "default", "p").unwrap()["spec"]["nodeName"].as_str().is_some_and(|n| !n.is_empty()));
}

// A bound volume pinned to a node keeps pods off the others: PreFilter narrows the nodes
// (GetEligibleNodes) and the node affinity conflict reason comes from Filter.
#[test]
fn volume_node_affinity_pins_pods() {
    let mut world = World::new(1);
    world.add_default_nodes();
    let nodes: Vec<String> = world.node_names().cloned().collect();
    let target = nodes.last().unwrap().clone();
    load(
        &mut world,
        &format!(
            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: local}}\nspec:\n  storageClassName: ''\n  capacity: {{storage: 1Gi}}\n  accessModes: [ReadWriteOnce]\n  local: {{path: /mnt/disk}}\n  nodeAffinity: {{required: {{nodeSelectorTerms: [{{matchExpressions: [{{key: kubernetes.io/hostname, operator: In, values: [{target}]}}]}}]}}}}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: data}}\nspec: {{storageClassName: '', accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}\n---\n{}",
            writer("p", "sleep 3600")
        ),
    );
    world.run_until(30_000);
    assert_eq!(get(&world, ("", "pods"), "default", "p").unwrap()["spec"]["nodeName"], target.as_str());
}

// ReadWriteOncePod (VolumeRestrictions): while a pod uses the claim, another pod using it stays
// Pending with upstream's reason; a higher-priority pod preempts the user (PreFilterExtensions
// RemovePod takes its reference away) and gets the claim.
#[test]
fn read_write_once_pod_claims_admit_one_pod() {
    let claim =
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOncePod], resources: {requests: {storage: 1Gi}}}\n";
    let mut world = world_with(&format!("{claim}---\n{}", writer("first", "sleep 3600")));
    world.run_until(30_000);
    let first = get(&world, ("", "pods"), "default", "first").unwrap();
    assert_eq!(first["status"]["phase"], "Running");
    let node = first["spec"]["nodeName"].as_str().unwrap().to_string();
    load(&mut world, &writer("second", "sleep 3600"));
    world.run_until(40_000);
    let second = get(&world, ("", "pods"), "default", "second").unwrap();
    assert!(second["spec"]["nodeName"].is_null(), "{second}");
    let condition = second["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "PodScheduled").unwrap().clone();
    assert_eq!(
        condition["message"],
        "0/3 nodes are available: 1 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode, 2 node(s) didn't satisfy plugin(s) [VolumeBinding]. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    );
    load(&mut world, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n");
    let preemptor = writer("third", "sleep 3600").replace("spec:\n  restartPolicy: Never", "spec:\n  priorityClassName: high\n  restartPolicy: Never");
    load(&mut world, &preemptor);
    world.run_until(120_000);
    assert!(get(&world, ("", "pods"), "default", "first").is_none(), "the user was preempted");
    let third = get(&world, ("", "pods"), "default", "third").unwrap();
    assert_eq!(third["spec"]["nodeName"], node.as_str());
    assert_eq!(third["status"]["phase"], "Running");
    assert!(get(&world, ("", "pods"), "default", "second").unwrap()["spec"]["nodeName"].is_null());
}

fn node_has(world: &World, node: &str, path: &str) -> bool {
    world.host(node).unwrap().cri.volumes.trees.get(kubesim_host::NODE_ROOT).is_some_and(|t| t.get_path(path).is_some())
}

// Reclaim policy Delete removes the data: the local-path teardown (`rm -rf "$VOL_DIR"`) runs on
// the volume's node before the PV object goes, and a claim of the same name gets a new, empty
// volume.
#[test]
fn a_deleted_local_path_volume_takes_its_data_with_it() {
    let mut world = world_with(&format!("{CLAIM}---\n{}", writer("first", "echo hello > /data/greeting")));
    world.run_until(40_000);
    let claim = get(&world, ("", "persistentvolumeclaims"), "default", "data").unwrap();
    let pv_name = claim["spec"]["volumeName"].as_str().unwrap().to_string();
    let pv = get(&world, ("", "persistentvolumes"), "", &pv_name).unwrap();
    let dir = pv["spec"]["hostPath"]["path"].as_str().unwrap().to_string();
    let node = get(&world, ("", "pods"), "default", "first").unwrap()["spec"]["nodeName"].as_str().unwrap().to_string();
    assert!(node_has(&world, &node, &format!("{dir}/greeting")), "written on the node");
    kubectl(&mut world, "delete pod first");
    kubectl(&mut world, "delete pvc data");
    world.run_until(60_000);
    assert!(get(&world, ("", "persistentvolumes"), "", &pv_name).is_none(), "reclaim Delete");
    assert!(!node_has(&world, &node, &dir), "{dir} removed from {node}");
    assert!(world.notes().iter().any(|n| n.call == "rm -rf" && n.detail == dir && n.target == format!("node/{node}")));
    // A new claim of the same name is a new volume without the old file.
    load(&mut world, &format!("{CLAIM}---\n{}", writer("second", "ls -A /data; cat /data/greeting || echo gone")));
    world.run_until(120_000);
    assert_eq!(kubectl(&mut world, "logs second"), "cat: can't open '/data/greeting': No such file or directory\ngone\n");
}

// Reclaim policy Retain keeps the data: the claim's deletion leaves the volume Released with its
// files on the node; once an administrator clears its claimRef it is Available, a claim naming
// it binds, and a pod on it reads what the first one wrote.
#[test]
fn a_retained_volume_keeps_its_files_for_the_next_claim() {
    let class = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: keep}\nprovisioner: rancher.io/local-path\nvolumeBindingMode: WaitForFirstConsumer\nreclaimPolicy: Retain\n";
    let claim = CLAIM.replace("spec: {", "spec: {storageClassName: keep, ");
    let mut world = world_with(&format!("{class}---\n{claim}---\n{}", writer("first", "echo kept > /data/note")));
    world.run_until(40_000);
    let pv_name = get(&world, ("", "persistentvolumeclaims"), "default", "data").unwrap()["spec"]["volumeName"].as_str().unwrap().to_string();
    let pv = get(&world, ("", "persistentvolumes"), "", &pv_name).unwrap();
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    let dir = pv["spec"]["hostPath"]["path"].as_str().unwrap().to_string();
    let node = get(&world, ("", "pods"), "default", "first").unwrap()["spec"]["nodeName"].as_str().unwrap().to_string();
    kubectl(&mut world, "delete pod first");
    kubectl(&mut world, "delete pvc data");
    world.run_until(70_000);
    let pv = get(&world, ("", "persistentvolumes"), "", &pv_name).unwrap();
    assert_eq!(pv["status"]["phase"], "Released");
    assert_eq!(pv["spec"]["claimRef"]["name"], "data", "the claimRef stays");
    assert!(node_has(&world, &node, &format!("{dir}/note")), "the files stay on {node}");
    let out = kubectl(&mut world, &format!("get pv {pv_name}"));
    assert!(out.lines().nth(1).unwrap().split_whitespace().any(|c| c == "Released"), "{out}");
    // The administrator makes it available again and binds it by name.
    kubectl(&mut world, &format!("patch pv {pv_name} -p '{{\"spec\":{{\"claimRef\":null}}}}'"));
    world.run_until(80_000);
    assert_eq!(get(&world, ("", "persistentvolumes"), "", &pv_name).unwrap()["status"]["phase"], "Available");
    let rebind = claim.replace("metadata: {name: data}", "metadata: {name: again}").replace("spec: {", &format!("spec: {{volumeName: {pv_name}, "));
    let reader = writer("reader", "cat /data/note").replace("claimName: data", "claimName: again");
    load(&mut world, &format!("{rebind}---\n{reader}"));
    world.run_until(140_000);
    assert_eq!(get(&world, ("", "persistentvolumeclaims"), "default", "again").unwrap()["status"]["phase"], "Bound");
    assert_eq!(get(&world, ("", "pods"), "default", "reader").unwrap()["spec"]["nodeName"], node.as_str());
    assert_eq!(kubectl(&mut world, "logs reader"), "kept\n");
}

// A node that cannot run the teardown (powered off) fails the deletion as the helper pod's wait
// does, and the volume goes once the node is back.
#[test]
fn a_local_path_teardown_waits_for_its_node() {
    let mut world = world_with(&format!("{CLAIM}---\n{}", writer("first", "echo hello > /data/greeting")));
    world.run_until(40_000);
    let pv_name = get(&world, ("", "persistentvolumeclaims"), "default", "data").unwrap()["spec"]["volumeName"].as_str().unwrap().to_string();
    let node = get(&world, ("", "pods"), "default", "first").unwrap()["spec"]["nodeName"].as_str().unwrap().to_string();
    kubectl(&mut world, "delete pod first");
    world.run_until(45_000);
    world.run_command(&format!("fault node-down {node}"));
    kubectl(&mut world, "delete pvc data --wait=false");
    world.run_until(200_000);
    assert!(get(&world, ("", "persistentvolumes"), "", &pv_name).is_some());
    assert!(
        events(&world, &pv_name).iter().any(|(r, m, _)| r == "VolumeFailedDelete" && m == "create process timeout after 120 seconds"),
        "{:?}",
        events(&world, &pv_name)
    );
    world.run_command(&format!("fault node-up {node}"));
    world.run_until(600_000);
    assert!(get(&world, ("", "persistentvolumes"), "", &pv_name).is_none());
}

/// `mount` lists the container's mount table as /proc/mounts has it (busybox and util-linux
/// print `<device> on <point> type <type> (<options>)`), `-t` keeps one type, and mounting
/// anything is refused in an unprivileged container (busybox: exit 1; util-linux: exit 32).
#[test]
fn mount_lists_the_mount_table_and_refuses_to_mount() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bb}\nspec:\n  containers: [{name: c, image: 'busybox:1.36', command: [sleep, '3600']}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: 'nginx:1.27'}]\n",
    );
    world.run_until(40_000);
    let proc_mounts = world.run_command("kubectl exec bb -- cat /proc/mounts");
    let listed = world.run_command("kubectl exec bb -- mount");
    assert_eq!(listed.exit_code, 0, "{}", listed.stderr);
    let from_proc: Vec<String> = proc_mounts
        .stdout
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            format!("{} on {} type {} ({})", f[0], f[1], f[2], f[3])
        })
        .collect();
    assert_eq!(listed.stdout.lines().collect::<Vec<_>>(), from_proc);
    // containerd's order: the root, the OCI defaults, then the kubelet's and containerd's
    // mounts stably sorted by depth (containerd internal/cri/opts/spec_linux.go WithMounts,
    // orderedMounts), then runc's read-only and masked /proc and /sys paths.
    let points: Vec<&str> = from_proc.iter().map(|l| l.split(' ').nth(2).expect("a mount point")).collect();
    assert_eq!(
        points,
        [
            "/",
            "/proc",
            "/dev",
            "/dev/pts",
            "/dev/mqueue",
            "/sys",
            "/sys/fs/cgroup",
            "/etc/hosts",
            "/dev/termination-log",
            "/etc/hostname",
            "/etc/resolv.conf",
            "/dev/shm",
            "/var/run/secrets/kubernetes.io/serviceaccount",
            "/proc/bus",
            "/proc/fs",
            "/proc/irq",
            "/proc/sys",
            "/proc/sysrq-trigger",
            "/proc/acpi",
            "/proc/kcore",
            "/proc/keys",
            "/proc/timer_list",
            "/proc/scsi",
            "/sys/firmware",
        ]
    );
    // The projected service-account volume is memory-backed; the runtime's files are on
    // the node's disk.
    assert!(listed.stdout.contains("tmpfs on /var/run/secrets/kubernetes.io/serviceaccount type tmpfs (ro,relatime,size="), "{}", listed.stdout);
    assert!(listed.stdout.contains("/dev/sda1 on /etc/hosts type ext4 (rw,relatime)\n"), "{}", listed.stdout);
    let ext4 = world.run_command("kubectl exec bb -- mount -t ext4");
    assert!(!ext4.stdout.contains("overlay") && !ext4.stdout.contains("serviceaccount") && ext4.stdout.contains("/etc/resolv.conf"), "{}", ext4.stdout);
    // /proc/PID/mounts is the process's (the container's) table.
    assert_eq!(world.run_command("kubectl exec bb -- cat /proc/1/mounts").stdout, proc_mounts.stdout);
    let busybox = world.run_command("kubectl exec bb -- mount -t tmpfs tmpfs /mnt");
    assert_eq!(busybox.exit_code, 1);
    assert!(format!("{}{}", busybox.stdout, busybox.stderr).contains("mount: permission denied (are you root?)\n"), "{busybox:?}");
    let gnu = world.run_command("kubectl exec web -- mount -t tmpfs tmpfs /mnt");
    assert_eq!(gnu.exit_code, 32);
    assert!(format!("{}{}", gnu.stdout, gnu.stderr).contains("mount: /mnt: must be superuser to use mount.\n"), "{gnu:?}");
}

/// An emptyDir is on the node's disk unless its medium is Memory (a tmpfs as large as the
/// node's memory; pkg/volume/emptydir), as agnhost's mounttest reads statfs(2)
/// (test/images/agnhost/mounttest/mt.go fsType) and `df` lists it; GNU df shows each
/// filesystem once (the node's disk at its first mount), busybox's every mount.
#[test]
fn memory_backed_volumes_are_tmpfs_and_df_lists_filesystems() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bb}\nspec:\n  containers:\n  - name: c\n    image: 'busybox:1.36'\n    command: [sleep, '3600']\n    volumeMounts: [{name: disk, mountPath: /data}, {name: mem, mountPath: /cache}]\n  - name: t\n    image: 'registry.k8s.io/e2e-test-images/agnhost:2.53'\n    args: [pause]\n    volumeMounts: [{name: disk, mountPath: /data}, {name: mem, mountPath: /cache}]\n  volumes: [{name: disk, emptyDir: {}}, {name: mem, emptyDir: {medium: Memory}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: 'nginx:1.27'}]\n",
    );
    world.run_until(40_000);
    let fs_type = |world: &mut World, path: &str| world.run_command(&format!("kubectl exec bb -c t -- /agnhost mounttest --fs_type={path}")).stdout;
    assert_eq!(fs_type(&mut world, "/cache"), "mount type of \"/cache\": tmpfs\n");
    assert_eq!(fs_type(&mut world, "/data"), "mount type of \"/data\": 61267\n", "ext4's magic number");
    assert_eq!(fs_type(&mut world, "/etc"), "mount type of \"/etc\": 2035054128\n", "overlayfs's magic number");
    let busybox = world.run_command("kubectl exec bb -c c -- df");
    let mounted_on: Vec<&str> = busybox.stdout.lines().skip(1).map(|l| l.rsplit(' ').next().expect("a column")).collect();
    assert_eq!(&mounted_on[..5], ["/", "/dev", "/data", "/cache", "/etc/hosts"], "{}", busybox.stdout);
    assert!(busybox.stdout.lines().any(|l| l.starts_with("tmpfs ") && l.ends_with(" /cache")), "{}", busybox.stdout);
    let gnu = world.run_command("kubectl exec web -- df -h");
    let rows: Vec<(&str, &str)> =
        gnu.stdout.lines().skip(1).map(|l| (l.split(' ').next().expect("a column"), l.rsplit(' ').next().expect("a column"))).collect();
    assert_eq!(
        rows,
        [
            ("overlay", "/"),
            ("tmpfs", "/dev"),
            ("/dev/sda1", "/etc/hosts"),
            ("shm", "/dev/shm"),
            ("tmpfs", "/var/run/secrets/kubernetes.io/serviceaccount"),
            ("tmpfs", "/proc/acpi"),
            ("tmpfs", "/proc/scsi"),
            ("tmpfs", "/sys/firmware"),
        ],
        "{}",
        gnu.stdout
    );
}
