//! The shell scripts of the Kubernetes docs manifests in `shared/corpus/k8s-docs-examples`
//! run with the output the real shells print; sleeps are virtual time. Each script is quoted
//! here and, when the corpus is checked out beside the repository, checked to still appear in
//! its manifest.

mod common;

use common::{corpus, Pod};
use kubesim_os::fs::atomic_volume;
use kubesim_os::testing::Call;
use kubesim_os::{Os, Signal};

fn in_corpus(file: &str, snippet: &str) {
    if let Some(text) = corpus(file) {
        assert!(text.contains(snippet), "{file} no longer contains {snippet:?}");
    }
}

#[test]
fn cronjob_prints_the_date_and_a_greeting() {
    let script = "date; echo Hello from the Kubernetes cluster";
    in_corpus("application/job/cronjob.yaml", script);
    let out = Pod::busybox().run(&["/bin/sh", "-c", script]);
    assert_eq!(
        (out.stdout_str().as_str(), out.stderr_str().as_str(), out.code),
        ("Tue Dec  1 09:04:57 UTC 2026\nHello from the Kubernetes cluster\n", "", Some(0))
    );
}

#[test]
fn indexed_job_picks_its_array_item_and_the_worker_reverses_it() {
    in_corpus("application/job/indexed-job.yaml", "items=(foo bar baz qux xyz)");
    let script = "               items=(foo bar baz qux xyz)\n               echo ${items[$JOB_COMPLETION_INDEX]} > /input/data.txt\n              ";
    let mut pod = Pod::new(kubesim_os::registry::debian_image()).env("JOB_COMPLETION_INDEX", "2").empty_dir("/input", "input");
    let out = pod.run(&["bash", "-c", script]);
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), ("", "", Some(0)));
    assert_eq!(pod.read("/input/data.txt").as_deref(), Some("baz\n"));
    let worker = pod.run(&["rev", "/input/data.txt"]);
    assert_eq!((worker.stdout_str().as_str(), worker.code), ("zab\n", Some(0)));
}

const MYSQL_INIT: &str = "set -ex\n# Generate mysql server-id from pod ordinal index.\n[[ `hostname` =~ -([0-9]+)$ ]] || exit 1\nordinal=${BASH_REMATCH[1]}\necho [mysqld] > /mnt/conf.d/server-id.cnf\n# Add an offset to avoid reserved server-id=0 value.\necho server-id=$((100 + $ordinal)) >> /mnt/conf.d/server-id.cnf\n# Copy appropriate conf.d files from config-map to emptyDir.\nif [[ $ordinal -eq 0 ]]; then\n  cp /mnt/config-map/primary.cnf /mnt/conf.d/\nelse\n  cp /mnt/config-map/secondary.cnf /mnt/conf.d/\nfi\n";

fn mysql_pod(host: &str) -> Pod {
    let cm =
        atomic_volume(&[("primary.cnf", b"[mysqld]\nlog-bin\n"), ("secondary.cnf", b"[mysqld]\nsuper-read-only\n")], "2026_12_01_09_04_57.000000001", 0o644);
    Pod::debian().hostname(host).empty_dir("/mnt/conf.d", "conf").volume("/mnt/config-map", "config-map", cm, true)
}

#[test]
fn mysql_init_container_traces_like_bash_and_writes_the_server_id() {
    in_corpus("application/mysql/mysql-statefulset.yaml", "[[ `hostname` =~ -([0-9]+)$ ]] || exit 1");
    in_corpus("application/mysql/mysql-statefulset.yaml", "echo server-id=$((100 + $ordinal)) >> /mnt/conf.d/server-id.cnf");
    let mut pod = mysql_pod("mysql-1");
    let out = pod.run(&["bash", "-c", MYSQL_INIT]);
    // GNU bash 5.2.15, same script, `hostname` printing mysql-1.
    let want = "++ hostname\n+ [[ mysql-1 =~ -([0-9]+)$ ]]\n+ ordinal=1\n+ echo '[mysqld]'\n+ echo server-id=101\n+ [[ 1 -eq 0 ]]\n+ cp /mnt/config-map/secondary.cnf /mnt/conf.d/\n";
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), ("", want, Some(0)));
    assert_eq!(pod.read("/mnt/conf.d/server-id.cnf").as_deref(), Some("[mysqld]\nserver-id=101\n"));
    assert_eq!(pod.read("/mnt/conf.d/secondary.cnf").as_deref(), Some("[mysqld]\nsuper-read-only\n"));
    assert_eq!(pod.read("/mnt/conf.d/primary.cnf"), None);
}

