//! A section of the forwarding path that one core at a time executes: what the cores of
//! a multi-core router contend for (`kernel.shared_section`).
//!
//! **The mechanism.** Some step of forwarding a packet writes state that every core's
//! packets share: a spin
//! lock's word or a cache line that each forwarded frame modifies (a shared reference
//! count, a statistics word, a queue's state bits). Only one core can own the line or
//! the lock at a time; a core that needs it while another holds it waits, spinning, and
//! the wait is CPU time of the packet's work. With one core nothing is ever waited for;
//! with `n` cores forwarding at full speed the waits grow with the share of time the
//! section is held, which is what makes forwarding scale worse than linearly while a
//! path that never enters the section (a drop before routing, XDP) scales linearly.
//!
//! **As modelled.** A first-come-first-served server shared by every core, like the PCI
//! bus ([`crate::model::bus`]): each frame's protocol work (`kernel.netisr_per_packet`,
//! charged when the frame's work begins) enters the section once at that instant; it
//! holds it for `hold` (a cost, sampled per entry from the section's own random
//! stream), from when it is free; the core spins from the frame's start until then.
//! The frame's CPU time is its protocol work plus the wait plus the hold. Where in the
//! frame's work the section lies is not modelled: it is entered when the frame's work is
//! dispatched (its step computed), before the driver's part of it; a burst that must wait
//! for a higher level (a hard interrupt pending at that instant) starts later than its
//! entry. Entries at one instant are served in the order the host handles them (core
//! order). The section is released `hold` after it was taken even if its holder is
//! interrupted meanwhile: a spin lock taken in softirq context with interrupts enabled
//! would be held longer, so on a host with many interrupts the model understates the
//! contention (at the saturated points of the shipped scenarios NAPI keeps the
//! interrupts off).
//!
//! **The variance matters, not only the mean.** Identical cores whose every cost is
//! constant fall into step after their first collisions (each core then reaches the
//! section just as the one before it leaves) and wait no more: a constant hold among
//! constant costs gives next to no contention. Anything that varies from frame to frame
//! keeps the cores out of step: the hold (whether the line is still in the core's cache
//! or must come from another core's) or the rest of the frame's work (a constant hold
//! with an exponential `netisr_per_packet` gives six cores of the XDP paper's testbed
//! 9.73 M frames/s instead of the linear 10.43 M, tests/it/xdp_paper.rs). So the exponential hold the testbed's
//! profile uses is two choices, its mean and its variance, the latter standing for the
//! variation of the whole per-frame path, which no source measures.
//!
//! Parameters: `hold` (a cost, required) \[ns\]. Counters: `kernel.section.entries`,
//! `kernel.section.contended` (entries that found it held), `kernel.section.spin_ns`
//! (CPU time spent waiting), `kernel.section.held_ns` (time it was held).

use crate::model::cost::{Cost, CostParam};
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `kernel.shared_section` as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SectionConfig {
    /// How long one frame holds the section \[cost\] (required).
    pub hold: CostParam,
}

impl SectionConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        if let Err(e) = self.hold.check() {
            p.push("hold", e);
        }
    }
}

/// The section during a run: when it is next free, and its counters.
#[derive(Clone, Debug)]
pub struct SharedSection {
    hold: Cost,
    rng: StreamRng,
    free_at: SimTime,
    entries: u64,
    contended: u64,
    spin: SimTime,
    held: SimTime,
}

impl SharedSection {
    /// The section of `cfg` at a CPU clock of `clock_mhz`, with its random stream.
    pub fn new(cfg: &SectionConfig, clock_mhz: f64, rng: StreamRng) -> SharedSection {
        SharedSection {
            hold: cfg.hold.build(clock_mhz),
            rng,
            free_at: SimTime::ZERO,
            entries: 0,
            contended: 0,
            spin: SimTime::ZERO,
            held: SimTime::ZERO,
        }
    }

    /// A frame's work enters the section at `now`: the CPU time it spends there, the
    /// wait for the holder (if any) plus its own hold.
    #[inline]
    pub fn enter(&mut self, now: SimTime) -> SimTime {
        let hold = self.hold.sample(&mut self.rng);
        let start = now.max(self.free_at);
        let wait = start - now;
        self.free_at = start + hold;
        self.entries += 1;
        if wait > SimTime::ZERO {
            self.contended += 1;
        }
        self.spin += wait;
        self.held += hold;
        wait + hold
    }

    /// Publish the counters.
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        c.insert("kernel.section.entries".into(), self.entries as f64);
        c.insert("kernel.section.contended".into(), self.contended as f64);
        c.insert("kernel.section.spin_ns".into(), self.spin.as_ns_f64());
        c.insert("kernel.section.held_ns".into(), self.held.as_ns_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::RunKey;

    fn section(hold: serde_json::Value) -> SharedSection {
        let cfg: SectionConfig =
            serde_json::from_value(serde_json::json!({ "hold": hold })).expect("config");
        SharedSection::new(&cfg, 1000.0, RunKey::single(1).stream("section"))
    }

    fn ns(n: u64) -> SimTime {
        SimTime::from_ns_f64(n as f64)
    }

    /// First come, first served: an entry that finds the section held waits for the
    /// holder, and the next one queues behind both.
    #[test]
    fn an_entry_waits_for_the_holder_and_those_queued_before_it() {
        let mut s = section(serde_json::json!(100));
        assert_eq!(s.enter(ns(1_000)), ns(100)); // free: its hold only
        assert_eq!(s.enter(ns(1_040)), ns(60 + 100)); // free at 1,100
        assert_eq!(s.enter(ns(1_050)), ns(150 + 100)); // free at 1,200
        assert_eq!(s.enter(ns(2_000)), ns(100)); // free again
        let mut c = BTreeMap::new();
        s.counters(&mut c);
        assert_eq!(c["kernel.section.entries"], 4.0);
        assert_eq!(c["kernel.section.contended"], 2.0);
        assert_eq!(c["kernel.section.spin_ns"], 210.0);
        assert_eq!(c["kernel.section.held_ns"], 400.0);
    }

    /// An exponential hold is sampled per entry, with its mean (100,000 entries, 1 %:
    /// the standard error of the mean is 0.32 %).
    #[test]
    fn an_exponential_hold_has_its_mean() {
        let mut s = section(serde_json::json!({ "dist": "exponential", "mean_ns": 72 }));
        let n = 100_000u64;
        let mut t = SimTime::ZERO;
        for _ in 0..n {
            t += ns(10_000); // never contended
            s.enter(t);
        }
        let mut c = BTreeMap::new();
        s.counters(&mut c);
        assert_eq!(c["kernel.section.contended"], 0.0);
        let mean = c["kernel.section.held_ns"] / n as f64;
        assert!((mean / 72.0 - 1.0).abs() < 0.01, "mean hold {mean} ns");
    }
}
