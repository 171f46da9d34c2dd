//! Admission end to end through the API server: LimitRanger defaults and constraints and
//! ResourceQuota enforcement, with the docs' manifests (admin/resource/*) and upstream messages
//! (plugin/pkg/admission/limitranger/admission.go, resourcequota/controller.go).

use kubesim_api::decode::{decode_document, parse_documents};
use kubesim_api::object::Object;
use kubesim_apiserver::{ApiServer, Request, SimRng};
use rand_core::SeedableRng;
use std::sync::Arc;

fn object(yaml: &str) -> Object {
    let (docs, errors) = parse_documents("t.yaml", yaml);
    assert!(errors.is_empty(), "{errors:?}");
    let mut o = decode_document("t.yaml", &docs[0]).unwrap().remove(0);
    if o.info().unwrap().scope == kubesim_api::Scope::Namespaced && o.namespace().is_empty() {
        o.metadata_mut().namespace = Some("demo".into());
    }
    o
}

struct Api {
    api: ApiServer,
    rng: SimRng,
    actor: Arc<str>,
}

impl Api {
    fn new() -> Api {
        let mut api = Api { api: ApiServer::new(), rng: SimRng::seed_from_u64(1), actor: "test".into() };
        api.create("apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n").unwrap();
        api
    }
    fn create(&mut self, yaml: &str) -> Result<Arc<Object>, kubesim_apiserver::ApiError> {
        let mut req = Request { now: 0, rng: &mut self.rng, actor: &self.actor };
        self.api.create(object(yaml), &mut req)
    }
}

fn pod(name: &str, resources: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    resources: {resources}\n")
}

// Docs: admin/resource/memory-defaults.yaml — "the container was given a memory request of
// 256 MiB and a memory limit of 512 MiB".
#[test]
fn limit_range_defaults_fill_requests_and_limits() {
    let mut api = Api::new();
    api.create(include_str!("../../../../shared/corpus/k8s-docs-examples/admin/resource/memory-defaults.yaml")).unwrap();
    let created = api.create(&pod("default-mem-demo", "{}")).unwrap();
    let resources = created.as_pod().unwrap().spec.as_ref().unwrap().containers[0].resources.clone().unwrap();
    assert_eq!(resources.limits.unwrap()["memory"].0, "512Mi");
    assert_eq!(resources.requests.unwrap()["memory"].0, "256Mi");
    // A limit but no request: the request defaults to the limit.
    let created = api.create(&pod("default-mem-demo-2", "{limits: {memory: 1Gi}}")).unwrap();
    let resources = created.as_pod().unwrap().spec.as_ref().unwrap().containers[0].resources.clone().unwrap();
    assert_eq!(resources.requests.unwrap()["memory"].0, "1Gi");
}

// Docs: admin/resource/cpu-constraints.yaml (min 200m, max 800m).
#[test]
fn limit_range_constraints_reject_with_upstream_messages() {
    let mut api = Api::new();
    api.create(include_str!("../../../../shared/corpus/k8s-docs-examples/admin/resource/cpu-constraints.yaml")).unwrap();
    let err = api.create(&pod("constraints-cpu-demo-2", "{limits: {cpu: 1500m}, requests: {cpu: 500m}}")).unwrap_err();
    assert_eq!(err.code, 403);
    assert_eq!(err.message, "pods \"constraints-cpu-demo-2\" is forbidden: maximum cpu usage per Container is 800m, but limit is 1500m");
    let err = api.create(&pod("constraints-cpu-demo-3", "{limits: {cpu: 800m}, requests: {cpu: 100m}}")).unwrap_err();
    assert_eq!(err.message, "pods \"constraints-cpu-demo-3\" is forbidden: minimum cpu usage per Container is 200m, but request is 100m");
    assert!(api.create(&pod("constraints-cpu-demo", "{limits: {cpu: 800m}, requests: {cpu: 500m}}")).is_ok());
    assert!(api.api.lookup(("", "pods"), "demo", "constraints-cpu-demo-2").is_none(), "rejected writes leave the store untouched");
}

