//! `stress` (polinux/stress 1.0.4: `--cpu N --vm N --vm-bytes B --vm-hang S --timeout S`) and
//! vish/stress (`-cpus N -mem-total B`), the load generators of the Kubernetes resource
//! tutorials. Memory hogs report their allocation through [`Program::memory_bytes`] and
//! [`Os::set_memory`]; CPU hogs ask for CPU time with `Step::Compute` forever.

use crate::program::{default_signal_exit, Os, Program, Spawn, Step, Wake};

/// The `stress` program.
#[derive(Clone, Debug)]
pub struct Stress {
    spawn: Spawn,
    cpus: u32,
    vms: u32,
    vm_bytes: u64,
    hang_s: Option<u64>,
    timeout_s: Option<u64>,
    start: u64,
    allocated: u64,
    started: bool,
}

/// Parses `150M`, `1G`, `512k`, `100Mi`, `1024` into bytes.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit() && *c != '.') {
        None => (t, 1u64),
        Some((i, _)) => {
            let m = match &t[i..] {
                "b" | "B" => 1,
                "k" | "K" | "Ki" | "KB" => 1 << 10,
                "m" | "M" | "Mi" | "MB" => 1 << 20,
                "g" | "G" | "Gi" | "GB" => 1 << 30,
                _ => return None,
            };
            (&t[..i], m)
        }
    };
    let v: f64 = num.parse().ok()?;
    Some((v * mult as f64) as u64)
}

impl Stress {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> Stress {
        Stress { spawn: spawn.clone(), cpus: 0, vms: 0, vm_bytes: 256 << 20, hang_s: None, timeout_s: None, start: 0, allocated: 0, started: false }
    }

    fn parse(&mut self) -> Result<(), String> {
        let a = &self.spawn.argv[1..];
        let mut i = 0;
        let next = |i: &mut usize| -> Result<String, String> {
            *i += 1;
            a.get(*i).cloned().ok_or_else(|| "stress: FAIL: [1] (1) missing argument".to_string())
        };
        while i < a.len() {
            match a[i].as_str() {
                "--cpu" | "-c" | "-cpus" => self.cpus = next(&mut i)?.parse().map_err(|_| "stress: FAIL: bad --cpu".to_string())?,
                "--vm" | "-m" => self.vms = next(&mut i)?.parse().map_err(|_| "stress: FAIL: bad --vm".to_string())?,
                "--vm-bytes" | "-mem-total" => self.vm_bytes = parse_bytes(&next(&mut i)?).ok_or("stress: FAIL: bad --vm-bytes")?,
                "--vm-hang" => self.hang_s = next(&mut i)?.parse().ok(),
                "--timeout" | "-t" => self.timeout_s = next(&mut i)?.trim_end_matches('s').parse().ok(),
                "--io" | "-i" | "--hdd" | "-d" | "--backoff" | "--hdd-bytes" | "--vm-stride" | "-mem-alloc-size" | "-mem-alloc-sleep" => {
                    next(&mut i)?;
                }
                "--vm-keep" | "--verbose" | "-v" | "--quiet" | "-q" | "-logtostderr" => {}
                other if other.starts_with("-mem-total=") => self.vm_bytes = parse_bytes(&other[11..]).ok_or("stress: FAIL: bad -mem-total")?,
                other if other.starts_with("-cpus=") => self.cpus = other[6..].parse().unwrap_or(1),
                other => return Err(format!("stress: FAIL: [1] (244) unrecognized option: {other}")),
            }
            i += 1;
        }
        if self.spawn.argv.iter().any(|x| x.starts_with("-mem-total")) && self.vms == 0 {
            self.vms = 1;
        }
        Ok(())
    }

    fn next_step(&mut self, os: &mut dyn Os) -> Step {
        if let Some(t) = self.timeout_s {
            let end = self.start + t * 1000;
            if os.now_ms() >= end {
                let _ = os.write_stdout(format!("stress: info: [1] successful run completed in {t}s\n").as_bytes());
                self.allocated = 0;
                os.set_memory(0);
                return Step::Exit(0);
            }
        }
        if self.cpus > 0 {
            return Step::Compute { cpu_ms: 1000, threads: self.cpus };
        }
        match self.hang_s {
            Some(h) if h > 0 => Step::Sleep(h * 1000),
            _ => Step::Wait,
        }
    }
}

impl Program for Stress {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match wake {
            Wake::Start => {
                if let Err(e) = self.parse() {
                    let _ = os.write_stderr(format!("{e}\n").as_bytes());
                    return Step::Exit(1);
                }
                self.start = os.now_ms();
                self.started = true;
                let _ = os.write_stdout(format!("stress: info: [1] dispatching hogs: {} cpu, 0 io, {} vm, 0 hdd\n", self.cpus, self.vms).as_bytes());
                self.allocated = self.vm_bytes.saturating_mul(self.vms as u64);
                os.set_memory(self.memory_bytes());
                self.next_step(os)
            }
            Wake::Signal(s) => match default_signal_exit(os, s) {
                Some(c) => Step::Exit(c),
                None => self.next_step(os),
            },
            _ => self.next_step(os),
        }
    }

    fn memory_bytes(&self) -> u64 {
        (1 << 20) + self.allocated
    }
}
