//! Network clients over the connection-level primitives, with the messages busybox wget,
//! curl 8, busybox/bind nslookup, dig and nc print.

mod common;

use common::Pod;
use kubesim_os::program::{DnsQuestion, NetCall, NetError, RType};
use kubesim_os::testing::{Call, NetMatch, NetRule};

const PAGE: &str = "<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n<h1>Welcome to nginx!</h1>\n</body>\n</html>\n";

fn nginx_response() -> String {
    format!("HTTP/1.1 200 OK\r\nServer: nginx/1.27.3\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PAGE}", PAGE.len())
}

fn cluster(pod: Pod) -> Pod {
    let mut pod = pod.cluster_dns("default");
    pod.os = pod.os.clone().with_dns("web.default.svc.cluster.local", "10.96.0.11").with_tcp("10.96.0.11", 80, nginx_response().as_bytes());
    pod
}

fn dns_names(calls: &[Call]) -> Vec<String> {
    calls
        .iter()
        .filter_map(|c| if let Call::Net(NetCall::Dns { question, .. }) = c { Some(format!("{} {}", question.qtype.name(), question.name)) } else { None })
        .collect()
}

#[test]
fn wget_quiet_to_stdout_prints_only_the_body() {
    let mut pod = cluster(Pod::busybox());
    let out = pod.run(&["wget", "-q", "-O-", "http://web"]);
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), (PAGE, "", Some(0)));
    assert_eq!(dns_names(&out.calls), vec!["A web.default.svc.cluster.local.".to_string()]);
    let sent =
        out.calls.iter().find_map(|c| if let Call::Net(NetCall::Tcp { send, .. }) = c { Some(String::from_utf8_lossy(send).into_owned()) } else { None });
    assert_eq!(sent.as_deref(), Some("GET / HTTP/1.1\r\nHost: web\r\nUser-Agent: Wget\r\nConnection: close\r\n\r\n"));
}

#[test]
fn wget_to_stdout_reports_progress_like_busybox() {
    let mut pod = cluster(Pod::busybox());
    let out = pod.run(&["wget", "-O-", "http://web"]);
    let want = format!("Connecting to web (10.96.0.11:80)\nwriting to stdout\n-                    100% |********************************| {:>5}  0:00:00 ETA\nwritten to stdout\n", PAGE.len());
    assert_eq!((out.stdout_str().as_str(), out.stderr_str(), out.code), (PAGE, want, Some(0)));
}

#[test]
fn wget_saves_to_index_html_by_default_and_refuses_to_overwrite() {
    let mut pod = cluster(Pod::busybox());
    pod.cwd = "/tmp".into();
    let out = pod.run(&["wget", "http://web/"]);
    assert!(out.stderr_str().contains("saving to 'index.html'\n"), "{}", out.stderr_str());
    assert!(out.stderr_str().ends_with("'index.html' saved\n"));
    assert_eq!(pod.read("/tmp/index.html").as_deref(), Some(PAGE));
    let again = pod.run(&["wget", "-q", "http://web/"]);
    assert_eq!((again.stderr_str().as_str(), again.code), ("wget: can't open 'index.html': File exists\n", Some(1)));
}

#[test]
fn wget_connection_refused() {
    let mut pod = cluster(Pod::busybox());
    let out = pod.run(&["wget", "-O-", "http://web:8080/"]);
    assert_eq!(
        (out.stderr_str().as_str(), out.code),
        ("Connecting to web:8080 (10.96.0.11:8080)\nwget: can't connect to remote host (10.96.0.11): Connection refused\n", Some(1))
    );
}

#[test]
fn wget_bad_address_after_trying_every_search_domain() {
    let mut pod = cluster(Pod::busybox());
    let out = pod.run(&["wget", "-q", "-O-", "http://nope"]);
    assert_eq!((out.stderr_str().as_str(), out.code), ("wget: bad address 'nope'\n", Some(1)));
    assert_eq!(dns_names(&out.calls), vec!["A nope.default.svc.cluster.local.", "A nope.svc.cluster.local.", "A nope.cluster.local.", "A nope."]);
}

