//! How components (controllers, the scheduler, node agents) live in the simulation: they
//! declare what they watch, react to watch events and timers, and act only through [`Ctx`] —
//! API calls recorded with their actor name, timers on the virtual clock, the world's RNG,
//! their host (node agents), and notes for the trace (CRI calls and other non-API messages the
//! UI animates).

use crate::fabric::Fabric;
use crate::metrics::ResourceMetrics;
use kubesim_api::k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{KindInfo, Object};
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::error::Result;
use kubesim_apiserver::{ApiError, ApiServer, DeleteOptions, Deleted, Request, SimRng};
use kubesim_host::cloud::BlockStore;
use kubesim_host::{Host, Hosts};
use kubesim_store::{EventType, Resource};
use std::any::Any;
use std::sync::Arc;

/// Which objects a component's watch selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchFilter {
    /// Every object of the resource.
    All,
    /// Pods with `spec.nodeName=<node>` (the kubelet's field selector).
    PodsOnNode(String),
    /// Objects named exactly this (a field selector on metadata.name).
    Named(String),
}

/// One watch a component holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interest {
    /// The resource watched.
    pub resource: Resource,
    /// The field selector.
    pub filter: WatchFilter,
}

impl Interest {
    /// Whether an object passes this watch's field selector.
    pub fn selects(&self, object: &Object) -> bool {
        match &self.filter {
            WatchFilter::All => true,
            WatchFilter::PodsOnNode(node) => object.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.as_deref()) == Some(node.as_str()),
            WatchFilter::Named(name) => object.name() == name,
        }
    }
}

/// A watch notification as the watcher sees it (ADDED/DELETED when an object enters or leaves
/// its field selector, as the API server's filtered watches report).
#[derive(Clone, Debug)]
pub struct WatchEvent {
    /// ADDED, MODIFIED or DELETED.
    pub event_type: EventType,
    /// The resource.
    pub resource: Resource,
    /// The object (for DELETED: its last state).
    pub object: Arc<Object>,
    /// The revision of the commit.
    pub revision: u64,
}

/// A non-API message for the trace: a CRI call, a probe, a container exit.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// Virtual time.
    pub t_ms: Millis,
    /// Who (e.g. `kubelet/node-1`).
    pub actor: Arc<str>,
    /// To whom (e.g. `cri/node-1`).
    pub target: String,
    /// The call or message (`RunPodSandbox`, `PullImage`, ...).
    pub call: String,
    /// Details (pod, container, image, duration).
    pub detail: String,
}

/// A timer request: wake `token` at virtual time `at_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerRequest {
    /// When.
    pub at_ms: Millis,
    /// The component's own token.
    pub token: u64,
    /// Periodic housekeeping (heartbeats, resyncs) does not keep a run going on its own.
    pub periodic: bool,
}

/// Everything a component may touch while handling one event.
pub struct Ctx<'a> {
    /// Virtual now.
    pub now: Millis,
    /// The API server (components must use it only through their actor; reads are free).
    pub api: &'a mut ApiServer,
    /// The world's RNG.
    pub rng: &'a mut SimRng,
    /// The component's actor name.
    pub actor: Arc<str>,
    /// Timers requested during this step.
    pub timers: &'a mut Vec<TimerRequest>,
    /// Notes recorded during this step.
    pub notes: &'a mut Vec<Note>,
    /// Whether the runtime keeps notes (it records history): see [`Ctx::note_with`].
    pub notes_kept: bool,
    /// The host this component runs on (node agents); `None` on the control plane.
    pub host: Option<&'a mut Host>,
    /// Every host, read-only, for control-plane components that query nodes over the network
    /// (the metrics-server's scrapes); `None` for node agents.
    pub hosts: Option<&'a Hosts>,
    /// Whether this component reaches the API server. While false (its host is partitioned
    /// away), every write fails with a connection error and no watch events arrive. Reads of
    /// `api` are not checked: components must not read state they could not have fetched.
    pub connected: bool,
    /// The network fabric (addresses, routes, partitions).
    pub fabric: &'a mut Fabric,
    /// The resource metrics API (metrics.k8s.io): the metrics-server writes it, the HPA reads it.
    pub metrics: &'a mut ResourceMetrics,
    /// The cloud's block storage: the CSI controller services create, attach and detach disks
    /// through it (only they call it; a disk's content moves once the handler returns).
    pub cloud: &'a mut BlockStore,
    /// Node filesystem changes requested during this step ([`Ctx::node_fs`]).
    pub node_fs: &'a mut Vec<(String, NodeFsOp)>,
}

