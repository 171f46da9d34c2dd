//! Text applets: head, tail, wc, grep, cut, tr, sort, uniq, rev, seq, expr, base64,
//! md5sum, sha256sum, yes, nl (sed and awk live in their own modules).

use super::{getopt, hash, Ctx};
use crate::regex::Regex;

fn lines(d: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = d.split_inclusive(|&b| b == b'\n').collect();
    if v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

fn num_arg(c: &mut Ctx) -> Vec<String> {
    // `head -5` == `head -n 5` (but `head -n -5` keeps its negative count).
    let mut out: Vec<String> = Vec::new();
    for a in &c.args {
        let after_opt = out.last().is_some_and(|p| p == "-n" || p == "-c");
        if !after_opt && a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|ch| ch.is_ascii_digit()) {
            out.push(format!("-n{}", &a[1..]));
        } else {
            out.push(a.clone());
        }
    }
    out
}

pub(crate) fn head(c: &mut Ctx) -> i32 {
    let args = num_arg(c);
    let (opts, files) = match getopt(&args, "qv", "nc") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let mut n: i64 = 10;
    let mut bytes: Option<i64> = None;
    for (o, v) in &opts {
        let parsed = v.trim_start_matches('+').parse::<i64>();
        match (o, parsed) {
            ('n', Ok(x)) => n = x,
            ('c', Ok(x)) => bytes = Some(x),
            (_, Err(_)) if *o == 'n' || *o == 'c' => {
                c.err(&format!("invalid number of {}: '{v}'", if *o == 'n' { "lines" } else { "bytes" }));
                return 1;
            }
            _ => {}
        }
    }
    let files = if files.is_empty() { vec!["-".to_string()] } else { files };
    let multi = files.len() > 1;
    let mut st = 0;
    for (i, f) in files.iter().enumerate() {
        let d = match c.read(f) {
            Ok(d) => d,
            Err(e) => {
                if c.gnu() {
                    c.err(&format!("cannot open '{f}' for reading: {}", e.strerror()));
                } else {
                    c.err(&format!("{f}: {}", e.strerror()));
                }
                st = 1;
                continue;
            }
        };
        if multi {
            let name = if f == "-" { "standard input" } else { f };
            c.outs(&format!("{}==> {name} <==\n", if i > 0 { "\n" } else { "" }));
        }
        let out: Vec<u8> = match bytes {
            Some(b) if b >= 0 => d[..(b as usize).min(d.len())].to_vec(),
            Some(b) => d[..d.len().saturating_sub((-b) as usize)].to_vec(),
            None => {
                let ls = lines(&d);
                let take = if n >= 0 { (n as usize).min(ls.len()) } else { ls.len().saturating_sub((-n) as usize) };
                ls[..take].concat()
            }
        };
        if !c.out(&out) {
            break;
        }
    }
    st
}

pub(crate) fn tail(c: &mut Ctx) -> i32 {
    let args = num_arg(c);
    let (opts, files) = match getopt(&args, "qvfFsr", "nc") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let mut from_start = false;
    let mut n: usize = 10;
    let mut bytes: Option<usize> = None;
    for (o, v) in &opts {
        if *o == 'n' || *o == 'c' {
            if v.starts_with('+') {
                from_start = true;
            }
            match v.trim_start_matches(['+', '-']).parse::<usize>() {
                Ok(x) => {
                    if *o == 'n' {
                        n = x
                    } else {
                        bytes = Some(x)
                    }
                }
                Err(_) => {
                    c.err(&format!("invalid number of lines: '{v}'"));
                    return 1;
                }
            }
        }
    }
    let files = if files.is_empty() { vec!["-".to_string()] } else { files };
    let multi = files.len() > 1;
    let mut st = 0;
    for (i, f) in files.iter().enumerate() {
        let d = match c.read(f) {
            Ok(d) => d,
            Err(e) => {
                if c.gnu() {
                    c.err(&format!("cannot open '{f}' for reading: {}", e.strerror()));
                } else {
                    c.open_err(f, e);
                }
                st = 1;
                continue;
            }
        };
        if multi {
            c.outs(&format!("{}==> {f} <==\n", if i > 0 { "\n" } else { "" }));
        }
        let out: Vec<u8> = match bytes {
            Some(b) if from_start => d[(b.saturating_sub(1)).min(d.len())..].to_vec(),
            Some(b) => d[d.len().saturating_sub(b)..].to_vec(),
            None => {
                let ls = lines(&d);
                if from_start {
                    ls[(n.saturating_sub(1)).min(ls.len())..].concat()
                } else {
                    ls[ls.len().saturating_sub(n)..].concat()
                }
            }
        };
        c.out(&out);
    }
    st
}

