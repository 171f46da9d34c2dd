//! `kubectl create` generators beyond the workloads (cmd/create/create_quota.go,
//! create_priorityclass.go, create_pdb.go, create_role.go, create_rolebinding.go,
//! create_clusterrolebinding.go, create_secret_docker.go, create_secret_tls.go,
//! create_serviceaccount.go), compared with kubectl v1.32's `--dry-run=client -o yaml`.

mod common;

use common::Fixture;

fn check(f: &mut Fixture, cmd: &str, stdout: &str, stderr: &str, code: i32) {
    let o = f.kubectl(cmd);
    assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.exit_code), (stdout, stderr, code), "`kubectl {cmd}`");
}

#[test]
fn generators_print_what_kubectl_prints() {
    let mut f = Fixture::new();
    check(
        &mut f,
        "create quota q --hard=pods=2,cpu=1 --scopes=BestEffort --dry-run=client -o yaml",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  creationTimestamp: null\n  name: q\nspec:\n  hard:\n    cpu: \"1\"\n    pods: \"2\"\n  scopes:\n  - BestEffort\nstatus: {}\n",
        "",
        0,
    );
    check(
        &mut f,
        "create priorityclass hp --value=1000 --description=high --dry-run=client -o yaml",
        "apiVersion: scheduling.k8s.io/v1\ndescription: high\nkind: PriorityClass\nmetadata:\n  creationTimestamp: null\n  name: hp\npreemptionPolicy: PreemptLowerPriority\nvalue: 1000\n",
        "",
        0,
    );
    check(
        &mut f,
        "create pdb p --selector=app=web --min-available=1 --dry-run=client -o yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  creationTimestamp: null\n  name: p\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: web\nstatus:\n  currentHealthy: 0\n  desiredHealthy: 0\n  disruptionsAllowed: 0\n  expectedPods: 0\n",
        "",
        0,
    );
    check(&mut f, "create pdb p --selector=app!=web --min-available=1", "", "error: \"!=\" is not a valid label selector operator\n", 1);
    check(
        &mut f,
        "create secret docker-registry regcred --docker-server=r.io --docker-username=u --docker-password=p --docker-email=e@x --dry-run=client -o yaml",
        "apiVersion: v1\ndata:\n  .dockerconfigjson: eyJhdXRocyI6eyJyLmlvIjp7InVzZXJuYW1lIjoidSIsInBhc3N3b3JkIjoicCIsImVtYWlsIjoiZUB4IiwiYXV0aCI6ImRUcHcifX19\nkind: Secret\nmetadata:\n  creationTimestamp: null\n  name: regcred\ntype: kubernetes.io/dockerconfigjson\n",
        "",
        0,
    );
    check(
        &mut f,
        "create rolebinding rb --role=r --user=u --serviceaccount=default:sa --dry-run=client -o yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  creationTimestamp: null\n  name: rb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: r\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: u\n- kind: ServiceAccount\n  name: sa\n  namespace: default\n",
        "",
        0,
    );
    check(&mut f, "create serviceaccount build-robot", "serviceaccount/build-robot created\n", "", 0);
    check(&mut f, "create quota object-counts --hard=pods=4", "resourcequota/object-counts created\n", "", 0);
    check(
        &mut f,
        "create role pod-reader --verb=get --verb=list --resource=pods,deployments.apps",
        "role.rbac.authorization.k8s.io/pod-reader created\n",
        "",
        0,
    );
    let rules = f.get("roles", "default", "pod-reader").unwrap().to_json()["rules"].clone();
    assert_eq!(
        rules,
        serde_json::json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}, {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]}])
    );
    check(&mut f, "create clusterrolebinding crb --clusterrole=view --group=g", "clusterrolebinding.rbac.authorization.k8s.io/crb created\n", "", 0);
    f.file("tls.crt", "CERT");
    f.file("tls.key", "KEY");
    check(&mut f, "create secret tls tls-secret --cert=tls.crt --key=tls.key", "secret/tls-secret created\n", "", 0);
    assert_eq!(f.get("secrets", "default", "tls-secret").unwrap().to_json()["type"], "kubernetes.io/tls");
    let v = f.kubectl("version -o yaml").stdout;
    assert!(v.starts_with("clientVersion:\n  gitVersion: v1.34.0\n"), "{v}");
}

