//! The files the kubelet gives every container for name resolution: `/etc/resolv.conf` from
//! the pod's dnsPolicy and dnsConfig (pkg/kubelet/network/dns/dns.go), `/etc/hosts`
//! (kubelet_pods.go managedHostsFileContent, with hostAliases) and `/etc/hostname`.

use kubesim_api::k8s_openapi::api::core::v1::Pod;

/// The kubelet's `--cluster-dns` (the kube-dns Service's address).
pub const CLUSTER_DNS: &str = "10.96.0.10";
/// The kubelet's `--cluster-domain`.
pub const CLUSTER_DOMAIN: &str = "cluster.local";
/// The node's own resolver (kind's node containers use Docker's embedded DNS at the bridge
/// gateway), which dnsPolicy Default passes on.
pub const NODE_NAMESERVER: &str = "172.18.0.1";
/// MaxDNSNameservers.
pub const MAX_NAMESERVERS: usize = 3;
/// MaxDNSSearchPaths.
pub const MAX_SEARCH_PATHS: usize = 32;
/// MaxDNSSearchListChars.
pub const MAX_SEARCH_CHARS: usize = 2048;

/// The resolver configuration of a pod, and the DNSConfigForming warnings its limits caused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolvConf {
    /// `nameserver` lines, in order.
    pub nameservers: Vec<String>,
    /// The `search` line.
    pub searches: Vec<String>,
    /// The `options` line.
    pub options: Vec<String>,
    /// Warning events (reason, message): `DNSConfigForming`, `MissingClusterDNS`.
    pub warnings: Vec<(&'static str, String)>,
}

impl ResolvConf {
    /// The file as the runtime writes it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.searches.is_empty() {
            out.push_str(&format!("search {}\n", self.searches.join(" ")));
        }
        for ns in &self.nameservers {
            out.push_str(&format!("nameserver {ns}\n"));
        }
        if !self.options.is_empty() {
            out.push_str(&format!("options {}\n", self.options.join(" ")));
        }
        out
    }
}

/// `omitDuplicates`.
fn dedup(list: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The kubelet's DNS configurer (`dns.Configurer`): `--cluster-dns`, `--cluster-domain` and
/// what its `--resolv-conf` (the node's own /etc/resolv.conf) holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Configurer {
    /// `--cluster-dns` (kube-dns's address); empty: not configured.
    pub cluster_dns: Vec<String>,
    /// `--cluster-domain`.
    pub cluster_domain: String,
    /// The host resolv.conf's nameservers, searches and options (`parseResolvConf`).
    pub host_nameservers: Vec<String>,
    /// Its `search` line.
    pub host_searches: Vec<String>,
    /// Its `options` line.
    pub host_options: Vec<String>,
}

impl Default for Configurer {
    /// A kind node's kubelet: clusterDNS 10.96.0.10, cluster.local, and the node container's
    /// resolv.conf (Docker's embedded DNS at the bridge gateway, no search line).
    fn default() -> Self {
        Configurer {
            cluster_dns: vec![CLUSTER_DNS.to_string()],
            cluster_domain: CLUSTER_DOMAIN.to_string(),
            host_nameservers: vec![NODE_NAMESERVER.to_string()],
            host_searches: Vec::new(),
            host_options: Vec::new(),
        }
    }
}

/// The warning events forming a pod's DNS configuration raises.
pub mod events {
    /// `MissingClusterDNS`: ClusterFirst without `--cluster-dns` (on the pod; the node gets the
    /// same text without the pod prefix).
    pub const MISSING_CLUSTER_DNS: &str = "MissingClusterDNS";
    /// `DNSConfigForming`: a limit cut the nameserver or search line.
    pub const DNS_CONFIG_FORMING: &str = "DNSConfigForming";
}

