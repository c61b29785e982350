//! NIC statistics counters and their overflow interrupt (3Com 3c90x, xl(4)).
//!
//! The chip counts frames received and transmitted OK in counters of `bits` bits
//! (window 6; the frames-OK counters are 10 bits with `upper_frames_ok`). When a counter
//! nears overflow -- here, reaches `threshold` -- the chip raises the STATSOFLOW
//! interrupt cause, if it is in the enabled set (XL_INTRS; `overflow_interrupt`). The
//! driver's handler then calls xl_stats_update at splimp, which reads and clears the
//! counters and costs `overflow_harvest`; every device interrupt waits meanwhile. The
//! driver also harvests periodically from a softclock callout every `harvest_period_ns`
//! (`periodic_harvest`, at `periodic_spl`: `softclock`, preemptible by every interrupt
//! and by the netisr, or `splimp`). A harvest clears the counters when it starts
//! (reading them clears them). Counts beyond `2^bits` before a harvest are lost.
//!
//! So with harvests every T seconds, a NIC counting r frames/s raises about
//! floor(r T / threshold) overflow interrupts per period: none below threshold / T.
//!
//! Parameters ([`StatsCountersConfig`], `nics[i].stats_counters`): `threshold`
//! (required) \[frames\], `bits` 10, `overflow_interrupt` true, `overflow_harvest`
//! (required) \[cost\], `periodic_harvest` \[cost\] (default: `overflow_harvest`),
//! `harvest_period_ns` 1e9, `periodic_spl` `softclock`, `harvest_phase_ns` (default one
//! period).
//!
//! Counters: `<nic>.stats.overflow_interrupts`, `<nic>.stats.periodic_harvests`,
//! `<nic>.stats.lost_counts` (frames not counted because a counter wrapped).

use crate::model::cost::{Cost, CostParam};
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Priority at which a piece of kernel work runs.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Spl {
    /// Softclock: below the network software interrupt.
    #[default]
    Softclock,
    /// splimp: blocks device interrupts.
    Splimp,
}

/// Statistics counters of a NIC.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsCountersConfig {
    /// Count at which the chip raises STATSOFLOW (required) \[frames\].
    #[schemars(range(min = 1))]
    pub threshold: u32,
    /// Counter width \[bits\] (default 10).
    #[serde(default = "d_bits")]
    #[schemars(range(min = 1, max = 32))]
    pub bits: u32,
    /// Whether STATSOFLOW is an enabled interrupt cause (default true).
    #[serde(default = "d_true")]
    pub overflow_interrupt: bool,
    /// Cost of the harvest run by the interrupt handler at splimp (required) \[cost\].
    pub overflow_harvest: CostParam,
    /// Cost of the periodic harvest \[cost\] (default: `overflow_harvest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub periodic_harvest: Option<CostParam>,
    /// Period of the periodic harvest \[ns\] (default 1e9: once a second).
    #[serde(default = "d_period")]
    #[schemars(range(min = 1.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub harvest_period_ns: f64,
    /// Priority of the periodic harvest (default `softclock`).
    #[serde(default)]
    pub periodic_spl: Spl,
    /// Time of the first periodic harvest after the start of a run \[ns\] (default: one
    /// period). Interfaces brought up at different times harvest at different phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harvest_phase_ns: Option<f64>,
}

fn d_bits() -> u32 {
    10
}
fn d_true() -> bool {
    true
}
fn d_period() -> f64 {
    1e9
}

impl StatsCountersConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("threshold", self.threshold as u64, 1, "frame");
        if !(1..=32).contains(&self.bits) {
            p.push("bits", format!("must be 1 to 32 bits, got {}", self.bits));
        } else if self.bits < 32 && self.threshold as u64 > (1u64 << self.bits) {
            p.push(
                "threshold",
                format!(
                    "a {}-bit counter cannot reach {}",
                    self.bits, self.threshold
                ),
            );
        }
        if let Err(e) = self.overflow_harvest.check() {
            p.push("overflow_harvest", e);
        }
        if let Some(c) = &self.periodic_harvest
            && let Err(e) = c.check()
        {
            p.push("periodic_harvest", e);
        }
        p.period_ns("harvest_period_ns", self.harvest_period_ns);
        if let Some(ph) = self.harvest_phase_ns {
            p.time_ns("harvest_phase_ns", ph);
        }
    }
}

