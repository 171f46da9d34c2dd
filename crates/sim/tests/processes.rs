#![cfg(not(target_arch = "wasm32"))]
//! The process table a container's `ps` shows: exec replaces a process's command line
//! (entrypoint scripts), servers retitle themselves (nginx's master and worker processes,
//! redis-server's listen address), gosu and nginx's `user` directive change credentials, and
//! `ps` names users from the viewer's own /etc/passwd.

use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;

fn world_with(yaml: &str) -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    let outcome = apply(&mut world, &InputFile { name: "test.yaml".into(), text: yaml.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world.run_until(40_000);
    world
}

fn run(world: &mut World, line: &str) -> String {
    let r = world.run_command(line);
    assert_eq!(r.exit_code, 0, "{line}: {}{}", r.stdout, r.stderr);
    r.stdout
}

/// (user, command) rows of `ps aux` (procps installed first: the images do not ship it).
fn ps(world: &mut World, pod: &str) -> Vec<(String, String)> {
    if world.run_command(&format!("kubectl exec {pod} -- ps aux")).exit_code != 0 {
        run(world, &format!("kubectl exec {pod} -- apt-get update"));
        run(world, &format!("kubectl exec {pod} -- apt-get install -y procps"));
    }
    run(world, &format!("kubectl exec {pod} -- ps aux"))
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[10..].join(" "))
        })
        .collect()
}

#[test]
fn nginx_runs_a_master_as_root_and_workers_as_the_nginx_user() {
    let mut world = world_with("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: nginx, image: 'nginx:1.27'}]}\n");
    let rows = ps(&mut world, "web");
    assert_eq!(rows[0], ("root".to_string(), "nginx: master process nginx -g daemon off;".to_string()), "{rows:?}");
    let workers: Vec<&(String, String)> = rows.iter().filter(|r| r.1 == "nginx: worker process").collect();
    assert!(!workers.is_empty(), "{rows:?}");
    assert!(workers.iter().all(|w| w.0 == "nginx"), "{rows:?}");
    // nginx -s reload: the master starts new workers and the old ones exit.
    let worker_pids = |world: &mut World| -> Vec<String> {
        run(world, "kubectl exec web -- ps aux")
            .lines()
            .filter(|l| l.ends_with("nginx: worker process"))
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .collect()
    };
    let before = worker_pids(&mut world);
    run(&mut world, "kubectl exec web -- nginx -s reload");
    world.run_until(45_000);
    let after = worker_pids(&mut world);
    assert_eq!(before.len(), after.len(), "{before:?} / {after:?}");
    assert!(before.iter().all(|pid| !after.contains(pid)), "new worker pids: {before:?} / {after:?}");
}

#[test]
fn redis_runs_as_redis_under_its_listen_address_title() {
    let mut world = world_with("apiVersion: v1\nkind: Pod\nmetadata: {name: redis}\nspec: {containers: [{name: redis, image: 'redis:7.2'}]}\n");
    let rows = ps(&mut world, "redis");
    assert_eq!(rows[0], ("redis".to_string(), "redis-server *:6379".to_string()), "{rows:?}");
    assert_eq!(run(&mut world, "kubectl exec redis -- id -un"), "root\n", "an exec runs as the image's user, root");
}

#[test]
fn a_shell_that_execs_shows_the_new_command_line() {
    let mut world = world_with("apiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec: {containers: [{name: app, image: 'busybox:1.36', command: [sh, -c, 'echo hi; exec sleep 3600']}]}\n");
    let out = run(&mut world, "kubectl exec app -- ps");
    assert!(out.lines().nth(1).is_some_and(|l| l.ends_with("sleep 3600")), "{out}");
}

const SHARED: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: shared}\nspec:\n  shareProcessNamespace: SHARE\n  containers:\n  - {name: nginx, image: 'nginx:1.27'}\n  - {name: shell, image: 'busybox:1.36', command: [sleep, '3600']}\n";

