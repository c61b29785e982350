//! NIC interrupt moderation (coalescing), as in Intel's 8254x (e1000/em) and most
//! gigabit controllers.
//!
//! The chip delays its receive interrupt so that one interrupt covers several frames:
//!
//! - `packets`: raise as soon as this many frames arrived since the last interrupt
//!   (a packet-count threshold; needs a timer so a lone frame is not stranded);
//! - `packet_timer_ns` (RDTR semantics): raise when no frame arrived for this long
//!   (the timer restarts with every frame);
//! - `absolute_timer_ns` (RADV semantics): raise at most this long after the first frame
//!   since the last interrupt, however frames keep coming;
//! - `min_interval_ns` (ITR): never raise two interrupts closer than this;
//! - `tx_packet_timer_ns` (TIDV) and `tx_absolute_timer_ns` (TADV): when either is set,
//!   transmit completions have delay timers of their own, as on the 8254x: a completion
//!   restarts the TIDV timer and starts the TADV timer if none runs, and the TXDW cause
//!   raises the interrupt when the first of the two expires (then subject to ITR),
//!   while received frames keep the receive rules above (with RDTR 0, at once). Without
//!   them a transmit cause is timed like a received frame (bge's one set of coalescing
//!   ticks);
//! - `adaptive: "dynamic-conservative"`: e1000's InterruptThrottleRate = 3: at every
//!   interrupt the traffic since the previous one is classed as lowest / low latency or
//!   bulk (e1000_update_itr) and the interval set to 20,000 or 4,000 interrupts/s
//!   ("conservative" never uses the 70,000/s lowest-latency rate), smoothed upwards by a
//!   quarter step as e1000_set_itr does. It replaces `min_interval_ns`.
//!
//! With no threshold and no timer an interrupt is raised at once (subject to the
//! interval). Units: everything in ns; e1000 registers count 1.024 us (RDTR, RADV, TIDV,
//! TADV) and 256 ns (ITR: interval = ITR x 256 ns, 488 = 8,000/s). Defaults: all off.
//!
//! Counters: `raised` (interrupts the moderation let through), `suppressed` (receive
//! causes that did not raise an interrupt themselves but were folded into a later one).

use crate::sim::engine::{Timer, TimerKey};
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// Adaptive interrupt-rate modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Adaptive {
    /// e1000 InterruptThrottleRate = 3: 4,000-20,000 interrupts/s by traffic class.
    DynamicConservative,
}

/// Moderation parameters of a NIC.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModerationConfig {
    /// Frames that raise the interrupt at once (0 = off) [frames].
    #[serde(default)]
    pub packets: u32,
    /// Packet delay timer, restarted by every frame (RDTR; 0 = off) [ns].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub packet_timer_ns: f64,
    /// Absolute delay timer from the first frame (RADV; 0 = off) [ns].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub absolute_timer_ns: f64,
    /// Minimum time between two interrupts (ITR; 0 = off) [ns].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub min_interval_ns: f64,
    /// Transmit interrupt delay, restarted by every completion (TIDV; 0 = off: transmit
    /// causes follow the receive timers) [ns].
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub tx_packet_timer_ns: f64,
    /// Transmit absolute delay from the first completion since the last interrupt
    /// (TADV; 0 = off) [ns].
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub tx_absolute_timer_ns: f64,
    /// Adaptive interval (replaces `min_interval_ns`) (default: none, the fixed
    /// `min_interval_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<Adaptive>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl ModerationConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.time_ns("packet_timer_ns", self.packet_timer_ns);
        p.time_ns("absolute_timer_ns", self.absolute_timer_ns);
        p.time_ns("min_interval_ns", self.min_interval_ns);
        p.time_ns("tx_packet_timer_ns", self.tx_packet_timer_ns);
        p.time_ns("tx_absolute_timer_ns", self.tx_absolute_timer_ns);
        if self.packets > 0 && self.packet_timer_ns <= 0.0 && self.absolute_timer_ns <= 0.0 {
            p.push("packets", "a packet threshold needs `packet_timer_ns` or `absolute_timer_ns`, or a lone frame would never raise an interrupt");
        }
        if self.adaptive.is_some() && self.min_interval_ns > 0.0 {
            p.push(
                "adaptive",
                "`adaptive` sets the interval itself: leave `min_interval_ns` at 0",
            );
        }
    }
}

