//! The EndpointSlice controller (pkg/controller/endpointslice with the staging
//! `k8s.io/endpointslice` reconciler) and the legacy Endpoints controller
//! (pkg/controller/endpoint): the endpoints of every Service with a selector.
//!
//! Both are split as upstream is: the informer side (`EndpointSliceController`,
//! `EndpointsController`) and pure functions that compute the writes (`reconcile_slices` —
//! reconciler.go's Reconcile, reconcileByAddressType, reconcileByPortMapping and finalize —
//! and `endpoints_subsets` / `truncate_endpoints` — syncService, RepackSubsets and
//! truncateEndpoints), so upstream's reconciler_test.go vectors run against the same code the
//! controllers use. `TriggerTimeTracker` (endpointslice/util/trigger_time_tracker.go) gives
//! both objects their `endpoints.kubernetes.io/last-change-trigger-time` annotation.
//!
//! Where Go iterates a map (the desired endpoint set's `PopAny`, a set of slice names), kubesim
//! iterates in a fixed order instead: endpoints by pod namespace/name, slices by name. The
//! legacy controller's subsets are ordered by their port lists rather than by the md5 of a
//! spew dump (SortSubsets' `subsetsByHash`); addresses inside a subset are in upstream's order
//! (`LessEndpointAddress`: the IP as a byte string, then the target's UID).

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{
    EndpointAddress, EndpointPort as CoreEndpointPort, EndpointSubset, Endpoints, ObjectReference, Pod, Service, ServicePort,
};
use kubesim_api::k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::selector::Selector;
use kubesim_api::time::{millis_of, time_at};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::{Ctx, WatchEvent};
use std::collections::{BTreeMap, BTreeSet};

/// `kubernetes.io/service-name` (discovery.LabelServiceName).
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// `endpointslice.kubernetes.io/managed-by` (discovery.LabelManagedBy).
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// The EndpointSlice controller's managed-by value (`controllerName`).
pub const MANAGED_BY: &str = "endpointslice-controller.k8s.io";
/// `service.kubernetes.io/headless` (v1.IsHeadlessService).
pub const HEADLESS_LABEL: &str = "service.kubernetes.io/headless";
/// `endpoints.kubernetes.io/managed-by` on the Endpoints the legacy controller writes (v1.33+).
pub const ENDPOINTS_MANAGED_BY_LABEL: &str = "endpoints.kubernetes.io/managed-by";
/// The legacy Endpoints controller's name, its managed-by value and event source.
pub const ENDPOINTS_CONTROLLER: &str = "endpoint-controller";
/// `endpoints.kubernetes.io/last-change-trigger-time` (v1.EndpointsLastChangeTriggerTime).
pub const LAST_CHANGE_TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";
/// `endpoints.kubernetes.io/over-capacity` (v1.EndpointsOverCapacity).
pub const OVER_CAPACITY: &str = "endpoints.kubernetes.io/over-capacity";
/// --max-endpoints-per-slice's default.
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;
/// The legacy controller's `maxCapacity`: addresses an Endpoints object holds at most.
pub const ENDPOINTS_MAX_CAPACITY: usize = 1000;
/// Modelled processing latency (the controllers batch changes for about a second upstream).
pub const ENDPOINTS_LATENCY_MS: Millis = 10;

fn as_service(object: &Object) -> Option<&Service> {
    match object {
        Object::Service(s) => Some(s),
        _ => None,
    }
}

fn pod_ip(pod: &Pod) -> Option<&str> {
    pod.status.as_ref().and_then(|s| s.pod_ip.as_deref()).filter(|ip| !ip.is_empty())
}

fn is_ipv6(ip: &str) -> bool {
    ip.contains(':')
}

/// The pod's addresses of one family (`status.podIPs`, falling back to `status.podIP`).
fn pod_ips_of_family(pod: &Pod, ipv6: bool) -> Vec<String> {
    let status = pod.status.as_ref();
    let mut ips: Vec<String> = status.and_then(|s| s.pod_ips.as_ref()).map(|l| l.iter().map(|p| p.ip.clone()).collect()).unwrap_or_default();
    if ips.is_empty() {
        ips.extend(pod_ip(pod).map(str::to_string));
    }
    ips.retain(|ip| !ip.is_empty() && is_ipv6(ip) == ipv6);
    ips
}

/// `helper.IsServiceIPSet`: a ClusterIP that is neither empty nor `None`.
fn is_service_ip_set(service: &Service) -> bool {
    service.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()).is_some_and(|ip| !ip.is_empty() && ip != "None")
}

fn service_labels(service: &Service) -> BTreeMap<String, String> {
    service.metadata.labels.clone().unwrap_or_default()
}

/// `podutil.FindPort`: the container port a service port targets on this pod (a named port is
/// looked up among the containers, then the restartable init containers — sidecars).
pub fn find_port(pod: &Pod, target: Option<&IntOrString>, port: i32, protocol: &str) -> Option<i32> {
    match target {
        None => Some(port),
        Some(IntOrString::Int(p)) => Some(*p),
        Some(IntOrString::String(name)) => {
            if let Ok(n) = name.parse::<i32>() {
                return Some(n);
            }
            let spec = pod.spec.as_ref()?;
            let sidecars = spec.init_containers.iter().flatten().filter(|c| c.restart_policy.as_deref() == Some("Always"));
            spec.containers
                .iter()
                .chain(sidecars)
                .flat_map(|c| c.ports.iter().flatten())
                .find(|p| p.name.as_deref() == Some(name.as_str()) && p.protocol.as_deref().unwrap_or("TCP") == protocol)
                .map(|p| p.container_port)
        }
    }
}

fn service_ports(service: &Service) -> &[ServicePort] {
    service.spec.as_ref().and_then(|s| s.ports.as_deref()).unwrap_or(&[])
}

