//! `kubectl apply|create|delete|get -k DIR` and `kubectl kustomize DIR`: the kustomize build
//! kubectl embeds (sigs.k8s.io/kustomize/api krusty), for the fields the Kubernetes docs use:
//! `resources` (files and nested kustomization directories), `configMapGenerator` and
//! `secretGenerator` (files, literals, envs, options; `generatorOptions`), `namespace`,
//! `namePrefix`/`nameSuffix`, `commonLabels`, `labels`, `commonAnnotations`, `images` and
//! `replicas`. Generated names get kustomize's content hash suffix (api/hasher, the same
//! algorithm as kubectl's pkg/util/hash) and references to renamed ConfigMaps, Secrets,
//! Services, PersistentVolumeClaims and ServiceAccounts are rewritten (nameReference). The
//! output is in kustomize's legacy kind order. Patches, components, replacements, helm charts
//! and remote bases are not modelled and are reported as such.

use crate::ClusterView;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const KUSTOMIZATION_FILES: &[&str] = &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Fields kubesim's kustomize does not model: building a kustomization using one is an error
/// rather than a silently different result.
const UNSUPPORTED: &[&str] = &[
    "patches",
    "patchesStrategicMerge",
    "patchesJson6902",
    "components",
    "replacements",
    "vars",
    "helmCharts",
    "helmGlobals",
    "crds",
    "transformers",
    "generators",
    "validators",
    "openapi",
    "configurations",
    "bases",
];

