#![cfg(not(target_arch = "wasm32"))]
//! Kubelet behaviour end to end through the world: probes, restarts with backoff, image pull
//! failures, init containers, graceful termination, admission — each as the Kubernetes docs
//! describe it.

use kubesim_api::k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use kubesim_api::object::{kind_info, Object};
use kubesim_apiserver::DeleteOptions;
use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;

fn world_with(yaml: &str) -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    let outcome = apply(&mut world, &InputFile { name: "test.yaml".into(), text: yaml.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world
}

fn docs(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../../../shared/corpus/k8s-docs-examples/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn pod(world: &World, name: &str) -> Option<Pod> {
    world.api().lookup(("", "pods"), "default", name).and_then(|o| o.as_pod().cloned())
}

fn container(world: &World, name: &str) -> ContainerStatus {
    pod(world, name).unwrap().status.unwrap().container_statuses.unwrap().remove(0)
}

/// (t_ms, reason, message) of the events about one object, in order of writes.
fn events(world: &World, name: &str) -> Vec<(u64, String, String)> {
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

fn delete_pod(world: &mut World, name: &str) {
    let info = kind_info("v1", "Pod").unwrap();
    world.as_actor("kubectl", |ctx| ctx.delete(info, "default", name, DeleteOptions::default())).unwrap();
}

// pods/probe/exec-liveness.yaml: "the kubelet kills the container and restarts it" after the
// file is removed at 30 s and three probes (period 5 s) fail; a shell as PID 1 ignores SIGTERM,
// so the kill takes the whole 30 s grace period and ends with exit code 137.
#[test]
fn exec_liveness_probe_restarts_the_container_as_the_docs_describe() {
    let mut world = world_with(&docs("pods/probe/exec-liveness.yaml"));
    world.run_until(40_000);
    assert_eq!(container(&world, "liveness-exec").restart_count, 0);
    let unhealthy: Vec<_> = events(&world, "liveness-exec").into_iter().filter(|e| e.1 == "Unhealthy").collect();
    assert!(!unhealthy.is_empty() && unhealthy.iter().all(|e| e.0 >= 30_000), "{unhealthy:?}");
    assert!(unhealthy[0].2.starts_with("Liveness probe failed: cat: can't open '/tmp/healthy'"), "{unhealthy:?}");
    world.run_until(80_000);
    let status = container(&world, "liveness-exec");
    assert_eq!(status.restart_count, 1);
    let last = status.last_state.unwrap().terminated.unwrap();
    assert_eq!(last.exit_code, 137, "sh ignores SIGTERM: killed after the grace period");
    let killing = events(&world, "liveness-exec").into_iter().find(|e| e.1 == "Killing").unwrap();
    assert_eq!(killing.2, "Container liveness failed liveness probe, will be restarted");
}

// pods/probe/http-liveness.yaml: agnhost serves /healthz with 200 for 10 s, then 500.
#[test]
fn http_liveness_probe_fails_after_ten_seconds() {
    let mut world = world_with(&docs("pods/probe/http-liveness.yaml"));
    world.run_until(30_000);
    let failures: Vec<_> = events(&world, "liveness-http").into_iter().filter(|e| e.1 == "Unhealthy").collect();
    assert!(failures.iter().all(|e| e.2 == "Liveness probe failed: HTTP probe failed with statuscode: 500"), "{failures:?}");
    assert!(failures.first().is_some_and(|e| e.0 >= 10_000));
    assert!(container(&world, "liveness-http").restart_count >= 1);
}

// Readiness gates Ready: with initialDelaySeconds 15, the goproxy pod is Running but not Ready
// until its first successful probe (pods/probe/tcp-liveness-readiness.yaml).
#[test]
fn readiness_probe_gates_the_ready_condition() {
    let mut world = world_with(&docs("pods/probe/tcp-liveness-readiness.yaml"));
    world.run_until(10_000);
    let status = pod(&world, "goproxy").unwrap().status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let ready = status.conditions.unwrap().into_iter().find(|c| c.type_ == "Ready").unwrap();
    assert_eq!((ready.status.as_str(), ready.reason.as_deref()), ("False", Some("ContainersNotReady")));
    world.run_until(25_000);
    assert!(container(&world, "goproxy").ready);
}

// pods/init-containers.yaml: the init container runs to completion before nginx starts.
#[test]
fn init_containers_finish_before_the_app_starts() {
    let mut world = world_with(&docs("pods/init-containers.yaml"));
    world.run_until(20_000);
    let status = pod(&world, "init-demo").unwrap().status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let init = &status.init_container_statuses.unwrap()[0];
    let done = init.state.as_ref().unwrap().terminated.as_ref().unwrap();
    assert_eq!((done.exit_code, done.reason.as_deref()), (0, Some("Completed")));
    let started: Vec<_> = events(&world, "init-demo").into_iter().filter(|e| e.1 == "Started").collect();
    assert_eq!(started.iter().map(|e| e.2.as_str()).collect::<Vec<_>>(), vec!["Started container install", "Started container nginx"]);
    assert!(started[0].0 < started[1].0);
}

// prober_manager.go UpdatePodStatus: an init container is ready once it has exited 0 and never
// while it runs; the app container waits as PodInitializing meanwhile (defaultWaitingState).
#[test]
fn a_running_init_container_is_not_ready_and_a_completed_one_is() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: myapp}\nspec:\n  initContainers: [{name: init, image: 'busybox:1.28', command: [sh, -c, 'sleep 20']}]\n  containers: [{name: app, image: 'busybox:1.28', command: [sh, -c, 'sleep 3600']}]\n";
    let mut world = world_with(yaml);
    world.run_until(10_000);
    let status = pod(&world, "myapp").unwrap().status.unwrap();
    let init = &status.init_container_statuses.as_ref().unwrap()[0];
    assert!(init.state.as_ref().unwrap().running.is_some(), "{init:?}");
    assert!(!init.ready, "a running init container is not ready");
    let app = &status.container_statuses.as_ref().unwrap()[0];
    assert_eq!(app.state.as_ref().unwrap().waiting.as_ref().unwrap().reason.as_deref(), Some("PodInitializing"));
    world.run_until(35_000);
    let status = pod(&world, "myapp").unwrap().status.unwrap();
    let init = &status.init_container_statuses.as_ref().unwrap()[0];
    assert!(init.state.as_ref().unwrap().terminated.is_some(), "{init:?}");
    assert!(init.ready, "an init container that exited 0 is ready");
}

// The kubelet sorts containerStatuses by name (convertToAPIContainerStatuses:
// sort.Sort(SortedContainerStatuses)) and keeps initContainerStatuses in spec order
// (SortStatusesOfInitContainers); the ContainersReady message lists containers in spec order.
#[test]
fn container_statuses_are_sorted_by_name_and_init_statuses_keep_spec_order() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: order}\nspec:\n  initContainers:\n  - {name: z-init, image: 'busybox:1.36', command: [sh, -c, 'true']}\n  - {name: a-init, image: 'busybox:1.36', command: [sh, -c, 'true']}\n  containers:\n  - {name: web, image: 'nginx:1.27', readinessProbe: {exec: {command: ['false']}, periodSeconds: 1}}\n  - {name: sidecar, image: 'busybox:1.36', command: [sleep, '3600'], readinessProbe: {exec: {command: ['false']}, periodSeconds: 1}}\n";
    let mut world = world_with(yaml);
    world.run_until(30_000);
    let status = pod(&world, "order").unwrap().status.unwrap();
    let names = |list: Option<Vec<ContainerStatus>>| list.unwrap().into_iter().map(|c| c.name).collect::<Vec<_>>();
    assert_eq!(names(status.container_statuses), ["sidecar", "web"]);
    assert_eq!(names(status.init_container_statuses), ["z-init", "a-init"]);
    let ready = status.conditions.unwrap().into_iter().find(|c| c.type_ == "ContainersReady").unwrap();
    assert_eq!(ready.message.as_deref(), Some("containers with unready status: [web sidecar]"));
}

