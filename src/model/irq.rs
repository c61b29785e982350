//! Interrupt lines: the PIC, and chains of handlers sharing one line.
//!
//! Models a PC's interrupt controller (two 8259s, FreeBSD 2.x-4.x `icu_vector.s`) and
//! the shared-interrupt multiplexer of FreeBSD 4.x i386 (`intr_mux` in
//! `i386/isa/intr_machdep.c`):
//!
//! ```text
//! device asserts --> line (level-triggered) --> dispatch: mask the IRQ at the PIC, EOI
//!                                               chain:    every handler, in order, once
//!                                               release:  other handlers, unmask the IRQ
//!                    still asserted by any device? --> another pass at once
//! ```
//!
//! - Several devices can share a line (in the reference router all four dc ports, xl0
//!   and the USB controller sit on IRQ 11). One interrupt runs **every** handler on the
//!   chain, in the order they were attached (`add_intrdesc` appends), each exactly once;
//!   a handler whose device has nothing pending only reads its status register
//!   (`DriverConfig::isr_idle`).
//! - The line is level-triggered and masked at the PIC for the whole pass; a device that
//!   asserts meanwhile is served by its handler if that has not had its turn yet, else
//!   (a frame arriving after its handler already ran) it interrupts again as soon as
//!   the pass ends.
//! - A NIC that is not on any configured line has a line of its own with no dispatch
//!   or release cost: its driver's `isr_entry` then covers the whole interrupt entry.
//! - Events, not behaviour: the dispatch, the idle handlers and the first working
//!   handler's entry run as one CPU burst (`Line::folded`, `Line::entry_folded`), and
//!   that handler's one frame and exit join it when nothing can change them (see
//!   `Handler::whole` in [`crate::model::policy::interrupt`]). A device asserting before
//!   its folded handler's turn cuts the burst there and undoes the folded start, so a
//!   pass does exactly what it would with every step a burst of its own (a CPU burst
//!   ends after the other events of its instant, see `Host::run`).
//!
//! Parameters ([`IrqLineConfig`], costs in the forms of [`crate::model::cost`]): `name`,
//! `chain` (NIC names in call order), `dispatch` (default 0: interrupt entry, PIC mask
//! and EOI, up to the first handler), `release` (default 0: handlers of devices not
//! modelled, e.g. a USB controller, then PIC unmask and return from interrupt).
//!
//! Counters: `<line>.passes` (interrupts taken on the line: chain passes).
//!
//! **Interface.** A pass is `Line::step`, one CPU burst at a time: it reads each
//! device's status and runs each handler through a `LineEnv` (the handlers are
//! components of their own, [`crate::model::policy::interrupt::Handler`]), and a device
//! asserting while a folded burst runs is `Line::device_asserted`. The line knows
//! nothing of the host; its unit tests drive it against a scripted chain.

use crate::model::cost::{Cost, CostParam};
use crate::model::cpu::task::Step;
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// A shared interrupt line as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IrqLineConfig {
    /// Line name, e.g. `"irq11"`.
    pub name: String,
    /// NICs whose handlers are chained on this line, in call (attach) order.
    pub chain: Vec<String>,
    /// Interrupt entry up to the first handler: PIC mask and EOI (slow ISA-bus I/O),
    /// register save, the multiplexer (default 0) \[cost\].
    #[serde(default)]
    pub dispatch: CostParam,
    /// After the last modelled handler: handlers of other devices on the line, PIC
    /// unmask, return from interrupt (default 0) \[cost\].
    #[serde(default)]
    pub release: CostParam,
}

impl IrqLineConfig {
    /// Range checks (NIC names are checked by the model).
    pub fn validate(&self, p: &mut Problems) {
        if self.name.trim().is_empty() {
            p.push("name", "must not be empty");
        }
        if self.chain.is_empty() {
            p.push("chain", "a line needs at least one NIC");
        }
        for (field, c) in [("dispatch", &self.dispatch), ("release", &self.release)] {
            if let Err(e) = c.check() {
                p.push(field, e);
            }
        }
    }
}

/// Where a pass over a line's chain is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinePos {
    /// Not running.
    Idle,
    /// In the handler at this chain index (`true` once the handler has started).
    Handler(usize, bool),
    /// In the release cost.
    Release,
}

