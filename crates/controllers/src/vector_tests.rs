//! Upstream unit-test vectors (reference sections 3 and 4), table-driven.
#![allow(clippy::type_complexity)]

use crate::deployment_util::*;
use crate::replicaset::*;
use kubesim_api::k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodSpec, PodStatus};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::time::time_at;
use kubesim_api::Millis;
use std::collections::BTreeMap;

fn ios(s: &str) -> IntOrString {
    match s.parse::<i32>() {
        Ok(v) => IntOrString::Int(v),
        Err(_) => IntOrString::String(s.into()),
    }
}

// Mirrors pkg/controller/deployment/util/deployment_util_test.go TestResolveFenceposts
#[test]
fn resolve_fenceposts_vectors() {
    let cases: &[(&str, &str, i32, Option<(i32, i32)>)] =
        &[("0%", "0%", 0, Some((0, 1))), ("39%", "39%", 10, Some((4, 3))), ("oops", "39%", 10, None), ("55%", "urg", 10, None)];
    for (surge, unavailable, desired, want) in cases {
        let got = resolve_fenceposts(Some(&ios(surge)), Some(&ios(unavailable)), *desired).ok();
        assert_eq!(got, *want, "{surge} {unavailable} {desired}");
    }
    // Defaults: 25%/25%.
    for (replicas, surge, unavailable) in [(10, 3, 2), (1, 1, 0), (3, 1, 0)] {
        let got = resolve_fenceposts(Some(&ios("25%")), Some(&ios("25%")), replicas).unwrap();
        assert_eq!(got, (surge, unavailable), "replicas {replicas}");
    }
}

// Mirrors pkg/controller/deployment/util/deployment_util_test.go TestMaxUnavailable
#[test]
fn max_unavailable_vectors() {
    let cases: &[(i32, &str, bool, i32)] = &[
        (10, "5", true, 5),
        (10, "10", true, 10),
        (5, "10", true, 5),
        (0, "10", true, 0),
        (10, "1", false, 0),
        (10, "50%", true, 5),
        (10, "100%", true, 10),
        (5, "100%", true, 5),
    ];
    for (replicas, mu, rolling, want) in cases {
        let s = Strategy { replicas: *replicas, rolling: *rolling, max_surge: Some(IntOrString::Int(1)), max_unavailable: Some(ios(mu)) };
        assert_eq!(s.max_unavailable(), *want, "{replicas} {mu} {rolling}");
    }
}

// Mirrors pkg/controller/deployment/util/deployment_util_test.go TestNewRSNewReplicas
#[test]
fn new_rs_new_replicas_vectors() {
    // One other RS with 5 replicas; maxUnavailable 1.
    let cases: &[(bool, i32, i32, i32, i32)] = &[(true, 1, 5, 1, 5), (true, 6, 2, 10, 6), (false, 3, 1, 1, 3)];
    for (rolling, replicas, new, surge, want) in cases {
        let s = Strategy { replicas: *replicas, rolling: *rolling, max_surge: Some(IntOrString::Int(*surge)), max_unavailable: Some(IntOrString::Int(1)) };
        assert_eq!(new_rs_new_replicas(&s, 5 + new, *new).unwrap(), *want);
    }
}

// Mirrors pkg/controller/deployment/rolling_test.go TestDeploymentController_reconcileNewReplicaSet
#[test]
fn reconcile_new_replica_set_vectors() {
    // (d.replicas, maxSurge, old, new, expected new size if scaled)
    let cases: &[(i32, i32, i32, i32, Option<i32>)] =
        &[(10, 0, 10, 0, None), (10, 2, 10, 0, Some(2)), (10, 2, 5, 0, Some(7)), (10, 2, 10, 2, None), (10, 2, 2, 11, Some(10))];
    for (replicas, surge, old, new, want) in cases {
        let s = Strategy::rolling(*replicas, *surge, 0);
        assert_eq!(reconcile_new_rs_target(&s, old + new, *new).unwrap(), *want, "{replicas} {surge} {old} {new}");
    }
}

