//! The OpenAPI documents kube-apiserver serves (`/openapi/v3`, one v3 document per
//! group-version, and `/openapi/v2`), built once from k8s-openapi v1_34's schemas (descriptions
//! included), generated into `openapi/definitions.json` by `crates/server/openapi-gen`, and
//! the kind registry. `kubesim serve` serves them (real `kubectl explain` and server-side field
//! validation read them) and the kubectl layer's `explain` renders from the same documents.
//!
//! Every PATCH operation declares the `fieldValidation` parameter, so kubectl validates on the
//! server (`fieldValidation=Strict`). PATCH request bodies list JSON patch, merge patch and
//! apply, not strategic merge: the embedded schemas carry no `x-kubernetes-patch-merge-key`
//! extensions, and without strategic merge in the document kubectl's client-side apply computes
//! its patches from its compiled-in types (their merge keys), exactly as for a built-in kind.

use crate::object::{all_kinds, Scope};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The schemas: embedded natively; the browser app fetches them on first use instead (770 KB
/// of JSON kept out of the wasm bundle) and hands them over with [`provide_definitions`].
#[cfg(not(target_arch = "wasm32"))]
fn definitions() -> Option<&'static str> {
    Some(include_str!("openapi/definitions.json"))
}

#[cfg(target_arch = "wasm32")]
fn definitions() -> Option<&'static str> {
    PROVIDED.get().map(String::as_str)
}

#[cfg(target_arch = "wasm32")]
static PROVIDED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The browser app hands over the schemas it fetched (`definitions.json`, copied next to the
/// page); natively they are embedded and this does nothing.
pub fn provide_definitions(text: String) {
    #[cfg(target_arch = "wasm32")]
    let _ = PROVIDED.set(text);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = text;
}

/// Whether the schemas are at hand (always natively; in the browser once fetched).
pub fn available() -> bool {
    definitions().is_some()
}

/// The documents, built once at start.
pub struct OpenApi {
    /// `/openapi/v3`.
    root: Value,
    /// `api/v1`, `apis/apps/v1` → document.
    documents: BTreeMap<String, Value>,
    /// `/openapi/v2` (JSON).
    v2: Value,
}

fn package_of(group: &str) -> &str {
    if group.is_empty() {
        "core"
    } else {
        group.split('.').next().unwrap_or(group)
    }
}

/// `{"$ref": X, "description": ...}` → `{"allOf": [{"$ref": X}], "description": ...}` as
/// kube-openapi emits v3 (siblings of `$ref` are ignored in OpenAPI 3.0).
fn normalise(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("$ref") && map.len() > 1 {
                let r = map.remove("$ref").expect("checked");
                map.insert("allOf".into(), json!([{ "$ref": r }]));
            }
            for v in map.values_mut() {
                normalise(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        _ => {}
    }
}

fn refs(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(|r| r.as_str()) {
                out.insert(r.trim_start_matches("#/components/schemas/").to_string());
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

fn closure(schemas: &Map<String, Value>, roots: &[String]) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<String> = roots.to_vec();
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = schemas.get(&name) {
            let mut found = BTreeSet::new();
            refs(schema, &mut found);
            stack.extend(found.into_iter().filter(|f| !seen.contains(f)));
        }
    }
    seen
}

fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016X}")
}

fn operation(gvk: &Value, verb: &str, description: &str, patch: bool, body: bool) -> Value {
    let mut op = json!({
        "description": description,
        "operationId": verb,
        "x-kubernetes-action": verb,
        "x-kubernetes-group-version-kind": gvk,
        "responses": { "200": { "description": "OK" } },
    });
    if body {
        let mut params = vec![
            json!({ "name": "dryRun", "in": "query", "schema": { "type": "string", "uniqueItems": true } }),
            json!({ "name": "fieldManager", "in": "query", "schema": { "type": "string", "uniqueItems": true } }),
            json!({ "name": "fieldValidation", "in": "query", "schema": { "type": "string", "uniqueItems": true } }),
        ];
        if patch {
            params.push(json!({ "name": "force", "in": "query", "schema": { "type": "boolean", "uniqueItems": true } }));
            op["requestBody"] = json!({ "content": {
                "application/json-patch+json": { "schema": { "type": "object" } },
                "application/merge-patch+json": { "schema": { "type": "object" } },
                "application/apply-patch+yaml": { "schema": { "type": "object" } },
            }, "required": true });
        } else {
            op["requestBody"] = json!({ "content": { "*/*": { "schema": { "type": "object" } } }, "required": true });
        }
        op["parameters"] = Value::Array(params);
    }
    op
}

