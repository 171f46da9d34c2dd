//! The cloud controller manager's service controller as kind's cloud-provider-kind runs it
//! (k8s.io/cloud-provider controllers/service): every Service of type LoadBalancer (without a
//! `loadBalancerClass`) gets a load balancer — an address on the nodes' network, written to
//! `status.loadBalancer.ingress` — with the `EnsuringLoadBalancer` / `EnsuredLoadBalancer`
//! events; a Service that stops being a LoadBalancer (or is deleted) gives its address back
//! (`DeletingLoadBalancer` / `DeletedLoadBalancer`). Traffic to the address is forwarded to the
//! nodes, where kube-proxy's rules for the ingress IP pick an endpoint.
//!
//! Deviation (documented in README): cloud-provider-kind's load balancers are containers that
//! docker numbers after the nodes; here they come from 172.18.255.1 upwards so that nodes added
//! later never collide with them.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::core::v1::{LoadBalancerIngress, LoadBalancerStatus, ServiceStatus};
use kubesim_api::object::Object;
use kubesim_api::Millis;
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;
use kubesim_store::EventType;
use std::collections::BTreeMap;

/// The work queue's latency.
pub const SERVICE_LB_LATENCY_MS: Millis = 10;
/// The first load-balancer address (172.18.255.1).
pub const LB_POOL_BASE: u32 = (172 << 24) | (18 << 16) | (255 << 8) | 1;
/// How many addresses the pool holds.
pub const LB_POOL_SIZE: u32 = 254;

/// The service controller.
#[derive(Clone, Debug)]
pub struct ServiceLoadBalancerController {
    services: Cache,
    queue: WorkQueue,
    /// Address offset → the Service (namespace/name) holding it.
    allocated: BTreeMap<u32, (String, String)>,
}

impl Default for ServiceLoadBalancerController {
    fn default() -> Self {
        ServiceLoadBalancerController::new()
    }
}

fn ip_string(offset: u32) -> String {
    std::net::Ipv4Addr::from(LB_POOL_BASE + offset).to_string()
}

fn wants_load_balancer(object: &Object) -> bool {
    let Object::Service(svc) = object else { return false };
    let spec = svc.spec.as_ref();
    spec.and_then(|s| s.type_.as_deref()) == Some("LoadBalancer")
        && spec.and_then(|s| s.load_balancer_class.as_ref()).is_none()
        && object.metadata().deletion_timestamp.is_none()
}

fn ingress_ips(object: &Object) -> Vec<String> {
    let Object::Service(svc) = object else { return Vec::new() };
    svc.status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .map(|i| i.iter().filter_map(|i| i.ip.clone()).collect())
        .unwrap_or_default()
}

impl ServiceLoadBalancerController {
    /// The controller with an empty pool.
    pub fn new() -> ServiceLoadBalancerController {
        ServiceLoadBalancerController { services: Cache::default(), queue: WorkQueue::new(SERVICE_LB_LATENCY_MS), allocated: BTreeMap::new() }
    }

    fn offset_of(ip: &str) -> Option<u32> {
        let ip = u32::from(ip.parse::<std::net::Ipv4Addr>().ok()?);
        ip.checked_sub(LB_POOL_BASE).filter(|o| *o < LB_POOL_SIZE)
    }

    fn release(&mut self, key: &(String, String)) {
        self.allocated.retain(|_, holder| holder != key);
    }

    fn write_status(&mut self, object: &Object, ingress: Vec<LoadBalancerIngress>, ctx: &mut Ctx) -> Result<(), ApiError> {
        let Object::Service(svc) = object else { return Ok(()) };
        let mut svc = (**svc).clone();
        let status = svc.status.get_or_insert_with(ServiceStatus::default);
        status.load_balancer = Some(LoadBalancerStatus { ingress: if ingress.is_empty() { None } else { Some(ingress) } });
        let updated = ctx.update_status(Object::Service(Box::new(svc)))?;
        self.services.put(updated);
        Ok(())
    }
}

impl Reconciler for ServiceLoadBalancerController {
    fn name(&self) -> &'static str {
        "service-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "services")) => services,
    }
    fn started(&mut self, ctx: &mut Ctx) {
        let held: Vec<(u32, (String, String))> = self
            .services
            .iter()
            .flat_map(|o| {
                ingress_ips(o)
                    .into_iter()
                    .filter_map(|ip| Self::offset_of(&ip))
                    .map(|off| (off, (o.namespace().to_string(), o.name().to_string())))
                    .collect::<Vec<_>>()
            })
            .collect();
        self.allocated.extend(held);
        self.queue.add_all(&self.services, ctx);
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let object = &change.event.object;
        if change.event.event_type == EventType::Deleted {
            if !ingress_ips(object).is_empty() {
                self.release(&(object.namespace().to_string(), object.name().to_string()));
            }
            return;
        }
        let has = !ingress_ips(object).is_empty();
        if wants_load_balancer(object) != has {
            self.queue.add(key_of(object), ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let Some(object) = self.services.get(key).cloned() else { return Ok(Action::AwaitChange) };
        let id = (object.namespace().to_string(), object.name().to_string());
        let has = !ingress_ips(&object).is_empty();
        if wants_load_balancer(&object) && !has {
            ctx.event(&object, "Normal", "EnsuringLoadBalancer", "Ensuring load balancer".into());
            let existing = self.allocated.iter().find(|(_, holder)| **holder == id).map(|(o, _)| *o);
            let Some(offset) = existing.or_else(|| (0..LB_POOL_SIZE).find(|o| !self.allocated.contains_key(o))) else {
                ctx.event(
                    &object,
                    "Warning",
                    "SyncLoadBalancerFailed",
                    "Error syncing load balancer: failed to ensure load balancer: no free address in the load-balancer pool".into(),
                );
                return Ok(Action::AwaitChange);
            };
            self.allocated.insert(offset, id);
            let ingress = LoadBalancerIngress { ip: Some(ip_string(offset)), ip_mode: Some("VIP".into()), ..Default::default() };
            self.write_status(&object, vec![ingress], ctx)?;
            ctx.event(&object, "Normal", "EnsuredLoadBalancer", "Ensured load balancer".into());
        } else if !wants_load_balancer(&object) && has {
            ctx.event(&object, "Normal", "DeletingLoadBalancer", "Deleting load balancer".into());
            self.write_status(&object, Vec::new(), ctx)?;
            self.release(&id);
            ctx.event(&object, "Normal", "DeletedLoadBalancer", "Deleted load balancer".into());
        }
        Ok(Action::AwaitChange)
    }
}
