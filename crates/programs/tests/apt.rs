//! apt / apt-get against real Debian 12 (bookworm) output, in the docs' images.
mod support;

use kubesim_os::fs::{Fs, WriteMode};
use kubesim_os::program::Spawn;
use kubesim_os::registry;
use kubesim_os::testing::{run, FakeOs, Outcome};
use support::image;

/// A container of `reference` with `/usr/bin/apt` (the catalogue's `apt` implementation,
/// which the test image leaves to the base tree).
fn container(reference: &str) -> (FakeOs, Spawn) {
    let (mut os, spawn) = image(reference, "pod", Some(&["true"]));
    os.fs.write("/usr/bin/apt", b"#!kubesim apt\n", WriteMode::Truncate).unwrap();
    os.fs.chmod("/usr/bin/apt", 0o755).unwrap();
    (os, spawn)
}

/// Runs `argv` in the container the way `kubectl exec` does (PATH lookup, the image's env).
fn exec(os: &mut FakeOs, base: &Spawn, argv: &[&str]) -> Outcome {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let path = registry::resolve_command(&argv[0], base.env.get("PATH").map(String::as_str), "/", &os.fs).expect("on PATH");
    let spawn = Spawn { argv, path, ..base.clone() };
    let program = match registry::program_for(&spawn, &os.fs) {
        Ok(p) => p,
        Err(ni) => kubesim_programs::program_for(&ni.name, &spawn).unwrap_or_else(|| panic!("no model for {}", ni.name)),
    };
    run(program, os)
}

const BOOKWORM_UPDATE: &str = "\
Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]
Get:2 http://deb.debian.org/debian bookworm-updates InRelease [55.4 kB]
Get:3 http://deb.debian.org/debian-security bookworm-security InRelease [48.0 kB]
Get:4 http://deb.debian.org/debian bookworm/main amd64 Packages [8793 kB]
Get:5 http://deb.debian.org/debian bookworm-updates/main amd64 Packages [6924 B]
Get:6 http://deb.debian.org/debian-security bookworm-security/main amd64 Packages [273 kB]
Fetched 9327 kB in 1s (6843 kB/s)
Reading package lists...
";

const READING: &str = "Reading package lists...\nBuilding dependency tree...\nReading state information...\n";

const APT_WARNING: &str = "\nWARNING: apt does not have a stable CLI interface. Use with caution in scripts.\n\n";

#[test]
fn apt_get_update_fetches_the_bookworm_indexes_in_virtual_time() {
    let (mut os, base) = container("redis");
    let o = exec(&mut os, &base, &["apt-get", "update"]);
    assert_eq!(o.code, Some(0));
    assert_eq!(o.stdout_str(), BOOKWORM_UPDATE);
    assert_eq!(o.stderr_str(), "");
    assert!((1_500..5_000).contains(&o.elapsed_ms), "{} ms", o.elapsed_ms);
    assert!(os.fs.stat("/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_InRelease").is_ok());
}

#[test]
fn apt_update_warns_without_a_terminal_and_summarises_then_hits_the_second_time() {
    let (mut os, base) = container("nginx");
    let o = exec(&mut os, &base, &["apt", "update"]);
    assert_eq!(o.code, Some(0));
    assert_eq!(o.stdout_str(), format!("{BOOKWORM_UPDATE}Building dependency tree...\nReading state information...\nAll packages are up to date.\n"));
    assert_eq!(o.stderr_str(), APT_WARNING);
    let again = exec(&mut os, &base, &["apt-get", "update"]);
    assert_eq!(
        again.stdout_str(),
        "Hit:1 http://deb.debian.org/debian bookworm InRelease\nHit:2 http://deb.debian.org/debian bookworm-updates InRelease\nHit:3 http://deb.debian.org/debian-security bookworm-security InRelease\nReading package lists...\n"
    );
    let quiet = exec(&mut os, &base, &["apt-get", "-qq", "update"]);
    assert_eq!((quiet.code, quiet.stdout_str(), quiet.stderr_str()), (Some(0), String::new(), String::new()));
}

#[test]
fn install_before_update_cannot_locate_the_package() {
    let (mut os, base) = container("redis");
    let o = exec(&mut os, &base, &["apt-get", "install", "-y", "procps"]);
    assert_eq!(o.code, Some(100));
    assert_eq!(o.stdout_str(), READING);
    assert_eq!(o.stderr_str(), "E: Unable to locate package procps\n");
}

const PROCPS: &str = "\
The following additional packages will be installed:
  libgpm2 libncursesw6 libproc2-0 psmisc
