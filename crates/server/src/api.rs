//! Routing and the REST handlers, after kube-apiserver's
//! (staging/src/k8s.io/apiserver/pkg/endpoints/handlers): get, list (selectors, pagination),
//! create, update, patch (JSON, merge, strategic merge, apply), delete, deletecollection, the
//! status/scale/binding/eviction/log/exec subresources, the metrics API and access reviews.

use crate::discovery::{self, Resource};
use crate::http::{Request, Response};
use crate::status::{success, Failure};
use crate::{table, Shared};
use kubesim_api::object::{KindInfo, Object, Scope};
use kubesim_api::selector::{FieldSelector, Selector};
use kubesim_apiserver::{DeleteOptions, Deleted, Propagation};
use kubesim_kubectl::reuse as kubectl;
use serde_json::{json, Value};
use std::net::TcpStream;
use std::sync::Arc;

/// What a handler did with the connection.
pub enum Outcome {
    /// A complete response to write.
    Respond(Response),
    /// The handler streamed (watch, followed logs, WebSocket) and the connection is done.
    Streamed,
}

impl From<Result<Response, Failure>> for Outcome {
    fn from(r: Result<Response, Failure>) -> Outcome {
        Outcome::Respond(r.unwrap_or_else(|f| f.response()))
    }
}

/// What the client accepts, from the Accept header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Objects as JSON.
    Json,
    /// Objects as YAML.
    Yaml,
    /// `meta.k8s.io/v1` Table.
    Table,
    /// `PartialObjectMetadata` / `PartialObjectMetadataList`.
    Metadata,
    /// `apidiscovery.k8s.io/v2` aggregated discovery.
    Aggregated,
}

/// Negotiates the response form (the first acceptable media type wins).
pub fn negotiate(accept: Option<&str>) -> Result<Want, Failure> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else { return Ok(Want::Json) };
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let base = parts.next().unwrap_or("");
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).map(|(k, v)| (k.trim(), v.trim())).collect();
        let param = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        match base {
            "application/json" | "*/*" | "application/*" => match (param("as"), param("g"), param("v")) {
                (None, _, _) => return Ok(Want::Json),
                (Some("Table"), Some("meta.k8s.io"), Some("v1" | "v1beta1")) => return Ok(Want::Table),
                (Some("PartialObjectMetadata" | "PartialObjectMetadataList"), Some("meta.k8s.io"), Some("v1" | "v1beta1")) => return Ok(Want::Metadata),
                (Some("APIGroupDiscoveryList"), Some("apidiscovery.k8s.io"), Some("v2" | "v2beta1")) => return Ok(Want::Aggregated),
                _ => continue,
            },
            "application/yaml" if param("as").is_none() => return Ok(Want::Yaml),
            _ => continue,
        }
    }
    Err(Failure::not_acceptable(accept))
}

fn respond_value(want: Want, code: u16, value: &Value) -> Response {
    match want {
        Want::Yaml => Response::typed(code, "application/yaml", serde_yaml::to_string(value).unwrap_or_default().into_bytes()),
        _ => Response::json(code, value),
    }
}

/// Who writes, for the trace: real kubectl is actor `kubectl`, as kubesim's own layer.
pub fn actor(req: &Request) -> String {
    let agent = req.header("user-agent").unwrap_or("");
    if agent.starts_with("kubectl") {
        return kubesim_kubectl::ACTOR.to_string();
    }
    if let Some(manager) = req.param("fieldManager").filter(|m| !m.is_empty()) {
        return manager.to_string();
    }
    match agent.split('/').next().filter(|p| !p.is_empty()) {
        Some(product) => product.to_string(),
        None => "client".to_string(),
    }
}

/// The field manager of a write (`fieldManager`, else the user agent's product, as upstream).
pub fn field_manager(req: &Request) -> String {
    if let Some(manager) = req.param("fieldManager").filter(|m| !m.is_empty()) {
        return manager.to_string();
    }
    let agent = req.header("user-agent").unwrap_or("unknown");
    agent.split('/').next().unwrap_or("unknown").to_string()
}

/// A resource URL, parsed.
#[derive(Clone, Debug)]
pub struct Target {
    /// The served resource.
    pub res: &'static Resource,
    /// The namespace in the URL.
    pub namespace: Option<String>,
    /// The object name.
    pub name: Option<String>,
    /// The subresource.
    pub sub: Option<String>,
    /// `/watch/` legacy path.
    pub legacy_watch: bool,
}

impl Target {
    /// The kind (stored resources only).
    pub fn info(&self) -> Result<&'static KindInfo, Failure> {
        self.res.info.ok_or_else(Failure::method_not_allowed)
    }
    /// The group for Status details.
    pub fn group(&self) -> &str {
        self.res.group
    }
    /// The namespace to act in ("" for cluster-scoped).
    pub fn ns(&self) -> String {
        self.namespace.clone().unwrap_or_default()
    }
    /// A Status for an API server error about this target.
    pub fn fail(&self, e: kubesim_apiserver::ApiError) -> Failure {
        let resource = match &self.sub {
            Some(sub) if sub != "status" && sub != "log" => format!("{}/{sub}", self.res.plural),
            _ => self.res.plural.to_string(),
        };
        Failure::from_api(e, self.res.group, &resource, self.name.as_deref().unwrap_or(""))
    }
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

