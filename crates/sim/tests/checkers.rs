#![cfg(not(target_arch = "wasm32"))]
//! Each invariant checker catches what it is for: a deliberately broken component (or write
//! sequence) breaks the invariant on a bare runtime — no real controllers to mend it — and the
//! checker records the violation at the commit that broke it; the same component behaving
//! records nothing.

use kubesim_api::decode::{decode_document, parse_documents};
use kubesim_api::object::{kind_info, Object};
use kubesim_api::Millis;
use kubesim_apiserver::{ApiServer, DeleteOptions};
use kubesim_runtime::{Checker, Component, Ctx, Interest, Placement, Runtime, RuntimeConfig, WatchEvent, WatchFilter};
use kubesim_sim::checkers::*;
use kubesim_store::{Commit, EventType};
use std::sync::Arc;

fn object(yaml: &str) -> Object {
    let (docs, errors) = parse_documents("t.yaml", yaml);
    assert!(errors.is_empty(), "{errors:?}");
    decode_document("t.yaml", &docs[0]).expect("decodes").remove(0)
}

/// One step of a broken component: what it does, through the API, at a virtual time.
type Step = (Millis, fn(&mut Ctx));

/// A component that performs fixed steps at fixed virtual times, as `name`.
#[derive(Clone)]
struct Broken {
    name: &'static str,
    steps: Vec<Step>,
}

impl Component for Broken {
    fn name(&self) -> &str {
        self.name
    }
    fn interests(&self) -> Vec<Interest> {
        Vec::new()
    }
    fn start(&mut self, ctx: &mut Ctx) {
        for (i, (at, _)) in self.steps.iter().enumerate() {
            ctx.after(*at, i as u64);
        }
    }
    fn on_watch(&mut self, _event: &WatchEvent, _ctx: &mut Ctx) {}
    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        (self.steps[token as usize].1)(ctx);
    }
}

/// A bare runtime (the API server, its namespaces, no controllers) checked by `checker`,
/// with `setup` applied by kubectl at t=0.
fn runtime(checker: Box<dyn Checker>, setup: &[&str]) -> Runtime {
    let mut runtime = Runtime::new(RuntimeConfig::seeded(1));
    runtime.add_checker(checker);
    runtime.as_actor("kubectl", |ctx| {
        ctx.create(object("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n")).unwrap();
        for yaml in setup {
            ctx.create(object(yaml)).unwrap();
        }
    });
    runtime
}

fn run_broken(runtime: &mut Runtime, name: &'static str, steps: Vec<Step>, until: Millis) {
    runtime.add_component(Box::new(Broken { name, steps }), Placement::ControlPlane);
    runtime.run_until(until);
}

fn messages(runtime: &Runtime) -> Vec<String> {
    runtime.violations().iter().map(|v| format!("{} at {}: {}", v.checker, v.t_ms, v.message)).collect()
}

fn get(ctx: &Ctx, resource: (&'static str, &'static str), name: &str) -> Object {
    (**ctx.api.store().get(resource, "default", name).expect("exists")).clone()
}

// ---- node allocatable -------------------------------------------------------------------

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  capacity: {cpu: '1', memory: 1Gi, pods: '2'}\n  allocatable: {cpu: '1', memory: 1Gi, pods: '2'}\n";

fn pod_requesting(name: &str, cpu: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: '{cpu}', memory: 100Mi}}}}}}]\n")
}

// A scheduler that binds without looking at what the node has left.
#[test]
fn node_allocatable_catches_a_scheduler_that_overcommits() {
    let (a, b, c) = (pod_requesting("a", "400m"), pod_requesting("b", "400m"), pod_requesting("c", "400m"));
    let mut rt = runtime(Box::new(NodeAllocatableRespected::default()), &[NODE, &a, &b, &c]);
    run_broken(
        &mut rt,
        "scheduler",
        vec![
            (100, |ctx| drop(ctx.bind("default", "a", "n1").unwrap())),
            (200, |ctx| drop(ctx.bind("default", "b", "n1").unwrap())),
            (300, |ctx| drop(ctx.bind("default", "c", "n1").unwrap())),
        ],
        1_000,
    );
    let found = messages(&rt);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0],
        "node-allocatable-respected at 300: node n1 is over its allocatable: cpu requests 1200m > allocatable 1000m, 3 pods > allocatable pods 2 (3 pods: default/a default/b default/c)"
    );
}