Suggested packages:
  gpm
The following NEW packages will be installed:
  libgpm2 libncursesw6 libproc2-0 procps psmisc
0 upgraded, 5 newly installed, 0 to remove and 0 not upgraded.
Need to get 1180 kB of archives.
After this operation, 3914 kB of additional disk space will be used.
Get:1 http://deb.debian.org/debian bookworm/main amd64 libncursesw6 amd64 6.4-4 [134 kB]
Get:2 http://deb.debian.org/debian bookworm/main amd64 libproc2-0 amd64 2:4.0.2-3 [62.8 kB]
Get:3 http://deb.debian.org/debian bookworm/main amd64 procps amd64 2:4.0.2-3 [709 kB]
Get:4 http://deb.debian.org/debian bookworm/main amd64 libgpm2 amd64 1.20.7-10+b1 [14.2 kB]
Get:5 http://deb.debian.org/debian bookworm/main amd64 psmisc amd64 23.6-1 [259 kB]
Fetched 1180 kB in 0s (14.6 MB/s)
Selecting previously unselected package libncursesw6:amd64.
(Reading database ... \r(Reading database ... 5%\r(Reading database ... 10%\r(Reading database ... 15%\r(Reading database ... 20%\r(Reading database ... 25%\r(Reading database ... 30%\r(Reading database ... 35%\r(Reading database ... 40%\r(Reading database ... 45%\r(Reading database ... 50%\r(Reading database ... 55%\r(Reading database ... 60%\r(Reading database ... 65%\r(Reading database ... 70%\r(Reading database ... 75%\r(Reading database ... 80%\r(Reading database ... 85%\r(Reading database ... 90%\r(Reading database ... 95%\r(Reading database ... 100%\r(Reading database ... 6090 files and directories currently installed.)
Preparing to unpack .../00-libncursesw6_6.4-4_amd64.deb ...
Unpacking libncursesw6:amd64 (6.4-4) ...
Selecting previously unselected package libproc2-0:amd64.
Preparing to unpack .../01-libproc2-0_2%3a4.0.2-3_amd64.deb ...
Unpacking libproc2-0:amd64 (2:4.0.2-3) ...
Selecting previously unselected package procps.
Preparing to unpack .../02-procps_2%3a4.0.2-3_amd64.deb ...
Unpacking procps (2:4.0.2-3) ...
Selecting previously unselected package libgpm2:amd64.
Preparing to unpack .../03-libgpm2_1.20.7-10+b1_amd64.deb ...
Unpacking libgpm2:amd64 (1.20.7-10+b1) ...
Selecting previously unselected package psmisc.
Preparing to unpack .../04-psmisc_23.6-1_amd64.deb ...
Unpacking psmisc (23.6-1) ...
Setting up libncursesw6:amd64 (6.4-4) ...
Setting up libproc2-0:amd64 (2:4.0.2-3) ...
Setting up procps (2:4.0.2-3) ...
Setting up libgpm2:amd64 (1.20.7-10+b1) ...
Setting up psmisc (23.6-1) ...
Processing triggers for libc-bin (2.36-9+deb12u10) ...
";

#[test]
fn install_procps_after_update_makes_ps_and_kill_runnable() {
    let (mut os, base) = container("redis");
    assert!(registry::resolve_command("ps", base.env.get("PATH").map(String::as_str), "/", &os.fs).is_err());
    exec(&mut os, &base, &["apt-get", "update"]);
    let o = exec(&mut os, &base, &["apt-get", "install", "-y", "procps"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr_str());
    assert_eq!(o.stdout_str(), format!("{READING}{PROCPS}"));
    assert_eq!(o.stderr_str(), "");
    assert!(o.elapsed_ms >= 1_000, "{} ms", o.elapsed_ms);
    for exe in ["ps", "kill", "free", "killall"] {
        assert!(registry::resolve_command(exe, base.env.get("PATH").map(String::as_str), "/", &os.fs).is_ok(), "{exe}");
    }
    // Only what some model runs is written (top would hang as an unmodelled program).
    assert!(registry::resolve_command("top", base.env.get("PATH").map(String::as_str), "/", &os.fs).is_err());
    let ps = exec(&mut os, &base, &["ps", "aux"]);
    assert_eq!(ps.code, Some(0));
    assert!(ps.stdout_str().starts_with("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n"), "{}", ps.stdout_str());
    let again = exec(&mut os, &base, &["apt-get", "install", "-y", "procps"]);
    assert_eq!(
        again.stdout_str(),
        format!("{READING}procps is already the newest version (2:4.0.2-3).\n0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n")
    );
    let status = String::from_utf8(os.fs.read("/var/lib/dpkg/status").unwrap()).unwrap();
    assert_eq!(kubesim_programs::apt::dpkg_status(&status).get("procps").map(String::as_str), Some("2:4.0.2-3"));
}

#[test]
fn nginx_already_has_curl() {
    let (mut os, base) = container("nginx");
    exec(&mut os, &base, &["apt", "update"]);
    let o = exec(&mut os, &base, &["apt", "install", "-y", "curl"]);
    assert_eq!(o.code, Some(0));
    assert_eq!(
        o.stdout_str(),
        format!("{READING}curl is already the newest version (7.88.1-10+deb12u12).\n0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n")
    );
    assert_eq!(o.stderr_str(), APT_WARNING);
}

#[test]
fn install_curl_pulls_its_libraries_and_recommends() {
    let (mut os, base) = container("redis");
    exec(&mut os, &base, &["apt-get", "update"]);
    let o = exec(&mut os, &base, &["apt-get", "install", "-y", "curl"]);
    assert_eq!(o.code, Some(0));
    let out = o.stdout_str();
    let head = "\
The following additional packages will be installed:
  ca-certificates libbrotli1 libcurl4 libldap-2.5-0 libldap-common
  libnghttp2-14 libpsl5 librtmp1 libsasl2-2 libsasl2-modules
  libsasl2-modules-db libssh2-1 openssl publicsuffix
Suggested packages:
  libsasl2-modules-gssapi-mit | libsasl2-modules-gssapi-heimdal
  libsasl2-modules-ldap libsasl2-modules-otp libsasl2-modules-sql
The following NEW packages will be installed:
  ca-certificates curl libbrotli1 libcurl4 libldap-2.5-0 libldap-common
  libnghttp2-14 libpsl5 librtmp1 libsasl2-2 libsasl2-modules
  libsasl2-modules-db libssh2-1 openssl publicsuffix
0 upgraded, 15 newly installed, 0 to remove and 0 not upgraded.
";
    assert!(out.starts_with(&format!("{READING}{head}")), "{out}");
    assert!(out.contains("Get:10 http://deb.debian.org/debian bookworm/main amd64 curl amd64 7.88.1-10+deb12u12 [315 kB]\n"), "{out}");
    assert!(out.contains("Setting up curl (7.88.1-10+deb12u12) ...\n"));
    assert!(out.ends_with("Processing triggers for ca-certificates (20230311+deb12u1) ...\nUpdating certificates in /etc/ssl/certs...\n0 added, 0 removed; done.\nRunning hooks in /etc/ca-certificates/update.d...\ndone.\n"), "{out}");
    assert!(o.stderr_str().starts_with("debconf: delaying package configuration, since apt-utils is not installed\n"), "{}", o.stderr_str());
    assert!(os.fs.read("/usr/bin/curl").unwrap().starts_with(b"#!kubesim curl"));
    assert!(o.stderr_str().contains("debconf: falling back to frontend: Teletype\n"));
    // DEBIAN_FRONTEND=noninteractive silences the frontend fallbacks, not the delay notice.
    let (mut os, mut base) = container("redis");
    base.env.insert("DEBIAN_FRONTEND".into(), "noninteractive".into());
    exec(&mut os, &base, &["apt-get", "update"]);
    let o = exec(&mut os, &base, &["apt-get", "install", "-y", "curl"]);
    assert_eq!(o.stderr_str(), "debconf: delaying package configuration, since apt-utils is not installed\n");
    // --no-install-recommends lists what it leaves out.
    let (mut os, base) = container("redis");
    exec(&mut os, &base, &["apt-get", "update"]);
    let o = exec(&mut os, &base, &["apt-get", "install", "-y", "--no-install-recommends", "procps"]);
    assert!(o.stdout_str().starts_with(&format!("{READING}The following additional packages will be installed:\n  libncursesw6 libproc2-0\nRecommended packages:\n  libgpm2 psmisc\nThe following NEW packages will be installed:\n  libncursesw6 libproc2-0 procps\n0 upgraded, 3 newly installed")), "{}", o.stdout_str());
}

#[test]
fn refusals_and_errors_exit_as_apt_does() {
    let (mut os, base) = container("redis");
    exec(&mut os, &base, &["apt-get", "update"]);
    let o = exec(&mut os, &base, &["apt-get", "install", "-y", "no-such-package"]);
    assert_eq!((o.code, o.stdout_str(), o.stderr_str()), (Some(100), READING.to_string(), "E: Unable to locate package no-such-package\n".to_string()));
    // Without -y and without a terminal the prompt reads EOF and aborts.
    let o = exec(&mut os, &base, &["apt-get", "install", "procps"]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stdout_str().ends_with("After this operation, 3914 kB of additional disk space will be used.\nDo you want to continue? [Y/n] Abort.\n"),
        "{}",
        o.stdout_str()
    );
    let o = exec(&mut os, &base, &["apt-get", "frobnicate"]);
    assert_eq!((o.code, o.stderr_str()), (Some(100), "E: Invalid operation frobnicate\n".to_string()));
    let o = exec(&mut os, &base, &["apt-get"]);
    assert_eq!(o.code, Some(1));
    assert!(o.stdout_str().starts_with("apt 2.6.1 (amd64)\nUsage: apt-get [options] command\n"));
    os.creds.uid = 999;
    let o = exec(&mut os, &base, &["apt-get", "update"]);
    assert_eq!(o.code, Some(100));
    assert_eq!(
        o.stderr_str(),
        "E: Could not open lock file /var/lib/apt/lists/lock - open (13: Permission denied)\nE: Unable to lock directory /var/lib/apt/lists/\n"
    );
    let o = exec(&mut os, &base, &["apt-get", "install", "-y", "curl"]);
    assert_eq!(o.code, Some(100));
    assert!(o.stderr_str().ends_with("are you root?\n"));
}

#[test]
fn sizes_print_like_apts_size_to_str() {
    use kubesim_programs::apt::size_to_str;
    for (bytes, want) in [
        (151_000.0, "151 k"),
        (55_400.0, "55.4 k"),
        (48_000.0, "48.0 k"),
        (6_924.0, "6924 "),
        (9_327_324.0, "9327 k"),
        (10_900_000.0, "10.9 M"),
        (14_600_000.0, "14.6 M"),
    ] {
        assert_eq!(size_to_str(bytes), want, "{bytes}");
    }
}

#[test]
fn stretch_is_gone_from_the_mirrors() {
    let (mut os, base) = container("nginx:1.14.2");
    let o = exec(&mut os, &base, &["apt-get", "update"]);
    assert_eq!(o.code, Some(100));
    assert_eq!(
        o.stdout_str(),
        "\
Ign:1 http://security.debian.org/debian-security stretch/updates InRelease
Ign:2 http://deb.debian.org/debian stretch InRelease
Ign:3 http://deb.debian.org/debian stretch-updates InRelease
Ign:4 http://security.debian.org/debian-security stretch/updates Release
Ign:5 http://deb.debian.org/debian stretch Release
Ign:6 http://deb.debian.org/debian stretch-updates Release
Ign:7 http://security.debian.org/debian-security stretch/updates/main all Packages
Err:8 http://security.debian.org/debian-security stretch/updates/main amd64 Packages
  404  Not Found [IP: 151.101.66.132 80]
Ign:9 http://deb.debian.org/debian stretch/main all Packages
Err:10 http://deb.debian.org/debian stretch/main amd64 Packages
  404  Not Found [IP: 199.232.18.132 80]
Ign:11 http://deb.debian.org/debian stretch-updates/main all Packages
Err:12 http://deb.debian.org/debian stretch-updates/main amd64 Packages
  404  Not Found [IP: 199.232.18.132 80]
Reading package lists...
"
    );
    assert_eq!(
        o.stderr_str(),
        "\
W: The repository 'http://security.debian.org/debian-security stretch/updates Release' does not have a Release file.
W: The repository 'http://deb.debian.org/debian stretch Release' does not have a Release file.
W: The repository 'http://deb.debian.org/debian stretch-updates Release' does not have a Release file.
E: Failed to fetch http://security.debian.org/debian-security/dists/stretch/updates/main/binary-amd64/Packages  404  Not Found [IP: 151.101.66.132 80]
E: Failed to fetch http://deb.debian.org/debian/dists/stretch/main/binary-amd64/Packages  404  Not Found [IP: 199.232.18.132 80]
E: Failed to fetch http://deb.debian.org/debian/dists/stretch-updates/main/binary-amd64/Packages  404  Not Found [IP: 199.232.18.132 80]
E: Some index files failed to download. They have been ignored, or old ones used instead.
"
    );
    let o = exec(&mut os, &base, &["apt-get", "install", "-y", "procps"]);
    assert_eq!((o.code, o.stderr_str()), (Some(100), "E: Unable to locate package procps\n".to_string()));
}
