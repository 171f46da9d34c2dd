//! Shared helpers: resource resolution, names as kubectl prints them, ages, JSON access and
//! writes that behave as the API server's update validation would.

use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kubesim_api::object::{resolve_resource, KindInfo, Object, Scope};
use kubesim_api::time::{human_duration, millis_of};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, ApiServer, Request};
use kubesim_store::resource_of;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `kind.group` lower-cased as kubectl prints it in `kind/name` (`deployment.apps`, `pod`).
pub fn kind_group(info: &KindInfo) -> String {
    match info.group() {
        "" => info.kind.to_ascii_lowercase(),
        group => format!("{}.{}", info.kind.to_ascii_lowercase(), group),
    }
}

/// `deployment.apps/web`.
pub fn type_name(info: &KindInfo, name: &str) -> String {
    format!("{}/{}", kind_group(info), name)
}

/// Resolves a resource type a user typed, with kubectl's error.
pub fn resolve(name: &str) -> Result<&'static KindInfo, String> {
    let lower = name.to_ascii_lowercase();
    // Prefer the newest HPA version and events in the core group, as kubectl's discovery does.
    let preferred = match lower.as_str() {
        "hpa"
        | "horizontalpodautoscaler"
        | "horizontalpodautoscalers"
        | "hpa.autoscaling"
        | "horizontalpodautoscaler.autoscaling"
        | "horizontalpodautoscalers.autoscaling" => kubesim_api::object::kind_info("autoscaling/v2", "HorizontalPodAutoscaler"),
        _ => None,
    };
    preferred.or_else(|| resolve_resource(name)).ok_or_else(|| format!("error: the server doesn't have a resource type \"{name}\""))
}

/// An object's age column (`translateTimestampSince`).
pub fn age(time: Option<&Time>, now: Millis) -> String {
    match time {
        None => "<unknown>".into(),
        Some(t) => human_duration(now.saturating_sub(millis_of(t))),
    }
}

/// The object's namespace for a kind's scope.
pub fn namespace_for(info: &KindInfo, namespace: &str) -> String {
    match info.scope {
        Scope::Namespaced => namespace.to_string(),
        Scope::Cluster => String::new(),
    }
}

/// Lists a kind, in namespace (None = all namespaces), in key order.
pub fn list(api: &ApiServer, info: &KindInfo, namespace: Option<&str>) -> Vec<Arc<Object>> {
    let namespace = match info.scope {
        Scope::Cluster => None,
        Scope::Namespaced => namespace,
    };
    let resource = resource_of(info);
    api.store().list(resource, namespace).filter(|o| o.api_version() == info.api_version || same_resource_other_version(info, o)).cloned().collect()
}

fn same_resource_other_version(info: &KindInfo, object: &Object) -> bool {
    // Objects of one resource stored under another served version (autoscaling v1/v2).
    object.kind() == info.kind
}

/// `labels.FormatLabels`: `k=v,k2=v2` sorted, `<none>` when empty.
pub fn format_labels(labels: Option<&BTreeMap<String, String>>) -> String {
    match labels {
        Some(l) if !l.is_empty() => l.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","),
        _ => "<none>".into(),
    }
}

/// `metav1.FormatLabelSelector`.
pub fn format_label_selector(selector: Option<&LabelSelector>) -> String {
    let Some(selector) = selector else { return "<none>".into() };
    let mut parts: Vec<String> = selector.match_labels.iter().flatten().map(|(k, v)| format!("{k}={v}")).collect();
    for expr in selector.match_expressions.iter().flatten() {
        let values = expr.values.clone().unwrap_or_default();
        let mut sorted = values.clone();
        kubesim_api::sort::sort(&mut sorted);
        parts.push(match expr.operator.as_str() {
            "In" => format!("{} in ({})", expr.key, sorted.join(",")),
            "NotIn" => format!("{} notin ({})", expr.key, sorted.join(",")),
            "Exists" => expr.key.clone(),
            "DoesNotExist" => format!("!{}", expr.key),
            op => format!("{} {op} ({})", expr.key, sorted.join(",")),
        });
    }
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(",")
    }
}

/// A LabelSelector from JSON (`spec.selector` of JSON-kept kinds).
pub fn label_selector_json(value: Option<&Value>) -> Option<LabelSelector> {
    value.and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// Reads a path (`spec.replicas`) from JSON.
pub fn jget<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = value;
    for part in path.split('.') {
        cur = cur.get(part)?;
    }
    Some(cur)
}

/// Integer at a JSON path, 0 if absent.
pub fn jint(value: &Value, path: &str) -> i64 {
    jget(value, path).and_then(|v| v.as_i64()).unwrap_or(0)
}

/// String at a JSON path.
pub fn jstr<'a>(value: &'a Value, path: &str) -> Option<&'a str> {
    jget(value, path).and_then(|v| v.as_str())
}

/// kubectl's rendering of an API error. Invalid errors print as cmdutil.CheckErr prints them
/// from the status details: `The Deployment "x" is invalid: spec.replicas: ...`, or one
/// `* cause` per line after the header when there are several.
pub fn server_error(err: &ApiError) -> String {
    if err.reason == "Invalid" {
        if let Some(text) = invalid_as_kubectl(&err.message) {
            return text;
        }
    }
    raw_server_error(err)
}

/// StandardErrorMessage: `Error from server (Reason): message` (what an aggregate of several
/// errors prints for each).
pub fn raw_server_error(err: &ApiError) -> String {
    if err.reason.is_empty() {
        format!("Error from server: {}", err.message)
    } else {
        format!("Error from server ({}): {}", err.reason, err.message)
    }
}

