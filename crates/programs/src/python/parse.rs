//! Python subset: tokenizer (with INDENT/DEDENT) and parser to an `Arc`-shared AST.

use std::sync::Arc;

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Identifier or keyword.
    Name(String),
    /// Integer literal.
    Int(i128),
    /// Float literal.
    Float(f64),
    /// String literal (already unescaped) and whether it is an f-string.
    Str(String, bool),
    /// Operator or punctuation.
    Op(String),
    /// End of a logical line.
    Newline,
    /// Indentation increase.
    Indent,
    /// Indentation decrease.
    Dedent,
    /// End of input.
    Eof,
}

/// A token with its position (1-based line, 0-based column).
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Line.
    pub line: usize,
    /// Column.
    pub col: usize,
}

/// A syntax error: (kind, message, line, column).
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxErr {
    /// `SyntaxError` or `IndentationError`.
    pub kind: &'static str,
    /// Message.
    pub msg: String,
    /// Line.
    pub line: usize,
    /// Column (caret position).
    pub col: usize,
}

fn serr(kind: &'static str, msg: impl Into<String>, line: usize, col: usize) -> SyntaxErr {
    SyntaxErr { kind, msg: msg.into(), line, col }
}

/// Tokenizes Python source.
pub fn tokenize(src: &str) -> Result<Vec<Token>, SyntaxErr> {
    let lines: Vec<&str> = src.split('\n').collect();
    let mut toks = Vec::new();
    let mut indents = vec![0usize];
    let mut depth: Vec<(char, usize, usize)> = Vec::new();
    let mut li = 0;
    let mut pending_cont = false;
    while li < lines.len() {
        let raw = lines[li].trim_end_matches('\r');
        let lineno = li + 1;
        let chars: Vec<char> = raw.chars().collect();
        let mut i = 0;
        if depth.is_empty() && !pending_cont {
            let mut col = 0;
            while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
                col += if chars[i] == '\t' { 8 - col % 8 } else { 1 };
                i += 1;
            }
            if i >= chars.len() || chars[i] == '#' {
                li += 1;
                continue;
            }
            let cur = *indents.last().unwrap_or(&0);
            if col > cur {
                indents.push(col);
                toks.push(Token { tok: Tok::Indent, line: lineno, col });
            } else if col < cur {
                while col < *indents.last().unwrap_or(&0) {
                    indents.pop();
                    toks.push(Token { tok: Tok::Dedent, line: lineno, col });
                }
                if col != *indents.last().unwrap_or(&0) {
                    return Err(serr("IndentationError", "unindent does not match any outer indentation level", lineno, col));
                }
            }
        }
        pending_cont = false;
        while i < chars.len() {
            let c = chars[i];
            if c == ' ' || c == '\t' {
                i += 1;
                continue;
            }
            if c == '#' {
                break;
            }
            if c == '\\' && i + 1 == chars.len() {
                pending_cont = true;
                i += 1;
                continue;
            }
            let col = i;
            if c.is_ascii_digit() || (c == '.' && i + 1 < chars.len() && chars[i + 1].is_ascii_digit()) {
                let st = i;
                let mut is_float = false;
                if c == '0' && i + 1 < chars.len() && matches!(chars[i + 1], 'x' | 'X' | 'o' | 'O' | 'b' | 'B') {
                    let radix = match chars[i + 1] {
                        'x' | 'X' => 16,
                        'o' | 'O' => 8,
                        _ => 2,
                    };
                    i += 2;
                    let s2 = i;
                    while i < chars.len() && (chars[i].is_ascii_hexdigit() || chars[i] == '_') {
                        i += 1;
                    }
                    let t: String = chars[s2..i].iter().filter(|&&c| c != '_').collect();
                    toks.push(Token { tok: Tok::Int(i128::from_str_radix(&t, radix).unwrap_or(0)), line: lineno, col });
                    continue;
                }
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '_' || chars[i] == '.') {
                    if chars[i] == '.' {
                        is_float = true;
                    }
                    i += 1;
                }
                if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                    is_float = true;
                    i += 1;
                    if i < chars.len() && (chars[i] == '+' || chars[i] == '-') {
                        i += 1;
                    }
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                let t: String = chars[st..i].iter().filter(|&&c| c != '_').collect();
                if is_float {
                    toks.push(Token { tok: Tok::Float(t.parse().unwrap_or(0.0)), line: lineno, col });
                } else {
                    match t.parse::<i128>() {
                        Ok(v) => toks.push(Token { tok: Tok::Int(v), line: lineno, col }),
                        Err(_) => toks.push(Token { tok: Tok::Float(t.parse().unwrap_or(f64::INFINITY)), line: lineno, col }),
                    }
                }
                continue;
            }
            // String prefixes.
            let mut j = i;
            let mut prefix = String::new();
            while j < chars.len() && j - i < 2 && matches!(chars[j].to_ascii_lowercase(), 'r' | 'f' | 'b' | 'u') {
                prefix.push(chars[j].to_ascii_lowercase());
                j += 1;
            }
            if j < chars.len() && (chars[j] == '"' || chars[j] == '\'') {
                let q = chars[j];
                let triple = j + 2 < chars.len() && chars[j + 1] == q && chars[j + 2] == q;
                let raw_s = prefix.contains('r');
                let fstr = prefix.contains('f');
                let mut s = String::new();
                if triple {
                    let mut k = j + 3;
                    let mut cur_line = li;
                    let mut cur: Vec<char> = chars.clone();
                    loop {
                        if k >= cur.len() {
                            cur_line += 1;
                            if cur_line >= lines.len() {
                                return Err(serr(
                                    "SyntaxError",
                                    format!("unterminated triple-quoted string literal (detected at line {})", lines.len()),
                                    lineno,
                                    col,
                                ));
                            }
                            s.push('\n');
                            cur = lines[cur_line].trim_end_matches('\r').chars().collect();
                            k = 0;
                            continue;
                        }
                        if cur[k] == q && k + 2 < cur.len() && cur[k + 1] == q && cur[k + 2] == q {
                            k += 3;
                            break;
                        }
                        if cur[k] == '\\' && !raw_s && k + 1 < cur.len() {
                            push_escape(&mut s, cur[k + 1]);
                            k += 2;
                            continue;
                        }
                        s.push(cur[k]);
                        k += 1;
                    }
                    toks.push(Token { tok: Tok::Str(s, fstr), line: lineno, col });
                    if cur_line != li {
                        li = cur_line;
                        let rest: String = cur[k..].iter().collect();
                        // Continue tokenizing the remainder of the closing line.
                        let more = tokenize_rest(&rest, li + 1, k, &mut depth)?;
                        toks.extend(more);
                        i = usize::MAX;
                        break;
                    }
                    i = k;
                    continue;
                }
                let mut k = j + 1;
                loop {
                    if k >= chars.len() {
                        return Err(serr("SyntaxError", format!("unterminated string literal (detected at line {lineno})"), lineno, col));
                    }
                    if chars[k] == q {
                        k += 1;
                        break;
                    }
                    if chars[k] == '\\' && k + 1 < chars.len() {
                        if raw_s {
                            s.push('\\');
                            s.push(chars[k + 1]);
                        } else {
                            push_escape(&mut s, chars[k + 1]);
                        }
                        k += 2;
                        continue;
                    }
                    s.push(chars[k]);
                    k += 1;
                }
                toks.push(Token { tok: Tok::Str(s, fstr), line: lineno, col });
                i = k;
                continue;
            }
            if c.is_alphabetic() || c == '_' {
                let st = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                toks.push(Token { tok: Tok::Name(chars[st..i].iter().collect()), line: lineno, col });
                continue;
            }
            let three: String = chars[i..(i + 3).min(chars.len())].iter().collect();
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let op = if ["**=", "//=", ">>=", "<<=", "..."].contains(&three.as_str()) {
                three
            } else if ["**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "->", "<<", ">>", ":=", "|=", "&="].contains(&two.as_str()) {
                two
            } else if "+-*/%<>=()[]{}:,.;@&|^~!".contains(c) {
                c.to_string()
            } else {
                return Err(serr("SyntaxError", format!("invalid character '{c}' (U+{:04X})", c as u32), lineno, col));
            };
            match op.as_str() {
                "(" | "[" | "{" => depth.push((op.chars().next().unwrap_or('('), lineno, col)),
                ")" | "]" | "}" => {
                    let want = match op.as_str() {
                        ")" => '(',
                        "]" => '[',
                        _ => '{',
                    };
                    match depth.pop() {
                        Some((o, _, _)) if o == want => {}
                        Some((o, l, _)) => {
                            return Err(serr(
                                "SyntaxError",
                                format!(
                                    "closing parenthesis '{op}' does not match opening parenthesis '{o}'{}",
                                    if l != lineno { format!(" on line {l}") } else { String::new() }
                                ),
                                lineno,
                                col,
                            ))
                        }
                        None => return Err(serr("SyntaxError", format!("unmatched '{op}'"), lineno, col)),
                    }
                }
                _ => {}
            }
            i += op.chars().count();
            toks.push(Token { tok: Tok::Op(op), line: lineno, col });
        }
        if i != usize::MAX
            && depth.is_empty()
            && !pending_cont
            && toks.last().is_some_and(|t| t.tok != Tok::Newline && t.tok != Tok::Indent && t.tok != Tok::Dedent)
        {
            toks.push(Token { tok: Tok::Newline, line: lineno, col: chars.len() });
        } else if i == usize::MAX && depth.is_empty() {
            toks.push(Token { tok: Tok::Newline, line: li + 1, col: 0 });
        }
        li += 1;
    }
    if let Some((o, l, c)) = depth.first() {
        return Err(serr("SyntaxError", format!("'{o}' was never closed"), *l, *c));
    }
    let last_line = lines.len();
    if toks.last().is_some_and(|t| t.tok != Tok::Newline) && !toks.is_empty() {
        toks.push(Token { tok: Tok::Newline, line: last_line, col: 0 });
    }
    while indents.len() > 1 {
        indents.pop();
        toks.push(Token { tok: Tok::Dedent, line: last_line, col: 0 });
    }
    toks.push(Token { tok: Tok::Eof, line: last_line.max(1), col: 0 });
    Ok(toks)
}

