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
pub struct ImageLocality {
    memo: std::cell::RefCell<ImageMemo>,
}

/// Each node's size of an image, remembered by node position with the node's
/// [`NodeInfo::label_generation`] (which changes with the node object) when read: a cycle
/// scores hundreds of nodes for the same one or two images, and reading a slot of one
/// contiguous vector costs far less than looking the image up in each node's own map.
#[derive(Clone, Debug, Default)]
struct ImageMemo {
    /// The images of the pod being scored (the cycle's), and their tables' positions.
    images: Vec<String>,
    current: Vec<usize>,
    /// image → its sizes by node position.
    tables: Vec<(String, NodeSizes)>,
}

/// Per node position: `(node object generation, size)` when read; `None`: not on the node.
type NodeSizes = Vec<(u64, Option<i64>)>;

/// Images kept in the memo before the least recently selected goes.
const MEMO_IMAGES: usize = 64;

impl ImageMemo {
    /// Selects the tables of `images` (making any missing), moving them last: the least
    /// recently selected goes first. At most half the capacity, so none selected is dropped.
    fn select(&mut self, images: &[String]) {
        debug_assert!(images.len() <= MEMO_IMAGES / 2);
        for image in images {
            match self.tables.iter().position(|(name, _)| name == image) {
                Some(i) => {
                    let table = self.tables.remove(i);
                    self.tables.push(table);
                }
                None => {
                    if self.tables.len() >= MEMO_IMAGES {
                        self.tables.remove(0);
                    }
                    self.tables.push((image.clone(), Vec::new()));
                }
            }
        }
        self.current = images.iter().map(|image| self.tables.iter().position(|(name, _)| name == image).expect("just selected")).collect();
        self.images = images.to_vec();
    }

    /// The size of the `k`th selected image (`image`) on `node` among `total` nodes.
    fn size(&mut self, k: usize, image: &str, node: &NodeInfo, total: usize) -> Option<i64> {
        let sizes = &mut self.tables[self.current[k]].1;
        if sizes.len() != total {
            *sizes = vec![(u64::MAX, None); total];
        }
        let Some(slot) = sizes.get_mut(node.index) else {
            return node.images.get(image).copied(); // not one of the view's nodes
        };
        if slot.0 != node.label_generation {
            *slot = (node.label_generation, node.images.get(image).copied());
        }
        debug_assert_eq!(slot.1, node.images.get(image).copied(), "ImageLocality: a stale size of {image} on {}", node.name);
        slot.1
    }
}

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
            // A pod with more images than the memo keeps selected looks them up directly.
            let mut memo = (pod.images.len() <= MEMO_IMAGES / 2).then(|| self.memo.borrow_mut());
            if let Some(memo) = memo.as_deref_mut().filter(|m| m.images != pod.images) {
                memo.select(&pod.images);
            }
            for (k, image) in pod.images.iter().enumerate() {
                let size = match memo.as_deref_mut() {
                    Some(memo) => memo.size(k, image, node, total),
                    None => node.images.get(image).copied(),
                };
                if let Some(size) = size {
                    sum += scaled_image_score(size, view.cache.nodes_with_image(image), total);
                }
            }
        }
        image_score(sum, pod.images.len() as i64)
    }
}
