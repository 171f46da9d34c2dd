#![cfg(not(target_arch = "wasm32"))]
//! The network faults through the fabric: partitions between nodes or zones (both ways or
//! one), packet loss and added latency on a node, a DNS outage, and kube-proxy stopped on a
//! node. Their effects follow from the model: clients time out, endpoints stay until some
//! controller acts, stale rules send traffic to addresses that are gone.

use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;

fn pod(name: &str, node: &str, labels: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {labels}}}\nspec:\n  nodeName: {node}\n  containers:\n  - name: c\n    image: registry.k8s.io/e2e-test-images/agnhost:2.53\n    args: [netexec, --http-port=80]\n---\n"
    )
}

const CLIENT: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  nodeName: node-1\n  containers: [{name: c, image: 'busybox:1.37', command: [sleep, '3600']}]\n---\n";

fn world(extra: &str) -> World {
    let mut world = World::new(11);
    world.add_default_nodes();
    let mut text = String::from(CLIENT);
    text.push_str(&pod("web-1", "node-1", "{app: web}"));
    text.push_str(&pod("web-2", "node-2", "{app: other}"));
    text.push_str(&pod("web-3", "node-3", "{app: other}"));
    text.push_str(extra);
    let outcome = apply(&mut world, &InputFile { name: "net.yaml".into(), text });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world.run_until(40_000);
    world
}

fn ip(world: &mut World, pod: &str) -> String {
    world.run_command(&format!("kubectl get pod {pod} -o jsonpath={{.status.podIP}}")).stdout
}

fn get(world: &mut World, url: &str) -> kubesim_sim::world::CommandRecord {
    world.run_command(&format!("kubectl exec client -- wget -qO- -T 2 {url}"))
}

fn fault(world: &mut World, text: &str) {
    let out = world.run_command(&format!("fault {text}"));
    assert_eq!(out.exit_code, 0, "{out:?}");
}

#[test]
fn a_partition_between_nodes_drops_packets_both_ways_until_healed() {
    let mut world = world("");
    let (two, three) = (ip(&mut world, "web-2"), ip(&mut world, "web-3"));
    assert_eq!(get(&mut world, &format!("http://{two}/hostname")).stdout, "web-2");
    fault(&mut world, "partition node-1 node-2");
    let cut = get(&mut world, &format!("http://{two}/hostname"));
    assert_eq!(cut.exit_code, 1, "{cut:?}");
    assert!(cut.stdout.contains("download timed out"), "a partition drops packets: the client times out: {cut:?}");
    assert_eq!(get(&mut world, &format!("http://{three}/hostname")).stdout, "web-3", "other links are up");
    // The control plane still reaches both nodes: nothing is evicted.
    world.run_until(world.now() + 120_000);
    let nodes = world.run_command("kubectl get nodes --no-headers").stdout;
    assert_eq!(nodes.matches(" Ready ").count(), 3, "{nodes}");
    fault(&mut world, "heal");
    assert_eq!(get(&mut world, &format!("http://{two}/hostname")).stdout, "web-2");
}

#[test]
fn a_one_way_partition_breaks_connections_both_ways() {
    let mut world = world(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: client-2}\nspec:\n  nodeName: node-2\n  containers: [{name: c, image: 'busybox:1.37', command: [sleep, '3600']}]\n",
    );
    let (one, two) = (ip(&mut world, "web-1"), ip(&mut world, "web-2"));
    fault(&mut world, "partition node-2 node-1 --one-way");
    // node-1 → node-2: the SYN arrives, the SYN-ACK (node-2 → node-1) is lost: every modelled
    // call needs its reply, so a one-way cut breaks connections both ways, as TCP does.
    assert_eq!(get(&mut world, &format!("http://{two}/hostname")).exit_code, 1);
    let from_two = world.run_command(&format!("kubectl exec client-2 -- wget -qO- -T 2 http://{one}/hostname"));
    assert_eq!(from_two.exit_code, 1, "node-2's packets to node-1 are dropped: {from_two:?}");
    let three = ip(&mut world, "web-3");
    let other = world.run_command(&format!("kubectl exec client-2 -- wget -qO- -T 2 http://{three}/hostname"));
    assert_eq!(other.stdout, "web-3");
}