// Pods created on a node bypass the scheduler and count only once the kubelet admitted them;
// a pod that finished holds nothing.
#[test]
fn node_allocatable_counts_admitted_and_unfinished_pods_only() {
    let mut rt = runtime(Box::new(NodeAllocatableRespected::default()), &[NODE]);
    run_broken(
        &mut rt,
        "kubectl",
        vec![
            (100, |ctx| {
                for name in ["x", "y", "z"] {
                    let mut pod = object(&pod_requesting(name, "600m"));
                    if let Object::Pod(p) = &mut pod {
                        p.spec.as_mut().unwrap().node_name = Some("n1".into());
                    }
                    ctx.create(pod).unwrap();
                }
            }),
            // The kubelet admits x, rejects y and z (OutOfcpu).
            (200, |ctx| {
                for (name, phase) in [("x", "Running"), ("y", "Failed"), ("z", "Failed")] {
                    let Object::Pod(mut p) = get(ctx, ("", "pods"), name) else { unreachable!() };
                    let status = p.status.get_or_insert_with(Default::default);
                    status.phase = Some(phase.into());
                    status.start_time = (phase == "Running").then(|| kubesim_api::time::time_at(200));
                    ctx.update_status(Object::Pod(p)).unwrap();
                }
            }),
        ],
        1_000,
    );
    assert!(rt.violations().is_empty(), "{:?}", messages(&rt));
}

// ---- resourceVersions ------------------------------------------------------------------------

fn commit(revision: u64, object: Object, event_type: EventType) -> Commit {
    let resource = object.info().map(|i| (i.group(), i.plural)).unwrap_or(("", "configmaps"));
    Commit { revision, t_ms: 0, event_type, resource, object: Arc::new(object), previous: None, actor: "test".into() }
}

fn with_rv(yaml: &str, rv: u64) -> Object {
    let mut o = object(yaml);
    o.metadata_mut().resource_version = Some(rv.to_string());
    o
}

// A store that reuses a revision, and one whose object does not carry its commit's revision.
#[test]
fn resource_versions_catch_a_store_going_backwards() {
    let api = ApiServer::new();
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n";
    let mut checker = ResourceVersionsIncrease::default();
    checker.check(&commit(5, with_rv(cm, 5), EventType::Added), &api).unwrap();
    checker.check(&commit(6, with_rv(cm, 6), EventType::Modified), &api).unwrap();
    assert_eq!(checker.check(&commit(6, with_rv(cm, 6), EventType::Modified), &api).unwrap_err(), "revision 6 of ConfigMap default/a follows revision 6");
    assert_eq!(
        checker.check(&commit(7, with_rv(cm, 3), EventType::Deleted), &api).unwrap_err(),
        "ConfigMap default/a carries resourceVersion \"3\" in the commit of revision 7"
    );
}

// ---- watch delivery ----------------------------------------------------------------------------

fn event(commit: &Commit, event_type: EventType) -> WatchEvent {
    WatchEvent { event_type, resource: commit.resource, object: commit.object.clone(), revision: commit.revision }
}

