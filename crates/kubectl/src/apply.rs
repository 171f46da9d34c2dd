//! `kubectl apply -f` and `kubectl create -f` (staging/src/k8s.io/kubectl/pkg/cmd/apply/apply.go,
//! apply/patcher.go, pkg/util/apply.go GetModifiedConfiguration): per-document results, valid
//! documents applied even when others fail.

use crate::merge;
use crate::util::{self, kind_group};
use kubesim_api::decode::{decode_document, parse_documents, unknown_fields, DecodeError, Document};
use kubesim_api::object::{KindInfo, Object, Scope};
use kubesim_apiserver::{ApiServer, Request};
use serde_json::Value;

/// The annotation client-side apply keeps the last applied configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What apply did to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyAction {
    /// The object did not exist and was created.
    Created,
    /// The object existed and was changed.
    Configured,
    /// The object existed and the configuration changed nothing.
    Unchanged,
}

impl ApplyAction {
    /// The word kubectl prints.
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyAction::Created => "created",
            ApplyAction::Configured => "configured",
            ApplyAction::Unchanged => "unchanged",
        }
    }
}

/// The result of applying one object (one document, or one item of a `List` document).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyResult {
    /// The file name as given.
    pub file: String,
    /// 1-based document index within the file (0 if the file failed as a whole).
    pub document: usize,
    /// 1-based line where the document (or, for syntax errors, the error) is (0 if unknown);
    /// for editors that mark the offending document.
    pub line: usize,
    /// The object's kind, when the document got that far (`Deployment`).
    pub kind: Option<String>,
    /// `kind.group` as kubectl prints it (`deployment.apps`), when known.
    pub kind_group: Option<String>,
    /// The object's name, when known.
    pub name: Option<String>,
    /// The object's namespace ("" for cluster-scoped), when known.
    pub namespace: Option<String>,
    /// What happened, or the error exactly as kubectl prints it.
    pub outcome: Result<ApplyAction, String>,
    /// The field an error is about (`spec.replicas`, `spec.containers[0].image`), where known:
    /// from the decoder, or the first field of an Invalid error; for editors to highlight.
    pub field_path: Option<String>,
    /// Warnings kubectl prints to stderr (`Warning: unknown field "spec.foo"`).
    pub warnings: Vec<String>,
    /// The object as written (or, in a dry run, as it would be), for `-o yaml|json|go-template`.
    pub object: Option<Value>,
}

impl ApplyResult {
    /// The line kubectl prints: `deployment.apps/web configured`, or the error.
    pub fn line(&self) -> String {
        match &self.outcome {
            Ok(action) => format!("{}/{} {}", self.kind_group.as_deref().unwrap_or(""), self.name.as_deref().unwrap_or(""), action.as_str()),
            Err(message) => message.clone(),
        }
    }

    fn error(file: &str, document: usize, line: usize, message: String) -> ApplyResult {
        ApplyResult {
            file: file.to_string(),
            document,
            line,
            kind: None,
            kind_group: None,
            name: None,
            namespace: None,
            outcome: Err(message),
            field_path: None,
            warnings: Vec::new(),
            object: None,
        }
    }
}

/// How `-f` input is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `kubectl apply`: create or three-way merge, recording last-applied.
    Apply,
    /// `kubectl create`: create only.
    Create,
    /// `kubectl replace`: PUT the object as given.
    Replace,
}

/// Options for [`apply_documents`].
#[derive(Clone, Debug)]
pub struct ApplyOptions<'a> {
    /// Namespace for namespaced objects that name none.
    pub namespace: &'a str,
    /// Whether `-n` was given explicitly (a document naming another namespace is an error).
    pub enforce_namespace: bool,
    /// Apply, create or replace.
    pub mode: Mode,
    /// `--validate`: `strict` turns unknown fields into errors, `ignore`/`false` silences them.
    pub validate: &'a str,
    /// `--dry-run=client|server`: compute results without writing.
    pub dry_run: bool,
    /// `kubectl create --save-config`: record the last-applied annotation on create too.
    pub save_config: bool,
    /// `kubectl apply --server-side`: no last-applied annotation; fields are merged into the
    /// live object (kubesim models field ownership as "the applier owns what it sets").
    pub server_side: bool,
}

