//! Go `text/template`, as kubectl's go-template printer runs it
//! (staging/src/k8s.io/cli-runtime/pkg/printers/template.go): the template is named "output",
//! the data is the object as apimachinery's JSON decoder gives it (`map[string]interface{}` with
//! int64 and float64 numbers), `missingkey=default` unless `--allow-missing-template-keys=false`
//! (`missingkey=error`), and kubectl's extra functions `exists` and `base64decode` are defined.
//!
//! Implemented after golang.org/x text/template (lex.go, parse.go, exec.go, funcs.go) and fmt:
//! text and actions with `{{-`/`-}}` trimming and comments; pipelines with declarations
//! (`$x :=`), assignments (`$x =`), parenthesised pipelines and field chains; string, raw
//! string, character, number, boolean and nil literals; `if`/`else if`/`else`, `range` (lists,
//! maps in key order, integers; `$i, $v :=`; `else`; `break`/`continue`), `with`/`else with`,
//! `define`/`template`/`block`; the builtins and, or, not, len, index, slice, print, printf,
//! println, eq, ne, lt, le, gt, ge, html, js, urlquery; Go's `%v` rendering of values and
//! `fmt.Sprintf` verbs (v, d, s, q, t, T, b, o, O, x, X, c, U, e, E, f, F, g, G) with flags,
//! width and precision. Errors carry Go's messages and `output:LINE:COL` positions.
//!
//! Deviation: Go's goroutine stacks grow, Rust's (and wasm's) do not, so nesting is capped
//! lower than Go caps it: at parse, nested control bodies and parenthesised pipelines together
//! at [`MAX_PARSE_DEPTH`] (Go caps parentheses alone at 10000, `max expression depth
//! exceeded`); at execution, template invocations and nested if/with/range walks together at
//! [`MAX_EXEC_DEPTH`] (Go counts invocations alone, up to 100000: `exceeded maximum template
//! depth`). The messages are Go's, with these numbers. A run also stops after
//! [`MAX_RANGE_ITERATIONS`] range iterations in all (`{{range 9223372036854775807}}` would spin
//! kubectl forever; the simulator answers with an error instead).

use serde_json::Value;
use std::collections::BTreeMap;
use std::rc::Rc;

// ---------------------------------------------------------------------------------------------
// Values

/// A template value: what a `reflect.Value` holds for JSON data and template constants.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// The zero reflect.Value (a missing map key): prints `<no value>`.
    Invalid,
    /// A nil interface (JSON null): `<nil>` inside containers.
    Nil,
    /// bool.
    Bool(bool),
    /// int (template constants, len).
    Int(i64),
    /// int64 (JSON integers).
    I64(i64),
    /// uint8 (indexing a string).
    U8(u8),
    /// float64.
    Float(f64),
    /// string.
    Str(Rc<str>),
    /// `[]interface{}`.
    List(Rc<Vec<Val>>),
    /// `map[string]interface{}`.
    Map(Rc<BTreeMap<String, Val>>),
}

impl Val {
    /// Converts JSON as apimachinery's json.Unmarshal into interface{} does (integers are int64).
    pub fn from_json(value: &Value) -> Val {
        match value {
            Value::Null => Val::Nil,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Val::I64(i),
                None => Val::Float(n.as_f64().unwrap_or(0.0)),
            },
            Value::String(s) => Val::Str(Rc::from(s.as_str())),
            Value::Array(items) => Val::List(Rc::new(items.iter().map(Val::from_json).collect())),
            Value::Object(map) => Val::Map(Rc::new(map.iter().map(|(k, v)| (k.clone(), Val::from_json(v))).collect())),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Val::Invalid | Val::Nil => "<nil>",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::I64(_) => "int64",
            Val::U8(_) => "uint8",
            Val::Float(_) => "float64",
            Val::Str(_) => "string",
            Val::List(_) => "[]interface {}",
            Val::Map(_) => "map[string]interface {}",
        }
    }

    fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) | Val::I64(i) => Some(*i),
            Val::U8(u) => Some(*u as i64),
            _ => None,
        }
    }

    /// text/template's isTrue.
    fn truth(&self) -> bool {
        match self {
            Val::Invalid | Val::Nil => false,
            Val::Bool(b) => *b,
            Val::Int(i) | Val::I64(i) => *i != 0,
            Val::U8(u) => *u != 0,
            Val::Float(f) => *f != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::List(l) => !l.is_empty(),
            Val::Map(m) => !m.is_empty(),
        }
    }
}

/// A value and whether it is still wrapped in an `interface{}` (an element of JSON data): Go
/// names such receivers `interface {}` in field errors, and a wrapped nil is a nil interface.
#[derive(Clone, Debug)]
struct V {
    val: Val,
    boxed: bool,
}

