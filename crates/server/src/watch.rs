//! The streaming handlers: watches (chunked JSON lines, bookmarks, 410 Gone from compacted
//! history, selector-filtered event translation as the watch cache does it), followed logs,
//! and exec over WebSocket (`v5.channel.k8s.io` / `v4.channel.k8s.io`).
//!
//! A watch keeps only a cursor (a revision) and reads the store's bounded history from it
//! under the lock, then writes outside the lock: a slow client costs no server memory, and
//! one that falls behind the history gets an ERROR event with 410 Expired.

use crate::api::{selectors, served_json, Outcome, Target, Want};
use crate::http::{Chunked, Request, Response};
use crate::status::Failure;
use crate::Shared;
use kubesim_api::object::Object;
use kubesim_api::podlog::PodLogOptions;
use kubesim_api::selector::{FieldSelector, Selector};
use kubesim_store::EventType;
use serde_json::{json, Value};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct WatcherSlot<'a>(&'a Shared);

impl Drop for WatcherSlot<'_> {
    fn drop(&mut self) {
        self.0.watchers.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Filter {
    namespace: Option<String>,
    labels: Option<Selector>,
    fields: Option<FieldSelector>,
}

impl Filter {
    fn selects(&self, o: &Object) -> bool {
        self.namespace.as_deref().is_none_or(|ns| o.namespace() == ns)
            && self.labels.as_ref().is_none_or(|s| s.matches(o.metadata().labels.as_ref()))
            && self.fields.as_ref().is_none_or(|f| f.matches(o).unwrap_or(false))
    }
}

/// The event a selector-filtered watch reports (an object entering the selection is ADDED,
/// one leaving it DELETED), as the watch cache's cacheWatcher.convertToWatchEvent.
fn translate(event: EventType, was: bool, now: bool) -> Option<&'static str> {
    match (event, was, now) {
        (EventType::Added, _, true) => Some("ADDED"),
        (EventType::Deleted, true, _) | (EventType::Deleted, _, true) => Some("DELETED"),
        (EventType::Modified, true, true) => Some("MODIFIED"),
        (EventType::Modified, false, true) => Some("ADDED"),
        (EventType::Modified, true, false) => Some("DELETED"),
        _ => None,
    }
}

fn gone(rv: u64, oldest: u64) -> Value {
    json!({
        "type": "ERROR",
        "object": {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("too old resource version: {rv} ({oldest})"), "reason": "Expired", "code": 410,
        }
    })
}

/// GET ...?watch=true.
pub fn serve(shared: &Shared, req: &Request, target: &Target, want: Want, stream: &mut TcpStream) -> Outcome {
    match serve_inner(shared, req, target, want, stream) {
        Ok(()) => Outcome::Streamed,
        Err(f) => Outcome::Respond(f.response()),
    }
}

