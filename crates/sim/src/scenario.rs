//! Loading input: multi-document YAML files applied at t=0 "as `kubectl apply -f` would", with
//! Nodes split out (they get kubelets) and errors collected per document.

use crate::world::World;
use kubesim_api::decode::{decode_document, parse_documents, unknown_fields, DecodeError};
use kubesim_api::k8s_openapi::api::core::v1::Node;
use kubesim_api::object::Object;

/// One input file.
#[derive(Clone, Debug)]
pub struct InputFile {
    /// Name as given (`-` for stdin).
    pub name: String,
    /// Its text.
    pub text: String,
}

/// The result of applying one document (or one object of a List).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyOutcome {
    /// kubectl's line, e.g. `pod/nginx created`.
    Applied(String),
    /// A warning (unknown fields), kubectl style.
    Warning(String),
    /// The document failed: the full error line.
    Failed(String),
}

/// Decoded input, in order.
#[derive(Debug, Default)]
pub struct Decoded {
    /// Nodes, which replace the default cluster.
    pub nodes: Vec<Node>,
    /// Everything else, in file and document order, with where it came from.
    pub objects: Vec<(String, usize, Object, Vec<String>)>,
    /// Documents that failed to decode.
    pub errors: Vec<DecodeError>,
}

/// Decodes every file; never panics, never stops at the first error.
pub fn decode_inputs(files: &[InputFile]) -> Decoded {
    let mut decoded = Decoded::default();
    for file in files {
        let (documents, mut errors) = parse_documents(&file.name, &file.text);
        for document in &documents {
            match decode_document(&file.name, document) {
                Ok(objects) => {
                    for object in objects {
                        let warnings = unknown_fields(&document.value, &object);
                        match object {
                            Object::Node(node) => decoded.nodes.push(*node),
                            other => decoded.objects.push((file.name.clone(), document.index, other, warnings)),
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        decoded.errors.extend(errors);
    }
    decoded
}

/// Applies decoded objects with `kubectl apply` semantics (re-encoded per object).
pub fn apply_objects(world: &mut World, objects: Vec<(String, usize, Object, Vec<String>)>) -> Vec<ApplyOutcome> {
    let mut outcomes = Vec::new();
    for (file, index, object, _) in objects {
        let text = kubesim_api::decode::to_yaml(&object.to_json());
        outcomes.extend(crate::commands::apply_file(world, &format!("{file}#{index}"), &text));
    }
    outcomes
}