const CRASHER: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: crasher}\nspec:\n  containers:\n  - name: app\n    image: busybox:1.36\n    command: [sh, -c, 'echo starting; sleep 1; exit 1']\n";

// CrashLoopBackOff: restarts wait 10 s, 20 s, 40 s after each exit (flowcontrol backoff
// doubling; the first restart is immediate). The pod worker re-checks 10–15 s after each failed
// sync (wait.Jitter(10s, 0.5)), so a restart lands at the first re-check after the backoff.
#[test]
fn crashing_containers_back_off_exponentially() {
    let mut world = world_with(CRASHER);
    world.run_until(120_000);
    let starts: Vec<u64> = events(&world, "crasher").into_iter().filter(|e| e.1 == "Started").map(|e| e.0).collect();
    assert!(starts.len() >= 4, "{starts:?}");
    // Each container runs 1 s; the gap after that is the backoff (plus PLEG's ≤1 s and the
    // create/start latency).
    let gaps: Vec<u64> = starts.windows(2).map(|w| (w[1] - w[0]) / 1000).collect();
    assert!(gaps[0] <= 3, "first restart is immediate: {gaps:?}");
    assert!((11..=18).contains(&gaps[1]), "then 10 s: {gaps:?}");
    assert!((21..=33).contains(&gaps[2]), "then 20 s: {gaps:?}");
    let status = container(&world, "crasher");
    let waiting = status.state.unwrap().waiting;
    let running = waiting.is_none();
    assert!(running || waiting.unwrap().reason.as_deref() == Some("CrashLoopBackOff"));
    assert!(events(&world, "crasher").iter().any(|e| e.1 == "BackOff" && e.2.starts_with("Back-off restarting failed container app in pod crasher_default(")));
    let logs = world
        .host(pod(&world, "crasher").unwrap().spec.unwrap().node_name.as_deref().unwrap())
        .unwrap()
        .cri
        .logs(&pod(&world, "crasher").unwrap().metadata.uid.unwrap(), "app", false)
        .unwrap();
    assert_eq!(logs, "starting\n");
}