/// A change to a node's own filesystem (the node root that hostPath volumes mount), asked for
/// from the control plane by a storage component whose work runs on the node upstream: the
/// local-path provisioner's teardown helper pod (`rm -rf "$VOL_DIR"`) and the host-path CSI
/// driver's DeleteVolume (its controller service is on the node). Applied when the handler
/// returns, and recorded in the trace's notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeFsOp {
    /// `rm -rf PATH`.
    RemoveAll(String),
}

/// The error a write gets while the component cannot reach the API server (client-go's dial
/// error; no `metav1.Status`, hence code 0).
pub fn unreachable_error() -> ApiError {
    ApiError { code: 0, reason: "Unreachable", message: format!("dial tcp {API_SERVER_ENDPOINT}: i/o timeout") }
}

/// Where components reach the API server (kind's control-plane node, port 6443:
/// [`crate::apiserver_endpoint::API_SERVER_IP`]).
pub const API_SERVER_ENDPOINT: &str = "172.18.0.2:6443";

impl Ctx<'_> {
    fn request(&mut self) -> Result<(Request<'_>, &mut ApiServer)> {
        if !self.connected {
            return Err(unreachable_error());
        }
        Ok((Request { now: self.now, rng: self.rng, actor: &self.actor }, self.api))
    }
    /// An informer's initial list: every object of these resources, in resource order then
    /// the store's order.
    pub fn list_all(&self, resources: &[(&'static str, &'static str)]) -> Vec<Arc<kubesim_api::object::Object>> {
        let store = self.api.store();
        resources.iter().flat_map(|r| store.list(*r, None).cloned().collect::<Vec<_>>()).collect()
    }
    /// The component's host (node agents only).
    pub fn host_mut(&mut self) -> Option<&mut Host> {
        self.host.as_deref_mut()
    }
    /// Asks for a change to `node`'s filesystem (see [`NodeFsOp`]); it fails if the node does
    /// not exist, has no power or is cut off from the control plane (its helper could not run
    /// or report back).
    pub fn node_fs(&mut self, node: &str, op: NodeFsOp) -> std::result::Result<(), String> {
        let powered = match (&self.host, self.hosts) {
            (Some(h), _) if h.name == node => Some(h.powered),
            (_, Some(hosts)) => hosts.get(node).map(|h| h.powered),
            _ => None,
        };
        match powered {
            None => Err(format!("node {node:?} not found")),
            Some(false) => Err(format!("node {node:?} is not running")),
            Some(true) if !self.fabric.reaches_control_plane(node) => Err(format!("node {node:?} is unreachable")),
            Some(true) => {
                let NodeFsOp::RemoveAll(path) = &op;
                self.note(format!("node/{node}"), "rm -rf", path.clone());
                self.node_fs.push((node.to_string(), op));
                Ok(())
            }
        }
    }
    /// Wakes this component with `token` after `delay_ms`.
    pub fn after(&mut self, delay_ms: Millis, token: u64) {
        self.timers.push(TimerRequest { at_ms: self.now + delay_ms, token, periodic: false });
    }
    /// Like [`Ctx::after`], for periodic housekeeping.
    pub fn after_periodic(&mut self, delay_ms: Millis, token: u64) {
        self.timers.push(TimerRequest { at_ms: self.now + delay_ms, token, periodic: true });
    }
    /// Records a non-API message.
    pub fn note(&mut self, target: impl Into<String>, call: impl Into<String>, detail: impl Into<String>) {
        self.notes.push(Note { t_ms: self.now, actor: self.actor.clone(), target: target.into(), call: call.into(), detail: detail.into() });
    }
    /// [`Ctx::note`] whose target and detail are formatted only if the runtime keeps notes
    /// (a run without history, as a benchmark at scale, would drop them: several per pod).
    pub fn note_with(&mut self, target: impl FnOnce() -> String, call: &str, detail: impl FnOnce() -> String) {
        if self.notes_kept {
            self.note(target(), call, detail());
        }
    }
    /// POST.
    pub fn create(&mut self, object: Object) -> Result<Arc<Object>> {
        let (mut req, api) = self.request()?;
        api.create(object, &mut req)
    }
    /// PUT.
    pub fn update(&mut self, object: Object) -> Result<Arc<Object>> {
        let (mut req, api) = self.request()?;
        api.update(object, &mut req)
    }
    /// PUT status.
    pub fn update_status(&mut self, object: Object) -> Result<Arc<Object>> {
        let (mut req, api) = self.request()?;
        api.update_status(object, &mut req)
    }
    /// POST pods/binding.
    pub fn bind(&mut self, namespace: &str, name: &str, node: &str) -> Result<Arc<Object>> {
        let (mut req, api) = self.request()?;
        api.bind(namespace, name, node, &mut req)
    }
    /// DELETE.
    pub fn delete(&mut self, info: &KindInfo, namespace: &str, name: &str, options: DeleteOptions) -> Result<Deleted> {
        let (mut req, api) = self.request()?;
        api.delete(info, namespace, name, options, &mut req)
    }
    /// Records a v1 Event about `object` (aggregating repeats as the event recorder does:
    /// same object, reason, message and source → count + 1 and a new lastTimestamp).
    pub fn event(&mut self, object: &Object, type_: &str, reason: &str, message: String) {
        if !self.connected {
            return; // the event broadcaster drops what it cannot send
        }
        let component = match self.actor.split('/').next().unwrap_or(&self.actor) {
            "scheduler" => "default-scheduler".to_string(), // the profile's schedulerName
            // sig-storage-lib-external-provisioner's source: `<provisioner>_<pod>_<uuid>`.
            "local-path-provisioner" => "rancher.io/local-path_local-path-provisioner-7577fdbbfb-ztg6v_9e3c1a7b-52d4-4f0e-8c6a-1d2b3e4f5a6b".to_string(),
            // The CSI drivers' external-provisioners (the same lib, in their controller pods).
            "csi-provisioner-disk" => "disk.csi.kubesim.io_disk-csi-controller-6f9c7b8d5-q7x2m_1b7e2c4d-8a3f-4e6b-9c1d-2f4a6b8c0e13".to_string(),
            "csi-provisioner-hostpath" => "hostpath.csi.k8s.io_csi-hostpathplugin-0_5d2a9e7c-3b1f-4c8d-a6e4-7f9b1c3d5e27".to_string(),
            // kube-controller-manager's expand controller records as `volume_expand`.
            "persistentvolume-expander" => "volume_expand".to_string(),
            // external-resizer's event source: `external-resizer <driver>`.
            "csi-resizer-disk" => "external-resizer disk.csi.kubesim.io".to_string(),
            "csi-resizer-hostpath" => "external-resizer hostpath.csi.k8s.io".to_string(),
            other => other.to_string(),
        };
        let host = self.actor.split_once('/').map(|(_, h)| h.to_string());
        let namespace = match object.namespace() {
            "" => "default".to_string(),
            ns => ns.to_string(),
        };
        let involved = ObjectReference {
            api_version: Some(object.api_version().to_string()),
            kind: Some(object.kind().to_string()),
            name: Some(object.name().to_string()),
            namespace: Some(object.namespace().to_string()).filter(|n| !n.is_empty()),
            uid: object.metadata().uid.clone(),
            resource_version: Some(object.resource_version().to_string()).filter(|r| !r.is_empty()),
            field_path: None,
        };
        let source = EventSource { component: Some(component.clone()), host: host.clone() };
        // Aggregation: the recorder's cache maps (object, reason, message, source) to the event.
        let key = {
            let mut h = kubesim_api::hash::Fnv64::new();
            for part in [
                &namespace,
                involved.uid.as_deref().unwrap_or(""),
                involved.name.as_deref().unwrap_or(""),
                reason,
                message.as_str(),
                &component,
                host.as_deref().unwrap_or(""),
            ] {
                h = h.bytes(part.as_bytes()).byte(0xff);
            }
            h.finish()
        };
        // The recorder's own cache (each component, each kubelet has its EventCorrelator).
        let recorder = format!("{component}/{}", host.as_deref().unwrap_or(""));
        let existing = self
            .api
            .event_name(&recorder, key)
            .and_then(|name| self.api.lookup(("", "events"), &namespace, name))
            .and_then(|o| match o.as_ref() {
                Object::Event(e) => Some(e),
                _ => None,
            })
            .filter(|e| {
                e.involved_object.uid == involved.uid
                    && e.involved_object.name == involved.name
                    && e.reason.as_deref() == Some(reason)
                    && e.message.as_deref() == Some(message.as_str())
                    && e.source.as_ref() == Some(&source)
            })
            .map(|e| (**e).clone());
        let now = time_at(self.now);
        let result = match existing {
            Some(mut event) => {
                event.count = Some(event.count.unwrap_or(1) + 1);
                event.last_timestamp = Some(now);
                let updated = self.update(Object::Event(Box::new(event)));
                if let Ok(object) = &updated {
                    self.api.remember_event(&recorder, key, &namespace, object.name());
                }
                updated
            }
            None => {
                // Upstream names events "<object>.<hex unix nanos>"; the sub-millisecond part
                // is the store's revision, so names stay unique and deterministic and, as real
                // clocks do, follow the order the events were recorded in (describe lists
                // events of the same second in name order).
                let unix_nanos =
                    (kubesim_api::time::EPOCH_UNIX_SECONDS as u64 * 1_000_000_000) + self.now * 1_000_000 + self.api.store().revision() % 1_000_000;
                let name = format!("{}.{:x}", object.name(), unix_nanos);
                let event = Event {
                    metadata: ObjectMeta { name: Some(name), namespace: Some(namespace), ..Default::default() },
                    involved_object: involved,
                    reason: Some(reason.to_string()),
                    message: Some(message),
                    source: Some(source),
                    first_timestamp: Some(now.clone()),
                    last_timestamp: Some(now),
                    count: Some(1),
                    type_: Some(type_.to_string()),
                    event_time: None,
                    reporting_component: Some(component),
                    reporting_instance: host,
                    ..Default::default()
                };
                let created = self.create(Object::Event(Box::new(event)));
                if let Ok(object) = &created {
                    self.api.remember_event(&recorder, key, object.namespace(), object.name());
                }
                created
            }
        };
        // Event writes are best effort, as the event broadcaster's are.
        let _ = result;
    }
}

