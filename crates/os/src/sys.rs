//! System-call-like helpers over [`Os`]: file reads and writes that understand devices
//! (`/dev/null`, `/dev/zero`, `/dev/urandom`, `/dev/stdout`...) and a minimal `/proc`, and
//! output routing for in-process children ([`Routed`]).

use crate::fs::{Device, Errno, Fs, WriteMode};
use crate::program::{Creds, MemInfo, Os, ProcessInfo, Signal, Uname};

/// Bytes read from an endless device by a whole-file read (`cat /dev/zero`).
pub const DEVICE_READ_BYTES: usize = 1 << 20;

/// Where a file descriptor writes to (or reads from).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FdTarget {
    /// Closed (`EBADF`).
    Closed,
    /// The process's stdout.
    Stdout,
    /// The process's stderr.
    Stderr,
    /// Discard (`/dev/null`).
    Null,
    /// Append to this file (already created/truncated when the redirection was made).
    File(String),
    /// An input buffer of the shell (index into its input stack).
    Input(usize),
    /// The capture buffer of the in-process child (pipelines, command substitution).
    Capture,
}

/// One line of a container's mount table.
pub struct MountEntry {
    /// What is mounted (`overlay`, `proc`, the node's disk).
    pub device: &'static str,
    /// Where.
    pub point: String,
    /// The filesystem type.
    pub fs_type: &'static str,
    /// Its options (`rw,relatime`).
    pub options: String,
}

/// The container's mount table, as `/proc/mounts` and `mount` list it: the root overlay,
/// /proc, then the volumes (on the node's disk).
pub fn mount_table(os: &dyn Os) -> Vec<MountEntry> {
    let mut table = vec![
        MountEntry { device: "overlay", point: "/".into(), fs_type: "overlay", options: "rw,relatime".into() },
        MountEntry { device: "proc", point: "/proc".into(), fs_type: "proc", options: "rw,nosuid,nodev,noexec,relatime".into() },
    ];
    for (point, _, ro) in os.fs_ref().mounts() {
        table.push(MountEntry { device: "/dev/sda1", point, fs_type: "ext4", options: format!("{},relatime", if ro { "ro" } else { "rw" }) });
    }
    table
}

fn proc_file(os: &dyn Os, path: &str) -> Option<Result<Vec<u8>, Errno>> {
    let rest = path.strip_prefix("/proc/")?;
    let me = os.pid();
    let (pid, file) = match rest.split_once('/') {
        Some(("self", f)) => (Some(me), f),
        Some((p, f)) if p.parse::<u32>().is_ok() => (p.parse().ok(), f),
        _ => (None, rest),
    };
    // /proc/PID/root: the process's root directory (another container's, in a pod sharing one
    // PID namespace).
    if let Some(pid) = pid {
        if let Some(inner) = file.strip_prefix("root").filter(|r| r.is_empty() || r.starts_with('/')) {
            let inner = if inner.is_empty() { "/" } else { inner };
            return Some(os.process_root(pid, inner).unwrap_or(Err(Errno::ENOENT)));
        }
    }
    let s = match (pid, file) {
        (None, "uptime") => {
            let ms = os.uptime_ms();
            format!("{}.{:02} {}.{:02}\n", ms / 1000, (ms % 1000) / 10, ms / 1000, (ms % 1000) / 10)
        }
        (None, "loadavg") => format!("0.00 0.00 0.00 1/{} {}\n", os.processes().len().max(1), me),
        (None, "version") => {
            let u = os.uname();
            format!("{} version {} (kubesim@kubesim) {}\n", u.sysname, u.release, u.version)
        }
        (None, "meminfo") => {
            let m = os.mem_info();
            format!(
                "MemTotal:       {:>8} kB\nMemFree:        {:>8} kB\nMemAvailable:   {:>8} kB\nBuffers:               0 kB\nCached:                0 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n",
                m.total / 1024,
                m.free / 1024,
                m.available / 1024
            )
        }
        (None, "cpuinfo") => {
            let mut s = String::new();
            for i in 0..os.cpu_count() {
                s.push_str(&format!("processor\t: {i}\nvendor_id\t: GenuineIntel\nmodel name\t: kubesim virtual CPU\ncpu MHz\t\t: 2000.000\n\n"));
            }
            s
        }
        (None, "mounts") => mount_table(os).iter().map(|m| format!("{} {} {} {} 0 0\n", m.device, m.point, m.fs_type, m.options)).collect(),
        (None, "sys/kernel/hostname") => format!("{}\n", os.hostname()),
        (Some(p), f) => {
            let procs = os.processes();
            let info = procs.iter().find(|x| x.pid == p).cloned().or_else(|| {
                (p == me).then(|| ProcessInfo { pid: me, ppid: os.ppid(), uid: os.creds().uid, cpu_ms: 0, cmdline: String::new(), rss_bytes: 0, state: 'R' })
            });
            let Some(info) = info else { return Some(Err(Errno::ENOENT)) };
            match f {
                "cmdline" => {
                    let mut v: Vec<u8> = info.cmdline.split(' ').flat_map(|a| a.bytes().chain(std::iter::once(0))).collect();
                    if info.cmdline.is_empty() {
                        v.clear();
                    }
                    return Some(Ok(v));
                }
                "comm" => format!("{}\n", crate::fs::basename(info.cmdline.split(' ').next().unwrap_or(""))),
                "status" => format!(
                    "Name:\t{}\nState:\t{} (sleeping)\nPid:\t{}\nPPid:\t{}\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nVmRSS:\t{} kB\nThreads:\t1\n",
                    crate::fs::basename(info.cmdline.split(' ').next().unwrap_or("")),
                    info.state,
                    info.pid,
                    info.ppid,
                    info.rss_bytes / 1024
                ),
                "cgroup" => "0::/\n".into(),
                _ => return Some(Err(Errno::ENOENT)),
            }
        }
        _ => return None,
    };
    Some(Ok(s.into_bytes()))
}

