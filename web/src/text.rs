//! Text helpers for the views: YAML printing of API objects, line diffs, time and size formats.
//! Pure functions, no browser.

use serde_json::Value;

/// Prints a JSON value as block-style YAML (the way `kubectl get -o yaml` looks).
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (key, value) in map {
        out.push_str(&" ".repeat(indent));
        out.push_str(&key_text(key));
        out.push(':');
        write_value_after_key(out, value, indent);
    }
}

fn write_value_after_key(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(out, m, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_seq(out, items, indent);
        }
        Value::String(s) if s.contains('\n') => {
            out.push_str(" |\n");
            for line in s.lines() {
                out.push_str(&" ".repeat(indent + 2));
                out.push_str(line);
                out.push('\n');
            }
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        out.push_str(&" ".repeat(indent));
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => {
                let mut first = true;
                for (key, value) in m {
                    if !first {
                        out.push_str(&" ".repeat(indent + 2));
                    }
                    first = false;
                    out.push_str(&key_text(key));
                    out.push(':');
                    write_value_after_key(out, value, indent + 2);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_seq(out, inner, indent + 2);
            }
            other => {
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

fn key_text(key: &str) -> String {
    if needs_quotes(key) {
        serde_json::to_string(key).unwrap_or_default()
    } else {
        key.to_string()
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            if needs_quotes(s) {
                serde_json::to_string(s).unwrap_or_default()
            } else {
                s.clone()
            }
        }
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

fn needs_quotes(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(lower.as_str(), "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~" | "y" | "n") {
        return true;
    }
    if s.parse::<f64>().is_ok() {
        return true;
    }
    let first = s.chars().next().unwrap_or(' ');
    if "-?:,[]{}#&*!|>'\"%@` ".contains(first) {
        return true;
    }
    s.contains(": ") || s.contains(" #") || s.ends_with(':') || s.ends_with(' ') || s.contains('\t') || s.contains('\n')
}

/// One line of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    /// In both.
    Same(String),
    /// Only in the new text.
    Added(String),
    /// Only in the old text.
    Removed(String),
}

/// A line diff (longest common subsequence; objects are small).
pub fn diff_lines(old: &str, new: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    if n * m > 4_000_000 {
        // Too big for the table: show it as a replacement.
        return a.iter().map(|l| DiffLine::Removed(l.to_string())).chain(b.iter().map(|l| DiffLine::Added(l.to_string()))).collect();
    }
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] { lcs[at(i + 1, j + 1)] + 1 } else { lcs[at(i + 1, j)].max(lcs[at(i, j + 1)]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n && j < m {
        if a[i] == b[j] {
            out.push(DiffLine::Same(a[i].to_string()));
            i += 1;
            j += 1;
        } else if lcs[at(i + 1, j)] >= lcs[at(i, j + 1)] {
            out.push(DiffLine::Removed(a[i].to_string()));
            i += 1;
        } else {
            out.push(DiffLine::Added(b[j].to_string()));
            j += 1;
        }
    }
    out.extend(a[i..].iter().map(|l| DiffLine::Removed(l.to_string())));
    out.extend(b[j..].iter().map(|l| DiffLine::Added(l.to_string())));
    out
}

pub use kubesim_api::time::clock;

/// `12.3s`, `4m10s`: compact durations for labels.
pub fn short_duration(t_ms: u64) -> String {
    if t_ms == 0 {
        "0s".to_string()
    } else if t_ms < 1000 {
        format!("{t_ms}ms")
    } else if t_ms < 60_000 {
        let tenths = t_ms / 100;
        if tenths.is_multiple_of(10) {
            format!("{}s", tenths / 10)
        } else {
            format!("{}.{}s", tenths / 10, tenths % 10)
        }
    } else {
        let s = t_ms / 1000;
        if s.is_multiple_of(60) {
            format!("{}m", s / 60)
        } else {
            format!("{}m{}s", s / 60, s % 60)
        }
    }
}

/// Bytes as `128Mi`, `7.5Gi`.
pub fn bytes(n: i64) -> String {
    const GI: f64 = 1024.0 * 1024.0 * 1024.0;
    const MI: f64 = 1024.0 * 1024.0;
    let f = n as f64;
    if f >= GI {
        let v = f / GI;
        if (v - v.round()).abs() < 0.05 {
            format!("{}Gi", v.round() as i64)
        } else {
            format!("{v:.1}Gi")
        }
    } else if f >= MI {
        format!("{}Mi", (f / MI).round() as i64)
    } else {
        format!("{n}")
    }
}

/// Millicores as `250m` or `2`.
pub fn cpu(milli: i64) -> String {
    if milli % 1000 == 0 {
        format!("{}", milli / 1000)
    } else {
        format!("{milli}m")
    }
}

/// The colour class of a kubectl STATUS word.
pub fn status_class(status: &str) -> &'static str {
    match status {
        "Running" => "ok",
        "Completed" | "Succeeded" => "done",
        "Pending" | "ContainerCreating" | "PodInitializing" | "NotReady" => "wait",
        s if s.starts_with("Init:") && !s.contains("Err") && !s.contains("BackOff") && !s.contains("Error") => "wait",
        "Terminating" => "term",
        "Unknown" => "unknown",
        _ => "bad",
    }
}
