#![cfg(not(target_arch = "wasm32"))]
//! `kubectl logs` options as the kubelet answers them (kuberuntime/logs ReadLogs): the runtime
//! records when each line was written; `--timestamps` prints it (RFC3339, nine fractional
//! digits), `--since`/`--since-time` leave older lines out, `--tail` and `--limit-bytes` cut.

use kubesim_sim::loader::apply;
use kubesim_sim::scenario::InputFile;
use kubesim_sim::World;

const COUNTER: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: counter}\nspec:\n  containers:\n  - name: count\n    image: busybox:1.28\n    args: [/bin/sh, -c, 'i=0; while true; do echo \"$i: $(date)\"; i=$((i+1)); sleep 1; done']\n";

fn world() -> World {
    let mut world = World::new(1);
    world.add_default_nodes();
    let outcome = apply(&mut world, &InputFile { name: "counter.yaml".into(), text: COUNTER.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world.run_until(60_000);
    world
}

fn run(world: &mut World, line: &str) -> (String, String, i32) {
    let r = world.run_command(line);
    (r.stdout, r.stderr, r.exit_code)
}

#[test]
fn timestamps_prefix_each_line_with_the_time_it_was_written() {
    let mut world = world();
    let (out, _, code) = run(&mut world, "kubectl logs counter --timestamps --tail=3");
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    for line in &lines {
        let (ts, text) = line.split_once(' ').unwrap();
        // 2025-01-01T00:00:59.123000000Z
        assert_eq!(ts.len(), 30, "{line}");
        assert!(ts.starts_with("2025-01-01T00:00:") && ts.ends_with("000000Z"), "{line}");
        // The line's own `date` agrees with the runtime's timestamp, to the second.
        assert!(text.contains(&format!("00:00:{}", &ts[17..19])), "{line}");
    }
    // Without --timestamps the same lines, bare.
    let (plain, _, _) = run(&mut world, "kubectl logs counter --tail=3");
    let bare: Vec<&str> = lines.iter().map(|l| l.split_once(' ').unwrap().1).collect();
    assert_eq!(plain.lines().collect::<Vec<_>>(), bare);
}

#[test]
fn since_tail_and_limit_bytes_cut_the_log() {
    let mut world = world();
    let (all, _, _) = run(&mut world, "kubectl logs counter");
    let total = all.lines().count();
    assert!(total > 30, "{all}");
    // The last 10 s: about ten lines (one a second).
    let (recent, _, _) = run(&mut world, "kubectl logs counter --since=10s");
    let n = recent.lines().count();
    assert!((9..=11).contains(&n), "{n}: {recent}");
    assert!(all.ends_with(&recent));
    // --since-time: from an instant on.
    let (from, _, _) = run(&mut world, "kubectl logs counter --since-time=2025-01-01T00:00:50Z --timestamps");
    assert!(from.lines().all(|l| l >= "2025-01-01T00:00:50"), "{from}");
    assert!(!from.is_empty());
    // Both is an error, as kubectl's validation says.
    let (_, err, code) = run(&mut world, "kubectl logs counter --since=10s --since-time=2025-01-01T00:00:50Z");
    assert_eq!((err.trim(), code), ("error: at most one of `sinceTime` or `sinceSeconds` may be specified", 1));
    let (cut, _, _) = run(&mut world, "kubectl logs counter --limit-bytes=5");
    assert_eq!(cut, &all[..5]);
    let (none, _, _) = run(&mut world, "kubectl logs counter --tail=0");
    assert_eq!(none, "");
    // A selector without --tail shows the last 10 lines of each pod.
    world.run_command("kubectl label pod counter app=counter");
    let (selected, _, _) = run(&mut world, "kubectl logs -l app=counter");
    assert_eq!(selected.lines().count(), 10, "{selected}");
}
