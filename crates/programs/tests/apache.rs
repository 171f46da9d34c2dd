mod support;

use kubesim_os::program::{Signal, Step, Wake};
use support::*;

#[test]
fn hpa_example_starts_apache_with_php_and_answers_ok_for_30ms_of_cpu() {
    let (mut os, spawn) = image("registry.k8s.io/hpa-example", "php-apache-5d54745f55-abcde", None);
    os.fs.root.add_file("/etc/hosts", "127.0.0.1\tlocalhost\n10.244.0.7\tphp-apache-5d54745f55-abcde\n", 0o644);
    let mut p = start(&os, &spawn);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    let ah = "AH00558: apache2: Could not reliably determine the server's fully qualified domain name, using 10.244.0.7. Set the 'ServerName' directive globally to suppress this message\n";
    let err = text(&os.stderr);
    assert!(err.starts_with(&format!("{ah}{ah}[Tue Dec 01 09:04:57.000000 2026] [mpm_prefork:notice] [pid 1] AH00163: Apache/2.4.25 (Debian) PHP/5.6.40 configured -- resuming normal operations\n[Tue Dec 01 09:04:57.000000 2026] [core:notice] [pid 1] AH00094: Command line: 'apache2 -D FOREGROUND'\n")), "{err}");
    assert_eq!(p.listening(), vec![(80, false)]);
    let r = text(&send(&mut p, &mut os, 80, &wget_request("php-apache", "/")));
    assert_eq!(r, "HTTP/1.1 200 OK\r\nDate: Tue, 01 Dec 2026 09:04:57 GMT\r\nServer: Apache/2.4.25 (Debian)\r\nX-Powered-By: PHP/5.6.40\r\nContent-Length: 3\r\nConnection: close\r\nContent-Type: text/html; charset=UTF-8\r\n\r\nOK!");
    assert_eq!(text(&os.stdout), "10.244.0.5 - - [01/Dec/2026:09:04:57 +0000] \"GET / HTTP/1.1\" 200 3 \"-\" \"Wget\"\n");
    // The request's CPU is charged when the host resumes the server.
    assert_eq!(p.resume(&mut os, Wake::Timer), Step::Compute { cpu_ms: kubesim_programs::apache::HPA_EXAMPLE_CPU_MS, threads: 1 });
    assert_eq!(p.resume(&mut os, Wake::Timer), Step::Wait);
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Term)), Step::Exit(0));
    assert!(text(&os.stderr).ends_with("[mpm_prefork:notice] [pid 1] AH00169: caught SIGTERM, shutting down\n"));
}

#[test]
fn ten_requests_a_second_to_hpa_example_cost_300ms_of_cpu_per_second() {
    let (mut os, spawn) = image("registry.k8s.io/hpa-example", "php-apache", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    let mut cpu = 0;
    for _ in 0..10 {
        send(&mut p, &mut os, 80, &wget_request("php-apache", "/"));
        while let Step::Compute { cpu_ms, .. } = p.resume(&mut os, Wake::Timer) {
            cpu += cpu_ms;
        }
    }
    assert_eq!(cpu, 300);
}

#[test]
fn the_httpd_image_serves_it_works_with_apaches_headers_and_common_log() {
    let (mut os, spawn) = image("httpd:2.4", "web", None);
    assert_eq!(spawn.argv, ["httpd-foreground"]);
    let mut p = start(&os, &spawn);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert!(
        text(&os.stderr).contains("[mpm_event:notice] [pid 1:tid 140283451877248] AH00489: Apache/2.4.65 (Unix) configured -- resuming normal operations\n"),
        "{}",
        text(&os.stderr)
    );
    let r = text(&send(&mut p, &mut os, 80, &curl_request("web", "/")));
    assert_eq!(r, "HTTP/1.1 200 OK\r\nDate: Tue, 01 Dec 2026 09:04:57 GMT\r\nServer: Apache/2.4.65 (Unix)\r\nLast-Modified: Mon, 30 Nov 2026 00:53:20 GMT\r\nETag: \"2d-66173d6044000\"\r\nAccept-Ranges: bytes\r\nContent-Length: 45\r\nKeep-Alive: timeout=5, max=100\r\nConnection: Keep-Alive\r\nContent-Type: text/html\r\n\r\n<html><body><h1>It works!</h1></body></html>\n");
    assert_eq!(text(&os.stdout), "10.244.0.5 - - [01/Dec/2026:09:04:57 +0000] \"GET / HTTP/1.1\" 200 45\n");
    let r = text(&send(&mut p, &mut os, 80, &curl_request("web", "/missing")));
    assert!(r.starts_with("HTTP/1.1 404 Not Found\r\n") && r.contains("<p>The requested URL was not found on this server.</p>"), "{r}");
}

#[test]
fn the_guestbook_frontend_writes_to_the_leader_and_reads_the_follower_in_the_background() {
    let (mut os, spawn) = image("docker.io/corelab/gb-frontend:v5", "frontend-abc", None);
    let mut p = start(&os, &spawn);
    let s = p.resume(&mut os, Wake::Start);
    assert!(matches!(s, Step::Net(_)), "{s:?}");
    let r = text(&send(&mut p, &mut os, 80, &curl_request("frontend", "/guestbook.php?cmd=set&key=messages&value=,hello")));
    assert!(r.ends_with("\r\n\r\n{\"message\": \"Updated\"}"), "{r}");
    let r = text(&send(&mut p, &mut os, 80, &curl_request("frontend", "/guestbook.php?cmd=get&key=messages")));
    assert!(r.ends_with("\r\n\r\n{\"data\": \",hello\"}"), "{r}");
}
