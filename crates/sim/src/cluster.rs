//! The built-in cluster: the objects a fresh API server has, and the default nodes.

use kubesim_api::k8s_openapi::api::core::v1::{Namespace, Node, NodeStatus};
use kubesim_api::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::{DynamicObject, Object};
use std::collections::BTreeMap;

/// Namespaces, the default ServiceCIDR, the `kubernetes` Service and its endpoints, the default
/// StorageClass, PriorityClasses and APIServices every cluster starts with. `service_cidr` is
/// `--service-cluster-ip-range`.
pub fn bootstrap_objects(service_cidr: &str) -> Vec<Object> {
    let mut objects = Vec::new();
    for name in ["default", "kube-node-lease", "kube-public", "kube-system"] {
        let mut labels = BTreeMap::new();
        labels.insert("kubernetes.io/metadata.name".to_string(), name.to_string());
        objects.push(Object::Namespace(Box::new(Namespace {
            metadata: ObjectMeta { name: Some(name.into()), labels: Some(labels), ..Default::default() },
            ..Default::default()
        })));
    }
    // The default ServiceCIDR (kube-apiserver's default-servicecidr controller), which the
    // ClusterIP allocator serves from; the service-cidr-controller adds its finalizer and
    // Ready condition.
    objects.push(dynamic_object(serde_json::json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": { "name": "kubernetes" },
        "spec": { "cidrs": [service_cidr] },
    })));
    let first_ip = kubesim_apiserver::server::ServiceCidrConfig::parse(service_cidr)
        .map(|c| kubesim_apiserver::allocator::ipv4_string(c.network + 1))
        .unwrap_or_else(|| "10.96.0.1".into());
    // The "kubernetes" Service in default: the first address of the service CIDR.
    objects.push(Object::Service(Box::new(kubesim_api::k8s_openapi::api::core::v1::Service {
        metadata: ObjectMeta {
            name: Some("kubernetes".into()),
            namespace: Some("default".into()),
            labels: Some([("component", "apiserver"), ("provider", "kubernetes")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            ..Default::default()
        },
        spec: Some(kubesim_api::k8s_openapi::api::core::v1::ServiceSpec {
            cluster_ip: Some(first_ip),
            ports: Some(vec![kubesim_api::k8s_openapi::api::core::v1::ServicePort {
                name: Some("https".into()),
                port: 443,
                protocol: Some("TCP".into()),
                target_port: Some(kubesim_api::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(6443)),
                ..Default::default()
            }]),
            session_affinity: Some("None".into()),
            type_: Some("ClusterIP".into()),
            ..Default::default()
        }),
        status: None,
    })));
    // Its endpoints, as kube-apiserver's endpoint reconciler writes them (controlplane
    // reconcilers/endpointsadapter.go): the API server's address and secure port; the Endpoints
    // are not mirrored, the EndpointSlice is named after the Service and has no managed-by label.
    let apiserver = kubesim_runtime::apiserver_endpoint::API_SERVER_IP;
    let port = kubesim_runtime::apiserver_endpoint::API_SERVER_PORT;
    objects.push(dynamic_object(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": { "name": "kubernetes", "namespace": "default", "labels": { "endpointslice.kubernetes.io/skip-mirror": "true" } },
        "subsets": [{ "addresses": [{ "ip": apiserver }], "ports": [{ "name": "https", "port": port, "protocol": "TCP" }] }],
    })));
    objects.push(dynamic_object(serde_json::json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": { "name": "kubernetes", "namespace": "default", "labels": { "kubernetes.io/service-name": "kubernetes" } },
        "addressType": "IPv4",
        "endpoints": [{ "addresses": [apiserver], "conditions": { "ready": true } }],
        "ports": [{ "name": "https", "port": port, "protocol": "TCP" }],
    })));
    // The default StorageClass as kind ships it (pkg/build/nodeimage/const_storage.go): the
    // local-path provisioner, WaitForFirstConsumer (the scheduler's VolumeBinding plugin picks
    // the node, the provisioner creates a volume pinned to it).
    let mut sc = serde_json::Map::new();
    sc.insert("provisioner".into(), "rancher.io/local-path".into());
    sc.insert("reclaimPolicy".into(), "Delete".into());
    sc.insert("volumeBindingMode".into(), "WaitForFirstConsumer".into());
    objects.push(Object::Dynamic(Box::new(DynamicObject {
        api_version: "storage.k8s.io/v1".into(),
        kind: "StorageClass".into(),
        cache: Default::default(),
        metadata: ObjectMeta {
            name: Some("standard".into()),
            annotations: Some([("storageclass.kubernetes.io/is-default-class".to_string(), "true".to_string())].into_iter().collect()),
            ..Default::default()
        },
        rest: sc,
    })));
    objects.extend(csi_driver_objects());
    for (name, value, description) in [
        (
            "system-cluster-critical",
            2_000_000_000,
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
        ),
        ("system-node-critical", 2_000_001_000, "Used for system critical pods that must not be moved from their current node."),
    ] {
        let mut rest = serde_json::Map::new();
        rest.insert("value".into(), value.into());
        rest.insert("globalDefault".into(), false.into());
        rest.insert("description".into(), description.into());
        rest.insert("preemptionPolicy".into(), "PreemptLowerPriority".into());
        objects.push(Object::Dynamic(Box::new(DynamicObject {
            api_version: "scheduling.k8s.io/v1".into(),
            kind: "PriorityClass".into(),
            cache: Default::default(),
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            rest,
        })));
    }
    objects.extend(api_services());
    objects
}

