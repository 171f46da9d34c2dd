//! agnhost (`registry.k8s.io/e2e-test-images/agnhost`): one Go binary whose cobra subcommands
//! are the e2e test servers. Also the Go runtime's signal behaviour shared by the other Go
//! programs here.

use crate::common::{self, go_error, go_log, go_not_found, go_response, CpuQueue, Flags};
use kubesim_os::net::http::Request;
use kubesim_os::program::{Incoming, Os, Outgoing, Program, Signal, Spawn, Step, Wake};
use std::collections::BTreeMap;

/// What the Go runtime does with a signal the program did not `signal.Notify` for: SIGQUIT
/// dumps goroutines and exits 2; other fatal signals are re-raised with the default action,
/// which kills a normal process (128+n) but is ignored by the kernel for PID 1, after which
/// the runtime exits with 2.
pub fn go_default_signal(os: &mut dyn Os, sig: Signal) -> i32 {
    match sig {
        Signal::Kill => 137,
        Signal::Quit => {
            common::err(os, "SIGQUIT: quit\nPC=0x4725e1 m=0 sigcode=0\n\ngoroutine 0 gp=0x1b21c00 m=0 mp=0x1b22f20 [idle]:\nruntime.futex(0x1b23060, 0x80, 0x0, 0x0, 0x0, 0x0)\n\truntime/sys_linux_amd64.s:557 +0x21 fp=0x7ffd4a2c1e10 sp=0x7ffd4a2c1e08 pc=0x4725e1\n\ngoroutine 1 gp=0xc000002380 m=nil [IO wait]:\nruntime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)\n\truntime/proc.go:424 +0xce fp=0xc0001a5a18 sp=0xc0001a59f8 pc=0x43e10e\n");
            2
        }
        s => {
            if os.pid() == 1 {
                2
            } else {
                s.exit_code()
            }
        }
    }
}

/// Go's `syscall.Signal.String()`.
pub fn go_signal_name(sig: Signal) -> &'static str {
    match sig {
        Signal::Hup => "hangup",
        Signal::Int => "interrupt",
        Signal::Quit => "quit",
        Signal::Kill => "killed",
        Signal::Usr1 => "user defined signal 1",
        Signal::Usr2 => "user defined signal 2",
        Signal::Term => "terminated",
    }
}

/// statfs(2) f_type of ext4 (EXT4_SUPER_MAGIC, 0xEF53): the node's disk.
const EXT4_SUPER_MAGIC: u32 = 0xEF53;
/// statfs(2) f_type of overlayfs (OVERLAYFS_SUPER_MAGIC, 0x794C7630): a container's root.
const OVERLAYFS_SUPER_MAGIC: u32 = 0x794C_7630;

const SUBCOMMANDS: &[(&str, &str)] = &[
    ("audit-proxy", "Creates a proxy for the AuditSink"),
    ("connect", "Attempts a TCP connection and returns useful errors"),
    ("crd-conversion-webhook", "Starts an HTTP server, with handlers for CRD conversion"),
    ("dns-server-list", "Prints the host's DNS Server list"),
    ("dns-suffix", "Prints the host's DNS suffix list"),
    ("entrypoint-tester", "Prints the args it's passed and exits"),
    ("etc-hosts", "Prints the host's /etc/hosts file"),
    ("fake-gitserver", "Fakes a git server"),
    ("grpc-health-checking", "Starts a simple grpc health checking endpoint"),
    ("guestbook", "Creates a HTTP server with various endpoints representing a guestbook app"),
    ("help", "Help about any command"),
    ("inclusterclient", "Periodically poll the Kubernetes \"/healthz\" endpoint"),
    ("liveness", "Starts a server that is alive for 10 seconds"),
    ("logs-generator", "Outputs lines of logs to stdout uniformly"),
    ("mounttest", "Creates files in a volume and verifies their permissions"),
    ("net", "Creates webserver or runner for various networking tests"),
    ("netexec", "Creates HTTP(S), UDP, and (optionally) SCTP servers with various endpoints"),
    ("nettest", "Starts a tiny web server for checking networking connectivity"),
    ("no-snat-test", "Creates the /checknosnat and /whoami endpoints"),
    ("no-snat-test-proxy", "Creates a proxy for the /checknosnat endpoint"),
    ("pause", "Pauses the execution"),
    ("port-forward-tester", "Creates a TCP server that sends a test string to the client"),
    ("porter", "Serves requested data on ports specified in ENV variables"),
    ("resource-consumer-controller", "Starts a HTTP server that spreads requests around resource consumers"),
    ("serve-hostname", "Serves the hostname"),
    ("test-service-account-issuer-discovery", "Tests the ServiceAccountIssuerDiscovery feature"),
    ("test-webserver", "Starts a simple HTTP fileserver"),
    ("webhook", "Starts a HTTP server, with handlers for admission webhook"),
];

