//! Hostile input on the socket and the API server's wire behaviour, without kubectl: malformed
//! requests and JSON, huge bodies (413), slow clients (408), unknown paths (404 Status),
//! watch floods (429 beyond the bound), plus lists, pagination, Tables, watches (bookmarks,
//! 410 Gone), patches, server-side apply conflicts, dry runs and exec over WebSocket. After
//! every attack the server still answers and the state is intact.

use kubesim_server::client::{request, Reply};
use kubesim_server::{Config, Server};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn server(config: Config) -> Server {
    Server::start(
        || {
            let mut world = kubesim_sim::World::new(3);
            world.add_default_nodes();
            (world, ())
        },
        config,
    )
    .expect("server starts")
    .0
}

fn paused() -> Config {
    Config { paused: true, ..Default::default() }
}

fn call(s: &Server, method: &str, path: &str, body: &str, content_type: &str) -> Reply {
    request(&s.url(), method, path, &[("Content-Type", content_type), ("Accept", "application/json")], body.as_bytes()).expect("server answers")
}

fn json_of(r: &Reply) -> Value {
    serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", r.body))
}

fn raw(s: &Server, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(s.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(40))).unwrap();
    let _ = stream.write_all(bytes);
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    out
}

fn healthy(s: &Server) {
    let r = call(s, "GET", "/api/v1/namespaces/default", "", "application/json");
    assert_eq!(r.status, 200, "the server still serves: {}", r.body);
}

const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}"#;

