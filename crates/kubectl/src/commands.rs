//! The command dispatcher and the mutating commands (apply, create, delete, scale, set image,
//! label, annotate, patch, taint, cordon, drain, rollout, run, logs, exec, top, ...), each after
//! its file under staging/src/k8s.io/kubectl/pkg/cmd/.

use crate::apply::{apply_documents, ApplyOptions, Mode};
use crate::args::Args;
use crate::get::{self, parse_targets, Filter, Targets};
use crate::merge;
use crate::util::{self, kind_group, server_error, type_name};
use crate::{describe, ClusterView, Output};
use kubesim_api::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Namespace, Pod, PodSpec, PodTemplateSpec, Taint};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubesim_api::object::{kind_info, KindInfo, Object, Scope};
use kubesim_api::selector::Selector;
use kubesim_api::time::time_at;
use kubesim_apiserver::{ApiError, ApiServer, DeleteOptions, Propagation, Request};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The kubectl version kubesim reports.
pub const CLIENT_VERSION: &str = "v1.34.0";

/// Runs one command.
pub fn dispatch(argv: &[String], api: &mut ApiServer, req: &mut Request, cluster: &mut dyn ClusterView, out: &mut Output) {
    // The command is the first word that is not a flag (global flags may precede it).
    let Some(pos) = first_command(argv) else {
        out.fail("error: you must specify a command (kubesim supports: apply, create, get, describe, delete, scale, set, label, annotate, patch, taint, cordon, uncordon, drain, rollout, run, logs, exec, top, api-resources, version, cluster-info)");
        return;
    };
    let command = argv[pos].as_str();
    let mut rest: Vec<String> = argv[..pos].to_vec();
    rest.extend_from_slice(&argv[pos + 1..]);
    let parse_as = match command {
        "logs" | "log" => "logs",
        other => other,
    };
    let mut args = match Args::parse(&rest, parse_as) {
        Ok(a) => a,
        Err(e) => return out.fail(format!("error: {e}\nSee 'kubectl {command} --help' for usage.")),
    };
    let namespace = args.get("namespace").unwrap_or("default").to_string();
    // Verbs that act on existing objects resolve `-f FILE` to the objects it names
    // (resource.Builder FilenameParam: each document's kind, namespace and name).
    const FILE_VERBS: &[&str] = &["get", "describe", "label", "annotate", "patch", "scale", "set", "rollout", "autoscale", "expose", "wait", "certificate"];
    if FILE_VERBS.contains(&command) && (args.has("filename") || args.has("kustomize")) {
        match file_targets(&args, cluster, &namespace, out) {
            Ok(targets) => args.file_targets = Some(targets),
            Err(e) => return out.fail(e),
        }
    }
    if args.bool("help") {
        out.outln(format!("kubesim kubectl: see https://kubernetes.io/docs/reference/kubectl/generated/kubectl_{command}/"));
        return;
    }
    match command {
        "apply" if args.positional.first().map(String::as_str) == Some("view-last-applied") => view_last_applied(&args, api, cluster, &namespace, out),
        "apply" if args.positional.first().map(String::as_str) == Some("set-last-applied") => set_last_applied(&args, api, req, cluster, &namespace, out),
        "apply" if args.positional.first().map(String::as_str) == Some("edit-last-applied") => {
            out.fail("error: kubectl apply edit-last-applied needs an editor; use kubectl apply set-last-applied -f FILE")
        }
        "apply" => apply(&args, api, req, cluster, &namespace, Mode::Apply, out),
        "kustomize" => kustomize_cmd(&args, cluster, out),
        "create" if args.bool("edit") => {
            out.fail("error: kubectl create --edit needs an interactive editor; in kubesim create the object from the file, then change it with kubectl patch, kubectl set or kubectl apply -f")
        }
        "create" => create(&args, api, req, cluster, &namespace, out),
        "replace" => apply(&args, api, req, cluster, &namespace, Mode::Replace, out),
        "get" => get::run(&args, api, req, cluster, &namespace, out),
        "describe" => describe::run(&args, api, req, &namespace, out),
        "delete" => delete(&args, api, req, cluster, &namespace, out),
        "scale" => scale(&args, api, req, &namespace, out),
        "set" => set(&args, api, req, cluster, &namespace, out),
        "certificate" => certificate(&args, api, req, out),
        "label" => label_or_annotate(&args, api, req, cluster, &namespace, out, true),
        "annotate" => label_or_annotate(&args, api, req, cluster, &namespace, out, false),
        "patch" => patch(&args, api, req, cluster, &namespace, out),
        "taint" => taint(&args, api, req, out),
        "cordon" => cordon(&args, api, req, out, true),
        "uncordon" => cordon(&args, api, req, out, false),
        "drain" => drain(&args, api, req, out),
        "rollout" => rollout(&args, api, req, &namespace, out),
        "run" => run_pod(&args, api, req, cluster, &namespace, out),
        "expose" => expose(&args, api, req, cluster, &namespace, out),
        "autoscale" => autoscale(&args, api, req, &namespace, out),
        "logs" | "log" => logs(&args, api, cluster, &namespace, out),
        "exec" => exec(&args, api, cluster, &namespace, out),
        "top" => top(&args, api, req, cluster, &namespace, out),
        "api-resources" => api_resources(&args, out),
        "api-versions" => api_versions(out),
        "version" => version(&args, out),
        "cluster-info" => cluster_info(api, out),
        "wait" => wait(&args, api, &namespace, out),
        "diff" => diff(&args, api, req, cluster, &namespace, out),
        "events" => events(&args, api, req.now, &namespace, out),
        "auth" => auth(&args, out),
        "config" => config(&args, &namespace, out),
        "explain" => crate::explain::run(&args, out),
        "edit" => out.fail("error: kubectl edit needs an interactive editor; in kubesim use kubectl patch, kubectl set or kubectl apply -f"),
        "debug" => debug(&args, api, req, cluster, &namespace, out),
        "attach" | "port-forward" | "proxy" | "cp" => out.fail(format!(
            "error: kubectl {command} needs a connection to a real container or network; the simulated cluster has none (use kubectl logs or kubectl exec)"
        )),
        other => out.fail(format!("error: unknown command \"{other}\" for \"kubectl\"\nRun 'kubectl --help' for usage.")),
    }
}

fn first_command(argv: &[String]) -> Option<usize> {
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        if a == "-n" || a == "--namespace" || a == "--context" || a == "--kubeconfig" || a == "-s" || a == "--server" {
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        return Some(i);
    }
    None
}

fn read_inputs(args: &Args, cluster: &dyn ClusterView, out: &mut Output) -> Option<Vec<(String, String)>> {
    let files = args.all("filename");
    let kustomize = args.all("kustomize");
    if files.is_empty() && kustomize.is_empty() {
        out.fail("error: must specify one of -f and -k");
        return None;
    }
    if !files.is_empty() && !kustomize.is_empty() {
        out.fail("error: only one of -f or -k can be specified");
        return None;
    }
    if let Some(dir) = kustomize.first() {
        return match crate::kustomize::build(dir, cluster) {
            Ok((resources, warnings)) => {
                for w in warnings {
                    out.errln(w);
                }
                Some(vec![(dir.to_string(), kustomized_text(&resources))])
            }
            Err(e) => {
                out.fail(e);
                None
            }
        };
    }
    let mut inputs = Vec::new();
    for f in files {
        for f in f.split(',') {
            match cluster.read_file(f).map_err(|e| (e, crate::manifests::remote(f))) {
                Ok(text) => inputs.push((f.to_string(), text)),
                // The manifests kubesim carries for URLs (the ingress-nginx releases').
                Err((_, Some(text))) => inputs.push((f.to_string(), text)),
                // resource.Builder reads http(s) manifests with an HTTP GET; the simulation has
                // no network, so only files registered under that name can be read.
                Err(_) if f.starts_with("http://") || f.starts_with("https://") => {
                    out.fail(format!("error: unable to read URL {f:?}: kubesim has no network access; download the manifest and pass its local path"));
                    return None;
                }
                // A directory: its .json, .yaml and .yml files in name order (resource.Builder
                // FilenameParam without --recursive: the files directly in it).
                Err((e, None)) => match cluster.list_dir(f) {
                    Some(names) => {
                        let dir = f.trim_end_matches('/');
                        for name in names.iter().filter(|n| [".json", ".yaml", ".yml"].iter().any(|x| n.ends_with(x))) {
                            let path = format!("{dir}/{name}");
                            match cluster.read_file(&path) {
                                Ok(text) => inputs.push((path, text)),
                                Err(e) => {
                                    out.fail(format!("error: {e}"));
                                    return None;
                                }
                            }
                        }
                    }
                    None => {
                        out.fail(format!("error: {e}"));
                        return None;
                    }
                },
            }
        }
    }
    Some(inputs)
}

/// A kustomize build as the multi-document text the `-f` paths read (JSON is YAML).
fn kustomized_text(resources: &[Value]) -> String {
    resources.iter().map(|r| serde_json::to_string(r).unwrap_or_default()).collect::<Vec<_>>().join("\n---\n")
}

/// `kubectl kustomize [DIR]`: the build as YAML documents.
fn kustomize_cmd(args: &Args, cluster: &dyn ClusterView, out: &mut Output) {
    let dir = args.positional.first().map(String::as_str).unwrap_or(".");
    match crate::kustomize::build(dir, cluster) {
        Ok((resources, warnings)) => {
            for w in warnings {
                out.errln(w);
            }
            let docs: Vec<String> = resources.iter().map(crate::yaml::to_yaml).collect();
            out.out(docs.join("---\n"));
        }
        Err(e) => out.fail(e),
    }
}

/// The objects named in `-f` files: (kind, namespace, name) per document, with the builder's
/// namespace rules (the document's namespace, else `-n`/default; a `-n` that contradicts the
/// document is an error).
fn file_targets(args: &Args, cluster: &dyn ClusterView, namespace: &str, out: &mut Output) -> Result<Vec<(&'static KindInfo, String, String)>, String> {
    let mut scratch = Output::default();
    let inputs = read_inputs(args, cluster, &mut scratch);
    // Warnings (kustomize's deprecation notices) go to stderr; a failure is the error.
    if inputs.is_some() {
        for line in scratch.stderr.lines() {
            out.errln(line);
        }
    }
    let Some(inputs) = inputs else { return Err(scratch.stderr.trim_end().to_string()) };
    let mut targets = Vec::new();
    for (file, text) in inputs {
        let (docs, errors) = kubesim_api::decode::parse_documents(&file, &text);
        if let Some(e) = errors.first() {
            return Err(e.to_string());
        }
        for d in docs {
            let objects = kubesim_api::decode::decode_document(&file, &d).map_err(|e| e.to_string())?;
            for o in objects {
                let Some(info) = o.info() else { continue };
                let ns = match info.scope {
                    Scope::Cluster => String::new(),
                    Scope::Namespaced if o.namespace().is_empty() => namespace.to_string(),
                    Scope::Namespaced => {
                        if args.has("namespace") && o.namespace() != namespace {
                            return Err(format!(
                                "error: the namespace from the provided object {:?} does not match the namespace {namespace:?}. You must pass '--namespace={}' to perform this operation.",
                                o.namespace(),
                                o.namespace()
                            ));
                        }
                        o.namespace().to_string()
                    }
                };
                targets.push((info, ns, o.name().to_string()));
            }
        }
    }
    if targets.is_empty() {
        return Err("error: no objects passed to get".into());
    }
    Ok(targets)
}

fn dry_run(args: &Args) -> bool {
    matches!(args.get("dry-run"), Some(v) if v != "none" && v != "false")
}

/// The printer suffix of a dry run (`" (dry run)"`, `" (server dry run)"`), None without one:
/// the verbs that honour `--dry-run` compute and check their change but write nothing.
/// Deviation: a server dry run is checked as a client one (no admission or validation pass).
fn dry_run_suffix(args: &Args) -> Option<&'static str> {
    match args.get("dry-run") {
        Some("server") => Some(" (server dry run)"),
        _ if dry_run(args) => Some(" (dry run)"),
        _ => None,
    }
}

fn apply(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &mut dyn ClusterView, namespace: &str, mode: Mode, out: &mut Output) {
    let Some(inputs) = read_inputs(args, cluster, out) else { return };
    let options = ApplyOptions {
        namespace,
        enforce_namespace: args.has("namespace"),
        mode,
        validate: args.get("validate").unwrap_or("warn"),
        dry_run: dry_run(args),
        save_config: args.bool("save-config"),
        server_side: args.bool("server-side"),
        record_last_applied: true,
    };
    let suffix = match args.get("dry-run") {
        Some("server") => " (server dry run)",
        _ if options.dry_run => " (dry run)",
        _ => "",
    };
    // replace --force: delete what the files name, then create them (replace.go forceReplace).
    let mut options = options;
    if mode == Mode::Replace && args.bool("force") {
        let targets = match file_targets(args, cluster, namespace, out) {
            Ok(t) => t,
            Err(e) => return out.fail(e),
        };
        let grace = args.get("grace-period").and_then(|g| g.parse::<i64>().ok()).filter(|g| *g >= 0);
        for (info, ns, name) in &targets {
            match api.delete(info, ns, name, DeleteOptions { grace_period_seconds: grace, ..Default::default() }, req) {
                Ok(_) => out.outln(format!("{} {name:?} deleted", kind_group(info))),
                Err(e) if e.code == 404 => {}
                Err(e) => return out.fail(server_error(&e)),
            }
        }
        options.mode = Mode::Create;
    }
    let name_only = args.get("output") == Some("name");
    let format = match get::output_format(args, cluster) {
        Ok(f) => f,
        Err(e) => return out.fail(e),
    };
    let mut printed = 0;
    // apply/create/replace return one error as cmdutil.CheckErr prints it (an Invalid one from
    // its details), several as they are.
    let mut failures: Vec<String> = Vec::new();
    for (file, text) in inputs {
        let results = apply_documents(&file, &text, &options, api, req);
        if results.is_empty() {
            out.fail(format!(
                "error: no objects passed to {}",
                match mode {
                    Mode::Apply => "apply",
                    Mode::Create => "create",
                    Mode::Replace => "replace",
                }
            ));
            continue;
        }
        for r in results {
            for w in &r.warnings {
                out.errln(w);
            }
            match &r.outcome {
                Ok(action) => {
                    let kg = r.kind_group.clone().unwrap_or_default();
                    let name = r.name.clone().unwrap_or_default();
                    if name_only {
                        out.outln(format!("{kg}/{name}"));
                    } else if let (false, Some(json), Some(info)) = (
                        matches!(format, get::Format::Table | get::Format::Wide),
                        r.object.clone(),
                        r.kind.as_deref().and_then(|_| info_of_json(r.object.as_ref())),
                    ) {
                        // The YAML printer separates the second and later objects with "---".
                        if printed > 0 && format == get::Format::Yaml {
                            out.out("---\n");
                        }
                        printed += 1;
                        get::print_values(&format, &[(info, json)], true, out);
                    } else {
                        let word = match (mode, action) {
                            (Mode::Replace, _) => "replaced",
                            (Mode::Apply, _) if options.server_side => "serverside-applied",
                            (_, a) => a.as_str(),
                        };
                        out.outln(format!("{kg}/{name} {word}{suffix}"));
                    }
                }
                Err(message) => failures.push(message.clone()),
            }
        }
    }
    match failures.as_slice() {
        [] => {}
        [one] if one.starts_with("Error from server (Invalid): ") => out.fail(util::invalid_as_kubectl(one).unwrap_or_else(|| one.clone())),
        many => {
            for m in many {
                out.fail(m);
            }
        }
    }
}

fn info_of_json(json: Option<&Value>) -> Option<&'static KindInfo> {
    let json = json?;
    kind_info(json.get("apiVersion")?.as_str()?, json.get("kind")?.as_str()?)
}

/// `kubectl diff -f FILE`.
fn diff(args: &Args, api: &ApiServer, req: &Request, cluster: &mut dyn ClusterView, namespace: &str, out: &mut Output) {
    let Some(inputs) = read_inputs(args, cluster, out) else { return };
    let options = ApplyOptions {
        namespace,
        enforce_namespace: args.has("namespace"),
        mode: Mode::Apply,
        validate: args.get("validate").unwrap_or("warn"),
        dry_run: false,
        save_config: false,
        server_side: args.bool("server-side"),
        record_last_applied: true,
    };
    crate::diff::diff_inputs(&inputs, &options, api, req, out);
}

