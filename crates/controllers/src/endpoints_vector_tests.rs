//! Upstream's EndpointSlice reconciler, podToEndpoint, trigger-time and Endpoints truncation
//! vectors, run against the functions the controllers use:
//! staging/src/k8s.io/endpointslice/reconciler_test.go, utils_test.go,
//! util/trigger_time_tracker_test.go and pkg/controller/endpoint/endpoints_controller_test.go.

use crate::endpoints::*;
use kubesim_api::k8s_openapi::api::core::v1::{
    Container, ContainerPort, EndpointAddress, EndpointSubset, Pod, PodCondition, PodIP, PodSpec, PodStatus, Service, ServicePort, ServiceSpec,
};
use kubesim_api::k8s_openapi::api::discovery::v1::{EndpointPort, EndpointSlice};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::time::time_at;
use std::collections::BTreeMap;

const NS: &str = "test";

/// `newServicePortsAddressType("foo", namespace)`: port 80 → targetPort 80 TCP, IPv4.
fn service() -> Service {
    Service {
        metadata: ObjectMeta {
            name: Some("foo".into()),
            namespace: Some(NS.into()),
            uid: Some("svc-uid".into()),
            creation_timestamp: Some(time_at(1_000)),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(BTreeMap::from([("foo".to_string(), "bar".to_string())])),
            ports: Some(vec![ServicePort {
                name: Some(String::new()),
                port: 80,
                target_port: Some(IntOrString::Int(80)),
                protocol: Some("TCP".into()),
                ..Default::default()
            }]),
            cluster_ip: Some("10.96.0.10".into()),
            ip_families: Some(vec!["IPv4".into()]),
            ..Default::default()
        }),
        status: None,
    }
}

fn owner(service: &Service) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Service".into(),
        name: service.metadata.name.clone().unwrap_or_default(),
        uid: service.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `newPod(n, namespace, ready, 1, false)`: on node-1, Ready as asked.
