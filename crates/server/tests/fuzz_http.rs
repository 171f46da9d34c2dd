//! Fuzzing the HTTP API on the stable toolchain: a seeded generator writes HTTP/1.1 requests
//! (methods, paths of the Kubernetes REST API and kubesim's control API, percent-encoding,
//! queries, headers, Content-Length and chunked bodies, JSON/YAML/patch bodies of every
//! registered kind) and mutates their bytes. Two targets:
//!
//! - the request parser (`http::read_request`) on the bytes, pipelined, in memory: never a
//!   panic, never a body over the limit;
//! - a live `kubesim serve` over TCP: every request gets an HTTP response (a handler that
//!   panicked would drop the connection), the server answers a health check at the end.
//!
//! Thousands of parses and a few hundred served requests by default (seconds);
//! `KUBESIM_FUZZ_ITERS=N` runs N of each, `KUBESIM_FUZZ_SEED=S` starts elsewhere. The
//! executions are reported on stderr.

use kubesim_server::http::{read_request, Limits, ReadError};
use kubesim_server::{Config, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::{iterations, peak_rss_mib, report, seed, Rng};

const PATHS: &[&str] = &[
    "/",
    "/api",
    "/apis",
    "/api/v1",
    "/apis/apps/v1",
    "/version",
    "/healthz",
    "/readyz",
    "/openapi/v2",
    "/openapi/v3",
    "/openapi/v3/api/v1",
    "/api/v1/namespaces",
    "/api/v1/namespaces/default",
    "/api/v1/namespaces/default/pods",
    "/api/v1/namespaces/default/pods/p",
    "/api/v1/namespaces/default/pods/p/status",
    "/api/v1/namespaces/default/pods/p/log",
    "/api/v1/namespaces/default/pods/p/eviction",
    "/api/v1/namespaces/default/pods/p/binding",
    "/api/v1/namespaces/default/pods/p/ephemeralcontainers",
    "/api/v1/pods",
    "/api/v1/nodes",
    "/api/v1/nodes/node-1",
    "/api/v1/nodes/node-1/status",
    "/api/v1/namespaces/default/services",
    "/api/v1/namespaces/default/configmaps/c",
    "/apis/apps/v1/namespaces/default/deployments",
    "/apis/apps/v1/namespaces/default/deployments/web",
    "/apis/apps/v1/namespaces/default/deployments/web/scale",
    "/apis/apps/v1/namespaces/default/deployments/web/status",
    "/apis/batch/v1/namespaces/default/jobs",
    "/apis/metrics.k8s.io/v1beta1/nodes",
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
    "/apis/discovery.k8s.io/v1/endpointslices",
    "/api/v1/namespaces/kube-system/pods",
    "/apis/nope/v1/things",
    "/api/v2/pods",
    "/kubesim/v1/status",
    "/kubesim/v1/trace",
    "/kubesim/v1/fault",
    "/kubesim/v1/nope",
    "/api/v1/namespaces/%2e%2e/pods",
    "//api//v1",
];

const QUERIES: &[&str] = &[
    "labelSelector=app%3Dweb",
    "labelSelector=%21%21",
    "fieldSelector=status.phase%3DRunning",
    "fieldSelector=x",
    "limit=1",
    "limit=-1",
    "continue=abc",
    "continue=",
    "dryRun=All",
    "dryRun=bogus",
    "fieldManager=fuzz",
    "fieldValidation=Strict",
    "force=true",
    "pretty=true",
    "resourceVersion=0",
    "resourceVersion=x",
    "propagationPolicy=Foreground",
    "gracePeriodSeconds=-5",
    "tailLines=3",
    "container=c",
    "includeObject=Object",
    "as=Table",
    "%zz=%",
    "a=b&a=c",
    "=",
    "&&&",
];

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "application/vnd.kubernetes.protobuf",
    "",
    "multipart/form-data; boundary=x",
];

