//! The kube-controller-manager model: workload and cluster controllers.
//!
//! Every controller is a [`Component`] structured like its upstream counterpart: informer caches
//! fed by watch events ([`common::Cache`]), a de-duplicating rate-limited work queue processed
//! after a modelled latency ([`common::WorkQueue`]), level-triggered sync functions that read
//! the caches, compute a diff and write through the API (conflicts are retried through the
//! queue), ownerReferences with `controller: true, blockOwnerDeletion: true` on everything they
//! create, Events with upstream reasons/messages, and observedGeneration/conditions in status.
//!
//! Start here:
//! - [`replicaset`]: ReplicaSet controller (slow-start creation, deletion ranking, status), also
//!   run over ReplicationControllers as the replication manager.
//! - [`deployment`] + [`deployment_util`]: Deployment controller (rolling/recreate, revisions,
//!   proportional scaling, progress deadline, history cleanup).
//! - [`gc`]: garbage collector (background / foreground / orphan propagation).
//! - [`namespace`]: namespace deletion, ServiceAccount "default", root CA ConfigMap.
//! - [`nodelifecycle`]: node health (Ready=Unknown after the grace period), condition and
//!   NoExecute taints, taint-based eviction.
//! - [`job`]: Job controller (completions, parallelism, backoffLimit, Indexed, conditions) and
//!   TTL-after-finished.
//! - [`statefulset`] + [`history`]: StatefulSet controller (ordinals, OrderedReady/Parallel,
//!   PVCs, RollingUpdate with partition) over ControllerRevisions.
//! - [`daemonset`]: DaemonSet controller (one pod per eligible node via node affinity on
//!   metadata.name, default tolerations, rolling update).
//! - [`cronjob`]: CronJob controller and cron schedule parser.
//! - [`disruption`]: PodDisruptionBudget status.
//! - [`hpa`]: HorizontalPodAutoscaler (replica calculator, stabilization, behavior rates).
//! - [`endpoints`]: EndpointSlice and (legacy) Endpoints for Services with selectors.
//! - [`volume`]: PersistentVolume binder and (inline) dynamic provisioner.
//! - [`podgc`]: pod garbage collector (orphaned, unscheduled-terminating, out-of-service,
//!   terminated-over-threshold pods).
//!
//! Known deviations from upstream (v1.34):
//! - pod-template-hash is FNV-32a over a canonical JSON serialization of the template, not
//!   go-spew's dump, so hash values differ from a real cluster (shape and alphabet are the same).
//! - The Deployment controller persists the revision annotation through the status
//!   subresource as upstream does; if the API server's status update does not keep metadata
//!   annotations, it falls back to a normal update, which bumps metadata.generation.
//! - Sorts use stable ordering over name-ordered caches where Go's sort is unstable over
//!   lister order (deterministic by design).

#![deny(missing_docs)]

pub mod common;
pub mod cronjob;
pub mod daemonset;
pub mod deployment;
pub mod deployment_util;
pub mod disruption;
pub mod endpoints;
pub mod gc;
pub mod history;
pub mod hpa;
pub mod job;
pub mod namespace;
pub mod nodelifecycle;
pub mod podgc;
pub mod replicaset;
pub mod statefulset;
pub mod volume;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod e2e_tests;
#[cfg(test)]
mod vector_tests;
#[cfg(test)]
mod node_tests;
#[cfg(test)]
mod job_tests;
#[cfg(test)]
mod sts_tests;
#[cfg(test)]
mod ds_tests;
#[cfg(test)]
mod cron_tests;
#[cfg(test)]
mod hpa_tests;
#[cfg(test)]
mod endpoints_tests;
#[cfg(test)]
mod volume_tests;

use kubesim_apiserver::Component;

/// Every controller kube-controller-manager runs by default, in a fixed order.
pub fn controllers() -> Vec<Box<dyn Component>> {
    vec![
        Box::new(deployment::DeploymentController::new()),
        Box::new(replicaset::ReplicaSetController::new()),
        Box::new(gc::GarbageCollector::new()),
        Box::new(namespace::NamespaceController::new()),
        Box::new(namespace::ServiceAccountController::new()),
        Box::new(namespace::RootCaPublisher::new()),
        Box::new(nodelifecycle::NodeLifecycleController::new()),
        Box::new(nodelifecycle::TaintEvictionController::new()),
        Box::new(job::JobController::new()),
        Box::new(job::TtlAfterFinishedController::new()),
        Box::new(statefulset::StatefulSetController::new()),
        Box::new(daemonset::DaemonSetController::new()),
        Box::new(cronjob::CronJobController::new()),
        Box::new(replicaset::ReplicaSetController::replication_manager()),
        Box::new(disruption::DisruptionController::new()),
        Box::new(hpa::HpaController::new()),
        Box::new(endpoints::EndpointSliceController::new()),
        Box::new(endpoints::EndpointsController::new()),
        Box::new(volume::PersistentVolumeController::new()),
        Box::new(podgc::PodGcController::new()),
    ]
}
