//! A container and its processes: the programs (`kubesim-os` shells and applets, the
//! application models of `kubesim-programs`) that run inside it on virtual time, over its root
//! filesystem (a copy-on-write clone of its image) and the node's volumes.
//!
//! The process engine follows the `Program` contract (kubesim-os `program` docs): a process is
//! resumed with a `Wake` and answers with a `Step`. Sleeps and CPU work become wake-up times
//! (CPU work is stretched by the container's CPU limit); network calls go to the host's outbox
//! for the fabric to route; spawns become child processes; signals interrupt sleeps, waits and
//! CPU work. When PID 1 exits, the container exits with its code.

use kubesim_api::time::EPOCH_UNIX_SECONDS;
use kubesim_api::Millis;
use kubesim_os::fs::{ContainerFs, Errno, Fs, Mount, Tree, Volumes};
use kubesim_os::program::{Creds, Incoming, MemInfo, NetCall, NetReply, Os, Outgoing, ProcessInfo, Program, Signal, Spawn, Step, Wake};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Most processes one container may have at once (a fork bomb stops here: EAGAIN).
pub const MAX_PROCESSES: usize = 256;
/// Most resumes one `run` call performs per container before yielding (a runaway program
/// cannot stall the world; the rest runs at the next wake-up).
pub const MAX_RESUMES_PER_RUN: usize = 10_000;
/// Most log lines kept per container (older lines are dropped, as log rotation would).
pub const MAX_LOG_LINES: usize = 10_000;
/// The CPU meter's window (the rate `kubectl top` and the metrics-server see).
pub const CPU_WINDOW_MS: Millis = 15_000;

/// Which stream a log line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stream {
    /// stdout.
    Stdout,
    /// stderr.
    Stderr,
}

/// One line of a container's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// When it was written (virtual ms).
    pub t_ms: Millis,
    /// Its stream.
    pub stream: Stream,
    /// The text, without its newline.
    pub text: String,
}

/// How much room to add to a full buffer holding `len` that must take `needed` more: a
/// quarter of what it holds (at least `needed`), not double. A container's process table and
/// log stop growing after its start-up, and doubling would leave up to half of each unused.
fn quarter_more(len: usize, needed: usize) -> usize {
    needed.max(len / 4)
}

/// A container's log, oldest line first, front-coded: each line is kept as how much it shares
/// with the line before it and the rest (lines written together share most of their text:
/// nginx writes some forty lines per start, thirty-odd of them `<time> [notice] 1#1: start
/// worker process N`, and a log line read from kubectl or the UI is decoded from the oldest).
/// Per line, in `data`: varints of the time since the previous line, of the shared prefix's
/// length (shifted left one bit, the stream in the low bit) and of the rest's length, then the
/// rest's bytes. The last line is also kept whole for the next line's comparison.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogBuffer {
    data: Vec<u8>,
    lines: u32,
    last_t: Millis,
    last: String,
}

/// Decodes a [`LogBuffer`] from its oldest line.
struct LogCursor<'a> {
    data: &'a [u8],
    pos: usize,
    left: usize,
    t_ms: Millis,
    text: String,
}

impl LogCursor<'_> {
    /// The next line's time and stream; its text is left in `self.text`.
    fn advance(&mut self) -> Option<(Millis, Stream)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let bad = "a log buffer decodes as it was encoded";
        let dt = kubesim_api::varint::get(self.data, &mut self.pos).expect(bad);
        let head = kubesim_api::varint::get(self.data, &mut self.pos).expect(bad);
        let len = kubesim_api::varint::get(self.data, &mut self.pos).expect(bad) as usize;
        self.t_ms = self.t_ms.wrapping_add(dt);
        self.text.truncate((head >> 1) as usize);
        self.text.push_str(std::str::from_utf8(&self.data[self.pos..self.pos + len]).expect(bad));
        self.pos += len;
        Some((self.t_ms, if head & 1 == 0 { Stream::Stdout } else { Stream::Stderr }))
    }
}

impl Iterator for LogCursor<'_> {
    type Item = LogLine;
    fn next(&mut self) -> Option<LogLine> {
        let (t_ms, stream) = self.advance()?;
        Some(LogLine { t_ms, stream, text: self.text.clone() })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for LogCursor<'_> {}

impl LogBuffer {
    /// How many lines it holds.
    pub fn len(&self) -> usize {
        self.lines as usize
    }

    /// Whether it holds no line.
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    fn cursor(&self) -> LogCursor<'_> {
        LogCursor { data: &self.data, pos: 0, left: self.len(), t_ms: 0, text: String::new() }
    }

    /// The lines, oldest first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = LogLine> + '_ {
        self.cursor()
    }

    /// The last `n` lines (or all), oldest first.
    pub fn tail(&self, n: usize) -> impl ExactSizeIterator<Item = LogLine> + '_ {
        self.tail_cursor(n)
    }

    /// Appends a line (without its newline); at [`MAX_LOG_LINES`] the oldest tenth goes first,
    /// as a rotated log file would.
    pub fn push(&mut self, t_ms: Millis, stream: Stream, line: &str) {
        if self.len() >= MAX_LOG_LINES {
            self.drop_oldest(MAX_LOG_LINES / 10);
        }
        let mut shared = self.last.bytes().zip(line.bytes()).take_while(|(a, b)| a == b).count();
        while !(self.last.is_char_boundary(shared) && line.is_char_boundary(shared)) {
            shared -= 1;
        }
        let rest = &line.as_bytes()[shared..];
        let needed = rest.len() + 3 * 10;
        if self.data.capacity() - self.data.len() < needed {
            self.data.reserve_exact(quarter_more(self.data.len(), needed));
        }
        kubesim_api::varint::put(&mut self.data, t_ms.wrapping_sub(self.last_t));
        kubesim_api::varint::put(&mut self.data, (shared as u64) << 1 | stream as u64);
        kubesim_api::varint::put(&mut self.data, rest.len() as u64);
        self.data.extend_from_slice(rest);
        self.lines += 1;
        self.last_t = t_ms;
        self.last.truncate(shared);
        self.last.push_str(&line[shared..]);
        // One long line must not leave its room behind for every short one after it.
        if self.last.capacity() > 256 && self.last.capacity() > 4 * self.last.len() {
            self.last.shrink_to(2 * self.last.len());
        }
    }

    /// The cursor positioned before the last `n` lines (or all).
    fn tail_cursor(&self, n: usize) -> LogCursor<'_> {
        let mut cursor = self.cursor();
        for _ in n..self.len() {
            cursor.advance();
        }
        cursor
    }

    /// Re-encodes the buffer without its oldest `n` lines, one line at a time (the kept lines
    /// are never all decoded at once).
    fn drop_oldest(&mut self, n: usize) {
        let old = std::mem::take(self);
        let mut cursor = old.tail_cursor(old.len().saturating_sub(n));
        while let Some((t_ms, stream)) = cursor.advance() {
            self.push(t_ms, stream, &cursor.text);
        }
    }
}

/// A container's environment (CRI `ContainerConfig.envs`), in name order: one allocation of
/// names and values rather than a map's nodes. Every container keeps its own for as long as it
/// exists (a process's own environment is a map, built from it at each start or exec), and a
/// pod's sixteen or so variables cost a B-tree three nodes of mostly empty slots.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Env(Box<[(Box<str>, Box<str>)]>);

impl Env {
    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.binary_search_by(|(n, _)| (**n).cmp(name)).ok().map(|i| &*self.0[i].1)
    }
    /// The variables in name order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.0.iter().map(|(n, v)| (&**n, &**v))
    }
    /// How many variables.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The environment as a process receives it.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }
}

impl From<BTreeMap<String, String>> for Env {
    fn from(map: BTreeMap<String, String>) -> Env {
        Env(map.into_iter().map(|(n, v)| (n.into_boxed_str(), v.into_boxed_str())).collect())
    }
}

impl FromIterator<(String, String)> for Env {
    /// Later values of a name replace earlier ones (as a map's inserts would).
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Env {
        Env::from(iter.into_iter().collect::<BTreeMap<_, _>>())
    }
}

/// What CreateContainer is told (the CRI ContainerConfig, after the kubelet resolved the
/// command, environment and mounts).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ContainerSpec {
    /// The container's name in the pod.
    pub name: String,
    /// The image as written in the pod spec.
    pub image: String,
    /// The command line (entrypoint + cmd, as the kubelet built it).
    pub argv: Vec<String>,
    /// The environment.
    pub env: Env,
    /// The working directory.
    pub cwd: String,
    /// Volume mounts (volumes live in the host's storage).
    pub mounts: Vec<Mount>,
    /// The hostname the container sees.
    pub hostname: String,
    /// Files the runtime writes into the root filesystem (/etc/hosts, /etc/hostname,
    /// /etc/resolv.conf): moved there at creation, so a created container's spec lists none.
    pub files: Vec<(String, Vec<u8>, u32)>,
    /// memory limit in bytes.
    pub memory_limit: Option<u64>,
    /// cpu limit in millicores.
    pub cpu_limit_milli: Option<u64>,
    /// Usage overrides from the pod's `kubesim.dev/*-usage` annotations: (cpu milli, memory bytes).
    pub usage_override: (Option<i64>, Option<i64>),
    /// The container's declared ports `(port, udp)` (what a generic stand-in program listens on).
    pub ports: Vec<(u16, bool)>,
    /// The signal StopContainer sends first (the image's STOPSIGNAL; SIGTERM by default).
    pub stop_signal: Option<Signal>,
    /// Where the kubelet reads the termination message from.
    pub termination_message_path: String,
    /// The node's CPU count and memory (what `nproc` and `free` show).
    pub node_cpus: u32,
    /// Node memory in bytes.
    pub node_memory: u64,
    /// Process credentials (securityContext runAsUser / runAsGroup).
    pub uid: u32,
    /// Group id.
    pub gid: u32,
    /// `tty: true` in the pod spec: PID 1's stdout is a terminal.
    pub tty: bool,
    /// `stdin: true` in the pod spec: PID 1's stdin is an open stream (a shell reading it waits
    /// for commands instead of exiting).
    pub stdin_open: bool,
    /// Another container whose PID namespace this one joins (an ephemeral container's
    /// `targetContainerName`): the target's container id.
    pub pid_target: Option<String>,
    /// The network namespace's interfaces (the sandbox's, filled in by CreateContainer);
    /// empty: loopback only.
    pub interfaces: Vec<kubesim_os::net::iface::Interface>,
}

