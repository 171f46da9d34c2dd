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
