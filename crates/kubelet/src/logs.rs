//! `kubectl logs` as the kubelet answers it: which attempt's log a request reads, from the
//! pod's container statuses (kubelet_pods.go validateContainerLogStatus), and what it writes
//! back from the runtime's log (kuberuntime/logs/logs.go ReadLogs).

use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::podlog::PodLogOptions;
use kubesim_api::Millis;
use kubesim_host::container::LogBuffer;

/// ReadLogs: a container's log lines as the kubelet serves them for `opts` at `now` — the last
/// `tailLines` lines, those before `sinceSeconds`/`sinceTime` left out, each prefixed with its
/// timestamp when asked, cut at `limitBytes`.
pub fn read_logs(lines: &LogBuffer, opts: &PodLogOptions, now: Millis) -> String {
    let since = match (opts.since_time, opts.since_seconds) {
        (Some(t), _) => Some(t),
        (None, Some(s)) => Some(now.saturating_sub((s.max(0) as u64).saturating_mul(1000))),
        (None, None) => None,
    };
    let mut out = String::new();
    for line in lines.tail(opts.tail_lines.unwrap_or(usize::MAX)) {
        if since.is_some_and(|s| line.t_ms < s) {
            continue;
        }
        if opts.timestamps {
            // logs.go timeFormatOut = RFC3339NanoFixed.
            out.push_str(&kubesim_api::time::rfc3339_nano_fixed(line.t_ms));
            out.push(' ');
        }
        out.push_str(&line.text);
        out.push('\n');
        if opts.limit_bytes.is_some_and(|l| out.len() >= l) {
            break;
        }
    }
    if let Some(limit) = opts.limit_bytes {
        let mut cut = limit.min(out.len());
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

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

    /// ReadLogs' order over three lines: tail first, then since, timestamps, limitBytes.
    #[test]
    fn read_logs_cases() {
        let mut lines = LogBuffer::default();
        for (t_ms, text) in [(1_000, "first line"), (2_500, "second line"), (4_000, "third line")] {
            lines.push(t_ms, kubesim_host::container::Stream::Stdout, text);
        }
        let all = "first line\nsecond line\nthird line\n";
        let cases: Vec<(PodLogOptions, &str)> = vec![
            (PodLogOptions::default(), all),
            (PodLogOptions { tail_lines: Some(0), ..Default::default() }, ""),
            (PodLogOptions { tail_lines: Some(2), ..Default::default() }, "second line\nthird line\n"),
            (PodLogOptions { tail_lines: Some(5), ..Default::default() }, all),
            (PodLogOptions { limit_bytes: Some(3), ..Default::default() }, "fir"),
            (PodLogOptions { since_time: Some(2_500), ..Default::default() }, "second line\nthird line\n"),
            (PodLogOptions { since_seconds: Some(2), ..Default::default() }, "third line\n"),
            (PodLogOptions { timestamps: true, tail_lines: Some(1), ..Default::default() }, "2025-01-01T00:00:04.000000000Z third line\n"),
            (
                PodLogOptions { timestamps: true, since_time: Some(2_000), tail_lines: Some(2), ..Default::default() },
                "2025-01-01T00:00:02.500000000Z second line\n2025-01-01T00:00:04.000000000Z third line\n",
            ),
        ];
        for (i, (opts, want)) in cases.into_iter().enumerate() {
            assert_eq!(read_logs(&lines, &opts, 5_000), want, "case {i}: {opts:?}");
        }
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
