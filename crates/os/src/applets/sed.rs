//! `sed`: addresses (`N`, `$`, `/re/`, ranges, `!`), commands `s y d p q = a i c n N h H g G
//! x { } b t :`, options `-n -e -f -E/-r -i[SUF] -s`.

use super::Ctx;
use crate::regex::Regex;

#[derive(Clone, Debug)]
enum Addr {
    Step(usize, usize),
    Line(usize),
    Last,
    Re(Regex),
}

#[derive(Clone, Debug)]
enum Kind {
    Sub { re: Option<Regex>, rep: String, global: bool, nth: usize, print: bool, wfile: Option<String> },
    Delete,
    Print,
    PrintFirst,
    Quit(bool),
    LineNo,
    Append(String),
    Insert(String),
    Change(String),
    Trans(Vec<char>, Vec<char>),
    Open,
    Close,
    Next,
    NextAppend,
    Hold,
    HoldAppend,
    Get,
    GetAppend,
    Exchange,
    Label(String),
    Branch(String),
    BranchIf(String),
    BranchIfNot(String),
    Nop,
}

#[derive(Clone, Debug)]
struct Cmd {
    a1: Option<Addr>,
    a2: Option<Addr>,
    neg: bool,
    kind: Kind,
}

struct Parser<'a> {
    s: Vec<char>,
    i: usize,
    ere: bool,
    gnu: bool,
    last_re: &'a mut Option<Regex>,
}