/// Reads a whole file, handling devices and `/proc`. `limit` bounds reads of endless devices.
pub fn read_file_limited(os: &mut dyn Os, path: &str, limit: usize) -> Result<Vec<u8>, Errno> {
    if let Some(r) = proc_file(os, &crate::fs::normalize(path)) {
        return r;
    }
    if let Some(dev) = os.fs_ref().device(path) {
        return Ok(match dev {
            Device::Null | Device::Tty => Vec::new(),
            Device::Zero | Device::Full => vec![0; limit],
            Device::Random | Device::Urandom => random_bytes(os, limit),
        });
    }
    os.fs_ref().read(path)
}

/// Reads a whole file (devices give [`DEVICE_READ_BYTES`]).
pub fn read_file(os: &mut dyn Os, path: &str) -> Result<Vec<u8>, Errno> {
    read_file_limited(os, path, DEVICE_READ_BYTES)
}

/// `n` bytes from the host's RNG.
pub fn random_bytes(os: &mut dyn Os, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let r = os.random_u64().to_le_bytes();
        let take = (n - v.len()).min(8);
        v.extend_from_slice(&r[..take]);
    }
    v
}

/// Is `path` one of the paths that mean the process's stdout/stderr.
fn std_stream(path: &str) -> Option<u32> {
    match path {
        "/dev/stdout" | "/proc/self/fd/1" | "/proc/1/fd/1" | "/dev/fd/1" => Some(1),
        "/dev/stderr" | "/proc/self/fd/2" | "/proc/1/fd/2" | "/dev/fd/2" => Some(2),
        _ => None,
    }
}

/// Writes a file, handling devices and the stdout/stderr aliases.
pub fn write_file(os: &mut dyn Os, path: &str, data: &[u8], mode: WriteMode) -> Result<(), Errno> {
    match std_stream(path) {
        Some(1) => return os.write_stdout(data),
        Some(_) => return os.write_stderr(data),
        None => {}
    }
    if let Some(dev) = os.fs_ref().device(path) {
        return match dev {
            Device::Full => Err(Errno::ENOSPC),
            _ => Ok(()),
        };
    }
    if path.starts_with("/proc/") {
        return Err(Errno::EACCES);
    }
    let now = os.unix_time_ms();
    let fs = os.fs();
    fs.set_clock(now);
    fs.write(path, data, mode)
}

/// Opens `path` for output as a redirection does (`>`: truncate, `>>`: create), returning the
/// descriptor target.
pub fn open_output(os: &mut dyn Os, path: &str, append: bool) -> Result<FdTarget, Errno> {
    match std_stream(path) {
        Some(1) => return Ok(FdTarget::Stdout),
        Some(_) => return Ok(FdTarget::Stderr),
        None => {}
    }
    if let Some(dev) = os.fs_ref().device(path) {
        return Ok(match dev {
            Device::Null | Device::Zero | Device::Random | Device::Urandom | Device::Tty => FdTarget::Null,
            Device::Full => FdTarget::File(path.to_string()),
        });
    }
    write_file(os, path, b"", if append { WriteMode::Append } else { WriteMode::Truncate })?;
    Ok(FdTarget::File(path.to_string()))
}