impl V {
    fn plain(val: Val) -> V {
        V { val, boxed: false }
    }
    fn boxed(val: Val) -> V {
        V { val, boxed: true }
    }
    /// evalPipeline's unwrapping of empty interfaces: a nil interface becomes the zero Value.
    fn unwrap(self) -> V {
        match self.val {
            Val::Nil if self.boxed => V::plain(Val::Invalid),
            val => V::plain(val),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// fmt

/// Go's `%v` rendering (fmt.Fprint) of a value.
pub fn format_v(v: &Val) -> String {
    let mut out = String::new();
    write_verb(&mut out, v, 'v', &Spec::default());
    out
}

fn go_float(f: f64, verb: char, prec: Option<usize>) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    match verb {
        'e' | 'E' => {
            let s = go_exp(&format!("{:.*e}", prec.unwrap_or(6), f));
            if verb == 'E' {
                s.to_uppercase()
            } else {
                s
            }
        }
        'f' | 'F' => format!("{:.*}", prec.unwrap_or(6), f),
        _ => {
            // 'g' (and 'v'): strconv.FormatFloat(f, 'g', prec, 64).
            let shortest = prec.is_none();
            let sci = match prec {
                None => format!("{f:e}"),
                Some(p) => format!("{:.*e}", p.max(1) - 1, f),
            };
            let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
            let exp: i32 = exp.parse().unwrap_or(0);
            let neg = mantissa.starts_with('-');
            let mut digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
            while digits.len() > 1 && digits.ends_with('0') {
                digits.pop();
            }
            let nd = digits.len() as i32;
            let dp = exp + 1;
            let mut eprec = prec.map(|p| p.max(1) as i32).unwrap_or(nd);
            if eprec > nd && nd >= dp {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let sign = if neg { "-" } else { "" };
            let s = if exp < -4 || exp >= eprec {
                let rest = &digits[1..];
                let m = if rest.is_empty() { digits[..1].to_string() } else { format!("{}.{rest}", &digits[..1]) };
                format!("{sign}{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
            } else if dp <= 0 {
                format!("{sign}0.{}{digits}", "0".repeat((-dp) as usize))
            } else if dp >= nd {
                format!("{sign}{digits}{}", "0".repeat((dp - nd) as usize))
            } else {
                format!("{sign}{}.{}", &digits[..dp as usize], &digits[dp as usize..])
            };
            if verb == 'G' {
                s.to_uppercase()
            } else {
                s
            }
        }
    }
}

/// Rust's `1.5e3` exponent → Go's `1.5e+03`.
fn go_exp(s: &str) -> String {
    match s.split_once('e') {
        Some((m, e)) => {
            let n: i32 = e.parse().unwrap_or(0);
            format!("{m}e{}{:02}", if n < 0 { '-' } else { '+' }, n.abs())
        }
        None => s.to_string(),
    }
}

/// strconv.Quote.
pub fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32))
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32))
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn go_quote_rune(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '"' => "'\"'".into(),
        c => {
            let q = go_quote(&c.to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

fn pad(out: &mut String, body: &str, spec: &Spec, numeric: bool) {
    let len = body.chars().count();
    let width = spec.width.unwrap_or(0);
    if len >= width {
        out.push_str(body);
        return;
    }
    let fill = width - len;
    if spec.minus {
        out.push_str(body);
        out.push_str(&" ".repeat(fill));
    } else if spec.zero && numeric {
        let (sign, digits) = match body.chars().next() {
            Some(c @ ('-' | '+' | ' ')) => (c.to_string(), &body[1..]),
            _ => (String::new(), body),
        };
        out.push_str(&sign);
        out.push_str(&"0".repeat(fill));
        out.push_str(digits);
    } else if spec.zero {
        out.push_str(&"0".repeat(fill));
        out.push_str(body);
    } else {
        out.push_str(&" ".repeat(fill));
        out.push_str(body);
    }
}

fn bad_verb(out: &mut String, verb: char, v: &Val) {
    match v {
        Val::Invalid | Val::Nil => out.push_str(&format!("%!{verb}(<nil>)")),
        other => out.push_str(&format!("%!{verb}({}={})", other.type_name(), format_v(other))),
    }
}

fn fmt_int(out: &mut String, i: i128, verb: char, spec: &Spec) {
    let neg = i < 0;
    let mag = i.unsigned_abs();
    let mut digits = match verb {
        'b' => format!("{mag:b}"),
        'o' | 'O' => format!("{mag:o}"),
        'x' => format!("{mag:x}"),
        'X' => format!("{mag:X}"),
        _ => mag.to_string(),
    };
    if let Some(p) = spec.prec {
        if p == 0 && mag == 0 {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    let prefix = match verb {
        'O' => "0o",
        'x' if spec.sharp => "0x",
        'X' if spec.sharp => "0X",
        'o' if spec.sharp && !digits.starts_with('0') => "0",
        'b' if spec.sharp => "0b",
        _ => "",
    };
    let sign = if neg {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    let body = format!("{sign}{prefix}{digits}");
    let zero_ok = spec.prec.is_none();
    pad(out, &body, &Spec { zero: spec.zero && zero_ok, ..spec.clone() }, true);
}

fn write_verb(out: &mut String, v: &Val, verb: char, spec: &Spec) {
    match v {
        Val::Invalid | Val::Nil => match verb {
            'v' => pad(out, "<nil>", spec, false),
            'T' => pad(out, "<nil>", spec, false),
            _ => bad_verb(out, verb, v),
        },
        Val::Bool(b) => match verb {
            'v' | 't' => pad(out, if *b { "true" } else { "false" }, spec, false),
            'T' => pad(out, "bool", spec, false),
            _ => bad_verb(out, verb, v),
        },
        Val::Int(_) | Val::I64(_) | Val::U8(_) => {
            let i = v.int().unwrap_or(0);
            match verb {
                'v' | 'd' | 'b' | 'o' | 'O' | 'x' | 'X' => fmt_int(out, i as i128, if verb == 'v' { 'd' } else { verb }, spec),
                'c' => pad(out, &char::from_u32(i as u32).unwrap_or('\u{fffd}').to_string(), spec, false),
                'q' => pad(out, &go_quote_rune(char::from_u32(i as u32).unwrap_or('\u{fffd}')), spec, false),
                'U' => pad(out, &format!("U+{:04X}", i), spec, false),
                'T' => pad(out, v.type_name(), spec, false),
                _ => bad_verb(out, verb, v),
            }
        }
        Val::Float(f) => match verb {
            'v' | 'g' | 'G' | 'e' | 'E' | 'f' | 'F' => {
                let verb = if verb == 'v' { 'g' } else { verb };
                let mut body = go_float(*f, verb, spec.prec);
                if !body.starts_with('-') {
                    if spec.plus {
                        body.insert(0, '+');
                    } else if spec.space {
                        body.insert(0, ' ');
                    }
                }
                pad(out, &body, spec, true);
            }
            'T' => pad(out, "float64", spec, false),
            _ => bad_verb(out, verb, v),
        },
        Val::Str(s) => match verb {
            'v' | 's' => {
                let body: String = match spec.prec {
                    Some(p) => s.chars().take(p).collect(),
                    None => s.to_string(),
                };
                if spec.sharp && verb == 'v' {
                    pad(out, &go_quote(&body), spec, false)
                } else {
                    pad(out, &body, spec, false)
                }
            }
            'q' => {
                let body: String = match spec.prec {
                    Some(p) => s.chars().take(p).collect(),
                    None => s.to_string(),
                };
                if spec.sharp && !body.contains('`') {
                    pad(out, &format!("`{body}`"), spec, false)
                } else {
                    pad(out, &go_quote(&body), spec, false)
                }
            }
            'x' | 'X' => {
                let hex: String = s.bytes().map(|b| if verb == 'x' { format!("{b:02x}") } else { format!("{b:02X}") }).collect();
                pad(out, &hex, spec, false)
            }
            'T' => pad(out, "string", spec, false),
            _ => bad_verb(out, verb, v),
        },
        Val::List(items) => {
            if verb == 'T' {
                return pad(out, "[]interface {}", spec, false);
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_verb(out, item, verb, spec);
            }
            out.push(']');
        }
        Val::Map(map) => {
            if verb == 'T' {
                return pad(out, "map[string]interface {}", spec, false);
            }
            out.push_str("map[");
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_verb(out, &Val::Str(Rc::from(k.as_str())), verb, spec);
                out.push(':');
                write_verb(out, item, verb, spec);
            }
            out.push(']');
        }
    }
}

/// fmt.Sprintf.
pub fn sprintf(format: &str, args: &[Val]) -> String {
    let mut out = String::new();
    let chars: Vec<char> = format.chars().collect();
    let mut i = 0;
    let mut arg = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        let mut spec = Spec::default();
        while i < chars.len() {
            match chars[i] {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                ' ' => spec.space = true,
                '0' => spec.zero = !spec.minus,
                _ => break,
            }
            i += 1;
        }
        let number = |i: &mut usize, arg: &mut usize, out: &mut String| -> Option<usize> {
            if *i < chars.len() && chars[*i] == '*' {
                *i += 1;
                let n = args.get(*arg).and_then(|a| a.int());
                *arg += 1;
                if n.is_none() {
                    out.push_str("%!(BADWIDTH)");
                }
                return n.map(|n| n.max(0) as usize);
            }
            let start = *i;
            while *i < chars.len() && chars[*i].is_ascii_digit() {
                *i += 1;
            }
            (start < *i).then(|| chars[start..*i].iter().collect::<String>().parse().unwrap_or(0))
        };
        spec.width = number(&mut i, &mut arg, &mut out);
        if i < chars.len() && chars[i] == '.' {
            i += 1;
            spec.prec = Some(number(&mut i, &mut arg, &mut out).unwrap_or(0));
        }
        let Some(&verb) = chars.get(i) else {
            out.push_str("%!(NOVERB)");
            break;
        };
        i += 1;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(value) = args.get(arg) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        arg += 1;
        write_verb(&mut out, value, verb, &spec);
    }
    if arg < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[arg..]
            .iter()
            .map(|a| match a {
                Val::Invalid | Val::Nil => "<nil>".to_string(),
                a => format!("{}={}", a.type_name(), format_v(a)),
            })
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

/// fmt.Sprint: spaces between operands when neither side is a string.
fn sprint(args: &[Val]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 && !matches!(a, Val::Str(_)) && !matches!(args[i - 1], Val::Str(_)) {
            out.push(' ');
        }
        out.push_str(&format_v(a));
    }
    out
}

fn sprintln(args: &[Val]) -> String {
    let mut out = args.iter().map(format_v).collect::<Vec<_>>().join(" ");
    out.push('\n');
    out
}

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Text(String),
    LeftDelim,
    RightDelim,
    Space,
    Pipe,
    LeftParen,
    RightParen,
    Comma,
    Declare,
    Assign,
    Dot,
    Field(String),
    Variable(String),
    Ident(String),
    Keyword(String),
    Bool(bool),
    Nil,
    Str { quoted: String, value: String },
    RawStr { quoted: String, value: String },
    Char(String),
    Number(String),
    Eof,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    pos: usize,
    line: usize,
}

const KEYWORDS: &[&str] = &["block", "break", "continue", "define", "else", "end", "if", "range", "template", "with"];

fn lex(text: &str) -> Result<Vec<Token>, (usize, String)> {
    let b = text.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    let line_at = |p: usize| 1 + text[..p.min(text.len())].matches('\n').count();
    while pos < b.len() {
        // Text up to the next "{{".
        let start = pos;
        let next = text[pos..].find("{{").map(|i| pos + i);
        let end = next.unwrap_or(b.len());
        let mut text_end = end;
        let mut trim_left = false;
        if let Some(n) = next {
            // "{{- " trims the preceding text.
            if text[n + 2..].starts_with('-') && text[n + 3..].starts_with([' ', '\t', '\r', '\n']) {
                trim_left = true;
                text_end = start + text[start..n].trim_end_matches([' ', '\t', '\r', '\n']).len();
            }
        }
        if text_end > start {
            tokens.push(Token { tok: Tok::Text(text[start..text_end].to_string()), pos: start, line: line_at(start) });
        }
        let Some(n) = next else { break };
        pos = n + 2;
        if trim_left {
            pos += 2;
        }
        // Comments.
        let after = &text[pos..];
        let ws_len = after.len() - after.trim_start_matches([' ', '\t', '\r', '\n']).len();
        if after[ws_len.min(after.len())..].starts_with("/*") && (ws_len == 0 || trim_left) {
            let body_start = pos + ws_len + 2;
            let Some(close) = text[body_start..].find("*/") else { return Err((line_at(n), "unclosed comment".into())) };
            let mut p = body_start + close + 2;
            let rest = &text[p..];
            let mut trim_right = false;
            if rest.starts_with("}}") {
                p += 2;
            } else if let Some(r) = rest.strip_prefix([' ', '\t', '\r', '\n']).filter(|r| r.starts_with("-}}")) {
                let _ = r;
                p += 4;
                trim_right = true;
            } else {
                return Err((line_at(n), "comment ends before closing delimiter".into()));
            }
            pos = p;
            if trim_right {
                pos += text[pos..].len() - text[pos..].trim_start_matches([' ', '\t', '\r', '\n']).len();
            }
            continue;
        }
        tokens.push(Token { tok: Tok::LeftDelim, pos: n, line: line_at(n) });
        let mut paren_depth = 0i32;
        loop {
            let rest = &text[pos..];
            // Closing delimiter, optionally " -}}".
            if rest.starts_with("}}") {
                tokens.push(Token { tok: Tok::RightDelim, pos, line: line_at(pos) });
                pos += 2;
                break;
            }
            if rest.len() >= 4 && rest.as_bytes()[0].is_ascii_whitespace() && rest[1..].starts_with("-}}") {
                tokens.push(Token { tok: Tok::RightDelim, pos: pos + 2, line: line_at(pos) });
                pos += 4;
                pos += text[pos..].len() - text[pos..].trim_start_matches([' ', '\t', '\r', '\n']).len();
                break;
            }
            let Some(c) = rest.chars().next() else { return Err((line_at(pos), "unclosed action".into())) };
            let at = pos;
            let line = line_at(pos);
            let push = |tokens: &mut Vec<Token>, tok: Tok| tokens.push(Token { tok, pos: at, line });
            match c {
                ' ' | '\t' | '\r' | '\n' => {
                    let n = rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n']).len();
                    // " -}}" is handled above; a space before "-}}" belongs to the delimiter.
                    pos += n;
                    if !text[pos..].starts_with("-}}") || n == 0 {
                        push(&mut tokens, Tok::Space);
                    } else {
                        tokens.push(Token { tok: Tok::RightDelim, pos, line: line_at(pos) });
                        pos += 3;
                        pos += text[pos..].len() - text[pos..].trim_start_matches([' ', '\t', '\r', '\n']).len();
                        break;
                    }
                }
                '|' => {
                    push(&mut tokens, Tok::Pipe);
                    pos += 1;
                }
                '(' => {
                    paren_depth += 1;
                    push(&mut tokens, Tok::LeftParen);
                    pos += 1;
                }
                ')' => {
                    paren_depth -= 1;
                    if paren_depth < 0 {
                        return Err((line, "unexpected right paren".into()));
                    }
                    push(&mut tokens, Tok::RightParen);
                    pos += 1;
                }
                ',' => {
                    push(&mut tokens, Tok::Comma);
                    pos += 1;
                }
                ':' => {
                    if !rest.starts_with(":=") {
                        return Err((line, "expected :=".into()));
                    }
                    push(&mut tokens, Tok::Declare);
                    pos += 2;
                }
                '=' => {
                    push(&mut tokens, Tok::Assign);
                    pos += 1;
                }
                '"' => {
                    let mut j = 1;
                    let rb = rest.as_bytes();
                    loop {
                        match rb.get(j) {
                            None | Some(b'\n') => return Err((line, "unterminated quoted string".into())),
                            Some(b'\\') => j += 2,
                            Some(b'"') => break,
                            Some(_) => j += 1,
                        }
                    }
                    let quoted = rest[..=j].to_string();
                    let value = unquote(&quoted).map_err(|e| (line, e))?;
                    push(&mut tokens, Tok::Str { quoted, value });
                    pos += j + 1;
                }
                '`' => {
                    let Some(close) = rest[1..].find('`') else { return Err((line, "unterminated raw quoted string".into())) };
                    let quoted = rest[..close + 2].to_string();
                    let value = rest[1..close + 1].replace('\r', "");
                    push(&mut tokens, Tok::RawStr { quoted, value });
                    pos += close + 2;
                }
                '\'' => {
                    let mut j = 1;
                    let rb = rest.as_bytes();
                    loop {
                        match rb.get(j) {
                            None | Some(b'\n') => return Err((line, "unterminated character constant".into())),
                            Some(b'\\') => j += 2,
                            Some(b'\'') => break,
                            Some(_) => j += 1,
                        }
                    }
                    push(&mut tokens, Tok::Char(rest[..=j].to_string()));
                    pos += j + 1;
                }
                '$' => {
                    let n = 1 + rest[1..].find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len() - 1);
                    push(&mut tokens, Tok::Variable(rest[..n].to_string()));
                    pos += n;
                }
                '.' => {
                    let second = rest[1..].chars().next();
                    if second.is_some_and(|c| c.is_ascii_digit()) {
                        let n = number_len(rest);
                        push(&mut tokens, Tok::Number(rest[..n].to_string()));
                        pos += n;
                    } else if second.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        let n = 1 + rest[1..].find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len() - 1);
                        push(&mut tokens, Tok::Field(rest[1..n].to_string()));
                        pos += n;
                    } else {
                        push(&mut tokens, Tok::Dot);
                        pos += 1;
                    }
                }
                '+' | '-' | '0'..='9' => {
                    let n = number_len(rest);
                    let candidate = &rest[..n];
                    if n == 0 || !valid_number(candidate) {
                        let shown = if n == 0 { &rest[..1] } else { candidate };
                        return Err((line, format!("illegal number syntax: {}", go_quote(shown))));
                    }
                    push(&mut tokens, Tok::Number(candidate.to_string()));
                    pos += n;
                }
                c if c.is_alphabetic() || c == '_' => {
                    let n = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
                    let word = &rest[..n];
                    let tok = match word {
                        "true" => Tok::Bool(true),
                        "false" => Tok::Bool(false),
                        "nil" => Tok::Nil,
                        w if KEYWORDS.contains(&w) => Tok::Keyword(w.to_string()),
                        w => Tok::Ident(w.to_string()),
                    };
                    push(&mut tokens, tok);
                    pos += n;
                }
                c => return Err((line, format!("bad character U+{:04X} '{c}'", c as u32))),
            }
        }
        if paren_depth > 0 {
            return Err((line_at(pos), "unclosed left paren".into()));
        }
    }
    tokens.push(Token { tok: Tok::Eof, pos: b.len(), line: line_at(b.len()) });
    Ok(tokens)
}