/// Cloning a boxed component (so a whole world can be cloned: time travel from snapshots).
/// Implemented for every `Component + Clone`: derive `Clone` on the component.
pub trait ComponentClone {
    /// An independent copy whose future behaviour is identical to this one's.
    fn clone_box(&self) -> Box<dyn Component>;
}

impl<T: Component + Clone + 'static> ComponentClone for T {
    fn clone_box(&self) -> Box<dyn Component> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Component> {
    fn clone(&self) -> Box<dyn Component> {
        self.as_ref().clone_box()
    }
}

/// What happens to the host a node agent runs on (delivered by the runtime, see
/// [`Component::on_host`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// The machine is about to lose power. After this call the runtime drops every timer and
    /// watch event of the component until [`HostEvent::PowerOn`].
    PowerOff,
    /// Power is back: the component's earlier timers are gone, so it re-arms what it needs and
    /// relists.
    PowerOn,
    /// The host can no longer reach the API server: writes fail, watch events stop. Timers
    /// keep running (the processes are alive).
    Disconnected,
    /// The host reaches the API server again: the component relists (its watches were broken).
    Reconnected,
    /// The agent's process restarts: it drops its in-memory state and rebuilds it from the API
    /// server and the host.
    Restart,
    /// A container on the host changed state on its own (its main process exited, the OOM
    /// killer struck): the runtime's event stream, which the kubelet's PLEG relists on.
    RuntimeChanged,
}

