//! `kubectl describe` (staging/src/k8s.io/kubectl/pkg/describe/describe.go): PrefixWriter
//! levels of two spaces, one tabwriter (minwidth 0, padding 2) flushed before the Events table.

use crate::args::Args;
use crate::get::{parse_targets, Filter};
use crate::printers::{self, tabwriter};
use crate::util::{self, format_label_selector, jget, jint, jstr, label_selector_json, server_error};
use crate::Output;
use kubesim_api::k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStatus, Event, Node, Pod, PodTemplateSpec, Probe, Service, Toleration, Volume,
};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubesim_api::object::{kind_info, KindInfo, Object};
use kubesim_api::quantity::{parse_milli, parse_value};
use kubesim_api::time::{human_duration, millis_of};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiServer, Request};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// describe.go's PrefixWriter: lines prefixed by two spaces per level.
#[derive(Default)]
struct Writer {
    buf: String,
    flushed: String,
}

impl Writer {
    fn w(&mut self, level: usize, text: impl AsRef<str>) {
        for _ in 0..level {
            self.buf.push_str("  ");
        }
        self.buf.push_str(text.as_ref());
    }
    fn flush(&mut self) {
        self.flushed.push_str(&tabwriter(&self.buf, 0, 2));
        self.buf.clear();
    }
    fn finish(mut self) -> String {
        self.flush();
        self.flushed
    }
}

/// RFC 1123 with numeric zone, as describe prints times.
fn rfc1123z(t: &Time) -> String {
    t.0.strftime("%a, %d %b %Y %H:%M:%S +0000").to_string()
}

fn since(t: Option<&Time>, now: Millis) -> String {
    util::age(t, now)
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "<none>"
    } else {
        s
    }
}

/// printLabelsMultiline.
fn labels_multiline(w: &mut Writer, title: &str, labels: Option<&BTreeMap<String, String>>) {
    w.w(0, format!("{title}:\t"));
    match labels.filter(|l| !l.is_empty()) {
        None => w.w(0, "<none>\n"),
        Some(l) => {
            for (i, (k, v)) in l.iter().enumerate() {
                if i != 0 {
                    w.w(0, "\t");
                }
                w.w(0, format!("{k}={v}\n"));
            }
        }
    }
}

/// printAnnotationsMultiline (skips the last-applied-configuration annotation): values longer
/// than maxAnnotationLen (140) or spanning lines go on their own lines, shortened.
fn annotations_multiline(w: &mut Writer, title: &str, annotations: Option<&BTreeMap<String, String>>) {
    const MAX: usize = 140;
    w.w(0, format!("{title}:\t"));
    let keys: Vec<(&String, &String)> = annotations.into_iter().flatten().filter(|(k, _)| k.as_str() != crate::apply::LAST_APPLIED).collect();
    if keys.is_empty() {
        w.w(0, "<none>\n");
        return;
    }
    for (i, (key, value)) in keys.iter().enumerate() {
        if i != 0 {
            w.w(0, "\t");
        }
        let value = value.strip_suffix('\n').unwrap_or(value);
        if value.len() + key.len() + 2 > MAX || value.contains('\n') {
            w.w(0, format!("{key}:\n"));
            for line in value.split('\n') {
                w.w(0, format!("\t  {}\n", shorten(line, MAX - 2)));
            }
        } else {
            w.w(0, format!("{key}: {value}\n"));
        }
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &s[..cut])
    } else {
        s.to_string()
    }
}

/// printTolerationsMultiline.
fn tolerations_multiline(w: &mut Writer, title: &str, indent: &str, tolerations: &[Toleration]) {
    w.w(0, format!("{indent}{title}:\t"));
    if tolerations.is_empty() {
        w.w(0, "<none>\n");
        return;
    }
    let mut sorted = tolerations.to_vec();
    kubesim_api::sort::sort_by(&mut sorted, |a, b| a.key.cmp(&b.key));
    for (i, t) in sorted.iter().enumerate() {
        if i != 0 {
            w.w(0, format!("{indent}\t"));
        }
        let key = t.key.clone().unwrap_or_default();
        let mut line = key.clone();
        let value = t.value.clone().unwrap_or_default();
        if !value.is_empty() {
            let _ = write!(line, "={value}");
        }
        let effect = t.effect.clone().unwrap_or_default();
        if !effect.is_empty() {
            let _ = write!(line, ":{effect}");
        }
        if t.operator.as_deref() == Some("Exists") && value.is_empty() {
            line.push_str(if !key.is_empty() || !effect.is_empty() { " op=Exists" } else { "op=Exists" });
        }
        if let Some(s) = t.toleration_seconds {
            let _ = write!(line, " for {s}s");
        }
        w.w(0, format!("{line}\n"));
    }
}

/// The Events section for an object (events whose involvedObject is the object).
fn events_for(api: &ApiServer, object: &Object) -> Vec<Event> {
    let Some(info) = kind_info("v1", "Event") else { return Vec::new() };
    let ns = if object.namespace().is_empty() { None } else { Some(object.namespace()) };
    let uid = object.metadata().uid.clone();
    let mut events: Vec<Event> = util::list(api, info, ns)
        .iter()
        .filter_map(|e| match e.as_ref() {
            Object::Event(e) => Some((**e).clone()),
            _ => None,
        })
        .filter(|e| {
            let io = &e.involved_object;
            io.name.as_deref() == Some(object.name()) && io.kind.as_deref() == Some(object.kind()) && (io.uid.is_none() || uid.is_none() || io.uid == uid)
        })
        .collect();
    let key = |e: &Event| e.last_timestamp.as_ref().or(e.first_timestamp.as_ref()).map(millis_of).unwrap_or(0);
    kubesim_api::sort::sort_by_key(&mut events, key);
    events
}

