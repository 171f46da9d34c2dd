//! Executables: which implementation a file names, and image trees.
//!
//! An executable's content names its implementation on its first line:
//! `#!kubesim busybox` (dispatches on the basename of `argv[0]` like the real multi-call
//! binary), `#!kubesim coreutils` (GNU tools), `#!kubesim bash`, `#!kubesim dash`,
//! `#!kubesim ash`, `#!kubesim curl`, `#!kubesim nslookup-bind`, `#!kubesim dig`, or any other
//! name (`#!kubesim nginx`, `#!kubesim perl`), which this crate hands back to the host as
//! `Step::Spawn`. Ordinary `#!/bin/sh` scripts run through the named interpreter.

use crate::applets::{self, wait, Family, SyncApplet};
use crate::fs::{Errno, Fs, Tree};
use crate::program::{Program, Spawn};
use crate::sh::{Flavor, Shell};
use std::collections::BTreeSet;

/// The `PATH` used when the environment has none.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A program this crate does not implement (the host must run it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotImplemented {
    /// The implementation name after `#!kubesim`, or the applet name.
    pub name: String,
}

/// What an executable file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exe {
    /// `#!kubesim NAME args...`.
    Kubesim(String, Vec<String>),
    /// `#!/path/interp [arg]` script.
    Script(String, Option<String>),
    /// Anything else (`ENOEXEC`).
    Unknown,
}

/// Reads what kind of executable `path` is.
pub fn inspect(fs: &dyn Fs, path: &str) -> Result<Exe, Errno> {
    let data = fs.read(path)?;
    let first = data.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(first).trim().to_string();
    if let Some(rest) = line.strip_prefix("#!kubesim") {
        let mut it = rest.split_whitespace().map(str::to_string);
        let name = it.next().unwrap_or_default();
        return Ok(Exe::Kubesim(name, it.collect()));
    }
    if let Some(rest) = line.strip_prefix("#!") {
        let rest = rest.trim();
        let (interp, arg) = match rest.split_once([' ', '\t']) {
            Some((i, a)) => (i.to_string(), Some(a.trim().to_string())),
            None => (rest.to_string(), None),
        };
        return Ok(Exe::Script(interp, arg));
    }
    Ok(Exe::Unknown)
}

/// Resolves a command name like `execvp` (absolute path of an executable regular file).
pub fn resolve_command(name: &str, path_env: Option<&str>, cwd: &str, fs: &dyn Fs) -> Result<String, Errno> {
    if name.is_empty() {
        return Err(Errno::ENOENT);
    }
    if name.contains('/') {
        let p = crate::fs::join(cwd, name);
        let m = fs.stat(&p)?;
        if m.is_dir() || m.mode & 0o111 == 0 {
            return Err(Errno::EACCES);
        }
        return Ok(p);
    }
    let mut denied = false;
    for dir in path_env.unwrap_or(DEFAULT_PATH).split(':') {
        let p = crate::fs::join(&crate::fs::join(cwd, if dir.is_empty() { "." } else { dir }), name);
        if let Ok(m) = fs.stat(&p) {
            if m.is_file() {
                if m.mode & 0o111 != 0 {
                    return Ok(p);
                }
                denied = true;
            }
        }
    }
    Err(if denied { Errno::EACCES } else { Errno::ENOENT })
}

/// The program for `spawn` (whose `path` is the resolved executable), for everything this
/// crate implements. `Err(NotImplemented)` means the host must run it.
pub fn program_for(spawn: &Spawn, fs: &dyn Fs) -> Result<Box<dyn Program>, NotImplemented> {
    match start_inner(spawn, fs, 0) {
        Ok(Started::Prog(p)) => Ok(p),
        Ok(Started::Foreign(name)) => Err(NotImplemented { name }),
        Err(_) => Err(NotImplemented { name: spawn.argv.first().cloned().unwrap_or_default() }),
    }
}

/// Like [`program_for`], but programs this crate does not implement become a stand-in that
/// asks the host to run them (`Step::Spawn`). Errors are `exec` failures (`ENOENT`,
/// `EACCES`, `ENOEXEC`).
pub fn start(spawn: &Spawn, fs: &dyn Fs) -> Result<Box<dyn Program>, Errno> {
    match start_inner(spawn, fs, 0)? {
        Started::Prog(p) => Ok(p),
        Started::Foreign(_) => Ok(Box::new(wait::Foreign::new(spawn.clone()))),
    }
}

