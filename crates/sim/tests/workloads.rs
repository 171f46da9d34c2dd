#![cfg(not(target_arch = "wasm32"))]
//! Workload controllers end to end through `kubesim run` (real scheduler and kubelets):
//! rolling-update bounds, a stalled rollout recovered by `rollout undo`, StatefulSet ordering
//! and a Job's parallelism.

use kubesim_api::object::Object;
use kubesim_sim::run::{run, RunOptions};
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;
use std::collections::BTreeMap;

fn scenario(yaml: &str, commands: &[(u64, &str)], duration_ms: u64) -> World {
    let outcome = run(RunOptions {
        files: vec![InputFile { name: "s.yaml".into(), text: yaml.into() }],
        seed: 5,
        duration_ms: Some(duration_ms),
        commands: commands.iter().map(|(t, c)| (*t, c.to_string())).collect(),
        ..Default::default()
    });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    assert!(outcome.world.commands().iter().all(|c| c.exit_code == 0), "{:?}", outcome.world.commands());
    outcome.world
}

/// Replays the trace: after every write, (pods of the deployment not terminating, Ready ones).
fn pod_counts_over_time(world: &World, label: &str) -> Vec<(u64, usize, usize)> {
    let mut pods: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    let mut series = Vec::new();
    for record in world.trace() {
        let Object::Pod(pod) = record.object.as_ref() else { continue };
        if pod.metadata.labels.as_ref().and_then(|l| l.get("app")).map(String::as_str) != Some(label) {
            continue;
        }
        let name = pod.metadata.name.clone().unwrap_or_default();
        if record.event_type.as_str() == "DELETED" {
            pods.remove(&name);
        } else {
            let terminating = pod.metadata.deletion_timestamp.is_some();
            let ready = pod.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
            pods.insert(name, (!terminating, ready && !terminating));
        }
        series.push((record.t_ms, pods.values().filter(|p| p.0).count(), pods.values().filter(|p| p.1).count()));
    }
    series
}

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 4\n  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: 'nginx:1.27'}]}\n";

