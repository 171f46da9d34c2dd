//! `kubesim run`: the whole pipeline from input files to the final state, shared by the native
//! CLI and the wasm tests (so both produce the same history).

use crate::scenario::{decode_inputs, ApplyOutcome, InputFile};
use crate::world::World;
use kubesim_api::Millis;

/// Default cap on a run without `--for`: 10 virtual minutes.
pub const DEFAULT_LIMIT_MS: Millis = 10 * 60_000;

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Input files, applied at t=0 in order.
    pub files: Vec<InputFile>,
    /// The seed.
    pub seed: u64,
    /// `--for`: run exactly this long; None = until quiet (at most 10 minutes).
    pub duration_ms: Option<Millis>,
    /// `--at TIME COMMAND`, in the order given.
    pub commands: Vec<(Millis, String)>,
}

/// What a run produced.
pub struct RunOutcome {
    /// The world after the run.
    pub world: World,
    /// Per-document apply results at t=0.
    pub applied: Vec<ApplyOutcome>,
    /// Errors for documents that did not decode or apply (stderr lines).
    pub errors: Vec<String>,
}

/// Runs a scenario: the default cluster unless the input has Nodes, every file applied at t=0
/// with `kubectl apply -f` semantics, `--at` commands queued, then the clock runs.
pub fn run(options: RunOptions) -> RunOutcome {
    let (mut world, config_errors) = world_for(options.seed, &options.files);
    let (applied, mut errors) = load(&mut world, &options.files);
    errors.extend(config_errors);
    for (at, line) in &options.commands {
        world.schedule_command(*at, line);
    }
    match options.duration_ms {
        Some(duration) => world.run_until(duration),
        None => world.run_until_quiet(DEFAULT_LIMIT_MS),
    }
    RunOutcome { world, applied, errors }
}

/// A fresh world for these inputs: a `KubeSchedulerConfiguration` document among them
/// configures the scheduler (it is not an API object, so it is not applied).
pub fn world_for(seed: u64, files: &[InputFile]) -> (World, Vec<String>) {
    let mut config = crate::world::WorldConfig::seeded(seed);
    let mut errors = Vec::new();
    for file in files {
        let (documents, _) = kubesim_api::decode::parse_documents(&file.name, &file.text);
        for document in documents {
            if document.value.get("kind").and_then(|k| k.as_str()) == Some("KubeSchedulerConfiguration") {
                config.scheduler_config = Some(document.value.clone());
            }
        }
    }
    match World::build(config.clone()) {
        Ok(world) => (world, errors),
        Err(e) => {
            errors.push(format!("error: invalid KubeSchedulerConfiguration: {e}; using the default profile"));
            config.scheduler_config = None;
            (World::build(config).expect("the default configuration is valid"), errors)
        }
    }
}

/// Loads input into a fresh world at t=0 (the part of [`run`] before the clock runs; the UI
/// uses it too). Returns the per-document outcomes and the error lines.
pub fn load(world: &mut World, files: &[InputFile]) -> (Vec<ApplyOutcome>, Vec<String>) {
    let decoded = decode_inputs(files);
    if decoded.nodes.is_empty() {
        world.add_default_nodes();
    }
    let mut applied = Vec::new();
    for file in files {
        world.add_file(&file.name, &file.text);
        applied.extend(crate::commands::apply_file(world, &file.name, &file.text));
    }
    world.adopt_nodes();
    // Loud, not guessed: container scripts using commands the shell model does not implement.
    for (file, document, object, _) in &decoded.objects {
        for warning in unsupported_command_warnings(object) {
            applied.push(ApplyOutcome::Warning(format!("Warning: {file} (document {document}): {warning}")));
        }
    }
    // KubeSchedulerConfiguration documents configured the scheduler (see world_for); kubectl
    // rightly cannot apply them, so their "no matches for kind" results are dropped.
    let applied: Vec<ApplyOutcome> =
        applied.into_iter().filter(|o| !matches!(o, ApplyOutcome::Failed(line) if line.contains("\"KubeSchedulerConfiguration\""))).collect();
    let errors = applied
        .iter()
        .filter_map(|o| match o {
            ApplyOutcome::Failed(line) => Some(line.clone()),
            _ => None,
        })
        .collect();
    (applied, errors)
}

/// Warnings for containers (of a Pod or any workload's pod template) whose `sh -c` scripts use
/// commands the kubelet's process model does not implement.
pub fn unsupported_command_warnings(object: &kubesim_api::Object) -> Vec<String> {
    let json = object.to_json();
    let spec = if object.kind() == "Pod" {
        json.get("spec").cloned()
    } else {
        json.pointer("/spec/template/spec").or_else(|| json.pointer("/spec/jobTemplate/spec/template/spec")).cloned()
    };
    let Some(spec) = spec else { return Vec::new() };
    let mut warnings = Vec::new();
    for list in ["initContainers", "containers"] {
        for container in spec.get(list).and_then(|c| c.as_array()).into_iter().flatten() {
            let strings = |key: &str| -> Vec<String> {
                container.get(key).and_then(|v| v.as_array()).map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect()).unwrap_or_default()
            };
            let unknown = kubesim_host::process::unsupported_commands(&strings("command"), &strings("args"));
            if !unknown.is_empty() {
                warnings.push(format!(
                    "{}/{} container {:?}: the simulated shell does not implement {} (they exit 127, \"not found\", when the container runs)",
                    object.kind().to_ascii_lowercase(),
                    object.name(),
                    container.get("name").and_then(|n| n.as_str()).unwrap_or(""),
                    unknown.iter().map(|u| format!("{u:?}")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    warnings
}

/// The final state as a `v1 List` of every object in the store (all namespaces, status
/// included), in the API server's order: by resource, then namespace and name.
pub fn list_all(world: &World) -> serde_json::Value {
    let store = world.api().store();
    let mut items = Vec::new();
    for resource in store.resources() {
        for object in store.list(resource, None) {
            items.push(object.to_json());
        }
    }
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": items,
        "metadata": { "resourceVersion": store.revision().to_string() },
    })
}

/// A stable fingerprint of a trace: FNV-1a 64 over its JSON lines, as 16 hex digits. Native and
/// wasm runs of the same input and seed must agree on it.
pub fn trace_hash(trace: &[crate::world::TraceRecord]) -> String {
    let mut h = kubesim_api::hash::Fnv64::new();
    for record in trace {
        h = h.bytes(record.to_json_line().as_bytes()).byte(b'\n');
    }
    format!("{:016x}", h.finish())
}
