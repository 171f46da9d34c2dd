//! Share links: a URL that reopens the app at exactly this moment — the scenario, the seed,
//! the view, the virtual time, the selected pod or node, and everything the user applied or
//! ran (with the times they did it), which a deterministic replay turns into the very same
//! history. Parsed strictly as data, with size limits: a link that breaks a rule is ignored
//! whole, with the reason, never half-applied.

use crate::engine::{Input, Millis, TimedInput};
use serde_json::{json, Value};

/// The most an `inputs` parameter may hold (encoded characters).
pub const MAX_ENCODED: usize = 96 * 1024;
/// The most inputs a link carries.
pub const MAX_INPUTS: usize = 200;
/// The longest text one input may have (a manifest or a command line).
pub const MAX_TEXT: usize = 64 * 1024;
/// The latest virtual time a link may point at (a day).
pub const MAX_T_MS: Millis = 24 * 3_600_000;

/// base64url without padding (RFC 4648 §5).
fn base64url(bytes: &[u8]) -> String {
    kubesim_os::applets::hash::base64_encode(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

fn unbase64url(text: &str) -> Option<Vec<u8>> {
    if !text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return None;
    }
    let standard: String = text
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    let padded = format!("{standard}{}", "=".repeat((4 - standard.len() % 4) % 4));
    kubesim_os::applets::hash::base64_decode(padded.as_bytes())
}

/// The user's inputs as a link parameter: base64url of `[[t_ms, "a", name, yaml] | [t_ms, "c",
/// line], ...]`.
pub fn encode_inputs(inputs: &[TimedInput]) -> String {
    let list: Vec<Value> = inputs
        .iter()
        .map(|i| match &i.input {
            Input::Apply { name, text } => json!([i.t_ms, "a", name, text]),
            Input::Command(line) => json!([i.t_ms, "c", line]),
        })
        .collect();
    base64url(Value::Array(list).to_string().as_bytes())
}

/// Decodes an `inputs` parameter, checking every limit; the inputs come back marked as the
/// user's, in time order.
pub fn decode_inputs(text: &str) -> Result<Vec<TimedInput>, String> {
    if text.len() > MAX_ENCODED {
        return Err(format!("the inputs are {} characters long; a link may carry {MAX_ENCODED}", text.len()));
    }
    let bytes = unbase64url(text).ok_or("the inputs are not base64url")?;
    let json: Value = serde_json::from_slice(&bytes).map_err(|e| format!("the inputs are not JSON: {e}"))?;
    let list = json.as_array().ok_or("the inputs are not a list")?;
    if list.len() > MAX_INPUTS {
        return Err(format!("{} inputs; a link may carry {MAX_INPUTS}", list.len()));
    }
    let mut out = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let fields = item.as_array().ok_or_else(|| format!("input {i} is not a list"))?;
        let t_ms = fields.first().and_then(Value::as_u64).filter(|t| *t <= MAX_T_MS).ok_or_else(|| format!("input {i} has no valid time"))?;
        let text = |n: usize| -> Result<String, String> {
            let s = fields.get(n).and_then(Value::as_str).ok_or_else(|| format!("input {i} lacks field {n}"))?;
            if s.len() > MAX_TEXT {
                return Err(format!("input {i} is {} bytes long; at most {MAX_TEXT}", s.len()));
            }
            Ok(s.to_string())
        };
        let input = match (fields.get(1).and_then(Value::as_str), fields.len()) {
            (Some("a"), 4) => Input::Apply { name: text(2)?, text: text(3)? },
            (Some("c"), 3) => Input::Command(text(2)?),
            _ => return Err(format!("input {i} is neither an apply nor a command")),
        };
        out.push(TimedInput { t_ms, input, user: true });
    }
    kubesim_api::sort::sort_by_key(&mut out, |i| i.t_ms);
    Ok(out)
}

/// What a link selects: a pod (`pod/<namespace>/<name>`) or a node (`node/<name>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SharedSelection {
    /// A pod.
    Pod {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A node.
    Node(String),
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

impl SharedSelection {
    /// Parses `pod/ns/name` or `node/name` (DNS names only).
    pub fn parse(text: &str) -> Option<SharedSelection> {
        let parts: Vec<&str> = text.split('/').collect();
        match parts.as_slice() {
            ["pod", ns, name] if is_name(ns) && is_name(name) => Some(SharedSelection::Pod { namespace: ns.to_string(), name: name.to_string() }),
            ["node", name] if is_name(name) => Some(SharedSelection::Node(name.to_string())),
            _ => None,
        }
    }

    /// The parameter's value.
    pub fn text(&self) -> String {
        match self {
            SharedSelection::Pod { namespace, name } => format!("pod/{namespace}/{name}"),
            SharedSelection::Node(name) => format!("node/{name}"),
        }
    }
}

/// Parses a link's time: milliseconds (`t=12500`) or a duration (`t=12.5s`, `t=2m`).
pub fn parse_time(text: &str) -> Option<Millis> {
    let t = text.parse::<Millis>().ok().or_else(|| kubesim_api::time::parse_duration(text))?;
    (t <= MAX_T_MS).then_some(t)
}

/// Everything a link carries besides the start-up options, for building one.
pub struct Moment<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// Seed.
    pub seed: u64,
    /// View name (`network`).
    pub view: &'a str,
    /// Virtual time.
    pub t_ms: Millis,
    /// Selection.
    pub selection: Option<SharedSelection>,
    /// The user's inputs.
    pub inputs: Vec<TimedInput>,
    /// A fork being compared: when it branched and every user input of its history.
    pub fork: Option<(Millis, Vec<TimedInput>)>,
}

