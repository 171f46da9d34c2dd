//! Shared pieces of the program models: time formats, the CPU accounting queue, query
//! strings, JSON, command-line flags, a capturing `Os` wrapper and `exec`.

use kubesim_os::fs::{Errno, Fs};
use kubesim_os::program::{Creds, MemInfo, Os, ProcessInfo, Program, Signal, Spawn, Step, Uname, Wake};
use kubesim_os::time;
use std::collections::{BTreeMap, VecDeque};

/// Largest request a server model reads (bytes); the rest is ignored.
pub const MAX_REQUEST: usize = 1 << 20;

pub use kubesim_os::net::http::go::{go_error, go_not_found, go_response, go_sniff, go_status_text};
pub use kubesim_os::net::http::http_date;

/// `01/Dec/2026:09:05:00 +0000` (nginx/Apache `$time_local`, `%t` without brackets).
pub fn clf_time(unix: u64) -> String {
    time::strftime("%d/%b/%Y:%H:%M:%S +0000", unix as i64, 0)
}

/// `2026/12/01 09:05:00` (nginx error log, Go `log` package).
pub fn slash_time(unix: u64) -> String {
    // Remembered for the second it names, as nginx caches its log time (ngx_time_update): a
    // start-up writes dozens of lines in one second.
    thread_local! {
        static LAST: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != unix {
            *last = (unix, time::strftime("%Y/%m/%d %H:%M:%S", unix as i64, 0));
        }
        last.1.clone()
    })
}

/// Writes a text line (or any text) to stdout, ignoring EPIPE.
pub fn out(os: &mut dyn Os, s: &str) {
    let _ = os.write_stdout(s.as_bytes());
}

/// Writes text to stderr.
pub fn err(os: &mut dyn Os, s: &str) {
    let _ = os.write_stderr(s.as_bytes());
}

/// Go's `log.Printf` line: `2026/12/01 09:05:00 msg\n` on stderr.
pub fn go_log(os: &mut dyn Os, msg: &str) {
    let t = slash_time(os.unix_time());
    let nl = if msg.ends_with('\n') { "" } else { "\n" };
    err(os, &format!("{t} {msg}{nl}"));
}

/// CPU work the program owes the host, in request order.
///
/// Servers answer [`Program::serve`] synchronously and record each request's CPU cost here;
/// at their next resume they return one `Step::Compute { cpu_ms, threads: 1 }` per queued
/// request (oldest first) before going back to `Wait`/`Sleep`. Costs below a millisecond
/// accumulate until a whole millisecond is owed. The queue is bounded: past
/// [`CpuQueue::MAX_ENTRIES`] requests, new costs are added to the newest entry, and past
/// [`CpuQueue::MAX_BACKLOG_MS`] the excess is dropped (a server that far behind would be
/// refusing connections).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuQueue {
    pending: VecDeque<u64>,
    dust_us: u64,
    total_us: u64,
}

impl CpuQueue {
    /// Most queued entries.
    pub const MAX_ENTRIES: usize = 4096;
    /// Most queued CPU, in milliseconds.
    pub const MAX_BACKLOG_MS: u64 = 60_000;

    /// Records `us` microseconds of CPU.
    pub fn charge_us(&mut self, us: u64) {
        self.total_us = self.total_us.saturating_add(us);
        let backlog: u64 = self.pending.iter().sum();
        if backlog >= Self::MAX_BACKLOG_MS {
            return;
        }
        let us = self.dust_us + us;
        let ms = us / 1000;
        self.dust_us = us % 1000;
        if ms == 0 {
            return;
        }
        let ms = ms.min(Self::MAX_BACKLOG_MS - backlog);
        if self.pending.len() >= Self::MAX_ENTRIES {
            if let Some(last) = self.pending.back_mut() {
                *last += ms;
            }
        } else {
            self.pending.push_back(ms);
        }
    }