fn node_pod(name: &str, node: Option<&str>, rv: u64) -> Object {
    let node = node.map(|n| format!("  nodeName: {n}\n")).unwrap_or_default();
    with_rv(&format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec:\n{node}  containers: [{{name: c, image: nginx}}]\n"), rv)
}

// A delivery mechanism that drops an event, reorders two, delivers one twice, gets a field
// selection's translation wrong, or hands a relisted watcher an event its list already had.
#[test]
fn watches_complete_catches_gaps_reordering_duplicates_and_stale_events() {
    let api = ApiServer::new();
    let all = [Interest { resource: ("", "pods"), filter: WatchFilter::All }];
    let on_n1 = [Interest { resource: ("", "pods"), filter: WatchFilter::PodsOnNode("n1".into()) }];
    let fresh = || {
        let mut c = WatchesComplete::default();
        c.watches(0, "informer", &all, 0);
        c.watches(1, "kubelet/n1", &on_n1, 0);
        c
    };
    let c1 = commit(1, node_pod("a", None, 1), EventType::Added);
    let c2 = commit(2, node_pod("b", None, 2), EventType::Added);
    let mut c3 = commit(3, node_pod("a", Some("n1"), 3), EventType::Modified);
    c3.previous = Some(c1.object.clone());

    // In order, complete: fine (the kubelet sees the binding as ADDED).
    let mut c = fresh();
    for cm in [&c1, &c2, &c3] {
        c.check(cm, &api).unwrap();
    }
    c.delivered(0, &event(&c1, EventType::Added), 2).unwrap();
    c.delivered(0, &event(&c2, EventType::Added), 2).unwrap();
    c.delivered(0, &event(&c3, EventType::Modified), 2).unwrap();
    c.delivered(1, &event(&c3, EventType::Added), 2).unwrap();
    c.finish(&api, 10_000).unwrap();

    // A gap: revision 2 never reaches the informer.
    let mut c = fresh();
    for cm in [&c1, &c2, &c3] {
        c.check(cm, &api).unwrap();
    }
    c.delivered(0, &event(&c1, EventType::Added), 2).unwrap();
    assert_eq!(
        c.delivered(0, &event(&c3, EventType::Modified), 2).unwrap_err(),
        "informer got MODIFIED (\"\", \"pods\") default/a (revision 3) but never revision(s) [2] of its selection, and did not relist in between"
    );
    // ... unless it relisted in between (a 410 and a relist).
    let mut c = fresh();
    for cm in [&c1, &c2] {
        c.check(cm, &api).unwrap();
    }
    c.delivered(0, &event(&c1, EventType::Added), 2).unwrap();
    c.relisted(0, 2);
    c.check(&c3, &api).unwrap();
    c.delivered(0, &event(&c3, EventType::Modified), 4).unwrap();

    // Reordered, duplicated.
    let mut c = fresh();
    for cm in [&c1, &c2] {
        c.check(cm, &api).unwrap();
    }
    c.delivered(0, &event(&c2, EventType::Added), 2).unwrap_err();
    assert!(c.delivered(0, &event(&c1, EventType::Added), 2).unwrap_err().contains("out of order"));
    let mut c = fresh();
    c.check(&c1, &api).unwrap();
    c.delivered(0, &event(&c1, EventType::Added), 2).unwrap();
    assert!(c.delivered(0, &event(&c1, EventType::Added), 2).unwrap_err().contains("out of order"));

    // The kubelet's field selection: the binding is ADDED for it, not MODIFIED.
    let mut c = fresh();
    c.check(&c3, &api).unwrap();
    assert_eq!(
        c.delivered(1, &event(&c3, EventType::Modified), 2).unwrap_err(),
        "kubelet/n1 got MODIFIED (\"\", \"pods\") default/a (revision 3); its selection implies ADDED"
    );

    // Stale after a relist: the relist at revision 3 already covered revision 3.
    let mut c = fresh();
    c.check(&c3, &api).unwrap();
    c.relisted(1, 3);
    assert!(c.delivered(1, &event(&c3, EventType::Added), 2).unwrap_err().contains("after relisting at revision 3"));

    // Lost for good: never delivered, no relist.
    let mut c = fresh();
    c.check(&c3, &api).unwrap();
    assert_eq!(c.finish(&api, 5_000).unwrap_err().matches("never got revision 3").count(), 2);
}

// The real runtime keeps the contract through a partition: the kubelet misses events while cut
// off and relists when it is back; in-flight events its relist covered are not delivered.
#[test]
fn the_runtime_keeps_the_watch_contract_through_a_partition() {
    let mut world = kubesim_sim::World::new(3);
    world.add_default_nodes();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: node-1\n  containers: [{name: c, image: nginx}]\n";
    kubesim_sim::loader::apply(&mut world, &kubesim_sim::scenario::InputFile { name: "p.yaml".into(), text: pod.into() });
    world.run_until(5_000);
    world.run_command("fault network-partition node-1");
    world.run_command("kubectl label pod p x=1");
    world.run_until(6_000);
    world.run_command("kubectl label pod p y=1");
    // A commit still in flight when the node comes back: its relist covers it.
    world.run_command("fault node-up node-1");
    world.run_until(20_000);
    world.runtime_mut().finish_checks();
    assert!(world.runtime().violations().is_empty(), "{:?}", world.runtime().violations());
}

// ---- Deployment rollout bounds ----------------------------------------------------------------

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n";

fn replica_set(name: &str, replicas: i32, owner: &Object) -> Object {
    let uid = owner.metadata().uid.clone().unwrap();
    object(&format!(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: {name}\n  namespace: default\n  annotations: {{deployment.kubernetes.io/desired-replicas: '4', deployment.kubernetes.io/max-replicas: '5'}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, uid: '{uid}', controller: true}}]\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web, v: {name}}}}}\n  template:\n    metadata: {{labels: {{app: web, v: {name}}}}}\n    spec: {{containers: [{{name: c, image: nginx}}]}}\n"
    ))
}

