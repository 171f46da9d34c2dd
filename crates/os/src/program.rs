//! The process interface: programs are resumable state machines on virtual time.
//!
//! The host (the node runtime) drives a [`Program`] by calling [`Program::resume`] with a
//! [`Wake`] and acting on the returned [`Step`]:
//!
//! * the first call is `resume(os, Wake::Start)`;
//! * `Step::Sleep(ms)` → after `ms` virtual milliseconds call `resume(os, Wake::Timer)`;
//! * `Step::Compute { cpu_ms, threads }` → the program burns CPU; when the host has granted
//!   `cpu_ms` of CPU time (throttled by the container's CPU limit, spread over `threads`
//!   threads), call `resume(os, Wake::Timer)`;
//! * `Step::Net(call)` → perform the connection-level call and wake with `Wake::Net(reply)`;
//! * `Step::Spawn(spawn)` → run a program this crate does not implement, wake with
//!   `Wake::Child { code, stdout }` (`stdout` holds the child's output when
//!   `spawn.capture_stdout` is set, else the host wrote it to the container's log and passes
//!   an empty vector; the child's stderr always goes to the container's stderr);
//! * `Step::Wait` → the program is blocked until a signal (or forever);
//! * `Step::Exit(code)` → the process is gone; never resume it again.
//!
//! Signals: the host may call `resume(os, Wake::Signal(sig))` while the program is blocked in
//! `Sleep`, `Wait` or `Compute` (the pending timer is then cancelled: the program answers with a
//! new step, typically re-issuing the remaining sleep). While a `Net` or `Spawn` call is in
//! flight the host queues the signal and delivers it right after the reply's wake returns.
//! `Signal::Kill` need not be delivered at all (the host may simply drop the program); a
//! program that receives it exits with 137.
//!
//! Servers: the host routes an incoming connection to a program whose
//! [`Program::listening`] includes the port by calling [`Program::serve`] synchronously. If the
//! program was blocked in `Wait` or `Sleep` when `serve` returned `Some`, the host then resumes
//! it with `Wake::Timer` (so `nc -l` in a shell loop can exit and the loop listen again; a
//! sleeping program simply re-issues its remaining sleep).
//!
//! Everything here is plain `Clone` data: cloning a program (`Box<dyn Program>` is `Clone`)
//! yields a process whose future is bit-identical given the same wakes.

use crate::fs::{Errno, Fs};
use std::collections::BTreeMap;
use std::fmt;

/// Why a program is being resumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wake {
    /// First resume of a fresh process.
    Start,
    /// The sleep or compute interval requested by the previous step has elapsed.
    Timer,
    /// The reply to the previous `Step::Net`.
    Net(NetReply),
    /// The program requested with `Step::Spawn` finished.
    Child {
        /// Its exit code (128+n when killed by signal n).
        code: i32,
        /// Its stdout when `capture_stdout` was set, else empty.
        stdout: Vec<u8>,
    },
    /// A signal was delivered to this process.
    Signal(Signal),
}

/// What a program asks the host to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Wake me with `Wake::Timer` after this many virtual milliseconds.
    Sleep(u64),
    /// CPU-bound work: wake me with `Wake::Timer` once `cpu_ms` of CPU time was granted.
    Compute {
        /// CPU milliseconds needed.
        cpu_ms: u64,
        /// How many threads the work is spread over (≥ 1).
        threads: u32,
    },
    /// A network call; wake me with `Wake::Net`.
    Net(NetCall),
    /// Run a program this crate does not implement; wake me with `Wake::Child`.
    Spawn(Spawn),
    /// Blocked until a signal arrives (servers, `sleep infinity`, `tail -f`, `wait`).
    Wait,
    /// The process exited with this code.
    Exit(i32),
}

/// A request to run an executable (also the input of [`crate::registry::program_for`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Spawn {
    /// The argument vector; `argv[0]` is the name the program was invoked by.
    pub argv: Vec<String>,
    /// The environment.
    pub env: BTreeMap<String, String>,
    /// Working directory (absolute).
    pub cwd: String,
    /// Everything the program will read on stdin.
    pub stdin: Vec<u8>,
    /// When set, the host returns the child's stdout in `Wake::Child` instead of logging it.
    pub capture_stdout: bool,
    /// The resolved executable's absolute path (after `PATH` search, before symlinks).
    pub path: String,
    /// Whether stdout is a terminal (`kubectl exec -t`, a container with `tty: true`; a child
    /// keeps it unless its stdout is redirected or piped). curl hides its progress meter then.
    pub tty: bool,
    /// Whether stdin stays open after `stdin` is read (a container with `stdin: true`, an
    /// attached terminal): a shell reading commands from it waits for more instead of exiting.
    pub stdin_open: bool,
}

