//! Tables and describers for the JSON-kept workload kinds, over real documentation manifests
//! (../shared/corpus/k8s-docs-examples). Columns mirror pkg/printers/internalversion/printers.go
//! (printJob, printCronJob, printStatefulSet, printPersistentVolume(Claim), printHorizontalPodAutoscaler,
//! printIngress, printPodDisruptionBudget, printSecret, printPriorityClass, printStorageClass).

mod common;

use common::Fixture;

fn cluster() -> Fixture {
    let mut f = Fixture::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/k8s-docs-examples");
    for file in [
        "controllers/job.yaml",
        "application/job/cronjob.yaml",
        "application/web/web.yaml",
        "pods/storage/pv-volume.yaml",
        "pods/storage/pv-claim.yaml",
        "application/hpa/php-apache.yaml",
        "service/networking/minimal-ingress.yaml",
        "policy/zookeeper-pod-disruption-budget-minavailable.yaml",
        "configmap/configmaps.yaml",
        "secret/basicauth-secret.yaml",
        "priorityclass/low-priority-class.yaml",
        "storage/storageclass-low-latency.yaml",
        "admin/resource/quota-mem-cpu.yaml",
        "controllers/replication.yaml",
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for r in f.apply(file, &text, "default") {
            assert!(r.outcome.is_ok(), "{file}: {}", r.line());
        }
    }
    f.now = 90_000;
    f
}

#[test]
fn workload_tables() {
    let mut f = cluster();
    let cases: &[(&str, &str)] = &[
        ("get jobs -o wide", "NAME   STATUS    COMPLETIONS   DURATION   AGE   CONTAINERS   IMAGES   SELECTOR\npi     Running   0/1                      90s   pi           perl     batch.kubernetes.io/controller-uid=cda80f5c-4a85-4d5d-b725-487edcd56efd\n"),
        ("get cj", "NAME    SCHEDULE    TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE\nhello   * * * * *   <none>     False     0        <none>          90s\n"),
        ("get sts -o wide", "NAME   READY   AGE   CONTAINERS   IMAGES\nweb    0/2     90s   nginx        registry.k8s.io/nginx-slim:0.7\n"),
        ("get pvc", "NAME            STATUS    VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE\ntask-pv-claim   Pending                                      manual         <unset>                 90s\n"),
        ("get hpa", "NAME         REFERENCE               TARGETS              MINPODS   MAXPODS   REPLICAS   AGE\nphp-apache   Deployment/php-apache   cpu: <unknown>/50%   1         10        0          90s\n"),
        ("get ing", "NAME              CLASS           HOSTS   ADDRESS   PORTS   AGE\nminimal-ingress   nginx-example   *                 80      90s\n"),
        ("get pdb", "NAME     MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\nzk-pdb   2               N/A               0                     90s\n"),
        ("get secrets", "NAME                TYPE                       DATA   AGE\nsecret-basic-auth   kubernetes.io/basic-auth   2      90s\n"),
        ("get pc", "NAME          VALUE   GLOBAL-DEFAULT   AGE   PREEMPTIONPOLICY\nplaceholder   -1000   false            90s   PreemptLowerPriority\n"),
        ("get rc", "NAME    DESIRED   CURRENT   READY   AGE\nnginx   3         0         0       90s\n"),
        ("get quota", "NAME           REQUEST                                     LIMIT                                   AGE\nmem-cpu-demo   requests.cpu: 0/1, requests.memory: 0/1Gi   limits.cpu: 0/2, limits.memory: 0/2Gi   90s\n"),
    ];
    for (cmd, want) in cases {
        let o = f.kubectl(cmd);
        assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.exit_code), (*want, "", 0), "kubectl {cmd}");
    }
}

