//! `curl` (8.x, as in curlimages/curl): `-s -S -v -i -I -o FILE -O -w FMT -H -X -d
//! --data-raw --data-binary -m SEC --connect-timeout SEC -f -k -L -u -A --max-redirs
//! --resolve HOST:PORT:ADDR`.

use super::http::Response;
use super::{libc_of, ResolveStep, Resolver, Url};
use crate::fs::WriteMode;
use crate::program::{default_signal_exit, NetCall, NetError, NetReply, Os, Program, Spawn, Step, Wake};

/// The version string curl reports in `User-Agent`.
pub const VERSION: &str = "8.11.0";

#[derive(Clone, Debug, Default)]
struct Opts {
    silent: bool,
    show_error: bool,
    verbose: bool,
    include: bool,
    head: bool,
    output: Option<String>,
    remote_name: bool,
    write_out: Option<String>,
    headers: Vec<String>,
    method: Option<String>,
    data: Option<String>,
    max_time: Option<f64>,
    connect_timeout: Option<f64>,
    fail: bool,
    location: bool,
    user: Option<String>,
    agent: Option<String>,
    max_redirs: u32,
    /// `--resolve host:port:addr`: (host, port, address) entries that bypass the resolver.
    resolve: Vec<(String, u16, String)>,
}

#[derive(Clone, Debug)]
enum Phase {
    Resolving(Box<Resolver>),
    Connecting,
}

/// The `curl` program.
#[derive(Clone, Debug)]
pub struct Curl {
    spawn: Spawn,
    o: Opts,
    urls: Vec<String>,
    url: Option<Url>,
    ip: String,
    phase: Option<Phase>,
    redirects: u32,
    start_ms: u64,
    last: Option<Step>,
    meter_started: bool,
}

impl Curl {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> Curl {
        Curl {
            spawn: spawn.clone(),
            o: Opts { max_redirs: 50, ..Opts::default() },
            urls: Vec::new(),
            url: None,
            ip: String::new(),
            phase: None,
            redirects: 0,
            start_ms: 0,
            last: None,
            meter_started: false,
        }
    }

