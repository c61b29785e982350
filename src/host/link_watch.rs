//! The host's routing for [`crate::model::nic::link_watch`].

use crate::host::attach::{Attached, Shape};
use crate::host::{Event, Host, Step, Task};
use crate::model::nic::link_watch::{NicView, TickStart};
use crate::sim::engine::{Scheduler, TimerKey};
use crate::sim::time::SimTime;

impl<M: Shape> Host<M> {
    /// Arm the first link check of every NIC that has one.
    pub(crate) fn link_watch_start(&mut self, s: &mut Scheduler<Event>) {
        for nic in 0..self.ports.len() {
            if let Some(w) = &mut self.ports[nic].link_watch {
                let after = w.first_callout();
                w.armed(s.at_keyed(after, Event::LinkTick(nic as u16)));
            }
        }
    }

    /// (Re-)arm `nic`'s link check one period from now, cancelling the pending one.
    pub(crate) fn link_watch_rearm(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let up = self.ports[nic].nic.link_up();
        if let Some(w) = &mut self.ports[nic].link_watch {
            let after = w.rearm(up);
            w.armed(s.at_keyed(now + after, Event::LinkTick(nic as u16)));
        }
    }

    /// The link-check callout fired: run dc_tick at softclock (unless cancelled).
    pub(crate) fn link_tick_due(&mut self, nic: usize, key: TimerKey) {
        if self.ports[nic]
            .link_watch
            .as_mut()
            .is_some_and(|w| w.fired(key))
        {
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
        let n = &self.ports[nic].nic;
        let view = NicView {
            link_up: n.link_up(),
            idle: n.rx_ring.len() < n.rx_ring.capacity() && n.tx_idle(),
        };
        let Some(w) = &mut self.ports[nic].link_watch else {
            return Step::Done;
        };
        if first {
            return match w.tick_start(at_spl, view) {
                TickStart::Cancelled => Step::Done,
                TickStart::ToSplimp => {
                    // Softclock dispatched the callout: dc_tick's splimp() body runs
                    // next, blocking device interrupts (a reset before it cancels it).
                    self.cores.wake(Task::LinkTickImp(nic as u16));
                    Step::Done
                }
                TickStart::Run(d) => Step::Run(d),
            };
        }
        match w.tick_end(now) {
            // A reset re-armed the callout while this dc_tick ran.
            None => return Step::Done,
            Some(true) => {
                self.ports[nic].nic.link_restored();
                self.if_start(nic, now, s);
            }
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
        self.ports[nic].nic.ack_rx_error();
        let Some(w) = self.ports[nic].link_watch.as_ref() else {
            return SimTime::ZERO;
        };
        if !w.reinit_on_rx_error() {
            return SimTime::ZERO;
        }
        self.reinit(nic, now, s)
    }

    fn reinit(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) -> SimTime {
        self.chip_reset(nic, now, s);
        let w = self.ports[nic].link_watch.as_mut().expect("link watch");
        w.reinit(now)
    }

    /// The handler found TX_UNDERRUN: raise the threshold and, for a driver that does,
    /// re-initialise the chip. Returns the CPU cost of what it did.
    pub(crate) fn handle_underrun(
        &mut self,
        nic: usize,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) -> SimTime {
        self.ports[nic].nic.ack_underrun();
        if let Some(d) = self.ports[nic].dma.get_mut() {
            d.raise_threshold();
        }
        let reinit = self.ports[nic]
            .link_watch
            .as_ref()
            .is_some_and(|w| w.reinit_on_underrun());
        if !reinit {
            self.tx_restart(nic, now, s);
            return SimTime::ZERO;
        }
        self.reinit(nic, now, s)
    }
}
