//! kubesim's kubectl: the one command layer behind `kubesim run --at ... 'kubectl ...'`,
//! `kubesim kubectl ...` and the in-browser console. Start here:
//! - [`run`] / [`run_line`]: one kubectl command line against the simulated API server.
//! - [`apply_text`]: `kubectl apply -f` semantics for text already read (client-side apply with
//!   the last-applied-configuration annotation and a three-way strategic merge).
//! - [`split_command`] / [`split_command_with`]: POSIX-shell-style splitting of a command
//!   string (quotes, escapes, `$(...)` command substitution).
//!
//! Commands: `apply`, `create` (`-f`, `deployment`, `namespace`, `configmap`, `secret generic|
//! docker-registry|tls`, `job`, `cronjob`, `service`, `serviceaccount`, `quota`, `priorityclass`,
//! `pdb`, `role`, `clusterrole`, `rolebinding`, `clusterrolebinding`, `token`, `ingress`), `replace`, `get`,
//! `describe`, `delete`, `scale`, `set image|env (--from, --list)|resources|serviceaccount|selector|
//! subject`, `certificate approve|deny`, `label`, `annotate`, `patch`
//! (strategic with `$patch`/`$retainKeys`/`$setElementOrder`, merge, json; `-p` or
//! `--patch-file`), `taint`, `cordon`, `uncordon`, `drain`, `rollout status|history|undo|restart|
//! pause|resume` (Deployments through ReplicaSets, DaemonSets and StatefulSets through
//! ControllerRevisions), `run`, `expose`, `autoscale`, `logs`, `exec`, `top pods|nodes`, `wait`,
//! `events`, `api-resources`, `api-versions`, `version`, `cluster-info`, `auth can-i`,
//! `config current-context|view`, `diff`, `explain` (from the served OpenAPI v3), `kustomize`. Verbs that act on existing objects take
//! `-f FILE` or `-k DIR` (a kustomization: generators, namespace, name prefix/suffix, labels,
//! annotations, images, replicas, name references, kustomize's hash suffixes; patches and
//! components are refused); `create configmap|secret --from-file` takes directories and
//! `--append-hash`; resources may be written `TYPE`, `TYPE.GROUP` or `TYPE.VERSION.GROUP`.
//!
//! Output formats: tables, `-o wide|yaml|json|name|jsonpath=|jsonpath-file=|jsonpath-as-json=|
//! custom-columns=|custom-columns-file=|go-template=|go-template-file=|template=|templatefile=`
//! and `--template` ([`gotemplate`] is Go's text/template as kubectl runs it).
//!
//! Output mirrors upstream kubectl v1.34 byte for byte where the simulation has the data:
//! table columns from pkg/printers/internalversion/printers.go, Go's text/tabwriter alignment,
//! describe layouts from staging/src/k8s.io/kubectl/pkg/describe/describe.go, `-o yaml` as
//! sigs.k8s.io/yaml + yaml.v2 emit it (key order, quoting, literal blocks, folding past column
//! 80), messages from the kubectl commands.
//!
//! Deviations (the simulation acts in one virtual instant per command):
//! - `wait` evaluates its condition now (met, or the timeout error); `logs -f` reports the
//!   current logs. `rollout status` and `get -w` print what they print at once and leave a
//!   [`Follow`] that an embedder able to let virtual time pass polls (`World::run_command_for`);
//!   dropped, the command ends there.
//! - `drain` evicts through the API server's eviction subresource (PDB checks, 429); blocked
//!   evictions are reported once instead of retried every 5 s until --timeout.
//! - `apply --server-side` merges into the live object without a last-applied annotation and
//!   prints `serverside-applied`; managedFields and conflicts are not modelled.
//! - Unknown fields warn (`--validate=warn`) unless `--validate=strict` is given.
//! - Updates are also pre-checked here (defaulted object validation, Deployment selector
//!   immutability) before the API server validates them, so dry runs report the same errors.
//! - The go-template printer has text/template's builtins and kubectl's `exists` and
//!   `base64decode` (as kubectl v1.32 does; Sprig functions are not provided).
//!
//! Invariants: no I/O (files, logs and exec go through [`ClusterView`]); every write goes through
//! the [`ApiServer`] with actor `kubectl`; time is the request's virtual time; never panics on input.

#![deny(missing_docs)]

