//! Label selectors: matching `LabelSelector` objects and parsing kubectl's `-l` strings
//! (equality- and set-based), after apimachinery/pkg/labels/selector.go.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use std::collections::BTreeMap;

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// `key=value`, `key==value`, `key in (a,b)`.
    In(String, Vec<String>),
    /// `key!=value`, `key notin (a,b)` (also true when the key is absent).
    NotIn(String, Vec<String>),
    /// `key`.
    Exists(String),
    /// `!key`.
    DoesNotExist(String),
}

/// A parsed selector: all requirements must hold. The empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    /// The requirements, ANDed.
    pub requirements: Vec<Requirement>,
    /// A `LabelSelector` that can never match (an invalid operator).
    pub matches_nothing: bool,
}

impl Selector {
    /// The selector a `LabelSelector` stands for (`metav1.LabelSelectorAsSelector`).
    pub fn from_label_selector(selector: &LabelSelector) -> Selector {
        let mut requirements = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            requirements.push(Requirement::In(key.clone(), vec![value.clone()]));
        }
        let mut matches_nothing = false;
        for expr in selector.match_expressions.iter().flatten() {
            let values = expr.values.clone().unwrap_or_default();
            requirements.push(match expr.operator.as_str() {
                "In" => Requirement::In(expr.key.clone(), values),
                "NotIn" => Requirement::NotIn(expr.key.clone(), values),
                "Exists" => Requirement::Exists(expr.key.clone()),
                "DoesNotExist" => Requirement::DoesNotExist(expr.key.clone()),
                _ => {
                    matches_nothing = true;
                    continue;
                }
            });
        }
        Selector { requirements, matches_nothing }
    }

    /// The equality selector of a label map (a Service's or ReplicationController's selector).
    pub fn from_map(labels: &BTreeMap<String, String>) -> Selector {
        Selector { requirements: labels.iter().map(|(k, v)| Requirement::In(k.clone(), vec![v.clone()])).collect(), matches_nothing: false }
    }

    /// Parses kubectl's `-l` syntax: `app=web,tier!=db,env in (a,b),!legacy,release`.
    pub fn parse(text: &str) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(part)?);
        }
        Ok(Selector { requirements, matches_nothing: false })
    }

    /// Whether the labels satisfy every requirement.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        if self.matches_nothing {
            return false;
        }
        let empty = BTreeMap::new();
        let labels = labels.unwrap_or(&empty);
        self.requirements.iter().all(|req| match req {
            Requirement::In(key, values) => labels.get(key).is_some_and(|v| values.contains(v)),
            Requirement::NotIn(key, values) => labels.get(key).is_none_or(|v| !values.contains(v)),
            Requirement::Exists(key) => labels.contains_key(key),
            Requirement::DoesNotExist(key) => !labels.contains_key(key),
        })
    }

    /// Whether this selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty() && !self.matches_nothing
    }
}

fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(key.trim().to_string()));
    }
    for (op, negate) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((key, value)) = part.split_once(op) {
            let key = key.trim().to_string();
            let value = vec![value.trim().to_string()];
            return Ok(if negate { Requirement::NotIn(key, value) } else { Requirement::In(key, value) });
        }
    }
    for (op, negate) in [(" notin ", true), (" in ", false)] {
        if let Some((key, values)) = part.split_once(op) {
            let values = values.trim();
            let inner = values
                .strip_prefix('(')
                .and_then(|v| v.strip_suffix(')'))
                .ok_or_else(|| format!("unable to parse requirement: found '{values}', expected: '('"))?;
            let values = inner.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
            let key = key.trim().to_string();
            return Ok(if negate { Requirement::NotIn(key, values) } else { Requirement::In(key, values) });
        }
    }
    if part.contains(char::is_whitespace) {
        return Err(format!("unable to parse requirement: invalid label key \"{part}\""));
    }
    Ok(Requirement::Exists(part.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    // Mirrors apimachinery/pkg/labels/selector_test.go (TestSelectorMatches).
    #[test]
    fn string_selectors_match_like_apimachinery() {
        let l = labels(&[("x", "y"), ("z", "w")]);
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("x=y", true),
            ("x=y,z=w", true),
            ("x!=z", true),
            ("x", true),
            ("!a", true),
            ("x in (y,q)", true),
            ("x notin (q)", true),
            ("a notin (q)", true),
            ("x=z", false),
            ("x=y,z=q", false),
            ("!x", false),
            ("a", false),
            ("x in (q)", false),
            ("x notin (y)", false),
        ];
        for (text, want) in cases {
            let sel = Selector::parse(text).unwrap();
            assert_eq!(sel.matches(Some(&l)), *want, "{text}");
        }
    }

    #[test]
    fn label_selector_objects_match_labels_and_expressions() {
        let sel = LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            match_expressions: Some(vec![LabelSelectorRequirement { key: "tier".into(), operator: "In".into(), values: Some(vec!["frontend".into()]) }]),
        };
        let sel = Selector::from_label_selector(&sel);
        assert!(sel.matches(Some(&labels(&[("app", "web"), ("tier", "frontend")]))));
        assert!(!sel.matches(Some(&labels(&[("app", "web")]))));
        assert!(Selector::from_label_selector(&LabelSelector::default()).matches(None));
    }
}