/// POSIX signals a container process can receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Signal {
    /// SIGHUP (1).
    Hup,
    /// SIGINT (2).
    Int,
    /// SIGQUIT (3).
    Quit,
    /// SIGKILL (9).
    Kill,
    /// SIGUSR1 (10).
    Usr1,
    /// SIGUSR2 (12).
    Usr2,
    /// SIGTERM (15).
    Term,
}

impl Signal {
    /// All signals in number order.
    pub const ALL: [Signal; 7] = [Signal::Hup, Signal::Int, Signal::Quit, Signal::Kill, Signal::Usr1, Signal::Usr2, Signal::Term];

    /// The Linux x86-64 signal number.
    pub fn number(self) -> i32 {
        match self {
            Signal::Hup => 1,
            Signal::Int => 2,
            Signal::Quit => 3,
            Signal::Kill => 9,
            Signal::Usr1 => 10,
            Signal::Usr2 => 12,
            Signal::Term => 15,
        }
    }

    /// The name without the `SIG` prefix (`TERM`).
    pub fn name(self) -> &'static str {
        match self {
            Signal::Hup => "HUP",
            Signal::Int => "INT",
            Signal::Quit => "QUIT",
            Signal::Kill => "KILL",
            Signal::Usr1 => "USR1",
            Signal::Usr2 => "USR2",
            Signal::Term => "TERM",
        }
    }

    /// Parses `TERM`, `SIGTERM`, `term` or `15`.
    pub fn parse(s: &str) -> Option<Signal> {
        if let Ok(n) = s.parse::<i32>() {
            return Signal::from_number(n);
        }
        let up = s.to_ascii_uppercase();
        let name = up.strip_prefix("SIG").unwrap_or(&up);
        Signal::ALL.iter().copied().find(|sig| sig.name() == name)
    }

    /// The signal with this number.
    pub fn from_number(n: i32) -> Option<Signal> {
        Signal::ALL.iter().copied().find(|sig| sig.number() == n)
    }

    /// The exit code of a process killed by this signal (128 + number).
    pub fn exit_code(self) -> i32 {
        128 + self.number()
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SIG{}", self.name())
    }
}

/// A connection-level network call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetCall {
    /// Open a TCP connection, send `send`, half-close, and collect what the peer sends back
    /// until it closes.
    Tcp {
        /// Destination IP address.
        dst: String,
        /// Destination port.
        port: u16,
        /// Bytes to send.
        send: Vec<u8>,
        /// Give up after this many milliseconds (connect + response).
        timeout_ms: u64,
    },
    /// Send one UDP datagram and wait for one reply datagram (`nc -u`).
    Udp {
        /// Destination IP address.
        dst: String,
        /// Destination port.
        port: u16,
        /// The datagram.
        send: Vec<u8>,
        /// Give up after this many milliseconds.
        timeout_ms: u64,
    },
    /// One DNS query to one server (a structured message, no wire codec).
    Dns {
        /// DNS server IP.
        server: String,
        /// DNS server port (53).
        port: u16,
        /// The question.
        question: DnsQuestion,
        /// Query over TCP instead of UDP.
        tcp: bool,
        /// Give up after this many milliseconds.
        timeout_ms: u64,
    },
}

impl NetCall {
    /// Where the call goes: (address, port, udp). A DNS query travels over UDP unless `tcp`.
    pub fn destination(&self) -> (&str, u16, bool) {
        match self {
            NetCall::Tcp { dst, port, .. } => (dst, *port, false),
            NetCall::Udp { dst, port, .. } => (dst, *port, true),
            NetCall::Dns { server, port, tcp, .. } => (server, *port, !*tcp),
        }
    }

    /// How long the caller waits for an answer.
    pub fn timeout_ms(&self) -> u64 {
        match self {
            NetCall::Tcp { timeout_ms, .. } | NetCall::Udp { timeout_ms, .. } | NetCall::Dns { timeout_ms, .. } => *timeout_ms,
        }
    }