#[test]
fn wget_server_error_status() {
    let mut pod = cluster(Pod::busybox());
    pod.os = pod
        .os
        .clone()
        .with_tcp("10.96.0.12", 80, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        .with_dns("missing.default.svc.cluster.local", "10.96.0.12");
    let out = pod.run(&["wget", "-O-", "http://missing/x"]);
    assert_eq!(
        (out.stderr_str().as_str(), out.code),
        ("Connecting to missing (10.96.0.12:80)\nwget: server returned error: HTTP/1.1 404 Not Found\n", Some(1))
    );
}

#[test]
fn wget_download_timed_out_with_dash_t() {
    let mut pod = cluster(Pod::busybox());
    pod.os.net.insert(
        0,
        NetRule { matcher: NetMatch::Tcp("10.96.0.11".into(), 80), reply: kubesim_os::program::NetReply::Tcp(Err(NetError::TimedOut)), latency_ms: 0 },
    );
    let out = pod.run(&["wget", "-q", "-T", "2", "-O-", "http://web"]);
    assert_eq!((out.stderr_str().as_str(), out.code, out.elapsed_ms), ("wget: download timed out\n", Some(1), 2_001));
}

#[test]
fn wget_follows_a_redirect_on_the_same_server() {
    let mut pod = cluster(Pod::busybox());
    pod.os.net.insert(
        0,
        NetRule {
            matcher: NetMatch::Tcp("10.96.0.11".into(), 80),
            reply: kubesim_os::program::NetReply::Tcp(Ok(b"HTTP/1.1 301 Moved Permanently\r\nLocation: /new/\r\nContent-Length: 0\r\n\r\n".to_vec())),
            latency_ms: 1,
        },
    );
    pod.os.net.insert(
        1,
        NetRule {
            matcher: NetMatch::Tcp("10.96.0.11".into(), 80),
            reply: kubesim_os::program::NetReply::Tcp(Ok(nginx_response().into_bytes())),
            latency_ms: 1,
        },
    );
    let out = pod.run(&["wget", "-q", "-O-", "http://web/old"]);
    // The FakeOs answers the first matching rule each time, so the redirect repeats until
    // busybox's limit.
    assert_eq!((out.stderr_str().as_str(), out.code), ("wget: too many redirections\n", Some(1)));
}

#[test]
fn wget_spider_checks_without_downloading() {
    let mut pod = cluster(Pod::busybox());
    let out = pod.run(&["wget", "--spider", "http://web"]);
    // wget.c: `else if (!(option_mask32 & WGET_OPT_QUIET)) fprintf(stderr, "remote file exists\n");`
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), ("", "Connecting to web (10.96.0.11:80)\nremote file exists\n", Some(0)));
}

#[test]
fn wget_server_response_prints_headers() {
    let mut pod = cluster(Pod::busybox());
    let out = pod.run(&["wget", "-S", "-q", "-O", "/dev/null", "http://web"]);
    let want = format!("  HTTP/1.1 200 OK\n  Server: nginx/1.27.3\n  Content-Type: text/html\n  Content-Length: {}\n  Connection: close\n", PAGE.len());
    assert_eq!((out.stderr_str(), out.code), (want, Some(0)));
}

#[test]
fn load_generator_loop_stays_cheap_for_thousands_of_iterations() {
    let mut pod = cluster(Pod::busybox());
    let out = pod.run_for(&["sh", "-c", "while true; do wget -q -O- http://web > /dev/null; sleep 0.01; done"], 60_000);
    let gets = out.calls.iter().filter(|c| matches!(c, Call::Net(NetCall::Tcp { .. }))).count();
    assert!(gets > 4_000, "{gets}");
    assert_eq!(out.code, None);
}

#[test]
fn curl_silent_prints_the_body() {
    let mut pod = cluster(Pod::new(kubesim_os::registry::curl_image()));
    let out = pod.run(&["curl", "-s", "http://web"]);
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), (PAGE, "", Some(0)));
}

#[test]
fn curl_default_shows_the_progress_meter_on_stderr() {
    let mut pod = cluster(Pod::new(kubesim_os::registry::curl_image()));
    let out = pod.run(&["curl", "http://web"]);
    let n = PAGE.len();
    // 2 ms of virtual time (DNS 1 ms, TCP 1 ms): curl's bytes-per-second average.
    let s = n * 1000 / 2;
    let want = format!(
        "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n\r  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0\r100   {n}  100   {n}    0     0  {s:>5}      0 --:--:-- --:--:-- --:--:-- {s:>5}\n"
    );
    assert_eq!(out.stderr_str(), want);
}