fn number_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let hex = s[i..].starts_with("0x") || s[i..].starts_with("0X");
    while i < b.len() {
        let c = b[i];
        let ok = c.is_ascii_alphanumeric()
            || c == b'_'
            || c == b'.'
            || ((c == b'+' || c == b'-') && i > 0 && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P') && !(hex && matches!(b[i - 1], b'e' | b'E')));
        if !ok {
            break;
        }
        i += 1;
    }
    i
}

fn valid_number(s: &str) -> bool {
    match parse_number(s) {
        Ok(_) => true,
        Err(e) => e.starts_with("integer overflow"),
    }
}

/// A number literal as the parser's newNumber and exec's idealConstant read it.
#[derive(Clone, Debug, PartialEq)]
enum Num {
    Int(i64),
    Float(f64),
}

fn parse_number(text: &str) -> Result<Num, String> {
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let clean = body.replace('_', "");
    if clean.is_empty() {
        return Err(format!("illegal number syntax: {}", go_quote(text)));
    }
    let lower = clean.to_ascii_lowercase();
    let int = if let Some(h) = lower.strip_prefix("0x") {
        if h.contains('p') || h.contains('.') {
            None
        } else {
            Some(i128::from_str_radix(h, 16).map_err(|_| format!("illegal number syntax: {}", go_quote(text)))?)
        }
    } else if let Some(o) = lower.strip_prefix("0o") {
        Some(i128::from_str_radix(o, 8).map_err(|_| format!("illegal number syntax: {}", go_quote(text)))?)
    } else if let Some(bin) = lower.strip_prefix("0b") {
        Some(i128::from_str_radix(bin, 2).map_err(|_| format!("illegal number syntax: {}", go_quote(text)))?)
    } else if lower.contains(['.', 'e']) {
        None
    } else if lower.len() > 1 && lower.starts_with('0') {
        Some(i128::from_str_radix(&lower[1..], 8).map_err(|_| format!("illegal number syntax: {}", go_quote(text)))?)
    } else {
        match lower.parse::<i128>() {
            Ok(v) => Some(v),
            Err(_) => return Err(format!("illegal number syntax: {}", go_quote(text))),
        }
    };
    if let Some(v) = int {
        let v = if neg { -v } else { v };
        return i64::try_from(v).map(Num::Int).map_err(|_| format!("integer overflow: {}", go_quote(text)));
    }
    let f = if let Some(h) = lower.strip_prefix("0x") {
        // Hex float: mantissa p exponent.
        let (m, e) = h.split_once('p').ok_or_else(|| format!("illegal number syntax: {}", go_quote(text)))?;
        let (ip, fp) = m.split_once('.').unwrap_or((m, ""));
        let mut v = 0f64;
        for c in ip.chars().chain(fp.chars()) {
            v = v * 16.0 + c.to_digit(16).ok_or_else(|| format!("illegal number syntax: {}", go_quote(text)))? as f64;
        }
        let e: i32 = e.parse().map_err(|_| format!("illegal number syntax: {}", go_quote(text)))?;
        v * 2f64.powi(e - 4 * fp.len() as i32)
    } else {
        lower.parse::<f64>().map_err(|_| format!("illegal number syntax: {}", go_quote(text)))?
    };
    Ok(Num::Float(if neg { -f } else { f }))
}

/// strconv.Unquote for a double-quoted Go string.
fn unquote(quoted: &str) -> Result<String, String> {
    let inner = &quoted[1..quoted.len() - 1];
    let mut out = String::new();
    let mut bytes: Vec<u8> = Vec::new();
    let mut chars = inner.chars().peekable();
    let flush = |bytes: &mut Vec<u8>, out: &mut String| {
        if !bytes.is_empty() {
            out.push_str(&String::from_utf8_lossy(bytes));
            bytes.clear();
        }
    };
    let bad = || "invalid syntax".to_string();
    while let Some(c) = chars.next() {
        if c != '\\' {
            flush(&mut bytes, &mut out);
            out.push(c);
            continue;
        }
        let e = chars.next().ok_or_else(bad)?;
        if !matches!(e, 'x' | '0'..='7') {
            flush(&mut bytes, &mut out);
        }
        let mut take = |n: usize, radix: u32| -> Result<u32, String> {
            let s: String = (0..n).filter_map(|_| chars.next()).collect();
            if s.len() != n {
                return Err(bad());
            }
            u32::from_str_radix(&s, radix).map_err(|_| bad())
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' => out.push('\\'),
            '"' => out.push('"'),
            'x' => {
                bytes.push(take(2, 16)? as u8);
                continue;
            }
            'u' => out.push(char::from_u32(take(4, 16)?).ok_or_else(bad)?),
            'U' => out.push(char::from_u32(take(8, 16)?).ok_or_else(bad)?),
            '0'..='7' => {
                let rest = take(2, 8)?;
                let v = (e as u32 - '0' as u32) * 64 + rest;
                if v > 255 {
                    return Err(bad());
                }
                bytes.push(v as u8);
                continue;
            }
            _ => return Err(bad()),
        }
        flush(&mut bytes, &mut out);
    }
    flush(&mut bytes, &mut out);
    Ok(out)
}

fn unquote_char(quoted: &str) -> Result<i64, String> {
    let inner = &quoted[1..quoted.len() - 1];
    if inner == "\\'" {
        return Ok('\'' as i64);
    }
    if inner == "\"" {
        return Ok('"' as i64);
    }
    let s = unquote(&format!("\"{inner}\""))?;
    let mut cs = s.chars();
    match (cs.next(), cs.next()) {
        (Some(c), None) => Ok(c as i64),
        _ => Err(format!("malformed character constant: {quoted}")),
    }
}

// ---------------------------------------------------------------------------------------------
// Parse tree

#[derive(Clone, Debug)]
enum Arg {
    Field { pos: usize, idents: Vec<String> },
    Variable { pos: usize, idents: Vec<String> },
    Dot(usize),
    Nil(usize),
    Bool(usize, bool),
    Number { pos: usize, text: String, value: Num },
    Str { pos: usize, quoted: String, value: String },
    Ident { pos: usize, name: String },
    Pipe(usize, Box<Pipe>),
    Chain { pos: usize, node: Box<Arg>, fields: Vec<String> },
}

