//! Every document of every file in the Kubernetes documentation example corpus
//! (../shared/corpus/k8s-docs-examples, 90 files) is accepted and stored by apply.

mod common;

use common::Fixture;
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/k8s-docs-examples")
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("corpus directory is readable").map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

fn fixture() -> Fixture {
    let mut f = Fixture::new();
    // Namespaces the README says no file creates.
    for ns in ["mem-example", "cpu-example", "qos-example", "csr-signer-installer"] {
        f.create_namespace(ns);
    }
    f
}

/// Each file goes into a fresh cluster: several files reuse one object name (`nginx`,
/// `nginx-deployment`) with incompatible specs, which a real API server would also refuse to
/// merge into one object.
#[test]
fn every_corpus_document_is_applied_and_stored() {
    let dir = corpus_dir();
    assert!(dir.is_dir(), "corpus not found at {}", dir.display());
    let mut files = Vec::new();
    yaml_files(&dir, &mut files);
    assert_eq!(files.len(), 90, "the corpus has 90 manifests");
    let mut passed = 0;
    let mut failures = Vec::new();
    let mut documents = 0;
    for path in &files {
        let name = path.strip_prefix(&dir).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        let mut f = fixture();
        let results = f.apply(&name, &text, "default");
        documents += results.len();
        let mut errors: Vec<String> = results.iter().filter_map(|r| r.outcome.as_ref().err().cloned()).collect();
        // Every object reported must really be stored.
        for r in results.iter().filter(|r| r.outcome.is_ok()) {
            let kind = r.kind.as_deref().unwrap();
            let info = kubesim_api::object::all_kinds().find(|k| k.kind == kind).unwrap();
            if f.api.get(info, r.namespace.as_deref().unwrap(), r.name.as_deref().unwrap()).is_err() {
                errors.push(format!("{kind} {:?} reported applied but not stored", r.name));
            }
        }
        // Applying the same file again changes nothing.
        let before = f.snapshot();
        for r in f.apply(&name, &text, "default") {
            if r.outcome != Ok(kubesim_kubectl::ApplyAction::Unchanged) {
                errors.push(format!("second apply: {}", r.line()));
            }
        }
        if before != f.snapshot() {
            errors.push("second apply changed the store".into());
        }
        if errors.is_empty() && !results.is_empty() {
            passed += 1;
        } else {
            failures.push(format!("{name}: {errors:?}"));
        }
    }
    println!("corpus: {passed}/{} files, {documents} documents", files.len());
    assert!(failures.is_empty(), "{passed}/90 passed; failures:\n{}", failures.join("\n"));
    assert_eq!(documents, 109, "the corpus has 109 documents");
}
