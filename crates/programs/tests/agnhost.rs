mod support;

use kubesim_os::program::{Signal, Step, Wake};
use kubesim_os::testing::run;
use support::*;

fn agnhost(args: &[&str], host: &str) -> (kubesim_os::testing::FakeOs, Box<dyn kubesim_os::Program>) {
    let mut cmd = vec!["/agnhost"];
    cmd.extend_from_slice(args);
    let (os, spawn) = image("registry.k8s.io/e2e-test-images/agnhost:2.40", host, Some(&cmd));
    let p = start(&os, &spawn);
    (os, p)
}

const PROBE: &[u8] =
    b"GET /healthz HTTP/1.1\r\nHost: 10.244.0.7:8080\r\nUser-Agent: kube-probe/1.34\r\nAccept: */*\r\nCustom-Header: Awesome\r\nConnection: close\r\n\r\n";

#[test]
fn liveness_serves_ok_for_ten_seconds_then_500_with_the_elapsed_seconds() {
    let (mut os, mut p) = agnhost(&["liveness"], "liveness-http");
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(p.listening(), vec![(8080, false)]);
    os.now_ms = 3_000;
    assert_eq!(
        text(&send(&mut p, &mut os, 8080, PROBE)),
        "HTTP/1.1 200 OK\r\nDate: Tue, 01 Dec 2026 09:05:00 GMT\r\nContent-Length: 2\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nok"
    );
    os.now_ms = 10_000;
    assert!(text(&send(&mut p, &mut os, 8080, PROBE)).starts_with("HTTP/1.1 200 OK\r\n"));
    os.now_ms = 12_004;
    assert_eq!(
        text(&send(&mut p, &mut os, 8080, PROBE)),
        "HTTP/1.1 500 Internal Server Error\r\nDate: Tue, 01 Dec 2026 09:05:09 GMT\r\nContent-Length: 13\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nerror: 12.004"
    );
    // Unregistered paths get Go's 404.
    let r = text(&send(&mut p, &mut os, 8080, &curl_request("x", "/")));
    assert!(
        r.starts_with("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n")
            && r.ends_with("404 page not found\n"),
        "{r}"
    );
    assert_eq!(text(&os.stdout), "");
    assert_eq!(text(&os.stderr), "");
}

#[test]
fn a_go_binary_as_pid_1_exits_2_on_sigterm_and_143_otherwise() {
    let (mut os, mut p) = agnhost(&["liveness"], "liveness-http");
    p.resume(&mut os, Wake::Start);
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Term)), Step::Exit(2));
    let (mut os, mut p) = agnhost(&["liveness"], "liveness-http");
    os.pid = 12;
    p.resume(&mut os, Wake::Start);
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Term)), Step::Exit(143));
}

#[test]
fn agnhost_pause_prints_paused_and_exits_2_on_sigterm() {
    let (os, _) = agnhost(&["pause"], "p");
    let mut os = os.with_signal(5_000, Signal::Term);
    let (_, spawn) = image("registry.k8s.io/e2e-test-images/agnhost:2.40", "p", None);
    assert_eq!(spawn.argv, ["/agnhost", "pause"]);
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("Paused\n", Some(2), 5_000));
}

#[test]
fn netexec_serves_hostname_echo_clientip_shell_and_exit() {
    let (mut os, mut p) = agnhost(&["netexec", "--http-port=8080", "--udp-port=8081"], "netexec-7d9f");
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(text(&os.stderr), "2026/12/01 09:04:57 Started HTTP server on port 8080\n2026/12/01 09:04:57 Started UDP server on port  8081\n");
    assert_eq!(p.listening(), vec![(8080, false), (8081, true)]);
    let body = |r: Vec<u8>| text(&r).split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    assert_eq!(body(send(&mut p, &mut os, 8080, &curl_request("x", "/hostname"))), "netexec-7d9f");
    assert_eq!(body(send(&mut p, &mut os, 8080, &curl_request("x", "/echo?msg=hello%20world"))), "hello world");
    assert_eq!(body(send(&mut p, &mut os, 8080, &curl_request("x", "/clientip"))), "10.244.0.5:40000");
    let r = text(&send(&mut p, &mut os, 8080, &curl_request("x", "/echo?msg=teapot&code=418")));
    assert!(r.starts_with("HTTP/1.1 418 I'm a teapot\r\n"), "{r}");
    assert_eq!(body(send(&mut p, &mut os, 8080, &curl_request("x", "/shell?cmd=echo%20hi%3B%20hostname"))), "{\"output\":\"hi\\nnetexec-7d9f\\n\"}");
    assert_eq!(body(send(&mut p, &mut os, 8080, &curl_request("x", "/shell?cmd=exit%203"))), "{\"error\":\"exit status 3\"}");
    assert_eq!(send_udp(&mut p, &mut os, 8081, b"hostname\n"), Some(b"netexec-7d9f".to_vec()));
    assert_eq!(send_udp(&mut p, &mut os, 8081, b"echo abc"), Some(b"abc".to_vec()));
    assert!(text(&os.stderr).contains("GET /shell?cmd=echo hi; hostname\n"));
    let r = send(&mut p, &mut os, 8080, &curl_request("x", "/exit?code=7"));
    assert!(r.is_empty());
    assert_eq!(p.resume(&mut os, Wake::Timer), Step::Exit(7));
}

