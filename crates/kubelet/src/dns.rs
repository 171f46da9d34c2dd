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
    /// Warning event messages (`DNSConfigForming`).
    pub warnings: Vec<String>,
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

fn dedup(list: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// GetPodDNS: the pod's resolv.conf.
pub fn pod_dns(pod: &Pod) -> ResolvConf {
    let spec = pod.spec.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let host_network = spec.host_network.unwrap_or(false);
    let policy = spec.dns_policy.clone().unwrap_or_else(|| "ClusterFirst".into());
    let cluster = match policy.as_str() {
        "None" => None,
        "ClusterFirstWithHostNet" => Some(true),
        "ClusterFirst" => Some(!host_network),
        _ => Some(false),
    };
    let mut conf = match cluster {
        None => ResolvConf::default(),
        Some(true) => ResolvConf {
            nameservers: vec![CLUSTER_DNS.to_string()],
            searches: vec![format!("{namespace}.svc.{CLUSTER_DOMAIN}"), format!("svc.{CLUSTER_DOMAIN}"), CLUSTER_DOMAIN.to_string()],
            options: vec!["ndots:5".to_string()],
            warnings: Vec::new(),
        },
        Some(false) => ResolvConf { nameservers: vec![NODE_NAMESERVER.to_string()], ..Default::default() },
    };
    if let Some(config) = spec.dns_config.as_ref() {
        conf.nameservers.extend(config.nameservers.clone().unwrap_or_default());
        conf.searches.extend(config.searches.clone().unwrap_or_default());
        for option in config.options.iter().flatten() {
            let name = option.name.clone().unwrap_or_default();
            let rendered = match &option.value {
                Some(v) => format!("{name}:{v}"),
                None => name.clone(),
            };
            match conf.options.iter().position(|o| o.split(':').next() == Some(name.as_str())) {
                Some(i) => conf.options[i] = rendered,
                None => conf.options.push(rendered),
            }
        }
    }
    conf.nameservers = dedup(conf.nameservers);
    conf.searches = dedup(conf.searches.into_iter().map(|s| s.trim_end_matches('.').to_string()).filter(|s| !s.is_empty()).collect());
    if conf.nameservers.len() > MAX_NAMESERVERS {
        conf.nameservers.truncate(MAX_NAMESERVERS);
        conf.warnings.push(format!(
            "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: {}",
            conf.nameservers.join(" ")
        ));
    }
    let before = conf.searches.len();
    conf.searches.retain(|s| s.len() <= 253);
    conf.searches.truncate(MAX_SEARCH_PATHS);
    while conf.searches.join(" ").len() > MAX_SEARCH_CHARS {
        conf.searches.pop();
    }
    if conf.searches.len() < before {
        conf.warnings
            .push(format!("Search Line limits were exceeded, some search paths have been omitted, the applied search line is: {}", conf.searches.join(" ")));
    }
    conf
}

/// The pod's hostname: `spec.hostname`, else the pod name (truncated to 63 characters).
pub fn hostname(pod: &Pod) -> String {
    let name = pod.spec.as_ref().and_then(|s| s.hostname.clone()).filter(|h| !h.is_empty()).unwrap_or_else(|| pod.metadata.name.clone().unwrap_or_default());
    name.chars().take(63).collect::<String>().trim_end_matches(['-', '.']).to_string()
}

/// The kubelet-managed `/etc/hosts` of a pod (not for hostNetwork pods, which see the node's).
pub fn hosts_file(pod: &Pod, pod_ip: &str) -> String {
    let spec = pod.spec.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = hostname(pod);
    let mut out = String::from("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n");
    if !pod_ip.is_empty() {
        match spec.subdomain.as_deref().filter(|s| !s.is_empty()) {
            Some(subdomain) => out.push_str(&format!("{pod_ip}\t{name}.{subdomain}.{namespace}.svc.{CLUSTER_DOMAIN}\t{name}\n")),
            None => out.push_str(&format!("{pod_ip}\t{name}\n")),
        }
    }
    let aliases = spec.host_aliases.clone().unwrap_or_default();
    if !aliases.is_empty() {
        out.push_str("\n# Entries added by HostAliases.\n");
        for alias in aliases {
            out.push_str(&format!("{}\t{}\n", alias.ip, alias.hostnames.unwrap_or_default().join("\t")));
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
            vec!["Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.96.0.10 1.1.1.1 2.2.2.2"]
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
