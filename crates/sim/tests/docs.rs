#![cfg(not(target_arch = "wasm32"))]
//! The docs suite: Kubernetes documentation pages (tasks and tutorials) encoded as scenario
//! files under `tests/docs/pages/`, followed step by step in kubesim, each command's output
//! compared with the output the page shows. See `tests/docs/README.md` for the page format and
//! the normalisation rules.
//!
//! - Every page marked `status: pass` must pass (regressions fail this test).
//! - Every page marked `status: fail` must still diverge somewhere; a page that now passes makes
//!   this test fail with "now passes, promote it".
//! - `KUBESIM_DOCS_PAGE=<slug>` runs one page and prints every step verbosely.
//! - `KUBESIM_DOCS_WRITE_STATUS=1` rewrites `tests/docs/STATUS.md` from the results.
//!
//! The example manifests the pages reference as `https://k8s.io/examples/<path>` are read from
//! the shared corpus (`/work/shared/corpus/k8s-docs-examples`, found relative to this crate, or
//! `KUBESIM_DOCS_CORPUS`); without it the suite prints a skip message and passes.

mod docs_harness;

use docs_harness::*;

#[test]
fn docs_pages() {
    let Some(corpus) = corpus_dir() else {
        println!("docs suite skipped: the example corpus (shared/corpus/k8s-docs-examples) is not there; set KUBESIM_DOCS_CORPUS");
        return;
    };
    let only = std::env::var("KUBESIM_DOCS_PAGE").ok().filter(|s| !s.is_empty());
    let pages = load_pages();
    if let Some(only) = &only {
        assert!(pages.iter().any(|(s, _)| s == only), "no page {only:?} in tests/docs/pages");
    }
    let mut results = Vec::new();
    for (slug, page) in &pages {
        if only.as_ref().is_some_and(|o| o != slug) {
            continue;
        }
        let result = run_page(slug, page, &corpus);
        if only.is_some() {
            print_verbose(&result);
        }
        results.push(result);
    }

    // The summary.
    let width = results.iter().map(|r| r.slug.len()).max().unwrap_or(4).max(4);
    println!("\n{:width$}  {:6}  {:>4} {:>4} {:>4}  first divergence", "page", "result", "ok", "fail", "skip");
    for r in &results {
        let (p, f, s) = r.counts();
        let first =
            r.first_failure().map(|s| format!("`{}` at {}: {}", s.run, s.at, s.divergence.clone().unwrap_or_default())).or(r.error.clone()).unwrap_or_default();
        println!("{:width$}  {:6}  {p:>4} {f:>4} {s:>4}  {first}", r.slug, if r.passed() { "pass" } else { "FAIL" });
    }
    let passing = results.iter().filter(|r| r.passed()).count();
    let steps: usize = results.iter().map(|r| r.steps.len()).sum();
    let expectations: usize =
        pages.iter().filter(|(s, _)| only.as_ref().is_none_or(|o| o == s)).map(|(_, p)| p.steps.iter().filter(|s| s.expect.is_some()).count()).sum();
    println!("\n{passing} of {} pages pass ({steps} steps, {expectations} with an expected output)", results.len());

    if only.is_none() && std::env::var("KUBESIM_DOCS_WRITE_STATUS").is_ok_and(|v| v == "1") {
        std::fs::write(repo_root().join("tests/docs/STATUS.md"), status_markdown(&results)).unwrap();
        println!("wrote tests/docs/STATUS.md");
    }

    // The assertions.
    let mut problems = Vec::new();
    for (r, (_, page)) in results.iter().zip(pages.iter().filter(|(s, _)| only.as_ref().is_none_or(|o| o == s))) {
        if let Some(e) = &r.error {
            problems.push(format!("{}: page error: {e}", r.slug));
            continue;
        }
        match page.status.as_str() {
            "pass" if !r.passed() => {
                let s = r.first_failure().unwrap();
                problems.push(format!("{}: marked pass but `{}` at {} diverges: {}", r.slug, s.run, s.at, s.divergence.clone().unwrap_or_default()));
            }
            "fail" if r.passed() => problems.push(format!("{}: marked fail but now passes, promote it (status: pass)", r.slug)),
            "fail" if page.reason.as_deref().is_none_or(|s| s.trim().is_empty()) => problems.push(format!("{}: marked fail without a reason", r.slug)),
            "pass" | "fail" => {}
            other => problems.push(format!("{}: status must be pass or fail, not {other:?}", r.slug)),
        }
    }
    assert!(problems.is_empty(), "docs suite:\n{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// The normaliser's own tests
// ---------------------------------------------------------------------------------------------

#[test]
fn normalisation_is_tolerant_only_of_what_is_random() {
    let nodes = vec!["node-1".to_string(), "minikube".to_string()];
    let n = |s: &str| normalise(s, &nodes);
    assert_eq!(n("nginx-deployment-66b6c48dd5-4jw2p"), "nginx-deployment-<hash>-<sfx>");
    assert_eq!(n("nginx-deployment-1564180365-nacti"), "nginx-deployment-<hash>-<sfx>");
    assert_eq!(n("nginx-deployment-75675f5897"), "nginx-deployment-<hash>");
    assert_eq!(n("pi-9bkg9 hello-27985213-xc2mw"), "pi-<sfx> hello-<hash>-<sfx>");
    assert_eq!(n("nginx-deployment web-0 mysql redis-master memory-demo-2"), "nginx-deployment web-0 mysql redis-master memory-demo-2");
    assert_eq!(n("Pod IP 10.244.1.5 on minikube, node-1"), "Pod IP <ip> on <node>, <node>");
    assert_eq!(n("nginx   1/1  Running  1 (5s ago)   2m10s"), "nginx   1/1  Running  1   <dur>");
    assert_eq!(n("delay=5s timeout=1s"), "delay=5s timeout=1s");
    assert_eq!(n("NAME    READY   AGE\nweb-0   1/1     42m\n"), "NAME    READY   AGE\nweb-0   1/1     <dur>\n");
    assert_eq!(n("NAME   AGE   LABELS\nweb    10m   app=web\n"), "NAME   AGE   LABELS\nweb    <dur>   app=web\n");
    assert_eq!(n("  Warning  BackOff  3m (x5 over 9m)  kubelet  x"), "  Warning  BackOff  3m (x5 over <dur>)  kubelet  x");
    assert_eq!(
        n("  Type    Reason   Age   From     Message\n  ----    ------   ----  ----     -------\n  Normal  Pulled   3m    kubelet  x\n"),
        "  Type    Reason   Age   From     Message\n  ----    ------   ----  ----     -------\n  Normal  Pulled   <dur>    kubelet  x\n"
    );
    assert_eq!(n("    cpu: 500m\nContainer  cpu  100m  800m"), "    cpu: 500m\nContainer  cpu  100m  800m");
    assert_eq!(n("Started:  Mon, 01 Jan 2026 10:56:25 +0000"), "Started:  <time>");
    assert_eq!(n("creationTimestamp: \"2026-01-01T10:56:25Z\""), "creationTimestamp: <time>");
    assert_eq!(n("creationTimestamp: 2016-02-18T18:52:05Z"), "creationTimestamp: <time>");
    assert_eq!(n("uid: 3c9a2b4e-1f2d-4c5b-9a8e-7d6c5b4a3f21"), "uid: <uid>");
    assert_eq!(n("containerd://0123456789abcdef0123"), "containerd://<id>");
    assert_eq!(n("resourceVersion: \"12345\""), "resourceVersion: <rv>");
    assert_eq!(n("node-10"), "node-10");
    assert_eq!(n("app=nginx,pod-template-hash=75675f5897"), "app=nginx,pod-template-hash=<hash>");
    assert_eq!(lines("a   b\n\n  c d  \n"), vec!["a b", "c d"]);
    assert_eq!(parse_duration("1m30s").unwrap(), 90_000);
    assert_eq!(parse_duration("500ms").unwrap(), 500);
    assert_eq!(file_args("kubectl apply -f a.yaml,b.yaml --from-file=k=c.txt --from-env-file=d.env"), vec!["a.yaml", "b.yaml", "c.txt", "d.env"]);
}
