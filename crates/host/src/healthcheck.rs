//! kube-proxy's HTTP servers on its node, as the process serves them
//! (cmd/kube-proxy/app/server.go, pkg/proxy/healthcheck): what a connection to the node's
//! address (or, for the metrics server, to 127.0.0.1) on one of their ports gets.
//!
//! - The **service health server** (`service_health.go`): one listener per Service with a
//!   `healthCheckNodePort` (a LoadBalancer with `externalTrafficPolicy: Local`), on every node
//!   address. Any request gets `200` when this node has a ready endpoint of the Service and
//!   kube-proxy is healthy, else `503`, with the JSON body upstream writes (`{"service":
//!   {"namespace", "name"}, "localEndpoints": N, "serviceProxyHealthy": bool}`, tab-indented)
//!   and the `X-Load-Balancing-Endpoint-Weight` header. kube-proxy syncs it with its rules
//!   (`SyncServices` with the Services' health-check ports, `SyncEndpoints` with the number of
//!   distinct ready endpoint addresses on this node, `LocalReadyEndpoints`). Load balancers
//!   send their health checks here (`kubesim-sim`'s load balancer model).
//! - The **proxy health server** (`proxy_health.go`) on `0.0.0.0:10256`: `/healthz` and
//!   `/livez`, unhealthy when an update has been queued for longer than `healthTimeout`
//!   (2 × the 30 s sync period) without a sync. Cloud load balancers check it for
//!   `externalTrafficPolicy: Cluster` Services.
//! - The **metrics server** on `127.0.0.1:10249`: `/proxyMode` (`iptables`) and `/healthz`
//!   (`ok`), which the docs query from a shell on the node.
//!
//! Responses are written as Go's `net/http` writes them ([`kubesim_os::net::http::go`]).
//! Deliberate simplifications: the node is always eligible (kube-proxy does not watch its Node
//! here, so the ToBeDeletedByClusterAutoscaler taint and a deleted Node are not seen); the
//! metrics server serves no `/metrics` or `/configz`.

use kubesim_os::net::http::go::{go_not_found, go_response};
use kubesim_os::net::http::Request;
use std::collections::BTreeMap;

/// `--healthz-bind-address` (`0.0.0.0:10256`): the proxy health server's port.
pub const HEALTHZ_PORT: u16 = 10256;
/// `--metrics-bind-address` (`127.0.0.1:10249`): the metrics server's port, loopback only.
pub const METRICS_PORT: u16 = 10249;
/// The proxy health server's `healthTimeout`: 2 × `--iptables-sync-period` (30 s).
pub const HEALTH_TIMEOUT_MS: u64 = 60_000;
/// The proxy mode `/proxyMode` reports.
pub const PROXY_MODE: &str = "iptables";

/// A Service's namespace and name.
pub type ServiceName = (String, String);

/// One Service's health check (hcInstance): its port and this node's local endpoint count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HealthCheck {
    /// The `healthCheckNodePort` it listens on.
    pub port: u16,
    /// The Service's ready endpoints on this node (distinct addresses).
    pub endpoints: usize,
}

/// kube-proxy's servers on one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KubeProxyServers {
    /// Whether the kube-proxy process runs (its servers listen); false before it starts, while
    /// it is stopped and after the machine lost power.
    pub running: bool,
    /// The service health server's instances.
    services: BTreeMap<ServiceName, HealthCheck>,
    /// When the proxier last synced (`Updated`), virtual ms.
    last_updated: Option<u64>,
    /// The oldest update queued since (`QueuedUpdate`), virtual ms.
    oldest_pending: Option<u64>,
}

/// What a health check answered: the status and the body (the load balancer reads the status).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthAnswer {
    /// 200 or 503.
    pub status: u16,
    /// The JSON body.
    pub body: String,
}