    /// Records `ms` milliseconds of CPU.
    pub fn charge_ms(&mut self, ms: u64) {
        self.charge_us(ms.saturating_mul(1000));
    }

    /// The next `Compute` step, if CPU is owed.
    pub fn next_step(&mut self) -> Option<Step> {
        self.pending.pop_front().map(|ms| Step::Compute { cpu_ms: ms, threads: 1 })
    }

    /// The queued CPU, in whole milliseconds.
    pub fn backlog_ms(&self) -> u64 {
        self.pending.iter().sum()
    }

    /// Whether nothing is owed (whole milliseconds).
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// All CPU ever charged, in microseconds (including sub-millisecond dust).
    pub fn total_us(&self) -> u64 {
        self.total_us
    }
}

/// What a long-running server does between events: pays its CPU debt, then sleeps until its
/// next deadline or waits for a signal.
pub fn idle(cpu: &mut CpuQueue, now: u64, deadline: Option<u64>) -> Step {
    if let Some(s) = cpu.next_step() {
        return s;
    }
    match deadline {
        Some(d) if d > now => Step::Sleep(d - now),
        Some(_) => Step::Sleep(0),
        None => Step::Wait,
    }
}

/// Percent-decodes (`+` as space when `plus`). Invalid escapes are kept literally.
pub fn url_decode(s: &str, plus: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let h = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
                match h {
                    Some(v) => {
                        out.push(v);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query string's parameters in order (decoded), Go `url.ParseQuery` style.
pub fn query_pairs(target: &str) -> Vec<(String, String)> {
    let Some((_, q)) = target.split_once('?') else { return Vec::new() };
    q.split(['&', ';'])
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (url_decode(k, true), url_decode(v, true)),
            None => (url_decode(p, true), String::new()),
        })
        .collect()
}

/// First value of a query parameter (Go `r.FormValue`: empty when absent).
pub fn query_value(target: &str, name: &str) -> String {
    query_pairs(target).into_iter().find(|(k, _)| k == name).map(|(_, v)| v).unwrap_or_default()
}

/// Go `encoding/json` string encoding (HTML-safe: `<`, `>`, `&` as `\u003c`...).
pub fn json_string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            '<' => o.push_str("\\u003c"),
            '>' => o.push_str("\\u003e"),
            '&' => o.push_str("\\u0026"),
            '\u{2028}' => o.push_str("\\u2028"),
            '\u{2029}' => o.push_str("\\u2029"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A JSON object of string values with sorted keys (Go `json.Marshal(map[string]string)`).
pub fn json_object(pairs: &BTreeMap<String, String>) -> String {
    let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{}:{}", json_string(k), json_string(v))).collect();
    format!("{{{}}}", body.join(","))
}

/// Parsed command-line flags in the Go `pflag`/GNU style (`--name=value`, `--name value`,
/// `-name value`, `--flag`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// Flags and their values, in order (`None` for bare flags).
    pub flags: Vec<(String, Option<String>)>,
    /// Positional arguments.
    pub positional: Vec<String>,
}

impl Flags {
    /// Parses `args`; `takes_value(name)` says whether a bare `--name` consumes the next
    /// argument.
    pub fn parse(args: &[String], takes_value: impl Fn(&str) -> bool) -> Flags {
        let mut f = Flags::default();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "--" {
                f.positional.extend(args[i + 1..].iter().cloned());
                break;
            }
            if let Some(body) = a.strip_prefix("--").or_else(|| if a.len() > 1 { a.strip_prefix('-') } else { None }) {
                if let Some((k, v)) = body.split_once('=') {
                    f.flags.push((k.to_string(), Some(v.to_string())));
                } else if takes_value(body) && i + 1 < args.len() {
                    f.flags.push((body.to_string(), Some(args[i + 1].clone())));
                    i += 1;
                } else {
                    f.flags.push((body.to_string(), None));
                }
            } else {
                f.positional.push(a.clone());
            }
            i += 1;
        }
        f
    }

    /// The last value given for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.flags.iter().rev().find(|(k, _)| k == name).and_then(|(_, v)| v.as_deref())
    }

    /// Whether `name` was given (with or without a value other than `false`).
    pub fn has(&self, name: &str) -> bool {
        self.flags.iter().any(|(k, v)| k == name && v.as_deref() != Some("false"))
    }

    /// A boolean flag with a default.
    pub fn bool_or(&self, name: &str, default: bool) -> bool {
        match self.flags.iter().rev().find(|(k, _)| k == name) {
            Some((_, None)) => true,
            Some((_, Some(v))) => matches!(v.as_str(), "true" | "1" | "t" | "T" | "TRUE" | "True"),
            None => default,
        }
    }
}

