//! Apache httpd (`httpd`, `httpd-foreground`), Debian's `apache2` with mod_php
//! (`apache2-foreground` of the `php:*-apache` images, `registry.k8s.io/hpa-example`, the
//! guestbook frontend), `docker-php-entrypoint` and a tiny `php` CLI.

use crate::common::{self, clf_time, http_date, CpuQueue, TcpClient, TcpStep};
use kubesim_os::net::http::Request;
use kubesim_os::program::{Incoming, Os, Outgoing, Program, Signal, Spawn, Step, Wake};

/// CPU one request to the HPA walkthrough's `index.php` costs (a million `sqrt` calls in
/// PHP 5): chosen so the docs' single `wget` loop drives one pod to its 500m limit (250% of the
/// 200m request) and about seven replicas at the 50% target.
pub const HPA_EXAMPLE_CPU_MS: u64 = 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    /// The `httpd` image: /usr/local/apache2, mpm_event, `common` log format.
    Httpd,
    /// Debian's apache2 (php images): mpm_prefork, mod_php, `combined` log format.
    Debian,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Serving,
    Done,
}

/// The guestbook frontend's view of Redis, refreshed in the background.
#[derive(Clone, Debug, Default)]
struct Guestbook {
    cache: Option<String>,
    pending_writes: Vec<String>,
    next_poll: u64,
    client: Option<TcpClient>,
    writing: Option<String>,
}

/// Apache (either flavour).
#[derive(Clone, Debug)]
pub struct Apache {
    spawn: Spawn,
    flavor: Flavor,
    phase: Phase,
    version: String,
    php: Option<String>,
    docroot: String,
    port: u16,
    server_name: Option<String>,
    ip: String,
    cpu: CpuQueue,
    guestbook: Guestbook,
    foreground: bool,
    argv_shown: String,
}

fn debian_apache_version(os: &dyn Os) -> &'static str {
    let v = os.fs_ref().read("/etc/debian_version").map(|b| String::from_utf8_lossy(&b).trim().to_string()).unwrap_or_default();
    match v.split('.').next().unwrap_or("") {
        "8" => "2.4.10",
        "9" => "2.4.25",
        "10" => "2.4.38",
        "11" => "2.4.62",
        "12" => "2.4.62",
        "13" => "2.4.65",
        _ => "2.4.62",
    }
}

impl Apache {
    /// `httpd ...` / `httpd-foreground`.
    pub fn httpd(spawn: &Spawn, foreground_script: bool) -> Apache {
        Apache::new(spawn, Flavor::Httpd, foreground_script)
    }

    /// `apache2 ...` / `apache2-foreground`.
    pub fn debian(spawn: &Spawn, foreground_script: bool) -> Apache {
        Apache::new(spawn, Flavor::Debian, foreground_script)
    }

    fn new(spawn: &Spawn, flavor: Flavor, script: bool) -> Apache {
        let fg = script || spawn.argv.iter().any(|a| a == "-DFOREGROUND" || a == "FOREGROUND");
        let name = if flavor == Flavor::Httpd { "httpd" } else { "apache2" };
        Apache {
            spawn: spawn.clone(),
            flavor,
            phase: Phase::Start,
            version: String::new(),
            php: spawn.env.get("PHP_VERSION").cloned(),
            docroot: if flavor == Flavor::Httpd { "/usr/local/apache2/htdocs".into() } else { "/var/www/html".into() },
            port: 80,
            server_name: None,
            ip: "127.0.1.1".into(),
            cpu: CpuQueue::default(),
            guestbook: Guestbook::default(),
            foreground: fg,
            argv_shown: format!("{name} -D FOREGROUND"),
        }
    }

