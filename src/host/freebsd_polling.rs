//! The host's routing for [`crate::policy::freebsd_polling`].

use crate::engine::Scheduler;
use crate::host::{Event, Host, Step, Task};
use crate::kernel::{NETISR_POLL, NETISR_POLLMORE};
use crate::policy::PolicyConfig;
use crate::policy::freebsd_polling::*;
use crate::time::SimTime;

impl Host {
    fn polling_nics(&self) -> Vec<usize> {
        (0..self.nics.len())
            .filter(|i| self.policies[*i] == PolicyConfig::FreebsdPolling)
            .collect()
    }

    /// A frame arrived on a polling NIC (its interrupt is off): only the idle loop may
    /// notice it before the next tick.
    pub(crate) fn polling_rx(&mut self, _nic: usize) {
        if self.polling.as_ref().is_some_and(|p| p.idle_poll) {
            self.wake(Task::IdlePoll);
        }
    }

    /// hardclock_device_poll.
    pub(crate) fn hardclock(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(p) = &mut self.polling else { return };
        p.ticks += 1;
        if p.pending_polls > 100 {
            // Too much: assume it has stalled.
            p.stalled += 1;
            p.pending_polls = 0;
            p.phase = 0;
        }
        let mut raise = false;
        if p.phase <= 2 {
            if p.phase != 0 {
                p.suspect += 1;
            }
            p.phase = 1;
            raise = true;
            p.phase = 2;
        }
        if p.pending_polls > 0 {
            p.lost_polls += 1;
        }
        p.pending_polls += 1;
        let tick = p.tick;
        if raise {
            self.swi_raise(NETISR_POLL | NETISR_POLLMORE);
        }
        s.at(now + tick, Event::Tick);
    }

    /// netisr_poll: set up one round of poll-routine calls.
    pub(crate) fn netisr_poll_begin(&mut self, now: SimTime) {
        let nics = self.polling_nics();
        let Some(p) = &mut self.polling else { return };
        p.nics = nics;
        p.phase = 3;
        // kern_poll.c's `arg`: POLL_ONLY unless this first round of a tick is the one in
        // reg_frac that checks the status registers.
        p.check_status = false;
        if p.residual_burst == 0 {
            // First call in this tick.
            p.poll_start = now;
            if p.reg_frac_count == 0 {
                p.reg_frac_count = p.cfg.reg_frac - 1; // POLL_AND_CHECK_STATUS this time
                p.check_status = true;
            } else {
                p.reg_frac_count -= 1;
            }
            p.residual_burst = p.poll_burst;
        }
        p.cycles = p.residual_burst.min(p.cfg.each_burst);
        p.residual_burst -= p.cycles;
        p.idx = 0;
        p.stage = PollStage::Call;
    }

    /// One step of netisr_poll: a poll-routine call, or one frame.
    pub(crate) fn netisr_poll_step(&mut self, _now: SimTime, _s: &mut Scheduler<Event>) -> Step {
        if let Some(pk) = self.polling.as_mut().and_then(|p| p.current.take()) {
            self.ipintrq_enqueue(pk);
        }
        loop {
            let Some(p) = &mut self.polling else {
                return Step::Done;
            };
            if p.idx >= p.nics.len() {
                p.phase = 4;
                return Step::Done;
            }
            let nic = p.nics[p.idx];
            match p.stage {
                PollStage::Call => {
                    p.stage = PollStage::Frames;
                    p.left = p.cycles;
                    p.polls += 1;
                    let mut d = self.drivers[nic].poll_call();
                    if p.check_status {
                        p.status_checks += 1;
                        d += self.drivers[nic].poll_status_check();
                    }
                    return Step::Run(d);
                }
                PollStage::Frames => {
                    if p.left > 0
                        && let Some(pk) = self.nics[nic].rx_ring.pop()
                    {
                        p.left -= 1;
                        p.current = Some(pk);
                        return Step::Run(self.drivers[nic].rx(pk.bytes));
                    }
                    p.idx += 1;
                    p.stage = PollStage::Call;
                }
            }
        }
    }

    /// netisr_pollmore: another round, or adapt poll_burst at the end of the tick's work.
    pub(crate) fn netisr_pollmore(&mut self, now: SimTime) {
        let Some(p) = &mut self.polling else { return };
        p.phase = 5;
        if p.residual_burst > 0 {
            self.swi_raise(NETISR_POLL | NETISR_POLLMORE);
            return;
        }
        let kern_us = now.saturating_sub(p.poll_start).as_us_f64();
        let kern_load = kern_us * p.cfg.hz as f64 / 10_000.0; // % of a tick
        if kern_load > (100 - p.cfg.user_frac) as f64 {
            if p.poll_burst > 1 {
                p.poll_burst -= 1;
            }
        } else if p.poll_burst < p.cfg.burst_max {
            p.poll_burst += 1;
        }
        p.pending_polls = p.pending_polls.saturating_sub(1);
        if p.pending_polls == 0 {
            p.phase = 0;
        } else {
            // The last cycle was long and missed ticks: restart, with a smaller burst.
            p.poll_burst -= p.poll_burst / 8;
            p.poll_burst = p.poll_burst.max(1);
            p.phase = 6;
            self.swi_raise(NETISR_POLL | NETISR_POLLMORE);
        }
    }

    /// poll_idle: the idle loop polls each NIC for `each_burst` frames.
    pub(crate) fn idle_poll_step(
        &mut self,
        _now: SimTime,
        _first: bool,
        _s: &mut Scheduler<Event>,
    ) -> Step {
        let nics = self.polling_nics();
        let Some(p) = &mut self.polling else {
            return Step::Done;
        };
        if let Some((nic, left, cur)) = p.idle_current.take() {
            if let Some(pk) = cur {
                self.ipintrq_enqueue(pk);
            }
            let p = self.polling.as_mut().expect("polling");
            if left > 0
                && let Some(pk) = self.nics[nic].rx_ring.pop()
            {
                p.idle_current = Some((nic, left - 1, Some(pk)));
                return Step::Run(self.drivers[nic].rx(pk.bytes));
            }
        }
        let p = self.polling.as_mut().expect("polling");
        match nics.into_iter().find(|n| !self.nics[*n].rx_ring.is_empty()) {
            Some(nic) => {
                p.idle_polls += 1;
                p.idle_current = Some((nic, p.cfg.each_burst, None));
                Step::Run(self.drivers[nic].poll_call())
            }
            None => Step::Done,
        }
    }

    /// Frames held by a poll step.
    pub(crate) fn polling_held(&self) -> usize {
        self.polling.as_ref().map_or(0, |p| {
            p.current.is_some() as usize
                + p.idle_current.is_some_and(|(_, _, c)| c.is_some()) as usize
        })
    }
}