fn usage() -> String {
    let mut s = String::from("Usage:\n  app [command]\n\nAvailable Commands:\n");
    let w = SUBCOMMANDS.iter().map(|(n, _)| n.len()).max().unwrap_or(10) + 3;
    for (n, d) in SUBCOMMANDS {
        s.push_str(&format!("  {n:<w$}{d}\n"));
    }
    s.push_str("\nFlags:\n      --add_dir_header                   If true, adds the file directory to the header of the log messages\n      --alsologtostderr                  log to standard error as well as files (no effect when -logtostderr=true)\n  -h, --help                             help for app\n      --log_backtrace_at traceLocation   when logging hits line file:N, emit a stack trace (default :0)\n      --log_dir string                   If non-empty, write log files in this directory (no effect when -logtostderr=true)\n      --log_file string                  If non-empty, use this log file (no effect when -logtostderr=true)\n      --logtostderr                      log to standard error instead of files (default true)\n      --skip_headers                     If true, avoid header prefixes in the log messages\n  -v, --v Level                          number for the log level verbosity\n      --version                          version for app\n      --vmodule moduleSpec               comma-separated list of pattern=N settings for file-filtered logging\n\nUse \"app [command] --help\" for more information about a command.\n");
    s
}

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(!a[i - 1].eq_ignore_ascii_case(&b[j - 1]));
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Which server or tool an agnhost invocation is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    Liveness,
    Netexec { http: u16, udp: Option<u16>, override_path: String },
    ServeHostname { port: u16, tcp: bool, udp: bool, http: bool, close: bool },
    Pause,
    TestWebserver { port: u16 },
    Porter { ports: Vec<(u16, bool, String)>, json: bool },
    FakeGitserver,
    Print { stdout: String, stderr: String, code: i32 },
    Mounttest { flags: Flags },
    Generic { name: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Serving,
    /// serve-hostname after SIGTERM: sleeping until this time, then exit 0.
    Draining(u64),
    /// Exit with this code at the next resume (netexec /exit, /shutdown).
    ExitNext(i32),
    Done,
}

/// The agnhost program.
#[derive(Clone, Debug)]
pub struct Agnhost {
    spawn: Spawn,
    mode: Mode,
    phase: Phase,
    started_ms: u64,
    cpu: CpuQueue,
}

impl Agnhost {
    /// From a spawn (`/agnhost netexec --http-port=8080`).
    pub fn new(spawn: &Spawn) -> Agnhost {
        let args: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
        let mode = Agnhost::parse(spawn, &args);
        Agnhost { spawn: spawn.clone(), mode, phase: Phase::Start, started_ms: 0, cpu: CpuQueue::default() }
    }

