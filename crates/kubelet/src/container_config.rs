//! generateContainerConfig (pkg/kubelet/kuberuntime/kuberuntime_container.go): what the
//! kubelet hands CreateContainer — the command line (the image's Entrypoint and Cmd overridden
//! by the container's command and args, `$(VAR)`-expanded), the environment (the runtime's
//! defaults, the image's, the pod's), the working directory, mounts, limits, and the files the
//! runtime writes (/etc/hosts, /etc/hostname, /etc/resolv.conf).

use crate::dns;
use crate::expansion::{expand, mapping_for};
use crate::volumes::{prepare_mounts, VolumeContext};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Pod};
use kubesim_api::quantity::parse_milli;
use kubesim_host::cri::ContainerSpec;
use kubesim_images::ImageInfo;
use kubesim_os::fs::Volumes;
use kubesim_os::program::Signal;
use std::collections::BTreeMap;

/// Pod annotation overriding each container's modelled cpu usage (a quantity, e.g. `250m`).
pub const CPU_USAGE_ANNOTATION: &str = "kubesim.dev/cpu-usage";
/// Pod annotation overriding each container's modelled memory usage (e.g. `300Mi`).
pub const MEMORY_USAGE_ANNOTATION: &str = "kubesim.dev/memory-usage";

/// The command line the runtime starts: `command` replaces the image's Entrypoint (and drops
/// its Cmd); `args` replaces the Cmd; both are expanded against the container's environment.
pub fn command_line(container: &Container, image: &ImageInfo, env: &BTreeMap<String, String>) -> Vec<String> {
    let contexts = [env];
    let mapping = mapping_for(&contexts);
    let command: Vec<String> = container.command.clone().unwrap_or_default().iter().map(|c| expand(c, &mapping)).collect();
    let args: Vec<String> = container.args.clone().unwrap_or_default().iter().map(|a| expand(a, &mapping)).collect();
    match (command.is_empty(), container.args.is_some()) {
        (false, _) => command.into_iter().chain(args).collect(),
        (true, true) => image.config.entrypoint.iter().cloned().chain(args).collect(),
        (true, false) => image.config.entrypoint.iter().chain(image.config.cmd.iter()).cloned().collect(),
    }
}

/// Everything generateContainerConfig needs besides the pod and container.
pub struct ConfigContext<'a> {
    /// The store (ConfigMaps, Secrets, Services, claims).
    pub store: &'a kubesim_store::Store,
    /// The image.
    pub image: &'a ImageInfo,
    /// The pod's IP (for /etc/hosts).
    pub pod_ip: &'a str,
    /// The node's name and IP (hostNetwork pods see the node's /etc/hosts).
    pub node: (&'a str, &'a str),
    /// The node's allocatable, in milli-units.
    pub node_allocatable: &'a BTreeMap<String, i128>,
    /// Unix ms now.
    pub now_unix_ms: u64,
    /// What the CSI node plugins published, by target path.
    pub csi_published: &'a BTreeMap<String, kubesim_host::csi::Published>,
}

/// What went wrong building a container's config: the waiting reason and message.
pub enum ConfigError {
    /// CreateContainerConfigError (a missing ConfigMap or Secret key).
    Config(String),
    /// FailedMount (a volume could not be set up; the pod stays ContainerCreating).
    Mount(String),
}

