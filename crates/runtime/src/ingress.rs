//! ingress-nginx's data plane: the routing configuration its controller renders into nginx
//! (servers by host, locations by path, upstreams of endpoint addresses), and what nginx does
//! with a request that reaches a controller pod's port 80 or 443.
//!
//! The controller's informer (`kubesim_sim::ingress_nginx`) computes the [`Config`] from the
//! Ingresses, IngressClasses, Services, EndpointSlices and Secrets it owns and publishes it in
//! the fabric, as the CoreDNS informer publishes the cluster DNS view. When kube-proxy's rules,
//! a hostPort or a pod IP bring a connection to a running controller pod listening there,
//! [`crate::net::route_remote`] hands it to [`proxy`]: the server is chosen by the request's
//! `Host`, the location by its path, and nginx opens a second connection from the controller
//! pod's address to one of the upstream's endpoint pod IPs (ingress-nginx balances over
//! endpoints, not the ClusterIP), routed through `route_remote` again so the backend's node
//! and its rules are those of any other packet. The backend's response comes back with the
//! `Server` header cleared (`more_clear_headers Server`).
//!
//! Matching follows the Kubernetes Ingress API: `Exact` is string equality, `Prefix` compares
//! `/`-separated elements (a trailing slash is ignored), the longest matching path wins and
//! `Exact` wins a tie; `ImplementationSpecific` is what ingress-nginx writes for it, an nginx
//! prefix location (`location "/foo"`, a string prefix). A host `*.foo.com` covers exactly one
//! label (ingress-nginx's `~^(?<subdomain>[\w-]+)\.foo\.com$` server name).
//!
//! Deliberate simplifications (README "Networking"): TLS is not modelled by the clients, so a
//! request on 443 carries its HTTP bytes in the clear and is served as nginx would after the
//! handshake (the certificate is the TLS section's Secret when it exists, else the controller's
//! fake certificate, and neither is checked by anyone); round robin over endpoints is a hash of
//! the client connection; annotations other than `rewrite-target` (without capture groups) and
//! `ssl-redirect` are ignored.

use crate::fabric::Fabric;
use crate::net::{route_remote, Delivery, Hop, Packet};
use kubesim_api::Millis;
use kubesim_host::Hosts;
use kubesim_os::net::http::{self, nginx, Request};
use kubesim_os::program::{NetCall, NetError, NetReply};
use std::collections::BTreeMap;

/// The catch-all server's name (ingress-nginx's `defServerName`).
pub const DEFAULT_SERVER: &str = "_";

/// `proxy_read_timeout` (60 s) bounds the wait for the backend.
const PROXY_READ_TIMEOUT_MS: u64 = 60_000;

/// networking/v1 PathType.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathType {
    /// The URL path, exactly (case-sensitive).
    Exact,
    /// A prefix of `/`-separated path elements.
    Prefix,
    /// Up to the IngressClass: ingress-nginx writes an nginx prefix location.
    ImplementationSpecific,
}

impl PathType {
    /// From the API's spelling.
    pub fn parse(text: &str) -> Option<PathType> {
        match text {
            "Exact" => Some(PathType::Exact),
            "Prefix" => Some(PathType::Prefix),
            "ImplementationSpecific" => Some(PathType::ImplementationSpecific),
            _ => None,
        }
    }
}

/// Whether a request path matches an Ingress path of this type.
pub fn path_matches(path_type: PathType, path: &str, request: &str) -> bool {
    match path_type {
        PathType::Exact => request == path,
        PathType::Prefix => {
            let elements = |p: &str| p.split('/').filter(|e| !e.is_empty()).map(str::to_string).collect::<Vec<_>>();
            let (want, got) = (elements(path), elements(request));
            got.len() >= want.len() && want.iter().zip(&got).all(|(a, b)| a == b)
        }
        PathType::ImplementationSpecific => request.starts_with(if path.is_empty() { "/" } else { path }),
    }
}

/// Whether a request's host (lowercase, without port) is served by a rule's host: equal, or
/// `*.suffix` with exactly one label of word characters or `-` before the suffix.
pub fn host_matches(rule: &str, host: &str) -> bool {
    match rule.strip_prefix("*.") {
        Some(suffix) => host
            .strip_suffix(suffix)
            .and_then(|h| h.strip_suffix('.'))
            .is_some_and(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')),
        None => rule.eq_ignore_ascii_case(host),
    }
}

/// Where a location sends requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The controller's `upstream-default-backend`: nginx's `return 404`.
    Default,
    /// A Service port's upstream.
    Upstream(Upstream),
}