#[test]
fn workload_describers() {
    let mut f = cluster();
    let job = f.kubectl("describe job pi").stdout;
    assert!(job.starts_with("Name:             pi\nNamespace:        default\nSelector:         batch.kubernetes.io/controller-uid="), "{job}");
    assert!(job.contains("\nParallelism:      1\nCompletions:      1\nCompletion Mode:  NonIndexed\nSuspend:          false\nBackoff Limit:    4\nPods Statuses:    0 Active / 0 Succeeded / 0 Failed\n"), "{job}");
    assert!(job.contains("    Command:\n      perl\n      -Mbignum=bpi\n      -wle\n      print bpi(1000)\n"), "{job}");
    let sts = f.kubectl("describe sts web").stdout;
    assert!(sts.contains("Replicas:           2 desired | 0 total\nUpdate Strategy:    RollingUpdate\n  Partition:        0\n"), "{sts}");
    assert!(sts.contains("Volume Claims:\n  Name:          www\n  StorageClass:  \n  Labels:        <none>\n  Annotations:   <none>\n  Capacity:      1Gi\n  Access Modes:  [ReadWriteOnce]\n"), "{sts}");
    let secret = f.kubectl("describe secret secret-basic-auth").stdout;
    assert_eq!(secret, "Name:         secret-basic-auth\nNamespace:    default\nLabels:       <none>\nAnnotations:  <none>\n\nType:  kubernetes.io/basic-auth\n\nData\n====\npassword:  10 bytes\nusername:  5 bytes\n");
    let cm = f.kubectl("describe cm special-config").stdout;
    assert_eq!(cm, "Name:         special-config\nNamespace:    default\nLabels:       <none>\nAnnotations:  <none>\n\nData\n====\nspecial.how:\n----\nvery\n\n\nBinaryData\n====\n\nEvents:  <none>\n");
    let pdb = f.kubectl("describe pdb zk-pdb").stdout;
    assert_eq!(pdb, "Name:           zk-pdb\nNamespace:      default\nMin available:  2\nSelector:       app.kubernetes.io/name=zookeeper\nStatus:\n    Allowed disruptions:  0\n    Current:              0\n    Desired:              0\n    Total:                0\nEvents:                   <none>\n");
    let hpa = f.kubectl("describe hpa php-apache").stdout;
    assert!(hpa.contains("\nReference:                                             Deployment/php-apache\nMetrics:                                               ( current / target )\n  resource cpu on pods  (as a percentage of request):  <unknown> / 50%\nMin replicas:                                          1\nMax replicas:                                          10\nDeployment pods:                                       0 current / 0 desired\n"), "{hpa}");
    let pvc = f.kubectl("describe pvc task-pv-claim").stdout;
    assert!(pvc.starts_with("Name:          task-pv-claim\nNamespace:     default\nStorageClass:  manual\nStatus:        Pending\nVolume:        \nLabels:        <none>\nAnnotations:   <none>\nFinalizers:    ["), "{pvc}");
    assert!(pvc.contains("\nUsed By:       <none>\n"), "{pvc}");
    let pv = f.kubectl("describe pv task-pv-volume").stdout;
    assert!(pv.starts_with("Name:            task-pv-volume\nLabels:          type=local\nAnnotations:     <none>\n"), "{pv}");
    assert!(pv.contains("\nSource:\n    Type:          HostPath (bare host directory volume)\n    Path:          /mnt/data\n    HostPathType:  \n"), "{pv}");
    let ing = f.kubectl("describe ingress minimal-ingress").stdout;
    assert_eq!(ing, "Name:             minimal-ingress\nLabels:           <none>\nNamespace:        default\nAddress:          \nIngress Class:    nginx-example\nDefault backend:  <default>\nRules:\n  Host        Path  Backends\n  ----        ----  --------\n  *           \n              /testpath   test:80 (<error: services \"test\" not found>)\nAnnotations:  <none>\nEvents:       <none>\n");
    // describe.go describePriorityClass.
    let pc = f.kubectl("describe pc placeholder").stdout;
    assert_eq!(pc, "Name:              placeholder\nValue:             -1000\nGlobalDefault:     false\nPreemptionPolicy:  PreemptLowerPriority\nDescription:       Negative priority for placeholder pods to enable overprovisioning.\nAnnotations:       kubectl.kubernetes.io/last-applied-configuration={\"apiVersion\":\"scheduling.k8s.io/v1\",\"description\":\"Negative priority for placeholder pods to enable overprovisioning.\",\"globalDefault\":false,\"kind\":\"PriorityClass\",\"metadata\":{\"annotations\":{},\"name\":\"placeholder\"},\"value\":-1000}\n\nEvents:  <none>\n");
    // Kinds without a dedicated describer get the generic one (printUnstructuredContent).
    let crb = f.kubectl("describe pdb nope");
    assert_eq!(crb.exit_code, 1);
}

#[test]
fn rollout_status_for_statefulsets_and_daemonsets() {
    let mut f = cluster();
    let o = f.kubectl("rollout status sts/web");
    assert_eq!((o.stdout.as_str(), o.exit_code), ("Waiting for statefulset spec update to be observed...\n", 0));
    // Once the controller has observed the spec, readiness decides.
    let sts = f.get("statefulsets", "default", "web").unwrap();
    let mut json = sts.to_json();
    json["status"] = serde_json::json!({"observedGeneration": 1, "replicas": 2, "readyReplicas": 1});
    let info = sts.info().unwrap();
    let actor: std::sync::Arc<str> = std::sync::Arc::from("statefulset-controller");
    let mut req = kubesim_apiserver::Request { now: f.now, rng: &mut f.rng, actor: &actor };
    f.api.update_status(kubesim_api::Object::from_json(info, json.clone()).unwrap(), &mut req).unwrap();
    assert_eq!(f.kubectl("rollout status statefulset web").stdout, "Waiting for 1 pods to be ready...\n");
    json["status"]["readyReplicas"] = 2.into();
    json["status"]["updatedReplicas"] = 2.into();
    json["metadata"]["resourceVersion"] = serde_json::Value::Null;
    let mut req = kubesim_apiserver::Request { now: f.now, rng: &mut f.rng, actor: &actor };
    f.api.update_status(kubesim_api::Object::from_json(info, json).unwrap(), &mut req).unwrap();
    assert_eq!(f.kubectl("rollout status statefulset web").stdout, "partitioned roll out complete: 2 new pods have been updated...\n");
    // DaemonSets report scheduled/updated/available counts.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/k8s-docs-examples");
    let text = std::fs::read_to_string(dir.join("controllers/daemonset.yaml")).unwrap();
    for r in f.apply("ds.yaml", &text, "default") {
        assert!(r.outcome.is_ok(), "{}", r.line());
    }
    let ds = f.get("daemonsets", "kube-system", "fluentd-elasticsearch").unwrap();
    let mut json = ds.to_json();
    json["status"] = serde_json::json!({"observedGeneration": 1, "desiredNumberScheduled": 3, "updatedNumberScheduled": 2, "numberAvailable": 2, "currentNumberScheduled": 3, "numberReady": 2});
    let mut req = kubesim_apiserver::Request { now: f.now, rng: &mut f.rng, actor: &actor };
    f.api.update_status(kubesim_api::Object::from_json(ds.info().unwrap(), json).unwrap(), &mut req).unwrap();
    assert_eq!(
        f.kubectl("rollout status ds/fluentd-elasticsearch -n kube-system").stdout,
        "Waiting for daemon set \"fluentd-elasticsearch\" rollout to finish: 2 out of 3 new pods have been updated...\n"
    );
    assert_eq!(
        f.kubectl("get ds -n kube-system").stdout,
        "NAME                    DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\nfluentd-elasticsearch   3         3         2       2            2           <none>          0s\n"
    );
}
