//! Read commands against a small cluster (tests/scenario): exact kubectl v1.34 output.
//! Tables mirror pkg/printers/internalversion/printers.go; describe layouts mirror
//! staging/src/k8s.io/kubectl/pkg/describe/describe.go; `get` plumbing mirrors
//! staging/src/k8s.io/kubectl/pkg/cmd/get/get.go.

mod common;
mod scenario;

use common::Fixture;

fn check(f: &mut Fixture, cmd: &str, stdout: &str, stderr: &str, code: i32) {
    let o = f.kubectl(cmd);
    assert_eq!(o.stdout, stdout, "stdout of `kubectl {cmd}`");
    assert_eq!(o.stderr, stderr, "stderr of `kubectl {cmd}`");
    assert_eq!(o.exit_code, code, "exit code of `kubectl {cmd}`");
}

#[test]
fn get_tables() {
    let mut f = scenario::cluster();
    let cases: &[(&str, &str)] = &[
        ("get pods", "NAME                  READY   STATUS    RESTARTS   AGE\nweb-7d4b9c7f5-abcde   1/1     Running   0          4m56s\nweb-7d4b9c7f5-fghij   1/1     Running   0          4m56s\n"),
        ("get po -o wide", "NAME                  READY   STATUS    RESTARTS   AGE     IP           NODE     NOMINATED NODE   READINESS GATES\nweb-7d4b9c7f5-abcde   1/1     Running   0          4m56s   10.244.0.5   node-1   <none>           <none>\nweb-7d4b9c7f5-fghij   1/1     Running   0          4m56s   10.244.0.6   node-1   <none>           <none>\n"),
        ("get nodes", "NAME     STATUS   ROLES    AGE   VERSION\nnode-1   Ready    worker   5m    v1.34.0\n"),
        ("get no -o wide", "NAME     STATUS   ROLES    AGE   VERSION   INTERNAL-IP   EXTERNAL-IP   OS-IMAGE   KERNEL-VERSION   CONTAINER-RUNTIME\nnode-1   Ready    worker   5m    v1.34.0   10.0.0.11     <none>        kubesim    6.1.0            containerd://2.0.0\n"),
        ("get deploy,rs,svc", "NAME                  READY   UP-TO-DATE   AVAILABLE   AGE\ndeployment.apps/web   2/2     2            2           5m\n\nNAME                            DESIRED   CURRENT   READY   AGE\nreplicaset.apps/web-7d4b9c7f5   2         2         2       4m58s\n\nNAME          TYPE        CLUSTER-IP    EXTERNAL-IP   PORT(S)   AGE\nservice/web   ClusterIP   10.107.54.6   <none>        80/TCP    5m\n"),
        ("get deployments.apps -o wide", "NAME   READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES       SELECTOR\nweb    2/2     2            2           5m    nginx        nginx:1.27   app=web\n"),
        ("get rs -o wide", "NAME            DESIRED   CURRENT   READY   AGE     CONTAINERS   IMAGES       SELECTOR\nweb-7d4b9c7f5   2         2         2       4m58s   nginx        nginx:1.27   app=web,pod-template-hash=7d4b9c7f5\n"),
        ("get svc -o wide", "NAME   TYPE        CLUSTER-IP    EXTERNAL-IP   PORT(S)   AGE   SELECTOR\nweb    ClusterIP   10.107.54.6   <none>        80/TCP    5m    app=web\n"),
        ("get ns", "NAME              STATUS   AGE\ndefault           Active   5m\nkube-node-lease   Active   5m\nkube-public       Active   5m\nkube-system       Active   5m\n"),
        ("get all", "NAME                      READY   STATUS    RESTARTS   AGE\npod/web-7d4b9c7f5-abcde   1/1     Running   0          4m56s\npod/web-7d4b9c7f5-fghij   1/1     Running   0          4m56s\n\nNAME          TYPE        CLUSTER-IP    EXTERNAL-IP   PORT(S)   AGE\nservice/web   ClusterIP   10.107.54.6   <none>        80/TCP    5m\n\nNAME                  READY   UP-TO-DATE   AVAILABLE   AGE\ndeployment.apps/web   2/2     2            2           5m\n\nNAME                            DESIRED   CURRENT   READY   AGE\nreplicaset.apps/web-7d4b9c7f5   2         2         2       4m58s\n"),
        ("get pod/web-7d4b9c7f5-abcde deploy/web", "NAME                      READY   STATUS    RESTARTS   AGE\npod/web-7d4b9c7f5-abcde   1/1     Running   0          4m56s\n\nNAME                  READY   UP-TO-DATE   AVAILABLE   AGE\ndeployment.apps/web   2/2     2            2           5m\n"),
        ("get events", "LAST SEEN   TYPE      REASON              OBJECT                    MESSAGE\n4m56s       Normal    Scheduled           pod/web-7d4b9c7f5-abcde   Successfully assigned default/web-7d4b9c7f5-abcde to node-1\n4m55s       Normal    Pulled              pod/web-7d4b9c7f5-abcde   Container image \"nginx:1.27\" already present on machine\n4m20s       Warning   Unhealthy           pod/web-7d4b9c7f5-abcde   Readiness probe failed: connection refused\n4m58s       Normal    ScalingReplicaSet   deployment/web            Scaled up replica set web-7d4b9c7f5 from 0 to 2\n"),
        ("get pods -A", "NAMESPACE   NAME                  READY   STATUS    RESTARTS   AGE\ndefault     web-7d4b9c7f5-abcde   1/1     Running   0          4m56s\ndefault     web-7d4b9c7f5-fghij   1/1     Running   0          4m56s\n"),
        ("get pods --show-labels", "NAME                  READY   STATUS    RESTARTS   AGE     LABELS\nweb-7d4b9c7f5-abcde   1/1     Running   0          4m56s   app=web,pod-template-hash=7d4b9c7f5\nweb-7d4b9c7f5-fghij   1/1     Running   0          4m56s   app=web,pod-template-hash=7d4b9c7f5\n"),
        ("get pods -L app --no-headers", "web-7d4b9c7f5-abcde   1/1   Running   0     4m56s   web\nweb-7d4b9c7f5-fghij   1/1   Running   0     4m56s   web\n"),
        ("get pods -l app=web -o name", "pod/web-7d4b9c7f5-abcde\npod/web-7d4b9c7f5-fghij\n"),
        ("get pods -l app!=web", ""),
        ("get pods --field-selector metadata.name=web-7d4b9c7f5-fghij -o name", "pod/web-7d4b9c7f5-fghij\n"),
        ("get deploy web -o jsonpath={.spec.replicas}", "2"),
        (r#"get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.status.podIP}{"\n"}{end}'"#, "web-7d4b9c7f5-abcde\t10.244.0.5\nweb-7d4b9c7f5-fghij\t10.244.0.6\n"),
        ("get pods -o jsonpath-as-json={.items[*].status.podIP}", "[\n    \"10.244.0.5\",\n    \"10.244.0.6\"\n]\n"),
        ("get pods -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName", "NAME                  NODE\nweb-7d4b9c7f5-abcde   node-1\nweb-7d4b9c7f5-fghij   node-1\n"),
        ("get pods --sort-by=.status.podIP -o name", "pod/web-7d4b9c7f5-abcde\npod/web-7d4b9c7f5-fghij\n"),
        // A single kind in the results: no kind/ prefix even for type/name arguments.
        ("get pod/web-7d4b9c7f5-abcde", "NAME                  READY   STATUS    RESTARTS   AGE\nweb-7d4b9c7f5-abcde   1/1     Running   0          4m56s\n"),
        ("get pods,pvc", "NAME                  READY   STATUS    RESTARTS   AGE\nweb-7d4b9c7f5-abcde   1/1     Running   0          4m56s\nweb-7d4b9c7f5-fghij   1/1     Running   0          4m56s\n"),
        ("get pods -n kube-system", ""),
    ];
    for (cmd, want) in cases {
        let stderr = if want.is_empty() {
            if cmd.contains("kube-system") {
                "No resources found in kube-system namespace.\n"
            } else {
                "No resources found in default namespace.\n"
            }
        } else {
            ""
        };
        check(&mut f, cmd, want, stderr, 0);
    }
}

#[test]
fn get_errors() {
    let mut f = scenario::cluster();
    check(&mut f, "get pod nope", "", "Error from server (NotFound): pods \"nope\" not found\n", 1);
    check(&mut f, "get deploy nope", "", "Error from server (NotFound): deployments.apps \"nope\" not found\n", 1);
    check(&mut f, "get frobs", "", "error: the server doesn't have a resource type \"frobs\"\n", 1);
    check(
        &mut f,
        "get",
        "",
        "error: you must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.\n",
        1,
    );
    check(&mut f, "get pods -o xml", "", "error: unable to match a printer suitable for the output format \"xml\", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml\n", 1);
    check(&mut f, "get nodes -A", "NAME     STATUS   ROLES    AGE   VERSION\nnode-1   Ready    worker   5m    v1.34.0\n", "", 0);
    check(&mut f, "get pvc", "", "No resources found in default namespace.\n", 0);
    // get.go names the namespace whenever -A is absent, even for cluster-scoped kinds.
    check(&mut f, "get pv", "", "No resources found in default namespace.\n", 0);
    check(&mut f, "get pv -A", "", "No resources found\n", 0);
    // Non-table formats print nothing (name, jsonpath) or an empty List (yaml, json).
    check(&mut f, "get pods -n kube-system -o name", "", "", 0);
    check(
        &mut f,
        "get pods -n kube-system -o json",
        "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
        "",
        0,
    );
    check(&mut f, "get pods --field-selector spec.foo=bar", "", "Error from server (BadRequest): Unable to find {\"\" \"v1\" \"pods\"} that match label selector \"\", field selector \"spec.foo=bar\": field label not supported: spec.foo\n", 1);
    check(&mut f, "get events --field-selector type=Warning -o name", "event/web-7d4b9c7f5-abcde.36b0\n", "", 0);
    check(&mut f, "get pods --field-selector spec.nodeName=node-1,status.phase=Running -o name", "pod/web-7d4b9c7f5-abcde\npod/web-7d4b9c7f5-fghij\n", "", 0);
    check(&mut f, "get pods -l 'a in b'", "", "error: unable to parse requirement: found 'b', expected: '('\n", 1);
    // --show-kind prints kind/name as a multi-kind get does.
    let o = f.kubectl("get deploy web --show-kind");
    assert!(o.stdout.lines().nth(1).is_some_and(|l| l.starts_with("deployment.apps/web ")), "{}", o.stdout);
}

#[test]
fn yaml_and_json_output() {
    let mut f = scenario::cluster();
    let o = f.kubectl("get pod web-7d4b9c7f5-abcde -o yaml");
    assert!(o.stdout.starts_with("apiVersion: v1\nkind: Pod\nmetadata:\n  creationTimestamp: \"2025-01-01T00:00:04Z\"\n  generation: 1\n  labels:\n    app: web\n    pod-template-hash: 7d4b9c7f5\n  name: web-7d4b9c7f5-abcde\n  namespace: default\n  ownerReferences:\n  - apiVersion: apps/v1\n    blockOwnerDeletion: true\n    controller: true\n    kind: ReplicaSet\n    name: web-7d4b9c7f5\n"), "{}", o.stdout);
    assert!(o.stdout.contains("\n  resourceVersion: \"16\"\n"), "{}", o.stdout);
    assert!(
        o.stdout.contains(
            // PodCondition.lastProbeTime is a struct: encoding/json writes an unset one as null.
            "\nstatus:\n  conditions:\n  - lastProbeTime: null\n    lastTransitionTime: \"2025-01-01T00:00:04Z\"\n    status: \"True\"\n    type: PodReadyToStartContainers\n"
        ),
        "{}",
        o.stdout
    );
    let o = f.kubectl("get pods -o yaml");
    assert!(o.stdout.starts_with("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n"), "{}", o.stdout);
    assert!(o.stdout.ends_with("kind: List\nmetadata:\n  resourceVersion: \"\"\n"), "{}", o.stdout);
    let o = f.kubectl("get deploy web -o json");
    assert!(o.stdout.starts_with("{\n    \"apiVersion\": \"apps/v1\",\n    \"kind\": \"Deployment\",\n    \"metadata\": {\n        \"annotations\": {\n            \"deployment.kubernetes.io/revision\": \"1\",\n            \"kubectl.kubernetes.io/last-applied-configuration\": \"{\\\"apiVersion\\\":\\\"apps/v1\\\""), "{}", o.stdout);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["spec"]["replicas"], 2);
    // The last-applied annotation is the input with namespace set and `annotations: {}`.
    let last: serde_json::Value =
        serde_json::from_str(v["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].as_str().unwrap()).unwrap();
    assert_eq!(last["metadata"], serde_json::json!({"annotations": {}, "labels": {"app": "web"}, "name": "web", "namespace": "default"}));
}

const DESCRIBE_POD: &str = "Name:             web-7d4b9c7f5-abcde
Namespace:        default
Priority:         0
Service Account:  default
Node:             node-1/10.0.0.11
Start Time:       Wed, 01 Jan 2025 00:00:04 +0000
Labels:           app=web
                  pod-template-hash=7d4b9c7f5
Annotations:      <none>
Status:           Running
IP:               10.244.0.5
IPs:
  IP:           10.244.0.5
Controlled By:  ReplicaSet/web-7d4b9c7f5
Containers:
  nginx:
    Container ID:   containerd://web-7d4b9c7f5-abcde
    Image:          nginx:1.27
    Image ID:       docker.io/library/nginx@sha256:0123
    Port:           80/TCP
    Host Port:      0/TCP
    State:          Running
      Started:      Wed, 01 Jan 2025 00:00:04 +0000
    Ready:          True
    Restart Count:  0
    Requests:
      cpu:        100m
      memory:     64Mi
    Environment:  <none>
    Mounts:
      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-mtzj5 (ro)
Conditions:
  Type                        Status
  PodReadyToStartContainers   True 
  Initialized                 True 
  Ready                       True 
  ContainersReady             True 
  PodScheduled                True 
Volumes:
  kube-api-access-mtzj5:
    Type:                    Projected (a volume that contains injected data from multiple sources)
    TokenExpirationSeconds:  3607
    ConfigMapName:           kube-root-ca.crt
    Optional:                false
    DownwardAPI:             true
QoS Class:                   Burstable
Node-Selectors:              <none>
Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
Events:
  Type     Reason     Age                    From               Message
  ----     ------     ----                   ----               -------
  Normal   Scheduled  4m56s                  default-scheduler  Successfully assigned default/web-7d4b9c7f5-abcde to node-1
  Normal   Pulled     4m55s                  kubelet            Container image \"nginx:1.27\" already present on machine
  Warning  Unhealthy  4m20s (x3 over 4m50s)  kubelet            Readiness probe failed: connection refused
";

const DESCRIBE_DEPLOYMENT: &str = "Name:                   web
Namespace:              default
CreationTimestamp:      Wed, 01 Jan 2025 00:00:00 +0000
Labels:                 app=web
Annotations:            deployment.kubernetes.io/revision: 1
Selector:               app=web
Replicas:               2 desired | 2 updated | 2 total | 2 available | 0 unavailable
StrategyType:           RollingUpdate
MinReadySeconds:        0
RollingUpdateStrategy:  25% max unavailable, 25% max surge
Pod Template:
  Labels:  app=web
  Containers:
   nginx:
    Image:      nginx:1.27
    Port:       80/TCP
    Host Port:  0/TCP
    Requests:
      cpu:         100m
      memory:      64Mi
    Environment:   <none>
    Mounts:        <none>
  Volumes:         <none>
  Node-Selectors:  <none>
  Tolerations:     <none>
Conditions:
  Type           Status  Reason
  ----           ------  ------
  Available      True    MinimumReplicasAvailable
  Progressing    True    NewReplicaSetAvailable
OldReplicaSets:  <none>
NewReplicaSet:   web-7d4b9c7f5 (2/2 replicas created)
Events:
  Type    Reason             Age    From                   Message
  ----    ------             ----   ----                   -------
  Normal  ScalingReplicaSet  4m58s  deployment-controller  Scaled up replica set web-7d4b9c7f5 from 0 to 2
";

#[test]
fn describe_layouts() {
    let mut f = scenario::cluster();
    check(&mut f, "describe pod web-7d4b9c7f5-abcde", DESCRIBE_POD, "", 0);
    check(&mut f, "describe deployment web", DESCRIBE_DEPLOYMENT, "", 0);
    let rs = f.kubectl("describe rs web-7d4b9c7f5");
    assert!(rs.stdout.starts_with("Name:           web-7d4b9c7f5\nNamespace:      default\nSelector:       app=web,pod-template-hash=7d4b9c7f5\nLabels:         app=web\n                pod-template-hash=7d4b9c7f5\nAnnotations:    deployment.kubernetes.io/desired-replicas: 2\n                deployment.kubernetes.io/max-replicas: 3\n                deployment.kubernetes.io/revision: 1\nControlled By:  Deployment/web\nReplicas:       2 current / 2 desired\nPods Status:    2 Running / 0 Waiting / 0 Succeeded / 0 Failed\nPod Template:\n"), "{}", rs.stdout);
    let node = f.kubectl("describe node node-1");
    assert!(node.stdout.contains("Non-terminated Pods:          (2 in total)\n  Namespace                   Name                   CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age\n  ---------                   ----                   ------------  ----------  ---------------  -------------  ---\n  default                     web-7d4b9c7f5-abcde    100m (2%)     0 (0%)      64Mi (0%)        0 (0%)         4m56s\n"), "{}", node.stdout);
    assert!(node.stdout.contains("Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n  Resource           Requests    Limits\n  --------           --------    ------\n  cpu                200m (5%)   0 (0%)\n  memory             128Mi (1%)  0 (0%)\n"), "{}", node.stdout);
    let svc = f.kubectl("describe svc web");
    assert!(svc.stdout.contains("Port:                     <unset>  80/TCP\nTargetPort:               80/TCP\n"), "{}", svc.stdout);
    check(
        &mut f,
        "describe ns default",
        // The namespace strategy labels every namespace with its name (kubernetes.io/metadata.name).
        "Name:         default\nLabels:       kubernetes.io/metadata.name=default\nAnnotations:  <none>\nStatus:       Active\n\nNo resource quota.\n\nNo LimitRange resource.\n",
        "",
        0,
    );
    // A name prefix describes every match; objects are separated by two blank lines (describe.go "\\n\\n%s").
    let both = f.kubectl("describe pods web-7d4b9c7f5");
    assert_eq!(both.stdout.matches("Name:             web-7d4b9c7f5-").count(), 2);
    assert!(both.stdout.contains("connection refused\n\n\nName:             web-7d4b9c7f5-fghij\n"));
    check(&mut f, "describe pod nope", "", "Error from server (NotFound): pods \"nope\" not found\n", 1);
}

/// `kubectl get --raw` (get.go RawOptions; docs: reference/using-api/health-checks).
#[test]
fn raw_paths() {
    let mut f = scenario::cluster();
    check(&mut f, "get --raw /readyz", "ok", "", 0);
    check(&mut f, "get --raw=/livez?verbose", "[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n", "", 0);
    let o = f.kubectl("get --raw /api/v1/namespaces/default/pods/web-7d4b9c7f5-abcde");
    assert_eq!(o.exit_code, 0, "{o:?}");
    let pod: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!((pod["kind"].as_str(), pod["metadata"]["name"].as_str()), (Some("Pod"), Some("web-7d4b9c7f5-abcde")));
    assert!(o.stdout.ends_with("}\n") && !o.stdout.contains("\n "), "compact JSON");
    let o = f.kubectl("get --raw /apis/apps/v1/namespaces/default/deployments");
    let list: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(list["kind"], "DeploymentList");
    assert_eq!(list["items"][0]["metadata"]["name"], "web");
    assert!(list["items"][0].get("kind").is_none(), "typed list items carry no kind");
    check(&mut f, "get --raw /api/v1/namespaces/default/pods/nope", "", "Error from server (NotFound): pods \"nope\" not found\n", 1);
    check(&mut f, "get --raw /nothing", "", "Error from server (NotFound): the server could not find the requested resource\n", 1);
    check(&mut f, "get pods --raw /readyz", "", "error: arguments may not be passed when --raw is specified\n", 1);
}

/// `kubectl auth can-i --list` (cmd/auth/cani.go printStatus: BreakdownRule, CompactRules,
/// SortableRuleSlice) for kubernetes-admin with the bootstrap roles of bootstrappolicy/policy.go.
#[test]
fn auth_can_i_list() {
    let mut f = scenario::cluster();
    let o = f.kubectl("auth can-i --list");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines[0], "Resources                                       Non-Resource URLs   Resource Names   Verbs");
    assert_eq!(lines[1], "*.*                                             []                  []               [*]");
    assert_eq!(lines[2], "                                                [*]                 []               [*]");
    assert_eq!(lines[3], "selfsubjectreviews.authentication.k8s.io        []                  []               [create]");
    assert_eq!(lines[6], "                                                [/api/*]            []               [get]");
    assert_eq!(lines.len(), 22);
    assert!(!f.kubectl("auth can-i --list --no-headers").stdout.contains("Resources"));
    let view = f.kubectl("config view").stdout;
    check(&mut f, "config view --minify", &view, "", 0);
}
