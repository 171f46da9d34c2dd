//! Test helpers: containers built from the image catalogue on a FakeOs.
#![allow(dead_code)]

use kubesim_os::program::{Incoming, Outgoing, Program, Spawn, Step, Wake};
use kubesim_os::registry;
use kubesim_os::testing::FakeOs;

/// Implementation families kubesim-os provides (left as the base image has them).
const OS_FAMILIES: &[&str] = &[
    "busybox",
    "dash",
    "bash",
    "coreutils",
    "grep",
    "sed",
    "tar",
    "gzip",
    "findutils",
    "diffutils",
    "mawk",
    "hostname",
    "util-linux",
    "mount",
    "bsdutils",
    "login",
    "passwd",
    "debianutils",
    "ncurses-bin",
    "sysvinit-utils",
    "dpkg",
    "apt",
    "gpgv",
    "debconf",
    "tzdata",
    "e2fsprogs",
    "ubuntu",
];

/// A FakeOs whose root is the image (`nginx:1.25.3`), hostname `host`, and the spawn the
/// runtime would start for its default command (or `command` when given).
pub fn image(reference: &str, host: &str, command: Option<&[&str]>) -> (FakeOs, Spawn) {
    let info = kubesim_images::resolve(reference).expect("image resolves");
    let mut tree = match info.os.flavour.as_str() {
        "alpine" => registry::alpine_image(),
        "busybox" => registry::busybox_image(),
        _ => registry::debian_image(),
    };
    for (path, imp) in &info.programs {
        if OS_FAMILIES.contains(&imp.as_str()) && tree.get_path(path).is_some() {
            continue;
        }
        if OS_FAMILIES.contains(&imp.as_str()) {
            continue;
        }
        tree.add_file(path, format!("#!kubesim {imp}\n"), 0o755);
    }
    for (path, f) in &info.files {
        tree.add_file(path, f.data.clone(), f.mode);
    }
    tree.set_all_mtimes(1_796_000_000_000);
    let mut env = registry::default_env(host);
    for (k, v) in info.env() {
        env.insert(k.to_string(), v.to_string());
    }
    let argv: Vec<String> = match command {
        Some(c) => c.iter().map(|s| s.to_string()).collect(),
        None => info.config.entrypoint.iter().chain(info.config.cmd.iter()).cloned().collect(),
    };
    let os = FakeOs::new(tree).with_hostname(host);
    let path = registry::resolve_command(&argv[0], env.get("PATH").map(String::as_str), "/", &os.fs).unwrap_or_else(|_| argv[0].clone());
    let cwd = if info.config.working_dir.is_empty() { "/".to_string() } else { info.config.working_dir.clone() };
    let spawn = Spawn { argv, env, cwd, stdin: Vec::new(), capture_stdout: false, path, tty: false, stdin_open: false };
    (os, spawn)
}

/// The model for the spawn's executable, as the host would build it.
pub fn start(os: &FakeOs, spawn: &Spawn) -> Box<dyn Program> {
    match registry::inspect(&os.fs, &spawn.path) {
        Ok(registry::Exe::Kubesim(name, _)) => kubesim_programs::program_for(&name, spawn).unwrap_or_else(|| panic!("no model for {name}")),
        other => panic!("not a kubesim executable: {:?} at {}", other, spawn.path),
    }
}

/// An HTTP request as busybox wget sends it.
pub fn wget_request(host: &str, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: Wget\r\nConnection: close\r\n\r\n").into_bytes()
}

/// An HTTP request as curl 8 sends it.
pub fn curl_request(host: &str, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n").into_bytes()
}

/// Sends `data` to `port` from 10.244.0.5:40000; the reply bytes (empty for Reset/Hang/None).
pub fn send(p: &mut Box<dyn Program>, os: &mut FakeOs, port: u16, data: &[u8]) -> Vec<u8> {
    send_from(p, os, "10.244.0.5", port, data)
}

/// Like [`send`] from a given address.
pub fn send_from(p: &mut Box<dyn Program>, os: &mut FakeOs, src: &str, port: u16, data: &[u8]) -> Vec<u8> {
    let conn = Incoming { src: src.into(), src_port: 40000, port, udp: false, data: data.to_vec() };
    match p.serve(os, &conn) {
        Some(Outgoing::Reply(b)) => b,
        _ => Vec::new(),
    }
}

/// Sends a UDP datagram.
pub fn send_udp(p: &mut Box<dyn Program>, os: &mut FakeOs, port: u16, data: &[u8]) -> Option<Vec<u8>> {
    let conn = Incoming { src: "10.244.0.5".into(), src_port: 40000, port, udp: true, data: data.to_vec() };
    match p.serve(os, &conn) {
        Some(Outgoing::Reply(b)) => Some(b),
        _ => None,
    }
}

/// Runs a started program until it blocks: `Sleep`s and `Compute`s advance the clock (the
/// whole interval), stopping at the first `Wait` or exit, or after `max_ms`. Returns the
/// last step.
pub fn settle(p: &mut Box<dyn Program>, os: &mut FakeOs, first: Wake, max_ms: u64) -> Step {
    let end = os.now_ms + max_ms;
    let mut wake = first;
    loop {
        let s = p.resume(os, wake);
        match s {
            Step::Sleep(ms) | Step::Compute { cpu_ms: ms, .. } => {
                if os.now_ms + ms > end {
                    os.now_ms = end;
                    return s;
                }
                os.now_ms += ms;
                wake = Wake::Timer;
            }
            other => return other,
        }
    }
}

/// Text of bytes.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
