//! `apt` and `apt-get` (APT 2.6, Debian 12 bookworm) as the Kubernetes docs use them inside
//! Debian-based containers: `apt update`, `apt-get update`, `apt install -y curl`,
//! `apt-get install -y procps`...
//!
//! The output is what APT prints when its stdout is not a terminal (kubesim models no
//! terminals; `kubectl exec` without `-t` is the same on a real cluster): quiet level 1, so
//! `Reading package lists...` without the ` Done` a terminal shows, no progress bars, and for
//! `apt` the `WARNING: apt does not have a stable CLI interface` banner on stderr. Fetching
//! takes virtual time (a few seconds); nothing goes over the modelled network (the mirrors are
//! outside the cluster).
//!
//! State lives in the container's filesystem, so it lasts exactly as long as the container:
//! `update` writes the package lists under `/var/lib/apt/lists/`, and without them (the state
//! of every docker-library image) `install` of a package that is not installed fails with
//! `E: Unable to locate package curl` (exit 100), as it does on a fresh container. `install`
//! resolves dependencies and recommends from the table below, prints APT's and dpkg's
//! output, records the packages in `/var/lib/dpkg/status` and writes their executables as
//! `#!kubesim <implementation>` files, so `apt-get install -y procps` makes `ps` runnable.
//! Only executables some model implements are written (`ps`, `kill`, `free`, `uptime` from
//! procps; not `top`). A package counts as installed when `/var/lib/dpkg/status` lists it or
//! one of its executables exists (curl in the nginx image), together with its dependencies.
//!
//! The package table is bookworm's (amd64, point release 12.11 with security updates, as of
//! the catalogue's snapshot); archive and installed sizes are approximate. Other Debian and
//! Ubuntu releases get their own mirrors and suites in `update` (index sizes approximate for
//! all but bookworm; stretch and older, gone from the mirrors, fail with 404s as they do today), and
//! the same table for `install`. Names outside the table are reported as not found.

use crate::common;
use kubesim_os::program::{default_signal_exit, Os, Program, Spawn, Step, Wake};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// One package of the table.
struct Pkg {
    name: &'static str,
    version: &'static str,
    /// `amd64` or `all`.
    arch: &'static str,
    /// Size of the `.deb` in bytes.
    size: u64,
    /// `Installed-Size` in KiB.
    installed_kib: u64,
    depends: &'static [&'static str],
    recommends: &'static [&'static str],
    /// Suggests entries as APT prints them (`a | b` for alternatives).
    suggests: &'static [&'static str],
    /// Executables: (path as dpkg ships it, `#!kubesim` marker).
    files: &'static [(&'static str, &'static str)],
    /// Whether the package's maintainer scripts talk to debconf (APT then says
    /// `debconf: delaying package configuration, since apt-utils is not installed`).
    debconf: bool,
    /// Lines `Setting up` prints after its own line.
    setup_output: &'static str,
}

const fn pkg(name: &'static str, version: &'static str, arch: &'static str, size: u64, installed_kib: u64) -> Pkg {
    Pkg { name, version, arch, size, installed_kib, depends: &[], recommends: &[], suggests: &[], files: &[], debconf: false, setup_output: "" }
}

const CA_SETUP: &str = "Updating certificates in /etc/ssl/certs...\n142 added, 0 removed; done.\n";