#[test]
fn curl_errors_use_curl_exit_codes_and_messages() {
    let mut pod = cluster(Pod::new(kubesim_os::registry::curl_image()));
    let refused = pod.run(&["curl", "-sS", "http://web:81"]);
    assert_eq!((refused.stderr_str().as_str(), refused.code), ("curl: (7) Failed to connect to web port 81 after 2 ms: Couldn't connect to server\n", Some(7)));
    let quiet = pod.run(&["curl", "-s", "http://web:81"]);
    assert_eq!((quiet.stderr_str().as_str(), quiet.code), ("", Some(7)));
    let unresolved = pod.run(&["curl", "-sS", "http://nope"]);
    assert_eq!((unresolved.stderr_str().as_str(), unresolved.code), ("curl: (6) Could not resolve host: nope\n", Some(6)));
}

#[test]
fn curl_connect_timeout() {
    let mut pod = cluster(Pod::new(kubesim_os::registry::curl_image()));
    pod.os.net.insert(
        0,
        NetRule { matcher: NetMatch::Tcp("10.96.0.11".into(), 80), reply: kubesim_os::program::NetReply::Tcp(Err(NetError::TimedOut)), latency_ms: 0 },
    );
    let out = pod.run(&["curl", "-sS", "--connect-timeout", "5", "http://web"]);
    assert_eq!((out.stderr_str().as_str(), out.code), ("curl: (28) Connection timed out after 5001 milliseconds\n", Some(28)));
}

#[test]
fn curl_fail_on_http_errors_and_write_out_the_code() {
    let mut pod = cluster(Pod::new(kubesim_os::registry::curl_image()));
    pod.os = pod.os.clone().with_dns("api.default.svc.cluster.local", "10.96.0.20").with_tcp(
        "10.96.0.20",
        80,
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n\r\nbusy\n",
    );
    let f = pod.run(&["curl", "-fsS", "http://api/healthz"]);
    assert_eq!((f.stdout_str().as_str(), f.stderr_str().as_str(), f.code), ("", "curl: (22) The requested URL returned error: 503\n", Some(22)));
    let w = pod.run(&["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}\\n", "http://api/healthz"]);
    assert_eq!((w.stdout_str().as_str(), w.code), ("503\n", Some(0)));
    let i = pod.run(&["curl", "-si", "http://api/"]);
    assert_eq!(i.stdout_str(), "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n\r\nbusy\n");
}

#[test]
fn curl_sends_headers_method_and_data() {
    let mut pod = cluster(Pod::new(kubesim_os::registry::curl_image()));
    let _ = pod.run(&["curl", "-s", "-X", "PUT", "-H", "X-Token: abc", "-d", "a=1", "http://web/items"]);
    let sent =
        pod.os
            .calls
            .iter()
            .rev()
            .find_map(|c| if let Call::Net(NetCall::Tcp { send, .. }) = c { Some(String::from_utf8_lossy(send).into_owned()) } else { None });
    assert_eq!(
        sent.as_deref(),
        Some("PUT /items HTTP/1.1\r\nHost: web\r\nUser-Agent: curl/8.11.0\r\nAccept: */*\r\nX-Token: abc\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=1")
    );
}

#[test]
fn busybox_nslookup_queries_every_search_domain_for_a_dotless_name() {
    let mut pod = cluster(Pod::busybox());
    let out = pod.run(&["nslookup", "web"]);
    let want = "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\nName:\tweb.default.svc.cluster.local\nAddress: 10.96.0.11\n\n** server can't find web.svc.cluster.local: NXDOMAIN\n\n** server can't find web.cluster.local: NXDOMAIN\n\n\n** server can't find web.svc.cluster.local: NXDOMAIN\n\n** server can't find web.cluster.local: NXDOMAIN\n\n";
    assert_eq!((out.stdout_str().as_str(), out.code), (want, Some(1)));
}

#[test]
fn busybox_nslookup_does_not_search_names_with_a_dot() {
    let mut pod = cluster(Pod::busybox());
    pod.os = pod.os.clone().with_dns("kubernetes.default.svc.cluster.local", "10.96.0.1");
    let out = pod.run(&["nslookup", "kubernetes.default"]);
    let want = "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n** server can't find kubernetes.default: NXDOMAIN\n\n** server can't find kubernetes.default: NXDOMAIN\n\n";
    assert_eq!((out.stdout_str().as_str(), out.code), (want, Some(1)));
    let fq = pod.run(&["nslookup", "kubernetes.default.svc.cluster.local"]);
    let want = "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\nName:\tkubernetes.default.svc.cluster.local\nAddress: 10.96.0.1\n\n\n";
    assert_eq!((fq.stdout_str().as_str(), fq.code), (want, Some(0)));
}

