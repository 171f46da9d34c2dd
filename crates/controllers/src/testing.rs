//! The controllers' test world (a [`Runtime`] with namespace `default`), plus stand-ins for the
//! kubelet, the scheduler and node heartbeats so controllers can be tested alone.

use kubesim_api::k8s_openapi::api::core::v1::{Namespace, Pod, PodCondition};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiServer, DeleteOptions};
use kubesim_runtime::{Component, Ctx, Interest, Placement, Runtime, RuntimeConfig, WatchEvent, WatchFilter};
use kubesim_store::EventType;
use std::sync::Arc;

/// The test world: the one component runtime (`kubesim-runtime`: the same queue, watch
/// latency, filtered-watch semantics and history the simulation uses) with namespace `default`
/// and the components under test.
pub struct TestWorld {
    runtime: Runtime,
}

impl TestWorld {
    /// A world with namespace "default" and the given components started.
    pub fn new(components: Vec<Box<dyn Component>>) -> TestWorld {
        let mut w = TestWorld { runtime: Runtime::new(RuntimeConfig::seeded(7)) };
        w.create(Object::Namespace(Box::new(Namespace { metadata: ObjectMeta { name: Some("default".into()), ..Default::default() }, ..Default::default() })))
            .unwrap();
        for c in components {
            w.add(c);
        }
        w
    }

    /// Adds a node's machine (for controllers that act on a node's filesystem).
    pub fn add_host(&mut self, name: &str) {
        let index = self.runtime.hosts().len() as u32;
        self.runtime.add_host(kubesim_runtime::Host::new(name, index));
    }

    /// Registers and starts a component.
    pub fn add(&mut self, c: Box<dyn Component>) {
        self.runtime.add_component(c, Placement::ControlPlane);
    }

    /// Virtual now.
    pub fn now(&self) -> Millis {
        self.runtime.now()
    }

    /// The API server.
    pub fn api(&self) -> &ApiServer {
        self.runtime.api()
    }

    /// A component by actor name, as its type.
    pub fn component_mut<T: 'static>(&mut self, name: &str) -> &mut T {
        self.runtime.component_as_mut::<T>(name).expect("no such component")
    }

    /// A Ctx for direct calls as "kubectl".
    pub fn as_user<T>(&mut self, f: impl FnOnce(&mut Ctx) -> T) -> T {
        self.runtime.as_actor("kubectl", f)
    }

    /// A Ctx for direct calls as another actor (a controller's sync called by a test).
    pub fn as_actor<T>(&mut self, actor: &str, f: impl FnOnce(&mut Ctx) -> T) -> T {
        self.runtime.as_actor(actor, f)
    }

    /// POST as kubectl.
    pub fn create(&mut self, o: Object) -> kubesim_apiserver::error::Result<Arc<Object>> {
        self.as_user(|ctx| ctx.create(o))
    }

    /// Runs until virtual time `until`.
    pub fn run_until(&mut self, until: Millis) {
        self.runtime.run_until(until);
    }

    /// Runs for `ms` more.
    pub fn run_for(&mut self, ms: Millis) {
        let until = self.now() + ms;
        self.run_until(until);
    }

    /// Lists objects of a resource in a namespace.
    pub fn list(&self, resource: (&'static str, &'static str), ns: &str) -> Vec<Arc<Object>> {
        self.api().store().list(resource, Some(ns)).cloned().collect()
    }

    /// Gets an object.
    pub fn get(&self, resource: (&'static str, &'static str), ns: &str, name: &str) -> Option<Arc<Object>> {
        self.api().store().get(resource, ns, name).cloned()
    }

    /// Events' reasons and messages, in creation order.
    pub fn events(&self) -> Vec<(String, String)> {
        let mut events: Vec<_> = self
            .api()
            .store()
            .list(("", "events"), None)
            .filter_map(|o| match o.as_ref() {
                Object::Event(e) => {
                    Some((o.resource_version().parse::<u64>().unwrap_or(0), e.reason.clone().unwrap_or_default(), e.message.clone().unwrap_or_default()))
                }
                _ => None,
            })
            .collect();
        events.sort();
        events.into_iter().map(|(_, r, m)| (r, m)).collect()
    }
}

