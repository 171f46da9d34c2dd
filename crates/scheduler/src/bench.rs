//! Benchmarks after upstream's scheduler_perf workloads (`test/integration/scheduler_perf`,
//! v1.34: `misc/`, `affinity/`, `topology_spreading/performance-config.yaml`), run against an
//! in-memory API server through [`crate::harness::Harness`]. Throughput counts only the
//! measured pods, from the moment they exist in the store to the moment the last one is bound
//! (watch handling, queueing, scheduling, preemption and the binding API calls included; pod
//! creation excluded, as scheduler_perf's throughput collector does).
//!
//! Each [`Workload`] carries upstream's shape ([`Workload::upstream`]: nodes, init pods,
//! measured pods and the v1.34 `threshold:` in pods/s) and its pod templates (`templates/`:
//! pod-default 100m/500Mi, pod-low-priority 900m/500Mi with grace 0, pod-high-priority priority
//! 10 3000m/500Mi, pod-high-priority-large-cpu priority 10 9 CPU; nodes cpu 4, memory 32Gi,
//! pods 110). `kubesim bench scheduler --all` runs every workload at upstream's size and prints
//! kubesim's figure beside the threshold.
//!
//! Deliberate differences, documented here and in the README:
//! - Priority 10 comes from a PriorityClass `high` (value 10) named by the pod, because the
//!   Priority admission plugin (which kubesim runs, as a real cluster does) refuses a bare
//!   `spec.priority`; the scheduler sees the same priority.
//! - Churn ops (`churn` with `intervalMilliseconds`) tick on the virtual clock while the
//!   measured pods are scheduled, and at least as many churn objects are created as upstream's
//!   run sees at its threshold rate (measurePods / threshold × ticks per second): a faster
//!   scheduler is not let off its churn.

use crate::harness::{make_node, make_pod, Harness};
use crate::scheduler::Scheduler;
use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodAffinity, PodAffinityTerm, PodAntiAffinity, Service, ServicePort,
    ServiceSpec, TopologySpreadConstraint, WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubesim_api::Object;

/// The workload shape: one of upstream's scheduler_perf test cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// SchedulingBasic: pod-default pods (cpu 100m, memory 500Mi).
    Basic,
    /// SchedulingPodAntiAffinity: required hostname anti-affinity to each other (color=green).
    PodAntiAffinity,
    /// SchedulingPodAffinity: required zone affinity to each other (color=blue), every node in zone1.
    PodAffinity,
    /// SchedulingPreferredPodAffinity: preferred hostname affinity (color=red, weight 1).
    PreferredPodAffinity,
    /// SchedulingPreferredPodAntiAffinity: preferred hostname anti-affinity (color=yellow, weight 1).
    PreferredPodAntiAffinity,
    /// SchedulingNodeAffinity: required node affinity zone In [zone1, zone2], every node in zone1.
    NodeAffinity,
    /// TopologySpreading: measured pods spread over 3 zones (maxSkew 5, DoNotSchedule).
    TopologySpreading,
    /// PreferredTopologySpreading: the same with ScheduleAnyway.
    PreferredTopologySpreading,
    /// PreemptionBasic: 4 low-priority pods (900m) a node, then high-priority pods (3 CPU) that
    /// each preempt 3 of them.
    PreemptionBasic,
    /// PreemptionAsync: pod-default pods measured while a high-priority preemptor arrives
    /// every 200 ms over nodes full of low-priority pods.
    PreemptionAsync,
    /// Unschedulable: pod-default pods measured while a 9-CPU priority-10 pod that never fits
    /// arrives every 200 ms.
    Unschedulable,
    /// SchedulingWithMixedChurn: pod-default pods measured while a node (pods: 0), a 9-CPU pod
    /// and a Service are created and deleted in turn every second.
    MixedChurn,
}

/// Upstream's performance workload for a test case (v1.34 performance-config.yaml).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// The workload's name in the config.
    pub workload: &'static str,
    /// initNodes.
    pub nodes: usize,
    /// initPods.
    pub init_pods: usize,
    /// measurePods.
    pub pods: usize,
    /// `threshold:` in pods/s (None: the workload carries none in v1.34).
    pub threshold: Option<u32>,
}