/// `getEndpointPorts`: one EndpointPort per service port the pod resolves.
fn endpoint_ports(service: &Service, pod: &Pod) -> Vec<EndpointPort> {
    let mut out = Vec::new();
    for sp in service_ports(service) {
        let protocol = sp.protocol.clone().unwrap_or_else(|| "TCP".into());
        if let Some(port) = find_port(pod, sp.target_port.as_ref(), sp.port, &protocol) {
            out.push(EndpointPort {
                name: Some(sp.name.clone().unwrap_or_default()),
                port: Some(port),
                protocol: Some(protocol),
                app_protocol: sp.app_protocol.clone(),
            });
        }
    }
    out
}

/// `NewPortMapKey`: a key for a port list that does not depend on the list's order.
fn port_map_key(ports: Option<&[EndpointPort]>) -> String {
    let mut parts: Vec<String> = ports
        .unwrap_or(&[])
        .iter()
        .map(|p| {
            format!(
                "{}/{}/{}/{}",
                p.name.as_deref().unwrap_or(""),
                p.port.unwrap_or(0),
                p.protocol.as_deref().unwrap_or(""),
                p.app_protocol.as_deref().unwrap_or("")
            )
        })
        .collect();
    parts.sort();
    parts.join(",")
}

fn should_set_hostname(pod: &Pod, service: &Service) -> bool {
    let spec = pod.spec.as_ref();
    spec.and_then(|s| s.hostname.as_ref()).is_some_and(|h| !h.is_empty())
        && spec.and_then(|s| s.subdomain.as_deref()) == service.metadata.name.as_deref()
        && pod.metadata.namespace == service.metadata.namespace
}

fn pod_reference(pod: &Pod) -> ObjectReference {
    ObjectReference {
        kind: Some("Pod".into()),
        namespace: pod.metadata.namespace.clone(),
        name: pod.metadata.name.clone(),
        uid: pod.metadata.uid.clone(),
        ..Default::default()
    }
}

/// `podToEndpoint` for an IPv4 slice.
pub fn pod_to_endpoint(pod: &Pod, service: &Service, zone: Option<String>) -> Endpoint {
    pod_to_endpoint_of_family(pod, service, zone, false)
}

fn pod_to_endpoint_of_family(pod: &Pod, service: &Service, zone: Option<String>, ipv6: bool) -> Endpoint {
    let serving = is_pod_ready(pod);
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let publish = service.spec.as_ref().and_then(|s| s.publish_not_ready_addresses).unwrap_or(false);
    let ready = publish || (serving && !terminating);
    Endpoint {
        addresses: pod_ips_of_family(pod, ipv6).into_iter().take(1).collect(),
        conditions: Some(EndpointConditions { ready: Some(ready), serving: Some(serving), terminating: Some(terminating) }),
        target_ref: Some(pod_reference(pod)),
        node_name: Some(pod_node(pod).to_string()).filter(|n| !n.is_empty()),
        zone: zone.filter(|z| !z.is_empty()),
        hostname: should_set_hostname(pod, service).then(|| pod.spec.as_ref().and_then(|s| s.hostname.clone())).flatten(),
        deprecated_topology: None,
        hints: None,
    }
}

/// `ShouldPodBeInEndpoints`.
fn eligible(pod: &Pod, include_terminating: bool) -> bool {
    !is_pod_terminal(pod) && pod_ip(pod).is_some() && (include_terminating || pod.metadata.deletion_timestamp.is_none())
}

/// `TriggerTimeTracker` (endpointslice/util/trigger_time_tracker.go): the time of the change
/// that triggered an endpoints write — the Service's creation for a Service not seen before,
/// else the earliest Ready-condition transition among the pods that changed since the last
/// sync (`None`: the sync was not triggered by a pod or Service change it can date).
#[derive(Clone, Debug, Default)]
pub struct TriggerTimeTracker {
    states: BTreeMap<Key, TriggerState>,
}

#[derive(Clone, Debug, Default)]
struct TriggerState {
    last_service: Option<Millis>,
    last_pods: BTreeMap<String, Millis>,
}

impl TriggerTimeTracker {
    /// `ComputeEndpointLastChangeTriggerTime`.
    pub fn compute(&mut self, namespace: &str, service: &Service, pods: &[&Pod]) -> Option<Millis> {
        let key = (namespace.to_string(), service.metadata.name.clone().unwrap_or_default());
        let was_known = self.states.contains_key(&key);
        let state = self.states.entry(key).or_default();
        let earliest = |current: Option<Millis>, new: Millis| Some(current.map_or(new, |c| c.min(new)));
        let mut min_changed: Option<Millis> = None;
        let mut pod_times = BTreeMap::new();
        for pod in pods {
            // getPodTriggerTime: the Ready condition's lastTransitionTime, whatever its status.
            let Some(time) = pod_condition(pod, "Ready").and_then(|c| c.last_transition_time.as_ref()).map(millis_of) else { continue };
            let name = pod.metadata.name.clone().unwrap_or_default();
            if state.last_pods.get(&name).is_none_or(|last| time > *last) {
                min_changed = earliest(min_changed, time);
            }
            pod_times.insert(name, time);
        }
        let service_time = service.metadata.creation_timestamp.as_ref().map(millis_of);
        if let Some(time) = service_time.filter(|t| state.last_service.is_none_or(|last| *t > last)) {
            min_changed = earliest(min_changed, time);
        }
        state.last_pods = pod_times;
        state.last_service = service_time;
        if was_known {
            min_changed
        } else {
            service_time
        }
    }

    /// `DeleteService`.
    pub fn delete_service(&mut self, namespace: &str, name: &str) {
        self.states.remove(&(namespace.to_string(), name.to_string()));
    }
}