    fn parse_args(&mut self) -> Result<(), (String, i32)> {
        let args = self.spawn.argv[1..].to_vec();
        let mut i = 0;
        let need = |i: &mut usize, name: &str| -> Result<String, (String, i32)> {
            *i += 1;
            args.get(*i)
                .cloned()
                .ok_or_else(|| (format!("curl: option {name}: requires parameter\ncurl: try 'curl --help' or 'curl --manual' for more information\n"), 2))
        };
        while i < args.len() {
            let a = args[i].clone();
            if let Some(long) = a.strip_prefix("--") {
                match long {
                    "silent" => self.o.silent = true,
                    "show-error" => self.o.show_error = true,
                    "verbose" => self.o.verbose = true,
                    "include" => self.o.include = true,
                    "head" => self.o.head = true,
                    "fail" => self.o.fail = true,
                    "location" => self.o.location = true,
                    "insecure" | "compressed" | "http1.1" | "no-progress-meter" | "globoff" | "no-keepalive" | "tcp-nodelay" => {
                        if long == "no-progress-meter" {
                            self.o.silent = true;
                            self.o.show_error = true;
                        }
                    }
                    "remote-name" => self.o.remote_name = true,
                    "output" => self.o.output = Some(need(&mut i, &a)?),
                    "write-out" => self.o.write_out = Some(need(&mut i, &a)?),
                    "header" => self.o.headers.push(need(&mut i, &a)?),
                    "request" => self.o.method = Some(need(&mut i, &a)?),
                    "data" | "data-raw" | "data-binary" | "data-ascii" | "data-urlencode" => {
                        let d = need(&mut i, &a)?;
                        self.o.data = Some(match self.o.data.take() {
                            Some(prev) => format!("{prev}&{d}"),
                            None => d,
                        });
                    }
                    "max-time" => self.o.max_time = need(&mut i, &a)?.parse().ok(),
                    "connect-timeout" => self.o.connect_timeout = need(&mut i, &a)?.parse().ok(),
                    "user" => self.o.user = Some(need(&mut i, &a)?),
                    "user-agent" => self.o.agent = Some(need(&mut i, &a)?),
                    "max-redirs" => self.o.max_redirs = need(&mut i, &a)?.parse().unwrap_or(50),
                    "resolve" => {
                        // [+]HOST:PORT:ADDR[,ADDR]... (the first address is used).
                        let entry = need(&mut i, &a)?;
                        let mut parts = entry.trim_start_matches('+').splitn(3, ':');
                        if let (Some(host), Some(port), Some(addr)) = (parts.next(), parts.next().and_then(|p| p.parse().ok()), parts.next()) {
                            let addr = addr.split(',').next().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
                            self.o.resolve.push((host.to_ascii_lowercase(), port, addr.to_string()));
                        }
                    }
                    "retry" | "retry-delay" | "retry-max-time" | "cacert" | "cert" | "key" | "proxy" | "interface" => {
                        need(&mut i, &a)?;
                    }
                    "url" => self.urls.push(need(&mut i, &a)?),
                    _ => return Err((format!("curl: option {a}: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n"), 2)),
                }
                i += 1;
                continue;
            }
            if a.starts_with('-') && a.len() > 1 {
                let chars: Vec<char> = a[1..].chars().collect();
                let mut k = 0;
                while k < chars.len() {
                    let c = chars[k];
                    let rest: String = chars[k + 1..].iter().collect();
                    let take = |i: &mut usize| -> Result<String, (String, i32)> {
                        if rest.is_empty() {
                            need(i, &format!("-{c}"))
                        } else {
                            Ok(rest.clone())
                        }
                    };
                    match c {
                        's' => self.o.silent = true,
                        'S' => self.o.show_error = true,
                        'v' => self.o.verbose = true,
                        'i' => self.o.include = true,
                        'I' => self.o.head = true,
                        'f' => self.o.fail = true,
                        'L' => self.o.location = true,
                        'k' | 'g' | '#' | 'N' | '4' | '6' => {}
                        'O' => self.o.remote_name = true,
                        'o' => {
                            self.o.output = Some(take(&mut i)?);
                            break;
                        }
                        'w' => {
                            self.o.write_out = Some(take(&mut i)?);
                            break;
                        }
                        'H' => {
                            self.o.headers.push(take(&mut i)?);
                            break;
                        }
                        'X' => {
                            self.o.method = Some(take(&mut i)?);
                            break;
                        }
                        'd' => {
                            let d = take(&mut i)?;
                            self.o.data = Some(match self.o.data.take() {
                                Some(prev) => format!("{prev}&{d}"),
                                None => d,
                            });
                            break;
                        }
                        'm' => {
                            self.o.max_time = take(&mut i)?.parse().ok();
                            break;
                        }
                        'u' => {
                            self.o.user = Some(take(&mut i)?);
                            break;
                        }
                        'A' => {
                            self.o.agent = Some(take(&mut i)?);
                            break;
                        }
                        'e' | 'x' | 'E' | 'T' | 'b' | 'c' | 'r' | 'Y' | 'y' | 'z' => {
                            take(&mut i)?;
                            break;
                        }
                        other => {
                            return Err((format!("curl: option -{other}: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n"), 2))
                        }
                    }
                    k += 1;
                }
                i += 1;
                continue;
            }
            self.urls.push(a);
            i += 1;
        }
        if self.urls.is_empty() {
            return Err(("curl: no URL specified\ncurl: try 'curl --help' or 'curl --manual' for more information\n".into(), 2));
        }
        Ok(())
    }

    fn fail(&mut self, os: &mut dyn Os, code: i32, msg: &str) -> Step {
        self.end_meter(os, 0, 0);
        if !self.o.silent || self.o.show_error {
            let _ = os.write_stderr(format!("curl: ({code}) {msg}\n").as_bytes());
        }
        if let Some(w) = self.o.write_out.clone() {
            let out = write_out(&w, 0, 0, os.now_ms().saturating_sub(self.start_ms), self.url.as_ref(), &self.ip, code);
            let _ = os.write_stdout(out.as_bytes());
        }
        Step::Exit(code)
    }

    fn start_meter(&mut self, os: &mut dyn Os) {
        // tool_operate.c: "we send the output to a tty, therefore we switch off the progress meter".
        let output_to_tty = self.spawn.tty && self.o.output.is_none() && !self.o.remote_name;
        if self.o.silent || self.o.verbose || self.meter_started || output_to_tty {
            return;
        }
        self.meter_started = true;
        let _ = os.write_stderr(b"  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n");
        let _ = os.write_stderr(b"\r  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0");
    }