/// The basename of `argv[0]`.
pub fn argv0_name(spawn: &Spawn) -> String {
    spawn.argv.first().map(|a| kubesim_os::fs::basename(a)).unwrap_or_default()
}

/// An `Os` that captures stdout and stderr (combined, like `CombinedOutput`) and otherwise
/// passes everything through.
pub struct CaptureOs<'a> {
    /// The real OS.
    pub inner: &'a mut dyn Os,
    /// What the program wrote.
    pub output: Vec<u8>,
    /// Capture cap.
    pub limit: usize,
}

impl<'a> CaptureOs<'a> {
    /// Wraps an OS.
    pub fn new(inner: &'a mut dyn Os) -> CaptureOs<'a> {
        CaptureOs { inner, output: Vec::new(), limit: 1 << 20 }
    }

    fn push(&mut self, d: &[u8]) {
        let room = self.limit.saturating_sub(self.output.len());
        self.output.extend_from_slice(&d[..d.len().min(room)]);
    }
}

impl Os for CaptureOs<'_> {
    fn now_ms(&self) -> u64 {
        self.inner.now_ms()
    }
    fn unix_time_ms(&self) -> u64 {
        self.inner.unix_time_ms()
    }
    fn hostname(&self) -> String {
        self.inner.hostname()
    }
    fn write_stdout(&mut self, data: &[u8]) -> Result<(), Errno> {
        self.push(data);
        Ok(())
    }
    fn write_stderr(&mut self, data: &[u8]) -> Result<(), Errno> {
        self.push(data);
        Ok(())
    }
    fn stdout_captured(&self) -> bool {
        true
    }
    fn fs(&mut self) -> &mut dyn Fs {
        self.inner.fs()
    }
    fn fs_ref(&self) -> &dyn Fs {
        self.inner.fs_ref()
    }
    fn random_u64(&mut self) -> u64 {
        self.inner.random_u64()
    }
    fn pid(&self) -> u32 {
        self.inner.pid()
    }
    fn ppid(&self) -> u32 {
        self.inner.ppid()
    }
    fn alloc_pid(&mut self) -> u32 {
        self.inner.alloc_pid()
    }
    fn processes(&self) -> Vec<ProcessInfo> {
        self.inner.processes()
    }
    fn kill(&mut self, pid: u32, sig: Option<Signal>) -> Result<(), Errno> {
        self.inner.kill(pid, sig)
    }
    fn creds(&self) -> Creds {
        self.inner.creds()
    }
    fn uname(&self) -> Uname {
        self.inner.uname()
    }
    fn cpu_count(&self) -> u32 {
        self.inner.cpu_count()
    }
    fn mem_info(&self) -> MemInfo {
        self.inner.mem_info()
    }
    fn set_memory(&mut self, _bytes: u64) {}
    fn process_root(&self, pid: u32, path: &str) -> Option<Result<Vec<u8>, Errno>> {
        self.inner.process_root(pid, path)
    }
    fn uptime_ms(&self) -> u64 {
        self.inner.uptime_ms()
    }
}

