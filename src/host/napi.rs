//! The host's routing for [`crate::policy::napi`].

use crate::engine::Scheduler;
use crate::host::env::HostEnv;
use crate::host::{Event, Host, Step};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

impl Host {
    /// napi_schedule from `nic`'s receive interrupt.
    pub(crate) fn napi_schedule(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(mut n) = self.napi.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::Napi { .. })),
                "napi re-entered while lent to a step"
            );
            return;
        };
        n.schedule(nic, &mut HostEnv { h: self, now, s });
        self.napi = Some(n);
    }

    /// The softirq dispatcher reached the NET_RX bit. Returns whether a net_rx_action
    /// started.
    pub(crate) fn net_rx_begin(&mut self, now: SimTime) -> bool {
        self.napi.as_mut().is_some_and(|n| n.softirq_begin(now))
    }

    /// One step of net_rx_action in softirq context.
    pub(crate) fn net_rx_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        let Some(mut n) = self.napi.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::Napi { .. })),
                "napi re-entered while lent to a step"
            );
            return Step::Done;
        };
        let step = n.softirq_step(&mut HostEnv { h: self, now, s });
        self.napi = Some(n);
        step
    }

    /// One step of ksoftirqd.
    pub(crate) fn ksoftirqd_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let Some(mut n) = self.napi.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::Napi { .. })),
                "napi re-entered while lent to a step"
            );
            return Step::Done;
        };
        let step = n.ksoftirqd_step(first, &mut HostEnv { h: self, now, s });
        self.napi = Some(n);
        step
    }

    /// Frames held by a NAPI poll step.
    pub(crate) fn napi_held(&self) -> usize {
        self.napi.as_ref().map_or(0, |n| n.held())
    }
}