    /// The reply of this call's kind carrying `error`.
    pub fn failed(&self, error: NetError) -> NetReply {
        match self {
            NetCall::Tcp { .. } => NetReply::Tcp(Err(error)),
            NetCall::Udp { .. } => NetReply::Udp(Err(error)),
            NetCall::Dns { .. } => NetReply::Dns(Err(error)),
        }
    }
}

/// The reply to a [`NetCall`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetReply {
    /// Reply to `NetCall::Tcp`: the bytes the peer sent back before closing.
    Tcp(Result<Vec<u8>, NetError>),
    /// Reply to `NetCall::Udp`: the reply datagram.
    Udp(Result<Vec<u8>, NetError>),
    /// Reply to `NetCall::Dns`.
    Dns(Result<DnsMessage, NetError>),
}

/// Connection failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetError {
    /// RST on connect: nothing listens (ECONNREFUSED).
    Refused,
    /// No answer before the timeout (ETIMEDOUT).
    TimedOut,
    /// No route to the host (EHOSTUNREACH).
    HostUnreachable,
    /// No route to the network (ENETUNREACH).
    NetworkUnreachable,
    /// The peer reset the connection (ECONNRESET).
    Reset,
}

impl NetError {
    /// The strerror text (`Connection refused`).
    pub fn strerror(self) -> &'static str {
        match self {
            NetError::Refused => "Connection refused",
            NetError::TimedOut => "Connection timed out",
            NetError::HostUnreachable => "No route to host",
            NetError::NetworkUnreachable => "Network is unreachable",
            NetError::Reset => "Connection reset by peer",
        }
    }
}

/// DNS record types the simulator knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RType {
    /// IPv4 address.
    A,
    /// IPv6 address.
    Aaaa,
    /// Canonical name.
    Cname,
    /// Service record (`priority weight port target` in `data`).
    Srv,
    /// Reverse pointer.
    Ptr,
    /// Text.
    Txt,
    /// Name server.
    Ns,
    /// Start of authority (`mname rname serial refresh retry expire minimum` in `data`).
    Soa,
    /// Mail exchanger.
    Mx,
    /// Any type.
    Any,
}

impl RType {
    /// The mnemonic (`AAAA`).
    pub fn name(self) -> &'static str {
        match self {
            RType::A => "A",
            RType::Aaaa => "AAAA",
            RType::Cname => "CNAME",
            RType::Srv => "SRV",
            RType::Ptr => "PTR",
            RType::Txt => "TXT",
            RType::Ns => "NS",
            RType::Soa => "SOA",
            RType::Mx => "MX",
            RType::Any => "ANY",
        }
    }

    /// Parses a mnemonic, case-insensitively.
    pub fn parse(s: &str) -> Option<RType> {
        let all = [RType::A, RType::Aaaa, RType::Cname, RType::Srv, RType::Ptr, RType::Txt, RType::Ns, RType::Soa, RType::Mx, RType::Any];
        all.into_iter().find(|t| t.name().eq_ignore_ascii_case(s))
    }
}

/// A DNS question.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DnsQuestion {
    /// Fully qualified name, with or without the trailing dot (servers accept both).
    pub name: String,
    /// Query type.
    pub qtype: RType,
}

/// DNS response codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rcode {
    /// NOERROR (0).
    NoError,
    /// FORMERR (1).
    FormErr,
    /// SERVFAIL (2).
    ServFail,
    /// NXDOMAIN (3).
    NxDomain,
    /// REFUSED (5).
    Refused,
}

impl Rcode {
    /// The mnemonic (`NXDOMAIN`).
    pub fn name(self) -> &'static str {
        match self {
            Rcode::NoError => "NOERROR",
            Rcode::FormErr => "FORMERR",
            Rcode::ServFail => "SERVFAIL",
            Rcode::NxDomain => "NXDOMAIN",
            Rcode::Refused => "REFUSED",
        }
    }
}

/// One resource record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsRecord {
    /// Owner name, fully qualified with a trailing dot (`kubernetes.default.svc.cluster.local.`).
    pub name: String,
    /// TTL in seconds.
    pub ttl: u32,
    /// Record type.
    pub rtype: RType,
    /// Presentation-format data (`10.96.0.1`, `target.`, `0 100 80 target.`).
    pub data: String,
}

/// A DNS response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsMessage {
    /// Response code.
    pub rcode: Rcode,
    /// The server is authoritative for the answer (`aa` flag).
    pub authoritative: bool,
    /// Answer section.
    pub answers: Vec<DnsRecord>,
    /// Authority section.
    pub authority: Vec<DnsRecord>,
    /// Additional section.
    pub additional: Vec<DnsRecord>,
}

