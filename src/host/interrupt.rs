//! The host's routing for [`crate::policy::interrupt`].

use crate::engine::Scheduler;
use crate::host::env::HostEnv;
use crate::host::{Event, Host, Step, Task};
use crate::irq::LinePos;
use crate::policy::PolicyConfig;
use crate::rng::StreamRng;
use crate::time::SimTime;

impl Host {
    /// A frame entered `nic`'s RX ring: the receive-interrupt cause is set.
    pub(crate) fn rx_cause(
        &mut self,
        nic: usize,
        now: SimTime,
        bytes: u32,
        s: &mut Scheduler<Event>,
    ) {
        match self.policies[nic] {
            PolicyConfig::FreebsdPolling => self.polling_rx(now, s),
            PolicyConfig::BusyPoll { .. } => {}
            _ => {
                if let Some(m) = &mut self.moderation[nic] {
                    m.packet(now, bytes);
                }
                self.irq_cause(nic, now, s);
            }
        }
    }

    /// The chip has a pending receive cause: raise the line now, or when moderation
    /// allows.
    pub(crate) fn irq_cause(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        if !self.nics[nic].wants_interrupt() {
            return;
        }
        match &mut self.moderation[nic] {
            None => self.irq_raise(nic, now),
            Some(m) => match m.fire_time(now) {
                t if t <= now => {
                    m.asserted(now);
                    self.irq_raise(nic, now);
                }
                t => {
                    let g = m.arm(t);
                    s.at(t, Event::Moderation(nic as u16, g));
                }
            },
        }
    }

    /// A moderation timer expired.
    pub(crate) fn moderation_timer(
        &mut self,
        nic: usize,
        generation: u32,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let Some(m) = &mut self.moderation[nic] else {
            return;
        };
        if !m.expired(generation) {
            return;
        }
        self.irq_cause(nic, now, s);
    }

    /// Assert `nic`'s line and make its handler ready.
    fn irq_raise(&mut self, nic: usize, now: SimTime) {
        self.nics[nic].irq_asserted = true;
        let l = self.nic_line[nic];
        self.line_asserted(l, nic, now);
        self.wake(Task::Isr(l as u16));
    }

    /// `nic` asserted line `l`. If the pass in progress folded `nic`'s handler into a
    /// burst as idle and has not reached it yet, the burst ends where that handler
    /// starts, and the handler then finds its device asserted, as it would have.
    fn line_asserted(&mut self, l: usize, nic: usize, now: SimTime) {
        let line = &mut self.lines[l];
        let Some(k) = line.folded.iter().position(|&(i, _)| line.chain[i] == nic) else {
            return;
        };
        let (i, offset) = line.folded[k];
        // CPU time the folded burst has had so far (it may have been preempted).
        let Some(left) = self.cpu.remaining_at(now, crate::cpu::Level::HardIrq) else {
            return;
        };
        let used = line.fold_len.saturating_sub(left);
        if offset <= used {
            return;
        }
        line.folded.truncate(k);
        line.fold_len = offset;
        line.pos = LinePos::Handler(i, false);
        if let Some((started, rng)) = line.entry_folded.take() {
            // The handler whose entry was folded in has not begun after all.
            self.undo_start(started, rng);
        }
        self.cpu
            .set_burst(now, crate::cpu::Level::HardIrq, offset - used, 0);
    }

    /// The driver unmasks the chip (IMR = DC_INTRS / em_enable_intr / napi_complete):
    /// frames already in the ring raise the interrupt again.
    pub(crate) fn irq_unmask(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.nics[nic].irq_enabled = true;
        self.irq_cause(nic, now, s);
    }