/// The bookworm packages the docs (and their readers) install, with the dependencies a
/// docker-library `bookworm-slim` based image lacks.
static PACKAGES: &[Pkg] = &[
    Pkg { depends: &["openssl"], debconf: true, setup_output: CA_SETUP, ..pkg("ca-certificates", "20230311+deb12u1", "all", 162_980, 385) },
    Pkg { depends: &["libcurl4"], files: &[("/usr/bin/curl", "curl")], ..pkg("curl", "7.88.1-10+deb12u12", "amd64", 315_408, 500) },
    Pkg { depends: &["bind9-dnsutils"], ..pkg("dnsutils", "1:9.18.33-1~deb12u2", "all", 11_420, 21) },
    Pkg {
        depends: &["bind9-host", "bind9-libs", "libedit2"],
        files: &[("/usr/bin/dig", "dig"), ("/usr/bin/nslookup", "nslookup-bind")],
        ..pkg("bind9-dnsutils", "1:9.18.33-1~deb12u2", "amd64", 403_452, 1_048)
    },
    Pkg { depends: &["bind9-libs"], ..pkg("bind9-host", "1:9.18.33-1~deb12u2", "amd64", 54_776, 146) },
    Pkg {
        depends: &["libfstrm0", "libjson-c5", "liblmdb0", "libmaxminddb0", "libnghttp2-14", "libprotobuf-c1", "libuv1", "libxml2"],
        ..pkg("bind9-libs", "1:9.18.33-1~deb12u2", "amd64", 1_181_284, 3_522)
    },
    Pkg { recommends: &["libcap2-bin"], files: &[("/bin/ping", "ping")], ..pkg("iputils-ping", "3:20221126-1+deb12u1", "amd64", 47_244, 119) },
    Pkg { ..pkg("libbrotli1", "1.0.9-2+b6", "amd64", 275_040, 797) },
    Pkg { ..pkg("libbsd0", "0.11.7-2", "amd64", 117_120, 307) },
    Pkg { ..pkg("libcap2-bin", "1:2.66-4+deb12u1", "amd64", 34_716, 126) },
    Pkg {
        depends: &["libbrotli1", "libldap-2.5-0", "libnghttp2-14", "libpsl5", "librtmp1", "libssh2-1"],
        recommends: &["ca-certificates"],
        ..pkg("libcurl4", "7.88.1-10+deb12u12", "amd64", 390_712, 1_005)
    },
    Pkg { ..pkg("libedit2", "3.1-20221030-2", "amd64", 93_632, 257) },
    Pkg { ..pkg("libfstrm0", "0.6.1-1", "amd64", 21_644, 68) },
    Pkg { suggests: &["gpm"], ..pkg("libgpm2", "1.20.7-10+b1", "amd64", 14_200, 37) },
    Pkg { ..pkg("libicu72", "72.1-3+deb12u1", "amd64", 9_386_480, 36_970) },
    Pkg { ..pkg("libjson-c5", "0.16-2", "amd64", 44_076, 122) },
    Pkg { depends: &["libsasl2-2"], recommends: &["libldap-common"], ..pkg("libldap-2.5-0", "2.5.13+dfsg-5", "amd64", 183_080, 515) },
    Pkg { ..pkg("libldap-common", "2.5.13+dfsg-5", "all", 29_268, 120) },
    Pkg { ..pkg("liblmdb0", "0.9.24-1", "amd64", 45_044, 105) },
    Pkg { suggests: &["mmdb-bin"], ..pkg("libmaxminddb0", "1.7.1-1", "amd64", 29_752, 85) },
    Pkg { recommends: &["libgpm2"], ..pkg("libncursesw6", "6.4-4", "amd64", 134_168, 412) },
    Pkg { ..pkg("libnghttp2-14", "1.52.0-1+deb12u2", "amd64", 72_972, 213) },
    Pkg { ..pkg("libproc2-0", "2:4.0.2-3", "amd64", 62_820, 182) },
    Pkg { ..pkg("libprotobuf-c1", "1.4.1-1+b1", "amd64", 27_536, 69) },
    Pkg { recommends: &["publicsuffix"], ..pkg("libpsl5", "0.21.2-1", "amd64", 58_680, 90) },
    Pkg { ..pkg("librtmp1", "2.4+20151223.gitfa8646d.1-2+b2", "amd64", 60_844, 141) },
    Pkg { depends: &["libsasl2-modules-db"], recommends: &["libsasl2-modules"], ..pkg("libsasl2-2", "2.1.28+dfsg-10", "amd64", 59_676, 159) },
    Pkg {
        suggests: &["libsasl2-modules-gssapi-mit | libsasl2-modules-gssapi-heimdal", "libsasl2-modules-ldap", "libsasl2-modules-otp", "libsasl2-modules-sql"],
        ..pkg("libsasl2-modules", "2.1.28+dfsg-10", "amd64", 66_632, 266)
    },
    Pkg { ..pkg("libsasl2-modules-db", "2.1.28+dfsg-10", "amd64", 20_256, 100) },
    Pkg { ..pkg("libssh2-1", "1.10.0-3+b1", "amd64", 179_320, 443) },
    Pkg { ..pkg("libuv1", "1.44.2-1+deb12u1", "amd64", 137_000, 337) },
    Pkg { depends: &["libicu72"], ..pkg("libxml2", "2.9.14+dfsg-1.3~deb12u2", "amd64", 687_408, 2_079) },
    Pkg {
        depends: &["libbsd0"],
        files: &[("/bin/nc.openbsd", "netcat-openbsd"), ("/bin/nc", "netcat-openbsd"), ("/bin/netcat", "netcat-openbsd")],
        ..pkg("netcat-openbsd", "1.219-1", "amd64", 41_464, 106)
    },
    Pkg { suggests: &["ca-certificates"], files: &[], ..pkg("openssl", "3.0.17-1~deb12u2", "amd64", 1_430_640, 2_393) },
    Pkg {
        depends: &["libncursesw6", "libproc2-0"],
        recommends: &["psmisc"],
        files: &[
            ("/bin/ps", "coreutils"),
            ("/bin/kill", "coreutils"),
            ("/usr/bin/free", "coreutils"),
            ("/usr/bin/uptime", "coreutils"),
            ("/usr/bin/top", "coreutils"),
            ("/usr/bin/pgrep", "coreutils"),
            ("/usr/bin/pkill", "coreutils"),
        ],
        ..pkg("procps", "2:4.0.2-3", "amd64", 709_196, 2_304)
    },
    Pkg { files: &[("/usr/bin/killall", "coreutils"), ("/usr/bin/pstree", "coreutils")], ..pkg("psmisc", "23.6-1", "amd64", 259_228, 887) },
    Pkg { ..pkg("publicsuffix", "20230209.2326-1", "all", 126_268, 313) },
    Pkg { depends: &["libpsl5"], recommends: &["ca-certificates"], files: &[("/usr/bin/wget", "wget")], ..pkg("wget", "1.21.3-1+b2", "amd64", 984_328, 3_698) },
];

/// What dpkg prints for the triggers of the libraries it unpacked.
const LIBC_BIN: &str = "2.36-9+deb12u10";

fn find(name: &str) -> Option<&'static Pkg> {
    PACKAGES.iter().find(|p| p.name == name)
}

