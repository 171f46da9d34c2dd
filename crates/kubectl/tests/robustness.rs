//! No command line panics: every command × a set of awkward arguments runs against the scenario
//! cluster, and each either succeeds or fails with a message and exit code 1.

mod common;
mod scenario;

#[test]
fn awkward_command_lines_never_panic() {
    let commands = [
        "get",
        "describe",
        "delete",
        "scale",
        "set image",
        "label",
        "annotate",
        "patch",
        "taint",
        "cordon",
        "uncordon",
        "drain",
        "rollout status",
        "rollout history",
        "rollout undo",
        "rollout restart",
        "rollout pause",
        "rollout resume",
        "rollout frob",
        "run",
        "create",
        "create deployment",
        "create ns",
        "expose",
        "logs",
        "exec",
        "top",
        "top pods",
        "top nodes",
        "wait",
        "events",
        "api-resources",
        "version",
        "cluster-info",
        "apply",
        "replace",
        "auth",
        "config",
        "explain",
        "",
    ];
    let args = [
        "",
        "pods",
        "pod/",
        "/x",
        "deploy/web",
        "pod web-7d4b9c7f5-abcde",
        "nodes node-1",
        "-l",
        "-l '!!'",
        "-l 'a in (b'",
        "--field-selector ''",
        "--field-selector x",
        "-o",
        "-o jsonpath='{'",
        "-o jsonpath='{range}'",
        "-o custom-columns=BAD",
        "-o yaml",
        "-o json -A",
        "--replicas",
        "--replicas=x",
        "--replicas=-5",
        "x=y",
        "x-",
        "=",
        "-",
        "--",
        "-- ls",
        "-p '{'",
        "-p '[]' --type json",
        "-p '[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/b\"}]' --type json",
        "--type strategic -p null",
        "--for",
        "--for=condition=",
        "--for=jsonpath='{.x'",
        "--to-revision=-1",
        "--grace-period=abc",
        "--cascade=x",
        "-f",
        "-f missing.yaml",
        "--image=",
        "--image=x --replicas=-1",
        "node-1 a=b:Bad",
        "node-1 :NoSchedule",
        "node-1 =:NoSchedule-",
        "pods,svc,deploy,nodes,ns,events all",
        "all -A -o wide",
        "pods --sort-by='{'",
        "pods --sort-by=.metadata.name -L app,tier",
        "-n ''",
        "-n kube-system",
        "--all",
        "--all -l app=web",
        "svc/web --port=0",
        "web-7d4b9c7f5-abcde -c ''",
        "\u{1F600}",
        "'\u{0}'",
    ];
    let mut f = scenario::cluster();
    let mut failures = Vec::new();
    for c in commands {
        for a in args {
            let line = format!("{c} {a}");
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.kubectl(&line)));
            match outcome {
                Err(_) => failures.push(format!("PANIC: kubectl {line}")),
                Ok(o) => {
                    if o.exit_code != 0 && o.stderr.is_empty() {
                        failures.push(format!("exit {} without a message: kubectl {line}", o.exit_code));
                    }
                    if o.exit_code == 0 && o.stderr.starts_with("error") {
                        failures.push(format!("error message with exit 0: kubectl {line}: {}", o.stderr));
                    }
                }
            }
            // Rebuild the cluster now and then so destructive commands do not hide later cases.
            if f.api.store().count(("", "pods")) < 2 {
                f = scenario::cluster();
            }
        }
    }
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
}