fn parse_target(resources: &'static [Resource], group: &str, version: &str, rest: &[&str]) -> Result<Target, Failure> {
    let mut rest = rest.to_vec();
    let legacy_watch = rest.first() == Some(&"watch");
    if legacy_watch {
        rest.remove(0);
    }
    let (namespace, rest): (Option<String>, Vec<&str>) = match rest.as_slice() {
        ["namespaces", ns, plural, tail @ ..] if !(tail.is_empty() && matches!(*plural, "status" | "finalize")) => {
            let mut v = vec![*plural];
            v.extend_from_slice(tail);
            (Some(ns.to_string()), v)
        }
        _ => (None, rest.clone()),
    };
    let plural = rest.first().ok_or_else(Failure::not_found_path)?;
    let res = discovery::find(resources, group, version, plural).ok_or_else(Failure::not_found_path)?;
    if namespace.is_some() && !res.namespaced {
        return Err(Failure::not_found_path());
    }
    let name = rest.get(1).map(|s| s.to_string());
    let sub = rest.get(2).map(|s| s.to_string());
    if rest.len() > 3 {
        return Err(Failure::not_found_path());
    }
    if let Some(sub) = &sub {
        if !res.subresources.iter().any(|(s, _, _)| s == sub) {
            return Err(Failure::not_found_path());
        }
    }
    Ok(Target { res, namespace, name, sub, legacy_watch })
}

