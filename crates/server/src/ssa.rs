//! Server-side apply and `metadata.managedFields`, after sigs.k8s.io/structured-merge-diff as
//! kube-apiserver uses it: every write through the server records which manager owns which
//! fields (`FieldsV1`: `f:` fields, `k:` keyed list items, `v:` set members); an apply merges
//! the applied configuration into the live object (associative lists by their merge keys),
//! removes fields its manager applied before and no longer applies (unless another manager
//! owns them), and refuses to change a field another manager owns with a different value
//! (409 Conflict, `FieldManagerConflict` causes) unless `force=true`.
//!
//! Simplifications: ownership is tracked at leaf granularity; fields written by the
//! simulation's own components (controllers, kubelets) are not recorded (they write through
//! the in-process API server, not HTTP), so they never conflict.

use crate::api::{body_value, served_json, Target, Want};
use crate::http::{Request, Response};
use crate::status::Failure;
use crate::Shared;
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_kubectl::reuse as kubectl;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// A field path: segments `f:name`, `k:{"name":"x"}`, `v:"x"`, `.` (the item itself).
pub type Path = Vec<String>;

/// Metadata fields the server owns (never part of a manager's set).
const SERVER_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// The leaf paths a configuration sets (top-level apiVersion/kind and server metadata left out;
/// `status` only for the status subresource).
pub fn fields_of(value: &Value, status: bool) -> BTreeSet<Path> {
    let mut out = BTreeSet::new();
    let Some(map) = value.as_object() else { return out };
    for (key, v) in map {
        match key.as_str() {
            "apiVersion" | "kind" => {}
            "status" if !status => {}
            "metadata" => {
                if let Some(meta) = v.as_object() {
                    for (mk, mv) in meta {
                        if !SERVER_METADATA.contains(&mk.as_str()) {
                            collect(mv, vec!["f:metadata".into(), format!("f:{mk}")], Some("metadata"), mk, &mut out);
                        }
                    }
                }
            }
            _ if status && key != "status" => {}
            _ => collect(v, vec![format!("f:{key}")], None, key, &mut out),
        }
    }
    out
}

fn collect(value: &Value, path: Path, parent: Option<&str>, field: &str, out: &mut BTreeSet<Path>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let mut p = path.clone();
                p.push(format!("f:{k}"));
                collect(v, p, Some(field), k, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            if let Some(key) = kubectl::merge_key(parent, field) {
                if items.iter().all(|i| i.get(key).is_some()) {
                    for item in items {
                        let mut p = path.clone();
                        p.push(format!("k:{}", json!({ key: item[key] })));
                        let mut dot = p.clone();
                        dot.push(".".into());
                        out.insert(dot);
                        if let Some(m) = item.as_object() {
                            for (k, v) in m {
                                let mut q = p.clone();
                                q.push(format!("f:{k}"));
                                collect(v, q, Some(field), k, out);
                            }
                        }
                    }
                    return;
                }
            }
            if field == "finalizers" && items.iter().all(|i| i.is_string()) {
                for item in items {
                    let mut p = path.clone();
                    p.push(format!("v:{item}"));
                    out.insert(p);
                }
                return;
            }
            out.insert(path);
        }
        _ => {
            out.insert(path);
        }
    }
}

fn keyed<'a>(items: &'a [Value], key: &Map<String, Value>) -> Option<&'a Value> {
    items.iter().find(|item| key.iter().all(|(kk, kv)| item.get(kk) == Some(kv)))
}

/// The value at a path (`.` is the item itself).
fn get<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut current = value;
    for seg in path {
        current = if let Some(f) = seg.strip_prefix("f:") {
            current.as_object()?.get(f)?
        } else if let Some(k) = seg.strip_prefix("k:") {
            let key: Map<String, Value> = serde_json::from_str(k).ok()?;
            keyed(current.as_array()?, &key)?
        } else if let Some(v) = seg.strip_prefix("v:") {
            let v: Value = serde_json::from_str(v).ok()?;
            current.as_array()?.iter().find(|item| **item == v)?
        } else {
            current
        };
    }
    Some(current)
}

