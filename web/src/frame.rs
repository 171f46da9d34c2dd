//! A frame: everything the views draw, as plain shared data. Parts that did not change keep
//! their `Rc`, so components comparing props skip re-rendering them.

use crate::engine::{FlowItem, Millis, Transition};
use kubesim_sim::view::{ClusterSnapshot, EventView, Lifecycle, NetworkView, StorageView, WorkloadView};
use std::rc::Rc;

/// A lifecycle edge (from, to; None = created / deleted) and how many pods took it.
pub type EdgeCount = (Option<Lifecycle>, Option<Lifecycle>, u32);

/// A message travelling between two components in the flow view.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub struct Pulse {
    /// Identity.
    pub id: u64,
    /// The message.
    pub item: Rc<FlowItem>,
    /// 0..1 along its path.
    pub progress: f64,
}

/// A pod travelling along a lifecycle edge.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub struct Mover {
    /// Identity (the transition sequence number).
    pub id: u64,
    /// Pod UID.
    pub uid: String,
    /// From (None = created).
    pub from: Option<Lifecycle>,
    /// To (None = deleted).
    pub to: Option<Lifecycle>,
    /// 0..1 along the edge.
    pub progress: f64,
}

/// A timeline marker: an input applied (or due) at a virtual time.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// When.
    pub t_ms: Millis,
    /// What.
    pub label: String,
    /// Entered in the UI.
    pub user: bool,
    /// Applying it failed.
    pub error: bool,
}

/// Frame-time statistics (wall clock, for the performance readout).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Perf {
    /// Milliseconds spent in the simulation this frame.
    pub sim_ms: f64,
    /// Frames per second over the last second.
    pub fps: f64,
    /// The simulation's WebAssembly memory in bytes (0 natively), as its module sees it.
    pub sim_memory_bytes: f64,
}

/// Everything the views draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Virtual now.
    pub t_ms: Millis,
    /// The store's revision.
    pub revision: u64,
    /// The furthest time this history has reached.
    pub high_water_ms: Millis,
    /// Work other than housekeeping is pending.
    pub busy: bool,
    /// The world generation (changes on time travel).
    pub generation: u64,
    /// The simulation could not keep up with the requested speed.
    pub lagging: bool,
    /// Nodes and pods.
    pub scene: Rc<ClusterSnapshot>,
    /// Deployments, ReplicaSets, Jobs, ...
    pub workloads: Rc<Vec<WorkloadView>>,
    /// Events in the store.
    pub events: Rc<Vec<EventView>>,
    /// Services, kube-proxy rules and recent packets.
    pub network: Rc<NetworkView>,
    /// Classes, claims with their paths, volumes and attachments.
    pub storage: Rc<StorageView>,
    /// Messages in flight.
    pub pulses: Rc<Vec<Pulse>>,
    /// Pods in flight between lifecycle states.
    pub movers: Rc<Vec<Mover>>,
    /// The most recent messages, newest last.
    pub flow_log: Rc<Vec<Rc<FlowItem>>>,
    /// Per component so far: (writes and calls sent, watch notifications received).
    pub flow_counts: Rc<Vec<(String, u32, u32)>>,
    /// Edge traversal counts of the lifecycle graph.
    pub edges: Rc<Vec<EdgeCount>>,
    /// Inputs on the timeline.
    pub markers: Rc<Vec<Marker>>,
    /// Virtual times of non-housekeeping API writes.
    pub activity: Rc<Vec<Millis>>,
    /// Frame statistics.
    pub perf: Perf,
    /// Creates the browser's size cap refused so far (a runaway workload).
    pub limit_refusals: u64,
    /// Nodes that are down now (without power, or cut off from the API server).
    pub nodes_down: Rc<Vec<String>>,
    /// The latest lifecycle transitions (at most [`RECENT_TRANSITIONS`]), oldest first.
    pub recent_transitions: Rc<Vec<Transition>>,
}

/// How many of the latest lifecycle transitions a frame carries (the lifecycle view's log).
pub const RECENT_TRANSITIONS: usize = 60;

impl Frame {
    /// An empty frame (before the first tick).
    pub fn empty() -> Frame {
        Frame {
            t_ms: 0,
            revision: 0,
            high_water_ms: 0,
            busy: false,
            generation: 0,
            lagging: false,
            scene: Rc::new(ClusterSnapshot { t_ms: 0, revision: 0, nodes: Vec::new(), pods: Vec::new() }),
            workloads: Rc::new(Vec::new()),
            events: Rc::new(Vec::new()),
            network: Rc::new(NetworkView::default()),
            storage: Rc::new(StorageView::default()),
            pulses: Rc::new(Vec::new()),
            movers: Rc::new(Vec::new()),
            flow_log: Rc::new(Vec::new()),
            flow_counts: Rc::new(Vec::new()),
            edges: Rc::new(Vec::new()),
            markers: Rc::new(Vec::new()),
            activity: Rc::new(Vec::new()),
            perf: Perf::default(),
            limit_refusals: 0,
            nodes_down: Rc::new(Vec::new()),
            recent_transitions: Rc::new(Vec::new()),
        }
    }
}