/// An nginx upstream: a Service port and its ready endpoints (pod IP, target port).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// ingress-nginx's upstream name, `namespace-service-port`.
    pub name: String,
    /// The endpoints requests are balanced over; empty → 503.
    pub endpoints: Vec<(String, u16)>,
}

/// One location of a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The Ingress path (`/` for the server's root location).
    pub path: String,
    /// How it matches.
    pub path_type: PathType,
    /// Where it sends requests.
    pub backend: Backend,
    /// `namespace/name` of the Ingress that defined it (empty for the catch-all default).
    pub ingress: String,
    /// `nginx.ingress.kubernetes.io/rewrite-target`: the URI the backend sees.
    pub rewrite_target: Option<String>,
    /// Plain-HTTP requests get a 308 to https (`ssl-redirect`, on for hosts with a TLS section).
    pub ssl_redirect: bool,
}

/// One nginx server: a host and its locations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// The host (`_` for the catch-all server), possibly `*.suffix`.
    pub hostname: String,
    /// Its locations; every server has a root location.
    pub locations: Vec<Location>,
    /// `namespace/name` of the TLS Secret serving this host, if an Ingress names one.
    pub tls_secret: Option<String>,
}

impl Server {
    /// The location for a request path: the longest matching path, `Exact` before the others
    /// on a tie.
    pub fn location(&self, path: &str) -> Option<&Location> {
        self.locations
            .iter()
            .filter(|l| path_matches(l.path_type, &l.path, path))
            .max_by_key(|l| (l.path.split('/').filter(|e| !e.is_empty()).count(), l.path_type == PathType::Exact, l.path.len()))
    }
}

/// The controller's rendered configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// The servers, by hostname (the catch-all `_` among them).
    pub servers: BTreeMap<String, Server>,
}

impl Config {
    /// nginx's server for a request host: an exact name, else the first wildcard that covers
    /// it, else the catch-all.
    pub fn server(&self, host: &str) -> Option<&Server> {
        if let Some(server) = self.servers.get(host).filter(|s| s.hostname != DEFAULT_SERVER) {
            return Some(server);
        }
        self.servers.values().find(|s| s.hostname.starts_with("*.") && host_matches(&s.hostname, host)).or_else(|| self.servers.get(DEFAULT_SERVER))
    }
}

/// Whether a container image is the ingress-nginx controller (`registry.k8s.io/ingress-nginx/controller:v1.x`).
pub fn is_controller_image(image: &str) -> bool {
    image.contains("ingress-nginx/controller")
}

/// A connection that reached a running controller pod on port 80 or 443.
pub struct Arrival<'a> {
    /// The controller pod's host and pod IP.
    pub controller: (&'a str, &'a str),
    /// The client's address and port.
    pub client: (&'a str, u16),
    /// The port it arrived on.
    pub port: u16,
    /// The bytes the client sent.
    pub data: &'a [u8],
    /// When.
    pub now: Millis,
    /// The client ↔ controller part of the latency.
    pub round_trip: Millis,
}

