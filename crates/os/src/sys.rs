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
    /// Which filesystem it is (stat's `st_dev`): bind mounts of one filesystem share it (the
    /// node's disk behind every volume and runtime file, the /dev tmpfs behind the masked
    /// /proc files), each tmpfs has its own. GNU `df` shows each filesystem once.
    pub dev: u32,
}

/// The container's mount table, as `/proc/mounts` and `mount` list it, in the order runc
/// mounts a containerd container's OCI spec: the root overlay; the default mounts (proc, the
/// /dev tmpfs, devpts, mqueue, sysfs, the cgroup2 hierarchy); then the kubelet's mounts (the
/// volumes in `volumeMounts` order, `/etc/hosts`, the termination-message file) followed by
/// containerd's (`/etc/hostname`, `/etc/resolv.conf`, the sandbox's `/dev/shm`), stably
/// sorted by how many components their paths have (containerd's WithMounts, so a mount never
/// shadows a deeper one); last the read-only and masked /proc and /sys paths. Volumes on the
/// node's disk and the runtime's files show the node's disk (`/dev/sda1`, ext4); memory-backed
/// volumes a tmpfs sized to the node's memory (the kubelet sizes it to the pod's memory limit
/// when it has one: a simplification); a mount point reached through a symlink (`/var/run`
/// is `/run` in Debian's images) shows its resolved path, as the kernel does.
pub fn mount_table(os: &dyn Os) -> Vec<MountEntry> {
    const PROC: &str = "rw,nosuid,nodev,noexec,relatime";
    const PROC_RO: &str = "ro,nosuid,nodev,noexec,relatime";
    // Device numbers: the fixed filesystems, the node's disk, then one per tmpfs.
    const ROOT: u32 = 1;
    const PROC_DEV: u32 = 2;
    const DEV: u32 = 3;
    const DISK: u32 = 8;
    let entry = |device: &'static str, point: &str, fs_type: &'static str, options: &str, dev: u32| MountEntry {
        device,
        point: point.into(),
        fs_type,
        options: options.into(),
        dev,
    };
    let mut table = vec![
        entry("overlay", "/", "overlay", "rw,relatime", ROOT),
        entry("proc", "/proc", "proc", PROC, PROC_DEV),
        entry("tmpfs", "/dev", "tmpfs", "rw,nosuid,size=65536k,mode=755", DEV),
        entry("devpts", "/dev/pts", "devpts", "rw,nosuid,noexec,relatime,gid=5,mode=620,ptmxmode=666", 4),
        entry("mqueue", "/dev/mqueue", "mqueue", PROC, 5),
        entry("sysfs", "/sys", "sysfs", PROC_RO, 6),
        entry("cgroup", "/sys/fs/cgroup", "cgroup2", PROC_RO, 7),
    ];
    let mut next_dev = DISK + 1;
    let mut own_dev = || {
        next_dev += 1;
        next_dev
    };
    let runtime = os.runtime_files();
    let volumes = os.fs_ref().mounts();
    if !runtime.is_empty() || !volumes.is_empty() {
        let tmpfs_size = format!("size={}k", os.mem_info().total / 1024);
        let disk = |ro: bool| if ro { "ro,relatime" } else { "rw,relatime" };
        let mut spec: Vec<MountEntry> = volumes
            .into_iter()
            .map(|m| match m.memory {
                true => MountEntry { device: "tmpfs", point: m.path, fs_type: "tmpfs", options: format!("{},{tmpfs_size}", disk(m.read_only)), dev: own_dev() },
                false => MountEntry { device: "/dev/sda1", point: m.path, fs_type: "ext4", options: disk(m.read_only).into(), dev: DISK },
            })
            .collect();
        spec.extend(runtime.iter().map(|path| entry("/dev/sda1", path, "ext4", "rw,relatime", DISK)));
        if !runtime.is_empty() {
            spec.push(entry("shm", "/dev/shm", "tmpfs", "rw,nosuid,nodev,noexec,relatime,size=65536k", own_dev()));
        }
        // Stable: mounts of equal depth keep their order.
        spec.sort_by_key(|m| crate::fs::component_strs(&m.point).count());
        for m in &mut spec {
            if let Ok(real) = os.fs_ref().realpath(&m.point) {
                m.point = real;
            }
        }
        table.extend(spec);
    }
    for path in ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"] {
        table.push(entry("proc", path, "proc", PROC_RO, PROC_DEV));
    }
    // Masked paths: a directory under an empty read-only tmpfs of its own, a file under
    // /dev/null (the /dev tmpfs).
    for (path, dir) in
        [("/proc/acpi", true), ("/proc/kcore", false), ("/proc/keys", false), ("/proc/timer_list", false), ("/proc/scsi", true), ("/sys/firmware", true)]
    {
        table.push(match dir {
            true => entry("tmpfs", path, "tmpfs", "ro,relatime", own_dev()),
            false => entry("tmpfs", path, "tmpfs", "rw,nosuid,size=65536k,mode=755", DEV),
        });
    }
    table
}

/// `/proc/mounts` (and `/proc/PID/mounts`): the mount table, one `device point type options 0 0`
/// line per mount.
fn mounts_file(os: &dyn Os) -> String {
    mount_table(os).iter().map(|m| format!("{} {} {} {} 0 0\n", m.device, m.point, m.fs_type, m.options)).collect()
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
        (None, "mounts") => mounts_file(os),
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
                // The process's mount namespace: the container's (a process of another
                // container sharing the pod's PID namespace is shown this container's table,
                // a simplification: kubesim keeps no mount namespace per process).
                "mounts" => mounts_file(os),
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
