//! The world: the one component runtime (`kubesim-runtime`: clock, RNG, API server, event
//! queue, hosts, fabric, history) wired as a cluster — the kube-controller-manager's
//! controllers, the scheduler, the metrics-server, and per node a host with its agents — plus
//! the commands and faults a user issues. [`World::step`] runs the next event; everything else
//! (the CLI, the UI, tests) is a loop around it.
//!
//! Guarantees: the same seed and inputs give the same history, byte for byte, on every
//! platform — no wall clock, no hashing order, one RNG, and a total order on queue entries.
//!
//! Where things go: a new control-plane component is one [`World::add_component`] call in
//! [`World::build`]; a new node agent is one line in [`node_agents`]; a new fault is a
//! [`Fault`] variant and its arm in [`World::fault`].

use crate::cluster::{bootstrap_objects, default_nodes};
use crate::fault::Fault;
use kubesim_api::k8s_openapi::api::core::v1::Node;
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiServer, Request};
use kubesim_host::Host;
use kubesim_kubelet::{Kubelet, NodeSetup};
use kubesim_runtime::{Component, Ctx, Note, Placement, Runtime, RuntimeConfig, Stepped};
use std::collections::BTreeMap;

pub use crate::metrics_server::METRICS_RESOLUTION_MS;
pub use kubesim_runtime::runtime::{COMPACTION_INTERVAL_MS, DELIVERY_HISTORY, WATCH_LATENCY_MS};
pub use kubesim_runtime::{TraceRecord, WatchDelivery};

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
    /// Whether it was still running when the user stopped it (Ctrl-C): a `get -w` or a
    /// `rollout status` given until a later time ([`World::run_command_for`]).
    pub interrupted: bool,
}

/// kubeadm's default serviceSubnet.
pub const DEFAULT_SERVICE_CIDR: &str = "10.96.0.0/12";

/// Checks a service CIDR kubesim can run: an IPv4 CIDR whose first address is the `kubernetes`
/// Service's and whose tenth is kube-dns's 10.96.0.10 (what the kubelets' clusterDNS says):
/// 10.96.0.0/12 up to 10.96.0.0/28.
pub fn check_service_cidr(cidr: &str) -> Result<kubesim_apiserver::server::ServiceCidrConfig, String> {
    let config =
        kubesim_apiserver::server::ServiceCidrConfig::parse(cidr).ok_or_else(|| format!("invalid serviceSubnet {cidr:?}: an IPv4 CIDR is expected"))?;
    if config.network != kubesim_apiserver::allocator::parse_ipv4("10.96.0.0").expect("valid") || !(12..=28).contains(&config.prefix) {
        return Err(format!("serviceSubnet {cidr:?} is not supported: kubesim's kube-dns is 10.96.0.10 (the kubelets' clusterDNS), so the range must be 10.96.0.0/12 to 10.96.0.0/28"));
    }
    Ok(config)
}

/// How a world is built.
#[derive(Clone, Debug)]
pub struct WorldConfig {
    /// The seed of the one RNG.
    pub seed: u64,
    /// Record the trace and notes (off for benchmarks at scale).
    pub record_history: bool,
    /// How many of the most recent trace records and notes are kept at least
    /// ([`kubesim_runtime::runtime::TRACE_HISTORY`] by default; 0 keeps all).
    pub trace_history: usize,
    /// Keep every scheduling attempt's full explanation in the scheduler for the UI
    /// ([`crate::view::pod_detail`]; off at scale). Nothing is written to the pods.
    pub scheduler_history: bool,
    /// A `KubeSchedulerConfiguration` document for the scheduler.
    pub scheduler_config: Option<serde_json::Value>,
    /// How many commits the store keeps for watches from an older revision.
    pub watch_history: usize,
    /// Install the cluster DNS add-on (CoreDNS and the kube-dns Service), as kubeadm does.
    pub cluster_dns: bool,
    /// Write kube-scheduler-simulator's result annotations to the pods (off: kube-scheduler
    /// writes none; `--scheduler-annotations`, the browser's `?scheduler-annotations`).
    pub scheduler_annotations: bool,
    /// `--service-cluster-ip-range` (kind's `networking.serviceSubnet`): 10.96.0.0/12 by default.
    pub service_cidr: String,
    /// A cap on the world's size (the browser app sets [`BROWSER_LIMITS`]); none by default.
    pub limits: Option<kubesim_apiserver::WorldLimits>,
    /// Keep Events packed in the store, decoded when first read (the default: ~900 bytes
    /// less per Event). The browser app, whose event list reads every Event, keeps objects.
    pub pack_events: bool,
}

/// The browser app's cap: a runaway workload (a million replicas, a fork bomb of Jobs) is
/// refused with FailedCreate events naming the cap instead of freezing the tab.
pub const BROWSER_LIMITS: kubesim_apiserver::WorldLimits = kubesim_apiserver::WorldLimits { pods: 40_000, objects: 150_000 };

impl WorldConfig {
    /// The defaults for a seed: history on, scheduler history on, default scheduler profile.
    pub fn seeded(seed: u64) -> WorldConfig {
        WorldConfig {
            seed,
            record_history: true,
            trace_history: kubesim_runtime::runtime::TRACE_HISTORY,
            scheduler_history: true,
            scheduler_config: None,
            watch_history: 20_000,
            cluster_dns: true,
            scheduler_annotations: false,
            service_cidr: DEFAULT_SERVICE_CIDR.to_string(),
            limits: None,
            pack_events: true,
        }
    }
}

