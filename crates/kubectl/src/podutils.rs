//! k8s.io/kubectl/pkg/util/podutils: the orders in which kubectl picks "the" pod of a workload
//! (`kubectl logs deploy/x` takes the first by [`by_logging_less`], `kubectl exec deploy/x`
//! the first by the reverse of [`active_pods_less`]), each a `Less` for Go's sort.Sort.

use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

fn node_name(p: &Pod) -> &str {
    p.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("")
}

fn phase(p: &Pod) -> &str {
    p.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

/// IsPodReady: the Ready condition is True.
fn is_ready(p: &Pod) -> bool {
    p.status.iter().flat_map(|s| s.conditions.iter().flatten()).any(|c| c.type_ == "Ready" && c.status == "True")
}

/// podReadyTime: the Ready condition's lastTransitionTime when True, else Go's zero time
/// (`None`). Times count whole seconds, as they reach kubectl.
fn ready_time(p: &Pod) -> Option<i64> {
    p.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .find(|c| c.type_ == "Ready" && c.status == "True")
        .and_then(|c| c.last_transition_time.as_ref())
        .map(seconds)
}

fn seconds(t: &Time) -> i64 {
    t.0.as_second()
}

/// afterOrZero: t1 after t2, a zero time counting as after any other.
fn after_or_zero(t1: Option<i64>, t2: Option<i64>) -> bool {
    match (t1, t2) {
        (Some(a), Some(b)) => a > b,
        (t1, _) => t1.is_none(),
    }
}

/// maxContainerRestarts: the most restarts of a regular container and of a sidecar.
fn max_restarts(p: &Pod) -> (i32, i32) {
    let status = p.status.as_ref();
    let regular = status.iter().flat_map(|s| s.container_statuses.iter().flatten()).map(|c| c.restart_count).max().unwrap_or(0).max(0);
    let sidecars: Vec<&str> = p
        .spec
        .iter()
        .flat_map(|s| s.init_containers.iter().flatten())
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .map(|c| c.name.as_str())
        .collect();
    let sidecar = status
        .iter()
        .flat_map(|s| s.init_container_statuses.iter().flatten())
        .filter(|c| sidecars.contains(&c.name.as_str()))
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
        .max(0);
    (regular, sidecar)
}

/// compareMaxContainerRestarts: more restarts first, regular containers before sidecars.
fn compare_max_restarts(a: &Pod, b: &Pod) -> Option<bool> {
    let ((ra, sa), (rb, sb)) = (max_restarts(a), max_restarts(b));
    if ra != rb {
        return Some(ra > rb);
    }
    (sa != sb).then_some(sa > sb)
}

fn creation(p: &Pod) -> Option<i64> {
    p.metadata.creation_timestamp.as_ref().map(seconds)
}

/// ActivePods.Less: the pod to delete first sorts first (unassigned, pending, not ready,
/// deleting, ready for less time, more restarts, newer).
pub fn active_pods_less(a: &Pod, b: &Pod) -> bool {
    let (na, nb) = (node_name(a), node_name(b));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return na.is_empty();
    }
    let rank = |p: &Pod| match phase(p) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    };
    if rank(a) != rank(b) {
        return rank(a) < rank(b);
    }
    if is_ready(a) != is_ready(b) {
        return !is_ready(a);
    }
    let (da, db) = (a.metadata.deletion_timestamp.as_ref().map(seconds), b.metadata.deletion_timestamp.as_ref().map(seconds));
    if da.is_some() != db.is_some() {
        return da.is_some();
    }
    if let (Some(x), Some(y)) = (da, db) {
        if x != y {
            return x < y;
        }
    }
    if is_ready(a) && is_ready(b) && ready_time(a) != ready_time(b) {
        return after_or_zero(ready_time(a), ready_time(b));
    }
    if let Some(less) = compare_max_restarts(a, b) {
        return less;
    }
    if creation(a) != creation(b) {
        return after_or_zero(creation(a), creation(b));
    }
    false
}

/// ByLogging.Less: the pod whose logs are most telling sorts first (assigned, running, ready,
/// ready for longer, more restarts, older).
pub fn by_logging_less(a: &Pod, b: &Pod) -> bool {
    let (na, nb) = (node_name(a), node_name(b));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return !na.is_empty();
    }
    let rank = |p: &Pod| match phase(p) {
        "Unknown" => 1,
        "Pending" => 2,
        _ => 0,
    };
    if rank(a) != rank(b) {
        return rank(a) < rank(b);
    }
    if is_ready(a) != is_ready(b) {
        return is_ready(a);
    }
    if is_ready(a) && is_ready(b) && ready_time(a) != ready_time(b) {
        return after_or_zero(ready_time(b), ready_time(a));
    }
    if let Some(less) = compare_max_restarts(a, b) {
        return less;
    }
    if creation(a) != creation(b) {
        return after_or_zero(creation(b), creation(a));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: &str, phase: &str, ready: Option<i64>, restarts: i32, created: i64) -> Pod {
        let t = |s: i64| Time(kubesim_api::k8s_openapi::jiff::Timestamp::from_second(1_700_000_000 + s).unwrap());
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "creationTimestamp": t(created)},
            "spec": {"nodeName": node, "containers": [{"name": "c"}]},
            "status": {
                "phase": phase,
                "conditions": ready.map(|r| vec![serde_json::json!({"type": "Ready", "status": "True", "lastTransitionTime": t(r)})]).unwrap_or_default(),
                "containerStatuses": [{"name": "c", "restartCount": restarts, "ready": ready.is_some(), "image": "i", "imageID": ""}]
            }
        }))
        .unwrap()
    }

    // podutils_test.go TestActivePods's cases (unassigned, pending, unready, ready for less time,
    // more restarts first), and ByLogging's mirror image of them.
    #[test]
    fn orders_follow_podutils() {
        let unassigned = pod("a", "", "Pending", None, 0, 0);
        let pending = pod("b", "n", "Pending", None, 0, 0);
        let running = pod("c", "n", "Running", None, 0, 0);
        let ready_old = pod("d", "n", "Running", Some(10), 0, 0);
        let ready_new = pod("e", "n", "Running", Some(20), 0, 0);
        let restarted = pod("f", "n", "Running", Some(20), 3, 0);
        // ActivePods: the pod to delete first sorts first.
        assert!(active_pods_less(&unassigned, &pending));
        assert!(active_pods_less(&pending, &running));
        assert!(active_pods_less(&running, &ready_old));
        assert!(active_pods_less(&ready_new, &ready_old));
        assert!(active_pods_less(&restarted, &ready_new));
        // ByLogging: the most telling pod first.
        assert!(by_logging_less(&pending, &unassigned));
        assert!(by_logging_less(&running, &pending));
        assert!(by_logging_less(&ready_old, &running));
        assert!(by_logging_less(&ready_old, &ready_new));
        assert!(by_logging_less(&restarted, &ready_new));
        assert!(!by_logging_less(&ready_old, &ready_old));
    }
}