fn tokenize_rest(rest: &str, line: usize, col0: usize, depth: &mut Vec<(char, usize, usize)>) -> Result<Vec<Token>, SyntaxErr> {
    let mut out = Vec::new();
    if rest.trim().is_empty() || rest.trim_start().starts_with('#') {
        return Ok(out);
    }
    let inner = tokenize(rest)?;
    for mut t in inner {
        if matches!(t.tok, Tok::Newline | Tok::Eof | Tok::Indent | Tok::Dedent) {
            continue;
        }
        if let Tok::Op(o) = &t.tok {
            match o.as_str() {
                "(" | "[" | "{" => depth.push((o.chars().next().unwrap_or('('), line, t.col)),
                ")" | "]" | "}" => {
                    depth.pop();
                }
                _ => {}
            }
        }
        t.line = line;
        t.col += col0;
        out.push(t);
    }
    Ok(out)
}

fn push_escape(s: &mut String, c: char) {
    match c {
        'n' => s.push('\n'),
        't' => s.push('\t'),
        'r' => s.push('\r'),
        '0' => s.push('\0'),
        'a' => s.push('\x07'),
        'b' => s.push('\x08'),
        'f' => s.push('\x0c'),
        'v' => s.push('\x0b'),
        '\\' => s.push('\\'),
        '\'' => s.push('\''),
        '"' => s.push('"'),
        '\n' => {}
        other => {
            s.push('\\');
            s.push(other);
        }
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// Constant.
    Const(Const),
    /// f-string parts.
    FStr(Vec<FPart>),
    /// Variable.
    Name(String),
    /// `a.b`
    Attr(Box<Expr>, String),
    /// `a[b]`
    Index(Box<Expr>, Box<Expr>),
    /// `a[b:c]`
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// Call with positional and keyword arguments.
    Call(Box<Expr>, Vec<Expr>, Vec<(String, Expr)>),
    /// Binary operator.
    Bin(String, Box<Expr>, Box<Expr>),
    /// Unary operator (`-`, `+`, `not`, `~`).
    Un(String, Box<Expr>),
    /// `and` / `or`.
    Logic(bool, Box<Expr>, Box<Expr>),
    /// Chained comparison.
    Cmp(Box<Expr>, Vec<(String, Expr)>),
    /// `a if c else b`
    IfExp(Box<Expr>, Box<Expr>, Box<Expr>),
    /// List display.
    List(Vec<Expr>),
    /// Tuple display.
    Tuple(Vec<Expr>),
    /// Dict display.
    Dict(Vec<(Expr, Expr)>),
    /// `[e for t in it if c]`
    ListComp(Box<Expr>, Box<Target>, Box<Expr>, Option<Box<Expr>>),
    /// `lambda a: e`
    Lambda(Vec<String>, Box<Expr>),
}

/// A constant.
#[derive(Clone, Debug, PartialEq)]
pub enum Const {
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
}

/// A part of an f-string.
#[derive(Clone, Debug, PartialEq)]
pub enum FPart {
    /// Literal text.
    Lit(String),
    /// `{expr!conv:spec}`
    Expr(Expr, Option<char>, String),
}

/// An assignment target.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// `x`
    Name(String),
    /// `a, b`
    Tuple(Vec<Target>),
    /// `a[i]`
    Index(Expr, Expr),
    /// `a.b`
    Attr(Expr, String),
}

