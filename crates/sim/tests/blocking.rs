#![cfg(not(target_arch = "wasm32"))]
//! Commands that go on as virtual time passes (`World::run_command_for`): `rollout status`
//! waits for the rollout, `get -w` prints the list then a row per change, and both stop when
//! the user does (or at once through `World::run_command`).

use kubesim_sim::world::WorldConfig;
use kubesim_sim::World;

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
";

fn world() -> World {
    let (mut world, _, errors) = kubesim_sim::loader::load(WorldConfig::seeded(3), &[]);
    assert!(errors.is_empty(), "{errors:?}");
    world.add_file("web.yaml", DEPLOYMENT);
    let applied = world.run_command("kubectl apply -f web.yaml");
    assert_eq!(applied.exit_code, 0, "{applied:?}");
    world
}

#[test]
fn rollout_status_waits_until_the_rollout_is_done() {
    let mut w = world();
    let record = w.run_command_for("kubectl rollout status deployment/web", 120_000);
    assert!(!record.interrupted, "{record:?}");
    assert_eq!(record.exit_code, 0);
    let lines: Vec<&str> = record.stdout.lines().collect();
    assert_eq!(lines.last(), Some(&"deployment \"web\" successfully rolled out"), "{}", record.stdout);
    assert!(lines.len() > 1, "it printed the progress first: {}", record.stdout);
    // It returned when the rollout finished, long before the user would have stopped it.
    assert!(w.now() < 60_000, "returned at {}", w.now());
    // Done already: it returns at once.
    let again = w.run_command_for("kubectl rollout status deployment/web", 120_000);
    assert_eq!(again.stdout, "deployment \"web\" successfully rolled out\n");
}

#[test]
fn rollout_status_stops_at_its_timeout_or_at_once() {
    let mut w = world();
    let now = w.run_command("kubectl rollout status deployment/web");
    assert!(now.interrupted && now.exit_code == 0 && now.stdout.lines().count() == 1, "{now:?}");
    let t = w.now();
    let timed = w.run_command_for("kubectl rollout status deployment/web --timeout=1ms", t + 60_000);
    assert_eq!((timed.exit_code, timed.stderr.as_str()), (1, "error: timed out waiting for the condition\n"), "{timed:?}");
    assert_eq!(w.now(), t + 1);
}

#[test]
fn get_watch_prints_the_list_then_every_change_until_stopped() {
    let mut w = world();
    let record = w.run_command_for("kubectl get deploy -w", 30_000);
    assert!(record.interrupted);
    assert_eq!(w.now(), 30_000);
    let lines: Vec<&str> = record.stdout.lines().collect();
    assert!(lines[0].starts_with("NAME") && lines.iter().filter(|l| l.starts_with("NAME")).count() == 1, "{}", record.stdout);
    assert!(lines[1].starts_with("web ") && lines.len() > 2, "{}", record.stdout);
    assert!(lines.last().unwrap().split_whitespace().nth(1) == Some("2/2"), "{}", record.stdout);
    // Nothing of the kind: no "No resources found", no header until a row.
    let empty = w.run_command_for("kubectl get jobs --watch", 31_000);
    assert_eq!((empty.stdout.as_str(), empty.stderr.as_str()), ("", ""));
    let two = w.run_command("kubectl get deploy,pods -w");
    assert_eq!(two.stderr, "error: watch is only supported on individual resources and resource collections - more than 1 resource was found\n");
}
