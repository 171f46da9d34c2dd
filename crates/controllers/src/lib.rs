//! The kube-controller-manager model: workload and cluster controllers.
//!
//! Every controller is a [`framework::Reconciler`] run by [`framework::Controller`] (the one
//! component glue): informer caches fed by watch events ([`common::Cache`]), a de-duplicating
//! rate-limited work queue processed after a modelled latency ([`common::WorkQueue`]),
//! level-triggered reconcile functions that read the caches, compute a diff and write through
//! the API (conflicts are retried through the queue), ownerReferences with `controller: true,
//! blockOwnerDeletion: true` on everything they create, Events with upstream reasons/messages,
//! and observedGeneration/conditions in status. Their tests run on the same runtime and watch
//! delivery model as the simulation (`testing::TestWorld`).
//!
//! Start here:
//! - [`framework`]: the controller runtime (`Reconciler`, `Controller`, `informers!`).
//! - [`replicaset`]: ReplicaSet controller (slow-start creation, deletion ranking, status), also
//!   run over ReplicationControllers as the replication manager.
//! - [`deployment`] + [`deployment_util`]: Deployment controller (rolling/recreate, revisions,
//!   proportional scaling, progress deadline, history cleanup).
//! - [`gc`]: garbage collector (background / foreground / orphan propagation).
//! - [`namespace`]: namespace deletion, ServiceAccount "default", root CA ConfigMap.
//! - [`nodeipam`]: node IPAM range allocator (each Node's /24 podCIDR from 10.244.0.0/16).
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
//! - [`service_lb`]: the cloud controller manager's service controller as cloud-provider-kind
//!   runs it (load-balancer addresses for Services of type LoadBalancer).
//! - [`endpoints`]: EndpointSlice and (legacy) Endpoints for Services with selectors.
//! - [`volume`]: PersistentVolume binder (binding, external-provisioning hand-off, reclaim).
//! - [`pvcprotection`] / [`pvprotection`]: the storage-object-in-use protection finalizers.
//! - [`expand`]: the volume expand controller (`ExternalExpanding`: CSI volumes are the
//!   external-resizer's).
//! - [`localpath`]: kind's local-path provisioner (an add-on, [`addons`], not part of kcm).
//! - [`loadgen`]: kubesim's load generator behind the `kubesim.dev/load` Service annotation (an
//!   add-on: real clients sending real requests).
//! - [`attachdetach`]: the attach/detach controller (VolumeAttachments for the CSI volumes of
//!   scheduled pods, detach after the node stops using them, `status.volumesAttached`).
//! - [`csi_provisioner`] / [`csi_attacher`] / [`csi_resizer`]: the CSI drivers'
//!   external-provisioner, external-attacher and external-resizer sidecars (add-ons,
//!   [`addons`]).
//! - [`podgc`]: pod garbage collector (orphaned, unscheduled-terminating, out-of-service,
//!   terminated-over-threshold pods).
//! - [`resourcequota`]: ResourceQuota status.used recomputation and replenishment.
//! - [`ephemeral`]: PVCs for generic ephemeral volumes, owned by their pods.
//!
//! Timing model: each controller's work queue drains 10 ms (virtual) after its first add;
//! failed syncs are retried with client-go's per-item exponential backoff (5 ms × 2^n, capped at
//! 1000 s); `AddAfter` requeues (minReadySeconds, progress deadlines, cron schedules, toleration
//! seconds) are timers. The node lifecycle controller ticks every 5 s, the HPA every 15 s and the
//! pod GC every 20 s (periodic timers). Informers LIST in `start` and then follow watch events;
//! a controller also puts the result of its own writes into its cache (never replacing a newer
//! resourceVersion), which saves the conflict round trips a stale cache would cause upstream.
//! Controllers that need pods only occasionally (node lifecycle, HPA, pod GC, PV binder) read
//! them from the API server's store at sync time instead of keeping a pod informer.
//!
//! Known deviations from upstream (v1.34) — also noted in each module:
//! - pod-template-hash (and ControllerRevision hashes) are FNV-32a over a canonical JSON
//!   serialization of the template, not go-spew's dump: same shape and alphabet, different
//!   values than a real cluster.
//! - The Deployment controller writes the revision annotation through the status subresource as
//!   upstream does; kubesim's API server currently drops metadata changes on status updates, so
//!   the controller falls back to a normal update, which bumps metadata.generation (a new
//!   Deployment ends up at generation 2 after its first rollout).
//! - Namespace deletion: the finalize subresource is modelled as an update of spec.finalizers
//!   followed by a DELETE; should a Namespace ever disappear without a Terminating phase, the
//!   controller still deletes its leftover contents.
//! - StatefulSet, DaemonSet, Job, CronJob, HPA, PDB, PV/PVC, StorageClass, ControllerRevision,
//!   EndpointSlice, Endpoints and ReplicationController are JSON-kept kinds in kubesim's object
//!   model; their controllers decode them to the k8s-openapi types on each sync
//!   ([`common::decode`] / [`common::encode`]) instead of adding typed variants.
//! - Job: the API server does not generate Job selectors; the Job controller selects/labels pods
//!   by `batch.kubernetes.io/controller-uid` itself (the job's own spec is not rewritten).
//! - HPA: Resource metrics only; usage comes from the resource metrics API (`Ctx::metrics`) or the
//!   pods' `kubesim.dev/cpu-usage` / `kubesim.dev/memory-usage` annotations (no metrics-server).
//! - CronJob: UTC schedules only.
//! - PV binder: binding and provisioning operations run inline, not on the operation executor;
//!   no in-tree provisioners or recycler. The local-path provisioner runs no helper pods.
//! - DaemonSet: the failed-pod backoff is not modelled.
//! - Sorting: stable sorts over name-ordered caches where Go sorts lister order with an unstable
//!   sort (deterministic by design); non-transitive `Less` functions use a Go-like merge sort.