    fn name(&self) -> &'static str {
        if self.flavor == Flavor::Httpd {
            "httpd"
        } else {
            "apache2"
        }
    }

    fn server_header(&self) -> String {
        match self.flavor {
            Flavor::Httpd => format!("Apache/{} (Unix)", self.version),
            Flavor::Debian => format!("Apache/{} (Debian)", self.version),
        }
    }

    fn banner(&self) -> String {
        match (self.flavor, &self.php) {
            (Flavor::Debian, Some(p)) => format!("Apache/{} (Debian) PHP/{p}", self.version),
            _ => self.server_header(),
        }
    }

    fn stamp(&self, os: &dyn Os) -> String {
        let ms = os.unix_time_ms();
        let t = ms / 1000;
        format!(
            "{}.{:03}{:03} {}",
            kubesim_os::time::strftime("%a %b %d %H:%M:%S", t as i64, 0),
            ms % 1000,
            (ms * 37) % 1000,
            kubesim_os::time::strftime("%Y", t as i64, 0)
        )
    }

    fn notice(&self, os: &mut dyn Os, module: &str, msg: &str) {
        let pid = os.pid();
        let who = if self.flavor == Flavor::Httpd { format!("pid {pid}:tid 140283451877248") } else { format!("pid {pid}") };
        let line = format!("[{}] [{module}:notice] [{who}] {msg}\n", self.stamp(os));
        common::err(os, &line);
    }

    fn mpm(&self) -> &'static str {
        if self.flavor == Flavor::Httpd {
            "mpm_event"
        } else {
            "mpm_prefork"
        }
    }

    fn read_config(&mut self, os: &mut dyn Os) {
        let files: Vec<String> = if self.flavor == Flavor::Httpd {
            vec!["/usr/local/apache2/conf/httpd.conf".into()]
        } else {
            let mut v = vec!["/etc/apache2/apache2.conf".to_string(), "/etc/apache2/ports.conf".to_string()];
            for d in ["/etc/apache2/sites-enabled", "/etc/apache2/conf-enabled"] {
                let mut f: Vec<String> = os.fs_ref().read_dir(d).unwrap_or_default().into_iter().map(|e| format!("{d}/{}", e.name)).collect();
                f.sort();
                v.extend(f);
            }
            v
        };
        for f in files {
            let Some(b) = common::read_file(os, &f, 1 << 20) else { continue };
            for l in String::from_utf8_lossy(&b).lines() {
                let w: Vec<&str> = l.split_whitespace().collect();
                match w.as_slice() {
                    ["Listen", p, ..] => {
                        if let Some(port) = p.rsplit(':').next().and_then(|x| x.parse().ok()) {
                            self.port = port;
                        }
                    }
                    ["DocumentRoot", d, ..] => self.docroot = d.trim_matches('"').to_string(),
                    ["ServerName", n, ..] => self.server_name = Some(n.to_string()),
                    _ => {}
                }
            }
        }
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        self.version = match self.flavor {
            Flavor::Httpd => self.spawn.env.get("HTTPD_VERSION").cloned().unwrap_or_else(|| "2.4.65".into()),
            Flavor::Debian => debian_apache_version(os).to_string(),
        };
        if self.spawn.argv.iter().any(|a| a == "-v") {
            let built = "Server built:   2025-07-26T00:00:00";
            common::out(os, &format!("Server version: {}\n{built}\n", self.server_header()));
            self.phase = Phase::Done;
            return Step::Exit(0);
        }
        self.read_config(os);
        let host = os.hostname();
        self.ip = kubesim_os::net::hosts_lookup(os.fs_ref(), &host).unwrap_or_else(|| "127.0.1.1".into());
        if self.server_name.is_none() {
            let m = format!("AH00558: {}: Could not reliably determine the server's fully qualified domain name, using {}. Set the 'ServerName' directive globally to suppress this message\n", self.name(), self.ip);
            common::err(os, &m);
            if self.foreground || self.flavor == Flavor::Debian {
                common::err(os, &m);
            }
        }
        if !self.foreground {
            // Forks into the background; the foreground process exits.
            self.phase = Phase::Done;
            return Step::Exit(0);
        }
        let code = if self.flavor == Flavor::Httpd { "AH00489" } else { "AH00163" };
        let b = self.banner();
        self.notice(os, self.mpm(), &format!("{code}: {b} configured -- resuming normal operations"));
        let cl = self.argv_shown.clone();
        self.notice(os, "core", &format!("AH00094: Command line: '{cl}'"));
        self.phase = Phase::Serving;
        self.guestbook.next_poll = os.now_ms();
        self.tick(os, Wake::Timer)
    }

    fn is_guestbook(&self, os: &dyn Os) -> bool {
        let p = format!("{}/guestbook.php", self.docroot);
        os.fs_ref().stat(&p).is_ok()
    }

    /// Background work: the guestbook's Redis reads and writes.
    fn tick(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let now = os.now_ms();
        if !self.is_guestbook(os) {
            return common::idle(&mut self.cpu, now, None);
        }
        if let Some(mut c) = self.guestbook.client.take() {
            if matches!(wake, Wake::Net(_)) {
                match c.wake(&wake) {
                    TcpStep::Call(s) => {
                        self.guestbook.client = Some(c);
                        return s;
                    }
                    TcpStep::Reply(b) => {
                        if self.guestbook.writing.take().is_none() {
                            if let Some((r, _)) = crate::redis::parse_reply(&b, 0, 0) {
                                self.guestbook.cache = Some(match r {
                                    crate::redis::Reply::Bulk(v) => String::from_utf8_lossy(&v).into_owned(),
                                    _ => String::new(),
                                });
                            }
                        }
                    }
                    _ => {
                        self.guestbook.writing = None;
                    }
                }
            } else {
                self.guestbook.client = Some(c);
                return common::idle(&mut self.cpu, now, Some(now + 1_000));
            }
        }
        let from_env = self.spawn.env.get("GET_HOSTS_FROM").map(String::as_str) == Some("env");
        let host = |svc: &str, env_key: &str, spawn: &Spawn| {
            if from_env {
                spawn.env.get(env_key).cloned().unwrap_or_else(|| svc.to_string())
            } else {
                svc.to_string()
            }
        };
        if !self.guestbook.pending_writes.is_empty() {
            let v = self.guestbook.pending_writes.remove(0);
            let mut req = Vec::new();
            crate::redis::Reply::Array(vec![
                crate::redis::Reply::Bulk(b"SET".to_vec()),
                crate::redis::Reply::Bulk(b"messages".to_vec()),
                crate::redis::Reply::Bulk(v.clone().into_bytes()),
            ])
            .encode(&mut req);
            let mut c = TcpClient::new(&host("redis-leader", "REDIS_LEADER_SERVICE_HOST", &self.spawn), 6379, req, 5_000);
            self.guestbook.writing = Some(v);
            if let TcpStep::Call(s) = c.start(os) {
                self.guestbook.client = Some(c);
                return s;
            }
            self.guestbook.writing = None;
        }
        if now >= self.guestbook.next_poll {
            self.guestbook.next_poll = now + 1_000;
            let mut c = TcpClient::new(
                &host("redis-follower", "REDIS_FOLLOWER_SERVICE_HOST", &self.spawn),
                6379,
                b"*2\r\n$3\r\nGET\r\n$8\r\nmessages\r\n".to_vec(),
                5_000,
            );
            if let TcpStep::Call(s) = c.start(os) {
                self.guestbook.client = Some(c);
                return s;
            }
        }
        common::idle(&mut self.cpu, now, Some(self.guestbook.next_poll))
    }

    fn error_page(&self, code: u16, path: &str) -> String {
        let (title, h1, msg) = match code {
            403 => ("403 Forbidden", "Forbidden", "You don't have permission to access this resource.".to_string()),
            405 => ("405 Method Not Allowed", "Method Not Allowed", "The requested method is not allowed for this URL.".to_string()),
            400 => ("400 Bad Request", "Bad Request", "Your browser sent a request that this server could not understand.<br />".to_string()),
            _ => (
                "404 Not Found",
                "Not Found",
                if crate::nginx::vnum(&self.version) < (2, 4, 39) {
                    format!("The requested URL {path} was not found on this server.")
                } else {
                    "The requested URL was not found on this server.".to_string()
                },
            ),
        };
        let msg = if code == 403 && crate::nginx::vnum(&self.version) < (2, 4, 39) {
            format!("You don't have permission to access {path}\non this server.")
        } else {
            msg
        };
        format!("<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>{title}</title>\n</head><body>\n<h1>{h1}</h1>\n<p>{msg}</p>\n<hr>\n<address>{} Server at {} Port {}</address>\n</body></html>\n", self.server_header(), self.ip, self.port)
    }

    fn respond(&self, os: &dyn Os, req: &Request, status: u16, mut headers: Vec<(String, String)>, body: &[u8], content_type: &str) -> Vec<u8> {
        let reason = kubesim_os::net::http::reason(status);
        let mut s = format!("HTTP/1.1 {status} {reason}\r\nDate: {}\r\nServer: {}\r\n", http_date(os.unix_time()), self.server_header());
        let close = req.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close")) || req.version == "HTTP/1.0";
        headers.push(("Content-Length".into(), body.len().to_string()));
        if close {
            headers.push(("Connection".into(), "close".into()));
        } else {
            headers.push(("Keep-Alive".into(), "timeout=5, max=100".into()));
            headers.push(("Connection".into(), "Keep-Alive".into()));
        }
        headers.push(("Content-Type".into(), content_type.into()));
        for (k, v) in headers {
            s.push_str(&format!("{k}: {v}\r\n"));
        }
        s.push_str("\r\n");
        let mut b = s.into_bytes();
        if req.method != "HEAD" {
            b.extend_from_slice(body);
        }
        b
    }

    fn access_log(&self, os: &mut dyn Os, conn: &Incoming, req: &Request, line: &str, status: u16, size: usize) {
        let t = clf_time(os.unix_time());
        let sz = if size == 0 { "-".to_string() } else { size.to_string() };
        let l = if self.flavor == Flavor::Httpd {
            format!("{} - - [{t}] \"{line}\" {status} {sz}\n", conn.src)
        } else {
            format!(
                "{} - - [{t}] \"{line}\" {status} {sz} \"{}\" \"{}\"\n",
                conn.src,
                req.header("referer").unwrap_or("-"),
                req.header("user-agent").unwrap_or("-")
            )
        };
        common::out(os, &l);
    }

    fn php_page(&mut self, os: &mut dyn Os, path: &str, req: &Request) -> (u16, Vec<u8>) {
        let src = os.fs_ref().read(path).unwrap_or_default();
        let text = String::from_utf8_lossy(&src).into_owned();
        if text.starts_with("#!kubesim gb-frontend") || path.ends_with("/guestbook.php") {
            let cmd = common::query_value(&req.target, "cmd");
            let body = match cmd.as_str() {
                "set" => {
                    let v = common::query_value(&req.target, "value");
                    self.guestbook.pending_writes.push(v.clone());
                    self.guestbook.cache = Some(v);
                    "{\"message\": \"Updated\"}".to_string()
                }
                "get" => format!("{{\"data\": {}}}", common::json_string(self.guestbook.cache.as_deref().unwrap_or(""))),
                _ => "{\"error\": \"Unknown command\"}".to_string(),
            };
            self.cpu.charge_us(2_000);
            return (200, body.into_bytes());
        }
        if text.contains("sqrt(") && text.contains("1000000") {
            // The HPA walkthrough's CPU burner.
            self.cpu.charge_ms(HPA_EXAMPLE_CPU_MS);
            return (200, b"OK!".to_vec());
        }
        self.cpu.charge_us(1_500);
        (200, run_php_text(&text, os, &self.spawn).into_bytes())
    }

    fn handle(&mut self, os: &mut dyn Os, conn: &Incoming) -> Vec<u8> {
        let data = &conn.data[..conn.data.len().min(common::MAX_REQUEST)];
        let line = String::from_utf8_lossy(data.split(|&b| b == b'\n').next().unwrap_or(&[])).trim_end_matches('\r').to_string();
        let Ok(req) = Request::parse(data) else {
            let body = self.error_page(400, "");
            let dummy = Request::new("GET", "/");
            let mut d2 = dummy.clone();
            d2.headers.push(("Connection".into(), "close".into()));
            let r = self.respond(os, &d2, 400, Vec::new(), body.as_bytes(), "text/html; charset=iso-8859-1");
            self.access_log(os, conn, &dummy, &line, 400, body.len());
            return r;
        };
        let path = common::url_decode(req.path(), false);
        let fs_path = kubesim_os::fs::normalize(&format!("{}/{}", self.docroot, path));
        let meta = os.fs_ref().stat(&fs_path);
        let (status, headers, body, ct): (u16, Vec<(String, String)>, Vec<u8>, String) = match meta {
            Ok(m) if m.is_dir() => {
                if !path.ends_with('/') {
                    let loc = format!("http://{}{}/", req.header("host").unwrap_or(&self.ip), path);
                    let body = format!("<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>301 Moved Permanently</title>\n</head><body>\n<h1>Moved Permanently</h1>\n<p>The document has moved <a href=\"{loc}\">here</a>.</p>\n<hr>\n<address>{} Server at {} Port {}</address>\n</body></html>\n", self.server_header(), self.ip, self.port);
                    (301, vec![("Location".into(), loc)], body.into_bytes(), "text/html; charset=iso-8859-1".into())
                } else {
                    let dir = fs_path.trim_end_matches('/').to_string();
                    let idx = ["index.php", "index.html", "index.htm"]
                        .iter()
                        .map(|i| format!("{dir}/{i}"))
                        .find(|p| os.fs_ref().stat(p).is_ok() && (self.php.is_some() || !p.ends_with(".php")));
                    match idx {
                        Some(p) if p.ends_with(".php") => {
                            let (st, b) = self.php_page(os, &p, &req);
                            (st, vec![("X-Powered-By".into(), format!("PHP/{}", self.php.clone().unwrap_or_default()))], b, "text/html; charset=UTF-8".into())
                        }
                        Some(p) => self.static_file(os, &p),
                        None if self.flavor == Flavor::Debian => {
                            let body = format!("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 3.2 Final//EN\">\n<html>\n <head>\n  <title>Index of {path}</title>\n </head>\n <body>\n<h1>Index of {path}</h1>\n  <table>\n   <tr><th valign=\"top\"><img src=\"/icons/blank.gif\" alt=\"[ICO]\"></th><th><a href=\"?C=N;O=D\">Name</a></th><th><a href=\"?C=M;O=A\">Last modified</a></th><th><a href=\"?C=S;O=A\">Size</a></th><th><a href=\"?C=D;O=A\">Description</a></th></tr>\n   <tr><th colspan=\"5\"><hr></th></tr>\n   <tr><th colspan=\"5\"><hr></th></tr>\n</table>\n<address>{} Server at {} Port {}</address>\n</body></html>\n", self.server_header(), self.ip, self.port);
                            (200, Vec::new(), body.into_bytes(), "text/html;charset=UTF-8".into())
                        }
                        None => (403, Vec::new(), self.error_page(403, &path).into_bytes(), "text/html; charset=iso-8859-1".into()),
                    }
                }
            }
            Ok(_) if fs_path.ends_with(".php") && self.php.is_some() => {
                let (st, b) = self.php_page(os, &fs_path, &req);
                (st, vec![("X-Powered-By".into(), format!("PHP/{}", self.php.clone().unwrap_or_default()))], b, "text/html; charset=UTF-8".into())
            }
            Ok(_) => self.static_file(os, &fs_path),
            Err(_) => {
                let t = self.stamp(os);
                let pid = os.pid();
                let who = if self.flavor == Flavor::Httpd { format!("pid {pid}:tid 140283451877248") } else { format!("pid {pid}") };
                let _ = (t, who);
                (404, Vec::new(), self.error_page(404, &path).into_bytes(), "text/html; charset=iso-8859-1".into())
            }
        };
        self.cpu.charge_us(80);
        let r = self.respond(os, &req, status, headers, &body, &ct);
        let size = if req.method == "HEAD" { 0 } else { body.len() };
        self.access_log(os, conn, &req, &line, status, size);
        r
    }

    fn static_file(&self, os: &dyn Os, p: &str) -> (u16, Vec<(String, String)>, Vec<u8>, String) {
        let data = os.fs_ref().read(p).unwrap_or_default();
        let m = os.fs_ref().stat(p).ok();
        let mtime_ms = m.map(|m| m.mtime_ms).unwrap_or(0);
        let etag = format!("\"{:x}-{:x}\"", data.len(), mtime_ms * 1000);
        let ext = p.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
        let ct = match ext.as_str() {
            "html" | "htm" => "text/html",
            "css" => "text/css",
            "js" => "application/javascript",
            "txt" => "text/plain",
            "png" => "image/png",
            "jpg" | "jpeg" => "image/jpeg",
            "json" => "application/json",
            _ => "text/plain",
        };
        (200, vec![("Last-Modified".into(), http_date(mtime_ms / 1000)), ("ETag".into(), etag), ("Accept-Ranges".into(), "bytes".into())], data, ct.into())
    }
}

