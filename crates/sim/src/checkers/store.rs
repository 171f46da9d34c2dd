//! Checkers of the API machinery itself: revisions and watch delivery.

use kubesim_api::hash::FixedState;
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::ApiServer;
use kubesim_runtime::{Checker, Interest, WatchEvent, WatchFilter};
use kubesim_store::{Commit, EventType, Resource};
use std::collections::{HashMap, VecDeque};

/// Every commit's revision is greater than the one before (etcd's global revision), and the
/// object it carries has that revision as its `metadata.resourceVersion` (deletes too: the
/// last state carries the deletion's revision).
#[derive(Clone, Debug, Default)]
pub struct ResourceVersionsIncrease {
    last: u64,
}

impl Checker for ResourceVersionsIncrease {
    fn name(&self) -> &str {
        "resource-versions-increase"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let what = || format!("{} {}", commit.object.kind(), super::key(&commit.object));
        let result = if commit.revision <= self.last {
            Err(format!("revision {} of {} follows revision {}", commit.revision, what(), self.last))
        } else if commit.object.resource_version().parse::<u64>().ok() != Some(commit.revision) {
            Err(format!("{} carries resourceVersion {:?} in the commit of revision {}", what(), commit.object.resource_version(), commit.revision))
        } else {
            Ok(())
        };
        self.last = self.last.max(commit.revision);
        result
    }
}

/// How long a selected commit may wait for its delivery before [`WatchesComplete::finish`]
/// calls it lost (deliveries take the watch latency, 2 ms).
pub const DELIVERY_DEADLINE_MS: Millis = 1_000;

#[derive(Clone, Debug, Default)]
struct Watcher {
    name: String,
    /// The store's revision when it registered: deliveries up to it were in flight then and
    /// are accepted in order, without a selection to compare with.
    since: u64,
    /// The last revision delivered.
    last: u64,
    /// The revision it last relisted at: its watches start after it.
    listed_at: u64,
    /// Commits its selection expects, in commit order: (revision, commit time, event type).
    pending: VecDeque<(u64, Millis, EventType)>,
}

/// Every watcher sees every event of its selection, in order, or relists: a watch event is
/// delivered for each commit its interests select (MODIFIED turned into ADDED or DELETED when
/// the object enters or leaves a field selection, as the API server's filtered watches do), in
/// revision order, with the event type the selection implies; a watcher may miss events only
/// if it relists (the runtime's 410 Gone and relist: it started, its host's power came back,
/// its host reconnected, its process restarted) before its next delivery, and it never gets
/// an event its relist already covered (a revision at or below the relist's).
///
/// The selection is computed here from the commits and the watchers' registered interests,
/// not by the runtime's delivery code it checks.
#[derive(Clone, Debug, Default)]
pub struct WatchesComplete {
    /// By watcher (the runtime's component index: dense, so a vector; a delivery and each
    /// watcher a commit concerns look one up).
    watchers: Vec<Option<Watcher>>,
    /// Resource → watchers with a cluster-wide or name-selected interest in it. (Both maps
    /// hashed: looked up for every commit, never walked.)
    by_resource: HashMap<Resource, Vec<(usize, WatchFilter)>, FixedState>,
    /// Node → watchers of the pods bound to it.
    by_node: HashMap<String, Vec<usize>, FixedState>,
}

/// The event a watch reports for a commit, given whether the object was and is selected.
fn expected_event(event_type: EventType, was: bool, now: bool) -> Option<EventType> {
    match (event_type, was, now) {
        (EventType::Deleted, true, _) | (EventType::Deleted, _, true) => Some(EventType::Deleted),
        (EventType::Added, _, true) => Some(EventType::Added),
        (EventType::Modified, true, true) => Some(EventType::Modified),
        (EventType::Modified, false, true) => Some(EventType::Added),
        (EventType::Modified, true, false) => Some(EventType::Deleted),
        _ => None,
    }
}

fn node_of(object: &Object) -> Option<&str> {
    object.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty())
}

impl WatchesComplete {
    fn watcher(&mut self, watcher: usize) -> Option<&mut Watcher> {
        self.watchers.get_mut(watcher)?.as_mut()
    }
    fn expect(&mut self, watcher: usize, commit: &Commit, event: EventType) {
        if let Some(w) = self.watcher(watcher) {
            w.pending.push_back((commit.revision, commit.t_ms, event));
        }
    }
}

