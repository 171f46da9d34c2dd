//! The docs' sample applications: hello-app, kubernetes-bootcamp, node-hello, echoserver,
//! goproxy, and a minimal `node`.

use crate::common::{self, go_log, go_response, http_date, CpuQueue};
use kubesim_os::net::http::Request;
use kubesim_os::program::{default_signal_exit, Incoming, Os, Outgoing, Program, Signal, Spawn, Step, Wake};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// gcr.io/google-samples/hello-app (Go): version.
    HelloApp(String),
    /// kubernetes-bootcamp (Node.js 6): `v=N`.
    Bootcamp(String),
    /// node-hello (Node.js).
    NodeHello,
    /// A `node` script that calls `listen(port)` and `end(text)`.
    NodeGeneric(String),
    /// registry.k8s.io/echoserver: "1.4" or "1.10" page format.
    Echoserver(String),
    /// registry.k8s.io/goproxy.
    Goproxy,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Serving,
    Done,
}

/// A sample HTTP application.
#[derive(Clone, Debug)]
pub struct Sample {
    spawn: Spawn,
    kind: Kind,
    port: u16,
    phase: Phase,
    started_ms: u64,
    requests: u64,
    cpu: CpuQueue,
}

fn tag_of(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    last.split_once(':').map(|(_, t)| t.split('@').next().unwrap_or(t).to_string()).unwrap_or_default()
}

impl Sample {
    fn new(spawn: &Spawn, kind: Kind, port: u16) -> Sample {
        Sample { spawn: spawn.clone(), kind, port, phase: Phase::Start, started_ms: 0, requests: 0, cpu: CpuQueue::default() }
    }

    /// hello-app; `image` picks the version (`:2.0` → `2.0.0`).
    pub fn hello_app(spawn: &Spawn, image: &str) -> Sample {
        let tag = tag_of(image);
        let v = match tag.as_str() {
            "" | "latest" | "1.0" => "1.0.0".to_string(),
            t if t.matches('.').count() == 1 => format!("{t}.0"),
            t => t.to_string(),
        };
        let port = spawn.env.get("PORT").and_then(|p| p.parse().ok()).unwrap_or(8080);
        Sample::new(spawn, Kind::HelloApp(v), port)
    }

