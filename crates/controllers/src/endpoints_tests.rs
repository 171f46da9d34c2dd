//! EndpointSlice / Endpoints tests.

use crate::common::decode;
use crate::endpoints::*;
use crate::testing::{FakeKubelet, TestWorld};
use kubesim_api::k8s_openapi::api::core::v1::{ContainerPort, Endpoints, Service, ServicePort, ServiceSpec};
use kubesim_api::k8s_openapi::api::discovery::v1::EndpointSlice;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::object::Object;
use std::collections::BTreeMap;

fn service() -> Service {
    Service {
        metadata: ObjectMeta { name: Some("web".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(ServiceSpec {
            selector: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
            ports: Some(vec![ServicePort { name: Some("http".into()), port: 80, target_port: Some(IntOrString::String("web".into())), ..Default::default() }]),
            ..Default::default()
        }),
        status: None,
    }
}

fn world() -> TestWorld {
    TestWorld::new(vec![
        Box::new(crate::framework::Controller(crate::deployment::DeploymentController::new())),
        Box::new(crate::framework::Controller(crate::replicaset::ReplicaSetController::new())),
        Box::new(crate::framework::Controller(EndpointSliceController::new())),
        Box::new(crate::framework::Controller(EndpointsController::new())),
        Box::new(FakeKubelet::new(2000, 1000)),
    ])
}

fn slices(w: &TestWorld) -> Vec<EndpointSlice> {
    w.list(("discovery.k8s.io", "endpointslices"), "default").iter().filter_map(|o| decode(o)).collect()
}

#[test]
fn slices_and_endpoints_follow_the_ready_pods() {
    let mut w = world();
    // The EndpointSlice controller skips pods on nodes its informer does not know.
    let node =
        kubesim_api::k8s_openapi::api::core::v1::Node { metadata: ObjectMeta { name: Some("node-1".into()), ..Default::default() }, ..Default::default() };
    w.create(Object::Node(Box::new(node))).unwrap();
    w.create(Object::Service(Box::new(service()))).unwrap();
    w.run_for(1_000);
    let s = slices(&w);
    assert_eq!(s.len(), 1, "placeholder slice");
    assert!(s[0].endpoints.is_empty() && s[0].ports.is_none());
    let mut d = crate::e2e_tests::deployment("web", 3, "nginx");
    d.spec.as_mut().unwrap().template.spec.as_mut().unwrap().containers[0].ports =
        Some(vec![ContainerPort { name: Some("web".into()), container_port: 8080, ..Default::default() }]);
    w.create(Object::Deployment(Box::new(d))).unwrap();
    w.run_for(30_000);
    let s = slices(&w);
    assert_eq!(s.len(), 1);
    let slice = &s[0];
    assert!(slice.metadata.name.as_deref().unwrap().starts_with("web-"));
    let labels = slice.metadata.labels.as_ref().unwrap();
    assert_eq!((labels[SERVICE_NAME_LABEL].as_str(), labels[MANAGED_BY_LABEL].as_str()), ("web", MANAGED_BY));
    assert_eq!(slice.metadata.owner_references.as_ref().unwrap()[0].kind, "Service");
    assert_eq!(slice.address_type, "IPv4");
    let port = &slice.ports.as_ref().unwrap()[0];
    assert_eq!((port.name.as_deref(), port.port, port.protocol.as_deref()), (Some("http"), Some(8080), Some("TCP")), "named targetPort resolved");
    assert_eq!(slice.endpoints.len(), 3);
    for e in &slice.endpoints {
        let c = e.conditions.as_ref().unwrap();
        assert_eq!((c.ready, c.serving, c.terminating), (Some(true), Some(true), Some(false)));
        assert_eq!(e.target_ref.as_ref().unwrap().kind.as_deref(), Some("Pod"));
        assert_eq!(e.node_name.as_deref(), Some("node-1"));
    }
    let ep: Endpoints = decode(&w.get(("", "endpoints"), "default", "web").unwrap()).unwrap();
    let subset = &ep.subsets.unwrap()[0];
    assert_eq!(subset.addresses.as_ref().unwrap().len(), 3);
    assert_eq!(subset.ports.as_ref().unwrap()[0].port, 8080);
    // Scale to zero: back to the placeholder; the Endpoints object has no subsets.
    let mut d = match w.get(("apps", "deployments"), "default", "web").unwrap().as_ref() {
        Object::Deployment(d) => (**d).clone(),
        _ => unreachable!(),
    };
    d.spec.as_mut().unwrap().replicas = Some(0);
    w.as_user(|ctx| ctx.update(Object::Deployment(Box::new(d)))).unwrap();
    w.run_for(1_000);
    // Terminating pods stay in the slice (ready=false, serving, terminating) while they drain.
    let s = slices(&w);
    let terminating: Vec<_> = s.iter().flat_map(|s| s.endpoints.iter()).filter(|e| e.conditions.as_ref().unwrap().terminating == Some(true)).collect();
    assert!(!terminating.is_empty());
    assert!(terminating.iter().all(|e| e.conditions.as_ref().unwrap().ready == Some(false)));
    w.run_for(30_000);
    let s = slices(&w);
    assert_eq!(s.len(), 1);
    assert!(s[0].endpoints.is_empty());
    let ep: Endpoints = decode(&w.get(("", "endpoints"), "default", "web").unwrap()).unwrap();
    assert!(ep.subsets.is_none());
}
