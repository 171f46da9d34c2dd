//! Swarm testing, as FoundationDB and TigerBeetle's VOPR test themselves: from each seed a
//! random cluster (2–5 nodes over zones), a random workload (Deployments, a StatefulSet with
//! claims — on network block storage for even seeds —, a Job, Services and a client sending
//! traffic) and a random schedule of user actions (scale, image roll-outs, pod deletions,
//! quarantining pods behind a NetworkPolicy) and faults (node down/up, kubelet restarts,
//! control-plane partitions, partitions between nodes, packet loss, DNS outages, stopped
//! kube-proxies, container crashes). Every parameter comes from the seed.
//!
//! Two phases: **safety** — the schedule runs, and every commit is checked by the world's
//! invariant checkers ([`crate::checkers`]); then `fault heal` and **liveness** — the world must
//! converge: every Deployment and StatefulSet has its replicas ready and the Job completes,
//! within a bounded virtual time. A failure prints the seed; `kubesim swarm --seeds 1 --from S`
//! replays it exactly.

use crate::fault::Fault;
use crate::loader;
use crate::scenario::InputFile;
use crate::world::WorldConfig;
use kubesim_api::Millis;

/// SplitMix64: the plan's own generator (the world has its own, seeded the same).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5157_4152_4d00_0000)
    }
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// What one seed runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The seed.
    pub seed: u64,
    /// Node names.
    pub nodes: Vec<String>,
    /// The input file (nodes and workload).
    pub input: String,
    /// The schedule: (virtual time, command line).
    pub schedule: Vec<(Millis, String)>,
    /// When the safety phase ends (`fault heal`).
    pub heal_at: Millis,
}

const IMAGES: &[&str] = &["nginx:1.27", "nginx:1.26", "nginx:1.25"];