fn bre_to_engine(p: &str) -> String {
    p.to_string()
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }
    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.i += 1;
        }
    }
    fn delimited(&mut self, d: char) -> Result<String, String> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err("unterminated `s' command".into()),
                Some(c) if c == d => {
                    self.i += 1;
                    return Ok(out);
                }
                Some('\\') => {
                    self.i += 1;
                    match self.peek() {
                        Some(c) if c == d => out.push(c),
                        Some('n') => out.push('\n'),
                        Some(c) => {
                            out.push('\\');
                            out.push(c);
                        }
                        None => return Err("unterminated `s' command".into()),
                    }
                    self.i += 1;
                }
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }
    fn regex(&mut self, src: &str, icase: bool) -> Result<Option<Regex>, String> {
        if src.is_empty() {
            return Ok(None);
        }
        let r = Regex::new(&bre_to_engine(src), self.ere, icase).map_err(|e| format!("-e expression #1, char {}: {e}", self.i))?;
        *self.last_re = Some(r.clone());
        Ok(Some(r))
    }
    fn addr(&mut self) -> Result<Option<Addr>, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let st = self.i;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                let n: usize = self.s[st..self.i].iter().collect::<String>().parse().unwrap_or(0);
                if self.peek() == Some('~') {
                    if !self.gnu {
                        return Err("unsupported command ~".into());
                    }
                    self.i += 1;
                    let st2 = self.i;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                    let step: usize = self.s[st2..self.i].iter().collect::<String>().parse().unwrap_or(0);
                    return Ok(Some(Addr::Step(n, step)));
                }
                Ok(Some(Addr::Line(n)))
            }
            Some('$') => {
                self.i += 1;
                Ok(Some(Addr::Last))
            }
            Some('/') | Some('\\') => {
                let d = if self.peek() == Some('\\') {
                    self.i += 1;
                    let d = self.peek().unwrap_or('/');
                    self.i += 1;
                    d
                } else {
                    self.i += 1;
                    '/'
                };
                let src = self.delimited(d)?;
                let icase = self.peek() == Some('I');
                if icase {
                    self.i += 1;
                }
                match self.regex(&src, icase)? {
                    Some(r) => Ok(Some(Addr::Re(r))),
                    None => match self.last_re.clone() {
                        Some(r) => Ok(Some(Addr::Re(r))),
                        None => Err("no previous regular expression".into()),
                    },
                }
            }
            _ => Ok(None),
        }
    }
    fn text_arg(&mut self) -> String {
        // a\ text, a text, a\<newline>text
        if self.peek() == Some('\\') {
            self.i += 1;
            if self.peek() == Some('\n') {
                self.i += 1;
            }
        } else {
            self.ws();
        }
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            if c == '\\' && self.s.get(self.i + 1) == Some(&'\n') {
                out.push('\n');
                self.i += 2;
                continue;
            }
            if c == '\\' {
                self.i += 1;
                if let Some(n) = self.peek() {
                    out.push(if n == 't' { '\t' } else { n });
                    self.i += 1;
                }
                continue;
            }
            out.push(c);
            self.i += 1;
        }
        out
    }
    fn label(&mut self) -> String {
        self.ws();
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' || c == ';' || c == '}' {
                break;
            }
            out.push(c);
            self.i += 1;
        }
        out.trim().to_string()
    }
    fn parse(&mut self) -> Result<Vec<Cmd>, String> {
        let mut cmds = Vec::new();
        loop {
            while self.peek().is_some_and(|c| c == ' ' || c == '\t' || c == '\n' || c == ';') {
                self.i += 1;
            }
            let Some(_) = self.peek() else { break };
            if self.peek() == Some('#') {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                continue;
            }
            let a1 = self.addr()?;
            let mut a2 = None;
            if a1.is_some() && self.peek() == Some(',') {
                self.i += 1;
                a2 = self.addr()?;
            }
            self.ws();
            let mut neg = false;
            while self.peek() == Some('!') {
                neg = true;
                self.i += 1;
                self.ws();
            }
            let Some(c) = self.peek() else { return Err("missing command".into()) };
            self.i += 1;
            let kind = match c {
                's' => {
                    let d = self.peek().ok_or("unterminated `s' command")?;
                    self.i += 1;
                    let re_src = self.delimited(d)?;
                    let rep = self.delimited(d)?;
                    let mut global = false;
                    let mut nth = 1;
                    let mut print = false;
                    let mut icase = false;
                    let mut wfile = None;
                    while let Some(f) = self.peek() {
                        match f {
                            'g' => global = true,
                            'p' => print = true,
                            'i' | 'I' => icase = true,
                            'e' | 'm' | 'M' => {}
                            'w' => {
                                self.i += 1;
                                wfile = Some(self.label());
                                break;
                            }
                            d if d.is_ascii_digit() => nth = d.to_digit(10).unwrap_or(1) as usize,
                            _ => break,
                        }
                        self.i += 1;
                    }
                    let re = self.regex(&re_src, icase)?;
                    Kind::Sub { re, rep, global, nth, print, wfile }
                }
                'y' => {
                    let d = self.peek().ok_or("unterminated `y' command")?;
                    self.i += 1;
                    let a: Vec<char> = self.delimited(d)?.chars().collect();
                    let b: Vec<char> = self.delimited(d)?.chars().collect();
                    if a.len() != b.len() {
                        return Err("strings for `y' command are different lengths".into());
                    }
                    Kind::Trans(a, b)
                }
                'd' | 'D' => Kind::Delete,
                'p' => Kind::Print,
                'P' => Kind::PrintFirst,
                'q' => Kind::Quit(true),
                'Q' => Kind::Quit(false),
                '=' => Kind::LineNo,
                'a' => Kind::Append(self.text_arg()),
                'i' => Kind::Insert(self.text_arg()),
                'c' => Kind::Change(self.text_arg()),
                '{' => Kind::Open,
                '}' => Kind::Close,
                'n' => Kind::Next,
                'N' => Kind::NextAppend,
                'h' => Kind::Hold,
                'H' => Kind::HoldAppend,
                'g' => Kind::Get,
                'G' => Kind::GetAppend,
                'x' => Kind::Exchange,
                ':' => Kind::Label(self.label()),
                'b' => Kind::Branch(self.label()),
                't' => Kind::BranchIf(self.label()),
                'T' => Kind::BranchIfNot(self.label()),
                'l' | 'r' | 'w' | 'z' | 'e' | 'F' => {
                    let _ = self.label();
                    Kind::Nop
                }
                other => return Err(format!("-e expression #1, char {}: unknown command: `{other}'", self.i)),
            };
            cmds.push(Cmd { a1, a2, neg, kind });
        }
        Ok(cmds)
    }
}