fn deployment_status(ctx: &mut Ctx, updated: i32, available: i32) {
    let Object::Deployment(mut d) = get(ctx, ("apps", "deployments"), "web") else { unreachable!() };
    let status = d.status.get_or_insert_with(Default::default);
    status.observed_generation = d.metadata.generation;
    (status.replicas, status.updated_replicas, status.available_replicas) = (Some(4), Some(updated), Some(available));
    ctx.update_status(Object::Deployment(d)).unwrap();
}

// A deployment controller that creates the new ReplicaSet with more replicas than the surge
// allows (4 + 1 = 5: it asks for 4 + 2), and one that scales the old one down too far.
#[test]
fn deployment_bounds_catch_too_much_surge_and_too_little_availability() {
    let mut rt = runtime(Box::new(DeploymentRolloutBounds::default()), &[DEPLOYMENT]);
    run_broken(
        &mut rt,
        "deployment-controller",
        vec![
            (100, |ctx| {
                let d = get(ctx, ("apps", "deployments"), "web");
                ctx.create(replica_set("web-old", 4, &d)).unwrap();
            }),
            (200, |ctx| deployment_status(ctx, 4, 4)), // complete: the bounds apply
            (300, |ctx| {
                let d = get(ctx, ("apps", "deployments"), "web");
                ctx.create(replica_set("web-new", 2, &d)).unwrap(); // 4 + 2 > 4 + 1
            }),
            (400, |ctx| {
                let Object::ReplicaSet(mut rs) = get(ctx, ("apps", "replicasets"), "web-new") else { unreachable!() };
                rs.spec.as_mut().unwrap().replicas = Some(1); // back within
                ctx.update(Object::ReplicaSet(rs)).unwrap();
            }),
            (500, |ctx| deployment_status(ctx, 1, 2)), // 2 available < 4 - 1
        ],
        1_000,
    );
    let found = messages(&rt);
    assert_eq!(
        found,
        [
            "deployment-rollout-bounds at 300: deployment default/web: its ReplicaSets ask for 6 pods (web-new=2, web-old=4), more than replicas 4 + maxSurge 1 = 5",
            "deployment-rollout-bounds at 500: deployment default/web: 2 available during its rolling update, fewer than replicas 4 - maxUnavailable 1 = 3",
        ]
    );
}

// Where the bounds do not apply: a scale in progress (the ReplicaSets' desired-replicas
// annotation still the old replicas), and availability after a pod was disrupted or a fault.
#[test]
fn deployment_bounds_do_not_apply_during_a_scale_or_after_a_disruption() {
    let mut rt = runtime(Box::new(DeploymentRolloutBounds::default()), &[DEPLOYMENT]);
    run_broken(
        &mut rt,
        "deployment-controller",
        vec![
            (100, |ctx| {
                let d = get(ctx, ("apps", "deployments"), "web");
                ctx.create(replica_set("web-old", 4, &d)).unwrap();
            }),
            (200, |ctx| deployment_status(ctx, 4, 4)),
            // The user scales to 2: the ReplicaSets (4 + 0) exceed 2 + 1 until the controller
            // has scaled them proportionally.
            (300, |ctx| {
                let Object::Deployment(mut d) = get(ctx, ("apps", "deployments"), "web") else { unreachable!() };
                d.spec.as_mut().unwrap().replicas = Some(2);
                ctx.update(Object::Deployment(d)).unwrap();
            }),
        ],
        1_000,
    );
    assert!(rt.violations().is_empty(), "{:?}", messages(&rt));
    // A fault: availability is no longer judged.
    let mut rt = runtime(Box::new(DeploymentRolloutBounds::default()), &[DEPLOYMENT]);
    run_broken(
        &mut rt,
        "deployment-controller",
        vec![
            (100, |ctx| {
                let d = get(ctx, ("apps", "deployments"), "web");
                ctx.create(replica_set("web-old", 4, &d)).unwrap();
            }),
            (200, |ctx| deployment_status(ctx, 4, 4)),
        ],
        250,
    );
    rt.fault_injected("node-down n1");
    rt.as_actor("deployment-controller", |ctx| deployment_status(ctx, 4, 1));
    assert!(rt.violations().is_empty(), "{:?}", messages(&rt));
}

