//! A minimal in-memory driver for the scheduler alone (tests and benchmarks): an
//! [`ApiServer`], the scheduler's watches fed from the store's commits, and its timers on a
//! virtual clock. The real simulation uses the `World` in kubesim-sim; this exists so the
//! scheduler can be exercised and measured without it.

use crate::scheduler::Scheduler;
use k8s_openapi::api::core::v1::{Container, Namespace, Node, NodeSpec, NodeStatus, Pod, PodSpec, ResourceRequirements, Taint};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::{Millis, Object};
use kubesim_apiserver::{ApiServer, Component, Ctx, Interest, Request, SimRng, TimerRequest, WatchEvent};
use rand_core::SeedableRng;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The driver.
pub struct Harness {
    /// The API server.
    pub api: ApiServer,
    /// The RNG.
    pub rng: SimRng,
    /// The scheduler under test.
    pub scheduler: Scheduler,
    /// Virtual now.
    pub now: Millis,
    timers: BTreeSet<(Millis, u64, u64, bool)>,
    seq: u64,
    interests: Vec<Interest>,
    actor: Arc<str>,
}

impl Harness {
    /// A harness with namespace `default` created.
    pub fn new(scheduler: Scheduler) -> Harness {
        Harness::with_history_capacity(scheduler, 1_000_000)
    }

    /// A harness whose store keeps at most `capacity` commits of watch history (the store's
    /// default keeps a million; benchmarks bound it as a long-running world would).
    pub fn with_history_capacity(scheduler: Scheduler, capacity: usize) -> Harness {
        let interests = scheduler.interests();
        let mut api = ApiServer::new();
        *api.store_mut() = kubesim_store::Store::new(capacity);
        let mut h =
            Harness { api, rng: SimRng::seed_from_u64(42), scheduler, now: 0, timers: BTreeSet::new(), seq: 0, interests, actor: Arc::from("scheduler") };
        h.create(Object::Namespace(Box::new(Namespace { metadata: ObjectMeta { name: Some("default".into()), ..Default::default() }, ..Default::default() })))
            .expect("namespace default");
        let mut timers = Vec::new();
        let mut notes = Vec::new();
        let mut ctx = Ctx { now: h.now, api: &mut h.api, rng: &mut h.rng, actor: h.actor.clone(), timers: &mut timers, notes: &mut notes };
        h.scheduler.start(&mut ctx);
        h.push_timers(timers);
        h
    }

    fn push_timers(&mut self, timers: Vec<TimerRequest>) {
        for t in timers {
            self.seq += 1;
            self.timers.insert((t.at_ms, self.seq, t.token, t.periodic));
        }
    }

    /// Creates an object as `kubectl`.
    pub fn create(&mut self, object: Object) -> Result<Arc<Object>, kubesim_apiserver::ApiError> {
        let actor: Arc<str> = Arc::from("kubectl");
        let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
        self.api.create(object, &mut req)
    }

    /// Deletes a pod immediately (grace 0) as `kubectl`.
    pub fn delete_pod(&mut self, namespace: &str, name: &str) {
        let actor: Arc<str> = Arc::from("kubectl");
        let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
        let info = kubesim_api::kind_info("v1", "Pod").expect("pods");
        let opts = kubesim_apiserver::DeleteOptions { grace_period_seconds: Some(0), ..Default::default() };
        let _ = self.api.delete(info, namespace, name, opts, &mut req);
    }

    /// Delivers pending commits to the scheduler; returns how many.
    pub fn deliver(&mut self) -> usize {
        let mut n = 0;
        loop {
            let commits = self.api.store_mut().drain_commits();
            if commits.is_empty() {
                return n;
            }
            for c in commits {
                if !self.interests.iter().any(|i| i.resource == c.resource && i.selects(&c.object)) {
                    continue;
                }
                n += 1;
                let event = WatchEvent { event_type: c.event_type, resource: c.resource, object: c.object, revision: c.revision };
                let mut timers = Vec::new();
                let mut notes = Vec::new();
                let mut ctx = Ctx { now: self.now, api: &mut self.api, rng: &mut self.rng, actor: self.actor.clone(), timers: &mut timers, notes: &mut notes };
                self.scheduler.on_watch(&event, &mut ctx);
                self.push_timers(timers);
            }
        }
    }

    /// Runs one timer (after delivering commits); false when only periodic timers remain
    /// or the next timer is past `deadline`.
    pub fn step(&mut self, deadline: Millis) -> bool {
        self.deliver();
        let Some(&first) = self.timers.iter().next() else { return false };
        if first.0 > deadline || self.timers.iter().all(|t| t.3) {
            return false;
        }
        self.timers.remove(&first);
        self.now = self.now.max(first.0);
        let mut timers = Vec::new();
        let mut notes = Vec::new();
        let mut ctx = Ctx { now: self.now, api: &mut self.api, rng: &mut self.rng, actor: self.actor.clone(), timers: &mut timers, notes: &mut notes };
        self.scheduler.on_timer(first.2, &mut ctx);
        self.push_timers(timers);
        self.deliver();
        true
    }

    /// Runs until nothing but periodic timers remain (or virtual `deadline`).
    pub fn run_until_idle(&mut self, deadline: Millis) {
        while self.step(deadline) {}
    }

    /// Advances virtual time to `t`, running every timer (periodic ones too) up to it.
    pub fn advance_to(&mut self, t: Millis) {
        loop {
            self.deliver();
            let Some(&first) = self.timers.iter().next() else { break };
            if first.0 > t {
                break;
            }
            self.timers.remove(&first);
            self.now = self.now.max(first.0);
            let mut timers = Vec::new();
            let mut notes = Vec::new();
            let mut ctx = Ctx { now: self.now, api: &mut self.api, rng: &mut self.rng, actor: self.actor.clone(), timers: &mut timers, notes: &mut notes };
            self.scheduler.on_timer(first.2, &mut ctx);
            self.push_timers(timers);
        }
        self.now = self.now.max(t);
        self.deliver();
    }

    /// The stored pod.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<Pod> {
        self.api.lookup(("", "pods"), namespace, name).and_then(|o| o.as_pod().cloned())
    }

    /// The node a pod is bound to.
    pub fn node_of(&self, namespace: &str, name: &str) -> Option<String> {
        self.pod(namespace, name).and_then(|p| p.spec.and_then(|s| s.node_name))
    }

    /// Messages of v1 Events with this reason, in store order.
    pub fn events(&self, reason: &str) -> Vec<String> {
        self.api
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