fn create(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &mut dyn ClusterView, namespace: &str, out: &mut Output) {
    if args.has("filename") || args.has("kustomize") {
        return apply(args, api, req, cluster, namespace, Mode::Create, out);
    }
    let Some(sub) = args.positional.first().map(String::as_str) else {
        return out.fail("error: must specify one of -f and -k");
    };
    if sub == "token" {
        return create_token(args, api, req, namespace, out);
    }
    let name = args.positional.get(1).cloned();
    let object = match (sub, name) {
        ("namespace" | "ns", Some(name)) => {
            Object::Namespace(Box::new(Namespace { metadata: ObjectMeta { name: Some(name), ..Default::default() }, ..Default::default() }))
        }
        ("deployment" | "deploy", Some(name)) => {
            let images: Vec<&str> = args.all("image");
            if images.is_empty() {
                return out.fail("error: required flag(s) \"image\" not set");
            }
            let replicas = match args.get("replicas").map(|r| r.parse::<i32>()) {
                None => 1,
                Some(Ok(r)) => r,
                Some(Err(_)) => {
                    return out.fail(format!(
                        "error: invalid argument \"{}\" for \"-r, --replicas\" flag: strconv.ParseInt: parsing \"{}\": invalid syntax",
                        args.get("replicas").unwrap_or(""),
                        args.get("replicas").unwrap_or("")
                    ))
                }
            };
            let labels: BTreeMap<String, String> = [("app".to_string(), name.clone())].into();
            let containers: Vec<Container> = images
                .iter()
                .map(|image| Container { name: container_name_for_image(image, req.rng), image: Some(image.to_string()), ..Default::default() })
                .collect();
            let mut containers = containers;
            if let Some(port) = args.get("port").and_then(|p| p.parse::<i32>().ok()) {
                if let Some(c) = containers.first_mut() {
                    c.ports = Some(vec![kubesim_api::k8s_openapi::api::core::v1::ContainerPort { container_port: port, ..Default::default() }]);
                }
            }
            Object::Deployment(Box::new(Deployment {
                metadata: ObjectMeta { name: Some(name), namespace: Some(namespace.to_string()), labels: Some(labels.clone()), ..Default::default() },
                spec: Some(DeploymentSpec {
                    replicas: Some(replicas),
                    selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
                    template: PodTemplateSpec {
                        metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                        spec: Some(PodSpec { containers, ..Default::default() }),
                    },
                    ..Default::default()
                }),
                ..Default::default()
            }))
        }
        ("configmap" | "cm", Some(name)) => {
            let data = match literal_and_file_data(args, cluster, "ConfigMap", &name) {
                Ok(d) => d,
                Err(e) => return out.fail(e),
            };
            let mut json = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data});
            if args.bool("append-hash") {
                json["metadata"]["name"] = Value::String(format!("{name}-{}", crate::kustomize::content_hash(&json)));
            }
            match util::from_json(kind_info("v1", "ConfigMap").expect("configmaps"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("secret", Some(kind)) if kind == "docker-registry" || kind == "tls" => {
            let Some(name) = args.positional.get(2).cloned() else {
                return out.fail(format!("error: exactly one NAME is required, got 0\nSee 'kubectl create secret {kind} -h' for help and examples"));
            };
            let json = if kind == "docker-registry" {
                // create_secret_docker.go: a .dockerconfigjson with one auths entry.
                let (Some(user), Some(password)) = (args.get("docker-username"), args.get("docker-password")) else {
                    return out.fail("error: either --from-file or the combination of --docker-username, --docker-password and --docker-server is required");
                };
                let server = args.get("docker-server").unwrap_or("https://index.docker.io/v1/");
                // json.Marshal of DockerConfigJSON: struct field order, email omitted when empty.
                let q = |v: &str| serde_json::to_string(v).unwrap_or_default();
                let email = args.get("docker-email").filter(|e| !e.is_empty()).map(|e| format!(",\"email\":{}", q(e))).unwrap_or_default();
                let auth = base64(format!("{user}:{password}").as_bytes());
                let config = format!("{{\"auths\":{{{}:{{\"username\":{},\"password\":{}{email},\"auth\":{}}}}}}}", q(server), q(user), q(password), q(&auth));
                serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace}, "type": "kubernetes.io/dockerconfigjson",
                    "data": {".dockerconfigjson": base64(config.as_bytes())}})
            } else {
                let (Some(cert), Some(key)) = (args.get("cert"), args.get("key")) else {
                    return out.fail("error: required flag(s) \"cert\", \"key\" not set");
                };
                let read = |path: &str| cluster.read_file(path).map_err(|_| format!("error: failed to load key pair open {path}: no such file or directory"));
                let (cert, key) = match (read(cert), read(key)) {
                    (Ok(c), Ok(k)) => (c, k),
                    (Err(e), _) | (_, Err(e)) => return out.fail(e),
                };
                serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace}, "type": "kubernetes.io/tls",
                    "data": {"tls.crt": base64(cert.as_bytes()), "tls.key": base64(key.as_bytes())}})
            };
            match util::from_json(kind_info("v1", "Secret").expect("secrets"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("ingress" | "ing", Some(name)) => match ingress_json(args, &name, namespace) {
            Ok(json) => match util::from_json(kind_info("networking.k8s.io/v1", "Ingress").expect("ingresses"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            },
            Err(e) => return out.fail(e),
        },
        ("serviceaccount" | "sa", Some(name)) => {
            let json = serde_json::json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}});
            match util::from_json(kind_info("v1", "ServiceAccount").expect("serviceaccounts"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("quota" | "resourcequota", Some(name)) => {
            // create_quota.go: --hard=k=v,... and --scopes=A,B.
            let mut hard = serde_json::Map::new();
            for pair in args.get("hard").unwrap_or("").split(',').filter(|p| !p.is_empty()) {
                let Some((k, v)) = pair.split_once('=') else {
                    return out.fail(format!("error: invalid argument {pair:?} for --hard: must be of the form NAME=QUANTITY"));
                };
                hard.insert(k.to_string(), Value::String(v.to_string()));
            }
            let mut spec = serde_json::json!({"hard": hard});
            if let Some(scopes) = args.get("scopes").filter(|s| !s.is_empty()) {
                spec["scopes"] = serde_json::json!(scopes.split(',').collect::<Vec<_>>());
            }
            let json = serde_json::json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": namespace}, "spec": spec});
            match util::from_json(kind_info("v1", "ResourceQuota").expect("resourcequotas"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("priorityclass" | "pc", Some(name)) => {
            let value = match args.get("value").unwrap_or("0").parse::<i64>() {
                Ok(v) => v,
                Err(_) => {
                    return out.fail(format!(
                        "error: invalid argument {:?} for \"--value\" flag: strconv.ParseInt: parsing {:?}: invalid syntax",
                        args.get("value").unwrap_or(""),
                        args.get("value").unwrap_or("")
                    ))
                }
            };
            let mut json = serde_json::json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value,
                "description": args.get("description").unwrap_or(""),
                "preemptionPolicy": args.get("preemption-policy").unwrap_or("PreemptLowerPriority")});
            if args.bool("global-default") {
                json["globalDefault"] = Value::Bool(true);
            }
            match util::from_json(kind_info("scheduling.k8s.io/v1", "PriorityClass").expect("priorityclasses"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("poddisruptionbudget" | "pdb", Some(name)) => {
            let (min, max) = (args.get("min-available"), args.get("max-unavailable"));
            let int_or = |v: &str| v.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::String(v.to_string()));
            let mut spec = serde_json::Map::new();
            match (min, max) {
                (Some(_), Some(_)) => return out.fail("error: min-available and max-unavailable cannot be both specified"),
                (None, None) => return out.fail("error: one of min-available or max-unavailable must be specified"),
                (Some(m), None) => {
                    spec.insert("minAvailable".into(), int_or(m));
                }
                (None, Some(m)) => {
                    spec.insert("maxUnavailable".into(), int_or(m));
                }
            }
            if args.get("selector").is_some_and(|s| s.contains("!=")) {
                return out.fail("error: \"!=\" is not a valid label selector operator");
            }
            let selector = match args.get("selector").map(Selector::parse) {
                Some(Ok(s)) => to_label_selector(&s),
                Some(Err(e)) => return out.fail(format!("error: {e}")),
                None => return out.fail("error: a selector must be specified"),
            };
            spec.insert("selector".into(), serde_json::to_value(selector).unwrap_or_default());
            let json =
                serde_json::json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": namespace}, "spec": spec});
            match util::from_json(kind_info("policy/v1", "PodDisruptionBudget").expect("pdbs"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("role" | "clusterrole", Some(name)) => {
            // create_role.go: one rule per API group of the resources, verbs shared.
            let verbs: Vec<String> = args.all("verb").iter().flat_map(|v| v.split(',')).map(str::to_string).collect();
            if verbs.is_empty() {
                return out.fail("error: at least one verb must be specified");
            }
            let resources: Vec<String> = args.all("resource").iter().flat_map(|v| v.split(',')).map(str::to_string).collect();
            let names: Vec<String> = args.all("resource-name").iter().flat_map(|v| v.split(',')).map(str::to_string).collect();
            let non_resource: Vec<String> = args.all("non-resource-url").iter().flat_map(|v| v.split(',')).map(str::to_string).collect();
            if resources.is_empty() && non_resource.is_empty() {
                return out.fail("error: at least one resource must be specified");
            }
            let mut groups: Vec<(String, Vec<String>)> = Vec::new();
            for r in &resources {
                let (resource, sub) = r.split_once('/').map(|(a, b)| (a.to_string(), Some(b.to_string()))).unwrap_or((r.clone(), None));
                let (plural, group) = match util::resolve(&resource) {
                    Ok(info) => (info.plural.to_string(), info.group().to_string()),
                    Err(_) => match resource.split_once('.') {
                        Some((p, g)) => (p.to_string(), g.to_string()),
                        None => (resource.clone(), String::new()),
                    },
                };
                let full = match sub {
                    Some(s) => format!("{plural}/{s}"),
                    None => plural,
                };
                match groups.iter_mut().find(|(g, _)| *g == group) {
                    Some((_, list)) => list.push(full),
                    None => groups.push((group, vec![full])),
                }
            }
            let mut rules: Vec<Value> = groups
                .into_iter()
                .map(|(group, resources)| {
                    let mut rule = serde_json::json!({"apiGroups": [group], "resources": resources, "verbs": verbs});
                    if !names.is_empty() {
                        rule["resourceNames"] = serde_json::json!(names);
                    }
                    rule
                })
                .collect();
            if !non_resource.is_empty() {
                rules.push(serde_json::json!({"nonResourceURLs": non_resource, "verbs": verbs}));
            }
            let kind = if sub == "role" { "Role" } else { "ClusterRole" };
            let mut meta = serde_json::json!({"name": name});
            if kind == "Role" {
                meta["namespace"] = Value::String(namespace.to_string());
            }
            let json = serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta, "rules": rules});
            match util::from_json(kind_info("rbac.authorization.k8s.io/v1", kind).expect("rbac"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("rolebinding" | "clusterrolebinding", Some(name)) => {
            let (role_kind, role) = match (args.get("role"), args.get("clusterrole")) {
                (Some(r), None) if sub == "rolebinding" => ("Role", r),
                (None, Some(c)) => ("ClusterRole", c),
                (Some(_), Some(_)) => return out.fail("error: exactly one of clusterrole or role must be specified"),
                _ => {
                    return out.fail(if sub == "rolebinding" {
                        "error: exactly one of clusterrole or role must be specified"
                    } else {
                        "error: required flag(s) \"clusterrole\" not set"
                    })
                }
            };
            let mut subjects: Vec<Value> = Vec::new();
            for u in args.all("user") {
                subjects.push(serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u}));
            }
            for g in args.all("group") {
                subjects.push(serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}));
            }
            for sa in args.all("serviceaccount") {
                let Some((ns, n)) = sa.split_once(':') else { return out.fail("error: serviceaccount must be <namespace>:<name>") };
                subjects.push(serde_json::json!({"kind": "ServiceAccount", "name": n, "namespace": ns}));
            }
            let kind = if sub == "rolebinding" { "RoleBinding" } else { "ClusterRoleBinding" };
            let mut meta = serde_json::json!({"name": name});
            if kind == "RoleBinding" {
                meta["namespace"] = Value::String(namespace.to_string());
            }
            let json = serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}, "subjects": subjects});
            match util::from_json(kind_info("rbac.authorization.k8s.io/v1", kind).expect("rbac"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("secret", Some(kind)) => {
            if kind != "generic" {
                return out.fail(format!(
                    "error: unknown command \"{kind}\" for \"kubectl create secret\" (kubesim supports create secret generic, docker-registry, tls)"
                ));
            }
            let Some(name) = args.positional.get(2).cloned() else {
                return out.fail("error: exactly one NAME is required, got 0\nSee 'kubectl create secret generic -h' for help and examples");
            };
            let data = match literal_and_file_data(args, cluster, "Secret", &name) {
                Ok(d) => d,
                Err(e) => return out.fail(e),
            };
            let encoded: BTreeMap<String, Value> = data.into_iter().map(|(k, v)| (k, Value::String(base64(v.as_bytes())))).collect();
            // create_secret.go leaves the type empty unless --type is given (the API server
            // defaults it to Opaque); the --append-hash hash sees it empty too.
            let mut json = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace}, "data": encoded});
            if let Some(t) = args.get("type").filter(|t| !t.is_empty()) {
                json["type"] = Value::String(t.to_string());
            }
            if args.bool("append-hash") {
                json["metadata"]["name"] = Value::String(format!("{name}-{}", crate::kustomize::content_hash(&json)));
            }
            match util::from_json(kind_info("v1", "Secret").expect("secrets"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("job", Some(name)) => {
            let job_template = |image: &str| {
                let mut container = serde_json::json!({"name": name, "image": image, "resources": {}});
                if !args.after_dash.is_empty() {
                    container["command"] = serde_json::json!(args.after_dash);
                }
                serde_json::json!({"spec": {"containers": [container], "restartPolicy": "Never"}, "metadata": {}})
            };
            let json = if let Some(from) = args.get("from") {
                let Some(cj_name) = from.strip_prefix("cronjob/").or_else(|| from.strip_prefix("cronjobs/")).or_else(|| from.strip_prefix("cj/")) else {
                    return out.fail(format!("error: from must be an existing cronjob: unknown object type {from}"));
                };
                let info = kind_info("batch/v1", "CronJob").expect("cronjobs");
                let cj = match api.get(info, namespace, cj_name) {
                    Ok(c) => c.to_json(),
                    Err(e) => return out.fail(server_error(&e)),
                };
                let spec = cj.pointer("/spec/jobTemplate/spec").cloned().unwrap_or_default();
                serde_json::json!({"apiVersion": "batch/v1", "kind": "Job",
                    "metadata": {"name": name, "namespace": namespace, "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": cj_name, "uid": cj.pointer("/metadata/uid").cloned().unwrap_or_default(), "controller": true}]},
                    "spec": spec})
            } else {
                let Some(image) = args.get("image") else { return out.fail("error: either --image or --from must be specified") };
                serde_json::json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace}, "spec": {"template": job_template(image)}})
            };
            match util::from_json(kind_info("batch/v1", "Job").expect("jobs"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("cronjob" | "cj", Some(name)) => {
            let Some(image) = args.get("image") else { return out.fail("error: required flag(s) \"image\" not set") };
            let Some(schedule) = args.get("schedule") else { return out.fail("error: required flag(s) \"schedule\" not set") };
            let mut container = serde_json::json!({"name": name, "image": image, "resources": {}});
            if !args.after_dash.is_empty() {
                container["command"] = serde_json::json!(args.after_dash);
            }
            let json = serde_json::json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": namespace},
                "spec": {"schedule": schedule, "jobTemplate": {"metadata": {"name": name}, "spec": {"template": {"metadata": {}, "spec": {"containers": [container], "restartPolicy": args.get("restart").unwrap_or("OnFailure")}}}}}});
            match util::from_json(kind_info("batch/v1", "CronJob").expect("cronjobs"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        ("service" | "svc", Some(type_)) => {
            let Some(name) = args.positional.get(2).cloned() else {
                return out.fail(format!("error: exactly one NAME is required, got 0\nSee 'kubectl create service {type_} -h' for help and examples"));
            };
            let Some(service_type) = service_type_name(type_.as_str()) else {
                return out.fail(format!("error: unknown command \"{type_}\" for \"kubectl create service\""));
            };
            let mut ports = Vec::new();
            for spec in args.all("tcp").iter().flat_map(|t| t.split(',')) {
                // create_service.go: the port's name is the spec with ':' as '-'; the target
                // port is an int or a name (intstr.Parse).
                let (port, target) = spec.split_once(':').unwrap_or((spec, spec));
                let Ok(port) = port.parse::<i64>() else {
                    return out.fail(format!("error: {spec} is not a valid port specification"));
                };
                let target = target.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::String(target.to_string()));
                let mut p = serde_json::json!({"name": spec.replace(':', "-"), "port": port, "protocol": "TCP", "targetPort": target});
                if let Some(np) = args.get("node-port").and_then(|n| n.parse::<i64>().ok()) {
                    p["nodePort"] = Value::from(np);
                }
                ports.push(p);
            }
            let mut json = serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
                "spec": {"type": service_type, "selector": {"app": name}, "ports": ports}});
            if json["spec"]["ports"].as_array().is_some_and(|p| p.is_empty()) {
                json["spec"].as_object_mut().expect("spec").remove("ports");
            }
            if service_type == "ExternalName" {
                json["spec"]["externalName"] = Value::String(args.get("external-name").unwrap_or("").to_string());
            } else if type_ == "clusterip" && args.get("clusterip") == Some("None") {
                json["spec"]["clusterIP"] = Value::String("None".into());
            }
            match util::from_json(kind_info("v1", "Service").expect("services"), json) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            }
        }
        (_, None) => {
            return out.fail(format!("error: exactly one NAME is required, got 0\nSee 'kubectl create {sub} -h' for help and examples"));
        }
        (other, _) => return out.fail(format!("error: unknown command \"{other}\" for \"kubectl create\"")),
    };
    let info = object.info().expect("built-in kind");
    if dry_run(args) {
        if print_generated(args, cluster, &object, out) {
            return;
        }
        return out.outln(format!("{} created (dry run)", type_name(info, object.name())));
    }
    match api.create(object, req) {
        Ok(o) => {
            if !print_written(args, cluster, info, o.to_json(), out) {
                out.outln(format!("{} created", type_name(info, o.name())))
            }
        }
        // create_configmap.go and create_secret*.go wrap the server's error; the other
        // generators return it as it is.
        Err(e) => match sub {
            "configmap" | "cm" => out.fail(format!("error: failed to create configmap: {}", e.message)),
            "secret" => out.fail(format!("error: failed to create secret {}", e.message)),
            "ingress" | "ing" => out.fail(format!("error: failed to create ingress: {}", e.message)),
            // create_service.go: `failed to create %s service: %v` with the Service's type.
            "service" | "svc" => {
                let type_ = args.positional.get(1).and_then(|t| service_type_name(t)).unwrap_or("ClusterIP");
                out.fail(format!("error: failed to create {type_} service: {}", e.message))
            }
            _ => out.fail(server_error(&e)),
        },
    }
}

/// The Service type of `kubectl create service TYPE`.
fn service_type_name(subcommand: &str) -> Option<&'static str> {
    match subcommand {
        "clusterip" => Some("ClusterIP"),
        "nodeport" => Some("NodePort"),
        "loadbalancer" => Some("LoadBalancer"),
        "externalname" => Some("ExternalName"),
        _ => None,
    }
}

/// `kubectl create token SA` (create_token.go): a TokenRequest for the ServiceAccount; the
/// simulated token is a JWT with the service account claims kube-apiserver issues
/// (serviceaccount/claims.go), an RS256 header and a random signature from the world's RNG.
fn create_token(args: &Args, api: &mut ApiServer, req: &mut Request, namespace: &str, out: &mut Output) {
    let Some(name) = args.positional.get(1) else { return out.fail("error: service account name is required") };
    let duration = match args.get("duration") {
        None => 3600,
        Some(d) => match kubesim_api::time::parse_duration(d) {
            Some(ms) if ms % 1000 != 0 => return out.fail("error: --duration cannot be expressed in units less than seconds"),
            Some(0) => 3600,
            Some(ms) => (ms / 1000) as i64,
            None => return out.fail(format!("error: invalid argument {d:?} for \"--duration\" flag: time: invalid duration {d:?}")),
        },
    };
    let audiences: Vec<String> = args.all("audience").iter().map(|a| a.to_string()).collect();
    if audiences.iter().any(|a| a.is_empty()) {
        return out.fail("error: --audience must not be an empty string");
    }
    let info = kind_info("v1", "ServiceAccount").expect("serviceaccounts");
    let sa = match api.get(info, namespace, name) {
        Ok(sa) => sa,
        Err(e) => return out.fail(format!("error: failed to create token: {}", e.message)),
    };
    let issuer = "https://kubernetes.default.svc.cluster.local";
    let audiences = if audiences.is_empty() { vec![issuer.to_string()] } else { audiences };
    let iat = kubesim_api::time::EPOCH_UNIX_SECONDS + (req.now / 1000) as i64;
    let b64 = |bytes: &[u8]| base64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_");
    let mut random = |n: usize| -> Vec<u8> {
        let mut v = vec![0u8; n];
        rand_core::RngCore::fill_bytes(req.rng, &mut v);
        v
    };
    let kid = b64(&random(32));
    let jti = {
        let b = random(16);
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!("{}-{}-4{}-{:x}{}-{}", &h[0..8], &h[8..12], &h[13..16], 8 | (b[8] & 3), &h[17..20], &h[20..32])
    };
    let header = serde_json::json!({"alg": "RS256", "kid": kid});
    let claims = serde_json::json!({
        "aud": audiences,
        "exp": iat + duration,
        "iat": iat,
        "iss": issuer,
        "jti": jti,
        "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": sa.metadata().uid.clone().unwrap_or_default()}},
        "nbf": iat,
        "sub": format!("system:serviceaccount:{namespace}:{name}"),
    });
    let signature = b64(&random(256));
    out.out(format!("{}.{}.{signature}", b64(header.to_string().as_bytes()), b64(claims.to_string().as_bytes())));
}

/// create_ingress.go: `--rule=host/path=svc:port[,tls[=secret]]` (a trailing `*` makes the
/// path a Prefix), `--class`, `--default-backend=svc:port`, `--annotation=k=v`.
fn ingress_json(args: &Args, name: &str, namespace: &str) -> Result<Value, String> {
    let rules: Vec<&str> = args.all("rule");
    let default_backend = args.get("default-backend").unwrap_or("");
    if default_backend.is_empty() && rules.is_empty() {
        return Err("error: not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)".into());
    }
    // ruleRegex: ^[\w*\-.]*/[^,=\n]*=[\w\-]+:[\w\-]+(,tls=?[\w\-]*)?$
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let valid = |rule: &str| -> bool {
        let (main, tls) = match rule.split_once(',') {
            Some((m, t)) => (m, Some(t)),
            None => (rule, None),
        };
        if let Some(t) = tls {
            let Some(rest) = t.strip_prefix("tls") else { return false };
            let secret = rest.strip_prefix('=').unwrap_or(rest);
            if !(secret.is_empty() || word(secret)) {
                return false;
            }
        }
        let Some(slash) = main.find('/') else { return false };
        let host = &main[..slash];
        if !host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '*' | '-' | '.')) {
            return false;
        }
        let Some((path, svc)) = main[slash..].split_once('=') else { return false };
        let Some((svc, port)) = svc.split_once(':') else { return false };
        !path.contains('\n') && word(svc) && word(port)
    };
    for rule in &rules {
        if !valid(rule) {
            return Err(format!("error: rule {rule} is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]"));
        }
    }
    let mut annotations = serde_json::Map::new();
    for a in args.all("annotation") {
        let Some((k, v)) = a.split_once('=') else { return Err(format!("error: annotation {a} is invalid and should be in format key=[value]")) };
        annotations.insert(k.to_string(), Value::String(v.to_string()));
    }
    if !default_backend.is_empty() && default_backend.split(':').count() != 2 {
        return Err("error: default-backend should be in format servicename:serviceport".into());
    }
    let backend = |service: &str| {
        let (svc, port) = service.split_once(':').unwrap_or((service, ""));
        let port = match port.parse::<i32>() {
            Ok(n) => serde_json::json!({"number": n}),
            Err(_) => serde_json::json!({"name": port}),
        };
        serde_json::json!({"service": {"name": svc, "port": port}})
    };
    let mut spec = serde_json::Map::new();
    if let Some(class) = args.get("class").filter(|c| !c.is_empty()) {
        spec.insert("ingressClassName".into(), Value::String(class.to_string()));
    }
    if !default_backend.is_empty() {
        spec.insert("defaultBackend".into(), backend(default_backend));
    }
    // buildTLSRules: one entry per secret, each host once.
    let mut tls: Vec<(String, Vec<String>)> = Vec::new();
    let mut seen_hosts: Vec<String> = Vec::new();
    for rule in &rules {
        let parts: Vec<&str> = rule.split(',').collect();
        if parts.len() != 2 {
            continue;
        }
        let host = rule.split('/').next().unwrap_or("").to_string();
        let secret = parts[1].split('=').nth(1).unwrap_or("").to_string();
        if seen_hosts.contains(&host) {
            continue;
        }
        seen_hosts.push(host.clone());
        if let Some(entry) = tls.iter_mut().find(|(s, _)| *s == secret) {
            entry.1.push(host);
            continue;
        }
        if !host.is_empty() || !secret.is_empty() {
            tls.push((secret, if host.is_empty() { vec![] } else { vec![host] }));
        }
    }
    // buildIngressRules: paths of the same host share one rule.
    let mut ingress_rules: Vec<(String, Vec<Value>)> = Vec::new();
    for rule in &rules {
        let main = rule.split(',').next().unwrap_or("");
        let (host, pathsvc) = main.split_once('/').unwrap_or((main, ""));
        let (path, service) = pathsvc.split_once('=').unwrap_or((pathsvc, ""));
        let mut path = format!("/{path}");
        let mut path_type = "Exact";
        if path.ends_with('*') {
            path.pop();
            path_type = "Prefix";
        }
        let entry = serde_json::json!({"backend": backend(service), "path": path, "pathType": path_type});
        match ingress_rules.iter_mut().find(|(h, _)| h == host) {
            Some((_, paths)) => paths.push(entry),
            None => ingress_rules.push((host.to_string(), vec![entry])),
        }
    }
    if !tls.is_empty() {
        let list: Vec<Value> = tls
            .into_iter()
            .map(|(secret, hosts)| {
                let mut m = serde_json::Map::new();
                if !hosts.is_empty() {
                    m.insert("hosts".into(), serde_json::json!(hosts));
                }
                if !secret.is_empty() {
                    m.insert("secretName".into(), Value::String(secret));
                }
                Value::Object(m)
            })
            .collect();
        spec.insert("tls".into(), Value::Array(list));
    }
    if !ingress_rules.is_empty() {
        let list: Vec<Value> = ingress_rules
            .into_iter()
            .map(|(host, paths)| {
                let mut m = serde_json::Map::new();
                if !host.is_empty() {
                    m.insert("host".into(), Value::String(host));
                }
                m.insert("http".into(), serde_json::json!({"paths": paths}));
                Value::Object(m)
            })
            .collect();
        spec.insert("rules".into(), Value::Array(list));
    }
    let mut metadata = serde_json::json!({"name": name, "namespace": namespace});
    if !annotations.is_empty() {
        metadata["annotations"] = Value::Object(annotations);
    }
    Ok(serde_json::json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": metadata, "spec": spec}))
}

/// `kubectl apply view-last-applied` (cmd/apply/apply_view_last_applied.go): the annotation as
/// YAML (yaml.JSONToYAML) or indented JSON (json.Indent keeps its key order), `---` between
/// objects.
fn view_last_applied(args: &Args, api: &ApiServer, cluster: &dyn ClusterView, namespace: &str, out: &mut Output) {
    let output = args.get("output").unwrap_or("yaml");
    if output != "yaml" && output != "json" {
        return out.fail(format!("error: unexpected -o output mode: {output}, the flag 'output' must be one of yaml|json"));
    }
    let resources: Vec<String> = args.positional[1..].to_vec();
    let mut args = args.clone();
    if args.has("filename") || args.has("kustomize") {
        match file_targets(&args, cluster, namespace, out) {
            Ok(t) => args.file_targets = Some(t),
            Err(e) => return out.fail(e),
        }
    }
    let targets = many_targets(&args, &resources, api, namespace, out);
    let mut docs = Vec::new();
    for (_, object) in targets {
        let Some(text) = object.metadata().annotations.as_ref().and_then(|a| a.get(crate::apply::LAST_APPLIED)) else {
            return out.fail(format!("error: no last-applied-configuration annotation found on resource: {}", object.name()));
        };
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return out.fail(format!("error: the last-applied-configuration annotation of {} is not JSON", object.name()));
        };
        docs.push(if output == "json" { go_json_indent(text) } else { crate::yaml::to_yaml(&value) });
    }
    for (i, d) in docs.iter().enumerate() {
        if i > 0 && output == "yaml" {
            out.out("---\n");
        }
        out.out(d);
    }
}

/// `kubectl apply set-last-applied -f FILE [--create-annotation]`
/// (cmd/apply/apply_set_last_applied.go): the files' objects become the live objects'
/// last-applied-configuration.
fn set_last_applied(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output) {
    let Some(inputs) = read_inputs(args, cluster, out) else { return };
    let dry = dry_run(args);
    for (file, text) in inputs {
        let (docs, errors) = kubesim_api::decode::parse_documents(&file, &text);
        if let Some(e) = errors.first() {
            return out.fail(format!("error: {e}"));
        }
        for d in docs {
            let Some(info) =
                d.value.get("apiVersion").and_then(|a| a.as_str()).zip(d.value.get("kind").and_then(|k| k.as_str())).and_then(|(a, k)| kind_info(a, k))
            else {
                continue;
            };
            let mut raw = d.value.clone();
            let ns = raw.pointer("/metadata/namespace").and_then(|n| n.as_str()).unwrap_or(namespace).to_string();
            if info.scope == Scope::Namespaced {
                raw["metadata"]["namespace"] = Value::String(ns.clone());
            }
            let name = raw.pointer("/metadata/name").and_then(|n| n.as_str()).unwrap_or_default().to_string();
            let live = match api.get(info, if info.scope == Scope::Namespaced { &ns } else { "" }, &name) {
                Ok(o) => o,
                Err(e) => return out.fail(server_error(&e)),
            };
            let current = live.metadata().annotations.as_ref().and_then(|a| a.get(crate::apply::LAST_APPLIED)).cloned();
            if current.is_none() && !args.bool("create-annotation") {
                return out.fail(format!("error: no last-applied-configuration annotation found on resource: {name}, to create the annotation, run the command with --create-annotation"));
            }
            let annotation = crate::apply::last_applied_json(&raw);
            if current.as_deref() == Some(annotation.as_str()) {
                out.outln(format!("set-last-applied {name}: no changes required."));
                continue;
            }
            let mut updated = (*live).clone();
            updated.metadata_mut().annotations.get_or_insert_with(Default::default).insert(crate::apply::LAST_APPLIED.to_string(), annotation);
            updated.metadata_mut().resource_version = None;
            if !dry {
                if let Err(e) = util::update(api, updated, req) {
                    return out.fail(server_error(&e));
                }
            }
            out.outln(format!("{} configured{}", type_name(info, &name), if dry { " (dry run)" } else { "" }));
        }
    }
}