#[test]
fn busybox_nslookup_with_no_reachable_server() {
    let mut pod = cluster(Pod::busybox());
    pod.os.net.insert(
        0,
        NetRule { matcher: NetMatch::DnsServer("10.96.0.10".into()), reply: kubesim_os::program::NetReply::Dns(Err(NetError::TimedOut)), latency_ms: 0 },
    );
    let out = pod.run(&["nslookup", "web.default.svc.cluster.local"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), (";; connection timed out; no servers could be reached\n\n", Some(1), 5_000));
}

#[test]
fn bind_nslookup_uses_the_search_list_and_prints_the_final_answer() {
    let mut img = kubesim_os::registry::debian_image();
    kubesim_os::registry::add_dnsutils(&mut img);
    let mut pod = cluster(Pod::new(img));
    pod.os = pod.os.clone().with_dns("kubernetes.default.svc.cluster.local", "10.96.0.1");
    let out = pod.run(&["nslookup", "kubernetes.default"]);
    let want = "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\nName:\tkubernetes.default.svc.cluster.local\nAddress: 10.96.0.1\n\n";
    assert_eq!((out.stdout_str().as_str(), out.code), (want, Some(0)));
    assert_eq!(
        dns_names(&out.calls),
        vec!["A kubernetes.default.default.svc.cluster.local.", "A kubernetes.default.svc.cluster.local.", "AAAA kubernetes.default.svc.cluster.local."]
    );
    let nx = pod.run(&["nslookup", "nope.example"]);
    assert_eq!(
        (nx.stdout_str().as_str(), nx.code),
        ("Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\n** server can't find nope.example: NXDOMAIN\n\n", Some(1))
    );
}

#[test]
fn dig_short_and_full_answers() {
    let mut img = kubesim_os::registry::debian_image();
    kubesim_os::registry::add_dnsutils(&mut img);
    let mut pod = cluster(Pod::new(img));
    let short = pod.run(&["dig", "+short", "web.default.svc.cluster.local"]);
    assert_eq!(short.stdout_str(), "10.96.0.11\n");
    let full = pod.run(&["dig", "web.default.svc.cluster.local"]);
    let text = full.stdout_str();
    assert!(text.contains(";; ANSWER SECTION:\nweb.default.svc.cluster.local. 30 IN\tA\t10.96.0.11\n"), "{text}");
    assert!(text.contains(";; QUESTION SECTION:\n;web.default.svc.cluster.local.\tIN\tA\n"), "{text}");
    assert!(text.contains("status: NOERROR"), "{text}");
    assert!(text.contains(";; SERVER: 10.96.0.10#53(10.96.0.10) (UDP)\n"), "{text}");
}

#[test]
fn nc_zero_io_port_check() {
    let mut pod = cluster(Pod::busybox());
    let open = pod.run(&["nc", "-zv", "web", "80"]);
    assert_eq!((open.stderr_str().as_str(), open.code), ("web (10.96.0.11:80) open\n", Some(0)));
    let closed = pod.run(&["nc", "-z", "web", "81"]);
    assert_eq!((closed.stderr_str().as_str(), closed.code), ("nc: can't connect to remote host (10.96.0.11): Connection refused\n", Some(1)));
    let sent = pod.run(&["sh", "-c", "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc web 80 | head -n 1"]);
    assert_eq!(sent.stdout_str(), "HTTP/1.1 200 OK\r\n");
}

#[test]
fn resolver_reads_hosts_first_and_honours_ndots() {
    let mut pod = cluster(Pod::busybox()).file("/etc/hosts", "127.0.0.1\tlocalhost\n10.244.1.5\tweb-0.nginx.default.svc.cluster.local\tweb-0\n");
    pod.os = pod.os.clone().with_tcp("10.244.1.5", 80, nginx_response().as_bytes());
    let out = pod.run(&["wget", "-q", "-O-", "http://web-0"]);
    assert_eq!((out.code, dns_names(&out.calls).len()), (Some(0), 0));
    // 5 dots ≥ ndots: tried as-is only (musl).
    let out = pod.run(&["wget", "-q", "-O-", "http://a.b.c.d.e.f"]);
    assert_eq!(dns_names(&out.calls), vec!["A a.b.c.d.e.f."]);
}