/// A kubelet stand-in: binds new pods to `node-1`, marks them Running+Ready after `start_ms`,
/// and finishes graceful deletions after `stop_ms`.
#[derive(Clone)]
pub struct FakeKubelet {
    /// Delay before a pod is Ready.
    pub start_ms: Millis,
    /// Delay before a terminating pod is removed.
    pub stop_ms: Millis,
    pending: std::collections::BTreeMap<u64, (u8, String, String)>,
    next: u64,
    /// Pods whose readiness is withheld (by name prefix).
    pub never_ready_prefix: Option<String>,
    /// Run-to-completion pods (restartPolicy Never/OnFailure) finish this long after starting.
    pub run_ms: Millis,
    /// Run-to-completion pods whose name starts with this fail (with `exit_code`).
    pub fail_prefix: Option<String>,
    /// The exit code of failing containers.
    pub exit_code: i32,
    /// More failing name prefixes.
    pub fail_prefixes: Vec<String>,
    /// When set, only run-to-completion pods with this name prefix ever finish.
    pub finish_prefix: Option<String>,
}

impl FakeKubelet {
    /// A kubelet with the given delays.
    pub fn new(start_ms: Millis, stop_ms: Millis) -> FakeKubelet {
        FakeKubelet {
            start_ms,
            stop_ms,
            pending: Default::default(),
            next: 1,
            never_ready_prefix: None,
            run_ms: 5000,
            fail_prefix: None,
            exit_code: 1,
            fail_prefixes: Vec::new(),
            finish_prefix: None,
        }
    }
}