// Docs: admin/resource/quota-mem-cpu.yaml.
#[test]
fn resource_quota_rejects_pods_that_exceed_it() {
    let mut api = Api::new();
    api.create(include_str!("../../../../shared/corpus/k8s-docs-examples/admin/resource/quota-mem-cpu.yaml")).unwrap();
    let err = api.create(&pod("no-limits", "{}")).unwrap_err();
    assert_eq!(err.message, "pods \"no-limits\" is forbidden: failed quota: mem-cpu-demo: must specify limits.cpu for: c; limits.memory for: c; requests.cpu for: c; requests.memory for: c");
    api.create(&pod("quota-mem-cpu-demo", "{limits: {memory: 800Mi, cpu: 800m}, requests: {memory: 600Mi, cpu: 400m}}")).unwrap();
    let err = api.create(&pod("quota-mem-cpu-demo-2", "{limits: {memory: 1Gi, cpu: 800m}, requests: {memory: 700Mi, cpu: 400m}}")).unwrap_err();
    assert_eq!(err.code, 403);
    assert_eq!(err.message, "pods \"quota-mem-cpu-demo-2\" is forbidden: exceeded quota: mem-cpu-demo, requested: requests.memory=700Mi, used: requests.memory=600Mi, limited: requests.memory=1Gi");
    let quota = api.api.lookup(("", "resourcequotas"), "demo", "mem-cpu-demo").unwrap().to_json();
    assert_eq!(quota["status"]["used"]["requests.memory"], "600Mi");
    assert_eq!(quota["status"]["used"]["limits.cpu"], "800m");
}

// Docs: admin/resource/quota-objects.yaml (persistentvolumeclaims: 1).
#[test]
fn object_count_quotas_limit_creations() {
    let mut api = Api::new();
    api.create(include_str!("../../../../shared/corpus/k8s-docs-examples/admin/resource/quota-objects.yaml")).unwrap();
    let pvc = |name: &str| {
        format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\nspec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 3Gi}}}}}}\n")
    };
    api.create(&pvc("pvc-quota-demo")).unwrap();
    let err = api.create(&pvc("pvc-quota-demo-2")).unwrap_err();
    assert_eq!(err.message, "persistentvolumeclaims \"pvc-quota-demo-2\" is forbidden: exceeded quota: object-quota-demo, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=1, limited: persistentvolumeclaims=1");
}

fn pdb(min_available: i64, allowed: i64) -> String {
    format!("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web-pdb}}\nspec: {{minAvailable: {min_available}, selector: {{matchLabels: {{app: web}}}}}}\nstatus: {{disruptionsAllowed: {allowed}, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2}}\n")
}

fn running_pod(api: &mut Api, name: &str) {
    api.create(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {{app: web}}}}\nspec: {{nodeName: node-1, containers: [{{name: c, image: nginx}}]}}\n"
    ))
    .unwrap();
    let mut pod = (**api.api.lookup(("", "pods"), "demo", name).unwrap()).clone();
    if let Object::Pod(p) = &mut pod {
        p.status.as_mut().unwrap().phase = Some("Running".into());
    }
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    api.api.update_status(pod, &mut req).unwrap();
}

/// Creates the PDB, then writes its status (as the disruption controller would; create drops it).
fn set_pdb(api: &mut Api, yaml: &str) {
    let created = api.create(yaml).unwrap();
    assert!(created.to_json().get("status").is_none(), "PrepareForCreate drops status");
    let mut with_status = object(yaml);
    with_status.metadata_mut().resource_version = None;
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    api.api.update_status(with_status, &mut req).unwrap();
}

// pkg/registry/core/pod/storage/eviction.go: a PDB with no disruptions allowed blocks (429).
#[test]
fn eviction_honours_pod_disruption_budgets() {
    let mut api = Api::new();
    running_pod(&mut api, "web-1");
    running_pod(&mut api, "web-2");
    set_pdb(&mut api, &pdb(2, 0));
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let err = api.api.evict("demo", "web-1", Default::default(), &mut req).unwrap_err();
    assert_eq!(err.code, 429);
    assert!(err.message.starts_with("Cannot evict pod as it would violate the pod's disruption budget."), "{}", err.message);
    assert!(api.api.lookup(("", "pods"), "demo", "web-1").unwrap().metadata().deletion_timestamp.is_none());
}

#[test]
fn eviction_deletes_gracefully_and_spends_the_budget() {
    let mut api = Api::new();
    running_pod(&mut api, "web-1");
    set_pdb(&mut api, &pdb(1, 1));
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    api.api.evict("demo", "web-1", Default::default(), &mut req).unwrap();
    let pod = api.api.lookup(("", "pods"), "demo", "web-1").unwrap();
    assert!(pod.metadata().deletion_timestamp.is_some(), "graceful: still there, terminating");
    let conditions = pod.as_pod().unwrap().status.clone().unwrap().conditions.unwrap();
    assert!(conditions.iter().any(|c| c.type_ == "DisruptionTarget" && c.reason.as_deref() == Some("EvictionByEvictionAPI")));
    let budget = api.api.lookup(("policy", "poddisruptionbudgets"), "demo", "web-pdb").unwrap().to_json();
    assert_eq!(budget["status"]["disruptionsAllowed"], 0);
}

