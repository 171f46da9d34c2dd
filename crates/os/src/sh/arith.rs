//! Shell arithmetic (`$((..))`, `((..))`, `let`): C integer expressions on i64 with wrapping.

/// Variable access for the evaluator.
pub trait ArithVars {
    /// The variable's value (`None` = unset).
    fn get(&mut self, name: &str) -> Option<String>;
    /// Assigns a variable; `Err(msg)` for readonly.
    fn set(&mut self, name: &str, value: i64) -> Result<(), String>;
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
    LParen,
    RParen,
}

const OPS: &[&str] = &[
    "<<=", ">>=", "**", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "+", "-", "*", "/", "%",
    "<", ">", "=", "!", "~", "&", "^", "|", "?", ":", ",",
];

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
            continue;
        }
        if ch.is_ascii_digit() {
            let st = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '#' || c[i] == '_') {
                i += 1;
            }
            let t: String = c[st..i].iter().collect();
            out.push(Tok::Num(parse_num(&t).ok_or_else(|| format!("{t}: value too great for base (error token is \"{t}\")"))?));
            continue;
        }
        if ch.is_ascii_alphabetic() || ch == '_' {
            let st = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Name(c[st..i].iter().collect()));
            continue;
        }
        if ch == '(' {
            out.push(Tok::LParen);
            i += 1;
            continue;
        }
        if ch == ')' {
            out.push(Tok::RParen);
            i += 1;
            continue;
        }
        let rest: String = c[i..c.len().min(i + 3)].iter().collect();
        match OPS.iter().find(|op| rest.starts_with(**op)) {
            Some(op) => {
                out.push(Tok::Op(op));
                i += op.len();
            }
            None => {
                let t: String = c[i..].iter().collect();
                return Err(format!("syntax error: invalid arithmetic operator (error token is \"{t}\")"));
            }
        }
    }
    Ok(out)
}

/// Parses `123`, `0x1f`, `017`, `2#101`.
pub fn parse_num(t: &str) -> Option<i64> {
    if let Some((base, digits)) = t.split_once('#') {
        let b: u32 = base.parse().ok()?;
        if !(2..=64).contains(&b) {
            return None;
        }
        return i64::from_str_radix(digits, b.min(36)).ok();
    }
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(|v| v as i64);
    }
    if t.len() > 1 && t.starts_with('0') {
        return i64::from_str_radix(&t[1..], 8).ok();
    }
    t.parse::<i64>().ok().or_else(|| t.parse::<u64>().ok().map(|v| v as i64))
}

struct Ev<'a> {
    toks: Vec<Tok>,
    i: usize,
    vars: &'a mut dyn ArithVars,
    skip: u32,
    depth: u32,
}

/// Evaluates an arithmetic expression. Errors carry the shell's message text after the
/// expression (`division by zero`, `syntax error`...).
pub fn eval(expr: &str, vars: &mut dyn ArithVars) -> Result<i64, String> {
    let toks = lex(expr)?;
    if toks.is_empty() {
        return Ok(0);
    }
    let mut ev = Ev { toks, i: 0, vars, skip: 0, depth: 0 };
    let v = ev.comma()?;
    if ev.i < ev.toks.len() {
        return Err(format!("syntax error in expression (error token is \"{}\")", ev.rest()));
    }
    Ok(v)
}

