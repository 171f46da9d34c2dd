//! The EndpointSlice controller (pkg/controller/endpointslice) and the legacy Endpoints
//! controller (pkg/controller/endpoint): the endpoints of every Service with a selector.
//!
//! EndpointSlices: one endpoint per eligible pod (podIP, not Succeeded/Failed; terminating pods
//! included with conditions ready/serving/terminating), grouped by resolved target ports, at
//! most 100 per slice, named `<service>-<5 random>`, labelled with the service name and the
//! managing controller, owned by the Service; a placeholder slice with no endpoints when there
//! are none. Existing slices are updated in place (stale endpoints removed, changed ones
//! refreshed), partially-full slices being updated are filled first, then new slices created.
//! Endpoints: ready addresses in `addresses`, the rest in `notReadyAddresses`, grouped by port
//! set, addresses sorted by IP.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{EndpointAddress, EndpointPort as CoreEndpointPort, EndpointSubset, Endpoints, ObjectReference, Pod, Service};
use kubesim_api::k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::selector::Selector;
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions};
use kubesim_runtime::{Ctx, WatchEvent};
use std::collections::BTreeMap;

/// `kubernetes.io/service-name`.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// `endpointslice.kubernetes.io/managed-by`.
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// The EndpointSlice controller's managed-by value.
pub const MANAGED_BY: &str = "endpointslice-controller.k8s.io";
/// --max-endpoints-per-slice.
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;
/// Modelled processing latency (the controllers batch changes for about a second upstream).
pub const ENDPOINTS_LATENCY_MS: Millis = 10;

fn as_service(object: &Object) -> Option<&Service> {
    match object {
        Object::Service(s) => Some(s),
        _ => None,
    }
}

fn pod_ip(pod: &Pod) -> Option<String> {
    pod.status.as_ref().and_then(|s| s.pod_ip.clone()).filter(|ip| !ip.is_empty())
}

/// `FindPort`: the container port a service port targets on this pod.
pub fn find_port(pod: &Pod, target: Option<&IntOrString>, port: i32, protocol: &str) -> Option<i32> {
    match target {
        None => Some(port),
        Some(IntOrString::Int(p)) => Some(*p),
        Some(IntOrString::String(name)) => {
            if let Ok(n) = name.parse::<i32>() {
                return Some(n);
            }
            pod.spec
                .as_ref()?
                .containers
                .iter()
                .flat_map(|c| c.ports.iter().flatten())
                .find(|p| p.name.as_deref() == Some(name.as_str()) && p.protocol.as_deref().unwrap_or("TCP") == protocol)
                .map(|p| p.container_port)
        }
    }
}