/// e1000 latency classes (e1000_main.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Lowest,
    Low,
    Bulk,
}

/// Moderation state of one NIC.
#[derive(Clone, Debug)]
pub struct Moderation {
    threshold: u32,
    rdtr: SimTime,
    radv: SimTime,
    interval: SimTime,
    tidv: SimTime,
    tadv: SimTime,
    /// Transmit delay timers (TIDV, TADV) running: their expiry times.
    tx_timers: Option<(SimTime, SimTime)>,
    adaptive: Option<Adaptive>,
    class: Class,
    itr_per_s: f64,
    count: u32,
    bytes: u64,
    first: Option<SimTime>,
    last_pkt: SimTime,
    last_irq: Option<SimTime>,
    /// The delay timer, when armed.
    timer: Timer,
    /// Interrupts let through -- counter.
    pub raised: u64,
    /// Receive causes folded into a later interrupt -- counter.
    pub suppressed: u64,
}

impl Moderation {
    /// Its counters under NIC `nic`'s name: `<nic>.moderation.raised` (interrupts let
    /// through) and `<nic>.moderation.suppressed` (receive causes folded into a later
    /// interrupt).
    pub fn counters(&self, nic: &str, c: &mut std::collections::BTreeMap<String, f64>) {
        c.insert(format!("{nic}.moderation.raised"), self.raised as f64);
        c.insert(
            format!("{nic}.moderation.suppressed"),
            self.suppressed as f64,
        );
    }

    /// State from the configuration.
    pub fn new(cfg: &ModerationConfig) -> Moderation {
        let (interval, itr) = match cfg.adaptive {
            Some(_) => (SimTime::from_ns_f64(1e9 / 20_000.0), 20_000.0),
            None => (SimTime::from_ns_f64(cfg.min_interval_ns), 0.0),
        };
        Moderation {
            threshold: cfg.packets,
            rdtr: SimTime::from_ns_f64(cfg.packet_timer_ns),
            radv: SimTime::from_ns_f64(cfg.absolute_timer_ns),
            interval,
            tidv: SimTime::from_ns_f64(cfg.tx_packet_timer_ns),
            tadv: SimTime::from_ns_f64(cfg.tx_absolute_timer_ns),
            tx_timers: None,
            adaptive: cfg.adaptive,
            class: Class::Low,
            itr_per_s: itr,
            count: 0,
            bytes: 0,
            first: None,
            last_pkt: SimTime::ZERO,
            last_irq: None,
            timer: Timer::IDLE,
            raised: 0,
            suppressed: 0,
        }
    }

    /// The driver programs a new profile (DIM's work item): interrupt at `pkts` frames,
    /// or `usecs` after the last frame (`restart_per_frame`: DIM's CQE mode, RDTR-like)
    /// or after the first (EQE mode, RADV-like). Takes effect from the next frame.
    pub fn program(&mut self, usecs: u16, pkts: u16, restart_per_frame: bool) {
        let t = SimTime::from_ns_f64(usecs as f64 * 1e3);
        self.threshold = pkts as u32;
        (self.rdtr, self.radv) = if restart_per_frame {
            (t, SimTime::ZERO)
        } else {
            (SimTime::ZERO, t)
        };
    }

    /// A frame arrived.
    pub fn packet(&mut self, now: SimTime, bytes: u32) {
        self.count += 1;
        self.bytes += bytes as u64;
        self.first.get_or_insert(now);
        self.last_pkt = now;
    }

