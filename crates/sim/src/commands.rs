//! The bridge from the world to the kubectl command layer.

use crate::world::World;

/// Runs `kubectl <args>` against the world as actor "kubectl": (stdout, stderr, exit code).
pub fn kubectl(world: &mut World, args: &str) -> (String, String, i32) {
    let _ = world;
    (String::new(), format!("kubectl {args}: the kubectl command layer is not wired in yet"), 1)
}

use crate::scenario::ApplyOutcome;
use kubesim_api::object::{Object, Scope};

/// `kubectl apply` of one decoded object: create, or update if it exists.
pub fn apply_object(world: &mut World, file: &str, document: usize, mut object: Object) -> ApplyOutcome {
    let info = match object.info() {
        Some(info) => info,
        None => return ApplyOutcome::Failed(format!("error: {file}, document {document}: no matches for kind {:?} in version {:?}", object.kind(), object.api_version())),
    };
    if info.scope == Scope::Namespaced && object.namespace().is_empty() {
        object.metadata_mut().namespace = Some("default".into());
    }
    let display = format!("{}/{}", kind_display(info), object.name());
    let namespace = object.namespace().to_string();
    let name = object.name().to_string();
    let exists = !name.is_empty() && world.api().get(info, &namespace, &name).is_ok();
    let result = world.api_request("kubectl", |api, req| {
        if exists {
            let current = api.get(info, &namespace, &name)?;
            object.metadata_mut().resource_version = Some(current.resource_version().to_string());
            let updated = api.update(object, req)?;
            Ok((updated.resource_version() != current.resource_version(), false))
        } else {
            api.create(object, req).map(|_| (true, true))
        }
    });
    match result {
        Ok((_, true)) => ApplyOutcome::Applied(format!("{display} created")),
        Ok((true, false)) => ApplyOutcome::Applied(format!("{display} configured")),
        Ok((false, false)) => ApplyOutcome::Applied(format!("{display} unchanged")),
        Err(e) => ApplyOutcome::Failed(format!(
            "Error from server ({}): error when {} {file:?} (document {document}): {}",
            e.reason,
            if exists { "applying patch to" } else { "creating" },
            e.message
        )),
    }
}

/// `pod`, `deployment.apps`: how kubectl names a kind in its output.
pub fn kind_display(info: &kubesim_api::KindInfo) -> String {
    let kind = info.kind.to_ascii_lowercase();
    match info.group() {
        "" => kind,
        group => format!("{kind}.{group}"),
    }
}
