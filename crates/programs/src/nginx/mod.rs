//! nginx: the master process (configuration from the filesystem, static files, access and
//! error logs, signals), its command line (`-t`, `-v`, `-s`), and the official image's
//! `/docker-entrypoint.sh`.

pub mod conf;

use crate::common::{self, clf_time, http_date, slash_time, CpuQueue};
use conf::{Config, Level, Location, Modifier, Server};
use kubesim_os::fs::{Errno, WriteMode};
use kubesim_os::net::http::Request;
use kubesim_os::program::{Incoming, Os, Outgoing, Program, Signal, Spawn, Step, Wake};
use std::sync::Arc;

/// Version when the environment has no `NGINX_VERSION` (nginx:latest at the catalogue
/// snapshot).
pub const DEFAULT_VERSION: &str = "1.29.1";

/// `1.25.3` from `NGINX_VERSION` (`1.14.2-1~stretch` → `1.14.2`).
pub fn version_of(spawn: &Spawn) -> String {
    spawn
        .env
        .get("NGINX_VERSION")
        .map(|v| v.split(['-', '~']).next().unwrap_or(v).to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_VERSION.into())
}

fn built_by(version: &str, alpine: bool) -> &'static str {
    let v = vnum(version);
    if alpine {
        return match v {
            v if v >= (1, 27, 0) => "built by gcc 14.2.0 (Alpine 14.2.0) ",
            v if v >= (1, 25, 0) => "built by gcc 12.2.1 20220924 (Alpine 12.2.1_git20220924-r10) ",
            v if v >= (1, 21, 0) => "built by gcc 10.3.1 20211027 (Alpine 10.3.1_git20211027) ",
            _ => "built by gcc 9.3.0 (Alpine 9.3.0) ",
        };
    }
    match v {
        v if v >= (1, 29, 0) => "built by gcc 14.2.0 (Debian 14.2.0-19) ",
        v if v >= (1, 24, 0) => "built by gcc 12.2.0 (Debian 12.2.0-14) ",
        v if v >= (1, 20, 0) => "built by gcc 10.2.1 20210110 (Debian 10.2.1-6) ",
        v if v >= (1, 16, 0) => "built by gcc 8.3.0 (Debian 8.3.0-6) ",
        _ => "built by gcc 6.3.0 20170516 (Debian 6.3.0-18+deb9u1) ",
    }
}

pub use kubesim_os::net::http::nginx::{error_page, reason, vnum};

/// A log destination.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Sink {
    Stdout,
    Stderr,
    File(String),
    Off,
}

fn sink_for(os: &dyn Os, path: &str, stream: Sink) -> Sink {
    match path {
        "off" => return Sink::Off,
        "stderr" | "/dev/stderr" | "/proc/self/fd/2" => return Sink::Stderr,
        "/dev/stdout" | "/proc/self/fd/1" => return Sink::Stdout,
        "/dev/null" => return Sink::Off,
        _ => {}
    }
    let fs = os.fs_ref();
    if let Ok(t) = fs.readlink(path) {
        return match t.as_str() {
            "/dev/stdout" | "/proc/self/fd/1" => Sink::Stdout,
            "/dev/stderr" | "/proc/self/fd/2" => Sink::Stderr,
            "/dev/null" => Sink::Off,
            t => Sink::File(t.to_string()),
        };
    }
    // The official images link /var/log/nginx/{access,error}.log to the container's
    // stdout/stderr; the catalogue does not carry the links, so an absent file there is the link.
    if path.starts_with("/var/log/nginx/") && fs.stat(path).is_err() {
        return stream;
    }
    Sink::File(path.to_string())
}

