//! The JSONPath dialect of `kubectl get -o jsonpath=...` (k8s.io/client-go/util/jsonpath):
//! fields, `..` recursive descent, `[n]`, `[*]`, slices, `['key']`, filters `[?(@.a=="b")]`,
//! `{range ...}{end}` and quoted literals. Missing keys print nothing (kubectl's
//! allowMissingKeys).

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Text(String),
    Path(Vec<Step>),
    Range(Vec<Step>, Vec<Node>),
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    Recursive(String),
    Wildcard,
    Index(i64),
    Slice(Option<i64>, Option<i64>),
    Filter(Vec<Step>, Option<(String, Value)>),
    /// `['a', 'b']` / `[0, 2]` (client-go jsonpath UnionNode): each member over every input,
    /// the first member's results first (evalUnion).
    Union(Vec<Step>),
}

/// Evaluates a template against a value.
pub fn evaluate(template: &str, value: &Value) -> Result<String, String> {
    let nodes = parse_template(template)?;
    let mut out = String::new();
    render(&nodes, value, &mut out)?;
    Ok(out)
}

/// Evaluates a template collecting the selected values (`-o jsonpath-as-json`).
pub fn evaluate_values(template: &str, value: &Value) -> Result<Vec<Value>, String> {
    let nodes = parse_template(template)?;
    let mut out = Vec::new();
    collect(&nodes, value, &mut out);
    Ok(out)
}

fn collect(nodes: &[Node], value: &Value, out: &mut Vec<Value>) {
    for node in nodes {
        match node {
            Node::Text(_) => {}
            Node::Path(steps) => out.extend(eval(steps, value)),
            Node::Range(steps, body) => {
                for item in eval(steps, value) {
                    collect(body, &item, out);
                }
            }
        }
    }
}

fn render(nodes: &[Node], value: &Value, out: &mut String) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Path(steps) => {
                let results = eval(steps, value);
                let rendered: Vec<String> = results.iter().map(print_value).collect();
                out.push_str(&rendered.join(" "));
            }
            Node::Range(steps, body) => {
                for item in eval(steps, value) {
                    render(body, &item, out)?;
                }
            }
        }
    }
    Ok(())
}

fn print_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn parse_template(template: &str) -> Result<Vec<Node>, String> {
    let mut tokens: Vec<(bool, String)> = Vec::new(); // (is_expression, text)
    let chars: Vec<char> = template.chars().collect();
    let mut i = 0;
    let mut text = String::new();
    while i < chars.len() {
        if chars[i] == '{' {
            if !text.is_empty() {
                tokens.push((false, std::mem::take(&mut text)));
            }
            let mut depth = 0;
            let mut j = i;
            let mut in_quote: Option<char> = None;
            loop {
                if j >= chars.len() {
                    return Err(format!("error parsing jsonpath {template}, unclosed action"));
                }
                let c = chars[j];
                match in_quote {
                    Some(q) if c == q => in_quote = None,
                    Some(_) if c == '\\' => j += 1,
                    Some(_) => {}
                    None if c == '"' || c == '\'' => in_quote = Some(c),
                    None if c == '{' => depth += 1,
                    None if c == '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    None => {}
                }
                j += 1;
            }
            tokens.push((true, chars[i + 1..j].iter().collect()));
            i = j + 1;
        } else {
            text.push(chars[i]);
            i += 1;
        }
    }
    if !text.is_empty() {
        tokens.push((false, text));
    }
    let mut pos = 0;
    let nodes = build(&tokens, &mut pos, template)?;
    if pos < tokens.len() {
        return Err(format!("error parsing jsonpath {template}, not in range, nothing to end"));
    }
    Ok(nodes)
}

