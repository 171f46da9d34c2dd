//! The Job controller (pkg/controller/job/job_controller.go) and the TTL-after-finished
//! controller (pkg/controller/ttlafterfinished).
//!
//! Pods are created with the `batch.kubernetes.io/job-tracking` finalizer; finished pods are
//! first recorded in status.uncountedTerminatedPods, their finalizers removed, then moved into
//! the succeeded/failed counters. Terminal conditions are delayed as in v1.34: first the interim
//! SuccessCriteriaMet / FailureTarget, then Complete / Failed once no pod is terminating.
//! Pod creation respects the pod-failure backoff (10 s doubling, capped at 6 min) and slow-start
//! batches; Indexed jobs create pods named `<job>-<index>-` with the completion-index
//! annotation, label, hostname and JOB_COMPLETION_INDEX env var.
//!
//! Deviations: Job is a JSON-kept kind in kubesim's object model, so the controller decodes it
//! to the k8s-openapi type on each sync. The API server does not generate Job selectors; the
//! controller (re)applies SetDefaults_Job in memory and, for jobs without `manualSelector`,
//! selects and labels pods with
//! `batch.kubernetes.io/controller-uid` / `batch.kubernetes.io/job-name` (and the legacy
//! `controller-uid` / `job-name`) itself. podFailurePolicy (FailJob / Ignore / Count on exit
//! codes and pod conditions), successPolicy and backoffLimitPerIndex / maxFailedIndexes (per-index
//! failure counts from the failed pods, per-index backoff, status.failedIndexes) are modelled.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use crate::replicaset::slow_start_batch;
use kubesim_api::k8s_openapi::api::batch::v1::{Job, JobCondition, JobSpec, JobStatus, UncountedTerminatedPods};
use kubesim_api::k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector, Pod};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::selector::Selector;
use kubesim_api::time::{millis_of, time_at};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions, Propagation};
use kubesim_runtime::{Ctx, WatchEvent};
use kubesim_store::EventType;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// `batch.kubernetes.io/job-tracking`.
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// `batch.kubernetes.io/job-completion-index`.
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// `DefaultJobPodFailureBackOff`.
pub const POD_FAILURE_BACKOFF_MS: Millis = 10_000;
/// `MaxJobPodFailureBackOff`.
pub const MAX_POD_FAILURE_BACKOFF_MS: Millis = 360_000;
/// `MaxPodCreateDeletePerSync`.
pub const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;
/// Modelled processing latency.
pub const JOB_LATENCY_MS: Millis = 10;

/// SetDefaults_Job, applied to a copy.
pub fn defaulted_spec(spec: &JobSpec) -> JobSpec {
    let mut s = spec.clone();
    if s.completions.is_none() && s.parallelism.is_none() {
        s.completions = Some(1);
        s.parallelism = Some(1);
    }
    s.parallelism.get_or_insert(1);
    if s.backoff_limit.is_none() {
        s.backoff_limit = Some(if s.backoff_limit_per_index.is_some() { i32::MAX } else { 6 });
    }
    s.completion_mode.get_or_insert_with(|| "NonIndexed".into());
    s.suspend.get_or_insert(false);
    s.pod_replacement_policy.get_or_insert_with(|| if s.pod_failure_policy.is_some() { "Failed".into() } else { "TerminatingOrFailed".into() });
    s
}

/// The labels the API server adds to a Job's pod template (and selects on) when
/// manualSelector is not set.
pub fn generated_labels(job_name: &str, uid: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("batch.kubernetes.io/controller-uid".to_string(), uid.to_string()),
        ("batch.kubernetes.io/job-name".to_string(), job_name.to_string()),
        ("controller-uid".to_string(), uid.to_string()),
        ("job-name".to_string(), job_name.to_string()),
    ])
}

/// The backoff before creating replacement pods after `failures` consecutive failures
/// (`getRemainingTimeForFailuresCount`), in ms from the last failure.
pub fn failure_backoff_ms(failures: u32) -> Millis {
    if failures == 0 {
        return 0;
    }
    let mut backoff = POD_FAILURE_BACKOFF_MS;
    for _ in 1..failures {
        backoff *= 2;
        if backoff >= MAX_POD_FAILURE_BACKOFF_MS {
            return MAX_POD_FAILURE_BACKOFF_MS;
        }
    }
    backoff
}

/// Formats a set of completed indexes as the Job status does (`1,3-5,7`; a pair is `1,2`).
pub fn format_indexes(indexes: &BTreeSet<i32>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut iter = indexes.iter().peekable();
    while let Some(&first) = iter.next() {
        let mut last = first;
        while iter.peek().is_some_and(|&&n| n == last + 1) {
            last = *iter.next().expect("peeked");
        }
        parts.push(match last - first {
            0 => first.to_string(),
            1 => format!("{first},{last}"),
            _ => format!("{first}-{last}"),
        });
    }
    parts.join(",")
}

/// Parses a completed-indexes string (`1,3-5`), keeping indexes below `completions`.
pub fn parse_indexes(text: &str, completions: i32) -> BTreeSet<i32> {
    let mut out = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse().unwrap_or(-1), b.parse().unwrap_or(-2)),
            None => {
                let v = part.parse().unwrap_or(-1);
                (v, v)
            }
        };
        for i in a.max(0)..=b {
            if i < completions {
                out.insert(i);
            }
        }
    }
    out
}

fn completion_index(pod: &Pod) -> Option<i32> {
    pod.metadata.annotations.as_ref()?.get(COMPLETION_INDEX)?.parse().ok()
}

fn has_finalizer(pod: &Pod) -> bool {
    pod.metadata.finalizers.iter().flatten().any(|f| f == JOB_TRACKING_FINALIZER)
}

