//! Job and TTL-after-finished tests.

use crate::common::{decode, encode};
use crate::job::*;
use crate::testing::{FakeKubelet, TestWorld};
use kubesim_api::k8s_openapi::api::batch::v1::{Job, JobSpec};
use kubesim_api::k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::time::millis_of;
use std::collections::BTreeSet;

fn job(name: &str, completions: Option<i32>, parallelism: Option<i32>) -> Job {
    Job {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(JobSpec {
            completions,
            parallelism,
            template: PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    containers: vec![Container { name: "pi".into(), image: Some("perl".into()), ..Default::default() }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

fn world(kubelet: FakeKubelet) -> TestWorld {
    TestWorld::new(vec![
        Box::new(crate::framework::Controller(JobController::new())),
        Box::new(crate::framework::Controller(TtlAfterFinishedController::new())),
        Box::new(crate::framework::Controller(crate::gc::GarbageCollector::new())),
        Box::new(kubelet),
    ])
}

fn get_job(w: &TestWorld, name: &str) -> Job {
    decode::<Job>(&w.get(("batch", "jobs"), "default", name).unwrap()).unwrap()
}

fn condition_types(j: &Job) -> Vec<String> {
    j.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default().into_iter().filter(|c| c.status == "True").map(|c| c.type_).collect()
}

#[test]
fn job_runs_completions_with_parallelism_and_completes() {
    let mut w = world(FakeKubelet::new(1000, 1000));
    w.create(encode(&job("pi", Some(3), Some(2)), "batch/v1", "Job")).unwrap();
    w.run_for(3_000);
    let j = get_job(&w, "pi");
    assert_eq!(j.status.as_ref().unwrap().active, Some(2), "parallelism 2");
    let pods = w.list(("", "pods"), "default");
    assert_eq!(pods.len(), 2);
    let p = pods[0].as_pod().unwrap();
    assert!(p.metadata.name.as_deref().unwrap().starts_with("pi-"));
    assert_eq!(p.metadata.labels.as_ref().unwrap()["batch.kubernetes.io/job-name"], "pi");
    assert_eq!(p.metadata.labels.as_ref().unwrap()["batch.kubernetes.io/controller-uid"], j.metadata.uid.clone().unwrap());
    assert!(p.metadata.finalizers.as_ref().unwrap().contains(&JOB_TRACKING_FINALIZER.to_string()));
    w.run_for(60_000);
    let j = get_job(&w, "pi");
    let status = j.status.clone().unwrap();
    assert_eq!((status.succeeded, status.failed, status.active), (Some(3), None, None));
    assert_eq!(condition_types(&j), vec!["SuccessCriteriaMet".to_string(), "Complete".to_string()]);
    assert!(status.completion_time.is_some());
    assert!(status.start_time.is_some());
    assert_eq!(w.list(("", "pods"), "default").len(), 3, "completed pods are kept");
    for p in w.list(("", "pods"), "default") {
        assert!(p.metadata().finalizers.is_none(), "tracking finalizers removed");
    }
    let events = w.events();
    assert_eq!(events.iter().filter(|(r, _)| r == "SuccessfulCreate").count(), 3);
    assert!(events.contains(&("Completed".into(), "Job completed".into())));
}

#[test]
fn backoff_limit_exceeded_fails_the_job_with_exponential_backoff_between_retries() {
    let mut kubelet = FakeKubelet::new(1000, 1000);
    kubelet.fail_prefix = Some("bad-".into());
    let mut w = world(kubelet);
    let mut j = job("bad", None, None);
    j.spec.as_mut().unwrap().backoff_limit = Some(2);
    w.create(encode(&j, "batch/v1", "Job")).unwrap();
    w.run_for(300_000);
    let j = get_job(&w, "bad");
    let status = j.status.clone().unwrap();
    assert_eq!(status.failed, Some(3));
    assert_eq!(condition_types(&j), vec!["FailureTarget".to_string(), "Failed".to_string()]);
    let failed = status.conditions.unwrap().into_iter().find(|c| c.type_ == "Failed").unwrap();
    assert_eq!((failed.reason.as_deref(), failed.message.as_deref()), (Some("BackoffLimitExceeded"), Some("Job has reached the specified backoff limit")));
    assert!(w.events().contains(&("BackoffLimitExceeded".into(), "Job has reached the specified backoff limit".into())));
    // Replacement pods wait 10 s, then 20 s after each failure (pods fail 6 s after creation).
    let mut created: Vec<u64> = w.list(("", "pods"), "default").iter().map(|p| millis_of(p.metadata().creation_timestamp.as_ref().unwrap())).collect();
    created.sort();
    assert_eq!(created.len(), 3);
    assert!(created[1] - created[0] >= 16_000, "{created:?}");
    assert!(created[2] - created[1] >= 26_000, "{created:?}");
}

#[test]
fn indexed_job_creates_one_pod_per_index() {
    let mut w = world(FakeKubelet::new(1000, 1000));
    let mut j = job("idx", Some(3), Some(3));
    j.spec.as_mut().unwrap().completion_mode = Some("Indexed".into());
    w.create(encode(&j, "batch/v1", "Job")).unwrap();
    w.run_for(3_000);
    let mut indexes = BTreeSet::new();
    for p in w.list(("", "pods"), "default") {
        let pod = p.as_pod().unwrap();
        let i = pod.metadata.annotations.as_ref().unwrap()[COMPLETION_INDEX].clone();
        assert!(pod.metadata.name.as_deref().unwrap().starts_with(&format!("idx-{i}-")));
        assert_eq!(pod.metadata.labels.as_ref().unwrap()[COMPLETION_INDEX], i);
        assert_eq!(pod.spec.as_ref().unwrap().hostname.as_deref(), Some(format!("idx-{i}").as_str()));
        assert!(pod.spec.as_ref().unwrap().containers[0].env.as_ref().unwrap().iter().any(|e| e.name == "JOB_COMPLETION_INDEX"));
        indexes.insert(i);
    }
    assert_eq!(indexes.len(), 3);
    w.run_for(30_000);
    let j = get_job(&w, "idx");
    let status = j.status.clone().unwrap();
    assert_eq!(status.completed_indexes.as_deref(), Some("0-2"));
    assert_eq!(status.succeeded, Some(3));
    assert!(condition_types(&j).contains(&"Complete".to_string()));
}

#[test]
fn ttl_after_finished_deletes_the_job_and_its_pods() {
    let mut w = world(FakeKubelet::new(1000, 1000));
    let mut j = job("tmp", Some(1), Some(1));
    j.spec.as_mut().unwrap().ttl_seconds_after_finished = Some(10);
    w.create(encode(&j, "batch/v1", "Job")).unwrap();
    w.run_for(8_000);
    assert!(condition_types(&get_job(&w, "tmp")).contains(&"Complete".to_string()));
    w.run_for(5_000);
    assert!(w.get(("batch", "jobs"), "default", "tmp").is_some(), "not yet expired");
    w.run_for(30_000);
    assert!(w.get(("batch", "jobs"), "default", "tmp").is_none());
    assert!(w.list(("", "pods"), "default").is_empty());
}

// Mirrors pkg/controller/job/indexed_job_utils_test.go (TestCalculateSucceededIndexes string form)
#[test]
fn completed_indexes_format() {
    let set = |v: &[i32]| v.iter().copied().collect::<BTreeSet<i32>>();
    assert_eq!(format_indexes(&set(&[])), "");
    assert_eq!(format_indexes(&set(&[1])), "1");
    assert_eq!(format_indexes(&set(&[1, 2])), "1,2");
    assert_eq!(format_indexes(&set(&[0, 1, 2, 4, 6, 7, 8])), "0-2,4,6-8");
    assert_eq!(parse_indexes("0-2,4,6-8", 7), set(&[0, 1, 2, 4, 6]));
}

// Mirrors pkg/controller/job/backoff_utils_test.go (TestGetRemainingBackoffTime)
#[test]
fn pod_failure_backoff() {
    assert_eq!(failure_backoff_ms(0), 0);
    assert_eq!(failure_backoff_ms(1), 10_000);
    assert_eq!(failure_backoff_ms(2), 20_000);
    assert_eq!(failure_backoff_ms(6), 320_000);
    assert_eq!(failure_backoff_ms(7), 360_000);
    assert_eq!(failure_backoff_ms(50), 360_000);
}

// Mirrors the docs example controllers/job-pod-failure-policy-example.yaml
#[test]
fn pod_failure_policy_fail_job_on_exit_code() {
    use kubesim_api::k8s_openapi::api::batch::v1::{PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement, PodFailurePolicyRule};
    let mut kubelet = FakeKubelet::new(1000, 1000);
    kubelet.fail_prefix = Some("pfp-".into());
    kubelet.exit_code = 42;
    let mut w = world(kubelet);
    let mut j = job("pfp", Some(12), Some(3));
    j.spec.as_mut().unwrap().pod_failure_policy = Some(PodFailurePolicy {
        rules: vec![PodFailurePolicyRule {
            action: "FailJob".into(),
            on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement { container_name: Some("pi".into()), operator: "In".into(), values: vec![42] }),
            on_pod_conditions: None,
        }],
    });
    w.create(encode(&j, "batch/v1", "Job")).unwrap();
    w.run_for(60_000);
    let j = get_job(&w, "pfp");
    assert_eq!(condition_types(&j), vec!["FailureTarget".to_string(), "Failed".to_string()]);
    let failed = j.status.clone().unwrap().conditions.unwrap().into_iter().find(|c| c.type_ == "Failed").unwrap();
    assert_eq!(failed.reason.as_deref(), Some("PodFailurePolicy"));
    let message = failed.message.unwrap();
    assert!(
        message.starts_with("Container pi for pod default/pfp-") && message.ends_with("failed with exit code 42 matching FailJob rule at index 0"),
        "{message}"
    );
    assert!(w.list(("", "pods"), "default").len() <= 3, "no replacements after FailJob");
}

#[test]
fn pod_failure_policy_ignore_does_not_count_against_the_backoff_limit() {
    use kubesim_api::k8s_openapi::api::batch::v1::{PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement, PodFailurePolicyRule};
    let mut kubelet = FakeKubelet::new(1000, 1000);
    kubelet.fail_prefix = Some("ign-".into());
    kubelet.exit_code = 42;
    let mut w = world(kubelet);
    let mut j = job("ign", Some(1), Some(1));
    j.spec.as_mut().unwrap().backoff_limit = Some(0);
    j.spec.as_mut().unwrap().pod_failure_policy = Some(PodFailurePolicy {
        rules: vec![PodFailurePolicyRule {
            action: "Ignore".into(),
            on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement { container_name: None, operator: "In".into(), values: vec![42] }),
            on_pod_conditions: None,
        }],
    });
    w.create(encode(&j, "batch/v1", "Job")).unwrap();
    w.run_for(60_000);
    let j = get_job(&w, "ign");
    assert!(condition_types(&j).is_empty(), "{:?}", j.status);
    assert_eq!(j.status.unwrap().failed, None, "ignored failures are not counted");
    assert!(w.list(("", "pods"), "default").len() > 1, "failed pods are replaced");
}

// Mirrors the docs example controllers/job-success-policy.yaml
#[test]
fn success_policy_completes_the_job_when_a_rule_matches() {
    use kubesim_api::k8s_openapi::api::batch::v1::{SuccessPolicy, SuccessPolicyRule};
    let mut kubelet = FakeKubelet::new(1000, 1000);
    kubelet.finish_prefix = Some("sp-2-".into());
    let mut w = world(kubelet);
    let mut j = job("sp", Some(10), Some(10));
    let spec = j.spec.as_mut().unwrap();
    spec.completion_mode = Some("Indexed".into());
    spec.success_policy = Some(SuccessPolicy { rules: vec![SuccessPolicyRule { succeeded_indexes: Some("0,2-3".into()), succeeded_count: Some(1) }] });
    w.create(encode(&j, "batch/v1", "Job")).unwrap();
    w.run_for(60_000);
    let j = get_job(&w, "sp");
    assert_eq!(condition_types(&j), vec!["SuccessCriteriaMet".to_string(), "Complete".to_string()]);
    let c = j.status.clone().unwrap().conditions.unwrap().into_iter().find(|c| c.type_ == "Complete").unwrap();
    assert_eq!((c.reason.as_deref(), c.message.as_deref()), (Some("SuccessPolicy"), Some("Matched rules at index 0")));
    assert_eq!(j.status.unwrap().completed_indexes.as_deref(), Some("2"));
    let live = w
        .list(("", "pods"), "default")
        .iter()
        .filter(|p| p.metadata().deletion_timestamp.is_none() && p.as_pod().is_some_and(crate::common::is_pod_active))
        .count();
    assert_eq!(live, 0, "the other indexes were terminated");
}

// Mirrors the docs example controllers/job-backoff-limit-per-index-example.yaml
#[test]
fn backoff_limit_per_index_fails_indexes_independently() {
    let mut kubelet = FakeKubelet::new(1000, 1000);
    kubelet.fail_prefixes = (0..10).step_by(2).map(|i| format!("bli-{i}-")).collect();
    let mut w = world(kubelet);
    let mut j = job("bli", Some(10), Some(3));
    let spec = j.spec.as_mut().unwrap();
    spec.completion_mode = Some("Indexed".into());
    spec.backoff_limit_per_index = Some(1);
    spec.max_failed_indexes = Some(5);
    w.create(encode(&j, "batch/v1", "Job")).unwrap();
    w.run_for(600_000);
    let j = get_job(&w, "bli");
    let status = j.status.clone().unwrap();
    assert_eq!(status.failed_indexes.as_deref(), Some("0,2,4,6,8"));
    assert_eq!(status.completed_indexes.as_deref(), Some("1,3,5,7,9"));
    assert_eq!(status.failed, Some(10), "each even index failed twice");
    assert_eq!(condition_types(&j), vec!["FailureTarget".to_string(), "Failed".to_string()]);
    let failed = status.conditions.unwrap().into_iter().find(|c| c.type_ == "Failed").unwrap();
    assert_eq!((failed.reason.as_deref(), failed.message.as_deref()), (Some("FailedIndexes"), Some("Job has failed indexes")));
    // Replacement pods carry the index failure count.
    let retried = w.list(("", "pods"), "default").into_iter().filter(|p| p.name().starts_with("bli-0-")).count();
    assert_eq!(retried, 2);
}
