//! The host's routing for [`crate::model::policy::interrupt`].

use crate::host::attach::Shape;
use crate::host::env::HostEnv;
use crate::host::port::IrqDue;
use crate::host::{Event, Host, Invariant, Step, Task};
use crate::model::cpu::Level;
use crate::sim::engine::{Scheduler, TimerKey};
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;

impl<M: Shape> Host<M> {
    /// A frame entered `nic`'s RX ring: the receive-interrupt cause is set.
    pub(crate) fn rx_cause(
        &mut self,
        nic: usize,
        now: SimTime,
        bytes: u32,
        s: &mut Scheduler<Event>,
    ) {
        match self.ports[nic].polled_by {
            Some(k) => self.policy_rx_arrived(k, nic, now, s),
            None => {
                self.ports.at(nic).moderate_rx(now, bytes);
                self.irq_cause(nic, now, s);
            }
        }
    }

    /// The chip has a pending receive cause: raise the line now, or when moderation
    /// allows.
    pub(crate) fn irq_cause(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        match self.ports.at(nic).irq_due(now) {
            IrqDue::Now => self.irq_raise(nic, now),
            IrqDue::Arm(t) => {
                let key = s.at_keyed(t, Event::Moderation(nic as u16));
                self.ports.at(nic).moderation_armed(key);
            }
            IrqDue::No | IrqDue::Armed => {}
        }
    }

    /// A moderation timer expired.
    pub(crate) fn moderation_timer(
        &mut self,
        nic: usize,
        key: TimerKey,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        if self.ports.at(nic).moderation_expired(key) {
            self.irq_cause(nic, now, s);
        }
    }

    /// Assert `nic`'s line and make its handler ready.
    fn irq_raise(&mut self, nic: usize, now: SimTime) {
        let l = self.ports.at(nic).assert_irq();
        self.line_asserted(l, nic, now);
        self.cores.wake(Task::Isr(l as u16));
    }

    /// `nic` asserted line `l`. If the pass in progress folded `nic`'s handler into a
    /// burst as idle and has not reached it yet, the burst ends where that handler
    /// starts, and the handler then finds its device asserted, as it would have
    /// ([`crate::model::irq::Line::device_asserted`]).
    ///
    /// While a line is lent to its own step (`lines` is taken out), the only device that
    /// can assert it is the one whose handler is running (its exit unmasks the chip),
    /// which is never among the idle handlers folded before it: nothing to cut. Any
    /// other assertion then is a broken invariant, reported, never skipped silently.
    fn line_asserted(&mut self, l: usize, nic: usize, now: SimTime) {
        if self.lines.is_empty() {
            if self.cores.hand().isr_running() != Some(nic) {
                let name = self.ports[nic].nic().name.clone();
                self.acct.broke(Invariant::LineAssertion, &name, now, || {
                    format!(
                        "interrupt line {l} asserted by NIC {name} during another device's \
                         handler step"
                    )
                });
            }
            return;
        }
        let core = self.cores.line_core(l);
        let line = &mut self.lines[l];
        // The core's CPU, borrowed beside the line.
        let cpu = self.cores.get(core).cpu();
        let used = |fold_len: SimTime| {
            cpu.remaining_at(now, Level::HardIrq)
                .map(|left| fold_len.saturating_sub(left))
        };
        let Some(cut) = line.device_asserted(nic, used) else {
            return;
        };
        if let Some((started, rng)) = cut.undo {
            // The handler whose entry was folded in has not begun after all.
            self.undo_start(started, rng, now);
        }
        self.cores.at(core).cut_handler_burst(now, cut.left);
    }

    /// The driver unmasks the chip (IMR = DC_INTRS / em_enable_intr / napi_complete):
    /// frames already in the ring raise the interrupt again.
    pub(crate) fn irq_unmask(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.ports.at(nic).unmask_irq();
        self.irq_cause(nic, now, s);
    }

    /// The next step of a pass over interrupt line `l` ([`crate::model::irq::Line::step`]).
    /// The lines are taken out of the host for the step (three words moved), so that
    /// the line and the handlers it runs can both be borrowed.
    pub(crate) fn line_step(
        &mut self,
        l: usize,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let mut lines = std::mem::take(&mut self.lines);
        let step = lines[l].step(first, &mut HostEnv { h: self, now, s });
        self.lines = lines;
        step
    }

    /// The next step of `nic`'s handler; `first` when the chain calls it.
    pub(crate) fn isr_step(
        &mut self,
        nic: usize,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        // The handlers are taken out as a whole (three words moved, not a handler).
        let mut hs = std::mem::take(&mut self.handlers);
        self.cores.hand_mut().isr_begin(nic);
        let step = hs[nic].step(first, &mut HostEnv { h: self, now, s });
        self.cores.hand_mut().isr_end();
        self.handlers = hs;
        step
    }

    /// Take back the start of `nic`'s handler folded into a burst (`isr_step` with
    /// `first`), restoring its driver's random stream to `rng`: the chip asserts again,
    /// unmasked, the interrupt uncounted ([`super::port::Port::untake_interrupt`]); if
    /// none stands taken, the run reports [`Invariant::InterruptUndo`].
    pub(crate) fn undo_start(&mut self, nic: usize, rng: StreamRng, now: SimTime) {
        if !self.ports.at(nic).untake_interrupt(rng) {
            let name = self.ports[nic].nic().name.clone();
            self.acct.broke(Invariant::InterruptUndo, &name, now, || {
                format!("{name}: a handler's start was taken back, but no interrupt stands taken")
            });
        }
        self.handlers[nic].cancel();
    }

    /// The rest of `nic`'s handler joined to its entry's burst when certain
    /// ([`crate::model::policy::interrupt::Handler::whole`]).
    pub(crate) fn whole_handler(
        &mut self,
        nic: usize,
        t: SimTime,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) -> SimTime {
        let mut hs = std::mem::take(&mut self.handlers);
        self.cores.hand_mut().isr_begin(nic);
        let d = hs[nic].whole(t, &mut HostEnv { h: self, now, s });
        self.cores.hand_mut().isr_end();
        self.handlers = hs;
        d
    }
}