/// A release's mirrors for `update`: (URL, suite, InRelease size, [(component, Packages size)]).
type Suite = (&'static str, String, u64, Vec<(&'static str, u64)>);

fn suites(id: &str, codename: &str) -> Vec<Suite> {
    let c = codename;
    if id == "ubuntu" {
        let a = "http://archive.ubuntu.com/ubuntu";
        let s = "http://security.ubuntu.com/ubuntu";
        return vec![
            (a, c.to_string(), 256_000, vec![("universe", 19_300_000), ("main", 1_808_000), ("multiverse", 331_000), ("restricted", 117_000)]),
            (a, format!("{c}-updates"), 126_000, vec![("main", 1_684_000), ("universe", 1_501_000), ("restricted", 2_107_000), ("multiverse", 35_300)]),
            (a, format!("{c}-backports"), 126_000, vec![("universe", 33_800), ("main", 49_400)]),
            (s, format!("{c}-security"), 126_000, vec![("main", 1_299_000), ("universe", 1_116_000), ("restricted", 2_004_000), ("multiverse", 31_800)]),
        ];
    }
    let d = "http://deb.debian.org/debian";
    let sec = "http://deb.debian.org/debian-security";
    let (release, updates, security, main, upd_main, sec_main) = match c {
        "trixie" => (140_000, 47_300, 43_400, 9_670_000, 5_412, 37_400),
        "bullseye" => (75_100, 44_100, 27_200, 8_066_000, 18_800, 364_000),
        _ => (151_000, 55_400, 48_000, 8_793_000, 6_924, 273_000),
    };
    // Up to buster the security suite was `<codename>/updates` on security.debian.org.
    let (sec, sec_suite) = if matches!(c, "buster" | "stretch" | "jessie") {
        ("http://security.debian.org/debian-security", format!("{c}/updates"))
    } else {
        (sec, format!("{c}-security"))
    };
    vec![
        (d, c.to_string(), release, vec![("main", main)]),
        (d, format!("{c}-updates"), updates, vec![("main", upd_main)]),
        (sec, sec_suite, security, vec![("main", sec_main)]),
    ]
}

/// APT's `SizeToStr` (powers of 1000, three or four significant digits): `151 k`, `55.4 k`,
/// `6924 `, `10.9 M`. Callers append the unit (`B`, `B/s`).
pub fn size_to_str(bytes: f64) -> String {
    let ext = ['\0', 'k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
    let mut a = bytes.abs();
    for (i, e) in ext.iter().enumerate() {
        let suffix = if *e == '\0' { String::new() } else { e.to_string() };
        if a < 100.0 && i != 0 {
            return format!("{a:.1} {suffix}");
        }
        if a < 10_000.0 {
            return format!("{a:.0} {suffix}");
        }
        a /= 1000.0;
    }
    format!("{a:.0} Y")
}

/// APT's `ShowList`: the title, then the words two-space indented, a new line whenever the
/// next word would reach column 76 (`ScreenWidth` 79 less 3, without a terminal).
pub fn show_list(title: &str, words: &[String]) -> String {
    if words.is_empty() {
        return String::new();
    }
    let width = 79 - 3;
    let mut out = title.to_string();
    let mut used = 0;
    for w in words {
        if used == 0 || used + w.len() >= width {
            out.push_str("\n  ");
            used = 0;
        } else {
            out.push(' ');
            used += 1;
        }
        out.push_str(w);
        used += w.len();
    }
    out.push('\n');
    out
}

/// One thing the program does, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Act {
    Out(String),
    Err(String),
    Sleep(u64),
    Write(String, String),
    Exit(i32),
}

/// `apt` / `apt-get`.
#[derive(Clone, Debug)]
pub struct Apt {
    spawn: Spawn,
    /// `apt` (true) or `apt-get`.
    apt: bool,
    plan: VecDeque<Act>,
    planned: bool,
}

impl Apt {
    /// The program for this spawn; `apt` or `apt-get` by the executable's name.
    pub fn new(spawn: &Spawn) -> Apt {
        let exe = if spawn.path.is_empty() { common::argv0_name(spawn) } else { kubesim_os::fs::basename(&spawn.path) };
        Apt { spawn: spawn.clone(), apt: exe == "apt", plan: VecDeque::new(), planned: false }
    }

    fn plan(&mut self, os: &mut dyn Os) {
        let noninteractive = self.spawn.env.get("DEBIAN_FRONTEND").is_some_and(|v| v == "noninteractive");
        let mut p = Planner { os, apt: self.apt, stdin: self.spawn.stdin.clone(), noninteractive, acts: Vec::new() };
        p.run(&self.spawn);
        self.plan = p.acts.into();
    }
}

impl Program for Apt {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Wake::Signal(sig) = wake {
            if let Some(code) = default_signal_exit(os, sig) {
                return Step::Exit(code);
            }
        }
        if !self.planned {
            self.planned = true;
            self.plan(os);
        }
        while let Some(act) = self.plan.pop_front() {
            match act {
                Act::Out(s) => common::out(os, &s),
                Act::Err(s) => common::err(os, &s),
                Act::Write(path, data) => {
                    let _ = common::write_file(os, &path, data.as_bytes());
                    if data.starts_with("#!kubesim") {
                        let _ = os.fs().chmod(&path, 0o755);
                    }
                }
                Act::Sleep(ms) => return Step::Sleep(ms),
                Act::Exit(code) => return Step::Exit(code),
            }
        }
        Step::Exit(0)
    }

    fn memory_bytes(&self) -> u64 {
        40 << 20
    }
}