/// The annotation's value: `time.RFC3339Nano` in UTC (API times have whole seconds).
fn trigger_time_text(t: Millis) -> String {
    time_at(t).0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `addTriggerTimeAnnotation`: set it, or clear it when the trigger time is unknown.
fn set_trigger_time(meta: &mut ObjectMeta, trigger: Option<Millis>) {
    let annotations = meta.annotations.get_or_insert_with(BTreeMap::new);
    match trigger {
        Some(t) => {
            annotations.insert(LAST_CHANGE_TRIGGER_TIME.into(), trigger_time_text(t));
        }
        None => {
            annotations.remove(LAST_CHANGE_TRIGGER_TIME);
        }
    }
}

/// One write of a slice reconcile, in the order `finalize` performs them.
#[derive(Clone, Debug, PartialEq)]
pub enum SliceWrite {
    /// A new slice (`generateName: <service>-`).
    Create(EndpointSlice),
    /// An existing slice rewritten (a create recycled into a slice that would be deleted keeps
    /// that slice's name).
    Update(EndpointSlice),
    /// A slice removed.
    Delete(EndpointSlice),
}

/// What one reconcile of a Service's slices writes, and the errors that requeue the Service.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SliceChanges {
    /// The writes in order: per address type its creates, updates and deletes; then the slices
    /// of address types the Service no longer has.
    pub writes: Vec<SliceWrite>,
    /// `skipping Pod ... Node ... Not Found` and the like: the writes still happen, the
    /// Service is retried.
    pub errors: Vec<String>,
}

impl SliceChanges {
    /// (creates, updates, deletes).
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut counts = (0, 0, 0);
        for write in &self.writes {
            match write {
                SliceWrite::Create(_) => counts.0 += 1,
                SliceWrite::Update(_) => counts.1 += 1,
                SliceWrite::Delete(_) => counts.2 += 1,
            }
        }
        counts
    }
}

/// `ownedBy`: an ownerReference to this Service (its UID, kind Service, apiVersion v1).
fn owned_by(slice: &EndpointSlice, service: &Service) -> bool {
    let uid = service.metadata.uid.as_deref().unwrap_or("");
    slice.metadata.owner_references.iter().flatten().any(|o| o.uid == uid && o.kind == "Service" && o.api_version == "v1")
}

fn is_reserved_label(key: &str) -> bool {
    matches!(key, SERVICE_NAME_LABEL | MANAGED_BY_LABEL | HEADLESS_LABEL)
}

/// `setEndpointSliceLabels`: the Service's labels (reserved keys ignored) plus the reserved
/// ones, and whether the slice's non-reserved labels differed from the Service's.
fn slice_labels(slice_labels: Option<&BTreeMap<String, String>>, service: &Service) -> (BTreeMap<String, String>, bool) {
    let current: BTreeMap<&String, &String> = slice_labels.into_iter().flatten().filter(|(k, _)| !is_reserved_label(k)).collect();
    let mut labels: BTreeMap<String, String> = service_labels(service).into_iter().filter(|(k, _)| !is_reserved_label(k)).collect();
    let changed = current != labels.iter().collect::<BTreeMap<_, _>>();
    if !is_service_ip_set(service) {
        labels.insert(HEADLESS_LABEL.into(), String::new());
    }
    labels.insert(SERVICE_NAME_LABEL.into(), service.metadata.name.clone().unwrap_or_default());
    labels.insert(MANAGED_BY_LABEL.into(), MANAGED_BY.into());
    (labels, changed)
}

/// `newEndpointSlice`.
fn new_slice(service: &Service, owner: &OwnerReference, address_type: &str, ports: Option<Vec<EndpointPort>>) -> EndpointSlice {
    let name = service.metadata.name.clone().unwrap_or_default();
    EndpointSlice {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: service.metadata.namespace.clone(),
            labels: Some(slice_labels(None, service).0),
            owner_references: Some(vec![owner.clone()]),
            ..Default::default()
        },
        address_type: address_type.to_string(),
        endpoints: Vec::new(),
        ports,
    }
}

/// `getAddressTypesForService`.
fn address_types(service: &Service) -> BTreeSet<String> {
    let spec = service.spec.as_ref();
    let mut types: BTreeSet<String> =
        spec.and_then(|s| s.ip_families.as_ref()).into_iter().flatten().filter(|f| matches!(f.as_str(), "IPv4" | "IPv6")).cloned().collect();
    if types.is_empty() {
        match spec.and_then(|s| s.cluster_ip.as_deref()).filter(|ip| !ip.is_empty() && *ip != "None") {
            Some(ip) => {
                types.insert(if is_ipv6(ip) { "IPv6" } else { "IPv4" }.to_string());
            }
            None => {
                types.insert("IPv4".into());
                types.insert("IPv6".into());
            }
        }
    }
    types
}

/// The endpoint's identity inside a slice (util/endpointset.go's hash: sorted addresses,
/// hostname, target namespace/name), led by the pod's namespace/name so that a set of
/// endpoints iterates in pod order.
fn endpoint_identity(e: &Endpoint) -> String {
    let target = e.target_ref.as_ref();
    let mut addresses = e.addresses.clone();
    addresses.sort();
    format!(
        "{}/{}\u{0}{}\u{0}{}",
        target.and_then(|t| t.namespace.as_deref()).unwrap_or(""),
        target.and_then(|t| t.name.as_deref()).unwrap_or(""),
        addresses.join(","),
        e.hostname.as_deref().unwrap_or("")
    )
}

/// `EndpointsEqualBeyondHash`: conditions, zone, node and target (ignoring its
/// resourceVersion) unchanged.
fn endpoints_equal_beyond_hash(a: &Endpoint, b: &Endpoint) -> bool {
    let target = |e: &Endpoint| {
        e.target_ref.clone().map(|mut t| {
            t.resource_version = None;
            t
        })
    };
    let conditions = |e: &Endpoint| e.conditions.clone().map(|c| (c.ready, c.serving, c.terminating));
    a.node_name == b.node_name && a.zone == b.zone && conditions(a) == conditions(b) && target(a) == target(b) && a.hints == b.hints
}

fn slice_name(slice: &EndpointSlice) -> String {
    slice.metadata.name.clone().unwrap_or_default()
}