    fn parse(spawn: &Spawn, args: &[String]) -> Mode {
        // Persistent klog flags may come before the subcommand.
        let mut i = 0;
        while i < args.len() && args[i].starts_with('-') {
            if matches!(args[i].as_str(), "-h" | "--help") {
                return Mode::Print { stdout: usage(), stderr: String::new(), code: 0 };
            }
            if args[i] == "--version" {
                return Mode::Print { stdout: "app version 2.53\n".into(), stderr: String::new(), code: 0 };
            }
            i += 1;
        }
        let Some(sub) = args.get(i) else { return Mode::Print { stdout: usage(), stderr: String::new(), code: 0 } };
        let rest = &args[i + 1..];
        let flags = Flags::parse(rest, |n| {
            !matches!(n, "tcp" | "udp" | "http" | "close" | "json-response" | "logtostderr" | "alsologtostderr" | "new_file_0644" | "h" | "help")
        });
        if flags.has("help") || flags.has("h") {
            let short = SUBCOMMANDS.iter().find(|(n, _)| n == sub).map(|(_, d)| *d).unwrap_or("");
            return Mode::Print {
                stdout: format!("{short}\n\nUsage:\n  app {sub} [flags]\n\nFlags:\n  -h, --help   help for {sub}\n"),
                stderr: String::new(),
                code: 0,
            };
        }
        let port =
            |name: &str, d: u16| flags.get(name).and_then(|v| v.parse::<i64>().ok()).map(|v| if (1..=65535).contains(&v) { v as u16 } else { 0 }).unwrap_or(d);
        match sub.as_str() {
            "liveness" => Mode::Liveness,
            "netexec" => {
                let udp = flags.get("udp-port").and_then(|v| v.parse::<i64>().ok()).unwrap_or(8081);
                Mode::Netexec {
                    http: port("http-port", 8080),
                    udp: if udp < 0 { None } else { Some(udp as u16) },
                    override_path: flags.get("http-override").unwrap_or("").to_string(),
                }
            }
            "serve-hostname" => Mode::ServeHostname {
                port: port("port", 9376),
                tcp: flags.bool_or("tcp", false),
                udp: flags.bool_or("udp", false),
                http: flags.bool_or("http", true),
                close: flags.bool_or("close", false),
            },
            "pause" => Mode::Pause,
            "test-webserver" => Mode::TestWebserver { port: port("port", 80) },
            "porter" => {
                let mut ports = Vec::new();
                for (k, v) in &spawn.env {
                    for (prefix, udp) in [("SERVE_PORT_", false), ("SERVE_TCP_PORT_", false), ("SERVE_UDP_PORT_", true), ("SERVE_TLS_PORT_", false)] {
                        if let Some(p) = k.strip_prefix(prefix).and_then(|p| p.parse::<u16>().ok()) {
                            ports.push((p, udp, v.clone()));
                        }
                    }
                }
                Mode::Porter { ports, json: flags.bool_or("json-response", false) }
            }
            "fake-gitserver" => Mode::FakeGitserver,
            "dns-suffix" | "dns-server-list" | "etc-hosts" => Mode::Generic { name: sub.clone() },
            "entrypoint-tester" => Mode::Print { stdout: format!("[{}]\n", spawn.argv.join(" ")), stderr: String::new(), code: 0 },
            "mounttest" => Mode::Mounttest { flags },
            "help" => Mode::Print { stdout: usage(), stderr: String::new(), code: 0 },
            s if SUBCOMMANDS.iter().any(|(n, _)| *n == s) => Mode::Generic { name: s.to_string() },
            other => {
                let mut sugg: Vec<&str> = SUBCOMMANDS.iter().map(|(n, _)| *n).filter(|n| levenshtein(other, n) <= 2 || n.starts_with(other)).collect();
                sugg.retain(|n| *n != "help");
                let hint = if sugg.is_empty() {
                    String::new()
                } else {
                    format!("\n\nDid you mean this?\n{}", sugg.iter().map(|s| format!("\t{s}\n")).collect::<String>())
                };
                // cobra prints the error; agnhost's main ignores Execute's result: exit 0.
                Mode::Print {
                    stdout: String::new(),
                    stderr: format!("Error: unknown command \"{other}\" for \"app\"{hint}\nRun 'app --help' for usage.\n"),
                    code: 0,
                }
            }
        }
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        self.started_ms = os.now_ms();
        match self.mode.clone() {
            Mode::Print { stdout, stderr, code } => {
                common::out(os, &stdout);
                common::err(os, &stderr);
                self.phase = Phase::Done;
                Step::Exit(code)
            }
            Mode::Generic { name } => self.tool(os, &name),
            Mode::Mounttest { flags } => self.mounttest(os, &flags),
            Mode::Pause => {
                common::out(os, "Paused\n");
                self.phase = Phase::Serving;
                Step::Wait
            }
            Mode::Netexec { http, udp, .. } => {
                go_log(os, &format!("Started HTTP server on port {http}"));
                if let Some(u) = udp {
                    go_log(os, &format!("Started UDP server on port  {u}"));
                }
                self.phase = Phase::Serving;
                Step::Wait
            }
            Mode::ServeHostname { port, tcp, udp, http, .. } => {
                if http && (tcp || udp) {
                    go_log(os, "Can't server TCP/UDP mode and HTTP mode at the same time");
                    self.phase = Phase::Done;
                    return Step::Exit(1);
                }
                go_log(os, &format!("Serving on port {port}.\n"));
                self.phase = Phase::Serving;
                Step::Wait
            }
            Mode::Porter { ports, .. } => {
                for (p, udp, _) in &ports {
                    if *udp {
                        go_log(os, &format!("Started UDP server on port {p}"));
                    }
                }
                self.phase = Phase::Serving;
                Step::Wait
            }
            _ => {
                self.phase = Phase::Serving;
                Step::Wait
            }
        }
    }

