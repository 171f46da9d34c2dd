//! The `kubesim` binary end to end: `kubesim kubectl FILE... -- ARGS` passes ARGS verbatim,
//! loads the files they name, reports invalid input like `kubesim run`; `kubesim run -o json`
//! keeps stdout for the List; `--at` command lines are split like a POSIX shell.

use std::process::Command;

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("kubesim-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(name: &str, text: &str) -> String {
    let path = dir().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().to_string()
}

fn kubesim(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubesim")).args(args).output().unwrap();
    (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string(), out.status.code().unwrap_or(-1))
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: nginx, image: nginx}]\n";

#[test]
fn kubectl_args_pass_verbatim() {
    let dep = write("dep.yaml", DEPLOYMENT);
    let (out, err, code) = kubesim(&["kubectl", &dep, "--for", "20s", "--", "patch", "deploy", "web", "-p", r#"{"spec":{"replicas":3}}"#]);
    assert_eq!((out.as_str(), code), ("deployment.apps/web patched\n", 0), "{err}");
    let (out, _, code) =
        kubesim(&["kubectl", &dep, "--for", "20s", "--", "get", "deploy", "web", "-o", r#"jsonpath={.metadata.name}{"\n"}{.spec.replicas}{"\n"}"#]);
    assert_eq!((out.as_str(), code), ("web\n2\n", 0));
    let (out, _, _) = kubesim(&[
        "kubectl",
        &dep,
        "--for",
        "20s",
        "--",
        "get",
        "deploy",
        "web",
        "-o",
        "go-template={{.metadata.name}} {{len .spec.template.spec.containers}}",
    ]);
    assert_eq!(out, "web 1");
}

#[test]
fn kubectl_reads_the_files_its_args_name() {
    let other = write("other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {k: v}\n");
    let (out, err, code) = kubesim(&["kubectl", "--for", "1s", "--", "apply", "-f", &other]);
    assert_eq!((out.as_str(), code), ("configmap/extra created\n", 0), "{err}");
    let patch = write("patch.yaml", "data:\n  k: w\n");
    let (out, err, code) = kubesim(&["kubectl", &other, "--for", "1s", "--", "patch", "cm", "extra", "--patch-file", &patch, "-o", "jsonpath={.data.k}"]);
    assert_eq!((out.as_str(), code), ("w", 0), "{err}");
    // Directories: `--from-file=DIR` and `-k DIR` / `kustomize DIR` read the files in them.
    let kdir = dir().join("kz");
    std::fs::create_dir_all(&kdir).unwrap();
    std::fs::write(
        kdir.join("kustomization.yaml"),
        "configMapGenerator:\n- name: special-config-2\n  literals:\n  - special.how=very\n  - special.type=charm\n",
    )
    .unwrap();
    std::fs::write(kdir.join("a.txt"), "x").unwrap();
    let kdir = kdir.to_string_lossy().to_string();
    let (out, err, code) = kubesim(&["kubectl", "--for", "1s", "--", "apply", "-k", &kdir]);
    assert_eq!((out.as_str(), code), ("configmap/special-config-2-2b86tk8fhm created\n", 0), "{err}");
    let (out, err, code) = kubesim(&["kubectl", "--for", "1s", "--", "kustomize", &kdir]);
    assert!(code == 0 && out.starts_with("apiVersion: v1\ndata:\n  special.how: very\n"), "{out}{err}");
    let (out, err, code) =
        kubesim(&["kubectl", "--for", "1s", "--", "create", "configmap", "d", &format!("--from-file={kdir}/"), "-o", "jsonpath={.data.a\\.txt}"]);
    assert_eq!((out.as_str(), code), ("x", 0), "{err}");
    let (_, err, code) = kubesim(&["kubectl", "--for", "1s", "--", "apply", "-f", "/nonexistent/x.yaml"]);
    assert_eq!(code, 1);
    assert!(err.contains("\"/nonexistent/x.yaml\" cannot be read"), "{err}");
}

#[test]
fn kubectl_reports_invalid_documents_and_exits_one() {
    let cj = write(
        "cj.yaml",
        "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: hello\nspec:\n  schedule: '*/1 * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: hello, image: busybox}]\n          restartPolicy: OnFailure\n",
    );
    let (out, err, code) = kubesim(&["kubectl", &cj, "--for", "5s", "--", "get", "cronjobs"]);
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert!(err.contains("no matches for kind \"CronJob\" in version \"batch/v1beta1\""), "{err}");
    // The same document through `kubesim run`.
    let (_, run_err, run_code) = kubesim(&["run", &cj, "--for", "5s"]);
    assert_eq!(run_code, 1);
    let first = |e: &str| e.lines().next().unwrap_or("").to_string();
    assert_eq!(first(&err), first(&run_err));
}

#[test]
fn run_keeps_stdout_for_the_list_and_splits_at_commands_like_a_shell() {
    let dep = write("dep2.yaml", DEPLOYMENT);
    let (out, err, code) = kubesim(&[
        "run",
        &dep,
        "--for",
        "20s",
        "--at",
        "10s",
        r#"kubectl annotate deploy web note="two words" 'quoted=it'"'"'s'"#,
        "--at",
        "12s",
        "kubectl get deploy web -o jsonpath='{.metadata.annotations.note}|{.metadata.annotations.quoted}'",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let list: serde_json::Value = serde_json::from_str(&out).expect("stdout is only the List");
    assert_eq!(list["kind"], "List");
    assert!(err.contains("$ kubectl get deploy web"), "{err}");
    assert!(err.contains("two words|it's"), "{err}");
}

// Docs: tutorials/stateful-application/zookeeper ("Surviving maintenance"):
// `kubectl drain $(kubectl get pod zk-0 --template {{.spec.nodeName}}) --ignore-daemonsets --force --delete-emptydir-data`.
#[test]
fn at_commands_run_command_substitutions() {
    let pod = write("zk.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: zk-0}\nspec:\n  containers: [{name: c, image: nginx}]\n");
    let (_, err, code) = kubesim(&[
        "run",
        &pod,
        "--for",
        "40s",
        "--at",
        "30s",
        "kubectl drain $(kubectl get pod zk-0 --template {{.spec.nodeName}}) --ignore-daemonsets --force --delete-emptydir-data",
    ]);
    assert_eq!(code, 0, "{err}");
    let node = err.lines().find_map(|l| l.strip_prefix("node/").and_then(|l| l.strip_suffix(" cordoned"))).unwrap_or_else(|| panic!("{err}"));
    assert!(err.contains(&format!("node/{node} drained")), "{err}");
    assert!(err.contains("evicting pod default/zk-0"), "{err}");
}

// The built-in external client: a request from the workstation to a node port, `hops` printing
// the path the packet log records (the node it entered, that node's rule, the endpoint).
#[test]
fn hops_shows_the_path_of_a_request_from_outside() {
    let app = write(
        "nodeport.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: nginx, image: nginx}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  type: NodePort\n  selector: {app: web}\n  ports: [{port: 80, nodePort: 30080}]\n",
    );
    let (_, err, code) = kubesim(&["run", &app, "--for", "40s", "--at", "30s", "hops curl -s -o /dev/null -w '%{http_code}\\n' http://172.18.0.2:30080/"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("$ hops curl -s -o /dev/null"), "{err}");
    assert!(err.contains("200\npacket 1: tcp workstation 172.18.0.1 -> 172.18.0.2:30080: ok ("), "{err}");
    assert!(err.contains("  1. workstation 172.18.0.1: opens a TCP connection to node node-1 (172.18.0.2:30080)\n"), "{err}");
    assert!(err.contains("  3. node-1's kube-proxy rules: Service rule default/web DNATs it to default/web-"), "{err}");
    assert!(err.contains(":80) on node-") && err.contains(": accepts and answers\n"), "{err}");
}