// The waiting reason of a failed sync reaches the status one sync later (kubelet.go SyncPod
// generates the API status before kuberuntime's SyncPod, whose result goes to the
// reasonCache): after the second exit the status shows the terminated container (kubectl's
// `Error 1`) until the pod worker's re-check 10-15 s later, which writes CrashLoopBackOff.
#[test]
fn crash_loop_back_off_reaches_the_status_at_the_next_sync() {
    let mut world = world_with(CRASHER);
    world.run_until(40_000);
    // (t, restartCount, terminated reason, waiting reason) of each kubelet status write.
    let writes: Vec<(u64, i32, Option<String>, Option<String>)> = world
        .trace()
        .iter()
        .filter(|r| r.object.name() == "crasher" && r.actor.starts_with("kubelet/"))
        .filter_map(|r| {
            let c = r.object.as_pod()?.status.as_ref()?.container_statuses.as_ref()?.first()?.clone();
            let state = c.state.clone().unwrap_or_default();
            Some((r.t_ms, c.restart_count, state.terminated.and_then(|t| t.reason), state.waiting.and_then(|w| w.reason)))
        })
        .collect();
    let error = writes.iter().find(|w| w.1 == 1 && w.2.as_deref() == Some("Error")).unwrap_or_else(|| panic!("terminated after the restart: {writes:?}"));
    let back_off = writes.iter().find(|w| w.3.as_deref() == Some("CrashLoopBackOff")).unwrap_or_else(|| panic!("CrashLoopBackOff: {writes:?}"));
    let lag = back_off.0 - error.0;
    assert!((10_000..=15_100).contains(&lag), "CrashLoopBackOff {lag} ms after the exit was reported: {writes:?}");
}

// An unresolvable registry fails to pull: ErrImagePull, then ImagePullBackOff.
#[test]
fn unpullable_images_back_off() {
    let mut world = world_with("apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec:\n  containers: [{name: app, image: 'registry.invalid/app:1'}]\n");
    world.run_until(5_000);
    let waiting = container(&world, "broken").state.unwrap().waiting.unwrap();
    assert_eq!(waiting.reason.as_deref(), Some("ErrImagePull"));
    assert!(waiting.message.unwrap().contains("no such host"));
    world.run_until(60_000);
    let reasons: Vec<String> = events(&world, "broken").into_iter().map(|e| e.1).collect();
    assert!(reasons.contains(&"Failed".to_string()) && reasons.contains(&"BackOff".to_string()), "{reasons:?}");
    let waiting_reasons: Vec<String> = world
        .trace()
        .iter()
        .filter(|r| r.object.name() == "broken" && r.actor.starts_with("kubelet/"))
        .filter_map(|r| r.object.as_pod()?.status.as_ref()?.container_statuses.as_ref()?[0].state.as_ref()?.waiting.as_ref()?.reason.clone())
        .collect();
    assert!(waiting_reasons.contains(&"ImagePullBackOff".to_string()), "{waiting_reasons:?}");
    let pod = pod(&world, "broken").unwrap();
    assert_eq!(pod.status.unwrap().phase.as_deref(), Some("Pending"));
}

// Graceful deletion: nginx handles SIGTERM and is gone within a second; a shell ignores it and
// takes the whole grace period (30 s), then SIGKILL.
#[test]
fn graceful_termination_depends_on_the_process() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: nginx, image: 'nginx:1.27'}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: sleeper}\nspec: {containers: [{name: app, image: busybox, command: [sh, -c, 'sleep 3600']}]}\n";
    let mut world = world_with(yaml);
    world.run_until(10_000);
    delete_pod(&mut world, "web");
    delete_pod(&mut world, "sleeper");
    world.run_until(11_500);
    assert!(pod(&world, "web").is_none(), "nginx exits promptly on SIGTERM");
    let sleeper = pod(&world, "sleeper").expect("still terminating");
    assert!(sleeper.metadata.deletion_timestamp.is_some());
    world.run_until(38_000);
    assert!(pod(&world, "sleeper").is_some(), "grace period not over yet");
    world.run_until(45_000);
    assert!(pod(&world, "sleeper").is_none());
    let final_status = world
        .trace()
        .iter()
        .filter(|r| r.object.name() == "sleeper" && r.actor.starts_with("kubelet/"))
        .filter_map(|r| r.object.as_pod().and_then(|p| p.status.clone()))
        .next_back()
        .unwrap();
    let terminated = final_status.container_statuses.unwrap()[0].state.clone().unwrap().terminated.unwrap();
    assert_eq!(terminated.exit_code, 137);
    assert_eq!(final_status.phase.as_deref(), Some("Failed"));
}