fn rs(name: &str, created: Millis, replicas: i32, available: i32) -> RsView {
    RsView { name: name.into(), created, replicas, actual: replicas, ready: available, available, ..Default::default() }
}

// Mirrors pkg/controller/deployment/rolling_test.go TestDeploymentController_reconcileOldReplicaSets
#[test]
fn reconcile_old_replica_sets_vectors() {
    // (d.replicas, maxUnavailable, old, new, oldAvailable, newAvailable, expected old size if scaled)
    let cases: &[(i32, i32, i32, i32, i32, i32, Option<i32>)] = &[
        (10, 0, 10, 0, 10, 0, Some(9)),
        (10, 2, 10, 0, 10, 0, Some(8)),
        (10, 2, 10, 0, 8, 0, Some(8)),
        (10, 2, 10, 0, 9, 0, Some(8)),
        (10, 2, 8, 2, 8, 0, None),
    ];
    for (replicas, mu, old, new, old_avail, new_avail, want) in cases {
        let s = Strategy::rolling(*replicas, 0, *mu);
        let plan = plan_reconcile_old(&[rs("foo-v1", 0, *old, *old_avail)], &rs("foo-v2", 1000, *new, *new_avail), &s).unwrap();
        let got = plan.first().map(|(_, size)| *size);
        assert_eq!(got, *want, "{replicas} {mu} {old} {new} {old_avail}");
    }
}

// Mirrors pkg/controller/deployment/rolling_test.go TestDeploymentController_cleanupUnhealthyReplicas
#[test]
fn cleanup_unhealthy_replicas_vectors() {
    // (old replicas, ready, unhealthy, maxCleanupCount, expected cleaned)
    let cases: &[(i32, i32, i32, i32, i32)] = &[(10, 8, 2, 1, 1), (10, 8, 2, 3, 2), (10, 8, 2, 0, 0), (10, 10, 0, 3, 0)];
    for (old, ready, unhealthy, max, want) in cases {
        assert_eq!(ready + unhealthy, *old);
        let (_, total) = plan_cleanup_unhealthy(&[rs("foo-v2", 0, *old, *ready)], *max).unwrap();
        assert_eq!(total, *want, "{ready} {max}");
    }
}

// cleanupUnhealthyReplicas refuses to "scale down" an old RS that reports more available
// replicas than its spec asks for (its pods not yet deleted): min(max, spec - available) is
// negative and the new size larger. Found by the swarm's deployment-rollout-bounds checker
// (the controller wrote 2 -> 4 and broke replicas + maxSurge).
#[test]
fn cleanup_unhealthy_replicas_refuses_to_scale_up() {
    let mut old = rs("foo-v1", 0, 2, 4);
    old.namespace = "default".into();
    assert_eq!(plan_cleanup_unhealthy(&[old], 1).unwrap_err(), "when cleaning up unhealthy replicas, got invalid request to scale down default/foo-v1 2 -> 4");
}

// Mirrors pkg/controller/deployment/rolling_test.go TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate
#[test]
fn scale_down_old_replica_sets_for_rolling_update_vectors() {
    // (d.replicas, maxUnavailable, readyPods, oldReplicas, expected old size if scaled)
    let cases: &[(i32, i32, i32, i32, Option<i32>)] =
        &[(10, 0, 10, 10, Some(9)), (10, 2, 10, 10, Some(8)), (10, 2, 8, 10, None), (10, 2, 10, 0, None), (10, 2, 1, 10, None)];
    for (replicas, mu, ready, old, want) in cases {
        let s = Strategy::rolling(*replicas, 0, *mu);
        let old_rs = rs("foo-v2", 0, *old, *ready);
        let (plan, _) = plan_scale_down_old(std::slice::from_ref(&old_rs), *ready, &s);
        assert_eq!(plan.first().map(|(_, size)| *size), *want, "{replicas} {mu} {ready} {old}");
    }
}