fn condition<'a>(status: &'a JobStatus, type_: &str) -> Option<&'a JobCondition> {
    status.conditions.as_ref()?.iter().find(|c| c.type_ == type_ && c.status == "True")
}

/// Whether a Job has finished (Complete or Failed condition True).
pub fn is_finished(job: &Job) -> bool {
    job.status.as_ref().is_some_and(|s| condition(s, "Complete").is_some() || condition(s, "Failed").is_some())
}

fn new_condition(type_: &str, reason: &str, message: &str, now: Millis) -> JobCondition {
    JobCondition {
        type_: type_.into(),
        status: "True".into(),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        message: (!message.is_empty()).then(|| message.to_string()),
        last_probe_time: Some(time_at(now)),
        last_transition_time: Some(time_at(now)),
    }
}

/// `ensureJobConditionStatus`.
fn ensure_condition(list: &mut Vec<JobCondition>, type_: &str, status: &str, reason: &str, message: &str, now: Millis) -> bool {
    if let Some(c) = list.iter_mut().find(|c| c.type_ == type_) {
        if c.status != status || c.reason.as_deref().unwrap_or("") != reason || c.message.as_deref().unwrap_or("") != message {
            *c = JobCondition { status: status.into(), ..new_condition(type_, reason, message, now) };
            return true;
        }
        return false;
    }
    if status != "False" {
        list.push(JobCondition { status: status.into(), ..new_condition(type_, reason, message, now) });
        return true;
    }
    false
}

/// backoffLimitPerIndex bookkeeping for one sync.
#[derive(Clone, Debug, Default)]
struct IndexState {
    failed: BTreeSet<i32>,
    failures: BTreeMap<i32, u32>,
    last_failure: BTreeMap<i32, Millis>,
}

/// `batch.kubernetes.io/job-index-failure-count`.
pub const INDEX_FAILURE_COUNT: &str = "batch.kubernetes.io/job-index-failure-count";

#[derive(Clone, Debug, Default)]
struct BackoffRecord {
    failures_after_last_success: u32,
    last_failure: Option<Millis>,
    counted: BTreeSet<String>,
}

/// The Job controller.
#[derive(Clone, Debug)]
pub struct JobController {
    per_index: Option<IndexState>,
    failed_seen: BTreeMap<String, Millis>,
    jobs: Cache,
    pods: Cache,
    queue: WorkQueue,
    expectations: Expectations,
    backoff: BTreeMap<Key, BackoffRecord>,
}

impl Default for JobController {
    fn default() -> Self {
        JobController::new()
    }
}

impl JobController {
    /// A controller with empty caches.
    pub fn new() -> JobController {
        JobController {
            per_index: None,
            failed_seen: BTreeMap::new(),
            jobs: Cache::default(),
            pods: Cache::default(),
            queue: WorkQueue::new(JOB_LATENCY_MS),
            expectations: Expectations::default(),
            backoff: BTreeMap::new(),
        }
    }

    fn resolve(&self, namespace: &str, reference: &kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference) -> Option<Key> {
        self.jobs.resolve_controller_ref(namespace, reference, "Job")
    }

    fn effective_selector(job: &Job) -> Selector {
        let spec = job.spec.clone().unwrap_or_default();
        if spec.manual_selector == Some(true) || spec.selector.as_ref().is_some_and(|s| s.match_labels.is_some() || s.match_expressions.is_some()) {
            return Selector::from_label_selector(&spec.selector.unwrap_or_default());
        }
        let uid = uid_of(&job.metadata);
        Selector::from_label_selector(&LabelSelector {
            match_labels: Some(BTreeMap::from([("batch.kubernetes.io/controller-uid".to_string(), uid.to_string())])),
            match_expressions: None,
        })
    }

    fn on_pod(&mut self, event: &WatchEvent, old: Option<Arc<Object>>, ctx: &mut Ctx) {
        let pod = &event.object;
        if event.event_type == EventType::Deleted {
            // A deleted pod's failure is no longer counted from here: forget when it was seen.
            if let Some(uid) = pod.metadata().uid.as_deref() {
                self.failed_seen.remove(uid);
            }
        }
        let Some(reference) = controller_of(pod.metadata()) else { return };
        let Some(key) = self.resolve(pod.namespace(), reference) else {
            // An orphan with our finalizer (its Job is gone): release it.
            if reference.kind == "Job" && pod.as_pod().is_some_and(has_finalizer) && event.event_type != EventType::Deleted {
                let _ = patch_meta(ctx, pod, remove_tracking_finalizer);
            }
            return;
        };
        match event.event_type {
            EventType::Added => {
                if is_deleting(pod.metadata()) {
                    self.expectations.deletion_observed(&key, &key_of(pod));
                } else {
                    self.expectations.creation_observed(&key);
                }
            }
            EventType::Deleted => self.expectations.deletion_observed(&key, &key_of(pod)),
            EventType::Modified => {
                if is_deleting(pod.metadata()) && old.as_ref().is_some_and(|o| !is_deleting(o.metadata())) {
                    self.expectations.deletion_observed(&key, &key_of(pod));
                }
            }
        }
        self.queue.add(key, ctx);
    }

