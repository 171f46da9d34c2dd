//! HPA vectors (reference section 6.4) and an end-to-end scale-up.
#![allow(clippy::type_complexity)]

use crate::hpa::*;
use kubesim_api::k8s_openapi::api::autoscaling::v2::{HPAScalingPolicy, HPAScalingRules};
use kubesim_api::Millis;

const NOW: Millis = 10 * 3_600_000;

#[derive(Clone, Copy)]
enum Kind {
    Ready,
    Unready,
    Hot,
    Failed,
    Deleting,
    Pending,
}

fn pod(i: usize, kind: Kind, request: i64, metric: Option<i64>) -> PodSample {
    let long_ago = NOW - 3_600_000;
    let (phase, ready, start, deleting) = match kind {
        Kind::Ready => ("Running", Some((true, long_ago + 10_000)), Some(long_ago), false),
        Kind::Unready => ("Running", Some((false, long_ago)), Some(long_ago), false),
        Kind::Hot => ("Running", Some((true, NOW - 10_000)), Some(NOW - 60_000), false),
        Kind::Failed => ("Failed", None, Some(long_ago), false),
        Kind::Deleting => ("Running", Some((true, long_ago + 10_000)), Some(long_ago), true),
        Kind::Pending => ("Pending", None, None, false),
    };
    PodSample { name: format!("pod-{i}"), phase: phase.into(), deleting, ready, start_time: start, request: Some(request), metric: metric.map(|m| (m, NOW)) }
}