#[test]
fn serve_hostname_answers_its_hostname_and_drains_for_a_minute_after_sigterm() {
    let (mut os, spawn) = image("registry.k8s.io/serve_hostname:v1.4", "hostnames-abc12", None);
    os.fs.root.add_file("/serve_hostname", "#!kubesim agnhost\n", 0o755);
    let mut sp = spawn.clone();
    sp.argv = vec!["/agnhost".into(), "serve-hostname".into()];
    let mut p = kubesim_programs::program_for("agnhost", &sp).unwrap();
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(p.listening(), vec![(9376, false)]);
    let r = text(&send(&mut p, &mut os, 9376, &wget_request("hostnames", "/")));
    assert!(r.ends_with("\r\n\r\nhostnames-abc12"), "{r}");
    assert!(text(&os.stderr).ends_with("Serving on port 9376.\n2026/12/01 09:04:57 HTTP request from 10.244.0.5:40000\n"));
    let s = p.resume(&mut os, Wake::Timer);
    assert!(matches!(s, Step::Compute { .. } | Step::Wait), "{s:?}");
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Term)), Step::Sleep(60_000));
    assert!(text(&os.stderr).ends_with("Shutting down after receiving signal: terminated.\n2026/12/01 09:04:57 Awaiting pod deletion.\n"));
    os.now_ms += 60_000;
    assert_eq!(p.resume(&mut os, Wake::Timer), Step::Exit(0));
}

#[test]
fn unknown_subcommands_print_cobras_error_and_no_subcommand_prints_usage() {
    let (mut os, p) = agnhost(&["livenes"], "x");
    let out = run(p, &mut os);
    assert_eq!(out.code, Some(0));
    assert_eq!(out.stderr_str(), "Error: unknown command \"livenes\" for \"app\"\n\nDid you mean this?\n\tliveness\n\nRun 'app --help' for usage.\n");
    let (mut os, p) = agnhost(&[], "x");
    let out = run(p, &mut os);
    assert_eq!(out.code, Some(0));
    assert!(out.stdout_str().starts_with("Usage:\n  app [command]\n\nAvailable Commands:\n"));
}

#[test]
fn dns_tools_read_resolv_conf() {
    let (os, p) = agnhost(&["dns-suffix"], "x");
    let mut os = os.with_cluster_dns("default", "10.96.0.10");
    let out = run(p, &mut os);
    assert_eq!(out.stdout_str(), "default.svc.cluster.local,svc.cluster.local,cluster.local\n");
    let (os, p) = agnhost(&["dns-server-list"], "x");
    let mut os = os.with_cluster_dns("default", "10.96.0.10");
    assert_eq!(run(p, &mut os).stdout_str(), "10.96.0.10\n");
}

#[test]
fn porter_serves_the_values_of_serve_port_variables() {
    let (os, mut spawn) = image("registry.k8s.io/e2e-test-images/agnhost:2.40", "x", Some(&["/agnhost", "porter"]));
    spawn.env.insert("SERVE_PORT_9001".into(), "foo".into());
    let mut os = os;
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    assert_eq!(p.listening(), vec![(9001, false)]);
    assert!(text(&send(&mut p, &mut os, 9001, &curl_request("x", "/"))).ends_with("\r\n\r\nfoo"));
}
