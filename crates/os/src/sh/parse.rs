//! A recursive-descent parser for POSIX sh with the bash and busybox-ash extensions each
//! flavour accepts. Here-document bodies are cut out of the input when their `<<` operator is
//! parsed (the body starts after the end of the current line).

use super::ast::*;
use super::Flavor;
use std::sync::Arc;

/// Deepest nesting the parser accepts (hostile input guard).
const MAX_DEPTH: usize = 40;

/// A syntax error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Line of the error.
    pub line: u32,
    /// What went wrong.
    pub kind: SyntaxKind,
    /// The source line (bash prints it).
    pub source_line: String,
    /// The closer of the innermost open construct (ash/dash print `(expecting "}")`).
    pub expecting: Option<String>,
}

/// Syntax error kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyntaxKind {
    /// An unexpected token (`)`, `fi`, `newline`...).
    Unexpected(String),
    /// End of input inside a construct; what was expected (`fi`).
    Eof(Option<String>),
    /// Unterminated quote/substitution; the closing character.
    Unterminated(char),
    /// `${...}` that is not a valid expansion.
    BadSubst(String),
    /// `for` not followed by a name.
    BadForVar,
    /// A redirection operator where none may be.
    UnexpectedRedirection,
}

impl SyntaxError {
    /// The message each flavour prints (without a trailing newline), given `$0`.
    pub fn message(&self, flavor: Flavor, arg0: &str) -> String {
        match flavor {
            Flavor::Bash => match &self.kind {
                SyntaxKind::Unexpected(t) => format!(
                    "{arg0}: -c: line {}: syntax error near unexpected token `{}'\n{arg0}: -c: line {}: `{}'",
                    self.line,
                    t,
                    self.line,
                    self.source_line.trim_end()
                ),
                SyntaxKind::Eof(_) => format!("{arg0}: -c: line {}: syntax error: unexpected end of file", self.line + 1),
                SyntaxKind::BadForVar => format!("{arg0}: -c: line {}: `{}': not a valid identifier", self.line, self.source_line.trim()),
                SyntaxKind::UnexpectedRedirection => format!("{arg0}: -c: line {}: syntax error near unexpected token `<'", self.line),
                SyntaxKind::Unterminated(c) => {
                    let c = if *c == ')' { '(' } else { *c };
                    format!("{arg0}: -c: line {}: unexpected EOF while looking for matching `{}'", self.line, c)
                }
                SyntaxKind::BadSubst(s) => format!("{arg0}: line {}: {}: bad substitution", self.line, s),
            },
            Flavor::Dash => match &self.kind {
                SyntaxKind::Unexpected(t) => {
                    let t = if t == "newline" { "newline".to_string() } else { format!("\"{t}\"") };
                    let exp = self.expecting.as_ref().map(|e| format!(" (expecting \"{e}\")")).unwrap_or_default();
                    format!("{arg0}: {}: Syntax error: {} unexpected{exp}", self.line, t)
                }
                SyntaxKind::Eof(Some(e)) => format!("{arg0}: {}: Syntax error: end of file unexpected (expecting \"{e}\")", self.line),
                SyntaxKind::Eof(None) => format!("{arg0}: {}: Syntax error: end of file unexpected", self.line),
                SyntaxKind::Unterminated(c) => {
                    let what = match c {
                        '\'' | '"' => "Unterminated quoted string",
                        '`' => "EOF in backquote substitution",
                        '}' => "Missing '}'",
                        _ => "Missing '))'",
                    };
                    if *c == ')' {
                        format!("{arg0}: {}: Syntax error: end of file unexpected (expecting \")\")", self.line)
                    } else {
                        format!("{arg0}: {}: Syntax error: {what}", self.line)
                    }
                }
                SyntaxKind::BadSubst(_) => format!("{arg0}: {}: Bad substitution", self.line),
                SyntaxKind::BadForVar => format!("{arg0}: {}: Syntax error: Bad for loop variable", self.line),
                SyntaxKind::UnexpectedRedirection => format!("{arg0}: {}: Syntax error: redirection unexpected", self.line),
            },
            Flavor::Ash => match &self.kind {
                SyntaxKind::Unexpected(t) => {
                    let t = if t == "newline" { "newline".to_string() } else { format!("\"{t}\"") };
                    let exp = self.expecting.as_ref().map(|e| format!(" (expecting \"{e}\")")).unwrap_or_default();
                    format!("{arg0}: syntax error: unexpected {t}{exp}")
                }
                SyntaxKind::Eof(Some(e)) => format!("{arg0}: syntax error: unexpected end of file (expecting \"{e}\")"),
                SyntaxKind::Eof(None) => format!("{arg0}: syntax error: unexpected end of file"),
                SyntaxKind::Unterminated(c) => match c {
                    '\'' | '"' => format!("{arg0}: syntax error: unterminated quoted string"),
                    '}' => format!("{arg0}: syntax error: missing '}}'"),
                    _ => format!("{arg0}: syntax error: unexpected end of file (expecting \")\")"),
                },
                SyntaxKind::BadSubst(_) => format!("{arg0}: syntax error: bad substitution"),
                SyntaxKind::BadForVar => format!("{arg0}: syntax error: bad for loop variable"),
                SyntaxKind::UnexpectedRedirection => format!("{arg0}: syntax error: unexpected redirection"),
            },
        }
    }
}

type PResult<T> = Result<T, SyntaxError>;

/// Parses a whole script.
pub fn parse(src: &str, flavor: Flavor) -> PResult<Arc<Cmd>> {
    parse_with_warnings(src, flavor).0
}

/// Parses a whole script, also returning the warnings bash prints while parsing (a
/// here-document ended by end of file): `(line, wanted delimiter)`.
pub fn parse_with_warnings(src: &str, flavor: Flavor) -> (PResult<Arc<Cmd>>, Vec<(u32, String)>) {
    let mut p = Parser { s: src.chars().collect(), pos: 0, line: 1, flavor, depth: 0, bonus_lines: 0, closers: Vec::new(), warnings: Vec::new() };
    let r = (|| {
        let list = p.list(&[])?;
        p.blank_nl();
        if p.pos < p.s.len() {
            return Err(p.unexpected_here());
        }
        Ok(Arc::new(Cmd::List(list)))
    })();
    (r, std::mem::take(&mut p.warnings))
}

struct Parser {
    s: Vec<char>,
    pos: usize,
    line: u32,
    flavor: Flavor,
    depth: usize,
    bonus_lines: u32,
    closers: Vec<&'static str>,
    warnings: Vec<(u32, String)>,
}

