//! kubesim's load generator (a kubesim add-on, not an upstream component): a Service annotated
//! `kubesim.dev/load: "<requests per second>"` gets a Deployment of busybox clients,
//! `<service>-load` in its namespace and owned by it, that send that many real HTTP requests a
//! second to the Service by name: each request is a DNS lookup through kube-dns and a
//! connection through this node's kube-proxy rules to an endpoint whose program spends the CPU
//! the request costs. Each client makes at most 50 requests a second (it sleeps
//! `$REQUEST_INTERVAL` seconds between requests, which the network view's rate control also
//! sets), so the rate is nominal: slow answers lower it, as they would a real load generator.
//! `kubesim.dev/load-path` (default `/`) names the path requested; removing the annotation
//! removes the clients.

use crate::common::*;
use crate::framework::{Action, Change, Informer, Reconciler};
use kubesim_api::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use kubesim_api::k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec, PodTemplateSpec, Service};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubesim_api::object::{kind_info, Object};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiError, DeleteOptions, Propagation};
use kubesim_runtime::Ctx;
use std::collections::BTreeMap;

/// The Service annotation: requests per second.
pub const LOAD_ANNOTATION: &str = "kubesim.dev/load";
/// The Service annotation: the path requested (default `/`).
pub const LOAD_PATH_ANNOTATION: &str = "kubesim.dev/load-path";
/// The label naming the Service a load Deployment serves.
pub const LOAD_FOR_LABEL: &str = "kubesim.dev/load-for";
/// The most requests a second one client makes.
pub const MAX_RATE_PER_CLIENT: f64 = 50.0;
/// The client image.
pub const CLIENT_IMAGE: &str = "busybox:1.37";
/// Modelled processing latency.
pub const LATENCY_MS: Millis = 10;

/// The load a Service asks for: (clients, seconds between a client's requests), or `None`
/// without a valid positive rate.
pub fn plan(rate: &str) -> Option<(i32, f64)> {
    let rate: f64 = rate.trim().parse().ok().filter(|r: &f64| r.is_finite() && *r > 0.0)?;
    let clients = (rate / MAX_RATE_PER_CLIENT).ceil().clamp(1.0, 1000.0);
    Some((clients as i32, clients / rate))
}