/// kubectl apply -f semantics for already-read text (used by the CLI for input files at t=0 and
/// by the UI editor): each document is created or updated; failures are reported per document
/// (file, document index, line, field path, API message) and valid documents are still applied.
/// Returns per-document results in order.
pub fn apply_text(file: &str, text: &str, default_namespace: &str, api: &mut ApiServer, req: &mut Request) -> Vec<ApplyResult> {
    let options = ApplyOptions {
        namespace: default_namespace,
        enforce_namespace: false,
        mode: Mode::Apply,
        validate: "warn",
        dry_run: false,
        save_config: false,
        server_side: false,
    };
    apply_documents(file, text, &options, api, req)
}

/// [`apply_text`] with every option.
pub fn apply_documents(file: &str, text: &str, options: &ApplyOptions, api: &mut ApiServer, req: &mut Request) -> Vec<ApplyResult> {
    let (documents, syntax_errors) = parse_documents(file, text);
    let mut results = Vec::new();
    // Syntax errors stop the stream; they come after the documents parsed before them.
    let mut pending: Vec<(usize, Result<Document, DecodeError>)> = documents.into_iter().map(|d| (d.index, Ok(d))).collect();
    for e in syntax_errors {
        pending.push((e.document.unwrap_or(0), Err(e)));
    }
    kubesim_api::sort::sort_by_key(&mut pending, |(i, _)| *i);
    for (index, document) in pending {
        match document {
            Err(e) => {
                let mut r = ApplyResult::error(file, index, e.line.unwrap_or(0), e.to_string());
                r.field_path = e.field_path.clone();
                results.push(r);
            }
            Ok(document) => apply_document(file, &document, options, api, req, &mut results),
        }
    }
    results
}

fn apply_document(file: &str, document: &Document, options: &ApplyOptions, api: &mut ApiServer, req: &mut Request, results: &mut Vec<ApplyResult>) {
    apply_document_at(file, document, None, options, api, req, results)
}

/// `path` is the field path of a `List` item (`items[2]`) for error messages.
fn apply_document_at(
    file: &str,
    document: &Document,
    path: Option<&str>,
    options: &ApplyOptions,
    api: &mut ApiServer,
    req: &mut Request,
    results: &mut Vec<ApplyResult>,
) {
    // A v1 List applies item by item.
    let is_list =
        document.value.get("kind").and_then(|k| k.as_str()) == Some("List") && document.value.get("apiVersion").and_then(|k| k.as_str()) == Some("v1");
    if is_list {
        if let Some(items) = document.value.get("items").and_then(|i| i.as_array()) {
            for (i, item) in items.iter().enumerate() {
                let inner = Document { index: document.index, line: document.line, value: item.clone() };
                let item_path = match path {
                    Some(p) => format!("{p}.items[{i}]"),
                    None => format!("items[{i}]"),
                };
                apply_document_at(file, &inner, Some(&item_path), options, api, req, results);
            }
            return;
        }
    }
    let objects = match decode_document(file, document) {
        Ok(objects) => objects,
        Err(mut e) => {
            if let Some(prefix) = path {
                e.field_path = Some(match e.field_path.take() {
                    Some(p) => format!("{prefix}.{p}"),
                    None => prefix.to_string(),
                });
            }
            let mut result = ApplyResult::error(file, document.index, document.line, e.to_string());
            result.field_path = e.field_path.clone();
            if let Some(kind) = document.value.get("kind").and_then(|k| k.as_str()) {
                result.kind = Some(kind.to_string());
            }
            result.name = document.value.pointer("/metadata/name").and_then(|n| n.as_str()).map(str::to_string);
            results.push(result);
            return;
        }
    };
    for object in objects {
        results.push(apply_object(file, document, object, options, api, req));
    }
}

fn apply_object(file: &str, document: &Document, object: Object, options: &ApplyOptions, api: &mut ApiServer, req: &mut Request) -> ApplyResult {
    let mut result = apply_object_inner(file, document, object, options, api, req);
    if result.field_path.is_none() {
        if let Err(message) = &result.outcome {
            result.field_path = invalid_field(message);
        }
    }
    result
}

