//! perl: the command line (`-e -E -l -n -p -w -M -v`), `bpi` from `-Mbignum=bpi`, and a small
//! interpreter for one-liners (see the README for the subset). Anything outside the subset is
//! a compile error, reported the way perl reports syntax errors.

use crate::common;
use crate::pi;
use kubesim_os::program::{default_signal_exit, Os, Program, Spawn, Step, Wake};
use std::collections::BTreeMap;

/// Perl version when `PERL_VERSION` is unknown (the docker `perl` image's latest).
pub const DEFAULT_VERSION: &str = "5.40.2";

#[derive(Clone, Debug, PartialEq)]
enum Val {
    Undef,
    Num(f64),
    Str(String),
}

impl Val {
    fn num(&self) -> f64 {
        match self {
            Val::Undef => 0.0,
            Val::Num(n) => *n,
            Val::Str(s) => {
                let t = s.trim_start();
                let end = t
                    .char_indices()
                    .take_while(|(i, c)| c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '-' || *c == '+')) || *c == 'e' || *c == 'E')
                    .map(|(i, c)| i + c.len_utf8())
                    .last()
                    .unwrap_or(0);
                let mut e = end;
                while e > 0 && t[..e].parse::<f64>().is_err() {
                    e -= 1;
                }
                t[..e].parse().unwrap_or(0.0)
            }
        }
    }
    fn str(&self) -> String {
        match self {
            Val::Undef => String::new(),
            Val::Num(n) => fmt_num(*n),
            Val::Str(s) => s.clone(),
        }
    }
    fn truthy(&self) -> bool {
        match self {
            Val::Undef => false,
            Val::Num(n) => *n != 0.0,
            Val::Str(s) => !s.is_empty() && s != "0",
        }
    }
}

/// Perl's default number formatting (`%.15g`).
pub fn fmt_num(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Inf".into() } else { "-Inf".into() };
    }
    if n == n.trunc() && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    fmt_g(n, 15)
}

