//! Shared plugin helpers: DefaultNormalizeScore (`plugins/helper/normalize_score.go`) and the
//! broken-linear shape function (`plugins/helper/shape_score.go`).

use crate::framework::MAX_NODE_SCORE;

/// Scales scores so the maximum becomes `max_priority`; `reverse` flips them.
pub fn default_normalize_score(max_priority: i64, reverse: bool, scores: &mut [i64]) {
    let max_count = scores.iter().copied().fold(0, i64::max);
    if max_count == 0 {
        if reverse {
            for s in scores.iter_mut() {
                *s = max_priority;
            }
        }
        return;
    }
    for s in scores.iter_mut() {
        let mut v = max_priority * *s / max_count;
        if reverse {
            v = max_priority - v;
        }
        *s = v;
    }
}

/// A point of a broken-linear function: (utilization, score).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapePoint {
    /// Utilization 0..100.
    pub utilization: i64,
    /// Score.
    pub score: i64,
}

/// Evaluates a broken-linear function at `p` (integer math as upstream).
pub fn broken_linear(shape: &[ShapePoint], p: i64) -> i64 {
    for i in 0..shape.len() {
        if p <= shape[i].utilization {
            if i == 0 {
                return shape[0].score;
            }
            let (a, b) = (shape[i - 1], shape[i]);
            return a.score + (b.score - a.score) * (p - a.utilization) / (b.utilization - a.utilization);
        }
    }
    shape.last().map(|s| s.score).unwrap_or(0)
}

/// Clamps a score into [0, MaxNodeScore].
pub fn clamp_score(s: i64) -> i64 {
    s.clamp(0, MAX_NODE_SCORE)
}

/// Memoized per-node counts (e.g. pods matching a spread selector), recomputed only for nodes
/// whose cache generation changed since the last query with the same key. Exact, so it does not
/// change results; it turns PodTopologySpread/InterPodAffinity PreFilter/PreScore from O(pods)
/// into O(nodes) for replicas of one workload. Keeps [`COUNT_CACHE_KEYS`] keys, evicting the
/// least recently used.
#[derive(Debug, Default, Clone)]
pub struct CountCache {
    inner: std::cell::RefCell<CountCacheInner>,
}

#[derive(Debug, Default, Clone)]
struct CountCacheInner {
    tick: u64,
    entries: std::collections::BTreeMap<String, CountEntry>,
}

#[derive(Debug, Default, Clone)]
struct CountEntry {
    /// The tick of the last query (least recently used goes first).
    used: u64,
    /// Per node position: the node generation counted at, and the count.
    per_node: Vec<(u64, i64)>,
    /// The cache generation every slot was last brought up to, when queried with the cache
    /// ([`crate::cache::Cache::changed_since`] then names the nodes to look at).
    synced: Option<u64>,
}

/// Keys kept by a [`CountCache`].
pub const COUNT_CACHE_KEYS: usize = 128;

impl CountCache {
    /// The counts for `key` over `nodes` (in order), computing `f` where needed.
    pub fn counts(&self, key: &str, nodes: &[crate::cache::NodeInfo], f: impl Fn(&crate::cache::NodeInfo) -> i64) -> Vec<i64> {
        self.counts_or_fill(key, nodes, None, f, |_| None)
    }

