//! Writes the OpenAPI v3 component schemas of every kind kubesim serves (k8s-openapi v1_34's
//! schemars schemas, which carry upstream's descriptions) as one JSON object, name -> schema,
//! with references in `#/components/schemas/NAME` form. Run:
//! `cargo run --release --manifest-path crates/server/openapi-gen/Cargo.toml > crates/api/src/openapi/definitions.json`

use k8s_openapi::api;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;

fn main() {
    let settings = schemars::generate::SchemaSettings::openapi3();
    let mut generator = settings.into_generator();
    macro_rules! kinds { ($($t:ty),* $(,)?) => { $( let _ = generator.subschema_for::<$t>(); )* } }
    kinds!(
        api::core::v1::Binding, api::core::v1::ComponentStatus, api::core::v1::ConfigMap, api::core::v1::Endpoints,
        api::core::v1::Event, api::core::v1::LimitRange, api::core::v1::Namespace, api::core::v1::Node,
        api::core::v1::PersistentVolume, api::core::v1::PersistentVolumeClaim, api::core::v1::Pod, api::core::v1::PodTemplate,
        api::core::v1::ReplicationController, api::core::v1::ResourceQuota, api::core::v1::Secret, api::core::v1::Service,
        api::core::v1::ServiceAccount,
        api::admissionregistration::v1::MutatingWebhookConfiguration, api::admissionregistration::v1::ValidatingWebhookConfiguration,
        api::admissionregistration::v1::ValidatingAdmissionPolicy, api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
        apiextensions::CustomResourceDefinition, apiregistration::APIService,
        api::apps::v1::ControllerRevision, api::apps::v1::DaemonSet, api::apps::v1::Deployment, api::apps::v1::ReplicaSet, api::apps::v1::StatefulSet,
        api::autoscaling::v1::HorizontalPodAutoscaler, api::autoscaling::v2::HorizontalPodAutoscaler, api::autoscaling::v1::Scale,
        api::batch::v1::CronJob, api::batch::v1::Job,
        api::certificates::v1::CertificateSigningRequest, api::coordination::v1::Lease, api::discovery::v1::EndpointSlice,
        api::events::v1::Event, api::flowcontrol::v1::FlowSchema, api::flowcontrol::v1::PriorityLevelConfiguration,
        api::networking::v1::Ingress, api::networking::v1::IngressClass, api::networking::v1::NetworkPolicy,
        api::networking::v1::IPAddress, api::networking::v1::ServiceCIDR, api::node::v1::RuntimeClass,
        api::policy::v1::PodDisruptionBudget, api::policy::v1::Eviction,
        api::rbac::v1::ClusterRole, api::rbac::v1::ClusterRoleBinding, api::rbac::v1::Role, api::rbac::v1::RoleBinding,
        api::resource::v1::DeviceClass, api::resource::v1::ResourceClaim, api::resource::v1::ResourceClaimTemplate, api::resource::v1::ResourceSlice,
        api::scheduling::v1::PriorityClass,
        api::storage::v1::CSIDriver, api::storage::v1::CSINode, api::storage::v1::CSIStorageCapacity, api::storage::v1::StorageClass,
        api::storage::v1::VolumeAttachment, api::storage::v1::VolumeAttributesClass,
        api::authorization::v1::SelfSubjectAccessReview, api::authorization::v1::SelfSubjectRulesReview,
        api::authentication::v1::SelfSubjectReview,
        meta::Status, meta::DeleteOptions,
    );
    let definitions = generator.take_definitions(true);
    println!("{}", serde_json::to_string(&definitions).expect("schemas serialize"));
}