/// Runs the trivial PHP the model understands: text outside `<?php ?>`, `echo`/`print` of
/// string literals, `gethostname()`, `phpversion()`.
fn run_php_text(src: &str, os: &dyn Os, spawn: &Spawn) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(p) = rest.find("<?") {
        out.push_str(&rest[..p]);
        let code_start = &rest[p + 2..];
        let code_start = code_start.strip_prefix("php").unwrap_or(code_start);
        let (code, after) = match code_start.find("?>") {
            Some(e) => (&code_start[..e], &code_start[e + 2..]),
            None => (code_start, ""),
        };
        for stmt in code.split(';') {
            let s = stmt.trim();
            let arg = s.strip_prefix("echo").or_else(|| s.strip_prefix("print")).map(str::trim);
            if let Some(a) = arg {
                for part in a.split('.') {
                    let part = part.trim();
                    if (part.starts_with('"') && part.ends_with('"') || part.starts_with('\'') && part.ends_with('\'')) && part.len() >= 2 {
                        out.push_str(&part[1..part.len() - 1].replace("\\n", "\n"));
                    } else if part.starts_with("gethostname(") {
                        out.push_str(&os.hostname());
                    } else if part.starts_with("phpversion(") || part == "PHP_VERSION" {
                        out.push_str(spawn.env.get("PHP_VERSION").map(String::as_str).unwrap_or(""));
                    } else if part == "PHP_EOL" {
                        out.push('\n');
                    }
                }
            }
        }
        rest = after.strip_prefix('\n').unwrap_or(after);
    }
    out.push_str(rest);
    out
}

