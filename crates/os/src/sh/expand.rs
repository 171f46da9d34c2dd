//! Word expansion: parameters, command substitution, arithmetic, field splitting, globbing.
//!
//! Command substitutions run synchronously when they finish without blocking (the common
//! `$(hostname)`, `$(cat f)`); one that blocks (sleep, network, spawn) is handed back to the
//! frame machine as a started child, and the expansion is redone when it finishes, with the
//! outputs of the substitutions already run cached by occurrence.

use super::ast::*;
use super::*;
use crate::pattern;

/// Expansion context of one command.
pub(super) struct Ctx {
    pub cached: Vec<String>,
    pub idx: usize,
    pub last_status: Option<i32>,
}

/// Why an expansion could not finish.
pub(super) enum Need {
    /// A command substitution blocked: run this started child, then redo the expansion.
    Blocked(Box<Child>, Step),
    /// A fatal error (message already printed): perform this action.
    Fail(Act),
}

#[derive(Clone, Debug)]
enum Seg {
    Lit(String),
    Exp(String),
    Q(String),
    Break,
}

#[derive(Default)]
struct Field {
    text: String,
    pat: String,
    glob: bool,
    real: bool,
}

enum PVal {
    Unset,
    Str(String),
    List(Vec<String>, bool),
}

pub(super) struct Vars<'a>(pub(super) &'a mut Shell);

impl arith::ArithVars for Vars<'_> {
    fn get(&mut self, name: &str) -> Option<String> {
        self.0.special_or_var(name)
    }
    fn set(&mut self, name: &str, value: i64) -> Result<(), String> {
        self.0.set_var(name, &value.to_string())
    }
}

impl Shell {
    /// Expansion where a blocking substitution is an error (rare contexts: arithmetic `for`,
    /// redirections of compound commands, `[[ ]]`, `(( ))`).
    pub(super) fn nosubst<T>(&mut self, os: &mut dyn Os, f: impl FnOnce(&mut Shell, &mut dyn Os, &mut Ctx) -> Result<T, Need>) -> Result<T, Act> {
        if let Some(mut rp) = self.replay.take() {
            if rp.blocked.is_some() {
                // Already suspended: evaluate nothing more in this attempt.
                self.replay = Some(rp);
                return Err(Act::Pop);
            }
            let mut ctx = Ctx { cached: std::mem::take(&mut rp.cached), idx: rp.idx, last_status: None };
            let r = f(self, os, &mut ctx);
            rp.cached = ctx.cached;
            rp.idx = ctx.idx;
            let r = match r {
                Ok(v) => Ok(v),
                Err(Need::Fail(a)) => Err(a),
                Err(Need::Blocked(child, step)) => {
                    rp.blocked = Some((child, step));
                    Err(Act::Pop)
                }
            };
            self.replay = Some(rp);
            return r;
        }
        let mut ctx = Ctx { cached: Vec::new(), idx: 0, last_status: None };
        match f(self, os, &mut ctx) {
            Ok(v) => Ok(v),
            Err(Need::Fail(a)) => Err(a),
            Err(Need::Blocked(..)) => {
                self.err_msg(os, None, "command substitution in this position cannot block (kubesim)");
                self.status = 1;
                Err(Act::Pop)
            }
        }
    }

    pub(super) fn expand_str_nosubst(&mut self, os: &mut dyn Os, w: &Word) -> Result<String, Act> {
        self.nosubst(os, |sh, os, ctx| sh.expand_string(os, w, ctx))
    }

    pub(super) fn expand_pattern_nosubst(&mut self, os: &mut dyn Os, w: &Word) -> Result<String, Act> {
        self.nosubst(os, |sh, os, ctx| sh.expand_pattern(os, w, ctx))
    }

    /// Words → fields (splitting and globbing).
    pub(super) fn expand_fields(&mut self, os: &mut dyn Os, words: &[Word], ctx: &mut Ctx) -> Result<Vec<String>, Need> {
        let mut out = Vec::new();
        let braced: Vec<Word>;
        let words = if self.flavor == Flavor::Bash && words.iter().any(|w| w.0.iter().any(|p| matches!(p, WordPart::Lit(s) if s.contains('{')))) {
            braced = words.iter().flat_map(|w| brace_expand(w, 0)).collect();
            &braced[..]
        } else {
            words
        };
        for w in words {
            let segs = self.segs(os, w, ctx, false)?;
            let fields = self.split(&segs);
            for f in fields {
                if f.glob && !self.opts.noglob {
                    let matches = self.glob(os, &f.pat);
                    if !matches.is_empty() {
                        out.extend(matches);
                        continue;
                    }
                    if self.opts.nullglob {
                        continue;
                    }
                }
                out.push(f.text);
            }
            if out.len() > 1_000_000 {
                break;
            }
        }
        Ok(out)
    }