#[test]
fn a_zone_partition_cuts_the_zones_nodes_apart() {
    let mut world = world("");
    let two = ip(&mut world, "web-2");
    let out = world.run_command("fault partition zone=zone-a zone=zone-b");
    assert_eq!(out.stdout, "packets between zone=zone-a (node-1) and zone=zone-b (node-2) are dropped", "{out:?}");
    assert_eq!(get(&mut world, &format!("http://{two}/hostname")).exit_code, 1);
    let bad = world.run_command("fault partition zone=zone-x node-1");
    assert_eq!(bad.exit_code, 1);
    assert!(bad.stderr.contains("no node is labelled topology.kubernetes.io/zone=zone-x"), "{bad:?}");
}

#[test]
fn packet_loss_and_latency_impair_a_nodes_traffic() {
    let mut world = world("");
    let three = ip(&mut world, "web-3");
    fault(&mut world, "packet-loss node-3 100%");
    assert_eq!(get(&mut world, &format!("http://{three}/hostname")).exit_code, 1, "every packet lost");
    fault(&mut world, "packet-loss node-3 0%");
    assert_eq!(get(&mut world, &format!("http://{three}/hostname")).stdout, "web-3");
    // Half the connections through a 50% loss fail (the draw is per packet, reproducible).
    fault(&mut world, "packet-loss node-3 50%");
    let mut failed = 0;
    for _ in 0..20 {
        if get(&mut world, &format!("http://{three}/hostname")).exit_code != 0 {
            failed += 1;
        }
        world.run_until(world.now() + 1_000);
    }
    assert!((4..=16).contains(&failed), "{failed} of 20 failed");
    fault(&mut world, "heal");
    fault(&mut world, "latency node-3 400ms");
    // A process's call (not an exec's, which is answered at once): its reply arrives 2 × 400 ms
    // later than the link's own round trip.
    let out = world.run_command(&format!("kubectl run probe --image=busybox:1.37 --restart=Never -- wget -qO- -T 5 http://{three}/hostname"));
    assert_eq!(out.exit_code, 0, "{out:?}");
    world.run_until(world.now() + 30_000);
    let packet = world.runtime().packets().0.iter().rev().find(|p| p.dst == (three.clone(), 80)).cloned().expect("the probe's request");
    assert_eq!(packet.outcome, "ok", "{packet:?}");
    assert!(packet.latency_ms >= 800, "400 ms each way: {packet:?}");
    assert_eq!(world.run_command("kubectl logs probe").stdout.trim_end(), "web-3");
}

#[test]
fn a_dns_outage_times_out_lookups_until_healed() {
    let mut world = world("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n");
    assert_eq!(get(&mut world, "http://web/hostname").stdout, "web-1");
    fault(&mut world, "dns-outage");
    let down = get(&mut world, "http://web/hostname");
    assert_eq!(down.exit_code, 1, "{down:?}");
    assert!(down.stdout.contains("bad address 'web'"), "{down:?}");
    fault(&mut world, "heal");
    assert_eq!(get(&mut world, "http://web/hostname").stdout, "web-1");
}

#[test]
fn a_stopped_kube_proxy_leaves_stale_rules_on_its_node() {
    let mut world = world(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec:\n      nodeSelector: {kubernetes.io/hostname: node-2}\n      containers: [{name: c, image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', args: [netexec, --http-port=80]}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec:\n  selector: {app: api}\n  ports: [{port: 80}]\n",
    );
    let first = get(&mut world, "http://api/hostname");
    assert!(first.stdout.starts_with("api-"), "{first:?}");
    fault(&mut world, "kube-proxy-stop node-1");
    // The endpoint moves: a new pod, a new address; node-1's rules still name the old one.
    let out = world.run_command("kubectl delete pod -l app=api --wait=false");
    assert_eq!(out.exit_code, 0, "{out:?}");
    world.run_until(world.now() + 60_000);
    let stale = get(&mut world, "http://api/hostname");
    assert_eq!(stale.exit_code, 1, "the stale rule sends the connection to the old pod's address: {stale:?}");
    fault(&mut world, "kube-proxy-start node-1");
    world.run_until(world.now() + 2_000);
    let fresh = get(&mut world, "http://api/hostname");
    assert!(fresh.stdout.starts_with("api-") && fresh.stdout != first.stdout, "{fresh:?}");
}
