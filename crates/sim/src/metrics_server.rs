//! The metrics-server addon: every 15 s it scrapes each reachable node's resource usage
//! (what the kubelet's resource metrics endpoint reports from the host's runtime: the CPU the
//! containers' programs really used, requests they served included), and publishes it as the resource metrics API the HPA
//! controller reads. It skips scraping while no HorizontalPodAutoscaler exists (nothing reads
//! the API then, and 10,000-pod worlds would pay for it).

use kubesim_api::Millis;
use kubesim_runtime::{Component, Ctx, Interest, PodUsage, WatchEvent};
use std::collections::BTreeMap;

/// metrics-server `--metric-resolution`: how often pod usage is scraped (15 s).
pub const METRICS_RESOLUTION_MS: Millis = 15_000;

/// The metrics-server.
#[derive(Clone, Debug, Default)]
pub struct MetricsServer;

impl MetricsServer {
    fn scrape(&self, ctx: &mut Ctx) {
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
                if let Some((cpu, memory)) = host.cri.pod_usage(&uid, ctx.now) {
                    pods.insert(
                        (pod.namespace().to_string(), pod.name().to_string()),
                        PodUsage { cpu_milli: cpu, memory_bytes: memory, timestamp_ms: ctx.now },
                    );
                }
            }
        }
        ctx.metrics.publish(pods, ctx.now);
    }
}

impl Component for MetricsServer {
    fn name(&self) -> &str {
        "metrics-server"
    }
    fn interests(&self) -> Vec<Interest> {
        Vec::new()
    }
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.after_periodic(METRICS_RESOLUTION_MS, 0);
    }
    fn on_watch(&mut self, _event: &WatchEvent, _ctx: &mut Ctx) {}
    fn on_timer(&mut self, _token: u64, ctx: &mut Ctx) {
        self.scrape(ctx);
        ctx.after_periodic(METRICS_RESOLUTION_MS, 0);
    }
}