/// Removes the value at a path (keyed items and set members are taken out of their list).
fn remove(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else { return };
    if last == "." {
        return remove(value, parents);
    }
    let mut current = value;
    for seg in parents {
        let next = if let Some(f) = seg.strip_prefix("f:") {
            current.as_object_mut().and_then(|m| m.get_mut(f))
        } else if let Some(k) = seg.strip_prefix("k:") {
            let Ok(key) = serde_json::from_str::<Map<String, Value>>(k) else { return };
            current.as_array_mut().and_then(|a| a.iter_mut().find(|item| key.iter().all(|(kk, kv)| item.get(kk) == Some(kv))))
        } else {
            None
        };
        match next {
            Some(n) => current = n,
            None => return,
        }
    }
    if let Some(f) = last.strip_prefix("f:") {
        if let Some(m) = current.as_object_mut() {
            m.remove(f);
        }
    } else if let Some(k) = last.strip_prefix("k:") {
        if let (Ok(key), Some(a)) = (serde_json::from_str::<Map<String, Value>>(k), current.as_array_mut()) {
            a.retain(|item| !key.iter().all(|(kk, kv)| item.get(kk) == Some(kv)));
        }
    } else if let Some(v) = last.strip_prefix("v:") {
        if let (Ok(v), Some(a)) = (serde_json::from_str::<Value>(v), current.as_array_mut()) {
            a.retain(|item| *item != v);
        }
    }
}

/// FieldsV1 JSON for a set of paths.
pub fn to_fields_v1(paths: &BTreeSet<Path>) -> Value {
    let mut root = Map::new();
    for path in paths {
        let mut node = &mut root;
        for seg in path {
            node = node.entry(seg.clone()).or_insert_with(|| json!({})).as_object_mut().expect("nodes are objects");
        }
    }
    Value::Object(root)
}