enum Started {
    Prog(Box<dyn Program>),
    Foreign(String),
}

fn start_inner(spawn: &Spawn, fs: &dyn Fs, depth: usize) -> Result<Started, Errno> {
    if depth > 8 {
        return Err(Errno::ELOOP);
    }
    let path = if spawn.path.is_empty() {
        resolve_command(spawn.argv.first().map(String::as_str).unwrap_or(""), spawn.env.get("PATH").map(String::as_str), &spawn.cwd, fs)?
    } else {
        spawn.path.clone()
    };
    let m = fs.stat(&path)?;
    if m.is_dir() {
        return Err(Errno::EACCES);
    }
    match inspect(fs, &path)? {
        Exe::Kubesim(name, _args) => Ok(native(&name, spawn, fs)),
        Exe::Script(interp, arg) => {
            let mut argv = vec![interp.clone()];
            argv.extend(arg);
            argv.push(path.clone());
            argv.extend(spawn.argv.iter().skip(1).cloned());
            let sp = Spawn { argv, path: interp.clone(), ..spawn.clone() };
            start_inner(&sp, fs, depth + 1)
        }
        Exe::Unknown => Err(Errno::ENOEXEC),
    }
}

/// All busybox applets installed in a busybox image (busybox 1.36's default set, abridged).
pub const BUSYBOX_APPLETS: &[&str] = &[
    "[",
    "[[",
    "acpid",
    "addgroup",
    "adduser",
    "adjtimex",
    "ar",
    "arch",
    "arp",
    "arping",
    "ash",
    "awk",
    "base64",
    "basename",
    "bc",
    "blkid",
    "bunzip2",
    "bzcat",
    "bzip2",
    "cal",
    "cat",
    "chgrp",
    "chmod",
    "chown",
    "chroot",
    "clear",
    "cmp",
    "cp",
    "cpio",
    "crond",
    "crontab",
    "cut",
    "date",
    "dc",
    "dd",
    "deluser",
    "df",
    "diff",
    "dirname",
    "dmesg",
    "dnsdomainname",
    "dos2unix",
    "du",
    "echo",
    "ed",
    "egrep",
    "env",
    "expand",
    "expr",
    "factor",
    "fallocate",
    "false",
    "fgrep",
    "find",
    "fold",
    "free",
    "fuser",
    "getopt",
    "grep",
    "groups",
    "gunzip",
    "gzip",
    "halt",
    "head",
    "hexdump",
    "hostid",
    "hostname",
    "httpd",
    "hwclock",
    "id",
    "ifconfig",
    "init",
    "install",
    "ionice",
    "ip",
    "ipcalc",
    "kill",
    "killall",
    "klogd",
    "less",
    "link",
    "ln",
    "logger",
    "login",
    "logname",
    "ls",
    "lsof",
    "lzcat",
    "md5sum",
    "mkdir",
    "mkfifo",
    "mknod",
    "mktemp",
    "more",
    "mount",
    "mv",
    "nc",
    "netstat",
    "nice",
    "nl",
    "nohup",
    "nproc",
    "nslookup",
    "od",
    "passwd",
    "paste",
    "patch",
    "pgrep",
    "pidof",
    "ping",
    "ping6",
    "pkill",
    "pmap",
    "poweroff",
    "printenv",
    "printf",
    "ps",
    "pstree",
    "pwd",
    "pwdx",
    "readlink",
    "realpath",
    "reboot",
    "renice",
    "reset",
    "rev",
    "rm",
    "rmdir",
    "route",
    "run-parts",
    "sed",
    "seq",
    "setsid",
    "sh",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "shred",
    "shuf",
    "sleep",
    "sort",
    "split",
    "stat",
    "strings",
    "stty",
    "su",
    "sync",
    "sysctl",
    "syslogd",
    "tac",
    "tail",
    "tar",
    "tee",
    "telnet",
    "test",
    "tftp",
    "time",
    "timeout",
    "top",
    "touch",
    "tr",
    "traceroute",
    "true",
    "truncate",
    "tty",
    "udhcpc",
    "umount",
    "uname",
    "uniq",
    "unlink",
    "unxz",
    "unzip",
    "uptime",
    "usleep",
    "uudecode",
    "uuencode",
    "vi",
    "watch",
    "wc",
    "wget",
    "which",
    "who",
    "whoami",
    "xargs",
    "xxd",
    "xz",
    "xzcat",
    "yes",
    "zcat",
];