#[test]
fn glibc_tries_names_with_enough_dots_as_is_then_with_the_search_list() {
    let rc = kubesim_os::net::ResolvConf::parse("search ns.svc.cluster.local svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:2 timeout:1 attempts:3\n");
    assert_eq!((rc.ndots, rc.timeout_s, rc.attempts), (2, 1, 3));
    use kubesim_os::net::{candidates, Libc};
    assert_eq!(candidates("a.b.c", &rc, Libc::Glibc), vec!["a.b.c", "a.b.c.ns.svc.cluster.local", "a.b.c.svc.cluster.local"]);
    assert_eq!(candidates("a.b.c", &rc, Libc::Musl), vec!["a.b.c"]);
    assert_eq!(candidates("a.b", &rc, Libc::Glibc), vec!["a.b.ns.svc.cluster.local", "a.b.svc.cluster.local", "a.b"]);
    assert_eq!(candidates("a", &rc, Libc::Musl), vec!["a.ns.svc.cluster.local", "a.svc.cluster.local", "a"]);
    assert_eq!(candidates("a.", &rc, Libc::Glibc), vec!["a"]);
    let _ = DnsQuestion { name: "x.".into(), qtype: RType::A };
}

#[test]
fn a_shell_loop_around_nc_listen_serves_one_connection_per_iteration() {
    use kubesim_os::program::{Incoming, Outgoing, Step, Wake};
    use kubesim_os::Os;
    let mut os = kubesim_os::testing::FakeOs::new(kubesim_os::registry::busybox_image());
    let script = "while true; do printf 'HTTP/1.1 200 OK\\r\\n\\r\\nhello\\n' | nc -l -p 8080; done";
    let argv: Vec<String> = ["sh", "-c", script].iter().map(|s| s.to_string()).collect();
    let mut p = kubesim_os::registry::command(&argv, &kubesim_os::registry::default_env("p"), "/", Vec::new(), os.fs_ref()).expect("sh");
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(p.listening(), vec![(8080, false)]);
    for _ in 0..3 {
        let conn = Incoming { src: "10.244.0.9".into(), src_port: 40000, port: 8080, udp: false, data: b"GET / HTTP/1.1\r\n\r\n".to_vec() };
        assert_eq!(p.serve(&mut os, &conn), Some(Outgoing::Reply(b"HTTP/1.1 200 OK\r\n\r\nhello\n".to_vec())));
        assert_eq!(p.resume(&mut os, Wake::Timer), Step::Wait);
    }
    assert_eq!(String::from_utf8_lossy(&os.stdout), "GET / HTTP/1.1\r\n\r\n".repeat(3));
    let other = Incoming { src: "10.244.0.9".into(), src_port: 40001, port: 9090, udp: false, data: Vec::new() };
    assert_eq!(p.serve(&mut os, &other), None);
}

#[test]
fn for_loops_over_a_blocking_command_substitution_suspend() {
    let mut pod = cluster(Pod::busybox());
    pod.os = pod.os.clone().with_dns("list.default.svc.cluster.local", "10.96.0.30").with_tcp(
        "10.96.0.30",
        80,
        b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\na b c\n",
    );
    let out = pod.run(&["sh", "-c", "for x in $(wget -qO- http://list); do echo item $x; sleep 1; done"]);
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), ("item a\nitem b\nitem c\n", "", Some(0)));
}

#[test]
fn busybox_1_28_nslookup_prints_the_format_of_the_kubernetes_dns_debugging_page() {
    use kubesim_os::program::{DnsMessage, DnsRecord, NetReply};
    let mut pod = Pod::new(kubesim_os::registry::busybox_128_image()).cluster_dns("default");
    pod.os = pod.os.clone().with_dns("kubernetes.default.svc.cluster.local", "10.96.0.1");
    let ptr = |ip: &str, name: &str| NetRule {
        matcher: NetMatch::Dns(format!("{ip}.in-addr.arpa."), RType::Ptr),
        reply: NetReply::Dns(Ok(DnsMessage::answer(vec![DnsRecord { name: format!("{ip}.in-addr.arpa."), ttl: 30, rtype: RType::Ptr, data: name.into() }]))),
        latency_ms: 1,
    };
    pod.os.net.push(ptr("10.0.96.10", "kube-dns.kube-system.svc.cluster.local."));
    pod.os.net.push(ptr("1.0.96.10", "kubernetes.default.svc.cluster.local."));
    let out = pod.run(&["nslookup", "kubernetes.default"]);
    let want = "Server:    10.96.0.10\nAddress 1: 10.96.0.10 kube-dns.kube-system.svc.cluster.local\n\nName:      kubernetes.default\nAddress 1: 10.96.0.1 kubernetes.default.svc.cluster.local\n";
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), (want, "", Some(0)));
    let fail = pod.run(&["nslookup", "nope"]);
    assert_eq!((fail.stderr_str().as_str(), fail.code), ("nslookup: can't resolve 'nope'\n", Some(1)));
}