/// Handles one request.
pub fn handle(shared: &Shared, req: &Request, stream: &mut TcpStream) -> Outcome {
    let segs = segments(&req.path);
    let method = if req.method == "HEAD" { "GET" } else { req.method.as_str() };
    match segs.as_slice() {
        ["kubesim", "v1", rest @ ..] => return crate::control::handle(shared, req, rest).into(),
        ["version"] => return Outcome::Respond(Response::json(200, &discovery::version())),
        ["healthz" | "livez" | "readyz", ..] => return Outcome::Respond(Response::typed(200, "text/plain; charset=utf-8", b"ok".to_vec())),
        ["openapi", rest @ ..] => return crate::openapi::handle(shared.openapi, rest, req).into(),
        _ => {}
    }
    let want = match negotiate(req.header("accept")) {
        Ok(w) => w,
        Err(f) => return Outcome::Respond(f.response()),
    };
    let (group, version, rest): (&str, &str, &[&str]) = match segs.as_slice() {
        ["api"] => {
            if method != "GET" {
                return Outcome::Respond(Failure::method_not_allowed().response());
            }
            return Outcome::Respond(match want {
                Want::Aggregated => Response::json(200, &discovery::aggregated(shared.resources, true))
                    .with_header("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
                _ => Response::json(200, &discovery::api_versions()),
            });
        }
        ["apis"] => {
            if method != "GET" {
                return Outcome::Respond(Failure::method_not_allowed().response());
            }
            return Outcome::Respond(match want {
                Want::Aggregated => Response::json(200, &discovery::aggregated(shared.resources, false))
                    .with_header("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
                _ => Response::json(200, &discovery::api_group_list(shared.resources)),
            });
        }
        ["apis", group] => {
            return Outcome::Respond(match discovery::api_group(shared.resources, group) {
                Some(v) => Response::json(200, &v),
                None => Failure::not_found_path().response(),
            })
        }
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Outcome::Respond(Failure::not_found_path().response()),
    };
    if rest.is_empty() {
        return Outcome::Respond(match discovery::resource_list(shared.resources, group, version) {
            Some(v) => Response::json(200, &v),
            None => Failure::not_found_path().response(),
        });
    }
    let target = match parse_target(shared.resources, group, version, rest) {
        Ok(t) => t,
        Err(f) => return Outcome::Respond(f.response()),
    };
    // Strip the "Content-Type" duplication for aggregated responses (the first header wins).
    dispatch(shared, req, method, want, &target, stream)
}

fn dispatch(shared: &Shared, req: &Request, method: &str, want: Want, target: &Target, stream: &mut TcpStream) -> Outcome {
    let res = target.res;
    if res.group == "metrics.k8s.io" {
        return metrics(shared, method, target).into();
    }
    if res.info.is_none() {
        return access_review(req, method, target).into();
    }
    let is_watch = method == "GET" && (req.flag("watch") || target.legacy_watch);
    match (method, target.name.as_deref(), target.sub.as_deref()) {
        ("GET", _, _) if is_watch && target.sub.is_none() => crate::watch::serve(shared, req, target, want, stream),
        ("GET", None, None) => list(shared, req, target, want).into(),
        ("POST", None, None) if res.kind == "Binding" => binding(shared, req, target, None).into(),
        ("POST", None, None) => create(shared, req, target, want).into(),
        ("DELETE", None, None) => delete_collection(shared, req, target).into(),
        ("GET", Some(name), None) => get(shared, target, name, want).into(),
        ("PUT", Some(name), None) => update(shared, req, target, name, want, false).into(),
        ("PATCH", Some(name), None) => patch(shared, req, target, name, want, false).into(),
        ("DELETE", Some(name), None) => delete(shared, req, target, name, want).into(),
        ("GET", Some(name), Some("status")) => get(shared, target, name, want).into(),
        ("PUT", Some(name), Some("status")) => update(shared, req, target, name, want, true).into(),
        ("PATCH", Some(name), Some("status")) => patch(shared, req, target, name, want, true).into(),
        ("GET", Some(name), Some("scale")) => get_scale(shared, target, name).into(),
        ("PUT" | "PATCH", Some(name), Some("scale")) => update_scale(shared, req, target, name, method == "PATCH").into(),
        ("POST", Some(name), Some("binding")) => binding(shared, req, target, Some(name)).into(),
        ("POST", Some(name), Some("eviction")) => eviction(shared, req, target, name).into(),
        ("GET", Some(name), Some("ephemeralcontainers")) if target.res.plural == "pods" => get(shared, target, name, want).into(),
        ("PUT" | "PATCH", Some(name), Some("ephemeralcontainers")) if target.res.plural == "pods" => {
            ephemeral_containers(shared, req, target, name, want, method == "PATCH").into()
        }
        ("PUT", Some(name), Some("finalize")) => update(shared, req, target, name, want, false).into(),
        ("GET", Some(name), Some("log")) => crate::watch::logs(shared, req, target, name, stream),
        ("GET" | "POST", Some(name), Some("exec")) => crate::watch::exec(shared, req, target, name, stream),
        _ => Outcome::Respond(Failure::method_not_allowed().response()),
    }
}

/// The object as served at the requested version (HorizontalPodAutoscaler is stored once for
/// autoscaling/v1 and v2; the served apiVersion follows the URL).
pub fn served_json(object: &Object, res: &Resource) -> Value {
    let mut value = object.to_json();
    kubesim_api::object::go_encoding(object.kind(), &mut value);
    let api_version = if res.group.is_empty() { res.version.to_string() } else { format!("{}/{}", res.group, res.version) };
    if value.get("apiVersion").and_then(|v| v.as_str()) != Some(api_version.as_str()) {
        value["apiVersion"] = api_version.into();
    }
    value
}

fn partial_metadata(object: &Object) -> Value {
    json!({ "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": serde_json::to_value(object.metadata()).unwrap_or_default() })
}

fn get(shared: &Shared, target: &Target, name: &str, want: Want) -> Result<Response, Failure> {
    let info = target.info()?;
    let (ns, name_owned, t) = (target.ns(), name.to_string(), target.clone());
    let (object, now) = shared.run(move |sim| Ok::<_, Failure>((sim.world.api().get(info, &ns, &name_owned).map_err(|e| t.fail(e))?, sim.world.now())))??;
    Ok(match want {
        Want::Table => Response::json(200, &table::table(info, std::slice::from_ref(&object), now, "Metadata", object.resource_version())),
        Want::Metadata => Response::json(200, &partial_metadata(&object)),
        _ => respond_value(want, 200, &served_json(&object, target.res)),
    })
}

/// Label and field selectors from the query, validated as the API server does.
pub fn selectors(req: &Request, info: &KindInfo) -> Result<(Option<Selector>, Option<FieldSelector>), Failure> {
    let labels = match req.param("labelSelector").filter(|s| !s.trim().is_empty()) {
        Some(text) => Some(Selector::parse(text).map_err(|e| Failure::bad_request(format!("unable to parse requirement: {e}")))?),
        None => None,
    };
    let fields = match req.param("fieldSelector").filter(|s| !s.trim().is_empty()) {
        Some(text) => {
            let fields = FieldSelector::parse(text).map_err(Failure::bad_request)?;
            // Unsupported fields are rejected up front (a probe object of the kind).
            let probe = Object::from_json(info, json!({ "apiVersion": info.api_version, "kind": info.kind, "metadata": {} }));
            if let Ok(probe) = probe {
                fields.matches(&probe).map_err(|e| Failure::bad_request(e.to_string()))?;
            }
            Some(fields)
        }
        None => None,
    };
    Ok((labels, fields))
}

/// A continue token: base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":"ns/name\u0000"}`, as the
/// etcd3 store encodes it.
fn encode_continue(rv: u64, key: &str) -> String {
    crate::ws::base64(json!({ "v": "meta.k8s.io/v1", "rv": rv, "start": format!("{key}\u{0}") }).to_string().as_bytes())
        .replace('+', "-")
        .replace('/', "_")
        .trim_end_matches('=')
        .to_string()
}

fn decode_continue(token: &str) -> Result<(u64, String), Failure> {
    let bad = |why: &str| Failure::bad_request(format!("continue key is not valid: {why}"));
    let bytes = crate::ws::base64_decode(token).ok_or_else(|| bad("illegal base64 data at input byte 0"))?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| bad(&e.to_string()))?;
    if value.get("v").and_then(|v| v.as_str()) != Some("meta.k8s.io/v1") {
        return Err(bad("incorrect encoded start resourceVersion (version meta.k8s.io/v1)"));
    }
    let rv = value.get("rv").and_then(|v| v.as_u64()).ok_or_else(|| bad("incorrect encoded start resourceVersion"))?;
    let start = value.get("start").and_then(|v| v.as_str()).ok_or_else(|| bad("encoded start key is missing"))?;
    Ok((rv, start.trim_end_matches('\u{0}').to_string()))
}

fn object_key(o: &Object) -> String {
    if o.namespace().is_empty() {
        o.name().to_string()
    } else {
        format!("{}/{}", o.namespace(), o.name())
    }
}

fn list(shared: &Shared, req: &Request, target: &Target, want: Want) -> Result<Response, Failure> {
    let info = target.info()?;
    let (labels, fields) = selectors(req, info)?;
    let limit: usize = match req.param("limit") {
        Some(l) if !l.is_empty() => l.parse::<i64>().map_err(|_| Failure::bad_request(format!("invalid limit {l:?}")))?.max(0) as usize,
        _ => 0,
    };
    let start = match req.param("continue").filter(|c| !c.is_empty()) {
        Some(token) => Some(decode_continue(token)?),
        None => None,
    };
    let requested_rv = req.param("resourceVersion").filter(|r| !r.is_empty() && *r != "0").map(str::to_string);
    let (ns, t) = (target.namespace.clone(), target.clone());
    let (items, revision, now) = shared.run(move |sim| {
        let api = sim.world.api();
        if let Some(rv) = requested_rv {
            let rv: u64 = rv.parse().map_err(|_| Failure::bad_request(format!("invalid resource version: {rv:?}")))?;
            let current = api.store().revision();
            if rv > current {
                return Err(Failure::new(504, "Timeout", format!("Too large resource version: {rv}, current: {current}")).with_details(
                    json!({ "causes": [{ "reason": "ResourceVersionTooLarge", "message": "Too large resource version" }], "retryAfterSeconds": 1 }),
                ));
            }
        }
        let (items, revision) = api.list(info, ns.as_deref(), labels.as_ref(), fields.as_ref()).map_err(|e| t.fail(e))?;
        Ok((items, revision, sim.world.now()))
    })??;
    let mut items: Vec<Arc<Object>> = items.into_iter().filter(|o| o.kind() == info.kind).collect();
    let mut list_rv = revision;
    if let Some((rv, key)) = &start {
        list_rv = *rv;
        let position = items.partition_point(|o| object_key(o).as_str() <= key.as_str());
        items.drain(..position);
    }
    let mut continue_token = None;
    let mut remaining = None;
    if limit > 0 && items.len() > limit {
        remaining = Some(items.len() - limit);
        items.truncate(limit);
        continue_token = items.last().map(|o| encode_continue(list_rv, &object_key(o)));
    }
    let mut metadata = json!({ "resourceVersion": list_rv.to_string() });
    if let Some(token) = &continue_token {
        metadata["continue"] = token.clone().into();
        metadata["remainingItemCount"] = remaining.unwrap_or(0).into();
    }
    let value = match want {
        Want::Table => {
            let include = req.param("includeObject").unwrap_or("Metadata");
            let mut t = table::table(info, &items, now, include, &list_rv.to_string());
            t["metadata"] = metadata;
            t
        }
        Want::Metadata => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata,
            "items": items.iter().map(|o| partial_metadata(o)).collect::<Vec<_>>(),
        }),
        _ => {
            let api_version = if target.res.group.is_empty() { target.res.version.to_string() } else { format!("{}/{}", target.res.group, target.res.version) };
            json!({
                "kind": format!("{}List", info.kind),
                "apiVersion": api_version,
                "metadata": metadata,
                "items": items.iter().map(|o| served_json(o, target.res)).collect::<Vec<_>>(),
            })
        }
    };
    Ok(respond_value(want, 200, &value))
}

