#![cfg(not(target_arch = "wasm32"))]
//! A command left running in a second terminal ([`World::start_background`]): a
//! `kubectl get pods -w` started before the changes it shows, read when it is stopped.

use kubesim_sim::World;

#[test]
fn a_background_watch_shows_what_happens_while_other_commands_run() {
    let mut world = World::new(1);
    world.add_default_nodes();
    world.run_until(1_000);
    let watch = world.start_background("kubectl get pods -w -l run=web");
    assert_eq!(world.run_command("kubectl run web --image=nginx:1.27").exit_code, 0);
    world.run_until(30_000);
    assert_eq!(world.run_command("kubectl delete pod web --wait=false").exit_code, 0);
    world.run_until(60_000);
    let record = world.finish_background(watch).expect("the watch ran");
    assert!(record.interrupted, "stopped with Ctrl-C");
    let statuses: Vec<&str> = record.stdout.lines().skip(1).filter_map(|l| l.split_whitespace().nth(2)).collect();
    for want in ["Pending", "ContainerCreating", "Running", "Terminating", "Completed"] {
        assert!(statuses.contains(&want), "{want} in {statuses:?}\n{}", record.stdout);
    }
    assert!(world.finish_background(watch).is_none(), "a stopped command is gone");
}

// `kubectl run -it`: the attached terminal shows what the program wrote, a prompt without its
// newline included, until the user stops the session.
#[test]
fn an_attached_terminal_shows_an_unfinished_prompt() {
    let mut world = World::new(1);
    world.add_default_nodes();
    world.run_until(1_000);
    let r = world.run_command_for("kubectl run -it ask --image=busybox:1.36 --restart=Never -- sh -c 'echo hello; printf \"ready> \"; sleep 100'", 30_000);
    assert!(r.interrupted, "the session was still open");
    assert!(r.stderr.contains("If you don't see a command prompt, try pressing enter."), "{}", r.stderr);
    assert_eq!(r.stdout, "hello\nready> ");
    // The log has only the finished line.
    assert_eq!(world.run_command("kubectl logs ask").stdout, "hello\n");
}
