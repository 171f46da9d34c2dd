//! Applets that block: sleep, timeout, tail -f, xargs, yes, and the stand-in for programs
//! this crate does not implement ([`Foreign`]).

use super::Family;
use crate::program::{default_signal_exit, Os, Program, Spawn, Step, Wake};

/// Parses a `sleep` duration (`1`, `0.5`, `2m`, `1h`, `1d`, `inf`, `infinity`) in ms;
/// `Ok(None)` = forever.
pub fn parse_duration(s: &str) -> Result<Option<u64>, ()> {
    let l = s.to_ascii_lowercase();
    if l == "inf" || l == "infinity" {
        return Ok(None);
    }
    let (num, mult) = match l.chars().last() {
        Some('s') => (&l[..l.len() - 1], 1000.0),
        Some('m') => (&l[..l.len() - 1], 60_000.0),
        Some('h') => (&l[..l.len() - 1], 3_600_000.0),
        Some('d') => (&l[..l.len() - 1], 86_400_000.0),
        _ => (l.as_str(), 1000.0),
    };
    if num.is_empty() || num.starts_with('-') || num.contains(|c: char| !(c.is_ascii_digit() || c == '.')) {
        return Err(());
    }
    let v: f64 = num.parse().map_err(|_| ())?;
    let ms = (v * mult).ceil();
    if ms > 1e15 {
        return Ok(None);
    }
    Ok(Some(ms as u64))
}

/// `sleep`.
#[derive(Clone, Debug)]
pub struct Sleep {
    argv: Vec<String>,
    family: Family,
    until: Option<u64>,
    forever: bool,
}

impl Sleep {
    /// From a spawn.
    pub fn new(spawn: &Spawn, family: Family) -> Sleep {
        Sleep { argv: spawn.argv.clone(), family, until: None, forever: false }
    }

    fn remaining(&self, os: &dyn Os) -> Step {
        if self.forever {
            return Step::Wait;
        }
        match self.until {
            Some(u) if u > os.now_ms() => Step::Sleep(u - os.now_ms()),
            _ => Step::Exit(0),
        }
    }
}

impl Program for Sleep {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match wake {
            Wake::Start => {
                let args = &self.argv[1..];
                if args.is_empty() {
                    let msg = match self.family {
                        Family::Gnu => "sleep: missing operand\nTry 'sleep --help' for more information.\n".to_string(),
                        Family::Busybox => "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: sleep [N]...\n\nPause for a time equal to the total of the args given, where each arg can\nhave an optional suffix of (s)econds, (m)inutes, (h)ours, or (d)ays\n".to_string(),
                    };
                    let _ = os.write_stderr(msg.as_bytes());
                    return Step::Exit(1);
                }
                let mut total = 0u64;
                for a in args {
                    match parse_duration(a) {
                        Ok(Some(ms)) => total = total.saturating_add(ms),
                        Ok(None) => self.forever = true,
                        Err(()) => {
                            let msg = match self.family {
                                Family::Gnu => format!("sleep: invalid time interval '{a}'\nTry 'sleep --help' for more information.\n"),
                                Family::Busybox => format!("sleep: invalid number '{a}'\n"),
                            };
                            let _ = os.write_stderr(msg.as_bytes());
                            return Step::Exit(1);
                        }
                    }
                }
                self.until = Some(os.now_ms().saturating_add(total));
                self.remaining(os)
            }
            Wake::Signal(s) => match default_signal_exit(os, s) {
                Some(code) => Step::Exit(code),
                None => self.remaining(os),
            },
            _ => self.remaining(os),
        }
    }

    fn memory_bytes(&self) -> u64 {
        400_000
    }
}

/// A program the host must run (`Step::Spawn`).
#[derive(Clone, Debug)]
pub struct Foreign {
    spawn: Spawn,
}

impl Foreign {
    /// Wraps a spawn request.
    pub fn new(spawn: Spawn) -> Foreign {
        Foreign { spawn }
    }
}