/// A line during a run.
#[derive(Clone, Debug)]
pub(crate) struct Line {
    /// Line name (`irq_lines[].name`, or the NIC's name for a private line).
    pub name: String,
    /// NIC indices in call order.
    pub chain: Vec<usize>,
    dispatch: Cost,
    release: Cost,
    rng: StreamRng,
    /// Where the pass in progress is.
    pub pos: LinePos,
    /// Configured (shared) line, reported in the counters.
    pub shared: bool,
    /// While one CPU burst covers the dispatch and a run of handlers whose devices had
    /// nothing pending (to save events): each such handler's chain index and the CPU
    /// time into the burst at which its status read would happen, and the burst's
    /// length. A device that asserts before its handler's turn cuts the burst short
    /// there (see `Host::line_asserted`).
    pub folded: Vec<(usize, SimTime)>,
    /// Length of the folded burst [ps of CPU time].
    pub fold_len: SimTime,
    /// The NIC whose handler's entry (or whole run) closes the folded burst (its device
    /// asserted when the burst began), if any, and its driver's random stream before
    /// the costs were drawn: a cut undoes its start.
    pub entry_folded: Option<(usize, StreamRng)>,
    /// Chain passes (interrupts taken on the line) -- counter.
    pub passes: u64,
}

impl Line {
    /// Its counter, for a configured (shared) line only: `<line>.passes`.
    pub fn counters(&self, c: &mut std::collections::BTreeMap<String, f64>) {
        if self.shared {
            c.insert(format!("{}.passes", self.name), self.passes as f64);
        }
    }

    /// A line shared by the NICs `chain`.
    pub fn shared(cfg: &IrqLineConfig, chain: Vec<usize>, clock_mhz: f64, rng: StreamRng) -> Line {
        Line {
            name: cfg.name.clone(),
            chain,
            dispatch: cfg.dispatch.build(clock_mhz),
            release: cfg.release.build(clock_mhz),
            rng,
            pos: LinePos::Idle,
            folded: Vec::new(),
            fold_len: SimTime::ZERO,
            entry_folded: None,
            shared: true,
            passes: 0,
        }
    }

    /// The private line of one NIC: no cost of its own.
    pub fn private(name: &str, nic: usize, rng: StreamRng) -> Line {
        Line {
            name: format!("{name}.irq"),
            chain: vec![nic],
            dispatch: CostParam::default().build(1.0),
            release: CostParam::default().build(1.0),
            rng,
            pos: LinePos::Idle,
            folded: Vec::new(),
            fold_len: SimTime::ZERO,
            entry_folded: None,
            shared: false,
            passes: 0,
        }
    }

    /// CPU time of the interrupt dispatch that starts a pass (`dispatch` cost).
    pub fn dispatch(&mut self) -> SimTime {
        self.dispatch.sample(&mut self.rng)
    }

    /// CPU time of the release that ends a pass (`release` cost).
    pub fn release(&mut self) -> SimTime {
        self.release.sample(&mut self.rng)
    }

    /// The next step of a pass over the chain: dispatch, every handler in order,
    /// release. `first` when the line has just been given the CPU. Returns the CPU
    /// burst to run, or [`Step::Done`] when the pass has ended (or there was nothing to
    /// take: no device on the chain asserts).
    ///
    /// Handlers whose devices have nothing pending are folded into one burst with the
    /// dispatch (each at its offset, [`Line::folded`]); the first working handler's
    /// entry, and with it its frame and exit when certain, closes that burst unless
    /// its start is watched (moderation) or merging is off.
    #[inline(always)]
    pub fn step(&mut self, first: bool, env: &mut impl LineEnv) -> Step {
        let mut fold = SimTime::ZERO;
        if first {
            if !self.chain.iter().any(|&n| env.asserted(n)) {
                return Step::Done;
            }
            self.passes += 1;
            self.pos = LinePos::Handler(0, false);
            fold = self.dispatch();
        }
        self.folded.clear();
        self.entry_folded = None;
        loop {
            match self.pos {
                LinePos::Idle => return Step::Done,
                LinePos::Handler(i, started) => {
                    if i >= self.chain.len() {
                        self.pos = LinePos::Release;
                        fold += self.release();
                        continue;
                    }
                    let nic = self.chain[i];
                    if !started && !env.asserted(nic) {
                        // Nothing pending: the handler reads its status and returns.
                        // Folded into one burst with its neighbours.
                        self.folded.push((i, fold));
                        fold += env.idle_handler(nic);
                        self.pos = LinePos::Handler(i + 1, false);
                        continue;
                    }
                    if fold > SimTime::ZERO {
                        // Run what was folded first; this handler begins after it, and
                        // its entry is folded in too (its device already asserts, so
                        // starting it is certain) unless its start is watched.
                        if env.merge_bursts() && !env.start_watched(nic) {
                            let saved = env.save_start(nic);
                            if let Step::Run(entry) = env.handler_step(nic, true) {
                                let mut len = fold + entry;
                                if env.now() + len > env.stop() {
                                    // The run ends before the handler would begin.
                                    env.undo_start(nic, saved);
                                    self.fold_len = fold;
                                    return Step::Run(fold);
                                }
                                len += env.handler_rest(nic, env.now() + len);
                                self.pos = LinePos::Handler(i, true);
                                self.entry_folded = Some((nic, saved));
                                self.fold_len = len;
                                return Step::Run(len);
                            }
                        }
                        self.fold_len = fold;
                        return Step::Run(fold);
                    }
                    self.folded.clear();
                    self.pos = LinePos::Handler(i, true);
                    match env.handler_step(nic, !started) {
                        // The entry with nothing folded before it (a private line, or
                        // the first handler of a chain): its frame and exit may join
                        // it as when folded.
                        Step::Run(d) if !started && env.merge_bursts() => {
                            let more = if env.start_watched(nic) {
                                SimTime::ZERO
                            } else {
                                env.handler_rest(nic, env.now() + d)
                            };
                            return Step::Run(d + more);
                        }
                        Step::Run(d) => return Step::Run(d),
                        _ => self.pos = LinePos::Handler(i + 1, false),
                    }
                }
                LinePos::Release => {
                    if fold > SimTime::ZERO {
                        self.fold_len = fold;
                        return Step::Run(fold);
                    }
                    self.folded.clear();
                    self.pos = LinePos::Idle;
                    // Level-triggered: a device still asserting interrupts again at once
                    // (the pass's task is woken again if so).
                    return Step::Done;
                }
            }
        }
    }

