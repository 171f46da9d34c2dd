#![cfg(not(target_arch = "wasm32"))]
//! Fuzzing the YAML/JSON apply path on the stable toolchain: a seeded generator mutates real
//! manifests (the documentation's examples, the malformed-input corpus) and builds random
//! objects of every registered kind, then runs each input through `kubesim_api::decode`
//! (documents, objects, field paths) and the one loader (`loader::apply` into a world that then
//! runs for a virtual second, so the controllers meet what was admitted). Properties: no
//! panic, the world's invariant checkers record nothing, bounded output, bounded memory (peak
//! RSS reported).
//!
//! A few hundred executions by default (seconds); `KUBESIM_FUZZ_ITERS=N` runs N,
//! `KUBESIM_FUZZ_SEED=S` starts elsewhere. The executions are reported on stderr.

use kubesim_sim::scenario::InputFile;

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::{iterations, peak_rss_mib, report, seed, Rng};

fn corpus() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("crates/kubectl/docs-examples"), root.join("crates/kubectl/tests/malformed"), root.join("examples")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json") {
                files.push(std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    assert!(files.len() > 50, "the corpus is there: {}", files.len());
    files
}

const SCALARS: &[&str] = &[
    "",
    "null",
    "~",
    "true",
    "no",
    "0",
    "-1",
    "-5",
    "2147483648",
    "99999999999999999999",
    "1e309",
    "-0",
    "0x1f",
    "0o17",
    ".inf",
    ".nan",
    "'quoted'",
    "\"esc\\u0000\"",
    "1Ki",
    "-1Gi",
    "100m",
    "0.0001m",
    "1e3",
    "999999999999Ei",
    "NaN",
    "&anchor x",
    "*anchor",
    "!!binary aGk=",
    "!!str",
    "[]",
    "{}",
    "[[[[[[]]]]]]",
    "{a: {b: {c: {}}}}",
    "|\n  block",
    ">-\n  folded",
    "\u{1F600}",
    "ünïcode",
    "a\tb",
    "%",
    "@",
    "`",
    "- x",
    "? k",
    ": v",
    "x:y",
    "-",
];

const FIELDS: &[&str] = &[
    "replicas",
    "selector",
    "matchLabels",
    "matchExpressions",
    "template",
    "metadata",
    "labels",
    "annotations",
    "spec",
    "containers",
    "initContainers",
    "name",
    "image",
    "ports",
    "containerPort",
    "resources",
    "requests",
    "limits",
    "cpu",
    "memory",
    "command",
    "args",
    "env",
    "value",
    "valueFrom",
    "volumes",
    "volumeMounts",
    "persistentVolumeClaim",
    "claimName",
    "storageClassName",
    "accessModes",
    "capacity",
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "taints",
    "key",
    "operator",
    "effect",
    "strategy",
    "rollingUpdate",
    "maxSurge",
    "maxUnavailable",
    "schedule",
    "jobTemplate",
    "completions",
    "parallelism",
    "backoffLimit",
    "minAvailable",
    "scaleTargetRef",
    "minReplicas",
    "maxReplicas",
    "metrics",
    "type",
    "ports",
    "port",
    "targetPort",
    "protocol",
    "clusterIP",
    "podSelector",
    "ingress",
    "egress",
    "from",
    "to",
    "ipBlock",
    "cidr",
    "rules",
    "http",
    "paths",
    "backend",
    "service",
    "data",
    "stringData",
    "finalizers",
    "ownerReferences",
    "uid",
    "generateName",
    "namespace",
    "deletionTimestamp",
    "status",
    "phase",
    "priority",
    "priorityClassName",
    "serviceName",
    "volumeClaimTemplates",
    "podManagementPolicy",
    "ordinals",
    "start",
    "readinessProbe",
    "httpGet",
    "path",
    "exec",
    "periodSeconds",
    "hostNetwork",
    "hostPort",
    "securityContext",
    "runAsUser",
    "restartPolicy",
    "terminationGracePeriodSeconds",
];

fn random_value(rng: &mut Rng, depth: usize) -> serde_json::Value {
    use serde_json::Value;
    match rng.below(if depth == 0 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 => Value::from(*rng.pick(&[0i64, 1, -1, 3, 80, 65536, i64::MAX, i64::MIN, 2147483648])),
        3 => Value::from(*rng.pick(&[0.5f64, -1.5, 1e300])),
        4 => Value::from(rng.pick(SCALARS).to_string()),
        5 | 6 => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.below(5) {
                map.insert(rng.pick(FIELDS).to_string(), random_value(rng, depth - 1));
            }
            Value::Object(map)
        }
        _ => Value::Array((0..rng.below(4)).map(|_| random_value(rng, depth - 1)).collect()),
    }
}