// restartPolicy decides the phase of finished pods (getPhase).
#[test]
fn finished_pods_succeed_or_fail_by_restart_policy() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {restartPolicy: OnFailure, containers: [{name: c, image: busybox, command: [sh, -c, 'echo done']}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {restartPolicy: Never, containers: [{name: c, image: busybox, command: [sh, -c, 'exit 3']}]}\n";
    let mut world = world_with(yaml);
    world.run_until(20_000);
    assert_eq!(pod(&world, "ok").unwrap().status.unwrap().phase.as_deref(), Some("Succeeded"));
    let bad = pod(&world, "bad").unwrap().status.unwrap();
    assert_eq!(bad.phase.as_deref(), Some("Failed"));
    let t = bad.container_statuses.unwrap()[0].state.clone().unwrap().terminated.unwrap();
    assert_eq!((t.exit_code, t.reason.as_deref()), (3, Some("Error")));
}

// Kubelet admission rejects a pod that does not fit (bypassing the scheduler with nodeName).
#[test]
fn kubelet_admission_rejects_pods_that_do_not_fit() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec:\n  nodeName: node-1\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: '5'}}}]\n";
    let mut world = world_with(yaml);
    world.run_until(5_000);
    let status = pod(&world, "huge").unwrap().status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Failed"));
    assert_eq!(status.reason.as_deref(), Some("OutOfcpu"));
    assert_eq!(status.message.as_deref(), Some("Pod was rejected: Node didn't have enough resource: cpu, requested: 5000, used: 0, capacity: 4000"));
}

// pods/commands.yaml: printenv prints the variables and exits 0; OnFailure → Succeeded.
#[test]
fn commands_example_prints_its_environment() {
    let mut world = world_with(&docs("pods/commands.yaml"));
    world.run_until(20_000);
    let pod = pod(&world, "command-demo").unwrap();
    assert_eq!(pod.status.as_ref().unwrap().phase.as_deref(), Some("Succeeded"));
    let node = pod.spec.as_ref().unwrap().node_name.clone().unwrap();
    let logs = world.host(&node).unwrap().cri.logs(pod.metadata.uid.as_ref().unwrap(), "command-demo-container", false).unwrap();
    assert_eq!(logs, "command-demo\ntcp://10.96.0.1:443\n");
}

// A missing ConfigMap key: CreateContainerConfigError until the ConfigMap appears
// (kubelet_pods.go makeEnvironmentVariables messages).
#[test]
fn missing_config_fails_container_creation_until_it_exists() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: cfg}\nspec:\n  containers:\n  - name: app\n    image: busybox\n    command: [sh, -c, 'echo $LEVEL; sleep 3600']\n    env: [{name: LEVEL, valueFrom: {configMapKeyRef: {name: settings, key: level}}}]\n";
    let mut world = world_with(yaml);
    world.run_until(5_000);
    let waiting = container(&world, "cfg").state.unwrap().waiting.unwrap();
    assert_eq!(waiting.reason.as_deref(), Some("CreateContainerConfigError"));
    assert_eq!(waiting.message.as_deref(), Some("configmap \"settings\" not found"));
    apply(
        &mut world,
        &InputFile {
            name: "cm.yaml".into(),
            text: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {level: debug}\n".into(),
        },
    );
    world.run_until(40_000);
    let status = container(&world, "cfg");
    assert!(status.state.unwrap().running.is_some());
    let p = pod(&world, "cfg").unwrap();
    let logs = world.host(p.spec.as_ref().unwrap().node_name.as_deref().unwrap()).unwrap().cri.logs(p.metadata.uid.as_ref().unwrap(), "app", false).unwrap();
    assert_eq!(logs, "debug\n");
}

// A preStop sleep hook delays SIGTERM: nginx exits after the hook, not at once.
#[test]
fn prestop_hooks_run_before_sigterm() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: hooked}\nspec:\n  containers:\n  - name: nginx\n    image: 'nginx:1.27'\n    lifecycle: {preStop: {sleep: {seconds: 5}}}\n";
    let mut world = world_with(yaml);
    world.run_until(10_000);
    delete_pod(&mut world, "hooked");
    world.run_until(14_000);
    assert!(pod(&world, "hooked").is_some(), "the hook is still sleeping");
    world.run_until(17_500);
    assert!(pod(&world, "hooked").is_none(), "nginx exits promptly once SIGTERM arrives after the hook");
}

// Memory usage over the limit: OOMKilled (exit 137), then restarts with backoff.
#[test]
fn memory_over_the_limit_is_oom_killed() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: hog, annotations: {kubesim.dev/memory-usage: 300Mi}}\nspec:\n  containers:\n  - name: app\n    image: 'nginx:1.27'\n    resources: {limits: {memory: 200Mi}}\n";
    let mut world = world_with(yaml);
    world.run_until(30_000);
    let status = container(&world, "hog");
    assert!(status.restart_count >= 1);
    let last = status.last_state.unwrap().terminated.unwrap();
    assert_eq!((last.exit_code, last.reason.as_deref()), (137, Some("OOMKilled")));
}

