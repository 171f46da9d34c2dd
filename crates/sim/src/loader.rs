//! The one loader: input files in, a world out — used by the CLI (`kubesim run`, `kubesim
//! kubectl`), the browser and the tests, so the same files give the same world everywhere.
//!
//! At t=0 ([`load`]): a `KubeSchedulerConfiguration` document configures the scheduler and a
//! kind `Cluster` document (`kind create cluster --config`) makes the nodes and the ports kind
//! publishes on the workstation (neither is an API object, so neither is applied); without
//! any Node in the input the built-in
//! default cluster starts; every document is then applied in file order with `kubectl apply
//! -f` semantics (Nodes included: each gets a host and agents); containers whose programs the
//! model does not implement are warned about. Later applies ([`apply`]: `--at` applies, the
//! browser's editor) go through the same path.

use crate::scenario::{decode_inputs, InputFile};
use crate::world::{World, WorldConfig};

/// A problem with a file, with the line it concerns when known (editors mark it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The message, kubectl style (file, document, line, field path, the API server's words).
    pub message: String,
    /// 1-based line in the file.
    pub line: Option<usize>,
}

/// What applying one file printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOutcome {
    /// The file's name.
    pub name: String,
    /// kubectl's stdout lines (`deployment.apps/nginx created`), in document order.
    pub lines: Vec<String>,
    /// Warnings (unknown fields, unmodelled container commands).
    pub warnings: Vec<String>,
    /// Errors for documents that did not decode or apply (valid documents are still applied).
    pub errors: Vec<LoadError>,
}

/// Builds the world for these files at t=0 and applies them. Errors that concern no single
/// document (an invalid scheduler configuration) are returned separately.
pub fn load(mut config: WorldConfig, files: &[InputFile]) -> (World, Vec<FileOutcome>, Vec<String>) {
    let mut world_errors = Vec::new();
    let mut has_nodes = false;
    let mut kind_clusters = Vec::new();
    for file in files {
        let (documents, _) = kubesim_api::decode::parse_documents(&file.name, &file.text);
        for document in documents {
            match document.value.get("kind").and_then(|k| k.as_str()) {
                Some("KubeSchedulerConfiguration") => config.scheduler_config = Some(document.value.clone()),
                Some("Cluster") if is_kind_config(&document.value) => {
                    has_nodes = true;
                    if let Some(subnet) = document.value.pointer("/networking/serviceSubnet").and_then(|v| v.as_str()) {
                        config.service_cidr = subnet.to_string();
                    }
                    kind_clusters.push(document.value.clone());
                }
                Some("Node") => has_nodes = true,
                Some("List") => {
                    has_nodes |= document
                        .value
                        .get("items")
                        .and_then(|i| i.as_array())
                        .into_iter()
                        .flatten()
                        .any(|i| i.get("kind").and_then(|k| k.as_str()) == Some("Node"))
                }
                _ => {}
            }
        }
    }
    let mut world = match World::build(config.clone()) {
        Ok(world) => world,
        Err(e) => {
            if let Err(why) = crate::world::check_service_cidr(&config.service_cidr) {
                world_errors.push(format!("error: invalid kind Cluster configuration: {why}; using {}", crate::world::DEFAULT_SERVICE_CIDR));
                config.service_cidr = crate::world::DEFAULT_SERVICE_CIDR.into();
            } else {
                world_errors.push(format!("error: invalid KubeSchedulerConfiguration: {e}; using the default profile"));
                config.scheduler_config = None;
            }
            World::build(config).expect("the default configuration is valid")
        }
    };
    if !has_nodes {
        world.add_default_nodes();
    }
    for cluster in &kind_clusters {
        match crate::cluster::kind_cluster(cluster) {
            Ok((nodes, ports)) => {
                for node in nodes {
                    world.add_node(node);
                }
                world.publish_ports(ports);
            }
            Err(e) => world_errors.push(format!("error: invalid kind Cluster configuration: {e}")),
        }
    }
    let outcomes = files.iter().map(|file| apply(&mut world, file)).collect();
    (world, outcomes, world_errors)
}

/// Whether a document is kind's cluster configuration.
fn is_kind_config(value: &serde_json::Value) -> bool {
    value.get("apiVersion").and_then(|v| v.as_str()).is_some_and(|v| v.starts_with("kind.x-k8s.io/"))
}

/// Applies one file now with `kubectl apply -f` semantics: Nodes get hosts, the file is
/// registered for later `kubectl ... -f` commands, and unmodelled container commands are
/// warned about.
pub fn apply(world: &mut World, file: &InputFile) -> FileOutcome {
    world.add_file(&file.name, &file.text);
    let results = world.api_request(kubesim_kubectl::ACTOR, |api, req| kubesim_kubectl::apply_text(&file.name, &file.text, "default", api, req));
    world.adopt_nodes();
    let mut outcome = FileOutcome { name: file.name.clone(), ..Default::default() };
    for result in results {
        outcome.warnings.extend(result.warnings.iter().cloned());
        match &result.outcome {
            Ok(_) => outcome.lines.push(result.line()),
            // The scheduler's and kind's configurations are read by `load`; kubectl rightly
            // cannot apply them.
            Err(message) if message.contains("\"KubeSchedulerConfiguration\"") || message.contains("kind.x-k8s.io") => {}
            Err(message) => {
                let located = if message.contains(&file.name) && (message.contains("document") || result.document == 0) {
                    message.clone()
                } else {
                    format!("{message} (in {}, document {})", file.name, result.document)
                };
                outcome.errors.push(LoadError { message: located, line: (result.line > 0).then_some(result.line) });
            }
        }
    }
    outcome.warnings.extend(command_warnings(file));
    outcome
}

/// Loud, not guessed: the containers of a file's workloads whose images the catalogue does not
/// know, or whose scripts use commands the image lacks — one `Warning:` line each, naming the
/// file, document, object and container. Every apply path shows them: the loader, `--at` and
/// console `kubectl apply/create/replace -f`, and `kubesim kubectl`.
pub fn command_warnings(file: &InputFile) -> Vec<String> {
    let mut warnings = Vec::new();
    for (name, document, object, _) in &decode_inputs(std::slice::from_ref(file)).objects {
        for warning in crate::run::unsupported_command_warnings(object) {
            warnings.push(format!("Warning: {name} (document {document}): {warning}"));
        }
    }
    warnings
}
