//! The one event loop: a queue ordered by (virtual time, sequence number) of component timers,
//! watch deliveries, store compaction and the embedder's own events. [`Runtime::step`] runs
//! the next entry. The simulation's `World`, the controllers' tests and the scheduler's
//! harness all run on it, so every component is exercised on the delivery model production
//! uses: watch events arrive [`RuntimeConfig::watch_latency_ms`] after the commit, filtered
//! watches turn MODIFIED into ADDED or DELETED as the API server's watch cache does, and
//! components on a host that is down or cut off from the API server get nothing.
//!
//! Guarantees:
//! - Determinism: one RNG, a total order on queue entries, `BTreeMap`s only. The same inputs
//!   give the same history, byte for byte, natively and in wasm.
//! - Time never runs backwards; timers requested for the past run now.
//! - A component whose host loses power gets no timer or watch event until power returns
//!   (timers armed before the power loss are dropped: the process that armed them is gone).
//! - Every commit is checked by every registered [`Checker`] right after the handler that made
//!   it returns; violations are recorded, never panicked on (the swarm reports them).

use crate::component::{Component, Ctx, HostEvent, Interest, NodeFsOp, Note, TimerRequest, WatchEvent, WatchFilter};
use crate::fabric::{Endpoint, Fabric};
use crate::history::History;
use crate::metrics::ResourceMetrics;
use kubesim_api::hash::FixedState;
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiServer, Request, SimRng};
use kubesim_host::cloud::BlockStore;
use kubesim_host::{Host, HostId, Hosts};
use kubesim_store::{Commit, EventType, Resource};
use rand_core::SeedableRng;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Watch delivery latency: commit → watcher notified (virtual ms).
pub const WATCH_LATENCY_MS: Millis = 2;
/// etcd compaction interval (kube-apiserver `--etcd-compaction-interval`).
pub const COMPACTION_INTERVAL_MS: Millis = 5 * 60_000;
/// How many watch deliveries [`Runtime::deliveries`] keeps at least (memory bound at scale).
pub const DELIVERY_HISTORY: usize = 100_000;
/// How many trace records and notes a runtime keeps at least by default
/// ([`RuntimeConfig::trace_history`]): a long run's history is bounded, not its length.
pub const TRACE_HISTORY: usize = 25_000;

/// Whether writes to this resource are housekeeping (node Lease renewals): they do not keep a
/// run going on their own and are left out of the delivery history the UI animates.
pub fn is_housekeeping(resource: Resource) -> bool {
    resource == ("coordination.k8s.io", "leases")
}

/// How a runtime is built.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// The seed of the one RNG.
    pub seed: u64,
    /// Commit → watcher latency.
    pub watch_latency_ms: Millis,
    /// How often the store compacts its watch history (0: never).
    pub compaction_interval_ms: Millis,
    /// How many commits the store keeps for watches from an older revision.
    pub watch_history: usize,
    /// Record the trace, notes and deliveries (off for benchmarks at scale).
    pub record_history: bool,
    /// How many of the most recent trace records and notes are kept at least (between this
    /// and twice this many; 0 keeps all: `kubesim run --trace` writes the whole trace).
    pub trace_history: usize,
    /// Keep Events packed in the store, decoded when read ([`kubesim_store::Store::pack_events`]).
    pub pack_events: bool,
}

impl RuntimeConfig {
    /// The production defaults for a seed.
    pub fn seeded(seed: u64) -> RuntimeConfig {
        RuntimeConfig {
            seed,
            watch_latency_ms: WATCH_LATENCY_MS,
            compaction_interval_ms: COMPACTION_INTERVAL_MS,
            watch_history: 20_000,
            record_history: true,
            trace_history: TRACE_HISTORY,
            pack_events: true,
        }
    }
}

/// Where a component runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The control plane (controllers, the scheduler, the metrics-server): always powered and
    /// connected.
    ControlPlane,
    /// A node agent on this host.
    Host(String),
}

/// How many packets the runtime keeps for the network view.
pub const PACKET_LOG_CAP: usize = 5_000;
/// The pods' DNS queries are noted (for the flow view) at most once per node per this many ms.
pub const DNS_NOTE_SAMPLE_MS: Millis = 100;

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

/// One watch notification delivered to a component: the informer side of a write.
#[derive(Clone, Debug)]
pub struct WatchDelivery {
    /// Virtual ms of delivery (the write's time plus the watch latency).
    pub t_ms: Millis,
    /// The revision of the commit delivered.
    pub revision: u64,
    /// The event as the watcher saw it (a field-filtered watch turns MODIFIED into ADDED or
    /// DELETED when the object enters or leaves the selection).
    pub event_type: EventType,
    /// The watching component.
    pub component: Arc<str>,
}