/// Container state (CRI ContainerState).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerState {
    /// Created, not started.
    Created,
    /// Running.
    Running,
    /// Exited.
    Exited,
}

/// What a process is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProcState {
    /// Resume it now with this wake (boxed: a wake can carry a DNS reply, and an unboxed one
    /// would make every process, nginx's idle workers included, that much larger).
    Runnable(Box<Wake>),
    /// Sleeping until then.
    Sleeping(Millis),
    /// Using the CPU until then.
    Computing(Millis),
    /// Waiting for the reply to network request `id`.
    Net(u64),
    /// Waiting for a child to exit.
    Child(u32),
    /// Blocked until a signal.
    Waiting,
}

/// Where a process's stdout goes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Sink {
    /// The container's log.
    Log,
    /// A buffer its parent reads (a spawn with capture_stdout). Boxed: a process's sink is
    /// nearly always the log, and every process carries one (8 bytes here, not a `Vec`'s 24).
    #[allow(clippy::box_collection)]
    Capture(Box<Vec<u8>>),
    /// An exec session's output.
    Session(u64),
    /// Nowhere (a lifecycle hook's output, which the kubelet only reports on failure).
    Discard,
}

/// Signals sent to a process and not delivered yet, oldest first: boxed, as a process
/// rarely has any and every process carries the list (`Process` stays small: nginx runs a
/// worker per CPU).
#[derive(Clone, Debug, Default)]
#[allow(clippy::box_collection)] // 8 bytes per process, not a `Vec`'s 24
struct PendingSignals(Option<Box<Vec<Signal>>>);

impl PendingSignals {
    fn push(&mut self, signal: Signal) {
        self.0.get_or_insert_with(Box::default).push(signal);
    }
    fn clear(&mut self) {
        self.0 = None;
    }
    fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|list| list.is_empty())
    }
    /// The oldest signal, removed.
    fn take_first(&mut self) -> Option<Signal> {
        let list = self.0.as_mut().filter(|list| !list.is_empty())?;
        let first = list.remove(0);
        if list.is_empty() {
            self.0 = None;
        }
        Some(first)
    }
}

/// [`Process::memory`] when the process's memory is its program's.
const PROGRAM_MEMORY: u64 = u64::MAX;

/// One process.
#[derive(Clone, Debug)]
pub struct Process {
    /// Its pid in the container's namespace.
    pub pid: u32,
    /// Its parent (0 for PID 1 and exec'd processes).
    pub ppid: u32,
    /// Its command line (shared: a master's workers carry one title between them).
    pub argv: Arc<[String]>,
    program: Option<Box<dyn Program>>,
    /// What it is doing.
    pub state: ProcState,
    /// Its resident memory when set rather than its program's (a spawned worker's, a program's
    /// `set_memory`), or [`PROGRAM_MEMORY`]: a sentinel rather than an `Option`, which would
    /// cost every process eight more bytes.
    memory: u64,
    /// CPU time used (ms).
    pub cpu_ms: u64,
    sink: Sink,
    pending: PendingSignals,
    /// The exec session it belongs to (its root pid), if any.
    session: Option<u32>,
    /// Its user id (setuid by gosu or a server dropping privileges; children inherit it).
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
}

/// What resuming a session process did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEvent {
    /// Nothing the driver must act on.
    Continue,
    /// A network call to answer with [`Container::session_wake`].
    Net(NetCall),
    /// The process exited with this code.
    Exited(i32),
    /// No such process.
    Gone,
}

/// A network request a process made, for the fabric to route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetRequest {
    /// Its id (the reply is matched by it).
    pub id: u64,
    /// The container that sent it.
    pub container: String,
    /// The call.
    pub call: NetCall,
}

/// What an exec session reads and whether it has a terminal (`kubectl exec -i -t`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecIo {
    /// Everything the command reads on stdin.
    pub stdin: Vec<u8>,
    /// Whether its stdout is a terminal.
    pub tty: bool,
}

/// An exec session's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecOutput {
    /// stdout.
    pub stdout: Vec<u8>,
    /// stderr.
    pub stderr: Vec<u8>,
    /// Exit code (126/127 for exec failures, as runc reports them).
    pub code: i32,
    /// Virtual time the command took.
    pub elapsed_ms: Millis,
    /// The runtime could not start the command (containerd's `failed to start exec`):
    /// `stderr` is runc's exec error.
    pub start_failed: bool,
}

/// CPU used over the last [`CPU_WINDOW_MS`].
#[derive(Clone, Debug, Default)]
struct CpuMeter {
    /// (start µs, end µs, millicores) intervals of CPU use, oldest first.
    spans: Vec<(u64, u64, u64)>,
}

impl CpuMeter {
    fn record(&mut self, start_us: u64, end_us: u64, milli: u64) {
        if end_us > start_us {
            self.spans.push((start_us, end_us, milli));
        }
        if self.spans.len() > 4_096 {
            self.spans.drain(..2_048);
        }
    }
    fn rate_milli(&self, now: Millis) -> i64 {
        let now_us = now.saturating_mul(1000);
        let from = now_us.saturating_sub(CPU_WINDOW_MS * 1000);
        let used: u128 = self.spans.iter().map(|(s, e, m)| (e.min(&now_us).saturating_sub(*s.max(&from))) as u128 * *m as u128).sum();
        (used / (CPU_WINDOW_MS as u128 * 1000)) as i64
    }
}

/// The CFS bandwidth period (cpu.cfs_period_us, 100 ms: the kubelet's default
/// `cpuCFSQuotaPeriod`).
pub const CFS_PERIOD_MS: Millis = 100;

/// CFS bandwidth control of a container with a CPU limit: its quota per period is
/// `limit × period` (cpu.cfs_quota_us, 50 ms of each 100 ms for 500m). A thread runs at a full
/// core until the period's quota is used up, then waits for the next period — so a 30 ms
/// request in a 500m container takes 30 ms when the container is otherwise idle, and the
/// container's average use never exceeds its limit. Compute work books CPU in the periods in
/// the order it arrives (concurrent work queues behind earlier work instead of sharing fairly).
#[derive(Clone, Debug, Default)]
struct CfsQuota {
    /// Period index → µs of CPU booked in it (periods before the current one are dropped).
    used: BTreeMap<u64, u64>,
}

impl CfsQuota {
    /// Books `cpu_us` of work that can run at `rate_milli` from `now`, under `quota_us` per
    /// period; records the spans it runs in on `meter` and returns the µs it finishes at.
    fn book(&mut self, now: Millis, cpu_us: u64, rate_milli: u64, quota_us: u64, meter: &mut CpuMeter) -> u64 {
        let period_us = CFS_PERIOD_MS * 1000;
        let mut t = now.saturating_mul(1000);
        self.used = self.used.split_off(&(t / period_us));
        let mut remaining = cpu_us;
        while remaining > 0 {
            let p = t / period_us;
            let period_end = (p + 1) * period_us;
            let used = self.used.entry(p).or_insert(0);
            let avail = quota_us.saturating_sub(*used);
            let can_run = (period_end - t).saturating_mul(rate_milli) / 1000;
            let take = remaining.min(avail).min(can_run);
            if take == 0 {
                t = period_end;
                continue;
            }
            let duration = (take * 1000).div_ceil(rate_milli).max(1);
            meter.record(t, t + duration, rate_milli);
            *used += take;
            remaining -= take;
            t = (t + duration).min(period_end);
            if remaining > 0 && *used >= quota_us {
                t = period_end;
            }
        }
        t
    }
}

/// A preStop hook as the runtime runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreStop {
    /// An exec action: a process in the container; the stop signal follows its exit.
    Exec(Vec<String>),
    /// A sleep action (the kubelet sleeps, the container keeps running), in ms.
    Sleep(Millis),
}

