//! Pod status computation: getPhase (pkg/kubelet/kubelet_pods.go) and the kubelet-owned pod
//! conditions (pkg/kubelet/status/generate.go), as pure functions over container statuses.

use kubesim_api::k8s_openapi::api::core::v1::{Container, ContainerStatus, PodSpec};

fn is_restartable_init(container: &Container) -> bool {
    container.restart_policy.as_deref() == Some("Always")
}

fn find<'a>(statuses: &'a [ContainerStatus], name: &str) -> Option<&'a ContainerStatus> {
    statuses.iter().find(|s| s.name == name)
}

/// getPhase: the pod phase from its spec and container statuses.
pub fn get_phase(spec: &PodSpec, init_statuses: &[ContainerStatus], statuses: &[ContainerStatus], pod_is_terminal: bool) -> &'static str {
    let (mut pending_regular_init, mut pending_restartable_init, mut failed_init) = (0, 0, 0);
    let (mut unknown, mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0, 0);
    for container in spec.init_containers.iter().flatten() {
        let status = find(init_statuses, &container.name);
        let state = status.and_then(|s| s.state.as_ref());
        let last_terminated = status.and_then(|s| s.last_state.as_ref()).and_then(|l| l.terminated.as_ref());
        if is_restartable_init(container) {
            match state {
                None => unknown += 1,
                Some(st) if st.running.is_some() => {
                    running += 1;
                    if status.and_then(|s| s.started) != Some(true) {
                        pending_restartable_init += 1;
                    }
                }
                Some(st) if st.terminated.is_some() => {}
                Some(st) if st.waiting.is_some() => {
                    if last_terminated.is_none() {
                        pending_restartable_init += 1;
                        waiting += 1;
                    }
                }
                Some(_) => {
                    pending_restartable_init += 1;
                    unknown += 1;
                }
            }
            continue;
        }
        match state {
            None => pending_regular_init += 1,
            Some(st) if st.running.is_some() => pending_regular_init += 1,
            Some(st) if st.terminated.is_some() => {
                if st.terminated.as_ref().map(|t| t.exit_code) != Some(0) {
                    failed_init += 1;
                }
            }
            Some(st) if st.waiting.is_some() => match last_terminated {
                Some(t) if t.exit_code != 0 => failed_init += 1,
                Some(_) => {}
                None => pending_regular_init += 1,
            },
            Some(_) => pending_regular_init += 1,
        }
    }
    for container in &spec.containers {
        let status = find(statuses, &container.name);
        match status.and_then(|s| s.state.as_ref()) {
            None => unknown += 1,
            Some(st) if st.running.is_some() => running += 1,
            Some(st) if st.terminated.is_some() => {
                stopped += 1;
                if st.terminated.as_ref().map(|t| t.exit_code) == Some(0) {
                    succeeded += 1;
                }
            }
            Some(st) if st.waiting.is_some() => {
                if status.and_then(|s| s.last_state.as_ref()).and_then(|l| l.terminated.as_ref()).is_some() {
                    stopped += 1;
                } else {
                    waiting += 1;
                }
            }
            Some(_) => unknown += 1,
        }
    }
    let restart_policy = spec.restart_policy.as_deref().unwrap_or("Always");
    if failed_init > 0 && restart_policy == "Never" {
        return "Failed";
    }
    let regular_started = statuses.iter().any(|s| {
        spec.containers.iter().any(|c| c.name == s.name)
            && (s.state.as_ref().is_some_and(|st| st.running.is_some() || st.terminated.is_some())
                || s.last_state.as_ref().and_then(|l| l.terminated.as_ref()).is_some())
    });
    // v1.34: regular init containers pending → Pending; pending sidecars only until the pod has
    // initialized (approximated as "a regular container has started").
    if pending_regular_init > 0 || (pending_restartable_init > 0 && !regular_started) {
        return "Pending";
    }
    if waiting > 0 {
        return "Pending";
    }
    if running > 0 && unknown == 0 {
        return "Running";
    }
    if running == 0 && stopped > 0 && unknown == 0 {
        if pod_is_terminal {
            return if stopped == succeeded { "Succeeded" } else { "Failed" };
        }
        if restart_policy == "Always" {
            return "Running";
        }
        if stopped == succeeded {
            return "Succeeded";
        }
        if restart_policy == "Never" {
            return "Failed";
        }
        return "Running";
    }
    "Pending"
}

