//! Swarm testing, as FoundationDB and TigerBeetle's VOPR test themselves: from each seed a
//! random cluster (2–5 nodes over zones, sometimes a tainted node), a random workload
//! (Deployments with Services and PodDisruptionBudgets, a StatefulSet with claims — on network
//! block storage for even seeds —, a DaemonSet, a Job, a CronJob, an HPA for some seeds, a
//! client sending traffic, a NetworkPolicy) and a random schedule of user actions (scale,
//! image roll-outs and undos, deletions with each propagation policy, pod deletions, drains
//! and uncordons, quarantining pods behind a NetworkPolicy, ephemeral containers) and faults
//! (node down/up, kubelet restarts, control-plane partitions, partitions between nodes, packet
//! loss, latency, DNS outages, stopped kube-proxies, container crashes, image-pull failures,
//! watch disconnects, store compactions). Every parameter comes from the seed; one seed in five
//! injects no faults at all, so the invariants that hold only without faults are exercised
//! too.
//!
//! Two phases: **safety** — the schedule runs, and every commit is checked by the world's
//! invariant checkers ([`crate::checkers`]); then `fault heal` (and every node uncordoned) and
//! **liveness** — the world must converge within [`LIVENESS_BUDGET_MS`]: every Deployment,
//! StatefulSet and DaemonSet has its replicas ready and updated, the Job completes, every Job
//! older than two minutes has finished, nothing has been deleting for more than two minutes,
//! and no dependent names a controller owner that is gone; then the end-of-run checks
//! ([`kubesim_runtime::Checker::finish`]).
//!
//! Every seed runs **twice** and the two histories must hash the same (the commit stream:
//! time, revision, type, actor and object of every write) — the determinism check.
//!
//! The schedule runs exactly as `kubesim run` runs `--at` commands ([`crate::run::start`]),
//! so a failing seed comes with a reproducer: the input as a YAML file and the `--at` lines,
//! **shrunk** by delta debugging ([`shrink`]: drop actions, then workload documents, while the
//! same invariant still fails), which `kubesim run FILE --seed S --for T --at ...` replays.

use crate::run::RunOptions;
use crate::scenario::InputFile;
use kubesim_api::Millis;
use kubesim_apiserver::ApiServer;
use kubesim_runtime::Checker;
use kubesim_store::Commit;

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
    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() as u64 - 1) as usize]
    }
}

/// What one seed runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The seed (of the plan and of the world).
    pub seed: u64,
    /// Node names.
    pub nodes: Vec<String>,
    /// The input file (nodes and workload): YAML documents separated by `---` lines.
    pub input: String,
    /// The schedule: (virtual time, command line), in time order.
    pub schedule: Vec<(Millis, String)>,
    /// When the safety phase ends (`fault heal`, every node uncordoned).
    pub heal_at: Millis,
    /// Whether the schedule injects faults.
    pub faults: bool,
}

impl Plan {
    /// The lines the heal runs at [`Plan::heal_at`].
    pub fn heal_lines(&self) -> Vec<String> {
        vec!["fault heal".to_string(), format!("kubectl uncordon {}", self.nodes.join(" "))]
    }

    /// The name of the input file (in reports and reproducers).
    pub fn file_name(&self) -> String {
        format!("swarm-{}.yaml", self.seed)
    }

    /// The run this plan is, as `kubesim run` would run it: the input file, the seed, the
    /// schedule and the heal as `--at` commands, `--for end_ms`.
    pub fn run_options(&self, end_ms: Option<Millis>) -> RunOptions {
        let mut commands = self.schedule.clone();
        commands.extend(self.heal_lines().into_iter().map(|l| (self.heal_at, l)));
        RunOptions {
            files: vec![InputFile { name: self.file_name(), text: self.input.clone() }],
            seed: self.seed,
            duration_ms: end_ms,
            commands,
            ..Default::default()
        }
    }

