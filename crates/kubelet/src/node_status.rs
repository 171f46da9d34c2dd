//! Node registration, node status and the node Lease (pkg/kubelet/kubelet_node_status.go,
//! nodelease): the kubelet creates or adopts its Node, reports conditions, addresses, system
//! info and images, and renews its Lease every 10 s; an unchanged status is written every
//! 5 minutes (nodeStatusReportFrequency).

use crate::eviction::EVICTION_PRESSURE_TRANSITION_MS;
use crate::kubelet::{Kubelet, NODE_STATUS_REPORT_MS};
use kubesim_api::k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kubesim_api::k8s_openapi::api::core::v1::{
    ContainerImage, DaemonEndpoint, Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeStatus, NodeSystemInfo,
};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::time::{micro_time_at, time_at};
use kubesim_api::Millis;
use kubesim_host::Host;
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

impl Kubelet {
    pub(crate) fn register_node(&mut self, host: &mut Host, ctx: &mut Ctx) {
        let name = self.setup.name.clone();
        let node_info = kind_info("v1", "Node").expect("nodes are served");
        let existing = ctx.api.get(node_info, "", &name).ok();
        let node: Node = match existing.as_deref() {
            Some(Object::Node(n)) => (**n).clone(),
            _ => match self.setup.register.clone() {
                Some(template) => {
                    let created = ctx.create(Object::Node(Box::new(template)));
                    match created {
                        Ok(o) => o.as_node().cloned().expect("created a node"),
                        Err(_) => return,
                    }
                }
                None => return,
            },
        };
        let status = self.node_status(host, &node, ctx.now, true);
        let mut with_status = node.clone();
        with_status.status = Some(status.clone());
        let _ = ctx.update_status(Object::Node(Box::new(with_status)));
        self.last_node_status = Some(status);
        self.last_node_status_write = ctx.now;
        ctx.event(&Object::Node(Box::new(node.clone())), "Normal", "Starting", "Starting kubelet.".into());
        ctx.event(&Object::Node(Box::new(node.clone())), "Normal", "NodeReady", format!("Node {name} status is now: NodeReady"));
        // The node Lease.
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some("kube-node-lease".into()),
                owner_references: Some(vec![node_owner(&node)]),
                ..Default::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(name.clone()),
                lease_duration_seconds: Some(40),
                renew_time: Some(micro_time_at(ctx.now)),
                ..Default::default()
            }),
        };
        let _ = ctx.create(Object::Lease(Box::new(lease)));
    }

    pub(crate) fn node_status(&self, host: &Host, node: &Node, now: Millis, heartbeat: bool) -> NodeStatus {
        let mut status = node.status.clone().unwrap_or_default();
        if status.allocatable.is_none() {
            status.allocatable = status.capacity.clone();
        }
        let now_time = time_at(now);
        let previous: BTreeMap<String, NodeCondition> = status.conditions.iter().flatten().map(|c| (c.type_.clone(), c.clone())).collect();
        let condition = |type_: &str, value: &str, reason: &str, message: &str| {
            let prev = previous.get(type_);
            let transition = match prev {
                Some(p) if p.status == value => p.last_transition_time.clone(),
                _ => Some(now_time.clone()),
            };
            let heartbeat_time = if heartbeat { Some(now_time.clone()) } else { prev.and_then(|p| p.last_heartbeat_time.clone()) };
            NodeCondition {
                type_: type_.into(),
                status: value.into(),
                reason: Some(reason.into()),
                message: Some(message.into()),
                last_heartbeat_time: heartbeat_time,
                last_transition_time: transition,
            }
        };
        // A Node given with Ready=False stays so (scenario control); otherwise the kubelet is ready.
        let given_not_ready = previous.get("Ready").is_some_and(|c| c.status == "False" && c.reason.as_deref() != Some("KubeletNotReady"));
        status.conditions = Some(vec![
            if self.memory_pressure_at.is_some_and(|at| now.saturating_sub(at) < EVICTION_PRESSURE_TRANSITION_MS) {
                condition("MemoryPressure", "True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available")
            } else {
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available")
            },
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            if given_not_ready { previous["Ready"].clone() } else { condition("Ready", "True", "KubeletReady", "kubelet is posting ready status") },
        ]);
        status.addresses = Some(vec![
            NodeAddress { type_: "InternalIP".into(), address: self.node_ip() },
            NodeAddress { type_: "Hostname".into(), address: self.setup.name.clone() },
        ]);
        status.daemon_endpoints = Some(NodeDaemonEndpoints { kubelet_endpoint: Some(DaemonEndpoint { port: 10250 }) });
        let id = format!("{:032x}", fnv64(&self.setup.name) as u128 * 0x1_0000_0001);
        status.node_info = Some(NodeSystemInfo {
            architecture: node.metadata.labels.as_ref().and_then(|l| l.get("kubernetes.io/arch").cloned()).unwrap_or_else(|| "amd64".into()),
            boot_id: id.clone(),
            container_runtime_version: "containerd://2.1.4".into(),
            kernel_version: "6.8.0-kubesim".into(),
            kube_proxy_version: String::new(),
            kubelet_version: "v1.34.0".into(),
            machine_id: id.clone(),
            operating_system: "linux".into(),
            os_image: "Debian GNU/Linux 12 (bookworm)".into(),
            system_uuid: id,
            ..Default::default()
        });
        let mut images: Vec<ContainerImage> = host
            .cri
            .list_images()
            .into_iter()
            .map(|i| ContainerImage { names: Some(vec![i.digest_ref().to_string(), i.reference().to_string()]), size_bytes: Some(i.size as i64) })
            .collect();
        kubesim_api::sort::sort_by(&mut images, |a, b| b.size_bytes.cmp(&a.size_bytes).then(a.names.cmp(&b.names)));
        images.truncate(50);
        status.images = Some(images);
        // setVolumesInUse (volumesAttached belongs to the attach/detach controller).
        let in_use = self.volumes.volumes_in_use();
        status.volumes_in_use = (!in_use.is_empty()).then_some(in_use);
        status
    }

    pub(crate) fn heartbeat(&mut self, host: &mut Host, ctx: &mut Ctx) {
        self.evict_if_under_pressure(host, ctx);
        let name = self.setup.name.clone();
        // Lease renewal.
        if let Some(Object::Lease(lease)) = ctx.api.lookup(("coordination.k8s.io", "leases"), "kube-node-lease", &name).map(|o| (**o).clone()) {
            let mut lease = *lease;
            if let Some(spec) = lease.spec.as_mut() {
                spec.renew_time = Some(micro_time_at(ctx.now));
            }
            // nodelease's retryUpdateLease: up to maxUpdateRetries (5) attempts, re-reading
            // the Lease after a conflict.
            for _ in 0..5 {
                match ctx.update(Object::Lease(Box::new(lease.clone()))) {
                    Err(e) if e.code == 409 => {
                        let Some(Object::Lease(fresh)) = ctx.api.lookup(("coordination.k8s.io", "leases"), "kube-node-lease", &name).map(|o| (**o).clone())
                        else {
                            break;
                        };
                        lease.metadata.resource_version = fresh.metadata.resource_version.clone();
                    }
                    _ => break,
                }
            }
        }
        // Node status: written when it changed, or every nodeStatusReportFrequency.
        let Some(object) = ctx.api.lookup(("", "nodes"), "", &name).cloned() else { return };
        let Object::Node(node) = object.as_ref() else { return };
        let fresh = self.node_status(host, node, ctx.now, false);
        let changed = self.last_node_status.as_ref().is_none_or(|last| !same_but_heartbeats(last, &fresh));
        if changed || ctx.now.saturating_sub(self.last_node_status_write) >= NODE_STATUS_REPORT_MS {
            let status = self.node_status(host, node, ctx.now, true);
            let mut updated = (**node).clone();
            updated.status = Some(status.clone());
            // PatchNodeStatus: a patch, so no resourceVersion precondition.
            updated.metadata.resource_version = None;
            if ctx.update_status(Object::Node(Box::new(updated))).is_ok() {
                self.volumes.mark_reported_in_use(status.volumes_in_use.as_deref().unwrap_or(&[]));
                self.last_node_status = Some(status);
                self.last_node_status_write = ctx.now;
                self.arm_volume_loop(ctx);
            }
        } else {
            // Unchanged: the volumes the Node lists are reported in use all the same (after a
            // restart or a power loss the volume manager's desired state starts unreported).
            let listed = node.status.as_ref().and_then(|s| s.volumes_in_use.clone()).unwrap_or_default();
            if self.volumes.volumes_in_use().iter().any(|v| listed.contains(v)) {
                self.volumes.mark_reported_in_use(&listed);
                self.arm_volume_loop(ctx);
            }
        }
    }
}

