//! The scenario gallery: each scenario is input data (YAML applied at given virtual times, and
//! command lines), never a script of what the UI should show. Everything on screen comes from
//! the world those inputs drive.

use crate::engine::{Input, TimedInput};

/// One gallery entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// URL name (`?scenario=<name>`).
    pub name: &'static str,
    /// Title on the card.
    pub title: &'static str,
    /// One or two sentences: what to watch for.
    pub summary: &'static str,
    /// Inputs, in time order (t=0 ones form the initial cluster).
    pub inputs: Vec<TimedInput>,
    /// The view that shows it best.
    pub view: &'static str,
}

const NGINX: &str = include_str!("../scenarios/nginx-deployment.yaml");
const ROLLING: &str = include_str!("../scenarios/rolling-update.yaml");
const ROLLING_V2: &str = include_str!("../scenarios/rolling-update-v2.yaml");
const CRASHLOOP: &str = include_str!("../scenarios/crashloop.yaml");
const IMAGEPULL: &str = include_str!("../scenarios/imagepull.yaml");
const INIT: &str = include_str!("../scenarios/init-containers.yaml");
const JOB: &str = include_str!("../scenarios/job.yaml");
const NODE_FAILURE: &str = include_str!("../scenarios/node-failure.yaml");
const UNSCHEDULABLE: &str = include_str!("../scenarios/unschedulable.yaml");
const SCALE: &str = include_str!("../scenarios/scale.yaml");
const SERVICE_DNS: &str = include_str!("../scenarios/service-dns.yaml");
const ROLLING_SERVICE: &str = include_str!("../scenarios/rolling-service.yaml");
const READINESS: &str = include_str!("../scenarios/readiness.yaml");
const HEADLESS_DNS: &str = include_str!("../scenarios/headless-dns.yaml");
const TRAFFIC: &str = include_str!("../scenarios/traffic.yaml");
const HPA: &str = include_str!("../scenarios/hpa.yaml");
const HPA_LOAD: &str = include_str!("../scenarios/hpa-load.yaml");
const STATEFULSET: &str = include_str!("../scenarios/statefulset.yaml");
const BLOCK_STORAGE: &str = include_str!("../scenarios/block-storage.yaml");
const WFFC: &str = include_str!("../scenarios/wffc.yaml");
const WFFC_WRITER: &str = include_str!("../scenarios/wffc-writer.yaml");
const ATTACH_FAILURE: &str = include_str!("../scenarios/attach-failure.yaml");
const STATEFULSET_RESTART: &str = include_str!("../scenarios/statefulset-restart.yaml");
const DAEMONSET: &str = include_str!("../scenarios/daemonset.yaml");
const CRONJOB: &str = include_str!("../scenarios/cronjob.yaml");
const PROBES: &str = include_str!("../scenarios/probes.yaml");
const PREEMPTION: &str = include_str!("../scenarios/preemption.yaml");
const PREEMPTION_HIGH: &str = include_str!("../scenarios/preemption-high.yaml");
const NETPOL: &str = include_str!("../scenarios/netpol.yaml");
const NETPOL_DENY: &str = include_str!("../scenarios/netpol-deny.yaml");
const NETPOL_ALLOW: &str = include_str!("../scenarios/netpol-allow.yaml");
const NETPOL_DNS: &str = include_str!("../scenarios/netpol-dns.yaml");
const NETPOL_DNS_EGRESS: &str = include_str!("../scenarios/netpol-dns-egress.yaml");
const NETPOL_DNS_FIX: &str = include_str!("../scenarios/netpol-dns-fix.yaml");
const ZONE_PARTITION: &str = include_str!("../scenarios/zone-partition.yaml");
const INGRESS_FANOUT: &str = include_str!("../scenarios/ingress-fanout.yaml");
const SIDECAR: &str = include_str!("../scenarios/sidecar.yaml");
const PRESTOP: &str = include_str!("../scenarios/prestop.yaml");
const PDB_DRAIN: &str = include_str!("../scenarios/pdb-drain.yaml");
const TAINTS: &str = include_str!("../scenarios/taints.yaml");
const TOPOLOGY_SPREAD: &str = include_str!("../scenarios/topology-spread.yaml");
const QUOTA: &str = include_str!("../scenarios/quota.yaml");

fn apply(t_ms: u64, name: &str, text: impl Into<String>) -> TimedInput {
    TimedInput { t_ms, input: Input::Apply { name: name.to_string(), text: text.into() }, user: false }
}