pub(crate) fn wc(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "lwcmL", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let mut sel: Vec<char> = opts.iter().map(|(o, _)| *o).collect();
    if sel.is_empty() {
        sel = vec!['l', 'w', 'c'];
    }
    let order = ['l', 'w', 'm', 'c', 'L'];
    let sel: Vec<char> = order.iter().copied().filter(|o| sel.contains(o)).collect();
    let count = |d: &[u8]| -> Vec<u64> {
        let text = String::from_utf8_lossy(d);
        sel.iter()
            .map(|o| match o {
                'l' => d.iter().filter(|&&b| b == b'\n').count() as u64,
                'w' => text.split_whitespace().count() as u64,
                'm' => text.chars().count() as u64,
                'c' => d.len() as u64,
                _ => text.lines().map(|l| l.chars().count()).max().unwrap_or(0) as u64,
            })
            .collect()
    };
    let mut rows: Vec<(Vec<u64>, Option<String>)> = Vec::new();
    let mut st = 0;
    let stdin_only = files.is_empty();
    if stdin_only {
        rows.push((count(c.stdin), None));
    }
    for f in &files {
        match c.read(f) {
            Ok(d) => rows.push((count(&d), Some(f.clone()))),
            Err(e) => {
                c.err(&format!("{f}: {}", e.strerror()));
                st = 1;
            }
        }
    }
    if files.len() > 1 {
        let mut tot = vec![0u64; sel.len()];
        for (r, _) in &rows {
            for (i, v) in r.iter().enumerate() {
                tot[i] += v;
            }
        }
        rows.push((tot, Some("total".into())));
    }
    let gnu = c.gnu();
    let width = if gnu {
        if stdin_only || files.iter().any(|f| f == "-") {
            if sel.len() == 1 && stdin_only {
                0
            } else {
                7
            }
        } else {
            rows.iter().flat_map(|(r, _)| r.iter()).max().map(|m| m.to_string().len()).unwrap_or(1)
        }
    } else if sel.len() == 1 && rows.len() == 1 {
        0
    } else {
        9
    };
    let mut out = String::new();
    for (r, name) in rows {
        let cols: Vec<String> = r.iter().map(|v| format!("{v:>width$}")).collect();
        let sep = if gnu { " " } else { " " };
        out.push_str(&cols.join(sep));
        if let Some(n) = name {
            out.push(' ');
            out.push_str(&n);
        }
        out.push('\n');
    }
    c.outs(&out);
    st
}

