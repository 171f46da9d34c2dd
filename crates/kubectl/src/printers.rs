//! Table printing, after pkg/printers/internalversion/printers.go (columns and cells) and
//! k8s.io/cli-runtime/pkg/printers/tablewriter (tabwriter: minwidth 6, padding 3).

use crate::util::{age, format_label_selector, format_labels, jget, jint, jstr, label_selector_json};
use kubesim_api::k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kubesim_api::k8s_openapi::api::core::v1::{Container, Event, Node, Pod, Service};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kubesim_api::object::{KindInfo, Object};
use kubesim_api::time::{human_duration, millis_of};
use kubesim_api::Millis;
use serde_json::Value;

/// A table: upper-case headers and string cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// Column headers (already upper-case).
    pub headers: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// Renders rows as Go's tabwriter does for kubectl (minwidth 6, padding 3, last column unpadded).
pub fn render(rows: &[Vec<String>]) -> String {
    let text: String = rows.iter().map(|r| format!("{}\n", r.join("\t"))).collect();
    tabwriter(&text, 6, 3)
}

/// Go's text/tabwriter with a space pad character and no flags: every tab-terminated cell is a
/// column cell; a column block is a run of consecutive lines that all have a cell in that
/// column, and its width is the widest cell plus `padding` (at least `minwidth`). The text after
/// a line's last tab is not part of any column.
pub fn tabwriter(text: &str, minwidth: usize, padding: usize) -> String {
    let lines: Vec<Vec<&str>> = text.split_inclusive('\n').map(|l| l.strip_suffix('\n').unwrap_or(l).split('\t').collect()).collect();
    let ends_with_newline = text.ends_with('\n');
    let mut widths: Vec<Vec<usize>> = vec![Vec::new(); lines.len()];
    format_block(&lines, 0, lines.len(), 0, minwidth, padding, &mut widths);
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    for (i, line) in lines.iter().enumerate() {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if j + 1 < line.len() {
                let w = widths[i].get(j).copied().unwrap_or(0);
                for _ in cell.chars().count()..w {
                    out.push(' ');
                }
            }
        }
        if i + 1 < lines.len() || ends_with_newline {
            out.push('\n');
        }
    }
    out
}

fn format_block(lines: &[Vec<&str>], start: usize, end: usize, column: usize, minwidth: usize, padding: usize, widths: &mut [Vec<usize>]) {
    let mut this = start;
    while this < end {
        if column + 1 >= lines[this].len() {
            this += 1;
            continue;
        }
        let block_start = this;
        let mut width = minwidth;
        while this < end && column + 1 < lines[this].len() {
            width = width.max(lines[this][column].chars().count() + padding);
            this += 1;
        }
        for w in widths[block_start..this].iter_mut() {
            if w.len() <= column {
                w.resize(column + 1, 0);
            }
            w[column] = width;
        }
        format_block(lines, block_start, this, column + 1, minwidth, padding, widths);
    }
}

impl Table {
    /// Headers plus rows, rendered.
    pub fn render(&self, no_headers: bool) -> String {
        let mut rows = Vec::with_capacity(self.rows.len() + 1);
        if !no_headers {
            rows.push(self.headers.clone());
        }
        rows.extend(self.rows.iter().cloned());
        render(&rows)
    }
}

