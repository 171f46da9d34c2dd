//! Simple-command execution: expansion, redirections, builtins, functions and external
//! commands.

use super::expand::{Ctx, Need};
use super::*;
use crate::applets;
use crate::fs::Errno;
use crate::registry;

/// An expanded assignment.
enum AVal {
    Scalar(String),
    Array(Vec<String>),
}

struct XAssign {
    decl: bool,
    name: String,
    index: Option<String>,
    value: AVal,
    append: bool,
}

pub(super) struct XRedir {
    fd: u32,
    op: RedirOp,
    target: String,
}

const SPECIAL: &[&str] = &[":", ".", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return", "set", "shift", "trap", "unset", "source"];

impl Shell {
    fn builtin_names(&self) -> &'static [&'static str] {
        match self.flavor {
            Flavor::Bash => &[
                ":",
                ".",
                "[",
                "alias",
                "break",
                "cd",
                "command",
                "continue",
                "declare",
                "echo",
                "eval",
                "exec",
                "exit",
                "export",
                "false",
                "getopts",
                "hash",
                "jobs",
                "kill",
                "let",
                "local",
                "printf",
                "pwd",
                "read",
                "readonly",
                "return",
                "set",
                "shift",
                "source",
                "test",
                "times",
                "trap",
                "true",
                "type",
                "typeset",
                "ulimit",
                "umask",
                "unalias",
                "unset",
                "wait",
                "mapfile",
                "readarray",
                "shopt",
                "builtin",
                "enable",
                "help",
                "history",
                "disown",
                "suspend",
                "logout",
                "compgen",
                "complete",
            ],
            Flavor::Dash => &[
                ":", ".", "[", "alias", "break", "cd", "command", "continue", "echo", "eval", "exec", "exit", "export", "false", "getopts", "hash", "jobs",
                "kill", "local", "printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "times", "trap", "true", "type", "ulimit", "umask",
                "unalias", "unset", "wait",
            ],
            Flavor::Ash => &[
                ":", ".", "[", "[[", "alias", "break", "cd", "chdir", "command", "continue", "echo", "eval", "exec", "exit", "export", "false", "getopts",
                "hash", "jobs", "kill", "let", "local", "printf", "pwd", "read", "readonly", "return", "set", "shift", "source", "test", "times", "trap",
                "true", "type", "ulimit", "umask", "unalias", "unset", "wait",
            ],
        }
    }

    pub(super) fn is_builtin(&self, name: &str) -> bool {
        self.builtin_names().contains(&name)
    }

    pub(super) fn step_simple(&mut self, os: &mut dyn Os, node: Arc<Cmd>, mut substs: Vec<String>, mut subst_status: Option<i32>) -> Act {
        if let Some((code, out)) = self.child_done.take() {
            substs.push(strip_trailing_newlines(&out));
            subst_status = Some(code);
        }
        let Cmd::Simple(s) = &*node else { return Act::Pop };
        self.lineno = s.line;
        let mut ctx = Ctx { cached: substs, idx: 0, last_status: None };
        let r = self.expand_simple(os, s, &mut ctx);
        let last_status = ctx.last_status.or(subst_status);
        let (argv, assigns, redirs) = match r {
            Ok(v) => v,
            Err(Need::Blocked(child, step)) => {
                self.frames.push(Frame::Simple { node: node.clone(), substs: ctx.cached, subst_status: last_status });
                self.frames.push(Frame::Child(child));
                return Act::Block(step);
            }
            Err(Need::Fail(a)) => return a,
        };
        self.exec_simple(os, argv, assigns, redirs, last_status)
    }

    fn expand_simple(&mut self, os: &mut dyn Os, s: &Simple, ctx: &mut Ctx) -> Result<(Vec<String>, Vec<XAssign>, Vec<XRedir>), Need> {
        let argv = self.expand_fields(os, &s.words, ctx)?;
        let mut assigns = Vec::new();
        for (decl, a) in s.assigns.iter().map(|a| (false, a)).chain(s.decl.iter().map(|a| (true, a))) {
            let index = match &a.index {
                Some(w) => Some(self.expand_string(os, w, ctx)?),
                None => None,
            };
            let value = match &a.value {
                AssignValue::Scalar(w) => AVal::Scalar(self.expand_string(os, w, ctx)?),
                AssignValue::Array(ws) => AVal::Array(self.expand_fields(os, ws, ctx)?),
            };
            assigns.push(XAssign { decl, name: a.name.clone(), index, value, append: a.append });
        }
        let mut redirs = Vec::new();
        for r in &s.redirs {
            let target = match r.op {
                RedirOp::HereDoc { .. } | RedirOp::HereString => self.expand_string(os, &r.target, ctx)?,
                _ => {
                    let f = self.expand_fields(os, std::slice::from_ref(&r.target), ctx)?;
                    if f.len() != 1 && !matches!(r.op, RedirOp::DupOut | RedirOp::DupIn) {
                        let t = r.target.text();
                        let msg = match self.flavor {
                            Flavor::Bash => format!("{t}: ambiguous redirect"),
                            _ => format!("{t}: ambiguous redirect"),
                        };
                        self.err_msg(os, None, &msg);
                        self.status = 1;
                        return Err(Need::Fail(Act::Pop));
                    }
                    f.into_iter().next().unwrap_or_default()
                }
            };
            redirs.push(XRedir { fd: r.fd.unwrap_or(r.op.default_fd()), op: r.op, target });
        }
        Ok((argv, assigns, redirs))
    }

    pub(super) fn apply_redirs_nosubst(&mut self, os: &mut dyn Os, redirs: &[Redir]) -> Result<(), ()> {
        let mut xs = Vec::new();
        for r in redirs {
            let target = match self.expand_str_nosubst(os, &r.target) {
                Ok(t) => t,
                Err(_) => return Err(()),
            };
            xs.push(XRedir { fd: r.fd.unwrap_or(r.op.default_fd()), op: r.op, target });
        }
        let mut fds = self.fds.clone();
        self.apply_redirs(os, &mut fds, &xs)?;
        self.fds = fds;
        Ok(())
    }

    fn redir_error(&mut self, os: &mut dyn Os, path: &str, e: Errno, create: bool) {
        let msg = match self.flavor {
            Flavor::Bash => format!("{path}: {}", e.strerror()),
            Flavor::Dash => {
                let m = match (e, create) {
                    (Errno::ENOENT, false) => "No such file".to_string(),
                    (Errno::ENOENT, true) | (Errno::ENOTDIR, _) => "Directory nonexistent".to_string(),
                    (e, _) => e.strerror().to_string(),
                };
                format!("cannot {} {path}: {m}", if create { "create" } else { "open" })
            }
            Flavor::Ash => {
                let m = match e {
                    Errno::ENOENT if create => "nonexistent directory".to_string(),
                    Errno::ENOENT => "no such file".to_string(),
                    e => e.strerror().to_string(),
                };
                format!("can't {} {path}: {m}", if create { "create" } else { "open" })
            }
        };
        self.err_msg(os, None, &msg);
    }

    fn apply_redirs(&mut self, os: &mut dyn Os, fds: &mut Fds, redirs: &[XRedir]) -> Result<(), ()> {
        for r in redirs {
            let fd = r.fd as usize;
            if fd >= fds.len() {
                continue;
            }
            match r.op {
                RedirOp::Out | RedirOp::Append | RedirOp::Clobber | RedirOp::OutErr | RedirOp::AppendErr => {
                    let path = crate::fs::join(&self.cwd, &r.target);
                    let append = matches!(r.op, RedirOp::Append | RedirOp::AppendErr);
                    match sys::open_output(os, &path, append) {
                        Ok(t) => {
                            if matches!(r.op, RedirOp::OutErr | RedirOp::AppendErr) {
                                fds[1] = t.clone();
                                fds[2] = t;
                            } else {
                                fds[fd] = t;
                            }
                        }
                        Err(e) => {
                            let e = if e == Errno::EACCES && path.starts_with("/proc/") { Errno::ENOENT } else { e };
                            self.redir_error(os, &r.target, e, true);
                            return Err(());
                        }
                    }
                }
                RedirOp::In | RedirOp::ReadWrite => {
                    let path = crate::fs::join(&self.cwd, &r.target);
                    match sys::read_file(os, &path) {
                        Ok(d) => {
                            self.inputs.push(InBuf { data: d, pos: 0 });
                            fds[fd] = FdTarget::Input(self.inputs.len() - 1);
                        }
                        Err(Errno::ENOENT) if r.op == RedirOp::ReadWrite => {
                            let _ = sys::write_file(os, &path, b"", crate::fs::WriteMode::Append);
                            self.inputs.push(InBuf { data: Vec::new(), pos: 0 });
                            fds[fd] = FdTarget::Input(self.inputs.len() - 1);
                        }
                        Err(e) => {
                            self.redir_error(os, &r.target, e, false);
                            return Err(());
                        }
                    }
                }
                RedirOp::DupOut | RedirOp::DupIn => {
                    if r.target == "-" {
                        fds[fd] = FdTarget::Closed;
                        continue;
                    }
                    match r.target.parse::<usize>() {
                        Ok(src) if src < fds.len() => {
                            if fds[src] == FdTarget::Closed && src > 2 {
                                let msg = match self.flavor {
                                    Flavor::Bash => format!("{src}: Bad file descriptor"),
                                    Flavor::Dash => format!("{src}: Bad file descriptor"),
                                    Flavor::Ash => format!("dup2({src},{fd}): Bad file descriptor"),
                                };
                                self.err_msg(os, None, &msg);
                                return Err(());
                            }
                            fds[fd] = fds[src].clone();
                        }
                        _ => {
                            if r.op == RedirOp::DupOut && self.flavor == Flavor::Bash && fd == 1 {
                                // `>&file` = `&>file` in bash.
                                let path = crate::fs::join(&self.cwd, &r.target);
                                match sys::open_output(os, &path, false) {
                                    Ok(t) => {
                                        fds[1] = t.clone();
                                        fds[2] = t;
                                    }
                                    Err(e) => {
                                        self.redir_error(os, &r.target, e, true);
                                        return Err(());
                                    }
                                }
                                continue;
                            }
                            let msg = match self.flavor {
                                Flavor::Bash => format!("{}: ambiguous redirect", r.target),
                                Flavor::Dash => format!("Syntax error: Bad fd number"),
                                Flavor::Ash => format!("Syntax error: Bad fd number"),
                            };
                            self.err_msg(os, None, &msg);
                            return Err(());
                        }
                    }
                }
                RedirOp::HereDoc { .. } => {
                    self.inputs.push(InBuf { data: r.target.clone().into_bytes(), pos: 0 });
                    fds[fd] = FdTarget::Input(self.inputs.len() - 1);
                }
                RedirOp::HereString => {
                    let mut d = r.target.clone().into_bytes();
                    d.push(b'\n');
                    self.inputs.push(InBuf { data: d, pos: 0 });
                    fds[fd] = FdTarget::Input(self.inputs.len() - 1);
                }
            }
        }
        Ok(())
    }

    pub(super) fn quote_trace(&self, w: &str) -> String {
        match self.flavor {
            Flavor::Dash => w.to_string(),
            Flavor::Bash => {
                if w.is_empty() {
                    return "''".into();
                }
                let needs = w.chars().enumerate().any(|(i, c)| {
                    matches!(
                        c,
                        ' ' | '\t'
                            | '\n'
                            | '\''
                            | '"'
                            | '\\'
                            | '|'
                            | '&'
                            | ';'
                            | '('
                            | ')'
                            | '<'
                            | '>'
                            | '!'
                            | '{'
                            | '}'
                            | '*'
                            | '['
                            | '?'
                            | ']'
                            | '^'
                            | '$'
                            | '`'
                    ) || (c == '~' && i == 0)
                        || (c == '#' && i == 0)
                });
                if needs {
                    format!("'{}'", w.replace('\'', "'\\''"))
                } else {
                    w.to_string()
                }
            }
            Flavor::Ash => {
                if w.is_empty() {
                    return String::new();
                }
                const KEYWORDS: &[&str] = &["!", "case", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "then", "until", "while"];
                let needs = KEYWORDS.contains(&w) || w.chars().any(|c| c < '+' || (';'..='?').contains(&c) || c == '`' || c == '[' || c == '\\' || c > 'z');
                if needs {
                    format!("'{}'", w.replace('\'', "'\"'\"'"))
                } else {
                    w.to_string()
                }
            }
        }
    }

    /// PS4 with its first character repeated per command-substitution level (bash).
    pub(super) fn trace_prefix(&self, ps4: &str) -> String {
        if self.flavor != Flavor::Bash || self.trace_depth <= 1 {
            return ps4.to_string();
        }
        let first: String = ps4.chars().take(1).collect();
        format!("{}{ps4}", first.repeat((self.trace_depth - 1).min(50) as usize))
    }

    fn trace(&mut self, os: &mut dyn Os, assigns: &[XAssign], argv: &[String]) {
        if !self.opts.xtrace {
            return;
        }
        let ps4 = self.ps4();
        let prefix = self.trace_prefix(&ps4);
        let mut lines = Vec::new();
        let mut av: Vec<String> = Vec::new();
        for a in assigns {
            let v = match &a.value {
                AVal::Scalar(s) if s.is_empty() && self.flavor == Flavor::Bash => String::new(),
                AVal::Scalar(s) => self.quote_trace(s),
                AVal::Array(items) => format!("({})", items.iter().map(|s| self.quote_trace(s)).collect::<Vec<_>>().join(" ")),
            };
            let idx = a.index.as_ref().map(|i| format!("[{i}]")).unwrap_or_default();
            let op = if a.append { "+=" } else { "=" };
            av.push(format!("{}{idx}{op}{v}", a.name));
        }
        if self.flavor == Flavor::Bash {
            for a in av.drain(..) {
                lines.push(a);
            }
        }
        for w in argv {
            av.push(self.quote_trace(w));
        }
        if !av.is_empty() {
            lines.push(av.join(" "));
        }
        // bash traces the assignments of declaration builtins once more.
        if self.flavor == Flavor::Bash && argv.first().is_some_and(|n| matches!(n.as_str(), "export" | "declare" | "typeset" | "readonly")) {
            for w in &argv[1..] {
                if let Some((k, v)) = w.split_once('=') {
                    if parse::valid_name(k) {
                        let q = if v.is_empty() { String::new() } else { self.quote_trace(v) };
                        lines.push(format!("{k}={q}"));
                    }
                }
            }
        }
        let mut out = String::new();
        for l in lines {
            out.push_str(&prefix);
            out.push_str(&l);
            out.push('\n');
        }
        self.write_fd(os, 2, out.as_bytes());
    }

    fn do_assign(&mut self, os: &mut dyn Os, a: &XAssign) -> Result<(), ()> {
        let r = match (&a.value, &a.index) {
            (AVal::Array(items), _) => {
                if self.vars.get(&a.name).is_some_and(|v| v.readonly) {
                    Err(self.readonly_msg(&a.name))
                } else {
                    let mut arr: BTreeMap<usize, String> = if a.append {
                        match self.vars.get(&a.name).map(|v| v.val.clone()) {
                            Some(Val::Arr(m)) => m,
                            Some(Val::Str(s)) => [(0, s)].into_iter().collect(),
                            None => BTreeMap::new(),
                        }
                    } else {
                        BTreeMap::new()
                    };
                    let start = arr.keys().next_back().map(|k| k + 1).unwrap_or(0);
                    for (i, it) in items.iter().enumerate() {
                        if let Some((k, v)) = it.strip_prefix('[').and_then(|r| r.split_once("]=")) {
                            if let Ok(k) = k.parse::<usize>() {
                                arr.insert(k, v.to_string());
                                continue;
                            }
                        }
                        arr.insert(start + i, it.clone());
                    }
                    let exported = self.vars.get(&a.name).is_some_and(|v| v.exported);
                    self.vars.insert(a.name.clone(), Var { val: Val::Arr(arr), exported, readonly: false });
                    Ok(())
                }
            }
            (AVal::Scalar(v), Some(idx)) => match self.arith(os, idx) {
                Ok(i) if i >= 0 => {
                    let cur = if a.append {
                        match self.vars.get(&a.name).map(|x| x.val.clone()) {
                            Some(Val::Arr(m)) => m.get(&(i as usize)).cloned().unwrap_or_default(),
                            _ => String::new(),
                        }
                    } else {
                        String::new()
                    };
                    self.set_array_elem(&a.name, i as usize, &format!("{cur}{v}"))
                }
                Ok(i) => Err(format!("{}[{i}]: bad array subscript", a.name)),
                Err(_) => return Err(()),
            },
            (AVal::Scalar(v), None) => {
                let v = match (a.append, self.integers.contains(&a.name)) {
                    (true, true) => format!("{}+({v})", self.get_var(&a.name).unwrap_or_else(|| "0".into())),
                    (true, false) => format!("{}{v}", self.get_var(&a.name).unwrap_or_default()),
                    _ => v.clone(),
                };
                self.set_var(&a.name, &v)
            }
        };
        match r {
            Ok(()) => Ok(()),
            Err(msg) => {
                self.err_msg(os, None, &msg);
                self.status = 1;
                Err(())
            }
        }
    }

    fn exec_simple(&mut self, os: &mut dyn Os, argv: Vec<String>, assigns: Vec<XAssign>, redirs: Vec<XRedir>, last_status: Option<i32>) -> Act {
        let (decl, assigns): (Vec<XAssign>, Vec<XAssign>) = assigns.into_iter().partition(|a| a.decl);
        self.trace(os, &assigns, &argv);
        if argv.is_empty() {
            for a in &assigns {
                if self.do_assign(os, a).is_err() {
                    // Assignment to a readonly variable is fatal in a non-interactive shell.
                    self.status = if self.flavor == Flavor::Bash { 1 } else { 2 };
                    return Act::Unwind(Unwind::Exit);
                }
            }
            let ninputs = self.inputs.len();
            let mut fds = self.fds.clone();
            let ok = self.apply_redirs(os, &mut fds, &redirs);
            self.inputs.truncate(ninputs);
            self.status = if ok.is_err() {
                if self.flavor == Flavor::Dash {
                    2
                } else {
                    1
                }
            } else {
                last_status.unwrap_or(0)
            };
            return self.check_errexit().unwrap_or(Act::Pop);
        }
        let name = argv[0].clone();
        // Functions and builtins run in this shell with redirected fds.
        let is_func = self.funcs.contains_key(&name) && !SPECIAL.contains(&name.as_str());
        let is_builtin = self.is_builtin(&name);
        if is_func || is_builtin {
            let saved = self.fds.clone();
            let ninputs = self.inputs.len();
            let mut fds = self.fds.clone();
            if self.apply_redirs(os, &mut fds, &redirs).is_err() {
                self.inputs.truncate(ninputs);
                self.status = if self.flavor == Flavor::Dash { 2 } else { 1 };
                if SPECIAL.contains(&name.as_str()) && self.flavor != Flavor::Bash {
                    return Act::Unwind(Unwind::Exit);
                }
                return self.check_errexit().unwrap_or(Act::Pop);
            }
            if is_func {
                let body = self.funcs.get(&name).cloned().unwrap_or_else(|| Arc::new(Cmd::List(Vec::new())));
                let mut locals = Vec::new();
                for a in &assigns {
                    locals.push((a.name.clone(), self.vars.get(&a.name).cloned()));
                    let _ = self.do_assign(os, a);
                    if let Some(v) = self.vars.get_mut(&a.name) {
                        v.exported = true;
                    }
                }
                self.frames.push(Frame::Restore { fds: saved, inputs: ninputs });
                self.fds = fds;
                let saved_pos = std::mem::replace(&mut self.pos, argv[1..].to_vec());
                self.frames.push(Frame::Func { saved_pos, locals });
                return Act::Push(Frame::Run(body));
            }
            let special = SPECIAL.contains(&name.as_str());
            let mut temp = Vec::new();
            for a in &assigns {
                if !special {
                    temp.push((a.name.clone(), self.vars.get(&a.name).cloned()));
                }
                if self.do_assign(os, a).is_err() {
                    self.fds = saved;
                    self.inputs.truncate(ninputs);
                    return Act::Unwind(Unwind::Exit);
                }
            }
            self.fds = fds;
            let act = self.builtin(os, &argv, &redirs);
            for a in &decl {
                let _ = self.do_assign(os, a);
            }
            self.restore_locals(temp);
            if name == "exec" && argv.len() == 1 {
                // `exec >file`: the redirections stay.
                return Act::Pop;
            }
            // Frames pushed by the builtin (eval/source) restore fds when they finish.
            match act {
                Act::Push(f) => {
                    self.frames.push(Frame::Restore { fds: saved, inputs: ninputs });
                    Act::Push(f)
                }
                Act::Block(step) => {
                    self.frames.push(Frame::Restore { fds: saved, inputs: ninputs });
                    // The builtin pushed its blocking frame beneath the Restore; swap them.
                    let n = self.frames.len();
                    if n >= 2 {
                        self.frames.swap(n - 1, n - 2);
                    }
                    Act::Block(step)
                }
                other => {
                    self.fds = saved;
                    self.inputs.truncate(ninputs);
                    if let Act::Pop = other {
                        if let Some(a) = self.check_errexit() {
                            return a;
                        }
                    }
                    other
                }
            }
        } else {
            let env_extra: Vec<(String, String)> = assigns
                .iter()
                .filter_map(|a| match &a.value {
                    AVal::Scalar(v) if a.index.is_none() => Some((a.name.clone(), v.clone())),
                    _ => None,
                })
                .collect();
            self.run_external(os, argv, env_extra, redirs, ChildKind::Cmd)
        }
    }

    /// Resolves a command name through `PATH` (absolute path of an executable file).
    pub(super) fn find_command(&self, os: &mut dyn Os, name: &str) -> Result<String, Errno> {
        if name.contains('/') {
            let p = crate::fs::join(&self.cwd, name);
            let m = os.fs_ref().stat(&p)?;
            if m.is_dir() {
                return Err(Errno::EISDIR);
            }
            if m.mode & 0o111 == 0 {
                return Err(Errno::EACCES);
            }
            return Ok(p);
        }
        let path = self.get_var("PATH").unwrap_or_else(|| registry::DEFAULT_PATH.to_string());
        let mut denied = false;
        for dir in path.split(':') {
            let dir = if dir.is_empty() { "." } else { dir };
            let p = crate::fs::join(&crate::fs::join(&self.cwd, dir), name);
            if let Ok(m) = os.fs_ref().stat(&p) {
                if m.is_file() {
                    if m.mode & 0o111 != 0 {
                        return Ok(p);
                    }
                    denied = true;
                }
            }
        }
        Err(if denied { Errno::EACCES } else { Errno::ENOENT })
    }

    fn not_found(&mut self, os: &mut dyn Os, name: &str, e: Errno) -> i32 {
        let slash = name.contains('/');
        let (msg, code) = match (self.flavor, e) {
            (Flavor::Bash, Errno::ENOENT) if !slash => (format!("{name}: command not found"), 127),
            (Flavor::Bash, Errno::EISDIR) => (format!("{name}: Is a directory"), 126),
            (Flavor::Bash, e) => (format!("{name}: {}", e.strerror()), if e == Errno::ENOENT { 127 } else { 126 }),
            (_, Errno::ENOENT) => (format!("{name}: not found"), 127),
            (_, Errno::EISDIR) | (_, Errno::EACCES) => (format!("{name}: Permission denied"), 126),
            (_, e) => (format!("{name}: {}", e.strerror()), 126),
        };
        self.err_msg(os, None, &msg);
        code
    }

    pub(super) fn run_external(&mut self, os: &mut dyn Os, argv: Vec<String>, env_extra: Vec<(String, String)>, redirs: Vec<XRedir>, kind: ChildKind) -> Act {
        let name = argv[0].clone();
        let ninputs = self.inputs.len();
        let mut fds = self.fds.clone();
        if self.apply_redirs(os, &mut fds, &redirs).is_err() {
            self.inputs.truncate(ninputs);
            self.status = if self.flavor == Flavor::Dash { 2 } else { 1 };
            return self.check_errexit().unwrap_or(Act::Pop);
        }
        let stdin = match fds.first() {
            Some(FdTarget::Input(i)) => match self.inputs.get_mut(*i) {
                Some(b) => {
                    let rest = b.data.get(b.pos..).unwrap_or(&[]).to_vec();
                    b.pos = b.data.len();
                    rest
                }
                None => Vec::new(),
            },
            _ => Vec::new(),
        };
        self.inputs.truncate(ninputs);
        let path = match self.find_command(os, &name) {
            Ok(p) => p,
            Err(e) => {
                self.status = self.not_found(os, &name, e);
                if kind == ChildKind::Exec {
                    return Act::Unwind(Unwind::Exit);
                }
                return self.check_errexit().unwrap_or(Act::Pop);
            }
        };
        let spawn = Spawn {
            argv,
            env: self.env_for_child(&env_extra),
            cwd: self.cwd.clone(),
            stdin,
            capture_stdout: fds.get(1) != Some(&FdTarget::Stdout) || os.stdout_captured(),
            tty: self.tty && fds.get(1) == Some(&FdTarget::Stdout) && !os.stdout_captured(),
            path,
            stdin_open: false,
        };
        match registry::start(&spawn, os.fs_ref()) {
            Ok(prog) => {
                let pid = if kind == ChildKind::Exec { self.pid } else { self.new_process(os) };
                if kind == ChildKind::Exec {
                    self.exec_child = true;
                    // The process image is replaced: `ps` shows the new command line.
                    os.set_cmdline(&spawn.argv);
                }
                Act::Push(Frame::Child(Box::new(Child { prog, fds, capture: Vec::new(), limit: 0, kind, pid, started: false })))
            }
            Err(e) => {
                self.status = self.not_found(os, &name, e);
                self.check_errexit().unwrap_or(Act::Pop)
            }
        }
    }

    fn out(&mut self, os: &mut dyn Os, s: &str) {
        self.write_fd(os, 1, s.as_bytes());
    }

    /// Error from a builtin (`sh: cd: line 1: ...` etc.).
    fn berr(&mut self, os: &mut dyn Os, cmd: &str, msg: &str) {
        let line = match self.flavor {
            Flavor::Ash => {
                let ln = if self.script_file.is_some() { self.lineno } else { self.lineno.saturating_sub(1) };
                format!("{}: {cmd}: line {ln}: {msg}\n", self.arg0)
            }
            _ => format!("{}{msg}\n", self.prefix(Some(cmd))),
        };
        self.write_fd(os, 2, line.as_bytes());
    }

    fn builtin(&mut self, os: &mut dyn Os, argv: &[String], redirs: &[XRedir]) -> Act {
        let _ = redirs;
        let name = argv[0].as_str();
        let args = &argv[1..];
        let st = |sh: &mut Shell, code: i32| {
            sh.status = code;
            Act::Pop
        };
        match name {
            ":" | "true" => st(self, 0),
            "false" => st(self, 1),
            "echo" => {
                let style = match self.flavor {
                    Flavor::Dash => applets::echo::Style::Dash,
                    _ => applets::echo::Style::Gnu,
                };
                let out = applets::echo::render(style, args);
                let ok = self.write_fd(os, 1, &out);
                st(self, if ok { 0 } else { 1 })
            }
            "printf" if args.first().is_some_and(|a| a == "-v") && self.flavor != Flavor::Ash => {
                if self.flavor == Flavor::Dash {
                    self.berr(os, "printf", "Illegal option -v");
                    return st(self, 2);
                }
                let (Some(var), Some(fmt)) = (args.get(1).cloned(), args.get(2).cloned()) else {
                    self.berr(os, "printf", "-v: option requires an argument");
                    return st(self, 2);
                };
                let (out, errs, code) = applets::printf::format(&fmt, &args[3..]);
                for e in errs {
                    self.berr(os, "printf", &format!("{e}: invalid number"));
                }
                let text = String::from_utf8_lossy(&out).into_owned();
                if let Err(e) = self.set_var(&var, &text) {
                    self.err_msg(os, None, &e);
                    return st(self, 1);
                }
                st(self, code)
            }
            "printf" if args.first().is_some_and(|a| a == "--") => {
                let rest: Vec<String> = std::iter::once("printf".to_string()).chain(args[1..].iter().cloned()).collect();
                self.builtin(os, &rest, &[])
            }
            "printf" => {
                if args.is_empty() {
                    let msg = match self.flavor {
                        Flavor::Bash => "usage: printf [-v var] format [arguments]",
                        _ => "usage: printf format [arg ...]",
                    };
                    self.berr(os, "printf", msg);
                    return st(self, 2);
                }
                let (out, errs, code) = applets::printf::format(&args[0], &args[1..]);
                self.write_fd(os, 1, &out);
                for e in errs {
                    match self.flavor {
                        Flavor::Ash => self.test_err(os, "printf", &format!("invalid number '{e}'")),
                        Flavor::Dash => self.berr(os, "printf", &format!("{e}: expected numeric value")),
                        Flavor::Bash => self.berr(os, "printf", &format!("{e}: invalid number")),
                    }
                }
                st(self, code)
            }
            "test" | "[" | "[[" => {
                let mut a: Vec<String> = args.to_vec();
                if name != "test" {
                    let close = if name == "[" { "]" } else { "]]" };
                    if a.last().map(String::as_str) != Some(close) {
                        let msg = match self.flavor {
                            Flavor::Bash => "missing `]'".to_string(),
                            _ => format!("missing {close}"),
                        };
                        self.test_err(os, name, &msg);
                        return st(self, 2);
                    }
                    a.pop();
                }
                let cwd = self.cwd.clone();
                let glob = name == "[[";
                if glob {
                    for x in a.iter_mut() {
                        if x == "&&" {
                            *x = "-a".into();
                        } else if x == "||" {
                            *x = "-o".into();
                        }
                    }
                }
                match applets::test::eval_ext(&a, os, &cwd, glob) {
                    Ok(b) => st(self, if b { 0 } else { 1 }),
                    Err(e) => {
                        let m = self.test_msg(&e);
                        self.test_err(os, name, &m);
                        st(self, 2)
                    }
                }
            }
            "cd" | "chdir" => self.bi_cd(os, args),
            "pwd" => {
                let c = format!("{}\n", self.cwd);
                self.out(os, &c);
                st(self, 0)
            }
            "export" | "readonly" | "declare" | "typeset" | "local" => self.bi_declare(os, name, args),
            "unset" => {
                let mut funcs = false;
                for a in args {
                    if a == "-f" {
                        funcs = true;
                        continue;
                    }
                    if a == "-v" {
                        continue;
                    }
                    if funcs {
                        self.funcs.remove(a);
                    } else if self.vars.get(a).is_some_and(|v| v.readonly) {
                        let msg = match self.flavor {
                            Flavor::Bash => format!("{a}: cannot unset: readonly variable"),
                            _ => format!("{a}: is read only"),
                        };
                        self.berr(os, "unset", &msg);
                        if self.flavor != Flavor::Bash {
                            self.status = 2;
                            return Act::Unwind(Unwind::Exit);
                        }
                        return st(self, 1);
                    } else if let Some(base) = a.strip_suffix(']').and_then(|x| x.split_once('[')) {
                        let (n, i) = base;
                        if let (Ok(i), Some(Var { val: Val::Arr(m), .. })) = (i.parse::<usize>(), self.vars.get_mut(n)) {
                            m.remove(&i);
                        }
                    } else if self.vars.remove(a).is_none() {
                        self.funcs.remove(a);
                    }
                }
                st(self, 0)
            }
            "set" => self.bi_set(os, args),
            "shift" => {
                let n = match args.first().map(|a| a.parse::<usize>()) {
                    None => 1,
                    Some(Ok(n)) => n,
                    Some(Err(_)) => {
                        self.berr(os, "shift", &format!("{}: numeric argument required", args[0]));
                        return st(self, 1);
                    }
                };
                if n > self.pos.len() {
                    return match self.flavor {
                        Flavor::Dash => {
                            self.berr(os, "shift", "can't shift that many");
                            self.status = 2;
                            Act::Unwind(Unwind::Exit)
                        }
                        _ => st(self, 1),
                    };
                }
                self.pos.drain(..n);
                st(self, 0)
            }
            "exit" => {
                let code = match args.first() {
                    None => self.status,
                    Some(a) => match a.parse::<i64>() {
                        Ok(n) => (n & 0xff) as i32,
                        Err(_) => {
                            let msg = match self.flavor {
                                Flavor::Bash => format!("{a}: numeric argument required"),
                                _ => format!("Illegal number: {a}"),
                            };
                            self.berr(os, "exit", &msg);
                            if self.flavor == Flavor::Bash {
                                2
                            } else {
                                2
                            }
                        }
                    },
                };
                self.status = code;
                self.exiting = Some(code);
                Act::Unwind(Unwind::Exit)
            }
            "return" => {
                if let Some(a) = args.first() {
                    self.status = a.parse::<i64>().map(|n| (n & 0xff) as i32).unwrap_or(2);
                }
                let in_func = self.frames.iter().any(|f| matches!(f, Frame::Func { .. } | Frame::Source { .. }));
                if !in_func {
                    if self.flavor == Flavor::Bash {
                        self.berr(os, "return", "can only `return' from a function or sourced script");
                        return st(self, 1);
                    }
                    self.exiting = Some(self.status);
                    return Act::Unwind(Unwind::Exit);
                }
                Act::Unwind(Unwind::Return)
            }
            "break" | "continue" => {
                let n = args.first().and_then(|a| a.parse::<u32>().ok()).unwrap_or(1).max(1);
                if self.loops == 0 {
                    if self.flavor == Flavor::Bash {
                        self.berr(os, name, "only meaningful in a `for', `while', or `until' loop");
                    }
                    return st(self, 0);
                }
                let n = n.min(self.loops);
                self.status = 0;
                Act::Unwind(if name == "break" { Unwind::Break(n) } else { Unwind::Continue(n) })
            }
            "eval" => {
                let src = args.join(" ");
                match parse::parse(&src, self.flavor) {
                    Ok(cmd) => {
                        self.status = 0;
                        if self.flavor == Flavor::Bash {
                            self.frames.push(Frame::TraceDepth(self.trace_depth));
                            self.trace_depth += 1;
                        }
                        Act::Push(Frame::Run(cmd))
                    }
                    Err(e) => {
                        let m = e.message(self.flavor, &self.arg0);
                        self.write_fd(os, 2, format!("{m}\n").as_bytes());
                        self.status = 2;
                        if self.flavor == Flavor::Bash {
                            Act::Pop
                        } else {
                            Act::Unwind(Unwind::Exit)
                        }
                    }
                }
            }
            "." | "source" => self.bi_source(os, args),
            "exec" => {
                if args.is_empty() {
                    self.status = 0;
                    return Act::Pop;
                }
                let mut a = args.to_vec();
                while a.first().is_some_and(|x| x.starts_with('-') && x.len() > 1) {
                    a.remove(0);
                }
                if a.is_empty() {
                    return st(self, 0);
                }
                self.run_external(os, a, Vec::new(), Vec::new(), ChildKind::Exec)
            }
            "trap" => self.bi_trap(os, args),
            "wait" => {
                let pids: Vec<u32> = args.iter().filter_map(|a| a.parse().ok()).collect();
                Act::Push(Frame::WaitJobs { pids })
            }
            "kill" => self.bi_kill(os, args),
            "read" => self.bi_read(os, args),
            "type" => self.bi_type(os, args),
            "command" => self.bi_command(os, args),
            "shopt" => {
                let set = args.iter().any(|a| a == "-s");
                let unset = args.iter().any(|a| a == "-u");
                let mut code = 0;
                for o in args.iter().filter(|a| !a.starts_with('-')) {
                    match o.as_str() {
                        "nullglob" => self.opts.nullglob = set || !unset && self.opts.nullglob,
                        "expand_aliases"
                        | "checkwinsize"
                        | "histappend"
                        | "huponexit"
                        | "promptvars"
                        | "sourcepath"
                        | "hostcomplete"
                        | "interactive_comments"
                        | "cmdhist" => {}
                        other => {
                            self.berr(os, "shopt", &format!("{other}: not supported by kubesim"));
                            code = 1;
                        }
                    }
                }
                st(self, code)
            }
            "hash" | "alias" | "unalias" | "enable" | "disown" | "complete" | "compgen" | "history" => st(self, 0),
            "umask" => {
                match args.iter().find(|a| !a.starts_with('-')) {
                    None => {
                        let m = self.get_var("__KUBESIM_UMASK").unwrap_or_else(|| "0022".into());
                        self.out(os, &format!("{m}\n"));
                    }
                    Some(m) => match u32::from_str_radix(m, 8) {
                        Ok(v) => {
                            self.vars.insert("__KUBESIM_UMASK".into(), Var { val: Val::Str(format!("{:04o}", v & 0o777)), exported: false, readonly: false });
                        }
                        Err(_) => {
                            self.berr(os, "umask", &format!("{m}: octal number out of range"));
                            return st(self, 1);
                        }
                    },
                }
                st(self, 0)
            }
            "ulimit" => {
                if args.is_empty() || args.iter().any(|a| a == "-n") {
                    self.out(os, if args.iter().any(|a| a == "-n") { "1048576\n" } else { "unlimited\n" });
                } else if args.iter().any(|a| a.starts_with('-')) && args.len() == 1 {
                    self.out(os, "unlimited\n");
                }
                st(self, 0)
            }
            "times" => {
                self.out(os, "0m0.000s 0m0.000s\n0m0.000s 0m0.000s\n");
                st(self, 0)
            }
            "jobs" => {
                let lines: Vec<String> = self
                    .jobs
                    .iter()
                    .enumerate()
                    .filter(|(_, j)| j.code.is_none())
                    .map(|(i, j)| format!("[{}]+  Running                 (pid {})\n", i + 1, j.pid))
                    .collect();
                for l in lines {
                    self.out(os, &l);
                }
                st(self, 0)
            }
            "let" => {
                if args.is_empty() {
                    self.berr(os, "let", "expression expected");
                    return st(self, 1);
                }
                let mut last = 0;
                for a in args {
                    match self.arith(os, a) {
                        Ok(v) => last = v,
                        Err(_) => return st(self, 1),
                    }
                }
                st(self, (last == 0) as i32)
            }
            "getopts" => self.bi_getopts(os, args),
            "mapfile" | "readarray" => {
                let var = args.iter().rfind(|a| !a.starts_with('-')).cloned().unwrap_or_else(|| "MAPFILE".into());
                let strip = args.iter().any(|a| a == "-t");
                let data = self.read_all_stdin();
                let text = String::from_utf8_lossy(&data).into_owned();
                let mut arr = BTreeMap::new();
                for (i, l) in text.split_inclusive('\n').enumerate() {
                    arr.insert(i, if strip { l.trim_end_matches('\n').to_string() } else { l.to_string() });
                }
                self.vars.insert(var, Var { val: Val::Arr(arr), exported: false, readonly: false });
                st(self, 0)
            }
            "builtin" => {
                if args.is_empty() {
                    return st(self, 0);
                }
                self.builtin(os, args, &[])
            }
            "help" | "logout" | "suspend" => st(self, 0),
            _ => st(self, 127),
        }
    }

    fn test_msg(&self, e: &applets::test::TestErr) -> String {
        let style = match self.flavor {
            Flavor::Ash => applets::test::ErrStyle::Busybox,
            Flavor::Dash => applets::test::ErrStyle::Dash,
            Flavor::Bash => applets::test::ErrStyle::Bash,
        };
        e.message(style)
    }

    fn test_err(&mut self, os: &mut dyn Os, name: &str, msg: &str) {
        match self.flavor {
            Flavor::Ash => {
                let l = format!("{}: {msg}\n", self.arg0);
                self.write_fd(os, 2, l.as_bytes());
            }
            _ => self.berr(os, name, msg),
        }
    }

    fn read_all_stdin(&mut self) -> Vec<u8> {
        self.remaining_stdin()
    }

    fn bi_cd(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        let args: Vec<&String> = args.iter().filter(|a| *a != "-P" && *a != "-L").collect();
        let mut print = false;
        let target = match args.first() {
            None => match self.get_var("HOME") {
                Some(h) => h,
                None => {
                    self.berr(os, "cd", "HOME not set");
                    self.status = 1;
                    return Act::Pop;
                }
            },
            Some(a) if a.as_str() == "-" => {
                print = true;
                self.get_var("OLDPWD").unwrap_or_else(|| self.cwd.clone())
            }
            Some(a) => (*a).clone(),
        };
        let path = crate::fs::normalize(&crate::fs::join(&self.cwd, &target));
        let r = os.fs_ref().stat(&path);
        let err = match r {
            Ok(m) if m.is_dir() => None,
            Ok(_) => Some(Errno::ENOTDIR),
            Err(e) => Some(e),
        };
        if let Some(e) = err {
            let msg = match self.flavor {
                Flavor::Bash => format!("{target}: {}", e.strerror()),
                Flavor::Dash => format!("can't cd to {target}"),
                Flavor::Ash => format!("can't cd to {target}: {}", e.strerror()),
            };
            self.berr(os, "cd", &msg);
            self.status = if self.flavor == Flavor::Bash { 1 } else { 2 };
            return Act::Pop;
        }
        let old = self.cwd.clone();
        self.cwd = path.clone();
        let _ = self.set_var("OLDPWD", &old);
        let _ = self.set_var("PWD", &path);
        if print {
            self.out(os, &format!("{path}\n"));
        }
        self.status = 0;
        Act::Pop
    }

    fn bi_declare(&mut self, os: &mut dyn Os, name: &str, args: &[String]) -> Act {
        let mut export = name == "export";
        let mut readonly = name == "readonly";
        let mut array = false;
        let mut integer = false;
        let mut print = false;
        let mut names = Vec::new();
        for a in args {
            if let Some(fl) = a.strip_prefix('-').filter(|f| !f.is_empty() && names.is_empty()) {
                for c in fl.chars() {
                    match c {
                        'x' => export = true,
                        'r' => readonly = true,
                        'A' => {
                            self.berr(os, name, "-A: associative arrays are not supported by kubesim");
                            self.status = 2;
                            return Act::Pop;
                        }
                        'a' => array = true,
                        'i' => integer = true,
                        'p' => print = true,
                        _ => {}
                    }
                }
                continue;
            }
            names.push(a.clone());
        }
        if name == "local" && !self.frames.iter().any(|f| matches!(f, Frame::Func { .. })) {
            let msg = match self.flavor {
                Flavor::Bash => "can only be used in a function",
                _ => "not in a function",
            };
            self.berr(os, "local", msg);
            self.status = if self.flavor == Flavor::Bash { 1 } else { 2 };
            return if self.flavor == Flavor::Bash { Act::Pop } else { Act::Unwind(Unwind::Exit) };
        }
        if names.is_empty() || print && names.is_empty() {
            let lines: Vec<String> = self
                .vars
                .iter()
                .filter(|(k, v)| {
                    !k.starts_with("__KUBESIM")
                        && ((name == "export" && v.exported) || (name == "readonly" && v.readonly) || (name != "export" && name != "readonly"))
                })
                .map(|(k, v)| {
                    let val = v.scalar();
                    match (self.flavor, name) {
                        (Flavor::Bash, "export") | (Flavor::Bash, "declare") | (Flavor::Bash, "typeset") => {
                            let fl = format!("{}{}", if v.exported { "x" } else { "" }, if v.readonly { "r" } else { "" });
                            let fl = if fl.is_empty() { "-".to_string() } else { fl };
                            format!("declare -{fl} {k}=\"{}\"\n", val.replace('\\', "\\\\").replace('"', "\\\""))
                        }
                        (Flavor::Bash, "readonly") => format!("declare -r {k}=\"{val}\"\n"),
                        (_, "export") => format!("export {k}='{}'\n", val.replace('\'', "'\"'\"'")),
                        (_, "readonly") => format!("readonly {k}='{}'\n", val.replace('\'', "'\"'\"'")),
                        _ => format!("{k}='{}'\n", val.replace('\'', "'\"'\"'")),
                    }
                })
                .collect();
            for l in lines {
                self.out(os, &l);
            }
            self.status = 0;
            return Act::Pop;
        }
        let mut status = 0;
        for n in names {
            let (var, value) = match n.split_once('=') {
                Some((k, v)) => {
                    let (k, append) = match k.strip_suffix('+') {
                        Some(k) => (k.to_string(), true),
                        None => (k.to_string(), false),
                    };
                    let v = if append { format!("{}{v}", self.get_var(&k).unwrap_or_default()) } else { v.to_string() };
                    (k, Some(v))
                }
                None => (n.clone(), None),
            };
            if !parse::valid_name(&var) {
                let msg = match self.flavor {
                    Flavor::Bash => format!("`{n}': not a valid identifier"),
                    _ => format!("{var}: bad variable name"),
                };
                self.berr(os, name, &msg);
                status = 1;
                if self.flavor != Flavor::Bash {
                    self.status = 2;
                    return Act::Unwind(Unwind::Exit);
                }
                continue;
            }
            if integer {
                self.integers.insert(var.clone());
            }
            if name == "local" {
                let old = self.vars.get(&var).cloned();
                if let Some(Frame::Func { locals, .. }) = self.frames.iter_mut().rev().find(|f| matches!(f, Frame::Func { .. })) {
                    if !locals.iter().any(|(k, _)| *k == var) {
                        locals.push((var.clone(), old.clone()));
                    }
                }
                match &value {
                    Some(v) => {
                        let exported = old.as_ref().is_some_and(|o| o.exported);
                        self.vars.insert(var.clone(), Var { val: Val::Str(v.clone()), exported, readonly: false });
                    }
                    None => {
                        if self.flavor == Flavor::Bash {
                            self.vars.remove(&var);
                        }
                    }
                }
                continue;
            }
            if let Some(v) = &value {
                if let Err(e) = self.set_var(&var, v) {
                    self.err_msg(os, None, &e);
                    status = 1;
                    continue;
                }
            } else if array && !self.vars.contains_key(&var) {
                self.vars.insert(var.clone(), Var { val: Val::Arr(BTreeMap::new()), exported: false, readonly: false });
            } else if !self.vars.contains_key(&var) && (export || readonly) {
                if readonly || self.flavor != Flavor::Bash {
                    self.vars.insert(var.clone(), Var { val: Val::Str(String::new()), exported: false, readonly: false });
                    if export && !readonly {
                        // An exported but unset variable: remember the flag only.
                        self.vars.remove(&var);
                        continue;
                    }
                } else {
                    continue;
                }
            }
            if let Some(x) = self.vars.get_mut(&var) {
                if export {
                    x.exported = true;
                }
                if readonly {
                    x.readonly = true;
                }
            }
        }
        self.status = status;
        Act::Pop
    }

    fn bi_set(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        if args.is_empty() {
            let lines: Vec<String> = self
                .vars
                .iter()
                .filter(|(k, _)| !k.starts_with("__KUBESIM"))
                .map(|(k, v)| {
                    let val = v.scalar();
                    let safe = !val.is_empty() && val.chars().all(|c| c.is_ascii_alphanumeric() || "_/.:-,+@%=".contains(c));
                    if safe && self.flavor == Flavor::Bash {
                        format!("{k}={val}\n")
                    } else {
                        format!("{k}='{}'\n", val.replace('\'', "'\\''"))
                    }
                })
                .collect();
            for l in lines {
                self.out(os, &l);
            }
            self.status = 0;
            return Act::Pop;
        }
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "--" {
                self.pos = args[i + 1..].to_vec();
                self.status = 0;
                return Act::Pop;
            }
            if a == "-o" || a == "+o" {
                let on = a == "-o";
                i += 1;
                match args.get(i) {
                    Some(o) => {
                        if !self.set_o(o, on) {
                            let msg = match self.flavor {
                                Flavor::Bash => format!("{o}: invalid option name"),
                                _ => format!("Illegal option -o {o}"),
                            };
                            self.berr(os, "set", &msg);
                            self.status = if self.flavor == Flavor::Bash { 1 } else { 2 };
                            return if self.flavor == Flavor::Bash { Act::Pop } else { Act::Unwind(Unwind::Exit) };
                        }
                    }
                    None => {
                        let o = &self.opts;
                        let rows = [("errexit", o.errexit), ("noglob", o.noglob), ("nounset", o.nounset), ("pipefail", o.pipefail), ("xtrace", o.xtrace)];
                        let text: String = rows.iter().map(|(n, v)| format!("{n:<15}\t{}\n", if *v { "on" } else { "off" })).collect();
                        self.out(os, &text);
                    }
                }
                i += 1;
                continue;
            }
            if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
                let on = a.starts_with('-');
                let mut o_args = 0usize;
                for c in a[1..].chars() {
                    match c {
                        // `set -euo pipefail`: each `o` in a cluster takes the next argument.
                        'o' => o_args += 1,
                        'e' => self.opts.errexit = on,
                        'x' => self.opts.xtrace = on,
                        'u' => self.opts.nounset = on,
                        'f' => self.opts.noglob = on,
                        'n' => self.opts.noexec = on,
                        'a' => self.opts.allexport = on,
                        'v' => self.opts.verbose = on,
                        'h' | 'm' | 'b' | 'C' | 'B' | 'H' | 'P' | 'T' | 'E' | 'k' | 't' => {}
                        other => {
                            let msg = match self.flavor {
                                Flavor::Bash => format!("-{other}: invalid option"),
                                _ => format!("Illegal option -{other}"),
                            };
                            self.berr(os, "set", &msg);
                            self.status = if self.flavor == Flavor::Bash { 2 } else { 2 };
                            return if self.flavor == Flavor::Bash { Act::Pop } else { Act::Unwind(Unwind::Exit) };
                        }
                    }
                }
                for _ in 0..o_args {
                    i += 1;
                    let Some(o) = args.get(i) else { break };
                    if !self.set_o(o, on) {
                        let msg = match self.flavor {
                            Flavor::Bash => format!("{o}: invalid option name"),
                            _ => format!("Illegal option -o {o}"),
                        };
                        self.berr(os, "set", &msg);
                        self.status = if self.flavor == Flavor::Bash { 1 } else { 2 };
                        return if self.flavor == Flavor::Bash { Act::Pop } else { Act::Unwind(Unwind::Exit) };
                    }
                }
                i += 1;
                continue;
            }
            self.pos = args[i..].to_vec();
            break;
        }
        self.status = 0;
        Act::Pop
    }

    fn bi_source(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        let Some(file) = args.first() else {
            let msg = match self.flavor {
                Flavor::Bash => "filename argument required".to_string(),
                _ => "missing argument".into(),
            };
            self.berr(os, ".", &msg);
            self.status = 2;
            return Act::Pop;
        };
        let path = if file.contains('/') {
            Some(crate::fs::join(&self.cwd, file))
        } else {
            let pathvar = self.get_var("PATH").unwrap_or_else(|| registry::DEFAULT_PATH.into());
            let mut found = pathvar.split(':').map(|d| crate::fs::join(d, file)).find(|p| os.fs_ref().stat(p).is_ok_and(|m| m.is_file()));
            if found.is_none() && self.flavor == Flavor::Bash {
                let p = crate::fs::join(&self.cwd, file);
                if os.fs_ref().stat(&p).is_ok() {
                    found = Some(p);
                }
            }
            found
        };
        let text = path.as_ref().map(|p| os.fs_ref().read(p)).unwrap_or(Err(Errno::ENOENT));
        match text {
            Ok(t) => {
                let src = String::from_utf8_lossy(&t).into_owned();
                match parse::parse(&src, self.flavor) {
                    Ok(cmd) => {
                        let saved_pos = if args.len() > 1 { Some(std::mem::replace(&mut self.pos, args[1..].to_vec())) } else { None };
                        self.frames.push(Frame::Source { saved_pos });
                        self.status = 0;
                        Act::Push(Frame::Run(cmd))
                    }
                    Err(e) => {
                        let m = e.message(self.flavor, file);
                        self.write_fd(os, 2, format!("{m}\n").as_bytes());
                        self.status = 2;
                        Act::Unwind(Unwind::Exit)
                    }
                }
            }
            Err(e) => {
                let msg = match self.flavor {
                    Flavor::Bash => format!("{file}: {}", e.strerror()),
                    Flavor::Dash => format!("cannot open {file}: No such file"),
                    Flavor::Ash => format!("can't open '{file}': {}", e.strerror()),
                };
                if self.flavor == Flavor::Bash {
                    self.err_msg(os, None, &msg);
                    self.status = 1;
                    Act::Pop
                } else {
                    self.err_msg(os, Some("."), &msg);
                    self.status = 2;
                    Act::Unwind(Unwind::Exit)
                }
            }
        }
    }

    fn bi_trap(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        if args.is_empty() || args[0] == "-p" {
            let mut lines = Vec::new();
            for (sig, act) in &self.traps {
                let name = if self.flavor == Flavor::Bash && sig != "EXIT" { format!("SIG{sig}") } else { sig.clone() };
                lines.push(format!("trap -- '{}' {name}\n", act.replace('\'', "'\\''")));
            }
            for l in lines {
                self.out(os, &l);
            }
            self.status = 0;
            return Act::Pop;
        }
        if args[0] == "-l" {
            let text: String = Signal::ALL.iter().map(|s| format!("{}) SIG{}\n", s.number(), s.name())).collect();
            self.out(os, &text);
            self.status = 0;
            return Act::Pop;
        }
        let (action, sigs): (Option<String>, &[String]) = if args.len() == 1 {
            (None, args)
        } else if args[0] == "-" {
            (None, &args[1..])
        } else {
            (Some(args[0].clone()), &args[1..])
        };
        let mut status = 0;
        for s in sigs {
            if self.flavor == Flavor::Dash && matches!(s.to_ascii_uppercase().as_str(), "ERR" | "DEBUG" | "RETURN") {
                self.write_fd(os, 2, format!("trap: {s}: bad trap\n").as_bytes());
                status = 1;
                continue;
            }
            let key = match s.to_ascii_uppercase().as_str() {
                "0" | "EXIT" => "EXIT".to_string(),
                "ERR" | "DEBUG" | "RETURN" => s.to_ascii_uppercase(),
                other => match Signal::parse(other) {
                    Some(sig) => sig.name().to_string(),
                    None => match other.strip_prefix("SIG").unwrap_or(other) {
                        "CHLD" | "PIPE" | "ALRM" | "WINCH" | "CONT" | "STOP" | "TSTP" => other.strip_prefix("SIG").unwrap_or(other).to_string(),
                        _ => {
                            let msg = match self.flavor {
                                Flavor::Bash => format!("{s}: invalid signal specification"),
                                _ => format!("{s}: bad trap"),
                            };
                            self.berr(os, "trap", &msg);
                            status = 1;
                            continue;
                        }
                    },
                },
            };
            match &action {
                None => {
                    self.traps.remove(&key);
                }
                Some(a) => {
                    self.traps.insert(key, a.clone());
                }
            }
        }
        self.status = status;
        Act::Pop
    }

    fn bi_kill(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        // Jobs of this shell get the signal directly; everything else goes to the host.
        let mut sig = Some(Signal::Term);
        let mut rest = Vec::new();
        let mut i = 0;
        if args.first().map(String::as_str) == Some("-l") {
            let text = applets::misc::kill_list(args.get(1).map(String::as_str));
            self.out(os, &text);
            self.status = 0;
            return Act::Pop;
        }
        while i < args.len() {
            let a = &args[i];
            if a == "-s" || a == "-n" {
                i += 1;
                sig = args.get(i).and_then(|s| Signal::parse(s));
            } else if a == "-0" || a == "-s0" {
                sig = None;
            } else if let Some(s) = a.strip_prefix('-').filter(|s| !s.is_empty() && rest.is_empty()) {
                match Signal::parse(s) {
                    Some(x) => sig = Some(x),
                    None => {
                        let msg = match self.flavor {
                            Flavor::Bash => format!("{s}: invalid signal specification"),
                            _ => format!("invalid signal number or name: {s}"),
                        };
                        self.berr(os, "kill", &msg);
                        self.status = 1;
                        return Act::Pop;
                    }
                }
            } else {
                rest.push(a.clone());
            }
            i += 1;
        }
        if rest.is_empty() {
            let msg = match self.flavor {
                Flavor::Bash => "usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]".to_string(),
                _ => "usage: kill [-s sigspec | -signum | -sigspec] [pid | job]... or\nkill -l [exitstatus]".to_string(),
            };
            self.berr(os, "kill", &msg);
            self.status = if self.flavor == Flavor::Bash { 2 } else { 1 };
            return Act::Pop;
        }
        let mut status = 0;
        for p in rest {
            let pid: Option<u32> = if let Some(j) = p.strip_prefix('%') {
                j.parse::<usize>().ok().and_then(|n| self.jobs.get(n.saturating_sub(1)).map(|j| j.pid))
            } else {
                p.parse().ok()
            };
            let Some(pid) = pid else {
                let msg = match self.flavor {
                    Flavor::Bash => format!("{p}: arguments must be process or job IDs"),
                    _ => format!("invalid number '{p}'"),
                };
                self.berr(os, "kill", &msg);
                status = 1;
                continue;
            };
            if let Some(j) = self.jobs.iter_mut().find(|j| j.pid == pid && j.code.is_none()) {
                if let Some(s) = sig {
                    j.state = TaskState::Ready(Wake::Signal(s));
                    if self.outstanding.is_some_and(|t| t == Task::Job(self.jobs.iter().position(|x| x.pid == pid).unwrap_or(usize::MAX))) {
                        self.outstanding = None;
                    }
                }
                continue;
            }
            if pid == self.pid && !self.subshell {
                if let Some(s) = sig {
                    self.pending_self_signal(os, s);
                }
                continue;
            }
            if let Err(e) = os.kill(pid, sig) {
                let msg = match self.flavor {
                    Flavor::Bash => format!("({pid}) - {}", e.strerror()),
                    _ => format!("can't kill pid {pid}: {}", e.strerror()),
                };
                self.berr(os, "kill", &msg);
                status = 1;
            }
        }
        self.status = status;
        Act::Pop
    }

    fn pending_self_signal(&mut self, os: &mut dyn Os, s: Signal) {
        match self.traps.get(s.name()) {
            Some(a) if a.is_empty() => {}
            Some(_) => self.pending_traps.push(s),
            None => {
                if s == Signal::Kill || self.pid != 1 {
                    self.exiting = Some(s.exit_code());
                    self.exit_trap_done = true;
                    self.frames.clear();
                }
            }
        }
        let _ = os;
    }

    fn bi_read(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        let mut raw = false;
        let mut names = Vec::new();
        let mut array: Option<String> = None;
        let mut delim = b'\n';
        let mut i = 0;
        // Options cluster like getopt (`read -ra parts`, `read -rp 'prompt: ' x`); an option
        // that takes a value uses the rest of its word or the next argument.
        while i < args.len() {
            let a = &args[i];
            if names.is_empty() && a.len() > 1 && a.starts_with('-') && a != "--" {
                let chars: Vec<char> = a[1..].chars().collect();
                let mut k = 0;
                while k < chars.len() {
                    let c = chars[k];
                    if "ptnNuad".contains(c) {
                        let rest: String = chars[k + 1..].iter().collect();
                        let val = if rest.is_empty() {
                            i += 1;
                            args.get(i).cloned().unwrap_or_default()
                        } else {
                            rest
                        };
                        match c {
                            'p' => {
                                self.write_fd(os, 2, val.as_bytes());
                            }
                            'a' => array = Some(val),
                            'd' => delim = val.bytes().next().unwrap_or(0),
                            _ => {}
                        }
                        break;
                    }
                    if c == 'r' {
                        raw = true;
                    }
                    k += 1;
                }
            } else if !(names.is_empty() && a == "--") {
                names.push(a.clone());
            }
            i += 1;
        }
        if names.is_empty() && array.is_none() {
            names.push("REPLY".into());
        }
        let (line, eof) = match self.fds.first() {
            Some(FdTarget::Input(k)) => match self.inputs.get_mut(*k) {
                Some(b) => {
                    let rest = b.data.get(b.pos..).unwrap_or(&[]);
                    match rest.iter().position(|&c| c == delim) {
                        Some(n) => {
                            let l = rest[..n].to_vec();
                            b.pos += n + 1;
                            (l, false)
                        }
                        None => {
                            let l = rest.to_vec();
                            b.pos = b.data.len();
                            (l, true)
                        }
                    }
                }
                None => (Vec::new(), true),
            },
            _ => (Vec::new(), true),
        };
        let mut text = String::from_utf8_lossy(&line).into_owned();
        if !raw {
            let mut out = String::new();
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                } else {
                    out.push(c);
                }
            }
            text = out;
        }
        let ifs = self.get_var("IFS").unwrap_or_else(|| " \t\n".into());
        let is_ws = |c: char| ifs.contains(c) && (c == ' ' || c == '\t' || c == '\n');
        if let Some(arr) = array {
            let items: BTreeMap<usize, String> =
                text.split(|c: char| ifs.contains(c)).filter(|s| !s.is_empty()).enumerate().map(|(i, s)| (i, s.to_string())).collect();
            self.vars.insert(arr, Var { val: Val::Arr(items), exported: false, readonly: false });
        } else {
            let mut rest = text.trim_start_matches(is_ws).to_string();
            for (k, n) in names.iter().enumerate() {
                let last = k + 1 == names.len();
                let val = if last {
                    let v = rest.trim_end_matches(is_ws).to_string();
                    rest.clear();
                    v
                } else {
                    match rest.find(|c: char| ifs.contains(c)) {
                        Some(p) => {
                            let v = rest[..p].to_string();
                            let after = rest[p..].chars().skip(1).collect::<String>();
                            rest = after.trim_start_matches(is_ws).to_string();
                            v
                        }
                        None => std::mem::take(&mut rest),
                    }
                };
                if let Err(e) = self.set_var(n, &val) {
                    self.err_msg(os, None, &e);
                    self.status = 1;
                    return Act::Pop;
                }
            }
        }
        self.status = if eof && line.is_empty() {
            1
        } else if eof {
            1
        } else {
            0
        };
        if eof && !line.is_empty() {
            self.status = 1;
        }
        Act::Pop
    }

    fn describe(&self, os: &mut dyn Os, name: &str) -> Option<(String, String)> {
        const KEYWORDS: &[&str] =
            &["if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done", "in", "{", "}", "!", "[[", "]]", "function"];
        if KEYWORDS.contains(&name) && (self.flavor == Flavor::Bash || !matches!(name, "[[" | "]]" | "function")) {
            return Some(("keyword".into(), format!("{name} is a shell keyword")));
        }
        if self.funcs.contains_key(name) {
            let what = if self.flavor == Flavor::Dash { "a shell function" } else { "a function" };
            return Some(("function".into(), format!("{name} is {what}")));
        }
        if self.is_builtin(name) {
            let special = SPECIAL.contains(&name) && self.flavor != Flavor::Bash;
            return Some(("builtin".into(), format!("{name} is a {}shell builtin", if special { "special " } else { "" })));
        }
        match self.find_command(os, name) {
            Ok(p) => Some(("file".into(), format!("{name} is {p}"))),
            Err(_) => None,
        }
    }

    fn bi_type(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        let mut status = 0;
        for n in args.iter().filter(|a| !a.starts_with('-')) {
            match self.describe(os, n) {
                Some((_, d)) => {
                    self.out(os, &format!("{d}\n"));
                }
                None => match self.flavor {
                    Flavor::Bash => {
                        self.berr(os, "type", &format!("{n}: not found"));
                        status = 1;
                    }
                    _ => {
                        self.out(os, &format!("{n}: not found\n"));
                        status = 127;
                    }
                },
            }
        }
        self.status = status;
        Act::Pop
    }

    fn bi_command(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        let mut v = false;
        let mut big_v = false;
        let mut i = 0;
        while i < args.len() && args[i].starts_with('-') {
            match args[i].as_str() {
                "-v" => v = true,
                "-V" => big_v = true,
                "-p" => {}
                _ => break,
            }
            i += 1;
        }
        let rest = &args[i..];
        if rest.is_empty() {
            self.status = 0;
            return Act::Pop;
        }
        if v || big_v {
            let mut status = 0;
            for n in rest {
                match self.describe(os, n) {
                    Some((kind, d)) => {
                        let line = if big_v {
                            d
                        } else if kind == "file" {
                            self.find_command(os, n).unwrap_or_default()
                        } else {
                            n.clone()
                        };
                        self.out(os, &format!("{line}\n"));
                    }
                    None => {
                        if big_v {
                            let msg = match self.flavor {
                                Flavor::Bash => format!("command: {n}: not found"),
                                _ => format!("{n}: not found"),
                            };
                            self.err_msg(os, None, &msg);
                        }
                        status = if self.flavor == Flavor::Bash { 1 } else { 127 };
                    }
                }
            }
            self.status = status;
            return Act::Pop;
        }
        // `command name args`: skip functions.
        if self.is_builtin(&rest[0]) {
            return self.builtin(os, rest, &[]);
        }
        self.run_external(os, rest.to_vec(), Vec::new(), Vec::new(), ChildKind::Cmd)
    }

    fn bi_getopts(&mut self, os: &mut dyn Os, args: &[String]) -> Act {
        let (Some(spec), Some(var)) = (args.first(), args.get(1)) else {
            self.berr(os, "getopts", "usage: getopts optstring name [arg ...]");
            self.status = 2;
            return Act::Pop;
        };
        let params: Vec<String> = if args.len() > 2 { args[2..].to_vec() } else { self.pos.clone() };
        let optind: usize = self.get_var("OPTIND").and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
        let sub: usize = self.get_var("__KUBESIM_OPTSUB").and_then(|v| v.parse().ok()).unwrap_or(1);
        let Some(arg) = params.get(optind - 1) else {
            let _ = self.set_var(var, "?");
            self.status = 1;
            return Act::Pop;
        };
        if !arg.starts_with('-') || arg == "-" || arg == "--" {
            if arg == "--" {
                let _ = self.set_var("OPTIND", &(optind + 1).to_string());
            }
            let _ = self.set_var(var, "?");
            self.status = 1;
            return Act::Pop;
        }
        let chars: Vec<char> = arg.chars().collect();
        let c = chars.get(sub).copied().unwrap_or('?');
        let next = |sh: &mut Shell, consumed_all: bool| {
            if consumed_all {
                let _ = sh.set_var("OPTIND", &(optind + 1).to_string());
                sh.vars.remove("__KUBESIM_OPTSUB");
            } else {
                sh.vars.insert("__KUBESIM_OPTSUB".into(), Var { val: Val::Str((sub + 1).to_string()), exported: false, readonly: false });
            }
        };
        match spec.find(c) {
            Some(p) if c != ':' => {
                let takes = spec[p + 1..].starts_with(':');
                let _ = self.set_var(var, &c.to_string());
                if !takes {
                    self.vars.remove("OPTARG");
                }
                if takes {
                    if sub + 1 < chars.len() {
                        let v: String = chars[sub + 1..].iter().collect();
                        let _ = self.set_var("OPTARG", &v);
                        next(self, true);
                    } else if let Some(v) = params.get(optind) {
                        let v = v.clone();
                        let _ = self.set_var("OPTARG", &v);
                        let _ = self.set_var("OPTIND", &(optind + 2).to_string());
                        self.vars.remove("__KUBESIM_OPTSUB");
                    } else if spec.starts_with(':') {
                        let _ = self.set_var(var, ":");
                        let _ = self.set_var("OPTARG", &c.to_string());
                        next(self, true);
                    } else {
                        self.err_msg(os, None, &format!("option requires an argument -- {c}"));
                        let _ = self.set_var(var, "?");
                        self.vars.remove("OPTARG");
                        next(self, true);
                    }
                } else {
                    next(self, sub + 1 >= chars.len());
                }
            }
            _ => {
                if !spec.starts_with(':') {
                    let msg = match self.flavor {
                        Flavor::Bash => format!("illegal option -- {c}"),
                        _ => format!("Illegal option -{c}"),
                    };
                    self.err_msg(os, None, &msg);
                    self.vars.remove("OPTARG");
                } else {
                    let _ = self.set_var("OPTARG", &c.to_string());
                }
                let _ = self.set_var(var, "?");
                next(self, sub + 1 >= chars.len());
            }
        }
        self.status = 0;
        Act::Pop
    }

    /// Evaluates `[[ ... ]]` lazily (`&&`/`||` short-circuit); with `set -x` each primary is
    /// traced as bash does (`+ [[ -f x ]]`).
    pub(super) fn eval_cond(&mut self, os: &mut dyn Os, e: &CondExpr) -> Result<bool, Option<Act>> {
        self.cond(os, e, false)
    }

    fn trace_cond(&mut self, os: &mut dyn Os, neg: bool, text: &str) {
        if let Some(rp) = self.replay.as_mut() {
            rp.traces += 1;
            if rp.traces <= rp.skip_traces {
                return;
            }
        }
        if self.opts.xtrace {
            let t = format!("{}[[ {}{} ]]\n", self.trace_prefix(&self.ps4()), if neg { "! " } else { "" }, text);
            self.write_fd(os, 2, t.as_bytes());
        }
    }

    fn cond(&mut self, os: &mut dyn Os, e: &CondExpr, neg: bool) -> Result<bool, Option<Act>> {
        match e {
            CondExpr::And(a, b) => Ok(self.cond(os, a, false)? && self.cond(os, b, false)?),
            CondExpr::Or(a, b) => Ok(self.cond(os, a, false)? || self.cond(os, b, false)?),
            CondExpr::Not(a) => Ok(!self.cond(os, a, !neg)?),
            CondExpr::Single(w) => {
                let v = self.expand_str_nosubst(os, w).map_err(Some)?;
                self.trace_cond(os, neg, &v);
                Ok(!v.is_empty())
            }
            CondExpr::Unary(op, w) => {
                let v = self.expand_str_nosubst(os, w).map_err(Some)?;
                self.trace_cond(os, neg, &format!("{op} {v}"));
                let cwd = self.cwd.clone();
                applets::test::eval(&[op.clone(), v], os, &cwd).map_err(|m| {
                    let m = self.test_msg(&m);
                    self.berr(os, "[[", &m);
                    None
                })
            }
            CondExpr::Binary(a, op, b) => {
                let l = self.expand_str_nosubst(os, a).map_err(Some)?;
                match op.as_str() {
                    "==" | "=" | "!=" => {
                        let pat = self.expand_pattern_nosubst(os, b).map_err(Some)?;
                        self.trace_cond(os, neg, &format!("{l} {op} {pat}"));
                        let m = crate::pattern::matches(&pat, &l);
                        Ok(if op == "!=" { !m } else { m })
                    }
                    "=~" => {
                        let pat = self.expand_regex_nosubst(os, b).map_err(Some)?;
                        self.trace_cond(os, neg, &format!("{l} {op} {pat}"));
                        match crate::regex::Regex::new(&pat, true, false) {
                            Ok(re) => match re.captures(&l) {
                                Some(caps) => {
                                    let arr: BTreeMap<usize, String> = caps.into_iter().enumerate().map(|(i, c)| (i, c.unwrap_or_default())).collect();
                                    self.vars.insert("BASH_REMATCH".into(), Var { val: Val::Arr(arr), exported: false, readonly: false });
                                    Ok(true)
                                }
                                None => {
                                    self.vars.insert("BASH_REMATCH".into(), Var { val: Val::Arr(BTreeMap::new()), exported: false, readonly: false });
                                    Ok(false)
                                }
                            },
                            Err(_) => Err(None),
                        }
                    }
                    "<" | ">" => {
                        let r = self.expand_str_nosubst(os, b).map_err(Some)?;
                        self.trace_cond(os, neg, &format!("{l} {op} {r}"));
                        Ok(if op == "<" { l < r } else { l > r })
                    }
                    _ => {
                        let r = self.expand_str_nosubst(os, b).map_err(Some)?;
                        self.trace_cond(os, neg, &format!("{l} {op} {r}"));
                        if matches!(op.as_str(), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge") {
                            let x = self.arith(os, &l).map_err(Some)?;
                            let y = self.arith(os, &r).map_err(Some)?;
                            return Ok(match op.as_str() {
                                "-eq" => x == y,
                                "-ne" => x != y,
                                "-lt" => x < y,
                                "-le" => x <= y,
                                "-gt" => x > y,
                                _ => x >= y,
                            });
                        }
                        let cwd = self.cwd.clone();
                        applets::test::eval(&[l, op.clone(), r], os, &cwd).map_err(|m| {
                            let m = self.test_msg(&m);
                            self.berr(os, "[[", &m);
                            None
                        })
                    }
                }
            }
        }
    }

    /// The right side of `=~`: quoted parts match literally.
    fn expand_regex_nosubst(&mut self, os: &mut dyn Os, w: &Word) -> Result<String, Act> {
        let mut out = String::new();
        for p in &w.0 {
            let t = self.expand_str_nosubst(os, &Word(vec![p.clone()]))?;
            match p {
                WordPart::Quoted(_) | WordPart::Dq(_) => {
                    for c in t.chars() {
                        if "\\.[]()*+?{}|^$".contains(c) {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                }
                _ => out.push_str(&t),
            }
        }
        Ok(out)
    }
}
