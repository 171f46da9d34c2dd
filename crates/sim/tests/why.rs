#![cfg(not(target_arch = "wasm32"))]
//! The inspector's Why tab answers for every state of the lifecycle graph: one test per
//! `view::Lifecycle` state (more for the states with several causes). Each drives a pod into
//! the state through the model — nothing is written into the pod by the test except what a
//! user or a controller would write — checks that the lifecycle graph classifies it so, and
//! checks that the state's answer explains it from the records (the FitError, the pull error,
//! the probe's output, the exit code, the eviction signal, ...) with the moment it happened,
//! which each test finds in the trace by itself.

use kubesim_api::k8s_openapi::api::core::v1::{Pod, PodCondition};
use kubesim_api::object::Object;
use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::view::{self, Lifecycle};
use kubesim_sim::why::{why, WhyAnswer};
use kubesim_sim::World;

fn world_with(yaml: &str) -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    load(&mut world, yaml);
    world
}

fn load(world: &mut World, yaml: &str) {
    let outcome = apply(world, &InputFile { name: "test.yaml".into(), text: yaml.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
}

fn kubectl(world: &mut World, line: &str) -> String {
    let record = world.run_command(&format!("kubectl {line}"));
    assert_eq!(record.exit_code, 0, "{line}: {}", record.stderr);
    record.stdout
}

fn pod(world: &World, name: &str) -> Pod {
    world.api().lookup(("", "pods"), "default", name).and_then(|o| o.as_pod().cloned()).unwrap_or_else(|| panic!("pod {name} exists"))
}

fn lifecycle(world: &World, name: &str) -> Lifecycle {
    view::pod_view(&pod(world, name)).lifecycle
}

fn answers(world: &World, name: &str) -> Vec<WhyAnswer> {
    why(world, "default", name)
}

/// The first answer is the state's; it asks `question`.
fn state_answer(world: &World, name: &str, state: Lifecycle, question: &str) -> WhyAnswer {
    assert_eq!(lifecycle(world, name), state, "{name} at {}", world.now());
    let all = answers(world, name);
    let first = all.first().cloned().unwrap_or_else(|| panic!("{name} has answers"));
    assert_eq!(first.question, question, "{all:#?}");
    first
}

fn answer_to(answers: &[WhyAnswer], question: &str) -> WhyAnswer {
    answers.iter().find(|a| a.question == question).cloned().unwrap_or_else(|| panic!("no answer to {question:?} in {answers:#?}"))
}

fn has_detail(a: &WhyAnswer, needle: &str) -> bool {
    a.details.iter().any(|d| d.contains(needle))
}

/// The moment of the first write of pod `name` (this UID) satisfying `pred`, read from the trace.
fn first_write(world: &World, name: &str, pred: impl Fn(&Pod) -> bool) -> u64 {
    let uid = pod(world, name).metadata.uid;
    world
        .trace()
        .iter()
        .find(|r| r.object.as_pod().is_some_and(|p| p.metadata.uid == uid && pred(p)))
        .map(|r| r.t_ms)
        .unwrap_or_else(|| panic!("no write of {name} matches"))
}

/// The moment of the first write after which pod `name` stayed in `state` until now.
fn entered(world: &World, name: &str, state: Lifecycle) -> u64 {
    let uid = pod(world, name).metadata.uid;
    let mut t = None;
    for r in world.trace().iter().rev() {
        let Some(p) = r.object.as_pod().filter(|p| p.metadata.uid == uid) else { continue };
        if view::pod_view(p).lifecycle != state {
            break;
        }
        t = Some(r.t_ms);
    }
    t.unwrap_or_else(|| panic!("{name} is not {state:?}"))
}

/// (moment, reason, message) of every Event write about `name`, in order.
fn event_writes(world: &World, name: &str) -> Vec<(u64, String, String)> {
    world
        .trace()
        .iter()
        .filter_map(|r| match r.object.as_ref() {
            Object::Event(e) if e.involved_object.name.as_deref() == Some(name) => {
                Some((r.t_ms, e.reason.clone().unwrap_or_default(), e.message.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .collect()
}

/// Steps the world one event at a time until pod `name` is in `state`.
fn step_until(world: &mut World, name: &str, state: Lifecycle, limit: u64) {
    while world.api().lookup(("", "pods"), "default", name).and_then(|o| o.as_pod().map(|p| view::pod_view(p).lifecycle)) != Some(state) {
        assert!(world.now() < limit && world.step(), "{name} never reached {state:?} by {limit}");
    }
}

fn condition(p: &Pod, type_: &str) -> Option<PodCondition> {
    p.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_).cloned()
}

fn no_violations(world: &World) {
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
}

/// Every lifecycle state has its test here: adding a state does not compile until it has one.
#[test]
fn every_lifecycle_state_has_a_test() {
    fn test_of(state: Lifecycle) -> &'static str {
        match state {
            Lifecycle::Pending => "pending_says_the_scheduler_has_not_tried_yet_or_that_no_scheduler_serves_it",
            Lifecycle::SchedulingGated => "scheduling_gated_names_the_gates",
            Lifecycle::Unschedulable => "unschedulable_quotes_the_fit_error_and_each_nodes_failing_filter",
            Lifecycle::Scheduled => "scheduled_names_the_node_its_scores_and_the_kubelet_that_has_not_reported",
            Lifecycle::ContainerCreating => "container_creating_names_the_image_pull_in_progress",
            Lifecycle::Initializing => "init_names_the_running_init_container",
            Lifecycle::ImagePullBackOff => "image_pull_back_off_quotes_the_pull_error_and_the_back_off",
            Lifecycle::Running => "running_not_ready_names_the_failing_readiness_probe_and_its_output",
            Lifecycle::Ready => "ready_says_every_container_is_ready_and_since_when_and_why_that_node_and_ip",
            Lifecycle::CrashLoopBackOff => "crash_loop_back_off_gives_the_exit_code_the_back_off_and_the_last_output",
            Lifecycle::Terminating => "terminating_says_who_deleted_it_the_grace_period_the_pre_stop_hook_and_the_finalizer",
            Lifecycle::Succeeded => "succeeded_gives_the_exit_codes",
            Lifecycle::Failed => "failed_gives_the_exit_code_and_the_jobs_backoff_limit",
            Lifecycle::Evicted => "evicted_names_the_signal_and_the_kubelet_that_evicted_it",
            Lifecycle::OOMKilled => "oom_killed_gives_the_memory_limit_and_the_reason",
        }
    }
    let source = include_str!("why.rs");
    for state in Lifecycle::ALL {
        assert!(source.contains(&format!("fn {}()", test_of(state))), "{state:?} has no test {}", test_of(state));
    }
}

#[test]
fn pending_says_the_scheduler_has_not_tried_yet_or_that_no_scheduler_serves_it() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: nginx}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: custom}\nspec: {schedulerName: my-scheduler, containers: [{name: c, image: nginx}]}\n",
    );
    // Created, its watch event not yet delivered to the scheduler.
    let a = state_answer(&world, "web", Lifecycle::Pending, "Why is it Pending?");
    assert_eq!(a.answer, "the scheduler has not seen it yet (its watch event is on the way to the scheduling queue)");
    assert_eq!(a.t_ms, Some(0));
    assert!(has_detail(&a, "created at 00:00.000 by kubectl"), "{a:#?}");
    // In activeQ, not yet popped.
    while world.scheduler().unwrap().queue_location("default", "web").is_none() {
        assert!(world.step());
    }
    let a = state_answer(&world, "web", Lifecycle::Pending, "Why is it Pending?");
    assert_eq!(a.answer, "it waits in the scheduling queue: the scheduler has not tried to place it yet");
    assert!(has_detail(&a, "in the scheduling queue: activeQ") && has_detail(&a, "0 attempt(s) so far"), "{a:#?}");
    assert_eq!((a.t_ms, a.source.as_str()), (Some(0), "default-scheduler"));

    // A schedulerName no profile serves: Pending for good, and the answer says so.
    world.run_until(30_000);
    assert_eq!(lifecycle(&world, "web"), Lifecycle::Ready);
    let a = state_answer(&world, "custom", Lifecycle::Pending, "Why is it Pending?");
    assert_eq!(a.answer, "no scheduler named my-scheduler runs: nothing will place it until one does (or spec.nodeName is set)");
    assert!(has_detail(&a, "kube-scheduler's profiles: default-scheduler"), "{a:#?}");
    assert_eq!(a.t_ms, Some(0));
    assert!(answers(&world, "custom").iter().all(|a| a.question != "Why this node?"), "not on a node");
}

#[test]
fn scheduling_gated_names_the_gates() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: gated}\nspec: {schedulingGates: [{name: example.com/quota}, {name: example.com/region}], containers: [{name: c, image: nginx}]}\n",
    );
    world.run_until(20_000);
    let a = state_answer(&world, "gated", Lifecycle::SchedulingGated, "Why is it Pending?");
    assert_eq!(a.answer, "its scheduling gates hold it back from the scheduler: example.com/quota, example.com/region");
    assert!(has_detail(&a, "PodScheduled False: SchedulingGated — Scheduling is blocked due to non-empty scheduling gates"), "{a:#?}");
    assert!(has_detail(&a, "in the scheduling queue: the gated pods (PreEnqueue: SchedulingGates); 0 attempt(s)"), "{a:#?}");
    assert_eq!(a.t_ms, Some(0), "gated since it was created");
    // Removing the gates lets the scheduler place it; the answers follow.
    kubectl(&mut world, r#"patch pod gated --type=json -p '[{"op":"remove","path":"/spec/schedulingGates"}]'"#);
    world.run_until(40_000);
    let ready = state_answer(&world, "gated", Lifecycle::Ready, "Why is it Ready?");
    assert!(ready.t_ms.unwrap() > 20_000, "{ready:?}");
    assert!(answer_to(&answers(&world, "gated"), "Why this node?").t_ms.unwrap() > 20_000);
}