fn build(tokens: &[(bool, String)], pos: &mut usize, template: &str) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    while *pos < tokens.len() {
        let (is_expr, text) = &tokens[*pos];
        *pos += 1;
        if !is_expr {
            nodes.push(Node::Text(text.clone()));
            continue;
        }
        let expr = text.trim();
        if expr == "end" {
            *pos -= 1;
            return Ok(nodes);
        }
        if let Some(rest) = expr.strip_prefix("range ") {
            let steps = parse_path(rest.trim())?;
            let body = build(tokens, pos, template)?;
            if *pos >= tokens.len() || tokens[*pos].1.trim() != "end" {
                return Err(format!("error parsing jsonpath {template}, unclosed range"));
            }
            *pos += 1;
            nodes.push(Node::Range(steps, body));
            continue;
        }
        if (expr.starts_with('"') && expr.ends_with('"') && expr.len() >= 2) || (expr.starts_with('\'') && expr.ends_with('\'') && expr.len() >= 2) {
            nodes.push(Node::Text(unescape(&expr[1..expr.len() - 1])));
            continue;
        }
        nodes.push(Node::Path(parse_path(expr)?));
    }
    Ok(nodes)
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn parse_path(expr: &str) -> Result<Vec<Step>, String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    if chars.first() == Some(&'$') || chars.first() == Some(&'@') {
        i = 1;
    }
    // parser.go parseField/advance: a backslash escapes the next character (`a\.txt`), and
    // the field name drops every backslash.
    let ident_end = |from: usize| {
        let mut j = from;
        while j < chars.len() && chars[j] != '.' && chars[j] != '[' {
            j += if chars[j] == '\\' { 2 } else { 1 };
        }
        j.min(chars.len())
    };
    let field = |from: usize, to: usize| -> String { chars[from..to].iter().filter(|c| **c != '\\').collect() };
    while i < chars.len() {
        match chars[i] {
            '.' => {
                if chars.get(i + 1) == Some(&'.') {
                    let end = ident_end(i + 2);
                    steps.push(Step::Recursive(field(i + 2, end)));
                    i = end;
                } else {
                    let end = ident_end(i + 1);
                    let name = field(i + 1, end);
                    if name == "*" {
                        steps.push(Step::Wildcard);
                    } else if !name.is_empty() {
                        steps.push(Step::Field(name));
                    }
                    i = end;
                }
            }
            '[' => {
                let mut depth = 0;
                let mut j = i;
                let mut quote: Option<char> = None;
                loop {
                    if j >= chars.len() {
                        return Err(format!("unterminated array index in {expr}"));
                    }
                    let c = chars[j];
                    match quote {
                        Some(q) if c == q => quote = None,
                        Some(_) => {}
                        None if c == '"' || c == '\'' => quote = Some(c),
                        None if c == '[' => depth += 1,
                        None if c == ']' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        None => {}
                    }
                    j += 1;
                }
                let inner: String = chars[i + 1..j].iter().collect();
                steps.push(parse_bracket(inner.trim(), expr)?);
                i = j + 1;
            }
            _ => {
                let end = ident_end(i);
                steps.push(Step::Field(field(i, end)));
                i = end;
            }
        }
    }
    Ok(steps)
}

fn parse_bracket(inner: &str, expr: &str) -> Result<Step, String> {
    if inner == "*" {
        return Ok(Step::Wildcard);
    }
    if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        for op in ["==", "!="] {
            if let Some((lhs, rhs)) = filter.split_once(op) {
                let path = parse_path(lhs.trim())?;
                let rhs = rhs.trim();
                let value = if (rhs.starts_with('"') && rhs.ends_with('"')) || (rhs.starts_with('\'') && rhs.ends_with('\'')) {
                    Value::String(rhs[1..rhs.len() - 1].to_string())
                } else {
                    serde_json::from_str(rhs).unwrap_or(Value::String(rhs.to_string()))
                };
                return Ok(Step::Filter(path, Some((op.to_string(), value))));
            }
        }
        return Ok(Step::Filter(parse_path(filter.trim())?, None));
    }
    // A union: members separated by commas outside quotes.
    let mut members = Vec::new();
    let (mut quote, mut start) = (None::<char>, 0);
    for (i, c) in inner.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ',') => {
                members.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !members.is_empty() {
        members.push(inner[start..].trim());
        return members.into_iter().map(|m| parse_bracket(m, expr)).collect::<Result<Vec<_>, _>>().map(Step::Union);
    }
    if (inner.starts_with('\'') && inner.ends_with('\'')) || (inner.starts_with('"') && inner.ends_with('"')) {
        return Ok(Step::Field(inner[1..inner.len() - 1].to_string()));
    }
    if let Some((a, b)) = inner.split_once(':') {
        let parse = |s: &str| -> Result<Option<i64>, String> {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else {
                s.parse().map(Some).map_err(|_| format!("invalid array index {s} in {expr}"))
            }
        };
        let b = b.split(':').next().unwrap_or("");
        return Ok(Step::Slice(parse(a)?, parse(b)?));
    }
    inner.parse::<i64>().map(Step::Index).map_err(|_| format!("invalid array index {inner} in {expr}"))
}

fn eval(steps: &[Step], root: &Value) -> Vec<Value> {
    let mut current = vec![root.clone()];
    for step in steps {
        if let Step::Union(members) = step {
            let mut next = Vec::new();
            for member in members {
                for value in &current {
                    next.extend(eval(std::slice::from_ref(member), value));
                }
            }
            current = next;
            continue;
        }
        let mut next = Vec::new();
        for value in &current {
            match step {
                Step::Field(name) => {
                    if let Some(v) = value.get(name) {
                        next.push(v.clone());
                    }
                }
                Step::Recursive(name) => collect_recursive(value, name, &mut next),
                Step::Wildcard => match value {
                    Value::Array(items) => next.extend(items.iter().cloned()),
                    Value::Object(m) => next.extend(m.values().cloned()),
                    _ => {}
                },
                Step::Index(i) => {
                    if let Value::Array(items) = value {
                        let idx = if *i < 0 { items.len() as i64 + i } else { *i };
                        if idx >= 0 {
                            if let Some(v) = items.get(idx as usize) {
                                next.push(v.clone());
                            }
                        }
                    }
                }
                Step::Slice(a, b) => {
                    if let Value::Array(items) = value {
                        let len = items.len() as i64;
                        let norm = |x: i64| if x < 0 { (len + x).max(0) } else { x.min(len) };
                        let start = norm(a.unwrap_or(0));
                        let end = norm(b.unwrap_or(len));
                        if start < end {
                            next.extend(items[start as usize..end as usize].iter().cloned());
                        }
                    }
                }
                Step::Union(_) => unreachable!("evaluated above"),
                Step::Filter(path, cond) => {
                    let items: Vec<Value> = match value {
                        Value::Array(items) => items.clone(),
                        other => vec![other.clone()],
                    };
                    for item in items {
                        let found = eval(path, &item);
                        let keep = match cond {
                            None => !found.is_empty(),
                            Some((op, want)) => {
                                let matches = found.iter().any(|f| f == want || (f.is_number() && want.is_number() && f.as_f64() == want.as_f64()));
                                if op == "==" {
                                    matches
                                } else {
                                    !found.is_empty() && !matches
                                }
                            }
                        };
                        if keep {
                            next.push(item);
                        }
                    }
                }
            }
        }
        current = next;
    }
    current
}

