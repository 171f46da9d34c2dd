//! `kubectl diff -f` (staging/src/k8s.io/kubectl/pkg/cmd/diff/diff.go): every object of the
//! files is printed twice as YAML, live and merged, into two temporary directories (`LIVE-N`
//! and `MERGED-N`, one file per object named `group.version.Kind.namespace.name`), then one
//! `diff -u -N LIVE MERGED` runs over the directories: files in name order, each differing pair
//! headed by its `diff -u -N` line and the files' paths and modification times. Exit status 1
//! when there are differences, 2 on an error (which stops the command before the diff runs).
//!
//! The merged side is each object applied, without recording the last-applied annotation, to
//! its own copy of the API server with a copy of the world's RNG (what each object's
//! server-side dry run is, as `kubesim serve` runs it): nothing is committed and the world's
//! randomness is untouched. Secrets' `data` values are masked.

use crate::apply::{apply_documents_apart, ApplyOptions};
use crate::yaml::to_yaml;
use crate::Output;
use kubesim_apiserver::{ApiServer, Request, SimRng};
use rand_core::{RngCore, SeedableRng};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Runs `kubectl diff` for already-read inputs.
pub fn diff_inputs(inputs: &[(String, String)], options: &ApplyOptions, api: &ApiServer, world: &Request, out: &mut Output) {
    let now = world.now;
    // os.MkdirTemp("", "LIVE-") and ("", "MERGED-"): a random decimal suffix each (from a
    // fixed generator: the directories are not part of the world).
    let mut names = SimRng::seed_from_u64(0);
    let (live_dir, merged_dir) = (format!("/tmp/LIVE-{}", names.next_u32()), format!("/tmp/MERGED-{}", names.next_u32()));
    let actor: Arc<str> = Arc::from(crate::ACTOR);
    let mut rng = world.rng.clone();
    let mut req = Request { now, rng: &mut rng, actor: &actor };
    let mut opts = options.clone();
    opts.dry_run = false;
    opts.record_last_applied = false;
    // The two directories: file name → (live, merged) YAML (a later object of the same name
    // overwrites the file, as O_TRUNC does).
    let mut files: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut failure: Option<String> = None;
    for (file, text) in inputs {
        if failure.is_some() {
            break;
        }
        apply_documents_apart(file, text, &opts, api, &mut req, &mut |result, scratch| {
            if failure.is_some() {
                return;
            }
            for w in &result.warnings {
                out.errln(w);
            }
            if let Err(e) = &result.outcome {
                failure = Some(e.clone());
                return;
            }
            let (Some(kind), Some(name), Some(namespace)) = (result.kind.as_deref(), result.name.as_deref(), result.namespace.as_deref()) else { return };
            let group = result.kind_group.clone().unwrap_or_default();
            let Some(info) = kubesim_api::object::all_kinds().find(|k| k.kind == kind && crate::util::kind_group(k) == group) else { return };
            let live = api.get(info, namespace, name).ok();
            if live.as_ref().is_some_and(|l| l.metadata().deletion_timestamp.is_some()) {
                // apply.WarnIfDeleting.
                out.errln(format!("Warning: Detected changes to resource {name} which is currently being deleted."));
            }
            let mut live = live.map(|o| strip(o.to_json()));
            let Some(mut merged) = scratch.get(info, namespace, name).ok().map(|o| strip(o.to_json())) else { return };
            if info.api_version == "v1" && kind == "Secret" {
                mask_secret_data(live.as_mut(), &mut merged);
            }
            // InfoObject.Name: group.version.Kind.namespace.name (no group for core kinds).
            let (group, version) = match info.api_version.split_once('/') {
                Some((g, v)) => (format!("{g}."), v.to_string()),
                None => (String::new(), info.api_version.to_string()),
            };
            let file_name = format!("{group}{version}.{kind}.{namespace}.{name}");
            files.insert(file_name, (live.as_ref().map(to_yaml).unwrap_or_default(), to_yaml(&merged)));
        });
    }
    if let Some(e) = failure {
        out.errln(e);
        out.exit_code = 2;
        return;
    }
    // GNU diff's time stamp: the files' modification time (here, the virtual instant).
    let stamp = kubesim_api::time::time_at(now).0.strftime("%Y-%m-%d %H:%M:%S.000000000 +0000").to_string();
    let mut differences = false;
    for (name, (live, merged)) in &files {
        if live == merged {
            continue;
        }
        differences = true;
        let (left, right) = (format!("{live_dir}/{name}"), format!("{merged_dir}/{name}"));
        out.outln(format!("diff -u -N {left} {right}"));
        out.outln(format!("--- {left}\t{stamp}"));
        out.outln(format!("+++ {right}\t{stamp}"));
        out.out(unified(live, merged, 3));
    }
    out.exit_code = i32::from(differences);
}

/// Drops fields kubectl diff masks (managedFields).
fn strip(mut value: Value) -> Value {
    if let Some(meta) = value.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("managedFields");
    }
    value
}

/// Masker.run: every `data` value becomes `***`, and a key on both sides whose values differ
/// `*** (before)` / `*** (after)`, so the diff shows that it changed but not what to.
fn mask_secret_data(from: Option<&mut Value>, to: &mut Value) {
    const DEFAULT: &str = "***";
    let data = |v: &Value| v.get("data").and_then(Value::as_object).cloned();
    let (before, after) = (from.as_deref().and_then(data), data(to));
    let mut masked_from = before.clone();
    let mut masked_to = after.clone();
    if let (Some(f), Some(b)) = (masked_from.as_mut(), before.as_ref()) {
        for (k, v) in b {
            match after.as_ref().and_then(|a| a.get(k)) {
                Some(other) if other != v => {
                    f.insert(k.clone(), Value::String("*** (before)".into()));
                    if let Some(t) = masked_to.as_mut() {
                        t.insert(k.clone(), Value::String("*** (after)".into()));
                    }
                    continue;
                }
                Some(_) => {
                    if let Some(t) = masked_to.as_mut() {
                        t.insert(k.clone(), Value::String(DEFAULT.into()));
                    }
                }
                None => {}
            }
            f.insert(k.clone(), Value::String(DEFAULT.into()));
        }
    }
    if let Some(t) = masked_to.as_mut() {
        for k in after.iter().flat_map(|a| a.keys()) {
            if before.as_ref().is_none_or(|b| !b.contains_key(k)) {
                t.insert(k.clone(), Value::String(DEFAULT.into()));
            }
        }
    }
    if let (Some(from), Some(masked)) = (from, masked_from) {
        from["data"] = Value::Object(masked);
    }
    if let Some(masked) = masked_to {
        to["data"] = Value::Object(masked);
    }
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

    // diff_test.go TestMasker: changed keys get before/after marks, the rest a plain mask.
    #[test]
    fn masker_hides_secret_values() {
        let mut from = serde_json::json!({"data": {"same": "YQ==", "changed": "Yg==", "gone": "Yw=="}});
        let mut to = serde_json::json!({"data": {"same": "YQ==", "changed": "ZA==", "new": "ZQ=="}});
        mask_secret_data(Some(&mut from), &mut to);
        assert_eq!(from["data"], serde_json::json!({"same": "***", "changed": "*** (before)", "gone": "***"}));
        assert_eq!(to["data"], serde_json::json!({"same": "***", "changed": "*** (after)", "new": "***"}));
        let mut created = serde_json::json!({"data": {"k": "dg=="}});
        mask_secret_data(None, &mut created);
        assert_eq!(created["data"], serde_json::json!({"k": "***"}));
    }
}
