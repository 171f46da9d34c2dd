//! Decoding multi-document Kubernetes YAML into [`Object`]s with errors that name the file, the
//! document, the line and the field path, the way kubectl reports them. Never panics.
//!
//! All YAML handling in kubesim goes through this module (and [`to_yaml`]), so the YAML crate
//! could be swapped in one place.

use crate::object::{kind_info, Object};
use std::fmt;

/// Inputs larger than this are rejected before parsing (bounded time and memory).
pub const MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;

/// One document of a YAML stream, decoded to JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// 1-based index of the document within its file.
    pub index: usize,
    /// 1-based line where the document starts.
    pub line: usize,
    /// The document's content.
    pub value: serde_json::Value,
}

/// Why a document could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// The file name as given (`-` for stdin).
    pub file: String,
    /// 1-based document index, if the error is inside one document.
    pub document: Option<usize>,
    /// 1-based line (and column) of the error, where known.
    pub line: Option<usize>,
    /// 1-based column.
    pub column: Option<usize>,
    /// The field path (`spec.replicas`), where the error concerns one field.
    pub field_path: Option<String>,
    /// The message, in kubectl's / the API server's words.
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.file)?;
        if let Some(document) = self.document {
            write!(f, ", document {document}")?;
        }
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(f, ", line {line}, column {column}")?,
            (Some(line), None) => write!(f, ", line {line}")?,
            _ => {}
        }
        write!(f, ": ")?;
        if let Some(path) = &self.field_path {
            write!(f, "{path}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for DecodeError {}

/// Splits a YAML stream into documents. Syntax errors stop the stream (as kubectl does) and are
/// returned after the documents that parsed before them.
pub fn parse_documents(file: &str, text: &str) -> (Vec<Document>, Vec<DecodeError>) {
    let mut documents = Vec::new();
    let mut errors = Vec::new();
    if text.len() > MAX_INPUT_BYTES {
        errors.push(DecodeError {
            file: file.to_string(),
            document: None,
            line: None,
            column: None,
            field_path: None,
            message: format!("input is {} bytes; kubesim accepts at most {} bytes per file", text.len(), MAX_INPUT_BYTES),
        });
        return (documents, errors);
    }
    let starts = document_start_lines(text);
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let index = i + 1;
        let line = starts.get(i).copied().unwrap_or(1);
        let value: serde_yaml::Value = match serde::Deserialize::deserialize(de) {
            Ok(value) => value,
            Err(err) => {
                let location = err.location();
                errors.push(DecodeError {
                    file: file.to_string(),
                    document: Some(index),
                    line: location.as_ref().map(|l| l.line()),
                    column: location.as_ref().map(|l| l.column()),
                    field_path: None,
                    message: format!("error converting YAML to JSON: {}", strip_location(&err.to_string())),
                });
                break;
            }
        };
        if value.is_null() {
            continue; // empty documents (`---` alone, comments only) are skipped, as kubectl does
        }
        match yaml_to_json(value, "") {
            Ok(value) => documents.push(Document { index, line, value }),
            Err((path, message)) => errors.push(DecodeError {
                file: file.to_string(),
                document: Some(index),
                line: Some(line),
                column: None,
                field_path: Some(path).filter(|p| !p.is_empty()),
                message,
            }),
        }
    }
    (documents, errors)
}

/// Decodes one document into objects (a `v1 List` yields its items), checking apiVersion and
/// kind against the API server's kinds and every field against the kind's schema.
pub fn decode_document(file: &str, document: &Document) -> Result<Vec<Object>, DecodeError> {
    let error = |field_path: Option<String>, message: String| DecodeError {
        file: file.to_string(),
        document: Some(document.index),
        line: Some(document.line),
        column: None,
        field_path,
        message,
    };
    let map = document.value.as_object().ok_or_else(|| {
        error(None, format!("error unmarshaling JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}", json_type(&document.value)))
    })?;
    let api_version = match map.get("apiVersion") {
        Some(serde_json::Value::String(s)) if !s.is_empty() => s.as_str(),
        Some(serde_json::Value::String(_)) | None => {
            return Err(error(None, "Object 'apiVersion' is missing in the document".to_string()));
        }
        Some(_) => return Err(error(Some("apiVersion".into()), "must be a string".to_string())),
    };
    let kind = match map.get("kind") {
        Some(serde_json::Value::String(s)) if !s.is_empty() => s.as_str(),
        Some(serde_json::Value::String(_)) | None => {
            return Err(error(None, "Object 'Kind' is missing in the document".to_string()));
        }
        Some(_) => return Err(error(Some("kind".into()), "must be a string".to_string())),
    };
    if kind == "List" && api_version == "v1" {
        let items = map.get("items").and_then(|i| i.as_array()).cloned().unwrap_or_default();
        let mut objects = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            let inner = Document { index: document.index, line: document.line, value: item };
            let decoded = decode_document(file, &inner).map_err(|mut e| {
                e.field_path = Some(format!("items[{i}]{}", e.field_path.map(|p| format!(".{p}")).unwrap_or_default()));
                e
            })?;
            objects.extend(decoded);
        }
        return Ok(objects);
    }
    let info = kind_info(api_version, kind).ok_or_else(|| {
        error(None, format!("resource mapping not found for name: {:?} namespace: {:?} from {:?}: no matches for kind {:?} in version {:?}\nensure CRDs are installed first",
            map.get("metadata").and_then(|m| m.get("name")).and_then(|n| n.as_str()).unwrap_or(""),
            map.get("metadata").and_then(|m| m.get("namespace")).and_then(|n| n.as_str()).unwrap_or(""),
            file, kind, api_version))
    })?;
    let object = Object::from_json(info, document.value.clone()).map_err(|e| {
        let path = if e.path == "." { None } else { Some(e.path) };
        error(path, format!("{} in version {:?} cannot be handled as a {}: {}", kind, api_version.rsplit('/').next().unwrap_or(api_version), kind, e.message))
    })?;
    Ok(vec![object])
}