#[test]
fn the_scale_subresource_reads_and_writes_replicas() {
    let mut api = Api::new();
    api.create("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}\n").unwrap();
    let info = kubesim_api::kind_info("apps/v1", "Deployment").unwrap();
    let scale = api.api.get_scale(info, "demo", "web").unwrap();
    assert_eq!(scale["spec"]["replicas"], 2);
    assert_eq!(scale["status"]["selector"], "app=web");
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let updated = api.api.update_scale(info, "demo", "web", 5, &mut req).unwrap();
    assert_eq!(updated.to_json()["spec"]["replicas"], 5);
    assert_eq!(updated.metadata().generation, Some(2));
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    assert_eq!(api.api.update_scale(info, "demo", "web", -1, &mut req).unwrap_err().code, 422);
}

#[test]
fn lists_filter_by_labels_and_fields_and_watches_expire_after_compaction() {
    use kubesim_api::selector::{FieldSelector, Selector};
    let mut api = Api::new();
    running_pod(&mut api, "web-1");
    api.create("apiVersion: v1\nkind: Pod\nmetadata: {name: db-1, labels: {app: db}}\nspec: {containers: [{name: c, image: redis}]}\n").unwrap();
    let info = kubesim_api::kind_info("v1", "Pod").unwrap();
    let (by_label, _) = api.api.list(info, Some("demo"), Some(&Selector::parse("app=web").unwrap()), None).unwrap();
    assert_eq!(by_label.iter().map(|o| o.name()).collect::<Vec<_>>(), vec!["web-1"]);
    let (on_node, _) = api.api.list(info, None, None, Some(&FieldSelector::parse("spec.nodeName=node-1").unwrap())).unwrap();
    assert_eq!(on_node.len(), 1);
    let (pending, revision) = api.api.list(info, None, None, Some(&FieldSelector::parse("status.phase=Pending").unwrap())).unwrap();
    assert_eq!(pending.iter().map(|o| o.name()).collect::<Vec<_>>(), vec!["db-1"]);
    let err = api.api.list(info, None, None, Some(&FieldSelector::parse("spec.color=blue").unwrap())).unwrap_err();
    assert_eq!((err.code, err.message.as_str()), (400, "field label not supported: spec.color"));
    // Watch from the list's revision sees later writes; after compaction it is 410 Gone.
    running_pod(&mut api, "web-2");
    let events = api.api.watch_since(info, revision).unwrap();
    assert!(events.iter().any(|(_, o, _)| o.name() == "web-2"));
    let now = api.api.store().revision();
    api.api.store_mut().compact(now);
    let gone = api.api.watch_since(info, revision).unwrap_err();
    assert_eq!(gone.code, 410);
    assert_eq!(gone.message, format!("too old resource version: {revision} ({now})"));
}

// pkg/registry/core/namespace/storage: DELETE marks a namespace Terminating while
// spec.finalizers remain; removing the last finalizer completes the deletion.
#[test]
fn namespaces_terminate_until_finalized() {
    let mut api = Api::new();
    let info = kubesim_api::kind_info("v1", "Namespace").unwrap();
    let mut req = Request { now: 1_000, rng: &mut api.rng, actor: &api.actor };
    let deleted = api.api.delete(info, "", "demo", Default::default(), &mut req).unwrap();
    let kubesim_apiserver::Deleted::Terminating(ns) = deleted else { panic!("namespace removed at once") };
    assert_eq!(ns.to_json()["status"]["phase"], "Terminating");
    let err = api.create(&pod("late", "{}")).unwrap_err();
    assert_eq!(err.message, "pods \"late\" is forbidden: unable to create new content in namespace demo because it is being terminated");
    let mut finalized = (*ns).clone();
    if let Object::Namespace(n) = &mut finalized {
        n.spec.as_mut().unwrap().finalizers = Some(vec![]);
    }
    let mut req = Request { now: 2_000, rng: &mut api.rng, actor: &api.actor };
    api.api.update(finalized, &mut req).unwrap();
    assert!(api.api.lookup(("", "namespaces"), "", "demo").is_none(), "finalized namespaces are removed");
}