/// Checks the immutable fields kubectl users meet, then PUTs the update (the API server
/// defaults, allocates and validates it).
pub fn update(api: &mut ApiServer, object: Object, req: &mut Request) -> Result<Arc<Object>, ApiError> {
    check_update(api, &object)?;
    api.update(object, req)
}

/// A server-side dry run of an update (`--dry-run=server`): the whole update — defaults,
/// allocations, validation — on a scratch copy of the API server with a scratch RNG, so
/// nothing is written and the world's dice are untouched.
pub fn dry_run_update(api: &ApiServer, object: &Object) -> Result<(), ApiError> {
    use rand_core::SeedableRng;
    check_update(api, object)?;
    let mut scratch = api.clone();
    let mut rng = kubesim_apiserver::SimRng::seed_from_u64(0);
    let actor: Arc<str> = Arc::from(crate::ACTOR);
    let mut req = Request { now: 0, rng: &mut rng, actor: &actor };
    scratch.update(object.clone(), &mut req).map(|_| ())
}

/// The immutable fields kubectl users meet, checked before the update is sent (the API server
/// validates the rest after its allocations, as upstream's registry does).
pub fn check_update(api: &ApiServer, object: &Object) -> Result<(), ApiError> {
    if let Object::Deployment(new) = object {
        if let Some(info) = object.info() {
            if let Ok(current) = api.get(info, object.namespace(), object.name()) {
                if let Object::Deployment(old) = current.as_ref() {
                    let a = new.spec.as_ref().map(|s| &s.selector);
                    let b = old.spec.as_ref().map(|s| &s.selector);
                    if a != b {
                        let rendered = format!(
                            "v1.LabelSelector{{MatchLabels:map[string]string{{{}}}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}}",
                            a.and_then(|s| s.match_labels.as_ref())
                                .map(|m| m.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect::<Vec<_>>().join(", "))
                                .unwrap_or_default()
                        );
                        return Err(ApiError::invalid(format!(
                            "Deployment.apps {:?} is invalid: spec.selector: Invalid value: {rendered}: field is immutable",
                            object.name()
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// `Deployment.apps` / `Pod`, as Invalid errors name kinds.
pub fn qualified_kind(object: &Object) -> String {
    match object.info().map(|i| i.group()) {
        Some(group) if !group.is_empty() => format!("{}.{}", object.kind(), group),
        _ => object.kind().to_string(),
    }
}

/// Decodes JSON back into an object of the same kind.
pub fn from_json(info: &KindInfo, value: Value) -> Result<Object, String> {
    Object::from_json(info, value).map_err(|e| e.to_string())
}

/// An Invalid message (`Kind.group "name" is invalid: cause` or `... [c1, c2]`, as NewInvalid
/// words it) taken apart: what the API server's Status details carry.
pub struct InvalidMessage<'a> {
    /// The kind, without its group.
    pub kind: &'a str,
    /// The group ("" for core).
    pub group: &'a str,
    /// The name, still quoted.
    pub quoted_name: &'a str,
    /// One `field: message` per field error.
    pub causes: Vec<String>,
}

/// Parses an Invalid message; None when it is not of that shape. "error when creating "f": "
/// prefixes (AddSourceToErr) are skipped.
pub fn parse_invalid(message: &str) -> Option<InvalidMessage<'_>> {
    let (head, rest) = message.split_once(" is invalid: ")?;
    let head = head.rsplit(": ").next().unwrap_or(head);
    let (qualified, quoted_name) = head.split_once(' ')?;
    if !quoted_name.starts_with('"') {
        return None;
    }
    let (kind, group) = qualified.split_once('.').unwrap_or((qualified, ""));
    Some(InvalidMessage { kind, group, quoted_name, causes: split_causes(rest) })
}

/// The causes of an Invalid message rendered as kubectl's CheckErr does from the status
/// details (kind without group). None when the message is not of that shape.
pub fn invalid_as_kubectl(message: &str) -> Option<String> {
    let InvalidMessage { kind, quoted_name: name, causes, .. } = parse_invalid(message)?;
    Some(match causes.len() {
        0 => format!("The {kind} {name} is invalid"),
        1 => format!("The {kind} {name} is invalid: {}", causes[0]),
        _ => format!("The {kind} {name} is invalid: \n{}", causes.iter().map(|c| format!("* {c}")).collect::<Vec<_>>().join("\n")),
    })
}

/// Splits `[a: Required value, b: Invalid value: x, y: ...]` at the commas that start a new
/// field error (a path followed by an error type), keeping commas inside values.
fn split_causes(text: &str) -> Vec<String> {
    let inner = match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(inner) => inner,
        None => return vec![text.to_string()],
    };
    const TYPES: &[&str] =
        &["Required value", "Invalid value", "Unsupported value", "Duplicate value", "Forbidden", "Not found", "Too long", "Too many", "Internal error"];
    let starts_cause = |s: &str| s.split_once(": ").is_some_and(|(path, after)| !path.contains(' ') && TYPES.iter().any(|t| after.starts_with(t)));
    let mut causes: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, part) in inner.split(", ").enumerate() {
        if i > 0 && starts_cause(part) {
            causes.push(std::mem::take(&mut current));
        } else if i > 0 {
            current.push_str(", ");
        }
        current.push_str(part);
    }
    if !current.is_empty() || causes.is_empty() {
        causes.push(current);
    }
    causes
}
