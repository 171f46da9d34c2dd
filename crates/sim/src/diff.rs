//! What differs between two worlds — a fork and the history it branched from ("what if?"):
//! the objects only one of them holds, the fields that differ in the objects both hold, and the
//! events only one of them recorded. Read from the stores alone; objects a fork has not
//! touched are the very same `Arc`s in both, so an unchanged object costs a pointer compare.

use crate::view::{self, ObjectKey};
use crate::world::World;
use kubesim_api::object::Object;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// At most this many differing fields are listed per object.
pub const MAX_FIELDS: usize = 12;
/// A value longer than this is cut (with `…`).
const MAX_VALUE: usize = 80;

/// One field whose value differs.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct FieldChange {
    /// JSON path as people read it: `status.phase`, `spec.containers[0].image`.
    pub path: String,
    /// The value in the first world (`—` when absent).
    pub a: String,
    /// The value in the second world.
    pub b: String,
}

/// An object both worlds hold, with different contents.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ChangedObject {
    /// Which object.
    pub key: ObjectKey,
    /// Its differing fields (at most [`MAX_FIELDS`]).
    pub fields: Vec<FieldChange>,
    /// How many differing fields there are in all.
    pub total: usize,
}

/// An event (by object, type, reason and message) with how often it occurred.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EventLine {
    /// Namespace of the involved object.
    pub namespace: String,
    /// `kind/name` of the involved object.
    pub object: String,
    /// Normal or Warning.
    pub type_: String,
    /// Reason.
    pub reason: String,
    /// Message.
    pub message: String,
    /// Occurrences more than the other world has.
    pub count: i64,
}

/// What differs between two worlds.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct WorldDiff {
    /// Objects only the first world holds (Events aside).
    pub only_a: Vec<ObjectKey>,
    /// Objects only the second world holds.
    pub only_b: Vec<ObjectKey>,
    /// Objects both hold, differently.
    pub changed: Vec<ChangedObject>,
    /// Events the first world recorded more often (or only there).
    pub events_a: Vec<EventLine>,
    /// Events the second world recorded more often.
    pub events_b: Vec<EventLine>,
}

impl WorldDiff {
    /// Nothing differs.
    pub fn is_empty(&self) -> bool {
        self.only_a.is_empty() && self.only_b.is_empty() && self.changed.is_empty() && self.events_a.is_empty() && self.events_b.is_empty()
    }
}

/// Bookkeeping every write changes; never a difference of state.
fn ignored(path: &str) -> bool {
    matches!(path, "metadata.resourceVersion") || path.starts_with("metadata.managedFields")
}

fn show(value: Option<&Value>) -> String {
    let text = match value {
        None => return "—".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    if text.chars().count() > MAX_VALUE {
        format!("{}…", text.chars().take(MAX_VALUE - 1).collect::<String>())
    } else {
        text
    }
}

/// Every leaf of `value` by path (empty objects and arrays are leaves).
fn leaves<'a>(value: &'a Value, path: &mut String, out: &mut BTreeMap<String, &'a Value>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                leaves(child, path, out);
                path.truncate(len);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, child) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                leaves(child, path, out);
                path.truncate(len);
            }
        }
        _ => {
            out.insert(path.clone(), value);
        }
    }
}

/// The fields of two versions of an object that differ, in path order.
pub fn field_changes(a: &Value, b: &Value) -> Vec<FieldChange> {
    let (mut left, mut right) = (BTreeMap::new(), BTreeMap::new());
    leaves(a, &mut String::new(), &mut left);
    leaves(b, &mut String::new(), &mut right);
    let mut paths: Vec<&String> = left.keys().chain(right.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| !ignored(p))
        .filter(|p| left.get(*p) != right.get(*p))
        .map(|p| FieldChange { path: p.clone(), a: show(left.get(p).copied()), b: show(right.get(p).copied()) })
        .collect()
}

fn objects(world: &World) -> BTreeMap<ObjectKey, &Arc<Object>> {
    let store = world.api().store();
    let mut out = BTreeMap::new();
    let mut resources: Vec<_> = store.resources().filter(|r| *r != ("", "events")).collect();
    resources.sort();
    for resource in resources {
        for object in store.list(resource, None) {
            out.insert(ObjectKey::of(object), object);
        }
    }
    out
}

fn event_counts(world: &World) -> BTreeMap<(String, String, String, String, String), i64> {
    let mut out = BTreeMap::new();
    for e in view::events(world) {
        *out.entry((e.namespace, e.object, e.type_, e.reason, e.message)).or_insert(0) += i64::from(e.count);
    }
    out
}

fn event_excess(
    from: &BTreeMap<(String, String, String, String, String), i64>,
    other: &BTreeMap<(String, String, String, String, String), i64>,
) -> Vec<EventLine> {
    from.iter()
        .filter_map(|(key, count)| {
            let excess = count - other.get(key).copied().unwrap_or(0);
            (excess > 0).then(|| EventLine {
                namespace: key.0.clone(),
                object: key.1.clone(),
                type_: key.2.clone(),
                reason: key.3.clone(),
                message: key.4.clone(),
                count: excess,
            })
        })
        .collect()
}

/// What differs between worlds `a` and `b`.
pub fn diff_worlds(a: &World, b: &World) -> WorldDiff {
    let (left, right) = (objects(a), objects(b));
    let mut diff = WorldDiff::default();
    for (key, object) in &left {
        match right.get(key) {
            None => diff.only_a.push(key.clone()),
            Some(other) if Arc::ptr_eq(object, other) => {}
            Some(other) => {
                let fields = field_changes(&object.to_json(), &other.to_json());
                if !fields.is_empty() {
                    let total = fields.len();
                    diff.changed.push(ChangedObject { key: key.clone(), fields: fields.into_iter().take(MAX_FIELDS).collect(), total });
                }
            }
        }
    }
    diff.only_b = right.keys().filter(|k| !left.contains_key(*k)).cloned().collect();
    let (events_a, events_b) = (event_counts(a), event_counts(b));
    diff.events_a = event_excess(&events_a, &events_b);
    diff.events_b = event_excess(&events_b, &events_a);
    diff
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_changes_name_each_leaf_and_skip_bookkeeping() {
        let a = json!({"metadata": {"name": "p", "resourceVersion": "5", "labels": {"app": "web"}}, "spec": {"containers": [{"image": "nginx:1.27"}]}, "status": {"phase": "Running"}});
        let b = json!({"metadata": {"name": "p", "resourceVersion": "9", "labels": {}}, "spec": {"containers": [{"image": "nginx:1.28"}]}, "status": {"phase": "Failed", "reason": "Evicted"}});
        let changes = field_changes(&a, &b);
        let shown: Vec<String> = changes.iter().map(|c| format!("{}: {} → {}", c.path, c.a, c.b)).collect();
        assert_eq!(
            shown,
            [
                "metadata.labels: — → {}",
                "metadata.labels.app: web → —",
                "spec.containers[0].image: nginx:1.27 → nginx:1.28",
                "status.phase: Running → Failed",
                "status.reason: — → Evicted",
            ]
        );
    }
}