/// nginx's answer to a connection that reached a controller pod, after the second hop to a
/// backend when a location proxies.
pub fn proxy(hosts: &mut Hosts, fabric: &Fabric, config: &Config, arrival: &Arrival) -> Delivery {
    let Arrival { controller, client, port, data, now, round_trip } = *arrival;
    // The routing decision, recorded as the packet's ingress hop.
    let mut hop = Hop::Ingress {
        controller: (controller.1.to_string(), port),
        host: String::new(),
        path: String::new(),
        server: String::new(),
        location: None,
        ingress: None,
        upstream: None,
        status: 0,
    };
    let answer = |bytes: Vec<u8>, latency_ms: Millis, mut hop: Hop| {
        if let Hop::Ingress { status, .. } = &mut hop {
            *status = http::Response::parse(&bytes).map_or(0, |r| r.status);
        }
        // nginx answered itself: the packet ends at the controller pod.
        let target = Some((controller.1.to_string(), port));
        Delivery { hops: vec![hop], target, ..Delivery::answer(NetReply::Tcp(Ok(bytes)), latency_ms) }
    };
    let https = port == 443;
    let Ok(request) = Request::parse(data) else { return answer(page(400, now, &[]), round_trip, hop) };
    let host = request.header("host").map(|h| h.rsplit_once(':').map_or(h, |(name, _)| name)).unwrap_or("").to_ascii_lowercase();
    let path = request.path().to_string();
    let server = config.server(&host);
    let location = server.and_then(|s| s.location(&path));
    if let Hop::Ingress { host: h, path: p, server: s, location: l, ingress: i, .. } = &mut hop {
        (*h, *p) = (host.clone(), path.clone());
        *s = server.map(|s| s.hostname.clone()).unwrap_or_default();
        *l = location.map(|l| format!("{} ({:?})", if l.path.is_empty() { "/" } else { &l.path }, l.path_type));
        *i = location.map(|l| l.ingress.clone()).filter(|i| !i.is_empty());
    }
    let Some(location) = location else { return answer(page(404, now, &[]), round_trip, hop) };
    if location.ssl_redirect && !https {
        let target = format!("https://{host}{}", request.target);
        return answer(page(308, now, &[("Location", &target)]), round_trip, hop);
    }
    let upstream = match &location.backend {
        Backend::Default => return answer(page(404, now, &[]), round_trip, hop),
        Backend::Upstream(u) if u.endpoints.is_empty() => return answer(page(503, now, &[]), round_trip, hop),
        Backend::Upstream(u) => u,
    };
    let key = kubesim_api::hash::Fnv64::new().bytes(client.0.as_bytes()).bytes(&client.1.to_be_bytes()).bytes(upstream.name.as_bytes()).finish();
    let (ip, target_port) = upstream.endpoints[(key % upstream.endpoints.len() as u64) as usize].clone();
    if let Hop::Ingress { upstream: u, .. } = &mut hop {
        *u = Some((upstream.name.clone(), (ip.clone(), target_port)));
    }
    let send = upstream_request(&request, location, &host, client.0, port, key);
    let call = NetCall::Tcp { dst: ip, port: target_port, send, timeout_ms: PROXY_READ_TIMEOUT_MS };
    // nginx's own connection, from an ephemeral port of the controller pod.
    let src_port = 32_768 + (key % 28_000) as u16;
    let dnat = match hosts.get_mut(controller.0) {
        Some(h) => {
            let node_ip = h.ip();
            crate::net::dnat(&mut h.netfilter, &node_ip, (controller.1, src_port), &call, now)
        }
        None => kubesim_host::netfilter::Dnat::Unchanged,
    };
    let second = route_remote(hosts, fabric, &Packet::new(controller.0, controller.1.to_string(), src_port, &call, dnat), now);
    let latency = round_trip + second.latency_ms;
    let bytes = match &second.reply {
        NetReply::Tcp(Ok(bytes)) if http::Response::parse(bytes).is_ok() => passthrough(bytes, https && location.ssl_redirect),
        NetReply::Tcp(Err(NetError::TimedOut)) => page(504, now, &[]),
        _ => page(502, now, &[]),
    };
    let ended = Hop::Upstream { outcome: second.outcome(), dropped_by: second.dropped_by.clone() };
    let mut delivery = answer(bytes, latency, hop);
    delivery.hops.extend(second.hops);
    delivery.hops.push(ended);
    Delivery { served_by: second.served_by, target: second.target, ..delivery }
}