    /// kubernetes-bootcamp; `image` picks `v=1`/`v=2`.
    pub fn bootcamp(spawn: &Spawn, image: &str) -> Sample {
        let tag = tag_of(image);
        let v = tag.strip_prefix('v').filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())).unwrap_or("1").to_string();
        Sample::new(spawn, Kind::Bootcamp(v), 8080)
    }

    /// node-hello.
    pub fn node_hello(spawn: &Spawn) -> Sample {
        Sample::new(spawn, Kind::NodeHello, 8080)
    }

    /// echoserver; `image` picks the page format.
    pub fn echoserver(spawn: &Spawn, image: &str) -> Sample {
        let tag = tag_of(image);
        let v = if tag.is_empty() || tag == "latest" { "1.10".to_string() } else { tag };
        Sample::new(spawn, Kind::Echoserver(v), 8080)
    }

    /// goproxy.
    pub fn goproxy(spawn: &Spawn) -> Sample {
        Sample::new(spawn, Kind::Goproxy, 8080)
    }

    fn node_iso(ms: u64) -> String {
        format!("{}.{:03}Z", kubesim_os::time::strftime("%Y-%m-%dT%H:%M:%S", (ms / 1000) as i64, 0), ms % 1000)
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        self.started_ms = os.now_ms();
        match &self.kind {
            Kind::HelloApp(_) => go_log(os, &format!("Server listening on port {}", self.port)),
            Kind::Bootcamp(_) => {
                let host = self.spawn.env.get("HOSTNAME").cloned().unwrap_or_else(|| os.hostname());
                let t = Sample::node_iso(os.unix_time_ms());
                common::out(os, &format!("Kubernetes Bootcamp App Started At: {t} | Running On:  {host} \n\n"));
            }
            // From 1.9 the entrypoint is run.sh: a self-signed certificate, then nginx.
            Kind::Echoserver(v) if crate::nginx::vnum(v) >= (1, 9, 0) => {
                common::out(os, "Generating self-signed cert\n");
                common::err(os, "Generating a 2048 bit RSA private key\n..........+++\n.........................+++\nwriting new private key to '/certs/privateKey.key'\n-----\n");
                common::out(os, "Starting nginx\n");
            }
            _ => {}
        }
        self.phase = Phase::Serving;
        Step::Wait
    }

    fn handle(&mut self, os: &mut dyn Os, conn: &Incoming) -> Vec<u8> {
        let now = os.unix_time();
        let data = &conn.data[..conn.data.len().min(common::MAX_REQUEST)];
        let Ok(req) = Request::parse(data) else { return b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n".to_vec() };
        self.requests += 1;
        let host = os.hostname();
        match self.kind.clone() {
            Kind::HelloApp(v) => {
                go_log(os, &format!("Serving request: {}", req.path()));
                go_response(Some(&req), 200, Vec::new(), format!("Hello, world!\nVersion: {v}\nHostname: {host}\n").as_bytes(), now)
            }
            Kind::Bootcamp(v) => {
                let pod = self.spawn.env.get("HOSTNAME").cloned().unwrap_or(host);
                let up = os.now_ms().saturating_sub(self.started_ms) as f64 / 1000.0;
                let t = Sample::node_iso(os.unix_time_ms());
                common::out(
                    os,
                    &format!("Running On: {pod} | Total Requests: {} | App Uptime: {} seconds | Log Time: {t}\n", self.requests, crate::perl::fmt_g(up, 17)),
                );
                let parts = ["Hello Kubernetes bootcamp! | Running on: ".to_string(), pod, format!(" | v={v}\n")];
                node_chunked(&req, &[("Content-Type", "text/plain")], &parts, now)
            }
            // The Kubernetes docs (Use a Service to Access an Application in a Cluster, Security
            // Context) show this image answering "Hello Kubernetes!".
            Kind::NodeHello => {
                common::out(os, &format!("Received request for URL: {}\n", req.target));
                node_chunked(&req, &[], &["Hello Kubernetes!".to_string()], now)
            }
            Kind::NodeGeneric(body) => node_chunked(&req, &[], &[body], now),
            Kind::Echoserver(v) => {
                let page = self.echo_page(os, &req, conn, &v);
                let line = String::from_utf8_lossy(data.split(|&b| b == b'\n').next().unwrap_or(&[])).trim_end_matches('\r').to_string();
                common::out(
                    os,
                    &format!(
                        "{} - - [{}] \"{line}\" 200 {} \"{}\" \"{}\"\n",
                        conn.src,
                        common::clf_time(now),
                        page.len(),
                        req.header("referer").unwrap_or("-"),
                        req.header("user-agent").unwrap_or("-")
                    ),
                );
                let server = if crate::nginx::vnum(&v) >= (1, 10, 0) { "nginx/1.13.3" } else { "nginx/1.10.0" };
                let close = req.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close"));
                let mut s = format!(
                    "HTTP/1.1 200 OK\r\nServer: {server}\r\nDate: {}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: {}\r\n",
                    http_date(now),
                    if close { "close" } else { "keep-alive" }
                );
                if crate::nginx::vnum(&v) >= (1, 10, 0) {
                    s.push_str("Vary: Accept-Encoding\r\n");
                }
                s.push_str("\r\n");
                let mut b = s.into_bytes();
                if req.method != "HEAD" {
                    b.extend_from_slice(format!("{:x}\r\n", page.len()).as_bytes());
                    b.extend_from_slice(page.as_bytes());
                    b.extend_from_slice(b"\r\n0\r\n\r\n");
                }
                b
            }
            Kind::Goproxy => {
                if req.target.starts_with("http://") || req.target.starts_with("https://") || req.method == "CONNECT" {
                    go_response(Some(&req), 502, Vec::new(), b"kubesim: goproxy cannot forward requests while serving\n", now)
                } else {
                    go_response(
                        Some(&req),
                        500,
                        vec![("Content-Type".into(), "text/plain; charset=utf-8".into())],
                        b"This is a proxy server. Does not respond to non-proxy requests.\n",
                        now,
                    )
                }
            }
        }
    }

    fn echo_page(&self, os: &dyn Os, req: &Request, conn: &Incoming, v: &str) -> String {
        let host_hdr = req.header("host").unwrap_or("").to_string();
        let q = req.target.split_once('?').map(|(_, q)| q.to_string()).unwrap_or_default();
        let mut headers: Vec<(String, String)> = req.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
        headers.sort();
        let body = if req.body.is_empty() { "-no body in request-".to_string() } else { String::from_utf8_lossy(&req.body).into_owned() };
        if crate::nginx::vnum(v) < (1, 10, 0) {
            let mut s = format!("CLIENT VALUES:\nclient_address={}\ncommand={}\nreal path={}\nquery={}\nrequest_version={}\nrequest_uri=http://{host_hdr}{}\n\nSERVER VALUES:\nserver_version=nginx: 1.10.0 - lua: 10001\n\nHEADERS RECEIVED:\n", conn.src, req.method, req.path(), if q.is_empty() { "nil".into() } else { q.clone() }, req.version.trim_start_matches("HTTP/"), req.target);
            for (k, v) in &headers {
                s.push_str(&format!("{k}={v}\n"));
            }
            s.push_str(&format!("BODY:\n{body}"));
            return s;
        }
        let env = |k: &str| self.spawn.env.get(k).cloned();
        let pod_info = match (env("NODE_NAME"), env("POD_NAME"), env("POD_NAMESPACE"), env("POD_IP")) {
            (None, None, None, None) => "\t-no pod information available-\n".to_string(),
            (n, p, ns, ip) => format!(
                "\tnode name:\t{}\n\tpod name:\t{}\n\tpod namespace:\t{}\n\tpod IP:\t{}\n",
                n.unwrap_or_default(),
                p.unwrap_or_default(),
                ns.unwrap_or_default(),
                ip.unwrap_or_default()
            ),
        };
        let mut s = format!("\n\nHostname: {}\n\nPod Information:\n{pod_info}\nServer values:\n\tserver_version=nginx: 1.13.3 - lua: 10008\n\nRequest Information:\n\tclient_address={}\n\tmethod={}\n\treal path={}\n\tquery={q}\n\trequest_version={}\n\trequest_scheme=http\n\trequest_uri=http://{host_hdr}:{}{}\n\nRequest Headers:\n", os.hostname(), conn.src, req.method, req.path(), req.version.trim_start_matches("HTTP/"), conn.port, req.target);
        let _ = s.len();
        s = s.replace(
            &format!("http://{host_hdr}:{}", conn.port),
            &if host_hdr.contains(':') { format!("http://{host_hdr}") } else { format!("http://{host_hdr}:{}", conn.port) },
        );
        for (k, v) in &headers {
            s.push_str(&format!("\t{k}={v}\t\n"));
        }
        s.push_str(&format!("\nRequest Body:\n\t{body}\n\n"));
        s
    }
}