    /// syncJob.
    pub fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.jobs.get(key).cloned() else {
            self.expectations.forget(key);
            self.backoff.remove(key);
            return Ok(());
        };
        let Some(mut job) = decode::<Job>(&object) else { return Ok(()) };
        if is_finished(&job) {
            return Ok(());
        }
        let now = ctx.now;
        let spec = defaulted_spec(&job.spec.clone().unwrap_or_default());
        let satisfied = self.expectations.satisfied(key, now);
        let selector = Self::effective_selector(&job);
        let candidates: Vec<Arc<Object>> = self.pods.claim_candidates(&key.0, object.metadata().uid.as_deref().unwrap_or("")).cloned().collect();
        let claimed = claim(ctx, &object, &selector, candidates, &mut self.pods)?;
        let pods: Vec<Pod> = claimed.iter().filter_map(|o| o.as_pod()).cloned().collect();
        let status = job.status.get_or_insert_with(Default::default);
        let mut uncounted = status.uncounted_terminated_pods.clone().unwrap_or_default();
        let unc_succ: BTreeSet<String> = uncounted.succeeded.clone().unwrap_or_default().into_iter().collect();
        let unc_fail: BTreeSet<String> = uncounted.failed.clone().unwrap_or_default().into_iter().collect();
        let replace_failed_only = spec.pod_replacement_policy.as_deref() == Some("Failed");
        let is_failed = |p: &Pod| pod_phase(p) == "Failed" || (!replace_failed_only && p.metadata.deletion_timestamp.is_some() && pod_phase(p) != "Succeeded");
        let active_pods: Vec<&Pod> = pods.iter().filter(|p| is_pod_active(p)).collect();
        let mut terminating = pods.iter().filter(|p| p.metadata.deletion_timestamp.is_some() && !is_pod_terminal(p)).count() as i32;
        let mut ready = active_pods.iter().filter(|p| is_pod_ready(p)).count() as i32;
        let uid = |p: &Pod| p.metadata.uid.clone().unwrap_or_default();
        let indexed = spec.completion_mode.as_deref() == Some("Indexed");
        let completions = spec.completions;
        let valid = |p: &Pod| !indexed || completion_index(p).is_some_and(|i| i < completions.unwrap_or(0));
        let new_succeeded: Vec<&Pod> =
            pods.iter().filter(|p| has_finalizer(p) && !unc_succ.contains(&uid(p)) && valid(p) && pod_phase(p) == "Succeeded").collect();
        let new_failed: Vec<&Pod> = pods.iter().filter(|p| has_finalizer(p) && !unc_fail.contains(&uid(p)) && valid(p) && is_failed(p)).collect();
        let mut succeeded = status.succeeded.unwrap_or(0) + new_succeeded.len() as i32 + unc_succ.len() as i32;
        let policy = spec.pod_failure_policy.clone();
        let counted_failures = new_failed.iter().filter(|p| match_pod_failure_policy(policy.as_ref(), p).1).count() as i32;
        let failed = status.failed.unwrap_or(0) + counted_failures + unc_fail.len() as i32;
        let suspended = spec.suspend == Some(true);
        if status.start_time.is_none() && !suspended {
            status.start_time = Some(time_at(now));
        }
        // Backoff record.
        let record = self.backoff.entry(key.clone()).or_default();
        for p in &new_succeeded {
            if record.counted.insert(uid(p)) {
                record.failures_after_last_success = 0;
                record.last_failure = None;
            }
        }
        for p in &new_failed {
            if record.counted.insert(uid(p)) {
                record.failures_after_last_success += 1;
                record.last_failure = Some(now);
            }
        }
        let record = record.clone();
        // Finished?
        let mut finished: Option<JobCondition> = condition(status, "SuccessCriteriaMet").cloned();
        if finished.is_none() {
            if let Some(target) = condition(status, "FailureTarget") {
                finished = Some(new_condition("Failed", target.reason.as_deref().unwrap_or(""), target.message.as_deref().unwrap_or(""), now));
            } else if let Some(message) = pods.iter().filter(|p| is_failed(p)).find_map(|p| match_pod_failure_policy(policy.as_ref(), p).0) {
                finished = Some(new_condition("FailureTarget", "PodFailurePolicy", &message, now));
            }
        }
        if finished.is_none() {
            let past_deadline = spec
                .active_deadline_seconds
                .is_some_and(|d| !suspended && status.start_time.as_ref().is_some_and(|s| now >= millis_of(s) + d as Millis * 1000));
            if failed > spec.backoff_limit.unwrap_or(6) || past_backoff_limit_on_failure(&spec, &pods) {
                finished = Some(new_condition("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit", now));
            } else if past_deadline {
                finished = Some(new_condition("FailureTarget", "DeadlineExceeded", "Job was active longer than specified deadline", now));
            } else if let (Some(d), false) = (spec.active_deadline_seconds, suspended) {
                let start = status.start_time.as_ref().map(millis_of).unwrap_or(now);
                let at = start + d as Millis * 1000;
                self.queue.add_after(key.clone(), at.saturating_sub(now).max(1), ctx);
            }
        }
        // Indexed: succeeded = completed indexes.
        let mut succeeded_indexes = BTreeSet::new();
        let prev_indexes = parse_indexes(status.completed_indexes.as_deref().unwrap_or(""), completions.unwrap_or(0));
        if indexed {
            succeeded_indexes = prev_indexes.clone();
            for p in &pods {
                if pod_phase(p) == "Succeeded" {
                    if let Some(i) = completion_index(p).filter(|i| *i < completions.unwrap_or(0)) {
                        succeeded_indexes.insert(i);
                    }
                }
            }
            succeeded = succeeded_indexes.len() as i32;
            if let Some(limit) = spec.backoff_limit_per_index {
                let mut state =
                    IndexState { failed: parse_indexes(status.failed_indexes.as_deref().unwrap_or(""), completions.unwrap_or(0)), ..Default::default() };
                for p in pods.iter().filter(|p| pod_phase(p) == "Failed") {
                    let Some(i) = completion_index(p).filter(|i| *i < completions.unwrap_or(0)) else { continue };
                    if !match_pod_failure_policy(policy.as_ref(), p).1 {
                        continue;
                    }
                    let uid = p.metadata.uid.clone().unwrap_or_default();
                    let seen = *self.failed_seen.entry(uid).or_insert(now);
                    let prior: u32 = p.metadata.annotations.as_ref().and_then(|a| a.get(INDEX_FAILURE_COUNT)).and_then(|v| v.parse().ok()).unwrap_or(0);
                    let count = state.failures.entry(i).or_insert(0);
                    *count = (*count).max(prior + 1);
                    let last = state.last_failure.entry(i).or_insert(seen);
                    *last = (*last).max(seen);
                    let fail_index = match_pod_failure_policy(policy.as_ref(), p).2.as_deref() == Some("FailIndex");
                    if *count as i64 > limit as i64 || fail_index {
                        state.failed.insert(i);
                    }
                }
                for i in &succeeded_indexes {
                    state.failed.remove(i);
                }
                if finished.is_none() {
                    let failed_count = state.failed.len() as i32;
                    if spec.max_failed_indexes.is_some_and(|m| failed_count > m) {
                        finished = Some(new_condition(
                            "FailureTarget",
                            "MaxFailedIndexesExceeded",
                            "Job has exceeded the specified maximal number of failed indexes",
                            now,
                        ));
                    } else if failed_count > 0 && failed_count + succeeded_indexes.len() as i32 >= completions.unwrap_or(0) {
                        finished = Some(new_condition("FailureTarget", "FailedIndexes", "Job has failed indexes", now));
                    }
                }
                status.failed_indexes = Some(format_indexes(&state.failed));
                self.per_index = Some(state);
            } else {
                self.per_index = None;
            }
            if finished.is_none() {
                if let Some(message) = match_success_policy(spec.success_policy.as_ref(), completions.unwrap_or(0), &succeeded_indexes) {
                    finished = Some(new_condition("SuccessCriteriaMet", "SuccessPolicy", &message, now));
                }
            }
        } else {
            self.per_index = None;
        }
        let mut active = active_pods.len() as i32;
        let mut manage_error = None;
        let job_object = Object::Dynamic(Box::new(match &*object {
            Object::Dynamic(d) => (**d).clone(),
            _ => return Ok(()),
        }));
        if finished.is_some() {
            let (deleted, deleted_ready, err) = self.delete_pods(&job_object, &active_pods, false, ctx);
            if deleted != active || !satisfied {
                finished = None;
            }
            active -= deleted;
            terminating += deleted;
            ready -= deleted_ready;
            manage_error = err;
        } else {
            let mut manage_called = false;
            if satisfied && job.metadata.deletion_timestamp.is_none() {
                manage_called = true;
                match self.manage(key, &job, &job_object, &spec, &active_pods, succeeded, terminating, &succeeded_indexes, &record, ctx) {
                    Ok((a, t, r)) => {
                        active = a;
                        terminating += t;
                        ready -= r;
                    }
                    Err((a, e)) => {
                        active = a;
                        manage_error = Some(e);
                    }
                }
            }
            let complete = match completions {
                None => succeeded > 0 && active == 0,
                Some(c) => succeeded >= c && active == 0,
            };
            let status = job.status.get_or_insert_with(Default::default);
            if complete {
                finished = Some(new_condition("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods", now));
            } else if manage_called {
                let conditions = status.conditions.get_or_insert_with(Vec::new);
                if suspended {
                    if ensure_condition(conditions, "Suspended", "True", "JobSuspended", "Job suspended", now) {
                        ctx.event(&job_object, "Normal", "Suspended", "Job suspended".into());
                    }
                } else if ensure_condition(conditions, "Suspended", "False", "JobResumed", "Job resumed", now) {
                    ctx.event(&job_object, "Normal", "Resumed", "Job resumed".into());
                    status.start_time = Some(time_at(now));
                }
                if conditions.is_empty() {
                    status.conditions = None;
                }
            }
        }
        let status = job.status.get_or_insert_with(Default::default);
        status.active = nz(active);
        status.ready = Some(ready.max(0));
        status.terminating = Some(terminating.max(0));
        // trackJobStatusAndRemoveFinalizers
        let mut to_remove: Vec<Pod> = Vec::new();
        let mut unc_s: Vec<String> = uncounted.succeeded.take().unwrap_or_default();
        let mut unc_f: Vec<String> = uncounted.failed.take().unwrap_or_default();
        let failing = finished.as_ref().is_some_and(|c| c.type_ != "SuccessCriteriaMet");
        let mut sorted_pods = pods.clone();
        if indexed {
            kubesim_api::sort::sort_by_key(&mut sorted_pods, |p| completion_index(p).unwrap_or(i32::MAX));
        }
        for p in &sorted_pods {
            if !has_finalizer(p) {
                continue;
            }
            let considered_failed = is_failed(p);
            let can_remove = job.metadata.deletion_timestamp.is_some() || finished.is_some() || pod_phase(p) == "Succeeded" || considered_failed;
            if !can_remove {
                continue;
            }
            to_remove.push(p.clone());
            let id = uid(p);
            if pod_phase(p) == "Succeeded" && !unc_f.contains(&id) {
                if !indexed && !unc_s.contains(&id) {
                    unc_s.push(id);
                }
            } else if (considered_failed || failing)
                && !unc_f.contains(&id)
                && valid(p)
                && (!considered_failed || match_pod_failure_policy(policy.as_ref(), p).1)
            {
                unc_f.push(id);
            }
        }
        let status = job.status.get_or_insert_with(Default::default);
        if indexed {
            status.succeeded = nz(succeeded_indexes.len() as i32);
            let text = format_indexes(&succeeded_indexes);
            status.completed_indexes = (!text.is_empty()).then_some(text);
        }
        let final_condition = match &finished {
            Some(c) if c.type_ == "FailureTarget" => {
                status.conditions.get_or_insert_with(Vec::new).push(c.clone());
                Some(new_condition("Failed", c.reason.as_deref().unwrap_or(""), c.message.as_deref().unwrap_or(""), now))
            }
            Some(c) if c.type_ == "SuccessCriteriaMet" => {
                if condition(status, "SuccessCriteriaMet").is_none() {
                    status.conditions.get_or_insert_with(Vec::new).push(c.clone());
                }
                Some(new_condition("Complete", c.reason.as_deref().unwrap_or(""), c.message.as_deref().unwrap_or(""), now))
            }
            other => other.clone(),
        };
        status.uncounted_terminated_pods =
            Some(UncountedTerminatedPods { succeeded: (!unc_s.is_empty()).then(|| unc_s.clone()), failed: (!unc_f.is_empty()).then(|| unc_f.clone()) });
        let original_status = decode::<Job>(&object).and_then(|j| j.status).unwrap_or_default();
        if job.status.as_ref() != Some(&original_status) {
            job = self.write_status(&job, ctx)?;
        }
        // Remove finalizers, then count.
        let mut removed: BTreeSet<String> = BTreeSet::new();
        let mut remove_error = None;
        for p in &to_remove {
            let pod_object = Object::Pod(Box::new(p.clone()));
            match patch_meta(ctx, &pod_object, remove_tracking_finalizer) {
                Ok(updated) => {
                    self.pods.put(updated);
                    removed.insert(uid(p));
                }
                Err(e) if is_not_found(&e) => {
                    removed.insert(uid(p));
                }
                Err(e) => {
                    remove_error.get_or_insert(e);
                }
            }
        }
        // Pods without finalizers anymore are counted.
        let with_finalizer: BTreeSet<String> = pods.iter().filter(|p| has_finalizer(p) && !removed.contains(&uid(p))).map(uid).collect();
        let status = job.status.get_or_insert_with(Default::default);
        let mut uncounted = status.uncounted_terminated_pods.clone().unwrap_or_default();
        let (keep_s, done_s): (Vec<String>, Vec<String>) = uncounted.succeeded.take().unwrap_or_default().into_iter().partition(|u| with_finalizer.contains(u));
        let (keep_f, done_f): (Vec<String>, Vec<String>) = uncounted.failed.take().unwrap_or_default().into_iter().partition(|u| with_finalizer.contains(u));
        if !indexed {
            status.succeeded = nz(status.succeeded.unwrap_or(0) + done_s.len() as i32);
        }
        status.failed = nz(status.failed.unwrap_or(0) + done_f.len() as i32);
        let no_uncounted = keep_s.is_empty() && keep_f.is_empty();
        status.uncounted_terminated_pods =
            Some(UncountedTerminatedPods { succeeded: (!keep_s.is_empty()).then_some(keep_s), failed: (!keep_f.is_empty()).then_some(keep_f) });
        // enactJobFinished
        let mut finished_now = None;
        if let Some(c) = final_condition {
            if no_uncounted && status.terminating.unwrap_or(0) == 0 {
                let conditions = status.conditions.get_or_insert_with(Vec::new);
                ensure_condition(conditions, &c.type_, "True", c.reason.as_deref().unwrap_or(""), c.message.as_deref().unwrap_or(""), now);
                if c.type_ == "Complete" {
                    status.completion_time = Some(time_at(now));
                }
                finished_now = Some(c);
            }
        }
        let stored_status = self.jobs.get(key).and_then(|o| decode::<Job>(o)).and_then(|j| j.status).unwrap_or_default();
        if job.status.as_ref() != Some(&stored_status) {
            job = self.write_status(&job, ctx)?;
            if let Some(c) = finished_now {
                let job_object = encode(&job, "batch/v1", "Job");
                if c.type_ == "Complete" {
                    if completions.is_some_and(|n| job.status.as_ref().and_then(|s| s.succeeded).unwrap_or(0) > n) {
                        ctx.event(&job_object, "Warning", "TooManySucceededPods", "Too many succeeded pods running after completion count reached".into());
                    }
                    ctx.event(&job_object, "Normal", "Completed", "Job completed".into());
                } else {
                    ctx.event(&job_object, "Warning", c.reason.as_deref().unwrap_or(""), c.message.clone().unwrap_or_default());
                }
            }
        }
        if let Some(e) = remove_error {
            return Err(e);
        }
        match manage_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn write_status(&mut self, job: &Job, ctx: &mut Ctx) -> Result<Job, ApiError> {
        let updated = ctx.update_status(encode(job, "batch/v1", "Job"))?;
        self.jobs.put(updated.clone());
        Ok(decode::<Job>(&updated).unwrap_or_else(|| job.clone()))
    }