/// The first field of an API server Invalid message (`... is invalid: spec.replicas: ...` or
/// `... is invalid: [spec.a: ..., spec.b: ...]`).
fn invalid_field(message: &str) -> Option<String> {
    let rest = message.rsplit_once(" is invalid: ")?.1;
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    let (path, _) = rest.split_once(": ")?;
    Some(path.to_string()).filter(|p| !p.contains(' '))
}

fn apply_object_inner(file: &str, document: &Document, mut object: Object, options: &ApplyOptions, api: &mut ApiServer, req: &mut Request) -> ApplyResult {
    let info: &'static KindInfo = match object.info() {
        Some(info) => info,
        None => return ApplyResult::error(file, document.index, document.line, format!("error: {file}: no kind {:?} is registered", object.kind())),
    };
    let mut result = ApplyResult {
        file: file.to_string(),
        document: document.index,
        line: document.line,
        kind: Some(info.kind.to_string()),
        kind_group: Some(kind_group(info)),
        name: Some(object.name().to_string()),
        namespace: None,
        outcome: Err(String::new()),
        field_path: None,
        warnings: Vec::new(),
        object: None,
    };
    let unknown = unknown_fields(&document.value, &object);
    match options.validate {
        "ignore" | "false" => {}
        "strict" | "true" if !unknown.is_empty() => {
            let list: Vec<String> = unknown.iter().map(|f| format!("unknown field {f:?}")).collect();
            result.outcome = Err(format!(
                "Error from server (BadRequest): error when creating {file:?}: {} in version {:?} cannot be handled as a {}: strict decoding error: {}",
                info.kind,
                info.api_version.rsplit('/').next().unwrap_or(info.api_version),
                info.kind,
                list.join(", ")
            ));
            return result;
        }
        _ => result.warnings.extend(unknown.iter().map(|f| format!("Warning: unknown field {f:?}"))),
    }
    // The builder's namespace handling (resource.Builder NamespaceParam + DefaultNamespace).
    let mut raw = document.value.clone();
    if info.scope == Scope::Namespaced {
        let given = object.namespace().to_string();
        if given.is_empty() {
            object.metadata_mut().namespace = Some(options.namespace.to_string());
            if let Some(meta) = raw.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                meta.insert("namespace".into(), Value::String(options.namespace.to_string()));
            }
        } else if options.enforce_namespace && given != options.namespace {
            result.outcome = Err(format!(
                "error: the namespace from the provided object {given:?} does not match the namespace {:?}. You must pass '--namespace={given}' to perform this operation.",
                options.namespace
            ));
            return result;
        }
    }
    if info.scope == Scope::Cluster {
        // The API server ignores a namespace on cluster-scoped objects.
        object.metadata_mut().namespace = None;
    }
    let namespace = util::namespace_for(info, object.namespace());
    result.namespace = Some(namespace.clone());
    let name = object.name().to_string();
    if name.is_empty() && options.mode != Mode::Create {
        result.outcome = Err(if object.metadata().generate_name.is_some() {
            format!("error: from {file}: cannot use generate name with apply")
        } else {
            format!("error: error when retrieving current configuration of:\nResource: \"{}\", GroupVersionKind: \"{}\"\nName: \"\", Namespace: {namespace:?}\nfrom server for: {file:?}: resource name may not be empty", resource_string(info), gvk_string(info))
        });
        return result;
    }
    if object.resource_version() != "" && options.mode == Mode::Create {
        result.outcome =
            Err(format!("Error from server (BadRequest): error when creating {file:?}: resourceVersion should not be set on objects to be created"));
        return result;
    }
    if (options.mode == Mode::Apply && !options.server_side) || options.save_config {
        let annotation = last_applied_json(&raw);
        object.metadata_mut().annotations.get_or_insert_with(Default::default).insert(LAST_APPLIED.into(), annotation);
    }
    let current = if name.is_empty() { None } else { api.get(info, &namespace, &name).ok() };
    match (options.mode, current) {
        (Mode::Apply | Mode::Create, None) => {
            if options.dry_run {
                result.object = Some(object.to_json());
                result.outcome = match dry_run_create(api, object) {
                    Ok(()) => Ok(ApplyAction::Created),
                    Err(e) => Err(server_error_when(&e, "creating", file)),
                };
                return result;
            }
            result.outcome = match api.create(object, req) {
                Ok(created) => {
                    result.name = Some(created.name().to_string());
                    result.object = Some(created.to_json());
                    Ok(ApplyAction::Created)
                }
                Err(e) => Err(server_error_when(&e, "creating", file)),
            };
        }
        (Mode::Create, Some(_)) => {
            result.outcome =
                Err(format!("Error from server (AlreadyExists): error when creating {file:?}: {} {name:?} already exists", info.qualified_resource()));
        }
        (Mode::Replace, None) => {
            result.outcome = Err(format!("Error from server (NotFound): error when replacing {file:?}: {} {name:?} not found", info.qualified_resource()));
        }
        (Mode::Replace, Some(_)) => {
            object.metadata_mut().resource_version = None;
            result.object = Some(object.to_json());
            result.outcome = match if options.dry_run {
                util::dry_run_update(api, &object)
            } else {
                util::update(api, object, req).map(|written| result.object = Some(written.to_json()))
            } {
                Ok(()) => Ok(ApplyAction::Configured),
                Err(e) => Err(server_error_when(&e, "replacing", file)),
            };
        }
        (Mode::Apply, Some(current)) => {
            let current_json = current.to_json();
            let recorded = current.metadata().annotations.as_ref().and_then(|a| a.get(LAST_APPLIED));
            if recorded.is_none() && !options.server_side {
                result.warnings.push(format!(
                    "Warning: resource {}/{name} is missing the {LAST_APPLIED} annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.",
                    info.qualified_resource()
                ));
            }
            let original: Option<Value> = if options.server_side { None } else { recorded.and_then(|text| serde_json::from_str(text).ok()) };
            let modified = object.to_json();
            let mut merged = merge::three_way(original.as_ref(), &modified, Some(&current_json));
            if info.kind == "Pod" {
                readmit_default_tolerations(&mut merged, &current_json);
            }
            // The server owns status; apply never writes it.
            if let (Some(m), Some(status)) = (merged.as_object_mut(), current_json.get("status")) {
                m.insert("status".into(), status.clone());
            }
            let merged_object = match util::from_json(info, merged.clone()) {
                Ok(o) => o,
                Err(e) => {
                    result.outcome = Err(format!("error: {file}: {e}"));
                    return result;
                }
            };
            // Compare as the API server would store it (defaults applied), so a no-op apply
            // neither writes nor reports a change.
            let mut defaulted = merged_object.clone();
            kubesim_api::defaults::apply_defaults(&mut defaulted);
            if merged_object.to_json() == current_json || defaulted.to_json() == current_json {
                result.object = Some(current_json);
                result.outcome = Ok(ApplyAction::Unchanged);
                return result;
            }
            if options.dry_run {
                result.object = Some(merged.clone());
                result.outcome = match util::dry_run_update(api, &defaulted) {
                    Ok(()) => Ok(ApplyAction::Configured),
                    Err(e) => Err(server_error_when(&e, "patching", file)),
                };
                return result;
            }
            let mut to_write = merged_object;
            to_write.metadata_mut().resource_version = current.metadata().resource_version.clone();
            result.outcome = match util::update(api, to_write, req) {
                Ok(written) => {
                    result.object = Some(written.to_json());
                    Ok(ApplyAction::Configured)
                }
                Err(e) => {
                    let patch = merge::diff(&current_json, &merged);
                    Err(format!(
                        "Error from server ({}): error when applying patch:\n{}\nto:\nResource: \"{}\", GroupVersionKind: \"{}\"\nName: {name:?}, Namespace: {namespace:?}\nfor: {file:?}: error when patching {file:?}: {}",
                        e.reason,
                        serde_json::to_string(&patch).unwrap_or_default(),
                        resource_string(info),
                        gvk_string(info),
                        e.message
                    ))
                }
            };
        }
    }
    result
}

