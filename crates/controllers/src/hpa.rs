//! The HorizontalPodAutoscaler controller (pkg/controller/podautoscaler: horizontal.go,
//! replica_calculator.go) for Resource metrics (cpu / memory, Utilization or AverageValue).
//!
//! Metrics: the controller reads per-pod usage from the resource metrics API (`Ctx::metrics`,
//! which the simulation's metrics-server publishes every 15 s from the kubelets' usage), and
//! otherwise from the pods' `kubesim.dev/cpu-usage` / `kubesim.dev/memory-usage` annotations
//! (per container, as the kubelet models them). Pods with neither are "missing" metrics.
//! Pods/Object/External metric sources are reported as unsupported (ScalingActive=False).
//! autoscaling/v1 objects (targetCPUUtilizationPercentage) are read as their v2 equivalent.

use crate::common::*;
use crate::framework::{Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::autoscaling::v2::{
    HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, HorizontalPodAutoscalerSpec, HorizontalPodAutoscalerStatus,
    MetricSpec, MetricStatus, MetricTarget, MetricValueStatus, ResourceMetricSource, ResourceMetricStatus,
};
use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::object::{kind_info, Object};
use kubesim_api::quantity::{format_cpu_milli, parse_milli};
use kubesim_api::selector::Selector;
use kubesim_api::time::{millis_of, time_at};
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::{Ctx, ResourceMetrics};
use kubesim_store::EventType;
use std::collections::BTreeMap;

/// --horizontal-pod-autoscaler-sync-period.
pub const SYNC_PERIOD_MS: Millis = 15_000;
/// --horizontal-pod-autoscaler-tolerance.
pub const TOLERANCE: f64 = 0.1;
/// --horizontal-pod-autoscaler-downscale-stabilization.
pub const DOWNSCALE_STABILIZATION_MS: Millis = 300_000;
/// --horizontal-pod-autoscaler-cpu-initialization-period.
pub const CPU_INITIALIZATION_PERIOD_MS: Millis = 300_000;
/// --horizontal-pod-autoscaler-initial-readiness-delay.
pub const INITIAL_READINESS_DELAY_MS: Millis = 30_000;
/// The window of a (modelled) metrics-server sample.
pub const METRIC_WINDOW_MS: Millis = 30_000;
/// Pod annotation with modelled per-container cpu usage (shared with the kubelet).
pub const CPU_USAGE_ANNOTATION: &str = "kubesim.dev/cpu-usage";
/// Pod annotation with modelled per-container memory usage (shared with the kubelet).
pub const MEMORY_USAGE_ANNOTATION: &str = "kubesim.dev/memory-usage";

/// What the replica calculator knows about one pod.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodSample {
    /// Pod name.
    pub name: String,
    /// status.phase.
    pub phase: String,
    /// Has a deletionTimestamp.
    pub deleting: bool,
    /// Ready condition: (status True?, lastTransitionTime).
    pub ready: Option<(bool, Millis)>,
    /// status.startTime.
    pub start_time: Option<Millis>,
    /// Sum of the containers' requests for the resource (milli-units), None if one is missing.
    pub request: Option<i64>,
    /// The metric sample: (value in milli-units, timestamp).
    pub metric: Option<(i64, Millis)>,
}

struct Groups {
    ready_count: usize,
    unready: Vec<usize>,
    missing: Vec<usize>,
    ignored: Vec<usize>,
}

/// `groupPods`.
fn group_pods(pods: &[PodSample], cpu: bool, now: Millis) -> Groups {
    let mut g = Groups { ready_count: 0, unready: Vec::new(), missing: Vec::new(), ignored: Vec::new() };
    for (i, p) in pods.iter().enumerate() {
        if p.deleting || p.phase == "Failed" {
            g.ignored.push(i);
            continue;
        }
        if p.phase == "Pending" {
            g.unready.push(i);
            continue;
        }
        let Some((_, ts)) = p.metric else {
            g.missing.push(i);
            continue;
        };
        if cpu {
            let unready = match (p.ready, p.start_time) {
                (Some((ready, ltt)), Some(start)) => {
                    if start + CPU_INITIALIZATION_PERIOD_MS > now {
                        !ready || ts < ltt + METRIC_WINDOW_MS
                    } else {
                        !ready && start + INITIAL_READINESS_DELAY_MS > ltt
                    }
                }
                _ => true,
            };
            if unready {
                g.unready.push(i);
                continue;
            }
        }
        g.ready_count += 1;
    }
    g
}

