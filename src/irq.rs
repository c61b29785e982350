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
//!   `Handler::whole` in [`crate::policy::interrupt`]). A device asserting before
//!   its folded handler's turn cuts the burst there and undoes the folded start, so a
//!   pass does exactly what it would with every step a burst of its own (a CPU burst
//!   ends after the other events of its instant, see `Host::run`).
//!
//! Parameters ([`IrqLineConfig`], costs in the forms of [`crate::cost`]): `name`,
//! `chain` (NIC names in call order), `dispatch` (default 0: interrupt entry, PIC mask
//! and EOI, up to the first handler), `release` (default 0: handlers of devices not
//! modelled, e.g. a USB controller, then PIC unmask and return from interrupt).
//!
//! Counters: `<line>.passes` (interrupts taken on the line: chain passes).

use crate::cost::{Cost, CostParam};
use crate::problems::Problems;
use crate::rng::StreamRng;
use crate::time::SimTime;
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
    /// register save, the multiplexer (default 0) [cost].
    #[serde(default)]
    pub dispatch: CostParam,
    /// After the last modelled handler: handlers of other devices on the line, PIC
    /// unmask, return from interrupt (default 0) [cost].
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
}