/// The link's query string (`?scenario=...&seed=...&view=...&t=...[&select=...][&inputs=...]
/// [&fork=...&fork-inputs=...]`).
pub fn query(moment: &Moment) -> String {
    let mut out = format!("?scenario={}&seed={}&view={}&t={}&autoplay=0", moment.scenario, moment.seed, moment.view, moment.t_ms);
    if let Some(selection) = &moment.selection {
        out.push_str(&format!("&select={}", selection.text()));
    }
    if !moment.inputs.is_empty() {
        out.push_str(&format!("&inputs={}", encode_inputs(&moment.inputs)));
    }
    if let Some((at_ms, inputs)) = &moment.fork {
        out.push_str(&format!("&fork={at_ms}"));
        if !inputs.is_empty() {
            out.push_str(&format!("&fork-inputs={}", encode_inputs(inputs)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Vec<TimedInput> {
        vec![
            TimedInput { t_ms: 5_000, input: Input::Command("kubectl scale deployment/nginx --replicas=5".into()), user: true },
            TimedInput {
                t_ms: 9_000,
                input: Input::Apply { name: "editor.yaml".into(), text: "apiVersion: v1\nkind: Pod\nmetadata: {name: é}\n".into() },
                user: true,
            },
        ]
    }

    #[test]
    fn inputs_round_trip() {
        let encoded = encode_inputs(&inputs());
        assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "URL-safe: {encoded}");
        assert_eq!(decode_inputs(&encoded), Ok(inputs()));
    }

    #[test]
    fn bad_links_are_refused_whole() {
        assert!(decode_inputs("not base64!").is_err());
        assert!(decode_inputs(&base64url(b"{\"a\":1}")).is_err(), "not a list");
        assert!(decode_inputs(&base64url(b"[[1,\"x\",\"y\"]]")).is_err(), "unknown kind");
        assert!(decode_inputs(&base64url(b"[[-1,\"c\",\"kubectl get pods\"]]")).is_err(), "negative time");
        assert!(decode_inputs(&base64url(format!("[[{},\"c\",\"x\"]]", MAX_T_MS + 1).as_bytes())).is_err(), "too late");
        let many = format!("[{}]", vec!["[1,\"c\",\"x\"]"; MAX_INPUTS + 1].join(","));
        assert!(decode_inputs(&base64url(many.as_bytes())).is_err(), "too many");
        let long = format!("[[1,\"c\",\"{}\"]]", "x".repeat(MAX_TEXT + 1));
        assert!(decode_inputs(&base64url(long.as_bytes())).is_err(), "too long");
        assert!(decode_inputs(&"A".repeat(MAX_ENCODED + 1)).is_err(), "too big");
    }

    #[test]
    fn selections_and_times_parse_strictly() {
        assert_eq!(SharedSelection::parse("pod/default/web-0"), Some(SharedSelection::Pod { namespace: "default".into(), name: "web-0".into() }));
        assert_eq!(SharedSelection::parse("node/node-1"), Some(SharedSelection::Node("node-1".into())));
        for bad in ["pod/default", "pod/Default/x", "node/<script>", "secret/default/x", "pod/a/b/c"] {
            assert_eq!(SharedSelection::parse(bad), None, "{bad}");
        }
        assert_eq!(parse_time("12500"), Some(12_500));
        assert_eq!(parse_time("12.5s"), Some(12_500));
        assert_eq!(parse_time("2m"), Some(120_000));
        assert_eq!(parse_time("48h"), None);
        assert_eq!(parse_time("soon"), None);
    }

    #[test]
    fn the_query_names_the_moment() {
        let moment = Moment {
            scenario: "nginx",
            seed: 7,
            view: "pods",
            t_ms: 42_000,
            selection: SharedSelection::parse("pod/default/web-0"),
            inputs: inputs(),
            fork: Some((7_000, inputs())),
        };
        let q = query(&moment);
        assert!(q.starts_with("?scenario=nginx&seed=7&view=pods&t=42000&autoplay=0&select=pod/default/web-0&inputs="), "{q}");
        assert!(q.contains(&format!("&fork=7000&fork-inputs={}", encode_inputs(&inputs()))), "{q}");
    }
}