impl DnsMessage {
    /// An empty response with this code.
    pub fn empty(rcode: Rcode) -> DnsMessage {
        DnsMessage { rcode, authoritative: false, answers: Vec::new(), authority: Vec::new(), additional: Vec::new() }
    }

    /// A NOERROR response with these answers.
    pub fn answer(records: Vec<DnsRecord>) -> DnsMessage {
        DnsMessage { rcode: Rcode::NoError, authoritative: true, answers: records, authority: Vec::new(), additional: Vec::new() }
    }
}

/// An incoming connection to a serving program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incoming {
    /// Source IP.
    pub src: String,
    /// Source port.
    pub src_port: u16,
    /// The local port the connection arrived on.
    pub port: u16,
    /// Protocol.
    pub udp: bool,
    /// The bytes the client sent.
    pub data: Vec<u8>,
}

/// What a server sends back on a connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outgoing {
    /// These bytes, then close.
    Reply(Vec<u8>),
    /// Reset the connection.
    Reset,
    /// Never answer (the client times out).
    Hang,
}

/// A process as `ps` sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Process id inside the container's PID namespace.
    pub pid: u32,
    /// Parent pid.
    pub ppid: u32,
    /// The process's user id (`ps` names it from the viewer's /etc/passwd).
    pub uid: u32,
    /// CPU time used, in milliseconds.
    pub cpu_ms: u64,
    /// Full command line (`argv` joined by spaces).
    pub cmdline: String,
    /// Resident memory in bytes.
    pub rss_bytes: u64,
    /// State letter (`S` sleeping, `R` running, `Z` zombie).
    pub state: char,
}

/// `uname` fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uname {
    /// `-s` (Linux).
    pub sysname: String,
    /// `-r` (kernel release).
    pub release: String,
    /// `-v` (kernel version string).
    pub version: String,
    /// `-m` (x86_64).
    pub machine: String,
}

impl Default for Uname {
    fn default() -> Uname {
        Uname {
            sysname: "Linux".into(),
            release: "6.8.0-kubesim".into(),
            version: "#1 SMP PREEMPT_DYNAMIC Thu Jan  1 00:00:00 UTC 2026".into(),
            machine: "x86_64".into(),
        }
    }
}

/// Credentials of the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Creds {
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// Supplementary groups.
    pub groups: Vec<u32>,
}

/// Memory figures for `free` and `/proc/meminfo`, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemInfo {
    /// Total memory visible to the container (the node's memory).
    pub total: u64,
    /// Free memory.
    pub free: u64,
    /// Available memory.
    pub available: u64,
}

