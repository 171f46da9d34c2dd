//! A small `awk`: BEGIN/END, `/re/` and expression patterns, `print`/`printf` (with `>`/`>>`),
//! fields, NR/NF/FS/OFS/ORS/FILENAME, variables, associative arrays, `if/while/for/for-in`,
//! `next`/`exit`, and the string built-ins (length, substr, index, split, sub, gsub, match,
//! sprintf, toupper, tolower, int). Programs are bounded in steps.

use super::Ctx;
use crate::regex::Regex;
use std::collections::BTreeMap;

const MAX_STEPS: u64 = 20_000_000;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Re(String),
    Name(String),
    Func(String),
    Op(String),
    Nl,
    Eof,
}

#[derive(Clone, Debug)]
enum E {
    Num(f64),
    Str(String),
    Re(String),
    Var(String),
    Field(Box<E>),
    Index(String, Vec<E>),
    Assign(Box<E>, String, Box<E>),
    Cond(Box<E>, Box<E>, Box<E>),
    Bin(Box<E>, String, Box<E>),
    And(Box<E>, Box<E>),
    Or(Box<E>, Box<E>),
    Not(Box<E>),
    Neg(Box<E>),
    Match(Box<E>, Box<E>, bool),
    In(Vec<E>, String),
    Concat(Box<E>, Box<E>),
    Incr(Box<E>, f64, bool),
    Call(String, Vec<E>),
    Group(Box<E>),
}

#[derive(Clone, Debug)]
enum S {
    Print(Vec<E>, Option<(bool, E)>),
    Printf(Vec<E>, Option<(bool, E)>),
    Expr(E),
    If(E, Box<S>, Option<Box<S>>),
    While(E, Box<S>),
    Do(Box<S>, E),
    For(Option<Box<S>>, Option<E>, Option<Box<S>>, Box<S>),
    ForIn(String, String, Box<S>),
    Block(Vec<S>),
    Next,
    Exit(Option<E>),
    Break,
    Continue,
    Delete(String, Option<Vec<E>>),
    Getline,
}

#[derive(Clone, Debug)]
enum Pat {
    Begin,
    End,
    All,
    Expr(E),
    Range(E, E),
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out: Vec<Tok> = Vec::new();
    let regex_ok = |out: &Vec<Tok>| match out.last() {
        None => true,
        Some(Tok::Num(_)) | Some(Tok::Str(_)) | Some(Tok::Name(_)) | Some(Tok::Re(_)) => false,
        Some(Tok::Op(o)) => !matches!(o.as_str(), ")" | "]" | "$" | "++" | "--"),
        _ => true,
    };
    while i < c.len() {
        let ch = c[i];
        if ch == ' ' || ch == '\t' || ch == '\r' {
            i += 1;
            continue;
        }
        if ch == '\\' && c.get(i + 1) == Some(&'\n') {
            i += 2;
            continue;
        }
        if ch == '#' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if ch == '\n' || ch == ';' {
            out.push(if ch == '\n' { Tok::Nl } else { Tok::Op(";".into()) });
            i += 1;
            continue;
        }
        if ch.is_ascii_digit() || (ch == '.' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let st = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '.') {
                i += 1;
            }
            let t: String = c[st..i].iter().collect();
            let v = if let Some(h) = t.strip_prefix("0x") { i64::from_str_radix(h, 16).map(|x| x as f64).unwrap_or(0.0) } else { t.parse().unwrap_or(0.0) };
            out.push(Tok::Num(v));
            continue;
        }
        if ch.is_ascii_alphabetic() || ch == '_' {
            let st = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let t: String = c[st..i].iter().collect();
            if c.get(i) == Some(&'(') && BUILTINS.contains(&t.as_str()) {
                out.push(Tok::Func(t));
            } else {
                out.push(Tok::Name(t));
            }
            continue;
        }
        if ch == '"' {
            i += 1;
            let mut s = String::new();
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' && i + 1 < c.len() {
                    i += 1;
                    let e = match c[i] {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        '\\' => Some('\\'),
                        '"' => Some('"'),
                        '/' => Some('/'),
                        _ => None,
                    };
                    match e {
                        Some(ch) => s.push(ch),
                        None => {
                            s.push('\\');
                            s.push(c[i]);
                        }
                    }
                } else {
                    s.push(c[i]);
                }
                i += 1;
            }
            if i >= c.len() {
                return Err("non-terminated string".into());
            }
            i += 1;
            out.push(Tok::Str(s));
            continue;
        }
        if ch == '/' && regex_ok(&out) {
            i += 1;
            let mut s = String::new();
            while i < c.len() && c[i] != '/' {
                if c[i] == '\\' && i + 1 < c.len() {
                    if c[i + 1] == '/' {
                        s.push('/');
                    } else {
                        s.push('\\');
                        s.push(c[i + 1]);
                    }
                    i += 2;
                    continue;
                }
                s.push(c[i]);
                i += 1;
            }
            i += 1;
            out.push(Tok::Re(s));
            continue;
        }
        let three: String = c[i..(i + 3).min(c.len())].iter().collect();
        let two: String = c[i..(i + 2).min(c.len())].iter().collect();
        let ops2 = ["+=", "-=", "*=", "/=", "%=", "^=", "==", "!=", "<=", ">=", "&&", "||", "++", "--", ">>", "!~", "**"];
        if three == "**=" {
            out.push(Tok::Op("^=".into()));
            i += 3;
        } else if ops2.contains(&two.as_str()) {
            out.push(Tok::Op(if two == "**" { "^".into() } else { two }));
            i += 2;
        } else if "{}()[];,<>=+-*/%^!?:~$|".contains(ch) {
            out.push(Tok::Op(ch.to_string()));
            i += 1;
        } else {
            return Err(format!("syntax error at source line 1: unexpected '{ch}'"));
        }
    }
    out.push(Tok::Eof);
    Ok(out)
}

const BUILTINS: &[&str] = &[
    "length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "toupper", "tolower", "int", "sqrt", "exp", "log", "sin", "cos", "rand", "srand",
    "system", "close", "fflush",
];

struct P {
    t: Vec<Tok>,
    i: usize,
    depth: usize,
}

type R<T> = Result<T, String>;

