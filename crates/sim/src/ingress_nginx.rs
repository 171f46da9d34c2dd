//! ingress-nginx's controller process, as the informers of its pods see the cluster: which
//! Ingresses the controller owns, the nginx configuration it renders from them (published in
//! the fabric, where [`kubesim_runtime::ingress`] routes the requests that reach a controller
//! pod on 80/443), the Ingresses' `status.loadBalancer` and the `Sync` events it records. It is
//! the CoreDNS pattern (`crate::coredns`): a program inside a container has no API client here,
//! so the process's API side runs as a simulation component that acts only while a controller
//! pod runs, configured by that pod's command line (`--controller-class`, `--ingress-class`,
//! `--watch-ingress-without-class`, `--publish-status-address`, `--publish-service`,
//! `--report-node-internal-ip-address`, `--update-status`).
//!
//! Upstream (kubernetes/ingress-nginx, internal/ingress/controller): the store keeps the
//! IngressClasses whose `spec.controller` is the controller class and the Ingresses that name
//! one of them, carry the legacy annotation with the `--ingress-class` value, or name no class
//! with `--watch-ingress-without-class` (store.go GetIngressClass), sorted by creation time;
//! `getBackendServers`/`createServers` build the servers, root locations and upstreams (the
//! Service port's ready EndpointSlice endpoints); the status syncer (status.go) writes the
//! addresses at start and every 60 s, and clears them when the last controller stops.
//!
//! The admission Jobs' `kube-webhook-certgen create` writes its Secret through
//! [`WebhookCertgen`], for the same reason.
//!
//! Deliberate simplifications (README "Networking"): the controller replicas share one
//! informer cache and one status writer (upstream: leader election); the nginx configuration
//! takes effect at once (no reload delay).

use kubesim_api::k8s_openapi::api::core::v1::{Pod, Secret};
use kubesim_api::k8s_openapi::api::discovery::v1::EndpointSlice;
use kubesim_api::k8s_openapi::api::networking::v1::{Ingress, IngressBackend, IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus};
use kubesim_api::object::Object;
use kubesim_runtime::component::{Component, Ctx, Interest, WatchEvent, WatchFilter};
use kubesim_runtime::ingress::{Backend, Config, Location, PathType, Server, Upstream, DEFAULT_SERVER};
use kubesim_store::EventType;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// `status.UpdateInterval`: the status syncer's period.
const STATUS_INTERVAL_MS: u64 = 60_000;

const PUBLISH: u64 = 1;
const STATUS: u64 = 2;

type Key = (String, String);

/// The controller's command line (cmd/nginx flags.go defaults).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Flags {
    controller_class: String,
    ingress_class: String,
    ingress_class_by_name: bool,
    watch_without_class: bool,
    publish_status_address: Option<String>,
    publish_service: Option<String>,
    use_node_internal_ip: bool,
    update_status: bool,
    update_status_on_shutdown: bool,
}

