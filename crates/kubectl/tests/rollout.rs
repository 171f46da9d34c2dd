//! `kubectl rollout history|undo|status` for DaemonSets and StatefulSets through their
//! ControllerRevisions (staging/src/k8s.io/kubectl/pkg/polymorphichelpers history.go,
//! rollback.go, rollout_status.go), the paused-Deployment rollback error, and
//! `delete --cascade=false` (cmd/delete/delete_flags.go GetCascadingStrategy).

mod common;
mod scenario;

use common::Fixture;

fn check(f: &mut Fixture, cmd: &str, stdout: &str, stderr: &str, code: i32) {
    let o = f.kubectl(cmd);
    assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.exit_code), (stdout, stderr, code), "`kubectl {cmd}`");
}

const DS: &str = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec:\n      containers: [{name: agent, image: 'agent:2.0'}]\n";

/// Writes a ControllerRevision owned by `owner` whose data patches in `image`, as the
/// DaemonSet/StatefulSet controllers store them (`{"spec":{"template":{..., "$patch":"replace"}}}`).
fn revision(f: &mut Fixture, owner: &kubesim_api::Object, revision: i64, image: &str, app: &str) {
    let template = serde_json::json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": app, "image": image}]}, "$patch": "replace"});
    let yaml = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": format!("{}-{revision}", owner.name()), "namespace": "default", "labels": {"app": app},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner.kind(), "name": owner.name(), "uid": owner.metadata().uid.clone().unwrap(), "controller": true}]},
        "data": {"spec": {"template": template}},
        "revision": revision,
    });
    scenario::create(f, &serde_json::to_string(&yaml).unwrap());
}

#[test]
fn daemon_set_history_undo_and_status() {
    let mut f = Fixture::new();
    f.file("ds.yaml", DS);
    check(&mut f, "apply -f ds.yaml", "daemonset.apps/agent created\n", "", 0);
    check(&mut f, "rollout history ds/agent", "daemonset.apps/agent No rollout history found.\n", "", 0);
    check(&mut f, "rollout undo ds/agent", "", "error: no last revision to roll back to\n", 1);
    let ds = f.get("daemonsets", "default", "agent").unwrap();
    revision(&mut f, &ds, 1, "agent:1.0", "agent");
    revision(&mut f, &ds, 2, "agent:2.0", "agent");
    check(&mut f, "rollout history daemonset/agent", "daemonset.apps/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n", "", 0);
    let o = f.kubectl("rollout history daemonset/agent --revision=1");
    assert!(o.stdout.starts_with("daemonset.apps/agent with revision #1\nPod Template:\n  Labels:  app=agent\n  Containers:\n   agent:\n"), "{}", o.stdout);
    assert!(o.stdout.contains("    Image:         agent:1.0\n"), "{}", o.stdout);
    check(&mut f, "rollout history daemonset/agent --revision=7", "", "error: unable to find the specified revision\n", 1);
    check(&mut f, "rollout undo ds/agent --to-revision=2", "daemonset.apps/agent skipped rollback (current template already matches revision 2)\n", "", 0);
    check(&mut f, "rollout undo ds/agent --to-revision=5", "", "error: unable to find specified revision 5 in history\n", 1);
    let o = f.kubectl("rollout undo ds/agent --dry-run=client");
    assert!(o.stdout.starts_with("daemonset.apps/agent Pod Template:\n  Labels:  app=agent\n"), "{}", o.stdout);
    assert!(o.stdout.contains("agent:1.0"), "{}", o.stdout);
    check(&mut f, "rollout undo ds/agent", "daemonset.apps/agent rolled back\n", "", 0);
    let image = f.get("daemonsets", "default", "agent").unwrap().to_json()["spec"]["template"]["spec"]["containers"][0]["image"].clone();
    assert_eq!(image, "agent:1.0");
    // OnDelete DaemonSets have no rollout status.
    f.file("ondelete.yaml", &DS.replace("name: agent}", "name: od}").replace("spec:\n  selector", "spec:\n  updateStrategy: {type: OnDelete}\n  selector"));
    check(&mut f, "apply -f ondelete.yaml", "daemonset.apps/od created\n", "", 0);
    check(&mut f, "rollout status ds/od", "", "error: rollout status is only available for RollingUpdate strategy type\n", 1);
}

#[test]
fn stateful_set_partitions_and_undo() {
    let mut f = Fixture::new();
    let sts = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n  replicas: 3\n  serviceName: nginx\n  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}\n  selector: {matchLabels: {app: nginx}}\n  template:\n    metadata: {labels: {app: nginx}}\n    spec:\n      containers: [{name: nginx, image: 'registry.k8s.io/nginx-slim:0.24'}]\n";
    f.file("sts.yaml", sts);
    check(&mut f, "apply -f sts.yaml", "statefulset.apps/web created\n", "", 0);
    let object = f.get("statefulsets", "default", "web").unwrap();
    let mut json = object.to_json();
    json["status"] = serde_json::json!({"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 0, "currentReplicas": 3});
    f.set_status(kubesim_api::Object::from_json(object.info().unwrap(), json.clone()).unwrap());
    // Docs: tutorials/stateful-application/basic-stateful-set (Staging an Update).
    check(&mut f, "rollout status sts/web", "Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated...\n", "", 0);
    json["status"]["updatedReplicas"] = 1.into();
    json["metadata"]["resourceVersion"] = serde_json::Value::Null;
    f.set_status(kubesim_api::Object::from_json(object.info().unwrap(), json).unwrap());
    check(&mut f, "rollout status sts/web", "partitioned roll out complete: 1 new pods have been updated...\n", "", 0);
    revision(&mut f, &object, 1, "registry.k8s.io/nginx-slim:0.21", "nginx");
    revision(&mut f, &object, 2, "registry.k8s.io/nginx-slim:0.24", "nginx");
    check(&mut f, "rollout undo statefulset/web", "statefulset.apps/web rolled back\n", "", 0);
    let image = f.get("statefulsets", "default", "web").unwrap().to_json()["spec"]["template"]["spec"]["containers"][0]["image"].clone();
    assert_eq!(image, "registry.k8s.io/nginx-slim:0.21");
}

#[test]
fn paused_deployments_cannot_roll_back_and_cascade_false_warns() {
    let mut f = scenario::cluster();
    check(&mut f, "rollout pause deploy/web", "deployment.apps/web paused\n", "", 0);
    check(
        &mut f,
        "rollout undo deploy/web",
        "",
        "error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again\n",
        1,
    );
    check(&mut f, "rollout resume deploy/web", "deployment.apps/web resumed\n", "", 0);
    check(
        &mut f,
        "delete deployment web --cascade=false",
        "deployment.apps \"web\" deleted\n",
        "warning: --cascade=false is deprecated (boolean value) and can be replaced with --cascade=orphan.\n",
        0,
    );
    assert_eq!(f.get("deployments", "default", "web").unwrap().to_json()["metadata"]["finalizers"], serde_json::json!(["orphan"]));
    check(&mut f, "delete svc web --cascade", "service \"web\" deleted\n", "", 0);
}
