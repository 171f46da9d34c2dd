//! Test fixtures: an API server with the built-in namespaces and a few helpers.
#![allow(dead_code)]

use kubesim_api::object::Object;
use kubesim_apiserver::{ApiServer, Request, SimRng};
use kubesim_kubectl::{run_line, NoCluster, Output};
use rand_core::SeedableRng;
use std::sync::Arc;

pub struct Fixture {
    pub api: ApiServer,
    pub rng: SimRng,
    pub now: u64,
    pub cluster: NoCluster,
}

impl Fixture {
    pub fn new() -> Fixture {
        let mut f = Fixture { api: ApiServer::new(), rng: SimRng::seed_from_u64(7), now: 0, cluster: NoCluster::default() };
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            f.create_namespace(ns);
        }
        f
    }

    pub fn create_namespace(&mut self, name: &str) {
        let text = format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n");
        let r = self.apply("ns.yaml", &text, "default");
        assert!(r.iter().all(|r| r.outcome.is_ok()), "{r:?}");
    }

    pub fn apply(&mut self, file: &str, text: &str, ns: &str) -> Vec<kubesim_kubectl::ApplyResult> {
        let actor: Arc<str> = Arc::from("test");
        let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
        kubesim_kubectl::apply_text(file, text, ns, &mut self.api, &mut req)
    }

    pub fn kubectl(&mut self, line: &str) -> Output {
        let actor: Arc<str> = Arc::from("test");
        let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
        run_line(line, &mut self.api, &mut req, &mut self.cluster)
    }

    pub fn file(&mut self, path: &str, text: &str) {
        self.cluster.files.insert(path.to_string(), text.to_string());
    }

    /// Every stored object, as JSON, for "nothing half-applied" checks.
    pub fn snapshot(&self) -> Vec<String> {
        let store = self.api.store();
        let mut out = Vec::new();
        for resource in store.resources().collect::<Vec<_>>() {
            for o in store.list(resource, None) {
                out.push(o.to_json().to_string());
            }
        }
        out
    }

    pub fn get(&self, kind: &str, ns: &str, name: &str) -> Option<Arc<Object>> {
        let info = kubesim_api::object::resolve_resource(kind).unwrap();
        self.api.get(info, ns, name).ok()
    }

    /// Replaces a stored object's status (as the controllers would).
    pub fn set_status(&mut self, object: Object) {
        let actor: Arc<str> = Arc::from("test");
        let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
        self.api.update_status(object, &mut req).unwrap();
    }

    pub fn update(&mut self, object: Object) {
        let actor: Arc<str> = Arc::from("test");
        let mut req = Request { now: self.now, rng: &mut self.rng, actor: &actor };
        self.api.update(object, &mut req).unwrap();
    }
}