// The eviction manager: memory.available under 100Mi → MemoryPressure and the pod using most
// above its request is evicted (status Failed, reason Evicted).
#[test]
fn memory_pressure_evicts_the_greediest_pod() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: greedy, annotations: {kubesim.dev/memory-usage: 7900Mi}}\nspec: {nodeName: node-1, containers: [{name: app, image: 'nginx:1.27'}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: modest, annotations: {kubesim.dev/memory-usage: 200Mi}}\nspec: {nodeName: node-1, containers: [{name: app, image: 'nginx:1.27', resources: {requests: {memory: 256Mi}}}]}\n";
    let mut world = world_with(yaml);
    world.run_until(30_000);
    let greedy = pod(&world, "greedy").unwrap().status.unwrap();
    assert_eq!((greedy.phase.as_deref(), greedy.reason.as_deref()), (Some("Failed"), Some("Evicted")));
    assert!(greedy.message.unwrap().starts_with("The node was low on resource: memory. Threshold quantity: 100Mi, available: "));
    assert_eq!(pod(&world, "modest").unwrap().status.unwrap().phase.as_deref(), Some("Running"));
    let node = world.api().lookup(("", "nodes"), "", "node-1").unwrap().to_json();
    let pressure = node["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "MemoryPressure").unwrap().clone();
    assert_eq!(pressure["status"], "True");
}

fn with_configmaps(pod_file: &str) -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    for file in
        [InputFile { name: "configmaps.yaml".into(), text: docs("configmap/configmaps.yaml") }, InputFile { name: "pod.yaml".into(), text: docs(pod_file) }]
    {
        let outcome = apply(&mut world, &file);
        assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    }
    world
}

fn logs_of(world: &World, name: &str, container: &str) -> String {
    let p = pod(world, name).unwrap();
    world.host(p.spec.as_ref().unwrap().node_name.as_deref().unwrap()).unwrap().cri.logs(p.metadata.uid.as_ref().unwrap(), container, false).unwrap()
}

// pods/pod-configmap-volume.yaml: "ls /etc/config/" lists the ConfigMap's keys (docs: special.how).
#[test]
fn configmap_volumes_show_their_keys_as_files() {
    let mut world = with_configmaps("pods/pod-configmap-volume.yaml");
    world.run_until(20_000);
    assert_eq!(pod(&world, "dapi-test-pod").unwrap().status.unwrap().phase.as_deref(), Some("Succeeded"));
    assert_eq!(logs_of(&world, "dapi-test-pod", "test-container"), "special.how\n");
}

// Without the ConfigMap the volume cannot mount: FailedMount and the pod stays ContainerCreating.
#[test]
fn a_missing_configmap_volume_fails_the_mount() {
    let mut world = world_with(&docs("pods/pod-configmap-volume.yaml"));
    world.run_until(20_000);
    let waiting = container(&world, "dapi-test-pod").state.unwrap().waiting.unwrap();
    assert_eq!(waiting.reason.as_deref(), Some("ContainerCreating"));
    let failed = events(&world, "dapi-test-pod").into_iter().find(|e| e.1 == "FailedMount").unwrap();
    assert_eq!(failed.2, "MountVolume.SetUp failed for volume \"config-volume\" : configmap \"special-config\" not found");
}

// pods/pod-configmap-envFrom.yaml with configmap/configmaps.yaml: env shows the keys.
#[test]
fn env_from_configmaps_reaches_the_process() {
    let mut world = with_configmaps("pods/pod-configmap-envFrom.yaml");
    world.run_until(20_000);
    let logs = logs_of(&world, "dapi-test-pod", "test-container");
    assert!(logs.lines().any(|l| l == "special.how=very"), "{logs}");
    assert!(logs.lines().any(|l| l == "HOSTNAME=dapi-test-pod"), "{logs}");
}

// The scenario's image catalogue: sizes drive pull time; declared-missing images fail to pull.
#[test]
fn the_scenario_can_override_image_sizes_and_declare_missing_images() {
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubesim-images, namespace: kube-system}\ndata: {sizes: 'example.com/big:1 400000000', missing: 'example.com/gone:2'}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec: {containers: [{name: c, image: 'example.com/big:1'}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: gone}\nspec: {containers: [{name: c, image: 'example.com/gone:2'}]}\n";
    let mut world = world_with(yaml);
    world.run_until(30_000);
    let pulled = events(&world, "big").into_iter().find(|e| e.1 == "Pulled").unwrap();
    assert!(pulled.2.starts_with("Successfully pulled image \"example.com/big:1\" in 10.3s"), "{}", pulled.2);
    let waiting = container(&world, "gone").state.unwrap().waiting.unwrap();
    assert!(matches!(waiting.reason.as_deref(), Some("ErrImagePull") | Some("ImagePullBackOff")));
}

