//! `python3 -m http.server [port] [--bind ADDR] [--directory DIR]` (and Python 2's
//! `SimpleHTTPServer`): SimpleHTTPRequestHandler's exact headers, listings, error pages and
//! stderr log lines.

use crate::common::{self, http_date, CpuQueue};
use kubesim_os::net::http::Request;
use kubesim_os::program::{default_signal_exit, Incoming, Os, Outgoing, Signal, Spawn, Step, Wake};

/// The server.
#[derive(Clone, Debug)]
pub struct HttpServer {
    port: u16,
    bind: String,
    dir: String,
    version: String,
    py2: bool,
    state: u8,
    stdout_buf: String,
    unbuffered: bool,
    cpu: CpuQueue,
    error: Option<String>,
}

fn vnum(v: &str) -> (u32, u32, u32) {
    crate::nginx::vnum(v)
}

impl HttpServer {
    /// From the module's arguments.
    pub fn new(spawn: &Spawn, args: &[String], version: &str, py2: bool) -> HttpServer {
        let mut port = 8000u16;
        let mut bind = String::new();
        let mut dir = spawn.cwd.clone();
        let mut error = None;
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            match a {
                "-b" | "--bind" => {
                    i += 1;
                    bind = args.get(i).cloned().unwrap_or_default();
                }
                "-d" | "--directory" => {
                    i += 1;
                    dir = kubesim_os::fs::join(&spawn.cwd, args.get(i).map(String::as_str).unwrap_or("."));
                }
                "--cgi" => {}
                s if s.starts_with("--bind=") => bind = s[7..].to_string(),
                s if s.starts_with("--directory=") => dir = kubesim_os::fs::join(&spawn.cwd, &s[12..]),
                s => match s.parse::<u16>() {
                    Ok(p) => port = p,
                    Err(_) => error = Some(format!("usage: server.py [-h] [--cgi] [-b ADDRESS] [-d DIRECTORY] [-p VERSION] [port]\nserver.py: error: argument port: invalid int value: '{s}'\n")),
                },
            }
            i += 1;
        }
        let unbuffered = spawn.env.get("PYTHONUNBUFFERED").is_some_and(|v| !v.is_empty()) || spawn.argv.iter().any(|a| a == "-u");
        HttpServer { port, bind, dir, version: version.to_string(), py2, state: 0, stdout_buf: String::new(), unbuffered, cpu: CpuQueue::default(), error }
    }

    fn dual_stack(&self) -> bool {
        !self.py2 && vnum(&self.version) >= (3, 8, 0) && (self.bind.is_empty() || self.bind.contains(':'))
    }

    /// Starts listening.
    pub fn start(&mut self, os: &mut dyn Os) -> Step {
        if let Some(e) = self.error.take() {
            common::err(os, &e);
            self.state = 2;
            return Step::Exit(2);
        }
        let line = if self.py2 {
            format!("Serving HTTP on {} port {} ...\n", if self.bind.is_empty() { "0.0.0.0" } else { &self.bind }, self.port)
        } else if self.dual_stack() {
            let b = if self.bind.is_empty() { "::".to_string() } else { self.bind.clone() };
            format!("Serving HTTP on {b} port {} (http://[{b}]:{}/) ...\n", self.port, self.port)
        } else {
            let b = if self.bind.is_empty() { "0.0.0.0".to_string() } else { self.bind.clone() };
            format!("Serving HTTP on {b} port {} (http://{b}:{}/) ...\n", self.port, self.port)
        };
        // stdout is block-buffered when it is not a terminal: the line shows up only at exit.
        if self.unbuffered {
            common::out(os, &line);
        } else {
            self.stdout_buf.push_str(&line);
        }
        self.state = 1;
        Step::Wait
    }

    /// The program's resume.
    pub fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if self.state == 0 {
            return self.start(os);
        }
        if self.state == 2 {
            return Step::Exit(0);
        }
        match wake {
            Wake::Signal(Signal::Int) => {
                self.stdout_buf.push_str("\nKeyboard interrupt received, exiting.\n");
                let b = std::mem::take(&mut self.stdout_buf);
                common::out(os, &b);
                self.state = 2;
                Step::Exit(0)
            }
            Wake::Signal(s) => match default_signal_exit(os, s) {
                Some(c) => {
                    self.state = 2;
                    Step::Exit(c)
                }
                None => common::idle(&mut self.cpu, os.now_ms(), None),
            },
            _ => common::idle(&mut self.cpu, os.now_ms(), None),
        }
    }

    /// RSS.
    pub fn memory_bytes(&self) -> u64 {
        if self.py2 {
            8_000_000
        } else {
            14_500_000
        }
    }

    /// Ports.
    pub fn listening(&self) -> Vec<(u16, bool)> {
        if self.state == 1 {
            vec![(self.port, false)]
        } else {
            Vec::new()
        }
    }

    fn client(&self, src: &str) -> String {
        if self.dual_stack() && !src.contains(':') {
            format!("::ffff:{src}")
        } else {
            src.to_string()
        }
    }

    fn log(&self, os: &mut dyn Os, src: &str, msg: &str) {
        let t = kubesim_os::time::strftime("%d/%b/%Y %H:%M:%S", os.unix_time() as i64, 0);
        common::err(os, &format!("{} - - [{t}] {msg}\n", self.client(src)));
    }

    fn server_header(&self) -> String {
        format!("SimpleHTTP/0.6 Python/{}", self.version)
    }

    fn error_page(&self, code: u16, msg: &str, explain: &str) -> String {
        let modern = !self.py2 && vnum(&self.version) >= (3, 12, 0);
        if modern {
            format!("<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: {code}</p>\n        <p>Message: {msg}.</p>\n        <p>Error code explanation: {code} - {explain}.</p>\n    </body>\n</html>\n")
        } else {
            format!("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\"\n        \"http://www.w3.org/TR/html4/strict.dtd\">\n<html>\n    <head>\n        <meta http-equiv=\"Content-Type\" content=\"text/html;charset=utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: {code}</p>\n        <p>Message: {msg}.</p>\n        <p>Error code explanation: {code} - {explain}.</p>\n    </body>\n</html>\n")
        }
    }

    fn send_error(&self, os: &mut dyn Os, conn: &Incoming, line: &str, code: u16, msg: &str, explain: &str, head: bool) -> Vec<u8> {
        self.log(os, &conn.src, &format!("code {code}, message {msg}"));
        self.log(os, &conn.src, &format!("\"{line}\" {code} -"));
        let body = self.error_page(code, msg, explain);
        let mut s = format!(
            "HTTP/1.0 {code} {msg}\r\nServer: {}\r\nDate: {}\r\nConnection: close\r\nContent-Type: text/html;charset=utf-8\r\nContent-Length: {}\r\n\r\n",
            self.server_header(),
            http_date(os.unix_time()),
            body.len()
        );
        if !head {
            s.push_str(&body);
        }
        s.into_bytes()
    }

    /// Handles one connection.
    pub fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        if self.state != 1 || conn.udp || conn.port != self.port {
            return None;
        }
        if conn.data.is_empty() {
            return Some(Outgoing::Reply(Vec::new()));
        }
        self.cpu.charge_us(400);
        let data = &conn.data[..conn.data.len().min(common::MAX_REQUEST)];
        let line = String::from_utf8_lossy(data.split(|&b| b == b'\n').next().unwrap_or(&[])).trim_end_matches('\r').to_string();
        let Ok(req) = Request::parse(data) else {
            return Some(Outgoing::Reply(self.send_error(
                os,
                conn,
                &line,
                400,
                &format!("Bad request syntax ({})", py_repr(&line)),
                "Bad request syntax or unsupported method",
                false,
            )));
        };
        let head = req.method == "HEAD";
        if req.method != "GET" && !head {
            return Some(Outgoing::Reply(self.send_error(
                os,
                conn,
                &line,
                501,
                &format!("Unsupported method ({})", py_repr(&req.method)),
                "Server does not support this operation",
                false,
            )));
        }
        let raw_path = req.path().to_string();
        let path = common::url_decode(&raw_path, false);
        let fs_path = kubesim_os::fs::normalize(&format!("{}/{}", self.dir.trim_end_matches('/'), path));
        let now = os.unix_time();
        let meta = os.fs_ref().stat(&fs_path);
        let resp = |status: &str, headers: Vec<(String, String)>, body: &[u8], os: &mut dyn Os, this: &Self| {
            let code: u16 = status.split(' ').next().and_then(|c| c.parse().ok()).unwrap_or(200);
            this.log(os, &conn.src, &format!("\"{line}\" {code} -"));
            let mut s = format!("HTTP/1.0 {status}\r\nServer: {}\r\nDate: {}\r\n", this.server_header(), http_date(now));
            for (k, v) in headers {
                s.push_str(&format!("{k}: {v}\r\n"));
            }
            s.push_str("\r\n");
            let mut b = s.into_bytes();
            if !head {
                b.extend_from_slice(body);
            }
            b
        };
        match meta {
            Ok(m) if m.is_dir() => {
                if !raw_path.ends_with('/') {
                    let q = req.target.split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default();
                    let h = vec![("Location".to_string(), format!("{raw_path}/{q}")), ("Content-Length".to_string(), "0".to_string())];
                    return Some(Outgoing::Reply(resp("301 Moved Permanently", h, b"", os, self)));
                }
                for ix in ["index.html", "index.htm"] {
                    let p = format!("{}/{ix}", fs_path.trim_end_matches('/'));
                    if let Ok(im) = os.fs_ref().stat(&p) {
                        if !im.is_dir() {
                            let data = os.fs_ref().read(&p).unwrap_or_default();
                            let h = vec![
                                ("Content-type".to_string(), "text/html".to_string()),
                                ("Content-Length".to_string(), data.len().to_string()),
                                ("Last-Modified".to_string(), http_date(im.mtime_ms / 1000)),
                            ];
                            return Some(Outgoing::Reply(resp("200 OK", h, &data, os, self)));
                        }
                    }
                }
                let mut entries = os.fs_ref().read_dir(&fs_path).unwrap_or_default();
                entries.sort_by_key(|e| e.name.to_lowercase());
                let title = format!("Directory listing for {}", html_escape(&path));
                let modern = !self.py2 && vnum(&self.version) >= (3, 12, 0);
                let mut body = if modern {
                    format!("<!DOCTYPE HTML>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n<hr>\n<ul>\n")
                } else {
                    format!("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">\n<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n<hr>\n<ul>\n")
                };
                for e in entries {
                    let (display, link) = if e.meta.is_dir() {
                        (format!("{}/", e.name), format!("{}/", e.name))
                    } else if e.meta.is_symlink() {
                        (format!("{}@", e.name), e.name.clone())
                    } else {
                        (e.name.clone(), e.name.clone())
                    };
                    body.push_str(&format!("<li><a href=\"{}\">{}</a></li>\n", url_quote(&link), html_escape(&display)));
                }
                body.push_str("</ul>\n<hr>\n</body>\n</html>\n");
                let h = vec![("Content-type".to_string(), "text/html; charset=utf-8".to_string()), ("Content-Length".to_string(), body.len().to_string())];
                Some(Outgoing::Reply(resp("200 OK", h, body.as_bytes(), os, self)))
            }
            Ok(m) => {
                if raw_path.ends_with('/') {
                    return Some(Outgoing::Reply(self.send_error(os, conn, &line, 404, "File not found", "Nothing matches the given URI", head)));
                }
                let data = os.fs_ref().read(&fs_path).unwrap_or_default();
                let ct = guess_type(&fs_path);
                let h = vec![
                    ("Content-type".to_string(), ct.to_string()),
                    ("Content-Length".to_string(), data.len().to_string()),
                    ("Last-Modified".to_string(), http_date(m.mtime_ms / 1000)),
                ];
                Some(Outgoing::Reply(resp("200 OK", h, &data, os, self)))
            }
            Err(_) => Some(Outgoing::Reply(self.send_error(os, conn, &line, 404, "File not found", "Nothing matches the given URI", head))),
        }
    }
}

fn py_repr(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\'', "\\'"))
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn url_quote(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"_.-~/".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

fn guess_type(p: &str) -> &'static str {
    let ext = p.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html",
        "txt" | "log" | "conf" | "cfg" | "ini" | "sh" => "text/plain",
        "css" => "text/css",
        "js" => "text/javascript",
        "json" => "application/json",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "xml" => "application/xml",
        "py" => "text/x-python",
        "pdf" => "application/pdf",
        "gz" => "application/gzip",
        "tar" => "application/x-tar",
        "zip" => "application/zip",
        "yaml" | "yml" => "application/yaml",
        _ => "application/octet-stream",
    }
}