#[test]
fn unschedulable_quotes_the_fit_error_and_each_nodes_failing_filter() {
    let mut world = world_with("");
    kubectl(&mut world, "taint nodes node-3 dedicated=gpu:NoSchedule");
    load(&mut world, "apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: '6'}}}]}\n");
    world.run_until(20_000);
    let p = pod(&world, "huge");
    let fit_error = condition(&p, "PodScheduled").and_then(|c| c.message).unwrap();
    assert!(fit_error.starts_with("0/3 nodes are available: "), "{fit_error}");
    let a = state_answer(&world, "huge", Lifecycle::Unschedulable, "Why is it Pending?");
    assert_eq!(a.answer, fit_error, "the FitError, as the scheduler wrote it");
    assert_eq!(
        a.answer,
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    for detail in [
        "node-1: NodeResourcesFit — Insufficient cpu",
        "node-2: NodeResourcesFit — Insufficient cpu",
        "node-3: TaintToleration — node(s) had untolerated taint {dedicated: gpu}",
    ] {
        assert!(a.details.iter().any(|d| d == detail), "{detail}: {a:#?}");
    }
    assert!(has_detail(&a, "in the scheduling queue: unschedulablePods"), "{a:#?}");
    assert!(has_detail(&a, "FailedScheduling ×"), "{a:#?}");
    let attempt = world.scheduler().unwrap().last_attempt("default", "huge").unwrap().t_ms;
    assert_eq!((a.t_ms, a.source.as_str()), (Some(attempt), "default-scheduler"), "the scheduler's last attempt");
}

#[test]
fn scheduled_names_the_node_its_scores_and_the_kubelet_that_has_not_reported() {
    let mut world = world_with("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: nginx}]}\n");
    step_until(&mut world, "web", Lifecycle::Scheduled, 5_000);
    let node = pod(&world, "web").spec.unwrap().node_name.unwrap();
    let bound = first_write(&world, "web", |p| p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some());
    let a = state_answer(&world, "web", Lifecycle::Scheduled, "Why has it not started yet?");
    assert_eq!(a.answer, format!("it is bound to {node}; the kubelet there has not reported on it yet (it syncs the pod as soon as its watch delivers it)"));
    // The binding's writer, as the trace records it.
    assert_eq!((a.t_ms, a.source.as_str()), (Some(bound), "scheduler"));
    assert!(a.details.iter().any(|d| d == &format!("bound by scheduler at {}", kubesim_api::time::clock(bound))), "{a:#?}");
    let why_node = answer_to(&answers(&world, "web"), "Why this node?");
    assert!(why_node.answer.starts_with(&format!("the scheduler scored {node} highest among 3 feasible node(s)")), "{why_node:?}");
    assert!(has_detail(&why_node, &format!("{node}'s score: TaintToleration 300")), "{why_node:#?}");
    assert_eq!(why_node.t_ms, Some(world.scheduler().unwrap().last_attempt("default", "web").unwrap().t_ms));

    // Bound to a node whose kubelet is gone: Scheduled for good, and the node says why.
    world.run_until(10_000);
    world.run_command("fault node-down node-2");
    load(&mut world, "apiVersion: v1\nkind: Pod\nmetadata: {name: pinned}\nspec: {nodeName: node-2, containers: [{name: c, image: nginx}]}\n");
    world.run_until(90_000);
    let a = state_answer(&world, "pinned", Lifecycle::Scheduled, "Why has it not started yet?");
    assert_eq!(a.answer, "it is bound to node-2, whose kubelet is not reporting (the node is NotReady): nothing starts it until the kubelet is back");
    assert!(has_detail(&a, "node-2: Ready Unknown — Kubelet stopped posting node status."), "{a:#?}");
    assert_eq!((a.t_ms, a.source.as_str()), (Some(10_000), "kubectl"), "bound by its creator");
    let why_node = answer_to(&answers(&world, "pinned"), "Why this node?");
    assert_eq!(why_node.answer, "spec.nodeName named node-2 when kubectl created it: the pod never passed through the scheduler");
}

#[test]
fn init_names_the_running_init_container() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: init}\nspec:\n  initContainers:\n  - {name: prepare, image: busybox, command: [sh, -c, 'echo prepared']}\n  - {name: wait-for-db, image: busybox, command: [sh, -c, 'echo waiting for db; sleep 60']}\n  containers: [{name: app, image: nginx}]\n",
    );
    world.run_until(10_000);
    assert_eq!(view::pod_view(&pod(&world, "init")).status, "Init:1/2");
    let a = state_answer(&world, "init", Lifecycle::Initializing, "Why is it initializing?");
    assert_eq!(a.answer, "init container wait-for-db (2 of 2) is running; the app containers start once it exits 0");
    assert!(a.details.iter().any(|d| d == "init container prepare: Completed (exit code 0)"), "{a:#?}");
    assert!(a.details.iter().any(|d| d == "wait-for-db: sh -c 'echo waiting for db; sleep 60'"), "{a:#?}");
    assert!(a.details.iter().any(|d| d == "its last output: waiting for db"), "{a:#?}");
    let running = first_write(&world, "init", |p| {
        p.status
            .as_ref()
            .and_then(|s| s.init_container_statuses.as_ref())
            .is_some_and(|l| l.iter().any(|c| c.name == "wait-for-db" && c.state.as_ref().is_some_and(|s| s.running.is_some())))
    });
    assert_eq!(a.t_ms, Some(running));
    assert!(a.source.starts_with("kubelet/"));
    world.run_until(90_000);
    assert_eq!(lifecycle(&world, "init"), Lifecycle::Ready);
}

