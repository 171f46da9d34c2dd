//! Resource arguments and patches: `-f FILE` on the verbs that act on existing objects
//! (resource.Builder FilenameParam), `TYPE.VERSION.GROUP/NAME` and `TYPE.GROUP`
//! (schema.ParseResourceArg), `kubectl patch --patch-file` and the strategic-merge directives,
//! following the docs pages tasks/manage-kubernetes-objects/update-api-object-kubectl-patch and
//! concepts/workloads/controllers/deployment (`kubectl set image deployment.v1.apps/...`).

mod common;
mod scenario;

use common::Fixture;

fn check(f: &mut Fixture, cmd: &str, stdout: &str, stderr: &str, code: i32) {
    let o = f.kubectl(cmd);
    assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.exit_code), (stdout, stderr, code), "`kubectl {cmd}`");
}

fn json(f: &Fixture, kind: &str, name: &str) -> serde_json::Value {
    f.get(kind, "default", name).unwrap().to_json()
}

#[test]
fn verbs_resolve_the_objects_a_file_names() {
    let mut f = scenario::cluster();
    f.file("web.yaml", scenario::APP);
    let o = f.kubectl("get -f web.yaml");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert!(o.stdout.starts_with("NAME                  READY   UP-TO-DATE   AVAILABLE   AGE\ndeployment.apps/web   2/2"), "{}", o.stdout);
    assert!(o.stdout.contains("\nNAME          TYPE        CLUSTER-IP"), "{}", o.stdout);
    check(&mut f, "get -f web.yaml -o name", "deployment.apps/web\nservice/web\n", "", 0);
    let o = f.kubectl("describe -f web.yaml");
    assert!(o.stdout.starts_with("Name:                   web\nNamespace:              default\n"), "{}", o.stdout);
    assert!(o.stdout.contains("\n\nName:                     web\nNamespace:                default\n"), "{}", o.stdout);
    check(&mut f, "label -f web.yaml tier=frontend", "deployment.apps/web labeled\nservice/web labeled\n", "", 0);
    assert_eq!(json(&f, "services", "web")["metadata"]["labels"]["tier"], "frontend");
    check(&mut f, "label -f web.yaml tier-", "deployment.apps/web unlabeled\nservice/web unlabeled\n", "", 0);
    check(&mut f, "annotate -f web.yaml note=x", "deployment.apps/web annotated\nservice/web annotated\n", "", 0);
    f.file("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n");
    check(&mut f, "scale --replicas=3 -f deploy.yaml", "deployment.apps/web scaled\n", "", 0);
    check(&mut f, "set image -f deploy.yaml nginx=nginx:1.28", "deployment.apps/web image updated\n", "", 0);
    check(&mut f, "get -f deploy.yaml -o jsonpath={.spec.replicas}", "3", "", 0);
    f.file("other-ns.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: kube-system}\n");
    check(
        &mut f,
        "get -f other-ns.yaml -n default",
        "",
        "error: the namespace from the provided object \"kube-system\" does not match the namespace \"default\". You must pass '--namespace=kube-system' to perform this operation.\n",
        1,
    );
    check(&mut f, "get -f other-ns.yaml", "", "Error from server (NotFound): configmaps \"c\" not found\n", 1);
    check(&mut f, "get -f nope.yaml", "", "error: the path \"nope.yaml\" does not exist\n", 1);
    // Docs pages apply manifests by URL (`kubectl apply -f https://k8s.io/examples/...`): kubesim
    // carries the documentation's examples; other URLs fail (no network) saying what to do.
    check(&mut f, "apply -f https://k8s.io/examples/application/deployment.yaml", "deployment.apps/nginx-deployment created\n", "", 0);
    check(
        &mut f,
        "apply -f https://example.com/app.yaml",
        "",
        "error: unable to read URL \"https://example.com/app.yaml\": kubesim has no network access; download the manifest and pass its local path\n",
        1,
    );
}

