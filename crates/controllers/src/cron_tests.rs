//! CronJob tests.

use crate::common::{decode, encode};
use crate::cronjob::*;
use crate::testing::{FakeKubelet, TestWorld};
use kubesim_api::k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, Job, JobSpec, JobTemplateSpec};
use kubesim_api::k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::time::EPOCH_UNIX_SECONDS;

const E: i64 = EPOCH_UNIX_SECONDS; // 2025-01-01T00:00:00Z, a Wednesday

// Mirrors robfig/cron spec_test.go (TestActivation / TestNext) semantics
#[test]
fn schedules_activate_like_robfig_cron() {
    let next = |s: &str, from: i64| parse_schedule(s).unwrap().next_after(from).map(|t| t - E);
    assert_eq!(next("*/5 * * * *", E), Some(300));
    assert_eq!(next("* * * * *", E + 30), Some(60));
    assert_eq!(next("@hourly", E), Some(3600));
    assert_eq!(next("@daily", E), Some(86_400));
    assert_eq!(next("30 2 * * *", E), Some(2 * 3600 + 1800));
    // Weekdays: Jan 1 is Wednesday → next Monday is Jan 6.
    assert_eq!(next("0 0 * * MON", E), Some(5 * 86_400));
    assert_eq!(next("0 0 * * 1-5", E), Some(86_400), "Thursday Jan 2");
    assert_eq!(next("0 0 * * 7", E), Some(4 * 86_400), "7 is Sunday (Jan 5)");
    // DOM and DOW both restricted: either matches (Monday Jan 6 comes before Feb 1).
    assert_eq!(next("0 0 1 * MON", E), Some(5 * 86_400));
    // DOM restricted, DOW starred: only DOM.
    assert_eq!(next("0 0 1 * *", E), Some(31 * 86_400), "Feb 1");
    assert_eq!(next("0 0 29 2 *", E), Some((3 * 365 + 31 + 28) * 86_400), "next Feb 29 is in 2028");
    assert_eq!(next("15-45/15 * * * *", E), Some(900));
    assert_eq!(next("5/20 * * * *", E), Some(300));
    assert_eq!(next("0 12 * JAN,FEB *", E), Some(12 * 3600));
    for bad in ["* * * *", "61 * * * *", "* 24 * * *", "*/0 * * * *", "a * * * *", "5-2 * * * *"] {
        assert!(parse_schedule(bad).is_err(), "{bad}");
    }
}

#[test]
fn most_recent_schedule_counts_missed_runs() {
    let s = parse_schedule("*/10 * * * *").unwrap();
    assert_eq!(most_recent_schedule(&s, E, E + 35 * 60), (Some(E + 30 * 60), 3));
    assert_eq!(most_recent_schedule(&s, E, E + 5 * 60), (None, 0));
}

fn cronjob(policy: &str) -> CronJob {
    CronJob {
        metadata: ObjectMeta { name: Some("tick".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(CronJobSpec {
            schedule: "*/1 * * * *".into(),
            concurrency_policy: Some(policy.into()),
            job_template: JobTemplateSpec {
                metadata: None,
                spec: Some(JobSpec {
                    template: PodTemplateSpec {
                        metadata: None,
                        spec: Some(PodSpec {
                            restart_policy: Some("Never".into()),
                            containers: vec![Container { name: "c".into(), image: Some("busybox".into()), ..Default::default() }],
                            ..Default::default()
                        }),
                    },
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

#[test]
fn cronjob_creates_a_job_per_minute_and_keeps_history() {
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(CronJobController::new())),
        Box::new(crate::framework::Controller(crate::job::JobController::new())),
        Box::new(crate::framework::Controller(crate::gc::GarbageCollector::new())),
        Box::new(FakeKubelet::new(1000, 1000)),
    ]);
    w.create(encode(&cronjob("Allow"), "batch/v1", "CronJob")).unwrap();
    w.run_for(5 * 60_000 + 30_000);
    let names: Vec<String> = w.list(("batch", "jobs"), "default").iter().map(|j| j.name().to_string()).collect();
    let minutes = (E / 60) as u64;
    assert_eq!(names, (3..=5).map(|m| format!("tick-{}", minutes + m)).collect::<Vec<_>>(), "successfulJobsHistoryLimit 3 keeps the newest");
    let job: Job = decode(&w.get(("batch", "jobs"), "default", &names[2]).unwrap()).unwrap();
    assert_eq!(job.metadata.annotations.as_ref().unwrap()[SCHEDULED_TIMESTAMP_ANNOTATION], "2025-01-01T00:05:00Z");
    assert_eq!(job.metadata.owner_references.as_ref().unwrap()[0].kind, "CronJob");
    let cj: CronJob = decode(&w.get(("batch", "cronjobs"), "default", "tick").unwrap()).unwrap();
    let status = cj.status.unwrap();
    assert_eq!(serde_json::to_value(status.last_schedule_time.unwrap()).unwrap(), "2025-01-01T00:05:00Z");
    assert!(status.last_successful_time.is_some());
    let events = w.events();
    assert!(events.contains(&("SuccessfulCreate".into(), format!("Created job tick-{}", minutes + 1))), "{events:?}");
    assert!(events.iter().any(|(r, m)| r == "SawCompletedJob" && m.ends_with("condition: Complete")), "{events:?}");
    assert!(events.contains(&("SuccessfulDelete".into(), format!("Deleted job tick-{}", minutes + 1))), "{events:?}");
}

#[test]
fn forbid_skips_runs_while_a_job_is_active() {
    let mut kubelet = FakeKubelet::new(1000, 1000);
    kubelet.run_ms = 150_000; // jobs take 2.5 minutes
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(CronJobController::new())),
        Box::new(crate::framework::Controller(crate::job::JobController::new())),
        Box::new(kubelet),
    ]);
    w.create(encode(&cronjob("Forbid"), "batch/v1", "CronJob")).unwrap();
    w.run_for(3 * 60_000 + 30_000);
    assert_eq!(w.list(("batch", "jobs"), "default").len(), 1);
    assert!(w.events().iter().any(|(r, _)| r == "JobAlreadyActive"));
}