/// A Node.js `http` response written with `write()`s and `end()`: chunked unless a length is
/// known, headers in the order node writes them.
fn node_chunked(req: &Request, headers: &[(&str, &str)], parts: &[String], now: u64) -> Vec<u8> {
    let close = req.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close")) || req.version == "HTTP/1.0";
    let mut s = String::from("HTTP/1.1 200 OK\r\n");
    for (k, v) in headers {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s.push_str(&format!("Date: {}\r\nConnection: {}\r\n", http_date(now), if close { "close" } else { "keep-alive" }));
    let single = parts.len() == 1;
    if single {
        s.push_str(&format!("Content-Length: {}\r\n\r\n", parts[0].len()));
        let mut b = s.into_bytes();
        if req.method != "HEAD" {
            b.extend_from_slice(parts[0].as_bytes());
        }
        return b;
    }
    s.push_str("Transfer-Encoding: chunked\r\n\r\n");
    let mut b = s.into_bytes();
    if req.method != "HEAD" {
        for p in parts {
            if !p.is_empty() {
                b.extend_from_slice(format!("{:x}\r\n{p}\r\n", p.len()).as_bytes());
            }
        }
        b.extend_from_slice(b"0\r\n\r\n");
    }
    b
}

impl Program for Sample {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match (&self.phase, wake) {
            (Phase::Start, _) => self.start(os),
            (Phase::Done, _) => Step::Exit(0),
            (Phase::Serving, Wake::Signal(s)) => {
                let code = match self.kind {
                    Kind::HelloApp(_) | Kind::Goproxy => Some(crate::agnhost::go_default_signal(os, s)),
                    Kind::Echoserver(_) if matches!(s, Signal::Term | Signal::Int | Signal::Quit) => Some(0),
                    _ => default_signal_exit(os, s),
                };
                match code {
                    Some(c) => {
                        self.phase = Phase::Done;
                        Step::Exit(c)
                    }
                    None => common::idle(&mut self.cpu, os.now_ms(), None),
                }
            }
            (Phase::Serving, _) => common::idle(&mut self.cpu, os.now_ms(), None),
        }
    }

    fn memory_bytes(&self) -> u64 {
        match self.kind {
            Kind::HelloApp(_) | Kind::Goproxy => 4_300_000,
            Kind::Echoserver(_) => 7_500_000,
            _ => 13_000_000,
        }
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        if self.phase != Phase::Serving {
            return Vec::new();
        }
        match &self.kind {
            // HTTPS on 8443 from 1.9.
            Kind::Echoserver(v) if crate::nginx::vnum(v) >= (1, 9, 0) => vec![(self.port, false), (8443, false)],
            _ => vec![(self.port, false)],
        }
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        if !self.listening().contains(&(conn.port, conn.udp)) {
            return None;
        }
        if conn.data.is_empty() {
            return Some(Outgoing::Reply(Vec::new()));
        }
        self.cpu.charge_us(if matches!(self.kind, Kind::HelloApp(_) | Kind::Goproxy) { 120 } else { 600 });
        Some(Outgoing::Reply(self.handle(os, conn)))
    }
}

