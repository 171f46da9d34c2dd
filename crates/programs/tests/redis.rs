mod support;

use kubesim_os::program::{Signal, Step, Wake};
use kubesim_os::testing::{run, Call, FakeOs};
use support::*;

fn resp(args: &[&str]) -> Vec<u8> {
    let mut s = format!("*{}\r\n", args.len());
    for a in args {
        s.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.into_bytes()
}

fn server(reference: &str, args: &[&str], host: &str) -> (FakeOs, Box<dyn kubesim_os::Program>) {
    let (mut os, mut spawn) = image(reference, host, None);
    spawn.argv.extend(args.iter().map(|s| s.to_string()));
    os.fs.root.add_dir("/data", 0o755);
    let p = start(&os, &spawn);
    (os, p)
}

#[test]
fn the_configmap_tutorials_redis_5_reads_its_config_file_and_reports_maxmemory() {
    let (mut os, mut p) = server("redis:5.0.14", &["/usr/local/etc/redis/redis.conf"], "redis");
    os.fs.root.add_file("/usr/local/etc/redis/redis.conf", "maxmemory 2mb\nmaxmemory-policy allkeys-lru\n", 0o644);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(
        text(&os.stdout),
        "1:C 01 Dec 2026 09:04:57.000 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo\n\
1:C 01 Dec 2026 09:04:57.000 # Redis version=5.0.14, bits=64, commit=00000000, modified=0, pid=1, just started\n\
1:C 01 Dec 2026 09:04:57.000 # Configuration loaded\n\
1:M 01 Dec 2026 09:04:57.000 * Running mode=standalone, port=6379.\n\
1:M 01 Dec 2026 09:04:57.000 # Server initialized\n\
1:M 01 Dec 2026 09:04:57.000 * Ready to accept connections\n"
    );
    assert_eq!(p.listening(), vec![(6379, false)]);
    let r = send(&mut p, &mut os, 6379, &resp(&["CONFIG", "GET", "maxmemory"]));
    assert_eq!(text(&r), "*2\r\n$9\r\nmaxmemory\r\n$7\r\n2097152\r\n");
    let r = send(&mut p, &mut os, 6379, &resp(&["CONFIG", "GET", "maxmemory-policy"]));
    assert_eq!(text(&r), "*2\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n");
}

#[test]
fn redis_7_2_logs_its_newer_banner_without_a_config_file() {
    let (mut os, mut p) = server("redis:7.2.4", &[], "redis");
    p.resume(&mut os, Wake::Start);
    let out = text(&os.stdout);
    assert!(out.starts_with("1:C 01 Dec 2026 09:04:57.000 * oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo\n1:C 01 Dec 2026 09:04:57.000 * Redis version=7.2.4, bits=64, commit=00000000, modified=0, pid=1, just started\n1:C 01 Dec 2026 09:04:57.000 # Warning: no config file specified, using the default config. In order to specify a config file use redis-server /path/to/redis.conf\n1:M 01 Dec 2026 09:04:57.000 * monotonic clock: POSIX clock_gettime\n"), "{out}");
    assert!(out.ends_with("* Ready to accept connections tcp\n"));
}

#[test]
fn resp_round_trips_set_get_incr_del_keys_and_pipelines() {
    let (mut os, mut p) = server("redis:6.0.5", &[], "redis-leader");
    p.resume(&mut os, Wake::Start);
    let mut req = resp(&["SET", "messages", ",hello"]);
    req.extend(resp(&["GET", "messages"]));
    req.extend(resp(&["INCR", "n"]));
    req.extend(resp(&["INCR", "n"]));
    req.extend(resp(&["EXISTS", "n", "x"]));
    req.extend(resp(&["KEYS", "*"]));
    req.extend(resp(&["DEL", "n"]));
    req.extend(resp(&["GET", "n"]));
    req.extend(b"PING\r\n");
    req.extend(resp(&["INCR", "messages"]));
    req.extend(resp(&["FOO", "bar"]));
    let r = send(&mut p, &mut os, 6379, &req);
    assert_eq!(
        text(&r),
        "+OK\r\n$6\r\n,hello\r\n:1\r\n:2\r\n:1\r\n*2\r\n$8\r\nmessages\r\n$1\r\nn\r\n:1\r\n$-1\r\n+PONG\r\n-ERR value is not an integer or out of range\r\n-ERR unknown command 'FOO', with args beginning with: 'bar'\r\n"
    );
    assert!(p.memory_bytes() > 3 << 20);
}

#[test]
fn sigterm_saves_the_rdb_and_exits_0_and_a_restart_loads_it() {
    let (mut os, mut p) = server("redis:7.2.4", &[], "redis");
    p.resume(&mut os, Wake::Start);
    send(&mut p, &mut os, 6379, &resp(&["SET", "k", "v"]));
    os.stdout.clear();
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Term)), Step::Exit(0));
    assert_eq!(
        text(&os.stdout),
        "1:signal-handler (1796115897) Received SIGTERM scheduling shutdown...\n\
1:M 01 Dec 2026 09:04:57.000 * User requested shutdown...\n\
1:M 01 Dec 2026 09:04:57.000 * Saving the final RDB snapshot before exiting.\n\
1:M 01 Dec 2026 09:04:57.000 * DB saved on disk\n\
1:M 01 Dec 2026 09:04:57.000 # Redis is now ready to exit, bye bye...\n"
    );
    assert!(os.fs.root.read_path("/data/dump.rdb").is_some());
    let (_, spawn) = image("redis:7.2.4", "redis", None);
    let mut p2 = start(&os, &spawn);
    os.stdout.clear();
    p2.resume(&mut os, Wake::Start);
    assert!(text(&os.stdout).contains("* Done loading RDB, keys loaded: 1, keys expired: 0.\n"));
    assert_eq!(text(&send(&mut p2, &mut os, 6379, &resp(&["GET", "k"]))), "$1\r\nv\r\n");
}