/// encoding/json Indent(src, "", "  "): the text's own key order and spacing of values kept;
/// leading whitespace dropped, trailing whitespace kept.
fn go_json_indent(text: &str) -> String {
    let src = text.trim_start();
    let body_end = src.trim_end().len();
    let (body, trailing) = src.split_at(body_end);
    let mut out = String::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = body.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(chars.next().unwrap_or(close));
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out.push_str(trailing);
    out
}

/// metav1.ParseToLabelSelector: equalities become matchLabels, the rest matchExpressions.
fn to_label_selector(selector: &Selector) -> LabelSelector {
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
    use kubesim_api::selector::Requirement;
    let mut labels = BTreeMap::new();
    let mut exprs = Vec::new();
    for r in &selector.requirements {
        let (key, operator, values) = match r {
            Requirement::In(k, v) if v.len() == 1 => {
                labels.insert(k.clone(), v[0].clone());
                continue;
            }
            Requirement::In(k, v) => (k, "In", Some(v.clone())),
            Requirement::NotIn(k, v) => (k, "NotIn", Some(v.clone())),
            Requirement::Exists(k) => (k, "Exists", None),
            Requirement::DoesNotExist(k) => (k, "DoesNotExist", None),
        };
        exprs.push(LabelSelectorRequirement { key: key.clone(), operator: operator.into(), values });
    }
    LabelSelector { match_labels: (!labels.is_empty()).then_some(labels), match_expressions: (!exprs.is_empty()).then_some(exprs) }
}

/// `--from-file=[key=]path` (a directory: each regular file in it, by basename),
/// `--from-literal=k=v` and `--from-env-file` data for `create configmap|secret`, in
/// create_configmap.go's order (files, literals, env files) with its messages.
fn literal_and_file_data(args: &Args, cluster: &dyn ClusterView, kind: &str, name: &str) -> Result<BTreeMap<String, String>, String> {
    let mut data = BTreeMap::new();
    let add = |data: &mut BTreeMap<String, String>, key: &str, value: String| -> Result<(), String> {
        if let Some(e) = config_map_key_error(key) {
            return Err(format!("error: {key:?} is not a valid key name for a {kind}: {e}"));
        }
        if data.contains_key(key) {
            return Err(format!("error: cannot add key {key:?}, another key by that name already exists in Data for {kind} {name:?}"));
        }
        data.insert(key.to_string(), value);
        Ok(())
    };
    for file in args.all("from-file") {
        let (key, path) = match file.split_once('=') {
            Some((k, p)) => (Some(k), p),
            None => (None, file),
        };
        match cluster.read_file(path) {
            Ok(text) => add(&mut data, key.unwrap_or_else(|| path.trim_end_matches('/').rsplit('/').next().unwrap_or(path)), text)?,
            Err(_) => match cluster.list_dir(path) {
                Some(_) if key.is_some() => return Err("error: cannot give a key name for a directory path".into()),
                Some(entries) => {
                    for entry in entries {
                        let full = format!("{}/{entry}", path.trim_end_matches('/'));
                        let text = cluster
                            .read_file(&full)
                            .or_else(|e| full.strip_prefix("./").map_or(Err(e), |f| cluster.read_file(f)))
                            .map_err(|e| format!("error: {e}"))?;
                        add(&mut data, &entry, text)?;
                    }
                }
                None => return Err(format!("error: error reading {path}: no such file or directory")),
            },
        }
    }
    for literal in args.all("from-literal") {
        // util.ParseLiteralSource: the first '=' splits; the key must not be empty.
        let (k, v) =
            literal.split_once('=').filter(|(k, _)| !k.is_empty()).ok_or_else(|| format!("error: invalid literal source {literal}, expected key=value"))?;
        add(&mut data, k, v.to_string())?;
    }
    for file in args.all("from-env-file") {
        if cluster.read_file(file).is_err() && cluster.list_dir(file).is_some() {
            return Err("error: env config file cannot be a directory".into());
        }
        let text = cluster.read_file(file).map_err(|_| format!("error: error reading {file}: no such file or directory"))?;
        for line in text.lines().map(str::trim_start).filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
            let (k, v) = line.split_once('=').unwrap_or((line, ""));
            add(&mut data, k, v.to_string())?;
        }
    }
    Ok(data)
}

/// validation.IsConfigMapKey (the rules for ConfigMap and Secret keys).
fn config_map_key_error(key: &str) -> Option<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        errs.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".to_string());
    }
    if key == "." {
        errs.push("must not be '.'".to_string());
    } else if key == ".." {
        errs.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_string());
    }
    (!errs.is_empty()).then(|| errs.join(","))
}

/// Standard base64 with padding (Secret data).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `--dry-run=client -o yaml|json|name` on a generator: the object as the client built it,
/// serialized like kubectl's typed objects (`creationTimestamp: null`, empty `status`,
/// `resources: {}`), without the namespace (the generators leave it to the request).
fn print_generated(args: &Args, cluster: &dyn ClusterView, object: &Object, out: &mut Output) -> bool {
    let format = match get::output_format(args, cluster) {
        Ok(get::Format::Table | get::Format::Wide) => return false,
        Ok(f) => f,
        Err(e) => {
            out.fail(e);
            return true;
        }
    };
    let mut json = object.to_json();
    fn meta_null_timestamp(v: &mut Value) {
        if let Some(m) = v.as_object_mut() {
            let meta = m.entry("metadata").or_insert_with(|| Value::Object(Default::default()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("creationTimestamp".into(), Value::Null);
            }
        }
    }
    fn containers_resources(spec: Option<&mut Value>) {
        for c in spec.and_then(|s| s.get_mut("containers")).and_then(|c| c.as_array_mut()).into_iter().flatten() {
            if let Some(c) = c.as_object_mut() {
                c.entry("resources").or_insert_with(|| Value::Object(Default::default()));
            }
        }
    }
    meta_null_timestamp(&mut json);
    if let Some(meta) = json.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("namespace");
    }
    match object.kind() {
        "Pod" => containers_resources(json.get_mut("spec")),
        "Deployment" => {
            if let Some(spec) = json.get_mut("spec").and_then(|s| s.as_object_mut()) {
                spec.entry("strategy").or_insert_with(|| Value::Object(Default::default()));
            }
            if let Some(t) = json.pointer_mut("/spec/template") {
                meta_null_timestamp(t);
            }
            containers_resources(json.pointer_mut("/spec/template/spec"));
        }
        "Job" => {
            if let Some(t) = json.pointer_mut("/spec/template") {
                meta_null_timestamp(t);
            }
        }
        "CronJob" => {
            if let Some(t) = json.pointer_mut("/spec/jobTemplate") {
                meta_null_timestamp(t);
            }
            if let Some(t) = json.pointer_mut("/spec/jobTemplate/spec/template") {
                meta_null_timestamp(t);
            }
        }
        "Namespace" => {
            if let Some(m) = json.as_object_mut() {
                m.insert("spec".into(), Value::Object(Default::default()));
            }
        }
        _ => {}
    }
    if matches!(object.kind(), "Pod" | "Deployment" | "Namespace" | "Job" | "CronJob" | "ResourceQuota") {
        if let Some(m) = json.as_object_mut() {
            m.insert("status".into(), Value::Object(Default::default()));
        }
    }
    if object.kind() == "Ingress" || object.kind() == "Service" {
        if let Some(m) = json.as_object_mut() {
            m.insert("status".into(), serde_json::json!({"loadBalancer": {}}));
        }
    }
    if object.kind() == "PodDisruptionBudget" {
        if let Some(m) = json.as_object_mut() {
            m.insert("status".into(), serde_json::json!({"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}));
        }
    }
    let Some(info) = object.info() else { return false };
    get::print_values(&format, &[(info, json)], true, out);
    true
}

/// Prints a written object as `-o` asks (`create deployment ... -o yaml`, `apply -o name`,
/// `label ... -o jsonpath=...`); false when no such format was given.
pub(crate) fn print_written(args: &Args, cluster: &dyn ClusterView, info: &'static KindInfo, json: serde_json::Value, out: &mut Output) -> bool {
    match get::output_format(args, cluster) {
        Ok(get::Format::Table | get::Format::Wide) => false,
        Ok(f) => {
            get::print_values(&f, &[(info, json)], true, out);
            true
        }
        Err(e) => {
            out.fail(e);
            true
        }
    }
}

/// The container name `kubectl create deployment` derives from an image (create_deployment.go
/// buildPodSpec): the image's last path element without tag or digest, and with
/// sanitizeAndUniquify `_` and `.` become `-` and a random 5-character suffix is added
/// (`serve_hostname` → `serve-hostname-x4k2p`, a valid DNS-1123 label).
fn container_name_for_image(image: &str, rng: &mut kubesim_apiserver::SimRng) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    let last = last.split(':').next().unwrap_or(last);
    let last = last.split('@').next().unwrap_or(last);
    if last.contains(['_', '.']) {
        format!("{}-{}", last.replace(['_', '.'], "-"), kubesim_apiserver::server::random_suffix(rng))
    } else {
        last.to_string()
    }
}

/// `kubectl delete` (cmd/delete/delete.go).
fn delete(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &mut dyn ClusterView, namespace: &str, out: &mut Output) {
    let force = args.bool("force");
    let mut grace: i64 = match args.get("grace-period").map(|g| g.parse::<i64>()) {
        None => -1,
        Some(Ok(g)) => g,
        Some(Err(_)) => return out.fail("error: invalid argument for \"--grace-period\" flag"),
    };
    if args.has("now") {
        grace = 1;
    }
    if grace == 0 && !force {
        grace = 1;
    }
    if force && grace < 0 {
        grace = 0;
    }
    // delete_flags.go GetCascadingStrategy: the boolean values still work, with a warning.
    let cascade = args.get("cascade").unwrap_or("background");
    let propagation = match cascade.to_ascii_lowercase().as_str() {
        "background" | "true" => Propagation::Background,
        "foreground" => Propagation::Foreground,
        "orphan" | "false" => Propagation::Orphan,
        _ => return out.fail(format!("error: invalid cascade value ({cascade}). Must be \"background\", \"foreground\", or \"orphan\".")),
    };
    match cascade {
        "false" => out.errln("warning: --cascade=false is deprecated (boolean value) and can be replaced with --cascade=orphan."),
        "true" => out.errln("warning: --cascade=true is deprecated (boolean value) and can be replaced with --cascade=background."),
        _ => {}
    }
    if force && grace == 0 {
        out.errln("Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.");
    }
    let options = DeleteOptions { grace_period_seconds: if grace >= 0 { Some(grace) } else { None }, propagation: Some(propagation), resource_version: None };
    let word = if grace == 0 { "force deleted" } else { "deleted" };
    let ignore_not_found = args.bool("ignore-not-found");
    // Collect (info, namespace, name, source file).
    let mut victims: Vec<(&'static KindInfo, String, String, Option<String>)> = Vec::new();
    if args.has("filename") || args.has("kustomize") {
        let Some(inputs) = read_inputs(args, cluster, out) else { return };
        for (file, text) in inputs {
            let (docs, errors) = kubesim_api::decode::parse_documents(&file, &text);
            for e in errors {
                out.fail(e.to_string());
            }
            for d in docs {
                match kubesim_api::decode::decode_document(&file, &d) {
                    Ok(objects) => {
                        for o in objects {
                            let Some(info) = o.info() else { continue };
                            let ns = if o.namespace().is_empty() { namespace.to_string() } else { o.namespace().to_string() };
                            victims.push((info, util::namespace_for(info, &ns), o.name().to_string(), Some(file.clone())));
                        }
                    }
                    Err(e) => out.fail(e.to_string()),
                }
            }
        }
    } else {
        let targets = match parse_targets(&args.positional) {
            Ok(t) => t,
            Err(e) => return out.fail(e.replace("to get", "to delete")),
        };
        let has_names = targets.groups.iter().any(|(_, n)| !n.is_empty());
        let all = args.bool("all");
        if !has_names && !all && !args.has("selector") && !args.has("field-selector") {
            return out.fail("error: resource(s) were provided, but no name was specified");
        }
        let filter = match Filter::from_args(args, namespace) {
            Ok(f) => f,
            Err(e) => return out.fail(e),
        };
        let mut found_any = false;
        for (info, names) in &targets.groups {
            if names.is_empty() {
                let listed = match filter.list(api, info) {
                    Ok(l) => l,
                    Err(e) => return out.fail(e),
                };
                for o in listed {
                    found_any = true;
                    victims.push((info, o.namespace().to_string(), o.name().to_string(), None));
                }
            } else {
                for n in names {
                    victims.push((info, util::namespace_for(info, namespace), n.clone(), None));
                }
            }
        }
        if !has_names && !found_any {
            // delete.go prints this on stdout, without a namespace.
            out.outln("No resources found");
            return;
        }
    }
    let dry = dry_run_suffix(args);
    for (info, ns, name, file) in victims {
        if let Some(suffix) = dry {
            match api.get(info, &ns, &name) {
                Ok(_) => out.outln(format!("{} {name:?} {word}{suffix}", kind_group(info))),
                Err(e) if e.code == 404 && ignore_not_found => {}
                Err(e) => out.fail(server_error(&e)),
            }
            continue;
        }
        match api.delete(info, &ns, &name, options, req) {
            Ok(_) => {
                if args.get("output") == Some("name") {
                    out.outln(type_name(info, &name));
                } else {
                    out.outln(format!("{} {name:?} {word}", kind_group(info)));
                }
            }
            Err(e) if e.code == 404 && ignore_not_found => {}
            Err(e) => match file {
                Some(f) => out.fail(format!("Error from server ({}): error when deleting {f:?}: {}", e.reason, e.message)),
                None => out.fail(server_error(&e)),
            },
        }
    }
}

/// Resolves `TYPE NAME` or `TYPE/NAME` to exactly one object.
fn one_target(args: &Args, api: &ApiServer, namespace: &str) -> Result<(&'static KindInfo, Arc<Object>), String> {
    if let Some((info, ns, name)) = args.file_targets.as_ref().and_then(|t| t.first()) {
        return api.get(info, ns, name).map(|o| (*info, o)).map_err(|e| server_error(&e));
    }
    let targets: Targets = parse_targets(&args.positional)?;
    let (info, names) = targets.groups.first().ok_or("error: you must specify the type of resource")?;
    let name = names.first().ok_or("error: resource name may not be empty")?;
    let ns = util::namespace_for(info, namespace);
    api.get(info, &ns, name).map(|o| (*info, o)).map_err(|e| server_error(&e))
}

/// Every object named or selected by the positional args (`TYPE NAME...`, `TYPE/NAME...`, `TYPE -l ...`, `TYPE --all`).
fn many_targets(args: &Args, positional: &[String], api: &ApiServer, namespace: &str, out: &mut Output) -> Vec<(&'static KindInfo, Arc<Object>)> {
    if let Some(files) = &args.file_targets {
        let mut result = Vec::new();
        for (info, ns, name) in files {
            match api.get(info, ns, name) {
                Ok(o) => result.push((*info, o)),
                Err(e) => out.fail(server_error(&e)),
            }
        }
        return result;
    }
    let targets = match parse_targets(positional) {
        Ok(t) => t,
        Err(e) => {
            out.fail(e);
            return Vec::new();
        }
    };
    let filter = match Filter::from_args(args, namespace) {
        Ok(f) => f,
        Err(e) => {
            out.fail(e);
            return Vec::new();
        }
    };
    let mut result = Vec::new();
    for (info, objects) in get::collect(api, &targets, &filter, namespace, out) {
        for o in objects {
            result.push((info, o));
        }
    }
    result
}

fn with_json(object: &Object, info: &KindInfo, f: impl FnOnce(&mut Value) -> Result<(), String>) -> Result<Object, String> {
    let mut json = object.to_json();
    f(&mut json)?;
    util::from_json(info, json)
}

/// `kubectl scale` (cmd/scale/scale.go).
fn scale(args: &Args, api: &mut ApiServer, req: &mut Request, namespace: &str, out: &mut Output) {
    let replicas = match args.get("replicas").map(|r| r.parse::<i64>()) {
        Some(Ok(r)) if r >= 0 => r,
        Some(Ok(_)) => return out.fail("error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0"),
        Some(Err(_)) => {
            return out.fail(format!(
                "error: invalid argument \"{}\" for \"--replicas\" flag: strconv.ParseInt: parsing \"{}\": invalid syntax",
                args.get("replicas").unwrap_or(""),
                args.get("replicas").unwrap_or("")
            ))
        }
        None => return out.fail("error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0"),
    };
    let current_replicas = args.get("current-replicas").and_then(|c| c.parse::<i64>().ok());
    for (info, object) in many_targets(args, &args.positional, api, namespace, out) {
        if !matches!(info.kind, "Deployment" | "ReplicaSet" | "StatefulSet" | "ReplicationController") {
            out.fail(format!("error: cannot scale {}: no scale subresource", kind_group(info)));
            continue;
        }
        // GET and PUT the scale subresource, as kubectl's scaler does.
        let scale = match api.get_scale(info, object.namespace(), object.name()) {
            Ok(s) => s,
            Err(e) => {
                out.fail(server_error(&e));
                continue;
            }
        };
        if let Some(expected) = current_replicas {
            let actual = scale.pointer("/spec/replicas").and_then(|v| v.as_i64()).unwrap_or(1);
            if actual != expected {
                out.fail(format!("error: Expected replicas to be {expected}, was {actual}"));
                continue;
            }
        }
        if let Some(suffix) = dry_run_suffix(args) {
            out.outln(format!("{} scaled{suffix}", type_name(info, object.name())));
            continue;
        }
        let result = api.update_scale(info, object.namespace(), object.name(), replicas as i32, req).map_err(|e| server_error(&e));
        match result {
            Ok(_) => out.outln(format!("{} scaled", type_name(info, object.name()))),
            Err(e) => out.fail(e),
        }
    }
}

/// kubectl's `set` commands PATCH the object: the server applies the patch to what it holds,
/// so the write carries no resourceVersion precondition and meets no 409 Conflict.
fn unconditional(mut object: Object) -> Object {
    object.metadata_mut().resource_version = None;
    object
}

fn pod_spec_path(kind: &str) -> Option<&'static str> {
    match kind {
        "Pod" => Some("/spec"),
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job" | "ReplicationController" => Some("/spec/template/spec"),
        "CronJob" => Some("/spec/jobTemplate/spec/template/spec"),
        _ => None,
    }
}

/// `kubectl set image|env|resources` (cmd/set/).
fn set(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output) {
    match args.positional.first().map(String::as_str) {
        Some("image") => {}
        Some("env") => return set_containers(args, api, req, cluster, namespace, out, SetKind::Env),
        Some("resources") => return set_containers(args, api, req, cluster, namespace, out, SetKind::Resources),
        Some(sub @ ("serviceaccount" | "sa" | "selector" | "subject")) => return set_object(args, api, req, cluster, namespace, out, sub),
        Some(other) => {
            return out.fail(format!(
                "error: unknown command \"{other}\" for \"kubectl set\" (kubesim supports set image, env, resources, serviceaccount, selector, subject)"
            ))
        }
        None => return out.fail("error: you must specify a subcommand: image, env, resources, serviceaccount, selector or subject"),
    }
    let rest = &args.positional[1..];
    let (resources, pairs): (Vec<String>, Vec<String>) = rest.iter().cloned().partition(|a| !a.contains('='));
    if pairs.is_empty() {
        return out.fail("error: at least one image update is required");
    }
    let mut updates: Vec<(String, String)> = Vec::new();
    for p in &pairs {
        let (c, i) = p.split_once('=').unwrap_or((p, ""));
        updates.push((c.to_string(), i.to_string()));
    }
    let targets = if args.bool("local") {
        let Some(t) = local_targets(args, cluster, &resources, true, out) else { return };
        t
    } else if args.bool("all") && resources.len() == 1 && !resources[0].contains('/') {
        let Ok(info) = util::resolve(&resources[0]) else { return out.fail(format!("error: the server doesn't have a resource type \"{}\"", resources[0])) };
        util::list(api, info, Some(namespace)).into_iter().map(|o| (info, o)).collect()
    } else {
        many_targets(args, &resources, api, namespace, out)
    };
    for (info, object) in targets {
        let Some(path) = pod_spec_path(info.kind) else {
            out.fail(format!("error: {} is not a workload with a pod template", type_name(info, object.name())));
            continue;
        };
        let mut json = object.to_json();
        let mut missing = Vec::new();
        if let Some(spec) = json.pointer_mut(path) {
            for (container, image) in &updates {
                let mut found = false;
                for list in ["initContainers", "containers"] {
                    for c in spec.get_mut(list).and_then(|l| l.as_array_mut()).into_iter().flatten() {
                        if container == "*" || c.get("name").and_then(|n| n.as_str()) == Some(container.as_str()) {
                            c["image"] = Value::String(image.clone());
                            found = true;
                        }
                    }
                }
                if !found {
                    missing.push(container.clone());
                }
            }
        }
        if !missing.is_empty() {
            for c in missing {
                out.fail(format!("error: unable to find container named \"{c}\""));
            }
            continue;
        }
        set_write(args, api, req, cluster, info, &object, json, "image updated", out);
    }
}

/// `kubectl set env --list [--resolve]` (set_env.go): each selected container's env, values
/// from references shown as `# NAME from configmap C, key K` (envutil.GetEnvVarRefString) or
/// resolved.
fn set_env_list(args: &Args, api: &ApiServer, resources: &[String], namespace: &str, out: &mut Output) {
    let only = args.get("containers").or(args.get("container")).filter(|c| *c != "*");
    let resolve = args.bool("resolve");
    for (info, object) in many_targets(args, resources, api, namespace, out) {
        let Some(path) = pod_spec_path(info.kind) else { continue };
        let json = object.to_json();
        let Some(spec) = json.pointer(path) else { continue };
        for list in ["containers", "initContainers"] {
            for c in spec.get(list).and_then(|l| l.as_array()).into_iter().flatten() {
                let cname = c.get("name").and_then(|n| n.as_str()).unwrap_or_default();
                if only.is_some_and(|n| n != cname) {
                    continue;
                }
                out.outln(format!("# {} {}, container {cname}", info.kind, object.name()));
                for env in c.get("env").and_then(|e| e.as_array()).into_iter().flatten() {
                    let name = env.get("name").and_then(|n| n.as_str()).unwrap_or_default();
                    let Some(from) = env.get("valueFrom") else {
                        out.outln(format!("{name}={}", env.get("value").and_then(|v| v.as_str()).unwrap_or_default()));
                        continue;
                    };
                    let key_ref =
                        |r: &str| from.get(r).map(|x| (x["name"].as_str().unwrap_or_default().to_string(), x["key"].as_str().unwrap_or_default().to_string()));
                    let reference = if let Some((n, k)) = key_ref("configMapKeyRef") {
                        format!("configmap {n}, key {k}")
                    } else if let Some((n, k)) = key_ref("secretKeyRef") {
                        format!("secret {n}, key {k}")
                    } else if let Some(f) = from.get("fieldRef") {
                        format!("field path {}", f["fieldPath"].as_str().unwrap_or_default())
                    } else if let Some(r) = from.get("resourceFieldRef") {
                        let container = r.get("containerName").and_then(|c| c.as_str()).filter(|c| !c.is_empty()).map(|c| format!("{c}/")).unwrap_or_default();
                        format!("resource field {container}{}", r["resource"].as_str().unwrap_or_default())
                    } else {
                        "invalid valueFrom".to_string()
                    };
                    let resolved = resolve
                        .then(|| {
                            let lookup = |kind: &str, (n, k): (String, String)| {
                                let o = api.get(kind_info("v1", kind)?, namespace, &n).ok()?;
                                let v = o.to_json().get("data")?.get(&k)?.as_str()?.to_string();
                                if kind == "Secret" {
                                    crate::gotemplate::base64_decode(&v).ok().and_then(|b| String::from_utf8(b).ok())
                                } else {
                                    Some(v)
                                }
                            };
                            key_ref("configMapKeyRef")
                                .and_then(|r| lookup("ConfigMap", r))
                                .or_else(|| key_ref("secretKeyRef").and_then(|r| lookup("Secret", r)))
                        })
                        .flatten();
                    match resolved {
                        Some(v) => out.outln(format!("{name}={v}")),
                        None => out.outln(format!("# {name} from {reference}")),
                    }
                }
            }
        }
    }
}

/// `kubectl set serviceaccount` (set_serviceaccount.go: the pod template's
/// serviceAccountName), `set selector` (set_selector.go: a Service's spec.selector) and
/// `set subject` (set_subject.go: --user/--group/--serviceaccount=NS:NAME added to a
/// RoleBinding or ClusterRoleBinding's subjects).
fn set_object(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output, sub: &str) {
    let rest: Vec<String> = args.positional[1..].to_vec();
    let from_files = args.file_targets.is_some();
    let (resources, value): (Vec<String>, Option<String>) = match sub {
        // The last word is the account (or the selector); the others name the objects.
        "serviceaccount" | "sa" | "selector" => {
            let keep = if from_files { 0 } else { rest.len().saturating_sub(1) };
            let value = rest.get(keep).cloned();
            (rest[..keep.min(rest.len())].to_vec(), value)
        }
        _ => (rest, None),
    };
    let mut selector = BTreeMap::new();
    match sub {
        "serviceaccount" | "sa" if value.as_deref().is_none_or(str::is_empty) => {
            return out.fail("error: serviceaccount is required\nSee 'kubectl set serviceaccount -h' for help and examples");
        }
        "selector" => {
            let Some(expr) = value.as_deref() else { return out.fail("error: one selector is required\nSee 'kubectl set selector -h' for help and examples") };
            for part in expr.split(',').filter(|p| !p.is_empty()) {
                let Some((k, v)) = part.split_once('=') else {
                    return out.fail(format!("error: invalid selector {expr:?}: only equality-based selectors are supported"));
                };
                selector.insert(k.trim_end_matches('=').to_string(), v.to_string());
            }
        }
        "subject" if !args.has("user") && !args.has("group") && !args.has("serviceaccount") => {
            return out.fail("error: you must specify at least one value of user, group or serviceaccount\nSee 'kubectl set subject -h' for help and examples");
        }
        _ => {}
    }
    let mut subjects: Vec<Value> = Vec::new();
    for u in args.all("user") {
        subjects.push(serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u}));
    }
    for g in args.all("group") {
        subjects.push(serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}));
    }
    for sa in args.all("serviceaccount") {
        let Some((ns, name)) = sa.split_once(':') else {
            return out.fail(format!("error: serviceaccount must be <namespace>:<name>, got {sa:?}"));
        };
        subjects.push(serde_json::json!({"kind": "ServiceAccount", "name": name, "namespace": ns}));
    }
    let targets = if args.bool("local") {
        let Some(t) = local_targets(args, cluster, &resources, true, out) else { return };
        t
    } else {
        many_targets(args, &resources, api, namespace, out)
    };
    for (info, object) in targets {
        let mut json = object.to_json();
        let word = match sub {
            "serviceaccount" | "sa" => {
                let Some(path) = pod_spec_path(info.kind) else {
                    out.fail(format!("error: {} is not a workload with a pod template", type_name(info, object.name())));
                    continue;
                };
                if let Some(spec) = json.pointer_mut(path).and_then(|s| s.as_object_mut()) {
                    spec.insert("serviceAccountName".into(), Value::String(value.clone().unwrap_or_default()));
                    if spec.contains_key("serviceAccount") {
                        spec.insert("serviceAccount".into(), Value::String(value.clone().unwrap_or_default()));
                    }
                }
                "serviceaccount updated"
            }
            "selector" => {
                if info.kind != "Service" {
                    out.fail(format!("error: setting a selector is only supported for Services (got {})", info.kind));
                    continue;
                }
                json["spec"]["selector"] = serde_json::to_value(&selector).unwrap_or_default();
                "selector updated"
            }
            _ => {
                if info.kind != "RoleBinding" && info.kind != "ClusterRoleBinding" {
                    out.fail(format!("error: {} is not a RoleBinding or ClusterRoleBinding", type_name(info, object.name())));
                    continue;
                }
                let list = json.as_object_mut().expect("objects are maps").entry("subjects").or_insert_with(|| Value::Array(Vec::new()));
                if let Some(list) = list.as_array_mut() {
                    for s in &subjects {
                        if !list.contains(s) {
                            list.push(s.clone());
                        }
                    }
                }
                "subjects updated"
            }
        };
        set_write(args, api, req, cluster, info, &object, json, word, out);
    }
}

