//! `metav1.Status` responses with the API server's codes, reasons and messages
//! (staging/src/k8s.io/apimachinery/pkg/api/errors).

use crate::http::Response;
use kubesim_apiserver::ApiError;
use serde_json::{json, Value};

/// An error to answer with: the HTTP code, the reason, the message and Status details.
#[derive(Clone, Debug)]
pub struct Failure {
    /// HTTP status code (also `code` in the Status).
    pub code: u16,
    /// `metav1.StatusReason` (may be empty).
    pub reason: String,
    /// The message.
    pub message: String,
    /// `details` (name, group, kind, causes).
    pub details: Option<Value>,
    /// Extra response headers (`Retry-After`).
    pub headers: Vec<(String, String)>,
}

impl Failure {
    /// A failure with code, reason and message.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Failure {
        Failure { code, reason: reason.to_string(), message: message.into(), details: None, headers: Vec::new() }
    }
    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Failure {
        Failure::new(400, "BadRequest", message)
    }
    /// 404 for a path the server does not serve.
    pub fn not_found_path() -> Failure {
        Failure::new(404, "NotFound", "the server could not find the requested resource").with_details(json!({}))
    }
    /// 405.
    pub fn method_not_allowed() -> Failure {
        Failure::new(405, "MethodNotAllowed", "the server does not allow this method on the requested resource").with_details(json!({}))
    }
    /// 415.
    pub fn unsupported_media_type(content_type: &str) -> Failure {
        Failure::new(415, "UnsupportedMediaType", format!("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf; got {content_type:?}"))
    }
    /// 406.
    pub fn not_acceptable(accept: &str) -> Failure {
        Failure::new(
            406,
            "NotAcceptable",
            format!("only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf (got {accept:?})"),
        )
    }
    /// 413 RequestEntityTooLarge.
    pub fn too_large(limit: usize) -> Failure {
        Failure::new(413, "RequestEntityTooLarge", format!("Request entity too large: limit is {limit}"))
    }
    /// 429 TooManyRequests with Retry-After.
    pub fn too_many_requests(message: impl Into<String>) -> Failure {
        let mut f = Failure::new(429, "TooManyRequests", message);
        f.headers.push(("Retry-After".into(), "1".into()));
        f.details = Some(json!({ "retryAfterSeconds": 1 }));
        f
    }
    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Failure {
        Failure::new(500, "InternalError", format!("Internal error occurred: {}", message.into()))
    }
    /// With details.
    pub fn with_details(mut self, details: Value) -> Failure {
        self.details = Some(details);
        self
    }
    /// From the simulated API server's error, with the resource and name the request named.
    pub fn from_api(error: ApiError, group: &str, resource: &str, name: &str) -> Failure {
        let mut details = serde_json::Map::new();
        if !name.is_empty() {
            details.insert("name".into(), name.into());
        }
        if !group.is_empty() {
            details.insert("group".into(), group.into());
        }
        if !resource.is_empty() {
            details.insert("kind".into(), resource.into());
        }
        if error.code == 429 {
            details.insert("retryAfterSeconds".into(), 10.into());
        }
        // NewInvalid's details: the kind (not the resource) and one cause per field error,
        // which kubectl prints as `The Kind "name" is invalid: field: message`.
        if error.reason == "Invalid" {
            if let Some(invalid) = kubesim_kubectl::parse_invalid(&error.message) {
                details.insert("kind".into(), invalid.kind.into());
                if !invalid.group.is_empty() {
                    details.insert("group".into(), invalid.group.into());
                }
                if let Ok(name) = serde_json::from_str::<String>(invalid.quoted_name) {
                    details.insert("name".into(), name.into());
                }
                let causes: Vec<Value> = invalid
                    .causes
                    .into_iter()
                    .map(|cause| {
                        let (field, message) = cause.split_once(": ").unwrap_or(("", cause.as_str()));
                        let reason = match message.split(':').next().unwrap_or("") {
                            "Required value" => "FieldValueRequired",
                            "Unsupported value" => "FieldValueNotSupported",
                            "Duplicate value" => "FieldValueDuplicate",
                            "Forbidden" => "FieldValueForbidden",
                            "Not found" => "FieldValueNotFound",
                            "Too long" => "FieldValueTooLong",
                            "Too many" => "FieldValueTooMany",
                            "Internal error" => "InternalError",
                            _ => "FieldValueInvalid",
                        };
                        json!({ "reason": reason, "message": message, "field": field })
                    })
                    .collect();
                details.insert("causes".into(), Value::Array(causes));
            }
        }
        let mut f = Failure::new(error.code, error.reason, error.message);
        f.details = Some(Value::Object(details));
        if error.code == 429 {
            f.headers.push(("Retry-After".into(), "10".into()));
        }
        f
    }
    /// The Status object.
    pub fn status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        });
        if !self.reason.is_empty() {
            status["reason"] = self.reason.clone().into();
        }
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status["code"] = self.code.into();
        status
    }
    /// The HTTP response.
    pub fn response(&self) -> Response {
        let mut r = Response::json(self.code, &self.status());
        r.headers.extend(self.headers.iter().cloned());
        r
    }
}

/// A `Status` of success (bindings, evictions, deletes of collections).
pub fn success(code: u16, details: Option<Value>) -> Response {
    let mut status = json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success" });
    if let Some(d) = details {
        status["details"] = d;
    }
    status["code"] = code.into();
    Response::json(code, &status)
}
