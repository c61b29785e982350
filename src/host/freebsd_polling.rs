//! The host's routing for [`crate::policy::freebsd_polling`].

use crate::engine::Scheduler;
use crate::host::env::lend;
use crate::host::{Event, Host, Step};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

/// Whether a NIC is polled by kern_poll.
fn polled(p: &PolicyConfig) -> bool {
    matches!(p, PolicyConfig::FreebsdPolling)
}

impl Host {
    /// A frame arrived on a polling NIC.
    pub(crate) fn polling_rx(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        lend(
            self,
            now,
            s,
            |h| &mut h.polling,
            |h| h.uses(polled),
            |p, env| p.rx_arrived(env),
        );
    }

    /// hardclock_device_poll; the next tick is due one clock period later.
    pub(crate) fn hardclock(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        lend(
            self,
            now,
            s,
            |h| &mut h.polling,
            |h| h.uses(polled),
            |p, env| {
                p.hardclock(env);
                env.s.at(now + p.tick, Event::Tick);
            },
        );
    }

    /// netisr_poll: set up one round of poll-routine calls.
    pub(crate) fn netisr_poll_begin(&mut self, now: SimTime) {
        if let Some(p) = &mut self.polling {
            p.netisr_poll_begin(now);
        }
    }

    /// One step of netisr_poll.
    pub(crate) fn netisr_poll_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        lend(
            self,
            now,
            s,
            |h| &mut h.polling,
            |h| h.uses(polled),
            |p, env| p.netisr_poll_step(env),
        )
        .unwrap_or(Step::Done)
    }

    /// netisr_pollmore.
    pub(crate) fn netisr_pollmore(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        lend(
            self,
            now,
            s,
            |h| &mut h.polling,
            |h| h.uses(polled),
            |p, env| p.netisr_pollmore(env),
        );
    }

    /// One step of the idle loop's polling.
    pub(crate) fn idle_poll_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        lend(
            self,
            now,
            s,
            |h| &mut h.polling,
            |h| h.uses(polled),
            |p, env| p.idle_step(env),
        )
        .unwrap_or(Step::Done)
    }

    /// Frames held by a poll step.
    pub(crate) fn polling_held(&self) -> usize {
        self.polling.as_ref().map_or(0, |p| p.held())
    }
}
