//! Mutating commands against the scenario cluster, each checked for kubectl's exact output and
//! for what it wrote. Mirrors the behaviour of staging/src/k8s.io/kubectl/pkg/cmd/{delete,scale,
//! set,label,annotate,patch,taint,drain,rollout,run,create,expose,logs,exec,top}.

mod common;
mod scenario;

use common::Fixture;
use kubesim_api::object::Object;
use kubesim_kubectl::ClusterView;

fn check(f: &mut Fixture, cmd: &str, stdout: &str, stderr: &str, code: i32) {
    let o = f.kubectl(cmd);
    assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.exit_code), (stdout, stderr, code), "`kubectl {cmd}`");
}

fn json(f: &Fixture, kind: &str, name: &str) -> serde_json::Value {
    f.get(kind, if kind == "nodes" { "" } else { "default" }, name).unwrap().to_json()
}

#[test]
fn delete_honours_grace_force_cascade_and_selectors() {
    let mut f = scenario::cluster();
    check(&mut f, "delete pod web-7d4b9c7f5-abcde", "pod \"web-7d4b9c7f5-abcde\" deleted\n", "", 0);
    // A bound pod with a grace period is Terminating until the kubelet finishes it.
    let pod = json(&f, "pods", "web-7d4b9c7f5-abcde");
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30);
    assert_eq!(pod["metadata"]["deletionTimestamp"], "2025-01-01T00:05:30Z");
    let get = f.kubectl("get pod web-7d4b9c7f5-abcde --no-headers");
    assert!(get.stdout.contains("Terminating"), "{}", get.stdout);
    check(
        &mut f,
        "delete pod web-7d4b9c7f5-abcde --force --grace-period=0",
        "pod \"web-7d4b9c7f5-abcde\" force deleted\n",
        "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n",
        0,
    );
    assert!(f.get("pods", "default", "web-7d4b9c7f5-abcde").is_none());
    // --grace-period=0 without --force becomes 1 second.
    check(&mut f, "delete pods -l app=web --grace-period=0", "pod \"web-7d4b9c7f5-fghij\" deleted\n", "", 0);
    assert_eq!(json(&f, "pods", "web-7d4b9c7f5-fghij")["metadata"]["deletionGracePeriodSeconds"], 1);
    // Orphan cascade keeps the owner until the garbage collector removes the finalizer.
    check(&mut f, "delete deployment web --cascade=orphan", "deployment.apps \"web\" deleted\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["metadata"]["finalizers"], serde_json::json!(["orphan"]));
    check(&mut f, "delete rs web-7d4b9c7f5 --cascade=foreground", "replicaset.apps \"web-7d4b9c7f5\" deleted\n", "", 0);
    assert_eq!(json(&f, "replicasets", "web-7d4b9c7f5")["metadata"]["finalizers"], serde_json::json!(["foregroundDeletion"]));
    check(&mut f, "delete svc --all", "service \"web\" deleted\n", "", 0);
    check(&mut f, "delete svc --all", "No resources found\n", "", 0);
    check(&mut f, "delete pod nope", "", "Error from server (NotFound): pods \"nope\" not found\n", 1);
    check(&mut f, "delete pod nope --ignore-not-found", "", "", 0);
    check(&mut f, "delete pods", "", "error: resource(s) were provided, but no name was specified\n", 1);
    check(
        &mut f,
        "delete deploy x --cascade=sometimes",
        "",
        "error: invalid cascade value (sometimes). Must be \"background\", \"foreground\", or \"orphan\".\n",
        1,
    );
    f.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n");
    check(&mut f, "apply -f cm.yaml", "configmap/a created\nconfigmap/b created\n", "", 0);
    check(&mut f, "delete -f cm.yaml", "configmap \"a\" deleted\nconfigmap \"b\" deleted\n", "", 0);
    check(&mut f, "delete -f cm.yaml", "", "Error from server (NotFound): error when deleting \"cm.yaml\": configmaps \"a\" not found\nError from server (NotFound): error when deleting \"cm.yaml\": configmaps \"b\" not found\n", 1);
}