/// Runs a program to completion *synchronously* (inside a `serve` call): sleeps and CPU take
/// no virtual time, network calls fail with a timeout, programs this crate does not know exit
/// 127, `Wait` ends the run. Returns (exit code, combined output). Bounded by `budget` steps.
pub fn run_sync(mut prog: Box<dyn Program>, os: &mut dyn Os, budget: usize, depth: u32) -> (i32, Vec<u8>) {
    let mut cap = CaptureOs::new(os);
    let mut wake = Wake::Start;
    for _ in 0..budget {
        match prog.resume(&mut cap, wake) {
            Step::Exit(c) => return (c, cap.output),
            Step::Sleep(_) | Step::Compute { .. } => wake = Wake::Timer,
            Step::Wait => return (137, cap.output),
            Step::Net(call) => {
                let reply = match call {
                    kubesim_os::program::NetCall::Tcp { .. } => kubesim_os::program::NetReply::Tcp(Err(kubesim_os::program::NetError::TimedOut)),
                    kubesim_os::program::NetCall::Udp { .. } => kubesim_os::program::NetReply::Udp(Err(kubesim_os::program::NetError::TimedOut)),
                    kubesim_os::program::NetCall::Dns { .. } => kubesim_os::program::NetReply::Dns(Err(kubesim_os::program::NetError::TimedOut)),
                };
                wake = Wake::Net(reply);
            }
            Step::Spawn(sp) => {
                let name = implementation_of(cap.fs_ref(), &sp);
                let child = if depth < 4 { name.as_deref().and_then(|n| crate::program_for(n, &sp)) } else { None };
                match child {
                    Some(c) => {
                        let (code, o) = run_sync(c, &mut cap, budget / 2, depth + 1);
                        if sp.capture_stdout {
                            wake = Wake::Child { code, stdout: o };
                        } else {
                            cap.push(&o);
                            wake = Wake::Child { code, stdout: Vec::new() };
                        }
                    }
                    None => {
                        let n = argv0_name(&sp);
                        cap.push(format!("kubesim: {n}: cannot run here\n").as_bytes());
                        wake = Wake::Child { code: 127, stdout: Vec::new() };
                    }
                }
            }
        }
    }
    (124, cap.output)
}

/// The implementation name of the executable a spawn names: what follows `#!kubesim` in the
/// file at `spawn.path`, or `None`.
pub fn implementation_of(fs: &dyn Fs, spawn: &Spawn) -> Option<String> {
    match kubesim_os::registry::inspect(fs, &spawn.path) {
        Ok(kubesim_os::registry::Exe::Kubesim(name, _)) => Some(name),
        _ => None,
    }
}

/// Why an `exec` failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecError {
    /// The errno.
    pub errno: Errno,
    /// The command name.
    pub name: String,
}

/// What `execvp` does inside a container: resolves `argv[0]` on `PATH` and builds the program
/// that replaces the caller — this crate's model when the file names an implementation it
/// knows, else kubesim-os's (shells, applets, curl...) or its stand-in that asks the host.
pub fn exec(os: &dyn Os, argv: &[String], env: &BTreeMap<String, String>, cwd: &str) -> Result<Box<dyn Program>, ExecError> {
    let name = argv.first().cloned().unwrap_or_default();
    let fs = os.fs_ref();
    let path =
        kubesim_os::registry::resolve_command(&name, env.get("PATH").map(String::as_str), cwd, fs).map_err(|errno| ExecError { errno, name: name.clone() })?;
    let spawn =
        Spawn { argv: argv.to_vec(), env: env.clone(), cwd: cwd.to_string(), stdin: Vec::new(), capture_stdout: false, path, tty: false, stdin_open: false };
    if let Some(imp) = implementation_of(fs, &spawn) {
        let mut imp = imp;
        if imp == "busybox" || imp == "coreutils" {
            imp = String::new();
        }
        if !imp.is_empty() {
            if let Some(p) = crate::program_for(&imp, &spawn) {
                return Ok(p);
            }
        }
    }
    kubesim_os::registry::start(&spawn, fs).map_err(|errno| ExecError { errno, name })
}

