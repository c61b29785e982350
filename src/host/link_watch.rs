//! The host's routing for [`crate::model::nic::link_watch`].

use crate::host::attach::Shape;
use crate::host::{Event, Host, Step, Task};
use crate::model::nic::link_watch::TickStart;
use crate::sim::engine::{Scheduler, TimerKey};
use crate::sim::time::SimTime;

impl<M: Shape> Host<M> {
    /// Arm the first link check of every NIC that has one.
    pub(crate) fn link_watch_start(&mut self, s: &mut Scheduler<Event>) {
        for (nic, p) in self.ports.iter_mut().enumerate() {
            if let Some(after) = p.link_watch_first() {
                p.link_watch_armed(s.at_keyed(after, Event::LinkTick(nic as u16)));
            }
        }
    }

    /// (Re-)arm `nic`'s link check one period from now, cancelling the pending one.
    pub(crate) fn link_watch_rearm(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let p = self.ports.at(nic);
        if let Some(after) = p.link_watch_rearm() {
            p.link_watch_armed(s.at_keyed(now + after, Event::LinkTick(nic as u16)));
        }
    }

    /// The link-check callout fired: run dc_tick at softclock (unless cancelled).
    pub(crate) fn link_tick_due(&mut self, nic: usize, key: TimerKey) {
        if self.ports.at(nic).link_tick_fired(key) {
            self.cores.wake(Task::LinkTick(nic as u16));
        }
    }

    /// One step of dc_tick. `at_spl` is true for the task that runs the body at
    /// splimp (after softclock dispatched the callout).
    pub(crate) fn link_tick_step(
        &mut self,
        nic: usize,
        now: SimTime,
        first: bool,
        at_spl: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        if first {
            return match self.ports.at(nic).link_tick_start(at_spl) {
                None | Some(TickStart::Cancelled) => Step::Done,
                Some(TickStart::ToSplimp) => {
                    // Softclock dispatched the callout: dc_tick's splimp() body runs
                    // next, blocking device interrupts (a reset before it cancels it).
                    self.cores.wake(Task::LinkTickImp(nic as u16));
                    Step::Done
                }
                Some(TickStart::Run(d)) => Step::Run(d),
            };
        }
        match self.ports.at(nic).link_tick_end(now) {
            // A reset re-armed the callout while this dc_tick ran (or there is none).
            None => return Step::Done,
            // The link is back.
            Some(true) => self.if_start(nic, now, s),
            Some(false) => {}
        }
        self.link_watch_rearm(nic, now, s);
        Step::Done
    }

    /// The handler's rxeof found a descriptor with a receive error (FIFO overflow):
    /// dc_init. Returns the CPU cost.
    pub(crate) fn handle_rx_error(
        &mut self,
        nic: usize,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) -> SimTime {
        if !self.ports.at(nic).ack_rx_error() {
            return SimTime::ZERO;
        }
        self.reinit(nic, now, s)
    }

    fn reinit(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) -> SimTime {
        self.chip_reset(nic, now, s);
        self.ports.at(nic).reinit(now)
    }

    /// The handler found TX_UNDERRUN: raise the threshold and, for a driver that does,
    /// re-initialise the chip. Returns the CPU cost of what it did.
    pub(crate) fn handle_underrun(
        &mut self,
        nic: usize,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) -> SimTime {
        if !self.ports.at(nic).underrun_reinit() {
            self.tx_restart(nic, now, s);
            return SimTime::ZERO;
        }
        self.reinit(nic, now, s)
    }
}