pub(crate) fn grep(c: &mut Ctx) -> i32 {
    let (opts, mut ops) = match getopt(&c.args, "ivcqEFonrRlLhHwxsaUz", "emABC") {
        Ok(v) => v,
        Err(o) => {
            c.bad_option(&o);
            return 2;
        }
    };
    let has = |ch: char| opts.iter().any(|(o, _)| *o == ch);
    let mut pats: Vec<String> = opts.iter().filter(|(o, _)| *o == 'e').map(|(_, v)| v.clone()).collect();
    if pats.is_empty() {
        if ops.is_empty() {
            if c.gnu() {
                c.err_raw("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n");
            } else {
                c.err_raw("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: grep [-HhnlLoqvsrRiwFE] [-m N] [-A|B|C N] { PATTERN | -e PATTERN... | -f FILE... } [FILE]...\n");
            }
            return 2;
        }
        pats.push(ops.remove(0));
    }
    let ere = has('E') || c.name == "egrep";
    let fixed = has('F') || c.name == "fgrep";
    let icase = has('i');
    let max = opts.iter().find(|(o, _)| *o == 'm').and_then(|(_, v)| v.parse::<usize>().ok());
    let mut res = Vec::new();
    for p in pats.iter().flat_map(|p| p.split('\n').map(str::to_string).collect::<Vec<_>>()) {
        let mut src = if fixed { regex_escape(&p) } else { p.clone() };
        if has('w') {
            src = if ere || fixed { format!("\\b({src})\\b") } else { format!("\\b\\({src}\\)\\b") };
        }
        if has('x') {
            src = if ere || fixed { format!("^({src})$") } else { format!("^\\({src}\\)$") };
        }
        match Regex::new(&src, ere || fixed, icase) {
            Ok(r) => res.push(r),
            Err(e) => {
                c.err(&e);
                return 2;
            }
        }
    }
    let recursive = has('r') || has('R');
    if ops.is_empty() {
        ops.push(if recursive { ".".into() } else { "-".into() });
    }
    // Expand directories for -r.
    let mut files = Vec::new();
    for o in &ops {
        let p = c.path(o);
        if o != "-" && c.os.fs_ref().stat(&p).is_ok_and(|m| m.is_dir()) {
            if recursive {
                let mut stack = vec![o.clone()];
                while let Some(d) = stack.pop() {
                    let dp = c.path(&d);
                    if let Ok(es) = c.os.fs_ref().read_dir(&dp) {
                        for e in es.into_iter().rev() {
                            let child = if d.ends_with('/') { format!("{d}{}", e.name) } else { format!("{d}/{}", e.name) };
                            if e.meta.is_dir() {
                                stack.push(child);
                            } else if e.meta.is_file() {
                                files.push(child);
                            }
                        }
                    }
                    if files.len() > 100_000 {
                        break;
                    }
                }
            } else {
                c.err(&format!("{o}: Is a directory"));
            }
            continue;
        }
        files.push(o.clone());
    }
    let show_name = (files.len() > 1 || recursive) && !has('h') || has('H');
    let mut matched_any = false;
    let mut err = false;
    let mut out = Vec::new();
    for f in &files {
        let d = match c.read(f) {
            Ok(d) => d,
            Err(e) => {
                if !has('s') {
                    c.err(&format!("{f}: {}", e.strerror()));
                }
                err = true;
                continue;
            }
        };
        let name = if f == "-" { "(standard input)".to_string() } else { f.clone() };
        let num = |k: char| opts.iter().rev().find(|(o, _)| *o == k).and_then(|(_, v)| v.parse::<usize>().ok());
        let (after, before) = (num('A').or(num('C')).unwrap_or(0), num('B').or(num('C')).unwrap_or(0));
        if (after > 0 || before > 0) && !has('c') && !has('l') && !has('L') && !has('q') && !has('o') {
            let all = lines(&d);
            let texts: Vec<String> = all.iter().map(|l| String::from_utf8_lossy(l).trim_end_matches('\n').to_string()).collect();
            let hits: Vec<bool> = texts.iter().map(|t| res.iter().any(|r| r.is_match(t)) != has('v')).collect();
            let mut last: Option<usize> = None;
            let mut shown = 0usize;
            for i in 0..texts.len() {
                if !hits[i] {
                    continue;
                }
                if max.is_some_and(|m| shown >= m) {
                    break;
                }
                shown += 1;
                matched_any = true;
                let from = i.saturating_sub(before);
                let start = match last {
                    Some(l) if l + 1 >= from => l + 1,
                    Some(_) => {
                        out.extend(b"--\n");
                        from
                    }
                    None => from,
                };
                let mut end = i + after;
                let mut j = i + 1;
                while j <= end.min(texts.len().saturating_sub(1)) {
                    if hits[j] && max.is_none_or(|m| shown < m) {
                        shown += 1;
                        end = j + after;
                    }
                    j += 1;
                }
                let end = end.min(texts.len().saturating_sub(1));
                for k in start..=end {
                    let sep = if hits[k] { ':' } else { '-' };
                    if show_name {
                        out.extend(name.bytes());
                        out.push(sep as u8);
                    }
                    if has('n') {
                        out.extend((k + 1).to_string().bytes());
                        out.push(sep as u8);
                    }
                    out.extend(texts[k].bytes());
                    out.push(b'\n');
                }
                last = Some(end);
            }
            continue;
        }
        let mut count = 0usize;
        for (ln, line) in lines(&d).iter().enumerate() {
            let text = String::from_utf8_lossy(line);
            let text = text.strip_suffix('\n').unwrap_or(&text);
            let is_match = res.iter().any(|r| r.is_match(text));
            if is_match == has('v') {
                continue;
            }
            count += 1;
            matched_any = true;
            if has('q') {
                return 0;
            }
            if has('l') || has('c') || has('L') {
                if max.is_some_and(|m| count >= m) {
                    break;
                }
                continue;
            }
            let prefix = {
                let mut p = String::new();
                if show_name {
                    p.push_str(&name);
                    p.push(':');
                }
                if has('n') {
                    p.push_str(&(ln + 1).to_string());
                    p.push(':');
                }
                p
            };
            if has('o') && !has('v') {
                let chars: Vec<char> = text.chars().collect();
                let mut pos = 0;
                while pos <= chars.len() {
                    let mut best: Option<(usize, usize)> = None;
                    for r in &res {
                        if let Some(caps) = r.find_chars(&chars, pos, pos == 0) {
                            if let Some((a, b)) = caps[0] {
                                if best.is_none_or(|(ba, _)| a < ba) {
                                    best = Some((a, b));
                                }
                            }
                        }
                    }
                    match best {
                        Some((a, b)) => {
                            if b > a {
                                out.extend(prefix.bytes());
                                out.extend(chars[a..b].iter().collect::<String>().bytes());
                                out.push(b'\n');
                            }
                            pos = if b > a { b } else { a + 1 };
                        }
                        None => break,
                    }
                }
            } else {
                out.extend(prefix.bytes());
                out.extend(text.bytes());
                out.push(b'\n');
            }
            if max.is_some_and(|m| count >= m) {
                break;
            }
        }
        if has('c') {
            if show_name {
                out.extend(format!("{name}:{count}\n").bytes());
            } else {
                out.extend(format!("{count}\n").bytes());
            }
        }
        if has('l') && count > 0 {
            out.extend(format!("{name}\n").bytes());
        }
        if has('L') && count == 0 {
            out.extend(format!("{name}\n").bytes());
        }
        if out.len() > 1 << 20 {
            if !c.out(&out) {
                return if matched_any { 0 } else { 1 };
            }
            out.clear();
        }
    }
    c.out(&out);
    if err && !(has('q') && matched_any) {
        return 2;
    }
    if matched_any {
        0
    } else {
        1
    }
}

/// Escapes regex metacharacters (ERE).
pub fn regex_escape(s: &str) -> String {
    let mut o = String::new();
    for ch in s.chars() {
        if "\\.[]()*+?{}|^$".contains(ch) {
            o.push('\\');
        }
        o.push(ch);
    }
    o
}

fn parse_list(spec: &str) -> Option<Vec<(usize, usize)>> {
    let mut v = Vec::new();
    for part in spec.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (if a.is_empty() { 1 } else { a.parse().ok()? }, if b.is_empty() { usize::MAX } else { b.parse().ok()? }),
            None => {
                let n = part.parse().ok()?;
                (n, n)
            }
        };
        if a == 0 {
            return None;
        }
        v.push((a, b));
    }
    Some(v)
}