    fn tool(&mut self, os: &mut dyn Os, name: &str) -> Step {
        self.phase = Phase::Done;
        let read = |os: &mut dyn Os, p: &str| common::read_file(os, p, 1 << 20).map(|b| String::from_utf8_lossy(&b).into_owned());
        match name {
            "dns-suffix" | "dns-server-list" => {
                let Some(rc) = read(os, "/etc/resolv.conf") else {
                    common::err(os, "panic: open /etc/resolv.conf: no such file or directory\n\ngoroutine 1 [running]:\nk8s.io/kubernetes/test/images/agnhost/dns.readFile(...)\n");
                    return Step::Exit(2);
                };
                let key = if name == "dns-suffix" { "search" } else { "nameserver" };
                match rc.split('\n').find(|l| l.starts_with(key)) {
                    Some(l) => {
                        let v: Vec<&str> = l.split(' ').skip(1).collect();
                        common::out(os, &format!("{}\n", v.join(",")));
                        Step::Exit(0)
                    }
                    None => {
                        common::err(os, "panic: Could not find DNS search list!\n\ngoroutine 1 [running]:\n");
                        Step::Exit(2)
                    }
                }
            }
            "etc-hosts" => match read(os, "/etc/hosts") {
                Some(h) => {
                    common::out(os, &format!("{h}\n"));
                    Step::Exit(0)
                }
                None => {
                    common::err(os, "panic: open /etc/hosts: no such file or directory\n\ngoroutine 1 [running]:\n");
                    Step::Exit(2)
                }
            },
            _ => {
                // Subcommands not modelled: they run and wait (the servers) without output.
                self.phase = Phase::Serving;
                Step::Wait
            }
        }
    }

    fn mounttest(&mut self, os: &mut dyn Os, flags: &Flags) -> Step {
        self.phase = Phase::Done;
        let mut code = 0;
        for (k, v) in &flags.flags {
            let v = v.clone().unwrap_or_default();
            match k.as_str() {
                "fs_type" => {
                    // statfs(2)'s f_type: tmpfs by name, else the magic number (mounttest's
                    // fsType): the mount holding the path (the deepest whose point is a
                    // prefix of it), else the root overlay.
                    let mounts = os.fs_ref().mounts();
                    let t = match kubesim_os::fs::mount_holding(&mounts, &v) {
                        Some(m) if m.memory => "tmpfs".to_string(),
                        Some(_) => EXT4_SUPER_MAGIC.to_string(),
                        None => OVERLAYFS_SUPER_MAGIC.to_string(),
                    };
                    common::out(os, &format!("mount type of {v:?}: {t}\n"));
                }
                "file_content" => match common::read_file(os, &v, 1 << 20) {
                    Some(b) => common::out(os, &format!("content of file {v:?}: {}\n", String::from_utf8_lossy(&b))),
                    None => {
                        common::out(os, &format!("error reading file content for {v:?}: open {v}: no such file or directory\n"));
                        code = 1;
                    }
                },
                "file_mode" | "file_perm" => match os.fs_ref().stat(&v) {
                    Ok(m) => {
                        let ms = go_file_mode(&m);
                        if k == "file_mode" {
                            common::out(os, &format!("mode of file {v:?}: {ms}\n"));
                        } else {
                            common::out(os, &format!("perms of file {v:?}: {}\n", &ms[ms.len() - 10..]));
                        }
                    }
                    Err(_) => {
                        common::out(os, &format!("error reading file mode for {v:?}: stat {v}: no such file or directory\n"));
                        code = 1;
                    }
                },
                "file_owner" => {
                    if let Ok(m) = os.fs_ref().stat(&v) {
                        common::out(os, &format!("owner UID of {v:?}: {}\nowner GID of {v:?}: {}\n", m.uid, m.gid));
                    }
                }
                n if n.starts_with("new_file_") => {
                    let mode = u32::from_str_radix(n.trim_start_matches("new_file_"), 8).unwrap_or(0o644);
                    let _ = common::write_file(os, &v, b"mount-tester new file\n");
                    let _ = os.fs().chmod(&v, mode);
                }
                _ => {}
            }
        }
        Step::Exit(code)
    }