struct Planner<'a> {
    os: &'a mut dyn Os,
    apt: bool,
    stdin: Vec<u8>,
    /// `DEBIAN_FRONTEND=noninteractive`: debconf asks nothing and says nothing about frontends.
    noninteractive: bool,
    acts: Vec<Act>,
}

/// Parsed command line.
#[derive(Default)]
struct Cmd {
    yes: bool,
    quiet: u32,
    no_recommends: bool,
    words: Vec<String>,
}

fn parse(argv: &[String]) -> Result<Cmd, String> {
    let mut c = Cmd::default();
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-y" | "--yes" | "--assume-yes" => c.yes = true,
            "-q" | "--quiet" => c.quiet += 1,
            "-qq" => c.quiet += 2,
            "--no-install-recommends" => c.no_recommends = true,
            "--install-recommends" => c.no_recommends = false,
            "-o" | "-c" => {
                if let Some(v) = it.next() {
                    if let Some(q) = v.strip_prefix("quiet=") {
                        c.quiet = q.parse().unwrap_or(c.quiet);
                    }
                }
            }
            s if s.starts_with("--quiet=") => c.quiet = s["--quiet=".len()..].parse().unwrap_or(c.quiet),
            s if s.starts_with("-o") && s.len() > 2 => {}
            s if s.starts_with("--") => {
                let name = s.trim_start_matches("--").split('=').next().unwrap_or("");
                if !KNOWN_LONG.contains(&name) {
                    return Err(format!("E: Command line option --{name} is not understood in combination with the other options\n"));
                }
            }
            s if s.starts_with('-') && s.len() > 1 => {
                for ch in s[1..].chars() {
                    match ch {
                        'y' => c.yes = true,
                        'q' => c.quiet += 1,
                        'f' | 'm' | 'u' | 'V' | 'd' | 'b' => {}
                        other => return Err(format!("E: Command line option '{other}' [from {s}] is not understood in combination with the other options.\n")),
                    }
                }
            }
            _ => c.words.push(a.clone()),
        }
    }
    Ok(c)
}

const KNOWN_LONG: &[&str] = &[
    "fix-broken",
    "fix-missing",
    "ignore-missing",
    "no-download",
    "download-only",
    "simulate",
    "dry-run",
    "show-upgraded",
    "allow-unauthenticated",
    "no-upgrade",
    "only-upgrade",
    "reinstall",
    "allow-downgrades",
    "allow-remove-essential",
    "allow-change-held-packages",
    "purge",
    "auto-remove",
    "autoremove",
    "force-yes",
    "print-uris",
    "list-cleanup",
];

