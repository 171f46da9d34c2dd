//! The scheduler cache: compact per-pod ([`PodInfo`]) and per-node ([`NodeInfo`]) aggregates,
//! updated incrementally from watch events and from assumed pods, so a scheduling cycle never
//! rescans every pod (upstream `pkg/scheduler/backend/cache` + `framework.NodeInfo`).

use crate::plugins::helper::FixedState;
use crate::resources::{pod_requests, PodRequests, Resources};
use k8s_openapi::api::core::v1::{Node, Pod, PodAffinityTerm, Taint};
use kubesim_api::selector::{Requirement, Selector};
use kubesim_api::time::millis_of;
use kubesim_api::{Millis, Object};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A pod (anti-)affinity term, compiled (upstream `framework.AffinityTerm`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffinityTerm {
    /// The label selector (with matchLabelKeys / mismatchLabelKeys merged in).
    pub selector: Selector,
    /// Explicit namespaces (the pod's own if neither these nor a namespace selector are set).
    pub namespaces: BTreeSet<String>,
    /// The namespace selector (an empty one selects every namespace).
    pub namespace_selector: Option<Selector>,
    /// The topology key.
    pub topology_key: String,
    /// Weight (preferred terms), 0 for required ones.
    pub weight: i64,
}

impl AffinityTerm {
    fn compile(term: &PodAffinityTerm, owner: &Pod, weight: i64) -> AffinityTerm {
        let owner_ns = owner.metadata.namespace.clone().unwrap_or_default();
        let mut selector = match term.label_selector.as_ref() {
            Some(s) => Selector::from_label_selector(s),
            // A nil label selector matches nothing (LabelSelectorAsSelector(nil) = Nothing).
            None => Selector { requirements: Vec::new(), matches_nothing: true },
        };
        let labels = owner.metadata.labels.as_ref();
        if term.label_selector.is_some() {
            for key in term.match_label_keys.iter().flatten() {
                if let Some(v) = labels.and_then(|l| l.get(key)) {
                    selector.requirements.push(Requirement::In(key.clone(), vec![v.clone()]));
                }
            }
            for key in term.mismatch_label_keys.iter().flatten() {
                if let Some(v) = labels.and_then(|l| l.get(key)) {
                    selector.requirements.push(Requirement::NotIn(key.clone(), vec![v.clone()]));
                }
            }
        }
        let mut namespaces: BTreeSet<String> = term.namespaces.iter().flatten().cloned().collect();
        let namespace_selector = term.namespace_selector.as_ref().map(Selector::from_label_selector);
        if namespaces.is_empty() && namespace_selector.is_none() {
            namespaces.insert(owner_ns);
        }
        AffinityTerm { selector, namespaces, namespace_selector, topology_key: term.topology_key.clone(), weight }
    }

    /// Whether `pod` (in a namespace labelled `ns_labels`) matches this term.
    pub fn matches(&self, pod: &PodInfo, ns_labels: Option<&BTreeMap<String, String>>) -> bool {
        let ns_ok = self.namespaces.contains(pod.namespace()) || self.namespace_selector.as_ref().is_some_and(|s| s.matches(ns_labels));
        ns_ok && self.selector.matches(pod.labels())
    }
}

/// A host port a pod uses.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostPort {
    /// Host IP ("0.0.0.0" if unset).
    pub ip: String,
    /// Protocol (TCP if unset).
    pub protocol: String,
    /// Port.
    pub port: i32,
}

impl HostPort {
    /// Whether two host ports conflict (same protocol and port, and same IP or a wildcard).
    pub fn conflicts(&self, other: &HostPort) -> bool {
        self.port == other.port && self.protocol == other.protocol && (self.ip == other.ip || self.ip == "0.0.0.0" || other.ip == "0.0.0.0")
    }
}