/// `node`: `-v`, `-e`/`-p` with `console.log` of literals, scripts naming a kubesim
/// implementation, and scripts that `listen()` (served with the text they `end()`).
pub fn node(spawn: &Spawn, image: &str) -> Box<dyn Program> {
    let v = spawn.env.get("NODE_VERSION").map(|v| format!("v{v}")).unwrap_or_else(|| "v22.18.0".into());
    let args: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        match args[i].as_str() {
            "-v" | "--version" => return common::Print::boxed(format!("{v}\n"), "", 0),
            "-e" | "--eval" | "-p" | "--print" => {
                let code = args.get(i + 1).cloned().unwrap_or_default();
                return Box::new(NodeEval { code, done: false });
            }
            _ => i += 1,
        }
    }
    let Some(script) = args.get(i) else { return common::Print::boxed("", "", 0) };
    Box::new(NodeScript { spawn: spawn.clone(), script: script.clone(), image: image.to_string(), inner: None })
}

#[derive(Clone, Debug)]
struct NodeEval {
    code: String,
    done: bool,
}

fn console_logs(code: &str) -> Option<String> {
    let mut out = String::new();
    for stmt in code.split([';', '\n']) {
        let s = stmt.trim();
        if s.is_empty() {
            continue;
        }
        let inner = s.strip_prefix("console.log(")?.strip_suffix(')')?;
        let inner = inner.trim();
        let lit = inner
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .or_else(|| inner.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
            .or_else(|| inner.strip_prefix('`').and_then(|x| x.strip_suffix('`')));
        match lit {
            Some(l) => out.push_str(&format!("{}\n", l.replace("\\n", "\n"))),
            None if inner.parse::<f64>().is_ok() => out.push_str(&format!("{inner}\n")),
            None => return None,
        }
    }
    Some(out)
}

impl Program for NodeEval {
    fn resume(&mut self, os: &mut dyn Os, _wake: Wake) -> Step {
        if self.done {
            return Step::Exit(0);
        }
        self.done = true;
        match console_logs(&self.code) {
            Some(o) => {
                common::out(os, &o);
                Step::Exit(0)
            }
            None => {
                common::err(
                    os,
                    &format!(
                        "[eval]:1\n{}\n^\n\nkubesim: this Node.js model only runs console.log() of literals\n\nNode.js v22.18.0\n",
                        self.code.lines().next().unwrap_or("")
                    ),
                );
                Step::Exit(1)
            }
        }
    }
}

#[derive(Clone, Debug)]
struct NodeScript {
    spawn: Spawn,
    script: String,
    image: String,
    inner: Option<Box<dyn Program>>,
}

impl Program for NodeScript {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Some(p) = self.inner.as_mut() {
            return p.resume(os, wake);
        }
        let path = kubesim_os::fs::join(&self.spawn.cwd, &self.script);
        let Some(src) = common::read_file(os, &path, 4 << 20) else {
            common::err(os, &format!("node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module '{path}'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n    at node:internal/main/run_main_module:28:49 {{\n  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}}\n\nNode.js v22.18.0\n"));
            return Step::Exit(1);
        };
        let text = String::from_utf8_lossy(&src).into_owned();
        let mut p: Box<dyn Program> = if let Some(imp) = text.strip_prefix("#!kubesim ").and_then(|r| r.split_whitespace().next()) {
            match crate::program_for_image(imp, &self.spawn, &self.image) {
                Some(p) => p,
                None => common::Print::boxed("", "", 0),
            }
        } else if let Some(port) =
            text.find(".listen(").and_then(|i| text[i + 8..].split(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse::<u16>().ok()))
        {
            let body = text.find(".end(").map(|i| &text[i + 5..]).and_then(|r| {
                let q = r.chars().next()?;
                if q == '\'' || q == '"' || q == '`' {
                    r[1..].find(q).map(|e| r[1..1 + e].to_string())
                } else {
                    None
                }
            });
            Box::new(Sample::new(&self.spawn, Kind::NodeGeneric(body.unwrap_or_default()), port))
        } else {
            match console_logs(&text) {
                Some(o) => common::Print::boxed(o, "", 0),
                None => common::Print::boxed("", "kubesim: this Node.js model runs only console.log() scripts and simple http servers\n", 1),
            }
        };
        let s = p.resume(os, Wake::Start);
        self.inner = Some(p);
        s
    }
    fn memory_bytes(&self) -> u64 {
        self.inner.as_ref().map(|p| p.memory_bytes()).unwrap_or(30_000_000)
    }
    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        self.inner.as_mut()?.serve(os, conn)
    }
    fn listening(&self) -> Vec<(u16, bool)> {
        self.inner.as_ref().map(|p| p.listening()).unwrap_or_default()
    }
}