impl Flags {
    /// The flags of a controller pod's container, `$(POD_NAMESPACE)`-style references expanded
    /// from its env.
    fn of(pod: &Pod) -> Option<Flags> {
        let container = pod.spec.as_ref()?.containers.iter().find(|c| c.image.as_deref().is_some_and(kubesim_runtime::ingress::is_controller_image))?;
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let mut vars: BTreeMap<String, String> = BTreeMap::new();
        for env in container.env.iter().flatten() {
            let value = match (&env.value, env.value_from.as_ref().and_then(|v| v.field_ref.as_ref()).map(|f| f.field_path.as_str())) {
                (Some(v), _) => v.clone(),
                (None, Some("metadata.namespace")) => namespace.clone(),
                (None, Some("metadata.name")) => name.clone(),
                _ => continue,
            };
            vars.insert(env.name.clone(), value);
        }
        let mut flags = Flags {
            controller_class: "k8s.io/ingress-nginx".into(),
            ingress_class: "nginx".into(),
            ingress_class_by_name: false,
            watch_without_class: false,
            publish_status_address: None,
            publish_service: None,
            use_node_internal_ip: false,
            update_status: true,
            update_status_on_shutdown: true,
        };
        for arg in container.command.iter().flatten().chain(container.args.iter().flatten()) {
            let mut arg = arg.clone();
            for (k, v) in &vars {
                arg = arg.replace(&format!("$({k})"), v);
            }
            let Some(flag) = arg.strip_prefix("--") else { continue };
            let (name, value) = flag.split_once('=').map_or((flag, "true"), |(n, v)| (n, v));
            let on = value == "true";
            match name {
                "controller-class" => flags.controller_class = value.to_string(),
                "ingress-class" => flags.ingress_class = value.to_string(),
                "ingress-class-by-name" => flags.ingress_class_by_name = on,
                "watch-ingress-without-class" => flags.watch_without_class = on,
                "publish-status-address" => flags.publish_status_address = Some(value.to_string()).filter(|v| !v.is_empty()),
                "publish-service" => flags.publish_service = Some(value.to_string()).filter(|v| !v.is_empty()),
                "report-node-internal-ip-address" => flags.use_node_internal_ip = on,
                "update-status" => flags.update_status = on,
                "update-status-on-shutdown" => flags.update_status_on_shutdown = on,
                _ => {}
            }
        }
        Some(flags)
    }
}

fn key(object: &Object) -> Key {
    (object.namespace().to_string(), object.name().to_string())
}

fn is_running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running") && pod.metadata.deletion_timestamp.is_none()
}

