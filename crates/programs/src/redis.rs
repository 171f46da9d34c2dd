//! Redis: `redis-server` (startup log, RESP on 6379, an in-memory keyspace with the common
//! string/list/hash commands, CONFIG, INFO, SAVE to `/data/dump.rdb`, replication from
//! `--replicaof`), `redis-cli` (one-shot and stdin commands over TCP, TTY and raw output) and
//! the official image's `docker-entrypoint.sh`.

use crate::common::{self, CpuQueue, TcpClient, TcpStep};
use kubesim_os::fs::WriteMode;
use kubesim_os::program::{Incoming, NetError, Os, Outgoing, Program, Signal, Spawn, Step, Wake};
use std::collections::{BTreeMap, VecDeque};

/// Version when `REDIS_VERSION` is unset.
pub const DEFAULT_VERSION: &str = "7.2.4";

fn vnum(v: &str) -> (u32, u32, u32) {
    crate::nginx::vnum(v)
}

/// A value in the keyspace.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RVal {
    Str(Vec<u8>),
    List(VecDeque<Vec<u8>>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    val: RVal,
    expire_ms: Option<u64>,
}

/// A RESP reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`
    Status(String),
    /// `-ERR ...`
    Error(String),
    /// `:1`
    Int(i64),
    /// `$n` bulk
    Bulk(Vec<u8>),
    /// `$-1`
    Nil,
    /// `*n`
    Array(Vec<Reply>),
}

impl Reply {
    /// RESP encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Status(s) => out.extend_from_slice(format!("+{s}\r\n").as_bytes()),
            Reply::Error(s) => out.extend_from_slice(format!("-{s}\r\n").as_bytes()),
            Reply::Int(i) => out.extend_from_slice(format!(":{i}\r\n").as_bytes()),
            Reply::Bulk(b) => {
                out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
            Reply::Array(v) => {
                out.extend_from_slice(format!("*{}\r\n", v.len()).as_bytes());
                for r in v {
                    r.encode(out);
                }
            }
        }
    }
}

fn line_at(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let p = b[i..].windows(2).position(|w| w == b"\r\n")?;
    Some((&b[i..i + p], i + p + 2))
}

/// Parses one RESP reply at `i`: (reply, next index).
pub fn parse_reply(b: &[u8], i: usize, depth: u32) -> Option<(Reply, usize)> {
    if i >= b.len() || depth > 32 {
        return None;
    }
    let (line, next) = line_at(b, i)?;
    let text = String::from_utf8_lossy(&line[1..]).into_owned();
    Some(match line.first()? {
        b'+' => (Reply::Status(text), next),
        b'-' => (Reply::Error(text), next),
        b':' => (Reply::Int(text.parse().ok()?), next),
        b'$' => {
            let n: i64 = text.parse().ok()?;
            if n < 0 {
                return Some((Reply::Nil, next));
            }
            let n = n as usize;
            if next + n > b.len() {
                return None;
            }
            let data = b[next..next + n].to_vec();
            let after = if b.get(next + n..next + n + 2) == Some(b"\r\n") { next + n + 2 } else { next + n };
            (Reply::Bulk(data), after)
        }
        b'*' => {
            let n: i64 = text.parse().ok()?;
            if n < 0 {
                return Some((Reply::Nil, next));
            }
            let mut v = Vec::new();
            let mut j = next;
            for _ in 0..n.min(1_000_000) {
                let (r, k) = parse_reply(b, j, depth + 1)?;
                v.push(r);
                j = k;
            }
            (Reply::Array(v), j)
        }
        _ => return None,
    })
}

/// Parses one client command (RESP array or inline): (args, next index).
fn parse_command(b: &[u8], i: usize) -> Option<(Vec<Vec<u8>>, usize)> {
    if i >= b.len() {
        return None;
    }
    if b[i] == b'*' {
        let (r, next) = parse_reply(b, i, 0)?;
        let Reply::Array(items) = r else { return Some((Vec::new(), next)) };
        let args = items
            .into_iter()
            .map(|x| match x {
                Reply::Bulk(b) => b,
                Reply::Status(s) | Reply::Error(s) => s.into_bytes(),
                Reply::Int(n) => n.to_string().into_bytes(),
                _ => Vec::new(),
            })
            .collect();
        return Some((args, next));
    }
    let end = b[i..].iter().position(|&c| c == b'\n').map(|p| i + p + 1).unwrap_or(b.len());
    let line = String::from_utf8_lossy(&b[i..end]).trim().to_string();
    Some((split_words(&line).into_iter().map(String::into_bytes).collect(), end))
}