/// `kubectl certificate approve|deny CSR...` (cmd/certificates/certificates.go
/// addConditionIfNeeded): adds the Approved/Denied condition unless present; the opposite
/// condition is an error.
fn certificate(args: &Args, api: &mut ApiServer, req: &mut Request, out: &mut Output) {
    let (condition, opposite, reason, message, word) = match args.positional.first().map(String::as_str) {
        Some("approve") => ("Approved", "Denied", "KubectlApprove", "This CSR was approved by kubectl certificate approve.", "approved"),
        Some("deny") => ("Denied", "Approved", "KubectlDeny", "This CSR was denied by kubectl certificate deny.", "denied"),
        Some(other) => return out.fail(format!("error: unknown command \"{other}\" for \"kubectl certificate\"")),
        None => return out.fail("error: you must specify a subcommand: approve or deny"),
    };
    let names: Vec<String> = args.positional[1..].to_vec();
    if names.is_empty() && args.file_targets.is_none() {
        return out.fail(format!(
            "error: one or more CSRs must be specified as <name> or -f <filename>\nSee 'kubectl certificate {} -h' for help and examples",
            args.positional[0]
        ));
    }
    let info = kind_info("certificates.k8s.io/v1", "CertificateSigningRequest").expect("csrs");
    let force = args.bool("force");
    let targets: Vec<String> = match &args.file_targets {
        Some(files) => files.iter().map(|(_, _, n)| n.clone()).collect(),
        None => names,
    };
    for name in targets {
        let object = match api.get(info, "", &name) {
            Ok(o) => o,
            Err(e) => {
                out.fail(server_error(&e));
                continue;
            }
        };
        let mut json = object.to_json();
        let conditions: Vec<Value> = json.pointer("/status/conditions").and_then(|c| c.as_array()).cloned().unwrap_or_default();
        if conditions.iter().any(|c| c["type"] == opposite) {
            out.fail(format!("error: certificate signing request {name:?} is already {opposite}"));
            continue;
        }
        if !conditions.iter().any(|c| c["type"] == condition) || force {
            let mut conditions = conditions;
            conditions.push(serde_json::json!({"type": condition, "status": "True", "reason": reason, "message": message, "lastUpdateTime": time_at(req.now)}));
            if !json.get("status").is_some_and(|s| s.is_object()) {
                json["status"] = Value::Object(Default::default());
            }
            json["status"]["conditions"] = Value::Array(conditions);
            // UpdateApproval: PUT .../approval, which (like /status) writes the conditions.
            let result = util::from_json(info, json).map_err(|e| format!("error: {e}")).and_then(|o| api.update_status(o, req).map_err(|e| server_error(&e)));
            if let Err(e) = result {
                out.fail(e);
                continue;
            }
        }
        out.outln(format!("{} {word}", type_name(info, &name)));
    }
}

/// The objects of the -f files for `--local` (label.go, annotate.go and cmd/set validate):
/// no resource arguments, at least one file.
fn local_targets(
    args: &Args,
    cluster: &dyn ClusterView,
    resources: &[String],
    pod_words: bool,
    out: &mut Output,
) -> Option<Vec<(&'static KindInfo, Arc<Object>)>> {
    let (file, json) = if pod_words { ("pod.yaml", "pod.json") } else { ("rsrc.yaml", "rsrc.json") };
    if args.get("dry-run") == Some("server") {
        out.fail("error: cannot specify --local and --dry-run=server - did you mean --dry-run=client?");
        return None;
    }
    if !resources.is_empty() {
        out.fail(format!("error: can only use local files by -f {file} or --filename={json} when --local=true is set"));
        return None;
    }
    if !args.has("filename") && !args.has("kustomize") {
        out.fail(format!("error: one or more files must be specified as -f {file} or --filename={json}"));
        return None;
    }
    let inputs = read_inputs(args, cluster, out)?;
    let mut objects = Vec::new();
    for (file, text) in inputs {
        let (docs, errors) = kubesim_api::decode::parse_documents(&file, &text);
        if let Some(e) = errors.first() {
            out.fail(format!("error: {e}"));
            return None;
        }
        for d in docs {
            match kubesim_api::decode::decode_document(&file, &d) {
                Ok(list) => objects.extend(list.into_iter().filter_map(|o| o.info().map(|i| (i, Arc::new(o))))),
                Err(e) => {
                    out.fail(format!("error: {e}"));
                    return None;
                }
            }
        }
    }
    Some(objects)
}

/// The end of a `kubectl set` change (cmd/set CalculatePatches): nothing when the object is
/// unchanged; with --local or --dry-run=client the changed object is printed (-o, as the typed
/// object kubectl encodes) or `NAME WORD (dry run)`; otherwise the update is sent.
#[allow(clippy::too_many_arguments)]
fn set_write(
    args: &Args,
    api: &mut ApiServer,
    req: &mut Request,
    cluster: &dyn ClusterView,
    info: &'static KindInfo,
    before: &Object,
    json: Value,
    word: &str,
    out: &mut Output,
) {
    let o = match util::from_json(info, json) {
        Ok(o) => o,
        Err(e) => return out.fail(format!("error: {e}")),
    };
    if o.to_json() == before.to_json() {
        return;
    }
    let local = args.bool("local");
    match args.get("dry-run").filter(|v| *v != "none" && *v != "false") {
        _ if local => {
            if !print_generated(args, cluster, &o, out) {
                out.outln(format!("{} {word}", type_name(info, o.name())));
            }
        }
        Some("server") => {
            if let Err(e) = util::dry_run_update(api, &o) {
                return out.fail(server_error(&e));
            }
            if !print_written(args, cluster, info, o.to_json(), out) {
                out.outln(format!("{} {word} (server dry run)", type_name(info, o.name())));
            }
        }
        Some(_) => {
            if !print_generated(args, cluster, &o, out) {
                out.outln(format!("{} {word} (dry run)", type_name(info, o.name())));
            }
        }
        None => match util::update(api, unconditional(o), req) {
            Ok(written) => {
                if !print_written(args, cluster, info, written.to_json(), out) {
                    out.outln(format!("{} {word}", type_name(info, written.name())));
                }
            }
            Err(e) => out.fail(server_error(&e)),
        },
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SetKind {
    Env,
    Resources,
}

/// `kubectl set env` (set_env.go: `KEY=VALUE`, `KEY-`) and `kubectl set resources`
/// (set_resources.go: `--limits`/`--requests` as `cpu=200m,memory=512Mi`), for every container
/// or the one named by `-c`.
fn set_containers(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output, kind: SetKind) {
    let rest = &args.positional[1..];
    let (resources, pairs): (Vec<String>, Vec<String>) = rest.iter().cloned().partition(|a| {
        let env_change = a.contains('=') || (a.ends_with('-') && !a.contains('/'));
        !(kind == SetKind::Env && env_change)
    });
    let mut env_set: Vec<(String, String)> = Vec::new();
    let mut env_remove: Vec<String> = Vec::new();
    for p in &pairs {
        match p.split_once('=') {
            Some((k, v)) => env_set.push((k.to_string(), v.to_string())),
            None => env_remove.push(p.trim_end_matches('-').to_string()),
        }
    }
    let parse_list = |flag: &str| -> Result<serde_json::Map<String, Value>, String> {
        let mut m = serde_json::Map::new();
        for item in args.get(flag).unwrap_or("").split(',').filter(|i| !i.is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| format!("error: invalid {flag} {item}: expected NAME=QUANTITY"))?;
            kubesim_api::quantity::parse_milli(v).map_err(|e| format!("error: invalid {flag} {item}: {e}"))?;
            m.insert(k.to_string(), Value::String(v.to_string()));
        }
        Ok(m)
    };
    let (limits, requests) = match (parse_list("limits"), parse_list("requests")) {
        (Ok(l), Ok(r)) => (l, r),
        (Err(e), _) | (_, Err(e)) => return out.fail(e),
    };
    // set_env.go --from=configmap/NAME|secret/NAME [--keys] [--prefix]: one valueFrom
    // reference per key (keyToEnvName: upper case, other characters as `_`).
    let mut env_from: Vec<Value> = Vec::new();
    if kind == SetKind::Env {
        if let Some(from) = args.get("from") {
            let (kind_word, name) = from.split_once('/').unwrap_or(("", from));
            let keys: Vec<&str> = args.get("keys").map(|k| k.split(',').collect()).unwrap_or_default();
            let (info, reference) = match kind_word {
                "configmap" | "configmaps" | "cm" => (kind_info("v1", "ConfigMap"), "configMapKeyRef"),
                "secret" | "secrets" => (kind_info("v1", "Secret"), "secretKeyRef"),
                _ => return out.fail("error: unsupported resource specified in --from"),
            };
            let source = match api.get(info.expect("built-in kind"), namespace, name) {
                Ok(o) => o,
                Err(e) => return out.fail(server_error(&e)),
            };
            let json = source.to_json();
            let mut data: Vec<String> = json.get("data").and_then(|d| d.as_object()).map(|d| d.keys().cloned().collect()).unwrap_or_default();
            data.sort();
            let prefix = args.get("prefix").unwrap_or("");
            for key in data.into_iter().filter(|k| keys.is_empty() || keys.contains(&k.as_str())) {
                let env_name: String = key.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c.to_ascii_uppercase() } else { '_' }).collect();
                env_from.push(serde_json::json!({"name": format!("{prefix}{env_name}"), "valueFrom": {reference: {"key": key, "name": name}}}));
            }
        }
    }
    let list_only = kind == SetKind::Env && args.bool("list");
    if kind == SetKind::Env && env_set.is_empty() && env_remove.is_empty() && env_from.is_empty() && !list_only {
        return out.fail("error: at least one environment variable must be provided");
    }
    if list_only {
        return set_env_list(args, api, &resources, namespace, out);
    }
    if kind == SetKind::Resources && limits.is_empty() && requests.is_empty() {
        return out.fail("error: you must specify an update to requests or limits (in the form of --requests/--limits)");
    }
    let only = args.get("containers").or(args.get("container")).filter(|c| *c != "*");
    let targets = if args.bool("local") {
        let Some(t) = local_targets(args, cluster, &resources, true, out) else { return };
        t
    } else {
        many_targets(args, &resources, api, namespace, out)
    };
    for (info, object) in targets {
        let Some(path) = pod_spec_path(info.kind) else {
            out.fail(format!("error: {} is not a workload with a pod template", type_name(info, object.name())));
            continue;
        };
        let mut json = object.to_json();
        let mut touched = 0;
        if let Some(spec) = json.pointer_mut(path) {
            for c in spec.get_mut("containers").and_then(|l| l.as_array_mut()).into_iter().flatten() {
                if only.is_some_and(|n| c.get("name").and_then(|x| x.as_str()) != Some(n)) {
                    continue;
                }
                touched += 1;
                match kind {
                    SetKind::Env => {
                        let env = c.as_object_mut().expect("containers are objects").entry("env").or_insert_with(|| Value::Array(Vec::new()));
                        let list = env.as_array_mut().expect("env is a list");
                        list.retain(|e| !env_remove.iter().any(|r| e.get("name").and_then(|n| n.as_str()) == Some(r.as_str())));
                        let additions = env_from.iter().cloned().chain(env_set.iter().map(|(k, v)| serde_json::json!({"name": k, "value": v})));
                        for var in additions {
                            let k = var["name"].as_str().unwrap_or_default().to_string();
                            match list.iter_mut().find(|e| e.get("name").and_then(|n| n.as_str()) == Some(k.as_str())) {
                                Some(e) => *e = var,
                                None => list.push(var),
                            }
                        }
                        if list.is_empty() {
                            c.as_object_mut().expect("containers are objects").remove("env");
                        }
                    }
                    SetKind::Resources => {
                        let resources =
                            c.as_object_mut().expect("containers are objects").entry("resources").or_insert_with(|| Value::Object(Default::default()));
                        for (key, values) in [("limits", &limits), ("requests", &requests)] {
                            if values.is_empty() {
                                continue;
                            }
                            let m = resources.as_object_mut().expect("resources is an object").entry(key).or_insert_with(|| Value::Object(Default::default()));
                            for (k, v) in values {
                                m[k] = v.clone();
                            }
                        }
                    }
                }
            }
        }
        if touched == 0 {
            out.fail(format!("error: unable to find container named {}", only.unwrap_or("")));
            continue;
        }
        let word = if kind == SetKind::Env { "env updated" } else { "resource requirements updated" };
        set_write(args, api, req, cluster, info, &object, json, word, out);
    }
}

/// `kubectl autoscale` (cmd/autoscale/autoscale.go): an autoscaling/v2 HorizontalPodAutoscaler.
fn autoscale(args: &Args, api: &mut ApiServer, req: &mut Request, namespace: &str, out: &mut Output) {
    let (info, object) = match one_target(args, api, namespace) {
        Ok(t) => t,
        Err(e) => return out.fail(e),
    };
    if !matches!(info.kind, "Deployment" | "ReplicaSet" | "StatefulSet" | "ReplicationController") {
        return out.fail(format!("error: cannot autoscale a {}: no scale subresource", info.kind));
    }
    let Some(max) = args.get("max").and_then(|m| m.parse::<i64>().ok()).filter(|m| *m >= 1) else {
        return out.fail("error: --max=MAXPODS is required and must be at least 1");
    };
    let min = args.get("min").and_then(|m| m.parse::<i64>().ok());
    if min.is_some_and(|m| m > max) {
        return out.fail(format!("error: --max=MAXPODS must be larger or equal to --min=MINPODS, got max: {max}, min: {}", min.unwrap_or(0)));
    }
    let name = args.get("name").unwrap_or(object.name()).to_string();
    let mut spec = serde_json::json!({
        "scaleTargetRef": {"apiVersion": object.api_version(), "kind": info.kind, "name": object.name()},
        "maxReplicas": max,
    });
    if let Some(min) = min {
        spec["minReplicas"] = Value::from(min);
    }
    let cpu = args.get("cpu-percent").or(args.get("cpu")).map(|c| c.trim_end_matches('%')).and_then(|c| c.parse::<i64>().ok()).filter(|c| *c >= 0);
    if let Some(cpu) = cpu {
        spec["metrics"] = serde_json::json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}]);
    }
    let json = serde_json::json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name, "namespace": namespace}, "spec": spec});
    let hpa_info = kind_info("autoscaling/v2", "HorizontalPodAutoscaler").expect("hpa");
    let hpa = match util::from_json(hpa_info, json) {
        Ok(o) => o,
        Err(e) => return out.fail(format!("error: {e}")),
    };
    if dry_run(args) {
        return out.outln(format!("horizontalpodautoscaler.autoscaling/{name} autoscaled (dry run)"));
    }
    match api.create(hpa, req) {
        Ok(_) => out.outln(format!("horizontalpodautoscaler.autoscaling/{name} autoscaled")),
        Err(e) => out.fail(server_error(&e)),
    }
}

/// `kubectl label` / `kubectl annotate` (cmd/label/label.go, cmd/annotate/annotate.go).
fn label_or_annotate(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output, labels: bool) {
    let from_files = args.file_targets.is_some();
    let (resources, changes): (Vec<String>, Vec<String>) =
        args.positional.iter().cloned().partition(|a| !(a.contains('=') || (a.ends_with('-') && (from_files || args.positional.first() != Some(a)))));
    let what = if labels { "labels" } else { "annotations" };
    if changes.is_empty() {
        return out.fail(format!("error: at least one {} update is required", if labels { "label" } else { "annotation" }));
    }
    let mut set: Vec<(String, String)> = Vec::new();
    let mut remove: Vec<String> = Vec::new();
    for c in &changes {
        if let Some((k, v)) = c.split_once('=') {
            if labels {
                if let Some(problem) = kubesim_api::validation::label_key_error(k) {
                    return out.fail(format!("error: invalid label spec: {c}: {problem}"));
                }
                if let Some(problem) = kubesim_api::validation::label_value_error(v) {
                    return out.fail(format!("error: invalid label value: \"{c}\": {problem}"));
                }
            }
            set.push((k.to_string(), v.to_string()));
        } else if let Some(k) = c.strip_suffix('-') {
            remove.push(k.to_string());
        }
    }
    // label.go parseLabels / annotate.go validateAnnotations.
    let both: Vec<&String> = remove.iter().filter(|r| set.iter().any(|(k, _)| k == *r)).collect();
    if !both.is_empty() {
        if labels {
            return out.fail("error: can not both modify and remove a label in the same command");
        }
        let names: Vec<&str> = both.iter().map(|s| s.as_str()).collect();
        return out.fail(format!("error: can not both modify and remove the following annotation(s) in the same command: {}", names.join(", ")));
    }
    let overwrite = args.bool("overwrite");
    // label.go / annotate.go: --local edits the objects of the -f files without the server;
    // --dry-run=client computes the change against the live object but sends nothing.
    let local = args.bool("local");
    let dry = args.get("dry-run").filter(|v| *v != "none" && *v != "false");
    let targets = if local {
        // label.go Validate / annotate.go validate.
        let Some(t) = local_targets(args, cluster, &resources, labels, out) else { return };
        t
    } else if args.bool("all") && resources.len() == 1 && !resources[0].contains('/') {
        let Ok(info) = util::resolve(&resources[0]) else { return out.fail(format!("error: the server doesn't have a resource type \"{}\"", resources[0])) };
        let filter = Filter::namespace_only(if args.bool("all-namespaces") { None } else { Some(namespace.to_string()) });
        filter.list(api, info).unwrap_or_default().into_iter().map(|o| (info, o)).collect()
    } else {
        many_targets(args, &resources, api, namespace, out)
    };
    for (info, object) in targets {
        let mut o = (*object).clone();
        let meta = o.metadata_mut();
        let map = if labels { meta.labels.get_or_insert_with(Default::default) } else { meta.annotations.get_or_insert_with(Default::default) };
        // label.go validateNoOverwrites / annotate.go validateNoAnnotationOverwrites: a key
        // that already has a different value needs --overwrite (kubernetes.io/change-cause
        // never does).
        let mut conflict = None;
        let mut declared = Vec::new();
        for (k, v) in &set {
            if let Some(existing) = map.get(k) {
                if existing != v && !overwrite {
                    if labels {
                        conflict = Some(format!("error: '{k}' already has a value ({existing}), and --overwrite is false"));
                        break;
                    } else if k != "kubernetes.io/change-cause" {
                        declared.push(format!("'{k}' already has a value ({existing})"));
                    }
                }
            }
        }
        if !declared.is_empty() {
            conflict = Some(format!("error: --overwrite is false but found the following declared annotation(s): {}", declared.join("; ")));
        }
        if conflict.is_none() {
            for (k, v) in &set {
                map.insert(k.clone(), v.clone());
            }
        }
        if let Some(c) = conflict {
            out.fail(c);
            continue;
        }
        for k in &remove {
            map.remove(k);
        }
        // An emptied map stays `{}` in a --local result (the server drops it on write).
        if map.is_empty() && !local {
            if labels {
                meta.labels = None
            } else {
                meta.annotations = None
            }
        }
        // label.go updateDataChangeMsg: "unlabeled" when the object shrank (without --overwrite).
        let shrank = o.to_json().to_string().len() < object.to_json().to_string().len();
        let verb = match (labels, shrank && !overwrite) {
            (true, true) => "unlabeled",
            (true, false) => "labeled",
            _ => "annotated",
        };
        if local || dry.is_some() {
            if !print_written(args, cluster, info, o.to_json(), out) {
                let suffix = match dry {
                    Some("server") => " (server dry run)",
                    Some(_) => " (dry run)",
                    None => "",
                };
                let verb = if o == *object && labels { "not labeled".to_string() } else { verb.to_string() };
                out.outln(format!("{} {verb}{suffix}", type_name(info, object.name())));
            }
            continue;
        }
        // annotate.go prints "annotated" whether or not anything changed.
        if o == *object {
            out.outln(format!("{} {}", type_name(info, object.name()), if labels { "not labeled" } else { "annotated" }));
            continue;
        }
        o.metadata_mut().resource_version = None;
        match util::update(api, o, req) {
            Ok(written) => {
                if !print_written(args, cluster, info, written.to_json(), out) {
                    out.outln(format!("{} {verb}", type_name(info, object.name())))
                }
            }
            Err(e) => out.fail(server_error(&e)),
        }
    }
    let _ = what;
}