    fn end_meter(&mut self, os: &mut dyn Os, total: u64, got: u64) {
        if !self.meter_started {
            return;
        }
        self.meter_started = false;
        let ms = os.now_ms().saturating_sub(self.start_ms);
        let speed = if ms > 0 { got * 1000 / ms } else { got };
        let pct = |a: u64, b: u64| if b == 0 { 0 } else { a * 100 / b };
        let t = |secs: u64| if secs == 0 { "--:--:--".to_string() } else { format!("{:2}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60) };
        let line = format!(
            "\r{:3} {}  {:3} {}  {:3} {}  {}  {} {} {} {} {}\n",
            pct(got, total),
            max5(total),
            pct(got, total),
            max5(got),
            0,
            max5(0),
            max5(speed),
            max5(0),
            t(0),
            t(ms / 1000),
            t(0),
            max5(speed)
        );
        let _ = os.write_stderr(line.as_bytes());
    }

    fn begin(&mut self, os: &mut dyn Os) -> Step {
        let raw = self.urls[0].clone();
        let u = match Url::parse(&raw) {
            Ok(u) => u,
            Err(e) if e.starts_with("unsupported protocol") => {
                let scheme = raw.split("://").next().unwrap_or("");
                return self.fail(os, 1, &format!("Protocol \"{scheme}\" not supported"));
            }
            Err(_) => return self.fail(os, 3, "URL rejected: Malformed input to a URL function"),
        };
        self.url = Some(u);
        self.start_meter(os);
        self.resolve(os)
    }

    fn resolve(&mut self, os: &mut dyn Os) -> Step {
        let Some(u) = self.url.clone() else { return Step::Exit(3) };
        let pinned = self.o.resolve.iter().find(|(h, p, _)| (h == "*" || h.eq_ignore_ascii_case(&u.host)) && *p == u.port).map(|(_, _, a)| a.clone());
        if let Some(addr) = pinned {
            self.ip = addr;
            return self.connect(os);
        }
        let libc = libc_of(os.fs_ref());
        let mut r = Resolver::new(os.fs_ref(), &u.host, libc);
        let s = r.start();
        self.phase = Some(Phase::Resolving(Box::new(r)));
        self.on_resolve(os, s)
    }

    fn on_resolve(&mut self, os: &mut dyn Os, s: ResolveStep) -> Step {
        match s {
            ResolveStep::Query(c) => Step::Net(c),
            ResolveStep::Done(Ok(r)) => {
                self.ip = r.addrs[0].clone();
                self.connect(os)
            }
            ResolveStep::Done(Err(_)) => {
                let h = self.url.as_ref().map(|u| u.host.clone()).unwrap_or_default();
                self.fail(os, 6, &format!("Could not resolve host: {h}"))
            }
        }
    }

    fn request(&self) -> String {
        let u =
            self.url.clone().unwrap_or(Url { scheme: "http".into(), host: String::new(), port: 80, explicit_port: false, path: "/".into(), userinfo: None });
        let method = self.o.method.clone().unwrap_or_else(|| {
            if self.o.head {
                "HEAD".into()
            } else if self.o.data.is_some() {
                "POST".into()
            } else {
                "GET".into()
            }
        });
        let has = |h: &str| self.o.headers.iter().any(|x| x.to_ascii_lowercase().starts_with(&format!("{h}:")));
        let mut req = format!("{method} {} HTTP/1.1\r\n", u.path);
        if !has("host") {
            req.push_str(&format!("Host: {}\r\n", u.host_header()));
        }
        if let Some(user) = self.o.user.clone().or(u.userinfo.clone()) {
            req.push_str(&format!("Authorization: Basic {}\r\n", crate::applets::hash::base64_encode(user.as_bytes())));
        }
        if !has("user-agent") {
            req.push_str(&format!("User-Agent: {}\r\n", self.o.agent.clone().unwrap_or_else(|| format!("curl/{VERSION}"))));
        }
        if !has("accept") {
            req.push_str("Accept: */*\r\n");
        }
        for h in &self.o.headers {
            if h.ends_with(':') {
                continue;
            }
            req.push_str(h);
            req.push_str("\r\n");
        }
        if let Some(d) = &self.o.data {
            if !has("content-type") {
                req.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
            }
            req.push_str(&format!("Content-Length: {}\r\n\r\n{d}", d.len()));
        } else {
            req.push_str("\r\n");
        }
        req
    }

    fn connect(&mut self, os: &mut dyn Os) -> Step {
        let Some(u) = self.url.clone() else { return Step::Exit(3) };
        let req = self.request();
        if self.o.verbose {
            let mut v = format!(
                "* Host {}:{} was resolved.\n* IPv6: (none)\n* IPv4: {}\n*   Trying {}:{}...\n* Connected to {} ({}) port {}\n",
                u.host, u.port, self.ip, self.ip, u.port, u.host, self.ip, u.port
            );
            if u.scheme == "https" {
                v.push_str("* ALPN: curl offers h2,http/1.1\n* TLSv1.3 (OUT), TLS handshake, Client hello (1):\n");
            }
            v.push_str("* using HTTP/1.x\n");
            for l in req.split("\r\n\r\n").next().unwrap_or("").split("\r\n") {
                v.push_str(&format!("> {l}\r\n"));
            }
            v.push_str("> \r\n* Request completely sent off\n");
            let _ = os.write_stderr(v.as_bytes());
        }
        let limit = |s: Option<f64>| s.map(|x| (x * 1000.0).max(1.0) as u64);
        let timeout_ms = match (limit(self.o.connect_timeout), limit(self.o.max_time)) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => super::wget::KERNEL_CONNECT_TIMEOUT_MS,
        };
        self.phase = Some(Phase::Connecting);
        Step::Net(NetCall::Tcp { dst: self.ip.clone(), port: u.port, send: req.into_bytes(), timeout_ms })
    }

    fn on_tcp(&mut self, os: &mut dyn Os, r: Result<Vec<u8>, NetError>) -> Step {
        let u =
            self.url.clone().unwrap_or(Url { scheme: "http".into(), host: String::new(), port: 80, explicit_port: false, path: "/".into(), userinfo: None });
        let elapsed = os.now_ms().saturating_sub(self.start_ms);
        let data = match r {
            Ok(d) => d,
            Err(NetError::TimedOut) => {
                return match (self.o.connect_timeout, self.o.max_time) {
                    (Some(c), m) if m.is_none_or(|m| c <= m) => {
                        self.fail(os, 28, &format!("Connection timed out after {} milliseconds", (c * 1000.0) as u64 + 1))
                    }
                    (_, Some(m)) => self.fail(os, 28, &format!("Operation timed out after {} milliseconds with 0 bytes received", (m * 1000.0) as u64 + 1)),
                    _ => self.fail(os, 28, &format!("Failed to connect to {} port {} after {elapsed} ms: Couldn't connect to server", u.host, u.port)),
                };
            }
            Err(NetError::Reset) => return self.fail(os, 56, "Recv failure: Connection reset by peer"),
            Err(_) => return self.fail(os, 7, &format!("Failed to connect to {} port {} after {elapsed} ms: Couldn't connect to server", u.host, u.port)),
        };
        if data.is_empty() {
            return self.fail(os, 52, "Empty reply from server");
        }
        let resp = match Response::parse(&data) {
            Ok(r) => r,
            Err(_) => return self.fail(os, 8, "Weird server reply"),
        };
        let head_end = data.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4).unwrap_or(data.len());
        let raw_head = &data[..head_end];
        if self.o.verbose {
            let mut v = String::new();
            for l in String::from_utf8_lossy(raw_head).split("\r\n").filter(|l| !l.is_empty()) {
                v.push_str(&format!("< {l}\r\n"));
            }
            v.push_str("< \r\n");
            let _ = os.write_stderr(v.as_bytes());
        }
        if self.o.location && matches!(resp.status, 301 | 302 | 303 | 307 | 308) {
            if let Some(loc) = resp.header("location").map(str::to_string) {
                self.redirects += 1;
                if self.redirects > self.o.max_redirs {
                    return self.fail(os, 47, &format!("Maximum ({}) redirects followed", self.o.max_redirs));
                }
                if self.o.include {
                    let _ = os.write_stdout(raw_head);
                }
                if loc.starts_with('/') {
                    if let Some(cur) = self.url.as_mut() {
                        cur.path = loc;
                    }
                    return self.connect(os);
                }
                return match Url::parse(&loc) {
                    Ok(nu) => {
                        self.url = Some(nu);
                        self.resolve(os)
                    }
                    Err(_) => self.fail(os, 3, "URL rejected: Malformed input to a URL function"),
                };
            }
        }
        if self.o.fail && resp.status >= 400 {
            return self.fail(os, 22, &format!("The requested URL returned error: {}", resp.status));
        }
        let mut out: Vec<u8> = Vec::new();
        if self.o.include || self.o.head {
            out.extend_from_slice(raw_head);
        }
        if !self.o.head {
            out.extend_from_slice(&resp.body);
        }
        let total = resp.header("content-length").and_then(|v| v.parse::<u64>().ok()).unwrap_or(resp.body.len() as u64);
        let target = match (&self.o.output, self.o.remote_name) {
            (Some(o), _) if o != "-" => Some(o.clone()),
            (None, true) => {
                let last = u.path.split('?').next().unwrap_or("").rsplit('/').next().unwrap_or("").to_string();
                if last.is_empty() {
                    return self.fail(os, 23, "Remote file name has no length");
                }
                Some(last)
            }
            _ => None,
        };
        match target {
            Some(f) => {
                let p = crate::fs::join(&self.spawn.cwd, &f);
                if let Err(e) = crate::sys::write_file(os, &p, &out, WriteMode::Truncate) {
                    return self.fail(os, 23, &format!("client returned ERROR on write of {} bytes: {}", out.len(), e.strerror()));
                }
            }
            None => {
                let _ = os.write_stdout(&out);
            }
        }
        self.end_meter(os, total, resp.body.len() as u64);
        if self.o.verbose {
            let _ = os.write_stderr(format!("* Connection #0 to host {} left intact\n", u.host).as_bytes());
        }
        if let Some(w) = self.o.write_out.clone() {
            let s = write_out(&w, resp.status, resp.body.len() as u64, elapsed, self.url.as_ref(), &self.ip, 0);
            let _ = os.write_stdout(s.as_bytes());
        }
        Step::Exit(0)
    }
}

