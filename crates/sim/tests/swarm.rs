#![cfg(not(target_arch = "wasm32"))]
//! Swarm runs (random clusters, workloads, actions and faults from seeds) pass their safety and
//! liveness phases; the invariant checkers catch what they are for.

use kubesim_api::decode::{decode_document, parse_documents};
use kubesim_api::object::Object;
use kubesim_apiserver::ApiServer;
use kubesim_runtime::Checker;
use kubesim_sim::checkers::{BindingIsPermanent, PodIpsUnique, VolumeBoundOnce};
use kubesim_store::{Commit, EventType};
use std::sync::Arc;

#[test]
fn swarm_seeds_pass_safety_and_liveness() {
    for seed in 1..=6 {
        let report = kubesim_sim::swarm::run_seed(seed, 3);
        let o = &report.outcome;
        assert!(report.passed(), "seed {seed}: {:?}\n{:?}\n{:?}\n{}", o.violations, o.liveness, report.divergence, o.final_state);
        assert!(o.revision > 100, "seed {seed} did work");
    }
}

// The reproducer replays: the plan run as `kubesim run FILE --seed S --for END --at ...` runs
// (with history recorded) gives the very history the swarm's run gave (history off).
#[test]
fn a_swarm_run_replays_through_kubesim_run() {
    let plan = kubesim_sim::swarm::plan(4, 2);
    let outcome = kubesim_sim::swarm::execute(&plan, None);
    let options = plan.run_options(Some(outcome.end_ms));
    assert_eq!(options.record_history, None, "kubesim run records its history");
    let (mut world, _, errors) = kubesim_sim::run::start(&options);
    assert!(errors.is_empty(), "{errors:?}");
    world.runtime_mut().add_checker(Box::new(kubesim_sim::swarm::HistoryHash::default()));
    world.run_until(outcome.end_ms);
    let replayed = world.runtime().checker_as::<kubesim_sim::swarm::HistoryHash>(kubesim_sim::swarm::HistoryHash::NAME).unwrap();
    assert_eq!(replayed.hex(), outcome.hash);
    assert!(replayed.commits > 300, "{} commits compared", replayed.commits);
    let line = plan.command_line(outcome.end_ms);
    assert!(line.starts_with(&format!("kubesim run swarm-4.yaml --seed 4 --for {}ms", outcome.end_ms)), "{line}");
    assert!(line.contains(&format!("--at {}ms 'fault heal'", plan.heal_at)), "{line}");
}

// A sample seed's history hash, shared with the wasm test (crates/sim/tests/wasm.rs): the
// swarm's determinism across native and wasm. A change of behaviour changes it: if intended,
// rerun with KUBESIM_BLESS=1 (as for the nginx golden).
#[test]
fn a_sample_seed_matches_the_golden_hash_shared_with_the_wasm_test() {
    let outcome = kubesim_sim::swarm::execute(&kubesim_sim::swarm::plan(3, 1), None);
    assert_eq!(outcome.signature(), None, "{:?} {:?}", outcome.violations, outcome.liveness);
    let golden = include_str!("golden/swarm-seed3-1min.fnv").trim();
    if std::env::var("KUBESIM_BLESS").is_ok() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/swarm-seed3-1min.fnv"), format!("{}\n", outcome.hash)).unwrap();
        return;
    }
    assert_eq!(outcome.hash, golden, "the swarm sample's history changed: if intended, rerun with KUBESIM_BLESS=1");
}

// Shrinking keeps the Nodes and drops every action and document the failure does not need.
#[test]
fn shrinking_finds_the_actions_and_documents_a_failure_needs() {
    let plan = kubesim_sim::swarm::plan(7, 4);
    let crash = plan.schedule.iter().find(|(_, l)| l.starts_with("fault container-crash") || l.starts_with("kubectl drain")).cloned();
    let Some((_, needed)) = crash else { panic!("seed 7 drains or crashes: {:?}", plan.schedule) };
    let mut runs = 0;
    let shrunk = kubesim_sim::swarm::shrink_with(&plan, 500, |p| {
        runs += 1;
        p.schedule.iter().any(|(_, l)| *l == needed) && p.input.contains("kind: StatefulSet")
    });
    assert_eq!(shrunk.schedule.len(), 1, "{:?}", shrunk.schedule);
    assert_eq!(shrunk.schedule[0].1, needed);
    let kinds: Vec<&str> = shrunk.input.lines().filter_map(|l| l.strip_prefix("kind: ")).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "Node").count(), plan.nodes.len(), "nodes stay: {kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k != "Node").collect::<Vec<_>>(), [&"StatefulSet"]);
    assert!(runs < 100, "{runs} candidate runs");
}

