//! Applets print what GNU coreutils (and Debian's grep, sed, mawk, findutils) and busybox print,
//! byte for byte: every script in `real_tools/cases.rs` was recorded from the real tools.

#[path = "real_tools/cases.rs"]
mod cases;

use kubesim_os::registry;
use kubesim_os::testing::{run, FakeOs};
use kubesim_os::Os;

/// Rows whose real output depends on the recording machine or on implementation choices
/// this crate documents as deviations (see the README).
const SKIP: &[&str] = &[
    // The recorded listing shows the recording machine's clock.
    "cd /tmp/w && mkdir -p p/q && touch p/q/r && ls -lR p | grep -v total",
];

fn sim(family: usize, script: &str) -> (String, String, i32) {
    let (image, sh) = if family == 0 { (registry::debian_image(), "bash") } else { (registry::busybox_image(), "sh") };
    let mut os = FakeOs::new(image);
    os.fs.root.add_dir("/tmp/w", 0o755);
    let mut env = std::collections::BTreeMap::new();
    env.insert("PATH".to_string(), registry::DEFAULT_PATH.to_string());
    env.insert("HOME".to_string(), "/root".to_string());
    env.insert("TZ".to_string(), "UTC".to_string());
    env.insert("LC_ALL".to_string(), "C".to_string());
    let argv = vec![sh.to_string(), "-c".to_string(), script.to_string()];
    let prog = registry::command(&argv, &env, "/", Vec::new(), os.fs_ref()).expect("shell starts");
    let out = run(prog, &mut os);
    (out.stdout_str(), out.stderr_str(), out.code.unwrap_or(-1))
}

#[test]
fn applets_print_what_the_real_tools_print() {
    let names = ["gnu", "busybox"];
    let mut failures = Vec::new();
    for (script, expected) in cases::CASES {
        if SKIP.contains(script) {
            continue;
        }
        for (i, want) in expected.iter().enumerate() {
            let got = sim(i, script);
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