fn command(t_ms: u64, line: &str) -> TimedInput {
    TimedInput { t_ms, input: Input::Command(line.to_string()), user: false }
}

/// The name of the scenario the app opens on.
pub const DEFAULT_SCENARIO: &str = "nginx";

/// A gallery entry as the gallery shows it, before any simulation runs (its inputs are built
/// only where the simulation runs: [`by_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// URL name (`?scenario=<name>`).
    pub name: &'static str,
    /// Title on the card.
    pub title: &'static str,
    /// One or two sentences: what to watch for.
    pub summary: &'static str,
    /// The view that shows it best.
    pub view: &'static str,
}

/// Every scenario's card, in gallery order.
pub const CATALOG: &[Meta] = &[
    Meta {
        name: "nginx",
        title: "Deployment roll-out",
        summary: "An nginx Deployment with 3 replicas and a bare debug pod on the default 3-node cluster.",
        view: "overview",
    },
    Meta {
        name: "rolling-update",
        title: "Rolling update",
        summary: "4 replicas of nginx:1.27; at 20 s a new image rolls out with maxSurge/maxUnavailable 25%.",
        view: "overview",
    },
    Meta {
        name: "scale",
        title: "Scale up and down",
        summary: "A Deployment scaled from 2 to 8 replicas at 15 s and down to 3 at 45 s.",
        view: "cluster",
    },
    Meta {
        name: "crashloop",
        title: "CrashLoopBackOff",
        summary: "sh -c 'sleep 5; exit 1': the kubelet restarts the container with exponential back-off.",
        view: "lifecycle",
    },
    Meta {
        name: "imagepull",
        title: "ImagePullBackOff",
        summary: "An image from registry.invalid cannot be pulled: ErrImagePull, then back-off.",
        view: "lifecycle",
    },
    Meta {
        name: "init-containers",
        title: "Init containers",
        summary: "Two init containers run in order before the app container starts (Init:0/2, Init:1/2).",
        view: "lifecycle",
    },
    Meta {
        name: "job",
        title: "Run to completion",
        summary: "A Job with 3 completions, 2 in parallel, and a one-shot pod: Running, then Completed.",
        view: "lifecycle",
    },
    Meta {
        name: "unschedulable",
        title: "Unschedulable pod",
        summary: "A pod requests 16 CPUs on 4-CPU nodes; the explanation tab shows every filter verdict.",
        view: "cluster",
    },
    Meta {
        name: "node-failure",
        title: "Node failure",
        summary: "6 replicas on 3 nodes; at 15 s node-2's kubelet stops. The node controller marks it NotReady after its grace period, taints it, and its pods are evicted when their toleration runs out.",
        view: "cluster",
    },
    Meta {
        name: "service-dns",
        title: "Service and DNS",
        summary: "A client resolves web through kube-dns and fetches from it every second: each packet goes through kube-proxy's rules to an endpoint. At 40 s web scales to 3, at 70 s to 0 (refused).",
        view: "network",
    },
    Meta {
        name: "rolling-service",
        title: "Rolling update behind a Service",
        summary: "4 web replicas behind a Service, a client fetching /hostname five times a second. At 20 s `kubectl rollout restart`: each new pod joins the Service's endpoints once ready, each old one leaves as it starts terminating, and the answers move to the new names. A few connections reach an old pod that already stopped before kube-proxy's next sync and are refused: why apps add a preStop sleep.",
        view: "network",
    },
    Meta {
        name: "readiness",
        title: "Readiness gates traffic",
        summary: "web-a and web-b behind one Service, each ready while /tmp/ready exists. At 30 s the file is removed in web-b: after three failed probes it is not Ready, leaves the Service's ready endpoints and gets no more requests, though it keeps running. At 60 s the file is back, and so is its traffic.",
        view: "network",
    },
    Meta {
        name: "headless-dns",
        title: "Headless StatefulSet DNS",
        summary: "A StatefulSet behind the headless Service nginx; a client looks up nginx (one A record per ready pod) and web-0.nginx (a pod's stable name) every 5 s through kube-dns. At 40 s web scales to 3: web-2 appears in the answers once it is ready.",
        view: "network",
    },
    Meta {
        name: "traffic",
        title: "A thousand requests a second",
        summary: "25 busybox clients fetch from a 3-replica Service every 20 ms: about 1,000 requests and 1,000 DNS queries a virtual second, each a real connection through kube-dns, kube-proxy's rules and the fabric, spread evenly over the endpoints. Click a packet for its path.",
        view: "network",
    },
    Meta {
        name: "netpol",
        title: "Default deny, then allow by label",
        summary: "Two clients fetch from web every second. At 20 s a default-deny ingress policy drops both (their requests time out); at 40 s a policy admits role=frontend pods to web. The matrix shows who can connect and why; dropped packets name the policy.",
        view: "network",
    },
    Meta {
        name: "netpol-dns",
        title: "The egress policy that broke DNS",
        summary: "At 20 s an egress policy lets the client reach web's pods and nothing else: the name web stops resolving, because the queries to kube-dns are dropped. At 45 s a policy allowing DNS to the CoreDNS pods fixes it.",
        view: "network",
    },
    Meta {
        name: "zone-partition",
        title: "Zone partition",
        summary: "web runs one replica per zone; a client in zone-a fetches through the Service. At 20 s zone-a and zone-b are cut apart: connections to the zone-b endpoint time out, yet every node stays Ready and every endpoint stays in the Service. At 60 s it heals.",
        view: "network",
    },
    Meta {
        name: "ingress",
        title: "Ingress fan-out by path and host",
        summary: "The ingress-nginx controller from its release manifest, two hello-app versions and Ingresses routing hello.example/ and /v2, v1.example and *.example.com: a client's requests through the controller's Service reach the backend each rule picks. At 60 s web2 scales to 0 and its routes answer 503.",
        view: "network",
    },
    Meta {
        name: "hpa",
        title: "HPA driven by real traffic",
        summary: "php-apache behind a Service with an HPA at 50% CPU. At 20 s a busybox loop starts sending requests (30 ms of CPU each): the metrics-server reads what the processes use and the HPA adds replicas; at 4 min the load stops and, after the 5-minute stabilization window, it scales back.",
        view: "cluster",
    },
    Meta {
        name: "statefulset",
        title: "StatefulSet with storage",
        summary: "web-0, web-1, web-2 start one after another, each with its own claim: the scheduler picks a node, local-path provisions a volume there and the claim binds. At 60 s web-1 is deleted and comes back with the same name and claim.",
        view: "storage",
    },
    Meta {
        name: "block-storage",
        title: "Network block storage (CSI)",
        summary: "db-0's claim is on the block class: a disk is created in a1's zone, attached to a1, staged and published before the container starts and writes a line. At 40 s a1 is cordoned and db-0 deleted: the disk is unpublished, unstaged, detached, attached to a2 in the same zone, and the new db-0 prints both lines.",
        view: "storage",
    },
    Meta {
        name: "wffc",
        title: "Dynamic provisioning with WaitForFirstConsumer",
        summary: "A claim on the default class stays Pending (WaitForFirstConsumer): nothing is provisioned until a pod uses it. At 20 s the writer pod arrives: the scheduler picks a node and marks the claim, local-path creates a volume on that node, the claim binds, the pod mounts it and writes notes.txt. Click the claim to see the file.",
        view: "storage",
    },
    Meta {
        name: "statefulset-restart",
        title: "A StatefulSet keeps its data through a restart",
        summary: "counter-0 and counter-1 each get a claim from the template and append a line to their volume's history file at every start. At 40 s a rolling restart replaces both pods: each comes back with the same name, claim and volume, and prints two lines.",
        view: "storage",
    },
    Meta {
        name: "attach-failure",
        title: "A volume that cannot attach",
        summary: "vault's claim is on a class whose disks the cloud refuses to attach: the disk is provisioned and bound, but the VolumeAttachment records the driver's error, FailedAttachVolume repeats with back-off and vault stays ContainerCreating at the attach step. app, on the working block class, goes the whole path to published.",
        view: "storage",
    },
    Meta {
        name: "daemonset",
        title: "DaemonSet",
        summary: "A log agent on every node, placed by the DaemonSet controller through node affinity. At 20 s node-3 loses power: its agent is not rescheduled elsewhere.",
        view: "cluster",
    },
    Meta {
        name: "cronjob",
        title: "CronJob",
        summary: "The hello CronJob every minute: a Job per schedule time, its pod prints the date and completes; the controller keeps the last 3 successful Jobs.",
        view: "lifecycle",
    },
    Meta {
        name: "probes",
        title: "Liveness, readiness and startup probes",
        summary: "liveness-exec deletes its health file at 30 s: three failed probes later the kubelet restarts the container. readiness-exec stays unready (0/1 Running) until its file appears at 20 s. slow-start's startup probe holds the liveness probe off for its first 25 s, so it is never killed while starting.",
        view: "lifecycle",
    },
    Meta {
        name: "sidecar",
        title: "Sidecar containers",
        summary: "A native sidecar (an init container with restartPolicy: Always) ships the app's log: it starts before the app and runs beside it (READY 2/2). At 40 s the pod is deleted: the app stops first, the sidecar last. The inspector's Containers tab shows both and the shared log.",
        view: "lifecycle",
    },
    Meta {
        name: "prestop",
        title: "Graceful termination with preStop",
        summary: "nginx with a 10 s preStop hook and 30 s of grace. At 20 s the pod is deleted: it is Terminating while the hook runs, then the kubelet sends SIGTERM and nginx exits; the events and the flow show each step.",
        view: "lifecycle",
    },
    Meta {
        name: "pdb-drain",
        title: "A PodDisruptionBudget paces a drain",
        summary: "3 web replicas on node-1 may lose one at a time (maxUnavailable 1). At 30 s node-1 is drained: one pod is evicted, the others are refused by the budget until the replacement is Ready elsewhere; the drain runs again at 45 s and 60 s and evicts the next pod each time.",
        view: "cluster",
    },
    Meta {
        name: "taints",
        title: "Taints and tolerations",
        summary: "node-1 is tainted dedicated=gpu:NoSchedule: web's 4 replicas avoid it, the gpu-job that tolerates it runs there. At 40 s node-2 gets a NoExecute taint: its web pods are evicted at once and rescheduled onto node-3.",
        view: "cluster",
    },
    Meta {
        name: "topology-spread",
        title: "Topology spread constraints",
        summary: "6 replicas that may differ by at most one per zone land 2 per zone. At 30 s they scale to 7. At 50 s node-3 (zone-c) is cordoned and web scales to 9: one new pod fits, the other stays Pending, and its scheduling explanation names PodTopologySpread.",
        view: "cluster",
    },
    Meta {
        name: "quota",
        title: "A ResourceQuota caps a namespace",
        summary: "Namespace team-a may run 3 pods: web asks for 5, its ReplicaSet creates 3 and every further create is refused by the quota (see the events); the Deployment stays 3/5. At 40 s the quota is raised to 6 pods and the other two start.",
        view: "overview",
    },
    Meta {
        name: "preemption",
        title: "Priority and preemption",
        summary: "Low-priority batch pods fill the CPU. At 20 s a high-priority pod arrives that fits nowhere: the scheduler nominates a node and preempts a batch pod there, which gets its 30 s grace period before the frontend can bind; the batch Deployment's replacement stays Pending.",
        view: "cluster",
    },
    Meta {
        name: "big-cluster",
        title: "1,000 pods",
        summary: "40 nodes and a 1,000-replica Deployment: the canvas renderer at scale.",
        view: "cluster",
    },
    Meta {
        name: "churn",
        title: "Three hours of churn",
        summary: "A CronJob every minute, a TTL'd 5-pod Job every 30 s, a 20-replica Deployment restarted every 2 minutes and one scaled between 0 and 30 every 3 minutes, for three virtual hours on 10 nodes. Pods, Jobs and ReplicaSets come and go; Events expire after an hour and the history the UI keeps is bounded, so memory levels off.",
        view: "overview",
    },
    Meta {
        name: "huge-cluster",
        title: "10,000 pods",
        summary: "1,000 nodes and a 10,000-replica Deployment. Play at max speed and watch the ReplicaSet's slow-start batches and the scheduler fill the fleet; drag, scroll and zoom the canvas. Heavy: the simulation needs a minute or two of wall time at max speed to converge.",
        view: "cluster",
    },
    Meta {
        name: "huge-cluster-30k",
        title: "30,000 pods",
        summary: "1,000 nodes and a 30,000-replica Deployment: the largest world the browser holds (the simulation's memory grows to about 2 GB). Very heavy: several minutes of wall time at max speed to converge, on a desktop-class machine.",
        view: "cluster",
    },
];