/// An invariant checked after every commit. Checkers live apart from the code they check and
/// only read: the commit and the API server's state after it.
pub trait Checker: CheckerClone + crate::component::AsAny {
    /// A short name for reports.
    fn name(&self) -> &str;
    /// `Err(message)` if the commit broke the invariant.
    fn check(&mut self, commit: &Commit, api: &ApiServer) -> Result<(), String>;
    /// `Err(message)` if the host's state broke the invariant (data-plane invariants: what is
    /// mounted, what runs). Called after every handler of an agent on the host and after the
    /// host lost power. The default checks nothing.
    fn check_host(&mut self, host: &Host, api: &ApiServer) -> Result<(), String> {
        let _ = (host, api);
        Ok(())
    }
    /// A component registered its watches (`watcher` is its index, stable for the runtime's
    /// life) when the store was at revision `since`. Called before anything is delivered to
    /// it, and for the components already running when the checker is added. Deliveries of
    /// commits up to `since` still in flight reach it too (a component starting in the same
    /// instant as the writes before it sees their events). The default ignores it.
    fn watches(&mut self, watcher: usize, name: &str, interests: &[Interest], since: u64) {
        let _ = (watcher, name, interests, since);
    }
    /// A watch event was delivered to `watcher` at `now`. `Err(message)` if the delivery broke
    /// the invariant (order, gaps). The default checks nothing.
    fn delivered(&mut self, watcher: usize, event: &WatchEvent, now: Millis) -> Result<(), String> {
        let _ = (watcher, event, now);
        Ok(())
    }
    /// `watcher` relists at `revision`: its watches restart from there (it started, its host's
    /// power came back, its host reconnected, or its process restarted). The runtime's
    /// equivalent of a 410 Gone followed by a relist. The default ignores it.
    fn relisted(&mut self, watcher: usize, revision: u64) {
        let _ = (watcher, revision);
    }
    /// The embedder injected a fault at `t_ms` (`fault` is its text): invariants that hold
    /// only in fault-free runs stop applying. The default ignores it.
    fn fault_injected(&mut self, t_ms: Millis, fault: &str) {
        let _ = (t_ms, fault);
    }
    /// The end of a run, after its liveness phase: liveness-style checks over the final state
    /// (the embedder calls [`Runtime::finish_checks`]). The default checks nothing.
    fn finish(&mut self, api: &ApiServer, now: Millis) -> Result<(), String> {
        let _ = (api, now);
        Ok(())
    }
}

/// Cloning boxed checkers (a cloned runtime keeps checking).
pub trait CheckerClone {
    /// An independent copy.
    fn clone_box(&self) -> Box<dyn Checker>;
}

impl<T: Checker + Clone + 'static> CheckerClone for T {
    fn clone_box(&self) -> Box<dyn Checker> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Checker> {
    fn clone(&self) -> Box<dyn Checker> {
        self.as_ref().clone_box()
    }
}

/// A broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Virtual time of the commit.
    pub t_ms: Millis,
    /// Its revision.
    pub revision: u64,
    /// The checker's name.
    pub checker: String,
    /// What is wrong.
    pub message: String,
}

/// What the runtime does at a point of its queue.
#[derive(Clone, Debug)]
enum Item<E> {
    Timer {
        component: usize,
        token: u64,
        epoch: u32,
    },
    Deliver(Box<Commit>),
    Compact,
    /// A lease runs out (Events' `--event-ttl`): etcd deletes the keys it held.
    Expire,
    External(E),
    /// A host's processes have something to do (a sleep ended, CPU work finished).
    HostWake(HostId),
    /// The reply to a process's network call arrives.
    NetReply {
        host: HostId,
        id: u64,
        reply: Box<kubesim_os::program::NetReply>,
    },
}

#[derive(Clone, Debug)]
struct Queued<E> {
    item: Item<E>,
    periodic: bool,
}

#[derive(Clone)]
struct Slot {
    component: Box<dyn Component>,
    /// The actor name (shared by every handler call and delivery record).
    actor: Arc<str>,
    /// Its host (a node agent's), as the host's id in [`Runtime::hosts`].
    host: Option<HostId>,
    /// Bumped when the component's host loses power: older timers are dropped.
    epoch: u32,
    /// The watches it holds (registered once, at start).
    interests: Vec<Interest>,
    /// The revision it last relisted at (power back, reconnected, restarted; 0: never):
    /// commits up to it are already in its caches, so their deliveries still in flight are
    /// dropped (a watch restarted from a list begins after the list's resourceVersion).
    listed_at: u64,
}

/// What one [`Runtime::step`] ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stepped<E> {
    /// A timer, a delivery or a compaction (handled inside).
    Internal,
    /// One of the embedder's own events, for the embedder to handle.
    External(E),
}

/// The runtime: clock, RNG, API server, components, hosts, queue, history and checkers.
///
/// `E` is the embedder's own event type (the simulation's scheduled command lines); runtimes
/// that have none use `()`. `Clone` gives an independent runtime whose future is
/// bit-identical to the original's.
#[derive(Clone)]
pub struct Runtime<E: Clone = ()> {
    now: Millis,
    seq: u64,
    queue: BTreeMap<(Millis, u64), Queued<E>>,
    non_periodic: usize,
    rng: SimRng,
    api: ApiServer,
    slots: Vec<Slot>,
    hosts: Hosts,
    /// Each host's agents, by host id.
    host_agents: Vec<Vec<usize>>,
    fabric: Fabric,
    metrics: ResourceMetrics,
    cloud: BlockStore,
    /// When each host's next process wake-up is queued, by host id.
    host_wakes: Vec<Option<Millis>>,
    /// Hashed: looked up for every commit delivered, never walked.
    watch_all: HashMap<Resource, Vec<(usize, Interest)>, FixedState>,
    watch_node_pods: BTreeMap<String, Vec<usize>>,
    config: RuntimeConfig,
    trace: History<TraceRecord>,
    /// The most recent packets (at most [`PACKET_LOG_CAP`]) and how many were ever logged.
    packets: std::collections::VecDeque<crate::net::PacketRecord>,
    packets_total: u64,
    notes: History<Note>,
    /// The time bucket of the last DNS query noted per node ([`DNS_NOTE_SAMPLE_MS`]).
    dns_note_buckets: BTreeMap<String, Millis>,
    deliveries: History<WatchDelivery>,
    last_compaction_revision: u64,
    /// The earliest [`Item::Expire`] queued, if any.
    expiry_queued: Option<Millis>,
    checkers: Vec<Box<dyn Checker>>,
    violations: Vec<Violation>,
}

