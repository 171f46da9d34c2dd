//! Service endpoints: what the EndpointSlice controller publishes.

use super::workloads::STALE_VIEW_MS;
use kubesim_api::object::Object;
use kubesim_api::selector::Selector;
use kubesim_api::Millis;
use kubesim_apiserver::ApiServer;
use kubesim_runtime::Checker;
use kubesim_store::{ByNamespace, Commit, EventType};
use std::collections::BTreeMap;
use std::sync::Arc;

type Labels = BTreeMap<String, String>;

/// The EndpointSlice controller's `endpointslice.kubernetes.io/managed-by` value.
const MANAGED_BY: &str = "endpointslice-controller.k8s.io";

#[derive(Clone, Debug)]
struct PodState {
    /// The pod as last committed (the object of its DELETED commit once it went): the
    /// store's own version, shared, rather than copies of its uid and labels.
    pod: Arc<Object>,
    terminal: bool,
    /// When its uid, labels or phase last changed, or it went.
    changed: Millis,
    gone: bool,
}

impl PodState {
    fn uid(&self) -> &str {
        self.pod.metadata().uid.as_deref().unwrap_or("")
    }
    fn labels(&self) -> &Labels {
        labels_of(&self.pod)
    }
}

/// An object's labels (none: the empty set).
fn labels_of(object: &Object) -> &Labels {
    static NONE: Labels = BTreeMap::new();
    object.metadata().labels.as_ref().unwrap_or(&NONE)
}

/// An EndpointSlice the EndpointSlice controller manages (`endpointslice.kubernetes.io/managed-by:
/// endpointslice-controller.k8s.io`) lists only pods its Service selects: each endpoint's
/// `targetRef` names an existing pod (that uid), not Succeeded or Failed, whose labels match
/// the Service's `spec.selector`. Judged at each write of the slice, by what the controller
/// could know: a pod whose labels or phase changed, or that went, and a Service whose
/// selector changed, less than [`STALE_VIEW_MS`] before the write may still look as before
/// to the controller's informers.
#[derive(Clone, Debug, Default)]
pub struct EndpointSlicesMatchSelectors {
    /// (namespace, name) → the Service's selector (None: no selector) and when it changed.
    services: BTreeMap<(String, String), (Option<Labels>, Millis)>,
    pods: ByNamespace<PodState>,
    /// Pods that went, oldest first: forgotten once older than [`STALE_VIEW_MS`].
    gone: std::collections::VecDeque<(Millis, (String, String))>,
}

impl Checker for EndpointSlicesMatchSelectors {
    fn name(&self) -> &str {
        "endpointslices-match-selectors"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let now = commit.t_ms;
        if let Some(pod) = commit.object.as_pod() {
            let (namespace, name) = (commit.object.namespace(), commit.object.name());
            let terminal = matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"));
            let gone = commit.event_type == EventType::Deleted;
            let uid = pod.metadata.uid.as_deref().unwrap_or("");
            // One lookup; a pod not seen before compares with an empty record (no uid, no labels).
            let changed = match self.pods.get_mut(namespace, name) {
                Some(state) => {
                    let changed = state.uid() != uid || state.labels() != labels_of(&commit.object) || state.terminal != terminal || state.gone != gone;
                    state.pod = commit.object.clone();
                    if changed {
                        (state.terminal, state.changed, state.gone) = (terminal, now, gone);
                    }
                    changed
                }
                None => {
                    let changed = !uid.is_empty() || !labels_of(&commit.object).is_empty() || terminal || gone;
                    self.pods.insert(namespace, name, PodState { pod: commit.object.clone(), terminal, changed: if changed { now } else { 0 }, gone });
                    changed
                }
            };
            if changed && gone {
                self.gone.push_back((now, (namespace.to_string(), name.to_string())));
            }
            // Forget pods gone for long (bounded memory), unless the name came back since.
            while self.gone.front().is_some_and(|(t, _)| *t + STALE_VIEW_MS < now) {
                let (_, key) = self.gone.pop_front().expect("non-empty");
                if self.pods.get(&key.0, &key.1).is_some_and(|p| p.gone && p.changed + STALE_VIEW_MS < now) {
                    self.pods.remove(&key.0, &key.1);
                }
            }
            return Ok(());
        }
        if commit.resource == ("", "services") {
            let key = (commit.object.namespace().to_string(), commit.object.name().to_string());
            let selector = if commit.event_type == EventType::Deleted {
                None
            } else {
                commit.object.to_json().pointer("/spec/selector").and_then(|s| serde_json::from_value::<BTreeMap<String, String>>(s.clone()).ok())
            };
            let entry = self.services.entry(key).or_insert((None, now));
            if entry.0 != selector {
                *entry = (selector, now);
            }
            return Ok(());
        }
        if commit.resource != ("discovery.k8s.io", "endpointslices") || commit.event_type == EventType::Deleted {
            return Ok(());
        }
        let labels = commit.object.metadata().labels.clone().unwrap_or_default();
        if labels.get("endpointslice.kubernetes.io/managed-by").map(String::as_str) != Some(MANAGED_BY) {
            return Ok(());
        }
        let Some(service) = labels.get("kubernetes.io/service-name") else { return Ok(()) };
        let ns = commit.object.namespace().to_string();
        let (selector, selector_changed) = match self.services.get(&(ns.clone(), service.clone())) {
            Some((selector, changed)) => (selector.clone(), *changed),
            None => (None, 0),
        };
        let recent = |t: Millis| t + STALE_VIEW_MS >= now;
        let json = commit.object.to_json();
        let mut problems = Vec::new();
        for endpoint in json.get("endpoints").and_then(|e| e.as_array()).into_iter().flatten() {
            let Some(target) = endpoint.get("targetRef").filter(|t| t.get("kind").and_then(|k| k.as_str()) == Some("Pod")) else { continue };
            let name = target.get("name").and_then(|n| n.as_str()).unwrap_or("");
            let pod_ns = target.get("namespace").and_then(|n| n.as_str()).unwrap_or(&ns);
            let uid = target.get("uid").and_then(|n| n.as_str());
            let pod = self.pods.get(pod_ns, name);
            let why = match (pod, &selector) {
                (None, _) => Some("does not exist"),
                (Some(p), _) if p.gone || uid.is_some_and(|u| u != p.uid()) => (!recent(p.changed)).then_some("does not exist"),
                (Some(p), _) if p.terminal => (!recent(p.changed)).then_some("has finished"),
                (Some(_), None) => (!recent(selector_changed)).then_some("is listed for a Service without a selector"),
                (Some(p), Some(sel)) => {
                    let matches = Selector::from_map(sel).matches(Some(p.labels()));
                    (!matches && !recent(p.changed) && !recent(selector_changed)).then_some("does not match the Service's selector")
                }
            };
            if let Some(why) = why {
                problems.push(format!("endpointslice {}/{} of service {service} lists pod {pod_ns}/{name}, which {why}", ns, commit.object.name()));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}
