//! busybox `wget` (1.36): `-q -O FILE -O- -T SEC -S --spider -U AGENT --header H
//! --post-data D -P DIR --no-check-certificate`, redirects, chunked bodies, and busybox's
//! messages and progress line (non-tty form).

use super::http::Response;
use super::{libc_of, ResolveStep, Resolver, Url};
use crate::fs::WriteMode;
use crate::program::{default_signal_exit, NetCall, NetError, NetReply, Os, Program, Spawn, Step, Wake};

/// Linux gives up a TCP connect after about this long (6 SYN retries).
pub const KERNEL_CONNECT_TIMEOUT_MS: u64 = 127_000;

#[derive(Clone, Debug, Default)]
struct Opts {
    quiet: bool,
    out: Option<String>,
    timeout_s: Option<u64>,
    spider: bool,
    server_response: bool,
    agent: String,
    headers: Vec<String>,
    post: Option<String>,
    prefix: Option<String>,
    no_check: bool,
}

#[derive(Clone, Debug)]
enum Phase {
    Resolving(Box<Resolver>),
    Connecting,
}

/// The `wget` program.
#[derive(Clone, Debug)]
pub struct Wget {
    spawn: Spawn,
    opts: Opts,
    urls: Vec<String>,
    ui: usize,
    url: Option<Url>,
    ip: String,
    phase: Option<Phase>,
    redirects: u32,
    last: Option<Step>,
}

fn usage() -> &'static str {
    "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] [-o LOGFILE] [--header STR]\n\t[--post-data STR | --post-file FILE] [-Y on/off]\n\t[--no-check-certificate] [-P DIR] [-U AGENT] [-T SEC] URL...\n\nRetrieve files via HTTP or FTP\n"
}

impl Wget {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> Wget {
        Wget {
            spawn: spawn.clone(),
            opts: Opts { agent: "Wget".into(), ..Opts::default() },
            urls: Vec::new(),
            ui: 0,
            url: None,
            ip: String::new(),
            phase: None,
            redirects: 0,
            last: None,
        }
    }

    fn die(&self, os: &mut dyn Os, msg: &str) -> Step {
        let _ = os.write_stderr(format!("wget: {msg}\n").as_bytes());
        Step::Exit(1)
    }