// deployment/rolling.go: during a rollout the pods never exceed replicas + maxSurge and the
// Ready ones never drop below replicas − maxUnavailable (once the first rollout completed).
#[test]
fn a_rolling_update_stays_within_max_surge_and_max_unavailable() {
    let world = scenario(WEB, &[(30_000, "kubectl set image deployment/web nginx=nginx:1.28")], 120_000);
    let series = pod_counts_over_time(&world, "web");
    let during: Vec<_> = series.iter().filter(|(t, _, _)| *t >= 30_000).collect();
    assert!(!during.is_empty());
    let max_pods = during.iter().map(|(_, n, _)| *n).max().unwrap();
    let min_ready = during.iter().map(|(_, _, r)| *r).min().unwrap();
    assert!(max_pods <= 5, "at most replicas + maxSurge pods: {max_pods}");
    assert!(min_ready >= 3, "at least replicas − maxUnavailable ready: {min_ready}");
    let deployment = world.api().lookup(("apps", "deployments"), "default", "web").unwrap().to_json();
    assert_eq!(deployment["status"]["updatedReplicas"], 4);
    assert_eq!(deployment["status"]["availableReplicas"], 4);
    assert!(deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28");
}

// A rollout to a missing image stalls within maxUnavailable (ImagePullBackOff) and
// `kubectl rollout undo` brings every replica back on the old image.
#[test]
fn a_stalled_rollout_is_held_and_recovered_by_undo() {
    let world =
        scenario(WEB, &[(30_000, "kubectl set image deployment/web nginx=registry.invalid/nginx:9"), (90_000, "kubectl rollout undo deployment/web")], 180_000);
    let series = pod_counts_over_time(&world, "web");
    let stalled: Vec<_> = series.iter().filter(|(t, _, _)| (30_000..90_000).contains(t)).collect();
    assert!(stalled.iter().all(|(_, n, r)| *n <= 5 && *r >= 3), "held within bounds: {stalled:?}");
    let pods: Vec<_> = world
        .api()
        .store()
        .list(("", "pods"), Some("default"))
        .filter_map(|o| o.as_pod().cloned())
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    assert_eq!(pods.len(), 4, "{:?}", pods.iter().map(|p| p.metadata.name.clone()).collect::<Vec<_>>());
    assert!(pods.iter().all(|p| p.spec.as_ref().unwrap().containers[0].image.as_deref() == Some("nginx:1.27")));
    assert!(pods.iter().all(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")));
}

// StatefulSet OrderedReady: web-0 is Running and Ready before web-1 is created, and so on.
#[test]
fn a_statefulset_creates_its_pods_in_order() {
    let yaml = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n  serviceName: nginx\n  replicas: 3\n  selector: {matchLabels: {app: sts}}\n  template:\n    metadata: {labels: {app: sts}}\n    spec: {containers: [{name: nginx, image: 'nginx:1.27'}]}\n";
    let world = scenario(yaml, &[], 60_000);
    let created =
        |name: &str| world.trace().iter().find(|r| r.object.kind() == "Pod" && r.object.name() == name && r.event_type.as_str() == "ADDED").map(|r| r.t_ms);
    let ready = |name: &str| {
        world
            .trace()
            .iter()
            .find(|r| {
                r.object.name() == name
                    && r.object
                        .as_pod()
                        .and_then(|p| p.status.as_ref())
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
            })
            .map(|r| r.t_ms)
    };
    let (c0, r0, c1, r1, c2) =
        (created("web-0").unwrap(), ready("web-0").unwrap(), created("web-1").unwrap(), ready("web-1").unwrap(), created("web-2").unwrap());
    assert!(c0 < r0 && r0 <= c1 && c1 < r1 && r1 <= c2, "{c0} {r0} {c1} {r1} {c2}");
    let pod = world.api().lookup(("", "pods"), "default", "web-1").unwrap().to_json();
    assert_eq!(pod["spec"]["hostname"], "web-1");
    assert_eq!(pod["spec"]["subdomain"], "nginx");
}

// A Job with completions 6 and parallelism 2 never runs more than 2 pods at once and completes.
#[test]
fn a_job_respects_its_parallelism_and_completes() {
    let yaml = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\nspec:\n  completions: 6\n  parallelism: 2\n  template:\n    metadata: {labels: {app: job}}\n    spec: {restartPolicy: Never, containers: [{name: work, image: busybox, command: [sh, -c, 'sleep 5']}]}\n";
    let world = scenario(yaml, &[], 120_000);
    let mut running: BTreeMap<String, bool> = BTreeMap::new();
    let mut peak = 0;
    for record in world.trace() {
        let Some(pod) = record.object.as_pod() else { continue };
        if pod.metadata.labels.as_ref().and_then(|l| l.get("app")).map(String::as_str) != Some("job") {
            continue;
        }
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
        running.insert(pod.metadata.name.clone().unwrap_or_default(), phase == "Running" && record.event_type.as_str() != "DELETED");
        peak = peak.max(running.values().filter(|r| **r).count());
    }
    assert!((1..=2).contains(&peak), "peak parallelism {peak}");
    let job = world.api().lookup(("batch", "jobs"), "default", "batch").unwrap().to_json();
    assert_eq!(job["status"]["succeeded"], 6, "{job}");
    let conditions = job["status"]["conditions"].as_array().unwrap();
    assert!(conditions.iter().any(|c| c["type"] == "Complete" && c["status"] == "True"), "{conditions:?}");
}

// StatefulSet Basics, "Non-cascading delete": after `kubectl delete statefulset web
// --cascade=orphan` and `kubectl delete pod web-0`, re-creating the set adopts web-1 and web-2
// and its orphaned ControllerRevision (stateful_set.go adoptOrphanRevisions), recreates web-0
// and removes web-2 (replicas 2). Before, the new set could not take back its revision (the
// name was taken) and never reconciled: READY 0/2 for ever.
#[test]
fn a_statefulset_recreated_after_an_orphaning_delete_adopts_its_pods_and_history() {
    let yaml = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n  serviceName: nginx\n  replicas: 3\n  selector: {matchLabels: {app: sts}}\n  template:\n    metadata: {labels: {app: sts}}\n    spec: {containers: [{name: nginx, image: 'nginx:1.27'}]}\n";
    let recreate = yaml.replace("replicas: 3", "replicas: 2");
    let (mut world, _, errors) = kubesim_sim::run::start(&RunOptions {
        files: vec![InputFile { name: "s.yaml".into(), text: yaml.into() }],
        seed: 5,
        duration_ms: None,
        commands: vec![(60_000, "kubectl delete statefulset web --cascade=orphan".into()), (65_000, "kubectl delete pod web-0".into())],
        ..Default::default()
    });
    assert!(errors.is_empty(), "{errors:?}");
    world.add_file("web2.yaml", &recreate);
    world.run_until(90_000);
    assert_eq!(world.run_command("kubectl get pods -l app=sts -o name").stdout, "pod/web-1\npod/web-2\n");
    let applied = world.run_command("kubectl apply -f web2.yaml");
    assert_eq!(applied.exit_code, 0, "{applied:?}");
    world.run_until(180_000);
    let set = world.api().lookup(("apps", "statefulsets"), "default", "web").unwrap().to_json();
    assert_eq!(set["status"]["readyReplicas"], 2, "{}", set["status"]);
    let uid = set["metadata"]["uid"].as_str().unwrap().to_string();
    for name in ["web-0", "web-1"] {
        let pod = world.api().lookup(("", "pods"), "default", name).unwrap().to_json();
        assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], uid.as_str(), "{name} is the new set's");
    }
    assert!(world.api().lookup(("", "pods"), "default", "web-2").is_none(), "web-2 is removed (replicas 2)");
    let info = kubesim_api::object::kind_info("apps/v1", "ControllerRevision").unwrap();
    let revisions: Vec<_> = world.api().list(info, Some("default"), None, None).unwrap().0.iter().map(|r| r.to_json()).collect();
    assert_eq!(revisions.len(), 1, "the orphaned revision is adopted, not duplicated");
    assert_eq!(revisions[0]["metadata"]["ownerReferences"][0]["uid"], uid.as_str());
}

// A StatefulSet deleted in the foreground goes, with its pods: the controller leaves a set
// being deleted alone (updateStatefulSet), rather than recreating the pods the garbage
// collector deletes, for ever. Found by the swarm (seed 1027, shrunk to this).
#[test]
fn a_statefulset_deleted_in_the_foreground_goes_with_its_pods() {
    let yaml = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  serviceName: db\n  replicas: 2\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers:\n      - {name: db, image: nginx:1.27, volumeMounts: [{name: data, mountPath: /usr/share/nginx/html}]}\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";
    let world = scenario(yaml, &[(30_000, "kubectl delete statefulset db --cascade=foreground --wait=false")], 120_000);
    let store = world.api().store();
    assert!(store.get(("apps", "statefulsets"), "default", "db").is_none(), "the set is gone");
    assert_eq!(store.list(("", "pods"), Some("default")).count(), 0, "and its pods");
    assert!(world.trace().len() < 2_000, "no create/delete fight: {} writes", world.trace().len());
}
