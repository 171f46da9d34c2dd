//! Resource arithmetic: pod requests (upstream `resourcehelper.PodRequests`), non-zero requests
//! for scoring (`schedutil.DefaultMilliCPURequest` / `DefaultMemoryRequest`) and node
//! allocatable, all as exact integers (cpu in millicores, everything else in whole units).

use crate::quantity::{parse_milli, parse_value};
use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// CPU request assumed for scoring when a container sets none (100m).
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// Memory request assumed for scoring when a container sets none (200 MiB).
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// `cpu`.
pub const CPU: &str = "cpu";
/// `memory`.
pub const MEMORY: &str = "memory";
/// `ephemeral-storage`.
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
/// `pods`.
pub const PODS: &str = "pods";

/// A set of resource amounts (upstream `framework.Resource`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    /// CPU in millicores.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i64,
    /// Number of pods (allocatable only).
    pub allowed_pod_number: i64,
    /// Extended and hugepages resources, by name.
    pub scalar: BTreeMap<String, i64>,
}

impl Resources {
    /// CPU and memory only.
    pub fn cpu_mem(milli_cpu: i64, memory: i64) -> Resources {
        Resources { milli_cpu, memory, ..Default::default() }
    }

    /// Parses a ResourceList (`cpu` to millicores, the rest rounded up to whole units).
    pub fn from_list(list: &BTreeMap<String, Quantity>) -> Resources {
        let mut r = Resources::default();
        for (name, q) in list {
            r.set(name, quantity_of(name, q));
        }
        r
    }

    /// The amount of `name`.
    pub fn get(&self, name: &str) -> i64 {
        match name {
            CPU => self.milli_cpu,
            MEMORY => self.memory,
            EPHEMERAL_STORAGE => self.ephemeral_storage,
            PODS => self.allowed_pod_number,
            _ => self.scalar.get(name).copied().unwrap_or(0),
        }
    }

    /// Sets the amount of `name`.
    pub fn set(&mut self, name: &str, value: i64) {
        match name {
            CPU => self.milli_cpu = value,
            MEMORY => self.memory = value,
            EPHEMERAL_STORAGE => self.ephemeral_storage = value,
            PODS => self.allowed_pod_number = value,
            _ => {
                self.scalar.insert(name.to_string(), value);
            }
        }
    }

    /// Adds `other` to self.
    pub fn add(&mut self, other: &Resources) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        self.allowed_pod_number += other.allowed_pod_number;
        for (k, v) in &other.scalar {
            *self.scalar.entry(k.clone()).or_insert(0) += v;
        }
    }

    /// Subtracts `other` from self.
    pub fn sub(&mut self, other: &Resources) {
        self.milli_cpu -= other.milli_cpu;
        self.memory -= other.memory;
        self.ephemeral_storage -= other.ephemeral_storage;
        self.allowed_pod_number -= other.allowed_pod_number;
        for (k, v) in &other.scalar {
            *self.scalar.entry(k.clone()).or_insert(0) -= v;
        }
    }

    /// Element-wise maximum.
    pub fn set_max(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(other.ephemeral_storage);
        self.allowed_pod_number = self.allowed_pod_number.max(other.allowed_pod_number);
        for (k, v) in &other.scalar {
            let e = self.scalar.entry(k.clone()).or_insert(0);
            *e = (*e).max(*v);
        }
    }

    /// Whether every amount is zero.
    pub fn is_zero(&self) -> bool {
        self.milli_cpu == 0 && self.memory == 0 && self.ephemeral_storage == 0 && self.scalar.values().all(|v| *v == 0)
    }
}

/// Parses one quantity of resource `name` (cpu in millicores; others whole units, rounded up).
pub fn quantity_of(name: &str, q: &Quantity) -> i64 {
    let parsed = if name == CPU { parse_milli(&q.0) } else { parse_value(&q.0) };
    parsed.map(|v| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64).unwrap_or(0)
}

/// A pod's requests: `requests` as the Fit filter sees them, `non_zero` (cpu, memory) as
/// scoring sees them (containers with no cpu/memory request count 100m / 200 MiB).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodRequests {
    /// Actual requests.
    pub requests: Resources,
    /// Non-zero cpu (millicores) for scoring.
    pub non_zero_cpu: i64,
    /// Non-zero memory (bytes) for scoring.
    pub non_zero_memory: i64,
}