    fn parse_args(&mut self) -> Result<(), String> {
        let args: Vec<String> = self.spawn.argv[1..].to_vec();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].clone();
            let val = |i: &mut usize, inline: Option<String>| -> Result<String, String> {
                if let Some(v) = inline {
                    return Ok(v);
                }
                *i += 1;
                args.get(*i).cloned().ok_or_else(|| usage().to_string())
            };
            if let Some(long) = a.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (long.to_string(), None),
                };
                match name.as_str() {
                    "quiet" => self.opts.quiet = true,
                    "spider" => self.opts.spider = true,
                    "server-response" => self.opts.server_response = true,
                    "no-check-certificate" => self.opts.no_check = true,
                    "output-document" => self.opts.out = Some(val(&mut i, inline)?),
                    "timeout" => self.opts.timeout_s = val(&mut i, inline)?.parse().ok(),
                    "user-agent" => self.opts.agent = val(&mut i, inline)?,
                    "header" => self.opts.headers.push(val(&mut i, inline)?),
                    "post-data" => self.opts.post = Some(val(&mut i, inline)?),
                    "directory-prefix" => self.opts.prefix = Some(val(&mut i, inline)?),
                    "tries" | "proxy" => {
                        val(&mut i, inline)?;
                    }
                    "continue" | "no-cache" | "no-verbose" | "no-clobber" | "passive-ftp" | "no-host-directories" | "no-parent" => {}
                    _ => return Err(format!("wget: unrecognized option '--{name}'\n{}", usage())),
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
                    let inline = if rest.is_empty() { None } else { Some(rest) };
                    match c {
                        'q' => self.opts.quiet = true,
                        'S' => self.opts.server_response = true,
                        'c' => {}
                        'O' => {
                            self.opts.out = Some(val(&mut i, inline)?);
                            break;
                        }
                        'T' => {
                            self.opts.timeout_s = val(&mut i, inline)?.parse().ok();
                            break;
                        }
                        'U' => {
                            self.opts.agent = val(&mut i, inline)?;
                            break;
                        }
                        'P' => {
                            self.opts.prefix = Some(val(&mut i, inline)?);
                            break;
                        }
                        'Y' | 't' | 'o' => {
                            val(&mut i, inline)?;
                            break;
                        }
                        'n' => break,
                        other => return Err(format!("wget: invalid option -- '{other}'\n{}", usage())),
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
            return Err(usage().to_string());
        }
        Ok(())
    }

    fn begin_url(&mut self, os: &mut dyn Os) -> Step {
        let Some(raw) = self.urls.get(self.ui).cloned() else { return Step::Exit(0) };
        self.redirects = 0;
        match Url::parse(&raw) {
            Ok(u) => {
                if u.scheme == "ftp" {
                    return self.die(os, "ftp is not supported (kubesim)");
                }
                self.url = Some(u);
                self.resolve(os)
            }
            Err(_) => self.die(os, &format!("not an http or ftp url: {raw}")),
        }
    }

    fn resolve(&mut self, os: &mut dyn Os) -> Step {
        let Some(u) = self.url.clone() else { return Step::Exit(1) };
        let libc = libc_of(os.fs_ref());
        let mut r = Resolver::new(os.fs_ref(), &u.host, libc);
        let step = r.start();
        self.phase = Some(Phase::Resolving(Box::new(r)));
        self.on_resolve(os, step)
    }

    fn on_resolve(&mut self, os: &mut dyn Os, step: ResolveStep) -> Step {
        match step {
            ResolveStep::Query(call) => Step::Net(call),
            ResolveStep::Done(Ok(r)) => {
                self.ip = r.addrs[0].clone();
                let port = self.url.as_ref().map(|u| u.port).unwrap_or(80);
                if !self.opts.quiet {
                    let host = self.url.as_ref().map(|u| u.host_header()).unwrap_or_default();
                    let _ = os.write_stderr(format!("Connecting to {host} ({}:{port})\n", self.ip).as_bytes());
                }
                self.connect(os)
            }
            ResolveStep::Done(Err(_)) => {
                let host = self.url.as_ref().map(|u| u.host.clone()).unwrap_or_default();
                self.die(os, &format!("bad address '{host}'"))
            }
        }
    }

    fn connect(&mut self, os: &mut dyn Os) -> Step {
        let Some(u) = self.url.clone() else { return Step::Exit(1) };
        if u.scheme == "https" && !self.opts.no_check {
            let _ = os.write_stderr(b"wget: note: TLS certificate validation not implemented\n");
        }
        let method = if self.opts.post.is_some() { "POST" } else { "GET" };
        let mut req = format!("{method} {} HTTP/1.1\r\n", u.path);
        let has = |h: &str| self.opts.headers.iter().any(|x| x.to_ascii_lowercase().starts_with(&format!("{h}:")));
        if !has("host") {
            req.push_str(&format!("Host: {}\r\n", u.host_header()));
        }
        if !has("user-agent") {
            req.push_str(&format!("User-Agent: {}\r\n", self.opts.agent));
        }
        req.push_str("Connection: close\r\n");
        if let Some(ui) = &u.userinfo {
            req.push_str(&format!("Authorization: Basic {}\r\n", crate::applets::hash::base64_encode(ui.as_bytes())));
        }
        for h in &self.opts.headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        match &self.opts.post {
            Some(d) => req.push_str(&format!("Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{d}", d.len())),
            None => req.push_str("\r\n"),
        }
        let timeout_ms = self.opts.timeout_s.map(|s| s * 1000).unwrap_or(KERNEL_CONNECT_TIMEOUT_MS);
        self.phase = Some(Phase::Connecting);
        Step::Net(NetCall::Tcp { dst: self.ip.clone(), port: u.port, send: req.into_bytes(), timeout_ms })
    }

    fn on_tcp(&mut self, os: &mut dyn Os, r: Result<Vec<u8>, NetError>) -> Step {
        let data = match r {
            Ok(d) => d,
            Err(NetError::TimedOut) => {
                if self.opts.timeout_s.is_some() {
                    return self.die(os, "download timed out");
                }
                return self.die(os, &format!("can't connect to remote host ({}): Connection timed out", self.ip));
            }
            Err(NetError::Reset) => return self.die(os, "error getting response: Connection reset by peer"),
            Err(e) => return self.die(os, &format!("can't connect to remote host ({}): {}", self.ip, e.strerror())),
        };
        if data.is_empty() {
            return self.die(os, "error getting response");
        }
        let resp = match Response::parse(&data) {
            Ok(r) => r,
            Err(_) => return self.die(os, "error getting response"),
        };
        if self.opts.server_response {
            let mut s = format!("  {}\n", resp.status_line());
            for (k, v) in &resp.headers {
                s.push_str(&format!("  {k}: {v}\n"));
            }
            let _ = os.write_stderr(s.as_bytes());
        }
        match resp.status {
            200..=204 => {}
            300..=303 => {
                if let Some(loc) = resp.header("location").map(str::to_string) {
                    self.redirects += 1;
                    if self.redirects >= 5 {
                        return self.die(os, "too many redirections");
                    }
                    if loc.starts_with('/') {
                        if let Some(u) = self.url.as_mut() {
                            u.path = loc;
                        }
                        return self.connect(os);
                    }
                    return match Url::parse(&loc) {
                        Ok(u) => {
                            self.url = Some(u);
                            self.resolve(os)
                        }
                        Err(_) => self.die(os, &format!("not an http or ftp url: {loc}")),
                    };
                }
            }
            _ => return self.die(os, &format!("server returned error: {}", resp.status_line())),
        }
        if self.opts.spider {
            // busybox's spider mode reports the check where it reports connecting.
            if !self.opts.quiet {
                let _ = os.write_stderr(b"remote file exists\n");
            }
            self.ui += 1;
            return self.begin_url(os);
        }
        // Output.
        let u =
            self.url.clone().unwrap_or(Url { scheme: "http".into(), host: String::new(), port: 80, explicit_port: false, path: "/".into(), userinfo: None });
        let (to_stdout, fname) = match &self.opts.out {
            Some(o) if o == "-" => (true, "-".to_string()),
            Some(o) => (false, o.clone()),
            None => {
                let last = u.path.split('?').next().unwrap_or("").rsplit('/').next().unwrap_or("").to_string();
                let name = if last.is_empty() { "index.html".to_string() } else { last };
                let name = match &self.opts.prefix {
                    Some(p) => crate::fs::join(p, &name),
                    None => name,
                };
                (false, name)
            }
        };
        if !to_stdout {
            let path = crate::fs::join(&self.spawn.cwd, &fname);
            let mode = if self.opts.out.is_some() { WriteMode::Truncate } else { WriteMode::CreateNew };
            if let Err(e) = crate::sys::write_file(os, &path, b"", mode) {
                return self.die(os, &format!("can't open '{fname}': {}", e.strerror()));
            }
        }
        if !self.opts.quiet {
            let msg = if to_stdout { "writing to stdout\n".to_string() } else { format!("saving to '{fname}'\n") };
            let _ = os.write_stderr(msg.as_bytes());
        }
        if to_stdout {
            let _ = os.write_stdout(&resp.body);
        } else {
            let path = crate::fs::join(&self.spawn.cwd, &fname);
            if let Err(e) = crate::sys::write_file(os, &path, &resp.body, WriteMode::Append) {
                return self.die(os, &format!("write error: {}", e.strerror()));
            }
        }
        if !self.opts.quiet {
            let cur = crate::fs::basename(&fname);
            let mut line = progress_line(&cur, resp.body.len() as u64);
            line.push_str(if to_stdout { "written to stdout\n" } else { "" });
            if !to_stdout {
                line.push_str(&format!("'{fname}' saved\n"));
            }
            let _ = os.write_stderr(line.as_bytes());
        }
        self.ui += 1;
        self.begin_url(os)
    }
}

