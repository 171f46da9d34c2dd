//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`): client-go 1.32's typed
//! clients send them, so kubectl's generators (`create deployment|job|cronjob|configmap|
//! secret|namespace|service|serviceaccount`), `auth can-i` (SelfSubjectAccessReview), `drain`
//! (Eviction) and `autoscale` do. The envelope is `k8s\0` + `runtime.Unknown{typeMeta, raw}`;
//! `raw` is decoded by a field table for the messages those commands send (field numbers from
//! the `protobuf:"..."` tags of k8s.io/api). Unknown field numbers are skipped, and a kind
//! without a table is answered 415, as for any unsupported media type.

use crate::status::Failure;
use serde_json::{json, Map, Value};

/// How one field is encoded.
#[derive(Clone, Copy)]
enum F {
    Str,
    Int,
    Bool,
    Msg(&'static str),
    StrMap,
    BytesMap,
    Time,
    Quantity,
    IntOrString,
    QuantityMap,
}

/// (field number, JSON name, encoding, repeated).
type Table = &'static [(u32, &'static str, F, bool)];

fn table(message: &str) -> Option<Table> {
    use F::*;
    Some(match message {
        "ObjectMeta" => &[
            (1, "name", Str, false),
            (2, "generateName", Str, false),
            (3, "namespace", Str, false),
            (5, "uid", Str, false),
            (6, "resourceVersion", Str, false),
            (7, "generation", Int, false),
            (8, "creationTimestamp", Time, false),
            (11, "labels", StrMap, false),
            (12, "annotations", StrMap, false),
            (13, "ownerReferences", Msg("OwnerReference"), true),
            (14, "finalizers", Str, true),
        ],
        "OwnerReference" => &[
            (1, "kind", Str, false),
            (3, "name", Str, false),
            (4, "uid", Str, false),
            (5, "apiVersion", Str, false),
            (6, "controller", Bool, false),
            (7, "blockOwnerDeletion", Bool, false),
        ],
        "LabelSelector" => &[(1, "matchLabels", StrMap, false), (2, "matchExpressions", Msg("LabelSelectorRequirement"), true)],
        "LabelSelectorRequirement" => &[(1, "key", Str, false), (2, "operator", Str, false), (3, "values", Str, true)],
        "Deployment" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("DeploymentSpec"), false), (3, "status", Msg("Empty"), false)],
        "DeploymentSpec" => &[
            (1, "replicas", Int, false),
            (2, "selector", Msg("LabelSelector"), false),
            (3, "template", Msg("PodTemplateSpec"), false),
            (4, "strategy", Msg("DeploymentStrategy"), false),
            (5, "minReadySeconds", Int, false),
            (6, "revisionHistoryLimit", Int, false),
            (7, "paused", Bool, false),
            (9, "progressDeadlineSeconds", Int, false),
        ],
        "DeploymentStrategy" => &[(1, "type", Str, false)],
        "PodTemplateSpec" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("PodSpec"), false)],
        "PodSpec" => &[
            (1, "volumes", Msg("Volume"), true),
            (2, "containers", Msg("Container"), true),
            (3, "restartPolicy", Str, false),
            (4, "terminationGracePeriodSeconds", Int, false),
            (5, "activeDeadlineSeconds", Int, false),
            (6, "dnsPolicy", Str, false),
            (7, "nodeSelector", StrMap, false),
            (8, "serviceAccountName", Str, false),
            (9, "serviceAccount", Str, false),
            (10, "nodeName", Str, false),
            (11, "hostNetwork", Bool, false),
            (14, "securityContext", Msg("Empty"), false),
            (15, "imagePullSecrets", Msg("LocalObjectReference"), true),
            (16, "hostname", Str, false),
            (17, "subdomain", Str, false),
            (19, "schedulerName", Str, false),
            (20, "initContainers", Msg("Container"), true),
            (22, "tolerations", Msg("Toleration"), true),
            (24, "priorityClassName", Str, false),
            (25, "priority", Int, false),
        ],
        "Volume" => &[(1, "name", Str, false)],
        "LocalObjectReference" => &[(1, "name", Str, false)],
        "Toleration" => {
            &[(1, "key", Str, false), (2, "operator", Str, false), (3, "value", Str, false), (4, "effect", Str, false), (5, "tolerationSeconds", Int, false)]
        }
        "Container" => &[
            (1, "name", Str, false),
            (2, "image", Str, false),
            (3, "command", Str, true),
            (4, "args", Str, true),
            (5, "workingDir", Str, false),
            (6, "ports", Msg("ContainerPort"), true),
            (7, "env", Msg("EnvVar"), true),
            (8, "resources", Msg("ResourceRequirements"), false),
            (13, "terminationMessagePath", Str, false),
            (14, "imagePullPolicy", Str, false),
            (16, "stdin", Bool, false),
            (17, "stdinOnce", Bool, false),
            (18, "tty", Bool, false),
            (20, "terminationMessagePolicy", Str, false),
        ],
        "ContainerPort" => {
            &[(1, "name", Str, false), (2, "hostPort", Int, false), (3, "containerPort", Int, false), (4, "protocol", Str, false), (5, "hostIP", Str, false)]
        }
        "EnvVar" => &[(1, "name", Str, false), (2, "value", Str, false)],
        "ResourceRequirements" => &[(1, "limits", QuantityMap, false), (2, "requests", QuantityMap, false)],
        "Namespace" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("Empty"), false), (3, "status", Msg("Empty"), false)],
        "ConfigMap" => {
            &[(1, "metadata", Msg("ObjectMeta"), false), (2, "data", StrMap, false), (3, "binaryData", BytesMap, false), (4, "immutable", Bool, false)]
        }
        "Secret" => &[
            (1, "metadata", Msg("ObjectMeta"), false),
            (2, "data", BytesMap, false),
            (3, "type", Str, false),
            (4, "stringData", StrMap, false),
            (5, "immutable", Bool, false),
        ],
        "ServiceAccount" => &[(1, "metadata", Msg("ObjectMeta"), false)],
        "Service" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("ServiceSpec"), false), (3, "status", Msg("Empty"), false)],
        "ServiceSpec" => &[
            (1, "ports", Msg("ServicePort"), true),
            (2, "selector", StrMap, false),
            (3, "clusterIP", Str, false),
            (4, "type", Str, false),
            (5, "externalIPs", Str, true),
            (7, "sessionAffinity", Str, false),
            (8, "loadBalancerIP", Str, false),
            (10, "externalName", Str, false),
        ],
        "ServicePort" => {
            &[(1, "name", Str, false), (2, "protocol", Str, false), (3, "port", Int, false), (4, "targetPort", IntOrString, false), (5, "nodePort", Int, false)]
        }
        "Job" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("JobSpec"), false), (3, "status", Msg("Empty"), false)],
        "JobSpec" => &[
            (1, "parallelism", Int, false),
            (2, "completions", Int, false),
            (3, "activeDeadlineSeconds", Int, false),
            (4, "selector", Msg("LabelSelector"), false),
            (5, "manualSelector", Bool, false),
            (6, "template", Msg("PodTemplateSpec"), false),
            (7, "backoffLimit", Int, false),
            (8, "ttlSecondsAfterFinished", Int, false),
            (9, "completionMode", Str, false),
            (10, "suspend", Bool, false),
        ],
        "CronJob" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("CronJobSpec"), false), (3, "status", Msg("Empty"), false)],
        "CronJobSpec" => &[
            (1, "schedule", Str, false),
            (2, "startingDeadlineSeconds", Int, false),
            (3, "concurrencyPolicy", Str, false),
            (4, "suspend", Bool, false),
            (5, "jobTemplate", Msg("JobTemplateSpec"), false),
            (6, "successfulJobsHistoryLimit", Int, false),
            (7, "failedJobsHistoryLimit", Int, false),
            (8, "timeZone", Str, false),
        ],
        "JobTemplateSpec" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("JobSpec"), false)],
        "SelfSubjectAccessReview" => {
            &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("SelfSubjectAccessReviewSpec"), false), (3, "status", Msg("Empty"), false)]
        }
        "SelfSubjectAccessReviewSpec" => {
            &[(1, "resourceAttributes", Msg("ResourceAttributes"), false), (2, "nonResourceAttributes", Msg("NonResourceAttributes"), false)]
        }
        "ResourceAttributes" => &[
            (1, "namespace", Str, false),
            (2, "verb", Str, false),
            (3, "group", Str, false),
            (4, "version", Str, false),
            (5, "resource", Str, false),
            (6, "subresource", Str, false),
            (7, "name", Str, false),
        ],
        "NonResourceAttributes" => &[(1, "path", Str, false), (2, "verb", Str, false)],
        "SelfSubjectRulesReview" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("SelfSubjectRulesReviewSpec"), false)],
        "SelfSubjectRulesReviewSpec" => &[(1, "namespace", Str, false)],
        "SelfSubjectReview" => &[(1, "metadata", Msg("ObjectMeta"), false)],
        "Eviction" => &[(1, "metadata", Msg("ObjectMeta"), false), (2, "deleteOptions", Msg("DeleteOptions"), false)],
        "DeleteOptions" => &[
            (1, "gracePeriodSeconds", Int, false),
            (2, "preconditions", Msg("Preconditions"), false),
            (3, "orphanDependents", Bool, false),
            (4, "propagationPolicy", Str, false),
            (5, "dryRun", Str, true),
        ],
        "Preconditions" => &[(1, "uid", Str, false), (2, "resourceVersion", Str, false)],
        "HorizontalPodAutoscaler" => {
            &[(1, "metadata", Msg("ObjectMeta"), false), (2, "spec", Msg("HorizontalPodAutoscalerSpec"), false), (3, "status", Msg("Empty"), false)]
        }
        "HorizontalPodAutoscalerSpec" => &[
            (1, "scaleTargetRef", Msg("CrossVersionObjectReference"), false),
            (2, "minReplicas", Int, false),
            (3, "maxReplicas", Int, false),
            (4, "targetCPUUtilizationPercentage", Int, false),
        ],
        "CrossVersionObjectReference" => &[(1, "kind", Str, false), (2, "name", Str, false), (3, "apiVersion", Str, false)],
        "Empty" => &[],
        _ => return None,
    })
}