fn subst(re: &Regex, line: &str, rep: &str, global: bool, nth: usize) -> Option<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut pos = 0;
    let mut count = 0;
    let mut did = false;
    let mut last_end = 0;
    while pos <= chars.len() {
        let Some(caps) = re.find_chars(&chars, pos, pos == 0) else { break };
        let Some((a, b)) = caps[0] else { break };
        count += 1;
        if count >= nth {
            out.extend(&chars[last_end..a]);
            let mut rc = rep.chars().peekable();
            while let Some(ch) = rc.next() {
                match ch {
                    '&' => out.extend(&chars[a..b]),
                    '\\' => match rc.next() {
                        Some(d @ '0'..='9') => {
                            let g = d.to_digit(10).unwrap_or(0) as usize;
                            if let Some(Some((x, y))) = caps.get(g) {
                                out.extend(&chars[*x..*y]);
                            }
                        }
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some(o) => out.push(o),
                        None => out.push('\\'),
                    },
                    o => out.push(o),
                }
            }
            last_end = b;
            did = true;
            if !global {
                break;
            }
        }
        pos = if b > a { b } else { a + 1 };
        if b == a && a < chars.len() && count >= nth {
            out.push(chars[a]);
            last_end = a + 1;
        }
        // An empty match right after a non-empty one does not count (POSIX).
        if b > a && b < chars.len() && global {
            if let Some(next) = re.find_chars(&chars, b, false) {
                if next[0] == Some((b, b)) {
                    out.extend(&chars[last_end..b]);
                    out.push(chars[b]);
                    last_end = b + 1;
                    pos = b + 1;
                }
            }
        }
    }
    if !did {
        return None;
    }
    if last_end <= chars.len() {
        out.extend(&chars[last_end.min(chars.len())..]);
    }
    Some(out)
}