mod apply;
mod args;
mod commands;
mod describe;
mod diff;
mod docs_examples;
mod explain;
mod follow;
mod get;
pub mod gotemplate;
pub mod jsonpath;
mod kustomize;
pub mod manifests;
mod merge;
mod podutils;
mod printers;
mod util;
mod yaml;

pub use apply::{apply_documents, apply_text, ApplyAction, ApplyOptions, ApplyResult, Mode};
pub use args::{is_bool_flag, split_command, split_command_with};
pub use follow::Follow;
pub use util::{parse_invalid, InvalidMessage};

pub use kubesim_api::podlog::PodLogOptions;
use kubesim_apiserver::{ApiServer, Request};
use std::sync::Arc;

/// What a kubectl invocation printed and its exit status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Standard output.
    pub stdout: String,
    /// Standard error (errors and warnings).
    pub stderr: String,
    /// Exit status (0 on success, 1 on error as kubectl).
    pub exit_code: i32,
    /// Set when the command goes on after this instant (`get -w`, `rollout status`): poll it
    /// as virtual time passes ([`Follow::poll`]), or drop it to stop the command now.
    pub follow: Option<Follow>,
    /// Commands the embedder runs when a [`Follow`] returns, their output appended to this
    /// one's (`run -i --rm`: the attached output as `logs`, then `delete pod`).
    pub then: Vec<String>,
}

impl Output {
    pub(crate) fn out(&mut self, text: impl AsRef<str>) {
        self.stdout.push_str(text.as_ref());
    }
    pub(crate) fn outln(&mut self, text: impl AsRef<str>) {
        self.stdout.push_str(text.as_ref());
        self.stdout.push('\n');
    }
    pub(crate) fn errln(&mut self, text: impl AsRef<str>) {
        self.stderr.push_str(text.as_ref());
        self.stderr.push('\n');
    }
    /// Records an error line and sets exit status 1.
    pub(crate) fn fail(&mut self, text: impl AsRef<str>) {
        self.errln(text);
        self.exit_code = 1;
    }
}

/// What kubectl needs from the simulated cluster beyond the API server.
pub trait ClusterView {
    /// Reads `-f FILE` (`-` = stdin text).
    fn read_file(&self, path: &str) -> Result<String, String>;
    /// Container logs (`kubectl logs`).
    fn logs(&self, namespace: &str, pod: &str, container: Option<&str>, opts: &PodLogOptions) -> Result<String, String>;
    /// What a terminal attached to the container shows (`run -it`, `debug -it`): its output,
    /// including a line it has not finished (a prompt). By default its log.
    fn attached(&self, namespace: &str, pod: &str, container: Option<&str>) -> Result<String, String> {
        self.logs(namespace, pod, container, &PodLogOptions::default())
    }
    /// Runs a command in a container (`kubectl exec`, `-t` for a terminal): (output, exit code).
    fn exec(&mut self, namespace: &str, pod: &str, container: Option<&str>, command: &[String], tty: bool) -> Result<(String, i32), String>;
    /// Current usage of a pod (`kubectl top`): (cpu millicores, memory bytes).
    fn usage(&self, namespace: &str, pod: &str) -> Option<(i64, i64)>;
    /// The names of the files directly in directory `dir` (`--from-file=DIR`, `-k DIR`),
    /// sorted, or `None` when no file lies under it.
    fn list_dir(&self, _dir: &str) -> Option<Vec<String>> {
        None
    }
}