impl<E: Clone> Runtime<E> {
    /// Replaces the one RNG with a fresh one from `seed`: from now on every draw (names, IPs,
    /// endpoint choices, jitter) is another roll of the dice, the past untouched. A fork of a
    /// history uses it to ask "what if the dice had fallen otherwise?".
    pub fn reseed(&mut self, seed: u64) {
        self.rng = SimRng::seed_from_u64(seed);
    }

    /// An empty runtime at virtual time 0: an API server with its built-in namespaces, no
    /// components, no hosts.
    pub fn new(config: RuntimeConfig) -> Runtime<E> {
        let trace_history = config.trace_history;
        let mut runtime = Runtime {
            now: 0,
            seq: 0,
            queue: BTreeMap::new(),
            non_periodic: 0,
            rng: SimRng::seed_from_u64(config.seed),
            api: ApiServer::with_store({
                let mut store = kubesim_store::Store::new(config.watch_history);
                store.pack_events(config.pack_events);
                store
            }),
            slots: Vec::new(),
            hosts: Hosts::new(),
            host_agents: Vec::new(),
            fabric: Fabric::default(),
            metrics: ResourceMetrics::default(),
            cloud: BlockStore::default(),
            host_wakes: Vec::new(),
            watch_all: HashMap::default(),
            watch_node_pods: BTreeMap::new(),
            config,
            trace: History::new(trace_history),
            packets: std::collections::VecDeque::new(),
            packets_total: 0,
            notes: History::new(trace_history),
            dns_note_buckets: BTreeMap::new(),
            deliveries: History::new(DELIVERY_HISTORY),
            last_compaction_revision: 0,
            expiry_queued: None,
            checkers: Vec::new(),
            violations: Vec::new(),
        };
        if runtime.config.compaction_interval_ms > 0 {
            runtime.push(runtime.config.compaction_interval_ms, Item::Compact, true);
        }
        runtime
    }

    /// The configuration this runtime was built with.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Registers a component where it runs and starts it now. A node agent's host must have
    /// been added first.
    pub fn add_component(&mut self, component: Box<dyn Component>, placement: Placement) -> usize {
        let index = self.slots.len();
        for interest in component.interests() {
            match &interest.filter {
                WatchFilter::PodsOnNode(node) => self.watch_node_pods.entry(node.clone()).or_default().push(index),
                _ => self.watch_all.entry(interest.resource).or_default().push((index, interest)),
            }
        }
        let host = match placement {
            Placement::ControlPlane => None,
            Placement::Host(name) => {
                let Some(id) = self.hosts.id(&name) else { panic!("agent {} placed on unknown host {name}", component.name()) };
                self.host_agents[id.0 as usize].push(index);
                Some(id)
            }
        };
        let actor: Arc<str> = component.name().into();
        let interests = component.interests();
        let revision = self.api.store().revision();
        for checker in &mut self.checkers {
            checker.watches(index, &actor, &interests, revision);
        }
        self.slots.push(Slot { component, actor, host, epoch: 0, interests, listed_at: 0 });
        self.with_component(index, |component, ctx| component.start(ctx));
        index
    }

    /// Adds a host (a machine; its agents are added with [`Placement::Host`]).
    pub fn add_host(&mut self, host: Host) {
        self.fabric.assign(&host.ip(), Endpoint::Node { host: host.name.clone() });
        self.cloud.register_instance(&host.name, host.zone.clone());
        self.hosts.insert(host.name.clone(), host);
        self.host_agents.resize(self.hosts.len(), Vec::new());
        self.host_wakes.resize(self.hosts.len(), None);
    }