/// The column headers for a kind (wide adds the priority-1 columns).
pub fn headers(info: &KindInfo, wide: bool) -> Vec<&'static str> {
    let (base, extra): (&[&str], &[&str]) = match info.kind {
        "Pod" => (&["NAME", "READY", "STATUS", "RESTARTS", "AGE"], &["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]),
        "Node" => (&["NAME", "STATUS", "ROLES", "AGE", "VERSION"], &["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]),
        "Deployment" => (&["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        "ReplicaSet" | "ReplicationController" => (&["NAME", "DESIRED", "CURRENT", "READY", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        "StatefulSet" => (&["NAME", "READY", "AGE"], &["CONTAINERS", "IMAGES"]),
        "DaemonSet" => (&["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        "Job" => (&["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        "CronJob" => (&["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        "Service" => (&["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], &["SELECTOR"]),
        "Namespace" => (&["NAME", "STATUS", "AGE"], &[]),
        "Event" if info.group().is_empty() => (&["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"], &[]),
        "ConfigMap" => (&["NAME", "DATA", "AGE"], &[]),
        "Secret" => (&["NAME", "TYPE", "DATA", "AGE"], &[]),
        "ServiceAccount" => (&["NAME", "SECRETS", "AGE"], &[]),
        "Endpoints" => (&["NAME", "ENDPOINTS", "AGE"], &[]),
        "PersistentVolumeClaim" => (&["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"], &["VOLUMEMODE"]),
        "PersistentVolume" => (
            &["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"],
            &["VOLUMEMODE"],
        ),
        "PodDisruptionBudget" => (&["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"], &[]),
        "HorizontalPodAutoscaler" => (&["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"], &[]),
        "Ingress" => (&["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"], &[]),
        "Lease" => (&["NAME", "HOLDER", "AGE"], &[]),
        "PriorityClass" => (&["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"], &[]),
        "StorageClass" => (&["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"], &[]),
        "NetworkPolicy" => (&["NAME", "POD-SELECTOR", "AGE"], &[]),
        "ResourceQuota" => (&["NAME", "REQUEST", "LIMIT", "AGE"], &[]),
        "LimitRange" => (&["NAME", "CREATED AT"], &[]),
        "ClusterRoleBinding" | "RoleBinding" => (&["NAME", "ROLE", "AGE"], &["USERS", "GROUPS", "SERVICEACCOUNTS"]),
        "ClusterRole" | "Role" => (&["NAME", "CREATED AT"], &[]),
        "ControllerRevision" => (&["NAME", "CONTROLLER", "REVISION", "AGE"], &[]),
        "EndpointSlice" => (&["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"], &[]),
        "IngressClass" => (&["NAME", "CONTROLLER", "PARAMETERS", "AGE"], &[]),
        "ServiceCIDR" => (&["NAME", "CIDRS", "AGE"], &[]),
        // printIPAddress's columns are Name and ParentRef (its age cell has no column).
        "IPAddress" => (&["NAME", "PARENTREF"], &[]),
        "RuntimeClass" => (&["NAME", "HANDLER", "AGE"], &[]),
        "CustomResourceDefinition" => (&["NAME", "CREATED AT"], &[]),
        "PodTemplate" => (&["NAME", "CONTAINERS", "IMAGES", "POD LABELS"], &[]),
        "ComponentStatus" => (&["NAME", "STATUS", "MESSAGE", "ERROR"], &[]),
        "CertificateSigningRequest" => (&["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"], &[]),
        "VolumeAttributesClass" => (&["NAME", "DRIVERNAME", "AGE"], &[]),
        "VolumeAttachment" => (&["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"], &[]),
        "CSINode" => (&["NAME", "DRIVERS", "AGE"], &[]),
        "CSIDriver" => (&["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES", "AGE"], &[]),
        "CSIStorageCapacity" => (&["NAME", "STORAGECLASSNAME", "CAPACITY"], &[]),
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => (&["NAME", "WEBHOOKS", "AGE"], &[]),
        "ValidatingAdmissionPolicy" => (&["NAME", "VALIDATIONS", "PARAMKIND", "AGE"], &[]),
        "ValidatingAdmissionPolicyBinding" => (&["NAME", "POLICYNAME", "PARAMREF", "AGE"], &[]),
        "FlowSchema" => (&["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"], &[]),
        "PriorityLevelConfiguration" => (&["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"], &[]),
        "ResourceClaim" => (&["NAME", "STATE", "AGE"], &[]),
        "APIService" => (&["NAME", "SERVICE", "AVAILABLE", "AGE"], &[]),
        _ => (&["NAME", "AGE"], &[]),
    };
    let mut h: Vec<&'static str> = base.to_vec();
    if wide {
        h.extend_from_slice(extra);
    }
    h
}

fn ts(t: &Option<Time>, now: Millis) -> String {
    age(t.as_ref(), now)
}

/// `layoutContainerCells`: comma-joined container names and images.
fn container_cells(containers: &[Container]) -> (String, String) {
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = containers.iter().map(|c| c.image.as_deref().unwrap_or("")).collect();
    (names.join(","), images.join(","))
}

fn container_cells_json(spec: Option<&Value>) -> (String, String) {
    let containers: Vec<Container> = spec.and_then(|s| s.get("containers")).and_then(|c| serde_json::from_value(c.clone()).ok()).unwrap_or_default();
    container_cells(&containers)
}

/// One table row for an object (see [`headers`] for the columns).
pub fn row(object: &Object, now: Millis, wide: bool) -> Vec<String> {
    match object {
        Object::Pod(p) => pod_row(p, now, wide),
        Object::Node(n) => node_row(n, now, wide),
        Object::Deployment(d) => deployment_row(d, now, wide),
        Object::ReplicaSet(rs) => replica_set_row(rs, now, wide),
        Object::Service(s) => service_row(s, now, wide),
        Object::Namespace(ns) => vec![
            ns.metadata.name.clone().unwrap_or_default(),
            ns.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default(),
            ts(&ns.metadata.creation_timestamp, now),
        ],
        Object::Event(e) => event_row(e, now, wide),
        Object::ConfigMap(cm) => vec![
            cm.metadata.name.clone().unwrap_or_default(),
            (cm.data.as_ref().map_or(0, |d| d.len()) + cm.binary_data.as_ref().map_or(0, |d| d.len())).to_string(),
            ts(&cm.metadata.creation_timestamp, now),
        ],
        Object::Secret(s) => vec![
            s.metadata.name.clone().unwrap_or_default(),
            s.type_.clone().unwrap_or_default(),
            (s.data.as_ref().map_or(0, |d| d.len())).to_string(),
            ts(&s.metadata.creation_timestamp, now),
        ],
        Object::ServiceAccount(sa) => {
            vec![sa.metadata.name.clone().unwrap_or_default(), sa.secrets.as_ref().map_or(0, |s| s.len()).to_string(), ts(&sa.metadata.creation_timestamp, now)]
        }
        Object::Lease(l) => vec![
            l.metadata.name.clone().unwrap_or_default(),
            l.spec.as_ref().and_then(|s| s.holder_identity.clone()).unwrap_or_default(),
            ts(&l.metadata.creation_timestamp, now),
        ],
        Object::Ingress(_) | Object::IngressClass(_) | Object::Dynamic(_) => {
            let json = object.to_json();
            dynamic_row(object.kind(), &json, &object.metadata().creation_timestamp, now, wide)
        }
        // The typed storage kinds share the JSON printers.
        Object::CSIDriver(_) | Object::CSINode(_) | Object::VolumeAttachment(_) => {
            dynamic_row(object.kind(), &object.to_json(), &object.metadata().creation_timestamp, now, wide)
        }
    }
}

/// printPod: the READY, STATUS and RESTARTS cells derived as upstream ([`kubesim_api::pod::print_pod`]).
pub fn pod_row(pod: &Pod, now: Millis, wide: bool) -> Vec<String> {
    let spec = pod.spec.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let kubesim_api::pod::PodPrint { ready, total, status: reason, restarts, last_restart_ms: last_restart } = kubesim_api::pod::print_pod(pod);
    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", human_duration(now.saturating_sub(t))),
        _ => restarts.to_string(),
    };
    let mut row =
        vec![pod.metadata.name.clone().unwrap_or_default(), format!("{ready}/{total}"), reason, restarts_cell, ts(&pod.metadata.creation_timestamp, now)];
    if wide {
        let ip = status.pod_ips.as_ref().and_then(|ips| ips.first()).map(|ip| ip.ip.clone()).filter(|s| !s.is_empty());
        let gates = spec.readiness_gates.clone().unwrap_or_default();
        let gates_cell = if gates.is_empty() {
            "<none>".to_string()
        } else {
            let true_count =
                gates.iter().filter(|g| status.conditions.iter().flatten().find(|c| c.type_ == g.condition_type).is_some_and(|c| c.status == "True")).count();
            format!("{true_count}/{}", gates.len())
        };
        row.push(ip.unwrap_or_else(|| "<none>".into()));
        row.push(spec.node_name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| "<none>".into()));
        row.push(status.nominated_node_name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| "<none>".into()));
        row.push(gates_cell);
    }
    row
}

/// printNode's STATUS cell.
pub fn node_status(node: &Node) -> String {
    let mut status: Vec<String> = Vec::new();
    if let Some(c) = node.status.as_ref().and_then(|s| s.conditions.as_ref()).and_then(|c| c.iter().find(|c| c.type_ == "Ready")) {
        status.push(if c.status == "True" { "Ready".into() } else { "NotReady".into() });
    }
    if status.is_empty() {
        status.push("Unknown".into());
    }
    if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        status.push("SchedulingDisabled".into());
    }
    status.join(",")
}

/// findNodeRoles.
pub fn node_roles(node: &Node) -> String {
    let mut roles = std::collections::BTreeSet::new();
    for (k, v) in node.metadata.labels.iter().flatten() {
        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.insert(role.to_string());
            }
        } else if k == "kubernetes.io/role" && !v.is_empty() {
            roles.insert(v.clone());
        }
    }
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    }
}

fn node_row(node: &Node, now: Millis, wide: bool) -> Vec<String> {
    let info = node.status.as_ref().and_then(|s| s.node_info.clone()).unwrap_or_default();
    let mut row = vec![
        node.metadata.name.clone().unwrap_or_default(),
        node_status(node),
        node_roles(node),
        ts(&node.metadata.creation_timestamp, now),
        info.kubelet_version.clone(),
    ];
    if wide {
        let address = |t: &str| {
            node.status
                .as_ref()
                .and_then(|s| s.addresses.as_ref())
                .and_then(|a| a.iter().find(|a| a.type_ == t))
                .map(|a| a.address.clone())
                .unwrap_or_else(|| "<none>".into())
        };
        let or_unknown = |s: &str| if s.is_empty() { "<unknown>".to_string() } else { s.to_string() };
        row.push(address("InternalIP"));
        row.push(address("ExternalIP"));
        row.push(or_unknown(&info.os_image));
        row.push(or_unknown(&info.kernel_version));
        row.push(or_unknown(&info.container_runtime_version));
    }
    row
}

fn deployment_row(d: &Deployment, now: Millis, wide: bool) -> Vec<String> {
    let spec = d.spec.clone().unwrap_or_default();
    let status = d.status.clone().unwrap_or_default();
    let mut row = vec![
        d.metadata.name.clone().unwrap_or_default(),
        format!("{}/{}", status.ready_replicas.unwrap_or(0), spec.replicas.unwrap_or(0)),
        status.updated_replicas.unwrap_or(0).to_string(),
        status.available_replicas.unwrap_or(0).to_string(),
        ts(&d.metadata.creation_timestamp, now),
    ];
    if wide {
        let containers = spec.template.spec.as_ref().map(|s| s.containers.clone()).unwrap_or_default();
        let (names, images) = container_cells(&containers);
        row.extend([names, images, format_label_selector(Some(&spec.selector))]);
    }
    row
}

