use kubesim_os::registry;
use kubesim_os::testing::{run, FakeOs, Outcome};
use kubesim_os::Os;

fn go(image: kubesim_os::fs::Tree, argv: &[&str]) -> Outcome {
    let mut os = FakeOs::new(image);
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let prog = registry::command(&argv, &registry::default_env("pod"), "/", Vec::new(), os.fs_ref()).expect("start");
    run(prog, &mut os)
}

#[test]
fn smoke() {
    for (img, sh) in [(registry::busybox_image(), "sh"), (registry::debian_image(), "sh"), (registry::debian_image(), "bash")] {
        let o = go(img, &[sh, "-c", "echo hi $((1+2)); x=abc; echo ${#x} ${x%c}; for i in 1 2 3; do echo -n $i; done; echo; date; foo; cd /nope; echo $(echo sub) `hostname`; ls /; sleep 2; echo end"]);
        println!("=== {sh}\n{}---\n{}--- code {:?} t={}", o.stdout_str(), o.stderr_str(), o.code, o.elapsed_ms);
    }
}