/// busybox's progress line for a finished transfer when stderr is not a terminal.
pub fn progress_line(curfile: &str, size: u64) -> String {
    let name: String = curfile.chars().take(20).collect();
    let bar = "*".repeat(32);
    format!("{name:<20} 100% |{bar}| {}  0:00:00 ETA\n", smart5(size))
}

/// busybox `smart_ulltoa5`: 5 characters, scaled with k/M/G above 99999.
pub fn smart5(n: u64) -> String {
    if n <= 99_999 {
        return format!("{n:>5}");
    }
    let scale = [' ', 'k', 'M', 'G', 'T', 'P', 'E'];
    let mut ul = n * 10;
    let mut idx = 0;
    loop {
        ul /= 1024;
        idx += 1;
        if ul < 100_000 {
            break;
        }
    }
    let u = ul / 10;
    let v = ul % 10;
    if u >= 100 {
        format!("{u:>4}{}", scale[idx.min(6)])
    } else {
        format!("{u:>2}.{v}{}", scale[idx.min(6)])
    }
}

impl Program for Wget {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let step = match wake {
            Wake::Start => match self.parse_args() {
                Ok(()) => self.begin_url(os),
                Err(msg) => {
                    let _ = os.write_stderr(msg.as_bytes());
                    Step::Exit(1)
                }
            },
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