/// GNU coreutils (and the essential Debian tools modelled with them) in a debian image.
pub const DEBIAN_TOOLS: &[&str] = &[
    "[",
    "arch",
    "base64",
    "basename",
    "cat",
    "chgrp",
    "chmod",
    "chown",
    "cp",
    "cut",
    "date",
    "dd",
    "df",
    "dirname",
    "du",
    "echo",
    "env",
    "expr",
    "false",
    "find",
    "grep",
    "egrep",
    "fgrep",
    "head",
    "hostname",
    "id",
    "kill",
    "ln",
    "ls",
    "md5sum",
    "mkdir",
    "mv",
    "nl",
    "nproc",
    "printenv",
    "printf",
    "pwd",
    "readlink",
    "realpath",
    "rev",
    "rm",
    "rmdir",
    "sed",
    "seq",
    "sha256sum",
    "sleep",
    "sort",
    "stat",
    "sync",
    "tail",
    "tee",
    "test",
    "timeout",
    "touch",
    "tr",
    "true",
    "uname",
    "uniq",
    "wc",
    "which",
    "whoami",
    "xargs",
    "yes",
    "awk",
    "mawk",
    "uptime",
    "free",
    "pidof",
    "tac",
    "paste",
    "fold",
    "od",
];

fn applet_program(name: &str, spawn: &Spawn, fs: &dyn Fs, family: Family) -> Started {
    let prog: Box<dyn Program> = match name {
        "sh" | "ash" if family == Family::Busybox => Box::new(Shell::from_spawn(Flavor::Ash, spawn, |p| read_text(fs, p))),
        "sleep" => Box::new(wait::Sleep::new(spawn, family)),
        "usleep" => {
            let mut sp = spawn.clone();
            let us: u64 = sp.argv.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
            sp.argv = vec!["sleep".into(), format!("{}.{:06}", us / 1_000_000, us % 1_000_000)];
            Box::new(wait::Sleep::new(&sp, family))
        }
        "timeout" => Box::new(wait::Timeout::new(spawn, family)),
        "xargs" => Box::new(wait::Xargs::new(spawn, family)),
        "yes" => Box::new(wait::Yes::new(spawn)),
        "tail"
            if spawn
                .argv
                .iter()
                .skip(1)
                .any(|a| a == "-f" || a == "-F" || a == "--follow" || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))) =>
        {
            Box::new(wait::TailFollow::new(spawn, family))
        }
        "env" | "nice" | "nohup" | "setsid" | "chroot" | "time" | "ionice" if has_command(name, spawn) => return exec_wrapper(name, spawn, fs, family),
        "wget" => Box::new(crate::net::wget::Wget::new(spawn)),
        "nc" | "netcat" => Box::new(crate::net::nc::Nc::new(spawn)),
        "nslookup" => Box::new(crate::net::nslookup::Nslookup::new(spawn, crate::net::nslookup::Style::Busybox)),
        "nslookup-1.28" => Box::new(crate::net::nslookup::Nslookup::new(spawn, crate::net::nslookup::Style::Busybox128)),
        "ping" | "ping6" => Box::new(crate::net::ping::Ping::new(spawn, family)),
        "getent" => Box::new(crate::net::getent::Getent::new(spawn)),
        _ => match applets::sync_applet(name) {
            Some(f) => Box::new(SyncApplet::new(spawn.clone(), name, family, f)),
            None => return Started::Foreign(name.to_string()),
        },
    };
    Started::Prog(prog)
}

fn has_command(name: &str, spawn: &Spawn) -> bool {
    wrapper_command(name, spawn).is_some()
}

