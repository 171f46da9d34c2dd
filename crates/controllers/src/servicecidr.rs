//! The ServiceCIDR controller (pkg/controller/servicecidrs, `service-cidr-controller`): every
//! ServiceCIDR gets the `networking.k8s.io/service-cidr-finalizer` and a `Ready=True` condition
//! ("Kubernetes Service CIDR is ready"); one being deleted keeps its finalizer while an
//! IPAddress of the ClusterIP allocator lies only in it (`Ready=False`, reason `Terminating`,
//! "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new
//! ServiceCIDR"), and loses it once no IPAddress would be orphaned and the deletion is 10 s old
//! (`deletionGracePeriod`: the allocators have seen it).

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::object::Object;
use kubesim_api::time::millis_of;
use kubesim_api::Millis;
use kubesim_apiserver::allocator::parse_ipv4;
use kubesim_apiserver::server::{ServiceCidrConfig, IPALLOCATOR_MANAGER};
use kubesim_apiserver::ApiError;
use kubesim_runtime::Ctx;
use serde_json::{json, Value};

/// `networking.k8s.io/service-cidr-finalizer`.
pub const SERVICE_CIDR_FINALIZER: &str = "networking.k8s.io/service-cidr-finalizer";
/// `deletionGracePeriod`.
pub const DELETION_GRACE_MS: Millis = 10_000;
/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;

const READY_MESSAGE: &str = "Kubernetes Service CIDR is ready";
const ORPHAN_MESSAGE: &str = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR";

/// A ServiceCIDR's IPv4 prefixes.
fn prefixes(object: &Object) -> Vec<ServiceCidrConfig> {
    let json = object.to_json();
    json.pointer("/spec/cidrs").and_then(|c| c.as_array()).into_iter().flatten().filter_map(|c| c.as_str()).filter_map(ServiceCidrConfig::parse).collect()
}

fn mask(prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix as u32)
    }
}

/// `p` contains `q` (a prefix at least as long, inside it).
fn contains_prefix(p: &ServiceCidrConfig, q: &ServiceCidrConfig) -> bool {
    q.prefix >= p.prefix && q.network & mask(p.prefix) == p.network
}

/// `PrefixContainsIP`: inside, and neither the network nor the broadcast address.
fn contains_ip(p: &ServiceCidrConfig, ip: u32) -> bool {
    let broadcast = p.network | !mask(p.prefix);
    ip & mask(p.prefix) == p.network && ip != p.network && ip != broadcast
}

fn overlaps(p: &ServiceCidrConfig, q: &ServiceCidrConfig) -> bool {
    contains_prefix(p, q) || contains_prefix(q, p)
}

/// The controller.
#[derive(Clone, Debug)]
pub struct ServiceCidrController {
    cidrs: Cache,
    addresses: Cache,
    queue: WorkQueue,
}

impl Default for ServiceCidrController {
    fn default() -> Self {
        ServiceCidrController::new()
    }
}

impl ServiceCidrController {
    /// A controller with empty caches.
    pub fn new() -> ServiceCidrController {
        ServiceCidrController { cidrs: Cache::default(), addresses: Cache::default(), queue: WorkQueue::new(LATENCY_MS) }
    }

    /// ServiceCIDRs overlapping any prefix of `object` (`overlappingServiceCIDRs`).
    fn overlapping(&self, object: &Object) -> Vec<Key> {
        let own = prefixes(object);
        self.cidrs.iter().filter(|c| prefixes(c).iter().any(|p| own.iter().any(|q| overlaps(p, q)))).map(|c| key_of(c)).collect()
    }

    /// ServiceCIDRs containing an IPAddress of the allocator (`containingServiceCIDRs`).
    fn containing(&self, address: &Object) -> Vec<Key> {
        let managed =
            address.metadata().labels.as_ref().and_then(|l| l.get("ipaddress.kubernetes.io/managed-by")).map(String::as_str) == Some(IPALLOCATOR_MANAGER);
        let Some(ip) = parse_ipv4(address.name()).filter(|_| managed) else { return Vec::new() };
        self.cidrs.iter().filter(|c| prefixes(c).iter().any(|p| contains_ip(p, ip))).map(|c| key_of(c)).collect()
    }