/// What a server-side dry-run create checks without writing: the namespace, defaulting and
/// validation (admission that needs cluster state is not re-run).
fn dry_run_create(api: &ApiServer, object: Object) -> Result<(), kubesim_apiserver::ApiError> {
    let info = object.info().expect("decoded objects have a registered kind");
    if info.scope == Scope::Namespaced {
        let ns_info = kubesim_api::object::kind_info("v1", "Namespace").expect("namespaces are served");
        if api.get(ns_info, "", object.namespace()).is_err() {
            return Err(kubesim_apiserver::ApiError::not_found("namespaces", object.namespace()));
        }
    }
    let mut object = object;
    kubesim_api::defaults::apply_defaults(&mut object);
    // The server-side strategy's PrepareForCreate needs a uid (a Job's generated selector).
    object.metadata_mut().uid.get_or_insert_with(|| "00000000-0000-0000-0000-000000000000".into());
    kubesim_api::defaults::prepare_job_for_create(&mut object);
    let errors = kubesim_api::validation::validate_create(&object);
    if !errors.is_empty() {
        return Err(kubesim_apiserver::ApiError::invalid(kubesim_api::validation::invalid_message(&util::qualified_kind(&object), object.name(), &errors)));
    }
    Ok(())
}

fn server_error_when(e: &kubesim_apiserver::ApiError, verb: &str, file: &str) -> String {
    let rendered = util::raw_server_error(e);
    match rendered.split_once("): ") {
        Some((head, message)) => format!("{head}): error when {verb} {file:?}: {message}"),
        None => rendered,
    }
}