/// Pointer fields, whose zero values are meaningful (`replicas: 0`, `gracePeriodSeconds: 0`).
const POINTERS: &[&str] = &[
    "replicas",
    "parallelism",
    "completions",
    "backoffLimit",
    "activeDeadlineSeconds",
    "terminationGracePeriodSeconds",
    "gracePeriodSeconds",
    "ttlSecondsAfterFinished",
    "revisionHistoryLimit",
    "progressDeadlineSeconds",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
    "startingDeadlineSeconds",
    "priority",
    "tolerationSeconds",
    "minReplicas",
    "targetCPUUtilizationPercentage",
    "manualSelector",
    "suspend",
    "controller",
    "blockOwnerDeletion",
    "immutable",
    "orphanDependents",
];

/// A decoded field: (number, varint value, length-delimited bytes).
type Field<'a> = (u32, u64, &'a [u8]);

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

fn bad(why: &str) -> Failure {
    Failure::bad_request(format!("failed to decode the protobuf body: {why}"))
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, Failure> {
        let start = self.pos;
        kubesim_api::varint::get(self.data, &mut self.pos)
            .ok_or_else(|| bad(if self.data.len() - start >= 10 { "varint too long" } else { "truncated varint" }))
    }
    fn bytes(&mut self) -> Result<&'a [u8], Failure> {
        let len = self.varint()? as usize;
        let end = self.pos.checked_add(len).filter(|e| *e <= self.data.len()).ok_or_else(|| bad("truncated field"))?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    /// The next field: (number, wire type, varint value or bytes).
    fn field(&mut self) -> Result<Option<Field<'a>>, Failure> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let (number, wire) = ((key >> 3) as u32, key & 7);
        match wire {
            0 => Ok(Some((number, self.varint()?, &[]))),
            2 => Ok(Some((number, 0, self.bytes()?))),
            1 => {
                self.pos += 8;
                Ok(Some((number, 0, &[])))
            }
            5 => {
                self.pos += 4;
                Ok(Some((number, 0, &[])))
            }
            _ => Err(bad("unsupported wire type")),
        }
    }
}