/// `reconcileByPortMapping`: the creates, updates and deletes for one port mapping.
fn reconcile_by_port_mapping(
    service: &Service,
    owner: &OwnerReference,
    existing: &[&EndpointSlice],
    mut desired: BTreeMap<String, Endpoint>,
    address_type: &str,
    ports: &[EndpointPort],
    max: usize,
) -> (Vec<EndpointSlice>, Vec<EndpointSlice>, Vec<EndpointSlice>) {
    let mut by_name: BTreeMap<String, EndpointSlice> = BTreeMap::new();
    let mut unchanged: BTreeSet<String> = BTreeSet::new();
    let mut to_update: BTreeSet<String> = BTreeSet::new();
    let mut to_delete: BTreeSet<String> = BTreeSet::new();
    // 1. Keep the endpoints still desired (in their desired version), drop the rest.
    for slice in existing {
        let name = slice_name(slice);
        let mut kept = Vec::new();
        let mut endpoint_updated = false;
        for endpoint in &slice.endpoints {
            if let Some(want) = desired.remove(&endpoint_identity(endpoint)) {
                endpoint_updated |= !endpoints_equal_beyond_hash(&want, endpoint);
                kept.push(want);
            }
        }
        let (labels, labels_changed) = slice_labels(slice.metadata.labels.as_ref(), service);
        if endpoint_updated || kept.len() != slice.endpoints.len() {
            if kept.is_empty() {
                to_delete.insert(name.clone());
                by_name.insert(name, (*slice).clone());
            } else {
                let mut copy = (*slice).clone();
                copy.endpoints = kept;
                copy.metadata.labels = Some(labels);
                to_update.insert(name.clone());
                by_name.insert(name, copy);
            }
        } else if labels_changed {
            let mut copy = (*slice).clone();
            copy.metadata.labels = Some(labels);
            to_update.insert(name.clone());
            by_name.insert(name, copy);
        } else {
            unchanged.insert(name.clone());
            by_name.insert(name, (*slice).clone());
        }
    }
    // 2. Fill the slices being updated anyway, fullest first.
    if !desired.is_empty() && !to_update.is_empty() {
        let mut names: Vec<String> = to_update.iter().cloned().collect();
        kubesim_api::sort::sort_by(&mut names, |a, b| by_name[b].endpoints.len().cmp(&by_name[a].endpoints.len()));
        for name in names {
            let slice = by_name.get_mut(&name).expect("named above");
            while slice.endpoints.len() < max {
                let Some((_, endpoint)) = desired.pop_first() else { break };
                slice.endpoints.push(endpoint);
            }
        }
    }
    // 3. The rest: into the unchanged slice that ends closest to full, else new slices.
    let mut creates = Vec::new();
    while !desired.is_empty() {
        let mut fill: Option<String> = None;
        if desired.len() < max && !unchanged.is_empty() {
            // getSliceToFill
            let mut closest = max;
            for name in &unchanged {
                let room = max as i64 - (desired.len() + by_name[name].endpoints.len()) as i64;
                if room >= 0 && (room as usize) < closest {
                    closest = room as usize;
                    fill = Some(name.clone());
                    if closest == 0 {
                        break;
                    }
                }
            }
        }
        let mut slice = match &fill {
            Some(name) => by_name[name].clone(),
            None => new_slice(service, owner, address_type, Some(ports.to_vec())),
        };
        while slice.endpoints.len() < max {
            let Some((_, endpoint)) = desired.pop_first() else { break };
            slice.endpoints.push(endpoint);
        }
        match fill {
            Some(name) => {
                unchanged.remove(&name);
                to_update.insert(name.clone());
                by_name.insert(name, slice);
            }
            None => creates.push(slice),
        }
    }
    let updates = to_update.iter().map(|n| by_name[n].clone()).collect();
    let deletes = to_delete.iter().map(|n| by_name[n].clone()).collect();
    (creates, updates, deletes)
}

/// The placeholder comparison (`placeholderSliceCompare`): namespace, labels, address type, no
/// endpoints and no ports.
fn is_equal_placeholder(slice: &EndpointSlice, placeholder: &EndpointSlice) -> bool {
    slice.metadata.namespace == placeholder.metadata.namespace
        && slice.metadata.labels.clone().unwrap_or_default() == placeholder.metadata.labels.clone().unwrap_or_default()
        && slice.address_type == placeholder.address_type
        && slice.endpoints.is_empty()
        && slice.ports.as_ref().is_none_or(|p| p.is_empty())
}

/// `finalize`: creates recycled into slices that would be deleted, no creates while the
/// Service is being deleted; then creates, updates, deletes.
pub(crate) fn finalize(
    service: &Service,
    mut creates: Vec<EndpointSlice>,
    mut updates: Vec<EndpointSlice>,
    mut deletes: Vec<EndpointSlice>,
    writes: &mut Vec<SliceWrite>,
) {
    let mut i = 0;
    while i < deletes.len() {
        let Some(last) = creates.last() else { break };
        if deletes[i].address_type == last.address_type && owned_by(&deletes[i], service) {
            let mut slice = creates.pop().expect("checked");
            slice.metadata.name = deletes[i].metadata.name.clone();
            updates.push(slice);
            deletes.remove(i);
        } else {
            i += 1;
        }
    }
    if service.metadata.deletion_timestamp.is_none() {
        writes.extend(creates.into_iter().map(SliceWrite::Create));
    }
    writes.extend(updates.into_iter().map(SliceWrite::Update));
    writes.extend(deletes.into_iter().map(SliceWrite::Delete));
}