impl Planner<'_> {
    fn out(&mut self, s: impl Into<String>) {
        self.acts.push(Act::Out(s.into()));
    }

    fn err(&mut self, s: impl Into<String>) {
        self.acts.push(Act::Err(s.into()));
    }

    fn sleep(&mut self, ms: u64) {
        self.acts.push(Act::Sleep(ms));
    }

    fn exit(&mut self, code: i32) {
        self.acts.push(Act::Exit(code));
    }

    fn read(&self, path: &str) -> Option<String> {
        self.os.fs_ref().read(path).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    fn exists(&self, path: &str) -> bool {
        self.os.fs_ref().stat(path).is_ok()
    }

    /// (`ID`, `VERSION_CODENAME`) from `/etc/os-release` (bookworm when unknown).
    fn release(&self) -> (String, String) {
        let text = self.read("/etc/os-release").or_else(|| self.read("/usr/lib/os-release")).unwrap_or_default();
        let field = |k: &str| {
            text.lines().find_map(|l| l.strip_prefix(k).and_then(|v| v.strip_prefix('='))).map(|v| v.trim_matches('"').to_string()).filter(|v| !v.is_empty())
        };
        let id = field("ID").unwrap_or_else(|| "debian".into());
        let codename = field("VERSION_CODENAME").or_else(|| field("UBUNTU_CODENAME")).unwrap_or_else(|| {
            // Older os-release files have no VERSION_CODENAME: `VERSION="9 (stretch)"`.
            field("VERSION").and_then(|v| v.split_once('(').map(|(_, r)| r.trim_end_matches(')').to_string())).unwrap_or_else(|| "bookworm".into())
        });
        (id, codename)
    }

    fn run(&mut self, spawn: &Spawn) {
        let cmd = match parse(&spawn.argv) {
            Ok(c) => c,
            Err(e) => {
                self.err(e);
                self.exit(100);
                return;
            }
        };
        let quiet = cmd.quiet.max(1);
        let Some(op) = cmd.words.first().cloned() else {
            self.out(if self.apt { APT_HELP } else { APT_GET_HELP });
            self.exit(1);
            return;
        };
        if self.apt && cmd.quiet == 0 {
            self.err("\nWARNING: apt does not have a stable CLI interface. Use with caution in scripts.\n\n");
        }
        let root = self.os.creds().uid == 0;
        match op.as_str() {
            "update" => self.update(quiet, root),
            "install" => self.install(&cmd, quiet, root),
            "upgrade" | "dist-upgrade" | "full-upgrade" => {
                if !root {
                    self.lock_error_dpkg(quiet);
                    return;
                }
                self.reading(quiet, true);
                if quiet < 2 {
                    self.out("Calculating upgrade...\n");
                }
                self.out("0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n");
                self.exit(0);
            }
            "help" => {
                self.out(if self.apt { APT_HELP } else { APT_GET_HELP });
                self.exit(0);
            }
            other => {
                self.err(format!("E: Invalid operation {other}\n"));
                self.exit(100);
            }
        }
    }

    /// `Reading package lists...` (and with `tree`, `Building dependency tree...` and
    /// `Reading state information...`), with the time each takes.
    fn reading(&mut self, quiet: u32, tree: bool) {
        let lists_ms = if self.has_lists() { 400 } else { 20 };
        self.sleep(lists_ms);
        if quiet < 2 {
            self.out("Reading package lists...\n");
        }
        if tree {
            self.sleep(if lists_ms > 20 { 150 } else { 10 });
            if quiet < 2 {
                self.out("Building dependency tree...\n");
            }
            self.sleep(20);
            if quiet < 2 {
                self.out("Reading state information...\n");
            }
        }
    }

    fn lists_file(&self) -> String {
        let (id, c) = self.release();
        if id == "ubuntu" {
            format!("/var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_{c}_main_binary-amd64_Packages.lz4")
        } else {
            format!("/var/lib/apt/lists/deb.debian.org_debian_dists_{c}_main_binary-amd64_Packages.lz4")
        }
    }

    fn has_lists(&self) -> bool {
        self.exists(&self.lists_file())
    }

    fn update(&mut self, quiet: u32, root: bool) {
        if !root {
            self.reading(quiet, false);
            self.err("E: Could not open lock file /var/lib/apt/lists/lock - open (13: Permission denied)\nE: Unable to lock directory /var/lib/apt/lists/\n");
            self.exit(100);
            return;
        }
        let (id, codename) = self.release();
        // Older releases are gone too; they print here in stretch's (APT 1.4) wording.
        if id == "debian" && matches!(codename.as_str(), "stretch" | "jessie" | "wheezy" | "squeeze") {
            self.update_removed(quiet, &codename);
            return;
        }
        let suites = suites(&id, &codename);
        // Lists already fetched: the mirrors answer 304 and APT says `Hit:` (and no `Fetched`).
        let hit = self.has_lists();
        let mut n = 0;
        let mut fetched = 0u64;
        let mut elapsed_ms = 0u64;
        // The InRelease files first (one per suite), then the Packages indexes they list.
        for (url, suite, size, _) in &suites {
            n += 1;
            if hit {
                self.sleep(60);
                if quiet < 2 {
                    self.out(format!("Hit:{n} {url} {suite} InRelease\n"));
                }
                continue;
            }
            fetched += size;
            let ms = 40 + size / 5_000;
            elapsed_ms += ms;
            self.sleep(ms);
            if quiet < 2 {
                self.out(format!("Get:{n} {url} {suite} InRelease [{}B]\n", size_to_str(*size as f64)));
            }
        }
        for (url, suite, _, comps) in suites.iter().filter(|_| !hit) {
            for (comp, size) in comps {
                n += 1;
                fetched += size;
                let ms = 20 + size / 8_000;
                elapsed_ms += ms;
                self.sleep(ms);
                if quiet < 2 {
                    self.out(format!("Get:{n} {url} {suite}/{comp} amd64 Packages [{}B]\n", size_to_str(*size as f64)));
                }
            }
        }
        if quiet < 2 && fetched > 0 {
            let secs = elapsed_ms as f64 / 1000.0;
            self.out(format!("Fetched {}B in {}s ({}B/s)\n", size_to_str(fetched as f64), elapsed_ms / 1000, size_to_str(fetched as f64 / secs.max(0.001))));
        }
        let host = if id == "ubuntu" { "archive.ubuntu.com_ubuntu" } else { "deb.debian.org_debian" };
        for (_, suite, _, comps) in &suites {
            let h = if suite.ends_with("/updates") {
                "security.debian.org_debian-security"
            } else if suite.ends_with("-security") && id != "ubuntu" {
                "deb.debian.org_debian-security"
            } else if suite.ends_with("-security") {
                "security.ubuntu.com_ubuntu"
            } else {
                host
            };
            let file = suite.replace('/', "_");
            self.acts.push(Act::Write(
                format!("/var/lib/apt/lists/{h}_dists_{file}_InRelease"),
                format!("Origin: {}\nSuite: {suite}\n", if id == "ubuntu" { "Ubuntu" } else { "Debian" }),
            ));
            for (comp, _) in comps {
                self.acts.push(Act::Write(format!("/var/lib/apt/lists/{h}_dists_{file}_{comp}_binary-amd64_Packages.lz4"), String::new()));
            }
        }
        // The lists exist now: reading them takes its time.
        self.sleep(600);
        if quiet < 2 {
            self.out("Reading package lists...\n");
        }
        if self.apt {
            self.sleep(150);
            if quiet < 2 {
                self.out("Building dependency tree...\n");
            }
            self.sleep(20);
            if quiet < 2 {
                self.out("Reading state information...\n");
            }
            if quiet < 2 {
                self.out("All packages are up to date.\n");
            }
        }
        self.exit(0);
    }

    /// A release the Debian mirrors no longer serve (stretch left deb.debian.org for
    /// archive.debian.org in 2023): every index is a 404; APT 1.4 warns per repository and
    /// fails (exit 100). The notices (`N:`) are not printed at quiet level 1.
    fn update_removed(&mut self, quiet: u32, c: &str) {
        let deb = ("http://deb.debian.org/debian", "199.232.18.132");
        let sec = ("http://security.debian.org/debian-security", "151.101.66.132");
        let repos = [(sec, format!("{c}/updates")), (deb, c.to_string()), (deb, format!("{c}-updates"))];
        let mut n = 0;
        let mut lines = String::new();
        for kind in ["InRelease", "Release"] {
            for ((url, _), suite) in &repos {
                n += 1;
                lines.push_str(&format!("Ign:{n} {url} {suite} {kind}\n"));
            }
        }
        for ((url, ip), suite) in &repos {
            n += 1;
            lines.push_str(&format!("Ign:{n} {url} {suite}/main all Packages\n"));
            n += 1;
            lines.push_str(&format!("Err:{n} {url} {suite}/main amd64 Packages\n  404  Not Found [IP: {ip} 80]\n"));
        }
        self.sleep(900);
        if quiet < 2 {
            self.out(lines);
        }
        self.sleep(10);
        if quiet < 2 {
            self.out("Reading package lists...\n");
        }
        let mut e = String::new();
        for ((url, _), suite) in &repos {
            e.push_str(&format!("W: The repository '{url} {suite} Release' does not have a Release file.\n"));
        }
        for ((url, ip), suite) in &repos {
            e.push_str(&format!("E: Failed to fetch {url}/dists/{suite}/main/binary-amd64/Packages  404  Not Found [IP: {ip} 80]\n"));
        }
        e.push_str("E: Some index files failed to download. They have been ignored, or old ones used instead.\n");
        self.err(e);
        self.exit(100);
    }

    fn lock_error_dpkg(&mut self, _quiet: u32) {
        self.err("E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)\nE: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), are you root?\n");
        self.exit(100);
    }

    /// Packages dpkg knows: those in `/var/lib/dpkg/status`, those whose executables the
    /// image has, and everything they depend on.
    fn installed(&self) -> BTreeSet<&'static str> {
        let status = self.read("/var/lib/dpkg/status").unwrap_or_default();
        let mut set = BTreeSet::new();
        let mut todo: Vec<&'static Pkg> = Vec::new();
        for p in PACKAGES {
            let listed = status.lines().any(|l| l.strip_prefix("Package: ") == Some(p.name));
            let present = p.files.first().is_some_and(|(path, _)| self.exists(path) || self.exists(&usr_path(path)));
            if listed || present {
                todo.push(p);
            }
        }
        while let Some(p) = todo.pop() {
            if set.insert(p.name) {
                for d in p.depends.iter().chain(p.recommends.iter()) {
                    if let Some(q) = find(d) {
                        todo.push(q);
                    }
                }
            }
        }
        set
    }

    fn install(&mut self, cmd: &Cmd, quiet: u32, root: bool) {
        if !root {
            self.lock_error_dpkg(quiet);
            return;
        }
        let lists = self.has_lists();
        self.reading(quiet, true);
        let installed = self.installed();
        let requested: Vec<String> = cmd.words[1..].to_vec();
        let mut missing = false;
        for r in &requested {
            let known = find(r).is_some_and(|p| lists || installed.contains(p.name));
            if !known {
                self.err(format!("E: Unable to locate package {r}\n"));
                missing = true;
            }
        }
        if missing {
            self.exit(100);
            return;
        }
        // Resolve: depends depth-first (dependencies before their users), then recommends.
        let mut order: Vec<&'static Pkg> = Vec::new();
        let mut seen: BTreeSet<&'static str> = installed.clone();
        let mut recommended: VecDeque<&'static str> = VecDeque::new();
        let mut not_recommended: Vec<&'static str> = Vec::new();
        fn visit(p: &'static Pkg, seen: &mut BTreeSet<&'static str>, order: &mut Vec<&'static Pkg>, rec: &mut VecDeque<&'static str>) {
            if !seen.insert(p.name) {
                return;
            }
            for d in p.depends {
                if let Some(q) = find(d) {
                    visit(q, seen, order, rec);
                }
            }
            order.push(p);
            rec.extend(p.recommends.iter().copied());
        }
        for r in &requested {
            let p = find(r).expect("checked above");
            if installed.contains(p.name) {
                if quiet < 2 {
                    self.out(format!("{} is already the newest version ({}).\n", p.name, p.version));
                }
                continue;
            }
            visit(p, &mut seen, &mut order, &mut recommended);
        }
        while let Some(r) = recommended.pop_front() {
            let Some(p) = find(r) else { continue };
            if seen.contains(p.name) {
                continue;
            }
            if cmd.no_recommends {
                if !not_recommended.contains(&p.name) {
                    not_recommended.push(p.name);
                }
                continue;
            }
            visit(p, &mut seen, &mut order, &mut recommended);
        }
        let new: BTreeSet<&str> = order.iter().map(|p| p.name).collect();
        let extra: Vec<String> = new.iter().filter(|n| !requested.iter().any(|r| r == *n)).map(|n| n.to_string()).collect();
        // Suggests, package by package in name order; `a | b` prints as the words `a`, `| b`.
        let mut suggested: Vec<String> = Vec::new();
        let mut suggested_seen: BTreeSet<&str> = BTreeSet::new();
        for name in &new {
            let p = find(name).expect("from the table");
            for s in p.suggests {
                let alts: Vec<&str> = s.split(" | ").collect();
                if alts.iter().any(|a| new.contains(a) || installed.contains(a)) || !suggested_seen.insert(s) {
                    continue;
                }
                for (i, a) in alts.iter().enumerate() {
                    suggested.push(if i == 0 { a.to_string() } else { format!("| {a}") });
                }
            }
        }
        not_recommended.sort();
        if quiet < 2 {
            let mut s = show_list("The following additional packages will be installed:", &extra);
            s.push_str(&show_list("Suggested packages:", &suggested));
            s.push_str(&show_list("Recommended packages:", &not_recommended.iter().map(|n| n.to_string()).collect::<Vec<_>>()));
            let names: Vec<String> = new.iter().map(|n| n.to_string()).collect();
            s.push_str(&show_list("The following NEW packages will be installed:", &names));
            self.out(s);
        }
        if quiet < 2 {
            self.out(format!("0 upgraded, {} newly installed, 0 to remove and 0 not upgraded.\n", order.len()));
        }
        if order.is_empty() {
            self.exit(0);
            return;
        }
        let download: u64 = order.iter().map(|p| p.size).sum();
        let disk: u64 = order.iter().map(|p| p.installed_kib * 1024).sum();
        if quiet < 2 {
            self.out(format!("Need to get {}B of archives.\n", size_to_str(download as f64)));
            self.out(format!("After this operation, {}B of additional disk space will be used.\n", size_to_str(disk as f64)));
        }
        if !extra.is_empty() && !cmd.yes {
            self.out("Do you want to continue? [Y/n] ");
            let answer = String::from_utf8_lossy(&self.stdin).lines().next().map(str::trim).map(str::to_string);
            match answer.as_deref() {
                Some("") | Some("y") | Some("Y") | Some("yes") | Some("Yes") => {}
                _ => {
                    self.out("Abort.\n");
                    self.exit(1);
                    return;
                }
            }
        }
        // Download.
        let (id, codename) = self.release();
        let mirror = if id == "ubuntu" { "http://archive.ubuntu.com/ubuntu" } else { "http://deb.debian.org/debian" };
        let mut elapsed_ms = 0;
        for (i, p) in order.iter().enumerate() {
            let ms = 5 + p.size / 20_000;
            elapsed_ms += ms;
            self.sleep(ms);
            if quiet < 2 {
                self.out(format!("Get:{} {mirror} {codename}/main amd64 {} {} {} [{}B]\n", i + 1, p.name, p.arch, p.version, size_to_str(p.size as f64)));
            }
        }
        if order.iter().any(|p| p.debconf) {
            self.err("debconf: delaying package configuration, since apt-utils is not installed\n");
        }
        if quiet < 2 {
            let secs = (elapsed_ms as f64 / 1000.0).max(0.001);
            self.out(format!("Fetched {}B in {}s ({}B/s)\n", size_to_str(download as f64), elapsed_ms / 1000, size_to_str(download as f64 / secs)));
        }
        // dpkg: unpack everything, then configure.
        let multi = order.len() > 1;
        for (i, p) in order.iter().enumerate() {
            self.sleep(60 + p.installed_kib / 50);
            let full = full_name(p);
            let mut s = format!("Selecting previously unselected package {full}.\n");
            if i == 0 {
                s.push_str("(Reading database ... ");
                for pct in (5..=100).step_by(5) {
                    s.push_str(&format!("\r(Reading database ... {pct}%"));
                }
                s.push_str(&format!("\r(Reading database ... {} files and directories currently installed.)\n", self.database_size()));
            }
            let deb = format!("{}_{}_{}.deb", p.name, p.version.replace(':', "%3a"), p.arch);
            let deb = if multi { format!("{i:02}-{deb}") } else { deb };
            s.push_str(&format!("Preparing to unpack .../{deb} ...\nUnpacking {full} ({}) ...\n", p.version));
            self.out(s);
        }
        for p in &order {
            for (path, marker) in p.files {
                if implemented(marker, path) {
                    self.acts.push(Act::Write(path.to_string(), format!("#!kubesim {marker}\n")));
                }
            }
        }
        let mut status = self.read("/var/lib/dpkg/status").unwrap_or_default();
        for p in &order {
            status.push_str(&format!("Package: {}\nStatus: install ok installed\nArchitecture: {}\nVersion: {}\n\n", p.name, p.arch, p.version));
        }
        self.acts.push(Act::Write("/var/lib/dpkg/status".into(), status));
        for p in &order {
            self.sleep(40);
            let mut s = format!("Setting up {} ({}) ...\n", full_name(p), p.version);
            if p.debconf && !self.noninteractive {
                self.err(DEBCONF_FALLBACK);
            }
            s.push_str(p.setup_output);
            self.out(s);
        }
        self.sleep(100);
        let libs = order.iter().any(|p| p.name.starts_with("lib") || p.name.contains("-libs"));
        if libs {
            self.out(format!("Processing triggers for libc-bin ({LIBC_BIN}) ...\n"));
        }
        if let Some(ca) = order.iter().find(|p| p.name == "ca-certificates") {
            self.sleep(200);
            self.out(format!("Processing triggers for ca-certificates ({}) ...\nUpdating certificates in /etc/ssl/certs...\n0 added, 0 removed; done.\nRunning hooks in /etc/ca-certificates/update.d...\ndone.\n", ca.version));
        }
        self.exit(0);
    }

    /// The `(Reading database ... N files and directories currently installed.)` count.
    fn database_size(&self) -> u64 {
        let status = self.read("/var/lib/dpkg/status").unwrap_or_default();
        let extra = status.lines().filter(|l| l.starts_with("Package: ")).count() as u64;
        6_090 + extra * 23
    }
}