// ValidateUpdate: a Deployment's selector is immutable in apps/v1, and updates are validated.
#[test]
fn updates_are_validated_and_selectors_are_immutable() {
    let mut api = Api::new();
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web, v: x}}, spec: {containers: [{name: c, image: nginx}]}}}\n";
    api.create(yaml).unwrap();
    let mut changed = object(&yaml.replace("matchLabels: {app: web}", "matchLabels: {app: web, v: x}"));
    changed.metadata_mut().namespace = Some("demo".into());
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let err = api.api.update(changed, &mut req).unwrap_err();
    assert!(err.message.starts_with("Deployment.apps \"web\" is invalid: spec.selector: Invalid value: "), "{}", err.message);
    assert!(err.message.ends_with("field is immutable"), "{}", err.message);
    let negative = object(&yaml.replace("replicas: 1", "replicas: -3"));
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let err = api.api.update(negative, &mut req).unwrap_err();
    assert_eq!(err.message, "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0");
}

// Docs: tasks/administer-cluster/manage-resources/memory-constraint-namespace — the stored
// LimitRange shows default/defaultRequest from max/min (SetDefaults_LimitRangeItem), and the
// rejection quotes canonical quantities (1.5Gi is stored and reported as 1536Mi).
#[test]
fn memory_constraints_page_stores_defaults_and_quotes_canonical_quantities() {
    let mut api = Api::new();
    let lr = api
        .create("apiVersion: v1\nkind: LimitRange\nmetadata: {name: mem-min-max-demo-lr}\nspec:\n  limits:\n  - max: {memory: 1Gi}\n    min: {memory: 500Mi}\n    type: Container\n")
        .unwrap();
    assert_eq!(
        lr.to_json()["spec"]["limits"][0],
        serde_json::json!({"default": {"memory": "1Gi"}, "defaultRequest": {"memory": "1Gi"}, "max": {"memory": "1Gi"}, "min": {"memory": "500Mi"}, "type": "Container"})
    );
    let err = api.create(&pod("constraints-mem-demo-2", "{limits: {memory: 1.5Gi}, requests: {memory: 800Mi}}")).unwrap_err();
    assert_eq!(err.message, "pods \"constraints-mem-demo-2\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 1536Mi");
    let err = api.create(&pod("constraints-mem-demo-3", "{limits: {memory: 800Mi}, requests: {memory: 100Mi}}")).unwrap_err();
    assert_eq!(err.message, "pods \"constraints-mem-demo-3\" is forbidden: minimum memory usage per Container is 500Mi, but request is 100Mi");
    let created = api.create(&pod("constraints-mem-demo-4", "{}")).unwrap();
    let resources = created.as_pod().unwrap().spec.as_ref().unwrap().containers[0].resources.clone().unwrap();
    assert_eq!((resources.limits.unwrap()["memory"].0.as_str(), resources.requests.unwrap()["memory"].0.as_str()), ("1Gi", "1Gi"));
    // Canonical storage of a pod's quantities.
    let created = api.create(&pod("canon", "{limits: {cpu: '0.5', memory: 0.75Gi}, requests: {cpu: 100m, memory: 600Mi}}")).unwrap();
    let resources = created.as_pod().unwrap().spec.as_ref().unwrap().containers[0].resources.clone().unwrap();
    let limits = resources.limits.unwrap();
    assert_eq!((limits["cpu"].0.as_str(), limits["memory"].0.as_str()), ("500m", "768Mi"));
}

