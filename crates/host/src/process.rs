//! What a container's main process does, derived from its image and its real command and args.
//!
//! Images with known entrypoints behave like them (servers run until signalled; busybox with no
//! command exits 0). Shell commands (`sh -c '...'`) are interpreted over a documented POSIX
//! subset: `sleep`, `exit`, `echo`, `printf`, `touch`, `rm`, `cat`, `mkdir`, `date`, `true`,
//! `false`, `:`, `test`/`[`, `hostname`, `env`/`printenv`, `;`, `&&`, `||`, `while`/`until`
//! loops, `if`/`then`/`else`/`fi`, `$VAR`/`${VAR}` and `$(cmd)` for simple commands.
//!
//! The interpreter runs eagerly into a timeline of effects (log lines, file writes, exit), with a
//! bounded horizon, so the runtime only needs to play the timeline forward on the virtual clock.
//! Deliberate simplification: a script does not observe files changed by `kubectl exec` after it
//! started.

use std::collections::BTreeMap;

/// One effect of a running process, at an offset from its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// A line on stdout/stderr (container log).
    Log(String),
    /// A file created or written.
    WriteFile(String, String),
    /// A file removed.
    RemoveFile(String),
    /// The process exits with this code.
    Exit(i32),
    /// The kernel's OOM killer ends the process (exit 137, reason OOMKilled).
    OomKill,
}

/// How a process reacts to SIGTERM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermBehaviour {
    /// Exits promptly with this code after this many milliseconds (nginx, redis, ...).
    ExitsAfter(u64, i32),
    /// Ignores SIGTERM (a shell as PID 1): only SIGKILL at the end of the grace period stops it.
    Ignores,
}

/// A process model: its timeline of effects and its signal behaviour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Effects in time order, offsets in ms from process start. No `Exit` means it runs forever.
    pub timeline: Vec<(u64, Effect)>,
    /// SIGTERM handling.
    pub on_term: TermBehaviour,
    /// Resident memory the process uses by default (bytes), for the usage model.
    pub idle_memory_bytes: i64,
    /// CPU the process uses by default (millicores).
    pub idle_cpu_milli: i64,
    /// Whether the process accepts connections (HTTP, TCP and gRPC probes).
    pub serving: Serving,
    /// Files visible at start (mounted ConfigMap, Secret and downward API volumes).
    pub files: BTreeMap<String, String>,
}

/// How a process answers network probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serving {
    /// Nothing listens: probes see "connection refused".
    No,
    /// A server; with `unhealthy_after_ms`, its health endpoint starts failing (HTTP 500) that
    /// long after start (agnhost `liveness`, as in the docs' HTTP liveness example).
    Yes {
        /// When /healthz starts returning 500.
        unhealthy_after_ms: Option<u64>,
    },
}

/// Why a container's command cannot be modelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedCommand(pub String);

/// Builds the program for a container: image entrypoint defaults, or the interpreted command.
pub fn program_for(image: &str, command: &[String], args: &[String], env: &BTreeMap<String, String>, start_unix_seconds: i64) -> Program {
    program_with_files(image, command, args, env, &BTreeMap::new(), start_unix_seconds)
}

/// [`program_for`] with the files the container's volumes mount.
pub fn program_with_files(
    image: &str,
    command: &[String],
    args: &[String],
    env: &BTreeMap<String, String>,
    files: &BTreeMap<String, String>,
    start_unix_seconds: i64,
) -> Program {
    let mut program = build_program(image, command, args, env, files, start_unix_seconds);
    program.files = files.clone();
    program
}