/// DescribeEvents.
fn describe_events(w: &mut Writer, events: &[Event], now: Millis) {
    if events.is_empty() {
        w.w(0, "Events:\t<none>\n");
        return;
    }
    w.flush();
    w.w(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
    w.w(1, "----\t------\t----\t----\t-------\n");
    for e in events {
        let first = match (&e.first_timestamp, &e.event_time) {
            (Some(t), _) => since(Some(t), now),
            (None, Some(t)) => human_duration(now.saturating_sub((t.0.as_millisecond() - kubesim_api::time::EPOCH_UNIX_SECONDS * 1000).max(0) as Millis)),
            _ => "<unknown>".into(),
        };
        let count = e.count.unwrap_or(1);
        let interval = if count > 1 { format!("{} (x{count} over {first})", since(e.last_timestamp.as_ref(), now)) } else { first };
        let source =
            e.source.as_ref().and_then(|s| s.component.clone()).filter(|c| !c.is_empty()).or_else(|| e.reporting_component.clone()).unwrap_or_default();
        w.w(
            1,
            format!(
                "{}\t{}\t{interval}\t{source}\t{}\n",
                e.type_.clone().unwrap_or_default(),
                e.reason.clone().unwrap_or_default(),
                e.message.clone().unwrap_or_default().trim()
            ),
        );
    }
}

fn controller_of(meta: &ObjectMeta) -> Option<String> {
    meta.owner_references.iter().flatten().find(|r| r.controller == Some(true)).map(|r| format!("{}/{}", r.kind, r.name))
}

fn describe_status(w: &mut Writer, name: &str, state: &ContainerState) {
    if let Some(r) = &state.running {
        w.w(2, format!("{name}:\tRunning\n"));
        w.w(3, format!("Started:\t{}\n", r.started_at.as_ref().map(rfc1123z).unwrap_or_default()));
    } else if let Some(wt) = &state.waiting {
        w.w(2, format!("{name}:\tWaiting\n"));
        if let Some(r) = wt.reason.as_deref().filter(|r| !r.is_empty()) {
            w.w(3, format!("Reason:\t{r}\n"));
        }
    } else if let Some(t) = &state.terminated {
        w.w(2, format!("{name}:\tTerminated\n"));
        if let Some(r) = t.reason.as_deref().filter(|r| !r.is_empty()) {
            w.w(3, format!("Reason:\t{r}\n"));
        }
        if let Some(m) = t.message.as_deref().filter(|r| !r.is_empty()) {
            w.w(3, format!("Message:\t{m}\n"));
        }
        w.w(3, format!("Exit Code:\t{}\n", t.exit_code));
        if let Some(s) = t.signal.filter(|s| *s > 0) {
            w.w(3, format!("Signal:\t{s}\n"));
        }
        w.w(3, format!("Started:\t{}\n", t.started_at.as_ref().map(rfc1123z).unwrap_or_else(|| "Mon, 01 Jan 0001 00:00:00 +0000".into())));
        w.w(3, format!("Finished:\t{}\n", t.finished_at.as_ref().map(rfc1123z).unwrap_or_else(|| "Mon, 01 Jan 0001 00:00:00 +0000".into())));
    } else {
        w.w(2, format!("{name}:\tWaiting\n"));
    }
}

fn int_or_string(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// DescribeProbe: `exec [cat /tmp/healthy] delay=5s timeout=1s period=5s #success=1 #failure=3`.
pub fn describe_probe(p: &Probe) -> String {
    let attrs = format!(
        "delay={}s timeout={}s period={}s #success={} #failure={}",
        p.initial_delay_seconds.unwrap_or(0),
        p.timeout_seconds.unwrap_or(0),
        p.period_seconds.unwrap_or(0),
        p.success_threshold.unwrap_or(0),
        p.failure_threshold.unwrap_or(0)
    );
    if let Some(e) = &p.exec {
        return format!("exec [{}] {attrs}", e.command.clone().unwrap_or_default().join(" "));
    }
    if let Some(h) = &p.http_get {
        let scheme = h.scheme.clone().unwrap_or_default().to_ascii_lowercase();
        let port = int_or_string(&h.port);
        let host = h.host.clone().unwrap_or_default();
        return format!("http-get {scheme}://{host}:{port}{} {attrs}", h.path.clone().unwrap_or_default());
    }
    if let Some(t) = &p.tcp_socket {
        return format!("tcp-socket {}:{} {attrs}", t.host.clone().unwrap_or_default(), int_or_string(&t.port));
    }
    if let Some(g) = &p.grpc {
        return format!("grpc <pod>:{} {} {attrs}", g.port, g.service.clone().unwrap_or_default());
    }
    format!("unknown {attrs}")
}

/// describeContainers.
fn describe_containers(w: &mut Writer, label: &str, containers: &[Container], statuses: &[ContainerStatus], space: &str) {
    w.w(0, format!("{space}{label}:\n"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for c in containers {
        let status = statuses.iter().find(|s| s.name == c.name);
        w.w(1, format!("{name_indent}{}:\n", c.name));
        if let Some(s) = status {
            w.w(2, format!("Container ID:\t{}\n", s.container_id.clone().unwrap_or_default()));
        }
        w.w(2, format!("Image:\t{}\n", c.image.clone().unwrap_or_default()));
        if let Some(s) = status {
            w.w(2, format!("Image ID:\t{}\n", s.image_id));
        }
        let ports: Vec<String> =
            c.ports.iter().flatten().map(|p| format!("{}/{}", p.container_port, p.protocol.clone().unwrap_or_else(|| "TCP".into()))).collect();
        let host_ports: Vec<String> =
            c.ports.iter().flatten().map(|p| format!("{}/{}", p.host_port.unwrap_or(0), p.protocol.clone().unwrap_or_else(|| "TCP".into()))).collect();
        let ports = ports.join(", ");
        let host_ports = host_ports.join(", ");
        if ports.contains(',') {
            w.w(2, format!("Ports:\t{ports}\n"));
        } else {
            w.w(2, format!("Port:\t{}\n", or_none(&ports)));
        }
        if host_ports.contains(',') {
            w.w(2, format!("Host Ports:\t{host_ports}\n"));
        } else {
            w.w(2, format!("Host Port:\t{}\n", or_none(&host_ports)));
        }
        if let Some(p) = &c.restart_policy {
            w.w(2, format!("Restart Policy:\t{p}\n"));
        }
        for (title, list) in [("Command", &c.command), ("Args", &c.args)] {
            if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
                w.w(2, format!("{title}:\n"));
                for item in list {
                    for line in item.split('\n') {
                        w.w(3, format!("{line}\n"));
                    }
                }
            }
        }
        if let Some(s) = status {
            describe_status(w, "State", &s.state.clone().unwrap_or_default());
            if let Some(last) = s.last_state.as_ref().filter(|l| l.terminated.is_some()) {
                describe_status(w, "Last State", last);
            }
            w.w(2, format!("Ready:\t{}\n", if s.ready { "True" } else { "False" }));
            w.w(2, format!("Restart Count:\t{}\n", s.restart_count));
        }
        let resources = c.resources.clone().unwrap_or_default();
        for (title, map) in [("Limits", &resources.limits), ("Requests", &resources.requests)] {
            if let Some(map) = map.as_ref().filter(|m| !m.is_empty()) {
                w.w(2, format!("{title}:\n"));
                for (k, q) in map {
                    w.w(3, format!("{k}:\t{}\n", q.0));
                }
            }
        }
        for (title, probe) in [("Liveness", &c.liveness_probe), ("Readiness", &c.readiness_probe), ("Startup", &c.startup_probe)] {
            if let Some(p) = probe {
                w.w(2, format!("{title}:\t{}\n", describe_probe(p)));
            }
        }
        if let Some(env_from) = c.env_from.as_ref().filter(|e| !e.is_empty()) {
            w.w(2, "Environment Variables from:\n");
            for e in env_from {
                let (name, kind, optional) = match (&e.config_map_ref, &e.secret_ref) {
                    (Some(cm), _) => (cm.name.clone(), "ConfigMap", cm.optional.unwrap_or(false)),
                    (None, Some(s)) => (s.name.clone(), "Secret", s.optional.unwrap_or(false)),
                    _ => continue,
                };
                match e.prefix.as_deref().filter(|p| !p.is_empty()) {
                    Some(p) => w.w(3, format!("{name}\t{kind} with prefix '{p}'\tOptional: {optional}\n")),
                    None => w.w(3, format!("{name}\t{kind}\tOptional: {optional}\n")),
                }
            }
        }
        let env = c.env.clone().unwrap_or_default();
        w.w(2, format!("Environment:{}\n", if env.is_empty() { "\t<none>" } else { "" }));
        for e in &env {
            match &e.value_from {
                None => {
                    for (i, line) in e.value.clone().unwrap_or_default().split('\n').enumerate() {
                        if i == 0 {
                            w.w(3, format!("{}:\t{line}\n", e.name));
                        } else {
                            w.w(3, format!("\t{line}\n"));
                        }
                    }
                }
                Some(v) => {
                    if let Some(f) = &v.field_ref {
                        w.w(3, format!("{}:\t (v1:{})\n", e.name, f.field_path));
                    } else if let Some(r) = &v.resource_field_ref {
                        w.w(3, format!("{}:\t ({})\n", e.name, r.resource));
                    } else if let Some(s) = &v.secret_key_ref {
                        w.w(3, format!("{}:\t<set to the key '{}' in secret '{}'>\tOptional: {}\n", e.name, s.key, s.name, s.optional.unwrap_or(false)));
                    } else if let Some(cm) = &v.config_map_key_ref {
                        w.w(3, format!("{}:\t<set to the key '{}' of config map '{}'>\tOptional: {}\n", e.name, cm.key, cm.name, cm.optional.unwrap_or(false)));
                    }
                }
            }
        }
        let mut mounts = c.volume_mounts.clone().unwrap_or_default();
        kubesim_api::sort::sort_by(&mut mounts, |a, b| a.mount_path.cmp(&b.mount_path));
        w.w(2, format!("Mounts:{}\n", if mounts.is_empty() { "\t<none>" } else { "" }));
        for m in &mounts {
            let mut flags = vec![if m.read_only == Some(true) { "ro".to_string() } else { "rw".to_string() }];
            if let Some(sp) = m.sub_path.as_deref().filter(|s| !s.is_empty()) {
                flags.push(format!("path={sp:?}"));
            }
            w.w(3, format!("{} from {} ({})\n", m.mount_path, m.name, flags.join(",")));
        }
    }
}

/// describeVolumes.
fn describe_volumes(w: &mut Writer, volumes: &[Volume], space: &str) {
    if volumes.is_empty() {
        w.w(0, format!("{space}Volumes:\t<none>\n"));
        return;
    }
    w.w(0, format!("{space}Volumes:\n"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for v in volumes {
        w.w(1, format!("{name_indent}{}:\n", v.name));
        if let Some(h) = &v.host_path {
            w.w(
                2,
                format!("Type:\tHostPath (bare host directory volume)\n    Path:\t{}\n    HostPathType:\t{}\n", h.path, h.type_.clone().unwrap_or_default()),
            );
        } else if let Some(e) = &v.empty_dir {
            w.w(
                2,
                format!(
                    "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t{}\n    SizeLimit:\t{}\n",
                    e.medium.clone().unwrap_or_default(),
                    e.size_limit.as_ref().map(|q| q.0.clone()).unwrap_or_else(|| "<unset>".into())
                ),
            );
        } else if let Some(s) = &v.secret {
            w.w(
                2,
                format!(
                    "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t{}\n    Optional:\t{}\n",
                    s.secret_name.clone().unwrap_or_default(),
                    s.optional.unwrap_or(false)
                ),
            );
        } else if let Some(cm) = &v.config_map {
            w.w(2, format!("Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t{}\n    Optional:\t{}\n", cm.name, cm.optional.unwrap_or(false)));
        } else if let Some(pvc) = &v.persistent_volume_claim {
            w.w(
                2,
                format!(
                    "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t{}\n    ReadOnly:\t{}\n",
                    pvc.claim_name,
                    pvc.read_only.unwrap_or(false)
                ),
            );
        } else if let Some(p) = &v.projected {
            w.w(2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n");
            for source in p.sources.iter().flatten() {
                if let Some(s) = &source.secret {
                    w.w(2, format!("SecretName:\t{}\n    Optional:\t{}\n", s.name, s.optional.unwrap_or(false)));
                } else if source.downward_api.is_some() {
                    w.w(2, "DownwardAPI:\ttrue\n");
                } else if let Some(cm) = &source.config_map {
                    w.w(2, format!("ConfigMapName:\t{}\n    Optional:\t{}\n", cm.name, cm.optional.unwrap_or(false)));
                } else if let Some(t) = &source.service_account_token {
                    w.w(2, format!("TokenExpirationSeconds:\t{}\n", t.expiration_seconds.unwrap_or(3600)));
                }
            }
        } else if let Some(d) = &v.downward_api {
            w.w(2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n");
            for item in d.items.iter().flatten() {
                if let Some(f) = &item.field_ref {
                    w.w(0, format!("      {} -> {}\n", f.field_path, item.path));
                }
                if let Some(r) = &item.resource_field_ref {
                    w.w(0, format!("      {} -> {}\n", r.resource, item.path));
                }
            }
        } else if let Some(n) = &v.nfs {
            w.w(
                2,
                format!(
                    "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t{}\n    Path:\t{}\n    ReadOnly:\t{}\n",
                    n.server,
                    n.path,
                    n.read_only.unwrap_or(false)
                ),
            );
        } else {
            w.w(2, "<unknown>\n");
        }
    }
}

/// DescribePodTemplate, as rollout history and workload describes print it.
pub fn pod_template(template: &PodTemplateSpec) -> String {
    let mut w = Writer::default();
    write_pod_template(&mut w, template);
    w.finish()
}

fn write_pod_template(w: &mut Writer, template: &PodTemplateSpec) {
    w.w(0, "Pod Template:\n");
    let meta = template.metadata.clone().unwrap_or_default();
    w.w(0, "  ");
    labels_multiline(w, "Labels", meta.labels.as_ref());
    if meta.annotations.as_ref().is_some_and(|a| !a.is_empty()) {
        w.w(0, "  ");
        annotations_multiline(w, "Annotations", meta.annotations.as_ref());
    }
    let spec = template.spec.clone().unwrap_or_default();
    if let Some(sa) = spec.service_account_name.as_deref().filter(|s| !s.is_empty()) {
        w.w(0, format!("  Service Account:\t{sa}\n"));
    }
    if let Some(init) = spec.init_containers.as_ref().filter(|i| !i.is_empty()) {
        describe_containers(w, "Init Containers", init, &[], "  ");
    }
    describe_containers(w, "Containers", &spec.containers, &[], "  ");
    describe_volumes(w, spec.volumes.as_deref().unwrap_or_default(), "  ");
    if let Some(pc) = spec.priority_class_name.as_deref().filter(|s| !s.is_empty()) {
        w.w(0, format!("  Priority Class Name:\t{pc}\n"));
    }
    w.w(0, "  ");
    labels_multiline(w, "Node-Selectors", spec.node_selector.as_ref());
    tolerations_multiline(w, "Tolerations", "  ", spec.tolerations.as_deref().unwrap_or_default());
}

fn describe_pod(api: &ApiServer, pod: &Pod, object: &Object, now: Millis) -> String {
    let mut w = Writer::default();
    let meta = &pod.metadata;
    let spec = pod.spec.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    w.w(0, format!("Name:\t{}\n", meta.name.clone().unwrap_or_default()));
    w.w(0, format!("Namespace:\t{}\n", meta.namespace.clone().unwrap_or_default()));
    if let Some(p) = spec.priority {
        w.w(0, format!("Priority:\t{p}\n"));
    }
    if let Some(pc) = spec.priority_class_name.as_deref().filter(|s| !s.is_empty()) {
        w.w(0, format!("Priority Class Name:\t{pc}\n"));
    }
    if let Some(rc) = spec.runtime_class_name.as_deref().filter(|s| !s.is_empty()) {
        w.w(0, format!("Runtime Class Name:\t{rc}\n"));
    }
    if let Some(sa) = spec.service_account_name.as_deref().filter(|s| !s.is_empty()) {
        w.w(0, format!("Service Account:\t{sa}\n"));
    }
    match spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        None => w.w(0, "Node:\t<none>\n"),
        Some(n) => w.w(0, format!("Node:\t{n}/{}\n", status.host_ip.clone().unwrap_or_default())),
    }
    if let Some(t) = &status.start_time {
        w.w(0, format!("Start Time:\t{}\n", rfc1123z(t)));
    }
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    let phase = status.phase.clone().unwrap_or_default();
    if meta.deletion_timestamp.is_some() && phase != "Failed" && phase != "Succeeded" {
        w.w(0, format!("Status:\tTerminating (lasts {})\n", since(meta.deletion_timestamp.as_ref(), now)));
        w.w(0, format!("Termination Grace Period:\t{}s\n", meta.deletion_grace_period_seconds.unwrap_or(0)));
    } else {
        w.w(0, format!("Status:\t{phase}\n"));
    }
    if let Some(r) = status.reason.as_deref().filter(|s| !s.is_empty()) {
        w.w(0, format!("Reason:\t{r}\n"));
    }
    if let Some(m) = status.message.as_deref().filter(|s| !s.is_empty()) {
        w.w(0, format!("Message:\t{m}\n"));
    }
    w.w(0, format!("IP:\t{}\n", status.pod_ip.clone().unwrap_or_default()));
    let ips = status.pod_ips.clone().unwrap_or_default();
    if ips.is_empty() {
        w.w(0, "IPs:\t<none>\n");
    } else {
        w.w(0, "IPs:\n");
        for ip in ips {
            w.w(0, format!("  IP:\t{}\n", ip.ip));
        }
    }
    if let Some(c) = controller_of(meta) {
        w.w(0, format!("Controlled By:\t{c}\n"));
    }
    if let Some(n) = status.nominated_node_name.as_deref().filter(|s| !s.is_empty()) {
        w.w(0, format!("NominatedNodeName:\t{n}\n"));
    }
    if let Some(init) = spec.init_containers.as_ref().filter(|i| !i.is_empty()) {
        describe_containers(&mut w, "Init Containers", init, status.init_container_statuses.as_deref().unwrap_or_default(), "");
    }
    describe_containers(&mut w, "Containers", &spec.containers, status.container_statuses.as_deref().unwrap_or_default(), "");
    if let Some(ephemeral) = spec.ephemeral_containers.as_ref().filter(|e| !e.is_empty()) {
        let as_containers: Vec<Container> = ephemeral.iter().map(kubesim_api::pod::ephemeral_as_container).collect();
        describe_containers(&mut w, "Ephemeral Containers", &as_containers, status.ephemeral_container_statuses.as_deref().unwrap_or_default(), "");
    }
    if let Some(gates) = spec.readiness_gates.as_ref().filter(|g| !g.is_empty()) {
        w.w(0, "Readiness Gates:\n  Type\tStatus\n");
        for g in gates {
            let s = status.conditions.iter().flatten().find(|c| c.type_ == g.condition_type).map(|c| c.status.clone()).unwrap_or_else(|| "<none>".into());
            w.w(1, format!("{} \t{s} \n", g.condition_type));
        }
    }
    if let Some(conditions) = status.conditions.as_ref().filter(|c| !c.is_empty()) {
        w.w(0, "Conditions:\n  Type\tStatus\n");
        for c in conditions {
            w.w(1, format!("{} \t{} \n", c.type_, c.status));
        }
    }
    describe_volumes(&mut w, spec.volumes.as_deref().unwrap_or_default(), "");
    let qos = status.qos_class.clone().unwrap_or_else(|| kubesim_api::pod::qos_class(pod).to_string());
    w.w(0, format!("QoS Class:\t{qos}\n"));
    labels_multiline(&mut w, "Node-Selectors", spec.node_selector.as_ref());
    tolerations_multiline(&mut w, "Tolerations", "", spec.tolerations.as_deref().unwrap_or_default());
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn describe_deployment(api: &ApiServer, object: &Object, now: Millis) -> String {
    let Object::Deployment(d) = object else { return String::new() };
    let mut w = Writer::default();
    let spec = d.spec.clone().unwrap_or_default();
    let status = d.status.clone().unwrap_or_default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    w.w(0, format!("CreationTimestamp:\t{}\n", d.metadata.creation_timestamp.as_ref().map(rfc1123z).unwrap_or_default()));
    labels_multiline(&mut w, "Labels", d.metadata.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", d.metadata.annotations.as_ref());
    w.w(0, format!("Selector:\t{}\n", format_label_selector(Some(&spec.selector))));
    let replicas = spec.replicas.unwrap_or(1);
    w.w(
        0,
        format!(
            "Replicas:\t{replicas} desired | {} updated | {} total | {} available | {} unavailable\n",
            status.updated_replicas.unwrap_or(0),
            status.replicas.unwrap_or(0),
            status.available_replicas.unwrap_or(0),
            status.unavailable_replicas.unwrap_or(0)
        ),
    );
    let strategy = spec.strategy.clone().unwrap_or_default();
    w.w(0, format!("StrategyType:\t{}\n", strategy.type_.clone().unwrap_or_default()));
    w.w(0, format!("MinReadySeconds:\t{}\n", spec.min_ready_seconds.unwrap_or(0)));
    if let Some(ru) = &strategy.rolling_update {
        w.w(
            0,
            format!(
                "RollingUpdateStrategy:\t{} max unavailable, {} max surge\n",
                ru.max_unavailable.as_ref().map(int_or_string).unwrap_or_default(),
                ru.max_surge.as_ref().map(int_or_string).unwrap_or_default()
            ),
        );
    }
    write_pod_template(&mut w, &spec.template);
    if let Some(conditions) = status.conditions.as_ref().filter(|c| !c.is_empty()) {
        w.w(0, "Conditions:\n  Type\tStatus\tReason\n");
        w.w(1, "----\t------\t------\n");
        for c in conditions {
            w.w(1, format!("{} \t{}\t{}\n", c.type_, c.status, c.reason.clone().unwrap_or_default()));
        }
    }
    // Old and new ReplicaSets (deploymentutil.GetAllReplicaSets).
    let uid = d.metadata.uid.clone().unwrap_or_default();
    let rs_info = kind_info("apps/v1", "ReplicaSet").expect("replicasets");
    let owned: Vec<Arc<Object>> = util::list(api, rs_info, Some(object.namespace()))
        .into_iter()
        .filter(|rs| rs.metadata().owner_references.iter().flatten().any(|r| r.uid == uid && r.controller == Some(true)))
        .collect();
    let mut template = spec.template.clone();
    if let Some(l) = template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        l.remove("pod-template-hash");
    }
    let template_matches = |rs: &Object| {
        let Object::ReplicaSet(rs) = rs else { return false };
        let mut t = rs.spec.as_ref().and_then(|s| s.template.clone()).unwrap_or_default();
        if let Some(l) = t.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
            l.remove("pod-template-hash");
        }
        t == template
    };
    let new_rs = owned.iter().find(|rs| template_matches(rs)).cloned();
    let rs_line = |rs: &Object| {
        let Object::ReplicaSet(r) = rs else { return String::new() };
        format!(
            "{} ({}/{} replicas created)",
            rs.name(),
            r.status.as_ref().map(|s| s.replicas).unwrap_or(0),
            r.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0)
        )
    };
    let old: Vec<String> = owned
        .iter()
        .filter(|rs| new_rs.as_ref().is_none_or(|n| n.name() != rs.name()))
        // FindOldReplicaSets' "required" sets: spec.replicas != 0.
        .filter(|rs| match rs.as_ref() {
            Object::ReplicaSet(r) => r.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1) != 0,
            _ => false,
        })
        .map(|rs| rs_line(rs))
        .collect();
    w.w(0, format!("OldReplicaSets:\t{}\n", if old.is_empty() { "<none>".to_string() } else { old.join(", ") }));
    w.w(0, format!("NewReplicaSet:\t{}\n", new_rs.as_ref().map(|rs| rs_line(rs)).unwrap_or_else(|| "<none>".into())));
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn pods_status(api: &ApiServer, namespace: &str, selector: &kubesim_api::selector::Selector, owner_uid: Option<&str>) -> (usize, usize, usize, usize, usize) {
    let pod_info = kind_info("v1", "Pod").expect("pods");
    let (mut running, mut waiting, mut succeeded, mut failed, mut ready) = (0, 0, 0, 0, 0);
    for p in util::list(api, pod_info, Some(namespace)) {
        if !selector.matches(p.metadata().labels.as_ref()) {
            continue;
        }
        if let Some(uid) = owner_uid {
            if !p.metadata().owner_references.iter().flatten().any(|r| r.uid == uid) {
                continue;
            }
        }
        let Some(pod) = p.as_pod() else { continue };
        let status = pod.status.clone().unwrap_or_default();
        match status.phase.as_deref() {
            Some("Running") => running += 1,
            Some("Pending") => waiting += 1,
            Some("Succeeded") => succeeded += 1,
            Some("Failed") => failed += 1,
            _ => {}
        }
        if status.conditions.iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True") {
            ready += 1;
        }
    }
    (running, waiting, succeeded, failed, ready)
}

fn describe_replica_set(api: &ApiServer, object: &Object, now: Millis) -> String {
    let Object::ReplicaSet(rs) = object else { return String::new() };
    let mut w = Writer::default();
    let spec = rs.spec.clone().unwrap_or_default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    w.w(0, format!("Selector:\t{}\n", format_label_selector(Some(&spec.selector))));
    labels_multiline(&mut w, "Labels", rs.metadata.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", rs.metadata.annotations.as_ref());
    if let Some(c) = controller_of(&rs.metadata) {
        w.w(0, format!("Controlled By:\t{c}\n"));
    }
    w.w(0, format!("Replicas:\t{} current / {} desired\n", rs.status.as_ref().map(|s| s.replicas).unwrap_or(0), spec.replicas.unwrap_or(1)));
    let selector = kubesim_api::selector::Selector::from_label_selector(&spec.selector);
    let (running, waiting, succeeded, failed, _) = pods_status(api, object.namespace(), &selector, rs.metadata.uid.as_deref());
    w.w(0, format!("Pods Status:\t{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed\n"));
    write_pod_template(&mut w, &spec.template.clone().unwrap_or_default());
    if let Some(conditions) = rs.status.as_ref().and_then(|s| s.conditions.as_ref()).filter(|c| !c.is_empty()) {
        w.w(0, "Conditions:\n  Type\tStatus\tReason\n");
        w.w(1, "----\t------\t------\n");
        for c in conditions {
            w.w(1, format!("{} \t{}\t{}\n", c.type_, c.status, c.reason.clone().unwrap_or_default()));
        }
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn describe_service(api: &ApiServer, svc: &Service, object: &Object, now: Millis) -> String {
    let mut w = Writer::default();
    let spec = svc.spec.clone().unwrap_or_default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", svc.metadata.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", svc.metadata.annotations.as_ref());
    w.w(0, format!("Selector:\t{}\n", util::format_labels(spec.selector.as_ref())));
    let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
    w.w(0, format!("Type:\t{type_}\n"));
    if let Some(p) = &spec.ip_family_policy {
        w.w(0, format!("IP Family Policy:\t{p}\n"));
    }
    if let Some(f) = spec.ip_families.as_ref().filter(|f| !f.is_empty()) {
        w.w(0, format!("IP Families:\t{}\n", f.join(",")));
    } else {
        w.w(0, "IP Families:\t<none>\n");
    }
    let ip = spec.cluster_ip.clone().unwrap_or_default();
    w.w(0, format!("IP:\t{}\n", or_none(&ip)));
    let ips = spec.cluster_ips.clone().unwrap_or_default();
    if !ips.is_empty() {
        w.w(0, format!("IPs:\t{}\n", ips.join(",")));
    } else {
        w.w(0, "IPs:\t<none>\n");
    }
    if let Some(ext) = spec.external_ips.as_ref().filter(|e| !e.is_empty()) {
        w.w(0, format!("External IPs:\t{}\n", ext.join(",")));
    }
    if let Some(lb) = svc.status.as_ref().and_then(|s| s.load_balancer.as_ref()).and_then(|l| l.ingress.as_ref()).filter(|i| !i.is_empty()) {
        let list: Vec<String> = lb.iter().filter_map(|i| i.ip.clone().or_else(|| i.hostname.clone())).collect();
        w.w(0, format!("LoadBalancer Ingress:\t{}\n", list.join(", ")));
    }
    if type_ == "ExternalName" {
        w.w(0, format!("External Name:\t{}\n", spec.external_name.clone().unwrap_or_default()));
    }
    let endpoints = service_endpoints(api, object);
    for p in spec.ports.iter().flatten() {
        let name = p.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "<unset>".into());
        let protocol = p.protocol.clone().unwrap_or_else(|| "TCP".into());
        w.w(0, format!("Port:\t{name}\t{}/{protocol}\n", p.port));
        let target = p.target_port.as_ref().map(int_or_string).unwrap_or_else(|| p.port.to_string());
        w.w(0, format!("TargetPort:\t{target}/{protocol}\n"));
        if let Some(np) = p.node_port.filter(|n| *n != 0) {
            w.w(0, format!("NodePort:\t{name}\t{np}/{protocol}\n"));
        }
        let cell = match &endpoints {
            None => "<none>".to_string(),
            Some(map) => format_endpoint_list(&map.get(&p.name.clone().unwrap_or_default()).cloned().unwrap_or_default()),
        };
        w.w(0, format!("Endpoints:\t{cell}\n"));
    }
    if spec.ports.as_ref().is_none_or(|p| p.is_empty()) {
        let eps = endpoints.iter().flat_map(|m| m.values().flatten().cloned()).collect::<Vec<_>>();
        w.w(0, format!("Endpoints:\t{}\n", if eps.is_empty() { "<none>".to_string() } else { format_endpoint_list(&eps) }));
    }
    w.w(0, format!("Session Affinity:\t{}\n", spec.session_affinity.clone().unwrap_or_else(|| "None".into())));
    if let Some(p) = &spec.external_traffic_policy {
        w.w(0, format!("External Traffic Policy:\t{p}\n"));
    }
    if let Some(p) = &spec.internal_traffic_policy {
        w.w(0, format!("Internal Traffic Policy:\t{p}\n"));
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn format_endpoint_list(eps: &[String]) -> String {
    if eps.len() > 3 {
        format!("{} + {} more...", eps[..3].join(","), eps.len() - 3)
    } else {
        eps.join(",")
    }
}

/// Ready endpoints of a service by port name, from its EndpointSlices (or Endpoints); None when
/// the service has neither (describe prints `<none>`).
fn service_endpoints(api: &ApiServer, svc: &Object) -> Option<BTreeMap<String, Vec<String>>> {
    let mut result: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut found = false;
    if let Some(info) = kind_info("discovery.k8s.io/v1", "EndpointSlice") {
        for slice in util::list(api, info, Some(svc.namespace())) {
            if slice.metadata().labels.as_ref().and_then(|l| l.get("kubernetes.io/service-name")).map(String::as_str) != Some(svc.name()) {
                continue;
            }
            found = true;
            let json = slice.to_json();
            let ports: Vec<(String, i64)> = jget(&json, "ports")
                .and_then(|p| p.as_array())
                .into_iter()
                .flatten()
                .map(|p| (p.get("name").and_then(|n| n.as_str()).unwrap_or("").to_string(), p.get("port").and_then(|n| n.as_i64()).unwrap_or(0)))
                .collect();
            for ep in jget(&json, "endpoints").and_then(|e| e.as_array()).into_iter().flatten() {
                let ready = ep.pointer("/conditions/ready").and_then(|r| r.as_bool()).unwrap_or(true);
                if !ready {
                    continue;
                }
                for addr in ep.get("addresses").and_then(|a| a.as_array()).into_iter().flatten().filter_map(|a| a.as_str()) {
                    for (name, port) in &ports {
                        result.entry(name.clone()).or_default().push(format!("{addr}:{port}"));
                    }
                }
            }
        }
    }
    if result.is_empty() {
        if let Some(info) = kind_info("v1", "Endpoints") {
            if let Ok(ep) = api.get(info, svc.namespace(), svc.name()) {
                found = true;
                let json = ep.to_json();
                for subset in jget(&json, "subsets").and_then(|s| s.as_array()).into_iter().flatten() {
                    let addrs: Vec<&str> =
                        subset.get("addresses").and_then(|a| a.as_array()).into_iter().flatten().filter_map(|a| a.get("ip").and_then(|i| i.as_str())).collect();
                    for p in subset.get("ports").and_then(|p| p.as_array()).into_iter().flatten() {
                        let name = p.get("name").and_then(|n| n.as_str()).unwrap_or("").to_string();
                        let port = p.get("port").and_then(|n| n.as_i64()).unwrap_or(0);
                        for a in &addrs {
                            result.entry(name.clone()).or_default().push(format!("{a}:{port}"));
                        }
                    }
                }
            }
        }
    }
    found.then_some(result)
}

fn percent(used: i128, total: i128) -> i128 {
    if total == 0 {
        0
    } else {
        used * 100 / total
    }
}

fn describe_node(api: &ApiServer, node: &Node, object: &Object, now: Millis) -> String {
    let mut w = Writer::default();
    let spec = node.spec.clone().unwrap_or_default();
    let status = node.status.clone().unwrap_or_default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Roles:\t{}\n", printers::node_roles(node)));
    labels_multiline(&mut w, "Labels", node.metadata.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", node.metadata.annotations.as_ref());
    w.w(0, format!("CreationTimestamp:\t{}\n", node.metadata.creation_timestamp.as_ref().map(rfc1123z).unwrap_or_default()));
    let taints = spec.taints.clone().unwrap_or_default();
    w.w(0, "Taints:\t");
    if taints.is_empty() {
        w.w(0, "<none>\n");
    }
    for (i, t) in taints.iter().enumerate() {
        if i != 0 {
            w.w(0, "\t");
        }
        let value = t.value.as_deref().filter(|v| !v.is_empty()).map(|v| format!("={v}")).unwrap_or_default();
        w.w(0, format!("{}{value}:{}\n", t.key, t.effect));
    }
    w.w(0, format!("Unschedulable:\t{}\n", spec.unschedulable.unwrap_or(false)));
    if let Some(info) = kind_info("coordination.k8s.io/v1", "Lease") {
        if let Ok(lease) = api.get(info, "kube-node-lease", object.name()) {
            if let Object::Lease(l) = lease.as_ref() {
                let s = l.spec.clone().unwrap_or_default();
                w.w(0, "Lease:\n");
                w.w(1, format!("HolderIdentity:\t{}\n", s.holder_identity.clone().unwrap_or_else(|| "<unset>".into())));
                w.w(
                    1,
                    format!(
                        "AcquireTime:\t{}\n",
                        s.acquire_time.as_ref().map(|t| t.0.strftime("%a, %d %b %Y %H:%M:%S +0000").to_string()).unwrap_or_else(|| "<unset>".into())
                    ),
                );
                w.w(
                    1,
                    format!(
                        "RenewTime:\t{}\n",
                        s.renew_time.as_ref().map(|t| t.0.strftime("%a, %d %b %Y %H:%M:%S +0000").to_string()).unwrap_or_else(|| "<unset>".into())
                    ),
                );
            }
        }
    }
    if let Some(conditions) = status.conditions.as_ref().filter(|c| !c.is_empty()) {
        w.w(0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n");
        w.w(1, "----\t------\t-----------------\t------------------\t------\t-------\n");
        for c in conditions {
            w.w(
                1,
                format!(
                    "{} \t{} \t{} \t{} \t{} \t{}\n",
                    c.type_,
                    c.status,
                    c.last_heartbeat_time.as_ref().map(rfc1123z).unwrap_or_default(),
                    c.last_transition_time.as_ref().map(rfc1123z).unwrap_or_default(),
                    c.reason.clone().unwrap_or_default(),
                    c.message.clone().unwrap_or_default()
                ),
            );
        }
    }
    w.w(0, "Addresses:\n");
    for a in status.addresses.iter().flatten() {
        w.w(0, format!("  {}:\t{}\n", a.type_, a.address));
    }
    for (title, map) in [("Capacity", &status.capacity), ("Allocatable", &status.allocatable)] {
        if let Some(map) = map.as_ref().filter(|m| !m.is_empty()) {
            w.w(0, format!("{title}:\n"));
            for (k, q) in map {
                w.w(0, format!("  {k}:\t{}\n", q.0));
            }
        }
    }
    let info = status.node_info.clone().unwrap_or_default();
    w.w(0, "System Info:\n");
    for (k, v) in [
        ("Machine ID", info.machine_id.clone()),
        ("System UUID", info.system_uuid.clone()),
        ("Boot ID", info.boot_id.clone()),
        ("Kernel Version", info.kernel_version.clone()),
        ("OS Image", info.os_image.clone()),
        ("Operating System", info.operating_system.clone()),
        ("Architecture", info.architecture.clone()),
        ("Container Runtime Version", info.container_runtime_version.clone()),
        ("Kubelet Version", info.kubelet_version.clone()),
        ("Kube-Proxy Version", info.kube_proxy_version.clone()),
    ] {
        w.w(0, format!("  {k}:\t{v}\n"));
    }
    if let Some(cidr) = spec.pod_cidr.as_deref().filter(|c| !c.is_empty()) {
        w.w(0, format!("PodCIDR:\t{cidr}\n"));
        w.w(0, format!("PodCIDRs:\t{}\n", spec.pod_cidrs.clone().unwrap_or_default().join(",")));
    }
    if let Some(p) = spec.provider_id.as_deref().filter(|c| !c.is_empty()) {
        w.w(0, format!("ProviderID:\t{p}\n"));
    }
    // Non-terminated pods and allocated resources.
    let alloc = status.allocatable.clone().unwrap_or_default();
    let cpu_alloc = alloc.get("cpu").and_then(|q| parse_milli(&q.0).ok()).unwrap_or(0);
    let mem_alloc = alloc.get("memory").and_then(|q| parse_value(&q.0).ok()).unwrap_or(0);
    let pods: Vec<Arc<Object>> = api
        .store()
        .pods_on_node(object.name())
        .filter(|p| !matches!(p.as_pod().and_then(|p| p.status.as_ref()).and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed")))
        .cloned()
        .collect();
    w.w(0, format!("Non-terminated Pods:\t({} in total)\n", pods.len()));
    w.w(0, "  Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n");
    w.w(0, "  ---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n");
    let (mut cpu_req_total, mut cpu_lim_total, mut mem_req_total, mut mem_lim_total) = (0i128, 0i128, 0i128, 0i128);
    for p in &pods {
        let Some(pod) = p.as_pod() else { continue };
        let (cr, cl, mr, ml) = pod_requests_limits(pod);
        cpu_req_total += cr;
        cpu_lim_total += cl;
        mem_req_total += mr;
        mem_lim_total += ml;
        w.w(
            0,
            format!(
                "  {}\t{}\t\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{}\n",
                p.namespace(),
                p.name(),
                fmt_cpu(cr),
                percent(cr, cpu_alloc),
                fmt_cpu(cl),
                percent(cl, cpu_alloc),
                fmt_mem(mr),
                percent(mr, mem_alloc),
                fmt_mem(ml),
                percent(ml, mem_alloc),
                since(pod.metadata.creation_timestamp.as_ref(), now)
            ),
        );
    }
    w.w(0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n");
    w.w(0, "  Resource\tRequests\tLimits\n");
    w.w(0, "  --------\t--------\t------\n");
    w.w(
        0,
        format!(
            "  cpu\t{} ({}%)\t{} ({}%)\n",
            fmt_cpu(cpu_req_total),
            percent(cpu_req_total, cpu_alloc),
            fmt_cpu(cpu_lim_total),
            percent(cpu_lim_total, cpu_alloc)
        ),
    );
    w.w(
        0,
        format!(
            "  memory\t{} ({}%)\t{} ({}%)\n",
            fmt_mem(mem_req_total),
            percent(mem_req_total, mem_alloc),
            fmt_mem(mem_lim_total),
            percent(mem_lim_total, mem_alloc)
        ),
    );
    w.w(0, "  ephemeral-storage\t0 (0%)\t0 (0%)\n");
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn fmt_cpu(milli: i128) -> String {
    if milli == 0 {
        "0".into()
    } else {
        kubesim_api::quantity::format_cpu_milli(milli)
    }
}

fn fmt_mem(bytes: i128) -> String {
    if bytes == 0 {
        "0".into()
    } else {
        kubesim_api::quantity::format_bytes(bytes)
    }
}

/// Pod requests/limits for cpu (milli) and memory (bytes), as resourcehelper.PodRequestsAndLimits.
fn pod_requests_limits(pod: &Pod) -> (i128, i128, i128, i128) {
    let requests = kubesim_api::resources::pod_requests(pod).requests;
    let limits = kubesim_api::resources::pod_limits(pod);
    (requests.milli_cpu as i128, limits.milli_cpu as i128, requests.memory as i128, limits.memory as i128)
}

fn describe_job(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let mut w = Writer::default();
    let meta = object.metadata();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    // Jobs without a manual selector select their pods by controller uid (generateSelector).
    let selector = label_selector_json(jget(&json, "spec.selector")).or_else(|| {
        meta.uid.as_ref().map(|uid| kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
            match_labels: Some([("batch.kubernetes.io/controller-uid".to_string(), uid.clone())].into()),
            match_expressions: None,
        })
    });
    w.w(0, format!("Selector:\t{}\n", format_label_selector(selector.as_ref())));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    if let Some(c) = controller_of(meta) {
        w.w(0, format!("Controlled By:\t{c}\n"));
    }
    // SetDefaults_Job: completions and parallelism default to 1 when both are unset.
    let parallelism = jget(&json, "spec.parallelism").and_then(|v| v.as_i64());
    let completions = jget(&json, "spec.completions").and_then(|v| v.as_i64()).or(if parallelism.is_none() { Some(1) } else { None });
    w.w(0, format!("Parallelism:\t{}\n", parallelism.unwrap_or(1)));
    match completions {
        Some(c) => w.w(0, format!("Completions:\t{c}\n")),
        None => w.w(0, "Completions:\t<unset>\n"),
    }
    w.w(0, format!("Completion Mode:\t{}\n", jstr(&json, "spec.completionMode").unwrap_or("NonIndexed")));
    w.w(0, format!("Suspend:\t{}\n", jget(&json, "spec.suspend").and_then(|v| v.as_bool()).unwrap_or(false)));
    w.w(0, format!("Backoff Limit:\t{}\n", jget(&json, "spec.backoffLimit").and_then(|v| v.as_i64()).unwrap_or(6)));
    if let Some(ttl) = jget(&json, "spec.ttlSecondsAfterFinished").and_then(|v| v.as_i64()) {
        w.w(0, format!("TTL Seconds After Finished:\t{ttl}\n"));
    }
    let start: Option<Time> = jget(&json, "status.startTime").and_then(|v| serde_json::from_value(v.clone()).ok());
    let completion: Option<Time> = jget(&json, "status.completionTime").and_then(|v| serde_json::from_value(v.clone()).ok());
    if let Some(s) = &start {
        w.w(0, format!("Start Time:\t{}\n", rfc1123z(s)));
    }
    if let Some(c) = &completion {
        w.w(0, format!("Completed At:\t{}\n", rfc1123z(c)));
    }
    if let (Some(s), Some(c)) = (&start, &completion) {
        w.w(0, format!("Duration:\t{}\n", human_duration(millis_of(c).saturating_sub(millis_of(s)))));
    }
    if let Some(d) = jget(&json, "spec.activeDeadlineSeconds").and_then(|v| v.as_i64()) {
        w.w(0, format!("Active Deadline Seconds:\t{d}s\n"));
    }
    let (active, succeeded, failed) = (jint(&json, "status.active"), jint(&json, "status.succeeded"), jint(&json, "status.failed"));
    match jget(&json, "status.ready").and_then(|v| v.as_i64()) {
        Some(ready) => w.w(0, format!("Pods Statuses:\t{active} Active ({ready} Ready) / {succeeded} Succeeded / {failed} Failed\n")),
        None => w.w(0, format!("Pods Statuses:\t{active} Active / {succeeded} Succeeded / {failed} Failed\n")),
    }
    if jstr(&json, "spec.completionMode") == Some("Indexed") {
        w.w(0, format!("Completed Indexes:\t{}\n", cap_indexes_list_or_none(jstr(&json, "status.completedIndexes").unwrap_or(""), 50)));
    }
    let template: PodTemplateSpec = jget(&json, "spec.template").and_then(|t| serde_json::from_value(t.clone()).ok()).unwrap_or_default();
    write_pod_template(&mut w, &template);
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describe.go capIndexesListOrNone: the interval list up to the first comma past `soft_limit`.
fn cap_indexes_list_or_none(indexes: &str, soft_limit: usize) -> String {
    if indexes.is_empty() {
        return "<none>".into();
    }
    match indexes.bytes().enumerate().skip(soft_limit).find(|(_, b)| *b == b',') {
        Some((ix, _)) => format!("{}...", &indexes[..=ix]),
        None => indexes.to_string(),
    }
}

fn describe_namespace(api: &ApiServer, object: &Object, now: Millis) -> String {
    let mut w = Writer::default();
    let meta = object.metadata();
    w.w(0, format!("Name:\t{}\n", object.name()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    let phase = object.to_json().pointer("/status/phase").and_then(|p| p.as_str()).unwrap_or("").to_string();
    w.w(0, format!("Status:\t{phase}\n"));
    w.w(0, "\n");
    let quotas = kind_info("v1", "ResourceQuota").map(|i| util::list(api, i, Some(object.name()))).unwrap_or_default();
    resource_quotas_section(&mut w, &quotas);
    w.w(0, "\n");
    let limits = kind_info("v1", "LimitRange").map(|i| util::list(api, i, Some(object.name()))).unwrap_or_default();
    if limits.is_empty() {
        w.w(0, "No LimitRange resource.\n");
    } else {
        // DescribeLimitRanges: one space before each column row, not a PrefixWriter level.
        w.w(0, "Resource Limits\n Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n");
        w.w(0, " ----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n");
        for l in limits {
            limit_range_rows(&mut w, &l.to_json(), " ");
        }
    }
    let _ = now;
    w.finish()
}

/// The generic describer (describe.go genericDescriber + printUnstructuredContent) for kinds
/// without a dedicated describer.
/// A JSON value as Go's %v prints it in describe (strings bare).
fn jtext(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => crate::gotemplate::format_v(&crate::gotemplate::Val::from_json(other)),
    }
}

/// A JSON string map (labels, parameters) for labels.FormatLabels.
fn jmap(v: Option<&Value>) -> Option<BTreeMap<String, String>> {
    v.and_then(|v| v.as_object()).map(|m| m.iter().map(|(k, v)| (k.clone(), jtext(Some(v)))).collect())
}

/// printBoolPtr.
fn bool_ptr(v: Option<&Value>) -> String {
    match v.and_then(|v| v.as_bool()) {
        Some(true) => "True".into(),
        Some(false) => "False".into(),
        None => "<unset>".into(),
    }
}

/// describeLimitRangeSpec: one row per (item, resource), `-` where a value is not set;
/// resources in name order (upstream iterates a Go map).
fn limit_range_rows(w: &mut Writer, json: &Value, prefix: &str) {
    for item in jget(json, "spec.limits").and_then(|i| i.as_array()).into_iter().flatten() {
        let type_ = item.get("type").and_then(|t| t.as_str()).unwrap_or("");
        let mut resources: Vec<String> = Vec::new();
        for key in ["max", "min", "default", "defaultRequest", "maxLimitRequestRatio"] {
            for r in item.get(key).and_then(|m| m.as_object()).into_iter().flatten().map(|(k, _)| k.clone()) {
                if !resources.contains(&r) {
                    resources.push(r);
                }
            }
        }
        kubesim_api::sort::sort(&mut resources);
        for r in resources {
            let get = |key: &str| item.get(key).and_then(|m| m.get(&r)).map(|v| jtext(Some(v))).unwrap_or_else(|| "-".into());
            w.w(
                0,
                format!(
                    "{prefix}{type_}\t{r}\t{}\t{}\t{}\t{}\t{}\n",
                    get("min"),
                    get("max"),
                    get("defaultRequest"),
                    get("default"),
                    get("maxLimitRequestRatio")
                ),
            );
        }
    }
}

/// The help text of a quota scope (helpTextForResourceQuotaScope).
fn quota_scope_help(scope: &str) -> &'static str {
    match scope {
        "Terminating" => "Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.",
        "NotTerminating" => "Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.",
        "BestEffort" => "Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.",
        "NotBestEffort" => "Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.",
        _ => "",
    }
}

/// A quota's (resource, used, hard) rows: status.hard in name order (the spec's until the quota
/// controller has filled the status), used re-expressed in the hard value's format when the
/// two differ (describeQuota: resource.NewQuantity(used.Value(), hard.Format)).
fn quota_rows(json: &Value) -> Vec<(String, String, String)> {
    let hard = jget(json, "status.hard").or_else(|| jget(json, "spec.hard")).and_then(|h| h.as_object()).cloned().unwrap_or_default();
    let used = jget(json, "status.used").and_then(|u| u.as_object()).cloned().unwrap_or_default();
    let mut rows = Vec::new();
    for (resource, hard_value) in hard {
        let hard_text = jtext(Some(&hard_value));
        let used_text = used.get(&resource).map(|u| jtext(Some(u))).unwrap_or_else(|| "0".into());
        let format_of = |t: &str| kubesim_api::quantity::parse_exact(t).map(|(_, _, f)| f).ok();
        let used_text = match (format_of(&used_text), format_of(&hard_text)) {
            (Some(u), Some(h)) if u != h => kubesim_api::quantity::format_value(parse_value(&used_text).unwrap_or(0), h),
            _ => used_text,
        };
        rows.push((resource, used_text, hard_text));
    }
    rows
}

/// DescribeResourceQuotas (the Namespace describer's section).
fn resource_quotas_section(w: &mut Writer, quotas: &[Arc<Object>]) {
    if quotas.is_empty() {
        w.w(0, "No resource quota.\n");
        return;
    }
    w.w(0, "Resource Quotas\n");
    for q in quotas {
        let json = q.to_json();
        w.w(1, format!("Name:\t{}\n", q.name()));
        let mut scopes: Vec<String> = jget(&json, "spec.scopes").and_then(|s| s.as_array()).into_iter().flatten().map(|s| jtext(Some(s))).collect();
        if !scopes.is_empty() {
            kubesim_api::sort::sort(&mut scopes);
            w.w(1, format!("Scopes:\t{}\n", scopes.join(", ")));
            for scope in &scopes {
                let help = quota_scope_help(scope);
                if !help.is_empty() {
                    w.w(1, format!("* {help}\n"));
                }
            }
        }
        w.w(1, "Resource\tUsed\tHard\n");
        w.w(1, "--------\t---\t---\n");
        for (resource, used, hard) in quota_rows(&json) {
            w.w(1, format!("{resource}\t{used}\t{hard}\n"));
        }
    }
}

/// describeQuota.
fn describe_quota(object: &Object) -> String {
    let json = object.to_json();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    let mut scopes: Vec<String> = jget(&json, "spec.scopes").and_then(|s| s.as_array()).into_iter().flatten().map(|s| jtext(Some(s))).collect();
    if !scopes.is_empty() {
        kubesim_api::sort::sort(&mut scopes);
        w.w(0, format!("Scopes:\t{}\n", scopes.join(", ")));
        for scope in &scopes {
            let help = quota_scope_help(scope);
            if !help.is_empty() {
                w.w(0, format!(" * {help}\n"));
            }
        }
    }
    w.w(0, "Resource\tUsed\tHard\n");
    w.w(0, "--------\t----\t----\n");
    for (resource, used, hard) in quota_rows(&json) {
        w.w(0, format!("{resource}\t{used}\t{hard}\n"));
    }
    w.finish()
}

/// describeLimitRange.
fn describe_limit_range(object: &Object) -> String {
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    w.w(0, "Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n");
    w.w(0, "----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n");
    limit_range_rows(&mut w, &object.to_json(), "");
    w.finish()
}

/// describeCronJob (with describeJobTemplate and printActiveJobs).
fn describe_cron_job(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("Schedule:\t{}\n", jstr(&json, "spec.schedule").unwrap_or("")));
    w.w(0, format!("Concurrency Policy:\t{}\n", jstr(&json, "spec.concurrencyPolicy").unwrap_or("")));
    w.w(0, format!("Suspend:\t{}\n", bool_ptr(jget(&json, "spec.suspend"))));
    let opt_int = |path: &str, suffix: &str| jget(&json, path).and_then(|v| v.as_i64()).map(|v| format!("{v}{suffix}")).unwrap_or_else(|| "<unset>".into());
    w.w(0, format!("Successful Job History Limit:\t{}\n", opt_int("spec.successfulJobsHistoryLimit", "")));
    w.w(0, format!("Failed Job History Limit:\t{}\n", opt_int("spec.failedJobsHistoryLimit", "")));
    w.w(0, format!("Starting Deadline Seconds:\t{}\n", opt_int("spec.startingDeadlineSeconds", "s")));
    match label_selector_json(jget(&json, "spec.jobTemplate.spec.selector")) {
        Some(s) => w.w(0, format!("Selector:\t{}\n", format_label_selector(Some(&s)))),
        None => w.w(0, "Selector:\t<unset>\n"),
    }
    w.w(0, format!("Parallelism:\t{}\n", opt_int("spec.jobTemplate.spec.parallelism", "")));
    w.w(0, format!("Completions:\t{}\n", opt_int("spec.jobTemplate.spec.completions", "")));
    if let Some(d) = jget(&json, "spec.jobTemplate.spec.activeDeadlineSeconds").and_then(|v| v.as_i64()) {
        w.w(0, format!("Active Deadline Seconds:\t{d}s\n"));
    }
    let template: PodTemplateSpec = jget(&json, "spec.jobTemplate.spec.template").and_then(|t| serde_json::from_value(t.clone()).ok()).unwrap_or_default();
    write_pod_template(&mut w, &template);
    match jget(&json, "status.lastScheduleTime").and_then(|t| serde_json::from_value::<Time>(t.clone()).ok()) {
        Some(t) => w.w(0, format!("Last Schedule Time:\t{}\n", rfc1123z(&t))),
        None => w.w(0, "Last Schedule Time:\t<unset>\n"),
    }
    let active: Vec<String> = jget(&json, "status.active").and_then(|a| a.as_array()).into_iter().flatten().map(|j| jtext(j.get("name"))).collect();
    w.w(0, format!("Active Jobs:\t{}\n", if active.is_empty() { "<none>".to_string() } else { active.join(", ") }));
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeEndpoints.
fn describe_endpoints(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, "Subsets:\n");
    for subset in jget(&json, "subsets").and_then(|s| s.as_array()).into_iter().flatten() {
        let ips = |key: &str| {
            let list: Vec<String> = subset.get(key).and_then(|a| a.as_array()).into_iter().flatten().map(|a| jtext(a.get("ip"))).collect();
            if list.is_empty() {
                "<none>".to_string()
            } else {
                list.join(",")
            }
        };
        w.w(1, format!("Addresses:\t{}\n", ips("addresses")));
        w.w(1, format!("NotReadyAddresses:\t{}\n", ips("notReadyAddresses")));
        let ports = subset.get("ports").and_then(|p| p.as_array()).cloned().unwrap_or_default();
        if !ports.is_empty() {
            w.w(1, "Ports:\n");
            w.w(2, "Name\tPort\tProtocol\n");
            w.w(2, "----\t----\t--------\n");
            for p in &ports {
                let name = jtext(p.get("name"));
                w.w(2, format!("{}\t{}\t{}\n", if name.is_empty() { "<unset>" } else { &name }, jtext(p.get("port")), jtext(p.get("protocol"))));
            }
        }
        w.w(0, "\n");
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeEndpointSliceV1.
fn describe_endpoint_slice(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("AddressType:\t{}\n", jtext(json.get("addressType"))));
    let ports = json.get("ports").and_then(|p| p.as_array()).cloned().unwrap_or_default();
    if ports.is_empty() {
        w.w(0, "Ports: <unset>\n");
    } else {
        w.w(0, "Ports:\n");
        w.w(1, "Name\tPort\tProtocol\n");
        w.w(1, "----\t----\t--------\n");
        for p in &ports {
            let name = jtext(p.get("name"));
            let port = p.get("port").map(|v| jtext(Some(v))).unwrap_or_else(|| "<unset>".into());
            w.w(1, format!("{}\t{port}\t{}\n", if name.is_empty() { "<unset>" } else { &name }, jtext(p.get("protocol"))));
        }
    }
    let endpoints = json.get("endpoints").and_then(|e| e.as_array()).cloned().unwrap_or_default();
    if endpoints.is_empty() {
        w.w(0, "Endpoints: <none>\n");
    } else {
        w.w(0, "Endpoints:\n");
        for e in &endpoints {
            let addresses: Vec<String> = e.get("addresses").and_then(|a| a.as_array()).into_iter().flatten().map(|a| jtext(Some(a))).collect();
            w.w(1, format!("- Addresses:\t{}\n", if addresses.is_empty() { "<none>".to_string() } else { addresses.join(", ") }));
            w.w(2, "Conditions:\n");
            w.w(
                3,
                format!("Ready:\t{}\n", e.pointer("/conditions/ready").and_then(|r| r.as_bool()).map(|b| b.to_string()).unwrap_or_else(|| "<unset>".into())),
            );
            let or_unset = |key: &str| e.get(key).map(|v| jtext(Some(v))).unwrap_or_else(|| "<unset>".into());
            w.w(2, format!("Hostname:\t{}\n", or_unset("hostname")));
            if let Some(t) = e.get("targetRef") {
                w.w(2, format!("TargetRef:\t{}/{}\n", jtext(t.get("kind")), jtext(t.get("name"))));
            }
            w.w(2, format!("NodeName:\t{}\n", or_unset("nodeName")));
            w.w(2, format!("Zone:\t{}\n", or_unset("zone")));
        }
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeServiceAccount (the three secret lists in header order).
fn describe_service_account(api: &ApiServer, object: &Object, now: Millis) -> String {
    let Object::ServiceAccount(sa) = object else { return String::new() };
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", sa.metadata.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", sa.metadata.annotations.as_ref());
    let secrets = kind_info("v1", "Secret").map(|i| util::list(api, i, Some(object.namespace()))).unwrap_or_default();
    let existing: Vec<String> = secrets.iter().map(|s| s.name().to_string()).collect();
    let tokens: Vec<String> = secrets
        .iter()
        .filter_map(|s| match s.as_ref() {
            Object::Secret(sec) if sec.type_.as_deref() == Some("kubernetes.io/service-account-token") => {
                let a = sec.metadata.annotations.clone().unwrap_or_default();
                (a.get("kubernetes.io/service-account.name").map(String::as_str) == Some(object.name())
                    && a.get("kubernetes.io/service-account.uid") == sa.metadata.uid.as_ref())
                .then(|| s.name().to_string())
            }
            _ => None,
        })
        .collect();
    let pull: Vec<String> = sa.image_pull_secrets.iter().flatten().map(|r| r.name.clone()).collect();
    let mount: Vec<String> = sa.secrets.iter().flatten().map(|r| r.name.clone().unwrap_or_default()).collect();
    for (header, names, check) in [("Image pull secrets:", &pull, true), ("Mountable secrets: ", &mount, true), ("Tokens:            ", &tokens, false)] {
        if names.is_empty() {
            w.w(0, format!("{header}\t<none>\n"));
            continue;
        }
        let mut prefix = header;
        for name in names {
            let missing = check && !existing.contains(name);
            w.w(0, format!("{prefix}\t{name}{}\n", if missing { " (not found)" } else { "" }));
            prefix = "                   ";
        }
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeStorageClass.
fn describe_storage_class(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    let annotations = meta.annotations.clone().unwrap_or_default();
    let default = ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"]
        .iter()
        .any(|k| annotations.get(*k).map(String::as_str) == Some("true"));
    w.w(0, format!("IsDefaultClass:\t{}\n", if default { "Yes" } else { "No" }));
    w.w(0, format!("Annotations:\t{}\n", util::format_labels(meta.annotations.as_ref())));
    w.w(0, format!("Provisioner:\t{}\n", jtext(json.get("provisioner"))));
    w.w(0, format!("Parameters:\t{}\n", util::format_labels(jmap(json.get("parameters")).as_ref())));
    w.w(0, format!("AllowVolumeExpansion:\t{}\n", bool_ptr(json.get("allowVolumeExpansion"))));
    let options: Vec<String> = json.get("mountOptions").and_then(|m| m.as_array()).into_iter().flatten().map(|o| jtext(Some(o))).collect();
    if options.is_empty() {
        w.w(0, "MountOptions:\t<none>\n");
    } else {
        w.w(0, "MountOptions:\n");
        for o in options {
            w.w(1, format!("{o}\n"));
        }
    }
    if let Some(p) = json.get("reclaimPolicy") {
        w.w(0, format!("ReclaimPolicy:\t{}\n", jtext(Some(p))));
    }
    if let Some(m) = json.get("volumeBindingMode") {
        w.w(0, format!("VolumeBindingMode:\t{}\n", jtext(Some(m))));
    }
    if let Some(topologies) = json.get("allowedTopologies").and_then(|t| t.as_array()) {
        if topologies.is_empty() {
            w.w(0, "AllowedTopologies:\t<none>\n");
        } else {
            w.w(0, "AllowedTopologies:\t\n");
            for (i, term) in topologies.iter().enumerate() {
                let reqs = term.get("matchLabelExpressions").and_then(|r| r.as_array()).cloned().unwrap_or_default();
                w.w(1, format!("Term {i}:\t"));
                if reqs.is_empty() {
                    w.w(0, "<none>\n");
                }
                for (j, r) in reqs.iter().enumerate() {
                    if j != 0 {
                        w.w(1, "\t");
                    }
                    let values: Vec<String> = r.get("values").and_then(|v| v.as_array()).into_iter().flatten().map(|v| jtext(Some(v))).collect();
                    let mut expr = format!("{} in", jtext(r.get("key")));
                    if !values.is_empty() {
                        expr = format!("{expr} [{}]", values.join(", "));
                    }
                    w.w(0, format!("{expr}\n"));
                }
            }
        }
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeIngressClassV1.
fn describe_ingress_class(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("Controller:\t{}\n", jtext(jget(&json, "spec.controller"))));
    if let Some(p) = jget(&json, "spec.parameters") {
        w.w(0, "Parameters:\n");
        if let Some(g) = p.get("apiGroup") {
            w.w(1, format!("APIGroup:\t{}\n", jtext(Some(g))));
        }
        w.w(1, format!("Kind:\t{}\n", jtext(p.get("kind"))));
        w.w(1, format!("Name:\t{}\n", jtext(p.get("name"))));
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeNetworkPolicy (describeNetworkPolicySpec, printNetworkPolicySpecIngressFrom/EgressTo).
fn describe_network_policy(object: &Object) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    let created = meta.creation_timestamp.as_ref().map(|t| t.0.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string()).unwrap_or_default();
    w.w(0, format!("Created on:\t{created}\n"));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, "Spec:\n");
    w.w(1, "PodSelector: ");
    let selector = label_selector_json(jget(&json, "spec.podSelector")).unwrap_or_default();
    if selector.match_labels.as_ref().is_none_or(|m| m.is_empty()) && selector.match_expressions.as_ref().is_none_or(|e| e.is_empty()) {
        w.w(2, "<none> (Allowing the specific traffic to all pods in this namespace)\n");
    } else {
        w.w(2, format!("{}\n", format_label_selector(Some(&selector))));
    }
    let types: Vec<String> = jget(&json, "spec.policyTypes").and_then(|t| t.as_array()).into_iter().flatten().map(|t| jtext(Some(t))).collect();
    let peers = |w: &mut Writer, rules: &[Value], peer_key: &str, dir: &str| {
        let indent = "    ";
        let isolated = if dir == "From" { "ingress" } else { "egress" };
        if rules.is_empty() {
            w.w(0, format!("{indent}<none> (Selected pods are isolated for {isolated} connectivity)\n"));
            return;
        }
        for (i, rule) in rules.iter().enumerate() {
            let ports = rule.get("ports").and_then(|p| p.as_array()).cloned().unwrap_or_default();
            if ports.is_empty() {
                w.w(0, format!("{indent}To Port: <any> (traffic allowed to all ports)\n"));
            }
            for port in &ports {
                let proto = port.get("protocol").map(|p| jtext(Some(p))).unwrap_or_else(|| "TCP".into());
                let number = port.get("port").map(|p| jtext(Some(p))).unwrap_or_else(|| "<nil>".into());
                match port.get("endPort") {
                    None => w.w(0, format!("{indent}To Port: {number}/{proto}\n")),
                    Some(end) => w.w(0, format!("{indent}To Port Range: {number}-{}/{proto}\n", jtext(Some(end)))),
                }
            }
            let list = rule.get(peer_key).and_then(|p| p.as_array()).cloned().unwrap_or_default();
            if list.is_empty() {
                let why = if dir == "From" { "traffic not restricted by source" } else { "traffic not restricted by destination" };
                w.w(0, format!("{indent}{dir}: <any> ({why})\n"));
            }
            for peer in &list {
                w.w(0, format!("{indent}{dir}:\n"));
                let fmt = |k: &str| format_label_selector(label_selector_json(peer.get(k)).as_ref());
                match (peer.get("podSelector"), peer.get("namespaceSelector"), peer.get("ipBlock")) {
                    (Some(_), Some(_), _) => {
                        w.w(1, format!("{indent}NamespaceSelector: {}\n", fmt("namespaceSelector")));
                        w.w(1, format!("{indent}PodSelector: {}\n", fmt("podSelector")));
                    }
                    (Some(_), None, _) => w.w(1, format!("{indent}PodSelector: {}\n", fmt("podSelector"))),
                    (None, Some(_), _) => w.w(1, format!("{indent}NamespaceSelector: {}\n", fmt("namespaceSelector"))),
                    (None, None, Some(block)) => {
                        w.w(1, format!("{indent}IPBlock:\n"));
                        w.w(2, format!("{indent}CIDR: {}\n", jtext(block.get("cidr"))));
                        let except: Vec<String> = block.get("except").and_then(|e| e.as_array()).into_iter().flatten().map(|e| jtext(Some(e))).collect();
                        w.w(2, format!("{indent}Except: {}\n", except.join(", ")));
                    }
                    _ => {}
                }
            }
            if i + 1 != rules.len() {
                w.w(0, format!("{indent}----------\n"));
            }
        }
    };
    let ingress = jget(&json, "spec.ingress").and_then(|i| i.as_array()).cloned().unwrap_or_default();
    let egress = jget(&json, "spec.egress").and_then(|i| i.as_array()).cloned().unwrap_or_default();
    if types.iter().any(|t| t == "Ingress") {
        w.w(1, "Allowing ingress traffic:\n");
        peers(&mut w, &ingress, "from", "From");
    } else {
        w.w(1, "Not affecting ingress traffic\n");
    }
    if types.iter().any(|t| t == "Egress") {
        w.w(1, "Allowing egress traffic:\n");
        peers(&mut w, &egress, "to", "To");
    } else {
        w.w(1, "Not affecting egress traffic\n");
    }
    w.w(1, format!("Policy Types: {}\n", if types.is_empty() { "<none>".to_string() } else { types.join(", ") }));
    w.finish()
}

/// describePriorityClass.
fn describe_priority_class(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Value:\t{}\n", jtext(json.get("value"))));
    w.w(0, format!("GlobalDefault:\t{}\n", json.get("globalDefault").and_then(|g| g.as_bool()).unwrap_or(false)));
    w.w(0, format!("PreemptionPolicy:\t{}\n", json.get("preemptionPolicy").map(|p| jtext(Some(p))).unwrap_or_else(|| "PreemptLowerPriority".into())));
    w.w(0, format!("Description:\t{}\n", jtext(json.get("description"))));
    w.w(0, format!("Annotations:\t{}\n", util::format_labels(object.metadata().annotations.as_ref())));
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeReplicationController.
fn describe_replication_controller(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    let selector = jmap(jget(&json, "spec.selector")).unwrap_or_default();
    w.w(0, format!("Selector:\t{}\n", util::format_labels(Some(&selector))));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("Replicas:\t{} current / {} desired\n", jint(&json, "status.replicas"), jget(&json, "spec.replicas").and_then(|r| r.as_i64()).unwrap_or(1)));
    let (running, waiting, succeeded, failed, _) =
        pods_status(api, object.namespace(), &kubesim_api::selector::Selector::from_map(&selector), meta.uid.as_deref());
    w.w(0, format!("Pods Status:\t{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed\n"));
    let template: PodTemplateSpec = jget(&json, "spec.template").and_then(|t| serde_json::from_value(t.clone()).ok()).unwrap_or_default();
    write_pod_template(&mut w, &template);
    if let Some(conditions) = jget(&json, "status.conditions").and_then(|c| c.as_array()).filter(|c| !c.is_empty()) {
        w.w(0, "Conditions:\n  Type\tStatus\tReason\n");
        w.w(1, "----\t------\t------\n");
        for c in conditions {
            w.w(1, format!("{} \t{}\t{}\n", jtext(c.get("type")), jtext(c.get("status")), jtext(c.get("reason"))));
        }
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// A PolicyRule as kubectl's pkg/util/rbac handles it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Rule {
    pub(crate) verbs: Vec<String>,
    pub(crate) api_groups: Vec<String>,
    pub(crate) resources: Vec<String>,
    pub(crate) resource_names: Vec<String>,
    pub(crate) non_resource_urls: Vec<String>,
}

impl Rule {
    fn from_json(v: &Value) -> Rule {
        let list = |f: &str| -> Vec<String> { v.get(f).and_then(|x| x.as_array()).map(|a| a.iter().map(|x| jtext(Some(x))).collect()).unwrap_or_default() };
        Rule {
            verbs: list("verbs"),
            api_groups: list("apiGroups"),
            resources: list("resources"),
            resource_names: list("resourceNames"),
            non_resource_urls: list("nonResourceURLs"),
        }
    }

    /// The generated PolicyRule.String() the rules sort by (rbac.SortableRuleSlice).
    fn go_string(&self) -> String {
        let v = |l: &[String]| format!("[{}]", l.join(" "));
        format!(
            "&PolicyRule{{Verbs:{},APIGroups:{},Resources:{},ResourceNames:{},NonResourceURLs:{},}}",
            v(&self.verbs),
            v(&self.api_groups),
            v(&self.resources),
            v(&self.resource_names),
            v(&self.non_resource_urls)
        )
    }
}

/// rbac.BreakdownRule: one rule per (group, resource, verb[, name]) and per (URL, verb).
pub(crate) fn breakdown_rule(rule: &Rule) -> Vec<Rule> {
    let mut out = Vec::new();
    let one = |s: &String| vec![s.clone()];
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                if rule.resource_names.is_empty() {
                    out.push(Rule { api_groups: one(group), resources: one(resource), verbs: one(verb), ..Default::default() });
                } else {
                    for name in &rule.resource_names {
                        out.push(Rule { api_groups: one(group), resources: one(resource), verbs: one(verb), resource_names: one(name), ..Default::default() });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(Rule { non_resource_urls: one(url), verbs: one(verb), ..Default::default() });
        }
    }
    out
}

/// rbac.CompactRules: simple rules (one group, one resource, at most one name) that differ only
/// by verb merge, verbs in first-seen order; then sorted by their String().
pub(crate) fn compact_rules(rules: Vec<Rule>) -> Vec<Rule> {
    let mut compacted: Vec<Rule> = Vec::new();
    // (group, resource, name) → the accumulating rule, in first-seen order.
    type SimpleKey = (String, String, Option<String>);
    let mut simple: Vec<(SimpleKey, Rule)> = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1 && rule.non_resource_urls.is_empty() && rule.api_groups.len() == 1 && rule.resources.len() == 1;
        if is_simple {
            let key = (rule.api_groups[0].clone(), rule.resources[0].clone(), rule.resource_names.first().cloned());
            match simple.iter_mut().find(|(k, _)| *k == key) {
                Some((_, existing)) => {
                    for verb in &rule.verbs {
                        if !existing.verbs.contains(verb) {
                            existing.verbs.push(verb.clone());
                        }
                    }
                }
                None => simple.push((key, rule)),
            }
        } else {
            compacted.push(rule);
        }
    }
    compacted.extend(simple.into_iter().map(|(_, r)| r));
    kubesim_api::sort::sort_by(&mut compacted, |a, b| a.go_string().cmp(&b.go_string()));
    compacted
}

/// describe.go CombineResourceGroup: `resource.group/subresource`.
pub(crate) fn combine_resource_group(resources: &[String], groups: &[String]) -> String {
    let Some(first) = resources.first() else { return String::new() };
    let (resource, sub) = match first.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (first.as_str(), None),
    };
    let mut combined = resource.to_string();
    if let Some(g) = groups.first().filter(|g| !g.is_empty()) {
        combined = format!("{combined}.{g}");
    }
    if let Some(s) = sub {
        combined = format!("{combined}/{s}");
    }
    combined
}

/// RoleDescriber / ClusterRoleDescriber.
fn describe_role(object: &Object) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let rules: Vec<Rule> = json.get("rules").and_then(|r| r.as_array()).into_iter().flatten().map(Rule::from_json).flat_map(|r| breakdown_rule(&r)).collect();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, "PolicyRule:\n");
    w.w(1, "Resources\tNon-Resource URLs\tResource Names\tVerbs\n");
    w.w(1, "---------\t-----------------\t--------------\t-----\n");
    let v = |l: &[String]| format!("[{}]", l.join(" "));
    for r in compact_rules(rules) {
        w.w(1, format!("{}\t{}\t{}\t{}\n", combine_resource_group(&r.resources, &r.api_groups), v(&r.non_resource_urls), v(&r.resource_names), v(&r.verbs)));
    }
    w.finish()
}

/// RoleBindingDescriber / ClusterRoleBindingDescriber.
fn describe_role_binding(object: &Object) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, "Role:\n");
    w.w(1, format!("Kind:\t{}\n", jtext(jget(&json, "roleRef.kind"))));
    w.w(1, format!("Name:\t{}\n", jtext(jget(&json, "roleRef.name"))));
    w.w(0, "Subjects:\n");
    w.w(1, "Kind\tName\tNamespace\n");
    w.w(1, "----\t----\t---------\n");
    for s in json.get("subjects").and_then(|s| s.as_array()).into_iter().flatten() {
        w.w(1, format!("{}\t{}\t{}\n", jtext(s.get("kind")), jtext(s.get("name")), jtext(s.get("namespace"))));
    }
    w.finish()
}

fn describe_generic(api: &ApiServer, _info: &KindInfo, object: &Object, now: Millis) -> String {
    let mut w = Writer::default();
    let meta = object.metadata();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    if let Value::Object(map) = object.to_json() {
        let skip = [".metadata.managedFields", ".metadata.name", ".metadata.namespace", ".metadata.labels", ".metadata.annotations"];
        unstructured_content(&mut w, 0, &map, "", &skip);
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// smartLabelFor: `minAvailable` → `Min Available`, `apiVersion` → `API Version`; fields with
/// characters other than letters and '-' are printed as they are.
fn smart_label(field: &str) -> String {
    if field.chars().any(|c| !c.is_alphabetic() && c != '-') {
        return field.to_string();
    }
    // camelcase.Split: runs of lower case, runs of upper case (the last upper letter of a run
    // followed by lower case starts the next word).
    let chars: Vec<char> = field.chars().collect();
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let starts_word = i > 0
            && ((c.is_uppercase() && chars[i - 1].is_lowercase())
                || (c.is_uppercase() && chars[i - 1].is_uppercase() && chars.get(i + 1).is_some_and(|n| n.is_lowercase()))
                || c.is_alphabetic() != chars[i - 1].is_alphabetic());
        if starts_word && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
        .into_iter()
        .filter(|p| p != "_")
        .map(|p| {
            let upper = p.to_uppercase();
            if ["API", "URL", "UID", "OSB", "GUID"].contains(&upper.as_str()) {
                upper
            } else {
                let mut cs = p.chars();
                match cs.next() {
                    Some(f) => f.to_uppercase().chain(cs).collect(),
                    None => String::new(),
                }
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        other => other.to_string(),
    }
}

/// printUnstructuredContent.
fn unstructured_content(w: &mut Writer, level: usize, content: &serde_json::Map<String, Value>, skip_prefix: &str, skip: &[&str]) {
    for (field, value) in content {
        let expr = format!("{skip_prefix}.{field}");
        if skip.contains(&expr.as_str()) {
            continue;
        }
        match value {
            Value::Object(m) => {
                w.w(level, format!("{}:\n", smart_label(field)));
                unstructured_content(w, level + 1, m, &expr, skip);
            }
            Value::Array(items) => {
                w.w(level, format!("{}:\n", smart_label(field)));
                for item in items {
                    match item {
                        Value::Object(m) => unstructured_content(w, level + 1, m, &expr, skip),
                        other => w.w(level + 1, format!("{}\n", go_value(other))),
                    }
                }
            }
            other => w.w(level, format!("{}:\t{}\n", smart_label(field), go_value(other))),
        }
    }
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

fn finalizers_line(meta: &ObjectMeta) -> String {
    format!("[{}]", meta.finalizers.clone().unwrap_or_default().join(" "))
}

/// describePersistentVolumeClaim.
fn describe_pvc(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    // GetPersistentVolume(Claim)Class: the beta annotation, then spec.storageClassName.
    let class = meta.annotations.as_ref().and_then(|a| a.get(kubesim_api::storage::BETA_STORAGE_CLASS_ANNOTATION)).map(String::as_str);
    w.w(0, format!("StorageClass:\t{}\n", class.or(jstr(&json, "spec.storageClassName")).unwrap_or("")));
    if let Some(vac) = jstr(&json, "spec.volumeAttributesClassName") {
        w.w(0, format!("VolumeAttributesClass:\t{vac}\n"));
    }
    if meta.deletion_timestamp.is_some() {
        w.w(0, format!("Status:\tTerminating (lasts {})\n", since(meta.deletion_timestamp.as_ref(), now)));
    } else {
        w.w(0, format!("Status:\t{}\n", jstr(&json, "status.phase").unwrap_or("")));
    }
    w.w(0, format!("Volume:\t{}\n", jstr(&json, "spec.volumeName").unwrap_or("")));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("Finalizers:\t{}\n", finalizers_line(meta)));
    let bound = jstr(&json, "spec.volumeName").is_some_and(|v| !v.is_empty());
    let capacity = if bound { jstr(&json, "status.capacity.storage").unwrap_or("") } else { "" };
    let modes = if bound { access_modes(jget(&json, "status.accessModes")) } else { String::new() };
    w.w(0, format!("Capacity:\t{capacity}\n"));
    w.w(0, format!("Access Modes:\t{modes}\n"));
    if let Some(mode) = jstr(&json, "spec.volumeMode") {
        w.w(0, format!("VolumeMode:\t{mode}\n"));
    }
    if let Some(ds) = jget(&json, "spec.dataSource") {
        w.w(0, "DataSource:\n");
        w.w(1, format!("Kind:\t{}\n", ds.get("kind").and_then(|v| v.as_str()).unwrap_or("")));
        w.w(1, format!("Name:\t{}\n", ds.get("name").and_then(|v| v.as_str()).unwrap_or("")));
    }
    // Used By: pods in the namespace that mount the claim.
    let pod_info = kind_info("v1", "Pod").expect("pods");
    let users: Vec<String> = util::list(api, pod_info, Some(object.namespace()))
        .iter()
        .filter(|p| {
            p.as_pod()
                .and_then(|p| p.spec.as_ref())
                .and_then(|s| s.volumes.as_ref())
                .is_some_and(|v| v.iter().any(|v| v.persistent_volume_claim.as_ref().is_some_and(|c| c.claim_name == object.name())))
        })
        .map(|p| p.name().to_string())
        .collect();
    if users.is_empty() {
        w.w(0, "Used By:\t<none>\n");
    } else {
        for (i, u) in users.iter().enumerate() {
            if i == 0 {
                w.w(0, format!("Used By:\t{u}\n"));
            } else {
                w.w(0, format!("\t{u}\n"));
            }
        }
    }
    // The claim's conditions (FileSystemResizePending, Resizing, ...), times in RFC 1123Z
    // (an unset time is Go's zero time).
    let conditions = jget(&json, "status.conditions").and_then(|c| c.as_array()).cloned().unwrap_or_default();
    if !conditions.is_empty() {
        w.w(0, "Conditions:\n");
        w.w(1, "Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage\n");
        w.w(1, "----\t------\t-----------------\t------------------\t------\t-------\n");
        let time = |c: &serde_json::Value, key: &str| {
            c.get(key)
                .and_then(|t| serde_json::from_value::<Time>(t.clone()).ok())
                .map(|t| rfc1123z(&t))
                .unwrap_or_else(|| "Mon, 01 Jan 0001 00:00:00 +0000".into())
        };
        let text = |c: &serde_json::Value, key: &str| c.get(key).and_then(|v| v.as_str()).unwrap_or("").to_string();
        for c in &conditions {
            w.w(
                1,
                format!(
                    "{} \t{} \t{} \t{} \t{} \t{}\n",
                    text(c, "type"),
                    text(c, "status"),
                    time(c, "lastProbeTime"),
                    time(c, "lastTransitionTime"),
                    text(c, "reason"),
                    text(c, "message")
                ),
            );
        }
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describePersistentVolume (the common sources).
fn describe_pv(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("Finalizers:\t{}\n", finalizers_line(meta)));
    // GetPersistentVolume(Claim)Class: the beta annotation, then spec.storageClassName.
    let class = meta.annotations.as_ref().and_then(|a| a.get(kubesim_api::storage::BETA_STORAGE_CLASS_ANNOTATION)).map(String::as_str);
    w.w(0, format!("StorageClass:\t{}\n", class.or(jstr(&json, "spec.storageClassName")).unwrap_or("")));
    if let Some(vac) = jstr(&json, "spec.volumeAttributesClassName") {
        w.w(0, format!("VolumeAttributesClass:\t{vac}\n"));
    }
    if meta.deletion_timestamp.is_some() {
        w.w(0, format!("Status:\tTerminating (lasts {})\n", since(meta.deletion_timestamp.as_ref(), now)));
    } else {
        w.w(0, format!("Status:\t{}\n", jstr(&json, "status.phase").unwrap_or("")));
    }
    let claim = match jget(&json, "spec.claimRef") {
        Some(c) => format!("{}/{}", c.get("namespace").and_then(|v| v.as_str()).unwrap_or(""), c.get("name").and_then(|v| v.as_str()).unwrap_or("")),
        None => String::new(),
    };
    w.w(0, format!("Claim:\t{claim}\n"));
    w.w(0, format!("Reclaim Policy:\t{}\n", jstr(&json, "spec.persistentVolumeReclaimPolicy").unwrap_or("")));
    w.w(0, format!("Access Modes:\t{}\n", access_modes(jget(&json, "spec.accessModes"))));
    if let Some(mode) = jstr(&json, "spec.volumeMode") {
        w.w(0, format!("VolumeMode:\t{mode}\n"));
    }
    w.w(0, format!("Capacity:\t{}\n", jstr(&json, "spec.capacity.storage").unwrap_or("")));
    // printVolumeNodeAffinity.
    match jget(&json, "spec.nodeAffinity.required") {
        None => w.w(0, "Node Affinity:\t<none>\n"),
        Some(required) => {
            w.w(0, "Node Affinity:\t\n");
            let terms = required.get("nodeSelectorTerms").and_then(|t| t.as_array()).cloned().unwrap_or_default();
            if terms.is_empty() {
                w.w(1, "Required Terms:\t<none>\n");
            } else {
                w.w(1, "Required Terms:\t\n");
                for (i, term) in terms.iter().enumerate() {
                    // printNodeSelectorTermsMultilineWithIndent.
                    w.w(2, format!("Term {i}:\t"));
                    let reqs = term.get("matchExpressions").and_then(|m| m.as_array()).cloned().unwrap_or_default();
                    if reqs.is_empty() {
                        w.w(0, "<none>\n");
                    }
                    for (j, req) in reqs.iter().enumerate() {
                        if j != 0 {
                            w.w(2, "\t");
                        }
                        let key = req.get("key").and_then(|k| k.as_str()).unwrap_or("");
                        let op = req.get("operator").and_then(|k| k.as_str()).unwrap_or("").to_lowercase();
                        let values: Vec<&str> = req.get("values").and_then(|v| v.as_array()).into_iter().flatten().filter_map(|v| v.as_str()).collect();
                        let mut expr = format!("{key} {op}");
                        if !values.is_empty() {
                            expr = format!("{expr} [{}]", values.join(", "));
                        }
                        w.w(0, format!("{expr}\n"));
                    }
                }
            }
        }
    }
    w.w(0, format!("Message:\t{}\n", jstr(&json, "status.message").unwrap_or("")));
    w.w(0, "Source:\n");
    if let Some(h) = jget(&json, "spec.hostPath") {
        w.w(
            2,
            format!(
                "Type:\tHostPath (bare host directory volume)\n    Path:\t{}\n    HostPathType:\t{}\n",
                h.get("path").and_then(|v| v.as_str()).unwrap_or(""),
                h.get("type").and_then(|v| v.as_str()).unwrap_or("")
            ),
        );
    } else if let Some(l) = jget(&json, "spec.local") {
        w.w(
            2,
            format!(
                "Type:\tLocalVolume (a persistent volume backed by local storage on a node)\n    Path:\t{}\n",
                l.get("path").and_then(|v| v.as_str()).unwrap_or("")
            ),
        );
    } else if let Some(n) = jget(&json, "spec.nfs") {
        w.w(
            2,
            format!(
                "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t{}\n    Path:\t{}\n    ReadOnly:\t{}\n",
                n.get("server").and_then(|v| v.as_str()).unwrap_or(""),
                n.get("path").and_then(|v| v.as_str()).unwrap_or(""),
                n.get("readOnly").and_then(|v| v.as_bool()).unwrap_or(false)
            ),
        );
    } else if let Some(c) = jget(&json, "spec.csi") {
        w.w(
            2,
            format!(
                "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t{}\n    FSType:\t{}\n    VolumeHandle:\t{}\n    ReadOnly:\t{}\n",
                c.get("driver").and_then(|v| v.as_str()).unwrap_or(""),
                c.get("fsType").and_then(|v| v.as_str()).unwrap_or(""),
                c.get("volumeHandle").and_then(|v| v.as_str()).unwrap_or(""),
                c.get("readOnly").and_then(|v| v.as_bool()).unwrap_or(false)
            ),
        );
        // printCSIPersistentVolumeAttributesMultiline: every write at LEVEL_2, so the values
        // after the first line's tab carry the level's indent too; keys sorted, lines cut at
        // maxAnnotationLen.
        w.w(2, "VolumeAttributes:\t");
        let attributes: BTreeMap<String, String> = c
            .get("volumeAttributes")
            .and_then(|a| a.as_object())
            .map(|a| a.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
            .unwrap_or_default();
        if attributes.is_empty() {
            w.w(0, "<none>\n");
        }
        for (i, (key, value)) in attributes.iter().enumerate() {
            if i != 0 {
                w.w(2, "");
                w.w(2, "\t");
            }
            let line = format!("{key}={value}");
            match line.char_indices().nth(140) {
                Some((cut, _)) => w.w(2, format!("{}...\n", &line[..cut])),
                None => w.w(2, format!("{line}\n")),
            }
        }
    } else {
        w.w(2, "<unknown>\n");
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeIngressV1.
fn describe_ingress(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let meta = object.metadata();
    let ns = object.namespace();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    w.w(0, format!("Namespace:\t{ns}\n"));
    let mut addresses: Vec<String> = jget(&json, "status.loadBalancer.ingress")
        .and_then(|i| i.as_array())
        .into_iter()
        .flatten()
        .filter_map(|i| i.get("ip").or_else(|| i.get("hostname")).and_then(|v| v.as_str()).map(str::to_string))
        .collect();
    kubesim_api::sort::sort(&mut addresses);
    w.w(0, format!("Address:\t{}\n", addresses.join(",")));
    w.w(0, format!("Ingress Class:\t{}\n", jstr(&json, "spec.ingressClassName").unwrap_or("<none>")));
    let default_backend = jget(&json, "spec.defaultBackend").map(|b| ingress_backend(api, ns, b)).unwrap_or_else(|| "<default>".into());
    w.w(0, format!("Default backend:\t{default_backend}\n"));
    if let Some(tls) = jget(&json, "spec.tls").and_then(|t| t.as_array()).filter(|t| !t.is_empty()) {
        w.w(0, "TLS:\n");
        for t in tls {
            let hosts: Vec<&str> = t.get("hosts").and_then(|h| h.as_array()).into_iter().flatten().filter_map(|h| h.as_str()).collect();
            match t.get("secretName").and_then(|s| s.as_str()) {
                Some(secret) => w.w(1, format!("{secret} terminates {}\n", hosts.join(","))),
                None => w.w(1, format!("SNI routes {}\n", hosts.join(","))),
            }
        }
    }
    w.w(0, "Rules:\n  Host\tPath\tBackends\n");
    w.w(1, "----\t----\t--------\n");
    let mut count = 0;
    for rule in jget(&json, "spec.rules").and_then(|r| r.as_array()).into_iter().flatten() {
        let Some(http) = rule.get("http") else { continue };
        count += 1;
        let host = rule.get("host").and_then(|h| h.as_str()).filter(|h| !h.is_empty()).unwrap_or("*");
        w.w(1, format!("{host}\t\n"));
        for path in http.get("paths").and_then(|p| p.as_array()).into_iter().flatten() {
            let backend = path.get("backend").map(|b| ingress_backend(api, ns, b)).unwrap_or_default();
            w.w(2, format!("\t{} \t{backend}\n", path.get("path").and_then(|p| p.as_str()).unwrap_or("")));
        }
    }
    if count == 0 {
        w.w(1, format!("*\t*\t{default_backend}\n"));
    }
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

/// describeBackendV1: `service:port (endpoints)` or the lookup error.
fn ingress_backend(api: &ApiServer, ns: &str, backend: &Value) -> String {
    let Some(svc) = backend.get("service") else {
        return match backend.get("resource") {
            Some(r) => format!(
                "APIGroup: {}, Kind: {}, Name: {}",
                r.get("apiGroup").and_then(|v| v.as_str()).unwrap_or(""),
                r.get("kind").and_then(|v| v.as_str()).unwrap_or(""),
                r.get("name").and_then(|v| v.as_str()).unwrap_or("")
            ),
            None => String::new(),
        };
    };
    let name = svc.get("name").and_then(|v| v.as_str()).unwrap_or("");
    let port_number = svc.pointer("/port/number").and_then(|v| v.as_i64());
    let port_name = svc.pointer("/port/name").and_then(|v| v.as_str());
    let stringer = match (port_number, port_name) {
        (Some(n), _) => format!("{name}:{n}"),
        (None, Some(p)) => format!("{name}:{p}"),
        _ => name.to_string(),
    };
    let svc_info = kind_info("v1", "Service").expect("services");
    let service = match api.get(svc_info, ns, name) {
        Ok(s) => s,
        Err(e) => return format!("{stringer} (<error: {}>)", e.message),
    };
    let port = service
        .to_json()
        .pointer("/spec/ports")
        .and_then(|p| p.as_array())
        .and_then(|ports| {
            ports.iter().find(|p| {
                port_number.is_some_and(|n| p.get("port").and_then(|v| v.as_i64()) == Some(n))
                    || port_name.is_some_and(|n| p.get("name").and_then(|v| v.as_str()) == Some(n))
            })
        })
        .and_then(|p| p.get("name").and_then(|v| v.as_str()).map(str::to_string))
        .unwrap_or_default();
    let endpoints = match service_endpoints(api, &service) {
        None => "<none>".to_string(),
        Some(map) => {
            let eps = map.get(&port).cloned().unwrap_or_default();
            if eps.is_empty() {
                "<none>".to_string()
            } else {
                format_endpoint_list(&eps)
            }
        }
    };
    format!("{stringer} ({endpoints})")
}

/// describeHorizontalPodAutoscalerV2.
fn describe_hpa(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let mut w = Writer::default();
    let meta = object.metadata();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("CreationTimestamp:\t{}\n", meta.creation_timestamp.as_ref().map(rfc1123z).unwrap_or_default()));
    let kind = jstr(&json, "spec.scaleTargetRef.kind").unwrap_or("").to_string();
    w.w(0, format!("Reference:\t{kind}/{}\n", jstr(&json, "spec.scaleTargetRef.name").unwrap_or("")));
    w.w(0, "Metrics:\t( current / target )\n");
    let current = jget(&json, "status.currentMetrics").and_then(|m| m.as_array()).cloned().unwrap_or_default();
    let text = |v: Option<&Value>| v.map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
    for (i, metric) in jget(&json, "spec.metrics").and_then(|m| m.as_array()).into_iter().flatten().enumerate() {
        match metric.get("type").and_then(|t| t.as_str()).unwrap_or("") {
            "Resource" => {
                let name = metric.pointer("/resource/name").and_then(|n| n.as_str()).unwrap_or("");
                let cur = current.get(i).and_then(|c| c.pointer("/resource/current"));
                if let Some(target) = text(metric.pointer("/resource/target/averageValue")) {
                    let c = text(cur.and_then(|c| c.get("averageValue"))).unwrap_or_else(|| "<unknown>".into());
                    w.w(1, format!("resource {name} on pods:\t{c} / {target}\n"));
                } else {
                    let c = match (cur.and_then(|c| c.get("averageUtilization")).and_then(|u| u.as_i64()), text(cur.and_then(|c| c.get("averageValue")))) {
                        (Some(u), Some(v)) => format!("{u}% ({v})"),
                        _ => "<unknown>".into(),
                    };
                    let t = metric
                        .pointer("/resource/target/averageUtilization")
                        .and_then(|u| u.as_i64())
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<auto>".into());
                    w.w(1, format!("resource {name} on pods  (as a percentage of request):\t{c} / {t}\n"));
                }
            }
            other => {
                let key = match other {
                    "Pods" => "pods",
                    "Object" => "object",
                    "External" => "external",
                    "ContainerResource" => "containerResource",
                    _ => "",
                };
                let name =
                    metric.pointer(&format!("/{key}/metric/name")).or_else(|| metric.pointer(&format!("/{key}/name"))).and_then(|n| n.as_str()).unwrap_or("");
                let target = text(metric.pointer(&format!("/{key}/target/averageValue")).or_else(|| metric.pointer(&format!("/{key}/target/value"))))
                    .unwrap_or_else(|| "<auto>".into());
                w.w(1, format!("\"{name}\" ({}):\t<unknown> / {target}\n", other.to_ascii_lowercase()));
            }
        }
    }
    w.w(0, format!("Min replicas:\t{}\n", jget(&json, "spec.minReplicas").and_then(|v| v.as_i64()).map(|v| v.to_string()).unwrap_or_else(|| "<unset>".into())));
    w.w(0, format!("Max replicas:\t{}\n", jint(&json, "spec.maxReplicas")));
    w.w(0, format!("{kind} pods:\t{} current / {} desired\n", jint(&json, "status.currentReplicas"), jint(&json, "status.desiredReplicas")));
    if let Some(conditions) = jget(&json, "status.conditions").and_then(|c| c.as_array()).filter(|c| !c.is_empty()) {
        w.w(0, "Conditions:\n");
        w.w(1, "Type\tStatus\tReason\tMessage\n");
        w.w(1, "----\t------\t------\t-------\n");
        for c in conditions {
            let f = |k: &str| c.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
            w.w(1, format!("{}\t{}\t{}\t{}\n", f("type"), f("status"), f("reason"), f("message")));
        }
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn describe_pdb(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    let render = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some(v) = jget(&json, "spec.minAvailable") {
        w.w(0, format!("Min available:\t{}\n", render(v)));
    } else if let Some(v) = jget(&json, "spec.maxUnavailable") {
        w.w(0, format!("Max unavailable:\t{}\n", render(v)));
    }
    match label_selector_json(jget(&json, "spec.selector")) {
        Some(s) => w.w(0, format!("Selector:\t{}\n", format_label_selector(Some(&s)))),
        None => w.w(0, "Selector:\t<unset>\n"),
    }
    w.w(0, "Status:\n");
    w.w(2, format!("Allowed disruptions:\t{}\n", jint(&json, "status.disruptionsAllowed")));
    w.w(2, format!("Current:\t{}\n", jint(&json, "status.currentHealthy")));
    w.w(2, format!("Desired:\t{}\n", jint(&json, "status.desiredHealthy")));
    w.w(2, format!("Total:\t{}\n", jint(&json, "status.expectedPods")));
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn describe_stateful_set(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let mut w = Writer::default();
    let meta = object.metadata();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    w.w(0, format!("CreationTimestamp:\t{}\n", meta.creation_timestamp.as_ref().map(rfc1123z).unwrap_or_default()));
    let selector = label_selector_json(jget(&json, "spec.selector"));
    w.w(0, format!("Selector:\t{}\n", format_label_selector(selector.as_ref())));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("Replicas:\t{} desired | {} total\n", jget(&json, "spec.replicas").and_then(|v| v.as_i64()).unwrap_or(1), jint(&json, "status.replicas")));
    w.w(0, format!("Update Strategy:\t{}\n", jstr(&json, "spec.updateStrategy.type").unwrap_or("RollingUpdate")));
    if jstr(&json, "spec.updateStrategy.type").unwrap_or("RollingUpdate") == "RollingUpdate" {
        w.w(1, format!("Partition:\t{}\n", jint(&json, "spec.updateStrategy.rollingUpdate.partition")));
    }
    let sel = kubesim_api::selector::Selector::from_label_selector(&selector.unwrap_or_default());
    let (running, waiting, succeeded, failed, _) = pods_status(api, object.namespace(), &sel, meta.uid.as_deref());
    w.w(0, format!("Pods Status:\t{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed\n"));
    let template: PodTemplateSpec = jget(&json, "spec.template").and_then(|t| serde_json::from_value(t.clone()).ok()).unwrap_or_default();
    write_pod_template(&mut w, &template);
    let claims = jget(&json, "spec.volumeClaimTemplates").and_then(|c| c.as_array()).cloned().unwrap_or_default();
    if claims.is_empty() {
        w.w(0, "Volume Claims:\t<none>\n");
    } else {
        w.w(0, "Volume Claims:\n");
        for c in &claims {
            let labels: Option<BTreeMap<String, String>> = c.pointer("/metadata/labels").and_then(|l| serde_json::from_value(l.clone()).ok());
            let annotations: Option<BTreeMap<String, String>> = c.pointer("/metadata/annotations").and_then(|l| serde_json::from_value(l.clone()).ok());
            w.w(1, format!("Name:\t{}\n", c.pointer("/metadata/name").and_then(|n| n.as_str()).unwrap_or("")));
            w.w(1, format!("StorageClass:\t{}\n", c.pointer("/spec/storageClassName").and_then(|n| n.as_str()).unwrap_or("")));
            w.w(0, "  ");
            labels_multiline(&mut w, "Labels", labels.as_ref());
            w.w(0, "  ");
            annotations_multiline(&mut w, "Annotations", annotations.as_ref());
            w.w(1, format!("Capacity:\t{}\n", c.pointer("/spec/resources/requests/storage").and_then(|n| n.as_str()).unwrap_or("")));
            let modes: Vec<&str> = c.pointer("/spec/accessModes").and_then(|m| m.as_array()).into_iter().flatten().filter_map(|m| m.as_str()).collect();
            w.w(1, format!("Access Modes:\t[{}]\n", modes.join(" ")));
        }
    }
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn describe_daemon_set(api: &ApiServer, object: &Object, now: Millis) -> String {
    let json = object.to_json();
    let mut w = Writer::default();
    let meta = object.metadata();
    w.w(0, format!("Name:\t{}\n", object.name()));
    let selector = label_selector_json(jget(&json, "spec.selector"));
    w.w(0, format!("Selector:\t{}\n", format_label_selector(selector.as_ref())));
    let node_selector: Option<BTreeMap<String, String>> = jget(&json, "spec.template.spec.nodeSelector").and_then(|v| serde_json::from_value(v.clone()).ok());
    w.w(0, format!("Node-Selector:\t{}\n", util::format_labels(node_selector.as_ref())));
    labels_multiline(&mut w, "Labels", meta.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", meta.annotations.as_ref());
    w.w(0, format!("Desired Number of Nodes Scheduled: {}\n", jint(&json, "status.desiredNumberScheduled")));
    w.w(0, format!("Current Number of Nodes Scheduled: {}\n", jint(&json, "status.currentNumberScheduled")));
    w.w(0, format!("Number of Nodes Scheduled with Up-to-date Pods: {}\n", jint(&json, "status.updatedNumberScheduled")));
    w.w(0, format!("Number of Nodes Scheduled with Available Pods: {}\n", jint(&json, "status.numberAvailable")));
    w.w(0, format!("Number of Nodes Misscheduled: {}\n", jint(&json, "status.numberMisscheduled")));
    let sel = kubesim_api::selector::Selector::from_label_selector(&selector.unwrap_or_default());
    let (running, waiting, succeeded, failed, _) = pods_status(api, object.namespace(), &sel, meta.uid.as_deref());
    w.w(0, format!("Pods Status:\t{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed\n"));
    let template: PodTemplateSpec = jget(&json, "spec.template").and_then(|t| serde_json::from_value(t.clone()).ok()).unwrap_or_default();
    write_pod_template(&mut w, &template);
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn describe_config_map(api: &ApiServer, object: &Object, now: Millis) -> String {
    let Object::ConfigMap(cm) = object else { return String::new() };
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", cm.metadata.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", cm.metadata.annotations.as_ref());
    w.w(0, "\nData\n====\n");
    for (k, v) in cm.data.iter().flatten() {
        w.w(0, format!("{k}:\n----\n"));
        w.w(0, format!("{v}\n\n"));
    }
    w.w(0, "\nBinaryData\n====\n");
    for (k, v) in cm.binary_data.iter().flatten() {
        w.w(0, format!("{k}: {} bytes\n", v.0.len()));
    }
    w.w(0, "\n");
    describe_events(&mut w, &events_for(api, object), now);
    w.finish()
}

fn describe_secret(object: &Object) -> String {
    let Object::Secret(secret) = object else { return String::new() };
    let mut w = Writer::default();
    w.w(0, format!("Name:\t{}\n", object.name()));
    w.w(0, format!("Namespace:\t{}\n", object.namespace()));
    labels_multiline(&mut w, "Labels", secret.metadata.labels.as_ref());
    annotations_multiline(&mut w, "Annotations", secret.metadata.annotations.as_ref());
    w.w(0, format!("\nType:\t{}\n\n", secret.type_.clone().unwrap_or_default()));
    w.w(0, "Data\n====\n");
    for (k, v) in secret.data.iter().flatten() {
        w.w(0, format!("{k}:\t{} bytes\n", v.0.len()));
    }
    w.finish()
}

/// Describes one object.
pub fn describe_object(api: &ApiServer, info: &KindInfo, object: &Object, now: Millis) -> String {
    match object {
        Object::Pod(p) => describe_pod(api, p, object, now),
        Object::Deployment(_) => describe_deployment(api, object, now),
        Object::ReplicaSet(_) => describe_replica_set(api, object, now),
        Object::Service(s) => describe_service(api, s, object, now),
        Object::Node(n) => describe_node(api, n, object, now),
        Object::Namespace(_) => describe_namespace(api, object, now),
        Object::Dynamic(d) if d.kind == "Job" => describe_job(api, object, now),
        Object::Dynamic(d) if d.kind == "StatefulSet" => describe_stateful_set(api, object, now),
        Object::Dynamic(d) if d.kind == "DaemonSet" => describe_daemon_set(api, object, now),
        Object::Dynamic(d) if d.kind == "PodDisruptionBudget" => describe_pdb(api, object, now),
        Object::Dynamic(d) if d.kind == "HorizontalPodAutoscaler" => describe_hpa(api, object, now),
        Object::Dynamic(d) if d.kind == "PersistentVolumeClaim" => describe_pvc(api, object, now),
        Object::Dynamic(d) if d.kind == "PersistentVolume" => describe_pv(api, object, now),
        Object::Ingress(_) => describe_ingress(api, object, now),
        Object::Dynamic(d) if d.kind == "ResourceQuota" => describe_quota(object),
        Object::Dynamic(d) if d.kind == "LimitRange" => describe_limit_range(object),
        Object::Dynamic(d) if d.kind == "CronJob" => describe_cron_job(api, object, now),
        Object::Dynamic(d) if d.kind == "Endpoints" => describe_endpoints(api, object, now),
        Object::Dynamic(d) if d.kind == "EndpointSlice" => describe_endpoint_slice(api, object, now),
        Object::Dynamic(d) if d.kind == "StorageClass" => describe_storage_class(api, object, now),
        Object::IngressClass(_) => describe_ingress_class(api, object, now),
        Object::Dynamic(d) if d.kind == "NetworkPolicy" => describe_network_policy(object),
        Object::Dynamic(d) if d.kind == "PriorityClass" => describe_priority_class(api, object, now),
        Object::Dynamic(d) if d.kind == "ReplicationController" => describe_replication_controller(api, object, now),
        Object::Dynamic(d) if d.kind == "Role" || d.kind == "ClusterRole" => describe_role(object),
        Object::Dynamic(d) if d.kind == "RoleBinding" || d.kind == "ClusterRoleBinding" => describe_role_binding(object),
        Object::ServiceAccount(_) => describe_service_account(api, object, now),
        Object::ConfigMap(_) => describe_config_map(api, object, now),
        Object::Secret(_) => describe_secret(object),
        _ => describe_generic(api, info, object, now),
    }
}

/// `kubectl describe TYPE [NAME_PREFIX | -l selector]` or `TYPE/NAME`.
pub fn run(args: &Args, api: &mut ApiServer, req: &mut Request, namespace: &str, out: &mut Output) {
    let targets = match &args.file_targets {
        Some(files) => crate::get::file_groups(files),
        None => match parse_targets(&args.positional) {
            Ok(t) => t,
            Err(e) => return out.fail(e.replace("to get", "to describe")),
        },
    };
    let filter = match Filter::from_args(args, namespace) {
        Ok(f) => f,
        Err(e) => return out.fail(e),
    };
    let mut described: Vec<String> = Vec::new();
    if let Some(files) = &args.file_targets {
        for (info, objects) in crate::get::collect_files(api, files, out) {
            for o in objects {
                described.push(describe_object(api, info, &o, req.now));
            }
        }
        if !described.is_empty() {
            out.out(described.join("\n\n"));
        }
        return;
    }
    for (info, names) in &targets.groups {
        if names.is_empty() {
            let listed = match filter.list(api, info) {
                Ok(l) => l,
                Err(e) => {
                    out.fail(e);
                    continue;
                }
            };
            for o in listed {
                described.push(describe_object(api, info, &o, req.now));
            }
            continue;
        }
        for name in names {
            let ns = util::namespace_for(info, namespace);
            match api.get(info, &ns, name) {
                Ok(o) => described.push(describe_object(api, info, &o, req.now)),
                Err(e) => {
                    // describe falls back to a name prefix match.
                    let matches: Vec<Arc<Object>> = util::list(api, info, Some(&ns)).into_iter().filter(|o| o.name().starts_with(name.as_str())).collect();
                    if matches.is_empty() {
                        out.fail(server_error(&e));
                    }
                    for o in matches {
                        described.push(describe_object(api, info, &o, req.now));
                    }
                }
            }
        }
    }
    if described.is_empty() && out.exit_code == 0 {
        out.errln(crate::get::no_resources(filter.namespace.as_deref()));
        return;
    }
    out.out(described.join("\n\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    // Mirrors describe.go printAnnotationsMultiline (maxAnnotationLen 140, multi-line values).
    #[test]
    fn long_and_multiline_annotations_get_their_own_lines() {
        let mut w = Writer::default();
        let long = "x".repeat(150);
        let annotations: BTreeMap<String, String> =
            [("a".to_string(), "short".to_string()), ("b".to_string(), long.clone()), ("c".to_string(), "one\ntwo\n".to_string())].into();
        annotations_multiline(&mut w, "Annotations", Some(&annotations));
        let want = format!(
            "Annotations:  a: short\n              b:\n                {}...\n              c:\n                one\n                two\n",
            &long[..138]
        );
        assert_eq!(w.finish(), want);
    }

    // Follows describe.go smartLabelFor over fatih/camelcase.Split (runs of lower, upper, other).
    #[test]
    fn smart_labels_follow_describe_go() {
        let cases = [
            ("", ""),
            ("apiVersion", "API Version"),
            ("Api", "API"),
            ("url", "URL"),
            ("uid", "UID"),
            ("minAvailable", "Min Available"),
            ("creationTimestamp", "Creation Timestamp"),
            ("podCIDR", "Pod CIDR"),
            ("special.how", "special.how"),
            ("api-version", "API - Version"),
            ("foo_bar", "foo_bar"),
        ];
        for (field, want) in cases {
            assert_eq!(smart_label(field), want, "{field}");
        }
    }
}