/// Splits a command line like redis-cli does (quotes, escapes).
pub fn split_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut q: Option<char> = None;
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match q {
            Some(qc) => {
                if c == qc {
                    q = None;
                } else if c == '\\' && qc == '"' {
                    match it.next() {
                        Some('n') => cur.push('\n'),
                        Some('t') => cur.push('\t'),
                        Some(o) => cur.push(o),
                        None => {}
                    }
                } else {
                    cur.push(c);
                }
            }
            None => {
                if c.is_whitespace() {
                    if in_word {
                        out.push(std::mem::take(&mut cur));
                        in_word = false;
                    }
                } else if c == '"' || c == '\'' {
                    q = Some(c);
                    in_word = true;
                } else {
                    cur.push(c);
                    in_word = true;
                }
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

fn glob_match(p: &[u8], s: &[u8]) -> bool {
    kubesim_os::pattern::matches(&String::from_utf8_lossy(p), &String::from_utf8_lossy(s))
}

/// Server configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Config {
    port: u16,
    bind: String,
    maxmemory: u64,
    policy: String,
    requirepass: String,
    dir: String,
    dbfilename: String,
    appendonly: bool,
    save: String,
    replicaof: Option<(String, u16)>,
    protected_mode: bool,
    loglevel: String,
    file: Option<String>,
}

fn parse_mem(s: &str) -> Option<u64> {
    let l = s.to_ascii_lowercase();
    let (num, mult) = if let Some(n) = l.strip_suffix("gb") {
        (n, 1u64 << 30)
    } else if let Some(n) = l.strip_suffix("mb") {
        (n, 1 << 20)
    } else if let Some(n) = l.strip_suffix("kb") {
        (n, 1 << 10)
    } else if let Some(n) = l.strip_suffix('g') {
        (n, 1_000_000_000)
    } else if let Some(n) = l.strip_suffix('m') {
        (n, 1_000_000)
    } else if let Some(n) = l.strip_suffix('k') {
        (n, 1000)
    } else if let Some(n) = l.strip_suffix('b') {
        (n, 1)
    } else {
        (l.as_str(), 1)
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Serving,
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repl {
    /// Sleeping until the next sync attempt.
    Idle(u64),
    /// A sync exchange in flight.
    Syncing(TcpClientBox),
}

#[derive(Clone, Debug)]
struct TcpClientBox(TcpClient);

impl PartialEq for TcpClientBox {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for TcpClientBox {}

/// `redis-server`.
#[derive(Clone, Debug)]
pub struct RedisServer {
    spawn: Spawn,
    version: String,
    cfg: Config,
    phase: Phase,
    data: BTreeMap<String, Entry>,
    cpu: CpuQueue,
    started_unix: u64,
    commands: u64,
    connections: u64,
    replicas: Vec<String>,
    repl: Option<Repl>,
    synced: bool,
    dirty: u64,
    last_save: u64,
    error: Option<String>,
    pid: u32,
}

impl RedisServer {
    /// From a spawn (`redis-server [/path/redis.conf] [--opt value]...`).
    pub fn new(spawn: &Spawn) -> RedisServer {
        let version = spawn.env.get("REDIS_VERSION").cloned().unwrap_or_else(|| DEFAULT_VERSION.into());
        let cfg = Config {
            port: 6379,
            bind: String::new(),
            maxmemory: 0,
            policy: "noeviction".into(),
            requirepass: String::new(),
            dir: spawn.cwd.clone(),
            dbfilename: "dump.rdb".into(),
            appendonly: false,
            save: "3600 1 300 100 60 10000".into(),
            replicaof: None,
            protected_mode: true,
            loglevel: "notice".into(),
            file: None,
        };
        RedisServer {
            spawn: spawn.clone(),
            version,
            cfg,
            phase: Phase::Start,
            data: BTreeMap::new(),
            cpu: CpuQueue::default(),
            started_unix: 0,
            commands: 0,
            connections: 0,
            replicas: Vec::new(),
            repl: None,
            synced: false,
            dirty: 0,
            last_save: 0,
            error: None,
            pid: 1,
        }
    }

    fn apply(&mut self, key: &str, vals: &[String]) -> Result<(), String> {
        let v0 = vals.first().cloned().unwrap_or_default();
        match key.to_ascii_lowercase().as_str() {
            "port" => self.cfg.port = v0.parse().map_err(|_| "Invalid port".to_string())?,
            "bind" => self.cfg.bind = vals.join(" "),
            "maxmemory" => self.cfg.maxmemory = parse_mem(&v0).ok_or_else(|| "argument must be a memory value".to_string())?,
            "maxmemory-policy" => self.cfg.policy = v0.to_ascii_lowercase(),
            "requirepass" => self.cfg.requirepass = v0,
            "dir" => self.cfg.dir = v0,
            "dbfilename" => self.cfg.dbfilename = v0,
            "appendonly" => self.cfg.appendonly = v0 == "yes",
            "save" => self.cfg.save = vals.join(" "),
            "replicaof" | "slaveof" => {
                if vals.len() != 2 {
                    return Err("wrong number of arguments".into());
                }
                self.cfg.replicaof = if v0.eq_ignore_ascii_case("no") { None } else { Some((v0, vals[1].parse().unwrap_or(6379))) };
            }
            "protected-mode" => self.cfg.protected_mode = v0 == "yes",
            "loglevel" => self.cfg.loglevel = v0,
            "daemonize"
            | "logfile"
            | "databases"
            | "tcp-backlog"
            | "timeout"
            | "tcp-keepalive"
            | "supervised"
            | "pidfile"
            | "always-show-logo"
            | "appendfsync"
            | "maxclients"
            | "io-threads"
            | "rdbcompression"
            | "lazyfree-lazy-eviction"
            | "notify-keyspace-events"
            | "masterauth"
            | "replica-read-only"
            | "slave-read-only"
            | "min-replicas-to-write"
            | "cluster-enabled"
            | "hz"
            | "aof-use-rdb-preamble"
            | "enable-debug-command" => {}
            _ => return Err("Bad directive or wrong number of arguments".to_string()),
        }
        Ok(())
    }

    fn log(&self, os: &mut dyn Os, role: char, sym: char, msg: &str) {
        let ms = os.unix_time_ms();
        let t = kubesim_os::time::strftime("%d %b %Y %H:%M:%S", (ms / 1000) as i64, 0);
        common::out(os, &format!("{}:{role} {t}.{:03} {sym} {msg}\n", self.pid, ms % 1000));
    }

    fn role(&self) -> char {
        if self.cfg.replicaof.is_some() {
            'S'
        } else {
            'M'
        }
    }

    fn v7(&self) -> bool {
        vnum(&self.version) >= (7, 0, 0)
    }

    fn v72(&self) -> bool {
        vnum(&self.version) >= (7, 2, 0)
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        self.pid = os.pid();
        self.started_unix = os.unix_time();
        let args: Vec<String> = self.spawn.argv.iter().skip(1).cloned().collect();
        if args.first().is_some_and(|a| a == "-v" || a == "--version") {
            common::out(os, &format!("Redis server v={} sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=f8b2b3a6d5a5b5a4\n", self.version));
            self.phase = Phase::Done;
            return Step::Exit(0);
        }
        let mut i = 0;
        let mut file_text = String::new();
        if let Some(f) = args.first().filter(|a| !a.starts_with("--")) {
            let path = kubesim_os::fs::join(&self.spawn.cwd, f);
            match common::read_file(os, &path, 1 << 20) {
                Some(b) => {
                    file_text = String::from_utf8_lossy(&b).into_owned();
                    self.cfg.file = Some(path);
                }
                None => {
                    common::err(
                        os,
                        &format!(
                            "\n*** FATAL CONFIG FILE ERROR (Redis {}) ***\nFatal error, can't open config file '{}': No such file or directory\n",
                            self.version, f
                        ),
                    );
                    self.phase = Phase::Done;
                    return Step::Exit(1);
                }
            }
            i = 1;
        }
        let sym = if self.v72() { '*' } else { '#' };
        let role = 'C';
        self.log(os, role, sym, "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo");
        self.log(os, role, sym, &format!("Redis version={}, bits=64, commit=00000000, modified=0, pid={}, just started", self.version, self.pid));
        // The config file, then --options.
        for (n, l) in file_text.lines().enumerate() {
            let words = split_words(l.trim());
            if words.is_empty() || words[0].starts_with('#') {
                continue;
            }
            if let Err(e) = self.apply(&words[0], &words[1..]) {
                common::err(
                    os,
                    &format!(
                        "\n*** FATAL CONFIG FILE ERROR (Redis {}) ***\nReading the configuration file, at line {}\n>>> '{}'\n{e}\n",
                        self.version,
                        n + 1,
                        l.trim()
                    ),
                );
                self.phase = Phase::Done;
                return Step::Exit(1);
            }
        }
        let rest = &args[i..];
        let mut j = 0;
        while j < rest.len() {
            let Some(k) = rest[j].strip_prefix("--") else {
                j += 1;
                continue;
            };
            let mut vals = Vec::new();
            j += 1;
            while j < rest.len() && !rest[j].starts_with("--") {
                vals.push(rest[j].clone());
                j += 1;
            }
            if let Err(e) = self.apply(k, &vals) {
                common::err(
                    os,
                    &format!(
                        "\n*** FATAL CONFIG FILE ERROR (Redis {}) ***\nReading the configuration file, at line 2\n>>> '{k} {}'\n{e}\n",
                        self.version,
                        vals.join(" ")
                    ),
                );
                self.phase = Phase::Done;
                return Step::Exit(1);
            }
        }
        if self.cfg.file.is_none() {
            self.log(
                os,
                role,
                '#',
                "Warning: no config file specified, using the default config. In order to specify a config file use redis-server /path/to/redis.conf",
            );
        } else {
            self.log(os, role, if self.v7() { '*' } else { '#' }, "Configuration loaded");
        }
        let r = self.role();
        if vnum(&self.version) >= (6, 2, 0) {
            self.log(os, r, '*', "monotonic clock: POSIX clock_gettime");
        }
        self.log(os, r, '*', &format!("Running mode=standalone, port={}.", self.cfg.port));
        self.log(os, r, '#', "Server initialized");
        self.load_rdb(os);
        if self.v72() {
            self.log(os, r, '*', "Ready to accept connections tcp");
        } else {
            self.log(os, r, '*', "Ready to accept connections");
        }
        self.phase = Phase::Serving;
        // The default proc-title-template "{title} {listen-addr} {server-mode}": the first bind
        // address (`*` by default) and the port.
        let bind = self.cfg.bind.split_whitespace().next().unwrap_or("*").to_string();
        let exe = self.spawn.argv.first().cloned().unwrap_or_else(|| "redis-server".into());
        os.set_cmdline(&[format!("{exe} {bind}:{}", self.cfg.port)]);
        if let Some((h, p)) = self.cfg.replicaof.clone() {
            self.log(os, 'S', '*', &format!("Connecting to MASTER {h}:{p}"));
            self.log(os, 'S', '*', "MASTER <-> REPLICA sync started");
            return self.begin_sync(os);
        }
        common::idle(&mut self.cpu, os.now_ms(), None)
    }

    fn rdb_path(&self) -> String {
        kubesim_os::fs::join(&self.cfg.dir, &self.cfg.dbfilename)
    }

    fn dump(&self) -> Vec<u8> {
        let mut items = Vec::new();
        for (k, e) in &self.data {
            let mut v = vec![Reply::Bulk(k.clone().into_bytes())];
            match &e.val {
                RVal::Str(s) => {
                    v.push(Reply::Bulk(b"string".to_vec()));
                    v.push(Reply::Bulk(s.clone()));
                }
                RVal::List(l) => {
                    v.push(Reply::Bulk(b"list".to_vec()));
                    v.extend(l.iter().map(|x| Reply::Bulk(x.clone())));
                }
                RVal::Hash(h) => {
                    v.push(Reply::Bulk(b"hash".to_vec()));
                    for (f, x) in h {
                        v.push(Reply::Bulk(f.clone()));
                        v.push(Reply::Bulk(x.clone()));
                    }
                }
            }
            items.push(Reply::Array(v));
        }
        let mut out = Vec::new();
        Reply::Array(items).encode(&mut out);
        out
    }

    fn restore(&mut self, dump: &[u8]) -> usize {
        let Some((Reply::Array(items), _)) = parse_reply(dump, 0, 0) else { return 0 };
        self.data.clear();
        for it in items {
            let Reply::Array(v) = it else { continue };
            let b = |r: &Reply| if let Reply::Bulk(x) = r { x.clone() } else { Vec::new() };
            if v.len() < 2 {
                continue;
            }
            let key = String::from_utf8_lossy(&b(&v[0])).into_owned();
            let val = match b(&v[1]).as_slice() {
                b"list" => RVal::List(v[2..].iter().map(b).collect()),
                b"hash" => RVal::Hash(v[2..].chunks(2).filter(|c| c.len() == 2).map(|c| (b(&c[0]), b(&c[1]))).collect()),
                _ => RVal::Str(v.get(2).map(b).unwrap_or_default()),
            };
            self.data.insert(key, Entry { val, expire_ms: None });
        }
        self.data.len()
    }

    fn load_rdb(&mut self, os: &mut dyn Os) {
        let path = self.rdb_path();
        let Some(b) = common::read_file(os, &path, 64 << 20) else { return };
        let body = b.splitn(2, |&c| c == b'\n').nth(1).unwrap_or(&[]).to_vec();
        let n = self.restore(&body);
        let r = self.role();
        if self.v7() {
            self.log(os, r, '*', &format!("Loading RDB produced by version {}", self.version));
            let age = os.fs_ref().stat(&path).map(|m| os.unix_time().saturating_sub(m.mtime_ms / 1000)).unwrap_or(0);
            self.log(os, r, '*', &format!("RDB age {age} seconds"));
            self.log(os, r, '*', "RDB memory usage when created 0.90 Mb");
            self.log(os, r, '*', &format!("Done loading RDB, keys loaded: {n}, keys expired: 0."));
        }
        self.log(os, r, '*', "DB loaded from disk: 0.000 seconds");
    }

    fn save(&mut self, os: &mut dyn Os) -> bool {
        let mut b = format!("REDIS{:04}\n", if self.v7() { 11 } else { 9 }).into_bytes();
        b.extend_from_slice(&self.dump());
        let path = self.rdb_path();
        let ok = os.fs().write(&path, &b, WriteMode::Truncate).is_ok();
        if ok {
            self.dirty = 0;
            self.last_save = os.unix_time();
        }
        ok
    }

    fn shutdown(&mut self, os: &mut dyn Os, via_signal: Option<Signal>) -> Step {
        let r = self.role();
        if let Some(s) = via_signal {
            let name = if s == Signal::Int { "SIGINT" } else { "SIGTERM" };
            let t = os.unix_time();
            common::out(os, &format!("{}:signal-handler ({t}) Received {name} scheduling shutdown...\n", self.pid));
        }
        let sym = if self.v7() { '*' } else { '#' };
        self.log(os, r, sym, "User requested shutdown...");
        if !self.cfg.save.trim().is_empty() && self.cfg.save.trim() != "\"\"" {
            self.log(os, r, '*', "Saving the final RDB snapshot before exiting.");
            if self.save(os) {
                self.log(os, r, '*', "DB saved on disk");
            } else {
                self.log(
                    os,
                    r,
                    '#',
                    &format!("Failed opening the temp RDB file temp-{}.rdb (in server root dir {}) for saving: Permission denied", self.pid, self.cfg.dir),
                );
                self.log(os, r, '#', "Error trying to save the DB, can't exit.");
            }
        }
        self.log(os, r, '#', "Redis is now ready to exit, bye bye...");
        self.phase = Phase::Done;
        Step::Exit(0)
    }

    fn begin_sync(&mut self, os: &mut dyn Os) -> Step {
        let Some((h, p)) = self.cfg.replicaof.clone() else { return common::idle(&mut self.cpu, os.now_ms(), None) };
        let mut c = TcpClient::new(&h, p, b"*1\r\n$4\r\nSYNC\r\n".to_vec(), 5_000);
        match c.start(os) {
            TcpStep::Call(s) => {
                self.repl = Some(Repl::Syncing(TcpClientBox(c)));
                s
            }
            other => self.sync_done(os, other),
        }
    }

    fn sync_done(&mut self, os: &mut dyn Os, r: TcpStep) -> Step {
        let now = os.now_ms();
        match r {
            TcpStep::Reply(b) => {
                let (line, next) = line_at(&b, 0).unwrap_or((&[], 0));
                let head = String::from_utf8_lossy(line).into_owned();
                if let Some(rest) = head.strip_prefix("+FULLRESYNC ") {
                    if let Some((Reply::Bulk(dump), _)) = parse_reply(&b, next, 0) {
                        if !self.synced {
                            self.log(os, 'S', '*', "Non blocking connect for SYNC fired the event.");
                            self.log(os, 'S', '*', "Master replied to PING, replication can continue...");
                            self.log(os, 'S', '*', "Partial resynchronization not possible (no cached master)");
                            self.log(os, 'S', '*', &format!("Full resync from master: {}", rest.replace(' ', ":")));
                            self.log(os, 'S', '*', &format!("MASTER <-> REPLICA sync: receiving {} bytes from master to disk", dump.len()));
                            self.log(os, 'S', '*', "MASTER <-> REPLICA sync: Flushing old data");
                            self.log(os, 'S', '*', "MASTER <-> REPLICA sync: Loading DB in memory");
                        }
                        self.restore(&dump);
                        if !self.synced {
                            self.log(os, 'S', '*', "MASTER <-> REPLICA sync: Finished with success");
                            self.synced = true;
                        }
                    }
                } else if !self.synced {
                    self.log(os, 'S', '#', &format!("Unexpected reply to PSYNC from master: {head}"));
                }
            }
            TcpStep::NoHost(m) => {
                let (h, p) = self.cfg.replicaof.clone().unwrap_or_default();
                self.log(os, 'S', '#', &format!("Unable to connect to MASTER: Can't resolve master hostname {h}: {m}"));
                let _ = p;
            }
            TcpStep::Failed(e) => {
                if self.synced {
                    self.log(os, 'S', '#', "Connection with master lost.");
                    self.synced = false;
                }
                let msg = if e == NetError::TimedOut {
                    "Timeout connecting to the MASTER...".to_string()
                } else {
                    format!("Error condition on socket for SYNC: {}", e.strerror())
                };
                self.log(os, 'S', '#', &msg);
            }
            TcpStep::Call(s) => return s,
        }
        self.repl = Some(Repl::Idle(now + 1_000));
        common::idle(&mut self.cpu, now, Some(now + 1_000))
    }

    fn tick(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let now = os.now_ms();
        match self.repl.take() {
            Some(Repl::Syncing(mut c)) => {
                if matches!(wake, Wake::Net(_)) {
                    let r = c.0.wake(&wake);
                    if let TcpStep::Call(s) = r {
                        self.repl = Some(Repl::Syncing(c));
                        return s;
                    }
                    return self.sync_done(os, r);
                }
                self.repl = Some(Repl::Syncing(c));
                common::idle(&mut self.cpu, now, None)
            }
            Some(Repl::Idle(t)) if now >= t && self.cpu.is_empty() => self.begin_sync(os),
            Some(Repl::Idle(t)) => {
                self.repl = Some(Repl::Idle(t));
                common::idle(&mut self.cpu, now, Some(t))
            }
            None => common::idle(&mut self.cpu, now, None),
        }
    }

    fn expire(&mut self, now: u64) {
        self.data.retain(|_, e| e.expire_ms.is_none_or(|t| t > now));
    }

    fn used_memory(&self) -> u64 {
        let data: u64 = self
            .data
            .iter()
            .map(|(k, e)| {
                k.len() as u64
                    + 56
                    + match &e.val {
                        RVal::Str(s) => s.len() as u64 + 16,
                        RVal::List(l) => l.iter().map(|x| x.len() as u64 + 24).sum(),
                        RVal::Hash(h) => h.iter().map(|(a, b)| (a.len() + b.len()) as u64 + 32).sum(),
                    }
            })
            .sum();
        900_000 + data
    }

    fn info(&self, os: &dyn Os, section: &str) -> String {
        let up = os.unix_time().saturating_sub(self.started_unix);
        let mut s = String::new();
        let all = section.is_empty() || section == "all" || section == "everything" || section == "default";
        let want = |n: &str| all || section.eq_ignore_ascii_case(n);
        if want("server") {
            s.push_str(&format!("# Server\r\nredis_version:{}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_mode:standalone\r\nos:Linux {} x86_64\r\narch_bits:64\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{up}\r\nuptime_in_days:{}\r\nexecutable:/data/redis-server\r\nconfig_file:{}\r\n\r\n", self.version, os.uname().release, self.pid, self.cfg.port, up / 86400, self.cfg.file.clone().unwrap_or_default()));
        }
        if want("clients") {
            s.push_str("# Clients\r\nconnected_clients:1\r\nblocked_clients:0\r\n\r\n");
        }
        if want("memory") {
            let m = self.used_memory();
            s.push_str(&format!("# Memory\r\nused_memory:{m}\r\nused_memory_human:{:.2}M\r\nused_memory_rss:{}\r\nmaxmemory:{}\r\nmaxmemory_human:{}\r\nmaxmemory_policy:{}\r\n\r\n", m as f64 / 1048576.0, self.memory_bytes(), self.cfg.maxmemory, human(self.cfg.maxmemory), self.cfg.policy));
        }
        if want("persistence") {
            s.push_str(&format!(
                "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:{}\r\nrdb_last_save_time:{}\r\naof_enabled:{}\r\n\r\n",
                self.dirty,
                if self.last_save == 0 { self.started_unix } else { self.last_save },
                self.cfg.appendonly as u8
            ));
        }
        if want("stats") {
            s.push_str(&format!(
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nexpired_keys:0\r\nevicted_keys:0\r\n\r\n",
                self.connections, self.commands
            ));
        }
        if want("replication") {
            match &self.cfg.replicaof {
                Some((h, p)) => s.push_str(&format!(
                    "# Replication\r\nrole:slave\r\nmaster_host:{h}\r\nmaster_port:{p}\r\nmaster_link_status:{}\r\nconnected_slaves:0\r\n\r\n",
                    if self.synced { "up" } else { "down" }
                )),
                None => {
                    s.push_str(&format!("# Replication\r\nrole:master\r\nconnected_slaves:{}\r\n", self.replicas.len()));
                    for (i, r) in self.replicas.iter().enumerate() {
                        let (ip, port) = r.split_once(':').unwrap_or((r, "6379"));
                        s.push_str(&format!("slave{i}:ip={ip},port={port},state=online,offset=0,lag=0\r\n"));
                    }
                    s.push_str("\r\n");
                }
            }
        }
        if want("cpu") {
            let cpu = self.cpu.total_us() as f64 / 1e6;
            s.push_str(&format!("# CPU\r\nused_cpu_sys:{:.6}\r\nused_cpu_user:{:.6}\r\n\r\n", cpu / 2.0, cpu / 2.0));
        }
        if want("keyspace") {
            s.push_str("# Keyspace\r\n");
            if !self.data.is_empty() {
                let exp = self.data.values().filter(|e| e.expire_ms.is_some()).count();
                s.push_str(&format!("db0:keys={},expires={exp},avg_ttl=0\r\n", self.data.len()));
            }
        }
        s.trim_end_matches("\r\n").to_string() + "\r\n"
    }

    fn exec(&mut self, os: &mut dyn Os, args: &[Vec<u8>], src: &str, authed: &mut bool) -> Reply {
        self.commands += 1;
        let now = os.unix_time_ms();
        self.expire(now);
        let Some(cmd) = args.first() else { return Reply::Error("ERR empty command".into()) };
        let cmd = String::from_utf8_lossy(cmd).to_ascii_uppercase();
        let a = |i: usize| args.get(i).cloned().unwrap_or_default();
        let s = |i: usize| String::from_utf8_lossy(&args.get(i).cloned().unwrap_or_default()).into_owned();
        let wrong = |c: &str| Reply::Error(format!("ERR wrong number of arguments for '{}' command", c.to_ascii_lowercase()));
        let arity: &[(&str, usize, bool)] = &[
            ("GET", 2, true),
            ("SET", 3, false),
            ("DEL", 2, false),
            ("EXISTS", 2, false),
            ("INCR", 2, true),
            ("DECR", 2, true),
            ("INCRBY", 3, true),
            ("ECHO", 2, true),
            ("APPEND", 3, true),
            ("STRLEN", 2, true),
            ("EXPIRE", 3, true),
            ("TTL", 2, true),
            ("TYPE", 2, true),
            ("LPUSH", 3, false),
            ("RPUSH", 3, false),
            ("LRANGE", 4, true),
            ("LLEN", 2, true),
            ("HSET", 4, false),
            ("HGET", 3, true),
            ("HGETALL", 2, true),
            ("KEYS", 2, true),
            ("MGET", 2, false),
            ("SETEX", 4, true),
            ("LPOP", 2, false),
            ("RPOP", 2, false),
        ];
        if let Some((_, n, exact)) = arity.iter().find(|(c, _, _)| *c == cmd) {
            if (*exact && args.len() != *n) || args.len() < *n {
                return wrong(&cmd);
            }
        }
        if !self.cfg.requirepass.is_empty() && !*authed && !matches!(cmd.as_str(), "AUTH" | "HELLO" | "QUIT") {
            return Reply::Error("NOAUTH Authentication required.".into());
        }
        let readonly = self.cfg.replicaof.is_some();
        let write_cmds =
            ["SET", "DEL", "INCR", "DECR", "INCRBY", "APPEND", "EXPIRE", "LPUSH", "RPUSH", "HSET", "FLUSHALL", "FLUSHDB", "SETEX", "MSET", "LPOP", "RPOP"];
        if readonly && write_cmds.contains(&cmd.as_str()) {
            return Reply::Error("READONLY You can't write against a read only replica.".into());
        }
        if write_cmds.contains(&cmd.as_str()) {
            self.dirty += 1;
            if self.cfg.maxmemory > 0
                && self.cfg.policy == "noeviction"
                && self.used_memory() > self.cfg.maxmemory
                && !matches!(cmd.as_str(), "DEL" | "FLUSHALL" | "FLUSHDB")
            {
                return Reply::Error("OOM command not allowed when used memory > 'maxmemory'.".into());
            }
        }
        let get_str = |me: &Self, k: &str| -> Result<Option<Vec<u8>>, Reply> {
            match me.data.get(k).map(|e| &e.val) {
                None => Ok(None),
                Some(RVal::Str(v)) => Ok(Some(v.clone())),
                Some(_) => Err(Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into())),
            }
        };
        let r = match cmd.as_str() {
            "PING" => match args.len() {
                1 => Reply::Status("PONG".into()),
                2 => Reply::Bulk(a(1)),
                _ => wrong("ping"),
            },
            "ECHO" => Reply::Bulk(a(1)),
            "AUTH" => {
                let pass = if args.len() == 3 { s(2) } else { s(1) };
                if self.cfg.requirepass.is_empty() {
                    Reply::Error(
                        "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?".into(),
                    )
                } else if pass == self.cfg.requirepass {
                    *authed = true;
                    Reply::Status("OK".into())
                } else {
                    Reply::Error("WRONGPASS invalid username-password pair or user is disabled.".into())
                }
            }
            "SELECT" => {
                if s(1) == "0" {
                    Reply::Status("OK".into())
                } else {
                    Reply::Error("ERR DB index is out of range".into())
                }
            }
            "SET" => {
                let key = s(1);
                let mut exp = None;
                let (mut nx, mut xx) = (false, false);
                let mut i = 3;
                while i < args.len() {
                    match s(i).to_ascii_uppercase().as_str() {
                        "EX" => {
                            i += 1;
                            match s(i).parse::<u64>() {
                                Ok(v) if v > 0 => exp = Some(now + v * 1000),
                                _ => return Reply::Error("ERR invalid expire time in 'set' command".into()),
                            }
                        }
                        "PX" => {
                            i += 1;
                            match s(i).parse::<u64>() {
                                Ok(v) if v > 0 => exp = Some(now + v),
                                _ => return Reply::Error("ERR invalid expire time in 'set' command".into()),
                            }
                        }
                        "NX" => nx = true,
                        "XX" => xx = true,
                        _ => return Reply::Error("ERR syntax error".into()),
                    }
                    i += 1;
                }
                let exists = self.data.contains_key(&key);
                if (nx && exists) || (xx && !exists) {
                    Reply::Nil
                } else {
                    self.data.insert(key, Entry { val: RVal::Str(a(2)), expire_ms: exp });
                    Reply::Status("OK".into())
                }
            }
            "SETEX" => match s(2).parse::<u64>() {
                Ok(v) if v > 0 => {
                    self.data.insert(s(1), Entry { val: RVal::Str(a(3)), expire_ms: Some(now + v * 1000) });
                    Reply::Status("OK".into())
                }
                _ => Reply::Error("ERR invalid expire time in 'setex' command".into()),
            },
            "MSET" => {
                if args.len() < 3 || args.len().is_multiple_of(2) {
                    return wrong("mset");
                }
                for p in args[1..].chunks(2) {
                    self.data.insert(String::from_utf8_lossy(&p[0]).into_owned(), Entry { val: RVal::Str(p[1].clone()), expire_ms: None });
                }
                Reply::Status("OK".into())
            }
            "GET" => match get_str(self, &s(1)) {
                Ok(Some(v)) => Reply::Bulk(v),
                Ok(None) => Reply::Nil,
                Err(e) => e,
            },
            "MGET" => Reply::Array(
                (1..args.len())
                    .map(|i| match self.data.get(&s(i)).map(|e| &e.val) {
                        Some(RVal::Str(v)) => Reply::Bulk(v.clone()),
                        _ => Reply::Nil,
                    })
                    .collect(),
            ),
            "DEL" | "UNLINK" => Reply::Int((1..args.len()).filter(|&i| self.data.remove(&s(i)).is_some()).count() as i64),
            "EXISTS" => Reply::Int((1..args.len()).filter(|&i| self.data.contains_key(&s(i))).count() as i64),
            "INCR" | "DECR" | "INCRBY" | "DECRBY" => {
                let k = s(1);
                let by: i64 = match cmd.as_str() {
                    "INCR" => 1,
                    "DECR" => -1,
                    _ => match s(2).parse::<i64>() {
                        Ok(v) if cmd == "INCRBY" => v,
                        Ok(v) => -v,
                        Err(_) => return Reply::Error("ERR value is not an integer or out of range".into()),
                    },
                };
                let cur = match get_str(self, &k) {
                    Ok(Some(v)) => match String::from_utf8_lossy(&v).parse::<i64>() {
                        Ok(n) => n,
                        Err(_) => return Reply::Error("ERR value is not an integer or out of range".into()),
                    },
                    Ok(None) => 0,
                    Err(e) => return e,
                };
                let Some(n) = cur.checked_add(by) else { return Reply::Error("ERR increment or decrement would overflow".into()) };
                let exp = self.data.get(&k).and_then(|e| e.expire_ms);
                self.data.insert(k, Entry { val: RVal::Str(n.to_string().into_bytes()), expire_ms: exp });
                Reply::Int(n)
            }
            "APPEND" => {
                let k = s(1);
                let mut cur = match get_str(self, &k) {
                    Ok(v) => v.unwrap_or_default(),
                    Err(e) => return e,
                };
                cur.extend_from_slice(&a(2));
                let n = cur.len();
                self.data.insert(k, Entry { val: RVal::Str(cur), expire_ms: None });
                Reply::Int(n as i64)
            }
            "STRLEN" => match get_str(self, &s(1)) {
                Ok(v) => Reply::Int(v.map(|v| v.len()).unwrap_or(0) as i64),
                Err(e) => e,
            },
            "EXPIRE" => match (self.data.get_mut(&s(1)), s(2).parse::<u64>()) {
                (Some(e), Ok(secs)) => {
                    e.expire_ms = Some(now + secs * 1000);
                    Reply::Int(1)
                }
                (_, Err(_)) => Reply::Error("ERR value is not an integer or out of range".into()),
                (None, _) => Reply::Int(0),
            },
            "TTL" | "PTTL" => match self.data.get(&s(1)) {
                None => Reply::Int(-2),
                Some(Entry { expire_ms: None, .. }) => Reply::Int(-1),
                Some(Entry { expire_ms: Some(t), .. }) => {
                    let ms = t.saturating_sub(now);
                    Reply::Int(if cmd == "TTL" { ms.div_ceil(1000) as i64 } else { ms as i64 })
                }
            },
            "TYPE" => Reply::Status(
                match self.data.get(&s(1)).map(|e| &e.val) {
                    None => "none",
                    Some(RVal::Str(_)) => "string",
                    Some(RVal::List(_)) => "list",
                    Some(RVal::Hash(_)) => "hash",
                }
                .into(),
            ),
            "KEYS" => {
                let pat = a(1);
                Reply::Array(self.data.keys().filter(|k| glob_match(&pat, k.as_bytes())).map(|k| Reply::Bulk(k.clone().into_bytes())).collect())
            }
            "DBSIZE" => Reply::Int(self.data.len() as i64),
            "FLUSHALL" | "FLUSHDB" => {
                self.data.clear();
                Reply::Status("OK".into())
            }
            "LPUSH" | "RPUSH" => {
                let k = s(1);
                let e = self.data.entry(k).or_insert(Entry { val: RVal::List(VecDeque::new()), expire_ms: None });
                let RVal::List(l) = &mut e.val else { return Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into()) };
                for x in &args[2..] {
                    if cmd == "LPUSH" {
                        l.push_front(x.clone());
                    } else {
                        l.push_back(x.clone());
                    }
                }
                Reply::Int(l.len() as i64)
            }
            "LPOP" | "RPOP" => match self.data.get_mut(&s(1)).map(|e| &mut e.val) {
                Some(RVal::List(l)) => {
                    let v = if cmd == "LPOP" { l.pop_front() } else { l.pop_back() };
                    v.map(Reply::Bulk).unwrap_or(Reply::Nil)
                }
                None => Reply::Nil,
                Some(_) => Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into()),
            },
            "LLEN" => match self.data.get(&s(1)).map(|e| &e.val) {
                Some(RVal::List(l)) => Reply::Int(l.len() as i64),
                None => Reply::Int(0),
                Some(_) => Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into()),
            },
            "LRANGE" => match self.data.get(&s(1)).map(|e| &e.val) {
                Some(RVal::List(l)) => {
                    let n = l.len() as i64;
                    let idx = |v: i64| if v < 0 { (n + v).max(0) } else { v.min(n) };
                    let (Ok(st), Ok(en)) = (s(2).parse::<i64>(), s(3).parse::<i64>()) else {
                        return Reply::Error("ERR value is not an integer or out of range".into());
                    };
                    let (st, en) = (idx(st), if en < 0 { n + en } else { en.min(n - 1) });
                    Reply::Array(if st > en {
                        Vec::new()
                    } else {
                        l.iter().skip(st as usize).take((en - st + 1) as usize).map(|x| Reply::Bulk(x.clone())).collect()
                    })
                }
                None => Reply::Array(Vec::new()),
                Some(_) => Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into()),
            },
            "HSET" => {
                if !args.len().is_multiple_of(2) {
                    return wrong("hset");
                }
                let e = self.data.entry(s(1)).or_insert(Entry { val: RVal::Hash(BTreeMap::new()), expire_ms: None });
                let RVal::Hash(h) = &mut e.val else { return Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into()) };
                let mut added = 0;
                for p in args[2..].chunks(2) {
                    if h.insert(p[0].clone(), p[1].clone()).is_none() {
                        added += 1;
                    }
                }
                Reply::Int(added)
            }
            "HGET" => match self.data.get(&s(1)).map(|e| &e.val) {
                Some(RVal::Hash(h)) => h.get(&a(2)).cloned().map(Reply::Bulk).unwrap_or(Reply::Nil),
                _ => Reply::Nil,
            },
            "HGETALL" => match self.data.get(&s(1)).map(|e| &e.val) {
                Some(RVal::Hash(h)) => Reply::Array(h.iter().flat_map(|(k, v)| [Reply::Bulk(k.clone()), Reply::Bulk(v.clone())]).collect()),
                _ => Reply::Array(Vec::new()),
            },
            "INFO" => Reply::Bulk(self.info(os, &s(1)).into_bytes()),
            "CONFIG" => match s(1).to_ascii_uppercase().as_str() {
                "GET" => {
                    let pat = s(2).to_ascii_lowercase();
                    let all: Vec<(&str, String)> = vec![
                        ("bind", if self.cfg.bind.is_empty() { "* -::*".into() } else { self.cfg.bind.clone() }),
                        ("port", self.cfg.port.to_string()),
                        ("maxmemory", self.cfg.maxmemory.to_string()),
                        ("maxmemory-policy", self.cfg.policy.clone()),
                        ("requirepass", self.cfg.requirepass.clone()),
                        ("dir", self.cfg.dir.clone()),
                        ("dbfilename", self.cfg.dbfilename.clone()),
                        ("appendonly", if self.cfg.appendonly { "yes".into() } else { "no".into() }),
                        ("save", self.cfg.save.clone()),
                        ("protected-mode", if self.cfg.protected_mode { "yes".into() } else { "no".into() }),
                        ("loglevel", self.cfg.loglevel.clone()),
                        ("databases", "16".into()),
                        ("maxclients", "10000".into()),
                        ("timeout", "0".into()),
                    ];
                    Reply::Array(
                        all.into_iter()
                            .filter(|(k, _)| kubesim_os::pattern::matches(&pat, k))
                            .flat_map(|(k, v)| [Reply::Bulk(k.as_bytes().to_vec()), Reply::Bulk(v.into_bytes())])
                            .collect(),
                    )
                }
                "SET" => {
                    let vals: Vec<String> = (3..args.len()).map(s).collect();
                    match self.apply(&s(2), &vals) {
                        Ok(()) => Reply::Status("OK".into()),
                        Err(_) => Reply::Error(format!("ERR Unknown option or number of arguments for CONFIG SET - '{}'", s(2))),
                    }
                }
                "RESETSTAT" | "REWRITE" => Reply::Status("OK".into()),
                _ => Reply::Error(format!("ERR unknown subcommand '{}'. Try CONFIG HELP.", s(1))),
            },
            "SAVE" | "BGSAVE" => {
                let r = self.role();
                if cmd == "BGSAVE" {
                    let child = os.alloc_pid();
                    self.log(os, r, '*', &format!("Background saving started by pid {child}"));
                }
                if self.save(os) {
                    self.log(os, r, '*', "DB saved on disk");
                    if cmd == "BGSAVE" {
                        self.log(os, r, '*', "Background saving terminated with success");
                        Reply::Status("Background saving started".into())
                    } else {
                        Reply::Status("OK".into())
                    }
                } else {
                    Reply::Error("ERR".into())
                }
            }
            "LASTSAVE" => Reply::Int(if self.last_save == 0 { self.started_unix } else { self.last_save } as i64),
            "TIME" => Reply::Array(vec![Reply::Bulk((now / 1000).to_string().into_bytes()), Reply::Bulk(((now % 1000) * 1000).to_string().into_bytes())]),
            "COMMAND" => Reply::Array(Vec::new()),
            "CLIENT" => match s(1).to_ascii_uppercase().as_str() {
                "SETNAME" | "SETINFO" => Reply::Status("OK".into()),
                "GETNAME" => Reply::Nil,
                "ID" => Reply::Int(self.connections as i64),
                _ => Reply::Status("OK".into()),
            },
            "SYNC" | "PSYNC" => {
                if !self.replicas.contains(&src.to_string()) {
                    let r = self.role();
                    self.log(os, r, '*', &format!("Replica {src} asks for synchronization"));
                    self.log(os, r, '*', &format!("Full resync requested by replica {src}"));
                    self.log(os, r, '*', "Starting BGSAVE for SYNC with target: disk");
                    let child = os.alloc_pid();
                    self.log(os, r, '*', &format!("Background saving started by pid {child}"));
                    self.log(os, r, '*', "Background saving terminated with success");
                    self.log(os, r, '*', &format!("Synchronization with replica {src} succeeded"));
                    self.replicas.push(src.to_string());
                }
                return Reply::Status(format!(
                    "FULLRESYNC 6f1c1d7c0d2f5a3b8e9a0b1c2d3e4f5a6b7c8d9e 0\r\n${}\r\n{}",
                    self.dump().len(),
                    String::from_utf8_lossy(&self.dump())
                ));
            }
            "SHUTDOWN" => Reply::Status("SHUTDOWN".into()),
            "QUIT" => Reply::Status("OK".into()),
            "HELLO" => {
                if vnum(&self.version) >= (6, 0, 0) {
                    Reply::Error("NOPROTO unsupported protocol version".into())
                } else {
                    Reply::Error("ERR unknown command 'HELLO'".into())
                }
            }
            _ => {
                let shown: Vec<String> = args[1..].iter().map(|x| format!("'{}'", String::from_utf8_lossy(x))).collect();
                Reply::Error(format!("ERR unknown command '{}', with args beginning with: {}", String::from_utf8_lossy(&args[0]), shown.join(" ")))
            }
        };
        r
    }
}