fn write_sink(os: &mut dyn Os, sink: &Sink, line: &str) {
    match sink {
        Sink::Stdout => common::out(os, line),
        Sink::Stderr => common::err(os, line),
        Sink::File(p) => {
            let _ = os.fs().write(p, line.as_bytes(), WriteMode::Append);
        }
        Sink::Off => {}
    }
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    Run,
    Test { dump: bool },
    Version { verbose: bool },
    Signal(String),
    Help,
    Bad(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Start,
    Serving,
    Done,
}

/// The nginx program (`nginx`, `nginx-debug`).
#[derive(Clone, Debug)]
pub struct Nginx {
    version: String,
    mode: Mode,
    quiet: bool,
    prefix: String,
    conf_path: String,
    globals: String,
    state: State,
    cfg: Option<Arc<Config>>,
    pid: u32,
    workers: Vec<u32>,
    /// The command line it was started with (the master's title repeats it).
    argv: Vec<String>,
    conns: u64,
    cpu: CpuQueue,
    access: Vec<(Sink, String)>,
    error: (Sink, Level),
    alpine: bool,
}

impl Nginx {
    /// From a spawn (`nginx -g 'daemon off;'`).
    pub fn new(spawn: &Spawn) -> Nginx {
        let mut mode = Mode::Run;
        let mut prefix = "/etc/nginx/".to_string();
        let mut conf_path = String::new();
        let mut globals = String::new();
        let mut quiet = false;
        let args = &spawn.argv[1.min(spawn.argv.len())..];
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            let mut need = |i: &mut usize, flag: &str| -> Option<String> {
                *i += 1;
                match args.get(*i) {
                    Some(v) => Some(v.clone()),
                    None => {
                        mode = Mode::Bad(format!(
                            "nginx: option \"-{flag}\" requires {}\n",
                            if flag == "s" {
                                "signal name"
                            } else if flag == "g" {
                                "directives"
                            } else {
                                "file name"
                            }
                        ));
                        None
                    }
                }
            };
            match a {
                "-v" => mode = Mode::Version { verbose: false },
                "-V" => mode = Mode::Version { verbose: true },
                "-t" => mode = Mode::Test { dump: false },
                "-T" => mode = Mode::Test { dump: true },
                "-q" => quiet = true,
                "-h" | "-?" => mode = Mode::Help,
                "-s" => {
                    if let Some(s) = need(&mut i, "s") {
                        mode = if matches!(s.as_str(), "stop" | "quit" | "reopen" | "reload") {
                            Mode::Signal(s)
                        } else {
                            Mode::Bad(format!("nginx: invalid option: \"-s {s}\"\n"))
                        };
                    }
                }
                "-g" => {
                    if let Some(g) = need(&mut i, "g") {
                        globals.push_str(&g);
                        globals.push('\n');
                    }
                }
                "-c" => {
                    if let Some(c) = need(&mut i, "c") {
                        conf_path = c;
                    }
                }
                "-p" => {
                    if let Some(p) = need(&mut i, "p") {
                        prefix = if p.ends_with('/') { p } else { format!("{p}/") };
                    }
                }
                "-e" => {
                    let _ = need(&mut i, "e");
                }
                _ => {
                    if let Some(s) = a.strip_prefix("-s").filter(|s| !s.is_empty()) {
                        mode = Mode::Signal(s.to_string());
                    } else if let Some(g) = a.strip_prefix("-g").filter(|s| !s.is_empty()) {
                        globals.push_str(g);
                        globals.push('\n');
                    } else if let Some(c) = a.strip_prefix("-c").filter(|s| !s.is_empty()) {
                        conf_path = c.to_string();
                    } else {
                        mode = Mode::Bad(format!("nginx: invalid option: \"{}\"\n", a.trim_start_matches('-')));
                    }
                }
            }
            if matches!(mode, Mode::Bad(_)) {
                break;
            }
            i += 1;
        }
        if conf_path.is_empty() {
            conf_path = format!("{prefix}nginx.conf");
        } else if !conf_path.starts_with('/') {
            conf_path = format!("{prefix}{conf_path}");
        }
        Nginx {
            version: version_of(spawn),
            mode,
            quiet,
            prefix,
            conf_path,
            globals,
            state: State::Start,
            cfg: None,
            pid: 1,
            workers: Vec::new(),
            argv: spawn.argv.clone(),
            conns: 0,
            cpu: CpuQueue::default(),
            access: Vec::new(),
            error: (Sink::Stderr, Level::Error),
            alpine: false,
        }
    }

    fn load(&self, os: &dyn Os) -> Result<Arc<Config>, String> {
        thread_local! {
            static LOADS: std::cell::RefCell<conf::Loads> = std::cell::RefCell::new(conf::Loads::default());
        }
        let key = format!("{}\0{}\0{}", self.conf_path, self.prefix, self.globals);
        LOADS.with(|loads| loads.borrow_mut().get(os.fs_ref(), &key, |fs| self.load_from(fs)))
    }

    /// Reads, expands and builds the configuration (what [`Nginx::load`] remembers).
    fn load_from(&self, fs: &conf::Reader) -> Result<Arc<Config>, String> {
        let extra = if self.globals.is_empty() {
            Vec::new()
        } else {
            conf::parse_text(&self.globals, "command line").map_err(|e| e.replace(" in command line:1", " in command line"))?
        };
        let ds = if fs.is_dir(&self.conf_path).is_err() && self.conf_path == "/etc/nginx/nginx.conf" {
            // Images whose catalogue entry carries no nginx.conf (nginx-slim): the packaged default.
            let mut ds = conf::parse_text(DEFAULT_CONF, &self.conf_path)?;
            ds.extend(extra);
            conf::load_directives(fs, ds, &self.prefix)?
        } else {
            conf::load(fs, &self.conf_path, &self.prefix, &extra)?
        };
        conf::build_shared(ds)
    }

    fn elog(&self, os: &mut dyn Os, level: Level, pid: u32, msg: &str) {
        if level < self.error.1 {
            return;
        }
        let ut = os.unix_time();
        let line = format!("{} [{}] {pid}#{pid}: {msg}\n", slash_time(ut), level.name());
        write_sink(os, &self.error.0, &line);
    }

    fn worker(&self) -> u32 {
        self.workers.first().copied().unwrap_or(self.pid)
    }

    fn emerg_exit(&self, os: &mut dyn Os, msg: &str) -> Step {
        let pid = os.pid();
        let ut = os.unix_time();
        common::err(os, &format!("{} [emerg] {pid}#{pid}: {msg}\n", slash_time(ut)));
        common::err(os, &format!("nginx: [emerg] {msg}\n"));
        Step::Exit(1)
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        self.alpine = os.fs_ref().stat("/etc/alpine-release").is_ok();
        match self.mode.clone() {
            Mode::Bad(m) => {
                common::err(os, &m);
                return Step::Exit(1);
            }
            Mode::Help => {
                common::err(os, &self.help());
                return Step::Exit(0);
            }
            Mode::Version { verbose } => {
                let mut s = format!("nginx version: nginx/{}\n", self.version);
                if verbose {
                    s.push_str(built_by(&self.version, self.alpine).trim_end());
                    s.push('\n');
                    s.push_str("built with OpenSSL 3.0.11 19 Sep 2023\nTLS SNI support enabled\n");
                    s.push_str(&format!("configure arguments: --prefix=/etc/nginx --sbin-path=/usr/sbin/nginx --modules-path=/usr/lib/nginx/modules --conf-path=/etc/nginx/nginx.conf --error-log-path=/var/log/nginx/error.log --http-log-path=/var/log/nginx/access.log --pid-path={} --lock-path=/var/run/nginx.lock --with-http_ssl_module --with-http_v2_module --with-stream\n", if vnum(&self.version) >= (1, 20, 0) { "/run/nginx.pid" } else { "/var/run/nginx.pid" }));
                }
                common::err(os, &s);
                return Step::Exit(0);
            }
            _ => {}
        }
        let cfg = match self.load(os) {
            Ok(c) => c,
            Err(e) => {
                if let Mode::Test { .. } = self.mode {
                    common::err(os, &format!("nginx: [emerg] {e}\nnginx: configuration file {} test failed\n", self.conf_path));
                    return Step::Exit(1);
                }
                return self.emerg_exit(os, &e);
            }
        };
        self.error = (sink_for(os, &cfg.error_log.0, Sink::Stderr), cfg.error_log.1);
        match self.mode.clone() {
            Mode::Test { dump } => {
                if !self.quiet {
                    common::err(
                        os,
                        &format!(
                            "nginx: the configuration file {} syntax is ok\nnginx: configuration file {} test is successful\n",
                            self.conf_path, self.conf_path
                        ),
                    );
                }
                if dump {
                    let text = common::read_file(os, &self.conf_path, 1 << 20).unwrap_or_default();
                    common::out(os, &format!("# configuration file {}:\n{}\n", self.conf_path, String::from_utf8_lossy(&text)));
                }
                return Step::Exit(0);
            }
            Mode::Signal(s) => return self.send_signal(os, &cfg, &s),
            _ => {}
        }
        self.pid = os.pid();
        // Sockets: a port another server of this config already bound is fine; two listens on
        // one port in one server were rejected while building.
        let pid_text = format!("{}\n", self.pid);
        if let Err(e) = common::write_file(os, &cfg.pid, pid_text.as_bytes()) {
            if e != Errno::EROFS {
                return self.emerg_exit(os, &format!("open() \"{}\" failed ({}: {})", cfg.pid, e.code(), e.strerror()));
            }
        }
        self.access = Vec::new();
        let pid = self.pid;
        self.elog(os, Level::Notice, pid, "using the \"epoll\" event method");
        self.elog(os, Level::Notice, pid, &format!("nginx/{}", self.version));
        let bb = built_by(&self.version, self.alpine);
        self.elog(os, Level::Notice, pid, bb);
        let rel = os.uname().release;
        self.elog(os, Level::Notice, pid, &format!("OS: Linux {rel}"));
        self.elog(os, Level::Notice, pid, "getrlimit(RLIMIT_NOFILE): 1048576:1048576");
        self.cfg = Some(cfg);
        if self.cfg.as_ref().is_some_and(|c| !c.daemon) {
            // ngx_setproctitle: the master's title names its role and the original command line.
            os.set_cmdline(&[format!("nginx: master process {}", self.argv.join(" "))]);
        }
        self.spawn_workers(os);
        if self.cfg.as_ref().is_some_and(|c| c.daemon) {
            // The master forks into the background and the foreground process exits; in a
            // container that ends the container.
            self.state = State::Done;
            return Step::Exit(0);
        }
        self.state = State::Serving;
        common::idle(&mut self.cpu, os.now_ms(), None)
    }

    fn spawn_workers(&mut self, os: &mut dyn Os) {
        let n = match self.cfg.as_ref().map(|c| c.workers).unwrap_or(1) {
            0 => os.cpu_count().max(1),
            n => n.min(64),
        };
        let pid = self.pid;
        self.elog(os, Level::Notice, pid, "start worker processes");
        self.workers.clear();
        // The workers run as the `user` directive's user when the master is root.
        let user = self.cfg.as_ref().map(|c| c.user.clone()).unwrap_or_else(|| "nobody".into());
        let uid = if os.creds().uid == 0 { passwd_uid(os, &user).unwrap_or(65534) } else { os.creds().uid };
        os.reserve_workers(n as usize);
        for _ in 0..n {
            let w = os.spawn_worker(vec!["nginx: worker process".into()], uid).unwrap_or_else(|| os.alloc_pid());
            self.workers.push(w);
            self.elog(os, Level::Notice, pid, &format!("start worker process {w}"));
        }
    }

    fn workers_exit(&mut self, os: &mut dyn Os, graceful: bool) {
        let pid = self.pid;
        let ws = std::mem::take(&mut self.workers);
        for &w in &ws {
            if graceful {
                self.elog(os, Level::Notice, w, "gracefully shutting down");
            }
            self.elog(os, Level::Notice, w, "exiting");
            self.elog(os, Level::Notice, w, "exit");
        }
        for &w in &ws {
            let _ = os.kill(w, Some(if graceful { Signal::Quit } else { Signal::Term }));
            self.elog(os, Level::Notice, pid, &format!("signal 17 (SIGCHLD) received from {w}"));
            self.elog(os, Level::Notice, pid, &format!("worker process {w} exited with code 0"));
        }
    }

    fn send_signal(&self, os: &mut dyn Os, cfg: &Config, s: &str) -> Step {
        let me = os.pid();
        let ut = os.unix_time();
        let lvl = cfg.error_log.1;
        if lvl <= Level::Notice {
            let sink = sink_for(os, &cfg.error_log.0, Sink::Stderr);
            write_sink(os, &sink, &format!("{} [notice] {me}#{me}: signal process started\n", slash_time(ut)));
        }
        let text = match common::read_file(os, &cfg.pid, 4096) {
            Some(t) => t,
            None => {
                let e = os.fs_ref().stat(&cfg.pid).err().unwrap_or(Errno::ENOENT);
                common::err(os, &format!("{} [error] {me}#{me}: open() \"{}\" failed ({}: {})\n", slash_time(ut), cfg.pid, e.code(), e.strerror()));
                return Step::Exit(1);
            }
        };
        let Some(pid) = String::from_utf8_lossy(&text).trim().parse::<u32>().ok() else {
            common::err(
                os,
                &format!("{} [error] {me}#{me}: invalid PID number \"{}\" in \"{}\"\n", slash_time(ut), String::from_utf8_lossy(&text).trim(), cfg.pid),
            );
            return Step::Exit(1);
        };
        let sig = match s {
            "stop" => Signal::Term,
            "quit" => Signal::Quit,
            "reopen" => Signal::Usr1,
            _ => Signal::Hup,
        };
        if let Err(e) = os.kill(pid, Some(sig)) {
            common::err(os, &format!("{} [alert] {me}#{me}: kill({pid}, {}) failed ({}: {})\n", slash_time(ut), sig.number(), e.code(), e.strerror()));
            return Step::Exit(1);
        }
        Step::Exit(0)
    }

    fn help(&self) -> String {
        format!(
            "nginx version: nginx/{}\nUsage: nginx [-?hvVtTq] [-s signal] [-p prefix]\n             [-e filename] [-c filename] [-g directives]\n\nOptions:\n  -?,-h         : this help\n  -v            : show version and exit\n  -V            : show version and configure options then exit\n  -t            : test configuration and exit\n  -T            : test configuration, dump it and exit\n  -q            : suppress non-error messages during configuration testing\n  -s signal     : send signal to a master process: stop, quit, reopen, reload\n  -p prefix     : set prefix path (default: /etc/nginx/)\n  -e filename   : set error log file (default: /var/log/nginx/error.log)\n  -c filename   : set configuration file (default: /etc/nginx/nginx.conf)\n  -g directives : set global directives out of configuration file\n\n",
            self.version
        )
    }

    fn on_signal(&mut self, os: &mut dyn Os, sig: Signal) -> Step {
        let pid = self.pid;
        match sig {
            Signal::Kill => Step::Exit(137),
            Signal::Quit => {
                self.elog(os, Level::Notice, pid, "signal 3 (SIGQUIT) received, shutting down");
                self.workers_exit(os, true);
                self.elog(os, Level::Notice, pid, "exit");
                self.state = State::Done;
                Step::Exit(0)
            }
            Signal::Term | Signal::Int => {
                let m = if sig == Signal::Term { "signal 15 (SIGTERM) received, exiting" } else { "signal 2 (SIGINT) received, exiting" };
                self.elog(os, Level::Notice, pid, m);
                self.workers_exit(os, false);
                self.elog(os, Level::Notice, pid, "exit");
                self.state = State::Done;
                Step::Exit(0)
            }
            Signal::Hup => {
                self.elog(os, Level::Notice, pid, "signal 1 (SIGHUP) received, reconfiguring");
                self.elog(os, Level::Notice, pid, "reconfiguring");
                match self.load(os) {
                    Ok(c) => {
                        self.error = (sink_for(os, &c.error_log.0, Sink::Stderr), c.error_log.1);
                        let old = std::mem::take(&mut self.workers);
                        self.cfg = Some(c);
                        self.elog(os, Level::Notice, pid, "using the \"epoll\" event method");
                        self.spawn_workers(os);
                        let new = std::mem::replace(&mut self.workers, old);
                        self.workers_exit(os, true);
                        self.workers = new;
                        self.elog(os, Level::Notice, pid, "signal 29 (SIGIO) received");
                    }
                    Err(e) => self.elog(os, Level::Emerg, pid, &e),
                }
                common::idle(&mut self.cpu, os.now_ms(), None)
            }
            Signal::Usr1 => {
                self.elog(os, Level::Notice, pid, "signal 10 (SIGUSR1) received, reopening logs");
                self.elog(os, Level::Notice, pid, "reopening logs");
                common::idle(&mut self.cpu, os.now_ms(), None)
            }
            Signal::Usr2 => {
                self.elog(os, Level::Notice, pid, "signal 12 (SIGUSR2) received");
                common::idle(&mut self.cpu, os.now_ms(), None)
            }
        }
    }
}