fn fields(data: &[u8]) -> Result<Vec<Field<'_>>, Failure> {
    let mut r = Reader { data, pos: 0 };
    let mut out = Vec::new();
    while let Some(f) = r.field()? {
        out.push(f);
    }
    Ok(out)
}

fn text(b: &[u8]) -> Result<String, Failure> {
    String::from_utf8(b.to_vec()).map_err(|_| bad("a string is not UTF-8"))
}

fn map_entry(b: &[u8]) -> Result<(String, Vec<u8>), Failure> {
    let mut key = String::new();
    let mut value = Vec::new();
    for (n, _, bytes) in fields(b)? {
        match n {
            1 => key = text(bytes)?,
            2 => value = bytes.to_vec(),
            _ => {}
        }
    }
    Ok((key, value))
}

fn scalar(f: F, varint: u64, bytes: &[u8], depth: usize) -> Result<Value, Failure> {
    Ok(match f {
        F::Str => Value::String(text(bytes)?),
        F::Int => Value::from(varint as i64),
        F::Bool => Value::Bool(varint != 0),
        F::Msg(name) => message(name, bytes, depth + 1)?,
        F::Time => {
            let mut seconds = 0i64;
            for (n, v, _) in fields(bytes)? {
                if n == 1 {
                    seconds = v as i64;
                }
            }
            match kubesim_api::k8s_openapi::jiff::Timestamp::from_second(seconds) {
                // The zero time (`creationTimestamp: null` in JSON) is an empty message.
                Ok(t) if seconds != 0 => json!(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
                _ => Value::Null,
            }
        }
        F::Quantity => {
            let mut s = String::new();
            for (n, _, b) in fields(bytes)? {
                if n == 1 {
                    s = text(b)?;
                }
            }
            Value::String(s)
        }
        F::IntOrString => {
            let (mut kind, mut int, mut string) = (0, 0i64, String::new());
            for (n, v, b) in fields(bytes)? {
                match n {
                    1 => kind = v,
                    2 => int = v as i64,
                    3 => string = text(b)?,
                    _ => {}
                }
            }
            if kind == 1 {
                Value::String(string)
            } else {
                Value::from(int)
            }
        }
        F::StrMap | F::BytesMap | F::QuantityMap => unreachable!("maps are decoded by entries"),
    })
}

fn message(name: &str, data: &[u8], depth: usize) -> Result<Value, Failure> {
    if depth > 64 {
        return Err(bad("nesting too deep"));
    }
    let table = table(name).ok_or_else(|| Failure::unsupported_media_type(&format!("application/vnd.kubernetes.protobuf ({name})")))?;
    let mut out = Map::new();
    for (number, varint, bytes) in fields(data)? {
        let Some((_, json_name, f, repeated)) = table.iter().find(|(n, ..)| *n == number) else { continue };
        match f {
            F::StrMap | F::BytesMap | F::QuantityMap => {
                let (k, v) = map_entry(bytes)?;
                let value = match f {
                    F::StrMap => Value::String(text(&v)?),
                    F::BytesMap => Value::String(crate::ws::base64(&v)),
                    _ => scalar(F::Quantity, 0, &v, depth)?,
                };
                out.entry(json_name.to_string()).or_insert_with(|| json!({}))[k] = value;
            }
            _ if *repeated => {
                if matches!(f, F::Int) && !bytes.is_empty() {
                    // packed varints
                    let mut r = Reader { data: bytes, pos: 0 };
                    while r.pos < bytes.len() {
                        let v = r.varint()?;
                        out.entry(json_name.to_string()).or_insert_with(|| json!([])).as_array_mut().expect("lists").push(Value::from(v as i64));
                    }
                    continue;
                }
                let v = scalar(*f, varint, bytes, depth)?;
                out.entry(json_name.to_string()).or_insert_with(|| json!([])).as_array_mut().expect("lists").push(v);
            }
            _ => {
                let v = scalar(*f, varint, bytes, depth)?;
                // Go's non-pointer fields are always on the wire; JSON omits their zero values.
                let zero = v.is_null() || matches!(&v, Value::String(s) if s.is_empty()) || v == json!(0) || v == json!(false);
                if zero && !POINTERS.contains(json_name) {
                    continue;
                }
                out.insert(json_name.to_string(), v);
            }
        }
    }
    Ok(Value::Object(out))
}

/// Decodes a protobuf body (`k8s\0` + runtime.Unknown) into the JSON object it encodes.
pub fn decode(body: &[u8]) -> Result<Value, Failure> {
    let rest = body.strip_prefix(b"k8s\0").ok_or_else(|| bad("missing the k8s protobuf magic number"))?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for (n, _, bytes) in fields(rest)? {
        match n {
            1 => {
                for (m, _, b) in fields(bytes)? {
                    match m {
                        1 => api_version = text(b)?,
                        2 => kind = text(b)?,
                        _ => {}
                    }
                }
            }
            2 => raw = bytes,
            _ => {}
        }
    }
    let mut value = message(&kind, raw, 0)?;
    value["apiVersion"] = api_version.into();
    value["kind"] = kind.into();
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![((n << 3) | 2) as u8, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn a_namespace_envelope_decodes() {
        let meta = field(1, b"team-a");
        let raw = field(1, &meta);
        let mut type_meta = field(1, b"v1");
        type_meta.extend(field(2, b"Namespace"));
        let mut body = b"k8s\0".to_vec();
        body.extend(field(1, &type_meta));
        body.extend(field(2, &raw));
        let v = decode(&body).unwrap();
        assert_eq!(v, json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "team-a" } }));
        assert_eq!(decode(b"nope").unwrap_err().code, 400);
    }
}