fn join(dir: &str, name: &str) -> String {
    let dir = dir.trim_end_matches('/');
    if dir.is_empty() || dir == "." {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Reads `path`, also under its `./`-less or `./`-prefixed spelling.
fn read(cluster: &dyn ClusterView, path: &str) -> Option<String> {
    if let Ok(t) = cluster.read_file(path) {
        return Some(t);
    }
    let alt = match path.strip_prefix("./") {
        Some(p) => p.to_string(),
        None => format!("./{path}"),
    };
    cluster.read_file(&alt).ok()
}

/// The built resources of the kustomization in `dir`, in output order, and the warnings
/// kustomize prints on stderr (deprecated fields).
pub fn build(dir: &str, cluster: &dyn ClusterView) -> Result<(Vec<Value>, Vec<String>), String> {
    let mut renames = Vec::new();
    let mut warnings = Vec::new();
    let mut resources = build_dir(dir, cluster, &mut renames, &mut warnings, 0)?;
    // kusttarget.go makeCustomizedResMap: hashes are added last, then back references fixed.
    for r in resources.iter_mut() {
        if r.pointer("/metadata/annotations/kubesim.dev~1needs-hash").is_some() {
            let meta = r["metadata"].as_object_mut().expect("metadata");
            if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
                a.remove("kubesim.dev/needs-hash");
                if a.is_empty() {
                    meta.remove("annotations");
                }
            }
            let hash = kustomize_hash(r);
            let old = r["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let new = format!("{old}-{hash}");
            r["metadata"]["name"] = Value::String(new.clone());
            let kind = r["kind"].as_str().unwrap_or_default().to_string();
            for rename in renames.iter_mut().filter(|(k, _, to)| *k == kind && *to == old) {
                rename.2 = new.clone();
            }
        }
    }
    let renames: BTreeMap<(String, String), String> = renames.into_iter().filter(|(_, from, to)| from != to).map(|(k, from, to)| ((k, from), to)).collect();
    for r in resources.iter_mut() {
        fix_references(r, &renames);
    }
    resources.sort_by_key(|r| kind_order(r["kind"].as_str().unwrap_or_default()));
    Ok((resources, warnings))
}

/// (kind, name as written, name now) for every resource a kustomization renamed.
type Renames = Vec<(String, String, String)>;

fn build_dir(dir: &str, cluster: &dyn ClusterView, renames: &mut Renames, warnings: &mut Vec<String>, depth: usize) -> Result<Vec<Value>, String> {
    if depth > 16 {
        return Err(format!("error: accumulating resources: cycle detected: kustomization directory '{dir}' includes itself"));
    }
    let Some((file, text)) = KUSTOMIZATION_FILES.iter().find_map(|f| read(cluster, &join(dir, f)).map(|t| (join(dir, f), t))) else {
        return Err(format!(
            "error: unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
            if dir.is_empty() { "." } else { dir }
        ));
    };
    let (docs, errors) = kubesim_api::decode::parse_documents(&file, &text);
    if let Some(e) = errors.first() {
        return Err(format!("error: {e}"));
    }
    let k = docs.into_iter().map(|d| d.value).find(|v| v.is_object()).unwrap_or_else(|| Value::Object(Map::new()));
    for field in UNSUPPORTED {
        if k.get(*field).is_some() {
            return Err(format!("error: kustomization {file}: the {field:?} field is not modelled by kubesim's kustomize"));
        }
    }
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
    };
    // kustomize's deprecation notices (api/types FixKustomization).
    for (field, instead) in [("commonLabels", "labels"), ("imageTags", "images")] {
        if k.get(field).is_some() {
            let w = format!(
                "# Warning: '{field}' is deprecated. Please use '{instead}' instead. Run 'kustomize edit fix' to update your Kustomization automatically."
            );
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }

    let mut out: Vec<Value> = Vec::new();
    for entry in strings(k.get("resources")) {
        if entry.contains("://") || entry.starts_with("github.com/") {
            return Err(format!("error: accumulating resources: {entry}: remote resources are not available (kubesim has no network access)"));
        }
        let path = join(dir, &entry);
        if let Some(text) = read(cluster, &path) {
            let (docs, errors) = kubesim_api::decode::parse_documents(&path, &text);
            if let Some(e) = errors.first() {
                return Err(format!("error: accumulating resources: {e}"));
            }
            for d in docs {
                match d.value.get("kind").and_then(Value::as_str) {
                    Some(kind) if kind.ends_with("List") && d.value.get("items").is_some() => {
                        out.extend(d.value["items"].as_array().cloned().unwrap_or_default());
                    }
                    _ if d.value.is_object() => out.push(d.value),
                    _ => {}
                }
            }
        } else if KUSTOMIZATION_FILES.iter().any(|f| read(cluster, &join(&path, f)).is_some()) {
            out.extend(build_dir(&path, cluster, renames, warnings, depth + 1)?);
        } else {
            return Err(format!(
                "error: accumulating resources: accumulation err='accumulating resources from '{entry}': evalsymlink failure on '{path}' : lstat {path}: no such file or directory': must build at directory: not a valid directory: evalsymlink failure on '{path}' : lstat {path}: no such file or directory"
            ));
        }
    }
    for r in &out {
        let kind = r["kind"].as_str().unwrap_or_default().to_string();
        let name = r["metadata"]["name"].as_str().unwrap_or_default().to_string();
        if !renames.iter().any(|(k, _, to)| *k == kind && *to == name) {
            renames.push((kind, name.clone(), name));
        }
    }

    // Generators.
    let global = k.get("generatorOptions").cloned().unwrap_or(Value::Null);
    for (field, kind) in [("configMapGenerator", "ConfigMap"), ("secretGenerator", "Secret")] {
        for g in k.get(field).and_then(Value::as_array).cloned().unwrap_or_default() {
            let generated = generate(kind, &g, &global, dir, cluster)?;
            let name = generated["metadata"]["name"].as_str().unwrap_or_default().to_string();
            match g.get("behavior").and_then(Value::as_str).unwrap_or("create") {
                "create" => {
                    if out.iter().any(|r| r["kind"] == kind && r["metadata"]["name"] == name.as_str()) {
                        return Err(format!("error: merging from generator {name}: id resid.ResId{{Gvk:resid.Gvk{{Group:\"\", Version:\"v1\", Kind:\"{kind}\", isClusterScoped:false}}, Name:\"{name}\", Namespace:\"\"}} exists; behavior must be merge or replace"));
                    }
                    renames.push((kind.to_string(), name.clone(), name));
                    out.push(generated);
                }
                behavior @ ("merge" | "replace") => {
                    let Some(existing) = out.iter_mut().find(|r| r["kind"] == kind && r["metadata"]["name"] == name.as_str()) else {
                        return Err(format!("error: merging from generator {name}: id resid.ResId{{Gvk:resid.Gvk{{Group:\"\", Version:\"v1\", Kind:\"{kind}\", isClusterScoped:false}}, Name:\"{name}\", Namespace:\"\"}} does not exist; cannot merge or replace"));
                    };
                    if behavior == "replace" {
                        existing["data"] = generated["data"].clone();
                    } else {
                        let data = existing["data"].as_object().cloned().unwrap_or_default();
                        let mut merged = data;
                        for (key, v) in generated["data"].as_object().cloned().unwrap_or_default() {
                            merged.insert(key, v);
                        }
                        existing["data"] = Value::Object(merged);
                    }
                    if generated.pointer("/metadata/annotations/kubesim.dev~1needs-hash").is_some() {
                        existing["metadata"]["annotations"]["kubesim.dev/needs-hash"] = Value::String(String::new());
                    }
                }
                other => return Err(format!("error: unknown generator behavior {other:?}")),
            }
        }
    }

    // Transformers, in kustomize's builtin order.
    if let Some(ns) = k.get("namespace").and_then(Value::as_str) {
        for r in out.iter_mut() {
            let kind = r["kind"].as_str().unwrap_or_default().to_string();
            if !cluster_scoped(&kind) {
                r["metadata"]["namespace"] = Value::String(ns.to_string());
            }
            if kind == "RoleBinding" || kind == "ClusterRoleBinding" {
                if let Some(subjects) = r.get_mut("subjects").and_then(Value::as_array_mut) {
                    for s in subjects {
                        if s["kind"] == "ServiceAccount" && s.get("namespace").is_some() {
                            s["namespace"] = Value::String(ns.to_string());
                        }
                    }
                }
            }
        }
    }
    let prefix = k.get("namePrefix").and_then(Value::as_str).unwrap_or("");
    let suffix = k.get("nameSuffix").and_then(Value::as_str).unwrap_or("");
    if !prefix.is_empty() || !suffix.is_empty() {
        for r in out.iter_mut() {
            let kind = r["kind"].as_str().unwrap_or_default().to_string();
            if kind == "Namespace" || kind == "CustomResourceDefinition" {
                continue;
            }
            let old = r["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let new = format!("{prefix}{old}{suffix}");
            r["metadata"]["name"] = Value::String(new.clone());
            for rename in renames.iter_mut().filter(|(k, _, to)| *k == kind && *to == old) {
                rename.2 = new.clone();
            }
        }
    }
    let mut labels: Vec<(Map<String, Value>, bool, bool)> = Vec::new();
    if let Some(m) = k.get("commonLabels").and_then(Value::as_object) {
        labels.push((m.clone(), true, true));
    }
    for l in k.get("labels").and_then(Value::as_array).cloned().unwrap_or_default() {
        let pairs = l.get("pairs").and_then(Value::as_object).cloned().unwrap_or_default();
        let selectors = l.get("includeSelectors").and_then(Value::as_bool).unwrap_or(false);
        let templates = selectors || l.get("includeTemplates").and_then(Value::as_bool).unwrap_or(false);
        labels.push((pairs, selectors, templates));
    }
    for (pairs, selectors, templates) in &labels {
        for r in out.iter_mut() {
            add_labels(r, pairs, *selectors, *templates);
        }
    }
    if let Some(m) = k.get("commonAnnotations").and_then(Value::as_object) {
        for r in out.iter_mut() {
            merge_into(r, "/metadata/annotations", m);
            if let Some(t) = template_path(r["kind"].as_str().unwrap_or_default()) {
                merge_into(r, &format!("{t}/metadata/annotations"), m);
            }
        }
    }
    for image in k.get("images").and_then(Value::as_array).cloned().unwrap_or_default() {
        for r in out.iter_mut() {
            set_images(r, &image);
        }
    }
    for rep in k.get("replicas").and_then(Value::as_array).cloned().unwrap_or_default() {
        let (Some(name), Some(count)) = (rep.get("name").and_then(Value::as_str), rep.get("count")) else { continue };
        for r in out.iter_mut() {
            let kind = r["kind"].as_str().unwrap_or_default();
            if matches!(kind, "Deployment" | "ReplicaSet" | "StatefulSet" | "ReplicationController") && r["metadata"]["name"] == name {
                r["spec"]["replicas"] = count.clone();
            }
        }
    }
    Ok(out)
}

/// A ConfigMap or Secret from one generator entry (configmapandsecret/*.go).
fn generate(kind: &str, g: &Value, global: &Value, dir: &str, cluster: &dyn ClusterView) -> Result<Value, String> {
    let name = g.get("name").and_then(Value::as_str).ok_or_else(|| format!("error: a {kind} generator has no name"))?;
    let mut data: BTreeMap<String, String> = BTreeMap::new();
    let add = |data: &mut BTreeMap<String, String>, key: String, value: String| -> Result<(), String> {
        if data.contains_key(&key) {
            return Err(format!("error: configmap {name} illegally repeats the key `{key}`"));
        }
        data.insert(key, value);
        Ok(())
    };
    let strings = |f: &str| -> Vec<String> {
        g.get(f).and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
    };
    let mut envs = strings("envs");
    if let Some(e) = g.get("env").and_then(Value::as_str) {
        envs.insert(0, e.to_string());
    }
    for env in envs {
        let text = read(cluster, &join(dir, &env))
            .ok_or_else(|| format!("error: loading KV pairs: env source files: [{env}]: open {}: no such file or directory", join(dir, &env)))?;
        for line in text.lines() {
            let line = line.trim_start_matches('\u{feff}');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let (k, v) = match line.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (line.to_string(), String::new()),
            };
            add(&mut data, k, v)?;
        }
    }
    for literal in strings("literals") {
        let (k, v) = literal.split_once('=').ok_or_else(|| format!("error: invalid literal source {literal}, expected key=value"))?;
        // kv.go parseLiteralSource: surrounding quotes are removed.
        let v = v.strip_prefix('"').and_then(|x| x.strip_suffix('"')).or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\''))).unwrap_or(v);
        add(&mut data, k.to_string(), v.to_string())?;
    }
    for file in strings("files") {
        let (key, path) = match file.split_once('=') {
            Some((k, p)) => (k.to_string(), p.to_string()),
            None => (file.rsplit('/').next().unwrap_or(&file).to_string(), file.clone()),
        };
        let full = join(dir, &path);
        let text = read(cluster, &full).ok_or_else(|| format!("error: evalsymlink failure on '{full}' : lstat {full}: no such file or directory"))?;
        add(&mut data, key, text)?;
    }
    let option = |f: &str| -> Option<Value> { g.get("options").and_then(|o| o.get(f)).or_else(|| global.get(f)).cloned() };
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(name.to_string()));
    if let Some(ns) = g.get("namespace").and_then(Value::as_str) {
        meta.insert("namespace".into(), Value::String(ns.to_string()));
    }
    for field in ["labels", "annotations"] {
        let mut m = global.get(field).and_then(Value::as_object).cloned().unwrap_or_default();
        for (k, v) in g.get("options").and_then(|o| o.get(field)).and_then(Value::as_object).cloned().unwrap_or_default() {
            m.insert(k, v);
        }
        if !m.is_empty() {
            meta.insert(field.into(), Value::Object(m));
        }
    }
    if !option("disableNameSuffixHash").and_then(|v| v.as_bool()).unwrap_or(false) {
        let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
        annotations["kubesim.dev/needs-hash"] = Value::String(String::new());
    }
    let mut object = Map::new();
    object.insert("apiVersion".into(), Value::String("v1".into()));
    object.insert("kind".into(), Value::String(kind.into()));
    object.insert("metadata".into(), Value::Object(meta));
    let data: Map<String, Value> =
        data.into_iter().map(|(k, v)| (k, Value::String(if kind == "Secret" { crate::commands::base64(v.as_bytes()) } else { v }))).collect();
    object.insert("data".into(), Value::Object(data));
    if kind == "Secret" {
        object.insert("type".into(), g.get("type").cloned().unwrap_or_else(|| Value::String("Opaque".into())));
    }
    if let Some(immutable) = option("immutable").filter(|v| v.as_bool() == Some(true)) {
        object.insert("immutable".into(), immutable);
    }
    Ok(Value::Object(object))
}

