#![cfg(not(target_arch = "wasm32"))]
//! `minikube ssh`: a root shell on a node whose data directories are the node's own
//! filesystem, the one hostPath volumes mount (the "Configure a Pod to Use a PersistentVolume
//! for Storage" page writes /mnt/data/index.html there before a pod serves it).

use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: reader}\nspec:\n  nodeName: node-1\n  volumes: [{name: data, hostPath: {path: /mnt/data, type: DirectoryOrCreate}}]\n  containers:\n  - name: app\n    image: busybox:1.36\n    command: [sh, -c, 'cat /data/index.html; echo from-pod > /data/pod.txt; sleep 3600']\n    volumeMounts: [{name: data, mountPath: /data}]\n";

fn out(world: &mut World, line: &str) -> (String, i32) {
    let r = world.run_command(line);
    (format!("{}{}", r.stdout, r.stderr), r.exit_code)
}

#[test]
fn what_the_node_shell_writes_a_host_path_pod_reads_and_the_reverse() {
    let mut world = World::new(1);
    world.add_default_nodes();
    world.run_until(1_000);
    assert_eq!(out(&mut world, "minikube ssh -n node-1"), (String::new(), 0));
    assert_eq!(world.node_shell(), Some("node-1"));
    assert_eq!(out(&mut world, "sudo mkdir /mnt/data").1, 0);
    assert_eq!(out(&mut world, "sudo sh -c \"echo 'Hello from the node' > /mnt/data/index.html\"").1, 0);
    // The shell runs on the node: its hostname is the node's.
    assert_eq!(out(&mut world, "hostname"), ("node-1\n".into(), 0));
    assert_eq!(out(&mut world, "exit"), ("logout\n".into(), 0));
    assert_eq!(world.node_shell(), None);
    let outcome = apply(&mut world, &InputFile { name: "pod.yaml".into(), text: POD.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world.run_until(40_000);
    assert_eq!(out(&mut world, "kubectl logs reader"), ("Hello from the node\n".into(), 0));
    // One command without a session; the pod's file is on the node.
    assert_eq!(out(&mut world, "minikube ssh -n node-1 -- cat /mnt/data/pod.txt"), ("from-pod\n".into(), 0));
    // Another node has its own filesystem.
    let (text, code) = out(&mut world, "minikube ssh -n node-2 -- cat /mnt/data/pod.txt");
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("No such file or directory"), "{text}");
}

#[test]
fn ssh_to_a_missing_or_powered_off_node_fails() {
    let mut world = World::new(1);
    world.add_default_nodes();
    world.run_until(1_000);
    let (text, code) = out(&mut world, "minikube ssh -n nope");
    assert_eq!(code, 85, "{text}");
    assert!(text.contains("Could not find node nope"), "{text}");
    assert_eq!(out(&mut world, "fault node-down node-3").1, 0);
    let (text, code) = out(&mut world, "minikube ssh -n node-3 -- ls /");
    assert_eq!(code, 255, "{text}");
    assert!(text.contains("No route to host"), "{text}");
    assert_eq!(world.node_shell(), None);
}