/// A program that writes some text, then exits with a code.
#[derive(Clone, Debug)]
pub struct Print {
    /// stdout text.
    pub stdout: String,
    /// stderr text.
    pub stderr: String,
    /// Exit code.
    pub code: i32,
}

impl Print {
    /// Boxed.
    pub fn boxed(stdout: impl Into<String>, stderr: impl Into<String>, code: i32) -> Box<dyn Program> {
        Box::new(Print { stdout: stdout.into(), stderr: stderr.into(), code })
    }
}

impl Program for Print {
    fn resume(&mut self, os: &mut dyn Os, _wake: Wake) -> Step {
        if !self.stdout.is_empty() {
            out(os, &std::mem::take(&mut self.stdout));
        }
        if !self.stderr.is_empty() {
            err(os, &std::mem::take(&mut self.stderr));
        }
        Step::Exit(self.code)
    }
    fn memory_bytes(&self) -> u64 {
        1 << 20
    }
}

/// Go's `%v` of a float64 (shortest representation, `e` notation from 1e21).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e21).contains(&a) {
        let s = format!("{f:e}");
        // Rust: 1e21 / 1.5e-5 → Go: 1e+21 / 1.5e-05
        if let Some((m, e)) = s.split_once('e') {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            return format!("{m}e{sign}{digits:0>2}");
        }
        return s;
    }
    format!("{f}")
}

/// Remaining time of a Go-style duration string (`1s`, `500ms`, `1m30s`, `2h`); `None` when
/// invalid.
pub fn go_duration_ms(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    if s == "0" {
        return Some(0);
    }
    let mut total = 0f64;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let st = i;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        let n: f64 = s[st..i].parse().ok()?;
        let us = i;
        while i < b.len() && !(b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        let mult = match &s[us..i] {
            "ns" => 1e-6,
            "us" | "µs" => 1e-3,
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return None,
        };
        total += n * mult;
    }
    Some(total as u64)
}

