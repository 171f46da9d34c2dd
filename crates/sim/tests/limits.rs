//! The browser's size cap: a runaway workload (a million replicas, a CronJob spawning Jobs
//! every minute) is refused past the cap with 403s that controllers record as FailedCreate
//! events naming it, and the world goes on.

use kubesim_apiserver::WorldLimits;
use kubesim_sim::loader::{apply, load};
use kubesim_sim::scenario::InputFile;
use kubesim_sim::world::WorldConfig;

const RUNAWAY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: many}\nspec:\n  replicas: 1000000\n  selector: {matchLabels: {app: many}}\n  template:\n    metadata: {labels: {app: many}}\n    spec:\n      containers: [{name: c, image: 'registry.k8s.io/pause:3.10', resources: {requests: {cpu: 1m, memory: 1Mi}}}]\n";

#[test]
fn a_million_replicas_stop_at_the_cap_with_a_clear_message() {
    let limits = WorldLimits { pods: 60, objects: 10_000 };
    let (mut world, outcomes, errors) = load(WorldConfig { limits: Some(limits), ..WorldConfig::seeded(1) }, &[]);
    assert!(errors.is_empty() && outcomes.is_empty(), "{errors:?}");
    let outcome = apply(&mut world, &InputFile { name: "runaway.yaml".into(), text: RUNAWAY.into() });
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    world.run_until(60_000);
    let pods = world.api().store().count(("", "pods"));
    assert_eq!(pods, 60, "the cap holds (CoreDNS's pods included)");
    assert!(world.api().limit_refusals() > 0);
    let events = world.run_command("kubectl get events --field-selector reason=FailedCreate -o custom-columns=MSG:.message --no-headers");
    let first = events.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Error creating: pods \"many-") && first.contains("is forbidden: this kubesim world holds its limit of 60 pods"),
        "{}",
        events.stdout
    );
    // The world goes on: scaling down makes room and the rest of the cluster still works.
    let scale = world.run_command("kubectl scale deployment many --replicas=10");
    assert_eq!(scale.exit_code, 0, "{scale:?}");
    world.run_until(world.now() + 60_000);
    let running = world.run_command("kubectl get pods -l app=many --field-selector=status.phase=Running -o name");
    assert_eq!(running.stdout.lines().count(), 10, "{}", running.stdout);
    let cm = world.run_command("kubectl create configmap still-works --from-literal=a=b");
    assert_eq!(cm.exit_code, 0, "{cm:?}");
}

#[test]
fn no_cap_natively() {
    let (world, _, _) = load(WorldConfig::seeded(1), &[]);
    assert_eq!(world.api().limits(), None);
}