impl Ev<'_> {
    fn rest(&self) -> String {
        self.toks[self.i..]
            .iter()
            .map(|t| match t {
                Tok::Num(n) => n.to_string(),
                Tok::Name(n) => n.clone(),
                Tok::Op(o) => o.to_string(),
                Tok::LParen => "(".into(),
                Tok::RParen => ")".into(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.i) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn var_value(&mut self, name: &str) -> Result<i64, String> {
        if self.skip > 0 {
            return Ok(0);
        }
        let v = self.vars.get(name).unwrap_or_default();
        let t = v.trim();
        if t.is_empty() {
            return Ok(0);
        }
        if let Some(n) = parse_num(t) {
            return Ok(n);
        }
        self.depth += 1;
        if self.depth > 100 {
            return Err("expression recursion level exceeded".into());
        }
        let r = eval(t, self.vars);
        self.depth -= 1;
        r
    }

    fn assign(&mut self, name: &str, v: i64) -> Result<(), String> {
        if self.skip > 0 {
            return Ok(());
        }
        self.vars.set(name, v)
    }

    fn comma(&mut self) -> Result<i64, String> {
        let mut v = self.assign_expr()?;
        while self.peek_op() == Some(",") {
            self.i += 1;
            v = self.assign_expr()?;
        }
        Ok(v)
    }

    fn assign_expr(&mut self) -> Result<i64, String> {
        if let (Some(Tok::Name(n)), Some(Tok::Op(op))) = (self.toks.get(self.i).cloned(), self.toks.get(self.i + 1).cloned()) {
            if matches!(op, "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "<<=" | ">>=" | "&=" | "^=" | "|=") {
                self.i += 2;
                let rhs = self.assign_expr()?;
                let v = if op == "=" {
                    rhs
                } else {
                    let cur = self.var_value(&n)?;
                    binop(&op[..op.len() - 1], cur, rhs)?
                };
                self.assign(&n, v)?;
                return Ok(v);
            }
        }
        self.ternary()
    }

    fn ternary(&mut self) -> Result<i64, String> {
        let c = self.binary(0)?;
        if self.peek_op() == Some("?") {
            self.i += 1;
            if c == 0 {
                self.skip += 1;
            }
            let a = self.assign_expr()?;
            if c == 0 {
                self.skip -= 1;
            }
            if self.peek_op() != Some(":") {
                return Err("`:' expected for conditional expression".into());
            }
            self.i += 1;
            if c != 0 {
                self.skip += 1;
            }
            let b = self.assign_expr()?;
            if c != 0 {
                self.skip -= 1;
            }
            return Ok(if c != 0 { a } else { b });
        }
        Ok(c)
    }

    fn binary(&mut self, min_prec: u8) -> Result<i64, String> {
        let mut lhs = self.unary()?;
        loop {
            let Some(op) = self.peek_op() else { break };
            let Some(prec) = prec(op) else { break };
            if prec < min_prec {
                break;
            }
            self.i += 1;
            if op == "&&" || op == "||" {
                let short = (op == "&&" && lhs == 0) || (op == "||" && lhs != 0);
                if short {
                    self.skip += 1;
                }
                let rhs = self.binary(prec + 1)?;
                if short {
                    self.skip -= 1;
                }
                lhs = if op == "&&" { (lhs != 0 && rhs != 0) as i64 } else { (lhs != 0 || rhs != 0) as i64 };
                continue;
            }
            let next = if op == "**" { prec } else { prec + 1 };
            let rhs = self.binary(next)?;
            lhs = if self.skip > 0 { 0 } else { binop(op, lhs, rhs)? };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<i64, String> {
        match self.toks.get(self.i).cloned() {
            Some(Tok::Op(op @ ("-" | "+" | "!" | "~"))) => {
                self.i += 1;
                let v = self.unary()?;
                Ok(match op {
                    "-" => v.wrapping_neg(),
                    "+" => v,
                    "!" => (v == 0) as i64,
                    _ => !v,
                })
            }
            Some(Tok::Op(op @ ("++" | "--"))) => {
                self.i += 1;
                let Some(Tok::Name(n)) = self.toks.get(self.i).cloned() else {
                    return Err("syntax error: operand expected".into());
                };
                self.i += 1;
                let v = self.var_value(&n)?.wrapping_add(if op == "++" { 1 } else { -1 });
                self.assign(&n, v)?;
                Ok(v)
            }
            _ => self.postfix(),
        }
    }

    fn postfix(&mut self) -> Result<i64, String> {
        match self.toks.get(self.i).cloned() {
            Some(Tok::Num(n)) => {
                self.i += 1;
                Ok(n)
            }
            Some(Tok::Name(n)) => {
                self.i += 1;
                if let Some(op @ ("++" | "--")) = self.peek_op() {
                    self.i += 1;
                    let v = self.var_value(&n)?;
                    self.assign(&n, v.wrapping_add(if op == "++" { 1 } else { -1 }))?;
                    return Ok(v);
                }
                self.var_value(&n)
            }
            Some(Tok::LParen) => {
                self.i += 1;
                let v = self.comma()?;
                if self.toks.get(self.i) != Some(&Tok::RParen) {
                    return Err("missing `)'".into());
                }
                self.i += 1;
                Ok(v)
            }
            None => Err("syntax error: operand expected (error token is \"\")".into()),
            Some(_) => Err(format!("syntax error: operand expected (error token is \"{}\")", self.rest())),
        }
    }
}

fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        "**" => 11,
        _ => return None,
    })
}

fn binop(op: &str, a: i64, b: i64) -> Result<i64, String> {
    Ok(match op {
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" | "%" => {
            if b == 0 {
                return Err("division by zero".into());
            }
            if op == "/" {
                a.wrapping_div(b)
            } else {
                a.wrapping_rem(b)
            }
        }
        "**" => {
            if b < 0 {
                return Err("exponent less than 0".into());
            }
            a.wrapping_pow(b.min(u32::MAX as i64) as u32)
        }
        "<<" => a.wrapping_shl((b & 63) as u32),
        ">>" => a.wrapping_shr((b & 63) as u32),
        "<" => (a < b) as i64,
        ">" => (a > b) as i64,
        "<=" => (a <= b) as i64,
        ">=" => (a >= b) as i64,
        "==" => (a == b) as i64,
        "!=" => (a != b) as i64,
        "&" => a & b,
        "^" => a ^ b,
        "|" => a | b,
        _ => return Err("syntax error".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct M(BTreeMap<String, String>);
    impl ArithVars for M {
        fn get(&mut self, n: &str) -> Option<String> {
            self.0.get(n).cloned()
        }
        fn set(&mut self, n: &str, v: i64) -> Result<(), String> {
            self.0.insert(n.into(), v.to_string());
            Ok(())
        }
    }

    #[test]
    fn arithmetic_follows_c_precedence_and_assignment() {
        let mut m = M(BTreeMap::new());
        m.0.insert("ordinal".into(), "2".into());
        let cases = [
            ("100 + ordinal", 102),
            ("1 + 2 * 3", 7),
            ("(1 + 2) * 3", 9),
            ("7 / 2", 3),
            ("-7 % 3", -1),
            ("2 ** 10", 1024),
            ("1 < 2 && 3 > 4", 0),
            ("0x10 + 010", 24),
            ("i = 5, i += 2", 7),
            ("i++", 7),
            ("i", 8),
            ("1 ? 2 : 3", 2),
            ("!0", 1),
            ("~0", -1),
            ("1 << 4", 16),
        ];
        for (e, want) in cases {
            assert_eq!(eval(e, &mut m), Ok(want), "{e}");
        }
        assert_eq!(eval("1 / 0", &mut m), Err("division by zero".into()));
    }
}