/// An object of a kind kubesim keeps as JSON (or typed), from its manifest.
fn dynamic_object(value: serde_json::Value) -> Object {
    let api_version = value["apiVersion"].as_str().unwrap_or_default().to_string();
    let kind = value["kind"].as_str().unwrap_or_default().to_string();
    let info = kubesim_api::object::kind_info(&api_version, &kind).expect("a served kind");
    Object::from_json(info, value).expect("a valid bootstrap object")
}

/// The built-in CSI drivers' objects, as their deployments install them: the CSIDriver of
/// kubesim's network block storage driver (`disk.csi.kubesim.io`, attachRequired) and its
/// StorageClass `block` (WaitForFirstConsumer, expandable, ext4), and csi-driver-host-path's
/// CSIDriver (no attach, pod info on mount, Persistent and Ephemeral, fsGroupPolicy File,
/// deploy/kubernetes-latest/hostpath/csi-hostpath-driverinfo.yaml) with its example class
/// `csi-hostpath-sc` (examples/csi-storageclass.yaml, which does not set
/// `allowVolumeExpansion`: the driver can expand, a class must allow it). Their controller sidecars are
/// `kubesim_controllers::addons`; their node plugins are part of every machine.
pub fn csi_driver_objects() -> Vec<Object> {
    use kubesim_api::csi::{BLOCK_CLASS, DISK_DRIVER, HOSTPATH_CLASS, HOSTPATH_DRIVER};
    use kubesim_api::k8s_openapi::api::storage::v1::{CSIDriver, CSIDriverSpec};
    let labels = |pairs: &[(&str, &str)]| Some(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<String, String>>());
    let disk = CSIDriver {
        metadata: ObjectMeta { name: Some(DISK_DRIVER.into()), labels: labels(&[("app.kubernetes.io/name", "disk-csi-driver")]), ..Default::default() },
        spec: CSIDriverSpec { attach_required: Some(true), pod_info_on_mount: Some(false), ..Default::default() },
    };
    let hostpath = CSIDriver {
        metadata: ObjectMeta {
            name: Some(HOSTPATH_DRIVER.into()),
            labels: labels(&[
                ("app.kubernetes.io/component", "csi-driver"),
                ("app.kubernetes.io/instance", HOSTPATH_DRIVER),
                ("app.kubernetes.io/name", HOSTPATH_DRIVER),
                ("app.kubernetes.io/part-of", "csi-driver-host-path"),
            ]),
            ..Default::default()
        },
        spec: CSIDriverSpec {
            attach_required: Some(false),
            pod_info_on_mount: Some(true),
            storage_capacity: Some(false),
            fs_group_policy: Some("File".into()),
            volume_lifecycle_modes: Some(vec!["Persistent".into(), "Ephemeral".into()]),
            ..Default::default()
        },
    };
    let class = |name: &str, provisioner: &str, parameters: serde_json::Value, expandable: bool| {
        let mut rest = serde_json::Map::new();
        rest.insert("provisioner".into(), provisioner.into());
        if parameters.as_object().is_some_and(|p| !p.is_empty()) {
            rest.insert("parameters".into(), parameters);
        }
        rest.insert("reclaimPolicy".into(), "Delete".into());
        rest.insert("volumeBindingMode".into(), "WaitForFirstConsumer".into());
        if expandable {
            rest.insert("allowVolumeExpansion".into(), true.into());
        }
        Object::Dynamic(Box::new(DynamicObject {
            api_version: "storage.k8s.io/v1".into(),
            kind: "StorageClass".into(),
            cache: Default::default(),
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            rest,
        }))
    };
    vec![
        Object::CSIDriver(Box::new(disk)),
        Object::CSIDriver(Box::new(hostpath)),
        class(BLOCK_CLASS, DISK_DRIVER, serde_json::json!({"type": "ssd", "csi.storage.k8s.io/fstype": "ext4"}), true),
        class(HOSTPATH_CLASS, HOSTPATH_DRIVER, serde_json::json!({}), false),
    ]
}

