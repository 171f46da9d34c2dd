//! `kubectl logs` as the kubelet answers it: which attempt's log a request reads, from the
//! pod's container statuses (kubelet_pods.go validateContainerLogStatus).

use kubesim_api::k8s_openapi::api::core::v1::Pod;

/// validateContainerLogStatus: the runtime ID of the container whose log a request for
/// `container` reads, or the kubelet's error (`container "c" in pod "p" is waiting to start:
/// PodInitializing`, ...).
pub fn validate_container_log_status(pod: &Pod, container: &str, previous: bool) -> Result<String, String> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let status = pod.status.as_ref();
    let found = status.and_then(|s| {
        s.container_statuses
            .iter()
            .flatten()
            .chain(s.init_container_statuses.iter().flatten())
            .chain(s.ephemeral_container_statuses.iter().flatten())
            .find(|c| c.name == container)
    });
    let Some(c) = found else { return Err(format!("container {container:?} in pod {name:?} is not available")) };
    let last = c.last_state.as_ref().and_then(|s| s.terminated.as_ref());
    let state = c.state.as_ref();
    let (waiting, running, terminated) =
        (state.and_then(|s| s.waiting.as_ref()), state.and_then(|s| s.running.as_ref()), state.and_then(|s| s.terminated.as_ref()));
    let has_id = |id: &Option<String>| id.as_deref().is_some_and(|i| !i.is_empty());
    let runtime_id = |id: &Option<String>| id.as_deref().map(|i| i.split_once("://").map_or(i, |(_, rest)| rest).to_string()).unwrap_or_default();
    if previous {
        return match last {
            Some(t) if has_id(&t.container_id) => Ok(runtime_id(&t.container_id)),
            _ => Err(format!("previous terminated container {container:?} in pod {name:?} not found")),
        };
    }
    if running.is_some() {
        return Ok(runtime_id(&c.container_id));
    }
    if let Some(t) = terminated {
        return match (has_id(&t.container_id), last) {
            (true, _) => Ok(runtime_id(&t.container_id)),
            (false, Some(l)) if has_id(&l.container_id) => Ok(runtime_id(&l.container_id)),
            _ => Err(format!("container {container:?} in pod {name:?} is terminated")),
        };
    }
    if let Some(l) = last {
        return if has_id(&l.container_id) { Ok(runtime_id(&l.container_id)) } else { Err(format!("container {container:?} in pod {name:?} is terminated")) };
    }
    match waiting.and_then(|w| w.reason.as_deref()) {
        Some("ErrImagePull") => Err(format!("container {container:?} in pod {name:?} is waiting to start: image can't be pulled")),
        Some("ImagePullBackOff") => Err(format!("container {container:?} in pod {name:?} is waiting to start: trying and failing to pull image")),
        Some(reason) => Err(format!("container {container:?} in pod {name:?} is waiting to start: {reason}")),
        None if waiting.is_some() => Err(format!("container {container:?} in pod {name:?} is waiting to start: ")),
        None => Err(format!("container {container:?} in pod {name:?} is waiting to start - no logs yet")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(status: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({"metadata": {"name": "p"}, "status": status})).unwrap()
    }

    /// Cases of kubelet_pods_test.go TestValidateContainerLogStatus, by state.
    #[test]
    fn validate_container_log_status_cases() {
        let cases: Vec<(serde_json::Value, bool, Result<String, String>)> = vec![
            (
                serde_json::json!({"containerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": true, "restartCount": 0, "containerID": "containerd://1", "state": {"running": {}}}]}),
                false,
                Ok("1".into()),
            ),
            (
                serde_json::json!({"containerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": false, "restartCount": 1, "state": {"running": {}}, "lastState": {"terminated": {"exitCode": 1, "containerID": "containerd://0"}}}]}),
                true,
                Ok("0".into()),
            ),
            (
                serde_json::json!({"containerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": false, "restartCount": 0, "state": {"running": {}}}]}),
                true,
                Err("previous terminated container \"c\" in pod \"p\" not found".into()),
            ),
            (
                serde_json::json!({"containerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": false, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": {"terminated": {"exitCode": 1, "containerID": "containerd://0"}}}]}),
                false,
                Ok("0".into()),
            ),
            (
                serde_json::json!({"containerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ErrImagePull"}}}]}),
                false,
                Err("container \"c\" in pod \"p\" is waiting to start: image can't be pulled".into()),
            ),
            (
                serde_json::json!({"containerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}),
                false,
                Err("container \"c\" in pod \"p\" is waiting to start: trying and failing to pull image".into()),
            ),
            (
                serde_json::json!({"initContainerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}]}),
                false,
                Err("container \"c\" in pod \"p\" is waiting to start: PodInitializing".into()),
            ),
            (
                serde_json::json!({"containerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}]}),
                false,
                Err("container \"c\" in pod \"p\" is terminated".into()),
            ),
            (serde_json::json!({"containerStatuses": []}), false, Err("container \"c\" in pod \"p\" is not available".into())),
        ];
        for (i, (status, previous, want)) in cases.into_iter().enumerate() {
            assert_eq!(validate_container_log_status(&pod(status), "c", previous), want, "case {i}");
        }
    }
}