/// Parses a request body (JSON or YAML) into a JSON value.
pub fn body_value(req: &Request) -> Result<Value, Failure> {
    let content_type = req.header("content-type").unwrap_or("application/json").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if content_type == "application/vnd.kubernetes.protobuf" {
        return crate::proto::decode(&req.body);
    }
    let text = std::str::from_utf8(&req.body).map_err(|_| Failure::bad_request("the request body is not UTF-8"))?;
    if text.trim().is_empty() {
        return Err(Failure::bad_request("the request body is empty"));
    }
    match content_type.as_str() {
        "application/yaml" | "application/apply-patch+yaml" | "text/yaml" => {
            let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| Failure::bad_request(format!("error converting YAML to JSON: {e}")))?;
            serde_json::to_value(value).map_err(|e| Failure::bad_request(format!("error converting YAML to JSON: {e}")))
        }
        "application/json" | "application/json-patch+json" | "application/merge-patch+json" | "application/strategic-merge-patch+json" | "" | "*/*" => {
            serde_json::from_str(text).map_err(|e| Failure::bad_request(format!("json parse error: {e}")))
        }
        other => Err(Failure::unsupported_media_type(other)),
    }
}

/// `fieldValidation`: Strict rejects unknown fields (400), Warn answers with Warning headers.
fn field_validation(req: &Request, input: &Value, decoded: &Object) -> Result<Vec<String>, Failure> {
    field_validation_mode(req.param("fieldValidation").unwrap_or("Warn"), input, decoded)
}

fn field_validation_mode(mode: &str, input: &Value, decoded: &Object) -> Result<Vec<String>, Failure> {
    if mode == "Ignore" {
        return Ok(Vec::new());
    }
    let mut unknown = kubesim_api::decode::unknown_fields(input, decoded);
    unknown.retain(|f| f != "status" && !f.starts_with("status."));
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    match mode {
        "Strict" => {
            let list: Vec<String> = unknown.iter().map(|f| format!("unknown field {f:?}")).collect();
            Err(Failure::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: strict decoding error: {}",
                decoded.kind(),
                version_of(decoded.api_version()),
                decoded.kind(),
                list.join(", ")
            )))
        }
        _ => Ok(unknown.iter().map(|f| format!("unknown field {f:?}")).collect()),
    }
}

fn version_of(api_version: &str) -> &str {
    api_version.rsplit('/').next().unwrap_or(api_version)
}

fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    for w in warnings {
        response.headers.push(("Warning".into(), format!("299 - {:?}", w)));
    }
    response
}

/// Decodes a body into an object of the target's kind, checking kind and namespace.
fn decode_object(target: &Target, mut value: Value) -> Result<Object, Failure> {
    let info = target.info()?;
    if !value.is_object() {
        return Err(Failure::bad_request(format!("the body of the request is not a {} object", info.kind)));
    }
    match value.get("kind").and_then(|k| k.as_str()) {
        None | Some("") => value["kind"] = info.kind.into(),
        Some(kind) if kind != info.kind => {
            return Err(Failure::bad_request(format!("the kind of the provided object ({kind}) does not match the resource ({})", info.plural)));
        }
        _ => {}
    }
    // The stored kind's apiVersion (served versions share one storage version).
    value["apiVersion"] = info.api_version.into();
    if info.scope == Scope::Namespaced {
        let url_ns = target.ns();
        let meta = value.as_object_mut().expect("checked").entry("metadata").or_insert_with(|| json!({}));
        if !meta.is_object() {
            return Err(Failure::bad_request("metadata must be an object"));
        }
        match meta.get("namespace").and_then(|n| n.as_str()).filter(|n| !n.is_empty()) {
            Some(ns) if !url_ns.is_empty() && ns != url_ns => {
                return Err(Failure::bad_request("the namespace of the provided object does not match the namespace sent on the request"))
            }
            Some(_) => {}
            None => meta["namespace"] = url_ns.into(),
        }
    }
    Object::from_json(info, value)
        .map_err(|e| Failure::bad_request(format!("{} in version {:?} cannot be handled as a {}: {}", info.kind, version_of(info.api_version), info.kind, e)))
}