// Mirrors pkg/controller/deployment/sync_test.go TestScale
#[test]
fn proportional_scale_vectors() {
    struct Case {
        name: &'static str,
        old_replicas: i32,
        old_surge: i32,
        new_replicas: i32,
        new_surge: i32,
        new_unavailable: i32,
        /// Replica sets, newest first: (name, replicas, available).
        rss: &'static [(&'static str, i32, i32)],
        /// Whether the first listed RS is the deployment's new RS.
        has_new: bool,
        want: &'static [i32],
    }
    let cases = [
        Case {
            name: "normal scaling event: 10 -> 12",
            old_replicas: 10,
            old_surge: 0,
            new_replicas: 12,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v1", 10, 0)],
            has_new: true,
            want: &[12],
        },
        Case {
            name: "normal scaling event: 10 -> 5",
            old_replicas: 10,
            old_surge: 0,
            new_replicas: 5,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v1", 10, 0)],
            has_new: true,
            want: &[5],
        },
        Case {
            name: "proportional scaling: 5 -> 10",
            old_replicas: 5,
            old_surge: 0,
            new_replicas: 10,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v2", 2, 0), ("v1", 3, 0)],
            has_new: true,
            want: &[4, 6],
        },
        Case {
            name: "proportional scaling: 5 -> 3",
            old_replicas: 5,
            old_surge: 0,
            new_replicas: 3,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v2", 2, 0), ("v1", 3, 0)],
            has_new: true,
            want: &[1, 2],
        },
        Case {
            name: "proportional scaling: 9 -> 4",
            old_replicas: 9,
            old_surge: 0,
            new_replicas: 4,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v2", 8, 0), ("v1", 1, 0)],
            has_new: true,
            want: &[4, 0],
        },
        Case {
            name: "proportional scaling: 7 -> 10",
            old_replicas: 7,
            old_surge: 0,
            new_replicas: 10,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v3", 2, 0), ("v2", 3, 0), ("v1", 2, 0)],
            has_new: true,
            want: &[3, 4, 3],
        },
        Case {
            name: "proportional scaling: 13 -> 8",
            old_replicas: 13,
            old_surge: 0,
            new_replicas: 8,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v3", 2, 0), ("v2", 8, 0), ("v1", 3, 0)],
            has_new: true,
            want: &[1, 5, 2],
        },
        Case {
            name: "leftover distribution: 3 -> 4",
            old_replicas: 3,
            old_surge: 0,
            new_replicas: 4,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v3", 1, 0), ("v2", 1, 0), ("v1", 1, 0)],
            has_new: true,
            want: &[2, 1, 1],
        },
        Case {
            name: "leftover distribution: 3 -> 2",
            old_replicas: 3,
            old_surge: 0,
            new_replicas: 2,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v3", 1, 0), ("v2", 1, 0), ("v1", 1, 0)],
            has_new: true,
            want: &[1, 1, 0],
        },
        Case {
            name: "scaling with no new replica set",
            old_replicas: 4,
            old_surge: 0,
            new_replicas: 5,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v2", 2, 0), ("v1", 2, 0)],
            has_new: false,
            want: &[3, 2],
        },
        Case {
            name: "scaling down to zero",
            old_replicas: 6,
            old_surge: 0,
            new_replicas: 0,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v3", 3, 0), ("v2", 2, 0), ("v1", 1, 0)],
            has_new: true,
            want: &[0, 0, 0],
        },
        Case {
            name: "scaling up from zero",
            old_replicas: 6,
            old_surge: 0,
            new_replicas: 6,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v3", 0, 0), ("v2", 0, 0), ("v1", 0, 0)],
            has_new: true,
            want: &[6, 0, 0],
        },
        Case {
            name: "scenario: surge pods",
            old_replicas: 10,
            old_surge: 2,
            new_replicas: 20,
            new_surge: 2,
            new_unavailable: 0,
            rss: &[("v2", 6, 0), ("v1", 6, 0)],
            has_new: true,
            want: &[11, 11],
        },
        Case {
            name: "change both surge and size",
            old_replicas: 10,
            old_surge: 3,
            new_replicas: 50,
            new_surge: 6,
            new_unavailable: 0,
            rss: &[("v2", 5, 0), ("v1", 8, 0)],
            has_new: true,
            want: &[22, 34],
        },
        Case {
            name: "change both size and template",
            old_replicas: 10,
            old_surge: 0,
            new_replicas: 14,
            new_surge: 0,
            new_unavailable: 0,
            rss: &[("v2", 7, 0), ("v1", 3, 0)],
            has_new: false,
            want: &[10, 4],
        },
        Case {
            name: "saturated but broken new replica set",
            old_replicas: 2,
            old_surge: 1,
            new_replicas: 2,
            new_surge: 1,
            new_unavailable: 1,
            rss: &[("v2", 2, 0), ("v1", 1, 0)],
            has_new: true,
            want: &[2, 1],
        },
    ];
    for case in cases {
        let n = case.rss.len();
        // Newest first in the table; creation times descending accordingly.
        let views: Vec<RsView> = case
            .rss
            .iter()
            .enumerate()
            .map(|(i, (name, replicas, available))| RsView {
                namespace: String::new(),
                name: name.to_string(),
                created: ((n - i) as Millis) * 1000,
                replicas: *replicas,
                actual: *replicas,
                available: *available,
                ready: *available,
                desired_annotation: Some(case.old_replicas),
                max_replicas_annotation: Some(case.old_replicas + case.old_surge),
            })
            .collect();
        let strategy = Strategy::rolling(case.new_replicas, case.new_surge, case.new_unavailable);
        let plan = plan_scale(&views, case.has_new.then_some(0), &strategy, 0);
        let mut after: Vec<i32> = views.iter().map(|v| v.replicas).collect();
        for (i, size) in plan {
            after[i] = size;
        }
        assert_eq!(after, case.want, "{}", case.name);
    }
}

