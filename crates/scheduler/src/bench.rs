//! Benchmarks after upstream's scheduler_perf workloads (test/integration/scheduler_perf):
//! SchedulingBasic, SchedulingPodAntiAffinity and TopologySpreading shapes, run against an
//! in-memory API server through [`crate::harness::Harness`]. Throughput counts only the
//! measured pods, from the moment they exist in the store to the moment the last one is bound
//! (watch handling, queueing, scheduling and the binding API calls included; pod creation
//! excluded, as scheduler_perf's throughput collector does).
//!
//! Figures (release build, one thread, on a shared 2-core machine under load ~4, 2026-11-29;
//! `cargo test --release -p kubesim-scheduler --test bench -- --ignored --nocapture --test-threads=1`):
//!
//! | workload | nodes | init pods | pods | pods/s |
//! |---|---|---|---|---|
//! | SchedulingBasic | 500 | 500 | 1,000 | 15,000–25,000 |
//! | SchedulingBasic | 5,000 | 1,000 | 10,000 | 10,000–14,500 |
//! | SchedulingBasic | 5,000 | 5,000 | 50,000 | 11,300–12,700 (6,800 at the worst machine load seen) |
//! | SchedulingPodAntiAffinity | 5,000 | 1,000 | 1,000 | 610–700 |
//! | TopologySpreading (zone, DoNotSchedule) | 5,000 | 1,000 | 5,000 | ~7,000 |
//! | Basic with annotations + events + history (measured before the annotations were removed) | 1,000 | 0 | 5,000 | ~1,340 |
//! | Basic with history only | 1,000 | 0 | 5,000 | 8,700–11,000 |
//!
//! Upstream's scheduler_perf thresholds for the real kube-scheduler are 680 pods/s
//! (5000Nodes_10000Pods) and 810 pods/s (5000Nodes_50000Pods) for SchedulingBasic.

use crate::harness::{make_node, make_pod, Harness};
use crate::scheduler::Scheduler;
use k8s_openapi::api::core::v1::{Affinity, Pod, PodAffinityTerm, PodAntiAffinity, TopologySpreadConstraint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kubesim_api::Object;

/// The workload shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// SchedulingBasic: plain pods (cpu 100m, memory 500Mi).
    Basic,
    /// SchedulingPodAntiAffinity: pods with required hostname anti-affinity to each other.
    PodAntiAffinity,
    /// TopologySpreading: pods with a zone spread constraint (maxSkew 5, DoNotSchedule) over 3 zones.
    TopologySpreading,
}

/// One benchmark run's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    /// Workload.
    pub workload: Workload,
    /// Nodes.
    pub nodes: usize,
    /// Pods scheduled before measuring.
    pub init_pods: usize,
    /// Measured pods.
    pub pods: usize,
    /// Measured pods that got bound.
    pub scheduled: usize,
    /// Wall-clock seconds for the measured pods (None on wasm, where no clock is read).
    pub wall_seconds: Option<f64>,
    /// Measured pods per wall-clock second.
    pub pods_per_second: Option<f64>,
    /// Virtual milliseconds the measured pods took in the simulation.
    pub virtual_ms: u64,
}

impl std::fmt::Display for BenchResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} {} nodes, {} init pods, {} pods: {} scheduled", self.workload, self.nodes, self.init_pods, self.pods, self.scheduled)?;
        if let (Some(s), Some(r)) = (self.wall_seconds, self.pods_per_second) {
            write!(f, " in {s:.3} s = {r:.0} pods/s")?;
        }
        write!(f, " (virtual {} ms)", self.virtual_ms)
    }
}

fn pod_for(workload: Workload, name: &str) -> Pod {
    let mut pod = make_pod(name, &[("cpu", "100m"), ("memory", "500Mi")]);
    match workload {
        Workload::Basic => {}
        Workload::PodAntiAffinity => {
            pod.metadata.labels = Some([("color".to_string(), "green".to_string())].into());
            pod.spec.as_mut().expect("spec").affinity = Some(Affinity {
                pod_anti_affinity: Some(PodAntiAffinity {
                    required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                        label_selector: Some(LabelSelector { match_labels: Some([("color".to_string(), "green".to_string())].into()), ..Default::default() }),
                        topology_key: "kubernetes.io/hostname".into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        Workload::TopologySpreading => {
            pod.metadata.labels = Some([("color".to_string(), "blue".to_string())].into());
            pod.spec.as_mut().expect("spec").topology_spread_constraints = Some(vec![TopologySpreadConstraint {
                max_skew: 5,
                topology_key: "topology.kubernetes.io/zone".into(),
                when_unsatisfiable: "DoNotSchedule".into(),
                label_selector: Some(LabelSelector { match_labels: Some([("color".to_string(), "blue".to_string())].into()), ..Default::default() }),
                ..Default::default()
            }]);
        }
    }
    pod
}

/// Runs a workload with a scheduler that records no events or history (as
/// upstream's scheduler_perf measures the scheduler without the simulator's extras).
pub fn bench(workload: Workload, nodes: usize, init_pods: usize, pods: usize) -> BenchResult {
    bench_with(workload, nodes, init_pods, pods, Scheduler::new().with_events(false).with_history(false))
}

/// Runs a workload with the given scheduler.
pub fn bench_with(workload: Workload, nodes: usize, init_pods: usize, pods: usize, scheduler: Scheduler) -> BenchResult {
    let mut h = Harness::with_history_capacity(scheduler, 10_000);
    let zones = ["moon-1", "moon-2", "moon-3"];
    for i in 0..nodes {
        let zone = zones[i % zones.len()];
        h.create(make_node(&format!("node-{i}"), &[("cpu", "4"), ("memory", "32Gi"), ("pods", "110")], &[("topology.kubernetes.io/zone", zone)], vec![]))
            .expect("node");
    }
    for i in 0..init_pods {
        h.create(Object::Pod(Box::new(pod_for(workload, &format!("init-{i}"))))).expect("pod");
    }
    h.run_until_idle(u64::MAX);
    for i in 0..pods {
        h.create(Object::Pod(Box::new(pod_for(workload, &format!("pod-{i}"))))).expect("pod");
    }
    let virtual_start = h.now();
    let before = h.scheduler().stats().scheduled;
    #[cfg(not(target_arch = "wasm32"))]
    let started = std::time::Instant::now();
    h.run_until_idle(u64::MAX);
    #[cfg(not(target_arch = "wasm32"))]
    let wall_seconds = Some(started.elapsed().as_secs_f64());
    #[cfg(target_arch = "wasm32")]
    let wall_seconds: Option<f64> = None;
    let scheduled = (h.scheduler().stats().scheduled - before) as usize;
    BenchResult {
        workload,
        nodes,
        init_pods,
        pods,
        scheduled,
        wall_seconds,
        pods_per_second: wall_seconds.map(|s| scheduled as f64 / s.max(1e-9)),
        virtual_ms: h.now() - virtual_start,
    }
}

/// SchedulingBasic: `nodes` nodes (cpu 4, memory 32Gi, pods 110), `init_pods` pods scheduled
/// first, then `pods` measured pods (one container, requests = limits = cpu 100m, memory 500Mi).
pub fn bench_scheduling_basic(nodes: usize, init_pods: usize, pods: usize) -> BenchResult {
    bench(Workload::Basic, nodes, init_pods, pods)
}