/// C's `%.<p>g`.
pub fn fmt_g(n: f64, p: usize) -> String {
    if n == 0.0 {
        return "0".into();
    }
    let p = p.max(1);
    let exp = n.abs().log10().floor() as i32;
    let s = if exp < -4 || exp >= p as i32 {
        let s = format!("{:.*e}", p - 1, n);
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
        let ev: i32 = e.parse().unwrap_or(0);
        format!("{m}e{}{:02}", if ev < 0 { '-' } else { '+' }, ev.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        let s = format!("{:.*}", decimals, n);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    s
}

#[derive(Clone, Debug, PartialEq)]
enum Expr {
    Lit(Val),
    Interp(Vec<Part>),
    Scalar(String),
    Env(Box<Expr>),
    Argv(Box<Expr>),
    ArgvList,
    Bin(String, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Assign(String, Option<String>, Box<Expr>),
    Incr(String, i32, bool),
    Tern(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>, bool),
    List(Vec<Expr>),
    Range(Box<Expr>, Box<Expr>),
    Match(Option<Box<Expr>>, String, bool, bool),
    ReadLine,
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Lit(String),
    Var(Expr),
}

#[derive(Clone, Debug, PartialEq)]
enum Stmt {
    Expr(Expr, usize),
    If(Vec<(Expr, Vec<Stmt>)>, Option<Vec<Stmt>>),
    While(Expr, Vec<Stmt>, bool),
    For(String, Expr, Vec<Stmt>),
    CFor(Option<Expr>, Option<Expr>, Option<Expr>, Vec<Stmt>),
    Block(Vec<Stmt>),
    Nop,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Str(String, bool),
    Var(String),
    Ident(String),
    Op(String),
    Regex(String, String),
    Eof,
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    prev_term: bool,
}

impl<'a> Lexer<'a> {
    fn new(s: &'a str) -> Lexer<'a> {
        Lexer { s: s.as_bytes(), i: 0, line: 1, prev_term: false }
    }

    fn tokens(&mut self) -> Result<Vec<(Tok, usize)>, String> {
        let mut v = Vec::new();
        loop {
            let t = self.next()?;
            let eof = t == Tok::Eof;
            self.prev_term =
                matches!(&t, Tok::Num(_) | Tok::Str(..) | Tok::Var(_) | Tok::Regex(..)) || matches!(&t, Tok::Op(o) if o == ")" || o == "]" || o == "}");
            v.push((t, self.line));
            if eof || v.len() > 100_000 {
                return Ok(v);
            }
        }
    }

    fn quoted(&mut self, close: u8) -> Result<String, String> {
        let mut out = Vec::new();
        let open = match close {
            b')' => b'(',
            b'}' => b'{',
            b']' => b'[',
            b'>' => b'<',
            c => c,
        };
        let mut depth = 0;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if c == b'\\' && self.i + 1 < self.s.len() {
                out.push(c);
                out.push(self.s[self.i + 1]);
                self.i += 2;
                continue;
            }
            if c == b'\n' {
                self.line += 1;
            }
            if c == open && open != close {
                depth += 1;
            } else if c == close {
                if depth == 0 {
                    self.i += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                depth -= 1;
            }
            out.push(c);
            self.i += 1;
        }
        Err(format!("Can't find string terminator \"{}\" anywhere before EOF", close as char))
    }

    fn next(&mut self) -> Result<Tok, String> {
        let s = self.s;
        while self.i < s.len() {
            let c = s[self.i];
            if c == b'\n' {
                self.line += 1;
                self.i += 1;
            } else if c.is_ascii_whitespace() {
                self.i += 1;
            } else if c == b'#' {
                while self.i < s.len() && s[self.i] != b'\n' {
                    self.i += 1;
                }
            } else {
                break;
            }
        }
        if self.i >= s.len() {
            return Ok(Tok::Eof);
        }
        let c = s[self.i];
        if c.is_ascii_digit() || (c == b'.' && self.i + 1 < s.len() && s[self.i + 1].is_ascii_digit()) {
            let st = self.i;
            while self.i < s.len()
                && (s[self.i].is_ascii_digit() || s[self.i] == b'_' || (s[self.i] == b'.' && !(self.i + 1 < s.len() && s[self.i + 1] == b'.')))
            {
                self.i += 1;
            }
            if self.i < s.len() && (s[self.i] == b'e' || s[self.i] == b'E') {
                self.i += 1;
                if self.i < s.len() && (s[self.i] == b'-' || s[self.i] == b'+') {
                    self.i += 1;
                }
                while self.i < s.len() && s[self.i].is_ascii_digit() {
                    self.i += 1;
                }
            }
            let t: String = String::from_utf8_lossy(&s[st..self.i]).replace('_', "");
            return Ok(Tok::Num(t.parse().unwrap_or(0.0)));
        }
        if c == b'"' || c == b'\'' {
            self.i += 1;
            let q = self.quoted(c)?;
            return Ok(Tok::Str(q, c == b'"'));
        }
        if c == b'$' || c == b'@' {
            self.i += 1;
            let st = self.i;
            if self.i < s.len() && (s[self.i] == b'_' || s[self.i].is_ascii_alphabetic()) {
                while self.i < s.len()
                    && (s[self.i] == b'_' || s[self.i].is_ascii_alphanumeric() || (s[self.i] == b':' && self.i + 1 < s.len() && s[self.i + 1] == b':'))
                {
                    self.i += if s[self.i] == b':' { 2 } else { 1 };
                }
            } else if self.i < s.len() && (s[self.i].is_ascii_digit() || b"!@0&/\\,;.".contains(&s[self.i])) {
                self.i += 1;
            }
            let name = String::from_utf8_lossy(&s[st..self.i]).into_owned();
            if name.is_empty() {
                return Err("syntax error".into());
            }
            return Ok(Tok::Var(format!("{}{name}", c as char)));
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let st = self.i;
            while self.i < s.len()
                && (s[self.i].is_ascii_alphanumeric() || s[self.i] == b'_' || (s[self.i] == b':' && self.i + 1 < s.len() && s[self.i + 1] == b':'))
            {
                self.i += if s[self.i] == b':' { 2 } else { 1 };
            }
            let w = String::from_utf8_lossy(&s[st..self.i]).into_owned();
            // q() qq() qw()
            if matches!(w.as_str(), "q" | "qq" | "qw") && self.i < s.len() && b"({[</|!#".contains(&s[self.i]) {
                let open = s[self.i];
                let close = match open {
                    b'(' => b')',
                    b'{' => b'}',
                    b'[' => b']',
                    b'<' => b'>',
                    o => o,
                };
                self.i += 1;
                let q = self.quoted(close)?;
                return Ok(match w.as_str() {
                    "qw" => Tok::Ident(format!("qw {q}")),
                    "qq" => Tok::Str(q, true),
                    _ => Tok::Str(q, false),
                });
            }
            if w == "m" && self.i < s.len() && b"/{(|!#".contains(&s[self.i]) {
                let open = s[self.i];
                let close = match open {
                    b'{' => b'}',
                    b'(' => b')',
                    o => o,
                };
                self.i += 1;
                let re = self.quoted(close)?;
                return Ok(Tok::Regex(re, self.flags()));
            }
            return Ok(Tok::Ident(w));
        }
        if c == b'/' && !self.prev_term {
            self.i += 1;
            let re = self.quoted(b'/')?;
            return Ok(Tok::Regex(re, self.flags()));
        }
        for op in [
            "<=>", "**=", "||=", "&&=", "//=", "...", "<STDIN>", "<>", "=~", "!~", "==", "!=", "<=", ">=", "&&", "||", "//", "..", "++", "--", "+=", "-=",
            "*=", "/=", ".=", "x=", "**", "->", "=>", "::",
        ] {
            if s[self.i..].starts_with(op.as_bytes()) {
                self.i += op.len();
                return Ok(Tok::Op(op.to_string()));
            }
        }
        self.i += 1;
        Ok(Tok::Op((c as char).to_string()))
    }

    fn flags(&mut self) -> String {
        let st = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_alphabetic() {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[st..self.i]).into_owned()
    }
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    p: usize,
    bignum: bool,
    say: bool,
}

type PResult<T> = Result<T, (String, usize)>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.p.min(self.toks.len() - 1)].0
    }
    fn line(&self) -> usize {
        self.toks[self.p.min(self.toks.len() - 1)].1
    }
    fn bump(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.p < self.toks.len() - 1 {
            self.p += 1;
        }
        t
    }
    fn is_op(&self, o: &str) -> bool {
        matches!(self.peek(), Tok::Op(x) if x == o)
    }
    fn is_ident(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if x == w)
    }
    fn err<T>(&self) -> PResult<T> {
        let near = match self.peek() {
            Tok::Eof => "at EOF".to_string(),
            t => format!("near \"{}\"", tok_text(t)),
        };
        Err((near, self.line()))
    }
    fn expect(&mut self, o: &str) -> PResult<()> {
        if self.is_op(o) {
            self.bump();
            Ok(())
        } else {
            self.err()
        }
    }

    fn program(&mut self) -> PResult<Vec<Stmt>> {
        let mut v = Vec::new();
        while *self.peek() != Tok::Eof {
            v.push(self.stmt()?);
        }
        Ok(v)
    }

    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.expect("{")?;
        let mut v = Vec::new();
        while !self.is_op("}") {
            if *self.peek() == Tok::Eof {
                return Err(("Missing right curly or square bracket".into(), self.line()));
            }
            v.push(self.stmt()?);
        }
        self.bump();
        Ok(v)
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let line = self.line();
        if self.is_op(";") {
            self.bump();
            return Ok(Stmt::Nop);
        }
        if self.is_op("{") {
            return Ok(Stmt::Block(self.block()?));
        }
        if let Tok::Ident(w) = self.peek().clone() {
            match w.as_str() {
                "use" | "no" => {
                    self.bump();
                    let mut words = Vec::new();
                    while !self.is_op(";") && *self.peek() != Tok::Eof {
                        words.push(tok_text(&self.bump()));
                    }
                    self.bump();
                    let all = words.join(" ");
                    if all.starts_with("bignum") || all.starts_with("bigint") || all.starts_with("bigrat") || all.contains("bpi") {
                        self.bignum = true;
                    }
                    if all.contains("say") || all.starts_with("v5.") || all.starts_with("5.") {
                        self.say = true;
                    }
                    return Ok(Stmt::Nop);
                }
                "if" | "unless" => {
                    self.bump();
                    self.expect("(")?;
                    let mut c = self.expr()?;
                    self.expect(")")?;
                    if w == "unless" {
                        c = Expr::Not(Box::new(c));
                    }
                    let b = self.block()?;
                    let mut arms = vec![(c, b)];
                    let mut els = None;
                    loop {
                        if self.is_ident("elsif") {
                            self.bump();
                            self.expect("(")?;
                            let c = self.expr()?;
                            self.expect(")")?;
                            arms.push((c, self.block()?));
                        } else if self.is_ident("else") {
                            self.bump();
                            els = Some(self.block()?);
                            break;
                        } else {
                            break;
                        }
                    }
                    return Ok(Stmt::If(arms, els));
                }
                "while" | "until" => {
                    self.bump();
                    self.expect("(")?;
                    let c = if self.is_op(")") { Expr::Lit(Val::Num(1.0)) } else { self.expr()? };
                    self.expect(")")?;
                    let b = self.block()?;
                    return Ok(Stmt::While(c, b, w == "until"));
                }
                "for" | "foreach" => {
                    self.bump();
                    if self.is_ident("my") {
                        self.bump();
                    }
                    let var = if let Tok::Var(v) = self.peek().clone() {
                        self.bump();
                        v
                    } else {
                        "$_".to_string()
                    };
                    self.expect("(")?;
                    if var == "$_" {
                        // C-style for (init; cond; step)
                        let init = if self.is_op(";") { None } else { Some(self.expr()?) };
                        if self.is_op(";") {
                            self.bump();
                            let cond = if self.is_op(";") { None } else { Some(self.expr()?) };
                            self.expect(";")?;
                            let step = if self.is_op(")") { None } else { Some(self.expr()?) };
                            self.expect(")")?;
                            let b = self.block()?;
                            return Ok(Stmt::CFor(init, cond, step, b));
                        }
                        self.expect(")")?;
                        let b = self.block()?;
                        return Ok(Stmt::For(var, init.unwrap_or(Expr::List(Vec::new())), b));
                    }
                    let list = if self.is_op(")") { Expr::List(Vec::new()) } else { self.expr()? };
                    self.expect(")")?;
                    let b = self.block()?;
                    return Ok(Stmt::For(var, list, b));
                }
                "sub" | "package" | "BEGIN" | "END" | "local" | "our" | "open" | "close" | "eval" | "require" | "format" => return self.err(),
                _ => {}
            }
        }
        let e = self.expr()?;
        // Statement modifiers.
        let s = if let Tok::Ident(w) = self.peek().clone() {
            match w.as_str() {
                "if" | "unless" => {
                    self.bump();
                    let mut c = self.expr()?;
                    if w == "unless" {
                        c = Expr::Not(Box::new(c));
                    }
                    Stmt::If(vec![(c, vec![Stmt::Expr(e, line)])], None)
                }
                "while" | "until" => {
                    self.bump();
                    let c = self.expr()?;
                    Stmt::While(c, vec![Stmt::Expr(e, line)], w == "until")
                }
                "for" | "foreach" => {
                    self.bump();
                    let l = self.expr()?;
                    Stmt::For("$_".into(), l, vec![Stmt::Expr(e, line)])
                }
                _ => return self.err(),
            }
        } else {
            Stmt::Expr(e, line)
        };
        if self.is_op(";") {
            self.bump();
        } else if !self.is_op("}") && *self.peek() != Tok::Eof {
            return self.err();
        }
        Ok(s)
    }

    fn expr(&mut self) -> PResult<Expr> {
        let first = self.assign()?;
        if self.is_op(",") || self.is_op("=>") {
            let mut v = vec![first];
            while self.is_op(",") || self.is_op("=>") {
                self.bump();
                if self.is_op(")") || self.is_op(";") || *self.peek() == Tok::Eof {
                    break;
                }
                v.push(self.assign()?);
            }
            return Ok(Expr::List(v));
        }
        Ok(first)
    }

    fn assign(&mut self) -> PResult<Expr> {
        if self.is_ident("my") {
            self.bump();
        }
        let lhs = self.ternary()?;
        for op in ["=", ".=", "+=", "-=", "*=", "/=", "x=", "**=", "||=", "//=", "&&="] {
            if self.is_op(op) {
                self.bump();
                let rhs = self.assign()?;
                let Expr::Scalar(name) = lhs else { return Err(("Can't modify non-lvalue subroutine call".into(), self.line())) };
                let bop = if op == "=" { None } else { Some(op.trim_end_matches('=').to_string()) };
                return Ok(Expr::Assign(name, bop, Box::new(rhs)));
            }
        }
        Ok(lhs)
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let c = self.low_or()?;
        if self.is_op("?") {
            self.bump();
            let a = self.assign()?;
            self.expect(":")?;
            let b = self.assign()?;
            return Ok(Expr::Tern(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn low_or(&mut self) -> PResult<Expr> {
        let mut l = self.binary(0)?;
        loop {
            if self.is_ident("or") || self.is_ident("and") {
                let op = if self.is_ident("or") { "||" } else { "&&" };
                self.bump();
                let r = self.binary(0)?;
                l = Expr::Bin(op.into(), Box::new(l), Box::new(r));
            } else if self.is_ident("not") {
                self.bump();
                let r = self.binary(0)?;
                l = Expr::Not(Box::new(r));
            } else {
                return Ok(l);
            }
        }
    }

    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut l = self.unary()?;
        loop {
            let (op, prec, right) = match self.peek() {
                Tok::Op(o) => match o.as_str() {
                    "||" | "//" => (o.clone(), 1, false),
                    "&&" => (o.clone(), 2, false),
                    ".." | "..." => ("..".into(), 3, false),
                    "==" | "!=" | "<=>" => (o.clone(), 4, false),
                    "<" | ">" | "<=" | ">=" => (o.clone(), 5, false),
                    "+" | "-" | "." => (o.clone(), 6, false),
                    "*" | "/" | "%" => (o.clone(), 7, false),
                    "=~" | "!~" => (o.clone(), 9, false),
                    "**" => (o.clone(), 10, true),
                    _ => return Ok(l),
                },
                Tok::Ident(w) => match w.as_str() {
                    "eq" | "ne" | "cmp" => (w.clone(), 4, false),
                    "lt" | "gt" | "le" | "ge" => (w.clone(), 5, false),
                    "x" => ("x".into(), 8, false),
                    _ => return Ok(l),
                },
                _ => return Ok(l),
            };
            if prec < min {
                return Ok(l);
            }
            self.bump();
            if op == "=~" || op == "!~" {
                let Tok::Regex(re, flags) = self.bump() else { return self.err() };
                l = Expr::Match(Some(Box::new(l)), re, flags.contains('i'), op == "!~");
                continue;
            }
            let r = self.binary(if right { prec } else { prec + 1 })?;
            l = if op == ".." { Expr::Range(Box::new(l), Box::new(r)) } else { Expr::Bin(op, Box::new(l), Box::new(r)) };
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        if self.is_op("!") {
            self.bump();
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.is_op("-") {
            self.bump();
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.is_op("+") {
            self.bump();
            return self.unary();
        }
        if self.is_op("++") || self.is_op("--") {
            let d = if self.is_op("++") { 1 } else { -1 };
            self.bump();
            let Tok::Var(v) = self.bump() else { return self.err() };
            return Ok(Expr::Incr(v, d, true));
        }
        let t = self.term()?;
        if let Expr::Scalar(v) = &t {
            if self.is_op("++") || self.is_op("--") {
                let d = if self.is_op("++") { 1 } else { -1 };
                self.bump();
                return Ok(Expr::Incr(v.clone(), d, false));
            }
        }
        Ok(t)
    }

    fn term(&mut self) -> PResult<Expr> {
        match self.bump() {
            Tok::Num(n) => Ok(Expr::Lit(Val::Num(n))),
            Tok::Str(s, interp) => {
                if interp {
                    Ok(Expr::Interp(parse_interp(&s).map_err(|e| (e, self.line()))?))
                } else {
                    Ok(Expr::Lit(Val::Str(unescape_single(&s))))
                }
            }
            Tok::Regex(re, flags) => Ok(Expr::Match(None, re, flags.contains('i'), false)),
            Tok::Var(v) => {
                if v == "$ENV" && self.is_op("{") {
                    self.bump();
                    let k = self.hash_key()?;
                    self.expect("}")?;
                    return Ok(Expr::Env(Box::new(k)));
                }
                if v == "$ARGV" && self.is_op("[") {
                    self.bump();
                    let k = self.expr()?;
                    self.expect("]")?;
                    return Ok(Expr::Argv(Box::new(k)));
                }
                if v == "@ARGV" {
                    return Ok(Expr::ArgvList);
                }
                if v.starts_with('@') || self.is_op("[") || self.is_op("{") {
                    return Err((format!("near \"{v}\""), self.line()));
                }
                Ok(Expr::Scalar(v))
            }
            Tok::Op(o) if o == "(" => {
                if self.is_op(")") {
                    self.bump();
                    return Ok(Expr::List(Vec::new()));
                }
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op(o) if o == "<STDIN>" || o == "<>" => Ok(Expr::ReadLine),
            Tok::Ident(w) => self.call(w),
            Tok::Eof => self.err(),
            _ => {
                self.p = self.p.saturating_sub(1);
                self.err()
            }
        }
    }

    fn hash_key(&mut self) -> PResult<Expr> {
        if let Tok::Ident(w) = self.peek().clone() {
            self.bump();
            return Ok(Expr::Lit(Val::Str(w)));
        }
        self.expr()
    }

    fn call(&mut self, w: String) -> PResult<Expr> {
        if let Some(words) = w.strip_prefix("qw ") {
            return Ok(Expr::List(words.split_whitespace().map(|s| Expr::Lit(Val::Str(s.into()))).collect()));
        }
        const KNOWN: &[&str] = &[
            "print",
            "printf",
            "say",
            "sleep",
            "exit",
            "die",
            "warn",
            "length",
            "uc",
            "lc",
            "ucfirst",
            "lcfirst",
            "int",
            "abs",
            "sqrt",
            "sprintf",
            "join",
            "time",
            "localtime",
            "gmtime",
            "scalar",
            "defined",
            "chomp",
            "bpi",
            "rand",
            "hex",
            "oct",
            "reverse",
            "sin",
            "cos",
            "exp",
            "log",
            "undef",
            "STDERR",
            "STDOUT",
            "__LINE__",
            "chr",
            "ord",
            "index",
            "substr",
            "lc",
            "sort",
            "keys",
        ];
        let name = w.as_str();
        if name == "bpi" && !self.bignum {
            return Err(("Undefined subroutine &main::bpi called".to_string(), 0));
        }
        if !KNOWN.contains(&name) {
            if self.is_op("(") {
                return Err((format!("Undefined subroutine &main::{name} called"), 0));
            }
            // A bareword: a string (perl without strict).
            return Ok(Expr::Lit(Val::Str(w)));
        }
        if matches!(name, "time" | "__LINE__") && !self.is_op("(") {
            return Ok(Expr::Call(w, Vec::new(), false));
        }
        let paren = self.is_op("(");
        let mut to_stderr = false;
        let mut args = Vec::new();
        if paren {
            self.bump();
            if matches!(name, "print" | "printf" | "say") && self.is_ident("STDERR") {
                self.bump();
                to_stderr = true;
            } else if matches!(name, "print" | "printf" | "say") && self.is_ident("STDOUT") {
                self.bump();
            }
            if !self.is_op(")") {
                args = flatten(self.expr()?);
            }
            self.expect(")")?;
        } else {
            if matches!(name, "print" | "printf" | "say") && (self.is_ident("STDERR") || self.is_ident("STDOUT")) {
                to_stderr = self.is_ident("STDERR");
                self.bump();
            }
            let ends = |p: &Parser| {
                p.is_op(";")
                    || p.is_op(")")
                    || p.is_op("}")
                    || *p.peek() == Tok::Eof
                    || p.is_ident("if")
                    || p.is_ident("unless")
                    || p.is_ident("for")
                    || p.is_ident("foreach")
                    || p.is_ident("while")
                    || p.is_ident("until")
                    || p.is_ident("or")
                    || p.is_ident("and")
                    || p.is_op(":")
                    || p.is_op(",")
                    || p.is_op("?")
                    || p.is_op("==")
                    || p.is_op("=~")
                    || p.is_ident("eq")
                    || p.is_ident("ne")
                    || p.is_op("<")
                    || p.is_op(">")
                    || p.is_op("&&")
                    || p.is_op("||")
            };
            if !ends(self) {
                let unary = matches!(
                    name,
                    "length"
                        | "uc"
                        | "lc"
                        | "ucfirst"
                        | "lcfirst"
                        | "int"
                        | "abs"
                        | "sqrt"
                        | "defined"
                        | "chomp"
                        | "bpi"
                        | "rand"
                        | "hex"
                        | "oct"
                        | "sin"
                        | "cos"
                        | "exp"
                        | "log"
                        | "chr"
                        | "ord"
                        | "scalar"
                        | "localtime"
                        | "gmtime"
                        | "sleep"
                        | "exit"
                );
                if unary {
                    args.push(self.binary(6)?);
                } else {
                    args = flatten(self.expr()?);
                }
            }
        }
        Ok(Expr::Call(w, args, to_stderr))
    }
}

fn flatten(e: Expr) -> Vec<Expr> {
    match e {
        Expr::List(v) => v,
        e => vec![e],
    }
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Num(n) => fmt_num(*n),
        Tok::Str(s, true) => format!("\"{s}\""),
        Tok::Str(s, false) => format!("'{s}'"),
        Tok::Var(v) => v.clone(),
        Tok::Ident(w) => w.clone(),
        Tok::Op(o) => o.clone(),
        Tok::Regex(r, _) => format!("/{r}/"),
        Tok::Eof => String::new(),
    }
}

fn unescape_single(s: &str) -> String {
    let mut o = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' && matches!(it.peek(), Some('\\') | Some('\'')) {
            o.push(it.next().unwrap_or('\\'));
        } else {
            o.push(c);
        }
    }
    o
}

fn parse_interp(s: &str) -> Result<Vec<Part>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut parts = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let n = chars[i + 1];
            i += 2;
            match n {
                'n' => lit.push('\n'),
                't' => lit.push('\t'),
                'r' => lit.push('\r'),
                'e' => lit.push('\x1b'),
                'a' => lit.push('\x07'),
                '0' => lit.push('\0'),
                other => lit.push(other),
            }
            continue;
        }
        if c == '$' && i + 1 < chars.len() && (chars[i + 1].is_ascii_alphabetic() || chars[i + 1] == '_' || chars[i + 1] == '{') {
            let mut j = i + 1;
            let braced = chars[j] == '{';
            if braced {
                j += 1;
            }
            let st = j;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let name: String = chars[st..j].iter().collect();
            if braced && j < chars.len() && chars[j] == '}' {
                j += 1;
            }
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(&mut lit)));
            }
            if name == "ENV" && j < chars.len() && chars[j] == '{' {
                let end = chars[j..].iter().position(|&c| c == '}').map(|p| j + p).unwrap_or(chars.len());
                let key: String = chars[j + 1..end].iter().collect();
                let key = key.trim_matches(|c| c == '"' || c == '\'').to_string();
                parts.push(Part::Var(Expr::Env(Box::new(Expr::Lit(Val::Str(key))))));
                i = (end + 1).min(chars.len());
                continue;
            }
            if name == "ARGV" && j < chars.len() && chars[j] == '[' {
                let end = chars[j..].iter().position(|&c| c == ']').map(|p| j + p).unwrap_or(chars.len());
                let idx: String = chars[j + 1..end].iter().collect();
                parts.push(Part::Var(Expr::Argv(Box::new(Expr::Lit(Val::Num(idx.trim().parse().unwrap_or(0.0)))))));
                i = (end + 1).min(chars.len());
                continue;
            }
            parts.push(Part::Var(Expr::Scalar(format!("${name}"))));
            i = j;
            continue;
        }
        if c == '@' && i + 1 < chars.len() && chars[i + 1].is_ascii_alphabetic() {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let name: String = chars[i + 1..j].iter().collect();
            if name == "ARGV" {
                if !lit.is_empty() {
                    parts.push(Part::Lit(std::mem::take(&mut lit)));
                }
                parts.push(Part::Var(Expr::Call("join".into(), vec![Expr::Lit(Val::Str(" ".into())), Expr::ArgvList], false)));
                i = j;
                continue;
            }
            return Err(format!("Possible unintended interpolation of @{name} in string"));
        }
        lit.push(c);
        i += 1;
    }
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    Ok(parts)
}