/// The EndpointSlice reconciler (`Reconciler.Reconcile`): the writes that make a Service's
/// slices represent its pods. `node_zone(node)` is the node informer: `None` for a node it
/// does not know, else the node's `topology.kubernetes.io/zone`. `existing` are the slices
/// labelled with the Service's name and this controller (not being deleted).
pub fn reconcile_slices(
    service: &Service,
    owner: &OwnerReference,
    pods: &[&Pod],
    node_zone: &dyn Fn(&str) -> Option<Option<String>>,
    existing: &[EndpointSlice],
    max_endpoints_per_slice: usize,
) -> SliceChanges {
    let mut changes = SliceChanges::default();
    let supported = address_types(service);
    let mut unsupported: Vec<EndpointSlice> = Vec::new();
    let mut by_type: BTreeMap<&str, Vec<&EndpointSlice>> = BTreeMap::new();
    for slice in existing {
        if supported.contains(&slice.address_type) {
            by_type.entry(slice.address_type.as_str()).or_default().push(slice);
        } else {
            unsupported.push(slice.clone());
        }
    }
    let publish = service.spec.as_ref().and_then(|s| s.publish_not_ready_addresses).unwrap_or(false);
    let namespace = service.metadata.namespace.clone().unwrap_or_default();
    let name = service.metadata.name.clone().unwrap_or_default();
    for address_type in &supported {
        let existing = by_type.remove(address_type.as_str()).unwrap_or_default();
        // reconcileByAddressType
        let mut creates = Vec::new();
        let mut updates = Vec::new();
        let mut deletes: Vec<EndpointSlice> = Vec::new();
        let mut existing_by_ports: BTreeMap<String, Vec<&EndpointSlice>> = BTreeMap::new();
        for slice in &existing {
            if owned_by(slice, service) {
                existing_by_ports.entry(port_map_key(slice.ports.as_deref())).or_default().push(slice);
            } else {
                deletes.push((*slice).clone());
            }
        }
        let mut desired: BTreeMap<String, (Vec<EndpointPort>, BTreeMap<String, Endpoint>)> = BTreeMap::new();
        for pod in pods.iter().filter(|p| eligible(p, true)) {
            let ports = endpoint_ports(service, pod);
            let key = port_map_key(Some(&ports));
            let node = pod_node(pod);
            let zone = match node_zone(node) {
                Some(zone) => zone,
                None if publish => None,
                None => {
                    changes
                        .errors
                        .push(format!("skipping Pod {} for Service {namespace}/{name}: Node {node} Not Found", pod.metadata.name.as_deref().unwrap_or("")));
                    continue;
                }
            };
            let endpoint = pod_to_endpoint_of_family(pod, service, zone, address_type == "IPv6");
            let group = desired.entry(key).or_insert_with(|| (ports, BTreeMap::new()));
            if !endpoint.addresses.is_empty() {
                group.1.insert(endpoint_identity(&endpoint), endpoint);
            }
        }
        for (key, (ports, endpoints)) in &desired {
            let slices = existing_by_ports.get(key).map(Vec::as_slice).unwrap_or(&[]);
            let (c, u, d) = reconcile_by_port_mapping(service, owner, slices, endpoints.clone(), address_type, ports, max_endpoints_per_slice);
            creates.extend(c);
            updates.extend(u);
            deletes.extend(d);
        }
        for (key, slices) in &existing_by_ports {
            if !desired.contains_key(key) {
                deletes.extend(slices.iter().map(|s| (*s).clone()));
            }
        }
        // When no slice would exist, a placeholder (kept if an equal one is the only deletion).
        if existing.len() == deletes.len() && creates.is_empty() {
            let placeholder = new_slice(service, owner, address_type, None);
            if deletes.len() == 1 && is_equal_placeholder(&deletes[0], &placeholder) {
                deletes.clear();
            } else {
                creates.push(placeholder);
            }
        }
        finalize(service, creates, updates, deletes, &mut changes.writes);
    }
    changes.writes.extend(unsupported.into_iter().map(SliceWrite::Delete));
    changes
}

#[derive(Clone)]
struct Shared {
    services: Cache,
    pods: Cache,
    nodes: Cache,
}

impl Shared {
    fn new() -> Shared {
        Shared { services: Cache::default(), pods: Cache::default(), nodes: Cache::default() }
    }

    /// The pods the Service's selector matches (`None`: ExternalName or no selector — the
    /// controllers leave such a Service's endpoints to whoever writes them).
    fn selected_pods<'a>(&'a self, service: &Service) -> Option<Vec<&'a Pod>> {
        let spec = service.spec.as_ref()?;
        if spec.type_.as_deref() == Some("ExternalName") {
            return None;
        }
        let selector = spec.selector.as_ref()?;
        let sel = Selector::from_map(selector);
        let ns = service.metadata.namespace.as_deref().unwrap_or_default();
        Some(self.pods.in_namespace(ns).filter_map(|o| o.as_pod()).filter(|p| sel.matches(p.metadata.labels.as_ref())).collect())
    }

    /// The node informer: `None` for an unknown node, else its zone label.
    fn node_zone(&self, node: &str) -> Option<Option<String>> {
        let object = self.nodes.get_named("", node)?;
        Some(object.metadata().labels.as_ref().and_then(|l| l.get("topology.kubernetes.io/zone")).cloned())
    }

    /// Services whose selector matches the pod (old or new labels).
    fn services_for_pod(&self, pod: &Object, old: Option<&Object>) -> Vec<Key> {
        let labels = [pod.metadata().labels.as_ref(), old.and_then(|o| o.metadata().labels.as_ref())];
        self.services
            .in_namespace(pod.namespace())
            .filter(|s| {
                as_service(s).and_then(|s| s.spec.as_ref()).and_then(|s| s.selector.as_ref()).filter(|m| !m.is_empty()).is_some_and(|m| {
                    let sel = Selector::from_map(m);
                    labels.iter().any(|l| l.is_some() && sel.matches(*l))
                })
            })
            .map(|s| key_of(s))
            .collect()
    }

    /// The keys an informer event concerns (the framework applied it to the caches already).
    fn keys_for(&self, event: &WatchEvent, old: Option<&Object>) -> Vec<Key> {
        match event.resource {
            ("", "services") => vec![key_of(&event.object)],
            ("", "pods") => {
                // podEndpointsChanged: labels, addresses, readiness, deletion, phase, node,
                // hostname and subdomain.
                // (Borrowed: every pod update of the cluster is compared, by two controllers.)
                type Relevant<'p> =
                    (Option<&'p BTreeMap<String, String>>, Option<&'p str>, bool, bool, &'p str, &'p str, Option<(Option<&'p str>, Option<&'p str>)>);
                fn relevant(o: &Object) -> Option<Relevant<'_>> {
                    o.as_pod().map(|p| {
                        (
                            p.metadata.labels.as_ref(),
                            pod_ip(p),
                            is_pod_ready(p),
                            p.metadata.deletion_timestamp.is_some(),
                            pod_phase(p),
                            pod_node(p),
                            p.spec.as_ref().map(|s| (s.hostname.as_deref(), s.subdomain.as_deref())),
                        )
                    })
                }
                if event.event_type == kubesim_store::EventType::Modified && old.map(relevant) == Some(relevant(&event.object)) {
                    return Vec::new();
                }
                self.services_for_pod(&event.object, old)
            }
            _ => Vec::new(),
        }
    }
}