// shareProcessNamespace: one PID namespace for the pod with /pause as PID 1; a container sees
// and signals the others' processes and reads their root filesystems through /proc/PID/root.
#[test]
fn containers_of_a_pod_sharing_its_pid_namespace_see_and_signal_each_other() {
    let mut world = world_with(&SHARED.replace("SHARE", "true"));
    let ps = run(&mut world, "kubectl exec shared -c shell -- ps ax");
    let rows: Vec<&str> = ps.lines().collect();
    assert!(rows[1].trim_start().starts_with("1 65535") && rows[1].ends_with("/pause"), "{ps}");
    let master = rows.iter().find(|r| r.ends_with("nginx: master process nginx -g daemon off;")).unwrap_or_else(|| panic!("{ps}"));
    let master_pid = master.split_whitespace().next().unwrap().to_string();
    assert_ne!(master_pid, "1", "{ps}");
    assert!(rows.iter().any(|r| r.contains(" 101 ") && r.ends_with("nginx: worker process")), "{ps}");
    assert!(rows.iter().any(|r| r.ends_with("sleep 3600")), "{ps}");
    let conf = run(&mut world, &format!("kubectl exec shared -c shell -- head -2 /proc/{master_pid}/root/etc/nginx/nginx.conf"));
    assert!(conf.contains("user  nginx;"), "{conf}");
    // SIGTERM to the other container's main process: nginx exits and the kubelet restarts it.
    run(&mut world, &format!("kubectl exec shared -c shell -- kill {master_pid}"));
    world.run_until(60_000);
    let pod = world.api().lookup(("", "pods"), "default", "shared").and_then(|o| o.as_pod().cloned()).unwrap();
    let nginx = pod.status.unwrap().container_statuses.unwrap().into_iter().find(|c| c.name == "nginx").unwrap();
    assert_eq!(nginx.restart_count, 1, "{nginx:?}");
}

#[test]
fn without_sharing_each_container_sees_only_its_own_processes() {
    let mut world = world_with(&SHARED.replace("SHARE", "false"));
    let ps = run(&mut world, "kubectl exec shared -c shell -- ps ax");
    assert!(!ps.contains("nginx") && !ps.contains("/pause"), "{ps}");
    assert!(ps.lines().nth(1).is_some_and(|l| l.trim_start().starts_with("1 root") && l.ends_with("sleep 3600")), "{ps}");
}

// kubectl debug: an ephemeral container added through pods/ephemeralcontainers, started by the
// kubelet in the pod's sandbox (never restarted, never ready), in the target container's PID
// namespace with --target.
#[test]
fn kubectl_debug_adds_an_ephemeral_container_in_the_targets_pid_namespace() {
    let mut world = world_with("apiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec: {containers: [{name: app, image: 'nginx:1.27'}]}\n");
    let r = world.run_command("kubectl debug app --image=busybox:1.36 --target=app -c dbg -- sleep 3600");
    assert_eq!(r.exit_code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.starts_with("Targeting container \"app\"."), "{}", r.stderr);
    world.run_until(70_000);
    let pod = world.api().lookup(("", "pods"), "default", "app").and_then(|o| o.as_pod().cloned()).unwrap();
    let status = pod.status.unwrap().ephemeral_container_statuses.unwrap().remove(0);
    assert_eq!(status.name, "dbg");
    assert!(status.state.unwrap().running.is_some() && !status.ready, "running, never ready");
    let ps = run(&mut world, "kubectl exec app -c dbg -- ps ax");
    assert!(ps.lines().nth(1).is_some_and(|l| l.trim_start().starts_with("1 root") && l.ends_with("nginx: master process nginx -g daemon off;")), "{ps}");
    assert!(ps.contains("sleep 3600") && ps.contains("nginx: worker process"), "{ps}");
    let conf = run(&mut world, "kubectl exec app -c dbg -- head -2 /proc/1/root/etc/nginx/nginx.conf");
    assert!(conf.contains("user  nginx;"), "{conf}");
    let describe = run(&mut world, "kubectl describe pod app");
    assert!(describe.contains("Ephemeral Containers:\n  dbg:\n"), "{describe}");
    // The API server refuses what ValidatePodEphemeralContainersUpdate refuses.
    let dup = world.run_command("kubectl debug app --image=busybox:1.36 -c dbg");
    assert!(dup.stderr.contains("Pod \"app\" is invalid: spec.ephemeralContainers[1].name: Duplicate value: \"dbg\""), "{}", dup.stderr);
    let missing = world.run_command("kubectl debug app --image=busybox:1.36 -c other --target=nope");
    assert!(missing.stderr.contains("spec.ephemeralContainers[1].targetContainerName: Not found: \"nope\""), "{}", missing.stderr);
    // An ephemeral container that exits is not restarted.
    let once = world.run_command("kubectl debug app --image=busybox:1.36 -c once -- true");
    assert_eq!(once.exit_code, 0, "{}", once.stderr);
    world.run_until(120_000);
    let pod = world.api().lookup(("", "pods"), "default", "app").and_then(|o| o.as_pod().cloned()).unwrap();
    let once = pod.status.unwrap().ephemeral_container_statuses.unwrap().into_iter().find(|c| c.name == "once").unwrap();
    assert!(once.state.unwrap().terminated.is_some_and(|t| t.exit_code == 0) && once.restart_count == 0);
}

