//! `kubectl diff -f` (staging/src/k8s.io/kubectl/pkg/cmd/diff/diff.go): the live objects
//! against what apply would make of them, as `diff -u -N` over two directories of YAML files
//! named `group.version.Kind.namespace.name`. Exit status 1 when there are differences.
//!
//! The merged side comes from applying to a copy of the API server (what the server-side dry
//! run does upstream), with its own RNG so the world's randomness is untouched.

use crate::apply::{apply_documents, ApplyOptions};
use crate::yaml::to_yaml;
use crate::Output;
use kubesim_apiserver::{ApiServer, Request, SimRng};
use rand_core::SeedableRng;
use serde_json::Value;
use std::sync::Arc;

/// Runs `kubectl diff` for already-read inputs.
pub fn diff_inputs(inputs: &[(String, String)], options: &ApplyOptions, api: &ApiServer, now: u64, out: &mut Output) {
    let mut scratch = api.clone();
    let mut rng = SimRng::seed_from_u64(0);
    let actor: Arc<str> = Arc::from(crate::ACTOR);
    let mut req = Request { now, rng: &mut rng, actor: &actor };
    let stamp = kubesim_api::time::time_at(now).0.strftime("%Y-%m-%d %H:%M:%S.000000000 +0000").to_string();
    let mut differences = false;
    let mut failed = false;
    for (file, text) in inputs {
        let mut opts = options.clone();
        opts.dry_run = false;
        for result in apply_documents(file, text, &opts, &mut scratch, &mut req) {
            for w in &result.warnings {
                out.errln(w);
            }
            if let Err(e) = &result.outcome {
                out.errln(e);
                failed = true;
                continue;
            }
            let (Some(kind), Some(name), Some(namespace)) = (result.kind.as_deref(), result.name.as_deref(), result.namespace.as_deref()) else { continue };
            let Some(info) =
                kubesim_api::object::all_kinds().find(|k| k.kind == kind && crate::util::kind_group(k) == result.kind_group.clone().unwrap_or_default())
            else {
                continue;
            };
            let live = api.get(info, namespace, name).ok().map(|o| strip(o.to_json()));
            let merged = scratch.get(info, namespace, name).ok().map(|o| strip(o.to_json()));
            let live_text = live.as_ref().map(to_yaml).unwrap_or_default();
            let merged_text = merged.as_ref().map(to_yaml).unwrap_or_default();
            if live_text == merged_text {
                continue;
            }
            differences = true;
            let (group, version) = match info.api_version.split_once('/') {
                Some((g, v)) => (format!("{g}."), v.to_string()),
                None => (String::new(), info.api_version.to_string()),
            };
            let file_name = format!("{group}{version}.{kind}.{namespace}.{name}");
            let left = format!("/tmp/LIVE-kubesim/{file_name}");
            let right = format!("/tmp/MERGED-kubesim/{file_name}");
            out.outln(format!("diff -u -N {left} {right}"));
            out.outln(format!("--- {left}\t{stamp}"));
            out.outln(format!("+++ {right}\t{stamp}"));
            out.out(unified(&live_text, &merged_text, 3));
        }
    }
    out.exit_code = i32::from(failed || differences);
}

/// Drops fields kubectl diff masks (managedFields).
fn strip(mut value: Value) -> Value {
    if let Some(meta) = value.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("managedFields");
    }
    value
}

/// A unified diff of two texts with `context` lines around changes (GNU diff -u hunks).
pub fn unified(a: &str, b: &str, context: usize) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    // LCS table.
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    // Edit script: (tag, a index, b index) with tag ' ', '-', '+'.
    let mut ops: Vec<(char, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', i, j));
            i += 1;
        } else {
            ops.push(('+', i, j));
            j += 1;
        }
    }
    // Group changes into hunks with context.
    let changes: Vec<usize> = ops.iter().enumerate().filter(|(_, o)| o.0 != ' ').map(|(k, _)| k).collect();
    let mut out = String::new();
    let mut k = 0;
    while k < changes.len() {
        let start = changes[k].saturating_sub(context);
        let mut end = (changes[k] + context + 1).min(ops.len());
        let mut next = k + 1;
        while next < changes.len() && changes[next] <= end + context {
            end = (changes[next] + context + 1).min(ops.len());
            next += 1;
        }
        let hunk = &ops[start..end];
        let a_count = hunk.iter().filter(|o| o.0 != '+').count();
        let b_count = hunk.iter().filter(|o| o.0 != '-').count();
        let a_start = hunk.first().map(|o| o.1).unwrap_or(0);
        let b_start = hunk.first().map(|o| o.2).unwrap_or(0);
        let range = |start: usize, count: usize| match count {
            0 => format!("{start},0"),
            1 => format!("{}", start + 1),
            c => format!("{},{c}", start + 1),
        };
        out.push_str(&format!("@@ -{} +{} @@\n", range(a_start, a_count), range(b_start, b_count)));
        for (tag, ai, bj) in hunk {
            let line = if *tag == '+' { b[*bj] } else { a[*ai] };
            out.push(*tag);
            out.push_str(line);
            out.push('\n');
        }
        k = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hunk headers as GNU diff -u prints them.
    #[test]
    fn unified_diff_hunks_like_gnu_diff() {
        let a = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let b = "a\nb\nc\nD\ne\nf\ng\nh\ni\n";
        assert_eq!(unified(a, b, 3), "@@ -1,8 +1,9 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n h\n+i\n");
        assert_eq!(unified("", "x\n", 3), "@@ -0,0 +1 @@\n+x\n");
        assert_eq!(unified("x\n", "", 3), "@@ -1 +0,0 @@\n-x\n");
        let long_a: String = (0..20).map(|i| format!("l{i}\n")).collect();
        let long_b = long_a.replace("l2\n", "two\n").replace("l17\n", "seventeen\n");
        assert_eq!(
            unified(&long_a, &long_b, 3),
            "@@ -1,6 +1,6 @@\n l0\n l1\n-l2\n+two\n l3\n l4\n l5\n@@ -15,6 +15,6 @@\n l14\n l15\n l16\n-l17\n+seventeen\n l18\n l19\n"
        );
        assert_eq!(unified("same\n", "same\n", 3), "");
    }
}