fn run(cmds: &[Cmd], input: &str, quiet: bool, out: &mut String, wfiles: &mut Vec<(String, String)>) -> bool {
    let lines: Vec<&str> = input.lines().collect();
    let trailing_nl = input.ends_with('\n') || input.is_empty();
    let n = lines.len();
    let mut in_range = vec![false; cmds.len()];
    let mut hold = String::new();
    let mut li = 0;
    let mut steps = 0usize;
    while li < n {
        let mut ps = lines[li].to_string();
        li += 1;
        let mut lineno = li;
        let mut append_after: Vec<String> = Vec::new();
        let mut deleted = false;
        let mut quit = None;
        let mut tflag = false;
        let mut pc = 0;
        let mut skip_depth = 0usize;
        while pc < cmds.len() {
            steps += 1;
            if steps > 5_000_000 {
                return false;
            }
            let cmd = &cmds[pc];
            pc += 1;
            if skip_depth > 0 {
                match cmd.kind {
                    Kind::Open => skip_depth += 1,
                    Kind::Close => skip_depth -= 1,
                    _ => {}
                }
                continue;
            }
            let is_last = li == n;
            let m = |a: &Addr, ps: &str| match a {
                Addr::Step(first, step) => {
                    if *step == 0 {
                        lineno == *first
                    } else {
                        lineno >= *first && (lineno - first) % step == 0
                    }
                }
                Addr::Line(k) => lineno == *k,
                Addr::Last => is_last,
                Addr::Re(r) => r.is_match(ps),
            };
            let mut sel = match (&cmd.a1, &cmd.a2) {
                (None, _) => true,
                (Some(a), None) => m(a, &ps),
                (Some(a), Some(b)) => {
                    let k = pc - 1;
                    if in_range[k] {
                        let end = match b {
                            Addr::Line(e) => lineno >= *e,
                            other => m(other, &ps),
                        };
                        if end {
                            in_range[k] = false;
                        }
                        true
                    } else if m(a, &ps) {
                        let end_now = matches!(b, Addr::Line(e) if *e <= lineno);
                        in_range[k] = !end_now;
                        true
                    } else {
                        false
                    }
                }
            };
            if cmd.neg {
                sel = !sel;
            }
            if !sel {
                if let Kind::Open = cmd.kind {
                    skip_depth = 1;
                }
                continue;
            }
            match &cmd.kind {
                Kind::Sub { re, rep, global, nth, print, wfile } => {
                    let Some(re) = re.as_ref() else { continue };
                    if let Some(new) = subst(re, &ps, rep, *global, *nth) {
                        ps = new;
                        tflag = true;
                        if *print {
                            out.push_str(&ps);
                            out.push('\n');
                        }
                        if let Some(w) = wfile {
                            wfiles.push((w.clone(), format!("{ps}\n")));
                        }
                    }
                }
                Kind::Delete => {
                    deleted = true;
                    break;
                }
                Kind::Print => {
                    out.push_str(&ps);
                    out.push('\n');
                }
                Kind::PrintFirst => {
                    out.push_str(ps.split('\n').next().unwrap_or(""));
                    out.push('\n');
                }
                Kind::Quit(print) => {
                    quit = Some(*print);
                    break;
                }
                Kind::LineNo => out.push_str(&format!("{lineno}\n")),
                Kind::Append(t) => append_after.push(t.clone()),
                Kind::Insert(t) => {
                    out.push_str(t);
                    out.push('\n');
                }
                Kind::Change(t) => {
                    let k = pc - 1;
                    if !in_range[k] {
                        out.push_str(t);
                        out.push('\n');
                    }
                    deleted = true;
                    break;
                }
                Kind::Trans(a, b) => {
                    ps = ps.chars().map(|ch| a.iter().position(|&x| x == ch).map(|i| b[i]).unwrap_or(ch)).collect();
                }
                Kind::Open | Kind::Close | Kind::Label(_) | Kind::Nop => {}
                Kind::Next => {
                    if !quiet {
                        out.push_str(&ps);
                        out.push('\n');
                    }
                    if li < n {
                        ps = lines[li].to_string();
                        li += 1;
                        lineno = li;
                    } else {
                        deleted = true;
                        quit = Some(false);
                        break;
                    }
                }
                Kind::NextAppend => {
                    if li < n {
                        ps.push('\n');
                        ps.push_str(lines[li]);
                        li += 1;
                        lineno = li;
                    } else {
                        break;
                    }
                }
                Kind::Hold => hold = ps.clone(),
                Kind::HoldAppend => {
                    hold.push('\n');
                    hold.push_str(&ps);
                }
                Kind::Get => ps = hold.clone(),
                Kind::GetAppend => {
                    ps.push('\n');
                    ps.push_str(&hold);
                }
                Kind::Exchange => std::mem::swap(&mut ps, &mut hold),
                Kind::Branch(l) | Kind::BranchIf(l) | Kind::BranchIfNot(l) => {
                    let take = match &cmd.kind {
                        Kind::Branch(_) => true,
                        Kind::BranchIf(_) => std::mem::replace(&mut tflag, false),
                        _ => !std::mem::replace(&mut tflag, false),
                    };
                    if take {
                        if l.is_empty() {
                            pc = cmds.len();
                        } else if let Some(p) = cmds.iter().position(|c| matches!(&c.kind, Kind::Label(x) if x == l)) {
                            pc = p + 1;
                        }
                    }
                }
            }
        }
        if !deleted && !quiet {
            out.push_str(&ps);
            if li < n || trailing_nl {
                out.push('\n');
            }
        }
        for a in append_after {
            out.push_str(&a);
            out.push('\n');
        }
        if quit.is_some() {
            break;
        }
    }
    true
}

