//! The CronJob controller (pkg/controller/cronjob/cronjob_controllerv2.go) with a cron
//! schedule parser following robfig/cron's standard 5-field syntax (lists, ranges, steps,
//! month/day names, `@hourly`-style macros, DOM/DOW "either" semantics when both are
//! restricted).
//!
//! Deviations: CronJob and Job are JSON-kept kinds (decoded per sync); only UTC schedules are
//! supported (`timeZone` other than UTC/Etc/UTC is reported as UnknownTimeZone and skipped).

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use crate::job::is_finished;
use kubesim_api::k8s_openapi::api::batch::v1::{CronJob, Job};
use kubesim_api::k8s_openapi::api::core::v1::ObjectReference;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::time::{millis_of, time_at, EPOCH_UNIX_SECONDS};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions, Propagation};
use kubesim_runtime::Ctx;
use kubesim_store::EventType;
use std::collections::BTreeMap;

/// `batch.kubernetes.io/cronjob-scheduled-timestamp`.
pub const SCHEDULED_TIMESTAMP_ANNOTATION: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";
/// Modelled processing latency.
pub const CRON_LATENCY_MS: Millis = 10;

/// A parsed cron schedule: bit sets per field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
    dom_star: bool,
    dow_star: bool,
}

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn parse_value(text: &str, names: &[&str], offset: u32) -> Result<u32, String> {
    let lower = text.to_ascii_lowercase();
    if let Some(i) = names.iter().position(|n| *n == lower) {
        return Ok(i as u32 + offset);
    }
    text.parse::<u32>().map_err(|_| format!("failed to parse int from {text}: strconv.Atoi: parsing {text:?}: invalid syntax"))
}

fn parse_field(field: &str, min: u32, max: u32, names: &[&str], offset: u32) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (r, Some(s.parse::<u32>().map_err(|_| format!("failed to parse int from {s}"))?)),
            None => (part, None),
        };
        let (mut start, mut end, mut part_star) = if range == "*" || range == "?" {
            (min, max, true)
        } else {
            match range.split_once('-') {
                Some((a, b)) => (parse_value(a, names, offset)?, parse_value(b, names, offset)?, false),
                None => {
                    let v = parse_value(range, names, offset)?;
                    (v, v, false)
                }
            }
        };
        if let Some(s) = step {
            if s == 0 {
                return Err(format!("step of range should be a positive number: {part}"));
            }
            if !range.contains('-') && !part_star {
                end = max; // "N/step" means N-max/step
            }
            if s > 1 {
                part_star = false;
            }
        }
        if start < min {
            return Err(format!("beginning of range ({start}) below minimum ({min}): {part}"));
        }
        if end > max {
            return Err(format!("end of range ({end}) above maximum ({max}): {part}"));
        }
        if start > end {
            return Err(format!("beginning of range ({start}) beyond end of range ({end}): {part}"));
        }
        let step = step.unwrap_or(1);
        while start <= end {
            bits |= 1 << start;
            start += step;
        }
        star |= part_star;
    }
    Ok((bits, star))
}

/// Parses a cron schedule (`*/5 * * * *`, `0 3 * * MON-FRI`, `@daily`, ...).
pub fn parse_schedule(text: &str) -> Result<Schedule, String> {
    let text = text.trim();
    let expanded = match text {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other => other,
    };
    let text = expanded.strip_prefix("TZ=").map(|_| expanded).unwrap_or(expanded);
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    let (minute, _) = parse_field(fields[0], 0, 59, &[], 0)?;
    let (hour, _) = parse_field(fields[1], 0, 23, &[], 0)?;
    let (dom, dom_star) = parse_field(fields[2], 1, 31, &[], 0)?;
    let (month, _) = parse_field(fields[3], 1, 12, &MONTHS, 1)?;
    let (mut dow, dow_star) = parse_field(fields[4], 0, 7, &DAYS, 0)?;
    if dow & (1 << 7) != 0 {
        dow |= 1; // 7 is Sunday too
    }
    Ok(Schedule { minute, hour, dom, month, dow, dom_star, dow_star })
}