    /// The next step of a pass over interrupt line `l`: dispatch, every handler of the
    /// chain in order, release (see [`crate::irq`]).
    pub(crate) fn line_step(
        &mut self,
        l: usize,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let mut fold = SimTime::ZERO;
        if first {
            let line = &self.lines[l];
            if !line.chain.iter().any(|&n| self.nics[n].irq_asserted) {
                return Step::Done;
            }
            let line = &mut self.lines[l];
            line.passes += 1;
            line.pos = LinePos::Handler(0, false);
            fold = line.dispatch();
        }
        self.lines[l].folded.clear();
        self.lines[l].entry_folded = None;
        loop {
            match self.lines[l].pos {
                LinePos::Idle => return Step::Done,
                LinePos::Handler(i, started) => {
                    let line = &self.lines[l];
                    if i >= line.chain.len() {
                        self.lines[l].pos = LinePos::Release;
                        fold += self.lines[l].release();
                        continue;
                    }
                    let nic = line.chain[i];
                    if !started && !self.nics[nic].irq_asserted {
                        // Nothing pending: the handler reads its status and returns.
                        // Folded into one burst with its neighbours.
                        self.lines[l].folded.push((i, fold));
                        fold += self.drivers[nic].idle();
                        self.lines[l].pos = LinePos::Handler(i + 1, false);
                        continue;
                    }
                    if fold > SimTime::ZERO {
                        // Run what was folded first; this handler begins after it, and
                        // its entry is folded in too (its device already asserts, so
                        // starting it is certain) unless moderation watches the start.
                        if self.merge_bursts && self.moderation[nic].is_none() {
                            let saved = self.drivers[nic].rng.clone();
                            if let Step::Run(entry) = self.isr_step(nic, now, true, s) {
                                let mut len = fold + entry;
                                if now + len > self.stop {
                                    // The run ends before the handler would begin.
                                    self.undo_start(nic, saved);
                                    self.lines[l].fold_len = fold;
                                    return Step::Run(fold);
                                }
                                len += self.whole_handler(nic, now + len, now, s);
                                let line = &mut self.lines[l];
                                line.pos = LinePos::Handler(i, true);
                                line.entry_folded = Some((nic, saved));
                                line.fold_len = len;
                                return Step::Run(len);
                            }
                        }
                        self.lines[l].fold_len = fold;
                        return Step::Run(fold);
                    }
                    self.lines[l].folded.clear();
                    self.lines[l].pos = LinePos::Handler(i, true);
                    match self.isr_step(nic, now, !started, s) {
                        // The entry with nothing folded before it (a private line, or
                        // the first handler of a chain): its frame and exit may join
                        // it as when folded.
                        Step::Run(d) if !started && self.merge_bursts => {
                            let more = if self.moderation[nic].is_none() {
                                self.whole_handler(nic, now + d, now, s)
                            } else {
                                SimTime::ZERO
                            };
                            return Step::Run(d + more);
                        }
                        Step::Run(d) => return Step::Run(d),
                        _ => self.lines[l].pos = LinePos::Handler(i + 1, false),
                    }
                }
                LinePos::Release => {
                    if fold > SimTime::ZERO {
                        self.lines[l].fold_len = fold;
                        return Step::Run(fold);
                    }
                    self.lines[l].folded.clear();
                    self.lines[l].pos = LinePos::Idle;
                    // Level-triggered: a device still asserting interrupts again at once
                    // (the task is woken again if so; see `wake`).
                    return Step::Done;
                }
            }
        }
    }

    /// The handler of `nic` hands the device to its policy's poller.
    pub(crate) fn schedule_poll(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        match self.policies[nic] {
            PolicyConfig::Napi { .. } => self.napi_schedule(nic, now, s),
            PolicyConfig::MogulRamakrishnan { .. } => self.mogul_schedule(nic, now, s),
            PolicyConfig::Deferred { .. } => self.wake(Task::Taskq(nic as u16)),
            PolicyConfig::Interrupt
            | PolicyConfig::FreebsdPolling
            | PolicyConfig::BusyPoll { .. } => {}
        }
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
        let step = hs[nic].step(first, &mut HostEnv { h: self, now, s });
        self.handlers = hs;
        step
    }

    /// Take back the start of `nic`'s handler folded into a burst (`isr_step` with
    /// `first`), restoring its driver's random stream to `rng`.
    fn undo_start(&mut self, nic: usize, rng: StreamRng) {
        self.drivers[nic].rng = rng;
        self.untake_interrupt(nic);
        self.handlers[nic].cancel();
    }

    /// Undo `take_interrupt`: the chip asserts again, unmasked, the interrupt uncounted.
    pub(crate) fn untake_interrupt(&mut self, nic: usize) {
        let n = &mut self.nics[nic];
        n.irq_asserted = true;
        n.irq_enabled = true;
        n.interrupts -= 1;
    }

    /// Read and acknowledge `nic`'s interrupt status: if the chip asserts, mask it and
    /// count the interrupt (and tell its moderation).
    pub(crate) fn take_interrupt(&mut self, nic: usize) -> bool {
        let n = &mut self.nics[nic];
        if !n.irq_asserted {
            return false;
        }
        n.irq_asserted = false;
        n.irq_enabled = false;
        n.interrupts += 1;
        if let Some(m) = &mut self.moderation[nic] {
            m.on_interrupt();
        }
        true
    }

    /// The rest of `nic`'s handler joined to its entry's burst when certain
    /// ([`crate::policy::interrupt::Handler::whole`]).
    fn whole_handler(
        &mut self,
        nic: usize,
        t: SimTime,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) -> SimTime {
        let mut hs = std::mem::take(&mut self.handlers);
        let d = hs[nic].whole(t, &mut HostEnv { h: self, now, s });
        self.handlers = hs;
        d
    }
}