/// `kubectl patch` (cmd/patch/patch.go).
fn patch(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output) {
    let from_file;
    let patch_text = match (args.get("patch"), args.get("patch-file")) {
        (Some(_), Some(_)) => return out.fail("error: cannot specify --patch and --patch-file together"),
        (Some(p), None) => p,
        (None, Some(path)) => match cluster.read_file(path) {
            Ok(text) => {
                from_file = text;
                from_file.as_str()
            }
            Err(_) => return out.fail(format!("error: unable to read patch file: open {path}: no such file or directory")),
        },
        (None, None) => return out.fail("error: must specify --patch or --patch-file containing the contents of the patch"),
    };
    let patch: Value = match serde_json::from_str(patch_text) {
        Ok(v) => v,
        Err(_) => match kubesim_api::decode::parse_documents("patch", patch_text) {
            (docs, errs) if errs.is_empty() && docs.len() == 1 => docs[0].value.clone(),
            _ => return out.fail(format!("error: unable to parse \"{patch_text}\": yaml: invalid patch")),
        },
    };
    // patch.go --local: patch the -f objects and print them; nothing is sent.
    if args.bool("local") {
        let resources: Vec<String> = args.positional.clone();
        if !resources.is_empty() {
            return out.fail("error: cannot specify --local and server resources");
        }
        let Some(targets) = local_targets(args, cluster, &[], false, out) else { return };
        for (info, object) in targets {
            let current = object.to_json();
            let patched = match args.get("type").unwrap_or("strategic") {
                "strategic" => Ok(merge::strategic_patch(&current, &patch)),
                "merge" => Ok(merge::merge_patch(&current, &patch)),
                "json" => merge::json_patch(&current, &patch),
                other => return out.fail(format!("error: --type must be one of [json merge strategic], not \"{other}\"")),
            };
            let patched = match patched.and_then(|p| util::from_json(info, p)) {
                Ok(o) => o,
                Err(e) => return out.fail(format!("error: {e}")),
            };
            // patch.go prints the patched unstructured object as it is.
            if !print_written(args, cluster, info, patched.to_json(), out) {
                out.outln(format!("{} patched", type_name(info, patched.name())));
            }
        }
        return;
    }
    let (info, object) = match one_target(args, api, namespace) {
        Ok(t) => t,
        Err(e) => return out.fail(e),
    };
    // --subresource=scale: the patch applies to the autoscaling/v1 Scale (only spec.replicas
    // is written back), and the result is named scale.autoscaling/NAME.
    if args.get("subresource") == Some("scale") {
        let scale = match api.get_scale(info, object.namespace(), object.name()) {
            Ok(s) => s,
            Err(e) => return out.fail(server_error(&e)),
        };
        let patched = match args.get("type").unwrap_or("strategic") {
            "strategic" => Ok(merge::strategic_patch(&scale, &patch)),
            "merge" => Ok(merge::merge_patch(&scale, &patch)),
            "json" => merge::json_patch(&scale, &patch),
            other => return out.fail(format!("error: --type must be one of [json merge strategic], not \"{other}\"")),
        };
        let patched = match patched {
            Ok(p) => p,
            Err(e) => return out.fail(format!("error: {e}")),
        };
        let Some(replicas) = patched.pointer("/spec/replicas").and_then(|r| r.as_i64()) else {
            return out.fail("Error from server (BadRequest): spec.replicas must be an integer");
        };
        if patched == scale {
            return out.outln(format!("scale.autoscaling/{} patched (no change)", object.name()));
        }
        if let Some(suffix) = dry_run_suffix(args) {
            return out.outln(format!("scale.autoscaling/{} patched{suffix}", object.name()));
        }
        return match api.update_scale(info, object.namespace(), object.name(), replicas as i32, req) {
            Ok(_) => out.outln(format!("scale.autoscaling/{} patched", object.name())),
            Err(e) => out.fail(server_error(&e)),
        };
    }
    let current = object.to_json();
    let patched = match args.get("type").unwrap_or("strategic") {
        "strategic" => Ok(merge::strategic_patch(&current, &patch)),
        "merge" => Ok(merge::merge_patch(&current, &patch)),
        "json" => merge::json_patch(&current, &patch),
        other => return out.fail(format!("error: --type must be one of [json merge strategic], not \"{other}\"")),
    };
    let patched = match patched {
        Ok(p) => p,
        Err(e) => return out.fail(format!("error: {e}")),
    };
    let status_changed = patched.get("status") != current.get("status") && args.get("subresource") == Some("status");
    let mut new_object = match util::from_json(info, patched) {
        Ok(o) => o,
        Err(e) => return out.fail(format!("Error from server (BadRequest): {e}")),
    };
    if new_object == *object {
        return out.outln(format!("{} patched (no change)", type_name(info, object.name())));
    }
    if let Some(suffix) = dry_run_suffix(args) {
        if !print_written(args, cluster, info, new_object.to_json(), out) {
            out.outln(format!("{} patched{suffix}", type_name(info, object.name())));
        }
        return;
    }
    new_object.metadata_mut().resource_version = None;
    let result = if status_changed { api.update_status(new_object, req) } else { util::update(api, new_object, req) };
    match result {
        Ok(written) => {
            if !print_written(args, cluster, info, written.to_json(), out) {
                out.outln(format!("{} patched", type_name(info, object.name())))
            }
        }
        Err(e) => out.fail(server_error(&e)),
    }
}

fn get_node(api: &ApiServer, name: &str) -> Result<Arc<Object>, ApiError> {
    api.get(kind_info("v1", "Node").expect("nodes are served"), "", name)
}

/// `kubectl taint` (cmd/taint/taint.go).
fn taint(args: &Args, api: &mut ApiServer, req: &mut Request, out: &mut Output) {
    let pos = &args.positional;
    if pos.len() < 2 {
        return out.fail("error: at least one taint update is required");
    }
    let (node_names, specs): (Vec<String>, Vec<String>) = match pos[0].as_str() {
        "node" | "nodes" | "no" => {
            if args.bool("all") {
                (util::list(api, kind_info("v1", "Node").expect("nodes"), None).iter().map(|n| n.name().to_string()).collect(), pos[1..].to_vec())
            } else {
                (vec![pos[1].clone()], pos[2..].to_vec())
            }
        }
        s if s.starts_with("node/") || s.starts_with("nodes/") => (vec![s.split_once('/').map(|x| x.1).unwrap_or("").to_string()], pos[1..].to_vec()),
        other => return out.fail(format!("error: invalid resource type {other}, only node types are supported")),
    };
    if specs.is_empty() {
        return out.fail("error: at least one taint update is required");
    }
    let mut add: Vec<Taint> = Vec::new();
    let mut remove: Vec<(String, Option<String>)> = Vec::new();
    for spec in &specs {
        if let Some(s) = spec.strip_suffix('-') {
            let (key, effect) = match s.split_once(':') {
                Some((k, e)) => (k.split('=').next().unwrap_or(k).to_string(), Some(e.to_string())),
                None => (s.split('=').next().unwrap_or(s).to_string(), None),
            };
            remove.push((key, effect));
            continue;
        }
        let Some((kv, effect)) = spec.split_once(':') else {
            return out.fail(format!("error: invalid taint spec: {spec}, unknown taint effect"));
        };
        if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect) {
            return out.fail(format!("error: invalid taint effect: {effect}, unsupported taint effect"));
        }
        let (key, value) = match kv.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string()).filter(|v| !v.is_empty())),
            None => (kv.to_string(), None),
        };
        if let Some(problem) = kubesim_api::validation::label_key_error(&key) {
            return out.fail(format!("error: invalid taint spec: {spec}, {problem}"));
        }
        add.push(Taint { key, value, effect: effect.to_string(), time_added: if effect == "NoExecute" { Some(time_at(req.now)) } else { None } });
    }
    for name in node_names {
        let node = match get_node(api, &name) {
            Ok(n) => n,
            Err(e) => {
                out.fail(server_error(&e));
                continue;
            }
        };
        let Object::Node(mut n) = (*node).clone() else { continue };
        let spec = n.spec.get_or_insert_with(Default::default);
        let taints = spec.taints.get_or_insert_with(Vec::new);
        let mut changed = false;
        for (key, effect) in &remove {
            let before = taints.len();
            taints.retain(|t| !(t.key == *key && effect.as_ref().is_none_or(|e| *e == t.effect)));
            if taints.len() == before {
                out.fail(format!(
                    "error: taint {:?} not found",
                    match effect {
                        Some(e) => format!("{key}:{e}"),
                        None => key.clone(),
                    }
                ));
                return;
            }
            changed = true;
        }
        for t in &add {
            if let Some(existing) = taints.iter_mut().find(|e| e.key == t.key && e.effect == t.effect) {
                if !args.bool("overwrite") {
                    out.fail(format!("error: node {name} already has {} taint(s) with same effect(s) and --overwrite is false", t.key));
                    return;
                }
                *existing = t.clone();
            } else {
                taints.push(t.clone());
            }
            changed = true;
        }
        if taints.is_empty() {
            spec.taints = None;
        }
        let verb = if !remove.is_empty() && add.is_empty() { "untainted" } else { "tainted" };
        if !changed {
            out.outln(format!("node/{name} not {verb}"));
            continue;
        }
        n.metadata.resource_version = None;
        match util::update(api, Object::Node(n), req) {
            Ok(_) => out.outln(format!("node/{name} {verb}")),
            Err(e) => out.fail(server_error(&e)),
        }
    }
}

fn node_names(args: &Args, api: &ApiServer, out: &mut Output) -> Vec<String> {
    let mut names = Vec::new();
    for p in &args.positional {
        let name = p.strip_prefix("node/").or_else(|| p.strip_prefix("nodes/")).unwrap_or(p);
        names.push(name.to_string());
    }
    if let Some(sel) = args.get("selector") {
        match Selector::parse(sel) {
            Ok(s) => {
                for n in util::list(api, kind_info("v1", "Node").expect("nodes"), None) {
                    if s.matches(n.metadata().labels.as_ref()) {
                        names.push(n.name().to_string());
                    }
                }
            }
            Err(e) => out.fail(format!("error: {e}")),
        }
    }
    names
}

fn set_unschedulable(api: &mut ApiServer, req: &mut Request, name: &str, value: bool, dry: Option<&str>, out: &mut Output) -> bool {
    let node = match get_node(api, name) {
        Ok(n) => n,
        Err(e) => {
            out.fail(server_error(&e));
            return false;
        }
    };
    let Object::Node(mut n) = (*node).clone() else { return false };
    let current = n.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false);
    let verb = if value { "cordoned" } else { "uncordoned" };
    if current == value {
        out.outln(format!("node/{name} already {verb}"));
        return true;
    }
    if let Some(suffix) = dry {
        out.outln(format!("node/{name} {verb}{suffix}"));
        return true;
    }
    n.spec.get_or_insert_with(Default::default).unschedulable = if value { Some(true) } else { None };
    n.metadata.resource_version = None;
    match util::update(api, Object::Node(n), req) {
        Ok(_) => {
            out.outln(format!("node/{name} {verb}"));
            true
        }
        Err(e) => {
            out.fail(server_error(&e));
            false
        }
    }
}

/// `kubectl cordon` / `uncordon` (cmd/drain/drain.go).
fn cordon(args: &Args, api: &mut ApiServer, req: &mut Request, out: &mut Output, value: bool) {
    let names = node_names(args, api, out);
    if names.is_empty() && out.exit_code == 0 {
        return out.fail("error: resource(s) were provided, but no name was specified");
    }
    for name in names {
        set_unschedulable(api, req, &name, value, dry_run_suffix(args), out);
    }
}

/// POST pods/eviction through the API server's eviction subresource (PDB checks, 429).
fn evict(api: &mut ApiServer, req: &mut Request, pod: &Object, grace: Option<i64>) -> Result<(), ApiError> {
    api.evict(pod.namespace(), pod.name(), DeleteOptions { grace_period_seconds: grace, ..Default::default() }, req).map(|_| ())
}

/// `kubectl drain` (cmd/drain/drain.go, k8s.io/kubectl/pkg/drain): cordon, then evict every
/// pod on the node except mirror pods and (with --ignore-daemonsets) DaemonSet pods.
fn drain(args: &Args, api: &mut ApiServer, req: &mut Request, out: &mut Output) {
    let names = node_names(args, api, out);
    if names.is_empty() {
        return out.fail("error: USAGE: drain NODE [flags]\nSee 'kubectl drain -h' for help and examples");
    }
    let ignore_ds = args.bool("ignore-daemonsets");
    let delete_emptydir = args.bool("delete-emptydir-data") || args.bool("delete-local-data");
    let force = args.bool("force");
    let disable_eviction = args.bool("disable-eviction");
    let grace = args.get("grace-period").and_then(|g| g.parse::<i64>().ok()).filter(|g| *g >= 0);
    let pod_selector = args.get("pod-selector").and_then(|s| Selector::parse(s).ok());
    let dry = dry_run_suffix(args);
    for name in names {
        if !set_unschedulable(api, req, &name, true, dry, out) {
            continue;
        }
        let pods: Vec<Arc<Object>> = api.store().pods_on_node(&name).cloned().collect();
        let mut errors: Vec<String> = Vec::new();
        let mut warnings: Vec<(String, Vec<String>)> = Vec::new();
        let mut to_evict = Vec::new();
        let mut ds_pods = Vec::new();
        let mut unmanaged = Vec::new();
        let mut local_storage = Vec::new();
        for pod in pods {
            if pod_selector.as_ref().is_some_and(|s| !s.matches(pod.metadata().labels.as_ref())) {
                continue;
            }
            let key = format!("{}/{}", pod.namespace(), pod.name());
            let Some(p) = pod.as_pod() else { continue };
            if p.metadata.annotations.as_ref().is_some_and(|a| a.contains_key("kubernetes.io/config.mirror")) {
                continue;
            }
            let phase = p.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
            let finished = phase == "Succeeded" || phase == "Failed";
            let controller = p.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true));
            if let Some(c) = controller {
                if c.kind == "DaemonSet" && !finished {
                    if ignore_ds {
                        ds_pods.push(key);
                        continue;
                    }
                    errors.push(format!("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): {key}"));
                    continue;
                }
            } else if !finished {
                if !force {
                    errors.push(format!("cannot delete Pods that declare no controller (use --force to override): {key}"));
                    continue;
                }
                unmanaged.push(key.clone());
            }
            let has_emptydir = p.spec.as_ref().and_then(|s| s.volumes.as_ref()).is_some_and(|v| v.iter().any(|v| v.empty_dir.is_some()));
            if has_emptydir && !finished {
                if !delete_emptydir {
                    errors.push(format!("cannot delete Pods with local storage (use --delete-emptydir-data to override): {key}"));
                    continue;
                }
                local_storage.push(key.clone());
            }
            to_evict.push(pod);
        }
        if !errors.is_empty() {
            out.fail(format!(
                "error: unable to drain node {name:?} due to error: [{}], continuing command...\nThere are pending nodes to be drained:\n {name}",
                errors.join(", ")
            ));
            for e in &errors {
                out.errln(e);
            }
            continue;
        }
        if !ds_pods.is_empty() {
            warnings.push(("ignoring DaemonSet-managed Pods".into(), ds_pods));
        }
        if !unmanaged.is_empty() {
            warnings.push(("deleting Pods that declare no controller".into(), unmanaged));
        }
        if !local_storage.is_empty() {
            warnings.push(("deleting Pods with local storage".into(), local_storage));
        }
        if !warnings.is_empty() {
            let text: Vec<String> = warnings.iter().map(|(w, pods)| format!("{w}: {}", pods.join(", "))).collect();
            out.errln(format!("Warning: {}", text.join("; ")));
        }
        if let Some(suffix) = dry {
            // drain.go deleteOrEvictPods with a dry run: each pod printed, nothing sent.
            let verb = if disable_eviction { "deleted" } else { "evicted" };
            for pod in &to_evict {
                out.outln(format!("pod/{} {verb}{suffix}", pod.name()));
            }
            out.outln(format!("node/{name} drained{suffix}"));
            continue;
        }
        let mut failed = false;
        for pod in &to_evict {
            let verb = if disable_eviction { "deleting" } else { "evicting" };
            out.outln(format!("{verb} pod {}/{}", pod.namespace(), pod.name()));
            let result = if disable_eviction {
                api.delete(
                    kind_info("v1", "Pod").expect("pods"),
                    pod.namespace(),
                    pod.name(),
                    DeleteOptions { grace_period_seconds: grace, ..Default::default() },
                    req,
                )
                .map(|_| ())
            } else {
                evict(api, req, pod, grace)
            };
            match result {
                Ok(()) => {}
                Err(e) if e.code == 429 => {
                    // kubectl retries every 5 s until --timeout; in one virtual instant it cannot succeed.
                    out.errln(format!("error when evicting pods/{:?} -n {:?} (will retry after 5s): {}", pod.name(), pod.namespace(), e.message));
                    failed = true;
                }
                Err(e) if e.code == 404 => {}
                Err(e) => {
                    out.errln(format!("error when evicting pods/{:?} -n {:?}: {}", pod.name(), pod.namespace(), e.message));
                    failed = true;
                }
            }
        }
        if failed {
            out.fail(format!("error: unable to drain node {name:?} due to error: cannot evict pods blocked by a PodDisruptionBudget, continuing command...\nThere are pending nodes to be drained:\n {name}"));
            continue;
        }
        for pod in &to_evict {
            out.outln(format!("pod/{} evicted", pod.name()));
        }
        out.outln(format!("node/{name} drained"));
    }
}

/// The ReplicaSets a Deployment owns, by revision.
fn owned_replica_sets(api: &ApiServer, deployment: &Object) -> Vec<(i64, Arc<Object>)> {
    let uid = deployment.metadata().uid.clone().unwrap_or_default();
    let info = kind_info("apps/v1", "ReplicaSet").expect("replicasets");
    let mut sets: Vec<(i64, Arc<Object>)> = util::list(api, info, Some(deployment.namespace()))
        .into_iter()
        .filter(|rs| rs.metadata().owner_references.iter().flatten().any(|r| r.uid == uid && r.controller == Some(true)))
        .map(|rs| {
            let revision =
                rs.metadata().annotations.as_ref().and_then(|a| a.get("deployment.kubernetes.io/revision")).and_then(|r| r.parse().ok()).unwrap_or(0);
            (revision, rs)
        })
        .collect();
    kubesim_api::sort::sort_by_key(&mut sets, |(r, _)| *r);
    sets
}

/// `kubectl rollout status|history|undo|restart|pause|resume` (cmd/rollout/).
fn rollout(args: &Args, api: &mut ApiServer, req: &mut Request, namespace: &str, out: &mut Output) {
    let Some(sub) = args.positional.first().cloned() else {
        return out.fail("error: you must specify a subcommand: history, pause, restart, resume, status, undo");
    };
    let rest: Vec<String> = args.positional[1..].to_vec();
    let targets = many_targets(args, &rest, api, namespace, out);
    for (info, object) in targets {
        let tn = type_name(info, object.name());
        if !matches!(info.kind, "Deployment" | "DaemonSet" | "StatefulSet") {
            out.fail(format!("error: no {sub} for {tn}: not a Deployment, DaemonSet or StatefulSet"));
            continue;
        }
        match sub.as_str() {
            "status" => {
                let done = rollout_status(info, &object, out);
                // `--watch` (default true): the command goes on until the rollout is done.
                let watch = args.get("watch") != Some("false");
                if !done && watch {
                    let timeout = args.get("timeout").and_then(kubesim_api::time::parse_duration).filter(|t| *t > 0);
                    out.follow =
                        Some(crate::follow::Follow::rollout(info, object.namespace(), object.name(), api.store().revision(), timeout.map(|t| req.now + t)));
                }
            }
            "history" => rollout_history(args, api, info, &object, out),
            "undo" => rollout_undo(args, api, req, info, &object, out),
            "restart" => {
                if object.to_json().pointer("/spec/paused").and_then(|p| p.as_bool()) == Some(true) {
                    out.fail(format!("error: deployments.apps {:?} can't restart paused deployment (run rollout resume first)", object.name()));
                    continue;
                }
                let stamp = time_at(req.now).0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
                let updated = with_json(&object, info, |j| {
                    let template = j.pointer_mut("/spec/template").ok_or("no pod template")?;
                    let meta = template.as_object_mut().ok_or("bad template")?.entry("metadata").or_insert_with(|| Value::Object(Default::default()));
                    let annotations = meta.as_object_mut().ok_or("bad metadata")?.entry("annotations").or_insert_with(|| Value::Object(Default::default()));
                    annotations["kubectl.kubernetes.io/restartedAt"] = Value::String(stamp.clone());
                    Ok(())
                });
                match updated.map_err(|e| format!("error: {e}")).and_then(|o| util::update(api, o, req).map_err(|e| server_error(&e))) {
                    Ok(_) => out.outln(format!("{tn} restarted")),
                    Err(e) => out.fail(e),
                }
            }
            "pause" | "resume" => {
                let pause = sub == "pause";
                if info.kind != "Deployment" {
                    out.fail(format!("error: {tn} is not a Deployment: pausing is supported for Deployments only"));
                    continue;
                }
                let paused = object.to_json().pointer("/spec/paused").and_then(|p| p.as_bool()).unwrap_or(false);
                if paused == pause {
                    out.fail(format!("error: {tn} is already {}", if pause { "paused" } else { "resumed" }));
                    continue;
                }
                let updated = with_json(&object, info, |j| {
                    if pause {
                        j["spec"]["paused"] = Value::Bool(true)
                    } else if let Some(s) = j["spec"].as_object_mut() {
                        s.remove("paused");
                    }
                    Ok(())
                });
                match updated.map_err(|e| format!("error: {e}")).and_then(|o| util::update(api, o, req).map_err(|e| server_error(&e))) {
                    Ok(_) => out.outln(format!("{tn} {}", if pause { "paused" } else { "resumed" })),
                    Err(e) => out.fail(e),
                }
            }
            other => out.fail(format!("error: unknown command \"{other}\" for \"kubectl rollout\"")),
        }
    }
}

