//! A small cluster state built through the API server: one node, a Deployment with its
//! ReplicaSet and two running pods, a Service, events and a PDB — what the controllers, the
//! scheduler and the kubelet would have written.
#![allow(dead_code)]

use crate::common::Fixture;
use kubesim_api::k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStatus, Event, EventSource, ObjectReference, PodCondition, PodIP, PodStatus,
};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{resolve_resource, Object};
use kubesim_api::time::time_at;
use kubesim_apiserver::Request;
use std::sync::Arc;

pub const NODE: &str = "apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {kubernetes.io/hostname: node-1, node-role.kubernetes.io/worker: ''}
status:
  capacity: {cpu: '4', memory: 8Gi, pods: '110'}
  allocatable: {cpu: '4', memory: 8Gi, pods: '110'}
  addresses: [{type: InternalIP, address: 10.0.0.11}, {type: Hostname, address: node-1}]
  conditions: [{type: Ready, status: 'True', reason: KubeletReady, message: kubelet is posting ready status}]
  nodeInfo: {kubeletVersion: v1.34.0, osImage: kubesim, kernelVersion: 6.1.0, containerRuntimeVersion: containerd://2.0.0, machineID: m, systemUUID: s, bootID: b, kubeProxyVersion: v1.34.0, operatingSystem: linux, architecture: amd64}
";

pub const APP: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
";

pub fn req<'a>(f: &'a mut Fixture, actor: &'a Arc<str>) -> (Request<'a>, &'a mut kubesim_apiserver::ApiServer) {
    (Request { now: f.now, rng: &mut f.rng, actor }, &mut f.api)
}

/// Creates an object from YAML through the API server (as a controller would).
pub fn create(f: &mut Fixture, yaml: &str) -> Arc<Object> {
    let (docs, errs) = kubesim_api::decode::parse_documents("x.yaml", yaml);
    assert!(errs.is_empty(), "{errs:?}");
    let mut o = kubesim_api::decode::decode_document("x.yaml", &docs[0]).unwrap().remove(0);
    if o.info().unwrap().scope == kubesim_api::Scope::Namespaced && o.namespace().is_empty() {
        o.metadata_mut().namespace = Some("default".into());
    }
    let actor: Arc<str> = Arc::from("controller");
    let (mut r, api) = req(f, &actor);
    api.create(o, &mut r).unwrap()
}

pub fn set_status(f: &mut Fixture, o: Object) -> Arc<Object> {
    let actor: Arc<str> = Arc::from("controller");
    let (mut r, api) = req(f, &actor);
    api.update_status(o, &mut r).unwrap()
}

pub fn running_pod(f: &mut Fixture, name: &str, rs: &Object, ip: &str) -> Arc<Object> {
    let uid = rs.metadata().uid.clone().unwrap();
    let yaml = format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{app: web, pod-template-hash: 7d4b9c7f5}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: {}, uid: {uid}, controller: true, blockOwnerDeletion: true}}]\nspec:\n  containers:\n  - name: nginx\n    image: nginx:1.27\n    ports: [{{containerPort: 80}}]\n    resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n", rs.name());
    create(f, &yaml);
    let actor: Arc<str> = Arc::from("scheduler");
    {
        let (mut r, api) = req(f, &actor);
        api.bind("default", name, "node-1", &mut r).unwrap();
    }
    let info = resolve_resource("pods").unwrap();
    let pod = f.api.get(info, "default", name).unwrap();
    let Object::Pod(mut p) = (*pod).clone() else { unreachable!() };
    let started = time_at(f.now);
    p.status = Some(PodStatus {
        phase: Some("Running".into()),
        host_ip: Some("10.0.0.11".into()),
        pod_ip: Some(ip.into()),
        pod_ips: Some(vec![PodIP { ip: ip.into() }]),
        start_time: Some(started.clone()),
        qos_class: Some("Burstable".into()),
        conditions: Some(
            ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
                .iter()
                .map(|t| PodCondition { type_: t.to_string(), status: "True".into(), last_transition_time: Some(started.clone()), ..Default::default() })
                .collect(),
        ),
        container_statuses: Some(vec![ContainerStatus {
            name: "nginx".into(),
            image: "docker.io/library/nginx:1.27".into(),
            image_id: "docker.io/library/nginx@sha256:0123".into(),
            container_id: Some(format!("containerd://{name}")),
            ready: true,
            started: Some(true),
            restart_count: 0,
            state: Some(ContainerState { running: Some(ContainerStateRunning { started_at: Some(started) }), ..Default::default() }),
            ..Default::default()
        }]),
        ..Default::default()
    });
    set_status(f, Object::Pod(p))
}