/// The packaged `nginx.conf` used when the image has none (nginx-slim).
const DEFAULT_CONF: &str = "user  nginx;\nworker_processes  1;\n\nerror_log  /var/log/nginx/error.log warn;\npid        /var/run/nginx.pid;\n\nevents {\n    worker_connections  1024;\n}\n\nhttp {\n    include       /etc/nginx/mime.types;\n    default_type  application/octet-stream;\n    log_format  main  '$remote_addr - $remote_user [$time_local] \"$request\" '\n                      '$status $body_bytes_sent \"$http_referer\" '\n                      '\"$http_user_agent\" \"$http_x_forwarded_for\"';\n    access_log  /var/log/nginx/access.log  main;\n    sendfile        on;\n    keepalive_timeout  65;\n    include /etc/nginx/conf.d/*.conf;\n    server {\n        listen       80 default_server;\n        server_name  localhost;\n        location / {\n            root   /usr/share/nginx/html;\n            index  index.html index.htm;\n        }\n    }\n}\n";

impl Program for Nginx {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match (&self.state, wake) {
            (State::Start, _) => self.start(os),
            (State::Done, _) => Step::Exit(0),
            (State::Serving, Wake::Signal(s)) => self.on_signal(os, s),
            (State::Serving, _) => common::idle(&mut self.cpu, os.now_ms(), None),
        }
    }

    fn memory_bytes(&self) -> u64 {
        match self.state {
            State::Serving => 2_400_000 + 1_500_000 * self.workers.len() as u64,
            _ => 1_900_000,
        }
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        if self.state != State::Serving {
            return Vec::new();
        }
        let mut ports: Vec<(u16, bool)> = self.cfg.iter().flat_map(|c| c.servers.iter()).flat_map(|s| s.listens.iter()).map(|l| (l.port, false)).collect();
        ports.sort();
        ports.dedup();
        ports
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        if self.state != State::Serving || conn.udp {
            return None;
        }
        if !self.listening().contains(&(conn.port, false)) {
            return None;
        }
        if conn.data.is_empty() {
            return Some(Outgoing::Reply(Vec::new()));
        }
        self.conns += 1;
        let resp = self.handle(os, conn);
        self.cpu.charge_us(60 + resp.len() as u64 / 20_000);
        Some(Outgoing::Reply(resp))
    }
}

