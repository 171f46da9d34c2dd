//! kubesim's API types layer. Start here:
//! - [`object`]: the stored object model ([`Object`]) over k8s-openapi types, and the kind registry.
//! - [`decode`]: multi-document YAML in, objects or precise errors out.
//! - [`quantity`], [`selector`], [`time`]: the value types every component shares.
//! - [`defaults`] and [`validation`]: the API server's SetDefaults and validation rules.
//! - [`sort`]: stable slice sorts costing one sort instantiation on wasm32; use them, not the slice
//!   methods; and Go's `sort.Sort` where kubectl's unstable order shows.
//! - [`discovery`] and [`openapi`]: what the API server serves to clients (discovery documents,
//!   OpenAPI v2/v3), shared by `kubesim serve` and the kubectl layer.
//! - [`storage`]: the persistent-volume helpers (FindMatchingVolume, node affinity, annotations).
//! - [`csi`]: the CSI names (VolumeAttachment names, unique volume names, kubelet paths, the
//!   external-attacher's finalizer) and the built-in drivers' names.
//! - [`pod`], [`resources`], [`hash`]: pod facts (kubectl's STATUS word, QoS, requests) and the
//!   one stable hash, each computed in exactly one place for every component.
//!
//! Invariant: this crate performs no I/O and knows nothing of the store, the simulation or the UI.

#![deny(missing_docs)]

pub mod csi;
pub mod decode;
pub mod defaults;
pub mod discovery;
pub mod hash;
pub mod object;
pub mod openapi;
pub mod pod;
pub mod podlog;
pub mod quantity;
pub mod resources;
pub mod selector;
pub mod sort;
pub mod storage;
pub mod time;
pub mod validation;
pub mod varint;

pub use k8s_openapi;
pub use object::{kind_info, DynamicObject, KindInfo, Object, Scope};
pub use time::Millis;