#[test]
fn scale_set_image_label_annotate() {
    let mut f = scenario::cluster();
    check(&mut f, "scale deployment web --replicas=5", "deployment.apps/web scaled\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["spec"]["replicas"], 5);
    assert_eq!(json(&f, "deployments", "web")["metadata"]["generation"], 3, "spec change bumps generation");
    check(&mut f, "scale deploy/web --replicas=1 --current-replicas=7", "", "error: Expected replicas to be 7, was 5\n", 1);
    check(&mut f, "scale deploy/web --replicas=-1", "", "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0\n", 1);
    check(&mut f, "scale svc/web --replicas=2", "", "error: cannot scale service: no scale subresource\n", 1);
    check(&mut f, "set image deployment/web nginx=nginx:1.28", "deployment.apps/web image updated\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.28");
    check(&mut f, "set image deployment/web nginx=nginx:1.28", "", "", 0);
    check(&mut f, "set image deploy/web nope=x", "", "error: unable to find container named \"nope\"\n", 1);
    check(&mut f, "label pods -l app=web tier=front", "pod/web-7d4b9c7f5-abcde labeled\npod/web-7d4b9c7f5-fghij labeled\n", "", 0);
    check(&mut f, "label pod web-7d4b9c7f5-abcde tier=back", "", "error: 'tier' already has a value (front), and --overwrite is false\n", 1);
    check(&mut f, "label pod web-7d4b9c7f5-abcde tier=back --overwrite", "pod/web-7d4b9c7f5-abcde labeled\n", "", 0);
    check(&mut f, "label pod web-7d4b9c7f5-abcde tier-", "pod/web-7d4b9c7f5-abcde unlabeled\n", "", 0);
    check(&mut f, "label pod web-7d4b9c7f5-abcde app=web", "pod/web-7d4b9c7f5-abcde not labeled\n", "", 0);
    check(&mut f, "label pod web-7d4b9c7f5-abcde 'bad key=x'", "", "error: invalid label spec: bad key=x: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n", 1);
    check(&mut f, "annotate deploy web kubernetes.io/change-cause='image update'", "deployment.apps/web annotated\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["metadata"]["annotations"]["kubernetes.io/change-cause"], "image update");
    check(&mut f, "annotate nodes --all team=infra", "node/node-1 annotated\n", "", 0);
}

#[test]
fn patch_types() {
    let mut f = scenario::cluster();
    check(&mut f, "patch deploy web -p '{\"spec\":{\"replicas\":3}}'", "deployment.apps/web patched\n", "", 0);
    check(&mut f, "patch deploy web --type=json -p '[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":4}]'", "deployment.apps/web patched\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["spec"]["replicas"], 4);
    check(&mut f, "patch deploy web --type merge -p '{\"spec\":{\"replicas\":4}}'", "deployment.apps/web patched (no change)\n", "", 0);
    // Strategic merge patches merge containers by name; merge patches replace the list.
    check(
        &mut f,
        "patch deploy web -p '{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"sidecar\",\"image\":\"busybox\"}]}}}}'",
        "deployment.apps/web patched\n",
        "",
        0,
    );
    let names: Vec<String> = json(&f, "deployments", "web")["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    // strategicpatch mergeSortedSlice puts items new to the list first (kubectl v1.32 does).
    assert_eq!(names, ["sidecar", "nginx"]);
    check(
        &mut f,
        "patch deploy web --type merge -p '{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"only\",\"image\":\"busybox\"}]}}}}'",
        "deployment.apps/web patched\n",
        "",
        0,
    );
    assert_eq!(json(&f, "deployments", "web")["spec"]["template"]["spec"]["containers"].as_array().unwrap().len(), 1);
    check(
        &mut f,
        "patch deploy web --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/nope\"}]'",
        "",
        "error: remove operation does not apply: doc is missing path: \"/spec/nope\"\n",
        1,
    );
    check(
        &mut f,
        "patch deploy web -p '{\"spec\":{\"replicas\":-3}}'",
        "",
        "The Deployment \"web\" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0\n",
        1,
    );
    check(&mut f, "patch deploy web --type xml -p '{}'", "", "error: --type must be one of [json merge strategic], not \"xml\"\n", 1);
    check(&mut f, "patch deploy nope -p '{}'", "", "Error from server (NotFound): deployments.apps \"nope\" not found\n", 1);
}

/// The disruption controller's view of the budget (status.disruptionsAllowed and friends).
fn set_pdb_status(f: &mut Fixture, allowed: i64, healthy: i64, desired: i64) {
    let pdb = f.get("pdb", "default", "web-pdb").unwrap();
    let mut json = pdb.to_json();
    json["status"] =
        serde_json::json!({"disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": 2, "observedGeneration": 1});
    let info = pdb.info().unwrap();
    scenario::set_status(f, Object::from_json(info, json).unwrap());
}

#[test]
fn taint_cordon_and_drain() {
    let mut f = scenario::cluster();
    check(&mut f, "taint nodes node-1 dedicated=gpu:NoSchedule", "node/node-1 tainted\n", "", 0);
    assert_eq!(json(&f, "nodes", "node-1")["spec"]["taints"], serde_json::json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]));
    check(
        &mut f,
        "taint nodes node-1 dedicated=gpu:NoSchedule",
        "",
        "error: node node-1 already has dedicated taint(s) with same effect(s) and --overwrite is false\n",
        1,
    );
    check(&mut f, "taint node node-1 dedicated:NoSchedule-", "node/node-1 untainted\n", "", 0);
    check(&mut f, "taint node node-1 dedicated-", "", "error: taint \"dedicated\" not found\n", 1);
    check(&mut f, "taint node node-1 x=y:Sometimes", "", "error: invalid taint effect: Sometimes, unsupported taint effect\n", 1);
    check(&mut f, "cordon node-1", "node/node-1 cordoned\n", "", 0);
    check(&mut f, "cordon node-1", "node/node-1 already cordoned\n", "", 0);
    check(&mut f, "get nodes --no-headers", "node-1   Ready,SchedulingDisabled   worker   5m    v1.34.0\n", "", 0);
    check(&mut f, "uncordon node-1", "node/node-1 uncordoned\n", "", 0);
    check(&mut f, "cordon nope", "", "Error from server (NotFound): nodes \"nope\" not found\n", 1);

    // A PDB that allows no disruption blocks the eviction (the Eviction API's 429).
    f.file(
        "pdb.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web-pdb}\nspec:\n  minAvailable: 2\n  selector: {matchLabels: {app: web}}\n",
    );
    check(&mut f, "apply -f pdb.yaml", "poddisruptionbudget.policy/web-pdb created\n", "", 0);
    set_pdb_status(&mut f, 0, 2, 2);
    let o = f.kubectl("drain node-1 --ignore-daemonsets");
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.stdout, "node/node-1 cordoned\nevicting pod default/web-7d4b9c7f5-abcde\nevicting pod default/web-7d4b9c7f5-fghij\n");
    assert!(o.stderr.starts_with("error when evicting pods/\"web-7d4b9c7f5-abcde\" -n \"default\" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."), "{}", o.stderr);
    assert!(f.get("pods", "default", "web-7d4b9c7f5-abcde").unwrap().metadata().deletion_timestamp.is_none());
    // minAvailable 1: the first eviction succeeds, the second would break the budget.
    f.file(
        "pdb.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web-pdb}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: web}}\n",
    );
    check(&mut f, "apply -f pdb.yaml", "poddisruptionbudget.policy/web-pdb configured\n", "", 0);
    set_pdb_status(&mut f, 1, 2, 1);
    let o = f.kubectl("drain node-1");
    assert_eq!(o.exit_code, 1);
    assert!(f.get("pods", "default", "web-7d4b9c7f5-abcde").unwrap().metadata().deletion_timestamp.is_some());
    assert!(f.get("pods", "default", "web-7d4b9c7f5-fghij").unwrap().metadata().deletion_timestamp.is_none());
    // Without a budget every pod is evicted.
    check(&mut f, "delete pdb web-pdb", "poddisruptionbudget.policy \"web-pdb\" deleted\n", "", 0);
    check(
        &mut f,
        "drain node-1 --grace-period=10",
        "node/node-1 already cordoned\nevicting pod default/web-7d4b9c7f5-abcde\nevicting pod default/web-7d4b9c7f5-fghij\npod/web-7d4b9c7f5-abcde evicted\npod/web-7d4b9c7f5-fghij evicted\nnode/node-1 drained\n",
        "",
        0,
    );
    // Unmanaged pods need --force.
    check(&mut f, "uncordon node-1", "node/node-1 uncordoned\n", "", 0);
    scenario::create(&mut f, "apiVersion: v1\nkind: Pod\nmetadata: {name: lone}\nspec: {nodeName: node-1, containers: [{name: c, image: nginx}]}\n");
    let o = f.kubectl("drain node-1");
    assert_eq!(o.exit_code, 1);
    assert!(o.stderr.contains("cannot delete Pods that declare no controller (use --force to override): default/lone"), "{}", o.stderr);
    let o = f.kubectl("drain node-1 --force");
    assert_eq!(o.exit_code, 0, "{}", o.stderr);
    assert_eq!(o.stderr, "Warning: deleting Pods that declare no controller: default/lone\n");
}