fn build_program(
    image: &str,
    command: &[String],
    args: &[String],
    env: &BTreeMap<String, String>,
    files: &BTreeMap<String, String>,
    start_unix_seconds: i64,
) -> Program {
    let base = image_base_name(image);
    let (entry_term, idle_mem, idle_cpu) = match base.as_str() {
        "nginx" | "httpd" | "redis" | "memcached" | "php" => (TermBehaviour::ExitsAfter(150, 0), 8 << 20, 1),
        "postgres" | "mysql" | "mariadb" | "mongo" | "cassandra" | "zookeeper" => (TermBehaviour::ExitsAfter(1500, 0), 180 << 20, 5),
        "pause" => (TermBehaviour::ExitsAfter(10, 0), 1 << 20, 0),
        "busybox" | "alpine" | "ubuntu" | "debian" | "centos" | "fedora" => (TermBehaviour::Ignores, 1 << 20, 0),
        _ => (TermBehaviour::ExitsAfter(200, 0), 20 << 20, 2),
    };
    let mut argv: Vec<String> = command.iter().chain(args.iter()).cloned().collect();
    if argv.is_empty() {
        // The image's own entrypoint.
        return match base.as_str() {
            "busybox" | "alpine" | "ubuntu" | "debian" | "centos" | "fedora" => Program {
                timeline: vec![(0, Effect::Exit(0))], // `sh` with no terminal exits at once
                on_term: TermBehaviour::Ignores,
                idle_memory_bytes: idle_mem,
                idle_cpu_milli: idle_cpu,
                serving: Serving::No,
                files: BTreeMap::new(),
            },
            _ => Program {
                timeline: startup_logs(&base),
                on_term: entry_term,
                idle_memory_bytes: idle_mem,
                idle_cpu_milli: idle_cpu,
                serving: Serving::Yes { unhealthy_after_ms: None },
                files: BTreeMap::new(),
            },
        };
    }
    // Servers started with flags keep running ("nginx -g daemon off;", "redis-server --port ...").
    let program_name = argv[0].rsplit('/').next().unwrap_or(&argv[0]).to_string();
    let shell = matches!(program_name.as_str(), "sh" | "bash" | "ash" | "dash");
    let script = if shell {
        match argv.iter().position(|a| a == "-c") {
            Some(i) if i + 1 < argv.len() => argv[i + 1].clone(),
            _ => {
                return Program {
                    timeline: vec![(0, Effect::Exit(0))],
                    on_term: TermBehaviour::Ignores,
                    idle_memory_bytes: idle_mem,
                    idle_cpu_milli: 0,
                    serving: Serving::No,
                    files: BTreeMap::new(),
                }
            }
        }
    } else if is_interpretable(&program_name) {
        argv.iter_mut().for_each(|a| *a = shell_quote(a));
        argv.join(" ")
    } else {
        // agnhost's `liveness` subcommand serves /healthz: 200 for 10 s, then 500.
        let unhealthy_after_ms = (base == "agnhost" && argv.first().map(String::as_str) == Some("liveness")).then_some(10_000);
        return Program {
            timeline: startup_logs(&base),
            on_term: entry_term,
            idle_memory_bytes: idle_mem,
            idle_cpu_milli: idle_cpu,
            serving: Serving::Yes { unhealthy_after_ms },
            files: BTreeMap::new(),
        };
    };
    let mut interp = Interpreter::new(env.clone(), start_unix_seconds);
    interp.files = files.clone();
    let outcome = interp.run_script(&script);
    let mut timeline = interp.effects;
    match outcome {
        Flow::Exit(code) | Flow::Normal(code) => timeline.push((interp.clock_ms, Effect::Exit(code))),
        Flow::Horizon => {}
    }
    // A shell as PID 1 ignores SIGTERM; `sleep` as PID 1 (exec form) does too (no handler).
    Program { timeline, on_term: TermBehaviour::Ignores, idle_memory_bytes: 1 << 20, idle_cpu_milli: 0, serving: Serving::No, files: BTreeMap::new() }
}

/// The commands the shell model implements (anything else exits 127 at run time).
pub const SHELL_BUILTINS: &[&str] = &[
    "sleep", "exit", "true", ":", "false", "echo", "printf", "touch", "rm", "mkdir", "ls", "wget", "curl", "cat", "date", "hostname", "env", "printenv",
    "test", "[",
];

/// The commands of a container's shell script that the model does not implement, so the
/// simulation can warn at apply time instead of guessing (they exit 127 when run).
pub fn unsupported_commands(command: &[String], args: &[String]) -> Vec<String> {
    let argv: Vec<&String> = command.iter().chain(args.iter()).collect();
    let Some(first) = argv.first() else { return Vec::new() };
    let program = first.rsplit('/').next().unwrap_or(first);
    if !matches!(program, "sh" | "bash" | "ash" | "dash") {
        return Vec::new();
    }
    let Some(script) = argv.iter().position(|a| a.as_str() == "-c").and_then(|i| argv.get(i + 1)) else { return Vec::new() };
    let mut parser = Parser { tokens: tokenize(script), pos: 0 };
    let tree = parser.parse_list(&[]);
    let mut unknown = Vec::new();
    collect_commands(&tree, &mut unknown);
    kubesim_api::sort::sort(&mut unknown);
    unknown.dedup();
    unknown
}