    /// Deletes pods (removing the tracking finalizer first when `remove_finalizer`); returns
    /// (deleted, deleted ready, first error).
    fn delete_pods(&mut self, job: &Object, pods: &[&Pod], remove_finalizer: bool, ctx: &mut Ctx) -> (i32, i32, Option<ApiError>) {
        let info = kind_info("v1", "Pod").expect("served");
        let mut deleted = 0;
        let mut deleted_ready = 0;
        let mut error = None;
        for pod in pods {
            let name = pod.metadata.name.clone().unwrap_or_default();
            let ns = pod.metadata.namespace.clone().unwrap_or_default();
            if remove_finalizer && has_finalizer(pod) {
                if let Err(e) = patch_meta(ctx, &Object::Pod(Box::new((*pod).clone())), remove_tracking_finalizer) {
                    if !is_not_found(&e) {
                        error.get_or_insert(e);
                        continue;
                    }
                }
            }
            match ctx.delete(info, &ns, &name, DeleteOptions::default()) {
                Ok(_) => {
                    deleted += 1;
                    if is_pod_ready(pod) {
                        deleted_ready += 1;
                    }
                    ctx.event(job, "Normal", "SuccessfulDelete", format!("Deleted pod: {name}"));
                }
                Err(e) if is_not_found(&e) => {
                    deleted += 1;
                }
                Err(e) => {
                    ctx.event(job, "Warning", "FailedDelete", format!("Error deleting: {}", e.message));
                    error.get_or_insert(e);
                }
            }
        }
        (deleted, deleted_ready, error)
    }