    /// A word → one string (no splitting, no globbing).
    pub(super) fn expand_string(&mut self, os: &mut dyn Os, w: &Word, ctx: &mut Ctx) -> Result<String, Need> {
        let segs = self.segs(os, w, ctx, false)?;
        let mut s = String::new();
        let mut first = true;
        for seg in segs {
            match seg {
                Seg::Lit(t) | Seg::Exp(t) | Seg::Q(t) => s.push_str(&t),
                Seg::Break => {
                    if !first {
                        s.push(' ');
                    }
                }
            }
            first = false;
        }
        Ok(s)
    }

    /// A word → a pattern (quoted characters escaped).
    pub(super) fn expand_pattern(&mut self, os: &mut dyn Os, w: &Word, ctx: &mut Ctx) -> Result<String, Need> {
        let segs = self.segs(os, w, ctx, false)?;
        let mut s = String::new();
        for seg in segs {
            match seg {
                Seg::Lit(t) | Seg::Exp(t) => s.push_str(&t),
                Seg::Q(t) => s.push_str(&pattern::escape(&t)),
                Seg::Break => s.push(' '),
            }
        }
        Ok(s)
    }

    fn split(&self, segs: &[Seg]) -> Vec<Field> {
        let ifs = self.get_var("IFS").unwrap_or_else(|| " \t\n".into());
        let mut fields = Vec::new();
        let mut cur = Field::default();
        let mut ws_pending = false;
        for seg in segs {
            match seg {
                Seg::Lit(t) => {
                    if pattern::has_glob(t) {
                        cur.glob = true;
                    }
                    cur.text.push_str(t);
                    cur.pat.push_str(t);
                    cur.real = true;
                    ws_pending = false;
                }
                Seg::Q(t) => {
                    cur.text.push_str(t);
                    cur.pat.push_str(&pattern::escape(t));
                    cur.real = true;
                    ws_pending = false;
                }
                Seg::Break => {
                    fields.push(std::mem::take(&mut cur));
                    ws_pending = false;
                }
                Seg::Exp(t) => {
                    for c in t.chars() {
                        if ifs.contains(c) {
                            if c == ' ' || c == '\t' || c == '\n' {
                                if cur.real {
                                    fields.push(std::mem::take(&mut cur));
                                }
                                ws_pending = true;
                            } else {
                                if cur.real || !ws_pending {
                                    let mut f = std::mem::take(&mut cur);
                                    f.real = true;
                                    fields.push(f);
                                }
                                ws_pending = false;
                            }
                        } else {
                            if matches!(c, '*' | '?' | '[') {
                                cur.glob = true;
                                cur.pat.push(c);
                            } else {
                                cur.pat.push_str(&pattern::escape(&c.to_string()));
                            }
                            cur.text.push(c);
                            cur.real = true;
                            ws_pending = false;
                        }
                    }
                }
            }
        }
        if cur.real {
            fields.push(cur);
        }
        fields
    }

    fn glob(&self, os: &mut dyn Os, pat: &str) -> Vec<String> {
        let abs = pat.starts_with('/');
        let comps: Vec<&str> = pat.split('/').filter(|c| !c.is_empty()).collect();
        let mut cur: Vec<String> = vec![if abs { "/".into() } else { String::new() }];
        for (i, comp) in comps.iter().enumerate() {
            let last = i + 1 == comps.len();
            let mut next = Vec::new();
            for base in &cur {
                let dir = if base.is_empty() { self.cwd.clone() } else { crate::fs::join(&self.cwd, base) };
                if pattern::has_glob(comp) {
                    let Ok(entries) = os.fs_ref().read_dir(&dir) else { continue };
                    let mut names: Vec<String> = entries.into_iter().map(|e| e.name).collect();
                    if (comp.starts_with('.') || comp.starts_with("\\.")) && self.flavor != Flavor::Bash {
                        names.push(".".into());
                        names.push("..".into());
                        names.sort();
                    }
                    for n in names {
                        if n.starts_with('.') && !(comp.starts_with('.') || comp.starts_with("\\.")) {
                            continue;
                        }
                        if pattern::matches(comp, &n) {
                            let p = join_rel(base, &n);
                            if !last {
                                let full = crate::fs::join(&self.cwd, &p);
                                if !os.fs_ref().stat(&full).is_ok_and(|m| m.is_dir()) {
                                    continue;
                                }
                            }
                            next.push(p);
                        }
                    }
                } else {
                    let p = join_rel(base, &pattern::unescape(comp));
                    let full = crate::fs::join(&self.cwd, &p);
                    if os.fs_ref().lstat(&full).is_ok() {
                        next.push(p);
                    }
                }
            }
            cur = next;
            if cur.is_empty() || cur.len() > 100_000 {
                return Vec::new();
            }
        }
        if pat.ends_with('/') {
            cur = cur.into_iter().map(|p| format!("{p}/")).collect();
        }
        cur
    }