/// Go's `time.Duration.String()` for milliseconds (`1m30s`, `500ms`, `0s`).
pub fn go_duration_string(ms: u64) -> String {
    if ms == 0 {
        return "0s".into();
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let h = ms / 3_600_000;
    let m = ms / 60_000 % 60;
    let s = ms % 60_000;
    let secs = if s.is_multiple_of(1000) { format!("{}s", s / 1000) } else { format!("{}s", go_float(s as f64 / 1000.0)) };
    if h > 0 {
        format!("{h}h{m}m{secs}")
    } else if m > 0 {
        format!("{m}m{secs}")
    } else {
        secs
    }
}

/// The environment value, or a default.
pub fn env_or<'a>(spawn: &'a Spawn, k: &str, d: &'a str) -> &'a str {
    spawn.env.get(k).map(String::as_str).unwrap_or(d)
}

/// Reads a file through the OS (`None` on any error), at most `limit` bytes.
pub fn read_file(os: &mut dyn Os, path: &str, limit: usize) -> Option<Vec<u8>> {
    kubesim_os::sys::read_file_limited(os, path, limit).ok()
}

/// Writes a file, creating parent directories.
pub fn write_file(os: &mut dyn Os, path: &str, data: &[u8]) -> Result<(), Errno> {
    let dir = kubesim_os::fs::dirname(path);
    let _ = os.fs().mkdir(&dir, 0o755, true);
    os.fs().write(path, data, kubesim_os::fs::WriteMode::Truncate)
}

/// The pod ordinal at the end of a StatefulSet hostname (`web-2` → 2).
pub fn ordinal(hostname: &str) -> Option<u64> {
    hostname.rsplit_once('-').and_then(|(_, n)| n.parse().ok())
}

/// A process that prints a prologue and then `exec`s another command (entrypoint scripts,
/// `gosu`, `dumb-init`, `tini`): resume/serve/listening/memory delegate to the new image.
#[derive(Clone, Debug)]
pub struct ExecAs {
    spawn: Spawn,
    argv: Vec<String>,
    stdout: String,
    stderr: String,
    script: String,
    inner: Option<Box<dyn Program>>,
    /// The `user[:group]` to switch to before the exec (gosu).
    user: Option<String>,
}

impl ExecAs {
    /// `argv` replaces the process after `stdout`/`stderr` are written; `script` names the
    /// caller in exec errors (`/usr/local/bin/docker-entrypoint.sh`).
    pub fn new(spawn: &Spawn, argv: Vec<String>, stdout: String, stderr: String, script: &str) -> ExecAs {
        ExecAs { spawn: spawn.clone(), argv, stdout, stderr, script: script.to_string(), inner: None, user: None }
    }

    /// Switches to `user[:group]` (names from the container's /etc/passwd and /etc/group, or
    /// numbers) before the exec, as gosu does.
    pub fn with_user(mut self, user: &str) -> ExecAs {
        self.user = Some(user.to_string());
        self
    }

    /// Boxed.
    pub fn boxed(spawn: &Spawn, argv: Vec<String>) -> Box<dyn Program> {
        let script = spawn.argv.first().cloned().unwrap_or_default();
        Box::new(ExecAs::new(spawn, argv, String::new(), String::new(), &script))
    }
}

impl Program for ExecAs {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Some(p) = self.inner.as_mut() {
            return p.resume(os, wake);
        }
        out(os, &std::mem::take(&mut self.stdout));
        err(os, &std::mem::take(&mut self.stderr));
        if self.argv.is_empty() {
            return Step::Exit(0);
        }
        match exec(os, &self.argv, &self.spawn.env, &self.spawn.cwd) {
            Ok(mut p) => {
                // Only root can switch (gosu as another user fails; kubesim keeps the user).
                if let Some((uid, gid)) = self.user.as_deref().filter(|_| os.creds().uid == 0).and_then(|u| user_spec_ids(os, u)) {
                    os.set_creds(uid, gid);
                }
                os.set_cmdline(&self.argv);
                let s = p.resume(os, Wake::Start);
                self.inner = Some(p);
                s
            }
            Err(e) => {
                let (msg, code) = if e.errno == Errno::EACCES { ("Permission denied", 126) } else { ("not found", 127) };
                err(os, &format!("{}: exec: {}: {msg}\n", self.script, e.name));
                Step::Exit(code)
            }
        }
    }
    fn memory_bytes(&self) -> u64 {
        self.inner.as_ref().map(|p| p.memory_bytes()).unwrap_or(500_000)
    }
    fn cpu_backlog_ms(&self) -> u64 {
        self.inner.as_ref().map_or(0, |p| p.cpu_backlog_ms())
    }
    fn serve(&mut self, os: &mut dyn Os, conn: &kubesim_os::program::Incoming) -> Option<kubesim_os::program::Outgoing> {
        self.inner.as_mut()?.serve(os, conn)
    }
    fn listening(&self) -> Vec<(u16, bool)> {
        self.inner.as_ref().map(|p| p.listening()).unwrap_or_default()
    }
}

/// A client-side TCP exchange: resolves `host` (resolv.conf, /etc/hosts, literals), then one
/// `NetCall::Tcp`. Drive with [`TcpClient::start`] and [`TcpClient::wake`].
#[derive(Clone, Debug)]
pub struct TcpClient {
    host: String,
    port: u16,
    send: Vec<u8>,
    timeout_ms: u64,
    resolver: Option<kubesim_os::net::Resolver>,
    ip: Option<String>,
}

/// What a [`TcpClient`] needs or got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TcpStep {
    /// Issue this step and feed the wake back.
    Call(Step),
    /// The peer's reply.
    Reply(Vec<u8>),
    /// Name resolution failed (glibc text: `Name or service not known`).
    NoHost(String),
    /// The connection failed.
    Failed(kubesim_os::program::NetError),
}