    /// The `kubesim run` command line that replays this plan for `end_ms` (shell-quoted).
    pub fn command_line(&self, end_ms: Millis) -> String {
        let mut line = format!("kubesim run {} --seed {} --for {end_ms}ms", self.file_name(), self.seed);
        for (at, command) in self.run_options(None).commands {
            line.push_str(&format!(" \\\n  --at {at}ms '{}'", command.replace('\'', r"'\''")));
        }
        line
    }
}

const IMAGES: &[&str] = &["nginx:1.27", "nginx:1.26", "nginx:1.25"];

/// The plan of one seed, lasting `minutes` virtual minutes of safety phase.
pub fn plan(seed: u64, minutes: u64) -> Plan {
    let mut rng = Rng::new(seed);
    let faults = !seed.is_multiple_of(5);
    let node_count = rng.range(2, 5) as usize;
    let zones = ["zone-a", "zone-b", "zone-c"];
    let tainted = rng.chance(30).then(|| rng.range(1, node_count as u64));
    let mut docs: Vec<String> = Vec::new();
    let mut nodes = Vec::new();
    for i in 0..node_count {
        let name = format!("node-{}", i + 1);
        let cpu = rng.range(4, 8);
        // A PreferNoSchedule taint steers pods away without stranding any.
        let taint = if tainted == Some(i as u64 + 1) { "spec:\n  taints: [{key: dedicated, value: batch, effect: PreferNoSchedule}]\n" } else { "" };
        docs.push(format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{kubernetes.io/hostname: {name}, kubernetes.io/os: linux, topology.kubernetes.io/zone: {zone}}}\n{taint}status:\n  capacity: {{cpu: \"{cpu}\", memory: 16Gi, pods: \"110\"}}\n  allocatable: {{cpu: \"{cpu}\", memory: 16Gi, pods: \"110\"}}\n",
            zone = zones[i % zones.len()]
        ));
        nodes.push(name);
    }
    let deployments = rng.range(1, 3);
    for d in 0..deployments {
        let replicas = rng.range(1, 6);
        let image = rng.pick(IMAGES);
        docs.push(format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: app-{d}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: app-{d}}}}}\n  template:\n    metadata: {{labels: {{app: app-{d}}}}}\n    spec:\n      containers:\n      - name: web\n        image: {image}\n        resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n        readinessProbe: {{httpGet: {{path: /, port: 80}}, periodSeconds: 2}}\n"
        ));
        docs.push(format!("apiVersion: v1\nkind: Service\nmetadata: {{name: app-{d}}}\nspec:\n  selector: {{app: app-{d}}}\n  ports: [{{port: 80}}]\n"));
        if rng.chance(60) {
            docs.push(format!("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: app-{d}}}\nspec:\n  minAvailable: 1\n  selector: {{matchLabels: {{app: app-{d}}}}}\n"));
        }
    }
    if seed % 3 == 1 {
        docs.push("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: app-0}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: app-0}\n  minReplicas: 1\n  maxReplicas: 4\n  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n".into());
    }
    let sts_replicas = rng.range(1, 3);
    // Even seeds keep the StatefulSet's data on network block storage (CSI: attach, stage,
    // publish, detach as pods move), odd ones on the default local-path class.
    let class = if seed.is_multiple_of(2) { ", storageClassName: block" } else { "" };
    docs.push("apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec:\n  clusterIP: None\n  selector: {app: db}\n  ports: [{port: 80}]\n".into());
    docs.push(format!(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: db}}\nspec:\n  serviceName: db\n  replicas: {sts_replicas}\n  selector: {{matchLabels: {{app: db}}}}\n  template:\n    metadata: {{labels: {{app: db}}}}\n    spec:\n      containers:\n      - name: db\n        image: nginx:1.27\n        volumeMounts: [{{name: data, mountPath: /usr/share/nginx/html}}]\n  volumeClaimTemplates:\n  - metadata: {{name: data}}\n    spec: {{accessModes: [ReadWriteOnce]{class}, resources: {{requests: {{storage: 1Gi}}}}}}\n"
    ));
    docs.push("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec:\n      containers: [{name: a, image: 'busybox:1.37', command: [sh, -c, 'while true; do sleep 60; done'], resources: {requests: {cpu: 10m, memory: 16Mi}}}]\n".into());
    let completions = rng.range(1, 4);
    docs.push(format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: batch}}\nspec:\n  completions: {completions}\n  parallelism: 2\n  backoffLimit: 20\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: c, image: 'busybox:1.37', command: [sh, -c, 'sleep {}']}}]\n",
        rng.range(1, 20)
    ));
    docs.push("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: tick}\nspec:\n  schedule: '*/2 * * * *'\n  concurrencyPolicy: Forbid\n  successfulJobsHistoryLimit: 1\n  failedJobsHistoryLimit: 1\n  jobTemplate:\n    spec:\n      backoffLimit: 3\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: c, image: 'busybox:1.37', command: [sh, -c, 'sleep 3']}]\n".into());
    docs.push("apiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  containers:\n  - {name: c, image: 'busybox:1.37', command: [sh, -c, 'while true; do wget -q -O- -T 2 http://app-0 >/dev/null; sleep 2; done']}\n".into());
    // A quarantine policy: pods labelled quarantine=true (an action below) admit no ingress.
    docs.push("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: quarantine}\nspec:\n  podSelector: {matchLabels: {quarantine: 'true'}}\n  policyTypes: [Ingress]\n".into());

    let end = minutes.max(1) * 60_000;
    let mut schedule = Vec::new();
    let actions = rng.range(3, 8 + minutes);
    for _ in 0..actions {
        let at = rng.range(10_000, end);
        let node = rng.pick(&nodes).clone();
        let other = rng.pick(&nodes).clone();
        let d = rng.range(0, deployments - 1);
        let image = *rng.pick(IMAGES);
        let cascade = *rng.pick(&["background", "foreground", "orphan"]);
        // User actions first (0..=14), faults after; fault-free seeds draw actions only.
        let kind = if faults { rng.range(0, 32) } else { rng.range(0, 14) };
        let line = match kind {
            0 | 1 => format!("kubectl scale deployment app-{d} --replicas={}", rng.range(0, 8)),
            2 | 3 => format!("kubectl set image deployment/app-{d} web={image}"),
            4 => format!("kubectl rollout undo deployment/app-{d}"),
            5 => format!("kubectl delete pods -l app=app-{d} --wait=false"),
            6 => format!("kubectl scale statefulset db --replicas={}", rng.range(0, 3)),
            7 => format!("kubectl drain {node} --ignore-daemonsets --delete-emptydir-data --force --grace-period=5"),
            8 => format!("kubectl uncordon {node}"),
            9 => format!("kubectl delete deployment app-{d} --cascade={cascade} --wait=false"),
            10 => format!("kubectl delete statefulset db --cascade={cascade} --wait=false"),
            11 => format!("kubectl label pods -l app=app-{d} quarantine=true --overwrite"),
            12 => "kubectl debug client --image=busybox:1.37 --target=c --profile=general -- sleep 20".to_string(),
            13 => "kubectl delete pod client --wait=false".to_string(),
            14 => format!(
                "kubectl delete {} --cascade={cascade} --wait=false",
                rng.pick(&["daemonset agent", "job batch", "cronjob tick", "service app-0", "pdb app-0"])
            ),
            15 | 16 => format!("fault node-down {node}"),
            17 => format!("fault node-up {node}"),
            18 => format!("fault kubelet-restart {node}"),
            19 => format!("fault network-partition {node}"),
            20 => "fault container-crash db-0".to_string(),
            21 if node != other => format!("fault partition {node} {other}"),
            22 => format!("fault packet-loss {node} {}%", rng.range(5, 60)),
            23 => format!("fault latency {node} {}ms", rng.range(20, 800)),
            24 => "fault dns-outage".to_string(),
            25 => format!("fault kube-proxy-stop {node}"),
            26 | 27 => format!("fault image-pull-failure {image}"),
            28 => "fault compaction".to_string(),
            29 => format!("fault watch-disconnect {node}"),
            30 => format!("fault kube-proxy-start {node}"),
            _ => "fault heal".to_string(),
        };
        schedule.push((at, line));
    }
    // A deployment with no replicas left at the end still converges (0/0): make one roll-out
    // and scale-up certain so liveness has work to finish.
    schedule.push((end - 5_000, "kubectl scale deployment app-0 --replicas=2".into()));
    kubesim_api::sort::sort(&mut schedule);
    Plan { seed, nodes, input: docs.join("---\n"), schedule, heal_at: end, faults }
}