#![deny(missing_docs)]

pub mod attachdetach;
pub mod common;
#[cfg(test)]
mod cron_tests;
pub mod cronjob;
pub mod csi_attacher;
pub mod csi_provisioner;
pub mod csi_resizer;
pub mod daemonset;
pub mod deployment;
pub mod deployment_util;
pub mod disruption;
#[cfg(test)]
mod ds_tests;
#[cfg(test)]
mod e2e_tests;
pub mod endpoints;
#[cfg(test)]
mod endpoints_tests;
#[cfg(test)]
mod endpoints_vector_tests;
pub mod ephemeral;
pub mod expand;
pub mod framework;
pub mod gc;
pub mod history;
pub mod hpa;
#[cfg(test)]
mod hpa_tests;
pub mod job;
#[cfg(test)]
mod job_tests;
pub mod loadgen;
pub mod localpath;
pub mod namespace;
#[cfg(test)]
mod node_tests;
pub mod nodeipam;
pub mod nodelifecycle;
pub mod podgc;
#[cfg(test)]
mod pv_sync_tests;
pub mod pvcprotection;
pub mod pvprotection;
pub mod replicaset;
pub mod resourcequota;
pub mod service_lb;
pub mod servicecidr;
pub mod statefulset;
#[cfg(test)]
mod sts_tests;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod vector_tests;
pub mod volume;
#[cfg(test)]
mod volume_tests;

use framework::Controller;
use kubesim_runtime::Component;

