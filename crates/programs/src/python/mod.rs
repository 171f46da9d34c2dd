//! python3 / python2: the command line (`-c`, scripts, `-m http.server`, `-V`, `-u`) and a
//! small resumable interpreter for the docs' Job scripts (see the README for the subset).

pub mod http_server;
pub mod parse;

use crate::common;
use kubesim_os::program::{default_signal_exit, Os, Program, Signal, Spawn, Step, Wake};
use parse::{Block, Const, Expr, FPart, FuncDef, Handler, Stmt, StmtKind, Target};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Version when `PYTHON_VERSION` is unset.
pub const DEFAULT_VERSION: &str = "3.13.7";

/// A Python value.
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    /// None
    None,
    /// bool
    Bool(bool),
    /// int
    Int(i128),
    /// float
    Float(f64),
    /// str
    Str(String),
    /// list
    List(Vec<V>),
    /// tuple
    Tuple(Vec<V>),
    /// dict (insertion ordered)
    Dict(Vec<(V, V)>),
    /// range(start, stop, step)
    Range(i128, i128, i128),
    /// A user function.
    Func(Arc<FuncDef>),
    /// A builtin function by qualified name (`print`, `os.getenv`).
    Builtin(String),
    /// A bound method.
    Method(Box<V>, String),
    /// A module.
    Module(String),
    /// `os.environ`.
    Environ,
    /// A type (`int`, `str`, exception classes).
    Type(String),
    /// An exception instance.
    Exc(String, Vec<V>),
    /// An open file (index into the file table).
    File(usize),
}

impl V {
    fn type_name(&self) -> &'static str {
        match self {
            V::None => "NoneType",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Float(_) => "float",
            V::Str(_) => "str",
            V::List(_) => "list",
            V::Tuple(_) => "tuple",
            V::Dict(_) => "dict",
            V::Range(..) => "range",
            V::Func(_) => "function",
            V::Builtin(_) | V::Method(..) => "builtin_function_or_method",
            V::Module(_) => "module",
            V::Environ => "_Environ",
            V::Type(_) => "type",
            V::Exc(..) => "Exception",
            V::File(_) => "_io.TextIOWrapper",
        }
    }

    fn truthy(&self) -> bool {
        match self {
            V::None => false,
            V::Bool(b) => *b,
            V::Int(i) => *i != 0,
            V::Float(f) => *f != 0.0,
            V::Str(s) => !s.is_empty(),
            V::List(v) | V::Tuple(v) => !v.is_empty(),
            V::Dict(d) => !d.is_empty(),
            V::Range(a, b, s) => range_len(*a, *b, *s) > 0,
            _ => true,
        }
    }
}

fn range_len(a: i128, b: i128, s: i128) -> i128 {
    if s > 0 && b > a {
        (b - a + s - 1) / s
    } else if s < 0 && a > b {
        (a - b - s - 1) / (-s)
    } else {
        0
    }
}

