//! `/openapi/v2`, `/openapi/v3` and one v3 document per group-version: the documents
//! `kubesim_api::openapi` builds (shared with the kubectl layer's `explain`). `/openapi/v2` is
//! only served as JSON (kubectl asks for protobuf and then falls back to its compiled-in
//! types).

use crate::http::{Request, Response};
use crate::status::Failure;
pub use kubesim_api::openapi::OpenApi;

/// `/openapi/...`.
pub fn handle(openapi: &OpenApi, rest: &[&str], req: &Request) -> Result<Response, Failure> {
    if req.method != "GET" && req.method != "HEAD" {
        return Err(Failure::method_not_allowed());
    }
    match rest {
        ["v2"] => {
            let accept = req.header("accept").unwrap_or("application/json");
            if accept.contains("json") || accept.contains("*/*") {
                Ok(Response::json(200, openapi.v2()))
            } else {
                Err(Failure::not_acceptable(accept))
            }
        }
        ["v3"] => Ok(Response::json(200, openapi.root())),
        ["v3", path @ ..] => {
            let key = path.join("/");
            openapi.document(&key).map(|d| Response::json(200, d)).ok_or_else(Failure::not_found_path)
        }
        _ => Err(Failure::not_found_path()),
    }
}