/// Everything the scheduler precomputes about a pod once (upstream `framework.PodInfo`).
#[derive(Clone, Debug)]
pub struct PodInfo {
    /// The pod as last seen.
    pub object: Arc<Object>,
    /// `namespace/name`.
    pub key: String,
    /// Requests.
    pub requests: PodRequests,
    /// `.spec.priority` (0 if unset).
    pub priority: i32,
    /// Required pod affinity terms.
    pub required_affinity: Vec<AffinityTerm>,
    /// Required pod anti-affinity terms.
    pub required_anti_affinity: Vec<AffinityTerm>,
    /// Preferred pod affinity terms.
    pub preferred_affinity: Vec<AffinityTerm>,
    /// Preferred pod anti-affinity terms.
    pub preferred_anti_affinity: Vec<AffinityTerm>,
    /// Host ports.
    pub host_ports: Vec<HostPort>,
    /// Normalized images of init and regular containers.
    pub images: Vec<String>,
    /// status.startTime (virtual ms) or creation time.
    pub start_time: Millis,
    /// spec.nodeName if set and non-empty.
    pub node_name: Option<String>,
    ns: String,
}

impl PodInfo {
    /// Builds the pod's info. `object` must be a pod.
    pub fn new(object: Arc<Object>) -> PodInfo {
        let pod = object.as_pod().expect("PodInfo::new takes a pod");
        let key = format!("{}/{}", object.namespace(), object.name());
        let spec = pod.spec.as_ref();
        let requests = pod_requests(pod);
        let priority = spec.and_then(|s| s.priority).unwrap_or(0);
        let mut info = PodInfo {
            key,
            requests,
            priority,
            required_affinity: Vec::new(),
            required_anti_affinity: Vec::new(),
            preferred_affinity: Vec::new(),
            preferred_anti_affinity: Vec::new(),
            host_ports: Vec::new(),
            images: Vec::new(),
            start_time: 0,
            node_name: spec.and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty()),
            ns: object.namespace().to_string(),
            object: object.clone(),
        };
        if let Some(aff) = spec.and_then(|s| s.affinity.as_ref()) {
            if let Some(pa) = aff.pod_affinity.as_ref() {
                for t in pa.required_during_scheduling_ignored_during_execution.iter().flatten() {
                    info.required_affinity.push(AffinityTerm::compile(t, pod, 0));
                }
                for w in pa.preferred_during_scheduling_ignored_during_execution.iter().flatten() {
                    info.preferred_affinity.push(AffinityTerm::compile(&w.pod_affinity_term, pod, w.weight as i64));
                }
            }
            if let Some(pa) = aff.pod_anti_affinity.as_ref() {
                for t in pa.required_during_scheduling_ignored_during_execution.iter().flatten() {
                    info.required_anti_affinity.push(AffinityTerm::compile(t, pod, 0));
                }
                for w in pa.preferred_during_scheduling_ignored_during_execution.iter().flatten() {
                    info.preferred_anti_affinity.push(AffinityTerm::compile(&w.pod_affinity_term, pod, w.weight as i64));
                }
            }
        }
        if let Some(spec) = spec {
            for c in spec.init_containers.iter().flatten().chain(spec.containers.iter()) {
                for p in c.ports.iter().flatten() {
                    if let Some(hp) = p.host_port.filter(|hp| *hp > 0) {
                        info.host_ports.push(HostPort {
                            ip: p.host_ip.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| "0.0.0.0".into()),
                            protocol: p.protocol.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| "TCP".into()),
                            port: hp,
                        });
                    }
                }
                if let Some(image) = c.image.as_deref() {
                    info.images.push(normalized_image_name(image));
                }
            }
        }
        info.start_time = pod_start_time(pod);
        info
    }

    /// The pod.
    pub fn pod(&self) -> &Pod {
        self.object.as_pod().expect("PodInfo holds a pod")
    }
    /// Namespace.
    pub fn namespace(&self) -> &str {
        &self.ns
    }
    /// Name.
    pub fn name(&self) -> &str {
        self.object.name()
    }
    /// Labels.
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.pod().metadata.labels.as_ref()
    }
    /// Whether the pod has any pod affinity or anti-affinity.
    pub fn has_affinity(&self) -> bool {
        !(self.required_affinity.is_empty()
            && self.required_anti_affinity.is_empty()
            && self.preferred_affinity.is_empty()
            && self.preferred_anti_affinity.is_empty())
    }
    /// Whether the pod is terminating.
    pub fn is_terminating(&self) -> bool {
        self.pod().metadata.deletion_timestamp.is_some()
    }
}

/// A pod's start time for preemption ordering: status.startTime, else creation time (virtual ms).
pub fn pod_start_time(pod: &Pod) -> Millis {
    pod.status.as_ref().and_then(|s| s.start_time.as_ref()).or(pod.metadata.creation_timestamp.as_ref()).map(millis_of).unwrap_or(0)
}