fn human(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2}G", b as f64 / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.2}M", b as f64 / 1048576.0)
    } else if b >= 1 << 10 {
        format!("{:.2}K", b as f64 / 1024.0)
    } else {
        format!("{b}B")
    }
}

impl Program for RedisServer {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match (&self.phase, wake) {
            (Phase::Start, _) => self.start(os),
            (Phase::Done, _) => Step::Exit(0),
            (Phase::Serving, Wake::Signal(s)) => match s {
                Signal::Term | Signal::Int => self.shutdown(os, Some(s)),
                Signal::Kill => Step::Exit(137),
                _ => self.tick(os, Wake::Timer),
            },
            (Phase::Serving, w) => {
                if self.error.take().is_some() {
                    return self.shutdown(os, None);
                }
                self.tick(os, w)
            }
        }
    }

    fn memory_bytes(&self) -> u64 {
        3_300_000 + self.used_memory().saturating_sub(900_000) * 2
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        if self.phase == Phase::Serving {
            vec![(self.cfg.port, false)]
        } else {
            Vec::new()
        }
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        if self.phase != Phase::Serving || conn.udp || conn.port != self.cfg.port {
            return None;
        }
        self.connections += 1;
        let data = &conn.data[..conn.data.len().min(common::MAX_REQUEST)];
        let src = format!("{}:{}", conn.src, 6379);
        let mut out = Vec::new();
        let mut i = 0;
        let mut authed = false;
        let mut n = 0;
        while i < data.len() && n < 10_000 {
            let Some((args, next)) = parse_command(data, i) else {
                Reply::Error("ERR Protocol error: invalid multibulk length".into()).encode(&mut out);
                break;
            };
            i = next;
            n += 1;
            if args.is_empty() {
                continue;
            }
            let r = self.exec(os, &args, &src, &mut authed);
            self.cpu.charge_us(12);
            match &r {
                Reply::Status(s) if s == "SHUTDOWN" => {
                    self.error = Some("shutdown".into());
                    break;
                }
                Reply::Status(s) if s.starts_with("FULLRESYNC") => {
                    out.extend_from_slice(format!("+{s}").as_bytes());
                    continue;
                }
                _ => {}
            }
            r.encode(&mut out);
            if args.first().is_some_and(|c| c.eq_ignore_ascii_case(b"QUIT")) {
                break;
            }
        }
        Some(Outgoing::Reply(out))
    }
}