/// curl's `max5data`: a 5-character size (`  612`, ` 597k`, `1024M`).
pub fn max5(n: u64) -> String {
    const ONE_K: u64 = 1024;
    if n < 100_000 {
        format!("{n:>5}")
    } else if n < 10_000 * ONE_K {
        format!("{:>4}k", n / ONE_K)
    } else if n < 100 * ONE_K * ONE_K {
        format!("{:>2}.{}M", n / (ONE_K * ONE_K), (n % (ONE_K * ONE_K)) / (ONE_K * ONE_K / 10))
    } else if n < 10_000 * ONE_K * ONE_K {
        format!("{:>4}M", n / (ONE_K * ONE_K))
    } else {
        format!("{:>4}G", n / (ONE_K * ONE_K * ONE_K))
    }
}

fn write_out(fmt: &str, code: u16, size: u64, ms: u64, url: Option<&Url>, ip: &str, exit: i32) -> String {
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some(o) => {
                    out.push('\\');
                    out.push(o);
                }
                None => out.push('\\'),
            },
            '%' if it.peek() == Some(&'{') => {
                it.next();
                let name: String = it.by_ref().take_while(|&c| c != '}').collect();
                let secs = format!("{}.{:06}", ms / 1000, (ms % 1000) * 1000);
                let v = match name.as_str() {
                    "http_code" | "response_code" => format!("{code:03}"),
                    "size_download" => size.to_string(),
                    "time_total" | "time_starttransfer" => secs,
                    "time_connect" | "time_namelookup" | "time_appconnect" | "time_pretransfer" | "time_redirect" => "0.000000".into(),
                    "url_effective" | "url" => url.map(|u| format!("{}://{}{}", u.scheme, u.host_header(), u.path)).unwrap_or_default(),
                    "remote_ip" => ip.to_string(),
                    "remote_port" => url.map(|u| u.port.to_string()).unwrap_or_default(),
                    "exitcode" => exit.to_string(),
                    "num_redirects" => "0".into(),
                    "speed_download" => (if ms > 0 { size * 1000 / ms } else { size }).to_string(),
                    _ => String::new(),
                };
                out.push_str(&v);
            }
            '%' if it.peek() == Some(&'%') => {
                it.next();
                out.push('%');
            }
            c => out.push(c),
        }
    }
    out
}

impl Program for Curl {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let step = match wake {
            Wake::Start => {
                self.start_ms = os.now_ms();
                match self.parse_args() {
                    Ok(()) => self.begin(os),
                    Err((msg, code)) => {
                        let _ = os.write_stderr(msg.as_bytes());
                        Step::Exit(code)
                    }
                }
            }
            Wake::Net(NetReply::Tcp(r)) => self.on_tcp(os, r),
            Wake::Net(reply) => match self.phase.take() {
                Some(Phase::Resolving(mut r)) => {
                    let s = r.reply(&reply);
                    self.phase = Some(Phase::Resolving(r));
                    self.on_resolve(os, s)
                }
                other => {
                    self.phase = other;
                    Step::Exit(1)
                }
            },
            Wake::Signal(s) => match default_signal_exit(os, s) {
                Some(c) => Step::Exit(c),
                None => self.last.clone().unwrap_or(Step::Exit(1)),
            },
            _ => self.last.clone().unwrap_or(Step::Exit(1)),
        };
        self.last = Some(step.clone());
        step
    }
}