/// A statement with its line.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// The statement.
    pub kind: StmtKind,
    /// Line number.
    pub line: usize,
}

/// A block of statements (shared).
pub type Block = Arc<[Stmt]>;

/// An except clause.
#[derive(Clone, Debug, PartialEq)]
pub struct Handler {
    /// Exception type names (empty = bare `except:`).
    pub types: Vec<String>,
    /// `as name`.
    pub name: Option<String>,
    /// Body.
    pub body: Block,
}

/// Statement kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// Expression statement.
    Expr(Expr),
    /// `t = e` (several targets for `a = b = e`).
    Assign(Vec<Target>, Expr),
    /// `t op= e`
    AugAssign(Target, String, Expr),
    /// if/elif/else.
    If(Vec<(Expr, Block)>, Option<Block>),
    /// while.
    While(Expr, Block),
    /// for.
    For(Target, Expr, Block),
    /// break
    Break,
    /// continue
    Continue,
    /// pass
    Pass,
    /// return
    Return(Option<Expr>),
    /// def
    Def(Arc<FuncDef>),
    /// import a.b as c
    Import(Vec<(String, Option<String>)>),
    /// from m import a as b
    FromImport(String, Vec<(String, Option<String>)>),
    /// try
    Try(Block, Vec<Handler>, Option<Block>, Option<Block>),
    /// raise
    Raise(Option<Expr>),
    /// global
    Global(Vec<String>),
    /// with e as n: body
    With(Expr, Option<String>, Block),
    /// assert
    Assert(Expr, Option<Expr>),
    /// del name
    Del(Vec<Target>),
    /// Python 2 `print a, b`
    Print2(Vec<Expr>, bool),
}

/// A function definition.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncDef {
    /// Name.
    pub name: String,
    /// Parameters with defaults.
    pub params: Vec<(String, Option<Expr>)>,
    /// `*args` name.
    pub star: Option<String>,
    /// `**kwargs` name.
    pub kwstar: Option<String>,
    /// Body.
    pub body: Block,
    /// Lambda body (instead of `body`).
    pub lambda: Option<Expr>,
}

/// The parser.
pub struct Parser {
    toks: Vec<Token>,
    p: usize,
    py2: bool,
}

type R<T> = Result<T, SyntaxErr>;

const KEYWORDS: &[&str] = &[
    "if", "elif", "else", "while", "for", "in", "not", "and", "or", "def", "return", "import", "from", "as", "try", "except", "finally", "raise", "pass",
    "break", "continue", "global", "with", "assert", "del", "lambda", "is", "class", "yield", "nonlocal", "async", "await",
];

impl Parser {
    /// A parser over tokens.
    pub fn new(toks: Vec<Token>, py2: bool) -> Parser {
        Parser { toks, p: 0, py2 }
    }

