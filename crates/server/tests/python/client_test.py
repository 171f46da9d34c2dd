"""Drives kubesim serve with the official Python client (Debian's python3-kubernetes):
list, watch, create, patch, and a small controller loop. Exits non-zero on failure."""
import sys
import time

from kubernetes import client, config, watch

config.load_kube_config()
core = client.CoreV1Api()
apps = client.AppsV1Api()

nodes = [n.metadata.name for n in core.list_node().items]
assert nodes == ["node-1", "node-2", "node-3"], nodes

body = client.V1Deployment(
    metadata=client.V1ObjectMeta(name="py-web", labels={"app": "py-web"}),
    spec=client.V1DeploymentSpec(
        replicas=2,
        selector=client.V1LabelSelector(match_labels={"app": "py-web"}),
        template=client.V1PodTemplateSpec(
            metadata=client.V1ObjectMeta(labels={"app": "py-web"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="nginx", image="nginx")]),
        ),
    ),
)
apps.create_namespaced_deployment("default", body)

# Watch pods until both replicas run.
running = set()
w = watch.Watch()
for event in w.stream(core.list_namespaced_pod, "default", label_selector="app=py-web", timeout_seconds=60):
    pod = event["object"]
    if pod.status.phase == "Running":
        running.add(pod.metadata.name)
    if len(running) >= 2:
        w.stop()
assert len(running) == 2, running

apps.patch_namespaced_deployment("py-web", "default", {"spec": {"replicas": 3}})
deadline = time.time() + 60
while time.time() < deadline:
    d = apps.read_namespaced_deployment("py-web", "default")
    if (d.status.ready_replicas or 0) == 3:
        break
    time.sleep(0.2)
assert d.status.ready_replicas == 3, d.status

# A small controller: every ConfigMap labelled reconcile=true gets a Secret of the same name.
for i in range(3):
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"want-{i}", labels={"reconcile": "true"}), data={"i": str(i)}))
made = set()
w = watch.Watch()
for event in w.stream(core.list_namespaced_config_map, "default", label_selector="reconcile=true", timeout_seconds=30):
    cm = event["object"]
    if event["type"] == "ADDED" and cm.metadata.name not in made:
        core.create_namespaced_secret("default", client.V1Secret(metadata=client.V1ObjectMeta(name=cm.metadata.name), string_data=cm.data))
        made.add(cm.metadata.name)
    if len(made) == 3:
        w.stop()
secrets = sorted(s.metadata.name for s in core.list_namespaced_secret("default").items if s.metadata.name.startswith("want-"))
assert secrets == ["want-0", "want-1", "want-2"], secrets

try:
    core.read_namespaced_pod("missing", "default")
    raise AssertionError("expected 404")
except client.exceptions.ApiException as e:
    assert e.status == 404, e.status

print("python client: ok")
sys.exit(0)
