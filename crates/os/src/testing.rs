//! A scriptable in-memory [`Os`] and a driver that plays a program's steps to completion on a
//! virtual clock — for this crate's tests and for integrators.
//!
//! ```
//! use kubesim_os::{registry, testing::{run, FakeOs}};
//! let mut os = FakeOs::new(registry::busybox_image());
//! let out = run(kubesim_os::sh_program(&["sh", "-c", "echo hi; sleep 1.5; echo bye"]), &mut os);
//! assert_eq!((out.stdout_str().as_str(), out.code, out.elapsed_ms), ("hi\nbye\n", Some(0), 1500));
//! ```

use crate::fs::{Errno, Fs, OwnedFs, Tree};
use crate::program::*;
use std::collections::BTreeMap;

/// How a canned network rule matches a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetMatch {
    /// TCP to this IP and port.
    Tcp(String, u16),
    /// UDP (and `ping`, port 0) to this IP and port.
    Udp(String, u16),
    /// A DNS question for this name (with or without the trailing dot) and type, any server.
    Dns(String, RType),
    /// Any DNS question sent to this server.
    DnsServer(String),
}

/// A canned reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetRule {
    /// What it answers.
    pub matcher: NetMatch,
    /// The reply.
    pub reply: NetReply,
    /// Virtual time the call takes (timeouts take the call's own timeout).
    pub latency_ms: u64,
}

/// A canned result for a program the host would run (`Step::Spawn`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnRule {
    /// Basename of `argv[0]`.
    pub name: String,
    /// Exit code.
    pub code: i32,
    /// What it writes to stdout.
    pub stdout: Vec<u8>,
    /// What it writes to stderr.
    pub stderr: Vec<u8>,
    /// How long it runs.
    pub duration_ms: u64,
}

/// A recorded interaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `Step::Sleep`.
    Sleep(u64),
    /// `Step::Compute`.
    Compute(u64),
    /// `Step::Net`.
    Net(NetCall),
    /// `Step::Spawn` (argv).
    Spawn(Vec<String>),
    /// A delivered signal.
    Signal(Signal),
    /// `Os::kill`.
    Kill(u32, Option<Signal>),
}

/// An in-memory [`Os`].
#[derive(Clone, Debug)]
pub struct FakeOs {
    /// Virtual now (ms since the simulation epoch).
    pub now_ms: u64,
    /// Unix time (ms) at `now_ms == 0`.
    pub epoch_unix_ms: u64,
    /// Hostname.
    pub hostname: String,
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
    /// Filesystem.
    pub fs: OwnedFs,
    /// RNG state (splitmix64).
    pub rng: u64,
    /// This process's pid.
    pub pid: u32,
    /// Next pid `alloc_pid` hands out.
    pub next_pid: u32,
    /// What `processes()` returns.
    pub processes: Vec<ProcessInfo>,
    /// Canned network replies (first match wins).
    pub net: Vec<NetRule>,
    /// Canned spawned programs.
    pub spawns: Vec<SpawnRule>,
    /// Signals to deliver at virtual times.
    pub signals: Vec<(u64, Signal)>,
    /// Credentials.
    pub creds: Creds,
    /// CPUs.
    pub cpus: u32,
    /// Reported memory.
    pub memory: u64,
    /// Interactions so far.
    pub calls: Vec<Call>,
    /// Cap on captured output (bytes).
    pub output_limit: usize,
    /// The network namespace's interfaces (`ip addr`); empty: loopback only.
    pub interfaces: Vec<crate::net::iface::Interface>,
}

