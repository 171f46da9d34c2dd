//! `kubesim run`: the whole pipeline from input files to the final state, shared by the native
//! CLI and the wasm tests (so both produce the same history).

use crate::loader::FileOutcome;
use crate::scenario::InputFile;
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
    /// `--scheduler-annotations`: kube-scheduler-simulator's result annotations on each pod.
    pub scheduler_annotations: bool,
    /// Record the trace, notes and deliveries (`None`: yes). The swarm records none; what
    /// happens is the same either way.
    pub record_history: Option<bool>,
    /// How many of the most recent trace records and notes to keep at least (`None`: the
    /// default [`kubesim_runtime::runtime::TRACE_HISTORY`]; `Some(0)`: all, as `--trace`
    /// writes the whole trace).
    pub trace_history: Option<usize>,
}

/// What a run produced.
pub struct RunOutcome {
    /// The world after the run.
    pub world: World,
    /// Per input file: what applying it at t=0 printed.
    pub files: Vec<FileOutcome>,
    /// Errors for documents that did not decode or apply, and world-level errors (stderr lines).
    pub errors: Vec<String>,
}

/// Runs a scenario: [`start`], then the clock runs.
pub fn run(options: RunOptions) -> RunOutcome {
    let (mut world, files, errors) = start(&options);
    match options.duration_ms {
        Some(duration) => world.run_until(duration),
        None => world.run_until_quiet(DEFAULT_LIMIT_MS),
    }
    RunOutcome { world, files, errors }
}

/// The world at t=0 of a run: the input loaded by the one loader ([`crate::loader::load`]) and
/// the `--at` commands queued. Returns the per-file outcomes and every error line.
pub fn start(options: &RunOptions) -> (World, Vec<FileOutcome>, Vec<String>) {
    let (mut world, files, world_errors) = crate::loader::load(
        crate::world::WorldConfig {
            scheduler_annotations: options.scheduler_annotations,
            record_history: options.record_history.unwrap_or(true),
            trace_history: options.trace_history.unwrap_or(kubesim_runtime::runtime::TRACE_HISTORY),
            ..crate::world::WorldConfig::seeded(options.seed)
        },
        &options.files,
    );
    let mut errors: Vec<String> = files.iter().flat_map(|f| f.errors.iter().map(|e| e.message.clone())).collect();
    errors.extend(world_errors);
    for (at, line) in &options.commands {
        world.schedule_command(*at, line);
    }
    (world, files, errors)
}

/// Warnings for containers (of a Pod or any workload's pod template) whose programs the
/// model cannot run: commands missing from the image (they exit 127, `not found`, as the real
/// shell reports), and images from repositories the catalogue does not know (they run as a
/// generic server listening on the declared containerPorts).
pub fn unsupported_command_warnings(object: &kubesim_api::Object) -> Vec<String> {
    let json = object.to_json();
    let spec = if object.kind() == "Pod" {
        json.get("spec").cloned()
    } else {
        json.pointer("/spec/template/spec").or_else(|| json.pointer("/spec/jobTemplate/spec/template/spec")).cloned()
    };
    let spec = spec.and_then(|s| serde_json::from_value::<kubesim_api::k8s_openapi::api::core::v1::PodSpec>(s).ok());
    let Some(spec) = spec else { return Vec::new() };
    let kind = object.kind().to_ascii_lowercase();
    let mut warnings = Vec::new();
    for container in spec.init_containers.iter().flatten().chain(spec.containers.iter()) {
        let image = container.image.clone().unwrap_or_default();
        let Ok(info) = kubesim_images::resolve(&image) else { continue };
        if info.generic {
            let ports: Vec<String> = container.ports.iter().flatten().map(|p| p.container_port.to_string()).collect();
            warnings.push(format!(
                "{kind}/{} container {:?}: image {image:?} is not in kubesim's catalogue; it runs as a generic server{}",
                object.name(),
                container.name,
                if ports.is_empty() {
                    " (no containerPorts declared: it listens on nothing)".to_string()
                } else {
                    format!(" listening on {}", ports.join(", "))
                }
            ));
            continue;
        }
        let missing = kubesim_kubelet::container_config::missing_commands(container, &info);
        if !missing.is_empty() {
            warnings.push(format!(
                "{kind}/{} container {:?}: image {image:?} has no {} (they exit 127, \"not found\", when the container runs)",
                object.name(),
                container.name,
                missing.iter().map(|u| format!("{u:?}")).collect::<Vec<_>>().join(", ")
            ));
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
