mod support;

use kubesim_os::program::{Signal, Step, Wake};
use kubesim_os::testing::{run, Call};
use support::*;

const WELCOME_HEADERS: &str = "HTTP/1.1 200 OK\r\nServer: nginx/1.25.3\r\nDate: Tue, 01 Dec 2026 09:04:57 GMT\r\nContent-Type: text/html\r\nContent-Length: 615\r\nLast-Modified: Mon, 30 Nov 2026 00:53:20 GMT\r\nConnection: close\r\nETag: \"6b0cc900-267\"\r\nAccept-Ranges: bytes\r\n\r\n";

#[test]
fn the_nginx_1_25_image_runs_its_entrypoint_scripts_then_logs_startup_notices() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", None);
    assert_eq!(spawn.argv, ["/docker-entrypoint.sh", "nginx", "-g", "daemon off;"]);
    let mut p = start(&os, &spawn);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(
        text(&os.stdout),
        "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration\n\
/docker-entrypoint.sh: Looking for shell scripts in /docker-entrypoint.d/\n\
/docker-entrypoint.sh: Launching /docker-entrypoint.d/10-listen-on-ipv6-by-default.sh\n\
10-listen-on-ipv6-by-default.sh: info: IPv6 listen already enabled\n\
/docker-entrypoint.sh: Sourcing /docker-entrypoint.d/15-local-resolvers.envsh\n\
/docker-entrypoint.sh: Launching /docker-entrypoint.d/20-envsubst-on-templates.sh\n\
/docker-entrypoint.sh: Launching /docker-entrypoint.d/30-tune-worker-processes.sh\n\
/docker-entrypoint.sh: Configuration complete; ready for start up\n"
    );
    assert_eq!(
        text(&os.stderr),
        "2026/12/01 09:04:57 [notice] 1#1: using the \"epoll\" event method\n\
2026/12/01 09:04:57 [notice] 1#1: nginx/1.25.3\n\
2026/12/01 09:04:57 [notice] 1#1: built by gcc 12.2.0 (Debian 12.2.0-14) \n\
2026/12/01 09:04:57 [notice] 1#1: OS: Linux 6.8.0-kubesim\n\
2026/12/01 09:04:57 [notice] 1#1: getrlimit(RLIMIT_NOFILE): 1048576:1048576\n\
2026/12/01 09:04:57 [notice] 1#1: start worker processes\n\
2026/12/01 09:04:57 [notice] 1#1: start worker process 7\n\
2026/12/01 09:04:57 [notice] 1#1: start worker process 8\n"
    );
    assert_eq!(p.listening(), vec![(80, false)]);
    assert_eq!(os.fs.root.read_path("/var/run/nginx.pid"), Some(&b"1\n"[..]));
    let mem = p.memory_bytes();
    assert!((2 << 20..16 << 20).contains(&mem), "{mem}");
}

#[test]
fn nginx_serves_the_615_byte_welcome_page_byte_for_byte_and_logs_the_access() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    os.stdout.clear();
    let r = send(&mut p, &mut os, 80, &wget_request("10.244.0.6", "/"));
    let page = os.fs.root.read_path("/usr/share/nginx/html/index.html").unwrap().to_vec();
    assert_eq!(page.len(), 615);
    let mut want = WELCOME_HEADERS.as_bytes().to_vec();
    want.extend_from_slice(&page);
    assert_eq!(text(&r), text(&want));
    assert_eq!(text(&os.stdout), "10.244.0.5 - - [01/Dec/2026:09:04:57 +0000] \"GET / HTTP/1.1\" 200 615 \"-\" \"Wget\" \"-\"\n");
    // curl keeps the connection alive.
    let r = send(&mut p, &mut os, 80, &curl_request("10.244.0.6", "/index.html"));
    assert!(text(&r).contains("\r\nConnection: keep-alive\r\n"), "{}", text(&r));
    // The CPU of the two requests is owed to the host.
    assert_eq!(p.resume(&mut os, Wake::Timer), Step::Wait);
}