/// The aggregator's `(groupPriorityMinimum, versionPriority)` for a group-version kube-apiserver
/// serves (controlplane/apiserver/aggregator.go DefaultGenericAPIServicePriorities merged with
/// cmd/kube-apiserver's apiVersionPriorities).
fn api_service_priority(group: &str, version: &str) -> Option<(i64, i64)> {
    Some(match (group, version) {
        ("", "v1") => (18000, 1),
        ("apiregistration.k8s.io", "v1") => (18000, 15),
        ("apps", "v1") => (17800, 15),
        ("events.k8s.io", "v1") => (17750, 15),
        ("authentication.k8s.io", "v1") => (17700, 15),
        ("authorization.k8s.io", "v1") => (17600, 15),
        ("autoscaling", "v1") => (17500, 15),
        ("autoscaling", "v2") => (17500, 30),
        ("batch", "v1") => (17400, 15),
        ("certificates.k8s.io", "v1") => (17300, 15),
        ("networking.k8s.io", "v1") => (17200, 15),
        ("policy", "v1") => (17100, 15),
        ("rbac.authorization.k8s.io", "v1") => (17000, 15),
        ("storage.k8s.io", "v1") => (16800, 15),
        ("apiextensions.k8s.io", "v1") => (16700, 15),
        ("admissionregistration.k8s.io", "v1") => (16700, 15),
        ("scheduling.k8s.io", "v1") => (16600, 15),
        ("coordination.k8s.io", "v1") => (16500, 15),
        ("node.k8s.io", "v1") => (16300, 15),
        ("discovery.k8s.io", "v1") => (16200, 15),
        ("resource.k8s.io", "v1") => (16200, 20),
        ("flowcontrol.apiserver.k8s.io", "v1") => (16100, 21),
        _ => return None,
    })
}