pub(crate) fn cut(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "sn", "dfcb") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let delim = opts.iter().find(|(o, _)| *o == 'd').map(|(_, v)| v.chars().next().unwrap_or('\t')).unwrap_or('\t');
    let only_delim = opts.iter().any(|(o, _)| *o == 's');
    let (mode, spec) = match opts.iter().find(|(o, _)| matches!(o, 'f' | 'c' | 'b')) {
        Some((m, s)) => (*m, s.clone()),
        None => {
            c.err("you must specify a list of bytes, characters, or fields");
            return 1;
        }
    };
    let Some(list) = parse_list(&spec) else {
        c.err("invalid byte, character or field list");
        return 1;
    };
    let inl = |i: usize| list.iter().any(|&(a, b)| i >= a && i <= b);
    let (data, ok) = c.read_inputs(&files);
    let mut out = String::new();
    for line in String::from_utf8_lossy(&data).lines() {
        if mode == 'f' {
            if !line.contains(delim) {
                if !only_delim {
                    out.push_str(line);
                    out.push('\n');
                }
                continue;
            }
            let fields: Vec<&str> = line.split(delim).collect();
            let sel: Vec<&str> = fields.iter().enumerate().filter(|(i, _)| inl(i + 1)).map(|(_, f)| *f).collect();
            out.push_str(&sel.join(&delim.to_string()));
        } else {
            let s: String = line.chars().enumerate().filter(|(i, _)| inl(i + 1)).map(|(_, ch)| ch).collect();
            out.push_str(&s);
        }
        out.push('\n');
    }
    c.outs(&out);
    if ok {
        0
    } else {
        1
    }
}

fn tr_set(s: &str) -> Vec<char> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let esc = |c: char| match c {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '\\' => '\\',
        other => other,
    };
    while i < chars.len() {
        if chars[i] == '[' && chars.get(i + 1) == Some(&':') {
            if let Some(end) = (i + 2..chars.len().saturating_sub(1)).find(|&k| chars[k] == ':' && chars[k + 1] == ']') {
                let name: String = chars[i + 2..end].iter().collect();
                for b in 0u8..128 {
                    if crate::pattern::class_matches(&name, b as char) {
                        out.push(b as char);
                    }
                }
                i = end + 2;
                continue;
            }
        }
        let (ch, adv) = if chars[i] == '\\' && i + 1 < chars.len() { (esc(chars[i + 1]), 2) } else { (chars[i], 1) };
        if chars.get(i + adv) == Some(&'-') && i + adv + 1 < chars.len() {
            let (hi, adv2) = if chars[i + adv + 1] == '\\' && i + adv + 2 < chars.len() { (esc(chars[i + adv + 2]), 2) } else { (chars[i + adv + 1], 1) };
            let mut x = ch as u32;
            while x <= hi as u32 && out.len() < 100_000 {
                if let Some(cc) = char::from_u32(x) {
                    out.push(cc);
                }
                x += 1;
            }
            i += adv + 1 + adv2;
            continue;
        }
        out.push(ch);
        i += adv;
    }
    out
}