/// One response being built.
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Whether this is nginx's generated page for `status` (error_page may replace it).
    special: bool,
}

struct Ctx<'a> {
    req: &'a Request,
    conn: &'a Incoming,
    server: &'a Server,
    host: String,
    request_line: String,
    uri: String,
    args: String,
}

fn keepalive(req: &Request) -> bool {
    let c = req.header("connection").map(|c| c.to_ascii_lowercase());
    if req.version == "HTTP/1.0" {
        c.as_deref() == Some("keep-alive")
    } else {
        c.as_deref() != Some("close")
    }
}

/// Decodes `%XX`, merges slashes and resolves `.`/`..`; `None` when `..` climbs above `/`.
fn normalize_uri(path: &str) -> Option<String> {
    let decoded = common::url_decode(path, false);
    let mut parts: Vec<&str> = Vec::new();
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    let mut s = format!("/{}", parts.join("/"));
    if (decoded.ends_with('/') || decoded.ends_with("/.") || decoded.ends_with("/..")) && s != "/" {
        s.push('/');
    }
    Some(s)
}

impl Nginx {
    fn handle(&mut self, os: &mut dyn Os, conn: &Incoming) -> Vec<u8> {
        let now = os.unix_time();
        let data = &conn.data[..conn.data.len().min(common::MAX_REQUEST)];
        let first_line = String::from_utf8_lossy(data.split(|&b| b == b'\n').next().unwrap_or(&[])).trim_end_matches('\r').to_string();
        let tokens = self.cfg.as_ref().and_then(|c| c.servers.first()).and_then(|s| s.common.server_tokens).unwrap_or(true);
        let req = match Request::parse(data) {
            Ok(r) if !r.target.is_empty() && (r.target.starts_with('/') || r.target.starts_with("http")) => r,
            _ => {
                let body = error_page(400, &self.version, tokens);
                let resp = self.finish(now, None, 400, Vec::new(), body, true, tokens);
                self.access_log(os, conn, None, &first_line, 400, resp.1, "");
                return resp.0;
            }
        };
        let Some(cfg) = self.cfg.clone() else { return Vec::new() };
        let host_hdr = req.header("host").unwrap_or("").to_string();
        let host = host_hdr.split(':').next().unwrap_or("").to_ascii_lowercase();
        let server = select_server(&cfg, conn.port, &host);
        let Some(server) = server else { return Vec::new() };
        let (path, args) = match req.target.split_once('?') {
            Some((p, a)) => (p.to_string(), a.to_string()),
            None => (req.target.clone(), String::new()),
        };
        let path = if let Some(rest) = path.strip_prefix("http://").or_else(|| path.strip_prefix("https://")) {
            rest.find('/').map(|i| rest[i..].to_string()).unwrap_or_else(|| "/".into())
        } else {
            path
        };
        let tokens = server.common.server_tokens.unwrap_or(true);
        let Some(uri) = normalize_uri(&path) else {
            let body = error_page(400, &self.version, tokens);
            let resp = self.finish(now, Some(&req), 400, Vec::new(), body, true, tokens);
            self.access_log(os, conn, Some(&req), &first_line, 400, resp.1, &server.names.first().cloned().unwrap_or_default());
            return resp.0;
        };
        let ctx = Ctx {
            req: &req,
            conn,
            server,
            host: if host.is_empty() { conn.src.clone() } else { host_hdr.clone() },
            request_line: first_line.clone(),
            uri: uri.clone(),
            args,
        };
        let mut r = self.process(os, &cfg, &ctx, &uri, 0);
        // error_page: one internal redirect (recursive_error_pages off).
        if r.status >= 300 && r.special {
            let loc = find_location(server, &uri);
            let pages = loc.map(|l| l.common.error_pages.clone()).unwrap_or_else(|| server.common.error_pages.clone());
            if let Some((_, over, target)) = pages.unwrap_or_default().into_iter().find(|(codes, _, _)| codes.contains(&r.status)) {
                let orig = r.status;
                if target.starts_with("http://") || target.starts_with("https://") {
                    r = self.redirect(over.unwrap_or(302), &target, &cfg, server);
                } else {
                    let mut r2 = self.process(os, &cfg, &ctx, &target, 1);
                    if r2.status == 200 {
                        r2.status = over.unwrap_or(orig);
                        r2.headers.retain(|(k, _)| k != "Last-Modified" && k != "ETag" && k != "Accept-Ranges");
                    }
                    r = r2;
                }
            }
        }
        let loc = find_location(server, &uri);
        let common_cfg = loc.map(|l| &l.common).unwrap_or(&server.common);
        let mut headers = r.headers;
        for (k, v, always) in common_cfg.add_headers.clone().unwrap_or_default() {
            if always || matches!(r.status, 200 | 201 | 204 | 206 | 301 | 302 | 303 | 304 | 307 | 308) {
                headers.push((k, self.expand(&v, &ctx, r.status)));
            }
        }
        let resp = self.finish(now, Some(&req), r.status, headers, r.body, false, tokens);
        let name = server.names.first().cloned().unwrap_or_default();
        self.access_log(os, conn, Some(&req), &first_line, r.status, resp.1, &name);
        resp.0
    }