    fn http_ports(&self) -> Vec<(u16, bool)> {
        match &self.mode {
            Mode::Liveness => vec![(8080, false)],
            Mode::Netexec { http, udp, .. } => {
                let mut v = vec![(*http, false)];
                if let Some(u) = udp {
                    v.push((*u, true));
                }
                v
            }
            Mode::ServeHostname { port, tcp, udp, http, .. } => {
                let mut v = Vec::new();
                if *http || *tcp {
                    v.push((*port, false));
                }
                if *udp {
                    v.push((*port, true));
                }
                v
            }
            Mode::TestWebserver { port } => vec![(*port, false)],
            Mode::Porter { ports, .. } => ports.iter().map(|(p, u, _)| (*p, *u)).collect(),
            Mode::FakeGitserver => vec![(8000, false)],
            _ => Vec::new(),
        }
    }

    fn on_signal(&mut self, os: &mut dyn Os, sig: Signal) -> Step {
        match (&self.mode, sig) {
            (_, Signal::Kill) => Step::Exit(137),
            (Mode::Pause, Signal::Int) => Step::Exit(1),
            (Mode::Pause, Signal::Term) => Step::Exit(2),
            (Mode::ServeHostname { .. }, Signal::Term) => {
                if matches!(self.phase, Phase::Draining(_)) {
                    return self.idle(os);
                }
                go_log(os, &format!("Shutting down after receiving signal: {}.\n", go_signal_name(sig)));
                go_log(os, "Awaiting pod deletion.\n");
                self.phase = Phase::Draining(os.now_ms() + 60_000);
                self.idle(os)
            }
            _ => {
                self.phase = Phase::Done;
                Step::Exit(go_default_signal(os, sig))
            }
        }
    }

    fn idle(&mut self, os: &mut dyn Os) -> Step {
        let now = os.now_ms();
        match self.phase.clone() {
            Phase::ExitNext(c) => {
                self.phase = Phase::Done;
                Step::Exit(c)
            }
            Phase::Draining(t) if now >= t && self.cpu.is_empty() => {
                self.phase = Phase::Done;
                Step::Exit(0)
            }
            Phase::Draining(t) => common::idle(&mut self.cpu, now, Some(t)),
            _ => common::idle(&mut self.cpu, now, None),
        }
    }

