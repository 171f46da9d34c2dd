mod support;

use kubesim_os::program::{Program, Signal, Step, Wake};
use kubesim_os::testing::run;
use support::*;

fn body(r: &[u8]) -> String {
    text(r).split_once("\r\n\r\n").map(|x| x.1.to_string()).unwrap_or_default()
}

#[test]
fn hello_app_2_0_says_its_version_and_hostname_and_logs_the_request() {
    let (mut os, spawn) = image("gcr.io/google-samples/hello-app:2.0", "web-79d88c97d6-x7k2p", None);
    let mut p = kubesim_programs::program_for_image("hello-app", &spawn, "gcr.io/google-samples/hello-app:2.0").unwrap();
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(p.listening(), vec![(8080, false)]);
    let r = send(&mut p, &mut os, 8080, &curl_request("10.96.0.15:8080", "/"));
    assert_eq!(text(&r), "HTTP/1.1 200 OK\r\nDate: Tue, 01 Dec 2026 09:04:57 GMT\r\nContent-Length: 60\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello, world!\nVersion: 2.0.0\nHostname: web-79d88c97d6-x7k2p\n");
    assert_eq!(text(&os.stderr), "2026/12/01 09:04:57 Server listening on port 8080\n2026/12/01 09:04:57 Serving request: /\n");
    // A Go binary as PID 1.
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Term)), Step::Exit(2));
    let mut p1 = kubesim_programs::program_for("hello-app", &spawn).unwrap();
    p1.resume(&mut os, Wake::Start);
    assert!(body(&send(&mut p1, &mut os, 8080, &curl_request("x", "/"))).contains("Version: 1.0.0\n"));
}

#[test]
fn kubernetes_bootcamp_runs_through_node_server_js_and_answers_v_1() {
    let (mut os, spawn) = image("gcr.io/google-samples/kubernetes-bootcamp:v1", "kubernetes-bootcamp-765bf4c7b4-9lrzg", None);
    assert_eq!(spawn.argv, ["/bin/sh", "-c", "node server.js"]);
    let mut node = spawn.clone();
    node.argv = vec!["node".into(), "server.js".into()];
    node.path = "/usr/local/bin/node".into();
    let mut p = kubesim_programs::program_for_image("node", &node, "gcr.io/google-samples/kubernetes-bootcamp:v1").unwrap();
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(text(&os.stdout), "Kubernetes Bootcamp App Started At: 2026-12-01T09:04:57.000Z | Running On:  kubernetes-bootcamp-765bf4c7b4-9lrzg \n\n");
    os.now_ms += 12_500;
    let r = send(&mut p, &mut os, 8080, &curl_request("10.96.0.20:8080", "/"));
    assert_eq!(text(&r), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: Tue, 01 Dec 2026 09:05:09 GMT\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n29\r\nHello Kubernetes bootcamp! | Running on: \r\n24\r\nkubernetes-bootcamp-765bf4c7b4-9lrzg\r\n7\r\n | v=1\n\r\n0\r\n\r\n");
    assert!(
        text(&os.stdout).ends_with(
            "Running On: kubernetes-bootcamp-765bf4c7b4-9lrzg | Total Requests: 1 | App Uptime: 12.5 seconds | Log Time: 2026-12-01T09:05:09.500Z\n"
        ),
        "{}",
        text(&os.stdout)
    );
    let mut p2 = kubesim_programs::program_for_image("kubernetes-bootcamp", &spawn, "docker.io/jocatalin/kubernetes-bootcamp:v2").unwrap();
    p2.resume(&mut os, Wake::Start);
    assert!(text(&send(&mut p2, &mut os, 8080, &curl_request("x", "/"))).contains(" | v=2\n"));
}

#[test]
fn echoserver_1_10_echoes_the_request_in_its_page_format() {
    let (mut os, spawn) = image("registry.k8s.io/echoserver:1.10", "source-ip-app-7c5c5d6f4f-abcde", None);
    let mut p = kubesim_programs::program_for_image("echoserver", &spawn, "registry.k8s.io/echoserver:1.10").unwrap();
    p.resume(&mut os, Wake::Start);
    assert_eq!(p.listening(), vec![(8080, false), (8443, false)]);
    let r = send_from(&mut p, &mut os, "10.244.3.8", 8080, &curl_request("10.0.170.92:8080", "/"));
    let t = text(&r);
    assert!(t.starts_with("HTTP/1.1 200 OK\r\nServer: nginx/1.13.3\r\n"), "{t}");
    let page = kubesim_os::net::http::Response::parse(&r).unwrap().body;
    assert_eq!(text(&page), "\n\nHostname: source-ip-app-7c5c5d6f4f-abcde\n\nPod Information:\n\t-no pod information available-\n\nServer values:\n\tserver_version=nginx: 1.13.3 - lua: 10008\n\nRequest Information:\n\tclient_address=10.244.3.8\n\tmethod=GET\n\treal path=/\n\tquery=\n\trequest_version=1.1\n\trequest_scheme=http\n\trequest_uri=http://10.0.170.92:8080/\n\nRequest Headers:\n\taccept=*/*\t\n\thost=10.0.170.92:8080\t\n\tuser-agent=curl/8.5.0\t\n\nRequest Body:\n\t-no body in request-\n\n");
}

#[test]
fn the_pause_container_waits_and_exits_0_on_sigterm() {
    let (os, spawn) = image("registry.k8s.io/pause:3.10", "pod", None);
    let mut os = os.with_signal(30_000, Signal::Term);
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!((out.code, out.elapsed_ms, out.stderr_str().as_str()), (Some(0), 30_000, "Shutting down, got signal: Terminated\n"));
}

#[test]
fn goproxy_listens_on_8080_for_tcp_probes() {
    let (mut os, spawn) = image("registry.k8s.io/goproxy:0.1", "goproxy", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    assert_eq!(p.listening(), vec![(8080, false)]);
    assert_eq!(send(&mut p, &mut os, 8080, b""), b"".to_vec());
    assert!(text(&send(&mut p, &mut os, 8080, &curl_request("x", "/"))).starts_with("HTTP/1.1 500 Internal Server Error\r\n"));
}

#[test]
fn the_generic_server_answers_on_its_declared_ports() {
    let mut os = kubesim_os::testing::FakeOs::new(kubesim_os::registry::debian_image()).with_hostname("myapp-0");
    let mut p = kubesim_programs::generic_server(&[(3000, false)]);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(text(&os.stdout), "kubesim generic server: listening on 3000/tcp\n");
    assert_eq!(p.listening(), vec![(3000, false)]);
    let r = text(&send(&mut p, &mut os, 3000, &curl_request("x", "/")));
    assert!(r.starts_with("HTTP/1.1 200 OK\r\nServer: kubesim-generic\r\n") && r.contains("<h1>myapp-0</h1>"), "{r}");
    assert!(send(&mut p, &mut os, 80, &curl_request("x", "/")).is_empty());
    // Unhandled TERM as PID 1 is ignored.
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Term)), Step::Wait);
}

