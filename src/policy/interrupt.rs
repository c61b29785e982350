//! Interrupt handlers, and the classic interrupt-driven receive path (4.4BSD; FreeBSD
//! 2.x-4.x dc(4), xl(4)).
//!
//! When a NIC asserts its line, the driver's handler runs at hardware-interrupt priority:
//!
//! ```text
//! isr_entry        interrupt dispatch, handler entry, mask the chip (IMR = 0),
//!                  read and acknowledge the status register
//! loop:            (policy `interrupt`) while the ring has received frames:
//!   rx_per_packet    rxeof for one frame: unlink the mbuf, refill the descriptor,
//!                    ether_input, IF_ENQUEUE on ipintrq (dropped if full), schednetisr
//! isr_exit         (policy `interrupt`) unmask the chip; return from interrupt
//! ```
//!
//! The loop re-checks the ring after each frame, so frames that arrive while the handler
//! runs are taken in the same invocation and share its fixed cost. Frames that arrive
//! after the last check, during `isr_exit`, find the chip masked: the line is asserted
//! when it is unmasked and the handler runs again at once. Interrupts of other NICs
//! that arrive meanwhile wait (handlers at the same IPL do not nest) and are taken in the
//! order they were raised.
//!
//! The other interrupt-driven policies use the same entry and exit but replace the loop:
//! NAPI schedules a softirq poll, Mogul-Ramakrishnan wakes its thread, the deferred
//! handler enqueues a task; all three leave the chip masked until the poller is done.
//!
//! Parameters ([`DriverConfig`], costs in the forms of [`crate::cost`]): `isr_entry`,
//! `rx_per_packet`, `isr_exit` (required), `poll_call` (default 0: one call of the
//! driver's poll routine by a polling policy), `poll_status_check` (default 0: the status
//! register read and acknowledged in a FreeBSD poll with POLL_AND_CHECK_STATUS), `rx_copy_ns_per_byte` (default 0),
//! `isr_idle` (default 0: the handler on a shared line with nothing pending),
//! `tx_per_packet` (default 0: txeof per frame), `max_frames_per_interrupt` (default
//! 0: unbounded loop), `link_watch` (default none, see [`crate::link_watch`]).
//!
//! The `interrupt` loop, per step: a received frame while the ring has one (and the
//! frame limit is not reached); else, with a transmit cause, txeof for every sent
//! descriptor; else a receive error or a transmit underrun (dc_init); else exit.
//!
//! Counters: `Nic::interrupts` (handler invocations with work), `Line::passes`
//! (interrupts taken: what `RunStats::interrupts` sums), frames taken by handler loops
//! (`Host::isr_packets`).