// A real failure shrunk: a roll-out to an image no registry has never converges; the shrinker
// keeps that action and the Deployment. Slow (each candidate runs the full liveness budget):
// `cargo test -p kubesim-sim --test swarm -- --ignored`.
#[test]
#[ignore]
fn a_liveness_failure_shrinks_to_its_cause() {
    let mut plan = kubesim_sim::swarm::plan(2, 1);
    plan.schedule.push((30_000, "kubectl set image deployment/app-0 web=registry.invalid/nginx:1".into()));
    kubesim_api::sort::sort(&mut plan.schedule);
    let outcome = kubesim_sim::swarm::execute(&plan, None);
    assert_eq!(outcome.signature().as_deref(), Some("liveness"), "{:?}", outcome.liveness);
    let shrunk = kubesim_sim::swarm::shrink(&plan, "liveness", outcome.end_ms, 80);
    assert!(shrunk.schedule.iter().any(|(_, l)| l.contains("registry.invalid")), "{:?}", shrunk.schedule);
    assert!(shrunk.schedule.len() < plan.schedule.len());
    assert!(shrunk.input.contains("name: app-0"));
    assert_eq!(kubesim_sim::swarm::execute(&shrunk, Some(outcome.end_ms)).signature().as_deref(), Some("liveness"));
}

fn object(yaml: &str) -> Arc<Object> {
    let (docs, _) = parse_documents("t.yaml", yaml);
    Arc::new(decode_document("t.yaml", &docs[0]).unwrap().remove(0))
}

fn commit(resource: (&'static str, &'static str), object: Arc<Object>, event_type: EventType) -> Commit {
    Commit { revision: 1, t_ms: 0, event_type, resource, object, previous: None, actor: "test".into() }
}

fn pod(name: &str, uid: &str, node: &str, ip: &str, phase: &str) -> Arc<Object> {
    object(&format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, uid: 'u{uid}'}}\nspec:\n  nodeName: {node}\n  containers: [{{name: c, image: nginx}}]\nstatus: {{phase: {phase}, podIP: {ip}}}\n"))
}

#[test]
fn checkers_catch_shared_pod_ips_moved_pods_and_doubly_bound_volumes() {
    let api = ApiServer::new();
    let mut ips = PodIpsUnique::default();
    assert!(ips.check(&commit(("", "pods"), pod("a", "1", "n1", "10.244.0.2", "Running"), EventType::Modified), &api).is_ok());
    let clash = ips.check(&commit(("", "pods"), pod("b", "2", "n1", "10.244.0.2", "Running"), EventType::Modified), &api);
    assert_eq!(clash.unwrap_err(), "pods default/a and default/b are both live with IP 10.244.0.2");
    let mut ips = PodIpsUnique::default();
    ips.check(&commit(("", "pods"), pod("a", "1", "n1", "10.244.0.2", "Succeeded"), EventType::Modified), &api).unwrap();
    assert!(
        ips.check(&commit(("", "pods"), pod("b", "2", "n1", "10.244.0.2", "Running"), EventType::Modified), &api).is_ok(),
        "a finished pod's address may be reused"
    );

    let mut binding = BindingIsPermanent::default();
    binding.check(&commit(("", "pods"), pod("a", "1", "n1", "10.244.0.2", "Running"), EventType::Modified), &api).unwrap();
    assert_eq!(
        binding.check(&commit(("", "pods"), pod("a", "1", "n2", "10.244.1.2", "Running"), EventType::Modified), &api).unwrap_err(),
        "pod default/a moved from node n1 to n2"
    );

    let claim = |name: &str| {
        object(&format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  volumeName: pv-1\n  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: 1Gi}}}}\n"))
    };
    let mut volumes = VolumeBoundOnce::default();
    volumes.check(&commit(("", "persistentvolumeclaims"), claim("one"), EventType::Modified), &api).unwrap();
    assert_eq!(
        volumes.check(&commit(("", "persistentvolumeclaims"), claim("two"), EventType::Modified), &api).unwrap_err(),
        "persistentvolume pv-1 is bound to both default/one and default/two"
    );
    volumes.check(&commit(("", "persistentvolumeclaims"), claim("one"), EventType::Deleted), &api).unwrap();
}