/// Normalizes an image name as ImageLocality does: append `:latest` when there is no tag.
pub fn normalized_image_name(name: &str) -> String {
    let last_slash = name.rfind('/').map(|i| i + 1).unwrap_or(0);
    if name.contains('@') || name[last_slash..].contains(':') {
        name.to_string()
    } else {
        format!("{name}:latest")
    }
}

/// A node's images: normalized name → size in bytes.
pub type ImageSizes = std::collections::HashMap<String, i64, FixedState>;

/// Per-node aggregates (upstream `framework.NodeInfo`).
#[derive(Clone, Debug)]
pub struct NodeInfo {
    /// The node object.
    pub node: Arc<Object>,
    /// Node name.
    pub name: String,
    /// Node name, shared (attempt records point at it without copying).
    pub shared_name: Arc<str>,
    /// Position in [`Cache::nodes`] (maintained by the cache).
    pub index: usize,
    /// The node's labels with shared values (counting maps keyed by label values take a
    /// reference per entry instead of a copy).
    shared_labels: BTreeMap<String, Arc<str>>,
    /// Changes whenever the node object changes (its labels or images may have); unique
    /// across the cache (topology domains and ImageLocality's sizes are remembered by it).
    pub label_generation: u64,
    /// status.allocatable (falling back to capacity).
    pub allocatable: Resources,
    /// Sum of the requests of the pods on the node.
    pub requested: Resources,
    /// Sum of the non-zero cpu requests.
    pub non_zero_cpu: i64,
    /// Sum of the non-zero memory requests.
    pub non_zero_memory: i64,
    /// Pods on the node (bound and assumed).
    pub pods: Vec<Arc<PodInfo>>,
    /// Number of pods with (anti-)affinity.
    pub pods_with_affinity: usize,
    /// Number of pods with required anti-affinity.
    pub pods_with_required_anti_affinity: usize,
    /// Host ports in use.
    pub used_ports: Vec<HostPort>,
    /// Images present, normalized name → size in bytes. Hashed (fixed keys): ImageLocality
    /// looks the pod's images up on every scored node; nothing iterates it in an order that
    /// reaches behaviour.
    pub images: ImageSizes,
    /// Changes on every change (unique across the cache's nodes: the cache stamps it from one
    /// counter, so per-node memoization keyed by it is safe).
    pub generation: u64,
    unschedulable: bool,
    has_taints: bool,
}

impl NodeInfo {
    /// A node's info with no pods.
    pub fn new(node: Arc<Object>) -> NodeInfo {
        let mut info = NodeInfo {
            name: node.name().to_string(),
            shared_name: Arc::from(node.name()),
            index: 0,
            label_generation: 0,
            shared_labels: BTreeMap::new(),
            node: node.clone(),
            allocatable: Resources::default(),
            requested: Resources::default(),
            non_zero_cpu: 0,
            non_zero_memory: 0,
            pods: Vec::new(),
            pods_with_affinity: 0,
            pods_with_required_anti_affinity: 0,
            used_ports: Vec::new(),
            images: ImageSizes::default(),
            generation: 0,
            unschedulable: false,
            has_taints: false,
        };
        info.set_node(node);
        info
    }