    /// [`CountCache::counts`], but when recounting the changed nodes would visit `n` pods,
    /// `fill(n)` may answer every node's count at once instead (the same numbers `f` gives,
    /// found another way, e.g. from an index, when that is cheaper). With `cache` (whose nodes
    /// `nodes` must be), only the nodes stamped since the key's last query are looked at,
    /// instead of every node's generation.
    pub fn counts_or_fill(
        &self,
        key: &str,
        nodes: &[crate::cache::NodeInfo],
        cache: Option<&crate::cache::Cache>,
        f: impl Fn(&crate::cache::NodeInfo) -> i64,
        fill: impl FnOnce(usize) -> Option<Vec<i64>>,
    ) -> Vec<i64> {
        debug_assert!(cache.is_none_or(|c| std::ptr::eq(c.nodes(), nodes)), "counts_or_fill: nodes must be the cache's");
        let mut inner = self.inner.borrow_mut();
        inner.tick += 1;
        let tick = inner.tick;
        if !inner.entries.contains_key(key) {
            if inner.entries.len() >= COUNT_CACHE_KEYS {
                let oldest = inner.entries.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    inner.entries.remove(&oldest);
                }
            }
            inner.entries.insert(key.to_string(), CountEntry::default());
        }
        let entry = inner.entries.get_mut(key).expect("just ensured");
        entry.used = tick;
        if entry.per_node.len() != nodes.len() {
            entry.per_node = vec![(u64::MAX, 0); nodes.len()];
            entry.synced = None;
        }
        // The positions to look at: those stamped since the last sync, or all.
        let changed: Option<Vec<usize>> = match (cache, entry.synced) {
            (Some(c), Some(synced)) => c.changed_since(synced).map(|positions| {
                let mut positions: Vec<usize> = positions.collect();
                positions.sort_unstable();
                positions.dedup();
                positions
            }),
            _ => None,
        };
        let synced_now = cache.map(|c| c.generation());
        let per_node = &mut entry.per_node;
        let stale: Vec<usize> = match changed {
            Some(positions) => positions.into_iter().filter(|&i| per_node[i].0 != nodes[i].generation).collect(),
            None => (0..nodes.len()).filter(|&i| per_node[i].0 != nodes[i].generation).collect(),
        };
        let stale_pods: usize = stale.iter().map(|&i| nodes[i].pods.len()).sum();
        if stale_pods > 0 {
            if let Some(counts) = fill(stale_pods).filter(|c| c.len() == nodes.len()) {
                for ((slot, node), count) in per_node.iter_mut().zip(nodes).zip(&counts) {
                    *slot = (node.generation, *count);
                }
                entry.synced = synced_now;
                return counts;
            }
        }
        for i in stale {
            per_node[i] = (nodes[i].generation, f(&nodes[i]));
        }
        entry.synced = synced_now;
        entry.per_node.iter().map(|slot| slot.1).collect()
    }
}

pub use kubesim_api::hash::{FixedState, FxHasher};

/// Counts per topology pair (key → value → count), looked up without allocating. The inner
/// maps are hash maps with fixed keys; nothing iterates them in an order-dependent way
/// ([`PairCounts::values`] feeds only minimum and count computations).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairCounts {
    map: std::collections::BTreeMap<String, std::collections::HashMap<std::sync::Arc<str>, i64, FixedState>>,
}