impl P {
    fn peek(&self) -> &Tok {
        self.t.get(self.i).unwrap_or(&Tok::Eof)
    }
    fn is_op(&self, o: &str) -> bool {
        matches!(self.peek(), Tok::Op(x) if x == o)
    }
    fn eat(&mut self, o: &str) -> bool {
        if self.is_op(o) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, o: &str) -> R<()> {
        if self.eat(o) {
            Ok(())
        } else {
            Err(format!("syntax error: expected '{o}' near {:?}", self.peek()))
        }
    }
    fn nls(&mut self) {
        while matches!(self.peek(), Tok::Nl) || self.is_op(";") {
            self.i += 1;
        }
    }
    fn only_nl(&mut self) {
        while matches!(self.peek(), Tok::Nl) {
            self.i += 1;
        }
    }
    fn program(&mut self) -> R<Vec<(Pat, Option<Vec<S>>)>> {
        let mut items = Vec::new();
        loop {
            self.nls();
            if matches!(self.peek(), Tok::Eof) {
                break;
            }
            let pat = match self.peek().clone() {
                Tok::Name(n) if n == "BEGIN" => {
                    self.i += 1;
                    Pat::Begin
                }
                Tok::Name(n) if n == "END" => {
                    self.i += 1;
                    Pat::End
                }
                Tok::Name(n) if n == "function" => return Err("user-defined functions are not supported (kubesim)".into()),
                Tok::Op(o) if o == "{" => Pat::All,
                _ => {
                    let e = self.expr()?;
                    if self.eat(",") {
                        self.only_nl();
                        let e2 = self.expr()?;
                        Pat::Range(e, e2)
                    } else {
                        Pat::Expr(e)
                    }
                }
            };
            if self.is_op("{") {
                let b = self.block()?;
                items.push((pat, Some(b)));
            } else {
                items.push((pat, None));
            }
        }
        Ok(items)
    }
    fn block(&mut self) -> R<Vec<S>> {
        self.expect("{")?;
        let mut v = Vec::new();
        loop {
            self.nls();
            if self.eat("}") {
                break;
            }
            if matches!(self.peek(), Tok::Eof) {
                return Err("syntax error: unexpected end of program".into());
            }
            v.push(self.stmt()?);
        }
        Ok(v)
    }
    fn simple_or_block(&mut self) -> R<S> {
        self.only_nl();
        if self.is_op("{") {
            return Ok(S::Block(self.block()?));
        }
        self.stmt()
    }
    fn end_stmt(&mut self) {
        if self.is_op(";") {
            self.i += 1;
        }
    }
    fn redirect(&mut self) -> R<Option<(bool, E)>> {
        if self.eat(">") {
            return Ok(Some((false, self.concat()?)));
        }
        if self.eat(">>") {
            return Ok(Some((true, self.concat()?)));
        }
        Ok(None)
    }
    fn stmt(&mut self) -> R<S> {
        self.depth += 1;
        if self.depth > 200 {
            return Err("program too deeply nested".into());
        }
        let r = self.stmt_inner();
        self.depth -= 1;
        r
    }
    fn stmt_inner(&mut self) -> R<S> {
        if self.is_op("{") {
            return Ok(S::Block(self.block()?));
        }
        let name = match self.peek() {
            Tok::Name(n) => Some(n.clone()),
            _ => None,
        };
        match name.as_deref() {
            Some("print") | Some("printf") => {
                self.i += 1;
                let mut args = Vec::new();
                let paren = self.is_op("(") && {
                    // print (a, b) > "f": treat parenthesised list.
                    let save = self.i;
                    self.i += 1;
                    let mut depth = 1;
                    while depth > 0 && !matches!(self.peek(), Tok::Eof) {
                        if self.is_op("(") {
                            depth += 1;
                        } else if self.is_op(")") {
                            depth -= 1;
                        }
                        self.i += 1;
                    }
                    let simple = matches!(self.peek(), Tok::Nl | Tok::Eof) || self.is_op(";") || self.is_op("}") || self.is_op(">") || self.is_op(">>");
                    self.i = save;
                    simple
                };
                if paren {
                    self.i += 1;
                    if !self.is_op(")") {
                        args.push(self.expr_no_gt()?);
                        while self.eat(",") {
                            self.only_nl();
                            args.push(self.expr_no_gt()?);
                        }
                    }
                    self.expect(")")?;
                } else if !(matches!(self.peek(), Tok::Nl | Tok::Eof) || self.is_op(";") || self.is_op("}") || self.is_op(">") || self.is_op(">>")) {
                    args.push(self.expr_no_gt()?);
                    while self.eat(",") {
                        self.only_nl();
                        args.push(self.expr_no_gt()?);
                    }
                }
                let red = self.redirect()?;
                self.end_stmt();
                Ok(if name.as_deref() == Some("print") { S::Print(args, red) } else { S::Printf(args, red) })
            }
            Some("if") => {
                self.i += 1;
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                let t = self.simple_or_block()?;
                let save = self.i;
                self.nls();
                if matches!(self.peek(), Tok::Name(n) if n == "else") {
                    self.i += 1;
                    let e = self.simple_or_block()?;
                    return Ok(S::If(c, Box::new(t), Some(Box::new(e))));
                }
                self.i = save;
                Ok(S::If(c, Box::new(t), None))
            }
            Some("while") => {
                self.i += 1;
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                if self.is_op(";") {
                    self.i += 1;
                    return Ok(S::While(c, Box::new(S::Block(vec![]))));
                }
                let b = self.simple_or_block()?;
                Ok(S::While(c, Box::new(b)))
            }
            Some("do") => {
                self.i += 1;
                let b = self.simple_or_block()?;
                self.nls();
                if !matches!(self.peek(), Tok::Name(n) if n == "while") {
                    return Err("syntax error: expected while".into());
                }
                self.i += 1;
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                self.end_stmt();
                Ok(S::Do(Box::new(b), c))
            }
            Some("for") => {
                self.i += 1;
                self.expect("(")?;
                if let (Tok::Name(v), Tok::Name(kw), Tok::Name(arr)) =
                    (self.peek().clone(), self.t.get(self.i + 1).cloned().unwrap_or(Tok::Eof), self.t.get(self.i + 2).cloned().unwrap_or(Tok::Eof))
                {
                    if kw == "in" && matches!(self.t.get(self.i + 3), Some(Tok::Op(o)) if o == ")") {
                        self.i += 4;
                        let b = self.simple_or_block()?;
                        return Ok(S::ForIn(v, arr, Box::new(b)));
                    }
                }
                let init = if self.is_op(";") { None } else { Some(Box::new(S::Expr(self.expr()?))) };
                self.expect(";")?;
                self.only_nl();
                let cond = if self.is_op(";") { None } else { Some(self.expr()?) };
                self.expect(";")?;
                self.only_nl();
                let step = if self.is_op(")") { None } else { Some(Box::new(S::Expr(self.expr()?))) };
                self.expect(")")?;
                if self.is_op(";") {
                    self.i += 1;
                    return Ok(S::For(init, cond, step, Box::new(S::Block(vec![]))));
                }
                let b = self.simple_or_block()?;
                Ok(S::For(init, cond, step, Box::new(b)))
            }
            Some("next") => {
                self.i += 1;
                self.end_stmt();
                Ok(S::Next)
            }
            Some("exit") => {
                self.i += 1;
                let e = if matches!(self.peek(), Tok::Nl | Tok::Eof) || self.is_op(";") || self.is_op("}") { None } else { Some(self.expr()?) };
                self.end_stmt();
                Ok(S::Exit(e))
            }
            Some("break") => {
                self.i += 1;
                self.end_stmt();
                Ok(S::Break)
            }
            Some("continue") => {
                self.i += 1;
                self.end_stmt();
                Ok(S::Continue)
            }
            Some("getline") => {
                self.i += 1;
                self.end_stmt();
                Ok(S::Getline)
            }
            Some("delete") => {
                self.i += 1;
                let Tok::Name(a) = self.peek().clone() else { return Err("syntax error in delete".into()) };
                self.i += 1;
                let idx = if self.eat("[") {
                    let mut v = vec![self.expr()?];
                    while self.eat(",") {
                        v.push(self.expr()?);
                    }
                    self.expect("]")?;
                    Some(v)
                } else {
                    None
                };
                self.end_stmt();
                Ok(S::Delete(a, idx))
            }
            _ => {
                let e = self.expr()?;
                self.end_stmt();
                Ok(S::Expr(e))
            }
        }
    }
    fn expr(&mut self) -> R<E> {
        self.ternary(true)
    }
    fn expr_no_gt(&mut self) -> R<E> {
        self.ternary(false)
    }
    fn ternary(&mut self, gt: bool) -> R<E> {
        let c = self.or(gt)?;
        if self.eat("?") {
            self.only_nl();
            let a = self.ternary(gt)?;
            self.only_nl();
            self.expect(":")?;
            self.only_nl();
            let b = self.ternary(gt)?;
            return Ok(E::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        if let Tok::Op(op) = self.peek().clone() {
            if matches!(op.as_str(), "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^=") && matches!(c, E::Var(_) | E::Field(_) | E::Index(..)) {
                self.i += 1;
                self.only_nl();
                let r = self.ternary(gt)?;
                return Ok(E::Assign(Box::new(c), op, Box::new(r)));
            }
        }
        Ok(c)
    }
    fn or(&mut self, gt: bool) -> R<E> {
        let mut l = self.and(gt)?;
        while self.eat("||") {
            self.only_nl();
            let r = self.and(gt)?;
            l = E::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn and(&mut self, gt: bool) -> R<E> {
        let mut l = self.in_(gt)?;
        while self.eat("&&") {
            self.only_nl();
            let r = self.in_(gt)?;
            l = E::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn in_(&mut self, gt: bool) -> R<E> {
        let l = self.matchop(gt)?;
        if matches!(self.peek(), Tok::Name(n) if n == "in") {
            self.i += 1;
            let Tok::Name(a) = self.peek().clone() else { return Err("syntax error after in".into()) };
            self.i += 1;
            return Ok(E::In(vec![l], a));
        }
        Ok(l)
    }
    fn matchop(&mut self, gt: bool) -> R<E> {
        let mut l = self.cmp(gt)?;
        loop {
            if self.eat("~") {
                let r = self.cmp(gt)?;
                l = E::Match(Box::new(l), Box::new(r), false);
            } else if self.eat("!~") {
                let r = self.cmp(gt)?;
                l = E::Match(Box::new(l), Box::new(r), true);
            } else {
                return Ok(l);
            }
        }
    }
    fn cmp(&mut self, gt: bool) -> R<E> {
        let l = self.concat()?;
        for op in ["<", "<=", ">", ">=", "==", "!="] {
            if (op == ">" || op == ">=") && !gt {
                continue;
            }
            if self.is_op(op) {
                self.i += 1;
                let r = self.concat()?;
                return Ok(E::Bin(Box::new(l), op.into(), Box::new(r)));
            }
        }
        Ok(l)
    }
    fn starts_value(&self) -> bool {
        match self.peek() {
            Tok::Num(_) | Tok::Str(_) | Tok::Name(_) | Tok::Func(_) | Tok::Re(_) => !matches!(self.peek(), Tok::Name(n) if n == "in"),
            Tok::Op(o) => matches!(o.as_str(), "$" | "(" | "!" | "-" | "++" | "--"),
            _ => false,
        }
    }
    fn concat(&mut self) -> R<E> {
        let mut l = self.add()?;
        while self.starts_value() && !self.is_op("-") {
            let r = self.add()?;
            l = E::Concat(Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn add(&mut self) -> R<E> {
        let mut l = self.mul()?;
        loop {
            let op = if self.is_op("+") {
                "+"
            } else if self.is_op("-") {
                "-"
            } else {
                return Ok(l);
            };
            self.i += 1;
            let r = self.mul()?;
            l = E::Bin(Box::new(l), op.into(), Box::new(r));
        }
    }
    fn mul(&mut self) -> R<E> {
        let mut l = self.unary()?;
        loop {
            let op = if self.is_op("*") {
                "*"
            } else if self.is_op("/") {
                "/"
            } else if self.is_op("%") {
                "%"
            } else {
                return Ok(l);
            };
            self.i += 1;
            let r = self.unary()?;
            l = E::Bin(Box::new(l), op.into(), Box::new(r));
        }
    }
    fn unary(&mut self) -> R<E> {
        if self.eat("!") {
            return Ok(E::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(E::Neg(Box::new(self.unary()?)));
        }
        if self.eat("+") {
            return Ok(E::Bin(Box::new(E::Num(0.0)), "+".into(), Box::new(self.unary()?)));
        }
        self.pow()
    }
    fn pow(&mut self) -> R<E> {
        let b = self.postfix()?;
        if self.eat("^") {
            let e = self.unary()?;
            return Ok(E::Bin(Box::new(b), "^".into(), Box::new(e)));
        }
        Ok(b)
    }
    fn postfix(&mut self) -> R<E> {
        if self.eat("++") {
            let e = self.primary()?;
            return Ok(E::Incr(Box::new(e), 1.0, true));
        }
        if self.eat("--") {
            let e = self.primary()?;
            return Ok(E::Incr(Box::new(e), -1.0, true));
        }
        let e = self.primary()?;
        if matches!(e, E::Var(_) | E::Field(_) | E::Index(..)) {
            if self.eat("++") {
                return Ok(E::Incr(Box::new(e), 1.0, false));
            }
            if self.eat("--") {
                return Ok(E::Incr(Box::new(e), -1.0, false));
            }
        }
        Ok(e)
    }
    fn primary(&mut self) -> R<E> {
        self.depth += 1;
        if self.depth > 300 {
            return Err("expression too deeply nested".into());
        }
        let r = self.primary_inner();
        self.depth -= 1;
        r
    }
    fn primary_inner(&mut self) -> R<E> {
        let t = self.peek().clone();
        self.i += 1;
        match t {
            Tok::Num(n) => Ok(E::Num(n)),
            Tok::Str(s) => Ok(E::Str(s)),
            Tok::Re(r) => Ok(E::Re(r)),
            Tok::Op(o) if o == "$" => {
                let e = if self.eat("(") {
                    let e = self.expr()?;
                    self.expect(")")?;
                    e
                } else if self.eat("++") || self.eat("--") {
                    return Err("unsupported $++".into());
                } else {
                    self.primary()?
                };
                Ok(E::Field(Box::new(e)))
            }
            Tok::Op(o) if o == "(" => {
                let e = self.expr()?;
                if self.is_op(",") {
                    let mut v = vec![e];
                    while self.eat(",") {
                        v.push(self.expr()?);
                    }
                    self.expect(")")?;
                    if matches!(self.peek(), Tok::Name(n) if n == "in") {
                        self.i += 1;
                        let Tok::Name(a) = self.peek().clone() else { return Err("syntax error".into()) };
                        self.i += 1;
                        return Ok(E::In(v, a));
                    }
                    return Err("syntax error: unexpected ,".into());
                }
                self.expect(")")?;
                Ok(E::Group(Box::new(e)))
            }
            Tok::Op(o) if o == "-" => Ok(E::Neg(Box::new(self.primary()?))),
            Tok::Op(o) if o == "!" => Ok(E::Not(Box::new(self.primary()?))),
            Tok::Func(f) => {
                self.expect("(")?;
                let mut args = Vec::new();
                if !self.is_op(")") {
                    args.push(self.expr()?);
                    while self.eat(",") {
                        self.only_nl();
                        args.push(self.expr()?);
                    }
                }
                self.expect(")")?;
                Ok(E::Call(f, args))
            }
            Tok::Name(n) => {
                if n == "length" {
                    return Ok(E::Call("length".into(), vec![]));
                }
                if self.eat("[") {
                    let mut v = vec![self.expr()?];
                    while self.eat(",") {
                        v.push(self.expr()?);
                    }
                    self.expect("]")?;
                    return Ok(E::Index(n, v));
                }
                Ok(E::Var(n))
            }
            other => Err(format!("syntax error at source line 1 near {other:?}")),
        }
    }
}

#[derive(Clone, Debug)]
enum V {
    Num(f64),
    Str(String),
    StrNum(String),
}

fn fmt_num(n: f64) -> String {
    if n.is_finite() && n == n.trunc() && n.abs() < 1e16 {
        format!("{}", n as i64)
    } else {
        String::from_utf8_lossy(&super::printf::format("%.6g", &[n.to_string()]).0).into_owned()
    }
}

fn looks_numeric(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty() && t.parse::<f64>().is_ok() && !t.eq_ignore_ascii_case("nan") && !t.eq_ignore_ascii_case("inf") && !t.eq_ignore_ascii_case("infinity")
}

fn str_to_num(s: &str) -> f64 {
    let t = s.trim_start();
    let mut end = 0;
    let b = t.as_bytes();
    let mut seen_dot = false;
    let mut seen_e = false;
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_digit() || (i == 0 && (c == b'-' || c == b'+')) || (c == b'.' && !seen_dot && !seen_e) {
            if c == b'.' {
                seen_dot = true;
            }
            end = i + 1;
        } else if (c == b'e' || c == b'E') && !seen_e && end > 0 {
            seen_e = true;
            end = i + 1;
        } else if seen_e && (c == b'-' || c == b'+') && (b[i - 1] == b'e' || b[i - 1] == b'E') {
            end = i + 1;
        } else {
            break;
        }
    }
    let mut s = &t[..end];
    while !s.is_empty() && s.parse::<f64>().is_err() {
        s = &s[..s.len() - 1];
    }
    s.parse().unwrap_or(0.0)
}

impl V {
    fn num(&self) -> f64 {
        match self {
            V::Num(n) => *n,
            V::Str(s) | V::StrNum(s) => str_to_num(s),
        }
    }
    fn str(&self) -> String {
        match self {
            V::Num(n) => fmt_num(*n),
            V::Str(s) | V::StrNum(s) => s.clone(),
        }
    }
    fn truthy(&self) -> bool {
        match self {
            V::Num(n) => *n != 0.0,
            V::Str(s) => !s.is_empty(),
            V::StrNum(s) => {
                if looks_numeric(s) {
                    str_to_num(s) != 0.0
                } else {
                    !s.is_empty()
                }
            }
        }
    }
    fn is_numeric(&self) -> bool {
        match self {
            V::Num(_) => true,
            V::StrNum(s) => looks_numeric(s),
            V::Str(_) => false,
        }
    }
}

enum Flow {
    Normal,
    Next,
    Exit,
    Break,
    Continue,
}

struct Interp<'a, 'b> {
    c: &'a mut Ctx<'b>,
    vars: BTreeMap<String, V>,
    arrays: BTreeMap<String, BTreeMap<String, V>>,
    fields: Vec<String>,
    record: String,
    out: Vec<u8>,
    steps: u64,
    exit_code: i32,
    files: BTreeMap<String, Vec<u8>>,
    re_cache: BTreeMap<String, Regex>,
    range_on: Vec<bool>,
}

impl Interp<'_, '_> {
    fn var(&self, n: &str) -> V {
        self.vars.get(n).cloned().unwrap_or(V::StrNum(String::new()))
    }
    fn set_var(&mut self, n: &str, v: V) {
        if n == "NF" {
            let nf = v.num().max(0.0) as usize;
            self.fields.resize(nf, String::new());
            self.rebuild();
        }
        self.vars.insert(n.to_string(), v);
    }
    fn fs(&self) -> String {
        self.var("FS").str()
    }
    fn split_record(&mut self) {
        let fs = self.fs();
        self.fields = split_fields(&self.record, &fs, &mut self.re_cache);
        self.vars.insert("NF".into(), V::Num(self.fields.len() as f64));
    }
    fn rebuild(&mut self) {
        let ofs = self.var("OFS").str();
        self.record = self.fields.join(&ofs);
    }
    fn regex(&mut self, src: &str) -> Option<Regex> {
        if let Some(r) = self.re_cache.get(src) {
            return Some(r.clone());
        }
        let r = Regex::new(src, true, false).ok()?;
        if self.re_cache.len() < 256 {
            self.re_cache.insert(src.to_string(), r.clone());
        }
        Some(r)
    }
    fn field(&self, i: usize) -> V {
        if i == 0 {
            V::StrNum(self.record.clone())
        } else {
            V::StrNum(self.fields.get(i - 1).cloned().unwrap_or_default())
        }
    }
    fn set_field(&mut self, i: usize, v: String) {
        if i == 0 {
            self.record = v;
            self.split_record();
            return;
        }
        if i > 100_000 {
            return;
        }
        if self.fields.len() < i {
            self.fields.resize(i, String::new());
        }
        self.fields[i - 1] = v;
        self.vars.insert("NF".into(), V::Num(self.fields.len() as f64));
        self.rebuild();
    }
    fn key(&mut self, idx: &[E]) -> R<String> {
        let subsep = self.vars.get("SUBSEP").map(|v| v.str()).unwrap_or_else(|| "\x1c".into());
        let mut parts = Vec::new();
        for e in idx {
            parts.push(self.eval(e)?.str());
        }
        Ok(parts.join(&subsep))
    }
    fn assign_to(&mut self, target: &E, v: V) -> R<()> {
        match target {
            E::Var(n) => self.set_var(n, v),
            E::Field(e) => {
                let i = self.eval(e)?.num().max(0.0) as usize;
                self.set_field(i, v.str());
            }
            E::Index(a, idx) => {
                let k = self.key(idx)?;
                self.arrays.entry(a.clone()).or_default().insert(k, v);
            }
            E::Group(e) => return self.assign_to(e, v),
            _ => return Err("assignment to non-lvalue".into()),
        }
        Ok(())
    }
    fn eval(&mut self, e: &E) -> R<V> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err("program too long-running (kubesim step limit)".into());
        }
        Ok(match e {
            E::Num(n) => V::Num(*n),
            E::Str(s) => V::Str(s.clone()),
            E::Re(r) => {
                let rec = self.record.clone();
                V::Num(self.regex(r).is_some_and(|re| re.is_match(&rec)) as i32 as f64)
            }
            E::Var(n) => self.var(n),
            E::Group(e) => self.eval(e)?,
            E::Field(e) => {
                let i = self.eval(e)?.num();
                if i < 0.0 {
                    return Err(format!("trying to access out of range field {}", i as i64));
                }
                self.field(i as usize)
            }
            E::Index(a, idx) => {
                let k = self.key(idx)?;
                self.arrays.entry(a.clone()).or_default().entry(k).or_insert(V::StrNum(String::new())).clone()
            }
            E::In(idx, a) => {
                let k = self.key(idx)?;
                V::Num(self.arrays.get(a).is_some_and(|m| m.contains_key(&k)) as i32 as f64)
            }
            E::Assign(t, op, r) => {
                let rv = self.eval(r)?;
                let v = if op == "=" {
                    match rv {
                        V::Str(s) => V::Str(s),
                        V::StrNum(s) => V::StrNum(s),
                        n => n,
                    }
                } else {
                    let cur = self.eval(t)?.num();
                    V::Num(arith(&op[..1], cur, rv.num())?)
                };
                self.assign_to(t, v.clone())?;
                v
            }
            E::Incr(t, d, pre) => {
                let cur = self.eval(t)?.num();
                self.assign_to(t, V::Num(cur + d))?;
                V::Num(if *pre { cur + d } else { cur })
            }
            E::Cond(c, a, b) => {
                if self.eval(c)?.truthy() {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            E::And(a, b) => V::Num((self.eval(a)?.truthy() && self.eval(b)?.truthy()) as i32 as f64),
            E::Or(a, b) => V::Num((self.eval(a)?.truthy() || self.eval(b)?.truthy()) as i32 as f64),
            E::Not(a) => V::Num((!self.eval(a)?.truthy()) as i32 as f64),
            E::Neg(a) => V::Num(-self.eval(a)?.num()),
            E::Concat(a, b) => {
                let mut s = self.eval(a)?.str();
                s.push_str(&self.eval(b)?.str());
                if s.len() > 64 << 20 {
                    return Err("string too long".into());
                }
                V::Str(s)
            }
            E::Match(l, r, neg) => {
                let s = self.eval(l)?.str();
                let pat = match &**r {
                    E::Re(p) => p.clone(),
                    other => self.eval(other)?.str(),
                };
                let m = self.regex(&pat).is_some_and(|re| re.is_match(&s));
                V::Num((m != *neg) as i32 as f64)
            }
            E::Bin(a, op, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                match op.as_str() {
                    "<" | "<=" | ">" | ">=" | "==" | "!=" => {
                        let ord = if x.is_numeric() && y.is_numeric() {
                            x.num().partial_cmp(&y.num()).unwrap_or(std::cmp::Ordering::Equal)
                        } else {
                            x.str().cmp(&y.str())
                        };
                        use std::cmp::Ordering::*;
                        let t = match op.as_str() {
                            "<" => ord == Less,
                            "<=" => ord != Greater,
                            ">" => ord == Greater,
                            ">=" => ord != Less,
                            "==" => ord == Equal,
                            _ => ord != Equal,
                        };
                        V::Num(t as i32 as f64)
                    }
                    _ => V::Num(arith(op, x.num(), y.num())?),
                }
            }
            E::Call(f, args) => self.call(f, args)?,
        })
    }
    fn call(&mut self, f: &str, args: &[E]) -> R<V> {
        let s = |i: &mut Self, k: usize| -> R<String> {
            match args.get(k) {
                Some(e) => Ok(i.eval(e)?.str()),
                None => Ok(i.record.clone()),
            }
        };
        Ok(match f {
            "length" => {
                if let Some(E::Var(n)) = args.first() {
                    if let Some(a) = self.arrays.get(n) {
                        return Ok(V::Num(a.len() as f64));
                    }
                }
                V::Num(s(self, 0)?.chars().count() as f64)
            }
            "substr" => {
                let st = s(self, 0)?;
                let chars: Vec<char> = st.chars().collect();
                let m = args.get(1).map(|e| self.eval(e)).transpose()?.map(|v| v.num()).unwrap_or(1.0);
                let n = args.get(2).map(|e| self.eval(e)).transpose()?.map(|v| v.num());
                let start = m.round();
                let end = match n {
                    Some(n) => start + n.round(),
                    None => f64::MAX,
                };
                let a = start.max(1.0) as usize;
                let b = end.min(chars.len() as f64 + 1.0);
                if b <= a as f64 {
                    V::Str(String::new())
                } else {
                    V::Str(chars[a - 1..(b as usize - 1).min(chars.len())].iter().collect())
                }
            }
            "index" => {
                let h = s(self, 0)?;
                let n = s(self, 1)?;
                V::Num(h.find(&n).map(|b| h[..b].chars().count() + 1).unwrap_or(0) as f64)
            }
            "split" => {
                let st = s(self, 0)?;
                let Some(E::Var(arr)) = args.get(1) else { return Err("split: second argument must be an array".into()) };
                let sep = match args.get(2) {
                    Some(E::Re(r)) => r.clone(),
                    Some(e) => self.eval(e)?.str(),
                    None => self.fs(),
                };
                let parts = split_fields(&st, &sep, &mut self.re_cache);
                let m: BTreeMap<String, V> = parts.iter().enumerate().map(|(i, p)| ((i + 1).to_string(), V::StrNum(p.clone()))).collect();
                let n = m.len();
                self.arrays.insert(arr.clone(), m);
                V::Num(n as f64)
            }
            "sub" | "gsub" => {
                let pat = match args.first() {
                    Some(E::Re(r)) => r.clone(),
                    Some(e) => self.eval(e)?.str(),
                    None => return Err("sub: missing arguments".into()),
                };
                let rep = s(self, 1)?;
                let target = args.get(2).cloned().unwrap_or(E::Field(Box::new(E::Num(0.0))));
                let cur = self.eval(&target)?.str();
                let Some(re) = self.regex(&pat) else { return Ok(V::Num(0.0)) };
                let (new, n) = awk_sub(&re, &cur, &rep, f == "gsub");
                if n > 0 {
                    self.assign_to(&target, V::Str(new))?;
                }
                V::Num(n as f64)
            }
            "match" => {
                let st = s(self, 0)?;
                let pat = match args.get(1) {
                    Some(E::Re(r)) => r.clone(),
                    Some(e) => self.eval(e)?.str(),
                    None => String::new(),
                };
                let chars: Vec<char> = st.chars().collect();
                let (start, len) = match self.regex(&pat).and_then(|re| re.find_chars(&chars, 0, true)).and_then(|c| c[0]) {
                    Some((a, b)) => (a + 1, b - a),
                    None => (0, usize::MAX),
                };
                self.vars.insert("RSTART".into(), V::Num(start as f64));
                self.vars.insert("RLENGTH".into(), V::Num(if len == usize::MAX { -1.0 } else { len as f64 }));
                V::Num(start as f64)
            }
            "sprintf" => {
                let mut vals = Vec::new();
                for e in args {
                    vals.push(self.eval(e)?);
                }
                V::Str(sprintf(&vals))
            }
            "toupper" => V::Str(s(self, 0)?.to_uppercase()),
            "tolower" => V::Str(s(self, 0)?.to_lowercase()),
            "int" => V::Num(self.eval(args.first().unwrap_or(&E::Num(0.0)))?.num().trunc()),
            "sqrt" => V::Num(self.eval(args.first().unwrap_or(&E::Num(0.0)))?.num().sqrt()),
            "exp" => V::Num(self.eval(args.first().unwrap_or(&E::Num(0.0)))?.num().exp()),
            "log" => V::Num(self.eval(args.first().unwrap_or(&E::Num(0.0)))?.num().ln()),
            "sin" => V::Num(self.eval(args.first().unwrap_or(&E::Num(0.0)))?.num().sin()),
            "cos" => V::Num(self.eval(args.first().unwrap_or(&E::Num(0.0)))?.num().cos()),
            "rand" => V::Num((self.c.os.random_u64() >> 11) as f64 / (1u64 << 53) as f64),
            "srand" | "close" | "fflush" => V::Num(0.0),
            "system" => return Err("system() is not supported (kubesim)".into()),
            other => return Err(format!("calling undefined function {other}")),
        })
    }
    fn emit(&mut self, data: &[u8], red: &Option<(bool, E)>) -> R<()> {
        match red {
            None => self.out.extend_from_slice(data),
            Some((append, e)) => {
                let f = self.eval(e)?.str();
                let first = !self.files.contains_key(&f);
                let buf = self.files.entry(f.clone()).or_default();
                if first && !append {
                    buf.clear();
                    let p = self.c.path(&f);
                    let _ = crate::sys::write_file(self.c.os, &p, b"", crate::fs::WriteMode::Truncate);
                }
                let p = self.c.path(&f);
                let _ = crate::sys::write_file(self.c.os, &p, data, crate::fs::WriteMode::Append);
            }
        }
        if self.out.len() > 1 << 20 {
            let d = std::mem::take(&mut self.out);
            if !self.c.out(&d) {
                return Err(String::new());
            }
        }
        Ok(())
    }
    fn exec(&mut self, s: &S) -> R<Flow> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err("program too long-running (kubesim step limit)".into());
        }
        match s {
            S::Print(args, red) => {
                let ofs = self.var("OFS").str();
                let ors = self.var("ORS").str();
                let line = if args.is_empty() {
                    self.record.clone()
                } else {
                    let mut parts = Vec::new();
                    for a in args {
                        let v = self.eval(a)?;
                        parts.push(match v {
                            V::Num(n) => {
                                if n == n.trunc() && n.abs() < 1e16 {
                                    format!("{}", n as i64)
                                } else {
                                    let ofmt = self.var("OFMT").str();
                                    String::from_utf8_lossy(&super::printf::format(&ofmt, &[n.to_string()]).0).into_owned()
                                }
                            }
                            other => other.str(),
                        });
                    }
                    parts.join(&ofs)
                };
                self.emit(format!("{line}{ors}").as_bytes(), red)?;
            }
            S::Printf(args, red) => {
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.eval(a)?);
                }
                let s = sprintf(&vals);
                self.emit(s.as_bytes(), red)?;
            }
            S::Expr(e) => {
                self.eval(e)?;
            }
            S::If(c, t, e) => {
                if self.eval(c)?.truthy() {
                    return self.exec(t);
                } else if let Some(e) = e {
                    return self.exec(e);
                }
            }
            S::While(c, b) => {
                while self.eval(c)?.truthy() {
                    match self.exec(b)? {
                        Flow::Break => break,
                        Flow::Next => return Ok(Flow::Next),
                        Flow::Exit => return Ok(Flow::Exit),
                        _ => {}
                    }
                }
            }
            S::Do(b, c) => loop {
                match self.exec(b)? {
                    Flow::Break => break,
                    Flow::Next => return Ok(Flow::Next),
                    Flow::Exit => return Ok(Flow::Exit),
                    _ => {}
                }
                if !self.eval(c)?.truthy() {
                    break;
                }
            },
            S::For(init, cond, step, body) => {
                if let Some(i) = init {
                    self.exec(i)?;
                }
                loop {
                    if let Some(c) = cond {
                        if !self.eval(c)?.truthy() {
                            break;
                        }
                    }
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Next => return Ok(Flow::Next),
                        Flow::Exit => return Ok(Flow::Exit),
                        _ => {}
                    }
                    if let Some(s) = step {
                        self.exec(s)?;
                    }
                }
            }
            S::ForIn(v, arr, body) => {
                let keys: Vec<String> = self.arrays.get(arr).map(|m| m.keys().cloned().collect()).unwrap_or_default();
                for k in keys {
                    self.set_var(v, V::StrNum(k));
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Next => return Ok(Flow::Next),
                        Flow::Exit => return Ok(Flow::Exit),
                        _ => {}
                    }
                }
            }
            S::Block(v) => {
                for s in v {
                    match self.exec(s)? {
                        Flow::Normal => {}
                        other => return Ok(other),
                    }
                }
            }
            S::Next => return Ok(Flow::Next),
            S::Exit(e) => {
                if let Some(e) = e {
                    self.exit_code = self.eval(e)?.num() as i32;
                }
                return Ok(Flow::Exit);
            }
            S::Break => return Ok(Flow::Break),
            S::Continue => return Ok(Flow::Continue),
            S::Delete(a, idx) => match idx {
                Some(i) => {
                    let k = self.key(i)?;
                    if let Some(m) = self.arrays.get_mut(a) {
                        m.remove(&k);
                    }
                }
                None => {
                    self.arrays.remove(a);
                }
            },
            S::Getline => {}
        }
        Ok(Flow::Normal)
    }
}

fn arith(op: &str, a: f64, b: f64) -> R<f64> {
    Ok(match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" => {
            if b == 0.0 {
                return Err("division by zero".into());
            }
            a / b
        }
        "%" => {
            if b == 0.0 {
                return Err("division by zero in %".into());
            }
            a % b
        }
        "^" => a.powf(b),
        _ => 0.0,
    })
}

fn awk_sub(re: &Regex, s: &str, rep: &str, global: bool) -> (String, usize) {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut pos = 0;
    let mut n = 0;
    let mut last = 0;
    while pos <= chars.len() {
        let Some(caps) = re.find_chars(&chars, pos, pos == 0) else { break };
        let Some((a, b)) = caps[0] else { break };
        out.extend(&chars[last..a]);
        let mut it = rep.chars().peekable();
        while let Some(ch) = it.next() {
            match ch {
                '\\' if it.peek() == Some(&'&') => {
                    it.next();
                    out.push('&');
                }
                '&' => out.extend(&chars[a..b]),
                c => out.push(c),
            }
        }
        n += 1;
        last = b;
        if b == a {
            if a < chars.len() {
                out.push(chars[a]);
            }
            last = a + 1;
            pos = a + 1;
        } else {
            pos = b;
        }
        if !global {
            break;
        }
    }
    if last < chars.len() {
        out.extend(&chars[last..]);
    }
    (out, n)
}

fn sprintf(vals: &[V]) -> String {
    let Some(fmt) = vals.first() else { return String::new() };
    let args: Vec<String> = vals[1..]
        .iter()
        .map(|v| match v {
            V::Num(n) => {
                if *n == n.trunc() && n.abs() < 1e16 {
                    format!("{}", *n as i64)
                } else {
                    n.to_string()
                }
            }
            other => other.str(),
        })
        .collect();
    // printf(1) semantics, minus format reuse.
    let f = fmt.str();
    let needed = count_convs(&f);
    let args = if args.len() > needed { args[..needed].to_vec() } else { args };
    let (out, _, _) = super::printf::format(&f, &args);
    let mut s = String::from_utf8_lossy(&out).into_owned();
    if needed == 0 && !vals[1..].is_empty() {
        s = String::from_utf8_lossy(&super::printf::format(&f, &[]).0).into_owned();
    }
    s
}

fn count_convs(f: &str) -> usize {
    let b: Vec<char> = f.chars().collect();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == '%' {
            if b.get(i + 1) == Some(&'%') {
                i += 2;
                continue;
            }
            n += 1;
        }
        i += 1;
    }
    n
}