    /// Replaces the node object (pods kept).
    pub fn set_node(&mut self, node: Arc<Object>) {
        let n = node.as_node().expect("NodeInfo holds a node");
        let status = n.status.as_ref();
        let list = status.and_then(|s| s.allocatable.as_ref()).or_else(|| status.and_then(|s| s.capacity.as_ref()));
        self.allocatable = list.map(Resources::from_list).unwrap_or_default();
        self.images.clear();
        for image in status.and_then(|s| s.images.as_ref()).into_iter().flatten() {
            for name in image.names.iter().flatten() {
                self.images.insert(normalized_image_name(name), image.size_bytes.unwrap_or(0));
            }
        }
        self.unschedulable = n.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false);
        self.has_taints = n.spec.as_ref().and_then(|s| s.taints.as_ref()).is_some_and(|t| !t.is_empty());
        let labels = n.metadata.labels.as_ref();
        let unchanged = labels.map_or(0, BTreeMap::len) == self.shared_labels.len()
            && labels.into_iter().flatten().zip(&self.shared_labels).all(|((k, v), (sk, sv))| k == sk && v.as_str() == &**sv);
        if !unchanged {
            self.shared_labels = labels.into_iter().flatten().map(|(k, v)| (k.clone(), Arc::from(v.as_str()))).collect();
        }
        self.node = node;
        self.generation += 1;
    }

    /// A label's value, shared.
    pub fn shared_label(&self, key: &str) -> Option<&Arc<str>> {
        self.shared_labels.get(key)
    }

    /// The node.
    pub fn node(&self) -> &Node {
        self.node.as_node().expect("NodeInfo holds a node")
    }
    /// Node labels.
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.node().metadata.labels.as_ref()
    }
    /// Node taints.
    pub fn taints(&self) -> &[Taint] {
        if !self.has_taints {
            return &[];
        }
        self.node().spec.as_ref().and_then(|s| s.taints.as_deref()).unwrap_or(&[])
    }
    /// spec.unschedulable.
    pub fn unschedulable(&self) -> bool {
        self.unschedulable
    }

    /// Adds a pod's requests, ports and affinity counts.
    pub fn add_pod(&mut self, pod: Arc<PodInfo>) {
        self.requested.add(&pod.requests.requests);
        self.requested.allowed_pod_number += 1;
        self.non_zero_cpu += pod.requests.non_zero_cpu;
        self.non_zero_memory += pod.requests.non_zero_memory;
        if pod.has_affinity() {
            self.pods_with_affinity += 1;
        }
        if !pod.required_anti_affinity.is_empty() {
            self.pods_with_required_anti_affinity += 1;
        }
        self.used_ports.extend(pod.host_ports.iter().cloned());
        self.pods.push(pod);
        self.generation += 1;
    }

    /// Removes a pod by key; returns whether it was there.
    pub fn remove_pod(&mut self, key: &str) -> bool {
        let Some(i) = self.pods.iter().position(|p| p.key == key) else { return false };
        let pod = self.pods.remove(i);
        self.requested.sub(&pod.requests.requests);
        self.requested.allowed_pod_number -= 1;
        self.non_zero_cpu -= pod.requests.non_zero_cpu;
        self.non_zero_memory -= pod.requests.non_zero_memory;
        if pod.has_affinity() {
            self.pods_with_affinity -= 1;
        }
        if !pod.required_anti_affinity.is_empty() {
            self.pods_with_required_anti_affinity -= 1;
        }
        for hp in &pod.host_ports {
            if let Some(j) = self.used_ports.iter().position(|u| u == hp) {
                self.used_ports.remove(j);
            }
        }
        self.generation += 1;
        true
    }
}

#[derive(Clone, Debug)]
struct CachedPod {
    node: String,
    info: Arc<PodInfo>,
    assumed: bool,
}

/// The cache: nodes in a stable order (creation order) plus every assigned or assumed pod.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    nodes: Vec<NodeInfo>,
    index: BTreeMap<String, usize>,
    pods: BTreeMap<String, CachedPod>,
    /// Pods whose node is not (yet) in the cache, by node name.
    orphans: BTreeMap<String, Vec<Arc<PodInfo>>>,
    image_nodes: std::collections::HashMap<String, usize, FixedState>,
    pods_with_affinity: usize,
    pods_with_required_anti_affinity: usize,
    anti_affinity_keys: BTreeMap<String, usize>,
    /// Topology keys of cached pods' terms that score an incoming pod (required affinity,
    /// preferred affinity and anti-affinity), with how many terms use each.
    score_keys: BTreeMap<String, usize>,
    /// Cached pods by namespace, label key and value ([`label_key`]): a selector with an `In`
    /// requirement counts only the pods that carry one of its values
    /// ([`Cache::selector_counts`]) instead of every pod on every node.
    by_label: BTreeMap<String, BTreeMap<String, Labelled>>,
    generation: u64,
    /// The generation of the last change to any node's object (labels, images) or to the set
    /// of nodes: a memo of per-node label answers taken at this epoch holds for every node
    /// ([`Cache::label_epoch`]).
    label_epoch: u64,
    /// The latest node stamps (generation, node position), oldest first, at most
    /// [`STAMP_LOG`]: which nodes changed since a generation, found without visiting every
    /// node ([`Cache::changed_since`]).
    stamps: std::collections::VecDeque<(u64, usize)>,
    /// Stamps up to this generation have left `stamps`, or positions moved (a node was
    /// removed): a memo synced before it must look at every node.
    stamps_floor: u64,
}

