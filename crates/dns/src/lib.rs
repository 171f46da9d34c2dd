//! The cluster DNS: CoreDNS v1.12.1's `kubernetes` plugin as kubeadm (and kind) configure it.
//!
//! ```text
//! kubernetes cluster.local in-addr.arpa ip6.arpa {
//!    pods insecure
//!    fallthrough in-addr.arpa ip6.arpa
//!    ttl 30
//! }
//! forward . /etc/resolv.conf
//! ```
//!
//! A [`Zone`] is the plugin's view of the cluster: what its informers cached (Services,
//! EndpointSlices, Namespaces), already converted the way `plugin/kubernetes/object` converts
//! them. [`Zone::answer`] is `ServeDNS` (`handler.go`): it answers authoritatively for names under
//! the cluster domain and for the reverse zones, or says [`Answer::Forward`] when the next plugin
//! (`forward`) would take the question — a name outside the plugin's zones, or a reverse name the
//! plugin has no record of (`fallthrough in-addr.arpa ip6.arpa`).
//!
//! Pure and deterministic: no I/O, no clock, `BTreeMap` everywhere. Answers come in the order the
//! caches iterate (services by namespace/name, slices by name, endpoints in slice order); the
//! `loadbalance` plugin's shuffling and the `cache` plugin are the integrator's business.

use std::collections::{BTreeMap, BTreeSet};

use kubesim_api::k8s_openapi::api::core::v1::Service;
use kubesim_api::k8s_openapi::api::discovery::v1::EndpointSlice;
pub use kubesim_os::program::{DnsMessage, DnsQuestion, DnsRecord, RType, Rcode};

mod lookup;

/// The plugin's `ttl` as kubeadm configures it (`ttl 30`; the plugin's own default is 5).
pub const TTL: u32 = 30;
/// `DNSSchemaVersion`: the TXT answer for `dns-version.<zone>`.
pub const DNS_SCHEMA_VERSION: &str = "1.1.0";
/// TTL of the `dns-version` TXT record.
pub const DNS_VERSION_TTL: u32 = 28800;
/// The label EndpointSlices name their Service with (`discovery.LabelServiceName`).
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";

/// What the plugin chain does with a question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The kubernetes plugin wrote this response (always `authoritative`).
    Authoritative(DnsMessage),
    /// Not the plugin's to answer: the next plugin (`forward . /etc/resolv.conf`) takes it.
    Forward,
}

/// `object.Service`: the fields of a Service the plugin keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Svc {
    pub name: String,
    pub namespace: String,
    /// `spec.clusterIPs`, or `[spec.clusterIP]` when that list is empty (`"None"` for headless).
    pub cluster_ips: Vec<String>,
    pub external_name_type: bool,
    pub external_name: String,
    /// `spec.ports`; one sentinel port −1 when there are none.
    pub ports: Vec<Port>,
}

impl Svc {
    /// `Headless()`: `ClusterIPs[0] == "None"`.
    pub fn headless(&self) -> bool {
        self.cluster_ips.first().map(String::as_str) == Some("None")
    }
}

/// A Service or EndpointSlice port (`object.EndpointPort`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Port {
    pub name: String,
    pub protocol: String,
    pub port: i32,
}

/// `object.EndpointAddress`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Addr {
    pub ip: String,
    pub hostname: String,
}

/// `object.Endpoints` converted from one EndpointSlice (`EndpointSliceToEndpoints`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Eps {
    pub namespace: String,
    /// The `kubernetes.io/service-name` label (`""` when absent).
    pub service: String,
    /// Ready addresses only (`conditions.ready` unset counts as ready).
    pub addresses: Vec<Addr>,
    /// Slice ports; one sentinel port −1 when there are none.
    pub ports: Vec<Port>,
}

/// The kubernetes plugin's view of the cluster (its informer caches) and its configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zone {
    /// The cluster domain, lower case, fully qualified (`cluster.local.`).
    pub(crate) domain: String,
    pub(crate) ttl: u32,
    pub(crate) serial: u32,
    pub(crate) synced: bool,
    pub(crate) local_ips: Vec<String>,
    pub(crate) namespaces: BTreeSet<String>,
    /// (namespace, name) → service.
    pub(crate) services: BTreeMap<(String, String), Svc>,
    /// Cluster IP → (namespace, name) of the services that have it (`svcIPIndex`).
    pub(crate) svc_by_ip: BTreeMap<String, BTreeSet<(String, String)>>,
    /// (namespace, service label, slice name) → converted slice (`epNameNamespaceIndex`).
    pub(crate) slices: BTreeMap<(String, String, String), Eps>,
    /// (namespace, slice name) → service label, to find a slice by its own name.
    pub(crate) slice_owner: BTreeMap<(String, String), String>,
    /// Ready address → slices holding it (`epIPIndex`).
    pub(crate) ep_by_ip: BTreeMap<String, BTreeSet<(String, String, String)>>,
}