/// kubectl pkg/util/hash ConfigMapHash / SecretHash (`create configmap|secret --append-hash`):
/// the first 10 hex digits of the sha256 of the JSON of {kind, name, data[, type]
/// [, immutable][, binaryData]}, vowel-like digits mapped to consonants.
pub fn content_hash(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or_default();
    let mut m = Map::new();
    m.insert("kind".into(), object["kind"].clone());
    m.insert("name".into(), object["metadata"]["name"].clone());
    m.insert("data".into(), object.get("data").cloned().unwrap_or(Value::Null));
    if kind == "Secret" {
        m.insert("type".into(), object.get("type").cloned().unwrap_or_else(|| Value::String(String::new())));
    }
    if let Some(i) = object.get("immutable") {
        m.insert("immutable".into(), i.clone());
    }
    if kind == "ConfigMap" {
        if let Some(b) = object.get("binaryData").filter(|b| b.as_object().is_some_and(|o| !o.is_empty())) {
            m.insert("binaryData".into(), b.clone());
        }
    }
    encode_hash(&Value::Object(m))
}

/// kustomize api/hasher Hasher.Hash: like kubectl's, but its getNodeValues looks up the single
/// field "metadata/name", which no object has, so the name always hashes as "" (kustomize
/// v5's names are content-only: a namePrefix does not change the suffix); absent data and
/// type are "", binaryData / stringData count when they are maps.
fn kustomize_hash(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or_default();
    let field = |f: &str| match object.get(f) {
        Some(v @ Value::Object(_)) => v.clone(),
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Null) | None => Value::String(String::new()),
        Some(other) => Value::String(other.to_string()),
    };
    let mut m = Map::new();
    m.insert("kind".into(), Value::String(kind.to_string()));
    m.insert("name".into(), Value::String(String::new()));
    m.insert("data".into(), field("data"));
    if kind == "Secret" {
        m.insert("type".into(), field("type"));
        if let Some(sd) = object.get("stringData").filter(|v| v.is_object()) {
            m.insert("stringData".into(), sd.clone());
        }
    } else if let Some(b) = object.get("binaryData").filter(|v| v.is_object()) {
        m.insert("binaryData".into(), b.clone());
    }
    encode_hash(&Value::Object(m))
}