// A Deployment without a strategy replaces cleanly (update validation sees the defaults).
#[test]
fn replace_validates_the_defaulted_object() {
    let mut f = Fixture::new();
    f.file("d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: nginx}]}\n");
    check(&mut f, "create -f d.yaml", "deployment.apps/d created\n", "", 0);
    check(&mut f, "replace -f d.yaml", "deployment.apps/d replaced\n", "", 0);
}

// pkg/printers/internalversion/printers.go column sets for kinds kept as JSON.
#[test]
fn tables_for_more_kinds() {
    let mut f = Fixture::new();
    f.file(
        "more.yaml",
        "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt}\ntemplate:\n  metadata: {labels: {app: x}}\n  spec: {containers: [{name: c, image: nginx}]}\n---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: hostpath.csi.k8s.io}\nspec: {podInfoOnMount: true}\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: vwc}\nwebhooks: []\n",
    );
    assert_eq!(f.kubectl("apply -f more.yaml").exit_code, 0);
    let words = |o: &str| o.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>();
    assert_eq!(words(&f.kubectl("get podtemplates").stdout), ["NAME CONTAINERS IMAGES POD LABELS", "pt c nginx app=x"]);
    assert_eq!(
        words(&f.kubectl("get csidrivers").stdout),
        [
            "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE",
            "hostpath.csi.k8s.io true true false <unset> false Persistent 0s"
        ]
    );
    assert_eq!(words(&f.kubectl("get validatingwebhookconfigurations").stdout), ["NAME WEBHOOKS AGE", "vwc 0 0s"]);
}

/// cmd/create/create_token.go: a TokenRequest's JWT (no trailing newline off a terminal),
/// kube-apiserver's service account claims; docs: tasks/configure-pod-container/
/// configure-service-account (`kubectl create token build-robot`).
#[test]
fn create_token_issues_a_service_account_jwt() {
    let mut f = Fixture::new();
    check(&mut f, "create serviceaccount build-robot", "serviceaccount/build-robot created\n", "", 0);
    let o = f.kubectl("create token build-robot --duration=10m");
    assert_eq!(o.exit_code, 0, "{o:?}");
    let parts: Vec<&str> = o.stdout.split('.').collect();
    assert_eq!(parts.len(), 3, "{}", o.stdout);
    assert!(!o.stdout.ends_with('\n'));
    let decode = |s: &str| {
        let std = s.replace('-', "+").replace('_', "/");
        let padded = format!("{std}{}", "=".repeat((4 - std.len() % 4) % 4));
        serde_json::from_slice::<serde_json::Value>(&kubesim_kubectl::gotemplate::base64_decode(&padded).unwrap()).unwrap()
    };
    assert_eq!(decode(parts[0])["alg"], "RS256");
    let claims = decode(parts[1]);
    assert_eq!(claims["sub"], "system:serviceaccount:default:build-robot");
    assert_eq!(claims["kubernetes.io"]["serviceaccount"]["name"], "build-robot");
    assert_eq!(claims["aud"][0], "https://kubernetes.default.svc.cluster.local");
    assert_eq!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(), 600);
    check(&mut f, "create token nope", "", "error: failed to create token: serviceaccounts \"nope\" not found\n", 1);
    check(&mut f, "create token build-robot --duration=1500ms", "", "error: --duration cannot be expressed in units less than seconds\n", 1);
    check(&mut f, "create token", "", "error: service account name is required\n", 1);
}