fn pod(n: usize, ready: bool) -> Pod {
    let ip = format!("1.2.{}.{}", n / 256, n % 256);
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("pod{n}")),
            namespace: Some(NS.into()),
            uid: Some(format!("uid-{n}")),
            labels: Some(BTreeMap::from([("foo".to_string(), "bar".to_string())])),
            ..Default::default()
        },
        spec: Some(PodSpec {
            node_name: Some("node-1".into()),
            containers: vec![Container { name: "container-1".into(), ..Default::default() }],
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            pod_ip: Some(ip.clone()),
            pod_ips: Some(vec![PodIP { ip }]),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                last_transition_time: Some(time_at(2_000)),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

/// Pods 0..n, ready unless `i % 3 == 0`.
fn pods(n: usize) -> Vec<Pod> {
    (0..n).map(|i| pod(i, i % 3 != 0)).collect()
}

fn known_node(node: &str) -> Option<Option<String>> {
    (node == "node-1").then_some(None)
}

fn slice_ports(service: &Service) -> Vec<EndpointPort> {
    service_ports_of(service)
}

fn service_ports_of(service: &Service) -> Vec<EndpointPort> {
    service
        .spec
        .as_ref()
        .unwrap()
        .ports
        .iter()
        .flatten()
        .map(|p| EndpointPort {
            name: Some(p.name.clone().unwrap_or_default()),
            port: match &p.target_port {
                Some(IntOrString::Int(n)) => Some(*n),
                _ => Some(p.port),
            },
            protocol: p.protocol.clone(),
            app_protocol: None,
        })
        .collect()
}

/// `newEmptyEndpointSlice(n, namespace, ports, addressType, svc)`.
fn empty_slice(n: usize, service: &Service, address_type: &str) -> EndpointSlice {
    EndpointSlice {
        metadata: ObjectMeta {
            name: Some(format!("{}-{n}", service.metadata.name.as_deref().unwrap())),
            namespace: Some(NS.into()),
            labels: Some(BTreeMap::from([(SERVICE_NAME_LABEL.to_string(), "foo".to_string()), (MANAGED_BY_LABEL.to_string(), MANAGED_BY.to_string())])),
            owner_references: Some(vec![owner(service)]),
            ..Default::default()
        },
        address_type: address_type.into(),
        endpoints: Vec::new(),
        ports: Some(slice_ports(service)),
    }
}

fn reconcile(service: &Service, pods: &[Pod], existing: &[EndpointSlice], max: usize) -> SliceChanges {
    let refs: Vec<&Pod> = pods.iter().collect();
    reconcile_slices(service, &owner(service), &refs, &known_node, existing, max)
}

/// The slices after the writes (creates named `created-N`), as the fake clientset holds them.
fn apply(existing: &[EndpointSlice], changes: &SliceChanges) -> Vec<EndpointSlice> {
    let mut by_name: BTreeMap<String, EndpointSlice> = existing.iter().map(|s| (s.metadata.name.clone().unwrap(), s.clone())).collect();
    for (i, write) in changes.writes.iter().enumerate() {
        match write {
            SliceWrite::Create(s) => {
                let mut s = s.clone();
                s.metadata.name = Some(format!("created-{i}"));
                by_name.insert(s.metadata.name.clone().unwrap(), s);
            }
            SliceWrite::Update(s) => {
                by_name.insert(s.metadata.name.clone().unwrap(), s.clone());
            }
            SliceWrite::Delete(s) => {
                by_name.remove(s.metadata.name.as_deref().unwrap());
            }
        }
    }
    by_name.into_values().collect()
}

/// `expectUnorderedSlicesWithLengths`.
fn lengths(slices: &[EndpointSlice]) -> Vec<usize> {
    let mut l: Vec<usize> = slices.iter().map(|s| s.endpoints.len()).collect();
    l.sort_unstable();
    l
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v
}

#[test]
fn reconcile_empty_creates_a_placeholder() {
    // TestReconcileEmpty
    let svc = service();
    let changes = reconcile(&svc, &[], &[], MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (1, 0, 0));
    let SliceWrite::Create(slice) = &changes.writes[0] else { panic!() };
    assert_eq!(slice.metadata.generate_name.as_deref(), Some("foo-"));
    assert_eq!(slice.address_type, "IPv4");
    assert!(slice.endpoints.is_empty() && slice.ports.as_ref().is_none_or(|p| p.is_empty()));
    // Reconciling again with that placeholder changes nothing.
    let after = apply(&[], &changes);
    assert_eq!(reconcile(&svc, &[], &after, MAX_ENDPOINTS_PER_SLICE).counts(), (0, 0, 0));
}

#[test]
fn reconcile_1_pod_endpoint_fields() {
    // TestReconcile1Pod (the IPv4 case): one slice, one endpoint with the pod's address,
    // conditions, node and target.
    let svc = service();
    let changes = reconcile(&svc, &[pod(1, true)], &[], MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (1, 0, 0));
    let SliceWrite::Create(slice) = &changes.writes[0] else { panic!() };
    let labels = slice.metadata.labels.as_ref().unwrap();
    assert_eq!(labels.get(SERVICE_NAME_LABEL).map(String::as_str), Some("foo"));
    assert_eq!(labels.get(MANAGED_BY_LABEL).map(String::as_str), Some(MANAGED_BY));
    assert!(!labels.contains_key(HEADLESS_LABEL));
    let e = &slice.endpoints[0];
    assert_eq!(e.addresses, vec!["1.2.0.1".to_string()]);
    let c = e.conditions.as_ref().unwrap();
    assert_eq!((c.ready, c.serving, c.terminating), (Some(true), Some(true), Some(false)));
    assert_eq!(e.node_name.as_deref(), Some("node-1"));
    assert_eq!(e.target_ref.as_ref().unwrap().name.as_deref(), Some("pod1"));
    assert_eq!(slice.ports.as_ref().unwrap()[0].port, Some(80));
}

#[test]
fn reconcile_many_pods() {
    // TestReconcileManyPods: 250 pods, no slices → 3 creates {100, 100, 50}.
    let changes = reconcile(&service(), &pods(250), &[], MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (3, 0, 0));
    assert_eq!(lengths(&apply(&[], &changes)), sorted(vec![100, 100, 50]));
}

fn preexisting(svc: &Service, pods: &[Pod]) -> Vec<EndpointSlice> {
    let mut s1 = empty_slice(1, svc, "IPv4");
    for i in (1..pods.len() - 4).step_by(4) {
        s1.endpoints.push(pod_to_endpoint(&pods[i], svc, None));
    }
    let mut s2 = empty_slice(2, svc, "IPv4");
    for i in (3..pods.len() - 4).step_by(4) {
        s2.endpoints.push(pod_to_endpoint(&pods[i], svc, None));
    }
    vec![s1, s2]
}

#[test]
fn reconcile_endpoint_slices_some_preexisting() {
    // TestReconcileEndpointSlicesSomePreexisting: slices of 62 and 61, 127 to add → one new
    // slice of 100 and the other 27 into the slice that ends closest to full: {89, 61, 100}.
    let svc = service();
    let pods = pods(250);
    let existing = preexisting(&svc, &pods);
    assert_eq!(lengths(&existing), vec![61, 62]);
    let changes = reconcile(&svc, &pods, &existing, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (1, 1, 0));
    assert!(matches!(changes.writes[0], SliceWrite::Create(_)), "creates come first");
    assert!(matches!(changes.writes[1], SliceWrite::Update(_)));
    assert_eq!(lengths(&apply(&existing, &changes)), sorted(vec![89, 61, 100]));
}

#[test]
fn reconcile_endpoint_slices_some_preexisting_worse_allocation() {
    // TestReconcileEndpointSlicesSomePreexistingWorseAllocation: 74 and 74, 152 to add → two
    // creates (100 and 52) rather than updates: {74, 74, 100, 52}.
    let svc = service();
    let pods = pods(300);
    let existing = preexisting(&svc, &pods);
    let changes = reconcile(&svc, &pods, &existing, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (2, 0, 0));
    assert_eq!(lengths(&apply(&existing, &changes)), sorted(vec![74, 74, 100, 52]));
}

#[test]
fn reconcile_endpoint_slices_updating() {
    // TestReconcileEndpointSlicesUpdating: a targetPort change updates the 3 slices in place.
    let mut svc = service();
    let pods = pods(250);
    let slices = apply(&[], &reconcile(&svc, &pods, &[], MAX_ENDPOINTS_PER_SLICE));
    svc.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].target_port = Some(IntOrString::Int(81));
    let changes = reconcile(&svc, &pods, &slices, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (0, 3, 0));
    let after = apply(&slices, &changes);
    assert_eq!(lengths(&after), sorted(vec![100, 100, 50]));
    assert!(after.iter().all(|s| s.ports.as_ref().unwrap()[0].port == Some(81)));
}

#[test]
fn reconcile_endpoint_slices_services_labels_updating() {
    // TestReconcileEndpointSlicesServicesLabelsUpdating: a new Service label → 3 updates, copied.
    let mut svc = service();
    let pods = pods(250);
    let slices = apply(&[], &reconcile(&svc, &pods, &[], MAX_ENDPOINTS_PER_SLICE));
    svc.metadata.labels = Some(BTreeMap::from([("foo".to_string(), "bar".to_string())]));
    let changes = reconcile(&svc, &pods, &slices, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (0, 3, 0));
    let after = apply(&slices, &changes);
    assert_eq!(lengths(&after), sorted(vec![100, 100, 50]));
    assert!(after.iter().all(|s| s.metadata.labels.as_ref().unwrap().get("foo").map(String::as_str) == Some("bar")));
}

#[test]
fn reconcile_endpoint_slices_services_reserved_labels() {
    // TestReconcileEndpointSlicesServicesReservedLabels: reserved keys on the Service are
    // ignored: no writes.
    let mut svc = service();
    let pods = pods(250);
    let slices = apply(&[], &reconcile(&svc, &pods, &[], MAX_ENDPOINTS_PER_SLICE));
    svc.metadata.labels = Some(BTreeMap::from([
        (SERVICE_NAME_LABEL.to_string(), "bad".to_string()),
        (MANAGED_BY_LABEL.to_string(), "actor".to_string()),
        (HEADLESS_LABEL.to_string(), "invalid".to_string()),
    ]));
    assert_eq!(reconcile(&svc, &pods, &slices, MAX_ENDPOINTS_PER_SLICE).counts(), (0, 0, 0));
}

#[test]
fn reconcile_endpoint_slices_recycling() {
    // TestReconcileEndpointSlicesRecycling: 10 slices of 30 are left alone; a port change
    // repacks them: 3 updates + 7 deletes → {100, 100, 100}.
    let mut svc = service();
    let pods = pods(300);
    let mut existing: Vec<EndpointSlice> = Vec::new();
    for (i, p) in pods.iter().enumerate() {
        if i % 30 == 0 {
            existing.push(empty_slice(i / 30, &svc, "IPv4"));
        }
        existing[i / 30].endpoints.push(pod_to_endpoint(p, &svc, None));
    }
    assert_eq!(reconcile(&svc, &pods, &existing, MAX_ENDPOINTS_PER_SLICE).counts(), (0, 0, 0));
    svc.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].target_port = Some(IntOrString::Int(81));
    let changes = reconcile(&svc, &pods, &existing, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (0, 3, 7));
    assert_eq!(lengths(&apply(&existing, &changes)), vec![100, 100, 100]);
}