impl Configurer {
    /// `GetPodDNS`: the pod's resolv.conf and the warnings (reason, message) forming it raised.
    pub fn pod_dns(&self, pod: &Pod) -> ResolvConf {
        let spec = kubesim_api::pod::spec(pod);
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let host_network = spec.host_network.unwrap_or(false);
        let policy = spec.dns_policy.clone().unwrap_or_else(|| "ClusterFirst".into());
        // getPodDNSType
        let mut cluster = match policy.as_str() {
            "None" => None,
            "ClusterFirstWithHostNet" => Some(true),
            "ClusterFirst" => Some(!host_network),
            _ => Some(false),
        };
        let mut warnings = Vec::new();
        if cluster == Some(true) && self.cluster_dns.is_empty() {
            let pod_name = pod.metadata.name.clone().unwrap_or_default();
            warnings.push((
                events::MISSING_CLUSTER_DNS,
                format!("pod: {pod_name:?}. kubelet does not have ClusterDNS IP configured and cannot create Pod using \"ClusterFirst\" policy. Falling back to \"Default\" policy."),
            ));
            cluster = Some(false);
        }
        let mut conf = match cluster {
            None => ResolvConf::default(),
            Some(true) => {
                let domain = &self.cluster_domain;
                let mut searches = vec![format!("{namespace}.svc.{domain}"), format!("svc.{domain}"), domain.clone()];
                searches.extend(self.host_searches.iter().cloned());
                ResolvConf { nameservers: self.cluster_dns.clone(), searches: dedup(searches), options: vec!["ndots:5".to_string()], warnings: Vec::new() }
            }
            Some(false) => ResolvConf {
                nameservers: self.host_nameservers.clone(),
                searches: self.host_searches.clone(),
                options: self.host_options.clone(),
                warnings: Vec::new(),
            },
        };
        if let Some(config) = spec.dns_config.as_ref() {
            conf.nameservers.extend(config.nameservers.clone().unwrap_or_default());
            conf.searches.extend(config.searches.clone().unwrap_or_default());
            conf.options = merge_dns_options(&conf.options, config.options.as_deref().unwrap_or(&[]));
        }
        conf.nameservers = dedup(conf.nameservers);
        conf.searches = dedup(conf.searches.into_iter().map(|s| s.trim_end_matches('.').to_string()).filter(|s| !s.is_empty()).collect());
        let (nameservers, cut) = form_dns_nameservers_fits_limits(conf.nameservers);
        conf.nameservers = nameservers;
        warnings.extend(cut.map(|m| (events::DNS_CONFIG_FORMING, m)));
        let (searches, cut) = form_dns_search_fits_limits(conf.searches);
        conf.searches = searches;
        warnings.extend(cut.map(|m| (events::DNS_CONFIG_FORMING, m)));
        conf.warnings = warnings;
        conf
    }
}

/// `mergeDNSOptions`: the pod's options override the base ones by name; new names are
/// appended in the pod's order (upstream's order comes from a Go map).
pub fn merge_dns_options(base: &[String], pod_options: &[kubesim_api::k8s_openapi::api::core::v1::PodDNSConfigOption]) -> Vec<String> {
    let mut options = base.to_vec();
    for option in pod_options {
        let name = option.name.clone().unwrap_or_default();
        let rendered = match &option.value {
            Some(v) => format!("{name}:{v}"),
            None => name.clone(),
        };
        match options.iter().position(|o| o.split(':').next() == Some(name.as_str())) {
            Some(i) => options[i] = rendered,
            None => options.push(rendered),
        }
    }
    options
}

/// `formDNSNameserversFitsLimits`: at most three, and the warning when cut.
pub fn form_dns_nameservers_fits_limits(mut nameservers: Vec<String>) -> (Vec<String>, Option<String>) {
    if nameservers.len() <= MAX_NAMESERVERS {
        return (nameservers, None);
    }
    nameservers.truncate(MAX_NAMESERVERS);
    let warning = format!("Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: {}", nameservers.join(" "));
    (nameservers, Some(warning))
}

/// `formDNSSearchFitsLimits`: at most 32 paths, none longer than 253 characters, the line at
/// most 2048 characters (cut from the end), and the warning when anything was cut.
pub fn form_dns_search_fits_limits(mut searches: Vec<String>) -> (Vec<String>, Option<String>) {
    let mut exceeded = false;
    if searches.len() > MAX_SEARCH_PATHS {
        searches.truncate(MAX_SEARCH_PATHS);
        exceeded = true;
    }
    let before = searches.len();
    searches.retain(|s| s.len() <= 253);
    exceeded |= searches.len() < before;
    let line = searches.join(" ").len();
    if line > MAX_SEARCH_CHARS {
        let mut cut_len = 0;
        let mut cut = 0;
        for s in searches.iter().rev() {
            cut_len += s.len() + 1;
            cut += 1;
            if line - cut_len <= MAX_SEARCH_CHARS {
                break;
            }
        }
        searches.truncate(searches.len() - cut);
        exceeded = true;
    }
    let warning =
        exceeded.then(|| format!("Search Line limits were exceeded, some search paths have been omitted, the applied search line is: {}", searches.join(" ")));
    (searches, warning)
}