fn collect_commands(node: &Node, out: &mut Vec<String>) {
    match node {
        Node::Seq(items) => items.iter().for_each(|n| collect_commands(n, out)),
        Node::And(a, b) | Node::Or(a, b) => {
            collect_commands(a, out);
            collect_commands(b, out);
        }
        Node::Loop { cond, body, .. } => {
            collect_commands(cond, out);
            collect_commands(body, out);
        }
        Node::If { cond, then, otherwise } => {
            collect_commands(cond, out);
            collect_commands(then, out);
            if let Some(o) = otherwise {
                collect_commands(o, out);
            }
        }
        Node::Simple(words) => {
            let Some(Word(parts)) = words.first() else { return };
            let [Part::Lit(name)] = parts.as_slice() else { return };
            if name.contains('=') {
                return;
            }
            let base = name.rsplit('/').next().unwrap_or(name);
            if !SHELL_BUILTINS.contains(&base) {
                out.push(base.to_string());
            }
        }
    }
}

fn is_interpretable(program: &str) -> bool {
    matches!(program, "sleep" | "echo" | "printf" | "true" | "false" | "exit" | "touch" | "date" | "cat" | "env" | "printenv" | "wget" | "curl" | "ls")
}

fn shell_quote(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:%".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The image's repository base name (`docker.io/library/nginx:1.27` → `nginx`).
pub fn image_base_name(image: &str) -> String {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    last.split(':').next().unwrap_or(last).to_string()
}

fn startup_logs(base: &str) -> Vec<(u64, Effect)> {
    let lines: &[&str] = match base {
        "nginx" => &[
            "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration",
            "/docker-entrypoint.sh: Configuration complete; ready for start up",
            "nginx: [notice] start worker processes",
        ],
        "redis" => &["Redis version=7.4.1, bits=64, commit=00000000, modified=0, pid=1, just started", "Ready to accept connections tcp"],
        "httpd" => {
            &["AH00558: httpd: Could not reliably determine the server's fully qualified domain name", "Apache/2.4 configured -- resuming normal operations"]
        }
        _ => &[],
    };
    lines.iter().enumerate().map(|(i, l)| (i as u64 * 5, Effect::Log(l.to_string()))).collect()
}

/// Virtual horizon: scripts are interpreted up to 48 h of virtual time or 20,000 steps.
const HORIZON_MS: u64 = 48 * 3600 * 1000;
const MAX_STEPS: u32 = 20_000;

enum Flow {
    Normal(i32),
    Exit(i32),
    Horizon,
}

struct Interpreter {
    env: BTreeMap<String, String>,
    files: BTreeMap<String, String>,
    effects: Vec<(u64, Effect)>,
    clock_ms: u64,
    steps: u32,
    start_unix_seconds: i64,
}

impl Interpreter {
    fn new(env: BTreeMap<String, String>, start_unix_seconds: i64) -> Interpreter {
        Interpreter { env, files: BTreeMap::new(), effects: Vec::new(), clock_ms: 0, steps: 0, start_unix_seconds }
    }

    fn run_script(&mut self, script: &str) -> Flow {
        let tokens = tokenize(script);
        let mut parser = Parser { tokens, pos: 0 };
        let program = parser.parse_list(&[]);
        self.exec(&program)
    }

    fn exec(&mut self, node: &Node) -> Flow {
        self.steps += 1;
        if self.steps > MAX_STEPS || self.clock_ms > HORIZON_MS {
            return Flow::Horizon;
        }
        match node {
            Node::Seq(items) => {
                let mut status = 0;
                for item in items {
                    match self.exec(item) {
                        Flow::Normal(s) => status = s,
                        other => return other,
                    }
                }
                Flow::Normal(status)
            }
            Node::And(a, b) => match self.exec(a) {
                Flow::Normal(0) => self.exec(b),
                other => other,
            },
            Node::Or(a, b) => match self.exec(a) {
                Flow::Normal(0) => Flow::Normal(0),
                Flow::Normal(_) => self.exec(b),
                other => other,
            },
            Node::Loop { cond, body, until } => loop {
                let c = match self.exec(cond) {
                    Flow::Normal(s) => s,
                    other => return other,
                };
                if (c == 0) == *until {
                    return Flow::Normal(0);
                }
                match self.exec(body) {
                    Flow::Normal(_) => {}
                    other => return other,
                }
                if self.steps > MAX_STEPS || self.clock_ms > HORIZON_MS {
                    return Flow::Horizon;
                }
            },
            Node::If { cond, then, otherwise } => match self.exec(cond) {
                Flow::Normal(0) => self.exec(then),
                Flow::Normal(_) => otherwise.as_ref().map_or(Flow::Normal(0), |o| self.exec(o)),
                other => other,
            },
            Node::Simple(words) => {
                let argv: Vec<String> = words.iter().map(|w| self.expand(w)).collect();
                let argv: Vec<String> = argv.into_iter().filter(|w| !w.is_empty()).collect();
                if argv.is_empty() {
                    return Flow::Normal(0);
                }
                // Assignment `VAR=value`.
                if argv.len() == 1 && argv[0].contains('=') && !argv[0].starts_with('=') {
                    let (k, v) = argv[0].split_once('=').unwrap();
                    if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        self.env.insert(k.to_string(), v.to_string());
                        return Flow::Normal(0);
                    }
                }
                self.builtin(&argv)
            }
        }
    }

    fn log(&mut self, line: String) {
        self.effects.push((self.clock_ms, Effect::Log(line)));
    }

    fn builtin(&mut self, argv: &[String]) -> Flow {
        let name = argv[0].rsplit('/').next().unwrap_or(&argv[0]);
        let args = &argv[1..];
        match name {
            "sleep" => {
                let total: f64 = args
                    .iter()
                    .map(|a| {
                        if a == "infinity" {
                            return f64::INFINITY;
                        }
                        let (num, mult) = match a.chars().last() {
                            Some('s') => (&a[..a.len() - 1], 1.0),
                            Some('m') => (&a[..a.len() - 1], 60.0),
                            Some('h') => (&a[..a.len() - 1], 3600.0),
                            Some('d') => (&a[..a.len() - 1], 86400.0),
                            _ => (a.as_str(), 1.0),
                        };
                        num.parse::<f64>().unwrap_or(0.0) * mult
                    })
                    .sum();
                if !total.is_finite() || total * 1000.0 > HORIZON_MS as f64 {
                    self.clock_ms = HORIZON_MS + 1;
                    return Flow::Horizon;
                }
                self.clock_ms += (total * 1000.0).round() as u64;
                Flow::Normal(0)
            }
            "exit" => Flow::Exit(args.first().and_then(|a| a.parse().ok()).unwrap_or(0)),
            "true" | ":" => Flow::Normal(0),
            "false" => Flow::Normal(1),
            "echo" => {
                let (no_newline, rest): (bool, Vec<&String>) = match args.first().map(|s| s.as_str()) {
                    Some("-n") => (true, args[1..].iter().collect()),
                    Some("-e") => (false, args[1..].iter().collect()),
                    _ => (false, args.iter().collect()),
                };
                let _ = no_newline;
                let text = rest.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
                for line in text.split('\n') {
                    self.log(line.to_string());
                }
                Flow::Normal(0)
            }
            "printf" => {
                let Some(format) = args.first() else { return Flow::Normal(1) };
                let mut out = String::new();
                let mut rest = args[1..].iter();
                let mut chars = format.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '%' => match chars.next() {
                            Some('s') | Some('d') => out.push_str(rest.next().map(|s| s.as_str()).unwrap_or("")),
                            Some('%') => out.push('%'),
                            Some(other) => {
                                out.push('%');
                                out.push(other)
                            }
                            None => out.push('%'),
                        },
                        '\\' => match chars.next() {
                            Some('n') => out.push('\n'),
                            Some('t') => out.push('\t'),
                            Some(other) => out.push(other),
                            None => {}
                        },
                        _ => out.push(c),
                    }
                }
                for line in out.trim_end_matches('\n').split('\n') {
                    if !line.is_empty() || out.contains('\n') {
                        self.log(line.to_string());
                    }
                }
                Flow::Normal(0)
            }
            "touch" => {
                for path in args.iter().filter(|a| !a.starts_with('-')) {
                    self.files.entry(path.clone()).or_default();
                    self.effects.push((self.clock_ms, Effect::WriteFile(path.clone(), String::new())));
                }
                Flow::Normal(0)
            }
            "rm" => {
                let force = args.iter().any(|a| a.starts_with('-') && a.contains('f'));
                let mut status = 0;
                for path in args.iter().filter(|a| !a.starts_with('-')) {
                    if self.files.remove(path).is_none() && !force {
                        self.log(format!("rm: can't remove '{path}': No such file or directory"));
                        status = 1;
                    }
                    self.effects.push((self.clock_ms, Effect::RemoveFile(path.clone())));
                }
                Flow::Normal(status)
            }
            "mkdir" => Flow::Normal(0),
            "ls" => {
                let dirs: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
                let dirs: Vec<String> = if dirs.is_empty() { vec!["/".to_string()] } else { dirs.into_iter().cloned().collect() };
                let mut status = 0;
                for dir in dirs {
                    let prefix = format!("{}/", dir.trim_end_matches('/'));
                    if self.files.contains_key(&dir) {
                        self.log(dir.clone());
                        continue;
                    }
                    let entries: std::collections::BTreeSet<String> =
                        self.files.keys().filter_map(|k| k.strip_prefix(&prefix)).map(|rest| rest.split('/').next().unwrap_or(rest).to_string()).collect();
                    if entries.is_empty() {
                        self.log(format!("ls: {dir}: No such file or directory"));
                        status = 1;
                    }
                    for entry in entries {
                        self.log(entry);
                    }
                }
                Flow::Normal(status)
            }
            "wget" | "curl" => {
                // A download: ~200 ms, then the file (wget -O FILE / curl -o FILE) or stdout.
                let mut output = None;
                let mut url = None;
                let mut i = 0;
                while i < args.len() {
                    match args[i].as_str() {
                        "-O" | "-o" | "--output" | "--output-document" => {
                            output = args.get(i + 1).cloned();
                            i += 2;
                            continue;
                        }
                        a if a.starts_with('-') => {}
                        a => url = Some(a.to_string()),
                    }
                    i += 1;
                }
                self.clock_ms += 200;
                let Some(url) = url else {
                    self.log(format!("{name}: missing URL"));
                    return Flow::Normal(1);
                };
                let host = url.split("://").nth(1).unwrap_or(&url).split(['/', ':']).next().unwrap_or("").to_string();
                if host.ends_with(".invalid") || host.is_empty() {
                    self.log(format!("{name}: bad address '{host}'"));
                    return Flow::Normal(1);
                }
                let body = format!("<html><body>{url}</body></html>");
                match output.filter(|o| o != "-") {
                    Some(path) => {
                        if name == "wget" {
                            self.log(format!("Connecting to {host} (188.184.67.127:80)"));
                            self.log(format!("saving to '{path}'"));
                        }
                        self.files.insert(path.clone(), body.clone());
                        self.effects.push((self.clock_ms, Effect::WriteFile(path.clone(), body)));
                        if name == "wget" {
                            self.log(format!("'{path}' saved"));
                        }
                    }
                    None => self.log(body),
                }
                Flow::Normal(0)
            }
            "cat" => {
                let mut status = 0;
                for path in args.iter().filter(|a| !a.starts_with('-')) {
                    match self.files.get(path).cloned() {
                        Some(content) => {
                            for line in content.lines() {
                                self.log(line.to_string());
                            }
                        }
                        None => {
                            self.log(format!("cat: can't open '{path}': No such file or directory"));
                            status = 1;
                        }
                    }
                }
                Flow::Normal(status)
            }
            "date" => {
                let line = self.date_string();
                self.log(line);
                Flow::Normal(0)
            }
            "hostname" => {
                let host = self.env.get("HOSTNAME").cloned().unwrap_or_default();
                self.log(host);
                Flow::Normal(0)
            }
            "env" | "printenv" => {
                let lines: Vec<String> = if args.is_empty() {
                    self.env.iter().map(|(k, v)| format!("{k}={v}")).collect()
                } else {
                    args.iter().filter_map(|key| self.env.get(key).cloned()).collect()
                };
                for line in lines {
                    self.log(line);
                }
                Flow::Normal(0)
            }
            "test" | "[" => {
                let args: Vec<&str> = args.iter().map(|s| s.as_str()).filter(|a| *a != "]").collect();
                let ok = match args.as_slice() {
                    ["-f", p] | ["-e", p] => self.files.contains_key(*p),
                    ["!", "-f", p] | ["!", "-e", p] => !self.files.contains_key(*p),
                    ["-d", _] => true,
                    ["-z", s] => s.is_empty(),
                    ["-n", s] => !s.is_empty(),
                    [a, "=", b] | [a, "==", b] => a == b,
                    [a, "!=", b] => a != b,
                    [a, op, b] => {
                        let (x, y) = (a.parse::<i64>().unwrap_or(0), b.parse::<i64>().unwrap_or(0));
                        match *op {
                            "-eq" => x == y,
                            "-ne" => x != y,
                            "-lt" => x < y,
                            "-le" => x <= y,
                            "-gt" => x > y,
                            "-ge" => x >= y,
                            _ => false,
                        }
                    }
                    [s] => !s.is_empty(),
                    _ => false,
                };
                Flow::Normal(if ok { 0 } else { 1 })
            }
            other => {
                self.log(format!("sh: {other}: not found"));
                Flow::Normal(127)
            }
        }
    }

    fn date_string(&self) -> String {
        let seconds = self.start_unix_seconds + (self.clock_ms / 1000) as i64;
        match jiff_like_date(seconds) {
            Some(s) => s,
            None => seconds.to_string(),
        }
    }

    fn expand(&mut self, word: &Word) -> String {
        let mut out = String::new();
        for part in &word.0 {
            match part {
                Part::Lit(s) => out.push_str(s),
                Part::Var(name) => out.push_str(self.env.get(name).map(|s| s.as_str()).unwrap_or("")),
                Part::Sub(cmd) => {
                    // $(cmd): run a simple command and capture its log output.
                    let before = self.effects.len();
                    let tokens = tokenize(cmd);
                    let mut parser = Parser { tokens, pos: 0 };
                    let node = parser.parse_list(&[]);
                    let _ = self.exec(&node);
                    let captured: Vec<String> = self
                        .effects
                        .drain(before..)
                        .filter_map(|(_, e)| match e {
                            Effect::Log(l) => Some(l),
                            _ => None,
                        })
                        .collect();
                    out.push_str(&captured.join(" "));
                }
            }
        }
        out
    }
}