    /// A transmit completion asked for an interrupt: like a received frame it starts the
    /// absolute timer and restarts the packet timer (bge's send coalescing ticks), but it
    /// counts towards neither the frame threshold nor the adaptive traffic class.
    /// With transmit delay timers of its own (TIDV/TADV) the completion restarts TIDV
    /// and starts TADV if it is not running instead.
    pub fn tx_cause(&mut self, now: SimTime) {
        if self.tx_delayed() {
            let never = SimTime(u64::MAX);
            let at = |d: SimTime| if d > SimTime::ZERO { now + d } else { never };
            let tadv = self.tx_timers.map_or(at(self.tadv), |(_, a)| a);
            self.tx_timers = Some((at(self.tidv), tadv));
            return;
        }
        self.first.get_or_insert(now);
        self.last_pkt = now;
    }

    /// Whether transmit causes have delay timers of their own (TIDV or TADV set).
    fn tx_delayed(&self) -> bool {
        self.tidv > SimTime::ZERO || self.tadv > SimTime::ZERO
    }

    /// Earliest time the pending cause may raise the interrupt.
    pub fn fire_time(&self, now: SimTime) -> SimTime {
        if let Some((tidv, tadv)) = self.tx_timers
            && self.count == 0
        {
            // No received frame is pending: the delayed transmit cause sets the time
            // (a statistics cause raised meanwhile waits with it). An interrupt taken
            // for another cause first reclaims the completions and stops the timers
            // (`on_interrupt`): the model raises no TXDW afterwards for descriptors
            // already reclaimed.
            let t = tidv.min(tadv);
            let t = match self.last_irq {
                Some(l) => t.max(l + self.interval),
                None => t,
            };
            return t.max(now);
        }
        let mut t: Option<SimTime> = None;
        let mut earliest = |x: SimTime| t = Some(t.map_or(x, |y| y.min(x)));
        if self.threshold > 0 && self.count >= self.threshold {
            earliest(now);
        }
        if self.rdtr > SimTime::ZERO {
            earliest(self.last_pkt + self.rdtr);
        }
        if self.radv > SimTime::ZERO {
            earliest(self.first.unwrap_or(now) + self.radv);
        }
        let t = if self.threshold == 0 && self.rdtr == SimTime::ZERO && self.radv == SimTime::ZERO {
            now
        } else {
            t.unwrap_or(now)
        };
        let t = match self.last_irq {
            Some(l) => t.max(l + self.interval),
            None => t,
        };
        t.max(now)
    }

    /// A cause has to wait until `at`: whether a timer must be armed for it (then
    /// [`Moderation::armed`] takes its key). `false` when the armed timer already
    /// expires then. A cause that had to wait is counted as suppressed once.
    pub fn arm(&mut self, at: SimTime) -> bool {
        if self.timer.deadline() == Some(at) {
            return false;
        }
        self.suppressed += 1;
        true
    }

    /// The timer [`Moderation::arm`] asked for is queued as `key` (re-arming cancels an
    /// earlier one).
    pub fn armed(&mut self, key: TimerKey) {
        self.timer.armed(key);
    }

    /// Whether the timer event of `key` that popped is the armed one (and disarm it).
    pub fn expired(&mut self, key: TimerKey) -> bool {
        self.timer.fired(key)
    }

    /// The handler was entered: start a new coalescing window, adapt the rate.
    pub fn on_interrupt(&mut self) {
        if self.adaptive.is_some() {
            self.adapt(self.count, self.bytes);
        }
        self.count = 0;
        self.bytes = 0;
        self.first = None;
        self.tx_timers = None;
        self.timer.cancel();
    }

    /// The chip asserts its interrupt now: the minimum interval (ITR) counts from here.
    pub fn asserted(&mut self, now: SimTime) {
        self.raised += 1;
        self.last_irq = Some(now);
    }

