//! `echo` in its two families.

/// Which `echo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// GNU coreutils / bash builtin / busybox: `-n`, `-e`, `-E`; no escapes by default.
    Gnu,
    /// dash builtin (POSIX/XSI): always interprets escapes, only `-n`.
    Dash,
}

/// Renders `echo args`.
pub fn render(style: Style, args: &[String]) -> Vec<u8> {
    let mut newline = true;
    let mut escapes = style == Style::Dash;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if style == Style::Dash {
            if a == "-n" && i == 0 {
                newline = false;
                i += 1;
                continue;
            }
            break;
        }
        if a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            for c in a[1..].chars() {
                match c {
                    'n' => newline = false,
                    'e' => escapes = true,
                    _ => escapes = false,
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    let mut out = Vec::new();
    for (k, a) in args[i..].iter().enumerate() {
        if k > 0 {
            out.push(b' ');
        }
        if escapes {
            let (bytes, stop) = unescape(a, style == Style::Dash);
            out.extend_from_slice(&bytes);
            if stop {
                return out;
            }
        } else {
            out.extend_from_slice(a.as_bytes());
        }
    }
    if newline {
        out.push(b'\n');
    }
    out
}

/// Interprets echo escapes; returns the bytes and whether `\c` stopped output.
/// `dash_octal`: octal escapes are `\0nnn` only (dash) — GNU also takes `\0nnn`.
pub fn unescape(s: &str, dash_octal: bool) -> (Vec<u8>, bool) {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'e' if !dash_octal => out.push(27),
            b'\\' => out.push(b'\\'),
            b'c' => return (out, true),
            b'1'..=b'7' if dash_octal => {
                let mut v: u32 = (c - b'0') as u32;
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            b'0' => {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            b'1'..=b'7' if !dash_octal => {
                // GNU: \NNN is not special without a leading 0; keep literally.
                out.push(b'\\');
                out.push(c);
            }
            b'x' if !dash_octal => {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 2 && i < b.len() && (b[i] as char).is_ascii_hexdigit() {
                    v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(v as u8);
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    (out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn gnu_echo_needs_dash_e_for_escapes_and_dash_echo_always_interprets() {
        let cases: &[(Style, &[&str], &str)] = &[
            (Style::Gnu, &["a", "b"], "a b\n"),
            (Style::Gnu, &["-n", "a"], "a"),
            (Style::Gnu, &["-e", "b\\tc"], "b\tc\n"),
            (Style::Gnu, &["x\\ny"], "x\\ny\n"),
            (Style::Gnu, &["-en", "\\n"], "\n"),
            (Style::Gnu, &["-E", "q\\tr"], "q\\tr\n"),
            (Style::Gnu, &["-x"], "-x\n"),
            (Style::Dash, &["-e", "b\\tc"], "-e b\tc\n"),
            (Style::Dash, &["x\\ny"], "x\ny\n"),
            (Style::Dash, &["-n", "a\\c", "b"], "a"),
            (Style::Dash, &["-E", "q\\tr"], "-E q\tr\n"),
        ];
        for (st, args, want) in cases {
            assert_eq!(String::from_utf8_lossy(&render(*st, &s(args))), *want, "{args:?}");
        }
    }
}