/// encodeHash: sha256 hex of the Go JSON, first 10 digits, 0 1 3 a e → g h k m t.
fn encode_hash(value: &Value) -> String {
    let mut json = String::new();
    go_json(value, &mut json);
    let digest = sha256(json.as_bytes());
    digest[..5]
        .iter()
        .flat_map(|b| [b >> 4, b & 15])
        .map(|n| match n {
            0 => 'g',
            1 => 'h',
            3 => 'k',
            10 => 'm',
            14 => 't',
            n => char::from_digit(n as u32, 16).unwrap_or('0'),
        })
        .collect()
}

/// encoding/json Marshal: map keys sorted, HTML characters and U+2028/U+2029 escaped.
fn go_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(&Value::String((*k).clone()), out);
                out.push(':');
                go_json(&m[*k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(x, out);
            }
            out.push(']');
        }
        Value::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// SHA-256 (the `sha2` crate; kustomize hashes with Go's crypto/sha256).
pub fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

fn cluster_scoped(kind: &str) -> bool {
    matches!(
        kind,
        "Namespace"
            | "Node"
            | "PersistentVolume"
            | "StorageClass"
            | "ClusterRole"
            | "ClusterRoleBinding"
            | "CustomResourceDefinition"
            | "PriorityClass"
            | "IngressClass"
            | "RuntimeClass"
            | "CSIDriver"
            | "VolumeAttachment"
            | "MutatingWebhookConfiguration"
            | "ValidatingWebhookConfiguration"
            | "APIService"
            | "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding"
    )
}

