//! Fuzzing the kubectl command layer on the stable toolchain: a seeded generator builds command
//! lines (verbs, resources, flags, quoting, values) and JSONPath and go-template expressions
//! (from their grammars, then mutated), and runs them against the scenario cluster, and the two
//! template engines directly against random JSON. Properties: no panic, no stack overflow
//! (deeply nested or recursive templates), a failing command says why (non-zero exit ⇒ a
//! message on stderr), bounded output, bounded memory (peak RSS reported).
//!
//! A few thousand executions by default (seconds); `KUBESIM_FUZZ_ITERS=N` runs N of each,
//! `KUBESIM_FUZZ_SEED=S` starts elsewhere. The executions are reported on stderr.

mod common;
mod scenario;

use kubesim_kubectl::gotemplate::{print, MissingKey};
use kubesim_kubectl::jsonpath;
use std::io::Write;

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::{iterations, peak_rss_mib, report, seed, Rng};

/// With `KUBESIM_FUZZ_LOG=FILE`, each case is written there before it runs (a crash that
/// aborts the process — a stack overflow — leaves its input as the file's last line).
fn log_case(case: &str) {
    if let Ok(path) = std::env::var("KUBESIM_FUZZ_LOG") {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("log file");
        let _ = writeln!(file, "{}", case.replace('\n', "\\n"));
    }
}

/// Drops, duplicates or inserts a few characters (the template grammars' own punctuation).
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..rng.below(3) {
        let at = rng.below(chars.len() + 1);
        match rng.below(3) {
            0 if at < chars.len() => {
                chars.remove(at);
            }
            1 if at < chars.len() => {
                let c = chars[at];
                chars.insert(at, c);
            }
            _ => {
                chars.insert(at, *rng.pick(&['{', '}', '[', ']', '(', ')', '.', '$', '|', '"', '\'', '@', '?', '*', ':', '-', ',', '\\', ' ', '=', '!', '\n']))
            }
        }
    }
    chars.into_iter().collect()
}

fn jsonpath_expr(rng: &mut Rng, depth: usize) -> String {
    let step = |rng: &mut Rng| -> String {
        rng.pick(&[
            ".items",
            "[*]",
            ".metadata",
            ".name",
            ".labels",
            ".spec",
            ".containers[0]",
            "[-1:]",
            "[0:2:-1]",
            "['a','b']",
            "..name",
            "[?(@.kind==\"Pod\")]",
            "[?(@.x>1)]",
            "[?(@.status.phase!='Running')]",
            "[?(!@.spec)]",
            ".*",
            "[1]",
            "[99]",
            "['metadata.name']",
            ".status.conditions[?(@.type=='Ready')].status",
            "[2:1]",
            "[0:0]",
            "[-99]",
            ".a.b.c.d",
            "[\"\\\"\"]",
        ])
        .to_string()
    };
    let mut expr = String::new();
    for _ in 0..1 + rng.below(4) {
        match rng.below(6) {
            0 if depth > 0 => expr.push_str(&format!("{{range {}}}{}{{end}}", step(rng), jsonpath_expr(rng, depth - 1))),
            1 => expr.push_str(&format!("{{{}}}", rng.pick(&["\"\\n\"", "\"\\t\"", "\"x\"", "@", "$", "''", "\"\\u0041\""]))),
            2 => expr.push_str(rng.pick::<&str>(&["text ", " ", "}", "{", "{{", "\\"])),
            _ => {
                let mut path = String::new();
                for _ in 0..1 + rng.below(4) {
                    path.push_str(&step(rng));
                }
                expr.push_str(&format!("{{{path}}}"));
            }
        }
    }
    expr
}