#[test]
fn reconcile_endpoint_slices_update_packing() {
    // TestReconcileEndpointSlicesUpdatePacking: both slices change (every 10th pod turns
    // unready); 15 new endpoints go to the fuller one: 2 updates → {95, 20}.
    let svc = service();
    let mut pods: Vec<Pod> = Vec::new();
    let mut s1 = empty_slice(1, &svc, "IPv4");
    for i in 0..80 {
        let p = pod(i, true);
        s1.endpoints.push(pod_to_endpoint(&p, &svc, None));
        pods.push(p);
    }
    let mut s2 = empty_slice(2, &svc, "IPv4");
    for i in 100..120 {
        let p = pod(i, true);
        s2.endpoints.push(pod_to_endpoint(&p, &svc, None));
        pods.push(p);
    }
    let existing = vec![s1, s2];
    for (i, p) in pods.iter_mut().enumerate() {
        if i % 10 == 0 {
            p.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "False".into();
        }
    }
    pods.extend((200..215).map(|i| pod(i, true)));
    let changes = reconcile(&svc, &pods, &existing, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (0, 2, 0));
    assert_eq!(lengths(&apply(&existing, &changes)), sorted(vec![95, 20]));
}

#[test]
fn reconcile_endpoint_slices_replace_deprecated() {
    // TestReconcileEndpointSlicesReplaceDeprecated: slices of the old "IP" address type are
    // deleted and replaced by perfectly packed IPv4 ones: {100, 30}.
    let svc = service();
    let mut pods: Vec<Pod> = Vec::new();
    let mut s1 = empty_slice(1, &svc, "IP");
    for i in 0..80 {
        let p = pod(i, true);
        s1.endpoints.push(pod_to_endpoint(&p, &svc, None));
        pods.push(p);
    }
    let mut s2 = empty_slice(2, &svc, "IP");
    for i in 100..150 {
        let p = pod(i, true);
        s2.endpoints.push(pod_to_endpoint(&p, &svc, None));
        pods.push(p);
    }
    let existing = vec![s1, s2];
    let changes = reconcile(&svc, &pods, &existing, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (2, 0, 2));
    let after = apply(&existing, &changes);
    assert_eq!(lengths(&after), vec![30, 100]);
    assert!(after.iter().all(|s| s.address_type == "IPv4"));
}