    fn tok(&self) -> &Tok {
        &self.toks[self.p.min(self.toks.len() - 1)].tok
    }
    fn at(&self) -> &Token {
        &self.toks[self.p.min(self.toks.len() - 1)]
    }
    fn bump(&mut self) -> Tok {
        let t = self.tok().clone();
        if self.p < self.toks.len() - 1 {
            self.p += 1;
        }
        t
    }
    fn is_op(&self, o: &str) -> bool {
        matches!(self.tok(), Tok::Op(x) if x == o)
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(self.tok(), Tok::Name(x) if x == k)
    }
    fn invalid<T>(&self) -> R<T> {
        let t = self.at();
        Err(serr("SyntaxError", "invalid syntax", t.line, t.col))
    }
    fn expect_op(&mut self, o: &str) -> R<()> {
        if self.is_op(o) {
            self.bump();
            Ok(())
        } else {
            if o == ":" {
                let t = self.at();
                return Err(serr("SyntaxError", "expected ':'", t.line, t.col));
            }
            self.invalid()
        }
    }
    fn name(&mut self) -> R<String> {
        match self.tok().clone() {
            Tok::Name(n) if !KEYWORDS.contains(&n.as_str()) => {
                self.bump();
                Ok(n)
            }
            _ => self.invalid(),
        }
    }

    /// Parses a module.
    pub fn module(&mut self) -> R<Block> {
        let mut v = Vec::new();
        while *self.tok() != Tok::Eof {
            if *self.tok() == Tok::Newline {
                self.bump();
                continue;
            }
            if *self.tok() == Tok::Indent {
                let t = self.at();
                return Err(serr("IndentationError", "unexpected indent", t.line, t.col));
            }
            self.statement(&mut v)?;
        }
        Ok(v.into())
    }

    fn block(&mut self, what: &str, line: usize) -> R<Block> {
        self.expect_op(":")?;
        if *self.tok() != Tok::Newline {
            // Simple statements on the same line.
            let mut v = Vec::new();
            self.simple_line(&mut v)?;
            return Ok(v.into());
        }
        self.bump();
        if *self.tok() != Tok::Indent {
            let t = self.at();
            return Err(serr("IndentationError", format!("expected an indented block after {what} on line {line}"), t.line, t.col));
        }
        self.bump();
        let mut v = Vec::new();
        while *self.tok() != Tok::Dedent && *self.tok() != Tok::Eof {
            if *self.tok() == Tok::Newline {
                self.bump();
                continue;
            }
            self.statement(&mut v)?;
        }
        if *self.tok() == Tok::Dedent {
            self.bump();
        }
        Ok(v.into())
    }

    fn statement(&mut self, out: &mut Vec<Stmt>) -> R<()> {
        let line = self.at().line;
        let kw = if let Tok::Name(n) = self.tok() { n.clone() } else { String::new() };
        match kw.as_str() {
            "if" => {
                self.bump();
                let c = self.test()?;
                let b = self.block("'if' statement", line)?;
                let mut arms = vec![(c, b)];
                let mut els = None;
                loop {
                    if self.is_kw("elif") {
                        let l = self.at().line;
                        self.bump();
                        let c = self.test()?;
                        arms.push((c, self.block("'elif' statement", l)?));
                    } else if self.is_kw("else") {
                        let l = self.at().line;
                        self.bump();
                        els = Some(self.block("'else' statement", l)?);
                        break;
                    } else {
                        break;
                    }
                }
                out.push(Stmt { kind: StmtKind::If(arms, els), line });
            }
            "while" => {
                self.bump();
                let c = self.test()?;
                let b = self.block("'while' statement", line)?;
                out.push(Stmt { kind: StmtKind::While(c, b), line });
            }
            "for" => {
                self.bump();
                let t = self.target_list()?;
                if !self.is_kw("in") {
                    return self.invalid();
                }
                self.bump();
                let it = self.testlist()?;
                let b = self.block("'for' statement", line)?;
                out.push(Stmt { kind: StmtKind::For(t, it, b), line });
            }
            "def" => {
                self.bump();
                let name = self.name()?;
                self.expect_op("(")?;
                let (params, star, kwstar) = self.params(")")?;
                self.expect_op(")")?;
                if self.is_op("->") {
                    self.bump();
                    self.test()?;
                }
                let body = self.block("function definition", line)?;
                out.push(Stmt { kind: StmtKind::Def(Arc::new(FuncDef { name, params, star, kwstar, body, lambda: None })), line });
            }
            "try" => {
                self.bump();
                let body = self.block("'try' statement", line)?;
                let mut handlers = Vec::new();
                let (mut els, mut fin) = (None, None);
                while self.is_kw("except") {
                    let l = self.at().line;
                    self.bump();
                    let mut types = Vec::new();
                    let mut name = None;
                    if !self.is_op(":") {
                        let e = self.test()?;
                        match e {
                            Expr::Name(n) => types.push(n),
                            Expr::Tuple(v) => types.extend(v.into_iter().filter_map(|x| if let Expr::Name(n) = x { Some(n) } else { None })),
                            Expr::Attr(_, n) => types.push(n),
                            _ => return self.invalid(),
                        }
                        if self.is_kw("as") {
                            self.bump();
                            name = Some(self.name()?);
                        }
                    }
                    let b = self.block("'except' statement", l)?;
                    handlers.push(Handler { types, name, body: b });
                }
                if self.is_kw("else") {
                    let l = self.at().line;
                    self.bump();
                    els = Some(self.block("'else' statement", l)?);
                }
                if self.is_kw("finally") {
                    let l = self.at().line;
                    self.bump();
                    fin = Some(self.block("'finally' statement", l)?);
                }
                if handlers.is_empty() && fin.is_none() {
                    let t = self.at();
                    return Err(serr("SyntaxError", "expected 'except' or 'finally' block", t.line, t.col));
                }
                out.push(Stmt { kind: StmtKind::Try(body, handlers, els, fin), line });
            }
            "with" => {
                self.bump();
                let e = self.test()?;
                let name = if self.is_kw("as") {
                    self.bump();
                    Some(self.name()?)
                } else {
                    None
                };
                let b = self.block("'with' statement", line)?;
                out.push(Stmt { kind: StmtKind::With(e, name, b), line });
            }
            "class" | "async" | "yield" | "nonlocal" | "match" if kw != "match" => {
                let t = self.at();
                return Err(serr("SyntaxError", format!("kubesim: '{kw}' is not supported by this Python model"), t.line, t.col));
            }
            _ => self.simple_line(out)?,
        }
        Ok(())
    }