impl PairCounts {
    /// The count of (key, value) (0 if absent).
    pub fn get(&self, key: &str, value: &str) -> i64 {
        self.map.get(key).and_then(|m| m.get(value)).copied().unwrap_or(0)
    }
    /// Whether (key, value) has an entry (even a zero one).
    pub fn contains(&self, key: &str, value: &str) -> bool {
        self.map.get(key).is_some_and(|m| m.contains_key(value))
    }
    /// Adds `delta` to (key, value), keeping zero entries.
    pub fn add(&mut self, key: &str, value: &str, delta: i64) {
        self.add_with(key, value, || value.into(), delta);
    }
    /// [`PairCounts::add`] with a shared value (a node's label, [`crate::cache::NodeInfo::shared_label`]):
    /// a new entry takes a reference instead of copying the string.
    pub fn add_shared(&mut self, key: &str, value: &std::sync::Arc<str>, delta: i64) {
        self.add_with(key, value, || value.clone(), delta);
    }
    fn add_with(&mut self, key: &str, value: &str, owned: impl FnOnce() -> std::sync::Arc<str>, delta: i64) {
        let inner = match self.map.get_mut(key) {
            Some(m) => m,
            None => self.map.entry(key.to_string()).or_default(),
        };
        match inner.get_mut(value) {
            Some(v) => *v += delta,
            None => {
                inner.insert(owned(), delta);
            }
        }
    }
    /// Adds `delta` to (key, value), dropping the entry when it reaches zero.
    pub fn bump(&mut self, key: &str, value: &str, delta: i64) {
        self.add(key, value, delta);
        self.drop_zero(key, value);
    }
    /// [`PairCounts::bump`] with a shared value.
    pub fn bump_shared(&mut self, key: &str, value: &std::sync::Arc<str>, delta: i64) {
        self.add_shared(key, value, delta);
        self.drop_zero(key, value);
    }
    fn drop_zero(&mut self, key: &str, value: &str) {
        if let Some(inner) = self.map.get_mut(key) {
            if inner.get(value) == Some(&0) {
                inner.remove(value);
            }
            if inner.is_empty() {
                self.map.remove(key);
            }
        }
    }
    /// The values and counts of a key (unordered: use only for order-independent folds).
    pub fn values(&self, key: &str) -> impl Iterator<Item = (&str, i64)> {
        self.map.get(key).into_iter().flatten().map(|(v, c)| (&**v, *c))
    }
    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Per-node topology domain ids for a label key (`u32::MAX` when the node lacks the key),
/// memoized by each node's label generation: turns per-node label lookups into indexing.
#[derive(Debug, Default, Clone)]
pub struct DomainCache {
    inner: std::cell::RefCell<std::collections::BTreeMap<String, DomainEntry>>,
}

#[derive(Debug, Default, Clone)]
struct DomainEntry {
    values: Vec<String>,
    ids: std::collections::HashMap<String, u32, FixedState>,
    per_node: Vec<(u64, u32)>,
    /// The ids last handed out (shared while no node's labels changed).
    last: Option<std::sync::Arc<[u32]>>,
    /// The cache's label epoch `last` was computed at, when asked with one.
    epoch: Option<u64>,
}

/// The id of "no such label".
pub const NO_DOMAIN: u32 = u32::MAX;

impl DomainCache {
    /// Per-node domain ids of `key` over `nodes` (by position), and the number of distinct values.
    /// With the cache's [`crate::cache::Cache::label_epoch`] (when `nodes` are the cache's), an
    /// answer given at the same epoch is handed out again without looking at any node.
    pub fn ids(&self, key: &str, nodes: &[crate::cache::NodeInfo], epoch: Option<u64>) -> (std::sync::Arc<[u32]>, usize) {
        let mut inner = self.inner.borrow_mut();
        if !inner.contains_key(key) {
            inner.insert(key.to_string(), DomainEntry::default());
        }
        let entry = inner.get_mut(key).expect("just ensured");
        if entry.per_node.len() != nodes.len() {
            entry.per_node = vec![(u64::MAX, NO_DOMAIN); nodes.len()];
            entry.last = None;
        }
        if let (Some(last), Some(epoch)) = (&entry.last, epoch) {
            if entry.epoch == Some(epoch) {
                return (last.clone(), entry.values.len());
            }
        }
        entry.epoch = epoch;
        // Label generations are unique across the cache, so unchanged generations mean the
        // same ids: hand out the same slice again.
        if let Some(last) = &entry.last {
            if entry.per_node.iter().zip(nodes).all(|(slot, node)| slot.0 == node.label_generation) {
                return (last.clone(), entry.values.len());
            }
        }
        let mut out = Vec::with_capacity(nodes.len());
        for (slot, node) in entry.per_node.iter_mut().zip(nodes) {
            if slot.0 != node.label_generation {
                let id = match node.labels().and_then(|l| l.get(key)) {
                    None => NO_DOMAIN,
                    Some(v) => match entry.ids.get(v.as_str()) {
                        Some(id) => *id,
                        None => {
                            let id = entry.values.len() as u32;
                            entry.values.push(v.clone());
                            entry.ids.insert(v.clone(), id);
                            id
                        }
                    },
                };
                *slot = (node.label_generation, id);
            }
            out.push(slot.1);
        }
        let out: std::sync::Arc<[u32]> = out.into();
        entry.last = Some(out.clone());
        (out, entry.values.len())
    }
}