pub(crate) fn sed(c: &mut Ctx) -> i32 {
    let args = c.args.clone();
    let mut scripts: Vec<String> = Vec::new();
    let mut files = Vec::new();
    let mut quiet = false;
    let mut ere = false;
    let mut inplace: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-n" || a == "--quiet" || a == "--silent" {
            quiet = true;
        } else if a == "-E" || a == "-r" || a == "--regexp-extended" {
            ere = true;
        } else if a == "-e" {
            i += 1;
            if let Some(s) = args.get(i) {
                scripts.push(s.clone());
            }
        } else if let Some(s) = a.strip_prefix("-e").filter(|s| !s.is_empty()) {
            scripts.push(s.to_string());
        } else if a == "-f" {
            i += 1;
            if let Some(f) = args.get(i) {
                let f = f.clone();
                match c.read(&f) {
                    Ok(d) => scripts.push(String::from_utf8_lossy(&d).into_owned()),
                    Err(e) => {
                        c.err(&format!("couldn't open file {f}: {}", e.strerror()));
                        return 1;
                    }
                }
            }
        } else if let Some(suf) = a.strip_prefix("-i") {
            inplace = Some(suf.to_string());
        } else if a == "--in-place" {
            inplace = Some(String::new());
        } else if a == "-s" || a == "-u" {
        } else if a.starts_with('-') && a.len() > 1 && a.chars().skip(1).all(|ch| "nEr".contains(ch)) {
            quiet |= a.contains('n');
            ere |= a.contains('E') || a.contains('r');
        } else if a.starts_with('-') && a.len() > 1 {
            return c.bad_option(a);
        } else if scripts.is_empty() && !args[..i].iter().any(|x| x == "-e" || x == "-f") {
            scripts.push(a.clone());
        } else {
            files.push(a.clone());
        }
        i += 1;
    }
    if scripts.is_empty() {
        c.err_raw("Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n");
        return 1;
    }
    let script = scripts.join("\n");
    let mut last_re = None;
    let gnu = c.gnu();
    let mut p = Parser { s: script.chars().collect(), i: 0, ere, gnu, last_re: &mut last_re };
    let cmds = match p.parse() {
        Ok(c) => c,
        Err(e) => {
            c.err(&e);
            return 1;
        }
    };
    let mut wfiles = Vec::new();
    if let Some(suf) = inplace {
        let mut st = 0;
        for f in files {
            let path = c.path(&f);
            let d = match crate::sys::read_file(c.os, &path) {
                Ok(d) => d,
                Err(e) => {
                    c.err(&format!("can't read {f}: {}", e.strerror()));
                    st = 2;
                    continue;
                }
            };
            let mut out = String::new();
            run(&cmds, &String::from_utf8_lossy(&d), quiet, &mut out, &mut wfiles);
            if !suf.is_empty() {
                let _ = crate::sys::write_file(c.os, &format!("{path}{suf}"), &d, crate::fs::WriteMode::Truncate);
            }
            if let Err(e) = crate::sys::write_file(c.os, &path, out.as_bytes(), crate::fs::WriteMode::Truncate) {
                c.err(&format!("couldn't open temporary file {f}: {}", e.strerror()));
                st = 4;
            }
        }
        return st;
    }
    let (data, ok) = c.read_inputs(&files);
    let mut out = String::new();
    run(&cmds, &String::from_utf8_lossy(&data), quiet, &mut out, &mut wfiles);
    for (f, d) in wfiles {
        let p = c.path(&f);
        let _ = crate::sys::write_file(c.os, &p, d.as_bytes(), crate::fs::WriteMode::Append);
    }
    c.outs(&out);
    if ok {
        0
    } else {
        2
    }
}