#[test]
fn container_creating_names_the_image_pull_in_progress() {
    let mut world = world_with(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubesim-images, namespace: kube-system}\ndata: {sizes: 'example.com/big:1 400000000'}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec: {containers: [{name: c, image: 'example.com/big:1'}]}\n",
    );
    world.run_until(5_000);
    let a = state_answer(&world, "big", Lifecycle::ContainerCreating, "Why is it not running yet?");
    let pulling = event_writes(&world, "big").into_iter().find(|e| e.1 == "Pulling").unwrap();
    assert_eq!(a.answer, format!("the kubelet is pulling image \"example.com/big:1\" (since {})", kubesim_api::time::clock(pulling.0)));
    assert_eq!(a.t_ms, Some(pulling.0), "the moment the pull began");
    world.run_until(20_000);
    assert_eq!(lifecycle(&world, "big"), Lifecycle::Ready);
}

#[test]
fn container_creating_names_a_container_config_error_and_a_missing_volume_source() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: cfg}\nspec:\n  containers:\n  - name: app\n    image: busybox\n    command: [sh, -c, 'sleep 3600']\n    env: [{name: LEVEL, valueFrom: {configMapKeyRef: {name: settings, key: level}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: vol}\nspec:\n  containers: [{name: app, image: busybox, command: [sh, -c, 'sleep 3600'], volumeMounts: [{name: config-volume, mountPath: /etc/config}]}]\n  volumes: [{name: config-volume, configMap: {name: special-config}}]\n",
    );
    world.run_until(20_000);
    let a = state_answer(&world, "cfg", Lifecycle::ContainerCreating, "Why is it not running yet?");
    assert_eq!(a.answer, "container app cannot be created: CreateContainerConfigError: configmap \"settings\" not found");
    assert!(has_detail(&a, "Failed (kubelet, node-"), "{a:#?}");
    let since = first_write(&world, "cfg", |p| {
        p.status.as_ref().and_then(|s| s.container_statuses.as_ref()).is_some_and(|l| {
            l.iter().any(|c| c.state.as_ref().and_then(|s| s.waiting.as_ref()).and_then(|w| w.reason.as_deref()) == Some("CreateContainerConfigError"))
        })
    });
    assert_eq!(a.t_ms, Some(since));

    let a = state_answer(&world, "vol", Lifecycle::ContainerCreating, "Why is it not running yet?");
    assert_eq!(a.answer, "a volume cannot be mounted: MountVolume.SetUp failed for volume \"config-volume\" : configmap \"special-config\" not found");
    let last = event_writes(&world, "vol").into_iter().rfind(|e| e.1 == "FailedMount").unwrap();
    assert_eq!(a.t_ms, Some(last.0), "the latest failed mount");
}

