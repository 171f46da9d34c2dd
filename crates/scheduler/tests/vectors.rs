//! Upstream unit-test vectors (reference sections 1–2), table-driven. Each test names the
//! upstream test it mirrors.

use k8s_openapi::api::core::v1::{Container, ContainerImage, Node, NodeSpec, NodeStatus, Pod, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::Object;
use kubesim_scheduler::cache::{Cache, PodInfo};
use kubesim_scheduler::framework::{score_all_nodes, ClusterView, Listers, Plugin};
use kubesim_scheduler::plugins::helper::{broken_linear, default_normalize_score, ShapePoint};
use kubesim_scheduler::plugins::imagelocality::ImageLocality;
use kubesim_scheduler::plugins::noderesources::{validate_resources, BalancedAllocation, Fit, ResourceSpec, ScoringStrategy};
use kubesim_scheduler::queue::SchedulingQueue;
use kubesim_scheduler::scheduler::num_feasible_nodes_to_find;
use std::collections::BTreeMap;
use std::sync::Arc;

const MB: i64 = 1024 * 1024;

fn list(pairs: &[(&str, String)]) -> BTreeMap<String, Quantity> {
    pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.clone()))).collect()
}

/// A container request list: cpu in millicores, memory in bytes, extra scalar resources.
fn req(cpu: i64, mem: i64, extra: &[(&str, i64)]) -> Vec<(&'static str, String)> {
    let mut v: Vec<(&'static str, String)> = vec![("cpu", format!("{cpu}m")), ("memory", mem.to_string())];
    for (k, q) in extra {
        v.push((Box::leak(k.to_string().into_boxed_str()), q.to_string()));
    }
    v
}

fn pod_with(name: &str, containers: Vec<Vec<(&'static str, String)>>) -> Pod {
    Pod {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(PodSpec {
            containers: containers
                .into_iter()
                .enumerate()
                .map(|(i, r)| Container {
                    name: format!("c{i}"),
                    resources: Some(ResourceRequirements { requests: Some(list(&r)), ..Default::default() }),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn pod_info(pod: Pod) -> Arc<PodInfo> {
    Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(pod)))))
}

fn node(name: &str, cpu: i64, mem: i64, extra: &[(&str, i64)]) -> Node {
    let mut r = vec![("cpu", format!("{cpu}m")), ("memory", mem.to_string()), ("pods", "110".to_string())];
    for (k, q) in extra {
        r.push((Box::leak(k.to_string().into_boxed_str()), q.to_string()));
    }
    Node {
        metadata: ObjectMeta { name: Some(name.into()), labels: Some([("kubernetes.io/hostname".to_string(), name.to_string())].into()), ..Default::default() },
        spec: Some(NodeSpec::default()),
        status: Some(NodeStatus { allocatable: Some(list(&r)), capacity: Some(list(&r)), ..Default::default() }),
    }
}

fn cache(nodes: Vec<(Node, Vec<Pod>)>) -> Cache {
    let mut c = Cache::default();
    for (n, pods) in nodes {
        let name = n.metadata.name.clone().unwrap();
        c.upsert_node(Arc::new(Object::Node(Box::new(n))));
        for (i, mut p) in pods.into_iter().enumerate() {
            p.metadata.name = Some(format!("{name}-existing-{i}"));
            c.upsert_pod(pod_info(p), &name);
        }
    }
    c
}

fn scores(plugin: &dyn Plugin, pod: Pod, c: &Cache) -> Option<Vec<i64>> {
    let listers = Listers::default();
    let view = ClusterView { cache: c, listers: &listers };
    score_all_nodes(plugin, &pod_info(pod), &view)
}

fn res(pairs: &[(&str, i64)]) -> Vec<ResourceSpec> {
    pairs.iter().map(|(n, w)| ResourceSpec { name: n.to_string(), weight: *w }).collect()
}

// Mirrors pkg/scheduler/framework/plugins/helper/normalize_score_test.go TestDefaultNormalizeScore
#[test]
fn default_normalize_score_vectors() {
    let cases: &[(bool, [i64; 4], [i64; 4])] = &[
        (false, [1, 2, 3, 4], [25, 50, 75, 100]),
        (true, [1, 2, 3, 4], [75, 50, 25, 0]),
        (false, [1000, 10, 20, 30], [100, 1, 2, 3]),
        (true, [1000, 10, 20, 30], [0, 99, 98, 97]),
        (false, [1, 1, 1, 1], [100, 100, 100, 100]),
        (false, [1000, 1, 1, 1], [100, 0, 0, 0]),
        (true, [0, 1, 1, 1], [100, 0, 0, 0]),
    ];
    for (reverse, input, want) in cases {
        let mut s = input.to_vec();
        default_normalize_score(100, *reverse, &mut s);
        assert_eq!(s, want.to_vec(), "reverse={reverse} input={input:?}");
    }
    let mut zeros = vec![0, 0];
    default_normalize_score(100, true, &mut zeros);
    assert_eq!(zeros, vec![100, 100]);
}

type Case = (&'static str, Pod, Vec<(Node, Vec<Pod>)>, Vec<ResourceSpec>, [i64; 2]);

fn empty_pod() -> Pod {
    let mut p = pod_with("incoming", vec![]);
    p.spec.as_mut().unwrap().containers.clear();
    p
}

fn two(name: &str, a: (i64, i64), b: (i64, i64)) -> Pod {
    pod_with(name, vec![req(a.0, a.1, &[]), req(b.0, b.1, &[])])
}

fn least_allocated_cases() -> Vec<Case> {
    let cm = || res(&[("cpu", 1), ("memory", 1)]);
    let cpu_only = || two("cpu-only", (1000, 0), (2000, 0));
    let cpu_mem = || two("cpu-mem", (1000, 2000), (2000, 3000));
    let ext = "nvidia.com/gpu";
    vec![
        (
            "nothing scheduled, nothing requested",
            empty_pod(),
            vec![(node("n1", 4000, 10000, &[]), vec![]), (node("n2", 4000, 10000, &[]), vec![])],
            cm(),
            [100, 100],
        ),
        (
            "nothing scheduled, resources requested, differently sized nodes",
            cpu_mem(),
            vec![(node("n1", 4000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[]), vec![])],
            cm(),
            [37, 50],
        ),
        (
            "no resources requested, pods scheduled",
            empty_pod(),
            vec![(node("n1", 4000, 10000, &[]), vec![empty_pod(), empty_pod()]), (node("n2", 4000, 10000, &[]), vec![empty_pod(), empty_pod()])],
            cm(),
            [100, 100],
        ),
        (
            "no resources requested, pods scheduled with resources",
            empty_pod(),
            vec![(node("n1", 10000, 20000, &[]), vec![cpu_only(), cpu_only()]), (node("n2", 10000, 20000, &[]), vec![cpu_only(), cpu_mem()])],
            cm(),
            [70, 57],
        ),
        (
            "resources requested, pods scheduled with resources",
            cpu_mem(),
            vec![(node("n1", 10000, 20000, &[]), vec![cpu_only()]), (node("n2", 10000, 20000, &[]), vec![cpu_mem()])],
            cm(),
            [57, 45],
        ),
        (
            "resources requested, pods scheduled with resources, differently sized nodes",
            cpu_mem(),
            vec![(node("n1", 10000, 20000, &[]), vec![cpu_only()]), (node("n2", 10000, 50000, &[]), vec![cpu_mem()])],
            cm(),
            [57, 60],
        ),
        (
            "requested resources exceed node capacity",
            cpu_only(),
            vec![(node("n1", 4000, 10000, &[]), vec![cpu_only()]), (node("n2", 4000, 10000, &[]), vec![cpu_mem()])],
            cm(),
            [50, 25],
        ),
        (
            "zero node resources, pods scheduled with resources",
            empty_pod(),
            vec![(node("n1", 0, 0, &[]), vec![cpu_only()]), (node("n2", 0, 0, &[]), vec![cpu_mem()])],
            cm(),
            [0, 0],
        ),
        (
            "weights memory:2 cpu:1",
            cpu_mem(),
            vec![(node("n1", 4000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[]), vec![])],
            res(&[("memory", 2), ("cpu", 1)]),
            [41, 50],
        ),
        (
            "extended resource not requested",
            cpu_mem(),
            vec![(node("n1", 6000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[(ext, 4)]), vec![])],
            res(&[("cpu", 1), ("memory", 1), (ext, 1)]),
            [50, 50],
        ),
        (
            "extended resource requested",
            pod_with("p", vec![req(1000, 2000, &[(ext, 2)]), req(2000, 3000, &[])]),
            vec![(node("n1", 6000, 10000, &[(ext, 4)]), vec![]), (node("n2", 6000, 10000, &[(ext, 10)]), vec![])],
            res(&[("cpu", 1), ("memory", 1), (ext, 1)]),
            [50, 60],
        ),
        (
            "node lacks the resource, weights ext:2 cpu:1 mem:1",
            two("p", (1000, 2000), (2000, 2000)),
            vec![(node("n1", 6000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[(ext, 4)]), vec![])],
            res(&[(ext, 2), ("cpu", 1), ("memory", 1)]),
            [55, 55],
        ),
    ]
}

// Mirrors pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go TestLeastAllocatedScoringStrategy
#[test]
fn least_allocated_vectors() {
    for (name, pod, nodes, resources, want) in least_allocated_cases() {
        let fit = Fit { strategy: ScoringStrategy::LeastAllocated, resources };
        assert_eq!(scores(&fit, pod, &cache(nodes)), Some(want.to_vec()), "{name}");
    }
    for bad in [-1, 0, 101] {
        assert!(validate_resources(&res(&[("cpu", bad), ("memory", 1)])).is_err(), "weight {bad}");
    }
    assert!(validate_resources(&res(&[("cpu", 1), ("memory", 100)])).is_ok());
}

// Mirrors pkg/scheduler/framework/plugins/noderesources/most_allocated_test.go TestMostAllocatedScoringStrategy
#[test]
fn most_allocated_vectors() {
    let cm = || res(&[("cpu", 1), ("memory", 1)]);
    let cpu_only = || two("cpu-only", (1000, 0), (2000, 0));
    let cpu_mem = || two("cpu-mem", (1000, 2000), (2000, 3000));
    let no_req = || {
        let mut p = pod_with("no-req", vec![vec![]]);
        p.spec.as_mut().unwrap().containers[0].resources = None;
        p
    };
    let ext = "nvidia.com/gpu";
    let cases: Vec<Case> = vec![
        (
            "nothing scheduled, nothing requested",
            empty_pod(),
            vec![(node("n1", 4000, 10000, &[]), vec![]), (node("n2", 4000, 10000, &[]), vec![])],
            cm(),
            [0, 0],
        ),
        ("differently sized nodes", cpu_mem(), vec![(node("n1", 4000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[]), vec![])], cm(), [62, 50]),
        (
            "no resources requested, pods scheduled with resources",
            empty_pod(),
            vec![(node("n1", 10000, 20000, &[]), vec![cpu_only(), cpu_only()]), (node("n2", 10000, 20000, &[]), vec![cpu_only(), cpu_mem()])],
            cm(),
            [30, 42],
        ),
        (
            "resources requested, pods scheduled with resources",
            cpu_mem(),
            vec![(node("n1", 10000, 20000, &[]), vec![cpu_only()]), (node("n2", 10000, 20000, &[]), vec![cpu_mem()])],
            cm(),
            [42, 55],
        ),
        (
            "resources requested equal node capacity",
            two("p", (2000, 4000), (3000, 5000)),
            vec![(node("n1", 5000, 10000, &[]), vec![]), (node("n2", 10000, 9000, &[]), vec![])],
            cm(),
            [95, 75],
        ),
        (
            "weights memory:2 cpu:1",
            cpu_mem(),
            vec![(node("n1", 4000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[]), vec![])],
            res(&[("memory", 2), ("cpu", 1)]),
            [58, 50],
        ),
        (
            "non-zero defaults for containers without requests",
            no_req(),
            vec![(node("n1", 250, 1000 * MB, &[]), vec![no_req(), no_req()]), (node("n2", 250, 1000 * MB, &[]), vec![])],
            cm(),
            [80, 30],
        ),
        (
            "extended resource not requested",
            cpu_mem(),
            vec![(node("n1", 6000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[(ext, 4)]), vec![])],
            res(&[("cpu", 1), ("memory", 1), (ext, 1)]),
            [50, 50],
        ),
        (
            "extended resource requested",
            pod_with("p", vec![req(1000, 2000, &[(ext, 2)]), req(2000, 3000, &[])]),
            vec![(node("n1", 6000, 10000, &[(ext, 4)]), vec![]), (node("n2", 6000, 10000, &[(ext, 10)]), vec![])],
            res(&[("cpu", 1), ("memory", 1), (ext, 1)]),
            [50, 40],
        ),
        (
            "node lacks the resource, weights ext:2 cpu:1 mem:1",
            two("p", (1000, 2000), (2000, 2000)),
            vec![(node("n1", 6000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[(ext, 4)]), vec![])],
            res(&[(ext, 2), ("cpu", 1), ("memory", 1)]),
            [45, 45],
        ),
    ];
    for (name, pod, nodes, resources, want) in cases {
        let fit = Fit { strategy: ScoringStrategy::MostAllocated, resources };
        assert_eq!(scores(&fit, pod, &cache(nodes)), Some(want.to_vec()), "{name}");
    }
}

fn shape(points: &[(i64, i64)]) -> Vec<ShapePoint> {
    points.iter().map(|(u, s)| ShapePoint { utilization: *u, score: *s }).collect()
}

// Mirrors pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio_test.go
// TestRequestedToCapacityRatioScoringStrategy
#[test]
fn requested_to_capacity_ratio_vectors() {
    let least = ScoringStrategy::RequestedToCapacityRatio(shape(&[(0, 10), (100, 0)]));
    let fit = Fit { strategy: least, resources: res(&[("cpu", 1), ("memory", 1)]) };
    let two_nodes = |pods: Vec<Pod>| vec![(node("n1", 4000, 10000, &[]), pods.clone()), (node("n2", 6000, 10000, &[]), pods)];
    let cpu_mem = || two("p", (1000, 2000), (2000, 3000));
    assert_eq!(scores(&fit, cpu_mem(), &cache(two_nodes(vec![]))), Some(vec![38, 50]));
    assert_eq!(scores(&fit, empty_pod(), &cache(two_nodes(vec![cpu_mem()]))), Some(vec![38, 50]));
    assert_eq!(scores(&fit, empty_pod(), &cache(two_nodes(vec![]))), Some(vec![100, 100]));
}

// Mirrors pkg/scheduler/framework/plugins/helper/shape_score_test.go TestBrokenLinearFunction
#[test]
fn broken_linear_vectors() {
    let s1 = shape(&[(10, 1), (90, 9)]);
    for (p, want) in [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)] {
        assert_eq!(broken_linear(&s1, p), want, "f({p})");
    }
    let s2 = shape(&[(0, 2), (40, 10), (100, 0)]);
    for (p, want) in [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)] {
        assert_eq!(broken_linear(&s2, p), want, "f({p})");
    }
}

// Mirrors requested_to_capacity_ratio_test.go TestResourceBinPackingSingleExtended and
// TestResourceBinPackingMultipleExtended
#[test]
fn bin_packing_extended_vectors() {
    let foo = "intel.com/foo";
    let bar = "intel.com/bar";
    let fit = Fit { strategy: ScoringStrategy::RequestedToCapacityRatio(shape(&[(0, 0), (100, 1)])), resources: res(&[(foo, 1)]) };
    let nodes = |n2_pods: Vec<Pod>| vec![(node("n1", 4000, 10000, &[(foo, 8)]), vec![]), (node("n2", 4000, 10000, &[(foo, 4)]), n2_pods)];
    let foo_pod = |n: i64| pod_with("p", vec![req(0, 0, &[(foo, n)])]);
    assert_eq!(scores(&fit, pod_with("p", vec![req(0, 0, &[])]), &cache(nodes(vec![]))), Some(vec![0, 0]));
    assert_eq!(scores(&fit, foo_pod(2), &cache(nodes(vec![]))), Some(vec![2, 5]));
    assert_eq!(scores(&fit, foo_pod(2), &cache(nodes(vec![foo_pod(2)]))), Some(vec![2, 10]));
    assert_eq!(scores(&fit, foo_pod(4), &cache(nodes(vec![]))), Some(vec![5, 10]));
    let fit = Fit { strategy: ScoringStrategy::RequestedToCapacityRatio(shape(&[(0, 0), (100, 1)])), resources: res(&[(foo, 3), (bar, 5)]) };
    let nodes = vec![(node("n1", 4000, 10000, &[(foo, 8), (bar, 4)]), vec![]), (node("n2", 4000, 10000, &[(foo, 4), (bar, 8)]), vec![])];
    assert_eq!(scores(&fit, pod_with("p", vec![req(0, 0, &[(foo, 2), (bar, 2)])]), &cache(nodes)), Some(vec![4, 3]));
}

// Mirrors pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go TestNodeResourcesBalancedAllocation
#[test]
fn balanced_allocation_vectors() {
    let gpu = "nvidia.com/gpu";
    let cpu_only = || two("cpu-only", (1000, 0), (2000, 0));
    let cpu_mem = || two("cpu-mem", (1000, 2000), (2000, 3000));
    let cpu_mem_gpu = || pod_with("cpu-mem-gpu", vec![req(1000, 2000, &[(gpu, 1)]), req(2000, 3000, &[(gpu, 2)])]);
    let plugin = BalancedAllocation::default();
    // Best-effort pods are skipped at PreScore.
    let best_effort = pod_with("be", vec![vec![]]);
    assert_eq!(scores(&plugin, best_effort, &cache(vec![(node("n1", 4000, 10000, &[]), vec![])])), None);
    type BalancedCase = (&'static str, Pod, Vec<(Node, Vec<Pod>)>, [i64; 2]);
    let cases: Vec<BalancedCase> = vec![
        (
            "nothing scheduled, differently sized nodes",
            cpu_mem(),
            vec![(node("n1", 4000, 10000, &[]), vec![]), (node("n2", 6000, 10000, &[]), vec![])],
            [87, 100],
        ),
        (
            "pods scheduled with resources",
            cpu_mem(),
            vec![(node("n1", 10000, 20000, &[]), vec![cpu_only()]), (node("n2", 10000, 20000, &[]), vec![cpu_mem()])],
            [82, 95],
        ),
        (
            "pods scheduled with resources, differently sized nodes",
            cpu_mem(),
            vec![(node("n1", 10000, 20000, &[]), vec![cpu_only()]), (node("n2", 10000, 50000, &[]), vec![cpu_mem()])],
            [82, 80],
        ),
        (
            "requested resources at node capacity",
            cpu_only(),
            vec![(node("n1", 6000, 10000, &[]), vec![cpu_only()]), (node("n2", 6000, 10000, &[]), vec![cpu_mem()])],
            [50, 75],
        ),
    ];
    for (name, pod, nodes, want) in cases {
        assert_eq!(scores(&plugin, pod, &cache(nodes)), Some(want.to_vec()), "{name}");
    }
    let three = BalancedAllocation { resources: res(&[("cpu", 1), ("memory", 1), (gpu, 1)]) };
    let mut incoming = pod_with("p", vec![vec![("memory", "0".to_string()), (gpu, "1".to_string())]]);
    incoming.spec.as_mut().unwrap().containers[0].name = "gpu".into();
    let nodes = vec![(node("n1", 3500, 40000, &[(gpu, 8)]), vec![cpu_mem_gpu()]), (node("n2", 3500, 40000, &[(gpu, 8)]), vec![cpu_mem()])];
    assert_eq!(scores(&three, incoming, &cache(nodes)), Some(vec![70, 65]), "3 resources");
    let nodes = vec![(node("n1", 3500, 40000, &[(gpu, 8)]), vec![]), (node("n2", 3500, 40000, &[]), vec![])];
    assert_eq!(scores(&three, cpu_mem(), &cache(nodes)), Some(vec![63, 63]), "node without scalar resource");
}

fn image_node(name: &str, images: &[(i64, &[&str])]) -> Node {
    let mut n = node(name, 4000, 10000, &[]);
    n.status.as_mut().unwrap().images = Some(
        images.iter().map(|(size, names)| ContainerImage { names: Some(names.iter().map(|s| s.to_string()).collect()), size_bytes: Some(size * MB) }).collect(),
    );
    n
}

fn image_pod(containers: &[&str], init: &[&str]) -> Pod {
    let c = |i: usize, image: &&str| Container { name: format!("c{i}"), image: Some(image.to_string()), ..Default::default() };
    Pod {
        metadata: ObjectMeta { name: Some("p".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(PodSpec {
            containers: containers.iter().enumerate().map(|(i, im)| c(i, im)).collect(),
            init_containers: if init.is_empty() { None } else { Some(init.iter().enumerate().map(|(i, im)| c(100 + i, im)).collect()) },
            ..Default::default()
        }),
        ..Default::default()
    }
}

// Mirrors pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go TestImageLocalityPriority
#[test]
fn image_locality_vectors() {
    let n403002000 = || {
        image_node(
            "n403002000",
            &[(40, &["gcr.io/40:latest", "gcr.io/40:v1"]), (300, &["gcr.io/300:latest", "gcr.io/300:v1"]), (2000, &["gcr.io/2000:latest"])],
        )
    };
    let n25010 = || image_node("n25010", &[(250, &["gcr.io/250:latest"]), (10, &["gcr.io/10:latest", "gcr.io/10:v1"])]);
    let n60040900 = || image_node("n60040900", &[(600, &["gcr.io/600:latest"]), (40, &["gcr.io/40:latest"]), (900, &["gcr.io/900:latest"])]);
    let n300600900 = || image_node("n300600900", &[(300, &["gcr.io/300:latest"]), (600, &["gcr.io/600:latest"]), (900, &["gcr.io/900:latest"])]);
    let n400030 = || image_node("n400030", &[(4000, &["gcr.io/4000:latest"]), (30, &["gcr.io/30:latest"])]);
    let n203040 = || image_node("n203040", &[(20, &["gcr.io/20:latest"]), (30, &["gcr.io/30:latest"]), (40, &["gcr.io/40:latest"])]);
    let empty = || image_node("empty", &[]);
    let cases: Vec<(&str, Pod, Vec<Node>, Vec<i64>)> = vec![
        ("two images spread on two nodes", image_pod(&["gcr.io/40", "gcr.io/250"], &[]), vec![n403002000(), n25010()], vec![0, 5]),
        ("two images on one node", image_pod(&["gcr.io/40", "gcr.io/300"], &[]), vec![n403002000(), n25010()], vec![7, 0]),
        ("over max threshold", image_pod(&["gcr.io/10", "gcr.io/4000"], &[]), vec![n400030(), n25010()], vec![100, 0]),
        ("spread over three nodes", image_pod(&["gcr.io/10", "gcr.io/4000"], &[]), vec![n400030(), n25010(), empty()], vec![66, 0, 0]),
        ("three images", image_pod(&["gcr.io/300", "gcr.io/600", "gcr.io/900"], &[]), vec![n60040900(), n300600900(), empty()], vec![32, 36, 0]),
        ("below min threshold", image_pod(&["gcr.io/30", "gcr.io/40"], &[]), vec![n203040(), n400030()], vec![1, 0]),
        ("init containers count", image_pod(&["gcr.io/30"], &["gcr.io/300"]), vec![n403002000(), n203040()], vec![6, 0]),
    ];
    for (name, pod, nodes, want) in cases {
        let c = cache(nodes.into_iter().map(|n| (n, vec![])).collect());
        assert_eq!(scores(&ImageLocality::default(), pod, &c), Some(want), "{name}");
    }
    // One plugin scoring pod after pod remembers each node's sizes (ImageLocality's memo): the
    // scores follow a node whose images change, a node removed and pods alternating images.
    let plugin = ImageLocality::default();
    let mut c = cache(vec![(n403002000(), vec![]), (n25010(), vec![]), (empty(), vec![])]);
    let two = || image_pod(&["gcr.io/40", "gcr.io/250"], &[]);
    let other = || image_pod(&["gcr.io/10", "gcr.io/4000"], &[]);
    assert_eq!(scores(&plugin, two(), &c), Some(vec![0, 3, 0]));
    assert_eq!(scores(&plugin, other(), &c), Some(vec![0, 0, 0]));
    // n25010 loses gcr.io/10 and pulls gcr.io/4000: 4000 MB on 1 of 3 nodes is
    // 100 × (4000/3 − 23) / (2·1000 − 23) = 66.
    let mut pulled = image_node("n25010", &[(250, &["gcr.io/250:latest"]), (4000, &["gcr.io/4000:latest"])]);
    pulled.metadata.resource_version = Some("2".into());
    c.upsert_node(Arc::new(Object::Node(Box::new(pulled))));
    assert_eq!(scores(&plugin, other(), &c), Some(vec![0, 66, 0]));
    assert_eq!(scores(&plugin, two(), &c), Some(vec![0, 3, 0]));
    // Two nodes left: 250 MB on one of two is 100 × (125 − 23) / 1977 = 5; 4000 MB, 100.
    c.remove_node("n403002000");
    assert_eq!(scores(&plugin, two(), &c), Some(vec![5, 0]));
    for (pod, want) in [(other(), vec![100, 0]), (two(), vec![5, 0]), (other(), vec![100, 0])] {
        assert_eq!(scores(&plugin, pod, &c), Some(want));
    }
}

// Mirrors pkg/scheduler/schedule_one_test.go TestNumFeasibleNodesToFind
#[test]
fn num_feasible_nodes_to_find_vectors() {
    for (pct, nodes, want) in [
        (0, 10, 10),
        (40, 10, 10),
        (0, 1000, 420),
        (40, 1000, 400),
        (0, 6000, 300),
        (0, 100, 100),
        (0, 500, 230),
        (0, 2500, 750),
        (0, 5000, 500),
        (0, 10000, 500),
    ] {
        assert_eq!(num_feasible_nodes_to_find(pct, nodes), want, "pct={pct} nodes={nodes}");
    }
}

// Mirrors pkg/scheduler/backend/queue/backoff_queue_test.go (calculateBackoffDuration)
#[test]
fn backoff_doubles_from_one_to_ten_seconds() {
    let q = SchedulingQueue::default();
    let got: Vec<u64> = (0..=7).map(|n| q.backoff_duration(n)).collect();
    assert_eq!(got, vec![0, 1000, 2000, 4000, 8000, 10000, 10000, 10000]);
    let disabled = SchedulingQueue::new(1000, 0);
    assert_eq!(disabled.backoff_duration(3), 0);
}

// Updating an active or backing-off pod keeps the queue's per-location counts (it unlinked the
// pod twice, so the count went down by one per update until it underflowed: a panic in debug
// builds, found by the swarm).
#[test]
fn updating_a_queued_pod_keeps_the_location_counts() {
    use kubesim_scheduler::queue::Location;
    let mut q = SchedulingQueue::default();
    let mut pod = Pod::default();
    pod.metadata.name = Some("p".into());
    pod.metadata.namespace = Some("default".into());
    q.add(pod_info(pod.clone()), 0, false);
    assert_eq!(q.count(Location::Active), 1);
    for priority in [0, 5, 10] {
        pod.spec.get_or_insert_with(Default::default).priority = Some(priority);
        q.update(pod_info(pod.clone()), 1, false, true);
        assert_eq!(q.count(Location::Active), 1, "priority {priority}");
    }
    assert!(q.pop().is_some());
    assert_eq!(q.count(Location::Active), 0);
}

mod scoring_behaviour {
    use super::*;
    use k8s_openapi::api::core::v1::{
        Affinity, NodeAffinity as NodeAffinitySpec, NodeSelectorRequirement, NodeSelectorTerm, PodAffinity, PodAffinityTerm, PreferredSchedulingTerm, Taint,
        Toleration, TopologySpreadConstraint, WeightedPodAffinityTerm,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use kubesim_scheduler::harness::{make_node, make_pod};
    use kubesim_scheduler::plugins::interpodaffinity::InterPodAffinity;
    use kubesim_scheduler::plugins::nodeaffinity::NodeAffinity;
    use kubesim_scheduler::plugins::taints::TaintToleration;
    use kubesim_scheduler::plugins::topologyspread::PodTopologySpread;

    fn labelled_node(name: &str, labels: &[(&str, &str)], taints: Vec<Taint>) -> Node {
        match make_node(name, &[("cpu", "4"), ("memory", "8Gi"), ("pods", "110")], labels, taints) {
            Object::Node(n) => *n,
            _ => unreachable!(),
        }
    }

    fn pns(key: &str, value: &str) -> Taint {
        Taint { key: key.into(), value: Some(value.into()), effect: "PreferNoSchedule".into(), time_added: None }
    }

    fn req(key: &str, value: &str) -> NodeSelectorRequirement {
        NodeSelectorRequirement { key: key.into(), operator: "In".into(), values: Some(vec![value.into()]) }
    }

    // Mirrors pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go TestTaintTolerationScore
    // ("the more intolerable taints a node has, the lower score it gets").
    #[test]
    fn taint_toleration_scores_reverse_normalized() {
        let mut pod = make_pod("p", &[]);
        pod.spec.as_mut().unwrap().tolerations = Some(vec![Toleration {
            key: Some("foo".into()),
            operator: Some("Equal".into()),
            value: Some("bar".into()),
            effect: Some("PreferNoSchedule".into()),
            ..Default::default()
        }]);
        let nodes = vec![
            (labelled_node("n0", &[], vec![pns("foo", "bar")]), vec![]),
            (labelled_node("n1", &[], vec![pns("foo", "bar"), pns("cpu-type", "arm64")]), vec![]),
            (labelled_node("n2", &[], vec![pns("cpu-type", "arm64"), pns("disk", "hdd")]), vec![]),
        ];
        assert_eq!(scores(&TaintToleration, pod, &cache(nodes)), Some(vec![100, 50, 0]));
    }

    // Mirrors pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go TestNodeAffinityPriority
    // ("all nodes matches the preferred scheduling requirements of pod but with different priorities").
    #[test]
    fn node_affinity_preferred_terms() {
        let mut pod = make_pod("p", &[]);
        let term = |w: i32, reqs: Vec<NodeSelectorRequirement>| PreferredSchedulingTerm {
            weight: w,
            preference: NodeSelectorTerm { match_expressions: Some(reqs), match_fields: None },
        };
        pod.spec.as_mut().unwrap().affinity = Some(Affinity {
            node_affinity: Some(NodeAffinitySpec {
                preferred_during_scheduling_ignored_during_execution: Some(vec![
                    term(2, vec![req("foo", "bar")]),
                    term(4, vec![req("key", "value")]),
                    term(5, vec![req("foo", "bar"), req("key", "value"), req("az", "az1")]),
                ]),
                ..Default::default()
            }),
            ..Default::default()
        });
        let nodes = vec![
            (labelled_node("n1", &[("foo", "bar")], vec![]), vec![]),
            (labelled_node("n5", &[("foo", "bar"), ("key", "value"), ("az", "az1")], vec![]), vec![]),
            (labelled_node("n2", &[("key", "value")], vec![]), vec![]),
        ];
        assert_eq!(scores(&NodeAffinity, pod.clone(), &cache(nodes)), Some(vec![18, 100, 36]));
        let mut plain = pod;
        plain.spec.as_mut().unwrap().affinity = None;
        assert_eq!(scores(&NodeAffinity, plain, &cache(vec![(labelled_node("n1", &[], vec![]), vec![])])), None, "PreScore skips");
    }

    fn app(name: &str, value: &str) -> Pod {
        let mut p = make_pod(name, &[]);
        p.metadata.labels = Some([("app".to_string(), value.to_string())].into());
        p
    }

    // Hand-computed from scoring.go: preferred affinity weight 5 to app=db by zone.
    #[test]
    fn inter_pod_affinity_preferred_by_zone() {
        let mut pod = make_pod("p", &[]);
        pod.spec.as_mut().unwrap().affinity = Some(Affinity {
            pod_affinity: Some(PodAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(vec![WeightedPodAffinityTerm {
                    weight: 5,
                    pod_affinity_term: PodAffinityTerm {
                        label_selector: Some(LabelSelector { match_labels: Some([("app".to_string(), "db".to_string())].into()), ..Default::default() }),
                        topology_key: "zone".into(),
                        ..Default::default()
                    },
                }]),
                ..Default::default()
            }),
            ..Default::default()
        });
        let nodes = vec![
            (labelled_node("a1", &[("zone", "a")], vec![]), vec![app("db-0", "db")]),
            (labelled_node("a2", &[("zone", "a")], vec![]), vec![]),
            (labelled_node("b1", &[("zone", "b")], vec![]), vec![app("web-0", "web")]),
        ];
        assert_eq!(scores(&InterPodAffinity::default(), pod, &cache(nodes)), Some(vec![100, 100, 0]));
    }

    // Hand-computed from scoring.go: one soft zone constraint, weight ln(2 + 2), counts 2 and 0.
    #[test]
    fn topology_spread_soft_constraint() {
        let mut pod = app("p", "w");
        pod.spec.as_mut().unwrap().topology_spread_constraints = Some(vec![TopologySpreadConstraint {
            max_skew: 1,
            topology_key: "zone".into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
            label_selector: Some(LabelSelector { match_labels: Some([("app".to_string(), "w".to_string())].into()), ..Default::default() }),
            ..Default::default()
        }]);
        let nodes = vec![
            (labelled_node("a1", &[("zone", "a")], vec![]), vec![app("w0", "w"), app("w1", "w")]),
            (labelled_node("b1", &[("zone", "b")], vec![]), vec![app("x0", "x")]),
            (labelled_node("none", &[], vec![]), vec![]),
        ];
        // a1: round(2 × ln 4) = 3; b1: 0; "none" lacks the key → ignored → 0.
        // Normalized: a1 = 100 × (3 + 0 − 3) / 3 = 0, b1 = 100.
        assert_eq!(scores(&PodTopologySpread::default(), pod, &cache(nodes)), Some(vec![0, 100, 0]));
    }
}

// Mirrors pkg/scheduler/schedule_one_test.go TestSelectHost: only highest-scored nodes are
// chosen, ties are broken at random (reservoir sampling), reproducibly for a seed.
#[test]
fn select_host_breaks_ties_among_the_best_only() {
    use kubesim_scheduler::scheduler::select_host;
    use rand_core::SeedableRng;
    let mut rng = kubesim_apiserver::SimRng::seed_from_u64(7);
    let totals = [10, 30, 5, 30, 30, 29];
    let mut seen = [0usize; 6];
    for _ in 0..600 {
        seen[select_host(&totals, &mut rng).unwrap()] += 1;
    }
    assert_eq!((seen[0], seen[2], seen[5]), (0, 0, 0));
    for i in [1, 3, 4] {
        assert!((150..250).contains(&seen[i]), "node {i} chosen {} times of 600", seen[i]);
    }
    assert_eq!(select_host(&[], &mut rng), None);
    let mut a = kubesim_apiserver::SimRng::seed_from_u64(1);
    let mut b = kubesim_apiserver::SimRng::seed_from_u64(1);
    let ra: Vec<_> = (0..20).map(|_| select_host(&totals, &mut a)).collect();
    let rb: Vec<_> = (0..20).map(|_| select_host(&totals, &mut b)).collect();
    assert_eq!(ra, rb);
}

// Mirrors pkg/scheduler/framework/plugins/noderesources/fit_test.go TestEnoughRequests (reasons,
// pod-count limit, extended resources, unresolvable when the request exceeds allocatable).
#[test]
fn fit_filter_reasons() {
    use kubesim_scheduler::framework::{filter_all_nodes, Code};
    let ext = "example.com/aaa";
    let check = |pod: Pod, node_alloc: (i64, i64, &[(&str, i64)]), existing: Vec<Pod>| {
        let c = cache(vec![(node("n", node_alloc.0, node_alloc.1, node_alloc.2), existing)]);
        let listers = Listers::default();
        let view = ClusterView { cache: &c, listers: &listers };
        filter_all_nodes(&Fit::default(), &pod_info(pod), &view).remove(0)
    };
    let ok = check(empty_pod(), (10, 20, &[]), vec![two("e", (10, 20), (0, 0))]);
    assert_eq!(ok.code, Code::Success, "no resources requested always fits");
    let s = check(pod_with("p", vec![req(1, 1, &[])]), (10, 20, &[]), vec![two("e", (10, 20), (0, 0))]);
    assert_eq!((s.code, s.reasons.clone()), (Code::Unschedulable, vec!["Insufficient cpu".to_string(), "Insufficient memory".to_string()]));
    let s = check(pod_with("p", vec![req(1, 0, &[])]), (10, 20, &[]), vec![two("e", (5, 5), (0, 0))]);
    assert_eq!(s.code, Code::Success);
    let s = check(pod_with("p", vec![req(11, 0, &[])]), (10, 20, &[]), vec![]);
    assert_eq!((s.code, s.reasons.clone()), (Code::UnschedulableAndUnresolvable, vec!["Insufficient cpu".to_string()]), "request above allocatable");
    let s = check(pod_with("p", vec![req(0, 0, &[(ext, 3)])]), (10, 20, &[(ext, 5)]), vec![pod_with("e", vec![req(0, 0, &[(ext, 3)])])]);
    assert_eq!((s.code, s.reasons.clone()), (Code::Unschedulable, vec![format!("Insufficient {ext}")]));
    // Too many pods: allocatable pods = 110 in these nodes; fill it.
    let full: Vec<Pod> = (0..110).map(|i| pod_with(&format!("e{i}"), vec![req(0, 0, &[])])).collect();
    let s = check(empty_pod(), (10, 20, &[]), full);
    assert_eq!((s.code, s.reasons.clone()), (Code::Unschedulable, vec!["Too many pods".to_string()]));
}

// Mirrors pkg/api/v1/resource/helpers_test.go TestPodRequests / pkg/scheduler/util
// GetNonzeroRequests: init containers, restartable sidecars, overhead, non-zero defaults.
#[test]
fn pod_request_aggregation() {
    use k8s_openapi::api::core::v1::Container;
    use kubesim_scheduler::resources::{pod_requests, DEFAULT_MEMORY_REQUEST};
    let c = |name: &str, cpu: &str, restart: Option<&str>| Container {
        name: name.into(),
        resources: Some(ResourceRequirements { requests: Some(list(&[("cpu", cpu.to_string())])), ..Default::default() }),
        restart_policy: restart.map(String::from),
        ..Default::default()
    };
    let mut pod = pod_with("p", vec![]);
    let spec = pod.spec.as_mut().unwrap();
    spec.containers = vec![c("a", "1", None), c("b", "1", None)];
    // A regular init container larger than the sum wins; a sidecar adds to both.
    spec.init_containers = Some(vec![c("sidecar", "500m", Some("Always")), c("init", "3", None)]);
    spec.overhead = Some(list(&[("cpu", "250m".to_string())]));
    let r = pod_requests(&pod);
    // max(2 + 0.5 (sidecar), 0.5 + 3 (init after sidecar)) + 0.25 overhead = 3.75
    assert_eq!(r.requests.milli_cpu, 3750);
    assert_eq!(r.requests.memory, 0);
    // Non-zero: every container lacks memory → 200 MiB each (max of regular sum 3×… vs init).
    assert_eq!(r.non_zero_cpu, 3750);
    assert_eq!(r.non_zero_memory, 3 * DEFAULT_MEMORY_REQUEST);
}