/// Every controller kube-controller-manager runs by default, in a fixed order.
pub fn controllers() -> Vec<Box<dyn Component>> {
    vec![
        Box::new(Controller(deployment::DeploymentController::new())),
        Box::new(Controller(replicaset::ReplicaSetController::new())),
        Box::new(Controller(gc::GarbageCollector::new())),
        Box::new(Controller(namespace::NamespaceController::new())),
        Box::new(Controller(namespace::ServiceAccountController::new())),
        Box::new(Controller(namespace::RootCaPublisher::new())),
        Box::new(Controller(nodeipam::NodeIpamController::new())),
        Box::new(Controller(nodelifecycle::NodeLifecycleController::new())),
        Box::new(Controller(nodelifecycle::TaintEvictionController::new())),
        Box::new(Controller(job::JobController::new())),
        Box::new(Controller(job::TtlAfterFinishedController::new())),
        Box::new(Controller(statefulset::StatefulSetController::new())),
        Box::new(Controller(daemonset::DaemonSetController::new())),
        Box::new(Controller(cronjob::CronJobController::new())),
        Box::new(Controller(replicaset::ReplicaSetController::replication_manager())),
        Box::new(Controller(disruption::DisruptionController::new())),
        Box::new(Controller(hpa::HpaController::new())),
        Box::new(Controller(endpoints::EndpointSliceController::new())),
        Box::new(Controller(endpoints::EndpointsController::new())),
        Box::new(Controller(service_lb::ServiceLoadBalancerController::new())),
        Box::new(Controller(volume::PersistentVolumeController::new())),
        Box::new(Controller(pvcprotection::PvcProtectionController::new())),
        Box::new(Controller(pvprotection::PvProtectionController::new())),
        Box::new(Controller(podgc::PodGcController::new())),
        Box::new(Controller(resourcequota::ResourceQuotaController::new())),
        Box::new(Controller(ephemeral::EphemeralVolumeController::new())),
        Box::new(Controller(attachdetach::AttachDetachController::new())),
        Box::new(Controller(expand::ExpandController::new())),
        Box::new(Controller(servicecidr::ServiceCidrController::new())),
    ]
}

/// The cluster add-on controllers that run next to kube-controller-manager: kind's local-path
/// provisioner behind the default StorageClass, and the controller sidecars of the built-in CSI
/// drivers (an external-provisioner and an external-resizer per driver, an external-attacher
/// for the driver that attaches).
pub fn addons() -> Vec<Box<dyn Component>> {
    use kubesim_host::csi::Driver;
    vec![
        Box::new(Controller(localpath::LocalPathProvisioner::new())),
        Box::new(Controller(loadgen::LoadGenerator::new())),
        Box::new(Controller(csi_provisioner::CsiProvisioner::new(Driver::HostPath))),
        Box::new(Controller(csi_provisioner::CsiProvisioner::new(Driver::Disk))),
        Box::new(Controller(csi_attacher::CsiAttacher::new(Driver::Disk))),
        Box::new(Controller(csi_resizer::CsiResizer::new(Driver::HostPath))),
        Box::new(Controller(csi_resizer::CsiResizer::new(Driver::Disk))),
    ]
}

#[cfg(test)]
mod informer_lookup_tests {
    use crate::framework::Reconciler;
    use kubesim_api::object::all_kinds;
    use kubesim_store::resource_of;

    /// `informer_for` and `primary_resource` (asked per watch event, generated by `informers!`
    /// or written by hand) answer as the informer list does, for every resource.
    fn agrees<R: Reconciler>(r: R) {
        let list = r.informers();
        assert_eq!(r.primary_resource(), list[0].resource, "{}: primary resource", r.name());
        for info in all_kinds() {
            let resource = resource_of(info);
            let want = list.iter().find(|i| i.resource == resource).copied();
            assert_eq!(r.informer_for(resource), want, "{}: informer of {resource:?}", r.name());
        }
    }

