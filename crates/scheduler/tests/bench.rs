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

/// Every scheduler_perf workload at a small size: each measured pod is bound, and each
/// workload's defining behaviour happens (preemptions, churn objects), so a template that
/// drifted from upstream's shape fails here rather than only changing a benchmark figure.
#[test]
fn every_upstream_workload_runs_small() {
    for workload in Workload::ALL {
        let upstream = workload.upstream();
        // A hundredth of upstream's size (preemption cases keep 4 init pods a node).
        let nodes = 50;
        let init = upstream.init_pods * nodes / upstream.nodes;
        let pods = match workload {
            Workload::PodAntiAffinity => 40 - init.min(40),
            Workload::PreemptionBasic => 20,
            _ => 100,
        };
        let r = bench(workload, nodes, init, pods);
        assert_eq!(r.scheduled, pods, "{r}");
        match workload {
            // 4 low-priority pods (900m) fill a 4-CPU node: each 3-CPU pod evicts 3.
            Workload::PreemptionBasic => assert_eq!(r.preempted, 3 * pods as u64, "{r}"),
            Workload::PreemptionAsync => assert!(r.churn_objects > 0 && r.preempted > 0, "{r}"),
            Workload::Unschedulable | Workload::MixedChurn => assert!(r.churn_objects > 0 && r.preempted == 0, "{r}"),
            _ => assert_eq!((r.churn_objects, r.preempted), (0, 0), "{r}"),
        }
        assert_eq!(Workload::parse(workload.name()), Some(workload));
    }
}

/// Upstream's v1.34 thresholds (`test/integration/scheduler_perf/{misc,affinity,topology_spreading}/performance-config.yaml`)
/// as kubesim records them, so a change to the table is a visible change.
#[test]
fn upstream_thresholds_are_v1_34s() {
    let table: Vec<(&str, Option<u32>)> = Workload::ALL.iter().map(|w| (w.name(), w.upstream().threshold)).collect();
    assert_eq!(
        table,
        [
            ("SchedulingBasic", Some(270)),
            ("SchedulingPodAntiAffinity", Some(60)),
            ("SchedulingPodAffinity", Some(35)),
            ("SchedulingPreferredPodAffinity", Some(90)),
            ("SchedulingPreferredPodAntiAffinity", Some(90)),
            ("SchedulingNodeAffinity", Some(220)),
            ("TopologySpreading", Some(85)),
            ("PreferredTopologySpreading", Some(125)),
            ("PreemptionBasic", None),
            ("PreemptionAsync", Some(160)),
            ("Unschedulable", Some(170)),
            ("SchedulingWithMixedChurn", Some(265)),
        ]
    );
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
fn every_workload_at_upstream_size() {
    for workload in Workload::ALL {
        println!("{}", kubesim_scheduler::bench::bench_upstream(workload));
    }
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