    /// manageJob: returns (active, terminating added, ready removed) or (active, error).
    #[allow(clippy::too_many_arguments)]
    fn manage(
        &mut self,
        key: &Key,
        job: &Job,
        job_object: &Object,
        spec: &JobSpec,
        active_pods: &[&Pod],
        succeeded: i32,
        terminating: i32,
        succeeded_indexes: &BTreeSet<i32>,
        record: &BackoffRecord,
        ctx: &mut Ctx,
    ) -> Result<(i32, i32, i32), (i32, ApiError)> {
        let mut active = active_pods.len() as i32;
        let parallelism = spec.parallelism.unwrap_or(1);
        let indexed = spec.completion_mode.as_deref() == Some("Indexed");
        let completions = spec.completions;
        if spec.suspend == Some(true) {
            let mut victims: Vec<&Pod> = active_pods.to_vec();
            kubesim_api::sort::sort_by(&mut victims, |a, b| active_pods_order(a, b));
            let keys: Vec<Key> =
                victims.iter().map(|p| (p.metadata.namespace.clone().unwrap_or_default(), p.metadata.name.clone().unwrap_or_default())).collect();
            self.expectations.expect_deletions(key, keys, ctx.now);
            let (deleted, ready, err) = self.delete_pods(job_object, &victims, true, ctx);
            return match err {
                Some(e) => Err((active - deleted, e)),
                None => Ok((active - deleted, deleted, ready)),
            };
        }
        let want_active = match completions {
            None => {
                if succeeded > 0 {
                    active
                } else {
                    parallelism
                }
            }
            Some(c) => (c - succeeded).min(parallelism).max(0),
        };
        // Pods to remove: duplicates / out-of-range indexes first, then the excess.
        let mut remove: Vec<&Pod> = Vec::new();
        let mut left: Vec<&Pod> = Vec::new();
        if indexed {
            let mut seen = BTreeSet::new();
            let mut sorted: Vec<&Pod> = active_pods.to_vec();
            kubesim_api::sort::sort_by_key(&mut sorted, |p| completion_index(p).unwrap_or(i32::MAX));
            for p in sorted {
                match completion_index(p) {
                    Some(i) if i < completions.unwrap_or(0) && seen.insert(i) => left.push(p),
                    _ => remove.push(p),
                }
            }
        } else {
            left = active_pods.to_vec();
        }
        let rm_at_least = (active - want_active).max(0) as usize;
        if remove.len() < rm_at_least {
            kubesim_api::sort::sort_by(&mut left, |a, b| active_pods_order(a, b));
            let extra = rm_at_least - remove.len();
            remove.extend(left.iter().take(extra).copied());
        }
        remove.truncate(MAX_POD_CREATE_DELETE_PER_SYNC);
        if !remove.is_empty() {
            let keys: Vec<Key> =
                remove.iter().map(|p| (p.metadata.namespace.clone().unwrap_or_default(), p.metadata.name.clone().unwrap_or_default())).collect();
            self.expectations.expect_deletions(key, keys, ctx.now);
            let (deleted, ready, err) = self.delete_pods(job_object, &remove, true, ctx);
            return match err {
                Some(e) => Err((active - deleted, e)),
                None => Ok((active - deleted, deleted, ready)),
            };
        }
        let terminating_counted = if spec.pod_replacement_policy.as_deref() == Some("Failed") { terminating } else { 0 };
        let mut diff = want_active - terminating_counted - active;
        if diff <= 0 {
            return Ok((active, 0, 0));
        }
        let per_index = self.per_index.clone();
        if per_index.is_none() {
            let backoff = failure_backoff_ms(record.failures_after_last_success);
            if let Some(last) = record.last_failure {
                let elapsed = ctx.now.saturating_sub(last);
                if backoff > elapsed {
                    self.queue.add_after(key.clone(), backoff - elapsed, ctx);
                    return Ok((active, 0, 0));
                }
            }
        }
        diff = diff.min(MAX_POD_CREATE_DELETE_PER_SYNC as i32);
        let mut indexes: Vec<i32> = Vec::new();
        if indexed {
            let taken: BTreeSet<i32> = active_pods.iter().filter_map(|p| completion_index(p)).collect();
            let failed_indexes = per_index.as_ref().map(|s| s.failed.clone()).unwrap_or_default();
            let pending: Vec<i32> = (0..completions.unwrap_or(0))
                .filter(|i| !succeeded_indexes.contains(i) && !taken.contains(i) && !failed_indexes.contains(i))
                .take(diff as usize)
                .collect();
            // Per-index backoff: indexes whose last failure is too recent wait.
            let mut wait: Option<Millis> = None;
            indexes = pending
                .into_iter()
                .filter(|i| {
                    let Some(state) = &per_index else { return true };
                    let (Some(f), Some(last)) = (state.failures.get(i), state.last_failure.get(i)) else { return true };
                    let remaining = failure_backoff_ms(*f).saturating_sub(ctx.now.saturating_sub(*last));
                    if remaining > 0 {
                        wait = Some(wait.map_or(remaining, |w| w.min(remaining)));
                        return false;
                    }
                    true
                })
                .collect();
            if indexes.is_empty() {
                if let Some(w) = wait {
                    self.queue.add_after(key.clone(), w, ctx);
                }
            }
            diff = indexes.len() as i32;
        }
        if diff == 0 {
            return Ok((active, 0, 0));
        }
        self.expectations.expect_creations(key, diff as i64, ctx.now);
        let job_name = job.metadata.name.clone().unwrap_or_default();
        let job_uid = uid_of(&job.metadata).to_string();
        let mut template = spec.template.clone();
        let manual = spec.manual_selector == Some(true) || spec.selector.as_ref().is_some_and(|s| s.match_labels.is_some() || s.match_expressions.is_some());
        let meta = template.metadata.get_or_insert_with(Default::default);
        if !manual {
            meta.labels.get_or_insert_with(BTreeMap::new).extend(generated_labels(&job_name, &job_uid));
        }
        let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == JOB_TRACKING_FINALIZER) {
            finalizers.push(JOB_TRACKING_FINALIZER.into());
        }
        if indexed {
            if let Some(pod_spec) = template.spec.as_mut() {
                for c in pod_spec.containers.iter_mut().chain(pod_spec.init_containers.iter_mut().flatten()) {
                    let env = c.env.get_or_insert_with(Vec::new);
                    if !env.iter().any(|e| e.name == "JOB_COMPLETION_INDEX") {
                        env.push(EnvVar {
                            name: "JOB_COMPLETION_INDEX".into(),
                            value: None,
                            value_from: Some(EnvVarSource {
                                field_ref: Some(ObjectFieldSelector { api_version: None, field_path: format!("metadata.annotations['{COMPLETION_INDEX}']") }),
                                ..Default::default()
                            }),
                        });
                    }
                }
            }
        }
        let owner = controller_ref(job_object);
        let namespace = key.0.clone();
        let mut queue_indexes = indexes.into_iter();
        let (successes, error) = slow_start_batch(diff as usize, 1, || {
            let mut t = template.clone();
            let mut prefix = job_name.clone();
            if let Some(i) = queue_indexes.next() {
                let meta = t.metadata.get_or_insert_with(Default::default);
                meta.annotations.get_or_insert_with(BTreeMap::new).insert(COMPLETION_INDEX.into(), i.to_string());
                meta.labels.get_or_insert_with(BTreeMap::new).insert(COMPLETION_INDEX.into(), i.to_string());
                if let Some(state) = &per_index {
                    let count = state.failures.get(&i).copied().unwrap_or(0);
                    let a = meta.annotations.get_or_insert_with(BTreeMap::new);
                    a.insert(INDEX_FAILURE_COUNT.into(), count.to_string());
                    a.insert("batch.kubernetes.io/job-index-ignored-failure-count".into(), "0".into());
                }
                if let Some(s) = t.spec.as_mut() {
                    s.hostname = Some(format!("{job_name}-{i}"));
                }
                prefix = format!("{job_name}-{i}");
            }
            let pod = crate::replicaset::pod_from_template(&t, &namespace, &prefix, owner.clone());
            match ctx.create(Object::Pod(Box::new(pod))) {
                Ok(created) => {
                    ctx.event(job_object, "Normal", "SuccessfulCreate", format!("Created pod: {}", created.name()));
                    Ok(())
                }
                Err(e) if e.code == 403 && e.message.contains("because it is being terminated") => Ok(()),
                Err(e) => {
                    ctx.event(job_object, "Warning", "FailedCreate", format!("Error creating: {}", e.message));
                    Err(e)
                }
            }
        });
        for _ in successes..diff as usize {
            self.expectations.creation_observed(key);
        }
        active += successes as i32;
        match error {
            Some(e) => Err((active, e)),
            None => Ok((active, 0, 0)),
        }
    }
}