    #[test]
    fn informer_for_agrees_with_the_informer_list() {
        use crate::*;
        use kubesim_host::csi::Driver;
        agrees(deployment::DeploymentController::new());
        agrees(replicaset::ReplicaSetController::new());
        agrees(replicaset::ReplicaSetController::replication_manager());
        agrees(gc::GarbageCollector::new());
        agrees(namespace::NamespaceController::new());
        agrees(namespace::ServiceAccountController::new());
        agrees(namespace::RootCaPublisher::new());
        agrees(nodeipam::NodeIpamController::new());
        agrees(nodelifecycle::NodeLifecycleController::new());
        agrees(nodelifecycle::TaintEvictionController::new());
        agrees(job::JobController::new());
        agrees(job::TtlAfterFinishedController::new());
        agrees(statefulset::StatefulSetController::new());
        agrees(daemonset::DaemonSetController::new());
        agrees(cronjob::CronJobController::new());
        agrees(disruption::DisruptionController::new());
        agrees(hpa::HpaController::new());
        agrees(endpoints::EndpointSliceController::new());
        agrees(endpoints::EndpointsController::new());
        agrees(service_lb::ServiceLoadBalancerController::new());
        agrees(volume::PersistentVolumeController::new());
        agrees(pvcprotection::PvcProtectionController::new());
        agrees(pvprotection::PvProtectionController::new());
        agrees(podgc::PodGcController::new());
        agrees(resourcequota::ResourceQuotaController::new());
        agrees(ephemeral::EphemeralVolumeController::new());
        agrees(attachdetach::AttachDetachController::new());
        agrees(expand::ExpandController::new());
        agrees(servicecidr::ServiceCidrController::new());
        agrees(localpath::LocalPathProvisioner::new());
        agrees(loadgen::LoadGenerator::new());
        agrees(csi_provisioner::CsiProvisioner::new(Driver::HostPath));
        agrees(csi_attacher::CsiAttacher::new(Driver::Disk));
        agrees(csi_resizer::CsiResizer::new(Driver::Disk));
    }

    // A controller's cache keeps only what `keeps` admits: the StatefulSet controller's pod
    // cache holds its own kind's pods and orphans; a pod another kind adopts leaves it, one
    // released joins it, and a deleted one leaves it.
    #[test]
    fn caches_keep_only_what_the_controller_reads() {
        use crate::framework::Controller;
        use crate::statefulset::StatefulSetController;
        use crate::testing::TestWorld;
        use kubesim_api::k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
        use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
        use kubesim_api::object::Object;
        let pod = |name: &str, owner: Option<&str>| {
            let owner_references = owner.map(|kind| {
                vec![OwnerReference { kind: kind.into(), name: "o".into(), uid: format!("{kind}-uid"), controller: Some(true), ..Default::default() }]
            });
            let spec = PodSpec { containers: vec![Container { name: "c".into(), image: Some("nginx".into()), ..Default::default() }], ..Default::default() };
            let metadata = ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), owner_references, ..Default::default() };
            Object::Pod(Box::new(Pod { metadata, spec: Some(spec), ..Default::default() }))
        };
        let mut w = TestWorld::new(vec![Box::new(Controller(StatefulSetController::new()))]);
        for (name, owner) in [("orphan", None), ("rs-owned", Some("ReplicaSet")), ("sts-owned", Some("StatefulSet"))] {
            w.create(pod(name, owner)).unwrap();
        }
        w.run_for(1_000);
        let cached = |w: &mut TestWorld| -> Vec<String> {
            let controller = w.component_mut::<Controller<StatefulSetController>>("statefulset-controller");
            controller.cache_of(("", "pods")).expect("a pod cache").iter().map(|o| o.name().to_string()).collect()
        };
        assert_eq!(cached(&mut w), ["orphan", "sts-owned"]);
        let change_owner = |w: &mut TestWorld, name: &str, owner: Option<&str>| {
            let mut object = (*w.get(("", "pods"), "default", name).unwrap()).clone();
            let Object::Pod(p) = &mut object else { unreachable!() };
            p.metadata.owner_references = match pod(name, owner) {
                Object::Pod(fresh) => fresh.metadata.owner_references,
                _ => unreachable!(),
            };
            w.as_user(|ctx| ctx.update(object)).unwrap();
            w.run_for(1_000);
        };
        change_owner(&mut w, "orphan", Some("ReplicaSet"));
        assert_eq!(cached(&mut w), ["sts-owned"], "adopted by another kind: gone from the cache");
        change_owner(&mut w, "rs-owned", None);
        assert_eq!(cached(&mut w), ["rs-owned", "sts-owned"], "released: cached");
        let pods = kubesim_api::object::kind_info("v1", "Pod").expect("pods are served");
        w.as_user(|ctx| ctx.delete(pods, "default", "rs-owned", Default::default())).unwrap();
        w.run_for(1_000);
        assert_eq!(cached(&mut w), ["sts-owned"]);
    }
}
