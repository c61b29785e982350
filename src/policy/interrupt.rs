//! The classic interrupt-driven receive path (4.4BSD; FreeBSD 2.x-4.x dc(4), xl(4)).
//!
//! When a NIC asserts its line, the driver's interrupt handler runs at hardware-interrupt
//! priority:
//!
//! ```text
//! isr_entry        interrupt dispatch, handler entry, mask the chip (IMR = 0),
//!                  read and acknowledge the status register
//! loop:            while the status register shows received frames:
//!   isr_per_packet   rxeof for one frame: unlink the mbuf, refill the descriptor,
//!                    ether_input, IF_ENQUEUE on ipintrq (dropped if full), schednetisr
//! isr_exit         unmask the chip (IMR = DC_INTRS), return from interrupt
//! ```
//!
//! The loop re-checks the ring after each frame, so frames that arrive while the handler
//! runs are taken in the same invocation and share its fixed cost. Frames that arrive
//! after the last check, during `isr_exit`, find the chip masked: the line is asserted
//! when it is unmasked and the handler runs again at once. Interrupts of other NICs
//! that arrive meanwhile wait (hardware interrupts at the same IPL do not nest) and are
//! taken in the order they were raised.
//!
//! Parameters ([`DriverConfig`], costs in the forms of [`crate::cost`]): `isr_entry`,
//! `isr_per_packet`, `isr_exit`; all required, no defaults (they are what a profile is
//! about).
//!
//! Counters: `Nic::interrupts` (handler invocations), packets handled per invocation
//! (`Host::isr_packets`), ipintrq drops per flow.

use crate::cost::{Cost, CostParam};
use crate::cpu::Level;
use crate::engine::Scheduler;
use crate::host::{Event, Host, dispatch};
use crate::packet::Packet;
use crate::problems::Problems;
use crate::rng::StreamRng;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Driver interrupt-handler costs as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverConfig {
    /// Fixed cost of one handler invocation up to its first ring check [cost].
    pub isr_entry: CostParam,
    /// Cost of receiving one frame inside the handler loop [cost].
    pub isr_per_packet: CostParam,
    /// Fixed cost after the last ring check until return from interrupt [cost].
    pub isr_exit: CostParam,
}

impl DriverConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        for (name, c) in [
            ("isr_entry", &self.isr_entry),
            ("isr_per_packet", &self.isr_per_packet),
            ("isr_exit", &self.isr_exit),
        ] {
            if let Err(e) = c.check() {
                p.push(name, e);
            }
        }
    }
}

/// Driver costs ready to sample.
#[derive(Clone, Debug)]
pub(crate) struct DriverCosts {
    pub entry: Cost,
    pub per_packet: Cost,
    pub exit: Cost,
    /// Random stream of this driver's costs.
    pub rng: StreamRng,
}

impl DriverCosts {
    pub fn new(cfg: &DriverConfig, clock_mhz: f64, rng: StreamRng) -> Self {
        DriverCosts {
            entry: cfg.isr_entry.build(clock_mhz),
            per_packet: cfg.isr_per_packet.build(clock_mhz),
            exit: cfg.isr_exit.build(clock_mhz),
            rng,
        }
    }
}

/// Where the running handler is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum IsrStep {
    Entry,
    Packet(Packet),
    Exit,
}

/// The handler invocation occupying the hardware-interrupt level.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Isr {
    pub nic: usize,
    pub step: IsrStep,
}

impl DriverCosts {
    fn sample_entry(&mut self) -> SimTime {
        self.entry.sample(&mut self.rng)
    }
    fn sample_per_packet(&mut self) -> SimTime {
        self.per_packet.sample(&mut self.rng)
    }
    fn sample_exit(&mut self) -> SimTime {
        self.exit.sample(&mut self.rng)
    }
}

impl Host {
    /// A NIC has work: assert its line if the chip is unmasked, and run the handler now
    /// or queue it behind the one running.
    pub(crate) fn irq_assert(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        if !self.nics[nic].wants_interrupt() {
            return;
        }
        self.nics[nic].irq_asserted = true;
        if self.isr.is_none() {
            let d = self.isr_begin(nic);
            dispatch(self.cpu.start(now, Level::HardIrq, d), s);
        } else {
            self.irq_pending.push_back(nic);
        }
    }

    /// Take the interrupt of `nic`: mask the chip, return the entry cost.
    fn isr_begin(&mut self, nic: usize) -> SimTime {
        let n = &mut self.nics[nic];
        n.irq_asserted = false;
        n.irq_enabled = false;
        n.interrupts += 1;
        self.isr = Some(Isr {
            nic,
            step: IsrStep::Entry,
        });
        self.drivers[nic].sample_entry()
    }

    /// The current handler step has completed.
    pub(crate) fn isr_step_done(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(isr) = self.isr else { return };
        let nic = isr.nic;
        match isr.step {
            IsrStep::Entry | IsrStep::Packet(_) => {
                if let IsrStep::Packet(p) = isr.step {
                    self.isr_packets += 1;
                    self.ipintrq_enqueue(p, now, s);
                }
                let (step, d) = match self.nics[nic].rx_ring.pop() {
                    Some(p) => (IsrStep::Packet(p), self.drivers[nic].sample_per_packet()),
                    None => (IsrStep::Exit, self.drivers[nic].sample_exit()),
                };
                self.isr = Some(Isr { nic, step });
                let d = self.cpu.chain(now, Level::HardIrq, d);
                dispatch(Some(d), s);
            }
            IsrStep::Exit => {
                self.isr = None;
                self.nics[nic].irq_enabled = true;
                // Frames that arrived after the last check raise the line again.
                if self.nics[nic].wants_interrupt() {
                    self.nics[nic].irq_asserted = true;
                    self.irq_pending.push_back(nic);
                }
                match self.irq_pending.pop_front() {
                    Some(next) => {
                        let d = self.isr_begin(next);
                        let d = self.cpu.chain(now, Level::HardIrq, d);
                        dispatch(Some(d), s);
                    }
                    None => {
                        let d = self.cpu.finish(now, Level::HardIrq);
                        dispatch(d, s);
                    }
                }
            }
        }
    }
}
