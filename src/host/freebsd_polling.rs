//! The host's routing for [`crate::policy::freebsd_polling`].

use crate::engine::Scheduler;
use crate::host::env::HostEnv;
use crate::host::{Event, Host, Step};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

impl Host {
    /// A frame arrived on a polling NIC.
    pub(crate) fn polling_rx(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(mut p) = self.polling.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::FreebsdPolling)),
                "polling re-entered while lent to a step"
            );
            return;
        };
        p.rx_arrived(&mut HostEnv { h: self, now, s });
        self.polling = Some(p);
    }

    /// hardclock_device_poll; the next tick is due one clock period later.
    pub(crate) fn hardclock(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(mut p) = self.polling.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::FreebsdPolling)),
                "polling re-entered while lent to a step"
            );
            return;
        };
        p.hardclock(&mut HostEnv { h: self, now, s });
        s.at(now + p.tick, Event::Tick);
        self.polling = Some(p);
    }

    /// netisr_poll: set up one round of poll-routine calls.
    pub(crate) fn netisr_poll_begin(&mut self, now: SimTime) {
        if let Some(p) = &mut self.polling {
            p.netisr_poll_begin(now);
        }
    }

    /// One step of netisr_poll.
    pub(crate) fn netisr_poll_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        let Some(mut p) = self.polling.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::FreebsdPolling)),
                "polling re-entered while lent to a step"
            );
            return Step::Done;
        };
        let step = p.netisr_poll_step(&mut HostEnv { h: self, now, s });
        self.polling = Some(p);
        step
    }

    /// netisr_pollmore.
    pub(crate) fn netisr_pollmore(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(mut p) = self.polling.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::FreebsdPolling)),
                "polling re-entered while lent to a step"
            );
            return;
        };
        p.netisr_pollmore(&mut HostEnv { h: self, now, s });
        self.polling = Some(p);
    }

    /// One step of the idle loop's polling.
    pub(crate) fn idle_poll_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        let Some(mut p) = self.polling.take() else {
            debug_assert!(
                !self.uses(|p| matches!(p, PolicyConfig::FreebsdPolling)),
                "polling re-entered while lent to a step"
            );
            return Step::Done;
        };
        let step = p.idle_step(&mut HostEnv { h: self, now, s });
        self.polling = Some(p);
        step
    }

    /// Frames held by a poll step.
    pub(crate) fn polling_held(&self) -> usize {
        self.polling.as_ref().map_or(0, |p| p.held())
    }
}