    /// A host by name.
    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.get(name)
    }

    /// A host by name, mutably (kubectl exec and logs reach containers through it).
    pub fn host_mut(&mut self, name: &str) -> Option<&mut Host> {
        self.hosts.get_mut(name)
    }

    /// Every host, by name.
    pub fn hosts(&self) -> &Hosts {
        &self.hosts
    }

    /// Every host, mutably.
    pub fn hosts_mut(&mut self) -> &mut Hosts {
        &mut self.hosts
    }

    /// Whether a host can reach the API server.
    pub fn is_connected(&self, host: &str) -> bool {
        self.fabric.reaches_control_plane(host)
    }

    /// The network fabric.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// The network fabric, mutably (the link faults: cut links, impairments, DNS outage).
    pub fn fabric_mut(&mut self) -> &mut Fabric {
        &mut self.fabric
    }

    /// The cloud's block storage (disks, their zones and attachments).
    pub fn cloud(&self) -> &BlockStore {
        &self.cloud
    }

    /// The resource metrics API's current content.
    pub fn metrics(&self) -> &ResourceMetrics {
        &self.metrics
    }

    /// The agents of a host, in registration order.
    pub fn agents(&self, host: &str) -> Vec<&dyn Component> {
        self.agents_of(host).iter().map(|i| self.slots[*i].component.as_ref()).collect()
    }

    /// A component by actor name.
    pub fn component(&self, name: &str) -> Option<&(dyn Component + 'static)> {
        self.slots.iter().find(|s| &*s.actor == name).map(|s| s.component.as_ref())
    }

    /// A component by actor name, downcast to its type.
    pub fn component_as<T: 'static>(&self, name: &str) -> Option<&T> {
        self.component(name)?.downcast_ref::<T>()
    }

    /// A component by actor name, downcast to its type, mutably (tests, the UI's data feeds).
    pub fn component_as_mut<T: 'static>(&mut self, name: &str) -> Option<&mut T> {
        self.slots.iter_mut().find(|s| &*s.actor == name)?.component.as_mut().downcast_mut::<T>()
    }

    /// Every component, in registration order.
    pub fn components(&self) -> impl Iterator<Item = &dyn Component> {
        self.slots.iter().map(|s| s.component.as_ref())
    }

    /// Registers an invariant checker (run after every later commit).
    pub fn add_checker(&mut self, mut checker: Box<dyn Checker>) {
        let revision = self.api.store().revision();
        for (index, slot) in self.slots.iter().enumerate() {
            checker.watches(index, &slot.actor, &slot.interests, revision);
            if slot.listed_at > 0 {
                checker.relisted(index, slot.listed_at);
            }
        }
        self.checkers.push(checker);
    }

    /// Compacts the store's watch history up to the current revision now (a forced etcd
    /// compaction: watches resuming from an older revision get 410 Gone).
    pub fn compact_now(&mut self) {
        let revision = self.api.store().revision();
        self.api.store_mut().compact(revision);
        self.last_compaction_revision = revision;
    }

    /// Tells every checker a fault was injected now ([`Checker::fault_injected`]).
    pub fn fault_injected(&mut self, fault: &str) {
        let now = self.now;
        for checker in &mut self.checkers {
            checker.fault_injected(now, fault);
        }
    }

    /// Runs every checker's end-of-run check ([`Checker::finish`]) and records what they find.
    pub fn finish_checks(&mut self) {
        let (now, revision) = (self.now, self.api.store().revision());
        for checker in &mut self.checkers {
            if let Err(message) = checker.finish(&self.api, now) {
                self.violations.push(Violation { t_ms: now, revision, checker: checker.name().to_string(), message });
            }
        }
    }

    /// Tells the checkers a component relists now (its watches restart from this revision).
    fn relisted(&mut self, index: usize) {
        let revision = self.api.store().revision();
        self.slots[index].listed_at = revision;
        for checker in &mut self.checkers {
            checker.relisted(index, revision);
        }
    }

    /// A registered checker by name, downcast to its type (reports a checker keeps, such as
    /// the swarm's history hash).
    pub fn checker_as<T: 'static>(&self, name: &str) -> Option<&T> {
        self.checkers.iter().find(|c| c.name() == name).and_then(|c| c.as_ref().as_any().downcast_ref::<T>())
    }

    /// The invariant violations seen so far.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Virtual now (ms).
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The API server (reads).
    pub fn api(&self) -> &ApiServer {
        &self.api
    }

    /// The `api-conflicts` fault ([`ApiServer::set_conflict_percent`]).
    pub fn set_conflict_percent(&mut self, percent: u8) {
        self.api.set_conflict_percent(percent);
    }

    /// Sets a cap on the world's size ([`kubesim_apiserver::WorldLimits`]).
    pub fn set_limits(&mut self, limits: Option<kubesim_apiserver::WorldLimits>) {
        self.api.set_limits(limits);
    }

    /// Sets kube-apiserver's `--service-cluster-ip-range` (before anything is allocated).
    pub fn set_service_cidr(&mut self, cidr: kubesim_apiserver::server::ServiceCidrConfig) {
        self.api.set_service_cidr(cidr);
    }

    /// The recorded trace: the most recent committed writes (see
    /// [`RuntimeConfig::trace_history`]), in commit order.
    pub fn trace(&self) -> &[TraceRecord] {
        self.trace.held()
    }

    /// Drops the recorded trace, notes and deliveries, keeping their numbering: a time-travel
    /// snapshot does not need them ([`Runtime::rewind_history`] takes them back from the run's
    /// later state), and a snapshot holding them would keep every object they name alive.
    pub fn forget_history(&mut self) {
        self.trace.forget();
        self.notes.forget();
        self.deliveries.forget();
    }

    /// Restores the recorded trace, notes and deliveries of a runtime whose history was
    /// forgotten ([`Runtime::forget_history`]) from `later`, a later state of the same run:
    /// each as it was at this runtime's point, less what `later` no longer holds.
    pub fn rewind_history(&mut self, later: &Runtime<E>) {
        let (trace, notes, deliveries) = (self.trace.total(), self.notes.total(), self.deliveries.total());
        self.trace.rewind(&later.trace, trace);
        self.notes.rewind(&later.notes, notes);
        self.deliveries.rewind(&later.deliveries, deliveries);
    }

    /// The trace as a bounded log: what it holds, and every write numbered from the start.
    pub fn trace_log(&self) -> &History<TraceRecord> {
        &self.trace
    }

    /// The most recent packets container processes sent (oldest first), and how many were
    /// logged in all (the UI counts new ones by it).
    pub fn packets(&self) -> (&std::collections::VecDeque<crate::net::PacketRecord>, u64) {
        (&self.packets, self.packets_total)
    }

    /// The recorded non-API messages (CRI calls, PLEG relists, faults, ...): the most recent
    /// ones, as many as the trace keeps.
    pub fn notes(&self) -> &[Note] {
        self.notes.held()
    }

    /// The notes as a bounded log (see [`Runtime::trace_log`]).
    pub fn notes_log(&self) -> &History<Note> {
        &self.notes
    }

    /// Records a note now (faults, commands).
    pub fn note(&mut self, note: Note) {
        if self.config.record_history {
            self.notes.push(note);
        }
    }

    /// The most recent watch notifications (housekeeping left out), in delivery order. Only
    /// the last [`DELIVERY_HISTORY`]..2× that many are kept; [`Runtime::deliveries_dropped`]
    /// counts the older ones, so `dropped + index` numbers every delivery since the start.
    pub fn deliveries(&self) -> &[WatchDelivery] {
        self.deliveries.held()
    }

    /// How many deliveries were dropped from the front of [`Runtime::deliveries`].
    pub fn deliveries_dropped(&self) -> usize {
        self.deliveries.dropped()
    }

    /// The deliveries as a bounded log (see [`Runtime::trace_log`]).
    pub fn deliveries_log(&self) -> &History<WatchDelivery> {
        &self.deliveries
    }

    /// Queues one of the embedder's events at virtual time `at_ms` (keeps a run going).
    pub fn schedule(&mut self, at_ms: Millis, event: E) {
        self.push(at_ms.max(self.now), Item::External(event), false);
    }

    /// Whether anything other than periodic housekeeping is pending.
    pub fn busy(&self) -> bool {
        self.non_periodic > 0
    }

    /// Virtual time of the next queued entry.
    pub fn next_event_time(&self) -> Option<Millis> {
        self.queue.keys().next().map(|(t, _)| *t)
    }

    /// Moves the clock forward to `t_ms` (never back) without running anything.
    pub fn advance_clock(&mut self, t_ms: Millis) {
        self.now = self.now.max(t_ms);
    }

    /// Runs the next entry. `None` when the queue is empty.
    pub fn step(&mut self) -> Option<Stepped<E>> {
        let ((t, _), queued) = self.queue.pop_first()?;
        debug_assert!(t >= self.now, "time never runs backwards");
        self.now = t;
        if !queued.periodic {
            self.non_periodic -= 1;
        }
        match queued.item {
            Item::Timer { component, token, epoch } => {
                if self.runs(component) && self.slots[component].epoch == epoch {
                    self.with_component(component, |c, ctx| c.on_timer(token, ctx));
                }
            }
            Item::Deliver(commit) => self.deliver(&commit),
            Item::Compact => {
                let revision = self.api.store().revision();
                self.api.store_mut().compact(self.last_compaction_revision);
                self.last_compaction_revision = revision;
                self.push(self.now + self.config.compaction_interval_ms, Item::Compact, true);
            }
            Item::Expire => {
                if self.expiry_queued.is_some_and(|at| at <= self.now) {
                    self.expiry_queued = None;
                }
                let actor: Arc<str> = "etcd".into();
                if self.api.store_mut().expire(self.now, &actor) > 0 {
                    self.after_handler(None, Vec::new(), Vec::new(), Vec::new());
                } else {
                    self.queue_expiry();
                }
            }
            Item::External(event) => return Some(Stepped::External(event)),
            Item::HostWake(host) => {
                if self.host_wakes[host.0 as usize] == Some(self.now) {
                    self.host_wakes[host.0 as usize] = None;
                }
                self.run_host(host);
            }
            Item::NetReply { host, id, reply } => {
                let h = self.hosts.by_id_mut(host);
                if h.powered {
                    h.cri.deliver_reply(id, *reply);
                }
                self.sync_host(host);
            }
        }
        Some(Stepped::Internal)
    }

    /// Runs `f` with a context acting as `actor` on the control plane (kubectl, the API
    /// server's bootstrap, fault injection). Its writes are delivered like any other.
    pub fn as_actor<R>(&mut self, actor: &str, f: impl FnOnce(&mut Ctx) -> R) -> R {
        let mut timers = Vec::new();
        let mut notes = Vec::new();
        let mut node_fs = Vec::new();
        let result = {
            let mut ctx = Ctx {
                now: self.now,
                api: &mut self.api,
                rng: &mut self.rng,
                actor: actor.into(),
                timers: &mut timers,
                notes: &mut notes,
                notes_kept: self.config.record_history,
                host: None,
                hosts: Some(&self.hosts),
                connected: true,
                fabric: &mut self.fabric,
                metrics: &mut self.metrics,
                cloud: &mut self.cloud,
                node_fs: &mut node_fs,
            };
            f(&mut ctx)
        };
        self.after_handler(None, timers, notes, node_fs);
        result
    }

    /// Runs `f` with the API server and a request acting as `actor` (the kubectl layer), plus
    /// every host mutably (exec and logs reach containers). Its writes are delivered.
    pub fn with_api<R>(&mut self, actor: &str, f: impl FnOnce(&mut ApiServer, &mut Request, &mut crate::net::Net) -> R) -> R {
        let actor: Arc<str> = actor.into();
        let (result, sent) = {
            let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
            let mut net = crate::net::Net::new(&mut self.hosts, &self.fabric, self.now);
            let result = f(&mut self.api, &mut req, &mut net);
            (result, net.log)
        };
        self.log_packets(sent);
        self.after_handler(None, Vec::new(), Vec::new(), Vec::new());
        self.sync_hosts();
        result
    }

    /// Runs a handler of one component with its context.
    pub fn with_component(&mut self, index: usize, f: impl FnOnce(&mut dyn Component, &mut Ctx)) {
        let mut timers = Vec::new();
        let mut notes = Vec::new();
        let mut node_fs = Vec::new();
        {
            let slot = &mut self.slots[index];
            let connected = slot.host.is_none_or(|id| self.fabric.reaches_control_plane(self.hosts.name_of(id)));
            let (host, hosts) = match slot.host {
                Some(id) => (Some(self.hosts.by_id_mut(id)), None),
                None => (None, Some(&self.hosts)),
            };
            let mut ctx = Ctx {
                now: self.now,
                api: &mut self.api,
                rng: &mut self.rng,
                actor: slot.actor.clone(),
                timers: &mut timers,
                notes: &mut notes,
                notes_kept: self.config.record_history,
                host,
                hosts,
                connected,
                fabric: &mut self.fabric,
                metrics: &mut self.metrics,
                cloud: &mut self.cloud,
                node_fs: &mut node_fs,
            };
            f(slot.component.as_mut(), &mut ctx);
        }
        self.after_handler(Some(index), timers, notes, node_fs);
    }

    /// Index of a component by actor name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|s| &*s.actor == name)
    }

    /// The host loses power: its agents hear [`HostEvent::PowerOff`], then every process on it
    /// stops and its agents get nothing until [`Runtime::power_on`].
    pub fn power_off(&mut self, host: &str) -> bool {
        if !self.hosts.get(host).is_some_and(|h| h.powered) {
            return false;
        }
        for index in self.agents_of(host).to_vec() {
            self.with_component(index, |c, ctx| c.on_host(HostEvent::PowerOff, ctx));
            self.slots[index].epoch += 1;
        }
        let now = self.now;
        self.hosts.get_mut(host).expect("checked above").power_off(now);
        self.check_host(self.hosts.id(host).expect("checked above"));
        true
    }

    /// Runs every checker's host check on one host.
    fn check_host(&mut self, id: HostId) {
        let host = self.hosts.by_id(id);
        for checker in &mut self.checkers {
            if let Err(message) = checker.check_host(host, &self.api) {
                self.violations.push(Violation { t_ms: self.now, revision: self.api.store().revision(), checker: checker.name().to_string(), message });
            }
        }
    }

    /// Power returns to the host; its agents hear [`HostEvent::PowerOn`].
    pub fn power_on(&mut self, host: &str) -> bool {
        match self.hosts.get_mut(host) {
            Some(h) if !h.powered => h.power_on(),
            _ => return false,
        }
        for index in self.agents_of(host).to_vec() {
            self.relisted(index);
            self.with_component(index, |c, ctx| c.on_host(HostEvent::PowerOn, ctx));
        }
        true
    }

    /// The host can no longer reach the API server; its agents hear
    /// [`HostEvent::Disconnected`].
    pub fn disconnect(&mut self, host: &str) -> bool {
        if !self.hosts.contains_key(host) || !self.fabric.partition(host) {
            return false;
        }
        for index in self.agents_of(host).to_vec() {
            if self.runs(index) {
                self.with_component(index, |c, ctx| c.on_host(HostEvent::Disconnected, ctx));
            }
        }
        true
    }

    /// The host reaches the API server again; its agents hear [`HostEvent::Reconnected`].
    pub fn reconnect(&mut self, host: &str) -> bool {
        if !self.fabric.heal(host) {
            return false;
        }
        for index in self.agents_of(host).to_vec() {
            if self.runs(index) {
                self.relisted(index);
                self.with_component(index, |c, ctx| c.on_host(HostEvent::Reconnected, ctx));
            }
        }
        true
    }

    /// One agent's process restarts ([`HostEvent::Restart`]); false if no such agent runs.
    pub fn restart_agent(&mut self, name: &str) -> bool {
        let Some(index) = self.index_of(name) else { return false };
        if !self.runs(index) {
            return false;
        }
        self.relisted(index);
        self.with_component(index, |c, ctx| c.on_host(HostEvent::Restart, ctx));
        true
    }

    /// Whether a component is running (its host, if any, has power).
    fn runs(&self, index: usize) -> bool {
        self.slots[index].host.is_none_or(|id| self.hosts.by_id(id).powered)
    }

    /// Whether a component receives watch events (running and connected).
    fn receives(&self, index: usize) -> bool {
        self.runs(index) && self.slots[index].host.is_none_or(|id| self.fabric.reaches_control_plane(self.hosts.name_of(id)))
    }

    fn after_handler(&mut self, component: Option<usize>, timers: Vec<TimerRequest>, notes: Vec<Note>, node_fs: Vec<(String, NodeFsOp)>) {
        // A disk attached or detached during the handler moves to (or off) its machine now.
        self.cloud.place_devices(&mut self.hosts);
        // Node filesystem changes asked for from the control plane.
        for (node, op) in node_fs {
            let Some(host) = self.hosts.get_mut(&node) else { continue };
            let tree = host.cri.volumes.trees.entry(kubesim_host::NODE_ROOT.to_string()).or_insert_with(kubesim_host::node_root);
            match &op {
                NodeFsOp::RemoveAll(path) => {
                    tree.remove_path(path);
                }
            }
        }
        if let Some(index) = component {
            let epoch = self.slots[index].epoch;
            for timer in timers {
                self.push(timer.at_ms.max(self.now), Item::Timer { component: index, token: timer.token, epoch }, timer.periodic);
            }
            if let Some(host) = self.slots[index].host {
                self.sync_host(host);
                self.check_host(host);
            }
        }
        if self.config.record_history {
            self.notes.extend(notes);
        }
        for commit in self.api.store_mut().drain_commits() {
            if self.config.record_history {
                self.trace.push(TraceRecord {
                    t_ms: commit.t_ms,
                    revision: commit.revision,
                    event_type: commit.event_type,
                    actor: commit.actor.clone(),
                    object: commit.object.clone(),
                });
            }
            for checker in &mut self.checkers {
                if let Err(message) = checker.check(&commit, &self.api) {
                    self.violations.push(Violation { t_ms: commit.t_ms, revision: commit.revision, checker: checker.name().to_string(), message });
                }
            }
            let periodic = is_housekeeping(commit.resource);
            self.push(self.now + self.config.watch_latency_ms, Item::Deliver(Box::new(commit)), periodic);
        }
        self.queue_expiry();
    }

    /// Queues an [`Item::Expire`] at the store's next lease expiry unless one is queued by
    /// then. Periodic: a lease running out does not keep a run going on its own.
    fn queue_expiry(&mut self) {
        let Some(at) = self.api.store().next_expiry() else { return };
        if self.expiry_queued.is_none_or(|queued| at < queued) {
            self.expiry_queued = Some(at);
            self.push(at.max(self.now), Item::Expire, true);
        }
    }

    /// Runs a host's processes that are due now; a container that exited wakes the host's
    /// agents ([`HostEvent::RuntimeChanged`]: the kubelet's PLEG relists).
    fn run_host(&mut self, id: HostId) {
        let now = self.now;
        let host = self.hosts.by_id_mut(id);
        if !host.powered {
            return;
        }
        if host.cri.advance(now) {
            for index in self.host_agents[id.0 as usize].clone() {
                if self.runs(index) {
                    self.with_component(index, |c, ctx| c.on_host(HostEvent::RuntimeChanged, ctx));
                }
            }
        }
        self.sync_host(id);
    }

    /// The agents of the host named `host`, in registration order.
    fn agents_of(&self, host: &str) -> &[usize] {
        self.hosts.id(host).map_or(&[], |id| &self.host_agents[id.0 as usize])
    }

    /// [`Runtime::sync_host`] on every host, in name order.
    fn sync_hosts(&mut self) {
        let ids: Vec<HostId> = self.hosts.keys().filter_map(|name| self.hosts.id(name)).collect();
        for id in ids {
            self.sync_host(id);
        }
    }

    /// After anything touched a host: routes its processes' network calls and queues its next
    /// process wake-up.
    fn sync_host(&mut self, id: HostId) {
        let now = self.now;
        let host = self.hosts.by_id_mut(id);
        if !host.powered {
            return;
        }
        let outbox = host.cri.take_outbox();
        if !outbox.is_empty() {
            let name = self.hosts.name_of(id).to_string();
            for request in outbox {
                let (reply, latency) = self.route(&name, &request);
                self.push(now + latency, Item::NetReply { host: id, id: request.id, reply: Box::new(reply) }, false);
            }
        }
        let Some(next) = self.hosts.by_id(id).cri.next_wakeup(now) else { return };
        let next = next.max(now);
        let queued = &mut self.host_wakes[id.0 as usize];
        if queued.is_some_and(|at| at <= next && at >= now) {
            return;
        }
        *queued = Some(next);
        self.push(next, Item::HostWake(id), false);
    }

    /// Routes one network call: loopback (the caller's own pod) answers locally, everything
    /// else — other pods of the same node included — travels the fabric ([`crate::net::route_remote`]). The answer and when it arrives.
    fn route(&mut self, from: &str, request: &kubesim_host::cri::NetRequest) -> (kubesim_os::program::NetReply, Millis) {
        let now = self.now;
        if let Some((reply, wait)) = self.hosts.get_mut(from).and_then(|h| h.cri.deliver_local(&request.container, &request.call, now)) {
            if self.config.record_history {
                let src_ip = self.hosts.get(from).and_then(|h| h.cri.container_ip(&request.container)).unwrap_or_default();
                let packet = crate::net::Packet::new(from, src_ip, 0, &request.call, kubesim_host::netfilter::Dnat::Unchanged);
                self.log_packet(crate::net::PacketRecord::of(now, &packet, &crate::net::Delivery::answer(reply.clone(), 1 + wait)));
            }
            return (reply, 1 + wait);
        }
        let src_ip = self.hosts.get(from).and_then(|h| h.cri.container_ip(&request.container)).unwrap_or_default();
        let src_port = 40_000 + (request.id % 20_000) as u16;
        let dnat = match self.hosts.get_mut(from) {
            Some(h) => {
                let node_ip = h.ip();
                crate::net::dnat(&mut h.netfilter, &node_ip, (&src_ip, src_port), &request.call, now)
            }
            None => kubesim_host::netfilter::Dnat::Unchanged,
        };
        let packet = crate::net::Packet::new(from, src_ip, src_port, &request.call, dnat);
        let delivery = crate::net::route_remote(&mut self.hosts, &self.fabric, &packet, now);
        if self.config.record_history {
            self.log_packet(crate::net::PacketRecord::of(now, &packet, &delivery));
        }
        if let Some(id) = delivery.served_by.and_then(|host| self.hosts.id(&host)) {
            self.sync_host(id);
        }
        (delivery.reply, delivery.latency_ms)
    }

    /// Runs a command in a container to completion now, its calls routed over the fabric
    /// ([`crate::net::exec`]) and logged; the hosts it touched are synced afterwards.
    pub fn exec(&mut self, host: &str, container_id: &str, argv: &[String], io: kubesim_host::cri::ExecIo) -> Option<kubesim_host::cri::ExecOutput> {
        self.with_network(|net| crate::net::exec(net, host, container_id, argv, io))
    }

    /// Runs `f` with the network (a client outside the cluster sending packets, as the
    /// workstation does): the packets it sent through [`crate::net::Net::send`] go to the packet
    /// log, then the hosts are synced, as after an exec.
    pub fn with_network<R>(&mut self, f: impl FnOnce(&mut crate::net::Net) -> R) -> R {
        let mut net = crate::net::Net::new(&mut self.hosts, &self.fabric, self.now);
        let out = f(&mut net);
        let sent = net.log;
        self.log_packets(sent);
        self.sync_hosts();
        out
    }

    /// Runs `f` with the hosts and the fabric for connection probes (`netpol check`, the
    /// matrix): a connect-only packet ([`crate::net::Packet::connect_only`]) changes no process
    /// and no host, so nothing is logged or synced and the world's future is the same as if no
    /// probe had run. Only for such packets.
    pub fn probe_network<R>(&mut self, f: impl FnOnce(&mut Hosts, &crate::Fabric, Millis) -> R) -> R {
        f(&mut self.hosts, &self.fabric, self.now)
    }

    /// Puts packets sent outside the event loop in the packet log (when history is recorded).
    fn log_packets(&mut self, records: Vec<crate::net::PacketRecord>) {
        if self.config.record_history {
            for record in records {
                self.log_packet(record);
            }
        }
    }

    fn log_packet(&mut self, record: crate::net::PacketRecord) {
        // A sample of the pods' DNS queries becomes notes (the flow view draws them): at most
        // one per node per DNS_NOTE_SAMPLE_MS.
        if record.protocol == "dns" && self.config.record_history {
            let bucket = record.t_ms / DNS_NOTE_SAMPLE_MS;
            if self.dns_note_buckets.get(&record.from_host) != Some(&bucket) {
                self.dns_note_buckets.insert(record.from_host.clone(), bucket);
                let question = record.question.clone().unwrap_or_default();
                let answer = record.answer.as_ref().map(|a| format!(" ({a})")).unwrap_or_default();
                self.notes.push(Note {
                    t_ms: record.t_ms,
                    actor: format!("pods/{}", record.from_host).into(),
                    target: "coredns".into(),
                    call: "DNS".into(),
                    detail: format!("{question} from {} → {}{answer}", record.src_ip, record.outcome),
                });
            }
        }
        if self.packets.len() >= PACKET_LOG_CAP {
            self.packets.pop_front();
        }
        self.packets.push_back(record);
        self.packets_total += 1;
    }

    fn push(&mut self, at_ms: Millis, item: Item<E>, periodic: bool) {
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
        let record = self.config.record_history && !is_housekeeping(commit.resource);
        for (index, event_type) in targets {
            if !self.receives(index) {
                continue; // a broken watch: the component relists when it is back
            }
            if commit.revision <= self.slots[index].listed_at {
                continue; // already in the list the component's watch restarted from
            }
            if record {
                self.deliveries.push(WatchDelivery { t_ms: self.now, revision: commit.revision, event_type, component: self.slots[index].actor.clone() });
            }
            let event = WatchEvent { event_type, resource: commit.resource, object: commit.object.clone(), revision: commit.revision };
            for checker in &mut self.checkers {
                if let Err(message) = checker.delivered(index, &event, self.now) {
                    self.violations.push(Violation { t_ms: self.now, revision: commit.revision, checker: checker.name().to_string(), message });
                }
            }
            self.with_component(index, |component, ctx| component.on_watch(&event, ctx));
        }
    }
}

