#![cfg(not(target_arch = "wasm32"))]
//! The HPA through the whole world: the metrics-server model scrapes the kubelets' usage model
//! every 15 s, the HPA controller computes replicas (replica_calculator.go) and scales the
//! Deployment; pods come up through the scheduler and kubelets.

use kubesim_sim::run::{run, RunOptions};
use kubesim_sim::scenario::InputFile;

const HOT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: php-apache}\nspec:\n  replicas: 1\n  selector: {matchLabels: {run: php-apache}}\n  template:\n    metadata: {labels: {run: php-apache}, annotations: {kubesim.dev/cpu-usage: 500m}}\n    spec: {containers: [{name: php-apache, image: 'registry.k8s.io/hpa-example', resources: {requests: {cpu: 200m}, limits: {cpu: 500m}}}]}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: php-apache}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: php-apache}\n  minReplicas: 1\n  maxReplicas: 10\n  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n";

#[test]
fn an_hpa_scales_a_busy_deployment_up_from_scraped_usage() {
    let outcome =
        run(RunOptions { files: vec![InputFile { name: "hpa.yaml".into(), text: HOT.into() }], seed: 1, duration_ms: Some(180_000), ..Default::default() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    let world = &outcome.world;
    let deployment = world.api().lookup(("apps", "deployments"), "default", "php-apache").unwrap().to_json();
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap();
    // 500m used of 200m requested = 250% against a 50% target: ceil(2.5/0.5 × 1) = 5, then
    // scale-up limits (×2 or +4 per 15 s) and more pods at the same per-pod usage push further.
    assert!(replicas >= 4, "scaled up: {replicas}");
    let hpa = world.api().lookup(("autoscaling", "horizontalpodautoscalers"), "default", "php-apache").unwrap().to_json();
    assert!(hpa["status"]["desiredReplicas"].as_i64().unwrap() >= 4, "{hpa}");
    let reasons: Vec<String> = world
        .trace()
        .iter()
        .filter_map(|r| match r.object.as_ref() {
            kubesim_api::object::Object::Event(e) if e.involved_object.kind.as_deref() == Some("HorizontalPodAutoscaler") => e.reason.clone(),
            _ => None,
        })
        .collect();
    assert!(reasons.iter().any(|r| r == "SuccessfulRescale"), "{reasons:?}");
}

fn docs(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../../../shared/corpus/k8s-docs-examples/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

// The docs' HorizontalPodAutoscaler walkthrough (application/php-apache.yaml +
// application/hpa/php-apache.yaml): the page's load generator (a busybox wget loop against the
// Service, through CoreDNS and kube-proxy) makes php-apache burn CPU, the HPA scales up; the
// load generator is deleted, and after the 5-minute downscale stabilization window the HPA
// scales back to minReplicas.
#[test]
fn the_php_apache_walkthrough_scales_up_under_load_and_back_down() {
    let outcome = run(RunOptions {
        files: vec![
            InputFile { name: "php-apache.yaml".into(), text: docs("application/php-apache.yaml") },
            InputFile { name: "hpa.yaml".into(), text: docs("application/hpa/php-apache.yaml") },
        ],
        seed: 1,
        duration_ms: Some(15 * 60_000),
        commands: vec![
            (
                60_000,
                "kubectl run load-generator --image=busybox:1.28 --restart=Never -- /bin/sh -c 'while sleep 0.01; do wget -q -O- http://php-apache; done'"
                    .to_string(),
            ),
            (300_000, "kubectl delete pod load-generator --grace-period=0 --force".to_string()),
        ],
        ..Default::default()
    });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    let world = &outcome.world;
    assert!(world.commands().iter().all(|c| c.exit_code == 0), "{:?}", world.commands());
    let replicas_at = |t: u64| {
        world
            .trace()
            .iter()
            .rfind(|r| r.t_ms <= t && r.object.kind() == "Deployment" && r.object.name() == "php-apache")
            .map(|r| r.object.to_json()["spec"]["replicas"].as_i64().unwrap_or(1))
            .unwrap()
    };
    assert_eq!(replicas_at(55_000), 1, "no load yet");
    let peak = replicas_at(290_000);
    // The page's seven: one sequential client keeps about 650m busy (30 ms of CPU a request,
    // unthrottled once the CFS quota is shared by several replicas), 7 x 100m at the target.
    assert_eq!(peak, 7, "scaled up under load to the page's seven replicas");
    assert_eq!(replicas_at(14 * 60_000), 1, "scaled back down after the stabilization window");
    // Not before the 5-minute window after the load stopped.
    assert!(replicas_at(300_000 + 4 * 60_000) > 1);
}