    /// `canDeleteCIDR`: another ServiceCIDR contains each of its prefixes, or no allocator
    /// IPAddress has it as its only containing ServiceCIDR.
    fn can_delete(&self, cidr: &Object) -> bool {
        let name = cidr.name();
        let own = prefixes(cidr);
        let has_parent = own.iter().all(|q| {
            let containing: Vec<&str> = self.cidrs.iter().filter(|c| prefixes(c).iter().any(|p| contains_prefix(p, q))).map(|c| c.name()).collect();
            !(containing.is_empty() || containing == [name])
        });
        if has_parent {
            return true;
        }
        !self.addresses.iter().any(|address| {
            let holders = self.containing(address);
            holders.len() == 1 && holders[0].1 == name
        })
    }

    /// `updateConditionIfNeeded`: the Ready condition, written when its status, reason or
    /// message changes.
    fn set_ready(&self, ctx: &mut Ctx, cidr: &Object, status: &str, reason: &str, message: &str) -> Result<(), ApiError> {
        let mut json = cidr.to_json();
        let current =
            json.pointer("/status/conditions").and_then(|c| c.as_array()).and_then(|c| c.iter().find(|c| c.get("type") == Some(&json!("Ready")))).cloned();
        let same = |field: &str, want: &str| current.as_ref().and_then(|c| c.get(field)).and_then(Value::as_str).unwrap_or("") == want;
        if current.is_some() && same("status", status) && same("reason", reason) && same("message", message) {
            return Ok(());
        }
        let condition = json!({ "type": "Ready", "status": status, "reason": reason, "message": message, "lastTransitionTime": now_time(ctx) });
        let conditions: Vec<Value> = json
            .pointer("/status/conditions")
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
            .filter(|c| c.get("type") != Some(&json!("Ready")))
            .cloned()
            .chain(std::iter::once(condition))
            .collect();
        json["status"] = json!({ "conditions": conditions });
        let info = cidr.info().expect("served kind");
        let object = Object::from_json(info, json).map_err(|e| ApiError::bad_request(e.to_string()))?;
        ctx.update_status(object)?;
        Ok(())
    }
}

impl Reconciler for ServiceCidrController {
    fn name(&self) -> &'static str {
        "service-cidr-controller"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("networking.k8s.io", "servicecidrs")) => cidrs,
        Informer::all(("networking.k8s.io", "ipaddresses")) => addresses,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        let keys = match event.resource {
            ("networking.k8s.io", "servicecidrs") => {
                let mut keys = self.overlapping(&event.object);
                keys.push(key_of(&event.object));
                keys
            }
            // deleteIPAddress: an address going may unblock a deletion.
            ("networking.k8s.io", "ipaddresses") if event.event_type == kubesim_store::EventType::Deleted => self.containing(&event.object),
            _ => Vec::new(),
        };
        for key in keys {
            self.queue.add(key, ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let Some(cidr) = self.cidrs.get(key).cloned() else { return Ok(Action::AwaitChange) };
        if let Some(deleted_at) = cidr.metadata().deletion_timestamp.as_ref().map(millis_of) {
            if !self.can_delete(&cidr) {
                self.set_ready(ctx, &cidr, "False", "Terminating", ORPHAN_MESSAGE)?;
                return Ok(Action::AwaitChange);
            }
            let until = (deleted_at + DELETION_GRACE_MS).saturating_sub(ctx.now);
            if until > 0 {
                return Ok(Action::RequeueAfter(until));
            }
            if cidr.metadata().finalizers.iter().flatten().any(|f| f == SERVICE_CIDR_FINALIZER) {
                match patch_meta(ctx, &cidr, |meta| {
                    if let Some(f) = meta.finalizers.as_mut() {
                        f.retain(|f| f != SERVICE_CIDR_FINALIZER);
                    }
                }) {
                    Ok(_) => {}
                    Err(e) if is_not_found(&e) => {}
                    Err(e) => return Err(e),
                }
            }
            return Ok(Action::AwaitChange);
        }
        if !cidr.metadata().finalizers.iter().flatten().any(|f| f == SERVICE_CIDR_FINALIZER) {
            let updated = patch_meta(ctx, &cidr, |meta| meta.finalizers.get_or_insert_with(Vec::new).push(SERVICE_CIDR_FINALIZER.into()))?;
            self.cidrs.put(updated);
        }
        let cidr = self.cidrs.get(key).cloned().unwrap_or(cidr);
        self.set_ready(ctx, &cidr, "True", "", READY_MESSAGE)?;
        Ok(Action::AwaitChange)
    }
}