/// The request nginx sends upstream: HTTP/1.1, the URI (rewritten when the location says so),
/// `proxy_set_header` lines of nginx.tmpl, then the client's other headers.
fn upstream_request(request: &Request, location: &Location, host: &str, client_ip: &str, port: u16, key: u64) -> Vec<u8> {
    let target = match &location.rewrite_target {
        Some(target) => match request.target.split_once('?') {
            Some((_, query)) => format!("{target}?{query}"),
            None => target.clone(),
        },
        None => request.target.clone(),
    };
    let scheme = if port == 443 { "https" } else { "http" };
    let original = request.header("host").unwrap_or(host).to_string();
    let mut headers: Vec<(String, String)> = vec![
        ("Host".into(), original.clone()),
        ("X-Request-ID".into(), format!("{key:016x}{:016x}", key.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15)),
        ("X-Real-IP".into(), client_ip.into()),
        ("X-Forwarded-For".into(), client_ip.into()),
        ("X-Forwarded-Host".into(), original),
        ("X-Forwarded-Port".into(), port.to_string()),
        ("X-Forwarded-Proto".into(), scheme.into()),
        ("X-Forwarded-Scheme".into(), scheme.into()),
        ("X-Scheme".into(), scheme.into()),
    ];
    if let Some(forwarded) = request.header("x-forwarded-for") {
        headers.push(("X-Original-Forwarded-For".into(), forwarded.into()));
    }
    for (k, v) in &request.headers {
        let lower = k.to_ascii_lowercase();
        if !matches!(lower.as_str(), "host" | "connection" | "x-forwarded-for" | "x-real-ip" | "x-request-id" | "proxy") {
            headers.push((k.clone(), v.clone()));
        }
    }
    let upstream = Request { method: request.method.clone(), target, version: "HTTP/1.1".into(), headers, body: request.body.clone() };
    upstream.to_bytes()
}

/// The backend's response as nginx relays it: the `Server` header cleared, and HSTS added on
/// https for a host with a TLS section (`hsts: true`, max-age one year, includeSubDomains).
fn passthrough(bytes: &[u8], hsts: bool) -> Vec<u8> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n").map_or(bytes.len(), |p| p + 4);
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let mut out = String::new();
    for line in head.split("\r\n").filter(|l| !l.is_empty()) {
        if line.split_once(':').is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("server")) {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    if hsts {
        out.push_str("Strict-Transport-Security: max-age=31536000; includeSubDomains\r\n");
    }
    out.push_str("\r\n");
    let mut reply = out.into_bytes();
    reply.extend_from_slice(&bytes[end.min(bytes.len())..]);
    reply
}