impl Program for Apache {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match (&self.phase, wake) {
            (Phase::Start, _) => self.start(os),
            (Phase::Done, _) => Step::Exit(0),
            (Phase::Serving, Wake::Signal(s)) => match s {
                Signal::Term | Signal::Int => {
                    let (code, mpm) = if self.flavor == Flavor::Httpd { ("AH00491", "mpm_event") } else { ("AH00169", "mpm_prefork") };
                    self.notice(os, mpm, &format!("{code}: caught SIG{}, shutting down", s.name()));
                    self.phase = Phase::Done;
                    Step::Exit(0)
                }
                Signal::Hup | Signal::Usr1 => {
                    // SIGHUP and SIGUSR1 (graceful) log the same AH00171 line.
                    let (code, what) = ("AH00171", "Graceful restart requested, doing restart");
                    let mpm = self.mpm();
                    self.notice(os, mpm, &format!("{code}: {what}"));
                    let b = self.banner();
                    let c2 = if self.flavor == Flavor::Httpd { "AH00489" } else { "AH00163" };
                    self.notice(os, mpm, &format!("{c2}: {b} configured -- resuming normal operations"));
                    common::idle(&mut self.cpu, os.now_ms(), None)
                }
                Signal::Kill => Step::Exit(137),
                Signal::Quit | Signal::Usr2 => {
                    let mpm = self.mpm();
                    self.notice(os, mpm, "AH00170: caught SIGWINCH, shutting down gracefully");
                    self.phase = Phase::Done;
                    Step::Exit(0)
                }
            },
            (Phase::Serving, w) => self.tick(os, w),
        }
    }

    fn cpu_backlog_ms(&self) -> u64 {
        self.cpu.backlog_ms()
    }

    fn memory_bytes(&self) -> u64 {
        match (self.phase.clone(), self.flavor) {
            (Phase::Serving, Flavor::Httpd) => 7_800_000,
            (Phase::Serving, Flavor::Debian) => 15_500_000,
            _ => 2_000_000,
        }
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        if self.phase == Phase::Serving {
            vec![(self.port, false)]
        } else {
            Vec::new()
        }
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        if self.phase != Phase::Serving || conn.udp || conn.port != self.port {
            return None;
        }
        if conn.data.is_empty() {
            return Some(Outgoing::Reply(Vec::new()));
        }
        Some(Outgoing::Reply(self.handle(os, conn)))
    }
}