#[test]
fn reconcile_endpoint_slices_recreation() {
    // TestReconcileEndpointSlicesRecreation: a slice owned by the Service stays; one owned by
    // another Service UID is replaced (a create, then a delete).
    let svc = service();
    let p = pod(1, true);
    for (owned, expected) in [(true, (0, 0, 0)), (false, (1, 0, 1))] {
        let mut slice = empty_slice(1, &svc, "IPv4");
        slice.endpoints.push(pod_to_endpoint(&p, &svc, None));
        if !owned {
            slice.metadata.owner_references.as_mut().unwrap()[0].uid = "different".into();
        }
        let changes = reconcile(&svc, std::slice::from_ref(&p), &[slice], MAX_ENDPOINTS_PER_SLICE);
        assert_eq!(changes.counts(), expected, "owned by the Service: {owned}");
        if !owned {
            assert!(matches!(changes.writes[0], SliceWrite::Create(_)));
            assert!(matches!(changes.writes[1], SliceWrite::Delete(_)));
        }
    }
}

#[test]
fn reconcile_endpoint_slices_named_ports() {
    // TestReconcileEndpointSlicesNamedPorts: a named port resolving to 5 numbers → 5 slices of
    // 60, one per port number.
    let mut svc = service();
    svc.metadata.name = Some("named-port-example".into());
    let port = &mut svc.spec.as_mut().unwrap().ports.as_mut().unwrap()[0];
    port.target_port = Some(IntOrString::String("http".into()));
    port.name = None;
    let pods: Vec<Pod> = (0..300)
        .map(|i| {
            let mut p = pod(i, i % 3 != 0);
            p.spec.as_mut().unwrap().containers[0].ports = Some(vec![ContainerPort {
                name: Some("http".into()),
                container_port: 8080 + (i % 5) as i32,
                protocol: Some("TCP".into()),
                ..Default::default()
            }]);
            p
        })
        .collect();
    let changes = reconcile(&svc, &pods, &[], MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (5, 0, 0));
    let after = apply(&[], &changes);
    assert_eq!(lengths(&after), vec![60; 5]);
    let mut numbers: Vec<i32> = after
        .iter()
        .map(|s| {
            let p = &s.ports.as_ref().unwrap()[0];
            assert_eq!((p.name.as_deref(), p.protocol.as_deref(), s.address_type.as_str()), (Some(""), Some("TCP"), "IPv4"));
            p.port.unwrap()
        })
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, vec![8080, 8081, 8082, 8083, 8084]);
}