pub(crate) fn tr(c: &mut Ctx) -> i32 {
    let (opts, sets) = match getopt(&c.args, "dscC", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let has = |ch: char| opts.iter().any(|(o, _)| *o == ch);
    if sets.is_empty() {
        c.err("missing operand");
        return 1;
    }
    let s1 = tr_set(&sets[0]);
    let s2 = sets.get(1).map(|s| tr_set(s)).unwrap_or_default();
    let comp = has('c') || has('C');
    let in1 = |ch: char| s1.contains(&ch) != comp;
    let text = String::from_utf8_lossy(c.stdin).into_owned();
    let mut out = String::new();
    let mut last: Option<char> = None;
    for ch in text.chars() {
        if has('d') {
            if in1(ch) {
                continue;
            }
            if has('s') && s2.contains(&ch) && last == Some(ch) {
                continue;
            }
            out.push(ch);
            last = Some(ch);
            continue;
        }
        let mapped = if !s2.is_empty() && in1(ch) {
            if comp {
                *s2.last().unwrap_or(&ch)
            } else {
                let idx = s1.iter().position(|&x| x == ch).unwrap_or(0);
                *s2.get(idx).unwrap_or_else(|| s2.last().unwrap_or(&ch))
            }
        } else {
            ch
        };
        let squeeze_set = if s2.is_empty() { &s1 } else { &s2 };
        if has('s') && last == Some(mapped) && squeeze_set.contains(&mapped) {
            continue;
        }
        out.push(mapped);
        last = Some(mapped);
    }
    c.outs(&out);
    0
}

fn num_prefix(s: &str) -> f64 {
    let t = s.trim_start();
    let mut end = 0;
    for (i, ch) in t.char_indices() {
        if ch.is_ascii_digit() || ch == '.' || (i == 0 && (ch == '-' || ch == '+')) {
            end = i + ch.len_utf8();
        } else {
            break;
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

fn human_val(s: &str) -> f64 {
    let t = s.trim();
    let n = num_prefix(t);
    let suf = t.trim_start_matches(|ch: char| ch.is_ascii_digit() || ch == '.' || ch == '-').chars().next();
    let m = match suf {
        Some('K') | Some('k') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        _ => 1.0,
    };
    n * m
}

pub(crate) fn sort(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "nrufbdshVcM", "kto") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let has = |ch: char| opts.iter().any(|(o, _)| *o == ch);
    let sep = opts.iter().find(|(o, _)| *o == 't').and_then(|(_, v)| v.chars().next());
    let keys: Vec<(usize, Option<usize>, bool, bool)> = opts
        .iter()
        .filter(|(o, _)| *o == 'k')
        .map(|(_, v)| {
            let numeric = v.contains('n');
            let rev = v.contains('r');
            let clean: String = v.chars().filter(|ch| ch.is_ascii_digit() || *ch == ',' || *ch == '.').collect();
            let (a, b) = match clean.split_once(',') {
                Some((a, b)) => (a.split('.').next().unwrap_or("1").parse().unwrap_or(1), b.split('.').next().and_then(|x| x.parse().ok())),
                None => (clean.split('.').next().unwrap_or("1").parse().unwrap_or(1), None),
            };
            (a, b, numeric, rev)
        })
        .collect();
    let (data, ok) = c.read_inputs(&files);
    let text = String::from_utf8_lossy(&data).into_owned();
    let mut ls: Vec<String> = text.lines().map(str::to_string).collect();
    if has('c') {
        for i in 1..ls.len() {
            let bad = if has('n') { num_prefix(&ls[i]) < num_prefix(&ls[i - 1]) } else { ls[i] < ls[i - 1] };
            let bad = if has('r') { !bad && ls[i] != ls[i - 1] } else { bad };
            if bad {
                let name = files.first().cloned().unwrap_or_else(|| "-".into());
                c.err(&format!("{name}:{}: disorder: {}", i + 1, ls[i]));
                return 1;
            }
        }
        return 0;
    }
    let field = |l: &str, a: usize, b: Option<usize>| -> String {
        let fields: Vec<&str> = match sep {
            Some(s) => l.split(s).collect(),
            None => {
                // Blank-separated fields keep their leading blanks (POSIX); we trim.
                l.split_whitespace().collect()
            }
        };
        let end = b.unwrap_or(fields.len()).min(fields.len());
        if a == 0 || a > fields.len() {
            return String::new();
        }
        fields[a - 1..end.max(a - 1)].join(&sep.map(String::from).unwrap_or_else(|| " ".into()))
    };
    let numeric = has('n');
    let humn = has('h');
    let fold = has('f');
    let cmp = |x: &String, y: &String| -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let mut o = Ordering::Equal;
        if keys.is_empty() {
            if numeric || humn {
                let (a, b) = if humn { (human_val(x), human_val(y)) } else { (num_prefix(x), num_prefix(y)) };
                o = a.partial_cmp(&b).unwrap_or(Ordering::Equal);
            } else if fold {
                o = x.to_lowercase().cmp(&y.to_lowercase());
            } else {
                o = x.cmp(y);
            }
        } else {
            for &(a, b, kn, kr) in &keys {
                let (fx, fy) = (field(x, a, b), field(y, a, b));
                let mut ko = if kn || numeric { num_prefix(&fx).partial_cmp(&num_prefix(&fy)).unwrap_or(Ordering::Equal) } else { fx.cmp(&fy) };
                if kr {
                    ko = ko.reverse();
                }
                if ko != Ordering::Equal {
                    o = ko;
                    break;
                }
            }
        }
        if o == Ordering::Equal && !has('s') && !has('u') {
            o = x.cmp(y);
        }
        o
    };
    ls.sort_by(|a, b| if has('r') { cmp(b, a) } else { cmp(a, b) });
    if has('u') {
        ls.dedup_by(|a, b| cmp(a, b) == std::cmp::Ordering::Equal);
    }
    let mut out = String::new();
    for l in ls {
        out.push_str(&l);
        out.push('\n');
    }
    if let Some((_, f)) = opts.iter().find(|(o, _)| *o == 'o') {
        let p = c.path(f);
        let _ = crate::sys::write_file(c.os, &p, out.as_bytes(), crate::fs::WriteMode::Truncate);
    } else {
        c.outs(&out);
    }
    if ok {
        0
    } else {
        2
    }
}

pub(crate) fn uniq(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "cdui", "fs") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let has = |ch: char| opts.iter().any(|(o, _)| *o == ch);
    let (data, _) = c.read_inputs(&files[..files.len().min(1)]);
    let text = String::from_utf8_lossy(&data).into_owned();
    let mut groups: Vec<(String, usize)> = Vec::new();
    for l in text.lines() {
        match groups.last_mut() {
            Some((g, n)) if if has('i') { g.eq_ignore_ascii_case(l) } else { g == l } => *n += 1,
            _ => groups.push((l.to_string(), 1)),
        }
    }
    let mut out = String::new();
    for (l, n) in groups {
        if has('d') && n < 2 || has('u') && n > 1 {
            continue;
        }
        if has('c') {
            out.push_str(&format!("{n:>7} {l}\n"));
        } else {
            out.push_str(&l);
            out.push('\n');
        }
    }
    c.outs(&out);
    0
}

pub(crate) fn rev(c: &mut Ctx) -> i32 {
    let files = c.args.clone();
    let (data, ok) = c.read_inputs(&files);
    let text = String::from_utf8_lossy(&data).into_owned();
    let mut out = String::new();
    for l in text.split_inclusive('\n') {
        let (body, nl) = match l.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (l, ""),
        };
        out.extend(body.chars().rev());
        out.push_str(nl);
    }
    c.outs(&out);
    if ok {
        0
    } else {
        1
    }
}

