//! The world: one virtual clock, one seeded RNG, one API server and every component, driven by
//! one event queue ordered by (virtual time, sequence number). [`World::step`] runs the next
//! event; everything else (the CLI, the UI, tests) is a loop around it.
//!
//! Guarantees: the same seed and inputs give the same history, byte for byte, on every
//! platform — no wall clock, no hashing order, one RNG, and a total order on queue entries.

use crate::cluster::{bootstrap_objects, default_nodes};
use kubesim_api::k8s_openapi::api::core::v1::Node;
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiServer, Component, Ctx, Interest, Note, Request, SimRng, TimerRequest, WatchEvent, WatchFilter};
use kubesim_kubelet::{Kubelet, NodeSetup};
use kubesim_store::{Commit, EventType, Resource};
use rand_core::SeedableRng;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Watch delivery latency: commit → watcher notified (virtual ms).
pub const WATCH_LATENCY_MS: Millis = 2;
/// Service annotation: requests per second the Service receives (the load model).
pub const LOAD_ANNOTATION: &str = "kubesim.dev/load";
/// Service annotation: CPU each request costs the pod serving it (a quantity, default 2m).
pub const CPU_PER_REQUEST_ANNOTATION: &str = "kubesim.dev/cpu-per-request";
/// metrics-server resolution: how often pod usage is scraped from the kubelets (15 s).
pub const METRICS_RESOLUTION_MS: Millis = 15_000;
/// etcd compaction interval (kube-apiserver --etcd-compaction-interval).
pub const COMPACTION_INTERVAL_MS: Millis = 5 * 60_000;

/// What happens at a point of the queue.
#[derive(Clone, Debug)]
enum Item {
    Timer { component: usize, token: u64 },
    Deliver(Box<Commit>),
    Command(String),
    Compact,
    ScrapeMetrics,
}

#[derive(Clone, Debug)]
struct Queued {
    item: Item,
    periodic: bool,
}

/// One committed write, as `--trace` prints it.
#[derive(Clone, Debug)]
pub struct TraceRecord {
    /// Virtual ms since start.
    pub t_ms: Millis,
    /// The commit's revision.
    pub revision: u64,
    /// ADDED / MODIFIED / DELETED.
    pub event_type: EventType,
    /// Who wrote it.
    pub actor: Arc<str>,
    /// The object after the write.
    pub object: Arc<Object>,
}

impl TraceRecord {
    /// The JSON line of `--trace`.
    pub fn to_json_line(&self) -> String {
        let value = serde_json::json!({
            "t_ms": self.t_ms,
            "resourceVersion": self.revision.to_string(),
            "type": self.event_type.as_str(),
            "actor": &*self.actor,
            "object": self.object.to_json(),
        });
        serde_json::to_string(&value).expect("trace records serialize")
    }
}

/// How many watch deliveries [`World::deliveries`] keeps at least (memory bound at scale).
pub const DELIVERY_HISTORY: usize = 100_000;

/// One watch notification delivered to a component: the informer side of a write. The
/// flow view animates these from the API server to the watcher.
#[derive(Clone, Debug)]
pub struct WatchDelivery {
    /// Virtual ms of delivery (the write's time plus the watch latency).
    pub t_ms: Millis,
    /// The revision of the commit delivered (find the object in [`World::trace`]).
    pub revision: u64,
    /// The event as the watcher saw it (a field-filtered watch turns MODIFIED into ADDED or
    /// DELETED when the object enters or leaves the selection).
    pub event_type: EventType,
    /// The watching component (`replicaset-controller`, `kubelet/node-1`, ...).
    pub component: Arc<str>,
}

/// The output of one command issued with `--at` (or from the UI console).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandRecord {
    /// When it ran.
    pub t_ms: Millis,
    /// The command line.
    pub line: String,
    /// What it printed.
    pub stdout: String,
    /// Its errors.
    pub stderr: String,
    /// Its exit status.
    pub exit_code: i32,
}

/// How a world is built.
#[derive(Clone, Debug)]
pub struct WorldConfig {
    /// The seed of the one RNG.
    pub seed: u64,
    /// Record the trace and notes (off for benchmarks at scale).
    pub record_history: bool,
    /// Write the scheduler's explanation annotations on pods (large per-node JSON; off at scale).
    pub scheduler_annotations: bool,
    /// Keep every scheduling attempt's full explanation for the UI (off at scale).
    pub scheduler_history: bool,
    /// A `KubeSchedulerConfiguration` document for the scheduler.
    pub scheduler_config: Option<serde_json::Value>,
    /// How many commits the store keeps for watches from an older revision.
    pub watch_history: usize,
}

