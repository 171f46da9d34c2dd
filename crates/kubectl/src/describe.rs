//! `kubectl describe` (staging/src/k8s.io/kubectl/pkg/describe/describe.go).

use crate::args::Args;
use crate::Output;
use kubesim_api::k8s_openapi::api::core::v1::PodTemplateSpec;
use kubesim_apiserver::{ApiServer, Request};

/// `kubectl describe`.
pub fn run(_args: &Args, _api: &mut ApiServer, _req: &mut Request, _namespace: &str, out: &mut Output) {
    out.fail("error: describe is not implemented yet");
}

/// DescribePodTemplate.
pub fn pod_template(_template: &PodTemplateSpec) -> String {
    String::new()
}
