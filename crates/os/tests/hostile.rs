//! Hostile input never panics: random scripts, random argv for every applet, deep nesting,
//! huge loops — all bounded.

use kubesim_os::registry;
use kubesim_os::testing::{run_until, FakeOs};
use kubesim_os::Os;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[(self.next() as usize) % v.len()]
    }
}

const TOKENS: &[&str] = &[
    "echo", "x", "$x", "${x", "${x:-", "}", "$(", ")", "`", "'", "\"", "(", "((", "))", "[[", "]]", "[", "]", "if", "then", "fi", "else", "for", "in", "do",
    "done", "while", "case", "esac", ";;", ";", "&", "&&", "||", "|", "<", ">", ">>", "<<", "<<-", "EOF", "\n", " ", "$((", "1", "+", "/", "0", "*", "?", "=",
    "a=1", "arr=(", "${#", "${x#", "${x/", "\\", "$'", "{", "!", "function", "f()", "local", "return", "break", "continue", "exit", "trap", "set", "-e", "-x",
    "eval", "exec", "shift", "read", "printf", "%s", "%d", "test", "-eq", "sleep", "0.001", "cat", "ls", "grep", "sed", "awk", "wait", "kill", "$$", "$!",
    "$@", "$#", "\t", "#", "~", "$RANDOM", "${@}", "${!x}",
];

fn script(r: &mut Rng) -> String {
    let n = 1 + r.next() as usize % 40;
    (0..n).map(|_| r.pick(TOKENS)).collect::<Vec<_>>().join(if r.next().is_multiple_of(2) { " " } else { "" })
}

#[test]
fn random_scripts_never_panic_in_any_flavour() {
    let mut r = Rng(1003);
    for i in 0..800 {
        let s = script(&mut r);
        for (img, sh) in [(registry::busybox_image(), "sh"), (registry::debian_image(), "sh"), (registry::debian_image(), "bash")] {
            let mut os = FakeOs::new(img);
            let argv = vec![sh.to_string(), "-c".to_string(), s.clone()];
            let prog = registry::command(&argv, &registry::default_env("p"), "/", Vec::new(), os.fs_ref()).expect("shell");
            let out = run_until(prog, &mut os, 100);
            assert!(out.stdout.len() < 64 << 20, "case {i}");
        }
    }
}

#[test]
fn random_applet_arguments_never_panic() {
    let mut r = Rng(7);
    let args: &[&str] = &[
        "-n",
        "-c",
        "-e",
        "-1",
        "0",
        "-0",
        "+3",
        "-r",
        "-f",
        "/",
        "/etc/passwd",
        "/nope",
        "-",
        "--",
        "-x",
        "a",
        "",
        "s/a/b/g",
        "{print $1}",
        "-F",
        ":",
        "1,2p",
        "[a-",
        "\\(",
        "*",
        "-k2",
        "-t,",
        "99999999999999999999",
        "-d",
        "@0",
        "+%Y",
        "bs=0",
        "count=-1",
        "if=/dev/zero",
        "-maxdepth",
        "-name",
        "-type",
        "x{2,1}",
        "(a*)*b",
        "%",
        "%*d",
        "-9",
    ];
    let applets = [
        "cat", "ls", "head", "tail", "wc", "grep", "sed", "awk", "cut", "tr", "sort", "uniq", "seq", "expr", "date", "dd", "find", "stat", "printf", "test",
        "basename", "base64", "md5sum", "xargs", "timeout", "sleep", "kill", "id", "uname", "du", "df", "chmod", "mkdir", "rm", "cp", "mv", "ln", "touch",
        "tee", "nl", "rev", "env", "which", "wget", "nc", "nslookup",
    ];
    for _ in 0..1500 {
        let a = r.pick(&applets);
        let n = r.next() as usize % 5;
        let mut argv = vec![a.to_string()];
        for _ in 0..n {
            argv.push(r.pick(args).to_string());
        }
        for img in [registry::busybox_image(), registry::debian_image()] {
            let mut os = FakeOs::new(img);
            if let Ok(prog) = registry::command(&argv, &registry::default_env("p"), "/", b"a b c\n1 2 3\n".to_vec(), os.fs_ref()) {
                let _ = run_until(prog, &mut os, 2_000);
            }
        }
    }
}

#[test]
fn deep_nesting_and_runaway_recursion_are_bounded() {
    let deep = format!("{}echo x{}", "$(".repeat(300), ")".repeat(300));
    let parens = format!("{}true{}", "(".repeat(500), ")".repeat(500));
    let recurse = "f() { f; }; f; echo after".to_string();
    let fork = "while :; do x=$((x+1)); done".to_string();
    for s in [deep, parens, recurse, fork] {
        for (img, sh) in [(registry::busybox_image(), "sh"), (registry::debian_image(), "bash")] {
            let mut os = FakeOs::new(img);
            let argv = vec![sh.to_string(), "-c".to_string(), s.clone()];
            let prog = registry::command(&argv, &registry::default_env("p"), "/", Vec::new(), os.fs_ref()).expect("shell");
            let _ = run_until(prog, &mut os, 1_000);
        }
    }
}