fn remove_tracking_finalizer(m: &mut kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) {
    if let Some(f) = m.finalizers.as_mut() {
        f.retain(|x| x != JOB_TRACKING_FINALIZER);
        if f.is_empty() {
            m.finalizers = None;
        }
    }
}

/// `matchPodFailurePolicy`: (FailJob message, whether the failure counts, action).
pub fn match_pod_failure_policy(
    policy: Option<&kubesim_api::k8s_openapi::api::batch::v1::PodFailurePolicy>,
    pod: &Pod,
) -> (Option<String>, bool, Option<String>) {
    let Some(policy) = policy else { return (None, true, None) };
    let status = pod.status.clone().unwrap_or_default();
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    for (index, rule) in policy.rules.iter().enumerate() {
        let matched: Option<String> = if let Some(req) = &rule.on_exit_codes {
            status
                .init_container_statuses
                .iter()
                .flatten()
                .chain(status.container_statuses.iter().flatten())
                .filter(|c| req.container_name.as_ref().is_none_or(|n| *n == c.name))
                .find_map(|c| {
                    let code = c.state.as_ref()?.terminated.as_ref()?.exit_code;
                    let listed = req.values.contains(&code);
                    let hit = code != 0 && if req.operator == "NotIn" { !listed } else { listed };
                    hit.then(|| format!("Container {} for pod {ns}/{name} failed with exit code {code} matching {} rule at index {index}", c.name, rule.action))
                })
        } else if let Some(patterns) = &rule.on_pod_conditions {
            patterns.iter().find_map(|pat| {
                status
                    .conditions
                    .iter()
                    .flatten()
                    .find(|c| c.type_ == pat.type_ && c.status == pat.status)
                    .map(|c| format!("Pod {ns}/{name} has condition {} matching {} rule at index {index}", c.type_, rule.action))
            })
        } else {
            None
        };
        if let Some(message) = matched {
            return match rule.action.as_str() {
                "Ignore" => (None, false, Some(rule.action.clone())),
                "FailJob" => (Some(message), true, Some(rule.action.clone())),
                _ => (None, true, Some(rule.action.clone())),
            };
        }
    }
    (None, true, None)
}