/// Whether a pod's phase is terminal (Succeeded or Failed).
pub fn is_terminal(pod: &kubesim_api::k8s_openapi::api::core::v1::Pod) -> bool {
    matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded") | Some("Failed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_api::k8s_openapi::api::core::v1::{ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting};

    fn spec(policy: &str, init: &[(&str, bool)], containers: &[&str]) -> PodSpec {
        PodSpec {
            restart_policy: Some(policy.into()),
            init_containers: if init.is_empty() {
                None
            } else {
                Some(
                    init.iter()
                        .map(|(n, sidecar)| Container { name: n.to_string(), restart_policy: sidecar.then(|| "Always".to_string()), ..Default::default() })
                        .collect(),
                )
            },
            containers: containers.iter().map(|n| Container { name: n.to_string(), ..Default::default() }).collect(),
            ..Default::default()
        }
    }
    fn running(name: &str) -> ContainerStatus {
        ContainerStatus {
            name: name.into(),
            state: Some(ContainerState { running: Some(ContainerStateRunning::default()), ..Default::default() }),
            ..Default::default()
        }
    }
    fn started(name: &str) -> ContainerStatus {
        ContainerStatus { started: Some(true), ..running(name) }
    }
    fn terminated(name: &str, code: i32) -> ContainerStatus {
        ContainerStatus {
            name: name.into(),
            state: Some(ContainerState { terminated: Some(ContainerStateTerminated { exit_code: code, ..Default::default() }), ..Default::default() }),
            ..Default::default()
        }
    }
    fn waiting(name: &str) -> ContainerStatus {
        ContainerStatus {
            name: name.into(),
            state: Some(ContainerState {
                waiting: Some(ContainerStateWaiting { reason: Some("ContainerCreating".into()), ..Default::default() }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
    fn crashloop(name: &str, last_exit: i32) -> ContainerStatus {
        ContainerStatus {
            last_state: Some(ContainerState {
                terminated: Some(ContainerStateTerminated { exit_code: last_exit, ..Default::default() }),
                ..Default::default()
            }),
            ..waiting(name)
        }
    }

    // Mirrors pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartAlways.
    #[test]
    fn phase_with_restart_always() {
        let s = spec("Always", &[], &["A", "B"]);
        let cases: Vec<(Vec<ContainerStatus>, bool, &str)> = vec![
            (vec![], false, "Pending"),
            (vec![running("A"), running("B")], false, "Running"),
            (vec![terminated("A", 0), terminated("B", 0)], false, "Running"),
            (vec![terminated("A", 0), terminated("B", 0)], true, "Succeeded"),
            (vec![terminated("A", 0), terminated("B", -1)], true, "Failed"),
            (vec![running("A"), terminated("B", 0)], false, "Running"),
            (vec![running("A")], false, "Pending"),
            (vec![running("A"), waiting("B")], false, "Pending"),
            (vec![running("A"), crashloop("B", 1)], false, "Running"),
        ];
        for (i, (statuses, terminal, want)) in cases.into_iter().enumerate() {
            assert_eq!(get_phase(&s, &[], &statuses, terminal), want, "case {i}");
        }
    }

    // Mirrors TestPodPhaseWithRestartAlwaysInitContainers.
    #[test]
    fn phase_with_restart_always_init_containers() {
        let s = spec("Always", &[("X", false)], &["A", "B"]);
        let cases: Vec<(Vec<ContainerStatus>, Vec<ContainerStatus>, &str)> = vec![
            (vec![], vec![], "Pending"),
            (vec![running("X")], vec![], "Pending"),
            (vec![terminated("X", 1)], vec![], "Pending"),
            (vec![crashloop("X", 0)], vec![], "Pending"),
            (vec![crashloop("X", 1)], vec![], "Pending"),
            (vec![waiting("X")], vec![], "Pending"),
            (vec![terminated("X", 0)], vec![running("A"), running("B")], "Running"),
        ];
        for (i, (init, statuses, want)) in cases.into_iter().enumerate() {
            assert_eq!(get_phase(&s, &init, &statuses, false), want, "case {i}");
        }
    }

    // Mirrors TestPodPhaseWithRestartAlwaysRestartableInitContainers.
    #[test]
    fn phase_with_restartable_init_containers() {
        let s = spec("Always", &[("X", true)], &["A", "B"]);
        let cases: Vec<(Vec<ContainerStatus>, Vec<ContainerStatus>, bool, &str)> = vec![
            (vec![], vec![], false, "Pending"),
            (vec![running("X")], vec![], false, "Pending"),
            (vec![terminated("X", 0)], vec![], false, "Pending"),
            (vec![crashloop("X", 1)], vec![], false, "Pending"),
            (vec![waiting("X")], vec![], false, "Pending"),
            (vec![started("X")], vec![running("A")], false, "Pending"),
            (vec![started("X")], vec![running("A"), running("B")], false, "Running"),
            (vec![running("X")], vec![running("A"), running("B")], false, "Running"),
            (vec![terminated("X", 0)], vec![running("A"), running("B")], false, "Running"),
            (vec![crashloop("X", 1)], vec![running("A"), running("B")], false, "Running"),
            (vec![terminated("X", 1)], vec![terminated("A", 0), terminated("B", 0)], true, "Succeeded"),
            (vec![terminated("X", 0)], vec![terminated("A", 0), terminated("B", 0)], true, "Succeeded"),
        ];
        for (i, (init, statuses, terminal, want)) in cases.into_iter().enumerate() {
            assert_eq!(get_phase(&s, &init, &statuses, terminal), want, "case {i}");
        }
    }

    // Mirrors TestPodPhaseWithRestartNever and TestPodPhaseWithRestartNeverInitContainers.
    #[test]
    fn phase_with_restart_never() {
        let s = spec("Never", &[], &["A", "B"]);
        let cases: Vec<(Vec<ContainerStatus>, &str)> = vec![
            (vec![], "Pending"),
            (vec![running("A"), running("B")], "Running"),
            (vec![terminated("A", 0), terminated("B", 0)], "Succeeded"),
            (vec![terminated("A", 1), terminated("B", 1)], "Failed"),
            (vec![running("A"), terminated("B", 0)], "Running"),
            (vec![running("A")], "Pending"),
            (vec![running("A"), waiting("B")], "Pending"),
        ];
        for (i, (statuses, want)) in cases.into_iter().enumerate() {
            assert_eq!(get_phase(&s, &[], &statuses, false), want, "case {i}");
        }
        let s = spec("Never", &[("X", false)], &["A", "B"]);
        let cases: Vec<(Vec<ContainerStatus>, Vec<ContainerStatus>, &str)> = vec![
            (vec![], vec![], "Pending"),
            (vec![running("X")], vec![], "Pending"),
            (vec![terminated("X", 1)], vec![], "Failed"),
            (vec![crashloop("X", 0)], vec![], "Pending"),
            (vec![crashloop("X", 1)], vec![], "Failed"),
            (vec![waiting("X")], vec![], "Pending"),
            (vec![terminated("X", 0)], vec![running("A"), running("B")], "Running"),
        ];
        for (i, (init, statuses, want)) in cases.into_iter().enumerate() {
            assert_eq!(get_phase(&s, &init, &statuses, false), want, "init case {i}");
        }
    }

    // Mirrors TestPodPhaseWithRestartOnFailure.
    #[test]
    fn phase_with_restart_on_failure() {
        let s = spec("OnFailure", &[], &["A", "B"]);
        let cases: Vec<(Vec<ContainerStatus>, &str)> = vec![
            (vec![], "Pending"),
            (vec![running("A"), running("B")], "Running"),
            (vec![terminated("A", 0), terminated("B", 0)], "Succeeded"),
            (vec![terminated("A", 1), terminated("B", 1)], "Running"),
            (vec![running("A"), terminated("B", 0)], "Running"),
            (vec![running("A")], "Pending"),
            (vec![running("A"), waiting("B")], "Pending"),
            (vec![running("A"), crashloop("B", 1)], "Running"),
        ];
        for (i, (statuses, want)) in cases.into_iter().enumerate() {
            assert_eq!(get_phase(&s, &[], &statuses, false), want, "case {i}");
        }
    }

    // Mirrors TestPodPhaseWithRestartAlwaysAndPodHasRun (X regular init, Y sidecar, A container).
    #[test]
    fn phase_when_pod_has_run() {
        let s = spec("Always", &[("X", false), ("Y", true)], &["A"]);
        let cases: Vec<(Vec<ContainerStatus>, Vec<ContainerStatus>, &str)> = vec![
            (vec![running("X"), running("Y")], vec![running("A")], "Pending"),
            (vec![running("X"), running("Y")], vec![terminated("A", 0)], "Pending"),
            (vec![terminated("X", 0), running("Y")], vec![terminated("A", 0)], "Running"),
            (vec![terminated("X", 0), running("Y")], vec![running("A")], "Running"),
        ];
        for (i, (init, statuses, want)) in cases.into_iter().enumerate() {
            assert_eq!(get_phase(&s, &init, &statuses, false), want, "case {i}");
        }
    }
}
