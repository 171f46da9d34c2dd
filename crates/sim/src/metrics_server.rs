//! The metrics-server addon: every 15 s it scrapes each reachable node's resource usage
//! (what the kubelet's resource metrics endpoint reports from the host's runtime: the CPU the
//! containers' programs really used, requests they served included), and publishes it as the resource metrics API the HPA
//! controller reads. It skips scraping while no HorizontalPodAutoscaler exists (nothing reads
//! the API then, and 10,000-pod worlds would pay for it); when the first one appears it
//! publishes at once what its last scrape would have found (the usage as of the last 15-s
//! tick), as a metrics-server that never stopped scraping would have it.

use kubesim_api::Millis;
use kubesim_runtime::{Component, Ctx, Interest, PodUsage, WatchEvent, WatchFilter};
use kubesim_store::EventType;
use std::collections::BTreeMap;

/// metrics-server `--metric-resolution`: how often pod usage is scraped (15 s).
pub const METRICS_RESOLUTION_MS: Millis = 15_000;

/// The metrics-server.
#[derive(Clone, Debug, Default)]
pub struct MetricsServer;

impl MetricsServer {
    /// Scrapes every reachable kubelet for the usage at `at` (now, or the last tick).
    fn scrape(&self, ctx: &mut Ctx, at: Millis) {
        if ctx.api.store().count(("autoscaling", "horizontalpodautoscalers")) == 0 {
            return;
        }
        let hosts = ctx.hosts.expect("the metrics-server runs on the control plane");
        let mut pods: BTreeMap<(String, String), PodUsage> = BTreeMap::new();
        for (name, host) in hosts {
            if !host.powered || !ctx.fabric.reaches_control_plane(name) {
                continue; // the scrape of an unreachable kubelet fails
            }
            for pod in ctx.api.store().pods_on_node(name) {
                let uid = pod.metadata().uid.clone().unwrap_or_default();
                if let Some((cpu, memory)) = host.cri.pod_usage(&uid, at) {
                    pods.insert((pod.namespace().to_string(), pod.name().to_string()), PodUsage { cpu_milli: cpu, memory_bytes: memory, timestamp_ms: at });
                }
            }
        }
        ctx.metrics.publish(pods, at);
    }
}

impl Component for MetricsServer {
    fn name(&self) -> &str {
        "metrics-server"
    }
    fn interests(&self) -> Vec<Interest> {
        vec![Interest { resource: ("autoscaling", "horizontalpodautoscalers"), filter: WatchFilter::All }]
    }
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.after_periodic(METRICS_RESOLUTION_MS, 0);
    }
    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        let last_tick = ctx.now - ctx.now % METRICS_RESOLUTION_MS;
        let stale = ctx.metrics.scraped_at().is_none_or(|t| t < last_tick);
        if event.event_type == EventType::Added && stale {
            self.scrape(ctx, last_tick);
        }
    }
    fn on_timer(&mut self, _token: u64, ctx: &mut Ctx) {
        self.scrape(ctx, ctx.now);
        ctx.after_periodic(METRICS_RESOLUTION_MS, 0);
    }
}
