//! SchedulingBasic inside headless Chromium, for comparison with the native figure (a
//! benchmark, not an assertion on time). Run with:
//! `CHROMEDRIVER=/usr/bin/chromedriver cargo test --release --target wasm32-unknown-unknown -p kubesim-scheduler --test wasm_bench`
#![cfg(target_arch = "wasm32")]

use kubesim_scheduler::bench::{bench, Workload};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn scheduling_basic_in_the_browser() {
    let (nodes, init_pods, pods) = (5_000, 5_000, 50_000);
    let started = js_sys::Date::now();
    let result = bench(Workload::Basic, nodes, init_pods, pods);
    let seconds = (js_sys::Date::now() - started) / 1000.0;
    assert_eq!(result.scheduled, pods, "every measured pod is bound");
    console_log!("{{\"workload\": \"SchedulingBasic\", \"target\": \"wasm32 (headless Chromium)\", \"nodes\": {nodes}, \"init_pods\": {init_pods}, \"pods\": {pods}, \"seconds_including_setup\": {seconds:.3}}}");
}