    fn segs(&mut self, os: &mut dyn Os, w: &Word, ctx: &mut Ctx, in_dq: bool) -> Result<Vec<Seg>, Need> {
        let mut out = Vec::new();
        for part in &w.0 {
            match part {
                WordPart::Lit(s) => out.push(if in_dq { Seg::Q(s.clone()) } else { Seg::Lit(s.clone()) }),
                WordPart::Quoted(s) => out.push(Seg::Q(s.clone())),
                WordPart::Dq(parts) => {
                    let inner = self.segs(os, &Word(parts.clone()), ctx, true)?;
                    let has_at = parts.iter().any(|p| matches!(p, WordPart::Param(pp) if is_list_param(pp)));
                    if inner.is_empty() && !has_at {
                        out.push(Seg::Q(String::new()));
                    } else if inner.is_empty() && has_at && parts.len() > 1 {
                        out.push(Seg::Q(String::new()));
                    }
                    out.extend(inner);
                }
                WordPart::Tilde(user) => {
                    let home = if user.is_empty() {
                        self.get_var("HOME").unwrap_or_else(|| "/".into())
                    } else {
                        match home_of(os, user) {
                            Some(h) => h,
                            None => format!("~{user}"),
                        }
                    };
                    out.push(Seg::Q(home));
                }
                WordPart::Cmd(c) => {
                    let text = self.cmd_subst(os, c.clone(), ctx)?;
                    out.push(if in_dq { Seg::Q(text) } else { Seg::Exp(text) });
                }
                WordPart::Arith(w) => {
                    let text = self.expand_string(os, w, ctx)?;
                    let v = self.arith(os, &text).map_err(Need::Fail)?;
                    out.push(if in_dq { Seg::Q(v.to_string()) } else { Seg::Exp(v.to_string()) });
                }
                WordPart::Param(p) => {
                    let v = self.param(os, p, ctx, in_dq)?;
                    match v {
                        PVal::Unset => {}
                        PVal::Str(s) => out.push(if in_dq { Seg::Q(s) } else { Seg::Exp(s) }),
                        PVal::List(items, star) => {
                            if star && in_dq {
                                let sep = self.get_var("IFS").map(|s| s.chars().next().map(String::from).unwrap_or_default()).unwrap_or_else(|| " ".into());
                                out.push(Seg::Q(items.join(&sep)));
                            } else {
                                for (i, it) in items.into_iter().enumerate() {
                                    if i > 0 {
                                        out.push(Seg::Break);
                                    }
                                    out.push(if in_dq { Seg::Q(it) } else { Seg::Exp(it) });
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    fn cmd_subst(&mut self, os: &mut dyn Os, c: Arc<Cmd>, ctx: &mut Ctx) -> Result<String, Need> {
        let i = ctx.idx;
        ctx.idx += 1;
        if let Some(t) = ctx.cached.get(i) {
            return Ok(t.clone());
        }
        // bash `$(< file)`.
        if let Cmd::List(items) = &*c {
            if let [(cmd, false)] = items.as_slice() {
                if let Cmd::Simple(s) = &**cmd {
                    if s.words.is_empty() && s.assigns.is_empty() && s.redirs.len() == 1 && s.redirs[0].op == RedirOp::In && self.flavor == Flavor::Bash {
                        let name = self.expand_string(os, &s.redirs[0].target, ctx)?;
                        let path = crate::fs::join(&self.cwd, &name);
                        let text = match sys::read_file(os, &path) {
                            Ok(d) => strip_trailing_newlines(&d),
                            Err(e) => {
                                self.err_msg(os, None, &format!("{name}: {}", e.strerror()));
                                String::new()
                            }
                        };
                        ctx.cached.push(text.clone());
                        return Ok(text);
                    }
                }
            }
        }
        let mut sub = self.make_subshell(os, c, Vec::new());
        sub.trace_depth += 1;
        let pid = self.new_process(os);
        let mut fds = self.child_fds();
        fds[0] = FdTarget::Null;
        fds[1] = FdTarget::Capture;
        let mut child = Box::new(Child { prog: Box::new(sub), fds, capture: Vec::new(), limit: SUBST_CAPACITY, kind: ChildKind::Subst, pid, started: true });
        let mut wake = Wake::Start;
        for slice in 0..4 {
            let step = {
                let Child { prog, fds, capture, limit, pid, .. } = &mut *child;
                let out = fds[1].clone();
                let err = fds[2].clone();
                let mut r = Routed { inner: os, out: &out, err: &err, capture, limit: *limit, pid: *pid };
                prog.resume(&mut r, wake)
            };
            match step {
                Step::Exit(code) => {
                    let text = strip_trailing_newlines(&child.capture);
                    ctx.cached.push(text.clone());
                    ctx.last_status = Some(code);
                    return Ok(text);
                }
                Step::Compute { .. } if slice < 3 => wake = Wake::Timer,
                other => return Err(Need::Blocked(child, other)),
            }
        }
        Err(Need::Blocked(child, Step::Compute { cpu_ms: CPU_MS_PER_SLICE, threads: 1 }))
    }

    /// Arithmetic evaluation with the flavour's error handling.
    pub(super) fn arith(&mut self, os: &mut dyn Os, text: &str) -> Result<i64, Act> {
        let r = if self.flavor == Flavor::Dash && text.contains('#') {
            Err("expecting EOF".to_string())
        } else if self.flavor == Flavor::Dash && (text.contains("**") || text.contains("++") || text.contains("--")) {
            Err("syntax error".to_string())
        } else {
            arith::eval(text, &mut Vars(self))
        };
        match r {
            Ok(v) => Ok(v),
            Err(e) => {
                let msg = match self.flavor {
                    Flavor::Bash => {
                        if e == "division by zero" {
                            let tok = text.rsplit(['/', '%']).next().unwrap_or("").trim();
                            format!("{}: division by 0 (error token is \"{tok}\")", text.trim())
                        } else if let Some(rest) = e.strip_prefix("syntax error: operand expected (error token is \"\")") {
                            let t = text.trim_start();
                            let tok = t.trim_end().rsplit(' ').next().unwrap_or("");
                            let tail = &t[t.trim_end().len() - tok.len()..];
                            format!("{t}: syntax error: operand expected (error token is \"{tail}\"){rest}")
                        } else {
                            format!("{}: {e}", text.trim_start())
                        }
                    }
                    Flavor::Dash => {
                        if e == "division by zero" {
                            format!("arithmetic expression: division by zero: \"{text}\"")
                        } else if e == "expecting EOF" {
                            format!("arithmetic expression: expecting EOF: \"{text}\"")
                        } else {
                            format!("arithmetic expression: expecting primary: \"{text}\"")
                        }
                    }
                    Flavor::Ash => {
                        if e == "division by zero" {
                            "divide by zero".into()
                        } else if e.contains("readonly") || e.contains("read only") {
                            e
                        } else {
                            "arithmetic syntax error".into()
                        }
                    }
                };
                self.err_msg(os, None, &msg);
                self.status = if self.flavor == Flavor::Bash { 1 } else { 2 };
                Err(Act::Unwind(Unwind::Exit))
            }
        }
    }

    fn fatal(&mut self, os: &mut dyn Os, msg: &str, bash_code: i32) -> Need {
        self.err_msg(os, None, msg);
        self.status = if self.flavor == Flavor::Bash { bash_code } else { 2 };
        Need::Fail(Act::Unwind(Unwind::Exit))
    }

    /// Special parameters and variables (`None` = unset).
    pub(super) fn special_or_var(&mut self, name: &str) -> Option<String> {
        match name {
            "?" => Some(self.status.to_string()),
            "$" => Some(self.pid.to_string()),
            "!" => self.last_bg.map(|p| p.to_string()),
            "#" => Some(self.pos.len().to_string()),
            "0" => Some(self.arg0.clone()),
            "-" => {
                let mut s = String::new();
                if self.opts.errexit {
                    s.push('e');
                }
                if self.opts.noglob {
                    s.push('f');
                }
                if self.flavor == Flavor::Bash {
                    s.push('h');
                }
                if self.opts.nounset {
                    s.push('u');
                }
                if self.opts.xtrace {
                    s.push('x');
                }
                if self.flavor == Flavor::Bash {
                    s.push_str("B");
                }
                s.push('c');
                Some(s)
            }
            "LINENO" if !self.vars.contains_key("LINENO") && self.flavor != Flavor::Dash => Some(self.lineno.to_string()),
            "RANDOM" if self.flavor != Flavor::Dash && !self.vars.get("RANDOM").is_some_and(|v| v.readonly) => Some(self.next_random().to_string()),
            "SECONDS" if self.flavor == Flavor::Bash => None,
            "BASH_VERSION" if self.flavor == Flavor::Bash => Some("5.2.15(1)-release".into()),
            "BASH" if self.flavor == Flavor::Bash && !self.vars.contains_key("BASH") => Some("/bin/bash".into()),
            "UID" | "EUID" if self.flavor == Flavor::Bash && !self.vars.contains_key(name) => Some("0".into()),
            n if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
                let i: usize = n.parse().ok()?;
                if i == 0 {
                    Some(self.arg0.clone())
                } else {
                    self.pos.get(i - 1).cloned()
                }
            }
            _ => self.get_var(name),
        }
    }

    fn next_random(&mut self) -> u32 {
        // A 15-bit LCG like bash's, seeded once from the host RNG.
        let seed = match self.vars.get("__KUBESIM_RANDOM_STATE") {
            Some(v) => v.scalar().parse::<u64>().unwrap_or(1),
            None => 1,
        };
        let next = seed.wrapping_mul(1103515245).wrapping_add(12345) & 0x7fff_ffff;
        self.vars.insert("__KUBESIM_RANDOM_STATE".into(), Var { val: Val::Str(next.to_string()), exported: false, readonly: false });
        ((next >> 16) & 0x7fff) as u32
    }

    /// Seeds `$RANDOM` from the host.
    pub(super) fn seed_random(&mut self, os: &mut dyn Os) {
        if !self.random_seeded {
            self.random_seeded = true;
            let s = os.random_u64() & 0x7fff_ffff;
            self.vars.insert("__KUBESIM_RANDOM_STATE".into(), Var { val: Val::Str(s.to_string()), exported: false, readonly: false });
        }
    }

    fn param(&mut self, os: &mut dyn Os, p: &Param, ctx: &mut Ctx, in_dq: bool) -> Result<PVal, Need> {
        if p.name == "RANDOM" {
            self.seed_random(os);
        }
        if p.name == "SECONDS" && self.flavor == Flavor::Bash && !self.vars.contains_key("SECONDS") {
            let secs = (os.now_ms().saturating_sub(self.start_ms)) / 1000;
            return self.apply_op(os, p, PVal::Str(secs.to_string()), ctx, in_dq);
        }
        // Base value.
        let base = if p.bang && p.index.as_ref().is_some_and(|w| matches!(w.as_lit(), Some("@") | Some("*"))) {
            // ${!arr[@]}: keys.
            let keys = match self.vars.get(&p.name).map(|v| v.val.clone()) {
                Some(Val::Arr(a)) => a.keys().map(|k| k.to_string()).collect(),
                Some(Val::Str(_)) => vec!["0".to_string()],
                None => Vec::new(),
            };
            PVal::List(keys, false)
        } else if p.bang {
            let target = self.special_or_var(&p.name).unwrap_or_default();
            if target.is_empty() {
                PVal::Unset
            } else {
                match self.special_or_var(&target) {
                    Some(v) => PVal::Str(v),
                    None => PVal::Unset,
                }
            }
        } else if p.name == "@" || p.name == "*" {
            PVal::List(self.pos.clone(), p.name == "*")
        } else if let Some(idx) = &p.index {
            let itext = self.expand_string(os, idx, ctx)?;
            match itext.as_str() {
                "@" | "*" => {
                    let items = match self.vars.get(&p.name).map(|v| v.val.clone()) {
                        Some(Val::Arr(a)) => a.values().cloned().collect(),
                        Some(Val::Str(s)) => vec![s],
                        None => Vec::new(),
                    };
                    PVal::List(items, itext == "*")
                }
                _ => {
                    let i = self.arith(os, &itext).map_err(Need::Fail)?;
                    match self.vars.get(&p.name).map(|v| v.val.clone()) {
                        Some(Val::Arr(a)) => {
                            let i = if i < 0 { a.keys().next_back().map(|k| *k as i64 + 1 + i).unwrap_or(-1) } else { i };
                            if i < 0 {
                                PVal::Unset
                            } else {
                                a.get(&(i as usize)).cloned().map(PVal::Str).unwrap_or(PVal::Unset)
                            }
                        }
                        Some(Val::Str(s)) if i == 0 => PVal::Str(s),
                        _ => PVal::Unset,
                    }
                }
            }
        } else {
            match self.special_or_var(&p.name) {
                Some(v) => PVal::Str(v),
                None => PVal::Unset,
            }
        };
        self.apply_op(os, p, base, ctx, in_dq)
    }

    fn apply_op(&mut self, os: &mut dyn Os, p: &Param, base: PVal, ctx: &mut Ctx, in_dq: bool) -> Result<PVal, Need> {
        let is_set = |v: &PVal, colon: bool| match v {
            PVal::Unset => false,
            PVal::Str(s) => !(colon && s.is_empty()),
            PVal::List(l, _) => !l.is_empty() && !(colon && l.iter().all(String::is_empty) && l.len() == 1),
        };
        let name_for_msg = if p.index.is_some() { format!("{}[{}]", p.name, p.index.as_ref().map(Word::text).unwrap_or_default()) } else { p.name.clone() };
        match &p.op {
            ParamOp::Plain => {
                if matches!(base, PVal::Unset) && self.opts.nounset && p.name != "@" && p.name != "*" && !p.bang {
                    let msg =
                        if self.flavor == Flavor::Bash { format!("{name_for_msg}: unbound variable") } else { format!("{name_for_msg}: parameter not set") };
                    // bash 5.2 exits 127, or 1 under `set -e`.
                    let code = if self.opts.errexit { 1 } else { 127 };
                    return Err(self.fatal(os, &msg, code));
                }
                Ok(base)
            }
            ParamOp::Length => {
                if matches!(base, PVal::Unset) && self.opts.nounset && p.name != "@" && p.name != "*" {
                    let msg =
                        if self.flavor == Flavor::Bash { format!("{name_for_msg}: unbound variable") } else { format!("{name_for_msg}: parameter not set") };
                    // bash 5.2 exits 127, or 1 under `set -e`.
                    let code = if self.opts.errexit { 1 } else { 127 };
                    return Err(self.fatal(os, &msg, code));
                }
                let posix_at = self.flavor != Flavor::Bash && (p.name == "@" || p.name == "*");
                Ok(PVal::Str(match base {
                    PVal::Unset => "0".into(),
                    PVal::Str(s) => s.chars().count().to_string(),
                    PVal::List(l, _) if posix_at => l.join(" ").chars().count().to_string(),
                    PVal::List(l, _) => l.len().to_string(),
                }))
            }
            ParamOp::Default { colon, word } => {
                if is_set(&base, *colon) {
                    Ok(base)
                } else {
                    Ok(self.word_value(os, word, ctx, in_dq)?)
                }
            }
            ParamOp::Alt { colon, word } => {
                if is_set(&base, *colon) {
                    Ok(self.word_value(os, word, ctx, in_dq)?)
                } else {
                    Ok(PVal::Unset)
                }
            }
            ParamOp::Assign { colon, word } => {
                if is_set(&base, *colon) {
                    Ok(base)
                } else {
                    let v = self.expand_string(os, word, ctx)?;
                    if let Err(e) = self.set_var(&p.name, &v) {
                        return Err(self.fatal(os, &e, 1));
                    }
                    Ok(PVal::Str(v))
                }
            }
            ParamOp::Error { colon, word } => {
                if is_set(&base, *colon) {
                    Ok(base)
                } else {
                    let mut msg = self.expand_string(os, word, ctx)?;
                    if msg.is_empty() {
                        msg = match (self.flavor, colon) {
                            (Flavor::Bash, true) => "parameter null or not set".into(),
                            (_, true) => "parameter not set or null".into(),
                            (_, false) => "parameter not set".into(),
                        };
                    }
                    Err(self.fatal(os, &format!("{name_for_msg}: {msg}"), 127))
                }
            }
            ParamOp::TrimPrefix { longest, pat } | ParamOp::TrimSuffix { longest, pat } => {
                let pat = self.expand_pattern(os, pat, ctx)?;
                let prefix = matches!(p.op, ParamOp::TrimPrefix { .. });
                let f = |s: &str| trim(s, &pat, prefix, *longest);
                Ok(map_val(base, f))
            }
            ParamOp::Replace { mode, pat, rep } => {
                let pat = self.expand_pattern(os, pat, ctx)?;
                let rep = self.expand_string(os, rep, ctx)?;
                let mode = *mode;
                Ok(map_val(base, |s| replace(s, &pat, &rep, mode)))
            }
            ParamOp::Substr { off, len } => {
                let off_t = self.expand_string(os, off, ctx)?;
                let o = self.arith(os, &off_t).map_err(Need::Fail)?;
                let l = match len {
                    Some(w) => {
                        let t = self.expand_string(os, w, ctx)?;
                        Some(self.arith(os, &t).map_err(Need::Fail)?)
                    }
                    None => None,
                };
                match base {
                    PVal::Unset => Ok(PVal::Unset),
                    PVal::Str(s) => {
                        let chars: Vec<char> = s.chars().collect();
                        match substr(chars.len(), o, l) {
                            Some((a, b)) => Ok(PVal::Str(chars[a..b].iter().collect())),
                            None => {
                                if l.is_some_and(|l| l < 0) {
                                    return Err(self.fatal(os, &format!("{}: substring expression < 0", l.unwrap_or(0)), 1));
                                }
                                Ok(PVal::Str(String::new()))
                            }
                        }
                    }
                    PVal::List(items, star) => {
                        let mut items = items;
                        let mut o = o;
                        if p.name == "@" || p.name == "*" {
                            items.insert(0, self.arg0.clone());
                            if o == 0 {
                                o = 0;
                            }
                        }
                        match substr(items.len(), o, l) {
                            Some((a, b)) => Ok(PVal::List(items[a..b].to_vec(), star)),
                            None => Ok(PVal::List(Vec::new(), star)),
                        }
                    }
                }
            }
            ParamOp::Case { upper, all } => {
                let (u, a) = (*upper, *all);
                Ok(map_val(base, |s| {
                    let mut out = String::new();
                    for (i, c) in s.chars().enumerate() {
                        if a || i == 0 {
                            if u {
                                out.extend(c.to_uppercase());
                            } else {
                                out.extend(c.to_lowercase());
                            }
                        } else {
                            out.push(c);
                        }
                    }
                    out
                }))
            }
        }
    }

    fn word_value(&mut self, os: &mut dyn Os, w: &Word, ctx: &mut Ctx, in_dq: bool) -> Result<PVal, Need> {
        // The word of ${x:-word} keeps its quoting for later splitting only when unquoted;
        // we approximate by expanding to a string.
        let _ = in_dq;
        Ok(PVal::Str(self.expand_string(os, w, ctx)?))
    }
}

fn is_list_param(p: &Param) -> bool {
    (p.name == "@" || p.index.as_ref().is_some_and(|w| w.as_lit() == Some("@"))) && !matches!(p.op, ParamOp::Length)
}

fn map_val(v: PVal, f: impl Fn(&str) -> String) -> PVal {
    match v {
        PVal::Unset => PVal::Str(f("")),
        PVal::Str(s) => PVal::Str(f(&s)),
        PVal::List(l, star) => PVal::List(l.iter().map(|s| f(s)).collect(), star),
    }
}

fn substr(len: usize, off: i64, l: Option<i64>) -> Option<(usize, usize)> {
    let len_i = len as i64;
    let start = if off < 0 { len_i + off } else { off };
    if start < 0 || start > len_i {
        return None;
    }
    let end = match l {
        None => len_i,
        Some(l) if l < 0 => {
            let e = len_i + l;
            if e < start {
                return None;
            }
            e
        }
        Some(l) => (start + l).min(len_i),
    };
    Some((start as usize, end as usize))
}

fn trim(s: &str, pat: &str, prefix: bool, longest: bool) -> String {
    let idx: Vec<usize> = s.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len())).collect();
    if prefix {
        let order: Vec<usize> = if longest { idx.iter().rev().copied().collect() } else { idx.clone() };
        for i in order {
            if pattern::matches(pat, &s[..i]) {
                return s[i..].to_string();
            }
        }
    } else {
        let order: Vec<usize> = if longest { idx.clone() } else { idx.iter().rev().copied().collect() };
        for i in order {
            if pattern::matches(pat, &s[i..]) {
                return s[..i].to_string();
            }
        }
    }
    s.to_string()
}

fn replace(s: &str, pat: &str, rep: &str, mode: ReplaceMode) -> String {
    if pat.is_empty() {
        return s.to_string();
    }
    let idx: Vec<usize> = s.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len())).collect();
    match mode {
        ReplaceMode::Prefix => {
            for &e in idx.iter().rev() {
                if pattern::matches(pat, &s[..e]) {
                    return format!("{rep}{}", &s[e..]);
                }
            }
            s.to_string()
        }
        ReplaceMode::Suffix => {
            for &b in &idx {
                if pattern::matches(pat, &s[b..]) {
                    return format!("{}{rep}", &s[..b]);
                }
            }
            s.to_string()
        }
        ReplaceMode::First | ReplaceMode::All => {
            let mut out = String::new();
            let mut k = 0;
            let mut done = false;
            while k < idx.len() - 1 {
                let b = idx[k];
                let mut matched = None;
                if !done {
                    for e in (k + 1..idx.len()).rev() {
                        if pattern::matches(pat, &s[b..idx[e]]) {
                            matched = Some(e);
                            break;
                        }
                    }
                }
                match matched {
                    Some(e) => {
                        out.push_str(rep);
                        k = e;
                        if mode == ReplaceMode::First {
                            done = true;
                        }
                    }
                    None => {
                        out.push_str(&s[b..idx[k + 1]]);
                        k += 1;
                    }
                }
            }
            out
        }
    }
}

fn join_rel(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else if base.ends_with('/') {
        format!("{base}{name}")
    } else {
        format!("{base}/{name}")
    }
}

/// Home directory of `user` from `/etc/passwd`.
pub(crate) fn home_of(os: &mut dyn Os, user: &str) -> Option<String> {
    let data = os.fs_ref().read("/etc/passwd").ok()?;
    let text = String::from_utf8_lossy(&data);
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 6 && f[0] == user).then(|| f[5].to_string())
    })
}

