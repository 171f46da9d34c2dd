//! API errors, shaped like `metav1.Status` with the API server's reasons and messages.

use std::fmt;

/// An API error (HTTP status, reason, message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `metav1.StatusReason` (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, ...).
    pub reason: &'static str,
    /// The message, exactly as the API server words it.
    pub message: String,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

/// Result alias for API calls.
pub type Result<T, E = ApiError> = std::result::Result<T, E>;

impl ApiError {
    /// 500 `Internal error occurred: <message>` (errors.NewInternalError).
    pub fn internal(message: impl std::fmt::Display) -> ApiError {
        ApiError { code: 500, reason: "InternalError", message: format!("Internal error occurred: {message}") }
    }

    /// 404 `<resource> "<name>" not found`.
    pub fn not_found(qualified_resource: &str, name: &str) -> ApiError {
        ApiError { code: 404, reason: "NotFound", message: format!("{qualified_resource} {name:?} not found") }
    }
    /// 409 `<resource> "<name>" already exists`.
    pub fn already_exists(qualified_resource: &str, name: &str) -> ApiError {
        ApiError { code: 409, reason: "AlreadyExists", message: format!("{qualified_resource} {name:?} already exists") }
    }
    /// 409 Conflict for a stale resourceVersion.
    pub fn conflict(qualified_resource: &str, name: &str) -> ApiError {
        ApiError {
            code: 409,
            reason: "Conflict",
            message: format!("Operation cannot be fulfilled on {qualified_resource} {name:?}: the object has been modified; please apply your changes to the latest version and try again"),
        }
    }
    /// 409 Conflict with a custom explanation.
    pub fn conflict_with(qualified_resource: &str, name: &str, why: &str) -> ApiError {
        ApiError { code: 409, reason: "Conflict", message: format!("Operation cannot be fulfilled on {qualified_resource} {name:?}: {why}") }
    }
    /// 422 Invalid.
    pub fn invalid(message: String) -> ApiError {
        ApiError { code: 422, reason: "Invalid", message }
    }
    /// 400 BadRequest.
    pub fn bad_request(message: String) -> ApiError {
        ApiError { code: 400, reason: "BadRequest", message }
    }
    /// 403 Forbidden: `<resource> "<name>" is forbidden: <why>`.
    pub fn forbidden(qualified_resource: &str, name: &str, why: &str) -> ApiError {
        ApiError { code: 403, reason: "Forbidden", message: format!("{qualified_resource} {name:?} is forbidden: {why}") }
    }
    /// 429 TooManyRequests (evictions blocked by a PodDisruptionBudget).
    pub fn too_many_requests(message: String) -> ApiError {
        ApiError { code: 429, reason: "TooManyRequests", message }
    }
    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(message: String) -> ApiError {
        ApiError { code: 405, reason: "MethodNotAllowed", message }
    }
}