/// The plan of one seed, lasting `minutes` virtual minutes of safety phase.
pub fn plan(seed: u64, minutes: u64) -> Plan {
    let mut rng = Rng::new(seed);
    let node_count = rng.range(2, 5) as usize;
    let zones = ["zone-a", "zone-b", "zone-c"];
    let mut input = String::new();
    let mut nodes = Vec::new();
    for i in 0..node_count {
        let name = format!("node-{}", i + 1);
        let cpu = rng.range(4, 8);
        input.push_str(&format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{kubernetes.io/hostname: {name}, kubernetes.io/os: linux, topology.kubernetes.io/zone: {zone}}}\nstatus:\n  capacity: {{cpu: \"{cpu}\", memory: 16Gi, pods: \"110\"}}\n  allocatable: {{cpu: \"{cpu}\", memory: 16Gi, pods: \"110\"}}\n---\n",
            zone = zones[i % zones.len()]
        ));
        nodes.push(name);
    }
    let deployments = rng.range(1, 3);
    for d in 0..deployments {
        let replicas = rng.range(1, 6);
        let image = IMAGES[rng.range(0, IMAGES.len() as u64 - 1) as usize];
        input.push_str(&format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: app-{d}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: app-{d}}}}}\n  template:\n    metadata: {{labels: {{app: app-{d}}}}}\n    spec:\n      containers:\n      - name: web\n        image: {image}\n        resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n        readinessProbe: {{httpGet: {{path: /, port: 80}}, periodSeconds: 2}}\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: app-{d}}}\nspec:\n  selector: {{app: app-{d}}}\n  ports: [{{port: 80}}]\n---\n"
        ));
    }
    let sts_replicas = rng.range(1, 3);
    // Even seeds keep the StatefulSet's data on network block storage (CSI: attach, stage,
    // publish, detach as pods move), odd ones on the default local-path class.
    let class = if seed.is_multiple_of(2) { ", storageClassName: block" } else { "" };
    input.push_str(&format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: db}}\nspec:\n  clusterIP: None\n  selector: {{app: db}}\n  ports: [{{port: 80}}]\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: db}}\nspec:\n  serviceName: db\n  replicas: {sts_replicas}\n  selector: {{matchLabels: {{app: db}}}}\n  template:\n    metadata: {{labels: {{app: db}}}}\n    spec:\n      containers:\n      - name: db\n        image: nginx:1.27\n        volumeMounts: [{{name: data, mountPath: /usr/share/nginx/html}}]\n  volumeClaimTemplates:\n  - metadata: {{name: data}}\n    spec: {{accessModes: [ReadWriteOnce]{class}, resources: {{requests: {{storage: 1Gi}}}}}}\n---\n"
    ));
    let completions = rng.range(1, 4);
    input.push_str(&format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: batch}}\nspec:\n  completions: {completions}\n  parallelism: 2\n  backoffLimit: 20\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: c, image: 'busybox:1.37', command: [sh, -c, 'sleep {}']}}]\n---\n",
        rng.range(1, 20)
    ));
    input.push_str("apiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  containers:\n  - {name: c, image: 'busybox:1.37', command: [sh, -c, 'while true; do wget -q -O- -T 2 http://app-0 >/dev/null; sleep 2; done']}\n---\n");
    // A quarantine policy: pods labelled quarantine=true (an action below) admit no ingress.
    input.push_str("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: quarantine}\nspec:\n  podSelector: {matchLabels: {quarantine: 'true'}}\n  policyTypes: [Ingress]\n");

    let end = minutes.max(1) * 60_000;
    let mut schedule = Vec::new();
    let actions = rng.range(3, 8 + minutes);
    for _ in 0..actions {
        let at = rng.range(10_000, end);
        let node = &nodes[rng.range(0, node_count as u64 - 1) as usize];
        let d = rng.range(0, deployments - 1);
        let other = &nodes[rng.range(0, node_count as u64 - 1) as usize];
        let line = match rng.range(0, 17) {
            0 => format!("kubectl scale deployment app-{d} --replicas={}", rng.range(0, 8)),
            1 => format!("kubectl set image deployment/app-{d} web={}", IMAGES[rng.range(0, IMAGES.len() as u64 - 1) as usize]),
            2 => format!("kubectl delete pods -l app=app-{d} --wait=false"),
            3 => format!("kubectl scale statefulset db --replicas={}", rng.range(0, 3)),
            4 | 5 => format!("fault node-down {node}"),
            6 => format!("fault node-up {node}"),
            7 => format!("fault kubelet-restart {node}"),
            8 => format!("fault network-partition {node}"),
            9 => "fault container-crash db-0".to_string(),
            10 => "kubectl delete pod client --wait=false".to_string(),
            11 if node != other => format!("fault partition {node} {other}"),
            12 => format!("fault packet-loss {node} {}%", rng.range(5, 60)),
            13 => "fault dns-outage".to_string(),
            14 => format!("fault kube-proxy-stop {node}"),
            15 => format!("kubectl label pods -l app=app-{d} quarantine=true --overwrite"),
            16 => "kubectl debug client --image=busybox:1.37 --target=c --profile=general -- sleep 20".to_string(),
            _ => "fault heal".to_string(),
        };
        schedule.push((at, line));
    }
    // A deployment with no replicas left at the end still converges (0/0): make one roll-out
    // and scale-up certain so liveness has work to finish.
    schedule.push((end - 5_000, "kubectl scale deployment app-0 --replicas=2".into()));
    kubesim_api::sort::sort(&mut schedule);
    Plan { seed, nodes, input, schedule, heal_at: end }
}

/// What one seed did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// Nodes in its cluster.
    pub nodes: usize,
    /// Scheduled actions and faults.
    pub actions: usize,
    /// Broken invariants (checker: message at time).
    pub violations: Vec<String>,
    /// Why the liveness phase did not converge, if it did not.
    pub liveness: Option<String>,
    /// Virtual time at the end.
    pub end_ms: Millis,
    /// Commits made.
    pub revision: u64,
    /// The schedule that ran.
    pub schedule: Vec<(Millis, String)>,
    /// `kubectl get deployments,statefulsets,jobs,pods -o wide` at the end.
    pub final_state: String,
}

impl SeedReport {
    /// Whether the seed passed both phases.
    pub fn passed(&self) -> bool {
        self.violations.is_empty() && self.liveness.is_none()
    }
}

