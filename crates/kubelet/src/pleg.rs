//! The pod lifecycle event generator (pkg/kubelet/pleg): relists the host's containers on a
//! 1 s grid, but only after the runtime changed (relisting an unchanged runtime has no effect,
//! so idle nodes cost nothing), and resyncs the pods whose containers changed state.

use crate::kubelet::{Kubelet, Wake, RELIST_MS};
use kubesim_host::cri::SandboxState;
use kubesim_host::Host;
use kubesim_runtime::Ctx;
use std::collections::{BTreeMap, BTreeSet};

impl Kubelet {
    /// The runtime changed (a call completed, a container exited): relist at the next grid
    /// tick. (The host runs the processes themselves; it reports exits as
    /// `HostEvent::RuntimeChanged`.)
    pub(crate) fn mark_runtime_changed(&mut self, _host: &mut Host, ctx: &mut Ctx) {
        // PLEG relists on a 1 s grid (phase-shifted per node so nodes do not tick in lockstep).
        let phase = (self.setup.index as u64 * 137) % RELIST_MS;
        let next_tick = ((ctx.now.saturating_sub(phase)) / RELIST_MS + 1) * RELIST_MS + phase;
        if self.relist_at.is_none_or(|at| at > next_tick) {
            self.relist_at = Some(next_tick);
            self.timers.arm(ctx, next_tick - ctx.now, Wake::Relist);
        }
    }

    pub(crate) fn relist(&mut self, host: &mut Host, ctx: &mut Ctx) {
        self.relist_at = None;
        let mut current = BTreeMap::new();
        for c in host.cri.list_containers() {
            current.insert(c.id.clone(), (c.state, c.finished_at));
        }
        let mut changed_sandboxes = BTreeSet::new();
        for (id, state) in &current {
            if self.pleg_snapshot.get(id) != Some(state) {
                if let Ok(c) = host.cri.container_status(id) {
                    changed_sandboxes.insert(c.sandbox_id.clone());
                }
            }
        }
        self.pleg_snapshot = current;
        let sandboxes: BTreeMap<String, SandboxState> = host.cri.list_pod_sandbox().into_iter().map(|s| (s.id.clone(), s.state)).collect();
        for (id, state) in &sandboxes {
            if self.pleg_sandboxes.get(id) != Some(state) {
                changed_sandboxes.insert(id.clone());
            }
        }
        self.pleg_sandboxes = sandboxes;
        let uids: Vec<String> =
            self.workers.iter().filter(|(_, w)| w.sandbox.as_ref().is_some_and(|s| changed_sandboxes.contains(s))).map(|(uid, _)| uid.clone()).collect();
        if !uids.is_empty() {
            ctx.note_with(|| format!("kubelet/{}", self.setup.name), "PLEG", || format!("relist: {} pod(s) changed", uids.len()));
        }
        for uid in uids {
            self.sync(host, &uid, ctx);
        }
    }
}