impl Checker for WatchesComplete {
    fn name(&self) -> &str {
        "watches-complete"
    }
    fn watches(&mut self, watcher: usize, name: &str, interests: &[Interest], since: u64) {
        if self.watchers.len() <= watcher {
            self.watchers.resize_with(watcher + 1, || None);
        }
        self.watchers[watcher] = Some(Watcher { name: name.to_string(), since, ..Default::default() });
        for interest in interests {
            match &interest.filter {
                WatchFilter::PodsOnNode(node) => self.by_node.entry(node.clone()).or_default().push(watcher),
                filter => self.by_resource.entry(interest.resource).or_default().push((watcher, filter.clone())),
            }
        }
    }
    fn relisted(&mut self, watcher: usize, revision: u64) {
        if let Some(w) = self.watcher(watcher) {
            w.listed_at = w.listed_at.max(revision);
            w.pending.retain(|(r, _, _)| *r > revision);
        }
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let deleted = commit.event_type == EventType::Deleted;
        let selects = |filter: &WatchFilter, object: &Object| match filter {
            WatchFilter::All => true,
            WatchFilter::Named(name) => object.name() == name,
            WatchFilter::PodsOnNode(node) => node_of(object) == Some(node.as_str()),
        };
        let mut expected = Vec::new();
        for (watcher, filter) in self.by_resource.get(&commit.resource).into_iter().flatten() {
            let was = commit.previous.as_deref().is_some_and(|p| selects(filter, p));
            let now = selects(filter, &commit.object);
            if let Some(event) = expected_event(commit.event_type, was, now) {
                expected.push((*watcher, event));
            }
        }
        if commit.resource == ("", "pods") {
            let new_node = node_of(&commit.object);
            let old_node = commit.previous.as_deref().and_then(node_of);
            let mut nodes: Vec<&str> = new_node.into_iter().chain(old_node).collect();
            nodes.dedup();
            for node in nodes {
                let was = old_node == Some(node);
                let now = new_node == Some(node) && !deleted;
                for watcher in self.by_node.get(node).into_iter().flatten() {
                    if let Some(event) = expected_event(commit.event_type, was, now) {
                        expected.push((*watcher, event));
                    }
                }
            }
        }
        kubesim_api::sort::sort_by_key(&mut expected, |(w, _)| *w);
        for (watcher, event) in expected {
            self.expect(watcher, commit, event);
        }
        Ok(())
    }
    fn delivered(&mut self, watcher: usize, event: &WatchEvent, _now: Millis) -> Result<(), String> {
        let Some(w) = self.watcher(watcher) else { return Ok(()) };
        let what = || format!("{} {:?} {} (revision {})", event.event_type.as_str(), event.resource, super::key(&event.object), event.revision);
        if event.revision <= w.listed_at {
            return Err(format!("{} got {} after relisting at revision {}: an event its relist already covered", w.name, what(), w.listed_at));
        }
        if event.revision <= w.last {
            return Err(format!("{} got {} after revision {}: out of order", w.name, what(), w.last));
        }
        w.last = event.revision;
        if event.revision <= w.since {
            return Ok(()); // in flight when it registered
        }
        let mut missed = Vec::new();
        while w.pending.front().is_some_and(|(r, _, _)| *r < event.revision) {
            missed.push(w.pending.pop_front().expect("non-empty").0);
        }
        let result = match w.pending.front() {
            Some((r, _, t)) if *r == event.revision && *t == event.event_type => {
                w.pending.pop_front();
                Ok(())
            }
            Some((r, _, t)) if *r == event.revision => {
                let want = *t;
                w.pending.pop_front();
                Err(format!("{} got {}; its selection implies {}", w.name, what(), want.as_str()))
            }
            _ => Err(format!("{} got {}, which its selection does not include (or a second time, or out of order)", w.name, what())),
        };
        if !missed.is_empty() {
            return Err(format!("{} got {} but never revision(s) {missed:?} of its selection, and did not relist in between", w.name, what()));
        }
        result
    }
    fn finish(&mut self, _api: &ApiServer, now: Millis) -> Result<(), String> {
        let mut lost = Vec::new();
        for w in self.watchers.iter().flatten() {
            if let Some((revision, t, _)) = w.pending.iter().find(|(_, t, _)| *t + DELIVERY_DEADLINE_MS < now) {
                lost.push(format!("{} never got revision {revision} (committed at {t} ms) and never relisted", w.name));
            }
        }
        if lost.is_empty() {
            Ok(())
        } else {
            Err(lost.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The same translation as the API server's filtered watches (cacheWatcher.convertToWatchEvent).
    #[test]
    fn expected_events_follow_the_selection() {
        assert_eq!(expected_event(EventType::Modified, false, true), Some(EventType::Added));
        assert_eq!(expected_event(EventType::Modified, true, false), Some(EventType::Deleted));
        assert_eq!(expected_event(EventType::Modified, false, false), None);
        assert_eq!(expected_event(EventType::Deleted, true, false), Some(EventType::Deleted));
        assert_eq!(expected_event(EventType::Added, false, false), None);
    }
}