/// The interval as the clients' environment variable writes it (`0.02`, `1.5`).
fn interval_text(seconds: f64) -> String {
    let text = format!("{seconds:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The load generator.
#[derive(Clone, Debug)]
pub struct LoadGenerator {
    services: Cache,
    deployments: Cache,
    queue: WorkQueue,
}

impl Default for LoadGenerator {
    fn default() -> Self {
        LoadGenerator::new()
    }
}

impl LoadGenerator {
    /// A generator with empty caches.
    pub fn new() -> LoadGenerator {
        LoadGenerator { services: Cache::default(), deployments: Cache::default(), queue: WorkQueue::new(LATENCY_MS) }
    }

    /// The Deployment the annotated Service `object` asks for.
    fn desired(service: &Service, object: &Object, clients: i32, interval: f64) -> Deployment {
        let name = service.metadata.name.clone().unwrap_or_default();
        let namespace = service.metadata.namespace.clone().unwrap_or_default();
        let port = service.spec.as_ref().and_then(|s| s.ports.as_ref()).and_then(|p| p.first()).map(|p| p.port).unwrap_or(80);
        let path = service.metadata.annotations.as_ref().and_then(|a| a.get(LOAD_PATH_ANNOTATION)).cloned().unwrap_or_else(|| "/".into());
        let url = format!("http://{name}.{namespace}:{port}{path}");
        let labels = BTreeMap::from([("app.kubernetes.io/name".to_string(), "kubesim-load".to_string()), (LOAD_FOR_LABEL.to_string(), name.clone())]);
        Deployment {
            metadata: ObjectMeta {
                name: Some(format!("{name}-load")),
                namespace: Some(namespace),
                labels: Some(labels.clone()),
                owner_references: Some(vec![controller_ref(object)]),
                ..Default::default()
            },
            spec: Some(DeploymentSpec {
                replicas: Some(clients),
                selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "load".into(),
                            image: Some(CLIENT_IMAGE.into()),
                            command: Some(vec![
                                "sh".into(),
                                "-c".into(),
                                format!("while true; do wget -q -O /dev/null -T 2 {url}; sleep $REQUEST_INTERVAL; done"),
                            ]),
                            env: Some(vec![EnvVar { name: "REQUEST_INTERVAL".into(), value: Some(interval_text(interval)), value_from: None }]),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                ..Default::default()
            }),
            status: None,
        }
    }
}

impl Reconciler for LoadGenerator {
    fn name(&self) -> &'static str {
        "kubesim-load-generator"
    }
    crate::informers! {
        queue: queue;
        Informer::all(("", "services")) => services,
        Informer::all(("apps", "deployments")) => deployments,
    }
    fn changed(&mut self, change: Change, ctx: &mut Ctx) {
        let event = change.event;
        let key = match event.resource {
            ("", "services") => Some(key_of(&event.object)),
            // A load Deployment changed or went: its Service is reconciled again.
            ("apps", "deployments") => {
                event.object.metadata().labels.as_ref().and_then(|l| l.get(LOAD_FOR_LABEL)).map(|svc| (event.object.namespace().to_string(), svc.clone()))
            }
            _ => None,
        };
        if let Some(key) = key {
            self.queue.add(key, ctx);
        }
    }
    fn reconcile(&mut self, key: &Key, ctx: &mut Ctx) -> Result<Action, ApiError> {
        let deployment_key = (key.0.clone(), format!("{}-load", key.1));
        let current =
            self.deployments.get(&deployment_key).cloned().filter(|d| d.metadata().labels.as_ref().and_then(|l| l.get(LOAD_FOR_LABEL)) == Some(&key.1));
        let service = self.services.get(key).cloned();
        let wanted = service.as_ref().and_then(|o| match o.as_ref() {
            Object::Service(s) => {
                s.metadata.annotations.as_ref().and_then(|a| a.get(LOAD_ANNOTATION)).and_then(|r| plan(r)).map(|(c, i)| Self::desired(s, o, c, i))
            }
            _ => None,
        });
        match (wanted, current) {
            (Some(want), None) => {
                let created = ctx.create(Object::Deployment(Box::new(want)))?;
                self.deployments.put(created);
            }
            (Some(want), Some(current)) => {
                let Object::Deployment(have) = current.as_ref() else { return Ok(Action::AwaitChange) };
                let same = have.spec.as_ref().map(|s| (s.replicas, s.template.clone())) == want.spec.as_ref().map(|s| (s.replicas, s.template.clone()));
                if !same {
                    let mut updated = (**have).clone();
                    updated.spec = want.spec;
                    updated.metadata.resource_version = None;
                    let written = ctx.update(Object::Deployment(Box::new(updated)))?;
                    self.deployments.put(written);
                }
            }
            (None, Some(current)) => {
                let info = kind_info("apps/v1", "Deployment").expect("served");
                let options = DeleteOptions { propagation: Some(Propagation::Background), ..Default::default() };
                match ctx.delete(info, current.namespace(), current.name(), options) {
                    Ok(_) => {
                        self.deployments.remove(&deployment_key);
                    }
                    Err(e) if is_not_found(&e) => {}
                    Err(e) => return Err(e),
                }
            }
            (None, None) => {}
        }
        Ok(Action::AwaitChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_split_the_rate_over_clients_of_at_most_fifty_requests_a_second() {
        assert_eq!(plan("500"), Some((10, 0.02)));
        assert_eq!(plan("10"), Some((1, 0.1)));
        assert_eq!(plan("75"), Some((2, 2.0 / 75.0)));
        assert_eq!(plan("0"), None);
        assert_eq!(plan("-3"), None);
        assert_eq!(plan("fast"), None);
        assert_eq!(interval_text(0.02), "0.02");
        assert_eq!(interval_text(1.0), "1");
        assert_eq!(interval_text(2.0 / 75.0), "0.027");
    }
}