/// The status viewers of kubectl/pkg/polymorphichelpers/rollout_status.go: prints the object's
/// status line; true when the rollout is done (or failed), so `rollout status` returns.
pub(crate) fn rollout_status(info: &KindInfo, object: &Object, out: &mut Output) -> bool {
    let json = object.to_json();
    let name = object.name();
    let generation = util::jint(&json, "metadata.generation");
    let observed = util::jint(&json, "status.observedGeneration");
    match info.kind {
        "Deployment" => {
            if generation > observed {
                out.outln("Waiting for deployment spec update to be observed...");
                return false;
            }
            let progressing =
                json.pointer("/status/conditions").and_then(|c| c.as_array()).and_then(|c| c.iter().find(|c| c["type"] == "Progressing")).cloned();
            if progressing.as_ref().and_then(|c| c.get("reason")).and_then(|r| r.as_str()) == Some("ProgressDeadlineExceeded") {
                out.fail(format!("error: deployment {name:?} exceeded its progress deadline"));
                return true;
            }
            let replicas = json.pointer("/spec/replicas").and_then(|v| v.as_i64()).unwrap_or(1);
            let updated = util::jint(&json, "status.updatedReplicas");
            let total = util::jint(&json, "status.replicas");
            let available = util::jint(&json, "status.availableReplicas");
            if updated < replicas {
                out.outln(format!("Waiting for deployment {name:?} rollout to finish: {updated} out of {replicas} new replicas have been updated..."));
            } else if total > updated {
                out.outln(format!("Waiting for deployment {name:?} rollout to finish: {} old replicas are pending termination...", total - updated));
            } else if available < updated {
                out.outln(format!("Waiting for deployment {name:?} rollout to finish: {available} of {updated} updated replicas are available..."));
            } else {
                out.outln(format!("deployment {name:?} successfully rolled out"));
                return true;
            }
            false
        }
        "DaemonSet" => {
            // DaemonSetStatusViewer.
            if jstr_or(&json, "spec.updateStrategy.type") != "RollingUpdate" {
                out.fail("error: rollout status is only available for RollingUpdate strategy type");
                return true;
            }
            let desired = util::jint(&json, "status.desiredNumberScheduled");
            let updated = util::jint(&json, "status.updatedNumberScheduled");
            let available = util::jint(&json, "status.numberAvailable");
            if generation > observed {
                out.outln("Waiting for daemon set spec update to be observed...");
            } else if updated < desired {
                out.outln(format!("Waiting for daemon set {name:?} rollout to finish: {updated} out of {desired} new pods have been updated..."));
            } else if available < desired {
                out.outln(format!("Waiting for daemon set {name:?} rollout to finish: {available} of {desired} updated pods are available..."));
            } else {
                out.outln(format!("daemon set {name:?} successfully rolled out"));
                return true;
            }
            false
        }
        _ => {
            // StatefulSetStatusViewer.
            if jstr_or(&json, "spec.updateStrategy.type") != "RollingUpdate" {
                out.fail("error: rollout status is only available for RollingUpdate strategy type");
                return true;
            }
            let replicas = json.pointer("/spec/replicas").and_then(|v| v.as_i64());
            let ready = util::jint(&json, "status.readyReplicas");
            let updated = util::jint(&json, "status.updatedReplicas");
            let partition = json.pointer("/spec/updateStrategy/rollingUpdate/partition").and_then(|v| v.as_i64());
            let rolling = json.pointer("/spec/updateStrategy/rollingUpdate").is_some_and(|r| !r.is_null());
            if observed == 0 || generation > observed {
                out.outln("Waiting for statefulset spec update to be observed...");
            } else if let Some(r) = replicas.filter(|r| ready < *r) {
                out.outln(format!("Waiting for {} pods to be ready...", r - ready));
            } else if rolling {
                match (replicas, partition) {
                    (Some(r), Some(p)) if updated < r - p => {
                        out.outln(format!("Waiting for partitioned roll out to finish: {updated} out of {} new pods have been updated...", r - p))
                    }
                    _ => {
                        out.outln(format!("partitioned roll out complete: {updated} new pods have been updated..."));
                        return true;
                    }
                }
            } else {
                let update_revision = jstr_or(&json, "status.updateRevision");
                let current_revision = jstr_or(&json, "status.currentRevision");
                if update_revision != current_revision {
                    out.outln(format!("waiting for statefulset rolling update to complete {updated} pods at revision {update_revision}..."));
                } else {
                    out.outln(format!(
                        "statefulset rolling update complete {} pods at revision {current_revision}...",
                        util::jint(&json, "status.currentReplicas")
                    ));
                    return true;
                }
            }
            false
        }
    }
}

fn jstr_or<'a>(json: &'a Value, path: &str) -> &'a str {
    util::jstr(json, path).unwrap_or("")
}

/// The ControllerRevisions a DaemonSet or StatefulSet controls, by revision
/// (polymorphichelpers history.go controlledHistories).
fn owned_revisions(api: &ApiServer, owner: &Object) -> Vec<(i64, Value)> {
    let uid = owner.metadata().uid.clone().unwrap_or_default();
    let Some(info) = kind_info("apps/v1", "ControllerRevision") else { return Vec::new() };
    let mut revisions: Vec<(i64, Value)> = util::list(api, info, Some(owner.namespace()))
        .into_iter()
        .filter(|r| r.metadata().owner_references.iter().flatten().any(|o| o.uid == uid && o.controller == Some(true)))
        .map(|r| {
            let json = r.to_json();
            (json.get("revision").and_then(|v| v.as_i64()).unwrap_or(0), json)
        })
        .collect();
    kubesim_api::sort::sort_by_key(&mut revisions, |(r, _)| *r);
    revisions
}

/// applyDaemonSetHistory / applyStatefulSetHistory: the owner with the revision's data patched in.
fn apply_history(owner: &Object, revision: &Value) -> Value {
    let data = revision.get("data").cloned().unwrap_or_default();
    merge::strategic_patch(&owner.to_json(), &data)
}

/// DescribePodTemplate through printTemplate.
fn template_text(json: &Value) -> String {
    let template: PodTemplateSpec = json.pointer("/spec/template").and_then(|t| serde_json::from_value(t.clone()).ok()).unwrap_or_default();
    describe::pod_template(&template)
}

/// (revision, change-cause, the revision's pod template as describe prints it).
type HistoryEntry<'a> = (i64, String, Box<dyn Fn() -> String + 'a>);

fn rollout_history(args: &Args, api: &ApiServer, info: &KindInfo, object: &Object, out: &mut Output) {
    let tn = type_name(info, object.name());
    let revision = args.get("revision").and_then(|r| r.parse::<i64>().ok()).filter(|r| *r > 0);
    // (revision, change-cause, template text) per revision, oldest first.
    let history: Vec<HistoryEntry<'_>> = if info.kind == "Deployment" {
        owned_replica_sets(api, object)
            .into_iter()
            .map(|(rev, rs)| {
                let cause = rs.metadata().annotations.as_ref().and_then(|a| a.get("kubernetes.io/change-cause")).cloned().unwrap_or_default();
                // DeploymentHistoryViewer prints the ReplicaSet's template as it is, with its
                // pod-template-hash label.
                let f: Box<dyn Fn() -> String> = Box::new(move || match rs.as_ref() {
                    Object::ReplicaSet(r) => describe::pod_template(&r.spec.as_ref().and_then(|s| s.template.clone()).unwrap_or_default()),
                    _ => String::new(),
                });
                (rev, cause, f)
            })
            .collect()
    } else {
        owned_revisions(api, object)
            .into_iter()
            .map(|(rev, json)| {
                let cause = json.pointer("/metadata/annotations/kubernetes.io~1change-cause").and_then(|c| c.as_str()).unwrap_or("").to_string();
                let f: Box<dyn Fn() -> String> = Box::new(move || template_text(&apply_history(object, &json)));
                (rev, cause, f)
            })
            .collect()
    };
    if history.is_empty() && info.kind != "Deployment" {
        // printHistory: "No rollout history found." (the name printer adds the newline).
        return out.outln(format!("{tn} No rollout history found."));
    }
    if let Some(rev) = revision {
        let Some((_, _, template)) = history.iter().find(|(r, _, _)| *r == rev) else {
            return out.fail("error: unable to find the specified revision");
        };
        // rollout_history.go prints through the name printer: "<kind/name> <operation>\n" where
        // the operation is "with revision #N\n<history>".
        out.out(format!("{tn} with revision #{rev}\n{}\n", template()));
        return;
    }
    let mut table = String::from("REVISION\tCHANGE-CAUSE\n");
    for (rev, cause, _) in &history {
        table.push_str(&format!("{rev}\t{}\n", if cause.is_empty() { "<none>" } else { cause }));
    }
    out.out(format!("{tn} \n{}\n", crate::printers::tabwriter(&table, 0, 2)));
}

/// DaemonSetRollbacker / StatefulSetRollbacker (polymorphichelpers rollback.go): patch the
/// chosen ControllerRevision's data onto the object.
fn rollout_undo_history(args: &Args, api: &mut ApiServer, req: &mut Request, info: &KindInfo, object: &Object, out: &mut Output) {
    let tn = type_name(info, object.name());
    let to = match args.get("to-revision").map(|r| r.parse::<i64>()) {
        None => 0,
        Some(Ok(r)) if r >= 0 => r,
        Some(Ok(r)) => return out.fail(format!("error: unable to find specified revision {r} in history")),
        Some(Err(_)) => {
            return out.fail(format!(
                "error: invalid argument {:?} for \"--to-revision\" flag: strconv.ParseInt: parsing {:?}: invalid syntax",
                args.get("to-revision").unwrap_or(""),
                args.get("to-revision").unwrap_or("")
            ))
        }
    };
    let history = owned_revisions(api, object);
    if to == 0 && history.len() <= 1 {
        return out.fail("error: no last revision to roll back to");
    }
    let target = if to == 0 { history.get(history.len() - 2).cloned() } else { history.iter().find(|(r, _)| *r == to).cloned() };
    let Some((rev, revision)) = target else {
        return out.fail(format!("error: unable to find specified revision {to} in history"));
    };
    let patched = apply_history(object, &revision);
    if dry_run(args) && args.get("dry-run") != Some("server") {
        return out.out(format!("{tn} {}\n", template_text(&patched)));
    }
    // daemonSetMatch / statefulSetMatch: the revision is the live template (compared as
    // stored, i.e. defaulted).
    let mut defaulted = util::from_json(info, patched.clone()).unwrap_or_else(|_| object.clone());
    kubesim_api::defaults::apply_defaults(&mut defaulted);
    if defaulted.to_json().pointer("/spec/template") == object.to_json().pointer("/spec/template") {
        return out.outln(format!("{tn} skipped rollback (current template already matches revision {rev})"));
    }
    let result = util::from_json(info, patched).map_err(|e| format!("error: {e}")).and_then(|mut o| {
        o.metadata_mut().resource_version = None;
        if dry_run(args) {
            return util::dry_run_update(api, &o).map_err(|e| server_error(&e));
        }
        util::update(api, o, req).map(|_| ()).map_err(|e| format!("error: failed restoring revision {rev}: {}", e.message))
    });
    match result {
        Ok(()) => out.outln(format!("{tn} rolled back{}", if dry_run(args) { " (server dry run)" } else { "" })),
        Err(e) => out.fail(e),
    }
}

fn rollout_undo(args: &Args, api: &mut ApiServer, req: &mut Request, info: &KindInfo, object: &Object, out: &mut Output) {
    if info.kind != "Deployment" {
        return rollout_undo_history(args, api, req, info, object, out);
    }
    if object.to_json().pointer("/spec/paused").and_then(|p| p.as_bool()) == Some(true) {
        return out.fail("error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again");
    }
    let sets = owned_replica_sets(api, object);
    let current_rev =
        object.metadata().annotations.as_ref().and_then(|a| a.get("deployment.kubernetes.io/revision")).and_then(|r| r.parse::<i64>().ok()).unwrap_or(0);
    let to = args.get("to-revision").and_then(|r| r.parse::<i64>().ok()).unwrap_or(0);
    let target = if to == 0 {
        sets.iter().rev().find(|(r, _)| *r != current_rev).filter(|_| sets.len() > 1).map(|(r, rs)| (*r, rs.clone()))
    } else {
        sets.iter().find(|(r, _)| *r == to).map(|(r, rs)| (*r, rs.clone()))
    };
    let Some((rev, rs)) = target else {
        return out.fail(if to == 0 {
            format!("error: no rollout history found for deployment {:?}", object.name())
        } else {
            format!("error: unable to find specified revision {to} in history")
        });
    };
    let Object::ReplicaSet(rs) = rs.as_ref() else { return };
    let Object::Deployment(d) = object else { return };
    let mut template = rs.spec.as_ref().and_then(|s| s.template.clone()).unwrap_or_default();
    if let Some(labels) = template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        labels.remove("pod-template-hash");
    }
    let current_template = d.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default();
    if template == current_template {
        return out.outln(format!("{} skipped rollback (current template already matches revision {rev})", type_name(info, object.name())));
    }
    let mut new = (**d).clone();
    new.spec.get_or_insert_with(Default::default).template = template;
    // Copy the revision's annotations (change-cause) as the deployment controller's rollback does.
    if let Some(cause) = rs.metadata.annotations.as_ref().and_then(|a| a.get("kubernetes.io/change-cause")) {
        new.metadata.annotations.get_or_insert_with(Default::default).insert("kubernetes.io/change-cause".into(), cause.clone());
    }
    new.metadata.resource_version = None;
    match util::update(api, Object::Deployment(Box::new(new)), req) {
        Ok(_) => out.outln(format!("{} rolled back", type_name(info, object.name()))),
        Err(e) => out.fail(server_error(&e)),
    }
}

/// `kubectl run NAME --image=I` (cmd/run/run.go with the run-pod/v1 generator).
fn run_pod(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output) {
    let Some(name) = args.positional.first().cloned() else {
        return out.fail("error: NAME is required for run\nSee 'kubectl run -h' for help and examples");
    };
    let Some(image) = args.get("image") else { return out.fail("error: required flag(s) \"image\" not set") };
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    match args.get("labels") {
        Some(l) => {
            for pair in l.split(',') {
                let Some((k, v)) = pair.split_once('=') else { return out.fail(format!("error: invalid label spec: {pair}")) };
                labels.insert(k.to_string(), v.to_string());
            }
        }
        None => {
            labels.insert("run".into(), name.clone());
        }
    }
    let mut container = Container { name: name.clone(), image: Some(image.to_string()), ..Default::default() };
    // generateversioned BasicPod: Stdin, StdinOnce (unless --leave-stdin-open) and TTY.
    if args.bool("stdin") {
        container.stdin = Some(true);
        container.stdin_once = Some(!args.bool("leave-stdin-open"));
    }
    if args.bool("tty") {
        container.tty = Some(true);
    }
    let mut command: Vec<String> = args.positional[1..].to_vec();
    command.extend(args.after_dash.iter().cloned());
    if !command.is_empty() {
        if args.bool("command") {
            container.command = Some(command);
        } else {
            container.args = Some(command);
        }
    }
    if let Some(port) = args.get("port").and_then(|p| p.parse::<i32>().ok()) {
        container.ports = Some(vec![kubesim_api::k8s_openapi::api::core::v1::ContainerPort { container_port: port, ..Default::default() }]);
    }
    if let Some(policy) = args.get("image-pull-policy") {
        container.image_pull_policy = Some(policy.to_string());
    }
    for env in args.all("env") {
        if let Some((k, v)) = env.split_once('=') {
            container.env.get_or_insert_with(Vec::new).push(kubesim_api::k8s_openapi::api::core::v1::EnvVar {
                name: k.into(),
                value: Some(v.into()),
                ..Default::default()
            });
        }
    }
    let restart = args.get("restart").unwrap_or("Always").to_string();
    if !["Always", "OnFailure", "Never"].contains(&restart.as_str()) {
        return out.fail(format!("error: invalid restart policy: {restart}"));
    }
    let pod = Pod {
        metadata: ObjectMeta { name: Some(name.clone()), namespace: Some(namespace.to_string()), labels: Some(labels), ..Default::default() },
        spec: Some(PodSpec { containers: vec![container], dns_policy: Some("ClusterFirst".into()), restart_policy: Some(restart), ..Default::default() }),
        ..Default::default()
    };
    if dry_run(args) {
        if print_generated(args, cluster, &Object::Pod(Box::new(pod.clone())), out) {
            return;
        }
        return out.outln(format!("pod/{name} created (dry run)"));
    }
    let attach = args.bool("stdin") || args.bool("attach");
    match api.create(Object::Pod(Box::new(pod)), req) {
        Ok(_) if attach => {
            // attach.go: a terminal attached to the container's stdin.
            if args.bool("stdin") && args.bool("tty") && !args.bool("quiet") {
                out.stderr.push_str(crate::follow::ATTACH_BANNER);
            }
            out.follow = Some(crate::follow::Follow::attach(namespace, &name, args.bool("rm")))
        }
        Ok(o) => {
            if !print_written(args, cluster, kind_info("v1", "Pod").expect("pods"), o.to_json(), out) {
                out.outln(format!("pod/{name} created"))
            }
        }
        Err(e) => out.fail(server_error(&e)),
    }
}

/// `kubectl debug POD --image=IMAGE [-it] [--target=C] [-c NAME] [-- COMMAND...]` adds an
/// ephemeral container through the pods/ephemeralcontainers subresource (with `-i` attached
/// to it once it runs); `kubectl debug node/NODE --image=IMAGE [-it]` creates a pod on the
/// node in its host namespaces with the node's root filesystem at /host (debug.go, profile
/// legacy, kubectl's default).
fn debug(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output) {
    let Some(target) = args.positional.first().cloned() else {
        return out.fail("error: NAME or TYPE/NAME is required for debug\nSee 'kubectl debug -h' for help and examples");
    };
    if let Some(copy_to) = args.get("copy-to") {
        return debug_copy(args, api, req, cluster, namespace, &target, copy_to, out);
    }
    if args.has("set-image") {
        return out.fail("error: --set-image can only be used with --copy-to");
    }
    let Some(image) = args.get("image").map(str::to_string) else {
        return out.fail("error: --image is required when --copy-to is not specified");
    };
    let stdin = args.bool("stdin");
    let tty = args.bool("tty");
    let quiet = args.bool("quiet");
    let profile = args.get("profile").unwrap_or("legacy");
    if !["legacy", "general", "baseline", "restricted", "netadmin", "sysadmin"].contains(&profile) {
        return out.fail(format!("error: unknown profile: {profile}"));
    }
    let mut command: Vec<String> = args.after_dash.clone();
    if command.is_empty() {
        command = args.positional[1..].to_vec();
    }
    if let Some(node) = target.strip_prefix("node/").or_else(|| target.strip_prefix("nodes/")) {
        if api.lookup(("", "nodes"), "", node).is_none() {
            return out.fail(format!("Error from server (NotFound): nodes {node:?} not found"));
        }
        if args.get("profile").is_none() {
            out.stderr.push_str(LEGACY_PROFILE_WARNING);
        }
        let name = format!("node-debugger-{node}-{}", kubesim_apiserver::server::random_suffix(req.rng));
        let container_name = args.get("container").unwrap_or("debugger").to_string();
        let pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "nodeName": node, "hostIPC": true, "hostNetwork": true, "hostPID": true, "restartPolicy": "Never",
                "containers": [{
                    "name": container_name, "image": image, "stdin": stdin, "tty": tty, "terminationMessagePolicy": "File",
                    "command": if command.is_empty() { Value::Null } else { serde_json::json!(command) },
                    "volumeMounts": [{"name": "host-root", "mountPath": "/host"}],
                }],
                "volumes": [{"name": "host-root", "hostPath": {"path": "/"}}],
                "tolerations": [{"operator": "Exists"}],
            },
        });
        let mut pod = pod;
        {
            let mut container = pod["spec"]["containers"][0].take();
            if let Err(e) = debug_profile(args, DebugStyle::Node, &mut pod["spec"], &mut container, cluster) {
                return out.fail(e);
            }
            pod["spec"]["containers"][0] = container;
        }
        let object = match Object::from_json(kind_info("v1", "Pod").expect("pods"), pod) {
            Ok(o) => o,
            Err(e) => return out.fail(format!("error: {e}")),
        };
        if !quiet {
            out.stderr.push_str(&format!("Creating debugging pod {name} with container {container_name} on node {node}.\n"));
        }
        match api.create(object, req) {
            Ok(_) if stdin => {
                if tty {
                    out.stderr.push_str(crate::follow::ATTACH_BANNER);
                }
                out.follow = Some(crate::follow::Follow::attach(namespace, &name, false));
            }
            Ok(_) => {}
            Err(e) => out.fail(server_error(&e)),
        }
        return;
    }
    let pod_name = target.strip_prefix("pod/").or_else(|| target.strip_prefix("pods/")).unwrap_or(&target).to_string();
    let info = kind_info("v1", "Pod").expect("pods");
    let pod = match api.get(info, namespace, &pod_name) {
        Ok(p) => p,
        Err(e) => return out.fail(server_error(&e)),
    };
    let Some(pod) = pod.as_pod().cloned() else { return out.fail("error: not a pod") };
    let target_container = args.get("target").map(str::to_string);
    if let Some(t) = &target_container {
        if !quiet {
            out.stderr.push_str(&format!("Targeting container {t:?}. If you don't see processes from this container it may be because the container runtime doesn't support this feature.\n"));
        }
    }
    if args.get("profile").is_none() {
        out.stderr.push_str(LEGACY_PROFILE_WARNING);
    }
    let existing: Vec<String> = pod
        .spec
        .iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .map(|c| c.name.clone())
                .chain(s.init_containers.iter().flatten().map(|c| c.name.clone()))
                .chain(s.ephemeral_containers.iter().flatten().map(|c| c.name.clone()))
        })
        .collect();
    let name = match args.get("container") {
        Some(n) => n.to_string(),
        None => {
            let n = debug_container_name(&existing, req.rng);
            if !quiet {
                out.stderr.push_str(&format!("Defaulting debug container name to {n}.\n"));
            }
            n
        }
    };
    let ephemeral = kubesim_api::k8s_openapi::api::core::v1::EphemeralContainer {
        name: name.clone(),
        image: Some(image),
        command: if command.is_empty() { None } else { Some(command) },
        stdin: stdin.then_some(true),
        tty: tty.then_some(true),
        target_container_name: target_container,
        termination_message_policy: Some("File".into()),
        ..Default::default()
    };
    let mut container = serde_json::to_value(&ephemeral).unwrap_or_default();
    let mut no_spec = Value::Null;
    if let Err(e) = debug_profile(args, DebugStyle::Ephemeral, &mut no_spec, &mut container, cluster) {
        return out.fail(e);
    }
    let ephemeral = match serde_json::from_value(container) {
        Ok(c) => c,
        Err(e) => return out.fail(format!("error: {e}")),
    };
    let mut list = pod.spec.as_ref().and_then(|s| s.ephemeral_containers.clone()).unwrap_or_default();
    list.push(ephemeral);
    match api.update_ephemeral_containers(namespace, &pod_name, list, req) {
        Ok(_) if stdin => out.follow = Some(crate::follow::Follow::attach_ephemeral(namespace, &pod_name, &name, tty)),
        Ok(_) => {}
        Err(e) => out.fail(server_error(&e)),
    }
}