/// `matchSuccessPolicy`: the SuccessCriteriaMet message when a rule matches the succeeded
/// indexes.
pub fn match_success_policy(
    policy: Option<&kubesim_api::k8s_openapi::api::batch::v1::SuccessPolicy>,
    completions: i32,
    succeeded: &BTreeSet<i32>,
) -> Option<String> {
    let policy = policy?;
    if succeeded.is_empty() {
        return None;
    }
    for (index, rule) in policy.rules.iter().enumerate() {
        let hit = match &rule.succeeded_indexes {
            Some(text) => {
                let required = parse_indexes(text, completions);
                if required.is_empty() {
                    continue;
                }
                let done = required.intersection(succeeded).count() as i32;
                match rule.succeeded_count {
                    Some(n) => done >= n,
                    None => done == required.len() as i32,
                }
            }
            None => rule.succeeded_count.is_some_and(|n| succeeded.len() as i32 >= n),
        };
        if hit {
            return Some(format!("Matched rules at index {index}"));
        }
    }
    None
}

/// `pastBackoffLimitOnFailure`: restartPolicy OnFailure counts container restarts.
fn past_backoff_limit_on_failure(spec: &JobSpec, pods: &[Pod]) -> bool {
    if spec.template.spec.as_ref().and_then(|s| s.restart_policy.as_deref()) != Some("OnFailure") {
        return false;
    }
    let mut restarts = 0;
    for p in pods {
        if matches!(pod_phase(p), "Running" | "Pending") {
            let status = p.status.as_ref();
            restarts += status.and_then(|s| s.init_container_statuses.as_ref()).into_iter().flatten().map(|c| c.restart_count).sum::<i32>();
            restarts += status.and_then(|s| s.container_statuses.as_ref()).into_iter().flatten().map(|c| c.restart_count).sum::<i32>();
        }
    }
    let limit = spec.backoff_limit.unwrap_or(6);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

impl Reconciler for JobController {
    fn name(&self) -> &'static str {
        "job-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("batch", "jobs")) => jobs,
        Informer::all(("", "pods")) => pods,
    }
    /// Pods of its own kind and orphans only: the claim skips pods other controllers own.
    fn keeps(&self, resource: kubesim_store::Resource, object: &Object) -> bool {
        resource != ("", "pods") || controlled_by_kind_or_orphan(object, "Job")
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("batch", "jobs") => {
                if event.event_type == EventType::Deleted {
                    // Release the finalizers of the deleted Job's pods.
                    let uid = uid_of(event.object.metadata()).to_string();
                    let orphans: Vec<Arc<Object>> = self
                        .pods
                        .in_namespace(event.object.namespace())
                        .filter(|p| controller_of(p.metadata()).is_some_and(|r| r.uid == uid) && p.as_pod().is_some_and(has_finalizer))
                        .cloned()
                        .collect();
                    for p in orphans {
                        if let Ok(updated) = patch_meta(ctx, &p, remove_tracking_finalizer) {
                            self.pods.put(updated);
                        }
                    }
                }
                self.queue.add(key_of(&event.object), ctx);
            }
            _ => self.on_pod(event, change.old, ctx),
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}

/// The TTL-after-finished controller: deletes finished Jobs (foreground) once
/// ttlSecondsAfterFinished has passed since completionTime / the Failed condition.
#[derive(Clone, Debug, Default)]
pub struct TtlAfterFinishedController {
    jobs: Cache,
    timers: BTreeMap<u64, Key>,
    next_token: u64,
}

impl TtlAfterFinishedController {
    /// A controller with an empty cache.
    pub fn new() -> TtlAfterFinishedController {
        TtlAfterFinishedController { next_token: 100, ..Default::default() }
    }

    fn expire_at(job: &Job) -> Option<Millis> {
        let ttl = job.spec.as_ref()?.ttl_seconds_after_finished?;
        if job.metadata.deletion_timestamp.is_some() || !is_finished(job) {
            return None;
        }
        let status = job.status.as_ref()?;
        let finish = status
            .completion_time
            .as_ref()
            .map(millis_of)
            .or_else(|| condition(status, "Failed").and_then(|c| c.last_transition_time.as_ref()).map(millis_of))?;
        Some(finish + ttl.max(0) as Millis * 1000)
    }

    fn process(&mut self, key: &Key, ctx: &mut Ctx) {
        let Some(job) = self.jobs.get(key).and_then(|o| decode::<Job>(o)) else { return };
        let Some(at) = Self::expire_at(&job) else { return };
        if at > ctx.now {
            let token = self.next_token;
            self.next_token += 1;
            self.timers.insert(token, key.clone());
            ctx.after(at - ctx.now, token);
            return;
        }
        let info = kind_info("batch/v1", "Job").expect("served");
        let rv = job.metadata.resource_version.as_deref().and_then(|r| r.parse().ok());
        let _ = ctx.delete(info, &key.0, &key.1, DeleteOptions { propagation: Some(Propagation::Foreground), resource_version: rv, ..Default::default() });
    }
}

impl Reconciler for TtlAfterFinishedController {
    fn name(&self) -> &'static str {
        "ttl-after-finished-controller"
    }
    crate::informers! {
        queue: none;
        Informer::all(("batch", "jobs")) => jobs,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let keys: Vec<Key> = self.jobs.iter().map(|o| key_of(o)).collect();
        for key in keys {
            self.process(&key, ctx);
        }
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        if change.event.event_type != EventType::Deleted {
            self.process(&key_of(&change.event.object), ctx);
        }
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if let Some(key) = self.timers.remove(&token) {
            self.process(&key, ctx);
        }
    }
}