    /// Serialises: status line, Server, Date, then `headers` (Content-Type, Content-Length...),
    /// with Connection placed after Content-Length/Location/Last-Modified as nginx does.
    /// Returns (bytes, body bytes sent).
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        now: u64,
        req: Option<&Request>,
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        force_close: bool,
        tokens: bool,
    ) -> (Vec<u8>, usize) {
        let mut s = format!("HTTP/1.1 {status} {}\r\n", reason(status));
        s.push_str(&format!("Server: {}\r\n", if tokens { format!("nginx/{}", self.version) } else { "nginx".into() }));
        s.push_str(&format!("Date: {}\r\n", http_date(now)));
        let mut hs = headers;
        if !hs.iter().any(|(k, _)| k == "Content-Type") && !body.is_empty() {
            hs.insert(0, ("Content-Type".into(), "text/html".into()));
        }
        if !hs.iter().any(|(k, _)| k == "Content-Length") && status != 304 && status != 204 {
            let at = hs.iter().position(|(k, _)| k == "Content-Type").map(|i| i + 1).unwrap_or(0);
            hs.insert(at, ("Content-Length".into(), body.len().to_string()));
        }
        let close = force_close || req.is_none_or(|r| !keepalive(r));
        let conn_v = if close { "close" } else { "keep-alive" };
        // Connection goes after Content-Length, Last-Modified and Location.
        let mut at = 0;
        for (i, (k, _)) in hs.iter().enumerate() {
            if matches!(k.as_str(), "Content-Type" | "Content-Length" | "Last-Modified" | "Location") {
                at = i + 1;
            }
        }
        hs.insert(at, ("Connection".into(), conn_v.into()));
        for (k, v) in &hs {
            s.push_str(&format!("{k}: {v}\r\n"));
        }
        s.push_str("\r\n");
        let mut b = s.into_bytes();
        let head = req.is_some_and(|r| r.method == "HEAD");
        let sent = if head { 0 } else { body.len() };
        if !head {
            b.extend_from_slice(&body);
        }
        (b, sent)
    }

    fn special(&self, status: u16, server: &Server) -> Resp {
        let tokens = server.common.server_tokens.unwrap_or(true);
        let body = error_page(status, &self.version, tokens);
        Resp { status, headers: vec![("Content-Type".into(), "text/html".into())], body, special: true }
    }

    fn redirect(&self, status: u16, location: &str, _cfg: &Config, server: &Server) -> Resp {
        let mut r = self.special(status, server);
        r.headers.push(("Content-Length".into(), r.body.len().to_string()));
        r.headers.push(("Location".into(), location.to_string()));
        r.special = false;
        r
    }

    fn err_log_req(&self, os: &mut dyn Os, ctx: &Ctx, msg: &str) {
        let w = self.worker();
        let host = match ctx.req.header("host") {
            Some(h) => format!(", host: \"{h}\""),
            None => String::new(),
        };
        let server = ctx.server.names.first().cloned().unwrap_or_default();
        let m = format!("*{} {msg}, client: {}, server: {server}, request: \"{}\"{host}", self.conns, ctx.conn.src, ctx.request_line);
        self.elog(os, Level::Error, w, &m);
    }

    fn process(&self, os: &mut dyn Os, cfg: &Config, ctx: &Ctx, uri: &str, depth: u32) -> Resp {
        if depth > 10 {
            self.err_log_req(os, ctx, &format!("rewrite or internal redirection cycle while internally redirecting to \"{uri}\""));
            return self.special(500, ctx.server);
        }
        let server = ctx.server;
        let loc = if let Some(name) = uri.strip_prefix('@') {
            server.locations.iter().find(|l| l.modifier == Modifier::Named && l.pattern.trim_start_matches('@') == name)
        } else {
            find_location(server, uri)
        };
        let c = loc.map(|l| &l.common).unwrap_or(&server.common);
        if loc.is_some_and(|l| l.internal) && depth == 0 {
            return self.special(404, server);
        }
        if c.deny_all {
            self.err_log_req(os, ctx, "access forbidden by rule");
            return self.special(403, server);
        }
        if let Some((code, text)) = &c.ret {
            let text = text.as_ref().map(|t| self.expand(t, ctx, *code));
            return match (*code, text) {
                (301 | 302 | 303 | 307 | 308, Some(url)) => {
                    let url = if url.starts_with('/') { format!("http://{}{url}", ctx.host) } else { url };
                    self.redirect(*code, &url, cfg, server)
                }
                (code, Some(t)) => {
                    let ct = content_type_default(c);
                    Resp { status: code, headers: vec![("Content-Type".into(), ct)], body: t.into_bytes(), special: false }
                }
                (444, None) => Resp { status: 444, headers: Vec::new(), body: Vec::new(), special: false },
                (code, None) if code >= 300 => self.special(code, server),
                (code, None) => Resp { status: code, headers: vec![("Content-Type".into(), content_type_default(c))], body: Vec::new(), special: false },
            };
        }
        if c.stub_status {
            let body = format!(
                "Active connections: 1 \nserver accepts handled requests\n {} {} {} \nReading: 0 Writing: 1 Waiting: 0 \n",
                self.conns, self.conns, self.conns
            );
            return Resp { status: 200, headers: vec![("Content-Type".into(), "text/plain".into())], body: body.into_bytes(), special: false };
        }
        if let Some(up) = &c.proxy_pass {
            self.err_log_req(os, ctx, &format!("kubesim: proxy_pass to \"{up}\" is not modelled while connecting to upstream"));
            return self.special(502, server);
        }
        if c.other_pass {
            self.err_log_req(os, ctx, "kubesim: FastCGI/uwsgi/gRPC upstreams are not modelled while connecting to upstream");
            return self.special(502, server);
        }
        if let Some(tf) = c.try_files.clone() {
            let (last, tries) = tf.split_last().map(|(l, t)| (l.clone(), t.to_vec())).unwrap_or_default();
            for t in tries {
                let cand = self.expand(&t, &Ctx { uri: uri.to_string(), ..clone_ctx(ctx) }, 0);
                let fs_path = self.map_path(c, loc, &cand);
                let is_dir = cand.ends_with('/');
                if let Ok(m) = os.fs_ref().stat(fs_path.trim_end_matches('/')) {
                    if is_dir && m.is_dir() || !is_dir && !m.is_dir() {
                        if is_dir {
                            return self.static_file(os, cfg, ctx, c, loc, &cand, depth);
                        }
                        return self.serve_file(os, ctx, c, &fs_path, m);
                    }
                }
            }
            if let Some(code) = last.strip_prefix('=') {
                let code = code.parse().unwrap_or(404);
                return self.special(code, server);
            }
            let target = self.expand(&last, &Ctx { uri: uri.to_string(), ..clone_ctx(ctx) }, 0);
            let target = target.split('?').next().unwrap_or("/").to_string();
            return self.process(os, cfg, ctx, &target, depth + 1);
        }
        self.static_file(os, cfg, ctx, c, loc, uri, depth)
    }

    fn map_path(&self, c: &conf::Common, loc: Option<&Location>, uri: &str) -> String {
        if let (Some(alias), Some(l)) = (&c.alias, loc) {
            if l.modifier != Modifier::Named {
                let rest = uri.strip_prefix(l.pattern.as_str()).unwrap_or(uri);
                return format!("{}{}", alias, rest);
            }
        }
        let root = c.root.clone().unwrap_or_else(|| "html".into());
        let root = if root.starts_with('/') { root } else { format!("{}{}", self.prefix, root) };
        format!("{}{}", root.trim_end_matches('/'), uri)
    }

    #[allow(clippy::too_many_arguments)]
    fn static_file(&self, os: &mut dyn Os, cfg: &Config, ctx: &Ctx, c: &conf::Common, loc: Option<&Location>, uri: &str, depth: u32) -> Resp {
        let m = ctx.req.method.as_str();
        if m != "GET" && m != "HEAD" {
            if m == "POST" || m == "PUT" || m == "DELETE" || m == "PATCH" || m == "OPTIONS" {
                return self.special(405, ctx.server);
            }
            return self.special(405, ctx.server);
        }
        let path = self.map_path(c, loc, uri);
        if uri.ends_with('/') {
            let index = c.index.clone().unwrap_or_else(|| vec!["index.html".into()]);
            for ix in &index {
                let ip = if ix.starts_with('/') { self.map_path(c, loc, ix) } else { format!("{path}{ix}") };
                if os.fs_ref().stat(&ip).map(|m| !m.is_dir()).unwrap_or(false) {
                    let new_uri = if ix.starts_with('/') { ix.clone() } else { format!("{uri}{ix}") };
                    // Internal redirect to the index file: locations are matched again.
                    let nl = find_location(ctx.server, &new_uri);
                    if nl.map(|l| (&l.modifier, &l.pattern)) == loc.map(|l| (&l.modifier, &l.pattern)) {
                        let meta = os.fs_ref().stat(&ip).ok();
                        if let Some(meta) = meta {
                            return self.serve_file(os, ctx, c, &ip, meta);
                        }
                    }
                    return self.process(os, cfg, ctx, &new_uri, depth + 1);
                }
            }
            match os.fs_ref().stat(path.trim_end_matches('/')) {
                Ok(meta) if meta.is_dir() => {
                    if c.autoindex.unwrap_or(false) {
                        return self.autoindex(os, uri, &path);
                    }
                    self.err_log_req(os, ctx, &format!("directory index of \"{path}\" is forbidden"));
                    self.special(403, ctx.server)
                }
                _ => {
                    let first = index.first().cloned().unwrap_or_else(|| "index.html".into());
                    self.err_log_req(os, ctx, &format!("\"{path}{first}\" is not found (2: No such file or directory)"));
                    self.special(404, ctx.server)
                }
            }
        } else {
            match os.fs_ref().stat(&path) {
                Ok(meta) if meta.is_dir() => {
                    let port = if ctx.conn.port == 80 { String::new() } else { format!(":{}", ctx.conn.port) };
                    let host = ctx
                        .req
                        .header("host")
                        .map(|h| h.split(':').next().unwrap_or(h).to_string())
                        .unwrap_or_else(|| ctx.server.names.first().cloned().unwrap_or_default());
                    let q = if ctx.args.is_empty() { String::new() } else { format!("?{}", ctx.args) };
                    let loc_url = format!("http://{host}{port}{uri}/{q}");
                    self.redirect(301, &loc_url, cfg, ctx.server)
                }
                Ok(meta) => self.serve_file(os, ctx, c, &path, meta),
                Err(e) => {
                    let code = if e == Errno::EACCES { 403 } else { 404 };
                    self.err_log_req(os, ctx, &format!("open() \"{path}\" failed ({}: {})", e.code(), e.strerror()));
                    self.special(code, ctx.server)
                }
            }
        }
    }

    fn serve_file(&self, os: &mut dyn Os, ctx: &Ctx, c: &conf::Common, path: &str, meta: kubesim_os::fs::Metadata) -> Resp {
        let data = match os.fs_ref().read(path) {
            Ok(d) => d,
            Err(e) => {
                self.err_log_req(os, ctx, &format!("open() \"{path}\" failed ({}: {})", e.code(), e.strerror()));
                return self.special(if e == Errno::EACCES { 403 } else { 404 }, ctx.server);
            }
        };
        let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).filter(|e| !e.contains('/')).unwrap_or_default();
        let mut ct =
            self.cfg.as_ref().and_then(|c| c.types.get(&ext)).cloned().unwrap_or_else(|| c.default_type.clone().unwrap_or_else(|| "text/plain".into()));
        if let Some(cs) = &c.charset {
            if ct.starts_with("text/") || ct == "application/javascript" || ct.ends_with("+xml") {
                ct = format!("{ct}; charset={cs}");
            }
        }
        let mtime = meta.mtime_ms / 1000;
        let etag = format!("\"{:x}-{:x}\"", mtime, data.len());
        let if_none = ctx.req.header("if-none-match");
        if if_none == Some(etag.as_str()) {
            return Resp { status: 304, headers: vec![("Last-Modified".into(), http_date(mtime)), ("ETag".into(), etag)], body: Vec::new(), special: false };
        }
        Resp {
            status: 200,
            headers: vec![
                ("Content-Type".into(), ct),
                ("Content-Length".into(), data.len().to_string()),
                ("Last-Modified".into(), http_date(mtime)),
                ("ETag".into(), etag),
                ("Accept-Ranges".into(), "bytes".into()),
            ],
            body: data,
            special: false,
        }
    }

    fn autoindex(&self, os: &mut dyn Os, uri: &str, path: &str) -> Resp {
        let mut entries = os.fs_ref().read_dir(path.trim_end_matches('/')).unwrap_or_default();
        entries.retain(|e| !e.name.starts_with('.'));
        entries.sort_by(|a, b| (!a.meta.is_dir(), &a.name).cmp(&(!b.meta.is_dir(), &b.name)));
        let mut s = format!("<html>\r\n<head><title>Index of {uri}</title></head>\r\n<body>\r\n<h1>Index of {uri}</h1><hr><pre><a href=\"../\">../</a>\r\n");
        for e in entries {
            let name = if e.meta.is_dir() { format!("{}/", e.name) } else { e.name.clone() };
            let t = kubesim_os::time::strftime("%d-%b-%Y %H:%M", (e.meta.mtime_ms / 1000) as i64, 0);
            let size = if e.meta.is_dir() { "-".to_string() } else { e.meta.size.to_string() };
            let pad = 51usize.saturating_sub(name.chars().count());
            s.push_str(&format!("<a href=\"{name}\">{name}</a>{} {t} {size:>19}\r\n", " ".repeat(pad)));
        }
        s.push_str("</pre><hr></body>\r\n</html>\r\n");
        Resp { status: 200, headers: vec![("Content-Type".into(), "text/html".into())], body: s.into_bytes(), special: false }
    }

    fn expand(&self, text: &str, ctx: &Ctx, status: u16) -> String {
        let mut out = String::new();
        let b: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < b.len() {
            if b[i] == '$' && i + 1 < b.len() {
                let (name, next) = if b[i + 1] == '{' {
                    let end = b[i + 2..].iter().position(|&c| c == '}').map(|p| i + 2 + p).unwrap_or(b.len());
                    (b[i + 2..end].iter().collect::<String>(), (end + 1).min(b.len()))
                } else {
                    let mut j = i + 1;
                    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == '_') {
                        j += 1;
                    }
                    (b[i + 1..j].iter().collect::<String>(), j)
                };
                if name.is_empty() {
                    out.push('$');
                    i += 1;
                    continue;
                }
                out.push_str(&self.var(&name, ctx, status, None).unwrap_or_default());
                i = next;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        out
    }

    fn var(&self, name: &str, ctx: &Ctx, status: u16, sent: Option<usize>) -> Option<String> {
        let req = ctx.req;
        Some(match name {
            "uri" | "document_uri" => ctx.uri.clone(),
            "request_uri" => req.target.clone(),
            "args" | "query_string" => ctx.args.clone(),
            "is_args" => {
                if ctx.args.is_empty() {
                    String::new()
                } else {
                    "?".into()
                }
            }
            "host" => ctx.host.split(':').next().unwrap_or("").to_string(),
            "http_host" => req.header("host")?.to_string(),
            "hostname" => return None,
            "remote_addr" => ctx.conn.src.clone(),
            "remote_port" => ctx.conn.src_port.to_string(),
            "server_port" => ctx.conn.port.to_string(),
            "server_name" => ctx.server.names.first().cloned().unwrap_or_default(),
            "scheme" => "http".into(),
            "request_method" => req.method.clone(),
            "request" => ctx.request_line.clone(),
            "server_protocol" => req.version.clone(),
            "status" => status.to_string(),
            "body_bytes_sent" => sent.unwrap_or(0).to_string(),
            "request_length" => ctx.conn.data.len().to_string(),
            "request_time" => "0.000".into(),
            "msec" => "0.000".into(),
            "connection" => self.conns.to_string(),
            "pid" => self.worker().to_string(),
            "nginx_version" => self.version.clone(),
            "remote_user" => return None,
            n if n.starts_with("http_") => req.header(&n[5..].replace('_', "-"))?.to_string(),
            n if n.starts_with("arg_") => {
                let k = &n[4..];
                ctx.args.split('&').find_map(|p| p.split_once('=').filter(|(a, _)| *a == k).map(|(_, v)| v.to_string()))?
            }
            _ => return None,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn access_log(&self, os: &mut dyn Os, conn: &Incoming, req: Option<&Request>, line: &str, status: u16, sent: usize, server_name: &str) {
        let Some(cfg) = &self.cfg else { return };
        let server = select_server(cfg, conn.port, "");
        let logs = server
            .and_then(|s| {
                let uri = req.map(|r| r.path().to_string()).unwrap_or_default();
                find_location(s, &uri).map(|l| l.common.access_log.clone()).unwrap_or_else(|| s.common.access_log.clone())
            })
            .unwrap_or_else(|| vec![("/var/log/nginx/access.log".into(), "combined".into())]);
        let _ = server_name;
        let dummy = Request::new("", "");
        let r = req.unwrap_or(&dummy);
        let fallback = Server { listens: Vec::new(), names: Vec::new(), common: conf::Common::default(), locations: Vec::new() };
        let ctx = Ctx {
            req: r,
            conn,
            server: server.unwrap_or(&fallback),
            host: String::new(),
            request_line: line.to_string(),
            uri: r.path().to_string(),
            args: String::new(),
        };
        for (path, fmt) in logs {
            if path == "off" {
                continue;
            }
            let sink = sink_for(os, &path, Sink::Stdout);
            let f = cfg.log_formats.get(&fmt).cloned().unwrap_or_else(|| conf::COMBINED.to_string());
            let mut s = String::new();
            let chars: Vec<char> = f.chars().collect();
            let mut i = 0;
            while i < chars.len() {
                if chars[i] == '$' {
                    let mut j = i + 1;
                    while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                        j += 1;
                    }
                    let name: String = chars[i + 1..j].iter().collect();
                    let v = match name.as_str() {
                        "time_local" => clf_time(os.unix_time()),
                        "time_iso8601" => kubesim_os::time::strftime("%Y-%m-%dT%H:%M:%S+00:00", os.unix_time() as i64, 0),
                        "status" => status.to_string(),
                        "body_bytes_sent" | "bytes_sent" => sent.to_string(),
                        "request" => line.to_string(),
                        _ => self.var(&name, &ctx, status, Some(sent)).filter(|v| !v.is_empty()).unwrap_or_else(|| "-".into()),
                    };
                    s.push_str(&log_escape(&v));
                    i = j;
                } else {
                    s.push(chars[i]);
                    i += 1;
                }
            }
            s.push('\n');
            write_sink(os, &sink, &s);
        }
    }
}

fn clone_ctx<'a>(c: &Ctx<'a>) -> Ctx<'a> {
    Ctx { req: c.req, conn: c.conn, server: c.server, host: c.host.clone(), request_line: c.request_line.clone(), uri: c.uri.clone(), args: c.args.clone() }
}

