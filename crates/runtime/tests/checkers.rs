//! The runtime's checker hook: registered invariant checkers see every commit, right after the
//! handler that made it, and record violations instead of panicking.

use kubesim_api::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_api::object::Object;
use kubesim_apiserver::ApiServer;
use kubesim_runtime::{Checker, Component, Ctx, Interest, Placement, Runtime, RuntimeConfig, WatchEvent};
use kubesim_store::Commit;

/// Invariant: no ConfigMap ever carries the label `broken=true`.
#[derive(Clone)]
struct NoBrokenConfigMaps;

impl Checker for NoBrokenConfigMaps {
    fn name(&self) -> &str {
        "no-broken-configmaps"
    }
    fn check(&mut self, commit: &Commit, _api: &ApiServer) -> Result<(), String> {
        let broken = commit.object.metadata().labels.as_ref().is_some_and(|l| l.get("broken").map(String::as_str) == Some("true"));
        if broken {
            return Err(format!("configmap {}/{} is labelled broken=true", commit.object.namespace(), commit.object.name()));
        }
        Ok(())
    }
}

/// A deliberately broken component: after 1 s it writes the forbidden label.
#[derive(Clone)]
struct Breaker;

impl Component for Breaker {
    fn name(&self) -> &str {
        "breaker"
    }
    fn interests(&self) -> Vec<Interest> {
        Vec::new()
    }
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.after(1_000, 1);
    }
    fn on_watch(&mut self, _event: &WatchEvent, _ctx: &mut Ctx) {}
    fn on_timer(&mut self, _token: u64, ctx: &mut Ctx) {
        let labels = [("broken".to_string(), "true".to_string())].into_iter().collect();
        let cm = ConfigMap {
            metadata: ObjectMeta { name: Some("oops".into()), namespace: Some("default".into()), labels: Some(labels), ..Default::default() },
            ..Default::default()
        };
        ctx.create(Object::ConfigMap(Box::new(cm))).expect("the API server accepts it");
    }
}

fn runtime() -> Runtime {
    let mut runtime = Runtime::new(RuntimeConfig::seeded(1));
    runtime.as_actor("kubectl", |ctx| {
        let ns = Namespace { metadata: ObjectMeta { name: Some("default".into()), ..Default::default() }, ..Default::default() };
        ctx.create(Object::Namespace(Box::new(ns))).unwrap();
    });
    runtime
}

#[test]
fn a_checker_catches_the_commit_that_breaks_its_invariant() {
    let mut runtime = runtime();
    runtime.add_checker(Box::new(NoBrokenConfigMaps));
    runtime.add_component(Box::new(Breaker), Placement::ControlPlane);
    runtime.run_until(500);
    assert!(runtime.violations().is_empty(), "nothing broken yet");
    runtime.run_until(2_000);
    let violations = runtime.violations();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].checker, "no-broken-configmaps");
    assert_eq!(violations[0].t_ms, 1_000, "found at the commit itself, not later");
    assert!(violations[0].message.contains("default/oops"));
}

#[test]
fn a_healthy_run_records_no_violations() {
    let mut runtime = runtime();
    runtime.add_checker(Box::new(NoBrokenConfigMaps));
    runtime.run_until(2_000);
    assert!(runtime.violations().is_empty());
}
