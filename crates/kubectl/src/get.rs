//! `kubectl get` (staging/src/k8s.io/kubectl/pkg/cmd/get/get.go) and the object printers it
//! shares with other commands (`-o yaml|json|name|wide|jsonpath=...|custom-columns=...`).

use crate::args::Args;
use crate::jsonpath;
use crate::printers::{self, Table};
use crate::util::{self, kind_group, server_error, type_name};
use crate::yaml::to_yaml;
use crate::Output;
use kubesim_api::object::{KindInfo, Object, Scope};
use kubesim_api::selector::{FieldSelector, Selector};
use kubesim_apiserver::{ApiServer, Request};
use serde_json::Value;
use std::sync::Arc;

/// The kinds `get all` covers, in kubectl's order.
const ALL: &[&str] = &[
    "pods",
    "replicationcontrollers",
    "services",
    "daemonsets.apps",
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "horizontalpodautoscalers.autoscaling",
    "cronjobs.batch",
    "jobs.batch",
];

/// Resource arguments: `pods`, `pods,deploy`, `pod/a deploy/b`, `pods a b`, `all`.
#[derive(Clone, Debug)]
pub struct Targets {
    /// Kinds with the names asked for (empty = all objects of the kind).
    pub groups: Vec<(&'static KindInfo, Vec<String>)>,
    /// Whether exactly one object was named (single-object output for yaml/json).
    pub single: bool,
}

/// Parses resource arguments.
pub fn parse_targets(positional: &[String]) -> Result<Targets, String> {
    if positional.is_empty() {
        return Err("error: you must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.".into());
    }
    let mut groups: Vec<(&'static KindInfo, Vec<String>)> = Vec::new();
    if positional[0].contains('/') {
        for arg in positional {
            let (kind, name) = arg
                .split_once('/')
                .ok_or_else(|| "error: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'".to_string())?;
            if name.is_empty() {
                return Err("error: arguments in resource/name form must have a single resource and name".into());
            }
            let info = util::resolve(kind)?;
            match groups.iter_mut().find(|(i, _)| std::ptr::eq(*i, info)) {
                Some((_, names)) => names.push(name.to_string()),
                None => groups.push((info, vec![name.to_string()])),
            }
        }
        let single = groups.len() == 1 && groups[0].1.len() == 1;
        return Ok(Targets { groups, single });
    }
    let types: Vec<&str> = positional[0].split(',').filter(|t| !t.is_empty()).collect();
    for t in types {
        if t == "all" {
            for name in ALL {
                let info = util::resolve(name)?;
                groups.push((info, Vec::new()));
            }
            continue;
        }
        let info = util::resolve(t)?;
        if !groups.iter().any(|(i, _)| std::ptr::eq(*i, info)) {
            groups.push((info, Vec::new()));
        }
    }
    let names: Vec<String> = positional[1..].to_vec();
    for name in &names {
        if name.contains('/') {
            return Err("error: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'".into());
        }
    }
    for (_, n) in groups.iter_mut() {
        n.extend(names.iter().cloned());
    }
    let single = groups.len() == 1 && names.len() == 1;
    Ok(Targets { groups, single })
}

/// Filters shared by get, delete, label, annotate...: namespace scope, `-l`, `--field-selector`,
/// evaluated by the API server's LIST (field selectors support the fields upstream supports).
pub struct Filter {
    /// Namespace (None = all namespaces).
    pub namespace: Option<String>,
    /// `-l`.
    pub labels: Option<Selector>,
    /// `--field-selector`.
    pub fields: Option<FieldSelector>,
    label_text: String,
    field_text: String,
}

impl Filter {
    /// From flags.
    pub fn from_args(args: &Args, namespace: &str) -> Result<Filter, String> {
        let labels = match args.get("selector") {
            Some(s) => Some(Selector::parse(s).map_err(|e| format!("error: {e}"))?),
            None => None,
        };
        let fields = match args.get("field-selector") {
            Some(s) => Some(FieldSelector::parse(s).map_err(|e| format!("error: {e}"))?),
            None => None,
        };
        let namespace = if args.bool("all-namespaces") { None } else { Some(namespace.to_string()) };
        Ok(Filter {
            namespace,
            labels,
            fields,
            label_text: args.get("selector").unwrap_or("").to_string(),
            field_text: args.get("field-selector").unwrap_or("").to_string(),
        })
    }

    /// A filter for one namespace (or all) with no selectors.
    pub fn namespace_only(namespace: Option<String>) -> Filter {
        Filter { namespace, labels: None, fields: None, label_text: String::new(), field_text: String::new() }
    }

    /// The objects of a kind that pass the filter, or the error kubectl prints
    /// (resource/selector.go wraps BadRequest list errors with the selectors).
    pub fn list(&self, api: &ApiServer, info: &KindInfo) -> Result<Vec<Arc<Object>>, String> {
        match api.list(info, self.namespace.as_deref(), self.labels.as_ref(), self.fields.as_ref()) {
            Ok((items, _)) => Ok(items.into_iter().filter(|o| o.kind() == info.kind).collect()),
            Err(mut e) => {
                let gvr = match info.api_version.split_once('/') {
                    Some((g, v)) => format!("{{{g:?} {v:?} {:?}}}", info.plural),
                    None => format!("{{\"\" {:?} {:?}}}", info.api_version, info.plural),
                };
                e.message = if self.label_text.is_empty() && self.field_text.is_empty() {
                    format!("Unable to list {gvr}: {}", e.message)
                } else {
                    format!("Unable to find {gvr} that match label selector {:?}, field selector {:?}: {}", self.label_text, self.field_text, e.message)
                };
                Err(server_error(&e))
            }
        }
    }
}

/// Resolves targets to objects; NotFound errors go to `out` (exit 1) as kubectl prints them.
pub fn collect(api: &ApiServer, targets: &Targets, filter: &Filter, namespace: &str, out: &mut Output) -> Vec<(&'static KindInfo, Vec<Arc<Object>>)> {
    let mut result = Vec::new();
    for (info, names) in &targets.groups {
        if names.is_empty() {
            match filter.list(api, info) {
                Ok(objects) => result.push((*info, objects)),
                Err(e) => out.fail(e),
            }
            continue;
        }
        let mut objects = Vec::new();
        for name in names {
            let ns = util::namespace_for(info, namespace);
            match api.get(info, &ns, name) {
                Ok(o) => objects.push(o),
                Err(e) => out.fail(server_error(&e)),
            }
        }
        result.push((*info, objects));
    }
    result
}

/// `-f` targets as [`Targets`] (kinds in file order; one object = single-object output).
pub fn file_groups(files: &[(&'static KindInfo, String, String)]) -> Targets {
    let mut groups: Vec<(&'static KindInfo, Vec<String>)> = Vec::new();
    for (info, _, name) in files {
        match groups.iter_mut().find(|(i, _)| std::ptr::eq(*i, *info)) {
            Some((_, names)) => names.push(name.clone()),
            None => groups.push((info, vec![name.clone()])),
        }
    }
    Targets { single: files.len() == 1, groups }
}

/// GETs the objects `-f` named, grouped by kind in file order; NotFound errors go to `out`.
pub fn collect_files(api: &ApiServer, files: &[(&'static KindInfo, String, String)], out: &mut Output) -> Vec<(&'static KindInfo, Vec<Arc<Object>>)> {
    let mut result: Vec<(&'static KindInfo, Vec<Arc<Object>>)> = Vec::new();
    for (info, ns, name) in files {
        let index = match result.iter().position(|(i, _)| std::ptr::eq(*i, *info)) {
            Some(i) => i,
            None => {
                result.push((info, Vec::new()));
                result.len() - 1
            }
        };
        match api.get(info, ns, name) {
            Ok(o) => result[index].1.push(o),
            Err(e) => out.fail(server_error(&e)),
        }
    }
    result
}

/// The message get and describe print when nothing was found: get.go names the namespace
/// unless `-A` was given, whatever the kinds' scope (so `get pv` says "in default namespace").
pub fn no_resources(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("No resources found in {ns} namespace."),
        None => "No resources found".into(),
    }
}

/// The object as the API server's JSON encoding writes it ([`kubesim_api::object::go_encoding`]).
pub fn wire_form(info: &KindInfo, object: &Value) -> Value {
    let mut object = object.clone();
    kubesim_api::object::go_encoding(info.kind, &mut object);
    object
}

/// `kubectl get --raw PATH`: the API server's response body. Health endpoints (`/healthz`,
/// `/livez`, `/readyz`, `?verbose` listing the checks kubesim models) and resource paths
/// (`/api/v1/[namespaces/NS/]PLURAL[/NAME]`, `/apis/GROUP/VERSION/...`) as compact JSON with
/// encoding/json's trailing newline. Deviation: object keys come in sorted order rather than
/// Go's struct field order.
fn raw(path: &str, api: &ApiServer, out: &mut Output) {
    let not_found = |out: &mut Output| out.fail("Error from server (NotFound): the server could not find the requested resource");
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    let route = route.trim_end_matches('/');
    if let Some(check) = ["/healthz", "/livez", "/readyz"].iter().find(|h| **h == route) {
        if query.split('&').any(|q| q == "verbose" || q == "verbose=true" || q == "verbose=1") {
            let name = &check[1..];
            let mut text = String::from("[+]ping ok\n[+]log ok\n[+]etcd ok\n");
            if name == "readyz" {
                text.push_str("[+]informer-sync ok\n");
            }
            text.push_str(&format!("{name} check passed\n"));
            return out.out(text);
        }
        return out.out("ok");
    }
    let parts: Vec<&str> = route.trim_start_matches('/').split('/').collect();
    let (api_version, rest): (String, &[&str]) = match parts.as_slice() {
        ["api", v, rest @ ..] => (v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (format!("{g}/{v}"), rest),
        _ => return not_found(out),
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, rest @ ..] => (Some(*ns), std::iter::once(*plural).chain(rest.iter().copied()).collect::<Vec<_>>()),
        _ => (None, rest.to_vec()),
    };
    let Some(plural) = rest.first() else { return not_found(out) };
    let Some(info) = kubesim_api::object::all_kinds().find(|k| k.api_version == api_version && k.plural == *plural) else { return not_found(out) };
    match rest.get(1) {
        Some(name) if rest.len() == 2 => match api.get(info, namespace.unwrap_or(""), name) {
            Ok(o) => {
                let mut json = wire_form(info, &o.to_json());
                json["apiVersion"] = Value::String(info.api_version.to_string());
                json["kind"] = Value::String(info.kind.to_string());
                out.out(format!("{json}\n"));
            }
            Err(e) => out.fail(crate::util::server_error(&e)),
        },
        None => match api.list(info, namespace, None, None) {
            Ok((items, rv)) => {
                // A typed list's items carry no kind/apiVersion on the wire.
                let items: Vec<Value> = items
                    .iter()
                    .map(|o| {
                        let mut item = wire_form(info, &o.to_json());
                        if let Some(m) = item.as_object_mut() {
                            m.remove("kind");
                            m.remove("apiVersion");
                        }
                        item
                    })
                    .collect();
                let list = serde_json::json!({"apiVersion": info.api_version, "items": items, "kind": format!("{}List", info.kind), "metadata": {"resourceVersion": rv.to_string()}});
                out.out(format!("{list}\n"));
            }
            Err(e) => out.fail(crate::util::server_error(&e)),
        },
        _ => not_found(out),
    }
}

/// Output formats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// Default table.
    Table,
    /// `-o wide`.
    Wide,
    /// `-o yaml`.
    Yaml,
    /// `-o json`.
    Json,
    /// `-o name`.
    Name,
    /// `-o jsonpath=...`.
    JsonPath(String),
    /// `-o jsonpath-as-json=...`.
    JsonPathAsJson(String),
    /// `-o custom-columns=NAME:.path,...`.
    /// The columns and whether `--no-headers` drops the header row.
    CustomColumns(Vec<(String, String)>, bool),
    /// `-o go-template=...`, `-o template=...`, `--template ...` (and the `-file` forms, read
    /// already): the template text and whether missing keys are errors
    /// (`--allow-missing-template-keys=false`).
    GoTemplate(String, bool),
}

/// `-o`/`--template` as a [`Format`], with `--no-headers` for custom columns.
pub fn output_format(args: &Args, cluster: &dyn crate::ClusterView) -> Result<Format, String> {
    match output_format_inner(args, cluster) {
        Ok(Format::CustomColumns(columns, _)) => Ok(Format::CustomColumns(columns, args.bool("no-headers"))),
        other => other,
    }
}

/// The `-o`/`--template` formats of kubectl's PrintFlags (genericclioptions): a bare `--template`
/// means go-template; `-o go-template-file=F`, `-o templatefile=F`, `-o jsonpath-file=F` and
/// `-o custom-columns-file=F` read F; `-o go-template --template=T` and `-o jsonpath --template=T`
/// take the template from the flag.
fn output_format_inner(args: &Args, cluster: &dyn crate::ClusterView) -> Result<Format, String> {
    let template = args.get("template").filter(|t| !t.is_empty());
    let output = match args.get("output") {
        None | Some("") if template.is_some() => "go-template".to_string(),
        None => return Ok(Format::Table),
        Some(o) => o.to_string(),
    };
    let missing_error = args.get("allow-missing-template-keys") == Some("false");
    let read = |path: &str, what: &str| -> Result<String, String> {
        cluster.read_file(path).map_err(|_| format!("error: error reading {what} {path}, open {path}: no such file or directory"))
    };
    let (name, value) = match output.split_once('=') {
        Some((n, v)) => (n.to_string(), Some(v.to_string())),
        None => (output.clone(), None),
    };
    let value = value.filter(|v| !v.is_empty()).or_else(|| template.map(str::to_string));
    match name.as_str() {
        "go-template" | "template" | "go-template-file" | "templatefile" => {
            let Some(text) = value else { return Err("error: template format specified but no template given".into()) };
            let text = if name.ends_with("file") { read(&text, "--template")? } else { text };
            crate::gotemplate::Template::parse(&text).map_err(|e| format!("error: error parsing template {text}, {e}"))?;
            Ok(Format::GoTemplate(text, missing_error))
        }
        "jsonpath" | "jsonpath-file" | "jsonpath-as-json" if output.contains('=') || template.is_some() => {
            let Some(text) = value else { return Err("error: template format specified but no template given".into()) };
            let text = if name == "jsonpath-file" { read(&text, "--template")?.trim_end_matches('\n').to_string() } else { text };
            Ok(if name == "jsonpath-as-json" { Format::JsonPathAsJson(text) } else { Format::JsonPath(text) })
        }
        "custom-columns-file" => {
            let Some(path) = value else { return Err("error: custom-columns format specified but no custom columns given".into()) };
            let text = read(&path, "file")?;
            let mut lines = text.lines().filter(|l| !l.trim().is_empty());
            let headers: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
            let paths: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
            if headers.len() != paths.len() {
                return Err(format!("error: number of columns in header ({}) does not match number of columns in template ({})", headers.len(), paths.len()));
            }
            Ok(Format::CustomColumns(headers.iter().zip(paths).map(|(h, p)| (h.to_string(), p.to_string())).collect(), false))
        }
        _ => parse_format(Some(&output)),
    }
}

/// Parses `-o`.
pub fn parse_format(output: Option<&str>) -> Result<Format, String> {
    let Some(output) = output else { return Ok(Format::Table) };
    Ok(match output {
        "" => Format::Table,
        "wide" => Format::Wide,
        "yaml" => Format::Yaml,
        "json" => Format::Json,
        "name" => Format::Name,
        o if o.starts_with("jsonpath=") => Format::JsonPath(o["jsonpath=".len()..].to_string()),
        o if o.starts_with("jsonpath-as-json=") => Format::JsonPathAsJson(o["jsonpath-as-json=".len()..].to_string()),
        "go-template" | "template" | "go-template-file" | "templatefile" | "jsonpath" | "jsonpath-file" => {
            return Err("error: template format specified but no template given".into())
        }
        o if o.starts_with("go-template=") || o.starts_with("template=") => {
            let text = o.split_once('=').map(|(_, t)| t.to_string()).unwrap_or_default();
            if text.is_empty() {
                return Err("error: template format specified but no template given".into());
            }
            crate::gotemplate::Template::parse(&text).map_err(|e| format!("error: error parsing template {text}, {e}"))?;
            Format::GoTemplate(text, false)
        }
        o if o.starts_with("custom-columns=") => {
            let spec = &o["custom-columns=".len()..];
            let mut columns = Vec::new();
            for col in spec.split(',') {
                let (name, path) = col.split_once(':').ok_or_else(|| format!("error: unexpected custom-columns spec: {col}, expected <header>:<json-path-expr>"))?;
                columns.push((name.to_string(), path.to_string()));
            }
            Format::CustomColumns(columns, false)
        }
        other => {
            return Err(format!(
                "error: unable to match a printer suitable for the output format \"{other}\", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"
            ))
        }
    })
}

/// JSON with 4-space indentation, as kubectl prints it.
pub fn to_json_pretty(value: &Value) -> String {
    use serde::Serialize as _;
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
    let _ = value.serialize(&mut ser);
    let mut s = String::from_utf8(buf).unwrap_or_default();
    s.push('\n');
    s
}

/// Prints objects in a non-table format (yaml, json, name, jsonpath, custom-columns, go-template).
pub fn print_objects(format: &Format, objects: &[(&'static KindInfo, Arc<Object>)], single: bool, out: &mut Output) {
    let values: Vec<(&'static KindInfo, Value)> = objects.iter().map(|(i, o)| (*i, o.to_json())).collect();
    print_values(format, &values, single, out)
}

/// [`print_objects`] for objects already serialized (generated objects keep kubectl's
/// `creationTimestamp: null`).
/// Prints one JSON document in a format that renders a document as a whole (`-o yaml`, `json`,
/// `jsonpath=`, `jsonpath-as-json=`, `go-template=`); false for the others (tables, names,
/// custom columns), which need the objects' kinds.
pub fn print_document(format: &Format, value: &Value, out: &mut Output) -> bool {
    match format {
        Format::Yaml => out.out(to_yaml(value)),
        Format::Json => out.out(to_json_pretty(value)),
        Format::JsonPath(template) => match jsonpath::evaluate(template, value) {
            Ok(text) => out.out(text),
            Err(e) => out.fail(format!("error: {e}")),
        },
        Format::JsonPathAsJson(template) => match jsonpath::evaluate_values(template, value) {
            Ok(values) => out.out(to_json_pretty(&Value::Array(values))),
            Err(e) => out.fail(format!("error: {e}")),
        },
        Format::GoTemplate(template, missing_error) => {
            let missing = if *missing_error { crate::gotemplate::MissingKey::Error } else { crate::gotemplate::MissingKey::Default };
            match crate::gotemplate::print(template, value, missing) {
                Ok(text) => out.out(text),
                Err((stdout, error)) => {
                    out.out(stdout);
                    out.fail(error);
                }
            }
        }
        _ => return false,
    }
    true
}

pub fn print_values(format: &Format, objects: &[(&'static KindInfo, Value)], single: bool, out: &mut Output) {
    let wire: Vec<(&'static KindInfo, Value)> = objects.iter().map(|(info, o)| (*info, wire_form(info, o))).collect();
    let objects = &wire[..];
    let value = || {
        if single && objects.len() == 1 {
            objects[0].1.clone()
        } else {
            serde_json::json!({
                "apiVersion": "v1",
                "items": objects.iter().map(|(_, o)| o.clone()).collect::<Vec<_>>(),
                "kind": "List",
                "metadata": {"resourceVersion": ""},
            })
        }
    };
    match format {
        Format::Yaml | Format::Json | Format::JsonPath(_) | Format::JsonPathAsJson(_) | Format::GoTemplate(..) => {
            print_document(format, &value(), out);
        }
        Format::Name => {
            for (info, o) in objects {
                out.outln(type_name(info, o.pointer("/metadata/name").and_then(|n| n.as_str()).unwrap_or("")));
            }
        }
        Format::CustomColumns(columns, no_headers) => {
            let mut rows = if *no_headers { Vec::new() } else { vec![columns.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>()] };
            for (_, json) in objects {
                rows.push(
                    columns
                        .iter()
                        .map(|(_, path)| {
                            // customcolumn.go: each result printed with %v (maps as
                            // `map[k:v]`, lists as `[a b]`), several joined with ",".
                            let template = if path.starts_with('{') { path.clone() } else { format!("{{{path}}}") };
                            match jsonpath::evaluate_values(&template, json) {
                                Ok(values) if !values.is_empty() => {
                                    values.iter().map(|v| crate::gotemplate::format_v(&crate::gotemplate::Val::from_json(v))).collect::<Vec<_>>().join(",")
                                }
                                _ => "<none>".to_string(),
                            }
                        })
                        .collect(),
                );
            }
            out.out(printers::render(&rows));
        }
        Format::Table | Format::Wide => {}
    }
}

/// Builds the table for one kind.
pub fn table(info: &KindInfo, objects: &[Arc<Object>], args: &Args, now: u64, with_kind: bool, all_namespaces: bool) -> Table {
    let wide = args.get("output") == Some("wide");
    let mut headers: Vec<String> = if info.kind == "Event" && wide {
        printers::EVENT_WIDE_HEADERS.iter().map(|s| s.to_string()).collect()
    } else {
        printers::headers(info, wide).iter().map(|s| s.to_string()).collect()
    };
    let namespaced_column = all_namespaces && info.scope == Scope::Namespaced;
    if namespaced_column {
        headers.insert(0, "NAMESPACE".into());
    }
    let label_columns: Vec<String> = args.all("label-columns").iter().flat_map(|v| v.split(',')).map(str::to_string).collect();
    for l in &label_columns {
        headers.push(l.rsplit('/').next().unwrap_or(l).to_ascii_uppercase());
    }
    let show_labels = args.bool("show-labels");
    if show_labels {
        headers.push("LABELS".into());
    }
    let name_column = headers.iter().position(|h| h == "NAME");
    let mut rows = Vec::new();
    for o in objects {
        let mut row = printers::row(o, now, wide);
        if namespaced_column {
            row.insert(0, o.namespace().to_string());
        }
        if with_kind {
            if let Some(i) = name_column {
                if info.kind != "Event" || wide {
                    row[i] = format!("{}/{}", kind_group(info), row[i]);
                }
            }
        }
        for l in &label_columns {
            row.push(o.metadata().labels.as_ref().and_then(|m| m.get(l)).cloned().unwrap_or_default());
        }
        if show_labels {
            row.push(util::format_labels(o.metadata().labels.as_ref()));
        }
        rows.push(row);
    }
    Table { headers, rows }
}

/// `kubectl get`.
pub fn run(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn crate::ClusterView, namespace: &str, out: &mut Output) {
    if let Some(path) = args.get("raw") {
        // get.go Validate.
        if !args.positional.is_empty() {
            return out.fail("error: arguments may not be passed when --raw is specified");
        }
        return raw(path, api, out);
    }
    let format = match output_format(args, cluster) {
        Ok(f) => f,
        Err(e) => return out.fail(e),
    };
    let targets = match &args.file_targets {
        Some(files) => file_groups(files),
        None => match parse_targets(&args.positional) {
            Ok(t) => t,
            Err(e) => return out.fail(e),
        },
    };
    let filter = match Filter::from_args(args, namespace) {
        Ok(f) => f,
        Err(e) => return out.fail(e),
    };
    let mut groups = match &args.file_targets {
        Some(files) => collect_files(api, files, out),
        None => collect(api, &targets, &filter, namespace, out),
    };
    // --subresource=scale: the autoscaling/v1 Scale of each object (printScale: NAME DESIRED
    // AVAILABLE AGE).
    if args.get("subresource") == Some("scale") {
        let mut scales: Vec<(&'static KindInfo, Value)> = Vec::new();
        for (info, objects) in &groups {
            for o in objects {
                match api.get_scale(info, o.namespace(), o.name()) {
                    Ok(s) => scales.push((*info, s)),
                    Err(e) => out.fail(server_error(&e)),
                }
            }
        }
        match &format {
            Format::Table | Format::Wide => {
                let mut rows = vec![vec!["NAME".to_string(), "DESIRED".into(), "AVAILABLE".into(), "AGE".into()]];
                for (_, s) in &scales {
                    let created: Option<kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time> =
                        s.pointer("/metadata/creationTimestamp").and_then(|t| serde_json::from_value(t.clone()).ok());
                    rows.push(vec![
                        util::jstr(s, "metadata.name").unwrap_or("").to_string(),
                        util::jint(s, "spec.replicas").to_string(),
                        util::jint(s, "status.replicas").to_string(),
                        util::age(created.as_ref(), req.now),
                    ]);
                }
                if !scales.is_empty() {
                    out.out(printers::render(&rows));
                }
            }
            Format::Name => {
                for (_, s) in &scales {
                    out.outln(format!("scale.autoscaling/{}", util::jstr(s, "metadata.name").unwrap_or("")));
                }
            }
            other => print_values(other, &scales, targets.single, out),
        }
        return;
    }
    if let Some(sort_by) = args.get("sort-by") {
        let template = if sort_by.starts_with('{') { sort_by.to_string() } else { format!("{{{sort_by}}}") };
        // TableSorter / RuntimeSort: sort.Sort with isLess on the first value the path finds.
        for (_, objects) in groups.iter_mut() {
            let mut keyed: Vec<(Option<serde_json::Value>, Arc<Object>)> =
                objects.drain(..).map(|o| (jsonpath::evaluate_values(&template, &o.to_json()).ok().and_then(|v| v.into_iter().next()), o)).collect();
            kubesim_api::sort::go_sort_by(&mut keyed, |a, b| sort_less(a.0.as_ref(), b.0.as_ref()));
            objects.extend(keyed.into_iter().map(|(_, o)| o));
        }
    }
    if args.bool("watch") || args.bool("watch-only") {
        return watch(args, api, &targets, &filter, &groups, &format, req.now, out);
    }
    let total: usize = groups.iter().map(|(_, o)| o.len()).sum();
    let names_requested = targets.groups.iter().any(|(_, n)| !n.is_empty());
    if total == 0 && !names_requested {
        match format {
            // printGeneric: an empty List for yaml/json, nothing at all for name/jsonpath.
            Format::Json | Format::Yaml | Format::GoTemplate(..) | Format::JsonPath(_) => print_objects(&format, &[], false, out),
            // get.go prints this only when nothing failed.
            Format::Table | Format::Wide if out.exit_code == 0 => out.errln(no_resources(filter.namespace.as_deref())),
            _ => {}
        }
        return;
    }
    // multipleGVKsRequested: `kind/name` only when the results span several kinds.
    let kinds_found = groups.iter().filter(|(_, o)| !o.is_empty()).count();
    let with_kind = kinds_found > 1 || args.bool("show-kind");
    match &format {
        Format::Table | Format::Wide => {
            let no_headers = args.bool("no-headers");
            let mut first = true;
            for (info, objects) in &groups {
                if objects.is_empty() {
                    continue;
                }
                if !first {
                    out.out("\n");
                }
                first = false;
                let t = table(info, objects, args, req.now, with_kind, filter.namespace.is_none());
                out.out(t.render(no_headers));
            }
        }
        other => {
            let flat: Vec<(&'static KindInfo, Arc<Object>)> = groups.iter().flat_map(|(i, os)| os.iter().map(move |o| (*i, o.clone()))).collect();
            print_objects(other, &flat, targets.single, out);
        }
    }
}

/// get.go watch: one kind only; the current objects (unless `--watch-only`) without "No
/// resources found" for none, then a [`crate::Follow`] printing every change.
#[allow(clippy::too_many_arguments)]
fn watch(
    args: &Args,
    api: &ApiServer,
    targets: &Targets,
    filter: &Filter,
    groups: &[(&'static KindInfo, Vec<Arc<Object>>)],
    format: &Format,
    now: u64,
    out: &mut Output,
) {
    let kinds: Vec<&'static KindInfo> = targets.groups.iter().map(|(info, _)| *info).collect();
    let Some(info) = kinds.first().copied() else { return };
    if kinds.iter().any(|k| *k != info) {
        return out.fail("error: watch is only supported on individual resources and resource collections - more than 1 resource was found");
    }
    if out.exit_code != 0 {
        return; // r.Infos() failed (a named object not found)
    }
    let objects: Vec<Arc<Object>> = groups.iter().flat_map(|(_, o)| o.iter().cloned()).collect();
    let mut printed = 0;
    if !args.bool("watch-only") && !objects.is_empty() {
        match format {
            Format::Table | Format::Wide => {
                let t = table(info, &objects, args, now, args.bool("show-kind"), filter.namespace.is_none());
                out.out(t.render(args.bool("no-headers")));
            }
            other => {
                for (i, o) in objects.iter().enumerate() {
                    if matches!(other, Format::Yaml) && i > 0 {
                        out.out("---\n");
                    }
                    print_objects(other, &[(info, o.clone())], true, out);
                }
            }
        }
        printed = objects.len();
    }
    let names: Vec<String> = targets.groups.iter().flat_map(|(_, n)| n.iter().cloned()).collect();
    out.follow = Some(crate::Follow::watch(args, info, filter.namespace.clone(), names, api.store().revision(), printed));
}

/// get/sorter.go's Less over unstructured values: an object the path finds nothing in sorts
/// first (`true` even against another such object, as upstream); then isLess on the
/// interface values: nil before non-nil, numbers of one Go type by value, strings as
/// quantities when both parse (`100m` < `2`), else bytewise. Other pairings (mixed number
/// types, booleans, maps, lists) make kubectl exit with "unsortable type"; here they are not
/// less.
fn sort_less(a: Option<&serde_json::Value>, b: Option<&serde_json::Value>) -> bool {
    use serde_json::Value;
    let Some(a) = a else { return true };
    let Some(b) = b else { return false };
    match (a, b) {
        (Value::Null, Value::Null) => false,
        (Value::Null, _) => true,
        (_, Value::Null) => false,
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x < y,
            (None, None) => x.as_f64().unwrap_or(0.0) < y.as_f64().unwrap_or(0.0),
            _ => false,
        },
        (Value::String(x), Value::String(y)) => match (kubesim_api::quantity::parse_exact(x), kubesim_api::quantity::parse_exact(y)) {
            (Ok((mx, ex, _)), Ok((my, ey, _))) => quantity_cmp((mx, ex), (my, ey)).is_lt(),
            _ => x < y,
        },
        _ => false,
    }
}

/// Quantity.Cmp of two exact decimals `m × 10^e`.
fn quantity_cmp(a: (i128, i32), b: (i128, i32)) -> std::cmp::Ordering {
    let e = a.1.min(b.1);
    let scale = |(m, x): (i128, i32)| 10i128.checked_pow((x - e) as u32).and_then(|p| m.checked_mul(p));
    match (scale(a), scale(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => (a.0 as f64 * 10f64.powi(a.1)).partial_cmp(&(b.0 as f64 * 10f64.powi(b.1))).unwrap_or(std::cmp::Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    // sorter_test.go TestSortingPrinter-style cases for isLess: quantities compare by value
    // when both parse, names bytewise, missing values first, numbers by value.
    #[test]
    fn sort_by_compares_like_is_less() {
        use serde_json::json;
        let less = |a: serde_json::Value, b: serde_json::Value| super::sort_less(Some(&a), Some(&b));
        assert!(less(json!("100m"), json!("2")));
        assert!(!less(json!("2"), json!("100m")));
        assert!(less(json!("1Gi"), json!("1100M")));
        assert!(less(json!("node-1"), json!("node-2")));
        assert!(less(json!("Pending"), json!("Running")));
        assert!(less(json!(2), json!(10)));
        assert!(less(json!(null), json!("a")));
        assert!(super::sort_less(None, None));
        assert!(!super::sort_less(Some(&json!("a")), None));
        assert!(!less(json!(true), json!(false)));
    }
}