#[test]
fn malformed_requests_get_400_and_nothing_breaks() {
    let s = server(paused());
    assert!(raw(&s, b"NOT HTTP AT ALL\r\n\r\n").starts_with("HTTP/1.1 400"));
    assert!(raw(&s, b"GET / HTTP/9\r\n\r\n").starts_with("HTTP/1.1 400"));
    assert!(raw(&s, b"GET /api HTTP/1.1\r\nno colon here\r\n\r\n").starts_with("HTTP/1.1 400"));
    assert!(raw(&s, b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nContent-Length: nope\r\n\r\n").starts_with("HTTP/1.1 400"));
    for body in [
        "{",
        "[1,2",
        "null",
        "\"just a string\"",
        "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":\"no\"}}",
    ] {
        let r = call(&s, "POST", "/api/v1/namespaces/default/pods", body, "application/json");
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        let status = json_of(&r);
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["reason"], "BadRequest");
    }
    let r = call(&s, "POST", "/api/v1/namespaces/default/pods", "\u{0}\u{1}\u{2}", "application/vnd.kubernetes.protobuf");
    assert_eq!(r.status, 400);
    let r = call(&s, "POST", "/api/v1/namespaces/default/pods", POD, "text/x-unknown");
    assert_eq!(r.status, 415);
    let r = call(&s, "GET", "/api/v1/namespaces/default/pods?labelSelector=a%20in%20(", "", "application/json");
    assert_eq!(r.status, 400, "{}", r.body);
    let r = call(&s, "GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.bogus%3Dx", "", "application/json");
    assert_eq!((r.status, json_of(&r)["message"].as_str().unwrap()), (400, "field label not supported: spec.bogus"));
    let r = call(&s, "GET", "/api/v1/namespaces/default/pods?continue=!!!", "", "application/json");
    assert_eq!(r.status, 400);
    healthy(&s);
}

#[test]
fn unknown_paths_and_methods_get_status_objects() {
    let s = server(paused());
    for path in ["/nope", "/api/v9", "/apis/nosuch.io/v1", "/api/v1/widgets", "/api/v1/namespaces/default/pods/p/nosub", "/api/v1/nodes/x/y/z/w"] {
        let r = call(&s, "GET", path, "", "application/json");
        assert_eq!(r.status, 404, "{path}");
        let status = json_of(&r);
        assert_eq!((status["reason"].as_str(), status["message"].as_str()), (Some("NotFound"), Some("the server could not find the requested resource")));
    }
    let r = call(&s, "GET", "/api/v1/namespaces/default/pods/missing", "", "application/json");
    let status = json_of(&r);
    assert_eq!((r.status, status["message"].as_str().unwrap()), (404, "pods \"missing\" not found"));
    assert_eq!(status["details"], json!({ "name": "missing", "kind": "pods" }));
    let r = call(&s, "PUT", "/api/v1/namespaces/default/pods", POD, "application/json");
    assert_eq!(r.status, 405);
    let r = request(&s.url(), "GET", "/api/v1/pods", &[("Accept", "application/vnd.kubernetes.protobuf")], b"").unwrap();
    assert_eq!(r.status, 406);
}

#[test]
fn huge_bodies_get_413_without_being_read() {
    let s = server(paused());
    let big = 4 * 1024 * 1024;
    let head = format!("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {big}\r\n\r\n");
    let reply = raw(&s, head.as_bytes());
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("\"reason\":\"RequestEntityTooLarge\""));
    assert!(reply.contains("Request entity too large: limit is 3145728"));
    // Chunked bodies are capped too.
    let mut chunked = b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..4 {
        chunked.extend_from_slice(b"100000\r\n");
        chunked.extend(std::iter::repeat_n(b'x', 0x100000));
        chunked.extend_from_slice(b"\r\n");
    }
    assert!(raw(&s, &chunked).starts_with("HTTP/1.1 413"));
    let huge_head = format!("GET /api HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(100_000));
    assert!(raw(&s, huge_head.as_bytes()).starts_with("HTTP/1.1 431"));
    healthy(&s);
}

#[test]
fn slow_clients_time_out_with_408_and_do_not_block_others() {
    let mut config = paused();
    config.limits.request = Duration::from_secs(1);
    let s = server(config);
    let mut slow = TcpStream::connect(s.addr()).unwrap();
    slow.write_all(b"GET /api HTTP/1.1\r\nHost: x\r\n").unwrap(); // never finishes its head
    let started = Instant::now();
    healthy(&s); // others are served meanwhile
    slow.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reply = String::new();
    let _ = slow.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // A body that never arrives.
    let mut stalled = TcpStream::connect(s.addr()).unwrap();
    stalled.write_all(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nContent-Length: 100\r\n\r\n{").unwrap();
    stalled.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reply = String::new();
    let _ = stalled.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    healthy(&s);
}

#[test]
fn watch_floods_are_bounded_with_429() {
    let s = server(Config { paused: true, max_watchers: 8, ..Default::default() });
    let mut open = Vec::new();
    for _ in 0..8 {
        let mut stream = TcpStream::connect(s.addr()).unwrap();
        stream.write_all(b"GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "{line}");
        open.push(reader);
    }
    let r = call(&s, "GET", "/api/v1/pods?watch=true", "", "application/json");
    assert_eq!(r.status, 429);
    assert_eq!(json_of(&r)["reason"], "TooManyRequests");
    assert!(r.headers.iter().any(|(k, _)| k == "retry-after"));
    drop(open);
    // Closed watches free their slots (the server notices the closed peers).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut stream = TcpStream::connect(s.addr()).unwrap();
        stream.write_all(b"GET /api/v1/pods?watch=true&timeoutSeconds=1 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "watch slots were never freed");
        std::thread::sleep(Duration::from_millis(300));
    }
    healthy(&s);
}

#[test]
fn crud_lists_pagination_tables_and_errors() {
    let s = server(paused());
    let r = call(&s, "POST", "/api/v1/namespaces/default/pods", POD, "application/json");
    assert_eq!(r.status, 201, "{}", r.body);
    let pod = json_of(&r);
    assert_eq!(pod["metadata"]["managedFields"][0]["manager"], "unknown");
    let r = call(&s, "POST", "/api/v1/namespaces/default/pods", POD, "application/json");
    assert_eq!((r.status, json_of(&r)["reason"].as_str().unwrap()), (409, "AlreadyExists"));
    for i in 0..5 {
        let cm = json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": format!("cm-{i}") }, "data": { "i": i.to_string() } });
        assert_eq!(call(&s, "POST", "/api/v1/namespaces/default/configmaps", &cm.to_string(), "application/json").status, 201);
    }
    // Pagination: 2 at a time, continue tokens, remainingItemCount.
    let mut names = Vec::new();
    let mut path = "/api/v1/namespaces/default/configmaps?limit=2".to_string();
    loop {
        let list = json_of(&call(&s, "GET", &path, "", "application/json"));
        names.extend(list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_string()));
        match list["metadata"]["continue"].as_str() {
            Some(token) => path = format!("/api/v1/namespaces/default/configmaps?limit=2&continue={token}"),
            None => break,
        }
    }
    assert_eq!(names, vec!["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"]);
    // Table output with the printers' columns.
    let r =
        request(&s.url(), "GET", "/api/v1/namespaces/default/configmaps", &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")], b"")
            .unwrap();
    let table = json_of(&r);
    assert_eq!(table["kind"], "Table");
    let columns: Vec<&str> = table["columnDefinitions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(columns, vec!["NAME", "DATA", "AGE"]);
    assert_eq!(table["rows"][0]["cells"][1], "1");
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    // Patches: merge, JSON (failing test op → 422), strategic; dry run leaves no trace.
    let r = call(&s, "PATCH", "/api/v1/namespaces/default/configmaps/cm-0", r#"{"data":{"j":"x"}}"#, "application/merge-patch+json");
    assert_eq!(json_of(&r)["data"], json!({ "i": "0", "j": "x" }));
    let r = call(&s, "PATCH", "/api/v1/namespaces/default/configmaps/cm-0", r#"[{"op":"test","path":"/data/i","value":"9"}]"#, "application/json-patch+json");
    assert_eq!(r.status, 422, "{}", r.body);
    let r = call(
        &s,
        "PATCH",
        "/api/v1/namespaces/default/pods/p",
        r#"{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}"#,
        "application/strategic-merge-patch+json",
    );
    assert_eq!(json_of(&r)["spec"]["containers"][0]["image"], "nginx:2");
    let before = json_of(&call(&s, "GET", "/api/v1/namespaces/default/configmaps/cm-1", "", "application/json"));
    let r = call(&s, "DELETE", "/api/v1/namespaces/default/configmaps/cm-1?dryRun=All", "", "application/json");
    assert_eq!(r.status, 200);
    let after = json_of(&call(&s, "GET", "/api/v1/namespaces/default/configmaps/cm-1", "", "application/json"));
    assert_eq!(before, after);
    // Strict field validation.
    let bad = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},"spec":{"containers":[{"name":"c","image":"nginx","bogus":1}]}}"#;
    let r = call(&s, "POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", bad, "application/json");
    assert_eq!(r.status, 400);
    assert!(json_of(&r)["message"].as_str().unwrap().contains("strict decoding error: unknown field \"spec.containers[0].bogus\""));
    let r = call(&s, "POST", "/api/v1/namespaces/default/pods", bad, "application/json");
    assert_eq!(r.status, 201);
    assert!(r.headers.iter().any(|(k, v)| k == "warning" && v.contains("unknown field")));
    // Optimistic concurrency.
    let mut stale = after.clone();
    stale["metadata"]["resourceVersion"] = "2".into();
    let r = call(&s, "PUT", "/api/v1/namespaces/default/configmaps/cm-1", &stale.to_string(), "application/json");
    assert_eq!((r.status, json_of(&r)["reason"].as_str().unwrap()), (409, "Conflict"));
}

#[test]
fn server_side_apply_tracks_managers_and_reports_conflicts() {
    let s = server(paused());
    let apply = |manager: &str, replicas: u32, force: bool| {
        let body = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  replicas: \"{replicas}\"\n");
        call(&s, "PATCH", &format!("/api/v1/namespaces/default/configmaps/ssa?fieldManager={manager}&force={force}"), &body, "application/apply-patch+yaml")
    };
    assert_eq!(apply("alice", 1, false).status, 201);
    assert_eq!(apply("alice", 2, false).status, 200);
    let r = apply("bob", 3, false);
    assert_eq!(r.status, 409, "{}", r.body);
    let status = json_of(&r);
    assert_eq!(status["message"], "Apply failed with 1 conflict: conflict with \"alice\" using v1: .data.replicas");
    assert_eq!(status["details"]["causes"][0]["reason"], "FieldManagerConflict");
    let r = apply("bob", 3, true);
    assert_eq!(r.status, 200);
    let cm = json_of(&r);
    assert_eq!(cm["data"]["replicas"], "3");
    let managers: Vec<&str> = cm["metadata"]["managedFields"].as_array().unwrap().iter().map(|m| m["manager"].as_str().unwrap()).collect();
    assert_eq!(managers, vec!["bob"], "alice lost the field she no longer owns");
    // Without fieldManager an apply is invalid.
    let r = call(&s, "PATCH", "/api/v1/namespaces/default/configmaps/ssa", "data: {}", "application/apply-patch+yaml");
    assert_eq!(r.status, 422);
}

/// A watch stream: chunks of JSON lines.
struct Watch {
    reader: BufReader<TcpStream>,
    pending: std::collections::VecDeque<Value>,
}

fn read_event(watch: &mut Watch) -> Value {
    while watch.pending.is_empty() {
        let mut size = String::new();
        watch.reader.read_line(&mut size).unwrap();
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        let mut chunk = vec![0; n + 2];
        watch.reader.read_exact(&mut chunk).unwrap();
        for line in String::from_utf8_lossy(&chunk[..n]).lines() {
            watch.pending.push_back(serde_json::from_str(line).unwrap());
        }
    }
    watch.pending.pop_front().unwrap()
}

fn open_watch(s: &Server, path: &str) -> Watch {
    let mut stream = TcpStream::connect(s.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
    }
    Watch { reader, pending: Default::default() }
}

#[test]
fn watches_stream_changes_bookmarks_and_gone() {
    let s = server(Config { paused: true, bookmark_interval: Duration::from_millis(300), ..Default::default() });
    let created = json_of(&call(
        &s,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w","labels":{"a":"1"}}}"#,
        "application/json",
    ));
    let rv = created["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let mut watch =
        open_watch(&s, &format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&labelSelector=a%3D1"));
    call(&s, "PATCH", "/api/v1/namespaces/default/configmaps/w", r#"{"data":{"x":"y"}}"#, "application/merge-patch+json");
    let event = read_event(&mut watch);
    assert_eq!((event["type"].as_str(), event["object"]["data"]["x"].as_str()), (Some("MODIFIED"), Some("y")));
    // Leaving the label selection is a DELETED event for this watch.
    call(&s, "PATCH", "/api/v1/namespaces/default/configmaps/w", r#"{"metadata":{"labels":{"a":"2"}}}"#, "application/merge-patch+json");
    assert_eq!(read_event(&mut watch)["type"], "DELETED");
    let bookmark = read_event(&mut watch);
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert!(bookmark["object"]["metadata"]["resourceVersion"].as_str().is_some());
    // A watch from before compaction is Gone.
    s.with_sim(|sim| {
        let revision = sim.world.api().store().revision();
        sim.world.api_request("test", |api, _| api.store_mut().compact(revision));
    });
    let mut gone = open_watch(&s, "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2");
    let event = read_event(&mut gone);
    assert_eq!((event["type"].as_str(), event["object"]["code"].as_u64(), event["object"]["reason"].as_str()), (Some("ERROR"), Some(410), Some("Expired")));
    // sendInitialEvents: ADDED for what exists, then the initial-events-end bookmark.
    let mut initial =
        open_watch(&s, "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan");
    let mut seen = Vec::new();
    loop {
        let e = read_event(&mut initial);
        if e["type"] == "BOOKMARK" {
            assert_eq!(e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
            break;
        }
        seen.push(e["object"]["metadata"]["name"].as_str().unwrap().to_string());
    }
    assert!(seen.contains(&"w".to_string()));
}

#[test]
fn exec_speaks_the_v5_channel_protocol() {
    let s = server(paused());
    call(&s, "POST", "/api/v1/namespaces/default/pods", POD, "application/json");
    s.with_sim(|sim| sim.step_for(30_000));
    let mut stream = TcpStream::connect(s.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream
        .write_all(b"GET /api/v1/namespaces/default/pods/p/exec?command=echo&command=hi&stdout=true HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n")
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        head.push_str(&line);
        if line.trim().is_empty() {
            break;
        }
    }
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert!(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    assert!(head.contains("Sec-WebSocket-Protocol: v5.channel.k8s.io"));
    let stdout = kubesim_server::ws::read_frame(&mut reader, 1 << 20).unwrap();
    assert_eq!((stdout.payload[0], String::from_utf8_lossy(&stdout.payload[1..]).to_string()), (1, "hi\n".to_string()));
    let status = kubesim_server::ws::read_frame(&mut reader, 1 << 20).unwrap();
    assert_eq!(status.payload[0], 3);
    let status: Value = serde_json::from_slice(&status.payload[1..]).unwrap();
    assert_eq!(status["status"], "Success");
}