impl KubeProxyServers {
    /// SyncServices: the Services that need a health check and their ports. Instances whose
    /// port changed or that are no longer needed close; new ones open with no endpoints.
    pub fn sync_services(&mut self, services: &BTreeMap<ServiceName, u16>) {
        self.services.retain(|name, hc| services.get(name) == Some(&hc.port));
        for (name, port) in services {
            self.services.entry(name.clone()).or_insert(HealthCheck { port: *port, endpoints: 0 });
        }
    }

    /// SyncEndpoints: each Service's ready endpoints on this node; Services not named have none.
    pub fn sync_endpoints(&mut self, endpoints: &BTreeMap<ServiceName, usize>) {
        for (name, hc) in self.services.iter_mut() {
            hc.endpoints = endpoints.get(name).copied().unwrap_or(0);
        }
    }

    /// QueuedUpdate: a Service or EndpointSlice change reached kube-proxy.
    pub fn queued_update(&mut self, now: u64) {
        self.oldest_pending.get_or_insert(now);
    }

    /// Updated: the proxier synced its rules.
    pub fn updated(&mut self, now: u64) {
        self.oldest_pending = None;
        self.last_updated = Some(now);
    }

    /// The process stops (or loses power): nothing listens and its state goes with it.
    pub fn stop(&mut self) {
        *self = KubeProxyServers::default();
    }

    /// The health-check instances, by Service.
    pub fn services(&self) -> &BTreeMap<ServiceName, HealthCheck> {
        &self.services
    }

    /// Health(): false once an update has waited longer than `healthTimeout` for a sync.
    pub fn healthy(&self, now: u64) -> bool {
        match (self.last_updated, self.oldest_pending) {
            (Some(_), Some(queued)) => now.saturating_sub(queued) < HEALTH_TIMEOUT_MS,
            // Starting up (never synced) or fully synced.
            _ => true,
        }
    }

    /// Whether a connection to `port` is accepted: `loopback` when it arrived on 127.0.0.1
    /// (the metrics server binds only there).
    pub fn listens(&self, port: u16, loopback: bool) -> bool {
        self.running && (port == HEALTHZ_PORT || (port == METRICS_PORT && loopback) || self.services.values().any(|hc| hc.port == port))
    }

    /// The TCP ports that accept connections (`loopback`: on 127.0.0.1, else on the node's
    /// address), in order.
    pub fn ports(&self, loopback: bool) -> Vec<u16> {
        if !self.running {
            return Vec::new();
        }
        let mut ports: Vec<u16> = self.services.values().map(|hc| hc.port).collect();
        ports.push(HEALTHZ_PORT);
        if loopback {
            ports.push(METRICS_PORT);
        }
        ports.sort_unstable();
        ports.dedup();
        ports
    }

    /// The service health handler (hcHandler.ServeHTTP) of the instance on `port`.
    pub fn service_health(&self, port: u16, now: u64) -> Option<(ServiceName, HealthAnswer)> {
        let (name, hc) = self.services.iter().find(|(_, hc)| hc.port == port)?;
        let healthy = self.healthy(now);
        let status = if hc.endpoints != 0 && healthy { 200 } else { 503 };
        // fmt.Sprintf of the dedented template, trimmed of newlines; %q quotes the names.
        let body = format!(
            "{{\n\t\"service\": {{\n\t\t\"namespace\": {},\n\t\t\"name\": {}\n\t}},\n\t\"localEndpoints\": {},\n\t\"serviceProxyHealthy\": {healthy}\n}}",
            go_quote(&name.0),
            go_quote(&name.1),
            hc.endpoints
        );
        Some((name.clone(), HealthAnswer { status, body }))
    }

