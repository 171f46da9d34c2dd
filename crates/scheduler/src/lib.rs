//! The kube-scheduler model (placeholder: the scheduler issue fills this crate).

#![deny(missing_docs)]

use kubesim_apiserver::{Component, Ctx, Interest, WatchEvent};
use std::any::Any;

/// The scheduler component.
#[derive(Debug, Default)]
pub struct Scheduler {}

impl Scheduler {
    /// A scheduler with the default profile.
    pub fn new() -> Scheduler {
        Scheduler {}
    }
}

impl Component for Scheduler {
    fn name(&self) -> &str {
        "scheduler"
    }
    fn interests(&self) -> Vec<Interest> {
        Vec::new()
    }
    fn start(&mut self, _ctx: &mut Ctx) {}
    fn on_watch(&mut self, _event: &WatchEvent, _ctx: &mut Ctx) {}
    fn on_timer(&mut self, _token: u64, _ctx: &mut Ctx) {}
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