/// Writes `data` to a descriptor target. `capture` is the buffer for [`FdTarget::Capture`].
pub fn route(os: &mut dyn Os, t: &FdTarget, data: &[u8], capture: Option<(&mut Vec<u8>, usize)>) -> Result<(), Errno> {
    match t {
        FdTarget::Stdout => os.write_stdout(data),
        FdTarget::Stderr => os.write_stderr(data),
        FdTarget::Null => Ok(()),
        FdTarget::File(p) => write_file(os, p, data, WriteMode::Append),
        FdTarget::Capture => match capture {
            Some((buf, limit)) => {
                if buf.len() + data.len() > limit {
                    let room = limit.saturating_sub(buf.len());
                    buf.extend_from_slice(&data[..room.min(data.len())]);
                    Err(Errno::EPIPE)
                } else {
                    buf.extend_from_slice(data);
                    Ok(())
                }
            }
            None => Ok(()),
        },
        FdTarget::Closed | FdTarget::Input(_) => Err(Errno::EBADF),
    }
}

/// The [`Os`] an in-process child sees: everything forwards to the parent's `Os` except
/// stdout/stderr (routed through the child's descriptor table) and the pid.
pub struct Routed<'a> {
    /// The parent's Os.
    pub inner: &'a mut dyn Os,
    /// The child's stdout target.
    pub out: &'a FdTarget,
    /// The child's stderr target.
    pub err: &'a FdTarget,
    /// Capture buffer for [`FdTarget::Capture`].
    pub capture: &'a mut Vec<u8>,
    /// Capture limit (a pipe whose reader is gone: `EPIPE` beyond it).
    pub limit: usize,
    /// The child's pid.
    pub pid: u32,
}

impl Os for Routed<'_> {
    fn now_ms(&self) -> u64 {
        self.inner.now_ms()
    }
    fn unix_time_ms(&self) -> u64 {
        self.inner.unix_time_ms()
    }
    fn hostname(&self) -> String {
        self.inner.hostname()
    }
    fn write_stdout(&mut self, data: &[u8]) -> Result<(), Errno> {
        route(self.inner, self.out, data, Some((self.capture, self.limit)))
    }
    fn write_stderr(&mut self, data: &[u8]) -> Result<(), Errno> {
        route(self.inner, self.err, data, Some((self.capture, self.limit)))
    }
    fn stdout_captured(&self) -> bool {
        *self.out != FdTarget::Stdout || self.inner.stdout_captured()
    }
    fn fs(&mut self) -> &mut dyn Fs {
        self.inner.fs()
    }
    fn fs_ref(&self) -> &dyn Fs {
        self.inner.fs_ref()
    }
    fn random_u64(&mut self) -> u64 {
        self.inner.random_u64()
    }
    fn pid(&self) -> u32 {
        self.pid
    }
    fn ppid(&self) -> u32 {
        self.inner.pid()
    }
    fn alloc_pid(&mut self) -> u32 {
        self.inner.alloc_pid()
    }
    fn processes(&self) -> Vec<ProcessInfo> {
        self.inner.processes()
    }
    fn kill(&mut self, pid: u32, sig: Option<Signal>) -> Result<(), Errno> {
        self.inner.kill(pid, sig)
    }
    fn creds(&self) -> Creds {
        self.inner.creds()
    }
    fn uname(&self) -> Uname {
        self.inner.uname()
    }
    fn cpu_count(&self) -> u32 {
        self.inner.cpu_count()
    }
    fn mem_info(&self) -> MemInfo {
        self.inner.mem_info()
    }
    fn set_memory(&mut self, bytes: u64) {
        self.inner.set_memory(bytes)
    }
    fn set_cmdline(&mut self, argv: &[String]) {
        // Only an exec in the process itself (a child's exec replaces the child).
        if self.pid == self.inner.pid() {
            self.inner.set_cmdline(argv)
        }
    }
    fn set_creds(&mut self, uid: u32, gid: u32) {
        if self.pid == self.inner.pid() {
            self.inner.set_creds(uid, gid)
        }
    }
    fn spawn_worker(&mut self, argv: Vec<String>, uid: u32) -> Option<u32> {
        self.inner.spawn_worker(argv, uid)
    }
    fn reserve_workers(&mut self, additional: usize) {
        self.inner.reserve_workers(additional)
    }
    fn process_root(&self, pid: u32, path: &str) -> Option<Result<Vec<u8>, Errno>> {
        if pid == self.pid {
            return Some(self.inner.fs_ref().read(path));
        }
        self.inner.process_root(pid, path)
    }
    fn uptime_ms(&self) -> u64 {
        self.inner.uptime_ms()
    }
}