/// Whether a model answers to `marker` for this executable (GNU applets kubesim-os has,
/// programs this crate implements), so installing it makes something runnable.
fn implemented(marker: &str, path: &str) -> bool {
    match marker {
        "coreutils" => kubesim_os::applets::sync_applet(&kubesim_os::fs::basename(path)).is_some(),
        "curl" | "dig" | "nslookup-bind" => true,
        other => crate::IMPLEMENTED.contains(&other),
    }
}

/// `/bin/ps` → `/usr/bin/ps` (merged /usr, where the image may list it).
fn usr_path(path: &str) -> String {
    if path.starts_with("/bin/") || path.starts_with("/sbin/") {
        format!("/usr{path}")
    } else {
        path.to_string()
    }
}

/// dpkg's name for a package in its messages: `libcurl4:amd64` for Multi-Arch: same
/// libraries, the bare name otherwise.
fn full_name(p: &Pkg) -> String {
    if p.arch == "amd64" && p.name.starts_with("lib") && !p.name.ends_with("-bin") {
        format!("{}:amd64", p.name)
    } else {
        p.name.to_string()
    }
}

const DEBCONF_FALLBACK: &str = "debconf: unable to initialize frontend: Dialog\ndebconf: (TERM is not set, so the dialog frontend is not usable.)\ndebconf: falling back to frontend: Readline\ndebconf: unable to initialize frontend: Readline\ndebconf: (This frontend requires a controlling tty.)\ndebconf: falling back to frontend: Teletype\n";