fn log_escape(v: &str) -> String {
    let mut o = String::new();
    for b in v.bytes() {
        if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
            o.push_str(&format!("\\x{b:02X}"));
        } else {
            o.push(b as char);
        }
    }
    o
}

fn content_type_default(c: &conf::Common) -> String {
    let t = c.default_type.clone().unwrap_or_else(|| "text/plain".into());
    match &c.charset {
        Some(cs) if t.starts_with("text/") => format!("{t}; charset={cs}"),
        _ => t,
    }
}

fn name_matches(pattern: &str, host: &str) -> bool {
    let p = pattern.to_ascii_lowercase();
    if let Some(re) = p.strip_prefix('~') {
        return kubesim_os::regex::Regex::new(re, true, true).map(|r| r.is_match(host)).unwrap_or(false);
    }
    if let Some(suffix) = p.strip_prefix("*.") {
        return host.ends_with(&format!(".{suffix}"));
    }
    if let Some(suffix) = p.strip_prefix('.') {
        return host == suffix || host.ends_with(&p);
    }
    if let Some(prefix) = p.strip_suffix(".*") {
        return host.starts_with(&format!("{prefix}."));
    }
    p == host
}

fn select_server<'a>(cfg: &'a Config, port: u16, host: &str) -> Option<&'a Server> {
    let cands: Vec<&Server> = cfg.servers.iter().filter(|s| s.listens.iter().any(|l| l.port == port)).collect();
    if cands.is_empty() {
        return None;
    }
    if !host.is_empty() {
        if let Some(s) =
            cands.iter().find(|s| s.names.iter().any(|n| !n.starts_with('~') && !n.contains('*') && !n.starts_with('.') && n.eq_ignore_ascii_case(host)))
        {
            return Some(s);
        }
        if let Some(s) = cands.iter().find(|s| s.names.iter().any(|n| name_matches(n, host))) {
            return Some(s);
        }
    }
    cands.iter().find(|s| s.listens.iter().any(|l| l.port == port && l.default_server)).or(cands.first()).copied()
}