/// The paths of a FieldsV1 JSON (its leaves).
pub fn from_fields_v1(value: &Value) -> BTreeSet<Path> {
    fn walk(v: &Value, path: &mut Path, out: &mut BTreeSet<Path>) {
        match v.as_object() {
            Some(m) if !m.is_empty() => {
                for (k, child) in m {
                    path.push(k.clone());
                    walk(child, path, out);
                    path.pop();
                }
            }
            _ => {
                out.insert(path.clone());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

/// One managedFields entry, decoded.
#[derive(Clone, Debug)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    subresource: Option<String>,
    time: Value,
    fields: BTreeSet<Path>,
}

fn entries(object: &Value) -> Vec<Entry> {
    object
        .pointer("/metadata/managedFields")
        .and_then(|m| m.as_array())
        .into_iter()
        .flatten()
        .map(|e| Entry {
            manager: e.get("manager").and_then(|m| m.as_str()).unwrap_or("").to_string(),
            operation: e.get("operation").and_then(|m| m.as_str()).unwrap_or("Update").to_string(),
            api_version: e.get("apiVersion").and_then(|m| m.as_str()).unwrap_or("").to_string(),
            subresource: e.get("subresource").and_then(|m| m.as_str()).map(str::to_string),
            time: e.get("time").cloned().unwrap_or(Value::Null),
            fields: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
        })
        .collect()
}

fn encode(entries: &[Entry]) -> Value {
    Value::Array(
        entries
            .iter()
            .filter(|e| !e.fields.is_empty())
            .map(|e| {
                let mut v = json!({
                    "manager": e.manager, "operation": e.operation, "apiVersion": e.api_version,
                    "time": e.time, "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(&e.fields),
                });
                if let Some(s) = &e.subresource {
                    v["subresource"] = s.clone().into();
                }
                v
            })
            .collect(),
    )
}

fn set_managed(object: &mut Object, entries: &[Entry]) {
    let encoded = encode(entries);
    let list: Vec<kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry> = serde_json::from_value(encoded).unwrap_or_default();
    object.metadata_mut().managed_fields = if list.is_empty() { None } else { Some(list) };
}

/// Records an Update by `manager` on `object` (the fields that differ from `previous` become
/// the manager's, and no one else's).
pub fn record_update(object: &mut Object, previous: Option<&Object>, manager: &str, now: Millis) {
    if manager.is_empty() {
        return;
    }
    let new = object.to_json();
    let old = previous.map(|p| p.to_json());
    let mut list = entries(old.as_ref().unwrap_or(&new));
    let new_fields = fields_of(&new, false);
    let changed: BTreeSet<Path> = match &old {
        None => new_fields,
        Some(old) => new_fields.into_iter().filter(|p| get(old, p) != get(&new, p)).collect(),
    };
    if changed.is_empty() {
        set_managed(object, &list);
        return;
    }
    for e in list.iter_mut() {
        if e.manager != manager || e.operation != "Update" {
            e.fields.retain(|p| !changed.contains(p));
        }
    }
    let time = serde_json::to_value(kubesim_api::time::time_at(now)).unwrap_or(Value::Null);
    match list.iter_mut().find(|e| e.manager == manager && e.operation == "Update" && e.subresource.is_none()) {
        Some(e) => {
            e.fields.extend(changed);
            e.time = time;
        }
        None => list.push(Entry {
            manager: manager.to_string(),
            operation: "Update".into(),
            api_version: object.api_version().to_string(),
            subresource: None,
            time,
            fields: changed,
        }),
    }
    set_managed(object, &list);
}

/// Whether two objects are equal apart from managedFields (a write that changes nothing else
/// is not committed, as etcd sees no change).
pub fn same_content(a: &Object, b: &Object) -> bool {
    let strip = |o: &Object| {
        let mut v = o.to_json();
        if let Some(m) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            m.remove("managedFields");
            m.remove("resourceVersion");
        }
        v
    };
    strip(a) == strip(b)
}

fn strip_nulls(value: &Value) -> Value {
    match value {
        Value::Object(m) => Value::Object(m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), strip_nulls(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

/// A path as structured-merge-diff prints it in conflicts (`.spec.containers[name="x"].image`).
pub fn render_path(path: &[String]) -> String {
    let mut out = String::new();
    for seg in path {
        if let Some(f) = seg.strip_prefix("f:") {
            out.push('.');
            out.push_str(f);
        } else if let Some(k) = seg.strip_prefix("k:") {
            let key: Map<String, Value> = serde_json::from_str(k).unwrap_or_default();
            let parts: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(v) = seg.strip_prefix("v:") {
            out.push_str(&format!("[{v}]"));
        }
    }
    out
}

/// PATCH with `application/apply-patch+yaml`.
pub fn apply(shared: &Shared, req: &Request, target: &Target, name: &str, want: Want, status: bool) -> Result<Response, Failure> {
    let info = target.info()?;
    let manager =
        req.param("fieldManager").filter(|m| !m.is_empty()).map(str::to_string).ok_or_else(|| {
            Failure::new(422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch")
        })?;
    let force = req.flag("force");
    let dry = matches!(req.params("dryRun").as_slice(), ["All"]);
    let mut applied = body_value(req)?;
    if !applied.is_object() {
        return Err(Failure::bad_request("the applied configuration is not an object"));
    }
    applied = strip_nulls(&applied);
    if applied.pointer("/metadata/name").and_then(|n| n.as_str()).is_some_and(|n| n != name) {
        return Err(Failure::bad_request("the name of the object does not match the name on the URL"));
    }
    if let Some(kind) = applied.get("kind").and_then(|k| k.as_str()) {
        if kind != info.kind {
            return Err(Failure::bad_request(format!("the kind of the applied configuration ({kind}) does not match the resource ({})", info.plural)));
        }
    }
    applied["apiVersion"] = info.api_version.into();
    applied["kind"] = info.kind.into();
    if !applied.get("metadata").is_some_and(|m| m.is_object()) {
        applied["metadata"] = json!({});
    }
    applied["metadata"]["name"] = name.into();
    if !target.ns().is_empty() {
        applied["metadata"]["namespace"] = target.ns().into();
    }
    let applied_fields = fields_of(&applied, status);
    let ns = target.ns();
    let api_version = if target.res.group.is_empty() { target.res.version.to_string() } else { format!("{}/{}", target.res.group, target.res.version) };
    let subresource = status.then(|| "status".to_string());
    let (name, res) = (name.to_string(), target.res);
    let name = name.as_str().to_string();
    let result: Result<(std::sync::Arc<Object>, bool), Failure> = crate::api::write(shared, &crate::api::actor(req), dry, move |api, r| {
        let name = name.as_str();
        let target_res = res;
        let time = serde_json::to_value(kubesim_api::time::time_at(r.now)).unwrap_or(Value::Null);
        let entry = Entry {
            manager: manager.clone(),
            operation: "Apply".into(),
            api_version: api_version.clone(),
            subresource: subresource.clone(),
            time,
            fields: applied_fields.clone(),
        };
        let current = match api.get(info, &ns, name) {
            Ok(c) => c,
            Err(e) if e.code == 404 && !status => {
                let mut object = Object::from_json(info, applied.clone()).map_err(|e| {
                    Failure::bad_request(format!("{} in version {:?} cannot be handled as a {}: {e}", info.kind, target_res.version, info.kind))
                })?;
                set_managed(&mut object, &[entry]);
                let created = api.create(object, r).map_err(|e| Failure::from_api(e, target_res.group, target_res.plural, name))?;
                return Ok((created, true));
            }
            Err(e) => return Err(Failure::from_api(e, target_res.group, target_res.plural, name)),
        };
        let live = current.to_json();
        let mut list = entries(&live);
        // Conflicts: fields another manager owns that this apply would change.
        let mut conflicts: Vec<(String, String, Path)> = Vec::new();
        for path in &applied_fields {
            if get(&live, path).is_none_or(|v| Some(v) == get(&applied, path)) {
                continue;
            }
            for e in list.iter().filter(|e| e.manager != manager) {
                if e.fields.iter().any(|p| p == path || path.starts_with(p)) {
                    conflicts.push((e.manager.clone(), e.api_version.clone(), path.clone()));
                }
            }
        }
        if !conflicts.is_empty() && !force {
            let causes: Vec<Value> = conflicts
                .iter()
                .map(|(m, v, p)| json!({ "reason": "FieldManagerConflict", "message": format!("conflict with {m:?} using {v}"), "field": render_path(p) }))
                .collect();
            let message = if conflicts.len() == 1 {
                let (m, v, p) = &conflicts[0];
                format!("Apply failed with 1 conflict: conflict with {m:?} using {v}: {}", render_path(p))
            } else {
                let lines: Vec<String> = conflicts.iter().map(|(m, v, p)| format!("conflict with {m:?} using {v}: {}", render_path(p))).collect();
                format!("Apply failed with {} conflicts: {}", conflicts.len(), lines.join("\n"))
            };
            return Err(Failure::new(409, "Conflict", message).with_details(json!({ "causes": causes })));
        }
        // Merge, then drop what this manager applied before and no longer applies.
        let mut merged = kubectl::strategic_patch(&live, &applied);
        let previous: BTreeSet<Path> = list
            .iter()
            .filter(|e| e.manager == manager && e.operation == "Apply" && e.subresource == subresource)
            .flat_map(|e| e.fields.iter().cloned())
            .collect();
        for path in previous.difference(&applied_fields) {
            let owned_elsewhere = list.iter().any(|e| e.manager != manager && e.fields.iter().any(|p| p == path || p.starts_with(path)));
            if !owned_elsewhere {
                remove(&mut merged, path);
            }
        }
        for e in list.iter_mut().filter(|e| e.manager != manager) {
            e.fields.retain(|p| !applied_fields.contains(p));
        }
        list.retain(|e| !(e.manager == manager && e.operation == "Apply" && e.subresource == subresource));
        list.push(entry);
        merged["metadata"]["resourceVersion"] = current.resource_version().into();
        let mut object = Object::from_json(info, merged).map_err(|e| Failure::new(422, "Invalid", format!("{} {name:?} is invalid: {e}", info.kind)))?;
        set_managed(&mut object, &list);
        if same_content(&object, &current) && object.metadata().managed_fields == current.metadata().managed_fields {
            return Ok((current, false));
        }
        let updated = if status { api.update_status(object, r) } else { api.update(object, r) };
        Ok((updated.map_err(|e| Failure::from_api(e, target_res.group, target_res.plural, name))?, false))
    });
    let (object, created) = result?;
    let value = served_json(&object, target.res);
    let code = if created { 201 } else { 200 };
    Ok(match want {
        Want::Yaml => Response::typed(code, "application/yaml", serde_yaml::to_string(&value).unwrap_or_default().into_bytes()),
        _ => Response::json(code, &value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fieldsets_key_containers_by_name_and_round_trip() {
        let applied = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "web", "labels": { "app": "web" } },
            "spec": { "replicas": 2, "template": { "spec": { "containers": [{ "name": "nginx", "image": "nginx" }] } } },
        });
        let fields = fields_of(&applied, false);
        let rendered: Vec<String> = fields.iter().map(|p| render_path(p)).collect();
        assert!(rendered.contains(&".spec.template.spec.containers[name=\"nginx\"].image".to_string()), "{rendered:?}");
        assert!(rendered.contains(&".metadata.labels.app".to_string()));
        assert!(!rendered.iter().any(|r| r.contains("metadata.name")));
        assert_eq!(from_fields_v1(&to_fields_v1(&fields)), fields);
        let mut v = applied.clone();
        remove(&mut v, &["f:spec".into(), "f:template".into(), "f:spec".into(), "f:containers".into(), "k:{\"name\":\"nginx\"}".into(), ".".into()]);
        assert_eq!(v.pointer("/spec/template/spec/containers"), Some(&json!([])));
    }
}