#[test]
fn mysql_init_container_on_the_primary_copies_primary_cnf() {
    let mut pod = mysql_pod("mysql-0");
    let out = pod.run(&["bash", "-c", MYSQL_INIT]);
    assert_eq!(out.code, Some(0));
    assert_eq!(pod.read("/mnt/conf.d/server-id.cnf").as_deref(), Some("[mysqld]\nserver-id=100\n"));
    assert_eq!(pod.read("/mnt/conf.d/primary.cnf").as_deref(), Some("[mysqld]\nlog-bin\n"));
}

#[test]
fn mysql_init_container_without_an_ordinal_fails() {
    let mut pod = mysql_pod("mysql");
    let out = pod.run(&["bash", "-c", MYSQL_INIT]);
    assert_eq!((out.stderr_str().as_str(), out.code), ("++ hostname\n+ [[ mysql =~ -([0-9]+)$ ]]\n+ exit 1\n", Some(1)));
}

const CLONE_MYSQL: &str = "set -ex\n# Skip the clone if data already exists.\n[[ -d /var/lib/mysql/mysql ]] && exit 0\n# Skip the clone on primary (ordinal index 0).\n[[ `hostname` =~ -([0-9]+)$ ]] || exit 1\nordinal=${BASH_REMATCH[1]}\n[[ $ordinal -eq 0 ]] && exit 0\n# Clone data from previous peer.\nncat --recv-only mysql-$(($ordinal-1)).mysql 3307 | xbstream -x -C /var/lib/mysql\n# Prepare the backup.\nxtrabackup --prepare --target-dir=/var/lib/mysql\n";

#[test]
fn clone_mysql_skips_on_the_primary() {
    in_corpus("application/mysql/mysql-statefulset.yaml", "[[ -d /var/lib/mysql/mysql ]] && exit 0");
    let mut pod = Pod::debian().hostname("mysql-0");
    let out = pod.run(&["bash", "-c", CLONE_MYSQL]);
    assert_eq!(
        (out.stderr_str().as_str(), out.code),
        ("+ [[ -d /var/lib/mysql/mysql ]]\n++ hostname\n+ [[ mysql-0 =~ -([0-9]+)$ ]]\n+ ordinal=0\n+ [[ 0 -eq 0 ]]\n+ exit 0\n", Some(0))
    );
}

#[test]
fn clone_mysql_on_a_replica_runs_ncat_xbstream_and_xtrabackup_on_the_host() {
    let mut pod = Pod::debian().hostname("mysql-2");
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/ncat", "ncat");
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/xbstream", "xbstream");
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/xtrabackup", "xtrabackup");
    pod.os = pod.os.clone().with_spawn("ncat", 0, "backup-bytes").with_spawn("xbstream", 0, "").with_spawn("xtrabackup", 0, "prepared\n");
    let out = pod.run(&["bash", "-c", CLONE_MYSQL]);
    let spawns: Vec<Vec<String>> = out.calls.iter().filter_map(|c| if let Call::Spawn(a) = c { Some(a.clone()) } else { None }).collect();
    assert_eq!(
        spawns,
        vec![
            vec!["ncat".to_string(), "--recv-only".into(), "mysql-1.mysql".into(), "3307".into()],
            vec!["xbstream".to_string(), "-x".into(), "-C".into(), "/var/lib/mysql".into()],
            vec!["xtrabackup".to_string(), "--prepare".into(), "--target-dir=/var/lib/mysql".into()],
        ]
    );
    assert_eq!((out.stdout_str().as_str(), out.code), ("prepared\n", Some(0)));
    assert!(out.stderr_str().contains("+ ncat --recv-only mysql-1.mysql 3307\n+ xbstream -x -C /var/lib/mysql\n"), "{}", out.stderr_str());
}