    /// Device `nic` asserted the line while the burst in progress has had `used` of
    /// CPU time (`None`: no burst of the line is in progress). If that burst folded
    /// `nic`'s handler as idle and has not reached its status read yet, the burst is
    /// cut there: the pass resumes at that handler, which then finds its device
    /// asserted, as it would have. Returns the cut: the CPU time left of the burst, and
    /// the handler whose folded start must be undone (with its driver's random stream
    /// before the start), if any.
    pub fn device_asserted(
        &mut self,
        nic: usize,
        used: impl FnOnce(SimTime) -> Option<SimTime>,
    ) -> Option<Cut> {
        let k = self
            .folded
            .iter()
            .position(|&(i, _)| self.chain[i] == nic)?;
        let (i, offset) = self.folded[k];
        let used = used(self.fold_len)?;
        if offset <= used {
            return None;
        }
        self.folded.truncate(k);
        self.fold_len = offset;
        self.pos = LinePos::Handler(i, false);
        Some(Cut {
            left: offset - used,
            undo: self.entry_folded.take(),
        })
    }
}

/// A folded burst cut short by a device asserting before its handler's turn
/// ([`Line::device_asserted`]).
#[derive(Clone, Debug)]
pub(crate) struct Cut {
    /// CPU time left of the burst, up to the asserting device's handler.
    pub left: SimTime,
    /// The handler whose start was folded into the burst and has not begun after all,
    /// with its driver's random stream before its costs were drawn.
    pub undo: Option<(usize, StreamRng)>,
}

/// What a line needs from the rest of the host during a pass: the devices' status and
/// their handlers.
pub(crate) trait LineEnv {
    /// Current simulated time.
    fn now(&self) -> SimTime;
    /// End of the run: a folded burst must not end after it.
    fn stop(&self) -> SimTime;
    /// Whether device `nic` asserts its interrupt.
    fn asserted(&self, nic: usize) -> bool;
    /// CPU time of `nic`'s handler finding nothing pending (its status read).
    fn idle_handler(&mut self, nic: usize) -> SimTime;
    /// Whether a handler's steps may share a CPU burst (merged bursts).
    fn merge_bursts(&self) -> bool;
    /// Whether something watches `nic`'s handler start at its own time (interrupt
    /// moderation), so that it cannot be folded into an earlier burst.
    fn start_watched(&self, nic: usize) -> bool;
    /// What must be saved to undo `nic`'s handler start: its driver's random stream.
    fn save_start(&self, nic: usize) -> StreamRng;
    /// Undo `nic`'s handler start folded into a cut burst.
    fn undo_start(&mut self, nic: usize, saved: StreamRng);
    /// The next step of `nic`'s handler (`first`: the chain calls it).
    fn handler_step(&mut self, nic: usize, first: bool) -> Step;
    /// The rest of `nic`'s handler joined to the burst of its entry, which ends at `t`,
    /// when certain: the extra CPU time (zero if nothing joins).
    fn handler_rest(&mut self, nic: usize, t: SimTime) -> SimTime;
}

