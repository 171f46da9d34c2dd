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
        assert!(report.passed(), "seed {seed}: {:?}\n{:?}\n{}", report.violations, report.liveness, report.final_state);
        assert!(report.revision > 100, "seed {seed} did work");
    }
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