/// bash brace expansion (`pre{a,b}post`, `{1..5}`, `{a..e}`, `{0..10..2}`) within one
/// unquoted literal part of a word.
fn brace_expand(w: &Word, depth: usize) -> Vec<Word> {
    if depth > 8 {
        return vec![w.clone()];
    }
    for (pi, part) in w.0.iter().enumerate() {
        let WordPart::Lit(s) = part else { continue };
        let chars: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] != '{' {
                i += 1;
                continue;
            }
            // Find the matching close brace.
            let mut d = 0;
            let mut j = i;
            let mut commas = Vec::new();
            while j < chars.len() {
                match chars[j] {
                    '{' => d += 1,
                    '}' => {
                        d -= 1;
                        if d == 0 {
                            break;
                        }
                    }
                    ',' if d == 1 => commas.push(j),
                    _ => {}
                }
                j += 1;
            }
            if j >= chars.len() {
                break;
            }
            let inner: String = chars[i + 1..j].iter().collect();
            let alts: Vec<String> = if !commas.is_empty() {
                let mut v = Vec::new();
                let mut st = i + 1;
                for &c in &commas {
                    v.push(chars[st..c].iter().collect());
                    st = c + 1;
                }
                v.push(chars[st..j].iter().collect());
                v
            } else if let Some(seq) = brace_seq(&inner) {
                seq
            } else {
                i += 1;
                continue;
            };
            let before: String = chars[..i].iter().collect();
            let after: String = chars[j + 1..].iter().collect();
            let mut out = Vec::new();
            for a in alts {
                let mut parts: Vec<WordPart> = w.0[..pi].to_vec();
                let text = format!("{before}{a}{after}");
                if !text.is_empty() {
                    parts.push(WordPart::Lit(text));
                }
                parts.extend_from_slice(&w.0[pi + 1..]);
                out.extend(brace_expand(&Word(parts), depth + 1));
                if out.len() > 10_000 {
                    break;
                }
            }
            return out;
        }
    }
    vec![w.clone()]
}