/// A container.
#[derive(Clone, Debug)]
pub struct Container {
    /// Container id (64 hex chars).
    pub id: String,
    /// Sandbox it belongs to.
    pub sandbox_id: String,
    /// What it was created with.
    pub spec: ContainerSpec,
    /// State.
    pub state: ContainerState,
    /// Creation time.
    pub created_at: Millis,
    /// Start time.
    pub started_at: Option<Millis>,
    /// Which StartContainer call of its runtime started it ([`ContainerRuntime::starts`]
    /// then; 0 before): a watcher that last looked at start count `n` finds the containers
    /// started since as those above `n`.
    ///
    /// [`ContainerRuntime::starts`]: crate::cri::ContainerRuntime::starts
    pub start_serial: u64,
    /// Exit time.
    pub finished_at: Option<Millis>,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Reason (`Completed`, `Error`, `OOMKilled`, `StartError`).
    pub reason: Option<String>,
    /// The runtime's message for a failed start.
    pub start_error: Option<String>,
    /// What the container wrote to its terminationMessagePath (at most 4096 bytes), read
    /// once it exited.
    pub termination_message: Option<String>,
    /// Its output: the log, and exec sessions' buffers.
    pub io: ContainerIo,
    /// The root filesystem.
    pub rootfs: Tree,
    procs: ProcTable,
    rng: u64,
    /// SIGKILL deadline of a StopContainer in progress.
    kill_at: Option<Millis>,
    /// A preStop hook is running as this pid; the stop signal follows when it exits.
    hook_pid: Option<u32>,
    /// A preStop sleep action ends at this time; the stop signal follows.
    signal_at: Option<Millis>,
    /// Set when a run used its whole resume budget with processes still runnable: the next run
    /// is a virtual millisecond later, so a program that never blocks cannot stall the clock.
    throttled_until: Option<Millis>,
    /// [`Container::next_wakeup`] as last computed; the runtime clears it whenever it hands
    /// the container out mutably (`cri::Containers`), so only a changed container is rescanned.
    pub(crate) wake_cache: std::cell::Cell<Option<Option<Millis>>>,
    cpu: CpuMeter,
    cfs: CfsQuota,
    /// The pid of its main process (1, unless the pod shares one PID namespace).
    main_pid: u32,
    /// The pod's shared PID namespace as this container sees it (shareProcessNamespace), lent
    /// by the runtime around each run.
    pub(crate) pid_ns: Option<PidNamespace>,
}

/// What a container sees of its pod's shared PID namespace (`shareProcessNamespace: true`):
/// the runtime fills it in before the container runs and collects it after.
#[derive(Clone, Debug, Default)]
pub struct PidNamespace {
    /// The pod's other processes: the sandbox's `/pause` (PID 1) and the other containers'.
    pub peers: Vec<ProcessInfo>,
    /// Their root filesystems by pid (`/proc/PID/root`; their volume mounts are not followed).
    pub roots: BTreeMap<u32, Tree>,
    /// Signals this container's processes sent to peers, for the runtime to deliver.
    pub signals: Vec<(u32, Option<Signal>)>,
}

/// A container's output: its log (lines per stream) and exec sessions' buffers.
#[derive(Clone, Debug, Default)]
pub struct ContainerIo {
    /// The log.
    pub logs: LogBuffer,
    partial: [Vec<u8>; 2],
    sessions: BTreeMap<u64, (Vec<u8>, Vec<u8>)>,
}

impl ContainerIo {
    /// What was written since the last newline (a prompt such as `mysql> `): an attached
    /// terminal shows it, the log does not have it yet.
    pub fn partial_text(&self) -> String {
        self.partial.iter().map(|p| String::from_utf8_lossy(p).into_owned()).collect()
    }

    fn write(&mut self, sink: &Sink, stream: Stream, data: &[u8], now: Millis) -> Result<(), Errno> {
        match sink {
            Sink::Session(id) => {
                if let Some(s) = self.sessions.get_mut(id) {
                    let buffer = if stream == Stream::Stdout { &mut s.0 } else { &mut s.1 };
                    if buffer.len() < 4 << 20 {
                        buffer.extend_from_slice(data);
                    }
                }
                Ok(())
            }
            Sink::Discard => Ok(()),
            _ => {
                self.log_bytes(stream, data, now);
                Ok(())
            }
        }
    }

    /// Appends output to the log: each complete line as one entry (a partial line waits for
    /// its newline, or is cut at 64 KiB).
    fn log_bytes(&mut self, stream: Stream, data: &[u8], now: Millis) {
        let index = stream as usize;
        let mut rest = data;
        if !self.partial[index].is_empty() {
            let Some(nl) = rest.iter().position(|b| *b == b'\n') else {
                self.partial[index].extend_from_slice(rest);
                return self.cut_long_partial(index, stream, now);
            };
            let mut line = std::mem::take(&mut self.partial[index]);
            line.extend_from_slice(&rest[..nl]);
            self.logs.push(now, stream, &String::from_utf8_lossy(&line));
            rest = &rest[nl + 1..];
        }
        while let Some(nl) = rest.iter().position(|b| *b == b'\n') {
            self.logs.push(now, stream, &String::from_utf8_lossy(&rest[..nl]));
            rest = &rest[nl + 1..];
        }
        self.partial[index].extend_from_slice(rest);
        self.cut_long_partial(index, stream, now);
    }

    fn cut_long_partial(&mut self, index: usize, stream: Stream, now: Millis) {
        if self.partial[index].len() > 64 * 1024 {
            let rest = std::mem::take(&mut self.partial[index]);
            self.logs.push(now, stream, &String::from_utf8_lossy(&rest));
        }
    }

    fn flush_partial(&mut self, now: Millis) {
        for stream in [Stream::Stdout, Stream::Stderr] {
            let rest = std::mem::take(&mut self.partial[stream as usize]);
            if !rest.is_empty() {
                self.logs.push(now, stream, &String::from_utf8_lossy(&rest));
            }
        }
    }
}

/// A container's processes in pid order: a vector, unboxed, because a container has one
/// process or a few dozen (nginx's workers, one per CPU) and the sums over them (the memory the
/// eviction manager and the OOM killer read) then walk one allocation instead of a box each.
#[derive(Clone, Debug)]
struct ProcTable {
    procs: Vec<Process>,
    next_pid: u32,
    /// The sum of the processes' memory, kept until the table is next borrowed mutably: a
    /// program's memory changes only when it runs or is signalled (through `&mut`), and the
    /// eviction manager asks every running container of the node each interval, most of them
    /// idle since the last time.
    memory: std::cell::Cell<Option<u64>>,
}

impl Default for ProcTable {
    fn default() -> Self {
        ProcTable { procs: Vec::new(), next_pid: 1, memory: std::cell::Cell::new(None) }
    }
}

impl ProcTable {
    fn alloc_pid(&mut self) -> u32 {
        let pid = self.next_pid;
        self.next_pid += 1;
        pid
    }
    fn position(&self, pid: u32) -> Result<usize, usize> {
        self.procs.binary_search_by_key(&pid, |p| p.pid)
    }
    /// Every mutable borrow of a process goes through here or [`ProcTable::changing`].
    fn get_mut(&mut self, pid: &u32) -> Option<&mut Process> {
        let at = self.position(*pid).ok()?;
        Some(&mut self.changing()[at])
    }
    /// The processes, to change: forgets the memory sum.
    fn changing(&mut self) -> &mut Vec<Process> {
        self.memory.set(None);
        &mut self.procs
    }
    fn contains_key(&self, pid: &u32) -> bool {
        self.position(*pid).is_ok()
    }
    /// Adds (or replaces) the process with pid `process.pid`. The table grows by a quarter
    /// ([`quarter_more`]): nginx's 33 processes would otherwise sit in room for 64.
    fn insert(&mut self, process: Process) {
        match self.position(process.pid) {
            Ok(at) => self.changing()[at] = process,
            Err(at) => {
                let procs = self.changing();
                if procs.len() == procs.capacity() {
                    procs.reserve_exact(quarter_more(procs.len(), 1));
                }
                procs.insert(at, process)
            }
        }
    }
    /// Room for `additional` more processes, exactly.
    fn reserve(&mut self, additional: usize) {
        self.procs.reserve_exact(additional);
    }
    fn remove(&mut self, pid: &u32) -> Option<Process> {
        let at = self.position(*pid).ok()?;
        Some(self.changing().remove(at))
    }
    fn values(&self) -> std::slice::Iter<'_, Process> {
        self.procs.iter()
    }
    fn values_mut(&mut self) -> std::slice::IterMut<'_, Process> {
        self.changing().iter_mut()
    }
    fn len(&self) -> usize {
        self.procs.len()
    }
    fn clear(&mut self) {
        self.changing().clear();
    }
    fn retain(&mut self, keep: impl FnMut(&Process) -> bool) {
        self.changing().retain(keep);
    }
    fn memory_bytes(&self) -> u64 {
        if let Some(sum) = self.memory.get() {
            debug_assert_eq!(sum, self.procs.iter().map(|p| p.rss()).sum::<u64>(), "a process's memory changed without a mutable borrow");
            return sum;
        }
        let sum = self.procs.iter().map(|p| p.rss()).sum();
        self.memory.set(Some(sum));
        sum
    }
    fn infos(&self) -> Vec<ProcessInfo> {
        self.procs.iter().map(|p| p.info(p.rss())).collect()
    }
}

fn seed_of(id: &str) -> u64 {
    kubesim_api::hash::fnv64a(id.as_bytes()) | 1
}

impl Container {
    /// CreateContainer: the root filesystem is the image's tree plus the runtime's files.
    pub fn new(id: String, sandbox_id: String, mut spec: ContainerSpec, image_tree: &Tree, volumes: &mut Volumes, now: Millis) -> Container {
        let mut rootfs = image_tree.clone();
        // The files move into the root filesystem (the spec the container keeps lists none).
        for (path, data, mode) in std::mem::take(&mut spec.files) {
            rootfs.add_file(&path, data, mode);
        }
        kubesim_os::fs::prepare_mountpoints(&mut rootfs, &spec.mounts, volumes);
        let rng = seed_of(&id);
        Container {
            id,
            sandbox_id,
            spec,
            state: ContainerState::Created,
            created_at: now,
            started_at: None,
            start_serial: 0,
            finished_at: None,
            exit_code: None,
            reason: None,
            start_error: None,
            io: ContainerIo::default(),
            rootfs,
            procs: ProcTable::default(),
            rng,
            kill_at: None,
            hook_pid: None,
            signal_at: None,
            throttled_until: None,
            wake_cache: std::cell::Cell::new(None),
            termination_message: None,
            cpu: CpuMeter::default(),
            cfs: CfsQuota::default(),
            main_pid: 1,
            pid_ns: None,
        }
    }