// Mirrors pkg/controller/podautoscaler/replica_calculator_test.go (CPU cases)
#[test]
fn replica_calculator_cpu_vectors() {
    use Kind::*;
    // (name, current, pods: (kind, request, metric), target %, expected utilization, expected replicas)
    let cases: Vec<(&str, i32, Vec<(Kind, i64, Option<i64>)>, i32, i32, i32)> = vec![
        ("TestReplicaCalcScaleUp", 3, vec![(Ready, 1000, Some(300)), (Ready, 1000, Some(500)), (Ready, 1000, Some(700))], 30, 50, 5),
        ("TestReplicaCalcScaleUpUnreadyLessScale", 3, vec![(Unready, 1000, Some(300)), (Ready, 1000, Some(500)), (Ready, 1000, Some(700))], 30, 60, 4),
        ("TestReplicaCalcScaleUpHotCpuLessScale", 3, vec![(Hot, 1000, Some(300)), (Ready, 1000, Some(500)), (Ready, 1000, Some(700))], 30, 60, 4),
        ("TestReplicaCalcScaleUpUnreadyNoScale", 3, vec![(Ready, 1000, Some(400)), (Unready, 1000, Some(500)), (Unready, 1000, Some(700))], 30, 40, 3),
        ("TestReplicaCalcScaleHotCpuNoScale", 3, vec![(Ready, 1000, Some(400)), (Hot, 1000, Some(500)), (Hot, 1000, Some(700))], 30, 40, 3),
        (
            "TestReplicaCalcScaleUpIgnoresFailedPods",
            2,
            vec![(Ready, 1000, Some(500)), (Ready, 1000, Some(700)), (Failed, 1000, Some(100)), (Failed, 1000, Some(100))],
            30,
            60,
            4,
        ),
        (
            "TestReplicaCalcScaleUpIgnoresDeletionPods",
            2,
            vec![(Ready, 1000, Some(500)), (Ready, 1000, Some(700)), (Deleting, 1000, Some(100)), (Deleting, 1000, Some(100))],
            30,
            60,
            4,
        ),
        (
            "TestReplicaCalcScaleDown",
            5,
            vec![(Ready, 1000, Some(100)), (Ready, 1000, Some(300)), (Ready, 1000, Some(500)), (Ready, 1000, Some(250)), (Ready, 1000, Some(250))],
            50,
            28,
            3,
        ),
        (
            "TestReplicaCalcScaleDownIncludeUnreadyPods",
            5,
            vec![(Ready, 1000, Some(100)), (Ready, 1000, Some(300)), (Ready, 1000, Some(500)), (Unready, 1000, Some(250)), (Unready, 1000, Some(250))],
            50,
            30,
            2,
        ),
        (
            "TestReplicaCalcScaleDownExcludeUnscheduledPods",
            5,
            vec![(Ready, 1000, Some(100)), (Pending, 1000, None), (Pending, 1000, None), (Pending, 1000, None), (Pending, 1000, None)],
            50,
            10,
            1,
        ),
        (
            "TestReplicaCalcScaleDownIgnoreHotCpuPods",
            5,
            vec![(Ready, 1000, Some(100)), (Ready, 1000, Some(300)), (Ready, 1000, Some(500)), (Hot, 1000, Some(250)), (Hot, 1000, Some(250))],
            50,
            30,
            2,
        ),
        (
            "TestReplicaCalcScaleDownIgnoresFailedPods",
            5,
            vec![
                (Ready, 1000, Some(100)),
                (Ready, 1000, Some(300)),
                (Ready, 1000, Some(500)),
                (Ready, 1000, Some(250)),
                (Ready, 1000, Some(250)),
                (Failed, 1000, Some(10)),
                (Failed, 1000, Some(10)),
            ],
            50,
            28,
            3,
        ),
        ("TestReplicaCalcTolerance", 3, vec![(Ready, 900, Some(1010)), (Ready, 1000, Some(1030)), (Ready, 1100, Some(1020))], 100, 102, 3),
        (
            "TestReplicaCalcSuperfluousMetrics",
            4,
            vec![(Ready, 1000, Some(4000)), (Ready, 1000, Some(9500)), (Ready, 1000, Some(3000)), (Ready, 1000, Some(7000))],
            100,
            587,
            24,
        ),
        ("TestReplicaCalcMissingMetrics", 4, vec![(Ready, 1000, Some(400)), (Ready, 1000, Some(95)), (Ready, 1000, None), (Ready, 1000, None)], 100, 24, 3),
        ("TestReplicaCalcMissingMetricsNoChangeEq", 2, vec![(Ready, 1000, Some(1000)), (Ready, 1000, None)], 100, 100, 2),
        ("TestReplicaCalcMissingMetricsNoChangeGt", 2, vec![(Ready, 1000, Some(1900)), (Ready, 1000, None)], 100, 190, 2),
        ("TestReplicaCalcMissingMetricsNoChangeLt", 2, vec![(Ready, 1000, Some(600)), (Ready, 1000, None)], 100, 60, 2),
        ("TestReplicaCalcMissingMetricsUnreadyChange", 3, vec![(Unready, 1000, Some(100)), (Ready, 1000, Some(450)), (Ready, 1000, None)], 50, 45, 3),
        ("TestReplicaCalcMissingMetricsUnreadyScaleUp", 3, vec![(Unready, 1000, Some(100)), (Ready, 1000, Some(2000)), (Ready, 1000, None)], 50, 200, 4),
        (
            "TestReplicaCalcMissingMetricsUnreadyScaleDown",
            4,
            vec![(Unready, 1000, Some(100)), (Ready, 1000, Some(100)), (Ready, 1000, Some(100)), (Ready, 1000, None)],
            50,
            10,
            3,
        ),
    ];
    for (name, current, pods, target, want_util, want_replicas) in cases {
        let samples: Vec<PodSample> = pods.iter().enumerate().map(|(i, (k, r, m))| pod(i, *k, *r, *m)).collect();
        let (replicas, util, _) = resource_replicas(current, target, &samples, true, NOW).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((util, replicas), (want_util, want_replicas), "{name}");
    }
    assert!(resource_replicas(3, 50, &[], true, NOW).is_err(), "no pods");
    assert_eq!(
        resource_replicas(1, 50, &[pod(0, Kind::Ready, 1000, None)], true, NOW).unwrap_err(),
        "unable to get metrics for resource cpu: no metrics returned from resource metrics API"
    );
    assert_eq!(
        resource_replicas(1, 50, &[pod(0, Kind::Unready, 1000, Some(100))], true, NOW).unwrap_err(),
        "did not receive metrics for targeted pods (pods might be unready)"
    );
}

// Mirrors pkg/controller/podautoscaler/horizontal_test.go TestConvertDesiredReplicasWithRules
#[test]
fn convert_desired_replicas_with_rules_vectors() {
    let cases = [
        ((5, 7, 3, 8), (7, "DesiredWithinRange")),
        ((3, 1, 2, 8), (2, "TooFewReplicas")),
        ((1, 0, 0, 10), (0, "DesiredWithinRange")),
        ((20, 1000, 1, 10), (10, "TooManyReplicas")),
        ((3, 1000, 1, 2000), (6, "ScaleUpLimit")),
    ];
    for ((current, desired, min, max), (want, reason)) in cases {
        let (got, r, _) = convert_desired_with_rules(current, desired, min, max);
        assert_eq!((got, r), (want, reason), "{current} {desired} {min} {max}");
    }
}

