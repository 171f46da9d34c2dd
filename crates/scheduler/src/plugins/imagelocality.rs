//! ImageLocality (Score weight 1) — `plugins/imagelocality`.

use crate::cache::{NodeInfo, PodInfo};
use crate::framework::{ClusterView, CycleState, Plugin, Point, MAX_NODE_SCORE};

const MB: i64 = 1024 * 1024;
/// Below this sum the score is 0.
pub const MIN_THRESHOLD: i64 = 23 * MB;
/// Per-container upper threshold.
pub const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// `calculatePriority`: the 0..100 score for a spread-scaled image size sum.
pub fn image_score(sum: i64, num_containers: i64) -> i64 {
    let max = MAX_CONTAINER_THRESHOLD * num_containers;
    let sum = sum.clamp(MIN_THRESHOLD, max.max(MIN_THRESHOLD));
    if max <= MIN_THRESHOLD {
        return 0;
    }
    MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max - MIN_THRESHOLD)
}

/// `scaledImageScore`: size × (nodes with the image / all nodes).
pub fn scaled_image_score(size: i64, num_nodes: usize, total_nodes: usize) -> i64 {
    let spread = num_nodes as f64 / total_nodes.max(1) as f64;
    (size as f64 * spread) as i64
}

/// The ImageLocality plugin.
#[derive(Clone, Debug, Default)]
pub struct ImageLocality;

impl Plugin for ImageLocality {
    fn name(&self) -> &'static str {
        "ImageLocality"
    }
    fn points(&self) -> &'static [Point] {
        &[Point::Score]
    }
    fn score(&self, _state: &CycleState, pod: &PodInfo, node: &NodeInfo, view: &ClusterView) -> i64 {
        let total = view.nodes().len();
        let mut sum = 0;
        if !node.images.is_empty() {
            for image in &pod.images {
                if let Some(size) = node.images.get(image) {
                    sum += scaled_image_score(*size, view.cache.nodes_with_image(image), total);
                }
            }
        }
        image_score(sum, pod.images.len() as i64)
    }
}
