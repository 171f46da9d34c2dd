//! The node IPAM controller with the range allocator (pkg/controller/nodeipam,
//! ipam/range_allocator.go and ipam/cidrset/cidr_set.go), as kubeadm runs it for kind:
//! `--allocate-node-cidrs=true --cluster-cidr=10.244.0.0/16`, node mask /24. Each Node without
//! `spec.podCIDRs` gets the next free /24 (round robin over the cluster CIDR: a released block is
//! reused only after the cursor wraps); Nodes that already carry one have it marked occupied;
//! a deleted Node's block is released. When the range is exhausted the Node gets a
//! `CIDRNotAvailable` event.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;
use kubesim_store::EventType;
use std::net::Ipv4Addr;

/// kind's pod subnet (`--cluster-cidr`).
pub const CLUSTER_CIDR: &str = "10.244.0.0/16";
/// Where allocation continues once kind's /16 (256 nodes) is full. Deviation (README): a real
/// cluster that large is configured with a bigger `--cluster-cidr`; kubesim keeps kind's
/// addresses for the first 256 nodes and goes on in the shared address space 100.64.0.0/10
/// (16,384 more nodes) instead of failing with CIDRNotAvailable.
pub const OVERFLOW_CIDR: &str = "100.64.0.0/10";
/// defaultNodeMaskCIDRIPv4.
pub const NODE_MASK_IPV4: u8 = 24;
/// The work queue's latency (the controllers' common 10 ms).
pub const NODE_IPAM_LATENCY_MS: Millis = 10;

/// CidrSet: which node-sized blocks of the cluster CIDR are in use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CidrSet {
    cluster: u32,
    cluster_mask: u8,
    node_mask: u8,
    used: Vec<bool>,
    next_candidate: usize,
}

impl CidrSet {
    /// `NewCIDRSet` for an IPv4 cluster CIDR.
    pub fn new(cluster_cidr: &str, node_mask: u8) -> Result<CidrSet, String> {
        let (ip, mask) = cluster_cidr.split_once('/').ok_or_else(|| format!("invalid CIDR address: {cluster_cidr}"))?;
        let ip: Ipv4Addr = ip.parse().map_err(|_| format!("invalid CIDR address: {cluster_cidr}"))?;
        let cluster_mask: u8 = mask.parse().ok().filter(|m| *m <= 32).ok_or_else(|| format!("invalid CIDR address: {cluster_cidr}"))?;
        if node_mask < cluster_mask || node_mask > 32 {
            return Err("New CIDR set failed; the node CIDR size is too big".into());
        }
        let net_mask = if cluster_mask == 0 { 0 } else { u32::MAX << (32 - cluster_mask) };
        let max = 1usize << (node_mask - cluster_mask);
        Ok(CidrSet { cluster: u32::from(ip) & net_mask, cluster_mask, node_mask, used: vec![false; max], next_candidate: 0 })
    }

    fn cidr(&self, index: usize) -> String {
        let ip = self.cluster | ((index as u32) << (32 - u32::from(self.node_mask)));
        format!("{}/{}", Ipv4Addr::from(ip), self.node_mask)
    }

    fn index_of(&self, cidr: &str) -> Option<usize> {
        let (ip, mask) = cidr.split_once('/')?;
        let ip = u32::from(ip.parse::<Ipv4Addr>().ok()?);
        if mask.parse::<u8>().ok()? != self.node_mask {
            return None;
        }
        let cluster_net_mask = if self.cluster_mask == 0 { 0 } else { u32::MAX << (32 - self.cluster_mask) };
        if ip & cluster_net_mask != self.cluster {
            return None;
        }
        let index = ((ip - self.cluster) >> (32 - u32::from(self.node_mask))) as usize;
        (index < self.used.len()).then_some(index)
    }

    /// `AllocateNext`.
    pub fn allocate_next(&mut self) -> Result<String, String> {
        let max = self.used.len();
        for i in 0..max {
            let candidate = (i + self.next_candidate) % max;
            if !self.used[candidate] {
                self.used[candidate] = true;
                self.next_candidate = (candidate + 1) % max;
                return Ok(self.cidr(candidate));
            }
        }
        Err("CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range".into())
    }

    /// `Occupy`: marks a node's existing block as used (the cursor does not move).
    pub fn occupy(&mut self, cidr: &str) {
        if let Some(i) = self.index_of(cidr) {
            self.used[i] = true;
        }
    }

    /// `Release`: frees a block (the cursor does not move).
    pub fn release(&mut self, cidr: &str) {
        if let Some(i) = self.index_of(cidr) {
            self.used[i] = false;
        }
    }
}

/// The node IPAM controller.
#[derive(Clone, Debug)]
pub struct NodeIpamController {
    nodes: Cache,
    queue: WorkQueue,
    cidrs: CidrSet,
    overflow: CidrSet,
}

impl Default for NodeIpamController {
    fn default() -> Self {
        NodeIpamController::new()
    }
}

