mod support;

use kubesim_os::program::Signal;
use kubesim_os::testing::{run, Call};
use support::*;

fn perl(args: &[&str]) -> kubesim_os::testing::Outcome {
    let mut cmd = vec!["perl"];
    cmd.extend_from_slice(args);
    let (mut os, spawn) = image("perl:5.34", "pi-abcde", Some(&cmd));
    run(start(&os, &spawn), &mut os)
}

#[test]
fn the_pi_job_prints_2000_exact_digits_of_pi_and_burns_seconds_of_cpu() {
    let out = perl(&["-Mbignum=bpi", "-wle", "print bpi(2000)"]);
    assert_eq!(out.code, Some(0));
    let s = out.stdout_str();
    assert_eq!(s.len(), 2002);
    assert_eq!(&s[..22], "3.14159265358979323846");
    assert_eq!(&s[s.len() - 21..], "59958133904780275901\n");
    let cpu: u64 = out.calls.iter().map(|c| if let Call::Compute(ms) = c { *ms } else { 0 }).sum();
    assert!((5_000..10_000).contains(&cpu), "{cpu}");
    assert_eq!(out.elapsed_ms, cpu);
}

#[test]
fn bpi_1000_from_the_docs_job_manifest_rounds_its_last_digit() {
    let out = perl(&["-Mbignum=bpi", "-wle", "print bpi(1000)"]);
    let s = out.stdout_str();
    assert_eq!(s.len(), 1002);
    assert!(s.ends_with("76611195909216420199\n"), "{}", &s[s.len() - 30..]);
}

#[test]
fn one_liners_print_env_loop_and_exit() {
    assert_eq!(perl(&["-e", "print \"hello\\n\""]).stdout_str(), "hello\n");
    assert_eq!(perl(&["-le", "print $ENV{HOSTNAME}"]).stdout_str(), "pi-abcde\n");
    assert_eq!(perl(&["-le", "for my $i (1..3) { print \"n=$i\" }"]).stdout_str(), "n=1\nn=2\nn=3\n");
    assert_eq!(perl(&["-e", "print 1+2*3, \"\\n\"; print 10/4, \"\\n\"; print 2**10 . \"\\n\""]).stdout_str(), "7\n2.5\n1024\n");
    let out = perl(&["-e", "print \"bye\\n\"; exit 3"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("bye\n", Some(3)));
    let out = perl(&["-e", "die \"boom\\n\""]);
    assert_eq!((out.stderr_str().as_str(), out.code), ("boom\n", Some(255)));
    let out = perl(&["-e", "print STDERR \"warn\\n\" if 1 == 1"]);
    assert_eq!(out.stderr_str(), "warn\n");
}

#[test]
fn sleep_takes_virtual_time_inside_loops() {
    let out = perl(&["-le", "for (1..3) { print $_; sleep 2 }"]);
    assert_eq!((out.stdout_str().as_str(), out.elapsed_ms - 12), ("1\n2\n3\n", 6_000));
}

#[test]
fn syntax_errors_and_unknown_subroutines_fail_as_perl_does() {
    let out = perl(&["-e", "print \"a\" +"]);
    assert_eq!((out.stderr_str().as_str(), out.code), ("syntax error at -e line 1, at EOF\nExecution of -e aborted due to compilation errors.\n", Some(255)));
    let out = perl(&["-e", "foo(1)"]);
    assert_eq!((out.stderr_str().as_str(), out.code), ("Undefined subroutine &main::foo called at -e line 1.\n", Some(255)));
    let out = perl(&["-le", "print bpi(10)"]);
    assert_eq!(out.code, Some(255));
}

#[test]
fn perl_as_pid_1_ignores_sigterm_but_dies_143_as_a_child() {
    let (os, spawn) = image("perl:5.34", "p", Some(&["perl", "-e", "sleep 10"]));
    let mut os = os.with_signal(2_000, Signal::Term);
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!((out.code, out.elapsed_ms), (Some(0), 10_012));
    let (os, spawn) = image("perl:5.34", "p", Some(&["perl", "-e", "sleep 10"]));
    let mut os = os.with_signal(2_000, Signal::Term);
    os.pid = 9;
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!((out.code, out.elapsed_ms), (Some(143), 2_000));
}

#[test]
fn dash_n_filters_stdin() {
    let (mut os, mut spawn) = image("perl:5.34", "p", Some(&["perl", "-ne", "print if /b/"]));
    spawn.stdin = b"abc\nxyz\nbob\n".to_vec();
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.stdout_str(), "abc\nbob\n");
}