impl Workload {
    /// Every workload, in upstream's file order.
    pub const ALL: [Workload; 12] = [
        Workload::Basic,
        Workload::PodAntiAffinity,
        Workload::PodAffinity,
        Workload::PreferredPodAffinity,
        Workload::PreferredPodAntiAffinity,
        Workload::NodeAffinity,
        Workload::TopologySpreading,
        Workload::PreferredTopologySpreading,
        Workload::PreemptionBasic,
        Workload::PreemptionAsync,
        Workload::Unschedulable,
        Workload::MixedChurn,
    ];

    /// Upstream's testCase name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Basic => "SchedulingBasic",
            Workload::PodAntiAffinity => "SchedulingPodAntiAffinity",
            Workload::PodAffinity => "SchedulingPodAffinity",
            Workload::PreferredPodAffinity => "SchedulingPreferredPodAffinity",
            Workload::PreferredPodAntiAffinity => "SchedulingPreferredPodAntiAffinity",
            Workload::NodeAffinity => "SchedulingNodeAffinity",
            Workload::TopologySpreading => "TopologySpreading",
            Workload::PreferredTopologySpreading => "PreferredTopologySpreading",
            Workload::PreemptionBasic => "PreemptionBasic",
            Workload::PreemptionAsync => "PreemptionAsync",
            Workload::Unschedulable => "Unschedulable",
            Workload::MixedChurn => "SchedulingWithMixedChurn",
        }
    }

    /// The workload named by upstream's testCase name.
    pub fn parse(name: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.name().eq_ignore_ascii_case(name))
    }

    /// Upstream's thresholded workload for this test case (v1.34). Thresholds are those of the
    /// QueueingHints-enabled variant where the two differ (Unschedulable: 140 with the gate off,
    /// 170 on; v1.34 turns it on by default). PreemptionBasic lost its threshold in v1.33
    /// (kubernetes#131079); its 1000Nodes workload is listed.
    pub fn upstream(self) -> Upstream {
        let u = |workload, nodes, init_pods, pods, threshold| Upstream { workload, nodes, init_pods, pods, threshold };
        match self {
            Workload::Basic => u("5000Nodes_10000Pods", 5_000, 1_000, 10_000, Some(270)),
            Workload::PodAntiAffinity => u("5000Nodes_2000Pods", 5_000, 1_000, 2_000, Some(60)),
            Workload::PodAffinity => u("5000Nodes_5000Pods", 5_000, 5_000, 5_000, Some(35)),
            Workload::PreferredPodAffinity => u("5000Nodes_5000Pods", 5_000, 5_000, 5_000, Some(90)),
            Workload::PreferredPodAntiAffinity => u("5000Nodes_5000Pods", 5_000, 5_000, 5_000, Some(90)),
            Workload::NodeAffinity => u("5000Nodes_10000Pods", 5_000, 5_000, 10_000, Some(220)),
            Workload::TopologySpreading => u("5000Nodes_5000Pods", 5_000, 5_000, 5_000, Some(85)),
            Workload::PreferredTopologySpreading => u("5000Nodes_5000Pods", 5_000, 5_000, 5_000, Some(125)),
            Workload::PreemptionBasic => u("1000Nodes", 1_000, 4_000, 1_000, None),
            Workload::PreemptionAsync => u("5000Nodes", 5_000, 20_000, 5_000, Some(160)),
            Workload::Unschedulable => u("5kNodes/100Init/10kPods", 5_000, 100, 10_000, Some(170)),
            Workload::MixedChurn => u("5000Nodes_10000Pods", 5_000, 0, 10_000, Some(265)),
        }
    }

    /// The churn op's tick in milliseconds, if the workload has one.
    fn churn_interval_ms(self) -> Option<u64> {
        match self {
            Workload::PreemptionAsync | Workload::Unschedulable => Some(200),
            Workload::MixedChurn => Some(1_000),
            _ => None,
        }
    }

    /// Node labels for node `i` (nodeTemplatePath / labelNodePrepareStrategy).
    fn node_zone(self, i: usize) -> Option<&'static str> {
        match self {
            Workload::PodAffinity | Workload::NodeAffinity => Some("zone1"),
            Workload::TopologySpreading | Workload::PreferredTopologySpreading => Some(["moon-1", "moon-2", "moon-3"][i % 3]),
            _ => None,
        }
    }
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
    /// Churn objects created while measuring (pods, nodes and Services).
    pub churn_objects: usize,
    /// Pods preempted while measuring.
    pub preempted: u64,
}