/// How many node stamps [`Cache::changed_since`] can answer from (a scheduling cycle stamps
/// one node; a memo asked about once per cycle is never further behind than a few hundred).
pub const STAMP_LOG: usize = 4096;

/// A pod in the [`Cache`]'s label index: its current info and its node's position in
/// [`Cache::nodes`] (`None` while the node is not cached), so counting visits no other map.
#[derive(Clone, Debug)]
struct Labelled {
    info: Arc<PodInfo>,
    node: Option<usize>,
}

/// The [`Cache`]'s label index key of a namespace, label key and value.
fn label_key(namespace: &str, key: &str, value: &str) -> String {
    format!("{namespace}\0{key}\0{value}")
}

/// The terms of an existing pod that score an incoming pod in InterPodAffinity's PreScore.
fn scoring_terms(info: &PodInfo) -> impl Iterator<Item = &AffinityTerm> {
    info.required_affinity.iter().chain(&info.preferred_affinity).chain(&info.preferred_anti_affinity)
}

impl Cache {
    /// The nodes, in snapshot order.
    pub fn nodes(&self) -> &[NodeInfo] {
        &self.nodes
    }
    /// A node by name.
    pub fn node(&self, name: &str) -> Option<&NodeInfo> {
        self.index.get(name).map(|i| &self.nodes[*i])
    }
    /// The index of a node in [`Cache::nodes`].
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
    /// Number of nodes that have an image (normalized name).
    pub fn nodes_with_image(&self, image: &str) -> usize {
        self.image_nodes.get(image).copied().unwrap_or(0)
    }
    /// Number of cached pods that have pod (anti-)affinity.
    pub fn pods_with_affinity(&self) -> usize {
        self.pods_with_affinity
    }
    /// Topology keys used by cached pods' required anti-affinity terms.
    pub fn anti_affinity_keys(&self) -> impl Iterator<Item = &str> {
        self.anti_affinity_keys.keys().map(String::as_str)
    }
    /// Topology keys used by cached pods' terms that score an incoming pod.
    pub fn score_keys(&self) -> impl Iterator<Item = &str> {
        self.score_keys.keys().map(String::as_str)
    }
    /// Number of cached pods that have required pod anti-affinity.
    pub fn pods_with_required_anti_affinity(&self) -> usize {
        self.pods_with_required_anti_affinity
    }
    /// The node a cached pod is on, and whether it is only assumed.
    pub fn pod_node(&self, key: &str) -> Option<(&str, bool)> {
        self.pods.get(key).map(|p| (p.node.as_str(), p.assumed))
    }
    /// The cached info of a pod.
    pub fn pod(&self, key: &str) -> Option<&Arc<PodInfo>> {
        self.pods.get(key).map(|p| &p.info)
    }
    /// Number of cached pods.
    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }

    /// Per node, the pods in `namespace` that are not terminating and match `selector`:
    /// exactly `count_pods_match_selector` over each node's pods, found through the label
    /// index, as `(position in [`Cache::nodes`], count)` for the nodes with any, by position.
    /// `None` if the selector has no `In` requirement to look up (the caller counts node by
    /// node).
    pub fn selector_counts(&self, namespace: &str, selector: &Selector) -> Option<Vec<(usize, i64)>> {
        if selector.matches_nothing {
            return Some(Vec::new());
        }
        let mut found: Vec<usize> = Vec::new();
        for pods in self.label_sets(namespace, selector)? {
            for Labelled { info, node } in pods.values() {
                if let Some(i) = *node {
                    if !info.is_terminating() && selector.matches(info.labels()) {
                        found.push(i);
                    }
                }
            }
        }
        found.sort_unstable();
        let mut out: Vec<(usize, i64)> = Vec::new();
        for i in found {
            match out.last_mut() {
                Some((last, n)) if *last == i => *n += 1,
                _ => out.push((i, 1)),
            }
        }
        Some(out)
    }

    /// How many pods [`Cache::selector_counts`] would visit for `selector` in `namespace`
    /// (`None`: it cannot answer).
    pub fn selector_candidates(&self, namespace: &str, selector: &Selector) -> Option<usize> {
        if selector.matches_nothing {
            return Some(0);
        }
        Some(self.label_sets(namespace, selector)?.map(BTreeMap::len).sum())
    }

    /// The label index's pods for each distinct value of the selector's first `In`
    /// requirement (`None` if it has none). A pod carries one value per key, so the sets
    /// never share a pod.
    fn label_sets<'a>(&'a self, namespace: &str, selector: &'a Selector) -> Option<impl Iterator<Item = &'a BTreeMap<String, Labelled>> + 'a> {
        let (key, values) = selector.requirements.iter().find_map(|r| match r {
            Requirement::In(k, v) => Some((k, v)),
            _ => None,
        })?;
        let values: BTreeSet<&String> = values.iter().collect();
        let namespace = namespace.to_string();
        Some(values.into_iter().filter_map(move |v| self.by_label.get(&label_key(&namespace, key, v))))
    }

    /// Adds a pod to the label index on `node` (`Some` position), updates its entries in
    /// place (`None`: same labels, newer info; or `Some` again after its node arrived), or
    /// removes them (`remove`).
    fn index_labels(&mut self, info: &Arc<PodInfo>, node: Option<Option<usize>>, remove: bool) {
        // One key buffer for every label (a pod's labels are indexed at each of its updates);
        // a key is allocated only for a label not indexed yet.
        let mut key = String::new();
        for (k, v) in info.labels().into_iter().flatten() {
            key.clear();
            key.extend([info.namespace(), "\0", k, "\0", v]);
            debug_assert_eq!(key, label_key(info.namespace(), k, v));
            if remove {
                if let Some(pods) = self.by_label.get_mut(key.as_str()) {
                    pods.remove(&info.key);
                    if pods.is_empty() {
                        self.by_label.remove(key.as_str());
                    }
                }
                continue;
            }
            if !self.by_label.contains_key(key.as_str()) {
                self.by_label.insert(key.clone(), BTreeMap::new());
            }
            let pods = self.by_label.get_mut(key.as_str()).expect("inserted");
            match (pods.get_mut(&info.key), node) {
                (Some(entry), None) => entry.info = info.clone(),
                (Some(entry), Some(node)) => *entry = Labelled { info: info.clone(), node },
                (None, node) => {
                    pods.insert(info.key.clone(), Labelled { info: info.clone(), node: node.flatten() });
                }
            }
        }
    }

    fn stamp(&mut self, index: usize) {
        self.generation += 1;
        self.nodes[index].generation = self.generation;
        self.stamps.push_back((self.generation, index));
        if self.stamps.len() > STAMP_LOG {
            if let Some((generation, _)) = self.stamps.pop_front() {
                self.stamps_floor = generation;
            }
        }
    }

    fn stamp_labels(&mut self, index: usize) {
        self.generation += 1;
        self.nodes[index].label_generation = self.generation;
        self.label_epoch = self.generation;
    }

    /// The cache's generation: every node's [`NodeInfo::generation`] is at most this.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Changes whenever any node's [`NodeInfo::label_generation`] changes or a node is added
    /// or removed: per-node answers about labels memoized at one epoch hold while it stays.
    pub fn label_epoch(&self) -> u64 {
        self.label_epoch
    }

    /// The positions of the nodes stamped since `generation` (a node stamped twice appears
    /// twice), or `None` when that is too far back to know (or a node was removed since): then
    /// every node may have changed.
    pub fn changed_since(&self, generation: u64) -> Option<impl Iterator<Item = usize> + '_> {
        if generation < self.stamps_floor {
            return None;
        }
        let start = self.stamps.partition_point(|(g, _)| *g <= generation);
        Some(self.stamps.range(start..).map(|(_, index)| *index))
    }

    fn count_images(&mut self, info: &NodeInfo, delta: isize) {
        for image in info.images.keys() {
            let e = self.image_nodes.entry(image.clone()).or_insert(0);
            *e = (*e as isize + delta).max(0) as usize;
        }
    }

    /// Adds or updates a node.
    pub fn upsert_node(&mut self, node: Arc<Object>) {
        let name = node.name().to_string();
        match self.index.get(&name).copied() {
            Some(i) => {
                let old_images: Vec<String> = self.nodes[i].images.keys().cloned().collect();
                self.nodes[i].set_node(node);
                self.stamp(i);
                self.stamp_labels(i);
                let images = &self.nodes[i].images;
                if old_images.len() != images.len() || !old_images.iter().all(|image| images.contains_key(image)) {
                    for image in old_images {
                        if let Some(n) = self.image_nodes.get_mut(&image) {
                            *n = n.saturating_sub(1);
                        }
                    }
                    let new_images: Vec<String> = self.nodes[i].images.keys().cloned().collect();
                    for image in new_images {
                        *self.image_nodes.entry(image).or_insert(0) += 1;
                    }
                }
            }
            None => {
                let mut info = NodeInfo::new(node);
                let position = self.nodes.len();
                for pod in self.orphans.remove(&name).unwrap_or_default() {
                    self.index_labels(&pod, Some(Some(position)), false);
                    info.add_pod(pod);
                }
                self.count_images(&info, 1);
                info.index = self.nodes.len();
                self.index.insert(name, self.nodes.len());
                self.nodes.push(info);
                self.stamp(self.nodes.len() - 1);
                self.stamp_labels(self.nodes.len() - 1);
            }
        }
    }

    /// Removes a node (its pods stay cached until they are deleted).
    pub fn remove_node(&mut self, name: &str) {
        let Some(i) = self.index.remove(name) else { return };
        let info = self.nodes.remove(i);
        self.count_images(&info, -1);
        for v in self.index.values_mut() {
            if *v > i {
                *v -= 1;
            }
        }
        for (j, n) in self.nodes.iter_mut().enumerate().skip(i) {
            n.index = j;
        }
        // The label index follows the positions (a node's removal is rare; this visits all).
        for entry in self.by_label.values_mut().flat_map(|pods| pods.values_mut()) {
            entry.node = match entry.node {
                Some(j) if j == i => None,
                Some(j) if j > i => Some(j - 1),
                other => other,
            };
        }
        self.orphans.insert(name.to_string(), info.pods);
        // Positions moved: memos by position start over.
        self.generation += 1;
        self.label_epoch = self.generation;
        self.stamps.clear();
        self.stamps_floor = self.generation;
    }

    fn attach(&mut self, node: &str, info: Arc<PodInfo>) {
        self.index_labels(&info, Some(self.index.get(node).copied()), false);
        if info.has_affinity() {
            self.pods_with_affinity += 1;
        }
        if !info.required_anti_affinity.is_empty() {
            self.pods_with_required_anti_affinity += 1;
            for t in &info.required_anti_affinity {
                *self.anti_affinity_keys.entry(t.topology_key.clone()).or_insert(0) += 1;
            }
        }
        for t in scoring_terms(&info) {
            *self.score_keys.entry(t.topology_key.clone()).or_insert(0) += 1;
        }
        match self.index.get(node).copied() {
            Some(i) => {
                self.nodes[i].add_pod(info);
                self.stamp(i);
            }
            None => self.orphans.entry(node.to_string()).or_default().push(info),
        }
    }

    fn detach(&mut self, node: &str, info: &Arc<PodInfo>) {
        self.index_labels(info, None, true);
        if info.has_affinity() {
            self.pods_with_affinity -= 1;
        }
        if !info.required_anti_affinity.is_empty() {
            self.pods_with_required_anti_affinity -= 1;
            for t in &info.required_anti_affinity {
                if let Some(n) = self.anti_affinity_keys.get_mut(&t.topology_key) {
                    *n -= 1;
                    if *n == 0 {
                        self.anti_affinity_keys.remove(&t.topology_key);
                    }
                }
            }
        }
        for t in scoring_terms(info) {
            if let Some(n) = self.score_keys.get_mut(&t.topology_key) {
                *n -= 1;
                if *n == 0 {
                    self.score_keys.remove(&t.topology_key);
                }
            }
        }
        match self.index.get(node).copied() {
            Some(i) => {
                self.nodes[i].remove_pod(&info.key);
                self.stamp(i);
            }
            None => {
                if let Some(list) = self.orphans.get_mut(node) {
                    list.retain(|p| p.key != info.key);
                }
            }
        }
    }

    /// Adds or updates an assigned pod (confirms an assumed one).
    pub fn upsert_pod(&mut self, info: Arc<PodInfo>, node: &str) {
        if let Some(old) = self.pods.remove(&info.key) {
            self.detach(&old.node, &old.info);
        }
        self.attach(node, info.clone());
        self.pods.insert(info.key.clone(), CachedPod { node: node.to_string(), info, assumed: false });
    }

    /// Replaces a bound pod's object when nothing the cache aggregates changed (same node,
    /// spec and labels: a status update). Node generations change only if the pod started or
    /// stopped terminating, so memoized counts stay valid. False if the pod is not cached there.
    pub fn refresh_pod(&mut self, info: Arc<PodInfo>, node: &str) -> bool {
        let Some(cached) = self.pods.get_mut(&info.key) else { return false };
        if cached.node != node || cached.assumed {
            return false;
        }
        let terminating_changed = cached.info.is_terminating() != info.is_terminating();
        cached.info = info.clone();
        self.index_labels(&info, None, false);
        let Some(i) = self.index.get(node).copied() else { return false };
        if let Some(slot) = self.nodes[i].pods.iter_mut().find(|p| p.key == info.key) {
            *slot = info;
        }
        if terminating_changed {
            self.stamp(i);
        }
        true
    }

    /// Assumes a pod onto a node before its binding is confirmed.
    pub fn assume_pod(&mut self, info: Arc<PodInfo>, node: &str) {
        if let Some(old) = self.pods.remove(&info.key) {
            self.detach(&old.node, &old.info);
        }
        self.attach(node, info.clone());
        self.pods.insert(info.key.clone(), CachedPod { node: node.to_string(), info, assumed: true });
    }

    /// Removes a pod (deleted, or an assumed pod whose binding failed).
    pub fn remove_pod(&mut self, key: &str) -> Option<Arc<PodInfo>> {
        let old = self.pods.remove(key)?;
        self.detach(&old.node, &old.info);
        Some(old.info)
    }
}

