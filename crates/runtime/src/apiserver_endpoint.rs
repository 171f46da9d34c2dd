//! The API server's address inside the cluster (the `kubernetes` Service's endpoint,
//! [`API_SERVER_IP`]:[`API_SERVER_PORT`]): what a pod's `curl https://kubernetes.default.svc/...`
//! gets back.
//!
//! kube-apiserver's answer as the default RBAC policy decides it: `/version`, `/healthz`,
//! `/livez` and `/readyz` to anyone (`system:public-info-viewer`); discovery (`/api`, `/apis`
//! and below) to authenticated callers — a service-account token in `Authorization: Bearer`
//! (`system:discovery`); everything else `403 Forbidden` with the authorizer's message naming
//! the user (`system:anonymous`, or the token's `system:serviceaccount:<ns>:<name>`).
//! Deliberate simplification (README "Networking"): Roles and RoleBindings are not evaluated,
//! so a service account that a binding would allow to read the API is refused as if it had no
//! binding (the default for every service account).

use kubesim_api::discovery;
use kubesim_api::Millis;
use serde_json::{json, Value};

/// The API server's address on the cluster network: kind's control-plane node, the first node
/// container (172.18.0.2). It answers whatever machine holds that address.
pub const API_SERVER_IP: &str = "172.18.0.2";
/// kube-apiserver's secure port.
pub const API_SERVER_PORT: u16 = 6443;

/// JSON in Go's field order, as `json.MarshalIndent` writes it (kube-apiserver pretty-prints
/// for curl and wget).
enum Go {
    Str(String),
    Num(i64),
    Obj(Vec<(&'static str, Go)>),
    Raw(Value),
}

impl Go {
    fn write(&self, out: &mut String, indent: usize) {
        match self {
            Go::Str(s) => out.push_str(&Value::String(s.clone()).to_string()),
            Go::Num(n) => out.push_str(&n.to_string()),
            Go::Raw(v) => {
                let text = serde_json::to_string_pretty(v).unwrap_or_default();
                out.push_str(&text.replace('\n', &format!("\n{}", "  ".repeat(indent))));
            }
            Go::Obj(fields) if fields.is_empty() => out.push_str("{}"),
            Go::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    out.push_str(&"  ".repeat(indent + 1));
                    out.push_str(&format!("\"{k}\": "));
                    v.write(out, indent + 1);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                out.push_str(&"  ".repeat(indent));
                out.push('}');
            }
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out
    }
}

fn s(text: &str) -> Go {
    Go::Str(text.to_string())
}

/// `/version` (version.Info's field order).
fn version() -> Go {
    let v = discovery::version();
    let field = |k: &str| s(v.get(k).and_then(Value::as_str).unwrap_or(""));
    let keys = [
        "major",
        "minor",
        "emulationMajor",
        "emulationMinor",
        "minCompatibilityMajor",
        "minCompatibilityMinor",
        "gitVersion",
        "gitCommit",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    ];
    Go::Obj(keys.iter().map(|k| (*k, field(k))).collect())
}

/// Who a request authenticates as: the token's subject, or anonymous.
fn user(headers: &[(String, String)]) -> Option<String> {
    let auth = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("authorization")).map(|(_, v)| v.trim())?;
    let token = auth.strip_prefix("Bearer ").or_else(|| auth.strip_prefix("bearer "))?.trim();
    let payload = token.split('.').nth(1)?;
    let standard: String = payload
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    let padded = format!("{standard}{}", "=".repeat((4 - standard.len() % 4) % 4));
    let bytes = kubesim_os::applets::hash::base64_decode(padded.as_bytes())?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("sub").and_then(|s| s.as_str()).map(str::to_string)
}

/// The request verb RBAC sees for a method (and whether a name was given).
fn verb(method: &str, named: bool, watch: bool) -> &'static str {
    match (method, named) {
        _ if watch => "watch",
        ("GET" | "HEAD", true) => "get",
        ("GET" | "HEAD", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "get",
    }
}

/// The authorizer's `Forbidden` for a path: a resource request (`pods is forbidden: User ...
/// cannot list resource "pods" in API group "" in the namespace "default"`) or a non-resource
/// one (`forbidden: User ... cannot get path "/"`).
fn forbidden(method: &str, path: &str, query: &str, user: &str) -> Go {
    let parts: Vec<&str> = path.trim_matches('/').split('/').filter(|p| !p.is_empty()).collect();
    let (group, rest) = match parts.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => ("", &[][..]),
    };
    let watch = query.split('&').any(|kv| kv == "watch=true" || kv == "watch=1");
    let resource = match rest {
        ["namespaces", ns, resource, tail @ ..] => Some((Some(*ns), *resource, tail.first().copied(), tail.get(1).copied())),
        [resource, tail @ ..] if !rest.is_empty() => Some((None, *resource, tail.first().copied(), tail.get(1).copied())),
        _ => None,
    };
    let (message, details) = match resource {
        Some((ns, resource, name, sub)) => {
            let verb = verb(method, name.is_some(), watch);
            let full = match sub {
                Some(sub) => format!("{resource}/{sub}"),
                None => resource.to_string(),
            };
            // NewForbidden names the group-qualified resource (`deployments.apps`).
            let qualified = if group.is_empty() { resource.to_string() } else { format!("{resource}.{group}") };
            let subject = match name {
                Some(name) => format!("{qualified} \"{name}\" is forbidden"),
                None => format!("{qualified} is forbidden"),
            };
            let scope = match ns {
                Some(ns) => format!(" in the namespace \"{ns}\""),
                None => " at the cluster scope".to_string(),
            };
            // StatusDetails' field order: name, group, kind.
            let mut details = Vec::new();
            if let Some(name) = name {
                details.push(("name", s(name)));
            }
            if !group.is_empty() {
                details.push(("group", s(group)));
            }
            details.push(("kind", s(resource)));
            (format!("{subject}: User \"{user}\" cannot {verb} resource \"{full}\" in API group \"{group}\"{scope}"), Go::Obj(details))
        }
        None => (format!("forbidden: User \"{user}\" cannot {} path \"{path}\"", method.to_ascii_lowercase()), Go::Obj(Vec::new())),
    };
    Go::Obj(vec![
        ("kind", s("Status")),
        ("apiVersion", s("v1")),
        ("metadata", Go::Obj(Vec::new())),
        ("status", s("Failure")),
        ("message", Go::Str(message)),
        ("reason", s("Forbidden")),
        ("details", details),
        ("code", Go::Num(403)),
    ])
}

