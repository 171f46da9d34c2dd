//! Signals, traps and background jobs: what a container's PID 1 shell does when the kubelet
//! sends SIGTERM, and how `&`/`wait` schedule on virtual time.

mod common;

use common::Pod;
use kubesim_os::testing::Call;
use kubesim_os::Signal;

fn with_term(mut pod: Pod, at: u64) -> Pod {
    pod.os = pod.os.clone().with_signal(at, Signal::Term);
    pod
}

#[test]
fn pid_one_shell_without_a_trap_ignores_sigterm() {
    let mut pod = with_term(Pod::busybox(), 1_000);
    let out = pod.run(&["sh", "-c", "sleep 5; echo finished"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("finished\n", Some(0), 5_000));
}

#[test]
fn non_pid_one_shell_dies_with_143_on_sigterm() {
    let mut pod = with_term(Pod::busybox(), 1_000);
    pod.os.pid = 12;
    let out = pod.run(&["sh", "-c", "sleep 5; echo finished"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("", Some(143), 1_000));
}

#[test]
fn trapped_sigterm_runs_after_the_foreground_sleep_finishes() {
    // bash/dash/ash wait for the foreground child before running a trap.
    for sh in ["sh", "bash"] {
        let pod = if sh == "bash" { Pod::debian() } else { Pod::busybox() };
        let mut pod = with_term(pod, 1_000);
        let out = pod.run(&[sh, "-c", "trap 'echo caught TERM; exit 0' TERM; echo start; sleep 10; echo not-reached"]);
        assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("start\ncaught TERM\n", Some(0), 10_000), "{sh}");
    }
}

#[test]
fn trapped_sigterm_interrupts_wait_immediately() {
    let mut pod = with_term(Pod::busybox(), 1_500);
    let out = pod.run(&["sh", "-c", "trap 'echo graceful shutdown; exit 0' TERM; sleep 1000 & wait"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("graceful shutdown\n", Some(0), 1_500));
}

#[test]
fn wait_status_after_a_trap_without_exit_is_128_plus_the_signal() {
    let mut pod = with_term(Pod::debian(), 2_000);
    let out = pod.run(&["bash", "-c", "trap 'echo trap' TERM; sleep 100 & wait; echo wait=$?"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("trap\nwait=143\n", Some(0), 2_000));
}

#[test]
fn ignored_signal_with_empty_trap_does_nothing() {
    let mut pod = with_term(Pod::busybox(), 500);
    pod.os.pid = 9;
    let out = pod.run(&["sh", "-c", "trap '' TERM; sleep 2; echo survived"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("survived\n", Some(0)));
}

#[test]
fn exit_trap_runs_at_the_end_of_the_script_and_on_exit() {
    let mut pod = Pod::busybox();
    let out = pod.run(&["sh", "-c", "trap 'echo cleanup' EXIT; echo work; exit 3"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("work\ncleanup\n", Some(3)));
}

#[test]
fn sigkill_ends_the_shell_with_137() {
    let mut pod = Pod::busybox();
    pod.os = pod.os.clone().with_signal(700, Signal::Kill);
    let out = pod.run(&["sh", "-c", "trap 'echo no' TERM KILL; sleep 100"]);
    assert_eq!((out.code, out.elapsed_ms), (Some(137), 700));
}

#[test]
fn background_jobs_sleep_concurrently_with_the_foreground() {
    let mut pod = Pod::busybox();
    let out = pod.run(&["sh", "-c", "(sleep 3; echo job) & sleep 1; echo fg; wait; echo all done"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("fg\njob\nall done\n", Some(0), 3_000));
}

#[test]
fn two_background_jobs_finish_in_time_order() {
    let mut pod = Pod::debian();
    let out = pod.run(&["bash", "-c", "(sleep 2; echo two) & (sleep 1; echo one) & wait; echo end"]);
    assert_eq!((out.stdout_str().as_str(), out.elapsed_ms), ("one\ntwo\nend\n", 2_000));
}

#[test]
fn wait_for_a_pid_returns_its_exit_status() {
    let mut pod = Pod::busybox();
    let out = pod.run(&["sh", "-c", "(sleep 1; exit 7) & p=$!; wait $p; echo status=$?"]);
    assert_eq!(out.stdout_str(), "status=7\n");
}

#[test]
fn kill_of_a_background_job_terminates_it() {
    let mut pod = Pod::busybox();
    let out = pod.run(&["sh", "-c", "sleep 100 & p=$!; sleep 1; kill $p; wait $p; echo status=$?"]);
    assert_eq!((out.stdout_str().as_str(), out.elapsed_ms), ("status=143\n", 1_000));
}

#[test]
fn exec_replaces_the_shell_and_the_program_receives_signals() {
    let mut pod = with_term(Pod::busybox(), 2_000);
    pod.os.pid = 1;
    let out = pod.run(&["sh", "-c", "echo starting; exec sleep 10"]);
    // `sleep` as PID 1 ignores SIGTERM (no handler), so it runs to the end.
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("starting\n", Some(0), 10_000));
    let mut pod = with_term(Pod::busybox(), 2_000);
    pod.os.pid = 5;
    let out = pod.run(&["sh", "-c", "exec sleep 10"]);
    assert_eq!((out.code, out.elapsed_ms), (Some(143), 2_000));
}

#[test]
fn a_busy_loop_yields_compute_steps_instead_of_hanging() {
    let mut pod = Pod::busybox();
    let out = pod.run_for(&["sh", "-c", "while :; do :; done"], 1_000);
    assert_eq!(out.code, None);
    assert!(out.calls.iter().all(|c| matches!(c, Call::Compute(_))));
    assert!(out.calls.len() >= 50, "{}", out.calls.len());
}

#[test]
fn yes_piped_to_head_terminates() {
    let mut pod = Pod::busybox();
    let out = pod.run(&["sh", "-c", "yes | head -n 3; echo rc=$?"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("y\ny\ny\nrc=0\n", Some(0)));
}

#[test]
fn self_kill_without_a_trap_ends_a_non_pid_one_shell() {
    let mut pod = Pod::busybox();
    pod.os.pid = 33;
    let out = pod.run(&["sh", "-c", "echo before; kill $$; echo after"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("before\n", Some(143)));
}

#[test]
fn tail_f_blocks_and_follows_appended_lines() {
    let mut pod = Pod::busybox().file("/var/log/app.log", "one\n");
    let out = pod.run_for(&["sh", "-c", "(sleep 2; echo two >> /var/log/app.log) & tail -f /var/log/app.log"], 5_000);
    assert_eq!((out.stdout_str().as_str(), out.code), ("one\ntwo\n", None));
}

#[test]
fn timeout_kills_a_long_command_with_124() {
    let mut pod = Pod::busybox();
    let out = pod.run(&["sh", "-c", "timeout 5 sleep 100; echo rc=$?"]);
    assert_eq!((out.stdout_str().as_str(), out.elapsed_ms), ("rc=124\n", 5_000));
    let out = pod.run(&["sh", "-c", "timeout 5 sleep 1; echo rc=$?"]);
    assert_eq!(out.stdout_str(), "rc=0\n");
}

#[test]
fn sleep_infinity_waits_for_a_signal() {
    let mut pod = Pod::busybox();
    pod.os.pid = 3;
    pod.os = pod.os.clone().with_signal(60_000, Signal::Term);
    let out = pod.run(&["sleep", "infinity"]);
    assert_eq!((out.code, out.elapsed_ms), (Some(143), 60_000));
}

#[test]
fn the_same_seed_gives_the_same_random_numbers_and_a_clone_the_same_future() {
    let script = "echo $RANDOM $RANDOM; sleep 1; head -c 4 /dev/urandom | md5sum";
    let mut a = Pod::debian();
    let mut b = Pod::debian();
    let (oa, ob) = (a.run(&["bash", "-c", script]), b.run(&["bash", "-c", script]));
    assert_eq!(oa, ob);
    // A program cloned mid-run continues identically.
    let argv: Vec<String> = ["bash", "-c", "for i in 1 2 3; do echo $i $RANDOM; sleep 1; done"].iter().map(|s| s.to_string()).collect();
    let mut os = kubesim_os::testing::FakeOs::new(kubesim_os::registry::debian_image());
    let prog = kubesim_os::registry::command(&argv, &kubesim_os::registry::default_env("p"), "/", Vec::new(), kubesim_os::Os::fs_ref(&os)).expect("bash");
    let mut p = prog;
    let _ = p.resume(&mut os, kubesim_os::Wake::Start);
    let (mut os2, p2) = (os.clone(), p.clone());
    let r1 = kubesim_os::testing::run(p, &mut os);
    let r2 = kubesim_os::testing::run(p2, &mut os2);
    assert_eq!(r1, r2);
}

#[test]
fn command_substitutions_that_sleep_suspend_the_command_and_resume_it() {
    let cases: &[(&str, &str, u64)] = &[
        ("echo $(sleep 1; echo a) $(sleep 2; echo b)", "a b\n", 3_000),
        ("case $(sleep 1; echo x) in x) echo matched;; esac", "matched\n", 1_000),
        ("(sleep 1; echo hi) | cat", "hi\n", 1_000),
        ("x=$(sleep 1; echo v); echo $x$x", "vv\n", 1_000),
        ("f() { sleep 1; echo in-f; }; y=$(f); echo $y", "in-f\n", 1_000),
        ("echo start; for i in 1 2; do echo $(sleep 1; echo $i); done", "start\n1\n2\n", 2_000),
    ];
    for (script, want, ms) in cases {
        let mut pod = Pod::busybox();
        let out = pod.run(&["sh", "-c", script]);
        assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), (*want, Some(0), *ms), "{script}");
    }
}

#[test]
fn a_long_running_loop_does_not_grow() {
    use kubesim_os::program::{NetReply, Step, Wake};
    use kubesim_os::{registry, Os};
    let mut os = kubesim_os::testing::FakeOs::new(registry::busybox_image())
        .with_cluster_dns("default", "10.96.0.10")
        .with_dns("web.default.svc.cluster.local", "10.96.0.11");
    let argv: Vec<String> = ["sh", "-c", "while true; do wget -q -O- http://web >/dev/null 2>&1; sleep 0.01; done"].iter().map(|s| s.to_string()).collect();
    let mut p = registry::command(&argv, &registry::default_env("p"), "/", Vec::new(), os.fs_ref()).expect("sh");
    let mut wake = Wake::Start;
    let mut sizes = Vec::new();
    for iter in 0..20_000 {
        let step = p.resume(&mut os, wake);
        // Compared in the same phase of the loop (its `sleep 0.01`): the CPU slices the shell
        // is charged shift where iteration N falls.
        let in_sleep = matches!(step, Step::Sleep(10));
        match step {
            Step::Sleep(ms) => {
                os.now_ms += ms;
                wake = Wake::Timer;
            }
            // The shell's accumulated work (its forks of wget and sleep) as a CPU slice.
            Step::Compute { cpu_ms, .. } => {
                os.now_ms += cpu_ms;
                wake = Wake::Timer;
            }
            Step::Net(kubesim_os::program::NetCall::Dns { .. }) => {
                wake = Wake::Net(NetReply::Dns(Ok(kubesim_os::program::DnsMessage::answer(vec![kubesim_os::program::DnsRecord {
                    name: "web.default.svc.cluster.local.".into(),
                    ttl: 5,
                    rtype: kubesim_os::program::RType::A,
                    data: "10.96.0.11".into(),
                }]))))
            }
            Step::Net(_) => wake = Wake::Net(NetReply::Tcp(Ok(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec()))),
            other => panic!("{other:?}"),
        }
        if in_sleep && ((iter >= 1_000 && sizes.is_empty()) || (iter >= 19_000 && sizes.len() == 1)) {
            sizes.push((p.memory_bytes(), format!("{p:?}").len()));
        }
    }
    // Same memory; the state's size differs only by growing pid/clock digits.
    assert_eq!(sizes.len(), 2, "the loop sleeps in both windows");
    assert_eq!(sizes[0].0, sizes[1].0);
    assert!(sizes[1].1.abs_diff(sizes[0].1) < 32, "{sizes:?}");
}

#[test]
fn blocking_substitutions_inside_double_brackets_and_arithmetic_suspend_and_replay() {
    // Output and xtrace mirror GNU bash 5.2 (`bash -c 'set -x; ...'`): each `[[ ]]` part is
    // traced once, after the substitutions it needs have run.
    let mut pod = Pod::debian();
    let script = "set -x; x=1; if [[ $x == 1 && $(sleep 0.1; echo a) == a && -n $(echo b) ]]; then echo yes; fi; \
                  (( $(sleep 0.1; echo 3) + 1 == 4 )) && echo ok; [[ $(echo q) =~ ^(q)$ ]] && echo ${BASH_REMATCH[1]}";
    let out = pod.run(&["bash", "-c", script]);
    assert_eq!(out.stdout_str(), "yes\nok\nq\n");
    assert_eq!(
        out.stderr_str(),
        "+ x=1\n+ [[ 1 == 1 ]]\n++ sleep 0.1\n++ echo a\n+ [[ a == a ]]\n++ echo b\n+ [[ -n b ]]\n+ echo yes\n\
         ++ sleep 0.1\n++ echo 3\n+ ((  3 + 1 == 4  ))\n+ echo ok\n++ echo q\n+ [[ q =~ ^(q)$ ]]\n+ echo q\n"
    );
    assert_eq!((out.code, out.elapsed_ms), (Some(0), 200));
    // An arithmetic `for` condition is evaluated (and its substitution run) once per iteration.
    let out = pod.run(&["bash", "-c", "for ((i=0; i<$(sleep 1; echo 2); i++)); do echo $i; done"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("0\n1\n", Some(0), 3_000));
}

#[test]
fn a_background_writer_wakes_before_a_poller_that_slept_more_recently() {
    // Real shells: the poller's three `sleep 1` drift later than the writer's one `sleep 3`
    // (each iteration costs a fork), so the third check already sees the file.
    let mut pod = Pod::busybox();
    let out = pod.run(&["sh", "-c", "(sleep 3; touch /tmp/ready) & until [ -f /tmp/ready ]; do echo waiting; sleep 1; done; echo ready"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("waiting\nwaiting\nwaiting\nready\n", Some(0), 3_000));
}

#[test]
fn tail_capital_f_waits_for_a_missing_file_and_follows_it_once_it_appears() {
    // busybox 1.35 `tail -n+1 -F` on a file created later (checked on Debian 12): the open error,
    // then "has appeared" and the whole file, then appended lines.
    let mut pod = Pod::busybox();
    let out = pod.run_for(&["sh", "-c", "(sleep 1.5; echo hi > /tmp/l; sleep 1; echo two >> /tmp/l) & tail -n+1 -F /tmp/l"], 3_500);
    assert_eq!(out.stdout_str(), "hi\ntwo\n");
    assert_eq!(out.stderr_str(), "tail: can't open '/tmp/l': No such file or directory\ntail: /tmp/l has appeared; following end of new file\n");
    assert_eq!(out.code, None);
    // GNU tail 9.x wording.
    let mut pod = Pod::debian();
    let out = pod.run_for(&["sh", "-c", "(sleep 1.5; echo hi > /tmp/l) & tail -F /tmp/l"], 3_500);
    assert_eq!(out.stdout_str(), "hi\n");
    assert_eq!(out.stderr_str(), "tail: cannot open '/tmp/l' for reading: No such file or directory\ntail: '/tmp/l' has appeared;  following new file\n");
}
