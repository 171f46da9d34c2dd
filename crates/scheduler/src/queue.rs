//! The scheduling queue (upstream `pkg/scheduler/backend/queue`): activeQ ordered by
//! PrioritySort (priority desc, then queue timestamp), backoffQ (1 s doubling to 10 s,
//! expiries rounded up to the 1-s ordering window), unschedulablePods (moved out by relevant
//! cluster events, or after 5 minutes by the 30-s leftover flush) and gated pods (PreEnqueue).

use crate::cache::PodInfo;
use crate::framework::ClusterEvent;
use kubesim_api::Millis;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Pods stay in unschedulablePods at most this long (DefaultPodMaxInUnschedulablePodsDuration).
pub const MAX_IN_UNSCHEDULABLE_MS: Millis = 5 * 60 * 1000;
/// The leftover flush period.
pub const FLUSH_UNSCHEDULABLE_PERIOD_MS: Millis = 30 * 1000;
/// The backoff ordering window (v1.33+).
pub const BACKOFF_WINDOW_MS: Millis = 1000;

/// Where a known pod is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// Waiting in activeQ.
    Active,
    /// Backing off.
    Backoff,
    /// Parked in unschedulablePods.
    Unschedulable,
    /// Blocked by a PreEnqueue plugin (scheduling gates).
    Gated,
    /// Popped, being scheduled.
    InFlight,
}

/// A pod in the queue (upstream `QueuedPodInfo`).
#[derive(Clone, Debug)]
pub struct QueuedPod {
    /// The pod.
    pub info: Arc<PodInfo>,
    /// Queue timestamp (added, or last failure).
    pub timestamp: Millis,
    /// Scheduling attempts so far.
    pub attempts: u32,
    /// Consecutive unschedulable results.
    pub unschedulable_count: u32,
    /// Consecutive errors.
    pub error_count: u32,
    /// Plugins that rejected it last time.
    pub unschedulable_plugins: BTreeSet<&'static str>,
    /// When it entered unschedulablePods / failed last.
    pub last_failure: Millis,
    /// Where it is.
    pub location: Location,
    seq: u64,
    popped_at_move: u64,
    last_error: bool,
}

/// The scheduling queue.
#[derive(Clone, Debug)]
pub struct SchedulingQueue {
    pods: BTreeMap<String, QueuedPod>,
    active: BTreeSet<(Reverse<i32>, Millis, u64, String)>,
    backoff: BTreeSet<(Millis, u64, String)>,
    unschedulable: BTreeSet<String>,
    seq: u64,
    move_seq: u64,
    counts: [usize; 5],
    /// podInitialBackoffSeconds in ms.
    pub initial_backoff_ms: Millis,
    /// podMaxBackoffSeconds in ms.
    pub max_backoff_ms: Millis,
    /// SchedulerPopFromBackoffQ: pop from backoffQ when activeQ is empty.
    pub pop_from_backoff: bool,
}

impl Default for SchedulingQueue {
    fn default() -> Self {
        SchedulingQueue::new(1000, 10_000)
    }
}

impl SchedulingQueue {
    /// A queue with the given backoff bounds.
    pub fn new(initial_backoff_ms: Millis, max_backoff_ms: Millis) -> SchedulingQueue {
        SchedulingQueue {
            pods: BTreeMap::new(),
            active: BTreeSet::new(),
            backoff: BTreeSet::new(),
            unschedulable: BTreeSet::new(),
            seq: 0,
            move_seq: 0,
            counts: [0; 5],
            initial_backoff_ms,
            max_backoff_ms,
            pop_from_backoff: true,
        }
    }

    /// `backoff(n)`: initial × 2^(n−1) capped at max; 0 for n = 0.
    pub fn backoff_duration(&self, n: u32) -> Millis {
        if n == 0 || self.max_backoff_ms == 0 {
            return 0;
        }
        let mut d = self.initial_backoff_ms;
        for _ in 1..n {
            if d >= self.max_backoff_ms {
                break;
            }
            d = d.saturating_mul(2);
        }
        d.min(self.max_backoff_ms)
    }

    fn backoff_expiry(&self, p: &QueuedPod) -> Millis {
        let n = if p.last_error { p.error_count } else { p.unschedulable_count };
        let d = self.backoff_duration(n);
        if d == 0 {
            return 0;
        }
        let raw = p.last_failure + d;
        raw.div_ceil(BACKOFF_WINDOW_MS) * BACKOFF_WINDOW_MS
    }

