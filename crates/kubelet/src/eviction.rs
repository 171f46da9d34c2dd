//! The eviction manager (pkg/kubelet/eviction): memory.available = capacity − the working set
//! of running containers; below the hard threshold the node reports MemoryPressure and one pod
//! is evicted per monitoring interval.

use crate::admission::pod_request_milli;
use crate::kubelet::Kubelet;
use crate::pod_worker::WorkerState;
use kubesim_api::k8s_openapi::api::core::v1::PodCondition;
use kubesim_api::object::Object;
use kubesim_api::quantity::parse_milli;
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::server::set_pod_condition;
use kubesim_host::Host;
use kubesim_runtime::Ctx;

/// evictionHard memory.available (bytes).
pub const EVICTION_MEMORY_AVAILABLE_BYTES: i64 = 100 << 20;
/// evictionPressureTransitionPeriod.
pub const EVICTION_PRESSURE_TRANSITION_MS: Millis = 5 * 60_000;

impl Kubelet {
    /// The eviction manager's synchronize (pkg/kubelet/eviction): memory.available = capacity −
    /// working set of running containers; below the hard threshold (100Mi) the node reports
    /// MemoryPressure and one pod is evicted per monitoring interval, ranked by whether its
    /// usage exceeds its request, then priority, then usage above request.
    pub(crate) fn evict_if_under_pressure(&mut self, host: &mut Host, ctx: &mut Ctx) {
        let capacity = match ctx.api.lookup(("", "nodes"), "", &self.setup.name).map(|o| o.as_ref()) {
            Some(Object::Node(node)) => node
                .status
                .as_ref()
                .and_then(|s| s.capacity.as_ref())
                .and_then(|c| c.get("memory"))
                .and_then(|q| parse_milli(&q.0).ok())
                .map(|m| (m / 1000) as i64)
                .unwrap_or(i64::MAX),
            _ => return,
        };
        let usage = host.cri.memory_by_pod();
        let active = || self.workers.iter().filter(|(_, w)| w.active()).filter_map(|(uid, w)| usage.get(uid.as_str()).map(|memory| (uid, w, *memory)));
        let used: i64 = active().map(|(_, _, memory)| memory).sum();
        let available = capacity.saturating_sub(used);
        if available >= EVICTION_MEMORY_AVAILABLE_BYTES {
            return;
        }
        // Under pressure: rank the candidates (the common case, no pressure, builds none).
        let mut candidates: Vec<(bool, i32, i64, String, i64, i64, String)> = active()
            .map(|(uid, worker, memory)| {
                let pod = worker.pod();
                let request = (pod_request_milli(pod, "memory") / 1000) as i64;
                let priority = pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0);
                let container = pod.spec.as_ref().and_then(|s| s.containers.first()).map(|c| c.name.clone()).unwrap_or_default();
                (memory <= request, priority, -(memory - request), uid.clone(), memory, request, container)
            })
            .collect();
        self.memory_pressure_at = Some(ctx.now);
        kubesim_api::sort::sort(&mut candidates);
        let Some((_, _, _, uid, memory, request, container)) = candidates.into_iter().next() else { return };
        let message = format!(
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: {}Ki. Container {container} was using {}Ki, request is {}, has larger consumption of memory. ",
            available.max(0) / 1024,
            memory / 1024,
            if request == 0 { "0".to_string() } else { kubesim_api::quantity::format_bytes(request as i128) }
        );
        let worker = self.workers.get_mut(&uid).expect("candidate exists");
        worker.become_(WorkerState::Terminated);
        let object = worker.pod.clone();
        let ip = worker.ip.clone();
        let sandbox = worker.sandbox.clone();
        if let Some(sandbox) = sandbox {
            let _ = host.cri.stop_pod_sandbox(&sandbox, ctx.now);
            self.release_ip(host, &uid, &sandbox, ip.as_deref(), ctx);
        }
        ctx.event(&object, "Warning", "Evicted", message.clone());
        let mut pod = self.workers[&uid].pod().clone();
        let mut status = self.generate_status(host, &self.workers[&uid], ctx.now, true);
        status.phase = Some("Failed".into());
        status.reason = Some("Evicted".into());
        status.message = Some(message.clone());
        set_pod_condition(
            status.conditions.get_or_insert_with(Vec::new),
            PodCondition {
                type_: "DisruptionTarget".into(),
                status: "True".into(),
                reason: Some("TerminationByKubelet".into()),
                message: Some(message),
                last_transition_time: Some(time_at(ctx.now)),
                ..Default::default()
            },
        );
        pod.status = Some(status);
        let _ = ctx.update_status(Object::Pod(Box::new(pod)));
        self.mark_runtime_changed(host, ctx);
    }
}