fn container_requests(c: &Container, non_zero: bool) -> Resources {
    let list = c.resources.as_ref().and_then(|r| r.requests.as_ref());
    let mut r = list.map(Resources::from_list).unwrap_or_default();
    if non_zero {
        let has = |k: &str| list.is_some_and(|l| l.contains_key(k));
        if !has(CPU) {
            r.milli_cpu = DEFAULT_MILLI_CPU_REQUEST;
        }
        if !has(MEMORY) {
            r.memory = DEFAULT_MEMORY_REQUEST;
        }
    }
    r
}

fn aggregate(pod: &Pod, non_zero: bool) -> Resources {
    let Some(spec) = pod.spec.as_ref() else { return Resources::default() };
    let mut reqs = Resources::default();
    for c in &spec.containers {
        reqs.add(&container_requests(c, non_zero));
    }
    let mut restartable = Resources::default();
    let mut init_max = Resources::default();
    for c in spec.init_containers.iter().flatten() {
        let creq = container_requests(c, non_zero);
        let candidate = if c.restart_policy.as_deref() == Some("Always") {
            reqs.add(&creq);
            restartable.add(&creq);
            restartable.clone()
        } else {
            let mut tmp = creq;
            tmp.add(&restartable);
            tmp
        };
        init_max.set_max(&candidate);
    }
    reqs.set_max(&init_max);
    // Pod-level resources (PodLevelResources, beta in v1.34): cpu/memory requests set at the pod
    // level replace the container aggregate.
    if let Some(pod_level) = spec.resources.as_ref().and_then(|r| r.requests.as_ref()) {
        for name in [CPU, MEMORY] {
            if let Some(q) = pod_level.get(name) {
                reqs.set(name, quantity_of(name, q));
            }
        }
    }
    if let Some(overhead) = spec.overhead.as_ref() {
        reqs.add(&Resources::from_list(overhead));
    }
    reqs
}

/// A pod's limits (upstream `resourcehelper.PodLimits`): the sum of the regular and restartable
/// init containers' limits, at least the largest init container's (plus the sidecars started
/// before it), replaced by pod-level limits where set, plus the overhead for resources that
/// have a limit.
pub fn pod_limits(pod: &Pod) -> Resources {
    let Some(spec) = pod.spec.as_ref() else { return Resources::default() };
    let limits_of = |c: &Container| c.resources.as_ref().and_then(|r| r.limits.as_ref()).map(Resources::from_list).unwrap_or_default();
    let mut limits = Resources::default();
    for c in &spec.containers {
        limits.add(&limits_of(c));
    }
    let mut restartable = Resources::default();
    let mut init_max = Resources::default();
    for c in spec.init_containers.iter().flatten() {
        let climits = limits_of(c);
        let candidate = if c.restart_policy.as_deref() == Some("Always") {
            limits.add(&climits);
            restartable.add(&climits);
            restartable.clone()
        } else {
            let mut tmp = climits;
            tmp.add(&restartable);
            tmp
        };
        init_max.set_max(&candidate);
    }
    limits.set_max(&init_max);
    if let Some(pod_level) = spec.resources.as_ref().and_then(|r| r.limits.as_ref()) {
        for name in [CPU, MEMORY] {
            if let Some(q) = pod_level.get(name) {
                limits.set(name, quantity_of(name, q));
            }
        }
    }
    if let Some(overhead) = spec.overhead.as_ref() {
        for (name, q) in overhead {
            if limits.get(name) != 0 {
                limits.set(name, limits.get(name) + quantity_of(name, q));
            }
        }
    }
    limits
}

/// Computes a pod's requests (upstream `PodRequests` with and without `NonMissingContainerRequests`).
pub fn pod_requests(pod: &Pod) -> PodRequests {
    let requests = aggregate(pod, false);
    let has_containers = pod.spec.as_ref().is_some_and(|s| !s.containers.is_empty() || s.init_containers.as_ref().is_some_and(|i| !i.is_empty()));
    let (non_zero_cpu, non_zero_memory) = if has_containers {
        let nz = aggregate(pod, true);
        (nz.milli_cpu, nz.memory)
    } else {
        (requests.milli_cpu, requests.memory)
    };
    PodRequests { requests, non_zero_cpu, non_zero_memory }
}