fn serve_inner(shared: &Shared, req: &Request, target: &Target, want: Want, stream: &mut TcpStream) -> Result<(), Failure> {
    let info = target.info()?;
    let (labels, mut fields) = selectors(req, info)?;
    if let Some(name) = &target.name {
        fields.get_or_insert_with(FieldSelector::default).requirements.push(("metadata.name".into(), name.clone(), true));
    }
    let filter = Filter { namespace: target.namespace.clone(), labels, fields };
    let resource = (info.group(), info.plural);
    let bookmarks = req.flag("allowWatchBookmarks");
    let send_initial = req.param("sendInitialEvents") == Some("true");
    let timeout = req
        .param("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(shared.config.max_watch)
        .min(shared.config.max_watch);
    let include = req.param("includeObject").unwrap_or("Metadata").to_string();
    let rv_param = req.param("resourceVersion").unwrap_or("").to_string();
    let start_rv = if rv_param.is_empty() || rv_param == "0" {
        None
    } else {
        Some(rv_param.parse::<u64>().map_err(|_| Failure::bad_request(format!("invalid resource version: {rv_param:?}")))?)
    };
    if shared.watchers.fetch_add(1, Ordering::SeqCst) >= shared.config.max_watchers {
        shared.watchers.fetch_sub(1, Ordering::SeqCst);
        return Err(Failure::too_many_requests("too many watches open, please try again later"));
    }
    let _slot = WatcherSlot(shared);
    let deadline = Instant::now() + timeout;
    let encode = |event_type: &str, object: &Object, now: u64| -> Vec<u8> {
        let body = match want {
            Want::Table => crate::table::table(info, &[Arc::new(object.clone())], now, &include, object.resource_version()),
            Want::Metadata => {
                json!({ "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": serde_json::to_value(object.metadata()).unwrap_or_default() })
            }
            _ => served_json(object, target.res),
        };
        let mut line = serde_json::to_vec(&json!({ "type": event_type, "object": body })).expect("events serialize");
        line.push(b'\n');
        line
    };
    let bookmark = |rv: u64, initial_end: bool| -> Vec<u8> {
        let mut metadata = json!({ "resourceVersion": rv.to_string() });
        if initial_end {
            metadata["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
        }
        let api_version = if target.res.group.is_empty() { target.res.version.to_string() } else { format!("{}/{}", target.res.group, target.res.version) };
        let mut line = serde_json::to_vec(&json!({ "type": "BOOKMARK", "object": { "kind": info.kind, "apiVersion": api_version, "metadata": metadata } }))
            .expect("events serialize");
        line.push(b'\n');
        line
    };
    // Where the watch starts: the current state as ADDED events, or the history after an rv.
    let filter = Arc::new(filter);
    let (f, t) = (filter.clone(), target.clone());
    let (initial, mut cursor, expired, now) = shared.run(move |sim| {
        let api = sim.world.api();
        let store = api.store();
        let now = sim.world.now();
        match start_rv {
            Some(rv) if !send_initial => match store.commits_since(rv) {
                Ok(_) => Ok((Vec::new(), rv, None, now)),
                Err(g) => Ok((Vec::new(), rv, Some(gone(rv, g.oldest_available)), now)),
            },
            _ => {
                let (items, revision) = api.list(info, f.namespace.as_deref(), f.labels.as_ref(), f.fields.as_ref()).map_err(|e| t.fail(e))?;
                Ok((items, revision, None, now))
            }
        }
    })??;
    let mut out = Chunked::start(stream, 200, "application/json").map_err(|_| Failure::internal("write failed"))?;
    if let Some(event) = expired {
        let mut line = serde_json::to_vec(&event).expect("events serialize");
        line.push(b'\n');
        let _ = out.send(&line);
        let _ = out.finish();
        return Ok(());
    }
    let mut batch = Vec::new();
    for object in &initial {
        batch.extend(encode("ADDED", object, now));
    }
    if send_initial && bookmarks {
        batch.extend(bookmark(cursor, true));
    }
    if out.send(&batch).is_err() {
        return Ok(());
    }
    let mut last_bookmark = Instant::now();
    loop {
        if Instant::now() >= deadline || shared.stopping() {
            break;
        }
        let f = filter.clone();
        let from = cursor;
        let (events, next, expired, now) = shared.run(move |sim| collect(sim, from, resource, &f))?;
        cursor = next;
        if events.is_empty() && expired.is_none() {
            if bookmarks && last_bookmark.elapsed() >= shared.config.bookmark_interval {
                if out.send(&bookmark(cursor, false)).is_err() {
                    return Ok(());
                }
                last_bookmark = Instant::now();
            }
            shared.wait_past(cursor, Duration::from_millis(500));
            if crate::http::peer_closed(out.stream()) {
                return Ok(());
            }
            continue;
        }
        if let Some(event) = expired {
            let mut line = serde_json::to_vec(&event).expect("events serialize");
            line.push(b'\n');
            let _ = out.send(&line);
            break;
        }
        let mut batch = Vec::new();
        for (t, object) in &events {
            batch.extend(encode(t, object, now));
        }
        if bookmarks && last_bookmark.elapsed() >= shared.config.bookmark_interval {
            batch.extend(bookmark(cursor, false));
            last_bookmark = Instant::now();
        }
        if out.send(&batch).is_err() {
            return Ok(());
        }
    }
    let _ = out.finish();
    Ok(())
}

type Collected = (Vec<(&'static str, Arc<Object>)>, u64, Option<Value>, u64);

/// The events after `cursor` for one resource and filter, the new cursor, and the 410 event
/// if history no longer reaches back to the cursor.
fn collect(sim: &mut crate::clock::Sim, cursor: u64, resource: (&'static str, &'static str), filter: &Filter) -> Collected {
    let store = sim.world.api().store();
    let mut events = Vec::new();
    let mut next = cursor;
    match store.commits_since(cursor) {
        Err(g) => return (events, cursor, Some(gone(cursor, g.oldest_available)), sim.world.now()),
        Ok(commits) => {
            for commit in commits {
                next = commit.revision;
                if commit.resource != resource {
                    continue;
                }
                let now_selected = commit.event_type != EventType::Deleted && filter.selects(&commit.object);
                let was_selected = commit.previous.as_ref().is_some_and(|p| filter.selects(p));
                let was_selected = was_selected || (commit.event_type == EventType::Deleted && filter.selects(&commit.object));
                if let Some(t) = translate(commit.event_type, was_selected, now_selected) {
                    events.push((t, commit.object.clone()));
                }
            }
        }
    }
    (events, next.max(cursor), None, sim.world.now())
}

/// The pod a log or exec request names: (node, uid, container).
fn locate(shared: &Shared, target: &Target, pod: &str, container: Option<&str>) -> Result<(String, String, String), Failure> {
    let info = kubesim_api::kind_info("v1", "Pod").expect("pods are served");
    let (ns, name) = (target.ns(), pod.to_string());
    let object = shared.run(move |sim| sim.world.api().get(info, &ns, &name).map_err(|e| Failure::from_api(e, "", "pods", &name)))??;
    let p = object.as_pod().expect("pods are pods");
    let spec = p.spec.clone().unwrap_or_default();
    let names: Vec<String> = spec.containers.iter().chain(spec.init_containers.iter().flatten()).map(|c| c.name.clone()).collect();
    let container = match container.filter(|c| !c.is_empty()) {
        Some(c) if names.iter().any(|n| n == c) => c.to_string(),
        Some(c) => return Err(Failure::bad_request(format!("container {c} is not valid for pod {pod}"))),
        None if spec.containers.len() == 1 => spec.containers[0].name.clone(),
        None => {
            let default = object.metadata().annotations.as_ref().and_then(|a| a.get("kubectl.kubernetes.io/default-container")).cloned();
            match default {
                Some(d) => d,
                None => {
                    let list: Vec<&str> = spec.containers.iter().map(|c| c.name.as_str()).collect();
                    return Err(Failure::bad_request(format!("a container name must be specified for pod {pod}, choose one of: [{}]", list.join(" "))));
                }
            }
        }
    };
    let node = spec.node_name.clone().unwrap_or_default();
    if node.is_empty() {
        return Err(Failure::bad_request(format!("container {container:?} in pod {pod:?} is waiting to start: ContainerCreating")));
    }
    Ok((node, p.metadata.uid.clone().unwrap_or_default(), container))
}

fn read_logs(shared: &Shared, target: &Target, pod: &str, node: &str, container: &str, opts: &PodLogOptions) -> Result<String, Failure> {
    let info = kubesim_api::kind_info("v1", "Pod").expect("pods are served");
    let (ns, pod, node, container, opts) = (target.ns(), pod.to_string(), node.to_string(), container.to_string(), opts.clone());
    shared.run(move |sim| {
        let object = sim.world.api().get(info, &ns, &pod).map_err(|e| Failure::from_api(e, "", "pods", &pod))?;
        let id = kubesim_kubelet::logs::validate_container_log_status(object.as_pod().expect("pods are pods"), &container, opts.previous)
            .map_err(Failure::bad_request)?;
        let host = sim.world.host(&node).ok_or_else(|| Failure::bad_request(format!("node {node:?} has no kubelet")))?;
        let lines = host.cri.container_log_lines(&id).map_err(Failure::bad_request)?;
        Ok(kubesim_kubelet::logs::read_logs(lines, &opts, sim.world.now()))
    })?
}

/// The PodLogOptions of a log request's query (`previous`, `timestamps`, `sinceSeconds`,
/// `sinceTime`, `tailLines`, `limitBytes`).
fn log_options(req: &Request) -> Result<PodLogOptions, Failure> {
    let since_time = match req.param("sinceTime") {
        Some(t) => Some(
            kubesim_api::time::parse_rfc3339(t)
                .ok_or_else(|| Failure::bad_request(format!("parsing time {t:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse")))?,
        ),
        None => None,
    };
    Ok(PodLogOptions {
        previous: req.flag("previous"),
        timestamps: req.flag("timestamps"),
        since_seconds: req.param("sinceSeconds").and_then(|t| t.parse::<i64>().ok()),
        since_time,
        tail_lines: req.param("tailLines").and_then(|t| t.parse::<i64>().ok()).filter(|t| *t >= 0).map(|t| t as usize),
        limit_bytes: req.param("limitBytes").and_then(|t| t.parse::<usize>().ok()),
    })
}

fn container_terminated(shared: &Shared, target: &Target, pod: &str, container: &str, uid: &str) -> bool {
    let (ns, pod, container, uid) = (target.ns(), pod.to_string(), container.to_string(), uid.to_string());
    shared
        .run(move |sim| {
            let Some(object) = sim.world.api().lookup(("", "pods"), &ns, &pod) else { return true };
            if object.metadata().uid.as_deref() != Some(uid.as_str()) {
                return true;
            }
            let statuses = object.as_pod().and_then(|p| p.status.as_ref()).and_then(|s| s.container_statuses.clone()).unwrap_or_default();
            statuses.iter().any(|s| s.name == container && s.state.as_ref().is_some_and(|st| st.terminated.is_some()))
        })
        .unwrap_or(true)
}

/// GET pods/NAME/log (`follow` streams new lines until the container ends or the client goes).
pub fn logs(shared: &Shared, req: &Request, target: &Target, pod: &str, stream: &mut TcpStream) -> Outcome {
    let result = (|| -> Result<Option<Response>, Failure> {
        let (node, uid, container) = locate(shared, target, pod, req.param("container"))?;
        let opts = log_options(req)?;
        let text = read_logs(shared, target, pod, &node, &container, &opts)?;
        if !req.flag("follow") || opts.previous {
            return Ok(Some(Response::typed(200, "text/plain", text.into_bytes())));
        }
        let mut out = Chunked::start(stream, 200, "text/plain").map_err(|_| Failure::internal("write failed"))?;
        if out.send(text.as_bytes()).is_err() {
            return Ok(None);
        }
        // Later reads: the whole log (the same timestamps and since), sent from where it grew.
        let whole = PodLogOptions { tail_lines: None, limit_bytes: None, ..opts };
        let mut sent = read_logs(shared, target, pod, &node, &container, &whole)?.len();
        let deadline = Instant::now() + shared.config.max_watch;
        while Instant::now() < deadline && !shared.stopping() {
            std::thread::sleep(Duration::from_millis(200));
            if out.peer_closed() {
                return Ok(None);
            }
            let done = container_terminated(shared, target, pod, &container, &uid);
            if let Ok(now_text) = read_logs(shared, target, pod, &node, &container, &whole) {
                if now_text.len() > sent && now_text.is_char_boundary(sent) {
                    if out.send(&now_text.as_bytes()[sent..]).is_err() {
                        return Ok(None);
                    }
                    sent = now_text.len();
                } else if now_text.len() < sent {
                    sent = now_text.len(); // a restart began a new log
                }
            }
            if done {
                break;
            }
        }
        let _ = out.finish();
        Ok(None)
    })();
    match result {
        Ok(Some(r)) => Outcome::Respond(r),
        Ok(None) => Outcome::Streamed,
        Err(f) => Outcome::Respond(f.response()),
    }
}

/// The remote-command subprotocols served, preferred first.
const PROTOCOLS: &[&str] = &["v5.channel.k8s.io", "v4.channel.k8s.io"];

/// Wall time between an exec's upgrade and its first output frame (see where it is used).
const EXEC_OUTPUT_DELAY: Duration = Duration::from_millis(100);

/// pods/NAME/exec over WebSocket. The command runs to completion in one virtual instant (the
/// CRI model's exec), its output goes out on the stdout channel and its exit status as a
/// `Status` on the error channel, then the socket closes.
pub fn exec(shared: &Shared, req: &Request, target: &Target, pod: &str, stream: &mut TcpStream) -> Outcome {
    let upgrade = req.header("upgrade").unwrap_or("").to_ascii_lowercase();
    if upgrade != "websocket" {
        return Outcome::Respond(Failure::bad_request("Upgrade request required").response());
    }
    let offered: Vec<String> =
        req.headers.iter().filter(|(n, _)| n == "sec-websocket-protocol").flat_map(|(_, v)| v.split(',').map(|p| p.trim().to_string())).collect();
    let Some(protocol) = PROTOCOLS.iter().find(|p| offered.iter().any(|o| o == *p)) else {
        return Outcome::Respond(
            Failure::bad_request(format!("unable to upgrade: no supported subprotocol in {offered:?} (kubesim serves {PROTOCOLS:?})")).response(),
        );
    };
    let Some(key) = req.header("sec-websocket-key") else {
        return Outcome::Respond(Failure::bad_request("missing Sec-WebSocket-Key").response());
    };
    let command: Vec<String> = req.params("command").iter().map(|s| s.to_string()).collect();
    if command.is_empty() {
        return Outcome::Respond(Failure::bad_request("you must specify at least 1 command").response());
    }
    let (node, uid, container) = match locate(shared, target, pod, req.param("container")) {
        Ok(x) => x,
        Err(f) => return Outcome::Respond(f.response()),
    };
    let cmd = command.clone();
    let tty = req.param("tty").is_some_and(|v| v == "true" || v == "1");
    let result = shared
        .run(move |sim| sim.world.exec_in_pod(&node, &uid, &container, &cmd, kubesim_host::cri::ExecIo { stdin: Vec::new(), tty }))
        .unwrap_or_else(|f| Err(f.message));
    use std::io::Write;
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n",
        crate::ws::accept_key(key)
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return Outcome::Streamed;
    }
    // client-go's WebSocket executor starts reading before it has created its streams and
    // discards data for a stream it does not know yet ("Unknown stream id 1, discarding
    // message"): output written the instant the upgrade completes can be lost under load. A
    // real API server's output comes after the kubelet's round trip; wait about as long.
    std::thread::sleep(EXEC_OUTPUT_DELAY);
    let frame = |stream: &mut TcpStream, channel: u8, data: &[u8]| {
        let mut payload = vec![channel];
        payload.extend_from_slice(data);
        crate::ws::write_frame(stream, crate::ws::opcode::BINARY, &payload)
    };
    let status = match &result {
        Ok(output) => {
            let code = output.code;
            if !output.stdout.is_empty() && req.param("stdout") != Some("false") {
                let _ = frame(stream, 1, &output.stdout);
            }
            if !output.stderr.is_empty() && req.param("stderr") != Some("false") {
                let _ = frame(stream, 2, &output.stderr);
            }
            if code == 0 {
                json!({ "metadata": {}, "status": "Success" })
            } else {
                json!({
                    "metadata": {}, "status": "Failure",
                    "message": format!("command terminated with non-zero exit code: error executing command {command:?}, exit code {code}"),
                    "reason": "NonZeroExitCode",
                    "details": { "causes": [{ "reason": "ExitCode", "message": code.to_string() }] },
                })
            }
        }
        Err(message) => json!({ "metadata": {}, "status": "Failure", "message": message, "reason": "InternalError", "code": 500 }),
    };
    let _ = frame(stream, 3, status.to_string().as_bytes());
    let _ = crate::ws::write_frame(stream, crate::ws::opcode::CLOSE, &1000u16.to_be_bytes());
    // Drain the client's frames (stdin, resize, its close) briefly, then close.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        match crate::ws::read_frame(stream, 1 << 20) {
            Ok(f) if f.opcode == crate::ws::opcode::CLOSE => break,
            Ok(_) => continue,
            Err(_) => break,
        }
    }
    Outcome::Streamed
}