    /// The answer to `request` (raw HTTP) arriving on `port` at `now`; `None` when nothing
    /// listens there (the connection is refused).
    pub fn serve(&self, port: u16, loopback: bool, request: &[u8], now: u64) -> Option<Vec<u8>> {
        if !self.listens(port, loopback) {
            return None;
        }
        let unix = unix_seconds(now);
        let Ok(req) = Request::parse(request) else {
            // Go's server answers a malformed request itself.
            return Some(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request".to_vec());
        };
        let json = || vec![("Content-Type".to_string(), "application/json".to_string()), ("X-Content-Type-Options".to_string(), "nosniff".to_string())];
        if let Some(hc) = self.services.values().find(|hc| hc.port == port) {
            // Every path: the instance's handler is the server's handler.
            let (_, answer) = self.service_health(port, now)?;
            let mut headers = json();
            headers.push(("X-Load-Balancing-Endpoint-Weight".to_string(), hc.endpoints.to_string()));
            return Some(go_response(Some(&req), answer.status, headers, answer.body.as_bytes(), unix));
        }
        let path = req.path().to_string();
        if port == HEALTHZ_PORT {
            let healthy = self.healthy(now);
            let headers = json();
            let body = match path.as_str() {
                // healthz: healthy and the node eligible; livez: healthy.
                "/healthz" => self.proxy_health_json(now, Some(true)),
                "/livez" => self.proxy_health_json(now, None),
                _ => return Some(go_not_found(Some(&req), unix)),
            };
            return Some(go_response(Some(&req), if healthy { 200 } else { 503 }, headers, body.as_bytes(), unix));
        }
        let text = vec![("Content-Type".to_string(), "text/plain; charset=utf-8".to_string()), ("X-Content-Type-Options".to_string(), "nosniff".to_string())];
        Some(match path.as_str() {
            "/proxyMode" => go_response(Some(&req), 200, text, PROXY_MODE.as_bytes(), unix),
            "/healthz" => go_response(Some(&req), 200, text, b"ok", unix),
            _ => go_not_found(Some(&req), unix),
        })
    }

    /// The ProxyHealth JSON (`json.Marshal`): `lastUpdated` is now when healthy (as upstream
    /// reports for compatibility), `nodeEligible` only on `/healthz`, the IPv4 proxier's
    /// status once it has synced.
    fn proxy_health_json(&self, now: u64, node_eligible: Option<bool>) -> String {
        let healthy = self.healthy(now);
        let last = if healthy { Some(now) } else { self.last_updated };
        let mut s = format!("{{\"lastUpdated\":\"{}\",\"currentTime\":\"{}\"", go_time(last), go_time(Some(now)));
        if let Some(eligible) = node_eligible {
            s.push_str(&format!(",\"nodeEligible\":{eligible}"));
        }
        s.push_str(&format!(",\"healthy\":{healthy}"));
        if let Some(updated) = self.last_updated {
            s.push_str(&format!(",\"status\":{{\"IPv4\":{{\"lastUpdated\":\"{}\",\"healthy\":{healthy}}}}}", go_time(Some(updated))));
        }
        s.push('}');
        s
    }
}

/// Go's `%q` of a Kubernetes name (DNS labels: nothing to escape but quotes and backslashes).
fn go_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn unix_seconds(now: u64) -> u64 {
    (kubesim_api::time::EPOCH_UNIX_SECONDS + (now / 1000) as i64) as u64
}

/// A `time.Time` as `json.Marshal` writes it (RFC 3339 with trailing zeros of the fraction
/// dropped); the zero time when unset.
fn go_time(t: Option<u64>) -> String {
    let Some(ms) = t else { return "0001-01-01T00:00:00Z".to_string() };
    let secs = kubesim_os::time::strftime("%Y-%m-%dT%H:%M:%S", unix_seconds(ms) as i64, 0);
    match ms % 1000 {
        0 => format!("{secs}Z"),
        frac => format!("{secs}.{}Z", format!("{frac:03}").trim_end_matches('0')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nsn(ns: &str, name: &str) -> ServiceName {
        (ns.to_string(), name.to_string())
    }

    fn get(servers: &KubeProxyServers, port: u16, path: &str) -> kubesim_os::net::http::Response {
        let raw = servers.serve(port, false, format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(), 5_000).expect("listens");
        kubesim_os::net::http::Response::parse(&raw).unwrap()
    }

    /// upstream pkg/proxy/healthcheck/healthcheck_test.go TestServer: SyncServices opens an
    /// instance per Service (0 endpoints until SyncEndpoints), endpoints of unknown Services are
    /// dropped, a Service missing from SyncEndpoints drops to 0, a changed port reopens with 0,
    /// and the handler answers 200 only with endpoints (and 503 whenever kube-proxy is
    /// unhealthy), with the payload and headers testHandler checks.
    #[test]
    fn test_server() {
        let mut hcs = KubeProxyServers { running: true, ..KubeProxyServers::default() };
        hcs.sync_services(&BTreeMap::new());
        hcs.sync_endpoints(&BTreeMap::new());
        hcs.sync_endpoints(&BTreeMap::from([(nsn("a", "b"), 93)]));
        assert!(hcs.services().is_empty(), "unknown endpoints are dropped");
        hcs.sync_services(&BTreeMap::from([(nsn("a", "b"), 9376)]));
        assert_eq!(hcs.services()[&nsn("a", "b")], HealthCheck { port: 9376, endpoints: 0 });
        assert!(hcs.listens(9376, false), "listens on every node address");
        let check = |hcs: &KubeProxyServers, port: u16, status: u16, endpoints: usize, healthy: bool| {
            let r = get(hcs, port, "/healthz");
            assert_eq!(r.status, status, "port {port}");
            assert_eq!(r.header("Content-Type"), Some("application/json"));
            assert_eq!(r.header("X-Content-Type-Options"), Some("nosniff"));
            assert_eq!(r.header("X-Load-Balancing-Endpoint-Weight"), Some(endpoints.to_string().as_str()));
            let body = String::from_utf8(r.body).unwrap();
            assert!(body.contains(&format!("\"localEndpoints\": {endpoints},")), "{body}");
            assert!(body.ends_with(&format!("\"serviceProxyHealthy\": {healthy}\n}}")), "{body}");
        };
        check(&hcs, 9376, 503, 0, true);
        hcs.sync_endpoints(&BTreeMap::from([(nsn("a", "b"), 18)]));
        check(&hcs, 9376, 200, 18, true);
        hcs.sync_endpoints(&BTreeMap::from([(nsn("a", "b"), 0)]));
        check(&hcs, 9376, 503, 0, true);
        hcs.sync_endpoints(&BTreeMap::from([(nsn("a", "b"), 11)]));
        hcs.sync_endpoints(&BTreeMap::new());
        check(&hcs, 9376, 503, 0, true);
        hcs.sync_services(&BTreeMap::new());
        assert!(hcs.services().is_empty() && !hcs.listens(9376, false), "deleted");
        // Several Services.
        let (n1, n2, n3, n4) = (nsn("a", "b"), nsn("c", "d"), nsn("e", "f"), nsn("g", "h"));
        hcs.sync_services(&BTreeMap::from([(n1.clone(), 9376), (n2.clone(), 12909), (n3.clone(), 11113)]));
        hcs.sync_endpoints(&BTreeMap::from([(n1.clone(), 9), (n2.clone(), 3), (n3.clone(), 7)]));
        check(&hcs, 9376, 200, 9, true);
        check(&hcs, 12909, 200, 3, true);
        check(&hcs, 11113, 200, 7, true);
        // Remove n1, keep n2, change n3's port, add n4.
        hcs.sync_services(&BTreeMap::from([(n2.clone(), 12909), (n3.clone(), 11114), (n4.clone(), 11878)]));
        assert_eq!(hcs.services().len(), 3);
        check(&hcs, 12909, 200, 3, true);
        check(&hcs, 11114, 503, 0, true);
        check(&hcs, 11878, 503, 0, true);
        hcs.sync_endpoints(&BTreeMap::from([(n1, 9), (n2.clone(), 3), (n3.clone(), 7), (n4.clone(), 6)]));
        check(&hcs, 11114, 200, 7, true);
        hcs.sync_endpoints(&BTreeMap::from([(n3, 7), (n4, 6)]));
        check(&hcs, 12909, 503, 0, true);
        // A temporarily unhealthy proxy: an update queued longer than healthTimeout.
        hcs.updated(0);
        hcs.queued_update(1);
        let late = 1 + HEALTH_TIMEOUT_MS;
        let r = kubesim_os::net::http::Response::parse(&hcs.serve(11114, false, b"GET /healthz HTTP/1.1\r\n\r\n", late).unwrap()).unwrap();
        assert_eq!(r.status, 503);
        assert!(String::from_utf8_lossy(&r.body).contains("\"serviceProxyHealthy\": false"));
        hcs.updated(late);
        check(&hcs, 11114, 200, 7, true);
    }

    /// The body byte for byte (service_health.go's dedented template, trimmed of newlines), and
    /// Go's header order: the handler's headers sorted, then Date and Content-Length.
    #[test]
    fn the_health_check_answer_is_upstreams() {
        let mut hcs = KubeProxyServers { running: true, ..KubeProxyServers::default() };
        hcs.sync_services(&BTreeMap::from([(nsn("default", "loadbalancer"), 32122)]));
        hcs.sync_endpoints(&BTreeMap::from([(nsn("default", "loadbalancer"), 1)]));
        let raw = String::from_utf8(hcs.serve(32122, true, b"GET /healthz HTTP/1.1\r\nHost: localhost:32122\r\n\r\n", 0).unwrap()).unwrap();
        let body = "{\n\t\"service\": {\n\t\t\"namespace\": \"default\",\n\t\t\"name\": \"loadbalancer\"\n\t},\n\t\"localEndpoints\": 1,\n\t\"serviceProxyHealthy\": true\n}";
        assert_eq!(
            raw,
            format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nX-Load-Balancing-Endpoint-Weight: 1\r\nDate: Wed, 01 Jan 2025 00:00:00 GMT\r\nContent-Length: {}\r\n\r\n{body}", body.len())
        );
    }

    /// TestHealthzServer / TestLivezServer's healthy cases, /proxyMode, and what does not listen.
    #[test]
    fn proxy_health_and_metrics_servers() {
        let mut s = KubeProxyServers::default();
        assert!(s.serve(HEALTHZ_PORT, false, b"GET /healthz HTTP/1.1\r\n\r\n", 0).is_none(), "not started");
        s.running = true;
        let r = get(&s, HEALTHZ_PORT, "/healthz");
        assert_eq!(r.status, 200);
        assert_eq!(
            String::from_utf8(r.body).unwrap(),
            "{\"lastUpdated\":\"2025-01-01T00:00:05Z\",\"currentTime\":\"2025-01-01T00:00:05Z\",\"nodeEligible\":true,\"healthy\":true}"
        );
        s.updated(1_500);
        let r = get(&s, HEALTHZ_PORT, "/livez");
        assert_eq!(
            String::from_utf8(r.body).unwrap(),
            "{\"lastUpdated\":\"2025-01-01T00:00:05Z\",\"currentTime\":\"2025-01-01T00:00:05Z\",\"healthy\":true,\"status\":{\"IPv4\":{\"lastUpdated\":\"2025-01-01T00:00:01.5Z\",\"healthy\":true}}}"
        );
        assert_eq!(get(&s, HEALTHZ_PORT, "/other").status, 404);
        assert!(s.serve(METRICS_PORT, false, b"GET /proxyMode HTTP/1.1\r\n\r\n", 0).is_none(), "127.0.0.1 only");
        let raw = s.serve(METRICS_PORT, true, b"GET /proxyMode HTTP/1.1\r\nHost: localhost:10249\r\n\r\n", 0).unwrap();
        assert_eq!(kubesim_os::net::http::Response::parse(&raw).unwrap().body, b"iptables");
        s.stop();
        assert!(!s.listens(HEALTHZ_PORT, true));
    }
}
