//! The host's routing for [`crate::policy::busy_poll`].

use crate::engine::Scheduler;
use crate::host::env::lend;
use crate::host::{Event, Host, Step};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

impl Host {
    /// One step of the loop.
    pub(crate) fn busy_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        let busy = |p: &PolicyConfig| matches!(p, PolicyConfig::BusyPoll { .. });
        lend(
            self,
            now,
            s,
            |h| &mut h.busy,
            |h| h.uses(busy),
            |b, env| b.step(env),
        )
        .unwrap_or(Step::Done)
    }
}