/// A statement list being executed (a resumable frame).
#[derive(Clone, Debug)]
enum Frame {
    Block { stmts: Vec<Stmt>, pc: usize },
    While { cond: Expr, body: Vec<Stmt>, until: bool },
    For { var: String, items: Vec<Val>, idx: usize, body: Vec<Stmt> },
    CFor { cond: Option<Expr>, step: Option<Expr>, body: Vec<Stmt>, first: bool },
}

#[derive(Clone, Debug)]
enum Flow {
    Exit(i32),
    Die(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Run,
    /// Sleeping until this virtual time.
    Sleep(u64),
    /// Computing (bpi).
    Compute,
    Done,
}

/// The perl program.
#[derive(Clone, Debug)]
pub struct Perl {
    spawn: Spawn,
    phase: Phase,
    frames: Vec<Frame>,
    vars: BTreeMap<String, Val>,
    argv: Vec<String>,
    stdin_lines: Vec<String>,
    stdin_pos: usize,
    newline: bool,
    pending: Vec<Action>,
    script: String,
    fuel: u64,
    mem: u64,
}

#[derive(Clone, Debug)]
enum Action {
    Out(String),
    Err(String),
    Sleep(u64),
    Compute(u64),
    Exit(i32),
}

impl Perl {
    /// From a spawn (`perl -Mbignum=bpi -wle 'print bpi(2000)'`).
    pub fn new(spawn: &Spawn) -> Perl {
        Perl {
            spawn: spawn.clone(),
            phase: Phase::Start,
            frames: Vec::new(),
            vars: BTreeMap::new(),
            argv: Vec::new(),
            stdin_lines: Vec::new(),
            stdin_pos: 0,
            newline: false,
            pending: Vec::new(),
            script: "-e".into(),
            fuel: 0,
            mem: 3_500_000,
        }
    }