    /// The CPU (millicores) work spread over `threads` threads gets on average: one core per
    /// thread, at most the container's CPU limit (the node's cores without one). Never 0.
    fn cores_milli(&self, threads: u32) -> u64 {
        let limit = self.spec.cpu_limit_milli.unwrap_or(self.spec.node_cpus as u64 * 1000);
        (u64::from(threads.max(1)) * 1000).min(limit).max(1)
    }

    /// Runs `cpu_ms` of work over `threads` threads from `now`: one core per thread (at most the
    /// node's), under the container's CFS quota when it has a CPU limit. The time it is done.
    fn compute(&mut self, now: Millis, cpu_ms: u64, threads: u32) -> Millis {
        let (cfs, cpu) = (&mut self.cfs, &mut self.cpu);
        Self::run_cpu(&self.spec, cfs, cpu, now, cpu_ms, threads)
    }

    /// When `cpu_ms` of single-threaded work started at `from` would be done, booking nothing:
    /// the wait a request queued behind a server's CPU backlog sees.
    fn compute_done_at(&self, from: Millis, cpu_ms: u64) -> Millis {
        let (mut cfs, mut cpu) = (self.cfs.clone(), CpuMeter::default());
        Self::run_cpu(&self.spec, &mut cfs, &mut cpu, from, cpu_ms, 1)
    }

    fn run_cpu(spec: &ContainerSpec, cfs: &mut CfsQuota, cpu: &mut CpuMeter, now: Millis, cpu_ms: u64, threads: u32) -> Millis {
        if cpu_ms == 0 {
            return now;
        }
        let node_milli = (spec.node_cpus.max(1) as u64) * 1000;
        let rate = (u64::from(threads.max(1)) * 1000).min(node_milli).max(1);
        let cpu_us = cpu_ms.saturating_mul(1000);
        let end_us = match spec.cpu_limit_milli {
            Some(limit) => cfs.book(now, cpu_us, rate, (limit.max(1) * CFS_PERIOD_MS).max(1), cpu),
            None => {
                let start = now.saturating_mul(1000);
                let end = start + (cpu_us * 1000).div_ceil(rate);
                cpu.record(start, end, rate);
                end
            }
        };
        end_us.div_ceil(1000).max(now + 1)
    }

    /// StartContainer: starts PID 1 from the command line. A command that cannot be executed
    /// makes the container exit at once with runc's error (exit 128, reason StartError).
    pub fn start(&mut self, volumes: &mut Volumes, foreign: Foreign, now: Millis) {
        self.state = ContainerState::Running;
        self.started_at = Some(now);
        let mut spawn = Spawn {
            argv: self.spec.argv.clone(),
            env: self.spec.env.to_map(),
            cwd: self.spec.cwd.clone(),
            stdin: Vec::new(),
            capture_stdout: false,
            path: String::new(),
            tty: self.spec.tty,
            stdin_open: self.spec.stdin_open,
        };
        match self.load(&mut spawn, volumes, foreign, now) {
            Ok(program) => {
                let pid = self.alloc_pid();
                self.main_pid = pid;
                self.procs.insert(Process::new(pid, 0, spawn.argv.clone(), program, Sink::Log).with_creds(self.spec.uid, self.spec.gid));
            }
            Err(message) => {
                self.start_error = Some(message);
                self.exit(now, 128, "StartError");
            }
        }
    }

    /// Resolves and loads a program for `spawn` (argv[0] through PATH unless `path` is set),
    /// with runc's error text when it cannot be executed.
    /// (`spawn.path` is set to the resolved executable: the spawn is not copied, environment
    /// and all, for it.)
    fn load(&mut self, spawn: &mut Spawn, volumes: &mut Volumes, foreign: Foreign, now: Millis) -> Result<Box<dyn Program>, String> {
        let unix_ms = unix_ms(now);
        let fs = ContainerFs::new(&mut self.rootfs, &self.spec.mounts, volumes, unix_ms);
        let first = spawn.argv.first().cloned().unwrap_or_default();
        if spawn.path.is_empty() {
            spawn.path =
                kubesim_os::registry::resolve_command(&first, spawn.env.get("PATH").map(String::as_str), &spawn.cwd, &fs).map_err(|e| exec_error(&first, e))?;
        }
        let spawn = &*spawn;
        match kubesim_os::registry::program_for(spawn, &fs) {
            Ok(program) => Ok(program),
            Err(not_implemented) => match kubesim_os::registry::inspect(&fs, &spawn.path) {
                Err(e) => Err(exec_error(&first, e)),
                Ok(kubesim_os::registry::Exe::Unknown) => Err(exec_error(&first, Errno::ENOEXEC)),
                Ok(_) => Ok(foreign(&not_implemented.name, spawn, &self.spec.image, &self.spec.ports).unwrap_or_else(|| Box::new(Idle))),
            },
        }
    }

    fn alloc_pid(&mut self) -> u32 {
        self.procs.alloc_pid()
    }

    /// The next pid this container would allocate (the runtime lends a shared PID
    /// namespace's counter with [`Container::set_next_pid`]).
    pub(crate) fn next_pid(&self) -> u32 {
        self.procs.next_pid
    }

    pub(crate) fn set_next_pid(&mut self, next: u32) {
        self.procs.next_pid = next;
    }

    /// Whether `pid` is one of this container's processes.
    pub fn has_pid(&self, pid: u32) -> bool {
        self.procs.contains_key(&pid)
    }

    /// Delivers a signal to one of its processes (from a process of another container in a
    /// shared PID namespace); `false` if there is no such process.
    pub fn signal(&mut self, pid: u32, sig: Option<Signal>) -> bool {
        let Some(target) = self.procs.get_mut(&pid) else { return false };
        match sig {
            None => {}
            Some(Signal::Kill) => {
                target.pending.clear();
                target.state = ProcState::Runnable(Box::new(Wake::Signal(Signal::Kill)));
            }
            Some(s) => target.pending.push(s),
        }
        true
    }

