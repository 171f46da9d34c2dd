#![cfg(not(target_arch = "wasm32"))]
//! `World: Clone` (time-travel snapshots): a clone taken mid-run is an independent world whose
//! future is bit-identical to the original's and to a fresh run's.

use kubesim_sim::run::{list_all, run, trace_hash, RunOptions};
use kubesim_sim::scenario::InputFile;
use kubesim_sim::view;
use kubesim_sim::World;

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: 'nginx:1.27'}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo}\nspec: {containers: [{name: app, image: 'nginx:1.27'}]}\n";

// A busy mix: an HPA driven by the metrics-server model, a Job, a rollout, a scale-up, a node
// failure (taints, evictions after the toleration) and a container crash.
const HPA: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: php-apache}\nspec:\n  replicas: 1\n  selector: {matchLabels: {run: php-apache}}\n  template:\n    metadata: {labels: {run: php-apache}, annotations: {kubesim.dev/cpu-usage: 500m}}\n    spec: {containers: [{name: php-apache, image: 'registry.k8s.io/hpa-example', resources: {requests: {cpu: 200m}, limits: {cpu: 500m}}}]}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: php-apache}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: php-apache}\n  minReplicas: 1\n  maxReplicas: 10\n  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n";

const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\nspec:\n  completions: 4\n  parallelism: 2\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: work, image: busybox, command: [sh, -c, 'sleep 7; exit 0']}]\n";

const SEED: u64 = 11;
const T2: u64 = 200_000;

fn files() -> Vec<InputFile> {
    vec![
        InputFile { name: "web.yaml".into(), text: WEB.into() },
        InputFile { name: "hpa.yaml".into(), text: HPA.into() },
        InputFile { name: "job.yaml".into(), text: JOB.into() },
    ]
}

fn commands() -> Vec<(u64, String)> {
    [
        (10_000, "kubectl scale deployment/web --replicas=6"),
        (12_000, "fault container-crash default/solo"),
        (20_000, "fault node-down node-1"),
        (40_000, "kubectl set image deployment/web nginx=nginx:1.28"),
        (90_000, "fault node-up node-1"),
    ]
    .into_iter()
    .map(|(t, c)| (t, c.to_string()))
    .collect()
}

/// The world at t=0 with the inputs loaded and the commands queued (as `kubesim run` does).
fn start() -> World {
    let options = RunOptions { files: files(), seed: SEED, commands: commands(), ..Default::default() };
    let (world, _, errors) = kubesim_sim::run::start(&options);
    assert!(errors.is_empty(), "{errors:?}");
    world
}

/// Everything observable about a world, for equality checks.
fn fingerprint(world: &World) -> (u64, String, usize, String, usize, usize, String, view::ClusterSnapshot) {
    let notes: Vec<String> = world.notes().iter().map(|n| format!("{} {} {} {} {}", n.t_ms, n.actor, n.target, n.call, n.detail)).collect();
    let deliveries: Vec<String> = world.deliveries().iter().map(|d| format!("{} {} {:?} {}", d.t_ms, d.revision, d.event_type, d.component)).collect();
    (
        world.now(),
        trace_hash(world.trace()),
        world.trace().len(),
        format!("{notes:?}{deliveries:?}{:?}", world.commands()),
        world.notes().len(),
        world.deliveries().len() + world.deliveries_dropped(),
        list_all(world).to_string(),
        view::snapshot(world),
    )
}