impl Zone {
    /// A plugin for `cluster_domain` (`cluster.local`) with empty caches, `ttl 30`, synced.
    pub fn new(cluster_domain: &str) -> Zone {
        let mut domain = cluster_domain.trim_end_matches('.').to_ascii_lowercase();
        domain.push('.');
        Zone {
            domain,
            ttl: TTL,
            serial: 0,
            synced: true,
            local_ips: Vec::new(),
            namespaces: BTreeSet::new(),
            services: BTreeMap::new(),
            svc_by_ip: BTreeMap::new(),
            slices: BTreeMap::new(),
            slice_owner: BTreeMap::new(),
            ep_by_ip: BTreeMap::new(),
        }
    }

    /// A plugin whose informers hold these objects.
    pub fn build<'a>(
        cluster_domain: &str,
        services: impl IntoIterator<Item = &'a Service>,
        slices: impl IntoIterator<Item = &'a EndpointSlice>,
        namespaces: impl IntoIterator<Item = &'a str>,
    ) -> Zone {
        let mut z = Zone::new(cluster_domain);
        for s in services {
            z.set_service(s);
        }
        for s in slices {
            z.set_endpoint_slice(s);
        }
        for n in namespaces {
            z.add_namespace(n);
        }
        z
    }

    /// The cluster domain, fully qualified (`cluster.local.`).
    pub fn domain(&self) -> &str {
        &self.domain
    }

    /// The plugin's `ttl` option (0–3600; kubeadm: 30).
    pub fn set_ttl(&mut self, ttl: u32) {
        self.ttl = ttl.min(3600);
    }

    /// The SOA serial. Upstream it is the Unix time (seconds) of the last change the informers saw
    /// (`dnsControl.modified`); the integrator passes virtual time. 0 until set.
    pub fn set_serial(&mut self, serial: u32) {
        self.serial = serial;
    }

    /// The SOA serial.
    pub fn serial(&self) -> u32 {
        self.serial
    }

    /// Whether the informers have synced. Unsynced, name errors are SERVFAIL instead of NXDOMAIN.
    pub fn set_synced(&mut self, synced: bool) {
        self.synced = synced;
    }

    /// The serving CoreDNS pod's own addresses (`localIPs`): `NS <zone>` and `ns.dns.<zone>` answer
    /// with the Services whose endpoints hold them (kube-dns), or with these addresses themselves.
    pub fn set_local_ips<S: AsRef<str>>(&mut self, ips: impl IntoIterator<Item = S>) {
        self.local_ips = ips.into_iter().map(|s| s.as_ref().to_string()).collect();
    }

    /// A namespace appeared in the informer.
    pub fn add_namespace(&mut self, name: &str) {
        self.namespaces.insert(name.to_string());
    }

    /// A namespace left the informer.
    pub fn remove_namespace(&mut self, name: &str) {
        self.namespaces.remove(name);
    }

    /// A Service was added or updated (`object.ToService`).
    pub fn set_service(&mut self, s: &Service) {
        let name = s.metadata.name.clone().unwrap_or_default();
        let namespace = s.metadata.namespace.clone().unwrap_or_default();
        self.remove_service(&namespace, &name);
        let spec = s.spec.clone().unwrap_or_default();
        let cluster_ips = match spec.cluster_ips {
            Some(ips) if !ips.is_empty() => ips,
            _ => vec![spec.cluster_ip.unwrap_or_default()],
        };
        let mut ports: Vec<Port> = spec
            .ports
            .unwrap_or_default()
            .into_iter()
            .map(|p| Port { name: p.name.unwrap_or_default(), protocol: p.protocol.unwrap_or_default(), port: p.port })
            .collect();
        if ports.is_empty() {
            ports.push(Port { name: String::new(), protocol: String::new(), port: -1 });
        }
        let svc = Svc {
            name: name.clone(),
            namespace: namespace.clone(),
            cluster_ips,
            external_name_type: spec.type_.as_deref() == Some("ExternalName"),
            external_name: spec.external_name.unwrap_or_default(),
            ports,
        };
        for ip in &svc.cluster_ips {
            self.svc_by_ip.entry(ip.clone()).or_default().insert((namespace.clone(), name.clone()));
        }
        self.services.insert((namespace, name), svc);
    }

    /// A Service was deleted.
    pub fn remove_service(&mut self, namespace: &str, name: &str) {
        let key = (namespace.to_string(), name.to_string());
        if let Some(old) = self.services.remove(&key) {
            for ip in &old.cluster_ips {
                if let Some(set) = self.svc_by_ip.get_mut(ip) {
                    set.remove(&key);
                    if set.is_empty() {
                        self.svc_by_ip.remove(ip);
                    }
                }
            }
        }
    }

    /// An EndpointSlice was added or updated (`object.EndpointSliceToEndpoints`): only ready
    /// endpoints are kept (`conditions.ready` unset counts as ready). The EndpointSlice controller
    /// already folds serving/terminating and `publishNotReadyAddresses` into `ready`.
    pub fn set_endpoint_slice(&mut self, s: &EndpointSlice) {
        let name = s.metadata.name.clone().unwrap_or_default();
        let namespace = s.metadata.namespace.clone().unwrap_or_default();
        self.remove_endpoint_slice(&namespace, &name);
        let service = s.metadata.labels.as_ref().and_then(|l| l.get(LABEL_SERVICE_NAME)).cloned().unwrap_or_default();
        let mut ports: Vec<Port> = s
            .ports
            .iter()
            .flatten()
            .map(|p| Port { name: p.name.clone().unwrap_or_default(), protocol: p.protocol.clone().unwrap_or_default(), port: p.port.unwrap_or(-1) })
            .collect();
        if ports.is_empty() {
            ports.push(Port { name: String::new(), protocol: String::new(), port: -1 });
        }
        let mut addresses = Vec::new();
        for e in &s.endpoints {
            if e.conditions.as_ref().and_then(|c| c.ready) == Some(false) {
                continue;
            }
            for a in &e.addresses {
                addresses.push(Addr { ip: a.clone(), hostname: e.hostname.clone().unwrap_or_default() });
            }
        }
        let key = (namespace.clone(), service.clone(), name.clone());
        for a in &addresses {
            self.ep_by_ip.entry(a.ip.clone()).or_default().insert(key.clone());
        }
        self.slice_owner.insert((namespace.clone(), name), service.clone());
        self.slices.insert(key, Eps { namespace, service, addresses, ports });
    }

    /// An EndpointSlice was deleted.
    pub fn remove_endpoint_slice(&mut self, namespace: &str, name: &str) {
        let Some(service) = self.slice_owner.remove(&(namespace.to_string(), name.to_string())) else {
            return;
        };
        let key = (namespace.to_string(), service, name.to_string());
        if let Some(old) = self.slices.remove(&key) {
            for a in &old.addresses {
                if let Some(set) = self.ep_by_ip.get_mut(&a.ip) {
                    set.remove(&key);
                    if set.is_empty() {
                        self.ep_by_ip.remove(&a.ip);
                    }
                }
            }
        }
    }

    /// Answers one question the way the kubernetes plugin (then `forward`) would.
    pub fn answer(&self, question: &DnsQuestion) -> Answer {
        self.answer_with(question, &mut |_| None)
    }

    /// [`Zone::answer`] with an upstream for CNAME targets outside the cluster domain (an
    /// ExternalName service's `A`/`AAAA`): CoreDNS asks its own server again (`upstream`), which
    /// the `forward` plugin answers; its answers are appended after the CNAME. `None` (no upstream
    /// known) leaves the CNAME alone in the answer.
    pub fn answer_with(&self, question: &DnsQuestion, upstream: &mut dyn FnMut(&DnsQuestion) -> Option<DnsMessage>) -> Answer {
        lookup::serve(self, question, upstream)
    }

    /// The services informer's objects, by namespace then name.
    pub(crate) fn service(&self, namespace: &str, name: &str) -> Option<&Svc> {
        self.services.get(&(namespace.to_string(), name.to_string()))
    }

    /// `EpIndex("<svc>.<ns>")`: the converted slices labelled with this service.
    pub(crate) fn slices_of<'a>(&'a self, namespace: &str, service: &str) -> impl Iterator<Item = &'a Eps> + 'a {
        let lo = (namespace.to_string(), service.to_string(), String::new());
        let (ns, svc) = (namespace.to_string(), service.to_string());
        self.slices.range(lo..).take_while(move |((n, s, _), _)| *n == ns && *s == svc).map(|(_, e)| e)
    }

    /// `EpIndexReverse(ip)`.
    pub(crate) fn slices_with_ip<'a>(&'a self, ip: &str) -> impl Iterator<Item = &'a Eps> + 'a {
        self.ep_by_ip.get(ip).into_iter().flatten().filter_map(|k| self.slices.get(k))
    }

    /// `SvcIndexReverse(ip)`.
    pub(crate) fn services_with_ip<'a>(&'a self, ip: &str) -> impl Iterator<Item = &'a Svc> + 'a {
        self.svc_by_ip.get(ip).into_iter().flatten().filter_map(|k| self.services.get(k))
    }
}