fn is_ready(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The ingress-nginx controller's informers and status syncer.
#[derive(Clone, Debug, Default)]
pub struct IngressNginx {
    ingresses: BTreeMap<Key, Arc<Object>>,
    classes: BTreeMap<String, Arc<Object>>,
    services: BTreeMap<Key, Arc<Object>>,
    /// EndpointSlices by (namespace, slice name); those of a backend Service are decoded when
    /// the configuration is rendered.
    slices: BTreeMap<Key, Arc<Object>>,
    /// TLS Secrets by key: whether they carry a certificate (`tls.crt`).
    secrets: BTreeMap<Key, bool>,
    /// The controller pods.
    pods: BTreeMap<Key, Arc<Pod>>,
    /// The ingresses the running controller has seen (it records `Sync` for each new version).
    seen: BTreeMap<Key, String>,
    armed: bool,
    status_armed: bool,
    /// The flags of the controller that ran at the last look (a start syncs status at once; a
    /// stop may clear it).
    running: Option<Flags>,
    /// How many addresses the last status sync wrote (shutdown clears them only if ≤ 1).
    last_addresses: usize,
    published: Option<Arc<Config>>,
}

impl IngressNginx {
    /// The flags of the first running controller pod (by namespace and name).
    fn flags(&self) -> Option<Flags> {
        self.pods.values().filter(|p| is_running(p)).find_map(|p| Flags::of(p))
    }

    /// store.go GetIngressClass: whether the controller owns this Ingress.
    fn owns(&self, flags: &Flags, ingress: &Ingress) -> bool {
        if let Some(class) = ingress.spec.as_ref().and_then(|s| s.ingress_class_name.as_deref()) {
            return self.classes.get(class).is_some_and(|c| {
                let controller = match c.as_ref() {
                    Object::IngressClass(c) => c.spec.as_ref().and_then(|s| s.controller.clone()).unwrap_or_default(),
                    _ => String::new(),
                };
                controller == flags.controller_class || (flags.ingress_class_by_name && class == flags.ingress_class)
            });
        }
        if let Some(annotation) = ingress.metadata.annotations.as_ref().and_then(|a| a.get(kubesim_api::validation::INGRESS_CLASS_ANNOTATION)) {
            return *annotation == flags.ingress_class;
        }
        flags.watch_without_class
    }

    /// The owned Ingresses, oldest first (sortIngressSlice: equal timestamps by key, descending).
    fn owned(&self, flags: &Flags) -> Vec<(Key, Ingress)> {
        let mut list: Vec<(Key, Ingress)> = self
            .ingresses
            .iter()
            .filter_map(|(k, o)| match o.as_ref() {
                Object::Ingress(i) if self.owns(flags, i) => Some((k.clone(), (**i).clone())),
                _ => None,
            })
            .collect();
        kubesim_api::sort::sort_by(&mut list, |a, b| {
            a.1.metadata
                .creation_timestamp
                .cmp(&b.1.metadata.creation_timestamp)
                .then_with(|| format!("{}/{}", b.0 .0, b.0 .1).cmp(&format!("{}/{}", a.0 .0, a.0 .1)))
        });
        list
    }

    /// An upstream for a Service backend: `namespace-service-port`, its ready endpoints for
    /// the Service port the backend names (getEndpointsFromSlices).
    fn upstream(&self, namespace: &str, backend: &IngressBackend) -> Option<Upstream> {
        let service = backend.service.as_ref()?;
        let port = service.port.clone().unwrap_or_default();
        let port_text = port.number.map(|n| n.to_string()).or(port.name.clone()).unwrap_or_default();
        let name = format!("{namespace}-{}-{port_text}", service.name);
        let svc = self.services.get(&(namespace.to_string(), service.name.clone())).and_then(|o| match o.as_ref() {
            Object::Service(s) => Some(s.clone()),
            _ => None,
        });
        let Some(svc) = svc else { return Some(Upstream { name, endpoints: Vec::new() }) };
        let service_port = svc.spec.as_ref().and_then(|s| s.ports.as_ref()).and_then(|ports| {
            ports.iter().find(|p| match (port.number, port.name.as_deref()) {
                (Some(n), _) => p.port == n,
                (None, Some(n)) => p.name.as_deref() == Some(n),
                _ => false,
            })
        });
        let Some(service_port) = service_port else { return Some(Upstream { name, endpoints: Vec::new() }) };
        let port_name = service_port.name.clone().unwrap_or_default();
        let mut endpoints = Vec::new();
        for ((ns, _), object) in &self.slices {
            let owner = object.metadata().labels.as_ref().and_then(|l| l.get("kubernetes.io/service-name"));
            if ns != namespace || owner != Some(&service.name) {
                continue;
            }
            let Some(slice) = object.decode::<EndpointSlice>() else { continue };
            let Some(target) = slice.ports.iter().flatten().find(|p| p.name.clone().unwrap_or_default() == port_name).and_then(|p| p.port) else { continue };
            for endpoint in &slice.endpoints {
                if endpoint.conditions.as_ref().and_then(|c| c.ready) == Some(false) {
                    continue;
                }
                for address in &endpoint.addresses {
                    endpoints.push((address.clone(), target as u16));
                }
            }
        }
        kubesim_api::sort::sort(&mut endpoints);
        endpoints.dedup();
        Some(Upstream { name, endpoints })
    }

    /// getBackendServers: the servers and their locations.
    fn render(&self, flags: &Flags) -> Config {
        let ingresses = self.owned(flags);
        let annotation = |i: &Ingress, name: &str| i.metadata.annotations.as_ref().and_then(|a| a.get(&format!("nginx.ingress.kubernetes.io/{name}"))).cloned();
        let root = |backend: Backend, ingress: String| Location {
            path: "/".into(),
            path_type: PathType::Prefix,
            backend,
            ingress,
            rewrite_target: None,
            ssl_redirect: false,
        };
        let mut servers: BTreeMap<String, Server> = BTreeMap::new();
        let mut defaults: BTreeSet<String> = BTreeSet::new(); // servers whose root is still a default
        servers.insert(
            DEFAULT_SERVER.into(),
            Server { hostname: DEFAULT_SERVER.into(), locations: vec![root(Backend::Default, String::new())], tls_secret: None },
        );
        defaults.insert(DEFAULT_SERVER.into());
        // createServers: the servers, their root locations and certificates.
        for ((ns, name), ingress) in &ingresses {
            let spec = ingress.spec.clone().unwrap_or_default();
            let own_default = spec.default_backend.as_ref().and_then(|b| self.upstream(ns, b)).map(Backend::Upstream);
            let rules = spec.rules.clone().unwrap_or_default();
            if let (Some(backend), true) = (&own_default, rules.is_empty()) {
                if defaults.remove(DEFAULT_SERVER) {
                    if let Some(server) = servers.get_mut(DEFAULT_SERVER) {
                        server.locations[0] = root(backend.clone(), format!("{ns}/{name}"));
                    }
                }
            }
            for rule in &rules {
                let host = rule.host.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| DEFAULT_SERVER.into());
                servers.entry(host.clone()).or_insert_with(|| {
                    defaults.insert(host.clone());
                    Server {
                        hostname: host.clone(),
                        locations: vec![root(own_default.clone().unwrap_or(Backend::Default), format!("{ns}/{name}"))],
                        tls_secret: None,
                    }
                });
            }
        }
        // Certificates: the first Ingress whose TLS section names the host (extractTLSSecretName).
        let mut certified: BTreeSet<String> = BTreeSet::new();
        for ((ns, _), ingress) in &ingresses {
            let spec = ingress.spec.clone().unwrap_or_default();
            for rule in spec.rules.iter().flatten() {
                let host = rule.host.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| DEFAULT_SERVER.into());
                if certified.contains(&host) || spec.tls.as_ref().is_none_or(|t| t.is_empty()) {
                    continue;
                }
                let secret =
                    spec.tls.iter().flatten().find(|t| t.hosts.iter().flatten().any(|h| h.eq_ignore_ascii_case(&host))).and_then(|t| t.secret_name.clone());
                let Some(secret) = secret else { continue };
                certified.insert(host.clone());
                if self.secrets.get(&(ns.clone(), secret.clone())) == Some(&true) {
                    if let Some(server) = servers.get_mut(&host) {
                        server.tls_secret = Some(format!("{ns}/{secret}"));
                    }
                }
            }
        }
        // The rules' paths.
        for ((ns, name), ingress) in &ingresses {
            let spec = ingress.spec.clone().unwrap_or_default();
            let rewrite_target = annotation(ingress, "rewrite-target").filter(|t| !t.contains('$'));
            let ssl_redirect = annotation(ingress, "ssl-redirect").is_none_or(|v| v != "false");
            let force_ssl_redirect = annotation(ingress, "force-ssl-redirect").is_some_and(|v| v == "true");
            for rule in spec.rules.iter().flatten() {
                let host = rule.host.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| DEFAULT_SERVER.into());
                let Some(http) = &rule.http else { continue };
                let Some(server) = servers.get_mut(&host) else { continue };
                let redirect = force_ssl_redirect || (ssl_redirect && server.tls_secret.is_some());
                for path in &http.paths {
                    let Some(upstream) = self.upstream(ns, &path.backend) else { continue };
                    let nginx_path = path.path.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| "/".into());
                    let Some(path_type) = PathType::parse(&path.path_type) else { continue };
                    let location = Location {
                        path: nginx_path.clone(),
                        path_type,
                        backend: Backend::Upstream(upstream),
                        ingress: format!("{ns}/{name}"),
                        rewrite_target: rewrite_target.clone().filter(|t| *t != nginx_path),
                        ssl_redirect: redirect,
                    };
                    match server.locations.iter_mut().position(|l| l.path == nginx_path && l.path_type == path_type) {
                        // The server's default root location gives way to the rule's "/".
                        Some(0) if nginx_path == "/" && defaults.remove(&host) => server.locations[0] = location,
                        Some(_) => {}
                        None => server.locations.push(location),
                    }
                }
            }
        }
        Config { servers }
    }

    /// runningAddresses: where the controller can be reached.
    fn addresses(&self, flags: &Flags, ctx: &Ctx) -> Vec<IngressLoadBalancerIngress> {
        let entry = |text: &str| {
            if text.parse::<std::net::IpAddr>().is_ok() {
                IngressLoadBalancerIngress { ip: Some(text.into()), ..Default::default() }
            } else {
                IngressLoadBalancerIngress { hostname: Some(text.into()), ..Default::default() }
            }
        };
        let mut addresses: Vec<IngressLoadBalancerIngress> = Vec::new();
        if let Some(list) = &flags.publish_status_address {
            addresses = list.split(',').map(|a| entry(a.trim())).collect();
        } else if let Some(service) = &flags.publish_service {
            let (ns, name) = service.split_once('/').unwrap_or(("default", service));
            let Some(Object::Service(svc)) = self.services.get(&(ns.to_string(), name.to_string())).map(|o| o.as_ref()) else { return Vec::new() };
            let spec = svc.spec.clone().unwrap_or_default();
            match spec.type_.as_deref().unwrap_or("ClusterIP") {
                "ExternalName" => addresses.push(IngressLoadBalancerIngress { hostname: spec.external_name.clone(), ..Default::default() }),
                "ClusterIP" => addresses.push(entry(spec.cluster_ip.as_deref().unwrap_or(""))),
                "NodePort" => match &spec.external_ips {
                    None => addresses.push(entry(spec.cluster_ip.as_deref().unwrap_or(""))),
                    Some(ips) => addresses.extend(ips.iter().map(|ip| entry(ip))),
                },
                "LoadBalancer" => {
                    for lb in svc.status.as_ref().and_then(|s| s.load_balancer.as_ref()).and_then(|l| l.ingress.as_ref()).into_iter().flatten() {
                        match lb.ip.as_deref().filter(|ip| !ip.is_empty()) {
                            Some(ip) => addresses.push(IngressLoadBalancerIngress { ip: Some(ip.into()), ..Default::default() }),
                            None => addresses.push(IngressLoadBalancerIngress { hostname: lb.hostname.clone(), ..Default::default() }),
                        }
                    }
                    for ip in spec.external_ips.iter().flatten() {
                        if !addresses.iter().any(|a| a.ip.as_deref() == Some(ip) || a.hostname.as_deref() == Some(ip)) {
                            addresses.push(entry(ip));
                        }
                    }
                }
                _ => {}
            }
        } else {
            for pod in self.pods.values().filter(|p| is_running(p) && is_ready(p)) {
                let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
                let Some(object) = ctx.api.store().get(("", "nodes"), "", &node).cloned() else { continue };
                let Object::Node(n) = object.as_ref() else { continue };
                let of = |kind: &str| {
                    n.status
                        .as_ref()
                        .and_then(|s| s.addresses.as_ref())
                        .and_then(|a| a.iter().find(|a| a.type_ == kind && !a.address.is_empty()).map(|a| a.address.clone()))
                };
                let internal = of("InternalIP").unwrap_or_default();
                let address = if flags.use_node_internal_ip { internal } else { of("ExternalIP").unwrap_or(internal) };
                if !address.is_empty() && !addresses.iter().any(|a| a.ip.as_deref() == Some(&address) || a.hostname.as_deref() == Some(&address)) {
                    addresses.push(entry(&address));
                }
            }
        }
        // updateStatus: by hostname, then IP.
        kubesim_api::sort::sort_by(&mut addresses, |a, b| a.hostname.cmp(&b.hostname).then_with(|| a.ip.cmp(&b.ip)));
        addresses
    }

    /// One status sync: every owned Ingress gets the addresses (written only if different).
    fn sync_status(&mut self, addresses: Vec<IngressLoadBalancerIngress>, flags: &Flags, ctx: &mut Ctx) {
        self.last_addresses = addresses.len();
        for (_, ingress) in self.owned(flags) {
            let current = ingress.status.as_ref().and_then(|s| s.load_balancer.as_ref()).and_then(|l| l.ingress.clone()).unwrap_or_default();
            let mut sorted = current.clone();
            kubesim_api::sort::sort_by(&mut sorted, |a, b| a.hostname.cmp(&b.hostname).then_with(|| a.ip.cmp(&b.ip)));
            let same = sorted.len() == addresses.len() && sorted.iter().zip(&addresses).all(|(a, b)| a.ip == b.ip && a.hostname == b.hostname);
            if same {
                continue;
            }
            let mut updated = ingress.clone();
            let list = if addresses.is_empty() { None } else { Some(addresses.clone()) };
            updated.status = Some(IngressStatus { load_balancer: Some(IngressLoadBalancerStatus { ingress: list }) });
            let _ = ctx.update_status(Object::Ingress(Box::new(updated)));
        }
    }

    fn apply(&mut self, object: &Arc<Object>, deleted: bool) {
        let k = key(object);
        match object.as_ref() {
            Object::Ingress(_) if deleted => {
                self.ingresses.remove(&k);
            }
            Object::Ingress(_) => {
                self.ingresses.insert(k, object.clone());
            }
            Object::IngressClass(_) if deleted => {
                self.classes.remove(&k.1);
            }
            Object::IngressClass(_) => {
                self.classes.insert(k.1, object.clone());
            }
            Object::Service(_) if deleted => {
                self.services.remove(&k);
            }
            Object::Service(_) => {
                self.services.insert(k, object.clone());
            }
            Object::Secret(_) if deleted => {
                self.secrets.remove(&k);
            }
            Object::Secret(s) => {
                let has_cert = s.type_.as_deref() == Some("kubernetes.io/tls") || s.data.as_ref().is_some_and(|d| d.contains_key("tls.crt"));
                self.secrets.insert(k, has_cert);
            }
            Object::Pod(_) if deleted => {
                self.pods.remove(&k);
            }
            Object::Pod(p) if Flags::of(p).is_some() => {
                self.pods.insert(k, Arc::new((**p).clone()));
            }
            _ if object.kind() == "EndpointSlice" && deleted => {
                self.slices.remove(&k);
            }
            _ if object.kind() == "EndpointSlice" => {
                self.slices.insert(k, object.clone());
            }
            _ => {}
        }
    }

    /// Renders and publishes the configuration; records `Sync` for new Ingress versions while a
    /// controller runs; a controller that just started syncs status at once, the last one to
    /// stop clears it.
    fn publish(&mut self, ctx: &mut Ctx) {
        self.armed = false;
        let flags = self.flags();
        let running = flags.is_some();
        if let Some(flags) = &flags {
            let config = Arc::new(self.render(flags));
            if self.published.as_deref() != Some(&config) {
                self.published = Some(config.clone());
                ctx.fabric.ingress = Some(config);
            }
            for (k, ingress) in self.owned(flags) {
                let version = ingress.metadata.resource_version.clone().unwrap_or_default();
                if self.seen.get(&k) != Some(&version) {
                    self.seen.insert(k, version);
                    ctx.event(&Object::Ingress(Box::new(ingress)), "Normal", "Sync", "Scheduled for sync".into());
                }
            }
            if self.running.is_none() && flags.update_status {
                let addresses = self.addresses(flags, ctx);
                self.sync_status(addresses, flags, ctx);
            }
        } else if let Some(stopped) = self.running.clone() {
            self.seen.clear();
            // statusSync.Shutdown: the last controller pod clears the address it alone
            // published (not when another pod is there to take over).
            if stopped.update_status_on_shutdown && self.pods.len() <= 1 && self.last_addresses <= 1 {
                self.sync_status(Vec::new(), &stopped, ctx);
            }
        }
        self.running = flags;
        if running && !self.status_armed {
            self.status_armed = true;
            ctx.after_periodic(STATUS_INTERVAL_MS, STATUS);
        }
    }
}