// Mirrors pkg/controller/podautoscaler/horizontal_test.go TestNormalizeDesiredReplicas
#[test]
fn normalize_desired_replicas_vectors() {
    let m = 60_000;
    let now = 3_600_000;
    let cases: Vec<(Vec<(Millis, i32)>, i32, i32)> = vec![
        (vec![], 5, 5),
        (vec![(now - 2 * m, 4), (now - m, 5)], 3, 5),
        (vec![(now - 2 * m, 1), (now - m, 2)], 3, 3),
        (vec![(now - 10 * m, 10), (now - 9 * m, 9)], 3, 3),
        (vec![(now - 10 * m, 10), (now - m, 4), (now - 2 * m, 5), (now - 9 * m, 9)], 3, 5),
    ];
    for (i, (mut recs, desired, want)) in cases.into_iter().enumerate() {
        assert_eq!(stabilize(&mut recs, desired, now), want, "case {i}");
    }
}

fn rules(pods: i32, pods_period: i32, percent: i32, percent_period: i32, policy: &str) -> HPAScalingRules {
    let mut policies = Vec::new();
    if pods > 0 {
        policies.push(HPAScalingPolicy { type_: "Pods".into(), value: pods, period_seconds: pods_period });
    }
    if percent > 0 {
        policies.push(HPAScalingPolicy { type_: "Percent".into(), value: percent, period_seconds: percent_period });
    }
    HPAScalingRules { policies: Some(policies), select_policy: Some(policy.into()), stabilization_window_seconds: Some(0), tolerance: None }
}

// Mirrors pkg/controller/podautoscaler/horizontal_test.go TestScalingWithRules
#[test]
fn scaling_with_rules_vectors() {
    let up_default = default_rules(true);
    let down_default = default_rules(false);
    // (current, desired, min, max, up rules, down rules, want, reason)
    let cases: Vec<(i32, i32, i32, i32, HPAScalingRules, HPAScalingRules, i32, &str)> = vec![
        (5, 7, 3, 8, up_default.clone(), down_default.clone(), 7, "DesiredWithinRange"),
        (3, 1, 2, 8, up_default.clone(), down_default.clone(), 2, "TooFewReplicas"),
        (1, 0, 0, 10, up_default.clone(), down_default.clone(), 0, "DesiredWithinRange"),
        (20, 1000, 1, 10, up_default.clone(), down_default.clone(), 10, "TooManyReplicas"),
        (100, 1000, 100, 150, up_default.clone(), down_default.clone(), 150, "TooManyReplicas"),
        (3, 1000, 1, 2000, rules(0, 0, 1, 60, "Max"), down_default.clone(), 4, "ScaleUpLimit"),
        (1000, 3, 3, 2000, up_default.clone(), rules(20, 60, 0, 0, "Max"), 980, "ScaleDownLimit"),
        (10, 50, 1, 1000, up_default.clone(), down_default.clone(), 20, "ScaleUpLimit"),
        (10, 500, 1, 1000, rules(100, 60, 100, 60, "Max"), down_default.clone(), 110, "ScaleUpLimit"),
        (10, 500, 1, 1000, rules(2, 60, 100, 60, "Max"), down_default.clone(), 20, "ScaleUpLimit"),
        (10, 50, 1, 1000, rules(100, 60, 0, 0, "Max"), down_default.clone(), 50, "DesiredWithinRange"),
        (10, 50, 1, 1000, rules(10000, 60, 0, 0, "Max"), down_default.clone(), 50, "DesiredWithinRange"),
        (10, 50, 1, 1000, rules(30, 60, 0, 0, "Max"), down_default.clone(), 40, "ScaleUpLimit"),
        (10, 50, 1, 1000, rules(0, 0, 200, 60, "Max"), down_default.clone(), 30, "ScaleUpLimit"),
        (100, 2, 1, 1000, up_default.clone(), rules(20, 60, 1, 60, "Max"), 80, "ScaleDownLimit"),
        (100, 2, 1, 1000, up_default.clone(), rules(2, 60, 1, 60, "Max"), 98, "ScaleDownLimit"),
        (10, 0, 1, 1000, up_default.clone(), rules(100, 60, 0, 0, "Max"), 1, "TooFewReplicas"),
    ];
    for (i, (current, desired, min, max, up, down, want, reason)) in cases.into_iter().enumerate() {
        let (got, r, _) = convert_desired_with_behavior(current, desired, min, max, &up, &down, &[], &[], NOW);
        assert_eq!((got, r), (want, reason), "case {i}");
    }
    // Mirrors TestCalculateScaleUpLimitWithScalingRules / TestCalculateScaleDownLimitWithBehaviors
    assert_eq!(scale_up_limit_with_rules(1, &[], &[], &rules(2, 60, 50, 60, "Min"), NOW), 2);
    assert_eq!(scale_down_limit_with_rules(5, &[], &[], &rules(2, 60, 50, 60, "Min"), NOW), 3);
    // Events within the period count against the limit.
    assert_eq!(scale_up_limit_with_rules(8, &[(NOW - 10_000, 4)], &[], &rules(4, 60, 0, 0, "Max"), NOW), 8);
}