    fn simple_line(&mut self, out: &mut Vec<Stmt>) -> R<()> {
        loop {
            let line = self.at().line;
            let k = self.simple()?;
            out.push(Stmt { kind: k, line });
            if self.is_op(";") {
                self.bump();
                if *self.tok() == Tok::Newline || *self.tok() == Tok::Eof {
                    break;
                }
                continue;
            }
            break;
        }
        match self.tok() {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::Eof | Tok::Dedent => Ok(()),
            _ => self.invalid(),
        }
    }

    fn simple(&mut self) -> R<StmtKind> {
        let kw = if let Tok::Name(n) = self.tok() { n.clone() } else { String::new() };
        Ok(match kw.as_str() {
            "pass" => {
                self.bump();
                StmtKind::Pass
            }
            "break" => {
                self.bump();
                StmtKind::Break
            }
            "continue" => {
                self.bump();
                StmtKind::Continue
            }
            "return" => {
                self.bump();
                if matches!(self.tok(), Tok::Newline | Tok::Eof) || self.is_op(";") {
                    StmtKind::Return(None)
                } else {
                    StmtKind::Return(Some(self.testlist()?))
                }
            }
            "raise" => {
                self.bump();
                if matches!(self.tok(), Tok::Newline | Tok::Eof) || self.is_op(";") {
                    StmtKind::Raise(None)
                } else {
                    let e = self.test()?;
                    if self.is_kw("from") {
                        self.bump();
                        self.test()?;
                    }
                    StmtKind::Raise(Some(e))
                }
            }
            "global" | "nonlocal" => {
                self.bump();
                let mut v = vec![self.name()?];
                while self.is_op(",") {
                    self.bump();
                    v.push(self.name()?);
                }
                StmtKind::Global(v)
            }
            "import" => {
                self.bump();
                let mut v = Vec::new();
                loop {
                    let m = self.dotted()?;
                    let alias = if self.is_kw("as") {
                        self.bump();
                        Some(self.name()?)
                    } else {
                        None
                    };
                    v.push((m, alias));
                    if !self.is_op(",") {
                        break;
                    }
                    self.bump();
                }
                StmtKind::Import(v)
            }
            "from" => {
                self.bump();
                let m = self.dotted()?;
                if !self.is_kw("import") {
                    return self.invalid();
                }
                self.bump();
                let paren = self.is_op("(");
                if paren {
                    self.bump();
                }
                let mut v = Vec::new();
                if self.is_op("*") {
                    self.bump();
                    v.push(("*".to_string(), None));
                } else {
                    loop {
                        let n = self.name()?;
                        let alias = if self.is_kw("as") {
                            self.bump();
                            Some(self.name()?)
                        } else {
                            None
                        };
                        v.push((n, alias));
                        if !self.is_op(",") {
                            break;
                        }
                        self.bump();
                        if paren && self.is_op(")") {
                            break;
                        }
                    }
                }
                if paren {
                    self.expect_op(")")?;
                }
                StmtKind::FromImport(m, v)
            }
            "assert" => {
                self.bump();
                let c = self.test()?;
                let m = if self.is_op(",") {
                    self.bump();
                    Some(self.test()?)
                } else {
                    None
                };
                StmtKind::Assert(c, m)
            }
            "del" => {
                self.bump();
                let t = self.target_list()?;
                StmtKind::Del(vec![t])
            }
            "print" if self.py2 && !matches!(self.toks.get(self.p + 1).map(|t| &t.tok), Some(Tok::Op(o)) if o == "=" || o == "(" || o == ".") => {
                self.bump();
                let mut v = Vec::new();
                let mut trailing = false;
                while !matches!(self.tok(), Tok::Newline | Tok::Eof) && !self.is_op(";") {
                    v.push(self.test()?);
                    trailing = false;
                    if self.is_op(",") {
                        self.bump();
                        trailing = true;
                    } else {
                        break;
                    }
                }
                StmtKind::Print2(v, !trailing)
            }
            _ => {
                let e = self.testlist_star()?;
                if self.is_op("=") {
                    let mut targets = vec![to_target(&e).ok_or_else(|| self.cant_assign(&e))?];
                    self.bump();
                    let mut rhs = self.testlist_star()?;
                    while self.is_op("=") {
                        self.bump();
                        targets.push(to_target(&rhs).ok_or_else(|| self.cant_assign(&rhs))?);
                        rhs = self.testlist_star()?;
                    }
                    StmtKind::Assign(targets, rhs)
                } else if let Tok::Op(o) = self.tok().clone() {
                    if o.len() >= 2 && o.ends_with('=') && !matches!(o.as_str(), "==" | "!=" | "<=" | ">=") {
                        self.bump();
                        let t = to_target(&e).ok_or_else(|| self.cant_assign(&e))?;
                        let rhs = self.testlist()?;
                        StmtKind::AugAssign(t, o.trim_end_matches('=').to_string(), rhs)
                    } else if o == ":" {
                        // Annotated assignment `x: int = 1`.
                        self.bump();
                        self.test()?;
                        let t = to_target(&e).ok_or_else(|| self.cant_assign(&e))?;
                        if self.is_op("=") {
                            self.bump();
                            StmtKind::Assign(vec![t], self.testlist()?)
                        } else {
                            StmtKind::Pass
                        }
                    } else {
                        StmtKind::Expr(e)
                    }
                } else {
                    StmtKind::Expr(e)
                }
            }
        })
    }