impl OpenApi {
    /// Builds the documents from the embedded schemas and the kind registry.
    pub fn build() -> OpenApi {
        let mut schemas: Map<String, Value> = definitions().and_then(|d| serde_json::from_str(d).ok()).unwrap_or_default();
        for schema in schemas.values_mut() {
            normalise(schema);
        }
        // Group-versions → kinds (schema name, GVK).
        let mut by_gv: BTreeMap<String, Vec<(String, Value, &'static crate::object::KindInfo)>> = BTreeMap::new();
        for info in all_kinds() {
            let (group, version) = info.api_version.split_once('/').unwrap_or(("", info.api_version));
            let suffix = format!(".{}.{version}.{}", package_of(group), info.kind);
            let Some(name) = schemas.keys().find(|k| k.ends_with(&suffix)).cloned() else { continue };
            let gvk = json!({ "group": group, "version": version, "kind": info.kind });
            let entry = schemas.get_mut(&name).expect("found");
            let list = entry.as_object_mut().expect("schemas are objects").entry("x-kubernetes-group-version-kind").or_insert_with(|| json!([]));
            if let Some(a) = list.as_array_mut() {
                if !a.contains(&gvk) {
                    a.push(gvk.clone());
                }
            }
            let key = if group.is_empty() { format!("api/{version}") } else { format!("apis/{group}/{version}") };
            by_gv.entry(key).or_default().push((name, gvk, info));
        }
        let mut documents = BTreeMap::new();
        let mut root_paths = Map::new();
        for (key, kinds) in &by_gv {
            let mut roots: Vec<String> = kinds.iter().map(|(n, _, _)| n.clone()).collect();
            roots.push("io.k8s.apimachinery.pkg.apis.meta.v1.Status".into());
            roots.push("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions".into());
            let names = closure(&schemas, &roots);
            let components: Map<String, Value> = names.iter().filter_map(|n| schemas.get(n).map(|s| (n.clone(), s.clone()))).collect();
            let mut paths = Map::new();
            for (_, gvk, info) in kinds {
                let base = format!("/{key}");
                let (collection, item) = match info.scope {
                    Scope::Namespaced => {
                        (format!("{base}/namespaces/{{namespace}}/{}", info.plural), format!("{base}/namespaces/{{namespace}}/{}/{{name}}", info.plural))
                    }
                    Scope::Cluster => (format!("{base}/{}", info.plural), format!("{base}/{}/{{name}}", info.plural)),
                };
                paths.insert(
                    collection,
                    json!({
                        "get": operation(gvk, "list", &format!("list or watch objects of kind {}", info.kind), false, false),
                        "post": operation(gvk, "post", &format!("create a {}", info.kind), false, true),
                        "delete": operation(gvk, "deletecollection", &format!("delete collection of {}", info.kind), false, false),
                    }),
                );
                paths.insert(
                    item,
                    json!({
                        "get": operation(gvk, "get", &format!("read the specified {}", info.kind), false, false),
                        "put": operation(gvk, "put", &format!("replace the specified {}", info.kind), false, true),
                        "patch": operation(gvk, "patch", &format!("partially update the specified {}", info.kind), true, true),
                        "delete": operation(gvk, "delete", &format!("delete a {}", info.kind), false, false),
                    }),
                );
            }
            let doc = json!({
                "openapi": "3.0.0",
                "info": { "title": "Kubernetes", "version": crate::discovery::GIT_VERSION },
                "paths": paths,
                "components": { "schemas": components },
            });
            let text = doc.to_string();
            root_paths.insert(key.clone(), json!({ "serverRelativeURL": format!("/openapi/v3/{key}?hash={}", hash(&text)) }));
            documents.insert(key.clone(), doc);
        }
        let mut v2_definitions = Value::Object(schemas.clone());
        rewrite_refs_v2(&mut v2_definitions);
        let v2 = json!({ "swagger": "2.0", "info": { "title": "Kubernetes", "version": crate::discovery::GIT_VERSION }, "paths": {}, "definitions": v2_definitions });
        OpenApi { root: json!({ "paths": root_paths }), documents, v2 }
    }

    /// The documents, built once per process; `None` in the browser until the schemas are
    /// provided.
    pub fn shared() -> Option<&'static OpenApi> {
        static OPENAPI: std::sync::OnceLock<OpenApi> = std::sync::OnceLock::new();
        available().then(|| OPENAPI.get_or_init(OpenApi::build))
    }

    /// The group-version document keys (`api/v1`, `apis/apps/v1`, ...).
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.documents.keys()
    }

    /// `/openapi/v3`: the group-versions with their documents' URLs.
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// `/openapi/v3/<key>`: a group-version's document (`api/v1`, `apis/apps/v1`).
    pub fn document(&self, key: &str) -> Option<&Value> {
        self.documents.get(key)
    }

    /// `/openapi/v2` (JSON).
    pub fn v2(&self) -> &Value {
        &self.v2
    }
}

fn rewrite_refs_v2(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref") {
                *r = r.replace("#/components/schemas/", "#/definitions/");
            }
            map.values_mut().for_each(rewrite_refs_v2);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs_v2),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_cover_the_served_group_versions_with_gvk_schemas() {
        let o = OpenApi::build();
        let core = &o.documents["api/v1"];
        let pod = &core["components"]["schemas"]["io.k8s.api.core.v1.Pod"];
        assert_eq!(pod["x-kubernetes-group-version-kind"][0]["kind"], "Pod");
        assert!(pod["properties"]["metadata"]["allOf"].is_array());
        assert!(o.documents["apis/apps/v1"]["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation"));
        assert!(o.root["paths"]["apis/autoscaling/v2"]["serverRelativeURL"].as_str().unwrap().starts_with("/openapi/v3/apis/autoscaling/v2?hash="));
    }
}
