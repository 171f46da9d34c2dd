//! The shell: one resumable interpreter with three flavours (busybox ash, dash, bash).
#![allow(clippy::result_large_err)]
//!
//! Execution is an explicit stack of [`Frame`]s over the `Arc`-shared syntax tree, so a run
//! can stop in the middle of a loop, a function, a command substitution or a pipeline when a
//! command sleeps, spawns or does network I/O, and continue on the next `resume`.
//!
//! * Commands this crate implements (applets, nested shells) run in-process as child
//!   [`Program`]s; their blocking steps are passed through to the host and the host's wake is
//!   routed back to them.
//! * Pipelines run their stages one after another, each in a subshell, feeding the buffered
//!   output of one stage to the next (a stage's output is capped at [`PIPE_CAPACITY`]; past
//!   it the writer gets `EPIPE`, which is how `yes | head -n 3` terminates).
//! * Background jobs (`&`) are subshells scheduled cooperatively: sleeps of all jobs and the
//!   foreground are merged into one host `Sleep`; network/spawn/compute calls are issued one
//!   at a time.
//! * Signals reach the shell only (as the kernel delivers them to PID 1). A trapped signal
//!   runs its trap after the running foreground command finishes (bash/dash/ash semantics:
//!   `sleep 600` is not interrupted, `wait` is). Untrapped TERM/INT/HUP/... are ignored by a
//!   PID-1 shell and kill any other shell with 128+n. After `exec`, signals go to the program
//!   that replaced the shell.

pub mod arith;
pub mod ast;
mod builtins;
mod expand;
pub mod parse;

use crate::program::{Os, Program, Signal, Spawn, Step, Wake};
use crate::sys::{self, FdTarget, Routed};
use ast::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Capacity of a pipeline stage's output buffer.
pub const PIPE_CAPACITY: usize = 1 << 20;
/// Capacity of a command substitution's output.
pub const SUBST_CAPACITY: usize = 16 << 20;
/// Frame-machine operations per resume before the shell yields a `Compute` step.
pub const OPS_PER_RESUME: u64 = 20_000;
/// CPU time charged per [`OPS_PER_RESUME`] operations.
pub const CPU_MS_PER_SLICE: u64 = 10;
/// Operations a new process costs the shell that creates it (fork, and exec of a program):
/// 1,000 operations, 0.5 ms of CPU, about what fork+exec of a small binary takes. Without it a
/// loop that forks and waits never accumulated a slice and ran thousands of iterations in an
/// instant (found by the shell fuzzer: 75 MB of output in 200 virtual ms).
pub const PROCESS_OPS: u64 = 1_000;
/// Deepest frame stack (function recursion guard).
pub const MAX_FRAMES: usize = 4_000;
/// Most background jobs alive at once.
pub const MAX_JOBS: usize = 64;
/// Deepest nesting of subshells (each is a level of host recursion).
pub const MAX_NEST: u32 = 24;

/// Which shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flavor {
    /// busybox ash (busybox and alpine `sh`), with its bash-compatible extensions.
    Ash,
    /// dash (debian/ubuntu `/bin/sh`).
    Dash,
    /// GNU bash 5.2.
    Bash,
}

/// A variable's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    /// Scalar.
    Str(String),
    /// Indexed array (bash).
    Arr(BTreeMap<usize, String>),
}

/// A shell variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    /// Value.
    pub val: Val,
    /// Exported to children.
    pub exported: bool,
    /// `readonly`.
    pub readonly: bool,
}