fn jiff_like_date(unix_seconds: i64) -> Option<String> {
    // `date` prints e.g. "Wed Jan  1 00:00:30 UTC 2025".
    let days = unix_seconds.div_euclid(86400);
    let secs = unix_seconds.rem_euclid(86400);
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    // Civil-from-days (Howard Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if month <= 2 { y + 1 } else { y };
    let weekday = (days + 4).rem_euclid(7); // 1970-01-01 was a Thursday
    let wd = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][weekday as usize];
    let mon = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][(month - 1) as usize];
    Some(format!("{wd} {mon} {d:>2} {h:02}:{m:02}:{s:02} UTC {year}"))
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Lit(String),
    Var(String),
    Sub(String),
}

#[derive(Clone, Debug, PartialEq)]
struct Word(Vec<Part>);

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(Word),
    Semi,
    And,
    Or,
}

enum Node {
    Seq(Vec<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Loop { cond: Box<Node>, body: Box<Node>, until: bool },
    If { cond: Box<Node>, then: Box<Node>, otherwise: Option<Box<Node>> },
    Simple(Vec<Word>),
}

#[allow(unused_assignments)] // `in_word` is reset by the last flush too
fn tokenize(script: &str) -> Vec<Tok> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let mut parts: Vec<Part> = Vec::new();
    let mut lit = String::new();
    let mut in_word = false;
    macro_rules! flush {
        () => {
            if in_word {
                if !lit.is_empty() {
                    parts.push(Part::Lit(std::mem::take(&mut lit)));
                }
                tokens.push(Tok::Word(Word(std::mem::take(&mut parts))));
                in_word = false;
            }
        };
    }
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                flush!();
                i += 1;
            }
            '\n' | ';' => {
                flush!();
                tokens.push(Tok::Semi);
                i += 1;
            }
            '&' if chars.get(i + 1) == Some(&'&') => {
                flush!();
                tokens.push(Tok::And);
                i += 2;
            }
            '&' => {
                flush!(); // background `&` is treated as sequential
                tokens.push(Tok::Semi);
                i += 1;
            }
            '|' if chars.get(i + 1) == Some(&'|') => {
                flush!();
                tokens.push(Tok::Or);
                i += 2;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    lit.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '$' {
                        i = read_dollar(&chars, i, &mut lit, &mut parts);
                    } else if chars[i] == '\\' && i + 1 < chars.len() {
                        lit.push(chars[i + 1]);
                        i += 2;
                    } else {
                        lit.push(chars[i]);
                        i += 1;
                    }
                }
                i += 1;
            }
            '$' => {
                in_word = true;
                i = read_dollar(&chars, i, &mut lit, &mut parts);
            }
            '\\' if i + 1 < chars.len() => {
                in_word = true;
                if chars[i + 1] != '\n' {
                    lit.push(chars[i + 1]);
                }
                i += 2;
            }
            '>' | '<' | '|' => {
                // Redirections and pipes: the target is consumed; output goes to the log.
                flush!();
                i += 1;
                if chars.get(i) == Some(&'>') {
                    i += 1;
                }
                while i < chars.len() && chars[i] == ' ' {
                    i += 1;
                }
                if c != '|' {
                    while i < chars.len() && !" \t\n;&|".contains(chars[i]) {
                        i += 1;
                    }
                }
            }
            _ => {
                in_word = true;
                lit.push(c);
                i += 1;
            }
        }
    }
    flush!();
    tokens
}