/// How long the liveness phase may take after the heal.
pub const LIVENESS_BUDGET_MS: Millis = 10 * 60_000;

/// Runs one seed: safety phase, heal, liveness phase.
pub fn run_seed(seed: u64, minutes: u64) -> SeedReport {
    let plan = plan(seed, minutes);
    let config = WorldConfig { record_history: false, ..WorldConfig::seeded(seed) };
    let (mut world, outcomes, errors) = loader::load(config, &[InputFile { name: format!("swarm-{seed}.yaml"), text: plan.input.clone() }]);
    let mut liveness = None;
    let load_errors: Vec<String> = errors.into_iter().chain(outcomes.iter().flat_map(|o| o.errors.iter().map(|e| e.message.clone()))).collect();
    if !load_errors.is_empty() {
        liveness = Some(format!("the plan did not load: {load_errors:?}"));
    }
    for (at, line) in &plan.schedule {
        world.run_until(*at);
        let _ = world.run_command(line);
    }
    world.run_until(plan.heal_at);
    let _ = world.fault(&Fault::Heal);
    // Liveness: converge within the budget.
    let deadline = plan.heal_at + LIVENESS_BUDGET_MS;
    let mut last = String::new();
    while liveness.is_none() && world.now() < deadline {
        world.run_until(world.now() + 10_000);
        match unconverged(&world) {
            None => break,
            Some(why) => last = why,
        }
    }
    if liveness.is_none() && unconverged(&world).is_some() {
        liveness = Some(format!("not converged {} s after the heal: {last}", LIVENESS_BUDGET_MS / 1000));
    }
    world.runtime_mut().finish_checks();
    let violations = world.runtime().violations().iter().map(|v| format!("{} at {} ms (revision {}): {}", v.checker, v.t_ms, v.revision, v.message)).collect();
    let final_state = world.run_command("kubectl get deployments,statefulsets,jobs,pods -o wide").stdout;
    SeedReport {
        seed,
        nodes: plan.nodes.len(),
        actions: plan.schedule.len(),
        violations,
        liveness,
        end_ms: world.now(),
        revision: world.api().store().revision(),
        schedule: plan.schedule.clone(),
        final_state,
    }
}

/// What has not converged: a Deployment or StatefulSet short of ready replicas, or the Job not
/// complete.
fn unconverged(world: &crate::World) -> Option<String> {
    let store = world.api().store();
    for resource in [("apps", "deployments"), ("apps", "statefulsets")] {
        for object in store.list(resource, Some("default")) {
            let json = object.to_json();
            let want = json.pointer("/spec/replicas").and_then(|v| v.as_i64()).unwrap_or(1);
            let ready = json.pointer("/status/readyReplicas").and_then(|v| v.as_i64()).unwrap_or(0);
            let updated = json.pointer("/status/updatedReplicas").and_then(|v| v.as_i64()).unwrap_or(want);
            let total = json.pointer("/status/replicas").and_then(|v| v.as_i64()).unwrap_or(0);
            if ready != want || total != want || (resource.1 == "deployments" && updated != want) {
                return Some(format!("{} {}: {ready}/{want} ready, {total} total, {updated} updated", object.kind(), object.name()));
            }
        }
    }
    for object in store.list(("batch", "jobs"), Some("default")) {
        let json = object.to_json();
        let complete = json.pointer("/status/conditions").and_then(|c| c.as_array()).is_some_and(|c| {
            c.iter().any(|c| c.get("type").and_then(|t| t.as_str()) == Some("Complete") && c.get("status").and_then(|s| s.as_str()) == Some("True"))
        });
        if !complete {
            return Some(format!("Job {} not complete", object.name()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_a_function_of_the_seed() {
        assert_eq!(plan(7, 2), plan(7, 2));
        assert_ne!(plan(7, 2).input, plan(8, 2).input);
        let p = plan(3, 2);
        assert!(p.schedule.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
        assert!(p.schedule.iter().all(|(t, _)| *t <= p.heal_at));
    }
}