#[test]
fn type_version_group_resource_forms() {
    let mut f = scenario::cluster();
    check(&mut f, "rollout status deployment.v1.apps/web", "deployment \"web\" successfully rolled out\n", "", 0);
    check(&mut f, "set image deployment.v1.apps/web nginx=nginx:1.16.1", "deployment.apps/web image updated\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.16.1");
    check(&mut f, "get deployments.apps web -o name", "deployment.apps/web\n", "", 0);
    check(&mut f, "get deploy.v1.apps/web -o name", "deployment.apps/web\n", "", 0);
    check(&mut f, "get deployment.v2.apps web", "", "error: the server doesn't have a resource type \"deployment.v2.apps\"\n", 1);
}

// The docs page tasks/manage-kubernetes-objects/update-api-object-kubectl-patch.
#[test]
fn patch_file_and_retain_keys_follow_the_docs_page() {
    let mut f = Fixture::new();
    f.file(
        "deployment-patch.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: patch-demo\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: nginx\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: patch-demo-ctr\n        image: nginx\n      tolerations:\n      - effect: NoSchedule\n        key: dedicated\n        value: test-team\n",
    );
    check(&mut f, "apply -f deployment-patch.yaml", "deployment.apps/patch-demo created\n", "", 0);
    f.file("patch-file.yaml", "spec:\n  template:\n    spec:\n      containers:\n      - name: patch-demo-ctr-2\n        image: redis\n");
    check(&mut f, "patch deployment patch-demo --patch-file patch-file.yaml", "deployment.apps/patch-demo patched\n", "", 0);
    let containers = json(&f, "deployments", "patch-demo")["spec"]["template"]["spec"]["containers"].clone();
    // The page's output lists the new container first (strategicpatch mergeSortedSlice).
    assert_eq!(containers.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect::<Vec<_>>(), ["patch-demo-ctr-2", "patch-demo-ctr"]);
    // A merge patch replaces the list.
    f.file(
        "patch-file-2.yaml",
        "spec:\n  template:\n    spec:\n      containers:\n      - name: patch-demo-ctr-3\n        image: gcr.io/google-samples/hello-app:2.0\n",
    );
    check(&mut f, "patch deployment patch-demo --type merge --patch-file patch-file-2.yaml", "deployment.apps/patch-demo patched\n", "", 0);
    let containers = json(&f, "deployments", "patch-demo")["spec"]["template"]["spec"]["containers"].clone();
    assert_eq!(containers.as_array().unwrap().len(), 1);
    // retainkeys-demo.
    f.file(
        "deployment-retainkeys.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: retainkeys-demo\nspec:\n  selector:\n    matchLabels:\n      app: nginx\n  strategy:\n    rollingUpdate:\n      maxSurge: 30%\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: retainkeys-demo-ctr\n        image: nginx\n",
    );
    check(&mut f, "apply -f deployment-retainkeys.yaml", "deployment.apps/retainkeys-demo created\n", "", 0);
    f.file("patch-file-no-retainkeys.yaml", "spec:\n  strategy:\n    type: Recreate\n");
    check(
        &mut f,
        "patch deployment retainkeys-demo --type strategic --patch-file patch-file-no-retainkeys.yaml",
        "",
        "The Deployment \"retainkeys-demo\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'\n",
        1,
    );
    check(
        &mut f,
        r#"patch deployment retainkeys-demo --type merge -p '{"spec":{"strategy":{"type":"Recreate"}}}'"#,
        "",
        "The Deployment \"retainkeys-demo\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'\n",
        1,
    );
    f.file("patch-file-retainkeys.yaml", "spec:\n  strategy:\n    $retainKeys:\n    - type\n    type: Recreate\n");
    check(
        &mut f,
        "patch deployment retainkeys-demo --type strategic --patch-file patch-file-retainkeys.yaml",
        "deployment.apps/retainkeys-demo patched\n",
        "",
        0,
    );
    assert_eq!(json(&f, "deployments", "retainkeys-demo")["spec"]["strategy"], serde_json::json!({"type": "Recreate"}));
    // Creating such a Deployment is refused the same way.
    f.file("bad.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad}\nspec:\n  selector: {matchLabels: {app: x}}\n  strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}\n  template:\n    metadata: {labels: {app: x}}\n    spec: {containers: [{name: c, image: nginx}]}\n");
    check(
        &mut f,
        "apply -f bad.yaml",
        "",
        "The Deployment \"bad\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'\n",
        1,
    );
    check(&mut f, "patch deployment patch-demo --patch-file nope.yaml", "", "error: unable to read patch file: open nope.yaml: no such file or directory\n", 1);
    check(&mut f, "patch deployment patch-demo", "", "error: must specify --patch or --patch-file containing the contents of the patch\n", 1);
    check(&mut f, "patch -f deployment-patch.yaml -p '{\"spec\":{\"replicas\":4}}'", "deployment.apps/patch-demo patched\n", "", 0);
}

