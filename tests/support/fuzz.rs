//! What the fuzz targets share (`crates/kubectl/tests/fuzz.rs`, `crates/os/tests/fuzz_shell.rs`,
//! `crates/server/tests/fuzz_http.rs`, `crates/sim/tests/fuzz_apply.rs` include it with
//! `#[path]`): the seeded generator, the `KUBESIM_FUZZ_ITERS` / `KUBESIM_FUZZ_SEED` knobs,
//! the peak RSS and the report line.
#![allow(dead_code)]

use std::io::Write;

/// splitmix64: the generators' one source of choices, from the seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// `KUBESIM_FUZZ_ITERS`, or the target's default.
pub fn iterations(default: usize) -> usize {
    std::env::var("KUBESIM_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// `KUBESIM_FUZZ_SEED`, or 1.
pub fn seed() -> u64 {
    std::env::var("KUBESIM_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1)
}

/// Peak resident set size of this process, in MiB (Linux; 0 elsewhere).
pub fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok()).unwrap_or(0) / 1024
}

/// Reports past the test harness's capture (a direct write to the process's stderr).
pub fn report(line: &str) {
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}