#[test]
fn reconcile_max_endpoints_per_slice() {
    // TestReconcileMaxEndpointsPerSlice
    let pods = pods(250);
    for (max, expected) in [(50, vec![50, 50, 50, 50, 50]), (80, vec![80, 80, 80, 10]), (150, vec![150, 100]), (250, vec![250]), (500, vec![250])] {
        let changes = reconcile(&service(), &pods, &[], max);
        assert_eq!(lengths(&apply(&[], &changes)), sorted(expected), "maxEndpointsPerSlice: {max}");
    }
}

#[test]
fn reconcile_endpoint_slices_metrics_scale_down() {
    // TestReconcileEndpointSlicesMetrics: 20 pods → one create; 10 of them → one update.
    let svc = service();
    let pods = pods(20);
    let slices = apply(&[], &reconcile(&svc, &pods, &[], MAX_ENDPOINTS_PER_SLICE));
    let changes = reconcile(&svc, &pods[0..10], &slices, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (0, 1, 0));
    assert_eq!(lengths(&apply(&slices, &changes)), vec![10]);
}

#[test]
fn reconciler_finalize_svc_deletion_timestamp() {
    // TestReconcilerFinalizeSvcDeletionTimestamp, through the reconciler: a Service being
    // deleted gets no new slices, but updates and deletes (and recycled creates) go through.
    let mut svc = service();
    svc.metadata.deletion_timestamp = Some(time_at(5_000));
    // Create only: none.
    assert_eq!(reconcile(&svc, &pods(5), &[], MAX_ENDPOINTS_PER_SLICE).counts(), (0, 0, 0));
    // A port change on slices that must be replaced: the create is recycled into an update.
    let live = service();
    let slices = apply(&[], &reconcile(&live, &pods(5), &[], MAX_ENDPOINTS_PER_SLICE));
    let mut other = slices.clone();
    other[0].ports = Some(vec![EndpointPort { name: Some(String::new()), port: Some(9999), protocol: Some("TCP".into()), app_protocol: None }]);
    let changes = reconcile(&svc, &pods(5), &other, MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.counts(), (0, 1, 0), "create recycled into the slice being deleted");
}

#[test]
fn reconciler_pod_missing_node() {
    // TestReconcilerPodMissingNode: pod0 on node-0 (known), pod1 on node-1 (unknown unless
    // listed). (name, publishNotReady, nodes known, existing slice, expected writes,
    // desired endpoints, expect error)
    let svc_base = service();
    let mut p0 = pod(0, true);
    p0.spec.as_mut().unwrap().node_name = Some("node-0".into());
    let p1 = pod(1, true);
    let pods = [p0, p1];
    let existing_slice = || {
        let mut s = empty_slice(1, &svc_base, "IPv4");
        s.endpoints.push(pod_to_endpoint(&pods[0], &svc_base, None));
        s.endpoints.push(pod_to_endpoint(&pods[1], &svc_base, None));
        s
    };
    type Row<'a> = (&'a str, bool, &'a [&'a str], bool, (usize, usize, usize), usize, bool);
    let rows: [Row; 6] = [
        ("Create and publishNotReady false", false, &["node-0"], false, (1, 0, 0), 1, true),
        ("Create and publishNotReady true", true, &["node-0"], false, (1, 0, 0), 2, false),
        ("Update and publishNotReady false", false, &["node-0"], true, (0, 1, 0), 1, true),
        ("Update and publishNotReady true and all nodes missing", true, &[], true, (0, 0, 0), 2, false),
        ("Update and publishNotReady true", true, &["node-0"], true, (0, 0, 0), 2, false),
        ("Update if publishNotReady false and no nodes are present", false, &[], true, (0, 1, 0), 0, true),
    ];
    for (name, publish, nodes, has_slice, writes, desired, error) in rows {
        let mut svc = svc_base.clone();
        svc.spec.as_mut().unwrap().publish_not_ready_addresses = Some(publish);
        let existing: Vec<EndpointSlice> = if has_slice {
            let mut s = existing_slice();
            for e in s.endpoints.iter_mut() {
                let c = e.conditions.as_mut().unwrap();
                c.ready = Some(true);
            }
            vec![s]
        } else {
            Vec::new()
        };
        let known = |node: &str| nodes.contains(&node).then_some(None);
        let refs: Vec<&Pod> = pods.iter().collect();
        let changes = reconcile_slices(&svc, &owner(&svc), &refs, &known, &existing, MAX_ENDPOINTS_PER_SLICE);
        assert_eq!(changes.counts(), writes, "{name}");
        let after = apply(&existing, &changes);
        assert_eq!(after.len(), 1, "{name}: one slice");
        assert_eq!(after[0].endpoints.len(), desired, "{name}: endpoints");
        assert_eq!(!changes.errors.is_empty(), error, "{name}: error");
    }
    let refs: Vec<&Pod> = pods.iter().collect();
    let changes = reconcile_slices(&svc_base, &owner(&svc_base), &refs, &|n: &str| (n == "node-0").then_some(None), &[], MAX_ENDPOINTS_PER_SLICE);
    assert_eq!(changes.errors, vec!["skipping Pod pod1 for Service test/foo: Node node-1 Not Found".to_string()]);
}