// Mirrors pkg/controller/deployment/util/deployment_util_test.go TestDeploymentComplete
#[test]
fn deployment_complete_vectors() {
    // (desired, current, updated, available, maxUnavailable, maxSurge, want)
    let cases: &[(i32, i32, i32, i32, i32, i32, bool)] = &[
        (5, 5, 5, 4, 1, 0, false),
        (5, 5, 5, 3, 1, 0, false),
        (5, 5, 5, 5, 0, 0, true),
        (5, 5, 4, 5, 0, 0, false),
        (1, 2, 1, 1, 0, 1, false),
        (1, 1, 1, 0, 1, 1, false),
    ];
    for (desired, current, updated, available, _mu, _ms, want) in cases {
        let status = StatusCounts { replicas: *current, updated: *updated, ready: *available, available: *available, observed_generation: 1 };
        assert_eq!(deployment_complete(*desired, 1, &status), *want, "{desired} {current} {updated} {available}");
    }
    let status = StatusCounts { replicas: 5, updated: 5, ready: 5, available: 5, observed_generation: 1 };
    assert!(!deployment_complete(5, 2, &status), "an unobserved generation is not complete");
}

// Mirrors pkg/controller/deployment/util/deployment_util_test.go TestDeploymentProgressing
#[test]
fn deployment_progressing_vectors() {
    let s = |replicas, updated, ready, available| StatusCounts { replicas, updated, ready, available, observed_generation: 0 };
    let cases = [
        (s(10, 4, 4, 4), s(10, 6, 4, 4), true),
        (s(10, 4, 4, 4), s(10, 4, 4, 4), false),
        (s(10, 4, 6, 6), s(8, 4, 6, 6), true),
        (s(10, 7, 3, 3), s(10, 6, 3, 3), false),
        (s(10, 4, 7, 7), s(8, 8, 5, 5), true),
        (s(10, 10, 9, 8), s(10, 10, 10, 8), true),
        (s(10, 10, 10, 9), s(10, 10, 10, 10), true),
    ];
    for (old, new, want) in cases {
        assert_eq!(deployment_progressing(&old, &new), want, "{old:?} -> {new:?}");
    }
}