// The data-plane checkers read hosts: a ReadWriteOnce CSI volume published on two nodes, and a
// container started before its pod's CSI volume was published.
#[test]
fn host_checkers_catch_a_volume_published_twice_and_a_container_started_too_early() {
    use kubesim_api::csi::pod_volume_path;
    use kubesim_host::cri::{ContainerSpec, SandboxConfig, PAUSE_IMAGE};
    use kubesim_host::csi::{Driver, Published};
    use kubesim_host::Host;
    use kubesim_sim::checkers::{ContainersStartAfterPublish, SingleNodeVolumePublishedOnce};
    let mut api = ApiServer::new();
    let mut rng = <kubesim_apiserver::SimRng as rand_core::SeedableRng>::seed_from_u64(1);
    let actor: Arc<str> = "test".into();
    let mut req = kubesim_apiserver::Request { now: 0, rng: &mut rng, actor: &actor };
    for yaml in [
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n",
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1}\nspec:\n  accessModes: [ReadWriteOnce]\n  capacity: {storage: 1Gi}\n  csi: {driver: disk.csi.kubesim.io, volumeHandle: vol-1}\n",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default}\nspec:\n  volumeName: pv-1\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: default}\nspec:\n  containers: [{name: c, image: nginx}]\n  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]\n",
    ] {
        api.create((*object(yaml)).clone(), &mut req).unwrap();
    }
    let publish = |host: &mut Host, pod_uid: &str| {
        let published = Published { driver: Driver::Disk, volume_id: "vol-1".into(), volume: "dev/vol-1".into(), sub_path: None, read_only: false };
        host.csi.published.insert(pod_volume_path(pod_uid, "pv-1"), published);
    };
    let (mut a, mut b) = (Host::new("a", 0), Host::new("b", 1));
    let mut once = SingleNodeVolumePublishedOnce::default();
    publish(&mut a, "u1");
    once.check_host(&a, &api).unwrap();
    publish(&mut b, "u2");
    assert_eq!(once.check_host(&b, &api).unwrap_err(), "ReadWriteOnce volume pv-1 (vol-1) is published on nodes a and b");
    a.csi.unmount_all();
    once.check_host(&a, &api).unwrap();
    once.check_host(&b, &api).unwrap();

    let pod = api.store().get(("", "pods"), "default", "app").unwrap().as_pod().cloned().unwrap();
    let uid = pod.metadata.uid.clone().unwrap();
    let mut host = Host::new("n", 2);
    let config = SandboxConfig {
        pod_uid: uid.clone(),
        pod_name: "app".into(),
        pod_namespace: "default".into(),
        ip: "10.244.0.9".into(),
        share_pid: false,
        interfaces: Vec::new(),
    };
    let sandbox = host.cri.run_pod_sandbox(&config, "s1".into(), 0).unwrap();
    let spec = ContainerSpec { name: "c".into(), image: PAUSE_IMAGE.into(), argv: vec!["/pause".into()], ..Default::default() };
    host.cri.create_container(&sandbox, spec, "c1".into(), 0).unwrap();
    let mut early = ContainersStartAfterPublish::default();
    early.check_host(&host, &api).unwrap();
    host.cri.start_container("c1", 1).unwrap();
    assert_eq!(early.check_host(&host, &api).unwrap_err(), "container c of pod default/app started on n before its CSI volume pv-1 (d) was published");
    early.check_host(&host, &api).unwrap();
    // A container started after the publish is fine.
    publish(&mut host, &uid);
    let spec = ContainerSpec { name: "c".into(), image: PAUSE_IMAGE.into(), argv: vec!["/pause".into()], ..Default::default() };
    host.cri.create_container(&sandbox, spec, "c2".into(), 2).unwrap();
    host.cri.start_container("c2", 3).unwrap();
    early.check_host(&host, &api).unwrap();
}
