//! Commands that go on after their first instant: `get -w` (get.go watch: the current list,
//! then a row for every change) and `rollout status` (rollout_status.go: the status line on
//! every change of the object until the rollout is done, fails or `--timeout` passes).
//!
//! The kubectl layer acts in one virtual instant. A command that would block leaves a
//! [`Follow`] in its [`Output`]; an embedder that can let virtual time pass
//! (`World::run_command_for`) polls it after every step of the world, until it returns by
//! itself or the user stops it (Ctrl-C). An embedder that cannot wait drops it: the command
//! then printed what it prints at once.

use crate::args::Args;
use crate::get::{self, Format};
use crate::Output;
use kubesim_api::object::{KindInfo, Object};
use kubesim_api::Millis;
use kubesim_apiserver::ApiServer;
use kubesim_store::EventType;
use std::sync::Arc;

/// A command still running.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Follow {
    state: State,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    /// `get -w`: the watch of one kind from revision `since`.
    Watch {
        args: Args,
        info: &'static KindInfo,
        /// None: all namespaces.
        namespace: Option<String>,
        /// The names asked for (empty: the whole collection).
        names: Vec<String>,
        since: u64,
        /// The table printer's printedHeaders: the header goes before the first row only.
        printed_headers: bool,
        /// Objects printed so far (the YAML printer's `---` between documents).
        printed: usize,
    },
    /// `rollout status`: the watch of one object.
    Rollout { info: &'static KindInfo, namespace: String, name: String, since: u64, deadline: Option<Millis> },
    /// `run -i` (attach): until the pod's container terminates; then its output (the attached
    /// stream, read as its log) and, with `--rm`, the pod's deletion.
    Attach { namespace: String, name: String, rm: bool, logged: bool, container: Option<String> },
    /// `debug -i` into an ephemeral container: once it runs, the attach banner (with a
    /// terminal); when it terminates, its output.
    AttachEphemeral { namespace: String, pod: String, container: String, tty: bool, printed: bool },
}

impl Follow {
    /// `get -w` after printing the current list (`printed` objects) at store revision `since`.
    pub(crate) fn watch(args: &Args, info: &'static KindInfo, namespace: Option<String>, names: Vec<String>, since: u64, printed: usize) -> Follow {
        let printed_headers = printed > 0 && !args.bool("no-headers");
        Follow { state: State::Watch { args: args.clone(), info, namespace, names, since, printed_headers, printed } }
    }

    /// `rollout status` of an object whose rollout is not done at revision `since`; `deadline`
    /// is `--timeout` from now.
    pub(crate) fn rollout(info: &'static KindInfo, namespace: &str, name: &str, since: u64, deadline: Option<Millis>) -> Follow {
        Follow { state: State::Rollout { info, namespace: namespace.to_string(), name: name.to_string(), since, deadline } }
    }

    /// `run -i [--rm]` of pod `name`: attached until its container terminates.
    pub(crate) fn attach(namespace: &str, name: &str, rm: bool) -> Follow {
        Follow { state: State::Attach { namespace: namespace.to_string(), name: name.to_string(), rm, logged: false, container: None } }
    }

    /// `debug --copy-to=NAME -i`: attached to container `container` of the copy.
    pub(crate) fn attach_container(namespace: &str, name: &str, container: &str) -> Follow {
        Follow {
            state: State::Attach { namespace: namespace.to_string(), name: name.to_string(), rm: false, logged: false, container: Some(container.to_string()) },
        }
    }

    /// `debug -i` attached to ephemeral container `container` of `pod`.
    pub(crate) fn attach_ephemeral(namespace: &str, pod: &str, container: &str, tty: bool) -> Follow {
        Follow { state: State::AttachEphemeral { namespace: namespace.into(), pod: pod.into(), container: container.into(), tty, printed: false } }
    }

    /// When the command returns by itself if nothing else ends it (`--timeout`).
    pub fn deadline(&self) -> Option<Millis> {
        match &self.state {
            State::Watch { .. } | State::Attach { .. } | State::AttachEphemeral { .. } => None,
            State::Rollout { deadline, .. } => *deadline,
        }
    }