#[test]
fn post_start_handler_writes_the_message_file() {
    let script = "echo Hello from the postStart handler > /usr/share/message";
    in_corpus("pods/lifecycle-events.yaml", script);
    let mut pod = Pod::new(kubesim_os::registry::debian_image());
    let out = pod.run(&["/bin/sh", "-c", script]);
    assert_eq!(out.code, Some(0));
    assert_eq!(pod.read("/usr/share/message").as_deref(), Some("Hello from the postStart handler\n"));
}

#[test]
fn pre_stop_handler_stops_waiting_once_nginx_is_gone() {
    let script = "nginx -s quit; while killall -0 nginx; do sleep 1; done";
    in_corpus("pods/lifecycle-events.yaml", script);
    let mut pod = Pod::new(kubesim_os::registry::debian_image());
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/sbin/nginx", "nginx");
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/killall", "killall");
    pod.os = pod.os.clone().with_spawn("nginx", 0, "").with_spawn("killall", 1, "");
    let out = pod.run(&["/bin/sh", "-c", script]);
    assert_eq!((out.code, out.elapsed_ms), (Some(0), 0));
}

#[test]
fn pre_stop_handler_under_busybox_polls_every_second_while_nginx_runs() {
    let script = "nginx -s quit; while killall -0 nginx; do sleep 1; done";
    let mut pod = Pod::busybox();
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/sbin/nginx", "nginx");
    pod.os = pod.os.clone().with_spawn("nginx", 0, "");
    pod.os.processes.push(kubesim_os::program::ProcessInfo {
        pid: 1,
        ppid: 0,
        uid: 0,
        cpu_ms: 0,
        cmdline: "nginx: master process nginx -g daemon off;".into(),
        rss_bytes: 0,
        state: 'S',
    });
    pod.os.processes.push(kubesim_os::program::ProcessInfo { pid: 30, ppid: 1, uid: 0, cpu_ms: 0, cmdline: "nginx".into(), rss_bytes: 0, state: 'S' });
    pod.os.pid = 40;
    let out = pod.run_for(&["/bin/sh", "-c", script], 3_500);
    assert_eq!((out.code, out.elapsed_ms), (None, 3_500));
    let polls = out.calls.iter().filter(|c| matches!(c, Call::Kill(30, None))).count();
    assert_eq!(polls, 4);
}

#[test]
fn exec_liveness_container_has_the_file_for_thirty_seconds() {
    let script = "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600";
    in_corpus("pods/probe/exec-liveness.yaml", script);
    let mut pod = Pod::busybox();
    let out = pod.run_for(&["/bin/sh", "-c", script], 10_000);
    assert_eq!(out.code, None);
    assert_eq!(pod.read("/tmp/healthy").as_deref(), Some(""));
    let mut pod = Pod::busybox();
    let out = pod.run(&["/bin/sh", "-c", script]);
    assert_eq!((out.code, out.elapsed_ms), (Some(0), 630_000));
    assert_eq!(pod.read("/tmp/healthy"), None);
}

#[test]
fn exec_liveness_probe_cat_fails_after_the_file_is_removed() {
    let mut pod = Pod::busybox();
    let probe = pod.run(&["cat", "/tmp/healthy"]);
    assert_eq!((probe.stderr_str().as_str(), probe.code), ("cat: can't open '/tmp/healthy': No such file or directory\n", Some(1)));
}

#[test]
fn downward_api_env_loop_prints_every_ten_seconds() {
    let script =
        "while true; do echo -en '\\n'; printenv MY_NODE_NAME MY_POD_NAME MY_POD_NAMESPACE; printenv MY_POD_IP MY_POD_SERVICE_ACCOUNT; sleep 10; done;";
    in_corpus("pods/inject/dapi-envars-pod.yaml", "while true; do echo -en '\\\\n'; printenv MY_NODE_NAME MY_POD_NAME MY_POD_NAMESPACE;");
    let mut pod = Pod::busybox()
        .env("MY_NODE_NAME", "minikube")
        .env("MY_POD_NAME", "dapi-envars-fieldref")
        .env("MY_POD_NAMESPACE", "default")
        .env("MY_POD_IP", "10.244.0.7")
        .env("MY_POD_SERVICE_ACCOUNT", "default");
    let out = pod.run_for(&["sh", "-c", script], 25_000);
    let one = "\nminikube\ndapi-envars-fieldref\ndefault\n10.244.0.7\ndefault\n";
    assert_eq!((out.stdout_str(), out.code), (one.repeat(3), None));
}

