#![cfg(not(target_arch = "wasm32"))]
//! PersistentVolumeClaim expansion as v1.34 does it: `kubectl patch` grows a bound claim of an
//! expandable class; the external-resizer marks it (`Resizing`, ControllerResizeInProgress),
//! calls ControllerExpandVolume, grows the PV and leaves `FileSystemResizePending` /
//! NodeResizePending (kube-controller-manager's expand controller only says `ExternalExpanding`);
//! the kubelet that mounts the volume calls NodeExpandVolume and records
//! the new capacity on the claim. Plus the API server's refusals (a class without
//! `allowVolumeExpansion`, a shrink, an unbound claim) and an expansion while no pod uses the
//! claim, finished by the next pod that mounts it.

use kubesim_api::object::Object;
use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;
use serde_json::Value;

fn world() -> World {
    let mut world = World::new(3);
    let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {kubernetes.io/hostname: n1, kubernetes.io/os: linux, topology.kubernetes.io/zone: zone-a}\nstatus:\n  capacity: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n";
    load(&mut world, node);
    world
}

fn load(world: &mut World, yaml: &str) {
    let outcome = apply(world, &InputFile { name: "test.yaml".into(), text: yaml.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
}

fn claim(name: &str, class: &str, size: &str) -> String {
    format!(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\nspec: {{accessModes: [ReadWriteOnce], storageClassName: {class}, resources: {{requests: {{storage: {size}}}}}}}\n"
    )
}

fn pod(name: &str, claim: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: c\n    image: busybox:1.36\n    command: [sh, -c, 'sleep 36000']\n    volumeMounts: [{{name: data, mountPath: /data}}]\n  volumes:\n  - name: data\n    persistentVolumeClaim: {{claimName: {claim}}}\n"
    )
}

fn get(world: &World, resource: (&'static str, &'static str), ns: &str, name: &str) -> Option<Value> {
    world.api().lookup(resource, ns, name).map(|o| o.to_json())
}

fn pvc(world: &World, name: &str) -> Value {
    get(world, ("", "persistentvolumeclaims"), "default", name).expect("claim")
}

fn pv_of(world: &World, claim: &str) -> Value {
    let name = pvc(world, claim)["spec"]["volumeName"].as_str().expect("bound").to_string();
    get(world, ("", "persistentvolumes"), "", &name).expect("volume")
}

fn kubectl(world: &mut World, line: &str) -> String {
    let record = world.run_command(&format!("kubectl {line}"));
    assert_eq!(record.exit_code, 0, "{line}: {}", record.stderr);
    record.stdout
}

fn kubectl_fails(world: &mut World, line: &str) -> String {
    let record = world.run_command(&format!("kubectl {line}"));
    assert_ne!(record.exit_code, 0, "{line} succeeded: {}", record.stdout);
    record.stderr
}

/// (reason, message) of the events about one object, in write order.
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

fn reasons(world: &World, name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (reason, _) in events(world, name) {
        if out.last() != Some(&reason) {
            out.push(reason);
        }
    }
    out
}

/// Runs up to `within` ms more until `done`.
fn run_until(world: &mut World, within: u64, what: &str, done: impl Fn(&World) -> bool) {
    let limit = world.now() + within;
    while world.now() < limit && !done(world) {
        let next = world.now() + 250;
        world.run_until(next);
    }
    assert!(done(world), "{what} by {} ms", world.now());
}

fn running(world: &World, pod: &str) -> bool {
    get(world, ("", "pods"), "default", pod).is_some_and(|p| p["status"]["phase"] == "Running")
}

fn condition_types(claim: &Value) -> Vec<String> {
    claim["status"]["conditions"].as_array().into_iter().flatten().filter_map(|c| c["type"].as_str().map(str::to_string)).collect()
}

const PATCH_2GI: &str = r#"patch pvc data -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'"#;

fn no_violations(world: &World) {
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
}

// The online path on the disk driver: the claim is mounted by a running pod, the resizer grows
// the disk and the PV, the kubelet grows the filesystem; events in upstream's order, the
// claim's capacity follows only at the end.
#[test]
fn a_mounted_claim_grows_through_the_resizer_and_the_kubelet() {
    let mut world = world();
    load(&mut world, &format!("{}---\n{}", claim("data", "block", "1Gi"), pod("app", "data")));
    run_until(&mut world, 60_000, "app running", |w| running(w, "app"));
    assert_eq!(pvc(&world, "data")["status"]["capacity"]["storage"], "1Gi");

    assert_eq!(kubectl(&mut world, PATCH_2GI), "persistentvolumeclaim/data patched\n");
    // At once: the request changed, the capacity did not.
    let get_line = kubectl(&mut world, "get pvc data");
    assert!(get_line.lines().nth(1).unwrap().split_whitespace().nth(3) == Some("1Gi"), "{get_line}");

    // The resizer: in progress, then the PV grows and the node's part is pending.
    run_until(&mut world, 30_000, "FileSystemResizePending", |w| condition_types(&pvc(w, "data")) == ["FileSystemResizePending"]);
    let claim = pvc(&world, "data");
    assert_eq!(claim["status"]["capacity"]["storage"], "1Gi");
    assert_eq!(claim["status"]["allocatedResources"]["storage"], "2Gi");
    let status = claim["status"]["allocatedResourceStatuses"]["storage"].as_str().unwrap();
    assert!(status == "NodeResizePending" || status == "NodeResizeInProgress", "{status}");
    assert_eq!(pv_of(&world, "data")["spec"]["capacity"]["storage"], "2Gi");
    let pv_name = pv_of(&world, "data")["metadata"]["name"].as_str().unwrap().to_string();
    let handle = pv_of(&world, "data")["spec"]["csi"]["volumeHandle"].as_str().unwrap().to_string();
    assert_eq!(world.runtime().cloud().disk(&handle).unwrap().size_bytes, 2i128 << 30);
    let condition = &claim["status"]["conditions"][0];
    assert_eq!(condition["message"], "Waiting for user to (re-)start a pod to finish file system resize of volume on node.");
    assert_eq!(condition["status"], "True");
    let described = kubectl(&mut world, "describe pvc data");
    // As kubectl prints it (the columns of a real `kubectl describe pvc`).
    assert!(described.contains("Conditions:\n  Type                      Status  LastProbeTime                     LastTransitionTime                Reason  Message\n  ----                      ------  -----------------                 ------------------                ------  -------\n"), "{described}");
    assert!(described.contains("  FileSystemResizePending   True    Mon, 01 Jan 0001 00:00:00 +0000   Wed, 01 Jan 2025 00:00:"), "{described}");
    assert!(described.contains("Waiting for user to (re-)start a pod to finish file system resize of volume on node."), "{described}");

    // The kubelet notices at its next pod sync (syncFrequency 1m) and finishes.
    run_until(&mut world, 120_000, "capacity 2Gi", |w| pvc(w, "data")["status"]["capacity"]["storage"] == "2Gi");
    let claim = pvc(&world, "data");
    assert!(condition_types(&claim).is_empty(), "{claim}");
    assert!(claim["status"].get("allocatedResourceStatuses").is_none(), "{claim}");
    assert_eq!(claim["status"]["allocatedResources"]["storage"], "2Gi");
    let get_line = kubectl(&mut world, "get pvc data");
    assert!(get_line.lines().nth(1).unwrap().split_whitespace().nth(3) == Some("2Gi"), "{get_line}");
    assert!(!kubectl(&mut world, "describe pvc data").contains("Conditions:"));

    let claim_events = events(&world, "data");
    let tail: Vec<&(String, String)> =
        claim_events.iter().filter(|(r, _)| r != "WaitForFirstConsumer" && r != "ExternalProvisioning" && !r.starts_with("Provisioning")).collect();
    assert_eq!(
        tail,
        [
            &("ExternalExpanding".to_string(), "waiting for an external controller to expand this PVC".to_string()),
            &("Resizing".to_string(), format!("External resizer is resizing volume {pv_name}")),
            &("FileSystemResizeRequired".to_string(), "Require file system resize of volume on node".to_string()),
            &("FileSystemResizeSuccessful".to_string(), format!("MountVolume.NodeExpandVolume succeeded for volume {pv_name:?} n1")),
        ]
    );
    assert!(events(&world, "app")
        .contains(&("FileSystemResizeSuccessful".to_string(), format!("MountVolume.NodeExpandVolume succeeded for volume {pv_name:?} n1"))));
    // The event sources: kcm's expand controller, the resizer sidecar and the kubelet.
    let described = kubectl(&mut world, "describe pvc data");
    assert!(described.contains("volume_expand"), "{described}");
    assert!(described.contains("external-resizer disk.csi.kubesim.io"), "{described}");
    assert!(world.notes().iter().any(|n| n.call == "ControllerExpandVolume"));
    assert!(world.notes().iter().any(|n| n.target == "csi/n1" && n.call == "NodeExpandVolume"));
    assert!(running(&world, "app"), "the pod kept running");
    no_violations(&world);
}

// kind's `standard` (local-path) and the host-path example class do not allow expansion:
// PersistentVolumeClaimResize refuses; a shrink is refused by validation; a claim that is not
// bound cannot change its request at all.
#[test]
fn the_api_server_refuses_what_upstream_refuses() {
    let mut world = world();
    load(&mut world, &format!("{}---\n{}", claim("data", "standard", "1Gi"), pod("app", "data")));
    run_until(&mut world, 60_000, "app running", |w| running(w, "app"));
    let sc = kubectl(&mut world, "get sc");
    assert!(sc.lines().any(|l| l.starts_with("standard (default)") && l.contains("false")), "{sc}");
    assert!(sc.lines().any(|l| l.starts_with("block") && l.contains("true")), "{sc}");
    assert!(sc.lines().any(|l| l.starts_with("csi-hostpath-sc") && l.contains("false")), "{sc}");
    assert_eq!(
        kubectl_fails(&mut world, PATCH_2GI),
        "Error from server (Forbidden): persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize\n"
    );
    assert_eq!(pvc(&world, "data")["spec"]["resources"]["requests"]["storage"], "1Gi");

    // Shrinking a bound claim below (or to) its capacity.
    load(&mut world, &format!("{}---\n{}", claim("big", "block", "2Gi"), pod("user", "big")));
    run_until(&mut world, 60_000, "user running", |w| running(w, "user"));
    let shrink = r#"patch pvc big -p '{"spec":{"resources":{"requests":{"storage":"1Gi"}}}}'"#;
    assert_eq!(
        kubectl_fails(&mut world, shrink),
        "The PersistentVolumeClaim \"big\" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity\n"
    );
    // The same size in other units is no change at all.
    kubectl(&mut world, r#"patch pvc big -p '{"spec":{"resources":{"requests":{"storage":"2048Mi"}}}}'"#);
    // Other spec fields stay immutable.
    let stderr = kubectl_fails(&mut world, r#"patch pvc big -p '{"spec":{"accessModes":["ReadWriteMany"]}}'"#);
    assert!(
        stderr.starts_with(
            "The PersistentVolumeClaim \"big\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
        ),
        "{stderr}"
    );

    // An unbound claim (WaitForFirstConsumer, no pod): its request is immutable like the rest.
    load(&mut world, &claim("waiting", "block", "1Gi"));
    world.run_until(world.now() + 2_000);
    assert_eq!(pvc(&world, "waiting")["status"]["phase"], "Pending");
    let stderr = kubectl_fails(&mut world, r#"patch pvc waiting -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'"#);
    assert!(
        stderr.starts_with(
            "The PersistentVolumeClaim \"waiting\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
        ),
        "{stderr}"
    );
    // The PV binder may still set the volume name and the scheduler the selected node.
    no_violations(&world);
}

// With no pod using the claim the controller part finishes and the claim waits for a pod;
// the next pod that mounts it grows the filesystem before its containers start.
#[test]
fn an_unused_claim_waits_for_the_next_pod_to_mount_it() {
    let mut world = world();
    load(&mut world, &format!("{}---\n{}", claim("data", "block", "1Gi"), pod("first", "data")));
    run_until(&mut world, 60_000, "first running", |w| running(w, "first"));
    kubectl(&mut world, "delete pod first");
    run_until(&mut world, 60_000, "first gone", |w| get(w, ("", "pods"), "default", "first").is_none());
    // The disk is detached again before the claim grows (nothing mounts it).
    run_until(&mut world, 60_000, "detached", |w| w.api().store().list(("storage.k8s.io", "volumeattachments"), None).next().is_none());

    kubectl(&mut world, PATCH_2GI);
    run_until(&mut world, 30_000, "FileSystemResizePending", |w| condition_types(&pvc(w, "data")) == ["FileSystemResizePending"]);
    // It stays so: nobody mounts it.
    world.run_until(world.now() + 180_000);
    let claim = pvc(&world, "data");
    assert_eq!(condition_types(&claim), ["FileSystemResizePending"]);
    assert_eq!(claim["status"]["allocatedResourceStatuses"]["storage"], "NodeResizePending");
    assert_eq!(claim["status"]["capacity"]["storage"], "1Gi");
    assert_eq!(pv_of(&world, "data")["spec"]["capacity"]["storage"], "2Gi");

    // A new pod mounts it: the kubelet expands during the mount, then starts the containers.
    load(&mut world, &pod("second", "data"));
    run_until(&mut world, 60_000, "second running", |w| running(w, "second"));
    let claim = pvc(&world, "data");
    assert_eq!(claim["status"]["capacity"]["storage"], "2Gi", "{claim}");
    assert!(condition_types(&claim).is_empty(), "{claim}");
    let second = reasons(&world, "second");
    let resized = second.iter().position(|r| r == "FileSystemResizeSuccessful").expect("resized on the pod");
    let started = second.iter().position(|r| r == "Started").expect("started");
    assert!(resized < started, "{second:?}");
    assert!(
        reasons(&world, "data").ends_with(&[
            "ExternalExpanding".into(),
            "Resizing".into(),
            "FileSystemResizeRequired".into(),
            "FileSystemResizeSuccessful".into()
        ]),
        "{:?}",
        reasons(&world, "data")
    );
    no_violations(&world);
}

// The host-path driver expands too when a class allows it; its resizer is a separate sidecar.
#[test]
fn a_host_path_claim_of_an_expandable_class_grows() {
    let mut world = world();
    let class = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: hostpath-expandable}\nprovisioner: hostpath.csi.k8s.io\nvolumeBindingMode: WaitForFirstConsumer\nallowVolumeExpansion: true\n";
    load(&mut world, &format!("{class}---\n{}---\n{}", claim("data", "hostpath-expandable", "1Gi"), pod("app", "data")));
    run_until(&mut world, 60_000, "app running", |w| running(w, "app"));
    kubectl(&mut world, PATCH_2GI);
    run_until(&mut world, 120_000, "capacity 2Gi", |w| pvc(w, "data")["status"]["capacity"]["storage"] == "2Gi");
    assert_eq!(pv_of(&world, "data")["spec"]["capacity"]["storage"], "2Gi");
    assert!(kubectl(&mut world, "describe pvc data").contains("external-resizer hostpath.csi.k8s.io"));
    no_violations(&world);
}

// A second, larger request while the node's part of the first is pending waits for the node
// (expandAndRecover keeps the allocated size), then expands again.
#[test]
fn a_larger_request_during_a_pending_node_expansion_follows_it() {
    let mut world = world();
    load(&mut world, &format!("{}---\n{}", claim("data", "block", "1Gi"), pod("app", "data")));
    run_until(&mut world, 60_000, "app running", |w| running(w, "app"));
    kubectl(&mut world, PATCH_2GI);
    run_until(&mut world, 30_000, "FileSystemResizePending", |w| condition_types(&pvc(w, "data")) == ["FileSystemResizePending"]);
    kubectl(&mut world, r#"patch pvc data -p '{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}'"#);
    world.run_until(world.now() + 5_000);
    // Still the first expansion: the PV stays at 2Gi until the node finished.
    assert_eq!(pv_of(&world, "data")["spec"]["capacity"]["storage"], "2Gi");
    assert_eq!(pvc(&world, "data")["status"]["allocatedResources"]["storage"], "2Gi");
    run_until(&mut world, 300_000, "capacity 3Gi", |w| pvc(w, "data")["status"]["capacity"]["storage"] == "3Gi");
    let claim = pvc(&world, "data");
    assert_eq!(pv_of(&world, "data")["spec"]["capacity"]["storage"], "3Gi");
    assert_eq!(claim["status"]["allocatedResources"]["storage"], "3Gi");
    assert!(condition_types(&claim).is_empty(), "{claim}");
    let resized = events(&world, "data").iter().filter(|(r, _)| r == "FileSystemResizeSuccessful").count();
    assert_eq!(resized, 2);
    no_violations(&world);
}

// A pod that mounts the claim read-only does not finish the expansion: the kubelet reports it
// (FileSystemResizeFailed on the pod and the claim) and mounts the volume anyway.
#[test]
fn a_read_only_mount_does_not_finish_an_expansion() {
    let mut world = world();
    load(&mut world, &claim("data", "block", "1Gi"));
    load(&mut world, &pod("first", "data"));
    run_until(&mut world, 60_000, "first running", |w| running(w, "first"));
    kubectl(&mut world, "delete pod first");
    run_until(&mut world, 60_000, "first gone", |w| get(w, ("", "pods"), "default", "first").is_none());
    kubectl(&mut world, PATCH_2GI);
    run_until(&mut world, 30_000, "FileSystemResizePending", |w| condition_types(&pvc(w, "data")) == ["FileSystemResizePending"]);
    load(&mut world, &pod("reader", "data").replace("{claimName: data}", "{claimName: data, readOnly: true}"));
    run_until(&mut world, 60_000, "reader running", |w| running(w, "reader"));
    let pv_name = pv_of(&world, "data")["metadata"]["name"].as_str().unwrap().to_string();
    let warning = ("FileSystemResizeFailed".to_string(), format!("MountVolume.NodeExpandVolume failed for volume {pv_name:?} requested read-only file system"));
    assert!(events(&world, "reader").contains(&warning), "{:?}", events(&world, "reader"));
    assert!(events(&world, "data").contains(&warning));
    world.run_until(world.now() + 90_000);
    let claim = pvc(&world, "data");
    assert_eq!(claim["status"]["capacity"]["storage"], "1Gi");
    assert_eq!(condition_types(&claim), ["FileSystemResizePending"]);
    no_violations(&world);
}