impl NodeIpamController {
    /// The controller over kind's cluster CIDR.
    pub fn new() -> NodeIpamController {
        NodeIpamController {
            nodes: Cache::default(),
            queue: WorkQueue::new(NODE_IPAM_LATENCY_MS),
            cidrs: CidrSet::new(CLUSTER_CIDR, NODE_MASK_IPV4).expect("the default cluster CIDR is valid"),
            overflow: CidrSet::new(OVERFLOW_CIDR, NODE_MASK_IPV4).expect("the overflow CIDR is valid"),
        }
    }

    fn occupy(&mut self, cidr: &str) {
        self.cidrs.occupy(cidr);
        self.overflow.occupy(cidr);
    }

    fn release(&mut self, cidr: &str) {
        self.cidrs.release(cidr);
        self.overflow.release(cidr);
    }

    fn pod_cidrs(object: &Object) -> Vec<String> {
        let spec = object.as_node().and_then(|n| n.spec.as_ref());
        let mut cidrs = spec.and_then(|s| s.pod_cidrs.clone()).unwrap_or_default();
        if cidrs.is_empty() {
            cidrs.extend(spec.and_then(|s| s.pod_cidr.clone()).filter(|c| !c.is_empty()));
        }
        cidrs
    }
}

impl Reconciler for NodeIpamController {
    fn name(&self) -> &'static str {
        "node-ipam-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "nodes")) => nodes,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        // NewCIDRRangeAllocator: nodes that already have CIDRs occupy them before any allocation.
        let existing: Vec<String> = self.nodes.iter().flat_map(|n| Self::pod_cidrs(n)).collect();
        for cidr in existing {
            self.occupy(&cidr);
        }
        self.queue.add_all(&self.nodes, ctx);
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let object = &change.event.object;
        match change.event.event_type {
            EventType::Deleted => {
                // ReleaseCIDR.
                for cidr in Self::pod_cidrs(object) {
                    self.release(&cidr);
                }
            }
            _ => {
                let cidrs = Self::pod_cidrs(object);
                if cidrs.is_empty() {
                    self.queue.add(key_of(object), ctx);
                } else {
                    for cidr in cidrs {
                        self.occupy(&cidr);
                    }
                }
            }
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let Some(object) = self.nodes.get(key).cloned() else { return Ok(Action::AwaitChange) };
        if !Self::pod_cidrs(&object).is_empty() {
            return Ok(Action::AwaitChange);
        }
        // AllocateOrOccupyCIDR, then updateCIDRsAllocation (a patch of spec.podCIDR(s)).
        let cidr = match self.cidrs.allocate_next().or_else(|_| self.overflow.allocate_next()) {
            Ok(cidr) => cidr,
            Err(_) => {
                ctx.event(&object, "Normal", "CIDRNotAvailable", format!("Node {} status is now: CIDRNotAvailable", object.name()));
                return Ok(Action::AwaitChange);
            }
        };
        let mut node = object.as_node().cloned().expect("a node");
        let spec = node.spec.get_or_insert_with(Default::default);
        spec.pod_cidr = Some(cidr.clone());
        spec.pod_cidrs = Some(vec![cidr.clone()]);
        match ctx.update(Object::Node(Box::new(node))) {
            Ok(updated) => {
                self.nodes.put(updated);
                Ok(Action::AwaitChange)
            }
            Err(err) => {
                // The patch failed: give the block back and retry with backoff.
                self.release(&cidr);
                Err(err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's vectors computed from cidr_set.go's algorithm (cluster 10.244.0.0/16,
    /// mask 24, maxCIDRs 256): allocation in order, a released block reused only after the
    /// cursor wraps, exhaustion.
    #[test]
    fn cidr_set_round_robin() {
        let mut set = CidrSet::new("10.244.0.0/16", 24).unwrap();
        assert_eq!(set.allocate_next().unwrap(), "10.244.0.0/24");
        assert_eq!(set.allocate_next().unwrap(), "10.244.1.0/24");
        assert_eq!(set.allocate_next().unwrap(), "10.244.2.0/24");
        set.release("10.244.0.0/24");
        assert_eq!(set.allocate_next().unwrap(), "10.244.3.0/24", "idx 0 stays free until the wrap");
        for i in 4..=255 {
            assert_eq!(set.allocate_next().unwrap(), format!("10.244.{i}.0/24"));
        }
        assert_eq!(set.allocate_next().unwrap(), "10.244.0.0/24", "wrapped");
        assert_eq!(set.allocate_next().unwrap_err(), "CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range");
    }

    #[test]
    fn occupy_marks_existing_blocks() {
        let mut set = CidrSet::new("10.244.0.0/16", 24).unwrap();
        set.occupy("10.244.0.0/24");
        set.occupy("10.244.1.0/24");
        set.occupy("192.168.0.0/24"); // outside the cluster CIDR: ignored
        assert_eq!(set.allocate_next().unwrap(), "10.244.2.0/24");
        assert_eq!(CidrSet::new("10.244.0.0/16", 8).unwrap_err(), "New CIDR set failed; the node CIDR size is too big");
    }
}