impl WorldConfig {
    /// The defaults for a seed: history on, annotations on, default scheduler profile.
    pub fn seeded(seed: u64) -> WorldConfig {
        WorldConfig { seed, record_history: true, scheduler_annotations: true, scheduler_history: true, scheduler_config: None, watch_history: 20_000 }
    }
}

/// The simulation.
///
/// `Clone` gives an independent world whose future is bit-identical to the original's (the
/// queue, the RNG state, the store, every component's caches and timers, and the recorded
/// history are copied; objects are shared `Arc`s, immutable once committed). The UI keeps
/// clones as time-travel snapshots.
#[derive(Clone)]
pub struct World {
    now: Millis,
    seq: u64,
    queue: BTreeMap<(Millis, u64), Queued>,
    non_periodic: usize,
    rng: SimRng,
    api: ApiServer,
    components: Vec<Box<dyn Component>>,
    /// Each component's name, as the actor of its writes and the receiver of its watch events
    /// (kept so that handlers and deliveries share it instead of allocating it each time).
    actors: Vec<Arc<str>>,
    kubelets: BTreeMap<String, usize>,
    watch_all: BTreeMap<Resource, Vec<(usize, Interest)>>,
    watch_node_pods: BTreeMap<String, Vec<usize>>,
    trace: Vec<TraceRecord>,
    notes: Vec<Note>,
    deliveries: Vec<WatchDelivery>,
    deliveries_dropped: usize,
    commands: Vec<CommandRecord>,
    record_history: bool,
    seed: u64,
    last_compaction_revision: u64,
    node_count: u32,
    files: BTreeMap<String, String>,
}

impl World {
    /// An empty world at virtual time 0: the API server with its built-in namespaces, the
    /// controllers and the scheduler. Add nodes with [`World::add_nodes`] (or
    /// [`World::add_default_nodes`]).
    pub fn new(seed: u64) -> World {
        World::build(WorldConfig::seeded(seed)).expect("the default configuration is valid")
    }

    /// A world from a configuration; fails only for an invalid scheduler configuration.
    pub fn build(config: WorldConfig) -> Result<World, String> {
        let seed = config.seed;
        let scheduler = match &config.scheduler_config {
            Some(value) => kubesim_scheduler::Scheduler::from_config(value)?,
            None => kubesim_scheduler::Scheduler::new(),
        }
        .with_annotations(config.scheduler_annotations)
        .with_history(config.scheduler_history);
        let mut world = World {
            now: 0,
            seq: 0,
            queue: BTreeMap::new(),
            non_periodic: 0,
            rng: SimRng::seed_from_u64(seed),
            api: ApiServer::with_store(kubesim_store::Store::new(config.watch_history)),
            components: Vec::new(),
            actors: Vec::new(),
            kubelets: BTreeMap::new(),
            watch_all: BTreeMap::new(),
            watch_node_pods: BTreeMap::new(),
            trace: Vec::new(),
            notes: Vec::new(),
            deliveries: Vec::new(),
            deliveries_dropped: 0,
            commands: Vec::new(),
            record_history: config.record_history,
            seed,
            last_compaction_revision: 0,
            node_count: 0,
            files: BTreeMap::new(),
        };
        for object in bootstrap_objects() {
            world.as_actor("apiserver", |ctx| {
                ctx.create(object).expect("bootstrap objects are valid");
            });
        }
        for controller in kubesim_controllers::controllers() {
            world.add_component(controller);
        }
        world.add_component(Box::new(scheduler));
        world.push(COMPACTION_INTERVAL_MS, Item::Compact, true);
        world.push(METRICS_RESOLUTION_MS, Item::ScrapeMetrics, true);
        Ok(world)
    }

    /// Turns off recording of the trace and notes (benchmarks at scale).
    pub fn set_record_history(&mut self, record: bool) {
        self.record_history = record;
    }