/// (year, month 1-12, day 1-31) of a day count since 1970-01-01 (Hinnant's civil_from_days).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl Schedule {
    fn day_matches(&self, days: i64) -> bool {
        let (_, _, d) = civil_from_days(days);
        let weekday = ((days + 4).rem_euclid(7)) as u32; // 1970-01-01 was a Thursday
        let dom_match = self.dom & (1 << d) != 0;
        let dow_match = self.dow & (1 << weekday) != 0;
        if self.dom_star || self.dow_star {
            dom_match && dow_match
        } else {
            dom_match || dow_match
        }
    }

    /// The first activation strictly after `unix_seconds` (UTC, minute granularity), within
    /// five years.
    pub fn next_after(&self, unix_seconds: i64) -> Option<i64> {
        let mut t = (unix_seconds.div_euclid(60) + 1) * 60;
        let limit = unix_seconds + 5 * 366 * 86_400;
        while t <= limit {
            let days = t.div_euclid(86_400);
            let (_, month, _) = civil_from_days(days);
            if self.month & (1 << month) == 0 || !self.day_matches(days) {
                t = (days + 1) * 86_400;
                continue;
            }
            let secs = t.rem_euclid(86_400);
            let hour = (secs / 3600) as u32;
            if self.hour & (1 << hour) == 0 {
                t = days * 86_400 + (hour as i64 + 1) * 3600;
                continue;
            }
            let minute = ((secs % 3600) / 60) as u32;
            if self.minute & (1 << minute) == 0 {
                t += 60;
                continue;
            }
            return Some(t);
        }
        None
    }
}

fn unix_of(ms: Millis) -> i64 {
    EPOCH_UNIX_SECONDS + (ms / 1000) as i64
}

fn ms_of_unix(seconds: i64) -> Millis {
    ((seconds - EPOCH_UNIX_SECONDS).max(0) as Millis) * 1000
}

/// `mostRecentScheduleTime`: the latest activation in (earliest, now], and how many were missed.
pub fn most_recent_schedule(schedule: &Schedule, earliest_unix: i64, now_unix: i64) -> (Option<i64>, u32) {
    let mut last = None;
    let mut count = 0u32;
    let mut t = earliest_unix;
    while let Some(next) = schedule.next_after(t) {
        if next > now_unix {
            break;
        }
        last = Some(next);
        count += 1;
        t = next;
        if count > 10_000 {
            break;
        }
    }
    (last, count)
}

/// The CronJob controller.
#[derive(Clone, Debug)]
pub struct CronJobController {
    cronjobs: Cache,
    jobs: Cache,
    queue: WorkQueue,
}

impl Default for CronJobController {
    fn default() -> Self {
        CronJobController::new()
    }
}

fn job_ref(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some("batch/v1".into()),
        kind: Some("Job".into()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        resource_version: job.metadata.resource_version.clone(),
        field_path: None,
    }
}

fn job_condition(job: &Job) -> Option<&str> {
    job.status.as_ref()?.conditions.as_ref()?.iter().find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True").map(|c| c.type_.as_str())
}

impl CronJobController {
    /// A controller with empty caches.
    pub fn new() -> CronJobController {
        CronJobController { cronjobs: Cache::default(), jobs: Cache::default(), queue: WorkQueue::new(CRON_LATENCY_MS) }
    }

    fn owned_jobs(&self, cj: &CronJob) -> Vec<Job> {
        let uid = uid_of(&cj.metadata);
        self.jobs
            .in_namespace(cj.metadata.namespace.as_deref().unwrap_or(""))
            .filter(|o| controller_of(o.metadata()).is_some_and(|r| r.uid == uid))
            .filter_map(|o| decode::<Job>(o))
            .collect()
    }

    fn delete_job(&mut self, ctx: &mut Ctx, cj_obj: &Object, job: &Job) -> bool {
        let info = kind_info("batch/v1", "Job").expect("served");
        let name = job.metadata.name.clone().unwrap_or_default();
        match ctx.delete(
            info,
            job.metadata.namespace.as_deref().unwrap_or(""),
            &name,
            DeleteOptions { propagation: Some(Propagation::Background), ..Default::default() },
        ) {
            Ok(_) => {
                ctx.event(cj_obj, "Normal", "SuccessfulDelete", format!("Deleted job {name}"));
                true
            }
            Err(e) => {
                if !is_not_found(&e) {
                    ctx.event(cj_obj, "Warning", "FailedDelete", format!("Deleted job: {}", e.message));
                }
                false
            }
        }
    }