impl Component for FakeKubelet {
    fn name(&self) -> &str {
        "kubelet/node-1"
    }
    fn interests(&self) -> Vec<Interest> {
        vec![Interest { resource: ("", "pods"), filter: WatchFilter::All }]
    }
    fn start(&mut self, _ctx: &mut Ctx) {}
    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        let Some(pod) = event.object.as_pod() else { return };
        let key = (pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default());
        match event.event_type {
            EventType::Added => {
                let token = self.next;
                self.next += 1;
                self.pending.insert(token, (0, key.0, key.1));
                ctx.after(self.start_ms, token);
            }
            EventType::Modified if pod.metadata.deletion_timestamp.is_some() => {
                let token = self.next;
                self.next += 1;
                self.pending.insert(token, (1, key.0, key.1));
                ctx.after(self.stop_ms, token);
            }
            _ => {}
        }
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let Some((what, ns, name)) = self.pending.remove(&token) else { return };
        let info = kind_info("v1", "Pod").unwrap();
        if what == 2 {
            let Ok(current) = ctx.api.get(info, &ns, &name) else { return };
            let mut pod: Pod = current.as_pod().unwrap().clone();
            if self.finish_prefix.as_ref().is_some_and(|p| !name.starts_with(p.as_str())) {
                return;
            }
            let fail =
                self.fail_prefix.as_ref().is_some_and(|p| name.starts_with(p.as_str())) || self.fail_prefixes.iter().any(|p| name.starts_with(p.as_str()));
            let code = if fail { self.exit_code } else { 0 };
            let containers: Vec<String> = pod.spec.as_ref().map(|s| s.containers.iter().map(|c| c.name.clone()).collect()).unwrap_or_default();
            let status = pod.status.get_or_insert_with(Default::default);
            status.phase = Some(if fail { "Failed" } else { "Succeeded" }.into());
            status.container_statuses = Some(
                containers
                    .into_iter()
                    .map(|c| kubesim_api::k8s_openapi::api::core::v1::ContainerStatus {
                        name: c,
                        state: Some(kubesim_api::k8s_openapi::api::core::v1::ContainerState {
                            terminated: Some(kubesim_api::k8s_openapi::api::core::v1::ContainerStateTerminated {
                                exit_code: code,
                                reason: Some(if fail { "Error" } else { "Completed" }.into()),
                                ..Default::default()
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    })
                    .collect(),
            );
            for c in status.conditions.iter_mut().flatten() {
                if c.type_ == "Ready" {
                    c.status = "False".into();
                    c.reason = Some("PodCompleted".into());
                    c.last_transition_time = Some(time_at(ctx.now));
                }
            }
            let _ = ctx.update_status(Object::Pod(Box::new(pod)));
            return;
        }
        if what == 0 {
            if self.never_ready_prefix.as_ref().is_some_and(|p| name.starts_with(p.as_str())) {
                return;
            }
            let Ok(current) = ctx.api.get(info, &ns, &name) else { return };
            if current.metadata().deletion_timestamp.is_some() {
                return;
            }
            let mut pod: Pod = current.as_pod().unwrap().clone();
            if pod.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_none() {
                if ctx.bind(&ns, &name, "node-1").is_err() {
                    return;
                }
                pod = ctx.api.get(info, &ns, &name).unwrap().as_pod().unwrap().clone();
            }
            let now = time_at(ctx.now);
            let mut status = pod.status.clone().unwrap_or_default();
            status.phase = Some("Running".into());
            status.start_time.get_or_insert_with(|| time_at(ctx.now));
            status.pod_ip.get_or_insert_with(|| format!("10.244.0.{}", 10 + token));
            status.host_ip.get_or_insert_with(|| "172.18.0.2".to_string());
            let conds = status.conditions.get_or_insert_with(Vec::new);
            conds.retain(|c| c.type_ != "Ready");
            conds.push(PodCondition { type_: "Ready".into(), status: "True".into(), last_transition_time: Some(now), ..Default::default() });
            let run_to_completion = pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()).is_some_and(|p| p != "Always");
            pod.status = Some(status);
            let _ = ctx.update_status(Object::Pod(Box::new(pod)));
            if run_to_completion {
                let token = self.next;
                self.next += 1;
                self.pending.insert(token, (2, ns, name));
                ctx.after(self.run_ms, token);
            }
        } else {
            let _ = ctx.delete(info, &ns, &name, DeleteOptions { grace_period_seconds: Some(0), ..Default::default() });
        }
    }
}

/// A scheduler stand-in: binds new pods pinned by node affinity (`metadata.name In [n]`) to
/// that node at once.
#[derive(Clone, Default)]
pub struct FakeScheduler;

impl Component for FakeScheduler {
    fn name(&self) -> &str {
        "scheduler"
    }
    fn interests(&self) -> Vec<Interest> {
        vec![Interest { resource: ("", "pods"), filter: WatchFilter::All }]
    }
    fn start(&mut self, _ctx: &mut Ctx) {}
    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        if event.event_type != EventType::Added {
            return;
        }
        let Some(pod) = event.object.as_pod() else { return };
        if pod.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some() {
            return;
        }
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref())
            .and_then(|r| r.node_selector_terms.first())
            .and_then(|t| t.match_fields.as_ref())
            .and_then(|f| f.first())
            .and_then(|r| r.values.as_ref())
            .and_then(|v| v.first().cloned());
        if let Some(node) = node {
            let _ = ctx.bind(pod.metadata.namespace.as_deref().unwrap_or(""), pod.metadata.name.as_deref().unwrap_or(""), &node);
        }
    }
    fn on_timer(&mut self, _token: u64, _ctx: &mut Ctx) {}
}

/// Posts Ready=True heartbeats (node status) every 10 s for the listed nodes.
#[derive(Clone)]
pub struct FakeHeartbeat {
    /// Nodes kept alive.
    pub nodes: Vec<String>,
}

impl Component for FakeHeartbeat {
    fn name(&self) -> &str {
        "kubelet/heartbeat"
    }
    fn interests(&self) -> Vec<Interest> {
        Vec::new()
    }
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.after_periodic(10_000, 1);
    }
    fn on_watch(&mut self, _event: &WatchEvent, _ctx: &mut Ctx) {}
    fn on_timer(&mut self, _token: u64, ctx: &mut Ctx) {
        let info = kind_info("v1", "Node").unwrap();
        for name in self.nodes.clone() {
            let Ok(current) = ctx.api.get(info, "", &name) else { continue };
            let mut node = current.as_node().unwrap().clone();
            for c in node.status.as_mut().and_then(|s| s.conditions.as_mut()).into_iter().flatten() {
                if c.type_ == "Ready" {
                    c.status = "True".into();
                    c.last_heartbeat_time = Some(time_at(ctx.now));
                }
            }
            let _ = ctx.update_status(Object::Node(Box::new(node)));
        }
        ctx.after_periodic(10_000, 1);
    }
}