    /// The seed this world was created with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Replaces the scheduler (a custom KubeSchedulerConfiguration).
    pub fn replace_component(&mut self, name: &str, component: Box<dyn Component>) {
        if let Some(i) = self.components.iter().position(|c| c.name() == name) {
            self.actors[i] = component.name().into();
            self.components[i] = component;
        }
    }

    /// Registers and starts a component now.
    pub fn add_component(&mut self, component: Box<dyn Component>) -> usize {
        let index = self.components.len();
        for interest in component.interests() {
            match &interest.filter {
                WatchFilter::PodsOnNode(node) => self.watch_node_pods.entry(node.clone()).or_default().push(index),
                _ => self.watch_all.entry(interest.resource).or_default().push((index, interest)),
            }
        }
        self.actors.push(component.name().into());
        self.components.push(component);
        self.with_component(index, |component, ctx| component.start(ctx));
        index
    }

    /// Adds the built-in default cluster: node-1..3, 4 cpu / 8Gi / 110 pods, zones a/b/c.
    pub fn add_default_nodes(&mut self) {
        for node in default_nodes() {
            self.add_kubelet(node, true);
        }
    }

    /// Adds nodes from input Node objects: kubectl creates each, then its kubelet starts.
    pub fn add_nodes(&mut self, nodes: Vec<Node>) -> Vec<String> {
        let mut errors = Vec::new();
        for node in nodes {
            let name = node.metadata.name.clone().unwrap_or_default();
            let result = self.as_actor("kubectl", |ctx| ctx.create(Object::Node(Box::new(node.clone()))));
            match result {
                Ok(_) => self.add_kubelet(node, false),
                Err(e) => errors.push(format!("Error from server ({}): error when creating node {name:?}: {}", e.reason, e.message)),
            }
        }
        errors
    }

    /// Adds one node that registers itself through its kubelet (benchmarks, generated clusters).
    pub fn add_node(&mut self, node: Node) {
        self.add_kubelet(node, true);
    }

    fn add_kubelet(&mut self, node: Node, register: bool) {
        let name = node.metadata.name.clone().unwrap_or_default();
        let setup = NodeSetup { name: name.clone(), index: self.node_count, register: register.then_some(node) };
        self.node_count += 1;
        let index = self.add_component(Box::new(Kubelet::new(setup)));
        self.kubelets.insert(name, index);
    }

    /// Virtual now (ms).
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The API server (read access for kubectl, the UI and tests).
    pub fn api(&self) -> &ApiServer {
        &self.api
    }

    /// The recorded trace (every committed write, in commit order).
    pub fn trace(&self) -> &[TraceRecord] {
        &self.trace
    }

    /// The recorded non-API messages (CRI calls, PLEG relists, ...).
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The most recent watch notifications (lease heartbeats left out), in delivery order. Only
    /// the last [`DELIVERY_HISTORY`]..2× that many are kept; [`World::deliveries_dropped`] counts
    /// the older ones, so `dropped + index` numbers every delivery since the start.
    pub fn deliveries(&self) -> &[WatchDelivery] {
        &self.deliveries
    }

    /// How many deliveries were dropped from the front of [`World::deliveries`].
    pub fn deliveries_dropped(&self) -> usize {
        self.deliveries_dropped
    }

    /// Commands run so far, with their output.
    pub fn commands(&self) -> &[CommandRecord] {
        &self.commands
    }

    /// A component by actor name (the UI downcasts it, e.g. to the scheduler).
    pub fn component(&self, name: &str) -> Option<&dyn Component> {
        self.components.iter().find(|c| c.name() == name).map(|c| c.as_ref())
    }

    /// The kubelet of a node.
    pub fn kubelet(&self, node: &str) -> Option<&Kubelet> {
        let index = *self.kubelets.get(node)?;
        self.components[index].as_any().downcast_ref::<Kubelet>()
    }

    /// The kubelet of a node, mutably (exec, faults).
    pub fn kubelet_mut(&mut self, node: &str) -> Option<&mut Kubelet> {
        let index = *self.kubelets.get(node)?;
        self.components[index].as_any_mut().downcast_mut::<Kubelet>()
    }

    /// Registers a file `kubectl ... -f PATH` commands can read (the CLI pre-reads them; the UI
    /// registers its editor text).
    pub fn add_file(&mut self, path: &str, text: &str) {
        self.files.insert(path.to_string(), text.to_string());
    }