/// debug.go's warning when no `--profile` is given (the legacy profile is the default).
const LEGACY_PROFILE_WARNING: &str =
    "--profile=legacy is deprecated and will be removed in the future. It is recommended to explicitly specify a profile, for example \"--profile=general\".\n";

/// debug.go computeDebugContainerName: `debugger-` and a random suffix no container of the pod
/// already uses.
fn debug_container_name(existing: &[String], rng: &mut kubesim_apiserver::SimRng) -> String {
    loop {
        let name = format!("debugger-{}", kubesim_apiserver::server::random_suffix(rng));
        if !existing.contains(&name) {
            return name;
        }
    }
}

/// The three ways `kubectl debug` runs its container (profiles.go debugStyle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DebugStyle {
    /// An ephemeral container in the pod.
    Ephemeral,
    /// A container of a copy of the pod.
    PodCopy,
    /// A pod on the node in its host namespaces.
    Node,
}

/// `--profile` (profiles.go: legacy, general, baseline, restricted, netadmin, sysadmin) on the
/// debug container and, for a copy or a node pod, the pod; then `--custom` (debug.go
/// applyCustomProfile): a partial container spec from a YAML or JSON file merged into the
/// container (strategic merge), which may not set name, image, command, lifecycle or
/// volumeDevices.
fn debug_profile(args: &Args, style: DebugStyle, spec: &mut Value, container: &mut Value, cluster: &dyn ClusterView) -> Result<(), String> {
    fn security(container: &mut Value) -> &mut serde_json::Map<String, Value> {
        if !container["securityContext"].is_object() {
            container["securityContext"] = Value::Object(Default::default());
        }
        container["securityContext"].as_object_mut().expect("an object")
    }
    fn add_capabilities(container: &mut Value, caps: &[&str]) {
        let sc = security(container);
        let capabilities = sc.entry("capabilities").or_insert_with(|| serde_json::json!({}));
        let add = capabilities.as_object_mut().map(|c| c.entry("add").or_insert_with(|| serde_json::json!([])));
        if let Some(Value::Array(list)) = add {
            for cap in caps {
                if !list.iter().any(|c| c == cap) {
                    list.push(Value::from(*cap));
                }
            }
        }
    }
    fn host_namespaces(spec: &mut Value, on: bool) {
        for key in ["hostNetwork", "hostPID", "hostIPC"] {
            spec[key] = Value::Bool(on);
        }
    }
    let profile = args.get("profile").unwrap_or("legacy");
    let copy = style == DebugStyle::PodCopy;
    let node = style == DebugStyle::Node;
    match profile {
        "general" => {
            if node {
                container["securityContext"] = Value::Null;
            } else {
                add_capabilities(container, &["SYS_PTRACE"]);
            }
        }
        "baseline" => container["securityContext"] = Value::Null,
        "restricted" => {
            container["securityContext"] = serde_json::json!({
                "runAsNonRoot": true, "allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"},
            });
            if node {
                host_namespaces(spec, false);
            }
        }
        "netadmin" => add_capabilities(container, &["NET_ADMIN", "NET_RAW"]),
        "sysadmin" => {
            security(container).insert("privileged".into(), Value::Bool(true));
        }
        _ => {}
    }
    if copy && profile != "legacy" {
        spec["shareProcessNamespace"] = Value::Bool(true);
    }
    if let Some(path) = args.get("custom") {
        let text = cluster.read_file(path).map_err(|_| format!("error: open {path}: no such file or directory"))?;
        let custom: Value = serde_json::from_str(&text)
            .or_else(|_| kubesim_api::decode::parse_documents(path, &text).0.first().map(|d| d.value.clone()).ok_or(()))
            .map_err(|_| format!("error: {path}: the custom profile must be a container spec in YAML or JSON"))?;
        for field in ["name", "image", "command", "lifecycle", "volumeDevices"] {
            if custom.get(field).is_some() {
                return Err(format!("error: {field} modification is not allowed in the custom profile"));
            }
        }
        *container = merge::strategic_patch(container, &custom);
    }
    if let Some(c) = container.as_object_mut() {
        c.retain(|_, v| !v.is_null());
    }
    Ok(())
}

/// `kubectl debug POD --copy-to=NAME` (debug.go generatePodCopyWithDebugContainer): a copy of
/// the pod named NAME, without its labels, annotations, ephemeral containers, node and probes
/// (the `--keep-*` flags keep them; `--same-node` the node), `--share-processes` setting
/// shareProcessNamespace, `--set-image=NAME=IMAGE,*=IMAGE` replacing images, and with
/// `--container` naming an existing container (its command replaced by the arguments after
/// `--`) or a new debug container (`--image`; `debugger-xxxxx` by default). `--replace`
/// deletes the original; `-i` attaches to the container.
#[allow(clippy::too_many_arguments)]
fn debug_copy(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, target: &str, copy_to: &str, out: &mut Output) {
    let image = args.get("image").map(str::to_string);
    let mut set_images: BTreeMap<String, String> = BTreeMap::new();
    for pair in args.all("set-image").iter().flat_map(|v| v.split(',')) {
        match pair.split_once('=') {
            Some((name, image)) if !name.is_empty() && !image.is_empty() => {
                set_images.insert(name.to_string(), image.to_string());
            }
            _ => return out.fail(format!("error: --set-image: invalid format {pair:?}: expected NAME=IMAGE")),
        }
    }
    let command: Vec<String> = args.after_dash.clone();
    let container_flag = args.get("container").map(str::to_string);
    if image.is_none() && set_images.is_empty() && command.is_empty() {
        return out.fail("error: you must specify --image, --set-image or command arguments.");
    }
    if !command.is_empty() && container_flag.is_none() && image.is_none() {
        return out.fail("error: you must specify an existing container or a new image when specifying args.");
    }
    let pod_name = target.strip_prefix("pod/").or_else(|| target.strip_prefix("pods/")).unwrap_or(target).to_string();
    let info = kind_info("v1", "Pod").expect("pods");
    let original = match api.get(info, namespace, &pod_name) {
        Ok(p) => p,
        Err(e) => return out.fail(server_error(&e)),
    };
    let Some(pod) = original.as_pod().cloned() else { return out.fail("error: not a pod") };
    if args.get("profile").is_none() {
        out.stderr.push_str(LEGACY_PROFILE_WARNING);
    }
    let mut spec = pod.spec.clone().unwrap_or_default();
    spec.ephemeral_containers = None;
    if args.has("share-processes") {
        spec.share_process_namespace = Some(args.bool("share-processes"));
    }
    if !args.bool("same-node") {
        spec.node_name = None;
    }
    let (keep_liveness, keep_readiness, keep_startup) = (args.bool("keep-liveness"), args.bool("keep-readiness"), args.bool("keep-startup"));
    if args.get("keep-init-containers").is_some_and(|v| v == "false") {
        spec.init_containers = None;
    }
    for c in spec.containers.iter_mut() {
        if !keep_liveness {
            c.liveness_probe = None;
        }
        if !keep_readiness {
            c.readiness_probe = None;
        }
        if !keep_startup {
            c.startup_probe = None;
        }
        if let Some(image) = set_images.get(&c.name).or_else(|| set_images.get("*")) {
            c.image = Some(image.clone());
        }
    }
    let existing = container_flag.as_ref().and_then(|n| spec.containers.iter().position(|c| &c.name == n));
    let index = match existing {
        Some(i) => Some(i),
        None if image.is_none() => None,
        None => {
            let name = container_flag.clone().unwrap_or_else(|| {
                let names: Vec<String> = spec.containers.iter().map(|c| c.name.clone()).collect();
                let n = debug_container_name(&names, req.rng);
                if !args.bool("quiet") {
                    out.stderr.push_str(&format!("Defaulting debug container name to {n}.\n"));
                }
                n
            });
            spec.containers.push(Container { name, termination_message_policy: Some("File".into()), ..Default::default() });
            Some(spec.containers.len() - 1)
        }
    };
    let (stdin, tty) = (args.bool("stdin"), args.bool("tty"));
    let attach_to = index.map(|i| {
        let c = &mut spec.containers[i];
        if !command.is_empty() {
            if args.bool("arguments-only") {
                c.args = Some(command.clone());
            } else {
                c.command = Some(command.clone());
                c.args = None;
            }
        }
        if let Some(image) = &image {
            c.image = Some(image.clone());
        }
        c.stdin = stdin.then_some(true);
        c.tty = tty.then_some(true);
        c.name.clone()
    });
    if let Some(i) = index {
        let mut spec_json = serde_json::to_value(&spec).unwrap_or_default();
        let mut container = spec_json["containers"][i].take();
        if let Err(e) = debug_profile(args, DebugStyle::PodCopy, &mut spec_json, &mut container, cluster) {
            return out.fail(e);
        }
        spec_json["containers"][i] = container;
        spec = match serde_json::from_value(spec_json) {
            Ok(s) => s,
            Err(e) => return out.fail(format!("error: {e}")),
        };
    }
    let keep = |flag: &str| args.bool(flag);
    let copy = kubesim_api::k8s_openapi::api::core::v1::Pod {
        metadata: kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(copy_to.to_string()),
            namespace: Some(namespace.to_string()),
            labels: if keep("keep-labels") { pod.metadata.labels.clone() } else { None },
            annotations: if keep("keep-annotations") { pod.metadata.annotations.clone() } else { None },
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    };
    if args.bool("replace") {
        if let Err(e) = api.delete(info, namespace, &pod_name, DeleteOptions::default(), req) {
            return out.fail(server_error(&e));
        }
    }
    match api.create(Object::Pod(Box::new(copy)), req) {
        Ok(_) => {
            if let (true, Some(container)) = (stdin, attach_to) {
                if tty {
                    out.stderr.push_str(crate::follow::ATTACH_BANNER);
                }
                out.follow = Some(crate::follow::Follow::attach_container(namespace, copy_to, &container));
            }
        }
        Err(e) => out.fail(server_error(&e)),
    }
}

/// `kubectl expose deployment NAME --port=P [--target-port=T] [--type=T]`.
fn expose(args: &Args, api: &mut ApiServer, req: &mut Request, cluster: &dyn ClusterView, namespace: &str, out: &mut Output) {
    let (info, object) = match one_target(args, api, namespace) {
        Ok(t) => t,
        Err(e) => return out.fail(e),
    };
    let json = object.to_json();
    let selector: Option<BTreeMap<String, String>> = match info.kind {
        "Pod" => object.metadata().labels.clone(),
        "Service" => json.pointer("/spec/selector").and_then(|s| serde_json::from_value(s.clone()).ok()),
        "ReplicationController" => json.pointer("/spec/selector").and_then(|s| serde_json::from_value(s.clone()).ok()),
        _ => json.pointer("/spec/selector/matchLabels").and_then(|s| serde_json::from_value(s.clone()).ok()),
    };
    let Some(selector) = selector.filter(|s| !s.is_empty()) else {
        return out.fail(format!("error: couldn't retrieve selectors via --selector flag or introspection: the {} has no selector", info.kind));
    };
    let port = match args.get("port").and_then(|p| p.parse::<i32>().ok()) {
        Some(p) => p,
        None => {
            let ports: Vec<i64> = json
                .pointer(if info.kind == "Pod" { "/spec/containers" } else { "/spec/template/spec/containers" })
                .and_then(|c| c.as_array())
                .into_iter()
                .flatten()
                .flat_map(|c| c.get("ports").and_then(|p| p.as_array()).cloned().unwrap_or_default())
                .filter_map(|p| p.get("containerPort").and_then(|v| v.as_i64()))
                .collect();
            match ports.first() {
                Some(p) => *p as i32,
                None => return out.fail("error: couldn't find port via --port flag or introspection\nSee 'kubectl expose -h' for help and examples"),
            }
        }
    };
    let name = args.get("name").map(str::to_string).unwrap_or_else(|| object.name().to_string());
    let mut service = serde_json::json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": object.metadata().labels.clone().unwrap_or_default()},
        "spec": {"selector": selector, "ports": [{"port": port, "protocol": args.get("protocol").unwrap_or("TCP")}]},
    });
    if let Some(t) = args.get("target-port") {
        service["spec"]["ports"][0]["targetPort"] = t.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::String(t.into()));
    }
    if let Some(t) = args.get("type") {
        service["spec"]["type"] = Value::String(t.into());
    }
    let info_svc = kind_info("v1", "Service").expect("services");
    let object = match util::from_json(info_svc, service) {
        Ok(o) => o,
        Err(e) => return out.fail(format!("error: {e}")),
    };
    if let Some(suffix) = dry_run_suffix(args) {
        // --dry-run=client -o yaml|json: the Service as built; otherwise the printer's line.
        if !print_generated(args, cluster, &object, out) {
            out.outln(format!("service/{name} exposed{suffix}"));
        }
        return;
    }
    match api.create(object, req) {
        Ok(_) => out.outln(format!("service/{name} exposed")),
        Err(e) => out.fail(server_error(&e)),
    }
}

/// The pod a `logs`/`exec` target names: `POD`, `pod/POD`, or the first pod of a workload in
/// `order` (polymorphichelpers' GetFirstPod). Returns the pod and how many pods the workload
/// had.
fn resolve_pod(target: &str, api: &ApiServer, namespace: &str, order: PodOrder) -> Result<(Arc<Object>, usize), String> {
    let pod_info = kind_info("v1", "Pod").expect("pods");
    let (kind, name) = match target.split_once('/') {
        Some((k, n)) => (k, n),
        None => ("pod", target),
    };
    let info = util::resolve(kind)?;
    if info.kind == "Pod" {
        return api.get(pod_info, namespace, name).map(|p| (p, 1)).map_err(|e| server_error(&e));
    }
    let object = api.get(info, namespace, name).map_err(|e| server_error(&e))?;
    let json = object.to_json();
    let selector = util::label_selector_json(json.pointer("/spec/selector"))
        .filter(|s| s.match_labels.is_some() || s.match_expressions.is_some())
        .map(|s| Selector::from_label_selector(&s))
        .or_else(|| {
            json.pointer("/spec/selector").and_then(|s| serde_json::from_value::<BTreeMap<String, String>>(s.clone()).ok()).map(|m| Selector::from_map(&m))
        });
    let uid = object.metadata().uid.clone().unwrap_or_default();
    let pods: Vec<Arc<Object>> = util::list(api, pod_info, Some(namespace))
        .into_iter()
        .filter(|p| match &selector {
            Some(s) => s.matches(p.metadata().labels.as_ref()),
            // Jobs without a manual selector: their pods carry the job's uid.
            None => {
                p.metadata().owner_references.iter().flatten().any(|r| r.uid == uid)
                    || p.metadata().labels.as_ref().and_then(|l| l.get("batch.kubernetes.io/controller-uid")) == Some(&uid)
            }
        })
        .collect();
    if pods.is_empty() {
        return Err("error: timed out waiting for the condition".to_string());
    }
    // GetFirstPod: sort.Sort with the command's order, then the first pod.
    let default = kubesim_api::k8s_openapi::api::core::v1::Pod::default();
    let pod = |o: &Arc<Object>| -> kubesim_api::k8s_openapi::api::core::v1::Pod { o.as_pod().cloned().unwrap_or_else(|| default.clone()) };
    let mut keyed: Vec<(kubesim_api::k8s_openapi::api::core::v1::Pod, Arc<Object>)> = pods.into_iter().map(|o| (pod(&o), o)).collect();
    match order {
        PodOrder::Logging => kubesim_api::sort::go_sort_by(&mut keyed, |a, b| crate::podutils::by_logging_less(&a.0, &b.0)),
        // sort.Reverse(ActivePods).
        PodOrder::Attachable => kubesim_api::sort::go_sort_by(&mut keyed, |a, b| crate::podutils::active_pods_less(&b.0, &a.0)),
    }
    let count = keyed.len();
    Ok((keyed.swap_remove(0).1, count))
}

/// Which pod of a workload a command picks (the sortBy GetFirstPod is given).
#[derive(Clone, Copy)]
enum PodOrder {
    /// logsforobject.go: podutils.ByLogging.
    Logging,
    /// attachablepodforobject.go: sort.Reverse(podutils.ActivePods).
    Attachable,
}

fn container_of(pod: &Object, requested: Option<&str>, out: &mut Output) -> Result<Option<String>, String> {
    let Some(p) = pod.as_pod() else { return Ok(None) };
    let containers: Vec<String> = p.spec.as_ref().map(|s| s.containers.iter().map(|c| c.name.clone()).collect()).unwrap_or_default();
    let all: Vec<String> =
        p.spec.as_ref().map(|s| s.init_containers.iter().flatten().map(|c| c.name.clone()).chain(containers.iter().cloned()).collect()).unwrap_or_default();
    let ephemeral: Vec<String> = p.spec.iter().flat_map(|s| s.ephemeral_containers.iter().flatten().map(|c| c.name.clone())).collect();
    let init: Vec<String> = p.spec.iter().flat_map(|s| s.init_containers.iter().flatten().map(|c| c.name.clone())).collect();
    match requested {
        Some(c) => {
            if all.iter().chain(&ephemeral).any(|n| n == c) {
                Ok(Some(c.to_string()))
            } else {
                Err(format!("error: container {c} is not valid for pod {}", pod.name()))
            }
        }
        None => {
            let default = p.metadata.annotations.as_ref().and_then(|a| a.get("kubectl.kubernetes.io/default-container")).cloned();
            if let Some(d) = default {
                return Ok(Some(d));
            }
            // podcmd.FindOrDefaultContainerByName, with AllContainerNames' order and marks.
            if containers.len() > 1 || !init.is_empty() || !ephemeral.is_empty() {
                let names: Vec<String> = containers
                    .iter()
                    .cloned()
                    .chain(ephemeral.iter().map(|n| format!("{n} (ephem)")))
                    .chain(init.iter().map(|n| format!("{n} (init)")))
                    .collect();
                out.errln(format!("Defaulted container {:?} out of: {}", containers[0], names.join(", ")));
            }
            Ok(containers.first().cloned())
        }
    }
}

/// `kubectl logs`.
fn logs(args: &Args, api: &ApiServer, cluster: &mut dyn ClusterView, namespace: &str, out: &mut Output) {
    let all_containers = args.bool("all-containers");
    let prefix = args.bool("prefix");
    // Pods: one named target, or every pod a -l selector picks (at most --max-log-requests).
    let pods: Vec<Arc<Object>> = match (args.positional.first(), args.get("selector")) {
        (Some(target), _) => match resolve_pod(target, api, namespace, PodOrder::Logging) {
            Ok((p, count)) => {
                if count > 1 {
                    out.errln(format!("Found {count} pods, using pod/{}", p.name()));
                }
                vec![p]
            }
            Err(e) => return out.fail(e),
        },
        (None, Some(_)) => {
            let filter = match Filter::from_args(args, namespace) {
                Ok(f) => f,
                Err(e) => return out.fail(e),
            };
            let pods = match filter.list(api, kind_info("v1", "Pod").expect("pods")) {
                Ok(p) => p,
                Err(e) => return out.fail(e),
            };
            let max = args.get("max-log-requests").and_then(|m| m.parse::<usize>().ok()).unwrap_or(5);
            if pods.len() > max && args.bool("follow") {
                return out.fail(format!("error: you are attempting to follow {} log streams, but maximum allowed concurrency is {max}, use --max-log-requests to increase the limit", pods.len()));
            }
            if pods.is_empty() {
                return out.errln(format!("No resources found in {namespace} namespace."));
            }
            pods
        }
        (None, None) => {
            return out.fail("error: expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command\nSee 'kubectl logs -h' for help and examples");
        }
    };
    let opts = match log_options(args) {
        Ok(o) => o,
        Err(e) => return out.fail(e),
    };
    for pod in pods {
        let containers: Vec<Option<String>> = if all_containers {
            pod.as_pod()
                .and_then(|p| p.spec.as_ref())
                .map(|s| s.init_containers.iter().flatten().chain(s.containers.iter()).map(|c| Some(c.name.clone())).collect())
                .unwrap_or_default()
        } else {
            let requested = args.get("container").map(str::to_string).or_else(|| args.positional.get(1).cloned());
            match container_of(&pod, requested.as_deref(), out) {
                Ok(c) => vec![c],
                Err(e) => return out.fail(e),
            }
        };
        for container in containers {
            // The attached stream of `run -it`/`debug -it` (an internal flag of their follow):
            // the output as the terminal showed it, an unfinished line (a prompt) included.
            if args.get("kubesim-attached").is_some() {
                match cluster.attached(pod.namespace(), pod.name(), container.as_deref()) {
                    Ok(text) => out.out(text),
                    Err(e) => out.fail(format!("error: {e}")),
                }
                continue;
            }
            match cluster.logs(pod.namespace(), pod.name(), container.as_deref(), &opts) {
                Ok(text) if prefix => {
                    for line in text.lines() {
                        out.outln(format!("[pod/{}/{}] {line}", pod.name(), container.as_deref().unwrap_or("")));
                    }
                }
                Ok(text) => out.out(text),
                Err(e) => out.fail(format!("Error from server (BadRequest): {e}")),
            }
        }
    }
}

/// The PodLogOptions `kubectl logs` sends (logs.go ToLogOptions and Validate): `--previous`,
/// `--timestamps`, `--since`, `--since-time`, `--tail` (-1 = all; with a selector and no
/// `--tail`, the last 10 lines), `--limit-bytes`.
fn log_options(args: &Args) -> Result<kubesim_api::podlog::PodLogOptions, String> {
    let mut opts = kubesim_api::podlog::PodLogOptions { previous: args.bool("previous"), timestamps: args.bool("timestamps"), ..Default::default() };
    if let Some(since) = args.get("since") {
        let ms = kubesim_api::time::parse_duration(since)
            .ok_or_else(|| format!("error: invalid argument \"{since}\" for \"--since\" flag: time: invalid duration \"{since}\""))?;
        opts.since_seconds = Some(ms.div_ceil(1000) as i64);
    }
    if let Some(t) = args.get("since-time") {
        opts.since_time = Some(
            kubesim_api::time::parse_rfc3339(t)
                .ok_or_else(|| format!("error: parsing time {t:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {t:?} as \"2006\""))?,
        );
    }
    if opts.since_seconds.is_some() && opts.since_time.is_some() {
        return Err("error: at most one of `sinceTime` or `sinceSeconds` may be specified".into());
    }
    let tail = match args.get("tail") {
        Some(t) => {
            t.parse::<i64>().map_err(|_| format!("error: invalid argument \"{t}\" for \"--tail\" flag: strconv.ParseInt: parsing \"{t}\": invalid syntax"))?
        }
        None if args.get("selector").is_some() => 10,
        None => -1,
    };
    opts.tail_lines = usize::try_from(tail).ok();
    if let Some(l) = args.get("limit-bytes") {
        let n = l
            .parse::<i64>()
            .map_err(|_| format!("error: invalid argument \"{l}\" for \"--limit-bytes\" flag: strconv.ParseInt: parsing \"{l}\": invalid syntax"))?;
        if n < 0 {
            return Err("error: --limit-bytes must be greater than 0".into());
        }
        opts.limit_bytes = (n > 0).then_some(n as usize);
    }
    Ok(opts)
}