/// generateContainerConfig.
pub fn container_spec(pod: &Pod, container: &Container, volumes: &mut Volumes, cx: &ConfigContext) -> Result<ContainerSpec, ConfigError> {
    let hostname = dns::hostname(pod);
    // The downward API's status.podIP/hostIP come from the sandbox and the node (the kubelet's
    // generateRunContainerOptions gets the sandbox's IPs), not from the API status, which the
    // status manager has not written yet when the first container is created.
    // (Only a container with a fieldRef reads them: the others see the pod as it is.)
    let field_refs = container.env.iter().flatten().any(|e| e.value_from.as_ref().is_some_and(|v| v.field_ref.is_some()));
    let mut with_ips = std::borrow::Cow::Borrowed(pod);
    if field_refs {
        let status = with_ips.to_mut().status.get_or_insert_with(Default::default);
        if !cx.pod_ip.is_empty() {
            status.pod_ip = Some(cx.pod_ip.to_string());
            status.pod_ips = Some(vec![kubesim_api::k8s_openapi::api::core::v1::PodIP { ip: cx.pod_ip.to_string() }]);
        }
        if status.host_ip.is_none() && !cx.node.1.is_empty() {
            status.host_ip = Some(cx.node.1.to_string());
            status.host_ips = Some(vec![kubesim_api::k8s_openapi::api::core::v1::HostIP { ip: cx.node.1.to_string() }]);
        }
    }
    let pod_env = crate::env::container_env(&with_ips, container, cx.store, cx.node_allocatable).map_err(ConfigError::Config)?;
    let mut env = kubesim_os::registry::default_env(&hostname);
    for (name, value) in cx.image.env() {
        env.insert(name.to_string(), value.to_string());
    }
    // containerd's WithTTY: a container with a terminal gets TERM=xterm (the image's and the
    // pod's own TERM win).
    if container.tty == Some(true) && !env.contains_key("TERM") {
        env.insert("TERM".into(), "xterm".into());
    }
    env.extend(pod_env);
    let argv = command_line(container, cx.image, &env);
    let vcx = VolumeContext { store: cx.store, now_unix_ms: cx.now_unix_ms, node_allocatable: cx.node_allocatable, csi_published: cx.csi_published };
    let mounts = prepare_mounts(pod, container, volumes, &vcx).map_err(ConfigError::Mount)?;
    let cwd = container
        .working_dir
        .clone()
        .filter(|w| !w.is_empty())
        .or_else(|| Some(cx.image.config.working_dir.clone()).filter(|w| !w.is_empty()))
        .unwrap_or_else(|| "/".into());
    let spec = pod.spec.as_ref();
    let host_network = spec.and_then(|s| s.host_network).unwrap_or(false);
    let resolv = dns::pod_dns(pod).render();
    let hosts = if host_network { dns::node_hosts_file(cx.node.0, cx.node.1) } else { dns::hosts_file(pod, cx.pod_ip) };
    let limit = |name: &str| container.resources.as_ref().and_then(|r| r.limits.as_ref()).and_then(|l| l.get(name)).and_then(|q| parse_milli(&q.0).ok());
    let annotation = |key: &str| pod.metadata.annotations.as_ref().and_then(|a| a.get(key)).and_then(|v| parse_milli(v).ok());
    let security = container.security_context.as_ref();
    let pod_security = spec.and_then(|s| s.security_context.as_ref());
    let uid = security.and_then(|s| s.run_as_user).or(pod_security.and_then(|s| s.run_as_user)).unwrap_or(0) as u32;
    let gid = security.and_then(|s| s.run_as_group).or(pod_security.and_then(|s| s.run_as_group)).unwrap_or(0) as u32;
    let stop_signal = cx.image.config.stop_signal.as_deref().and_then(|s| Signal::parse(s.trim_start_matches("SIG")));
    Ok(ContainerSpec {
        name: container.name.clone(),
        image: container.image.clone().unwrap_or_default(),
        argv,
        env: env.into(),
        cwd,
        mounts,
        hostname: if host_network { cx.node.0.to_string() } else { hostname.clone() },
        files: vec![
            ("/etc/hosts".to_string(), hosts.into_bytes(), 0o644),
            ("/etc/hostname".to_string(), format!("{}\n", if host_network { cx.node.0 } else { hostname.as_str() }).into_bytes(), 0o644),
            ("/etc/resolv.conf".to_string(), resolv.into_bytes(), 0o644),
            (container.termination_message_path.clone().unwrap_or_else(|| "/dev/termination-log".into()), Vec::new(), 0o666),
        ],
        memory_limit: limit("memory").map(|m| (m / 1000) as u64),
        cpu_limit_milli: limit("cpu").map(|m| m as u64),
        usage_override: (annotation(CPU_USAGE_ANNOTATION).map(|m| m as i64), annotation(MEMORY_USAGE_ANNOTATION).map(|m| (m / 1000) as i64)),
        ports: container.ports.iter().flatten().map(|p| (p.container_port as u16, p.protocol.as_deref() == Some("UDP"))).collect(),
        stop_signal,
        termination_message_path: container.termination_message_path.clone().unwrap_or_else(|| "/dev/termination-log".into()),
        node_cpus: (cx.node_allocatable.get("cpu").copied().unwrap_or(4000) / 1000).max(1) as u32,
        node_memory: (cx.node_allocatable.get("memory").copied().unwrap_or(8 << 30) / 1000) as u64,
        uid,
        gid,
        tty: container.tty == Some(true),
        stdin_open: container.stdin == Some(true),
        pid_target: None,
        // The sandbox's network namespace (CreateContainer fills it in).
        interfaces: Vec::new(),
    })
}