fn dry_run(req: &Request) -> Result<bool, Failure> {
    match req.params("dryRun").as_slice() {
        [] => Ok(false),
        ["All"] => Ok(true),
        [other, ..] => Err(Failure::bad_request(format!("Invalid dryRun: {other:?}: supported values: \"All\""))),
    }
}

/// Runs `f` against the API server as `actor` on the simulation thread; with `dry_run`,
/// against a throwaway copy of the API server and RNG, so nothing is committed and the world's
/// randomness is untouched.
pub fn write<R: Send + 'static>(
    shared: &Shared,
    actor: &str,
    dry_run: bool,
    f: impl FnOnce(&mut kubesim_apiserver::ApiServer, &mut kubesim_apiserver::Request) -> Result<R, Failure> + Send + 'static,
) -> Result<R, Failure> {
    let actor = actor.to_string();
    shared.run(move |sim| {
        sim.world.api_request(&actor, |api, req| {
            if dry_run {
                let mut scratch = api.clone();
                let mut rng = req.rng.clone();
                let mut scratch_req = kubesim_apiserver::Request { now: req.now, rng: &mut rng, actor: req.actor };
                f(&mut scratch, &mut scratch_req)
            } else {
                f(api, req)
            }
        })
    })?
}

fn create(shared: &Shared, req: &Request, target: &Target, want: Want) -> Result<Response, Failure> {
    let mut input = body_value(req)?;
    // Clients send `status: {}`; create ignores a client's status (PrepareForCreate), and an
    // absent one lets the registry defaults (a Namespace's Active phase) apply.
    if input.get("status").is_some_and(|s| s.as_object().is_some_and(|m| m.is_empty())) {
        input.as_object_mut().expect("has status").remove("status");
    }
    let mut object = decode_object(target, input.clone())?;
    let warnings = field_validation(req, &input, &object)?;
    let dry = dry_run(req)?;
    let manager = field_manager(req);
    let name = object.name().to_string();
    let (group, plural) = (target.res.group, target.res.plural);
    let created = write(shared, &actor(req), dry, move |api, r| {
        crate::ssa::record_update(&mut object, None, &manager, r.now);
        api.create(object, r).map_err(|e| Failure::from_api(e, group, plural, &name))
    })?;
    Ok(with_warnings(respond_value(want, 201, &served_json(&created, target.res)), &warnings))
}

fn update(shared: &Shared, req: &Request, target: &Target, name: &str, want: Want, status: bool) -> Result<Response, Failure> {
    let input = body_value(req)?;
    let mut object = decode_object(target, input.clone())?;
    if object.name() != name {
        return Err(Failure::bad_request(format!("the name of the object ({}) does not match the name on the URL ({name})", object.name())));
    }
    let warnings = field_validation(req, &input, &object)?;
    let dry = dry_run(req)?;
    let manager = field_manager(req);
    let info = target.info()?;
    let (ns, name, t) = (target.ns(), name.to_string(), target.clone());
    let updated = write(shared, &actor(req), dry, move |api, r| {
        let current = api.get(info, &ns, &name).map_err(|e| t.fail(e))?;
        crate::ssa::record_update(&mut object, Some(&current), &manager, r.now);
        if !object.resource_version().is_empty() && object.resource_version() != current.resource_version() {
            return Err(t.fail(kubesim_apiserver::ApiError::conflict(&info.qualified_resource(), object.name())));
        }
        if crate::ssa::same_content(&object, &current) && object.metadata().managed_fields == current.metadata().managed_fields {
            return Ok(current);
        }
        if status { api.update_status(object, r) } else { api.update(object, r) }.map_err(|e| t.fail(e))
    })?;
    Ok(with_warnings(respond_value(want, 200, &served_json(&updated, target.res)), &warnings))
}

/// PUT/PATCH pods/NAME/ephemeralcontainers (kubectl debug): only `spec.ephemeralContainers`
/// of the sent (or patched) pod is taken.
fn ephemeral_containers(shared: &Shared, req: &Request, target: &Target, name: &str, want: Want, patch: bool) -> Result<Response, Failure> {
    let content_type = req.header("content-type").unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let body = body_value(req)?;
    let dry = dry_run(req)?;
    let info = target.info()?;
    let (ns, name, t) = (target.ns(), name.to_string(), target.clone());
    let updated = write(shared, &actor(req), dry, move |api, r| {
        let current = api.get(info, &ns, &name).map_err(|e| t.fail(e))?;
        let pod = if patch { apply_patch(&content_type, &current.to_json(), &body)? } else { body };
        let list = pod.pointer("/spec/ephemeralContainers").cloned().unwrap_or(Value::Array(Vec::new()));
        let containers: Vec<kubesim_api::k8s_openapi::api::core::v1::EphemeralContainer> =
            serde_json::from_value(list).map_err(|e| Failure::new(422, "Invalid", format!("Pod {name:?} is invalid: spec.ephemeralContainers: {e}")))?;
        api.update_ephemeral_containers(&ns, &name, containers, r).map_err(|e| t.fail(e))
    })?;
    Ok(respond_value(want, 200, &served_json(&updated, target.res)))
}

