//! NetworkPolicy as the CNI's policy agent on each node enforces it (kind's kindnet embeds
//! kube-network-policies). Start here:
//! - [`policy`]: the decision — policies, pods and namespaces compiled into a [`PolicyView`]
//!   that gives each flow's verdict with its reasons ([`PolicyView::explain`]); the one
//!   implementation both enforcement and explanations use.
//! - [`informer`]: the agents' informer keeping the fabric's view current
//!   (`kubesim_runtime::net::route_remote` consults it for every packet).
//! - [`matrix`]: the connectivity matrix in the upstream netpol e2e's truth-table format.

#![deny(missing_docs)]

pub mod informer;
pub mod matrix;
pub mod policy;

pub use informer::PolicyInformer;
pub use policy::{Explanation, PolicyView, Side};