#[test]
fn a_clone_taken_mid_run_has_the_same_future_as_the_original_and_a_fresh_run() {
    let fresh = run(RunOptions { files: files(), seed: SEED, duration_ms: Some(T2), commands: commands(), ..Default::default() });
    assert!(fresh.errors.is_empty(), "{:?}", fresh.errors);
    let expected = fingerprint(&fresh.world);
    // The scenario is busy: writes from many actors, a node failure, a rollout, the HPA.
    let actors: std::collections::BTreeSet<&str> = fresh.world.trace().iter().map(|r| &*r.actor).collect();
    for actor in [
        "kubectl",
        "fault",
        "scheduler",
        "replicaset-controller",
        "deployment-controller",
        "node-controller",
        "taint-eviction-controller",
        "horizontal-pod-autoscaler",
        "job-controller",
    ] {
        assert!(actors.contains(actor), "{actor} wrote something: {actors:?}");
    }
    assert!(fresh.world.commands().iter().all(|c| c.exit_code == 0), "{:?}", fresh.world.commands());
    assert!(fresh.world.trace().len() > 500, "{} writes", fresh.world.trace().len());

    // Clone before the faults (queued commands are in the clone's queue), in the middle of the
    // node failure and the rollout, and after the node came back.
    for t1 in [5_000, 21_000, 45_001, 95_000] {
        let mut original = start();
        original.run_until(t1);
        let mut clone = original.clone();
        assert_eq!(fingerprint(&clone), fingerprint(&original), "a clone starts equal (t1 = {t1})");
        // Run the clone first: nothing it does may leak into the original.
        clone.run_until(T2);
        original.run_until(T2);
        assert!(fingerprint(&clone) == expected, "the clone taken at {t1} ms diverged from a fresh run");
        assert!(fingerprint(&original) == expected, "the original diverged from a fresh run after cloning at {t1} ms");
    }
}

#[test]
fn a_clone_is_independent_of_its_original() {
    let fresh = run(RunOptions { files: files(), seed: SEED, duration_ms: Some(T2), commands: commands(), ..Default::default() });
    let mut original = start();
    original.run_until(30_000);
    // The clone takes a different future (a fault and a scale the original never sees).
    let mut clone = original.clone();
    clone.run_command("fault node-down node-2");
    clone.run_command("kubectl scale deployment/web --replicas=1");
    clone.run_until(T2);
    original.run_until(T2);
    assert!(fingerprint(&original) == fingerprint(&fresh.world), "the original is untouched by its clone's different future");
    assert_ne!(trace_hash(clone.trace()), trace_hash(original.trace()));
}

/// The recorded history is bounded (`WorldConfig::trace_history`) without changing what
/// happens: a run keeping 100..200 trace records and notes has the same trace hash over the
/// records it holds as a run keeping all, numbers every write from the start, and the views
/// that read the trace incrementally skip only what was dropped.
#[test]
fn a_bounded_trace_keeps_the_latest_records_numbered_from_the_start() {
    let options = |trace_history| RunOptions {
        files: files(),
        seed: SEED,
        duration_ms: Some(T2),
        commands: commands(),
        trace_history: Some(trace_history),
        ..Default::default()
    };
    let whole = run(options(0)).world;
    let bounded = run(options(100)).world;
    assert!(whole.trace().len() > 500, "{} writes", whole.trace().len());
    assert_eq!(whole.trace_dropped(), 0);
    assert_eq!(bounded.trace_total(), whole.trace().len(), "every write is counted");
    assert!((100..=200).contains(&bounded.trace().len()), "{} held", bounded.trace().len());
    assert!((100..=200).contains(&bounded.notes().len()), "{} notes held", bounded.notes().len());
    assert_eq!(bounded.notes_total(), whole.notes().len());
    let tail = &whole.trace()[bounded.trace_dropped()..];
    assert_eq!(trace_hash(bounded.trace()), trace_hash(tail), "the held records are the latest ones");
    let entries = view::trace_entries(&bounded, 0);
    assert_eq!(entries.first().map(|e| e.index), Some(bounded.trace_dropped()), "a reader from 0 resumes at the first held record");
    assert_eq!(entries.len(), bounded.trace().len());
    assert_eq!(view::trace_len(&bounded), whole.trace().len());
    assert_eq!(bounded.trace_since(bounded.trace_total() - 3).len(), 3);
}

/// `view::snapshot_cached` (the browser's refresh, which describes again only the pod versions
/// it has not seen) draws exactly what a fresh `view::snapshot` draws, at every step of a busy
/// history: rollouts, a Job, an HPA, a crash, a node failure with evictions and recovery.
#[test]
fn a_snapshot_from_cached_pod_views_equals_a_fresh_one_throughout_a_busy_run() {
    let mut world = start();
    let mut cache = view::SnapshotCache::default();
    let mut compared = 0;
    let mut t = 0;
    while t < T2 {
        t += 1_500;
        world.run_until(t);
        assert_eq!(view::snapshot_cached(&world, &mut cache), view::snapshot(&world), "at {t} ms");
        compared += 1;
    }
    assert!(compared > 100);
}