// Sidecars (restartable init containers, KEP-753): started before the app, kept running.
#[test]
fn sidecars_start_first_and_keep_running() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: with-sidecar}\nspec:\n  initContainers: [{name: proxy, image: 'nginx:1.27', restartPolicy: Always}]\n  containers: [{name: app, image: busybox, command: [sh, -c, 'sleep 3600']}]\n";
    let mut world = world_with(yaml);
    world.run_until(20_000);
    let status = pod(&world, "with-sidecar").unwrap().status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let sidecar = &status.init_container_statuses.unwrap()[0];
    assert!(sidecar.state.as_ref().unwrap().running.is_some(), "the sidecar keeps running");
    assert_eq!(sidecar.started, Some(true));
    let started: Vec<String> = events(&world, "with-sidecar").into_iter().filter(|e| e.1 == "Started").map(|e| e.2).collect();
    assert_eq!(started, vec!["Started container proxy", "Started container app"]);
}

// hostNetwork pods use the node's IP; others get one from the node's podCIDR.
#[test]
fn host_network_pods_use_the_node_ip() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: hostnet}\nspec: {hostNetwork: true, nodeName: node-2, containers: [{name: c, image: 'nginx:1.27'}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: podnet}\nspec: {nodeName: node-2, containers: [{name: c, image: 'nginx:1.27'}]}\n";
    let mut world = world_with(yaml);
    world.run_until(10_000);
    let hostnet = pod(&world, "hostnet").unwrap().status.unwrap();
    assert_eq!(hostnet.pod_ip, hostnet.host_ip);
    let podnet = pod(&world, "podnet").unwrap().status.unwrap();
    assert!(podnet.pod_ip.unwrap().starts_with("10.244.1."), "node-2's podCIDR is 10.244.1.0/24");
}

// imagePullPolicy Never with the image absent: ErrImageNeverPull, no pull attempted.
#[test]
fn never_pull_policy_without_the_image_fails() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: never}\nspec: {containers: [{name: c, image: 'nginx:1.27', imagePullPolicy: Never}]}\n";
    let mut world = world_with(yaml);
    world.run_until(5_000);
    let waiting = container(&world, "never").state.unwrap().waiting.unwrap();
    assert_eq!(waiting.reason.as_deref(), Some("ErrImageNeverPull"));
    assert_eq!(waiting.message.as_deref(), Some("Container image \"nginx:1.27\" is not present with pull policy of Never"));
    assert!(!events(&world, "never").iter().any(|e| e.1 == "Pulling"));
}

// A startup probe holds liveness and readiness back until it succeeds; `started` follows it.
#[test]
fn startup_probes_gate_started_and_ready() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: slow}\nspec:\n  containers:\n  - name: app\n    image: busybox\n    command: [sh, -c, 'sleep 20; touch /tmp/ready; sleep 3600']\n    startupProbe: {exec: {command: [cat, /tmp/ready]}, periodSeconds: 5, failureThreshold: 10}\n";
    let mut world = world_with(yaml);
    world.run_until(15_000);
    let status = container(&world, "slow");
    assert_eq!((status.started, status.ready), (Some(false), false));
    world.run_until(40_000);
    let status = container(&world, "slow");
    assert_eq!((status.started, status.ready, status.restart_count), (Some(true), true, 0));
}

// Commands the shell model does not implement are reported when the input is applied.
#[test]
fn unsupported_shell_commands_are_reported_at_apply_time() {
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: tool}\nspec:\n  selector: {matchLabels: {app: tool}}\n  template:\n    metadata: {labels: {app: tool}}\n    spec: {containers: [{name: c, image: busybox, command: [sh, -c, 'apk add curl && jq . /x; sleep 60']}]}\n";
    let outcome = kubesim_sim::run::run(kubesim_sim::RunOptions {
        files: vec![InputFile { name: "tool.yaml".into(), text: yaml.into() }],
        seed: 1,
        duration_ms: Some(1_000),
        ..Default::default()
    });
    let warnings: Vec<String> = outcome.files.iter().flat_map(|f| f.warnings.iter().cloned()).collect();
    assert_eq!(warnings, vec!["Warning: tool.yaml (document 1): deployment/tool container \"c\": image \"busybox\" has no \"apk\", \"jq\" (they exit 127, \"not found\", when the container runs)".to_string()]);
}