fn collect_recursive(value: &Value, name: &str, out: &mut Vec<Value>) {
    match value {
        Value::Object(m) => {
            if name.is_empty() || name == "*" {
                out.push(value.clone());
            } else if let Some(v) = m.get(name) {
                out.push(v.clone());
            }
            for v in m.values() {
                collect_recursive(v, name, out);
            }
        }
        Value::Array(items) => {
            for v in items {
                collect_recursive(v, name, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // client-go jsonpath unions (UnionNode, evalUnion: each member over every input, in
    // member order), as "List All Container Images Running in a Cluster" uses them.
    #[test]
    fn unions_list_each_member_over_every_input() {
        let pods = json!({"items": [
            {"spec": {"initContainers": [{"image": "busybox:1.28"}], "containers": [{"image": "nginx:1.27"}]}},
            {"spec": {"containers": [{"image": "redis:7"}, {"image": "envoy:1"}]}},
        ]});
        assert_eq!(evaluate("{.items[*].spec['initContainers', 'containers'][*].image}", &pods).unwrap(), "busybox:1.28 nginx:1.27 redis:7 envoy:1");
        assert_eq!(evaluate("{.items[*].spec.containers[0, 1].image}", &pods).unwrap(), "nginx:1.27 redis:7 envoy:1");
    }

    // Mirrors client-go/util/jsonpath/jsonpath_test.go (TestJSONInput / TestKubernetes cases).
    #[test]
    fn evaluates_kubectl_jsonpath_templates() {
        let list = json!({"kind": "List", "items": [
            {"metadata": {"name": "a", "labels": {"app": "web"}}, "status": {"conditions": [{"type": "Ready", "status": "True"}], "capacity": {"cpu": "4"}}},
            {"metadata": {"name": "b"}, "status": {"conditions": [{"type": "Ready", "status": "False"}], "capacity": {"cpu": "8"}}}
        ]});
        let cases: &[(&str, &str)] = &[
            ("{.kind}", "List"),
            ("{.items[*].metadata.name}", "a b"),
            ("{.items[0].metadata.name}", "a"),
            ("{.items[-1].metadata.name}", "b"),
            ("{.items[0:1].metadata.name}", "a"),
            ("{range .items[*]}{.metadata.name}{\"\\n\"}{end}", "a\nb\n"),
            ("{range .items[*]}[{.metadata.name}, {.status.capacity.cpu}] {end}", "[a, 4] [b, 8] "),
            ("{.items[?(@.metadata.name==\"b\")].status.capacity.cpu}", "8"),
            ("{.items[*].status.conditions[?(@.type==\"Ready\")].status}", "True False"),
            ("{..name}", "a b"),
            ("{.items[0].metadata.labels}", "{\"app\":\"web\"}"),
            ("{.items[0].metadata.missing}", ""),
            ("name: {.items[1].metadata.name}", "name: b"),
            ("{.items[0].metadata.labels['app']}", "web"),
        ];
        for (template, want) in cases {
            assert_eq!(evaluate(template, &list).unwrap(), *want, "{template}");
        }
        assert_eq!(evaluate_values("{.items[*].metadata.name}", &list).unwrap(), vec![json!("a"), json!("b")]);
        // parser.go advance: `\.` keeps a dot inside a field name (ConfigMap keys, label keys).
        let cm = json!({"data": {"a.txt": "x"}, "metadata": {"labels": {"kubernetes.io/hostname": "n1"}}});
        assert_eq!(evaluate("{.data.a\\.txt}", &cm).unwrap(), "x");
        assert_eq!(evaluate("{.metadata.labels.kubernetes\\.io/hostname}", &cm).unwrap(), "n1");
        assert!(evaluate("{.items[", &list).is_err());
        assert!(evaluate("{range .items[*]}{.x}", &list).is_err());
        assert!(evaluate("{end}", &list).is_err());
    }
}