use crate::cost::{Cost, CostParam};
use crate::engine::Scheduler;
use crate::host::{Event, Host, Step, Task};
use crate::irq::LinePos;
use crate::link_watch::LinkWatchConfig;
use crate::packet::Packet;
use crate::policy::PolicyConfig;
use crate::problems::Problems;
use crate::rng::StreamRng;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Driver costs as written in a model file.
///
/// The costs of a path the NIC uses must be given; those of paths it never takes may
/// be left out (see [`crate::host::ModelConfig::check_roles`]): a NIC that receives
/// needs `rx_per_packet`, and `isr_entry` and `isr_exit` when its handler runs (an
/// interrupt-driven policy, transmit-completion or statistics-overflow interrupts, or
/// transmit underruns on a bus).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriverConfig {
    /// Fixed cost of one handler invocation up to its first ring check (required when
    /// the NIC's handler runs) [cost].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr_entry: Option<CostParam>,
    /// Cost of receiving one frame (rxeof): in the handler loop, or in a poll
    /// (required when the NIC receives) [cost].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_per_packet: Option<CostParam>,
    /// Fixed cost after the last ring check until return from interrupt (required
    /// when the NIC's handler runs) [cost].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr_exit: Option<CostParam>,
    /// Cost of one call of the driver's poll routine, before its frames (default 0)
    /// [cost].
    #[serde(default)]
    pub poll_call: CostParam,
    /// Reading and acknowledging the status register in a poll called with
    /// POLL_AND_CHECK_STATUS (FreeBSD polling, one tick in `reg_frac`; dc_poll reads
    /// CSR5), on top of `poll_call` (default 0) [cost].
    #[serde(default)]
    pub poll_status_check: CostParam,
    /// Copy of each received frame into a fresh mbuf (`m_devget`), on top of
    /// `rx_per_packet` [ns per byte of frame] (default 0: the buffer is passed up).
    #[serde(default)]
    pub rx_copy_ns_per_byte: f64,
    /// Handler invocation on a shared line when its device has nothing pending: mask,
    /// read the status register, unmask (default 0) [cost].
    #[serde(default)]
    pub isr_idle: CostParam,
    /// Reclaiming one transmitted frame's descriptor and freeing its mbuf (`txeof`),
    /// when the NIC's transmit completions are handled by the driver (default 0) [cost].
    #[serde(default)]
    pub tx_per_packet: CostParam,
    /// Reaction to a transmit underrun and periodic link check, dc(4)'s dc_init and
    /// dc_tick (default: none; with a bus, an underrun then only raises the threshold)
    /// (see [`crate::link_watch`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_watch: Option<LinkWatchConfig>,
    /// Most frames one handler invocation takes before it returns with work left (the
    /// device then interrupts again); a bound on the handler's loop such as later
    /// dc_intr's 16 rounds or an rx process limit (default 0: loop until the ring is
    /// empty) [frames].
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub max_frames_per_interrupt: u32,
}

fn is_zero_u32(x: &u32) -> bool {
    *x == 0
}

impl DriverConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        let zero = CostParam::default();
        for (name, c) in [
            ("isr_entry", self.isr_entry.as_ref().unwrap_or(&zero)),
            (
                "rx_per_packet",
                self.rx_per_packet.as_ref().unwrap_or(&zero),
            ),
            ("isr_exit", self.isr_exit.as_ref().unwrap_or(&zero)),
            ("poll_call", &self.poll_call),
            ("poll_status_check", &self.poll_status_check),
            ("isr_idle", &self.isr_idle),
            ("tx_per_packet", &self.tx_per_packet),
        ] {
            if let Err(e) = c.check() {
                p.push(name, e);
            }
        }
        if let Some(w) = &self.link_watch {
            p.at("link_watch", |p| w.validate(p));
        }
        p.non_negative("rx_copy_ns_per_byte", self.rx_copy_ns_per_byte, "ns/byte");
        if self.rx_copy_ns_per_byte > 1e6 {
            p.push("rx_copy_ns_per_byte", "must be at most 1e6 ns/byte");
        }
    }
}

/// Driver costs ready to sample, with their own random stream.
#[derive(Clone, Debug)]
pub(crate) struct DriverCosts {
    entry: Cost,
    rx: Cost,
    exit: Cost,
    poll_call: Cost,
    poll_status_check: Cost,
    copy_ps_per_byte: u64,
    /// Frame limit per invocation (0: none) and frames taken in the current one.
    pub max_frames: u32,
    pub taken: u32,
    idle: Cost,
    tx: Cost,
    pub rng: StreamRng,
}

