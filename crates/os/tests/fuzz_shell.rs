//! Fuzzing the shell model on the stable toolchain: a seeded generator writes scripts from the
//! POSIX shell grammar (pipelines, and-or lists, if/while/until/for/case, functions, subshells,
//! groups, here-documents, redirections, every parameter expansion form, arithmetic, command
//! substitution, globs, bash arrays) over the applets the images carry, then mutates some of
//! them, and runs each in busybox ash, dash and bash on a fake OS for a bounded virtual time.
//! Properties: no panic, no stack overflow, termination within the step budget, bounded output
//! and memory (peak RSS reported).
//!
//! Hundreds of scripts by default (seconds); `KUBESIM_FUZZ_ITERS=N` runs N,
//! `KUBESIM_FUZZ_SEED=S` starts elsewhere. The executions are reported on stderr.

use kubesim_os::registry;
use kubesim_os::testing::{run_until, FakeOs};
use kubesim_os::Os;

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::{iterations, peak_rss_mib, report, seed, Rng};

const VARS: &[&str] = &["x", "y", "i", "HOME", "PATH", "IFS", "1", "@", "#", "?", "$", "!", "0", "*", "-", "RANDOM", "LINENO", "PWD", "a_b"];

fn word(rng: &mut Rng, depth: usize) -> String {
    let v = *rng.pick(VARS);
    match rng.below(if depth == 0 { 14 } else { 18 }) {
        0 => rng
            .pick(&["a", "b c", "1", "0", "-1", "", "/tmp", "/etc/passwd", "*", "*.txt", "[a-z]*", "~", "?", "-n", "--", "x=1", "\\n", "%s", "é"])
            .to_string(),
        1 => format!("${v}"),
        2 => format!("${{{v}:-def}}"),
        3 => format!("${{{v}:=set}}"),
        4 => format!("${{{v}#*/}}"),
        5 => format!("${{{v}%%.*}}"),
        6 => format!("${{#{v}}}"),
        7 => format!("${{{v}/a/b}}"),
        8 => format!("${{{v}:1:2}}"),
        9 => format!("\"${v} and ${{{v}}}\""),
        10 => format!("'{}'", rng.pick(&["single $x", "", "a\"b", "\\"])),
        11 => format!("$(({}))", arith(rng, 3)),
        12 => format!("${{{v}:?unset}}"),
        13 => format!("${{{v}^^}}"),
        14 | 15 => format!("$({})", simple(rng, depth - 1)),
        16 => format!("`{}`", simple(rng, depth - 1)),
        _ => format!("\"$({})\"", simple(rng, depth - 1)),
    }
}

fn arith(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return rng.pick(&["1", "0", "x", "i", "-5", "2147483647", "9223372036854775807", "0x1f", "010", "y"]).to_string();
    }
    let op = *rng.pick(&["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||", "<", "==", "!=", ",", "**", "="]);
    match rng.below(4) {
        0 => format!("({} {op} {})", arith(rng, depth - 1), arith(rng, depth - 1)),
        1 => format!("{} ? {} : {}", arith(rng, depth - 1), arith(rng, depth - 1), arith(rng, depth - 1)),
        2 => format!("x++ {op} --i"),
        _ => format!("{} {op} {}", arith(rng, depth - 1), arith(rng, 0)),
    }
}

const COMMANDS: &[&str] = &[
    "echo", "printf", "cat", "grep", "sed", "awk", "cut", "tr", "sort", "uniq", "head", "tail", "wc", "test", "[", "true", "false", "read", "export", "unset",
    "set", "shift", "eval", "seq", "expr", "basename", "dirname", "ls", "mkdir", "touch", "rm", "cp", "mv", "env", "printenv", "id", "date", "sleep", "kill",
    "wait", "trap", "type", "command", "which", "tee", "xargs", "find", "stat", "od", "rev", "nl", "base64", "md5sum", "readlink", "local", "return", "break",
    "continue", "getopts", "ulimit", "umask", "cd", "pwd", "hash", "times", "alias", "unalias", "let", "declare", "mapfile", ":", "timeout",
];

fn simple(rng: &mut Rng, depth: usize) -> String {
    let mut cmd = match rng.below(12) {
        0 => return format!("{}={}", rng.pick(&["x", "y", "i", "IFS", "a_b"]), word(rng, depth)),
        1 => return format!("arr=({} {})", word(rng, depth), word(rng, depth)),
        2 => return format!("echo ${{arr[{}]}} ${{#arr[@]}} \"${{arr[@]}}\"", rng.below(3)),
        3 => return format!("(( {} ))", arith(rng, 2)),
        4 => return format!("[[ {} == {} ]]", word(rng, depth), rng.pick(&["a*", "?", "[ab]", "x"])),
        5 => return format!("test {} {} {}", word(rng, depth), rng.pick(&["=", "!=", "-eq", "-lt", "-gt", "-f", "-z"]), word(rng, depth)),
        _ => rng.pick(COMMANDS).to_string(),
    };
    for _ in 0..rng.below(3) {
        cmd.push(' ');
        cmd.push_str(&word(rng, depth));
    }
    match rng.below(10) {
        0 => cmd.push_str(" > /tmp/out"),
        1 => cmd.push_str(" >> /tmp/out 2>&1"),
        2 => cmd.push_str(" < /tmp/out"),
        3 => cmd.push_str(" 2>/dev/null"),
        4 => cmd.push_str(" 3>&1 1>&2 2>&3"),
        5 => cmd.push_str(" <<< \"here string\""),
        _ => {}
    }
    cmd
}

