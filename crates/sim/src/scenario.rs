//! Input files and their decoding (documents to objects, Nodes split out, errors collected per
//! document). Applying them is the loader's job ([`crate::loader`]).

use kubesim_api::decode::{decode_document, parse_documents, unknown_fields, DecodeError};
use kubesim_api::k8s_openapi::api::core::v1::Node;
use kubesim_api::object::Object;

/// One input file.
#[derive(Clone, Debug)]
pub struct InputFile {
    /// Name as given (`-` for stdin).
    pub name: String,
    /// Its text.
    pub text: String,
}

/// Decoded input, in order.
#[derive(Debug, Default)]
pub struct Decoded {
    /// Nodes, which replace the default cluster.
    pub nodes: Vec<Node>,
    /// Everything else, in file and document order, with where it came from.
    pub objects: Vec<(String, usize, Object, Vec<String>)>,
    /// Documents that failed to decode.
    pub errors: Vec<DecodeError>,
}

/// Decodes every file; never panics, never stops at the first error.
pub fn decode_inputs(files: &[InputFile]) -> Decoded {
    let mut decoded = Decoded::default();
    for file in files {
        let (documents, mut errors) = parse_documents(&file.name, &file.text);
        for document in &documents {
            match decode_document(&file.name, document) {
                Ok(objects) => {
                    for object in objects {
                        let warnings = unknown_fields(&document.value, &object);
                        match object {
                            Object::Node(node) => decoded.nodes.push(*node),
                            other => decoded.objects.push((file.name.clone(), document.index, other, warnings)),
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        decoded.errors.extend(errors);
    }
    decoded
}

/// The churn workload (`kubesim bench churn`, the app's `churn` scenario): a CronJob every
/// minute (its Jobs and pods cleaned up by the history limits and the garbage collector), a
/// 5-pod Job with `ttlSecondsAfterFinished` every 30 virtual seconds (deleted by the TTL
/// controller), a Deployment `web` restarted every 2 minutes (rollouts; old ReplicaSets bounded
/// by revisionHistoryLimit) and a Deployment `elastic` scaled between 0 and `elastic_replicas`
/// every 3 minutes.
#[derive(Clone, Copy, Debug)]
pub struct Churn {
    /// `web`'s replicas.
    pub web_replicas: u32,
    /// `elastic`'s replicas in its scaled-up phases.
    pub elastic_replicas: u32,
}

/// One input of the churn workload.
#[derive(Clone, Debug)]
pub enum ChurnStep {
    /// A file to apply.
    Apply(InputFile),
    /// A command line to run.
    Command(String),
}

impl Churn {
    /// How often the workload acts (every step time is a multiple of it).
    pub const PERIOD_MS: u64 = 30_000;

    /// The objects applied at the start: the CronJob and the two Deployments.
    pub fn base_yaml(&self) -> String {
        format!(
            "apiVersion: batch/v1
kind: CronJob
metadata: {{name: ticker}}
spec:
  schedule: '* * * * *'
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{{name: tick, image: 'busybox:1.28', command: [sh, -c, 'date; echo tick; sleep 5']}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: nginx, image: 'nginx:1.27', resources: {{requests: {{cpu: 50m, memory: 64Mi}}}}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: elastic}}
spec:
  replicas: 0
  selector: {{matchLabels: {{app: elastic}}}}
  template:
    metadata: {{labels: {{app: elastic}}}}
    spec:
      containers: [{{name: pause, image: 'registry.k8s.io/pause:3.10'}}]
",
            self.web_replicas
        )
    }

    /// The inputs due at virtual time `t_ms` (none unless it is a positive multiple of
    /// [`Churn::PERIOD_MS`]): the period's Job, then on every 2nd minute the restart and on
    /// every 3rd the scale.
    pub fn steps_at(&self, t_ms: u64) -> Vec<ChurnStep> {
        if t_ms == 0 || !t_ms.is_multiple_of(Self::PERIOD_MS) {
            return Vec::new();
        }
        let job = t_ms / Self::PERIOD_MS;
        let mut steps = vec![ChurnStep::Apply(InputFile {
            name: format!("job-{job}.yaml"),
            text: format!("apiVersion: batch/v1\nkind: Job\nmetadata: {{name: batch-{job}}}\nspec:\n  ttlSecondsAfterFinished: 60\n  completions: 5\n  parallelism: 5\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: work, image: 'busybox:1.28', command: [sh, -c, 'echo working; sleep 3; echo done']}}]\n"),
        })];
        if t_ms.is_multiple_of(120_000) {
            steps.push(ChurnStep::Command("kubectl rollout restart deployment/web".into()));
        }
        if t_ms.is_multiple_of(180_000) {
            let replicas = if (t_ms / 180_000) % 2 == 1 { self.elastic_replicas } else { 0 };
            steps.push(ChurnStep::Command(format!("kubectl scale deployment/elastic --replicas={replicas}")));
        }
        steps
    }
}