    fn version(&self) -> String {
        self.spawn.env.get("PERL_VERSION").cloned().unwrap_or_else(|| DEFAULT_VERSION.into())
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        let args: Vec<String> = self.spawn.argv.iter().skip(1).cloned().collect();
        let mut code: Vec<String> = Vec::new();
        let mut modules = Vec::new();
        let (mut n_loop, mut p_loop, mut say) = (false, false, false);
        let mut i = 0;
        let mut file: Option<String> = None;
        while i < args.len() {
            let a = &args[i];
            if a == "--" {
                i += 1;
                break;
            }
            if !a.starts_with('-') || a == "-" {
                break;
            }
            let flags: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < flags.len() {
                match flags[j] {
                    'e' | 'E' => {
                        say |= flags[j] == 'E';
                        let rest: String = flags[j + 1..].iter().collect();
                        if !rest.is_empty() {
                            code.push(rest);
                        } else {
                            i += 1;
                            match args.get(i) {
                                Some(c) => code.push(c.clone()),
                                None => {
                                    common::err(os, "No code specified for -e.\n");
                                    return Step::Exit(29);
                                }
                            }
                        }
                        j = flags.len();
                        continue;
                    }
                    'M' | 'm' => {
                        let rest: String = flags[j + 1..].iter().collect();
                        let m = if rest.is_empty() {
                            i += 1;
                            args.get(i).cloned().unwrap_or_default()
                        } else {
                            rest
                        };
                        modules.push(m);
                        j = flags.len();
                        continue;
                    }
                    'l' => self.newline = true,
                    'n' => n_loop = true,
                    'p' => p_loop = true,
                    'w' | 's' | 'T' | 't' | 'W' | 'X' | 'a' => {}
                    'v' => {
                        let v = self.version();
                        let parts: Vec<&str> = v.split('.').collect();
                        common::out(os, &format!("\nThis is perl 5, version {}, subversion {} (v{v}) built for x86_64-linux-gnu\n\nCopyright 1987-2025, Larry Wall\n\nPerl may be copied only under the terms of either the Artistic License or the\nGNU General Public License, which may be found in the Perl 5 source kit.\n\nComplete documentation for Perl, including FAQ lists, should be found on\nthis system using \"man perl\" or \"perldoc perl\".  If you have access to the\nInternet, point your browser at https://www.perl.org/, the Perl Home Page.\n\n", parts.get(1).unwrap_or(&"40"), parts.get(2).unwrap_or(&"0")));
                        return Step::Exit(0);
                    }
                    'c' => {}
                    other => {
                        common::err(os, &format!("Unrecognized switch: -{other}  (-h will show valid options).\n"));
                        return Step::Exit(29);
                    }
                }
                j += 1;
            }
            i += 1;
        }
        if code.is_empty() {
            match args.get(i) {
                Some(f) => {
                    let path = kubesim_os::fs::join(&self.spawn.cwd, f);
                    match common::read_file(os, &path, 1 << 20) {
                        Some(b) => {
                            let t = String::from_utf8_lossy(&b).into_owned();
                            code.push(t.strip_prefix("#!").map(|r| r.split_once('\n').map(|x| x.1).unwrap_or("").to_string()).unwrap_or(t));
                            self.script = f.clone();
                            file = Some(f.clone());
                            i += 1;
                        }
                        None => {
                            common::err(os, &format!("Can't open perl script \"{f}\": No such file or directory\n"));
                            return Step::Exit(2);
                        }
                    }
                }
                None => {
                    // Reads the program from stdin.
                    code.push(String::from_utf8_lossy(&self.spawn.stdin).into_owned());
                    self.script = "-".into();
                }
            }
        }
        let _ = file;
        self.argv = args[i.min(args.len())..].to_vec();
        let src = code.join("\n");
        let bignum = modules.iter().any(|m| m.starts_with("bignum") || m.starts_with("bigint") || m.starts_with("bigrat") || m.contains("bpi"));
        let mut lx = Lexer::new(&src);
        let toks = match lx.tokens() {
            Ok(t) => t,
            Err(e) => return self.compile_error(os, &e, lx.line),
        };
        let mut ps = Parser { toks, p: 0, bignum, say: say || modules.iter().any(|m| m.contains("feature")) };
        let prog = match ps.program() {
            Ok(p) => p,
            Err((msg, line)) => {
                if msg.starts_with("Undefined subroutine") {
                    common::err(os, &format!("{msg} at {} line {}.\n", self.script, line.max(1)));
                    return Step::Exit(255);
                }
                return self.compile_error(os, &msg, line);
            }
        };
        self.stdin_lines = String::from_utf8_lossy(&self.spawn.stdin).split_inclusive('\n').map(str::to_string).collect();
        let prog = if n_loop || p_loop {
            let mut body = Vec::new();
            if self.newline {
                body.push(Stmt::Expr(Expr::Call("chomp".into(), Vec::new(), false), 1));
            }
            body.extend(prog);
            if p_loop {
                body.push(Stmt::Expr(Expr::Call("print".into(), vec![Expr::Scalar("$_".into())], false), 1));
            }
            vec![Stmt::While(Expr::Assign("$_".into(), None, Box::new(Expr::ReadLine)), body, false)]
        } else {
            prog
        };
        self.frames.push(Frame::Block { stmts: prog, pc: 0 });
        self.phase = Phase::Run;
        // Interpreter start-up.
        self.pending.push(Action::Compute(12));
        self.run(os)
    }