/// Where a kind's pod template lives.
fn template_path(kind: &str) -> Option<&'static str> {
    match kind {
        "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet" | "Job" | "ReplicationController" => Some("/spec/template"),
        "CronJob" => Some("/spec/jobTemplate/spec/template"),
        _ => None,
    }
}

fn merge_into(r: &mut Value, pointer: &str, m: &Map<String, Value>) {
    let mut cur = r;
    for part in pointer.trim_start_matches('/').split('/') {
        if !cur.is_object() {
            return;
        }
        if cur.get(part).is_none_or(Value::is_null) {
            cur[part] = Value::Object(Map::new());
        }
        cur = &mut cur[part];
    }
    if let Some(o) = cur.as_object_mut() {
        for (k, v) in m {
            o.insert(k.clone(), v.clone());
        }
    }
}

/// commonLabels / labels: metadata.labels always; selectors and templates as asked
/// (commonlabels fieldspecs: Service spec.selector, workloads' spec.selector.matchLabels,
/// pod templates' labels, CronJob job templates).
fn add_labels(r: &mut Value, pairs: &Map<String, Value>, selectors: bool, templates: bool) {
    merge_into(r, "/metadata/labels", pairs);
    let kind = r["kind"].as_str().unwrap_or_default().to_string();
    if selectors {
        match kind.as_str() {
            "Service" => merge_into(r, "/spec/selector", pairs),
            "ReplicationController" => merge_into(r, "/spec/selector", pairs),
            "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet" => merge_into(r, "/spec/selector/matchLabels", pairs),
            "Job" if r.pointer("/spec/selector").is_some() => merge_into(r, "/spec/selector/matchLabels", pairs),
            "PodDisruptionBudget" | "NetworkPolicy" => {
                let p = if kind == "NetworkPolicy" { "/spec/podSelector/matchLabels" } else { "/spec/selector/matchLabels" };
                merge_into(r, p, pairs)
            }
            _ => {}
        }
    }
    if templates {
        if let Some(t) = template_path(&kind) {
            merge_into(r, &format!("{t}/metadata/labels"), pairs);
        }
        if kind == "CronJob" {
            merge_into(r, "/spec/jobTemplate/metadata/labels", pairs);
        }
    }
}