    fn handle_http(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Vec<u8>> {
        let now = os.unix_time();
        let req = match Request::parse(&conn.data[..conn.data.len().min(common::MAX_REQUEST)]) {
            Ok(r) => r,
            Err(_) => return Some(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request".to_vec()),
        };
        let remote = format!("{}:{}", conn.src, conn.src_port);
        let mode = self.mode.clone();
        match mode {
            Mode::Liveness => {
                let since = os.now_ms().saturating_sub(self.started_ms);
                Some(match req.path() {
                    "/healthz" => {
                        if since > 10_000 {
                            go_response(Some(&req), 500, Vec::new(), format!("error: {}", common::go_float(since as f64 / 1000.0)).as_bytes(), now)
                        } else {
                            go_response(Some(&req), 200, Vec::new(), b"ok", now)
                        }
                    }
                    "/started" => go_response(Some(&req), 200, Vec::new(), common::go_duration_string(since).as_bytes(), now),
                    "/redirect" => {
                        let loc = common::query_value(&req.target, "loc");
                        go_redirect(&req, &loc, 302, now)
                    }
                    _ => go_not_found(Some(&req), now),
                })
            }
            Mode::Netexec { override_path, .. } => {
                let target = if override_path.is_empty() { req.target.clone() } else { override_path.clone() };
                Some(self.netexec(os, &req, &target, &remote, now))
            }
            Mode::ServeHostname { close, tcp, .. } => {
                if tcp {
                    go_log(os, &format!("TCP request from {remote}"));
                    return Some(os.hostname().into_bytes());
                }
                go_log(os, &format!("HTTP request from {remote}"));
                let h = if close { vec![("Connection".to_string(), "close".to_string())] } else { Vec::new() };
                Some(go_response(Some(&req), 200, h, os.hostname().as_bytes(), now))
            }
            Mode::TestWebserver { .. } => {
                let mut h: Vec<(String, String)> = vec![
                    ("Cache-Control".into(), "private".into()),
                    ("Access-Control-Allow-Origin".into(), "*".into()),
                    ("Access-Control-Allow-Credentials".into(), "true".into()),
                    ("Access-Control-Allow-Methods".into(), "GET, POST, OPTIONS".into()),
                    ("Access-Control-Allow-Headers".into(), "DNT,X-Mx-ReqToken,Keep-Alive,User-Agent,X-Requested-With,Cache-Control,Content-Type".into()),
                ];
                Some(go_file_server(os, &req, "/", &mut h, now))
            }
            Mode::Porter { ports, json } => {
                let value = ports.iter().find(|(p, u, _)| *p == conn.port && !*u).map(|(_, _, v)| v.clone()).unwrap_or_default();
                if json {
                    let body = format!("{{\"Method\":{},\"Body\":{}}}", common::json_string(&req.method), common::json_string(&value));
                    return Some(go_response(Some(&req), 200, vec![("Content-Type".into(), "application/json".into())], body.as_bytes(), now));
                }
                Some(go_response(Some(&req), 200, Vec::new(), value.as_bytes(), now))
            }
            Mode::FakeGitserver => Some(go_response(Some(&req), 200, Vec::new(), b"I am a fake git server", now)),
            _ => None,
        }
    }

    fn netexec(&mut self, os: &mut dyn Os, req: &Request, target: &str, remote: &str, now: u64) -> Vec<u8> {
        let path = target.split('?').next().unwrap_or("/");
        let q = |n: &str| common::query_value(target, n);
        let ok = |body: &str| go_response(Some(req), 200, Vec::new(), body.as_bytes(), now);
        match path {
            "/" => {
                go_log(os, "GET /");
                let ms = os.unix_time_ms();
                let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S", (ms / 1000) as i64, 0);
                let frac = ms % 1000;
                let frac = if frac == 0 { String::new() } else { format!(".{frac:03}").trim_end_matches('0').to_string() };
                let mono = os.now_ms().saturating_sub(self.started_ms);
                ok(&format!("NOW: {t}{frac} +0000 UTC m=+{}.{:03}000000", mono / 1000, mono % 1000))
            }
            "/hostname" | "/hostName" => {
                go_log(os, &format!("GET {path}"));
                ok(&os.hostname())
            }
            "/clientip" => {
                go_log(os, "GET /clientip");
                ok(remote)
            }
            "/echo" => {
                let msg = q("msg");
                let code = q("code");
                go_log(os, &format!("GET /echo?msg={msg}&code={code}"));
                if code.is_empty() {
                    return ok(&msg);
                }
                match code.parse::<u16>() {
                    Ok(c) if (100..=999).contains(&c) => go_response(Some(req), c, Vec::new(), msg.as_bytes(), now),
                    _ => ok(&format!("argument 'code' must be an integer or empty, got {code:?}\n")),
                }
            }
            "/healthz" => {
                go_log(os, "GET /healthz");
                go_response(Some(req), 200, Vec::new(), b"", now)
            }
            "/exit" => {
                let (code, timeout, wait) = (q("code"), q("timeout"), q("wait"));
                go_log(os, &format!("GET /exit?code={code}&timeout={timeout}&wait={wait}"));
                let Ok(c) = (if code.is_empty() { Ok(0) } else { code.parse::<i32>() }) else {
                    return ok(&format!("argument 'code' must be an integer [0-127] or empty, got {code:?}\n"));
                };
                let t = if timeout.is_empty() { Some(0) } else { common::go_duration_ms(&timeout) };
                let w = if wait.is_empty() { Some(0) } else { common::go_duration_ms(&wait) };
                let (Some(t), Some(w)) = (t, w) else { return ok("argument 'timeout' must be a valid golang duration or empty\n") };
                go_log(
                    os,
                    &format!(
                        "Will begin shutdown in {}, allowing {} for connections to close, then will exit with {c}",
                        common::go_duration_string(w),
                        common::go_duration_string(t)
                    ),
                );
                if t > 0 {
                    go_log(os, "Graceful shutdown completed with: <nil>");
                }
                self.phase = Phase::ExitNext(c & 0xff);
                Vec::new()
            }
            "/shutdown" => {
                go_log(os, "GET /shutdown");
                self.phase = Phase::ExitNext(0);
                Vec::new()
            }
            "/shell" => {
                let mut cmd = q("shellCommand");
                if cmd.is_empty() {
                    cmd = q("cmd");
                }
                go_log(os, &format!("GET /shell?cmd={cmd}"));
                let argv = vec!["/bin/sh".to_string(), "-c".to_string(), cmd];
                let mut out = BTreeMap::new();
                match common::exec(os, &argv, &self.spawn.env, &self.spawn.cwd) {
                    Ok(p) => {
                        let (code, o) = common::run_sync(p, os, 200_000, 0);
                        if !o.is_empty() {
                            out.insert("output".to_string(), String::from_utf8_lossy(&o).into_owned());
                        }
                        if code != 0 {
                            out.insert("error".to_string(), format!("exit status {code}"));
                        }
                    }
                    Err(_) => {
                        out.insert("error".to_string(), "fork/exec /bin/sh: no such file or directory".to_string());
                    }
                }
                let shown: Vec<String> = out.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                go_log(os, &format!("Output: map[{}]", shown.join(" ")));
                ok(&common::json_object(&out))
            }
            "/redirect" => {
                let loc = q("location");
                let code = q("code");
                go_log(os, &format!("{} /redirect?msg={loc}&code={code}", req.method));
                let c = if code.is_empty() { 302 } else { code.parse().unwrap_or(302) };
                go_redirect(req, &loc, c, now)
            }
            "/dial" => {
                let (host, port, request, protocol, tries) = (q("host"), q("port"), q("request"), q("protocol"), q("tries"));
                go_log(os, &format!("GET /dial?host={host}&protocol={protocol}&port={port}&request={request}&tries={tries}"));
                if request.is_empty() {
                    return go_error(Some(req), 400, "request parameter not specified. <nil>", now);
                }
                // serve() answers synchronously, so the model cannot dial out.
                let mut m = BTreeMap::new();
                m.insert("errors".to_string(), String::new());
                ok("{\"errors\":[\"kubesim: /dial is not modelled (netexec cannot open connections while serving)\"]}")
            }
            "/upload" => {
                go_log(os, "GET /upload");
                ok("{\"error\":\"Unable to upload file.\"}")
            }
            _ => {
                // Everything else falls to the "/" handler (ServeMux subtree match).
                go_log(os, "GET /");
                ok("NOW: ")
            }
        }
    }

    fn handle_udp(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Vec<u8>> {
        let remote = format!("{}:{}", conn.src, conn.src_port);
        match &self.mode {
            Mode::Netexec { .. } => {
                let t = String::from_utf8_lossy(&conn.data).trim().to_ascii_lowercase();
                if t == "hostname" {
                    go_log(os, "Sending udp hostName response");
                    Some(os.hostname().into_bytes())
                } else if let Some(m) = t.strip_prefix("echo ") {
                    go_log(os, &format!("Echoing {m} to UDP client {remote}\n"));
                    Some(m.as_bytes().to_vec())
                } else if t == "clientip" {
                    go_log(os, &format!("Sending clientip back to UDP client {remote}\n"));
                    Some(remote.into_bytes())
                } else {
                    if !t.is_empty() {
                        go_log(os, &format!("Unknown UDP command received from {remote}: {t}\n"));
                    }
                    None
                }
            }
            Mode::ServeHostname { .. } => {
                go_log(os, &format!("UDP request from {remote}"));
                Some(os.hostname().into_bytes())
            }
            Mode::Porter { ports, .. } => ports.iter().find(|(p, u, _)| *p == conn.port && *u).map(|(_, _, v)| v.clone().into_bytes()),
            _ => None,
        }
    }
}

fn go_file_mode(m: &kubesim_os::fs::Metadata) -> String {
    m.mode_string()
}

/// Go's `http.Redirect`.
fn go_redirect(req: &Request, loc: &str, code: u16, now: u64) -> Vec<u8> {
    let h = vec![("Location".to_string(), loc.to_string()), ("Content-Type".to_string(), "text/html; charset=utf-8".to_string())];
    let body = if req.method == "GET" || req.method == "HEAD" {
        format!("<a href=\"{}\">{}</a>.\n\n", html_escape(loc), common::go_status_text(code))
    } else {
        String::new()
    };
    go_response(Some(req), code, h, body.as_bytes(), now)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&#34;").replace('\'', "&#39;")
}

fn go_mime(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "txt" => "text/plain; charset=utf-8",
        "xml" => "text/xml; charset=utf-8",
        "pdf" => "application/pdf",
        "wasm" => "application/wasm",
        _ => return None,
    })
}

/// Go's `http.FileServer(http.Dir(root))` for GET/HEAD.
pub fn go_file_server(os: &mut dyn Os, req: &Request, root: &str, headers: &mut Vec<(String, String)>, now: u64) -> Vec<u8> {
    let path = common::url_decode(req.path(), false);
    let full = kubesim_os::fs::normalize(&format!("{}/{}", root.trim_end_matches('/'), path));
    let fs = os.fs_ref();
    let meta = match fs.stat(&full) {
        Ok(m) => m,
        Err(_) => {
            let mut h = std::mem::take(headers);
            h.push(("Content-Type".into(), "text/plain; charset=utf-8".into()));
            h.push(("X-Content-Type-Options".into(), "nosniff".into()));
            return go_response(Some(req), 404, h, b"404 page not found\n", now);
        }
    };
    let mut h = std::mem::take(headers);
    if meta.is_dir() {
        if !path.ends_with('/') {
            let base = kubesim_os::fs::basename(&path);
            h.push(("Location".into(), format!("{base}/")));
            return go_response(Some(req), 301, h, b"", now);
        }
        if let Ok(m) = fs.stat(&format!("{}/index.html", full.trim_end_matches('/'))) {
            if !m.is_dir() {
                let data = fs.read(&format!("{}/index.html", full.trim_end_matches('/'))).unwrap_or_default();
                h.push(("Accept-Ranges".into(), "bytes".into()));
                h.push(("Content-Length".into(), data.len().to_string()));
                h.push(("Content-Type".into(), "text/html; charset=utf-8".into()));
                h.push(("Last-Modified".into(), common::http_date(m.mtime_ms / 1000)));
                return go_response(Some(req), 200, h, &data, now);
            }
        }
        let mut names: Vec<String> =
            fs.read_dir(&full).unwrap_or_default().into_iter().map(|e| if e.meta.is_dir() { format!("{}/", e.name) } else { e.name }).collect();
        names.sort();
        let mut body = String::from("<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>\n");
        for n in names {
            body.push_str(&format!("<a href=\"{}\">{}</a>\n", n.replace('%', "%25").replace(' ', "%20"), html_escape(&n)));
        }
        body.push_str("</pre>\n");
        h.push(("Content-Type".into(), "text/html; charset=utf-8".into()));
        h.push(("Last-Modified".into(), common::http_date(meta.mtime_ms / 1000)));
        return go_response(Some(req), 200, h, body.as_bytes(), now);
    }
    let data = fs.read(&full).unwrap_or_default();
    let ct = go_mime(&full).unwrap_or_else(|| common::go_sniff(&data));
    h.push(("Accept-Ranges".into(), "bytes".into()));
    h.push(("Content-Length".into(), data.len().to_string()));
    h.push(("Content-Type".into(), ct.into()));
    h.push(("Last-Modified".into(), common::http_date(meta.mtime_ms / 1000)));
    go_response(Some(req), 200, h, &data, now)
}

impl Program for Agnhost {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match (&self.phase, wake) {
            (Phase::Start, _) => self.start(os),
            (Phase::Done, _) => Step::Exit(0),
            (_, Wake::Signal(s)) => self.on_signal(os, s),
            _ => self.idle(os),
        }
    }

    fn memory_bytes(&self) -> u64 {
        match self.mode {
            Mode::Pause => 6_200_000,
            _ => 9_400_000,
        }
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        if !matches!(self.phase, Phase::Serving | Phase::Draining(_)) {
            return Vec::new();
        }
        self.http_ports()
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        if !self.listening().contains(&(conn.port, conn.udp)) {
            return None;
        }
        let r = if conn.udp {
            self.handle_udp(os, conn)
        } else {
            if conn.data.is_empty() {
                return Some(Outgoing::Reply(Vec::new()));
            }
            self.handle_http(os, conn)
        };
        self.cpu.charge_us(150);
        match r {
            Some(b) => Some(Outgoing::Reply(b)),
            None if conn.udp => Some(Outgoing::Hang),
            None => Some(Outgoing::Reset),
        }
    }
}