    fn compile_error(&mut self, os: &mut dyn Os, msg: &str, line: usize) -> Step {
        let m = if msg.starts_with("near") || msg.starts_with("at EOF") {
            format!("syntax error at {} line {}, {msg}", self.script, line.max(1))
        } else {
            format!("{msg} at {} line {}.", self.script, line.max(1))
        };
        common::err(os, &format!("{m}\nExecution of {} aborted due to compilation errors.\n", self.script));
        self.phase = Phase::Done;
        Step::Exit(255)
    }

    /// Plays pending actions, then runs statements until one produces a blocking action.
    fn run(&mut self, os: &mut dyn Os) -> Step {
        loop {
            while !self.pending.is_empty() {
                match self.pending.remove(0) {
                    Action::Out(s) => common::out(os, &s),
                    Action::Err(s) => common::err(os, &s),
                    Action::Sleep(ms) => {
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
            let mut steps = 0;
            while self.pending.is_empty() {
                steps += 1;
                if steps > 20_000 {
                    self.pending.push(Action::Compute(10));
                    break;
                }
                match self.step(os) {
                    Ok(true) => {}
                    Ok(false) => {
                        self.pending.push(Action::Exit(0));
                    }
                    Err(Flow::Exit(c)) => self.pending.push(Action::Exit(c)),
                    Err(Flow::Die(m)) => {
                        self.pending.push(Action::Err(m));
                        self.pending.push(Action::Exit(255));
                    }
                }
            }
        }
    }

    /// Executes one statement (or loop iteration bookkeeping). `Ok(false)` = program ended.
    fn step(&mut self, os: &mut dyn Os) -> Result<bool, Flow> {
        let Some(top) = self.frames.last_mut() else { return Ok(false) };
        match top {
            Frame::Block { stmts, pc } => {
                if *pc >= stmts.len() {
                    self.frames.pop();
                    return Ok(!self.frames.is_empty());
                }
                let s = stmts[*pc].clone();
                *pc += 1;
                self.exec(os, s)?;
                Ok(true)
            }
            Frame::While { cond, body, until } => {
                let (cond, body, until) = (cond.clone(), body.clone(), *until);
                let v = self.eval(os, &cond)?.truthy();
                if v != until {
                    self.frames.push(Frame::Block { stmts: body, pc: 0 });
                } else {
                    self.frames.pop();
                }
                Ok(true)
            }
            Frame::For { var, items, idx, body } => {
                if *idx >= items.len() {
                    self.frames.pop();
                    return Ok(true);
                }
                let v = items[*idx].clone();
                *idx += 1;
                let (var, body) = (var.clone(), body.clone());
                self.vars.insert(var, v);
                self.frames.push(Frame::Block { stmts: body, pc: 0 });
                Ok(true)
            }
            Frame::CFor { cond, step, body, first } => {
                let (cond, step, body, f) = (cond.clone(), step.clone(), body.clone(), *first);
                *first = false;
                if !f {
                    if let Some(s) = &step {
                        self.eval(os, s)?;
                    }
                }
                let go = match &cond {
                    Some(c) => self.eval(os, c)?.truthy(),
                    None => true,
                };
                if go {
                    self.frames.push(Frame::Block { stmts: body, pc: 0 });
                } else {
                    self.frames.pop();
                }
                Ok(true)
            }
        }
    }

    fn exec(&mut self, os: &mut dyn Os, s: Stmt) -> Result<(), Flow> {
        if self.frames.len() > 200 {
            return Err(Flow::Die("Deep recursion limit exceeded\n".into()));
        }
        match s {
            Stmt::Nop => {}
            Stmt::Expr(e, line) => {
                self.vars.insert("__LINE__".into(), Val::Num(line as f64));
                self.eval(os, &e)?;
            }
            Stmt::Block(b) => self.frames.push(Frame::Block { stmts: b, pc: 0 }),
            Stmt::If(arms, els) => {
                for (c, b) in arms {
                    if self.eval(os, &c)?.truthy() {
                        self.frames.push(Frame::Block { stmts: b, pc: 0 });
                        return Ok(());
                    }
                }
                if let Some(b) = els {
                    self.frames.push(Frame::Block { stmts: b, pc: 0 });
                }
            }
            Stmt::While(c, b, until) => self.frames.push(Frame::While { cond: c, body: b, until }),
            Stmt::For(var, list, body) => {
                let items = self.eval_list(os, &list)?;
                self.frames.push(Frame::For { var, items, idx: 0, body });
            }
            Stmt::CFor(init, cond, step, body) => {
                if let Some(i) = init {
                    self.eval(os, &i)?;
                }
                self.frames.push(Frame::CFor { cond, step, body, first: true });
            }
        }
        Ok(())
    }

    fn eval_list(&mut self, os: &mut dyn Os, e: &Expr) -> Result<Vec<Val>, Flow> {
        match e {
            Expr::List(v) => {
                let mut out = Vec::new();
                for x in v {
                    out.extend(self.eval_list(os, x)?);
                }
                Ok(out)
            }
            Expr::Range(a, b) => {
                let (a, b) = (self.eval(os, a)?.num() as i64, self.eval(os, b)?.num() as i64);
                if b.saturating_sub(a) > 1_000_000 {
                    return Err(Flow::Die("Out of memory in perl:util:safesysrealloc\n".into()));
                }
                Ok((a..=b).map(|n| Val::Num(n as f64)).collect())
            }
            Expr::ArgvList => Ok(self.argv.iter().map(|a| Val::Str(a.clone())).collect()),
            Expr::Call(n, args, _) if n == "reverse" || n == "sort" => {
                let mut v = Vec::new();
                for a in args {
                    v.extend(self.eval_list(os, a)?);
                }
                if n == "sort" {
                    v.sort_by_key(|a| a.str());
                } else {
                    v.reverse();
                }
                Ok(v)
            }
            e => Ok(vec![self.eval(os, e)?]),
        }
    }

    fn eval(&mut self, os: &mut dyn Os, e: &Expr) -> Result<Val, Flow> {
        self.fuel += 1;
        Ok(match e {
            Expr::Lit(v) => v.clone(),
            Expr::Interp(parts) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        Part::Lit(l) => s.push_str(l),
                        Part::Var(x) => s.push_str(&self.eval(os, x)?.str()),
                    }
                }
                Val::Str(s)
            }
            Expr::Scalar(n) => {
                if n == "$0" {
                    return Ok(Val::Str(self.script.clone()));
                }
                if n == "$$" {
                    return Ok(Val::Num(os.pid() as f64));
                }
                self.vars.get(n).cloned().unwrap_or(Val::Undef)
            }
            Expr::Env(k) => {
                let k = self.eval(os, k)?.str();
                self.spawn.env.get(&k).map(|v| Val::Str(v.clone())).unwrap_or(Val::Undef)
            }
            Expr::Argv(i) => {
                let i = self.eval(os, i)?.num() as i64;
                let idx = if i < 0 { self.argv.len() as i64 + i } else { i };
                self.argv.get(idx.max(0) as usize).map(|a| Val::Str(a.clone())).unwrap_or(Val::Undef)
            }
            Expr::ArgvList => Val::Num(self.argv.len() as f64),
            Expr::Not(x) => {
                if self.eval(os, x)?.truthy() {
                    Val::Str(String::new())
                } else {
                    Val::Num(1.0)
                }
            }
            Expr::Neg(x) => {
                let v = self.eval(os, x)?;
                match v {
                    Val::Str(s) if s.parse::<f64>().is_err() && !s.is_empty() => Val::Str(format!("-{s}")),
                    v => Val::Num(-v.num()),
                }
            }
            Expr::Assign(name, op, rhs) => {
                let r = self.eval(os, rhs)?;
                let v = match op.as_deref() {
                    None => r,
                    Some("||") => {
                        let cur = self.vars.get(name).cloned().unwrap_or(Val::Undef);
                        if cur.truthy() {
                            cur
                        } else {
                            r
                        }
                    }
                    Some(o) => {
                        let cur = self.vars.get(name).cloned().unwrap_or(Val::Undef);
                        binop(o, &cur, &r)
                    }
                };
                self.vars.insert(name.clone(), v.clone());
                v
            }
            Expr::Incr(name, d, pre) => {
                let cur = self.vars.get(name).cloned().unwrap_or(Val::Undef);
                let new = Val::Num(cur.num() + *d as f64);
                self.vars.insert(name.clone(), new.clone());
                if *pre {
                    new
                } else {
                    Val::Num(cur.num())
                }
            }
            Expr::Tern(c, a, b) => {
                if self.eval(os, c)?.truthy() {
                    self.eval(os, a)?
                } else {
                    self.eval(os, b)?
                }
            }
            Expr::Bin(op, a, b) => {
                let av = self.eval(os, a)?;
                match op.as_str() {
                    "&&" => {
                        if !av.truthy() {
                            return Ok(av);
                        }
                        return self.eval(os, b);
                    }
                    "||" => {
                        if av.truthy() {
                            return Ok(av);
                        }
                        return self.eval(os, b);
                    }
                    "//" => {
                        if av != Val::Undef {
                            return Ok(av);
                        }
                        return self.eval(os, b);
                    }
                    _ => {}
                }
                let bv = self.eval(os, b)?;
                if op == "/" && bv.num() == 0.0 {
                    return Err(Flow::Die(format!("Illegal division by zero at {} line {}.\n", self.script, self.line())));
                }
                if op == "%" && bv.num() as i64 == 0 {
                    return Err(Flow::Die(format!("Illegal modulus zero at {} line {}.\n", self.script, self.line())));
                }
                binop(op, &av, &bv)
            }
            Expr::List(v) => {
                let mut last = Val::Undef;
                for x in v {
                    last = self.eval(os, x)?;
                }
                last
            }
            Expr::Range(..) => Val::Undef,
            Expr::Match(target, re, icase, neg) => {
                let t = match target {
                    Some(t) => self.eval(os, t)?.str(),
                    None => self.vars.get("$_").map(|v| v.str()).unwrap_or_default(),
                };
                let m = kubesim_os::regex::Regex::new(re, true, *icase).map(|r| r.is_match(&t)).unwrap_or(false);
                if m != *neg {
                    Val::Num(1.0)
                } else {
                    Val::Str(String::new())
                }
            }
            Expr::ReadLine => {
                if self.stdin_pos < self.stdin_lines.len() {
                    self.stdin_pos += 1;
                    Val::Str(self.stdin_lines[self.stdin_pos - 1].clone())
                } else {
                    Val::Undef
                }
            }
            Expr::Call(name, args, to_stderr) => return self.call(os, name, args, *to_stderr),
        })
    }