// Volumes: a pod whose claim does not exist yet is not scheduled (VolumeBinding's PreFilter)
// and starts once the claim exists and binds (docs: pods/storage/pv-volume.yaml,
// pv-claim.yaml, pv-pod.yaml applied in reverse order).
#[test]
fn pods_wait_for_their_claims_to_bind() {
    let mut world = World::new(1);
    world.add_default_nodes();
    apply(&mut world, &InputFile { name: "pv-pod.yaml".into(), text: docs("pods/storage/pv-pod.yaml") });
    world.run_until(20_000);
    assert!(pod(&world, "task-pv-pod").unwrap().spec.unwrap().node_name.is_none());
    assert!(events(&world, "task-pv-pod").iter().any(|e| e.1 == "FailedScheduling"
        && e.2
            == "0/3 nodes are available: persistentvolumeclaim \"task-pv-claim\" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."));
    for name in ["pods/storage/pv-volume.yaml", "pods/storage/pv-claim.yaml"] {
        apply(&mut world, &InputFile { name: name.into(), text: docs(name) });
    }
    world.run_until(60_000);
    let pvc = world.api().lookup(("", "persistentvolumeclaims"), "default", "task-pv-claim").unwrap().to_json();
    assert_eq!(pvc["status"]["phase"], "Bound", "{pvc}");
    assert!(container(&world, "task-pv-pod").state.unwrap().running.is_some());
}

// Node IPAM gives each node a /24 of 10.244.0.0/16 in registration order.
#[test]
fn node_ipam_assigns_pod_cidrs_in_order() {
    let mut world = World::new(1);
    world.add_default_nodes();
    world.run_until(2_000);
    let cidrs: Vec<(String, Option<String>)> = ["node-1", "node-2", "node-3"]
        .iter()
        .map(|n| {
            let node = world.api().lookup(("", "nodes"), "", n).and_then(|o| o.as_node().cloned()).unwrap();
            (n.to_string(), node.spec.and_then(|s| s.pod_cidr))
        })
        .collect();
    assert_eq!(
        cidrs,
        vec![("node-1".into(), Some("10.244.0.0/24".into())), ("node-2".into(), Some("10.244.1.0/24".into())), ("node-3".into(), Some("10.244.2.0/24".into()))]
    );
    let record = world.run_command("kubectl get nodes -o custom-columns=NAME:.metadata.name,CIDR:.spec.podCIDR,CIDRS:.spec.podCIDRs");
    assert_eq!(record.stdout.lines().nth(1).unwrap().split_whitespace().collect::<Vec<_>>(), vec!["node-1", "10.244.0.0/24", "[10.244.0.0/24]"]);
}

// host-local IPAM under churn: 300 pods through one node's /24 (past a wrap of the cursor),
// with a kubelet restart in the middle: every live pod's IP is unique at every commit (the
// world's pod-ips-unique checker), and the allocation is round robin.
#[test]
fn pod_ips_stay_unique_through_churn_and_a_kubelet_restart() {
    let yaml = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: churn}\nspec:\n  completions: 300\n  parallelism: 20\n  backoffLimit: 0\n  template:\n    spec:\n      nodeName: node-1\n      restartPolicy: Never\n      containers: [{name: c, image: 'busybox:1.37', command: [sh, -c, 'sleep 1']}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: long-lived}\nspec: {nodeName: node-1, containers: [{name: c, image: 'busybox:1.37', command: [sleep, '3600']}]}\n";
    let mut world = world_with(yaml);
    world.run_until(20_000);
    world.fault(&kubesim_sim::fault::Fault::KubeletRestart("node-1".into())).unwrap();
    world.run_until(240_000);
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
    let job = world.api().lookup(("batch", "jobs"), "default", "churn").unwrap().clone();
    let succeeded = job.to_json()["status"]["succeeded"].as_u64();
    assert_eq!(succeeded, Some(300), "every pod ran");
    let long_lived = pod(&world, "long-lived").unwrap().status.unwrap().pod_ip.unwrap();
    let ips: std::collections::BTreeSet<String> = world
        .api()
        .store()
        .list(("", "pods"), Some("default"))
        .filter_map(|o| o.as_pod().and_then(|p| p.status.as_ref()).and_then(|s| s.pod_ip.clone()))
        .collect();
    assert!(ips.len() >= 253, "the cursor went round the whole /24: {} distinct addresses", ips.len());
    assert!(ips.iter().all(|ip| ip.starts_with("10.244.0.")), "node-1's podCIDR");
    let host = world.host("node-1").unwrap();
    assert!(host.cni.ipam.reserved.values().count() <= 21, "finished pods gave their addresses back: {}", host.cni.ipam.reserved.len());
    assert!(host.cni.ipam.reserved.keys().any(|ip| std::net::Ipv4Addr::from(*ip).to_string() == long_lived), "the long-lived pod keeps its address");
}