impl Program for Foreign {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match wake {
            Wake::Start => Step::Spawn(self.spawn.clone()),
            Wake::Child { code, stdout } => {
                if !stdout.is_empty() {
                    let _ = os.write_stdout(&stdout);
                }
                Step::Exit(code)
            }
            Wake::Signal(s) => Step::Exit(s.exit_code()),
            _ => Step::Spawn(self.spawn.clone()),
        }
    }
}

/// `timeout [-s SIG] [-k D] DURATION COMMAND...`.
#[derive(Clone, Debug)]
pub struct Timeout {
    spawn: Spawn,
    family: Family,
    child: Option<Box<dyn Program>>,
    deadline: u64,
    child_until: Option<u64>,
    child_waits: bool,
    pending: Option<Step>,
}

impl Timeout {
    /// From a spawn.
    pub fn new(spawn: &Spawn, family: Family) -> Timeout {
        Timeout { spawn: spawn.clone(), family, child: None, deadline: 0, child_until: None, child_waits: false, pending: None }
    }

    fn after_child(&mut self, os: &mut dyn Os, step: Step) -> Step {
        let now = os.now_ms();
        match step {
            Step::Exit(c) => Step::Exit(c),
            Step::Sleep(ms) => {
                self.child_until = Some(now + ms);
                Step::Sleep(ms.min(self.deadline.saturating_sub(now)))
            }
            Step::Wait => {
                self.child_waits = true;
                Step::Sleep(self.deadline.saturating_sub(now))
            }
            other => {
                self.pending = Some(other.clone());
                other
            }
        }
    }
}

impl Program for Timeout {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let now = os.now_ms();
        if let Wake::Start = wake {
            let mut args: Vec<String> = self.spawn.argv[1..].to_vec();
            while args.first().is_some_and(|a| a.starts_with('-')) {
                let a = args.remove(0);
                if (a == "-s" || a == "-k" || a == "--signal" || a == "--kill-after") && !args.is_empty() {
                    args.remove(0);
                }
            }
            if args.len() < 2 {
                let _ = os.write_stderr(b"timeout: missing operand\n");
                return Step::Exit(125);
            }
            let dur = match parse_duration(&args[0]) {
                Ok(d) => d.unwrap_or(u64::MAX / 4),
                Err(()) => {
                    let _ = os.write_stderr(format!("timeout: invalid time interval '{}'\n", args[0]).as_bytes());
                    return Step::Exit(125);
                }
            };
            self.deadline = now.saturating_add(dur);
            let mut sp = self.spawn.clone();
            sp.argv = args[1..].to_vec();
            let path = crate::registry::resolve_command(&sp.argv[0], sp.env.get("PATH").map(String::as_str), &sp.cwd, os.fs_ref());
            match path.and_then(|p| {
                sp.path = p;
                crate::registry::start(&sp, os.fs_ref())
            }) {
                Ok(p) => self.child = Some(p),
                Err(e) => {
                    let msg = match self.family {
                        Family::Gnu => format!("timeout: failed to run command '{}': {}\n", sp.argv[0], e.strerror()),
                        Family::Busybox => format!("timeout: can't execute '{}': {}\n", sp.argv[0], e.strerror()),
                    };
                    let _ = os.write_stderr(msg.as_bytes());
                    return Step::Exit(if e == crate::fs::Errno::ENOENT { 127 } else { 126 });
                }
            }
            let step = self.child.as_mut().map(|c| c.resume(os, Wake::Start)).unwrap_or(Step::Exit(0));
            return self.after_child(os, step);
        }
        if let Wake::Signal(s) = wake {
            // The signal is forwarded to the command.
            let step = self.child.as_mut().map(|c| c.resume(os, Wake::Signal(s))).unwrap_or(Step::Exit(s.exit_code()));
            return self.after_child(os, step);
        }
        if now >= self.deadline && !matches!(wake, Wake::Net(_) | Wake::Child { .. }) {
            self.child = None;
            return Step::Exit(124);
        }
        let child_wake = match wake {
            Wake::Timer => {
                if self.pending.take().is_some() {
                    Some(Wake::Timer)
                } else if self.child_until.is_some_and(|u| u <= now) {
                    self.child_until = None;
                    Some(Wake::Timer)
                } else {
                    None
                }
            }
            w @ (Wake::Net(_) | Wake::Child { .. }) => {
                self.pending = None;
                Some(w)
            }
            _ => None,
        };
        match child_wake {
            Some(w) => {
                let step = self.child.as_mut().map(|c| c.resume(os, w)).unwrap_or(Step::Exit(0));
                if now >= self.deadline && !matches!(step, Step::Exit(_)) {
                    self.child = None;
                    return Step::Exit(124);
                }
                self.after_child(os, step)
            }
            None => {
                let until = if self.child_waits { self.deadline } else { self.child_until.unwrap_or(self.deadline).min(self.deadline) };
                Step::Sleep(until.saturating_sub(now))
            }
        }
    }
}