    /// syncCronJob.
    pub fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(cj_obj) = self.cronjobs.get(key).cloned() else { return Ok(()) };
        let Some(mut cj) = decode::<CronJob>(&cj_obj) else { return Ok(()) };
        let now = ctx.now;
        let original_status = cj.status.clone();
        let spec = cj.spec.clone().unwrap_or_default();
        let jobs = self.owned_jobs(&cj);
        let status = cj.status.get_or_insert_with(Default::default);
        let mut active: Vec<ObjectReference> = status.active.clone().unwrap_or_default();
        // Reconcile the active list with the jobs.
        for job in &jobs {
            let uid = job.metadata.uid.clone();
            let in_active = active.iter().any(|r| r.uid == uid);
            match job_condition(job) {
                Some(cond) => {
                    if in_active {
                        active.retain(|r| r.uid != uid);
                        ctx.event(
                            &cj_obj,
                            "Normal",
                            "SawCompletedJob",
                            format!("Saw completed job: {}, condition: {cond}", job.metadata.name.clone().unwrap_or_default()),
                        );
                    }
                    if cond == "Complete" {
                        let done = job.status.as_ref().and_then(|s| s.completion_time.clone());
                        if done.as_ref().map(millis_of) > status.last_successful_time.as_ref().map(millis_of) {
                            status.last_successful_time = done;
                        }
                    }
                }
                None => {
                    if !in_active {
                        active.push(job_ref(job));
                    }
                }
            }
        }
        active.retain(|r| {
            let found = jobs.iter().any(|j| j.metadata.uid == r.uid);
            if !found {
                ctx.event(&cj_obj, "Normal", "MissingJob", format!("Active job went missing: {}", r.name.clone().unwrap_or_default()));
            }
            found
        });
        status.active = (!active.is_empty()).then(|| active.clone());
        // History limits.
        self.cleanup_finished(ctx, &cj_obj, &jobs, spec.successful_jobs_history_limit.unwrap_or(3), spec.failed_jobs_history_limit.unwrap_or(1));
        let mut next_requeue: Option<Millis> = None;
        let mut result = Ok(());
        'schedule: {
            if cj.metadata.deletion_timestamp.is_some() || spec.suspend == Some(true) {
                break 'schedule;
            }
            if let Some(tz) = spec.time_zone.as_deref().filter(|tz| !matches!(*tz, "UTC" | "Etc/UTC")) {
                ctx.event(&cj_obj, "Warning", "UnknownTimeZone", format!("invalid timeZone: {tz:?}: unknown time zone {tz}"));
                break 'schedule;
            }
            let schedule = match parse_schedule(&spec.schedule) {
                Ok(s) => s,
                Err(e) => {
                    ctx.event(&cj_obj, "Warning", "UnparseableSchedule", format!("unparseable schedule: {:?} : {e}", spec.schedule));
                    break 'schedule;
                }
            };
            let status = cj.status.get_or_insert_with(Default::default);
            let mut earliest = status.last_schedule_time.as_ref().map(millis_of).unwrap_or_else(|| created_ms(&cj.metadata));
            if let Some(deadline) = spec.starting_deadline_seconds {
                earliest = earliest.max(now.saturating_sub(deadline.max(0) as Millis * 1000));
            }
            let now_unix = unix_of(now);
            if let Some(next) = schedule.next_after(now_unix) {
                next_requeue = Some(ms_of_unix(next) - now + 100);
            }
            let (scheduled, missed) = most_recent_schedule(&schedule, unix_of(earliest), now_unix);
            let Some(scheduled) = scheduled else { break 'schedule };
            if missed > 100 {
                ctx.event(
                    &cj_obj,
                    "Warning",
                    "TooManyMissedTimes",
                    format!("too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew"),
                );
            }
            let scheduled_ms = ms_of_unix(scheduled);
            if let Some(deadline) = spec.starting_deadline_seconds {
                if scheduled_ms + (deadline.max(0) as Millis) * 1000 < now {
                    let when = format!("{} +0000", time_at(scheduled_ms).0.strftime("%a, %d %b %Y %H:%M:%S"));
                    ctx.event(&cj_obj, "Warning", "MissSchedule", format!("Missed scheduled time to start a job: {when}"));
                    break 'schedule;
                }
            }
            let job_name = format!("{}-{}", key.1, scheduled / 60);
            if status.last_schedule_time.as_ref().map(millis_of) == Some(scheduled_ms) || active.iter().any(|r| r.name.as_deref() == Some(job_name.as_str())) {
                break 'schedule;
            }
            match spec.concurrency_policy.as_deref().unwrap_or("Allow") {
                "Forbid" if !active.is_empty() => {
                    ctx.event(
                        &cj_obj,
                        "Normal",
                        "JobAlreadyActive",
                        "Not starting job because prior execution is running and concurrency policy is Forbid".into(),
                    );
                    break 'schedule;
                }
                "Replace" => {
                    for r in active.clone() {
                        if let Some(job) = jobs.iter().find(|j| j.metadata.uid == r.uid) {
                            if self.delete_job(ctx, &cj_obj, job) {
                                active.retain(|a| a.uid != r.uid);
                            }
                        }
                    }
                }
                _ => {}
            }
            // Create the job.
            let template = spec.job_template.clone();
            let meta = template.metadata.clone().unwrap_or_default();
            let mut annotations = meta.annotations.clone().unwrap_or_default();
            annotations.insert(
                SCHEDULED_TIMESTAMP_ANNOTATION.into(),
                serde_json::to_value(time_at(scheduled_ms)).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            );
            let job = Job {
                metadata: ObjectMeta {
                    name: Some(job_name.clone()),
                    namespace: Some(key.0.clone()),
                    labels: meta.labels.clone(),
                    annotations: Some(annotations),
                    owner_references: Some(vec![controller_ref(&cj_obj)]),
                    ..Default::default()
                },
                spec: template.spec.clone(),
                status: None,
            };
            match ctx.create(encode(&job, "batch/v1", "Job")) {
                Ok(created) => {
                    self.jobs.put(created.clone());
                    ctx.event(&cj_obj, "Normal", "SuccessfulCreate", format!("Created job {job_name}"));
                    if let Some(j) = decode::<Job>(&created) {
                        active.push(job_ref(&j));
                    }
                }
                Err(e) if e.reason == "AlreadyExists" => {}
                Err(e) => {
                    ctx.event(&cj_obj, "Warning", "FailedCreate", format!("Error creating job: {}", e.message));
                    result = Err(e);
                    break 'schedule;
                }
            }
            let status = cj.status.get_or_insert_with(Default::default);
            status.last_schedule_time = Some(time_at(scheduled_ms));
            status.active = (!active.is_empty()).then(|| active.clone());
        }
        if cj.status != original_status && !(original_status.is_none() && cj.status == Some(Default::default())) {
            match ctx.update_status(encode(&cj, "batch/v1", "CronJob")) {
                Ok(updated) => {
                    self.cronjobs.put(updated);
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(after) = next_requeue {
            self.queue.add_after(key.clone(), after, ctx);
        }
        result
    }

    fn cleanup_finished(&mut self, ctx: &mut Ctx, cj_obj: &Object, jobs: &[Job], successful_limit: i32, failed_limit: i32) {
        let mut by_kind: BTreeMap<&str, Vec<&Job>> = BTreeMap::new();
        for job in jobs.iter().filter(|j| is_finished(j) && j.metadata.deletion_timestamp.is_none()) {
            by_kind.entry(job_condition(job).unwrap_or("")).or_default().push(job);
        }
        for (kind, limit) in [("Complete", successful_limit), ("Failed", failed_limit)] {
            let mut list = by_kind.remove(kind).unwrap_or_default();
            // Oldest (by start time, then creation) first.
            kubesim_api::sort::sort_by_key(&mut list, |j| {
                (j.status.as_ref().and_then(|s| s.start_time.as_ref()).map(millis_of).unwrap_or_else(|| created_ms(&j.metadata)), j.metadata.name.clone())
            });
            let excess = list.len() as i64 - limit.max(0) as i64;
            for job in list.into_iter().take(excess.max(0) as usize) {
                self.delete_job(ctx, cj_obj, job);
            }
        }
    }

    fn owner_key(&self, job: &Object) -> Option<Key> {
        self.cronjobs.controller_key(job, "CronJob")
    }
}

impl Reconciler for CronJobController {
    fn name(&self) -> &'static str {
        "cronjob-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("batch", "cronjobs")) => cronjobs,
        Informer::all(("batch", "jobs")) => jobs,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        match event.resource {
            ("batch", "cronjobs") => {
                // Status-only changes (our own writes) need no sync.
                let spec_of = |o: &Object| decode::<CronJob>(o).map(|c| (c.spec, c.metadata.deletion_timestamp));
                if event.event_type == EventType::Modified && change.old.as_deref().map(spec_of) == Some(spec_of(&event.object)) {
                    return;
                }
                self.queue.add(key_of(&event.object), ctx);
            }
            _ => {
                if let Some(key) = self.owner_key(&event.object) {
                    self.queue.add(key, ctx);
                }
            }
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        self.sync(key, ctx).map(|_| Action::AwaitChange)
    }
}