pub(crate) fn seq(c: &mut Ctx) -> i32 {
    let mut args = c.args.clone();
    let mut sep = "\n".to_string();
    let mut width = false;
    let mut fmt: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-s" if i + 1 < args.len() => {
                sep = args[i + 1].clone();
                args.drain(i..i + 2);
            }
            a if a.starts_with("-s") && a.len() > 2 => {
                sep = a[2..].to_string();
                args.remove(i);
            }
            "-w" => {
                width = true;
                args.remove(i);
            }
            "-f" if i + 1 < args.len() => {
                fmt = Some(args[i + 1].clone());
                args.drain(i..i + 2);
            }
            _ => i += 1,
        }
    }
    let nums: Result<Vec<f64>, String> = args.iter().map(|a| a.parse::<f64>().map_err(|_| a.clone())).collect();
    let nums = match nums {
        Ok(n) if !n.is_empty() && n.len() <= 3 => n,
        Ok(_) => {
            c.err("missing operand");
            return 1;
        }
        Err(a) => {
            c.err(&format!("invalid floating point argument: '{a}'"));
            return 1;
        }
    };
    let (first, inc, last) = match nums.len() {
        1 => (1.0, 1.0, nums[0]),
        2 => (nums[0], 1.0, nums[1]),
        _ => (nums[0], nums[1], nums[2]),
    };
    if inc == 0.0 {
        c.err("invalid Zero increment value: '0'");
        return 1;
    }
    let decimals = args.iter().map(|a| a.split_once('.').map(|(_, d)| d.len()).unwrap_or(0)).max().unwrap_or(0);
    let wlen = if width { format!("{:.*}", decimals, last).len().max(format!("{:.*}", decimals, first).len()) } else { 0 };
    let mut out = String::new();
    let mut k = 0u64;
    loop {
        let v = first + inc * k as f64;
        if (inc > 0.0 && v > last + 1e-9) || (inc < 0.0 && v < last - 1e-9) {
            break;
        }
        if k > 0 {
            out.push_str(&sep);
        }
        let s = match &fmt {
            Some(f) => String::from_utf8_lossy(&super::printf::format(f, &[format!("{v}")]).0).into_owned(),
            None => format!("{:0w$.*}", decimals, v, w = wlen),
        };
        out.push_str(&s);
        k += 1;
        if out.len() > 8 << 20 {
            if !c.outs(&out) {
                return 0;
            }
            out.clear();
        }
        if k > 10_000_000 {
            break;
        }
    }
    if k > 0 {
        out.push('\n');
    }
    c.outs(&out);
    0
}

pub(crate) fn expr(c: &mut Ctx) -> i32 {
    let args = c.args.clone();
    let mut p = ExprP { a: &args, i: 0 };
    match p.or() {
        Ok(v) if p.i == args.len() => {
            c.outs(&format!("{v}\n"));
            if v.is_empty() || v == "0" {
                1
            } else {
                0
            }
        }
        Ok(_) => {
            c.err("syntax error");
            2
        }
        Err(e) => {
            c.err(&e);
            2
        }
    }
}

struct ExprP<'a> {
    a: &'a [String],
    i: usize,
}

impl ExprP<'_> {
    fn peek(&self) -> Option<&str> {
        self.a.get(self.i).map(String::as_str)
    }
    fn or(&mut self) -> Result<String, String> {
        let mut l = self.and()?;
        while self.peek() == Some("|") {
            self.i += 1;
            let r = self.and()?;
            if l.is_empty() || l == "0" {
                l = if r.is_empty() { "0".into() } else { r };
            }
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<String, String> {
        let mut l = self.cmp()?;
        while self.peek() == Some("&") {
            self.i += 1;
            let r = self.cmp()?;
            if l.is_empty() || l == "0" || r.is_empty() || r == "0" {
                l = "0".into();
            }
        }
        Ok(l)
    }
    fn cmp(&mut self) -> Result<String, String> {
        let mut l = self.add()?;
        while let Some(op) = self.peek().filter(|o| matches!(*o, "=" | "!=" | "<" | "<=" | ">" | ">=")).map(str::to_string) {
            self.i += 1;
            let r = self.add()?;
            let ord = match (l.parse::<i64>(), r.parse::<i64>()) {
                (Ok(a), Ok(b)) => a.cmp(&b),
                _ => l.cmp(&r),
            };
            use std::cmp::Ordering::*;
            let t = match op.as_str() {
                "=" => ord == Equal,
                "!=" => ord != Equal,
                "<" => ord == Less,
                "<=" => ord != Greater,
                ">" => ord == Greater,
                _ => ord != Less,
            };
            l = if t { "1".into() } else { "0".into() };
        }
        Ok(l)
    }
    fn int(s: &str) -> Result<i64, String> {
        s.parse::<i64>().map_err(|_| "non-integer argument".to_string())
    }
    fn add(&mut self) -> Result<String, String> {
        let mut l = self.mul()?;
        while let Some(op) = self.peek().filter(|o| matches!(*o, "+" | "-")).map(str::to_string) {
            self.i += 1;
            let r = self.mul()?;
            let (a, b) = (Self::int(&l)?, Self::int(&r)?);
            l = if op == "+" { a.wrapping_add(b) } else { a.wrapping_sub(b) }.to_string();
        }
        Ok(l)
    }
    fn mul(&mut self) -> Result<String, String> {
        let mut l = self.colon()?;
        while let Some(op) = self.peek().filter(|o| matches!(*o, "*" | "/" | "%")).map(str::to_string) {
            self.i += 1;
            let r = self.colon()?;
            let (a, b) = (Self::int(&l)?, Self::int(&r)?);
            if op != "*" && b == 0 {
                return Err("division by zero".into());
            }
            l = match op.as_str() {
                "*" => a.wrapping_mul(b),
                "/" => a / b,
                _ => a % b,
            }
            .to_string();
        }
        Ok(l)
    }
    fn colon(&mut self) -> Result<String, String> {
        let l = self.prim()?;
        if self.peek() == Some(":") {
            self.i += 1;
            let r = self.prim()?;
            return Self::matchre(&l, &r);
        }
        Ok(l)
    }
    fn matchre(s: &str, re: &str) -> Result<String, String> {
        let r = Regex::new(&format!("^{re}"), false, false).map_err(|e| e.to_string())?;
        match r.captures(s) {
            Some(caps) => {
                if r.groups() > 0 {
                    Ok(caps.get(1).cloned().flatten().unwrap_or_default())
                } else {
                    Ok(caps[0].as_ref().map(|m| m.chars().count()).unwrap_or(0).to_string())
                }
            }
            None => Ok(if r.groups() > 0 { String::new() } else { "0".into() }),
        }
    }
    fn prim(&mut self) -> Result<String, String> {
        let Some(t) = self.peek().map(str::to_string) else { return Err("syntax error".into()) };
        self.i += 1;
        match t.as_str() {
            "(" => {
                let v = self.or()?;
                if self.peek() != Some(")") {
                    return Err("syntax error".into());
                }
                self.i += 1;
                Ok(v)
            }
            "length" => Ok(self.prim()?.chars().count().to_string()),
            "match" => {
                let s = self.prim()?;
                let r = self.prim()?;
                Self::matchre(&s, &r)
            }
            "substr" => {
                let s = self.prim()?;
                let p = Self::int(&self.prim()?)?;
                let n = Self::int(&self.prim()?)?;
                if p < 1 || n < 1 {
                    return Ok(String::new());
                }
                Ok(s.chars().skip(p as usize - 1).take(n as usize).collect())
            }
            "index" => {
                let s = self.prim()?;
                let chars = self.prim()?;
                Ok(s.chars().position(|ch| chars.contains(ch)).map(|p| p + 1).unwrap_or(0).to_string())
            }
            _ => Ok(t),
        }
    }
}

pub(crate) fn base64(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "di", "w") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let decode = opts.iter().any(|(o, _)| *o == 'd');
    let wrap: usize = opts.iter().find(|(o, _)| *o == 'w').and_then(|(_, v)| v.parse().ok()).unwrap_or(76);
    let (data, ok) = c.read_inputs(&files[..files.len().min(1)]);
    if !ok {
        return 1;
    }
    if decode {
        match hash::base64_decode(&data) {
            Some(d) => {
                c.out(&d);
                0
            }
            None => {
                c.err("invalid input");
                1
            }
        }
    } else {
        let enc = hash::base64_encode(&data);
        let mut out = String::new();
        if wrap == 0 {
            out.push_str(&enc);
            out.push('\n');
        } else {
            for ch in enc.as_bytes().chunks(wrap) {
                out.push_str(&String::from_utf8_lossy(ch));
                out.push('\n');
            }
        }
        if enc.is_empty() {
            out.clear();
        }
        c.outs(&out);
        0
    }
}