// Mirrors pkg/controller/deployment/util/deployment_util_test.go TestDeploymentTimedOut
#[test]
fn deployment_timed_out_vectors() {
    let t = |m: u64, s: u64| (m * 60 + s) * 1000;
    let now = t(1, 20);
    assert!(!deployment_timed_out(None, Some((reasons::RS_UPDATED, t(1, 9))), now), "nil deadline");
    assert!(deployment_timed_out(Some(10), Some((reasons::RS_UPDATED, t(1, 9))), now), "timed out");
    assert!(!deployment_timed_out(Some(10), Some((reasons::RS_UPDATED, t(1, 11))), now), "not yet");
    assert!(!deployment_timed_out(Some(10), Some((reasons::NEW_RS_AVAILABLE, t(1, 9))), now), "complete");
    assert!(!deployment_timed_out(Some(10), None, now), "no condition");
    assert!(deployment_timed_out(Some(10), Some((reasons::TIMED_OUT, t(1, 19))), now), "already timed out");
}

// Mirrors pkg/controller/deployment/sync_test.go TestDeploymentController_cleanupDeployment
#[test]
fn cleanup_deployment_vectors() {
    let entry = |name: &str, rev: i64, replicas: i32, actual: i32, deleting: bool| HistoryEntry {
        name: name.into(),
        created: rev as Millis * 1000,
        revision: Some(rev),
        replicas,
        actual,
        generation: 1,
        observed_generation: 1,
        deleting,
    };
    let cases: Vec<(Vec<HistoryEntry>, Option<i32>, usize)> = vec![
        (vec![entry("a", 1, 0, 0, false), entry("b", 2, 0, 0, false), entry("c", 3, 0, 0, false)], Some(1), 2),
        (vec![entry("a", 1, 0, 0, false), entry("b", 2, 0, 1, false), entry("c", 3, 1, 0, false), entry("d", 4, 1, 1, false)], Some(0), 1),
        (vec![entry("a", 1, 0, 0, false), entry("b", 2, 0, 0, false)], Some(0), 2),
        (vec![entry("a", 1, 1, 1, false), entry("b", 2, 1, 1, false)], Some(0), 0),
        (vec![entry("a", 1, 0, 0, true)], Some(0), 0),
        (vec![entry("a", 1, 0, 0, false), entry("b", 2, 0, 0, false)], Some(i32::MAX), 0),
        (vec![entry("a", 1, 0, 0, false)], None, 0),
    ];
    for (i, (entries, limit, want)) in cases.into_iter().enumerate() {
        assert_eq!(plan_history_cleanup(&entries, limit).len(), want, "case {i}");
    }
    // Oldest revisions go first.
    let entries = vec![entry("c", 3, 0, 0, false), entry("a", 1, 0, 0, false), entry("b", 2, 0, 0, false)];
    assert_eq!(plan_history_cleanup(&entries, Some(1)), vec!["a".to_string(), "b".to_string()]);
}

// Mirrors pkg/controller/deployment/util/deployment_util_test.go TestSetNewReplicaSetAnnotations (revision history)
#[test]
fn revision_history_annotation_appends_and_bounds() {
    assert_eq!(append_revision_history("", "1", 2000).as_deref(), Some("1"));
    assert_eq!(append_revision_history("1,3", "4", 2000).as_deref(), Some("1,3,4"));
    assert_eq!(append_revision_history("1,3", "4", 4).as_deref(), Some("3,4"));
    assert_eq!(append_revision_history("1", "12345", 3), None);
}

// Mirrors pkg/controller/controller_utils_test.go TestComputeHash + apimachinery rand SafeEncodeString
#[test]
fn pod_template_hash_shape() {
    assert_eq!(safe_encode_string("1234567890"), "56789bcdf4");
    assert_eq!(safe_encode_string("123"), "567");
    assert_eq!(fnv32a(b""), 0x811c9dc5);
    assert_eq!(fnv32a(b"a"), 0xe40c292c);
    let t = crate::e2e_tests::template("nginx");
    let h1 = compute_hash(&t, None);
    let h2 = compute_hash(&t, Some(1));
    let h3 = compute_hash(&t, Some(2));
    assert_ne!(h1, h2);
    assert_ne!(h2, h3);
    assert_eq!(h1, compute_hash(&t, None), "deterministic");
    let mut labelled = t.clone();
    labelled.metadata.as_mut().unwrap().labels.as_mut().unwrap().insert(POD_TEMPLATE_HASH_LABEL.into(), h1.clone());
    assert_eq!(compute_hash(&labelled, None), h1, "the hash label is ignored");
    assert!(equal_ignore_hash(&t, &labelled));
}