impl FakeOs {
    /// An OS over this root tree, at 2026-12-01 09:04:57 UTC, hostname `pod`, pid 1.
    pub fn new(root: Tree) -> FakeOs {
        let mut fs = OwnedFs::new(root);
        let epoch = 1_796_115_897_000;
        fs.now_ms = epoch;
        FakeOs {
            now_ms: 0,
            epoch_unix_ms: epoch,
            hostname: "pod".into(),
            stdout: Vec::new(),
            stderr: Vec::new(),
            fs,
            rng: 0x9E37_79B9_7F4A_7C15,
            pid: 1,
            next_pid: 7,
            processes: Vec::new(),
            net: Vec::new(),
            spawns: Vec::new(),
            signals: Vec::new(),
            creds: Creds { uid: 0, gid: 0, groups: vec![0] },
            cpus: 2,
            memory: 0,
            calls: Vec::new(),
            output_limit: 64 << 20,
            interfaces: Vec::new(),
        }
    }

    /// Adds an A record for `name` (any server); the name's AAAA query answers NOERROR with
    /// no records, as CoreDNS does for IPv4-only services.
    pub fn with_dns(mut self, name: &str, ip: &str) -> FakeOs {
        let fq = format!("{}.", name.trim_end_matches('.'));
        self.net.push(NetRule {
            matcher: NetMatch::Dns(fq.clone(), RType::A),
            reply: NetReply::Dns(Ok(DnsMessage::answer(vec![DnsRecord { name: fq.clone(), ttl: 30, rtype: RType::A, data: ip.into() }]))),
            latency_ms: 1,
        });
        self.net.push(NetRule { matcher: NetMatch::Dns(fq, RType::Aaaa), reply: NetReply::Dns(Ok(DnsMessage::answer(Vec::new()))), latency_ms: 1 });
        self
    }

    /// Makes `ip:port` answer every TCP connection with `response`.
    pub fn with_tcp(mut self, ip: &str, port: u16, response: &[u8]) -> FakeOs {
        self.net.push(NetRule { matcher: NetMatch::Tcp(ip.into(), port), reply: NetReply::Tcp(Ok(response.to_vec())), latency_ms: 1 });
        self
    }

    /// Makes `ip:port` fail with `err`.
    pub fn with_tcp_error(mut self, ip: &str, port: u16, err: NetError) -> FakeOs {
        self.net.push(NetRule { matcher: NetMatch::Tcp(ip.into(), port), reply: NetReply::Tcp(Err(err)), latency_ms: 1 });
        self
    }

    /// Writes a file (parents created).
    pub fn with_file(mut self, path: &str, data: &[u8]) -> FakeOs {
        self.fs.root.add_file(path, data.to_vec(), 0o644);
        self
    }

    /// Sets the hostname.
    pub fn with_hostname(mut self, h: &str) -> FakeOs {
        self.hostname = h.into();
        self
    }

    /// Schedules a signal at a virtual time.
    pub fn with_signal(mut self, at_ms: u64, sig: Signal) -> FakeOs {
        self.signals.push((at_ms, sig));
        self.signals.sort_by_key(|(t, _)| *t);
        self
    }

    /// Registers a canned foreign program.
    pub fn with_spawn(mut self, name: &str, code: i32, stdout: &str) -> FakeOs {
        self.spawns.push(SpawnRule { name: name.into(), code, stdout: stdout.as_bytes().to_vec(), stderr: Vec::new(), duration_ms: 0 });
        self
    }

    /// The kubelet's resolv.conf for a pod in `ns` with cluster DNS at `dns_ip`.
    pub fn with_cluster_dns(self, ns: &str, dns_ip: &str) -> FakeOs {
        let rc = crate::registry::kubelet_resolv_conf(ns, "cluster.local", &[dns_ip]);
        self.with_file("/etc/resolv.conf", rc.as_bytes())
    }