/// nginx's location selection: exact, then the longest prefix; `^~` stops; else the first
/// matching regex; else that prefix.
fn find_location<'a>(server: &'a Server, uri: &str) -> Option<&'a Location> {
    if let Some(l) = server.locations.iter().find(|l| l.modifier == Modifier::Exact && l.pattern == uri) {
        return Some(l);
    }
    let best = server
        .locations
        .iter()
        .filter(|l| matches!(l.modifier, Modifier::Prefix | Modifier::PrefixNoRegex) && uri.starts_with(l.pattern.as_str()))
        .max_by_key(|l| l.pattern.len());
    if best.is_some_and(|l| l.modifier == Modifier::PrefixNoRegex) {
        return best;
    }
    for l in &server.locations {
        if let Modifier::Regex { icase } = l.modifier {
            if kubesim_os::regex::Regex::new(&l.pattern, true, icase).map(|r| r.is_match(uri)).unwrap_or(false) {
                return Some(l);
            }
        }
    }
    best
}

/// The official image's `/docker-entrypoint.sh` (nginx ≥ 1.18/1.19): runs the
/// `/docker-entrypoint.d` scripts when the command is `nginx`/`nginx-debug`, then execs it.
#[derive(Clone, Debug)]
pub struct NginxEntrypoint {
    spawn: Spawn,
    inner: Option<Box<dyn Program>>,
}

impl NginxEntrypoint {
    /// From a spawn (`/docker-entrypoint.sh nginx -g 'daemon off;'`).
    pub fn new(spawn: &Spawn) -> NginxEntrypoint {
        NginxEntrypoint { spawn: spawn.clone(), inner: None }
    }

    fn prologue(&self, os: &mut dyn Os) {
        let args = &self.spawn.argv[1.min(self.spawn.argv.len())..];
        let me = self.spawn.argv.first().cloned().unwrap_or_else(|| "/docker-entrypoint.sh".into());
        let quiet = self.spawn.env.get("NGINX_ENTRYPOINT_QUIET_LOGS").is_some_and(|v| !v.is_empty());
        let version = version_of(&self.spawn);
        let v = vnum(&version);
        let log = |os: &mut dyn Os, s: &str| {
            if !quiet {
                common::out(os, &format!("{s}\n"));
            }
        };
        if !matches!(args.first().map(String::as_str), Some("nginx") | Some("nginx-debug")) {
            return;
        }
        let dir = "/docker-entrypoint.d";
        let mut scripts: Vec<(String, bool)> = match os.fs_ref().read_dir(dir) {
            Ok(es) => {
                es.into_iter().filter(|e| !e.meta.is_dir()).map(|e| (format!("{dir}/{}", e.name), e.meta.mode & 0o111 != 0 || e.meta.is_symlink())).collect()
            }
            Err(_) => {
                // The image's own scripts (the catalogue does not carry the files).
                let mut s = vec![("/docker-entrypoint.d/10-listen-on-ipv6-by-default.sh".to_string(), true)];
                if v >= (1, 25, 3) {
                    s.push(("/docker-entrypoint.d/15-local-resolvers.envsh".into(), true));
                }
                s.push(("/docker-entrypoint.d/20-envsubst-on-templates.sh".into(), true));
                if v >= (1, 20, 1) {
                    s.push(("/docker-entrypoint.d/30-tune-worker-processes.sh".into(), true));
                }
                s
            }
        };
        if scripts.is_empty() {
            log(os, &format!("{me}: No files found in /docker-entrypoint.d/, skipping configuration"));
            return;
        }
        scripts.sort_by_cached_key(|a| version_sort_key(&a.0));
        log(os, &format!("{me}: /docker-entrypoint.d/ is not empty, will attempt to perform configuration"));
        log(os, &format!("{me}: Looking for shell scripts in /docker-entrypoint.d/"));
        let info = if v >= (1, 20, 1) { "info: " } else { "" };
        for (path, exec) in scripts {
            let base = kubesim_os::fs::basename(&path);
            if path.ends_with(".envsh") {
                if !exec {
                    log(os, &format!("{me}: Ignoring {path}, not executable"));
                    continue;
                }
                log(os, &format!("{me}: Sourcing {path}"));
                continue;
            }
            if !path.ends_with(".sh") {
                log(os, &format!("{me}: Ignoring {path}"));
                continue;
            }
            if !exec {
                log(os, &format!("{me}: Ignoring {path}, not executable"));
                continue;
            }
            log(os, &format!("{me}: Launching {path}"));
            match base.as_str() {
                "10-listen-on-ipv6-by-default.sh" => {
                    for l in listen_ipv6(os, &base, info) {
                        log(os, &l);
                    }
                }
                "20-envsubst-on-templates.sh" => {
                    for l in envsubst_templates(os, &self.spawn, &base, info) {
                        log(os, &l);
                    }
                }
                "30-tune-worker-processes.sh" | "15-local-resolvers.envsh" => {}
                _ => {
                    // A user script: run it through the shell.
                    let argv = vec![path.clone()];
                    if let Ok(p) = common::exec(os, &argv, &self.spawn.env, &self.spawn.cwd) {
                        let (_, o) = common::run_sync(p, os, 100_000, 0);
                        common::out(os, &String::from_utf8_lossy(&o));
                    }
                }
            }
        }
        log(os, &format!("{me}: Configuration complete; ready for start up"));
    }
}

