//! Ingress and IngressClass through the API server: the DefaultIngressClass admission plugin
//! (plugin/pkg/admission/network/defaultingressclass/admission.go and its admission_test.go
//! cases), SetDefaults_IngressClass, and the validation messages users hit
//! (pkg/apis/networking/validation: ValidateIngressCreate, validateHTTPIngressPath,
//! validateIngressBackend, validateIngressClassSpec).

use kubesim_api::decode::{decode_document, parse_documents};
use kubesim_api::object::Object;
use kubesim_apiserver::{ApiServer, Request, SimRng};
use rand_core::SeedableRng;
use std::sync::Arc;

fn object(yaml: &str) -> Object {
    let (docs, errors) = parse_documents("t.yaml", yaml);
    assert!(errors.is_empty(), "{errors:?}");
    let mut o = decode_document("t.yaml", &docs[0]).unwrap().remove(0);
    if o.info().unwrap().scope == kubesim_api::Scope::Namespaced && o.namespace().is_empty() {
        o.metadata_mut().namespace = Some("default".into());
    }
    o
}

struct Api {
    api: ApiServer,
    rng: SimRng,
    actor: Arc<str>,
    now: u64,
}

impl Api {
    fn new() -> Api {
        let mut api = Api { api: ApiServer::new(), rng: SimRng::seed_from_u64(1), actor: "test".into(), now: 0 };
        let _ = api.create("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n");
        api
    }
    /// Creates an object one second after the previous one.
    fn create(&mut self, yaml: &str) -> Result<Arc<Object>, kubesim_apiserver::ApiError> {
        self.now += 1_000;
        let mut req = Request { now: self.now, rng: &mut self.rng, actor: &self.actor };
        self.api.create(object(yaml), &mut req)
    }
    fn update(&mut self, yaml: &str) -> Result<Arc<Object>, kubesim_apiserver::ApiError> {
        self.now += 1_000;
        let mut req = Request { now: self.now, rng: &mut self.rng, actor: &self.actor };
        self.api.update(object(yaml), &mut req)
    }
}

fn class(name: &str, default: Option<&str>) -> String {
    let annotations = default.map(|d| format!("  annotations: {{ingressclass.kubernetes.io/is-default-class: \"{d}\"}}\n")).unwrap_or_default();
    format!("apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: {name}\n{annotations}spec:\n  controller: k8s.io/{name}\n")
}

const INGRESS: &str =
    "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\nspec:\n  defaultBackend:\n    service: {name: web, port: {number: 80}}\n";

fn class_of(o: &Object) -> Option<String> {
    match o {
        Object::Ingress(i) => i.spec.as_ref().and_then(|s| s.ingress_class_name.clone()),
        _ => panic!("not an ingress"),
    }
}

/// admission_test.go TestDefaultIngressClass: no class → nothing; one default → it; a class
/// already named or the legacy annotation → unchanged; `"false"` and other values are not
/// defaults; two defaults → the newest (v1.25+, kubernetes#110974), not an error.
#[test]
fn default_ingress_class_admission_follows_upstream_cases() {
    let mut api = Api::new();
    assert_eq!(class_of(&api.create(INGRESS).unwrap()), None, "no IngressClass at all: unchanged");
    api.create(&class("nondefault", None)).unwrap();
    api.create(&class("explicit-false", Some("false"))).unwrap();
    api.create(&class("not-true", Some("yes"))).unwrap();
    assert_eq!(class_of(&api.create(&INGRESS.replace("name: web\n", "name: a\n")).unwrap()), None, "no default among them");
    api.create(&class("default1", Some("true"))).unwrap();
    assert_eq!(class_of(&api.create(&INGRESS.replace("name: web\n", "name: b\n")).unwrap()).as_deref(), Some("default1"));
    let named = INGRESS.replace("name: web\n", "name: c\n").replace("spec:\n", "spec:\n  ingressClassName: nondefault\n");
    assert_eq!(class_of(&api.create(&named).unwrap()).as_deref(), Some("nondefault"), "a named class is kept");
    let annotated = INGRESS.replace("name: web\n", "name: d\n  annotations: {kubernetes.io/ingress.class: nginx}\n");
    assert_eq!(class_of(&api.create(&annotated).unwrap()), None, "the legacy annotation counts as a class");
    api.create(&class("default2", Some("true"))).unwrap();
    assert_eq!(class_of(&api.create(&INGRESS.replace("name: web\n", "name: e\n")).unwrap()).as_deref(), Some("default2"), "the newest default wins");
}