const APT_GET_HELP: &str = "apt 2.6.1 (amd64)
Usage: apt-get [options] command
       apt-get [options] install|remove pkg1 [pkg2 ...]
       apt-get [options] source pkg1 [pkg2 ...]

apt-get is a command line interface for retrieval of packages
and information about them from authenticated sources and
for installation, upgrade and removal of packages together
with their dependencies.

Most used commands:
  update - Retrieve new lists of packages
  upgrade - Perform an upgrade
  install - Install new packages (pkg is one or more package names)
  reinstall - Reinstall packages (pkg is one or more package names)
  remove - Remove packages
  purge - Remove packages and config files
  autoremove - Automatically remove all unused packages
  dist-upgrade - Distribution upgrade, see apt-get(8)
  dselect-upgrade - Follow dselect selections
  build-dep - Configure build-dependencies for source packages
  satisfy - Satisfy dependency strings
  clean - Erase downloaded archive files
  autoclean - Erase old downloaded archive files
  check - Verify that there are no broken dependencies
  source - Download source archives
  download - Download the binary package into the current directory
  changelog - Download and display the changelog for the given package

See apt-get(8) for more information about the available commands.
Configuration options and syntax is detailed in apt.conf(5).
Information about how to configure sources can be found in sources.list(5).
Package and version choices can be expressed via apt_preferences(5).
Security details are available in apt-secure(8).
                                        This APT has Super Cow Powers.