fn gotemplate_expr(rng: &mut Rng, depth: usize) -> String {
    let value = |rng: &mut Rng| -> String {
        rng.pick(&[
            ".",
            ".items",
            ".metadata.name",
            ".metadata.labels",
            ".spec.replicas",
            "$",
            "$x",
            "1",
            "-1",
            "3.5",
            "\"s\"",
            "`raw`",
            "true",
            "nil",
            ".missing.deeper",
            "(index .metadata.labels \"app\")",
            "(len .items)",
            "(printf \"%d\" 1)",
            "(eq 1 1)",
            "(not .x)",
            "(and .a .b)",
            "(or .a 1)",
        ])
        .to_string()
    };
    let mut out = String::new();
    for _ in 0..1 + rng.below(4) {
        let v = value(rng);
        match rng.below(9) {
            0 if depth > 0 => out.push_str(&format!("{{{{range {v}}}}}{}{{{{end}}}}", gotemplate_expr(rng, depth - 1))),
            1 if depth > 0 => {
                out.push_str(&format!("{{{{if {v}}}}}{}{{{{else}}}}{}{{{{end}}}}", gotemplate_expr(rng, depth - 1), gotemplate_expr(rng, depth - 1)))
            }
            2 if depth > 0 => out.push_str(&format!("{{{{with {v}}}}}{}{{{{end}}}}", gotemplate_expr(rng, depth - 1))),
            3 => out.push_str(&format!("{{{{$x := {v}}}}}{{{{$x}}}}")),
            4 => out.push_str(&format!(
                "{{{{{} {v} {}}}}}",
                rng.pick(&[
                    "printf \"%s %v %q %x %5.2f %-3d %%\"",
                    "index",
                    "len",
                    "eq",
                    "ne",
                    "lt",
                    "le",
                    "gt",
                    "ge",
                    "and",
                    "or",
                    "not",
                    "print",
                    "println",
                    "html",
                    "js",
                    "urlquery",
                    "slice",
                    "base64decode",
                    "call"
                ]),
                value(rng)
            )),
            5 => out.push_str(&format!("{{{{{v} | printf \"%v\" | len}}}}")),
            6 if depth > 0 => out.push_str(&format!("{{{{define \"t\"}}}}{}{{{{end}}}}{{{{template \"t\" {v}}}}}", gotemplate_expr(rng, depth - 1))),
            7 => out.push_str(rng.pick::<&str>(&[
                "{{/* c */}}",
                "{{- . -}}",
                "{{",
                "}}",
                "{{end}}",
                "{{break}}",
                "{{continue}}",
                "text",
                "{{block \"b\" .}}x{{end}}",
            ])),
            _ => out.push_str(&format!("{{{{{v}}}}}")),
        }
    }
    out
}

fn random_json(rng: &mut Rng, depth: usize) -> serde_json::Value {
    use serde_json::Value;
    match rng.below(if depth == 0 { 4 } else { 6 }) {
        0 => Value::Null,
        1 => Value::from(*rng.pick(&[0i64, 1, -1, i64::MAX])),
        2 => Value::from(*rng.pick(&["", "Pod", "Running", "a\"b", "\u{1F600}"])),
        3 => Value::Bool(rng.below(2) == 0),
        4 => Value::Array((0..rng.below(4)).map(|_| random_json(rng, depth - 1)).collect()),
        _ => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.below(5) {
                map.insert(
                    rng.pick(&["items", "metadata", "name", "labels", "kind", "spec", "status", "x", "a", "b", "replicas", "containers"]).to_string(),
                    random_json(rng, depth - 1),
                );
            }
            Value::Object(map)
        }
    }
}

// Recursive templates: a define that calls itself must end in an error, as Go's exec depth
// limit makes it, not a stack overflow.
#[test]
fn recursive_and_deeply_nested_templates_are_bounded() {
    let data = serde_json::json!({"items": [1, 2, 3]});
    let recursive = print("{{define \"t\"}}{{template \"t\" .}}{{end}}{{template \"t\" .}}", &data, MissingKey::Default);
    assert!(recursive.is_err(), "{recursive:?}");
    let deep = format!("{}{}", "{{with .}}".repeat(5_000), "{{end}}".repeat(5_000));
    let _ = print(&deep, &data, MissingKey::Default);
    let deep = format!("{}.items{}", "{range ".repeat(5_000), "}{end}".repeat(5_000));
    let _ = jsonpath::evaluate(&deep, &data);
    let parens = format!("{{{{{}1{}}}}}", "(".repeat(5_000), ")".repeat(5_000));
    let _ = print(&parens, &data, MissingKey::Default);
}