/// `GetResourceUtilizationRatio`: (ratio, utilization %, raw average) over pods with both a
/// metric and a request.
fn utilization_ratio(metrics: &BTreeMap<usize, i64>, pods: &[PodSample], target: i32) -> Result<(f64, i32, i64), String> {
    let mut total = 0i64;
    let mut requests = 0i64;
    let mut n = 0i64;
    for (i, v) in metrics {
        let Some(r) = pods[*i].request else { continue };
        total += v;
        requests += r;
        n += 1;
    }
    if requests == 0 {
        return Err("no metrics returned matched known pods".into());
    }
    let utilization = ((total * 100) / requests) as i32;
    Ok((utilization as f64 / target as f64, utilization, total / n))
}

fn within(ratio: f64) -> bool {
    ((1.0 - TOLERANCE)..=(1.0 + TOLERANCE)).contains(&ratio)
}

/// `GetResourceReplicas`: (replicas, utilization %, raw average usage).
pub fn resource_replicas(current: i32, target_utilization: i32, pods: &[PodSample], cpu: bool, now: Millis) -> Result<(i32, i32, i64), String> {
    if pods.is_empty() {
        return Err("no pods returned by selector while calculating replica count".into());
    }
    if pods.iter().all(|p| p.metric.is_none()) {
        return Err(format!("unable to get metrics for resource {}: no metrics returned from resource metrics API", if cpu { "cpu" } else { "memory" }));
    }
    let g = group_pods(pods, cpu, now);
    let mut metrics: BTreeMap<usize, i64> = pods.iter().enumerate().filter_map(|(i, p)| p.metric.map(|(v, _)| (i, v))).collect();
    for i in g.ignored.iter().chain(g.unready.iter()) {
        metrics.remove(i);
    }
    if metrics.is_empty() {
        return Err("did not receive metrics for targeted pods (pods might be unready)".into());
    }
    if let Some(p) = pods.iter().find(|p| p.request.is_none() && !p.deleting) {
        return Err(format!("missing request for {} in container of pod {}", if cpu { "cpu" } else { "memory" }, p.name));
    }
    let (ratio, utilization, raw) = utilization_ratio(&metrics, pods, target_utilization)?;
    let scale_up_with_unready = !g.unready.is_empty() && ratio > 1.0;
    if !scale_up_with_unready && g.missing.is_empty() {
        if within(ratio) {
            return Ok((current, utilization, raw));
        }
        return Ok(((ratio * g.ready_count as f64).ceil() as i32, utilization, raw));
    }
    if !g.missing.is_empty() {
        if ratio < 1.0 {
            let fallback = 100.max(target_utilization) as i64;
            for i in &g.missing {
                metrics.insert(*i, pods[*i].request.unwrap_or(0) * fallback / 100);
            }
        } else if ratio > 1.0 {
            for i in &g.missing {
                metrics.insert(*i, 0);
            }
        }
    }
    if scale_up_with_unready {
        for i in &g.unready {
            metrics.insert(*i, 0);
        }
    }
    let (new_ratio, _, _) = utilization_ratio(&metrics, pods, target_utilization)?;
    if within(new_ratio) || (ratio < 1.0 && new_ratio > 1.0) || (ratio > 1.0 && new_ratio < 1.0) {
        return Ok((current, utilization, raw));
    }
    let replicas = (new_ratio * metrics.len() as f64).ceil() as i32;
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return Ok((current, utilization, raw));
    }
    Ok((replicas, utilization, raw))
}

/// `GetRawResourceReplicas` (AverageValue targets): (replicas, average usage).
pub fn raw_resource_replicas(current: i32, target_average: i64, pods: &[PodSample], cpu: bool, now: Millis) -> Result<(i32, i64), String> {
    // Express the average target as a utilization of a synthetic request equal to the target.
    let normalized: Vec<PodSample> = pods.iter().map(|p| PodSample { request: Some(target_average), ..p.clone() }).collect();
    let (replicas, _, raw) = resource_replicas(current, 100, &normalized, cpu, now)?;
    Ok((replicas, raw))
}

/// `calculateScaleUpLimit` (legacy path): max(2 × current, 4).
pub fn scale_up_limit(current: i32) -> i32 {
    (2 * current).max(4)
}

