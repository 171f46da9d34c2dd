//! A pod worker's state (pkg/kubelet/pod_workers.go): one per pod the kubelet has admitted,
//! moving through an explicit state machine — syncing, terminating, terminated — with at most
//! one CRI call in flight.

use kubesim_api::k8s_openapi::api::core::v1::Pod;
use kubesim_api::object::Object;
use kubesim_api::Millis;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Container restart backoff (initial) and the stable-run reset window.
pub const BACKOFF_INITIAL_MS: Millis = 10_000;
/// Maximum container restart / image pull backoff.
pub const BACKOFF_MAX_MS: Millis = 300_000;

/// Where a pod worker is in its life (upstream's SyncPod → SyncTerminatingPod →
/// SyncTerminatedPod, plus admission's rejection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerState {
    /// Admission rejected the pod (OutOfcpu, OutOfpods, ...): nothing runs, ever.
    Rejected,
    /// Driving the pod towards its spec: sandbox, images, containers, restarts.
    Syncing,
    /// Stopping: containers got SIGTERM (after their preStop hooks), then the sandbox stops.
    Terminating,
    /// Everything stopped and the final status is written (or the pod was evicted): the
    /// worker only waits for the API object to go.
    Terminated,
}

impl WorkerState {
    /// Whether the state machine allows `self → next`.
    pub fn may_become(self, next: WorkerState) -> bool {
        use WorkerState::*;
        matches!((self, next), (Syncing, Terminating) | (Syncing, Terminated) | (Terminating, Terminated) | (Terminating, Terminating) | (Syncing, Syncing))
    }
}

/// The CRI call a worker has in flight. Its effect lands when its modelled latency has passed.
#[derive(Clone, Debug)]
pub enum Step {
    /// RunPodSandbox (and CNI ADD).
    RunSandbox,
    /// PullImage.
    Pull {
        /// The container the image is for.
        container: String,
        /// The image reference.
        image: String,
        /// When the pull began.
        started: Millis,
    },
    /// CreateContainer.
    Create {
        /// The container.
        container: String,
    },
    /// StartContainer.
    Start {
        /// The container.
        container: String,
        /// Its runtime id.
        id: String,
    },
    /// StopPodSandbox (and CNI DEL).
    StopSandbox,
}

/// client-go flowcontrol.Backoff for one key: `duration` and the event time of the last `next`.
#[derive(Clone, Debug, Default)]
pub struct Backoff {
    /// The current backoff window.
    pub duration_ms: Millis,
    /// The event time the window was last extended at.
    pub last_update: Millis,
}

impl Backoff {
    fn expired(&self, event_time: Millis) -> bool {
        event_time.saturating_sub(self.last_update) > 2 * BACKOFF_MAX_MS
    }
    /// IsInBackOffSince(eventTime): inside the window that started at `event_time`.
    pub fn in_backoff_since(&self, event_time: Millis, now: Millis) -> bool {
        self.duration_ms > 0 && !self.expired(event_time) && now.saturating_sub(event_time) < self.duration_ms
    }
    /// Next(eventTime): 10 s, doubling to 5 min; reset once stable for 2 × max.
    pub fn next(&mut self, event_time: Millis) {
        if self.duration_ms == 0 || self.expired(event_time) {
            self.duration_ms = BACKOFF_INITIAL_MS;
        } else {
            self.duration_ms = (self.duration_ms * 2).min(BACKOFF_MAX_MS);
        }
        self.last_update = event_time;
    }
}

/// One pod worker.
#[derive(Clone, Debug)]
pub struct PodWorker {
    /// The worker's number (names its timers).
    pub seq: u64,
    /// The pod as last seen (from the API or our own status write).
    pub pod: Arc<Object>,
    /// Where the worker is.
    pub state: WorkerState,
    /// The pod's sandbox, once created.
    pub sandbox: Option<String>,
    /// The pod IP the network plugin assigned.
    pub ip: Option<String>,
    /// The CRI call in flight.
    pub in_flight: Option<Step>,
    /// A sync was requested while a call was in flight: run it when the call completes.
    pub resync_pending: bool,
    /// When the worker first synced (status.startTime).
    pub start_time: Option<Millis>,
    /// Container runtime ids per container name, oldest first (one per attempt).
    pub instances: BTreeMap<String, Vec<String>>,
    /// Waiting reasons and messages per container (ErrImagePull, CrashLoopBackOff, ...).
    pub waiting: BTreeMap<String, (String, String)>,
    /// Restart backoff per container.
    pub restart_backoff: BTreeMap<String, Backoff>,
    /// Pull backoff per image.
    pub pull_backoff: BTreeMap<String, Backoff>,
    /// Containers already sent a stop.
    pub stop_requested: BTreeSet<String>,
    /// When the error requeue fires, if armed.
    pub retry_at: Option<Millis>,
    /// The pod as our last status write stored it, its status the last one written (a
    /// status the same as it is not written again): a status-only update that differs from it
    /// was someone else's (the node lifecycle controller marking the pod not ready), and the
    /// status manager writes its own again (syncBatch's needsReconcile).
    pub written: Option<Arc<Object>>,
    /// Since when the sync waits for the pod's CSI volumes (WaitForAttachAndMount).
    pub volume_wait_since: Option<Millis>,
    /// The pod's requests (generation, cpu millicores, memory bytes), remembered for the
    /// generation they were computed at: admission sums every active pod's for each new pod,
    /// and only a spec change (a new generation) changes them.
    requests: std::cell::Cell<Option<(i64, i64, i64)>>,
    /// The pod's volumes left the volume manager's desired state (terminated).
    pub volumes_released: bool,
    /// Termination waits for the pod's volumes to be unmounted.
    pub unmount_wait: bool,
}