/// Applies a patch document to `current` by content type.
pub fn apply_patch(content_type: &str, current: &Value, patch: &Value) -> Result<Value, Failure> {
    match content_type {
        "application/json-patch+json" => kubectl::json_patch(current, patch).map_err(|e| Failure::new(422, "Invalid", e)),
        "application/merge-patch+json" => {
            if !patch.is_object() {
                return Err(Failure::bad_request("the patch is not a JSON object"));
            }
            Ok(kubectl::merge_patch(current, patch))
        }
        "application/strategic-merge-patch+json" => {
            if !patch.is_object() {
                return Err(Failure::bad_request("the patch is not a JSON object"));
            }
            Ok(kubectl::strategic_patch(current, patch))
        }
        other => Err(Failure::unsupported_media_type(other)),
    }
}

fn patch(shared: &Shared, req: &Request, target: &Target, name: &str, want: Want, status: bool) -> Result<Response, Failure> {
    let content_type = req.header("content-type").unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if content_type == "application/apply-patch+yaml" {
        return crate::ssa::apply(shared, req, target, name, want, status);
    }
    let patch = body_value(req)?;
    let dry = dry_run(req)?;
    let manager = field_manager(req);
    let info = target.info()?;
    let (ns, name, t) = (target.ns(), name.to_string(), target.clone());
    let validation = req.param("fieldValidation").unwrap_or("Warn").to_string();
    let (updated, warnings) = write(shared, &actor(req), dry, move |api, r| {
        let current = api.get(info, &ns, &name).map_err(|e| t.fail(e))?;
        let current_json = current.to_json();
        let mut patched = apply_patch(&content_type, &current_json, &patch)?;
        if patched.get("metadata").and_then(|m| m.get("name")).and_then(|n| n.as_str()) != Some(name.as_str()) {
            return Err(Failure::bad_request("the name of the object does not match the name on the URL"));
        }
        patched["apiVersion"] = info.api_version.into();
        patched["kind"] = info.kind.into();
        // A patch without a resourceVersion applies to the current object.
        if patched.pointer("/metadata/resourceVersion").is_none_or(|v| v.is_null()) {
            patched["metadata"]["resourceVersion"] = current.resource_version().into();
        }
        let mut object =
            Object::from_json(info, patched.clone()).map_err(|e| Failure::new(422, "Invalid", format!("{} {name:?} is invalid: {e}", info.kind)))?;
        let warnings = field_validation_mode(&validation, &patched, &object)?;
        crate::ssa::record_update(&mut object, Some(&current), &manager, r.now);
        if !object.resource_version().is_empty() && object.resource_version() != current.resource_version() {
            return Err(t.fail(kubesim_apiserver::ApiError::conflict(&info.qualified_resource(), object.name())));
        }
        if crate::ssa::same_content(&object, &current) && object.metadata().managed_fields == current.metadata().managed_fields {
            return Ok((current, warnings));
        }
        let result = if status { api.update_status(object, r) } else { api.update(object, r) };
        Ok((result.map_err(|e| t.fail(e))?, warnings))
    })?;
    Ok(with_warnings(respond_value(want, 200, &served_json(&updated, target.res)), &warnings))
}