#[test]
fn nginx_answers_404_with_its_153_byte_page_and_an_error_log_line() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    os.stdout.clear();
    os.stderr.clear();
    let r = send(&mut p, &mut os, 80, &curl_request("web", "/nope"));
    assert_eq!(
        text(&r),
        "HTTP/1.1 404 Not Found\r\nServer: nginx/1.25.3\r\nDate: Tue, 01 Dec 2026 09:04:57 GMT\r\nContent-Type: text/html\r\nContent-Length: 153\r\nConnection: keep-alive\r\n\r\n<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
    );
    assert_eq!(text(&os.stderr), "2026/12/01 09:04:57 [error] 7#7: *1 open() \"/usr/share/nginx/html/nope\" failed (2: No such file or directory), client: 10.244.0.5, server: localhost, request: \"GET /nope HTTP/1.1\", host: \"web\"\n");
    assert_eq!(text(&os.stdout), "10.244.0.5 - - [01/Dec/2026:09:04:57 +0000] \"GET /nope HTTP/1.1\" 404 153 \"-\" \"curl/8.5.0\" \"-\"\n");
}

#[test]
fn head_requests_get_headers_only_and_log_zero_bytes() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    os.stdout.clear();
    let r = send(&mut p, &mut os, 80, b"HEAD / HTTP/1.1\r\nHost: 10.244.0.6\r\nUser-Agent: Wget\r\nConnection: close\r\n\r\n");
    assert_eq!(text(&r), WELCOME_HEADERS);
    assert!(text(&os.stdout).contains("\"HEAD / HTTP/1.1\" 200 0 "));
}

#[test]
fn nginx_1_14_2_has_no_entrypoint_no_startup_notices_and_the_old_pages() {
    let (mut os, spawn) = image("nginx:1.14.2", "web-0", None);
    assert_eq!(spawn.argv, ["nginx", "-g", "daemon off;"]);
    let mut p = start(&os, &spawn);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(text(&os.stdout), "");
    assert_eq!(text(&os.stderr), "");
    assert_eq!(os.fs.root.read_path("/var/run/nginx.pid"), Some(&b"1\n"[..]));
    let r = send(&mut p, &mut os, 80, &curl_request("web", "/"));
    let t = text(&r);
    assert!(t.starts_with("HTTP/1.1 200 OK\r\nServer: nginx/1.14.2\r\n"), "{t}");
    assert!(t.contains("Content-Length: 612\r\n"));
    let r = send(&mut p, &mut os, 80, &curl_request("web", "/x"));
    let t = text(&r);
    assert!(t.contains("Content-Length: 169\r\n"), "{t}");
    assert!(t.contains("<body bgcolor=\"white\">"));
}

#[test]
fn sigquit_shuts_nginx_down_gracefully_with_exit_code_0() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    os.stderr.clear();
    os.now_ms = 5_000;
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Quit)), Step::Exit(0));
    assert_eq!(
        text(&os.stderr),
        "2026/12/01 09:05:02 [notice] 1#1: signal 3 (SIGQUIT) received, shutting down\n\
2026/12/01 09:05:02 [notice] 7#7: gracefully shutting down\n\
2026/12/01 09:05:02 [notice] 7#7: exiting\n\
2026/12/01 09:05:02 [notice] 7#7: exit\n\
2026/12/01 09:05:02 [notice] 8#8: gracefully shutting down\n\
2026/12/01 09:05:02 [notice] 8#8: exiting\n\
2026/12/01 09:05:02 [notice] 8#8: exit\n\
2026/12/01 09:05:02 [notice] 1#1: signal 17 (SIGCHLD) received from 7\n\
2026/12/01 09:05:02 [notice] 1#1: worker process 7 exited with code 0\n\
2026/12/01 09:05:02 [notice] 1#1: signal 17 (SIGCHLD) received from 8\n\
2026/12/01 09:05:02 [notice] 1#1: worker process 8 exited with code 0\n\
2026/12/01 09:05:02 [notice] 1#1: exit\n"
    );
}

#[test]
fn sigterm_stops_nginx_fast_with_exit_code_0() {
    let (mut os, spawn) = image("nginx:1.14.2", "web-0", None);
    let os2 = os.clone().with_signal(3_000, Signal::Term);
    os = os2;
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.code, Some(0));
    assert_eq!(out.elapsed_ms, 3_000);
}

#[test]
fn nginx_dash_t_and_dash_v_print_to_stderr() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", Some(&["nginx", "-t"]));
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(
        (out.code, out.stderr_str().as_str()),
        (Some(0), "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\nnginx: configuration file /etc/nginx/nginx.conf test is successful\n")
    );
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", Some(&["nginx", "-v"]));
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!((out.code, out.stderr_str().as_str(), out.stdout_str().as_str()), (Some(0), "nginx version: nginx/1.25.3\n", ""));
}