/// Go's `http.TimeFormat` for the `Date` header.
fn http_date(now: Millis) -> String {
    kubesim_api::time::time_at(now).0.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

fn response(status: u16, reason: &str, content_type: &str, body: &[u8], now: Millis) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nCache-Control: no-cache, private\r\nContent-Type: {content_type}\r\nX-Content-Type-Options: nosniff\r\nDate: {}\r\nContent-Length: {}\r\n\r\n",
        http_date(now),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn json_response(status: u16, reason: &str, value: &Go, now: Millis) -> Vec<u8> {
    response(status, reason, "application/json", value.text().as_bytes(), now)
}

/// kube-apiserver's answer to the bytes of one HTTP request.
pub fn answer(request: &[u8], now: Millis) -> Vec<u8> {
    let text = String::from_utf8_lossy(request);
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let (Some(method), Some(target)) = (first.next(), first.next()) else {
        // Not HTTP (a TLS client hello, `nc` sending text): Go's server answers 400.
        return response(400, "Bad Request", "text/plain; charset=utf-8", b"Client sent an HTTP request to an HTTPS server.\n", now);
    };
    let headers: Vec<(String, String)> =
        lines.take_while(|l| !l.is_empty()).filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = if path.is_empty() { "/" } else { path };
    let caller = user(&headers);
    let get = matches!(method, "GET" | "HEAD");
    match path.trim_end_matches('/') {
        "/version" if get => return json_response(200, "OK", &version(), now),
        "/healthz" | "/livez" | "/readyz" if get => return response(200, "OK", "text/plain; charset=utf-8", b"ok", now),
        _ => {}
    }
    if let (Some(_), true) = (&caller, get) {
        let resources = discovery::resources();
        let parts: Vec<&str> = path.trim_matches('/').split('/').filter(|p| !p.is_empty()).collect();
        let found = match parts.as_slice() {
            ["api"] => Some(Go::Obj(vec![
                ("kind", s("APIVersions")),
                ("versions", Go::Raw(json!(["v1"]))),
                ("serverAddressByClientCIDRs", Go::Raw(json!([{ "clientCIDR": "0.0.0.0/0", "serverAddress": format!("{API_SERVER_IP}:{API_SERVER_PORT}") }]))),
            ])),
            ["apis"] => Some(Go::Raw(discovery::api_group_list(resources))),
            ["api", "v1"] => discovery::resource_list(resources, "", "v1").map(Go::Raw),
            ["apis", group] => discovery::api_group(resources, group).map(Go::Raw),
            ["apis", group, version] => discovery::resource_list(resources, group, version).map(Go::Raw),
            _ => None,
        };
        if let Some(value) = found {
            return json_response(200, "OK", &value, now);
        }
    }
    let user = caller.unwrap_or_else(|| "system:anonymous".into());
    json_response(403, "Forbidden", &forbidden(method, path, query, &user), now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(reply: &[u8]) -> (String, Value) {
        let text = String::from_utf8_lossy(reply).to_string();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        (head.lines().next().unwrap().to_string(), serde_json::from_str(body).unwrap_or(Value::Null))
    }

    fn token(sub: &str) -> String {
        let b64 = |s: &str| kubesim_os::applets::hash::base64_encode(s.as_bytes()).trim_end_matches('=').replace('+', "-").replace('/', "_");
        format!("{}.{}.sig", b64("{}"), b64(&format!("{{\"sub\":\"{sub}\"}}")))
    }

    #[test]
    fn statuses_are_written_in_go_field_order() {
        let reply = String::from_utf8(answer(b"GET /apis/apps/v1/namespaces/default/deployments/web HTTP/1.1\r\n\r\n", 1_000)).unwrap();
        let want = "HTTP/1.1 403 Forbidden\r\nCache-Control: no-cache, private\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nDate: Wed, 01 Jan 2025 00:00:01 GMT\r\nContent-Length: 379\r\n\r\n{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"deployments.apps \\\"web\\\" is forbidden: User \\\"system:anonymous\\\" cannot get resource \\\"deployments\\\" in API group \\\"apps\\\" in the namespace \\\"default\\\"\",\n  \"reason\": \"Forbidden\",\n  \"details\": {\n    \"name\": \"web\",\n    \"group\": \"apps\",\n    \"kind\": \"deployments\"\n  },\n  \"code\": 403\n}";
        assert_eq!(reply, want);
    }

    #[test]
    fn anyone_reads_the_version_and_health() {
        let (status, v) = body(&answer(b"GET /version HTTP/1.1\r\nHost: kubernetes\r\n\r\n", 0));
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(v["gitVersion"], "v1.34.0");
        let reply = String::from_utf8(answer(b"GET /healthz HTTP/1.1\r\n\r\n", 0)).unwrap();
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n") && reply.ends_with("\r\n\r\nok"), "{reply}");
    }

    #[test]
    fn anonymous_callers_are_forbidden_as_rbac_words_it() {
        let (status, v) = body(&answer(b"GET / HTTP/1.1\r\n\r\n", 0));
        assert_eq!(status, "HTTP/1.1 403 Forbidden");
        assert_eq!(v["message"], "forbidden: User \"system:anonymous\" cannot get path \"/\"");
        let (_, v) = body(&answer(b"GET /api HTTP/1.1\r\n\r\n", 0));
        assert_eq!(v["message"], "forbidden: User \"system:anonymous\" cannot get path \"/api\"");
        let (_, v) = body(&answer(b"GET /api/v1/namespaces/default/pods HTTP/1.1\r\n\r\n", 0));
        assert_eq!(v["message"], "pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"");
        assert_eq!(v["details"], json!({ "kind": "pods" }));
    }

    #[test]
    fn service_accounts_discover_but_are_not_authorized_for_resources() {
        let auth = format!("GET /api HTTP/1.1\r\nAuthorization: Bearer {}\r\n\r\n", token("system:serviceaccount:default:default"));
        let (status, v) = body(&answer(auth.as_bytes(), 0));
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(v["kind"], "APIVersions");
        assert_eq!(v["serverAddressByClientCIDRs"][0]["serverAddress"], "172.18.0.2:6443");
        let get = format!(
            "GET /apis/apps/v1/namespaces/prod/deployments/web HTTP/1.1\r\nAuthorization: Bearer {}\r\n\r\n",
            token("system:serviceaccount:prod:builder")
        );
        let (status, v) = body(&answer(get.as_bytes(), 0));
        assert_eq!(status, "HTTP/1.1 403 Forbidden");
        assert_eq!(
            v["message"],
            "deployments.apps \"web\" is forbidden: User \"system:serviceaccount:prod:builder\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"prod\""
        );
        let list = format!("GET /api/v1/nodes HTTP/1.1\r\nAuthorization: Bearer {}\r\n\r\n", token("system:serviceaccount:default:default"));
        let (_, v) = body(&answer(list.as_bytes(), 0));
        assert_eq!(
            v["message"],
            "nodes is forbidden: User \"system:serviceaccount:default:default\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
        );
    }
}