/// How long the liveness phase may take after the heal.
pub const LIVENESS_BUDGET_MS: Millis = 10 * 60_000;

/// How long a Job, or an object's deletion, may take before liveness calls it stuck.
pub const SETTLE_MS: Millis = 2 * 60_000;

/// A fingerprint of a run's history: FNV-1a over every commit's time, revision, type, actor
/// and object (its JSON). Two runs of the same plan must agree on it.
#[derive(Clone, Debug)]
pub struct HistoryHash {
    hash: kubesim_api::hash::Fnv64,
    /// Commits folded in.
    pub commits: u64,
}

impl Default for HistoryHash {
    fn default() -> HistoryHash {
        HistoryHash { hash: kubesim_api::hash::Fnv64::new(), commits: 0 }
    }
}

impl HistoryHash {
    /// The name it is registered under.
    pub const NAME: &'static str = "history-hash";
    /// The hash so far, as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.hash.finish())
    }
}

impl Checker for HistoryHash {
    fn name(&self) -> &str {
        HistoryHash::NAME
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let object = serde_json::to_string(&commit.object.to_json()).expect("objects serialize");
        self.hash = self
            .hash
            .bytes(&commit.t_ms.to_le_bytes())
            .bytes(&commit.revision.to_le_bytes())
            .bytes(commit.event_type.as_str().as_bytes())
            .bytes(commit.actor.as_bytes())
            .byte(0)
            .bytes(object.as_bytes())
            .byte(b'\n');
        self.commits += 1;
        Ok(())
    }
}