fn version_sort_key(s: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut num = String::new();
    let mut txt = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !txt.is_empty() {
                out.push((0, std::mem::take(&mut txt)));
            }
            num.push(c);
        } else {
            if !num.is_empty() {
                out.push((num.parse().unwrap_or(0), String::new()));
                num.clear();
            }
            txt.push(c);
        }
    }
    if !num.is_empty() {
        out.push((num.parse().unwrap_or(0), String::new()));
    }
    if !txt.is_empty() {
        out.push((0, txt));
    }
    out
}

fn listen_ipv6(os: &mut dyn Os, me: &str, info: &str) -> Vec<String> {
    let f = "/etc/nginx/conf.d/default.conf";
    let mut out = Vec::new();
    let Ok(data) = os.fs_ref().read(f) else {
        out.push(format!("{me}: {info}/{} is not a file or does not exist", f.trim_start_matches('/')).replace("//", "/"));
        return out;
    };
    let text = String::from_utf8_lossy(&data).into_owned();
    if os.fs_ref().stat(f).map(|m| m.mount_ro).unwrap_or(false) {
        out.push(format!("{me}: {info}can not modify {f} (read-only file system?)"));
        return out;
    }
    if text.contains("listen  [::]:80;") {
        out.push(format!("{me}: {info}IPv6 listen already enabled"));
        return out;
    }
    out.push(format!("{me}: {info}Getting the checksum of {f}"));
    let packaged = text.contains("listen       80;") && text.contains("server_name  localhost;") && text.contains("#error_page  404              /404.html;");
    if !packaged {
        out.push(format!("{me}: {info}{f} differs from the packaged version"));
        return out;
    }
    let new = text.replacen("listen       80;", "listen       80;\n    listen  [::]:80;", 1);
    let _ = os.fs().write(f, new.as_bytes(), WriteMode::Truncate);
    out.push(format!("{me}: {info}Enabled listen on IPv6 in {f}"));
    out
}

fn envsubst_templates(os: &mut dyn Os, spawn: &Spawn, me: &str, info: &str) -> Vec<String> {
    let _ = info;
    let dir = spawn.env.get("NGINX_ENVSUBST_TEMPLATE_DIR").cloned().unwrap_or_else(|| "/etc/nginx/templates".into());
    let suffix = spawn.env.get("NGINX_ENVSUBST_TEMPLATE_SUFFIX").cloned().unwrap_or_else(|| ".template".into());
    let out_dir = spawn.env.get("NGINX_ENVSUBST_OUTPUT_DIR").cloned().unwrap_or_else(|| "/etc/nginx/conf.d".into());
    let mut lines = Vec::new();
    let Ok(entries) = os.fs_ref().read_dir(&dir) else { return lines };
    let mut names: Vec<String> = entries.into_iter().filter(|e| e.name.ends_with(&suffix)).map(|e| e.name).collect();
    names.sort();
    for n in names {
        let src = format!("{dir}/{n}");
        let dst = format!("{out_dir}/{}", n.trim_end_matches(suffix.as_str()));
        let text = common::read_file(os, &src, 1 << 20).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let mut o = String::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == '$' && i + 1 < chars.len() {
                let (name, next) = if chars[i + 1] == '{' {
                    let end = chars[i + 2..].iter().position(|&c| c == '}').map(|p| i + 2 + p);
                    match end {
                        Some(e) => (chars[i + 2..e].iter().collect::<String>(), e + 1),
                        None => (String::new(), i + 1),
                    }
                } else {
                    let mut j = i + 1;
                    while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                        j += 1;
                    }
                    (chars[i + 1..j].iter().collect::<String>(), j)
                };
                if let Some(v) = spawn.env.get(&name).filter(|_| !name.is_empty()) {
                    o.push_str(v);
                    i = next;
                    continue;
                }
            }
            o.push(chars[i]);
            i += 1;
        }
        lines.push(format!("{me}: Running envsubst on {src} to {dst}"));
        let _ = common::write_file(os, &dst, o.as_bytes());
    }
    lines
}

impl Program for NginxEntrypoint {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Some(p) = self.inner.as_mut() {
            return p.resume(os, wake);
        }
        self.prologue(os);
        let argv: Vec<String> = self.spawn.argv.iter().skip(1).cloned().collect();
        if argv.is_empty() {
            return Step::Exit(0);
        }
        let me = self.spawn.argv.first().cloned().unwrap_or_default();
        match common::exec(os, &argv, &self.spawn.env, &self.spawn.cwd) {
            Ok(mut p) => {
                os.set_cmdline(&argv);
                let s = p.resume(os, Wake::Start);
                self.inner = Some(p);
                // `exec "$@"` replaced the script: its arguments and environment are gone.
                self.spawn = Spawn::default();
                s
            }
            Err(e) => {
                let (msg, code) = if e.errno == Errno::EACCES { ("Permission denied", 126) } else { ("not found", 127) };
                common::err(os, &format!("{me}: 47: exec: {}: {msg}\n", e.name));
                Step::Exit(code)
            }
        }
    }
    fn memory_bytes(&self) -> u64 {
        self.inner.as_ref().map(|p| p.memory_bytes()).unwrap_or(600_000)
    }
    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        self.inner.as_mut()?.serve(os, conn)
    }
    fn listening(&self) -> Vec<(u16, bool)> {
        self.inner.as_ref().map(|p| p.listening()).unwrap_or_default()
    }
}

/// A user's uid from the container's /etc/passwd.
fn passwd_uid(os: &dyn Os, user: &str) -> Option<u32> {
    if let Ok(n) = user.parse() {
        return Some(n);
    }
    let text = os.fs_ref().read("/etc/passwd").ok()?;
    String::from_utf8_lossy(&text).lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 3 && f[0] == user).then(|| f[2].parse().ok()).flatten()
    })
}