/// The agents every node runs, in start order. A new node agent is one more entry here. (The
/// CSI node plugins are services of the machine the kubelet calls, `kubesim_host::csi`.)
fn node_agents(setup: NodeSetup) -> Vec<Box<dyn Component>> {
    let proxy = kubesim_proxy::KubeProxy::new(&setup.name);
    vec![Box::new(Kubelet::new(setup)), Box::new(proxy)]
}

/// The simulation.
///
/// `Clone` gives an independent world whose future is bit-identical to the original's (the
/// queue, the RNG state, the store, every component's caches and timers, the hosts and the
/// recorded history are copied; objects are shared `Arc`s, immutable once committed). The UI
/// keeps clones as time-travel snapshots.
#[derive(Clone)]
pub struct World {
    runtime: Runtime<String>,
    commands: Vec<CommandRecord>,
    seed: u64,
    files: BTreeMap<String, String>,
    /// The machine the cluster runs on, created when a command first runs there.
    workstation: Option<crate::workstation::Workstation>,
    /// Node ports published on the workstation (a kind cluster's `extraPortMappings`).
    published_ports: crate::workstation::PortMappings,
    /// The shell a `minikube ssh` opened on a node: command lines run there until `exit`.
    node_shell: Option<crate::node_shell::NodeShell>,
    /// Commands running in another terminal while the world goes on (a `kubectl get -w` the
    /// docs start before the steps it shows): each polled after every event.
    background: Vec<Option<Background>>,
    /// Local ports a running `kubectl port-forward` forwards: (its background handle, where).
    forwards: BTreeMap<u16, (usize, crate::port_forward::Forward)>,
    /// Images an `image-pull-failure` fault made the registry refuse (until `heal`).
    unpullable: Vec<String>,
}