/// `convertDesiredReplicasWithRules` (legacy path): (replicas, condition reason, message).
pub fn convert_desired_with_rules(current: i32, desired: i32, min: i32, max: i32) -> (i32, &'static str, &'static str) {
    let limit = scale_up_limit(current);
    let (maximum, reason, message) = if max > limit {
        (limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
    } else {
        (max, "TooManyReplicas", "the desired replica count is more than the maximum replica count")
    };
    if desired < min {
        return (min, "TooFewReplicas", "the desired replica count is less than the minimum replica count");
    }
    if desired > maximum {
        return (maximum, reason, message);
    }
    (desired, "DesiredWithinRange", "the desired count is within the acceptable range")
}

/// A recorded recommendation or scale event (virtual ms, value).
pub type Timestamped = (Millis, i32);

/// `stabilizeRecommendation` (legacy path, 5-minute downscale window): the highest
/// recommendation within the window, recording the new one.
pub fn stabilize(recommendations: &mut Vec<Timestamped>, desired: i32, now: Millis) -> i32 {
    let cutoff = now.saturating_sub(DOWNSCALE_STABILIZATION_MS);
    let mut max = desired;
    let mut old = None;
    for (i, (t, r)) in recommendations.iter().enumerate() {
        if *t < cutoff {
            old = Some(i);
        } else if *r > max {
            max = *r;
        }
    }
    match old {
        Some(i) => recommendations[i] = (now, desired),
        None => recommendations.push((now, desired)),
    }
    max
}

/// The default scaling rules (`SetDefaults_HorizontalPodAutoscalerBehavior`).
pub fn default_rules(up: bool) -> HPAScalingRules {
    if up {
        HPAScalingRules {
            stabilization_window_seconds: Some(0),
            select_policy: Some("Max".into()),
            policies: Some(vec![
                HPAScalingPolicy { type_: "Pods".into(), value: 4, period_seconds: 15 },
                HPAScalingPolicy { type_: "Percent".into(), value: 100, period_seconds: 15 },
            ]),
            tolerance: None,
        }
    } else {
        HPAScalingRules {
            stabilization_window_seconds: None,
            select_policy: Some("Max".into()),
            policies: Some(vec![HPAScalingPolicy { type_: "Percent".into(), value: 100, period_seconds: 15 }]),
            tolerance: None,
        }
    }
}

/// Fills unset fields of scaling rules from the defaults.
pub fn complete_rules(rules: Option<&HPAScalingRules>, up: bool) -> HPAScalingRules {
    let defaults = default_rules(up);
    let Some(r) = rules else { return defaults };
    HPAScalingRules {
        stabilization_window_seconds: r.stabilization_window_seconds.or(defaults.stabilization_window_seconds),
        select_policy: r.select_policy.clone().or(defaults.select_policy),
        policies: r.policies.clone().or(defaults.policies),
        tolerance: r.tolerance.clone(),
    }
}

fn change_in_period(period_seconds: i32, events: &[Timestamped], now: Millis) -> i32 {
    let cutoff = now.saturating_sub(period_seconds.max(0) as Millis * 1000);
    events.iter().filter(|(t, _)| *t > cutoff).map(|(_, c)| *c).sum()
}

/// `calculateScaleUpLimitWithScalingRules`.
pub fn scale_up_limit_with_rules(current: i32, up_events: &[Timestamped], down_events: &[Timestamped], rules: &HPAScalingRules, now: Millis) -> i32 {
    let policy = rules.select_policy.as_deref().unwrap_or("Max");
    if policy == "Disabled" {
        return current;
    }
    let mut result = if policy == "Min" { i32::MAX } else { i32::MIN };
    for p in rules.policies.iter().flatten() {
        let start = current - change_in_period(p.period_seconds, up_events, now) + change_in_period(p.period_seconds, down_events, now);
        let proposed = if p.type_ == "Pods" { start + p.value } else { (start as f64 * (1.0 + p.value as f64 / 100.0)).ceil() as i32 };
        result = if policy == "Min" { result.min(proposed) } else { result.max(proposed) };
    }
    result
}

/// `calculateScaleDownLimitWithBehaviors`.
pub fn scale_down_limit_with_rules(current: i32, up_events: &[Timestamped], down_events: &[Timestamped], rules: &HPAScalingRules, now: Millis) -> i32 {
    let policy = rules.select_policy.as_deref().unwrap_or("Max");
    if policy == "Disabled" {
        return current;
    }
    let mut result = if policy == "Min" { i32::MIN } else { i32::MAX };
    for p in rules.policies.iter().flatten() {
        let start = current - change_in_period(p.period_seconds, up_events, now) + change_in_period(p.period_seconds, down_events, now);
        let proposed = if p.type_ == "Pods" { start - p.value } else { (start as f64 * (1.0 - p.value as f64 / 100.0)) as i32 };
        result = if policy == "Min" { result.max(proposed) } else { result.min(proposed) };
    }
    result
}

/// `convertDesiredReplicasWithBehaviorRate`: (replicas, reason, message).
#[allow(clippy::too_many_arguments)]
pub fn convert_desired_with_behavior(
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    up: &HPAScalingRules,
    down: &HPAScalingRules,
    up_events: &[Timestamped],
    down_events: &[Timestamped],
    now: Millis,
) -> (i32, &'static str, &'static str) {
    if desired > current {
        let limit = scale_up_limit_with_rules(current, up_events, down_events, up, now).max(current);
        let (maximum, reason, message) = if max > limit {
            (limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
        } else {
            (max, "TooManyReplicas", "the desired replica count is more than the maximum replica count")
        };
        if desired > maximum {
            return (maximum, reason, message);
        }
    } else if desired < current {
        let limit = scale_down_limit_with_rules(current, up_events, down_events, down, now).min(current);
        let (minimum, reason, message) = if min < limit {
            (limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")
        } else {
            (min, "TooFewReplicas", "the desired replica count is less than the minimum replica count")
        };
        if desired < minimum {
            return (minimum, reason, message);
        }
    }
    (desired, "DesiredWithinRange", "the desired count is within the acceptable range")
}

/// `stabilizeRecommendationWithBehaviors`: (recommendation, reason, message).
pub fn stabilize_with_behavior(
    recommendations: &mut Vec<Timestamped>,
    current: i32,
    desired: i32,
    up_window_s: i32,
    down_window_s: i32,
    now: Millis,
) -> (i32, &'static str, &'static str) {
    let up_cutoff = now.saturating_sub(up_window_s.max(0) as Millis * 1000);
    let down_cutoff = now.saturating_sub(down_window_s.max(0) as Millis * 1000);
    let mut up_rec = desired;
    let mut down_rec = desired;
    let mut old = None;
    for (i, (t, r)) in recommendations.iter().enumerate() {
        if *t > up_cutoff {
            up_rec = up_rec.min(*r);
        }
        if *t > down_cutoff {
            down_rec = down_rec.max(*r);
        }
        if *t < up_cutoff && *t < down_cutoff {
            old = Some(i);
        }
    }
    let mut recommendation = current;
    if recommendation < up_rec {
        recommendation = up_rec;
    }
    if recommendation > down_rec {
        recommendation = down_rec;
    }
    match old {
        Some(i) => recommendations[i] = (now, desired),
        None => recommendations.push((now, desired)),
    }
    if desired >= current {
        (recommendation, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation")
    } else {
        (recommendation, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
    }
}

#[derive(Clone, Debug, Default)]
struct HpaState {
    recommendations: Vec<Timestamped>,
    up_events: Vec<Timestamped>,
    down_events: Vec<Timestamped>,
}

/// The HPA controller.
#[derive(Clone, Debug, Default)]
pub struct HpaController {
    hpas: Cache,
    state: BTreeMap<Key, HpaState>,
}

const TOKEN_RESYNC: u64 = 2;

fn parse_quantity_milli(text: &str) -> Option<i64> {
    parse_milli(text).ok().map(|v| v as i64)
}

/// Reads an HPA (v2, or v1 converted) from a stored object.
pub fn read_hpa(object: &Object) -> Option<HorizontalPodAutoscaler> {
    if object.api_version() == "autoscaling/v1" {
        let json = object.to_json();
        let spec = json.get("spec")?;
        let target = spec.get("targetCPUUtilizationPercentage").and_then(|v| v.as_i64()).unwrap_or(80) as i32;
        let hpa_spec = HorizontalPodAutoscalerSpec {
            scale_target_ref: serde_json::from_value(spec.get("scaleTargetRef")?.clone()).ok()?,
            min_replicas: spec.get("minReplicas").and_then(|v| v.as_i64()).map(|v| v as i32),
            max_replicas: spec.get("maxReplicas").and_then(|v| v.as_i64()).unwrap_or(1) as i32,
            metrics: Some(vec![cpu_utilization_metric(target)]),
            behavior: None,
        };
        return Some(HorizontalPodAutoscaler { metadata: object.metadata().clone(), spec: Some(hpa_spec), status: None });
    }
    decode(object)
}

fn cpu_utilization_metric(target: i32) -> MetricSpec {
    MetricSpec {
        type_: "Resource".into(),
        resource: Some(ResourceMetricSource {
            name: "cpu".into(),
            target: MetricTarget { type_: "Utilization".into(), average_utilization: Some(target), average_value: None, value: None },
        }),
        ..Default::default()
    }
}

fn set_hpa_condition(status: &mut HorizontalPodAutoscalerStatus, type_: &str, value: &str, reason: &str, message: String, now: Millis) {
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let mut cond = HorizontalPodAutoscalerCondition {
        type_: type_.into(),
        status: value.into(),
        reason: Some(reason.into()),
        message: Some(message),
        last_transition_time: Some(time_at(now)),
    };
    if let Some(existing) = conditions.iter_mut().find(|c| c.type_ == type_) {
        if existing.status == cond.status {
            cond.last_transition_time = existing.last_transition_time.clone();
        }
        *existing = cond;
    } else {
        conditions.push(cond);
    }
}

impl HpaController {
    /// A controller with empty caches.
    pub fn new() -> HpaController {
        HpaController::default()
    }

    fn sample(&self, metrics: &ResourceMetrics, pod: &Pod, resource: &str, now: Millis) -> PodSample {
        let spec = pod.spec.clone().unwrap_or_default();
        let request = spec
            .containers
            .iter()
            .map(|c| c.resources.as_ref().and_then(|r| r.requests.as_ref()).and_then(|r| r.get(resource)).and_then(|q| parse_quantity_milli(&q.0)))
            .try_fold(0i64, |acc, v| v.map(|v| acc + v));
        let key = (pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default());
        let metric = if metrics.served() {
            metrics.pod(&key.0, &key.1).map(|u| if resource == "cpu" { u.cpu_milli } else { u.memory_bytes * 1000 })
        } else {
            let annotation = if resource == "cpu" { CPU_USAGE_ANNOTATION } else { MEMORY_USAGE_ANNOTATION };
            pod.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(annotation))
                .and_then(|v| parse_quantity_milli(v))
                .map(|per_container| per_container * spec.containers.len() as i64)
                .filter(|_| pod_phase(pod) == "Running")
        };
        let ready = pod_condition(pod, "Ready").and_then(|c| c.last_transition_time.as_ref().map(|t| (c.status == "True", millis_of(t))));
        PodSample {
            name: pod.metadata.name.clone().unwrap_or_default(),
            phase: pod_phase(pod).to_string(),
            deleting: pod.metadata.deletion_timestamp.is_some(),
            ready,
            start_time: pod.status.as_ref().and_then(|s| s.start_time.as_ref()).map(millis_of),
            request,
            metric: metric.map(|m| (m, now)),
        }
    }

    fn sync(&mut self, key: &Key, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Some(object) = self.hpas.get(key).cloned() else {
            self.state.remove(key);
            return Ok(());
        };
        let Some(hpa) = read_hpa(&object) else { return Ok(()) };
        let now = ctx.now;
        let spec = hpa.spec.clone().unwrap_or_default();
        let mut status = hpa.status.clone().unwrap_or_default();
        if object.api_version() == "autoscaling/v1" {
            status = HorizontalPodAutoscalerStatus::default();
        }
        let target_ref = spec.scale_target_ref.clone();
        let group = target_ref.api_version.as_deref().and_then(|v| v.split_once('/')).map(|(g, _)| g).unwrap_or("");
        let resource = match (group, target_ref.kind.as_str()) {
            ("apps", "Deployment") => ("apps", "deployments"),
            ("apps", "ReplicaSet") => ("apps", "replicasets"),
            ("apps", "StatefulSet") => ("apps", "statefulsets"),
            ("", "ReplicationController") => ("", "replicationcontrollers"),
            _ => {
                set_hpa_condition(
                    &mut status,
                    "AbleToScale",
                    "False",
                    "FailedGetScale",
                    format!("the HPA controller was unable to get the target's current scale: no matches for kind {:?} in group {group:?}", target_ref.kind),
                    now,
                );
                return self.write(ctx, &object, &hpa, status);
            }
        };
        let Some(target) = ctx.api.lookup(resource, &key.0, &target_ref.name).cloned() else {
            let message =
                format!("the HPA controller was unable to get the target's current scale: {}.{} {:?} not found", resource.1, resource.0, target_ref.name);
            set_hpa_condition(&mut status, "AbleToScale", "False", "FailedGetScale", message.clone(), now);
            ctx.event(&object, "Warning", "FailedGetScale", format!("{}.{} {:?} not found", resource.1, resource.0, target_ref.name));
            return self.write(ctx, &object, &hpa, status);
        };
        let target_json = target.to_json();
        let current = target_json.get("spec").and_then(|s| s.get("replicas")).and_then(|v| v.as_i64()).unwrap_or(1) as i32;
        let selector = target_json.get("spec").and_then(|s| s.get("selector")).cloned();
        let selector = match (resource, selector) {
            (("", "replicationcontrollers"), Some(map)) => {
                let map: BTreeMap<String, String> = serde_json::from_value(map).unwrap_or_default();
                Selector::from_map(&map)
            }
            (_, Some(sel)) => Selector::from_label_selector(&serde_json::from_value(sel).unwrap_or_default()),
            _ => Selector::default(),
        };
        set_hpa_condition(&mut status, "AbleToScale", "True", "SucceededGetScale", "the HPA controller was able to get the target's current scale".into(), now);
        let min = spec.min_replicas.unwrap_or(1);
        let max = spec.max_replicas;
        let mut rescale_reason = String::new();
        let mut metric_statuses = Vec::new();
        let desired: i32;
        if current == 0 && min != 0 {
            desired = 0;
            set_hpa_condition(
                &mut status,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero".into(),
                now,
            );
        } else if current > max {
            rescale_reason = "Current number of replicas above Spec.MaxReplicas".into();
            desired = max;
        } else if current < min {
            rescale_reason = "Current number of replicas below Spec.MinReplicas".into();
            desired = min;
        } else {
            // Pods are read from the API server at each 15 s sync (no pod informer needed).
            let pods: Vec<Pod> = ctx
                .api
                .store()
                .list(("", "pods"), Some(&key.0))
                .filter_map(|o| o.as_pod())
                .filter(|p| selector.matches(p.metadata.labels.as_ref()))
                .cloned()
                .collect();
            let metrics = spec.metrics.clone().filter(|m| !m.is_empty()).unwrap_or_else(|| vec![cpu_utilization_metric(80)]);
            let mut proposal: Option<(i32, String)> = None;
            let mut invalid = 0;
            let mut last_error = None;
            for metric in &metrics {
                let Some(res) = metric.resource.as_ref().filter(|_| metric.type_ == "Resource") else {
                    invalid += 1;
                    last_error = Some((
                        "InvalidMetricSourceType".to_string(),
                        format!("the HPA was unable to compute the replica count: unsupported metric source type {:?}", metric.type_),
                    ));
                    continue;
                };
                let samples: Vec<PodSample> = pods.iter().map(|p| self.sample(ctx.metrics, p, &res.name, now)).collect();
                let cpu = res.name == "cpu";
                let (result, current_status) = match res.target.type_.as_str() {
                    "AverageValue" => {
                        let target_avg = res.target.average_value.as_ref().and_then(|q| parse_quantity_milli(&q.0)).unwrap_or(0);
                        match raw_resource_replicas(current, target_avg, &samples, cpu, now) {
                            Ok((r, avg)) => (Ok(r), MetricValueStatus { average_value: Some(milli_quantity(avg, cpu)), ..Default::default() }),
                            Err(e) => (Err(e), MetricValueStatus::default()),
                        }
                    }
                    _ => {
                        let target_util = res.target.average_utilization.unwrap_or(80);
                        match resource_replicas(current, target_util, &samples, cpu, now) {
                            Ok((r, util, raw)) => {
                                (Ok(r), MetricValueStatus { average_utilization: Some(util), average_value: Some(milli_quantity(raw, cpu)), value: None })
                            }
                            Err(e) => (Err(e), MetricValueStatus::default()),
                        }
                    }
                };
                match result {
                    Ok(r) => {
                        metric_statuses.push(MetricStatus {
                            type_: "Resource".into(),
                            resource: Some(ResourceMetricStatus { name: res.name.clone(), current: current_status }),
                            ..Default::default()
                        });
                        let description =
                            format!("{} resource{}", res.name, if res.target.type_ == "Utilization" { " utilization (percentage of request)" } else { "" });
                        if proposal.as_ref().is_none_or(|(p, _)| r > *p) {
                            proposal = Some((r, description));
                        }
                    }
                    Err(e) => {
                        invalid += 1;
                        metric_statuses.push(MetricStatus {
                            type_: "Resource".into(),
                            resource: Some(ResourceMetricStatus { name: res.name.clone(), current: MetricValueStatus::default() }),
                            ..Default::default()
                        });
                        last_error = Some((
                            "FailedGetResourceMetric".to_string(),
                            format!("the HPA was unable to compute the replica count: failed to get {} utilization: {e}", res.name),
                        ));
                    }
                }
            }
            if invalid == metrics.len() || (invalid > 0 && proposal.as_ref().is_none_or(|(p, _)| *p < current)) {
                let (reason, message) = last_error.unwrap_or_else(|| ("FailedGetResourceMetric".into(), "invalid metrics".into()));
                set_hpa_condition(&mut status, "ScalingActive", "False", &reason, message.clone(), now);
                ctx.event(&object, "Warning", &reason, message.trim_start_matches("the HPA was unable to compute the replica count: ").to_string());
                ctx.event(
                    &object,
                    "Warning",
                    "FailedComputeMetricsReplicas",
                    format!(
                        "invalid metrics ({invalid} invalid out of {}), first error is: {}",
                        metrics.len(),
                        message.trim_start_matches("the HPA was unable to compute the replica count: ")
                    ),
                );
                status.current_metrics = Some(metric_statuses);
                status.current_replicas = Some(current);
                status.desired_replicas = current;
                return self.write(ctx, &object, &hpa, status);
            }
            let (proposed, description) = proposal.unwrap_or((current, String::new()));
            set_hpa_condition(
                &mut status,
                "ScalingActive",
                "True",
                "ValidMetricFound",
                format!("the HPA was able to successfully calculate a replica count from {description}"),
                now,
            );
            rescale_reason = if proposed > current { format!("{description} above target") } else { "All metrics below target".into() };
            let state = self.state.entry(key.clone()).or_default();
            desired = match &spec.behavior {
                None => {
                    let stabilized = stabilize(&mut state.recommendations, proposed, now);
                    if stabilized != proposed {
                        set_hpa_condition(
                            &mut status,
                            "AbleToScale",
                            "True",
                            "ScaleDownStabilized",
                            "recent recommendations were higher than current one, applying the highest recent recommendation".into(),
                            now,
                        );
                    } else {
                        set_hpa_condition(&mut status, "AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size".into(), now);
                    }
                    let (d, reason, message) = convert_desired_with_rules(current, stabilized, min, max);
                    set_hpa_condition(&mut status, "ScalingLimited", if d == stabilized { "False" } else { "True" }, reason, message.into(), now);
                    d
                }
                Some(behavior) => {
                    let up = complete_rules(behavior.scale_up.as_ref(), true);
                    let mut down = complete_rules(behavior.scale_down.as_ref(), false);
                    down.stabilization_window_seconds.get_or_insert((DOWNSCALE_STABILIZATION_MS / 1000) as i32);
                    let (stabilized, reason, message) = stabilize_with_behavior(
                        &mut state.recommendations,
                        current,
                        proposed,
                        up.stabilization_window_seconds.unwrap_or(0),
                        down.stabilization_window_seconds.unwrap_or(300),
                        now,
                    );
                    if stabilized != proposed {
                        set_hpa_condition(&mut status, "AbleToScale", "True", reason, message.into(), now);
                    } else {
                        set_hpa_condition(&mut status, "AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size".into(), now);
                    }
                    let (d, reason, message) =
                        convert_desired_with_behavior(current, stabilized, min, max, &up, &down, &state.up_events, &state.down_events, now);
                    set_hpa_condition(&mut status, "ScalingLimited", if d == stabilized { "False" } else { "True" }, reason, message.into(), now);
                    d
                }
            };
        }
        if desired != current {
            let mut json = target_json.clone();
            json["spec"]["replicas"] = serde_json::json!(desired);
            let info = target.info().or_else(|| kind_info(target.api_version(), target.kind())).expect("served");
            let updated = Object::from_json(info, json).map_err(|e| ApiError::bad_request(e.to_string()))?;
            match ctx.update(updated) {
                Ok(_) => {
                    set_hpa_condition(
                        &mut status,
                        "AbleToScale",
                        "True",
                        "SucceededRescale",
                        format!("the HPA controller was able to update the target scale to {desired}"),
                        now,
                    );
                    ctx.event(&object, "Normal", "SuccessfulRescale", format!("New size: {desired}; reason: {rescale_reason}"));
                    status.last_scale_time = Some(time_at(now));
                    let state = self.state.entry(key.clone()).or_default();
                    let cutoff = now.saturating_sub(3_600_000);
                    state.up_events.retain(|(t, _)| *t > cutoff);
                    state.down_events.retain(|(t, _)| *t > cutoff);
                    if desired > current {
                        state.up_events.push((now, desired - current));
                    } else {
                        state.down_events.push((now, current - desired));
                    }
                }
                Err(e) => {
                    set_hpa_condition(
                        &mut status,
                        "AbleToScale",
                        "False",
                        "FailedUpdateScale",
                        format!("the HPA controller was unable to update the target scale: {}", e.message),
                        now,
                    );
                    ctx.event(&object, "Warning", "FailedRescale", format!("New size: {desired}; reason: {rescale_reason}; error: {}", e.message));
                }
            }
        }
        status.current_replicas = Some(current);
        status.desired_replicas = desired;
        status.current_metrics = if metric_statuses.is_empty() { None } else { Some(metric_statuses) };
        status.observed_generation = hpa.metadata.generation;
        self.write(ctx, &object, &hpa, status)
    }

    fn write(&mut self, ctx: &mut Ctx, object: &Object, hpa: &HorizontalPodAutoscaler, status: HorizontalPodAutoscalerStatus) -> Result<(), ApiError> {
        if object.api_version() == "autoscaling/v1" {
            // Write the v1 status shape.
            let mut json = object.to_json();
            let cpu = status
                .current_metrics
                .iter()
                .flatten()
                .find_map(|m| m.resource.as_ref().filter(|r| r.name == "cpu").and_then(|r| r.current.average_utilization));
            let mut s = serde_json::json!({ "currentReplicas": status.current_replicas.unwrap_or(0), "desiredReplicas": status.desired_replicas });
            if let Some(c) = cpu {
                s["currentCPUUtilizationPercentage"] = serde_json::json!(c);
            }
            if let Some(t) = &status.last_scale_time {
                s["lastScaleTime"] = serde_json::to_value(t).unwrap_or_default();
            }
            if let Some(g) = status.observed_generation {
                s["observedGeneration"] = serde_json::json!(g);
            }
            json["status"] = s;
            let info = object.info().expect("served");
            let updated = Object::from_json(info, json).map_err(|e| ApiError::bad_request(e.to_string()))?;
            if updated.to_json().get("status") != object.to_json().get("status") {
                let written = ctx.update_status(updated)?;
                self.hpas.put(written);
            }
            return Ok(());
        }
        if hpa.status.as_ref() == Some(&status) {
            return Ok(());
        }
        let mut copy = hpa.clone();
        copy.status = Some(status);
        let written = ctx.update_status(encode(&copy, "autoscaling/v2", "HorizontalPodAutoscaler"))?;
        self.hpas.put(written);
        Ok(())
    }
}

fn milli_quantity(milli: i64, cpu: bool) -> Quantity {
    if cpu {
        Quantity(format_cpu_milli(milli as i128))
    } else if milli % 1000 == 0 {
        Quantity((milli / 1000).to_string())
    } else {
        Quantity(format!("{milli}m"))
    }
}

impl Reconciler for HpaController {
    fn name(&self) -> &'static str {
        "horizontal-pod-autoscaler"
    }
    crate::informers! {
        queue: none;
        Informer::all(("autoscaling", "horizontalpodautoscalers")) => hpas,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        ctx.after_periodic(SYNC_PERIOD_MS, TOKEN_RESYNC);
    }
    fn changed(&mut self, change: Change, _ctx: &mut Ctx) {
        // New or changed HPAs are processed at the next resync tick: upstream enqueues them
        // through a fixed-interval rate limiter of one sync period.
        if change.event.event_type == EventType::Deleted {
            self.state.remove(&key_of(&change.event.object));
        }
    }
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if token != TOKEN_RESYNC {
            return;
        }
        let keys: Vec<Key> = self.hpas.iter().map(|o| key_of(o)).collect();
        for key in keys {
            let _ = self.sync(&key, ctx);
        }
        ctx.after_periodic(SYNC_PERIOD_MS, TOKEN_RESYNC);
    }
}