#[test]
fn templates_survive_generated_expressions() {
    let iterations = iterations(3_000);
    let mut rng = Rng(seed());
    let (mut ok, mut failed) = (0usize, 0usize);
    let mut outcomes = std::collections::BTreeSet::new();
    for _ in 0..iterations {
        let data = random_json(&mut rng, 5);
        let jp = jsonpath_expr(&mut rng, 3);
        let jp = if rng.below(2) == 0 { mutate(&mut rng, &jp) } else { jp };
        log_case(&format!("jsonpath {jp:?} on {data}"));
        let jp_result =
            std::panic::catch_unwind(|| jsonpath::evaluate(&jp, &data)).unwrap_or_else(|_| panic!("jsonpath panicked (seed {}): {jp:?} on {data}", seed()));
        match jp_result {
            Ok(out) => {
                ok += 1;
                assert!(out.len() < 16 << 20);
            }
            Err(e) => {
                failed += 1;
                outcomes.insert(format!("jsonpath:{}", e.chars().filter(|c| c.is_alphabetic() || *c == ' ').take(30).collect::<String>()));
            }
        }
        let gt = gotemplate_expr(&mut rng, 3);
        let gt = if rng.below(2) == 0 { mutate(&mut rng, &gt) } else { gt };
        let missing = if rng.below(2) == 0 { MissingKey::Default } else { MissingKey::Error };
        log_case(&format!("go-template {gt:?} on {data}"));
        let gt_result =
            std::panic::catch_unwind(|| print(&gt, &data, missing)).unwrap_or_else(|_| panic!("go-template panicked (seed {}): {gt:?} on {data}", seed()));
        match gt_result {
            Ok(out) => {
                ok += 1;
                assert!(out.len() < 16 << 20);
            }
            Err((_, e)) => {
                failed += 1;
                outcomes.insert(format!("gotemplate:{}", e.chars().filter(|c| c.is_alphabetic() || *c == ' ').take(30).collect::<String>()));
            }
        }
    }
    report(&format!(
        "fuzz templates: {} executions (seed {}): {ok} rendered, {failed} refused, {} distinct errors, peak RSS {} MiB",
        2 * iterations,
        seed(),
        outcomes.len(),
        peak_rss_mib()
    ));
}

