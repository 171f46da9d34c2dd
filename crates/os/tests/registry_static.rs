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

#[test]
fn kubelet_managed_hosts_and_resolv_conf_match_what_the_docs_show() {
    // kubernetes.io "Adding entries to Pod /etc/hosts with HostAliases" (`kubectl logs hostaliases-pod`).
    let hosts = registry::kubelet_hosts_file(
        &["10.200.0.5"],
        "hostaliases-pod",
        None,
        &[("127.0.0.1", &["foo.local", "bar.local"]), ("10.1.2.3", &["foo.remote", "bar.remote"])],
    );
    assert_eq!(
        hosts,
        "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n\
         fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.200.0.5\thostaliases-pod\n\n\
         # Entries added by HostAliases.\n127.0.0.1\tfoo.local\tbar.local\n10.1.2.3\tfoo.remote\tbar.remote\n"
    );
    let sub = registry::kubelet_hosts_file(&["10.244.1.5"], "busybox-1", Some("default-subdomain.my-namespace.svc.cluster.local"), &[]);
    assert!(sub.ends_with("fe00::2\tip6-allrouters\n10.244.1.5\tbusybox-1.default-subdomain.my-namespace.svc.cluster.local\tbusybox-1\n"), "{sub}");
    assert_eq!(
        registry::kubelet_resolv_conf("default", "cluster.local", &["10.96.0.10"]),
        "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
    );
}

#[test]
fn kubernetes_dollar_paren_expansion_matches_the_kubelet() {
    // Cases from kubernetes third_party/forked/golang/expansion/expand_test.go.
    let env: std::collections::BTreeMap<String, String> = [("VAR_A", "A"), ("VAR_B", "B"), ("VAR_C", "C"), ("VAR_REF", "$(VAR_A)"), ("VAR_EMPTY", "")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cases = [
        ("$(VAR_A)", "A"),
        ("___$(VAR_B)___", "___B___"),
        ("$(VAR_C)-1", "C-1"),
        ("$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
        ("$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
        ("$$(VAR_A)", "$(VAR_A)"),
        ("$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
        ("$(VAR_DNE)", "$(VAR_DNE)"),
        ("$(VAR_REF)", "$(VAR_A)"),
        ("foo$(VAR_EMPTY)bar", "foobar"),
        ("$(VAR_A", "$(VAR_A"),
        ("$VAR_A", "$VAR_A"),
        ("$$", "$"),
        ("$", "$"),
        ("foo$", "foo$"),
        ("$()", "$()"),
        ("$$$$$$$(VAR_A)", "$$$A"),
        ("echo $(VAR_A) > /tmp/x", "echo A > /tmp/x"),
        ("é$(VAR_A)é$é", "éAé$é"),
    ];
    for (input, want) in cases {
        assert_eq!(registry::expand_kube_vars(input, &env), want, "{input}");
    }
}