#[test]
fn rollout_commands() {
    let mut f = scenario::cluster();
    check(&mut f, "rollout status deploy/web", "deployment \"web\" successfully rolled out\n", "", 0);
    check(&mut f, "rollout history deployment/web", "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n\n", "", 0);
    check(&mut f, "rollout undo deploy/web", "", "error: no rollout history found for deployment \"web\"\n", 1);
    // restart stamps the template with virtual time.
    check(&mut f, "rollout restart deployment web", "deployment.apps/web restarted\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"], "2025-01-01T00:05:00Z");
    check(&mut f, "rollout status deploy/web", "Waiting for deployment spec update to be observed...\n", "", 0);
    check(&mut f, "rollout pause deploy/web", "deployment.apps/web paused\n", "", 0);
    check(&mut f, "rollout pause deploy/web", "", "error: deployment.apps/web is already paused\n", 1);
    check(&mut f, "rollout restart deploy/web", "", "error: deployments.apps \"web\" can't restart paused deployment (run rollout resume first)\n", 1);
    check(&mut f, "rollout resume deploy/web", "deployment.apps/web resumed\n", "", 0);
    assert!(json(&f, "deployments", "web")["spec"].get("paused").is_none());
    // undo copies revision 1's template (minus pod-template-hash) back into the Deployment.
    check(&mut f, "set image deploy/web nginx=nginx:1.29", "deployment.apps/web image updated\n", "", 0);
    check(&mut f, "rollout undo deploy/web --to-revision=1", "deployment.apps/web rolled back\n", "", 0);
    let template = &json(&f, "deployments", "web")["spec"]["template"];
    assert_eq!(template["spec"]["containers"][0]["image"], "nginx:1.27");
    assert_eq!(template["metadata"]["labels"], serde_json::json!({"app": "web"}));
    check(&mut f, "rollout undo deploy/web --to-revision=1", "deployment.apps/web skipped rollback (current template already matches revision 1)\n", "", 0);
    check(&mut f, "rollout undo deploy/web --to-revision=9", "", "error: unable to find specified revision 9 in history\n", 1);
    let history = f.kubectl("rollout history deploy/web --revision=1");
    assert!(
        history
            .stdout
            .starts_with("deployment.apps/web with revision #1\nPod Template:\n  Labels:  app=web\n           pod-template-hash=7d4b9c7f5\n  Containers:\n   nginx:\n    Image:      nginx:1.27\n"),
        "{}",
        history.stdout
    );
    check(&mut f, "rollout status svc/web", "", "error: no status for service/web: not a Deployment, DaemonSet or StatefulSet\n", 1);
}