// Every apply path warns about unmodelled images and commands: here `kubectl apply -f` run as a
// command (the `--at` and console path), as the loader does for input files.
#[test]
fn kubectl_apply_warns_about_unmodelled_images_and_commands() {
    let mut world = World::new(1);
    world.add_default_nodes();
    world.add_file("app.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: api}\nspec:\n  containers:\n  - {name: c, image: 'myorg/api:1.2', ports: [{containerPort: 8080}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: tool}\nspec:\n  containers:\n  - {name: c, image: 'busybox:1.37', command: [sh, -c, 'frobnicate --all; sleep 3600']}\n");
    let record = world.run_command("kubectl apply -f app.yaml");
    assert_eq!(record.exit_code, 0, "{record:?}");
    assert_eq!(record.stdout, "pod/api created\npod/tool created\n");
    assert!(record.stderr.contains("Warning: app.yaml (document 1): pod/api container \"c\": image \"myorg/api:1.2\" is not in kubesim's catalogue; it runs as a generic server listening on 8080"), "{}", record.stderr);
    assert!(
        record.stderr.contains("Warning: app.yaml (document 2): pod/tool container \"c\": image \"busybox:1.37\" has no \"frobnicate\""),
        "{}",
        record.stderr
    );
    let get = world.run_command("kubectl get pods -f app.yaml");
    assert!(get.stderr.is_empty(), "only apply, create and replace warn: {}", get.stderr);
}

// The inspector's Containers tab: PID 1's expanded command line, the environment, the process
// table, what a mount holds and the log's last lines, read from the node's runtime.
#[test]
fn the_containers_view_shows_processes_env_mounts_and_logs() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: inspect}\nspec:\n  volumes: [{name: data, emptyDir: {}}]\n  containers:\n  - name: app\n    image: busybox:1.37\n    env: [{name: GREETING, value: hello}]\n    command: [sh, -c, 'echo $(GREETING) > /data/note; echo started; sleep 3600']\n    volumeMounts: [{name: data, mountPath: /data}]\n";
    let mut world = world_with(yaml);
    world.run_until(15_000);
    let views = kubesim_sim::view::pod_containers(&world, "default", "inspect");
    assert_eq!(views.len(), 1);
    let c = &views[0];
    assert_eq!(c.state, "running");
    assert_eq!(c.argv, vec!["sh", "-c", "echo hello > /data/note; echo started; sleep 3600"], "$(GREETING) expanded");
    assert!(c.env.iter().any(|(k, v)| k == "GREETING" && v == "hello"), "{:?}", c.env);
    assert_eq!((c.processes[0].pid, c.processes[0].cmdline.as_str()), (1, "sh -c echo hello > /data/note; echo started; sleep 3600"), "{:?}", c.processes);
    let data = c.mounts.iter().find(|m| m.path == "/data").unwrap();
    assert_eq!(data.entries, vec!["note"]);
    assert_eq!(c.log_tail, vec!["started"]);
}

// Past kind's 256 /24 blocks, node IPAM goes on in 100.64.0.0/10 (documented deviation), so
// large clusters still run pods on every node.
#[test]
fn node_ipam_goes_on_past_256_nodes() {
    let mut world = World::new(1);
    for i in 0..260 {
        world.add_node(kubesim_sim::cluster::node_template(&format!("n-{i:03}"), "a", "4", "8Gi", "110"));
    }
    world.run_until(3_000);
    let cidr = |n: &str| world.api().lookup(("", "nodes"), "", n).and_then(|o| o.as_node().cloned()).and_then(|n| n.spec).and_then(|s| s.pod_cidr);
    assert_eq!(cidr("n-000").as_deref(), Some("10.244.0.0/24"));
    assert_eq!(cidr("n-255").as_deref(), Some("10.244.255.0/24"));
    assert_eq!(cidr("n-256").as_deref(), Some("100.64.0.0/24"));
    assert_eq!(cidr("n-259").as_deref(), Some("100.64.3.0/24"));
}

// A deleted pod's own volumes (its emptyDir, the projected service account token) leave the
// node's storage with it (the volume plugins' TearDown, cleanupOrphanedPodDirs).
#[test]
fn a_deleted_pods_volumes_leave_the_node() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: scratch}\nspec:\n  volumes: [{name: data, emptyDir: {}}]\n  containers:\n  - name: app\n    image: busybox:1.37\n    command: [sh, -c, 'echo hi > /data/note; sleep 3600']\n    volumeMounts: [{name: data, mountPath: /data}]\n";
    let mut world = world_with(yaml);
    world.run_until(20_000);
    let running = pod(&world, "scratch").unwrap();
    let uid = running.metadata.uid.clone().unwrap();
    let node = running.spec.unwrap().node_name.unwrap();
    let pod_volumes = |world: &World| -> Vec<String> {
        world.host(&node).unwrap().cri.volumes.trees.keys().filter(|id| id.starts_with(&format!("{uid}/"))).cloned().collect()
    };
    let before = pod_volumes(&world);
    assert!(before.contains(&format!("{uid}/data")), "{before:?}");
    assert!(before.iter().any(|id| id.starts_with(&format!("{uid}/kube-api-access-"))), "{before:?}");
    delete_pod(&mut world, "scratch");
    world.run_until(60_000);
    assert!(pod(&world, "scratch").is_none());
    assert_eq!(pod_volumes(&world), Vec::<String>::new());
}