// pkg/registry/batch/job/strategy.go generateSelector + pkg/apis/batch/v1 SetDefaults_Job, as
// `kubectl get job pi -o yaml` shows them on a v1.34 cluster (docs: concepts/workloads/controllers/job).
#[test]
fn jobs_get_generated_selector_labels_and_template_defaults() {
    let mut api = Api::new();
    let job = api
        .create("apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\nspec:\n  backoffLimit: 4\n  template:\n    spec:\n      containers:\n      - name: pi\n        image: perl:5.34.0\n        command: [perl, -Mbignum=bpi, -wle, print bpi(2000)]\n      restartPolicy: Never\n")
        .unwrap();
    let json = job.to_json();
    let uid = json["metadata"]["uid"].as_str().unwrap().to_string();
    let want_labels =
        serde_json::json!({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi", "controller-uid": uid, "job-name": "pi"});
    assert_eq!(json["metadata"]["labels"], want_labels);
    assert_eq!(json["spec"]["template"]["metadata"]["labels"], want_labels);
    assert_eq!(json["spec"]["selector"], serde_json::json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}));
    let pod = &json["spec"]["template"]["spec"];
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], serde_json::json!({}));
    assert_eq!(pod["containers"][0]["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(pod["containers"][0]["terminationMessagePolicy"], "File");
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        (json["spec"]["completions"].clone(), json["spec"]["parallelism"].clone(), json["spec"]["completionMode"].clone()),
        (1.into(), 1.into(), "NonIndexed".into())
    );
    // A user-given label set is kept (SetDefaults_Job copies template labels only when empty).
    let job = api
        .create("apiVersion: batch/v1\nkind: Job\nmetadata: {name: labelled, labels: {team: a}}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: busybox}]\n      restartPolicy: OnFailure\n")
        .unwrap();
    assert_eq!(job.to_json()["metadata"]["labels"], serde_json::json!({"team": "a"}));
    // manualSelector: the user's selector must match the template.
    let err = api
        .create("apiVersion: batch/v1\nkind: Job\nmetadata: {name: manual}\nspec:\n  manualSelector: true\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: y}}\n    spec:\n      containers: [{name: c, image: busybox}]\n      restartPolicy: Never\n")
        .unwrap_err();
    assert_eq!(err.message, "Job.batch \"manual\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"y\"}: `selector` does not match template `labels`");
}

fn service(o: &Object) -> kubesim_api::k8s_openapi::api::core::v1::Service {
    match o {
        Object::Service(s) => (**s).clone(),
        _ => panic!("not a service"),
    }
}

fn node_ports(o: &Object) -> Vec<i32> {
    service(o).spec.as_ref().unwrap().ports.iter().flatten().map(|p| p.node_port.unwrap_or(0)).collect()
}

// registry/core/service/storage/alloc.go initNodePorts and updateNodePorts: ports with the same
// number share a nodePort; a requested port is honoured or refused with the port's index; a type
// change to NodePort allocates, a change back releases.
#[test]
fn node_ports_are_shared_by_port_number_and_follow_type_changes() {
    let mut api = Api::new();
    let dns = api
        .create("apiVersion: v1\nkind: Service\nmetadata: {name: dns}\nspec:\n  type: NodePort\n  selector: {app: dns}\n  ports:\n  - {name: udp, port: 53, protocol: UDP}\n  - {name: tcp, port: 53, protocol: TCP}\n  - {name: metrics, port: 9153}\n")
        .unwrap();
    let ports = node_ports(&dns);
    assert_eq!(ports[0], ports[1], "53/UDP and 53/TCP share one nodePort");
    assert_ne!(ports[0], ports[2]);
    assert!(ports.iter().all(|p| (30_086..=32_767).contains(p)), "dynamic band first: {ports:?}");
    let err = api
        .create("apiVersion: v1\nkind: Service\nmetadata: {name: clash}\nspec:\n  type: NodePort\n  ports:\n  - {name: a, port: 80, nodePort: 30080}\n  - {name: b, port: 81, nodePort: 30080}\n")
        .unwrap_err();
    assert!(err.message.contains("spec.ports[1].nodePort: Invalid value: 30080: provided port is already allocated"), "{}", err.message);
    let err =
        api.create("apiVersion: v1\nkind: Service\nmetadata: {name: out}\nspec:\n  type: NodePort\n  ports:\n  - {port: 80, nodePort: 29999}\n").unwrap_err();
    assert!(
        err.message.contains("spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767"),
        "{}",
        err.message
    );
    api.create("apiVersion: v1\nkind: Service\nmetadata: {name: ok}\nspec:\n  type: NodePort\n  ports:\n  - {port: 80, nodePort: 30080}\n")
        .expect("the failed create released 30080");

    // ClusterIP → NodePort allocates; NodePort → ClusterIP releases.
    let web = api.create("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports:\n  - {port: 8080, targetPort: 80}\n").unwrap();
    assert_eq!(node_ports(&web), vec![0]);
    let mut svc = service(&web);
    svc.spec.as_mut().unwrap().type_ = Some("NodePort".into());
    svc.metadata.resource_version = None;
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let updated = api.api.update(Object::Service(Box::new(svc)), &mut req).unwrap();
    let np = node_ports(&updated)[0];
    assert!((30_000..=32_767).contains(&np), "{np}");
    let mut svc = service(&updated);
    let spec = svc.spec.as_mut().unwrap();
    spec.type_ = Some("ClusterIP".into());
    svc.metadata.resource_version = None;
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let back = api.api.update(Object::Service(Box::new(svc)), &mut req).unwrap();
    assert_eq!(node_ports(&back), vec![0]);
    api.create(&format!("apiVersion: v1\nkind: Service\nmetadata: {{name: reuse}}\nspec:\n  type: NodePort\n  ports:\n  - {{port: 80, nodePort: {np}}}\n"))
        .expect("released");
}