/// What one run of a plan gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Broken invariants (checker at time (revision): message).
    pub violations: Vec<String>,
    /// The name of the checker of the first violation.
    pub first_checker: Option<String>,
    /// Why the liveness phase did not converge, if it did not.
    pub liveness: Option<String>,
    /// The panic that ended the run, if one did (the model must never panic).
    pub panic: Option<String>,
    /// Virtual time at the end.
    pub end_ms: Millis,
    /// Commits made.
    pub revision: u64,
    /// The history's fingerprint ([`HistoryHash`]).
    pub hash: String,
    /// `kubectl get deployments,statefulsets,daemonsets,jobs,pods -o wide` at the end.
    pub final_state: String,
}

impl Outcome {
    /// What failed, as a signature shrinking preserves: the first violated checker, or
    /// `liveness`; `None` if the run passed.
    pub fn signature(&self) -> Option<String> {
        self.first_checker
            .clone()
            .or_else(|| self.panic.as_ref().map(|_| "panic".to_string()))
            .or_else(|| self.liveness.as_ref().map(|_| "liveness".to_string()))
    }
}

/// Runs a plan once: the safety phase, the heal, the liveness phase (up to `limit_ms` if
/// given, else until converged or [`LIVENESS_BUDGET_MS`] after the heal), the end-of-run
/// checks.
pub fn execute(plan: &Plan, limit_ms: Option<Millis>) -> Outcome {
    execute_until(plan, limit_ms, None)
}