/// Downcasting, implemented for every `'static` type (no per-component boilerplate).
pub trait AsAny {
    /// `&dyn Any`.
    fn as_any(&self) -> &dyn Any;
    /// `&mut dyn Any`.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl<'a> dyn Component + 'a {
    /// The component as its concrete type. Use this rather than `as_any` on a
    /// `Box<dyn Component>`, which would downcast the box itself.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.as_any().downcast_ref::<T>()
    }
    /// The component as its concrete type, mutably.
    pub fn downcast_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.as_any_mut().downcast_mut::<T>()
    }
}

/// A simulated component. Components must be `Clone` (via [`ComponentClone`]): a clone's
/// future is bit-identical to the original's, so everything they hold is plain data.
pub trait Component: ComponentClone + AsAny {
    /// The actor name written into the trace (`scheduler`, `kubelet/node-1`, ...).
    fn name(&self) -> &str;
    /// The watches this component holds (registered once, at start).
    fn interests(&self) -> Vec<Interest>;
    /// Called once at start (virtual time of registration).
    fn start(&mut self, ctx: &mut Ctx);
    /// A watch notification.
    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx);
    /// A timer this component requested.
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx);
    /// Something happened to this component's host (node agents only). The default ignores it.
    fn on_host(&mut self, event: HostEvent, ctx: &mut Ctx) {
        let _ = (event, ctx);
    }
}