/// [`ClusterView::list_dir`] over a set of file paths: `dir` (`.`, `./x`, `x/` alike) holds the
/// paths `dir/NAME` with no further `/`.
pub fn list_dir_of<'a>(paths: impl IntoIterator<Item = &'a String>, dir: &str) -> Option<Vec<String>> {
    let clean = |p: &str| -> String {
        let mut p = p.trim_end_matches('/');
        while let Some(rest) = p.strip_prefix("./") {
            p = rest;
        }
        if p == "." {
            String::new()
        } else {
            p.to_string()
        }
    };
    let dir = clean(dir);
    let mut names: Vec<String> = paths
        .into_iter()
        .filter_map(|p| {
            let p = clean(p);
            let rest = if dir.is_empty() { Some(p.as_str()) } else { p.strip_prefix(&dir).and_then(|r| r.strip_prefix('/')) }?;
            (!rest.is_empty() && !rest.contains('/') && !rest.contains("://")).then(|| rest.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    (!names.is_empty()).then_some(names)
}

/// The top-level commands kubesim's kubectl understands (for console completion and help).
pub const COMMANDS: &[&str] = &[
    "annotate",
    "api-resources",
    "api-versions",
    "apply",
    "auth",
    "autoscale",
    "certificate",
    "cluster-info",
    "config",
    "cordon",
    "create",
    "delete",
    "describe",
    "diff",
    "drain",
    "events",
    "exec",
    "explain",
    "expose",
    "get",
    "kustomize",
    "label",
    "logs",
    "patch",
    "replace",
    "rollout",
    "run",
    "scale",
    "set",
    "taint",
    "top",
    "uncordon",
    "version",
    "wait",
];

/// The actor every kubectl write is recorded under.
pub const ACTOR: &str = "kubectl";

/// Runs one kubectl command line (argv without the leading "kubectl") as actor "kubectl".
pub fn run(args: &[String], api: &mut ApiServer, req: &mut Request, cluster: &mut dyn ClusterView) -> Output {
    let actor: Arc<str> = Arc::from(ACTOR);
    let mut request = Request { now: req.now, rng: &mut *req.rng, actor: &actor };
    let mut out = Output::default();
    commands::dispatch(args, api, &mut request, cluster, &mut out);
    out
}

/// Convenience: [`split_command_with`] then [`run`]; a leading `kubectl` word is dropped.
/// `$(kubectl ...)` command substitutions run first, as a shell would run them (their stderr
/// is kept; `kubectl drain $(kubectl get pod zk-0 --template {{.spec.nodeName}})`).
pub fn run_line(line: &str, api: &mut ApiServer, req: &mut Request, cluster: &mut dyn ClusterView) -> Output {
    let mut inner_stderr = String::new();
    let split = {
        let mut substitute = |command: &str| -> Result<String, String> {
            let inner = run_line(command, api, req, cluster);
            inner_stderr.push_str(&inner.stderr);
            Ok(inner.stdout)
        };
        split_command_with(line, &mut substitute)
    };
    let mut output = match split {
        Ok(mut argv) => {
            if argv.first().map(String::as_str) == Some("kubectl") {
                argv.remove(0);
            }
            run(&argv, api, req, cluster)
        }
        Err(e) => Output { stdout: String::new(), stderr: format!("error: {e}\n"), exit_code: 1, follow: None, then: Vec::new() },
    };
    output.stderr.insert_str(0, &inner_stderr);
    output
}

/// A [`ClusterView`] with no files, logs, exec or metrics (for tests and the UI editor).
#[derive(Clone, Debug, Default)]
pub struct NoCluster {
    /// Files `-f` can read, by path.
    pub files: std::collections::BTreeMap<String, String>,
}

impl ClusterView for NoCluster {
    fn read_file(&self, path: &str) -> Result<String, String> {
        self.files.get(path).cloned().ok_or_else(|| format!("the path \"{path}\" does not exist"))
    }
    fn logs(&self, _namespace: &str, pod: &str, _container: Option<&str>, _opts: &PodLogOptions) -> Result<String, String> {
        Err(format!("logs for pod {pod:?} are not available"))
    }
    fn exec(&mut self, _namespace: &str, pod: &str, _container: Option<&str>, _command: &[String], _tty: bool) -> Result<(String, i32), String> {
        Err(format!("exec into pod {pod:?} is not available"))
    }
    fn usage(&self, _namespace: &str, _pod: &str) -> Option<(i64, i64)> {
        None
    }
    fn list_dir(&self, dir: &str) -> Option<Vec<String>> {
        list_dir_of(self.files.keys(), dir)
    }
}

/// The pieces of this layer other front ends reuse so there is one implementation: the table
/// printers (the HTTP server's server-side `Table` conversion prints exactly these columns and
/// cells), the merge code (the HTTP server's strategic-merge, JSON-merge and JSON patches) and
/// describe's probe line (the Why answers name a probe as `kubectl describe` does).
pub mod reuse {
    pub use crate::describe::describe_probe;
    pub use crate::merge::{json_patch, merge_key, merge_patch, strategic_patch};
    pub use crate::printers::{headers, render, row, tabwriter, Table, EVENT_WIDE_HEADERS};
}
