//! The resource metrics API (`metrics.k8s.io`), which the metrics-server serves from memory
//! rather than from etcd: the latest scraped usage of every pod. The metrics-server component
//! writes it; the HPA controller (and anything else reading the resource metrics API) reads it
//! through its `Ctx`.

use kubesim_api::Millis;
use std::collections::BTreeMap;

/// One pod's usage as the last scrape saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodUsage {
    /// CPU in millicores.
    pub cpu_milli: i64,
    /// Memory (working set) in bytes.
    pub memory_bytes: i64,
    /// When it was scraped.
    pub timestamp_ms: Millis,
}

/// The served metrics.
#[derive(Clone, Debug, Default)]
pub struct ResourceMetrics {
    pods: BTreeMap<(String, String), PodUsage>,
    scraped_at: Option<Millis>,
}

impl ResourceMetrics {
    /// Whether a metrics-server has published a scrape (before that the API has nothing).
    pub fn served(&self) -> bool {
        self.scraped_at.is_some()
    }

    /// A pod's usage (namespace, name), if the last scrape saw it.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<PodUsage> {
        self.pods.get(&(namespace.to_string(), name.to_string())).copied()
    }

    /// Replaces the served metrics with a new scrape.
    pub fn publish(&mut self, pods: BTreeMap<(String, String), PodUsage>, now: Millis) {
        self.pods = pods;
        self.scraped_at = Some(now);
    }

    /// When the last scrape was published.
    pub fn scraped_at(&self) -> Option<Millis> {
        self.scraped_at
    }
}