#[test]
fn container_creating_names_a_volume_that_cannot_attach() {
    let mut world = world_with(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: broken}\nprovisioner: disk.csi.kubesim.io\nvolumeBindingMode: WaitForFirstConsumer\nparameters: {kubesim.io/fail-attach: \"the disk's encryption key is disabled\"}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: locked}\nspec: {accessModes: [ReadWriteOnce], storageClassName: broken, resources: {requests: {storage: 1Gi}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: locked}\nspec:\n  containers: [{name: c, image: 'busybox:1.36', command: [sh, -c, 'sleep 36000'], volumeMounts: [{name: d, mountPath: /data}]}]\n  volumes: [{name: d, persistentVolumeClaim: {claimName: locked}}]\n",
    );
    world.run_until(60_000);
    let a = state_answer(&world, "locked", Lifecycle::ContainerCreating, "Why is it not running yet?");
    assert!(a.answer.starts_with("it waits for volume d (claim locked, Attaching): attach failed: "), "{a:#?}");
    assert!(a.answer.contains("the disk's encryption key is disabled"), "{a:#?}");
    assert!(has_detail(&a, "FailedAttachVolume ×") && has_detail(&a, "AttachVolume.Attach failed for volume"), "{a:#?}");
    let last = event_writes(&world, "locked").into_iter().rfind(|e| e.1 == "FailedAttachVolume").unwrap();
    assert_eq!(a.t_ms, Some(last.0));
    no_violations(&world);
}

#[test]
fn image_pull_back_off_quotes_the_pull_error_and_the_back_off() {
    let mut world = world_with("apiVersion: v1\nkind: Pod\nmetadata: {name: gone}\nspec: {containers: [{name: c, image: 'nginx:9.99-nope'}]}\n");
    world.run_until(40_000);
    let a = state_answer(&world, "gone", Lifecycle::ImagePullBackOff, "Why is its image not pulled?");
    assert!(a.answer.starts_with("container c cannot get image \"nginx:9.99-nope\": "), "{a:#?}");
    assert!(
        a.answer.ends_with("Failed to pull image \"nginx:9.99-nope\": rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:9.99-nope\": failed to resolve reference \"docker.io/library/nginx:9.99-nope\": docker.io/library/nginx:9.99-nope: not found"),
        "{a:#?}"
    );
    let pulls = event_writes(&world, "gone").into_iter().filter(|e| e.1 == "Pulling").count();
    assert!(pulls >= 3, "retried");
    assert!(a.details.iter().any(|d| d == &format!("pull attempts: {pulls}")), "{a:#?}");
    let last_failure = event_writes(&world, "gone").into_iter().rfind(|e| e.1 == "Failed" && e.2.starts_with("Failed to pull")).unwrap().0;
    assert!(
        a.details.iter().any(|d| d.starts_with(&format!("back-off 40s from {}: the kubelet pulls again after ", kubesim_api::time::clock(last_failure)))),
        "the kubelet's current window: {a:#?}"
    );
    let first_failure = first_write(&world, "gone", |p| {
        p.status.as_ref().and_then(|s| s.container_statuses.as_ref()).is_some_and(|l| {
            l.iter().any(|c| {
                matches!(c.state.as_ref().and_then(|s| s.waiting.as_ref()).and_then(|w| w.reason.as_deref()), Some("ErrImagePull" | "ImagePullBackOff"))
            })
        })
    });
    assert_eq!(a.t_ms, Some(first_failure), "since the first failed pull reached the status");
}