#[cfg(test)]
mod stamp_tests {
    use super::*;
    use crate::harness::{make_node, make_pod};

    fn pod(name: &str) -> Arc<PodInfo> {
        Arc::new(PodInfo::new(Arc::new(Object::Pod(Box::new(make_pod(name, &[]))))))
    }

    // What the memos of PodTopologySpread and InterPodAffinity rely on: `changed_since` names
    // every node stamped since a generation, or nothing at all once the log cannot tell (it
    // overflowed, or positions moved); the label epoch moves with any node object and the node
    // set, and only then.
    #[test]
    fn changed_since_names_the_stamped_nodes_or_gives_up() {
        let mut cache = Cache::default();
        for name in ["a", "b", "c"] {
            cache.upsert_node(Arc::new(make_node(name, &[("cpu", "4"), ("pods", "110")], &[("zone", "z")], vec![])));
        }
        let start = cache.generation();
        let epoch = cache.label_epoch();
        assert_eq!(cache.changed_since(start).map(|c| c.collect::<Vec<_>>()), Some(vec![]));
        cache.upsert_pod(pod("p1"), "c");
        cache.upsert_pod(pod("p2"), "a");
        cache.upsert_pod(pod("p3"), "c");
        assert_eq!(cache.changed_since(start).map(|c| c.collect::<Vec<_>>()), Some(vec![2, 0, 2]));
        let mid = cache.generation();
        cache.remove_pod("default/p2");
        assert_eq!(cache.changed_since(mid).map(|c| c.collect::<Vec<_>>()), Some(vec![0]));
        assert_eq!(cache.label_epoch(), epoch, "pods move no label epoch");
        // More stamps than the log keeps: a memo synced at `start` must look at every node.
        for i in 0..STAMP_LOG {
            cache.upsert_pod(pod(&format!("q{i}")), "b");
        }
        assert!(cache.changed_since(start).is_none());
        let late = cache.generation();
        assert!(cache.changed_since(late).is_some());
        // A node object's update moves the epoch; a removed node moves positions.
        cache.upsert_node(Arc::new(make_node("a", &[("cpu", "4"), ("pods", "110")], &[("zone", "y")], vec![])));
        assert_ne!(cache.label_epoch(), epoch);
        let before_removal = cache.generation();
        let epoch = cache.label_epoch();
        cache.remove_node("b");
        assert!(cache.changed_since(before_removal).is_none());
        assert_ne!(cache.label_epoch(), epoch);
        assert_eq!(cache.changed_since(cache.generation()).map(|c| c.count()), Some(0));
    }
}