const VERBS: &[&str] = &[
    "get",
    "describe",
    "delete",
    "scale",
    "set image",
    "set env",
    "set resources",
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
    "run",
    "create deployment",
    "create ns",
    "create configmap",
    "create secret generic",
    "create service clusterip",
    "create job",
    "expose",
    "logs",
    "exec",
    "top pods",
    "top nodes",
    "wait",
    "events",
    "api-resources",
    "api-versions",
    "version",
    "cluster-info",
    "apply -f",
    "replace -f",
    "create -f",
    "auth can-i",
    "config view",
    "explain",
    "diff -f",
    "autoscale",
    "debug",
    "edit",
    "kustomize",
    "get --raw",
    "certificate approve",
    "attach",
    "port-forward",
    "cp",
];
const OBJECTS: &[&str] = &[
    "pods",
    "pod/web-7d4b9c7f5-abcde",
    "deploy/web",
    "deployment web",
    "nodes",
    "node/node-1",
    "svc",
    "svc/web",
    "rs",
    "ns",
    "events",
    "pdb",
    "all",
    "cm",
    "secrets",
    "jobs",
    "cronjobs",
    "sts",
    "ds",
    "hpa",
    "pv",
    "pvc",
    "ing",
    "netpol",
    "crd",
    "deployments.v1.apps",
    "po,svc",
    "",
    "x/y/z",
    "-",
    "web",
];
const FLAGS: &[&str] = &[
    "-A",
    "-n default",
    "-n kube-system",
    "-n ''",
    "-l app=web",
    "-l 'tier in (a,b)'",
    "-l '!x'",
    "--field-selector status.phase=Running",
    "--field-selector metadata.name!=x",
    "-o wide",
    "-o yaml",
    "-o json",
    "-o name",
    "-o custom-columns=N:.metadata.name,S:.status.phase",
    "--sort-by=.metadata.name",
    "--sort-by='{.status.phase}'",
    "-L app",
    "--show-labels",
    "--no-headers",
    "-w",
    "--watch-only",
    "--replicas=3",
    "--replicas=-1",
    "--all",
    "--overwrite",
    "--dry-run=client",
    "--dry-run=server",
    "--grace-period=0",
    "--force",
    "--cascade=orphan",
    "--to-revision=1",
    "--timeout=0s",
    "--for=condition=Ready",
    "--for=delete",
    "--type merge -p '{\"spec\":{\"replicas\":2}}'",
    "--type json -p '[{\"op\":\"remove\",\"path\":\"/spec\"}]'",
    "-p '{\"metadata\":{\"labels\":null}}'",
    "--image=nginx",
    "--port=80",
    "--target-port=8080",
    "--restart=Never",
    "-c web",
    "--tail=1",
    "--previous",
    "--since=1s",
    "-- ls /",
    "-- sh -c 'echo $HOME'",
    "x=y",
    "x-",
    "node-role=worker:NoSchedule",
    "--ignore-daemonsets",
    "--from-literal=a=b",
    "--subresource=status",
    "--chunk-size=1",
    "--recursive",
    "-k .",
    "--selector=",
    "--min=1 --max=2",
    "--cpu-percent=50",
    "--record",
];

fn command_line(rng: &mut Rng) -> String {
    let mut line = format!("{} {}", rng.pick(VERBS), rng.pick(OBJECTS));
    for _ in 0..rng.below(4) {
        line.push(' ');
        line.push_str(rng.pick::<&str>(FLAGS));
    }
    match rng.below(6) {
        0 => line.push_str(&format!(" -o 'jsonpath={}'", jsonpath_expr(rng, 2).replace('\'', ""))),
        1 => line.push_str(&format!(" -o 'go-template={}'", gotemplate_expr(rng, 2).replace('\'', ""))),
        2 => {
            let expr = jsonpath_expr(rng, 1);
            line.push_str(&format!(" -o jsonpath={}", mutate(rng, &expr)));
        }
        _ => {}
    }
    if rng.below(5) == 0 {
        line = mutate(rng, &line);
    }
    line
}

#[test]
fn command_lines_survive_generated_input() {
    let iterations = iterations(3_000);
    let mut rng = Rng(seed());
    let mut f = scenario::cluster();
    let (mut succeeded, mut refused) = (0usize, 0usize);
    let mut problems = Vec::new();
    for i in 0..iterations {
        let line = command_line(&mut rng);
        log_case(&format!("kubectl {line}"));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.kubectl(&line)));
        match outcome {
            Err(_) => problems.push(format!("PANIC (case {i}): kubectl {line}")),
            Ok(o) => {
                if o.exit_code != 0 && o.stderr.is_empty() {
                    problems.push(format!("exit {} without a message: kubectl {line}", o.exit_code));
                }
                assert!(o.stdout.len() + o.stderr.len() < 16 << 20, "bounded output: kubectl {line}");
                if o.exit_code == 0 {
                    succeeded += 1;
                } else {
                    refused += 1;
                }
            }
        }
        // Rebuild the cluster now and then so destructive commands do not hide later cases.
        if f.api.store().count(("", "pods")) < 2 || i % 200 == 199 {
            f = scenario::cluster();
        }
    }
    report(&format!(
        "fuzz kubectl-commands: {iterations} executions (seed {}): {succeeded} succeeded, {refused} refused with a message, peak RSS {} MiB",
        seed(),
        peak_rss_mib()
    ));
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
