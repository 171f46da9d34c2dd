//! `test` / `[` (POSIX argument-count rules, then `-a`/`-o`/`!`/parentheses).

use crate::fs::{FileType, Fs};
use crate::program::Os;

/// A `test` usage error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestErr {
    /// An integer operand is not a number.
    BadNumber(String),
    /// A word where an operator was expected.
    UnknownOperand(String),
    /// Too many arguments.
    TooMany(String),
    /// `(` without `)`.
    MissingParen,
    /// Three operands whose middle one is not a binary operator: (first, middle).
    BinaryExpected(String, String),
}

/// Message styles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrStyle {
    /// busybox (shell builtin and applet).
    Busybox,
    /// dash builtin.
    Dash,
    /// bash builtin.
    Bash,
    /// GNU coreutils.
    Gnu,
}

impl TestErr {
    /// The message text after the `prefix: ` the caller prints.
    pub fn message(&self, style: ErrStyle) -> String {
        match (self, style) {
            (TestErr::BadNumber(x), ErrStyle::Busybox) => format!("{x}: bad number"),
            (TestErr::BadNumber(x), ErrStyle::Dash) => format!("Illegal number: {x}"),
            (TestErr::BadNumber(x), ErrStyle::Bash) => format!("{x}: integer expression expected"),
            (TestErr::BadNumber(x), ErrStyle::Gnu) => format!("invalid integer '{x}'"),
            (TestErr::UnknownOperand(x) | TestErr::TooMany(x), ErrStyle::Busybox) => format!("{x}: unknown operand"),
            (TestErr::UnknownOperand(x) | TestErr::TooMany(x), ErrStyle::Dash) => format!("{x}: unexpected operator"),
            (TestErr::UnknownOperand(x), ErrStyle::Bash) => format!("{x}: binary operator expected"),
            (TestErr::TooMany(_), ErrStyle::Bash) => "too many arguments".into(),
            (TestErr::UnknownOperand(x) | TestErr::TooMany(x), ErrStyle::Gnu) => format!("'{x}': binary operator expected"),
            (TestErr::MissingParen, ErrStyle::Bash) => "`)' expected".into(),
            (TestErr::BinaryExpected(_, op), ErrStyle::Busybox) => format!("{op}: unknown operand"),
            (TestErr::BinaryExpected(first, _), ErrStyle::Dash) => format!("{first}: unexpected operator"),
            (TestErr::BinaryExpected(_, op), ErrStyle::Bash) => format!("{op}: binary operator expected"),
            (TestErr::BinaryExpected(_, op), ErrStyle::Gnu) => format!("'{op}': binary operator expected"),
            (TestErr::MissingParen, _) => "missing )".into(),
        }
    }
}

const UNARY: &[&str] = &["-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-b", "-c", "-p", "-S", "-z", "-n", "-t", "-g", "-u", "-k", "-O", "-G", "-a"];
const BINARY: &[&str] = &["=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef"];

struct T<'a> {
    a: &'a [String],
    i: usize,
    os: &'a mut dyn Os,
    cwd: &'a str,
    glob: bool,
}

/// Evaluates `test args` (without the closing `]`).
pub fn eval(args: &[String], os: &mut dyn Os, cwd: &str) -> Result<bool, TestErr> {
    eval_ext(args, os, cwd, false)
}

/// Like [`eval`]; with `glob`, `==`/`!=` match shell patterns (busybox ash's `[[`).
pub fn eval_ext(args: &[String], os: &mut dyn Os, cwd: &str, glob: bool) -> Result<bool, TestErr> {
    let mut t = T { a: args, i: 0, os, cwd, glob };
    match args.len() {
        0 => Ok(false),
        1 => Ok(!args[0].is_empty()),
        2 => {
            if args[0] == "!" {
                return Ok(args[1].is_empty());
            }
            if UNARY.contains(&args[0].as_str()) {
                return t.unary(&args[0], &args[1]);
            }
            Err(TestErr::UnknownOperand(args[0].clone()))
        }
        3 => {
            if BINARY.contains(&args[1].as_str()) {
                return t.binary(&args[0], &args[1], &args[2]);
            }
            if args[1] == "-a" || args[1] == "-o" {
                let (l, r) = (!args[0].is_empty(), !args[2].is_empty());
                return Ok(if args[1] == "-a" { l && r } else { l || r });
            }
            if args[0] == "!" {
                return eval_ext(&args[1..], t.os, cwd, glob).map(|b| !b);
            }
            if args[0] == "(" && args[2] == ")" {
                return Ok(!args[1].is_empty());
            }
            Err(TestErr::BinaryExpected(args[0].clone(), args[1].clone()))
        }
        4 if args[0] == "!" => eval_ext(&args[1..], t.os, cwd, glob).map(|b| !b),
        _ => {
            let v = t.or()?;
            if t.i < args.len() {
                return Err(TestErr::TooMany(args[t.i].clone()));
            }
            Ok(v)
        }
    }
}