/// The plugin acts on CREATE only: an update that drops the class keeps it dropped.
#[test]
fn default_ingress_class_is_not_applied_on_update() {
    let mut api = Api::new();
    api.create(&class("nginx", Some("true"))).unwrap();
    let created = api.create(INGRESS).unwrap();
    assert_eq!(class_of(&created).as_deref(), Some("nginx"));
    let updated = api.update(INGRESS).unwrap();
    assert_eq!(class_of(&updated), None);
}

#[test]
fn ingress_validation_messages_match_upstream() {
    let mut api = Api::new();
    let err = |api: &mut Api, yaml: &str| api.create(yaml).unwrap_err().message;
    let head = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x}\n";
    let path = |p: &str| format!("{head}spec:\n  rules:\n  - http:\n      paths:\n      - {p}\n");
    assert_eq!(
        err(&mut api, &format!("{head}spec: {{}}\n")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"
    );
    assert_eq!(
        err(&mut api, &path("{path: /foo, backend: {service: {name: web, port: {number: 80}}}}")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"
    );
    assert_eq!(
        err(&mut api, &path("{path: foo, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].http.paths[0].path: Invalid value: \"foo\": must be an absolute path"
    );
    assert_eq!(
        err(&mut api, &path("{path: /a//b, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].http.paths[0].path: Invalid value: \"/a//b\": must not contain '//'"
    );
    assert_eq!(
        err(&mut api, &path("{path: /, pathType: Regex, backend: {service: {name: web, port: {number: 80}}}}")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].http.paths[0].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""
    );
    assert_eq!(
        err(&mut api, &path("{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}, resource: {kind: StorageBucket, name: b}}}")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].http.paths[0].backend: Invalid value: \"\": cannot set both resource and service backends"
    );
    assert_eq!(
        err(&mut api, &path("{path: /, pathType: Prefix, backend: {}}")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].http.paths[0].backend: Invalid value: \"\": resource or service backend is required"
    );
    assert_eq!(
        err(&mut api, &path("{path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http, number: 80}}}}")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].http.paths[0].backend: Invalid value: \"\": cannot set both port name & port number"
    );
    assert_eq!(
        err(&mut api, &path("{path: /, pathType: Prefix, backend: {service: {name: web}}}")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].http.paths[0].backend: Required value: port name or number is required"
    );
    assert_eq!(
        err(&mut api, &format!("{head}spec:\n  rules:\n  - host: 10.0.0.1\n    http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}]}}\n")),
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address"
    );
    let wildcard = err(&mut api, &format!("{head}spec:\n  rules:\n  - host: \"*.*.foo.com\"\n    http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}]}}\n"));
    assert!(wildcard.starts_with("Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].host: Invalid value: \"*.*.foo.com\": a wildcard DNS-1123 subdomain must start with '*.'"), "{wildcard}");
    // ImplementationSpecific may leave the path empty; Exact and Prefix may not.
    api.create(&path("{pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}")).unwrap();
    // ValidateIngressCreate: the legacy annotation must agree with ingressClassName.
    let both = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: y, annotations: {kubernetes.io/ingress.class: a}}\nspec:\n  ingressClassName: b\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n";
    assert_eq!(err(&mut api, both), "Ingress.networking.k8s.io \"y\" is invalid: annotations.kubernetes.io/ingress.class: Invalid value: \"a\": must match `ingressClassName` when both are specified");
}

#[test]
fn ingress_class_defaults_and_validation() {
    let mut api = Api::new();
    let with_params = "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: external-lb}\nspec:\n  controller: example.com/ingress-controller\n  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb}\n";
    let created = api.create(with_params).unwrap();
    let Object::IngressClass(c) = created.as_ref() else { panic!() };
    assert_eq!(c.spec.as_ref().unwrap().parameters.as_ref().unwrap().scope.as_deref(), Some("Cluster"), "SetDefaults_IngressClass");
    let err = api.create("apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: bad}\nspec: {controller: nginx}\n").unwrap_err();
    assert_eq!(err.message, "IngressClass.networking.k8s.io \"bad\" is invalid: spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")");
    let err = api.create("apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: none}\nspec: {}\n").unwrap_err();
    assert_eq!(err.message, "IngressClass.networking.k8s.io \"none\" is invalid: spec.controller: Required value");
    let err = api.update(&with_params.replace("example.com/ingress-controller", "example.com/other")).unwrap_err();
    assert!(
        err.message.starts_with("IngressClass.networking.k8s.io \"external-lb\" is invalid: spec.controller: Invalid value: \"example.com/other\""),
        "{}",
        err.message
    );
    let namespaced = with_params.replace("external-lb}\nspec", "ns-params}\nspec").replace("name: external-lb}", "name: p, scope: Namespace}");
    let err = api.create(&namespaced).unwrap_err();
    assert_eq!(
        err.message,
        "IngressClass.networking.k8s.io \"ns-params\" is invalid: spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"
    );
}
