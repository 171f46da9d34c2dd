//! A small POSIX regular-expression engine (BRE and ERE syntax) for grep, sed, awk, expr and
//! bash's `=~`: a backtracking VM over chars with a step budget (hostile patterns fail to
//! match instead of hanging). Matching is leftmost, with greedy (perl-like) alternation
//! rather than POSIX leftmost-longest — a documented deviation that only shows with
//! alternations whose branches are prefixes of each other.

/// Matcher steps allowed per search.
const MAX_STEPS: usize = 2_000_000;
/// Largest counted repetition.
const MAX_REPEAT: u32 = 1000;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    Ch(char),
    Range(char, char),
    Class(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Char(char),
    Any,
    Set { neg: bool, items: Vec<Item> },
    Start,
    End,
    WordB,
    NotWordB,
    Group(Box<Node>, Option<usize>),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat { node: Box<Node>, min: u32, max: Option<u32> },
    Backref(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Inst {
    Char(char),
    Any,
    Set { neg: bool, items: Vec<Item> },
    Start,
    End,
    WordB(bool),
    Split(usize, usize),
    Jmp(usize),
    Save(usize),
    Backref(usize),
    Match,
}

/// A compiled regular expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regex {
    prog: Vec<Inst>,
    groups: usize,
    icase: bool,
}

/// Capture spans (char offsets) of one match; index 0 is the whole match.
pub type Captures = Vec<Option<(usize, usize)>>;

struct P<'a> {
    s: &'a [char],
    i: usize,
    ere: bool,
    groups: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn alt(&mut self, depth: usize) -> Result<Node, String> {
        if depth > 100 {
            return Err("nesting too deep".into());
        }
        let mut branches = vec![self.concat(depth)?];
        loop {
            if self.ere && self.peek() == Some('|') {
                self.i += 1;
            } else if !self.ere && self.peek() == Some('\\') && self.s.get(self.i + 1) == Some(&'|') {
                self.i += 2;
            } else {
                break;
            }
            branches.push(self.concat(depth)?);
        }
        Ok(if branches.len() == 1 { branches.pop().unwrap_or(Node::Concat(vec![])) } else { Node::Alt(branches) })
    }

    fn at_group_end(&self) -> bool {
        if self.ere {
            self.peek() == Some(')')
        } else {
            self.peek() == Some('\\') && self.s.get(self.i + 1) == Some(&')')
        }
    }

    fn at_alt(&self) -> bool {
        if self.ere {
            self.peek() == Some('|')
        } else {
            self.peek() == Some('\\') && self.s.get(self.i + 1) == Some(&'|')
        }
    }

    fn concat(&mut self, depth: usize) -> Result<Node, String> {
        let mut items: Vec<Node> = Vec::new();
        let start = self.i;
        while self.i < self.s.len() && !self.at_group_end() && !self.at_alt() {
            let c = self.s[self.i];
            let atom = match c {
                '^' if self.ere || self.i == start => {
                    self.i += 1;
                    Node::Start
                }
                '$' if self.ere
                    || self.i + 1 == self.s.len()
                    || self.s[self.i + 1..].starts_with(&['\\', ')'])
                    || self.s[self.i + 1..].starts_with(&['\\', '|']) =>
                {
                    self.i += 1;
                    Node::End
                }
                '.' => {
                    self.i += 1;
                    Node::Any
                }
                '[' => self.set()?,
                '(' if self.ere => {
                    self.i += 1;
                    self.groups += 1;
                    let g = self.groups;
                    let inner = self.alt(depth + 1)?;
                    if self.peek() != Some(')') {
                        return Err("Unmatched ( or \\(".into());
                    }
                    self.i += 1;
                    Node::Group(Box::new(inner), Some(g))
                }
                '*' if items.is_empty() => {
                    self.i += 1;
                    Node::Char('*')
                }
                '*' | '+' | '?' | '{' if self.ere || c == '*' => {
                    if c == '{' && !self.s.get(self.i + 1).is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                        items.push(Node::Char('{'));
                        continue;
                    }
                    let Some(prev) = items.pop() else { return Err("Invalid preceding regular expression".into()) };
                    let (min, max) = self.quant()?;
                    items.push(Node::Repeat { node: Box::new(prev), min, max });
                    continue;
                }
                '\\' => {
                    self.i += 1;
                    let Some(e) = self.peek() else { return Err("Trailing backslash".into()) };
                    self.i += 1;
                    match e {
                        '(' if !self.ere => {
                            self.groups += 1;
                            let g = self.groups;
                            let inner = self.alt(depth + 1)?;
                            if !(self.peek() == Some('\\') && self.s.get(self.i + 1) == Some(&')')) {
                                return Err("Unmatched ( or \\(".into());
                            }
                            self.i += 2;
                            Node::Group(Box::new(inner), Some(g))
                        }
                        '{' if !self.ere => {
                            self.i -= 2;
                            let Some(prev) = items.pop() else { return Err("Invalid preceding regular expression".into()) };
                            let (min, max) = self.quant()?;
                            items.push(Node::Repeat { node: Box::new(prev), min, max });
                            continue;
                        }
                        '+' | '?' if !self.ere => {
                            let Some(prev) = items.pop() else { return Err("Invalid preceding regular expression".into()) };
                            let (min, max) = if e == '+' { (1, None) } else { (0, Some(1)) };
                            items.push(Node::Repeat { node: Box::new(prev), min, max });
                            continue;
                        }
                        '1'..='9' => Node::Backref(e as usize - '0' as usize),
                        'w' => Node::Set { neg: false, items: vec![Item::Class("alnum".into()), Item::Ch('_')] },
                        'W' => Node::Set { neg: true, items: vec![Item::Class("alnum".into()), Item::Ch('_')] },
                        's' => Node::Set { neg: false, items: vec![Item::Class("space".into())] },
                        'S' => Node::Set { neg: true, items: vec![Item::Class("space".into())] },
                        'd' => Node::Set { neg: false, items: vec![Item::Class("digit".into())] },
                        'b' => Node::WordB,
                        'B' => Node::NotWordB,
                        '<' | '>' => Node::WordB,
                        'n' => Node::Char('\n'),
                        't' => Node::Char('\t'),
                        other => Node::Char(other),
                    }
                }
                c => {
                    self.i += 1;
                    Node::Char(c)
                }
            };
            items.push(atom);
        }
        Ok(Node::Concat(items))
    }

    fn quant(&mut self) -> Result<(u32, Option<u32>), String> {
        let c = self.s[self.i];
        self.i += 1;
        let q = match c {
            '*' => (0, None),
            '+' => (1, None),
            '?' => (0, Some(1)),
            _ => {
                // '{' (ERE) or '\{' (BRE, cursor after the backslash-brace)
                if c == '\\' {
                    self.i += 1;
                }
                let num = |p: &mut Self| -> Option<u32> {
                    let st = p.i;
                    while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                        p.i += 1;
                    }
                    p.s[st..p.i].iter().collect::<String>().parse().ok()
                };
                let min = num(self).unwrap_or(0);
                let max = if self.peek() == Some(',') {
                    self.i += 1;
                    num(self)
                } else {
                    Some(min)
                };
                if !self.ere && self.peek() == Some('\\') {
                    self.i += 1;
                }
                if self.peek() != Some('}') {
                    return Err("Unmatched \\{".into());
                }
                self.i += 1;
                if min > MAX_REPEAT || max.is_some_and(|m| m > MAX_REPEAT || m < min) {
                    return Err("Invalid content of \\{\\}".into());
                }
                (min, max)
            }
        };
        // Lazy/possessive suffixes are accepted and treated as greedy.
        while self.ere && matches!(self.peek(), Some('?') | Some('+')) && matches!(c, '*' | '+' | '?') {
            self.i += 1;
        }
        Ok(q)
    }

    fn set(&mut self) -> Result<Node, String> {
        self.i += 1;
        let mut neg = false;
        if self.peek() == Some('^') {
            neg = true;
            self.i += 1;
        }
        let mut items = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return Err("Unmatched [, [^, [:, [., or [=".into()) };
            if c == ']' && !first {
                self.i += 1;
                break;
            }
            first = false;
            if c == '[' && self.s.get(self.i + 1) == Some(&':') {
                let rest = &self.s[self.i + 2..];
                if let Some(end) = rest.windows(2).position(|w| w == [':', ']']) {
                    let name: String = rest[..end].iter().collect();
                    items.push(Item::Class(name));
                    self.i += 2 + end + 2;
                    continue;
                }
            }
            self.i += 1;
            if self.peek() == Some('-') && self.s.get(self.i + 1).is_some_and(|&n| n != ']') {
                let hi = self.s[self.i + 1];
                self.i += 2;
                items.push(Item::Range(c, hi));
            } else {
                items.push(Item::Ch(c));
            }
        }
        Ok(Node::Set { neg, items })
    }
}