    /// A known pod.
    pub fn get(&self, key: &str) -> Option<&QueuedPod> {
        self.pods.get(key)
    }
    /// Number of known pods (every location).
    pub fn len(&self) -> usize {
        self.pods.len()
    }
    /// Whether the queue knows no pods.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }
    /// Number of pods in activeQ.
    pub fn active_len(&self) -> usize {
        self.active.len()
    }
    /// Pods per location.
    pub fn count(&self, location: Location) -> usize {
        self.counts[location as usize]
    }
    /// Pending pods (key, location), in key order.
    pub fn pending(&self) -> impl Iterator<Item = (&str, Location)> {
        self.pods.iter().map(|(k, p)| (k.as_str(), p.location))
    }

    fn unlink(&mut self, key: &str) {
        let Some(p) = self.pods.get(key) else { return };
        self.counts[p.location as usize] -= 1;
        match p.location {
            Location::Active => {
                self.active.remove(&(Reverse(p.info.priority), p.timestamp, p.seq, key.to_string()));
            }
            Location::Backoff => {
                let exp = self.backoff_expiry(p);
                self.backoff.remove(&(exp, p.seq, key.to_string()));
            }
            Location::Unschedulable => {
                self.unschedulable.remove(key);
            }
            _ => {}
        }
    }

    fn place(&mut self, key: &str, location: Location) {
        self.unlink(key);
        self.link(key, location);
    }

    /// Puts an unlinked pod at `location` (the second half of [`SchedulingQueue::place`]).
    fn link(&mut self, key: &str, location: Location) {
        self.seq += 1;
        let seq = self.seq;
        let Some(p) = self.pods.get_mut(key) else { return };
        p.seq = seq;
        p.location = location;
        let p = p.clone();
        self.counts[location as usize] += 1;
        match location {
            Location::Active => {
                self.active.insert((Reverse(p.info.priority), p.timestamp, p.seq, key.to_string()));
            }
            Location::Backoff => {
                let exp = self.backoff_expiry(&p);
                self.backoff.insert((exp, p.seq, key.to_string()));
            }
            Location::Unschedulable => {
                self.unschedulable.insert(key.to_string());
            }
            _ => {}
        }
    }

    /// Adds a new pending pod (gated if a PreEnqueue plugin said so).
    pub fn add(&mut self, info: Arc<PodInfo>, now: Millis, gated: bool) {
        let key = info.key.clone();
        if self.pods.contains_key(&key) {
            self.update(info, now, gated, true);
            return;
        }
        self.pods.insert(
            key.clone(),
            QueuedPod {
                info,
                timestamp: now,
                attempts: 0,
                unschedulable_count: 0,
                error_count: 0,
                unschedulable_plugins: BTreeSet::new(),
                last_failure: now,
                location: Location::Gated,
                seq: 0,
                popped_at_move: 0,
                last_error: false,
            },
        );
        self.counts[Location::Gated as usize] += 1;
        self.place(&key, if gated { Location::Gated } else { Location::Active });
    }

    /// Updates a pending pod. `changed`: the spec/labels changed in a way that may make it
    /// schedulable (it then leaves unschedulablePods).
    pub fn update(&mut self, info: Arc<PodInfo>, now: Millis, gated: bool, changed: bool) {
        let key = info.key.clone();
        let Some(p) = self.pods.get(&key) else {
            self.add(info, now, gated);
            return;
        };
        let location = p.location;
        match location {
            Location::Active | Location::Backoff => {
                // Keep position (priority changes re-sort): unlink under the old priority,
                // link under the new one (unlinking once: the count of the location is kept).
                self.unlink(&key);
                self.pods.get_mut(&key).expect("present").info = info;
                self.link(&key, location);
            }
            Location::InFlight => {
                self.pods.get_mut(&key).expect("present").info = info;
            }
            Location::Gated | Location::Unschedulable => {
                self.pods.get_mut(&key).expect("present").info = info;
                if gated {
                    self.place(&key, Location::Gated);
                } else if changed || location == Location::Gated {
                    let p = self.pods.get(&key).expect("present");
                    let to = if location == Location::Unschedulable && self.backoff_expiry(p) > now { Location::Backoff } else { Location::Active };
                    self.place(&key, to);
                }
            }
        }
    }