fn read_dollar(chars: &[char], mut i: usize, lit: &mut String, parts: &mut Vec<Part>) -> usize {
    i += 1; // '$'
    match chars.get(i) {
        Some('(') => {
            let mut depth = 1;
            let start = i + 1;
            i += 1;
            while i < chars.len() && depth > 0 {
                match chars[i] {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(lit)));
            }
            parts.push(Part::Sub(chars[start..i - 1].iter().collect()));
            i
        }
        Some('{') => {
            let start = i + 1;
            while i < chars.len() && chars[i] != '}' {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            let name = name.split([':', '-']).next().unwrap_or("").to_string();
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(lit)));
            }
            parts.push(Part::Var(name));
            i + 1
        }
        Some(c) if c.is_ascii_alphanumeric() || *c == '_' => {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(lit)));
            }
            parts.push(Part::Var(chars[start..i].iter().collect()));
            i
        }
        _ => {
            lit.push('$');
            i
        }
    }
}

struct Parser {
    tokens: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek_word(&self) -> Option<String> {
        match self.tokens.get(self.pos) {
            Some(Tok::Word(Word(parts))) if parts.len() == 1 => match &parts[0] {
                Part::Lit(s) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Parses statements until one of `terminators` (a keyword) is next.
    fn parse_list(&mut self, terminators: &[&str]) -> Node {
        let mut items = Vec::new();
        loop {
            while matches!(self.tokens.get(self.pos), Some(Tok::Semi)) {
                self.pos += 1;
            }
            if self.pos >= self.tokens.len() {
                break;
            }
            if let Some(w) = self.peek_word() {
                if terminators.contains(&w.as_str()) {
                    break;
                }
            }
            items.push(self.parse_and_or(terminators));
        }
        Node::Seq(items)
    }

    fn parse_and_or(&mut self, terminators: &[&str]) -> Node {
        let mut left = self.parse_command(terminators);
        loop {
            match self.tokens.get(self.pos) {
                Some(Tok::And) => {
                    self.pos += 1;
                    let right = self.parse_command(terminators);
                    left = Node::And(Box::new(left), Box::new(right));
                }
                Some(Tok::Or) => {
                    self.pos += 1;
                    let right = self.parse_command(terminators);
                    left = Node::Or(Box::new(left), Box::new(right));
                }
                _ => return left,
            }
        }
    }

    fn expect_keyword(&mut self, keyword: &str) {
        while matches!(self.tokens.get(self.pos), Some(Tok::Semi)) {
            self.pos += 1;
        }
        if self.peek_word().as_deref() == Some(keyword) {
            self.pos += 1;
        }
    }

    fn parse_command(&mut self, terminators: &[&str]) -> Node {
        match self.peek_word().as_deref() {
            Some(kw @ ("while" | "until")) => {
                let until = kw == "until";
                self.pos += 1;
                let cond = self.parse_list(&["do"]);
                self.expect_keyword("do");
                let body = self.parse_list(&["done"]);
                self.expect_keyword("done");
                Node::Loop { cond: Box::new(cond), body: Box::new(body), until }
            }
            Some("if") => {
                self.pos += 1;
                let cond = self.parse_list(&["then"]);
                self.expect_keyword("then");
                let then = self.parse_list(&["else", "fi", "elif"]);
                let otherwise = match self.peek_word().as_deref() {
                    Some("else") => {
                        self.pos += 1;
                        Some(Box::new(self.parse_list(&["fi"])))
                    }
                    _ => None,
                };
                self.expect_keyword("fi");
                Node::If { cond: Box::new(cond), then: Box::new(then), otherwise }
            }
            _ => {
                let mut words = Vec::new();
                while let Some(Tok::Word(w)) = self.tokens.get(self.pos) {
                    if words.is_empty() {
                        if let Some(kw) = self.peek_word() {
                            if terminators.contains(&kw.as_str()) {
                                break;
                            }
                        }
                    }
                    words.push(w.clone());
                    self.pos += 1;
                }
                if words.is_empty() && self.pos < self.tokens.len() && !matches!(self.tokens[self.pos], Tok::Word(_)) {
                    // Stray operator: skip it.
                    self.pos += 1;
                }
                Node::Simple(words)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(image: &str, command: &[&str], args: &[&str]) -> Program {
        let c: Vec<String> = command.iter().map(|s| s.to_string()).collect();
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut env = BTreeMap::new();
        env.insert("HOSTNAME".to_string(), "pod-1".to_string());
        env.insert("GREETING".to_string(), "Warm greetings to".to_string());
        program_for(image, &c, &a, &env, 1_735_689_600)
    }

    #[test]
    fn servers_run_until_signalled_and_handle_sigterm() {
        let p = run("nginx:1.27", &[], &[]);
        assert!(!p.timeline.iter().any(|(_, e)| matches!(e, Effect::Exit(_))));
        assert_eq!(p.on_term, TermBehaviour::ExitsAfter(150, 0));
    }

    #[test]
    fn busybox_without_a_command_exits_zero() {
        assert_eq!(run("busybox", &[], &[]).timeline, vec![(0, Effect::Exit(0))]);
    }

    #[test]
    fn shell_scripts_play_out_on_virtual_time() {
        // The exec liveness example from the Kubernetes docs (pods/probe/exec-liveness.yaml).
        let p = run("registry.k8s.io/busybox", &["/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"], &[]);
        assert_eq!(p.timeline[0], (0, Effect::WriteFile("/tmp/healthy".into(), String::new())));
        assert_eq!(p.timeline[1], (30_000, Effect::RemoveFile("/tmp/healthy".into())));
        assert_eq!(p.timeline[2], (630_000, Effect::Exit(0)));
        assert_eq!(p.on_term, TermBehaviour::Ignores);
    }

    #[test]
    fn echo_variables_loops_and_exit_codes() {
        let p = run("busybox", &["sh", "-c"], &["echo \"$GREETING $HOSTNAME\" && i=0; while true; do echo tick; sleep 5; done"]);
        assert_eq!(p.timeline[0], (0, Effect::Log("Warm greetings to pod-1".into())));
        assert_eq!(p.timeline[1], (0, Effect::Log("tick".into())));
        assert_eq!(p.timeline[2], (5_000, Effect::Log("tick".into())));
        assert!(!p.timeline.iter().any(|(_, e)| matches!(e, Effect::Exit(_))));
        let p = run("busybox", &["sh", "-c", "sleep 2; exit 3"], &[]);
        assert_eq!(p.timeline, vec![(2_000, Effect::Exit(3))]);
        let p = run("busybox", &["sh", "-c", "false || echo fallback; false && echo never"], &[]);
        assert_eq!(p.timeline, vec![(0, Effect::Log("fallback".into())), (0, Effect::Exit(1))]);
    }

    #[test]
    fn exec_form_commands_and_unknown_programs() {
        assert_eq!(run("busybox", &["sleep", "3600"], &[]).timeline, vec![(3_600_000, Effect::Exit(0))]);
        let p = run("busybox", &["sh", "-c", "frobnicate"], &[]);
        assert_eq!(p.timeline, vec![(0, Effect::Log("sh: frobnicate: not found".into())), (0, Effect::Exit(127))]);
        let p = run("busybox", &["sh", "-c", "echo $(date)"], &[]);
        assert_eq!(p.timeline[0], (0, Effect::Log("Wed Jan  1 00:00:00 UTC 2025".into())));
        let p = run("busybox", &["sh", "-c", "if [ -f /x ]; then echo yes; else echo no; fi"], &[]);
        assert_eq!(p.timeline[0], (0, Effect::Log("no".into())));
    }
}
