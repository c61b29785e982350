//! The host's routing for [`crate::policy::deferred`].

use crate::engine::Scheduler;
use crate::host::env::lend;
use crate::host::{Event, Host, Step};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

impl Host {
    /// One step of `nic`'s task.
    pub(crate) fn taskq_step(
        &mut self,
        nic: usize,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        lend(
            self,
            now,
            s,
            |h| &mut h.taskqs[nic],
            |h| matches!(h.policies[nic], PolicyConfig::Deferred { .. }),
            |t, env| t.step(first, env),
        )
        .unwrap_or(Step::Done)
    }
}
