//! The pod garbage collector (pkg/controller/podgc): every 20 s it force-deletes pods bound to
//! nodes that no longer exist (after a 40 s quarantine, marking them Failed with a
//! DisruptionTarget condition first), terminating pods that were never scheduled, terminating
//! pods on NotReady nodes tainted `node.kubernetes.io/out-of-service`, and the oldest terminated
//! pods beyond --terminated-pod-gc-threshold (12500).

use crate::common::*;
use crate::framework::{Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{Pod, PodCondition};
use kubesim_api::object::{kind_info, Object};
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use kubesim_apiserver::DeleteOptions;
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

/// gcCheckPeriod.
pub const GC_CHECK_PERIOD_MS: Millis = 20_000;
/// --terminated-pod-gc-threshold.
pub const TERMINATED_POD_THRESHOLD: usize = 12_500;
/// quarantineTime for pods on missing nodes.
pub const QUARANTINE_MS: Millis = 40_000;

const TOKEN_GC: u64 = 2;

/// The pod garbage collector.
#[derive(Clone, Debug, Default)]
pub struct PodGcController {
    nodes: Cache,
    /// Missing node → first time seen missing.
    missing_since: BTreeMap<String, Millis>,
    threshold: Option<usize>,
}

impl PodGcController {
    /// A collector with the default threshold.
    pub fn new() -> PodGcController {
        PodGcController::default()
    }

    /// A collector with a custom terminated-pod threshold.
    pub fn with_threshold(threshold: usize) -> PodGcController {
        PodGcController { threshold: Some(threshold), ..Default::default() }
    }

    fn force_delete(ctx: &mut Ctx, pod: &Pod) {
        let info = kind_info("v1", "Pod").expect("served");
        let _ = ctx.delete(
            info,
            pod.metadata.namespace.as_deref().unwrap_or(""),
            pod.metadata.name.as_deref().unwrap_or(""),
            DeleteOptions { grace_period_seconds: Some(0), ..Default::default() },
        );
    }

    fn gc(&mut self, ctx: &mut Ctx) {
        // Read from the API server's store: the collector needs every pod only every 20 s.
        let objects: Vec<std::sync::Arc<Object>> = ctx.api.store().list(("", "pods"), None).cloned().collect();
        let pods: Vec<&Pod> = objects.iter().filter_map(|o| o.as_pod()).collect();
        // Terminated pods beyond the threshold, oldest first.
        let threshold = self.threshold.unwrap_or(TERMINATED_POD_THRESHOLD);
        let mut terminated: Vec<&Pod> = pods.iter().copied().filter(|p| is_pod_terminal(p)).collect();
        if terminated.len() > threshold {
            kubesim_api::sort::sort_by_key(&mut terminated, |p| (created_ms(&p.metadata), p.metadata.name.clone()));
            let excess = terminated.len() - threshold;
            for p in terminated.into_iter().take(excess) {
                Self::force_delete(ctx, p);
            }
        }
        // Terminating pods on out-of-service, NotReady nodes.
        for p in pods.iter().filter(|p| p.metadata.deletion_timestamp.is_some() && !pod_node(p).is_empty()) {
            let Some(node) = self.nodes.get_named("", pod_node(p)).and_then(|o| o.as_node()) else { continue };
            let out_of_service = node
                .spec
                .as_ref()
                .and_then(|s| s.taints.as_ref())
                .is_some_and(|t| t.iter().any(|t| t.key == "node.kubernetes.io/out-of-service" && t.effect == "NoExecute"));
            let ready = node
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
                .is_some_and(|c| c.status == "True");
            if out_of_service && !ready {
                Self::force_delete(ctx, p);
            }
        }
        // Orphaned pods (node gone), after the quarantine.
        let now = ctx.now;
        let mut still_missing = BTreeMap::new();
        for p in pods.iter().filter(|p| !pod_node(p).is_empty()) {
            let node = pod_node(p).to_string();
            if self.nodes.get_named("", &node).is_some() {
                continue;
            }
            let since = *self.missing_since.get(&node).unwrap_or(&now);
            still_missing.insert(node.clone(), since);
            if now < since + QUARANTINE_MS || ctx.api.lookup(("", "nodes"), "", &node).is_some() {
                continue;
            }
            if !is_pod_terminal(p) {
                let mut pod = (*p).clone();
                let status = pod.status.get_or_insert_with(Default::default);
                status.phase = Some("Failed".into());
                let conditions = status.conditions.get_or_insert_with(Vec::new);
                conditions.retain(|c| c.type_ != "DisruptionTarget");
                conditions.push(PodCondition {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                    reason: Some("DeletionByPodGC".into()),
                    message: Some("PodGC: node no longer exists".into()),
                    last_transition_time: Some(time_at(now)),
                    ..Default::default()
                });
                let _ = ctx.update_status(Object::Pod(Box::new(pod)));
            }
            Self::force_delete(ctx, p);
        }
        self.missing_since = still_missing;
        // Terminating pods that were never scheduled.
        for p in pods.iter().filter(|p| p.metadata.deletion_timestamp.is_some() && pod_node(p).is_empty()) {
            Self::force_delete(ctx, p);
        }
    }
}

impl Reconciler for PodGcController {
    fn name(&self) -> &'static str {
        "pod-garbage-collector"
    }
    crate::informers! {
        queue: none;
        Informer::all(("", "nodes")) => nodes,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        ctx.after_periodic(GC_CHECK_PERIOD_MS, TOKEN_GC);
    }
    fn changed(&mut self, _change: Change, _ctx: &mut Ctx) {}
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if token == TOKEN_GC {
            self.gc(ctx);
            ctx.after_periodic(GC_CHECK_PERIOD_MS, TOKEN_GC);
        }
    }
}
