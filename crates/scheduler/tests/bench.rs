//! Throughput runs (ignored by default; run with
//! `cargo test --release -p kubesim-scheduler --test bench -- --ignored --nocapture`).

use kubesim_scheduler::bench::{bench, bench_scheduling_basic, Workload};

#[test]
fn small_basic_run_schedules_everything() {
    let r = bench_scheduling_basic(100, 100, 500);
    assert_eq!(r.scheduled, 500, "{r}");
    let r = bench(Workload::PodAntiAffinity, 50, 10, 30);
    assert_eq!(r.scheduled, 30, "{r}");
    let r = bench(Workload::TopologySpreading, 30, 30, 60);
    assert_eq!(r.scheduled, 60, "{r}");
}

#[test]
#[ignore]
fn scheduling_basic_5000_nodes() {
    for (nodes, init, pods) in [(500, 500, 1000), (5000, 1000, 10000), (5000, 5000, 50000)] {
        println!("{}", bench_scheduling_basic(nodes, init, pods));
    }
}

#[test]
#[ignore]
fn anti_affinity_5000_nodes() {
    println!("{}", bench(Workload::PodAntiAffinity, 5000, 1000, 1000));
}

#[test]
#[ignore]
fn topology_spreading_5000_nodes() {
    println!("{}", bench(Workload::TopologySpreading, 5000, 1000, 5000));
}

/// The scheduler as the simulation runs it by default: events and history on.
#[test]
#[ignore]
fn full_featured_1000_nodes() {
    use kubesim_scheduler::bench::bench_with;
    use kubesim_scheduler::Scheduler;
    println!("all extras: {}", bench_with(Workload::Basic, 1000, 0, 5000, Scheduler::new()));
    println!("no events:  {}", bench_with(Workload::Basic, 1000, 0, 5000, Scheduler::new().with_events(false)));
}