// ---- StatefulSet ordering ------------------------------------------------------------------------

const STS: &str = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: default}\nspec:\n  serviceName: db\n  replicas: 2\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c, image: nginx}]}\n";

fn sts_pod(ctx: &Ctx, ordinal: u32) -> Object {
    let set = get(ctx, ("apps", "statefulsets"), "db");
    let uid = set.metadata().uid.clone().unwrap();
    object(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: db-{ordinal}\n  namespace: default\n  labels: {{app: db}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: '{uid}', controller: true}}]\nspec: {{containers: [{{name: c, image: nginx}}]}}\n"
    ))
}

fn make_healthy(ctx: &mut Ctx, name: &str) {
    let Object::Pod(mut p) = get(ctx, ("", "pods"), name) else { unreachable!() };
    let status = p.status.get_or_insert_with(Default::default);
    status.phase = Some("Running".into());
    status.conditions =
        Some(vec![kubesim_api::k8s_openapi::api::core::v1::PodCondition { type_: "Ready".into(), status: "True".into(), ..Default::default() }]);
    ctx.update_status(Object::Pod(p)).unwrap();
}

fn scale_sts(ctx: &mut Ctx, replicas: i64) {
    let mut set = get(ctx, ("apps", "statefulsets"), "db").to_json();
    set["spec"]["replicas"] = replicas.into();
    let info = kind_info("apps/v1", "StatefulSet").unwrap();
    ctx.update(Object::from_json(info, set).unwrap()).unwrap();
}

fn delete_pod(ctx: &mut Ctx, name: &str) {
    let info = kind_info("v1", "Pod").unwrap();
    ctx.delete(info, "default", name, DeleteOptions::default()).unwrap();
}

// A StatefulSet controller that creates db-1 before db-0 is Running and Ready, and one that
// scales down lowest ordinal first.
#[test]
fn statefulset_ordering_catches_eager_creation_and_lowest_first_deletion() {
    let mut rt = runtime(Box::new(StatefulSetOrdering::default()), &[STS]);
    run_broken(
        &mut rt,
        "statefulset-controller",
        vec![
            (100, |ctx| drop(ctx.create(sts_pod(ctx, 0)).unwrap())),
            (200, |ctx| drop(ctx.create(sts_pod(ctx, 1)).unwrap())), // db-0 still Pending
            (300, |ctx| {
                make_healthy(ctx, "db-0");
                make_healthy(ctx, "db-1");
                scale_sts(ctx, 0);
            }),
            (400, |ctx| delete_pod(ctx, "db-0")), // db-1 is still there
        ],
        1_000,
    );
    assert_eq!(
        messages(&rt),
        [
            "statefulset-ordering at 200: statefulset db: pod db-1 was created while pod db-0 is not Running and Ready",
            "statefulset-ordering at 400: statefulset db: scale-down deleted pod db-0 while higher ordinal(s) db-1 still exist",
        ]
    );
}