impl T<'_> {
    fn peek(&self) -> Option<&str> {
        self.a.get(self.i).map(String::as_str)
    }

    fn or(&mut self) -> Result<bool, TestErr> {
        let mut v = self.and()?;
        while self.peek() == Some("-o") {
            self.i += 1;
            let r = self.and()?;
            v = v || r;
        }
        Ok(v)
    }

    fn and(&mut self) -> Result<bool, TestErr> {
        let mut v = self.not()?;
        while self.peek() == Some("-a") {
            self.i += 1;
            let r = self.not()?;
            v = v && r;
        }
        Ok(v)
    }

    fn not(&mut self) -> Result<bool, TestErr> {
        if self.peek() == Some("!") {
            self.i += 1;
            return Ok(!self.not()?);
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<bool, TestErr> {
        let Some(x) = self.peek().map(str::to_string) else { return Ok(false) };
        if x == "(" {
            self.i += 1;
            let v = self.or()?;
            if self.peek() != Some(")") {
                return Err(TestErr::MissingParen);
            }
            self.i += 1;
            return Ok(v);
        }
        if let Some(op) = self.a.get(self.i + 1).cloned() {
            if BINARY.contains(&op.as_str()) && self.a.get(self.i + 2).is_some() {
                let r = self.a[self.i + 2].clone();
                self.i += 3;
                return self.binary(&x, &op, &r);
            }
        }
        if UNARY.contains(&x.as_str()) && x != "-a" {
            if let Some(arg) = self.a.get(self.i + 1).cloned() {
                self.i += 2;
                return self.unary(&x, &arg);
            }
        }
        self.i += 1;
        Ok(!x.is_empty())
    }

    fn path(&self, p: &str) -> String {
        crate::fs::join(self.cwd, p)
    }

    fn unary(&mut self, op: &str, arg: &str) -> Result<bool, TestErr> {
        let p = self.path(arg);
        let fs: &dyn Fs = self.os.fs_ref();
        let st = fs.stat(&p);
        Ok(match op {
            "-z" => arg.is_empty(),
            "-n" => !arg.is_empty(),
            "-e" | "-a" => st.is_ok(),
            "-f" => st.is_ok_and(|m| m.is_file()),
            "-d" => st.is_ok_and(|m| m.is_dir()),
            "-s" => st.is_ok_and(|m| m.size > 0 && !m.is_dir() || m.is_dir()),
            "-r" | "-w" => st.is_ok_and(|m| !(op == "-w" && m.mount_ro)),
            "-x" => st.is_ok_and(|m| m.mode & 0o111 != 0),
            "-L" | "-h" => fs.lstat(&p).is_ok_and(|m| m.is_symlink()),
            "-c" => st.is_ok_and(|m| m.ftype == FileType::CharDev),
            "-b" | "-p" | "-S" => false,
            "-t" => false,
            "-g" => st.is_ok_and(|m| m.mode & 0o2000 != 0),
            "-u" => st.is_ok_and(|m| m.mode & 0o4000 != 0),
            "-k" => st.is_ok_and(|m| m.mode & 0o1000 != 0),
            "-O" | "-G" => st.is_ok(),
            _ => false,
        })
    }

    fn binary(&mut self, l: &str, op: &str, r: &str) -> Result<bool, TestErr> {
        let int = |s: &str| -> Result<i64, TestErr> { s.trim().parse::<i64>().map_err(|_| TestErr::BadNumber(s.to_string())) };
        Ok(match op {
            "=" | "==" if self.glob => crate::pattern::matches(r, l),
            "!=" if self.glob => !crate::pattern::matches(r, l),
            "=" | "==" => l == r,
            "!=" => l != r,
            "<" => l < r,
            ">" => l > r,
            "-eq" => int(l)? == int(r)?,
            "-ne" => int(l)? != int(r)?,
            "-lt" => int(l)? < int(r)?,
            "-le" => int(l)? <= int(r)?,
            "-gt" => int(l)? > int(r)?,
            "-ge" => int(l)? >= int(r)?,
            "-nt" | "-ot" => {
                let a = self.os.fs_ref().stat(&self.path(l)).map(|m| m.mtime_ms);
                let b = self.os.fs_ref().stat(&self.path(r)).map(|m| m.mtime_ms);
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        if op == "-nt" {
                            a > b
                        } else {
                            a < b
                        }
                    }
                    (Ok(_), Err(_)) => op == "-nt",
                    (Err(_), Ok(_)) => op == "-ot",
                    _ => false,
                }
            }
            "-ef" => {
                let a = self.os.fs_ref().realpath(&self.path(l));
                let b = self.os.fs_ref().realpath(&self.path(r));
                a.is_ok() && a == b
            }
            _ => return Err(TestErr::UnknownOperand(op.to_string())),
        })
    }
}