#[allow(clippy::too_many_arguments)]
pub fn event(f: &mut Fixture, object: &Object, type_: &str, reason: &str, message: &str, component: &str, count: i32, first: u64, last: u64) {
    let e = Event {
        metadata: ObjectMeta { name: Some(format!("{}.{:x}", object.name(), f.now + first)), namespace: Some("default".into()), ..Default::default() },
        involved_object: ObjectReference {
            api_version: Some(object.api_version().into()),
            kind: Some(object.kind().into()),
            name: Some(object.name().into()),
            namespace: Some(object.namespace().into()).filter(|n: &String| !n.is_empty()),
            uid: object.metadata().uid.clone(),
            ..Default::default()
        },
        reason: Some(reason.into()),
        message: Some(message.into()),
        source: Some(EventSource { component: Some(component.into()), host: None }),
        first_timestamp: Some(time_at(first)),
        last_timestamp: Some(time_at(last)),
        count: Some(count),
        type_: Some(type_.into()),
        ..Default::default()
    };
    let actor: Arc<str> = Arc::from(component);
    let (mut r, api) = req(f, &actor);
    api.create(Object::Event(Box::new(e)), &mut r).unwrap();
}

/// Node, Deployment web (revision 1 ReplicaSet with two running pods), Service web, events.
/// Virtual time ends at 5 minutes.
pub fn cluster() -> Fixture {
    let mut f = Fixture::new();
    let node = create(&mut f, NODE);
    let mut n = (*node).clone();
    if let Object::Node(node) = &mut n {
        node.status =
            kubesim_api::decode::decode_document("n", &kubesim_api::decode::parse_documents("n", NODE).0[0]).unwrap()[0].as_node().unwrap().status.clone();
    }
    set_status(&mut f, n);
    for r in f.apply("app.yaml", APP, "default") {
        assert!(r.outcome.is_ok(), "{r:?}");
    }
    f.now = 2_000;
    let dep = f.get("deployments", "default", "web").unwrap();
    let rs_yaml = format!("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-7d4b9c7f5\n  labels: {{app: web, pod-template-hash: 7d4b9c7f5}}\n  annotations: {{deployment.kubernetes.io/revision: '1', deployment.kubernetes.io/desired-replicas: '2', deployment.kubernetes.io/max-replicas: '3'}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, uid: {}, controller: true, blockOwnerDeletion: true}}]\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: web, pod-template-hash: 7d4b9c7f5}}}}\n  template:\n    metadata: {{labels: {{app: web, pod-template-hash: 7d4b9c7f5}}}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.27\n        ports: [{{containerPort: 80}}]\n        resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n", dep.metadata().uid.clone().unwrap());
    let rs = create(&mut f, &rs_yaml);
    let mut rs2 = (*rs).clone();
    if let Object::ReplicaSet(r) = &mut rs2 {
        r.status = Some(kubesim_api::k8s_openapi::api::apps::v1::ReplicaSetStatus {
            replicas: 2,
            ready_replicas: Some(2),
            available_replicas: Some(2),
            fully_labeled_replicas: Some(2),
            observed_generation: Some(1),
            ..Default::default()
        });
    }
    let rs = set_status(&mut f, rs2);
    // Deployment revision annotation and status.
    let mut d = (*dep).clone();
    d.metadata_mut().annotations.get_or_insert_with(Default::default).insert("deployment.kubernetes.io/revision".into(), "1".into());
    f.update(d);
    let dep = f.get("deployments", "default", "web").unwrap();
    let mut d = (*dep).clone();
    if let Object::Deployment(d) = &mut d {
        d.status = Some(kubesim_api::k8s_openapi::api::apps::v1::DeploymentStatus {
            replicas: Some(2),
            updated_replicas: Some(2),
            ready_replicas: Some(2),
            available_replicas: Some(2),
            observed_generation: d.metadata.generation,
            conditions: Some(vec![
                kubesim_api::k8s_openapi::api::apps::v1::DeploymentCondition {
                    type_: "Available".into(),
                    status: "True".into(),
                    reason: Some("MinimumReplicasAvailable".into()),
                    message: Some("Deployment has minimum availability.".into()),
                    ..Default::default()
                },
                kubesim_api::k8s_openapi::api::apps::v1::DeploymentCondition {
                    type_: "Progressing".into(),
                    status: "True".into(),
                    reason: Some("NewReplicaSetAvailable".into()),
                    message: Some("ReplicaSet \"web-7d4b9c7f5\" has successfully progressed.".into()),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        });
    }
    set_status(&mut f, d);
    f.now = 4_000;
    let p1 = running_pod(&mut f, "web-7d4b9c7f5-abcde", &rs, "10.244.0.5");
    let _p2 = running_pod(&mut f, "web-7d4b9c7f5-fghij", &rs, "10.244.0.6");
    let dep = f.get("deployments", "default", "web").unwrap();
    event(&mut f, &dep, "Normal", "ScalingReplicaSet", "Scaled up replica set web-7d4b9c7f5 from 0 to 2", "deployment-controller", 1, 2_000, 2_000);
    event(&mut f, &p1, "Normal", "Scheduled", "Successfully assigned default/web-7d4b9c7f5-abcde to node-1", "default-scheduler", 1, 4_000, 4_000);
    event(&mut f, &p1, "Normal", "Pulled", "Container image \"nginx:1.27\" already present on machine", "kubelet", 1, 5_000, 5_000);
    event(&mut f, &p1, "Warning", "Unhealthy", "Readiness probe failed: connection refused", "kubelet", 3, 10_000, 40_000);
    f.now = 300_000;
    f
}