impl Var {
    fn scalar(&self) -> String {
        match &self.val {
            Val::Str(s) => s.clone(),
            Val::Arr(a) => a.get(&0).cloned().unwrap_or_default(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Opts {
    errexit: bool,
    xtrace: bool,
    nounset: bool,
    pipefail: bool,
    noglob: bool,
    nullglob: bool,
    noexec: bool,
    allexport: bool,
    verbose: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct InBuf {
    data: Vec<u8>,
    pos: usize,
}

type Fds = Vec<FdTarget>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChildKind {
    /// A command: its code becomes `$?`.
    Cmd,
    /// A command substitution: output goes to the Simple frame below.
    Subst,
    /// A pipeline stage: output goes to the Pipeline frame below.
    Stage,
    /// `exec`: the shell exits with the child's code.
    Exec,
}

/// Replay state of a compound command whose expansions may block (see [`Frame::Replay`]).
#[derive(Clone, Debug, Default)]
struct Replay {
    cached: Vec<String>,
    idx: usize,
    /// `[[ ]]` xtrace lines already printed by an earlier attempt.
    skip_traces: usize,
    traces: usize,
    blocked: Option<(Box<Child>, Step)>,
}

#[derive(Clone, Debug)]
struct Child {
    prog: Box<dyn Program>,
    fds: Fds,
    capture: Vec<u8>,
    limit: usize,
    kind: ChildKind,
    pid: u32,
    started: bool,
}

#[derive(Clone, Debug)]
enum Frame {
    Run(Arc<Cmd>),
    List {
        node: Arc<Cmd>,
        idx: usize,
    },
    AndOr {
        node: Arc<Cmd>,
        idx: usize,
    },
    Pipeline {
        node: Arc<Cmd>,
        idx: usize,
        input: Vec<u8>,
        statuses: Vec<i32>,
    },
    If {
        node: Arc<Compound>,
        arm: usize,
        in_body: bool,
    },
    While {
        node: Arc<Compound>,
        in_body: bool,
        status: i32,
    },
    For {
        var: String,
        items: Vec<String>,
        idx: usize,
        body: Arc<Cmd>,
        status: i32,
    },
    /// Expanding a `for` word list (may suspend on command substitutions).
    ForWords {
        node: Arc<Compound>,
        substs: Vec<String>,
    },
    ArithFor {
        node: Arc<Compound>,
        phase: u8,
        status: i32,
        substs: Vec<String>,
    },
    Case {
        node: Arc<Compound>,
        subject: Option<String>,
        arm: usize,
        substs: Vec<String>,
    },
    Simple {
        node: Arc<Cmd>,
        substs: Vec<String>,
        subst_status: Option<i32>,
    },
    Child(Box<Child>),
    Restore {
        fds: Fds,
        inputs: usize,
    },
    Func {
        saved_pos: Vec<String>,
        locals: Vec<(String, Option<Var>)>,
    },
    Source {
        saved_pos: Option<Vec<String>>,
    },
    /// `[[ ]]` or `(( ))` waiting for a blocking command substitution; replayed when it is done.
    Replay {
        node: Arc<Compound>,
        substs: Vec<String>,
        skip_traces: usize,
    },
    Trap {
        saved_status: i32,
    },
    Guard,
    Negate,
    /// Restores the xtrace nesting level (bash `eval` traces one level deeper).
    TraceDepth(u32),
    /// Exit with this status when reached (`set -e` after an ERR trap).
    ExitNow(i32),
    WaitJobs {
        pids: Vec<u32>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum TaskState {
    Ready(Wake),
    /// Sleeping until the first time; the second is when the sleep began (tasks that wake
    /// together run oldest sleep first, as the one with fewer wakeups in between would).
    Sleeping(u64, u64),
    Waiting,
    WaitingJobs,
    Host(Step, bool),
    Done,
}

#[derive(Clone, Debug)]
struct Job {
    pid: u32,
    prog: Box<dyn Program>,
    fds: Fds,
    state: TaskState,
    code: Option<i32>,
    capture: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Task {
    Fg,
    Job(usize),
}

/// Control-flow requests unwinding the frame stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unwind {
    Break(u32),
    Continue(u32),
    Return,
    Exit,
}

/// How a frame step ended.
enum Act {
    Push(Frame),
    Pop,
    Block(Step),
    Unwind(Unwind),
}

/// The shell interpreter (a [`Program`]).
#[derive(Clone, Debug)]
pub struct Shell {
    flavor: Flavor,
    /// Whether the shell's stdout is a terminal (its children inherit it).
    tty: bool,
    arg0: String,
    script_file: Option<String>,
    vars: BTreeMap<String, Var>,
    funcs: BTreeMap<String, Arc<Cmd>>,
    pos: Vec<String>,
    opts: Opts,
    status: i32,
    last_bg: Option<u32>,
    traps: BTreeMap<String, String>,
    pending_traps: Vec<Signal>,
    exit_trap_done: bool,
    cwd: String,
    fds: Fds,
    inputs: Vec<InBuf>,
    frames: Vec<Frame>,
    child_done: Option<(i32, Vec<u8>)>,
    pending_wake: Option<Wake>,
    wake_for_child: bool,
    jobs: Vec<Job>,
    fg: TaskState,
    outstanding: Option<Task>,
    pid: u32,
    subshell: bool,
    lineno: u32,
    start_ms: u64,
    exiting: Option<i32>,
    loops: u32,
    ops: u64,
    startup: Option<Result<Arc<Cmd>, parse::SyntaxError>>,
    started: bool,
    random_seeded: bool,
    interrupted: Option<Signal>,
    /// Set while a `[[ ]]`/`(( ))`/arithmetic `for` is being (re)evaluated: command substitutions
    /// that block suspend the compound command, which is replayed with their cached outputs.
    replay: Option<Replay>,
    /// Background jobs that slept since before the foreground's sleep run first this round.
    jobs_first: bool,
    in_trap: u32,
    exec_child: bool,
    trace_depth: u32,
    integers: std::collections::BTreeSet<String>,
    nest: u32,
    parse_warnings: Vec<String>,
    /// Commands come from a stdin that stays open (see [`Spawn::stdin_open`]).
    stdin_open: bool,
    /// Reading commands from a terminal (stdin open, stdout a tty, no `-c` or script): the
    /// shell prompts (PS1) before it waits for a command.
    interactive: bool,
    /// The prompt is on the terminal, waiting for the next line.
    prompted: bool,
}

/// What to run.
#[derive(Clone, Debug)]
pub enum Invocation {
    /// `sh -c 'script' [arg0 [args...]]`.
    Command(String),
    /// `sh script.sh args...` (the script's text and its path).
    Script {
        /// The file name as given.
        path: String,
        /// Its content.
        text: String,
    },
    /// Commands read from stdin (`sh` with no arguments, `sh -s`).
    Stdin,
}

fn default_fds() -> Fds {
    let mut v = vec![FdTarget::Closed; 10];
    v[0] = FdTarget::Input(0);
    v[1] = FdTarget::Stdout;
    v[2] = FdTarget::Stderr;
    v
}

impl Shell {
    /// A shell of this flavour for a [`Spawn`] (`argv` = `sh -c ...`, `bash script`, ...).
    /// Parses the options the real shells accept (`-c`, `-e`, `-x`, `-u`, `-s`, `-o opt`,
    /// `-l`, `-i` ignored); invalid options produce the shell's error at start.
    pub fn from_spawn(flavor: Flavor, spawn: &Spawn, script_text: impl Fn(&str) -> Result<String, crate::fs::Errno>) -> Shell {
        let name = spawn.argv.first().map(|a| crate::fs::basename(a)).unwrap_or_else(|| "sh".into());
        let mut sh = Shell::new(flavor, &name, spawn.env.clone(), &spawn.cwd, spawn.stdin.clone());
        sh.tty = spawn.tty;
        let args: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
        let mut i = 0;
        let mut command = None;
        let mut read_stdin = false;
        let mut err: Option<String> = None;
        while i < args.len() {
            let a = &args[i];
            if a == "--" {
                i += 1;
                break;
            }
            if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
                if a == "--login" || a == "--norc" || a == "--noprofile" || a == "--posix" {
                    i += 1;
                    continue;
                }
                let on = a.starts_with('-');
                for c in a[1..].chars() {
                    match c {
                        'c' => command = Some(()),
                        'e' => sh.opts.errexit = on,
                        'x' => sh.opts.xtrace = on,
                        'u' => sh.opts.nounset = on,
                        'f' => sh.opts.noglob = on,
                        'n' => sh.opts.noexec = on,
                        'a' => sh.opts.allexport = on,
                        'v' => sh.opts.verbose = on,
                        's' => read_stdin = true,
                        'l' | 'i' | 'm' | 'h' | 'p' | 'C' | 'b' => {}
                        'o' => {
                            i += 1;
                            if let Some(o) = args.get(i) {
                                if !sh.set_o(o, on) {
                                    err = Some(format!("{name}: {o}: invalid option name"));
                                }
                            }
                        }
                        other => {
                            err = Some(match flavor {
                                Flavor::Bash => format!(
                                    "{name}: -{other}: invalid option\nUsage:\t{name} [GNU long option] [option] ...\n\t{name} [option] script-file ..."
                                ),
                                Flavor::Dash => format!("{name}: 0: Illegal option -{other}"),
                                Flavor::Ash => format!("{name}: invalid option -- '{other}'"),
                            })
                        }
                    }
                }
                i += 1;
                continue;
            }
            break;
        }
        let rest: Vec<String> = args[i.min(args.len())..].to_vec();
        let invocation = if command.is_some() {
            match rest.first() {
                None => {
                    err = Some(match flavor {
                        Flavor::Bash => format!("{name}: -c: option requires an argument"),
                        Flavor::Dash => format!("{name}: 0: -c requires an argument"),
                        Flavor::Ash => format!("{name}: -c requires an argument"),
                    });
                    Invocation::Command(String::new())
                }
                Some(script) => {
                    if let Some(a0) = rest.get(1) {
                        sh.arg0 = a0.clone();
                    }
                    sh.pos = rest.iter().skip(2).cloned().collect();
                    Invocation::Command(script.clone())
                }
            }
        } else if read_stdin || rest.is_empty() {
            sh.pos = rest.clone();
            sh.stdin_open = spawn.stdin_open;
            sh.interactive = spawn.stdin_open && spawn.tty;
            if sh.interactive && !spawn.env.contains_key("PS1") {
                // An interactive shell's prompt: busybox ash's fancy prompt `\w \$ ` (`/ # `);
                // bash as Debian and Ubuntu images configure it in root's .bashrc,
                // `${debian_chroot:+($debian_chroot)}\u@\h:\w\$ ` (`root@myapp-debug:/# `);
                // dash keeps `$ ` (`# ` for root, at the prompt).
                let ps1 = match flavor {
                    Flavor::Ash => Some("\\w \\$ "),
                    Flavor::Bash => Some("\\u@\\h:\\w\\$ "),
                    Flavor::Dash => None,
                };
                if let Some(ps1) = ps1 {
                    sh.vars.insert("PS1".into(), Var { val: Val::Str(ps1.into()), exported: false, readonly: false });
                }
            }
            Invocation::Stdin
        } else {
            let path = rest[0].clone();
            sh.pos = rest[1..].to_vec();
            let full = crate::fs::join(&spawn.cwd, &path);
            match script_text(&full) {
                Ok(text) => {
                    sh.arg0 = path.clone();
                    Invocation::Script { path, text }
                }
                Err(e) => {
                    err = Some(match flavor {
                        Flavor::Bash => format!("{name}: {path}: {}", e.strerror()),
                        Flavor::Dash => format!("{name}: 0: cannot open {path}: {}", dash_open_err(e)),
                        Flavor::Ash => format!("{name}: can't open '{path}': {}", e.strerror()),
                    });
                    sh.status = if flavor == Flavor::Bash { 127 } else { 2 };
                    Invocation::Command(String::new())
                }
            }
        };
        if let Some(e) = err {
            let code = if sh.status != 0 { sh.status } else { 2 };
            sh.startup = Some(Err(parse::SyntaxError { line: 0, kind: parse::SyntaxKind::Unexpected(String::new()), source_line: e, expecting: None }));
            sh.status = code;
            return sh;
        }
        sh.load(invocation);
        sh
    }

    /// A shell with no script yet (use [`Shell::load`]).
    pub fn new(flavor: Flavor, arg0: &str, env: BTreeMap<String, String>, cwd: &str, stdin: Vec<u8>) -> Shell {
        let mut vars = BTreeMap::new();
        for (k, v) in env {
            vars.insert(k, Var { val: Val::Str(v), exported: true, readonly: false });
        }
        let mut sh = Shell {
            flavor,
            tty: false,
            arg0: arg0.to_string(),
            script_file: None,
            vars,
            funcs: BTreeMap::new(),
            pos: Vec::new(),
            opts: Opts::default(),
            status: 0,
            last_bg: None,
            traps: BTreeMap::new(),
            pending_traps: Vec::new(),
            exit_trap_done: false,
            cwd: if cwd.is_empty() { "/".into() } else { cwd.to_string() },
            fds: default_fds(),
            inputs: vec![InBuf { data: stdin, pos: 0 }],
            frames: Vec::new(),
            child_done: None,
            pending_wake: None,
            wake_for_child: false,
            jobs: Vec::new(),
            fg: TaskState::Ready(Wake::Start),
            outstanding: None,
            pid: 0,
            subshell: false,
            lineno: 1,
            start_ms: 0,
            exiting: None,
            loops: 0,
            ops: 0,
            startup: None,
            started: false,
            random_seeded: false,
            interrupted: None,
            replay: None,
            jobs_first: false,
            in_trap: 0,
            exec_child: false,
            trace_depth: 1,
            integers: std::collections::BTreeSet::new(),
            nest: 0,
            parse_warnings: Vec::new(),
            stdin_open: false,
            interactive: false,
            prompted: false,
        };
        if !sh.vars.contains_key("IFS") {
            let _ = sh.set_var("IFS", " \t\n");
            if let Some(v) = sh.vars.get_mut("IFS") {
                v.exported = false;
            }
        }
        for (k, v) in [("PS1", if flavor == Flavor::Bash { "\\s-\\v\\$ " } else { "$ " }), ("PS2", "> "), ("PS4", "+ "), ("OPTIND", "1")] {
            if !sh.vars.contains_key(k) {
                sh.vars.insert(k.into(), Var { val: Val::Str(v.into()), exported: false, readonly: false });
            }
        }
        if !sh.vars.contains_key("PWD") {
            let cwd = sh.cwd.clone();
            sh.vars.insert("PWD".into(), Var { val: Val::Str(cwd), exported: true, readonly: false });
        }
        sh
    }

    /// Sets what the shell will run on its first resume.
    pub fn load(&mut self, inv: Invocation) {
        let text = match inv {
            Invocation::Command(s) => s,
            Invocation::Script { path, text } => {
                self.script_file = Some(path);
                text
            }
            Invocation::Stdin => {
                let d = std::mem::take(&mut self.inputs[0].data);
                String::from_utf8_lossy(&d).into_owned()
            }
        };
        let text = if text.len() > 1 << 20 { text[..1 << 20].to_string() } else { text };
        let text = match text.strip_prefix("#!") {
            Some(_) if self.script_file.is_some() => text.to_string(),
            _ => text,
        };
        let (r, warnings) = parse::parse_with_warnings(&text, self.flavor);
        self.startup = Some(r);
        if self.flavor == Flavor::Bash {
            self.parse_warnings = warnings
                .into_iter()
                .map(|(line, delim)| format!("{}: line {line}: warning: here-document at line {line} delimited by end-of-file (wanted `{delim}')\n", self.arg0))
                .collect();
        }
    }

    /// The flavour.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// The value of a variable (tests, host inspection).
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).map(Var::scalar)
    }

    fn set_o(&mut self, o: &str, on: bool) -> bool {
        match o {
            "errexit" => self.opts.errexit = on,
            "xtrace" => self.opts.xtrace = on,
            "nounset" => self.opts.nounset = on,
            "pipefail" if self.flavor != Flavor::Dash => self.opts.pipefail = on,
            "noglob" => self.opts.noglob = on,
            "noexec" => self.opts.noexec = on,
            "allexport" => self.opts.allexport = on,
            "verbose" => self.opts.verbose = on,
            "posix" | "monitor" | "noclobber" | "ignoreeof" | "vi" | "emacs" | "nolog" | "notify" => {}
            _ => return false,
        }
        true
    }

    // ----- variables -------------------------------------------------------------------

    fn get_var(&self, name: &str) -> Option<String> {
        self.vars.get(name).map(Var::scalar)
    }

    fn set_var(&mut self, name: &str, value: &str) -> Result<(), String> {
        let computed;
        let value = if self.integers.contains(name) && value.parse::<i64>().is_err() {
            computed = arith::eval(value, &mut expand::Vars(self)).unwrap_or(0).to_string();
            computed.as_str()
        } else {
            value
        };
        if let Some(v) = self.vars.get_mut(name) {
            if v.readonly {
                return Err(self.readonly_msg(name));
            }
            v.val = Val::Str(value.to_string());
            if self.opts.allexport {
                v.exported = true;
            }
            return Ok(());
        }
        if name == "RANDOM" || name == "SECONDS" {
            return Ok(());
        }
        let exported = self.opts.allexport;
        self.vars.insert(name.to_string(), Var { val: Val::Str(value.to_string()), exported, readonly: false });
        Ok(())
    }

    fn readonly_msg(&self, name: &str) -> String {
        match self.flavor {
            Flavor::Bash => format!("{name}: readonly variable"),
            _ => format!("{name}: is read only"),
        }
    }

    fn set_array_elem(&mut self, name: &str, idx: usize, value: &str) -> Result<(), String> {
        let ro = self.vars.get(name).is_some_and(|v| v.readonly);
        if ro {
            return Err(self.readonly_msg(name));
        }
        let v = self.vars.entry(name.to_string()).or_insert(Var { val: Val::Arr(BTreeMap::new()), exported: false, readonly: false });
        match &mut v.val {
            Val::Arr(a) => {
                a.insert(idx, value.to_string());
            }
            Val::Str(s) => {
                let mut a = BTreeMap::new();
                if !s.is_empty() || idx != 0 {
                    a.insert(0, std::mem::take(s));
                }
                a.insert(idx, value.to_string());
                v.val = Val::Arr(a);
            }
        }
        Ok(())
    }

    fn env_for_child(&self, extra: &[(String, String)]) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        for (k, v) in &self.vars {
            if v.exported {
                if let Val::Str(s) = &v.val {
                    env.insert(k.clone(), s.clone());
                }
            }
        }
        for (k, v) in extra {
            env.insert(k.clone(), v.clone());
        }
        env
    }

    // ----- messages --------------------------------------------------------------------

    /// `sh: ` prefix for errors of the shell itself (with line numbers where the flavour
    /// prints them).
    fn prefix(&self, cmd: Option<&str>) -> String {
        let a0 = &self.arg0;
        match self.flavor {
            Flavor::Bash => {
                let who = self.script_file.clone().unwrap_or_else(|| a0.clone());
                match cmd {
                    Some(c) => format!("{who}: line {}: {c}: ", self.lineno),
                    None => format!("{who}: line {}: ", self.lineno),
                }
            }
            Flavor::Dash => match cmd {
                Some(c) => format!("{a0}: {}: {c}: ", self.lineno),
                None => format!("{a0}: {}: ", self.lineno),
            },
            Flavor::Ash => {
                let script = self.script_file.is_some();
                match (cmd, script) {
                    (Some(c), true) => format!("{a0}: {c}: line {}: ", self.lineno),
                    (Some(c), false) => format!("{a0}: {c}: line {}: ", self.lineno.saturating_sub(1)),
                    (None, true) => format!("{a0}: line {}: ", self.lineno),
                    (None, false) => format!("{a0}: "),
                }
            }
        }
    }

    fn err_msg(&mut self, os: &mut dyn Os, cmd: Option<&str>, msg: &str) {
        let line = format!("{}{}\n", self.prefix(cmd), msg);
        self.write_fd(os, 2, line.as_bytes());
    }

    /// PS1 expanded as the shells expand it (`\u`, `\h`, `\H`, `\w`, `\W`, `\$`, `\s`, `\v`,
    /// `\\`; dash expands none of them and prompts `# ` for root).
    fn prompt(&self, os: &mut dyn Os) -> String {
        let uid = os.creds().uid;
        let ps1 = self.get_var("PS1").unwrap_or_default();
        if self.flavor == Flavor::Dash {
            return if ps1 == "$ " && uid == 0 { "# ".into() } else { ps1 };
        }
        let cwd = self.cwd.clone();
        let home = self.get_var("HOME").unwrap_or_default();
        let w = if !home.is_empty() && home != "/" && (cwd == home || cwd.starts_with(&format!("{home}/"))) {
            format!("~{}", &cwd[home.len()..])
        } else {
            cwd.clone()
        };
        let user = || -> String {
            let passwd = os.fs_ref().read("/etc/passwd").map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
            passwd
                .lines()
                .find_map(|l| {
                    let f: Vec<&str> = l.split(':').collect();
                    (f.len() > 2 && f[2].parse::<u32>().ok() == Some(uid)).then(|| f[0].to_string())
                })
                .unwrap_or_else(|| if uid == 0 { "root".into() } else { uid.to_string() })
        };
        let host = os.hostname();
        let mut out = String::new();
        let mut chars = ps1.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('u') => out.push_str(&user()),
                Some('h') => out.push_str(host.split('.').next().unwrap_or(&host)),
                Some('H') => out.push_str(&host),
                Some('w') => out.push_str(&w),
                Some('W') => out.push_str(if cwd == home && !home.is_empty() { "~" } else { cwd.rsplit('/').find(|p| !p.is_empty()).unwrap_or("/") }),
                Some('$') => out.push(if uid == 0 { '#' } else { '$' }),
                Some('s') => out.push_str(&self.arg0),
                Some('v') => out.push_str("5.2"),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        }
        out
    }

    fn write_fd(&mut self, os: &mut dyn Os, fd: usize, data: &[u8]) -> bool {
        let t = self.fds.get(fd).cloned().unwrap_or(FdTarget::Closed);
        sys::route(os, &t, data, None).is_ok()
    }

    // ----- the program -----------------------------------------------------------------

    fn start(&mut self, os: &mut dyn Os) -> Option<i32> {
        self.started = true;
        if self.pid == 0 {
            self.pid = os.pid();
        }
        self.start_ms = os.now_ms();
        if !self.vars.contains_key("HOSTNAME") && self.flavor == Flavor::Bash {
            let h = os.hostname();
            self.vars.insert("HOSTNAME".into(), Var { val: Val::Str(h), exported: false, readonly: false });
        }
        if !self.vars.contains_key("PPID") {
            let p = os.ppid();
            self.vars.insert("PPID".into(), Var { val: Val::Str(p.to_string()), exported: false, readonly: false });
        }
        for w in std::mem::take(&mut self.parse_warnings) {
            let _ = os.write_stderr(w.as_bytes());
        }
        match self.startup.take() {
            Some(Ok(cmd)) => {
                if self.opts.noexec {
                    return Some(0);
                }
                self.frames.push(Frame::Run(cmd));
                None
            }
            Some(Err(e)) => {
                let msg = if e.line == 0 {
                    e.source_line.clone()
                } else if self.flavor == Flavor::Ash && self.script_file.is_some() {
                    // busybox ash names the line for scripts: `script: line 2: syntax error: ...`.
                    let m = e.message(self.flavor, &self.arg0);
                    match m.strip_prefix(&format!("{}: ", self.arg0)) {
                        Some(rest) => format!("{}: line {}: {rest}", self.arg0, e.line),
                        None => m,
                    }
                } else {
                    e.message(self.flavor, &self.arg0)
                };
                let _ = os.write_stderr(format!("{msg}\n").as_bytes());
                Some(if e.line == 0 { self.status } else { 2 })
            }
            None => Some(0),
        }
    }

    fn make_subshell(&self, os: &mut dyn Os, cmd: Arc<Cmd>, stdin: Vec<u8>) -> Shell {
        let cmd = if self.nest + 1 >= MAX_NEST {
            // Too deep: the subshell reports the error instead of running `cmd`.
            parse::parse("echo \"kubesim: subshell nesting too deep\" >&2; exit 2", self.flavor).unwrap_or(cmd)
        } else {
            cmd
        };
        let mut s = Shell {
            flavor: self.flavor,
            tty: self.tty,
            arg0: self.arg0.clone(),
            script_file: self.script_file.clone(),
            vars: self.vars.clone(),
            funcs: self.funcs.clone(),
            pos: self.pos.clone(),
            opts: self.opts.clone(),
            status: self.status,
            last_bg: self.last_bg,
            traps: self.traps.iter().filter(|(_, v)| v.is_empty()).map(|(k, v)| (k.clone(), v.clone())).collect(),
            pending_traps: Vec::new(),
            exit_trap_done: false,
            cwd: self.cwd.clone(),
            fds: default_fds(),
            inputs: vec![InBuf { data: stdin, pos: 0 }],
            frames: vec![Frame::Run(cmd)],
            child_done: None,
            pending_wake: None,
            wake_for_child: false,
            jobs: Vec::new(),
            fg: TaskState::Ready(Wake::Start),
            outstanding: None,
            pid: self.pid,
            subshell: true,
            lineno: self.lineno,
            start_ms: self.start_ms,
            exiting: None,
            loops: 0,
            ops: 0,
            startup: None,
            started: true,
            random_seeded: self.random_seeded,
            interrupted: None,
            replay: None,
            jobs_first: false,
            in_trap: 0,
            exec_child: false,
            trace_depth: self.trace_depth,
            integers: self.integers.clone(),
            nest: self.nest + 1,
            parse_warnings: Vec::new(),
            stdin_open: false,
            interactive: false,
            prompted: false,
        };
        let _ = os;
        s.loops = 0;
        s
    }

    /// Runs the foreground frame machine until it blocks or exits.
    fn run_fg(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if !self.started {
            if let Some(code) = self.start(os) {
                return Step::Exit(code);
            }
        } else if self.wake_for_child {
            self.pending_wake = Some(wake);
        } else if let Wake::Signal(s) = wake {
            self.interrupted = Some(s);
        }
        self.wake_for_child = false;
        // Operations carry over between resumes (a shell that waits for children between
        // short runs still pays for them), a slice of CPU at a time.
        loop {
            self.ops += 1;
            if self.ops > OPS_PER_RESUME {
                self.ops -= OPS_PER_RESUME;
                return Step::Compute { cpu_ms: CPU_MS_PER_SLICE, threads: 1 };
            }
            // Pending traps run between commands.
            if !self.pending_traps.is_empty() && !matches!(self.frames.last(), Some(Frame::Child(_))) && self.exiting.is_none() {
                let sig = self.pending_traps.remove(0);
                if let Some(action) = self.traps.get(sig.name()).cloned() {
                    if !action.is_empty() {
                        if let Ok(cmd) = parse::parse(&action, self.flavor) {
                            let saved = self.status;
                            self.frames.push(Frame::Trap { saved_status: saved });
                            self.in_trap += 1;
                            self.frames.push(Frame::Run(cmd));
                        }
                    }
                }
                continue;
            }
            let Some(frame) = self.frames.pop() else {
                // Commands read from a stdin that stays open: wait for more (an interactive
                // shell in a container with `stdin: true`), unless the script said exit.
                if self.stdin_open && self.exiting.is_none() {
                    if self.interactive && !self.prompted {
                        self.prompted = true;
                        let prompt = self.prompt(os);
                        self.write_fd(os, 2, prompt.as_bytes());
                    }
                    return Step::Wait;
                }
                // End of script (or exit): EXIT trap, then exit.
                if !self.exit_trap_done {
                    self.exit_trap_done = true;
                    if let Some(action) = self.traps.get("EXIT").cloned() {
                        if !action.is_empty() {
                            if let Ok(cmd) = parse::parse(&action, self.flavor) {
                                let code = self.exiting.unwrap_or(self.status);
                                self.exiting = None;
                                self.status = code;
                                self.frames.push(Frame::Trap { saved_status: code });
                                self.in_trap += 1;
                                self.frames.push(Frame::Run(cmd));
                                continue;
                            }
                        }
                    }
                }
                let code = self.exiting.unwrap_or(self.status);
                return Step::Exit(code & 0xff);
            };
            if self.frames.len() > MAX_FRAMES {
                self.frames.clear();
                self.err_msg(os, None, "maximum recursion depth exceeded");
                self.exiting = Some(if self.flavor == Flavor::Bash { 1 } else { 2 });
                continue;
            }
            let act = self.step_frame(os, frame);
            match act {
                Act::Push(f) => self.frames.push(f),
                Act::Pop => {}
                Act::Block(step) => {
                    self.wake_for_child = matches!(self.frames.last(), Some(Frame::Child(_)));
                    return step;
                }
                Act::Unwind(u) => self.unwind(os, u),
            }
        }
    }

    /// Pops frames for break/continue/return/exit.
    fn unwind(&mut self, os: &mut dyn Os, u: Unwind) {
        let _ = os;
        match u {
            Unwind::Exit => {
                // Keep nothing but run the EXIT trap (in run_fg) — unless inside a trap that
                // exits: then exit directly.
                while let Some(f) = self.frames.pop() {
                    self.pop_cleanup(f);
                }
                if self.exiting.is_none() {
                    self.exiting = Some(self.status);
                }
            }
            Unwind::Return => {
                while let Some(f) = self.frames.pop() {
                    let stop = matches!(f, Frame::Func { .. } | Frame::Source { .. });
                    if matches!(f, Frame::Trap { .. }) {
                        // return inside a trap outside a function: ends the trap
                        self.in_trap = self.in_trap.saturating_sub(1);
                        return;
                    }
                    self.pop_cleanup(f);
                    if stop {
                        return;
                    }
                }
                // `return` at top level: exits the script (dash/ash) like bash's error case.
                self.exiting = Some(self.status);
            }
            Unwind::Break(mut n) | Unwind::Continue(mut n) => {
                let is_cont = matches!(u, Unwind::Continue(_));
                while let Some(f) = self.frames.pop() {
                    let is_loop = matches!(f, Frame::While { .. } | Frame::For { .. } | Frame::ArithFor { .. });
                    if matches!(f, Frame::Func { .. }) {
                        self.pop_cleanup(f);
                        return;
                    }
                    if is_loop {
                        n -= 1;
                        if n == 0 {
                            self.loops = self.loops.saturating_sub(1);
                            if is_cont {
                                // Resume the loop at its next iteration.
                                let f = match f {
                                    Frame::While { node, .. } => Frame::While { node, in_body: true, status: self.status },
                                    Frame::For { var, items, idx, body, .. } => Frame::For { var, items, idx, body, status: self.status },
                                    Frame::ArithFor { node, .. } => Frame::ArithFor { node, phase: 3, status: self.status, substs: Vec::new() },
                                    other => other,
                                };
                                self.loops += 1;
                                self.frames.push(f);
                            } else {
                                self.status = 0;
                            }
                            return;
                        }
                        self.loops = self.loops.saturating_sub(1);
                        continue;
                    }
                    self.pop_cleanup(f);
                }
            }
        }
    }

    /// Side effects of discarding a frame during unwinding.
    fn pop_cleanup(&mut self, f: Frame) {
        match f {
            Frame::Restore { fds, inputs } => {
                self.fds = fds;
                self.inputs.truncate(inputs.max(1));
            }
            Frame::Func { saved_pos, locals } => {
                self.pos = saved_pos;
                self.restore_locals(locals);
            }
            Frame::Source { saved_pos: Some(p) } => self.pos = p,
            Frame::Trap { .. } => self.in_trap = self.in_trap.saturating_sub(1),
            Frame::TraceDepth(d) => self.trace_depth = d,
            Frame::While { .. } | Frame::For { .. } | Frame::ArithFor { .. } => self.loops = self.loops.saturating_sub(1),
            _ => {}
        }
    }

    fn restore_locals(&mut self, locals: Vec<(String, Option<Var>)>) {
        for (name, old) in locals.into_iter().rev() {
            match old {
                Some(v) => {
                    self.vars.insert(name, v);
                }
                None => {
                    self.vars.remove(&name);
                }
            }
        }
    }

    fn in_cond(&self) -> bool {
        self.frames.iter().any(|f| matches!(f, Frame::Guard | Frame::Negate))
    }

    /// After a command finished with `self.status`: `set -e`.
    fn check_errexit(&mut self) -> Option<Act> {
        if self.status == 0 || self.in_cond() {
            return None;
        }
        // bash's ERR trap runs first (then `set -e` exits).
        if self.flavor != Flavor::Dash && self.in_trap == 0 {
            if let Some(action) = self.traps.get("ERR").filter(|a| !a.is_empty()).cloned() {
                if let Ok(cmd) = parse::parse(&action, self.flavor) {
                    if self.opts.errexit {
                        self.frames.push(Frame::ExitNow(self.status));
                    }
                    self.frames.push(Frame::Trap { saved_status: self.status });
                    self.in_trap += 1;
                    self.frames.push(Frame::Run(cmd));
                    return Some(Act::Pop);
                }
            }
        }
        if self.opts.errexit {
            return Some(Act::Unwind(Unwind::Exit));
        }
        None
    }

    fn step_frame(&mut self, os: &mut dyn Os, frame: Frame) -> Act {
        match frame {
            Frame::Run(cmd) => self.run_cmd(os, cmd),
            Frame::List { node, idx } => {
                let Cmd::List(items) = &*node else { return Act::Pop };
                if idx >= items.len() {
                    return Act::Pop;
                }
                let (cmd, bg) = items[idx].clone();
                self.frames.push(Frame::List { node: node.clone(), idx: idx + 1 });
                if bg {
                    self.start_job(os, cmd);
                    return Act::Pop;
                }
                Act::Push(Frame::Run(cmd))
            }
            Frame::AndOr { node, idx } => {
                let Cmd::AndOr { rest, .. } = &*node else { return Act::Pop };
                // idx = number of `rest` entries already considered.
                let mut i = idx;
                while i < rest.len() {
                    let (is_and, cmd) = &rest[i];
                    let run = if *is_and { self.status == 0 } else { self.status != 0 };
                    i += 1;
                    if run {
                        let last = i == rest.len();
                        self.frames.push(Frame::AndOr { node: node.clone(), idx: i });
                        if !last {
                            self.frames.push(Frame::Guard);
                        }
                        return Act::Push(Frame::Run(cmd.clone()));
                    }
                }
                Act::Pop
            }
            Frame::Guard => Act::Pop,
            Frame::TraceDepth(d) => {
                self.trace_depth = d;
                Act::Pop
            }
            Frame::ExitNow(code) => {
                self.status = code;
                self.exiting = Some(code);
                Act::Unwind(Unwind::Exit)
            }
            Frame::Negate => {
                self.status = if self.status == 0 { 1 } else { 0 };
                Act::Pop
            }
            Frame::Pipeline { node, idx, input, mut statuses } => {
                let Cmd::Pipeline { bang, cmds } = &*node else { return Act::Pop };
                if idx > 0 {
                    // A stage just finished.
                    let (code, out) = self.child_done.take().unwrap_or((self.status, Vec::new()));
                    statuses.push(code);
                    if idx == cmds.len() {
                        let mut st = *statuses.last().unwrap_or(&0);
                        if self.opts.pipefail {
                            st = statuses.iter().rev().copied().find(|&c| c != 0).unwrap_or(0);
                        }
                        if self.flavor == Flavor::Bash {
                            let arr: BTreeMap<usize, String> = statuses.iter().enumerate().map(|(i, c)| (i, c.to_string())).collect();
                            self.vars.insert("PIPESTATUS".into(), Var { val: Val::Arr(arr), exported: false, readonly: false });
                        }
                        self.status = if *bang { (st == 0) as i32 } else { st };
                        if !*bang {
                            if let Some(a) = self.check_errexit() {
                                return a;
                            }
                        }
                        return Act::Pop;
                    }
                    return self.start_stage(os, node.clone(), idx, out, statuses);
                }
                let _ = input;
                self.start_stage(os, node.clone(), 0, Vec::new(), statuses)
            }
            Frame::If { node, arm, in_body } => {
                let Compound::If { arms, else_ } = &*node else { return Act::Pop };
                if in_body {
                    return Act::Pop;
                }
                if arm == 0 {
                    // first visit: evaluate condition 0
                    self.frames.push(Frame::If { node: node.clone(), arm: 1, in_body: false });
                    self.frames.push(Frame::Guard);
                    return Act::Push(Frame::Run(arms[0].0.clone()));
                }
                // condition arm-1 finished with self.status
                let k = arm - 1;
                if self.status == 0 {
                    self.frames.push(Frame::If { node: node.clone(), arm, in_body: true });
                    return Act::Push(Frame::Run(arms[k].1.clone()));
                }
                if arm < arms.len() {
                    self.frames.push(Frame::If { node: node.clone(), arm: arm + 1, in_body: false });
                    self.frames.push(Frame::Guard);
                    return Act::Push(Frame::Run(arms[arm].0.clone()));
                }
                match else_ {
                    Some(e) => {
                        self.frames.push(Frame::If { node: node.clone(), arm, in_body: true });
                        Act::Push(Frame::Run(e.clone()))
                    }
                    None => {
                        self.status = 0;
                        Act::Pop
                    }
                }
            }
            Frame::While { node, in_body, status } => {
                let Compound::While { until, cond, body } = &*node else { return Act::Pop };
                if !in_body {
                    // condition finished
                    let go = if *until { self.status != 0 } else { self.status == 0 };
                    if !go {
                        self.status = status;
                        self.loops = self.loops.saturating_sub(1);
                        return Act::Pop;
                    }
                    self.frames.push(Frame::While { node: node.clone(), in_body: true, status });
                    return Act::Push(Frame::Run(body.clone()));
                }
                // body finished (or first entry with in_body = true): evaluate condition
                let st = self.status;
                self.frames.push(Frame::While { node: node.clone(), in_body: false, status: st });
                self.frames.push(Frame::Guard);
                Act::Push(Frame::Run(cond.clone()))
            }
            Frame::For { var, items, idx, body, status } => {
                let _ = status;
                if idx >= items.len() {
                    self.loops = self.loops.saturating_sub(1);
                    if items.is_empty() {
                        self.status = 0;
                    }
                    return Act::Pop;
                }
                if self.opts.xtrace && self.flavor == Flavor::Bash {
                    let words: Vec<String> = items.iter().map(|w| self.quote_trace(w)).collect();
                    let line = format!("{}for {var} in {}\n", self.trace_prefix(&self.ps4()), words.join(" "));
                    self.write_fd(os, 2, line.as_bytes());
                }
                if let Err(e) = self.set_var(&var, &items[idx]) {
                    self.err_msg(os, None, &e);
                    self.status = 1;
                    self.loops = self.loops.saturating_sub(1);
                    return Act::Pop;
                }
                self.frames.push(Frame::For { var, items, idx: idx + 1, body: body.clone(), status: 0 });
                Act::Push(Frame::Run(body))
            }
            Frame::ArithFor { node, phase, status, mut substs } => {
                if let Some((_, out)) = self.child_done.take() {
                    substs.push(strip_trailing_newlines(&out));
                }
                let Compound::ArithFor { init, cond, step, body } = &*node else { return Act::Pop };
                // phase 0: init, 1: cond, 2: body done → step, 3: continue → step.
                // A blocking command substitution suspends the frame at its phase; the
                // expression is replayed with the cached outputs (see `Frame::Replay`).
                let status = if phase == 2 { self.status } else { status };
                let mut ph = phase;
                loop {
                    let w = match ph {
                        0 => init,
                        1 => cond,
                        _ => step,
                    };
                    self.replay = Some(Replay { cached: std::mem::take(&mut substs), ..Replay::default() });
                    let r = match self.expand_str_nosubst(os, w) {
                        Ok(text) if text.trim().is_empty() => Ok(1),
                        Ok(text) => {
                            self.replay = None;
                            self.arith(os, &text)
                        }
                        Err(a) => Err(a),
                    };
                    let rp = self.replay.take().unwrap_or_default();
                    if let Some((child, st)) = rp.blocked {
                        let phase = if ph == 2 { 3 } else { ph };
                        self.frames.push(Frame::ArithFor { node: node.clone(), phase, status, substs: rp.cached });
                        self.frames.push(Frame::Child(child));
                        return Act::Block(st);
                    }
                    let v = match r {
                        Ok(v) => v,
                        Err(a) => return a,
                    };
                    if ph != 1 {
                        ph = 1;
                        continue;
                    }
                    if v == 0 {
                        self.loops = self.loops.saturating_sub(1);
                        self.status = status;
                        return Act::Pop;
                    }
                    self.frames.push(Frame::ArithFor { node: node.clone(), phase: 2, status: 0, substs: Vec::new() });
                    return Act::Push(Frame::Run(body.clone()));
                }
            }
            Frame::Case { node, subject, arm, substs } => self.step_case(os, node, subject, arm, substs),
            Frame::ForWords { node, mut substs } => {
                if let Some((_, out)) = self.child_done.take() {
                    substs.push(strip_trailing_newlines(&out));
                }
                let Compound::For { var, words: Some(ws), body } = &*node else { return Act::Pop };
                let mut ctx = expand::Ctx { cached: substs, idx: 0, last_status: None };
                match self.expand_fields(os, ws, &mut ctx) {
                    Ok(items) => {
                        self.loops += 1;
                        Act::Push(Frame::For { var: var.clone(), items, idx: 0, body: body.clone(), status: 0 })
                    }
                    Err(expand::Need::Blocked(child, step)) => {
                        self.frames.push(Frame::ForWords { node: node.clone(), substs: ctx.cached });
                        self.frames.push(Frame::Child(child));
                        Act::Block(step)
                    }
                    Err(expand::Need::Fail(a)) => a,
                }
            }
            Frame::Simple { node, substs, subst_status } => self.step_simple(os, node, substs, subst_status),
            Frame::Child(c) => self.step_child(os, c),
            Frame::Restore { fds, inputs } => {
                self.fds = fds;
                self.inputs.truncate(inputs.max(1));
                Act::Pop
            }
            Frame::Func { saved_pos, locals } => {
                self.pos = saved_pos;
                self.restore_locals(locals);
                Act::Pop
            }
            Frame::Replay { node, mut substs, skip_traces } => {
                if let Some((_, out)) = self.child_done.take() {
                    substs.push(strip_trailing_newlines(&out));
                }
                self.run_replayable(os, node, substs, skip_traces)
            }
            Frame::Source { saved_pos } => {
                if let Some(p) = saved_pos {
                    self.pos = p;
                }
                Act::Pop
            }
            Frame::Trap { saved_status } => {
                self.in_trap = self.in_trap.saturating_sub(1);
                if self.exiting.is_none() {
                    self.status = saved_status;
                }
                Act::Pop
            }
            Frame::WaitJobs { pids } => self.step_wait(os, pids),
        }
    }

    fn run_cmd(&mut self, os: &mut dyn Os, cmd: Arc<Cmd>) -> Act {
        match &*cmd {
            Cmd::Simple(s) => {
                self.lineno = s.line;
                Act::Push(Frame::Simple { node: cmd.clone(), substs: Vec::new(), subst_status: None })
            }
            Cmd::List(items) => {
                if items.is_empty() {
                    return Act::Pop;
                }
                Act::Push(Frame::List { node: cmd.clone(), idx: 0 })
            }
            Cmd::AndOr { first, .. } => {
                self.frames.push(Frame::AndOr { node: cmd.clone(), idx: 0 });
                self.frames.push(Frame::Guard);
                Act::Push(Frame::Run(first.clone()))
            }
            Cmd::Pipeline { bang, cmds } => {
                if cmds.len() == 1 {
                    if *bang {
                        self.frames.push(Frame::Negate);
                    }
                    return Act::Push(Frame::Run(cmds[0].clone()));
                }
                if *bang {
                    self.frames.push(Frame::Guard);
                }
                Act::Push(Frame::Pipeline { node: cmd.clone(), idx: 0, input: Vec::new(), statuses: Vec::new() })
            }
            Cmd::Func { name, body } => {
                self.funcs.insert(name.clone(), body.clone());
                self.status = 0;
                Act::Pop
            }
            Cmd::Compound(c, redirs, line) => {
                self.lineno = *line;
                if !redirs.is_empty() {
                    let saved = self.fds.clone();
                    let ninputs = self.inputs.len();
                    match self.apply_redirs_nosubst(os, redirs) {
                        Ok(()) => {}
                        Err(()) => {
                            self.fds = saved;
                            self.inputs.truncate(ninputs);
                            self.status = if self.flavor == Flavor::Bash { 1 } else { 2 };
                            return Act::Pop;
                        }
                    }
                    self.frames.push(Frame::Restore { fds: saved, inputs: ninputs });
                }
                self.run_compound(os, c.clone())
            }
        }
    }

    fn run_compound(&mut self, os: &mut dyn Os, c: Arc<Compound>) -> Act {
        match &*c {
            Compound::Group(body) => Act::Push(Frame::Run(body.clone())),
            Compound::Subshell(body) => {
                let stdin = self.remaining_stdin();
                let sub = self.make_subshell(os, body.clone(), stdin);
                let pid = self.new_process(os);
                let fds = self.child_fds();
                Act::Push(Frame::Child(Box::new(Child { prog: Box::new(sub), fds, capture: Vec::new(), limit: 0, kind: ChildKind::Cmd, pid, started: false })))
            }
            Compound::If { .. } => Act::Push(Frame::If { node: c.clone(), arm: 0, in_body: false }),
            Compound::While { .. } => {
                self.loops += 1;
                self.status = 0;
                Act::Push(Frame::While { node: c.clone(), in_body: true, status: 0 })
            }
            Compound::For { var, words, body } => match words {
                None => {
                    self.loops += 1;
                    Act::Push(Frame::For { var: var.clone(), items: self.pos.clone(), idx: 0, body: body.clone(), status: 0 })
                }
                Some(_) => Act::Push(Frame::ForWords { node: c.clone(), substs: Vec::new() }),
            },
            Compound::ArithFor { .. } => {
                self.loops += 1;
                Act::Push(Frame::ArithFor { node: c.clone(), phase: 0, status: 0, substs: Vec::new() })
            }
            Compound::Case { .. } => Act::Push(Frame::Case { node: c.clone(), subject: None, arm: 0, substs: Vec::new() }),
            Compound::Arith(_) | Compound::Cond(_) => self.run_replayable(os, c.clone(), Vec::new(), 0),
        }
    }

    /// Runs `(( ))` or `[[ ]]` with the outputs of already finished command substitutions;
    /// a substitution that blocks suspends the command in a [`Frame::Replay`].
    fn run_replayable(&mut self, os: &mut dyn Os, node: Arc<Compound>, substs: Vec<String>, skip_traces: usize) -> Act {
        self.replay = Some(Replay { cached: substs, skip_traces, ..Replay::default() });
        let act = self.replayable(os, &node);
        let rp = self.replay.take().unwrap_or_default();
        if let Some((child, step)) = rp.blocked {
            self.frames.push(Frame::Replay { node, substs: rp.cached, skip_traces: rp.traces });
            self.frames.push(Frame::Child(child));
            return Act::Block(step);
        }
        act
    }

    fn replayable(&mut self, os: &mut dyn Os, c: &Compound) -> Act {
        match c {
            Compound::Arith(w) => {
                let text = match self.expand_str_nosubst(os, w) {
                    Ok(t) => t,
                    Err(a) => return a,
                };
                self.replay = None;
                if self.opts.xtrace {
                    let line = format!("{}(( {} ))\n", self.trace_prefix(&self.ps4()), text);
                    self.write_fd(os, 2, line.as_bytes());
                }
                match self.arith(os, &text) {
                    Ok(v) => {
                        self.status = (v == 0) as i32;
                        if let Some(a) = self.check_errexit() {
                            return a;
                        }
                        Act::Pop
                    }
                    Err(a) => a,
                }
            }
            Compound::Cond(e) => {
                let r = self.eval_cond(os, e);
                if self.replay.as_ref().is_some_and(|r| r.blocked.is_some()) {
                    return Act::Pop;
                }
                match r {
                    Ok(b) => {
                        self.status = if b { 0 } else { 1 };
                        if let Some(a) = self.check_errexit() {
                            return a;
                        }
                        Act::Pop
                    }
                    Err(Some(a)) => a,
                    Err(None) => {
                        self.status = 2;
                        Act::Pop
                    }
                }
            }
            _ => Act::Pop,
        }
    }

    fn step_case(&mut self, os: &mut dyn Os, node: Arc<Compound>, subject: Option<String>, arm: usize, mut substs: Vec<String>) -> Act {
        if let Some((_, out)) = self.child_done.take() {
            substs.push(strip_trailing_newlines(&out));
        }
        let Compound::Case { word, arms } = &*node else { return Act::Pop };
        let subject = match subject {
            Some(s) => s,
            None => {
                let mut ctx = expand::Ctx { cached: substs, idx: 0, last_status: None };
                match self.expand_string(os, word, &mut ctx) {
                    Ok(s) => s,
                    Err(expand::Need::Blocked(child, step)) => {
                        self.frames.push(Frame::Case { node: node.clone(), subject: None, arm, substs: ctx.cached });
                        self.frames.push(Frame::Child(child));
                        return Act::Block(step);
                    }
                    Err(expand::Need::Fail(a)) => return a,
                }
            }
        };
        if self.opts.xtrace && self.flavor == Flavor::Bash && arm == 0 {
            let line = format!("{}case {} in\n", self.trace_prefix(&self.ps4()), self.quote_trace(&subject));
            self.write_fd(os, 2, line.as_bytes());
        }
        let mut i = arm;
        while i < arms.len() {
            let a = &arms[i];
            for p in &a.pats {
                let pat = match self.expand_pattern_nosubst(os, p) {
                    Ok(p) => p,
                    Err(a) => return a,
                };
                if crate::pattern::matches(&pat, &subject) {
                    // Run this arm; handle fallthrough by pushing the next arm's body too.
                    let mut bodies = vec![a.body.clone()];
                    let mut k = i;
                    while arms[k].term == CaseTerm::FallThrough && k + 1 < arms.len() {
                        k += 1;
                        bodies.push(arms[k].body.clone());
                    }
                    if arms[k].term == CaseTerm::TestNext && k + 1 < arms.len() {
                        self.frames.push(Frame::Case { node: node.clone(), subject: Some(subject.clone()), arm: k + 1, substs: Vec::new() });
                    }
                    for b in bodies.into_iter().rev() {
                        self.frames.push(Frame::Run(b));
                    }
                    self.status = 0;
                    return Act::Pop;
                }
            }
            i += 1;
        }
        if arm == 0 {
            self.status = 0;
        }
        Act::Pop
    }

    /// The fds a child inherits (stdin input buffers are handed over as bytes).
    fn child_fds(&self) -> Fds {
        self.fds.clone()
    }

    /// What remains on the current stdin (consumed: the child reads it all).
    fn remaining_stdin(&mut self) -> Vec<u8> {
        match self.fds.first() {
            Some(FdTarget::Input(i)) => match self.inputs.get_mut(*i) {
                Some(b) => {
                    let rest = b.data.get(b.pos..).unwrap_or(&[]).to_vec();
                    b.pos = b.data.len();
                    rest
                }
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn start_stage(&mut self, os: &mut dyn Os, node: Arc<Cmd>, idx: usize, input: Vec<u8>, statuses: Vec<i32>) -> Act {
        let Cmd::Pipeline { cmds, .. } = &*node else { return Act::Pop };
        let last = idx + 1 == cmds.len();
        let stdin = if idx == 0 { self.remaining_stdin() } else { input };
        let sub = self.make_subshell(os, cmds[idx].clone(), stdin);
        let pid = self.new_process(os);
        let mut fds = self.child_fds();
        if !last {
            fds[1] = FdTarget::Capture;
        }
        self.frames.push(Frame::Pipeline { node: node.clone(), idx: idx + 1, input: Vec::new(), statuses });
        Act::Push(Frame::Child(Box::new(Child {
            prog: Box::new(sub),
            fds,
            capture: Vec::new(),
            limit: PIPE_CAPACITY,
            kind: if last { ChildKind::Cmd } else { ChildKind::Stage },
            pid,
            started: false,
        })))
    }

    fn step_child(&mut self, os: &mut dyn Os, mut c: Box<Child>) -> Act {
        let wake = if !c.started {
            c.started = true;
            Wake::Start
        } else {
            match self.pending_wake.take() {
                Some(w) => w,
                None => Wake::Timer,
            }
        };
        let step = {
            let Child { prog, fds, capture, limit, pid, .. } = &mut *c;
            let out = fds.get(1).cloned().unwrap_or(FdTarget::Closed);
            let err = fds.get(2).cloned().unwrap_or(FdTarget::Closed);
            let mut r = Routed { inner: os, out: &out, err: &err, capture, limit: *limit, pid: *pid };
            prog.resume(&mut r, wake)
        };
        match step {
            Step::Exit(code) => {
                let capture = std::mem::take(&mut c.capture);
                match c.kind {
                    ChildKind::Cmd => {
                        self.status = code;
                        self.check_errexit().unwrap_or(Act::Pop)
                    }
                    ChildKind::Subst | ChildKind::Stage => {
                        self.child_done = Some((code, capture));
                        Act::Pop
                    }
                    ChildKind::Exec => {
                        self.status = code;
                        self.exiting = Some(code);
                        self.exit_trap_done = true;
                        Act::Unwind(Unwind::Exit)
                    }
                }
            }
            other => {
                self.frames.push(Frame::Child(c));
                Act::Block(other)
            }
        }
    }

    fn step_wait(&mut self, os: &mut dyn Os, pids: Vec<u32>) -> Act {
        let _ = os;
        if let Some(sig) = self.interrupted.take() {
            self.status = sig.exit_code();
            return Act::Pop;
        }
        let pending: Vec<&Job> = self.jobs.iter().filter(|j| j.code.is_none() && (pids.is_empty() || pids.contains(&j.pid))).collect();
        if pending.is_empty() {
            self.status = if let Some(p) = pids.last() { self.jobs.iter().find(|j| j.pid == *p).and_then(|j| j.code).unwrap_or(127) } else { 0 };
            // Reap finished jobs that were waited for.
            if pids.is_empty() {
                self.jobs.retain(|j| j.code.is_none());
            }
            return Act::Pop;
        }
        self.frames.push(Frame::WaitJobs { pids });
        Act::Block(Step::Wait)
    }

    /// A new process (fork, or fork and exec): its PID, and its cost charged to this shell.
    pub(crate) fn new_process(&mut self, os: &mut dyn Os) -> u32 {
        self.ops += PROCESS_OPS;
        os.alloc_pid()
    }

    fn start_job(&mut self, os: &mut dyn Os, cmd: Arc<Cmd>) {
        self.jobs.retain(|j| j.code.is_none() || Some(j.pid) == self.last_bg);
        let mut sub = self.make_subshell(os, cmd, Vec::new());
        let pid = self.new_process(os);
        sub.pid = self.pid;
        let mut fds = self.fds.clone();
        fds[0] = FdTarget::Null;
        self.last_bg = Some(pid);
        self.status = 0;
        if self.jobs.len() >= MAX_JOBS {
            return;
        }
        self.jobs.push(Job { pid, prog: Box::new(sub), fds, state: TaskState::Ready(Wake::Start), code: None, capture: Vec::new() });
    }

    fn ps4(&self) -> String {
        self.get_var("PS4").unwrap_or_else(|| "+ ".into())
    }

    // ----- signals ---------------------------------------------------------------------

    fn on_signal(&mut self, _os: &mut dyn Os, sig: Signal) -> Option<Step> {
        if sig == Signal::Kill {
            return Some(Step::Exit(137));
        }
        if self.exec_child {
            // The shell was replaced: the program gets the signal.
            self.fg = TaskState::Ready(Wake::Signal(sig));
            self.wake_for_child = true;
            return None;
        }
        match self.traps.get(sig.name()) {
            Some(a) if a.is_empty() => None,
            Some(_) => {
                self.pending_traps.push(sig);
                match &self.fg {
                    TaskState::WaitingJobs | TaskState::Waiting => {
                        self.fg = TaskState::Ready(Wake::Signal(sig));
                    }
                    TaskState::Sleeping(..) if !matches!(self.frames.last(), Some(Frame::Child(_))) => {
                        self.fg = TaskState::Ready(Wake::Signal(sig));
                    }
                    _ => {}
                }
                None
            }
            None => {
                if sig != Signal::Kill && self.pid == 1 && !self.subshell {
                    None
                } else {
                    Some(Step::Exit(sig.exit_code()))
                }
            }
        }
    }

    // ----- scheduling of foreground and jobs -----------------------------------------

    fn set_task(&mut self, t: Task, st: TaskState) {
        match t {
            Task::Fg => self.fg = st,
            Task::Job(i) => {
                if let Some(j) = self.jobs.get_mut(i) {
                    j.state = st;
                }
            }
        }
    }

    fn task_state(&self, t: Task) -> Option<&TaskState> {
        match t {
            Task::Fg => Some(&self.fg),
            Task::Job(i) => self.jobs.get(i).map(|j| &j.state),
        }
    }

    fn state_after(now: u64, step: &Step) -> TaskState {
        match step {
            Step::Sleep(ms) => TaskState::Sleeping(now.saturating_add(*ms), now),
            Step::Wait => TaskState::Waiting,
            Step::Exit(_) => TaskState::Done,
            other => TaskState::Host(other.clone(), false),
        }
    }

    fn schedule(&mut self, os: &mut dyn Os) -> Step {
        let mut guard = 0;
        loop {
            guard += 1;
            if guard > 10_000 {
                return Step::Compute { cpu_ms: CPU_MS_PER_SLICE, threads: 1 };
            }
            let mut progressed = false;
            let jobs_first = std::mem::take(&mut self.jobs_first);
            if let (false, TaskState::Ready(w)) = (jobs_first, self.fg.clone()) {
                progressed = true;
                let step = self.run_fg(os, w);
                let in_wait = matches!(self.frames.last(), Some(Frame::WaitJobs { .. }));
                if let Step::Exit(code) = step {
                    self.fg = TaskState::Done;
                    return Step::Exit(code);
                }
                self.fg = if in_wait && step == Step::Wait { TaskState::WaitingJobs } else { Shell::state_after(os.now_ms(), &step) };
            }
            for i in 0..self.jobs.len() {
                if let TaskState::Ready(w) = self.jobs[i].state.clone() {
                    progressed = true;
                    let step = {
                        let job = &mut self.jobs[i];
                        let out = job.fds.get(1).cloned().unwrap_or(FdTarget::Closed);
                        let err = job.fds.get(2).cloned().unwrap_or(FdTarget::Closed);
                        let mut r = Routed { inner: os, out: &out, err: &err, capture: &mut job.capture, limit: 0, pid: job.pid };
                        job.prog.resume(&mut r, w)
                    };
                    if let Step::Exit(code) = step {
                        self.jobs[i].code = Some(code);
                        self.jobs[i].state = TaskState::Done;
                        if self.fg == TaskState::WaitingJobs {
                            self.fg = TaskState::Ready(Wake::Timer);
                        }
                    } else {
                        self.jobs[i].state = Shell::state_after(os.now_ms(), &step);
                    }
                }
            }
            if progressed {
                continue;
            }
            // Everything is blocked: pick what to ask the host for.
            if self.outstanding.is_none() {
                let mut tasks = vec![Task::Fg];
                tasks.extend((0..self.jobs.len()).map(Task::Job));
                for t in tasks {
                    if let Some(TaskState::Host(step, false)) = self.task_state(t).cloned() {
                        self.set_task(t, TaskState::Host(step.clone(), true));
                        self.outstanding = Some(t);
                        return step;
                    }
                }
            } else if let Some(t) = self.outstanding {
                if let Some(TaskState::Host(step, _)) = self.task_state(t).cloned() {
                    return step;
                }
            }
            let now = os.now_ms();
            let mut min: Option<u64> = None;
            if let TaskState::Sleeping(u, _) = self.fg {
                min = Some(u);
            }
            for j in &self.jobs {
                if let TaskState::Sleeping(u, _) = j.state {
                    min = Some(min.map_or(u, |m| m.min(u)));
                }
            }
            if let Some(u) = min {
                return Step::Sleep(u.saturating_sub(now));
            }
            return Step::Wait;
        }
    }

    fn deliver(&mut self, os: &mut dyn Os, wake: Wake) -> Option<Step> {
        let now = os.now_ms();
        match wake {
            Wake::Start => {
                self.fg = TaskState::Ready(Wake::Start);
            }
            Wake::Timer => {
                if let Some(t) = self.outstanding.take() {
                    if matches!(self.task_state(t), Some(TaskState::Host(Step::Compute { .. }, _))) {
                        self.set_task(t, TaskState::Ready(Wake::Timer));
                    }
                }
                let fg_since = match self.fg {
                    TaskState::Sleeping(u, since) if u <= now => Some(since),
                    _ => None,
                };
                if fg_since.is_some() {
                    self.fg = TaskState::Ready(Wake::Timer);
                }
                for j in &mut self.jobs {
                    if let TaskState::Sleeping(u, since) = j.state {
                        if u <= now {
                            j.state = TaskState::Ready(Wake::Timer);
                            if fg_since.is_some_and(|f| since < f) {
                                self.jobs_first = true;
                            }
                        }
                    }
                }
            }
            Wake::Net(_) | Wake::Child { .. } => {
                if let Some(t) = self.outstanding.take() {
                    self.set_task(t, TaskState::Ready(wake));
                }
            }
            Wake::Signal(sig) => {
                // A signal cancels the host's pending compute timer: re-issue it later.
                if let Some(t) = self.outstanding {
                    if let Some(TaskState::Host(s @ Step::Compute { .. }, true)) = self.task_state(t).cloned() {
                        self.set_task(t, TaskState::Host(s, false));
                        self.outstanding = None;
                    }
                }
                if let Some(step) = self.on_signal(os, sig) {
                    return Some(step);
                }
            }
        }
        None
    }
}

fn dash_open_err(e: crate::fs::Errno) -> &'static str {
    match e {
        crate::fs::Errno::ENOENT => "No such file",
        crate::fs::Errno::ENOTDIR => "Directory nonexistent",
        other => other.strerror(),
    }
}

/// Strips trailing newlines (command substitution).
pub(crate) fn strip_trailing_newlines(out: &[u8]) -> String {
    let mut end = out.len();
    while end > 0 && out[end - 1] == b'\n' {
        end -= 1;
    }
    String::from_utf8_lossy(&out[..end]).into_owned()
}

impl Program for Shell {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Some(step) = self.deliver(os, wake) {
            return step;
        }
        self.schedule(os)
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &crate::program::Incoming) -> Option<crate::program::Outgoing> {
        // A server the shell runs in the foreground (`nc -l`, an exec'd program) or in a
        // background job answers.
        if let Some(Frame::Child(c)) = self.frames.last_mut() {
            let Child { prog, fds, capture, limit, pid, .. } = &mut **c;
            let out = fds.get(1).cloned().unwrap_or(FdTarget::Closed);
            let err = fds.get(2).cloned().unwrap_or(FdTarget::Closed);
            let mut r = Routed { inner: os, out: &out, err: &err, capture, limit: *limit, pid: *pid };
            if let Some(o) = prog.serve(&mut r, conn) {
                if self.fg == TaskState::Waiting {
                    self.fg = TaskState::Ready(Wake::Timer);
                    self.wake_for_child = true;
                }
                return Some(o);
            }
        }
        for j in &mut self.jobs {
            if j.code.is_some() {
                continue;
            }
            let out = j.fds.get(1).cloned().unwrap_or(FdTarget::Closed);
            let err = j.fds.get(2).cloned().unwrap_or(FdTarget::Closed);
            let mut r = Routed { inner: os, out: &out, err: &err, capture: &mut j.capture, limit: 0, pid: j.pid };
            if let Some(o) = j.prog.serve(&mut r, conn) {
                if j.state == TaskState::Waiting {
                    j.state = TaskState::Ready(Wake::Timer);
                }
                return Some(o);
            }
        }
        None
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        let mut v = Vec::new();
        if let Some(Frame::Child(c)) = self.frames.last() {
            v.extend(c.prog.listening());
        }
        for j in &self.jobs {
            if j.code.is_none() {
                v.extend(j.prog.listening());
            }
        }
        v
    }

    fn cpu_backlog_ms(&self) -> u64 {
        let child = match self.frames.last() {
            Some(Frame::Child(c)) => c.prog.cpu_backlog_ms(),
            _ => 0,
        };
        child + self.jobs.iter().filter(|j| j.code.is_none()).map(|j| j.prog.cpu_backlog_ms()).sum::<u64>()
    }

    fn memory_bytes(&self) -> u64 {
        let vars: usize = self.vars.iter().map(|(k, v)| k.len() + 64 + if let Val::Str(s) = &v.val { s.len() } else { 256 }).sum();
        let inputs: usize = self.inputs.iter().map(|b| b.data.len()).sum();
        (if self.flavor == Flavor::Bash { 3_500_000 } else { 900_000 }) + vars as u64 + inputs as u64 + self.frames.len() as u64 * 128
    }
}

/// The command names `script` runs that are not builtins, keywords, functions it defines, or
/// in `available` (see [`crate::parse_commands`]). A script that does not parse reports
/// nothing.
pub fn missing_commands(script: &str, flavor: Flavor, available: &std::collections::BTreeSet<String>) -> Vec<String> {
    let Ok(cmd) = parse::parse(script, flavor) else { return Vec::new() };
    let mut names = std::collections::BTreeSet::new();
    let mut funcs = std::collections::BTreeSet::new();
    collect(&cmd, &mut names, &mut funcs, 0);
    let probe = Shell::new(flavor, "sh", BTreeMap::new(), "/", Vec::new());
    names.into_iter().filter(|n| !funcs.contains(n) && !probe.is_builtin(n) && !available.contains(n) && !available.contains(&crate::fs::basename(n))).collect()
}

fn collect_word(w: &Word, names: &mut std::collections::BTreeSet<String>, funcs: &mut std::collections::BTreeSet<String>, depth: usize) {
    for p in &w.0 {
        match p {
            WordPart::Cmd(c) => collect(c, names, funcs, depth + 1),
            WordPart::Dq(parts) => collect_word(&Word(parts.clone()), names, funcs, depth),
            _ => {}
        }
    }
}

fn collect(c: &Cmd, names: &mut std::collections::BTreeSet<String>, funcs: &mut std::collections::BTreeSet<String>, depth: usize) {
    if depth > 100 {
        return;
    }
    match c {
        Cmd::Simple(s) => {
            let mut words = s.words.iter();
            if let Some(first) = words.next() {
                if let Some(n) = first.as_lit() {
                    let n = n.to_string();
                    // `exec`, `command`, `env`, `timeout`, `nohup` run their operand.
                    let mut rest: Vec<&Word> = words.collect();
                    names.insert(n.clone());
                    let mut cur = n;
                    while matches!(cur.as_str(), "exec" | "command" | "nohup" | "time" | "nice") && !rest.is_empty() {
                        let next = rest.remove(0);
                        match next.as_lit() {
                            Some(x) if !x.starts_with('-') => {
                                names.insert(x.to_string());
                                cur = x.to_string();
                            }
                            _ => break,
                        }
                    }
                }
                collect_word(first, names, funcs, depth);
            }
            for w in s.words.iter().skip(1) {
                collect_word(w, names, funcs, depth);
            }
            for a in &s.assigns {
                if let AssignValue::Scalar(w) = &a.value {
                    collect_word(w, names, funcs, depth);
                }
            }
        }
        Cmd::Pipeline { cmds, .. } => cmds.iter().for_each(|c| collect(c, names, funcs, depth + 1)),
        Cmd::AndOr { first, rest } => {
            collect(first, names, funcs, depth + 1);
            rest.iter().for_each(|(_, c)| collect(c, names, funcs, depth + 1));
        }
        Cmd::List(items) => items.iter().for_each(|(c, _)| collect(c, names, funcs, depth + 1)),
        Cmd::Func { name, body } => {
            funcs.insert(name.clone());
            collect(body, names, funcs, depth + 1);
        }
        Cmd::Compound(comp, _, _) => match &**comp {
            Compound::Group(b) | Compound::Subshell(b) => collect(b, names, funcs, depth + 1),
            Compound::If { arms, else_ } => {
                for (a, b) in arms {
                    collect(a, names, funcs, depth + 1);
                    collect(b, names, funcs, depth + 1);
                }
                if let Some(e) = else_ {
                    collect(e, names, funcs, depth + 1);
                }
            }
            Compound::While { cond, body, .. } => {
                collect(cond, names, funcs, depth + 1);
                collect(body, names, funcs, depth + 1);
            }
            Compound::For { body, words, .. } => {
                for w in words.iter().flatten() {
                    collect_word(w, names, funcs, depth);
                }
                collect(body, names, funcs, depth + 1)
            }
            Compound::ArithFor { body, .. } => collect(body, names, funcs, depth + 1),
            Compound::Case { arms, .. } => arms.iter().for_each(|a| collect(&a.body, names, funcs, depth + 1)),
            Compound::Arith(_) | Compound::Cond(_) => {}
        },
    }
}