fn internal_error(message: String) -> ApiError {
    ApiError { code: 500, reason: "InternalError", message }
}

/// The EndpointSlice controller.
#[derive(Clone)]
pub struct EndpointSliceController {
    shared: Shared,
    slices: Cache,
    queue: WorkQueue,
    triggers: TriggerTimeTracker,
    /// `EndpointSliceTracker`: the resourceVersion of each slice this controller last wrote,
    /// and the slices it deleted, so its own writes do not queue the Service again.
    written: BTreeMap<Key, String>,
    deleted: BTreeSet<Key>,
    /// --max-endpoints-per-slice.
    max_endpoints_per_slice: usize,
}

impl std::fmt::Debug for EndpointSliceController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EndpointSliceController")
    }
}

impl Default for EndpointSliceController {
    fn default() -> Self {
        EndpointSliceController::new()
    }
}

impl EndpointSliceController {
    /// A controller with empty caches.
    pub fn new() -> EndpointSliceController {
        EndpointSliceController {
            shared: Shared::new(),
            slices: Cache::default(),
            queue: WorkQueue::new(ENDPOINTS_LATENCY_MS),
            triggers: TriggerTimeTracker::default(),
            written: BTreeMap::new(),
            deleted: BTreeSet::new(),
            max_endpoints_per_slice: MAX_ENDPOINTS_PER_SLICE,
        }
    }