fn split_fields(s: &str, fs: &str, cache: &mut BTreeMap<String, Regex>) -> Vec<String> {
    if fs == " " {
        return s.split_whitespace().map(str::to_string).collect();
    }
    if s.is_empty() {
        return Vec::new();
    }
    if fs.chars().count() == 1 && fs != "\\" {
        return s.split(fs).map(str::to_string).collect();
    }
    let re = match cache.get(fs) {
        Some(r) => r.clone(),
        None => match Regex::new(fs, true, false) {
            Ok(r) => {
                cache.insert(fs.to_string(), r.clone());
                r
            }
            Err(_) => return vec![s.to_string()],
        },
    };
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut last = 0;
    let mut pos = 0;
    while pos < chars.len() {
        match re.find_chars(&chars, pos, pos == 0).and_then(|c| c[0]) {
            Some((a, b)) if b > a => {
                out.push(chars[last..a].iter().collect());
                last = b;
                pos = b;
            }
            Some((a, _)) => pos = a + 1,
            None => break,
        }
    }
    out.push(chars[last..].iter().collect());
    out
}

pub(crate) fn awk(c: &mut Ctx) -> i32 {
    let args = c.args.clone();
    let mut fs = " ".to_string();
    let mut assigns = Vec::new();
    let mut prog: Option<String> = None;
    let mut files = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-F" {
            i += 1;
            fs = args.get(i).cloned().unwrap_or_default();
        } else if let Some(f) = a.strip_prefix("-F") {
            fs = f.to_string();
        } else if a == "-v" {
            i += 1;
            if let Some(v) = args.get(i) {
                assigns.push(v.clone());
            }
        } else if a == "-f" {
            i += 1;
            if let Some(f) = args.get(i).cloned() {
                match c.read(&f) {
                    Ok(d) => prog = Some(String::from_utf8_lossy(&d).into_owned()),
                    Err(e) => {
                        c.err(&format!("can't open file {f}: {}", e.strerror()));
                        return 2;
                    }
                }
            }
        } else if a == "--" {
        } else if prog.is_none() {
            prog = Some(a.clone());
        } else {
            files.push(a.clone());
        }
        i += 1;
    }
    if fs == "t" || fs == "\\t" {
        fs = "\t".into();
    }
    let Some(src) = prog else {
        c.err_raw("usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]\n");
        return 2;
    };
    let toks = match lex(&src) {
        Ok(t) => t,
        Err(e) => {
            c.err(&e);
            return 2;
        }
    };
    let mut p = P { t: toks, i: 0, depth: 0 };
    let items = match p.program() {
        Ok(v) => v,
        Err(e) => {
            c.err(&e);
            return 2;
        }
    };
    let mut it = Interp {
        c,
        vars: BTreeMap::new(),
        arrays: BTreeMap::new(),
        fields: Vec::new(),
        record: String::new(),
        out: Vec::new(),
        steps: 0,
        exit_code: 0,
        files: BTreeMap::new(),
        re_cache: BTreeMap::new(),
        range_on: vec![false; items.len()],
    };
    for (k, v) in [("FS", fs.as_str()), ("OFS", " "), ("ORS", "\n"), ("OFMT", "%.6g"), ("CONVFMT", "%.6g"), ("SUBSEP", "\x1c")] {
        it.vars.insert(k.into(), V::Str(v.into()));
    }
    it.vars.insert("NR".into(), V::Num(0.0));
    let env: BTreeMap<String, V> = it.c.env.iter().map(|(k, v)| (k.clone(), V::StrNum(v.clone()))).collect();
    it.arrays.insert("ENVIRON".into(), env);
    for a in assigns {
        if let Some((k, v)) = a.split_once('=') {
            it.vars.insert(k.into(), V::StrNum(v.into()));
        }
    }
    let result = run_awk(&mut it, &items, &files);
    let out = std::mem::take(&mut it.out);
    it.c.out(&out);
    match result {
        Ok(()) => it.exit_code,
        Err(e) => {
            if !e.is_empty() {
                it.c.err(&e);
            }
            2
        }
    }
}

