//! The host's routing for [`crate::policy::busy_poll`].

use crate::engine::Scheduler;
use crate::host::env::HostEnv;
use crate::host::{Event, Host, Step};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

impl Host {
    /// One step of the loop.
    pub(crate) fn busy_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        let Some(mut b) = self.busy.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::BusyPoll { .. })),
                "busy re-entered while lent to a step"
            );
            return Step::Done;
        };
        let step = b.step(&mut HostEnv { h: self, now, s });
        self.busy = Some(b);
        step
    }
}