fn is_meta(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Is `s` a valid variable name.
pub fn valid_name(s: &str) -> bool {
    let mut it = s.chars();
    matches!(it.next(), Some(c) if is_name_start(c)) && it.all(is_name)
}

const RESERVED: &[&str] =
    &["if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in", "{", "}", "!", "function", "[[", "]]"];

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.s.get(self.pos + n).copied()
    }

    fn starts(&self, t: &str) -> bool {
        let mut i = self.pos;
        for c in t.chars() {
            if self.s.get(i) != Some(&c) {
                return false;
            }
            i += 1;
        }
        true
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1 + self.bonus_lines;
            self.bonus_lines = 0;
        }
        Some(c)
    }

    fn peek_is_eof(&mut self) -> bool {
        self.blank_nl();
        self.peek().is_none()
    }

    fn bash(&self) -> bool {
        self.flavor == Flavor::Bash
    }

    fn not_dash(&self) -> bool {
        self.flavor != Flavor::Dash
    }

    fn err(&self, kind: SyntaxKind) -> SyntaxError {
        let start = self.s[..self.pos.min(self.s.len())].iter().rposition(|&c| c == '\n').map(|i| i + 1).unwrap_or(0);
        let end = self.s[self.pos.min(self.s.len())..].iter().position(|&c| c == '\n').map(|i| i + self.pos).unwrap_or(self.s.len());
        SyntaxError { line: self.line, kind, source_line: self.s[start..end].iter().collect(), expecting: self.closers.last().map(|c| c.to_string()) }
    }

    fn unexpected_here(&mut self) -> SyntaxError {
        self.blank();
        match self.peek() {
            None => self.err(SyntaxKind::Eof(None)),
            Some('\n') => self.err(SyntaxKind::Unexpected("newline".into())),
            Some(_) => {
                let tok = if let Some(op) = self.peek_op() { op.to_string() } else { self.peek_word_text() };
                self.err(SyntaxKind::Unexpected(tok))
            }
        }
    }

    fn peek_word_text(&self) -> String {
        let mut i = self.pos;
        let mut t = String::new();
        while let Some(&c) = self.s.get(i) {
            if is_meta(c) {
                break;
            }
            t.push(c);
            i += 1;
        }
        t
    }

    /// Skips blanks, line continuations and comments (not newlines).
    fn blank(&mut self) {
        loop {
            match self.peek() {
                Some(' ') | Some('\t') | Some('\r') => {
                    self.pos += 1;
                }
                Some('\\') if self.peek_at(1) == Some('\n') => {
                    self.bump();
                    self.bump();
                }
                Some('#') => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn blank_nl(&mut self) {
        loop {
            self.blank();
            if self.peek() == Some('\n') {
                self.bump();
            } else {
                return;
            }
        }
    }

    fn peek_op(&self) -> Option<&'static str> {
        const OPS: &[&str] =
            &[";;&", "&>>", "<<-", "<<<", "&&", "||", ";;", ";&", "<<", ">>", ">&", "<&", "<>", ">|", "&>", "|&", ";", "&", "|", "(", ")", "<", ">"];
        for op in OPS {
            if self.starts(op) {
                if !self.bash() && matches!(*op, ";;&" | ";&" | "|&") {
                    continue;
                }
                if self.flavor == Flavor::Dash && matches!(*op, "&>>" | "&>") {
                    continue;
                }
                return Some(op);
            }
        }
        None
    }

    /// The reserved word at the cursor, if any (not consumed).
    fn peek_reserved(&self) -> Option<&'static str> {
        for r in RESERVED {
            if self.starts(r) {
                let next = self.s.get(self.pos + r.len()).copied();
                if next.is_none_or(|c| is_meta(c))
                    || (*r == "{" || *r == "}" || *r == "!") && next.is_none_or(|c| c == ' ' || c == '\t' || c == '\n' || c == ';')
                {
                    if (*r == "[[" || *r == "]]") && self.flavor == Flavor::Dash {
                        return None;
                    }
                    if *r == "function" && self.flavor == Flavor::Dash {
                        return None;
                    }
                    return Some(r);
                }
            }
        }
        None
    }

    fn expect_reserved(&mut self, w: &str, ctx: &str) -> PResult<()> {
        self.blank_nl();
        if self.peek_reserved() == Some(w) || (w == "}" && self.peek() == Some('}')) {
            self.pos += w.len();
            return Ok(());
        }
        if self.peek().is_none() {
            let _ = ctx;
            return Err(self.err(SyntaxKind::Eof(Some(w.to_string()))));
        }
        Err(self.unexpected_here())
    }

    /// A list of and-or commands until a terminator reserved word, `)`, `;;` or EOF.
    fn list(&mut self, stops: &[&str]) -> PResult<Vec<(Arc<Cmd>, bool)>> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(SyntaxKind::Unexpected("(nesting too deep)".into())));
        }
        let mut items = Vec::new();
        loop {
            self.blank_nl();
            if self.peek().is_none() {
                break;
            }
            if let Some(r) = self.peek_reserved() {
                if stops.contains(&r) || matches!(r, "then" | "else" | "elif" | "fi" | "do" | "done" | "esac" | "}") {
                    break;
                }
            }
            if self.peek() == Some('}') && stops.contains(&"}") {
                break;
            }
            match self.peek_op() {
                Some(")") | Some(";;") | Some(";&") | Some(";;&") => break,
                Some(op @ (";" | "&" | "&&" | "||" | "|")) => return Err(self.err(SyntaxKind::Unexpected(op.into()))),
                _ => {}
            }
            let cmd = self.and_or()?;
            self.blank();
            let mut bg = false;
            match self.peek_op() {
                Some(";") => {
                    self.pos += 1;
                }
                Some("&") => {
                    self.pos += 1;
                    bg = true;
                }
                _ => {
                    if self.peek() == Some('\n') {
                        self.bump();
                    }
                }
            }
            items.push((cmd, bg));
            self.blank();
            if let Some(op @ (";" | "&")) = self.peek_op() {
                return Err(self.err(SyntaxKind::Unexpected(op.into())));
            }
        }
        self.depth -= 1;
        Ok(items)
    }

    fn and_or(&mut self) -> PResult<Arc<Cmd>> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            self.blank();
            let is_and = match self.peek_op() {
                Some("&&") => true,
                Some("||") => false,
                _ => break,
            };
            self.pos += 2;
            self.blank_nl();
            rest.push((is_and, self.pipeline()?));
        }
        if rest.is_empty() {
            Ok(first)
        } else {
            Ok(Arc::new(Cmd::AndOr { first, rest }))
        }
    }

    fn pipeline(&mut self) -> PResult<Arc<Cmd>> {
        self.blank();
        let mut bang = false;
        if self.peek_reserved() == Some("!") {
            self.pos += 1;
            bang = true;
            self.blank();
        }
        let mut cmds = vec![self.command()?];
        loop {
            self.blank();
            match self.peek_op() {
                Some("|") => self.pos += 1,
                Some("|&") => self.pos += 2,
                _ => break,
            }
            self.blank_nl();
            cmds.push(self.command()?);
        }
        if cmds.len() == 1 && !bang {
            Ok(cmds.pop().unwrap_or_else(|| Arc::new(Cmd::List(Vec::new()))))
        } else {
            Ok(Arc::new(Cmd::Pipeline { bang, cmds }))
        }
    }

    fn command(&mut self) -> PResult<Arc<Cmd>> {
        self.blank();
        let line = self.line;
        if self.peek().is_none() {
            return Err(self.err(SyntaxKind::Eof(None)));
        }
        if let Some(r) = self.peek_reserved() {
            let compound = match r {
                "{" => {
                    self.pos += 1;
                    self.closers.push("}");
                    let body = self.list(&["}"])?;
                    self.closers.pop();
                    self.expect_reserved("}", "{")?;
                    Some(Compound::Group(Arc::new(Cmd::List(body))))
                }
                "if" => Some(self.if_cmd()?),
                "while" | "until" => {
                    self.pos += r.len();
                    let cond = self.list(&["do"])?;
                    self.expect_reserved("do", r)?;
                    self.closers.push("done");
                    let body = self.list(&["done"]);
                    self.closers.pop();
                    let body = body?;
                    self.expect_reserved("done", "do")?;
                    Some(Compound::While { until: r == "until", cond: Arc::new(Cmd::List(cond)), body: Arc::new(Cmd::List(body)) })
                }
                "for" => Some(self.for_cmd()?),
                "case" => Some(self.case_cmd()?),
                "[[" if self.flavor == Flavor::Ash => {
                    // busybox ash: `[[ ... ]]` is its test builtin; `&&`, `||`, `(`, `)` are
                    // words there, `<` and `>` stay redirections.
                    let mut s = Simple { assigns: Vec::new(), words: vec![Word::lit("[[")], redirs: Vec::new(), line, decl: Vec::new() };
                    self.pos += 2;
                    loop {
                        self.blank();
                        match self.peek() {
                            None | Some('\n') | Some(';') => break,
                            _ => {}
                        }
                        if self.starts("]]") && self.s.get(self.pos + 2).is_none_or(|c| is_meta(*c)) {
                            self.pos += 2;
                            s.words.push(Word::lit("]]"));
                            break;
                        }
                        let mut op = None;
                        for o in ["&&", "||"] {
                            if self.starts(o) {
                                op = Some(o);
                                break;
                            }
                        }
                        if let Some(o) = op {
                            self.pos += o.len();
                            s.words.push(Word::lit(o));
                            continue;
                        }
                        if let Some(r) = self.try_redir()? {
                            s.redirs.push(r);
                            continue;
                        }
                        if self.peek().is_some_and(is_meta) {
                            return Err(self.unexpected_here());
                        }
                        s.words.push(self.word(false)?);
                    }
                    let redirs = self.redirs_after()?;
                    s.redirs.extend(redirs);
                    return Ok(Arc::new(Cmd::Simple(s)));
                }
                "[[" => {
                    self.pos += 2;
                    let e = self.cond_or()?;
                    self.blank();
                    if !self.starts("]]") {
                        return Err(self.unexpected_here());
                    }
                    self.pos += 2;
                    Some(Compound::Cond(Arc::new(e)))
                }
                "function" => {
                    self.pos += 8;
                    self.blank();
                    let name = self.peek_word_text();
                    self.pos += name.len();
                    self.blank();
                    if self.starts("()") {
                        self.pos += 2;
                    }
                    return self.func_body(name);
                }
                "!" => return Err(self.err(SyntaxKind::Unexpected("!".into()))),
                other => return Err(self.err(SyntaxKind::Unexpected(other.into()))),
            };
            if let Some(c) = compound {
                let redirs = self.redirs_after()?;
                return Ok(Arc::new(Cmd::Compound(Arc::new(c), redirs, line)));
            }
        }
        if self.starts("((") && self.bash() {
            self.pos += 2;
            let w = self.arith_body()?;
            let redirs = self.redirs_after()?;
            return Ok(Arc::new(Cmd::Compound(Arc::new(Compound::Arith(w)), redirs, line)));
        }
        if self.peek() == Some('(') {
            self.pos += 1;
            self.closers.push(")");
            let body = self.list(&[])?;
            self.closers.pop();
            self.blank_nl();
            if self.peek() != Some(')') {
                if self.peek().is_none() {
                    return Err(self.err(SyntaxKind::Eof(Some(")".into()))));
                }
                return Err(self.unexpected_here());
            }
            self.pos += 1;
            let redirs = self.redirs_after()?;
            return Ok(Arc::new(Cmd::Compound(Arc::new(Compound::Subshell(Arc::new(Cmd::List(body)))), redirs, line)));
        }
        // Function definition `name() body`.
        let save = (self.pos, self.line);
        let name = self.peek_word_text();
        if !name.is_empty() && !name.contains(['$', '"', '\'', '`', '\\', '=']) {
            self.pos += name.len();
            self.blank();
            if self.starts("()")
                || (self.peek() == Some('(') && {
                    let mut i = self.pos + 1;
                    while matches!(self.s.get(i), Some(' ') | Some('\t')) {
                        i += 1;
                    }
                    self.s.get(i) == Some(&')')
                })
            {
                while self.peek() != Some(')') {
                    self.pos += 1;
                }
                self.pos += 1;
                return self.func_body(name);
            }
            self.pos = save.0;
            self.line = save.1;
        }
        self.simple(line)
    }

    fn func_body(&mut self, name: String) -> PResult<Arc<Cmd>> {
        self.blank_nl();
        let body = self.command()?;
        Ok(Arc::new(Cmd::Func { name, body }))
    }

    fn redirs_after(&mut self) -> PResult<Vec<Redir>> {
        let mut v = Vec::new();
        loop {
            self.blank();
            match self.try_redir()? {
                Some(r) => v.push(r),
                None => break,
            }
        }
        self.blank();
        if let Some(c) = self.peek() {
            if !is_meta(c) && self.peek_reserved().is_none() && c != '}' && c != '#' {
                return Err(self.unexpected_here());
            }
        }
        Ok(v)
    }

    fn if_cmd(&mut self) -> PResult<Compound> {
        self.pos += 2;
        let mut arms = Vec::new();
        let mut else_ = None;
        loop {
            let cond = self.list(&["then"])?;
            if cond.is_empty() {
                if self.peek_is_eof() {
                    return Err(self.err(SyntaxKind::Eof(Some("then".into()))));
                }
                return Err(self.unexpected_here());
            }
            self.expect_reserved("then", "if")?;
            self.closers.push("fi");
            let body = self.list(&["elif", "else", "fi"]);
            self.closers.pop();
            let body = body?;
            if body.is_empty() {
                if self.peek_is_eof() {
                    return Err(self.err(SyntaxKind::Eof(Some("fi".into()))));
                }
                return Err(self.unexpected_here());
            }
            arms.push((Arc::new(Cmd::List(cond)), Arc::new(Cmd::List(body))));
            self.blank_nl();
            match self.peek_reserved() {
                Some("elif") => {
                    self.pos += 4;
                }
                Some("else") => {
                    self.pos += 4;
                    let b = self.list(&["fi"])?;
                    else_ = Some(Arc::new(Cmd::List(b)));
                    self.expect_reserved("fi", "if")?;
                    break;
                }
                Some("fi") => {
                    self.pos += 2;
                    break;
                }
                _ if self.peek().is_none() => return Err(self.err(SyntaxKind::Eof(Some("fi".into())))),
                _ => return Err(self.unexpected_here()),
            }
        }
        Ok(Compound::If { arms, else_ })
    }

    fn for_cmd(&mut self) -> PResult<Compound> {
        self.pos += 3;
        self.blank();
        if self.peek() == Some('(') && !self.bash() {
            return Err(self.err(SyntaxKind::BadForVar));
        }
        if self.starts("((") && self.bash() {
            self.pos += 2;
            let body = self.arith_body()?;
            let text = body.text();
            let parts: Vec<&str> = text.splitn(3, ';').collect();
            if parts.len() != 3 {
                return Err(self.err(SyntaxKind::Unexpected("((".into())));
            }
            let mk = |s: &str| -> PResult<Word> {
                let mut p = Parser {
                    s: s.chars().collect(),
                    pos: 0,
                    line: self.line,
                    flavor: self.flavor,
                    depth: self.depth,
                    bonus_lines: 0,
                    closers: Vec::new(),
                    warnings: Vec::new(),
                };
                p.arith_text_word(None)
            };
            let (init, cond, step) = (mk(parts[0])?, mk(parts[1])?, mk(parts[2])?);
            self.blank();
            if self.peek() == Some(';') {
                self.pos += 1;
            }
            self.blank_nl();
            let body = self.do_group()?;
            return Ok(Compound::ArithFor { init, cond, step, body });
        }
        let var = self.peek_word_text();
        if !valid_name(&var) {
            if !var.is_empty() {
                return Err(self.err(SyntaxKind::BadForVar));
            }
            return Err(self.err(SyntaxKind::Unexpected("newline".into())));
        }
        self.pos += var.len();
        self.blank();
        let mut words = None;
        let save = self.pos;
        self.blank_nl();
        if self.peek_reserved() == Some("in") {
            self.pos += 2;
            let mut ws = Vec::new();
            loop {
                self.blank();
                match self.peek() {
                    None | Some('\n') | Some(';') => break,
                    _ => {}
                }
                if self.peek_op().is_some() {
                    return Err(self.unexpected_here());
                }
                ws.push(self.word(false)?);
            }
            words = Some(ws);
            if self.peek() == Some(';') {
                self.pos += 1;
            }
        } else {
            self.pos = save;
            self.blank();
            if self.peek() == Some(';') {
                self.pos += 1;
            }
        }
        self.blank_nl();
        let body = self.do_group()?;
        Ok(Compound::For { var, words, body })
    }

    fn do_group(&mut self) -> PResult<Arc<Cmd>> {
        self.blank_nl();
        if self.peek_reserved() == Some("{") {
            self.pos += 1;
            let body = self.list(&["}"])?;
            self.expect_reserved("}", "{")?;
            return Ok(Arc::new(Cmd::List(body)));
        }
        self.expect_reserved("do", "for")?;
        let body = self.list(&["done"])?;
        self.expect_reserved("done", "do")?;
        Ok(Arc::new(Cmd::List(body)))
    }

    fn case_cmd(&mut self) -> PResult<Compound> {
        self.pos += 4;
        self.blank();
        let word = self.word(false)?;
        self.blank_nl();
        if self.peek_reserved() != Some("in") {
            if self.peek().is_none() {
                return Err(self.err(SyntaxKind::Eof(Some("in".into()))));
            }
            return Err(self.unexpected_here());
        }
        self.pos += 2;
        let mut arms = Vec::new();
        loop {
            self.blank_nl();
            if self.peek_reserved() == Some("esac") {
                self.pos += 4;
                break;
            }
            if self.peek().is_none() {
                return Err(self.err(SyntaxKind::Eof(Some("esac".into()))));
            }
            if self.peek() == Some('(') {
                self.pos += 1;
            }
            let mut pats = Vec::new();
            loop {
                self.blank();
                pats.push(self.word(false)?);
                self.blank();
                match self.peek() {
                    Some('|') => {
                        self.pos += 1;
                    }
                    Some(')') => {
                        self.pos += 1;
                        break;
                    }
                    None => return Err(self.err(SyntaxKind::Eof(Some(")".into())))),
                    _ => return Err(self.unexpected_here()),
                }
            }
            let body = self.list(&["esac"])?;
            self.blank_nl();
            let term = match self.peek_op() {
                Some(";;") => {
                    self.pos += 2;
                    CaseTerm::Break
                }
                Some(";&") => {
                    self.pos += 2;
                    CaseTerm::FallThrough
                }
                Some(";;&") => {
                    self.pos += 3;
                    CaseTerm::TestNext
                }
                _ => {
                    if self.peek_reserved() != Some("esac") {
                        if self.peek().is_none() {
                            return Err(self.err(SyntaxKind::Eof(Some("esac".into()))));
                        }
                        return Err(self.unexpected_here());
                    }
                    CaseTerm::Break
                }
            };
            arms.push(CaseArm { pats, body: Arc::new(Cmd::List(body)), term });
        }
        Ok(Compound::Case { word, arms })
    }

    fn cond_or(&mut self) -> PResult<CondExpr> {
        let mut l = self.cond_and()?;
        loop {
            self.blank_nl();
            if self.starts("||") {
                self.pos += 2;
                let r = self.cond_and()?;
                l = CondExpr::Or(Box::new(l), Box::new(r));
            } else {
                return Ok(l);
            }
        }
    }

    fn cond_and(&mut self) -> PResult<CondExpr> {
        let mut l = self.cond_not()?;
        loop {
            self.blank_nl();
            if self.starts("&&") {
                self.pos += 2;
                let r = self.cond_not()?;
                l = CondExpr::And(Box::new(l), Box::new(r));
            } else {
                return Ok(l);
            }
        }
    }

    fn cond_not(&mut self) -> PResult<CondExpr> {
        self.blank_nl();
        if self.peek() == Some('!') && self.peek_at(1).is_some_and(|c| c == ' ' || c == '\t') {
            self.pos += 1;
            return Ok(CondExpr::Not(Box::new(self.cond_not()?)));
        }
        if self.peek() == Some('(') {
            self.pos += 1;
            let e = self.cond_or()?;
            self.blank_nl();
            if self.peek() != Some(')') {
                return Err(self.unexpected_here());
            }
            self.pos += 1;
            return Ok(e);
        }
        self.cond_primary()
    }

    fn cond_word(&mut self, regex: bool) -> PResult<Word> {
        self.blank();
        if self.starts("]]") || self.peek().is_none() {
            return Err(if self.peek().is_none() { self.err(SyntaxKind::Eof(None)) } else { self.unexpected_here() });
        }
        self.word_impl(false, regex, true)
    }

    fn cond_primary(&mut self) -> PResult<CondExpr> {
        let w = self.cond_word(false)?;
        let text = w.as_lit().map(str::to_string);
        self.blank();
        if let Some(t) = &text {
            if t.len() == 2 && t.starts_with('-') && !self.starts("]]") && !self.starts("&&") && !self.starts("||") && !self.starts(")") {
                let opnd = self.cond_word(false)?;
                return Ok(CondExpr::Unary(t.clone(), opnd));
            }
        }
        // Binary operator?
        let ops = ["==", "!=", "=~", "=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef"];
        for op in ops {
            if self.starts(op) && self.peek_at(op.len()).is_some_and(|c| c == ' ' || c == '\t') {
                self.pos += op.len();
                let rhs = self.cond_word(op == "=~" && self.bash())?;
                return Ok(CondExpr::Binary(w, op.to_string(), rhs));
            }
        }
        Ok(CondExpr::Single(w))
    }

    /// Body of `((..))` up to the matching `))`.
    fn arith_body(&mut self) -> PResult<Word> {
        let start = self.pos;
        let mut depth = 0i32;
        loop {
            match self.peek() {
                None => return Err(self.err(SyntaxKind::Unterminated(')'))),
                Some('(') => depth += 1,
                Some(')') if depth == 0 && self.peek_at(1) == Some(')') => break,
                Some(')') => depth -= 1,
                _ => {}
            }
            self.bump();
        }
        let text: String = self.s[start..self.pos].iter().collect();
        self.pos += 2;
        let mut p = Parser {
            s: text.chars().collect(),
            pos: 0,
            line: self.line,
            flavor: self.flavor,
            depth: self.depth,
            bonus_lines: 0,
            closers: Vec::new(),
            warnings: Vec::new(),
        };
        p.arith_text_word(None)
    }

    /// Reads arithmetic text as a word: `$` expansions and quotes are parsed, everything else
    /// is literal. Stops at `stop` (or end).
    fn arith_text_word(&mut self, stop: Option<char>) -> PResult<Word> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        while let Some(c) = self.peek() {
            if Some(c) == stop {
                break;
            }
            match c {
                '$' => {
                    flush(&mut lit, &mut parts);
                    self.pos += 1;
                    parts.push(self.dollar(true)?);
                }
                '`' => {
                    flush(&mut lit, &mut parts);
                    self.pos += 1;
                    parts.push(self.backtick()?);
                }
                '"' => {
                    self.pos += 1;
                    flush(&mut lit, &mut parts);
                    let inner = self.dquoted()?;
                    parts.push(WordPart::Dq(inner));
                }
                _ => {
                    lit.push(c);
                    self.bump();
                }
            }
        }
        flush(&mut lit, &mut parts);
        Ok(Word(parts))
    }

    fn simple(&mut self, line: u32) -> PResult<Arc<Cmd>> {
        let mut s = Simple { assigns: Vec::new(), words: Vec::new(), redirs: Vec::new(), line, decl: Vec::new() };
        loop {
            self.blank();
            let Some(c) = self.peek() else { break };
            if let Some(r) = self.try_redir()? {
                s.redirs.push(r);
                continue;
            }
            if is_meta(c) {
                if c == '(' && !s.words.is_empty() {
                    return Err(self.err(SyntaxKind::Unexpected("(".into())));
                }
                if c == '(' {
                    return Err(self.err(SyntaxKind::Unexpected("(".into())));
                }
                break;
            }
            if s.words.is_empty() {
                if let Some(a) = self.try_assign()? {
                    s.assigns.push(a);
                    continue;
                }
            }
            if self.bash() && s.words.first().and_then(|w| w.as_lit()).is_some_and(|n| matches!(n, "declare" | "typeset" | "local" | "export" | "readonly")) {
                let save = (self.pos, self.line, self.bonus_lines);
                if let Some(a) = self.try_assign()? {
                    if matches!(a.value, AssignValue::Array(_)) {
                        s.words.push(Word::lit(&a.name));
                        s.decl.push(a);
                        continue;
                    }
                    (self.pos, self.line, self.bonus_lines) = save;
                }
            }
            let w = self.word(false)?;
            s.words.push(w);
        }
        if s.words.is_empty() && s.assigns.is_empty() && s.redirs.is_empty() {
            return Err(self.unexpected_here());
        }
        Ok(Arc::new(Cmd::Simple(s)))
    }

    fn try_assign(&mut self) -> PResult<Option<Assign>> {
        let start = self.pos;
        let mut i = self.pos;
        if !self.s.get(i).is_some_and(|&c| is_name_start(c)) {
            return Ok(None);
        }
        while self.s.get(i).is_some_and(|&c| is_name(c)) {
            i += 1;
        }
        let name: String = self.s[start..i].iter().collect();
        let mut index = None;
        if self.s.get(i) == Some(&'[') && self.not_dash() {
            // name[index]=
            let mut j = i + 1;
            let mut depth = 1;
            while let Some(&c) = self.s.get(j) {
                if c == '[' {
                    depth += 1;
                } else if c == ']' {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                } else if c == '\n' {
                    return Ok(None);
                }
                j += 1;
            }
            if self.s.get(j) != Some(&']') {
                return Ok(None);
            }
            let after = j + 1;
            let is_assign = self.s.get(after) == Some(&'=') || (self.s.get(after) == Some(&'+') && self.s.get(after + 1) == Some(&'='));
            if !is_assign {
                return Ok(None);
            }
            let text: String = self.s[i + 1..j].iter().collect();
            let mut p = Parser {
                s: text.chars().collect(),
                pos: 0,
                line: self.line,
                flavor: self.flavor,
                depth: self.depth,
                bonus_lines: 0,
                closers: Vec::new(),
                warnings: Vec::new(),
            };
            index = Some(p.arith_text_word(None)?);
            i = after;
        }
        let append = self.s.get(i) == Some(&'+') && self.s.get(i + 1) == Some(&'=') && self.bash();
        if append {
            i += 1;
        }
        if self.s.get(i) != Some(&'=') {
            return Ok(None);
        }
        self.pos = i + 1;
        if self.peek() == Some('(') && self.bash() {
            self.pos += 1;
            let mut items = Vec::new();
            loop {
                self.blank_nl();
                match self.peek() {
                    Some(')') => {
                        self.pos += 1;
                        break;
                    }
                    None => return Err(self.err(SyntaxKind::Unterminated(')'))),
                    Some(c) if is_meta(c) => return Err(self.unexpected_here()),
                    _ => items.push(self.word(false)?),
                }
            }
            return Ok(Some(Assign { name, index, value: AssignValue::Array(items), append }));
        }
        let value = if self.peek().is_none_or(is_meta) { Word::default() } else { self.word_impl(true, false, false)? };
        Ok(Some(Assign { name, index, value: AssignValue::Scalar(value), append }))
    }

    fn try_redir(&mut self) -> PResult<Option<Redir>> {
        let start = self.pos;
        let mut fd = None;
        let mut i = self.pos;
        while self.s.get(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        if i > start && matches!(self.s.get(i), Some('<') | Some('>')) {
            let n: String = self.s[start..i].iter().collect();
            fd = n.parse::<u32>().ok();
            self.pos = i;
        }
        let op = match self.peek_op() {
            Some(op @ ("<" | ">" | ">>" | ">|" | "<<" | "<<-" | "<<<" | ">&" | "<&" | "<>" | "&>" | "&>>")) => op,
            _ => {
                self.pos = start;
                return Ok(None);
            }
        };
        if op == "<<<" && !self.bash() {
            return Err(self.err(SyntaxKind::UnexpectedRedirection));
        }
        if fd.is_some() && matches!(op, "&>" | "&>>") {
            self.pos = start;
            return Ok(None);
        }
        self.pos += op.len();
        let rop = match op {
            "<" => RedirOp::In,
            ">" => RedirOp::Out,
            ">>" => RedirOp::Append,
            ">|" => RedirOp::Clobber,
            ">&" => RedirOp::DupOut,
            "<&" => RedirOp::DupIn,
            "<>" => RedirOp::ReadWrite,
            "<<<" => RedirOp::HereString,
            "&>" => RedirOp::OutErr,
            "&>>" => RedirOp::AppendErr,
            _ => {
                let strip = op == "<<-";
                self.blank();
                if self.peek().is_none_or(is_meta) {
                    return Err(self.unexpected_here());
                }
                let delim_word = self.word(false)?;
                let quoted = delim_word.has_quotes() || delim_word.text().contains('\\');
                let delim = unquote_text(&delim_word);
                let body = self.cut_heredoc(&delim, strip)?;
                let target = if quoted {
                    Word(vec![WordPart::Quoted(body)])
                } else {
                    let mut p = Parser {
                        s: body.chars().collect(),
                        pos: 0,
                        line: self.line,
                        flavor: self.flavor,
                        depth: self.depth,
                        bonus_lines: 0,
                        closers: Vec::new(),
                        warnings: Vec::new(),
                    };
                    p.heredoc_word()?
                };
                return Ok(Some(Redir { fd, op: RedirOp::HereDoc { expand: !quoted }, target }));
            }
        };
        self.blank();
        if self.peek().is_none() {
            return Err(self.err(SyntaxKind::Unexpected("newline".into())));
        }
        if self.peek().is_some_and(is_meta) {
            return Err(self.unexpected_here());
        }
        let target = self.word(false)?;
        Ok(Some(Redir { fd, op: rop, target }))
    }

    /// Removes the here-document body following the current line from the input.
    fn cut_heredoc(&mut self, delim: &str, strip: bool) -> PResult<String> {
        let mut i = self.pos;
        while i < self.s.len() && self.s[i] != '\n' {
            i += 1;
        }
        if i >= self.s.len() {
            // Body missing: bash warns and uses an empty body.
            self.warnings.push((self.line, delim.to_string()));
            return Ok(String::new());
        }
        let body_start = i + 1;
        let mut j = body_start;
        let mut body = String::new();
        let mut lines = 0u32;
        let mut found = false;
        loop {
            if j >= self.s.len() {
                break;
            }
            let mut k = j;
            while k < self.s.len() && self.s[k] != '\n' {
                k += 1;
            }
            let line: String = self.s[j..k].iter().collect();
            lines += 1;
            let cmp = if strip { line.trim_start_matches('\t') } else { line.as_str() };
            let next = if k < self.s.len() { k + 1 } else { k };
            if cmp == delim {
                j = next;
                found = true;
                break;
            }
            body.push_str(cmp);
            body.push('\n');
            j = next;
        }
        self.s.drain(body_start..j);
        self.bonus_lines += lines;
        if !found {
            self.warnings.push((self.line, delim.to_string()));
        }
        Ok(body)
    }

    /// Parses an unquoted here-document body: `$`, backticks and `\$ \` \\` are special.
    fn heredoc_word(&mut self) -> PResult<Word> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        while let Some(c) = self.peek() {
            match c {
                '\\' => {
                    self.bump();
                    match self.peek() {
                        Some(n @ ('$' | '`' | '\\')) => {
                            lit.push(n);
                            self.bump();
                        }
                        Some('\n') => {
                            self.bump();
                        }
                        _ => lit.push('\\'),
                    }
                }
                '$' => {
                    self.bump();
                    flush_q(&mut lit, &mut parts);
                    parts.push(self.dollar(true)?);
                }
                '`' => {
                    self.bump();
                    flush_q(&mut lit, &mut parts);
                    parts.push(self.backtick()?);
                }
                _ => {
                    lit.push(c);
                    self.bump();
                }
            }
        }
        flush_q(&mut lit, &mut parts);
        Ok(Word(vec![WordPart::Dq(parts)]))
    }

    fn word(&mut self, assign_rhs: bool) -> PResult<Word> {
        self.word_impl(assign_rhs, false, false)
    }

    /// Reads one word. `regex`: `[[ =~ ]]` right-hand side (parens and `|` allowed).
    fn word_impl(&mut self, assign_rhs: bool, regex: bool, in_cond: bool) -> PResult<Word> {
        let mut parts: Vec<WordPart> = Vec::new();
        let mut lit = String::new();
        let mut paren = 0i32;
        let start = self.pos;
        while let Some(c) = self.peek() {
            if regex {
                match c {
                    '(' => {
                        paren += 1;
                        lit.push(c);
                        self.bump();
                        continue;
                    }
                    ')' if paren > 0 => {
                        paren -= 1;
                        lit.push(c);
                        self.bump();
                        continue;
                    }
                    '|' | '<' | '>' => {
                        lit.push(c);
                        self.bump();
                        continue;
                    }
                    ' ' | '\t' if paren > 0 => {
                        lit.push(c);
                        self.bump();
                        continue;
                    }
                    _ if is_meta(c) => break,
                    _ => {}
                }
            } else if is_meta(c) {
                if in_cond && (c == '<' || c == '>') && self.pos == start {
                    lit.push(c);
                    self.bump();
                    continue;
                }
                break;
            }
            if in_cond && c == ']' && self.starts("]]") && self.pos == start {
                break;
            }
            match c {
                '\\' => {
                    self.bump();
                    match self.bump() {
                        Some('\n') => {}
                        Some(n) => {
                            flush(&mut lit, &mut parts);
                            parts.push(WordPart::Quoted(n.to_string()));
                        }
                        None => lit.push('\\'),
                    }
                }
                '\'' => {
                    self.bump();
                    flush(&mut lit, &mut parts);
                    let mut q = String::new();
                    loop {
                        match self.bump() {
                            None => return Err(self.err(SyntaxKind::Unterminated('\''))),
                            Some('\'') => break,
                            Some(ch) => q.push(ch),
                        }
                    }
                    parts.push(WordPart::Quoted(q));
                }
                '"' => {
                    self.bump();
                    flush(&mut lit, &mut parts);
                    let inner = self.dquoted()?;
                    parts.push(WordPart::Dq(inner));
                }
                '$' if self.peek_at(1) == Some('\'') && self.not_dash() => {
                    self.pos += 2;
                    flush(&mut lit, &mut parts);
                    let q = self.ansi_c()?;
                    parts.push(WordPart::Quoted(q));
                }
                '$' if self.peek_at(1) == Some('"') && self.bash() => {
                    self.pos += 1;
                }
                '$' => {
                    self.bump();
                    flush(&mut lit, &mut parts);
                    parts.push(self.dollar(false)?);
                }
                '`' => {
                    self.bump();
                    flush(&mut lit, &mut parts);
                    parts.push(self.backtick()?);
                }
                '~' if self.pos == start || (assign_rhs && lit.ends_with(':')) => {
                    self.bump();
                    let mut user = String::new();
                    while let Some(ch) = self.peek() {
                        if ch == '/' || ch == ':' || is_meta(ch) || !(is_name(ch) || ch == '-' || ch == '.') {
                            break;
                        }
                        user.push(ch);
                        self.bump();
                    }
                    flush(&mut lit, &mut parts);
                    parts.push(WordPart::Tilde(user));
                }
                _ => {
                    lit.push(c);
                    self.bump();
                }
            }
        }
        flush(&mut lit, &mut parts);
        Ok(Word(parts))
    }

    fn ansi_c(&mut self) -> PResult<String> {
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(self.err(SyntaxKind::Unterminated('\''))),
                Some('\'') => return Ok(out),
                Some('\\') => {
                    let Some(e) = self.bump() else { return Err(self.err(SyntaxKind::Unterminated('\''))) };
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'a' => out.push('\x07'),
                        'b' => out.push('\x08'),
                        'e' | 'E' => out.push('\x1b'),
                        'f' => out.push('\x0c'),
                        'v' => out.push('\x0b'),
                        '\\' => out.push('\\'),
                        '\'' => out.push('\''),
                        '"' => out.push('"'),
                        '?' => out.push('?'),
                        'x' => {
                            let mut v = 0u32;
                            let mut n = 0;
                            while n < 2 && self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                                v = v * 16 + self.bump().and_then(|c| c.to_digit(16)).unwrap_or(0);
                                n += 1;
                            }
                            out.push(char::from_u32(v).unwrap_or('?'));
                        }
                        '0'..='7' => {
                            let mut v = e.to_digit(8).unwrap_or(0);
                            let mut n = 1;
                            while n < 3 && self.peek().is_some_and(|c| ('0'..='7').contains(&c)) {
                                v = v * 8 + self.bump().and_then(|c| c.to_digit(8)).unwrap_or(0);
                                n += 1;
                            }
                            out.push(char::from_u32(v).unwrap_or('?'));
                        }
                        other => {
                            out.push('\\');
                            out.push(other);
                        }
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }

    /// Contents of a double-quoted string (after the opening quote, consuming the closing one).
    fn dquoted(&mut self) -> PResult<Vec<WordPart>> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        loop {
            match self.peek() {
                None => return Err(self.err(SyntaxKind::Unterminated('"'))),
                Some('"') => {
                    self.bump();
                    break;
                }
                Some('\\') => {
                    self.bump();
                    match self.peek() {
                        Some(c @ ('$' | '`' | '"' | '\\')) => {
                            lit.push(c);
                            self.bump();
                        }
                        Some('\n') => {
                            self.bump();
                        }
                        _ => lit.push('\\'),
                    }
                }
                Some('$') => {
                    self.bump();
                    flush_q(&mut lit, &mut parts);
                    parts.push(self.dollar(true)?);
                }
                Some('`') => {
                    self.bump();
                    flush_q(&mut lit, &mut parts);
                    parts.push(self.backtick()?);
                }
                Some(c) => {
                    lit.push(c);
                    self.bump();
                }
            }
        }
        flush_q(&mut lit, &mut parts);
        Ok(parts)
    }

    fn backtick(&mut self) -> PResult<WordPart> {
        let mut src = String::new();
        loop {
            match self.bump() {
                None => return Err(self.err(SyntaxKind::Unterminated('`'))),
                Some('`') => break,
                Some('\\') => match self.peek() {
                    Some(c @ ('$' | '`' | '\\')) => {
                        src.push(c);
                        self.bump();
                    }
                    _ => src.push('\\'),
                },
                Some(c) => src.push(c),
            }
        }
        let mut p = Parser {
            s: src.chars().collect(),
            pos: 0,
            line: self.line,
            flavor: self.flavor,
            depth: self.depth + 1,
            bonus_lines: 0,
            closers: Vec::new(),
            warnings: Vec::new(),
        };
        if p.depth > MAX_DEPTH {
            return Err(self.err(SyntaxKind::Unexpected("`".into())));
        }
        let list = p.list(&[])?;
        p.blank_nl();
        if p.pos < p.s.len() {
            return Err(p.unexpected_here());
        }
        Ok(WordPart::Cmd(Arc::new(Cmd::List(list))))
    }

    /// After a `$`.
    fn dollar(&mut self, in_dq: bool) -> PResult<WordPart> {
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.pos += 2;
                let start = self.pos;
                let mut depth = 0i32;
                loop {
                    match self.peek() {
                        None => return Err(self.err(SyntaxKind::Unterminated(')'))),
                        Some('(') => depth += 1,
                        Some(')') if depth == 0 => {
                            if self.peek_at(1) == Some(')') {
                                break;
                            }
                            return Err(self.err(SyntaxKind::Unexpected(")".into())));
                        }
                        Some(')') => depth -= 1,
                        _ => {}
                    }
                    self.bump();
                }
                let text: String = self.s[start..self.pos].iter().collect();
                self.pos += 2;
                let mut p = Parser {
                    s: text.chars().collect(),
                    pos: 0,
                    line: self.line,
                    flavor: self.flavor,
                    depth: self.depth,
                    bonus_lines: 0,
                    closers: Vec::new(),
                    warnings: Vec::new(),
                };
                Ok(WordPart::Arith(p.arith_text_word(None)?))
            }
            Some('(') => {
                self.pos += 1;
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(self.err(SyntaxKind::Unexpected("(".into())));
                }
                let list = self.list(&[])?;
                self.depth -= 1;
                self.blank_nl();
                if self.peek() != Some(')') {
                    if self.peek().is_none() {
                        return Err(self.err(SyntaxKind::Unterminated(')')));
                    }
                    return Err(self.unexpected_here());
                }
                self.pos += 1;
                Ok(WordPart::Cmd(Arc::new(Cmd::List(list))))
            }
            Some('{') => {
                self.pos += 1;
                self.brace_param(in_dq)
            }
            Some(c) if is_name_start(c) => {
                let mut name = String::new();
                while let Some(c) = self.peek() {
                    if !is_name(c) {
                        break;
                    }
                    name.push(c);
                    self.pos += 1;
                }
                Ok(WordPart::Param(Box::new(Param { name, index: None, op: ParamOp::Plain, bang: false })))
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                self.pos += 1;
                Ok(WordPart::Param(Box::new(Param { name: c.to_string(), index: None, op: ParamOp::Plain, bang: false })))
            }
            _ => Ok(if in_dq { WordPart::Quoted("$".into()) } else { WordPart::Lit("$".into()) }),
        }
    }

    fn brace_param(&mut self, in_dq: bool) -> PResult<WordPart> {
        let start = self.pos;
        let bad = |p: &mut Parser| -> SyntaxError {
            let mut i = start;
            while i < p.s.len() && p.s[i] != '}' {
                i += 1;
            }
            let t: String = p.s[start..i.min(p.s.len())].iter().collect();
            p.err(SyntaxKind::BadSubst(format!("${{{t}}}")))
        };
        let mut length = false;
        let mut bang = false;
        if self.peek() == Some('#')
            && self.peek_at(1).is_some_and(|c| c != '}')
            && !(self.peek_at(1) == Some(':') || self.peek_at(1) == Some('-') && self.peek_at(2) == Some('}'))
        {
            length = true;
            self.pos += 1;
        } else if self.peek() == Some('!') && self.peek_at(1).is_some_and(|c| c != '}') && self.not_dash() {
            bang = true;
            self.pos += 1;
        }
        let mut name = String::new();
        match self.peek() {
            Some(c) if is_name_start(c) => {
                while let Some(c) = self.peek() {
                    if !is_name(c) {
                        break;
                    }
                    name.push(c);
                    self.pos += 1;
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while let Some(c) = self.peek() {
                    if !c.is_ascii_digit() {
                        break;
                    }
                    name.push(c);
                    self.pos += 1;
                }
            }
            Some(c) if "@*#?-$!".contains(c) => {
                name.push(c);
                self.pos += 1;
            }
            None => return Err(self.err(SyntaxKind::Unterminated('}'))),
            _ => return Err(bad(self)),
        }
        let mut index = None;
        if self.peek() == Some('[') && self.not_dash() && self.flavor == Flavor::Bash {
            self.pos += 1;
            let s = self.pos;
            let mut depth = 1;
            while let Some(c) = self.peek() {
                if c == '[' {
                    depth += 1;
                }
                if c == ']' {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                self.bump();
            }
            let text: String = self.s[s..self.pos].iter().collect();
            self.pos += 1;
            let mut p = Parser {
                s: text.chars().collect(),
                pos: 0,
                line: self.line,
                flavor: self.flavor,
                depth: self.depth,
                bonus_lines: 0,
                closers: Vec::new(),
                warnings: Vec::new(),
            };
            index = Some(p.arith_text_word(None)?);
        }
        if length {
            if self.peek() != Some('}') {
                return Err(bad(self));
            }
            self.pos += 1;
            return Ok(WordPart::Param(Box::new(Param { name, index, op: ParamOp::Length, bang: false })));
        }
        let op = match self.peek() {
            Some('}') => {
                self.pos += 1;
                return Ok(WordPart::Param(Box::new(Param { name, index, op: ParamOp::Plain, bang })));
            }
            None => return Err(self.err(SyntaxKind::Unterminated('}'))),
            Some(':') if matches!(self.peek_at(1), Some('-' | '=' | '?' | '+')) => {
                let c = self.peek_at(1).unwrap_or('-');
                self.pos += 2;
                let word = self.param_word(in_dq, None)?;
                mk_op(c, true, word)
            }
            Some(c @ ('-' | '=' | '?' | '+')) => {
                self.pos += 1;
                let word = self.param_word(in_dq, None)?;
                mk_op(c, false, word)
            }
            Some('#') => {
                self.pos += 1;
                let longest = self.peek() == Some('#');
                if longest {
                    self.pos += 1;
                }
                ParamOp::TrimPrefix { longest, pat: self.param_word(in_dq, None)? }
            }
            Some('%') => {
                self.pos += 1;
                let longest = self.peek() == Some('%');
                if longest {
                    self.pos += 1;
                }
                ParamOp::TrimSuffix { longest, pat: self.param_word(in_dq, None)? }
            }
            Some('/') if self.not_dash() => {
                self.pos += 1;
                let mode = match self.peek() {
                    Some('/') => {
                        self.pos += 1;
                        ReplaceMode::All
                    }
                    Some('#') => {
                        self.pos += 1;
                        ReplaceMode::Prefix
                    }
                    Some('%') => {
                        self.pos += 1;
                        ReplaceMode::Suffix
                    }
                    _ => ReplaceMode::First,
                };
                let pat = self.param_word(in_dq, Some('/'))?;
                let rep = if self.s.get(self.pos - 1) == Some(&'/') { self.param_word(in_dq, None)? } else { Word::default() };
                ParamOp::Replace { mode, pat, rep }
            }
            Some(':') if self.not_dash() => {
                self.pos += 1;
                let off = self.param_arith(&[':', '}'])?;
                let len = if self.peek() == Some(':') {
                    self.pos += 1;
                    Some(self.param_arith(&['}'])?)
                } else {
                    None
                };
                if self.peek() != Some('}') {
                    return Err(bad(self));
                }
                self.pos += 1;
                ParamOp::Substr { off, len }
            }
            Some(c @ ('^' | ',')) if self.bash() => {
                self.pos += 1;
                let all = self.peek() == Some(c);
                if all {
                    self.pos += 1;
                }
                if self.peek() != Some('}') {
                    return Err(bad(self));
                }
                self.pos += 1;
                ParamOp::Case { upper: c == '^', all }
            }
            _ => return Err(bad(self)),
        };
        Ok(WordPart::Param(Box::new(Param { name, index, op, bang })))
    }

    fn param_arith(&mut self, stops: &[char]) -> PResult<Word> {
        let s = self.pos;
        let mut depth = 0;
        while let Some(c) = self.peek() {
            if depth == 0 && stops.contains(&c) {
                break;
            }
            if c == '(' {
                depth += 1;
            } else if c == ')' {
                depth -= 1;
            }
            self.bump();
        }
        let text: String = self.s[s..self.pos].iter().collect();
        let mut p = Parser {
            s: text.chars().collect(),
            pos: 0,
            line: self.line,
            flavor: self.flavor,
            depth: self.depth,
            bonus_lines: 0,
            closers: Vec::new(),
            warnings: Vec::new(),
        };
        p.arith_text_word(None)
    }

    /// The word inside `${x:-word}` up to the matching `}` (consumed), or up to `stop`
    /// (consumed) for the pattern of `${x/pat/rep}`.
    fn param_word(&mut self, in_dq: bool, stop: Option<char>) -> PResult<Word> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut depth = 0;
        loop {
            let Some(c) = self.peek() else { return Err(self.err(SyntaxKind::Unterminated('}'))) };
            if Some(c) == stop && depth == 0 {
                self.bump();
                break;
            }
            match c {
                '}' if depth == 0 => {
                    self.bump();
                    break;
                }
                '{' => {
                    depth += 1;
                    lit.push(c);
                    self.bump();
                }
                '}' => {
                    depth -= 1;
                    lit.push(c);
                    self.bump();
                }
                '\\' => {
                    self.bump();
                    if let Some(n) = self.bump() {
                        if in_dq && !matches!(n, '$' | '`' | '"' | '\\' | '}') {
                            lit.push('\\');
                            lit.push(n);
                        } else {
                            flush_any(&mut lit, &mut parts, false);
                            parts.push(WordPart::Quoted(n.to_string()));
                        }
                    }
                }
                '\'' if !in_dq => {
                    self.bump();
                    flush_any(&mut lit, &mut parts, false);
                    let mut q = String::new();
                    loop {
                        match self.bump() {
                            None => return Err(self.err(SyntaxKind::Unterminated('\''))),
                            Some('\'') => break,
                            Some(ch) => q.push(ch),
                        }
                    }
                    parts.push(WordPart::Quoted(q));
                }
                '"' => {
                    self.bump();
                    flush_any(&mut lit, &mut parts, false);
                    let inner = self.dquoted()?;
                    parts.push(WordPart::Dq(inner));
                }
                '$' => {
                    self.bump();
                    flush_any(&mut lit, &mut parts, false);
                    parts.push(self.dollar(in_dq)?);
                }
                '`' => {
                    self.bump();
                    flush_any(&mut lit, &mut parts, false);
                    parts.push(self.backtick()?);
                }
                _ => {
                    lit.push(c);
                    self.bump();
                }
            }
        }
        flush_any(&mut lit, &mut parts, false);
        Ok(Word(parts))
    }
}