/// `docker-php-entrypoint`: `-flag` arguments go to `apache2-foreground` (apache variants) or
/// `php` (cli variants).
pub fn php_entrypoint(spawn: &Spawn) -> Box<dyn Program> {
    let mut argv: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
    if argv.first().is_none_or(|a| a.starts_with('-')) {
        let apache = spawn.env.contains_key("APACHE_CONFDIR") || spawn.env.contains_key("APACHE_ENVVARS");
        argv.insert(0, if apache { "apache2-foreground".into() } else { "php".into() });
    }
    common::ExecAs::boxed(spawn, argv)
}

/// The `php` CLI: `-v`, `-r CODE`, `php file.php` (the same tiny subset as the Apache model).
pub fn php_cli(spawn: &Spawn) -> Box<dyn Program> {
    let v = spawn.env.get("PHP_VERSION").cloned().unwrap_or_else(|| "8.4.11".into());
    let args: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
    match args.first().map(String::as_str) {
        Some("-v") | Some("--version") => common::Print::boxed(
            format!("PHP {v} (cli) (built: Aug 27 2025 00:00:00) (NTS)\nCopyright (c) The PHP Group\nZend Engine v4.4.11, Copyright (c) Zend Technologies\n"),
            "",
            0,
        ),
        Some("-r") => {
            let code = args.get(1).cloned().unwrap_or_default();
            Box::new(PhpRun { spawn: spawn.clone(), code: format!("<?php {code} ?>") })
        }
        Some(f) if !f.starts_with('-') => Box::new(PhpRun { spawn: spawn.clone(), code: format!("@file:{f}") }),
        _ => common::Print::boxed("", "", 0),
    }
}

#[derive(Clone, Debug)]
struct PhpRun {
    spawn: Spawn,
    code: String,
}

impl Program for PhpRun {
    fn resume(&mut self, os: &mut dyn Os, _wake: Wake) -> Step {
        let code = if let Some(f) = self.code.strip_prefix("@file:") {
            let p = kubesim_os::fs::join(&self.spawn.cwd, f);
            match common::read_file(os, &p, 1 << 20) {
                Some(b) => String::from_utf8_lossy(&b).into_owned(),
                None => {
                    common::out(os, &format!("Could not open input file: {f}\n"));
                    return Step::Exit(1);
                }
            }
        } else {
            self.code.clone()
        };
        let o = run_php_text(&code, os, &self.spawn);
        common::out(os, &o);
        Step::Exit(0)
    }
    fn memory_bytes(&self) -> u64 {
        12_000_000
    }
}
