//! The describers of staging/src/k8s.io/kubectl/pkg/describe/describe.go for the kinds kubesim
//! serves beyond the workloads (describeQuota, describeLimitRange, DescribeResourceQuotas /
//! DescribeLimitRanges in describeNamespace, describeCronJob, describeEndpoints,
//! describeEndpointSliceV1, describeServiceAccount, describeStorageClass, describeIngressClassV1,
//! describeNetworkPolicy, describePriorityClass, describeReplicationController, describeRole /
//! describeClusterRole with pkg/util/rbac BreakdownRule + CompactRules + SortableRuleSlice,
//! describeRoleBinding / describeClusterRoleBinding), byte for byte.

mod common;

use common::Fixture;

fn describe(f: &mut Fixture, file: &str, yaml: &str, what: &str) -> String {
    f.file(file, yaml);
    let applied = f.kubectl(&format!("apply -f {file}"));
    assert_eq!(applied.exit_code, 0, "{applied:?}");
    let o = f.kubectl(&format!("describe {what}"));
    assert_eq!(o.exit_code, 0, "{o:?}");
    o.stdout
}

// Docs: tasks/administer-cluster/manage-resources/quota-memory-cpu-namespace and
// memory-constraint-namespace (`kubectl describe resourcequota`, `kubectl describe limitrange`).
#[test]
fn quota_limit_range_and_namespace_sections() {
    let mut f = Fixture::new();
    f.create_namespace("quota-mem-cpu-example");
    let quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: mem-cpu-demo\n  namespace: quota-mem-cpu-example\nspec:\n  hard:\n    requests.cpu: \"1\"\n    requests.memory: 1Gi\n    limits.cpu: \"2\"\n    limits.memory: 2Gi\n";
    let out = describe(&mut f, "quota.yaml", quota, "resourcequota mem-cpu-demo -n quota-mem-cpu-example");
    assert_eq!(
        out,
        "Name:            mem-cpu-demo\nNamespace:       quota-mem-cpu-example\nResource         Used  Hard\n--------         ----  ----\nlimits.cpu       0     2\nlimits.memory    0     2Gi\nrequests.cpu     0     1\nrequests.memory  0     1Gi\n"
    );
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: quota-mem-cpu-demo, namespace: quota-mem-cpu-example}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    resources: {limits: {memory: 800Mi, cpu: 800m}, requests: {memory: 600Mi, cpu: 400m}}\n";
    f.file("pod.yaml", pod);
    assert_eq!(f.kubectl("apply -f pod.yaml").exit_code, 0);
    let out = f.kubectl("describe quota mem-cpu-demo -n quota-mem-cpu-example").stdout;
    assert!(out.ends_with("limits.cpu       800m   2\nlimits.memory    800Mi  2Gi\nrequests.cpu     400m   1\nrequests.memory  600Mi  1Gi\n"), "{out}");
    let lr = "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: mem-min-max-demo-lr\n  namespace: quota-mem-cpu-example\nspec:\n  limits:\n  - max:\n      memory: 1Gi\n    min:\n      memory: 500Mi\n    type: Container\n";
    let out = describe(&mut f, "lr.yaml", lr, "limitrange mem-min-max-demo-lr -n quota-mem-cpu-example");
    assert_eq!(
        out,
        "Name:       mem-min-max-demo-lr\nNamespace:  quota-mem-cpu-example\nType        Resource  Min    Max  Default Request  Default Limit  Max Limit/Request Ratio\n----        --------  ---    ---  ---------------  -------------  -----------------------\nContainer   memory    500Mi  1Gi  1Gi              1Gi            -\n"
    );
    let ns = f.kubectl("describe namespace quota-mem-cpu-example").stdout;
    assert!(
        ns.contains(
            "Resource Quotas\n  Name:            mem-cpu-demo\n  Resource         Used   Hard\n  --------         ---    ---\n  limits.cpu       800m   2\n"
        ),
        "{ns}"
    );
    assert!(ns.ends_with("Resource Limits\n Type       Resource  Min    Max  Default Request  Default Limit  Max Limit/Request Ratio\n ----       --------  ---    ---  ---------------  -------------  -----------------------\n Container  memory    500Mi  1Gi  1Gi              1Gi            -\n"), "{ns}");
    let scoped =
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: be, namespace: quota-mem-cpu-example}\nspec:\n  hard: {pods: \"2\"}\n  scopes: [BestEffort]\n";
    let out = describe(&mut f, "scoped.yaml", scoped, "quota be -n quota-mem-cpu-example");
    assert!(
        out.contains(
            "Scopes:     BestEffort\n * Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.\n"
        ),
        "{out}"
    );
}