/// The non-blocking services the host provides to a running program.
pub trait Os {
    /// Virtual milliseconds since the simulation epoch.
    fn now_ms(&self) -> u64;
    /// Wall-clock time of the simulated world, in milliseconds since the Unix epoch.
    fn unix_time_ms(&self) -> u64;
    /// Seconds since the Unix epoch (for `date`).
    fn unix_time(&self) -> u64 {
        self.unix_time_ms() / 1000
    }
    /// The container's hostname (the pod name, or `spec.hostname`).
    fn hostname(&self) -> String;
    /// The files the runtime bind-mounts into the container from the node, in the order the
    /// OCI spec lists them: the kubelet's `/etc/hosts` and termination-message file, then
    /// containerd's `/etc/hostname` and `/etc/resolv.conf`. None outside a pod.
    fn runtime_files(&self) -> Vec<String> {
        Vec::new()
    }
    /// Writes to the process's stdout. `Err(EPIPE)` when the reader is gone (pipelines).
    fn write_stdout(&mut self, data: &[u8]) -> Result<(), Errno>;
    /// Writes to the process's stderr.
    fn write_stderr(&mut self, data: &[u8]) -> Result<(), Errno>;
    /// Whether stdout goes somewhere other than the container's log (a pipe, a file, a
    /// command substitution): programs spawned on the host then need `capture_stdout`.
    fn stdout_captured(&self) -> bool {
        false
    }
    /// The container's filesystem view.
    fn fs(&mut self) -> &mut dyn Fs;
    /// Read-only access to the filesystem view.
    fn fs_ref(&self) -> &dyn Fs;
    /// The only source of randomness.
    fn random_u64(&mut self) -> u64;
    /// This process's pid.
    fn pid(&self) -> u32;
    /// The parent's pid (0 for PID 1).
    fn ppid(&self) -> u32 {
        0
    }
    /// Allocates a pid for an in-process child (subshells, applets the shell runs).
    fn alloc_pid(&mut self) -> u32;
    /// All processes in the container's PID namespace, ordered by pid.
    fn processes(&self) -> Vec<ProcessInfo>;
    /// Sends a signal (`None` = signal 0: only check the process exists).
    fn kill(&mut self, pid: u32, sig: Option<Signal>) -> Result<(), Errno>;
    /// Credentials.
    fn creds(&self) -> Creds {
        Creds { uid: 0, gid: 0, groups: vec![0] }
    }
    /// Kernel identification.
    fn uname(&self) -> Uname {
        Uname::default()
    }
    /// Number of CPUs visible (`nproc`).
    fn cpu_count(&self) -> u32 {
        1
    }
    /// Memory figures (`free`).
    fn mem_info(&self) -> MemInfo {
        MemInfo { total: 8 << 30, free: 6 << 30, available: 7 << 30 }
    }
    /// Reports the process's resident memory (stress-like programs allocating).
    fn set_memory(&mut self, bytes: u64);
    /// exec(2) replaced this process's image, or the program retitled itself (setproctitle,
    /// nginx's `nginx: master process ...`): its command line in `ps` and /proc/PID/cmdline.
    fn set_cmdline(&mut self, _argv: &[String]) {}
    /// setuid/setgid (gosu, su-exec, a server dropping privileges): the process's credentials.
    fn set_creds(&mut self, _uid: u32, _gid: u32) {}
    /// Reads `path` in the root filesystem of process `pid` (`/proc/PID/root/...`): `None`
    /// when there is no such process.
    fn process_root(&self, pid: u32, path: &str) -> Option<Result<Vec<u8>, Errno>> {
        (pid == self.pid()).then(|| self.fs_ref().read(path))
    }
    /// Starts a helper process of this one that sleeps until a signal ends it (a server's
    /// worker processes): its pid, or `None` where the host has no process table.
    fn spawn_worker(&mut self, _argv: Vec<String>, _uid: u32) -> Option<u32> {
        None
    }
    /// A hint that `additional` [`Os::spawn_worker`] calls follow (a master forking its
    /// workers), so a process table can make room once instead of growing per worker.
    fn reserve_workers(&mut self, _additional: usize) {}
    /// Seconds since boot (for `/proc/uptime`, `uptime`).
    fn uptime_ms(&self) -> u64 {
        self.now_ms()
    }
    /// The network namespace's interfaces (`ip addr`): loopback only by default.
    fn interfaces(&self) -> Vec<crate::net::iface::Interface> {
        vec![crate::net::iface::Interface::loopback()]
    }
}

/// Object-safe cloning for `Box<dyn Program>`.
pub trait ProgramClone {
    /// Clones into a box.
    fn clone_box(&self) -> Box<dyn Program>;
}

impl<T: Program + Clone + 'static> ProgramClone for T {
    fn clone_box(&self) -> Box<dyn Program> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Program> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// A process: a resumable state machine (see the module docs for the protocol).
pub trait Program: fmt::Debug + ProgramClone {
    /// Runs until the program blocks or exits.
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step;
    /// Resident memory in bytes right now (usage metrics, OOM kills).
    fn memory_bytes(&self) -> u64 {
        1 << 20
    }
    /// CPU work (ms) queued but not yet started. A server's answer is computed at once but
    /// reaches the client only after this work is done (the host adds it to the response time).
    fn cpu_backlog_ms(&self) -> u64 {
        0
    }
    /// For servers: handle one incoming connection synchronously (`None` = nothing listens).
    fn serve(&mut self, _os: &mut dyn Os, _conn: &Incoming) -> Option<Outgoing> {
        None
    }
    /// The ports this program listens on (for the host's routing; empty by default).
    fn listening(&self) -> Vec<(u16, bool)> {
        Vec::new()
    }
}

/// Default signal disposition for programs without handlers: PID 1 ignores everything but
/// SIGKILL (the kernel does not apply default actions to a PID namespace's init), any other
/// process dies with 128+n. Returns the exit code, or `None` when the signal is ignored.
pub fn default_signal_exit(os: &dyn Os, sig: Signal) -> Option<i32> {
    if sig == Signal::Kill {
        return Some(137);
    }
    if os.pid() == 1 {
        None
    } else {
        Some(sig.exit_code())
    }
}