";

const APT_HELP: &str = "apt 2.6.1 (amd64)
Usage: apt [options] command

apt is a commandline package manager and provides commands for
searching and managing as well as querying information about packages.
It provides the same functionality as the specialized APT tools,
like apt-get and apt-cache, but enables options more suitable for
interactive use by default.

Most used commands:
  list - list packages based on package names
  search - search in package descriptions
  show - show package details
  install - install packages
  reinstall - reinstall packages
  remove - remove packages
  autoremove - automatically remove all unused packages
  update - update list of available packages
  upgrade - upgrade the system by installing/upgrading packages
  full-upgrade - upgrade the system by removing/installing/upgrading packages
  edit-sources - edit the source information file
  satisfy - satisfy dependency strings

See apt(8) for more information about the available commands.
Configuration options and syntax is detailed in apt.conf(5).
Information about how to configure sources can be found in sources.list(5).
Package and version choices can be expressed via apt_preferences(5).
Security details are available in apt-secure(8).
                                        This APT has Super Cow Powers.
";

/// The installed-package records of a container (for tests and `dpkg -l`-like views):
/// package → version, from `/var/lib/dpkg/status`.
pub fn dpkg_status(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for stanza in text.split("\n\n") {
        let field = |k: &str| stanza.lines().find_map(|l| l.strip_prefix(k)).map(str::to_string);
        if let (Some(p), Some(v)) = (field("Package: "), field("Version: ")) {
            out.insert(p, v);
        }
    }
    out
}