const ACCEPTS: &[&str] = &[
    "application/json",
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "*/*",
    "text/html",
    "application/json;as=Table;v=v9;g=x",
];

fn body(rng: &mut Rng) -> String {
    let kinds: Vec<_> = kubesim_api::object::all_kinds().collect();
    let kind = rng.pick(&kinds);
    match rng.below(6) {
        0 => String::new(),
        1 => r#"[{"op":"replace","path":"/spec/replicas","value":3},{"op":"remove","path":"/metadata/labels"},{"op":"move","from":"/a","path":"/b"}]"#
            .to_string(),
        2 => r#"{"metadata":{"labels":{"x":null}},"spec":{"replicas":"three","containers":[{"name":"c","$patch":"delete"}]}}"#.to_string(),
        3 => "garbage {[ \u{0} not json".to_string(),
        4 => format!("apiVersion: {}\nkind: {}\nmetadata: {{name: p}}\nspec: {{containers: [{{name: c, image: nginx}}]}}\n", kind.api_version, kind.kind),
        _ => serde_json::json!({
            "apiVersion": kind.api_version, "kind": kind.kind,
            "metadata": {"name": rng.pick(&["p", "web", "c", "", "A"]), "namespace": rng.pick(&["default", "other", ""]), "labels": {"app": "web"}},
            "spec": {"replicas": rng.pick(&[1i64, -1, 1 << 40]), "containers": [{"name": "c", "image": "nginx"}], "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
            "kind2": null, "data": {"k": "v"}
        })
        .to_string(),
    }
}

/// One request's bytes: `closing` adds `Connection: close`.
fn request(rng: &mut Rng, closing: bool) -> Vec<u8> {
    let method = *rng.pick(&["GET", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "BREW", "get"]);
    let mut target = rng.pick(PATHS).to_string();
    if rng.below(2) == 0 {
        let queries: Vec<&str> = (0..1 + rng.below(3)).map(|_| *rng.pick(QUERIES)).collect();
        target = format!("{target}?{}", queries.join("&"));
    }
    let body = body(rng);
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: fuzz\r\nAccept: {}\r\n", rng.pick(ACCEPTS));
    if !body.is_empty() || rng.below(4) == 0 {
        head.push_str(&format!("Content-Type: {}\r\n", rng.pick(CONTENT_TYPES)));
    }
    if rng.below(4) == 0 {
        head.push_str(&format!(
            "User-Agent: {}\r\nImpersonate-User: {}\r\n",
            rng.pick(&["kubectl/v1.34.0", "", "\u{7f}"]),
            rng.pick(&["alice", "system:admin"])
        ));
    }
    if closing {
        head.push_str("Connection: close\r\n");
    }
    let mut bytes;
    if rng.below(4) == 0 && !body.is_empty() {
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
        bytes = head.into_bytes();
        for chunk in body.as_bytes().chunks(1 + rng.below(40)) {
            bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            bytes.extend_from_slice(chunk);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
    } else {
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
    }
    bytes
}

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(5) {
            0 if at < bytes.len() => {
                bytes.remove(at);
            }
            1 if at < bytes.len() => bytes[at] = rng.next() as u8,
            2 => bytes
                .splice(
                    at..at,
                    rng.pick::<&[u8]>(&[b"\r\n", b":", b" ", b"\n\n", b"%", b"?", b"ffffffffffffffff\r\n", b"Content-Length: 99999999999\r\n"]).iter().copied(),
                )
                .for_each(drop),
            3 => bytes.truncate(at),
            _ => {
                let copy = bytes[at..].to_vec();
                bytes.extend_from_slice(&copy);
            }
        }
    }
}