/// A field selector (`metadata.name=x,status.phase!=Running`), as the API server supports per
/// kind (pods: metadata.*, spec.nodeName, spec.schedulerName, spec.restartPolicy,
/// spec.serviceAccountName, status.phase, status.podIP, status.nominatedNodeName; events:
/// involvedObject.*, reason, type, source; nodes: spec.unschedulable; every kind:
/// metadata.name and metadata.namespace).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// (field, value, equal?) requirements, ANDed.
    pub requirements: Vec<(String, String, bool)>,
}

impl FieldSelector {
    /// Parses `a=b,c==d,e!=f`.
    pub fn parse(text: &str) -> Result<FieldSelector, String> {
        let mut requirements = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, value, equal) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, true)
            } else {
                return Err(format!("invalid selector: '{text}'; can't understand '{part}'"));
            };
            requirements.push((field.trim().to_string(), value.trim().to_string(), equal));
        }
        Ok(FieldSelector { requirements })
    }

    /// The value of a supported field of an object, or an error naming the unsupported field
    /// (`field label not supported: foo`).
    pub fn field_value(object: &crate::Object, field: &str) -> Result<String, String> {
        let json = || object.to_json();
        let text = |v: Option<&serde_json::Value>| v.map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).unwrap_or_default();
        let value = match (object.kind(), field) {
            (_, "metadata.name") => object.name().to_string(),
            (_, "metadata.namespace") => object.namespace().to_string(),
            ("Pod", "spec.nodeName") => object.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.clone()).unwrap_or_default(),
            ("Pod", "status.phase") => object.as_pod().and_then(|p| p.status.as_ref()).and_then(|s| s.phase.clone()).unwrap_or_default(),
            ("Pod", f @ ("spec.schedulerName" | "spec.restartPolicy" | "spec.serviceAccountName" | "status.podIP" | "status.nominatedNodeName")) => {
                text(json().pointer(&format!("/{}", f.replace('.', "/"))))
            }
            ("Event", f) if f.starts_with("involvedObject.") || f == "reason" || f == "type" || f == "reportingComponent" => {
                text(json().pointer(&format!("/{}", f.replace('.', "/"))))
            }
            ("Event", "source") => text(json().pointer("/source/component")),
            ("Node", "spec.unschedulable") => object.as_node().and_then(|n| n.spec.as_ref()).and_then(|s| s.unschedulable).unwrap_or(false).to_string(),
            ("Namespace", "status.phase") => text(json().pointer("/status/phase")),
            ("Secret", "type") => text(json().pointer("/type")),
            _ => return Err(format!("field label not supported: {field}")),
        };
        Ok(value)
    }

    /// Whether the object satisfies every requirement (unsupported fields are errors).
    pub fn matches(&self, object: &crate::Object) -> Result<bool, String> {
        for (field, value, equal) in &self.requirements {
            let actual = FieldSelector::field_value(object, field)?;
            if (actual == *value) != *equal {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The value required for `spec.nodeName`, if the selector pins one (index lookups).
    pub fn node_name(&self) -> Option<&str> {
        self.requirements.iter().find(|(f, _, eq)| f == "spec.nodeName" && *eq).map(|(_, v, _)| v.as_str())
    }
}
