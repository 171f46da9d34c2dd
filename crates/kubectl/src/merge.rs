//! JSON merging: the three-way strategic merge of client-side apply
//! (apimachinery/pkg/util/strategicpatch CreateThreeWayMergePatch + StrategicMergePatch, computed
//! directly as its result), strategic merge patches, JSON merge patches (RFC 7386) and JSON
//! patches (RFC 6902).
//!
//! Lists are merged by their `patchMergeKey` as declared in k8s.io/api (containers and env by
//! name, container ports by containerPort, service ports by port, ...); every other list is
//! atomic and replaced whole, as upstream does.

use serde_json::{Map, Value};

/// The patchMergeKey of the list field `field`, whose containing object was reached through
/// `parent` (the previous map key on the path; list elements add no key).
pub fn merge_key(parent: Option<&str>, field: &str) -> Option<&'static str> {
    Some(match field {
        "containers" | "initContainers" | "ephemeralContainers" => "name",
        "ports" => match parent {
            Some("containers" | "initContainers" | "ephemeralContainers") => "containerPort",
            Some("spec") => "port",
            _ => return None,
        },
        "env" | "volumes" | "imagePullSecrets" | "resourceClaims" | "schedulingGates" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "hostAliases" => "ip",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "topologySpreadConstraints" => "topologyKey",
        "taints" => "key",
        "addresses" => "type",
        _ => return None,
    })
}

fn keyed_items<'a>(items: &'a [Value], key: &str) -> Option<Vec<(&'a Value, &'a Value)>> {
    items.iter().map(|item| item.as_object().and_then(|m| m.get(key)).map(|k| (k, item))).collect()
}

/// The object client-side apply leaves on the server: `current` with the changes from
/// `original` (the last applied configuration) to `modified` (the new configuration).
/// Fields the user never set (server defaults, other writers' fields) are kept; fields the
/// user set before and has now removed are deleted.
pub fn three_way(original: Option<&Value>, modified: &Value, current: Option<&Value>) -> Value {
    merge3(original, modified, current, None, None)
}

fn merge3(original: Option<&Value>, modified: &Value, current: Option<&Value>, parent: Option<&str>, field: Option<&str>) -> Value {
    match (modified, current) {
        (Value::Object(m), Some(Value::Object(c))) => {
            let o = original.and_then(|o| o.as_object());
            let mut result = c.clone();
            for (key, mv) in m {
                if mv.is_null() {
                    result.remove(key);
                    continue;
                }
                let merged = merge3(o.and_then(|o| o.get(key)), mv, c.get(key), field, Some(key));
                result.insert(key.clone(), merged);
            }
            if let Some(o) = o {
                for key in o.keys() {
                    if !m.contains_key(key) {
                        result.remove(key);
                    }
                }
            }
            Value::Object(result)
        }
        (Value::Array(m), Some(Value::Array(c))) => {
            let key = field.and_then(|f| merge_key(parent, f));
            let Some(key) = key else { return modified.clone() };
            let (Some(mk), Some(ck)) = (keyed_items(m, key), keyed_items(c, key)) else { return modified.clone() };
            let ok: Vec<(&Value, &Value)> = original.and_then(|o| o.as_array()).and_then(|o| keyed_items(o, key)).unwrap_or_default();
            let mut result = Vec::new();
            for (k, item) in &mk {
                let cur = ck.iter().find(|(ck, _)| ck == k).map(|(_, v)| *v);
                let orig = ok.iter().find(|(ok, _)| ok == k).map(|(_, v)| *v);
                result.push(merge3(orig, item, cur, field, field));
            }
            let mut server_only = Vec::new();
            for (k, item) in &ck {
                let in_modified = mk.iter().any(|(mk, _)| mk == k);
                let in_original = ok.iter().any(|(ok, _)| ok == k);
                if !in_modified && !in_original {
                    server_only.push((*item).clone());
                }
            }
            // The apply patch carries $setElementOrder (the manifest's order); the server merges
            // its own items in by their place in the live list (mergeSortedSlice).
            let same = |a: &Value, b: &Value| a.get(key).is_some() && a.get(key) == b.get(key);
            Value::Array(merge_sorted_slice(server_only, result, c, &same))
        }
        _ => modified.clone(),
    }
}