impl std::fmt::Display for BenchResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} nodes, {} init pods, {} pods: {} scheduled", self.workload.name(), self.nodes, self.init_pods, self.pods, self.scheduled)?;
        if let (Some(s), Some(r)) = (self.wall_seconds, self.pods_per_second) {
            write!(f, " in {s:.3} s = {r:.0} pods/s")?;
        }
        if self.churn_objects > 0 || self.preempted > 0 {
            write!(f, " ({} churn objects, {} preempted)", self.churn_objects, self.preempted)?;
        }
        write!(f, " (virtual {} ms)", self.virtual_ms)
    }
}

/// A pod's role in a workload: which template it is made from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Init,
    Measured,
    Churn,
}

fn selector(key: &str, value: &str) -> Option<LabelSelector> {
    Some(LabelSelector { match_labels: Some([(key.to_string(), value.to_string())].into()), ..Default::default() })
}

fn affinity_term(color: &str, topology_key: &str) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: selector("color", color),
        topology_key: topology_key.into(),
        namespaces: Some(vec!["sched-1".into(), "sched-0".into()]),
        ..Default::default()
    }
}

/// upstream's `templates/pod-default.yaml`, `pod-low-priority.yaml`, `pod-high-priority.yaml`,
/// `pod-high-priority-large-cpu.yaml`, `pod-with-*.yaml` for the workload and role.
fn pod_for(workload: Workload, role: Role, namespace: &str, name: &str) -> Pod {
    let high = |pod: &mut Pod| pod.spec.as_mut().expect("spec").priority_class_name = Some("high".into());
    let mut pod = match (workload, role) {
        (Workload::PreemptionBasic | Workload::PreemptionAsync, Role::Init) => {
            let mut pod = make_pod(name, &[("cpu", "900m"), ("memory", "500Mi")]);
            pod.spec.as_mut().expect("spec").termination_grace_period_seconds = Some(0);
            pod
        }
        (Workload::PreemptionBasic, Role::Measured) | (Workload::PreemptionAsync, Role::Churn) => {
            let mut pod = make_pod(name, &[("cpu", "3000m"), ("memory", "500Mi")]);
            high(&mut pod);
            pod
        }
        (_, Role::Churn) => {
            // Requests only (no limits): 9 CPU never fits a 4-CPU node.
            let mut pod = make_pod(name, &[]);
            let c = &mut pod.spec.as_mut().expect("spec").containers[0];
            c.resources = Some(k8s_openapi::api::core::v1::ResourceRequirements {
                requests: Some(
                    [("cpu", "9"), ("memory", "500Mi")]
                        .iter()
                        .map(|(k, v)| (k.to_string(), k8s_openapi::apimachinery::pkg::api::resource::Quantity(v.to_string())))
                        .collect(),
                ),
                ..Default::default()
            });
            high(&mut pod);
            pod
        }
        _ => make_pod(name, &[("cpu", "100m"), ("memory", "500Mi")]),
    };
    pod.metadata.namespace = Some(namespace.into());
    let measured_shape = role == Role::Measured || !matches!(workload, Workload::TopologySpreading | Workload::PreferredTopologySpreading);
    if role == Role::Churn || !measured_shape {
        return pod;
    }
    let label = |pod: &mut Pod, color: &str| pod.metadata.labels = Some([("color".to_string(), color.to_string())].into());
    let spec = pod.spec.as_mut().expect("spec");
    match workload {
        Workload::PodAntiAffinity => {
            spec.affinity = Some(Affinity {
                pod_anti_affinity: Some(PodAntiAffinity {
                    required_during_scheduling_ignored_during_execution: Some(vec![affinity_term("green", "kubernetes.io/hostname")]),
                    ..Default::default()
                }),
                ..Default::default()
            });
            label(&mut pod, "green");
        }
        Workload::PodAffinity => {
            spec.affinity = Some(Affinity {
                pod_affinity: Some(PodAffinity {
                    required_during_scheduling_ignored_during_execution: Some(vec![affinity_term("blue", "topology.kubernetes.io/zone")]),
                    ..Default::default()
                }),
                ..Default::default()
            });
            label(&mut pod, "blue");
        }
        Workload::PreferredPodAffinity => {
            spec.affinity = Some(Affinity {
                pod_affinity: Some(PodAffinity {
                    preferred_during_scheduling_ignored_during_execution: Some(vec![WeightedPodAffinityTerm {
                        weight: 1,
                        pod_affinity_term: affinity_term("red", "kubernetes.io/hostname"),
                    }]),
                    ..Default::default()
                }),
                ..Default::default()
            });
            label(&mut pod, "red");
        }
        Workload::PreferredPodAntiAffinity => {
            spec.affinity = Some(Affinity {
                pod_anti_affinity: Some(PodAntiAffinity {
                    preferred_during_scheduling_ignored_during_execution: Some(vec![WeightedPodAffinityTerm {
                        weight: 1,
                        pod_affinity_term: affinity_term("yellow", "kubernetes.io/hostname"),
                    }]),
                    ..Default::default()
                }),
                ..Default::default()
            });
            label(&mut pod, "yellow");
        }
        Workload::NodeAffinity => {
            spec.affinity = Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: Some(vec![NodeSelectorRequirement {
                                key: "topology.kubernetes.io/zone".into(),
                                operator: "In".into(),
                                values: Some(vec!["zone1".into(), "zone2".into()]),
                            }]),
                            ..Default::default()
                        }],
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        Workload::TopologySpreading | Workload::PreferredTopologySpreading => {
            let when = if workload == Workload::TopologySpreading { "DoNotSchedule" } else { "ScheduleAnyway" };
            spec.topology_spread_constraints = Some(vec![TopologySpreadConstraint {
                max_skew: 5,
                topology_key: "topology.kubernetes.io/zone".into(),
                when_unsatisfiable: when.into(),
                label_selector: selector("color", "blue"),
                ..Default::default()
            }]);
            label(&mut pod, "blue");
        }
        _ => {}
    }
    pod
}