#[test]
fn cron_job_endpoints_and_service_account() {
    let mut f = Fixture::new();
    let cj = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: hello}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: hello, image: busybox:1.28, command: [/bin/sh, -c, date; echo Hello]}]\n          restartPolicy: OnFailure\n";
    let out = describe(&mut f, "cj.yaml", cj, "cronjob hello");
    let head = "Name:                          hello\nNamespace:                     default\nLabels:                        <none>\nAnnotations:                   <none>\nSchedule:                      * * * * *\nConcurrency Policy:            Allow\nSuspend:                       False\nSuccessful Job History Limit:  3\nFailed Job History Limit:      1\nStarting Deadline Seconds:     <unset>\nSelector:                      <unset>\nParallelism:                   <unset>\nCompletions:                   <unset>\nPod Template:\n";
    assert!(out.starts_with(head), "{out}");
    // Lines without a tab end tabwriter's column block, so the tail aligns on its own.
    assert!(out.ends_with("  Tolerations:       <none>\nLast Schedule Time:  <unset>\nActive Jobs:         <none>\nEvents:              <none>\n"), "{out}");
    let ep = "apiVersion: v1\nkind: Endpoints\nmetadata: {name: my-service}\nsubsets:\n- addresses: [{ip: 10.244.0.5}, {ip: 10.244.0.6}]\n  ports: [{port: 9376, protocol: TCP}]\n";
    let out = describe(&mut f, "ep.yaml", ep, "endpoints my-service");
    assert_eq!(
        out,
        "Name:         my-service\nNamespace:    default\nLabels:       <none>\nAnnotations:  <none>\nSubsets:\n  Addresses:          10.244.0.5,10.244.0.6\n  NotReadyAddresses:  <none>\n  Ports:\n    Name     Port  Protocol\n    ----     ----  --------\n    <unset>  9376  TCP\n\nEvents:  <none>\n"
    );
    let sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: build-robot}\nimagePullSecrets: [{name: myregistrykey}]\n";
    let out = describe(&mut f, "sa.yaml", sa, "serviceaccount build-robot");
    assert!(
        out.ends_with(
            "Image pull secrets:  myregistrykey (not found)\nMountable secrets:   <none>\nTokens:              <none>\nEvents:              <none>\n"
        ),
        "{out}"
    );
}