    /// Forgets a pod (deleted, bound elsewhere, or handed to another scheduler).
    pub fn delete(&mut self, key: &str) -> Option<QueuedPod> {
        if !self.pods.contains_key(key) {
            return None;
        }
        self.unlink(key);
        self.pods.remove(key)
    }

    /// Moves expired backoff pods to activeQ.
    pub fn flush_backoff(&mut self, now: Millis) {
        while let Some((exp, _, key)) = self.backoff.first().cloned() {
            if exp > now {
                break;
            }
            self.place(&key, Location::Active);
        }
    }

    /// Moves pods parked longer than 5 minutes (flushUnschedulablePodsLeftover).
    pub fn flush_unschedulable_leftover(&mut self, now: Millis) {
        if !self.has_unschedulable() {
            return;
        }
        let stale: Vec<String> = self
            .unschedulable
            .iter()
            .filter(|k| self.pods.get(*k).is_some_and(|p| now.saturating_sub(p.last_failure) > MAX_IN_UNSCHEDULABLE_MS))
            .cloned()
            .collect();
        for key in stale {
            self.requeue_from_unschedulable(&key, now);
        }
    }

    fn requeue_from_unschedulable(&mut self, key: &str, now: Millis) {
        let Some(p) = self.pods.get(key) else { return };
        let to = if self.backoff_expiry(p) > now { Location::Backoff } else { Location::Active };
        self.place(key, to);
    }

    /// The earliest backoff expiry, if any pod backs off.
    pub fn next_backoff_expiry(&self) -> Option<Millis> {
        self.backoff.first().map(|(e, _, _)| *e)
    }

    /// Whether any pod sits in unschedulablePods.
    pub fn has_unschedulable(&self) -> bool {
        self.count(Location::Unschedulable) > 0
    }

    /// Whether `pop` would return a pod.
    pub fn has_poppable(&self) -> bool {
        !self.active.is_empty() || (self.pop_from_backoff && !self.backoff.is_empty())
    }

    /// Pops the next pod to schedule (activeQ head; else, with SchedulerPopFromBackoffQ, the
    /// backoffQ head).
    pub fn pop(&mut self) -> Option<QueuedPod> {
        let key = match self.active.first() {
            Some((_, _, _, key)) => key.clone(),
            None if self.pop_from_backoff => {
                let (_, _, key) = self.backoff.iter().find(|(_, _, k)| self.pods.get(k).is_some_and(|p| !p.last_error))?.clone();
                key
            }
            None => return None,
        };
        self.place(&key, Location::InFlight);
        let move_seq = self.move_seq;
        let p = self.pods.get_mut(&key).expect("present");
        p.attempts += 1;
        p.popped_at_move = move_seq;
        Some(p.clone())
    }

    /// A popped pod failed: unschedulable (with the rejecting plugins) or an error. If a cluster
    /// event arrived while it was in flight it goes to backoffQ instead of unschedulablePods.
    pub fn failed(&mut self, key: &str, plugins: BTreeSet<&'static str>, error: bool, now: Millis) {
        let move_seq = self.move_seq;
        let Some(p) = self.pods.get_mut(key) else { return };
        if p.location != Location::InFlight {
            return;
        }
        p.timestamp = now;
        p.last_failure = now;
        p.last_error = error;
        if error {
            p.error_count += 1;
        } else {
            p.unschedulable_count += 1;
            p.error_count = 0;
        }
        p.unschedulable_plugins = plugins;
        let moved_meanwhile = p.popped_at_move < move_seq;
        let to = if error || moved_meanwhile { Location::Backoff } else { Location::Unschedulable };
        self.place(key, to);
    }

    /// A popped pod was scheduled (or is being bound): forget it.
    pub fn done(&mut self, key: &str) {
        self.delete(key);
    }

    /// A cluster event: moves the unschedulable pods it may help (those rejected by a plugin
    /// registered for it; pods with no recorded plugin move on any event).
    pub fn on_cluster_event(&mut self, event: ClusterEvent, now: Millis, interested: impl Fn(&QueuedPod, ClusterEvent) -> bool) {
        self.move_seq += 1;
        if !self.has_unschedulable() {
            return;
        }
        let keys: Vec<String> = self
            .unschedulable
            .iter()
            .filter(|k| self.pods.get(*k).is_some_and(|p| p.unschedulable_plugins.is_empty() || interested(p, event)))
            .cloned()
            .collect();
        for key in keys {
            self.requeue_from_unschedulable(&key, now);
        }
    }
}