fn run_awk(it: &mut Interp, items: &[(Pat, Option<Vec<S>>)], files: &[String]) -> R<()> {
    let mut exited = false;
    for (p, body) in items {
        if let (Pat::Begin, Some(b)) = (p, body) {
            if let Flow::Exit = it.exec(&S::Block(b.clone()))? {
                exited = true;
                break;
            }
        }
    }
    let has_main = items.iter().any(|(p, _)| !matches!(p, Pat::Begin));
    if !exited && has_main {
        let inputs: Vec<(String, Vec<u8>)> = if files.is_empty() {
            vec![("".into(), it.c.stdin.to_vec())]
        } else {
            let mut v = Vec::new();
            for f in files {
                if let Some((k, val)) = f.split_once('=').filter(|(k, _)| crate::sh::parse::valid_name(k)) {
                    it.vars.insert(k.into(), V::StrNum(val.into()));
                    continue;
                }
                match it.c.read(f) {
                    Ok(d) => v.push((f.clone(), d)),
                    Err(e) => {
                        let f2 = f.clone();
                        it.c.err(&format!("can't open file {f2}: {}", e.strerror()));
                        it.exit_code = 2;
                    }
                }
            }
            v
        };
        let mut nr = 0u64;
        'files: for (name, data) in inputs {
            it.vars.insert("FILENAME".into(), V::Str(name));
            let text = String::from_utf8_lossy(&data).into_owned();
            let mut fnr = 0u64;
            for line in text.lines() {
                nr += 1;
                fnr += 1;
                it.vars.insert("NR".into(), V::Num(nr as f64));
                it.vars.insert("FNR".into(), V::Num(fnr as f64));
                it.record = line.to_string();
                it.split_record();
                for (k, (p, body)) in items.iter().enumerate() {
                    let sel = match p {
                        Pat::Begin | Pat::End => continue,
                        Pat::All => true,
                        Pat::Expr(e) => it.eval(e)?.truthy(),
                        Pat::Range(a, b) => {
                            if it.range_on[k] {
                                if it.eval(b)?.truthy() {
                                    it.range_on[k] = false;
                                }
                                true
                            } else if it.eval(a)?.truthy() {
                                it.range_on[k] = !it.eval(b)?.truthy();
                                true
                            } else {
                                false
                            }
                        }
                    };
                    if !sel {
                        continue;
                    }
                    let flow = match body {
                        Some(b) => it.exec(&S::Block(b.clone()))?,
                        None => it.exec(&S::Print(vec![], None))?,
                    };
                    match flow {
                        Flow::Next => break,
                        Flow::Exit => {
                            exited = true;
                            break 'files;
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let _ = exited;
    for (p, body) in items {
        if let (Pat::End, Some(b)) = (p, body) {
            if let Flow::Exit = it.exec(&S::Block(b.clone()))? {
                break;
            }
        }
    }
    Ok(())
}