/// [`execute`], stopping early (every 10 virtual s) once checker `stop_on` has recorded a
/// violation: shrinking needs to know only whether the same invariant breaks.
pub fn execute_until(plan: &Plan, limit_ms: Option<Millis>, stop_on: Option<&str>) -> Outcome {
    // A panic anywhere in the model is a failure of the seed (reported, shrunk), not of the run.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| execute_inner(plan, limit_ms, stop_on))).unwrap_or_else(|payload| {
        let message = payload.downcast_ref::<String>().cloned().or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        Outcome {
            violations: Vec::new(),
            first_checker: None,
            liveness: None,
            panic: Some(message),
            end_ms: 0,
            revision: 0,
            hash: String::new(),
            final_state: String::new(),
        }
    })
}

fn execute_inner(plan: &Plan, limit_ms: Option<Millis>, stop_on: Option<&str>) -> Outcome {
    let options = plan.run_options(None);
    let (mut world, files, errors) = crate::run::start(&RunOptions { record_history: Some(false), ..options });
    world.runtime_mut().add_checker(Box::new(HistoryHash::default()));
    let mut liveness = None;
    let load_errors: Vec<String> = errors.into_iter().chain(files.iter().flat_map(|f| f.errors.iter().map(|e| e.message.clone()))).collect();
    if !load_errors.is_empty() {
        liveness = Some(format!("the plan did not load: {load_errors:?}"));
    }
    let broke = |world: &crate::World| stop_on.is_some_and(|c| world.runtime().violations().iter().any(|v| v.checker == c));
    while world.now() < plan.heal_at && !broke(&world) {
        world.run_until((world.now() + 10_000).min(plan.heal_at));
    }
    let deadline = if broke(&world) { world.now() } else { limit_ms.unwrap_or(plan.heal_at + LIVENESS_BUDGET_MS) };
    while liveness.is_none() && world.now() < deadline && !broke(&world) {
        world.run_until((world.now() + 10_000).min(deadline));
        if limit_ms.is_none() && unconverged(&world).is_none() {
            break;
        }
    }
    if liveness.is_none() && !broke(&world) {
        if let Some(why) = unconverged(&world) {
            liveness = Some(format!("not converged {} s after the heal: {why}", (world.now() - plan.heal_at) / 1000));
        }
    }
    world.runtime_mut().finish_checks();
    let found = world.runtime().violations();
    let violations = found.iter().map(|v| format!("{} at {} ms (revision {}): {}", v.checker, v.t_ms, v.revision, v.message)).collect();
    let first_checker = found.first().map(|v| v.checker.clone());
    let hash = world.runtime().checker_as::<HistoryHash>(HistoryHash::NAME).map(HistoryHash::hex).unwrap_or_default();
    let final_state = world.run_command("kubectl get deployments,statefulsets,daemonsets,jobs,pods -o wide").stdout;
    Outcome { violations, first_checker, liveness, panic: None, end_ms: world.now(), revision: world.api().store().revision(), hash, final_state }
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
    /// Whether it injected faults.
    pub faults: bool,
    /// The first run.
    pub outcome: Outcome,
    /// Why the second run differed from the first, if it did (the determinism check).
    pub divergence: Option<String>,
    /// The plan that ran.
    pub plan: Plan,
}

impl SeedReport {
    /// Whether the seed passed both phases, twice, identically.
    pub fn passed(&self) -> bool {
        self.outcome.signature().is_none() && self.divergence.is_none()
    }
}

/// Runs one seed twice (safety phase, heal, liveness phase) and compares the two histories.
pub fn run_seed(seed: u64, minutes: u64) -> SeedReport {
    let plan = plan(seed, minutes);
    let outcome = execute(&plan, None);
    let again = execute(&plan, None);
    let divergence = (again != outcome).then(|| {
        format!(
            "the second run differed: history {} vs {}, {} vs {} commits, ended at {} vs {} ms, {} vs {} violations",
            outcome.hash,
            again.hash,
            outcome.revision,
            again.revision,
            outcome.end_ms,
            again.end_ms,
            outcome.violations.len(),
            again.violations.len()
        )
    });
    SeedReport { seed, nodes: plan.nodes.len(), actions: plan.schedule.len(), faults: plan.faults, outcome, divergence, plan }
}