/// The APIServices `kubectl get apiservices` lists: one local APIService per group-version the
/// API server serves (the aggregator's autoregister controller, `Local`, always Available) and
/// the metrics-server's `v1beta1.metrics.k8s.io` (kube-system/metrics-server), which the cluster
/// runs.
fn api_services() -> Vec<Object> {
    let mut versions: Vec<(&str, &str)> = kubesim_api::object::all_kinds()
        .map(|k| k.api_version.split_once('/').unwrap_or(("", k.api_version)))
        .chain([("authentication.k8s.io", "v1"), ("authorization.k8s.io", "v1")])
        .collect();
    versions.sort();
    versions.dedup();
    let condition = |reason: &str, message: &str| {
        serde_json::json!({
            "conditions": [{
                "type": "Available",
                "status": "True",
                "lastTransitionTime": "2025-01-01T00:00:00Z",
                "reason": reason,
                "message": message,
            }]
        })
    };
    let api_service = |group: &str, version: &str, spec: serde_json::Value, status: serde_json::Value| {
        let mut rest = serde_json::Map::new();
        rest.insert("spec".into(), spec);
        rest.insert("status".into(), status);
        Object::Dynamic(Box::new(DynamicObject {
            api_version: "apiregistration.k8s.io/v1".into(),
            kind: "APIService".into(),
            cache: Default::default(),
            metadata: ObjectMeta {
                name: Some(format!("{version}.{group}")),
                labels: Some([("kube-aggregator.kubernetes.io/automanaged".to_string(), "onstart".to_string())].into_iter().collect()),
                ..Default::default()
            },
            rest,
        }))
    };
    let mut objects: Vec<Object> = versions
        .into_iter()
        .filter_map(|(group, version)| {
            let (group_priority, version_priority) = api_service_priority(group, version)?;
            let spec = serde_json::json!({
                "group": group,
                "version": version,
                "groupPriorityMinimum": group_priority,
                "versionPriority": version_priority,
            });
            Some(api_service(group, version, spec, condition("Local", "Local APIServices are always available")))
        })
        .collect();
    let metrics = serde_json::json!({
        "group": "metrics.k8s.io",
        "version": "v1beta1",
        "groupPriorityMinimum": 100,
        "versionPriority": 100,
        "insecureSkipTLSVerify": true,
        "service": { "name": "metrics-server", "namespace": "kube-system", "port": 443 },
    });
    let mut metrics_server = api_service("metrics.k8s.io", "v1beta1", metrics, condition("Passed", "all checks passed"));
    metrics_server.metadata_mut().labels = Some([("k8s-app".to_string(), "metrics-server".to_string())].into_iter().collect());
    objects.push(metrics_server);
    objects
}