#[cfg(test)]
mod tests {
    //! The line driven alone against a scripted chain: devices that assert or not,
    //! handlers whose steps are given in advance, constant costs (dispatch 2 us,
    //! release 3 us, an idle handler's status read 1 us).
    use super::*;
    use crate::sim::rng::RunKey;
    use std::collections::VecDeque;

    fn us(x: u64) -> SimTime {
        SimTime::from_ns_f64(x as f64 * 1000.0)
    }

    /// What the line asked of its environment, in order.
    #[derive(Debug, PartialEq)]
    enum Call {
        Idle(usize),
        Step(usize, bool),
        Rest(usize, SimTime),
        Undo(usize),
    }

    struct Chain {
        now: SimTime,
        stop: SimTime,
        asserted: Vec<bool>,
        watched: Vec<bool>,
        merge: bool,
        /// Each handler's next steps.
        steps: Vec<VecDeque<Step>>,
        /// CPU time a handler's rest adds to its entry's burst.
        rest: SimTime,
        log: Vec<Call>,
    }

    impl Chain {
        fn new(asserted: &[bool]) -> Chain {
            Chain {
                now: SimTime::ZERO,
                stop: us(1_000_000),
                asserted: asserted.to_vec(),
                watched: vec![false; asserted.len()],
                merge: true,
                steps: vec![VecDeque::new(); asserted.len()],
                rest: SimTime::ZERO,
                log: Vec::new(),
            }
        }
    }

    impl LineEnv for Chain {
        fn now(&self) -> SimTime {
            self.now
        }
        fn stop(&self) -> SimTime {
            self.stop
        }
        fn asserted(&self, nic: usize) -> bool {
            self.asserted[nic]
        }
        fn idle_handler(&mut self, nic: usize) -> SimTime {
            self.log.push(Call::Idle(nic));
            us(1)
        }
        fn merge_bursts(&self) -> bool {
            self.merge
        }
        fn start_watched(&self, nic: usize) -> bool {
            self.watched[nic]
        }
        fn save_start(&self, _nic: usize) -> StreamRng {
            RunKey::single(7).stream("driver")
        }
        fn undo_start(&mut self, nic: usize, _saved: StreamRng) {
            self.log.push(Call::Undo(nic));
        }
        fn handler_step(&mut self, nic: usize, first: bool) -> Step {
            self.log.push(Call::Step(nic, first));
            if first {
                // Taking the interrupt acknowledges the device.
                self.asserted[nic] = false;
            }
            self.steps[nic].pop_front().unwrap_or(Step::Done)
        }
        fn handler_rest(&mut self, nic: usize, t: SimTime) -> SimTime {
            self.log.push(Call::Rest(nic, t));
            self.rest
        }
    }

    /// A shared line over NICs 0, 1, 2 (dispatch 2 us, release 3 us).
    fn line3() -> Line {
        let cfg = IrqLineConfig {
            name: "irq11".into(),
            chain: vec!["a".into(), "b".into(), "c".into()],
            dispatch: CostParam::ns(2_000.0),
            release: CostParam::ns(3_000.0),
        };
        Line::shared(&cfg, vec![0, 1, 2], 1000.0, RunKey::single(1).stream("irq"))
    }

    #[test]
    fn nothing_asserted_is_no_pass() {
        let mut line = line3();
        let mut env = Chain::new(&[false, false, false]);
        assert_eq!(line.step(true, &mut env), Step::Done);
        assert_eq!(line.passes, 0);
        assert!(env.log.is_empty());
    }

    #[test]
    fn a_pass_folds_idle_handlers_around_the_working_one() {
        // Only NIC 1 asserts: dispatch (2) + NIC 0's status read (1) + NIC 1's entry
        // (5) make the first burst, 8 us; its rest is asked for at 8 us. Then its
        // frame (4 us), then NIC 2's status read (1) + release (3) = 4 us, then done.
        let mut line = line3();
        let mut env = Chain::new(&[false, true, false]);
        env.steps[1] = [Step::Run(us(5)), Step::Run(us(4)), Step::Done].into();
        assert_eq!(line.step(true, &mut env), Step::Run(us(8)));
        assert_eq!(line.folded, vec![(0, us(2))]);
        assert_eq!(line.fold_len, us(8));
        assert_eq!(line.step(false, &mut env), Step::Run(us(4)));
        assert_eq!(line.step(false, &mut env), Step::Run(us(4)));
        assert_eq!(line.step(false, &mut env), Step::Done);
        assert_eq!(line.passes, 1);
        assert_eq!(line.pos, LinePos::Idle);
        assert_eq!(
            env.log,
            vec![
                Call::Idle(0),
                Call::Step(1, true),
                Call::Rest(1, us(8)),
                Call::Step(1, false),
                Call::Step(1, false),
                Call::Idle(2),
            ]
        );
    }