/// A scenario's card by URL name.
pub fn meta(name: &str) -> Option<&'static Meta> {
    CATALOG.iter().find(|m| m.name == name)
}

/// A scenario's inputs, built now.
fn inputs_of(name: &str) -> Option<Vec<TimedInput>> {
    Some(match name {
        "nginx" => vec![apply(0, "nginx-deployment.yaml", NGINX)],
        "rolling-update" => vec![apply(0, "rolling-update.yaml", ROLLING), apply(20_000, "rolling-update-v2.yaml", ROLLING_V2)],
        "scale" => vec![
            apply(0, "scale.yaml", SCALE),
            apply(15_000, "scale-8.yaml", SCALE.replace("replicas: 2", "replicas: 8")),
            apply(45_000, "scale-3.yaml", SCALE.replace("replicas: 2", "replicas: 3")),
        ],
        "crashloop" => vec![apply(0, "crashloop.yaml", CRASHLOOP)],
        "imagepull" => vec![apply(0, "imagepull.yaml", IMAGEPULL)],
        "init-containers" => vec![apply(0, "init-containers.yaml", INIT)],
        "job" => vec![apply(0, "job.yaml", JOB)],
        "unschedulable" => vec![apply(0, "unschedulable.yaml", UNSCHEDULABLE)],
        "node-failure" => vec![apply(0, "node-failure.yaml", NODE_FAILURE), command(15_000, "fault node-down node-2")],
        "service-dns" => vec![
            apply(0, "service-dns.yaml", SERVICE_DNS),
            command(40_000, "kubectl scale deployment web --replicas=3"),
            command(70_000, "kubectl scale deployment web --replicas=0"),
        ],
        "rolling-service" => vec![apply(0, "rolling-service.yaml", ROLLING_SERVICE), command(20_000, "kubectl rollout restart deployment/web")],
        "readiness" => vec![
            apply(0, "readiness.yaml", READINESS),
            command(30_000, "kubectl exec web-b -- rm /tmp/ready"),
            command(60_000, "kubectl exec web-b -- touch /tmp/ready"),
        ],
        "headless-dns" => vec![apply(0, "headless-dns.yaml", HEADLESS_DNS), command(40_000, "kubectl scale statefulset web --replicas=3")],
        "traffic" => vec![apply(0, "traffic.yaml", TRAFFIC)],
        "netpol" => vec![
            apply(0, "netpol.yaml", NETPOL),
            apply(20_000, "default-deny-ingress.yaml", NETPOL_DENY),
            apply(40_000, "web-allow-frontend.yaml", NETPOL_ALLOW),
        ],
        "netpol-dns" => vec![
            apply(0, "netpol-dns.yaml", NETPOL_DNS),
            apply(20_000, "client-egress.yaml", NETPOL_DNS_EGRESS),
            apply(45_000, "client-allow-dns.yaml", NETPOL_DNS_FIX),
        ],
        "zone-partition" => {
            vec![apply(0, "zone-partition.yaml", ZONE_PARTITION), command(20_000, "fault partition zone=zone-a zone=zone-b"), command(60_000, "fault heal")]
        }
        "ingress" => vec![
            command(
                0,
                "kubectl apply -f https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.15.1/deploy/static/provider/kind/deploy.yaml",
            ),
            apply(0, "ingress-fanout.yaml", INGRESS_FANOUT),
            command(60_000, "kubectl scale deployment web2 --replicas=0"),
        ],
        "hpa" => vec![apply(0, "hpa.yaml", HPA), apply(20_000, "load-generator.yaml", HPA_LOAD), command(240_000, "kubectl delete pod load-generator")],
        "statefulset" => vec![apply(0, "statefulset.yaml", STATEFULSET), command(60_000, "kubectl delete pod web-1 --wait=false")],
        "block-storage" => {
            vec![apply(0, "block-storage.yaml", BLOCK_STORAGE), command(40_000, "kubectl cordon a1"), command(40_000, "kubectl delete pod db-0 --wait=false")]
        }
        "wffc" => vec![apply(0, "wffc.yaml", WFFC), apply(20_000, "wffc-writer.yaml", WFFC_WRITER)],
        "statefulset-restart" => {
            vec![apply(0, "statefulset-restart.yaml", STATEFULSET_RESTART), command(40_000, "kubectl rollout restart statefulset/counter")]
        }
        "attach-failure" => vec![apply(0, "attach-failure.yaml", ATTACH_FAILURE)],
        "daemonset" => vec![apply(0, "daemonset.yaml", DAEMONSET), command(20_000, "fault node-down node-3")],
        "cronjob" => vec![apply(0, "cronjob.yaml", CRONJOB)],
        "probes" => vec![apply(0, "probes.yaml", PROBES)],
        "sidecar" => vec![apply(0, "sidecar.yaml", SIDECAR), command(40_000, "kubectl delete pod app-with-sidecar --wait=false")],
        "prestop" => vec![apply(0, "prestop.yaml", PRESTOP), command(20_000, "kubectl delete pod web --wait=false")],
        "pdb-drain" => vec![
            apply(0, "pdb-drain.yaml", PDB_DRAIN),
            command(30_000, "kubectl drain node-1 --ignore-daemonsets"),
            command(45_000, "kubectl drain node-1 --ignore-daemonsets"),
            command(60_000, "kubectl drain node-1 --ignore-daemonsets"),
        ],
        "taints" => vec![
            command(0, "kubectl taint nodes node-1 dedicated=gpu:NoSchedule"),
            apply(1_000, "taints.yaml", TAINTS),
            command(40_000, "kubectl taint nodes node-2 maintenance=true:NoExecute"),
        ],
        "topology-spread" => vec![
            apply(0, "topology-spread.yaml", TOPOLOGY_SPREAD),
            command(30_000, "kubectl scale deployment web --replicas=7"),
            command(50_000, "kubectl cordon node-3"),
            command(51_000, "kubectl scale deployment web --replicas=9"),
        ],
        "quota" => vec![
            apply(0, "quota.yaml", QUOTA),
            command(40_000, "kubectl patch resourcequota team-a-quota -n team-a -p '{\"spec\":{\"hard\":{\"pods\":\"6\"}}}'"),
        ],
        "preemption" => vec![apply(0, "preemption.yaml", PREEMPTION), apply(20_000, "frontend.yaml", PREEMPTION_HIGH)],
        "big-cluster" => vec![apply(0, "big-cluster.yaml", big_cluster_yaml(40, 1000))],
        "churn" => churn_inputs(10, 180),
        "huge-cluster" => vec![apply(0, "huge-cluster.yaml", big_cluster_yaml(1000, 10_000))],
        "huge-cluster-30k" => vec![apply(0, "huge-cluster-30k.yaml", big_cluster_yaml(1000, 30_000))],
        _ => return None,
    })
}