fn health_check_node_port(o: &Object) -> i32 {
    service(o).spec.as_ref().unwrap().health_check_node_port.unwrap_or(0)
}

// alloc.go allocHealthCheckNodePort and updateHealthCheckNodePort, validation.go
// validateServiceExternalTrafficPolicy and validateServiceExternalTrafficFieldsUpdate: a
// LoadBalancer Service with externalTrafficPolicy Local gets a health-check node port (the
// requested one, or the allocator's next); it is kept across updates, immutable while needed,
// freed when no longer needed and on delete; it may not be set on other Services.
#[test]
fn a_local_load_balancer_gets_a_health_check_node_port() {
    let mut api = Api::new();
    let lb = "apiVersion: v1\nkind: Service\nmetadata: {name: lb}\nspec:\n  type: LoadBalancer\n  externalTrafficPolicy: Local\n  ports: [{port: 80}]\n";
    let created = api.create(lb).unwrap();
    let hc = health_check_node_port(&created);
    assert!((30_000..=32_767).contains(&hc), "{hc}");
    assert_ne!(hc, node_ports(&created)[0]);
    let cluster = api.create("apiVersion: v1\nkind: Service\nmetadata: {name: cl}\nspec:\n  type: LoadBalancer\n  ports: [{port: 80}]\n").unwrap();
    assert_eq!(health_check_node_port(&cluster), 0, "Cluster policy: none");

    let err = api
        .create(&format!("apiVersion: v1\nkind: Service\nmetadata: {{name: taken}}\nspec:\n  type: LoadBalancer\n  externalTrafficPolicy: Local\n  healthCheckNodePort: {hc}\n  ports: [{{port: 80}}]\n"))
        .unwrap_err();
    assert_eq!((err.code, err.reason), (500, "InternalError"));
    assert_eq!(err.message, format!("Internal error occurred: failed to allocate requested HealthCheck NodePort {hc}: provided port is already allocated"));
    let err = api
        .create("apiVersion: v1\nkind: Service\nmetadata: {name: np}\nspec:\n  type: NodePort\n  healthCheckNodePort: 30500\n  ports: [{port: 80}]\n")
        .unwrap_err();
    assert_eq!(
        err.message,
        "Service \"np\" is invalid: spec.healthCheckNodePort: Invalid value: 30500: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"
    );

    // An update that leaves it out keeps it; changing it is refused.
    let mut svc = service(&created);
    svc.spec.as_mut().unwrap().health_check_node_port = None;
    svc.metadata.resource_version = None;
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let kept = api.api.update(Object::Service(Box::new(svc)), &mut req).unwrap();
    assert_eq!(health_check_node_port(&kept), hc);
    let mut svc = service(&kept);
    svc.spec.as_mut().unwrap().health_check_node_port = Some(hc + 1);
    svc.metadata.resource_version = None;
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let err = api.api.update(Object::Service(Box::new(svc)), &mut req).unwrap_err();
    assert!(err.message.contains("spec.healthCheckNodePort: Forbidden: field is immutable"), "{}", err.message);

    // Local → Cluster drops it (dropTypeDependentFields) and frees it.
    let mut svc = service(&kept);
    svc.spec.as_mut().unwrap().external_traffic_policy = Some("Cluster".into());
    svc.metadata.resource_version = None;
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let cluster_now = api.api.update(Object::Service(Box::new(svc)), &mut req).unwrap();
    assert_eq!(health_check_node_port(&cluster_now), 0);
    let reuse = format!("apiVersion: v1\nkind: Service\nmetadata: {{name: reuse}}\nspec:\n  type: NodePort\n  ports: [{{port: 80, nodePort: {hc}}}]\n");
    api.create(&reuse).expect("released when no longer needed");

    // Cluster → Local on the other Service allocates one.
    let mut svc = service(&cluster);
    svc.spec.as_mut().unwrap().external_traffic_policy = Some("Local".into());
    svc.metadata.resource_version = None;
    let mut req = Request { now: 0, rng: &mut api.rng, actor: &api.actor };
    let local = api.api.update(Object::Service(Box::new(svc)), &mut req).unwrap();
    assert!((30_000..=32_767).contains(&health_check_node_port(&local)));
}