/// The redis image's `docker-entrypoint.sh`: prepends `redis-server` to `-flag`/`*.conf`
/// arguments and re-execs as the redis user (`gosu`).
pub fn entrypoint(spawn: &Spawn) -> Box<dyn Program> {
    let mut argv: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
    if argv.first().is_some_and(|a| a.starts_with('-') || a.ends_with(".conf")) {
        argv.insert(0, "redis-server".into());
    }
    // `exec gosu redis "$0" "$@"` when root starts the server: it runs as user redis.
    let as_redis = argv.first().is_some_and(|a| a == "redis-server");
    let script = spawn.argv.first().cloned().unwrap_or_default();
    let exec = common::ExecAs::new(spawn, argv, String::new(), String::new(), &script);
    Box::new(if as_redis { exec.with_user("redis") } else { exec })
}

// ---------------------------------------------------------------------------------------------

/// `redis-cli`.
#[derive(Clone, Debug)]
pub struct RedisCli {
    spawn: Spawn,
    host: String,
    port: u16,
    commands: Vec<Vec<String>>,
    raw: bool,
    client: Option<TcpClient>,
    pass: Option<String>,
    done: bool,
    repeat: u32,
}

impl RedisCli {
    /// From a spawn (`redis-cli -h redis-leader SET k v`).
    pub fn new(spawn: &Spawn) -> RedisCli {
        let mut c = RedisCli {
            spawn: spawn.clone(),
            host: "127.0.0.1".into(),
            port: 6379,
            commands: Vec::new(),
            raw: false,
            client: None,
            pass: None,
            done: false,
            repeat: 1,
        };
        let tty = spawn.env.get("TERM").is_some_and(|t| !t.is_empty() && t != "dumb") && spawn.stdin.is_empty();
        c.raw = !tty;
        let args: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
        let mut i = 0;
        let mut cmd = Vec::new();
        while i < args.len() {
            match args[i].as_str() {
                "-h" => {
                    i += 1;
                    c.host = args.get(i).cloned().unwrap_or_default();
                }
                "-p" => {
                    i += 1;
                    c.port = args.get(i).and_then(|p| p.parse().ok()).unwrap_or(6379);
                }
                "-a" | "--pass" => {
                    i += 1;
                    c.pass = args.get(i).cloned();
                }
                "-n" => i += 1,
                "-r" => {
                    i += 1;
                    c.repeat = args.get(i).and_then(|p| p.parse().ok()).unwrap_or(1).min(1000);
                }
                "--raw" => c.raw = true,
                "--no-raw" => c.raw = false,
                "-c" | "--no-auth-warning" => {}
                "-u" => {
                    i += 1;
                    if let Some(u) = args.get(i).and_then(|u| kubesim_os::net::Url::parse(&u.replace("redis://", "http://")).ok()) {
                        c.host = u.host;
                        c.port = if u.explicit_port { u.port } else { 6379 };
                    }
                }
                a => {
                    cmd = args[i..].to_vec();
                    let _ = a;
                    break;
                }
            }
            i += 1;
        }
        if !cmd.is_empty() {
            for _ in 0..c.repeat {
                c.commands.push(cmd.clone());
            }
        } else {
            for l in String::from_utf8_lossy(&spawn.stdin).lines() {
                let w = split_words(l);
                if !w.is_empty() {
                    c.commands.push(w);
                }
            }
        }
        c
    }