fn digest(c: &mut Ctx, f: fn(&[u8]) -> String) -> i32 {
    let files = if c.args.is_empty() {
        vec!["-".to_string()]
    } else {
        c.args.iter().filter(|a| !a.starts_with("--") && a.as_str() != "-b" && a.as_str() != "-t").cloned().collect()
    };
    let mut st = 0;
    for file in files {
        match c.read(&file) {
            Ok(d) => {
                let h = f(&d);
                c.outs(&format!("{h}  {file}\n"));
            }
            Err(e) => {
                if c.gnu() {
                    c.err(&format!("{file}: {}", e.strerror()));
                } else {
                    c.open_err(&file, e);
                }
                st = 1;
            }
        }
    }
    st
}

pub(crate) fn md5sum(c: &mut Ctx) -> i32 {
    digest(c, |d| hash::hex(&hash::md5(d)))
}

pub(crate) fn sha256sum(c: &mut Ctx) -> i32 {
    digest(c, |d| hash::hex(&hash::sha256(d)))
}

/// `yes` as a synchronous applet writes until the reader goes away (bounded).
pub(crate) fn yes(c: &mut Ctx) -> i32 {
    let line = if c.args.is_empty() { "y\n".to_string() } else { format!("{}\n", c.args.join(" ")) };
    let chunk = line.repeat((8192 / line.len()).max(1));
    for _ in 0..8192 {
        if !c.outs(&chunk) {
            return 1;
        }
    }
    0
}

pub(crate) fn nl(c: &mut Ctx) -> i32 {
    let files = c.args.iter().filter(|a| !a.starts_with('-')).cloned().collect::<Vec<_>>();
    let (data, ok) = c.read_inputs(&files);
    let mut out = String::new();
    let mut n = 1;
    for l in String::from_utf8_lossy(&data).lines() {
        if l.is_empty() {
            out.push_str("       \n");
        } else {
            out.push_str(&format!("{n:>6}\t{l}\n"));
            n += 1;
        }
    }
    c.outs(&out);
    if ok {
        0
    } else {
        1
    }
}

