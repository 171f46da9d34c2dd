//! The simulation inside headless Chromium: the seed Pod reaches Running, and the history is
//! byte-identical to the native one (both match the golden hash the native test checks).
#![cfg(target_arch = "wasm32")]

use kubesim_sim::run::{run, trace_hash, RunOptions};
use kubesim_sim::scenario::InputFile;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const NGINX_POD: &str = include_str!("../../../examples/nginx-pod.yaml");

fn run_nginx(seed: u64) -> kubesim_sim::RunOutcome {
    run(RunOptions { files: vec![InputFile { name: "nginx-pod.yaml".into(), text: NGINX_POD.into() }], seed, ..Default::default() })
}

#[wasm_bindgen_test]
fn the_seed_pod_reaches_running_in_wasm() {
    let outcome = run_nginx(1);
    let pod = outcome.world.api().lookup(("", "pods"), "default", "nginx").expect("pod exists");
    let status = pod.as_pod().and_then(|p| p.status.as_ref()).expect("status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
}

#[wasm_bindgen_test]
fn the_wasm_trace_is_identical_to_the_native_trace() {
    let outcome = run_nginx(1);
    let golden = include_str!("golden/nginx-seed1.trace.fnv").trim();
    assert_eq!(trace_hash(outcome.world.trace()), golden);
    let again = run_nginx(1);
    assert_eq!(trace_hash(again.world.trace()), golden);
}

// A swarm seed (random cluster, workload, actions and faults, heal, liveness) in the browser:
// its history hashes as the native run's (the golden the native swarm test checks).
#[wasm_bindgen_test]
fn a_swarm_seed_runs_as_natively() {
    let outcome = kubesim_sim::swarm::execute(&kubesim_sim::swarm::plan(3, 1), None);
    assert_eq!(outcome.signature(), None, "{:?} {:?}", outcome.violations, outcome.liveness);
    assert_eq!(outcome.hash, include_str!("golden/swarm-seed3-1min.fnv").trim());
}