    /// The slices labelled as this Service's and this controller's, not being deleted.
    fn managed_slices(&self, namespace: &str, name: &str) -> Vec<EndpointSlice> {
        self.slices
            .in_namespace(namespace)
            .filter(|o| {
                let meta = o.metadata();
                let l = meta.labels.as_ref();
                meta.deletion_timestamp.is_none()
                    && l.and_then(|l| l.get(SERVICE_NAME_LABEL)).map(String::as_str) == Some(name)
                    && l.and_then(|l| l.get(MANAGED_BY_LABEL)).map(String::as_str) == Some(MANAGED_BY)
            })
            .filter_map(|o| decode::<EndpointSlice>(o))
            .collect()
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.shared.services.get(key).cloned() else {
            // Deleted: its slices go with it (garbage collection through their owner).
            self.triggers.delete_service(&key.0, &key.1);
            return Ok(());
        };
        let Some(service) = as_service(&object) else { return Ok(()) };
        let Some(pods) = self.shared.selected_pods(service) else { return Ok(()) };
        let existing = self.managed_slices(&key.0, &key.1);
        let trigger = self.triggers.compute(&key.0, service, &pods);
        let shared = &self.shared;
        let changes = reconcile_slices(service, &controller_ref(&object), &pods, &|node| shared.node_zone(node), &existing, self.max_endpoints_per_slice);
        let info = kind_info("discovery.k8s.io/v1", "EndpointSlice").expect("served");
        for write in changes.writes {
            match write {
                SliceWrite::Create(mut slice) => {
                    set_trigger_time(&mut slice.metadata, trigger);
                    let created = match ctx.create(encode(&slice, "discovery.k8s.io/v1", "EndpointSlice")) {
                        Ok(created) => created,
                        // A terminating namespace refuses creates: drop the Service.
                        Err(e) if e.reason == "Forbidden" => return Ok(()),
                        Err(e) => return Err(e),
                    };
                    self.written.insert(key_of(&created), created.resource_version().to_string());
                    self.slices.put(created);
                }
                SliceWrite::Update(mut slice) => {
                    set_trigger_time(&mut slice.metadata, trigger);
                    slice.metadata.resource_version = None;
                    let updated = ctx.update(encode(&slice, "discovery.k8s.io/v1", "EndpointSlice"))?;
                    self.written.insert(key_of(&updated), updated.resource_version().to_string());
                    self.slices.put(updated);
                }
                SliceWrite::Delete(slice) => {
                    let name = slice_name(&slice);
                    match ctx.delete(info, &key.0, &name, DeleteOptions::default()) {
                        Ok(_) => {
                            self.deleted.insert((key.0.clone(), name.clone()));
                            self.slices.remove(&(key.0.clone(), name));
                        }
                        Err(e) if is_not_found(&e) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        match changes.errors.first() {
            Some(error) => Err(internal_error(error.clone())),
            None => Ok(()),
        }
    }

    /// `EndpointSliceTracker.ShouldSync` / `HandleDeletion`: whether a slice event is someone
    /// else's change (so the Service must be reconciled again).
    fn should_sync(&mut self, event: &WatchEvent) -> bool {
        let key = key_of(&event.object);
        if event.event_type == kubesim_store::EventType::Deleted {
            self.written.remove(&key);
            return !self.deleted.remove(&key);
        }
        self.written.get(&key).map(String::as_str) != Some(event.object.resource_version())
    }
}

impl Reconciler for EndpointSliceController {
    fn name(&self) -> &'static str {
        "endpointslice-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "services")) => shared.services,
        Informer::all(("", "pods")) => shared.pods,
        Informer::all(("", "nodes")) => shared.nodes,
        Informer::all(("discovery.k8s.io", "endpointslices")) => slices,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        if event.resource == ("discovery.k8s.io", "endpointslices") {
            let labels = event.object.metadata().labels.as_ref();
            let managed = labels.and_then(|l| l.get(MANAGED_BY_LABEL)).map(String::as_str) == Some(MANAGED_BY);
            let was_managed =
                change.old.as_ref().and_then(|o| o.metadata().labels.as_ref()).and_then(|l| l.get(MANAGED_BY_LABEL)).map(String::as_str) == Some(MANAGED_BY);
            if !(managed || was_managed) || !self.should_sync(event) {
                return;
            }
            // A slice changed or removed by someone else: reconcile its Service again.
            if let Some(svc) = labels.and_then(|l| l.get(SERVICE_NAME_LABEL)) {
                self.queue.add((event.object.namespace().to_string(), svc.clone()), ctx);
            }
            return;
        }
        for key in self.shared.keys_for(event, change.old.as_deref()) {
            self.queue.add(key, ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}

/// The legacy Endpoints controller.
#[derive(Clone)]
pub struct EndpointsController {
    shared: Shared,
    queue: WorkQueue,
    triggers: TriggerTimeTracker,
}

impl std::fmt::Debug for EndpointsController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EndpointsController")
    }
}

impl Default for EndpointsController {
    fn default() -> Self {
        EndpointsController::new()
    }
}

/// `LessEndpointAddress`: the IP as a byte string, then the target's UID.
fn address_order(a: &EndpointAddress, b: &EndpointAddress) -> std::cmp::Ordering {
    let uid = |x: &EndpointAddress| x.target_ref.as_ref().map(|r| r.uid.clone().unwrap_or_default());
    a.ip.as_bytes().cmp(b.ip.as_bytes()).then_with(|| uid(a).cmp(&uid(b)))
}

/// The legacy controller's subsets (syncService's per-pod, per-port subsets, then
/// `RepackSubsets`): each set of addresses offering the same ports is one subset, ready
/// addresses in `addresses`, the rest in `notReadyAddresses`.
pub fn endpoints_subsets(service: &Service, pods: &[&Pod]) -> Vec<EndpointSubset> {
    let publish = service.spec.as_ref().and_then(|s| s.publish_not_ready_addresses).unwrap_or(false);
    let ipv6 = service.spec.as_ref().and_then(|s| s.ip_families.as_ref()).and_then(|f| f.first()).is_some_and(|f| f == "IPv6");
    let headless = service.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()) == Some("None");
    // port (or the no-port sentinel) -> address identity -> (address, ready)
    type AddressSet = BTreeMap<String, (EndpointAddress, bool)>;
    let mut by_port: BTreeMap<String, (Option<CoreEndpointPort>, AddressSet)> = BTreeMap::new();
    for pod in pods.iter().filter(|p| eligible(p, publish)) {
        // podToEndpointAddressForService: the first pod IP of the Service's family.
        let Some(ip) = pod_ips_of_family(pod, ipv6).into_iter().next() else { continue };
        let address = EndpointAddress {
            ip,
            node_name: Some(pod_node(pod).to_string()),
            hostname: should_set_hostname(pod, service).then(|| pod.spec.as_ref().and_then(|s| s.hostname.clone())).flatten(),
            target_ref: Some(pod_reference(pod)),
        };
        let ready = publish || is_pod_ready(pod);
        let identity = format!("{}\u{0}{}", address.ip, pod.metadata.uid.as_deref().unwrap_or(""));
        let ports = service_ports(service);
        if ports.is_empty() {
            if headless {
                by_port.entry(String::new()).or_insert_with(|| (None, BTreeMap::new())).1.insert(identity, (address, ready));
            }
            continue;
        }
        for sp in ports {
            let protocol = sp.protocol.clone().unwrap_or_else(|| "TCP".into());
            let Some(port) = find_port(pod, sp.target_port.as_ref(), sp.port, &protocol) else { continue };
            let port =
                CoreEndpointPort { name: sp.name.clone().filter(|n| !n.is_empty()), port, protocol: Some(protocol), app_protocol: sp.app_protocol.clone() };
            let key = format!("{}/{}/{}", port.name.as_deref().unwrap_or(""), port.port, port.protocol.as_deref().unwrap_or(""));
            by_port.entry(key).or_insert_with(|| (Some(port), BTreeMap::new())).1.insert(identity.clone(), (address.clone(), ready));
        }
    }
    // The sets of addresses -> the ports they offer.
    let mut groups: BTreeMap<Vec<String>, (Vec<CoreEndpointPort>, AddressSet)> = BTreeMap::new();
    for (_, (port, addresses)) in by_port {
        let key: Vec<String> = addresses.iter().map(|(id, (_, ready))| format!("{id}\u{0}{ready}")).collect();
        let group = groups.entry(key).or_insert_with(|| (Vec::new(), addresses));
        group.0.extend(port);
    }
    let mut subsets: Vec<EndpointSubset> = groups
        .into_values()
        .map(|(ports, addresses)| {
            let (mut ready, mut not_ready): (Vec<_>, Vec<_>) = addresses.into_values().partition(|(_, r)| *r);
            let mut ready: Vec<EndpointAddress> = ready.drain(..).map(|(a, _)| a).collect();
            let mut not_ready: Vec<EndpointAddress> = not_ready.drain(..).map(|(a, _)| a).collect();
            kubesim_api::sort::sort_by(&mut ready, address_order);
            kubesim_api::sort::sort_by(&mut not_ready, address_order);
            EndpointSubset {
                addresses: (!ready.is_empty()).then_some(ready),
                not_ready_addresses: (!not_ready.is_empty()).then_some(not_ready),
                ports: (!ports.is_empty()).then_some(ports),
            }
        })
        .collect();
    let order = |s: &EndpointSubset| serde_json::to_string(&s.ports).unwrap_or_default();
    kubesim_api::sort::sort_by(&mut subsets, |a, b| order(a).cmp(&order(b)));
    subsets
}

/// `truncateEndpoints`: over `maxCapacity` addresses, keep each subset's proportional share
/// (rounded up, within what is left) — ready addresses first: if the ready ones alone are too
/// many, they are cut and every not-ready one is dropped. Returns whether it truncated.
pub fn truncate_endpoints(subsets: &mut [EndpointSubset]) -> bool {
    let count = |v: &Option<Vec<EndpointAddress>>| v.as_ref().map_or(0, Vec::len);
    let total_ready: usize = subsets.iter().map(|s| count(&s.addresses)).sum();
    let total_not_ready: usize = subsets.iter().map(|s| count(&s.not_ready_addresses)).sum();
    if total_ready + total_not_ready <= ENDPOINTS_MAX_CAPACITY {
        return false;
    }
    let truncate_ready = total_ready > ENDPOINTS_MAX_CAPACITY;
    let (max, total) = if truncate_ready { (ENDPOINTS_MAX_CAPACITY, total_ready) } else { (ENDPOINTS_MAX_CAPACITY - total_ready, total_not_ready) };
    let mut can_be_added = max;
    for subset in subsets.iter_mut() {
        let in_subset = if truncate_ready { count(&subset.addresses) } else { count(&subset.not_ready_addresses) };
        let to_be_added = ((in_subset as f64 / total as f64 * max as f64).ceil() as usize).min(can_be_added);
        if truncate_ready {
            if let Some(a) = subset.addresses.as_mut() {
                a.truncate(to_be_added);
            }
            subset.not_ready_addresses = None;
            can_be_added -= count(&subset.addresses);
        } else {
            if let Some(a) = subset.not_ready_addresses.as_mut() {
                a.truncate(to_be_added);
            }
            can_be_added -= count(&subset.not_ready_addresses);
        }
    }
    true
}

/// Subsets equal, ignoring the targets' resourceVersions (`endpointSubsetsEqualIgnoreResourceVersion`).
fn subsets_equal(a: &Option<Vec<EndpointSubset>>, b: &Option<Vec<EndpointSubset>>) -> bool {
    let strip = |s: &Option<Vec<EndpointSubset>>| {
        let mut s = s.clone().unwrap_or_default();
        for subset in s.iter_mut() {
            for address in subset.addresses.iter_mut().flatten().chain(subset.not_ready_addresses.iter_mut().flatten()) {
                if let Some(r) = address.target_ref.as_mut() {
                    r.resource_version = None;
                }
            }
        }
        s
    };
    strip(a) == strip(b)
}

impl EndpointsController {
    /// A controller with empty caches.
    pub fn new() -> EndpointsController {
        EndpointsController { shared: Shared::new(), queue: WorkQueue::new(ENDPOINTS_LATENCY_MS), triggers: TriggerTimeTracker::default() }
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let info = kind_info("v1", "Endpoints").expect("served");
        let Some(object) = self.shared.services.get(key).cloned() else {
            // The Service is gone: so is its Endpoints object.
            match ctx.delete(info, &key.0, &key.1, DeleteOptions::default()) {
                Ok(_) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(e),
            }
            self.triggers.delete_service(&key.0, &key.1);
            return Ok(());
        };
        let Some(service) = as_service(&object) else { return Ok(()) };
        let Some(pods) = self.shared.selected_pods(service) else { return Ok(()) };
        let trigger = self.triggers.compute(&key.0, service, &pods);
        let subsets = endpoints_subsets(service, &pods);
        let subsets = (!subsets.is_empty()).then_some(subsets);
        let current: Option<Endpoints> = ctx.api.lookup(("", "endpoints"), &key.0, &key.1).and_then(|o| decode(o));
        let labels = service_labels(service);
        if let Some(current) = &current {
            // The controller's own labels are not the Service's: compare without them.
            let mut compare = current.metadata.labels.clone().unwrap_or_default();
            compare.remove(HEADLESS_LABEL);
            compare.remove(ENDPOINTS_MANAGED_BY_LABEL);
            let total: usize =
                current.subsets.iter().flatten().map(|s| s.addresses.as_ref().map_or(0, Vec::len) + s.not_ready_addresses.as_ref().map_or(0, Vec::len)).sum();
            let capacity_ok = total <= ENDPOINTS_MAX_CAPACITY && !current.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(OVER_CAPACITY));
            if subsets_equal(&current.subsets, &subsets) && compare == labels && capacity_ok {
                return Ok(());
            }
        }
        let mut endpoints = current.clone().unwrap_or_else(|| Endpoints {
            metadata: ObjectMeta { name: Some(key.1.clone()), namespace: Some(key.0.clone()), ..Default::default() },
            subsets: None,
        });
        endpoints.subsets = subsets;
        set_trigger_time(&mut endpoints.metadata, trigger);
        let truncated = endpoints.subsets.as_mut().is_some_and(|s| truncate_endpoints(s));
        let annotations = endpoints.metadata.annotations.get_or_insert_with(BTreeMap::new);
        if truncated {
            annotations.insert(OVER_CAPACITY.into(), "truncated".into());
        } else {
            annotations.remove(OVER_CAPACITY);
        }
        let mut labels = labels;
        labels.insert(ENDPOINTS_MANAGED_BY_LABEL.into(), ENDPOINTS_CONTROLLER.into());
        if !is_service_ip_set(service) {
            labels.insert(HEADLESS_LABEL.into(), String::new());
        }
        endpoints.metadata.labels = Some(labels);
        let create = current.is_none();
        let encoded = encode(&endpoints, "v1", "Endpoints");
        let result = if create { ctx.create(encoded.clone()) } else { ctx.update(encoded.clone()) };
        match result {
            Ok(_) => Ok(()),
            // A terminating namespace refuses creates: drop the Service.
            Err(e) if create && e.reason == "Forbidden" => Ok(()),
            Err(e) => {
                let (reason, message) = if create {
                    ("FailedToCreateEndpoint", format!("Failed to create endpoint for service {}/{}: {}", key.0, key.1, e.message))
                } else {
                    ("FailedToUpdateEndpoint", format!("Failed to update endpoint {}/{}: {}", key.0, key.1, e.message))
                };
                ctx.event(&encoded, "Warning", reason, message);
                Err(e)
            }
        }
    }
}

impl Reconciler for EndpointsController {
    fn name(&self) -> &'static str {
        ENDPOINTS_CONTROLLER
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "services")) => shared.services,
        Informer::all(("", "pods")) => shared.pods,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        for key in self.shared.keys_for(change.event, change.old.as_deref()) {
            self.queue.add(key, ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}