fn mk_op(c: char, colon: bool, word: Word) -> ParamOp {
    match c {
        '-' => ParamOp::Default { colon, word },
        '=' => ParamOp::Assign { colon, word },
        '?' => ParamOp::Error { colon, word },
        _ => ParamOp::Alt { colon, word },
    }
}

fn flush(lit: &mut String, parts: &mut Vec<WordPart>) {
    if !lit.is_empty() {
        parts.push(WordPart::Lit(std::mem::take(lit)));
    }
}

fn flush_q(lit: &mut String, parts: &mut Vec<WordPart>) {
    if !lit.is_empty() {
        parts.push(WordPart::Quoted(std::mem::take(lit)));
    }
}

fn flush_any(lit: &mut String, parts: &mut Vec<WordPart>, quoted: bool) {
    if quoted {
        flush_q(lit, parts)
    } else {
        flush(lit, parts)
    }
}

/// The literal text of a here-document delimiter with quotes removed.
fn unquote_text(w: &Word) -> String {
    let mut s = String::new();
    for p in &w.0 {
        match p {
            WordPart::Lit(t) | WordPart::Quoted(t) => s.push_str(t),
            WordPart::Dq(parts) => s.push_str(&unquote_text(&Word(parts.clone()))),
            WordPart::Param(p) => {
                s.push('$');
                s.push_str(&p.name);
            }
            _ => {}
        }
    }
    s
}