    /// The resumable `Os` over this container's parts for one process.
    fn os<'a>(&'a mut self, volumes: &'a mut Volumes, process: &'a mut Process, now: Millis) -> ContainerOs<'a> {
        let Container { rootfs, spec, io, procs, rng, pid_ns, .. } = self;
        let fs = ContainerFs::new(rootfs, &spec.mounts, volumes, unix_ms(now));
        ContainerOs { fs, spec, io, procs, rng, process, now, ns: pid_ns.as_mut() }
    }

    /// The earliest time something in this container happens on its own (a sleep or a CPU
    /// burst ends, a kill deadline passes), or now if something is runnable.
    pub fn next_wakeup(&self, now: Millis) -> Option<Millis> {
        if let Some(cached) = self.wake_cache.get() {
            return cached;
        }
        let next = self.scan_next_wakeup(now);
        self.wake_cache.set(Some(next));
        next
    }

    fn scan_next_wakeup(&self, now: Millis) -> Option<Millis> {
        if self.state != ContainerState::Running {
            return None;
        }
        let mut next = match (self.kill_at, self.signal_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for p in self.procs.values().filter(|p| p.session.is_none()) {
            if let Some(at) = p.wake_at(now) {
                let at = self.throttled_until.map_or(at, |t| at.max(t));
                next = Some(next.map_or(at, |n: Millis| n.min(at)));
            }
        }
        next
    }

    /// Runs every process that has something to do at `now`. Returns whether the container's
    /// state changed (it exited). Network calls are appended to `outbox`.
    pub fn run(&mut self, now: Millis, volumes: &mut Volumes, foreign: Foreign, outbox: &mut Vec<NetRequest>, next_request: &mut u64) -> bool {
        if self.state != ContainerState::Running {
            return false;
        }
        if self.kill_at.is_some_and(|t| t <= now) {
            self.exit(now, 137, "Error");
            return true;
        }
        if self.signal_at.is_some_and(|t| t <= now) {
            self.signal_at = None;
            self.signal_main(self.spec.stop_signal.unwrap_or(Signal::Term));
        }
        if self.throttled_until.is_some_and(|t| t > now) {
            return false;
        }
        self.throttled_until = None;
        for _ in 0..MAX_RESUMES_PER_RUN {
            let Some(pid) = self.next_runnable(now) else { return false };
            let Some(mut process) = self.procs.remove(&pid) else { break };
            let wake = process.take_wake(now);
            let mut program = process.program.take().expect("a process has its program between resumes");
            let step = program.resume(&mut self.os(volumes, &mut process, now), wake);
            process.program = Some(program);
            if let Some(exited) = self.apply_step(process, step, now, volumes, foreign, outbox, next_request) {
                if exited {
                    return true;
                }
            }
            if self.oom_killed(now) {
                return true;
            }
        }
        self.throttled_until = Some(now + 1);
        false
    }

    fn next_runnable(&self, now: Millis) -> Option<u32> {
        self.procs.values().filter(|p| p.session.is_none()).find(|p| p.wake_at(now).is_some_and(|t| t <= now)).map(|p| p.pid)
    }

    /// Applies a step; `Some(true)` when PID 1 exited (the container is gone).
    #[allow(clippy::too_many_arguments)]
    fn apply_step(
        &mut self,
        mut process: Process,
        step: Step,
        now: Millis,
        volumes: &mut Volumes,
        foreign: Foreign,
        outbox: &mut Vec<NetRequest>,
        next_request: &mut u64,
    ) -> Option<bool> {
        match step {
            Step::Sleep(ms) => process.state = ProcState::Sleeping(now.saturating_add(ms)),
            Step::Compute { cpu_ms, threads } => {
                let done = self.compute(now, cpu_ms, threads);
                process.cpu_ms += cpu_ms;
                process.state = ProcState::Computing(done);
            }
            Step::Net(call) => {
                let id = *next_request;
                *next_request += 1;
                outbox.push(NetRequest { id, container: self.id.clone(), call });
                process.state = ProcState::Net(id);
            }
            Step::Spawn(mut spawn) => {
                if self.procs.len() + 1 >= MAX_PROCESSES {
                    let _ = self.io.write(&process.sink, Stream::Stderr, b"fork: Resource temporarily unavailable\n", now);
                    process.state = ProcState::Runnable(Box::new(Wake::Child { code: 126, stdout: Vec::new() }));
                } else {
                    let sink = if spawn.capture_stdout { Sink::Capture(Box::default()) } else { process.sink.clone() };
                    match self.load(&mut spawn, volumes, foreign, now) {
                        Ok(program) => {
                            let pid = self.alloc_pid();
                            self.procs.insert(Process::new(pid, process.pid, spawn.argv.clone(), program, sink).with_creds(process.uid, process.gid));
                            process.state = ProcState::Child(pid);
                        }
                        Err(message) => {
                            let line = format!("{message}\n");
                            let _ = self.io.write(&process.sink, Stream::Stderr, line.as_bytes(), now);
                            process.state = ProcState::Runnable(Box::new(Wake::Child { code: 127, stdout: Vec::new() }));
                        }
                    }
                }
            }
            Step::Wait => process.state = ProcState::Waiting,
            Step::Exit(code) => return Some(self.process_exited(process, code, now)),
        }
        self.procs.insert(process);
        None
    }

    /// A process exited: its parent hears of it; PID 1's exit ends the container.
    fn process_exited(&mut self, process: Process, code: i32, now: Millis) -> bool {
        if process.pid == self.main_pid && process.ppid == 0 {
            self.exit(now, code, if code == 0 { "Completed" } else { "Error" });
            return true;
        }
        if self.hook_pid == Some(process.pid) {
            self.hook_pid = None;
            self.signal_main(self.spec.stop_signal.unwrap_or(Signal::Term));
        }
        if let Sink::Session(id) = process.sink {
            let _ = (id, code);
        }
        let stdout = match process.sink {
            Sink::Capture(buffer) => *buffer,
            _ => Vec::new(),
        };
        if let Some(parent) = self.procs.get_mut(&process.ppid) {
            if parent.state == ProcState::Child(process.pid) {
                parent.state = ProcState::Runnable(Box::new(Wake::Child { code, stdout }));
            }
        }
        // Orphans of the exited process are re-parented to init, as the kernel does.
        let init = self.main_pid;
        for p in self.procs.values_mut().filter(|p| p.ppid == process.pid) {
            p.ppid = init;
        }
        false
    }

    /// The container exits now: every process is gone.
    fn exit(&mut self, now: Millis, code: i32, reason: &str) {
        self.io.flush_partial(now);
        self.state = ContainerState::Exited;
        self.finished_at = Some(now);
        self.exit_code = Some(code);
        self.reason = Some(reason.to_string());
        self.procs.clear();
        self.kill_at = None;
        self.hook_pid = None;
        self.signal_at = None;
    }

    /// Whether the container's memory exceeds its limit: the kernel's OOM killer ends it
    /// (exit 137, reason OOMKilled).
    fn oom_killed(&mut self, now: Millis) -> bool {
        let Some(limit) = self.spec.memory_limit else { return false };
        if self.memory_bytes() > limit {
            self.exit(now, 137, "OOMKilled");
            return true;
        }
        false
    }

    /// Resident memory of every process (bytes), or the annotation override.
    pub fn memory_bytes(&self) -> u64 {
        if let Some(m) = self.spec.usage_override.1 {
            return m.max(0) as u64;
        }
        self.procs.memory_bytes()
    }

    /// CPU usage now (millicores over the last window), or the annotation override.
    pub fn cpu_milli(&self, now: Millis) -> i64 {
        if let Some(c) = self.spec.usage_override.0 {
            return c;
        }
        self.cpu.rate_milli(now)
    }

    /// StopContainer: the preStop hook (if any) runs first, then the stop signal goes to
    /// PID 1; whatever still runs at `now + timeout_ms` is killed (exit 137).
    pub fn stop(&mut self, timeout_ms: Millis, pre_stop: Option<PreStop>, volumes: &mut Volumes, foreign: Foreign, now: Millis) {
        if self.state != ContainerState::Running {
            return;
        }
        let kill_at = now + timeout_ms;
        self.kill_at = Some(self.kill_at.map_or(kill_at, |k| k.min(kill_at)));
        if self.hook_pid.is_some() || self.signal_at.is_some() {
            return; // a hook of an earlier stop is still running
        }
        match pre_stop {
            Some(PreStop::Exec(argv)) => {
                let mut spawn = Spawn { argv: argv.clone(), env: self.spec.env.to_map(), cwd: self.spec.cwd.clone(), ..Default::default() };
                if let Ok(program) = self.load(&mut spawn, volumes, foreign, now) {
                    let pid = self.alloc_pid();
                    self.procs.insert(Process::new(pid, 0, argv, program, Sink::Discard).with_creds(self.spec.uid, self.spec.gid));
                    self.hook_pid = Some(pid);
                    return;
                }
            }
            Some(PreStop::Sleep(ms)) if ms > 0 => {
                self.signal_at = Some(now + ms);
                return;
            }
            _ => {}
        }
        self.signal_main(self.spec.stop_signal.unwrap_or(Signal::Term));
    }

    fn signal_main(&mut self, signal: Signal) {
        if let Some(main) = self.procs.get_mut(&self.main_pid) {
            main.pending.push(signal);
        }
    }

    /// Sends a signal to PID 1 now (fault injection, `docker kill`-style).
    pub fn kill_main(&mut self, signal: Signal, now: Millis) {
        if signal == Signal::Kill {
            self.exit(now, 137, "Error");
        } else {
            self.signal_main(signal);
        }
    }

    /// A crash now: the main process dies with exit code 1 (fault injection).
    pub fn crash(&mut self, now: Millis) -> bool {
        if self.state != ContainerState::Running {
            return false;
        }
        self.io.logs.push(now, Stream::Stderr, "panic: injected fault (kubesim fault container-crash)");
        self.exit(now, 1, "Error");
        true
    }

    /// The sandbox stopped: every process is killed (exit 137 unless already exited).
    pub fn sandbox_stopped(&mut self, now: Millis) {
        if self.state == ContainerState::Running {
            self.exit(now, 137, "Error");
        }
    }

    /// Delivers a network reply to the process that asked.
    pub fn deliver_reply(&mut self, id: u64, reply: NetReply) -> bool {
        for p in self.procs.values_mut() {
            if p.state == ProcState::Net(id) {
                p.state = ProcState::Runnable(Box::new(Wake::Net(reply)));
                return true;
            }
        }
        false
    }

    /// The ports processes of this container listen on.
    pub fn listening(&self) -> Vec<(u16, bool)> {
        let mut ports: Vec<(u16, bool)> = self.procs.values().flat_map(|p| p.program.as_ref().map(|prog| prog.listening()).unwrap_or_default()).collect();
        ports.sort();
        ports.dedup();
        ports
    }

    /// An incoming connection for a process listening on its port: the server's answer
    /// (`None` when nothing listens) and how long it waits for the server's CPU: the work it is
    /// doing and the work queued before it (this request's included), at a core while the
    /// container's CFS quota lasts. A process blocked in a sleep or wait while serving is woken afterwards, as
    /// the contract asks. A synchronous client's request rate is bounded by it, as a real
    /// load generator's is by the server's response time.
    pub fn serve_timed(&mut self, incoming: &Incoming, volumes: &mut Volumes, now: Millis) -> Option<(Outgoing, Millis)> {
        if self.state != ContainerState::Running {
            return None;
        }
        let pid = self.procs.values().find(|p| p.program.as_ref().is_some_and(|prog| prog.listening().contains(&(incoming.port, incoming.udp))))?.pid;
        let mut process = self.procs.remove(&pid)?;
        let mut program = process.program.take().expect("a process has its program between resumes");
        let answer = program.serve(&mut self.os(volumes, &mut process, now), incoming);
        let backlog = program.cpu_backlog_ms();
        process.program = Some(program);
        let busy_until = match process.state {
            ProcState::Computing(t) => t.max(now),
            _ => now,
        };
        let delay = self.compute_done_at(busy_until, backlog) - now;
        if answer.is_some() && matches!(process.state, ProcState::Waiting | ProcState::Sleeping(_)) {
            process.state = ProcState::Runnable(Box::new(Wake::Timer));
        }
        self.procs.insert(process);
        answer.map(|a| (a, delay))
    }

    /// Starts an exec session (ExecSync, `kubectl exec`, hooks run to completion): its
    /// process and the children it spawns belong to the session and write to its buffers.
    /// Returns the session's root pid, or runc's exec error.
    pub fn session_start(&mut self, argv: &[String], stdin: Vec<u8>, tty: bool, volumes: &mut Volumes, foreign: Foreign, now: Millis) -> Result<u32, String> {
        if self.state != ContainerState::Running {
            return Err("container is not running".to_string());
        }
        let mut spawn = Spawn {
            argv: argv.to_vec(),
            env: self.spec.env.to_map(),
            cwd: self.spec.cwd.clone(),
            stdin,
            capture_stdout: false,
            path: String::new(),
            tty,
            stdin_open: false,
        };
        let program = self.load(&mut spawn, volumes, foreign, now)?;
        let pid = self.alloc_pid();
        self.io.sessions.insert(pid as u64, (Vec::new(), Vec::new()));
        let mut process = Process::new(pid, 0, argv.to_vec(), program, Sink::Session(pid as u64)).with_creds(self.spec.uid, self.spec.gid);
        process.session = Some(pid);
        self.procs.insert(process);
        Ok(pid)
    }

    /// The session's next process to resume: a runnable one, else the earliest sleeper (the
    /// driver fast-forwards its clock to it).
    pub fn session_next(&self, session: u32) -> Option<(u32, Option<Millis>)> {
        let members = self.procs.values().filter(|p| p.session == Some(session));
        let mut sleeper: Option<(u32, Millis)> = None;
        for p in members {
            match p.state {
                ProcState::Runnable(_) => return Some((p.pid, None)),
                ProcState::Sleeping(t) | ProcState::Computing(t) if sleeper.is_none_or(|(_, best)| t < best) => sleeper = Some((p.pid, t)),
                _ => {}
            }
        }
        sleeper.map(|(pid, t)| (pid, Some(t)))
    }

    /// Resumes one session process at virtual time `clock`. Spawned children join the
    /// session; a network call is returned for the driver to answer ([`Container::session_wake`]).
    pub fn session_resume(&mut self, pid: u32, volumes: &mut Volumes, foreign: Foreign, clock: Millis) -> SessionEvent {
        let Some(mut process) = self.procs.remove(&pid) else { return SessionEvent::Gone };
        let wake = process.take_wake(clock);
        let mut program = process.program.take().expect("a process has its program between resumes");
        let step = program.resume(&mut self.os(volumes, &mut process, clock), wake);
        process.program = Some(program);
        let session = process.session;
        match step {
            Step::Net(call) => {
                process.state = ProcState::Net(u64::MAX);
                self.procs.insert(process);
                SessionEvent::Net(call)
            }
            Step::Exit(code) => {
                let stdout = match std::mem::replace(&mut process.sink, Sink::Log) {
                    Sink::Capture(buffer) => *buffer,
                    _ => Vec::new(),
                };
                if let Some(parent) = self.procs.get_mut(&process.ppid) {
                    if parent.state == ProcState::Child(pid) {
                        parent.state = ProcState::Runnable(Box::new(Wake::Child { code, stdout }));
                    }
                }
                if self.hook_pid == Some(pid) {
                    self.hook_pid = None;
                    self.signal_main(self.spec.stop_signal.unwrap_or(Signal::Term));
                }
                SessionEvent::Exited(code)
            }
            Step::Spawn(mut spawn) => {
                let sink = if spawn.capture_stdout { Sink::Capture(Box::default()) } else { process.sink.clone() };
                match self.load(&mut spawn, volumes, foreign, clock) {
                    Ok(child_program) => {
                        let child = self.alloc_pid();
                        let mut child_process = Process::new(child, pid, spawn.argv.clone(), child_program, sink).with_creds(process.uid, process.gid);
                        child_process.session = session;
                        self.procs.insert(child_process);
                        process.state = ProcState::Child(child);
                    }
                    Err(message) => {
                        let _ = self.io.write(&process.sink, Stream::Stderr, format!("{message}\n").as_bytes(), clock);
                        process.state = ProcState::Runnable(Box::new(Wake::Child { code: 127, stdout: Vec::new() }));
                    }
                }
                self.procs.insert(process);
                SessionEvent::Continue
            }
            other => {
                let now_state = match other {
                    Step::Sleep(ms) => ProcState::Sleeping(clock.saturating_add(ms)),
                    Step::Compute { cpu_ms, threads } => ProcState::Computing(clock.saturating_add(cpu_ms * 1000 / self.cores_milli(threads))),
                    _ => ProcState::Waiting,
                };
                process.state = now_state;
                self.procs.insert(process);
                SessionEvent::Continue
            }
        }
    }

    /// Wakes a session process (the answer to its network call).
    pub fn session_wake(&mut self, pid: u32, wake: Wake) {
        if let Some(p) = self.procs.get_mut(&pid) {
            p.state = ProcState::Runnable(Box::new(wake));
        }
    }

    /// Ends a session: what it wrote, and its remaining processes are gone.
    pub fn session_finish(&mut self, session: u32) -> (Vec<u8>, Vec<u8>) {
        self.procs.retain(|p| p.session != Some(session));
        self.io.sessions.remove(&(session as u64)).unwrap_or_default()
    }

    /// A file of the container (the kubelet reads the termination message).
    pub fn read_file(&mut self, path: &str, volumes: &mut Volumes) -> Option<Vec<u8>> {
        let fs = ContainerFs::new(&mut self.rootfs, &self.spec.mounts, volumes, 0);
        fs.read(path).ok()
    }

    /// Once exited, reads the termination message file (the kubelet's getTerminationMessage,
    /// kubecontainer.MaxContainerTerminationMessageLength = 4096 bytes).
    pub fn capture_termination_message(&mut self, volumes: &mut Volumes) {
        if self.state != ContainerState::Exited || self.termination_message.is_some() {
            return;
        }
        let path = self.spec.termination_message_path.clone();
        let mut bytes = self.read_file(&path, volumes).unwrap_or_default();
        bytes.truncate(4096);
        self.termination_message = Some(String::from_utf8_lossy(&bytes).into_owned());
    }

    /// The processes (`ps`), for the UI.
    pub fn processes(&self) -> Vec<ProcessInfo> {
        self.procs.infos()
    }

    /// How many processes the container's table has room for (what it costs; [`Container::processes`]
    /// is what it holds).
    pub fn process_room(&self) -> usize {
        self.procs.procs.capacity()
    }

    /// A uid's name in the container's own /etc/passwd (the number when it has none).
    pub fn user_name(&self, uid: u32) -> String {
        let passwd = self.rootfs.read_path("/etc/passwd").map(|d| String::from_utf8_lossy(d).into_owned()).unwrap_or_default();
        passwd
            .lines()
            .map(|l| l.split(':').collect::<Vec<_>>())
            .find(|f| f.len() >= 3 && f[2].parse::<u32>().ok() == Some(uid))
            .map(|f| f[0].to_string())
            .unwrap_or_else(|| uid.to_string())
    }
}