#[test]
fn pod_to_endpoint_vectors() {
    // utils_test.go TestPodToEndpoint: (pod ready, publishNotReadyAddresses, terminating) →
    // (ready, serving, terminating).
    let rows = [
        ("Ready pod", true, false, false, (true, true, false)),
        ("Ready pod + publishNotReadyAddresses", true, true, false, (true, true, false)),
        ("Unready pod", false, false, false, (false, false, false)),
        ("Unready pod + publishNotReadyAddresses", false, true, false, (true, false, false)),
        ("Ready and Terminating pod", true, false, true, (false, true, true)),
        ("Not Ready and Terminating pod", false, false, true, (false, false, true)),
    ];
    for (name, ready, publish, terminating, want) in rows {
        let mut svc = service();
        svc.spec.as_mut().unwrap().publish_not_ready_addresses = Some(publish);
        let mut p = pod(5, ready);
        if terminating {
            p.metadata.deletion_timestamp = Some(time_at(9_000));
        }
        let c = pod_to_endpoint(&p, &svc, None).conditions.unwrap();
        assert_eq!((c.ready.unwrap(), c.serving.unwrap(), c.terminating.unwrap()), want, "{name}");
    }
    // Zone from the node; hostname only when the subdomain is the Service's name.
    let svc = service();
    let mut p = pod(5, true);
    assert_eq!(pod_to_endpoint(&p, &svc, Some("us-central1-a".into())).zone.as_deref(), Some("us-central1-a"));
    p.spec.as_mut().unwrap().hostname = Some("example-hostname".into());
    assert_eq!(pod_to_endpoint(&p, &svc, None).hostname, None, "no subdomain");
    p.spec.as_mut().unwrap().subdomain = Some("foo".into());
    assert_eq!(pod_to_endpoint(&p, &svc, None).hostname.as_deref(), Some("example-hostname"));
    // Multi-IP pod: an IPv4 slice takes the IPv4 address only.
    p.status.as_mut().unwrap().pod_ips = Some(vec![PodIP { ip: "1.2.3.4".into() }, PodIP { ip: "1234::5678:0000:0000:9abc:def0".into() }]);
    p.status.as_mut().unwrap().pod_ip = Some("1.2.3.4".into());
    assert_eq!(pod_to_endpoint(&p, &svc, None).addresses, vec!["1.2.3.4".to_string()]);
}

fn tt_service(created: u64) -> Service {
    let mut s = service();
    s.metadata.name = Some("my-service".into());
    s.metadata.creation_timestamp = Some(time_at(created * 1000));
    s
}

fn tt_pod(name: &str, ready_at: u64) -> Pod {
    let mut p = pod(0, true);
    p.metadata.name = Some(name.into());
    p.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].last_transition_time = Some(time_at(ready_at * 1000));
    p
}