/// `tail -f`: prints the tail, then polls the file once a second for appended data.
#[derive(Clone, Debug)]
pub struct TailFollow {
    spawn: Spawn,
    family: Family,
    file: Option<String>,
    /// The operand as given (for messages).
    name: String,
    offset: usize,
    /// `-F`/`--retry`: keep trying a missing file and reopen a replaced one.
    retry: bool,
    missing: bool,
}

impl TailFollow {
    /// From a spawn.
    pub fn new(spawn: &Spawn, family: Family) -> TailFollow {
        let retry = spawn.argv.iter().skip(1).any(|a| a == "-F" || a == "--retry" || a == "--follow=name");
        TailFollow { spawn: spawn.clone(), family, file: None, name: String::new(), offset: 0, retry, missing: false }
    }

    /// One poll of a followed file (busybox 1.36 `tail.c` and GNU tail 9.x messages for `-F`).
    fn poll(&mut self, os: &mut dyn Os) {
        let Some(p) = self.file.clone() else { return };
        let gnu = self.family == Family::Gnu;
        match os.fs_ref().read(&p) {
            Ok(d) if self.missing => {
                let msg = if gnu {
                    format!("tail: '{}' has appeared;  following new file\n", self.name)
                } else {
                    format!("tail: {} has appeared; following end of new file\n", self.name)
                };
                let _ = os.write_stderr(msg.as_bytes());
                let _ = os.write_stdout(&d);
                self.offset = d.len();
                self.missing = false;
            }
            Ok(d) => {
                if d.len() > self.offset {
                    let _ = os.write_stdout(&d[self.offset..]);
                } else if d.len() < self.offset && gnu {
                    let _ = os.write_stderr(format!("tail: {}: file truncated\n", self.name).as_bytes());
                } else if d.len() < self.offset {
                    // busybox seeks back to the start of a truncated file.
                    let _ = os.write_stdout(&d);
                }
                self.offset = d.len();
            }
            Err(e) if self.retry && !self.missing => {
                let msg = if gnu {
                    format!("tail: '{}' has become inaccessible: {}\n", self.name, e.strerror())
                } else {
                    format!("tail: {} has become inaccessible: {}\n", self.name, e.strerror())
                };
                let _ = os.write_stderr(msg.as_bytes());
                self.missing = true;
                self.offset = 0;
            }
            Err(_) => {}
        }
    }
}

