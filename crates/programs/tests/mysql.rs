mod support;

use kubesim_os::program::{Incoming, NetCall, NetReply, Outgoing, Program, Signal, Step, Wake};
use kubesim_os::testing::{run, FakeOs};
use support::*;

/// A running server container.
fn server(reference: &str, env: &[(&str, &str)], host: &str) -> (FakeOs, Box<dyn Program>, String) {
    let (mut os, mut spawn) = image(reference, host, None);
    for (k, v) in env {
        spawn.env.insert(k.to_string(), v.to_string());
    }
    os.fs.root.add_dir("/var/lib/mysql", 0o755);
    let mut p = start(&os, &spawn);
    let s = settle(&mut p, &mut os, Wake::Start, 60_000);
    assert_eq!(s, Step::Wait, "stdout:\n{}\nstderr:\n{}", text(&os.stdout), text(&os.stderr));
    let log = format!("{}{}", text(&os.stdout), text(&os.stderr));
    (os, p, log)
}

/// Runs a client in its own container, routing its TCP call to the server.
fn client(reference: &str, argv: &[&str], env: &[(&str, &str)], srv: &mut Box<dyn Program>, sos: &mut FakeOs) -> (String, String, Option<i32>) {
    let (mut os, mut spawn) = image(reference, "client", Some(argv));
    for (k, v) in env {
        spawn.env.insert(k.to_string(), v.to_string());
    }
    let mut p = start(&os, &spawn);
    let mut wake = Wake::Start;
    for _ in 0..20 {
        match p.resume(&mut os, wake.clone()) {
            Step::Exit(c) => return (text(&os.stdout), text(&os.stderr), Some(c)),
            Step::Net(NetCall::Tcp { dst, port, send, .. }) => {
                let conn = Incoming { src: "10.244.1.7".into(), src_port: 50000, port, udp: false, data: send };
                let r = if dst == "10.96.0.5" || dst == "127.0.0.1" { srv.serve(sos, &conn) } else { None };
                wake = Wake::Net(NetReply::Tcp(match r {
                    Some(Outgoing::Reply(b)) => Ok(b),
                    _ => Err(kubesim_os::program::NetError::Refused),
                }));
            }
            Step::Wait => return (text(&os.stdout), text(&os.stderr), None),
            other => panic!("unexpected {other:?}"),
        }
    }
    (text(&os.stdout), text(&os.stderr), None)
}

#[test]
fn the_mysql_5_7_entrypoint_initialises_the_datadir_and_mysqld_becomes_ready() {
    let (os, p, log) = server("mysql:5.7", &[("MYSQL_ALLOW_EMPTY_PASSWORD", "1")], "mysql-0");
    assert!(log.starts_with("2026-12-01 09:04:57+00:00 [Note] [Entrypoint]: Entrypoint script for MySQL Server 5.7.44-1.el7 started.\n2026-12-01 09:04:57+00:00 [Note] [Entrypoint]: Switching to dedicated user 'mysql'\n"), "{log}");
    assert!(log.contains("[Note] [Entrypoint]: Initializing database files\n"));
    assert!(log.contains("[Note] [Entrypoint]: MySQL init process done. Ready for start up.\n"));
    assert!(
        log.contains(
            " [Note] mysqld: ready for connections.\nVersion: '5.7.44'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306  MySQL Community Server (GPL)\n"
        ),
        "{log}"
    );
    assert_eq!(p.listening(), vec![(3306, false)]);
    assert!(os.fs.root.get_path("/var/lib/mysql/mysql").is_some());
    assert!((150 << 20..300 << 20).contains(&p.memory_bytes()));
}

#[test]
fn an_uninitialised_datadir_without_a_password_variable_fails_the_container() {
    let (mut os, spawn) = image("mysql:8.0", "m", None);
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr_str().ends_with("[ERROR] [Entrypoint]: Database is uninitialized and password option is not specified\n    You need to specify one of the following as an environment variable:\n    - MYSQL_ROOT_PASSWORD\n    - MYSQL_ALLOW_EMPTY_PASSWORD\n    - MYSQL_RANDOM_ROOT_PASSWORD\n"), "{}", out.stderr_str());
}

#[test]
fn batch_mode_prints_tab_separated_results_with_headers() {
    let (mut sos, mut srv, _) = server("mysql:5.7", &[("MYSQL_ALLOW_EMPTY_PASSWORD", "1")], "mysql-0");
    let (out, err, code) = client("mysql:5.7", &["mysql", "-h", "10.96.0.5", "-e", "SELECT 1"], &[], &mut srv, &mut sos);
    assert_eq!((out.as_str(), err.as_str(), code), ("1\n1\n", "", Some(0)));
    let script = "CREATE DATABASE test;\nCREATE TABLE test.messages (message VARCHAR(250));\nINSERT INTO test.messages VALUES ('hello');\n";
    let (mut os, mut spawn) = image("mysql:5.7", "mysql-client", Some(&["mysql", "-h", "10.96.0.5"]));
    spawn.stdin = script.as_bytes().to_vec();
    let mut p = start(&os, &spawn);
    let Step::Net(NetCall::Tcp { send, .. }) = p.resume(&mut os, Wake::Start) else { panic!() };
    let Some(Outgoing::Reply(r)) = srv.serve(&mut sos, &Incoming { src: "10.244.1.7".into(), src_port: 1, port: 3306, udp: false, data: send }) else {
        panic!()
    };
    assert_eq!(p.resume(&mut os, Wake::Net(NetReply::Tcp(Ok(r)))), Step::Exit(0));
    let (out, _, _) = client("mysql:5.7", &["mysql", "-h", "10.96.0.5", "-e", "SELECT * FROM test.messages"], &[], &mut srv, &mut sos);
    assert_eq!(out, "message\nhello\n");
    assert!(sos.fs.root.get_path("/var/lib/mysql/test/messages.ibd").is_some());
    let (_, err, code) = client("mysql:5.7", &["mysql", "-h", "10.96.0.5", "-e", "SELECT * FROM test.nope"], &[], &mut srv, &mut sos);
    assert_eq!((err.as_str(), code), ("ERROR 1146 (42S02) at line 1: Table 'test.nope' doesn't exist\n", Some(1)));
    let (_, err, _) = client("mysql:5.7", &["mysql", "-h", "10.96.0.5", "-e", "SELEKT 1"], &[], &mut srv, &mut sos);
    assert_eq!(err, "ERROR 1064 (42000) at line 1: You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'SELEKT 1' at line 1\n");
}