/// How the host builds programs `kubesim-os` does not implement (the application models):
/// `(implementation name, spawn, the container's image reference, its declared ports)`.
pub type Foreign = fn(&str, &Spawn, &str, &[(u16, bool)]) -> Option<Box<dyn Program>>;

/// runc's exec error for a command that cannot run.
fn exec_error(command: &str, errno: Errno) -> String {
    let why = match errno {
        Errno::ENOENT if command.contains('/') => format!("exec: {command:?}: stat {command}: no such file or directory"),
        Errno::ENOENT => format!("exec: {command:?}: executable file not found in $PATH"),
        Errno::EACCES => format!("exec: {command:?}: permission denied"),
        Errno::ENOEXEC => format!("exec: {command:?}: exec format error"),
        other => format!("exec: {command:?}: {}", other.strerror()),
    };
    format!("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: {why}: unknown")
}

fn unix_ms(now: Millis) -> u64 {
    EPOCH_UNIX_SECONDS as u64 * 1000 + now
}

impl Process {
    fn new(pid: u32, ppid: u32, argv: impl Into<Arc<[String]>>, program: Box<dyn Program>, sink: Sink) -> Process {
        Process {
            pid,
            ppid,
            argv: argv.into(),
            program: Some(program),
            state: ProcState::Runnable(Box::new(Wake::Start)),
            memory: PROGRAM_MEMORY,
            cpu_ms: 0,
            sink,
            pending: PendingSignals::default(),
            session: None,
            uid: 0,
            gid: 0,
        }
    }

    fn with_creds(mut self, uid: u32, gid: u32) -> Process {
        self.uid = uid;
        self.gid = gid;
        self
    }

    /// When this process next has something to do: the one predicate both the wake-up time and
    /// the choice of what to resume use (they must agree, or a host wakes with nothing to run).
    fn wake_at(&self, now: Millis) -> Option<Millis> {
        match &self.state {
            ProcState::Runnable(_) => Some(now),
            ProcState::Sleeping(_) | ProcState::Computing(_) | ProcState::Waiting if !self.pending.is_empty() => Some(now),
            ProcState::Sleeping(t) | ProcState::Computing(t) => Some(*t),
            ProcState::Waiting | ProcState::Net(_) | ProcState::Child(_) => None,
        }
    }

