//! The malformed-input corpus (tests/malformed/*.yaml): every file is applied to a fresh
//! cluster; each must fail with its expected message substring (`# expect:`), apply exactly the
//! valid documents it holds (`# applied:`), leave nothing half-applied and never panic.
//! Messages follow kubectl/apiserver wording: decode errors from
//! staging/src/k8s.io/apimachinery/pkg/util/yaml, validation from
//! pkg/apis/core/validation and pkg/apis/apps/validation.

mod common;

use common::Fixture;
use std::path::Path;

fn run_case(name: &str, text: &str) -> Result<(), String> {
    let header = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(&format!("# {key}: "))).map(str::to_string).ok_or_else(|| format!("{name}: missing '# {key}:' header"))
    };
    let expect = header("expect")?;
    let applied: usize = header("applied")?.parse().map_err(|_| format!("{name}: bad applied count"))?;
    let mut f = Fixture::new();
    let before = f.snapshot();
    let results = f.apply(name, text, "default");
    let after = f.snapshot();
    if expect == "EMPTY" {
        if !results.is_empty() {
            return Err(format!("{name}: expected no documents, got {results:?}"));
        }
        if before != after {
            return Err(format!("{name}: store changed"));
        }
        return Ok(());
    }
    let errors: Vec<&String> = results.iter().filter_map(|r| r.outcome.as_ref().err()).collect();
    if !errors.iter().any(|e| e.contains(&expect)) {
        return Err(format!("{name}: no error contains {expect:?}; errors: {errors:#?}"));
    }
    let ok = results.iter().filter(|r| r.outcome.is_ok()).count();
    if ok != applied {
        return Err(format!("{name}: {ok} documents applied, expected {applied}: {results:#?}"));
    }
    if after.len() != before.len() + applied {
        return Err(format!("{name}: store grew by {} objects, expected {applied} (half-applied?)", after.len() as i64 - before.len() as i64));
    }
    for r in results.iter().filter(|r| r.outcome.is_err()) {
        if r.outcome.as_ref().unwrap_err().is_empty() {
            return Err(format!("{name}: empty error message"));
        }
        if r.document == 0 || r.file != name {
            return Err(format!("{name}: error not attributed to a document of the file: {r:?}"));
        }
    }
    Ok(())
}

#[test]
fn malformed_corpus_fails_precisely_and_applies_nothing_invalid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    assert!(entries.len() >= 100, "the malformed corpus has {} files", entries.len());
    let mut failures = Vec::new();
    for path in &entries {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(path).unwrap();
        let text = String::from_utf8_lossy(&bytes).to_string();
        let outcome = std::panic::catch_unwind(|| run_case(&name, &text));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(e),
            Err(_) => failures.push(format!("{name}: PANIC")),
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), entries.len(), failures.join("\n\n"));
}

#[test]
fn huge_inputs_are_rejected_before_parsing() {
    let mut f = Fixture::new();
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n");
    while text.len() <= kubesim_api::decode::MAX_INPUT_BYTES {
        text.push_str("  k: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\n");
    }
    let before = f.snapshot();
    let results = f.apply("big.yaml", &text, "default");
    assert_eq!(results.len(), 1);
    assert!(results[0].outcome.as_ref().unwrap_err().contains("kubesim accepts at most"), "{:?}", results[0].outcome);
    assert_eq!(before, f.snapshot());
}

#[test]
fn deeply_nested_documents_fail_cleanly() {
    let mut f = Fixture::new();
    let depth = 50_000;
    let text = format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: deep}}\nx: {}{}\n", "[".repeat(depth), "]".repeat(depth));
    let results = f.apply("deep.yaml", &text, "default");
    assert!(results.iter().all(|r| r.outcome.is_err()), "{results:?}");
    assert!(results[0].outcome.as_ref().unwrap_err().contains("recursion limit"), "{:?}", results[0].outcome);
}

#[test]
fn many_documents_with_one_bad_apply_the_rest() {
    let mut f = Fixture::new();
    let mut text = String::new();
    for i in 0..300 {
        if i == 150 {
            text.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n---\n");
        } else {
            text.push_str(&format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}}}\ndata: {{i: \"{i}\"}}\n---\n"));
        }
    }
    let results = f.apply("many.yaml", &text, "default");
    assert_eq!(results.len(), 300);
    assert_eq!(results.iter().filter(|r| r.outcome.is_ok()).count(), 299);
    let bad = &results[150];
    assert_eq!(bad.document, 151);
    assert!(bad.outcome.as_ref().unwrap_err().contains("ConfigMap \"Bad_Name\" is invalid"), "{:?}", bad.outcome);
}

#[test]
fn invalid_updates_leave_the_stored_object_untouched() {
    let mut f = Fixture::new();
    let good = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n";
    assert!(f.apply("d.yaml", good, "default")[0].outcome.is_ok());
    let before = f.snapshot();
    let cases = [
        (good.replace("replicas: 2", "replicas: -4"), "spec.replicas: Invalid value: -4"),
        (good.replace("image: nginx", "image: ''"), "image: Required value"),
        (good.replace("{app: web}}\n  template", "{app: api}}\n  template").replace("labels: {app: web}", "labels: {app: api}"), "field is immutable"),
        (good.replace("labels: {app: web}", "labels: {app: other}"), "`selector` does not match template `labels`"),
        (good.replace("[{name: c, image: nginx}]", "[{name: c, image: nginx}, {name: c, image: redis}]"), "Duplicate value"),
    ];
    for (text, want) in cases {
        let r = f.apply("d.yaml", &text, "default");
        let err = r[0].outcome.as_ref().unwrap_err();
        assert!(err.contains(want), "{want}: {err}");
        assert!(err.starts_with("Error from server (Invalid): error when applying patch:"), "{err}");
        assert_eq!(before, f.snapshot(), "{want}: store changed");
    }
    // Pod spec updates other than images are forbidden.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: nginx}]}\n";
    assert!(f.apply("p.yaml", pod, "default")[0].outcome.is_ok());
    let r = f.apply("p.yaml", &pod.replace("image: nginx}", "image: nginx, command: [sh]}"), "default");
    assert!(r[0].outcome.as_ref().unwrap_err().contains("pod updates may not change fields other than"), "{r:?}");
    // ...but images may change.
    let r = f.apply("p.yaml", &pod.replace("image: nginx", "image: nginx:1.28"), "default");
    assert_eq!(r[0].line(), "pod/p configured");
}

#[test]
fn cli_reports_each_failure_and_exits_nonzero() {
    let mut f = Fixture::new();
    f.file("mix.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: Nope\nmetadata: {name: x}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: missing}\nspec: {containers: [{name: c, image: nginx}]}\n");
    let out = f.kubectl("kubectl apply -f mix.yaml");
    assert_eq!(out.exit_code, 1);
    assert_eq!(out.stdout, "configmap/ok created\n");
    assert!(out.stderr.contains("error: mix.yaml, document 2, line 5: resource mapping not found for name: \"x\" namespace: \"\" from \"mix.yaml\": no matches for kind \"Nope\" in version \"v1\"\nensure CRDs are installed first\n"), "{}", out.stderr);
    assert!(out.stderr.contains("Error from server (NotFound): error when creating \"mix.yaml\": namespaces \"missing\" not found\n"), "{}", out.stderr);
    let out = f.kubectl("apply -f nothere.yaml");
    assert_eq!((out.exit_code, out.stderr.as_str()), (1, "error: the path \"nothere.yaml\" does not exist\n"));
    let out = f.kubectl("apply -f -n");
    assert_eq!(out.exit_code, 1);
}
