//! The shell's syntax tree. Children are `Arc`s so execution frames can hold them cheaply.

use std::sync::Arc;

/// A word: a sequence of parts concatenated before field splitting.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Word(pub Vec<WordPart>);

/// A piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordPart {
    /// Unquoted literal text (subject to globbing; never split).
    Lit(String),
    /// Quoted literal text (single quotes, backslash escapes, `$'..'`).
    Quoted(String),
    /// A double-quoted section.
    Dq(Vec<WordPart>),
    /// A parameter expansion.
    Param(Box<Param>),
    /// `$(..)` or backticks.
    Cmd(Arc<Cmd>),
    /// `$((..))`: the expression text (itself expanded first).
    Arith(Word),
    /// `~` or `~user` at the start of a word.
    Tilde(String),
}

/// `${name[index]op}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Variable name, digits, or one of `@*#?-$!0`.
    pub name: String,
    /// Array subscript (`@`, `*`, or an arithmetic expression).
    pub index: Option<Word>,
    /// The operation.
    pub op: ParamOp,
    /// `${!name}` (indirection) or `${!arr[@]}` (keys).
    pub bang: bool,
}

/// Parameter expansion operators.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ParamOp {
    Plain,
    Length,
    Default { colon: bool, word: Word },
    Assign { colon: bool, word: Word },
    Error { colon: bool, word: Word },
    Alt { colon: bool, word: Word },
    TrimPrefix { longest: bool, pat: Word },
    TrimSuffix { longest: bool, pat: Word },
    Replace { mode: ReplaceMode, pat: Word, rep: Word },
    Substr { off: Word, len: Option<Word> },
    Case { upper: bool, all: bool },
}

/// `${x/..}` variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ReplaceMode {
    First,
    All,
    Prefix,
    Suffix,
}

/// A redirection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redir {
    /// Explicit fd (`2>`), else the operator's default.
    pub fd: Option<u32>,
    /// Operator.
    pub op: RedirOp,
    /// Target word (file name, fd number, here-string, or here-document body).
    pub target: Word,
}

/// Redirection operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum RedirOp {
    In,
    Out,
    Append,
    Clobber,
    DupOut,
    DupIn,
    ReadWrite,
    /// Here-document; `expand` = delimiter unquoted.
    HereDoc {
        expand: bool,
    },
    HereString,
    /// `&>` (bash).
    OutErr,
    /// `&>>` (bash).
    AppendErr,
}

impl RedirOp {
    /// The default fd.
    pub fn default_fd(self) -> u32 {
        match self {
            RedirOp::In | RedirOp::DupIn | RedirOp::ReadWrite | RedirOp::HereDoc { .. } | RedirOp::HereString => 0,
            _ => 1,
        }
    }
}

/// `name=value`, `name[i]=value`, `name=(a b)`, `name+=value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assign {
    /// Variable name.
    pub name: String,
    /// Subscript.
    pub index: Option<Word>,
    /// Value.
    pub value: AssignValue,
    /// `+=`.
    pub append: bool,
}

/// The value of an assignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssignValue {
    /// A scalar word.
    Scalar(Word),
    /// A bash array literal.
    Array(Vec<Word>),
}

/// A simple command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Simple {
    /// Prefix assignments.
    pub assigns: Vec<Assign>,
    /// Command name and arguments.
    pub words: Vec<Word>,
    /// Redirections.
    pub redirs: Vec<Redir>,
    /// Source line.
    pub line: u32,
    /// Assignment arguments of bash's declaration builtins (`declare -a A=(1 2)`), applied
    /// after the builtin ran; their names also appear in `words`.
    pub decl: Vec<Assign>,
}

/// A command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// Simple command.
    Simple(Simple),
    /// `a | b | c`, optionally negated.
    Pipeline {
        /// `!`.
        bang: bool,
        /// Stages.
        cmds: Vec<Arc<Cmd>>,
    },
    /// `a && b || c`.
    AndOr {
        /// First command.
        first: Arc<Cmd>,
        /// `(is_and, cmd)`.
        rest: Vec<(bool, Arc<Cmd>)>,
    },
    /// A list; `true` = run in the background (`&`).
    List(Vec<(Arc<Cmd>, bool)>),
    /// A compound command with redirections.
    Compound(Arc<Compound>, Vec<Redir>, u32),
    /// Function definition.
    Func {
        /// Name.
        name: String,
        /// Body.
        body: Arc<Cmd>,
    },
}

/// A `case` arm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseArm {
    /// Patterns.
    pub pats: Vec<Word>,
    /// Body.
    pub body: Arc<Cmd>,
    /// `;&` (fall through) or `;;&` (test next) instead of `;;`.
    pub term: CaseTerm,
}

/// How a case arm ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum CaseTerm {
    Break,
    FallThrough,
    TestNext,
}

/// Compound commands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Compound {
    Group(Arc<Cmd>),
    Subshell(Arc<Cmd>),
    If { arms: Vec<(Arc<Cmd>, Arc<Cmd>)>, else_: Option<Arc<Cmd>> },
    While { until: bool, cond: Arc<Cmd>, body: Arc<Cmd> },
    For { var: String, words: Option<Vec<Word>>, body: Arc<Cmd> },
    ArithFor { init: Word, cond: Word, step: Word, body: Arc<Cmd> },
    Case { word: Word, arms: Vec<CaseArm> },
    Arith(Word),
    Cond(Arc<CondExpr>),
}

/// `[[ .. ]]` expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum CondExpr {
    Unary(String, Word),
    Binary(Word, String, Word),
    Not(Box<CondExpr>),
    And(Box<CondExpr>, Box<CondExpr>),
    Or(Box<CondExpr>, Box<CondExpr>),
    Single(Word),
}

impl Word {
    /// A word of one literal.
    pub fn lit(s: &str) -> Word {
        Word(vec![WordPart::Lit(s.to_string())])
    }

    /// The word's text if it is entirely unquoted literal text.
    pub fn as_lit(&self) -> Option<&str> {
        match self.0.as_slice() {
            [WordPart::Lit(s)] => Some(s),
            _ => None,
        }
    }

    /// Whether any part is quoted (for here-document delimiters, `case` patterns).
    pub fn has_quotes(&self) -> bool {
        self.0.iter().any(|p| matches!(p, WordPart::Quoted(_) | WordPart::Dq(_)))
    }

    /// Source-like text of the word (for static analysis and traces).
    pub fn text(&self) -> String {
        let mut s = String::new();
        for p in &self.0 {
            match p {
                WordPart::Lit(t) | WordPart::Quoted(t) => s.push_str(t),
                WordPart::Dq(parts) => s.push_str(&Word(parts.clone()).text()),
                WordPart::Param(p) => {
                    s.push('$');
                    s.push_str(&p.name)
                }
                WordPart::Cmd(_) => s.push_str("$(..)"),
                WordPart::Arith(w) => {
                    s.push_str("$((");
                    s.push_str(&w.text());
                    s.push_str("))")
                }
                WordPart::Tilde(u) => {
                    s.push('~');
                    s.push_str(u)
                }
            }
        }
        s
    }
}