    /// The wake this resume gets: a pending signal first (interrupting sleeps, waits and CPU
    /// work), else what its state says.
    fn take_wake(&mut self, now: Millis) -> Wake {
        let interruptible = matches!(self.state, ProcState::Sleeping(_) | ProcState::Computing(_) | ProcState::Waiting);
        if interruptible && !self.pending.is_empty() {
            return Wake::Signal(self.pending.take_first().expect("not empty"));
        }
        match std::mem::replace(&mut self.state, ProcState::Waiting) {
            ProcState::Runnable(w) => *w,
            ProcState::Sleeping(t) | ProcState::Computing(t) if t <= now => Wake::Timer,
            other => {
                self.state = other;
                Wake::Timer
            }
        }
    }

    /// Its memory when set rather than its program's ([`Process::memory`]).
    fn memory_set(&self) -> Option<u64> {
        (self.memory != PROGRAM_MEMORY).then_some(self.memory)
    }

    fn rss(&self) -> u64 {
        self.memory_set().unwrap_or_else(|| self.program.as_ref().map_or(0, |prog| prog.memory_bytes()))
    }

    fn info(&self, rss: u64) -> ProcessInfo {
        ProcessInfo {
            pid: self.pid,
            ppid: self.ppid,
            uid: self.uid,
            cpu_ms: self.cpu_ms,
            cmdline: self.argv.join(" "),
            rss_bytes: rss,
            state: match self.state {
                ProcState::Runnable(_) | ProcState::Computing(_) => 'R',
                _ => 'S',
            },
        }
    }
}

/// A foreign program the host has no model for: it runs, idles, and exits 0 on SIGTERM (a
/// generic server without listeners).
#[derive(Clone, Debug, Default)]
pub struct Idle;

impl Program for Idle {
    fn resume(&mut self, _os: &mut dyn Os, wake: Wake) -> Step {
        match wake {
            Wake::Signal(Signal::Term | Signal::Int | Signal::Quit | Signal::Kill) => Step::Exit(0),
            _ => Step::Wait,
        }
    }
}

/// The `Os` a process sees: its container's filesystem, log, process table and limits.
struct ContainerOs<'a> {
    fs: ContainerFs<'a>,
    spec: &'a ContainerSpec,
    io: &'a mut ContainerIo,
    procs: &'a mut ProcTable,
    rng: &'a mut u64,
    process: &'a mut Process,
    now: Millis,
    ns: Option<&'a mut PidNamespace>,
}

impl ContainerOs<'_> {
    fn output(&mut self, stream: Stream, data: &[u8]) -> Result<(), Errno> {
        if stream == Stream::Stdout {
            if let Sink::Capture(buffer) = &mut self.process.sink {
                if buffer.len() < 4 << 20 {
                    buffer.extend_from_slice(data);
                }
                return Ok(());
            }
        }
        self.io.write(&self.process.sink, stream, data, self.now)
    }
}

impl Os for ContainerOs<'_> {
    fn now_ms(&self) -> u64 {
        self.now
    }
    fn unix_time_ms(&self) -> u64 {
        unix_ms(self.now)
    }
    fn hostname(&self) -> String {
        self.spec.hostname.clone()
    }
    fn runtime_files(&self) -> Vec<String> {
        // A pod's container (the kubelet always names a termination-message path).
        if self.spec.termination_message_path.is_empty() {
            return Vec::new();
        }
        ["/etc/hosts", &self.spec.termination_message_path, "/etc/hostname", "/etc/resolv.conf"].map(str::to_string).to_vec()
    }
    fn interfaces(&self) -> Vec<kubesim_os::net::iface::Interface> {
        if self.spec.interfaces.is_empty() {
            return vec![kubesim_os::net::iface::Interface::loopback()];
        }
        self.spec.interfaces.clone()
    }
    fn write_stdout(&mut self, data: &[u8]) -> Result<(), Errno> {
        self.output(Stream::Stdout, data)
    }
    fn write_stderr(&mut self, data: &[u8]) -> Result<(), Errno> {
        self.output(Stream::Stderr, data)
    }
    fn stdout_captured(&self) -> bool {
        matches!(self.process.sink, Sink::Capture(_))
    }
    fn fs(&mut self) -> &mut dyn Fs {
        self.fs.now_ms = unix_ms(self.now);
        &mut self.fs
    }
    fn fs_ref(&self) -> &dyn Fs {
        &self.fs
    }
    fn random_u64(&mut self) -> u64 {
        // xorshift64*, seeded per container from its id: deterministic and cloneable.
        let mut x = *self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pid(&self) -> u32 {
        self.process.pid
    }
    fn ppid(&self) -> u32 {
        self.process.ppid
    }
    fn alloc_pid(&mut self) -> u32 {
        self.procs.alloc_pid()
    }
    fn processes(&self) -> Vec<ProcessInfo> {
        let mut list = self.procs.infos();
        list.push(self.process.info(self.process.memory_set().unwrap_or(1 << 20)));
        if let Some(ns) = self.ns.as_ref() {
            list.extend(ns.peers.iter().cloned());
        }
        list.sort_by_key(|p| p.pid);
        list
    }
    fn process_root(&self, pid: u32, path: &str) -> Option<Result<Vec<u8>, Errno>> {
        if pid == self.process.pid || self.procs.contains_key(&pid) {
            return Some(self.fs.read(path));
        }
        let tree = self.ns.as_ref()?.roots.get(&pid)?;
        Some(tree.read_path(path).map(|d| d.to_vec()).ok_or(Errno::ENOENT))
    }
    fn kill(&mut self, pid: u32, sig: Option<Signal>) -> Result<(), Errno> {
        if pid == self.process.pid {
            if let Some(s) = sig {
                self.process.pending.push(s);
            }
            return Ok(());
        }
        if !self.procs.contains_key(&pid) {
            if let Some(ns) = self.ns.as_mut().filter(|ns| ns.peers.iter().any(|p| p.pid == pid)) {
                ns.signals.push((pid, sig));
                return Ok(());
            }
        }
        let target = self.procs.get_mut(&pid).ok_or(Errno::ESRCH)?;
        match sig {
            None => Ok(()),
            Some(Signal::Kill) => {
                target.pending.clear();
                target.state = ProcState::Runnable(Box::new(Wake::Signal(Signal::Kill)));
                Ok(())
            }
            Some(s) => {
                target.pending.push(s);
                Ok(())
            }
        }
    }
    fn creds(&self) -> Creds {
        Creds { uid: self.process.uid, gid: self.process.gid, groups: vec![self.process.gid] }
    }
    fn set_cmdline(&mut self, argv: &[String]) {
        self.process.argv = argv.into();
    }
    fn set_creds(&mut self, uid: u32, gid: u32) {
        self.process.uid = uid;
        self.process.gid = gid;
    }
    fn reserve_workers(&mut self, additional: usize) {
        // One more for the process asking: it is out of the table while it runs and goes
        // back in after (without it, nginx's master went back into a full table of its 32
        // workers, which then grew to 40).
        self.procs.reserve(additional.min(MAX_PROCESSES) + 1);
    }
    fn spawn_worker(&mut self, argv: Vec<String>, uid: u32) -> Option<u32> {
        if self.procs.len() + 1 >= MAX_PROCESSES {
            return None;
        }
        // The workers forked just before this one carry the same title: share it.
        let title = match self.procs.values().next_back().filter(|p| p.ppid == self.process.pid && *p.argv == *argv) {
            Some(sibling) => sibling.argv.clone(),
            None => argv.into(),
        };
        let pid = self.procs.alloc_pid();
        let mut worker = Process::new(pid, self.process.pid, title, Box::new(Idle), Sink::Discard).with_creds(uid, uid);
        worker.session = self.process.session;
        worker.memory = 1 << 20;
        self.procs.insert(worker);
        Some(pid)
    }
    fn cpu_count(&self) -> u32 {
        self.spec.node_cpus.max(1)
    }
    fn mem_info(&self) -> MemInfo {
        let total = self.spec.node_memory.max(1 << 30);
        let used = self.procs.memory_bytes() + self.process.rss();
        MemInfo { total, free: total.saturating_sub(used + (512 << 20)), available: total.saturating_sub(used + (256 << 20)) }
    }
    fn set_memory(&mut self, bytes: u64) {
        self.process.memory = bytes.min(PROGRAM_MEMORY - 1);
    }
    fn uptime_ms(&self) -> u64 {
        self.now
    }
}

#[cfg(test)]
mod cfs_tests {
    use super::*;

    fn book(q: &mut CfsQuota, meter: &mut CpuMeter, now: Millis, cpu_ms: u64, rate: u64, limit_milli: u64) -> u64 {
        q.book(now, cpu_ms * 1000, rate, limit_milli * CFS_PERIOD_MS, meter)
    }

    /// A 500m container (quota 50 ms per 100 ms period): short work runs at a full core while
    /// the quota lasts; long work waits for the next periods; use never exceeds the limit.
    #[test]
    fn work_runs_at_a_core_until_the_period_quota_is_used() {
        let (mut q, mut m) = (CfsQuota::default(), CpuMeter::default());
        // 30 ms at t=0: done at 30 ms, unthrottled.
        assert_eq!(book(&mut q, &mut m, 0, 30, 1000, 500), 30_000);
        // Another 30 ms at t=30: 20 ms left in period 0, then 10 ms at the start of period 1.
        assert_eq!(book(&mut q, &mut m, 30, 30, 1000, 500), 110_000);
        // 200 ms of work from t=200: 50 ms in each of four periods.
        assert_eq!(book(&mut q, &mut m, 200, 200, 1000, 500), 550_000);
        // Two threads in a 1-core container: 50 ms of wall per 100 ms at 2 cores.
        let (mut q, mut m) = (CfsQuota::default(), CpuMeter::default());
        assert_eq!(book(&mut q, &mut m, 0, 300, 2000, 1000), 250_000);
        // The meter's 15-s rate of work that never stops is the limit.
        let (mut q, mut m) = (CfsQuota::default(), CpuMeter::default());
        let mut t: u64 = 0;
        while t < 20_000_000 {
            t = book(&mut q, &mut m, t.div_ceil(1000), 30, 1000, 500);
        }
        assert!((495..=500).contains(&m.rate_milli(20_000)), "{}", m.rate_milli(20_000));
    }
}