// The docs page update-api-object-kubectl-patch ("Use kubectl patch to update the scale
// subresource") and `kubectl replace --force` (replace.go forceReplace).
#[test]
fn scale_subresource_and_forced_replace() {
    let mut f = scenario::cluster();
    check(&mut f, "get deployment web --subresource=scale", "NAME   DESIRED   AVAILABLE   AGE\nweb    2         2           5m\n", "", 0);
    check(&mut f, r#"patch deployment web --subresource='scale' --type='merge' -p '{"spec":{"replicas":3}}'"#, "scale.autoscaling/web patched\n", "", 0);
    check(&mut f, "get deployment web --subresource=scale -o jsonpath={.kind}/{.spec.replicas}", "Scale/3", "", 0);
    f.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n");
    check(&mut f, "create -f cm.yaml", "configmap/c created\n", "", 0);
    let uid = f.get("configmaps", "default", "c").unwrap().metadata().uid.clone();
    check(&mut f, "replace --force -f cm.yaml", "configmap \"c\" deleted\nconfigmap/c replaced\n", "", 0);
    assert_ne!(f.get("configmaps", "default", "c").unwrap().metadata().uid, uid, "a new object");
}

/// cmd/label/label.go and cmd/annotate/annotate.go: `--local` edits the -f objects without the
/// server, `--dry-run=client` sends nothing, `-o` prints the result (outputs as kubectl v1.32
/// prints them for the same file).
#[test]
fn label_and_annotate_local_dry_run_and_output() {
    let mut f = scenario::cluster();
    f.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    m: x\ndata:\n  k: v\n");
    check(&mut f, "label --local -f cm.yaml x=y -o name", "configmap/c\n", "", 0);
    check(
        &mut f,
        "label --local -f cm.yaml x=y -o yaml",
        "apiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\nmetadata:\n  annotations:\n    m: x\n  labels:\n    x: \"y\"\n  name: c\n",
        "",
        0,
    );
    check(&mut f, "annotate --local -f cm.yaml m- -o jsonpath={.metadata}", "{\"annotations\":{},\"name\":\"c\"}", "", 0);
    check(&mut f, "label --local -f cm.yaml x=y", "configmap/c labeled\n", "", 0);
    check(&mut f, "label --local cm c x=y", "", "error: can only use local files by -f pod.yaml or --filename=pod.json when --local=true is set\n", 1);
    check(&mut f, "annotate --local x=y", "", "error: one or more files must be specified as -f rsrc.yaml or --filename=rsrc.json\n", 1);
    check(
        &mut f,
        "label --local -f cm.yaml x=y --dry-run=server",
        "",
        "error: cannot specify --local and --dry-run=server - did you mean --dry-run=client?\n",
        1,
    );
    assert!(f.get("configmaps", "default", "c").is_none(), "--local wrote to the server");
    check(&mut f, "apply -f cm.yaml", "configmap/c created\n", "", 0);
    check(&mut f, "label cm c x=y --dry-run=client", "configmap/c labeled (dry run)\n", "", 0);
    check(&mut f, "annotate cm c n=1 --dry-run=server", "configmap/c annotated (server dry run)\n", "", 0);
    assert!(json(&f, "configmaps", "c")["metadata"].get("labels").is_none(), "a dry run wrote");
    check(&mut f, "label cm c x=y -o jsonpath={.metadata.labels.x}", "y", "", 0);
}

/// cmd/set/set_env.go: `--from=configmap/NAME` (keyToEnvName, --prefix, --keys) and `--list`
/// (envutil.GetEnvVarRefString; `--resolve`). Docs: tasks/inject-data-application
/// (`kubectl set env --from=...`), reference/kubectl/generated/kubectl_set/kubectl_set_env.
#[test]
fn set_env_from_and_list() {
    let mut f = scenario::cluster();
    f.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\ndata: {log.level: debug, mode: fast}\n");
    check(&mut f, "apply -f cm.yaml", "configmap/app-config created\n", "", 0);
    check(&mut f, "set env deployment/web STATIC=1", "deployment.apps/web env updated\n", "", 0);
    check(&mut f, "set env deployment/web --from=configmap/app-config --prefix=APP_", "deployment.apps/web env updated\n", "", 0);
    check(
        &mut f,
        "set env deployment/web --list",
        "# Deployment web, container nginx\nSTATIC=1\n# APP_LOG_LEVEL from configmap app-config, key log.level\n# APP_MODE from configmap app-config, key mode\n",
        "",
        0,
    );
    check(&mut f, "set env deployment/web --list --resolve", "# Deployment web, container nginx\nSTATIC=1\nAPP_LOG_LEVEL=debug\nAPP_MODE=fast\n", "", 0);
    check(&mut f, "set env deployment/web --from=pod/x", "", "error: unsupported resource specified in --from\n", 1);
}

/// cmd/set/set_serviceaccount.go, set_selector.go and set_subject.go (docs:
/// reference/kubectl/generated/kubectl_set/).
#[test]
fn set_serviceaccount_selector_and_subject() {
    let mut f = scenario::cluster();
    check(&mut f, "set serviceaccount deployment web robot", "deployment.apps/web serviceaccount updated\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["spec"]["template"]["spec"]["serviceAccountName"], "robot");
    check(&mut f, "set sa deployment web robot", "", "", 0);
    check(&mut f, "set selector service web app=web,tier=fe", "service/web selector updated\n", "", 0);
    assert_eq!(json(&f, "services", "web")["spec"]["selector"], serde_json::json!({"app": "web", "tier": "fe"}));
    f.file("rb.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: admin}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}\n");
    check(&mut f, "apply -f rb.yaml", "rolebinding.rbac.authorization.k8s.io/admin created\n", "", 0);
    check(
        &mut f,
        "set subject rolebinding admin --user=user1 --serviceaccount=default:robot",
        "rolebinding.rbac.authorization.k8s.io/admin subjects updated\n",
        "",
        0,
    );
    let subjects = &json(&f, "rolebindings", "admin")["subjects"];
    assert_eq!(subjects[0]["name"], "user1");
    assert_eq!(subjects[1], serde_json::json!({"kind": "ServiceAccount", "name": "robot", "namespace": "default"}));
    check(
        &mut f,
        "set subject rolebinding admin",
        "",
        "error: you must specify at least one value of user, group or serviceaccount\nSee 'kubectl set subject -h' for help and examples\n",
        1,
    );
}

/// cmd/certificates/certificates.go (docs: reference/access-authn-authz/certificate-signing-requests,
/// `kubectl certificate approve myuser`).
#[test]
fn certificate_approve_and_deny() {
    let mut f = scenario::cluster();
    f.file("csr.yaml", "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: myuser}\nspec:\n  request: LS0tLS1CRUdJTg==\n  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n");
    check(&mut f, "apply -f csr.yaml", "certificatesigningrequest.certificates.k8s.io/myuser created\n", "", 0);
    check(&mut f, "certificate approve myuser", "certificatesigningrequest.certificates.k8s.io/myuser approved\n", "", 0);
    let csr = f.get("certificatesigningrequests", "", "myuser").unwrap().to_json();
    assert_eq!(csr["status"]["conditions"][0]["reason"], "KubectlApprove");
    assert_eq!(csr["status"]["conditions"][0]["message"], "This CSR was approved by kubectl certificate approve.");
    check(&mut f, "certificate approve -f csr.yaml", "certificatesigningrequest.certificates.k8s.io/myuser approved\n", "", 0);
    check(&mut f, "certificate deny myuser", "", "error: certificate signing request \"myuser\" is already Approved\n", 1);
    check(&mut f, "certificate approve nope", "", "Error from server (NotFound): certificatesigningrequests.certificates.k8s.io \"nope\" not found\n", 1);
}

/// label.go validateNoOverwrites / parseLabels and annotate.go validateNoAnnotationOverwrites /
/// validateAnnotations, as kubectl v1.32 prints them for the same file.
#[test]
fn label_and_annotate_overwrite_rules() {
    let mut f = scenario::cluster();
    f.file("l.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {app: web}\n  annotations: {a: x}\n");
    check(&mut f, "label --local -f l.yaml app=web", "configmap/c not labeled\n", "", 0);
    check(&mut f, "label --local -f l.yaml app=db", "", "error: 'app' already has a value (web), and --overwrite is false\n", 1);
    check(&mut f, "label --local -f l.yaml app=y app-", "", "error: can not both modify and remove a label in the same command\n", 1);
    check(&mut f, "annotate --local -f l.yaml a=x", "configmap/c annotated\n", "", 0);
    check(&mut f, "annotate --local -f l.yaml nope-", "configmap/c annotated\n", "", 0);
    check(
        &mut f,
        "annotate --local -f l.yaml a=y",
        "",
        "error: --overwrite is false but found the following declared annotation(s): 'a' already has a value (x)\n",
        1,
    );
    check(&mut f, "annotate --local -f l.yaml a=y b=1 a-", "", "error: can not both modify and remove the following annotation(s) in the same command: a\n", 1);
}

/// cmd/set with --local and --dry-run=client (CalculatePatches; the printed object is the typed
/// object kubectl encodes), compared with kubectl v1.32 on the same file.
#[test]
fn set_local_and_dry_run() {
    let mut f = scenario::cluster();
    f.file("probe.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: nginx, image: nginx}]\n");
    check(&mut f, "set image --local -f probe.yaml nginx=nginx:1.9 -o yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  creationTimestamp: null\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  strategy: {}\n  template:\n    metadata:\n      creationTimestamp: null\n      labels:\n        app: web\n    spec:\n      containers:\n      - image: nginx:1.9\n        name: nginx\n        resources: {}\nstatus: {}\n", "", 0);
    check(&mut f, "set image --local -f probe.yaml nginx=nginx:1.9", "deployment.apps/web image updated\n", "", 0);
    check(&mut f, "set image --local -f probe.yaml nginx=nginx", "", "", 0);
    check(
        &mut f,
        "set image --local deployment/web nginx=x",
        "",
        "error: can only use local files by -f pod.yaml or --filename=pod.json when --local=true is set\n",
        1,
    );
    let before = json(&f, "deployments", "web");
    check(&mut f, "set image deployment/web nginx=nginx:1.29 --dry-run=client", "deployment.apps/web image updated (dry run)\n", "", 0);
    check(&mut f, "set env deployment/web A=1 --dry-run=server", "deployment.apps/web env updated (server dry run)\n", "", 0);
    assert_eq!(json(&f, "deployments", "web"), before, "a dry run wrote");
}

/// cmd/patch/patch.go --local and strategicpatch's list ordering (mergeSortedSlice), compared
/// with kubectl v1.32 `patch --local -f` on the same file.
#[test]
fn patch_local_matches_kubectl() {
    let mut f = Fixture::new();
    f.file("pd.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {a: \"1\"}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: {maxSurge: 1}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx\n        ports: [{containerPort: 80}]\n        env: [{name: A, value: \"1\"}, {name: B, value: \"2\"}]\n      - name: side\n        image: busybox\n      tolerations: [{key: k, operator: Exists}]\n");
    check(
        &mut f,
        r#"patch --local -f pd.yaml -o yaml -p '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"C","value":"3"}]},{"name":"new","image":"redis"}]}}}}'"#,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels:\n    a: \"1\"\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  strategy:\n    rollingUpdate:\n      maxSurge: 1\n    type: RollingUpdate\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - env:\n        - name: C\n          value: \"3\"\n        - name: A\n          value: \"1\"\n        - name: B\n          value: \"2\"\n        image: nginx\n        name: nginx\n        ports:\n        - containerPort: 80\n      - image: redis\n        name: new\n      - image: busybox\n        name: side\n      tolerations:\n      - key: k\n        operator: Exists\n",
        "",
        0,
    );
    check(&mut f, r#"patch --local -f pd.yaml -p '{"spec":{"replicas":3}}'"#, "deployment.apps/web patched\n", "", 0);
    assert!(f.get("deployments", "default", "web").is_none(), "--local wrote to the server");
}

/// cmd/apply/apply_view_last_applied.go (docs: tasks/manage-kubernetes-objects/declarative-config,
/// `kubectl apply view-last-applied`) and custom-columns with --no-headers.
#[test]
fn view_last_applied_and_custom_columns_without_headers() {
    let mut f = Fixture::new();
    f.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n");
    check(&mut f, "apply -f cm.yaml", "configmap/c created\n", "", 0);
    check(
        &mut f,
        "apply view-last-applied configmap/c",
        "apiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\nmetadata:\n  annotations: {}\n  name: c\n  namespace: default\n",
        "",
        0,
    );
    check(
        &mut f,
        "apply view-last-applied -f cm.yaml -o json",
        "{\n  \"apiVersion\": \"v1\",\n  \"data\": {\n    \"k\": \"v\"\n  },\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\n    \"annotations\": {},\n    \"name\": \"c\",\n    \"namespace\": \"default\"\n  }\n}\n",
        "",
        0,
    );
    check(&mut f, "create configmap d", "configmap/d created\n", "", 0);
    check(&mut f, "apply view-last-applied configmap/d", "", "error: no last-applied-configuration annotation found on resource: d\n", 1);
    check(&mut f, "get cm c d -o custom-columns=NAME:.metadata.name --no-headers", "c\nd\n", "", 0);
    // apply_set_last_applied.go.
    f.file("d.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: {x: y}\n");
    check(
        &mut f,
        "apply set-last-applied -f d.yaml",
        "",
        "error: no last-applied-configuration annotation found on resource: d, to create the annotation, run the command with --create-annotation\n",
        1,
    );
    check(&mut f, "apply set-last-applied -f d.yaml --create-annotation", "configmap/d configured\n", "", 0);
    check(&mut f, "apply set-last-applied -f d.yaml", "set-last-applied d: no changes required.\n", "", 0);
    check(&mut f, "apply view-last-applied cm/d -o json", "{\n  \"apiVersion\": \"v1\",\n  \"data\": {\n    \"x\": \"y\"\n  },\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\n    \"annotations\": {},\n    \"name\": \"d\",\n    \"namespace\": \"default\"\n  }\n}\n", "", 0);
}