const RESOURCES: &[(&str, &str)] = &[
    ("networking.k8s.io", "ingresses"),
    ("networking.k8s.io", "ingressclasses"),
    ("", "services"),
    ("discovery.k8s.io", "endpointslices"),
    ("", "secrets"),
    ("", "pods"),
];

impl Component for IngressNginx {
    fn name(&self) -> &str {
        "nginx-ingress-controller"
    }

    fn interests(&self) -> Vec<Interest> {
        RESOURCES.iter().map(|r| Interest { resource: *r, filter: WatchFilter::All }).collect()
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let objects: Vec<Arc<Object>> = RESOURCES.iter().flat_map(|r| ctx.api.store().list(*r, None).cloned().collect::<Vec<_>>()).collect();
        for o in &objects {
            self.apply(o, false);
        }
        self.publish(ctx);
    }

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        // Pods other than the controller's do not concern it.
        if let Object::Pod(p) = event.object.as_ref() {
            if Flags::of(p).is_none() {
                return;
            }
        }
        self.apply(&event.object, event.event_type == EventType::Deleted);
        // Nothing to render (or to stop) without a controller pod.
        if !self.armed && (!self.pods.is_empty() || self.running.is_some()) {
            self.armed = true;
            ctx.after(0, PUBLISH);
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        match token {
            PUBLISH => self.publish(ctx),
            STATUS => {
                self.status_armed = false;
                if let Some(flags) = self.flags() {
                    if flags.update_status {
                        let addresses = self.addresses(&flags, ctx);
                        self.sync_status(addresses, &flags, ctx);
                    }
                    self.status_armed = true;
                    ctx.after_periodic(STATUS_INTERVAL_MS, STATUS);
                }
            }
            _ => {}
        }
    }
}