/// nginx's own response: its built-in page for `status`, `server_tokens off` (no version, no
/// `Server` header).
fn page(status: u16, now: Millis, extra: &[(&str, &str)]) -> Vec<u8> {
    let body = nginx::error_page(status, "1.27.1", false);
    let unix = kubesim_api::time::EPOCH_UNIX_SECONDS as u64 + now / 1000;
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nDate: {}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: keep-alive\r\n",
        nginx::reason(status),
        http::http_date(unix),
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&body);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path-matching table of the Kubernetes docs (concepts/services-networking/ingress,
    /// "Examples"): kind, the Ingress's paths, the request path, whether a path matches.
    #[test]
    fn the_docs_path_matching_table() {
        use PathType::{Exact, Prefix};
        type Row = (&'static [(PathType, &'static str)], &'static str, bool);
        let table: &[Row] = &[
            (&[(Prefix, "/")], "/anything/at/all", true),
            (&[(Exact, "/foo")], "/foo", true),
            (&[(Exact, "/foo")], "/bar", false),
            (&[(Exact, "/foo")], "/foo/", false),
            (&[(Exact, "/foo/")], "/foo", false),
            (&[(Prefix, "/foo")], "/foo", true),
            (&[(Prefix, "/foo")], "/foo/", true),
            (&[(Prefix, "/foo/")], "/foo", true),
            (&[(Prefix, "/foo/")], "/foo/", true),
            (&[(Prefix, "/aaa/bb")], "/aaa/bbb", false),
            (&[(Prefix, "/aaa/bbb")], "/aaa/bbb", true),
            (&[(Prefix, "/aaa/bbb/")], "/aaa/bbb", true),
            (&[(Prefix, "/aaa/bbb")], "/aaa/bbb/", true),
            (&[(Prefix, "/aaa/bbb")], "/aaa/bbb/ccc", true),
            (&[(Prefix, "/aaa/bbb")], "/aaa/bbbxyz", false),
            (&[(Prefix, "/"), (Prefix, "/aaa")], "/aaa/ccc", true),
            (&[(Prefix, "/"), (Prefix, "/aaa"), (Prefix, "/aaa/bbb")], "/aaa/bbb", true),
            (&[(Prefix, "/"), (Prefix, "/aaa"), (Prefix, "/aaa/bbb")], "/ccc", true),
            (&[(Prefix, "/aaa")], "/ccc", false),
            (&[(Prefix, "/foo"), (Exact, "/foo")], "/foo", true),
        ];
        for (paths, request, want) in table {
            let got = paths.iter().any(|(t, p)| path_matches(*t, p, request));
            assert_eq!(got, *want, "{paths:?} {request}");
        }
        // Which path wins among several: the longest; Exact over Prefix on a tie.
        let server = |paths: &[(PathType, &str)]| Server {
            hostname: DEFAULT_SERVER.into(),
            locations: paths
                .iter()
                .map(|(t, p)| Location {
                    path: p.to_string(),
                    path_type: *t,
                    backend: Backend::Default,
                    ingress: String::new(),
                    rewrite_target: None,
                    ssl_redirect: false,
                })
                .collect(),
            tls_secret: None,
        };
        let won = |paths: &[(PathType, &str)], request: &str| server(paths).location(request).map(|l| (l.path_type, l.path.clone()));
        assert_eq!(won(&[(Prefix, "/"), (Prefix, "/aaa")], "/aaa/ccc"), Some((Prefix, "/aaa".into())));
        assert_eq!(won(&[(Prefix, "/"), (Prefix, "/aaa"), (Prefix, "/aaa/bbb")], "/aaa/bbb"), Some((Prefix, "/aaa/bbb".into())));
        assert_eq!(won(&[(Prefix, "/"), (Prefix, "/aaa"), (Prefix, "/aaa/bbb")], "/ccc"), Some((Prefix, "/".into())));
        assert_eq!(won(&[(Prefix, "/foo"), (Exact, "/foo")], "/foo"), Some((Exact, "/foo".into())), "prefers Exact");
        assert_eq!(won(&[(Prefix, "/aaa")], "/ccc"), None, "uses the default backend");
    }

    /// ImplementationSpecific is ingress-nginx's nginx prefix location: a string prefix.
    #[test]
    fn implementation_specific_is_an_nginx_prefix_location() {
        assert!(path_matches(PathType::ImplementationSpecific, "/foo", "/foo/bar"));
        assert!(path_matches(PathType::ImplementationSpecific, "/foo", "/foobar"));
        assert!(path_matches(PathType::ImplementationSpecific, "", "/anything"));
        assert!(!path_matches(PathType::ImplementationSpecific, "/foo", "/fo"));
    }

    /// Hosts (concepts/services-networking/ingress, "Hostname wildcards").
    #[test]
    fn host_wildcards_cover_exactly_one_label() {
        let cases: &[(&str, &str, bool)] = &[
            ("foo.bar.com", "foo.bar.com", true),
            ("foo.bar.com", "bar.com", false),
            ("foo.bar.com", "FOO.bar.com", true),
            ("*.foo.com", "bar.foo.com", true),
            ("*.foo.com", "baz.bar.foo.com", false),
            ("*.foo.com", "foo.com", false),
            ("*.foo.com", ".foo.com", false),
            ("*.foo.com", "my-app.foo.com", true),
        ];
        for (rule, host, want) in cases {
            assert_eq!(host_matches(rule, host), *want, "{rule} vs {host}");
        }
        let server = |host: &str| Server { hostname: host.into(), locations: Vec::new(), tls_secret: None };
        let mut config = Config::default();
        for h in [DEFAULT_SERVER, "*.foo.com", "bar.foo.com"] {
            config.servers.insert(h.into(), server(h));
        }
        assert_eq!(config.server("bar.foo.com").unwrap().hostname, "bar.foo.com", "an exact name before a wildcard");
        assert_eq!(config.server("baz.foo.com").unwrap().hostname, "*.foo.com");
        assert_eq!(config.server("a.b.foo.com").unwrap().hostname, DEFAULT_SERVER);
        assert_eq!(config.server("").unwrap().hostname, DEFAULT_SERVER, "no Host header: the catch-all");
    }

    #[test]
    fn nginx_pages_have_no_server_header_and_the_stock_body() {
        let bytes = page(404, 0, &[]);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("HTTP/1.1 404 Not Found\r\nDate: "), "{text}");
        assert!(!text.contains("Server:"));
        assert!(text.ends_with("<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"));
        assert!(String::from_utf8(page(503, 0, &[])).unwrap().contains("<title>503 Service Temporarily Unavailable</title>"));
        let relayed = String::from_utf8(passthrough(b"HTTP/1.1 200 OK\r\nServer: Go\r\nContent-Length: 2\r\n\r\nok", false)).unwrap();
        assert_eq!(relayed, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
}