/// Counter state of one NIC.
#[derive(Clone, Debug)]
pub struct StatsCounters {
    threshold: u64,
    wrap: u64,
    /// Whether STATSOFLOW raises an interrupt.
    pub overflow_interrupt: bool,
    /// Cost of the handler's harvest.
    pub overflow_harvest: Cost,
    /// Cost of the periodic harvest.
    pub periodic_harvest: Cost,
    /// Harvest period.
    pub period: SimTime,
    /// Priority of the periodic harvest.
    pub periodic_spl: Spl,
    /// First periodic harvest.
    pub phase: SimTime,
    rx: u64,
    tx: u64,
    /// STATSOFLOW is pending.
    pub cause: bool,
    overflow_interrupts: u64,
    periodic_harvests: u64,
    lost: u64,
}

impl StatsCounters {
    /// State from the configuration.
    pub fn new(cfg: &StatsCountersConfig, clock_mhz: f64) -> StatsCounters {
        let overflow = cfg.overflow_harvest.build(clock_mhz);
        StatsCounters {
            threshold: cfg.threshold as u64,
            wrap: if cfg.bits >= 32 {
                u64::MAX
            } else {
                1u64 << cfg.bits
            },
            overflow_interrupt: cfg.overflow_interrupt,
            periodic_harvest: cfg
                .periodic_harvest
                .as_ref()
                .map_or(overflow.clone(), |c| c.build(clock_mhz)),
            overflow_harvest: overflow,
            period: SimTime::from_ns_f64(cfg.harvest_period_ns),
            periodic_spl: cfg.periodic_spl,
            phase: SimTime::from_ns_f64(cfg.harvest_phase_ns.unwrap_or(cfg.harvest_period_ns)),
            rx: 0,
            tx: 0,
            cause: false,
            overflow_interrupts: 0,
            periodic_harvests: 0,
            lost: 0,
        }
    }

    fn bump(c: &mut u64, wrap: u64, lost: &mut u64) {
        *c += 1;
        if *c >= wrap {
            *c -= wrap;
            *lost += wrap;
        }
    }

    /// Count a frame received (`rx`) or sent; returns whether STATSOFLOW is newly
    /// raised as an interrupt cause.
    pub fn count(&mut self, rx: bool) -> bool {
        let c = if rx { &mut self.rx } else { &mut self.tx };
        Self::bump(c, self.wrap, &mut self.lost);
        let near = self.rx.max(self.tx) >= self.threshold;
        if near && self.overflow_interrupt && !self.cause {
            self.cause = true;
            return true;
        }
        false
    }

    /// A harvest starts: the counters are read and cleared. `overflow` says whether it
    /// is the interrupt handler's.
    pub fn harvest(&mut self, overflow: bool) {
        self.rx = 0;
        self.tx = 0;
        self.cause = false;
        if overflow {
            self.overflow_interrupts += 1;
        } else {
            self.periodic_harvests += 1;
        }
    }

    /// Publish the counters.
    pub fn counters(&self, nic: &str, c: &mut BTreeMap<String, f64>) {
        c.insert(
            format!("{nic}.stats.overflow_interrupts"),
            self.overflow_interrupts as f64,
        );
        c.insert(
            format!("{nic}.stats.periodic_harvests"),
            self.periodic_harvests as f64,
        );
        c.insert(format!("{nic}.stats.lost_counts"), self.lost as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_at_threshold_and_wrap_loses_counts() {
        let cfg = StatsCountersConfig {
            threshold: 3,
            bits: 2,
            overflow_interrupt: true,
            overflow_harvest: CostParam::ns(1.0),
            periodic_harvest: None,
            harvest_period_ns: 1e9,
            periodic_spl: Spl::Softclock,
            harvest_phase_ns: None,
        };
        let mut s = StatsCounters::new(&cfg, 100.0);
        assert!(!s.count(true));
        assert!(!s.count(true));
        assert!(s.count(true)); // reaches 3
        assert!(!s.count(true)); // already pending; wraps at 4
        assert_eq!(s.lost, 4);
        s.harvest(true);
        assert!(!s.cause);
    }
}