#[cfg(test)]
mod proc_table_tests {
    use super::*;

    fn process(pid: u32) -> Process {
        Process::new(pid, 1, vec![format!("p{pid}")], Box::new(Idle), Sink::Discard)
    }

    /// The table keeps pid order whatever the insertion order, replaces a pid inserted twice,
    /// and finds, removes and sums by pid.
    #[test]
    fn the_table_keeps_pid_order_and_finds_by_pid() {
        let mut table = ProcTable::default();
        for pid in [5, 2, 9, 1] {
            let mut p = process(pid);
            p.memory = u64::from(pid) << 20;
            table.insert(p);
        }
        let mut again = process(9);
        again.memory = 1 << 20;
        table.insert(again);
        assert_eq!(table.values().map(|p| p.pid).collect::<Vec<_>>(), vec![1, 2, 5, 9]);
        assert_eq!(table.memory_bytes(), (1 + 2 + 5 + 1) << 20);
        assert!(table.contains_key(&5) && !table.contains_key(&3));
        assert_eq!(table.remove(&2).map(|p| p.pid), Some(2));
        assert_eq!(table.remove(&2).map(|p| p.pid), None);
        table.get_mut(&9).expect("pid 9").uid = 7;
        assert_eq!(table.values().map(|p| (p.pid, p.uid)).collect::<Vec<_>>(), vec![(1, 0), (5, 0), (9, 7)]);
        // nginx's master and 32 workers take room for at most a quarter more.
        let mut nginx = ProcTable::default();
        for pid in 1..=33 {
            nginx.insert(process(pid));
        }
        assert!(nginx.procs.capacity() <= 33 + 33 / 4, "room for {}", nginx.procs.capacity());
    }

    /// A process stays small: nginx keeps one idle worker per CPU, so every byte here is paid
    /// 32 times per pod on a 32-CPU node (the boxed wake keeps a DNS reply out of it; the
    /// pending signals and a captured stdout are boxed too).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_process_stays_small() {
        let size = std::mem::size_of::<Process>();
        assert!(size <= 112, "Process is {size} bytes");
    }

    #[test]
    fn pending_signals_are_delivered_oldest_first() {
        let mut pending = PendingSignals::default();
        assert!(pending.is_empty() && pending.take_first().is_none());
        pending.push(Signal::Term);
        pending.push(Signal::Int);
        assert!(!pending.is_empty());
        assert_eq!(pending.take_first(), Some(Signal::Term));
        assert_eq!(pending.take_first(), Some(Signal::Int));
        assert!(pending.is_empty() && pending.0.is_none(), "an emptied list frees its box");
        pending.push(Signal::Hup);
        pending.clear();
        assert!(pending.is_empty());
    }
}

#[cfg(test)]
mod log_tests {
    use super::*;

    fn texts(io: &ContainerIo) -> Vec<(Millis, Stream, String)> {
        io.logs.iter().map(|l| (l.t_ms, l.stream, l.text.to_string())).collect()
    }

    /// Output becomes one entry per complete line, whatever the writes' boundaries: a line
    /// split over writes takes the time of the write that ends it, streams keep their own
    /// partial lines, invalid UTF-8 is replaced, and the rest waits for its newline or a flush.
    #[test]
    fn writes_become_lines_at_their_newlines() {
        let mut io = ContainerIo::default();
        io.log_bytes(Stream::Stdout, b"one\ntw", 1);
        io.log_bytes(Stream::Stderr, b"err", 2);
        io.log_bytes(Stream::Stdout, b"o\nthree\n\nfo", 3);
        io.log_bytes(Stream::Stderr, b" \xff\n", 4);
        assert_eq!(io.partial_text(), "fo");
        io.flush_partial(5);
        let out = Stream::Stdout;
        assert_eq!(
            texts(&io),
            vec![
                (1, out, "one".into()),
                (3, out, "two".into()),
                (3, out, "three".into()),
                (3, out, String::new()),
                (4, Stream::Stderr, "err \u{fffd}".into()),
                (5, out, "fo".into())
            ]
        );
        assert_eq!(io.partial_text(), "");
    }

    /// A line longer than 64 KiB is cut into an entry of its own without waiting for its end.
    #[test]
    fn a_long_partial_line_is_cut() {
        let mut io = ContainerIo::default();
        io.log_bytes(Stream::Stdout, &[b'x'; 40 * 1024], 1);
        io.log_bytes(Stream::Stdout, &[b'y'; 30 * 1024], 2);
        assert_eq!(io.logs.len(), 1);
        assert_eq!(io.logs.iter().next().map(|l| l.text.len()), Some(70 * 1024));
        assert_eq!(io.partial_text(), "");
    }

    /// A log's buffer grows by a quarter: nginx's forty-odd start-up lines leave at most a
    /// quarter (or one line) unused; front-coded, its thirty worker lines cost a few bytes each.
    #[test]
    fn a_log_keeps_little_unused_room() {
        let mut log = LogBuffer::default();
        let mut plain = 0;
        for i in 0..46 {
            let line = format!("2025/01/01 00:00:00 [notice] 1#1: start worker process {}", i + 30);
            plain += line.len();
            log.push(i, Stream::Stderr, &line);
        }
        let used = log.data.len();
        assert!(log.data.capacity() <= used + used / 4 + 80, "{} for {used}", log.data.capacity());
        assert!(used < plain / 5, "{used} bytes for {plain} of text");
    }

    /// At MAX_LOG_LINES lines the oldest tenth goes, and the lines left keep their text.
    #[test]
    fn a_full_log_drops_its_oldest_tenth() {
        let mut log = LogBuffer::default();
        for i in 0..=MAX_LOG_LINES {
            log.push(i as Millis, Stream::Stdout, &format!("line {i}"));
        }
        assert_eq!(log.len(), MAX_LOG_LINES - MAX_LOG_LINES / 10 + 1);
        let first = log.iter().next().expect("a line");
        assert_eq!((first.t_ms, first.text), ((MAX_LOG_LINES / 10) as Millis, format!("line {}", MAX_LOG_LINES / 10)));
        assert_eq!(log.tail(1).map(|l| l.text).collect::<Vec<_>>(), [format!("line {MAX_LOG_LINES}")]);
        assert!(log.iter().enumerate().all(|(i, l)| l.text == format!("line {}", i + MAX_LOG_LINES / 10)));
    }

    /// Lines read back as written: times (equal, rising, even falling), streams, text sharing
    /// a prefix or none, multi-byte characters that differ after a shared first byte, empty
    /// lines; `tail` gives the last lines.
    #[test]
    fn a_log_reads_back_every_line_as_written() {
        let written: Vec<(Millis, Stream, &str)> = vec![
            (1_700_000_000_000, Stream::Stdout, "héllo wörld"),
            (1_700_000_000_000, Stream::Stderr, "héllo wörld"),
            (1_700_000_000_005, Stream::Stdout, "hèllo"),
            (1_700_000_000_005, Stream::Stdout, ""),
            (1_700_000_000_004, Stream::Stderr, "h"),
            (1_700_000_100_000, Stream::Stdout, "a completely different line ✓"),
            (1_700_000_100_000, Stream::Stdout, "a completely different line ✗"),
        ];
        let mut log = LogBuffer::default();
        for (t, stream, text) in &written {
            log.push(*t, *stream, text);
        }
        let read: Vec<(Millis, Stream, String)> = log.iter().map(|l| (l.t_ms, l.stream, l.text)).collect();
        let expected: Vec<(Millis, Stream, String)> = written.iter().map(|(t, s, x)| (*t, *s, x.to_string())).collect();
        assert_eq!(read, expected);
        assert_eq!(log.iter().len(), written.len());
        let tail: Vec<String> = log.tail(2).map(|l| l.text).collect();
        assert_eq!(tail, ["a completely different line ✓", "a completely different line ✗"]);
        assert_eq!(log.tail(100).len(), written.len());
        assert_eq!(log.tail(0).len(), 0);
    }
}

#[cfg(test)]
mod env_tests {
    use super::*;

    /// A container's environment reads as the map it was built from: name order, lookups by
    /// name (absent names and prefixes miss), the last value of a repeated name.
    #[test]
    fn env_reads_as_the_map_it_was_built_from() {
        let pairs = [("PATH", "/usr/bin"), ("HOSTNAME", "web-0"), ("KUBERNETES_PORT", "tcp://10.96.0.1:443"), ("HOSTNAME", "web-1"), ("A", "")];
        let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let env: Env = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(env.len(), 4);
        assert_eq!(env.to_map(), map);
        assert_eq!(env.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["A", "HOSTNAME", "KUBERNETES_PORT", "PATH"]);
        assert_eq!(env.get("HOSTNAME"), Some("web-1"));
        assert_eq!(env.get("A"), Some(""));
        for absent in ["", "HOST", "KUBERNETES", "Z", "path"] {
            assert_eq!(env.get(absent), None, "{absent}");
        }
        assert!(Env::default().is_empty() && Env::default().get("PATH").is_none());
        assert_eq!(Env::from(map.clone()), env);
    }
}