#[test]
fn redis_cli_sends_resp_over_tcp_and_formats_for_a_tty_or_raw() {
    let (os, mut spawn) = image("redis:7.2.4", "client", Some(&["redis-cli", "-h", "redis-leader", "CONFIG", "GET", "maxmemory"]));
    let mut os = os.with_cluster_dns("default", "10.96.0.10").with_dns("redis-leader.default.svc.cluster.local", "10.96.0.20").with_tcp(
        "10.96.0.20",
        6379,
        b"*2\r\n$9\r\nmaxmemory\r\n$7\r\n2097152\r\n",
    );
    spawn.env.insert("TERM".into(), "xterm".into());
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!((out.stdout_str().as_str(), out.code), ("1) \"maxmemory\"\n2) \"2097152\"\n", Some(0)));
    assert!(out.calls.iter().any(
        |c| matches!(c, Call::Net(kubesim_os::program::NetCall::Tcp { dst, send, .. }) if dst == "10.96.0.20" && send == &resp(&["CONFIG", "GET", "maxmemory"]))
    ));
    spawn.env.remove("TERM");
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.stdout_str(), "maxmemory\n2097152\n");
    let (mut os, spawn) = image("redis:7.2.4", "client", Some(&["redis-cli", "PING"]));
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!((out.stderr_str().as_str(), out.code), ("Could not connect to Redis at 127.0.0.1:6379: Connection refused\n", Some(1)));
}

#[test]
fn a_guestbook_follower_replicates_the_leaders_keys_and_refuses_writes() {
    let (mut los, mut leader) = server("redis:6.0.5", &[], "redis-leader-abc");
    leader.resume(&mut los, Wake::Start);
    send(&mut leader, &mut los, 6379, &resp(&["SET", "messages", ",hi"]));
    let sync = send_from(&mut leader, &mut los, "10.244.0.9", 6379, b"*1\r\n$4\r\nSYNC\r\n");
    assert!(text(&los.stdout).contains("* Replica 10.244.0.9:6379 asks for synchronization\n"));
    let (fos, spawn) = image("us-docker.pkg.dev/google-samples/containers/gke/gb-redis-follower:v2", "redis-follower-xyz", None);
    let mut fos =
        fos.with_cluster_dns("default", "10.96.0.10").with_dns("redis-leader.default.svc.cluster.local", "10.96.0.30").with_tcp("10.96.0.30", 6379, &sync);
    let mut f = start(&fos, &spawn);
    let s = settle(&mut f, &mut fos, Wake::Start, 0);
    assert!(matches!(s, Step::Net(_)), "{s:?}");
    // Feed the DNS and TCP answers by hand.
    let mut step = s;
    for _ in 0..6 {
        let Step::Net(call) = step.clone() else { break };
        let reply = match &call {
            kubesim_os::program::NetCall::Dns { .. } => {
                kubesim_os::program::NetReply::Dns(Ok(kubesim_os::program::DnsMessage::answer(vec![kubesim_os::program::DnsRecord {
                    name: "redis-leader.default.svc.cluster.local.".into(),
                    ttl: 30,
                    rtype: kubesim_os::program::RType::A,
                    data: "10.96.0.30".into(),
                }])))
            }
            _ => kubesim_os::program::NetReply::Tcp(Ok(sync.clone())),
        };
        step = f.resume(&mut fos, Wake::Net(reply));
    }
    assert_eq!(step, Step::Sleep(1_000));
    let log = text(&fos.stdout);
    assert!(
        log.contains("1:S 01 Dec 2026 09:04:57.000 * Connecting to MASTER redis-leader:6379\n")
            && log.contains("* MASTER <-> REPLICA sync: Finished with success\n"),
        "{log}"
    );
    assert_eq!(text(&send(&mut f, &mut fos, 6379, &resp(&["GET", "messages"]))), "$3\r\n,hi\r\n");
    assert_eq!(text(&send(&mut f, &mut fos, 6379, &resp(&["SET", "a", "b"]))), "-READONLY You can't write against a read only replica.\r\n");
}