fn replica_set_row(rs: &ReplicaSet, now: Millis, wide: bool) -> Vec<String> {
    let spec = rs.spec.clone().unwrap_or_default();
    let status = rs.status.clone().unwrap_or_default();
    let mut row = vec![
        rs.metadata.name.clone().unwrap_or_default(),
        spec.replicas.unwrap_or(0).to_string(),
        status.replicas.to_string(),
        status.ready_replicas.unwrap_or(0).to_string(),
        ts(&rs.metadata.creation_timestamp, now),
    ];
    if wide {
        let containers = spec.template.as_ref().and_then(|t| t.spec.as_ref()).map(|s| s.containers.clone()).unwrap_or_default();
        let (names, images) = container_cells(&containers);
        row.extend([names, images, format_label_selector(Some(&spec.selector))]);
    }
    row
}

/// makePortString.
pub fn service_ports(svc: &Service) -> String {
    let ports: Vec<String> = svc
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .into_iter()
        .flatten()
        .map(|p| {
            let protocol = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            match p.node_port {
                Some(np) if np > 0 => format!("{}:{np}/{protocol}", p.port),
                _ => format!("{}/{protocol}", p.port),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

/// getServiceExternalIP.
pub fn service_external_ip(svc: &Service, wide: bool) -> String {
    let spec = svc.spec.clone().unwrap_or_default();
    let external = spec.external_ips.clone().unwrap_or_default();
    match spec.type_.as_deref().unwrap_or("ClusterIP") {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".into()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let mut ips: Vec<String> = svc
                .status
                .as_ref()
                .and_then(|s| s.load_balancer.as_ref())
                .and_then(|lb| lb.ingress.as_ref())
                .into_iter()
                .flatten()
                .filter_map(|i| i.ip.clone().filter(|s| !s.is_empty()).or_else(|| i.hostname.clone().filter(|s| !s.is_empty())))
                .collect();
            kubesim_api::sort::sort(&mut ips);
            ips.dedup();
            let mut lb = ips.join(",");
            if !wide && lb.len() > 16 {
                lb = format!("{}...", lb.chars().take(13).collect::<String>());
            }
            if !external.is_empty() {
                let mut results: Vec<String> = if lb.is_empty() { vec![] } else { lb.split(',').map(str::to_string).collect() };
                results.extend(external);
                return results.join(",");
            }
            if lb.is_empty() {
                "<pending>".into()
            } else {
                lb
            }
        }
        "ExternalName" => spec.external_name.clone().unwrap_or_default(),
        _ => "<unknown>".into(),
    }
}

fn service_row(svc: &Service, now: Millis, wide: bool) -> Vec<String> {
    let spec = svc.spec.clone().unwrap_or_default();
    let cluster_ip = spec.cluster_ips.as_ref().and_then(|ips| ips.first().cloned()).or_else(|| spec.cluster_ip.clone()).filter(|s| !s.is_empty());
    let mut row = vec![
        svc.metadata.name.clone().unwrap_or_default(),
        spec.type_.clone().unwrap_or_default(),
        cluster_ip.unwrap_or_else(|| "<none>".into()),
        service_external_ip(svc, wide),
        service_ports(svc),
        ts(&svc.metadata.creation_timestamp, now),
    ];
    if wide {
        row.push(format_labels(spec.selector.as_ref()));
    }
    row
}

/// The event's last-seen, first-seen and count, as printEvent computes them.
pub fn event_times(e: &Event, now: Millis) -> (String, String, i32) {
    let first = match &e.first_timestamp {
        Some(t) => age(Some(t), now),
        None => match &e.event_time {
            Some(t) => human_duration(now.saturating_sub((t.0.as_millisecond() - kubesim_api::time::EPOCH_UNIX_SECONDS * 1000).max(0) as Millis)),
            None => "<unknown>".into(),
        },
    };
    let mut last = match &e.last_timestamp {
        Some(t) => age(Some(t), now),
        None => first.clone(),
    };
    let mut count = e.count.unwrap_or(0);
    if let Some(series) = &e.series {
        if let Some(t) = &series.last_observed_time {
            last = human_duration(now.saturating_sub((t.0.as_millisecond() - kubesim_api::time::EPOCH_UNIX_SECONDS * 1000).max(0) as Millis));
        }
        count = series.count.unwrap_or(count);
    } else if count == 0 {
        count = 1;
    }
    (last, first, count)
}

/// formatEventSource.
pub fn event_source(e: &Event) -> String {
    let source = e.source.clone().unwrap_or_default();
    let (component, host) = match source.component.as_deref().filter(|c| !c.is_empty()) {
        Some(c) => (c.to_string(), source.host.clone().unwrap_or_default()),
        None => (e.reporting_component.clone().unwrap_or_default(), e.reporting_instance.clone().unwrap_or_default()),
    };
    if host.is_empty() {
        component
    } else {
        format!("{component}, {host}")
    }
}

fn event_row(e: &Event, now: Millis, wide: bool) -> Vec<String> {
    let (last, first, count) = event_times(e, now);
    let kind = e.involved_object.kind.clone().unwrap_or_default().to_ascii_lowercase();
    let target = match e.involved_object.name.as_deref().filter(|n| !n.is_empty()) {
        Some(name) => format!("{kind}/{name}"),
        None => kind,
    };
    let message = e.message.clone().unwrap_or_default().trim().to_string();
    if wide {
        vec![
            last,
            e.type_.clone().unwrap_or_default(),
            e.reason.clone().unwrap_or_default(),
            target,
            e.involved_object.field_path.clone().unwrap_or_default(),
            event_source(e),
            message,
            first,
            count.to_string(),
            e.metadata.name.clone().unwrap_or_default(),
        ]
    } else {
        vec![last, e.type_.clone().unwrap_or_default(), e.reason.clone().unwrap_or_default(), target, message]
    }
}

/// Event headers in wide mode (the wide columns are interleaved).
pub const EVENT_WIDE_HEADERS: &[&str] = &["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"];

fn int_or_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => "N/A".into(),
    }
}

fn has_condition(json: &Value, type_: &str) -> bool {
    jget(json, "status.conditions")
        .and_then(|c| c.as_array())
        .and_then(|c| c.iter().find(|c| c.get("type").and_then(|t| t.as_str()) == Some(type_)))
        .is_some_and(|c| c.get("status").and_then(|s| s.as_str()) == Some("True"))
}

fn time_json(v: Option<&Value>) -> Option<Time> {
    v.and_then(|v| serde_json::from_value(v.clone()).ok())
}

fn access_modes(v: Option<&Value>) -> String {
    let modes: Vec<&str> = v.and_then(|v| v.as_array()).into_iter().flatten().filter_map(|m| m.as_str()).collect();
    let mut out = Vec::new();
    for (full, short) in [("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP")] {
        if modes.contains(&full) {
            out.push(short);
        }
    }
    out.join(",")
}

fn dynamic_row(kind: &str, json: &Value, created: &Option<Time>, now: Millis, wide: bool) -> Vec<String> {
    let name = jstr(json, "metadata.name").unwrap_or("").to_string();
    let age_cell = ts(created, now);
    let template_spec = |path: &str| jget(json, path);
    match kind {
        "StatefulSet" => {
            let mut row =
                vec![name, format!("{}/{}", jint(json, "status.readyReplicas"), jget(json, "spec.replicas").and_then(|v| v.as_i64()).unwrap_or(1)), age_cell];
            if wide {
                let (n, i) = container_cells_json(template_spec("spec.template.spec"));
                row.extend([n, i]);
            }
            row
        }
        "DaemonSet" => {
            let node_selector: Option<std::collections::BTreeMap<String, String>> =
                jget(json, "spec.template.spec.nodeSelector").and_then(|v| serde_json::from_value(v.clone()).ok());
            let mut row = vec![
                name,
                jint(json, "status.desiredNumberScheduled").to_string(),
                jint(json, "status.currentNumberScheduled").to_string(),
                jint(json, "status.numberReady").to_string(),
                jint(json, "status.updatedNumberScheduled").to_string(),
                jint(json, "status.numberAvailable").to_string(),
                format_labels(node_selector.as_ref()),
                age_cell,
            ];
            if wide {
                let (n, i) = container_cells_json(template_spec("spec.template.spec"));
                row.extend([n, i, format_label_selector(label_selector_json(jget(json, "spec.selector")).as_ref())]);
            }
            row
        }
        "ReplicationController" => {
            let mut row = vec![
                name,
                jget(json, "spec.replicas").and_then(|v| v.as_i64()).unwrap_or(1).to_string(),
                jint(json, "status.replicas").to_string(),
                jint(json, "status.readyReplicas").to_string(),
                age_cell,
            ];
            if wide {
                let (n, i) = container_cells_json(template_spec("spec.template.spec"));
                let selector: Option<std::collections::BTreeMap<String, String>> =
                    jget(json, "spec.selector").and_then(|v| serde_json::from_value(v.clone()).ok());
                row.extend([n, i, format_labels(selector.as_ref())]);
            }
            row
        }
        "Job" => {
            let succeeded = jint(json, "status.succeeded");
            let completions = match jget(json, "spec.completions").and_then(|v| v.as_i64()) {
                Some(c) => format!("{succeeded}/{c}"),
                None => {
                    let parallelism = jint(json, "spec.parallelism");
                    if parallelism > 1 {
                        format!("{succeeded}/1 of {parallelism}")
                    } else {
                        format!("{succeeded}/1")
                    }
                }
            };
            let start = time_json(jget(json, "status.startTime"));
            let completion = time_json(jget(json, "status.completionTime"));
            let duration = match (&start, &completion) {
                (None, _) => String::new(),
                (Some(s), None) => human_duration(now.saturating_sub(millis_of(s))),
                (Some(s), Some(c)) => human_duration(millis_of(c).saturating_sub(millis_of(s))),
            };
            let status = if has_condition(json, "Complete") {
                "Complete"
            } else if has_condition(json, "Failed") {
                "Failed"
            } else if jget(json, "metadata.deletionTimestamp").is_some() {
                "Terminating"
            } else if has_condition(json, "Suspended") {
                "Suspended"
            } else if has_condition(json, "FailureTarget") {
                "FailureTarget"
            } else {
                "Running"
            };
            let mut row = vec![name, status.into(), completions, duration, age_cell];
            if wide {
                let (n, i) = container_cells_json(template_spec("spec.template.spec"));
                row.extend([n, i, format_label_selector(label_selector_json(jget(json, "spec.selector")).as_ref())]);
            }
            row
        }
        "CronJob" => {
            let last = match time_json(jget(json, "status.lastScheduleTime")) {
                Some(t) => age(Some(&t), now),
                None => "<none>".into(),
            };
            // printBoolPtr: "True"/"False", "<unset>" when nil.
            let suspend = match jget(json, "spec.suspend").and_then(|v| v.as_bool()) {
                Some(true) => "True".to_string(),
                Some(false) => "False".to_string(),
                None => "<unset>".into(),
            };
            let mut row = vec![
                name,
                jstr(json, "spec.schedule").unwrap_or("").to_string(),
                jstr(json, "spec.timeZone").unwrap_or("<none>").to_string(),
                suspend,
                jget(json, "status.active").and_then(|a| a.as_array()).map_or(0, |a| a.len()).to_string(),
                last,
                age_cell,
            ];
            if wide {
                let (n, i) = container_cells_json(template_spec("spec.jobTemplate.spec.template.spec"));
                row.extend([n, i, format_label_selector(label_selector_json(jget(json, "spec.jobTemplate.spec.selector")).as_ref())]);
            }
            row
        }
        "PersistentVolumeClaim" => {
            let phase = if jget(json, "metadata.deletionTimestamp").is_some() {
                "Terminating".to_string()
            } else {
                jstr(json, "status.phase").unwrap_or("").to_string()
            };
            let volume = jstr(json, "spec.volumeName").unwrap_or("").to_string();
            let (capacity, modes) = if volume.is_empty() {
                (String::new(), String::new())
            } else {
                (jstr(json, "status.capacity.storage").unwrap_or("").to_string(), access_modes(jget(json, "status.accessModes")))
            };
            let class = jstr(json, "spec.storageClassName")
                .or_else(|| jstr(json, "metadata.annotations.volume\\.beta\\.kubernetes\\.io/storage-class"))
                .unwrap_or("")
                .to_string();
            let mut row =
                vec![name, phase, volume, capacity, modes, class, jstr(json, "spec.volumeAttributesClassName").unwrap_or("<unset>").to_string(), age_cell];
            if wide {
                row.push(jstr(json, "spec.volumeMode").unwrap_or("<unset>").to_string());
            }
            row
        }
        "PersistentVolume" => {
            let claim = match jget(json, "spec.claimRef") {
                Some(c) => format!("{}/{}", c.get("namespace").and_then(|v| v.as_str()).unwrap_or(""), c.get("name").and_then(|v| v.as_str()).unwrap_or("")),
                None => String::new(),
            };
            let phase = if jget(json, "metadata.deletionTimestamp").is_some() {
                "Terminating".to_string()
            } else {
                jstr(json, "status.phase").unwrap_or("").to_string()
            };
            let mut row = vec![
                name,
                jstr(json, "spec.capacity.storage").unwrap_or("").to_string(),
                access_modes(jget(json, "spec.accessModes")),
                jstr(json, "spec.persistentVolumeReclaimPolicy").unwrap_or("").to_string(),
                phase,
                claim,
                jstr(json, "spec.storageClassName").unwrap_or("").to_string(),
                jstr(json, "spec.volumeAttributesClassName").unwrap_or("<unset>").to_string(),
                jstr(json, "status.reason").unwrap_or("").to_string(),
                age_cell,
            ];
            if wide {
                row.push(jstr(json, "spec.volumeMode").unwrap_or("<unset>").to_string());
            }
            row
        }
        "PodDisruptionBudget" => vec![
            name,
            int_or_string(jget(json, "spec.minAvailable")),
            int_or_string(jget(json, "spec.maxUnavailable")),
            jint(json, "status.disruptionsAllowed").to_string(),
            age_cell,
        ],
        "HorizontalPodAutoscaler" => {
            let target = jget(json, "spec.scaleTargetRef");
            let reference = format!(
                "{}/{}",
                target.and_then(|t| t.get("kind")).and_then(|v| v.as_str()).unwrap_or(""),
                target.and_then(|t| t.get("name")).and_then(|v| v.as_str()).unwrap_or("")
            );
            let min = jget(json, "spec.minReplicas").and_then(|v| v.as_i64()).map(|v| v.to_string()).unwrap_or_else(|| "<unset>".into());
            vec![
                name,
                reference,
                hpa_targets(json),
                min,
                jint(json, "spec.maxReplicas").to_string(),
                jint(json, "status.currentReplicas").to_string(),
                age_cell,
            ]
        }
        "Ingress" => {
            let rules = jget(json, "spec.rules").and_then(|r| r.as_array()).cloned().unwrap_or_default();
            let mut hosts: Vec<String> = Vec::new();
            let mut more = false;
            for rule in &rules {
                if hosts.len() == 3 {
                    more = true;
                }
                if !more {
                    if let Some(h) = rule.get("host").and_then(|h| h.as_str()).filter(|h| !h.is_empty()) {
                        hosts.push(h.to_string());
                    }
                }
            }
            let hosts_cell = if hosts.is_empty() {
                "*".to_string()
            } else if more {
                format!("{} + {} more...", hosts.join(","), rules.len() - 3)
            } else {
                hosts.join(",")
            };
            let mut addresses: Vec<String> = jget(json, "status.loadBalancer.ingress")
                .and_then(|i| i.as_array())
                .into_iter()
                .flatten()
                .filter_map(|i| i.get("ip").or_else(|| i.get("hostname")).and_then(|v| v.as_str()).map(str::to_string))
                .collect();
            kubesim_api::sort::sort(&mut addresses);
            let ports = if jget(json, "spec.tls").and_then(|t| t.as_array()).is_some_and(|t| !t.is_empty()) { "80, 443" } else { "80" };
            vec![name, jstr(json, "spec.ingressClassName").unwrap_or("<none>").to_string(), hosts_cell, addresses.join(","), ports.into(), age_cell]
        }
        "PriorityClass" => vec![
            name,
            jint(json, "value").to_string(),
            jget(json, "globalDefault").and_then(|v| v.as_bool()).unwrap_or(false).to_string(),
            age_cell,
            jstr(json, "preemptionPolicy").unwrap_or("PreemptLowerPriority").to_string(),
        ],
        "StorageClass" => {
            let default = json.pointer("/metadata/annotations/storageclass.kubernetes.io~1is-default-class").and_then(|v| v.as_str()) == Some("true");
            let display = if default { format!("{name} (default)") } else { name };
            vec![
                display,
                jstr(json, "provisioner").unwrap_or("").to_string(),
                jstr(json, "reclaimPolicy").unwrap_or("Delete").to_string(),
                jstr(json, "volumeBindingMode").unwrap_or("Immediate").to_string(),
                jget(json, "allowVolumeExpansion").and_then(|v| v.as_bool()).unwrap_or(false).to_string(),
                age_cell,
            ]
        }
        "NetworkPolicy" => {
            let selector = label_selector_json(jget(json, "spec.podSelector"));
            let rendered = match selector.as_ref().map(|s| format_label_selector(Some(s))) {
                Some(s) if s != "<none>" => s,
                _ => "<none>".into(),
            };
            vec![name, rendered, age_cell]
        }
        "Endpoints" => {
            let mut list = Vec::new();
            let mut count = 0;
            for subset in jget(json, "subsets").and_then(|s| s.as_array()).into_iter().flatten() {
                let addresses: Vec<&str> =
                    subset.get("addresses").and_then(|a| a.as_array()).into_iter().flatten().filter_map(|a| a.get("ip").and_then(|i| i.as_str())).collect();
                let ports: Vec<i64> =
                    subset.get("ports").and_then(|p| p.as_array()).into_iter().flatten().filter_map(|p| p.get("port").and_then(|i| i.as_i64())).collect();
                if ports.is_empty() {
                    count += addresses.len();
                    list.extend(addresses.iter().map(|a| a.to_string()));
                } else {
                    for port in ports {
                        count += addresses.len();
                        list.extend(addresses.iter().map(|a| format!("{a}:{port}")));
                    }
                }
            }
            let cell = if count == 0 {
                "<none>".to_string()
            } else if list.len() > 3 {
                format!("{} + {} more...", list[..3].join(","), count - 3)
            } else {
                list.join(",")
            };
            vec![name, cell, age_cell]
        }
        "ResourceQuota" => {
            let mut requests = Vec::new();
            let mut limits = Vec::new();
            let hard = jget(json, "status.hard").or_else(|| jget(json, "spec.hard")).and_then(|h| h.as_object()).cloned().unwrap_or_default();
            for (k, v) in &hard {
                let used = jget(json, "status.used").and_then(|u| u.get(k)).and_then(|u| u.as_str()).unwrap_or("0");
                let entry = format!("{k}: {used}/{}", v.as_str().unwrap_or(""));
                if k.starts_with("limits.") {
                    limits.push(entry)
                } else {
                    requests.push(entry)
                }
            }
            vec![name, requests.join(", "), limits.join(", "), age_cell]
        }
        "LimitRange" | "ClusterRole" | "Role" | "CustomResourceDefinition" => {
            let created = created.as_ref().map(|t| t.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()).unwrap_or_default();
            vec![name, created]
        }
        "ClusterRoleBinding" | "RoleBinding" => {
            let role = format!("{}/{}", jstr(json, "roleRef.kind").unwrap_or(""), jstr(json, "roleRef.name").unwrap_or(""));
            let mut row = vec![name, role, age_cell];
            if wide {
                let subjects = jget(json, "subjects").and_then(|s| s.as_array()).cloned().unwrap_or_default();
                let pick = |kind: &str, with_ns: bool| {
                    subjects
                        .iter()
                        .filter(|s| s.get("kind").and_then(|k| k.as_str()) == Some(kind))
                        .map(|s| {
                            let n = s.get("name").and_then(|v| v.as_str()).unwrap_or("");
                            match s.get("namespace").and_then(|v| v.as_str()) {
                                Some(ns) if with_ns => format!("{ns}/{n}"),
                                _ => n.to_string(),
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                row.extend([pick("User", false), pick("Group", false), pick("ServiceAccount", true)]);
            }
            row
        }
        "ControllerRevision" => {
            let controller = jget(json, "metadata.ownerReferences")
                .and_then(|o| o.as_array())
                .and_then(|o| o.iter().find(|r| r.get("controller").and_then(|c| c.as_bool()) == Some(true)))
                .map(|r| {
                    let kind = r.get("kind").and_then(|v| v.as_str()).unwrap_or("").to_ascii_lowercase();
                    let group = r.get("apiVersion").and_then(|v| v.as_str()).and_then(|v| v.split_once('/')).map(|(g, _)| format!(".{g}")).unwrap_or_default();
                    format!("{kind}{group}/{}", r.get("name").and_then(|v| v.as_str()).unwrap_or(""))
                })
                .unwrap_or_else(|| "<none>".into());
            vec![name, controller, jint(json, "revision").to_string(), age_cell]
        }
        "EndpointSlice" => {
            let ports: Vec<String> = jget(json, "ports")
                .and_then(|p| p.as_array())
                .into_iter()
                .flatten()
                .map(|p| {
                    p.get("port")
                        .and_then(|v| v.as_i64())
                        .map(|v| v.to_string())
                        .or_else(|| p.get("name").and_then(|v| v.as_str()).map(str::to_string))
                        .unwrap_or_else(|| "*".into())
                })
                .collect();
            let addresses: Vec<String> = jget(json, "endpoints")
                .and_then(|p| p.as_array())
                .into_iter()
                .flatten()
                .flat_map(|e| e.get("addresses").and_then(|a| a.as_array()).cloned().unwrap_or_default())
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect();
            let more = |list: Vec<String>| {
                if list.len() > 3 {
                    format!("{} + {} more...", list[..3].join(","), list.len() - 3)
                } else if list.is_empty() {
                    "<unset>".into()
                } else {
                    list.join(",")
                }
            };
            vec![name, jstr(json, "addressType").unwrap_or("").to_string(), more(ports), more(addresses), age_cell]
        }
        "IngressClass" => {
            // printIngressClass: `Kind[.apiGroup]/name` of the parameters.
            let parameters = match jget(json, "spec.parameters") {
                Some(p) => {
                    let kind = p.get("kind").and_then(|v| v.as_str()).unwrap_or("");
                    let group = p.get("apiGroup").and_then(|v| v.as_str()).map(|g| format!(".{g}")).unwrap_or_default();
                    format!("{kind}{group}/{}", p.get("name").and_then(|v| v.as_str()).unwrap_or(""))
                }
                None => "<none>".into(),
            };
            vec![name, jstr(json, "spec.controller").unwrap_or("").to_string(), parameters, age_cell]
        }
        "RuntimeClass" => vec![name, jstr(json, "handler").unwrap_or("").to_string(), age_cell],
        "ServiceCIDR" => {
            let cidrs: Vec<&str> = jget(json, "spec.cidrs").and_then(|c| c.as_array()).into_iter().flatten().filter_map(|c| c.as_str()).collect();
            vec![name, cidrs.join(","), age_cell]
        }
        "IPAddress" => {
            // printIPAddress: `resource[.group]/[namespace/]name` of the parent, lower-cased.
            let parent = match jget(json, "spec.parentRef") {
                Some(p) => {
                    let field = |k: &str| p.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                    let group = field("group");
                    let mut text = if group.is_empty() { field("resource") } else { format!("{}.{group}", field("resource")) }.to_ascii_lowercase();
                    if !field("namespace").is_empty() {
                        text = format!("{text}/{}", field("namespace"));
                    }
                    format!("{text}/{}", field("name"))
                }
                None => "<none>".into(),
            };
            vec![name, parent]
        }
        // The rest of printers.go's handlers for kinds kubesim keeps as JSON.
        "PodTemplate" => {
            let (n, i) = container_cells_json(template_spec("template.spec"));
            let labels: Option<std::collections::BTreeMap<String, String>> =
                jget(json, "template.metadata.labels").and_then(|v| serde_json::from_value(v.clone()).ok());
            vec![name, n, i, format_labels(labels.as_ref())]
        }
        "ComponentStatus" => {
            let conditions = jget(json, "conditions").and_then(|c| c.as_array()).cloned().unwrap_or_default();
            let healthy = conditions.iter().find(|c| c.get("type").and_then(|t| t.as_str()) == Some("Healthy"));
            let status = match healthy.and_then(|c| c.get("status")).and_then(|s| s.as_str()) {
                Some("True") => "Healthy",
                Some(_) => "Unhealthy",
                None => "Unknown",
            };
            let text = |k: &str| healthy.and_then(|c| c.get(k)).and_then(|v| v.as_str()).unwrap_or("").to_string();
            vec![name, status.into(), text("message"), text("error")]
        }
        "CertificateSigningRequest" => {
            let duration = jget(json, "spec.expirationSeconds").and_then(|v| v.as_u64()).map(|s| human_duration(s * 1000)).unwrap_or_else(|| "<none>".into());
            let mut conditions: Vec<String> = Vec::new();
            for c in jget(json, "status.conditions").and_then(|c| c.as_array()).into_iter().flatten() {
                if let Some(t) = c.get("type").and_then(|t| t.as_str()) {
                    if ["Approved", "Denied", "Failed"].contains(&t) && !conditions.iter().any(|x| x == t) {
                        conditions.push(t.to_string());
                    }
                }
            }
            if conditions.is_empty() {
                conditions.push("Pending".into());
            }
            if jget(json, "status.certificate").is_some_and(|c| !c.is_null()) {
                conditions.push("Issued".into());
            }
            vec![
                name,
                age_cell,
                jstr(json, "spec.signerName").unwrap_or("").to_string(),
                jstr(json, "spec.username").unwrap_or("").to_string(),
                duration,
                conditions.join(","),
            ]
        }
        "VolumeAttributesClass" => vec![name, jstr(json, "driverName").unwrap_or("").to_string(), age_cell],
        "VolumeAttachment" => vec![
            name,
            jstr(json, "spec.attacher").unwrap_or("").to_string(),
            jstr(json, "spec.source.persistentVolumeName").unwrap_or("").to_string(),
            jstr(json, "spec.nodeName").unwrap_or("").to_string(),
            jget(json, "status.attached").and_then(|v| v.as_bool()).unwrap_or(false).to_string(),
            age_cell,
        ],
        "CSINode" => vec![name, jget(json, "spec.drivers").and_then(|d| d.as_array()).map_or(0, |d| d.len()).to_string(), age_cell],
        "CSIDriver" => {
            let b = |path: &str, default: bool| jget(json, path).and_then(|v| v.as_bool()).unwrap_or(default).to_string();
            let tokens: Vec<String> = jget(json, "spec.tokenRequests")
                .and_then(|t| t.as_array())
                .into_iter()
                .flatten()
                .map(|t| jstr(t, "audience").unwrap_or("").to_string())
                .collect();
            let modes: Vec<String> = jget(json, "spec.volumeLifecycleModes")
                .and_then(|m| m.as_array())
                .into_iter()
                .flatten()
                .filter_map(|m| m.as_str().map(str::to_string))
                .collect();
            vec![
                name,
                b("spec.attachRequired", true),
                b("spec.podInfoOnMount", false),
                b("spec.storageCapacity", false),
                if tokens.is_empty() { "<unset>".into() } else { tokens.join(",") },
                b("spec.requiresRepublish", false),
                if modes.is_empty() { "Persistent".into() } else { modes.join(",") },
                age_cell,
            ]
        }
        "CSIStorageCapacity" => vec![
            name,
            jstr(json, "storageClassName").unwrap_or("").to_string(),
            jget(json, "capacity").map(|c| c.as_str().map(str::to_string).unwrap_or_else(|| c.to_string())).unwrap_or_else(|| "<unset>".into()),
        ],
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            vec![name, jget(json, "webhooks").and_then(|w| w.as_array()).map_or(0, |w| w.len()).to_string(), age_cell]
        }
        "ValidatingAdmissionPolicy" => {
            let kind = jget(json, "spec.paramKind")
                .map(|k| format!("{}/{}", jstr(k, "apiVersion").unwrap_or(""), jstr(k, "kind").unwrap_or("")))
                .unwrap_or_else(|| "<unset>".into());
            vec![name, jget(json, "spec.validations").and_then(|v| v.as_array()).map_or(0, |v| v.len()).to_string(), kind, age_cell]
        }
        "ValidatingAdmissionPolicyBinding" => {
            let param = match jget(json, "spec.paramRef") {
                Some(p) if jstr(p, "name").is_some_and(|n| !n.is_empty()) => match jstr(p, "namespace").filter(|n| !n.is_empty()) {
                    Some(ns) => format!("{ns}/{}", jstr(p, "name").unwrap_or("")),
                    None => format!("*/{}", jstr(p, "name").unwrap_or("")),
                },
                Some(p) if p.get("selector").is_some() => format_label_selector(label_selector_json(p.get("selector")).as_ref()),
                _ => "<unset>".into(),
            };
            vec![name, jstr(json, "spec.policyName").unwrap_or("").to_string(), param, age_cell]
        }
        "FlowSchema" => {
            let missing = jget(json, "status.conditions")
                .and_then(|c| c.as_array())
                .and_then(|c| c.iter().find(|c| jstr(c, "type") == Some("Dangling")))
                .and_then(|c| jstr(c, "status"))
                .unwrap_or("?")
                .to_string();
            vec![
                name,
                jstr(json, "spec.priorityLevelConfiguration.name").unwrap_or("").to_string(),
                jint(json, "spec.matchingPrecedence").to_string(),
                jstr(json, "spec.distinguisherMethod.type").unwrap_or("*").to_string(),
                age_cell,
                missing,
            ]
        }
        "PriorityLevelConfiguration" => {
            let queuing = jget(json, "spec.limited.limitResponse.queuing");
            let q = |k: &str| queuing.and_then(|q| q.get(k)).and_then(|v| v.as_i64()).map(|v| v.to_string()).unwrap_or_else(|| "<none>".into());
            let shares = jget(json, "spec.limited.nominalConcurrencyShares").and_then(|v| v.as_i64()).map(|v| v.to_string()).unwrap_or_else(|| "<none>".into());
            vec![name, jstr(json, "spec.type").unwrap_or("").to_string(), shares, q("queues"), q("handSize"), q("queueLengthLimit"), age_cell]
        }
        "ResourceClaim" => {
            let mut state = Vec::new();
            if jget(json, "status.allocation").is_some_and(|a| !a.is_null()) {
                state.push("allocated");
            } else {
                state.push("pending");
            }
            if jget(json, "status.reservedFor").and_then(|r| r.as_array()).is_some_and(|r| !r.is_empty()) {
                state.push("reserved");
            }
            if jget(json, "metadata.deletionTimestamp").is_some() {
                state.push("deleted");
            }
            vec![name, state.join(","), age_cell]
        }
        "APIService" => {
            // kube-aggregator's apiservice etcd.go ConvertToTable.
            let service = match jget(json, "spec.service").filter(|s| !s.is_null()) {
                Some(s) => format!("{}/{}", jstr(s, "namespace").unwrap_or(""), jstr(s, "name").unwrap_or("")),
                None => "Local".into(),
            };
            let available = jget(json, "status.conditions")
                .and_then(|c| c.as_array())
                .and_then(|c| c.iter().find(|c| jstr(c, "type") == Some("Available")))
                .map(|c| {
                    let status = jstr(c, "status").unwrap_or("").to_string();
                    match jstr(c, "reason").filter(|r| !r.is_empty()) {
                        Some(reason) if status != "True" => format!("{status} ({reason})"),
                        _ => status,
                    }
                })
                .unwrap_or_else(|| "Unknown".into());
            vec![name, service, available, age_cell]
        }
        _ => vec![name, age_cell],
    }
}

fn hpa_targets(json: &Value) -> String {
    let metrics = jget(json, "spec.metrics").and_then(|m| m.as_array()).cloned().unwrap_or_default();
    let current = jget(json, "status.currentMetrics").and_then(|m| m.as_array()).cloned().unwrap_or_default();
    if metrics.is_empty() {
        // autoscaling/v1 style
        if let Some(target) = jget(json, "spec.targetCPUUtilizationPercentage").and_then(|v| v.as_i64()) {
            let cur =
                jget(json, "status.currentCPUUtilizationPercentage").and_then(|v| v.as_i64()).map(|v| format!("{v}%")).unwrap_or_else(|| "<unknown>".into());
            return format!("cpu: {cur}/{target}%");
        }
        return "<none>".into();
    }
    let mut list = Vec::new();
    for (i, metric) in metrics.iter().enumerate() {
        let type_ = metric.get("type").and_then(|t| t.as_str()).unwrap_or("");
        let cell = match type_ {
            "Resource" | "ContainerResource" => {
                let key = if type_ == "Resource" { "resource" } else { "containerResource" };
                let resource = metric.get(key).cloned().unwrap_or_default();
                let name = resource.get("name").and_then(|v| v.as_str()).unwrap_or("").to_string();
                let target = resource.get("target").cloned().unwrap_or_default();
                let cur = current.get(i).and_then(|c| c.get(key)).and_then(|r| r.get("current")).cloned();
                if let Some(util) = target.get("averageUtilization").and_then(|v| v.as_i64()) {
                    let c =
                        cur.and_then(|c| c.get("averageUtilization").and_then(|v| v.as_i64())).map(|v| format!("{v}%")).unwrap_or_else(|| "<unknown>".into());
                    format!("{name}: {c}/{util}%")
                } else {
                    let t = target.get("averageValue").or_else(|| target.get("value")).and_then(|v| v.as_str()).unwrap_or("").to_string();
                    let c = cur.and_then(|c| c.get("averageValue").and_then(|v| v.as_str()).map(str::to_string)).unwrap_or_else(|| "<unknown>".into());
                    format!("{name}: {c}/{t}")
                }
            }
            _ => {
                let mut key = type_.chars();
                let key: String = key.next().map(|c| c.to_ascii_lowercase().to_string() + key.as_str()).unwrap_or_default();
                let target = metric.pointer(&format!("/{key}/target")).cloned().unwrap_or_default();
                let t = target.get("averageValue").or_else(|| target.get("value")).and_then(|v| v.as_str()).unwrap_or("").to_string();
                format!("<unknown>/{t}")
            }
        };
        list.push(cell);
    }
    if list.len() > 2 {
        let n = list.len() - 2;
        list.truncate(2);
        return format!("{} + {n} more...", list.join(", "));
    }
    list.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_api::k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, PodCondition, PodSpec, PodStatus,
    };
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kubesim_api::time::time_at;

    fn running() -> ContainerState {
        ContainerState { running: Some(ContainerStateRunning { started_at: Some(time_at(0)) }), ..Default::default() }
    }
    fn waiting(reason: &str) -> ContainerState {
        ContainerState { waiting: Some(ContainerStateWaiting { reason: Some(reason.into()), message: None }), ..Default::default() }
    }
    fn terminated(reason: &str, exit_code: i32, signal: i32) -> ContainerState {
        ContainerState {
            terminated: Some(ContainerStateTerminated {
                reason: Some(reason.into()).filter(|r: &String| !r.is_empty()),
                exit_code,
                signal: Some(signal).filter(|s| *s != 0),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
    fn cs(name: &str, ready: bool, restarts: i32, state: ContainerState) -> ContainerStatus {
        ContainerStatus { name: name.into(), ready, restart_count: restarts, state: Some(state), ..Default::default() }
    }
    fn container(name: &str) -> Container {
        Container { name: name.into(), image: Some("i".into()), ..Default::default() }
    }
    fn sidecar(name: &str) -> Container {
        Container { restart_policy: Some("Always".into()), ..container(name) }
    }
    fn cond(t: &str, s: &str) -> PodCondition {
        PodCondition { type_: t.into(), status: s.into(), ..Default::default() }
    }

    struct Case {
        containers: Vec<Container>,
        init: Vec<Container>,
        phase: &'static str,
        reason: &'static str,
        statuses: Vec<ContainerStatus>,
        init_statuses: Vec<ContainerStatus>,
        conditions: Vec<PodCondition>,
        deleting: bool,
        want: [&'static str; 3],
    }

    fn base(want: [&'static str; 3]) -> Case {
        Case {
            containers: vec![container("a"), container("b")],
            init: vec![],
            phase: "podPhase",
            reason: "",
            statuses: vec![],
            init_statuses: vec![],
            conditions: vec![],
            deleting: false,
            want,
        }
    }

    // Mirrors pkg/printers/internalversion/printers_test.go TestPrintPod, TestPrintPodWithRestartableInitContainer
    // and TestPrintPodSchedulingGated: READY, STATUS and RESTARTS as printPod derives them.
    #[test]
    fn pod_status_column_matches_print_pod() {
        let cases = vec![
            Case { statuses: vec![cs("a", true, 3, running()), cs("b", false, 3, ContainerState::default())], ..base(["1/2", "podPhase", "6"]) },
            Case {
                statuses: vec![cs("a", false, 3, waiting("ContainerWaitingReason")), cs("b", true, 3, running())],
                ..base(["1/2", "ContainerWaitingReason", "6"])
            },
            Case {
                statuses: vec![cs("a", false, 3, terminated("ContainerTerminatedReason", 1, 0)), cs("b", true, 3, running())],
                ..base(["1/2", "ContainerTerminatedReason", "6"])
            },
            Case {
                deleting: true,
                reason: "NodeLost",
                statuses: vec![cs("a", true, 3, running()), cs("b", true, 3, running())],
                ..base(["2/2", "Unknown", "6"])
            },
            Case { reason: "podReason", statuses: vec![cs("a", true, 3, running()), cs("b", true, 3, running())], ..base(["2/2", "podReason", "6"]) },
            Case { statuses: vec![cs("a", false, 0, terminated("", 2, 0))], containers: vec![container("a")], ..base(["0/1", "ExitCode:2", "0"]) },
            Case { statuses: vec![cs("a", false, 0, terminated("", 0, 9))], containers: vec![container("a")], ..base(["0/1", "Signal:9", "0"]) },
            // Completed with a running container: Running when the pod is Ready, NotReady otherwise.
            Case {
                reason: "",
                statuses: vec![cs("a", false, 0, terminated("Completed", 0, 0)), cs("b", true, 0, running())],
                conditions: vec![cond("Ready", "True")],
                ..base(["1/2", "Running", "0"])
            },
            Case { statuses: vec![cs("a", true, 0, running()), cs("b", false, 0, terminated("Completed", 0, 0))], ..base(["1/2", "NotReady", "0"]) },
            Case {
                phase: "Pending",
                containers: vec![container("a")],
                statuses: vec![cs("a", false, 0, waiting("ContainerCreating"))],
                ..base(["0/1", "ContainerCreating", "0"])
            },
            Case { phase: "Pending", containers: vec![container("a")], ..base(["0/1", "Pending", "0"]) },
            Case {
                phase: "Running",
                containers: vec![container("a")],
                statuses: vec![cs("a", false, 4, waiting("CrashLoopBackOff"))],
                ..base(["0/1", "CrashLoopBackOff", "4"])
            },
            Case {
                phase: "Pending",
                containers: vec![container("a")],
                statuses: vec![cs("a", false, 0, waiting("ImagePullBackOff"))],
                ..base(["0/1", "ImagePullBackOff", "0"])
            },
            Case {
                phase: "Succeeded",
                containers: vec![container("a")],
                statuses: vec![cs("a", false, 0, terminated("Completed", 0, 0))],
                ..base(["0/1", "Completed", "0"])
            },
            Case {
                phase: "Failed",
                containers: vec![container("a")],
                statuses: vec![cs("a", false, 0, terminated("Error", 1, 0))],
                ..base(["0/1", "Error", "0"])
            },
            Case {
                phase: "Running",
                deleting: true,
                containers: vec![container("a")],
                statuses: vec![cs("a", true, 0, running())],
                ..base(["1/1", "Terminating", "0"])
            },
            Case {
                phase: "Succeeded",
                deleting: true,
                containers: vec![container("a")],
                statuses: vec![cs("a", false, 0, terminated("Completed", 0, 0))],
                ..base(["0/1", "Completed", "0"])
            },
            // Init containers.
            Case {
                phase: "Pending",
                init: vec![container("i1"), container("i2")],
                containers: vec![container("a")],
                init_statuses: vec![cs("i1", false, 0, waiting("PodInitializing"))],
                ..base(["0/1", "Init:0/2", "0"])
            },
            Case {
                phase: "Pending",
                init: vec![container("i1"), container("i2")],
                containers: vec![container("a")],
                init_statuses: vec![cs("i1", false, 0, terminated("", 0, 0)), cs("i2", false, 0, running())],
                ..base(["0/1", "Init:1/2", "0"])
            },
            Case {
                phase: "Pending",
                init: vec![container("i1")],
                containers: vec![container("a")],
                init_statuses: vec![cs("i1", false, 2, terminated("", 1, 0))],
                ..base(["0/1", "Init:ExitCode:1", "2"])
            },
            Case {
                phase: "Pending",
                init: vec![container("i1")],
                containers: vec![container("a")],
                init_statuses: vec![cs("i1", false, 2, terminated("Error", 1, 0))],
                ..base(["0/1", "Init:Error", "2"])
            },
            Case {
                phase: "Pending",
                init: vec![container("i1")],
                containers: vec![container("a")],
                init_statuses: vec![cs("i1", false, 0, terminated("", 143, 15))],
                ..base(["0/1", "Init:Signal:15", "0"])
            },
            Case {
                phase: "Pending",
                init: vec![container("i1")],
                containers: vec![container("a")],
                init_statuses: vec![cs("i1", false, 5, waiting("CrashLoopBackOff"))],
                ..base(["0/1", "Init:CrashLoopBackOff", "5"])
            },
            // Restartable init containers (sidecars) count towards READY.
            Case {
                phase: "Running",
                init: vec![sidecar("s")],
                containers: vec![container("a")],
                init_statuses: vec![ContainerStatus { started: Some(true), ..cs("s", true, 1, running()) }],
                statuses: vec![cs("a", true, 2, running())],
                conditions: vec![cond("Initialized", "True")],
                ..base(["2/2", "Running", "3"])
            },
            // Scheduling gates.
            Case {
                phase: "Pending",
                containers: vec![container("a")],
                conditions: vec![PodCondition { reason: Some("SchedulingGated".into()), ..cond("PodScheduled", "False") }],
                ..base(["0/1", "SchedulingGated", "0"])
            },
        ];
        for (i, case) in cases.into_iter().enumerate() {
            let pod = Pod {
                metadata: ObjectMeta { name: Some("p".into()), deletion_timestamp: if case.deleting { Some(time_at(0)) } else { None }, ..Default::default() },
                spec: Some(PodSpec { containers: case.containers, init_containers: Some(case.init).filter(|i| !i.is_empty()), ..Default::default() }),
                status: Some(PodStatus {
                    phase: Some(case.phase.into()),
                    reason: Some(case.reason.into()).filter(|r: &String| !r.is_empty()),
                    container_statuses: Some(case.statuses),
                    init_container_statuses: Some(case.init_statuses),
                    conditions: Some(case.conditions),
                    ..Default::default()
                }),
            };
            let row = pod_row(&pod, 0, false);
            assert_eq!([row[1].as_str(), row[2].as_str(), row[3].as_str()], case.want, "case {i}");
            assert_eq!(row[4], "<unknown>", "case {i}: no creationTimestamp prints <unknown>");
        }
    }

    // Mirrors printers_test.go TestPrintPod restarts column: "N (AGE ago)" once a container restarted.
    #[test]
    fn restarts_show_time_since_last_restart() {
        let mut status = cs("a", true, 2, running());
        status.last_state = Some(terminated("Error", 1, 0));
        status.last_state.as_mut().unwrap().terminated.as_mut().unwrap().finished_at = Some(time_at(10_000));
        let pod = Pod {
            metadata: ObjectMeta { name: Some("p".into()), creation_timestamp: Some(time_at(0)), ..Default::default() },
            spec: Some(PodSpec { containers: vec![container("a")], ..Default::default() }),
            status: Some(PodStatus { phase: Some("Running".into()), container_statuses: Some(vec![status]), ..Default::default() }),
        };
        let row = pod_row(&pod, 190_000, true);
        assert_eq!(row, vec!["p", "1/1", "Running", "2 (3m ago)", "3m10s", "<none>", "<none>", "<none>", "<none>"]);
    }

    // Mirrors Go's text/tabwriter tests (column blocks end at lines without the column).
    #[test]
    fn tabwriter_aligns_column_blocks_like_go() {
        let text = "Name:\tnginx\nNamespace:\tdefault\nContainers:\n  c:\n    Image:\tx\n    Port:\t<none>\nQoS Class:\tBestEffort\n";
        let want = "Name:       nginx\nNamespace:  default\nContainers:\n  c:\n    Image:  x\n    Port:   <none>\nQoS Class:  BestEffort\n";
        assert_eq!(tabwriter(text, 0, 2), want);
        let table = render(&[vec!["NAME".into(), "READY".into(), "AGE".into()], vec!["a-long-name".into(), "1/1".into(), "5s".into()]]);
        assert_eq!(table, "NAME          READY   AGE\na-long-name   1/1     5s\n");
        // minwidth 6 applies to short columns.
        assert_eq!(render(&[vec!["IP".into(), "X".into()]]), "IP    X\n");
    }

    #[test]
    fn node_status_and_roles() {
        use kubesim_api::k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus};
        let mut node = Node {
            metadata: ObjectMeta {
                name: Some("n".into()),
                labels: Some(
                    [("node-role.kubernetes.io/control-plane".to_string(), "".to_string()), ("kubernetes.io/role".to_string(), "worker".to_string())].into(),
                ),
                ..Default::default()
            },
            spec: Some(NodeSpec { unschedulable: Some(true), ..Default::default() }),
            status: Some(NodeStatus {
                conditions: Some(vec![NodeCondition { type_: "Ready".into(), status: "False".into(), ..Default::default() }]),
                ..Default::default()
            }),
        };
        assert_eq!(node_status(&node), "NotReady,SchedulingDisabled");
        assert_eq!(node_roles(&node), "control-plane,worker");
        node.status = None;
        node.spec = None;
        assert_eq!(node_status(&node), "Unknown");
    }
}