    fn answer(&self, call: &NetCall) -> (NetReply, u64) {
        let timeout = call.timeout_ms();
        for r in &self.net {
            let hit = match (&r.matcher, call) {
                (NetMatch::Tcp(ip, p), NetCall::Tcp { dst, port, .. }) => ip == dst && p == port,
                (NetMatch::Udp(ip, p), NetCall::Udp { dst, port, .. }) => ip == dst && p == port,
                (NetMatch::Dns(n, t), NetCall::Dns { question, .. }) => n.trim_end_matches('.') == question.name.trim_end_matches('.') && *t == question.qtype,
                (NetMatch::DnsServer(s), NetCall::Dns { server, .. }) => s == server,
                _ => false,
            };
            if hit {
                let timed_out = matches!(
                    &r.reply,
                    NetReply::Tcp(Err(NetError::TimedOut)) | NetReply::Udp(Err(NetError::TimedOut)) | NetReply::Dns(Err(NetError::TimedOut))
                );
                return (r.reply.clone(), if timed_out { timeout } else { r.latency_ms });
            }
        }
        match call {
            NetCall::Tcp { .. } => (NetReply::Tcp(Err(NetError::Refused)), 1),
            NetCall::Udp { .. } => (NetReply::Udp(Err(NetError::TimedOut)), timeout),
            NetCall::Dns { .. } => (
                NetReply::Dns(Ok(DnsMessage {
                    rcode: Rcode::NxDomain,
                    authoritative: true,
                    answers: Vec::new(),
                    authority: Vec::new(),
                    additional: Vec::new(),
                })),
                1,
            ),
        }
    }
}

impl Os for FakeOs {
    fn now_ms(&self) -> u64 {
        self.now_ms
    }
    fn unix_time_ms(&self) -> u64 {
        self.epoch_unix_ms + self.now_ms
    }
    fn hostname(&self) -> String {
        self.hostname.clone()
    }
    fn interfaces(&self) -> Vec<crate::net::iface::Interface> {
        if self.interfaces.is_empty() {
            return vec![crate::net::iface::Interface::loopback()];
        }
        self.interfaces.clone()
    }
    fn write_stdout(&mut self, data: &[u8]) -> Result<(), Errno> {
        let room = self.output_limit.saturating_sub(self.stdout.len());
        self.stdout.extend_from_slice(&data[..data.len().min(room)]);
        Ok(())
    }
    fn write_stderr(&mut self, data: &[u8]) -> Result<(), Errno> {
        let room = self.output_limit.saturating_sub(self.stderr.len());
        self.stderr.extend_from_slice(&data[..data.len().min(room)]);
        Ok(())
    }
    fn fs(&mut self) -> &mut dyn Fs {
        self.fs.now_ms = self.epoch_unix_ms + self.now_ms;
        &mut self.fs
    }
    fn fs_ref(&self) -> &dyn Fs {
        &self.fs
    }
    fn random_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn pid(&self) -> u32 {
        self.pid
    }
    fn alloc_pid(&mut self) -> u32 {
        let p = self.next_pid;
        self.next_pid += 1;
        p
    }
    fn processes(&self) -> Vec<ProcessInfo> {
        self.processes.clone()
    }
    fn kill(&mut self, pid: u32, sig: Option<Signal>) -> Result<(), Errno> {
        self.calls.push(Call::Kill(pid, sig));
        if pid == self.pid {
            if let Some(s) = sig {
                self.signals.insert(0, (self.now_ms, s));
            }
            return Ok(());
        }
        if self.processes.iter().any(|p| p.pid == pid) {
            if matches!(sig, Some(Signal::Kill) | Some(Signal::Term)) {
                self.processes.retain(|p| p.pid != pid);
            }
            Ok(())
        } else {
            Err(Errno::ESRCH)
        }
    }
    fn creds(&self) -> Creds {
        self.creds.clone()
    }
    fn cpu_count(&self) -> u32 {
        self.cpus
    }
    fn set_memory(&mut self, bytes: u64) {
        self.memory = bytes;
    }
}

/// The result of [`run`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
    /// Exit code (`None`: still running when the driver stopped — blocked forever or past
    /// the deadline).
    pub code: Option<i32>,
    /// Virtual time elapsed.
    pub elapsed_ms: u64,
    /// Interactions.
    pub calls: Vec<Call>,
}

