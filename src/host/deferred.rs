//! The host's routing for [`crate::policy::deferred`].

use crate::engine::Scheduler;
use crate::host::env::HostEnv;
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
        let Some(mut t) = self.taskqs[nic].take() else {
            debug_assert!(
                !matches!(self.policies[nic], PolicyConfig::Deferred { .. }),
                "a task re-entered while lent to its step"
            );
            return Step::Done;
        };
        let step = t.step(first, &mut HostEnv { h: self, now, s });
        self.taskqs[nic] = Some(t);
        step
    }
}
