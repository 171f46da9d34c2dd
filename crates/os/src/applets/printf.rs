//! `printf` formatting (shared by the shell builtins and the applets).

/// Formats `fmt` with `args`, reusing the format while arguments remain. Returns the output,
/// the arguments that were not valid numbers, and the exit status.
pub fn format(fmt: &str, args: &[String]) -> (Vec<u8>, Vec<String>, i32) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    let mut ai = 0;
    let f: Vec<char> = fmt.chars().collect();
    let mut rounds = 0;
    loop {
        rounds += 1;
        let consumed_before = ai;
        let mut i = 0;
        while i < f.len() {
            let c = f[i];
            if c == '\\' {
                let (bytes, adv, stop) = escape_at(&f, i);
                out.extend_from_slice(&bytes);
                i += adv;
                if stop {
                    let code = if bad.is_empty() { 0 } else { 1 };
                    return (out, bad, code);
                }
                continue;
            }
            if c != '%' {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += 1;
                continue;
            }
            if i + 1 < f.len() && f[i + 1] == '%' {
                out.push(b'%');
                i += 2;
                continue;
            }
            // %[flags][width][.prec]conv
            let mut j = i + 1;
            let mut flags = String::new();
            while j < f.len() && "-+ #0".contains(f[j]) {
                flags.push(f[j]);
                j += 1;
            }
            let mut width: Option<usize> = None;
            if j < f.len() && f[j] == '*' {
                let a = args.get(ai).cloned().unwrap_or_default();
                ai += 1;
                let w: i64 = a.trim().parse().unwrap_or(0);
                if w < 0 {
                    flags.push('-');
                }
                width = Some(w.unsigned_abs() as usize);
                j += 1;
            } else {
                let st = j;
                while j < f.len() && f[j].is_ascii_digit() {
                    j += 1;
                }
                if j > st {
                    width = f[st..j].iter().collect::<String>().parse().ok();
                }
            }
            let mut prec: Option<usize> = None;
            if j < f.len() && f[j] == '.' {
                j += 1;
                if j < f.len() && f[j] == '*' {
                    let a = args.get(ai).cloned().unwrap_or_default();
                    ai += 1;
                    prec = Some(a.trim().parse::<i64>().unwrap_or(0).max(0) as usize);
                    j += 1;
                } else {
                    let st = j;
                    while j < f.len() && f[j].is_ascii_digit() {
                        j += 1;
                    }
                    prec = Some(f[st..j].iter().collect::<String>().parse().unwrap_or(0));
                }
            }
            while j < f.len() && "hlLqjzt".contains(f[j]) {
                j += 1;
            }
            let Some(&conv) = f.get(j) else {
                out.extend(f[i..].iter().collect::<String>().bytes());
                break;
            };
            let width = width.unwrap_or(0).min(1 << 16);
            let prec = prec.map(|p| p.min(1 << 16));
            let arg = args.get(ai).cloned();
            let has_arg = arg.is_some();
            let arg = arg.unwrap_or_default();
            let body: String = match conv {
                's' => {
                    ai += 1;
                    match prec {
                        Some(p) => arg.chars().take(p).collect(),
                        None => arg,
                    }
                }
                'b' => {
                    ai += 1;
                    let (bytes, stop) = super::echo::unescape(&arg, false);
                    let s = String::from_utf8_lossy(&bytes).into_owned();
                    if stop {
                        out.extend(pad(&s, width, &flags).bytes());
                        let code = if bad.is_empty() { 0 } else { 1 };
                        return (out, bad, code);
                    }
                    s
                }
                'c' => {
                    ai += 1;
                    arg.chars().next().map(String::from).unwrap_or_default()
                }
                'd' | 'i' | 'u' | 'o' | 'x' | 'X' => {
                    ai += 1;
                    let n = if has_arg { num(&arg, &mut bad) } else { 0 };
                    let mut digits = match conv {
                        'o' => format!("{:o}", n),
                        'x' => format!("{:x}", n),
                        'X' => format!("{:X}", n),
                        'u' => (n as u64).to_string(),
                        _ => n.unsigned_abs().to_string(),
                    };
                    if let Some(p) = prec {
                        while digits.len() < p {
                            digits.insert(0, '0');
                        }
                    }
                    if flags.contains('#') && n != 0 {
                        match conv {
                            'o' => digits.insert(0, '0'),
                            'x' => digits.insert_str(0, "0x"),
                            'X' => digits.insert_str(0, "0X"),
                            _ => {}
                        }
                    }
                    let sign = if matches!(conv, 'd' | 'i') {
                        if n < 0 {
                            "-"
                        } else if flags.contains('+') {
                            "+"
                        } else if flags.contains(' ') {
                            " "
                        } else {
                            ""
                        }
                    } else {
                        ""
                    };
                    if flags.contains('0') && !flags.contains('-') && prec.is_none() {
                        while digits.len() + sign.len() < width {
                            digits.insert(0, '0');
                        }
                    }
                    format!("{sign}{digits}")
                }
                'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
                    ai += 1;
                    let v: f64 = if has_arg {
                        match arg.trim().parse::<f64>() {
                            Ok(v) => v,
                            Err(_) => {
                                bad.push(arg.clone());
                                0.0
                            }
                        }
                    } else {
                        0.0
                    };
                    let p = prec.unwrap_or(6);
                    let mut s = match conv {
                        'f' | 'F' => format!("{:.*}", p, v),
                        'e' | 'E' => exp_fmt(v, p, conv == 'E'),
                        _ => g_fmt(v, if p == 0 { 1 } else { p }, conv == 'G'),
                    };
                    if flags.contains('+') && v >= 0.0 {
                        s.insert(0, '+');
                    }
                    if flags.contains('0') && !flags.contains('-') {
                        let neg = s.starts_with('-') || s.starts_with('+');
                        while s.len() < width {
                            s.insert(if neg { 1 } else { 0 }, '0');
                        }
                    }
                    s
                }
                other => {
                    // Unknown conversion: printed literally.
                    out.extend(format!("%{other}").bytes());
                    i = j + 1;
                    continue;
                }
            };
            out.extend(pad(&body, width, &flags).bytes());
            i = j + 1;
            if out.len() > 16 << 20 {
                break;
            }
        }
        if ai >= args.len() || ai == consumed_before || rounds > 100_000 {
            break;
        }
    }
    let code = if bad.is_empty() { 0 } else { 1 };
    (out, bad, code)
}