#[test]
fn statefulset_ordering_accepts_the_ordered_way() {
    let mut rt = runtime(Box::new(StatefulSetOrdering::default()), &[STS]);
    run_broken(
        &mut rt,
        "statefulset-controller",
        vec![
            (100, |ctx| drop(ctx.create(sts_pod(ctx, 0)).unwrap())),
            (200, |ctx| make_healthy(ctx, "db-0")),
            (300, |ctx| drop(ctx.create(sts_pod(ctx, 1)).unwrap())),
            (400, |ctx| {
                make_healthy(ctx, "db-1");
                scale_sts(ctx, 0);
                delete_pod(ctx, "db-1");
            }),
            (500, |ctx| {
                // db-1 is gone (an unscheduled pod goes at once): now db-0.
                assert!(ctx.api.store().get(("", "pods"), "default", "db-1").is_none());
                delete_pod(ctx, "db-0");
            }),
        ],
        1_000,
    );
    assert!(rt.violations().is_empty(), "{:?}", messages(&rt));
}

// ---- evictions and PodDisruptionBudgets ----------------------------------------------------------

const PDB: &str = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web-pdb, namespace: default}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: web}}\n";
const WEB_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: default, labels: {app: web}}\nspec:\n  nodeName: n1\n  containers: [{name: c, image: nginx}]\n";

fn pdb_status(ctx: &mut Ctx, allowed: i64) {
    let mut pdb = get(ctx, ("policy", "poddisruptionbudgets"), "web-pdb").to_json();
    pdb["status"] = serde_json::json!({"disruptionsAllowed": allowed, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1});
    let info = kind_info("policy/v1", "PodDisruptionBudget").unwrap();
    ctx.update_status(Object::from_json(info, pdb).unwrap()).unwrap();
}

fn running(ctx: &mut Ctx) {
    let Object::Pod(mut p) = get(ctx, ("", "pods"), "web-1") else { unreachable!() };
    p.status.get_or_insert_with(Default::default).phase = Some("Running".into());
    ctx.update_status(Object::Pod(p)).unwrap();
}

// An eviction subresource that ignores the budget: it marks and deletes a covered pod while
// disruptionsAllowed is 0 (without taking a disruption), and one that takes a disruption the
// budget does not have.
#[test]
fn evictions_catch_an_eviction_that_ignores_the_budget() {
    let mut rt = runtime(Box::new(EvictionsRespectBudgets::default()), &[PDB, WEB_POD]);
    run_broken(
        &mut rt,
        "kubectl",
        vec![
            (100, |ctx| {
                running(ctx);
                pdb_status(ctx, 0);
            }),
            (200, |ctx| {
                // The real subresource refuses (429) and writes nothing.
                let err = kubesim_apiserver::ApiServer::evict(
                    ctx.api,
                    "default",
                    "web-1",
                    DeleteOptions::default(),
                    &mut kubesim_apiserver::Request { now: 200, rng: ctx.rng, actor: &ctx.actor.clone() },
                )
                .unwrap_err();
                assert_eq!(err.code, 429);
            }),
            (300, |ctx| {
                // A broken one: the DisruptionTarget condition and the delete, no budget taken.
                let Object::Pod(mut p) = get(ctx, ("", "pods"), "web-1") else { unreachable!() };
                p.status.as_mut().unwrap().conditions = Some(vec![kubesim_api::k8s_openapi::api::core::v1::PodCondition {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                    reason: Some("EvictionByEvictionAPI".into()),
                    ..Default::default()
                }]);
                ctx.update_status(Object::Pod(p)).unwrap();
                delete_pod(ctx, "web-1");
            }),
            (400, |ctx| {
                // Another: it records a disruption the budget does not allow.
                let mut pdb = get(ctx, ("policy", "poddisruptionbudgets"), "web-pdb").to_json();
                pdb["status"]["disruptedPods"] = serde_json::json!({"web-2": "2025-01-01T00:00:00Z"});
                let info = kind_info("policy/v1", "PodDisruptionBudget").unwrap();
                ctx.update_status(Object::from_json(info, pdb).unwrap()).unwrap();
            }),
        ],
        1_000,
    );
    assert_eq!(
        messages(&rt),
        [
            "evictions-respect-budgets at 300: pod default/web-1 was evicted without a disruption taken from its budget(s) web-pdb",
            "evictions-respect-budgets at 400: poddisruptionbudget default/web-pdb: a disruption was taken for web-2 while disruptionsAllowed was 0",
        ]
    );
}