/// GetPodDNS with the kind node kubelet's configuration.
pub fn pod_dns(pod: &Pod) -> ResolvConf {
    Configurer::default().pod_dns(pod)
}

/// The pod's hostname: `spec.hostname`, else the pod name (truncated to 63 characters).
pub fn hostname(pod: &Pod) -> String {
    let name = pod.spec.as_ref().and_then(|s| s.hostname.clone()).filter(|h| !h.is_empty()).unwrap_or_else(|| pod.metadata.name.clone().unwrap_or_default());
    name.chars().take(63).collect::<String>().trim_end_matches(['-', '.']).to_string()
}

/// The kubelet-managed `/etc/hosts` of a pod (not for hostNetwork pods, which see the node's).
pub fn hosts_file(pod: &Pod, pod_ip: &str) -> String {
    let spec = kubesim_api::pod::spec(pod);
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let name = hostname(pod);
    let mut out = String::from("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n");
    if !pod_ip.is_empty() {
        match spec.subdomain.as_deref().filter(|s| !s.is_empty()) {
            Some(subdomain) => out.push_str(&format!("{pod_ip}\t{name}.{subdomain}.{namespace}.svc.{CLUSTER_DOMAIN}\t{name}\n")),
            None => out.push_str(&format!("{pod_ip}\t{name}\n")),
        }
    }
    let aliases = spec.host_aliases.as_deref().unwrap_or_default();
    if !aliases.is_empty() {
        out.push_str("\n# Entries added by HostAliases.\n");
        for alias in aliases {
            out.push_str(&format!("{}\t{}\n", alias.ip, alias.hostnames.as_deref().unwrap_or_default().join("\t")));
        }
    }
    out
}