pub(crate) fn tac(c: &mut Ctx) -> i32 {
    let files = c.args.clone();
    let (data, ok) = c.read_inputs(&files);
    let mut out = Vec::new();
    for l in lines(&data).iter().rev() {
        out.extend_from_slice(l);
        if !l.ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    c.out(&out);
    if ok {
        0
    } else {
        1
    }
}

pub(crate) fn paste(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "s", "d") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let delims: Vec<char> = opts.iter().find(|(o, _)| *o == 'd').map(|(_, v)| v.chars().collect()).unwrap_or_else(|| vec!['\t']);
    let delims = if delims.is_empty() { vec!['\t'] } else { delims };
    let files = if files.is_empty() { vec!["-".to_string()] } else { files };
    let mut cols: Vec<Vec<String>> = Vec::new();
    for f in &files {
        match c.read(f) {
            Ok(d) => cols.push(String::from_utf8_lossy(&d).lines().map(str::to_string).collect()),
            Err(e) => {
                c.err(&format!("{f}: {}", e.strerror()));
                return 1;
            }
        }
    }
    let mut out = String::new();
    if opts.iter().any(|(o, _)| *o == 's') {
        for col in cols {
            for (i, l) in col.iter().enumerate() {
                if i > 0 {
                    out.push(delims[(i - 1) % delims.len()]);
                }
                out.push_str(l);
            }
            out.push('\n');
        }
    } else {
        let n = cols.iter().map(Vec::len).max().unwrap_or(0);
        for r in 0..n {
            for (i, col) in cols.iter().enumerate() {
                if i > 0 {
                    out.push(delims[(i - 1) % delims.len()]);
                }
                out.push_str(col.get(r).map(String::as_str).unwrap_or(""));
            }
            out.push('\n');
        }
    }
    c.outs(&out);
    0
}

pub(crate) fn fold(c: &mut Ctx) -> i32 {
    let args: Vec<String> = c
        .args
        .iter()
        .map(|a| if a.starts_with('-') && a[1..].chars().all(|ch| ch.is_ascii_digit()) && a.len() > 1 { format!("-w{}", &a[1..]) } else { a.clone() })
        .collect();
    let (opts, files) = match getopt(&args, "bs", "w") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let w: usize = opts.iter().find(|(o, _)| *o == 'w').and_then(|(_, v)| v.parse().ok()).unwrap_or(80).max(1);
    let (data, ok) = c.read_inputs(&files);
    let mut out = String::new();
    for l in String::from_utf8_lossy(&data).split_inclusive('\n') {
        let (body, nl) = match l.strip_suffix('\n') {
            Some(b) => (b, true),
            None => (l, false),
        };
        let chars: Vec<char> = body.chars().collect();
        for (i, ch) in chars.chunks(w).enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.extend(ch);
        }
        if nl {
            out.push('\n');
        }
    }
    c.outs(&out);
    if ok {
        0
    } else {
        1
    }
}

/// `od` with `-c`, `-x`, `-b`, `-d`, `-tx1`/`-tx2`/`-to2`/`-tc`, `-An`/`-Ad`/`-Ax`; default octal
/// 2-byte words. Offsets are octal unless `-A` says otherwise.
pub(crate) fn od(c: &mut Ctx) -> i32 {
    let mut kind = "o2".to_string();
    let mut addr = 'o';
    let mut files = Vec::new();
    let args = c.args.clone();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "-c" => kind = "c".into(),
            "-x" => kind = "x2".into(),
            "-b" => kind = "o1".into(),
            "-d" => kind = "u2".into(),
            "-t" => {
                i += 1;
                kind = args.get(i).cloned().unwrap_or_else(|| "o2".into());
            }
            "-A" => {
                i += 1;
                addr = args.get(i).and_then(|s| s.chars().next()).unwrap_or('o');
            }
            s if s.starts_with("-t") => kind = s[2..].to_string(),
            s if s.starts_with("-A") => addr = s[2..].chars().next().unwrap_or('o'),
            s if s.starts_with('-') && s.len() > 1 => return c.bad_option(s),
            s => files.push(s.to_string()),
        }
        i += 1;
    }
    let kind = match kind.as_str() {
        "x" => "x2".to_string(),
        "o" => "o2".to_string(),
        "d" => "d2".to_string(),
        "u" => "u2".to_string(),
        k => k.to_string(),
    };
    let (data, ok) = c.read_inputs(&files);
    let size: usize = kind.get(1..).and_then(|s| s.parse().ok()).unwrap_or(1).clamp(1, 8);
    let offset = |n: usize| -> String {
        match addr {
            'n' => String::new(),
            'd' => format!("{n:07}"),
            'x' => format!("{n:06x}"),
            _ => format!("{n:07o}"),
        }
    };
    let mut out = String::new();
    for (row, chunk) in data.chunks(16).enumerate() {
        out.push_str(&offset(row * 16));
        if kind.starts_with('c') || kind == "a" {
            for &b in chunk {
                let s = match b {
                    b'\n' => "\\n".to_string(),
                    b'\t' => "\\t".to_string(),
                    b'\r' => "\\r".to_string(),
                    0 => "\\0".to_string(),
                    7 => "\\a".to_string(),
                    8 => "\\b".to_string(),
                    12 => "\\f".to_string(),
                    11 => "\\v".to_string(),
                    0x20..=0x7e => (b as char).to_string(),
                    _ => format!("{b:03o}"),
                };
                out.push_str(&format!("{s:>4}"));
            }
        } else {
            for w in chunk.chunks(size) {
                let mut v: u64 = 0;
                for (k, &b) in w.iter().enumerate() {
                    v |= (b as u64) << (8 * k);
                }
                let s = match kind.chars().next() {
                    Some('x') => format!("{v:0w$x}", w = size * 2),
                    Some('d') | Some('u') => format!("{v:>w$}", w = [3, 5, 0, 10, 0, 0, 0, 20][size - 1].max(3)),
                    _ => format!("{v:0w$o}", w = [3, 6, 0, 11, 0, 0, 0, 22][size - 1].max(3)),
                };
                out.push(' ');
                out.push_str(&s);
            }
        }
        out.push('\n');
    }
    if addr != 'n' {
        out.push_str(&offset(data.len()));
        out.push('\n');
    }
    c.outs(&out);
    if ok {
        0
    } else {
        1
    }
}