#[test]
fn trigger_time_tracker_vectors() {
    // trigger_time_tracker_test.go (t0..t5 one second apart; virtual seconds here).
    let t = |s: u64| Some(s * 1000);
    let compute = |tracker: &mut TriggerTimeTracker, svc: &Service, pods: &[&Pod]| tracker.compute("ttNamespace1", svc, pods);
    // TestNewServiceNoPods
    let mut tr = TriggerTimeTracker::default();
    assert_eq!(compute(&mut tr, &tt_service(2), &[]), t(2));
    // TestNewServiceExistingPods: the Service's creation, although pods changed before.
    let mut tr = TriggerTimeTracker::default();
    let (p1, p2, p3) = (tt_pod("pod1", 0), tt_pod("pod2", 1), tt_pod("pod3", 5));
    assert_eq!(compute(&mut tr, &tt_service(3), &[&p1, &p2, &p3]), t(3));
    // TestPodsAdded
    let mut tr = TriggerTimeTracker::default();
    let svc = tt_service(0);
    assert_eq!(compute(&mut tr, &svc, &[]), t(0));
    let (p1, p2) = (tt_pod("pod1", 2), tt_pod("pod2", 1));
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2]), t(1));
    // TestPodsUpdated
    let mut tr = TriggerTimeTracker::default();
    let (p1, p2, p3) = (tt_pod("pod1", 1), tt_pod("pod2", 2), tt_pod("pod3", 3));
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2, &p3]), t(0));
    let (p1, p2) = (tt_pod("pod1", 5), tt_pod("pod2", 4));
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2, &p3]), t(4));
    // TestPodsUpdatedNoOp
    let mut tr = TriggerTimeTracker::default();
    let (p1, p2, p3) = (tt_pod("pod1", 1), tt_pod("pod2", 2), tt_pod("pod3", 3));
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2, &p3]), t(0));
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2, &p3]), None);
    // TestPodDeletedThenAdded
    let mut tr = TriggerTimeTracker::default();
    let (p1, p2) = (tt_pod("pod1", 1), tt_pod("pod2", 2));
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2]), t(0));
    assert_eq!(compute(&mut tr, &svc, &[&p1]), None);
    let p2 = tt_pod("pod2", 4);
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2]), t(4));
    // TestServiceDeletedThenAdded
    let mut tr = TriggerTimeTracker::default();
    let (p1, p2) = (tt_pod("pod1", 1), tt_pod("pod2", 2));
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2]), t(0));
    tr.delete_service("ttNamespace1", "my-service");
    assert_eq!(compute(&mut tr, &tt_service(3), &[&p1, &p2]), t(3));
    // TestServiceUpdatedNoPodChange: a spec change cannot be dated.
    let mut tr = TriggerTimeTracker::default();
    assert_eq!(compute(&mut tr, &svc, &[&p1, &p2]), t(0));
    let mut changed = svc.clone();
    changed.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].target_port = Some(IntOrString::Int(8080));
    assert_eq!(compute(&mut tr, &changed, &[&p1, &p2]), None);
}

fn subset(ready: usize, not_ready: usize) -> EndpointSubset {
    let list = |n: usize| (n > 0).then(|| vec![EndpointAddress::default(); n]);
    EndpointSubset { addresses: list(ready), not_ready_addresses: list(not_ready), ports: None }
}

#[test]
fn truncate_endpoints_vectors() {
    // endpoints_controller_test.go TestTruncateEndpoints: subsets' ready and not-ready counts →
    // the counts kept.
    type Row<'a> = (&'a str, &'a [usize], &'a [usize], &'a [usize], &'a [usize]);
    let rows: [Row; 5] = [
        ("empty", &[], &[], &[], &[]),
        ("total endpoints < max capacity", &[50, 100, 100, 100, 100], &[50, 100, 100, 100, 100], &[50, 100, 100, 100, 100], &[50, 100, 100, 100, 100]),
        ("total endpoints = max capacity", &[100, 100, 100, 100, 100], &[100, 100, 100, 100, 100], &[100, 100, 100, 100, 100], &[100, 100, 100, 100, 100]),
        (
            "total ready endpoints < max capacity, but total endpoints > max capacity",
            &[90, 110, 50, 10, 20],
            &[101, 200, 200, 201, 298],
            &[90, 110, 50, 10, 20],
            &[73, 144, 144, 145, 214],
        ),
        ("total ready endpoints > max capacity", &[205, 400, 402, 400, 693], &[100, 200, 200, 200, 300], &[98, 191, 192, 191, 328], &[0, 0, 0, 0, 0]),
    ];
    for (name, ready, not_ready, want_ready, want_not_ready) in rows {
        let mut subsets: Vec<EndpointSubset> = ready.iter().zip(not_ready).map(|(r, n)| subset(*r, *n)).collect();
        let total: usize = ready.iter().chain(not_ready).sum();
        assert_eq!(truncate_endpoints(&mut subsets), total > ENDPOINTS_MAX_CAPACITY, "{name}");
        let got_ready: Vec<usize> = subsets.iter().map(|s| s.addresses.as_ref().map_or(0, Vec::len)).collect();
        let got_not_ready: Vec<usize> = subsets.iter().map(|s| s.not_ready_addresses.as_ref().map_or(0, Vec::len)).collect();
        assert_eq!((got_ready.as_slice(), got_not_ready.as_slice()), (want_ready, want_not_ready), "{name}");
    }
}