    fn format(&self, r: &Reply, indent: usize) -> String {
        if self.raw {
            return match r {
                Reply::Status(s) => format!("{s}\n"),
                Reply::Error(s) => format!("{s}\n"),
                Reply::Int(i) => format!("{i}\n"),
                Reply::Bulk(b) => format!("{}\n", String::from_utf8_lossy(b)),
                Reply::Nil => "\n".into(),
                Reply::Array(v) => v.iter().map(|x| self.format(x, 0)).collect(),
            };
        }
        match r {
            Reply::Status(s) => format!("{s}\n"),
            Reply::Error(s) => format!("(error) {s}\n"),
            Reply::Int(i) => format!("(integer) {i}\n"),
            Reply::Bulk(b) => format!("{}\n", quote(b)),
            Reply::Nil => "(nil)\n".into(),
            Reply::Array(v) if v.is_empty() => "(empty array)\n".into(),
            Reply::Array(v) => {
                let w = v.len().to_string().len();
                let mut s = String::new();
                for (i, x) in v.iter().enumerate() {
                    let prefix = format!("{:>w$}) ", i + 1);
                    let body = self.format(x, indent + prefix.len());
                    if i > 0 {
                        s.push_str(&" ".repeat(indent));
                    }
                    s.push_str(&prefix);
                    s.push_str(&body);
                }
                s
            }
        }
    }
}

