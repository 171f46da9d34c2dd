//! How a node runtime drives containers with this crate: its own `Os` over a `ContainerFs`
//! that borrows the node's storage, two containers of a pod sharing an emptyDir, steps played
//! on the host's clock.

use kubesim_os::fs::{prepare_mountpoints, ContainerFs, Errno, Fs, Mount, Tree, Volumes};
use kubesim_os::program::{ProcessInfo, Signal, Step, Wake};
use kubesim_os::{registry, Os, Program};

/// The node's per-container state (owned by the host, cloned for time travel).
#[derive(Clone)]
struct Container {
    root: Tree,
    mounts: Vec<Mount>,
    log: Vec<u8>,
    pid: u32,
    hostname: String,
}

/// The `Os` a program sees while the host resumes it: borrows the container and the node's
/// volume storage for the duration of one `resume`.
struct HostOs<'a> {
    fs: ContainerFs<'a>,
    log: &'a mut Vec<u8>,
    now_ms: u64,
    pid: u32,
    hostname: &'a str,
    rng: &'a mut u64,
    next_pid: &'a mut u32,
}

impl Os for HostOs<'_> {
    fn now_ms(&self) -> u64 {
        self.now_ms
    }
    fn unix_time_ms(&self) -> u64 {
        1_796_115_897_000 + self.now_ms
    }
    fn hostname(&self) -> String {
        self.hostname.to_string()
    }
    fn write_stdout(&mut self, d: &[u8]) -> Result<(), Errno> {
        self.log.extend_from_slice(d);
        Ok(())
    }
    fn write_stderr(&mut self, d: &[u8]) -> Result<(), Errno> {
        self.log.extend_from_slice(d);
        Ok(())
    }
    fn fs(&mut self) -> &mut dyn Fs {
        &mut self.fs
    }
    fn fs_ref(&self) -> &dyn Fs {
        &self.fs
    }
    fn random_u64(&mut self) -> u64 {
        *self.rng = self.rng.wrapping_mul(6364136223846793005).wrapping_add(1);
        *self.rng
    }
    fn pid(&self) -> u32 {
        self.pid
    }
    fn alloc_pid(&mut self) -> u32 {
        *self.next_pid += 1;
        *self.next_pid
    }
    fn processes(&self) -> Vec<ProcessInfo> {
        Vec::new()
    }
    fn kill(&mut self, _pid: u32, _sig: Option<Signal>) -> Result<(), Errno> {
        Err(Errno::ESRCH)
    }
    fn set_memory(&mut self, _bytes: u64) {}
}

/// Plays one container's program to its next blocking step at `now`.
fn resume(c: &mut Container, vols: &mut Volumes, prog: &mut Box<dyn Program>, now: u64, wake: Wake, rng: &mut u64, next_pid: &mut u32) -> Step {
    let mut os = HostOs {
        fs: ContainerFs::new(&mut c.root, &c.mounts, vols, 1_796_115_897_000 + now),
        log: &mut c.log,
        now_ms: now,
        pid: c.pid,
        hostname: &c.hostname,
        rng,
        next_pid,
    };
    prog.resume(&mut os, wake)
}

#[test]
fn two_containers_share_an_empty_dir_through_host_owned_storage() {
    let mut vols = Volumes::default();
    let mount = |path: &str, ro: bool| vec![Mount { path: path.into(), volume: "pod-1/shared".into(), sub_path: None, read_only: ro, memory: false }];
    let mut writer = Container { root: registry::busybox_image(), mounts: mount("/data", false), log: Vec::new(), pid: 1, hostname: "two-containers".into() };
    let mut reader = Container { root: registry::debian_image(), mounts: mount("/pod-data", true), log: Vec::new(), pid: 1, hostname: "two-containers".into() };
    prepare_mountpoints(&mut writer.root, &writer.mounts, &mut vols);
    prepare_mountpoints(&mut reader.root, &reader.mounts, &mut vols);
    let env = registry::default_env("two-containers");
    let argv = |s: &str| vec!["sh".to_string(), "-c".to_string(), s.to_string()];
    let (mut rng, mut next_pid) = (1u64, 10u32);
    let mut w = registry::command(
        &argv("for i in 1 2 3; do echo line $i >> /data/log; sleep 1; done"),
        &env,
        "/",
        Vec::new(),
        &kubesim_os::fs::ContainerFs::new(&mut writer.root, &writer.mounts, &mut vols, 0),
    )
    .expect("writer");
    let mut r = registry::command(
        &argv("sleep 5; cat /pod-data/log; echo x > /pod-data/y"),
        &env,
        "/",
        Vec::new(),
        &kubesim_os::fs::ContainerFs::new(&mut reader.root, &reader.mounts, &mut vols, 0),
    )
    .expect("reader");
    // A tiny scheduler: each program's next wake-up time; both start at 0.
    let mut next = [(0u64, Wake::Start), (0u64, Wake::Start)];
    let mut done = [false, false];
    let mut codes = [0, 0];
    for _ in 0..100 {
        let Some(i) = (0..2).filter(|&i| !done[i]).min_by_key(|&i| next[i].0) else { break };
        let (now, wake) = next[i].clone();
        let step = if i == 0 {
            resume(&mut writer, &mut vols, &mut w, now, wake, &mut rng, &mut next_pid)
        } else {
            resume(&mut reader, &mut vols, &mut r, now, wake, &mut rng, &mut next_pid)
        };
        match step {
            Step::Sleep(ms) => next[i] = (now + ms, Wake::Timer),
            Step::Exit(c) => {
                done[i] = true;
                codes[i] = c;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(codes, [0, 2]);
    assert_eq!(String::from_utf8_lossy(&reader.log), "line 1\nline 2\nline 3\nsh: 1: cannot create /pod-data/y: Read-only file system\n");
    assert!(writer.log.is_empty());
    // The snapshot of the world is plain data: cloning containers and programs is cheap.
    let snapshot = (writer.clone(), vols.clone(), w.clone());
    assert_eq!(snapshot.1, vols);
}