/// A node as the default cluster registers it.
pub fn node_template(name: &str, zone: &str, cpu: &str, memory: &str, pods: &str) -> Node {
    let labels: BTreeMap<String, String> = [
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", name),
        ("kubernetes.io/os", "linux"),
        ("topology.kubernetes.io/zone", zone),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let capacity: BTreeMap<String, Quantity> =
        [("cpu", cpu), ("ephemeral-storage", "100Gi"), ("hugepages-1Gi", "0"), ("hugepages-2Mi", "0"), ("memory", memory), ("pods", pods)]
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
            .collect();
    let mut annotations = BTreeMap::new();
    annotations.insert("node.alpha.kubernetes.io/ttl".to_string(), "0".to_string());
    annotations.insert("volumes.kubernetes.io/controller-managed-attach-detach".to_string(), "true".to_string());
    Node {
        metadata: ObjectMeta { name: Some(name.into()), labels: Some(labels), annotations: Some(annotations), ..Default::default() },
        spec: None,
        status: Some(NodeStatus { capacity: Some(capacity.clone()), allocatable: Some(capacity), ..Default::default() }),
    }
}

/// A kind cluster configuration (`kind: Cluster`, `apiVersion: kind.x-k8s.io/v1alpha4`, what
/// `kind create cluster --config` reads): its nodes as kind names and labels them
/// (`<name>-control-plane`, `<name>-worker`, `<name>-worker2`, ...; the control plane's role
/// label and NoSchedule taint, dropped when there is no worker, as kind does), `labels` and the
/// kubelet's `node-labels` from `kubeadmConfigPatches`, and `extraPortMappings` as ports
/// published on the workstation ((host port, udp) → (node, container port)).
pub fn kind_cluster(config: &serde_json::Value) -> Result<(Vec<Node>, crate::workstation::PortMappings), String> {
    let cluster = config.get("name").and_then(|n| n.as_str()).unwrap_or("kind");
    let default_nodes = vec![serde_json::json!({"role": "control-plane"})];
    let nodes = config.get("nodes").and_then(|n| n.as_array()).cloned().unwrap_or(default_nodes);
    let workers = nodes.iter().filter(|n| n.get("role").and_then(|r| r.as_str()) == Some("worker")).count();
    let (mut out, mut ports) = (Vec::new(), crate::workstation::PortMappings::new());
    let (mut control_planes, mut worker_index) = (0, 0);
    for node in &nodes {
        let role = node.get("role").and_then(|r| r.as_str()).unwrap_or("control-plane");
        let name = match role {
            "control-plane" => {
                control_planes += 1;
                if control_planes == 1 {
                    format!("{cluster}-control-plane")
                } else {
                    format!("{cluster}-control-plane{control_planes}")
                }
            }
            "worker" => {
                worker_index += 1;
                if worker_index == 1 {
                    format!("{cluster}-worker")
                } else {
                    format!("{cluster}-worker{worker_index}")
                }
            }
            other => return Err(format!("unknown node role: {other:?}")),
        };
        let mut n = node_template(&name, "", "4", "8Gi", "110");
        let labels = n.metadata.labels.get_or_insert_with(Default::default);
        labels.remove("topology.kubernetes.io/zone");
        for (k, v) in node.get("labels").and_then(|l| l.as_object()).into_iter().flatten() {
            labels.insert(k.clone(), v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
        }
        for patch in node.get("kubeadmConfigPatches").and_then(|p| p.as_array()).into_iter().flatten().filter_map(|p| p.as_str()) {
            for line in patch.lines() {
                let Some(value) = line.trim().strip_prefix("node-labels:") else { continue };
                for pair in value.trim().trim_matches('"').trim_matches('\'').split(',').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    labels.insert(k.trim().to_string(), v.trim().to_string());
                }
            }
        }
        if role == "control-plane" {
            labels.insert("node-role.kubernetes.io/control-plane".into(), String::new());
            labels.insert("node.kubernetes.io/exclude-from-external-load-balancers".into(), String::new());
            if workers > 0 {
                n.spec = Some(kubesim_api::k8s_openapi::api::core::v1::NodeSpec {
                    taints: Some(vec![kubesim_api::k8s_openapi::api::core::v1::Taint {
                        key: "node-role.kubernetes.io/control-plane".into(),
                        effect: "NoSchedule".into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                });
            }
        }
        for mapping in node.get("extraPortMappings").and_then(|p| p.as_array()).into_iter().flatten() {
            let port = |k: &str| mapping.get(k).and_then(|v| v.as_u64()).filter(|p| (1..=65535).contains(p)).map(|p| p as u16);
            let (Some(container), Some(host)) = (port("containerPort"), port("hostPort")) else {
                return Err(format!("node {name}: extraPortMappings need containerPort and hostPort"));
            };
            let udp = mapping.get("protocol").and_then(|p| p.as_str()).is_some_and(|p| p.eq_ignore_ascii_case("udp"));
            ports.insert((host, udp), (name.clone(), container));
        }
        out.push(n);
    }
    Ok((out, ports))
}

/// The default cluster: node-1, node-2, node-3 (cpu 4, memory 8Gi, pods 110) in zone-a/b/c.
pub fn default_nodes() -> Vec<Node> {
    ["zone-a", "zone-b", "zone-c"].iter().enumerate().map(|(i, zone)| node_template(&format!("node-{}", i + 1), zone, "4", "8Gi", "110")).collect()
}

/// The cluster DNS add-on as kubeadm (and kind) install it: the `coredns` ConfigMap with
/// kubeadm's Corefile, the `coredns` ServiceAccount, the `kube-dns` Service at the tenth address
/// of the service CIDR (the kubelet's `clusterDNS`), and the `coredns` Deployment (two replicas,
/// system-cluster-critical) whose pods answer the cluster's DNS.
pub const DNS_ADDON: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: kube-system
data:
  Corefile: |
    .:53 {
        errors
        health {
           lameduck 5s
        }
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
           pods insecure
           fallthrough in-addr.arpa ip6.arpa
           ttl 30
        }
        prometheus :9153
        forward . /etc/resolv.conf {
           max_concurrent 1000
        }
        cache 30 {
           disable success cluster.local
           disable denial cluster.local
        }
        loop
        reload
        loadbalance
    }
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: coredns
  namespace: kube-system
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels:
    k8s-app: kube-dns
    kubernetes.io/cluster-service: "true"
    kubernetes.io/name: CoreDNS
  annotations:
    prometheus.io/port: "9153"
    prometheus.io/scrape: "true"
spec:
  selector:
    k8s-app: kube-dns
  clusterIP: 10.96.0.10
  ports:
  - name: dns
    port: 53
    protocol: UDP
    targetPort: 53
  - name: dns-tcp
    port: 53
    protocol: TCP
    targetPort: 53
  - name: metrics
    port: 9153
    protocol: TCP
    targetPort: 9153
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels:
    k8s-app: kube-dns
spec:
  replicas: 2
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  selector:
    matchLabels:
      k8s-app: kube-dns
  template:
    metadata:
      labels:
        k8s-app: kube-dns
    spec:
      priorityClassName: system-cluster-critical
      serviceAccountName: coredns
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              labelSelector:
                matchExpressions:
                - key: k8s-app
                  operator: In
                  values: ["kube-dns"]
              topologyKey: kubernetes.io/hostname
      tolerations:
      - key: CriticalAddonsOnly
        operator: Exists
      - key: node-role.kubernetes.io/control-plane
        effect: NoSchedule
      nodeSelector:
        kubernetes.io/os: linux
      containers:
      - name: coredns
        image: registry.k8s.io/coredns/coredns:v1.12.1
        imagePullPolicy: IfNotPresent
        resources:
          limits:
            memory: 170Mi
          requests:
            cpu: 100m
            memory: 70Mi
        args: ["-conf", "/etc/coredns/Corefile"]
        volumeMounts:
        - name: config-volume
          mountPath: /etc/coredns
          readOnly: true
        ports:
        - containerPort: 53
          name: dns
          protocol: UDP
        - containerPort: 53
          name: dns-tcp
          protocol: TCP
        - containerPort: 9153
          name: metrics
          protocol: TCP
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            add: ["NET_BIND_SERVICE"]
            drop: ["ALL"]
          readOnlyRootFilesystem: true
        livenessProbe:
          httpGet:
            path: /health
            port: 8080
            scheme: HTTP
          initialDelaySeconds: 60
          timeoutSeconds: 5
          successThreshold: 1
          failureThreshold: 5
        readinessProbe:
          httpGet:
            path: /ready
            port: 8181
            scheme: HTTP
      dnsPolicy: Default
      volumes:
      - name: config-volume
        configMap:
          name: coredns
          items:
          - key: Corefile
            path: Corefile
"#;

/// The objects of [`DNS_ADDON`].
pub fn dns_addon_objects() -> Vec<Object> {
    let (documents, errors) = kubesim_api::decode::parse_documents("coredns.yaml", DNS_ADDON);
    assert!(errors.is_empty(), "the built-in DNS add-on parses: {errors:?}");
    documents.iter().flat_map(|d| kubesim_api::decode::decode_document("coredns.yaml", d).expect("the built-in DNS add-on decodes")).collect()
}
