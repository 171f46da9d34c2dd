//! Named timers: a component arms a timer with a value saying what it is for, and gets that
//! value back when it fires — instead of packing meaning into the bits of a `u64` token.

use crate::component::Ctx;
use kubesim_api::Millis;
use std::collections::BTreeMap;

/// Outstanding timers of one component, by token.
///
/// Guarantee: every armed timer fires at most once ([`Timers::fire`] removes it); timers
/// dropped by the runtime (the host lost power) are forgotten with [`Timers::clear`].
#[derive(Clone, Debug)]
pub struct Timers<W: Clone> {
    armed: BTreeMap<u64, W>,
    next_token: u64,
}

impl<W: Clone> Default for Timers<W> {
    fn default() -> Self {
        Timers { armed: BTreeMap::new(), next_token: 1 }
    }
}

impl<W: Clone> Timers<W> {
    /// Arms a timer `delay_ms` from now.
    pub fn arm(&mut self, ctx: &mut Ctx, delay_ms: Millis, what: W) {
        let token = self.insert(what);
        ctx.after(delay_ms, token);
    }

    /// Arms a periodic-housekeeping timer (does not keep a run going on its own).
    pub fn arm_periodic(&mut self, ctx: &mut Ctx, delay_ms: Millis, what: W) {
        let token = self.insert(what);
        ctx.after_periodic(delay_ms, token);
    }

    /// What a fired token was armed for (`None` for unknown or already fired tokens).
    pub fn fire(&mut self, token: u64) -> Option<W> {
        self.armed.remove(&token)
    }

    /// Forgets every armed timer (their events were dropped with the process that armed them).
    pub fn clear(&mut self) {
        self.armed.clear();
    }

    /// How many timers are armed.
    pub fn len(&self) -> usize {
        self.armed.len()
    }

    /// Whether no timer is armed.
    pub fn is_empty(&self) -> bool {
        self.armed.is_empty()
    }

    fn insert(&mut self, what: W) -> u64 {
        let token = self.next_token;
        self.next_token += 1;
        self.armed.insert(token, what);
        token
    }
}