/// cmd/create/create_ingress.go (ruleRegex, buildTLSRules, buildIngressRules), compared with
/// kubectl v1.32 `--dry-run=client -o yaml`.
#[test]
fn create_ingress_builds_create_ingress_go_objects() {
    let mut f = Fixture::new();
    check(&mut f, "create ingress x --rule=foo.com/=svc:80,tls=a --rule=bar.com/x=s:1,tls=a --dry-run=client -o yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  creationTimestamp: null\n  name: x\nspec:\n  rules:\n  - host: foo.com\n    http:\n      paths:\n      - backend:\n          service:\n            name: svc\n            port:\n              number: 80\n        path: /\n        pathType: Exact\n  - host: bar.com\n    http:\n      paths:\n      - backend:\n          service:\n            name: s\n            port:\n              number: 1\n        path: /x\n        pathType: Exact\n  tls:\n  - hosts:\n    - foo.com\n    - bar.com\n    secretName: a\nstatus:\n  loadBalancer: {}\n", "", 0);
    check(
        &mut f,
        "create ingress x --dry-run=client -o yaml",
        "",
        "error: not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)\n",
        1,
    );
    check(&mut f, "create ingress x --rule=bad", "", "error: rule bad is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]\n", 1);
    check(&mut f, "create ingress web --rule=/*=web:80", "ingress.networking.k8s.io/web created\n", "", 0);
    check(&mut f, "create ingress web --rule=/*=web:80", "", "error: failed to create ingress: ingresses.networking.k8s.io \"web\" already exists\n", 1);
}

/// cmd/create/create_service.go (port names, named target ports, ExternalName selector,
/// status.loadBalancer), compared with kubectl v1.32 `--dry-run=client -o yaml`.
#[test]
fn create_service_matches_create_service_go() {
    let mut f = Fixture::new();
    check(&mut f, "create service loadbalancer lb --tcp=80 --tcp=443:8443 --dry-run=client -o yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  creationTimestamp: null\n  labels:\n    app: lb\n  name: lb\nspec:\n  ports:\n  - name: \"80\"\n    port: 80\n    protocol: TCP\n    targetPort: 80\n  - name: 443-8443\n    port: 443\n    protocol: TCP\n    targetPort: 8443\n  selector:\n    app: lb\n  type: LoadBalancer\nstatus:\n  loadBalancer: {}\n", "", 0);
    check(&mut f, "create service externalname ex --external-name=a.com --dry-run=client -o yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  creationTimestamp: null\n  labels:\n    app: ex\n  name: ex\nspec:\n  externalName: a.com\n  selector:\n    app: ex\n  type: ExternalName\nstatus:\n  loadBalancer: {}\n", "", 0);
}

// create_deployment.go buildPodSpec + sanitizeAndUniquify: an image named serve_hostname (the
// Services tutorials' `kubectl create deployment ... --image=registry.k8s.io/serve_hostname`)
// gives a container named serve-hostname-<5 random characters>; plain names are kept.
#[test]
fn create_deployment_sanitizes_container_names_from_images() {
    let mut f = Fixture::new();
    let o =
        f.kubectl("create deployment hostnames --image=registry.k8s.io/serve_hostname --dry-run=client -o jsonpath={.spec.template.spec.containers[0].name}");
    assert_eq!(o.exit_code, 0, "{o:?}");
    let suffix = o.stdout.strip_prefix("serve-hostname-").unwrap_or_else(|| panic!("{o:?}"));
    assert!(suffix.len() == 5 && suffix.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)), "{o:?}");
    let o = f.kubectl("create deployment web --image=nginx:1.27 --dry-run=client -o jsonpath={.spec.template.spec.containers[0].name}");
    assert_eq!(o.stdout, "nginx");
    let o = f.kubectl("create deployment hostnames --image=registry.k8s.io/serve_hostname");
    assert_eq!((o.stdout.as_str(), o.exit_code), ("deployment.apps/hostnames created\n", 0), "{o:?}");
}