fn endpoint_ports(service: &Service, pod: &Pod) -> Vec<EndpointPort> {
    let mut out = Vec::new();
    for sp in service.spec.as_ref().and_then(|s| s.ports.clone()).unwrap_or_default() {
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

fn should_set_hostname(pod: &Pod, service: &Service) -> bool {
    let spec = pod.spec.as_ref();
    spec.and_then(|s| s.hostname.as_ref()).is_some_and(|h| !h.is_empty())
        && spec.and_then(|s| s.subdomain.as_deref()) == service.metadata.name.as_deref()
        && pod.metadata.namespace == service.metadata.namespace
}

/// `podToEndpoint`.
pub fn pod_to_endpoint(pod: &Pod, service: &Service, zone: Option<String>) -> Endpoint {
    let serving = is_pod_ready(pod);
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let publish = service.spec.as_ref().and_then(|s| s.publish_not_ready_addresses).unwrap_or(false);
    let ready = publish || (serving && !terminating);
    Endpoint {
        addresses: pod_ip(pod).into_iter().collect(),
        conditions: Some(EndpointConditions { ready: Some(ready), serving: Some(serving), terminating: Some(terminating) }),
        target_ref: Some(ObjectReference {
            kind: Some("Pod".into()),
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        }),
        node_name: Some(pod_node(pod).to_string()).filter(|n| !n.is_empty()),
        zone,
        hostname: should_set_hostname(pod, service).then(|| pod.spec.as_ref().and_then(|s| s.hostname.clone())).flatten(),
        deprecated_topology: None,
        hints: None,
    }
}

/// `ShouldPodBeInEndpoints`.
fn eligible(pod: &Pod, include_terminating: bool) -> bool {
    !is_pod_terminal(pod) && pod_ip(pod).is_some() && (include_terminating || pod.metadata.deletion_timestamp.is_none())
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

    fn selected_pods(&self, service: &Service) -> Option<Vec<Pod>> {
        let selector = service.spec.as_ref()?.selector.clone().filter(|s| !s.is_empty())?;
        if service.spec.as_ref().and_then(|s| s.type_.as_deref()) == Some("ExternalName") {
            return None;
        }
        let sel = Selector::from_map(&selector);
        let ns = service.metadata.namespace.clone().unwrap_or_default();
        Some(self.pods.in_namespace(&ns).filter_map(|o| o.as_pod()).filter(|p| sel.matches(p.metadata.labels.as_ref())).cloned().collect())
    }

    fn zone(&self, node: &str) -> Option<String> {
        self.nodes.get_named("", node)?.metadata().labels.as_ref()?.get("topology.kubernetes.io/zone").cloned()
    }

    /// Services whose selector matches the pod (old or new labels).
    fn services_for_pod(&self, pod: &Object, old: Option<&Object>) -> Vec<Key> {
        let labels = [pod.metadata().labels.clone(), old.and_then(|o| o.metadata().labels.clone())];
        self.services
            .in_namespace(pod.namespace())
            .filter(|s| {
                as_service(s).and_then(|s| s.spec.as_ref()).and_then(|s| s.selector.clone()).filter(|m| !m.is_empty()).is_some_and(|m| {
                    let sel = Selector::from_map(&m);
                    labels.iter().any(|l| l.is_some() && sel.matches(l.as_ref()))
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
                let relevant = |o: &Object| {
                    o.as_pod().map(|p| {
                        (
                            p.metadata.labels.clone(),
                            pod_ip(p),
                            is_pod_ready(p),
                            p.metadata.deletion_timestamp.is_some(),
                            pod_phase(p).to_string(),
                            pod_node(p).to_string(),
                        )
                    })
                };
                if event.event_type == kubesim_store::EventType::Modified && old.map(relevant) == Some(relevant(&event.object)) {
                    return Vec::new();
                }
                self.services_for_pod(&event.object, old)
            }
            _ => Vec::new(),
        }
    }
}

fn endpoint_key(e: &Endpoint) -> String {
    e.target_ref.as_ref().and_then(|r| r.uid.clone()).unwrap_or_else(|| e.addresses.join(","))
}

/// The EndpointSlice controller.
#[derive(Clone)]
pub struct EndpointSliceController {
    shared: Shared,
    slices: Cache,
    queue: WorkQueue,
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
        EndpointSliceController { shared: Shared::new(), slices: Cache::default(), queue: WorkQueue::new(ENDPOINTS_LATENCY_MS) }
    }

    fn owned_slices(&self, service: &Service) -> Vec<EndpointSlice> {
        let name = service.metadata.name.clone().unwrap_or_default();
        let ns = service.metadata.namespace.clone().unwrap_or_default();
        self.slices
            .in_namespace(&ns)
            .filter(|o| {
                let l = o.metadata().labels.clone().unwrap_or_default();
                l.get(SERVICE_NAME_LABEL) == Some(&name) && l.get(MANAGED_BY_LABEL).map(String::as_str) == Some(MANAGED_BY)
            })
            .filter_map(|o| decode::<EndpointSlice>(o))
            .collect()
    }

    fn slice_meta(service: &Service, owner: &Object) -> ObjectMeta {
        let name = service.metadata.name.clone().unwrap_or_default();
        let mut labels = service.metadata.labels.clone().unwrap_or_default();
        labels.insert(SERVICE_NAME_LABEL.into(), name.clone());
        labels.insert(MANAGED_BY_LABEL.into(), MANAGED_BY.into());
        if service.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()) == Some("None") {
            labels.insert("service.kubernetes.io/headless".into(), String::new());
        }
        ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: service.metadata.namespace.clone(),
            labels: Some(labels),
            owner_references: Some(vec![controller_ref(owner)]),
            ..Default::default()
        }
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.shared.services.get(key).cloned() else { return Ok(()) };
        let Some(service) = as_service(&object).cloned() else { return Ok(()) };
        if service.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let Some(pods) = self.shared.selected_pods(&service) else { return Ok(()) };
        let address_type = service.spec.as_ref().and_then(|s| s.ip_families.as_ref()).and_then(|f| f.first().cloned()).unwrap_or_else(|| "IPv4".into());
        // Desired endpoints grouped by their port set.
        let mut desired: BTreeMap<String, (Vec<EndpointPort>, BTreeMap<String, Endpoint>)> = BTreeMap::new();
        for pod in pods.iter().filter(|p| eligible(p, true)) {
            let ports = endpoint_ports(&service, pod);
            let group = serde_json::to_string(&ports).unwrap_or_default();
            let ep = pod_to_endpoint(pod, &service, self.shared.zone(pod_node(pod)));
            desired.entry(group).or_insert_with(|| (ports.clone(), BTreeMap::new())).1.insert(endpoint_key(&ep), ep);
        }
        let existing = self.owned_slices(&service);
        let mut to_create: Vec<EndpointSlice> = Vec::new();
        let mut to_update: Vec<EndpointSlice> = Vec::new();
        let mut to_delete: Vec<EndpointSlice> = Vec::new();
        let meta = Self::slice_meta(&service, &object);
        let total_desired: usize = desired.values().map(|(_, e)| e.len()).sum();
        if total_desired == 0 {
            // Placeholder: exactly one slice with no endpoints and no ports.
            let mut kept = false;
            for slice in existing {
                if !kept && slice.endpoints.is_empty() && slice.ports.as_ref().is_none_or(|p| p.is_empty()) {
                    kept = true;
                } else {
                    to_delete.push(slice);
                }
            }
            if !kept {
                to_create.push(EndpointSlice { metadata: meta.clone(), address_type: address_type.clone(), endpoints: Vec::new(), ports: None });
            }
        } else {
            let mut by_group: BTreeMap<String, Vec<EndpointSlice>> = BTreeMap::new();
            for slice in existing {
                let group = serde_json::to_string(&slice.ports.clone().unwrap_or_default()).unwrap_or_default();
                if desired.contains_key(&group) && slice.address_type == address_type {
                    by_group.entry(group).or_default().push(slice);
                } else {
                    to_delete.push(slice);
                }
            }
            for (group, (ports, mut wanted)) in desired {
                let mut slices = by_group.remove(&group).unwrap_or_default();
                kubesim_api::sort::sort_by(&mut slices, |a, b| a.metadata.name.cmp(&b.metadata.name));
                let mut updated: Vec<EndpointSlice> = Vec::new();
                let mut unchanged: Vec<EndpointSlice> = Vec::new();
                for mut slice in slices {
                    let before = slice.endpoints.clone();
                    slice.endpoints = before.iter().filter_map(|e| wanted.remove(&endpoint_key(e))).collect();
                    if slice.endpoints.is_empty() {
                        to_delete.push(slice);
                    } else if slice.endpoints != before || slice.metadata.labels != meta.labels {
                        slice.metadata.labels = meta.labels.clone();
                        updated.push(slice);
                    } else {
                        unchanged.push(slice);
                    }
                }
                let mut remaining: Vec<Endpoint> = wanted.into_values().collect();
                // Fill slices that are being updated anyway.
                for slice in updated.iter_mut() {
                    while slice.endpoints.len() < MAX_ENDPOINTS_PER_SLICE && !remaining.is_empty() {
                        slice.endpoints.push(remaining.remove(0));
                    }
                }
                // Then, if only a few remain, one unchanged slice with room.
                if !remaining.is_empty() {
                    if let Some(pos) = unchanged.iter().position(|s| s.endpoints.len() + remaining.len() <= MAX_ENDPOINTS_PER_SLICE) {
                        let mut slice = unchanged.remove(pos);
                        slice.endpoints.append(&mut remaining);
                        updated.push(slice);
                    }
                }
                for chunk in remaining.chunks(MAX_ENDPOINTS_PER_SLICE) {
                    to_create.push(EndpointSlice {
                        metadata: meta.clone(),
                        address_type: address_type.clone(),
                        endpoints: chunk.to_vec(),
                        ports: Some(ports.clone()),
                    });
                }
                to_update.extend(updated);
            }
        }
        let info = kind_info("discovery.k8s.io/v1", "EndpointSlice").expect("served");
        for slice in to_create {
            let created = ctx.create(encode(&slice, "discovery.k8s.io/v1", "EndpointSlice"))?;
            self.slices.put(created);
        }
        for slice in to_update {
            let updated = ctx.update(encode(&slice, "discovery.k8s.io/v1", "EndpointSlice"))?;
            self.slices.put(updated);
        }
        for slice in to_delete {
            let name = slice.metadata.name.clone().unwrap_or_default();
            match ctx.delete(info, &key.0, &name, DeleteOptions::default()) {
                Ok(_) => {
                    self.slices.remove(&(key.0.clone(), name));
                }
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
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
            // A slice changed or removed by someone else: resync its service.
            if let Some(svc) = event.object.metadata().labels.as_ref().and_then(|l| l.get(SERVICE_NAME_LABEL)) {
                if event.object.metadata().labels.as_ref().and_then(|l| l.get(MANAGED_BY_LABEL)).map(String::as_str) == Some(MANAGED_BY) {
                    self.queue.add((event.object.namespace().to_string(), svc.clone()), ctx);
                }
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

/// Builds the subsets of an Endpoints object (grouped by port set, addresses sorted by IP).
pub fn endpoints_subsets(service: &Service, pods: &[Pod]) -> Vec<EndpointSubset> {
    let publish = service.spec.as_ref().and_then(|s| s.publish_not_ready_addresses).unwrap_or(false);
    type Group = (Vec<CoreEndpointPort>, Vec<EndpointAddress>, Vec<EndpointAddress>);
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for pod in pods.iter().filter(|p| eligible(p, publish)) {
        let ports: Vec<CoreEndpointPort> = endpoint_ports(service, pod)
            .into_iter()
            .map(|p| CoreEndpointPort { name: p.name.filter(|n| !n.is_empty()), port: p.port.unwrap_or(0), protocol: p.protocol, app_protocol: p.app_protocol })
            .collect();
        let group = serde_json::to_string(&ports).unwrap_or_default();
        let address = EndpointAddress {
            ip: pod_ip(pod).unwrap_or_default(),
            node_name: Some(pod_node(pod).to_string()).filter(|n| !n.is_empty()),
            hostname: should_set_hostname(pod, service).then(|| pod.spec.as_ref().and_then(|s| s.hostname.clone())).flatten(),
            target_ref: Some(ObjectReference {
                kind: Some("Pod".into()),
                namespace: pod.metadata.namespace.clone(),
                name: pod.metadata.name.clone(),
                uid: pod.metadata.uid.clone(),
                ..Default::default()
            }),
        };
        let entry = groups.entry(group).or_insert_with(|| (ports, Vec::new(), Vec::new()));
        if publish || is_pod_ready(pod) {
            entry.1.push(address);
        } else {
            entry.2.push(address);
        }
    }
    let ip_key = |a: &EndpointAddress| a.ip.split('.').map(|p| p.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>();
    groups
        .into_values()
        .map(|(ports, mut ready, mut not_ready)| {
            kubesim_api::sort::sort_by_key(&mut ready, ip_key);
            kubesim_api::sort::sort_by_key(&mut not_ready, ip_key);
            EndpointSubset {
                addresses: (!ready.is_empty()).then_some(ready),
                not_ready_addresses: (!not_ready.is_empty()).then_some(not_ready),
                ports: (!ports.is_empty()).then_some(ports),
            }
        })
        .collect()
}

impl EndpointsController {
    /// A controller with empty caches.
    pub fn new() -> EndpointsController {
        EndpointsController { shared: Shared::new(), queue: WorkQueue::new(ENDPOINTS_LATENCY_MS) }
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.shared.services.get(key).cloned() else { return Ok(()) };
        let Some(service) = as_service(&object).cloned() else { return Ok(()) };
        let Some(pods) = self.shared.selected_pods(&service) else { return Ok(()) };
        let subsets = endpoints_subsets(&service, &pods);
        let current: Option<Endpoints> = ctx.api.lookup(("", "endpoints"), &key.0, &key.1).and_then(|o| decode(o));
        let mut labels = service.metadata.labels.clone().unwrap_or_default();
        labels.insert("endpoints.kubernetes.io/managed-by".into(), "endpoint-controller".into());
        if service.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()) == Some("None") {
            labels.insert("service.kubernetes.io/headless".into(), String::new());
        }
        let subsets = (!subsets.is_empty()).then_some(subsets);
        match current {
            Some(mut ep) => {
                if ep.subsets == subsets && ep.metadata.labels.as_ref() == Some(&labels) {
                    return Ok(());
                }
                ep.subsets = subsets;
                ep.metadata.labels = Some(labels);
                ctx.update(encode(&ep, "v1", "Endpoints"))?;
            }
            None => {
                let ep = Endpoints {
                    metadata: ObjectMeta { name: Some(key.1.clone()), namespace: Some(key.0.clone()), labels: Some(labels), ..Default::default() },
                    subsets,
                };
                match ctx.create(encode(&ep, "v1", "Endpoints")) {
                    Ok(_) => {}
                    Err(e) if e.reason == "AlreadyExists" => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }
}

impl Reconciler for EndpointsController {
    fn name(&self) -> &'static str {
        "endpoint-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "services")) => shared.services,
        Informer::all(("", "pods")) => shared.pods,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        let deleted_service = event.resource == ("", "services") && event.event_type == kubesim_store::EventType::Deleted;
        for key in self.shared.keys_for(event, change.old.as_deref()) {
            if deleted_service {
                // The Endpoints object of a deleted service goes too.
                let info = kind_info("v1", "Endpoints").expect("served");
                let _ = ctx.delete(info, &key.0, &key.1, DeleteOptions::default());
                continue;
            }
            self.queue.add(key, ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}