#[test]
fn hpa_scales_a_deployment_on_cpu_utilization() {
    use crate::common::{decode, encode};
    use crate::testing::{FakeKubelet, TestWorld};
    use kubesim_api::k8s_openapi::api::autoscaling::v2::{CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec};
    use kubesim_api::k8s_openapi::api::core::v1::ResourceRequirements;
    use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kubesim_api::object::Object;
    use std::collections::BTreeMap;
    let mut w = TestWorld::new(vec![
        Box::new(crate::framework::Controller(crate::deployment::DeploymentController::new())),
        Box::new(crate::framework::Controller(crate::replicaset::ReplicaSetController::new())),
        Box::new(crate::framework::Controller(HpaController::new())),
        Box::new(FakeKubelet::new(2000, 1000)),
    ]);
    let mut d = crate::e2e_tests::deployment("web", 2, "nginx");
    let template = &mut d.spec.as_mut().unwrap().template;
    template.metadata.as_mut().unwrap().annotations = Some(BTreeMap::from([(CPU_USAGE_ANNOTATION.to_string(), "180m".to_string())]));
    template.spec.as_mut().unwrap().containers[0].resources =
        Some(ResourceRequirements { requests: Some(BTreeMap::from([("cpu".to_string(), Quantity("200m".into()))])), ..Default::default() });
    w.create(Object::Deployment(Box::new(d))).unwrap();
    let hpa = HorizontalPodAutoscaler {
        metadata: ObjectMeta { name: Some("web".into()), namespace: Some("default".into()), ..Default::default() },
        spec: Some(HorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference { api_version: Some("apps/v1".into()), kind: "Deployment".into(), name: "web".into() },
            min_replicas: Some(1),
            max_replicas: 10,
            metrics: None,
            behavior: None,
        }),
        status: None,
    };
    w.create(encode(&hpa, "autoscaling/v2", "HorizontalPodAutoscaler")).unwrap();
    // Pods start running at ~2 s; they are past the cpu-initialization check only through
    // readiness (Ready for longer than the metric window), so give them 40 s.
    w.run_for(46_000);
    // 180m of 200m = 90 % vs the default 80 % target: ratio 1.125 → ceil(2.25) = 3.
    let d: kubesim_api::k8s_openapi::api::apps::v1::Deployment = match w.get(("apps", "deployments"), "default", "web").unwrap().as_ref() {
        Object::Deployment(d) => (**d).clone(),
        _ => unreachable!(),
    };
    assert_eq!(d.spec.unwrap().replicas, Some(3));
    let hpa: HorizontalPodAutoscaler = decode(&w.get(("autoscaling", "horizontalpodautoscalers"), "default", "web").unwrap()).unwrap();
    let status = hpa.status.unwrap();
    assert_eq!((status.current_replicas, status.desired_replicas), (Some(2), 3));
    let util = status.current_metrics.unwrap()[0].resource.as_ref().unwrap().current.average_utilization;
    assert_eq!(util, Some(90));
    assert!(
        w.events().contains(&("SuccessfulRescale".into(), "New size: 3; reason: cpu resource utilization (percentage of request) above target".into())),
        "{:?}",
        w.events()
    );
}
