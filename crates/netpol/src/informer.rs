//! The policy agents' informer: it watches NetworkPolicies, Pods and Namespaces and keeps the
//! fabric's [`PolicyView`], which `kubesim_runtime::net::route_remote` consults as a packet
//! leaves its source pod's node (egress) and as it reaches the destination pod (ingress).
//!
//! Deliberate simplification (README "Networking"), the one CoreDNS's replicas make too: the
//! per-node agents (kindnet's kube-network-policies) share this one informer cache instead of
//! each holding its own; their caches converge within milliseconds upstream. A packet's pods
//! are found by the uid the CNI registered their address under (as Calico's CNI plugin
//! records the workload endpoint at ADD), so a pod's first packets are matched by its labels
//! even before the kubelet has published its `status.podIP`.

use crate::policy::{PodInfo, PolicyView};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kubesim_api::object::Object;
use kubesim_runtime::component::{Component, Ctx, Interest, WatchEvent, WatchFilter};
use kubesim_store::{ByNamespace, EventType};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The informer's caches.
#[derive(Clone, Debug, Default)]
pub struct PolicyInformer {
    /// The pods the agents see ([`PodInfo::admitted`]), as the store's own versions: what a
    /// view keeps of each ([`PodInfo::of`]) is derived when a view is published, so a
    /// cluster without NetworkPolicies (nothing published) pays a pointer per pod update.
    pods: ByNamespace<Arc<Object>>,
    namespaces: BTreeMap<String, BTreeMap<String, String>>,
    policies: BTreeMap<(String, String), Arc<NetworkPolicy>>,
    armed: bool,
    published: bool,
}

const PUBLISH: u64 = 1;

/// The agents' name in the trace.
pub const NAME: &str = "kube-network-policies";

impl PolicyInformer {
    /// Applies an informer event; whether a published view would change.
    fn apply(&mut self, object: &Arc<Object>, deleted: bool) -> bool {
        let (namespace, name) = (object.namespace(), object.name());
        match object.as_ref() {
            Object::Pod(_) if deleted => self.pods.remove(namespace, name).is_some(),
            Object::Pod(pod) if PodInfo::admitted(pod) => {
                let old = self.pods.insert(namespace, name, object.clone());
                // Without policies no view is published from pods (see on_watch).
                if self.policies.is_empty() && !self.published {
                    return true;
                }
                old.is_none_or(|old| old.as_pod().and_then(PodInfo::of) != PodInfo::of(pod))
            }
            Object::Pod(_) => self.pods.remove(namespace, name).is_some(),
            Object::Namespace(_) if deleted => self.namespaces.remove(object.name()).is_some(),
            Object::Namespace(ns) => {
                let labels = ns.metadata.labels.clone().unwrap_or_default();
                self.namespaces.insert(object.name().to_string(), labels.clone()) != Some(labels)
            }
            _ if object.kind() == "NetworkPolicy" && deleted => self.policies.remove(&(namespace.to_string(), name.to_string())).is_some(),
            _ if object.kind() == "NetworkPolicy" => match object.decode::<NetworkPolicy>() {
                Some(policy) => {
                    self.policies.insert((namespace.to_string(), name.to_string()), Arc::new(policy));
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    fn publish(&mut self, ctx: &mut Ctx) {
        self.armed = false;
        if self.policies.is_empty() {
            // No policy: every flow is admitted, and nothing needs indexing.
            if self.published {
                ctx.fabric.network_policy = None;
                self.published = false;
            }
            return;
        }
        let view = PolicyView::from_parts(
            self.pods.values().filter_map(|o| o.as_pod().and_then(PodInfo::of)),
            self.namespaces.iter().map(|(n, l)| (n.as_str(), l)),
            self.policies.values().map(|p| p.as_ref()),
        );
        ctx.fabric.network_policy = Some(Arc::new(view));
        self.published = true;
    }
}

impl Component for PolicyInformer {
    fn name(&self) -> &str {
        NAME
    }

    fn interests(&self) -> Vec<Interest> {
        vec![
            Interest { resource: ("networking.k8s.io", "networkpolicies"), filter: WatchFilter::All },
            Interest { resource: ("", "pods"), filter: WatchFilter::All },
            Interest { resource: ("", "namespaces"), filter: WatchFilter::All },
        ]
    }

    fn start(&mut self, ctx: &mut Ctx) {
        for o in &ctx.list_all(&[("networking.k8s.io", "networkpolicies"), ("", "pods"), ("", "namespaces")]) {
            self.apply(o, false);
        }
        self.publish(ctx);
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        let changed = self.apply(&event.object, event.event_type == EventType::Deleted);
        // Without policies a pod change needs no new view.
        if changed && !self.armed && (!self.policies.is_empty() || self.published) {
            self.armed = true;
            ctx.after(0, PUBLISH);
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if token == PUBLISH {
            self.publish(ctx);
        }
    }
}