#[test]
fn running_not_ready_names_the_failing_readiness_probe_and_its_output() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: unready}\nspec:\n  containers:\n  - name: app\n    image: busybox\n    command: [sh, -c, 'sleep 3600']\n    readinessProbe: {exec: {command: [cat, /tmp/ready]}, periodSeconds: 5}\n",
    );
    world.run_until(30_000);
    let a = state_answer(&world, "unready", Lifecycle::Running, "Why is it not Ready?");
    let failures: Vec<(u64, String, String)> = event_writes(&world, "unready").into_iter().filter(|e| e.1 == "Unhealthy").collect();
    assert_eq!(a.answer, format!("its probe keeps failing: {}", failures.last().unwrap().2));
    assert!(a.answer.starts_with("its probe keeps failing: Readiness probe failed: cat: can't open '/tmp/ready'"), "{a:#?}");
    assert!(a.details.iter().any(|d| d == "readiness probe of app: exec [cat /tmp/ready] delay=0s timeout=1s period=5s #success=1 #failure=3"), "{a:#?}");
    assert!(has_detail(&a, "Ready False: ContainersNotReady — containers with unready status: [app]"), "{a:#?}");
    assert!(
        a.details
            .iter()
            .any(|d| d == &format!("{} probe failures in all, the last at {}", failures.len(), kubesim_api::time::clock(failures.last().unwrap().0))),
        "{a:#?}"
    );
    assert_eq!(a.t_ms, Some(entered(&world, "unready", Lifecycle::Running)));
    // The file appears: the probe passes, Ready.
    kubectl(&mut world, "exec unready -- touch /tmp/ready");
    world.run_until(40_000);
    let ready = state_answer(&world, "unready", Lifecycle::Ready, "Why is it Ready?");
    assert!(has_detail(&ready, "app: running since") && has_detail(&ready, "its readiness probe passes (exec [cat /tmp/ready]"), "{ready:#?}");
}

#[test]
fn running_not_ready_names_an_unsatisfied_readiness_gate() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: gate}\nspec: {readinessGates: [{conditionType: example.com/lb-ready}], containers: [{name: c, image: nginx}]}\n",
    );
    world.run_until(20_000);
    let a = state_answer(&world, "gate", Lifecycle::Running, "Why is it not Ready?");
    assert_eq!(
        a.answer,
        "its containers are ready but a readiness gate is not: corresponding condition of pod readiness gate \"example.com/lb-ready\" does not exist."
    );
    assert!(a.details.iter().any(|d| d == "readiness gate example.com/lb-ready: no such condition yet (whoever owns the gate sets it)"), "{a:#?}");
    assert_eq!(a.t_ms, Some(entered(&world, "gate", Lifecycle::Running)));
    // The gate's owner (a load balancer controller) sets its condition; the kubelet reconciles.
    let mut p = pod(&world, "gate");
    p.status.as_mut().unwrap().conditions.as_mut().unwrap().push(PodCondition {
        type_: "example.com/lb-ready".into(),
        status: "True".into(),
        ..Default::default()
    });
    world.as_actor("lb-controller", |ctx| ctx.update_status(Object::Pod(Box::new(p)))).unwrap();
    world.run_until(21_000);
    let ready = state_answer(&world, "gate", Lifecycle::Ready, "Why is it Ready?");
    assert!(ready.details.iter().any(|d| d == "readiness gate example.com/lb-ready True"), "{ready:#?}");
    assert!(ready.t_ms.unwrap() > 20_000);
}

#[test]
fn ready_says_every_container_is_ready_and_since_when_and_why_that_node_and_ip() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: nginx\n    image: 'nginx:1.27'\n    readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 2}\n  - name: sidecar\n    image: busybox\n    command: [sh, -c, 'sleep 3600']\n",
    );
    world.run_until(20_000);
    let since = first_write(&world, "web", |p| condition(p, "Ready").is_some_and(|c| c.status == "True"));
    let a = state_answer(&world, "web", Lifecycle::Ready, "Why is it Ready?");
    assert_eq!(a.answer, format!("all 2 containers are ready (since {}), so the kubelet set Ready=True", kubesim_api::time::clock(since)));
    assert_eq!(a.t_ms, Some(since));
    assert!(
        has_detail(&a, "nginx: running since") && has_detail(&a, "its readiness probe passes (http-get http://:80/ delay=0s timeout=1s period=2s"),
        "{a:#?}"
    );
    assert!(has_detail(&a, "sidecar: running since") && has_detail(&a, "no readiness probe: ready once started"), "{a:#?}");

    let all = answers(&world, "web");
    let p = pod(&world, "web");
    let node = p.spec.as_ref().unwrap().node_name.clone().unwrap();
    let ip = p.status.as_ref().unwrap().pod_ip.clone().unwrap();
    let why_node = answer_to(&all, "Why this node?");
    assert!(why_node.answer.starts_with(&format!("the scheduler scored {node} highest among 3 feasible node(s); 0 were filtered out")), "{why_node:?}");
    assert!(has_detail(&why_node, "tied for the top score: the scheduler picked one of them at random"), "equal nodes: {why_node:#?}");
    let cidr = world.api().lookup(("", "nodes"), "", &node).unwrap().as_node().unwrap().spec.as_ref().unwrap().pod_cidr.clone().unwrap();
    let why_ip = answer_to(&all, "Why this IP?");
    assert_eq!(why_ip.answer, format!("the CNI plugin on {node} gave it {ip} from the node's range {cidr} (host-local: round robin, never an address in use)"));
    assert_eq!(why_ip.t_ms, Some(first_write(&world, "web", |p| p.status.as_ref().and_then(|s| s.pod_ip.as_ref()) == Some(&ip))));
    let add = world.notes().iter().find(|n| n.call == "ADD" && n.detail == format!("default/web {ip}")).unwrap();
    assert!(why_ip.details.iter().any(|d| d == &format!("CNI ADD at {}: default/web {ip}", kubesim_api::time::clock(add.t_ms))), "{why_ip:#?}");
    assert_eq!(why_ip.source, format!("kubelet/{node}"));
}