/// Python's `repr(float)`.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..16).contains(&exp) {
        // Python's repr keeps the shortest mantissa as is (`1e+20`, `1.5e+20`).
        return format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    let s = format!("{f}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

fn str_repr(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut o = String::new();
    o.push(q);
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if c == q => {
                o.push('\\');
                o.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => o.push_str(&format!("\\x{:02x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push(q);
    o
}

/// `repr(v)`.
pub fn repr(v: &V) -> String {
    match v {
        V::Str(s) => str_repr(s),
        V::List(items) => format!("[{}]", items.iter().map(repr).collect::<Vec<_>>().join(", ")),
        V::Tuple(items) if items.len() == 1 => format!("({},)", repr(&items[0])),
        V::Tuple(items) => format!("({})", items.iter().map(repr).collect::<Vec<_>>().join(", ")),
        V::Dict(d) => format!("{{{}}}", d.iter().map(|(k, v)| format!("{}: {}", repr(k), repr(v))).collect::<Vec<_>>().join(", ")),
        V::Exc(k, args) => format!("{k}({})", args.iter().map(repr).collect::<Vec<_>>().join(", ")),
        V::Environ => "environ({...})".into(),
        other => to_str(other),
    }
}

/// `str(v)`.
pub fn to_str(v: &V) -> String {
    match v {
        V::None => "None".into(),
        V::Bool(b) => {
            if *b {
                "True".into()
            } else {
                "False".into()
            }
        }
        V::Int(i) => i.to_string(),
        V::Float(f) => float_repr(*f),
        V::Str(s) => s.clone(),
        V::Range(a, b, s) => {
            if *s == 1 {
                format!("range({a}, {b})")
            } else {
                format!("range({a}, {b}, {s})")
            }
        }
        V::Func(f) => format!("<function {} at 0x7f3a2c1d0e00>", f.name),
        V::Builtin(n) => format!("<built-in function {}>", n.rsplit('.').next().unwrap_or(n)),
        V::Method(_, n) => format!("<built-in method {n}>"),
        V::Module(m) => format!("<module '{m}'>"),
        V::Type(t) => format!("<class '{t}'>"),
        V::Exc(_, args) => match args.len() {
            0 => String::new(),
            1 => to_str(&args[0]),
            _ => repr(&V::Tuple(args.clone())),
        },
        V::File(_) => "<_io.TextIOWrapper>".into(),
        other => repr(other),
    }
}

/// A raised exception (or `sys.exit`).
#[derive(Clone, Debug, PartialEq)]
pub struct Exc {
    /// Class name (`ValueError`, `SystemExit`).
    pub kind: String,
    /// Arguments.
    pub args: Vec<V>,
    /// Traceback entries (function name, line), outermost first.
    pub tb: Vec<(String, usize)>,
}

fn exc(kind: &str, msg: impl Into<String>) -> Exc {
    Exc { kind: kind.into(), args: vec![V::Str(msg.into())], tb: Vec::new() }
}

fn is_subclass(kind: &str, of: &str) -> bool {
    if kind == of || of == "BaseException" {
        return true;
    }
    let parent = match kind {
        "SystemExit" | "KeyboardInterrupt" | "GeneratorExit" => "BaseException",
        "KeyError" | "IndexError" => "LookupError",
        "ZeroDivisionError" | "OverflowError" => "ArithmeticError",
        "FileNotFoundError" | "PermissionError" | "IsADirectoryError" | "NotADirectoryError" | "FileExistsError" | "TimeoutError" | "ConnectionError" => {
            "OSError"
        }
        "ModuleNotFoundError" => "ImportError",
        "RecursionError" | "NotImplementedError" => "RuntimeError",
        "UnboundLocalError" => "NameError",
        "Exception" => "BaseException",
        _ => "Exception",
    };
    if parent == kind {
        return false;
    }
    is_subclass(parent, of)
}

const EXC_TYPES: &[&str] = &[
    "BaseException",
    "Exception",
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "LookupError",
    "ZeroDivisionError",
    "ArithmeticError",
    "NameError",
    "RuntimeError",
    "SystemExit",
    "KeyboardInterrupt",
    "OSError",
    "IOError",
    "FileNotFoundError",
    "PermissionError",
    "AttributeError",
    "ImportError",
    "ModuleNotFoundError",
    "AssertionError",
    "NotImplementedError",
    "StopIteration",
    "OverflowError",
    "TimeoutError",
    "EOFError",
    "UnicodeDecodeError",
    "RecursionError",
    "FileExistsError",
];

#[derive(Clone, Debug, PartialEq)]
enum Cont {
    Discard,
    Assign(Target),
    Sync,
}

#[derive(Clone, Debug, PartialEq)]
enum TryState {
    Body,
    Handler,
    Else,
    Finally(Option<Exc>),
}

#[derive(Clone, Debug)]
enum Frame {
    Block { body: Block, pc: usize },
    While { cond: Expr, body: Block },
    For { target: Target, items: Arc<Vec<V>>, idx: usize, body: Block },
    Func { name: String, locals: BTreeMap<String, V>, globals: Vec<String>, line: usize, cont: Cont },
    Try { handlers: Arc<Vec<Handler>>, els: Option<Block>, fin: Option<Block>, state: TryState },
    With { file: Option<usize> },
}

#[derive(Clone, Debug, PartialEq)]
enum Action {
    Out(Vec<u8>),
    Err(String),
    Sleep(u64),
    Compute(u64),
    Exit(i32),
}

#[derive(Clone, Debug)]
struct OpenFile {
    path: String,
    write: bool,
    buf: Vec<u8>,
    data: Vec<u8>,
    pos: usize,
    closed: bool,
    append: bool,
}

/// The interpreter state (plain data: cloneable mid-run).
#[derive(Clone, Debug)]
pub struct Interp {
    globals: BTreeMap<String, V>,
    frames: Vec<Frame>,
    module_line: usize,
    pending: Vec<Action>,
    stdout_buf: Vec<u8>,
    unbuffered: bool,
    files: Vec<OpenFile>,
    env: BTreeMap<String, String>,
    argv: Vec<String>,
    filename: String,
    source: Vec<String>,
    show_source: bool,
    version: String,
    py2: bool,
    stdin: Vec<String>,
    stdin_pos: usize,
    steps: u64,
    sync_depth: u32,
    ret: Option<V>,
    pending_sleep_ms: u64,
    cwd: String,
}

type R<T> = Result<T, Exc>;

impl Interp {
    fn out(&mut self, s: &str) {
        self.stdout_buf.extend_from_slice(s.as_bytes());
        if self.unbuffered || self.stdout_buf.len() >= 8192 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.stdout_buf.is_empty() {
            let b = std::mem::take(&mut self.stdout_buf);
            self.pending.push(Action::Out(b));
        }
    }

    fn err(&mut self, s: &str) {
        self.pending.push(Action::Err(s.to_string()));
    }

    fn traceback(&self) -> Vec<(String, usize)> {
        let mut tb = vec![("<module>".to_string(), self.module_line)];
        for f in &self.frames {
            if let Frame::Func { name, line, .. } = f {
                tb.push((name.clone(), *line));
            }
        }
        tb
    }

    fn raise(&self, mut e: Exc) -> Exc {
        if e.tb.is_empty() {
            e.tb = self.traceback();
        }
        e
    }

    fn set_line(&mut self, line: usize) {
        for f in self.frames.iter_mut().rev() {
            if let Frame::Func { line: l, .. } = f {
                *l = line;
                return;
            }
        }
        self.module_line = line;
    }

    fn lookup(&self, name: &str) -> Option<V> {
        for f in self.frames.iter().rev() {
            if let Frame::Func { locals, globals, .. } = f {
                if globals.iter().any(|g| g == name) {
                    break;
                }
                if let Some(v) = locals.get(name) {
                    return Some(v.clone());
                }
                break;
            }
        }
        if let Some(v) = self.globals.get(name) {
            return Some(v.clone());
        }
        builtin_value(name)
    }

    fn store(&mut self, name: &str, v: V) {
        for f in self.frames.iter_mut().rev() {
            if let Frame::Func { locals, globals, .. } = f {
                if globals.iter().any(|g| g == name) {
                    break;
                }
                locals.insert(name.to_string(), v);
                return;
            }
        }
        self.globals.insert(name.to_string(), v);
    }

    fn delete(&mut self, name: &str) -> bool {
        for f in self.frames.iter_mut().rev() {
            if let Frame::Func { locals, .. } = f {
                return locals.remove(name).is_some();
            }
        }
        self.globals.remove(name).is_some()
    }

    fn now_ms(&self, os: &dyn Os) -> u64 {
        os.unix_time_ms() + self.pending_sleep_ms
    }

    // ------------------------------------------------------------------ statements

    fn exec(&mut self, os: &mut dyn Os, s: &Stmt) -> R<()> {
        self.set_line(s.line);
        self.steps += 1;
        match &s.kind {
            StmtKind::Pass | StmtKind::Global(_) => {
                if let StmtKind::Global(names) = &s.kind {
                    for f in self.frames.iter_mut().rev() {
                        if let Frame::Func { globals, .. } = f {
                            globals.extend(names.iter().cloned());
                            break;
                        }
                    }
                }
            }
            StmtKind::Expr(e) => {
                if let Some((f, args, kw)) = self.user_call(os, e)? {
                    return self.push_call(os, f, args, kw, Cont::Discard);
                }
                self.eval(os, e)?;
            }
            StmtKind::Assign(targets, e) => {
                if targets.len() == 1 {
                    if let Some((f, args, kw)) = self.user_call(os, e)? {
                        return self.push_call(os, f, args, kw, Cont::Assign(targets[0].clone()));
                    }
                }
                let v = self.eval(os, e)?;
                for t in targets {
                    self.assign(os, t, v.clone())?;
                }
            }
            StmtKind::AugAssign(t, op, e) => {
                let cur = self.eval_target(os, t)?;
                let r = self.eval(os, e)?;
                let v = self.binop(op, cur, r)?;
                self.assign(os, t, v)?;
            }
            StmtKind::If(arms, els) => {
                for (c, b) in arms {
                    if self.eval(os, c)?.truthy() {
                        self.frames.push(Frame::Block { body: b.clone(), pc: 0 });
                        return Ok(());
                    }
                }
                if let Some(b) = els {
                    self.frames.push(Frame::Block { body: b.clone(), pc: 0 });
                }
            }
            StmtKind::While(c, b) => self.frames.push(Frame::While { cond: c.clone(), body: b.clone() }),
            StmtKind::For(t, it, b) => {
                let v = self.eval(os, it)?;
                let items = self.iterate(os, v)?;
                self.frames.push(Frame::For { target: t.clone(), items: Arc::new(items), idx: 0, body: b.clone() });
            }
            StmtKind::Break | StmtKind::Continue => {
                let brk = matches!(s.kind, StmtKind::Break);
                while let Some(f) = self.frames.last() {
                    match f {
                        Frame::While { .. } | Frame::For { .. } => {
                            if brk {
                                self.frames.pop();
                            }
                            return Ok(());
                        }
                        Frame::Func { .. } => break,
                        _ => {
                            self.frames.pop();
                        }
                    }
                }
            }
            StmtKind::Return(e) => {
                let v = match e {
                    Some(e) => self.eval(os, e)?,
                    None => V::None,
                };
                self.do_return(os, v)?;
            }
            StmtKind::Def(d) => {
                self.store(&d.name.clone(), V::Func(d.clone()));
            }
            StmtKind::Import(mods) => {
                for (m, alias) in mods {
                    self.check_module(m)?;
                    match alias {
                        Some(a) => self.store(a, V::Module(m.clone())),
                        None => {
                            let top = m.split('.').next().unwrap_or(m).to_string();
                            self.store(&top.clone(), V::Module(top));
                        }
                    }
                }
            }
            StmtKind::FromImport(m, names) => {
                self.check_module(m)?;
                for (n, alias) in names {
                    if n == "*" {
                        continue;
                    }
                    let v =
                        module_attr(m, n).ok_or_else(|| self.raise(exc("ImportError", format!("cannot import name '{n}' from '{m}' (unknown location)"))))?;
                    self.store(alias.as_deref().unwrap_or(n), v);
                }
            }
            StmtKind::Try(body, handlers, els, fin) => {
                self.frames.push(Frame::Try { handlers: Arc::new(handlers.clone()), els: els.clone(), fin: fin.clone(), state: TryState::Body });
                self.frames.push(Frame::Block { body: body.clone(), pc: 0 });
            }
            StmtKind::Raise(e) => {
                let v = match e {
                    Some(e) => self.eval(os, e)?,
                    None => return Err(self.raise(exc("RuntimeError", "No active exception to reraise"))),
                };
                return Err(self.raise(match v {
                    V::Exc(k, args) => Exc { kind: k, args, tb: Vec::new() },
                    V::Type(t) if EXC_TYPES.contains(&t.as_str()) => Exc { kind: t, args: Vec::new(), tb: Vec::new() },
                    _ => exc("TypeError", "exceptions must derive from BaseException"),
                }));
            }
            StmtKind::With(e, name, body) => {
                let v = self.eval(os, e)?;
                let file = if let V::File(i) = v { Some(i) } else { None };
                if let Some(n) = name {
                    self.store(n, v);
                }
                self.frames.push(Frame::With { file });
                self.frames.push(Frame::Block { body: body.clone(), pc: 0 });
            }
            StmtKind::Assert(c, m) => {
                if !self.eval(os, c)?.truthy() {
                    let args = match m {
                        Some(m) => vec![self.eval(os, m)?],
                        None => Vec::new(),
                    };
                    return Err(self.raise(Exc { kind: "AssertionError".into(), args, tb: Vec::new() }));
                }
            }
            StmtKind::Del(ts) => {
                for t in ts {
                    match t {
                        Target::Name(n) if !self.delete(n) => {
                            return Err(self.raise(exc("NameError", format!("name '{n}' is not defined"))));
                        }
                        Target::Index(obj, idx) => {
                            let k = self.eval(os, idx)?;
                            let cur = self.eval(os, obj)?;
                            let new = match cur {
                                V::Dict(mut d) => {
                                    let before = d.len();
                                    d.retain(|(kk, _)| !py_eq(kk, &k));
                                    if d.len() == before {
                                        return Err(self.raise(Exc { kind: "KeyError".into(), args: vec![k], tb: Vec::new() }));
                                    }
                                    V::Dict(d)
                                }
                                V::List(mut l) => {
                                    let i = self.index_of(&k, l.len())?;
                                    l.remove(i);
                                    V::List(l)
                                }
                                V::Environ => {
                                    self.env.remove(&to_str(&k));
                                    V::Environ
                                }
                                other => other,
                            };
                            if let Some(t) = expr_target(obj) {
                                self.assign(os, &t, new)?;
                            }
                        }
                        _ => {}
                    }
                }
            }
            StmtKind::Print2(args, nl) => {
                let mut parts = Vec::new();
                for a in args {
                    parts.push(to_str(&self.eval(os, a)?));
                }
                let mut s = parts.join(" ");
                if *nl {
                    s.push('\n');
                } else {
                    s.push(' ');
                }
                self.out(&s);
            }
        }
        Ok(())
    }

    fn check_module(&self, m: &str) -> R<()> {
        let known = [
            "os",
            "os.path",
            "sys",
            "time",
            "socket",
            "random",
            "math",
            "json",
            "signal",
            "platform",
            "string",
            "datetime",
            "logging",
            "subprocess",
            "typing",
            "re",
            "pathlib",
            "collections",
            "http",
            "http.server",
            "urllib",
            "urllib.request",
        ];
        if known.contains(&m) {
            return Ok(());
        }
        let top = m.split('.').next().unwrap_or(m);
        Err(self.raise(exc("ModuleNotFoundError", format!("No module named '{top}'"))))
    }

    /// A call to a user function at statement level: (function, args, kwargs), evaluated.
    fn user_call(&mut self, os: &mut dyn Os, e: &Expr) -> R<Option<(Arc<FuncDef>, Vec<V>, Vec<(String, V)>)>> {
        let Expr::Call(f, args, kw) = e else { return Ok(None) };
        let Expr::Name(n) = &**f else { return Ok(None) };
        let Some(V::Func(def)) = self.lookup(n) else { return Ok(None) };
        if def.lambda.is_some() {
            return Ok(None);
        }
        let mut a = Vec::new();
        for x in args {
            a.push(self.eval(os, x)?);
        }
        let mut k = Vec::new();
        for (n, x) in kw {
            k.push((n.clone(), self.eval(os, x)?));
        }
        Ok(Some((def, a, k)))
    }

    fn bind(&mut self, os: &mut dyn Os, def: &FuncDef, args: Vec<V>, kw: Vec<(String, V)>) -> R<BTreeMap<String, V>> {
        let mut locals = BTreeMap::new();
        let n = def.params.len();
        if args.len() > n && def.star.is_none() {
            return Err(self.raise(exc(
                "TypeError",
                format!(
                    "{}() takes {} positional argument{} but {} {} given",
                    def.name,
                    n,
                    if n == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
            )));
        }
        let mut extra = Vec::new();
        for (i, a) in args.into_iter().enumerate() {
            if i < n {
                locals.insert(def.params[i].0.clone(), a);
            } else {
                extra.push(a);
            }
        }
        if let Some(s) = &def.star {
            locals.insert(s.clone(), V::Tuple(extra));
        }
        let mut kwextra = Vec::new();
        for (k, v) in kw {
            if def.params.iter().any(|(p, _)| *p == k) {
                locals.insert(k, v);
            } else if def.kwstar.is_some() {
                kwextra.push((V::Str(k), v));
            } else {
                return Err(self.raise(exc("TypeError", format!("{}() got an unexpected keyword argument '{k}'", def.name))));
            }
        }
        if let Some(k) = &def.kwstar {
            locals.insert(k.clone(), V::Dict(kwextra));
        }
        let mut missing = Vec::new();
        for (p, d) in &def.params {
            if !locals.contains_key(p) {
                match d {
                    Some(d) => {
                        let v = self.eval(os, d)?;
                        locals.insert(p.clone(), v);
                    }
                    None => missing.push(format!("'{p}'")),
                }
            }
        }
        if !missing.is_empty() {
            return Err(self.raise(exc(
                "TypeError",
                format!(
                    "{}() missing {} required positional argument{}: {}",
                    def.name,
                    missing.len(),
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(" and ")
                ),
            )));
        }
        Ok(locals)
    }

    fn push_call(&mut self, os: &mut dyn Os, def: Arc<FuncDef>, args: Vec<V>, kw: Vec<(String, V)>, cont: Cont) -> R<()> {
        if self.frames.iter().filter(|f| matches!(f, Frame::Func { .. })).count() > 900 {
            return Err(self.raise(exc("RecursionError", "maximum recursion depth exceeded")));
        }
        let locals = self.bind(os, &def, args, kw)?;
        self.frames.push(Frame::Func { name: def.name.clone(), locals, globals: Vec::new(), line: 0, cont });
        self.frames.push(Frame::Block { body: def.body.clone(), pc: 0 });
        Ok(())
    }

    fn do_return(&mut self, os: &mut dyn Os, v: V) -> R<()> {
        while let Some(f) = self.frames.pop() {
            match f {
                Frame::Func { cont, .. } => {
                    match cont {
                        Cont::Discard => {}
                        Cont::Assign(t) => self.assign(os, &t, v)?,
                        Cont::Sync => self.ret = Some(v),
                    }
                    return Ok(());
                }
                Frame::With { file: Some(i) } => self.close_file(os, i),
                _ => {}
            }
        }
        Ok(())
    }

    /// One step of the frame machine.
    fn step(&mut self, os: &mut dyn Os) -> R<()> {
        let Some(top) = self.frames.last_mut() else { return Ok(()) };
        match top {
            Frame::Block { body, pc } => {
                if *pc >= body.len() {
                    self.frames.pop();
                    // Falling off a function body returns None.
                    if let Some(Frame::Func { .. }) = self.frames.last() {
                        self.do_return(os, V::None)?;
                    }
                    return Ok(());
                }
                let body = body.clone();
                let s = &body[*pc];
                *pc += 1;
                self.exec(os, s)
            }
            Frame::While { cond, body } => {
                let (cond, body) = (cond.clone(), body.clone());
                self.steps += 1;
                if self.eval(os, &cond)?.truthy() {
                    self.frames.push(Frame::Block { body, pc: 0 });
                } else {
                    self.frames.pop();
                }
                Ok(())
            }
            Frame::For { target, items, idx, body } => {
                if *idx >= items.len() {
                    self.frames.pop();
                    return Ok(());
                }
                let v = items[*idx].clone();
                *idx += 1;
                let (t, b) = (target.clone(), body.clone());
                self.assign(os, &t, v)?;
                self.frames.push(Frame::Block { body: b, pc: 0 });
                Ok(())
            }
            Frame::Try { els, fin, state, .. } => {
                match state.clone() {
                    TryState::Body => {
                        if let Some(e) = els.clone() {
                            *state = TryState::Else;
                            self.frames.push(Frame::Block { body: e, pc: 0 });
                            return Ok(());
                        }
                        if let Some(f) = fin.clone() {
                            *state = TryState::Finally(None);
                            self.frames.push(Frame::Block { body: f, pc: 0 });
                            return Ok(());
                        }
                        self.frames.pop();
                    }
                    TryState::Handler | TryState::Else => {
                        if let Some(f) = fin.clone() {
                            *state = TryState::Finally(None);
                            self.frames.push(Frame::Block { body: f, pc: 0 });
                            return Ok(());
                        }
                        self.frames.pop();
                    }
                    TryState::Finally(pending) => {
                        self.frames.pop();
                        if let Some(e) = pending {
                            return Err(e);
                        }
                    }
                }
                Ok(())
            }
            Frame::With { file } => {
                let f = *file;
                self.frames.pop();
                if let Some(i) = f {
                    self.close_file(os, i);
                }
                Ok(())
            }
            Frame::Func { .. } => {
                self.do_return(os, V::None)?;
                Ok(())
            }
        }
    }

    /// Unwinds frames above `base` looking for a handler. `Ok` when handled.
    fn unwind(&mut self, os: &mut dyn Os, e: Exc, base: usize) -> Result<(), Exc> {
        while self.frames.len() > base {
            let top = self.frames.len() - 1;
            match &mut self.frames[top] {
                Frame::Try { handlers, fin, state, .. } => {
                    if *state == TryState::Body {
                        let hs = handlers.clone();
                        if let Some(h) =
                            hs.iter().find(|h| h.types.is_empty() || h.types.iter().any(|t| is_subclass(&e.kind, if t == "IOError" { "OSError" } else { t })))
                        {
                            *state = TryState::Handler;
                            let body = h.body.clone();
                            if let Some(n) = &h.name {
                                let v = V::Exc(e.kind.clone(), e.args.clone());
                                self.store(&n.clone(), v);
                            }
                            self.frames.push(Frame::Block { body, pc: 0 });
                            return Ok(());
                        }
                    }
                    if !matches!(state, TryState::Finally(_)) {
                        if let Some(f) = fin.clone() {
                            *state = TryState::Finally(Some(e));
                            self.frames.push(Frame::Block { body: f, pc: 0 });
                            return Ok(());
                        }
                    }
                    self.frames.pop();
                }
                Frame::With { file } => {
                    let f = *file;
                    self.frames.pop();
                    if let Some(i) = f {
                        self.close_file(os, i);
                    }
                }
                _ => {
                    self.frames.pop();
                }
            }
        }
        Err(e)
    }

    // ------------------------------------------------------------------ assignment

    fn assign(&mut self, os: &mut dyn Os, t: &Target, v: V) -> R<()> {
        match t {
            Target::Name(n) => {
                self.store(n, v);
                Ok(())
            }
            Target::Tuple(ts) => {
                let items = self.iterate(os, v)?;
                if items.len() != ts.len() {
                    let msg = if items.len() > ts.len() {
                        format!("too many values to unpack (expected {})", ts.len())
                    } else {
                        format!("not enough values to unpack (expected {}, got {})", ts.len(), items.len())
                    };
                    return Err(self.raise(exc("ValueError", msg)));
                }
                for (t, v) in ts.iter().zip(items) {
                    self.assign(os, t, v)?;
                }
                Ok(())
            }
            Target::Index(obj, idx) => {
                let k = self.eval(os, idx)?;
                let cur = self.eval(os, obj)?;
                let new = match cur {
                    V::Dict(mut d) => {
                        match d.iter_mut().find(|(kk, _)| py_eq(kk, &k)) {
                            Some(slot) => slot.1 = v,
                            None => d.push((k, v)),
                        }
                        V::Dict(d)
                    }
                    V::List(mut l) => {
                        let i = self.index_of(&k, l.len())?;
                        l[i] = v;
                        V::List(l)
                    }
                    V::Environ => {
                        self.env.insert(to_str(&k), to_str(&v));
                        return Ok(());
                    }
                    other => return Err(self.raise(exc("TypeError", format!("'{}' object does not support item assignment", other.type_name())))),
                };
                match expr_target(obj) {
                    Some(t) => self.assign(os, &t, new),
                    None => Ok(()),
                }
            }
            Target::Attr(_, n) => Err(self.raise(exc("AttributeError", format!("kubesim: cannot set attribute '{n}'")))),
        }
    }

    fn eval_target(&mut self, os: &mut dyn Os, t: &Target) -> R<V> {
        match t {
            Target::Name(n) => self.lookup(n).ok_or_else(|| self.raise(exc("NameError", format!("name '{n}' is not defined")))),
            Target::Index(o, i) => {
                let e = Expr::Index(Box::new(o.clone()), Box::new(i.clone()));
                self.eval(os, &e)
            }
            Target::Attr(o, n) => {
                let e = Expr::Attr(Box::new(o.clone()), n.clone());
                self.eval(os, &e)
            }
            Target::Tuple(_) => Err(self.raise(exc("SyntaxError", "illegal expression for augmented assignment"))),
        }
    }

    fn index_of(&self, k: &V, len: usize) -> R<usize> {
        let i = match k {
            V::Int(i) => *i,
            V::Bool(b) => *b as i128,
            other => return Err(self.raise(exc("TypeError", format!("list indices must be integers or slices, not {}", other.type_name())))),
        };
        let j = if i < 0 { len as i128 + i } else { i };
        if j < 0 || j >= len as i128 {
            return Err(self.raise(exc("IndexError", "list index out of range")));
        }
        Ok(j as usize)
    }

    fn iterate(&mut self, _os: &mut dyn Os, v: V) -> R<Vec<V>> {
        self.iterate_pure(v)
    }

    fn iterate_pure(&mut self, v: V) -> R<Vec<V>> {
        Ok(match v {
            V::List(l) | V::Tuple(l) => l,
            V::Str(s) => s.chars().map(|c| V::Str(c.to_string())).collect(),
            V::Dict(d) => d.into_iter().map(|(k, _)| k).collect(),
            V::Range(a, b, s) => {
                let n = range_len(a, b, s);
                if n > 10_000_000 {
                    return Err(self.raise(exc("MemoryError", "kubesim: range too large to iterate")));
                }
                (0..n).map(|i| V::Int(a + i * s)).collect()
            }
            V::Environ => self.env.keys().map(|k| V::Str(k.clone())).collect(),
            V::File(i) => {
                let f = &mut self.files[i];
                let rest = String::from_utf8_lossy(&f.data[f.pos.min(f.data.len())..]).into_owned();
                f.pos = f.data.len();
                rest.split_inclusive('\n').map(|l| V::Str(l.to_string())).collect()
            }
            other => return Err(self.raise(exc("TypeError", format!("'{}' object is not iterable", other.type_name())))),
        })
    }

    fn close_file(&mut self, os: &mut dyn Os, i: usize) {
        let Some(f) = self.files.get_mut(i) else { return };
        if f.closed {
            return;
        }
        f.closed = true;
        if f.write {
            let (p, b, app) = (f.path.clone(), std::mem::take(&mut f.buf), f.append);
            if p == "/dev/stdout" {
                self.out(&String::from_utf8_lossy(&b));
                return;
            }
            if p == "/dev/stderr" {
                self.err(&String::from_utf8_lossy(&b));
                return;
            }
            let _ = os.fs().write(&p, &b, if app { kubesim_os::fs::WriteMode::Append } else { kubesim_os::fs::WriteMode::Truncate });
        }
    }

    // ------------------------------------------------------------------ expressions

    fn eval(&mut self, os: &mut dyn Os, e: &Expr) -> R<V> {
        self.steps += 1;
        Ok(match e {
            Expr::Const(c) => match c {
                Const::None => V::None,
                Const::Bool(b) => V::Bool(*b),
                Const::Int(i) => V::Int(*i),
                Const::Float(f) => V::Float(*f),
                Const::Str(s) => V::Str(s.clone()),
            },
            Expr::FStr(parts) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        FPart::Lit(l) => s.push_str(l),
                        FPart::Expr(x, conv, spec) => {
                            let v = self.eval(os, x)?;
                            let v = match conv {
                                Some('r') => V::Str(repr(&v)),
                                Some('s') => V::Str(to_str(&v)),
                                _ => v,
                            };
                            s.push_str(&self.format_spec(&v, spec)?);
                        }
                    }
                }
                V::Str(s)
            }
            Expr::Name(n) => self.lookup(n).ok_or_else(|| self.raise(exc("NameError", format!("name '{n}' is not defined"))))?,
            Expr::Attr(o, n) => {
                let ov = self.eval(os, o)?;
                self.getattr(os, ov, n)?
            }
            Expr::Index(o, i) => {
                let ov = self.eval(os, o)?;
                let iv = self.eval(os, i)?;
                self.getitem(ov, iv)?
            }
            Expr::Slice(o, lo, hi) => {
                let ov = self.eval(os, o)?;
                let lo = match lo {
                    Some(x) => Some(self.eval(os, x)?),
                    None => None,
                };
                let hi = match hi {
                    Some(x) => Some(self.eval(os, x)?),
                    None => None,
                };
                let bound = |v: Option<V>, len: usize, d: usize| -> usize {
                    match v {
                        Some(V::Int(i)) => {
                            let j = if i < 0 { len as i128 + i } else { i };
                            j.clamp(0, len as i128) as usize
                        }
                        _ => d,
                    }
                };
                match ov {
                    V::Str(s) => {
                        let c: Vec<char> = s.chars().collect();
                        let (a, b) = (bound(lo, c.len(), 0), bound(hi, c.len(), c.len()));
                        V::Str(if a < b { c[a..b].iter().collect() } else { String::new() })
                    }
                    V::List(l) | V::Tuple(l) => {
                        let (a, b) = (bound(lo, l.len(), 0), bound(hi, l.len(), l.len()));
                        V::List(if a < b { l[a..b].to_vec() } else { Vec::new() })
                    }
                    other => return Err(self.raise(exc("TypeError", format!("'{}' object is not subscriptable", other.type_name())))),
                }
            }
            Expr::Call(f, args, kw) => {
                let mut a = Vec::new();
                for x in args {
                    a.push(self.eval(os, x)?);
                }
                let mut k = Vec::new();
                for (n, x) in kw {
                    k.push((n.clone(), self.eval(os, x)?));
                }
                // Mutating methods write their object back.
                if let Expr::Attr(obj, m) = &**f {
                    if matches!(m.as_str(), "append" | "extend" | "pop" | "insert" | "remove" | "sort" | "reverse" | "clear" | "update" | "setdefault") {
                        if let Some(t) = expr_target(obj) {
                            let cur = self.eval(os, obj)?;
                            if matches!(cur, V::List(_) | V::Dict(_)) {
                                let (ret, new) = self.mutate(cur, m, a, k)?;
                                self.assign(os, &t, new)?;
                                return Ok(ret);
                            }
                        }
                    }
                }
                let fv = self.eval(os, f)?;
                self.call(os, fv, a, k)?
            }
            Expr::Bin(op, a, b) => {
                let av = self.eval(os, a)?;
                let bv = self.eval(os, b)?;
                self.binop(op, av, bv)?
            }
            Expr::Un(op, a) => {
                let v = self.eval(os, a)?;
                match (op.as_str(), v) {
                    ("not", v) => V::Bool(!v.truthy()),
                    ("-", V::Int(i)) => V::Int(-i),
                    ("-", V::Float(f)) => V::Float(-f),
                    ("-", V::Bool(b)) => V::Int(-(b as i128)),
                    ("+", v @ (V::Int(_) | V::Float(_))) => v,
                    ("~", V::Int(i)) => V::Int(!i),
                    (o, v) => return Err(self.raise(exc("TypeError", format!("bad operand type for unary {o}: '{}'", v.type_name())))),
                }
            }
            Expr::Logic(or, a, b) => {
                let av = self.eval(os, a)?;
                if av.truthy() == *or {
                    av
                } else {
                    self.eval(os, b)?
                }
            }
            Expr::Cmp(first, rest) => {
                let mut l = self.eval(os, first)?;
                for (op, x) in rest {
                    let r = self.eval(os, x)?;
                    if !self.compare(op, &l, &r)? {
                        return Ok(V::Bool(false));
                    }
                    l = r;
                }
                V::Bool(true)
            }
            Expr::IfExp(c, a, b) => {
                if self.eval(os, c)?.truthy() {
                    self.eval(os, a)?
                } else {
                    self.eval(os, b)?
                }
            }
            Expr::List(v) => {
                let mut o = Vec::new();
                for x in v {
                    o.push(self.eval(os, x)?);
                }
                V::List(o)
            }
            Expr::Tuple(v) => {
                let mut o = Vec::new();
                for x in v {
                    o.push(self.eval(os, x)?);
                }
                V::Tuple(o)
            }
            Expr::Dict(v) => {
                let mut o: Vec<(V, V)> = Vec::new();
                for (k, x) in v {
                    let kv = self.eval(os, k)?;
                    let xv = self.eval(os, x)?;
                    match o.iter_mut().find(|(kk, _)| py_eq(kk, &kv)) {
                        Some(slot) => slot.1 = xv,
                        None => o.push((kv, xv)),
                    }
                }
                V::Dict(o)
            }
            Expr::ListComp(elt, t, it, cond) => {
                let itv = self.eval(os, it)?;
                let items = self.iterate(os, itv)?;
                let mut o = Vec::new();
                for v in items {
                    self.assign(os, t, v)?;
                    if let Some(c) = cond {
                        if !self.eval(os, c)?.truthy() {
                            continue;
                        }
                    }
                    o.push(self.eval(os, elt)?);
                }
                V::List(o)
            }
            Expr::Lambda(params, body) => V::Func(Arc::new(FuncDef {
                name: "<lambda>".into(),
                params: params.iter().map(|p| (p.clone(), None)).collect(),
                star: None,
                kwstar: None,
                body: Arc::from(Vec::new()),
                lambda: Some((**body).clone()),
            })),
        })
    }

    fn format_spec(&mut self, v: &V, spec: &str) -> R<String> {
        if spec.is_empty() {
            return Ok(to_str(v));
        }
        let s: Vec<char> = spec.chars().collect();
        let mut i = 0;
        let (mut fill, mut align) = (' ', None);
        if s.len() >= 2 && matches!(s[1], '<' | '>' | '^' | '=') {
            fill = s[0];
            align = Some(s[1]);
            i = 2;
        } else if !s.is_empty() && matches!(s[0], '<' | '>' | '^' | '=') {
            align = Some(s[0]);
            i = 1;
        }
        let mut sign = false;
        if i < s.len() && s[i] == '+' {
            sign = true;
            i += 1;
        }
        let mut zero = false;
        if i < s.len() && s[i] == '0' {
            zero = true;
            i += 1;
        }
        let st = i;
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        let width: usize = s[st..i].iter().collect::<String>().parse().unwrap_or(0);
        let mut comma = false;
        if i < s.len() && (s[i] == ',' || s[i] == '_') {
            comma = true;
            i += 1;
        }
        let mut prec = None;
        if i < s.len() && s[i] == '.' {
            i += 1;
            let st = i;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
            prec = s[st..i].iter().collect::<String>().parse::<usize>().ok();
        }
        let ty = s.get(i).copied();
        let num = |v: &V| match v {
            V::Int(i) => Some(*i as f64),
            V::Float(f) => Some(*f),
            V::Bool(b) => Some(*b as i32 as f64),
            _ => None,
        };
        let mut body = match ty {
            Some('f') | Some('F') | Some('%') => {
                let Some(mut f) = num(v) else {
                    return Err(self.raise(exc("ValueError", format!("Unknown format code '{}' for object of type '{}'", ty.unwrap_or('f'), v.type_name()))));
                };
                if ty == Some('%') {
                    f *= 100.0;
                }
                let r = format!("{:.*}", prec.unwrap_or(6), f);
                if ty == Some('%') {
                    format!("{r}%")
                } else {
                    r
                }
            }
            Some('e') => format!("{:.*e}", prec.unwrap_or(6), num(v).unwrap_or(0.0)),
            Some('d') => match v {
                V::Int(i) => i.to_string(),
                V::Bool(b) => (*b as i32).to_string(),
                _ => return Err(self.raise(exc("ValueError", format!("Unknown format code 'd' for object of type '{}'", v.type_name())))),
            },
            Some('x') => match v {
                V::Int(i) => format!("{i:x}"),
                _ => to_str(v),
            },
            Some('s') | None => match (v, prec) {
                (V::Float(f), Some(p)) => crate::perl::fmt_g(*f, p),
                (_, Some(p)) => to_str(v).chars().take(p).collect(),
                _ => to_str(v),
            },
            Some(c) => return Err(self.raise(exc("ValueError", format!("Unknown format code '{c}' for object of type '{}'", v.type_name())))),
        };
        if comma {
            let (int_part, rest) = match body.find('.') {
                Some(p) => (body[..p].to_string(), body[p..].to_string()),
                None => (body.clone(), String::new()),
            };
            let neg = int_part.starts_with('-');
            let digits: Vec<char> = int_part.trim_start_matches('-').chars().collect();
            let mut g = String::new();
            for (k, c) in digits.iter().enumerate() {
                if k > 0 && (digits.len() - k).is_multiple_of(3) {
                    g.push(',');
                }
                g.push(*c);
            }
            body = format!("{}{g}{rest}", if neg { "-" } else { "" });
        }
        if sign && !body.starts_with('-') && num(v).is_some() {
            body = format!("+{body}");
        }
        let len = body.chars().count();
        if len >= width {
            return Ok(body);
        }
        let padn = width - len;
        let is_num = num(v).is_some() && !matches!(v, V::Bool(_));
        let align = align.unwrap_or(if zero && is_num {
            '='
        } else if is_num {
            '>'
        } else {
            '<'
        });
        let fill = if zero && align == '=' { '0' } else { fill };
        Ok(match align {
            '>' => format!("{}{body}", fill.to_string().repeat(padn)),
            '^' => format!("{}{body}{}", fill.to_string().repeat(padn / 2), fill.to_string().repeat(padn - padn / 2)),
            '=' => {
                let (sgn, rest) = if body.starts_with('-') || body.starts_with('+') { body.split_at(1) } else { ("", body.as_str()) };
                format!("{sgn}{}{rest}", fill.to_string().repeat(padn))
            }
            _ => format!("{body}{}", fill.to_string().repeat(padn)),
        })
    }

    fn getitem(&mut self, o: V, i: V) -> R<V> {
        match o {
            V::List(l) | V::Tuple(l) => {
                let j = self.index_of(&i, l.len()).map_err(|mut e| {
                    if e.kind == "IndexError" {
                        e.args = vec![V::Str("list index out of range".into())];
                    }
                    e
                })?;
                Ok(l[j].clone())
            }
            V::Str(s) => {
                let c: Vec<char> = s.chars().collect();
                let j = self.index_of(&i, c.len()).map_err(|mut e| {
                    if e.kind == "IndexError" {
                        e.args = vec![V::Str("string index out of range".into())];
                    }
                    e
                })?;
                Ok(V::Str(c[j].to_string()))
            }
            V::Dict(d) => d
                .iter()
                .find(|(k, _)| py_eq(k, &i))
                .map(|(_, v)| v.clone())
                .ok_or_else(|| self.raise(Exc { kind: "KeyError".into(), args: vec![i], tb: Vec::new() })),
            V::Environ => {
                let k = to_str(&i);
                self.env.get(&k).map(|v| V::Str(v.clone())).ok_or_else(|| self.raise(Exc { kind: "KeyError".into(), args: vec![V::Str(k)], tb: Vec::new() }))
            }
            V::Range(a, b, s) => {
                let n = range_len(a, b, s);
                let j = self.index_of(&i, n.max(0) as usize)?;
                Ok(V::Int(a + j as i128 * s))
            }
            other => Err(self.raise(exc("TypeError", format!("'{}' object is not subscriptable", other.type_name())))),
        }
    }

    fn getattr(&mut self, os: &mut dyn Os, o: V, n: &str) -> R<V> {
        match &o {
            V::Module(m) => {
                if m == "sys" && n == "argv" {
                    return Ok(V::List(self.argv.iter().map(|a| V::Str(a.clone())).collect()));
                }
                if m == "os" && n == "environ" {
                    return Ok(V::Environ);
                }
                if m == "sys" && n == "version" {
                    return Ok(V::Str(format!("{} (main, Aug 27 2025, 00:00:00) [GCC 12.2.0]", self.version)));
                }
                if m == "time" && n == "timezone" {
                    return Ok(V::Int(0));
                }
                let _ = os;
                module_attr(m, n).ok_or_else(|| self.raise(exc("AttributeError", format!("module '{m}' has no attribute '{n}'"))))
            }
            V::Exc(_, args) if n == "args" => Ok(V::Tuple(args.clone())),
            V::Exc(k, args) if n == "code" && k == "SystemExit" => Ok(args.first().cloned().unwrap_or(V::None)),
            V::Str(_) | V::List(_) | V::Dict(_) | V::Environ | V::File(_) | V::Int(_) | V::Float(_) | V::Tuple(_) => Ok(V::Method(Box::new(o), n.to_string())),
            other => Err(self.raise(exc("AttributeError", format!("'{}' object has no attribute '{n}'", other.type_name())))),
        }
    }

    fn mutate(&mut self, cur: V, m: &str, a: Vec<V>, k: Vec<(String, V)>) -> R<(V, V)> {
        let _ = k;
        match cur {
            V::List(mut l) => {
                let ret = match m {
                    "append" => {
                        l.push(a.into_iter().next().unwrap_or(V::None));
                        V::None
                    }
                    "extend" => {
                        if let Some(x) = a.into_iter().next() {
                            let items = self.iterate_pure(x)?;
                            l.extend(items);
                        }
                        V::None
                    }
                    "pop" => {
                        if l.is_empty() {
                            return Err(self.raise(exc("IndexError", "pop from empty list")));
                        }
                        let i = match a.first() {
                            Some(i) => self.index_of(i, l.len())?,
                            None => l.len() - 1,
                        };
                        l.remove(i)
                    }
                    "insert" => {
                        let i = match a.first() {
                            Some(V::Int(i)) => (*i).clamp(0, l.len() as i128) as usize,
                            _ => l.len(),
                        };
                        l.insert(i, a.get(1).cloned().unwrap_or(V::None));
                        V::None
                    }
                    "remove" => {
                        let x = a.first().cloned().unwrap_or(V::None);
                        match l.iter().position(|y| py_eq(y, &x)) {
                            Some(p) => {
                                l.remove(p);
                            }
                            None => return Err(self.raise(exc("ValueError", "list.remove(x): x not in list"))),
                        }
                        V::None
                    }
                    "sort" => {
                        l.sort_by(py_cmp);
                        if k.iter().any(|(n, v)| n == "reverse" && v.truthy()) {
                            l.reverse();
                        }
                        V::None
                    }
                    "reverse" => {
                        l.reverse();
                        V::None
                    }
                    "clear" => {
                        l.clear();
                        V::None
                    }
                    _ => return Err(self.raise(exc("AttributeError", format!("'list' object has no attribute '{m}'")))),
                };
                Ok((ret, V::List(l)))
            }
            V::Dict(mut d) => {
                let ret = match m {
                    "update" => {
                        if let Some(V::Dict(o)) = a.into_iter().next() {
                            for (kk, vv) in o {
                                match d.iter_mut().find(|(x, _)| py_eq(x, &kk)) {
                                    Some(s) => s.1 = vv,
                                    None => d.push((kk, vv)),
                                }
                            }
                        }
                        for (kk, vv) in k {
                            d.push((V::Str(kk), vv));
                        }
                        V::None
                    }
                    "pop" => {
                        let key = a.first().cloned().unwrap_or(V::None);
                        match d.iter().position(|(x, _)| py_eq(x, &key)) {
                            Some(p) => d.remove(p).1,
                            None => match a.get(1) {
                                Some(dflt) => dflt.clone(),
                                None => return Err(self.raise(Exc { kind: "KeyError".into(), args: vec![key], tb: Vec::new() })),
                            },
                        }
                    }
                    "setdefault" => {
                        let key = a.first().cloned().unwrap_or(V::None);
                        match d.iter().find(|(x, _)| py_eq(x, &key)) {
                            Some((_, v)) => v.clone(),
                            None => {
                                let v = a.get(1).cloned().unwrap_or(V::None);
                                d.push((key, v.clone()));
                                v
                            }
                        }
                    }
                    "clear" => {
                        d.clear();
                        V::None
                    }
                    _ => return Err(self.raise(exc("AttributeError", format!("'dict' object has no attribute '{m}'")))),
                };
                Ok((ret, V::Dict(d)))
            }
            other => Ok((V::None, other)),
        }
    }

    fn binop(&mut self, op: &str, a: V, b: V) -> R<V> {
        use V::*;
        let num = |v: &V| match v {
            Int(i) => Some(*i as f64),
            Float(f) => Some(*f),
            Bool(b) => Some(*b as i32 as f64),
            _ => Option::None,
        };
        let int = |v: &V| match v {
            Int(i) => Some(*i),
            Bool(b) => Some(*b as i128),
            _ => Option::None,
        };
        let overflow = || exc("OverflowError", "kubesim: integer result too large for this model");
        let r = match (op, &a, &b) {
            ("+", Str(x), Str(y)) => Str(format!("{x}{y}")),
            ("+", List(x), List(y)) => List(x.iter().chain(y.iter()).cloned().collect()),
            ("+", Tuple(x), Tuple(y)) => Tuple(x.iter().chain(y.iter()).cloned().collect()),
            ("*", Str(s), _) | ("*", _, Str(s)) if int(if matches!(a, Str(_)) { &b } else { &a }).is_some() => {
                let n = int(if matches!(a, Str(_)) { &b } else { &a }).unwrap_or(0).max(0) as usize;
                if s.len().saturating_mul(n) > 1 << 24 {
                    return Err(self.raise(exc("MemoryError", "")));
                }
                Str(s.repeat(n))
            }
            ("*", List(l), _) if int(&b).is_some() => {
                let n = int(&b).unwrap_or(0).max(0) as usize;
                if l.len().saturating_mul(n) > 1 << 22 {
                    return Err(self.raise(exc("MemoryError", "")));
                }
                List((0..n).flat_map(|_| l.iter().cloned()).collect())
            }
            ("%", Str(f), _) => Str(self.percent_format(f, &b)?),
            _ if int(&a).is_some() && int(&b).is_some() => {
                let (x, y) = (int(&a).unwrap_or(0), int(&b).unwrap_or(0));
                match op {
                    "+" => Int(x.checked_add(y).ok_or_else(overflow)?),
                    "-" => Int(x.checked_sub(y).ok_or_else(overflow)?),
                    "*" => Int(x.checked_mul(y).ok_or_else(overflow)?),
                    "/" => {
                        if y == 0 {
                            return Err(self.raise(exc("ZeroDivisionError", "division by zero")));
                        }
                        if self.py2 {
                            Int(floor_div(x, y))
                        } else {
                            Float(x as f64 / y as f64)
                        }
                    }
                    "//" => {
                        if y == 0 {
                            return Err(self.raise(exc("ZeroDivisionError", "integer division or modulo by zero")));
                        }
                        Int(floor_div(x, y))
                    }
                    "%" => {
                        if y == 0 {
                            return Err(self.raise(exc("ZeroDivisionError", "integer modulo by zero")));
                        }
                        let mut r = x % y;
                        if r != 0 && (r < 0) != (y < 0) {
                            r += y;
                        }
                        Int(r)
                    }
                    "**" => {
                        if y < 0 {
                            Float((x as f64).powf(y as f64))
                        } else {
                            Int(x.checked_pow(y.min(u32::MAX as i128) as u32).ok_or_else(overflow)?)
                        }
                    }
                    "&" => Int(x & y),
                    "|" => Int(x | y),
                    "^" => Int(x ^ y),
                    "<<" => Int(x.checked_shl(y.clamp(0, 127) as u32).ok_or_else(overflow)?),
                    ">>" => Int(x >> y.clamp(0, 127)),
                    _ => return Err(self.unsupported(op, &a, &b)),
                }
            }
            _ if num(&a).is_some() && num(&b).is_some() => {
                let (x, y) = (num(&a).unwrap_or(0.0), num(&b).unwrap_or(0.0));
                match op {
                    "+" => Float(x + y),
                    "-" => Float(x - y),
                    "*" => Float(x * y),
                    "/" => {
                        if y == 0.0 {
                            return Err(self.raise(exc("ZeroDivisionError", "float division by zero")));
                        }
                        Float(x / y)
                    }
                    "//" => {
                        if y == 0.0 {
                            return Err(self.raise(exc("ZeroDivisionError", "float floor division by zero")));
                        }
                        Float((x / y).floor())
                    }
                    "%" => {
                        if y == 0.0 {
                            return Err(self.raise(exc("ZeroDivisionError", "float modulo")));
                        }
                        Float(x - y * (x / y).floor())
                    }
                    "**" => Float(x.powf(y)),
                    _ => return Err(self.unsupported(op, &a, &b)),
                }
            }
            ("+", Str(_), _) => return Err(self.raise(exc("TypeError", format!("can only concatenate str (not \"{}\") to str", b.type_name())))),
            ("+", List(_), _) => return Err(self.raise(exc("TypeError", format!("can only concatenate list (not \"{}\") to list", b.type_name())))),
            _ => return Err(self.unsupported(op, &a, &b)),
        };
        Ok(r)
    }

    fn unsupported(&self, op: &str, a: &V, b: &V) -> Exc {
        let op = if op == "**" { "** or pow()" } else { op };
        self.raise(exc("TypeError", format!("unsupported operand type(s) for {op}: '{}' and '{}'", a.type_name(), b.type_name())))
    }

    fn percent_format(&mut self, f: &str, args: &V) -> R<String> {
        let items = match args {
            V::Tuple(t) => t.clone(),
            other => vec![other.clone()],
        };
        let mut out = String::new();
        let chars: Vec<char> = f.chars().collect();
        let mut i = 0;
        let mut ai = 0;
        while i < chars.len() {
            if chars[i] != '%' {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            i += 1;
            let st = i;
            while i < chars.len() && "-+ 0#.0123456789".contains(chars[i]) {
                i += 1;
            }
            let flags: String = chars[st..i].iter().collect();
            let Some(&c) = chars.get(i) else { return Err(self.raise(exc("ValueError", "incomplete format"))) };
            i += 1;
            if c == '%' {
                out.push('%');
                continue;
            }
            let Some(v) = items.get(ai).cloned() else { return Err(self.raise(exc("TypeError", "not enough arguments for format string"))) };
            ai += 1;
            let spec = match c {
                's' => format!("{flags}s"),
                'r' => {
                    out.push_str(&repr(&v));
                    continue;
                }
                'd' | 'i' => {
                    let v2 = match &v {
                        V::Float(fl) => V::Int(fl.trunc() as i128),
                        other => other.clone(),
                    };
                    out.push_str(&self.format_spec(&v2, &format!("{}d", flags.replace('-', "<")))?);
                    continue;
                }
                other => format!("{flags}{other}"),
            };
            let spec = if let Some(left) = spec.strip_prefix('-') { format!("<{left}") } else { spec };
            out.push_str(&self.format_spec(&v, spec.trim_end_matches('s'))?);
        }
        if ai < items.len() && !matches!(args, V::Dict(_)) {
            return Err(self.raise(exc("TypeError", "not all arguments converted during string formatting")));
        }
        Ok(out)
    }

    fn compare(&mut self, op: &str, a: &V, b: &V) -> R<bool> {
        Ok(match op {
            "==" => py_eq(a, b),
            "!=" => !py_eq(a, b),
            "is" => py_eq(a, b) && std::mem::discriminant(a) == std::mem::discriminant(b),
            "is not" => !(py_eq(a, b) && std::mem::discriminant(a) == std::mem::discriminant(b)),
            "in" | "not in" => {
                let r = match b {
                    V::Str(s) => match a {
                        V::Str(x) => s.contains(x.as_str()),
                        other => return Err(self.raise(exc("TypeError", format!("'in <string>' requires string as left operand, not {}", other.type_name())))),
                    },
                    V::List(l) | V::Tuple(l) => l.iter().any(|x| py_eq(x, a)),
                    V::Dict(d) => d.iter().any(|(k, _)| py_eq(k, a)),
                    V::Environ => self.env.contains_key(&to_str(a)),
                    V::Range(x, y, s) => matches!(a, V::Int(i) if (if *s > 0 { *i >= *x && *i < *y } else { *i <= *x && *i > *y }) && (*i - *x) % *s == 0),
                    other => return Err(self.raise(exc("TypeError", format!("argument of type '{}' is not iterable", other.type_name())))),
                };
                if op == "in" {
                    r
                } else {
                    !r
                }
            }
            _ => {
                let ord = match (a, b) {
                    (V::Str(x), V::Str(y)) => x.cmp(y),
                    (V::List(_), V::List(_)) | (V::Tuple(_), V::Tuple(_)) => py_cmp(a, b),
                    _ => match (numeric(a), numeric(b)) {
                        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
                        _ => {
                            return Err(
                                self.raise(exc("TypeError", format!("'{op}' not supported between instances of '{}' and '{}'", a.type_name(), b.type_name())))
                            )
                        }
                    },
                };
                match op {
                    "<" => ord.is_lt(),
                    ">" => ord.is_gt(),
                    "<=" => ord.is_le(),
                    _ => ord.is_ge(),
                }
            }
        })
    }

    // ------------------------------------------------------------------ calls

    fn call(&mut self, os: &mut dyn Os, f: V, a: Vec<V>, k: Vec<(String, V)>) -> R<V> {
        match f {
            V::Func(def) => self.call_sync(os, def, a, k),
            V::Builtin(name) => self.builtin(os, &name, a, k),
            V::Method(obj, m) => self.method(os, *obj, &m, a, k),
            V::Type(t) => self.construct(os, &t, a),
            other => Err(self.raise(exc("TypeError", format!("'{}' object is not callable", other.type_name())))),
        }
    }

    fn call_sync(&mut self, os: &mut dyn Os, def: Arc<FuncDef>, a: Vec<V>, k: Vec<(String, V)>) -> R<V> {
        if let Some(body) = &def.lambda {
            let locals = self.bind(os, &def, a, k)?;
            self.frames.push(Frame::Func { name: "<lambda>".into(), locals, globals: Vec::new(), line: 0, cont: Cont::Sync });
            let base = self.frames.len() - 1;
            let r = self.eval(os, body);
            self.frames.truncate(base);
            return r;
        }
        if self.sync_depth > 200 {
            return Err(self.raise(exc("RecursionError", "maximum recursion depth exceeded")));
        }
        let base = self.frames.len();
        self.push_call(os, def, a, k, Cont::Sync)?;
        self.sync_depth += 1;
        let mut budget: u64 = 5_000_000;
        let r = loop {
            if self.frames.len() <= base {
                break Ok(self.ret.take().unwrap_or(V::None));
            }
            budget -= 1;
            if budget == 0 {
                break Err(self.raise(exc(
                    "RuntimeError",
                    "kubesim: a function called inside an expression ran too long (loops that sleep must run at statement level)",
                )));
            }
            if let Err(e) = self.step(os) {
                if let Err(e) = self.unwind(os, e, base) {
                    self.frames.truncate(base);
                    break Err(e);
                }
            }
            self.charge();
        };
        self.sync_depth -= 1;
        r
    }

    fn charge(&mut self) {
        if self.steps >= 20_000 {
            self.steps -= 20_000;
            self.pending.push(Action::Compute(10));
        }
    }

    fn construct(&mut self, os: &mut dyn Os, t: &str, a: Vec<V>) -> R<V> {
        let first = a.first().cloned();
        Ok(match t {
            "int" => match first {
                None => V::Int(0),
                Some(V::Int(i)) => V::Int(i),
                Some(V::Bool(b)) => V::Int(b as i128),
                Some(V::Float(f)) => {
                    if !f.is_finite() {
                        return Err(self.raise(exc("ValueError", "cannot convert float NaN to integer")));
                    }
                    V::Int(f.trunc() as i128)
                }
                Some(V::Str(s)) => {
                    let base = match a.get(1) {
                        Some(V::Int(b)) => *b as u32,
                        _ => 10,
                    };
                    let t = s.trim().replace('_', "");
                    match i128::from_str_radix(&t, base) {
                        Ok(v) => V::Int(v),
                        Err(_) => return Err(self.raise(exc("ValueError", format!("invalid literal for int() with base {base}: {}", str_repr(&s))))),
                    }
                }
                Some(other) => {
                    return Err(self.raise(exc(
                        "TypeError",
                        format!("int() argument must be a string, a bytes-like object or a real number, not '{}'", other.type_name()),
                    )))
                }
            },
            "float" => match first {
                None => V::Float(0.0),
                Some(V::Int(i)) => V::Float(i as f64),
                Some(V::Float(f)) => V::Float(f),
                Some(V::Bool(b)) => V::Float(b as i32 as f64),
                Some(V::Str(s)) => match s.trim().to_ascii_lowercase().as_str() {
                    "inf" | "infinity" => V::Float(f64::INFINITY),
                    "-inf" => V::Float(f64::NEG_INFINITY),
                    "nan" => V::Float(f64::NAN),
                    t => match t.parse::<f64>() {
                        Ok(v) => V::Float(v),
                        Err(_) => return Err(self.raise(exc("ValueError", format!("could not convert string to float: {}", str_repr(&s))))),
                    },
                },
                Some(other) => {
                    return Err(self.raise(exc("TypeError", format!("float() argument must be a string or a real number, not '{}'", other.type_name()))))
                }
            },
            "str" => V::Str(first.map(|v| to_str(&v)).unwrap_or_default()),
            "bool" => V::Bool(first.map(|v| v.truthy()).unwrap_or(false)),
            "list" => match first {
                None => V::List(Vec::new()),
                Some(v) => V::List(self.iterate(os, v)?),
            },
            "tuple" => match first {
                None => V::Tuple(Vec::new()),
                Some(v) => V::Tuple(self.iterate(os, v)?),
            },
            "dict" => match first {
                Some(V::Dict(d)) => V::Dict(d),
                Some(V::Environ) => V::Dict(self.env.iter().map(|(k, v)| (V::Str(k.clone()), V::Str(v.clone()))).collect()),
                _ => V::Dict(Vec::new()),
            },
            "range" => {
                let ints: Vec<i128> = a
                    .iter()
                    .map(|v| match v {
                        V::Int(i) => Ok(*i),
                        V::Bool(b) => Ok(*b as i128),
                        other => Err(self.raise(exc("TypeError", format!("'{}' object cannot be interpreted as an integer", other.type_name())))),
                    })
                    .collect::<R<Vec<_>>>()?;
                match ints.as_slice() {
                    [b] => V::Range(0, *b, 1),
                    [a, b] => V::Range(*a, *b, 1),
                    [a, b, s] if *s != 0 => V::Range(*a, *b, *s),
                    [_, _, _] => return Err(self.raise(exc("ValueError", "range() arg 3 must not be zero"))),
                    _ => return Err(self.raise(exc("TypeError", format!("range expected at least 1 argument, got {}", ints.len())))),
                }
            }
            t if EXC_TYPES.contains(&t) => V::Exc(t.to_string(), a),
            t => return Err(self.raise(exc("TypeError", format!("kubesim: cannot construct '{t}'")))),
        })
    }

    fn builtin(&mut self, os: &mut dyn Os, name: &str, a: Vec<V>, k: Vec<(String, V)>) -> R<V> {
        let kw = |n: &str| k.iter().find(|(x, _)| x == n).map(|(_, v)| v.clone());
        let first = a.first().cloned();
        Ok(match name {
            "print" => {
                let sep = kw("sep").map(|v| if v == V::None { " ".into() } else { to_str(&v) }).unwrap_or_else(|| " ".into());
                let end = kw("end").map(|v| if v == V::None { "\n".into() } else { to_str(&v) }).unwrap_or_else(|| "\n".into());
                let s = format!("{}{end}", a.iter().map(to_str).collect::<Vec<_>>().join(&sep));
                match kw("file") {
                    Some(V::Builtin(f)) if f == "sys.stderr" => {
                        self.flush();
                        self.err(&s)
                    }
                    Some(V::File(i)) => self.write_file(i, &s)?,
                    _ => {
                        self.out(&s);
                        if kw("flush").is_some_and(|v| v.truthy()) {
                            self.flush();
                        }
                    }
                }
                V::None
            }
            "len" => match first {
                Some(V::Str(s)) => V::Int(s.chars().count() as i128),
                Some(V::List(l)) | Some(V::Tuple(l)) => V::Int(l.len() as i128),
                Some(V::Dict(d)) => V::Int(d.len() as i128),
                Some(V::Range(a, b, s)) => V::Int(range_len(a, b, s)),
                Some(V::Environ) => V::Int(self.env.len() as i128),
                Some(o) => return Err(self.raise(exc("TypeError", format!("object of type '{}' has no len()", o.type_name())))),
                None => return Err(self.raise(exc("TypeError", "len() takes exactly one argument (0 given)"))),
            },
            "repr" => V::Str(first.map(|v| repr(&v)).unwrap_or_default()),
            "abs" => match first {
                Some(V::Int(i)) => V::Int(i.abs()),
                Some(V::Float(f)) => V::Float(f.abs()),
                _ => V::Int(0),
            },
            "round" => match (first, a.get(1)) {
                (Some(V::Float(f)), None) => {
                    let r = f.round();
                    let r = if (f - f.trunc()).abs() == 0.5 { 2.0 * (f / 2.0).round() } else { r };
                    V::Int(r as i128)
                }
                (Some(V::Float(f)), Some(V::Int(n))) => {
                    let m = 10f64.powi(*n as i32);
                    V::Float((f * m).round() / m)
                }
                (Some(v), _) => v,
                _ => V::None,
            },
            "min" | "max" => {
                let items = if a.len() == 1 { self.iterate(os, a[0].clone())? } else { a };
                if items.is_empty() {
                    return Err(self.raise(exc("ValueError", format!("{name}() iterable argument is empty"))));
                }
                let mut best = items[0].clone();
                for x in items.into_iter().skip(1) {
                    let better = if name == "min" { self.compare("<", &x, &best)? } else { self.compare(">", &x, &best)? };
                    if better {
                        best = x;
                    }
                }
                best
            }
            "sum" => {
                let items = self.iterate(os, first.unwrap_or(V::List(Vec::new())))?;
                let mut acc = a.get(1).cloned().unwrap_or(V::Int(0));
                for x in items {
                    acc = self.binop("+", acc, x)?;
                }
                acc
            }
            "sorted" => {
                let mut items = self.iterate(os, first.unwrap_or(V::List(Vec::new())))?;
                items.sort_by(py_cmp);
                if kw("reverse").is_some_and(|v| v.truthy()) {
                    items.reverse();
                }
                V::List(items)
            }
            "reversed" => {
                let mut items = self.iterate(os, first.unwrap_or(V::List(Vec::new())))?;
                items.reverse();
                V::List(items)
            }
            "enumerate" => {
                let items = self.iterate(os, first.unwrap_or(V::List(Vec::new())))?;
                let start = match a.get(1).cloned().or_else(|| kw("start")) {
                    Some(V::Int(s)) => s,
                    _ => 0,
                };
                V::List(items.into_iter().enumerate().map(|(i, v)| V::Tuple(vec![V::Int(start + i as i128), v])).collect())
            }
            "zip" => {
                let mut lists = Vec::new();
                for x in a {
                    lists.push(self.iterate(os, x)?);
                }
                let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
                V::List((0..n).map(|i| V::Tuple(lists.iter().map(|l| l[i].clone()).collect())).collect())
            }
            "any" | "all" => {
                let items = self.iterate(os, first.unwrap_or(V::List(Vec::new())))?;
                V::Bool(if name == "any" { items.iter().any(|v| v.truthy()) } else { items.iter().all(|v| v.truthy()) })
            }
            "isinstance" => {
                let v = first.unwrap_or(V::None);
                let types = match a.get(1) {
                    Some(V::Tuple(t)) => t.clone(),
                    Some(t) => vec![t.clone()],
                    None => Vec::new(),
                };
                V::Bool(types.iter().any(|t| match t {
                    V::Type(n) => v.type_name() == n || (n == "int" && matches!(v, V::Bool(_))) || matches!(&v, V::Exc(k, _) if is_subclass(k, n)),
                    _ => false,
                }))
            }
            "type" => V::Type(first.map(|v| if let V::Exc(k, _) = &v { k.clone() } else { v.type_name().to_string() }).unwrap_or_default()),
            "chr" => V::Str(match first {
                Some(V::Int(i)) => char::from_u32(i as u32).map(String::from).unwrap_or_default(),
                _ => String::new(),
            }),
            "ord" => V::Int(match first {
                Some(V::Str(s)) => s.chars().next().map(|c| c as i128).unwrap_or(0),
                _ => 0,
            }),
            "hex" => V::Str(match first {
                Some(V::Int(i)) => {
                    if i < 0 {
                        format!("-0x{:x}", -i)
                    } else {
                        format!("0x{i:x}")
                    }
                }
                _ => String::new(),
            }),
            "input" => {
                if let Some(p) = first {
                    self.out(&to_str(&p));
                }
                if self.stdin_pos >= self.stdin.len() {
                    return Err(self.raise(exc("EOFError", "EOF when reading a line")));
                }
                self.stdin_pos += 1;
                V::Str(self.stdin[self.stdin_pos - 1].trim_end_matches('\n').to_string())
            }
            "open" => {
                let path = to_str(&first.unwrap_or(V::None));
                let mode = a.get(1).cloned().or_else(|| kw("mode")).map(|v| to_str(&v)).unwrap_or_else(|| "r".into());
                let full = kubesim_os::fs::join(&self.cwd, &path);
                let write = mode.contains('w') || mode.contains('a') || mode.contains('x');
                let data = if write {
                    Vec::new()
                } else {
                    match kubesim_os::sys::read_file_limited(os, &full, 16 << 20) {
                        Ok(d) => d,
                        Err(e) => {
                            let kind = match e {
                                kubesim_os::fs::Errno::ENOENT => "FileNotFoundError",
                                kubesim_os::fs::Errno::EACCES => "PermissionError",
                                kubesim_os::fs::Errno::EISDIR => "IsADirectoryError",
                                _ => "OSError",
                            };
                            return Err(self.raise(exc(kind, format!("[Errno {}] {}: {}", e.code(), e.strerror(), str_repr(&path)))));
                        }
                    }
                };
                if write && !full.starts_with("/dev/") {
                    let dir = kubesim_os::fs::dirname(&full);
                    if os.fs_ref().stat(&dir).is_err() {
                        return Err(self.raise(exc("FileNotFoundError", format!("[Errno 2] No such file or directory: {}", str_repr(&path)))));
                    }
                    if mode.contains('w') {
                        let _ = os.fs().write(&full, b"", kubesim_os::fs::WriteMode::Truncate);
                    }
                }
                self.files.push(OpenFile { path: full, write, buf: Vec::new(), data, pos: 0, closed: false, append: mode.contains('a') || mode.contains('w') });
                if self.files.len() > 4096 {
                    return Err(self.raise(exc("OSError", "[Errno 24] Too many open files")));
                }
                V::File(self.files.len() - 1)
            }
            "exit" | "quit" | "sys.exit" => {
                let v = first.unwrap_or(V::None);
                return Err(self.raise(Exc { kind: "SystemExit".into(), args: vec![v], tb: Vec::new() }));
            }
            "sys.stdout.write" | "sys.stderr.write" => {
                let s = to_str(&first.unwrap_or(V::None));
                if name == "sys.stdout.write" {
                    self.out(&s);
                } else {
                    self.flush();
                    self.err(&s);
                }
                V::Int(s.chars().count() as i128)
            }
            "sys.stdout.flush" => {
                self.flush();
                V::None
            }
            "sys.stderr.flush" => V::None,
            "time.sleep" => {
                let secs = match first {
                    Some(V::Int(i)) => i as f64,
                    Some(V::Float(f)) => f,
                    Some(o) => return Err(self.raise(exc("TypeError", format!("'{}' object cannot be interpreted as an integer", o.type_name())))),
                    None => return Err(self.raise(exc("TypeError", "time.sleep() takes exactly one argument (0 given)"))),
                };
                if secs < 0.0 {
                    return Err(self.raise(exc("ValueError", "sleep length must be non-negative")));
                }
                let ms = (secs * 1000.0).min(1e15) as u64;
                self.pending.push(Action::Sleep(ms));
                self.pending_sleep_ms += ms;
                V::None
            }
            "time.time" => V::Float(self.now_ms(os) as f64 / 1000.0),
            "time.monotonic" | "time.perf_counter" => V::Float((os.now_ms() + self.pending_sleep_ms) as f64 / 1000.0),
            "time.strftime" => {
                let f = to_str(&first.unwrap_or(V::None));
                V::Str(kubesim_os::time::strftime(&f, (self.now_ms(os) / 1000) as i64, 0))
            }
            "time.ctime" | "time.asctime" => V::Str(kubesim_os::time::strftime("%a %b %e %H:%M:%S %Y", (self.now_ms(os) / 1000) as i64, 0)),
            "socket.gethostname" | "platform.node" => V::Str(os.hostname()),
            "os.getenv" => {
                let k = to_str(&first.unwrap_or(V::None));
                self.env.get(&k).map(|v| V::Str(v.clone())).unwrap_or_else(|| a.get(1).cloned().or_else(|| kw("default")).unwrap_or(V::None))
            }
            "os.getpid" => V::Int(os.pid() as i128),
            "os.getcwd" => V::Str(self.cwd.clone()),
            "os.uname" => V::Tuple(vec![
                V::Str("Linux".into()),
                V::Str(os.hostname()),
                V::Str(os.uname().release),
                V::Str(os.uname().version),
                V::Str(os.uname().machine),
            ]),
            "os.cpu_count" => V::Int(os.cpu_count() as i128),
            "os.listdir" => {
                let p = kubesim_os::fs::join(&self.cwd, &first.map(|v| to_str(&v)).unwrap_or_else(|| ".".into()));
                match os.fs_ref().read_dir(&p) {
                    Ok(es) => V::List(es.into_iter().map(|e| V::Str(e.name)).collect()),
                    Err(e) => return Err(self.raise(exc("FileNotFoundError", format!("[Errno {}] {}: {}", e.code(), e.strerror(), str_repr(&p))))),
                }
            }
            "os.makedirs" | "os.mkdir" => {
                let p = kubesim_os::fs::join(&self.cwd, &to_str(&first.unwrap_or(V::None)));
                let exist_ok = kw("exist_ok").is_some_and(|v| v.truthy());
                if os.fs_ref().stat(&p).is_ok() && !exist_ok {
                    return Err(self.raise(exc("FileExistsError", format!("[Errno 17] File exists: {}", str_repr(&p)))));
                }
                let _ = os.fs().mkdir(&p, 0o777, name == "os.makedirs");
                V::None
            }
            "os.remove" | "os.unlink" => {
                let p = kubesim_os::fs::join(&self.cwd, &to_str(&first.unwrap_or(V::None)));
                if let Err(e) = os.fs().remove_file(&p) {
                    return Err(self.raise(exc("FileNotFoundError", format!("[Errno {}] {}: {}", e.code(), e.strerror(), str_repr(&p)))));
                }
                V::None
            }
            "os.path.exists" | "os.path.isfile" | "os.path.isdir" => {
                let p = kubesim_os::fs::join(&self.cwd, &to_str(&first.unwrap_or(V::None)));
                let m = os.fs_ref().stat(&p);
                V::Bool(match name {
                    "os.path.isfile" => m.map(|m| !m.is_dir()).unwrap_or(false),
                    "os.path.isdir" => m.map(|m| m.is_dir()).unwrap_or(false),
                    _ => m.is_ok(),
                })
            }
            "os.path.join" => {
                let mut p = String::new();
                for x in &a {
                    let s = to_str(x);
                    if s.starts_with('/') || p.is_empty() {
                        p = s;
                    } else if p.ends_with('/') {
                        p.push_str(&s);
                    } else {
                        p = format!("{p}/{s}");
                    }
                }
                V::Str(p)
            }
            "os.path.basename" => V::Str(to_str(&first.unwrap_or(V::None)).rsplit('/').next().unwrap_or("").to_string()),
            "os.path.dirname" => {
                let s = to_str(&first.unwrap_or(V::None));
                V::Str(s.rsplit_once('/').map(|(d, _)| if d.is_empty() { "/".to_string() } else { d.to_string() }).unwrap_or_default())
            }
            "os.path.abspath" => V::Str(kubesim_os::fs::join(&self.cwd, &to_str(&first.unwrap_or(V::None)))),
            "os.path.getsize" => {
                V::Int(os.fs_ref().stat(&kubesim_os::fs::join(&self.cwd, &to_str(&first.unwrap_or(V::None)))).map(|m| m.size as i128).unwrap_or(0))
            }
            "os.system" => {
                self.flush();
                let cmd = to_str(&first.unwrap_or(V::None));
                let argv = vec!["/bin/sh".to_string(), "-c".to_string(), cmd];
                match common::exec(os, &argv, &self.env, &self.cwd) {
                    Ok(p) => {
                        let (code, o) = common::run_sync(p, os, 200_000, 0);
                        self.pending.push(Action::Out(o));
                        V::Int((code as i128) << 8)
                    }
                    Err(_) => V::Int(127 << 8),
                }
            }
            "random.random" => V::Float((os.random_u64() >> 11) as f64 / (1u64 << 53) as f64),
            "random.randint" | "random.randrange" => {
                let lo = match first {
                    Some(V::Int(i)) => i,
                    _ => 0,
                };
                let hi = match a.get(1) {
                    Some(V::Int(i)) => *i,
                    _ => lo,
                };
                let (lo, hi) = if a.len() == 1 {
                    (0, lo - 1)
                } else if name == "random.randrange" {
                    (lo, hi - 1)
                } else {
                    (lo, hi)
                };
                if hi < lo {
                    return Err(self.raise(exc("ValueError", "empty range for randrange()")));
                }
                let span = (hi - lo + 1) as u128;
                V::Int(lo + (os.random_u64() as u128 % span) as i128)
            }
            "random.choice" => {
                let items = self.iterate(os, first.unwrap_or(V::List(Vec::new())))?;
                if items.is_empty() {
                    return Err(self.raise(exc("IndexError", "Cannot choose from an empty sequence")));
                }
                let i = (os.random_u64() % items.len() as u64) as usize;
                items[i].clone()
            }
            "random.seed" | "signal.signal" | "logging.basicConfig" => V::None,
            "math.sqrt" | "math.floor" | "math.ceil" | "math.log" | "math.exp" | "math.sin" | "math.cos" | "math.fabs" | "math.log10" | "math.log2" => {
                let x = numeric(&first.clone().unwrap_or(V::Int(0))).ok_or_else(|| self.raise(exc("TypeError", "must be real number, not str")))?;
                match name {
                    "math.sqrt" if x < 0.0 => return Err(self.raise(exc("ValueError", "math domain error"))),
                    "math.sqrt" => V::Float(x.sqrt()),
                    "math.floor" => V::Int(x.floor() as i128),
                    "math.ceil" => V::Int(x.ceil() as i128),
                    "math.log" | "math.log10" | "math.log2" if x <= 0.0 => return Err(self.raise(exc("ValueError", "math domain error"))),
                    "math.log" => V::Float(x.ln()),
                    "math.log10" => V::Float(x.log10()),
                    "math.log2" => V::Float(x.log2()),
                    "math.exp" => V::Float(x.exp()),
                    "math.sin" => V::Float(x.sin()),
                    "math.cos" => V::Float(x.cos()),
                    _ => V::Float(x.abs()),
                }
            }
            "json.dumps" => {
                V::Str(json_dumps(&first.unwrap_or(V::None), kw("indent").and_then(|v| if let V::Int(i) = v { Some(i as usize) } else { None }), 0))
            }
            "logging.info" | "logging.warning" | "logging.error" | "logging.debug" | "logging.critical" => {
                let level = name.trim_start_matches("logging.").to_ascii_uppercase();
                if level != "INFO" && level != "DEBUG" {
                    self.flush();
                    self.err(&format!("{level}:root:{}\n", to_str(&first.unwrap_or(V::None))));
                }
                V::None
            }
            "sys.stdout" | "sys.stderr" => V::None,
            other => return Err(self.raise(exc("NotImplementedError", format!("kubesim: {other}() is not modelled")))),
        })
    }

    fn write_file(&mut self, i: usize, s: &str) -> R<()> {
        let Some(f) = self.files.get_mut(i) else { return Ok(()) };
        if f.closed {
            return Err(self.raise(exc("ValueError", "I/O operation on closed file.")));
        }
        if !f.write {
            return Err(self.raise(exc("io.UnsupportedOperation", "not writable")));
        }
        f.buf.extend_from_slice(s.as_bytes());
        if f.buf.len() > 64 << 20 {
            f.buf.truncate(64 << 20);
        }
        Ok(())
    }

    fn method(&mut self, os: &mut dyn Os, obj: V, m: &str, a: Vec<V>, k: Vec<(String, V)>) -> R<V> {
        let arg = |i: usize| a.get(i).cloned();
        let sarg = |i: usize| a.get(i).map(to_str);
        match obj {
            V::Str(s) => Ok(match m {
                "upper" => V::Str(s.to_uppercase()),
                "lower" => V::Str(s.to_lowercase()),
                "strip" | "lstrip" | "rstrip" => {
                    let set: Option<Vec<char>> = sarg(0).map(|c| c.chars().collect());
                    let pred = |c: char| match &set {
                        Some(cs) => cs.contains(&c),
                        None => c.is_whitespace(),
                    };
                    V::Str(match m {
                        "strip" => s.trim_matches(pred).to_string(),
                        "lstrip" => s.trim_start_matches(pred).to_string(),
                        _ => s.trim_end_matches(pred).to_string(),
                    })
                }
                "split" => {
                    let max = match arg(1) {
                        Some(V::Int(n)) if n >= 0 => Some(n as usize),
                        _ => None,
                    };
                    let parts: Vec<String> = match arg(0).filter(|v| *v != V::None) {
                        None => match max {
                            Some(n) => {
                                let mut v: Vec<String> = Vec::new();
                                let mut rest = s.trim_start();
                                while v.len() < n && !rest.is_empty() {
                                    match rest.find(char::is_whitespace) {
                                        Some(p) => {
                                            v.push(rest[..p].to_string());
                                            rest = rest[p..].trim_start();
                                        }
                                        None => {
                                            v.push(rest.to_string());
                                            rest = "";
                                        }
                                    }
                                }
                                if !rest.is_empty() {
                                    v.push(rest.to_string());
                                }
                                v
                            }
                            None => s.split_whitespace().map(str::to_string).collect(),
                        },
                        Some(sep) => {
                            let sep = to_str(&sep);
                            if sep.is_empty() {
                                return Err(self.raise(exc("ValueError", "empty separator")));
                            }
                            match max {
                                Some(n) => s.splitn(n + 1, sep.as_str()).map(str::to_string).collect(),
                                None => s.split(sep.as_str()).map(str::to_string).collect(),
                            }
                        }
                    };
                    V::List(parts.into_iter().map(V::Str).collect())
                }
                "splitlines" => V::List(s.lines().map(|l| V::Str(l.to_string())).collect()),
                "join" => {
                    let items = self.iterate(os, arg(0).unwrap_or(V::List(Vec::new())))?;
                    let mut parts = Vec::new();
                    for (i, x) in items.iter().enumerate() {
                        match x {
                            V::Str(t) => parts.push(t.clone()),
                            o => return Err(self.raise(exc("TypeError", format!("sequence item {i}: expected str instance, {} found", o.type_name())))),
                        }
                    }
                    V::Str(parts.join(&s))
                }
                "startswith" => V::Bool(match arg(0) {
                    Some(V::Tuple(t)) => t.iter().any(|p| s.starts_with(&to_str(p))),
                    Some(p) => s.starts_with(&to_str(&p)),
                    None => false,
                }),
                "endswith" => V::Bool(match arg(0) {
                    Some(V::Tuple(t)) => t.iter().any(|p| s.ends_with(&to_str(p))),
                    Some(p) => s.ends_with(&to_str(&p)),
                    None => false,
                }),
                "replace" => V::Str(s.replace(&sarg(0).unwrap_or_default(), &sarg(1).unwrap_or_default())),
                "find" | "index" => {
                    let t = sarg(0).unwrap_or_default();
                    match s.find(&t) {
                        Some(p) => V::Int(s[..p].chars().count() as i128),
                        None if m == "find" => V::Int(-1),
                        None => return Err(self.raise(exc("ValueError", "substring not found"))),
                    }
                }
                "count" => V::Int(s.matches(&sarg(0).unwrap_or_default()).count() as i128),
                "isdigit" | "isnumeric" => V::Bool(!s.is_empty() && s.chars().all(|c| c.is_ascii_digit())),
                "isalpha" => V::Bool(!s.is_empty() && s.chars().all(char::is_alphabetic)),
                "isspace" => V::Bool(!s.is_empty() && s.chars().all(char::is_whitespace)),
                "title" => V::Str(
                    s.split(' ')
                        .map(|w| {
                            let mut c = w.chars();
                            match c.next() {
                                Some(f) => f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase(),
                                None => String::new(),
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                "capitalize" => V::Str({
                    let mut c = s.chars();
                    match c.next() {
                        Some(f) => f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase(),
                        None => String::new(),
                    }
                }),
                "zfill" => {
                    let w = match arg(0) {
                        Some(V::Int(w)) => w.max(0) as usize,
                        _ => 0,
                    };
                    V::Str(if s.len() >= w { s.clone() } else { format!("{}{s}", "0".repeat(w - s.len())) })
                }
                "encode" | "decode" => V::Str(s.clone()),
                "format" => V::Str(self.str_format(&s, &a, &k)?),
                _ => return Err(self.raise(exc("AttributeError", format!("'str' object has no attribute '{m}'")))),
            }),
            V::Dict(d) => Ok(match m {
                "get" => {
                    let key = arg(0).unwrap_or(V::None);
                    d.iter().find(|(x, _)| py_eq(x, &key)).map(|(_, v)| v.clone()).unwrap_or_else(|| arg(1).unwrap_or(V::None))
                }
                "keys" => V::List(d.iter().map(|(k, _)| k.clone()).collect()),
                "values" => V::List(d.iter().map(|(_, v)| v.clone()).collect()),
                "items" => V::List(d.iter().map(|(k, v)| V::Tuple(vec![k.clone(), v.clone()])).collect()),
                "copy" => V::Dict(d),
                _ => return Err(self.raise(exc("AttributeError", format!("'dict' object has no attribute '{m}'")))),
            }),
            V::Environ => Ok(match m {
                "get" => {
                    let key = to_str(&arg(0).unwrap_or(V::None));
                    self.env.get(&key).map(|v| V::Str(v.clone())).unwrap_or_else(|| arg(1).unwrap_or(V::None))
                }
                "keys" => V::List(self.env.keys().map(|k| V::Str(k.clone())).collect()),
                "values" => V::List(self.env.values().map(|k| V::Str(k.clone())).collect()),
                "items" => V::List(self.env.iter().map(|(k, v)| V::Tuple(vec![V::Str(k.clone()), V::Str(v.clone())])).collect()),
                "setdefault" => {
                    let key = to_str(&arg(0).unwrap_or(V::None));
                    let v = self.env.entry(key).or_insert_with(|| a.get(1).map(to_str).unwrap_or_default()).clone();
                    V::Str(v)
                }
                "copy" => V::Dict(self.env.iter().map(|(k, v)| (V::Str(k.clone()), V::Str(v.clone()))).collect()),
                _ => return Err(self.raise(exc("AttributeError", format!("'_Environ' object has no attribute '{m}'")))),
            }),
            V::List(l) => Ok(match m {
                "index" => {
                    let x = arg(0).unwrap_or(V::None);
                    match l.iter().position(|y| py_eq(y, &x)) {
                        Some(p) => V::Int(p as i128),
                        None => return Err(self.raise(exc("ValueError", format!("{} is not in list", repr(&x))))),
                    }
                }
                "count" => {
                    let x = arg(0).unwrap_or(V::None);
                    V::Int(l.iter().filter(|y| py_eq(y, &x)).count() as i128)
                }
                "copy" => V::List(l),
                _ => {
                    let (ret, _) = self.mutate(V::List(l), m, a, k)?;
                    ret
                }
            }),
            V::File(i) => Ok(match m {
                "read" => {
                    let f = &mut self.files[i];
                    let s = String::from_utf8_lossy(&f.data[f.pos.min(f.data.len())..]).into_owned();
                    f.pos = f.data.len();
                    V::Str(s)
                }
                "readline" => {
                    let f = &mut self.files[i];
                    let rest = &f.data[f.pos.min(f.data.len())..];
                    let n = rest.iter().position(|&b| b == b'\n').map(|p| p + 1).unwrap_or(rest.len());
                    let s = String::from_utf8_lossy(&rest[..n]).into_owned();
                    f.pos += n;
                    V::Str(s)
                }
                "readlines" => V::List(self.iterate(os, V::File(i))?),
                "write" => {
                    let s = to_str(&arg(0).unwrap_or(V::None));
                    self.write_file(i, &s)?;
                    V::Int(s.chars().count() as i128)
                }
                "close" => {
                    self.close_file(os, i);
                    V::None
                }
                "flush" => V::None,
                _ => return Err(self.raise(exc("AttributeError", format!("'_io.TextIOWrapper' object has no attribute '{m}'")))),
            }),
            V::Int(i) if m == "to_bytes" || m == "bit_length" => Ok(V::Int(128 - i.leading_zeros() as i128)),
            V::Float(f) if m == "is_integer" => Ok(V::Bool(f == f.trunc())),
            other => Err(self.raise(exc("AttributeError", format!("'{}' object has no attribute '{m}'", other.type_name())))),
        }
    }

    fn str_format(&mut self, s: &str, a: &[V], k: &[(String, V)]) -> R<String> {
        let chars: Vec<char> = s.chars().collect();
        let mut out = String::new();
        let mut auto = 0;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '{' && chars.get(i + 1) == Some(&'{') {
                out.push('{');
                i += 2;
                continue;
            }
            if c == '}' && chars.get(i + 1) == Some(&'}') {
                out.push('}');
                i += 2;
                continue;
            }
            if c == '{' {
                let end = chars[i..].iter().position(|&x| x == '}').map(|p| i + p);
                let Some(end) = end else { return Err(self.raise(exc("ValueError", "Single '{' encountered in format string"))) };
                let field: String = chars[i + 1..end].iter().collect();
                let (name, spec) = field.split_once(':').map(|(a, b)| (a.to_string(), b.to_string())).unwrap_or((field.clone(), String::new()));
                let v = if name.is_empty() {
                    auto += 1;
                    a.get(auto - 1).cloned()
                } else if let Ok(n) = name.parse::<usize>() {
                    a.get(n).cloned()
                } else {
                    k.iter().find(|(x, _)| *x == name).map(|(_, v)| v.clone())
                };
                let Some(v) = v else {
                    return Err(self.raise(if name.is_empty() || name.parse::<usize>().is_ok() {
                        exc(
                            "IndexError",
                            format!(
                                "Replacement index {} out of range for positional args tuple",
                                if name.is_empty() { auto - 1 } else { name.parse().unwrap_or(0) }
                            ),
                        )
                    } else {
                        Exc { kind: "KeyError".into(), args: vec![V::Str(name)], tb: Vec::new() }
                    }));
                };
                out.push_str(&self.format_spec(&v, &spec)?);
                i = end + 1;
                continue;
            }
            out.push(c);
            i += 1;
        }
        Ok(out)
    }
}

fn floor_div(x: i128, y: i128) -> i128 {
    let q = x / y;
    if x % y != 0 && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}

fn numeric(v: &V) -> Option<f64> {
    match v {
        V::Int(i) => Some(*i as f64),
        V::Float(f) => Some(*f),
        V::Bool(b) => Some(*b as i32 as f64),
        _ => None,
    }
}

fn py_eq(a: &V, b: &V) -> bool {
    match (a, b) {
        (V::Int(_) | V::Float(_) | V::Bool(_), V::Int(_) | V::Float(_) | V::Bool(_)) => numeric(a) == numeric(b),
        (V::List(x), V::List(y)) | (V::Tuple(x), V::Tuple(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q)),
        _ => a == b,
    }
}

fn py_cmp(a: &V, b: &V) -> std::cmp::Ordering {
    match (a, b) {
        (V::Str(x), V::Str(y)) => x.cmp(y),
        (V::List(x), V::List(y)) | (V::Tuple(x), V::Tuple(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = py_cmp(p, q);
                if o.is_ne() {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => match (numeric(a), numeric(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
            _ => std::cmp::Ordering::Equal,
        },
    }
}

fn expr_target(e: &Expr) -> Option<Target> {
    match e {
        Expr::Name(n) => Some(Target::Name(n.clone())),
        Expr::Index(a, b) => Some(Target::Index((**a).clone(), (**b).clone())),
        _ => None,
    }
}

fn json_dumps(v: &V, indent: Option<usize>, level: usize) -> String {
    let (nl, pad, pad_in, sep) = match indent {
        Some(n) => ("\n", " ".repeat(n * level), " ".repeat(n * (level + 1)), ","),
        None => ("", String::new(), String::new(), ", "),
    };
    match v {
        V::None => "null".into(),
        V::Bool(b) => {
            if *b {
                "true".into()
            } else {
                "false".into()
            }
        }
        V::Int(i) => i.to_string(),
        V::Float(f) => float_repr(*f),
        V::Str(s) => {
            let mut o = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => o.push_str("\\\""),
                    '\\' => o.push_str("\\\\"),
                    '\n' => o.push_str("\\n"),
                    '\t' => o.push_str("\\t"),
                    '\r' => o.push_str("\\r"),
                    c if (c as u32) < 0x20 || (c as u32) > 0x7e => o.push_str(&format!("\\u{:04x}", c as u32)),
                    c => o.push(c),
                }
            }
            o.push('"');
            o
        }
        V::List(l) | V::Tuple(l) => {
            if l.is_empty() {
                return "[]".into();
            }
            let items: Vec<String> = l.iter().map(|x| format!("{pad_in}{}", json_dumps(x, indent, level + 1))).collect();
            format!("[{nl}{}{nl}{pad}]", items.join(&format!("{sep}{nl}")).replace(", \n", ",\n"))
        }
        V::Dict(d) => {
            if d.is_empty() {
                return "{}".into();
            }
            let items: Vec<String> =
                d.iter().map(|(k, x)| format!("{pad_in}{}: {}", json_dumps(&V::Str(to_str(k)), None, 0), json_dumps(x, indent, level + 1))).collect();
            format!("{{{nl}{}{nl}{pad}}}", items.join(&format!("{sep}{nl}")).replace(", \n", ",\n"))
        }
        other => json_dumps(&V::Str(to_str(other)), indent, level),
    }
}

fn builtin_value(name: &str) -> Option<V> {
    const FUNCS: &[&str] = &[
        "print",
        "len",
        "repr",
        "abs",
        "round",
        "min",
        "max",
        "sum",
        "sorted",
        "reversed",
        "enumerate",
        "zip",
        "any",
        "all",
        "isinstance",
        "type",
        "chr",
        "ord",
        "hex",
        "input",
        "open",
        "exit",
        "quit",
    ];
    const TYPES: &[&str] = &["int", "float", "str", "bool", "list", "tuple", "dict", "range"];
    if FUNCS.contains(&name) {
        return Some(V::Builtin(name.into()));
    }
    if TYPES.contains(&name) || EXC_TYPES.contains(&name) {
        return Some(V::Type(name.into()));
    }
    match name {
        "__name__" => Some(V::Str("__main__".into())),
        _ => None,
    }
}

fn module_attr(m: &str, n: &str) -> Option<V> {
    let q = format!("{m}.{n}");
    let funcs: &[&str] = match m {
        "os" => &["getenv", "getpid", "getcwd", "listdir", "makedirs", "mkdir", "remove", "unlink", "system", "uname", "cpu_count"],
        "os.path" => &["exists", "isfile", "isdir", "join", "basename", "dirname", "abspath", "getsize"],
        "sys" => &["exit"],
        "time" => &["sleep", "time", "monotonic", "perf_counter", "strftime", "ctime", "asctime"],
        "socket" => &["gethostname"],
        "platform" => &["node"],
        "random" => &["random", "randint", "randrange", "choice", "seed"],
        "math" => &["sqrt", "floor", "ceil", "log", "log10", "log2", "exp", "sin", "cos", "fabs"],
        "json" => &["dumps"],
        "signal" => &["signal"],
        "logging" => &["info", "warning", "error", "debug", "critical", "basicConfig"],
        "sys.stdout" => &["write", "flush"],
        "sys.stderr" => &["write", "flush"],
        _ => &[],
    };
    if funcs.contains(&n) {
        return Some(V::Builtin(q));
    }
    Some(match (m, n) {
        ("os", "path") => V::Module("os.path".into()),
        ("os", "environ") => V::Environ,
        ("os", "sep") => V::Str("/".into()),
        ("os", "linesep") => V::Str("\n".into()),
        ("os", "name") => V::Str("posix".into()),
        ("sys", "stdout") => V::Module("sys.stdout".into()),
        ("sys", "stderr") => V::Module("sys.stderr".into()),
        ("sys", "platform") => V::Str("linux".into()),
        ("sys", "maxsize") => V::Int(i64::MAX as i128),
        ("math", "pi") => V::Float(std::f64::consts::PI),
        ("math", "e") => V::Float(std::f64::consts::E),
        ("math", "inf") => V::Float(f64::INFINITY),
        ("signal", "SIGTERM") => V::Int(15),
        ("signal", "SIGINT") => V::Int(2),
        ("logging", "INFO") => V::Int(20),
        ("logging", "DEBUG") => V::Int(10),
        ("http", "server") => V::Module("http.server".into()),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Run,
    Sleep(u64),
    Compute,
    Done,
}

/// The python program (`python3`, `python`, `python2`).
#[derive(Clone, Debug)]
pub struct Python {
    spawn: Spawn,
    py2: bool,
    phase: Phase,
    interp: Option<Interp>,
    server: Option<Box<http_server::HttpServer>>,
}

impl Python {
    /// From a spawn; `py2` for the `python2` implementation.
    pub fn new(spawn: &Spawn, py2: bool) -> Python {
        Python { spawn: spawn.clone(), py2, phase: Phase::Start, interp: None, server: None }
    }

    fn version(&self) -> String {
        let v = self.spawn.env.get("PYTHON_VERSION").cloned();
        match v {
            Some(v) if !self.py2 || v.starts_with('2') => v,
            _ if self.py2 => "2.7.18".into(),
            _ => DEFAULT_VERSION.into(),
        }
    }

    fn exe(&self) -> String {
        let p = &self.spawn.path;
        if p.is_empty() {
            self.spawn.argv.first().cloned().unwrap_or_else(|| "python3".into())
        } else {
            p.clone()
        }
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        let version = self.version();
        let args: Vec<String> = self.spawn.argv.iter().skip(1).cloned().collect();
        let mut unbuffered = self.spawn.env.get("PYTHONUNBUFFERED").is_some_and(|v| !v.is_empty());
        let mut i = 0;
        let mut code: Option<(String, String)> = None;
        let mut module: Option<String> = None;
        while i < args.len() {
            let a = args[i].as_str();
            match a {
                "-V" | "--version" => {
                    let line = format!("Python {version}\n");
                    if self.py2 {
                        common::err(os, &line);
                    } else {
                        common::out(os, &line);
                    }
                    self.phase = Phase::Done;
                    return Step::Exit(0);
                }
                "-u" => unbuffered = true,
                "-B" | "-E" | "-s" | "-S" | "-O" | "-OO" | "-q" | "-I" | "-P" => {}
                "-c" => {
                    i += 1;
                    let Some(c) = args.get(i) else {
                        common::err(os, &format!("Argument expected for the -c option\nusage: {} [option] ... [-c cmd | -m mod | file | -] [arg] ...\nTry `python -h' for more information.\n", self.exe()));
                        return Step::Exit(2);
                    };
                    code = Some(("<string>".into(), c.clone()));
                    i += 1;
                    break;
                }
                "-m" => {
                    i += 1;
                    module = args.get(i).cloned();
                    i += 1;
                    break;
                }
                "-h" | "--help" => {
                    common::out(os, &format!("usage: {} [option] ... [-c cmd | -m mod | file | -] [arg] ...\nOptions (and corresponding environment variables):\n-c cmd : program passed in as string (terminates option list)\n-m mod : run library module as a script (terminates option list)\n-u     : force the stdout and stderr streams to be unbuffered\n-V     : print the Python version number and exit (also --version)\n", self.exe()));
                    return Step::Exit(0);
                }
                s if s.starts_with("-c") && s.len() > 2 => {
                    code = Some(("<string>".into(), s[2..].to_string()));
                    i += 1;
                    break;
                }
                s if s.starts_with('-') && s != "-" => {
                    common::err(
                        os,
                        &format!(
                            "Unknown option: {s}\nusage: {} [option] ... [-c cmd | -m mod | file | -] [arg] ...\nTry `python -h' for more information.\n",
                            self.exe()
                        ),
                    );
                    return Step::Exit(2);
                }
                _ => break,
            }
            i += 1;
        }
        if let Some(m) = module {
            let rest = args[i.min(args.len())..].to_vec();
            if m == "http.server" || (self.py2 && m == "SimpleHTTPServer") {
                let mut srv = http_server::HttpServer::new(&self.spawn, &rest, &version, self.py2);
                let s = srv.start(os);
                self.server = Some(Box::new(srv));
                return s;
            }
            common::err(os, &format!("{}: No module named {m}\n", self.exe()));
            return Step::Exit(1);
        }
        let mut argv0 = "-c".to_string();
        let (filename, src) = match code {
            Some(c) => c,
            None => match args.get(i) {
                Some(f) if f != "-" => {
                    let path = kubesim_os::fs::join(&self.spawn.cwd, f);
                    match common::read_file(os, &path, 4 << 20) {
                        Some(b) => {
                            argv0 = f.clone();
                            i += 1;
                            (f.clone(), String::from_utf8_lossy(&b).into_owned())
                        }
                        None => {
                            common::err(os, &format!("{}: can't open file '{path}': [Errno 2] No such file or directory\n", self.exe()));
                            return Step::Exit(2);
                        }
                    }
                }
                _ => {
                    argv0 = String::new();
                    i += 1;
                    ("<stdin>".into(), String::from_utf8_lossy(&self.spawn.stdin).into_owned())
                }
            },
        };
        let source: Vec<String> = src.split('\n').map(str::to_string).collect();
        let show_source = filename != "<string>" && filename != "<stdin>" || (filename == "<string>" && crate::nginx::vnum(&version) >= (3, 13, 0));
        let toks = parse::tokenize(&src);
        let module = toks.and_then(|t| parse::Parser::new(t, self.py2).module());
        let body = match module {
            Ok(b) => b,
            Err(e) => {
                let mut s = format!("  File \"{filename}\", line {}\n", e.line);
                if let Some(l) = source.get(e.line.saturating_sub(1)) {
                    let trimmed = l.trim_start();
                    let indent = l.len() - trimmed.len();
                    s.push_str(&format!("    {}\n    {}^\n", trimmed.trim_end(), " ".repeat(e.col.saturating_sub(indent))));
                }
                s.push_str(&format!("{}: {}\n", e.kind, e.msg));
                common::err(os, &s);
                self.phase = Phase::Done;
                return Step::Exit(1);
            }
        };
        let mut argv = vec![argv0];
        argv.extend(args[i.min(args.len())..].iter().cloned());
        let interp = Interp {
            globals: BTreeMap::new(),
            frames: vec![Frame::Block { body, pc: 0 }],
            module_line: 1,
            pending: vec![Action::Compute(if self.py2 { 12 } else { 18 })],
            stdout_buf: Vec::new(),
            unbuffered,
            files: Vec::new(),
            env: self.spawn.env.clone(),
            argv,
            filename,
            source,
            show_source,
            version,
            py2: self.py2,
            stdin: String::from_utf8_lossy(&self.spawn.stdin).split_inclusive('\n').map(str::to_string).collect(),
            stdin_pos: 0,
            steps: 0,
            sync_depth: 0,
            ret: None,
            pending_sleep_ms: 0,
            cwd: self.spawn.cwd.clone(),
        };
        self.interp = Some(interp);
        self.phase = Phase::Run;
        self.run(os)
    }

    fn run(&mut self, os: &mut dyn Os) -> Step {
        let Some(it) = self.interp.as_mut() else { return Step::Exit(0) };
        loop {
            while !it.pending.is_empty() {
                match it.pending.remove(0) {
                    Action::Out(b) => {
                        let _ = os.write_stdout(&b);
                    }
                    Action::Err(s) => common::err(os, &s),
                    Action::Sleep(ms) => {
                        it.pending_sleep_ms = it.pending_sleep_ms.saturating_sub(ms);
                        self.phase = Phase::Sleep(os.now_ms() + ms);
                        return Step::Sleep(ms);
                    }
                    Action::Compute(ms) => {
                        self.phase = Phase::Compute;
                        return Step::Compute { cpu_ms: ms, threads: 1 };
                    }
                    Action::Exit(c) => {
                        self.phase = Phase::Done;
                        return Step::Exit(c);
                    }
                }
            }
            self.phase = Phase::Run;
            let mut n = 0;
            while it.pending.is_empty() {
                n += 1;
                if n > 20_000 {
                    it.pending.push(Action::Compute(10));
                    break;
                }
                if it.frames.is_empty() {
                    it.flush();
                    it.pending.push(Action::Exit(0));
                    break;
                }
                if let Err(e) = it.step(os) {
                    if let Err(e) = it.unwind(os, e, 0) {
                        finish_with(it, os, e);
                        break;
                    }
                }
                it.charge();
            }
        }
    }
}

fn finish_with(it: &mut Interp, os: &mut dyn Os, e: Exc) {
    for i in 0..it.files.len() {
        it.close_file(os, i);
    }
    if e.kind == "SystemExit" {
        let code = match e.args.first() {
            None | Some(V::None) => 0,
            Some(V::Int(i)) => (*i & 0xff) as i32,
            Some(V::Bool(b)) => *b as i32,
            Some(other) => {
                it.flush();
                it.err(&format!("{}\n", to_str(other)));
                1
            }
        };
        it.flush();
        it.pending.push(Action::Exit(code));
        return;
    }
    let mut s = String::from("Traceback (most recent call last):\n");
    for (func, line) in &e.tb {
        s.push_str(&format!("  File \"{}\", line {line}, in {func}\n", it.filename));
        if it.show_source {
            if let Some(l) = it.source.get(line.saturating_sub(1)) {
                if !l.trim().is_empty() {
                    s.push_str(&format!("    {}\n", l.trim()));
                }
            }
        }
    }
    let msg = match e.kind.as_str() {
        "KeyError" => e.args.first().map(repr).unwrap_or_default(),
        _ => to_str(&V::Exc(e.kind.clone(), e.args.clone())),
    };
    if msg.is_empty() {
        s.push_str(&format!("{}\n", e.kind));
    } else {
        s.push_str(&format!("{}: {msg}\n", e.kind));
    }
    it.err(&s);
    // stdout is flushed at interpreter shutdown, after the traceback.
    it.flush();
    it.pending.push(Action::Exit(if e.kind == "KeyboardInterrupt" { 130 } else { 1 }));
}

impl Program for Python {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Some(s) = self.server.as_mut() {
            return s.resume(os, wake);
        }
        match (self.phase.clone(), wake) {
            (Phase::Start, _) => self.start(os),
            (Phase::Done, _) => Step::Exit(0),
            (_, Wake::Signal(Signal::Int)) => {
                if let Some(it) = self.interp.as_mut() {
                    let e = Exc { kind: "KeyboardInterrupt".into(), args: Vec::new(), tb: it.traceback() };
                    finish_with(it, os, e);
                }
                self.run(os)
            }
            (_, Wake::Signal(sig)) => match default_signal_exit(os, sig) {
                Some(c) => {
                    self.phase = Phase::Done;
                    Step::Exit(c)
                }
                None => match self.phase {
                    Phase::Sleep(until) if until > os.now_ms() => Step::Sleep(until - os.now_ms()),
                    Phase::Compute => Step::Compute { cpu_ms: 1, threads: 1 },
                    _ => self.run(os),
                },
            },
            (Phase::Sleep(until), _) if until > os.now_ms() => Step::Sleep(until - os.now_ms()),
            _ => self.run(os),
        }
    }

    fn memory_bytes(&self) -> u64 {
        if let Some(s) = &self.server {
            return s.memory_bytes();
        }
        let data = self.interp.as_ref().map(|i| (i.globals.len() as u64) * 200 + i.stdout_buf.len() as u64).unwrap_or(0);
        (if self.py2 { 6_000_000 } else { 9_500_000 }) + data
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &kubesim_os::program::Incoming) -> Option<kubesim_os::program::Outgoing> {
        self.server.as_mut()?.serve(os, conn)
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        self.server.as_ref().map(|s| s.listening()).unwrap_or_default()
    }
}