#[test]
fn downward_api_volume_loop_cats_the_label_and_annotation_files() {
    let script = "while true; do if [[ -e /etc/podinfo/labels ]]; then echo -en '\\n\\n'; cat /etc/podinfo/labels; fi; if [[ -e /etc/podinfo/annotations ]]; then echo -en '\\n\\n'; cat /etc/podinfo/annotations; fi; sleep 5; done;";
    in_corpus("pods/inject/dapi-volume.yaml", "if [[ -e /etc/podinfo/labels ]]; then");
    let vol = atomic_volume(
        &[("labels", b"cluster=\"test-cluster1\"\nrack=\"rack-22\"\nzone=\"us-est-coast\""), ("annotations", b"builder=\"john-doe\"\nbuild=\"two\"")],
        "2026_12_01_09_04_57.1",
        0o644,
    );
    let mut pod = Pod::busybox().volume("/etc/podinfo", "podinfo", vol, true);
    let out = pod.run_for(&["sh", "-c", script], 7_000);
    let one = "\n\ncluster=\"test-cluster1\"\nrack=\"rack-22\"\nzone=\"us-est-coast\"\n\nbuilder=\"john-doe\"\nbuild=\"two\"";
    assert_eq!(out.stdout_str(), one.repeat(2));
}

#[test]
fn configmap_volume_listing_shows_the_keys_not_the_atomic_writer_internals() {
    let script = "ls /etc/config/";
    in_corpus("pods/pod-configmap-volume.yaml", script);
    let vol = atomic_volume(&[("SPECIAL_LEVEL", b"very"), ("SPECIAL_TYPE", b"charm")], "2026_12_01_09_04_57.1", 0o644);
    let mut pod = Pod::busybox().volume("/etc/config", "config-volume", vol, true);
    let out = pod.run(&["/bin/sh", "-c", script]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("SPECIAL_LEVEL\nSPECIAL_TYPE\n", Some(0)));
    let all = pod.run(&["/bin/sh", "-c", "ls -a /etc/config/; cat /etc/config/SPECIAL_LEVEL; echo; echo x > /etc/config/new"]);
    assert_eq!(all.stdout_str(), ".\n..\n..2026_12_01_09_04_57.1\n..data\nSPECIAL_LEVEL\nSPECIAL_TYPE\nvery\n");
    assert_eq!(all.stderr_str(), "sh: can't create /etc/config/new: Read-only file system\n");
}

#[test]
fn commands_example_prints_two_environment_variables() {
    in_corpus("pods/commands.yaml", "\"printenv\",");
    let mut pod = Pod::debian().hostname("command-demo").env("KUBERNETES_PORT", "tcp://10.96.0.1:443");
    let out = pod.run(&["printenv", "HOSTNAME", "KUBERNETES_PORT"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("command-demo\ntcp://10.96.0.1:443\n", Some(0)));
}

#[test]
fn pod_failure_policy_job_exits_42_after_five_seconds() {
    let script = "echo \"Hello world!\" && sleep 5 && exit 42";
    in_corpus("controllers/job-pod-failure-policy-example.yaml", "echo \"Hello world!\" && sleep 5 && exit 42");
    let mut pod = Pod::new(kubesim_os::registry::debian_image());
    let out = pod.run(&["bash", "-c", script]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("Hello world!\n", Some(42), 5_000));
}

#[test]
fn projected_volume_container_sleeps_for_a_day() {
    in_corpus("pods/storage/projected.yaml", "- \"86400\"");
    let mut pod = Pod::busybox();
    let out = pod.run_for(&["sleep", "86400"], 100_000_000);
    assert_eq!((out.code, out.elapsed_ms), (Some(0), 86_400_000));
}

#[test]
fn sleeping_pid_one_ignores_sigterm_and_dies_on_sigkill() {
    let mut pod = Pod::busybox();
    pod.os = pod.os.clone().with_signal(1_000, Signal::Term).with_signal(31_000, Signal::Kill);
    let out = pod.run(&["sleep", "3600"]);
    assert_eq!((out.code, out.elapsed_ms), (Some(137), 31_000));
}

#[test]
fn init_container_downloads_info_cern_ch_with_busybox_wget() {
    in_corpus("pods/init-containers.yaml", "\"http://info.cern.ch\"");
    let page = "<html><head></head><body><header>\n<title>http://info.cern.ch</title>\n</header>\n</body></html>\n";
    let resp = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}", page.len());
    let mut pod = Pod::busybox().file("/etc/resolv.conf", "nameserver 8.8.8.8\n").empty_dir("/work-dir", "workdir");
    pod.os = pod.os.clone().with_dns("info.cern.ch", "188.184.67.127").with_tcp("188.184.67.127", 80, resp.as_bytes());
    let out = pod.run(&["wget", "-O", "/work-dir/index.html", "http://info.cern.ch"]);
    let want = format!(
        "Connecting to info.cern.ch (188.184.67.127:80)\nsaving to '/work-dir/index.html'\nindex.html           100% |********************************| {:>5}  0:00:00 ETA\n'/work-dir/index.html' saved\n",
        page.len()
    );
    assert_eq!((out.stdout_str().as_str(), out.stderr_str(), out.code), ("", want, Some(0)));
    assert_eq!(pod.read("/work-dir/index.html").as_deref(), Some(page));
}

