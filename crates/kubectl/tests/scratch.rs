mod common;
use common::Fixture;

#[test]
fn scratch() {
    let mut f = Fixture::new();
    f.file("app.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.27\n        ports: [{containerPort: 80}]\n        foo: bar\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 8080}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: nginx, labels: {run: nginx}}\nspec:\n  containers: [{name: nginx, image: nginx}]\n");
    for line in ["apply -f app.yaml", "apply -f app.yaml", "run busy --image=busybox", "get pods", "get pods -o wide", "get all", "get deploy,svc", "get pod nginx -o yaml", "get pod nginx -o jsonpath={.spec.containers[0].image}", "get pods -o name", "describe pod nginx", "describe deploy web", "describe svc web", "get ns", "scale deploy web --replicas=5", "get deploy", "set image deployment/web nginx=nginx:1.28", "label pod nginx tier=front", "get pods --show-labels", "annotate pod nginx a=b", "delete pod nginx", "delete pod busy --force --grace-period=0", "get pods -A", "get nodes", "rollout restart deploy/web", "rollout history deploy/web", "get deploy web -o json", "api-resources", "create deployment d2 --image=redis --replicas=2", "create ns team", "get ns"] {
        f.now += 65_000;
        let o = f.kubectl(line);
        println!("$ kubectl {line}\n{}{}[exit {}]\n", o.stdout, o.stderr, o.exit_code);
    }
}