/// images: `name` matches an image's repository; newName, newTag and digest replace parts.
fn set_images(r: &mut Value, image: &Value) {
    let Some(name) = image.get("name").and_then(Value::as_str) else { return };
    let kind = r["kind"].as_str().unwrap_or_default().to_string();
    let spec = if kind == "Pod" { Some("/spec".to_string()) } else { template_path(&kind).map(|t| format!("{t}/spec")) };
    let Some(spec) = spec else { return };
    for list in ["containers", "initContainers"] {
        let Some(containers) = r.pointer_mut(&format!("{spec}/{list}")).and_then(Value::as_array_mut) else { continue };
        for c in containers {
            let Some(current) = c.get("image").and_then(Value::as_str) else { continue };
            let (repo, tag, digest) = split_image(current);
            if repo != name {
                continue;
            }
            let repo = image.get("newName").and_then(Value::as_str).unwrap_or(repo);
            let new = if let Some(d) = image.get("digest").and_then(Value::as_str) {
                format!("{repo}@{d}")
            } else if let Some(t) = image.get("newTag").map(|t| t.as_str().map(str::to_string).unwrap_or_else(|| t.to_string())) {
                format!("{repo}:{t}")
            } else if let Some(d) = digest {
                format!("{repo}@{d}")
            } else if let Some(t) = tag {
                format!("{repo}:{t}")
            } else {
                repo.to_string()
            };
            c["image"] = Value::String(new);
        }
    }
}