#[test]
fn crash_loop_back_off_gives_the_exit_code_the_back_off_and_the_last_output() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: crash}\nspec: {containers: [{name: c, image: busybox, command: [sh, -c, 'echo starting; echo cannot open /etc/app.conf >&2; exit 3']}]}\n",
    );
    world.run_until(40_000);
    let a = state_answer(&world, "crash", Lifecycle::CrashLoopBackOff, "Why is it crash-looping?");
    let status = pod(&world, "crash").status.unwrap().container_statuses.unwrap().remove(0);
    let message = status.state.unwrap().waiting.unwrap().message.unwrap();
    let back_off = message.strip_prefix("back-off ").unwrap().split_whitespace().next().unwrap().to_string();
    assert_eq!(
        a.answer,
        format!("container c keeps exiting: its last run ended Error (exit code 3); the kubelet restarts it after a back-off of {back_off} (10 s doubling to 5 min)")
    );
    assert!(a.details.contains(&message), "the kubelet's own words: {a:#?}");
    assert!(a.details.iter().any(|d| d == &format!("restarts: {}", status.restart_count)), "{a:#?}");
    assert!(a.details.iter().any(|d| d == "its last output: starting / cannot open /etc/app.conf"), "{a:#?}");
    assert!(has_detail(&a, "ran from "), "exact run times from the runtime: {a:#?}");
    assert_eq!(a.t_ms, Some(entered(&world, "crash", Lifecycle::CrashLoopBackOff)));
    let restart = answer_to(&answers(&world, "crash"), "Why did it restart?");
    assert_eq!(restart.answer, "c exited with code 3 (Error)");
}

#[test]
fn oom_killed_gives_the_memory_limit_and_the_reason() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: hog, annotations: {kubesim.dev/memory-usage: 300Mi}}\nspec:\n  containers:\n  - {name: app, image: 'nginx:1.27', resources: {limits: {memory: 200Mi}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: once, annotations: {kubesim.dev/memory-usage: 300Mi}}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: app, image: 'nginx:1.27', resources: {limits: {memory: 200Mi}}}\n",
    );
    // Restarted with back-off: OOMKilled while it waits.
    step_until(&mut world, "hog", Lifecycle::OOMKilled, 60_000);
    let a = state_answer(&world, "hog", Lifecycle::OOMKilled, "Why was it OOM-killed?");
    assert!(
        a.answer.starts_with("container app used more memory than its limit of 200Mi and the kernel killed it: OOMKilled (exit code 137); the kubelet restarts it after a back-off"),
        "{a:#?}"
    );
    assert!(a.details.iter().any(|d| d == "resources.limits.memory: 200Mi") && a.details.iter().any(|d| d == "QoS class: Burstable"), "{a:#?}");
    assert!(has_detail(&a, "back-off 10s restarting failed container=app"), "{a:#?}");
    assert_eq!(a.t_ms, Some(world.now()), "it entered the state with this write");
    // restartPolicy Never: the pod failed, OOMKilled.
    world.run_until(60_000);
    let a = state_answer(&world, "once", Lifecycle::OOMKilled, "Why was it OOM-killed?");
    assert_eq!(
        a.answer,
        "container app used more memory than its limit of 200Mi and the kernel killed it: OOMKilled (exit code 137); restartPolicy Never does not restart it, so the pod failed"
    );
    assert_eq!(a.t_ms, Some(first_write(&world, "once", |p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed"))));
}

#[test]
fn terminating_says_who_deleted_it_the_grace_period_the_pre_stop_hook_and_the_finalizer() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web, finalizers: [example.com/keep]}\nspec:\n  terminationGracePeriodSeconds: 20\n  containers:\n  - name: nginx\n    image: 'nginx:1.27'\n    lifecycle: {preStop: {exec: {command: [sh, -c, 'sleep 5']}}}\n",
    );
    world.run_until(30_000);
    kubectl(&mut world, "delete pod web --wait=false");
    world.run_until(32_000);
    let a = state_answer(&world, "web", Lifecycle::Terminating, "Why is it terminating?");
    assert_eq!(a.answer, "a user deleted it (kubectl)");
    assert_eq!((a.t_ms, a.source.as_str()), (Some(30_000), "kubectl"), "the delete request");
    for detail in [
        "grace period: 20 s: what still runs at 00:50.000 is killed",
        "preStop of nginx: exec sh -c sleep 5 runs before SIGTERM",
        "still running: nginx",
        "finalizers keep the object until they are removed: example.com/keep",
    ] {
        assert!(a.details.iter().any(|d| d == detail), "{detail}: {a:#?}");
    }
    assert!(has_detail(&a, "Killing (kubelet, node-") && has_detail(&a, "Stopping container nginx"), "{a:#?}");
    // nginx exits 0 on SIGTERM after the hook; the finalizer keeps the object.
    world.run_until(45_000);
    let all = answers(&world, "web");
    let done = state_answer(&world, "web", Lifecycle::Succeeded, "Why did it complete?");
    assert_eq!(done.answer, "kubectl deleted it at 00:30.000 and every container then exited 0, so the kubelet recorded it Succeeded");
    let held = answer_to(&all, "Why is it still there?");
    assert_eq!(held.answer, "it was deleted but its finalizers keep the object until they are removed: example.com/keep");
    assert_eq!(held.t_ms, Some(30_000));
}