/// `kubectl exec POD [-c C] -- COMMAND...`.
fn exec(args: &Args, api: &ApiServer, cluster: &mut dyn ClusterView, namespace: &str, out: &mut Output) {
    let Some(target) = args.positional.first() else {
        return out.fail("error: pod, type/name or --filename must be specified");
    };
    // A command without `--` (the pre-1.x form) is refused since kubectl v1.31 (exec.go
    // Complete: "is not supported anymore", a usage error).
    if args.after_dash.is_empty() && args.positional.len() > 1 {
        return out
            .fail("error: exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\nSee 'kubectl exec -h' for help and examples");
    }
    let command: Vec<String> = args.after_dash.clone();
    if command.is_empty() {
        return out.fail("error: you must specify at least one command for the container");
    }
    let pod = match resolve_pod(target, api, namespace, PodOrder::Attachable) {
        Ok((p, _)) => p,
        Err(e) => return out.fail(e),
    };
    let phase = pod.as_pod().and_then(|p| p.status.as_ref()).and_then(|s| s.phase.clone()).unwrap_or_default();
    if phase == "Succeeded" || phase == "Failed" {
        return out.fail(format!("error: cannot exec into a container in a completed pod; current phase is {phase}"));
    }
    let container = match container_of(&pod, args.get("container"), out) {
        Ok(c) => c,
        Err(e) => return out.fail(e),
    };
    let tty = args.bool("tty");
    match cluster.exec(pod.namespace(), pod.name(), container.as_deref(), &command, tty) {
        Ok((text, code)) => {
            out.out(text);
            if code != 0 {
                out.errln(format!("command terminated with exit code {code}"));
                out.exit_code = code;
            }
        }
        Err(e) => out.fail(format!("error: {e}")),
    }
}

fn format_memory(bytes: i64) -> String {
    format!("{}Mi", bytes / (1024 * 1024))
}

/// `kubectl top pods|nodes` (cmd/top/): usage from the cluster's metrics source.
fn top(args: &Args, api: &ApiServer, _req: &mut Request, cluster: &mut dyn ClusterView, namespace: &str, out: &mut Output) {
    let what = args.positional.first().map(String::as_str).unwrap_or("");
    let pod_info = kind_info("v1", "Pod").expect("pods");
    match what {
        "pod" | "pods" | "po" => {
            let all = args.bool("all-namespaces");
            let selector = args.get("selector").and_then(|s| Selector::parse(s).ok());
            let pods: Vec<Arc<Object>> = match args.positional.get(1) {
                Some(name) => match api.get(pod_info, namespace, name) {
                    Ok(p) => vec![p],
                    Err(e) => return out.fail(server_error(&e)),
                },
                None => util::list(api, pod_info, if all { None } else { Some(namespace) })
                    .into_iter()
                    .filter(|p| selector.as_ref().is_none_or(|s| s.matches(p.metadata().labels.as_ref())))
                    .collect(),
            };
            let mut rows = vec![];
            if all {
                rows.push(vec!["NAMESPACE".into(), "NAME".into(), "CPU(cores)".into(), "MEMORY(bytes)".into()]);
            } else {
                rows.push(vec!["NAME".into(), "CPU(cores)".into(), "MEMORY(bytes)".into()]);
            }
            let mut measured: Vec<(&Arc<Object>, i64, i64)> =
                pods.iter().filter_map(|p| cluster.usage(p.namespace(), p.name()).map(|(c, m)| (p, c, m))).collect();
            // --sort-by=cpu|memory sorts descending (top/top_pod.go PodMetricsSorter).
            match args.get("sort-by") {
                Some("cpu") => kubesim_api::sort::sort_by_key(&mut measured, |m| std::cmp::Reverse(m.1)),
                Some("memory") => kubesim_api::sort::sort_by_key(&mut measured, |m| std::cmp::Reverse(m.2)),
                Some(other) => return out.fail(format!("error: --sort-by accepts only cpu or memory, got {other:?}")),
                None => {}
            }
            for (p, cpu, mem) in measured {
                let mut row = vec![p.name().to_string(), format!("{cpu}m"), format_memory(mem)];
                if all {
                    row.insert(0, p.namespace().to_string());
                }
                rows.push(row);
            }
            if args.bool("no-headers") && rows.len() > 1 {
                rows.remove(0);
                return out.out(top_table(&rows));
            }
            if rows.len() == 1 {
                if args.positional.get(1).is_some() {
                    return out.fail(format!("error: Metrics not available for pod {namespace}/{}, age: unknown", args.positional[1]));
                }
                return out.fail(format!("error: Metrics not available in {} namespace", namespace));
            }
            out.out(top_table(&rows));
        }
        "node" | "nodes" | "no" => {
            let node_info = kind_info("v1", "Node").expect("nodes");
            let mut rows = vec![vec!["NAME".to_string(), "CPU(cores)".into(), "CPU(%)".into(), "MEMORY(bytes)".into(), "MEMORY(%)".into()]];
            for node in util::list(api, node_info, None) {
                if args.positional.get(1).is_some_and(|n| n != node.name()) {
                    continue;
                }
                let (mut cpu, mut mem) = (0i64, 0i64);
                let mut any = false;
                for pod in api.store().pods_on_node(node.name()) {
                    if let Some((c, m)) = cluster.usage(pod.namespace(), pod.name()) {
                        cpu += c;
                        mem += m;
                        any = true;
                    }
                }
                let _ = any;
                let alloc = node.as_node().and_then(|n| n.status.as_ref()).and_then(|s| s.allocatable.clone()).unwrap_or_default();
                let cpu_alloc = alloc.get("cpu").and_then(|q| kubesim_api::quantity::parse_milli(&q.0).ok()).unwrap_or(0) as i64;
                let mem_alloc = alloc.get("memory").and_then(|q| kubesim_api::quantity::parse_value(&q.0).ok()).unwrap_or(0) as i64;
                let pct = |used: i64, total: i64| if total > 0 { format!("{}%", used * 100 / total) } else { "<unknown>".into() };
                rows.push(vec![node.name().to_string(), format!("{cpu}m"), pct(cpu, cpu_alloc), format_memory(mem), pct(mem, mem_alloc)]);
            }
            if rows.len() == 1 {
                return out.fail("error: metrics not available yet");
            }
            out.out(top_table(&rows));
        }
        _ => out.fail("error: you must specify a resource: pod or node"),
    }
}

/// kubectl top's printer terminates every cell with a tab (top_printer.go printValue), so the
/// last column is padded too.
fn top_table(rows: &[Vec<String>]) -> String {
    let text: String = rows.iter().map(|r| r.iter().map(|c| format!("{c}\t")).collect::<String>() + "\n").collect();
    crate::printers::tabwriter(&text, 6, 3)
}

/// `kubectl api-resources` (cmd/apiresources/apiresources.go): the server's preferred
/// resources (kubesim_api::discovery, what `kubesim serve` serves), filtered by
/// `--namespaced`, `--api-group`, `--verbs` and `--categories`, stably sorted by group (or
/// `--sort-by=name|kind`) with ties broken by name.
fn api_resources(args: &Args, out: &mut Output) {
    use kubesim_api::discovery;
    let output = args.get("output").unwrap_or("");
    if !matches!(output, "" | "wide" | "name") {
        return out.fail(format!("error: --output {output} is not available"));
    }
    let sort_by = args.get("sort-by").unwrap_or("");
    if !matches!(sort_by, "" | "name" | "kind") {
        return out.fail(format!("error: --sort-by accepts only name or kind, got {sort_by:?}"));
    }
    let namespaced = args.get("namespaced").map(|v| v != "false");
    let group = args.get("api-group");
    let list = |name: &str| -> Vec<&str> { args.all(name).iter().flat_map(|v| v.split(',')).filter(|v| !v.is_empty()).collect() };
    let (verbs, categories) = (list("verbs"), list("categories"));
    let mut resources: Vec<&discovery::Resource> = discovery::preferred(discovery::resources())
        .into_iter()
        .filter(|r| !r.verbs.is_empty())
        .filter(|r| group.is_none_or(|g| g == r.group))
        .filter(|r| namespaced.is_none_or(|n| n == r.namespaced))
        .filter(|r| verbs.iter().all(|v| r.verbs.contains(v)))
        .filter(|r| categories.iter().all(|c| r.categories.contains(c)))
        .collect();
    let key = |r: &discovery::Resource| match sort_by {
        "name" => r.plural,
        "kind" => r.kind,
        _ => r.group,
    };
    // sort.Stable with Less = compare(key), then name.
    kubesim_api::sort::sort_by(&mut resources, |a, b| key(a).cmp(key(b)).then_with(|| a.plural.cmp(b.plural)));
    let group_version = |r: &discovery::Resource| if r.group.is_empty() { r.version.to_string() } else { format!("{}/{}", r.group, r.version) };
    let mut text = String::new();
    if output == "name" {
        for r in &resources {
            text.push_str(r.plural);
            if !r.group.is_empty() {
                text.push('.');
                text.push_str(r.group);
            }
            text.push('\n');
        }
        out.out(text);
        return;
    }
    if !args.bool("no-headers") {
        text.push_str(if output == "wide" {
            "NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND\tVERBS\tCATEGORIES\n"
        } else {
            "NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND\n"
        });
    }
    for r in &resources {
        text.push_str(&format!("{}\t{}\t{}\t{}\t{}", r.plural, r.short_names.join(","), group_version(r), r.namespaced, r.kind));
        if output == "wide" {
            text.push_str(&format!("\t{}\t{}", r.verbs.join(","), r.categories.join(",")));
        }
        text.push('\n');
    }
    out.out(crate::printers::tabwriter(&text, 6, 3));
}

/// `kubectl api-versions`: every served group-version, sorted.
fn api_versions(out: &mut Output) {
    let mut versions = kubesim_api::discovery::group_versions(kubesim_api::discovery::resources());
    kubesim_api::sort::sort(&mut versions);
    for v in versions {
        out.outln(v);
    }
}

fn version(args: &Args, out: &mut Output) {
    if args.bool("client") {
        out.outln(format!("Client Version: {CLIENT_VERSION}\nKustomize Version: v5.7.1"));
        return;
    }
    match args.get("output") {
        Some("yaml") => out.out(crate::yaml::to_yaml(&serde_json::json!({
            "clientVersion": {"major": "1", "minor": "34", "gitVersion": CLIENT_VERSION, "platform": "kubesim"},
            "kustomizeVersion": "v5.7.1",
            "serverVersion": {"major": "1", "minor": "34", "gitVersion": CLIENT_VERSION, "platform": "kubesim"}
        }))),
        Some("json") => out.out(get::to_json_pretty(&serde_json::json!({
            "clientVersion": {"major": "1", "minor": "34", "gitVersion": CLIENT_VERSION, "platform": "kubesim"},
            "kustomizeVersion": "v5.7.1",
            "serverVersion": {"major": "1", "minor": "34", "gitVersion": CLIENT_VERSION, "platform": "kubesim"}
        }))),
        _ => out.outln(format!("Client Version: {CLIENT_VERSION}\nKustomize Version: v5.7.1\nServer Version: {CLIENT_VERSION}")),
    }
}

fn cluster_info(api: &ApiServer, out: &mut Output) {
    out.outln("Kubernetes control plane is running at https://kubesim.local:6443");
    let svc = kind_info("v1", "Service").expect("services");
    if api.get(svc, "kube-system", "kube-dns").is_ok() {
        out.outln("CoreDNS is running at https://kubesim.local:6443/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy");
    }
    out.outln("\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.");
}

/// `kubectl wait --for=condition=C|delete|jsonpath='{...}'=V TYPE/NAME...` (cmd/wait/wait.go).
/// kubesim evaluates the condition at the current virtual instant: met → `kind/name condition
/// met`; not met → the timeout error kubectl would print once --timeout elapsed.
fn wait(args: &Args, api: &ApiServer, namespace: &str, out: &mut Output) {
    let Some(condition) = args.get("for") else {
        return out.fail("error: --for must be set");
    };
    enum For {
        Delete,
        Create,
        Condition(String, String),
        JsonPath(String, Option<String>),
    }
    let spec = if condition == "delete" {
        For::Delete
    } else if condition == "create" {
        For::Create
    } else if let Some(c) = condition.strip_prefix("condition=") {
        let (name, value) = c.split_once('=').map(|(n, v)| (n.to_string(), v.to_string())).unwrap_or((c.to_string(), "true".to_string()));
        For::Condition(name, value)
    } else if let Some(j) = condition.strip_prefix("jsonpath=") {
        match j.rsplit_once('=').filter(|(path, _)| path.ends_with('}')) {
            Some((path, value)) => For::JsonPath(path.to_string(), Some(value.to_string())),
            None => For::JsonPath(j.to_string(), None),
        }
    } else {
        return out.fail(format!("error: unrecognized condition: {condition:?}"));
    };
    let targets = match &args.file_targets {
        Some(files) => get::file_groups(files),
        None => match parse_targets(&args.positional) {
            Ok(t) => t,
            Err(e) => return out.fail(e),
        },
    };
    let filter = match Filter::from_args(args, namespace) {
        Ok(f) => f,
        Err(e) => return out.fail(e),
    };
    let timeout = args.get("timeout").unwrap_or("30s");
    let file_namespace = |info: &KindInfo, name: &str| {
        args.file_targets.as_ref().and_then(|f| f.iter().find(|(i, _, n)| std::ptr::eq(*i, info) && n == name).map(|(_, ns, _)| ns.clone()))
    };
    for (info, names) in &targets.groups {
        let objects: Vec<(String, Option<Arc<Object>>)> = if names.is_empty() {
            match filter.list(api, info) {
                Ok(l) => l.into_iter().map(|o| (o.name().to_string(), Some(o))).collect(),
                Err(e) => {
                    out.fail(e);
                    continue;
                }
            }
        } else {
            names.iter().map(|n| (n.clone(), api.get(info, &file_namespace(info, n).unwrap_or_else(|| util::namespace_for(info, namespace)), n).ok())).collect()
        };
        if objects.is_empty() {
            out.fail("error: no matching resources found");
            continue;
        }
        for (name, object) in objects {
            let tn = type_name(info, &name);
            let met = match (&spec, &object) {
                (For::Delete, None) => true,
                (For::Delete, Some(_)) => false,
                (For::Create, o) => o.is_some(),
                (_, None) => {
                    out.fail(format!("Error from server (NotFound): {} {name:?} not found", info.qualified_resource()));
                    continue;
                }
                (For::Condition(c, want), Some(o)) => o
                    .to_json()
                    .pointer("/status/conditions")
                    .and_then(|c| c.as_array())
                    .and_then(|list| list.iter().find(|x| x.get("type").and_then(|t| t.as_str()).is_some_and(|t| t.eq_ignore_ascii_case(c))))
                    .and_then(|x| x.get("status").and_then(|s| s.as_str()))
                    .is_some_and(|s| s.eq_ignore_ascii_case(want)),
                (For::JsonPath(path, want), Some(o)) => {
                    let path = path.trim_matches('\'');
                    match crate::jsonpath::evaluate(path, &o.to_json()) {
                        Ok(v) => match want {
                            Some(w) => v == w.trim_matches('\''),
                            None => !v.is_empty(),
                        },
                        Err(e) => {
                            out.fail(format!("error: {e}"));
                            continue;
                        }
                    }
                }
            };
            if met {
                out.outln(format!("{tn} condition met"));
            } else {
                out.fail(format!("error: timed out waiting for the condition on {}/{name} (after {timeout})", info.qualified_resource()));
            }
        }
    }
}

/// `kubectl events` (cmd/events/events.go, event_printer.go): sorted by time, `Kind/name`.
fn events(args: &Args, api: &ApiServer, now: u64, namespace: &str, out: &mut Output) {
    let info = kind_info("v1", "Event").expect("events");
    let all = args.bool("all-namespaces");
    let mut list: Vec<kubesim_api::k8s_openapi::api::core::v1::Event> = util::list(api, info, if all { None } else { Some(namespace) })
        .iter()
        .filter_map(|o| match o.as_ref() {
            Object::Event(e) => Some((**e).clone()),
            _ => None,
        })
        .collect();
    if let Some(target) = args.get("for") {
        let (kind, name) = match target.split_once('/') {
            Some((k, n)) => (util::resolve(k).map(|i| i.kind.to_string()).unwrap_or_default(), n.to_string()),
            None => ("Pod".to_string(), target.to_string()),
        };
        list.retain(|e| e.involved_object.kind.as_deref() == Some(kind.as_str()) && e.involved_object.name.as_deref() == Some(name.as_str()));
    }
    if let Some(types) = args.get("types") {
        let types: Vec<&str> = types.split(',').collect();
        list.retain(|e| types.iter().any(|t| e.type_.as_deref().is_some_and(|x| x.eq_ignore_ascii_case(t))));
    }
    // sort.Sort(SortableEvents): Go's unstable sort by eventTime, so same-instant events come
    // out in its order.
    kubesim_api::sort::go_sort_by_key(&mut list, event_time);
    if list.is_empty() {
        out.errln(if all { "No events found.".to_string() } else { format!("No events found in {namespace} namespace.") });
        return;
    }
    let mut text = String::new();
    if !args.bool("no-headers") {
        if all {
            text.push_str("NAMESPACE\t");
        }
        text.push_str("LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE\n");
    }
    for e in &list {
        let first = e.first_timestamp.as_ref().map(|t| util::age(Some(t), now)).unwrap_or_else(|| "<unknown>".into());
        let count = e.count.unwrap_or(1);
        let interval = if count > 1 { format!("{} (x{count} over {first})", util::age(e.last_timestamp.as_ref(), now)) } else { first };
        if all {
            text.push_str(&format!("{}\t", e.metadata.namespace.clone().unwrap_or_default()));
        }
        text.push_str(&format!(
            "{interval}\t{}\t{}\t{}/{}\t{}\n",
            e.type_.clone().unwrap_or_default(),
            e.reason.clone().unwrap_or_default(),
            e.involved_object.kind.clone().unwrap_or_default(),
            e.involved_object.name.clone().unwrap_or_default(),
            e.message.clone().unwrap_or_default().trim()
        ));
    }
    out.out(crate::printers::tabwriter(&text, 6, 3));
}

/// cmd/events' eventTime, in microseconds (Go's zero time, the earliest instant, as
/// `i64::MIN`): the series' last observation, else a set lastTimestamp, else eventTime. A
/// `Time` counts whole seconds, as it reaches a client.
fn event_time(e: &kubesim_api::k8s_openapi::api::core::v1::Event) -> i64 {
    const ZERO: i64 = i64::MIN;
    if let Some(series) = &e.series {
        return series.last_observed_time.as_ref().map(|t| t.0.as_microsecond()).unwrap_or(ZERO);
    }
    if let Some(t) = &e.last_timestamp {
        return t.0.as_second() * 1_000_000;
    }
    e.event_time.as_ref().map(|t| t.0.as_microsecond()).unwrap_or(ZERO)
}

/// `kubectl auth can-i`: kubesim has no authorization; everything is allowed.
fn auth(args: &Args, out: &mut Output) {
    match args.positional.first().map(String::as_str) {
        Some("can-i") if args.bool("list") => can_i_list(args, out),
        Some("can-i") => out.outln("yes"),
        Some("whoami") => out.out("ATTRIBUTE   VALUE\nUsername    kubernetes-admin\nGroups      [kubeadm:cluster-admins system:authenticated]\n"),
        _ => out.fail("error: kubesim supports auth can-i and auth whoami"),
    }
}

/// `kubectl auth can-i --list` (cani.go printStatus) for kubesim's user, kubernetes-admin in
/// kubeadm:cluster-admins (bound to cluster-admin) and system:authenticated (the bootstrap
/// roles system:basic-user, system:discovery and system:public-info-viewer): the
/// SelfSubjectRulesReview's rules broken down, compacted and sorted as kubectl prints them.
fn can_i_list(args: &Args, out: &mut Output) {
    use crate::describe::{breakdown_rule, combine_resource_group, compact_rules, Rule};
    let l = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
    let urls = |v: &[&str]| Rule { verbs: l(&["get"]), non_resource_urls: l(v), ..Default::default() };
    let rules = [
        // cluster-admin
        Rule { verbs: l(&["*"]), api_groups: l(&["*"]), resources: l(&["*"]), ..Default::default() },
        Rule { verbs: l(&["*"]), non_resource_urls: l(&["*"]), ..Default::default() },
        // system:basic-user
        Rule { verbs: l(&["create"]), api_groups: l(&["authentication.k8s.io"]), resources: l(&["selfsubjectreviews"]), ..Default::default() },
        Rule {
            verbs: l(&["create"]),
            api_groups: l(&["authorization.k8s.io"]),
            resources: l(&["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            ..Default::default()
        },
        // system:discovery
        urls(&["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]),
        // system:public-info-viewer
        urls(&["/healthz", "/livez", "/readyz", "/version", "/version/"]),
    ];
    let rules = compact_rules(rules.iter().flat_map(breakdown_rule).collect());
    let v = |l: &[String]| format!("[{}]", l.join(" "));
    let mut text = String::new();
    if !args.bool("no-headers") {
        text.push_str("Resources\tNon-Resource URLs\tResource Names\tVerbs\n");
    }
    for r in rules {
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            combine_resource_group(&r.resources, &r.api_groups),
            v(&r.non_resource_urls),
            v(&r.resource_names),
            v(&r.verbs)
        ));
    }
    out.out(crate::printers::tabwriter(&text, 6, 3));
}

/// `kubectl config current-context | get-contexts | view`: the one context of the simulated
/// cluster. `view` prints the kubeconfig (with `-o yaml|json|jsonpath=...|go-template=...`,
/// config/view.go), its credentials as `DATA+OMITTED` unless `--raw` or `--flatten`.
fn config(args: &Args, namespace: &str, out: &mut Output) {
    match args.positional.first().map(String::as_str) {
        Some("current-context") => out.outln("kubesim"),
        Some("get-contexts") => out.out(crate::printers::tabwriter(
            &format!(
                "CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE\n*\tkubesim\tkubesim\tkubesim-admin\t{}\n",
                if namespace == "default" { "" } else { namespace }
            ),
            6,
            3,
        )),
        Some("view") => {
            let raw = args.bool("raw") || args.bool("flatten");
            // The credentials a kubeconfig embeds: kubesim's client certificate and key
            // (placeholders: the simulated API server authenticates nobody).
            let (cert, key) = if raw {
                (
                    base64(b"-----BEGIN CERTIFICATE-----\nkubesim-admin\n-----END CERTIFICATE-----\n"),
                    base64(b"-----BEGIN RSA PRIVATE KEY-----\nkubesim-admin\n-----END RSA PRIVATE KEY-----\n"),
                )
            } else {
                ("DATA+OMITTED".to_string(), "DATA+OMITTED".to_string())
            };
            let config = serde_json::json!({
                "apiVersion": "v1",
                "clusters": [{"cluster": {"server": "https://kubesim.local:6443"}, "name": "kubesim"}],
                "contexts": [{"context": {"cluster": "kubesim", "user": "kubesim-admin"}, "name": "kubesim"}],
                "current-context": "kubesim",
                "kind": "Config",
                "preferences": {},
                "users": [{"name": "kubesim-admin", "user": {"client-certificate-data": cert, "client-key-data": key}}],
            });
            match get::parse_format(args.get("output")) {
                // The default is YAML, as view.go's printer.
                Ok(get::Format::Table | get::Format::Wide) => out.out(crate::yaml::to_yaml(&config)),
                Ok(format) => {
                    if !get::print_document(&format, &config, out) {
                        out.fail(format!("error: unable to match a printer suitable for the output format {:?}, allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml", args.get("output").unwrap_or("")));
                    }
                }
                Err(e) => out.fail(e),
            }
        }
        _ => out.fail("error: kubesim supports config current-context, get-contexts and view"),
    }
}