// kubectl debug node/NAME: a pod on the node in its host namespaces, the node's root at /host.
#[test]
fn kubectl_debug_node_runs_a_pod_with_the_nodes_filesystem_at_host() {
    let mut world = World::new(1);
    world.add_default_nodes();
    world.run_until(1_000);
    run(&mut world, "minikube ssh -n node-2 \"sudo sh -c 'echo on-the-node > /var/marker'\"");
    let r = world.run_command("kubectl debug node/node-2 --image=busybox:1.36 -- cat /host/var/marker");
    assert_eq!(r.exit_code, 0, "{}", r.stderr);
    let name = r
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("Creating debugging pod "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("{}", r.stderr))
        .to_string();
    assert!(name.starts_with("node-debugger-node-2-"), "{name}");
    world.run_until(40_000);
    assert_eq!(run(&mut world, &format!("kubectl logs {name}")), "on-the-node\n");
    let pod = world.api().lookup(("", "pods"), "default", &name).and_then(|o| o.as_pod().cloned()).unwrap();
    let spec = pod.spec.unwrap();
    assert_eq!(spec.node_name.as_deref(), Some("node-2"));
    assert_eq!((spec.host_network, spec.host_pid), (Some(true), Some(true)));
}

/// nginx's master and one worker per CPU fill the room the table reserved for them: the
/// master, out of the table while it forks its workers, counts itself in (it went back into a
/// table full of its workers, which then grew by a quarter: 40 rooms for 33 processes).
#[test]
fn nginx_and_its_workers_take_no_more_room_than_they_need() {
    let world = world_with(
        "apiVersion: v1\nkind: Node\nmetadata: {name: big, labels: {kubernetes.io/hostname: big}}\nstatus:\n  capacity: {cpu: '32', memory: 256Gi, pods: '110'}\n  allocatable: {cpu: '32', memory: 256Gi, pods: '110'}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {nodeName: big, containers: [{name: nginx, image: 'nginx:1.27'}]}\n",
    );
    let host = world.host("big").expect("the node's host");
    let nginx = host.cri.list_containers().into_iter().find(|c| c.spec.name == "nginx").expect("nginx's container");
    let held = nginx.processes().len();
    assert_eq!(held, 33, "a master and a worker per CPU");
    assert_eq!(nginx.process_room(), held);
}

/// `kubectl exec POD COMMAND` (no `--`) is a usage error since kubectl v1.31
/// (staging/src/k8s.io/kubectl/pkg/cmd/exec/exec.go, ExecOptions.Complete and Validate), as the
/// docs' "Get a Shell to a Running Container" page still writes it (`kubectl exec shell-demo
/// env`); with `--` the command runs, and `--` alone asks for a command.
#[test]
fn kubectl_exec_refuses_a_command_without_the_double_dash() {
    let mut world = world_with("apiVersion: v1\nkind: Pod\nmetadata: {name: shell-demo}\nspec: {containers: [{name: nginx, image: 'nginx:1.27'}]}\n");
    let r = world.run_command("kubectl exec shell-demo env");
    assert_eq!(r.exit_code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "error: exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\nSee 'kubectl exec -h' for help and examples\n"
    );
    assert!(run(&mut world, "kubectl exec shell-demo -- env").contains("HOSTNAME=shell-demo\n"));
    let r = world.run_command("kubectl exec shell-demo --");
    assert_eq!((r.exit_code, r.stderr.as_str()), (1, "error: you must specify at least one command for the container\n"));
}
