//! Executable dispatch, image contents and the static analysis of scripts.

use kubesim_os::fs::{Errno, OwnedFs};
use kubesim_os::registry::{self, Exe};
use kubesim_os::sh::Flavor;
use kubesim_os::Spawn;
use std::collections::BTreeSet;

fn available(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn static_analysis_lists_commands_that_would_not_be_found() {
    let avail = available(&["echo", "sleep", "wget", "cat"]);
    let cases: &[(&str, &[&str])] = &[
        ("echo hi; sleep 1", &[]),
        ("nginx -g 'daemon off;'", &["nginx"]),
        ("f() { mysqld; }; f; cat x | grep y", &["grep", "mysqld"]),
        ("if curl -s x; then jq .a; fi", &["curl", "jq"]),
        ("x=$(hostname); exec gunicorn app", &["gunicorn", "hostname"]),
        ("while true; do wget -q -O- http://x; done", &[]),
        ("echo $(", &[]),
    ];
    for (script, want) in cases {
        let got = kubesim_os::parse_commands(script, Flavor::Ash, &avail);
        assert_eq!(got, want.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{script}");
    }
}

#[test]
fn executables_name_their_implementation() {
    let mut fs = OwnedFs::new(registry::busybox_image());
    fs.root.add_file("/app/run.sh", "#!/bin/sh -e\necho hi\n", 0o755);
    fs.root.add_file("/app/data.bin", vec![0x7f, b'E', b'L', b'F'], 0o755);
    registry::add_foreign(&mut fs.root, "/usr/sbin/nginx", "nginx");
    assert_eq!(registry::inspect(&fs, "/bin/ls"), Ok(Exe::Kubesim("busybox".into(), vec![])));
    assert_eq!(registry::inspect(&fs, "/app/run.sh"), Ok(Exe::Script("/bin/sh".into(), Some("-e".into()))));
    assert_eq!(registry::inspect(&fs, "/app/data.bin"), Ok(Exe::Unknown));
    assert_eq!(registry::inspect(&fs, "/nope"), Err(Errno::ENOENT));
    let sp = |argv: &[&str], path: &str| Spawn { argv: argv.iter().map(|s| s.to_string()).collect(), cwd: "/".into(), path: path.into(), ..Spawn::default() };
    assert!(registry::program_for(&sp(&["ls"], "/bin/ls"), &fs).is_ok());
    assert_eq!(registry::program_for(&sp(&["nginx"], "/usr/sbin/nginx"), &fs).err().map(|e| e.name), Some("nginx".to_string()));
    assert!(registry::start(&sp(&["nginx"], "/usr/sbin/nginx"), &fs).is_ok());
    assert_eq!(registry::start(&sp(&["x"], "/app/data.bin"), &fs).err(), Some(Errno::ENOEXEC));
}

#[test]
fn commands_resolve_through_path_like_the_runtime() {
    let fs = OwnedFs::new(registry::debian_image());
    let path = Some(registry::DEFAULT_PATH);
    assert_eq!(registry::resolve_command("sh", path, "/", &fs), Ok("/usr/bin/sh".into()));
    assert_eq!(registry::resolve_command("wget", path, "/", &fs), Err(Errno::ENOENT));
    assert_eq!(registry::resolve_command("/etc", path, "/", &fs), Err(Errno::EACCES));
    assert_eq!(registry::resolve_command("/bin/bash", path, "/", &fs), Ok("/bin/bash".into()));
}

#[test]
fn images_have_the_expected_shells_and_tools() {
    let bb = OwnedFs::new(registry::busybox_image());
    let alpine = OwnedFs::new(registry::alpine_image());
    let debian = OwnedFs::new(registry::debian_image());
    use kubesim_os::fs::Fs;
    for p in ["/bin/sh", "/bin/wget", "/bin/nslookup", "/bin/ps", "/bin/busybox"] {
        assert!(bb.stat(p).is_ok(), "busybox {p}");
    }
    assert_eq!(alpine.readlink("/bin/sh").as_deref(), Ok("/bin/busybox"));
    assert_eq!(alpine.readlink("/usr/bin/wget").as_deref(), Ok("/bin/busybox"));
    assert_eq!(debian.readlink("/usr/bin/sh").as_deref(), Ok("dash"));
    assert!(debian.stat("/bin/bash").is_ok());
    for p in ["/usr/bin/wget", "/usr/bin/ps", "/usr/bin/nslookup", "/usr/bin/curl"] {
        assert_eq!(debian.stat(p).err(), Some(Errno::ENOENT), "debian {p}");
    }
    let curl = OwnedFs::new(registry::curl_image());
    assert!(curl.stat("/usr/bin/curl").is_ok());
}

#[test]
fn busybox_reports_unknown_applets_and_lists_its_own() {
    let mut os = kubesim_os::testing::FakeOs::new(registry::busybox_image());
    let run = |os: &mut kubesim_os::testing::FakeOs, argv: &[&str]| {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let prog = registry::command(&argv, &registry::default_env("p"), "/", Vec::new(), kubesim_os::Os::fs_ref(os)).expect("busybox");
        kubesim_os::testing::run(prog, os)
    };
    let o = run(&mut os, &["busybox", "nosuchapplet"]);
    assert_eq!((o.stderr_str().as_str(), o.code), ("nosuchapplet: applet not found\n", Some(127)));
    let o = run(&mut os, &["busybox", "echo", "via", "busybox"]);
    assert_eq!(o.stdout_str(), "via busybox\n");
    let o = run(&mut os, &["busybox", "--list"]);
    assert!(o.stdout_str().lines().any(|l| l == "wget"));
}