impl TcpClient {
    /// A request to `host:port`.
    pub fn new(host: &str, port: u16, send: Vec<u8>, timeout_ms: u64) -> TcpClient {
        TcpClient { host: host.to_string(), port, send, timeout_ms, resolver: None, ip: None }
    }

    fn connect(&self, ip: &str) -> TcpStep {
        TcpStep::Call(Step::Net(kubesim_os::program::NetCall::Tcp {
            dst: ip.to_string(),
            port: self.port,
            send: self.send.clone(),
            timeout_ms: self.timeout_ms,
        }))
    }

    /// First step.
    pub fn start(&mut self, os: &dyn Os) -> TcpStep {
        let libc = kubesim_os::net::libc_of(os.fs_ref());
        let mut r = kubesim_os::net::Resolver::new(os.fs_ref(), &self.host, libc);
        let s = r.start();
        self.resolver = Some(r);
        self.after_resolve(s)
    }

    fn after_resolve(&mut self, s: kubesim_os::net::ResolveStep) -> TcpStep {
        match s {
            kubesim_os::net::ResolveStep::Query(q) => TcpStep::Call(Step::Net(q)),
            kubesim_os::net::ResolveStep::Done(Ok(r)) => {
                let ip = r.addrs.first().cloned().unwrap_or_default();
                self.ip = Some(ip.clone());
                self.connect(&ip)
            }
            kubesim_os::net::ResolveStep::Done(Err(e)) => {
                let msg = if e == kubesim_os::net::ResolveError::TryAgain { "Temporary failure in name resolution" } else { "Name or service not known" };
                TcpStep::NoHost(msg.to_string())
            }
        }
    }

    /// Feeds a wake.
    pub fn wake(&mut self, wake: &Wake) -> TcpStep {
        match wake {
            Wake::Net(kubesim_os::program::NetReply::Tcp(r)) => match r {
                Ok(b) => TcpStep::Reply(b.clone()),
                Err(e) => TcpStep::Failed(*e),
            },
            Wake::Net(reply) => match self.resolver.as_mut() {
                Some(r) => {
                    let s = r.reply(reply);
                    self.after_resolve(s)
                }
                None => TcpStep::NoHost("Name or service not known".into()),
            },
            _ => TcpStep::Failed(kubesim_os::program::NetError::TimedOut),
        }
    }

    /// The resolved address, once known.
    pub fn ip(&self) -> Option<&str> {
        self.ip.as_deref()
    }
}

/// The (uid, gid) a `user[:group]` spec names in the container: names from /etc/passwd and
/// /etc/group, numbers as they are; the group defaults to the user's primary group.
pub fn user_spec_ids(os: &dyn Os, spec: &str) -> Option<(u32, u32)> {
    let (user, group) = match spec.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (spec, None),
    };
    let passwd = os.fs_ref().read("/etc/passwd").map(|d| String::from_utf8_lossy(&d).into_owned()).unwrap_or_default();
    let entry = passwd.lines().map(|l| l.split(':').collect::<Vec<_>>()).find(|f| f.len() >= 4 && (f[0] == user || f[2] == user));
    let uid = match user.parse::<u32>() {
        Ok(n) => n,
        Err(_) => entry.as_ref()?.get(2)?.parse().ok()?,
    };
    let gid = match group {
        Some(g) => match g.parse::<u32>() {
            Ok(n) => n,
            Err(_) => {
                let groups = os.fs_ref().read("/etc/group").map(|d| String::from_utf8_lossy(&d).into_owned()).unwrap_or_default();
                groups.lines().map(|l| l.split(':').collect::<Vec<_>>()).find(|f| f.len() >= 3 && f[0] == g)?.get(2)?.parse().ok()?
            }
        },
        None => entry.and_then(|f| f.get(3).and_then(|g| g.parse().ok())).unwrap_or(uid),
    };
    Some((uid, gid))
}