    fn line(&self) -> usize {
        self.vars.get("__LINE__").map(|v| v.num() as usize).unwrap_or(1)
    }

    fn call(&mut self, os: &mut dyn Os, name: &str, args: &[Expr], to_stderr: bool) -> Result<Val, Flow> {
        let mut vals = Vec::new();
        for a in args {
            vals.extend(self.eval_list(os, a)?);
        }
        let first = || vals.first().cloned();
        let arg0 = |s: &Perl| first().unwrap_or_else(|| s.vars.get("$_").cloned().unwrap_or(Val::Undef));
        let n = |v: f64| Ok(Val::Num(v));
        match name {
            "print" | "say" => {
                let mut s: String =
                    if vals.is_empty() { self.vars.get("$_").map(|v| v.str()).unwrap_or_default() } else { vals.iter().map(|v| v.str()).collect() };
                if self.newline || name == "say" {
                    s.push('\n');
                }
                self.pending.push(if to_stderr { Action::Err(s) } else { Action::Out(s) });
                n(1.0)
            }
            "printf" | "sprintf" => {
                let fmt = vals.first().map(|v| v.str()).unwrap_or_default();
                let rest: Vec<String> = vals.iter().skip(1).map(|v| v.str()).collect();
                let (o, _, _) = kubesim_os::applets::printf::format(&fmt.replace('\\', "\\\\"), &rest);
                let s = String::from_utf8_lossy(&o).into_owned();
                if name == "sprintf" {
                    return Ok(Val::Str(s));
                }
                self.pending.push(if to_stderr { Action::Err(s) } else { Action::Out(s) });
                n(1.0)
            }
            "sleep" => {
                let secs = first().map(|v| v.num()).unwrap_or(f64::INFINITY);
                let ms = if secs.is_finite() { (secs.max(0.0).trunc() * 1000.0) as u64 } else { u64::MAX / 4 };
                self.pending.push(Action::Sleep(ms));
                n(secs.trunc())
            }
            "exit" => Err(Flow::Exit(first().map(|v| v.num() as i32).unwrap_or(0) & 0xff)),
            "die" | "warn" => {
                let mut m: String = vals.iter().map(|v| v.str()).collect();
                if m.is_empty() {
                    m = if name == "die" { "Died".into() } else { "Warning: something's wrong".into() };
                }
                if !m.ends_with('\n') {
                    m = format!("{m} at {} line {}.\n", self.script, self.line());
                }
                if name == "die" {
                    return Err(Flow::Die(m));
                }
                self.pending.push(Action::Err(m));
                n(1.0)
            }
            "bpi" => {
                let digits = first().map(|v| v.num()).unwrap_or(40.0).max(1.0) as usize;
                let cpu = pi::bpi_cpu_ms(digits);
                self.mem = self.mem.max(4_000_000 + digits as u64 * 2_000);
                self.pending.push(Action::Compute(cpu));
                Ok(Val::Str(pi::bpi(digits)))
            }
            "length" => Ok(match arg0(self) {
                Val::Undef => Val::Undef,
                v => Val::Num(v.str().chars().count() as f64),
            }),
            "uc" => Ok(Val::Str(arg0(self).str().to_uppercase())),
            "lc" => Ok(Val::Str(arg0(self).str().to_lowercase())),
            "ucfirst" | "lcfirst" => {
                let s = arg0(self).str();
                let mut c = s.chars();
                Ok(Val::Str(match c.next() {
                    Some(f) => format!("{}{}", if name == "ucfirst" { f.to_uppercase().to_string() } else { f.to_lowercase().to_string() }, c.as_str()),
                    None => String::new(),
                }))
            }
            "int" => n(arg0(self).num().trunc()),
            "abs" => n(arg0(self).num().abs()),
            "sqrt" => {
                let v = arg0(self).num();
                if v < 0.0 {
                    return Err(Flow::Die(format!("Can't take sqrt of {} at {} line {}.\n", fmt_num(v), self.script, self.line())));
                }
                n(v.sqrt())
            }
            "sin" => n(arg0(self).num().sin()),
            "cos" => n(arg0(self).num().cos()),
            "exp" => n(arg0(self).num().exp()),
            "log" => {
                let v = arg0(self).num();
                if v <= 0.0 {
                    return Err(Flow::Die(format!("Can't take log of {} at {} line {}.\n", fmt_num(v), self.script, self.line())));
                }
                n(v.ln())
            }
            "hex" => n(i64::from_str_radix(arg0(self).str().trim_start_matches("0x"), 16).unwrap_or(0) as f64),
            "oct" => n(i64::from_str_radix(arg0(self).str().trim_start_matches('0'), 8).unwrap_or(0) as f64),
            "chr" => Ok(Val::Str(char::from_u32(arg0(self).num() as u32).map(String::from).unwrap_or_default())),
            "ord" => n(arg0(self).str().chars().next().map(|c| c as u32 as f64).unwrap_or(0.0)),
            "join" => {
                let sep = vals.first().map(|v| v.str()).unwrap_or_default();
                Ok(Val::Str(vals.iter().skip(1).map(|v| v.str()).collect::<Vec<_>>().join(&sep)))
            }
            "reverse" => Ok(Val::Str(vals.iter().map(|v| v.str()).collect::<String>().chars().rev().collect())),
            "sort" => Ok(vals.last().cloned().unwrap_or(Val::Undef)),
            "index" => {
                let (s, t) = (vals.first().map(|v| v.str()).unwrap_or_default(), vals.get(1).map(|v| v.str()).unwrap_or_default());
                n(s.find(&t).map(|i| s[..i].chars().count() as f64).unwrap_or(-1.0))
            }
            "substr" => {
                let s: Vec<char> = vals.first().map(|v| v.str()).unwrap_or_default().chars().collect();
                let off = vals.get(1).map(|v| v.num() as i64).unwrap_or(0);
                let off = if off < 0 { (s.len() as i64 + off).max(0) } else { off.min(s.len() as i64) } as usize;
                let len = vals.get(2).map(|v| v.num() as i64).unwrap_or(s.len() as i64);
                let end = if len < 0 { (s.len() as i64 + len).max(off as i64) as usize } else { (off + len as usize).min(s.len()) };
                Ok(Val::Str(s[off..end].iter().collect()))
            }
            "time" => n(os.unix_time() as f64),
            "localtime" | "gmtime" => {
                let t = first().map(|v| v.num() as i64).unwrap_or(os.unix_time() as i64);
                Ok(Val::Str(kubesim_os::time::strftime("%a %b %e %H:%M:%S %Y", t, 0)))
            }
            "scalar" => Ok(first().unwrap_or(Val::Undef)),
            "defined" => Ok(if first().is_some_and(|v| v != Val::Undef) { Val::Num(1.0) } else { Val::Str(String::new()) }),
            "undef" => Ok(Val::Undef),
            "chomp" => {
                let cur = self.vars.get("$_").cloned().unwrap_or(Val::Undef).str();
                if let Some(s) = cur.strip_suffix('\n') {
                    self.vars.insert("$_".into(), Val::Str(s.to_string()));
                    return n(1.0);
                }
                n(0.0)
            }
            "rand" => {
                let m = first().map(|v| v.num()).filter(|&m| m != 0.0).unwrap_or(1.0);
                let r = (os.random_u64() >> 11) as f64 / (1u64 << 53) as f64;
                n(r * m)
            }
            "__LINE__" => n(self.line() as f64),
            _ => Ok(Val::Undef),
        }
    }
}

fn binop(op: &str, a: &Val, b: &Val) -> Val {
    let (x, y) = (a.num(), b.num());
    let bool_v = |c: bool| if c { Val::Num(1.0) } else { Val::Str(String::new()) };
    match op {
        "+" => Val::Num(x + y),
        "-" => Val::Num(x - y),
        "*" => Val::Num(x * y),
        "/" => Val::Num(x / y),
        "%" => {
            let (xi, yi) = (x as i64, y as i64);
            if yi == 0 {
                Val::Undef
            } else {
                let mut r = xi % yi;
                if r != 0 && (r < 0) != (yi < 0) {
                    r += yi;
                }
                Val::Num(r as f64)
            }
        }
        "**" => Val::Num(x.powf(y)),
        "." => Val::Str(a.str() + &b.str()),
        "x" => Val::Str(a.str().repeat((y.max(0.0) as usize).min(1 << 20))),
        "==" => bool_v(x == y),
        "!=" => bool_v(x != y),
        "<" => bool_v(x < y),
        ">" => bool_v(x > y),
        "<=" => bool_v(x <= y),
        ">=" => bool_v(x >= y),
        "<=>" => Val::Num(if x < y {
            -1.0
        } else if x > y {
            1.0
        } else {
            0.0
        }),
        "eq" => bool_v(a.str() == b.str()),
        "ne" => bool_v(a.str() != b.str()),
        "lt" => bool_v(a.str() < b.str()),
        "gt" => bool_v(a.str() > b.str()),
        "le" => bool_v(a.str() <= b.str()),
        "ge" => bool_v(a.str() >= b.str()),
        "cmp" => Val::Num(match a.str().cmp(&b.str()) {
            std::cmp::Ordering::Less => -1.0,
            std::cmp::Ordering::Equal => 0.0,
            std::cmp::Ordering::Greater => 1.0,
        }),
        _ => Val::Undef,
    }
}

impl Program for Perl {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match (self.phase.clone(), wake) {
            (Phase::Start, _) => self.start(os),
            (Phase::Done, _) => Step::Exit(0),
            (_, Wake::Signal(sig)) => match default_signal_exit(os, sig) {
                Some(c) => {
                    self.phase = Phase::Done;
                    Step::Exit(c)
                }
                None => match self.phase {
                    // Ignored (PID 1): carry on with what was interrupted.
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
        self.mem
    }
}