fn brace_seq(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    if parts.len() < 2 || parts.len() > 3 {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    let step = step.unsigned_abs().max(1) as i64;
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let width = if parts[0].starts_with('0') && parts[0].len() > 1 || parts[1].starts_with('0') && parts[1].len() > 1 {
            parts[0].len().max(parts[1].len())
        } else {
            0
        };
        let mut v = Vec::new();
        let mut x = a;
        loop {
            v.push(format!("{x:0width$}"));
            if x == b || v.len() > 10_000 {
                break;
            }
            if a < b {
                x += step;
                if x > b {
                    break;
                }
            } else {
                x -= step;
                if x < b {
                    break;
                }
            }
        }
        return Some(v);
    }
    let (ca, cb) = (parts[0].chars().collect::<Vec<_>>(), parts[1].chars().collect::<Vec<_>>());
    if ca.len() == 1 && cb.len() == 1 && ca[0].is_ascii_alphabetic() && cb[0].is_ascii_alphabetic() {
        let (a, b) = (ca[0] as i64, cb[0] as i64);
        let mut v = Vec::new();
        let mut x = a;
        loop {
            v.push(char::from_u32(x as u32).map(String::from).unwrap_or_default());
            if x == b {
                break;
            }
            x += if a < b { step } else { -step };
            if (a < b && x > b) || (a > b && x < b) {
                break;
            }
        }
        return Some(v);
    }
    None
}