#[test]
fn with_a_tty_results_are_tables_and_server_id_comes_from_conf_d() {
    let (mut sos, mut srv, _) = {
        let (mut os, spawn) = image("mysql:5.7", "mysql-1", None);
        let mut spawn = spawn;
        spawn.env.insert("MYSQL_ALLOW_EMPTY_PASSWORD".into(), "1".into());
        os.fs.root.add_file("/etc/mysql/conf.d/server-id.cnf", "[mysqld]\nserver-id=101\n", 0o644);
        os.fs.root.add_file("/etc/mysql/conf.d/secondary.cnf", "[mysqld]\nsuper-read-only\n", 0o644);
        let mut p = start(&os, &spawn);
        assert_eq!(settle(&mut p, &mut os, Wake::Start, 60_000), Step::Wait);
        (os, p, ())
    };
    let (out, _, code) = client("mysql:5.7", &["mysql", "-h", "10.96.0.5", "-e", "SELECT @@server_id,NOW()"], &[("TERM", "xterm")], &mut srv, &mut sos);
    assert_eq!(code, Some(0));
    assert_eq!(out, "+-------------+---------------------+\n| @@server_id | NOW()               |\n+-------------+---------------------+\n|         101 | 2026-12-01 09:05:02 |\n+-------------+---------------------+\n");
    let (_, err, code) = client("mysql:5.7", &["mysql", "-h", "10.96.0.5", "-e", "CREATE DATABASE x"], &[], &mut srv, &mut sos);
    assert_eq!(
        (err.as_str(), code),
        ("ERROR 1290 (HY000) at line 1: The MySQL server is running with the --super-read-only option so it cannot execute this statement\n", Some(1))
    );
}

#[test]
fn mysqladmin_ping_reports_alive_or_the_socket_error() {
    let (mut sos, mut srv, _) = server("mysql:5.7", &[("MYSQL_ROOT_PASSWORD", "password")], "mysql");
    let (out, _, code) = client("mysql:5.7", &["mysqladmin", "ping"], &[], &mut srv, &mut sos);
    // Access is denied without the password, which ping counts as alive.
    assert_eq!(code, Some(0));
    assert_eq!(out, "");
    let (out, err, code) = client("mysql:5.7", &["mysqladmin", "-ppassword", "ping"], &[], &mut srv, &mut sos);
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("mysqld is alive\n", "mysqladmin: [Warning] Using a password on the command line interface can be insecure.\n", Some(0))
    );
    let mut dead: Box<dyn Program> = Box::new(kubesim_programs::common::Print { stdout: String::new(), stderr: String::new(), code: 0 });
    let (_, err, code) = client("mysql:5.7", &["mysqladmin", "ping"], &[], &mut dead, &mut sos);
    assert_eq!((err.as_str(), code), ("mysqladmin: connect to server at 'localhost' failed\nerror: 'Can't connect to local MySQL server through socket '/var/run/mysqld/mysqld.sock' (2)'\nCheck that mysqld is running and that the socket: '/var/run/mysqld/mysqld.sock' exists!\n", Some(1)));
    let (_, err, code) = client("mysql:5.6", &["mysql", "-h", "10.96.0.5", "-pwrong", "-e", "SELECT 1"], &[], &mut srv, &mut sos);
    assert_eq!((err.as_str(), code), ("Warning: Using a password on the command line interface can be insecure.\nERROR 1045 (28000): Access denied for user 'root'@'10.244.1.7' (using password: YES)\n", Some(1)));
}

#[test]
fn the_data_directory_survives_a_new_pod_and_init_is_skipped() {
    let (mut sos, mut srv, _) = server("mysql:5.6", &[("MYSQL_ROOT_PASSWORD", "password")], "mysql-abc");
    client("mysql:5.6", &["mysql", "-h", "10.96.0.5", "-ppassword", "-e", "CREATE DATABASE kept"], &[], &mut srv, &mut sos);
    assert_eq!(srv.resume(&mut sos, Wake::Signal(Signal::Term)), Step::Exit(0));
    assert!(text(&sos.stderr).contains("[Note] mysqld: Shutdown complete"));
    let (_, spawn) = image("mysql:5.6", "mysql-def", None);
    sos.stdout.clear();
    sos.stderr.clear();
    let mut p2 = start(&sos, &spawn);
    assert_eq!(settle(&mut p2, &mut sos, Wake::Start, 60_000), Step::Wait);
    assert!(!text(&sos.stdout).contains("Initializing database"));
    let (out, _, _) = client("mysql:5.6", &["mysql", "-h", "10.96.0.5", "-ppassword", "-e", "SHOW DATABASES"], &[], &mut p2, &mut sos);
    assert_eq!(out, "Database\ninformation_schema\nkept\nmysql\nperformance_schema\n");
}