/// Runs `seeds` on `jobs` threads (each seed is independent: its own world); reports in seed
/// order, each handed to `each` as soon as it and every earlier seed are done.
pub fn run_seeds(seeds: &[u64], minutes: u64, jobs: usize, mut each: impl FnMut(&SeedReport)) -> Vec<SeedReport> {
    let jobs = jobs.clamp(1, seeds.len().max(1));
    let mut reports: Vec<Option<SeedReport>> = vec![None; seeds.len()];
    let mut next_to_print = 0;
    #[cfg(not(target_arch = "wasm32"))]
    if jobs > 1 {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, SeedReport)>();
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                let tx = tx.clone();
                let next = &next;
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(seed) = seeds.get(i) else { break };
                    if tx.send((i, run_seed(*seed, minutes))).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            for (i, report) in rx {
                reports[i] = Some(report);
                while let Some(Some(report)) = reports.get(next_to_print) {
                    each(report);
                    next_to_print += 1;
                }
            }
        });
        return reports.into_iter().flatten().collect();
    }
    for (i, seed) in seeds.iter().enumerate() {
        let report = run_seed(*seed, minutes);
        each(&report);
        reports[i] = Some(report);
    }
    reports.into_iter().flatten().collect()
}

/// Delta debugging (ddmin) over a list: the smallest sublist (1-minimal: dropping any one
/// more element makes `fails` false) for which `fails` still holds, trying at most `budget`
/// candidates.
pub fn ddmin<T: Clone>(items: &[T], budget: &mut usize, mut fails: impl FnMut(&[T]) -> bool) -> Vec<T> {
    let mut current = items.to_vec();
    let mut n = 2usize;
    while current.len() >= 2 && *budget > 0 {
        let chunk = current.len().div_ceil(n);
        let mut reduced = false;
        // Complements first: drop one chunk at a time.
        for start in (0..current.len()).step_by(chunk) {
            if *budget == 0 {
                break;
            }
            let candidate: Vec<T> = current.iter().enumerate().filter(|(i, _)| *i < start || *i >= start + chunk).map(|(_, x)| x.clone()).collect();
            *budget -= 1;
            if fails(&candidate) {
                current = candidate;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if n >= current.len() {
                break;
            }
            n = (n * 2).min(current.len());
        }
    }
    if current.len() == 1 && *budget > 0 {
        *budget -= 1;
        if fails(&[]) {
            current.clear();
        }
    }
    current
}

/// Shrinks a failing plan: the smallest schedule, then the smallest workload (its documents
/// other than Nodes), for which a run still fails with the same `signature`
/// ([`Outcome::signature`]), each candidate run up to the original run's end `limit_ms`.
/// At most `budget` runs.
pub fn shrink(plan: &Plan, signature: &str, limit_ms: Millis, budget: usize) -> Plan {
    let stop_on = (signature != "liveness").then_some(signature);
    shrink_with(plan, budget, |candidate| execute_until(candidate, Some(limit_ms), stop_on).signature().as_deref() == Some(signature))
}

/// [`shrink`] with its own test of a candidate: `fails` says whether the candidate plan still
/// fails as the original did.
pub fn shrink_with(plan: &Plan, mut budget: usize, mut fails: impl FnMut(&Plan) -> bool) -> Plan {
    let mut best = plan.clone();
    let schedule = ddmin(&plan.schedule, &mut budget, |s| fails(&Plan { schedule: s.to_vec(), ..best.clone() }));
    best.schedule = schedule;
    let docs: Vec<String> = plan.input.split("---\n").map(str::to_string).collect();
    let (nodes, workload): (Vec<String>, Vec<String>) = docs.into_iter().partition(|d| d.starts_with("apiVersion: v1\nkind: Node\n"));
    let join = |w: &[String]| nodes.iter().chain(w.iter()).cloned().collect::<Vec<_>>().join("---\n");
    let workload = ddmin(&workload, &mut budget, |w| fails(&Plan { input: join(w), ..best.clone() }));
    best.input = join(&workload);
    best
}

/// What has not converged: a Deployment, StatefulSet or DaemonSet short of ready and updated
/// replicas, the Job `batch` not complete, a Job older than [`SETTLE_MS`] not finished, an
/// object deleting for longer than that, or a dependent whose controller owner is gone.
fn unconverged(world: &crate::World) -> Option<String> {
    let store = world.api().store();
    let now = world.now();
    let age = |json: &serde_json::Value, field: &str| {
        json.pointer(field).and_then(|t| t.as_str()).and_then(kubesim_api::time::parse_rfc3339).map(|t| now.saturating_sub(t)).unwrap_or(0)
    };
    for resource in [("apps", "deployments"), ("apps", "statefulsets")] {
        for object in store.list(resource, Some("default")) {
            let json = object.to_json();
            if json.pointer("/metadata/deletionTimestamp").is_some() {
                continue;
            }
            let want = json.pointer("/spec/replicas").and_then(|v| v.as_i64()).unwrap_or(1);
            let ready = json.pointer("/status/readyReplicas").and_then(|v| v.as_i64()).unwrap_or(0);
            let updated = json.pointer("/status/updatedReplicas").and_then(|v| v.as_i64()).unwrap_or(want);
            let total = json.pointer("/status/replicas").and_then(|v| v.as_i64()).unwrap_or(0);
            if ready != want || total != want || (resource.1 == "deployments" && updated != want) {
                return Some(format!("{} {}: {ready}/{want} ready, {total} total, {updated} updated", object.kind(), object.name()));
            }
        }
    }
    for object in store.list(("apps", "daemonsets"), Some("default")) {
        let json = object.to_json();
        let get = |f: &str| json.pointer(f).and_then(|v| v.as_i64()).unwrap_or(0);
        let (desired, ready, updated) = (get("/status/desiredNumberScheduled"), get("/status/numberReady"), get("/status/updatedNumberScheduled"));
        if desired == 0 || ready != desired || updated != desired {
            return Some(format!("DaemonSet {}: {ready}/{desired} ready, {updated} updated", object.name()));
        }
    }
    for object in store.list(("batch", "jobs"), Some("default")) {
        let json = object.to_json();
        let finished = |kind: &str| {
            json.pointer("/status/conditions").and_then(|c| c.as_array()).is_some_and(|c| {
                c.iter().any(|c| c.get("type").and_then(|t| t.as_str()) == Some(kind) && c.get("status").and_then(|s| s.as_str()) == Some("True"))
            })
        };
        if object.name() == "batch" && !finished("Complete") {
            return Some("Job batch not complete".to_string());
        }
        if !finished("Complete") && !finished("Failed") && age(&json, "/metadata/creationTimestamp") > SETTLE_MS {
            return Some(format!("Job {} running for over {} s", object.name(), SETTLE_MS / 1000));
        }
    }
    for resource in store.resources() {
        if let Some(object) =
            store.list(resource, None).find(|o| o.metadata().deletion_timestamp.is_some() && age(&o.to_json(), "/metadata/deletionTimestamp") > SETTLE_MS)
        {
            return Some(format!("{} {} still deleting", object.kind(), object.name()));
        }
    }
    crate::checkers::dangling_owners(world.api(), true).into_iter().next()
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
        assert!(!plan(5, 2).faults && plan(5, 2).schedule.iter().all(|(_, l)| !l.starts_with("fault")), "every fifth seed injects no faults");
    }

    #[test]
    fn ddmin_finds_a_minimal_failing_subset() {
        let items: Vec<u32> = (0..20).collect();
        let mut budget = 1_000;
        let found = ddmin(&items, &mut budget, |s| s.contains(&3) && s.contains(&17));
        assert_eq!(found, [3, 17]);
        let mut budget = 1_000;
        assert_eq!(ddmin(&items, &mut budget, |_| true), Vec::<u32>::new());
        let mut budget = 3;
        assert_eq!(ddmin(&items, &mut budget, |s| s.contains(&3)).len(), 10, "stops at the budget");
    }
}