#[test]
fn daemons_print_banners_and_listen_on_their_ports() {
    for (img, imp, port) in [
        ("postgres:16", "postgres-entrypoint", 5432),
        ("memcached:1.6", "memcached", 11211),
        ("mongo:8.0", "mongo-entrypoint", 27017),
        ("rabbitmq:3", "rabbitmq-entrypoint", 5672),
    ] {
        let (mut os, mut spawn) = image(img, "d", None);
        spawn.env.insert("POSTGRES_PASSWORD".into(), "pw".into());
        let mut p = kubesim_programs::program_for(imp, &spawn).unwrap();
        let s = settle(&mut p, &mut os, Wake::Start, 60_000);
        assert_eq!(s, Step::Wait, "{img}: {}", text(&os.stderr));
        assert!(p.listening().contains(&(port, false)), "{img}: {:?}", p.listening());
        assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Term)), Step::Exit(0), "{img}");
    }
    let (mut os, spawn) = image("memcached:1.6", "m", None);
    let mut p = kubesim_programs::program_for("memcached", &spawn).unwrap();
    p.resume(&mut os, Wake::Start);
    assert_eq!(text(&send(&mut p, &mut os, 11211, b"set k 0 0 1\r\nv\r\nget k\r\n")), "STORED\r\nVALUE k 0 1\r\nv\r\nEND\r\n");
}

#[test]
fn postgres_refuses_to_initialise_without_a_password() {
    let (mut os, spawn) = image("postgres:16", "pg", None);
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr_str().starts_with("Error: Database is uninitialized and superuser password is not specified.\n"));
}

#[test]
fn cassandra_starts_slowly_and_nodetool_status_shows_it_up_normal() {
    let (mut os, mut spawn) = image("gcr.io/google-samples/cassandra:v13", "cassandra-0", None);
    spawn.env.insert("POD_IP".into(), "10.244.1.9".into());
    spawn.env.insert("CASSANDRA_DC".into(), "DC1-K8Demo".into());
    spawn.env.insert("CASSANDRA_RACK".into(), "Rack1-K8Demo".into());
    let mut srv = kubesim_programs::program_for("cassandra-run", &spawn).unwrap();
    assert_eq!(settle(&mut srv, &mut os, Wake::Start, 120_000), Step::Wait);
    assert!(os.now_ms >= 25_000);
    assert!(text(&os.stdout).contains("Starting listening for CQL clients on /0.0.0.0:9042 (unencrypted)...\n"));
    let conn = kubesim_os::program::Incoming { src: "127.0.0.1".into(), src_port: 1, port: 7199, udp: false, data: b"KUBESIM-NODETOOL status".to_vec() };
    let Some(kubesim_os::program::Outgoing::Reply(r)) = srv.serve(&mut os, &conn) else { panic!() };
    assert_eq!(text(&r), "Datacenter: DC1-K8Demo\n======================\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n--  Address     Load       Tokens       Owns (effective)  Host ID                               Rack\nUN  10.244.1.9  103.96 KiB  32           100.0%            2ec2e0b8-5a5e-4c5a-9e8c-3d6a52d4b9c1  Rack1-K8Demo\n\n");
}

#[test]
fn clones_have_identical_futures() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    let mut q: Box<dyn Program> = p.clone();
    let mut os2 = os.clone();
    let a = send(&mut p, &mut os, 80, &curl_request("x", "/"));
    let b = send(&mut q, &mut os2, 80, &curl_request("x", "/"));
    assert_eq!(a, b);
    assert_eq!(os.stdout, os2.stdout);
}