impl Outcome {
    /// stdout as text.
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    /// stderr as text.
    pub fn stderr_str(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Drives a program for at most one virtual day.
pub fn run(program: Box<dyn Program>, os: &mut FakeOs) -> Outcome {
    run_until(program, os, 86_400_000)
}

/// Drives a program until it exits, blocks forever, or `deadline_ms` of virtual time passes.
/// Scheduled signals interrupt sleeps, waits and computes at their time.
pub fn run_until(mut program: Box<dyn Program>, os: &mut FakeOs, deadline_ms: u64) -> Outcome {
    let start = os.now_ms;
    let out0 = os.stdout.len();
    let err0 = os.stderr.len();
    let calls0 = os.calls.len();
    let mut wake = Wake::Start;
    let mut code = None;
    for _ in 0..2_000_000 {
        let step = program.resume(os, wake.clone());
        let next_signal = os.signals.first().map(|(t, _)| *t);
        let end = start + deadline_ms;
        let interruptible = |os: &mut FakeOs, until: u64| -> Option<Wake> {
            if let Some(t) = os.signals.first().map(|(t, _)| *t) {
                if t <= until && t <= end {
                    let (t, s) = os.signals.remove(0);
                    os.now_ms = os.now_ms.max(t);
                    os.calls.push(Call::Signal(s));
                    return Some(Wake::Signal(s));
                }
            }
            None
        };
        let _ = next_signal;
        wake = match step {
            Step::Exit(c) => {
                code = Some(c);
                break;
            }
            Step::Sleep(ms) => {
                os.calls.push(Call::Sleep(ms));
                let until = os.now_ms.saturating_add(ms);
                if let Some(w) = interruptible(os, until) {
                    w
                } else if until > end {
                    os.now_ms = end;
                    break;
                } else {
                    os.now_ms = until;
                    Wake::Timer
                }
            }
            Step::Compute { cpu_ms, .. } => {
                os.calls.push(Call::Compute(cpu_ms));
                let until = os.now_ms.saturating_add(cpu_ms);
                if let Some(w) = interruptible(os, until) {
                    w
                } else if until > end {
                    os.now_ms = end;
                    break;
                } else {
                    os.now_ms = until;
                    Wake::Timer
                }
            }
            Step::Wait => match interruptible(os, end) {
                Some(w) => w,
                None => {
                    os.now_ms = os.now_ms.max(start);
                    break;
                }
            },
            Step::Net(call) => {
                os.calls.push(Call::Net(call.clone()));
                let (reply, lat) = os.answer(&call);
                os.now_ms = os.now_ms.saturating_add(lat);
                Wake::Net(reply)
            }
            Step::Spawn(sp) => {
                os.calls.push(Call::Spawn(sp.argv.clone()));
                let name = sp.argv.first().map(|a| crate::fs::basename(a)).unwrap_or_default();
                match os.spawns.iter().find(|r| r.name == name).cloned() {
                    Some(r) => {
                        os.now_ms = os.now_ms.saturating_add(r.duration_ms);
                        let _ = os.write_stderr(&r.stderr);
                        if sp.capture_stdout {
                            Wake::Child { code: r.code, stdout: r.stdout }
                        } else {
                            let _ = os.write_stdout(&r.stdout);
                            Wake::Child { code: r.code, stdout: Vec::new() }
                        }
                    }
                    None => {
                        let _ = os.write_stderr(format!("kubesim: {name}: no canned result in FakeOs\n").as_bytes());
                        Wake::Child { code: 127, stdout: Vec::new() }
                    }
                }
            }
        };
        if os.now_ms > start + deadline_ms {
            break;
        }
    }
    let mut calls = os.calls[calls0..].to_vec();
    calls.retain(|_| true);
    let _: BTreeMap<(), ()> = BTreeMap::new();
    Outcome { stdout: os.stdout[out0..].to_vec(), stderr: os.stderr[err0..].to_vec(), code, elapsed_ms: os.now_ms - start, calls }
}