    fn cant_assign(&self, e: &Expr) -> SyntaxErr {
        let t = self.at();
        let what = match e {
            Expr::Call(..) => "function call",
            Expr::Const(_) => "literal",
            _ => "expression",
        };
        serr("SyntaxError", format!("cannot assign to {what} here. Maybe you meant '==' instead of '='?"), t.line, t.col)
    }

    fn dotted(&mut self) -> R<String> {
        let mut s = self.name()?;
        while self.is_op(".") {
            self.bump();
            s.push('.');
            s.push_str(&self.name()?);
        }
        Ok(s)
    }

    fn params(&mut self, close: &str) -> R<(Vec<(String, Option<Expr>)>, Option<String>, Option<String>)> {
        let mut v = Vec::new();
        let (mut star, mut kw) = (None, None);
        while !self.is_op(close) {
            if self.is_op("*") {
                self.bump();
                if !self.is_op(",") {
                    star = Some(self.name()?);
                }
            } else if self.is_op("**") {
                self.bump();
                kw = Some(self.name()?);
            } else if self.is_op("/") {
                self.bump();
            } else {
                let n = self.name()?;
                if self.is_op(":") && close == ")" {
                    self.bump();
                    self.test()?;
                }
                let d = if self.is_op("=") {
                    self.bump();
                    Some(self.test()?)
                } else {
                    None
                };
                v.push((n, d));
            }
            if !self.is_op(",") {
                break;
            }
            self.bump();
        }
        Ok((v, star, kw))
    }

    fn target_list(&mut self) -> R<Target> {
        let mut v = Vec::new();
        loop {
            let e = self.or_expr()?;
            v.push(to_target(&e).ok_or_else(|| self.cant_assign(&e))?);
            if !self.is_op(",") {
                break;
            }
            self.bump();
            if self.is_kw("in") || self.is_op("=") {
                break;
            }
        }
        Ok(if v.len() == 1 { v.remove(0) } else { Target::Tuple(v) })
    }

    fn testlist_star(&mut self) -> R<Expr> {
        self.testlist()
    }

    fn testlist(&mut self) -> R<Expr> {
        let first = self.test()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut v = vec![first];
        while self.is_op(",") {
            self.bump();
            if matches!(self.tok(), Tok::Newline | Tok::Eof) || self.is_op("=") || self.is_op(")") || self.is_op(":") {
                break;
            }
            v.push(self.test()?);
        }
        Ok(Expr::Tuple(v))
    }

    /// Parses one expression (`test` in the grammar).
    pub fn test(&mut self) -> R<Expr> {
        if self.is_kw("lambda") {
            self.bump();
            let (params, _, _) = self.params(":")?;
            self.expect_op(":")?;
            let body = self.test()?;
            return Ok(Expr::Lambda(params.into_iter().map(|(n, _)| n).collect(), Box::new(body)));
        }
        let e = self.or_test()?;
        if self.is_kw("if") {
            self.bump();
            let c = self.or_test()?;
            if !self.is_kw("else") {
                let t = self.at();
                return Err(serr("SyntaxError", "expected 'else' after 'if' expression", t.line, t.col));
            }
            self.bump();
            let o = self.test()?;
            return Ok(Expr::IfExp(Box::new(c), Box::new(e), Box::new(o)));
        }
        Ok(e)
    }