/// Applies a strategic merge patch (`kubectl patch --type strategic`) as apimachinery's
/// strategicpatch.StrategicMergePatch does: maps merge recursively (`null` deletes a field),
/// lists with a patchMergeKey merge by key, other lists are replaced; the directives
/// `$patch: replace|delete|merge` (on maps and keyed list items), `$retainKeys` (keys not listed
/// are cleared from the target), `$setElementOrder/FIELD` (the merged list's order) and
/// `$deleteFromPrimitiveList/FIELD` are honoured; `finalizers` merges as a set (its
/// patchStrategy is merge).
pub fn strategic_patch(target: &Value, patch: &Value) -> Value {
    smp(target, patch, None, None)
}

fn smp(target: &Value, patch: &Value, parent: Option<&str>, field: Option<&str>) -> Value {
    match patch {
        Value::Object(p) => {
            match p.get("$patch").and_then(|v| v.as_str()) {
                Some("replace") => return strip_directives(patch),
                Some("delete") => return Value::Object(Map::new()),
                _ => {}
            }
            let mut result = target.as_object().cloned().unwrap_or_default();
            // $retainKeys: the target keeps only the listed keys (then the patch merges in).
            if let Some(retain) = p.get("$retainKeys").and_then(|v| v.as_array()) {
                let keep: Vec<&str> = retain.iter().filter_map(|k| k.as_str()).collect();
                result.retain(|k, _| keep.contains(&k.as_str()));
            }
            for (key, pv) in p {
                if let Some(list_field) = key.strip_prefix("$deleteFromPrimitiveList/") {
                    if let (Some(Value::Array(items)), Some(remove)) = (result.get_mut(list_field), pv.as_array()) {
                        items.retain(|i| !remove.contains(i));
                    }
                    continue;
                }
                if key.starts_with('$') {
                    continue;
                }
                if pv.is_null() {
                    result.remove(key);
                    continue;
                }
                if pv.get("$patch").and_then(|v| v.as_str()) == Some("delete") && pv.is_object() {
                    result.remove(key);
                    continue;
                }
                let merged = match result.get(key) {
                    Some(Value::Array(t)) if key == "finalizers" => {
                        // A merge-strategy primitive list: the union, ordered as
                        // normalizeElementOrder orders it (patch items, server-only items merged in).
                        let patch_items: Vec<Value> = pv.as_array().cloned().unwrap_or_default();
                        let server_only: Vec<Value> = t.iter().filter(|i| !patch_items.contains(i)).cloned().collect();
                        Value::Array(merge_sorted_slice(server_only, patch_items, t, &|a, b| a == b))
                    }
                    Some(tv) => smp(tv, pv, field, Some(key)),
                    None => smp(&Value::Null, pv, field, Some(key)),
                };
                result.insert(key.clone(), merged);
            }
            // $setElementOrder/FIELD: the merged keyed list follows the given order; items the
            // order does not mention (the server's own) keep their relative order after them.
            // (mergePatchIntoOriginal: the items the order names, in its order, with the
            // server-only items merged in by the original list's order.)
            for (key, order) in p {
                let Some(list_field) = key.strip_prefix("$setElementOrder/") else { continue };
                let Some(merge_key) = merge_key(field, list_field) else { continue };
                let original: Vec<Value> = target.get(list_field).and_then(|v| v.as_array()).cloned().unwrap_or_default();
                let (Some(Value::Array(items)), Some(order)) = (result.get_mut(list_field), order.as_array()) else { continue };
                let same = |a: &Value, b: &Value| a.get(merge_key).is_some() && a.get(merge_key) == b.get(merge_key);
                let (patch_items, server_only): (Vec<Value>, Vec<Value>) = items.drain(..).partition(|i| order.iter().any(|o| same(o, i)));
                let patch_items = normalize_slice_order(patch_items, order, &same);
                items.extend(merge_sorted_slice(server_only, patch_items, &original, &same));
            }
            Value::Object(result)
        }
        Value::Array(items) => {
            let key = field.and_then(|f| merge_key(parent, f));
            let Some(key) = key else { return strip_directives(patch) };
            let empty = Vec::new();
            let target_items = target.as_array().unwrap_or(&empty);
            if items.iter().any(|i| i.get("$patch").and_then(|v| v.as_str()) == Some("replace")) {
                return Value::Array(items.iter().filter(|i| i.get("$patch").is_none()).map(strip_directives).collect());
            }
            let mut result: Vec<Value> = target_items.clone();
            for item in items {
                let Some(k) = item.get(key) else {
                    result.push(strip_directives(item));
                    continue;
                };
                let position = result.iter().position(|t| t.get(key) == Some(k));
                let delete = item.get("$patch").and_then(|v| v.as_str()) == Some("delete");
                match (position, delete) {
                    (Some(i), true) => {
                        result.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => result[i] = smp(&result[i], item, field, field),
                    (None, false) => result.push(strip_directives(item)),
                }
            }
            // mergeSlice → normalizeElementOrder: the patch's items in the patch's order, the
            // server-only items merged in by their order in the original (mergeSortedSlice),
            // so items new to the list come first.
            let same = |a: &Value, b: &Value| a.get(key).is_some() && a.get(key) == b.get(key);
            let (patch_items, server_only): (Vec<Value>, Vec<Value>) = result.into_iter().partition(|r| items.iter().any(|i| same(i, r)));
            let patch_items = normalize_slice_order(patch_items, items, &same);
            Value::Array(merge_sorted_slice(server_only, patch_items, target_items, &same))
        }
        other => other.clone(),
    }
}

/// strategicpatch normalizeSliceOrder: a stable sort by position in `order`.
fn normalize_slice_order(mut items: Vec<Value>, order: &[Value], same: &dyn Fn(&Value, &Value) -> bool) -> Vec<Value> {
    let index = |v: &Value| order.iter().position(|o| same(o, v)).unwrap_or(usize::MAX);
    kubesim_api::sort::sort_by_key(&mut items, |v| index(v));
    items
}

/// strategicpatch mergeSortedSlice: inserts the server-only items (`left`) into the patch items
/// (`right`): a left item goes first only when both are in the server's order and it is earlier.
fn merge_sorted_slice(left: Vec<Value>, right: Vec<Value>, server_order: &[Value], same: &dyn Fn(&Value, &Value) -> bool) -> Vec<Value> {
    let index = |v: &Value| server_order.iter().position(|o| same(o, v));
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(left.len() + right.len());
    while i < left.len() || j < right.len() {
        if i >= left.len() {
            out.push(right[j].clone());
            j += 1;
        } else if j >= right.len() {
            out.push(left[i].clone());
            i += 1;
        } else {
            match (index(&left[i]), index(&right[j])) {
                (Some(li), Some(ri)) if li < ri => {
                    out.push(left[i].clone());
                    i += 1;
                }
                _ => {
                    out.push(right[j].clone());
                    j += 1;
                }
            }
        }
    }
    out
}

fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            Value::Object(m.iter().filter(|(k, v)| !k.starts_with('$') && !v.is_null()).map(|(k, v)| (k.clone(), strip_directives(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

/// Applies an RFC 7386 JSON merge patch.
pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    match patch {
        Value::Object(p) => {
            let mut result = target.as_object().cloned().unwrap_or_default();
            for (key, pv) in p {
                if pv.is_null() {
                    result.remove(key);
                } else {
                    let merged = merge_patch(result.get(key).unwrap_or(&Value::Null), pv);
                    result.insert(key.clone(), merged);
                }
            }
            Value::Object(result)
        }
        other => other.clone(),
    }
}

/// The JSON merge patch that turns `from` into `to` (used to show what apply sends).
pub fn diff(from: &Value, to: &Value) -> Value {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            let mut patch = Map::new();
            for (key, bv) in b {
                match a.get(key) {
                    Some(av) if av == bv => {}
                    Some(av) if av.is_object() && bv.is_object() => {
                        patch.insert(key.clone(), diff(av, bv));
                    }
                    _ => {
                        patch.insert(key.clone(), bv.clone());
                    }
                }
            }
            for key in a.keys() {
                if !b.contains_key(key) {
                    patch.insert(key.clone(), Value::Null);
                }
            }
            Value::Object(patch)
        }
        _ => to.clone(),
    }
}

/// Applies an RFC 6902 JSON patch (add, remove, replace, move, copy, test).
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, String> {
    let ops = patch.as_array().ok_or("json: cannot unmarshal object into Go value of type jsonpatch.Patch")?;
    let mut doc = target.clone();
    for op in ops {
        let kind = op.get("op").and_then(|v| v.as_str()).ok_or("Unexpected kind: missing op")?;
        let path = op.get("path").and_then(|v| v.as_str()).ok_or_else(|| format!("operation missing path: {op}"))?;
        match kind {
            "add" => {
                let value = op.get("value").cloned().ok_or("missing value")?;
                add(&mut doc, path, value)?;
            }
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                let value = op.get("value").cloned().ok_or("missing value")?;
                remove(&mut doc, path)?;
                add(&mut doc, path, value)?;
            }
            "move" | "copy" => {
                let from = op.get("from").and_then(|v| v.as_str()).ok_or("missing from")?;
                let value = doc.pointer(from).cloned().ok_or_else(|| format!("{kind} operation does not apply: doc is missing from path: {from}"))?;
                if kind == "move" {
                    remove(&mut doc, from)?;
                }
                add(&mut doc, path, value)?;
            }
            "test" => {
                let value = op.get("value").ok_or("missing value")?;
                if doc.pointer(path) != Some(value) {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(doc)
}

fn split_pointer(path: &str) -> Result<(String, String), String> {
    let idx = path.rfind('/').ok_or_else(|| format!("invalid JSON pointer {path:?}"))?;
    let last = path[idx + 1..].replace("~1", "/").replace("~0", "~");
    Ok((path[..idx].to_string(), last))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split_pointer(path)?;
    let target = doc.pointer_mut(&parent).ok_or_else(|| format!("add operation does not apply: doc is missing path: \"{path}\""))?;
    match target {
        Value::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        Value::Array(items) => {
            let index = if last == "-" { items.len() } else { last.parse::<usize>().map_err(|_| format!("invalid array index {last:?}"))? };
            if index > items.len() {
                return Err(format!("add operation does not apply: doc is missing path: \"{path}\""));
            }
            items.insert(index, value);
            Ok(())
        }
        _ => Err(format!("add operation does not apply: doc is missing path: \"{path}\"")),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<(), String> {
    let (parent, last) = split_pointer(path)?;
    let missing = || format!("remove operation does not apply: doc is missing path: \"{path}\"");
    match doc.pointer_mut(&parent).ok_or_else(missing)? {
        Value::Object(m) => m.remove(&last).map(|_| ()).ok_or_else(missing),
        Value::Array(items) => {
            let index = last.parse::<usize>().map_err(|_| missing())?;
            if index >= items.len() {
                return Err(missing());
            }
            items.remove(index);
            Ok(())
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Mirrors apimachinery/pkg/util/strategicpatch/patch_test.go (three-way merge cases:
    // keep server-set fields, delete fields removed from the config, merge lists by key).
    #[test]
    fn three_way_merge_keeps_server_fields_and_drops_removed_ones() {
        let original = json!({"spec": {"replicas": 2, "paused": false, "template": {"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y"}]}}}});
        let modified = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "a", "image": "x:2"}]}}}});
        let current = json!({"spec": {"replicas": 2, "paused": false, "strategy": {"type": "RollingUpdate"}, "template": {"spec": {"containers": [
            {"name": "a", "image": "x:1", "imagePullPolicy": "IfNotPresent"},
            {"name": "b", "image": "y"},
            {"name": "sidecar", "image": "z"}]}}}});
        let result = three_way(Some(&original), &modified, Some(&current));
        assert_eq!(
            result,
            json!({"spec": {"replicas": 3, "strategy": {"type": "RollingUpdate"}, "template": {"spec": {"containers": [
            {"name": "a", "image": "x:2", "imagePullPolicy": "IfNotPresent"},
            {"name": "sidecar", "image": "z"}]}}}})
        );
    }

    /// strategicpatch normalizeElementOrder / mergeSortedSlice: patch items in the patch's order,
    /// server-only items merged in where the live list had them (outputs of kubectl v1.32
    /// `patch --local` on the same objects).
    #[test]
    fn merged_lists_follow_merge_sorted_slice() {
        let target = json!({"spec": {"containers": [{"name": "nginx"}, {"name": "side"}]}});
        let names = |v: &Value| v["spec"]["containers"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(names(&strategic_patch(&target, &json!({"spec": {"containers": [{"name": "new"}]}}))), ["new", "nginx", "side"]);
        assert_eq!(
            names(&strategic_patch(&target, &json!({"spec": {"containers": [{"name": "side"}, {"name": "z"}, {"name": "nginx"}]}}))),
            ["side", "z", "nginx"]
        );
        let patch = json!({"spec": {"$setElementOrder/containers": [{"name": "x"}, {"name": "nginx"}], "containers": [{"name": "x"}]}});
        assert_eq!(names(&strategic_patch(&target, &patch)), ["x", "nginx", "side"]);
        // Apply: a server-only item keeps its place before the manifest's items.
        let current = json!({"spec": {"containers": [{"name": "injected"}, {"name": "app"}]}});
        let modified = json!({"spec": {"containers": [{"name": "app", "image": "v2"}]}});
        assert_eq!(names(&three_way(Some(&json!({"spec": {"containers": [{"name": "app"}]}})), &modified, Some(&current))), ["injected", "app"]);
    }

    // Mirrors apimachinery/pkg/util/strategicpatch/patch_test.go (the $retainKeys,
    // $patch: replace|delete, $setElementOrder and $deleteFromPrimitiveList cases) and the docs
    // page tasks/manage-kubernetes-objects/update-api-object-kubectl-patch (retainkeys-demo).
    #[test]
    fn strategic_patch_directives() {
        // retainKeys: switching a Deployment to Recreate drops rollingUpdate.
        let target = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}, "replicas": 2}});
        let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
        assert_eq!(strategic_patch(&target, &patch), json!({"spec": {"strategy": {"type": "Recreate"}, "replicas": 2}}));
        // retainKeys keeps listed keys the patch does not set.
        let target = json!({"a": {"x": 1, "y": 2, "z": 3}});
        assert_eq!(strategic_patch(&target, &json!({"a": {"$retainKeys": ["x", "y"], "y": 5}})), json!({"a": {"x": 1, "y": 5}}));
        // $patch: replace on a map replaces it whole; $patch: delete removes it.
        let target = json!({"spec": {"selector": {"a": "1", "b": "2"}, "other": {"k": "v"}}});
        let patch = json!({"spec": {"selector": {"$patch": "replace", "c": "3"}, "other": {"$patch": "delete"}}});
        assert_eq!(strategic_patch(&target, &patch), json!({"spec": {"selector": {"c": "3"}}}));
        // $patch: delete / replace in keyed lists.
        let target = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
        let patch = json!({"spec": {"containers": [{"name": "a", "$patch": "delete"}]}});
        assert_eq!(strategic_patch(&target, &patch), json!({"spec": {"containers": [{"name": "b", "image": "y"}]}}));
        let patch = json!({"spec": {"containers": [{"name": "c", "image": "z"}, {"$patch": "replace"}]}});
        assert_eq!(strategic_patch(&target, &patch), json!({"spec": {"containers": [{"name": "c", "image": "z"}]}}));
        // $setElementOrder orders the merged list.
        let patch =
            json!({"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}], "containers": [{"name": "c", "image": "z"}]}});
        assert_eq!(
            strategic_patch(&target, &patch),
            json!({"spec": {"containers": [{"name": "c", "image": "z"}, {"name": "b", "image": "y"}, {"name": "a", "image": "x"}]}})
        );
        // Keyed merge with nulls deleting fields of an item; finalizers merge as a set.
        let patch = json!({"spec": {"containers": [{"name": "a", "image": null, "args": ["1"]}]}, "metadata": {"finalizers": ["x", "y"]}});
        let target = json!({"metadata": {"finalizers": ["y", "z"]}, "spec": {"containers": [{"name": "a", "image": "x"}]}});
        assert_eq!(
            strategic_patch(&target, &patch),
            // normalizeElementOrder: patch items (x, y) with the server-only z merged in after y.
            json!({"metadata": {"finalizers": ["x", "y", "z"]}, "spec": {"containers": [{"name": "a", "args": ["1"]}]}})
        );
        let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["z"]}});
        assert_eq!(strategic_patch(&target, &patch)["metadata"], json!({"finalizers": ["y"]}));
        // The docs' patch-file.yaml: a second container merged into the list by name.
        let target = json!({"spec": {"template": {"spec": {"containers": [{"name": "patch-demo-ctr", "image": "nginx"}], "tolerations": [{"effect": "NoSchedule", "key": "dedicated", "value": "test-team"}]}}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "patch-demo-ctr-2", "image": "redis"}]}}}});
        assert_eq!(
            strategic_patch(&target, &patch)["spec"]["template"]["spec"]["containers"],
            // As the page shows (and mergeSortedSlice orders): the new container first.
            json!([{"name": "patch-demo-ctr-2", "image": "redis"}, {"name": "patch-demo-ctr", "image": "nginx"}])
        );
    }

    #[test]
    fn atomic_lists_are_replaced() {
        let current = json!({"spec": {"containers": [{"name": "a", "args": ["1", "2"], "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}});
        let modified = json!({"spec": {"containers": [{"name": "a", "args": ["3"], "ports": [{"containerPort": 80}, {"containerPort": 443}]}]}});
        let result = three_way(None, &modified, Some(&current));
        assert_eq!(result["spec"]["containers"][0]["args"], json!(["3"]));
        assert_eq!(result["spec"]["containers"][0]["ports"], json!([{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}]));
    }

    // Mirrors strategicpatch/patch_test.go ($patch: delete in merge-keyed lists).
    #[test]
    fn strategic_patches_merge_by_key_and_honour_delete() {
        let target = json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}});
        let patch = json!({"spec": {"containers": [{"name": "b", "image": "3"}, {"name": "a", "$patch": "delete"}, {"name": "c", "image": "4"}]}});
        assert_eq!(strategic_patch(&target, &patch), json!({"spec": {"containers": [{"name": "b", "image": "3"}, {"name": "c", "image": "4"}]}}));
    }

    // Mirrors the RFC 7386 appendix examples.
    #[test]
    fn merge_patch_follows_rfc7386() {
        assert_eq!(merge_patch(&json!({"a": "b"}), &json!({"a": "c"})), json!({"a": "c"}));
        assert_eq!(merge_patch(&json!({"a": "b"}), &json!({"a": null})), json!({}));
        assert_eq!(merge_patch(&json!({"a": [{"b": "c"}]}), &json!({"a": [1]})), json!({"a": [1]}));
        assert_eq!(merge_patch(&json!({"e": null}), &json!({"a": 1})), json!({"e": null, "a": 1}));
    }

    // Mirrors RFC 6902 appendix A examples.
    #[test]
    fn json_patch_follows_rfc6902() {
        let doc = json!({"foo": ["bar", "baz"]});
        let out = json_patch(&doc, &json!([{"op": "add", "path": "/foo/1", "value": "qux"}])).unwrap();
        assert_eq!(out, json!({"foo": ["bar", "qux", "baz"]}));
        let out = json_patch(&doc, &json!([{"op": "replace", "path": "/foo/0", "value": "x"}, {"op": "remove", "path": "/foo/1"}])).unwrap();
        assert_eq!(out, json!({"foo": ["x"]}));
        assert!(json_patch(&doc, &json!([{"op": "remove", "path": "/nope"}])).is_err());
        assert!(json_patch(&doc, &json!([{"op": "test", "path": "/foo/0", "value": "no"}])).is_err());
        assert!(json_patch(&doc, &json!({"op": "add"})).is_err());
    }

    #[test]
    fn diff_produces_a_merge_patch() {
        let a = json!({"a": 1, "b": {"c": 2, "d": 3}});
        let b = json!({"a": 1, "b": {"c": 5}, "e": true});
        let d = diff(&a, &b);
        assert_eq!(d, json!({"b": {"c": 5, "d": null}, "e": true}));
        assert_eq!(merge_patch(&a, &d), b);
    }
}