impl Program for TailFollow {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match wake {
            Wake::Start => {
                // Print the initial tail like `tail` without -f.
                let args: Vec<String> = self.spawn.argv.iter().filter(|a| !matches!(a.as_str(), "-f" | "-F" | "--follow")).cloned().collect();
                let mut sp = self.spawn.clone();
                sp.argv = args.clone();
                let mut ctx = super::Ctx {
                    os,
                    args: args[1..].to_vec(),
                    name: "tail".into(),
                    env: &self.spawn.env,
                    cwd: &self.spawn.cwd,
                    stdin: &self.spawn.stdin,
                    family: self.family,
                    broken: false,
                    written: 0,
                };
                let code = super::text::tail(&mut ctx);
                let operands: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-') && a.parse::<i64>().is_err()).collect();
                if let Some(f) = operands.last() {
                    let p = crate::fs::join(&self.spawn.cwd, f);
                    self.name = f.to_string();
                    match os.fs_ref().read(&p) {
                        Ok(d) => {
                            self.offset = d.len();
                            self.file = Some(p);
                        }
                        Err(_) if self.retry => {
                            self.missing = true;
                            self.file = Some(p);
                        }
                        Err(_) if code != 0 => return Step::Exit(1),
                        Err(_) => {}
                    }
                }
                if self.file.is_some() {
                    Step::Sleep(1000)
                } else {
                    Step::Wait
                }
            }
            Wake::Signal(s) => match default_signal_exit(os, s) {
                Some(c) => Step::Exit(c),
                None => {
                    if self.file.is_some() {
                        Step::Sleep(1000)
                    } else {
                        Step::Wait
                    }
                }
            },
            _ => {
                if self.file.is_some() {
                    self.poll(os);
                    Step::Sleep(1000)
                } else {
                    Step::Wait
                }
            }
        }
    }
}

/// `yes`: writes until the reader goes away, yielding CPU between chunks.
#[derive(Clone, Debug)]
pub struct Yes {
    line: String,
}

impl Yes {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> Yes {
        let line = if spawn.argv.len() > 1 { format!("{}\n", spawn.argv[1..].join(" ")) } else { "y\n".into() };
        Yes { line }
    }
}

impl Program for Yes {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Wake::Signal(s) = wake {
            if let Some(c) = default_signal_exit(os, s) {
                return Step::Exit(c);
            }
        }
        let chunk = self.line.repeat((8192 / self.line.len().max(1)).max(1));
        for _ in 0..8 {
            if os.write_stdout(chunk.as_bytes()).is_err() {
                // Killed by SIGPIPE.
                return Step::Exit(141);
            }
        }
        Step::Compute { cpu_ms: 1, threads: 1 }
    }
}

/// `xargs [-n N] [-I R] [-r] [-0] [-d D] [cmd...]`: runs the command for batches of input items.
#[derive(Clone, Debug)]
pub struct Xargs {
    spawn: Spawn,
    family: Family,
    queue: Vec<Vec<String>>,
    child: Option<Box<dyn Program>>,
    status: i32,
}

impl Xargs {
    /// From a spawn.
    pub fn new(spawn: &Spawn, family: Family) -> Xargs {
        Xargs { spawn: spawn.clone(), family, queue: Vec::new(), child: None, status: 0 }
    }