#[test]
fn the_request_parser_survives_generated_and_mutated_bytes() {
    let iterations = iterations(10_000);
    let mut rng = Rng(seed());
    let limits = Limits { max_body: 64 * 1024, max_head: 8 * 1024, idle: Duration::from_secs(5), request: Duration::from_secs(5) };
    let (mut parsed, mut refused) = (0usize, 0usize);
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..iterations {
        let mut bytes = Vec::new();
        for _ in 0..1 + rng.below(3) {
            bytes.extend(request(&mut rng, false));
        }
        if rng.below(3) != 0 {
            mutate(&mut rng, &mut bytes);
        }
        let mut reader = std::io::Cursor::new(bytes);
        // A connection: requests until one does not parse.
        loop {
            match read_request(&mut reader, limits) {
                Ok(r) => {
                    parsed += 1;
                    assert!(r.body.len() <= limits.max_body);
                    kinds.insert(format!("ok {}", r.method.len().min(8)));
                }
                Err(e) => {
                    refused += 1;
                    kinds.insert(match e {
                        ReadError::Closed => "closed".to_string(),
                        ReadError::Timeout => "timeout".to_string(),
                        ReadError::TooLarge(_) => "413".to_string(),
                        ReadError::HeadTooLarge => "431".to_string(),
                        ReadError::Malformed(m) => format!("400 {}", m.chars().take_while(|c| *c != '"').collect::<String>()),
                    });
                    break;
                }
            }
        }
    }
    report(&format!(
        "fuzz http-parser: {iterations} connections (seed {}): {parsed} requests parsed, {refused} refused, {} distinct outcomes, peak RSS {} MiB",
        seed(),
        kinds.len(),
        peak_rss_mib()
    ));
}

fn send(server: &Server, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(server.addr()).expect("connects");
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = stream.write_all(bytes);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn the_served_api_answers_every_generated_request() {
    let iterations = iterations(600);
    let mut rng = Rng(seed());
    let (server, ()) = Server::start(
        || {
            let mut world = kubesim_sim::World::new(3);
            world.add_default_nodes();
            (world, ())
        },
        Config { paused: true, ..Default::default() },
    )
    .expect("server starts");
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    let mut unanswered = Vec::new();
    for i in 0..iterations {
        let mut bytes = request(&mut rng, true);
        let mutated = rng.below(4) == 0;
        if mutated {
            mutate(&mut rng, &mut bytes);
        }
        let answer = send(&server, &bytes);
        match answer.strip_prefix("HTTP/1.1 ").and_then(|rest| rest.get(..3)) {
            Some(code) => *statuses.entry(code.to_string()).or_default() += 1,
            // A mutation may have cut the request short of its end: the server may then close
            // without an answer (the client gave up); an intact request must always get one.
            None if mutated => *statuses.entry("closed".into()).or_default() += 1,
            None => unanswered.push(format!("case {i}: {}", String::from_utf8_lossy(&bytes))),
        }
    }
    let health = send(&server, b"GET /api/v1/namespaces/default HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    report(&format!("fuzz http-api: {iterations} requests served (seed {}): statuses {statuses:?}, peak RSS {} MiB", seed(), peak_rss_mib()));
    assert!(health.starts_with("HTTP/1.1 200"), "the server still serves: {health}");
    assert!(unanswered.is_empty(), "{} requests got no answer:\n{}", unanswered.len(), unanswered.join("\n"));
    assert!(!statuses.contains_key("500"), "internal errors: {statuses:?}");
}

// Found by the parser fuzzing: a chunk size near usize::MAX overflowed the body-limit sum (a
// panic in debug builds, a wrapped check and an out-of-bounds slice in release).
#[test]
fn a_huge_chunk_size_is_refused_as_too_large() {
    let limits = Limits { max_body: 1024, max_head: 8 * 1024, idle: Duration::from_secs(5), request: Duration::from_secs(5) };
    let bytes = b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nffffffffffffffff\r\n".to_vec();
    assert!(matches!(read_request(&mut std::io::Cursor::new(bytes), limits), Err(ReadError::TooLarge(1024))));
}