impl Arg {
    fn pos(&self) -> usize {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Dot(pos)
            | Arg::Nil(pos)
            | Arg::Bool(pos, _)
            | Arg::Number { pos, .. }
            | Arg::Str { pos, .. }
            | Arg::Ident { pos, .. }
            | Arg::Pipe(pos, _)
            | Arg::Chain { pos, .. } => *pos,
        }
    }
    fn text(&self) -> String {
        match self {
            Arg::Field { idents, .. } => idents.iter().map(|i| format!(".{i}")).collect(),
            Arg::Variable { idents, .. } => idents.join("."),
            Arg::Dot(_) => ".".into(),
            Arg::Nil(_) => "nil".into(),
            Arg::Bool(_, b) => b.to_string(),
            Arg::Number { text, .. } => text.clone(),
            Arg::Str { quoted, .. } => quoted.clone(),
            Arg::Ident { name, .. } => name.clone(),
            Arg::Pipe(_, p) => format!("({})", p.text()),
            Arg::Chain { node, fields, .. } => {
                let base = match node.as_ref() {
                    Arg::Pipe(_, p) => format!("({})", p.text()),
                    other => other.text(),
                };
                format!("{base}{}", fields.iter().map(|f| format!(".{f}")).collect::<String>())
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Command {
    pos: usize,
    args: Vec<Arg>,
}

impl Command {
    fn text(&self) -> String {
        self.args.iter().map(Arg::text).collect::<Vec<_>>().join(" ")
    }
}

#[derive(Clone, Debug)]
struct Pipe {
    pos: usize,
    is_assign: bool,
    decl: Vec<String>,
    cmds: Vec<Command>,
}

impl Pipe {
    fn text(&self) -> String {
        let mut s = String::new();
        if !self.decl.is_empty() {
            s.push_str(&self.decl.join(", "));
            s.push_str(if self.is_assign { " = " } else { " := " });
        }
        s.push_str(&self.cmds.iter().map(Command::text).collect::<Vec<_>>().join(" | "));
        s
    }
}

#[derive(Clone, Debug)]
enum Node {
    Text(String),
    Action(Pipe),
    If { pipe: Pipe, list: Vec<Node>, else_list: Vec<Node> },
    Range { pipe: Pipe, list: Vec<Node>, else_list: Vec<Node> },
    With { pipe: Pipe, list: Vec<Node>, else_list: Vec<Node> },
    Break,
    Continue,
    Template { pos: usize, name: String, pipe: Option<Pipe> },
}

/// The builtin and kubectl function names (parse-time "function not defined" check).
const FUNCTIONS: &[&str] = &[
    "and",
    "base64decode",
    "call",
    "eq",
    "exists",
    "ge",
    "gt",
    "html",
    "index",
    "js",
    "le",
    "len",
    "lt",
    "ne",
    "not",
    "or",
    "print",
    "printf",
    "println",
    "slice",
    "urlquery",
];

/// How deep control bodies and parenthesised pipelines may nest in a template (see the module
/// documentation).
pub const MAX_PARSE_DEPTH: usize = 100;

/// How deep template invocations and control walks may nest while a template runs.
pub const MAX_EXEC_DEPTH: usize = 100;

/// How many range iterations one run of a template may make in all.
pub const MAX_RANGE_ITERATIONS: u64 = 1_000_000;

struct Parser {
    tokens: Vec<Token>,
    i: usize,
    vars: Vec<String>,
    range_depth: usize,
    /// Nested controls and parenthesised pipelines being parsed.
    depth: usize,
    defines: BTreeMap<String, Vec<Node>>,
}

type PResult<T> = Result<T, (usize, String)>;

enum Stop {
    End,
    Else(usize),
    Eof,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.i.min(self.tokens.len() - 1)]
    }
    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.tokens.len() {
            self.i += 1;
        }
        t
    }
    fn next_non_space(&mut self) -> Token {
        loop {
            let t = self.next();
            if t.tok != Tok::Space {
                return t;
            }
        }
    }
    fn peek_non_space(&mut self) -> Token {
        let save = self.i;
        let t = self.next_non_space();
        self.i = save;
        t
    }
    fn err<T>(&self, line: usize, msg: impl Into<String>) -> PResult<T> {
        Err((line, msg.into()))
    }

    /// Parses a list of nodes until {{end}}, {{else}} or EOF.
    fn list(&mut self) -> PResult<(Vec<Node>, Stop)> {
        let mut nodes = Vec::new();
        loop {
            let t = self.next();
            match t.tok {
                Tok::Eof => return Ok((nodes, Stop::Eof)),
                Tok::Text(s) => nodes.push(Node::Text(s)),
                Tok::LeftDelim => {
                    let k = self.peek_non_space();
                    match &k.tok {
                        Tok::Keyword(w) if w == "end" => {
                            self.next_non_space();
                            self.expect_right(k.line, "end")?;
                            return Ok((nodes, Stop::End));
                        }
                        Tok::Keyword(w) if w == "else" => {
                            self.next_non_space();
                            return Ok((nodes, Stop::Else(k.line)));
                        }
                        _ => nodes.push(self.action()?),
                    }
                }
                _ => return self.err(t.line, "unexpected token"),
            }
        }
    }

    fn expect_right(&mut self, line: usize, context: &str) -> PResult<()> {
        let t = self.next_non_space();
        match t.tok {
            Tok::RightDelim => Ok(()),
            _ => self.err(line, format!("unexpected {} in {context}", describe_tok(&t.tok))),
        }
    }

    fn action(&mut self) -> PResult<Node> {
        let t = self.peek_non_space();
        if let Tok::Keyword(w) = &t.tok {
            self.next_non_space();
            return match w.as_str() {
                "if" => self.control(t.line, "if"),
                "range" => self.control(t.line, "range"),
                "with" => self.control(t.line, "with"),
                "break" | "continue" => {
                    if self.range_depth == 0 {
                        return self.err(t.line, format!("{{{{{w}}}}} outside {{{{range}}}}"));
                    }
                    self.expect_right(t.line, w)?;
                    Ok(if w == "break" { Node::Break } else { Node::Continue })
                }
                "define" => self.define(t.line),
                "template" | "block" => self.template(t.pos, t.line, w == "block"),
                other => self.err(t.line, format!("unexpected {{{{{other}}}}}")),
            };
        }
        let pipe = self.pipeline(t.line, "command")?;
        Ok(Node::Action(pipe))
    }

    fn define(&mut self, line: usize) -> PResult<Node> {
        let name = match self.next_non_space().tok {
            Tok::Str { value, .. } | Tok::RawStr { value, .. } => value,
            other => return self.err(line, format!("unexpected {} in define clause", describe_tok(&other))),
        };
        self.expect_right(line, "define clause")?;
        let saved = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let (list, stop) = self.list()?;
        self.vars = saved;
        match stop {
            Stop::End => {}
            Stop::Else(l) => return self.err(l, "unexpected {{else}}"),
            Stop::Eof => return self.err(line, "unexpected EOF"),
        }
        self.defines.insert(name, list);
        Ok(Node::Text(String::new()))
    }

    fn template(&mut self, pos: usize, line: usize, block: bool) -> PResult<Node> {
        let context = if block { "block clause" } else { "template clause" };
        let name = match self.next_non_space().tok {
            Tok::Str { value, .. } | Tok::RawStr { value, .. } => value,
            other => return self.err(line, format!("unexpected {} in {context}", describe_tok(&other))),
        };
        let pipe = if self.peek_non_space().tok == Tok::RightDelim {
            self.next_non_space();
            None
        } else {
            Some(self.pipeline(line, context)?)
        };
        if block {
            let saved = std::mem::replace(&mut self.vars, vec!["$".into()]);
            let (list, stop) = self.list()?;
            self.vars = saved;
            if !matches!(stop, Stop::End) {
                return self.err(line, "unexpected EOF");
            }
            self.defines.insert(name.clone(), list);
        }
        Ok(Node::Template { pos, name, pipe })
    }

    fn control(&mut self, line: usize, kind: &str) -> PResult<Node> {
        self.nested(line, |p| p.control_body(line, kind))
    }

    /// Runs `f` one level deeper, refusing past [`MAX_PARSE_DEPTH`].
    fn nested<T>(&mut self, line: usize, f: impl FnOnce(&mut Parser) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_PARSE_DEPTH {
            return self.err(line, "max expression depth exceeded");
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn control_body(&mut self, line: usize, kind: &str) -> PResult<Node> {
        let mark = self.vars.len();
        if kind == "range" {
            self.range_depth += 1;
        }
        let pipe = self.pipeline(line, kind)?;
        if pipe.cmds.is_empty() {
            return self.err(line, format!("missing value for {kind}"));
        }
        let (list, stop) = self.list()?;
        if kind == "range" {
            self.range_depth -= 1;
        }
        let else_list = match stop {
            Stop::End => Vec::new(),
            Stop::Eof => return self.err(self.peek().line, "unexpected EOF"),
            Stop::Else(eline) => {
                // "else if" / "else with" chain into a nested control; else a plain else.
                let k = self.peek_non_space();
                match &k.tok {
                    Tok::Keyword(w) if (w == "if" && kind == "if") || (w == "with" && kind == "with") => {
                        self.next_non_space();
                        self.vars.truncate(mark);
                        let nested = self.control(k.line, kind)?;
                        vec![nested]
                    }
                    _ => {
                        self.expect_right(eline, "else")?;
                        let (else_list, stop) = self.list()?;
                        match stop {
                            Stop::End => else_list,
                            Stop::Else(l) => return self.err(l, "expected end; found {{else}}"),
                            Stop::Eof => return self.err(self.peek().line, "unexpected EOF"),
                        }
                    }
                }
            }
        };
        self.vars.truncate(mark);
        Ok(match kind {
            "if" => Node::If { pipe, list, else_list },
            "range" => Node::Range { pipe, list, else_list },
            _ => Node::With { pipe, list, else_list },
        })
    }

    /// pipeline: [decl] command { '|' command } up to the closing delimiter (or ')' when
    /// `paren`). `context` names the clause in errors.
    fn pipeline(&mut self, line: usize, context: &str) -> PResult<Pipe> {
        let start = self.peek_non_space();
        let mut pipe = Pipe { pos: start.pos, is_assign: false, decl: Vec::new(), cmds: Vec::new() };
        // Declarations: $x := / $x = / $i, $v :=
        let save = self.i;
        if let Tok::Variable(v) = &start.tok {
            let v = v.clone();
            self.next_non_space();
            let after = self.peek_non_space();
            match after.tok {
                Tok::Declare | Tok::Assign => {
                    self.next_non_space();
                    pipe.is_assign = after.tok == Tok::Assign;
                    pipe.decl.push(v);
                }
                Tok::Comma if context == "range" => {
                    self.next_non_space();
                    match self.next_non_space().tok {
                        Tok::Variable(w) => {
                            let op = self.next_non_space();
                            match op.tok {
                                Tok::Declare | Tok::Assign => {
                                    pipe.is_assign = op.tok == Tok::Assign;
                                    pipe.decl.push(v);
                                    pipe.decl.push(w);
                                }
                                Tok::Comma => return self.err(line, "too many declarations in range"),
                                _ => return self.err(line, "missing := in range"),
                            }
                        }
                        _ => return self.err(line, "range can only initialize variables"),
                    }
                }
                _ => self.i = save,
            }
        }
        loop {
            let t = self.peek_non_space();
            match t.tok {
                Tok::RightDelim => {
                    self.next_non_space();
                    break;
                }
                Tok::RightParen if context == "parenthesized pipeline" => {
                    self.next_non_space();
                    break;
                }
                Tok::Eof => return self.err(t.line, "unclosed action"),
                _ => {
                    let cmd = self.command(line)?;
                    pipe.cmds.push(cmd);
                }
            }
        }
        if !pipe.decl.is_empty() && !pipe.is_assign {
            for d in &pipe.decl {
                self.vars.push(d.clone());
            }
        }
        if pipe.cmds.is_empty() && context == "command" {
            return self.err(line, "missing value for command");
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(c.args.first(), Some(Arg::Bool(..) | Arg::Dot(_) | Arg::Nil(_) | Arg::Number { .. } | Arg::Str { .. })) {
                return self.err(line, format!("non executable command in pipeline stage {}", i + 1));
            }
        }
        Ok(pipe)
    }

    fn command(&mut self, line: usize) -> PResult<Command> {
        let first = self.peek_non_space();
        let mut cmd = Command { pos: first.pos, args: Vec::new() };
        loop {
            let t = self.peek_non_space();
            match t.tok {
                Tok::RightDelim | Tok::RightParen => break,
                Tok::Pipe => {
                    self.next_non_space();
                    if cmd.args.is_empty() {
                        return self.err(line, "missing value for command");
                    }
                    return Ok(cmd);
                }
                Tok::Eof => return self.err(t.line, "unclosed action"),
                _ => {
                    let operand = self.operand(line)?;
                    cmd.args.push(operand);
                }
            }
        }
        if cmd.args.is_empty() {
            return self.err(line, "missing value for command");
        }
        Ok(cmd)
    }

    fn operand(&mut self, line: usize) -> PResult<Arg> {
        let t = self.next_non_space();
        let term = match t.tok {
            Tok::Dot => Arg::Dot(t.pos),
            Tok::Nil => Arg::Nil(t.pos),
            Tok::Bool(b) => Arg::Bool(t.pos, b),
            Tok::Field(f) => Arg::Field { pos: t.pos, idents: vec![f] },
            Tok::Variable(v) => {
                if !self.vars.contains(&v) {
                    return self.err(t.line, format!("undefined variable {}", go_quote(&v)));
                }
                Arg::Variable { pos: t.pos, idents: vec![v] }
            }
            Tok::Ident(name) => {
                if !FUNCTIONS.contains(&name.as_str()) {
                    return self.err(t.line, format!("function {} not defined", go_quote(&name)));
                }
                Arg::Ident { pos: t.pos, name }
            }
            Tok::Str { quoted, value } | Tok::RawStr { quoted, value } => Arg::Str { pos: t.pos, quoted, value },
            Tok::Char(c) => {
                let v = unquote_char(&c).map_err(|e| (t.line, e))?;
                Arg::Number { pos: t.pos, text: c, value: Num::Int(v) }
            }
            Tok::Number(text) => {
                let value = parse_number(&text).map_err(|e| (t.line, e))?;
                Arg::Number { pos: t.pos, text, value }
            }
            Tok::LeftParen => {
                let pipe = self.nested(t.line, |p| p.pipeline(line, "parenthesized pipeline"))?;
                Arg::Pipe(t.pos, Box::new(pipe))
            }
            Tok::Keyword(k) => return self.err(t.line, format!("unexpected <{k}> in operand")),
            other => return self.err(t.line, format!("unexpected {} in operand", describe_tok(&other))),
        };
        // A field chain directly after the term (no space).
        let mut fields = Vec::new();
        let mut chain_pos = None;
        while let Tok::Field(f) = &self.peek().tok {
            chain_pos.get_or_insert(self.peek().pos);
            fields.push(f.clone());
            self.next();
        }
        if fields.is_empty() {
            return Ok(term);
        }
        let pos = chain_pos.unwrap_or(t.pos);
        Ok(match term {
            Arg::Field { mut idents, .. } => {
                idents.extend(fields);
                Arg::Field { pos, idents }
            }
            Arg::Variable { mut idents, .. } => {
                idents.extend(fields);
                Arg::Variable { pos, idents }
            }
            Arg::Bool(..) | Arg::Str { .. } | Arg::Number { .. } | Arg::Nil(_) | Arg::Dot(_) => {
                return self.err(t.line, format!("unexpected . after term {}", go_quote(&term.text())));
            }
            other => Arg::Chain { pos, node: Box::new(other), fields },
        })
    }
}

fn describe_tok(t: &Tok) -> String {
    match t {
        Tok::RightDelim => "\"}}\"".into(),
        Tok::RightParen => "\")\"".into(),
        Tok::LeftParen => "\"(\"".into(),
        Tok::Pipe => "\"|\"".into(),
        Tok::Comma => "\",\"".into(),
        Tok::Declare => "\":=\"".into(),
        Tok::Assign => "\"=\"".into(),
        Tok::Eof => "EOF".into(),
        Tok::Number(n) => format!("<{n}>"),
        Tok::Ident(n) | Tok::Keyword(n) => format!("<{n}>"),
        Tok::Field(f) => format!("<.{f}>"),
        Tok::Variable(v) => format!("<{v}>"),
        Tok::Str { quoted, .. } | Tok::RawStr { quoted, .. } => quoted.clone(),
        other => format!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Template

/// A parsed template.
#[derive(Clone, Debug)]
pub struct Template {
    text: String,
    root: Vec<Node>,
    defines: BTreeMap<String, Vec<Node>>,
}

/// How a missing map key evaluates (`missingkey=default` or `missingkey=error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingKey {
    /// `<no value>`.
    Default,
    /// `map has no entry for key "x"`.
    Error,
}

impl Template {
    /// Parses a template named "output", as kubectl does. The error is Go's:
    /// `template: output:LINE: MESSAGE`.
    pub fn parse(text: &str) -> Result<Template, String> {
        let tokens = lex(text).map_err(|(line, msg)| format!("template: output:{line}: {msg}"))?;
        let mut p = Parser { tokens, i: 0, vars: vec!["$".into()], range_depth: 0, depth: 0, defines: BTreeMap::new() };
        let (root, stop) = p.list().map_err(|(line, msg)| format!("template: output:{line}: {msg}"))?;
        match stop {
            Stop::Eof => {}
            Stop::End => {
                let line = p.tokens[p.i.saturating_sub(1)].line;
                return Err(format!("template: output:{line}: unexpected {{{{end}}}}"));
            }
            Stop::Else(line) => return Err(format!("template: output:{line}: unexpected {{{{else}}}}")),
        }
        Ok(Template { text: text.to_string(), root, defines: p.defines })
    }

    /// Executes against JSON data. On error returns what was written before it and Go's
    /// message (`template: output:1:7: executing "output" at <.a.b>: ...`).
    pub fn execute(&self, data: &Value, missing: MissingKey) -> Result<String, (String, String)> {
        let root = V::plain(Val::from_json(data));
        let mut state = State { tmpl: self, out: String::new(), vars: vec![("$".into(), root.clone())], missing, depth: 0, iterations: 0 };
        match state.walk(&root, &self.root) {
            Ok(_) => Ok(state.out),
            Err(e) => {
                let (line, col) = self.location(e.pos);
                Err((state.out, format!("template: output:{line}:{col}: executing \"output\" at <{}>: {}", e.context, e.message)))
            }
        }
    }

    fn location(&self, pos: usize) -> (usize, usize) {
        let before = &self.text[..pos.min(self.text.len())];
        let line = 1 + before.matches('\n').count();
        let col = match before.rfind('\n') {
            Some(i) => pos - (i + 1),
            None => pos,
        };
        (line, col)
    }
}

struct ExecError {
    pos: usize,
    context: String,
    message: String,
}

type EResult<T> = Result<T, ExecError>;

enum Flow {
    Normal,
    Break,
    Continue,
}

struct State<'a> {
    tmpl: &'a Template,
    out: String,
    vars: Vec<(String, V)>,
    missing: MissingKey,
    depth: usize,
    /// Range iterations made so far.
    iterations: u64,
}

fn err_at<T>(pos: usize, context: String, message: impl Into<String>) -> EResult<T> {
    Err(ExecError { pos, context, message: message.into() })
}

impl State<'_> {
    fn walk(&mut self, dot: &V, nodes: &[Node]) -> EResult<Flow> {
        for node in nodes {
            match self.walk_node(dot, node)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn walk_node(&mut self, dot: &V, node: &Node) -> EResult<Flow> {
        let nests = match node {
            Node::If { pipe, .. } | Node::With { pipe, .. } | Node::Range { pipe, .. } => Some((pipe.pos, pipe.text())),
            Node::Template { pos, name, .. } => Some((*pos, name.clone())),
            _ => None,
        };
        let Some((pos, context)) = nests else { return self.walk_node_at(dot, node) };
        if self.depth >= MAX_EXEC_DEPTH {
            return err_at(pos, context, format!("exceeded maximum template depth ({MAX_EXEC_DEPTH})"));
        }
        self.depth += 1;
        let result = self.walk_node_at(dot, node);
        self.depth -= 1;
        result
    }

    fn walk_node_at(&mut self, dot: &V, node: &Node) -> EResult<Flow> {
        match node {
            Node::Text(t) => self.out.push_str(t),
            Node::Action(pipe) => {
                let v = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    self.print_value(&v);
                }
            }
            Node::If { pipe, list, else_list } | Node::With { pipe, list, else_list } => {
                let mark = self.vars.len();
                let v = self.eval_pipeline(dot, pipe)?;
                let flow = if v.val.truth() {
                    if matches!(node, Node::With { .. }) {
                        self.walk(&v, list)?
                    } else {
                        self.walk(dot, list)?
                    }
                } else {
                    self.walk(dot, else_list)?
                };
                self.vars.truncate(mark);
                return Ok(flow);
            }
            Node::Range { pipe, list, else_list } => {
                let mark = self.vars.len();
                // The range's own pipeline declares its variables; evaluate without pushing.
                let mut bare = pipe.clone();
                bare.decl.clear();
                let v = self.eval_pipeline(dot, &bare)?;
                let items: Vec<(V, V)> = match &v.val {
                    Val::List(l) => l.iter().enumerate().map(|(i, e)| (V::plain(Val::Int(i as i64)), V::boxed(e.clone()))).collect(),
                    Val::Map(m) => m.iter().map(|(k, e)| (V::plain(Val::Str(Rc::from(k.as_str()))), V::boxed(e.clone()))).collect(),
                    Val::Int(n) | Val::I64(n) => {
                        if pipe.decl.len() > 1 {
                            let last = &pipe.cmds[pipe.cmds.len() - 1];
                            return err_at(last.pos, last.text(), format!("can't use {n} to iterate over more than one variable"));
                        }
                        if (*n).max(0) as u64 > MAX_RANGE_ITERATIONS - self.iterations.min(MAX_RANGE_ITERATIONS) {
                            return err_at(pipe.pos, pipe.text(), format!("range iterations exceed kubesim's limit ({MAX_RANGE_ITERATIONS})"));
                        }
                        (0..*n.max(&0))
                            .map(|i| (V::plain(Val::Int(i)), V::plain(if matches!(v.val, Val::I64(_)) { Val::I64(i) } else { Val::Int(i) })))
                            .collect()
                    }
                    Val::Invalid => Vec::new(),
                    other => {
                        let last = &pipe.cmds[pipe.cmds.len() - 1];
                        let at = last.args.first().map(|a| (a.pos(), a.text())).unwrap_or((last.pos, last.text()));
                        return err_at(at.0, at.1, format!("range can't iterate over {}", format_v(other)));
                    }
                };
                if items.is_empty() {
                    let flow = self.walk(dot, else_list)?;
                    self.vars.truncate(mark);
                    return Ok(flow);
                }
                for (key, elem) in items {
                    self.iterations += 1;
                    if self.iterations > MAX_RANGE_ITERATIONS {
                        return err_at(pipe.pos, pipe.text(), format!("range iterations exceed kubesim's limit ({MAX_RANGE_ITERATIONS})"));
                    }
                    self.vars.truncate(mark);
                    match pipe.decl.len() {
                        0 => {}
                        1 => self.declare(&pipe.decl[0], elem.clone(), pipe.is_assign, pipe.pos)?,
                        _ => {
                            self.declare(&pipe.decl[0], key, pipe.is_assign, pipe.pos)?;
                            self.declare(&pipe.decl[1], elem.clone(), pipe.is_assign, pipe.pos)?;
                        }
                    }
                    match self.walk(&elem, list)? {
                        Flow::Break => break,
                        Flow::Continue | Flow::Normal => {}
                    }
                }
                self.vars.truncate(mark);
            }
            Node::Break => return Ok(Flow::Break),
            Node::Continue => return Ok(Flow::Continue),
            Node::Template { pos, name, pipe } => {
                let Some(body) = self.tmpl.defines.get(name) else {
                    let text = match pipe {
                        Some(p) => format!("{{{{template {} {}}}}}", go_quote(name), p.text()),
                        None => format!("{{{{template {}}}}}", go_quote(name)),
                    };
                    return err_at(pos + "template ".len(), text, format!("template {} not defined", go_quote(name)));
                };
                let new_dot = match pipe {
                    Some(p) => self.eval_pipeline(dot, p)?,
                    None => V::plain(Val::Invalid),
                };
                let saved = std::mem::replace(&mut self.vars, vec![("$".into(), new_dot.clone())]);
                let result = self.walk(&new_dot, body);
                self.vars = saved;
                result?;
            }
        }
        Ok(Flow::Normal)
    }

    fn declare(&mut self, name: &str, value: V, assign: bool, pos: usize) -> EResult<()> {
        if assign {
            match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = value,
                None => return err_at(pos, name.to_string(), format!("undefined variable: {name}")),
            }
        } else {
            self.vars.push((name.to_string(), value));
        }
        Ok(())
    }

    fn print_value(&mut self, v: &V) {
        match &v.val {
            Val::Invalid => self.out.push_str("<no value>"),
            Val::Nil if v.boxed => self.out.push_str("<no value>"),
            other => self.out.push_str(&format_v(other)),
        }
    }

    fn eval_pipeline(&mut self, dot: &V, pipe: &Pipe) -> EResult<V> {
        let mut value: Option<V> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_command(dot, cmd, value.take())?;
            value = Some(v.unwrap());
        }
        let value = value.unwrap_or(V::plain(Val::Invalid));
        for name in &pipe.decl {
            if pipe.is_assign {
                let last = pipe.cmds.last().and_then(|c| c.args.first());
                let (p, t) = last.map(|a| (a.pos(), a.text())).unwrap_or((pipe.pos, String::new()));
                match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = value.clone(),
                    None => return err_at(p, t, format!("undefined variable: {name}")),
                }
            } else {
                self.vars.push((name.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn eval_command(&mut self, dot: &V, cmd: &Command, fin: Option<V>) -> EResult<V> {
        let first = &cmd.args[0];
        match first {
            Arg::Field { pos, idents } => return self.eval_field_chain(dot, dot.clone(), *pos, &first.text(), idents, cmd.args.len() > 1 || fin.is_some()),
            Arg::Chain { pos, node, fields } => {
                let base = self.eval_arg_value(dot, node)?;
                return self.eval_field_chain(dot, base, *pos, &first.text(), fields, cmd.args.len() > 1 || fin.is_some());
            }
            Arg::Ident { pos, name } => return self.eval_function(dot, *pos, name, cmd, fin),
            Arg::Pipe(_, p) => {
                self.not_a_function(cmd, &fin)?;
                let mark = self.vars.len();
                let v = self.eval_pipeline(dot, p);
                self.vars.truncate(mark);
                return v;
            }
            Arg::Variable { pos, idents } => {
                let base = self.var(idents[0].as_str(), *pos)?;
                if idents.len() == 1 {
                    self.not_a_function(cmd, &fin)?;
                    return Ok(base);
                }
                return self.eval_field_chain(dot, base, *pos, &first.text(), &idents[1..], cmd.args.len() > 1 || fin.is_some());
            }
            _ => {}
        }
        self.not_a_function(cmd, &fin)?;
        match first {
            Arg::Bool(_, b) => Ok(V::plain(Val::Bool(*b))),
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(pos) => err_at(*pos, "nil".into(), "nil is not a command"),
            Arg::Number { value, text, .. } => Ok(V::plain(ideal(value, text))),
            Arg::Str { value, .. } => Ok(V::plain(Val::Str(Rc::from(value.as_str())))),
            _ => unreachable!("handled above"),
        }
    }

    fn not_a_function(&self, cmd: &Command, fin: &Option<V>) -> EResult<()> {
        if cmd.args.len() > 1 || fin.is_some() {
            let first = &cmd.args[0];
            return err_at(first.pos(), first.text(), format!("can't give argument to non-function {}", first.text()));
        }
        Ok(())
    }

    fn var(&self, name: &str, pos: usize) -> EResult<V> {
        match self.vars.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => err_at(pos, name.to_string(), format!("undefined variable: {name}")),
        }
    }

    fn eval_field_chain(&mut self, _dot: &V, receiver: V, pos: usize, context: &str, idents: &[String], has_args: bool) -> EResult<V> {
        let mut cur = receiver;
        for (i, ident) in idents.iter().enumerate() {
            let last = i + 1 == idents.len();
            cur = self.eval_field(cur, ident, pos, context, last && has_args)?;
        }
        Ok(cur)
    }

    fn eval_field(&self, receiver: V, name: &str, pos: usize, context: &str, has_args: bool) -> EResult<V> {
        let ctx = || context.to_string();
        match &receiver.val {
            Val::Invalid => {
                if self.missing == MissingKey::Error {
                    return err_at(pos, ctx(), format!("nil data; no entry for key {}", go_quote(name)));
                }
                Ok(V::plain(Val::Invalid))
            }
            Val::Nil => err_at(pos, ctx(), format!("nil pointer evaluating interface {{}}.{name}")),
            Val::Map(map) => {
                if has_args {
                    return err_at(pos, ctx(), format!("{name} is not a method but has arguments"));
                }
                match map.get(name) {
                    Some(v) => Ok(V::boxed(v.clone())),
                    None => match self.missing {
                        MissingKey::Default => Ok(V::plain(Val::Invalid)),
                        MissingKey::Error => err_at(pos, ctx(), format!("map has no entry for key {}", go_quote(name))),
                    },
                }
            }
            other => {
                let typ = if receiver.boxed { "interface {}" } else { other.type_name() };
                err_at(pos, ctx(), format!("can't evaluate field {name} in type {typ}"))
            }
        }
    }

    /// Evaluates an argument as an `interface{}` or `reflect.Value` parameter.
    fn eval_arg_value(&mut self, dot: &V, arg: &Arg) -> EResult<V> {
        match arg {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Ok(V::plain(Val::Nil)),
            Arg::Bool(_, b) => Ok(V::plain(Val::Bool(*b))),
            Arg::Number { value, text, .. } => Ok(V::plain(ideal(value, text))),
            Arg::Str { value, .. } => Ok(V::plain(Val::Str(Rc::from(value.as_str())))),
            Arg::Field { pos, idents } => self.eval_field_chain(dot, dot.clone(), *pos, &arg.text(), idents, false),
            Arg::Variable { pos, idents } => {
                let base = self.var(&idents[0], *pos)?;
                self.eval_field_chain(dot, base, *pos, &arg.text(), &idents[1..], false)
            }
            Arg::Pipe(_, p) => {
                let mark = self.vars.len();
                let v = self.eval_pipeline(dot, p);
                self.vars.truncate(mark);
                v
            }
            Arg::Chain { pos, node, fields } => {
                let base = self.eval_arg_value(dot, node)?;
                self.eval_field_chain(dot, base, *pos, &arg.text(), fields, false)
            }
            Arg::Ident { pos, name } => {
                let cmd = Command { pos: *pos, args: vec![arg.clone()] };
                self.eval_function(dot, *pos, name, &cmd, None)
            }
        }
    }

    /// A `string` parameter (printf's format, base64decode's argument).
    fn eval_string_arg(&mut self, dot: &V, arg: &Arg) -> EResult<String> {
        match arg {
            Arg::Str { value, .. } => return Ok(value.clone()),
            Arg::Number { pos, .. } | Arg::Bool(pos, _) => return err_at(*pos, arg.text(), format!("expected string; found {}", arg.text())),
            Arg::Nil(pos) => return err_at(*pos, arg.text(), "cannot assign nil to string"),
            _ => {}
        }
        let v = self.eval_arg_value(dot, arg)?;
        match v.val {
            Val::Str(s) => Ok(s.to_string()),
            Val::Invalid => err_at(arg.pos(), arg.text(), "invalid value; expected string"),
            Val::Nil => err_at(arg.pos(), arg.text(), "invalid value; expected string"),
            other => err_at(arg.pos(), arg.text(), format!("wrong type for value; expected string; got {}", other.type_name())),
        }
    }

    fn eval_function(&mut self, dot: &V, pos: usize, name: &str, cmd: &Command, fin: Option<V>) -> EResult<V> {
        let arg_nodes = &cmd.args[1..];
        let ctx = cmd.text();
        let call_err = |msg: String| -> EResult<V> { err_at(cmd.pos, ctx.clone(), format!("error calling {name}: {msg}")) };
        let nargs = arg_nodes.len() + fin.is_some() as usize;
        let want = |min: usize, exact: bool| -> EResult<()> {
            if (exact && nargs != min) || nargs < min {
                let what = if exact { format!("want {min}") } else { format!("want at least {min}") };
                return err_at(pos, name.to_string(), format!("wrong number of args for {name}: {what} got {nargs}"));
            }
            Ok(())
        };
        // and/or short-circuit over unevaluated arguments.
        if name == "and" || name == "or" {
            want(1, false)?;
            let mut last = V::plain(Val::Invalid);
            for a in arg_nodes {
                let v = self.eval_arg_value(dot, a)?;
                if v.val.truth() == (name == "or") {
                    return Ok(v);
                }
                last = v;
            }
            if let Some(f) = fin {
                return Ok(f);
            }
            return Ok(last);
        }
        // printf / base64decode take a string first; the rest are interface{} values.
        let mut values: Vec<V> = Vec::new();
        let mut format: Option<String> = None;
        for (i, a) in arg_nodes.iter().enumerate() {
            if i == 0 && (name == "printf" || name == "base64decode") {
                format = Some(self.eval_string_arg(dot, a)?);
                continue;
            }
            values.push(self.eval_arg_value(dot, a)?);
        }
        if let Some(f) = fin {
            if (name == "printf" || name == "base64decode") && format.is_none() {
                match f.val {
                    Val::Str(s) => format = Some(s.to_string()),
                    other => {
                        return err_at(cmd.pos, ctx.clone(), format!("wrong type for value; expected string; got {}", other.type_name()));
                    }
                }
            } else {
                values.push(f);
            }
        }
        // interface{} parameters turn a missing value into a nil interface.
        let iface = |v: &V| match v.val {
            Val::Invalid => Val::Nil,
            ref other => other.clone(),
        };
        let vals: Vec<Val> = values.iter().map(iface).collect();
        match name {
            "not" => {
                want(1, true)?;
                Ok(V::plain(Val::Bool(!values[0].val.truth())))
            }
            "len" => {
                want(1, true)?;
                match &values[0].val {
                    Val::Str(s) => Ok(V::plain(Val::Int(s.len() as i64))),
                    Val::List(l) => Ok(V::plain(Val::Int(l.len() as i64))),
                    Val::Map(m) => Ok(V::plain(Val::Int(m.len() as i64))),
                    Val::Nil => call_err("len of nil pointer".into()),
                    Val::Invalid => call_err("reflect: call of reflect.Value.Type on zero Value".into()),
                    other => call_err(format!("len of type {}", other.type_name())),
                }
            }
            "index" => {
                want(1, false)?;
                let mut item = values[0].clone();
                if matches!(item.val, Val::Invalid | Val::Nil) {
                    return call_err("index of untyped nil".into());
                }
                for idx in &values[1..] {
                    item = match (&item.val, &idx.val) {
                        (Val::Nil, _) => return call_err("index of nil pointer".into()),
                        (Val::List(_) | Val::Str(_), Val::Invalid | Val::Nil) => return call_err("cannot index slice/array with nil".into()),
                        (Val::List(l), i) => match i.int() {
                            Some(x) if x >= 0 && (x as usize) < l.len() => V::boxed(l[x as usize].clone()),
                            Some(x) => return call_err(format!("index out of range: {x}")),
                            None => return call_err(format!("cannot index slice/array with type {}", i.type_name())),
                        },
                        (Val::Str(s), i) => match i.int() {
                            Some(x) if x >= 0 && (x as usize) < s.len() => V::plain(Val::U8(s.as_bytes()[x as usize])),
                            Some(x) => return call_err(format!("index out of range: {x}")),
                            None => return call_err(format!("cannot index slice/array with type {}", i.type_name())),
                        },
                        (Val::Map(m), Val::Str(k)) => V::boxed(m.get(k.as_ref()).cloned().unwrap_or(Val::Nil)),
                        (Val::Map(_), Val::Invalid | Val::Nil) => V::boxed(Val::Nil),
                        (Val::Map(_), other) => return call_err(format!("value has type {}; should be string", other.type_name())),
                        (other, _) => return call_err(format!("can't index item of type {}", other.type_name())),
                    };
                }
                Ok(item)
            }
            "slice" => {
                want(1, false)?;
                let item = &values[0].val;
                let idx: Vec<i64> = values[1..]
                    .iter()
                    .map(|v| v.val.int().ok_or_else(|| format!("cannot index slice/array with type {}", v.val.type_name())))
                    .collect::<Result<_, _>>()
                    .or_else(call_err_string(&call_err))?;
                if idx.len() > 3 {
                    return call_err(format!("too many slice indexes: {}", idx.len()));
                }
                let len = match item {
                    Val::Str(s) => s.len(),
                    Val::List(l) => l.len(),
                    Val::Invalid | Val::Nil => return call_err("slice of untyped nil".into()),
                    other => return call_err(format!("can't slice item of type {}", other.type_name())),
                };
                if matches!(item, Val::Str(_)) && idx.len() == 3 {
                    return call_err("cannot 3-index slice a string".into());
                }
                let mut bounds = [0usize, len, len];
                for (i, x) in idx.iter().enumerate() {
                    if *x < 0 || *x as usize > len {
                        return call_err(format!("index out of range: {x}"));
                    }
                    bounds[i] = *x as usize;
                }
                if bounds[0] > bounds[1] {
                    return call_err(format!("invalid slice index: {} > {}", bounds[0], bounds[1]));
                }
                Ok(match item {
                    Val::Str(s) => V::plain(Val::Str(Rc::from(String::from_utf8_lossy(&s.as_bytes()[bounds[0]..bounds[1]]).as_ref()))),
                    Val::List(l) => V::plain(Val::List(Rc::new(l[bounds[0]..bounds[1]].to_vec()))),
                    _ => unreachable!("checked above"),
                })
            }
            "print" => Ok(V::plain(Val::Str(Rc::from(sprint(&vals).as_str())))),
            "println" => Ok(V::plain(Val::Str(Rc::from(sprintln(&vals).as_str())))),
            "printf" => {
                let Some(format) = format else { return want(1, false).map(|_| V::plain(Val::Invalid)) };
                Ok(V::plain(Val::Str(Rc::from(sprintf(&format, &vals).as_str()))))
            }
            "html" | "js" | "urlquery" => {
                let text = match vals.as_slice() {
                    [Val::Str(s)] => s.to_string(),
                    other => sprint(other),
                };
                let escaped = match name {
                    "html" => html_escape(&text),
                    "js" => js_escape(&text),
                    _ => query_escape(&text),
                };
                Ok(V::plain(Val::Str(Rc::from(escaped.as_str()))))
            }
            "eq" => {
                want(1, false)?;
                if values.len() < 2 {
                    return call_err("missing argument for comparison".into());
                }
                let a = &values[0].val;
                for b in &values[1..] {
                    match compare_eq(a, &b.val) {
                        Ok(true) => return Ok(V::plain(Val::Bool(true))),
                        Ok(false) => {}
                        Err(e) => return call_err(e),
                    }
                }
                Ok(V::plain(Val::Bool(false)))
            }
            "ne" | "lt" | "le" | "gt" | "ge" => {
                want(2, true)?;
                let (a, b) = (&values[0].val, &values[1].val);
                let result = match name {
                    "ne" => compare_eq(a, b).map(|t| !t),
                    "lt" => compare_lt(a, b),
                    "le" => compare_lt(a, b).and_then(|lt| if lt { Ok(true) } else { compare_eq(a, b) }),
                    "gt" => compare_lt(a, b).and_then(|lt| if lt { Ok(false) } else { compare_eq(a, b).map(|e| !e) }),
                    _ => compare_lt(a, b).map(|lt| !lt),
                };
                match result {
                    Ok(t) => Ok(V::plain(Val::Bool(t))),
                    Err(e) => call_err(e),
                }
            }
            "exists" => {
                want(1, false)?;
                let mut item = values[0].val.clone();
                for idx in &values[1..] {
                    item = match (&item, &idx.val) {
                        (Val::Invalid | Val::Nil, _) => return Ok(V::plain(Val::Bool(false))),
                        (Val::List(l), i) => match i.int() {
                            Some(x) if x >= 0 && (x as usize) < l.len() => l[x as usize].clone(),
                            _ => return Ok(V::plain(Val::Bool(false))),
                        },
                        (Val::Str(s), i) => match i.int() {
                            Some(x) if x >= 0 && (x as usize) < s.len() => Val::U8(s.as_bytes()[x as usize]),
                            _ => return Ok(V::plain(Val::Bool(false))),
                        },
                        (Val::Map(m), Val::Str(k)) => m.get(k.as_ref()).cloned().unwrap_or(Val::Nil),
                        _ => return Ok(V::plain(Val::Bool(false))),
                    };
                }
                Ok(V::plain(Val::Bool(!matches!(item, Val::Nil | Val::Invalid))))
            }
            "base64decode" => {
                let Some(text) = format else { return want(1, true).map(|_| V::plain(Val::Invalid)) };
                if !values.is_empty() {
                    return want(1, true).map(|_| V::plain(Val::Invalid));
                }
                match base64_decode(&text) {
                    Ok(bytes) => Ok(V::plain(Val::Str(Rc::from(String::from_utf8_lossy(&bytes).as_ref())))),
                    Err(at) => call_err(format!("base64 decode failed: illegal base64 data at input byte {at}")),
                }
            }
            "call" => call_err("call of nil".into()),
            _ => err_at(pos, name.to_string(), format!("{name} is not a defined function")),
        }
    }
}

fn call_err_string(f: &dyn Fn(String) -> EResult<V>) -> impl Fn(String) -> EResult<Vec<i64>> + '_ {
    move |msg| f(msg).map(|_| Vec::new())
}

/// An ideal constant as exec's idealConstant types it: float64 when the literal has a decimal
/// point or exponent (and is not a hex int or a character), int otherwise.
fn ideal(value: &Num, text: &str) -> Val {
    match value {
        Num::Int(i) => Val::Int(*i),
        Num::Float(f) => {
            let hex_int = text.to_ascii_lowercase().trim_start_matches(['+', '-']).starts_with("0x") && !text.contains(['p', 'P']);
            if !hex_int && text.contains(['.', 'e', 'E', 'p', 'P']) {
                Val::Float(*f)
            } else {
                Val::Int(*f as i64)
            }
        }
    }
}

#[derive(PartialEq)]
enum Kind {
    Invalid,
    Bool,
    Int,
    Float,
    Str,
    Other,
}

fn basic_kind(v: &Val) -> Kind {
    match v {
        Val::Invalid | Val::Nil => Kind::Invalid,
        Val::Bool(_) => Kind::Bool,
        Val::Int(_) | Val::I64(_) | Val::U8(_) => Kind::Int,
        Val::Float(_) => Kind::Float,
        Val::Str(_) => Kind::Str,
        _ => Kind::Other,
    }
}

fn compare_eq(a: &Val, b: &Val) -> Result<bool, String> {
    let (ka, kb) = (basic_kind(a), basic_kind(b));
    if ka != kb {
        if ka != Kind::Invalid && kb != Kind::Invalid {
            return Err("incompatible types for comparison".into());
        }
        return Ok(false);
    }
    Ok(match (a, b) {
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Float(x), Val::Float(y)) => x == y,
        (Val::Str(x), Val::Str(y)) => x == y,
        _ if ka == Kind::Int => a.int() == b.int(),
        _ if ka == Kind::Invalid => true,
        (other, _) => return Err(format!("non-comparable type {}: {}", format_v(other), other.type_name())),
    })
}

fn compare_lt(a: &Val, b: &Val) -> Result<bool, String> {
    let (ka, kb) = (basic_kind(a), basic_kind(b));
    if matches!(ka, Kind::Invalid | Kind::Other) || matches!(kb, Kind::Invalid | Kind::Other) {
        return Err("invalid type for comparison".into());
    }
    if ka != kb {
        return Err("incompatible types for comparison".into());
    }
    match (a, b) {
        (Val::Bool(_), _) => Err("invalid type for comparison".into()),
        (Val::Float(x), Val::Float(y)) => Ok(x < y),
        (Val::Str(x), Val::Str(y)) => Ok(x < y),
        _ => Ok(a.int() < b.int()),
    }
}

fn html_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{fffd}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

fn js_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn query_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// base64.StdEncoding.DecodeString; the error is the offset of the first bad byte.
pub fn base64_decode(s: &str) -> Result<Vec<u8>, usize> {
    let b = s.as_bytes();
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let chunk = &b[i..(i + 4).min(b.len())];
        if chunk.len() < 4 {
            return Err(i + chunk.iter().position(|c| val(*c).is_none()).unwrap_or(chunk.len()).min(chunk.len()));
        }
        let mut n = 0u32;
        let mut pad = 0;
        for (j, &c) in chunk.iter().enumerate() {
            if c == b'=' && j >= 2 && i + 4 == b.len() {
                pad += 1;
                n <<= 6;
                continue;
            }
            if pad > 0 {
                return Err(i + j);
            }
            n = (n << 6) | val(c).ok_or(i + j)?;
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
        i += 4;
    }
    Ok(out)
}

/// Runs a template as kubectl's go-template printer does: Ok(output) or the text kubectl writes
/// to stdout (partial output and the debugging block) and the error it prints.
pub fn print(template: &str, data: &Value, missing: MissingKey) -> Result<String, (String, String)> {
    let parsed = Template::parse(template).map_err(|e| (String::new(), format!("error: error parsing template {template}, {e}")))?;
    parsed.execute(data, missing).map_err(|(partial, e)| {
        let raw = serde_json::to_string(data).unwrap_or_default();
        let given = format_v(&Val::from_json(data));
        let stdout = format!(
            "{partial}Error executing template: {e}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{template}\n\traw data was:\n\t\t{raw}\n\tobject given to template engine was:\n\t\t{given}\n\n"
        );
        (stdout, format!("error: error executing template {}: {e}", go_quote(template)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data() -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {"b": "2", "a": "1", "c": "3"}, "creationTimestamp": null},
            "data": {"a": "b"}, "spec": {"replicas": 3, "ratio": 0.5, "nodeName": "node-1", "list": [1, "two", null, {"k": "v"}], "empty": []}})
    }

    fn run(t: &str) -> Result<String, String> {
        let tmpl = Template::parse(t)?;
        tmpl.execute(&data(), MissingKey::Default).map_err(|(_, e)| e)
    }

    // Vectors observed with kubectl v1.32 (`kubectl label --local -f ... -o go-template=...`)
    // and the cases of text/template's exec_test.go they mirror (TestExecute: fields, maps,
    // variables, if/else, range, with, and/or/not, eq/lt, index, len, slice, printf, pipes,
    // html/js/urlquery, break/continue, define/template).
    #[test]
    fn executes_like_go_text_template() {
        let cases: &[(&str, &str)] = &[
            ("{{.metadata.name}}", "x"),
            ("{{.spec.nodeName}}", "node-1"),
            ("{{.nope}}", "<no value>"),
            ("{{.metadata.nope.x}}", "<no value>"),
            ("{{.metadata.creationTimestamp}}", "<no value>"),
            ("{{.metadata.labels}}", "map[a:1 b:2 c:3]"),
            ("{{.spec.list}}", "[1 two <nil> map[k:v]]"),
            ("{{.spec.empty}}", "[]"),
            ("{{.spec.replicas}} {{.spec.ratio}}", "3 0.5"),
            ("{{printf \"%v|%s|%d|%q|%5s|%-5s|%05d|%x|%t|%T|%T|%T\" .metadata.name .metadata.name 42 \"a\\\"b\" \"ab\" \"ab\" 42 255 true 3 3.5 .metadata}}",
             "x|x|42|\"a\\\"b\"|   ab|ab   |00042|ff|true|int|float64|map[string]interface {}"),
            ("{{printf \"%d %s\" \"x\" 5}}", "%!d(string=x) %!s(int=5)"),
            ("{{printf \"%d\"}}", "%!d(MISSING)"),
            ("{{printf \"%d\" 1 2}}", "1%!(EXTRA int=2)"),
            ("{{printf \"%T\" .spec.replicas}}", "int64"),
            ("{{1.5}} {{1e6}} {{100000.0}} {{0x10}} {{-3}} {{1e21}} {{.000001}} {{\"a\\tb\"}} {{`raw\\n`}} {{true}}", "1.5 1e+06 100000 16 -3 1e+21 1e-06 a\tb raw\\n true"),
            ("{{if eq .metadata.name \"x\" \"y\"}}yes{{else if .nope}}no{{else}}else{{end}}", "yes"),
            ("{{if .nope}}a{{else if eq .kind \"ConfigMap\"}}cm{{else}}c{{end}}", "cm"),
            ("{{with .nope}}A{{else}}B{{end}} {{with .metadata}}{{.name}}{{end}}", "B x"),
            ("{{with $x := .metadata}}{{$x.name}}{{else with .data}}D{{end}}", "x"),
            ("{{with .nope}}{{else with .data}}{{.a}}{{end}}", "b"),
            ("{{range $i, $v := .metadata.labels}}{{$i}}:{{$v}},{{end}}", "a:1,b:2,c:3,"),
            ("{{range $i, $v := .spec.list}}{{$i}}={{$v}};{{end}}", "0=1;1=two;2=<no value>;3=map[k:v];"),
            ("{{range .spec.list}}[{{.}}]{{end}}", "[1][two][<no value>][map[k:v]]"),
            ("{{range .nope}}x{{else}}empty{{end}}", "empty"),
            ("{{range .spec.empty}}x{{else}}empty{{end}}", "empty"),
            ("{{range $v := .metadata.labels}}{{$v}}{{end}}", "123"),
            ("{{range 3}}{{.}}{{end}}", "012"),
            ("{{range .metadata.labels}}{{if eq . \"2\"}}{{break}}{{end}}{{.}}{{end}}", "1"),
            ("{{range .metadata.labels}}{{if eq . \"2\"}}{{continue}}{{end}}{{.}}{{end}}", "13"),
            ("{{- /* c */ -}}  {{ \"a\" -}}   b  {{- \"c\" }}", "abc"),
            ("a {{- \"b\"}} {{\"c\" -}} d", "ab cd"),
            ("{{$x := .metadata.name}}{{$x}} {{$.kind}} {{$x = \"z\"}}{{$x}}", "x ConfigMap z"),
            ("{{ $x := 1 }}{{ if true }}{{ $x := 2 }}{{ $x }}{{ end }}{{ $x }}", "21"),
            ("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}", "2"),
            ("{{and 1 0 \"x\"}} {{or 0 \"\" \"y\"}} {{not 0}}", "0 y true"),
            ("{{and .nope 1}}|{{or .nope 1}}|{{not .nope}}", "<no value>|1|true"),
            ("{{eq .nope \"x\"}}", "false"),
            ("{{lt 1 2}} {{lt \"a\" \"b\"}} {{len \"abc\"}} {{index \"abc\" 1}}", "true true 3 98"),
            ("{{eq 1 2 1}} {{ne 1 2}} {{eq \"x\" .metadata.name}} {{ge 2 2}} {{lt 1.5 2.5}} {{gt .spec.replicas 2}} {{le 3 .spec.replicas}}", "true true true true true true true"),
            ("{{.metadata.name | printf \"%s!\"}} {{\"x\" | len}}", "x! 1"),
            ("{{\"a\" | printf \"%s-%s\" \"b\"}}", "b-a"),
            ("{{.metadata.name | len | printf \"%03d\"}}", "001"),
            ("{{print 1 2 \"a\" \"b\" 3}} {{println \"a\" 1}}", "1 2ab3 a 1\n"),
            ("{{print .nope}}|{{printf \"%s %v %d\" .nope .nope .nope}}", "<nil>|%!s(<nil>) <nil> %!d(<nil>)"),
            ("{{index .metadata.labels \"zz\"}}|{{index .metadata.labels \"a\"}}|{{index .spec.list 3 \"k\"}}", "<no value>|1|v"),
            ("{{index .metadata.labels}}", "map[a:1 b:2 c:3]"),
            ("{{exists . \"metadata\" \"name\"}} {{exists . \"nope\"}} {{base64decode \"aGk=\"}}", "true false hi"),
            ("{{printf \"%v\" .data}}", "map[a:b]"),
            ("{{printf \"%v %v\" (index .metadata \"labels\") .metadata.nope}}", "map[a:1 b:2 c:3] <nil>"),
            ("{{(.metadata).name}} {{ (print \"a\") }}", "x a"),
            ("{{printf \"%s\" 1.5}} {{printf \"%d\" 1.5}} {{printf \"%q\" 5}} {{printf \"%x\" -255}} {{printf \"%08.3f\" -3.14159}}", "%!s(float64=1.5) %!d(float64=1.5) '\\x05' -ff -003.142"),
            ("{{ \"\\x41\\u00e9\\101\\n\" }}{{'a'}}", "AéA\n97"),
            ("{{ 1_000 }} {{ 0b101 }} {{ 0o17 }} {{ 017 }} {{ 1e3 }} {{ 0x1p4 }}", "1000 5 15 15 1000 16"),
            ("{{ 3 -}}4", "34"),
            ("{{-3}}", "-3"),
            ("{{printf \"%6.2f|%e|%g|%+d|% d|%x|%X|%o|%b|%c|%U|%#v|%v\" 3.14159 1234.5 0.000012 5 5 \"hi\" 255 8 5 65 65 \"s\" 1.0}}", "  3.14|1.234500e+03|1.2e-05|+5| 5|6869|FF|10|101|A|U+0041|\"s\"|1"),
            ("{{printf \"%s\" .metadata.labels}} {{printf \"%d\" .metadata.labels}}", "map[a:1 b:2 c:3] map[%!d(string=a):%!d(string=1) %!d(string=b):%!d(string=2) %!d(string=c):%!d(string=3)]"),
            ("{{printf \"%5.1f|%-8q|%+.2e|%x\" 3.14159 \"a\" 12345.678 \"hé\"}}", "  3.1|\"a\"     |+1.23e+04|68c3a9"),
            ("{{printf \"%v %v\" 1.0 0.1}} {{printf \"%.3g %g %g\" 3.14159 100000000.0 0.00001}}", "1 0.1 3.14 1e+08 1e-05"),
            ("{{html \"<a>\"}} {{js \"a'b\"}} {{urlquery \"a b&\"}} {{slice \"abcd\" 1 3}}", "&lt;a&gt; a\\'b a+b%26 bc"),
            ("{{slice .spec.list 1 2}}", "[two]"),
            ("{{define \"x\"}}X{{.}}{{end}}{{template \"x\" \"y\"}}", "Xy"),
            ("{{block \"b\" .metadata}}[{{.name}}]{{end}}", "[x]"),
            ("{{$}}", "map[apiVersion:v1 data:map[a:b] kind:ConfigMap metadata:map[creationTimestamp:<nil> labels:map[a:1 b:2 c:3] name:x] spec:map[empty:[] list:[1 two <nil> map[k:v]] nodeName:node-1 ratio:0.5 replicas:3]]"),
            ("line1\n{{.kind}}\n", "line1\nConfigMap\n"),
        ];
        for (t, want) in cases {
            assert_eq!(run(t).as_deref(), Ok(*want), "template {t}");
        }
    }

    #[test]
    fn execution_errors_match_go() {
        let cases: &[(&str, &str)] = &[
            ("{{.data.a.b}}", "template: output:1:7: executing \"output\" at <.data.a.b>: can't evaluate field b in type interface {}"),
            ("{{.metadata.name.x}}", "template: output:1:11: executing \"output\" at <.metadata.name.x>: can't evaluate field x in type interface {}"),
            ("{{.metadata.creationTimestamp.foo}}", "template: output:1:11: executing \"output\" at <.metadata.creationTimestamp.foo>: nil pointer evaluating interface {}.foo"),
            ("{{nil}}", "template: output:1:2: executing \"output\" at <nil>: nil is not a command"),
            ("{{and}}", "template: output:1:2: executing \"output\" at <and>: wrong number of args for and: want at least 1 got 0"),
            ("{{eq 1 1.0}}", "template: output:1:2: executing \"output\" at <eq 1 1.0>: error calling eq: incompatible types for comparison"),
            ("{{eq \"a\" 1}}", "template: output:1:2: executing \"output\" at <eq \"a\" 1>: error calling eq: incompatible types for comparison"),
            ("{{eq 1}}", "template: output:1:2: executing \"output\" at <eq 1>: error calling eq: missing argument for comparison"),
            ("{{lt 1 \"a\"}}", "template: output:1:2: executing \"output\" at <lt 1 \"a\">: error calling lt: incompatible types for comparison"),
            ("{{eq .data .data}}", "template: output:1:2: executing \"output\" at <eq .data .data>: error calling eq: non-comparable type map[a:b]: map[string]interface {}"),
            ("{{len .nope}}", "template: output:1:2: executing \"output\" at <len .nope>: error calling len: reflect: call of reflect.Value.Type on zero Value"),
            ("{{len 3}}", "template: output:1:2: executing \"output\" at <len 3>: error calling len: len of type int"),
            ("{{index .nope \"a\"}}", "template: output:1:2: executing \"output\" at <index .nope \"a\">: error calling index: index of untyped nil"),
            ("{{index .data 1}}", "template: output:1:2: executing \"output\" at <index .data 1>: error calling index: value has type int; should be string"),
            ("{{index .metadata.labels \"zz\"}}|{{index .data \"a\" \"b\"}}", "template: output:1:34: executing \"output\" at <index .data \"a\" \"b\">: error calling index: cannot index slice/array with type string"),
            ("{{index .spec.list 9}}", "template: output:1:2: executing \"output\" at <index .spec.list 9>: error calling index: index out of range: 9"),
            ("{{slice .metadata.name 0 5}}", "template: output:1:2: executing \"output\" at <slice .metadata.name 0 5>: error calling slice: index out of range: 5"),
            ("{{base64decode \"!!\"}}", "template: output:1:2: executing \"output\" at <base64decode \"!!\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 0"),
            ("{{base64decode .nope}}", "template: output:1:15: executing \"output\" at <.nope>: invalid value; expected string"),
            ("{{base64decode 1}}", "template: output:1:15: executing \"output\" at <1>: expected string; found 1"),
            ("{{base64decode .metadata}}", "template: output:1:15: executing \"output\" at <.metadata>: wrong type for value; expected string; got map[string]interface {}"),
            ("{{range .metadata.name}}x{{end}}", "template: output:1:17: executing \"output\" at <.metadata.name>: range can't iterate over x"),
            ("{{.metadata.name \"x\"}}", "template: output:1:11: executing \"output\" at <.metadata.name>: name is not a method but has arguments"),
            ("{{\"x\" | .metadata.name}}", "template: output:1:17: executing \"output\" at <.metadata.name>: name is not a method but has arguments"),
            ("{{\"a\" \"b\"}}", "template: output:1:2: executing \"output\" at <\"a\">: can't give argument to non-function \"a\""),
            ("{{$x = 1}}", "template: output:1:7: executing \"output\" at <1>: undefined variable: $x"),
            ("a\n b {{len 3}}", "template: output:2:5: executing \"output\" at <len 3>: error calling len: len of type int"),
            ("{{template \"x\"}}", "template: output:1:11: executing \"output\" at <{{template \"x\"}}>: template \"x\" not defined"),
        ];
        for (t, want) in cases {
            assert_eq!(run(t), Err(want.to_string()), "template {t}");
        }
        let strict = Template::parse("{{.nope}}").unwrap().execute(&data(), MissingKey::Error);
        assert_eq!(strict.unwrap_err().1, "template: output:1:2: executing \"output\" at <.nope>: map has no entry for key \"nope\"");
        // Output written before the error is kept (kubectl prints it before the debug block).
        let partial = Template::parse("ab{{index .data 1}}cd").unwrap().execute(&data(), MissingKey::Default);
        assert_eq!(partial.unwrap_err().0, "ab");
    }

    #[test]
    fn parse_errors_match_go() {
        let cases: &[(&str, &str)] = &[
            ("{{foo}}", "template: output:1: function \"foo\" not defined"),
            ("{{ upper .metadata.name }}", "template: output:1: function \"upper\" not defined"),
            ("{{end}}", "template: output:1: unexpected {{end}}"),
            ("{{else}}", "template: output:1: unexpected {{else}}"),
            ("{{if}}{{end}}", "template: output:1: missing value for if"),
            ("{{range}}", "template: output:1: missing value for range"),
            ("{{\"abc}}", "template: output:1: unterminated quoted string"),
            ("{{ .a b }}", "template: output:1: function \"b\" not defined"),
            ("{{$y}}", "template: output:1: undefined variable \"$y\""),
            ("{{.foo", "template: output:1: unclosed action"),
            ("{{.foo}", "template: output:1: bad character U+007D '}'"),
            ("{{}}", "template: output:1: missing value for command"),
            ("{{.a | \"x\"}}", "template: output:1: non executable command in pipeline stage 2"),
            ("{{(1}}", "template: output:1: unclosed left paren"),
            ("{{1)}}", "template: output:1: unexpected right paren"),
            ("{{if .a}}", "template: output:1: unexpected EOF"),
            ("{{break}}", "template: output:1: {{break}} outside {{range}}"),
            ("{{range $a, $b, $c := .x}}{{end}}", "template: output:1: too many declarations in range"),
            ("{{99999999999999999999}}", "template: output:1: integer overflow: \"99999999999999999999\""),
            ("{{0x}}", "template: output:1: illegal number syntax: \"0x\""),
            ("{{ - 3}}", "template: output:1: illegal number syntax: \"-\""),
            ("{{/* unclosed }}", "template: output:1: unclosed comment"),
            ("{{range $k, $v := .data}}{{$k}}{{end}}{{$k}}", "template: output:1: undefined variable \"$k\""),
        ];
        for (t, want) in cases {
            assert_eq!(Template::parse(t).map(|_| ()), Err(want.to_string()), "template {t}");
        }
        // `{{.a | }}` is accepted by Go (an empty last stage) and prints <no value>.
        assert_eq!(run("{{.a | }}").as_deref(), Ok("<no value>"));
    }

    #[test]
    fn kubectl_printer_wraps_errors() {
        let (stdout, stderr) = print("{{.data.a.b}}", &json!({"data": {"a": "b"}}), MissingKey::Default).unwrap_err();
        assert_eq!(stderr, "error: error executing template \"{{.data.a.b}}\": template: output:1:7: executing \"output\" at <.data.a.b>: can't evaluate field b in type interface {}");
        assert!(stdout.starts_with("Error executing template: template: output:1:7"), "{stdout}");
        assert!(stdout.ends_with("\tobject given to template engine was:\n\t\tmap[data:map[a:b]]\n\n"), "{stdout}");
        let (_, stderr) = print("{{.foo", &json!({}), MissingKey::Default).unwrap_err();
        assert_eq!(stderr, "error: error parsing template {{.foo, template: output:1: unclosed action");
    }

    #[test]
    fn go_float_formatting() {
        for (f, want) in
            [(1.0, "1"), (0.5, "0.5"), (1e6, "1e+06"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (1e-5, "1e-05"), (0.0001, "0.0001"), (-2.5, "-2.5")]
        {
            assert_eq!(format_v(&Val::Float(f)), want, "{f}");
        }
    }
}
