//! Node capacity: what the scheduler and the kubelet's admission must never exceed.

use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::resources::{pod_requests, quantity_of, CPU, MEMORY, PODS};
use kubesim_apiserver::ApiServer;
use kubesim_runtime::Checker;
use kubesim_store::{Commit, EventType};
use std::collections::{BTreeMap, BTreeSet};

/// What one pod holds on its node: (cpu millicores, memory bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Held {
    cpu: i64,
    memory: i64,
}

/// A node's totals: cpu, memory and pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Totals {
    cpu: i64,
    memory: i64,
    pods: i64,
}

/// No node's pods exceed its allocatable by their requests: the sum of cpu and memory requests
/// (`PodRequests`: sidecars, init containers, pod-level resources, overhead) of the node's
/// non-terminal pods is within `status.allocatable` (capacity where allocatable is missing),
/// and their number within the allocatable `pods` (maxPods).
///
/// Which pods count: those bound to the node and not Succeeded or Failed (deleting ones too:
/// they hold their resources until they are gone), placed by the scheduler (seen unbound
/// before) or admitted by the node's kubelet (`status.startTime` set). A pod created with
/// `spec.nodeName` already set bypasses the scheduler, and the kubelet may still reject it
/// (OutOfcpu, OutOfmemory, OutOfpods); it counts once the kubelet admitted it.
/// In-place pod resize is not modelled, so `spec` requests are the pod's requests.
#[derive(Clone, Debug, Default)]
pub struct NodeAllocatableRespected {
    /// Pod uid → (node, what it holds) for the pods that count.
    pods: BTreeMap<String, (String, Held, String)>,
    /// Pod uids seen without a node (the scheduler binds them).
    unbound: BTreeSet<String>,
    totals: BTreeMap<String, Totals>,
    /// Node → allocatable (cpu, memory, pods); a zero is not enforced.
    allocatable: BTreeMap<String, Totals>,
    /// Nodes currently over (reported once until they are within again).
    over: BTreeSet<String>,
}

fn counts(pod: &Pod, seen_unbound: bool) -> Option<&str> {
    let node = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty())?;
    let status = pod.status.as_ref();
    if matches!(status.and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed")) {
        return None;
    }
    let admitted = status.is_some_and(|s| s.start_time.is_some());
    (seen_unbound || admitted).then_some(node)
}

impl NodeAllocatableRespected {
    fn check_node(&mut self, node: &str) -> Result<(), String> {
        let (Some(total), Some(alloc)) = (self.totals.get(node), self.allocatable.get(node)) else {
            self.over.remove(node);
            return Ok(());
        };
        let mut problems = Vec::new();
        if alloc.cpu > 0 && total.cpu > alloc.cpu {
            problems.push(format!("cpu requests {}m > allocatable {}m", total.cpu, alloc.cpu));
        }
        if alloc.memory > 0 && total.memory > alloc.memory {
            problems.push(format!("memory requests {} > allocatable {}", total.memory, alloc.memory));
        }
        if alloc.pods > 0 && total.pods > alloc.pods {
            problems.push(format!("{} pods > allocatable pods {}", total.pods, alloc.pods));
        }
        if problems.is_empty() {
            self.over.remove(node);
            return Ok(());
        }
        if !self.over.insert(node.to_string()) {
            return Ok(()); // already reported
        }
        let mut on: Vec<&str> = self.pods.values().filter(|(n, _, _)| n == node).map(|(_, _, name)| name.as_str()).collect();
        kubesim_api::sort::sort(&mut on);
        Err(format!("node {node} is over its allocatable: {} ({} pods: {})", problems.join(", "), on.len(), on.join(" ")))
    }
}

impl Checker for NodeAllocatableRespected {
    fn name(&self) -> &str {
        "node-allocatable-respected"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        if let Some(node) = commit.object.as_node() {
            let name = commit.object.name().to_string();
            if commit.event_type == EventType::Deleted {
                self.allocatable.remove(&name);
                return Ok(());
            }
            let status = node.status.as_ref();
            let list = status.and_then(|s| s.allocatable.as_ref()).or_else(|| status.and_then(|s| s.capacity.as_ref()));
            let get = |key: &str| list.and_then(|l| l.get(key)).map(|q| quantity_of(key, q)).unwrap_or(0);
            let alloc = Totals { cpu: get(CPU), memory: get(MEMORY), pods: get(PODS) };
            if self.allocatable.insert(name.clone(), alloc) == Some(alloc) {
                return Ok(());
            }
            return self.check_node(&name);
        }
        let Some(pod) = commit.object.as_pod() else { return Ok(()) };
        let uid = pod.metadata.uid.as_deref().unwrap_or_default();
        if commit.event_type == EventType::Deleted {
            self.unbound.remove(uid);
        } else if pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("").is_empty() && !self.unbound.contains(uid) {
            self.unbound.insert(uid.to_string());
        }
        let now = if commit.event_type == EventType::Deleted { None } else { counts(pod, self.unbound.contains(uid)) };
        // The common write (a status update) leaves the pod on its node holding the same: the
        // totals, and so the verdict, stay as they are.
        if let (Some(node), Some((held_node, held, _))) = (now, self.pods.get(uid)) {
            let requests = pod_requests(pod).requests;
            if node == held_node && *held == (Held { cpu: requests.milli_cpu, memory: requests.memory }) {
                return Ok(());
            }
        }
        let uid = uid.to_string();
        let before = self.pods.get(&uid).map(|(n, _, _)| n.clone());
        if before.is_none() && now.is_none() {
            return Ok(());
        }
        if let Some((node, held, _)) = self.pods.remove(&uid) {
            let t = self.totals.entry(node).or_default();
            t.cpu -= held.cpu;
            t.memory -= held.memory;
            t.pods -= 1;
        }
        let Some(node) = now.map(str::to_string) else {
            if let Some(node) = before {
                let _ = self.check_node(&node); // only clears the over mark
            }
            return Ok(());
        };
        let requests = pod_requests(pod).requests;
        let held = Held { cpu: requests.milli_cpu, memory: requests.memory };
        let t = self.totals.entry(node.clone()).or_default();
        t.cpu += held.cpu;
        t.memory += held.memory;
        t.pods += 1;
        self.pods.insert(uid, (node.clone(), held, super::key(&commit.object)));
        if before.as_deref() == Some(node.as_str()) && self.over.contains(&node) {
            return Ok(());
        }
        self.check_node(&node)
    }
}