    /// Prints what the command prints for the changes committed since the last poll; true when
    /// the command has returned (its exit status is then in `out`).
    pub fn poll(&mut self, api: &ApiServer, now: Millis, out: &mut Output) -> bool {
        match &mut self.state {
            State::Watch { args, info, namespace, names, since, printed_headers, printed } => {
                let Some(events) = changes(api, info, since) else { return false };
                let format = get::parse_format(args.get("output")).unwrap_or(Format::Table);
                for (_, object) in events {
                    let selected = namespace.as_deref().is_none_or(|ns| object.namespace() == ns)
                        && (names.is_empty() || names.iter().any(|n| n == object.name()))
                        && selected_by(args, &object);
                    if !selected {
                        continue;
                    }
                    print_watched(args, info, &format, &object, now, namespace.is_none(), printed_headers, *printed, out);
                    *printed += 1;
                }
                false
            }
            State::Rollout { info, namespace, name, since, deadline } => {
                if let Some(events) = changes(api, info, since) {
                    for (event_type, object) in events {
                        if object.namespace() != namespace || object.name() != name {
                            continue;
                        }
                        if event_type == EventType::Deleted {
                            out.fail("error: object has been deleted");
                            return true;
                        }
                        if crate::commands::rollout_status(info, &object, out) {
                            return true;
                        }
                    }
                }
                if deadline.is_some_and(|d| now >= d) {
                    out.fail("error: timed out waiting for the condition");
                    return true;
                }
                false
            }
            State::AttachEphemeral { namespace, pod, container, tty, printed } => {
                let info = kubesim_api::kind_info("v1", "Pod").expect("pods");
                let Ok(object) = api.get(info, namespace, pod) else {
                    out.fail(format!("error: pods \"{pod}\" not found"));
                    return true;
                };
                let status = object
                    .as_pod()
                    .and_then(|p| p.status.as_ref())
                    .and_then(|s| s.ephemeral_container_statuses.as_ref())
                    .and_then(|l| l.iter().find(|c| &c.name == container).cloned());
                let state = status.and_then(|s| s.state).unwrap_or_default();
                // Once it runs: the banner (with a terminal) and the attached stream, which the
                // embedder reads as the container's log when the session ends, by itself or
                // when the user stops it (as for `run -i`).
                if (state.running.is_some() || state.terminated.is_some()) && !*printed {
                    *printed = true;
                    if *tty {
                        out.stderr.push_str(ATTACH_BANNER);
                    }
                    out.then.push(format!("logs {pod} -c {container} -n {namespace} --kubesim-attached=1"));
                }
                state.terminated.is_some()
            }
            State::Attach { namespace, name, rm, logged, container } => {
                let info = kubesim_api::kind_info("v1", "Pod").expect("pods");
                let Ok(pod) = api.get(info, namespace, name) else {
                    out.fail(format!("error: pods \"{name}\" not found"));
                    return true;
                };
                let status = pod.as_pod().and_then(|p| p.status.clone()).unwrap_or_default();
                let phase = status.phase.clone().unwrap_or_default();
                // The attached stream is the container's output: the embedder reads it as
                // the log once the session ends (or the user stops it), then deletes the pod
                // for --rm (run.go's removal after attach).
                if matches!(phase.as_str(), "Running" | "Succeeded" | "Failed") && !*logged {
                    *logged = true;
                    let c = container.as_ref().map(|c| format!(" -c {c}")).unwrap_or_default();
                    out.then.push(format!("logs {name}{c} -n {namespace} --kubesim-attached=1"));
                }
                if phase != "Succeeded" && phase != "Failed" {
                    return false;
                }
                if *rm {
                    out.then.push(format!("delete pod {name} -n {namespace}"));
                }
                if phase == "Failed" {
                    let code = status
                        .container_statuses
                        .iter()
                        .flatten()
                        .find_map(|c| c.state.as_ref().and_then(|s| s.terminated.as_ref()).map(|t| t.exit_code))
                        .unwrap_or(1);
                    out.stderr.push_str(&format!("pod {namespace}/{name} terminated (Error)\n"));
                    out.exit_code = code;
                }
                true
            }
        }
    }
}

/// The watch events of `info` since `since` (advanced to the store's revision), or None when
/// nothing was committed. A watch whose revision was compacted away ends there (410).
fn changes(api: &ApiServer, info: &KindInfo, since: &mut u64) -> Option<Vec<(EventType, Arc<Object>)>> {
    let revision = api.store().revision();
    if revision == *since {
        return None;
    }
    let events = api.watch_since(info, *since).unwrap_or_default();
    *since = revision;
    Some(events.into_iter().map(|(t, o, _)| (t, o)).collect())
}

/// `-l` and `--field-selector` as the API server's watch filters them (on the new state).
fn selected_by(args: &Args, object: &Object) -> bool {
    let labels = args.get("selector").and_then(|s| kubesim_api::selector::Selector::parse(s).ok());
    let fields = args.get("field-selector").and_then(|s| kubesim_api::selector::FieldSelector::parse(s).ok());
    labels.is_none_or(|l| l.matches(object.metadata().labels.as_ref())) && fields.is_none_or(|f| f.matches(object).unwrap_or(false))
}

/// One watch event as get.go prints it: a table row flushed on its own (each event is aligned
/// by itself; the header only before the first row), or the object in the output format.
#[allow(clippy::too_many_arguments)]
fn print_watched(
    args: &Args,
    info: &'static KindInfo,
    format: &Format,
    object: &Arc<Object>,
    now: Millis,
    all_namespaces: bool,
    printed_headers: &mut bool,
    printed: usize,
    out: &mut Output,
) {
    match format {
        Format::Table | Format::Wide => {
            let table = get::table(info, std::slice::from_ref(object), args, now, args.bool("show-kind"), all_namespaces);
            out.out(table.render(*printed_headers || args.bool("no-headers")));
            *printed_headers = true;
        }
        other => {
            if matches!(other, Format::Yaml) && printed > 0 {
                out.out("---\n");
            }
            get::print_objects(other, &[(info, object.clone())], true, out);
        }
    }
}

/// What kubectl attach prints when it attaches a terminal (attach.go: the recording warning,
/// then the prompt hint).
pub(crate) const ATTACH_BANNER: &str = "All commands and output from this session will be recorded in container logs, including credentials and sensitive information passed through the command prompt.\nIf you don't see a command prompt, try pressing enter.\n";