/// `apps/v1, Resource=deployments`.
fn resource_string(info: &KindInfo) -> String {
    format!("{}, Resource={}", gv(info), info.plural)
}

/// `apps/v1, Kind=Deployment`.
fn gvk_string(info: &KindInfo) -> String {
    format!("{}, Kind={}", gv(info), info.kind)
}

fn gv(info: &KindInfo) -> String {
    if info.api_version.contains('/') {
        info.api_version.to_string()
    } else {
        format!("/{}", info.api_version)
    }
}

/// GetModifiedConfiguration: the input object with the annotation itself removed (leaving
/// `annotations: {}`), serialized compactly with sorted keys and a trailing newline.
pub fn last_applied_json(raw: &Value) -> String {
    let mut value = raw.clone();
    if let Some(meta) = value.as_object_mut().map(|m| m.entry("metadata").or_insert_with(|| Value::Object(Default::default()))) {
        if let Some(meta) = meta.as_object_mut() {
            let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Default::default()));
            if let Some(a) = annotations.as_object_mut() {
                a.remove(LAST_APPLIED);
            } else {
                *annotations = Value::Object(Default::default());
            }
        }
    }
    let mut text = serde_json::to_string(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// The DefaultTolerationSeconds admission plugin also runs on update and re-adds the
/// not-ready/unreachable tolerations an atomic `tolerations` list from the user drops
/// (plugin/pkg/admission/defaulttolerationseconds). The simulated API server admits on create
/// only, so apply re-adds them here.
fn readmit_default_tolerations(merged: &mut Value, current: &Value) {
    let Some(current_tolerations) = current.pointer("/spec/tolerations").and_then(|t| t.as_array()) else { return };
    let Some(spec) = merged.get_mut("spec").and_then(|s| s.as_object_mut()) else { return };
    let list = spec.entry("tolerations").or_insert_with(|| Value::Array(Vec::new()));
    let Some(list) = list.as_array_mut() else { return };
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let tolerated = list.iter().any(|t| {
            let effect = t.get("effect").and_then(|e| e.as_str()).unwrap_or("");
            let k = t.get("key").and_then(|e| e.as_str()).unwrap_or("");
            let op = t.get("operator").and_then(|e| e.as_str()).unwrap_or("");
            (effect.is_empty() || effect == "NoExecute") && (k == key || (k.is_empty() && op == "Exists"))
        });
        if !tolerated {
            if let Some(t) = current_tolerations.iter().find(|t| t.get("key").and_then(|k| k.as_str()) == Some(key)) {
                list.push(t.clone());
            }
        }
    }
}