/// Unknown fields in a document (`spec.foo`), as kubectl's strict field validation warns about
/// them: every path present in the input but absent once decoded and re-encoded.
pub fn unknown_fields(input: &serde_json::Value, decoded: &Object) -> Vec<String> {
    let mut unknown = Vec::new();
    collect_unknown(input, &decoded.to_json(), String::new(), &mut unknown);
    unknown
}

fn collect_unknown(input: &serde_json::Value, kept: &serde_json::Value, path: String, out: &mut Vec<String>) {
    match (input, kept) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (key, value) in a {
                let child = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                match b.get(key) {
                    Some(kept_value) => collect_unknown(value, kept_value, child, out),
                    None if value.is_null() || is_empty_container(value) => {}
                    None => out.push(child),
                }
            }
        }
        (serde_json::Value::Array(a), serde_json::Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                collect_unknown(x, y, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn is_empty_container(value: &serde_json::Value) -> bool {
    matches!(value, serde_json::Value::Object(m) if m.is_empty()) || matches!(value, serde_json::Value::Array(a) if a.is_empty())
}

/// Serializes a JSON value as block-style YAML (`kubectl get -o yaml`).
pub fn to_yaml(value: &serde_json::Value) -> String {
    serde_yaml::to_string(value).unwrap_or_else(|e| format!("# cannot render YAML: {e}\n"))
}

fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// 1-based line of the first content of each document (documents with no content are skipped,
/// as the parser skips them).
fn document_start_lines(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut current: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed.starts_with("--- ") {
            if let Some(start) = current.take() {
                starts.push(start);
            }
            let inline = trimmed[3..].trim();
            if !inline.is_empty() && !inline.starts_with('#') {
                current = Some(i + 1);
            }
            continue;
        }
        let content = trimmed.trim_start();
        if current.is_none() && !content.is_empty() && !content.starts_with('#') && content != "..." {
            current = Some(i + 1);
        }
    }
    starts.extend(current);
    starts
}

fn yaml_to_json(value: serde_yaml::Value, path: &str) -> Result<serde_json::Value, (String, String)> {
    use serde_json::Value as J;
    use serde_yaml::Value as Y;
    Ok(match value {
        Y::Null => J::Null,
        Y::Bool(b) => J::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                J::from(i)
            } else if let Some(u) = n.as_u64() {
                J::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f).map(J::Number).ok_or_else(|| (path.to_string(), format!("invalid number {f}: not representable in JSON")))?
            }
        }
        Y::String(s) => J::String(s),
        Y::Sequence(items) => J::Array(items.into_iter().enumerate().map(|(i, item)| yaml_to_json(item, &format!("{path}[{i}]"))).collect::<Result<_, _>>()?),
        Y::Mapping(map) => {
            let mut out = serde_json::Map::new();
            for (key, value) in map {
                let key = match key {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    other => {
                        return Err((path.to_string(), format!("error converting YAML to JSON: unsupported map key {:?}", other)));
                    }
                };
                let child = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                let value = yaml_to_json(value, &child)?;
                out.insert(key, value);
            }
            J::Object(out)
        }
        Y::Tagged(tagged) => {
            return Err((path.to_string(), format!("error converting YAML to JSON: unsupported tag {}", tagged.tag)));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_get_their_index_and_start_line() {
        let text = "# comment\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n";
        let (docs, errors) = parse_documents("ns.yaml", text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(docs.len(), 2);
        assert_eq!((docs[0].index, docs[0].line), (1, 2));
        assert_eq!((docs[1].index, docs[1].line), (2, 6));
    }

    #[test]
    fn syntax_errors_name_file_document_line_and_column() {
        let text = "apiVersion: v1\nkind: Pod\n---\nmetadata:\n  name: [unclosed\n";
        let (docs, errors) = parse_documents("bad.yaml", text);
        assert_eq!(docs.len(), 1);
        assert_eq!(errors.len(), 1);
        let e = &errors[0];
        assert_eq!(e.document, Some(2));
        assert!(e.line.is_some());
        assert!(e.to_string().starts_with("error: bad.yaml, document 2, line "), "{e}");
    }

    #[test]
    fn unknown_kinds_are_rejected_like_kubectl() {
        let (docs, _) = parse_documents("x.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n");
        let err = decode_document("x.yaml", &docs[0]).unwrap_err();
        assert!(err.message.contains("no matches for kind \"Widget\" in version \"example.com/v1\""), "{}", err.message);
    }

    #[test]
    fn wrong_types_name_the_field_path() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: three\n  selector: {}\n  template: {}\n";
        let (docs, _) = parse_documents("d.yaml", text);
        let err = decode_document("d.yaml", &docs[0]).unwrap_err();
        assert_eq!(err.field_path.as_deref(), Some("spec.replicas"));
        assert!(
            err.to_string().contains(
                "d.yaml, document 1, line 1: spec.replicas: Deployment in version \"v1\" cannot be handled as a Deployment: invalid type: string \"three\""
            ),
            "{err}"
        );
    }

    #[test]
    fn missing_kind_and_non_mapping_documents_are_reported() {
        let (docs, _) = parse_documents("m.yaml", "apiVersion: v1\nmetadata: {name: x}\n---\n- a\n- b\n");
        assert!(decode_document("m.yaml", &docs[0]).unwrap_err().message.contains("'Kind' is missing"));
        assert!(decode_document("m.yaml", &docs[1]).unwrap_err().message.contains("cannot unmarshal array"));
    }

    #[test]
    fn alias_bombs_fail_with_a_clear_error_in_bounded_time() {
        let mut text = String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        let mut prev = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
            text.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
            prev = name;
        }
        let (docs, errors) = parse_documents("bomb.yaml", &text);
        assert!(docs.is_empty());
        assert_eq!(errors.len(), 1, "{errors:?}");
    }

    #[test]
    fn unknown_fields_are_listed_by_path() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containerz: []\n  containers: [{name: c, image: nginx, imagePolicy: x}]\n";
        let (docs, _) = parse_documents("p.yaml", text);
        let obj = decode_document("p.yaml", &docs[0]).unwrap().remove(0);
        assert_eq!(unknown_fields(&docs[0].value, &obj), vec!["spec.containers[0].imagePolicy".to_string()]);
    }
}
