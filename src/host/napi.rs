//! The host's routing for [`crate::policy::napi`].

use crate::engine::Scheduler;
use crate::host::env::lend;
use crate::host::{Event, Host, Step};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

/// Whether a NIC uses NAPI.
fn napi(p: &PolicyConfig) -> bool {
    matches!(p, PolicyConfig::Napi { .. })
}

impl Host {
    /// napi_schedule from `nic`'s receive interrupt.
    pub(crate) fn napi_schedule(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        lend(
            self,
            now,
            s,
            |h| &mut h.napi,
            |h| h.uses(napi),
            |n, env| n.schedule(nic, env),
        );
    }

    /// The softirq dispatcher reached the NET_RX bit. Returns whether a net_rx_action
    /// started.
    pub(crate) fn net_rx_begin(&mut self, now: SimTime) -> bool {
        self.napi.as_mut().is_some_and(|n| n.softirq_begin(now))
    }

    /// One step of net_rx_action in softirq context.
    pub(crate) fn net_rx_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        lend(
            self,
            now,
            s,
            |h| &mut h.napi,
            |h| h.uses(napi),
            |n, env| n.softirq_step(env),
        )
        .unwrap_or(Step::Done)
    }

    /// One step of ksoftirqd.
    pub(crate) fn ksoftirqd_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        lend(
            self,
            now,
            s,
            |h| &mut h.napi,
            |h| h.uses(napi),
            |n, env| n.ksoftirqd_step(first, env),
        )
        .unwrap_or(Step::Done)
    }

    /// Frames held by a NAPI poll step.
    pub(crate) fn napi_held(&self) -> usize {
        self.napi.as_ref().map_or(0, |n| n.held())
    }
}