/// The node's own `/etc/hosts` (what hostNetwork pods see).
pub fn node_hosts_file(node: &str, node_ip: &str) -> String {
    format!("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nff00::0\tip6-mcastprefix\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n{node_ip}\t{node}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_api::k8s_openapi::api::core::v1::{PodDNSConfig, PodDNSConfigOption, PodSpec};
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(policy: Option<&str>, host_network: bool, config: Option<PodDNSConfig>) -> Pod {
        Pod {
            metadata: ObjectMeta { name: Some("web-0".into()), namespace: Some("default".into()), ..Default::default() },
            spec: Some(PodSpec { dns_policy: policy.map(str::to_string), host_network: Some(host_network), dns_config: config, ..Default::default() }),
            ..Default::default()
        }
    }

    // Mirrors pkg/kubelet/network/dns/dns_test.go TestGetPodDNSType and TestGetPodDNS (the
    // policy → type table, the cluster search path and ndots:5, and dnsConfig merging).
    #[test]
    fn resolv_conf_follows_the_pods_dns_policy() {
        let cluster = "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n";
        assert_eq!(pod_dns(&pod(None, false, None)).render(), cluster);
        assert_eq!(pod_dns(&pod(Some("ClusterFirst"), false, None)).render(), cluster);
        assert_eq!(
            pod_dns(&pod(Some("ClusterFirst"), true, None)).render(),
            "nameserver 172.18.0.1\n",
            "ClusterFirst with hostNetwork falls back to the node's"
        );
        assert_eq!(pod_dns(&pod(Some("ClusterFirstWithHostNet"), true, None)).render(), cluster);
        assert_eq!(pod_dns(&pod(Some("Default"), false, None)).render(), "nameserver 172.18.0.1\n");
        let custom = PodDNSConfig {
            nameservers: Some(vec!["192.0.2.1".into()]),
            searches: Some(vec!["ns1.svc.cluster-domain.example".into(), "my.dns.search.suffix".into()]),
            options: Some(vec![
                PodDNSConfigOption { name: Some("ndots".into()), value: Some("2".into()) },
                PodDNSConfigOption { name: Some("edns0".into()), value: None },
            ]),
        };
        // The docs' dns-config example (pods/dns/custom-dns.yaml) with dnsPolicy None.
        assert_eq!(
            pod_dns(&pod(Some("None"), false, Some(custom))).render(),
            "search ns1.svc.cluster-domain.example my.dns.search.suffix\nnameserver 192.0.2.1\noptions ndots:2 edns0\n"
        );
    }

    #[test]
    fn too_many_nameservers_are_cut_with_the_dns_config_forming_warning() {
        let config = PodDNSConfig { nameservers: Some(vec!["1.1.1.1".into(), "2.2.2.2".into(), "3.3.3.3".into()]), ..Default::default() };
        let conf = pod_dns(&pod(Some("ClusterFirst"), false, Some(config)));
        assert_eq!(conf.nameservers, vec!["10.96.0.10", "1.1.1.1", "2.2.2.2"]);
        assert_eq!(
            conf.warnings,
            vec![(
                "DNSConfigForming",
                "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.96.0.10 1.1.1.1 2.2.2.2".to_string()
            )]
        );
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn form_dns_search_fits_limits_as_upstream() {
        // dns_test.go TestFormDNSSearchFitsLimits (with v1.34's 32-path / 2048-character limits).
        let ok = strings(&["testNS.svc.TEST", "svc.TEST", "TEST"]);
        assert_eq!(form_dns_search_fits_limits(ok.clone()), (ok, None));
        let five = strings(&["testNS.svc.TEST", "svc.TEST", "TEST", "AAA", "BBB"]);
        assert_eq!(form_dns_search_fits_limits(five.clone()), (five, None));
        let long = "B".repeat(256);
        let (search, warning) = form_dns_search_fits_limits(strings(&["testNS.svc.TEST", "svc.TEST", "TEST", "AAA", &long, "BBB"]));
        assert_eq!(search, strings(&["testNS.svc.TEST", "svc.TEST", "TEST", "AAA", "BBB"]));
        assert_eq!(
            warning.as_deref(),
            Some("Search Line limits were exceeded, some search paths have been omitted, the applied search line is: testNS.svc.TEST svc.TEST TEST AAA BBB")
        );
        // 33 paths: the first 32.
        let many: Vec<String> = (0..33).map(|i| format!("d{i}.example")).collect();
        let (search, warning) = form_dns_search_fits_limits(many.clone());
        assert_eq!(search, many[..32].to_vec());
        assert!(warning.is_some());
        // Over 2048 characters: trailing paths cut until the line fits.
        let wide: Vec<String> = (0..10).map(|i| format!("{i}{}", "x".repeat(249))).collect();
        let (search, warning) = form_dns_search_fits_limits(wide);
        assert_eq!(search.len(), 8, "8 x 250 + 7 spaces = 2007 characters");
        assert!(warning.is_some());
    }

    #[test]
    fn form_dns_nameservers_fits_limits_as_upstream() {
        // dns_test.go TestFormDNSNameserversFitsLimits
        for (desc, given, want, event) in [
            ("valid: 1 nameserver", vec!["127.0.0.1"], vec!["127.0.0.1"], false),
            ("valid: 3 nameservers", vec!["127.0.0.1", "10.0.0.10", "8.8.8.8"], vec!["127.0.0.1", "10.0.0.10", "8.8.8.8"], false),
            ("invalid: 4 nameservers, trimmed to 3", vec!["127.0.0.1", "10.0.0.10", "8.8.8.8", "1.2.3.4"], vec!["127.0.0.1", "10.0.0.10", "8.8.8.8"], true),
        ] {
            let (applied, warning) = form_dns_nameservers_fits_limits(strings(&given));
            assert_eq!((applied, warning.is_some()), (strings(&want), event), "{desc}");
        }
    }

    #[test]
    fn merge_dns_options_as_upstream() {
        // dns_test.go TestMergeDNSOptions (compared as sets upstream; kubesim keeps base order).
        let three = Some("3".to_string());
        let opt = |name: &str, value: Option<String>| PodDNSConfigOption { name: Some(name.into()), value };
        let base = strings(&["ndots:5", "debug"]);
        assert_eq!(merge_dns_options(&base, &[]), base, "Empty dnsConfigOptions");
        assert_eq!(
            merge_dns_options(&base, &[opt("single-request", None), opt("attempts", three.clone())]),
            strings(&["ndots:5", "debug", "single-request", "attempts:3"]),
            "No duplicated entries"
        );
        assert_eq!(
            merge_dns_options(&base, &[opt("ndots", three.clone()), opt("debug", None), opt("single-request", None), opt("attempts", three)]),
            strings(&["ndots:3", "debug", "single-request", "attempts:3"]),
            "Overwrite duplicated entries"
        );
    }

    #[test]
    fn get_pod_dns_custom_as_upstream() {
        // dns_test.go TestGetPodDNSCustom: a kubelet with clusterDNS 10.0.0.10, domain
        // kubernetes.io and a host resolv.conf of `nameserver 8.8.8.8` / `search host.domain`.
        let configurer = Configurer {
            cluster_dns: strings(&["10.0.0.10"]),
            cluster_domain: "kubernetes.io".into(),
            host_nameservers: strings(&["8.8.8.8"]),
            host_searches: strings(&["host.domain"]),
            host_options: Vec::new(),
        };
        let three = Some("3".to_string());
        let config = |nameservers: &[&str], searches: &[&str]| PodDNSConfig {
            nameservers: Some(strings(nameservers)),
            searches: Some(strings(searches)),
            options: Some(vec![
                PodDNSConfigOption { name: Some("ndots".into()), value: three.clone() },
                PodDNSConfigOption { name: Some("debug".into()), value: None },
            ]),
        };
        let mut p = pod(Some("None"), false, None);
        p.metadata.namespace = Some("testNS".into());
        let run = |p: &Pod| {
            let c = configurer.pod_dns(p);
            (c.nameservers, c.searches, c.options)
        };
        assert_eq!(run(&p), (vec![], vec![], vec![]), "DNSNone without DNSConfig should have empty DNS settings");
        p.spec.as_mut().unwrap().dns_config = Some(config(&["203.0.113.1"], &["my.domain", "second.domain"]));
        assert_eq!(run(&p), (strings(&["203.0.113.1"]), strings(&["my.domain", "second.domain"]), strings(&["ndots:3", "debug"])), "DNSNone with DNSConfig");
        let cluster_searches = strings(&["testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io", "host.domain", "my.domain"]);
        p.spec.as_mut().unwrap().dns_config = Some(config(&["10.0.0.11"], &["my.domain"]));
        p.spec.as_mut().unwrap().dns_policy = Some("ClusterFirst".into());
        assert_eq!(run(&p), (strings(&["10.0.0.10", "10.0.0.11"]), cluster_searches.clone(), strings(&["ndots:3", "debug"])), "DNSClusterFirst with DNSConfig");
        p.spec.as_mut().unwrap().dns_policy = Some("ClusterFirstWithHostNet".into());
        p.spec.as_mut().unwrap().host_network = Some(true);
        assert_eq!(
            run(&p),
            (strings(&["10.0.0.10", "10.0.0.11"]), cluster_searches, strings(&["ndots:3", "debug"])),
            "DNSClusterFirstWithHostNet with DNSConfig"
        );
        p.spec.as_mut().unwrap().dns_policy = Some("Default".into());
        p.spec.as_mut().unwrap().host_network = Some(false);
        assert_eq!(
            run(&p),
            (strings(&["8.8.8.8", "10.0.0.11"]), strings(&["host.domain", "my.domain"]), strings(&["ndots:3", "debug"])),
            "DNSDefault with DNSConfig"
        );
    }

    #[test]
    fn missing_cluster_dns_falls_back_to_the_default_policy() {
        // getPodDNSType with no clusterDNS: ClusterFirst falls back to the host's resolv.conf.
        let configurer = Configurer { cluster_dns: Vec::new(), ..Configurer::default() };
        let conf = configurer.pod_dns(&pod(Some("ClusterFirst"), false, None));
        assert_eq!(conf.nameservers, vec![NODE_NAMESERVER.to_string()]);
        assert_eq!(
            conf.warnings,
            vec![("MissingClusterDNS", "pod: \"web-0\". kubelet does not have ClusterDNS IP configured and cannot create Pod using \"ClusterFirst\" policy. Falling back to \"Default\" policy.".to_string())]
        );
    }

    #[test]
    fn the_managed_hosts_file_names_the_pod_and_its_subdomain() {
        let mut p = pod(None, false, None);
        assert!(hosts_file(&p, "10.244.1.5").ends_with("10.244.1.5\tweb-0\n"));
        p.spec.as_mut().unwrap().subdomain = Some("nginx".into());
        assert!(hosts_file(&p, "10.244.1.5").ends_with("10.244.1.5\tweb-0.nginx.default.svc.cluster.local\tweb-0\n"));
    }
}