/// For `env A=1 cmd`, `nice -n 5 cmd`, `nohup cmd`...: (env changes, argv of the command).
fn wrapper_command(name: &str, spawn: &Spawn) -> Option<(Vec<(String, Option<String>)>, bool, Vec<String>)> {
    let args = &spawn.argv[1..];
    let mut i = 0;
    let mut changes = Vec::new();
    let mut clear = false;
    while i < args.len() {
        let a = &args[i];
        match name {
            "env" => {
                if a == "-i" || a == "-" {
                    clear = true;
                } else if a == "-u" {
                    i += 1;
                    changes.push((args.get(i)?.clone(), None));
                } else if let Some((k, v)) = a.split_once('=') {
                    changes.push((k.to_string(), Some(v.to_string())));
                } else if a == "--" {
                } else if a.starts_with('-') {
                } else {
                    break;
                }
            }
            "nice" | "ionice" => {
                if a == "-n" || a == "-c" {
                    i += 1;
                } else if !a.starts_with('-') {
                    break;
                }
            }
            "time" => {
                if !a.starts_with('-') {
                    break;
                }
            }
            "sudo" => {
                if matches!(a.as_str(), "-u" | "-g" | "-C" | "-D" | "-h" | "-p" | "-r" | "-t" | "-U") {
                    i += 1;
                } else if a == "--" {
                    i += 1;
                    break;
                } else if !a.starts_with('-') {
                    break;
                }
            }
            _ => {
                if !a.starts_with('-') {
                    if name == "chroot" {
                        i += 1;
                        continue;
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    if i >= args.len() {
        return None;
    }
    Some((changes, clear, args[i..].to_vec()))
}

fn exec_wrapper(name: &str, spawn: &Spawn, fs: &dyn Fs, family: Family) -> Started {
    let Some((changes, clear, argv)) = wrapper_command(name, spawn) else { return Started::Foreign(name.into()) };
    let mut sp = spawn.clone();
    if clear {
        sp.env.clear();
    }
    for (k, v) in changes {
        match v {
            Some(v) => {
                sp.env.insert(k, v);
            }
            None => {
                sp.env.remove(&k);
            }
        }
    }
    sp.argv = argv;
    match resolve_command(&sp.argv[0], sp.env.get("PATH").map(String::as_str), &sp.cwd, fs) {
        Ok(p) => {
            sp.path = p;
            match start(&sp, fs) {
                Ok(p) => Started::Prog(p),
                Err(e) => Started::Prog(Box::new(error_program(spawn, name, &sp.argv[0], e, family))),
            }
        }
        Err(e) => Started::Prog(Box::new(error_program(spawn, name, &sp.argv[0], e, family))),
    }
}

fn error_program(spawn: &Spawn, name: &str, cmd: &str, e: Errno, family: Family) -> SyncApplet {
    // The message is carried in argv so the program stays plain data.
    let msg = match family {
        Family::Gnu => format!("{name}: '{cmd}': {}", e.strerror()),
        Family::Busybox => format!("{name}: can't execute '{cmd}': {}", e.strerror()),
    };
    let code = if e == Errno::ENOENT { "127" } else { "126" };
    let sp = Spawn { argv: vec!["error".into(), msg, code.into()], ..spawn.clone() };
    SyncApplet::new(sp, name, family, |c| {
        let msg = c.args.first().cloned().unwrap_or_default();
        c.err_raw(&format!("{msg}\n"));
        c.args.get(1).and_then(|s| s.parse().ok()).unwrap_or(127)
    })
}

fn read_text(fs: &dyn Fs, p: &str) -> Result<String, Errno> {
    fs.read(p).map(|d| String::from_utf8_lossy(&d).into_owned())
}

fn native(name: &str, spawn: &Spawn, fs: &dyn Fs) -> Started {
    let argv0 = spawn.argv.first().map(|a| crate::fs::basename(a)).unwrap_or_default();
    match name {
        "busybox-1.28" => {
            let applet = argv0.clone();
            if applet == "nslookup" {
                return applet_program("nslookup-1.28", spawn, fs, Family::Busybox);
            }
            native("busybox", spawn, fs)
        }
        "busybox" => {
            let mut applet = argv0.clone();
            let mut sp = spawn.clone();
            if applet == "busybox" {
                if spawn.argv.len() < 2 {
                    let p = Spawn { argv: vec!["busybox".into()], ..spawn.clone() };
                    return Started::Prog(Box::new(SyncApplet::new(p, "busybox", Family::Busybox, |c| {
                        c.outs("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\nBusyBox is copyrighted by many authors between 1998-2015.\nLicensed under GPLv2. See source distribution for detailed\ncopyright notices.\n\nUsage: busybox [function [arguments]...]\n   or: busybox --list[-full]\n   or: function [arguments]...\n");
                        0
                    })));
                }
                if spawn.argv[1] == "--list" {
                    let p = Spawn { argv: vec!["busybox".into()], ..spawn.clone() };
                    return Started::Prog(Box::new(SyncApplet::new(p, "busybox", Family::Busybox, |c| {
                        let mut s = String::new();
                        for a in BUSYBOX_APPLETS {
                            s.push_str(a);
                            s.push('\n');
                        }
                        c.outs(&s);
                        0
                    })));
                }
                sp.argv.remove(0);
                applet = sp.argv[0].clone();
            }
            if !BUSYBOX_APPLETS.contains(&applet.as_str()) {
                let p = Spawn { argv: vec!["busybox".into(), applet.clone()], ..spawn.clone() };
                return Started::Prog(Box::new(SyncApplet::new(p, &applet, Family::Busybox, |c| {
                    let n = c.args.first().cloned().unwrap_or_default();
                    c.err_raw(&format!("{n}: applet not found\n"));
                    127
                })));
            }
            applet_program(&applet, &sp, fs, Family::Busybox)
        }
        "coreutils" => applet_program(&argv0, spawn, fs, Family::Gnu),
        "bash" => Started::Prog(Box::new(Shell::from_spawn(Flavor::Bash, spawn, |p| read_text(fs, p)))),
        "dash" => Started::Prog(Box::new(Shell::from_spawn(Flavor::Dash, spawn, |p| read_text(fs, p)))),
        "ash" => Started::Prog(Box::new(Shell::from_spawn(Flavor::Ash, spawn, |p| read_text(fs, p)))),
        "curl" => Started::Prog(Box::new(crate::net::curl::Curl::new(spawn))),
        "nslookup-bind" => Started::Prog(Box::new(crate::net::nslookup::Nslookup::new(spawn, crate::net::nslookup::Style::Bind))),
        "dig" => Started::Prog(Box::new(crate::net::dig::Dig::new(spawn))),
        "wget-busybox" => Started::Prog(Box::new(crate::net::wget::Wget::new(spawn))),
        "stress" => Started::Prog(Box::new(applets::stress::Stress::new(spawn))),
        // sudo as root (a node's shell): runs the command as it is, no password asked.
        "sudo" if has_command("sudo", spawn) => exec_wrapper("sudo", spawn, fs, Family::Gnu),
        other => Started::Foreign(other.to_string()),
    }
}

const EXE: &str = "#!kubesim busybox\n";

fn base_tree(t: &mut Tree) {
    for d in [
        "/bin",
        "/dev",
        "/etc",
        "/home",
        "/proc",
        "/root",
        "/sys",
        "/usr/bin",
        "/usr/sbin",
        "/usr/share",
        "/var/lib",
        "/var/cache",
        "/usr/local/bin",
        "/var/log",
        "/var/run",
        "/var/tmp",
        "/run",
        "/mnt",
        "/opt",
        "/srv",
    ] {
        t.add_dir(d, 0o755);
    }
    t.add_dir("/tmp", 0o1777);
    t.add_dir("/root", 0o700);
    t.add_dir("/proc", 0o555);
    t.add_dir("/sys", 0o555);
    t.add_device("/dev/null", crate::fs::Device::Null);
    t.add_device("/dev/zero", crate::fs::Device::Zero);
    t.add_device("/dev/full", crate::fs::Device::Full);
    t.add_device("/dev/random", crate::fs::Device::Random);
    t.add_device("/dev/urandom", crate::fs::Device::Urandom);
    t.add_device("/dev/tty", crate::fs::Device::Tty);
    t.add_symlink("/dev/stdin", "/proc/self/fd/0");
    t.add_symlink("/dev/stdout", "/proc/self/fd/1");
    t.add_symlink("/dev/stderr", "/proc/self/fd/2");
    t.add_symlink("/dev/fd", "/proc/self/fd");
    t.add_dir("/dev/shm", 0o1777);
}

/// The `busybox` image: busybox 1.36 with every applet linked in `/bin`.
pub fn busybox_image() -> Tree {
    let mut t = Tree::new();
    base_tree(&mut t);
    t.add_file("/bin/busybox", EXE, 0o755);
    for a in BUSYBOX_APPLETS {
        t.add_file(&format!("/bin/{a}"), EXE, 0o755);
    }
    t.add_file("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nbin:x:2:2:bin:/bin:/bin/false\nsys:x:3:3:sys:/dev:/bin/false\nsync:x:4:100:sync:/bin:/bin/sync\nmail:x:8:8:mail:/var/spool/mail:/bin/false\nwww-data:x:33:33:www-data:/var/www:/bin/false\noperator:x:37:37:Operator:/var:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\n", 0o644);
    t.add_file("/etc/group", "root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\ndisk:x:6:\nwheel:x:10:root\nmail:x:8:\nwww-data:x:33:\nusers:x:100:\nnogroup:x:65534:\n", 0o644);
    t.add_file("/etc/shadow", "root:*::0:::::\nnobody:*::0:::::\n", 0o600);
    t.add_dir("/var/spool/mail", 0o755);
    t.add_dir("/var/www", 0o755);
    t.add_dir("/usr/sbin", 0o755);
    t.add_dir("/home", 0o755);
    t
}

/// A `busybox:1.28` image (the tag the Kubernetes docs use for DNS debugging): like
/// [`busybox_image`], with 1.28's `nslookup` (libc resolver, `Address 1: IP NAME`).
pub fn busybox_128_image() -> Tree {
    let mut t = busybox_image();
    t.add_file("/bin/nslookup", "#!kubesim busybox-1.28\n", 0o755);
    t
}

/// An `alpine`-like image: busybox applets as symlinks to `/bin/busybox`, `/bin/sh` included.
pub fn alpine_image() -> Tree {
    let mut t = Tree::new();
    base_tree(&mut t);
    t.add_file("/bin/busybox", EXE, 0o755);
    let sbin: BTreeSet<&str> =
        ["adjtimex", "arp", "blkid", "halt", "ifconfig", "init", "ip", "klogd", "mknod", "poweroff", "reboot", "route", "sysctl", "syslogd", "udhcpc"]
            .into_iter()
            .collect();
    let usr_bin: BTreeSet<&str> = [
        "[",
        "[[",
        "awk",
        "basename",
        "bc",
        "bunzip2",
        "bzcat",
        "bzip2",
        "cal",
        "clear",
        "cmp",
        "cut",
        "diff",
        "dirname",
        "dos2unix",
        "du",
        "env",
        "expand",
        "expr",
        "factor",
        "fallocate",
        "find",
        "fold",
        "free",
        "fuser",
        "getopt",
        "groups",
        "head",
        "hexdump",
        "hostid",
        "id",
        "install",
        "killall",
        "less",
        "logger",
        "lsof",
        "md5sum",
        "mkfifo",
        "nc",
        "nl",
        "nohup",
        "nproc",
        "nslookup",
        "od",
        "paste",
        "patch",
        "pgrep",
        "pkill",
        "pmap",
        "printf",
        "pstree",
        "pwdx",
        "readlink",
        "realpath",
        "seq",
        "setsid",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "shred",
        "shuf",
        "sort",
        "split",
        "strings",
        "tac",
        "tail",
        "tee",
        "telnet",
        "test",
        "tftp",
        "time",
        "timeout",
        "top",
        "tr",
        "traceroute",
        "truncate",
        "tty",
        "uniq",
        "unlink",
        "unxz",
        "unzip",
        "uptime",
        "uudecode",
        "uuencode",
        "vi",
        "wc",
        "wget",
        "which",
        "who",
        "whoami",
        "xargs",
        "xxd",
        "xzcat",
        "yes",
    ]
    .into_iter()
    .collect();
    for a in BUSYBOX_APPLETS {
        let dir = if sbin.contains(a) {
            "/sbin"
        } else if usr_bin.contains(a) {
            "/usr/bin"
        } else {
            "/bin"
        };
        t.add_symlink(&format!("{dir}/{a}"), "/bin/busybox");
    }
    t.add_file("/etc/alpine-release", "3.20.3\n", 0o644);
    t.add_file(
        "/etc/os-release",
        "NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.20.3\nPRETTY_NAME=\"Alpine Linux v3.20\"\nHOME_URL=\"https://alpinelinux.org/\"\nBUG_REPORT_URL=\"https://gitlab.alpinelinux.org/alpine/aports/-/issues\"\n",
        0o644,
    );
    t.add_file("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\nbin:x:1:1:bin:/bin:/sbin/nologin\ndaemon:x:2:2:daemon:/sbin:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n", 0o644);
    t.add_file("/etc/group", "root:x:0:root\nbin:x:1:root,bin,daemon\ndaemon:x:2:root,bin,daemon\nwheel:x:10:root\nnogroup:x:65533:\nnobody:x:65534:\n", 0o644);
    t.add_file("/sbin/apk", "#!kubesim apk\n", 0o755);
    t.add_file("/etc/apk/world", "alpine-baselayout\nalpine-keys\napk-tools\nbusybox\nlibc-utils\n", 0o644);
    t
}

/// A `curlimages/curl`-like image: alpine plus `/usr/bin/curl` (user 100 "curl_user").
pub fn curl_image() -> Tree {
    let mut t = alpine_image();
    t.add_file("/usr/bin/curl", "#!kubesim curl\n", 0o755);
    t.add_file(
        "/etc/passwd",
        "root:x:0:0:root:/root:/bin/sh\nbin:x:1:1:bin:/bin:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\ncurl_user:x:100:101:Linux User,,,:/home/curl_user:/sbin/nologin\n",
        0o644,
    );
    t.add_dir("/home/curl_user", 0o755);
    t.set_owner("/home/curl_user", 100, 101);
    t
}

fn debian_like(os_release: &str) -> Tree {
    let mut t = Tree::new();
    base_tree(&mut t);
    // Merged /usr: /bin -> usr/bin, /sbin -> usr/sbin.
    t.add_symlink("/bin", "usr/bin");
    t.add_symlink("/sbin", "usr/sbin");
    t.add_symlink("/lib", "usr/lib");
    t.add_dir("/usr/lib", 0o755);
    for a in DEBIAN_TOOLS {
        t.add_file(&format!("/usr/bin/{a}"), "#!kubesim coreutils\n", 0o755);
    }
    t.add_file("/usr/bin/bash", "#!kubesim bash\n", 0o755);
    t.add_symlink("/usr/bin/rbash", "bash");
    t.add_file("/usr/bin/dash", "#!kubesim dash\n", 0o755);
    t.add_symlink("/usr/bin/sh", "dash");
    t.add_file("/usr/bin/getent", "#!kubesim coreutils\n", 0o755);
    t.add_file("/usr/bin/apt-get", "#!kubesim apt-get\n", 0o755);
    t.add_file("/usr/bin/dpkg", "#!kubesim dpkg\n", 0o755);
    t.add_file("/etc/os-release", os_release, 0o644);
    t.add_file(
        "/etc/passwd",
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nbin:x:2:2:bin:/bin:/usr/sbin/nologin\nsys:x:3:3:sys:/dev:/usr/sbin/nologin\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        0o644,
    );
    t.add_file(
        "/etc/group",
        "root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\nwww-data:x:33:\nstaff:x:50:\nusers:x:100:\nnogroup:x:65534:\n",
        0o644,
    );
    t.add_file("/root/.bashrc", "# ~/.bashrc: executed by bash(1) for non-login shells.\n", 0o644);
    t.add_file("/root/.profile", "# ~/.profile: executed by Bourne-compatible login shells.\n", 0o644);
    t
}

/// A `debian:bookworm`-like image: dash as `/bin/sh`, bash, GNU coreutils, grep, sed, mawk,
/// findutils; no ps, wget, curl or nslookup.
pub fn debian_image() -> Tree {
    let mut t = debian_like("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\nHOME_URL=\"https://www.debian.org/\"\nSUPPORT_URL=\"https://www.debian.org/support\"\nBUG_REPORT_URL=\"https://bugs.debian.org/\"\n");
    t.add_file("/etc/debian_version", "12.8\n", 0o644);
    t
}

/// An `ubuntu:24.04`-like image (like debian, with Ubuntu's release files).
pub fn ubuntu_image() -> Tree {
    let mut t = debian_like("PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nVERSION=\"24.04.1 LTS (Noble Numbat)\"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\nHOME_URL=\"https://www.ubuntu.com/\"\nUBUNTU_CODENAME=noble\n");
    t.add_file("/etc/debian_version", "trixie/sid\n", 0o644);
    t.add_file("/etc/lsb-release", "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=24.04\nDISTRIB_CODENAME=noble\nDISTRIB_DESCRIPTION=\"Ubuntu 24.04.1 LTS\"\n", 0o644);
    t
}

/// Adds the `dnsutils` tools (bind9 `nslookup`, `dig`) to a debian-like image.
pub fn add_dnsutils(t: &mut Tree) {
    t.add_file("/usr/bin/nslookup", "#!kubesim nslookup-bind\n", 0o755);
    t.add_file("/usr/bin/dig", "#!kubesim dig\n", 0o755);
    t.add_file("/usr/bin/host", "#!kubesim host\n", 0o755);
}

/// Adds a program this crate does not implement (`nginx`, `perl`...) at `path`; running it
/// yields `Step::Spawn` to the host.
pub fn add_foreign(t: &mut Tree, path: &str, name: &str) {
    t.add_file(path, format!("#!kubesim {name}\n"), 0o755);
}

/// Adds `curl` to an image.
pub fn add_curl(t: &mut Tree, path: &str) {
    t.add_file(path, "#!kubesim curl\n", 0o755);
}

/// The `/etc/hosts` the kubelet writes into every container of a pod (mirrors
/// `managedHostsFileContent`/`hostsEntriesFromHostAliases` in kubelet's `kubelet_pods.go`):
/// the localhost boilerplate, one line per pod IP (`ip\thost.domain\thost` when the pod has a
/// `subdomain`, so `domain` is e.g. `sub.ns.svc.cluster.local`), then `hostAliases`.
pub fn kubelet_hosts_file(pod_ips: &[&str], hostname: &str, domain: Option<&str>, host_aliases: &[(&str, &[&str])]) -> String {
    let mut s = String::from(
        "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n\
         fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n",
    );
    for ip in pod_ips {
        match domain.filter(|d| !d.is_empty()) {
            Some(d) => s.push_str(&format!("{ip}\t{hostname}.{d}\t{hostname}\n")),
            None => s.push_str(&format!("{ip}\t{hostname}\n")),
        }
    }
    if !host_aliases.is_empty() {
        s.push_str("\n# Entries added by HostAliases.\n");
        for (ip, names) in host_aliases {
            s.push_str(&format!("{ip}\t{}\n", names.join("\t")));
        }
    }
    s
}

/// The `/etc/resolv.conf` of a `dnsPolicy: ClusterFirst` pod (what kubelet writes):
/// `search <ns>.svc.<domain> svc.<domain> <domain>`, the cluster DNS servers, `options ndots:5`.
pub fn kubelet_resolv_conf(namespace: &str, cluster_domain: &str, nameservers: &[&str]) -> String {
    let mut s = format!("search {namespace}.svc.{cluster_domain} svc.{cluster_domain} {cluster_domain}\n");
    for n in nameservers {
        s.push_str(&format!("nameserver {n}\n"));
    }
    s.push_str("options ndots:5\n");
    s
}

/// Kubernetes' `$(VAR)` expansion of a container's `command`, `args` and env values (the
/// kubelet does it before exec; mirrors `third_party/forked/golang/expansion`): `$(NAME)`
/// becomes the variable's value, `$$` becomes `$`, references to undefined variables and
/// malformed ones (`$(A`, `$A`) stay as written.
pub fn expand_kube_vars(input: &str, env: &std::collections::BTreeMap<String, String>) -> String {
    let b = input.as_bytes();
    let mut out = String::new();
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < b.len() {
        if b[cursor] == b'$' && cursor + 1 < b.len() {
            out.push_str(&input[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let advance = match rest.as_bytes()[0] {
                b'$' => {
                    out.push('$');
                    1
                }
                b'(' => match rest.find(')') {
                    Some(i) => {
                        let name = &rest[1..i];
                        match env.get(name) {
                            Some(v) => out.push_str(v),
                            None => {
                                out.push_str("$(");
                                out.push_str(name);
                                out.push(')');
                            }
                        }
                        i + 1
                    }
                    None => {
                        out.push_str("$(");
                        1
                    }
                },
                _ => {
                    // `$` and the next character, copied as they are.
                    out.push('$');
                    0
                }
            };
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    out.push_str(&input[checkpoint.min(input.len())..]);
    out
}

/// The default environment a container runtime sets (`PATH`, `HOSTNAME`, `HOME`), before the
/// image's and the pod's variables.
pub fn default_env(hostname: &str) -> std::collections::BTreeMap<String, String> {
    let mut e = std::collections::BTreeMap::new();
    e.insert("PATH".into(), DEFAULT_PATH.into());
    e.insert("HOSTNAME".into(), hostname.into());
    e.insert("HOME".into(), "/root".into());
    e
}

/// What the container runtime does for a container's `command`/`args`: resolves `argv[0]`
/// through `PATH` (absolute paths as given) and starts the program.
pub fn command(argv: &[String], env: &std::collections::BTreeMap<String, String>, cwd: &str, stdin: Vec<u8>, fs: &dyn Fs) -> Result<Box<dyn Program>, Errno> {
    let first = argv.first().ok_or(Errno::ENOENT)?;
    let path = resolve_command(first, env.get("PATH").map(String::as_str), cwd, fs)?;
    let spawn = Spawn { argv: argv.to_vec(), env: env.clone(), cwd: cwd.to_string(), stdin, capture_stdout: false, path, tty: false, stdin_open: false };
    start(&spawn, fs)
}