/// Runs a workload with a scheduler that records no events or history (as
/// upstream's scheduler_perf measures the scheduler without the simulator's extras).
pub fn bench(workload: Workload, nodes: usize, init_pods: usize, pods: usize) -> BenchResult {
    bench_with(workload, nodes, init_pods, pods, Scheduler::new().with_events(false).with_history(false))
}

/// Runs a workload at upstream's size ([`Workload::upstream`]).
pub fn bench_upstream(workload: Workload) -> BenchResult {
    let u = workload.upstream();
    bench(workload, u.nodes, u.init_pods, u.pods)
}

fn namespace(name: &str) -> Object {
    Object::Namespace(Box::new(k8s_openapi::api::core::v1::Namespace {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        ..Default::default()
    }))
}

/// The churn op's objects (`churn` with mode create, or recreate with number 1).
struct Churn {
    workload: Workload,
    created: usize,
    /// Recreate mode: whether the objects exist now.
    present: bool,
}

impl Churn {
    fn tick(&mut self, h: &mut Harness) {
        match self.workload {
            Workload::PreemptionAsync | Workload::Unschedulable => {
                let name = format!("churn-{}", self.created);
                h.create(Object::Pod(Box::new(pod_for(self.workload, Role::Churn, "churn", &name)))).expect("churn pod");
                self.created += 1;
            }
            Workload::MixedChurn if !self.present => {
                h.create(make_node("node-churn", &[("cpu", "4"), ("memory", "32Gi"), ("pods", "0")], &[], vec![])).expect("churn node");
                h.create(Object::Pod(Box::new(pod_for(self.workload, Role::Churn, "churn", "pod-h")))).expect("churn pod");
                h.create(Object::Service(Box::new(Service {
                    metadata: ObjectMeta { name: Some("service-churn".into()), namespace: Some("churn".into()), ..Default::default() },
                    spec: Some(ServiceSpec {
                        selector: Some([("app".to_string(), "foo".to_string())].into()),
                        ports: Some(vec![ServicePort { port: 8080, protocol: Some("TCP".into()), ..Default::default() }]),
                        ..Default::default()
                    }),
                    ..Default::default()
                })))
                .expect("churn service");
                self.created += 3;
                self.present = true;
            }
            Workload::MixedChurn => {
                h.delete_object("v1", "Node", "", "node-churn");
                h.delete_pod("churn", "pod-h");
                h.delete_object("v1", "Service", "churn", "service-churn");
                self.present = false;
            }
            _ => {}
        }
    }
}