/// A kubectl command running in the background ([`World::start_background`]).
#[derive(Clone)]
struct Background {
    started: Millis,
    line: String,
    output: kubesim_kubectl::Output,
    follow: Option<kubesim_kubectl::Follow>,
    /// A `kubectl port-forward` forwarding until it is stopped.
    forwarding: bool,
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
        let scheduler = match &config.scheduler_config {
            Some(value) => kubesim_scheduler::Scheduler::from_config(value)?,
            None => kubesim_scheduler::Scheduler::new(),
        }
        .with_history(config.scheduler_history)
        .with_simulator_annotations(config.scheduler_annotations);
        let runtime_config = RuntimeConfig {
            watch_history: config.watch_history,
            record_history: config.record_history,
            trace_history: config.trace_history,
            pack_events: config.pack_events,
            ..RuntimeConfig::seeded(config.seed)
        };
        let mut world = World {
            runtime: Runtime::new(runtime_config),
            commands: Vec::new(),
            seed: config.seed,
            files: BTreeMap::new(),
            workstation: None,
            published_ports: BTreeMap::new(),
            node_shell: None,
            background: Vec::new(),
            forwards: BTreeMap::new(),
            unpullable: Vec::new(),
        };
        for checker in crate::checkers::all() {
            world.runtime.add_checker(checker);
        }
        let service_cidr = check_service_cidr(&config.service_cidr)?;
        world.runtime.set_service_cidr(service_cidr);
        world.runtime.set_limits(config.limits);
        let addons = if config.cluster_dns { crate::cluster::dns_addon_objects() } else { Vec::new() };
        for object in bootstrap_objects(&service_cidr.text()).into_iter().chain(addons) {
            world.runtime.as_actor("apiserver", |ctx| {
                ctx.create(object).expect("bootstrap objects are valid");
            });
        }
        for controller in kubesim_controllers::controllers() {
            world.add_component(controller);
        }
        world.add_component(Box::new(scheduler));
        for addon in kubesim_controllers::addons() {
            world.add_component(addon);
        }
        world.add_component(Box::new(crate::metrics_server::MetricsServer));
        if config.cluster_dns {
            world.add_component(Box::new(crate::coredns::CoreDnsInformer::default()));
        }
        world.add_component(Box::new(kubesim_netpol::PolicyInformer::default()));
        world.add_component(Box::new(crate::ingress_nginx::IngressNginx::default()));
        world.add_component(Box::new(crate::ingress_nginx::WebhookCertgen::default()));
        world.add_component(Box::new(crate::load_balancer::LoadBalancers::default()));
        Ok(world)
    }

    /// The seed this world was created with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Registers and starts a control-plane component now.
    pub fn add_component(&mut self, component: Box<dyn Component>) -> usize {
        self.runtime.add_component(component, Placement::ControlPlane)
    }

    /// Adds the built-in default cluster: node-1..3, 4 cpu / 8Gi / 110 pods, zones a/b/c.
    pub fn add_default_nodes(&mut self) {
        for node in default_nodes() {
            self.add_host(node, true);
        }
    }

    /// Adds nodes from input Node objects: kubectl creates each, then its host and agents start.
    pub fn add_nodes(&mut self, nodes: Vec<Node>) -> Vec<String> {
        let mut errors = Vec::new();
        for node in nodes {
            let name = node.metadata.name.clone().unwrap_or_default();
            let result = self.runtime.as_actor("kubectl", |ctx| ctx.create(Object::Node(Box::new(node.clone()))));
            match result {
                Ok(_) => self.add_host(node, false),
                Err(e) => errors.push(format!("Error from server ({}): error when creating node {name:?}: {}", e.reason, e.message)),
            }
        }
        errors
    }

    /// Publishes node ports on the workstation (a kind cluster's `extraPortMappings`).
    pub fn publish_ports(&mut self, ports: crate::workstation::PortMappings) {
        self.published_ports.extend(ports);
    }

    /// Adds one node that registers itself through its kubelet (benchmarks, generated clusters).
    pub fn add_node(&mut self, node: Node) {
        self.add_host(node, true);
    }

    /// A new host for a node, and its agents.
    fn add_host(&mut self, node: Node, register: bool) {
        let name = node.metadata.name.clone().unwrap_or_default();
        let index = self.runtime.hosts().len() as u32;
        self.runtime.add_host(new_host(&name, index, zone_of(&node)));
        let setup = NodeSetup { name: name.clone(), index, register: register.then_some(node) };
        for agent in node_agents(setup) {
            self.runtime.add_component(agent, Placement::Host(name.clone()));
        }
    }

    /// Starts hosts for Node objects that have none (Nodes applied from input).
    pub fn adopt_nodes(&mut self) {
        let nodes: Vec<(String, Option<String>)> = self
            .runtime
            .api()
            .store()
            .list(("", "nodes"), None)
            .filter(|n| self.runtime.host(n.name()).is_none())
            .map(|n| (n.name().to_string(), n.as_node().and_then(zone_of)))
            .collect();
        for (name, zone) in nodes {
            let index = self.runtime.hosts().len() as u32;
            self.runtime.add_host(new_host(&name, index, zone));
            for agent in node_agents(NodeSetup { name: name.clone(), index, register: None }) {
                self.runtime.add_component(agent, Placement::Host(name.clone()));
            }
        }
    }

    /// `kubectl exec` as the API server's exec subresource runs it (real clients through
    /// `kubesim serve`): the command in `pod_uid`'s running `container` on `node`, to completion.
    pub fn exec_in_pod(
        &mut self,
        node: &str,
        pod_uid: &str,
        container: &str,
        argv: &[String],
        io: kubesim_host::cri::ExecIo,
    ) -> Result<kubesim_host::cri::ExecOutput, String> {
        let id = crate::commands::exec_target(self.runtime.hosts(), node, pod_uid, container)?;
        self.runtime.exec(node, &id, argv, io).ok_or_else(|| format!("node {node:?} has no kubelet"))
    }

    /// Runs a command line in the workstation's shell (the machine the cluster runs on): see
    /// [`crate::workstation`].
    pub fn run_on_workstation(&mut self, line: &str) -> kubesim_host::cri::ExecOutput {
        let now = self.now();
        let workstation = self.workstation.get_or_insert_with(|| crate::workstation::Workstation::new(now));
        let published = &self.published_ports;
        let forwards: BTreeMap<u16, crate::port_forward::Forward> = self.forwards.iter().map(|(p, (_, f))| (*p, f.clone())).collect();
        let (output, handled) = self.runtime.with_network(|net| workstation.run(net, published, &forwards, line));
        // kubectl port-forward prints each connection it carries.
        for port in handled {
            if let Some(b) = self.forwards.get(&port).and_then(|(h, _)| self.background.get_mut(*h)).and_then(|b| b.as_mut()) {
                b.output.stdout.push_str(&format!("Handling connection for {port}\n"));
            }
        }
        output
    }

    /// Opens a shell on `node` (`minikube ssh`): the command lines that follow run there until
    /// `exit`. See [`crate::node_shell`].
    pub fn open_node_shell(&mut self, node: &str) -> Result<(), String> {
        if self.runtime.host(node).is_none_or(|h| !h.powered) {
            return Err(format!("ssh: connect to host {node} port 22: No route to host"));
        }
        self.node_shell = Some(crate::node_shell::NodeShell::new(node, self.now()));
        Ok(())
    }

    /// The node a `minikube ssh` shell is open on.
    pub fn node_shell(&self) -> Option<&str> {
        self.node_shell.as_ref().map(|s| s.node.as_str())
    }

    /// Runs a command line in a root shell on `node`: the open `minikube ssh` shell if it is on
    /// that node, else a new one for this line.
    pub fn run_on_node(&mut self, node: &str, line: &str) -> Result<kubesim_host::cri::ExecOutput, String> {
        let now = self.now();
        let open = self.node_shell.as_ref().is_some_and(|s| s.node == node);
        let mut shell = if open { self.node_shell.take().expect("checked") } else { crate::node_shell::NodeShell::new(node, now) };
        let output = self.runtime.with_network(|net| shell.run(net, line));
        if open {
            self.node_shell = Some(shell);
        }
        output.ok_or_else(|| format!("ssh: connect to host {node} port 22: No route to host"))
    }

    /// Virtual now (ms).
    pub fn now(&self) -> Millis {
        self.runtime.now()
    }

    /// The API server (read access for kubectl, the UI and tests).
    pub fn api(&self) -> &ApiServer {
        self.runtime.api()
    }

    /// The runtime underneath (hosts, fabric, metrics, components, checkers).
    pub fn runtime(&self) -> &Runtime<String> {
        &self.runtime
    }

    /// The runtime underneath, mutably (registering checkers).
    pub fn runtime_mut(&mut self) -> &mut Runtime<String> {
        &mut self.runtime
    }

    /// The recorded trace: the most recent committed writes, in commit order (see
    /// [`WorldConfig::trace_history`]).
    pub fn trace(&self) -> &[TraceRecord] {
        self.runtime.trace()
    }

    /// Drops the recorded trace, notes and deliveries, keeping their numbering (a time-travel
    /// snapshot; see [`World::rewind_history`]).
    pub fn forget_history(&mut self) {
        self.runtime.forget_history();
    }

    /// Restores the recorded history of a snapshot (a world whose history was forgotten) from
    /// `later`, the world the same run reached later.
    pub fn rewind_history(&mut self, later: &World) {
        self.runtime.rewind_history(&later.runtime);
    }

    /// How many writes were dropped from the front of [`World::trace`]: `trace_dropped() + i`
    /// numbers the `i`-th record held among every write since the start.
    pub fn trace_dropped(&self) -> usize {
        self.runtime.trace_log().dropped()
    }

    /// How many writes were recorded since the start (held or dropped).
    pub fn trace_total(&self) -> usize {
        self.runtime.trace_log().total()
    }

    /// The trace records numbered `from` (see [`World::trace_dropped`]) and later still held.
    pub fn trace_since(&self, from: usize) -> &[TraceRecord] {
        self.runtime.trace_log().since(from)
    }

    /// The recorded non-API messages (CRI calls, PLEG relists, faults, ...): the most recent
    /// ones, as many as the trace keeps.
    pub fn notes(&self) -> &[Note] {
        self.runtime.notes()
    }

    /// How many notes were recorded since the start (held or dropped).
    pub fn notes_total(&self) -> usize {
        self.runtime.notes_log().total()
    }

    /// The notes numbered `from` and later still held (numbered as [`World::trace_since`]).
    pub fn notes_since(&self, from: usize) -> &[Note] {
        self.runtime.notes_log().since(from)
    }

    /// The most recent watch notifications (see [`Runtime::deliveries`]).
    pub fn deliveries(&self) -> &[WatchDelivery] {
        self.runtime.deliveries()
    }

    /// How many deliveries were dropped from the front of [`World::deliveries`].
    pub fn deliveries_dropped(&self) -> usize {
        self.runtime.deliveries_dropped()
    }

    /// How many watch deliveries were recorded since the start (held or dropped).
    pub fn deliveries_total(&self) -> usize {
        self.runtime.deliveries_log().total()
    }

    /// The deliveries numbered `from` and later still held (numbered as [`World::trace_since`]).
    pub fn deliveries_since(&self, from: usize) -> &[WatchDelivery] {
        self.runtime.deliveries_log().since(from)
    }

    /// Commands run so far, with their output.
    pub fn commands(&self) -> &[CommandRecord] {
        &self.commands
    }

    /// A component by actor name (the UI downcasts it, e.g. to the scheduler).
    pub fn component(&self, name: &str) -> Option<&dyn Component> {
        self.runtime.component(name).map(|c| c as &dyn Component)
    }

    /// The scheduler (its attempt history explains each pod's placement).
    pub fn scheduler(&self) -> Option<&kubesim_scheduler::Scheduler> {
        self.runtime.component_as::<kubesim_scheduler::Scheduler>("scheduler")
    }

    /// The kubelet of a node.
    pub fn kubelet(&self, node: &str) -> Option<&Kubelet> {
        self.runtime.component_as::<Kubelet>(&format!("kubelet/{node}"))
    }

    /// A node's host (its container runtime, power state).
    pub fn host(&self, node: &str) -> Option<&Host> {
        self.runtime.host(node)
    }

    /// Whether a node's host reaches the API server.
    pub fn is_connected(&self, node: &str) -> bool {
        self.runtime.is_connected(node)
    }

    /// Registers a file `kubectl ... -f PATH` commands can read (the CLI pre-reads them; the UI
    /// registers its editor text).
    pub fn add_file(&mut self, path: &str, text: &str) {
        self.files.insert(path.to_string(), text.to_string());
    }

    /// Runs the kubectl layer with the API server, a request as actor "kubectl", the registered
    /// files and every host (logs and exec reach containers through their node's runtime).
    pub fn with_kubectl<R>(&mut self, f: impl FnOnce(&mut ApiServer, &mut Request, &BTreeMap<String, String>, &mut kubesim_runtime::net::Net) -> R) -> R {
        let files = &self.files;
        self.runtime.with_api("kubectl", |api, req, net| f(api, req, files, net))
    }

    /// Node names with hosts, in order.
    pub fn node_names(&self) -> impl Iterator<Item = &String> {
        self.runtime.hosts().keys()
    }

    /// Queues a command (`kubectl ...` or `fault ...`) at virtual time `at_ms`.
    pub fn schedule_command(&mut self, at_ms: Millis, line: &str) {
        self.runtime.schedule(at_ms, line.to_string());
    }

    /// Whether anything other than periodic housekeeping is pending.
    pub fn busy(&self) -> bool {
        self.runtime.busy()
    }

    /// Virtual time of the next queued event.
    pub fn next_event_time(&self) -> Option<Millis> {
        self.runtime.next_event_time()
    }

    /// Runs the next event. Returns false when the queue is empty.
    pub fn step(&mut self) -> bool {
        let stepped = match self.runtime.step() {
            None => false,
            Some(Stepped::Internal) => true,
            Some(Stepped::External(line)) => {
                let _ = self.run_command(&line);
                true
            }
        };
        if stepped && self.background.iter().any(|b| b.as_ref().is_some_and(|b| b.follow.is_some())) {
            self.poll_background();
        }
        stepped
    }

    /// Starts a kubectl command in another terminal (`kubectl get pods -w` left running while
    /// the next commands are typed elsewhere): it prints what it prints now and goes on
    /// printing as the world runs, until [`World::finish_background`] stops it.
    pub fn start_background(&mut self, line: &str) -> usize {
        let handle = self.background.len();
        let trimmed = line.trim();
        if crate::port_forward::is_port_forward(trimmed) {
            let mut output = kubesim_kubectl::Output::default();
            let args = crate::commands::split(trimmed).unwrap_or_default();
            let forwarding = match crate::port_forward::start(self.api(), &args[2.min(args.len())..], "default") {
                Ok(started) => {
                    output.stdout = started.stdout;
                    for (port, forward) in started.forwards {
                        self.forwards.insert(port, (handle, forward));
                    }
                    true
                }
                Err(e) => {
                    output.stderr = format!("{e}\n");
                    output.exit_code = 1;
                    false
                }
            };
            self.background.push(Some(Background { started: self.now(), line: trimmed.to_string(), output, follow: None, forwarding }));
            return handle;
        }
        let rest = trimmed.strip_prefix("kubectl").unwrap_or(trimmed).trim().to_string();
        let mut output = crate::commands::kubectl_output(self, &rest);
        let follow = output.follow.take();
        self.background.push(Some(Background { started: self.now(), line: trimmed.to_string(), output, follow, forwarding: false }));
        handle
    }

    fn poll_background(&mut self) {
        let now = self.now();
        let mut list = std::mem::take(&mut self.background);
        for b in list.iter_mut().flatten() {
            if let Some(follow) = b.follow.as_mut() {
                if follow.poll(self.api(), now, &mut b.output) {
                    b.follow = None;
                }
            }
        }
        self.background = list;
    }

    /// Stops a background command now (Ctrl-C in its terminal, unless it ended by itself)
    /// and returns what it printed.
    pub fn finish_background(&mut self, handle: usize) -> Option<CommandRecord> {
        self.poll_background();
        let mut b = self.background.get_mut(handle)?.take()?;
        let interrupted = b.follow.take().is_some() || b.forwarding;
        self.forwards.retain(|_, (h, _)| *h != handle);
        for then in std::mem::take(&mut b.output.then) {
            let more = crate::commands::kubectl_output(self, &then);
            b.output.stdout.push_str(&more.stdout);
            b.output.stderr.push_str(&more.stderr);
        }
        let record =
            CommandRecord { t_ms: b.started, line: b.line, stdout: b.output.stdout, stderr: b.output.stderr, exit_code: b.output.exit_code, interrupted };
        self.commands.push(record.clone());
        Some(record)
    }

    /// Runs every event up to and including virtual time `t_ms`, then sets the clock to it.
    pub fn run_until(&mut self, t_ms: Millis) {
        while self.next_event_time().is_some_and(|t| t <= t_ms) {
            self.step();
        }
        self.runtime.advance_clock(t_ms);
    }

    /// Runs until nothing but periodic work is pending, or `limit_ms` of virtual time.
    pub fn run_until_quiet(&mut self, limit_ms: Millis) {
        while self.busy() && self.next_event_time().is_some_and(|t| t <= limit_ms) {
            self.step();
        }
        if self.busy() {
            self.runtime.advance_clock(limit_ms);
        }
    }

    /// Runs a command line now: `kubectl ...` or `fault ...`. A command that would go on
    /// (`get -w`, `rollout status`) prints what it prints at once and ends there.
    pub fn run_command(&mut self, line: &str) -> CommandRecord {
        let now = self.now();
        self.run_command_for(line, now)
    }

    /// Runs a command line as a user at a terminal does: a command that blocks (`rollout
    /// status`) lets virtual time pass (the world runs) until it returns, and a watch (`get -w`)
    /// prints every change, until the user stops it at virtual time `until` (Ctrl-C) if it has
    /// not returned by then. Other commands run now, as [`World::run_command`].
    pub fn run_command_for(&mut self, line: &str, until: Millis) -> CommandRecord {
        let trimmed = line.trim();
        let started = self.now();
        // `COMMAND &`: the shell runs it in the background (a port-forward, a watch) and
        // returns at once; what it printed so far is shown.
        if let Some(command) = trimmed.strip_suffix('&').map(str::trim).filter(|c| !c.ends_with('&') && self.node_shell.is_none()) {
            let handle = self.start_background(command);
            let b = self.background[handle].as_ref().expect("just started");
            let record = CommandRecord {
                t_ms: started,
                line: trimmed.to_string(),
                stdout: b.output.stdout.clone(),
                stderr: b.output.stderr.clone(),
                exit_code: b.output.exit_code,
                interrupted: false,
            };
            self.commands.push(record.clone());
            return record;
        }
        // `hops COMMAND`: the command, then every packet it sent with its path hop by hop.
        if let Some(command) = trimmed.strip_prefix("hops ").map(str::trim).filter(|c| !c.is_empty() && self.node_shell.is_none()) {
            let since = self.runtime.packets().1;
            let mut record = self.run_command_for(command, until);
            record.stdout.push_str(&crate::view::hops_text(&crate::view::packets_since(self, since)));
            record.line = trimmed.to_string();
            if let Some(last) = self.commands.last_mut() {
                *last = record.clone();
            }
            return record;
        }
        if crate::port_forward::is_port_forward(trimmed) && self.node_shell.is_none() {
            // In the foreground it forwards until the user stops it.
            let handle = self.start_background(trimmed);
            self.run_until(until.max(self.now()));
            return self.finish_background(handle).expect("started above");
        }
        let mut interrupted = false;
        let (stdout, stderr, exit_code) = if let Some(node) = self.node_shell().map(str::to_string) {
            // A `minikube ssh` session: the line runs on the node until `exit`.
            if matches!(trimmed, "exit" | "logout") || trimmed.starts_with("exit ") {
                self.node_shell = None;
                ("logout\n".to_string(), String::new(), 0)
            } else {
                match self.run_on_node(&node, trimmed) {
                    Ok(output) => (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned(), output.code),
                    Err(err) => {
                        self.node_shell = None;
                        (String::new(), format!("{err}\n"), 255)
                    }
                }
            }
        } else if crate::minikube::is_minikube_command(trimmed) {
            let (stdout, stderr, code, stopped) = crate::minikube::run(self, trimmed, until);
            interrupted = stopped;
            (stdout, stderr, code)
        } else if crate::workstation::is_workstation_command(trimmed) {
            // The shell's command substitution of the workstation's own programs (`$(minikube
            // ip)`, `$(kubectl get ...)`) before the line runs there.
            let line = self.substitute_commands(trimmed);
            let output = self.run_on_workstation(&line);
            (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned(), output.code)
        } else if let Some(rest) = trimmed.strip_prefix("netpol ") {
            match self.netpol_command(rest) {
                Ok(out) => (out, String::new(), 0),
                Err(err) => (String::new(), format!("error: {err}\n"), 1),
            }
        } else if trimmed.split_whitespace().next() == Some("reseed") {
            let rest = trimmed["reseed".len()..].trim();
            match rest.parse::<u64>() {
                Ok(seed) => {
                    self.runtime.reseed(seed);
                    (format!("the world draws from seed {seed} from now on\n"), String::new(), 0)
                }
                Err(_) => (String::new(), format!("error: reseed takes one number, the new seed (got {rest:?})\n"), 1),
            }
        } else if let Some(rest) = trimmed.strip_prefix("fault ") {
            match Fault::parse(rest).and_then(|fault| self.fault(&fault)) {
                Ok(out) => (out, String::new(), 0),
                Err(err) => (String::new(), err, 1),
            }
        } else {
            let rest = trimmed.strip_prefix("kubectl").unwrap_or(trimmed).trim();
            let mut output = crate::commands::kubectl_output(self, rest);
            if let Some(mut follow) = output.follow.take() {
                let limit = follow.deadline().map_or(until, |d| d.min(until));
                // Stopped at once (no time to pass): nothing else runs in between.
                interrupted = limit <= started;
                while !interrupted {
                    let next = self.next_event_time().filter(|t| *t <= limit);
                    match next {
                        Some(_) => {
                            self.step();
                        }
                        None => self.runtime.advance_clock(limit.max(self.now())),
                    }
                    if follow.poll(self.api(), self.now(), &mut output) {
                        break;
                    }
                    if next.is_none() {
                        interrupted = true;
                        break;
                    }
                }
            }
            for then in std::mem::take(&mut output.then) {
                let more = crate::commands::kubectl_output(self, &then);
                output.stdout.push_str(&more.stdout);
                output.stderr.push_str(&more.stderr);
            }
            (output.stdout, output.stderr, output.exit_code)
        };
        let record = CommandRecord { t_ms: started, line: trimmed.to_string(), stdout, stderr, exit_code, interrupted };
        self.commands.push(record.clone());
        record
    }

    /// The nodes a fault target names: a node, or `zone=<zone>` (the nodes labelled
    /// `topology.kubernetes.io/zone=<zone>`).
    fn nodes_of(&self, target: &str) -> Result<Vec<String>, String> {
        if let Some(zone) = target.strip_prefix("zone=") {
            let nodes: Vec<String> = self
                .api()
                .store()
                .list(("", "nodes"), None)
                .filter(|n| n.metadata().labels.as_ref().and_then(|l| l.get("topology.kubernetes.io/zone")).is_some_and(|z| z == zone))
                .map(|n| n.name().to_string())
                .collect();
            if nodes.is_empty() {
                return Err(format!("fault: no node is labelled topology.kubernetes.io/zone={zone}"));
            }
            return Ok(nodes);
        }
        if self.runtime.host(target).is_none() {
            return Err(format!("fault: no node {target:?}"));
        }
        Ok(vec![target.to_string()])
    }

    /// `$(minikube ...)` and `$(kubectl ...)` in a workstation command line replaced by what
    /// they print (trailing newlines removed), as the user's shell does.
    fn substitute_commands(&mut self, line: &str) -> String {
        let mut out = String::new();
        let mut rest = line;
        while let Some(start) = rest.find("$(") {
            let Some(len) = rest[start + 2..].find(')') else { break };
            let inner = rest[start + 2..start + 2 + len].trim();
            out.push_str(&rest[..start]);
            if crate::minikube::is_minikube_command(inner) {
                let now = self.now();
                out.push_str(crate::minikube::run(self, inner, now).0.trim_end_matches('\n'));
            } else if let Some(args) = inner.strip_prefix("kubectl ") {
                out.push_str(crate::commands::kubectl_output(self, args).stdout.trim_end_matches('\n'));
            } else {
                out.push_str(&rest[start..start + 3 + len]);
            }
            rest = &rest[start + 3 + len..];
        }
        out.push_str(rest);
        out
    }

    /// Injects a fault now. Its effects on hosts, agents and containers follow from the model.
    pub fn fault(&mut self, fault: &Fault) -> Result<String, String> {
        if let Some(node) = fault.node() {
            if self.runtime.host(node).is_none() {
                return Err(format!("fault: no node {node:?}"));
            }
        }
        let result = match fault {
            Fault::NodeDown(node) => {
                self.runtime.power_off(node);
                Ok(format!("node/{node} is down: its kubelet stopped and nothing runs there any more"))
            }
            Fault::NetworkPartition(node) => {
                self.runtime.disconnect(node);
                Ok(format!("node/{node} is cut off from the API server (its containers keep running)"))
            }
            Fault::NodeUp(node) => {
                self.runtime.power_on(node);
                self.runtime.reconnect(node);
                Ok(format!("node/{node} is up"))
            }
            Fault::KubeletRestart(node) => {
                // The kubelet process restarts: it rebuilds its state from the API server and
                // the runtime (containers keep running).
                self.runtime.restart_agent(&format!("kubelet/{node}"));
                Ok(format!("kubelet on node/{node} restarted"))
            }
            Fault::ContainerCrash { pod, container } => {
                let (namespace, name) = split_pod(pod);
                let node = self
                    .api()
                    .store()
                    .get(("", "pods"), &namespace, &name)
                    .and_then(|o| o.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.clone()))
                    .ok_or_else(|| format!("fault: pod {namespace}/{name} is not bound to a node"))?;
                let index = self.runtime.index_of(&format!("kubelet/{node}")).ok_or_else(|| format!("fault: no node {node:?}"))?;
                let mut out = Err(format!("fault: node {node} is down"));
                self.runtime.with_component(index, |component, ctx| {
                    if let Some(kubelet) = component.downcast_mut::<Kubelet>() {
                        out = kubelet.crash_container(&namespace, &name, container.as_deref(), ctx);
                    }
                });
                out
            }
            Fault::Partition { from, to, one_way } => {
                let froms = self.nodes_of(from)?;
                let tos = self.nodes_of(to)?;
                let fabric = self.runtime.fabric_mut();
                for a in &froms {
                    for b in &tos {
                        fabric.cut_link(a, b);
                        if !one_way {
                            fabric.cut_link(b, a);
                        }
                    }
                }
                let how = if *one_way { "from" } else { "between" };
                let and = if *one_way { "to" } else { "and" };
                Ok(format!("packets {how} {from} ({}) {and} {to} ({}) are dropped", froms.join(", "), tos.join(", ")))
            }
            Fault::PacketLoss { node, percent } => {
                let fabric = self.runtime.fabric_mut();
                let mut imp = fabric.impairment(node).cloned().unwrap_or_default();
                imp.loss_percent = *percent;
                fabric.impair(node, imp);
                Ok(format!("node/{node} loses {percent}% of its packets"))
            }
            Fault::Latency { node, ms } => {
                let fabric = self.runtime.fabric_mut();
                let mut imp = fabric.impairment(node).cloned().unwrap_or_default();
                imp.extra_latency_ms = *ms;
                fabric.impair(node, imp);
                Ok(format!("packets to and from node/{node} take {ms}ms longer"))
            }
            Fault::DnsOutage => {
                self.runtime.fabric_mut().dns_outage = true;
                Ok("CoreDNS stops answering: DNS queries time out".to_string())
            }
            Fault::KubeProxyStop(node) | Fault::KubeProxyStart(node) => {
                let start = matches!(fault, Fault::KubeProxyStart(_));
                let index = self.runtime.index_of(&format!("kube-proxy/{node}")).ok_or_else(|| format!("fault: no kube-proxy on node {node:?}"))?;
                self.runtime.with_component(index, |component, ctx| {
                    if let Some(proxy) = component.downcast_mut::<kubesim_proxy::KubeProxy>() {
                        if start {
                            proxy.start(ctx);
                        } else {
                            proxy.stop(ctx);
                        }
                    }
                });
                Ok(if start {
                    format!("kube-proxy on node/{node} started: it syncs the node's rules now")
                } else {
                    format!("kube-proxy on node/{node} stopped: the node's rules stay as they are and go stale")
                })
            }
            Fault::ImagePullFailure(image) => {
                if kubesim_images::resolve(image).is_err() {
                    return Err(format!("fault: {image:?} is not an image reference"));
                }
                if !self.unpullable.contains(image) {
                    self.unpullable.push(image.clone());
                    let image = image.clone();
                    self.edit_missing_images(|missing| missing.push(image))?;
                }
                Ok(format!("the registry answers \"not found\" for {image} until heal"))
            }
            Fault::Compaction => {
                self.runtime.compact_now();
                Ok(format!("the store compacted its watch history up to revision {}", self.api().store().revision()))
            }
            Fault::WatchDisconnect(node) => {
                self.runtime.disconnect(node);
                self.runtime.reconnect(node);
                Ok(format!("the watches of node/{node}'s agents broke: they relist"))
            }
            Fault::ApiConflicts(percent) => {
                self.runtime.set_conflict_percent(*percent);
                Ok(format!("the API server refuses {percent}% of conditional updates with 409 Conflict"))
            }
            Fault::Heal => {
                self.runtime.set_conflict_percent(0);
                let unpullable = std::mem::take(&mut self.unpullable);
                if !unpullable.is_empty() {
                    self.edit_missing_images(|missing| missing.retain(|m| !unpullable.contains(m)))?;
                }
                let names: Vec<String> = self.runtime.hosts().keys().cloned().collect();
                for name in &names {
                    self.runtime.power_on(name);
                    self.runtime.reconnect(name);
                }
                self.runtime.fabric_mut().heal_links();
                for name in names {
                    if let Some(index) = self.runtime.index_of(&format!("kube-proxy/{name}")) {
                        self.runtime.with_component(index, |component, ctx| {
                            if let Some(proxy) = component.downcast_mut::<kubesim_proxy::KubeProxy>() {
                                if proxy.is_stopped() {
                                    proxy.start(ctx);
                                }
                            }
                        });
                    }
                }
                Ok("all faults healed".to_string())
            }
        };
        if result.is_ok() {
            // Checkers whose invariants hold only without faults stop applying them.
            self.runtime.fault_injected(&fault.to_string());
            // Faults are logged in the trace too: an Event written by actor "fault".
            let subject = match fault {
                Fault::ContainerCrash { pod, .. } => {
                    let (ns, name) = split_pod(pod);
                    self.api().store().get(("", "pods"), &ns, &name).cloned()
                }
                other => other.node().and_then(|node| self.api().store().get(("", "nodes"), "", node).cloned()),
            };
            let verb = fault.to_string();
            if let Some(subject) = subject {
                let message = format!("kubesim fault injected: {verb}");
                self.runtime.as_actor("fault", |ctx| ctx.event(&subject, "Warning", "FaultInjected", message));
            }
            let target = match fault.node() {
                Some(node) => format!("kubelet/{node}"),
                None => "cluster".to_string(),
            };
            let now = self.now();
            self.runtime.note(Note { t_ms: now, actor: "fault".into(), target, call: "fault".into(), detail: verb });
        }
        result
    }

    /// Changes the `missing` list of the `kube-system/kubesim-images` ConfigMap (creating it),
    /// as actor `fault`: the image-pull-failure fault and its heal.
    fn edit_missing_images(&mut self, f: impl FnOnce(&mut Vec<String>)) -> Result<(), String> {
        let name = kubesim_kubelet::kubelet::IMAGE_CATALOGUE_CONFIGMAP;
        let existing = self.api().store().get(("", "configmaps"), "kube-system", name).and_then(|o| match o.as_ref() {
            Object::ConfigMap(cm) => Some((**cm).clone()),
            _ => None,
        });
        let mut cm = existing.clone().unwrap_or_else(|| kubesim_api::k8s_openapi::api::core::v1::ConfigMap {
            metadata: kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some("kube-system".to_string()),
                ..Default::default()
            },
            ..Default::default()
        });
        let data = cm.data.get_or_insert_with(Default::default);
        let mut missing: Vec<String> =
            data.get("missing").map(|m| m.split([',', '\n']).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()).unwrap_or_default();
        f(&mut missing);
        data.insert("missing".to_string(), missing.join("\n"));
        let object = Object::ConfigMap(Box::new(cm));
        self.runtime
            .as_actor("fault", |ctx| if existing.is_some() { ctx.update(object) } else { ctx.create(object) })
            .map(|_| ())
            .map_err(|e| format!("fault: {}", e.message))
    }

    /// Runs `f` with a context acting as `actor` (kubectl, the API server's bootstrap, ...).
    pub fn as_actor<R>(&mut self, actor: &str, f: impl FnOnce(&mut Ctx) -> R) -> R {
        self.runtime.as_actor(actor, f)
    }

    /// An API request context acting as `actor`, for callers that need `ApiServer` and
    /// `Request` separately (the kubectl layer).
    pub fn api_request<R>(&mut self, actor: &str, f: impl FnOnce(&mut ApiServer, &mut Request) -> R) -> R {
        self.runtime.with_api(actor, |api, req, _| f(api, req))
    }
}

/// `namespace/name` or `name` (namespace `default`).
fn split_pod(pod: &str) -> (String, String) {
    match pod.split_once('/') {
        Some((ns, n)) => (ns.to_string(), n.to_string()),
        None => ("default".to_string(), pod.to_string()),
    }
}

/// A host whose container runtime runs the application models of `kubesim-programs` for the
/// executables `kubesim-os` does not implement itself, in the zone its Node is labelled with
/// (the machine's cloud metadata: the disk driver and the cloud's block storage read it).
fn new_host(name: &str, index: u32, zone: Option<String>) -> Host {
    let mut host = Host::new(name, index);
    host.cri.foreign = kubesim_programs::program_for_container;
    host.zone = zone;
    host
}

/// A node's `topology.kubernetes.io/zone`.
fn zone_of(node: &Node) -> Option<String> {
    node.metadata.labels.as_ref().and_then(|l| l.get(kubesim_api::csi::ZONE_TOPOLOGY_KEY)).cloned()
}