impl DriverCosts {
    pub fn new(cfg: &DriverConfig, clock_mhz: f64, rng: StreamRng) -> Self {
        DriverCosts {
            // A cost left out belongs to a path the NIC never takes (checked by
            // `ModelConfig::check_roles`).
            entry: cfg.isr_entry.clone().unwrap_or_default().build(clock_mhz),
            rx: cfg
                .rx_per_packet
                .clone()
                .unwrap_or_default()
                .build(clock_mhz),
            exit: cfg.isr_exit.clone().unwrap_or_default().build(clock_mhz),
            poll_call: cfg.poll_call.build(clock_mhz),
            poll_status_check: cfg.poll_status_check.build(clock_mhz),
            copy_ps_per_byte: (cfg.rx_copy_ns_per_byte * 1e3).round() as u64,
            max_frames: cfg.max_frames_per_interrupt,
            taken: 0,
            idle: cfg.isr_idle.build(clock_mhz),
            tx: cfg.tx_per_packet.build(clock_mhz),
            rng,
        }
    }
    pub fn entry(&mut self) -> SimTime {
        self.entry.sample(&mut self.rng)
    }
    /// Receiving one frame of `bytes` bytes: rx_per_packet plus the copy.
    pub fn rx(&mut self, bytes: u32) -> SimTime {
        self.rx.sample(&mut self.rng) + SimTime(self.copy_ps_per_byte * bytes as u64)
    }
    pub fn idle(&mut self) -> SimTime {
        self.idle.sample(&mut self.rng)
    }
    /// txeof for `n` frames.
    pub fn txeof(&mut self, n: u32) -> SimTime {
        let mut t = SimTime::ZERO;
        for _ in 0..n {
            t += self.tx.sample(&mut self.rng);
        }
        t
    }
    pub fn exit(&mut self) -> SimTime {
        self.exit.sample(&mut self.rng)
    }
    pub fn poll_call(&mut self) -> SimTime {
        self.poll_call.sample(&mut self.rng)
    }
    /// The status check of a poll with POLL_AND_CHECK_STATUS.
    pub fn poll_status_check(&mut self) -> SimTime {
        self.poll_status_check.sample(&mut self.rng)
    }
}