/// A random object of a registered kind, as JSON or YAML.
fn random_object(rng: &mut Rng) -> String {
    let kinds: Vec<_> = kubesim_api::object::all_kinds().collect();
    let kind = rng.pick(&kinds);
    let names = ["a", "web", "x-1", "", "UPPER", "a..b", "-x", "very-long-name-very-long-name-very-long-name-very-long-name-very-long-name"];
    let mut object = serde_json::json!({
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": rng.pick(&names), "labels": {"app": "web"}},
    });
    for key in ["spec", "data", "status", "rules", "subsets", "endpoints", "webhooks"] {
        if rng.below(3) == 0 {
            object[key] = random_value(rng, 4);
        }
    }
    if rng.below(2) == 0 {
        serde_json::to_string(&object).unwrap()
    } else {
        serde_yaml::to_string(&object).unwrap_or_default()
    }
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(2) * rng.below(4) {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = rng.below(lines.len());
        match rng.below(8) {
            0 => {
                // Replace the value after a key.
                if let Some(colon) = lines[i].find(": ") {
                    let head = lines[i][..colon + 2].to_string();
                    lines[i] = format!("{head}{}", rng.pick(SCALARS));
                }
            }
            1 => {
                let line = lines[i].clone();
                lines.insert(i, line);
            }
            2 => {
                lines.remove(i);
            }
            3 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            4 => {
                // Re-indent.
                let trimmed = lines[i].trim_start().to_string();
                lines[i] = format!("{}{trimmed}", " ".repeat(rng.below(9)));
            }
            5 => {
                // A byte from YAML's specials (or anything) somewhere in the line.
                let chars: Vec<char> = lines[i].chars().collect();
                let at = rng.below(chars.len() + 1);
                let c = *rng.pick(&[':', '{', '}', '[', ']', '-', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '\t', '\0', 'é', '\u{FEFF}']);
                lines[i] = chars[..at].iter().chain(std::iter::once(&c)).chain(chars[at..].iter()).collect();
            }
            6 => {
                let indent = " ".repeat(rng.below(6));
                lines.insert(i, format!("{indent}{}: {}", rng.pick(FIELDS), rng.pick(SCALARS)));
            }
            _ => {
                lines.insert(i, (*rng.pick(&["---", "...", "--- !!map", "%YAML 1.2", "# comment", "apiVersion: v1", "kind: Pod", "-", "? "])).to_string());
            }
        }
    }
    lines.join("\n")
}

#[test]
fn the_apply_path_survives_mutated_and_generated_manifests() {
    let corpus = corpus();
    let iterations = iterations(300);
    let mut rng = Rng(seed());
    let mut base = kubesim_sim::World::new(1);
    base.add_default_nodes();
    base.run_until(2_000);
    let mut outcomes = std::collections::BTreeSet::new();
    let (mut objects, mut errors) = (0usize, 0usize);
    for i in 0..iterations {
        let text = match rng.below(6) {
            0 => random_object(&mut rng),
            1 => {
                let seed = rng_pick_string(&mut rng, &corpus).to_string();
                format!("{}\n---\n{}", mutate(&mut rng, &seed), random_object(&mut rng))
            }
            // Alias bombs and deep nesting: decoding must stay bounded.
            2 if rng.below(10) == 0 => {
                let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
                for level in 0..12 {
                    bomb.push_str(&format!(
                        "{}: &{} [*{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}]\n",
                        (b'b' + level) as char,
                        (b'b' + level) as char,
                        (b'a' + level) as char,
                        (b'a' + level) as char,
                        (b'a' + level) as char,
                        (b'a' + level) as char,
                        (b'a' + level) as char,
                        (b'a' + level) as char,
                        (b'a' + level) as char,
                        (b'a' + level) as char
                    ));
                }
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: bomb}}\n{bomb}{}", "[".repeat(rng.below(5000)))
            }
            _ => {
                let seed = rng_pick_string(&mut rng, &corpus).to_string();
                mutate(&mut rng, &seed)
            }
        };
        let (docs, parse_errors) = kubesim_api::decode::parse_documents("fuzz.yaml", &text);
        errors += parse_errors.len();
        for doc in &docs {
            match kubesim_api::decode::decode_document("fuzz.yaml", doc) {
                Ok(decoded) => objects += decoded.len(),
                Err(e) => {
                    errors += 1;
                    outcomes.insert(format!("decode:{}", e.message.chars().take(40).collect::<String>()));
                }
            }
        }
        let mut world = base.clone();
        let outcome = kubesim_sim::loader::apply(&mut world, &InputFile { name: "fuzz.yaml".into(), text: text.clone() });
        for e in &outcome.errors {
            outcomes.insert(format!("apply:{}", e.message.split(':').next().unwrap_or("").chars().take(40).collect::<String>()));
        }
        let t = world.now();
        world.run_until(t + 1_000);
        let violations = world.runtime().violations();
        assert!(violations.is_empty(), "case {i} (seed {}): {violations:?}\n{text}", seed());
    }
    let rss = peak_rss_mib();
    report(&format!(
        "fuzz yaml-apply: {iterations} executions (seed {}), {objects} objects decoded, {errors} documents rejected, {} distinct outcomes, peak RSS {rss} MiB",
        seed(),
        outcomes.len()
    ));
    assert!(rss < 3 * 1024, "bounded memory: {rss} MiB");
}

fn rng_pick_string<'a>(rng: &mut Rng, corpus: &'a [String]) -> &'a str {
    rng.pick(corpus).as_str()
}