/// DeleteOptions from the body and the query.
fn delete_options(req: &Request) -> Result<DeleteOptions, Failure> {
    let body: Value = if req.body.iter().all(|b| b.is_ascii_whitespace()) { json!({}) } else { body_value(req)? };
    let grace = body.get("gracePeriodSeconds").and_then(|g| g.as_i64()).or_else(|| req.param("gracePeriodSeconds").and_then(|g| g.parse().ok()));
    let propagation =
        body.get("propagationPolicy").and_then(|p| p.as_str()).map(str::to_string).or_else(|| req.param("propagationPolicy").map(str::to_string)).or_else(
            || match body.get("orphanDependents").and_then(|o| o.as_bool()).or_else(|| req.param("orphanDependents").map(|o| o == "true")) {
                Some(true) => Some("Orphan".into()),
                Some(false) => Some("Background".into()),
                None => None,
            },
        );
    let propagation = match propagation.as_deref() {
        None | Some("") => None,
        Some("Background") => Some(Propagation::Background),
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Orphan") => Some(Propagation::Orphan),
        Some(other) => return Err(Failure::new(422, "Invalid", format!("DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""))),
    };
    let resource_version = match body.pointer("/preconditions/resourceVersion").and_then(|v| v.as_str()) {
        Some(rv) => Some(rv.parse::<u64>().map_err(|_| Failure::bad_request(format!("invalid resource version: {rv:?}")))?),
        None => None,
    };
    Ok(DeleteOptions { grace_period_seconds: grace, propagation, resource_version })
}

fn delete(shared: &Shared, req: &Request, target: &Target, name: &str, want: Want) -> Result<Response, Failure> {
    let info = target.info()?;
    let options = delete_options(req)?;
    let dry = dry_run(req)?;
    let body: Value = if req.body.is_empty() { json!({}) } else { body_value(req).unwrap_or(json!({})) };
    let uid_precondition = body.pointer("/preconditions/uid").and_then(|u| u.as_str()).map(str::to_string);
    let (ns, name, t) = (target.ns(), name.to_string(), target.clone());
    let deleted = write(shared, &actor(req), dry, move |api, r| {
        if let Some(uid) = &uid_precondition {
            let current = api.get(info, &ns, &name).map_err(|e| t.fail(e))?;
            if current.metadata().uid.as_deref() != Some(uid.as_str()) {
                return Err(t.fail(kubesim_apiserver::ApiError::conflict_with(
                    &info.qualified_resource(),
                    &name,
                    &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {}", current.metadata().uid.clone().unwrap_or_default()),
                )));
            }
        }
        api.delete(info, &ns, &name, options, r).map_err(|e| t.fail(e))
    })?;
    match deleted {
        Deleted::Removed(object) => Ok(respond_value(want, 200, &served_json(&object, target.res))),
        Deleted::Terminating(object) => Ok(respond_value(want, if dry { 200 } else { 202 }, &served_json(&object, target.res))),
    }
}

fn delete_collection(shared: &Shared, req: &Request, target: &Target) -> Result<Response, Failure> {
    let info = target.info()?;
    let (labels, fields) = selectors(req, info)?;
    let options = delete_options(req)?;
    let dry = dry_run(req)?;
    let (ns, t) = (target.namespace.clone(), target.clone());
    let (deleted, rv) = write(shared, &actor(req), dry, move |api, r| {
        let (items, rv) = api.list(info, ns.as_deref(), labels.as_ref(), fields.as_ref()).map_err(|e| t.fail(e))?;
        let mut deleted = Vec::new();
        for item in items {
            if let Ok(d) = api.delete(info, item.namespace(), item.name(), options, r) {
                deleted.push(match d {
                    Deleted::Removed(o) | Deleted::Terminating(o) => o,
                });
            }
        }
        Ok((deleted, rv))
    })?;
    Ok(Response::json(
        200,
        &json!({
            "kind": format!("{}List", info.kind),
            "apiVersion": info.api_version,
            "metadata": { "resourceVersion": rv.to_string() },
            "items": deleted.iter().map(|o| served_json(o, target.res)).collect::<Vec<_>>(),
        }),
    ))
}

fn get_scale(shared: &Shared, target: &Target, name: &str) -> Result<Response, Failure> {
    let info = target.info()?;
    let (ns, name, t) = (target.ns(), name.to_string(), target.clone());
    let scale = shared.run(move |sim| sim.world.api().get_scale(info, &ns, &name).map_err(|e| t.fail(e)))??;
    Ok(Response::json(200, &scale))
}

fn update_scale(shared: &Shared, req: &Request, target: &Target, name: &str, is_patch: bool) -> Result<Response, Failure> {
    let info = target.info()?;
    let body = body_value(req)?;
    let dry = dry_run(req)?;
    let (ns, name, t) = (target.ns(), name.to_string(), target.clone());
    let content_type = req.header("content-type").unwrap_or("application/merge-patch+json").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let result: Result<Value, Failure> = write(shared, &actor(req), dry, move |api, r| {
        let (name, target) = (name.as_str(), &t);
        let current = api.get_scale(info, &ns, name).map_err(|e| target.fail(e))?;
        let desired = if is_patch { apply_patch(&content_type, &current, &body)? } else { body.clone() };
        if let Some(rv) = desired.pointer("/metadata/resourceVersion").and_then(|v| v.as_str()).filter(|rv| !rv.is_empty()) {
            if Some(rv) != current.pointer("/metadata/resourceVersion").and_then(|v| v.as_str()) {
                return Err(target.fail(kubesim_apiserver::ApiError::conflict(&info.qualified_resource(), name)));
            }
        }
        let replicas = desired.pointer("/spec/replicas").and_then(|r| r.as_i64()).unwrap_or(0) as i32;
        api.update_scale(info, &ns, name, replicas, r).map_err(|e| target.fail(e))?;
        api.get_scale(info, &ns, name).map_err(|e| target.fail(e))
    });
    Ok(Response::json(200, &result?))
}

fn binding(shared: &Shared, req: &Request, target: &Target, name: Option<&str>) -> Result<Response, Failure> {
    let body = body_value(req)?;
    let pod = name.map(str::to_string).or_else(|| body.pointer("/metadata/name").and_then(|n| n.as_str()).map(str::to_string)).unwrap_or_default();
    let node = body.pointer("/target/name").and_then(|n| n.as_str()).unwrap_or("").to_string();
    if node.is_empty() {
        return Err(Failure::new(422, "Invalid", format!("Binding {pod:?} is invalid: target.name: Required value")));
    }
    let ns = target.ns();
    let dry = dry_run(req)?;
    write(shared, &actor(req), dry, move |api, r| api.bind(&ns, &pod, &node, r).map_err(|e| Failure::from_api(e, "", "pods/binding", &pod)))?;
    Ok(success(201, None))
}

fn eviction(shared: &Shared, req: &Request, target: &Target, name: &str) -> Result<Response, Failure> {
    let body = if req.body.is_empty() { json!({}) } else { body_value(req)? };
    let mut options = DeleteOptions::default();
    if let Some(opts) = body.get("deleteOptions") {
        options.grace_period_seconds = opts.get("gracePeriodSeconds").and_then(|g| g.as_i64());
    }
    let dry = dry_run(req)? || body.pointer("/deleteOptions/dryRun").and_then(|d| d.as_array()).is_some_and(|a| !a.is_empty());
    let (ns, name) = (target.ns(), name.to_string());
    write(shared, &actor(req), dry, move |api, r| api.evict(&ns, &name, options, r).map_err(|e| Failure::from_api(e, "", "pods", &name)))?;
    Ok(success(201, None))
}

fn metrics(shared: &Shared, method: &str, target: &Target) -> Result<Response, Failure> {
    if method != "GET" {
        return Err(Failure::method_not_allowed());
    }
    let target = target.clone();
    shared.run(move |sim| metrics_json(&sim.world, &target))?.map(|v| Response::json(200, &v))
}

fn metrics_json(world: &kubesim_sim::World, target: &Target) -> Result<Value, Failure> {
    let metrics = world.runtime().metrics();
    let window = format!("{}s", kubesim_sim::world::METRICS_RESOLUTION_MS / 1000);
    let stamp = |t: u64| kubesim_api::time::time_at(t);
    // The metrics-server model scrapes only while an HPA exists; otherwise (and for pods the
    // last scrape missed) usage comes from the node's runtime, as a scrape now would read it.
    let usage_of = |pod: &Object| -> Option<kubesim_runtime::metrics::PodUsage> {
        if let Some(u) = metrics.pod(pod.namespace(), pod.name()) {
            return Some(u);
        }
        let node = pod.as_pod()?.spec.as_ref()?.node_name.clone()?;
        let host = world.host(&node)?;
        if !host.powered {
            return None;
        }
        let (cpu, memory) = host.cri.pod_usage(pod.metadata().uid.as_deref()?, world.now())?;
        Some(kubesim_runtime::metrics::PodUsage { cpu_milli: cpu, memory_bytes: memory, timestamp_ms: world.now() })
    };
    let pod_entry = |pod: &Object| -> Option<Value> {
        let usage = usage_of(pod)?;
        let containers: Vec<String> =
            pod.as_pod().and_then(|p| p.spec.as_ref()).map(|s| s.containers.iter().map(|c| c.name.clone()).collect()).unwrap_or_default();
        let n = containers.len().max(1) as i64;
        let containers: Vec<Value> = containers
            .iter()
            .enumerate()
            .map(|(i, c)| {
                // The usage is per pod; containers split it (the remainder goes to the first).
                let cpu = usage.cpu_milli / n + if i == 0 { usage.cpu_milli % n } else { 0 };
                let mem = usage.memory_bytes / n + if i == 0 { usage.memory_bytes % n } else { 0 };
                json!({ "name": c, "usage": { "cpu": format!("{}n", cpu * 1_000_000), "memory": format!("{}Ki", mem / 1024) } })
            })
            .collect();
        Some(json!({
            "metadata": { "name": pod.name(), "namespace": pod.namespace(), "creationTimestamp": stamp(world.now()), "labels": pod.metadata().labels },
            "timestamp": stamp(usage.timestamp_ms),
            "window": window,
            "containers": containers,
        }))
    };
    let pod_info = kubesim_api::kind_info("v1", "Pod").expect("pods are served");
    let node_info = kubesim_api::kind_info("v1", "Node").expect("nodes are served");
    let not_served = || Failure::new(503, "ServiceUnavailable", "the server is currently unable to handle the request");
    let _ = not_served;
    let value = match (target.res.plural, target.name.as_deref()) {
        ("pods", Some(name)) => {
            let pod = world
                .api()
                .get(pod_info, &target.ns(), name)
                .map_err(|_| Failure::new(404, "NotFound", format!("podmetrics.metrics.k8s.io {:?} not found", format!("{}/{name}", target.ns()))))?;
            let mut v = pod_entry(&pod)
                .ok_or_else(|| Failure::new(404, "NotFound", format!("podmetrics.metrics.k8s.io {:?} not found", format!("{}/{name}", target.ns()))))?;
            v["kind"] = "PodMetrics".into();
            v["apiVersion"] = "metrics.k8s.io/v1beta1".into();
            v
        }
        ("pods", None) => {
            let (pods, _) = world.api().list(pod_info, target.namespace.as_deref(), None, None).map_err(|e| target.fail(e))?;
            let items: Vec<Value> = pods.iter().filter_map(|p| pod_entry(p)).collect();
            json!({ "kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": items })
        }
        ("nodes", name) => {
            let (nodes, _) = world.api().list(node_info, None, None, None).map_err(|e| target.fail(e))?;
            let mut items = Vec::new();
            for node in nodes.iter().filter(|n| name.is_none_or(|x| x == n.name())) {
                let (mut cpu, mut mem, mut latest) = (0i64, 0i64, 0u64);
                for pod in world.api().store().pods_on_node(node.name()) {
                    if let Some(u) = usage_of(pod) {
                        cpu += u.cpu_milli;
                        mem += u.memory_bytes;
                        latest = latest.max(u.timestamp_ms);
                    }
                }
                items.push(json!({
                    "metadata": { "name": node.name(), "creationTimestamp": stamp(world.now()), "labels": node.metadata().labels },
                    "timestamp": stamp(metrics.scraped_at().unwrap_or(latest)),
                    "window": window,
                    "usage": { "cpu": format!("{}n", cpu * 1_000_000), "memory": format!("{}Ki", mem / 1024) },
                }));
            }
            match name {
                Some(n) => {
                    let mut v = items.pop().ok_or_else(|| Failure::new(404, "NotFound", format!("nodemetrics.metrics.k8s.io {n:?} not found")))?;
                    v["kind"] = "NodeMetrics".into();
                    v["apiVersion"] = "metrics.k8s.io/v1beta1".into();
                    v
                }
                None => json!({ "kind": "NodeMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": items }),
            }
        }
        _ => return Err(Failure::not_found_path()),
    };
    Ok(value)
}

/// SelfSubjectAccessReview / SelfSubjectRulesReview / SelfSubjectReview: the one user is a
/// cluster admin (`system:masters`), as the kubeconfig kubesim writes.
fn access_review(req: &Request, method: &str, target: &Target) -> Result<Response, Failure> {
    if method != "POST" {
        return Err(Failure::method_not_allowed());
    }
    let mut body = body_value(req)?;
    let kind = target.res.kind;
    body["kind"] = kind.into();
    body["apiVersion"] = format!("{}/{}", target.res.group, target.res.version).into();
    body.as_object_mut().ok_or_else(|| Failure::bad_request("not an object"))?.entry("metadata").or_insert_with(|| json!({}));
    body["metadata"]["creationTimestamp"] = Value::Null;
    body["status"] = match kind {
        "SelfSubjectAccessReview" => json!({ "allowed": true, "reason": "kubesim: the only user is a cluster admin" }),
        "SelfSubjectRulesReview" => json!({
            "resourceRules": [{ "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"] }],
            "nonResourceRules": [{ "verbs": ["*"], "nonResourceURLs": ["*"] }],
            "incomplete": false,
        }),
        _ => json!({ "userInfo": { "username": "kubesim-admin", "groups": ["system:masters", "system:authenticated"] } }),
    };
    Ok(Response::json(201, &body))
}