fn pad(s: &str, width: usize, flags: &str) -> String {
    let n = s.chars().count();
    if n >= width {
        return s.to_string();
    }
    let fill = " ".repeat(width - n);
    if flags.contains('-') {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

fn num(a: &str, bad: &mut Vec<String>) -> i64 {
    let t = a.trim();
    if let Some(c) = t.strip_prefix('\'').or_else(|| t.strip_prefix('"')) {
        return c.chars().next().map(|c| c as i64).unwrap_or(0);
    }
    if let Some(v) = crate::sh::arith::parse_num(t.trim_start_matches('+')) {
        return v;
    }
    if let Some(rest) = t.strip_prefix('-') {
        if let Some(v) = crate::sh::arith::parse_num(rest) {
            return -v;
        }
    }
    // Leading digits are used; the rest is an error.
    let digits: String = t.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    bad.push(a.to_string());
    digits.parse().unwrap_or(0)
}

fn exp_fmt(v: f64, p: usize, upper: bool) -> String {
    let s = format!("{:.*e}", p, v);
    // Rust prints 1.5e2; C prints 1.5e+02.
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let ev: i32 = e.parse().unwrap_or(0);
    let r = format!("{m}e{}{:02}", if ev < 0 { '-' } else { '+' }, ev.abs());
    if upper {
        r.to_uppercase()
    } else {
        r
    }
}

fn g_fmt(v: f64, p: usize, upper: bool) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exp = v.abs().log10().floor() as i32;
    let s = if exp < -4 || exp >= p as i32 {
        let e = exp_fmt(v, p.saturating_sub(1), upper);
        let (m, rest) = e.split_once(if upper { 'E' } else { 'e' }).unwrap_or((&e, ""));
        let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
        format!("{m}{}{rest}", if upper { 'E' } else { 'e' })
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        let f = format!("{:.*}", decimals, v);
        if f.contains('.') {
            f.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            f
        }
    };
    s
}

/// One backslash escape of a printf format at `f[i] == '\\'`: (bytes, chars consumed, `\c`).
fn escape_at(f: &[char], i: usize) -> (Vec<u8>, usize, bool) {
    let Some(&c) = f.get(i + 1) else { return (b"\\".to_vec(), 1, false) };
    let simple = |b: u8| (vec![b], 2, false);
    match c {
        'n' => simple(b'\n'),
        't' => simple(b'\t'),
        'r' => simple(b'\r'),
        'a' => simple(7),
        'b' => simple(8),
        'f' => simple(12),
        'v' => simple(11),
        'e' => simple(27),
        '\\' => simple(b'\\'),
        '"' => simple(b'"'),
        '\'' => simple(b'\''),
        'c' => (Vec::new(), 2, true),
        '0'..='7' => {
            let mut v: u32 = 0;
            let mut n = 0;
            let mut k = i + 1;
            while n < 3 && k < f.len() && ('0'..='7').contains(&f[k]) {
                v = v * 8 + f[k].to_digit(8).unwrap_or(0);
                k += 1;
                n += 1;
            }
            (vec![v as u8], 1 + n, false)
        }
        'x' => {
            let mut v: u32 = 0;
            let mut n = 0;
            let mut k = i + 2;
            while n < 2 && k < f.len() && f[k].is_ascii_hexdigit() {
                v = v * 16 + f[k].to_digit(16).unwrap_or(0);
                k += 1;
                n += 1;
            }
            if n == 0 {
                (b"\\x".to_vec(), 2, false)
            } else {
                (vec![v as u8], 2 + n, false)
            }
        }
        other => {
            let mut v = vec![b'\\'];
            let mut buf = [0u8; 4];
            v.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            (v, 2, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[&str]) -> String {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        String::from_utf8_lossy(&format(fmt, &a).0).into_owned()
    }

    #[test]
    fn printf_matches_coreutils_output() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("%s-%d|%5.2f|%x|%-4s|\n", &["a", "42", "3.14159", "255", "ab"], "a-42| 3.14|ff|ab  |\n"),
            ("%s\n", &["a", "b", "c"], "a\nb\nc\n"),
            ("%05d\n", &["42"], "00042\n"),
            ("%+d % d\n", &["5", "5"], "+5  5\n"),
            ("%c%c\n", &["hello", "world"], "hw\n"),
            ("%b\n", &["a\\tb"], "a\tb\n"),
            ("%%|%s|\n", &[], "%||\n"),
            ("%.3s\n", &["abcdef"], "abc\n"),
            ("%e\n", &["1234.5"], "1.234500e+03\n"),
            ("%g %g\n", &["0.0001", "1e10"], "0.0001 1e+10\n"),
            ("%o %X %#x\n", &["8", "255", "255"], "10 FF 0xff\n"),
            ("\\x41\\101\\n", &[], "AA\n"),
            ("%*d|\n", &["5", "3"], "    3|\n"),
        ];
        for (fmt, args, want) in cases {
            assert_eq!(f(fmt, args), *want, "{fmt}");
        }
    }

    #[test]
    fn printf_reports_invalid_numbers_and_exits_1() {
        let (out, bad, code) = format("%d\n", &["abc".to_string()]);
        assert_eq!((String::from_utf8_lossy(&out).as_ref(), bad, code), ("0\n", vec!["abc".to_string()], 1));
    }
}
