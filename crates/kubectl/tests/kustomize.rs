//! `kubectl kustomize` / `apply -k` (sigs.k8s.io/kustomize/api krusty as kubectl embeds it) and
//! the `create configmap|secret` file sources (cmd/create/create_configmap.go,
//! create_secret.go, pkg/util/hash), compared with kubectl v1.32 run on the same files; the
//! docs page tasks/configure-pod-container/configure-pod-configmap drives the `-k .` and
//! `--from-file=DIR/` cases.

mod common;

use common::Fixture;

fn check(f: &mut Fixture, cmd: &str, stdout: &str, stderr: &str, code: i32) {
    let o = f.kubectl(cmd);
    assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.exit_code), (stdout, stderr, code), "`kubectl {cmd}`");
}

const DEPLOY: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.14.2
        envFrom:
        - configMapRef:
            name: game
        env:
        - name: P
          valueFrom:
            secretKeyRef:
              name: creds
              key: password
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
";

const KUSTOMIZATION: &str = "namePrefix: dev-
namespace: staging
commonLabels:
  env: dev
images:
- name: nginx
  newTag: \"1.16.1\"
resources:
- deploy.yaml
configMapGenerator:
- name: game
  files:
  - game.properties
  literals:
  - mode=\"fast\"
  envs:
  - app.env
secretGenerator:
- name: creds
  literals:
  - password=s3cr3t
generatorOptions:
  labels:
    gen: \"yes\"
";

/// `kubectl kustomize .` of kubectl v1.32 on these files, byte for byte.
const BUILT: &str = "apiVersion: v1
data:
  A: \"1\"
  B: two
  game.properties: |-
    enemies=aliens
    lives=3
  mode: fast
kind: ConfigMap
metadata:
  labels:
    env: dev
    gen: \"yes\"
  name: dev-game-ccg542bt69
  namespace: staging
---
apiVersion: v1
data:
  password: czNjcjN0
kind: Secret
metadata:
  labels:
    env: dev
    gen: \"yes\"
  name: dev-creds-25k92892fb
  namespace: staging
type: Opaque
---
apiVersion: v1
kind: Service
metadata:
  labels:
    env: dev
  name: dev-web
  namespace: staging
spec:
  ports:
  - port: 80
  selector:
    app: web
    env: dev
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    env: dev
  name: dev-web
  namespace: staging
spec:
  selector:
    matchLabels:
      app: web
      env: dev
  template:
    metadata:
      labels:
        app: web
        env: dev
    spec:
      containers:
      - env:
        - name: P
          valueFrom:
            secretKeyRef:
              key: password
              name: dev-creds-25k92892fb
        envFrom:
        - configMapRef:
            name: dev-game-ccg542bt69
        image: nginx:1.16.1
        name: web
";

const WARNING: &str =
    "# Warning: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n";

fn files(f: &mut Fixture, dir: &str) {
    f.file(&format!("{dir}kustomization.yaml"), KUSTOMIZATION);
    f.file(&format!("{dir}deploy.yaml"), DEPLOY);
    f.file(&format!("{dir}game.properties"), "enemies=aliens\nlives=3");
    f.file(&format!("{dir}app.env"), "A=1\n# c\nB=two\n");
}

#[test]
fn kustomize_builds_what_kubectl_builds() {
    let mut f = Fixture::new();
    files(&mut f, "app/");
    check(&mut f, "kustomize app", BUILT, WARNING, 0);
    check(&mut f, "kustomize app/", BUILT, WARNING, 0);
    check(&mut f, "create namespace staging", "namespace/staging created\n", "", 0);
    check(
        &mut f,
        "apply -k app",
        "configmap/dev-game-ccg542bt69 created\nsecret/dev-creds-25k92892fb created\nservice/dev-web created\ndeployment.apps/dev-web created\n",
        WARNING,
        0,
    );
    check(&mut f, "get -k app -o name", "configmap/dev-game-ccg542bt69\nsecret/dev-creds-25k92892fb\nservice/dev-web\ndeployment.apps/dev-web\n", WARNING, 0);
    let o = f.kubectl("delete -k app");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert!(o.stdout.starts_with("configmap \"dev-game-ccg542bt69\" deleted"), "{}", o.stdout);
    // The docs page writes ./kustomization.yaml and runs `kubectl apply -k .`.
    let mut f = Fixture::new();
    f.file("./kustomization.yaml", "---\nconfigMapGenerator:\n- name: special-config-2\n  literals:\n  - special.how=very\n  - special.type=charm\n");
    check(&mut f, "apply -k .", "configmap/special-config-2-2b86tk8fhm created\n", "", 0);
    check(
        &mut f,
        "apply -k nowhere",
        "",
        "error: unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory 'nowhere'\n",
        1,
    );
    check(&mut f, "apply -k . -f x.yaml", "", "error: only one of -f or -k can be specified\n", 1);
    f.file("bad/kustomization.yaml", "resources:\n- nope.yaml\n");
    check(
        &mut f,
        "kustomize bad",
        "",
        "error: accumulating resources: accumulation err='accumulating resources from 'nope.yaml': evalsymlink failure on 'bad/nope.yaml' : lstat bad/nope.yaml: no such file or directory': must build at directory: not a valid directory: evalsymlink failure on 'bad/nope.yaml' : lstat bad/nope.yaml: no such file or directory\n",
        1,
    );
}

#[test]
fn configmap_file_sources_follow_create_configmap_go() {
    let mut f = Fixture::new();
    f.file("d/a.txt", "x");
    f.file("d/b.txt", "y\n");
    f.file("d/sub/c.txt", "nested files are not read");
    f.file("game.properties", "enemies=aliens\nlives=3");
    check(
        &mut f,
        "create configmap d --from-file=d/ --dry-run=client -o yaml",
        "apiVersion: v1\ndata:\n  a.txt: x\n  b.txt: |\n    y\nkind: ConfigMap\nmetadata:\n  creationTimestamp: null\n  name: d\n",
        "",
        0,
    );
    check(&mut f, "create configmap d --from-file=k=d/", "", "error: cannot give a key name for a directory path\n", 1);
    check(&mut f, "create configmap d --from-file=/tmp/nonexist", "", "error: error reading /tmp/nonexist: no such file or directory\n", 1);
    check(
        &mut f,
        "create configmap d --from-literal=a=1 --from-literal=a=2",
        "",
        "error: cannot add key \"a\", another key by that name already exists in Data for ConfigMap \"d\"\n",
        1,
    );
    check(
        &mut f,
        "create configmap d --from-literal=a\\ b=1",
        "",
        "error: \"a b\" is not a valid key name for a ConfigMap: a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')\n",
        1,
    );
    // pkg/util/hash, as kubectl v1.32 names them.
    check(
        &mut f,
        "create configmap game --from-file=game.properties --from-literal=mode=fast --append-hash --dry-run=client -o name",
        "configmap/game-dg64b92cfb\n",
        "",
        0,
    );
    check(&mut f, "create secret generic creds --from-literal=password=s3cr3t --append-hash --dry-run=client -o name", "secret/creds-5h2t9tfkbg\n", "", 0);
    // create_configmap.go / create_secret.go wrap the server's error.
    check(&mut f, "create configmap c --from-literal=a=1", "configmap/c created\n", "", 0);
    check(&mut f, "create configmap c --from-literal=a=1", "", "error: failed to create configmap: configmaps \"c\" already exists\n", 1);
    check(&mut f, "create secret generic s --from-literal=a=1", "secret/s created\n", "", 0);
    check(&mut f, "create secret generic s --from-literal=a=1", "", "error: failed to create secret secrets \"s\" already exists\n", 1);
}