/// The node image's `docker-entrypoint.sh`: runs `node` on arguments that are flags or not
/// commands.
#[derive(Clone, Debug)]
pub struct NodeEntrypoint {
    spawn: Spawn,
    inner: Option<Box<dyn Program>>,
}

impl NodeEntrypoint {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> NodeEntrypoint {
        NodeEntrypoint { spawn: spawn.clone(), inner: None }
    }
}

impl Program for NodeEntrypoint {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Some(p) = self.inner.as_mut() {
            return p.resume(os, wake);
        }
        let mut argv: Vec<String> = self.spawn.argv.iter().skip(1).cloned().collect();
        let is_cmd = argv.first().is_some_and(|a| {
            !a.starts_with('-')
                && kubesim_os::registry::resolve_command(a, self.spawn.env.get("PATH").map(String::as_str), &self.spawn.cwd, os.fs_ref()).is_ok()
        });
        if !is_cmd {
            argv.insert(0, "node".into());
        }
        let mut p = common::ExecAs::boxed(&self.spawn, argv);
        let s = p.resume(os, Wake::Start);
        self.inner = Some(p);
        s
    }
    fn memory_bytes(&self) -> u64 {
        self.inner.as_ref().map(|p| p.memory_bytes()).unwrap_or(500_000)
    }
    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        self.inner.as_mut()?.serve(os, conn)
    }
    fn listening(&self) -> Vec<(u16, bool)> {
        self.inner.as_ref().map(|p| p.listening()).unwrap_or_default()
    }
}