#[test]
fn storage_network_priority_and_replication_controllers() {
    let mut f = Fixture::new();
    let sc = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\n  annotations: {storageclass.kubernetes.io/is-default-class: 'true'}\nprovisioner: kubernetes.io/aws-ebs\nparameters: {type: gp2}\nreclaimPolicy: Retain\nallowVolumeExpansion: true\nmountOptions: [debug]\nvolumeBindingMode: Immediate\n";
    let out = describe(&mut f, "sc.yaml", sc, "storageclass standard");
    assert!(out.starts_with("Name:            standard\nIsDefaultClass:  Yes\nAnnotations:     kubectl.kubernetes.io/last-applied-configuration="), "{out}");
    let tail = out.split_once("\nProvisioner:").map(|(_, t)| t).unwrap_or("");
    assert_eq!(tail, "           kubernetes.io/aws-ebs\nParameters:            type=gp2\nAllowVolumeExpansion:  True\nMountOptions:\n  debug\nReclaimPolicy:      Retain\nVolumeBindingMode:  Immediate\nEvents:             <none>\n", "{out}");
    let np = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: test-network-policy}\nspec:\n  podSelector: {matchLabels: {role: db}}\n  ingress:\n  - from:\n    - ipBlock: {cidr: 172.17.0.0/16, except: [172.17.1.0/24]}\n    - podSelector: {matchLabels: {role: frontend}}\n    ports: [{port: 6379}]\n";
    let out = describe(&mut f, "np.yaml", np, "networkpolicy test-network-policy");
    assert!(out.contains("Spec:\n  PodSelector:     role=db\n  Allowing ingress traffic:\n    To Port: 6379/TCP\n    From:\n      IPBlock:\n        CIDR: 172.17.0.0/16\n        Except: 172.17.1.0/24\n    From:\n      PodSelector: role=frontend\n  Not affecting egress traffic\n  Policy Types: Ingress\n"), "{out}");
    let pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high-priority}\nvalue: 1000000\nglobalDefault: false\ndescription: \"This priority class should be used for XYZ service pods only.\"\n";
    let out = describe(&mut f, "pc.yaml", pc, "priorityclass high-priority");
    assert!(out.starts_with("Name:              high-priority\nValue:             1000000\nGlobalDefault:     false\nPreemptionPolicy:  PreemptLowerPriority\nDescription:       This priority class should be used for XYZ service pods only.\n"), "{out}");
    let rc = "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: nginx}\nspec:\n  replicas: 3\n  selector: {app: nginx}\n  template:\n    metadata: {labels: {app: nginx}}\n    spec:\n      containers: [{name: nginx, image: nginx, ports: [{containerPort: 80}]}]\n";
    let out = describe(&mut f, "rc.yaml", rc, "rc nginx");
    assert!(out.starts_with("Name:         nginx\nNamespace:    default\nSelector:     app=nginx\nLabels:       <none>\n"), "{out}");
    assert!(out.contains("Replicas:     0 current / 3 desired\nPods Status:  0 Running / 0 Waiting / 0 Succeeded / 0 Failed\nPod Template:\n"), "{out}");
    let ic = "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: external-lb}\nspec:\n  controller: example.com/ingress-controller\n  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb}\n";
    let out = describe(&mut f, "ic.yaml", ic, "ingressclass external-lb");
    assert!(out.ends_with("Controller:   example.com/ingress-controller\nParameters:\n  APIGroup:  k8s.example.com\n  Kind:      IngressParameters\n  Name:      external-lb\nEvents:      <none>\n"), "{out}");
}

// Docs: reference/access-authn-authz/rbac (Role, ClusterRole, RoleBinding examples).
#[test]
fn rbac_describers_compact_and_sort_rules() {
    let mut f = Fixture::new();
    let role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get, watch, list]\n- apiGroups: [apps]\n  resources: [deployments, deployments/scale]\n  verbs: [get, update]\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get, delete]\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  resourceNames: [a, b]\n  verbs: [get]\n- nonResourceURLs: [/healthz]\n  verbs: [get]\n";
    let out = describe(&mut f, "role.yaml", role, "clusterrole reader");
    // Sorted by PolicyRule.String(): `%v` of [""] is "[]", so /healthz (Resources:[]) sorts
    // before configmaps.
    assert_eq!(
        out,
        "Name:         reader\nLabels:       <none>\nAnnotations:  <none>\nPolicyRule:\n  Resources               Non-Resource URLs  Resource Names  Verbs\n  ---------               -----------------  --------------  -----\n  deployments.apps/scale  []                 []              [get update]\n  deployments.apps        []                 []              [get update]\n  pods                    []                 []              [get watch list delete]\n                          [/healthz]         []              [get]\n  configmaps              []                 [a]             [get]\n  configmaps              []                 [b]             [get]\n"
    );
    let binding = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: read-pods\n  namespace: default\nsubjects:\n- kind: User\n  name: jane\n  apiGroup: rbac.authorization.k8s.io\n- kind: ServiceAccount\n  name: robot\n  namespace: default\nroleRef:\n  kind: ClusterRole\n  name: reader\n  apiGroup: rbac.authorization.k8s.io\n";
    let out = describe(&mut f, "binding.yaml", binding, "rolebinding read-pods");
    assert_eq!(
        out,
        "Name:         read-pods\nLabels:       <none>\nAnnotations:  <none>\nRole:\n  Kind:  ClusterRole\n  Name:  reader\nSubjects:\n  Kind            Name   Namespace\n  ----            ----   ---------\n  User            jane   \n  ServiceAccount  robot  default\n"
    );
}
