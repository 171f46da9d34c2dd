//! Pod admission on the node (pkg/kubelet/lifecycle predicate): a pod that does not fit the
//! node's allocatable pods, cpu or memory is rejected with the kubelet's reasons.

use crate::pod_worker::PodWorker;
use crate::status::is_terminal;
use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::object::Object;
use kubesim_api::quantity::parse_milli;
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

/// Admits a pod onto the node, or says why not: (reason, message) as the kubelet's Warning
/// event words them.
pub(crate) fn admit(workers: &BTreeMap<String, Box<PodWorker>>, node_name: &str, pod: &Pod, ctx: &Ctx) -> Result<(), (String, String)> {
    let Some(Object::Node(node)) = ctx.api.lookup(("", "nodes"), "", node_name).map(|o| o.as_ref()) else { return Ok(()) };
    let allocatable = node.status.as_ref().and_then(|s| s.allocatable.as_ref());
    let max_pods = allocatable.and_then(|a| a.get("pods")).and_then(|q| parse_milli(&q.0).ok()).map(|m| m / 1000).unwrap_or(110);
    let active: Vec<&PodWorker> = workers.values().map(|w| &**w).filter(|w| w.active() && !is_terminal(w.pod())).collect();
    if active.len() as i128 >= max_pods {
        return Err(("OutOfpods".into(), format!("Node didn't have enough resource: pods, requested: 1, used: {}, capacity: {}", active.len(), max_pods)));
    }
    // Each active pod's requests (each worker remembers its own).
    let requests: Vec<(i64, i64)> = active.iter().map(|w| w.requests()).collect();
    for resource in ["cpu", "memory"] {
        let capacity = match allocatable.and_then(|a| a.get(resource)).and_then(|q| parse_milli(&q.0).ok()) {
            Some(c) => c,
            None => continue,
        };
        let used: i128 = requests.iter().map(|&(cpu, memory)| milli(if resource == "cpu" { cpu } else { memory }, resource)).sum();
        let requested = pod_request_milli(pod, resource);
        if requested > 0 && used + requested > capacity {
            let unit = |m: i128| if resource == "cpu" { m } else { m / 1000 };
            return Err((
                format!("OutOf{resource}"),
                format!("Node didn't have enough resource: {resource}, requested: {}, used: {}, capacity: {}", unit(requested), unit(used), unit(capacity)),
            ));
        }
    }
    Ok(())
}

/// A pod's request for a resource in milli-units (upstream `resourcehelper.PodRequests`: init
/// containers, sidecars, pod-level resources and overhead, as the scheduler computes it).
pub fn pod_request_milli(pod: &Pod, resource: &str) -> i128 {
    milli(kubesim_api::resources::pod_requests(pod).requests.get(resource), resource)
}

/// An amount of `resource` (millicores for cpu, units otherwise) in milli-units.
fn milli(value: i64, resource: &str) -> i128 {
    if resource == kubesim_api::resources::CPU {
        value as i128
    } else {
        value as i128 * 1000
    }
}
