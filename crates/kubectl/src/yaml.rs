//! `-o yaml` output exactly as kubectl prints it: sigs.k8s.io/yaml (JSON → gopkg.in/yaml.v2).
//! yaml.v2 sorts map keys with its own order (sorter.go: digit runs compare numerically,
//! non-letters before letters), double-quotes strings that would resolve to another type
//! (`"8"`, `"true"`, `""`, timestamps), single-quotes strings plain style cannot carry, and
//! writes multi-line strings as literal blocks.

use serde_json::Value;
use std::cmp::Ordering;

/// Renders a JSON value as kubectl's YAML.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => emit_map(m, 0, &mut out),
        Value::Array(a) if !a.is_empty() => emit_seq(a, 0, &mut out),
        other => {
            out.push_str(&scalar(other, 0, 0));
            out.push('\n');
        }
    }
    out
}

fn sorted_keys(m: &serde_json::Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = m.keys().collect();
    kubesim_api::sort::sort_by(&mut keys, |a, b| key_order(a, b));
    keys
}

/// yaml.v2 keyList.Less for string keys.
fn key_order(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl { Ordering::Less } else { Ordering::Greater };
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.saturating_mul(10).saturating_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.saturating_mul(10).saturating_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

fn indent(n: usize, out: &mut String) {
    for _ in 0..n {
        out.push(' ');
    }
}

fn emit_map(m: &serde_json::Map<String, Value>, level: usize, out: &mut String) {
    let mut first = true;
    for key in sorted_keys(m) {
        if !first {
            indent(level, out);
        }
        first = false;
        let value = &m[key];
        let key_text = string_scalar(key, level, true, level);
        let column = level + key_text.chars().count() + 2;
        out.push_str(&key_text);
        out.push(':');
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                indent(level + 2, out);
                emit_map(inner, level + 2, out);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                indent(level, out);
                emit_seq(items, level, out);
            }
            other => {
                out.push(' ');
                out.push_str(&scalar(other, level + 2, column));
                out.push('\n');
            }
        }
    }
}

fn emit_seq(items: &[Value], level: usize, out: &mut String) {
    let mut first = true;
    for item in items {
        if !first {
            indent(level, out);
        }
        first = false;
        out.push_str("- ");
        match item {
            Value::Object(inner) if !inner.is_empty() => emit_map(inner, level + 2, out),
            Value::Array(inner) if !inner.is_empty() => emit_seq(inner, level + 2, out),
            other => {
                out.push_str(&scalar(other, level + 2, level + 2));
                out.push('\n');
            }
        }
    }
}

/// A scalar written at `column`; `level` is the indentation of continuation lines.
fn scalar(value: &Value, level: usize, column: usize) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_scalar(s, level, false, column),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// Whether yaml.v2's resolver would read the plain scalar as something other than a string.
fn resolves_to_non_string(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    const SPECIAL: &[&str] = &[
        "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On",
        "ON", "off", "Off", "OFF", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", "<<",
    ];
    if SPECIAL.contains(&s) {
        return true;
    }
    let first = s.chars().next().unwrap_or(' ');
    if first.is_ascii_digit() || first == '-' || first == '+' || first == '.' {
        let plain = s.replace('_', "");
        let body = plain.trim_start_matches(['-', '+']);
        if body.parse::<f64>().is_ok()
            && !body.is_empty()
            && !body.eq_ignore_ascii_case("inf")
            && !body.eq_ignore_ascii_case("nan")
            && !body.eq_ignore_ascii_case("infinity")
        {
            return true;
        }
        if let Some(hex) = body.strip_prefix("0x") {
            if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                return true;
            }
        }
        if let Some(bin) = body.strip_prefix("0b") {
            if !bin.is_empty() && bin.chars().all(|c| c == '0' || c == '1') {
                return true;
            }
        }
        if looks_like_timestamp(s) {
            return true;
        }
        // base-60 floats (1:20) are quoted by yaml.v2 too.
        if s.contains(':') && s.split(':').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit() || c == '.')) {
            return true;
        }
    }
    false
}

/// yaml.v2 timestamp formats: 2006-01-02T15:04:05Z07:00, 2006-01-02 15:04:05, 2006-01-02...
fn looks_like_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 10 || !(b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[5].is_ascii_digit() && b[7] == b'-' && b[8].is_ascii_digit()) {
        return false;
    }
    if b.len() == 10 {
        return b[9].is_ascii_digit() && b[6].is_ascii_digit();
    }
    matches!(b[10], b'T' | b't' | b' ')
}