fn pipeline(rng: &mut Rng, depth: usize) -> String {
    let mut p = simple(rng, depth);
    for _ in 0..rng.below(3) {
        p.push_str(rng.pick::<&str>(&[" | ", " && ", " || ", " | "]));
        p.push_str(&simple(rng, depth));
    }
    if rng.below(6) == 0 {
        p = format!("! {p}");
    }
    if rng.below(8) == 0 {
        p.push_str(" &");
    }
    p
}

fn statement(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return pipeline(rng, 1);
    }
    let body = |rng: &mut Rng| -> String { (0..1 + rng.below(3)).map(|_| statement(rng, depth - 1)).collect::<Vec<_>>().join("\n") };
    match rng.below(14) {
        0 => format!("if {}\nthen\n{}\nelif {}\nthen\n{}\nelse\n{}\nfi", pipeline(rng, 1), body(rng), pipeline(rng, 1), body(rng), body(rng)),
        1 => format!("i=0\nwhile [ $i -lt {} ]\ndo\ni=$((i+1))\n{}\ndone", rng.below(5), body(rng)),
        2 => format!("until {}\ndo\n{}\nbreak\ndone", pipeline(rng, 1), body(rng)),
        3 => format!("for v in {} {} 3\ndo\n{}\ndone", word(rng, 1), word(rng, 1), body(rng)),
        4 => format!("case {} in\na*|b) {} ;;\n[0-9]) {} ;;\n*) {} ;;\nesac", word(rng, 1), pipeline(rng, 1), pipeline(rng, 1), pipeline(rng, 1)),
        5 => format!("f() {{\n{}\nreturn {}\n}}\nf {} {}\necho $?", body(rng), rng.below(3), word(rng, 1), word(rng, 1)),
        6 => format!("(\n{}\n)", body(rng)),
        7 => format!("{{\n{}\n}} > /tmp/g", body(rng)),
        8 => format!("trap 'echo trapped' EXIT INT\n{}", body(rng)),
        9 => format!("{} &\nwait $!", pipeline(rng, 1)),
        10 => format!("cat <<EOF\n$x ${{y:-d}} $(echo sub) $((1+2))\nEOF\n{}", body(rng)),
        11 => format!("while read -r a b\ndo\necho \"$b $a\"\ndone < /tmp/out\n{}", body(rng)),
        _ => pipeline(rng, 1),
    }
}

fn script(rng: &mut Rng) -> String {
    let mut s = (0..1 + rng.below(5)).map(|_| statement(rng, 2)).collect::<Vec<_>>().join("\n");
    if rng.below(4) == 0 {
        // Mutate: drop, duplicate or insert shell punctuation.
        let mut chars: Vec<char> = s.chars().collect();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(chars.len() + 1);
            match rng.below(3) {
                0 if at < chars.len() => {
                    chars.remove(at);
                }
                1 if at < chars.len() => {
                    let c = chars[at];
                    chars.insert(at, c);
                }
                _ => chars.insert(at, *rng.pick(&['(', ')', '{', '}', '"', '\'', '`', '$', ';', '&', '|', '<', '>', '\\', '\n', '#', '*', '['])),
            }
        }
        s = chars.into_iter().collect();
    }
    s
}

#[test]
fn generated_scripts_run_bounded_in_every_shell() {
    let iterations = iterations(200);
    let mut rng = Rng(seed());
    let (mut exited, mut cut_off, mut bytes) = (0usize, 0usize, 0usize);
    let mut codes = std::collections::BTreeSet::new();
    for i in 0..iterations {
        let s = script(&mut rng);
        for (image, sh) in [(registry::busybox_image(), "sh"), (registry::debian_image(), "sh"), (registry::debian_image(), "bash")] {
            let mut os = FakeOs::new(image).with_file("/tmp/out", b"a b\n1 2\n");
            let argv = vec![sh.to_string(), "-c".to_string(), s.clone()];
            let program = registry::command(&argv, &registry::default_env("fuzz"), "/", b"input line\n".to_vec(), os.fs_ref()).expect("a shell");
            let out = run_until(program, &mut os, 200);
            // Output costs time (an applet's output 1 ms of CPU per MiB, each process 0.5 ms),
            // so 200 virtual ms bound it: a few of `seq`'s largest runs (10 million numbers,
            // 79 MB each) at most.
            assert!(out.stdout.len() + out.stderr.len() < 256 << 20, "bounded output, case {i} (seed {}): {s}", seed());
            bytes += out.stdout.len() + out.stderr.len();
            match out.code {
                Some(code) => {
                    exited += 1;
                    codes.insert(code);
                }
                None => cut_off += 1,
            }
        }
    }
    report(&format!(
        "fuzz shell: {} executions ({iterations} scripts × ash, dash, bash; seed {}): {exited} exited ({} distinct codes), {cut_off} cut off at the virtual deadline, {bytes} bytes of output, peak RSS {} MiB",
        3 * iterations,
        seed(),
        codes.len(),
        peak_rss_mib()
    ));
}