    /// Starts kubelets for Node objects that have none (Nodes applied from input).
    pub fn adopt_nodes(&mut self) {
        let names: Vec<String> =
            self.api.store().list(("", "nodes"), None).map(|n| n.name().to_string()).filter(|name| !self.kubelets.contains_key(name)).collect();
        for name in names {
            let setup = NodeSetup { name: name.clone(), index: self.node_count, register: None };
            self.node_count += 1;
            let index = self.add_component(Box::new(Kubelet::new(setup)));
            self.kubelets.insert(name, index);
        }
    }

    /// Runs the kubectl layer with the API server, a request as actor "kubectl", the registered
    /// files and mutable access to every kubelet (logs, exec).
    pub fn with_kubectl<R>(&mut self, f: impl FnOnce(&mut ApiServer, &mut Request, &BTreeMap<String, String>, BTreeMap<String, &mut Kubelet>) -> R) -> R {
        let actor: Arc<str> = "kubectl".into();
        let kubelet_indexes: BTreeMap<usize, String> = self.kubelets.iter().map(|(n, i)| (*i, n.clone())).collect();
        let mut kubelets = BTreeMap::new();
        for (index, component) in self.components.iter_mut().enumerate() {
            if let Some(name) = kubelet_indexes.get(&index) {
                if let Some(k) = component.as_any_mut().downcast_mut::<Kubelet>() {
                    kubelets.insert(name.clone(), k);
                }
            }
        }
        let result = {
            let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
            f(&mut self.api, &mut req, &self.files, kubelets)
        };
        self.after_handler(None, Vec::new(), Vec::new());
        result
    }

    /// Node names with kubelets, in order.
    pub fn node_names(&self) -> impl Iterator<Item = &String> {
        self.kubelets.keys()
    }

    /// Queues a command (`kubectl ...` or `fault ...`) at virtual time `at_ms`.
    pub fn schedule_command(&mut self, at_ms: Millis, line: &str) {
        self.push(at_ms, Item::Command(line.to_string()), false);
    }

    /// Whether anything other than periodic housekeeping is pending.
    pub fn busy(&self) -> bool {
        self.non_periodic > 0
    }

    /// Virtual time of the next queued event.
    pub fn next_event_time(&self) -> Option<Millis> {
        self.queue.keys().next().map(|(t, _)| *t)
    }

    /// Runs the next event. Returns false when the queue is empty.
    pub fn step(&mut self) -> bool {
        let Some(((t, _), queued)) = self.queue.pop_first() else { return false };
        debug_assert!(t >= self.now, "time never runs backwards");
        self.now = t;
        if !queued.periodic {
            self.non_periodic -= 1;
        }
        match queued.item {
            Item::Timer { component, token } => self.with_component(component, |c, ctx| c.on_timer(token, ctx)),
            Item::Deliver(commit) => self.deliver(&commit),
            Item::Command(line) => {
                let _ = self.run_command(&line);
            }
            Item::ScrapeMetrics => {
                self.scrape_metrics();
                self.push(self.now + METRICS_RESOLUTION_MS, Item::ScrapeMetrics, true);
            }
            Item::Compact => {
                let revision = self.api.store().revision();
                self.api.store_mut().compact(self.last_compaction_revision);
                self.last_compaction_revision = revision;
                self.push(self.now + COMPACTION_INTERVAL_MS, Item::Compact, true);
            }
        }
        true
    }

    /// Runs every event up to and including virtual time `t_ms`, then sets the clock to it.
    pub fn run_until(&mut self, t_ms: Millis) {
        while self.next_event_time().is_some_and(|t| t <= t_ms) {
            self.step();
        }
        self.now = self.now.max(t_ms);
    }

    /// Runs until nothing but periodic work is pending, or `limit_ms` of virtual time.
    pub fn run_until_quiet(&mut self, limit_ms: Millis) {
        while self.busy() && self.next_event_time().is_some_and(|t| t <= limit_ms) {
            self.step();
        }
        if !self.busy() {
            return;
        }
        self.now = self.now.max(limit_ms);
    }