impl Runtime<()> {
    /// Runs every entry up to and including virtual time `t_ms`, then sets the clock to it.
    pub fn run_until(&mut self, t_ms: Millis) {
        while self.next_event_time().is_some_and(|t| t <= t_ms) {
            self.step();
        }
        self.advance_clock(t_ms);
    }

    /// Runs until nothing but periodic work is pending, or virtual `limit_ms`.
    pub fn run_until_quiet(&mut self, limit_ms: Millis) {
        while self.busy() && self.next_event_time().is_some_and(|t| t <= limit_ms) {
            self.step();
        }
        if self.busy() {
            self.advance_clock(limit_ms);
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

#[cfg(test)]
mod tests {
    use super::*;

    // Mirrors the API server's watch filtering (staging/src/k8s.io/apiserver/pkg/storage/cacher
    // cacheWatcher.convertToWatchEvent): an object entering a field selection is ADDED, one
    // leaving it is DELETED.
    #[test]
    fn filtered_watches_translate_modifications_that_cross_the_selection() {
        let cases = [
            (EventType::Added, false, true, Some(EventType::Added)),
            (EventType::Added, false, false, None),
            (EventType::Modified, true, true, Some(EventType::Modified)),
            (EventType::Modified, false, true, Some(EventType::Added)),
            (EventType::Modified, true, false, Some(EventType::Deleted)),
            (EventType::Modified, false, false, None),
            (EventType::Deleted, true, false, Some(EventType::Deleted)),
            (EventType::Deleted, false, false, None),
        ];
        for (event, was, now, want) in cases {
            assert_eq!(filtered_event(event, was, now), want, "{event:?} was={was} now={now}");
        }
    }
}
