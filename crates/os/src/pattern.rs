//! Shell pattern matching (`fnmatch`): `*`, `?`, `[...]` with ranges, `!`/`^` negation and
//! `[:class:]`; a backslash makes the next character literal.

/// Upper bound on matcher steps (hostile patterns).
const MAX_STEPS: usize = 1_000_000;

/// Whether `pat` matches all of `s`.
pub fn matches(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let mut steps = 0;
    m(&p, 0, &t, 0, &mut steps)
}

/// Whether a pattern contains unescaped glob characters.
pub fn has_glob(pat: &str) -> bool {
    let mut esc = false;
    for c in pat.chars() {
        if esc {
            esc = false;
            continue;
        }
        match c {
            '\\' => esc = true,
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

/// Removes backslash escapes.
pub fn unescape(pat: &str) -> String {
    let mut out = String::with_capacity(pat.len());
    let mut esc = false;
    for c in pat.chars() {
        if esc {
            out.push(c);
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else {
            out.push(c);
        }
    }
    if esc {
        out.push('\\');
    }
    out
}

/// Escapes glob characters so the text matches literally.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn m(p: &[char], mut pi: usize, t: &[char], mut ti: usize, steps: &mut usize) -> bool {
    loop {
        *steps += 1;
        if *steps > MAX_STEPS {
            return false;
        }
        if pi == p.len() {
            return ti == t.len();
        }
        match p[pi] {
            '*' => {
                while pi < p.len() && p[pi] == '*' {
                    pi += 1;
                }
                if pi == p.len() {
                    return true;
                }
                for k in ti..=t.len() {
                    if m(p, pi, t, k, steps) {
                        return true;
                    }
                }
                return false;
            }
            '?' => {
                if ti == t.len() {
                    return false;
                }
                pi += 1;
                ti += 1;
            }
            '[' => {
                if ti == t.len() {
                    return false;
                }
                match bracket(p, pi, t[ti]) {
                    Some((ok, next)) => {
                        if !ok {
                            return false;
                        }
                        pi = next;
                        ti += 1;
                    }
                    None => {
                        if t[ti] != '[' {
                            return false;
                        }
                        pi += 1;
                        ti += 1;
                    }
                }
            }
            '\\' if pi + 1 < p.len() => {
                if ti == t.len() || t[ti] != p[pi + 1] {
                    return false;
                }
                pi += 2;
                ti += 1;
            }
            c => {
                if ti == t.len() || t[ti] != c {
                    return false;
                }
                pi += 1;
                ti += 1;
            }
        }
    }
}

/// Character class membership (`alpha`, `digit`, ...).
pub fn class_matches(class: &str, c: char) -> bool {
    match class {
        "alpha" => c.is_ascii_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_ascii_alphanumeric(),
        "upper" => c.is_ascii_uppercase(),
        "lower" => c.is_ascii_lowercase(),
        "space" => matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'),
        "blank" => c == ' ' || c == '\t',
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "print" => (' '..='~').contains(&c),
        "graph" => ('!'..='~').contains(&c),
        "cntrl" => c.is_ascii_control(),
        _ => false,
    }
}

/// Parses a bracket expression at `p[start] == '['`; returns (matched, index after `]`).
fn bracket(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let neg = i < p.len() && (p[i] == '!' || p[i] == '^');
    if neg {
        i += 1;
    }
    let mut ok = false;
    let mut first = true;
    loop {
        if i >= p.len() {
            return None;
        }
        let ch = p[i];
        if ch == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        if ch == '[' && i + 1 < p.len() && p[i + 1] == ':' {
            if let Some(end) = (i + 2..p.len().saturating_sub(1)).find(|&k| p[k] == ':' && p[k + 1] == ']') {
                let name: String = p[i + 2..end].iter().collect();
                if class_matches(&name, c) {
                    ok = true;
                }
                i = end + 2;
                continue;
            }
        }
        let (lo, adv) = if ch == '\\' && i + 1 < p.len() { (p[i + 1], 2) } else { (ch, 1) };
        i += adv;
        if i + 1 < p.len() && p[i] == '-' && p[i + 1] != ']' {
            let (hi, adv2) = if p[i + 1] == '\\' && i + 2 < p.len() { (p[i + 2], 3) } else { (p[i + 1], 2) };
            i += adv2;
            if lo <= c && c <= hi {
                ok = true;
            }
        } else if lo == c {
            ok = true;
        }
    }
    Some((ok != neg, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_like_fnmatch() {
        let cases = [
            ("*", "", true),
            ("*", "abc", true),
            ("a*c", "abbbc", true),
            ("a*c", "abbb", false),
            ("?", "a", true),
            ("?", "", false),
            ("[abc]x", "bx", true),
            ("[!abc]x", "bx", false),
            ("[a-z]*", "hello", true),
            ("[[:digit:]]*", "9lives", true),
            ("\\*", "*", true),
            ("\\*", "a", false),
            ("*.txt", "notes.txt", true),
            ("[", "[", true),
            ("web-[0-9]", "web-3", true),
        ];
        for (p, s, want) in cases {
            assert_eq!(matches(p, s), want, "{p} vs {s}");
        }
    }
}