fn split_image(image: &str) -> (&str, Option<&str>, Option<&str>) {
    if let Some((repo, digest)) = image.split_once('@') {
        return (repo, None, Some(digest));
    }
    match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, Some(tag), None),
        _ => (image, None, None),
    }
}

/// nameReference: references by the names written in the kustomization follow the renames.
fn fix_references(r: &mut Value, renames: &BTreeMap<(String, String), String>) {
    let rename = |kind: &str, v: &mut Value| {
        if let Some(name) = v.as_str() {
            if let Some(new) = renames.get(&(kind.to_string(), name.to_string())) {
                *v = Value::String(new.clone());
            }
        }
    };
    let kind = r["kind"].as_str().unwrap_or_default().to_string();
    let spec = if kind == "Pod" { Some("/spec".to_string()) } else { template_path(&kind).map(|t| format!("{t}/spec")) };
    if let Some(spec) = spec {
        if let Some(pod) = r.pointer_mut(&spec) {
            for list in ["containers", "initContainers", "ephemeralContainers"] {
                for c in pod.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
                    for e in c.get_mut("env").and_then(Value::as_array_mut).into_iter().flatten() {
                        if let Some(v) = e.pointer_mut("/valueFrom/configMapKeyRef/name") {
                            rename("ConfigMap", v);
                        }
                        if let Some(v) = e.pointer_mut("/valueFrom/secretKeyRef/name") {
                            rename("Secret", v);
                        }
                    }
                    for e in c.get_mut("envFrom").and_then(Value::as_array_mut).into_iter().flatten() {
                        if let Some(v) = e.pointer_mut("/configMapRef/name") {
                            rename("ConfigMap", v);
                        }
                        if let Some(v) = e.pointer_mut("/secretRef/name") {
                            rename("Secret", v);
                        }
                    }
                }
            }
            for v in pod.get_mut("volumes").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(x) = v.pointer_mut("/configMap/name") {
                    rename("ConfigMap", x);
                }
                if let Some(x) = v.pointer_mut("/secret/secretName") {
                    rename("Secret", x);
                }
                if let Some(x) = v.pointer_mut("/persistentVolumeClaim/claimName") {
                    rename("PersistentVolumeClaim", x);
                }
                for s in v.pointer_mut("/projected/sources").and_then(Value::as_array_mut).into_iter().flatten() {
                    if let Some(x) = s.pointer_mut("/configMap/name") {
                        rename("ConfigMap", x);
                    }
                    if let Some(x) = s.pointer_mut("/secret/name") {
                        rename("Secret", x);
                    }
                }
            }
            for s in pod.get_mut("imagePullSecrets").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(x) = s.get_mut("name") {
                    rename("Secret", x);
                }
            }
            for field in ["serviceAccountName", "serviceAccount"] {
                if let Some(x) = pod.get_mut(field) {
                    rename("ServiceAccount", x);
                }
            }
        }
    }
    match kind.as_str() {
        "StatefulSet" => {
            if let Some(x) = r.pointer_mut("/spec/serviceName") {
                rename("Service", x);
            }
        }
        "Ingress" => {
            if let Some(x) = r.pointer_mut("/spec/defaultBackend/service/name") {
                rename("Service", x);
            }
            for rule in r.pointer_mut("/spec/rules").and_then(Value::as_array_mut).into_iter().flatten() {
                for p in rule.pointer_mut("/http/paths").and_then(Value::as_array_mut).into_iter().flatten() {
                    if let Some(x) = p.pointer_mut("/backend/service/name") {
                        rename("Service", x);
                    }
                }
            }
            for t in r.pointer_mut("/spec/tls").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(x) = t.get_mut("secretName") {
                    rename("Secret", x);
                }
            }
        }
        "RoleBinding" | "ClusterRoleBinding" => {
            for s in r.get_mut("subjects").and_then(Value::as_array_mut).into_iter().flatten() {
                if s["kind"] == "ServiceAccount" {
                    if let Some(x) = s.get_mut("name") {
                        rename("ServiceAccount", x);
                    }
                }
            }
        }
        _ => {}
    }
}