fn quote(b: &[u8]) -> String {
    let mut s = String::from("\"");
    for &c in b {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('"');
    s
}

impl Program for RedisCli {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if self.done {
            return Step::Exit(0);
        }
        if self.client.is_none() {
            if self.spawn.argv.iter().any(|a| a == "-v" || a == "--version") {
                self.done = true;
                let v = self.spawn.env.get("REDIS_VERSION").cloned().unwrap_or_else(|| DEFAULT_VERSION.into());
                common::out(os, &format!("redis-cli {v}\n"));
                return Step::Exit(0);
            }
            if self.commands.is_empty() {
                self.done = true;
                return Step::Exit(0);
            }
            let mut send = Vec::new();
            if let Some(p) = &self.pass {
                common::err(os, "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe.\n");
                Reply::Array(vec![Reply::Bulk(b"AUTH".to_vec()), Reply::Bulk(p.clone().into_bytes())]).encode(&mut send);
            }
            for c in &self.commands {
                Reply::Array(c.iter().map(|w| Reply::Bulk(w.clone().into_bytes())).collect()).encode(&mut send);
            }
            let mut c = TcpClient::new(&self.host, self.port, send, 10_000);
            let s = c.start(os);
            self.client = Some(c);
            return self.handle(os, s);
        }
        let s = match self.client.as_mut() {
            Some(c) => c.wake(&wake),
            None => return Step::Exit(1),
        };
        self.handle(os, s)
    }

    fn memory_bytes(&self) -> u64 {
        1_800_000
    }
}

impl RedisCli {
    fn handle(&mut self, os: &mut dyn Os, s: TcpStep) -> Step {
        match s {
            TcpStep::Call(step) => step,
            TcpStep::NoHost(m) => {
                self.done = true;
                common::err(os, &format!("Could not connect to Redis at {}:{}: {m}\n", self.host, self.port));
                Step::Exit(1)
            }
            TcpStep::Failed(e) => {
                self.done = true;
                common::err(os, &format!("Could not connect to Redis at {}:{}: {}\n", self.host, self.port, e.strerror()));
                Step::Exit(1)
            }
            TcpStep::Reply(b) => {
                self.done = true;
                let mut i = 0;
                let mut first = true;
                let mut out = String::new();
                while let Some((r, next)) = parse_reply(&b, i, 0) {
                    i = next;
                    if first && self.pass.is_some() {
                        first = false;
                        if let Reply::Error(e) = &r {
                            out.push_str(&format!("AUTH failed: {e}\n"));
                        }
                        continue;
                    }
                    first = false;
                    out.push_str(&self.format(&r, 0));
                }
                common::out(os, &out);
                Step::Exit(0)
            }
        }
    }
}