    #[test]
    fn the_first_handler_joins_its_rest_to_its_entry() {
        // Nothing is folded before NIC 0: its entry (5 us) plus its rest (6 us).
        let mut line = line3();
        let mut env = Chain::new(&[true, false, false]);
        env.rest = us(6);
        env.steps[0] = [Step::Run(us(5))].into();
        line.dispatch = CostParam::default().build(1000.0);
        assert_eq!(line.step(true, &mut env), Step::Run(us(11)));
        assert_eq!(env.log, vec![Call::Step(0, true), Call::Rest(0, us(5))]);
    }

    #[test]
    fn a_watched_start_is_not_folded() {
        // Moderation watches NIC 1's start: the burst ends before its entry (3 us), and
        // the next step calls it as the chain's first call of that handler.
        let mut line = line3();
        let mut env = Chain::new(&[false, true, false]);
        env.watched[1] = true;
        env.steps[1] = [Step::Run(us(5))].into();
        assert_eq!(line.step(true, &mut env), Step::Run(us(3)));
        assert_eq!(line.step(false, &mut env), Step::Run(us(5)));
        assert_eq!(env.log, vec![Call::Idle(0), Call::Step(1, true)]);
    }

    #[test]
    fn a_device_asserting_before_its_folded_turn_cuts_the_burst() {
        // NIC 0 idle at 2 us into the 8 us burst; it asserts after 1 us: the burst is
        // cut to 1 us left, NIC 1's folded start is undone, and the pass resumes at
        // NIC 0's handler, which now finds its device asserted.
        let mut line = line3();
        let mut env = Chain::new(&[false, true, false]);
        env.steps[1] = [Step::Run(us(5))].into();
        env.steps[0] = [Step::Run(us(7))].into();
        assert_eq!(line.step(true, &mut env), Step::Run(us(8)));
        let cut = line
            .device_asserted(0, |fold_len| Some(fold_len - us(7)))
            .expect("cut");
        assert_eq!(cut.left, us(1));
        assert_eq!(cut.undo.map(|(nic, _)| nic), Some(1));
        assert_eq!(line.pos, LinePos::Handler(0, false));
        assert_eq!(line.fold_len, us(2));
        env.asserted[0] = true;
        // Nothing is folded before it now: its entry and (empty) rest, 7 us.
        assert_eq!(line.step(false, &mut env), Step::Run(us(7)));
        assert_eq!(
            env.log[env.log.len() - 2..],
            [Call::Step(0, true), Call::Rest(0, us(7))]
        );
    }

    #[test]
    fn a_device_asserting_after_its_turn_waits_for_the_next_pass() {
        let mut line = line3();
        let mut env = Chain::new(&[false, true, false]);
        env.steps[1] = [Step::Run(us(5))].into();
        assert_eq!(line.step(true, &mut env), Step::Run(us(8)));
        // 2 us used: NIC 0's status was read at 2 us, so nothing is cut.
        assert!(
            line.device_asserted(0, |fold_len| Some(fold_len - us(6)))
                .is_none()
        );
        // NIC 2 is not in the folded burst at all.
        assert!(line.device_asserted(2, |_| Some(SimTime::ZERO)).is_none());
        assert_eq!(line.fold_len, us(8));
    }

    #[test]
    fn a_burst_past_the_run_end_does_not_start_the_handler() {
        // The run ends 6 us from now: dispatch + status read + entry (8 us) would pass
        // it, so the entry is undone and the burst is the 3 us before it.
        let mut line = line3();
        let mut env = Chain::new(&[false, true, false]);
        env.stop = us(6);
        env.steps[1] = [Step::Run(us(5))].into();
        assert_eq!(line.step(true, &mut env), Step::Run(us(3)));
        assert_eq!(
            env.log,
            vec![Call::Idle(0), Call::Step(1, true), Call::Undo(1)]
        );
        assert_eq!(line.pos, LinePos::Handler(1, false));
    }
}
