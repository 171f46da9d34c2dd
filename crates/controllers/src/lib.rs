//! The kube-controller-manager model (placeholder: the controllers issue fills this crate).

#![deny(missing_docs)]

use kubesim_apiserver::Component;

/// Every controller kube-controller-manager runs by default, in a fixed order.
pub fn controllers() -> Vec<Box<dyn Component>> {
    Vec::new()
}