/// The commands of a container's scripts that the image does not have (or that no model
/// implements), for the loud apply-time warning: they exit 127, `not found`, when run.
pub fn missing_commands(container: &Container, image: &ImageInfo) -> Vec<String> {
    let env = BTreeMap::new();
    let argv = command_line(container, image, &env);
    let Some(first) = argv.first() else { return Vec::new() };
    let program = first.rsplit('/').next().unwrap_or(first);
    let available: std::collections::BTreeSet<String> = image.programs.keys().map(|p| p.rsplit('/').next().unwrap_or(p).to_string()).collect();
    let script = argv.iter().position(|a| a == "-c").and_then(|i| argv.get(i + 1));
    let flavor = match image.programs.iter().find(|(path, _)| path.ends_with(&format!("/{program}"))).map(|(_, imp)| imp.as_str()) {
        Some("bash") => kubesim_os::sh::Flavor::Bash,
        Some("dash") => kubesim_os::sh::Flavor::Dash,
        Some("busybox") => kubesim_os::sh::Flavor::Ash,
        _ => match program {
            "bash" => kubesim_os::sh::Flavor::Bash,
            "sh" | "ash" | "dash" => kubesim_os::sh::Flavor::Ash,
            _ => {
                return if first.starts_with('/') || available.contains(program) { Vec::new() } else { vec![program.to_string()] };
            }
        },
    };
    let mut missing = if available.contains(program) || first.starts_with('/') { Vec::new() } else { vec![program.to_string()] };
    if let Some(script) = script {
        missing.extend(kubesim_os::parse_commands(script, flavor, &available));
    }
    missing.sort();
    missing.dedup();
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(entrypoint: &[&str], cmd: &[&str]) -> ImageInfo {
        let mut info = ImageInfo::default();
        info.config.entrypoint = entrypoint.iter().map(|s| s.to_string()).collect();
        info.config.cmd = cmd.iter().map(|s| s.to_string()).collect();
        info
    }

    fn container(command: Option<&[&str]>, args: Option<&[&str]>) -> Container {
        Container {
            name: "c".into(),
            command: command.map(|c| c.iter().map(|s| s.to_string()).collect()),
            args: args.map(|a| a.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        }
    }

    // The table of the "Define a Command and Arguments for a Container" docs page
    // (notes on how Entrypoint/Cmd and command/args combine), as the kubelet implements it.
    #[test]
    fn command_and_args_override_the_images_entrypoint_and_cmd_as_the_docs_table_says() {
        let img = image(&["/ep-1"], &["foo", "bar"]);
        let env = BTreeMap::new();
        assert_eq!(command_line(&container(None, None), &img, &env), ["/ep-1", "foo", "bar"]);
        assert_eq!(command_line(&container(Some(&["/ep-2"]), None), &img, &env), ["/ep-2"]);
        assert_eq!(command_line(&container(None, Some(&["zoo", "boo"])), &img, &env), ["/ep-1", "zoo", "boo"]);
        assert_eq!(command_line(&container(Some(&["/ep-2"]), Some(&["zoo", "boo"])), &img, &env), ["/ep-2", "zoo", "boo"]);
    }

    #[test]
    fn args_expand_variables_and_keep_unknown_and_escaped_references() {
        let img = image(&[], &[]);
        let env: BTreeMap<String, String> = [("MESSAGE".to_string(), "hello world".to_string())].into_iter().collect();
        let c = container(Some(&["/bin/echo"]), Some(&["$(MESSAGE)", "$(NOPE)", "$$(MESSAGE)"]));
        assert_eq!(command_line(&c, &img, &env), ["/bin/echo", "hello world", "$(NOPE)", "$(MESSAGE)"]);
    }
}