    fn plan(&mut self) -> Result<(), String> {
        let args = &self.spawn.argv[1..];
        let mut i = 0;
        let mut n: Option<usize> = None;
        let mut replace: Option<String> = None;
        let mut no_empty = false;
        let mut nul = false;
        let mut delim: Option<char> = None;
        while i < args.len() && args[i].starts_with('-') {
            let a = &args[i];
            match a.as_str() {
                "-n" | "-L" => {
                    i += 1;
                    n = args.get(i).and_then(|v| v.parse().ok());
                }
                "-I" | "-i" => {
                    i += 1;
                    replace = Some(args.get(i).cloned().unwrap_or_else(|| "{}".into()));
                    n = Some(1);
                }
                "-r" | "--no-run-if-empty" => no_empty = true,
                "-0" | "--null" => nul = true,
                "-d" => {
                    i += 1;
                    delim = args.get(i).and_then(|d| d.chars().next());
                }
                "-t" | "-x" | "-e" => {}
                "-P" | "-s" => i += 1,
                other => {
                    if let Some(v) = other.strip_prefix("-n") {
                        n = v.parse().ok();
                    } else if let Some(v) = other.strip_prefix("-I") {
                        replace = Some(v.to_string());
                        n = Some(1);
                    } else if let Some(v) = other.strip_prefix("-P") {
                        let _ = v;
                    } else {
                        return Err(format!("xargs: invalid option -- '{}'\n", other.trim_start_matches('-')));
                    }
                }
            }
            i += 1;
        }
        let cmd: Vec<String> = if i < args.len() { args[i..].to_vec() } else { vec!["echo".into()] };
        let text = String::from_utf8_lossy(&self.spawn.stdin).into_owned();
        let items: Vec<String> = if nul {
            text.split('\0').filter(|s| !s.is_empty()).map(str::to_string).collect()
        } else if let Some(d) = delim {
            text.split(d).filter(|s| !s.is_empty()).map(str::to_string).collect()
        } else if replace.is_some() {
            text.lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect()
        } else {
            split_xargs(&text)
        };
        if items.is_empty() {
            if !no_empty && replace.is_none() {
                self.queue.push(cmd);
            }
            return Ok(());
        }
        let batch = n.unwrap_or(5000).max(1);
        for chunk in items.chunks(batch) {
            let argv: Vec<String> = match &replace {
                Some(r) => cmd.iter().map(|a| a.replace(r.as_str(), &chunk[0])).collect(),
                None => cmd.iter().cloned().chain(chunk.iter().cloned()).collect(),
            };
            self.queue.push(argv);
            if self.queue.len() > 100_000 {
                break;
            }
        }
        self.queue.reverse();
        Ok(())
    }

    fn next(&mut self, os: &mut dyn Os) -> Step {
        loop {
            let Some(argv) = self.queue.pop() else { return Step::Exit(self.status) };
            let mut sp = self.spawn.clone();
            sp.argv = argv;
            sp.stdin = Vec::new();
            let path = crate::registry::resolve_command(&sp.argv[0], sp.env.get("PATH").map(String::as_str), &sp.cwd, os.fs_ref());
            match path.and_then(|p| {
                sp.path = p;
                crate::registry::start(&sp, os.fs_ref())
            }) {
                Ok(mut p) => {
                    let step = p.resume(os, Wake::Start);
                    if let Step::Exit(c) = step {
                        self.note(c);
                        continue;
                    }
                    self.child = Some(p);
                    return step;
                }
                Err(e) => {
                    let msg = match self.family {
                        Family::Gnu => format!("xargs: {}: {}\n", sp.argv[0], e.strerror()),
                        Family::Busybox => format!("xargs: {}: {}\n", sp.argv[0], e.strerror()),
                    };
                    let _ = os.write_stderr(msg.as_bytes());
                    return Step::Exit(if e == crate::fs::Errno::ENOENT { 127 } else { 126 });
                }
            }
        }
    }

    fn note(&mut self, code: i32) {
        if code == 255 {
            self.status = 124;
        } else if (1..=125).contains(&code) {
            self.status = 123;
        }
    }
}

fn split_xargs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut q: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (q, c) {
            (Some(qc), c) if c == qc => q = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                q = Some(c);
                any = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    any = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

impl Program for Xargs {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Wake::Start = wake {
            if let Err(e) = self.plan() {
                let _ = os.write_stderr(e.as_bytes());
                return Step::Exit(1);
            }
            return self.next(os);
        }
        if let Wake::Signal(s) = wake {
            if let Some(c) = default_signal_exit(os, s) {
                return Step::Exit(c);
            }
        }
        let Some(child) = self.child.as_mut() else { return self.next(os) };
        let step = child.resume(os, wake);
        if let Step::Exit(c) = step {
            self.child = None;
            self.note(c);
            return self.next(os);
        }
        step
    }
}
