//! The clock interrupt (hardclock): a tick every `1/hz` seconds at the highest priority
//! (splclock), each costing `hardclock` of CPU time.
//!
//! 4.4BSD's `hardclock()` runs from the interval timer's interrupt `hz` times a second
//! (FreeBSD 2.x-4.x: `HZ` 100) and preempts everything, device interrupt handlers
//! included; its callouts (the statistics harvest, dc(4)'s link check) run later at
//! softclock priority and are modelled by the parts that own them. [`Hardclock`] is the
//! tick itself: when it falls and what it costs. It is simulated only when it costs
//! something (`hardclock` above 0); FreeBSD polling's tick and NAPI's timers are their
//! policies' own.
//!
//! Parameters ([`ClockConfig`]): `hz` [1/s] (default 100), `hardclock` \[cost\] (default 0:
//! no clock interrupt). Counters: none (its CPU time is the Clock level's).

use crate::model::cost::{Cost, CostParam};
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// The clock interrupt: hardclock at `hz`, each costing `hardclock` at the highest
/// priority (splclock). Defaults: `hz` 100 (FreeBSD 2.x-4.x), `hardclock` 0 (not
/// modelled). Callouts (the statistics harvest) run at softclock priority.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockConfig {
    /// Clock interrupts per second [1/s] (default 100).
    #[serde(default = "d_hz")]
    #[schemars(range(min = 1, max = 100_000))]
    pub hz: u32,
    /// Cost of one hardclock \[cost\] (default 0: no clock interrupt is simulated).
    #[serde(default)]
    pub hardclock: CostParam,
}

fn d_hz() -> u32 {
    100
}

impl Default for ClockConfig {
    fn default() -> Self {
        ClockConfig {
            hz: d_hz(),
            hardclock: CostParam::default(),
        }
    }
}

impl ClockConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        if !(1..=100_000).contains(&self.hz) {
            p.push("hz", format!("must be 1 to 100000, got {}", self.hz));
        }
        if let Err(e) = self.hardclock.check() {
            p.push("hardclock", e);
        }
    }
}

/// The clock interrupt during a run: its period, its cost and the cost's random stream.
#[derive(Clone, Debug)]
pub struct Hardclock {
    /// Time between ticks, the first at one period.
    period: SimTime,
    cost: Cost,
    rng: StreamRng,
}

impl Hardclock {
    /// The clock `cfg` describes on a CPU of `mhz`, its costs drawn from `rng`; `None`
    /// when a tick costs nothing (no clock interrupt is simulated).
    pub fn new(cfg: &ClockConfig, mhz: f64, rng: StreamRng) -> Option<Hardclock> {
        (cfg.hardclock.mean_ns(mhz) > 0.0).then(|| Hardclock {
            period: SimTime::from_ns_f64(1e9 / cfg.hz as f64),
            cost: cfg.hardclock.build(mhz),
            rng,
        })
    }

    /// Time between ticks (the first is at one period).
    #[inline]
    pub fn period(&self) -> SimTime {
        self.period
    }

    /// The CPU time of one tick.
    #[inline]
    pub fn tick_cost(&mut self) -> SimTime {
        self.cost.sample(&mut self.rng)
    }

    /// Whether no tick falls in [`from`, `to`]. The ticks are at every multiple of the
    /// period from the first one on; a tick at `from` may not have been taken yet, and
    /// one at `to` is taken before a burst ending then completes, so both count.
    #[inline(always)]
    pub fn no_tick_within(&self, from: SimTime, to: SimTime) -> bool {
        let tick = self.period.0;
        from.0.div_ceil(tick).max(1) * tick > to.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::RunKey;

    fn clock(hz: u32, cost_ns: f64) -> Option<Hardclock> {
        let cfg: ClockConfig = serde_json::from_value(serde_json::json!({
            "hz": hz, "hardclock": { "ns": cost_ns }
        }))
        .expect("config");
        Hardclock::new(&cfg, 1000.0, RunKey::single(1).stream("clock"))
    }

    #[test]
    fn a_clock_that_costs_nothing_is_not_simulated() {
        assert!(clock(100, 0.0).is_none());
        assert!(clock(100, 2_000.0).is_some());
    }

    #[test]
    fn ticks_fall_on_every_multiple_of_the_period_from_the_first_on() {
        // hz 1000: a tick every 1 ms (1e9 ps), the first at 1 ms.
        let c = clock(1000, 2_000.0).expect("clock");
        assert_eq!(c.period(), SimTime(1_000_000_000));
        // [0, 0.5 ms]: the first tick is at 1 ms.
        assert!(c.no_tick_within(SimTime(0), SimTime(500_000_000)));
        // A tick at either end counts.
        assert!(!c.no_tick_within(SimTime(0), SimTime(1_000_000_000)));
        assert!(!c.no_tick_within(SimTime(2_000_000_000), SimTime(2_500_000_000)));
        // Strictly between two ticks.
        assert!(c.no_tick_within(SimTime(2_000_000_001), SimTime(2_999_999_999)));
    }

    #[test]
    fn a_tick_costs_its_configured_time() {
        // A constant 2 us at any clock rate.
        let mut c = clock(100, 2_000.0).expect("clock");
        assert_eq!(c.tick_cost(), SimTime::from_ns_f64(2_000.0));
    }
}