/// Whether libyaml's analyzer allows the plain style in block context.
fn plain_allowed(s: &str, key: bool) -> bool {
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    let chars: Vec<char> = s.chars().collect();
    if chars.first().is_some_and(|c| c.is_whitespace()) || chars.last().is_some_and(|c| c.is_whitespace()) {
        return false;
    }
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_by_space = next.is_none_or(|n| n == ' ' || n == '\t');
        if c.is_control() || c == '\u{feff}' {
            return false;
        }
        if i == 0 {
            if matches!(c, '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@' | '`') {
                return false;
            }
            if matches!(c, '?' | ':' | '-') && followed_by_space {
                return false;
            }
        } else {
            if c == ':' && followed_by_space {
                return false;
            }
            if c == '#' && chars[i - 1] == ' ' {
                return false;
            }
            if key && matches!(c, ',' | '?' | '[' | ']' | '{' | '}') {
                // Flow indicators are fine in block context; keys are simple keys in block context too.
            }
        }
    }
    true
}

/// yaml.v2's emitter best_width: plain, single- and double-quoted scalars that are not keys
/// break at a space once the line is past this column.
const BEST_WIDTH: usize = 80;

fn string_scalar(s: &str, level: usize, key: bool, column: usize) -> String {
    if s.contains('\n') && !key {
        if let Some(block) = literal_block(s, level) {
            return block;
        }
        return double_quoted(s, level, column, !key);
    }
    if resolves_to_non_string(s) {
        return double_quoted(s, level, column, !key);
    }
    if plain_allowed(s, key) {
        return folded(s, level, column, !key, false);
    }
    if s.chars().any(|c| c.is_control() || c == '\u{feff}') || s.contains('\n') {
        return double_quoted(s, level, column, !key);
    }
    format!("'{}'", folded(s, level, column + 1, !key, true))
}

/// yaml_emitter_write_plain_scalar / _single_quoted_scalar: a space past BEST_WIDTH (not
/// followed by another space; for single quotes not first or last) becomes a line break and
/// the indentation.
fn folded(s: &str, level: usize, column: usize, allow_breaks: bool, single: bool) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut col = column;
    let mut spaces = false;
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let inner = !single || (i > 0 && i + 1 < chars.len());
            if allow_breaks && !spaces && col > BEST_WIDTH && inner && chars.get(i + 1) != Some(&' ') {
                out.push('\n');
                indent(level, &mut out);
                col = level;
            } else {
                out.push(' ');
                col += 1;
            }
            spaces = true;
        } else {
            if single && c == '\'' {
                out.push('\'');
                col += 1;
            }
            out.push(c);
            col += 1;
            spaces = false;
        }
    }
    out
}

fn literal_block(s: &str, level: usize) -> Option<String> {
    // libyaml refuses block scalars with trailing spaces before a break or leading spaces
    // it would need an indentation indicator for.
    if s.starts_with(' ') || s.lines().any(|l| l.ends_with(' ') || l.ends_with('\t')) || s.chars().any(|c| c.is_control() && c != '\n') {
        return None;
    }
    let chomp = if s.ends_with("\n\n") {
        "+"
    } else if s.ends_with('\n') {
        ""
    } else {
        "-"
    };
    let mut out = format!("|{chomp}");
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            for _ in 0..level {
                out.push(' ');
            }
            out.push_str(line);
        }
    }
    Some(out)
}