#[test]
fn a_broken_config_makes_nginx_exit_1_with_both_emerg_lines() {
    let (os, spawn) = image("nginx:1.25.3", "web-0", Some(&["nginx", "-g", "daemon off;"]));
    let mut os = os.with_file("/etc/nginx/conf.d/default.conf", b"server {\n    listen 80;\n    lisen 81;\n}\n");
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr_str(),
        "2026/12/01 09:04:57 [emerg] 1#1: unknown directive \"lisen\" in /etc/nginx/conf.d/default.conf:3\nnginx: [emerg] unknown directive \"lisen\" in /etc/nginx/conf.d/default.conf:3\n"
    );
    let (os, spawn) = image("nginx:1.25.3", "web-0", Some(&["nginx", "-t"]));
    let mut os = os.with_file("/etc/nginx/conf.d/default.conf", b"server {\n    listen 80;\n");
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr_str(),
        "nginx: [emerg] unexpected end of file, expecting \"}\" in /etc/nginx/conf.d/default.conf:2\nnginx: configuration file /etc/nginx/nginx.conf test failed\n"
    );
}

#[test]
fn nginx_dash_s_reload_signals_the_master_named_in_the_pid_file() {
    let (os, spawn) = image("nginx:1.25.3", "web-0", Some(&["nginx", "-s", "reload"]));
    let mut os = os.with_file("/var/run/nginx.pid", b"1\n");
    os.pid = 42;
    os.processes.push(kubesim_os::program::ProcessInfo {
        pid: 1,
        ppid: 0,
        uid: 0,
        cpu_ms: 0,
        cmdline: "nginx: master process nginx -g daemon off;".into(),
        rss_bytes: 0,
        state: 'S',
    });
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.code, Some(0));
    assert!(out.calls.contains(&Call::Kill(1, Some(Signal::Hup))), "{:?}", out.calls);
    assert_eq!(out.stderr_str(), "2026/12/01 09:04:57 [notice] 42#42: signal process started\n");
    // No master: the pid file is missing.
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", Some(&["nginx", "-s", "quit"]));
    os.pid = 42;
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr_str().ends_with("[error] 42#42: open() \"/var/run/nginx.pid\" failed (2: No such file or directory)\n"), "{}", out.stderr_str());
    assert!(out.stderr_str().contains("open() \"/var/run/nginx.pid\""));
}

#[test]
fn sighup_reloads_a_changed_configuration() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    os.fs.root.add_file("/etc/nginx/conf.d/default.conf", "server { listen 8080; location / { return 200 'reloaded\\n'; } }\n", 0o644);
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Hup)), Step::Wait);
    assert_eq!(p.listening(), vec![(8080, false)]);
    let r = send(&mut p, &mut os, 8080, &curl_request("web", "/"));
    assert!(text(&r).ends_with("\r\nContent-Type: application/octet-stream\r\nContent-Length: 9\r\nConnection: keep-alive\r\n\r\nreloaded\n"), "{}", text(&r));
    assert!(text(&os.stderr).contains("[notice] 1#1: signal 1 (SIGHUP) received, reconfiguring\n"));
}

// Configuration loads are remembered per thread and reused while every file a load read
// answers the same: a second replica reuses the first's, and a file added to conf.d (a new
// directory listing), then a broken main file, are seen on reload all the same.
#[test]
fn remembered_configuration_loads_follow_changed_files() {
    let (mut first, spawn) = image("nginx:1.25.3", "web-0", None);
    let mut p0 = start(&first, &spawn);
    p0.resume(&mut first, Wake::Start);
    let (mut os, spawn) = image("nginx:1.25.3", "web-1", None);
    let mut p = start(&os, &spawn);
    p.resume(&mut os, Wake::Start);
    assert_eq!(p.listening(), vec![(80, false)]);
    os.fs.root.add_file("/etc/nginx/conf.d/extra.conf", "server { listen 8081; location / { return 200 'extra\\n'; } }\n", 0o644);
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Hup)), Step::Wait);
    assert_eq!(p.listening(), vec![(80, false), (8081, false)]);
    os.fs.root.add_file("/etc/nginx/nginx.conf", "events {}\nhttp { server { listen 9090; } \n", 0o644);
    os.stderr.clear();
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Hup)), Step::Wait);
    assert_eq!(p.listening(), vec![(80, false), (8081, false)], "a broken configuration keeps the old one");
    assert!(text(&os.stderr).contains("[emerg]"), "{}", text(&os.stderr));
    // The first replica's files are unchanged: it reloads into its own configuration.
    assert_eq!(p0.resume(&mut first, Wake::Signal(Signal::Hup)), Step::Wait);
    assert_eq!(p0.listening(), vec![(80, false)]);
}