#[test]
fn terminating_names_the_controller_the_eviction_api_the_taint_and_the_garbage_collector() {
    let mut world = world_with(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      terminationGracePeriodSeconds: 30\n      containers: [{name: sh, image: busybox, command: [sh, -c, 'sleep 3600']}]\n",
    );
    world.run_until(20_000);
    // (name, node) of the replicas not being deleted.
    let live = |world: &World| -> Vec<(String, String)> {
        world
            .api()
            .store()
            .list(("", "pods"), None)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.metadata.name.as_deref().unwrap_or("").starts_with("web-") && p.metadata.deletion_timestamp.is_none())
            .filter_map(|p| Some((p.metadata.name.clone()?, p.spec.as_ref()?.node_name.clone()?)))
            .collect()
    };
    let terminating = |world: &World, before: &[(String, String)]| -> String {
        let now: Vec<String> = live(world).into_iter().map(|(n, _)| n).collect();
        before.iter().map(|(n, _)| n.clone()).find(|n| !now.contains(n)).expect("one replica is being deleted")
    };

    // Scaled down: the ReplicaSet controller deletes one (a shell ignores SIGTERM: 30 s).
    let before = live(&world);
    kubectl(&mut world, "scale deployment web --replicas=2");
    world.run_until(21_000);
    let gone = terminating(&world, &before);
    let rs = pod(&world, &gone).metadata.owner_references.unwrap().remove(0).name;
    let a = state_answer(&world, &gone, Lifecycle::Terminating, "Why is it terminating?");
    assert_eq!(a.answer, format!("replicaset-controller deleted it (its owner is ReplicaSet/{rs})"));
    assert!(a.details.iter().any(|d| d == &format!("ReplicaSet/{rs}: spec.replicas 2")), "{a:#?}");
    let deleted = first_write(&world, &gone, |p| p.metadata.deletion_timestamp.is_some());
    assert_eq!((a.t_ms, a.source.as_str()), (Some(deleted), "replicaset-controller"));

    // kubectl drain: the Eviction API, then a graceful delete.
    let (victim, drained) = live(&world).remove(0);
    kubectl(&mut world, &format!("drain {drained} --ignore-daemonsets --force"));
    world.run_until(23_000);
    let a = state_answer(&world, &victim, Lifecycle::Terminating, "Why is it terminating?");
    assert_eq!(a.answer, "kubectl evicted it through the Eviction API (pods/eviction, as kubectl drain does); the API server then deleted it");
    assert!(a.details.iter().any(|d| d == "DisruptionTarget True: EvictionByEvictionAPI — Eviction API: evicting"), "{a:#?}");
    assert!(a.details.iter().any(|d| d == "grace period: 30 s: what still runs at 00:51.000 is killed"), "{a:#?}");
    assert_eq!((a.t_ms, a.source.as_str()), (Some(21_000), "kubectl"));

    // A node that goes dark: NoExecute taint node.kubernetes.io/unreachable, tolerated 300 s.
    world.run_until(60_000);
    let (stranded, dark) = live(&world).into_iter().find(|(_, n)| *n != drained).unwrap();
    world.run_command(&format!("fault node-down {dark}"));
    world.run_until(450_000);
    let a = state_answer(&world, &stranded, Lifecycle::Terminating, "Why is it terminating?");
    assert_eq!(
        a.answer,
        format!("the taint-eviction-controller deleted it: {dark} has the NoExecute taint node.kubernetes.io/unreachable, which the pod tolerated for 300 s")
    );
    assert!(
        a.details.iter().any(|d| d.starts_with(&format!("{dark}'s taint node.kubernetes.io/unreachable:NoExecute (added at "))
            && d.ends_with("): tolerated for 300 s (tolerationSeconds)")),
        "{a:#?}"
    );
    assert!(a.details.iter().any(|d| d == "DisruptionTarget True: DeletionByTaintManager — Taint manager: deleting due to NoExecute taint"), "{a:#?}");
    let deleted = first_write(&world, &stranded, |p| p.metadata.deletion_timestamp.is_some());
    assert_eq!((a.t_ms, a.source.as_str()), (Some(deleted), "taint-eviction-controller"));

    // The Deployment deleted: the garbage collector deletes the ReplicaSet, then its pods.
    let remaining = live(&world);
    assert!(!remaining.is_empty());
    kubectl(&mut world, "delete deployment web");
    world.run_until(452_000);
    for (name, _) in &remaining {
        let a = state_answer(&world, name, Lifecycle::Terminating, "Why is it terminating?");
        assert_eq!(a.answer, format!("the garbage collector deleted it: its owner ReplicaSet/{rs} is gone"));
        assert_eq!(a.source, "garbage-collector");
    }
    no_violations(&world);
}