#[test]
fn countdown_loop_prints_each_second() {
    let mut pod = Pod::busybox();
    let out = pod.run(&["sh", "-c", "for i in 9 8 7 6 5 4 3 2 1 ; do echo $i ; sleep 1; done"]);
    assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("9\n8\n7\n6\n5\n4\n3\n2\n1\n", Some(0), 9_000));
}

#[test]
fn hello_loop_prints_every_ten_seconds_until_stopped() {
    let mut pod = Pod::busybox();
    let out = pod.run_for(&["/bin/sh", "-c", "while true; do echo hello; sleep 10;done"], 35_000);
    assert_eq!((out.stdout_str().as_str(), out.code), ("hello\nhello\nhello\nhello\n", None));
}

#[test]
fn secret_dotfile_is_hidden_from_plain_ls_l() {
    in_corpus("secret/dotfile-secret.yaml", "\"/etc/secret-volume\",");
    let vol = atomic_volume(&[(".secret-file", b"value-2\n")], "2026_12_01_09_04_57.1", 0o644);
    let mut pod = Pod::busybox().volume("/etc/secret-volume", "secret-volume", vol, true);
    let out = pod.run(&["ls", "-l", "/etc/secret-volume"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("total 0\n", Some(0)));
    let dot = pod.run(&["cat", "/etc/secret-volume/.secret-file"]);
    assert_eq!(dot.stdout_str(), "value-2\n");
}

#[test]
fn foreign_programs_in_the_corpus_are_handed_to_the_host() {
    in_corpus("controllers/job.yaml", "\"perl\", \"-Mbignum=bpi\", \"-wle\", \"print bpi(1000)\"");
    let mut pod = Pod::debian();
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/perl", "perl");
    pod.os = pod.os.clone().with_spawn("perl", 0, "3.14159\n");
    let out = pod.run(&["perl", "-Mbignum=bpi", "-wle", "print bpi(1000)"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("3.14159\n", Some(0)));
    assert_eq!(out.calls.first(), Some(&Call::Spawn(vec!["perl".into(), "-Mbignum=bpi".into(), "-wle".into(), "print bpi(1000)".into()])));
    let fs = pod.os.fs_ref();
    assert!(fs.stat("/usr/bin/perl").is_ok());
}

#[test]
fn memory_stress_reports_its_allocation_and_hangs() {
    in_corpus("pods/resource/memory-request-limit.yaml", "\"--vm-bytes\",");
    let mut pod = Pod::new(kubesim_os::registry::alpine_image());
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/stress", "stress");
    let out = pod.run_for(&["stress", "--vm", "1", "--vm-bytes", "150M", "--vm-hang", "1"], 5_000);
    assert_eq!((out.stdout_str().as_str(), out.code), ("stress: info: [1] dispatching hogs: 0 cpu, 0 io, 1 vm, 0 hdd\n", None));
    assert_eq!(pod.os.memory, (1 << 20) + 150 * (1 << 20));
}

#[test]
fn cpu_stress_asks_for_two_cpus_of_compute_forever() {
    in_corpus("pods/resource/cpu-request-limit.yaml", "\"-cpus\",");
    let mut pod = Pod::new(kubesim_os::registry::alpine_image());
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/stress", "stress");
    let _ = pod.run_for(&["stress", "-cpus", "2"], 3_000);
    let compute = pod.os.calls.iter().filter(|c| matches!(c, Call::Compute(1000))).count();
    assert_eq!(compute, 4);
}

/// The xtrabackup sidecar of the MySQL StatefulSet tutorial, as GNU bash 5.2.15 traces it when
/// the data directory holds a binlog position from a clone of the primary.
const XTRABACKUP: &str = r#"set -ex
cd /var/lib/mysql

# Determine binlog position of cloned data, if any.
if [[ -f xtrabackup_slave_info && "x$(<xtrabackup_slave_info)" != "x" ]]; then
  # XtraBackup already generated a partial "CHANGE MASTER TO" query
  # because we're cloning from an existing secondary. (Need to remove the tailing semicolon!)
  cat xtrabackup_slave_info | sed -E 's/;$//g' > change_master_to.sql.in
  # Ignore xtrabackup_binlog_info in this case (it's useless).
  rm -f xtrabackup_slave_info xtrabackup_binlog_info
elif [[ -f xtrabackup_binlog_info ]]; then
  # We're cloning directly from primary. Parse binlog position.
  [[ `cat xtrabackup_binlog_info` =~ ^(.*?)[[:space:]]+(.*?)$ ]] || exit 1
  rm -f xtrabackup_binlog_info xtrabackup_slave_info
  echo "CHANGE MASTER TO MASTER_LOG_FILE='${BASH_REMATCH[1]}',\
        MASTER_LOG_POS=${BASH_REMATCH[2]}" > change_master_to.sql.in
fi

# Check if we need to complete a clone by starting replication.
if [[ -f change_master_to.sql.in ]]; then
  echo "Waiting for mysqld to be ready (accepting connections)"
  until mysql -h 127.0.0.1 -e "SELECT 1"; do sleep 1; done

  echo "Initializing replication from clone position"
  mysql -h 127.0.0.1 \
        -e "$(<change_master_to.sql.in), \
                MASTER_HOST='mysql-0.mysql', \
                MASTER_USER='root', \
                MASTER_PASSWORD='', \
                MASTER_CONNECT_RETRY=10; \
              START SLAVE;" || exit 1
  # In case of container restart, attempt this at-most-once.
  mv change_master_to.sql.in change_master_to.sql.orig
fi

# Start a server to send backups when requested by peers.
exec ncat --listen --keep-open --send-only --max-conns=1 3307 -c \
  "xtrabackup --backup --slave-info --stream=xbstream --host=127.0.0.1 --user=root"
"#;

#[test]
fn xtrabackup_sidecar_parses_the_binlog_position_and_execs_ncat() {
    in_corpus("application/mysql/mysql-statefulset.yaml", "[[ `cat xtrabackup_binlog_info` =~ ^(.*?)[[:space:]]+(.*?)$ ]] || exit 1");
    in_corpus("application/mysql/mysql-statefulset.yaml", "exec ncat --listen --keep-open --send-only --max-conns=1 3307 -c");
    let mut pod = Pod::debian().hostname("mysql-1").empty_dir("/var/lib/mysql", "data");
    if let Some(t) = pod.os.fs.volumes.trees.get_mut("data") {
        t.add_file("/xtrabackup_binlog_info", b"mysql-bin.000003\t154\n".to_vec(), 0o644);
    }
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/mysql", "mysql");
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/bin/ncat", "ncat");
    pod.os = pod.os.clone().with_spawn("mysql", 0, "").with_spawn("ncat", 0, "");
    let out = pod.run(&["bash", "-c", XTRABACKUP]);
    let want_err = r#"+ cd /var/lib/mysql
+ [[ -f xtrabackup_slave_info ]]
+ [[ -f xtrabackup_binlog_info ]]
++ cat xtrabackup_binlog_info
+ [[ mysql-bin.000003	154 =~ ^(.*?)[[:space:]]+(.*?)$ ]]
+ rm -f xtrabackup_binlog_info xtrabackup_slave_info
+ echo 'CHANGE MASTER TO MASTER_LOG_FILE='\''mysql-bin.000003'\'',        MASTER_LOG_POS=154'
+ [[ -f change_master_to.sql.in ]]
+ echo 'Waiting for mysqld to be ready (accepting connections)'
+ mysql -h 127.0.0.1 -e 'SELECT 1'
+ echo 'Initializing replication from clone position'
+ mysql -h 127.0.0.1 -e 'CHANGE MASTER TO MASTER_LOG_FILE='\''mysql-bin.000003'\'',        MASTER_LOG_POS=154,                 MASTER_HOST='\''mysql-0.mysql'\'',                 MASTER_USER='\''root'\'',                 MASTER_PASSWORD='\'''\'',                 MASTER_CONNECT_RETRY=10;               START SLAVE;'
+ mv change_master_to.sql.in change_master_to.sql.orig
+ exec ncat --listen --keep-open --send-only --max-conns=1 3307 -c 'xtrabackup --backup --slave-info --stream=xbstream --host=127.0.0.1 --user=root'
"#;
    assert_eq!(
        (out.stdout_str().as_str(), out.stderr_str().as_str(), out.code),
        ("Waiting for mysqld to be ready (accepting connections)\nInitializing replication from clone position\n", want_err, Some(0))
    );
    assert_eq!(
        pod.read("/var/lib/mysql/change_master_to.sql.orig").as_deref(),
        Some("CHANGE MASTER TO MASTER_LOG_FILE='mysql-bin.000003',        MASTER_LOG_POS=154\n")
    );
    let last = out.calls.iter().rev().find_map(|c| if let Call::Spawn(a) = c { Some(a.clone()) } else { None });
    assert_eq!(
        last.map(|a| a.join(" ")).as_deref(),
        Some("ncat --listen --keep-open --send-only --max-conns=1 3307 -c xtrabackup --backup --slave-info --stream=xbstream --host=127.0.0.1 --user=root")
    );
}

#[test]
fn env_from_configmap_prints_the_environment() {
    in_corpus("pods/pod-configmap-envFrom.yaml", "command: [ \"/bin/sh\", \"-c\", \"env\" ]");
    let mut pod = Pod::busybox().env("SPECIAL_LEVEL", "very").env("SPECIAL_TYPE", "charm");
    let out = pod.run(&["/bin/sh", "-c", "env"]);
    // Sorted by name here; the real order is the runtime's (a documented deviation).
    assert_eq!(
        out.stdout_str(),
        "HOME=/root\nHOSTNAME=pod\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nPWD=/\nSPECIAL_LEVEL=very\nSPECIAL_TYPE=charm\n"
    );
}

#[test]
fn python_jobs_are_handed_to_the_host_with_their_environment() {
    in_corpus("controllers/job-success-policy.yaml", "if os.environ.get(\"JOB_COMPLETION_INDEX\") == \"2\":");
    let mut pod = Pod::debian().env("JOB_COMPLETION_INDEX", "2");
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/local/bin/python3", "python3");
    pod.os = pod.os.clone().with_spawn("python3", 0, "");
    let out = pod.run(&["python3", "-c", "import os, sys\nif os.environ.get(\"JOB_COMPLETION_INDEX\") == \"2\":\n  sys.exit(0)\nelse:\n  sys.exit(1)\n"]);
    assert_eq!(out.code, Some(0));
    assert!(matches!(out.calls.first(), Some(Call::Spawn(a)) if a[0] == "python3" && a[1] == "-c"));
}

#[test]
fn an_entrypoint_script_execs_its_arguments() {
    let mut pod = Pod::busybox().file("/docker-entrypoint.sh", "#!/bin/sh\nset -e\necho \"starting $1\"\nexec \"$@\"\n");
    kubesim_os::registry::add_foreign(&mut pod.os.fs.root, "/usr/sbin/nginx", "nginx");
    pod.os.fs.root.add_file("/docker-entrypoint.sh", "#!/bin/sh\nset -e\necho \"starting $1\"\nexec \"$@\"\n", 0o755);
    pod.os = pod.os.clone().with_spawn("nginx", 0, "");
    let out = pod.run(&["/docker-entrypoint.sh", "nginx", "-g", "daemon off;"]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("starting nginx\n", Some(0)));
    assert_eq!(out.calls.last(), Some(&Call::Spawn(vec!["nginx".into(), "-g".into(), "daemon off;".into()])));
}