#[test]
fn getent_hosts_prints_glibc_lines_from_etc_hosts_and_dns() {
    // glibc 2.36 `getent` (Debian 12): `%-15s %s` + aliases; IPv6 lines of /etc/hosts first;
    // exit 2 for a name that does not resolve; usage errors exit 1.
    let hosts = kubesim_os::registry::kubelet_hosts_file(&["10.244.1.5"], "web-0", Some("web.default.svc.cluster.local"), &[]);
    let mut pod = cluster(Pod::debian()).file("/etc/hosts", &hosts);
    let cases: &[(&[&str], &str, &str, i32)] = &[
        (&["getent", "hosts", "web"], "10.96.0.11      web.default.svc.cluster.local\n", "", 0),
        (&["getent", "hosts", "web-0"], "10.244.1.5      web-0.web.default.svc.cluster.local web-0\n", "", 0),
        (&["getent", "hosts", "localhost"], "::1             localhost ip6-localhost ip6-loopback\n", "", 0),
        (&["getent", "ahostsv4", "localhost"], "127.0.0.1       STREAM localhost\n127.0.0.1       DGRAM  \n127.0.0.1       RAW    \n", "", 0),
        (&["getent", "hosts", "nope"], "", "", 2),
        (&["getent", "passwd", "root"], "root:x:0:0:root:/root:/bin/bash\n", "", 0),
        (&["getent", "group", "0"], "root:x:0:\n", "", 0),
        (&["getent"], "", "getent: wrong number of arguments\nTry `getent --help' or `getent --usage' for more information.\n", 1),
        (&["getent", "foo", "x"], "", "Unknown database: foo\nTry `getent --help' or `getent --usage' for more information.\n", 1),
    ];
    for (argv, out_want, err_want, code) in cases {
        let out = pod.run(argv);
        assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), (*out_want, *err_want, Some(*code)), "{argv:?}");
    }
}

/// busybox `ip addr` (networking/libiproute/ipaddress.c): the link line (a veth's peer as
/// `@ifN`, marked M-DOWN since it lives in another namespace), then each address with its
/// scope, label and lifetimes; `-4` leaves out the link and IPv6 lines; a missing device fails.
#[test]
fn busybox_ip_addr_lists_loopback_and_the_pods_veth() {
    use kubesim_os::net::iface::Interface;
    let mut pod = Pod::busybox();
    pod.os.interfaces = vec![Interface::loopback(), Interface::veth(2, 7, "10.244.1.3", 24, [0x6e, 0x58, 0x06, 0x2f, 0x2d, 0xb1], 1500)];
    let out = pod.run(&["ip", "addr"]);
    assert_eq!(
        out.stdout_str(),
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue \n    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n    inet 127.0.0.1/8 scope host lo\n       valid_lft forever preferred_lft forever\n    inet6 ::1/128 scope host \n       valid_lft forever preferred_lft forever\n2: eth0@if7: <BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN> mtu 1500 qdisc noqueue \n    link/ether 6e:58:06:2f:2d:b1 brd ff:ff:ff:ff:ff:ff\n    inet 10.244.1.3/24 brd 10.244.1.255 scope global eth0\n       valid_lft forever preferred_lft forever\n    inet6 fe80::6c58:6ff:fe2f:2db1/64 scope link \n       valid_lft forever preferred_lft forever\n"
    );
    let v4 = pod.run(&["ip", "-4", "a", "show", "dev", "eth0"]);
    assert_eq!(v4.stdout_str(), "2: eth0@if7: <BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN> mtu 1500 qdisc noqueue \n    inet 10.244.1.3/24 brd 10.244.1.255 scope global eth0\n       valid_lft forever preferred_lft forever\n");
    let missing = pod.run(&["ip", "addr", "show", "eth1"]);
    assert_eq!((missing.stderr_str().as_str(), missing.code), ("ip: can't find device 'eth1'\n", Some(1)));
}