    /// e1000_update_itr + e1000_set_itr, conservative mode.
    fn adapt(&mut self, packets: u32, bytes: u64) {
        if packets == 0 {
            return;
        }
        let per = bytes / packets as u64;
        self.class = match self.class {
            Class::Lowest => {
                if per > 8000 {
                    Class::Bulk
                } else if packets < 5 && bytes > 512 {
                    Class::Low
                } else {
                    Class::Lowest
                }
            }
            Class::Low => {
                if bytes > 10_000 {
                    if per > 8000 || packets < 10 || per > 1200 {
                        Class::Bulk
                    } else if packets > 35 {
                        Class::Lowest
                    } else {
                        Class::Low
                    }
                } else if per > 2000 {
                    Class::Bulk
                } else if packets <= 2 && bytes < 512 {
                    Class::Lowest
                } else {
                    Class::Low
                }
            }
            Class::Bulk => {
                if bytes > 25_000 {
                    if packets > 35 {
                        Class::Low
                    } else {
                        Class::Bulk
                    }
                } else if bytes < 6000 {
                    Class::Low
                } else {
                    Class::Bulk
                }
            }
        };
        // Conservative mode: lowest latency is treated as low latency.
        let target = match self.class {
            Class::Lowest | Class::Low => 20_000.0,
            Class::Bulk => 4_000.0,
        };
        // Going up (towards more interrupts) is smoothed by a quarter step.
        let cur = self.itr_per_s;
        let new = if target > cur {
            (cur + target / 4.0).min(target)
        } else {
            target
        };
        self.itr_per_s = new;
        self.interval = SimTime::from_ns_f64(1e9 / new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_timer_bounds_the_wait_and_packet_timer_restarts() {
        let cfg = ModerationConfig {
            packet_timer_ns: 10_000.0,
            absolute_timer_ns: 25_000.0,
            ..Default::default()
        };
        let mut m = Moderation::new(&cfg);
        let us = |x: u64| SimTime(x * 1_000_000);
        m.packet(us(0), 64);
        assert_eq!(m.fire_time(us(0)), us(10));
        m.packet(us(8), 64);
        assert_eq!(m.fire_time(us(8)), us(18)); // restarted
        m.packet(us(16), 64);
        assert_eq!(m.fire_time(us(16)), us(25)); // absolute bound
    }

    #[test]
    fn interval_spaces_interrupts() {
        let cfg = ModerationConfig {
            min_interval_ns: 125_000.0,
            ..Default::default()
        };
        let mut m = Moderation::new(&cfg);
        let us = |x: u64| SimTime(x * 1_000_000);
        m.packet(us(0), 64);
        assert_eq!(m.fire_time(us(0)), us(0));
        m.asserted(us(0));
        m.on_interrupt();
        m.packet(us(30), 64);
        assert_eq!(m.fire_time(us(30)), us(125));
    }

    #[test]
    fn transmit_delay_timers_leave_receive_interrupts_immediate() {
        // em(4) of FreeBSD 6.2: RDTR 0, TIDV = TADV = 66 ticks of 1.024 us (67.584 us),
        // ITR 488 x 256 ns (124.928 us).
        let cfg = ModerationConfig {
            min_interval_ns: 124_928.0,
            tx_packet_timer_ns: 67_584.0,
            tx_absolute_timer_ns: 67_584.0,
            ..Default::default()
        };
        let mut m = Moderation::new(&cfg);
        let ns = |x: u64| SimTime(x * 1_000);
        // A completion at 10 us: TXDW at 10 + 67.584 us.
        m.tx_cause(ns(10_000));
        assert_eq!(m.fire_time(ns(10_000)), ns(77_584));
        // A second at 20 us restarts TIDV, but TADV still expires at 77.584 us.
        m.tx_cause(ns(20_000));
        assert_eq!(m.fire_time(ns(20_000)), ns(77_584));
        // A received frame meanwhile raises the interrupt at once (RDTR 0).
        m.packet(ns(30_000), 64);
        assert_eq!(m.fire_time(ns(30_000)), ns(30_000));
        m.asserted(ns(30_000));
        m.on_interrupt();
        // After it, a completion's TXDW waits for ITR: 30 + 124.928 us.
        m.tx_cause(ns(40_000));
        assert_eq!(m.fire_time(ns(40_000)), ns(154_928));
        // With only TIDV the timer restarts with every completion.
        let mut m = Moderation::new(&ModerationConfig {
            tx_packet_timer_ns: 67_584.0,
            ..Default::default()
        });
        m.tx_cause(ns(0));
        m.tx_cause(ns(50_000));
        assert_eq!(m.fire_time(ns(50_000)), ns(117_584));
    }
}