#[test]
fn locations_try_files_error_pages_redirects_and_forbidden_directories() {
    let (os, spawn) = image("nginx:1.25.3", "web-0", Some(&["nginx", "-g", "daemon off;"]));
    let conf = "server {\n  listen 80;\n  server_name app;\n  root /srv;\n  index index.html;\n  error_page 404 /404.html;\n  location = /healthz { return 200 \"ok\"; }\n  location /old { return 301 /new; }\n  location /spa/ { try_files $uri $uri/ /spa/index.html; }\n  location ~* \\.txt$ { default_type text/plain; }\n}\n";
    let mut os = os
        .with_file("/etc/nginx/conf.d/default.conf", conf.as_bytes())
        .with_file("/srv/404.html", b"custom 404\n")
        .with_file("/srv/spa/index.html", b"spa\n")
        .with_file("/srv/notes.TXT", b"hello\n")
        .with_file("/srv/empty/.keep", b"");
    let mut p = start(&os, &spawn);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    let get = |p: &mut Box<dyn kubesim_os::Program>, os: &mut kubesim_os::testing::FakeOs, path: &str| text(&send(p, os, 80, &curl_request("app", path)));
    assert!(get(&mut p, &mut os, "/healthz").ends_with("Content-Length: 2\r\nConnection: keep-alive\r\n\r\nok"));
    let r = get(&mut p, &mut os, "/old");
    assert!(r.starts_with("HTTP/1.1 301 Moved Permanently\r\n") && r.contains("\r\nLocation: http://app/new\r\nConnection: keep-alive\r\n"), "{r}");
    assert!(get(&mut p, &mut os, "/spa/deep/link").ends_with("\r\n\r\nspa\n"));
    let r = get(&mut p, &mut os, "/missing");
    assert!(r.starts_with("HTTP/1.1 404 Not Found\r\n") && r.ends_with("\r\n\r\ncustom 404\n"), "{r}");
    let r = get(&mut p, &mut os, "/empty/");
    assert!(r.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{r}");
    assert!(text(&os.stderr)
        .contains("directory index of \"/srv/empty/\" is forbidden, client: 10.244.0.5, server: app, request: \"GET /empty/ HTTP/1.1\", host: \"app\"\n"));
    let r = get(&mut p, &mut os, "/empty");
    assert!(r.starts_with("HTTP/1.1 301 Moved Permanently\r\n") && r.contains("Location: http://app/empty/\r\n"), "{r}");
    let r = get(&mut p, &mut os, "/notes.TXT");
    assert!(r.contains("Content-Type: text/plain\r\n"), "{r}");
    let r = text(&send(&mut p, &mut os, 80, b"POST / HTTP/1.1\r\nHost: app\r\nContent-Length: 0\r\n\r\n"));
    assert!(r.starts_with("HTTP/1.1 405 Not Allowed\r\n"), "{r}");
    let r = text(&send(&mut p, &mut os, 80, b"garbage\r\n\r\n"));
    assert!(r.starts_with("HTTP/1.1 400 Bad Request\r\n") && r.contains("Connection: close\r\n"), "{r}");
}

#[test]
fn plain_nginx_without_daemon_off_forks_away_and_the_container_exits_0() {
    let (mut os, spawn) = image("nginx:1.25.3", "web-0", Some(&["nginx"]));
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.code, Some(0));
}

#[test]
fn envsubst_templates_are_rendered_into_conf_d() {
    let (os, mut spawn) = image("nginx:1.25.3", "web-0", None);
    spawn.env.insert("BACKEND_PORT".into(), "9090".into());
    let mut os = os.with_file("/etc/nginx/templates/default.conf.template", b"server { listen ${BACKEND_PORT}; location / { return 200 \"$host\"; } }\n");
    let mut p = start(&os, &spawn);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert!(text(&os.stdout)
        .contains("20-envsubst-on-templates.sh: Running envsubst on /etc/nginx/templates/default.conf.template to /etc/nginx/conf.d/default.conf\n"));
    assert_eq!(p.listening(), vec![(9090, false)]);
    let r = text(&send(&mut p, &mut os, 9090, &curl_request("myhost:9090", "/")));
    assert!(r.ends_with("\r\n\r\nmyhost"), "{r}");
}