/// yaml_emitter_write_double_quoted_scalar, with its line folding past BEST_WIDTH.
fn double_quoted(s: &str, level: usize, column: usize, allow_breaks: bool) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::from("\"");
    let mut col = column + 1;
    let mut spaces = false;
    for (i, &c) in chars.iter().enumerate() {
        let escaped: Option<String> = match c {
            '"' => Some("\\\"".into()),
            '\\' => Some("\\\\".into()),
            '\n' => Some("\\n".into()),
            '\t' => Some("\\t".into()),
            '\r' => Some("\\r".into()),
            '\0' => Some("\\0".into()),
            '\u{7}' => Some("\\a".into()),
            '\u{8}' => Some("\\b".into()),
            '\u{b}' => Some("\\v".into()),
            '\u{c}' => Some("\\f".into()),
            '\u{1b}' => Some("\\e".into()),
            '\u{85}' => Some("\\N".into()),
            '\u{a0}' => Some("\\_".into()),
            '\u{2028}' => Some("\\L".into()),
            '\u{2029}' => Some("\\P".into()),
            c if c.is_control() || c == '\u{feff}' => {
                let v = c as u32;
                Some(if v <= 0xff { format!("\\x{v:02X}") } else { format!("\\u{v:04X}") })
            }
            _ => None,
        };
        if let Some(e) = escaped {
            col += e.chars().count();
            out.push_str(&e);
            spaces = false;
        } else if c == ' ' {
            if allow_breaks && !spaces && col > BEST_WIDTH && i > 0 && i + 1 < chars.len() {
                out.push('\n');
                indent(level, &mut out);
                col = level;
                if chars.get(i + 1) == Some(&' ') {
                    out.push('\\');
                    col += 1;
                }
            } else {
                out.push(' ');
                col += 1;
            }
            spaces = true;
        } else {
            out.push(c);
            col += 1;
            spaces = false;
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Mirrors gopkg.in/yaml.v2 encode_test.go (quoting of strings that resolve to other types,
    // literal blocks) and sorter behaviour, via sigs.k8s.io/yaml's JSONToYAML as kubectl uses it.
    #[test]
    fn renders_like_kubectl_yaml() {
        let value = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "resourceVersion": "8", "creationTimestamp": "2025-01-01T00:00:00Z",
                "annotations": {"a": "{\"x\":1}\n", "b": "true", "c": "", "d": "- item", "e": "x: y", "f": "it's"},
                "labels": {"app.kubernetes.io/name": "web", "app": "web"}},
            "spec": {"containers": [{"name": "c", "args": ["-v", "10", "a b"], "ports": [{"containerPort": 80}]}], "empty": {}, "none": []},
        });
        let want = r#"apiVersion: v1
kind: Pod
metadata:
  annotations:
    a: |
      {"x":1}
    b: "true"
    c: ""
    d: '- item'
    e: 'x: y'
    f: it's
  creationTimestamp: "2025-01-01T00:00:00Z"
  labels:
    app: web
    app.kubernetes.io/name: web
  name: p
  resourceVersion: "8"
spec:
  containers:
  - args:
    - -v
    - "10"
    - a b
    name: c
    ports:
    - containerPort: 80
  empty: {}
  none: []
"#;
        assert_eq!(to_yaml(&value), want);
    }

    #[test]
    fn keys_sort_like_yaml_v2() {
        let mut keys = vec!["item10", "item9", "Item", "a_b", "ab", "a-b", "x2y", "x10y", "b"];
        keys.sort_by(|a, b| key_order(a, b));
        assert_eq!(keys, vec!["Item", "a-b", "a_b", "ab", "b", "item9", "item10", "x2y", "x10y"]);
    }

    /// yaml.v2 emitterc.go best_width 80: long plain and quoted values fold at a space (the
    /// quota message in a Deployment's ReplicaFailure condition on the quota-pod-namespace page).
    #[test]
    fn long_values_fold_at_80_columns() {
        let message = "pods \"pod-quota-demo-7d6fc6db8d-\" is forbidden: exceeded quota: pod-demo, requested: pods=1, used: pods=2, limited: pods=2";
        assert_eq!(
            to_yaml(&json!({"status": {"conditions": [{"message": message}]}})),
            "status:\n  conditions:\n  - message: 'pods \"pod-quota-demo-7d6fc6db8d-\" is forbidden: exceeded quota: pod-demo,\n      requested: pods=1, used: pods=2, limited: pods=2'\n"
        );
        let plain = "word ".repeat(20) + "end";
        assert_eq!(to_yaml(&json!({"k": plain})), format!("k: {}\n  {}\n", "word ".repeat(16).trim_end(), "word word word word end"));
        // Keys never fold; a long unbroken word is left as it is.
        let long = "x".repeat(100);
        assert_eq!(to_yaml(&json!({"k": long.clone()})), format!("k: {long}\n"));
    }

    #[test]
    fn multiline_strings_pick_chomping() {
        assert_eq!(to_yaml(&json!({"k": "a\nb"})), "k: |-\n  a\n  b\n");
        assert_eq!(to_yaml(&json!({"k": "a\n\nb\n"})), "k: |\n  a\n\n  b\n");
        assert_eq!(to_yaml(&json!({"k": "trailing \nspace"})), "k: \"trailing \\nspace\"\n");
    }
}
