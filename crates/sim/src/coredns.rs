//! CoreDNS's `kubernetes` plugin informer: it watches Services, EndpointSlices and Namespaces
//! and keeps the cluster DNS view ([`kubesim_dns::Zone`]) that the CoreDNS pods answer from.
//! The fabric answers a DNS query only when kube-proxy's rules sent it to a running CoreDNS pod
//! listening on port 53 (`kubesim_runtime::net`), so scaling `coredns` to zero, or a node
//! whose kube-proxy has not synced, breaks name resolution as it would in a cluster.
//!
//! Deliberate simplification (README "Networking"): the CoreDNS replicas share one informer
//! cache instead of each holding its own (their caches converge within milliseconds upstream).
//! Names outside the cluster's zones go to `forward . /etc/resolv.conf`, the node's resolver,
//! which knows the few public sites of `kubesim_runtime::internet` and nothing else.

use kubesim_api::k8s_openapi::api::discovery::v1::EndpointSlice;
use kubesim_api::object::Object;
use kubesim_dns::{Answer, Zone};
use kubesim_os::program::{DnsMessage, DnsQuestion};
use kubesim_runtime::component::{Component, Ctx, Interest, WatchEvent, WatchFilter};
use kubesim_store::EventType;
use std::sync::Arc;

/// The cluster domain kubeadm configures.
pub const CLUSTER_DOMAIN: &str = "cluster.local";

/// The DNS view the fabric consults.
#[derive(Debug)]
struct ClusterDns(Zone);

impl kubesim_runtime::net::DnsServer for ClusterDns {
    fn answer(&self, question: &DnsQuestion) -> DnsMessage {
        match self.0.answer(question) {
            Answer::Authoritative(message) => message,
            // `forward . /etc/resolv.conf`: the node's resolver (kubesim's small internet).
            Answer::Forward => kubesim_runtime::internet::resolve(question),
        }
    }
}

/// The plugin's informers.
#[derive(Clone, Debug)]
pub struct CoreDnsInformer {
    zone: Zone,
    armed: bool,
}

impl Default for CoreDnsInformer {
    fn default() -> Self {
        CoreDnsInformer { zone: Zone::new(CLUSTER_DOMAIN), armed: false }
    }
}

const PUBLISH: u64 = 1;

impl CoreDnsInformer {
    fn apply(&mut self, object: &Object, deleted: bool) {
        match object {
            Object::Service(_) if deleted => self.zone.remove_service(object.namespace(), object.name()),
            Object::Service(s) => self.zone.set_service(s),
            Object::Namespace(_) if deleted => self.zone.remove_namespace(object.name()),
            Object::Namespace(_) => self.zone.add_namespace(object.name()),
            _ if object.kind() == "EndpointSlice" && deleted => self.zone.remove_endpoint_slice(object.namespace(), object.name()),
            _ if object.kind() == "EndpointSlice" => {
                if let Some(slice) = object.decode::<EndpointSlice>() {
                    self.zone.set_endpoint_slice(&slice);
                }
            }
            _ => {}
        }
    }

    fn publish(&mut self, ctx: &mut Ctx) {
        self.armed = false;
        // The SOA serial: the Unix time of the last change (as the plugin's modified stamp).
        self.zone.set_serial((kubesim_api::time::EPOCH_UNIX_SECONDS + (ctx.now / 1000) as i64) as u32);
        ctx.fabric.cluster_dns = Some(Arc::new(ClusterDns(self.zone.clone())));
    }
}

impl Component for CoreDnsInformer {
    fn name(&self) -> &str {
        "coredns"
    }

    fn interests(&self) -> Vec<Interest> {
        vec![
            Interest { resource: ("", "services"), filter: WatchFilter::All },
            Interest { resource: ("discovery.k8s.io", "endpointslices"), filter: WatchFilter::All },
            Interest { resource: ("", "namespaces"), filter: WatchFilter::All },
        ]
    }

    fn start(&mut self, ctx: &mut Ctx) {
        for o in &ctx.list_all(&[("", "services"), ("discovery.k8s.io", "endpointslices"), ("", "namespaces")]) {
            self.apply(o, false);
        }
        self.publish(ctx);
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        self.apply(&event.object, event.event_type == EventType::Deleted);
        if !self.armed {
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
