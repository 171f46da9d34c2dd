//! KubeSchedulerConfiguration parsing and profile expansion.

use kubesim_scheduler::config::{build_profile, default_profile, parse_configuration};
use kubesim_scheduler::framework::{Point, Profile};
use kubesim_scheduler::Scheduler;
use serde_json::json;

fn names(p: &Profile, point: Point) -> Vec<&'static str> {
    p.at(point).iter().map(|i| p.plugin(*i).name()).collect()
}

fn weights(p: &Profile) -> Vec<(&'static str, i64)> {
    p.score.iter().map(|s| (p.plugin(s.index).name(), s.weight)).collect()
}

// Mirrors pkg/scheduler/apis/config/v1/default_plugins_test.go TestApplyFeatureGates (the
// default MultiPoint list) expanded per extension point as frameworkImpl.expandMultiPointPlugins does.
#[test]
fn default_profile_points_and_weights() {
    let p = default_profile();
    assert_eq!(p.scheduler_name, "default-scheduler");
    assert_eq!(names(&p, Point::PreEnqueue), vec!["SchedulingGates"]);
    assert_eq!(names(&p, Point::QueueSort), vec!["PrioritySort"]);
    assert_eq!(
        names(&p, Point::Filter),
        vec![
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity"
        ]
    );
    assert_eq!(names(&p, Point::PostFilter), vec!["DefaultPreemption"]);
    assert_eq!(
        weights(&p),
        vec![
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("NodeResourcesBalancedAllocation", 1),
            ("ImageLocality", 1)
        ]
    );
    assert_eq!(weights(&p).iter().map(|(_, w)| w).sum::<i64>(), 12);
    assert_eq!(names(&p, Point::Bind), vec!["DefaultBinder"]);
}

// Mirrors default_plugins_test.go TestMergePlugins: disabling, re-weighting in place, "*".
#[test]
fn merging_custom_plugin_sets() {
    let plugins = json!({
        "multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 5}], "disabled": [{"name": "NodeResourcesBalancedAllocation"}]},
        "score": {"disabled": [{"name": "TaintToleration"}]},
        "filter": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}, {"name": "NodeName"}]}
    });
    let p = build_profile("custom", Some(&plugins), None, None).unwrap();
    assert_eq!(weights(&p), vec![("NodeAffinity", 2), ("NodeResourcesFit", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("ImageLocality", 5)]);
    assert_eq!(names(&p, Point::Filter), vec!["NodeResourcesFit", "NodeName"]);
    // An explicitly configured score weight overrides the MultiPoint one, keeping the explicit order first.
    let plugins = json!({"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 10}]}});
    let p = build_profile("x", Some(&plugins), None, None).unwrap();
    assert_eq!(weights(&p)[0], ("NodeResourcesFit", 10));
    assert_eq!(weights(&p).len(), 7);
}

#[test]
fn invalid_configurations_are_rejected() {
    let bad = [
        json!({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}),
        json!({"percentageOfNodesToScore": 101}),
        json!({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}),
        json!({"profiles": [{"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}]}),
        json!({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Bogus"}}}]}]}),
        json!({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}}}]}]}),
        json!({"profiles": [{"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]}]}),
        json!({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2}),
    ];
    for config in bad {
        assert!(Scheduler::from_config(&config).is_err(), "{config}");
    }
}

#[test]
fn global_settings_are_read() {
    let (global, profiles) = parse_configuration(&json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 50,
        "podInitialBackoffSeconds": 2,
        "podMaxBackoffSeconds": 20,
        "profiles": [{"schedulerName": "a", "percentageOfNodesToScore": 70}, {"schedulerName": "b"}]
    }))
    .unwrap();
    assert_eq!((global.percentage_of_nodes_to_score, global.pod_initial_backoff_seconds, global.pod_max_backoff_seconds), (50, 2, 20));
    assert_eq!(profiles.iter().map(|p| (p.scheduler_name.as_str(), p.percentage_of_nodes_to_score)).collect::<Vec<_>>(), vec![("a", Some(70)), ("b", None)]);
    let s = Scheduler::from_config(&json!({"profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}]})).unwrap();
    assert_eq!(s.scheduler_names(), vec!["a", "b"]);
}

// The extension points each in-tree plugin implements, per upstream v1.34's plugin sources
// (the `var _ framework.XPlugin = &Y{}` assertions in pkg/scheduler/framework/plugins/*).
// MultiPoint expands to exactly these; a plugin's `points()` is checked against the table.
// Deliberate differences: VolumeBinding's PreScore/Score (the StorageCapacityScoring gate,
// alpha and off in v1.34) are not declared; DefaultPreemption's PreEnqueue (the
// SchedulerAsyncPreemption gate, off by default) likewise.
#[test]
fn every_registered_plugin_declares_the_extension_points_upstream_implements() {
    use kubesim_scheduler::framework::Point::*;
    let upstream: &[(&str, &[kubesim_scheduler::framework::Point])] = &[
        ("SchedulingGates", &[PreEnqueue]),
        ("PrioritySort", &[QueueSort]),
        ("NodeUnschedulable", &[Filter]),
        ("NodeName", &[Filter]),
        ("TaintToleration", &[Filter, PreScore, Score]),
        ("NodeAffinity", &[PreFilter, Filter, PreScore, Score]),
        ("NodePorts", &[PreFilter, Filter]),
        ("NodeResourcesFit", &[PreFilter, Filter, PreScore, Score]),
        ("VolumeRestrictions", &[PreFilter, Filter]),
        ("NodeVolumeLimits", &[PreFilter, Filter]),
        ("VolumeBinding", &[PreFilter, Filter, Reserve, PreBind]),
        ("VolumeZone", &[PreFilter, Filter]),
        ("PodTopologySpread", &[PreFilter, Filter, PreScore, Score]),
        ("InterPodAffinity", &[PreFilter, Filter, PreScore, Score]),
        ("DefaultPreemption", &[PostFilter]),
        ("NodeResourcesBalancedAllocation", &[PreScore, Score]),
        ("ImageLocality", &[Score]),
        ("DefaultBinder", &[Bind]),
    ];
    let registered: Vec<&str> = kubesim_scheduler::plugins::REGISTRY.iter().map(|r| r.name).collect();
    let listed: Vec<&str> = upstream.iter().map(|(n, _)| *n).collect();
    assert_eq!(registered, listed, "the registry holds the default plugins in upstream order");
    for (name, points) in upstream {
        let plugin = kubesim_scheduler::plugins::new_plugin(name, None).unwrap();
        assert_eq!(plugin.name(), *name);
        assert_eq!(plugin.points(), *points, "{name}'s extension points");
    }
}