fn emit(n: &Node, prog: &mut Vec<Inst>) -> Result<(), String> {
    if prog.len() > 200_000 {
        return Err("Regular expression too big".into());
    }
    match n {
        Node::Char(c) => prog.push(Inst::Char(*c)),
        Node::Any => prog.push(Inst::Any),
        Node::Set { neg, items } => prog.push(Inst::Set { neg: *neg, items: items.clone() }),
        Node::Start => prog.push(Inst::Start),
        Node::End => prog.push(Inst::End),
        Node::WordB => prog.push(Inst::WordB(true)),
        Node::NotWordB => prog.push(Inst::WordB(false)),
        Node::Backref(i) => prog.push(Inst::Backref(*i)),
        Node::Group(inner, g) => {
            if let Some(g) = g {
                prog.push(Inst::Save(2 * g));
            }
            emit(inner, prog)?;
            if let Some(g) = g {
                prog.push(Inst::Save(2 * g + 1));
            }
        }
        Node::Concat(v) => {
            for x in v {
                emit(x, prog)?;
            }
        }
        Node::Alt(bs) => {
            let mut jumps = Vec::new();
            for (i, b) in bs.iter().enumerate() {
                if i + 1 < bs.len() {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(b, prog)?;
                    jumps.push(prog.len());
                    prog.push(Inst::Jmp(0));
                    let next = prog.len();
                    prog[split] = Inst::Split(split + 1, next);
                } else {
                    emit(b, prog)?;
                }
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
        }
        Node::Repeat { node, min, max } => {
            for _ in 0..*min {
                emit(node, prog)?;
            }
            match max {
                None => {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(node, prog)?;
                    prog.push(Inst::Jmp(split));
                    let end = prog.len();
                    prog[split] = Inst::Split(split + 1, end);
                }
                Some(mx) => {
                    let mut splits = Vec::new();
                    for _ in *min..*mx {
                        splits.push(prog.len());
                        prog.push(Inst::Split(0, 0));
                        emit(node, prog)?;
                    }
                    let end = prog.len();
                    for s in splits {
                        prog[s] = Inst::Split(s + 1, end);
                    }
                }
            }
        }
    }
    Ok(())
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Regex {
    /// Compiles `pat` as an ERE (`ere`) or BRE.
    pub fn new(pat: &str, ere: bool, icase: bool) -> Result<Regex, String> {
        let chars: Vec<char> = pat.chars().collect();
        let mut p = P { s: &chars, i: 0, ere, groups: 0 };
        let node = p.alt(0)?;
        if p.i < chars.len() {
            return Err(if ere { "Unmatched ) or \\)".into() } else { "Unmatched ) or \\)".into() });
        }
        let mut prog = vec![Inst::Save(0)];
        emit(&node, &mut prog)?;
        prog.push(Inst::Save(1));
        prog.push(Inst::Match);
        Ok(Regex { prog, groups: p.groups, icase })
    }

    /// Number of capture groups.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Whether the regex matches anywhere in `s`.
    pub fn is_match(&self, s: &str) -> bool {
        let chars: Vec<char> = s.chars().collect();
        self.find_chars(&chars, 0, true).is_some()
    }

    /// The first match at or after char offset `start` (`not_bol`: `^` does not match at
    /// `start` unless it is 0).
    pub fn find_chars(&self, s: &[char], start: usize, _bol: bool) -> Option<Captures> {
        let mut steps = 0usize;
        for st in start..=s.len() {
            if let Some(c) = self.run(s, st, &mut steps) {
                return Some(c);
            }
            if steps > MAX_STEPS {
                return None;
            }
        }
        None
    }

    /// The first match in `s` as string slices (`None` for unset groups).
    pub fn captures(&self, s: &str) -> Option<Vec<Option<String>>> {
        let chars: Vec<char> = s.chars().collect();
        let caps = self.find_chars(&chars, 0, true)?;
        Some(caps.iter().map(|c| c.map(|(a, b)| chars[a..b].iter().collect())).collect())
    }

    fn eq(&self, a: char, b: char) -> bool {
        a == b || (self.icase && a.to_lowercase().eq(b.to_lowercase()))
    }

    fn in_set(&self, neg: bool, items: &[Item], c: char) -> bool {
        let test = |c: char| {
            items.iter().any(|it| match it {
                Item::Ch(x) => *x == c,
                Item::Range(a, b) => *a <= c && c <= *b,
                Item::Class(n) => crate::pattern::class_matches(n, c),
            })
        };
        let mut hit = test(c);
        if !hit && self.icase {
            hit = test(c.to_ascii_lowercase()) || test(c.to_ascii_uppercase());
        }
        hit != neg
    }

    fn run(&self, s: &[char], start: usize, steps: &mut usize) -> Option<Captures> {
        let nslots = 2 * (self.groups + 1);
        let mut stack: Vec<(usize, usize, Vec<Option<usize>>)> = vec![(0, start, vec![None; nslots])];
        while let Some((mut pc, mut sp, mut slots)) = stack.pop() {
            loop {
                *steps += 1;
                if *steps > MAX_STEPS {
                    return None;
                }
                match &self.prog[pc] {
                    Inst::Char(c) => {
                        if sp < s.len() && self.eq(s[sp], *c) {
                            pc += 1;
                            sp += 1;
                        } else {
                            break;
                        }
                    }
                    Inst::Any => {
                        if sp < s.len() && s[sp] != '\n' {
                            pc += 1;
                            sp += 1;
                        } else {
                            break;
                        }
                    }
                    Inst::Set { neg, items } => {
                        if sp < s.len() && self.in_set(*neg, items, s[sp]) {
                            pc += 1;
                            sp += 1;
                        } else {
                            break;
                        }
                    }
                    Inst::Start => {
                        if sp == 0 {
                            pc += 1
                        } else {
                            break;
                        }
                    }
                    Inst::End => {
                        if sp == s.len() {
                            pc += 1
                        } else {
                            break;
                        }
                    }
                    Inst::WordB(want) => {
                        let a = sp > 0 && is_word(s[sp - 1]);
                        let b = sp < s.len() && is_word(s[sp]);
                        if (a != b) == *want {
                            pc += 1
                        } else {
                            break;
                        }
                    }
                    Inst::Split(x, y) => {
                        if stack.len() > 100_000 {
                            return None;
                        }
                        stack.push((*y, sp, slots.clone()));
                        pc = *x;
                    }
                    Inst::Jmp(x) => pc = *x,
                    Inst::Save(n) => {
                        if *n < slots.len() {
                            slots[*n] = Some(sp);
                        }
                        pc += 1;
                    }
                    Inst::Backref(g) => {
                        let (a, b) = (slots.get(2 * g).copied().flatten(), slots.get(2 * g + 1).copied().flatten());
                        match (a, b) {
                            (Some(a), Some(b)) if b >= a => {
                                let len = b - a;
                                if sp + len <= s.len() && (0..len).all(|k| self.eq(s[sp + k], s[a + k])) {
                                    sp += len;
                                    pc += 1;
                                } else {
                                    break;
                                }
                            }
                            _ => break,
                        }
                    }
                    Inst::Match => {
                        let mut caps = Vec::with_capacity(self.groups + 1);
                        for g in 0..=self.groups {
                            caps.push(match (slots[2 * g], slots[2 * g + 1]) {
                                (Some(a), Some(b)) if b >= a => Some((a, b)),
                                _ => None,
                            });
                        }
                        return Some(caps);
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(p: &str, ere: bool, s: &str) -> Option<Vec<Option<String>>> {
        Regex::new(p, ere, false).ok()?.captures(s)
    }

    #[test]
    fn extended_expressions_capture_groups() {
        assert_eq!(caps("-([0-9]+)$", true, "mysql-12"), Some(vec![Some("-12".into()), Some("12".into())]));
        assert_eq!(caps("^(.*?)[[:space:]]+(.*?)$", true, "bin.000001\t154").map(|c| c[2].clone()), Some(Some("154".into())));
        assert_eq!(caps("a|b", true, "xb"), Some(vec![Some("b".into())]));
        assert_eq!(caps("x{2,3}", true, "axxxxb"), Some(vec![Some("xxx".into())]));
        assert!(caps("^abc$", true, "abcd").is_none());
    }

    #[test]
    fn basic_expressions_use_backslashed_groups() {
        assert_eq!(caps("\\(ab\\)*c", false, "ababc"), Some(vec![Some("ababc".into()), Some("ab".into())]));
        assert_eq!(caps("a+", false, "a+"), Some(vec![Some("a+".into())]));
        assert_eq!(caps("a\\{2\\}", false, "aaa"), Some(vec![Some("aa".into())]));
        assert_eq!(caps("\\(a\\)\\1", false, "xaa"), Some(vec![Some("aa".into()), Some("a".into())]));
        assert_eq!(caps("*a", false, "*a"), Some(vec![Some("*a".into())]));
    }

    #[test]
    fn hostile_patterns_fail_instead_of_hanging() {
        let r = Regex::new("(a*)*b", true, false).unwrap_or_else(|_| Regex::new("x", true, false).unwrap_or_else(|_| unreachable!()));
        let s = "a".repeat(40);
        assert!(!r.is_match(&s));
    }
}