    /// Runs a command line now: `kubectl ...` or `fault ...`.
    pub fn run_command(&mut self, line: &str) -> CommandRecord {
        let trimmed = line.trim();
        let (stdout, stderr, exit_code) = if let Some(rest) = trimmed.strip_prefix("fault ") {
            match self.fault(rest.trim()) {
                Ok(out) => (out, String::new(), 0),
                Err(err) => (String::new(), err, 1),
            }
        } else {
            let rest = trimmed.strip_prefix("kubectl").unwrap_or(trimmed).trim();
            crate::commands::kubectl(self, rest)
        };
        let record = CommandRecord { t_ms: self.now, line: trimmed.to_string(), stdout, stderr, exit_code };
        self.commands.push(record.clone());
        record
    }

    fn fault(&mut self, verb: &str) -> Result<String, String> {
        let parts: Vec<&str> = verb.split_whitespace().collect();
        let kubelet_index = |world: &World, node: &str| world.kubelets.get(node).copied().ok_or_else(|| format!("fault: no node {node:?}"));
        let result = match parts.as_slice() {
            ["node-down", node] => {
                let index = kubelet_index(self, node)?;
                self.with_kubelet(index, |k, ctx| k.power_off(ctx));
                Ok(format!("node/{node} is down: its kubelet stopped and nothing runs there any more"))
            }
            ["network-partition", node] => {
                let index = kubelet_index(self, node)?;
                self.with_kubelet(index, |k, _| k.partition());
                Ok(format!("node/{node} is cut off from the API server (its containers keep running)"))
            }
            ["node-up", node] => {
                let index = kubelet_index(self, node)?;
                self.with_kubelet(index, |k, ctx| k.power_on(ctx));
                Ok(format!("node/{node} is up"))
            }
            ["kubelet-restart", node] => {
                // The kubelet process restarts: it drops its in-memory state and rebuilds it
                // from the API server and the runtime (containers keep running).
                let index = kubelet_index(self, node)?;
                self.with_kubelet(index, |k, ctx| {
                    k.partition();
                    k.power_on(ctx);
                });
                Ok(format!("kubelet on node/{node} restarted"))
            }
            ["container-crash", pod] | ["container-crash", pod, _] => {
                let (namespace, name) = match pod.split_once('/') {
                    Some((ns, n)) => (ns.to_string(), n.to_string()),
                    None => ("default".to_string(), pod.to_string()),
                };
                let node = self
                    .api
                    .store()
                    .get(("", "pods"), &namespace, &name)
                    .and_then(|o| o.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.clone()))
                    .ok_or_else(|| format!("fault: pod {namespace}/{name} is not bound to a node"))?;
                let index = kubelet_index(self, &node)?;
                let container = parts.get(2).map(|c| c.to_string());
                self.with_kubelet(index, |k, ctx| k.crash_container(&namespace, &name, container.as_deref(), ctx))
            }
            ["heal"] => {
                let names: Vec<(String, usize)> = self.kubelets.iter().map(|(n, i)| (n.clone(), *i)).collect();
                for (_, index) in names {
                    let down = self.components[index].as_any().downcast_ref::<Kubelet>().is_some_and(|k| !k.alive);
                    if down {
                        self.with_kubelet(index, |k, ctx| k.power_on(ctx));
                    }
                }
                Ok("all faults healed".to_string())
            }
            _ => Err(format!("fault: unknown fault {verb:?} (node-down NODE, node-up NODE, network-partition NODE, kubelet-restart NODE, container-crash POD [CONTAINER], heal)")),
        };
        if result.is_ok() {
            // Faults are logged in the trace too: an Event written by actor "fault".
            let subject = match parts.as_slice() {
                ["container-crash", pod, ..] => {
                    let (ns, name) = pod.split_once('/').unwrap_or(("default", pod));
                    self.api.store().get(("", "pods"), ns, name).cloned()
                }
                [_, node] => self.api.store().get(("", "nodes"), "", node).cloned(),
                _ => None,
            };
            if let Some(subject) = subject {
                let message = format!("kubesim fault injected: {verb}");
                self.as_actor("fault", |ctx| ctx.event(&subject, "Warning", "FaultInjected", message));
            }
            let target = match parts.as_slice() {
                [_, node] if parts[0] != "container-crash" => format!("kubelet/{node}"),
                _ => "cluster".to_string(),
            };
            self.notes.push(Note { t_ms: self.now, actor: "fault".into(), target, call: "fault".into(), detail: verb.to_string() });
        }
        result
    }

    /// The metrics-server model: pod usage scraped from every kubelet's runtime and served to
    /// the HPA controller (the resource metrics API). Skipped while no HPA exists.
    fn scrape_metrics(&mut self) {
        if self.api.store().count(("autoscaling", "horizontalpodautoscalers")) == 0 {
            return;
        }
        let mut metrics = BTreeMap::new();
        for index in self.kubelets.values() {
            let Some(kubelet) = self.components[*index].as_any().downcast_ref::<Kubelet>() else { continue };
            for pod in self.api.store().pods_on_node(kubelet.node_name()) {
                let uid = pod.metadata().uid.clone().unwrap_or_default();
                if let Some(usage) = kubelet.usage(&uid) {
                    metrics.insert((pod.namespace().to_string(), pod.name().to_string()), usage);
                }
            }
        }
        self.add_service_load(&mut metrics);
        if let Some(hpa) = self
            .components
            .iter_mut()
            .find(|c| c.name() == "horizontal-pod-autoscaler")
            .and_then(|c| c.as_any_mut().downcast_mut::<kubesim_controllers::hpa::HpaController>())
        {
            hpa.set_pod_metrics(metrics);
        }
    }

    /// The load model: a Service annotated `kubesim.dev/load` (requests per second) spreads
    /// that rate over its ready endpoints; each request costs `kubesim.dev/cpu-per-request`
    /// (default 2m) of CPU on the pod that serves it, on top of the pod's own usage.
    fn add_service_load(&self, metrics: &mut BTreeMap<(String, String), (i64, i64)>) {
        for service in self.api.store().list(("", "services"), None) {
            let Object::Service(svc) = service.as_ref() else { continue };
            let annotations = svc.metadata.annotations.clone().unwrap_or_default();
            let Some(rate) = annotations.get(LOAD_ANNOTATION).and_then(|r| r.trim().parse::<f64>().ok()) else { continue };
            let cost = annotations.get(CPU_PER_REQUEST_ANNOTATION).and_then(|q| kubesim_api::quantity::parse_milli(q).ok()).unwrap_or(2) as f64;
            let Some(selector) = svc.spec.as_ref().and_then(|s| s.selector.as_ref()).filter(|s| !s.is_empty()) else { continue };
            let selector = kubesim_api::selector::Selector::from_map(selector);
            let namespace = service.namespace().to_string();
            let ready: Vec<String> = self
                .api
                .store()
                .list_selected(("", "pods"), Some(&namespace), &selector)
                .iter()
                .filter_map(|o| o.as_pod())
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .filter(|p| p.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True")))
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            if ready.is_empty() {
                continue;
            }
            let share = (rate * cost / ready.len() as f64).round() as i64;
            for name in ready {
                let entry = metrics.entry((namespace.clone(), name)).or_insert((0, 0));
                entry.0 += share;
            }
        }
    }

    fn with_kubelet<R>(&mut self, index: usize, f: impl FnOnce(&mut Kubelet, &mut Ctx) -> R) -> R {
        let mut out = None;
        self.with_component(index, |component, ctx| {
            let kubelet = component.as_any_mut().downcast_mut::<Kubelet>().expect("kubelet index");
            out = Some(f(kubelet, ctx));
        });
        out.expect("the closure ran")
    }

    /// Runs `f` with a context acting as `actor` (kubectl, the API server's bootstrap, ...).
    pub fn as_actor<R>(&mut self, actor: &str, f: impl FnOnce(&mut Ctx) -> R) -> R {
        let mut timers = Vec::new();
        let mut notes = Vec::new();
        let result = {
            let mut ctx = Ctx { now: self.now, api: &mut self.api, rng: &mut self.rng, actor: actor.into(), timers: &mut timers, notes: &mut notes };
            f(&mut ctx)
        };
        self.after_handler(None, timers, notes);
        result
    }

    /// An API request context acting as `actor`, for callers that need `ApiServer` and
    /// `Request` separately (the kubectl layer).
    pub fn api_request<R>(&mut self, actor: &str, f: impl FnOnce(&mut ApiServer, &mut Request) -> R) -> R {
        let actor: Arc<str> = actor.into();
        let result = {
            let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
            f(&mut self.api, &mut req)
        };
        self.after_handler(None, Vec::new(), Vec::new());
        result
    }

    fn with_component(&mut self, index: usize, f: impl FnOnce(&mut dyn Component, &mut Ctx)) {
        let mut timers = Vec::new();
        let mut notes = Vec::new();
        {
            let component = &mut self.components[index];
            let actor = self.actors[index].clone();
            let mut ctx = Ctx { now: self.now, api: &mut self.api, rng: &mut self.rng, actor, timers: &mut timers, notes: &mut notes };
            f(component.as_mut(), &mut ctx);
        }
        self.after_handler(Some(index), timers, notes);
    }

    fn after_handler(&mut self, component: Option<usize>, timers: Vec<TimerRequest>, notes: Vec<Note>) {
        if let Some(index) = component {
            for timer in timers {
                self.push(timer.at_ms.max(self.now), Item::Timer { component: index, token: timer.token }, timer.periodic);
            }
        }
        if self.record_history {
            self.notes.extend(notes);
        }
        for commit in self.api.store_mut().drain_commits() {
            if self.record_history {
                self.trace.push(TraceRecord {
                    t_ms: commit.t_ms,
                    revision: commit.revision,
                    event_type: commit.event_type,
                    actor: commit.actor.clone(),
                    object: commit.object.clone(),
                });
            }
            let periodic = commit.resource == ("coordination.k8s.io", "leases");
            self.push(self.now + WATCH_LATENCY_MS, Item::Deliver(Box::new(commit)), periodic);
        }
    }

    fn push(&mut self, at_ms: Millis, item: Item, periodic: bool) {
        self.seq += 1;
        if !periodic {
            self.non_periodic += 1;
        }
        self.queue.insert((at_ms, self.seq), Queued { item, periodic });
    }

    fn deliver(&mut self, commit: &Commit) {
        let mut targets: Vec<(usize, EventType)> = Vec::new();
        if let Some(watchers) = self.watch_all.get(&commit.resource) {
            for (index, interest) in watchers {
                let now_selected = interest.selects(&commit.object);
                let was_selected = commit.previous.as_ref().is_some_and(|p| interest.selects(p));
                if let Some(event_type) = filtered_event(commit.event_type, was_selected, now_selected) {
                    targets.push((*index, event_type));
                }
            }
        }
        if commit.resource == ("", "pods") {
            let node_of = |o: &Object| o.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.clone());
            let new_node = node_of(&commit.object);
            let old_node = commit.previous.as_deref().and_then(node_of);
            let mut nodes: Vec<String> = new_node.iter().chain(old_node.iter()).cloned().collect();
            nodes.dedup();
            for node in nodes {
                for index in self.watch_node_pods.get(&node).cloned().unwrap_or_default() {
                    let now_selected = new_node.as_deref() == Some(node.as_str()) && commit.event_type != EventType::Deleted;
                    let was_selected = old_node.as_deref() == Some(node.as_str());
                    let now_selected = now_selected || (commit.event_type == EventType::Deleted && was_selected);
                    if let Some(event_type) = filtered_event(commit.event_type, was_selected, now_selected) {
                        targets.push((index, event_type));
                    }
                }
            }
        }
        kubesim_api::sort::sort_by_key(&mut targets, |(index, _)| *index);
        let record = self.record_history && commit.resource != ("coordination.k8s.io", "leases");
        for (index, event_type) in targets {
            if record {
                if self.deliveries.len() >= 2 * DELIVERY_HISTORY {
                    self.deliveries.drain(..DELIVERY_HISTORY);
                    self.deliveries_dropped += DELIVERY_HISTORY;
                }
                self.deliveries.push(WatchDelivery { t_ms: self.now, revision: commit.revision, event_type, component: self.actors[index].clone() });
            }
            let event = WatchEvent { event_type, resource: commit.resource, object: commit.object.clone(), revision: commit.revision };
            self.with_component(index, |component, ctx| component.on_watch(&event, ctx));
        }
    }
}

/// The event a field-filtered watch reports for a commit (apiserver watch filtering).
fn filtered_event(event_type: EventType, was_selected: bool, now_selected: bool) -> Option<EventType> {
    match event_type {
        EventType::Added => now_selected.then_some(EventType::Added),
        EventType::Deleted => (was_selected || now_selected).then_some(EventType::Deleted),
        EventType::Modified => match (was_selected, now_selected) {
            (true, true) => Some(EventType::Modified),
            (false, true) => Some(EventType::Added),
            (true, false) => Some(EventType::Deleted),
            (false, false) => None,
        },
    }
}