impl PodWorker {
    /// A new worker for a pod the kubelet just saw.
    pub fn new(seq: u64, pod: Arc<Object>) -> PodWorker {
        PodWorker {
            seq,
            pod,
            state: WorkerState::Syncing,
            sandbox: None,
            ip: None,
            in_flight: None,
            resync_pending: false,
            start_time: None,
            instances: BTreeMap::new(),
            waiting: BTreeMap::new(),
            restart_backoff: BTreeMap::new(),
            pull_backoff: BTreeMap::new(),
            stop_requested: BTreeSet::new(),
            retry_at: None,
            written: None,
            volume_wait_since: None,
            requests: std::cell::Cell::new(None),
            volumes_released: false,
            unmount_wait: false,
        }
    }

    /// The pod.
    pub fn pod(&self) -> &Pod {
        self.pod.as_pod().expect("pod workers hold pods")
    }

    /// The pod's requests (cpu millicores, memory bytes: `PodRequests`), computed once per
    /// generation of its spec.
    pub fn requests(&self) -> (i64, i64) {
        let generation = self.pod().metadata.generation.unwrap_or(0);
        if let Some((_, cpu, memory)) = self.requests.get().filter(|(at, _, _)| *at == generation) {
            return (cpu, memory);
        }
        let requests = kubesim_api::resources::pod_requests(self.pod()).requests;
        self.requests.set(Some((generation, requests.milli_cpu, requests.memory)));
        (requests.milli_cpu, requests.memory)
    }

    /// Moves to `next`, asserting the transition is one the state machine allows.
    pub fn become_(&mut self, next: WorkerState) {
        assert!(self.state.may_become(next), "pod worker {}: {:?} → {next:?} is not a transition", self.seq, self.state);
        self.state = next;
    }

    /// Whether the worker still drives the pod (not rejected, not terminated).
    pub fn active(&self) -> bool {
        matches!(self.state, WorkerState::Syncing | WorkerState::Terminating)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Mirrors client-go/util/flowcontrol/backoff_test.go (TestSlowBackoff, TestBackoffReset)
    // with the kubelet's 10 s initial and 300 s maximum.
    #[test]
    fn restart_backoff_doubles_to_five_minutes_and_resets_after_stability() {
        let mut b = Backoff::default();
        let mut delays = Vec::new();
        let mut now = 0;
        for _ in 0..7 {
            b.next(now);
            delays.push(b.duration_ms / 1000);
            now += 1_000;
        }
        assert_eq!(delays, vec![10, 20, 40, 80, 160, 300, 300]);
        assert!(b.in_backoff_since(now, now + 299_000));
        assert!(!b.in_backoff_since(now, now + 300_000));
        b.next(now + 2 * BACKOFF_MAX_MS + 1);
        assert_eq!(b.duration_ms, BACKOFF_INITIAL_MS);
    }

    #[test]
    fn the_worker_state_machine_only_moves_forward() {
        use WorkerState::*;
        assert!(Syncing.may_become(Terminating));
        assert!(Terminating.may_become(Terminated));
        assert!(Syncing.may_become(Terminated), "eviction ends a worker without a deletion");
        assert!(!Terminated.may_become(Syncing));
        assert!(!Rejected.may_become(Syncing));
        assert!(!Terminating.may_become(Syncing));
    }

    /// A worker's requests are its pod's `PodRequests`, remembered per generation: a new
    /// generation with other requests gives the new figures.
    #[test]
    fn requests_follow_the_pods_generation() {
        let pod = |generation: i64, cpu: &str| {
            let pod: Pod = serde_json::from_value(serde_json::json!({
                "metadata": {"name": "p", "generation": generation},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
            }))
            .expect("a pod");
            Arc::new(Object::Pod(Box::new(pod)))
        };
        let mut worker = PodWorker::new(1, pod(1, "100m"));
        assert_eq!(worker.requests(), (100, 64 << 20));
        worker.pod = pod(1, "300m"); // the same generation: remembered
        assert_eq!(worker.requests(), (100, 64 << 20));
        worker.pod = pod(2, "300m");
        assert_eq!(worker.requests(), (300, 64 << 20));
    }
}
