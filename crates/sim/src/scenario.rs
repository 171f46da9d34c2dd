//! Input files and their decoding (documents to objects, Nodes split out, errors collected per
//! document). Applying them is the loader's job ([`crate::loader`]).

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