/// kube-webhook-certgen's API side: a `create` run writes the `--secret-name` Secret (`ca`,
/// `cert`, `key`) in `--namespace` if it is missing, as the Job's container would.
#[derive(Clone, Debug, Default)]
pub struct WebhookCertgen {
    done: BTreeSet<String>,
}

impl WebhookCertgen {
    fn run(&mut self, pod: &Pod, ctx: &mut Ctx) {
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
        if !matches!(phase, "Running" | "Succeeded") || self.done.contains(&uid) {
            return;
        }
        let Some(container) =
            pod.spec.as_ref().and_then(|s| s.containers.iter().find(|c| c.image.as_deref().is_some_and(|i| i.contains("kube-webhook-certgen"))))
        else {
            return;
        };
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let args: Vec<String> = container.args.iter().flatten().map(|a| a.replace("$(POD_NAMESPACE)", &namespace)).collect();
        self.done.insert(uid);
        if args.first().map(String::as_str) != Some("create") {
            return;
        }
        let flag = |name: &str| args.iter().find_map(|a| a.strip_prefix(&format!("--{name}=")).map(str::to_string));
        let (Some(secret), ns) = (flag("secret-name"), flag("namespace").unwrap_or(namespace)) else { return };
        if ctx.api.store().get(("", "secrets"), &ns, &secret).is_some() {
            return;
        }
        let hosts = flag("host").unwrap_or_default();
        let pem = |what: &str| kubesim_api::k8s_openapi::ByteString(format!("-----BEGIN {what}-----\nkubesim:{hosts}\n-----END {what}-----\n").into_bytes());
        let data =
            [("ca", pem("CERTIFICATE")), ("cert", pem("CERTIFICATE")), ("key", pem("EC PRIVATE KEY"))].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let object = Secret {
            metadata: kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta { name: Some(secret), namespace: Some(ns), ..Default::default() },
            data: Some(data),
            ..Default::default()
        };
        let _ = ctx.create(Object::Secret(Box::new(object)));
    }
}

impl Component for WebhookCertgen {
    fn name(&self) -> &str {
        "kube-webhook-certgen"
    }

    fn interests(&self) -> Vec<Interest> {
        vec![Interest { resource: ("", "pods"), filter: WatchFilter::All }]
    }

    fn start(&mut self, _ctx: &mut Ctx) {}

    fn on_watch(&mut self, event: &WatchEvent, ctx: &mut Ctx) {
        if let (Object::Pod(p), false) = (event.object.as_ref(), event.event_type == EventType::Deleted) {
            self.run(p, ctx);
        }
    }

    fn on_timer(&mut self, _token: u64, _ctx: &mut Ctx) {}
}