    fn or_test(&mut self) -> R<Expr> {
        let mut l = self.and_test()?;
        while self.is_kw("or") {
            self.bump();
            let r = self.and_test()?;
            l = Expr::Logic(true, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and_test(&mut self) -> R<Expr> {
        let mut l = self.not_test()?;
        while self.is_kw("and") {
            self.bump();
            let r = self.not_test()?;
            l = Expr::Logic(false, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn not_test(&mut self) -> R<Expr> {
        if self.is_kw("not") {
            self.bump();
            let e = self.not_test()?;
            return Ok(Expr::Un("not".into(), Box::new(e)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> R<Expr> {
        let l = self.or_expr()?;
        let mut ops = Vec::new();
        loop {
            let op = match self.tok() {
                Tok::Op(o) if matches!(o.as_str(), "<" | ">" | "==" | ">=" | "<=" | "!=") => o.clone(),
                Tok::Name(n) if n == "in" => "in".into(),
                Tok::Name(n) if n == "not" && matches!(self.toks.get(self.p + 1).map(|t| &t.tok), Some(Tok::Name(x)) if x == "in") => {
                    self.bump();
                    "not in".into()
                }
                Tok::Name(n) if n == "is" => {
                    if matches!(self.toks.get(self.p + 1).map(|t| &t.tok), Some(Tok::Name(x)) if x == "not") {
                        self.bump();
                        "is not".into()
                    } else {
                        "is".into()
                    }
                }
                _ => break,
            };
            self.bump();
            ops.push((op, self.or_expr()?));
        }
        if ops.is_empty() {
            Ok(l)
        } else {
            Ok(Expr::Cmp(Box::new(l), ops))
        }
    }

    fn or_expr(&mut self) -> R<Expr> {
        self.binary(0)
    }

    fn binary(&mut self, min: u8) -> R<Expr> {
        let mut l = self.unary()?;
        loop {
            let (op, prec) = match self.tok() {
                Tok::Op(o) => match o.as_str() {
                    "|" => (o.clone(), 1),
                    "^" => (o.clone(), 2),
                    "&" => (o.clone(), 3),
                    "<<" | ">>" => (o.clone(), 4),
                    "+" | "-" => (o.clone(), 5),
                    "*" | "/" | "//" | "%" | "@" => (o.clone(), 6),
                    _ => return Ok(l),
                },
                _ => return Ok(l),
            };
            if prec < min {
                return Ok(l);
            }
            self.bump();
            let r = self.binary(prec + 1)?;
            l = Expr::Bin(op, Box::new(l), Box::new(r));
        }
    }

    fn unary(&mut self) -> R<Expr> {
        if self.is_op("-") || self.is_op("+") || self.is_op("~") {
            let Tok::Op(o) = self.bump() else { return self.invalid() };
            let e = self.unary()?;
            if let (Expr::Const(Const::Int(i)), "-") = (&e, o.as_str()) {
                return Ok(Expr::Const(Const::Int(-i)));
            }
            return Ok(Expr::Un(o, Box::new(e)));
        }
        self.power()
    }

    fn power(&mut self) -> R<Expr> {
        let b = self.postfix()?;
        if self.is_op("**") {
            self.bump();
            let e = self.unary()?;
            return Ok(Expr::Bin("**".into(), Box::new(b), Box::new(e)));
        }
        Ok(b)
    }

    fn postfix(&mut self) -> R<Expr> {
        let mut e = self.atom()?;
        loop {
            if self.is_op(".") {
                self.bump();
                let n = match self.bump() {
                    Tok::Name(n) => n,
                    _ => return self.invalid(),
                };
                e = Expr::Attr(Box::new(e), n);
            } else if self.is_op("(") {
                self.bump();
                let mut args = Vec::new();
                let mut kw = Vec::new();
                while !self.is_op(")") {
                    if self.is_op("*") || self.is_op("**") {
                        self.bump();
                    }
                    if let (Tok::Name(n), Some(Tok::Op(eq))) = (self.tok().clone(), self.toks.get(self.p + 1).map(|t| t.tok.clone())) {
                        if eq == "=" {
                            self.bump();
                            self.bump();
                            kw.push((n, self.test()?));
                            if !self.is_op(",") {
                                break;
                            }
                            self.bump();
                            continue;
                        }
                    }
                    let a = self.test()?;
                    if self.is_kw("for") {
                        let (t, it, cond) = self.comp_tail()?;
                        args.push(Expr::ListComp(Box::new(a), Box::new(t), Box::new(it), cond.map(Box::new)));
                    } else {
                        args.push(a);
                    }
                    if !self.is_op(",") {
                        break;
                    }
                    self.bump();
                }
                self.expect_op(")")?;
                e = Expr::Call(Box::new(e), args, kw);
            } else if self.is_op("[") {
                self.bump();
                let lo = if self.is_op(":") { None } else { Some(self.test()?) };
                if self.is_op(":") {
                    self.bump();
                    let hi = if self.is_op("]") { None } else { Some(Box::new(self.test()?)) };
                    self.expect_op("]")?;
                    e = Expr::Slice(Box::new(e), lo.map(Box::new), hi);
                } else {
                    let mut idx = lo.unwrap_or(Expr::Const(Const::None));
                    if self.is_op(",") {
                        let mut v = vec![idx];
                        while self.is_op(",") {
                            self.bump();
                            if self.is_op("]") {
                                break;
                            }
                            v.push(self.test()?);
                        }
                        idx = Expr::Tuple(v);
                    }
                    self.expect_op("]")?;
                    e = Expr::Index(Box::new(e), Box::new(idx));
                }
            } else {
                return Ok(e);
            }
        }
    }

    fn comp_tail(&mut self) -> R<(Target, Expr, Option<Expr>)> {
        self.bump();
        let t = self.target_list()?;
        if !self.is_kw("in") {
            return self.invalid();
        }
        self.bump();
        let it = self.or_test()?;
        let cond = if self.is_kw("if") {
            self.bump();
            Some(self.or_test()?)
        } else {
            None
        };
        Ok((t, it, cond))
    }

    fn atom(&mut self) -> R<Expr> {
        let t = self.at().clone();
        match self.bump() {
            Tok::Int(i) => Ok(Expr::Const(Const::Int(i))),
            Tok::Float(f) => Ok(Expr::Const(Const::Float(f))),
            Tok::Str(s, f) => {
                let mut parts: Vec<(String, bool)> = vec![(s, f)];
                while let Tok::Str(s2, f2) = self.tok().clone() {
                    self.bump();
                    parts.push((s2, f2));
                }
                if parts.iter().all(|(_, f)| !f) {
                    return Ok(Expr::Const(Const::Str(parts.into_iter().map(|(s, _)| s).collect())));
                }
                let mut fp = Vec::new();
                for (s, f) in parts {
                    if f {
                        fp.extend(parse_fstring(&s, t.line, t.col, self.py2)?);
                    } else {
                        fp.push(FPart::Lit(s));
                    }
                }
                Ok(Expr::FStr(fp))
            }
            Tok::Name(n) => match n.as_str() {
                "True" => Ok(Expr::Const(Const::Bool(true))),
                "False" => Ok(Expr::Const(Const::Bool(false))),
                "None" => Ok(Expr::Const(Const::None)),
                k if KEYWORDS.contains(&k) => {
                    self.p -= 1;
                    self.invalid()
                }
                _ => Ok(Expr::Name(n)),
            },
            Tok::Op(o) if o == "(" => {
                if self.is_op(")") {
                    self.bump();
                    return Ok(Expr::Tuple(Vec::new()));
                }
                let e = self.test()?;
                if self.is_kw("for") {
                    let (t, it, cond) = self.comp_tail()?;
                    self.expect_op(")")?;
                    return Ok(Expr::ListComp(Box::new(e), Box::new(t), Box::new(it), cond.map(Box::new)));
                }
                if self.is_op(",") {
                    let mut v = vec![e];
                    while self.is_op(",") {
                        self.bump();
                        if self.is_op(")") {
                            break;
                        }
                        v.push(self.test()?);
                    }
                    self.expect_op(")")?;
                    return Ok(Expr::Tuple(v));
                }
                self.expect_op(")")?;
                Ok(e)
            }
            Tok::Op(o) if o == "[" => {
                let mut v = Vec::new();
                if self.is_op("]") {
                    self.bump();
                    return Ok(Expr::List(v));
                }
                let first = self.test()?;
                if self.is_kw("for") {
                    let (t, it, cond) = self.comp_tail()?;
                    self.expect_op("]")?;
                    return Ok(Expr::ListComp(Box::new(first), Box::new(t), Box::new(it), cond.map(Box::new)));
                }
                v.push(first);
                while self.is_op(",") {
                    self.bump();
                    if self.is_op("]") {
                        break;
                    }
                    v.push(self.test()?);
                }
                self.expect_op("]")?;
                Ok(Expr::List(v))
            }
            Tok::Op(o) if o == "{" => {
                let mut v = Vec::new();
                while !self.is_op("}") {
                    let k = self.test()?;
                    self.expect_op(":")?;
                    let val = self.test()?;
                    v.push((k, val));
                    if !self.is_op(",") {
                        break;
                    }
                    self.bump();
                }
                self.expect_op("}")?;
                Ok(Expr::Dict(v))
            }
            _ => {
                self.p = self.p.saturating_sub(1);
                if matches!(t.tok, Tok::Newline | Tok::Eof) {
                    return Err(serr("SyntaxError", "invalid syntax", t.line, t.col));
                }
                self.invalid()
            }
        }
    }
}

fn to_target(e: &Expr) -> Option<Target> {
    Some(match e {
        Expr::Name(n) => Target::Name(n.clone()),
        Expr::Tuple(v) | Expr::List(v) => Target::Tuple(v.iter().map(to_target).collect::<Option<Vec<_>>>()?),
        Expr::Index(a, b) => Target::Index((**a).clone(), (**b).clone()),
        Expr::Attr(a, n) => Target::Attr((**a).clone(), n.clone()),
        _ => return None,
    })
}

fn parse_fstring(s: &str, line: usize, col: usize, py2: bool) -> R<Vec<FPart>> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            if i + 1 < chars.len() && chars[i + 1] == '{' {
                lit.push('{');
                i += 2;
                continue;
            }
            let mut depth = 1;
            let mut j = i + 1;
            while j < chars.len() && depth > 0 {
                match chars[j] {
                    '{' | '[' | '(' => depth += 1,
                    '}' | ']' | ')' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                j += 1;
            }
            if j >= chars.len() {
                return Err(serr("SyntaxError", "f-string: expecting '}'", line, col));
            }
            let inner: String = chars[i + 1..j].iter().collect();
            let (mut expr_s, mut spec) = (inner.clone(), String::new());
            let mut conv = None;
            // Split off `:spec` and `!r` at depth 0.
            let mut d = 0;
            for (k, ch) in inner.char_indices() {
                match ch {
                    '[' | '(' | '{' => d += 1,
                    ']' | ')' | '}' => d -= 1,
                    ':' if d == 0 => {
                        expr_s = inner[..k].to_string();
                        spec = inner[k + 1..].to_string();
                        break;
                    }
                    _ => {}
                }
            }
            if let Some(p) = expr_s.rfind('!') {
                if expr_s[p + 1..].len() == 1 && !expr_s[p + 1..].starts_with('=') {
                    conv = expr_s[p + 1..].chars().next();
                    expr_s = expr_s[..p].to_string();
                }
            }
            let debug = expr_s.trim_end().ends_with('=') && !expr_s.trim_end().ends_with("==");
            if debug {
                let e = expr_s.trim_end().trim_end_matches('=').to_string();
                lit.push_str(&format!("{e}="));
                expr_s = e;
                if conv.is_none() && spec.is_empty() {
                    conv = Some('r');
                }
            }
            if !lit.is_empty() {
                out.push(FPart::Lit(std::mem::take(&mut lit)));
            }
            let toks = tokenize(&expr_s).map_err(|mut e| {
                e.line = line;
                e
            })?;
            let mut p = Parser::new(toks, py2);
            let e = p.test().map_err(|mut e| {
                e.line = line;
                e.msg = format!("f-string: {}", e.msg);
                e
            })?;
            out.push(FPart::Expr(e, conv, spec));
            i = j + 1;
            continue;
        }
        if c == '}' && i + 1 < chars.len() && chars[i + 1] == '}' {
            lit.push('}');
            i += 2;
            continue;
        }
        lit.push(c);
        i += 1;
    }
    if !lit.is_empty() {
        out.push(FPart::Lit(lit));
    }
    Ok(out)
}
