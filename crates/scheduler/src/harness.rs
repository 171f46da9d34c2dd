//! A driver for the scheduler alone (tests and benchmarks): the one component runtime
//! (`kubesim-runtime`, the same event loop, watch delivery and latencies the simulation uses)
//! with the scheduler as its only component. The real simulation adds controllers and kubelets
//! on the same runtime; this exists so the scheduler can be exercised and measured without them.

use crate::scheduler::Scheduler;
use k8s_openapi::api::core::v1::{Container, Namespace, Node, NodeSpec, NodeStatus, Pod, PodSpec, ResourceRequirements, Taint};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::{Millis, Object};
use kubesim_apiserver::ApiServer;
use kubesim_runtime::{Placement, Runtime, RuntimeConfig};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The driver.
pub struct Harness {
    runtime: Runtime,
}

impl Harness {
    /// A harness with namespace `default` created.
    pub fn new(scheduler: Scheduler) -> Harness {
        Harness::with_history_capacity(scheduler, 1_000_000)
    }

    /// A harness whose store keeps at most `capacity` commits of watch history (benchmarks
    /// bound it as a long-running world would). History recording (trace, deliveries) is off:
    /// the harness measures the scheduler, not the recorder.
    pub fn with_history_capacity(scheduler: Scheduler, capacity: usize) -> Harness {
        let config = RuntimeConfig { watch_history: capacity, record_history: false, compaction_interval_ms: 0, ..RuntimeConfig::seeded(42) };
        let mut h = Harness { runtime: Runtime::new(config) };
        h.create(Object::Namespace(Box::new(Namespace { metadata: ObjectMeta { name: Some("default".into()), ..Default::default() }, ..Default::default() })))
            .expect("namespace default");
        h.runtime.add_component(Box::new(scheduler), Placement::ControlPlane);
        h
    }

    /// The scheduler under test.
    pub fn scheduler(&self) -> &Scheduler {
        self.runtime.component_as::<Scheduler>("scheduler").expect("the harness runs the scheduler")
    }

    /// The API server.
    pub fn api(&self) -> &ApiServer {
        self.runtime.api()
    }

    /// Virtual now.
    pub fn now(&self) -> Millis {
        self.runtime.now()
    }

    /// Creates an object as `kubectl`.
    pub fn create(&mut self, object: Object) -> Result<Arc<Object>, kubesim_apiserver::ApiError> {
        self.runtime.as_actor("kubectl", |ctx| ctx.create(object))
    }

    /// Updates an object as `kubectl`.
    pub fn update(&mut self, object: Object) -> Result<Arc<Object>, kubesim_apiserver::ApiError> {
        self.runtime.as_actor("kubectl", |ctx| ctx.update(object))
    }

    /// Deletes a pod immediately (grace 0) as `kubectl`.
    pub fn delete_pod(&mut self, namespace: &str, name: &str) {
        let info = kubesim_api::kind_info("v1", "Pod").expect("pods");
        let opts = kubesim_apiserver::DeleteOptions { grace_period_seconds: Some(0), ..Default::default() };
        let _ = self.runtime.as_actor("kubectl", |ctx| ctx.delete(info, namespace, name, opts));
    }

    /// Deletes any object as `kubectl` (default options).
    pub fn delete_object(&mut self, api_version: &str, kind: &str, namespace: &str, name: &str) {
        let info = kubesim_api::kind_info(api_version, kind).expect("a built-in kind");
        let _ = self.runtime.as_actor("kubectl", |ctx| ctx.delete(info, namespace, name, kubesim_apiserver::DeleteOptions::default()));
    }

    /// Runs until nothing but periodic timers remain (or virtual `deadline`).
    pub fn run_until_idle(&mut self, deadline: Millis) {
        self.runtime.run_until_quiet(deadline);
    }

    /// Advances virtual time to `t`, running everything (periodic timers too) up to it.
    pub fn advance_to(&mut self, t: Millis) {
        self.runtime.run_until(t);
    }

    /// The stored pod.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<Pod> {
        self.api().lookup(("", "pods"), namespace, name).and_then(|o| o.as_pod().cloned())
    }

    /// The node a pod is bound to.
    pub fn node_of(&self, namespace: &str, name: &str) -> Option<String> {
        self.pod(namespace, name).and_then(|p| p.spec.and_then(|s| s.node_name))
    }

    /// Messages of v1 Events with this reason, in store order.
    pub fn events(&self, reason: &str) -> Vec<String> {
        self.api()
            .store()
            .list(("", "events"), None)
            .filter_map(|o| match o.as_ref() {
                Object::Event(e) if e.reason.as_deref() == Some(reason) => e.message.clone(),
                _ => None,
            })
            .collect()
    }
}

fn quantities(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect()
}

/// A node with allocatable = capacity = the given resources (e.g. `[("cpu","4"),("memory","32Gi"),("pods","110")]`).
pub fn make_node(name: &str, resources: &[(&str, &str)], labels: &[(&str, &str)], taints: Vec<Taint>) -> Object {
    let mut l: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    l.entry("kubernetes.io/hostname".into()).or_insert_with(|| name.to_string());
    Object::Node(Box::new(Node {
        metadata: ObjectMeta { name: Some(name.into()), labels: Some(l), ..Default::default() },
        spec: Some(NodeSpec { taints: if taints.is_empty() { None } else { Some(taints) }, ..Default::default() }),
        status: Some(NodeStatus { capacity: Some(quantities(resources)), allocatable: Some(quantities(resources)), ..Default::default() }),
    }))
}

/// A pod in `default` with one container requesting (and limited to) the given resources.
pub fn make_pod(name: &str, requests: &[(&str, &str)]) -> Pod {
    let resources = if requests.is_empty() {
        None
    } else {
        Some(ResourceRequirements { requests: Some(quantities(requests)), limits: Some(quantities(requests)), ..Default::default() })
    };
    Pod {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(PodSpec {
            containers: vec![Container { name: "c".into(), image: Some("registry.k8s.io/pause:3.10".into()), resources, ..Default::default() }],
            ..Default::default()
        }),
        ..Default::default()
    }
}