// Mirrors pkg/controller/replicaset/replica_set_test.go TestSlowStartBatch (batch sizes)
#[test]
fn slow_start_batch_sizes() {
    assert_eq!(slow_start_batches(10, 1), vec![1, 2, 4, 3]);
    assert_eq!(slow_start_batches(500, 1), vec![1, 2, 4, 8, 16, 32, 64, 128, 245]);
    assert_eq!(slow_start_batches(0, 1), Vec::<usize>::new());
    // A failure stops after its batch: 10 creations, the 5th call fails → batches 1,2 succeed,
    // batch 3 (4 calls) runs fully with one failure, batch 4 is skipped.
    let mut calls = 0;
    let (ok, err) = slow_start_batch(10, 1, || {
        calls += 1;
        if calls == 5 {
            Err("boom")
        } else {
            Ok(())
        }
    });
    assert_eq!((ok, err, calls), (6, Some("boom"), 7));
}

const HOUR: Millis = 3_600_000;

fn pod(node: &str, phase: &str, ready: Option<Option<Millis>>, created: Option<Millis>) -> Pod {
    let conditions =
        ready.map(|ltt| vec![PodCondition { type_: "Ready".into(), status: "True".into(), last_transition_time: ltt.map(time_at), ..Default::default() }]);
    Pod {
        metadata: ObjectMeta { creation_timestamp: created.map(time_at), ..Default::default() },
        spec: Some(PodSpec { node_name: (!node.is_empty()).then(|| node.to_string()), ..Default::default() }),
        status: Some(PodStatus { phase: Some(phase.into()), conditions, ..Default::default() }),
    }
}

// Mirrors pkg/controller/controller_utils_test.go TestSortingActivePodsWithRanks
#[test]
fn sorting_active_pods_with_ranks_vectors() {
    let now: Millis = 60 * 24 * HOUR;
    let then = now - 30 * 24 * HOUR;
    let unscheduled = pod("", "Pending", None, None);
    let pending = pod("foo", "Pending", None, None);
    let unknown = pod("foo", "Unknown", None, None);
    let not_ready = pod("foo", "Running", None, None);
    let ready_no_ltt = pod("foo", "Running", Some(None), None);
    let ready_now = pod("foo", "Running", Some(Some(now)), Some(now));
    let ready_then = pod("foo", "Running", Some(Some(then)), Some(then));
    let mut ready_high_restarts = pod("foo", "Running", Some(Some(now)), Some(now));
    ready_high_restarts.status.as_mut().unwrap().container_statuses = Some(vec![ContainerStatus { restart_count: 9001, ..Default::default() }]);
    let ready_now_created_then = pod("foo", "Running", Some(Some(now)), Some(then));
    let cost = |v: &str| {
        let mut p = pod("foo", "Running", Some(Some(now)), Some(now));
        p.metadata.annotations = Some(BTreeMap::from([(POD_DELETION_COST.to_string(), v.to_string())]));
        p
    };
    let low_cost = cost("10");
    let high_cost = cost("100");
    let unscheduled_5h = pod("", "Pending", None, Some(now - 5 * HOUR));
    let unscheduled_8h = pod("", "Pending", None, Some(now - 8 * HOUR));
    let ready_2h = pod("foo", "Running", Some(Some(now - 2 * HOUR)), Some(then));
    let ready_5h = pod("foo", "Running", Some(Some(now - 5 * HOUR)), Some(then));
    let ready_10h = pod("foo", "Running", Some(Some(now - 8 * HOUR)), Some(then));

    let all = [
        &unscheduled,
        &pending,
        &unknown,
        &not_ready,
        &ready_no_ltt,
        &ready_now,
        &ready_then,
        &ready_high_restarts,
        &ready_now_created_then,
        &low_cost,
        &high_cost,
        &unscheduled_5h,
        &unscheduled_8h,
        &ready_2h,
        &ready_5h,
        &ready_10h,
    ];
    for p in all {
        assert!(!pod_deletes_before(p, 1, p, 1, now, true), "a pod is not less than itself");
    }
    let equal = [(&unscheduled_5h, &unscheduled_8h), (&ready_5h, &ready_10h)];
    for (a, b) in equal {
        assert!(!pod_deletes_before(a, 1, b, 1, now, true) && !pod_deletes_before(b, 1, a, 1, now, true));
    }
    let ordered: Vec<(&Pod, usize, &Pod, usize)> = vec![
        (&unscheduled, 1, &pending, 2),
        (&unscheduled, 2, &pending, 1),
        (&pending, 1, &unknown, 2),
        (&unknown, 1, &not_ready, 2),
        (&not_ready, 1, &ready_no_ltt, 1),
        (&ready_no_ltt, 1, &ready_now, 1),
        (&ready_now, 2, &ready_no_ltt, 1),
        (&ready_now, 1, &ready_then, 1),
        (&ready_now, 2, &ready_then, 1),
        (&ready_high_restarts, 1, &ready_now, 1),
        (&ready_now, 2, &ready_high_restarts, 1),
        (&ready_now, 1, &ready_now_created_then, 1),
        (&ready_now_created_then, 2, &ready_now, 1),
        (&low_cost, 2, &high_cost, 1),
        (&ready_2h, 1, &ready_5h, 1),
    ];
    for (i, (lesser, lr, greater, gr)) in ordered.into_iter().enumerate() {
        assert!(pod_deletes_before(lesser, lr, greater, gr, now, true), "case {i}: lesser should be less");
        assert!(!pod_deletes_before(greater, gr, lesser, lr, now, true), "case {i}: greater should not be less");
    }
    // PodDeletionCost disabled: rank decides.
    assert!(pod_deletes_before(&high_cost, 2, &low_cost, 1, now, false));
    assert!(!pod_deletes_before(&low_cost, 1, &high_cost, 2, now, false));
}