#[test]
fn sync_service_addresses() {
    // endpoints_controller_test.go TestSyncServiceAddresses: (phase, ready, terminating,
    // publishNotReadyAddresses) → (ready, unready) addresses.
    let rows = [
        ("pod running phase", "Running", true, false, false, (1, 0)),
        ("pod running phase being deleted", "Running", true, true, false, (0, 0)),
        ("pod unknown phase container ready", "Unknown", true, false, false, (1, 0)),
        ("pod unknown phase container ready being deleted", "Unknown", true, true, false, (0, 0)),
        ("pod pending phase container ready", "Pending", true, false, false, (1, 0)),
        ("pod pending phase container ready being deleted", "Pending", true, true, false, (0, 0)),
        ("pod unknown phase container not ready", "Unknown", false, false, false, (0, 1)),
        ("pod pending phase container not ready", "Pending", false, false, false, (0, 1)),
        ("pod failed phase", "Failed", false, false, false, (0, 0)),
        ("pod succeeded phase", "Succeeded", false, false, false, (0, 0)),
        ("pod running phase and tolerate unready", "Running", false, false, true, (1, 0)),
        ("pod running phase and tolerate unready being deleted", "Running", false, true, true, (1, 0)),
        ("pod unknown phase and tolerate unready", "Unknown", false, false, true, (1, 0)),
        ("pod unknown phase and tolerate unready being deleted", "Unknown", false, true, true, (1, 0)),
        ("pod pending phase and tolerate unready", "Pending", false, false, true, (1, 0)),
        ("pod pending phase and tolerate unready being deleted", "Pending", false, true, true, (1, 0)),
        ("pod failed phase and tolerate unready", "Failed", false, false, true, (0, 0)),
        ("pod succeeded phase and tolerate unready endpoints", "Succeeded", false, false, true, (0, 0)),
    ];
    for (name, phase, ready, terminating, tolerate, want) in rows {
        let mut svc = service();
        let spec = svc.spec.as_mut().unwrap();
        spec.publish_not_ready_addresses = Some(tolerate);
        spec.ports = Some(vec![ServicePort { port: 80, ..Default::default() }]);
        let mut p = pod(0, ready);
        p.status.as_mut().unwrap().phase = Some(phase.into());
        if terminating {
            p.metadata.deletion_timestamp = Some(time_at(9_000));
        }
        let subsets = endpoints_subsets(&svc, &[&p]);
        let count = |f: fn(&EndpointSubset) -> usize| subsets.iter().map(f).sum::<usize>();
        let got = (count(|s| s.addresses.as_ref().map_or(0, Vec::len)), count(|s| s.not_ready_addresses.as_ref().map_or(0, Vec::len)));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn endpoints_addresses_sort_as_byte_strings() {
    // LessEndpointAddress compares IPs as byte strings: 10.244.1.10 before 10.244.1.9.
    let svc = service();
    let mut a = pod(9, true);
    a.status.as_mut().unwrap().pod_ip = Some("10.244.1.9".into());
    a.status.as_mut().unwrap().pod_ips = Some(vec![PodIP { ip: "10.244.1.9".into() }]);
    let mut b = pod(10, true);
    b.status.as_mut().unwrap().pod_ip = Some("10.244.1.10".into());
    b.status.as_mut().unwrap().pod_ips = Some(vec![PodIP { ip: "10.244.1.10".into() }]);
    let subsets = endpoints_subsets(&svc, &[&a, &b]);
    let ips: Vec<&str> = subsets[0].addresses.as_ref().unwrap().iter().map(|a| a.ip.as_str()).collect();
    assert_eq!(ips, vec!["10.244.1.10", "10.244.1.9"]);
}