/// Every scenario with its inputs, in gallery order.
pub fn all() -> Vec<Scenario> {
    CATALOG.iter().filter_map(|m| by_name(m.name)).collect()
}

/// Finds a scenario by URL name, its inputs built.
pub fn by_name(name: &str) -> Option<Scenario> {
    let meta = meta(name)?;
    Some(Scenario { name: meta.name, title: meta.title, summary: meta.summary, inputs: inputs_of(name)?, view: meta.view })
}

/// The churn scenario ([`kubesim_sim::scenario::Churn`], `kubesim bench churn`'s workload at
/// browser size: `web` 20 replicas, `elastic` 0 ↔ 30) on `nodes` nodes for `minutes` virtual
/// minutes.
pub fn churn_inputs(nodes: usize, minutes: u64) -> Vec<TimedInput> {
    use kubesim_sim::scenario::{Churn, ChurnStep};
    let churn = Churn { web_replicas: 20, elastic_replicas: 30 };
    let fleet = big_cluster_yaml(nodes, 0);
    let base = format!("{}{}", &fleet[..fleet.find("apiVersion: apps/v1").unwrap_or(fleet.len())], churn.base_yaml());
    let mut inputs = vec![apply(0, "churn.yaml", base)];
    for t in (Churn::PERIOD_MS..=minutes * 60_000).step_by(Churn::PERIOD_MS as usize) {
        inputs.extend(churn.steps_at(t).into_iter().map(|step| match step {
            ChurnStep::Apply(file) => apply(t, &file.name, file.text),
            ChurnStep::Command(line) => command(t, &line),
        }));
    }
    inputs
}

/// `nodes` Node objects (4 cpu, 16Gi, 110 pods, three zones) and a Deployment of `replicas` pods.
pub fn big_cluster_yaml(nodes: usize, replicas: usize) -> String {
    let mut text = String::new();
    let width = nodes.to_string().len().max(2);
    for i in 1..=nodes {
        let zone = ["zone-a", "zone-b", "zone-c"][i % 3];
        text.push_str(&format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i:0width$}\n  labels:\n    kubernetes.io/hostname: node-{i:0width$}\n    kubernetes.io/os: linux\n    topology.kubernetes.io/zone: {zone}\nstatus:\n  capacity: {{cpu: \"4\", memory: 16Gi, pods: \"110\"}}\n  allocatable: {{cpu: \"4\", memory: 16Gi, pods: \"110\"}}\n---\n"
        ));
    }
    text.push_str(&format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: fleet\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: fleet}}\n  template:\n    metadata:\n      labels: {{app: fleet}}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n        resources:\n          requests: {{cpu: 100m, memory: 64Mi}}\n"
    ));
    text
}