// Mirrors pkg/controller/replicaset/replica_set_test.go TestGetPodsToDelete
#[test]
fn pods_to_delete_prefers_unscheduled_pending_unready_and_doubled_up() {
    let now: Millis = 10 * HOUR;
    let ready_a = pod("node-a", "Running", Some(Some(HOUR)), Some(HOUR));
    let ready_b = pod("node-b", "Running", Some(Some(HOUR)), Some(HOUR));
    let ready_b2 = pod("node-b", "Running", Some(Some(HOUR)), Some(HOUR));
    let unscheduled = pod("", "Pending", None, Some(HOUR));
    let not_ready = pod("node-a", "Running", None, Some(HOUR));
    let pods = [&ready_a, &ready_b, &not_ready, &unscheduled];
    let ready_b3 = pod("node-b", "Running", Some(Some(HOUR)), Some(HOUR));
    // node-a: 2 active related pods, node-b: 3.
    let related = [&ready_a, &ready_b, &ready_b2, &ready_b3, &not_ready, &unscheduled];
    let victims = pods_to_delete(&pods, &related, 3, now);
    assert!(std::ptr::eq(victims[0], &unscheduled));
    assert!(std::ptr::eq(victims[1], &not_ready));
    assert!(std::ptr::eq(victims[2], &ready_b), "node-b has more related pods");
    assert_eq!(pods_to_delete(&pods, &related, 4, now).len(), 4);
}

#[test]
fn sorting_with_a_non_transitive_less_does_not_panic() {
    // Ready pods whose ready times straddle log2 buckets, compared by UID within a bucket:
    // upstream's Less is not transitive here; the sort must still terminate with a permutation.
    let now: Millis = 1_000_000_000;
    let mut pods: Vec<Pod> = (0..200)
        .map(|i| {
            let mut p = pod("n", "Running", Some(Some(now - (i * 7919 % 100_000) as Millis * 37)), Some(now - 1000));
            p.metadata.uid = Some(format!("{:04}", (i * 31) % 200));
            p
        })
        .collect();
    let refs: Vec<&Pod> = pods.iter().collect();
    let victims = pods_to_delete(&refs, &refs, 100, now);
    assert_eq!(victims.len(), 100);
    pods.clear();
}