/// kustomize's legacy resource order (api/resid gvk.go orderFirst / orderLast).
fn kind_order(kind: &str) -> usize {
    const FIRST: &[&str] = &[
        "Namespace",
        "ResourceQuota",
        "StorageClass",
        "CustomResourceDefinition",
        "ServiceAccount",
        "PodSecurityPolicy",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "ConfigMap",
        "Secret",
        "Endpoints",
        "Service",
        "LimitRange",
        "PriorityClass",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Deployment",
        "StatefulSet",
        "CronJob",
        "PodDisruptionBudget",
    ];
    const LAST: &[&str] = &["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"];
    if let Some(i) = FIRST.iter().position(|k| *k == kind) {
        i
    } else if let Some(i) = LAST.iter().position(|k| *k == kind) {
        1000 + i
    } else {
        500
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn sha256_vectors() {
        assert_eq!(hex(&sha256(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(hex(&sha256(&[b'a'; 1000])), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
    }

    /// kubectl pkg/util/hash/hash_test.go TestConfigMapHash / TestSecretHash.
    #[test]
    fn hashes_match_kubectl_hash_test() {
        let cm = |name: &str, data: Value| serde_json::json!({"kind": "ConfigMap", "metadata": {"name": name}, "data": data});
        assert_eq!(content_hash(&cm("", serde_json::json!({}))), "42745tchd9");
        assert_eq!(content_hash(&cm("", serde_json::json!({"one": ""}))), "9g67k2htb6");
        assert_eq!(content_hash(&cm("", serde_json::json!({"two": "2", "one": "", "three": "3"}))), "f5h7t85m9b");
        let secret = |data: Value| serde_json::json!({"kind": "Secret", "type": "my-type", "metadata": {"name": ""}, "data": data});
        assert_eq!(content_hash(&secret(serde_json::json!({}))), "t75bgf6ctb");
        assert_eq!(content_hash(&secret(serde_json::json!({"one": ""}))), "74bd68bm66");
        assert_eq!(content_hash(&secret(serde_json::json!({"two": "Mg==", "one": "", "three": "Mw=="}))), "dgcb6h9tmk");
    }

    /// The names kubectl v1.32's `kubectl kustomize` generates (kustomize v5 api/hasher): the
    /// name does not enter the hash.
    #[test]
    fn kustomize_hashes_match_kubectl_kustomize() {
        let cm = serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "special-config-2"}, "data": {"special.how": "very", "special.type": "charm"}});
        assert_eq!(kustomize_hash(&cm), "2b86tk8fhm");
        let secret = serde_json::json!({"kind": "Secret", "type": "Opaque", "metadata": {"name": "dev-creds"}, "data": {"password": "czNjcjN0"}});
        assert_eq!(kustomize_hash(&secret), "25k92892fb");
    }
}