/// Where a NIC's handler is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IsrStep {
    Idle,
    Entry,
    /// xl_stats_update for STATSOFLOW, at the handler's priority.
    Stats,
    Packet(Packet),
    /// One frame and then the exit, as one burst: known in advance that the ring check
    /// after the frame finds nothing (see `Host::quiet_until`).
    PacketExit(Packet),
    /// Entry, the one frame in the ring and the exit, as one burst (see
    /// `Host::whole_handler`); the frame is taken from the ring when the burst ends.
    Whole,
    /// txeof for the transmit completions pending.
    Txeof,
    Exit,
}

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
            PolicyConfig::FreebsdPolling => self.polling_rx(nic),
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
                                len += self.whole_handler(nic, now + len);
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
                                self.whole_handler(nic, now + d)
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

    /// The next step of `nic`'s handler; `first` when the chain calls it.
    pub(crate) fn isr_step(
        &mut self,
        nic: usize,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        if first {
            let n = &mut self.nics[nic];
            if !n.irq_asserted {
                // (The line folds the handlers of devices with nothing pending.)
                return Step::Done;
            }
            n.irq_asserted = false;
            n.irq_enabled = false;
            n.interrupts += 1;
            if let Some(m) = &mut self.moderation[nic] {
                m.on_interrupt();
            }
            self.isr_steps[nic] = IsrStep::Entry;
            self.drivers[nic].taken = 0;
            return Step::Run(self.drivers[nic].entry());
        }
        match self.isr_steps[nic] {
            IsrStep::Entry if self.nics[nic].stats_cause() => {
                let st = self.nics[nic].stats.as_mut().expect("stats cause");
                st.harvest(true);
                let c = st.overflow_harvest.clone();
                self.isr_steps[nic] = IsrStep::Stats;
                Step::Run(self.netisr.sample(&c))
            }
            IsrStep::Entry | IsrStep::Stats | IsrStep::Packet(_) | IsrStep::Txeof => {
                if let IsrStep::Packet(p) = self.isr_steps[nic] {
                    self.isr_packets += 1;
                    self.ipintrq_enqueue(p);
                }
                match self.policies[nic] {
                    PolicyConfig::Interrupt => {
                        let d = &self.drivers[nic];
                        let limited = d.max_frames > 0 && d.taken >= d.max_frames;
                        if !limited && let Some(p) = self.nics[nic].rx_ring.pop() {
                            self.drivers[nic].taken += 1;
                            let rx = self.drivers[nic].rx(p.bytes);
                            if self.quiet_until(nic, now + rx) {
                                // The check after this frame will find nothing: the
                                // exit follows in the same burst (unless the run ends
                                // first).
                                let saved = self.drivers[nic].rng.clone();
                                let exit = self.drivers[nic].exit();
                                if now + rx + exit <= self.stop {
                                    self.isr_steps[nic] = IsrStep::PacketExit(p);
                                    return Step::Run(rx + exit);
                                }
                                self.drivers[nic].rng = saved;
                            }
                            self.isr_steps[nic] = IsrStep::Packet(p);
                            return Step::Run(rx);
                        }
                        if let Some(k) = self.nics[nic].take_tx_completions() {
                            self.isr_steps[nic] = IsrStep::Txeof;
                            return Step::Run(self.drivers[nic].txeof(k));
                        }
                        if self.nics[nic].rx_error_cause {
                            self.isr_steps[nic] = IsrStep::Txeof;
                            return Step::Run(self.handle_rx_error(nic, now, s));
                        }
                        if self.nics[nic].underrun_cause {
                            // "TX underrun -- increasing TX threshold" (dc_init first).
                            self.isr_steps[nic] = IsrStep::Txeof;
                            return Step::Run(self.handle_underrun(nic, now, s));
                        }
                    }
                    PolicyConfig::Napi { .. } => self.napi_schedule(nic),
                    PolicyConfig::MogulRamakrishnan { .. } => self.mogul_schedule(nic),
                    PolicyConfig::Deferred { .. } => self.wake(Task::Taskq(nic as u16)),
                    PolicyConfig::FreebsdPolling | PolicyConfig::BusyPoll { .. } => {}
                }
                self.isr_steps[nic] = IsrStep::Exit;
                Step::Run(self.drivers[nic].exit())
            }
            IsrStep::PacketExit(p) => {
                self.isr_packets += 1;
                self.ipintrq_enqueue(p);
                self.isr_end(nic, now, s)
            }
            IsrStep::Whole => {
                let p = self.nics[nic]
                    .rx_ring
                    .pop()
                    .expect("the frame seen at entry");
                self.isr_packets += 1;
                self.ipintrq_enqueue(p);
                self.isr_end(nic, now, s)
            }
            IsrStep::Exit => self.isr_end(nic, now, s),
            IsrStep::Idle => Step::Done,
        }
    }

    /// Take back the start of `nic`'s handler folded into a burst (`isr_step` with
    /// `first`), restoring its driver's random stream to `rng`.
    fn undo_start(&mut self, nic: usize, rng: StreamRng) {
        self.drivers[nic].rng = rng;
        let n = &mut self.nics[nic];
        n.irq_asserted = true;
        n.irq_enabled = true;
        n.interrupts -= 1;
        self.isr_steps[nic] = IsrStep::Idle;
    }

    /// The handler of `nic`, its entry ending at `t`: when the ring holds one frame and
    /// nothing can arrive or be raised before the handler returns (`Host::nothing_arrives`),
    /// its frame and exit are certain and join the entry's burst. Returns the added CPU
    /// time (zero when not certain, the costs' random stream untouched).
    fn whole_handler(&mut self, nic: usize, t: SimTime) -> SimTime {
        let n = &self.nics[nic];
        if !self.lookahead[nic] || n.rx_ring.len() != 1 {
            return SimTime::ZERO;
        }
        let bytes = n.rx_ring.front().expect("one frame").bytes;
        let saved = self.drivers[nic].rng.clone();
        let rx = self.drivers[nic].rx(bytes);
        let exit = self.drivers[nic].exit();
        // Until the end of the exit, not just the check: the frame stays in the ring
        // until then, where the unmerged handler has already taken it.
        if !self.nothing_arrives(nic, t + rx + exit) {
            self.drivers[nic].rng = saved;
            return SimTime::ZERO;
        }
        self.isr_steps[nic] = IsrStep::Whole;
        rx + exit
    }

    /// The handler returns: for `interrupt`, unmask the chip and run the start routine.
    fn isr_end(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        self.isr_steps[nic] = IsrStep::Idle;
        if matches!(self.policies[nic], PolicyConfig::Interrupt) {
            self.irq_unmask(nic, now, s);
            // dc_intr ends with dc_start when if_snd is not empty.
            self.if_start(nic, now, s);
        }
        Step::Done
    }
}