/// Whether two node statuses are equal but for the conditions' heartbeat times and
/// `volumesAttached` (the attach/detach controller's field), compared without copying them.
fn same_but_heartbeats(a: &NodeStatus, b: &NodeStatus) -> bool {
    let NodeStatus {
        addresses,
        allocatable,
        capacity,
        conditions,
        config,
        daemon_endpoints,
        features,
        images,
        node_info,
        phase,
        runtime_handlers,
        volumes_attached: _,
        volumes_in_use,
    } = a;
    let same_conditions = match (conditions, &b.conditions) {
        (Some(x), Some(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| {
                    let NodeCondition { last_heartbeat_time: _, last_transition_time, message, reason, status, type_ } = p;
                    *type_ == q.type_ && *status == q.status && *reason == q.reason && *message == q.message && *last_transition_time == q.last_transition_time
                })
        }
        (x, y) => x.is_none() && y.is_none(),
    };
    same_conditions
        && *addresses == b.addresses
        && *allocatable == b.allocatable
        && *capacity == b.capacity
        && *config == b.config
        && *daemon_endpoints == b.daemon_endpoints
        && *features == b.features
        && *images == b.images
        && *node_info == b.node_info
        && *phase == b.phase
        && *runtime_handlers == b.runtime_handlers
        && *volumes_in_use == b.volumes_in_use
}

fn fnv64(text: &str) -> u64 {
    kubesim_api::hash::fnv64a(text.as_bytes())
}

/// The owner reference the kubelet puts on the objects it creates for its Node (the Lease,
/// the CSINode), so they go with the Node.
pub(crate) fn node_owner(node: &kubesim_api::k8s_openapi::api::core::v1::Node) -> kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
    kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        api_version: "v1".into(),
        kind: "Node".into(),
        name: node.metadata.name.clone().unwrap_or_default(),
        uid: node.metadata.uid.clone().unwrap_or_default(),
        ..Default::default()
    }
}