#[test]
fn succeeded_gives_the_exit_codes() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: done}\nspec:\n  restartPolicy: OnFailure\n  initContainers: [{name: setup, image: busybox, command: [sh, -c, 'true']}]\n  containers: [{name: main, image: busybox, command: [sh, -c, 'echo hello; sleep 2']}, {name: side, image: busybox, command: [sh, -c, 'exit 0']}]\n",
    );
    world.run_until(20_000);
    let a = state_answer(&world, "done", Lifecycle::Succeeded, "Why did it complete?");
    assert_eq!(a.answer, "every container exited 0 and restartPolicy OnFailure does not run them again");
    assert!(a.details.iter().any(|d| d == "main: Completed (exit code 0)") && a.details.iter().any(|d| d == "side: Completed (exit code 0)"), "{a:#?}");
    assert!(has_detail(&a, "main: ran from "), "{a:#?}");
    assert_eq!(a.t_ms, Some(first_write(&world, "done", |p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded"))));
}

#[test]
fn failed_gives_the_exit_code_and_the_jobs_backoff_limit() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: fail}\nspec: {restartPolicy: Never, containers: [{name: c, image: busybox, command: [sh, -c, 'echo no config; exit 2']}]}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: flaky}\nspec: {backoffLimit: 1, template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox, command: [sh, -c, 'echo boom; exit 4']}]}}}\n",
    );
    world.run_until(60_000);
    let a = state_answer(&world, "fail", Lifecycle::Failed, "Why did it fail?");
    assert_eq!(a.answer, "container c exited Error (exit code 2) and restartPolicy Never does not restart it");
    assert!(a.details.iter().any(|d| d == "c's last output: no config"), "{a:#?}");
    assert_eq!(a.t_ms, Some(first_write(&world, "fail", |p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed"))));

    let job_pods: Vec<String> = world
        .api()
        .store()
        .list(("", "pods"), None)
        .filter_map(|o| o.as_pod())
        .filter_map(|p| p.metadata.name.clone())
        .filter(|n| n.starts_with("flaky-"))
        .collect();
    assert_eq!(job_pods.len(), 2, "backoffLimit 1: two tries");
    for name in &job_pods {
        let a = state_answer(&world, name, Lifecycle::Failed, "Why did it fail?");
        assert_eq!(a.answer, "container c exited Error (exit code 4) and restartPolicy Never does not restart it");
        assert!(a.details.iter().any(|d| d == "Job flaky: 0 succeeded, 2 failed (backoffLimit 1)"), "{a:#?}");
        assert!(a.details.iter().any(|d| d == "Job flaky: Failed — BackoffLimitExceeded: Job has reached the specified backoff limit"), "{a:#?}");
    }
}

#[test]
fn evicted_names_the_signal_and_the_kubelet_that_evicted_it() {
    let mut world = world_with(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: greedy, annotations: {kubesim.dev/memory-usage: 7900Mi}}\nspec: {nodeName: node-1, containers: [{name: app, image: 'nginx:1.27'}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: modest, annotations: {kubesim.dev/memory-usage: 200Mi}}\nspec: {nodeName: node-1, containers: [{name: app, image: 'nginx:1.27', resources: {requests: {memory: 256Mi}}}]}\n",
    );
    world.run_until(30_000);
    let a = state_answer(&world, "greedy", Lifecycle::Evicted, "Why was it evicted?");
    let message = pod(&world, "greedy").status.unwrap().message.unwrap();
    assert!(message.starts_with("The node was low on resource: memory. Threshold quantity: 100Mi, available: "), "{message}");
    assert_eq!(a.answer, format!("kubelet/node-1 evicted it to relieve node pressure: {}", message.trim_end()));
    let evicted = first_write(&world, "greedy", |p| p.status.as_ref().and_then(|s| s.reason.as_deref()) == Some("Evicted"));
    let event = event_writes(&world, "greedy").into_iter().find(|e| e.1 == "Evicted").unwrap();
    for detail in [
        "DisruptionTarget True: TerminationByKubelet".to_string(),
        format!("Evicted event by kubelet, node-1 at {}", kubesim_api::time::clock(event.0)),
        "node-1: MemoryPressure True — kubelet has insufficient memory available".to_string(),
    ] {
        assert!(a.details.contains(&detail), "{detail}: {a:#?}");
    }
    assert_eq!((a.t_ms, a.source.as_str()), (Some(evicted), "kubelet/node-1"));
    assert_eq!(lifecycle(&world, "modest"), Lifecycle::Ready);
}

/// The answers never panic and always lead with the state's answer, whatever moment of a busy
/// history they are asked at.
#[test]
fn every_pod_has_a_state_answer_at_every_moment() {
    let mut world = world_with(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      initContainers: [{name: init, image: busybox, command: [sh, -c, 'sleep 1']}]\n      containers: [{name: nginx, image: 'nginx:1.27', readinessProbe: {httpGet: {path: /, port: 80}}}]\n",
    );
    world.schedule_command(15_000, "kubectl scale deployment web --replicas=1");
    world.schedule_command(20_000, "kubectl set image deployment/web nginx=nginx:9.99-nope");
    let mut steps = 0u64;
    while world.now() < 40_000 && world.step() {
        steps += 1;
        if !steps.is_multiple_of(25) {
            continue;
        }
        for p in world.api().store().list(("", "pods"), None).filter_map(|o| o.as_pod()) {
            let name = p.metadata.name.clone().unwrap_or_default();
            let namespace = p.metadata.namespace.clone().unwrap_or_default();
            let all = why(&world, &namespace, &name);
            assert!(!all.is_empty(), "{namespace}/{name} at {}", world.now());
            assert!(all[0].question.starts_with("Why "), "{all:?}");
        }
    }
    no_violations(&world);
}