/// Pods of `namespace` bound to a node.
fn bound_in(h: &Harness, namespace: &str) -> usize {
    h.api().store().list(("", "pods"), Some(namespace)).filter(|p| p.as_pod().and_then(|p| p.spec.as_ref()).is_some_and(|s| s.node_name.is_some())).count()
}

/// Runs a workload with the given scheduler.
pub fn bench_with(workload: Workload, nodes: usize, init_pods: usize, pods: usize, scheduler: Scheduler) -> BenchResult {
    let mut h = Harness::with_history_capacity(scheduler, 10_000);
    for ns in ["sched-0", "sched-1", "churn"] {
        h.create(namespace(ns)).expect("namespace");
    }
    let info = kubesim_api::kind_info("scheduling.k8s.io/v1", "PriorityClass").expect("priorityclasses");
    let high = serde_json::json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10});
    h.create(Object::from_json(info, high).expect("a valid PriorityClass")).expect("priority class");
    for i in 0..nodes {
        let labels: Vec<(&str, &str)> = workload.node_zone(i).map(|z| ("topology.kubernetes.io/zone", z)).into_iter().collect();
        h.create(make_node(&format!("node-{i}"), &[("cpu", "4"), ("memory", "32Gi"), ("pods", "110")], &labels, vec![])).expect("node");
    }
    for i in 0..init_pods {
        h.create(Object::Pod(Box::new(pod_for(workload, Role::Init, "sched-0", &format!("init-{i}"))))).expect("pod");
    }
    h.run_until_idle(u64::MAX);
    for i in 0..pods {
        h.create(Object::Pod(Box::new(pod_for(workload, Role::Measured, "sched-1", &format!("pod-{i}"))))).expect("pod");
    }
    let virtual_start = h.now();
    let before = h.scheduler().stats();
    let mut churn = Churn { workload, created: 0, present: false };
    // At least the churn upstream's run sees at its threshold rate.
    let min_ticks = match (workload.churn_interval_ms(), workload.upstream().threshold) {
        (Some(interval), Some(threshold)) => (pods as u64 * 1_000).div_ceil(threshold as u64 * interval),
        _ => 0,
    };
    #[cfg(not(target_arch = "wasm32"))]
    let started = std::time::Instant::now();
    match workload.churn_interval_ms() {
        None => h.run_until_idle(u64::MAX),
        Some(interval) => {
            let mut ticks = 0;
            // Bound measured pods: every binding since the start less the churn pods bound
            // (preemptors), which are few, so the check costs little of the measured time.
            let measured_bound = |h: &Harness| (h.scheduler().stats().scheduled - before.scheduled).saturating_sub(bound_in(h, "churn") as u64) as usize;
            let mut bound = 0;
            // The measured pods are bound at the latest one virtual hour after their creation.
            while (bound < pods || ticks < min_ticks) && h.now() < virtual_start + 3_600_000 {
                churn.tick(&mut h);
                ticks += 1;
                h.advance_to(h.now() + interval);
                if bound < pods {
                    bound = measured_bound(&h);
                }
            }
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    let wall_seconds = Some(started.elapsed().as_secs_f64());
    #[cfg(target_arch = "wasm32")]
    let wall_seconds: Option<f64> = None;
    let after = h.scheduler().stats();
    let scheduled = bound_in(&h, "sched-1");
    BenchResult {
        workload,
        nodes,
        init_pods,
        pods,
        scheduled,
        wall_seconds,
        pods_per_second: wall_seconds.map(|s| scheduled as f64 / s.max(1e-9)),
        virtual_ms: h.now() - virtual_start,
        churn_objects: churn.created,
        preempted: after.preempted - before.preempted,
    }
}

/// SchedulingBasic: `nodes` nodes (cpu 4, memory 32Gi, pods 110), `init_pods` pods scheduled
/// first, then `pods` measured pods (one container, requests = limits = cpu 100m, memory 500Mi).
pub fn bench_scheduling_basic(nodes: usize, init_pods: usize, pods: usize) -> BenchResult {
    bench(Workload::Basic, nodes, init_pods, pods)
}