// The real eviction subresource with a disruption allowed: no violation.
#[test]
fn evictions_accept_the_eviction_subresource() {
    let mut rt = runtime(Box::new(EvictionsRespectBudgets::default()), &[PDB, WEB_POD]);
    rt.as_actor("kubectl", |ctx| {
        running(ctx);
        pdb_status(ctx, 1);
    });
    rt.with_api("kubectl", |api, req, _| api.evict("default", "web-1", DeleteOptions::default(), req).unwrap());
    assert!(rt.violations().is_empty(), "{:?}", messages(&rt));
}

// ---- EndpointSlices -------------------------------------------------------------------------------

const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n";
const OTHER_POD: &str =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: other, namespace: default, labels: {app: other}}\nspec:\n  containers: [{name: c, image: nginx}]\n";

fn slice_listing(ctx: &mut Ctx, pods: &[&str]) {
    let endpoints: Vec<serde_json::Value> = pods
        .iter()
        .map(|name| {
            let pod = get(ctx, ("", "pods"), name);
            serde_json::json!({"addresses": ["10.244.0.9"], "targetRef": {"kind": "Pod", "namespace": "default", "name": name, "uid": pod.metadata().uid}})
        })
        .collect();
    let slice = serde_json::json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "namespace": "default", "labels": {"kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
        "addressType": "IPv4", "endpoints": endpoints, "ports": [{"port": 80, "protocol": "TCP"}],
    });
    let info = kind_info("discovery.k8s.io/v1", "EndpointSlice").unwrap();
    ctx.create(Object::from_json(info, slice).unwrap()).unwrap();
}

// An EndpointSlice controller that lists a pod its Service does not select.
#[test]
fn endpointslices_catch_a_pod_the_service_does_not_select() {
    let mut rt = runtime(Box::new(EndpointSlicesMatchSelectors::default()), &[SERVICE, WEB_POD, OTHER_POD]);
    run_broken(&mut rt, "endpointslice-controller", vec![(1_000, |ctx| slice_listing(ctx, &["web-1", "other"]))], 2_000);
    assert_eq!(
        messages(&rt),
        ["endpointslices-match-selectors at 1000: endpointslice default/web-abc of service web lists pod default/other, which does not match the Service's selector"]
    );
    // Right after a relabel the controller may not know yet; long after, it must.
    let mut rt = runtime(Box::new(EndpointSlicesMatchSelectors::default()), &[SERVICE, WEB_POD]);
    run_broken(
        &mut rt,
        "endpointslice-controller",
        vec![
            (1_000, |ctx| {
                let Object::Pod(mut p) = get(ctx, ("", "pods"), "web-1") else { unreachable!() };
                p.metadata.labels = Some([("app".to_string(), "moved".to_string())].into());
                ctx.update(Object::Pod(p)).unwrap();
            }),
            (1_002, |ctx| slice_listing(ctx, &["web-1"])),
        ],
        2_000,
    );
    assert!(rt.violations().is_empty(), "{:?}", messages(&rt));
}

// ---- dangling owners --------------------------------------------------------------------------------

// A garbage collector that never runs: the ReplicaSet is gone, its pod names it as controller.
#[test]
fn dangling_owners_catch_a_dependent_the_collector_left() {
    let rs = "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web-rs, namespace: default}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n";
    let mut rt = runtime(Box::new(NoDanglingOwners), &[rs]);
    run_broken(
        &mut rt,
        "replicaset-controller",
        vec![
            (100, |ctx| {
                let uid = get(ctx, ("apps", "replicasets"), "web-rs").metadata().uid.clone().unwrap();
                ctx.create(object(&format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-rs-x\n  namespace: default\n  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-rs, uid: '{uid}', controller: true}}]\nspec: {{containers: [{{name: c, image: nginx}}]}}\n"))).unwrap();
            }),
            (200, |ctx| {
                let info = kind_info("apps/v1", "ReplicaSet").unwrap();
                ctx.delete(info, "default", "web-rs", DeleteOptions::default()).unwrap();
            }),
        ],
        1_000,
    );
    assert!(rt.violations().is_empty(), "checked only at the end");
    rt.finish_checks();
    let found = messages(&rt);
    assert_eq!(found.len(), 1);
    assert!(found[0].contains("Pod default/web-rs-x names ReplicaSet web-rs (uid "), "{found:?}");
}