#[test]
fn create_run_and_expose_build_kubectls_objects() {
    let mut f = scenario::cluster();
    check(&mut f, "run nginx --image=nginx:1.27", "pod/nginx created\n", "", 0);
    let pod = json(&f, "pods", "nginx");
    assert_eq!(pod["metadata"]["labels"], serde_json::json!({"run": "nginx"}));
    assert_eq!(pod["spec"]["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["spec"]["restartPolicy"], "Always");
    assert_eq!(pod["spec"]["containers"][0]["name"], "nginx");
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx:1.27");
    check(&mut f, "run busybox --image=busybox --restart=Never -- sleep 3600", "pod/busybox created\n", "", 0);
    let pod = json(&f, "pods", "busybox");
    assert_eq!(pod["spec"]["containers"][0]["args"], serde_json::json!(["sleep", "3600"]));
    assert_eq!(pod["spec"]["restartPolicy"], "Never");
    check(&mut f, "run x --image=busybox --command -- sh -c true", "pod/x created\n", "", 0);
    assert_eq!(json(&f, "pods", "x")["spec"]["containers"][0]["command"], serde_json::json!(["sh", "-c", "true"]));
    check(&mut f, "run nginx --image=nginx", "", "Error from server (AlreadyExists): pods \"nginx\" already exists\n", 1);
    check(&mut f, "run y", "", "error: required flag(s) \"image\" not set\n", 1);
    check(&mut f, "run Bad --image=x", "", "The Pod \"Bad\" is invalid: \n* metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n* spec.containers[0].name: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n", 1);
    check(&mut f, "create deployment api --image=nginx --image=redis:7 --replicas=3", "deployment.apps/api created\n", "", 0);
    let d = json(&f, "deployments", "api");
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(d["spec"]["selector"], serde_json::json!({"matchLabels": {"app": "api"}}));
    assert_eq!(d["spec"]["template"]["spec"]["containers"][1]["name"], "redis");
    check(&mut f, "create ns team-a", "namespace/team-a created\n", "", 0);
    check(&mut f, "create namespace team-a", "", "Error from server (AlreadyExists): namespaces \"team-a\" already exists\n", 1);
    check(&mut f, "create deployment d2", "", "error: required flag(s) \"image\" not set\n", 1);
    check(&mut f, "expose deployment api --port=80 --target-port=8080", "service/api exposed\n", "", 0);
    let svc = json(&f, "services", "api");
    assert_eq!(svc["spec"]["selector"], serde_json::json!({"app": "api"}));
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
    f.file("ns.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team-a}\n");
    check(&mut f, "apply -f ns.yaml -n default", "", "error: the namespace from the provided object \"team-a\" does not match the namespace \"default\". You must pass '--namespace=team-a' to perform this operation.\n", 1);
    check(&mut f, "create -f ns.yaml", "configmap/c created\n", "", 0);
    check(&mut f, "create -f ns.yaml", "", "Error from server (AlreadyExists): error when creating \"ns.yaml\": configmaps \"c\" already exists\n", 1);
    let o = f.kubectl("apply -f ns.yaml --dry-run=client");
    assert_eq!((o.stdout.as_str(), o.exit_code), ("configmap/c configured (dry run)\n", 0));
    assert!(o.stderr.starts_with("Warning: resource configmaps/c is missing the kubectl.kubernetes.io/last-applied-configuration annotation"), "{}", o.stderr);
    assert!(f.get("configmaps", "team-a", "c").unwrap().metadata().annotations.is_none(), "dry run writes nothing");
    check(&mut f, "get cm -n team-a -o name", "configmap/c\n", "", 0);
}

/// A ClusterView with canned logs, exec results and usage.
struct FakeCluster;

impl ClusterView for FakeCluster {
    fn read_file(&self, path: &str) -> Result<String, String> {
        Err(format!("the path \"{path}\" does not exist"))
    }
    fn logs(&self, _ns: &str, pod: &str, container: Option<&str>, opts: &kubesim_kubectl::PodLogOptions) -> Result<String, String> {
        let previous = opts.previous;
        let text = format!("{pod}/{} previous={previous}\nline 2\nline 3\n", container.unwrap_or("-"));
        let lines: Vec<&str> = text.lines().collect();
        let start = opts.tail_lines.map_or(0, |n| lines.len().saturating_sub(n));
        Ok(lines[start..].iter().map(|l| format!("{l}\n")).collect())
    }
    fn exec(&mut self, _ns: &str, _pod: &str, _container: Option<&str>, command: &[String], _tty: bool) -> Result<(String, i32), String> {
        if command.first().map(String::as_str) == Some("false") {
            return Ok((String::new(), 1));
        }
        Ok((format!("{}\n", command.join(" ")), 0))
    }
    fn usage(&self, _ns: &str, pod: &str) -> Option<(i64, i64)> {
        match pod {
            "web-7d4b9c7f5-abcde" => Some((12, 20 * 1024 * 1024)),
            "web-7d4b9c7f5-fghij" => Some((30, 10 * 1024 * 1024)),
            _ => None,
        }
    }
}

fn run_with(f: &mut Fixture, line: &str) -> kubesim_kubectl::Output {
    let actor: std::sync::Arc<str> = std::sync::Arc::from("test");
    let mut req = kubesim_apiserver::Request { now: f.now, rng: &mut f.rng, actor: &actor };
    kubesim_kubectl::run_line(line, &mut f.api, &mut req, &mut FakeCluster)
}

#[test]
fn logs_exec_and_top_go_through_the_cluster_view() {
    let mut f = scenario::cluster();
    let o = run_with(&mut f, "logs web-7d4b9c7f5-abcde");
    assert_eq!(o.stdout, "web-7d4b9c7f5-abcde/nginx previous=false\nline 2\nline 3\n");
    let o = run_with(&mut f, "logs deploy/web -p --tail=1");
    assert_eq!(o.stdout, "line 3\n");
    assert_eq!(o.stderr, "Found 2 pods, using pod/web-7d4b9c7f5-abcde\n");
    let o = run_with(&mut f, "logs -l app=web --prefix --tail=1");
    assert_eq!(o.stdout, "[pod/web-7d4b9c7f5-abcde/nginx] line 3\n[pod/web-7d4b9c7f5-fghij/nginx] line 3\n");
    let o = run_with(&mut f, "logs web-7d4b9c7f5-abcde --all-containers");
    assert_eq!(o.stdout, "web-7d4b9c7f5-abcde/nginx previous=false\nline 2\nline 3\n");
    let o = run_with(&mut f, "logs web-7d4b9c7f5-abcde -c nope");
    assert_eq!((o.stderr.as_str(), o.exit_code), ("error: container nope is not valid for pod web-7d4b9c7f5-abcde\n", 1));
    let o = run_with(&mut f, "exec web-7d4b9c7f5-abcde -- ls -l /");
    assert_eq!((o.stdout.as_str(), o.exit_code), ("ls -l /\n", 0));
    let o = run_with(&mut f, "exec web-7d4b9c7f5-abcde -- false");
    assert_eq!((o.stderr.as_str(), o.exit_code), ("command terminated with exit code 1\n", 1));
    let o = run_with(&mut f, "exec nope -- ls");
    assert_eq!((o.stderr.as_str(), o.exit_code), ("Error from server (NotFound): pods \"nope\" not found\n", 1));
    let o = run_with(&mut f, "top pods");
    assert_eq!(o.stdout, "NAME                  CPU(cores)   MEMORY(bytes)   \nweb-7d4b9c7f5-abcde   12m          20Mi            \nweb-7d4b9c7f5-fghij   30m          10Mi            \n");
    let o = run_with(&mut f, "top pods --sort-by=cpu --no-headers");
    assert_eq!(o.stdout, "web-7d4b9c7f5-fghij   30m   10Mi   \nweb-7d4b9c7f5-abcde   12m   20Mi   \n");
    let o = run_with(&mut f, "top pods --sort-by=memory -o name");
    assert!(o.stdout.starts_with("NAME                  CPU(cores)   MEMORY(bytes)   \nweb-7d4b9c7f5-abcde"), "{}", o.stdout);
    let o = run_with(&mut f, "top nodes");
    assert_eq!(o.stdout, "NAME     CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)   \nnode-1   42m          1%       30Mi            0%          \n");
    // Without a cluster view kubectl reports what is unavailable.
    let o = f.kubectl("logs web-7d4b9c7f5-abcde");
    assert_eq!(o.exit_code, 1);
}

#[test]
fn discovery_and_misc_commands() {
    let mut f = scenario::cluster();
    let o = f.kubectl("api-resources");
    assert!(o.stdout.starts_with("NAME                                SHORTNAMES   APIVERSION                        NAMESPACED   KIND\nbindings                                         v1                                true         Binding\n"), "{}", o.stdout);
    assert!(o.stdout.contains("\ndeployments                         deploy       apps/v1                           true         Deployment\n"));
    assert_eq!(o.stdout.matches("horizontalpodautoscalers").count(), 1);
    let o = f.kubectl("api-resources --namespaced=false -o name");
    assert!(o.stdout.contains("\nnodes\n") && !o.stdout.contains("pods"), "{}", o.stdout);
    check(&mut f, "version --client", "Client Version: v1.34.0\nKustomize Version: v5.7.1\n", "", 0);
    check(&mut f, "cluster-info", "Kubernetes control plane is running at https://kubesim.local:6443\n\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.\n", "", 0);
    check(&mut f, "frobnicate", "", "error: unknown command \"frobnicate\" for \"kubectl\"\nRun 'kubectl --help' for usage.\n", 1);
    check(&mut f, "-n kube-system get pods", "", "No resources found in kube-system namespace.\n", 0);
    check(&mut f, "get pods -n", "", "error: flag needs an argument: 'n' in -n\nSee 'kubectl get --help' for usage.\n", 1);
    let o = kubesim_kubectl::run_line(
        "get pods 'unterminated",
        &mut f.api,
        &mut kubesim_apiserver::Request { now: 0, rng: &mut f.rng, actor: &std::sync::Arc::from("t") },
        &mut f.cluster,
    );
    assert_eq!((o.stderr.as_str(), o.exit_code), ("error: unterminated single quote\n", 1));
    // Every write is recorded under the kubectl actor.
    f.api.store_mut().drain_commits();
    f.kubectl("label ns default a=b");
    let commits = f.api.store_mut().drain_commits();
    assert_eq!(commits.len(), 1);
    assert_eq!(&*commits[0].actor, "kubectl");
    let _ = Object::Pod(Box::default());
}

#[test]
fn wait_events_auth_config() {
    let mut f = scenario::cluster();
    check(&mut f, "wait --for=condition=Ready pod/web-7d4b9c7f5-abcde", "pod/web-7d4b9c7f5-abcde condition met\n", "", 0);
    check(&mut f, "wait --for=condition=Available deployment web", "deployment.apps/web condition met\n", "", 0);
    check(&mut f, "wait --for condition=Ready pods -l app=web", "pod/web-7d4b9c7f5-abcde condition met\npod/web-7d4b9c7f5-fghij condition met\n", "", 0);
    check(&mut f, "wait --for=jsonpath='{.status.phase}'=Running pod/web-7d4b9c7f5-abcde", "pod/web-7d4b9c7f5-abcde condition met\n", "", 0);
    check(
        &mut f,
        "wait --for=delete pod/web-7d4b9c7f5-abcde --timeout=60s",
        "",
        "error: timed out waiting for the condition on pods/web-7d4b9c7f5-abcde (after 60s)\n",
        1,
    );
    check(&mut f, "wait --for=delete pod/gone", "pod/gone condition met\n", "", 0);
    check(&mut f, "wait --for=condition=Ready pod/gone", "", "Error from server (NotFound): pods \"gone\" not found\n", 1);
    check(
        &mut f,
        "events",
        "LAST SEEN               TYPE      REASON              OBJECT                    MESSAGE\n4m58s                   Normal    ScalingReplicaSet   Deployment/web            Scaled up replica set web-7d4b9c7f5 from 0 to 2\n4m56s                   Normal    Scheduled           Pod/web-7d4b9c7f5-abcde   Successfully assigned default/web-7d4b9c7f5-abcde to node-1\n4m55s                   Normal    Pulled              Pod/web-7d4b9c7f5-abcde   Container image \"nginx:1.27\" already present on machine\n4m20s (x3 over 4m50s)   Warning   Unhealthy           Pod/web-7d4b9c7f5-abcde   Readiness probe failed: connection refused\n",
        "",
        0,
    );
    let o = f.kubectl("events --types=Warning --for pod/web-7d4b9c7f5-abcde");
    assert_eq!(o.stdout.lines().count(), 2, "{}", o.stdout);
    check(&mut f, "events -n kube-system", "", "No events found in kube-system namespace.\n", 0);
    check(&mut f, "auth can-i create pods", "yes\n", "", 0);
    check(&mut f, "config current-context", "kubesim\n", "", 0);
}

#[test]
fn apply_results_locate_documents() {
    let mut f = Fixture::new();
    let text = "# header\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: B}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: [x\n";
    let r = f.apply("loc.yaml", text, "default");
    assert_eq!(r.len(), 3);
    assert_eq!((r[0].document, r[0].line, r[0].line()), (1, 2, "configmap/a created".to_string()));
    assert_eq!((r[1].document, r[1].line), (2, 6));
    assert_eq!(r[1].outcome.as_ref().unwrap_err(), "Error from server (Invalid): error when creating \"loc.yaml\": ConfigMap \"B\" is invalid: metadata.name: Invalid value: \"B\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    assert_eq!(r[2].document, 3);
    assert!(r[2].line >= 12, "{:?}", r[2]);
    assert!(r[2].outcome.as_ref().unwrap_err().starts_with("error: loc.yaml, document 3, line "));
}

#[test]
fn apply_after_create_warns_about_the_missing_annotation() {
    let mut f = Fixture::new();
    f.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n");
    check(&mut f, "create -f cm.yaml", "configmap/c created\n", "", 0);
    check(
        &mut f,
        "apply -f cm.yaml",
        "configmap/c configured\n",
        "Warning: resource configmaps/c is missing the kubectl.kubernetes.io/last-applied-configuration annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.\n",
        0,
    );
    check(&mut f, "apply -f cm.yaml", "configmap/c unchanged\n", "", 0);
    f.file("cm2.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: {a: '1'}\n");
    check(&mut f, "create -f cm2.yaml --save-config", "configmap/d created\n", "", 0);
    check(&mut f, "apply -f cm2.yaml", "configmap/d unchanged\n", "", 0);
    // Removing a key from the file removes it from the object; keys set by others stay.
    check(&mut f, "patch cm d --type merge -p '{\"data\":{\"other\":\"x\"}}'", "configmap/d patched\n", "", 0);
    f.file("cm2.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: {b: '2'}\n");
    check(&mut f, "apply -f cm2.yaml", "configmap/d configured\n", "", 0);
    assert_eq!(json(&f, "configmaps", "d")["data"], serde_json::json!({"b": "2", "other": "x"}));
}

#[test]
fn describe_service_lists_ready_endpoints_from_slices() {
    let mut f = scenario::cluster();
    scenario::create(&mut f, "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-abc, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nports: [{name: '', port: 80, protocol: TCP}]\nendpoints:\n- addresses: [10.244.0.5]\n  conditions: {ready: true}\n- addresses: [10.244.0.6]\n  conditions: {ready: true}\n- addresses: [10.244.0.7]\n  conditions: {ready: false}\n");
    let o = f.kubectl("describe svc web");
    assert!(o.stdout.contains("\nEndpoints:                10.244.0.5:80,10.244.0.6:80\n"), "{}", o.stdout);
    check(
        &mut f,
        "get endpointslices",
        "NAME      ADDRESSTYPE   PORTS   ENDPOINTS                          AGE\nweb-abc   IPv4          80      10.244.0.5,10.244.0.6,10.244.0.7   0s\n",
        "",
        0,
    );
}

#[test]
fn set_env_resources_autoscale_and_create_generators() {
    let mut f = scenario::cluster();
    check(&mut f, "set env deployment/web MODE=prod LEVEL=3", "deployment.apps/web env updated\n", "", 0);
    assert_eq!(
        json(&f, "deployments", "web")["spec"]["template"]["spec"]["containers"][0]["env"],
        serde_json::json!([{"name": "MODE", "value": "prod"}, {"name": "LEVEL", "value": "3"}])
    );
    check(&mut f, "set env deployment/web LEVEL-", "deployment.apps/web env updated\n", "", 0);
    assert_eq!(json(&f, "deployments", "web")["spec"]["template"]["spec"]["containers"][0]["env"], serde_json::json!([{"name": "MODE", "value": "prod"}]));
    check(
        &mut f,
        "set resources deployment web --limits=cpu=200m,memory=512Mi --requests=cpu=100m",
        "deployment.apps/web resource requirements updated\n",
        "",
        0,
    );
    assert_eq!(
        json(&f, "deployments", "web")["spec"]["template"]["spec"]["containers"][0]["resources"],
        serde_json::json!({"limits": {"cpu": "200m", "memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}})
    );
    check(
        &mut f,
        "set resources deployment web --limits=cpu=lots",
        "",
        "error: invalid limits cpu=lots: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n",
        1,
    );
    check(&mut f, "set resources deployment web --limits=cpu=50m", "", "The Deployment \"web\" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: \"100m\": must be less than or equal to cpu limit of 50m\n", 1);
    check(&mut f, "autoscale deployment web --cpu-percent=50 --min=1 --max=10", "horizontalpodautoscaler.autoscaling/web autoscaled\n", "", 0);
    check(&mut f, "get hpa", "NAME   REFERENCE        TARGETS              MINPODS   MAXPODS   REPLICAS   AGE\nweb    Deployment/web   cpu: <unknown>/50%   1         10        0          0s\n", "", 0);
    check(&mut f, "autoscale deployment web --max=0", "", "error: --max=MAXPODS is required and must be at least 1\n", 1);
    check(&mut f, "create configmap app --from-literal=mode=prod --from-literal=level=3", "configmap/app created\n", "", 0);
    assert_eq!(json(&f, "configmaps", "app")["data"], serde_json::json!({"level": "3", "mode": "prod"}));
    f.file("conf/app.properties", "a=1\n");
    check(&mut f, "create cm files --from-file=conf/app.properties --from-file=k=conf/app.properties", "configmap/files created\n", "", 0);
    assert_eq!(json(&f, "configmaps", "files")["data"], serde_json::json!({"app.properties": "a=1\n", "k": "a=1\n"}));
    check(&mut f, "create secret generic db --from-literal=password=t0p-Secret", "secret/db created\n", "", 0);
    assert_eq!(json(&f, "secrets", "db")["data"], serde_json::json!({"password": "dDBwLVNlY3JldA=="}));
    check(&mut f, "create secret tls x", "", "error: required flag(s) \"cert\", \"key\" not set\n", 1);
    check(&mut f, "create job pi --image=perl -- perl -Mbignum=bpi -wle 'print bpi(2000)'", "job.batch/pi created\n", "", 0);
    let job = json(&f, "jobs", "pi");
    assert_eq!(job["spec"]["template"]["spec"]["containers"][0]["command"], serde_json::json!(["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]));
    assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
    check(&mut f, "create cronjob hello --image=busybox --schedule='*/1 * * * *' -- echo hello", "cronjob.batch/hello created\n", "", 0);
    assert_eq!(json(&f, "cronjobs", "hello")["spec"]["schedule"], "*/1 * * * *");
    check(&mut f, "create job manual --from=cronjob/hello", "job.batch/manual created\n", "", 0);
    assert_eq!(json(&f, "jobs", "manual")["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"], "manual");
    check(&mut f, "create service clusterip my-cs --tcp=5678:8080", "service/my-cs created\n", "", 0);
    assert_eq!(json(&f, "services", "my-cs")["spec"]["ports"], serde_json::json!([{"name": "5678-8080", "port": 5678, "protocol": "TCP", "targetPort": 8080}]));
    check(&mut f, "create service nodeport np --tcp=80:8080 --node-port=30080", "service/np created\n", "", 0);
    check(&mut f, "get svc np --no-headers", "np    NodePort   10.109.155.93   <none>   80:30080/TCP   0s\n", "", 0);
    check(&mut f, "create job", "", "error: exactly one NAME is required, got 0\nSee 'kubectl create job -h' for help and examples\n", 1);
}

#[test]
fn server_side_apply_reports_serverside_applied() {
    let mut f = Fixture::new();
    f.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n");
    check(&mut f, "apply --server-side -f cm.yaml", "configmap/c serverside-applied\n", "", 0);
    assert!(f.get("configmaps", "default", "c").unwrap().metadata().annotations.is_none());
    check(&mut f, "apply --server-side -f cm.yaml", "configmap/c serverside-applied\n", "", 0);
}

#[test]
fn diff_shows_what_apply_would_change_without_changing_it() {
    let mut f = scenario::cluster();
    let changed = scenario::APP.split("---").next().unwrap().replace("replicas: 2", "replicas: 3");
    f.file("web.yaml", &changed);
    let before = f.snapshot();
    let o = f.kubectl("diff -f web.yaml");
    assert_eq!(o.exit_code, 1, "{}", o.stderr);
    // One `diff -u -N` over the LIVE-N and MERGED-N directories (os.MkdirTemp's names), the
    // files' times the virtual instant.
    assert!(o.stdout.starts_with("diff -u -N /tmp/LIVE-2811902828/apps.v1.Deployment.default.web /tmp/MERGED-3045455719/apps.v1.Deployment.default.web\n--- /tmp/LIVE-2811902828/apps.v1.Deployment.default.web\t2025-01-01 00:05:00.000000000 +0000\n+++ /tmp/MERGED-3045455719/apps.v1.Deployment.default.web\t2025-01-01 00:05:00.000000000 +0000\n@@ "), "{}", o.stdout);
    // The merged side keeps the live last-applied annotation (diff patches without it).
    assert!(!o.stdout.contains("\n-    kubectl.kubernetes.io/last-applied-configuration"), "{}", o.stdout);
    assert!(o.stdout.contains("\n-  replicas: 2\n+  replicas: 3\n"), "{}", o.stdout);
    assert!(o.stdout.contains("\n-  generation: 2\n+  generation: 3\n"), "{}", o.stdout);
    assert_eq!(before, f.snapshot(), "diff writes nothing");
    // A new object diffs against nothing; an unchanged one prints nothing.
    f.file("new.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\ndata: {a: b}\n");
    let o = f.kubectl("diff -f new.yaml");
    assert_eq!(o.exit_code, 1);
    assert!(o.stdout.contains("@@ -0,0 +1,"), "{}", o.stdout);
    assert!(o.stdout.contains("\n+kind: ConfigMap\n"), "{}", o.stdout);
    f.file("same.yaml", scenario::APP);
    check(&mut f, "diff -f same.yaml", "", "", 0);
    // Files print in name order: apps.v1.Deployment before v1.ConfigMap whatever the input order.
    f.file("both.yaml", &format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: fresh}}\ndata: {{a: b}}\n---\n{changed}"));
    let o = f.kubectl("diff -f both.yaml");
    let (deployment, configmap) = (o.stdout.find("apps.v1.Deployment.default.web").unwrap(), o.stdout.find("v1.ConfigMap.default.fresh").unwrap());
    assert!(deployment < configmap, "{}", o.stdout);
    // An error stops the command before the diff, with exit status 2.
    f.file("bad.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: -1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}\n");
    let o = f.kubectl("diff -f bad.yaml");
    assert_eq!((o.exit_code, o.stdout.as_str()), (2, ""), "{}", o.stderr);
}

#[test]
fn every_listed_command_is_dispatched() {
    let mut f = Fixture::new();
    for command in kubesim_kubectl::COMMANDS {
        let o = f.kubectl(command);
        assert!(!o.stderr.contains("unknown command \"") || o.stderr.contains("for \"kubectl "), "{command}: {}", o.stderr);
        assert!(!o.stderr.starts_with(&format!("error: unknown command \"{command}\" for \"kubectl\"")), "{command} is listed but not dispatched");
    }
}

#[test]
fn apply_documents_supports_dry_run_validation_for_editors() {
    let mut f = Fixture::new();
    let options = kubesim_kubectl::ApplyOptions {
        namespace: "default",
        enforce_namespace: false,
        mode: kubesim_kubectl::Mode::Apply,
        validate: "warn",
        dry_run: true,
        save_config: false,
        server_side: false,
        record_last_applied: true,
    };
    let actor: std::sync::Arc<str> = std::sync::Arc::from("ui");
    let mut req = kubesim_apiserver::Request { now: 0, rng: &mut f.rng, actor: &actor };
    let r = kubesim_kubectl::apply_documents("editor", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", &options, &mut f.api, &mut req);
    assert_eq!(r[0].line(), "configmap/x created");
    assert!(f.get("configmaps", "default", "x").is_none());
}

#[test]
fn dry_runs_validate_without_writing() {
    let mut f = scenario::cluster();
    f.file("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n");
    check(&mut f, "apply -f bad.yaml --dry-run=server", "", "The Pod \"p\" is invalid: spec.containers[0].image: Required value\n", 1);
    f.file("ns.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, namespace: nope}\n");
    check(
        &mut f,
        "create -f ns.yaml --dry-run=client",
        "",
        "Error from server (NotFound): error when creating \"ns.yaml\": namespaces \"nope\" not found\n",
        1,
    );
    let bad_update = scenario::APP.split("---").next().unwrap().replace("replicas: 2", "replicas: -2");
    f.file("web.yaml", &bad_update);
    let o = f.kubectl("apply -f web.yaml --dry-run=server");
    assert_eq!(o.exit_code, 1);
    assert!(o.stderr.contains("spec.replicas: Invalid value: -2"), "{}", o.stderr);
    f.file("ok.yaml", &scenario::APP.split("---").next().unwrap().replace("replicas: 2", "replicas: 4"));
    check(&mut f, "apply -f ok.yaml --dry-run=server", "deployment.apps/web configured (server dry run)\n", "", 0);
    assert_eq!(f.get("deployments", "default", "web").unwrap().to_json()["spec"]["replicas"], 2);
}

#[test]
fn generators_print_their_objects_on_client_dry_run() {
    let mut f = Fixture::new();
    check(
        &mut f,
        "create deployment web --image=nginx --dry-run=client -o yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  creationTimestamp: null\n  labels:\n    app: web\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: web\n  strategy: {}\n  template:\n    metadata:\n      creationTimestamp: null\n      labels:\n        app: web\n    spec:\n      containers:\n      - image: nginx\n        name: nginx\n        resources: {}\nstatus: {}\n",
        "",
        0,
    );
    check(
        &mut f,
        "run nginx --image=nginx --dry-run=client -o yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  creationTimestamp: null\n  labels:\n    run: nginx\n  name: nginx\nspec:\n  containers:\n  - image: nginx\n    name: nginx\n    resources: {}\n  dnsPolicy: ClusterFirst\n  restartPolicy: Always\nstatus: {}\n",
        "",
        0,
    );
    check(
        &mut f,
        "create ns team --dry-run=client -o yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  creationTimestamp: null\n  name: team\nspec: {}\nstatus: {}\n",
        "",
        0,
    );
    check(&mut f, "create cm c --from-literal=a=b --dry-run=client -o name", "configmap/c\n", "", 0);
    assert!(f.get("deployments", "default", "web").is_none() && f.get("pods", "default", "nginx").is_none());
    // The generated YAML applies cleanly.
    let yaml = f.kubectl("create deployment web --image=nginx --dry-run=client -o yaml").stdout;
    f.file("web.yaml", &yaml);
    check(&mut f, "apply -f web.yaml", "deployment.apps/web created\n", "", 0);
}

#[test]
fn interactive_commands_explain_themselves() {
    let mut f = Fixture::new();
    for cmd in ["edit deploy/web", "port-forward svc/web 8080:80", "attach pod/x", "cp a b"] {
        let o = f.kubectl(cmd);
        assert_eq!(o.exit_code, 1, "{cmd}");
        assert!(o.stderr.starts_with("error: ") && !o.stderr.contains("unknown command"), "{cmd}: {}", o.stderr);
    }
    // A namespace on a cluster-scoped object is ignored, and re-applying it changes nothing.
    f.file("pv.yaml", "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1, namespace: oops}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /data}}\n");
    check(&mut f, "apply -f pv.yaml", "persistentvolume/pv1 created\n", "", 0);
    check(&mut f, "apply -f pv.yaml", "persistentvolume/pv1 unchanged\n", "", 0);
}

#[test]
fn apply_results_name_the_offending_field() {
    let mut f = Fixture::new();
    let r = f.apply("d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: x}\n", "default");
    assert_eq!(r[0].field_path.as_deref(), Some("spec.replicas"));
    let r = f.apply("p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n", "default");
    assert_eq!(r[0].field_path.as_deref(), Some("spec.containers[0].image"));
    let r = f.apply("p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: P}\nspec: {containers: [{name: c}]}\n", "default");
    assert_eq!(r[0].field_path.as_deref(), Some("metadata.name"));
    let r = f.apply("n.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: nope}\n", "default");
    assert_eq!(r[0].field_path, None);
}

// --dry-run=client|server on the mutating verbs: the change is computed and checked, the
// printer says "(dry run)" / "(server dry run)" and nothing is written
// (cmdutil.GetDryRunStrategy; delete.go, scale.go, patch.go, drain.go, expose.go print with
// the dry-run suffix and skip the request).
#[test]
fn dry_runs_write_nothing() {
    let mut f = scenario::cluster();
    let before = |f: &Fixture| (json(f, "deployments", "web"), json(f, "nodes", "node-1"), json(f, "pods", "web-7d4b9c7f5-abcde"));
    let snapshot = before(&f);
    check(&mut f, "delete deployment web --dry-run=client", "deployment.apps \"web\" deleted (dry run)\n", "", 0);
    check(&mut f, "delete pod web-7d4b9c7f5-abcde --dry-run=server", "pod \"web-7d4b9c7f5-abcde\" deleted (server dry run)\n", "", 0);
    check(&mut f, "delete pod nope --dry-run=client", "", "Error from server (NotFound): pods \"nope\" not found\n", 1);
    check(&mut f, "scale deployment web --replicas=9 --dry-run=client", "deployment.apps/web scaled (dry run)\n", "", 0);
    check(&mut f, "patch deployment web -p '{\"spec\":{\"replicas\":7}}' --dry-run=client", "deployment.apps/web patched (dry run)\n", "", 0);
    check(&mut f, "cordon node-1 --dry-run=client", "node/node-1 cordoned (dry run)\n", "", 0);
    check(&mut f, "expose deployment web --port=80 --name=web2 --dry-run=client", "service/web2 exposed (dry run)\n", "", 0);
    let drained = f.kubectl("drain node-1 --dry-run=client --ignore-daemonsets --force");
    assert!(drained.stdout.starts_with("node/node-1 cordoned (dry run)\n") && drained.stdout.ends_with("node/node-1 drained (dry run)\n"), "{drained:?}");
    assert_eq!(before(&f), snapshot, "nothing was written");
    assert!(f.get("services", "default", "web2").is_none());
}

// config/view.go: `kubectl config view -o jsonpath=...` (the Access Clusters pages list each
// cluster's name and server this way) and `--raw` showing the embedded credentials.
#[test]
fn config_view_prints_with_every_output_format() {
    let mut f = scenario::cluster();
    check(
        &mut f,
        r#"config view -o jsonpath='{"Cluster name\tServer\n"}{range .clusters[*]}{.name}{"\t"}{.cluster.server}{"\n"}{end}'"#,
        "Cluster name\tServer\nkubesim\thttps://kubesim.local:6443\n",
        "",
        0,
    );
    check(&mut f, "config view -o jsonpath={.users[0].user.client-key-data}", "DATA+OMITTED", "", 0);
    let raw = f.kubectl("config view --raw -o jsonpath={.users[0].user.client-key-data}");
    assert!(raw.exit_code == 0 && raw.stdout.starts_with("LS0tLS1CRUdJTi"), "{raw:?}");
    let json = f.kubectl("config view -o json");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&json.stdout).unwrap()["current-context"], "kubesim");
}
