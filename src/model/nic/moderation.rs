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
//! - `cq_period_ns` with `cq_period_mode` (mlx5's CQ moderation, `cq_period` and
//!   `cq_period_mode` of the CQ context; `packets` is its `cq_max_count`): in `"cqe"`
//!   mode (`MLX5_CQ_PERIOD_MODE_START_FROM_CQE`) the period restarts with every
//!   completion, so the event comes `cq_period_ns` after the last frame (the same rule
//!   as `packet_timer_ns`); in `"eqe"` mode (`MLX5_CQ_PERIOD_MODE_START_FROM_EQE`) it
//!   restarts when an event is generated, so a completion raises the event once
//!   `cq_period_ns` has passed since the last event: at once after a quiet period, and
//!   at most one event per period under load unless `packets` completions wait first
//!   (the count is not held back by the period). Source: the commit that added CQE mode
//!   to mlx5e, 9908aa292971 ("net/mlx5e: CQE based moderation", T. Toukan, 2016):
//!   "In this mode the moderation timer will restart upon new completion (CQE)
//!   generation rather than upon interrupt generation"; the modes' values in
//!   `include/linux/mlx5/mlx5_ifc.h` (`MLX5_CQ_PERIOD_MODE_START_FROM_EQE = 0x0`,
//!   `_CQE = 0x1`) and their choice in `mlx5e_build_nic_params` (`en_main.c` L4432-4439
//!   at 4.18: receive CQs in CQE mode when the device has `cq_period_start_from_cqe`,
//!   transmit CQs in EQE mode). DIM ([`crate::model::nic::dim`]) reprograms the same
//!   period and count;
//! - `adaptive: "dynamic-conservative"`: e1000's InterruptThrottleRate = 3: at every
//!   interrupt the traffic since the previous one is classed as lowest / low latency or
//!   bulk (e1000_update_itr) and the interval set to 20,000 or 4,000 interrupts/s
//!   ("conservative" never uses the 70,000/s lowest-latency rate), smoothed upwards by a
//!   quarter step as e1000_set_itr does. It replaces `min_interval_ns`.
//! - `adaptive: "ixgbe"`: ixgbe's dynamic ITR (`rx-usecs 1`, adaptive-rx on): after every
//!   NAPI poll that completes, `ixgbe_set_itr` recomputes the interval from the frames
//!   and bytes received since the last poll ([`crate::model::nic::ixgbe_itr`]); it
//!   replaces `min_interval_ns` (needs the `napi` policy, whose completions call it).
//!
//! With no threshold and no timer an interrupt is raised at once (subject to the
//! interval). Units: everything in ns; e1000 registers count 1.024 us (RDTR, RADV, TIDV,
//! TADV) and 256 ns (ITR: interval = ITR x 256 ns, 488 = 8,000/s). Defaults: all off.
//!
//! Counters: `raised` (interrupts the moderation let through), `suppressed` (receive
//! causes that did not raise an interrupt themselves but were folded into a later one).

use crate::model::nic::ixgbe_itr::IxgbeItr;
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
    /// ixgbe's dynamic ITR (its default `rx-usecs 1`, `ethtool -C <dev> adaptive-rx
    /// on`): the interval recomputed after every NAPI poll that completes
    /// (`ixgbe_set_itr`, [`crate::model::nic::ixgbe_itr`]), from 50 us at the start.
    Ixgbe,
}

pub use crate::model::nic::dim::CqPeriodMode;

/// Moderation parameters of a NIC.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModerationConfig {
    /// Frames that raise the interrupt at once (0 = off) \[frames\].
    #[serde(default)]
    pub packets: u32,
    /// Packet delay timer, restarted by every frame (RDTR; 0 = off) \[ns\].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub packet_timer_ns: f64,
    /// Absolute delay timer from the first frame (RADV; 0 = off) \[ns\].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub absolute_timer_ns: f64,
    /// Minimum time between two interrupts (ITR; 0 = off) \[ns\].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub min_interval_ns: f64,
    /// Transmit interrupt delay, restarted by every completion (TIDV; 0 = off: transmit
    /// causes follow the receive timers) \[ns\].
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub tx_packet_timer_ns: f64,
    /// Transmit absolute delay from the first completion since the last interrupt
    /// (TADV; 0 = off) \[ns\].
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub tx_absolute_timer_ns: f64,
    /// mlx5's CQ moderation period (`cq_period` of the CQ context), counted as
    /// `cq_period_mode` says (0 = off; default 0) \[ns\].
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub cq_period_ns: f64,
    /// When `cq_period_ns` restarts: `"cqe"` with every completion (the event comes the
    /// period after the last frame), `"eqe"` when an event is generated (the event comes
    /// once the period has passed since the last one). Required with `cq_period_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cq_period_mode: Option<CqPeriodMode>,
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
        p.time_ns("cq_period_ns", self.cq_period_ns);
        if self.packets > 0
            && self.packet_timer_ns <= 0.0
            && self.absolute_timer_ns <= 0.0
            && self.cq_period_ns <= 0.0
        {
            p.push("packets", "a packet threshold needs `packet_timer_ns`, `absolute_timer_ns` or `cq_period_ns`, or a lone frame would never raise an interrupt");
        }
        if self.cq_period_ns > 0.0 {
            if self.cq_period_mode.is_none() {
                p.push(
                    "cq_period_mode",
                    "`cq_period_ns` needs its mode: \"cqe\" (restarted by every completion) or \"eqe\" (restarted by every event)",
                );
            }
            if self.packet_timer_ns > 0.0 || self.absolute_timer_ns > 0.0 {
                p.push(
                    "cq_period_ns",
                    "an mlx5 CQ has one moderation timer: use `cq_period_ns` without `packet_timer_ns` and `absolute_timer_ns`",
                );
            }
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
    /// mlx5's period in EQE mode: from the last event (0 = off).
    eqe_period: SimTime,
    interval: SimTime,
    tidv: SimTime,
    tadv: SimTime,
    /// Transmit delay timers (TIDV, TADV) running: their expiry times.
    tx_timers: Option<(SimTime, SimTime)>,
    adaptive: Option<Adaptive>,
    class: Class,
    itr_per_s: f64,
    /// ixgbe's dynamic ITR, with the frames and bytes received since its last update
    /// and the kernel's clock tick (a jiffy).
    ixgbe: Option<(IxgbeItr, u32, u32, SimTime)>,
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
        // With ixgbe's dynamic ITR: the interval at the end \[us\] and how often an
        // update changed it.
        if let Some((x, _, _, _)) = &self.ixgbe {
            c.insert(
                format!("{nic}.moderation.itr_us"),
                x.interval_ns() as f64 / 1e3,
            );
            c.insert(format!("{nic}.moderation.itr_changes"), x.changes as f64);
        }
    }

    /// State from the configuration.
    pub fn new(cfg: &ModerationConfig) -> Moderation {
        let ixgbe = (cfg.adaptive == Some(Adaptive::Ixgbe))
            .then(|| (IxgbeItr::new(10e9), 0, 0, SimTime::from_ns_f64(1e6)));
        let (interval, itr) = match (cfg.adaptive, &ixgbe) {
            (Some(_), Some((x, _, _, _))) => (SimTime(x.interval_ns() * 1000), 0.0),
            (Some(_), None) => (SimTime::from_ns_f64(1e9 / 20_000.0), 20_000.0),
            (None, _) => (SimTime::from_ns_f64(cfg.min_interval_ns), 0.0),
        };
        // mlx5's CQE mode is the restarting packet timer; its EQE mode counts from the
        // last event.
        let cq_period = SimTime::from_ns_f64(cfg.cq_period_ns);
        let (rdtr, eqe_period) = match cfg.cq_period_mode {
            _ if cfg.cq_period_ns <= 0.0 => {
                (SimTime::from_ns_f64(cfg.packet_timer_ns), SimTime::ZERO)
            }
            Some(CqPeriodMode::Eqe) => (SimTime::ZERO, cq_period),
            Some(CqPeriodMode::Cqe) | None => (cq_period, SimTime::ZERO),
        };
        Moderation {
            threshold: cfg.packets,
            rdtr,
            radv: SimTime::from_ns_f64(cfg.absolute_timer_ns),
            eqe_period,
            interval,
            tidv: SimTime::from_ns_f64(cfg.tx_packet_timer_ns),
            tadv: SimTime::from_ns_f64(cfg.tx_absolute_timer_ns),
            tx_timers: None,
            adaptive: cfg.adaptive,
            class: Class::Low,
            itr_per_s: itr,
            ixgbe,
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

    /// The driver programs a new profile (DIM's work item, `mlx5e_modify_cq_moderation`):
    /// interrupt at `pkts` frames, or `usecs` after the last frame (`restart_per_frame`:
    /// CQE mode, RDTR-like) or after the last event (EQE mode). Takes effect from the
    /// next frame.
    pub fn program(&mut self, usecs: u16, pkts: u16, restart_per_frame: bool) {
        let t = SimTime::from_ns_f64(usecs as f64 * 1e3);
        self.threshold = pkts as u32;
        self.radv = SimTime::ZERO;
        (self.rdtr, self.eqe_period) = if restart_per_frame {
            (t, SimTime::ZERO)
        } else {
            (SimTime::ZERO, t)
        };
    }

    /// A frame arrived.
    pub fn packet(&mut self, now: SimTime, bytes: u32) {
        self.count += 1;
        self.bytes += bytes as u64;
        if let Some((_, n, b, _)) = &mut self.ixgbe {
            *n = n.saturating_add(1);
            *b = b.saturating_add(bytes);
        }
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
        if self.eqe_period > SimTime::ZERO {
            // mlx5 EQE mode: the period restarted at the last event; a completion after
            // it has run out raises the event at once.
            earliest(self.last_irq.map_or(now, |l| l + self.eqe_period));
        }
        let t = if self.threshold == 0
            && self.rdtr == SimTime::ZERO
            && self.radv == SimTime::ZERO
            && self.eqe_period == SimTime::ZERO
        {
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
        if self.adaptive == Some(Adaptive::DynamicConservative) {
            self.adapt(self.count, self.bytes);
        }
        self.count = 0;
        self.bytes = 0;
        self.first = None;
        self.tx_timers = None;
        self.timer.cancel();
    }

    /// The link's rate \[bit/s\] and the kernel's clock tick (`1 / kernel.clock.hz`),
    /// for ixgbe's dynamic ITR (its size scaling differs at 1 and 2.5 Gbit/s; its
    /// counts go stale after a jiffy).
    pub fn set_ixgbe_clock(&mut self, bps: f64, jiffy: SimTime) {
        if let Some((x, _, _, j)) = &mut self.ixgbe {
            x.slow_link = IxgbeItr::new(bps).slow_link;
            *j = jiffy;
        }
    }

    /// A NAPI poll of the queue completed at `now` (before its interrupt is
    /// re-enabled): ixgbe's dynamic ITR (`ixgbe_poll` -> `ixgbe_set_itr`) recomputes
    /// the interval from the frames and bytes received since the last poll. Nothing
    /// without it.
    pub fn poll_completed(&mut self, now: SimTime) {
        let Some((x, n, b, jiffy)) = &mut self.ixgbe else {
            return;
        };
        x.set_itr(now.0 / jiffy.0.max(1), *n, *b);
        (*n, *b) = (0, 0);
        self.interval = SimTime(x.interval_ns() * 1000);
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

    /// Runs `arrivals` (frame times, increasing) through `m` with a handler that takes
    /// each interrupt the instant it is raised (no CPU time) and returns the interrupt
    /// times: a frame raises its interrupt at once when it is due at its arrival;
    /// otherwise the pending cause raises it at its fire time if that comes before the
    /// next frame (which may change it).
    fn interrupts(m: &mut Moderation, arrivals: &[SimTime]) -> Vec<SimTime> {
        let mut out = Vec::new();
        let mut pending: Option<SimTime> = None;
        let raise = |m: &mut Moderation, at: SimTime, out: &mut Vec<SimTime>| {
            m.asserted(at);
            m.on_interrupt();
            out.push(at);
        };
        for &t in arrivals {
            if let Some(last) = pending {
                let due = m.fire_time(last);
                if due < t {
                    raise(m, due, &mut out);
                }
            }
            m.packet(t, 64);
            if m.fire_time(t) <= t {
                raise(m, t, &mut out);
                pending = None;
            } else {
                pending = Some(t);
            }
        }
        if let Some(last) = pending {
            let due = m.fire_time(last);
            raise(m, due, &mut out);
        }
        out
    }

    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn mlx5_cqe_mode_waits_for_a_quiet_period_and_eqe_mode_counts_from_the_last_event() {
        // Frames at 0, 2, 4 us (a burst) and at 20 us, a CQ period of 8 us, no count.
        let arrivals = [us(0), us(2), us(4), us(20)];
        let cfg = |mode| ModerationConfig {
            cq_period_ns: 8_000.0,
            cq_period_mode: Some(mode),
            ..Default::default()
        };
        // CQE mode (the period restarts with each completion): the burst's event comes
        // 8 us after its last frame, 4 + 8 = 12 us; the lone frame's 8 us after it,
        // 20 + 8 = 28 us.
        let mut m = Moderation::new(&cfg(CqPeriodMode::Cqe));
        assert_eq!(interrupts(&mut m, &arrivals), vec![us(12), us(28)]);
        // EQE mode (the period restarts at each event): no event yet, so the first frame
        // raises one at once (0 us); the frames at 2 and 4 us wait for the period from
        // that event, 0 + 8 = 8 us; at 20 us the period from 8 us ran out at 16 us, so
        // the lone frame raises its event at once.
        let mut m = Moderation::new(&cfg(CqPeriodMode::Eqe));
        assert_eq!(interrupts(&mut m, &arrivals), vec![us(0), us(8), us(20)]);
        // The count (cq_max_count) is not held back by the EQE period: with 2 frames
        // the second frame of the burst (2 us) raises the event, where an interrupt
        // interval (ITR, `min_interval_ns`) of 8 us would hold it to 8 us.
        let mut m = Moderation::new(&ModerationConfig {
            packets: 2,
            ..cfg(CqPeriodMode::Eqe)
        });
        assert_eq!(
            interrupts(&mut m, &[us(0), us(2), us(3)]),
            vec![us(0), us(3)]
        );
    }

    #[test]
    fn dim_programs_the_period_in_the_cqs_mode() {
        // DIM's CQE profile 1 (8 us, 128) and EQE profile 1 (8 us, 256), programmed
        // over a static 3 us CQE period: the same burst as above gives the same times
        // as a static 8 us period in each mode.
        let arrivals = [us(0), us(2), us(4), us(20)];
        let stat = ModerationConfig {
            packets: 32,
            cq_period_ns: 3_000.0,
            cq_period_mode: Some(CqPeriodMode::Cqe),
            ..Default::default()
        };
        let mut m = Moderation::new(&stat);
        m.program(8, 128, true);
        assert_eq!(interrupts(&mut m, &arrivals), vec![us(12), us(28)]);
        let mut m = Moderation::new(&stat);
        m.program(8, 256, false);
        assert_eq!(interrupts(&mut m, &arrivals), vec![us(0), us(8), us(20)]);
    }

    #[test]
    fn the_itr_interval_is_a_rate_limit_not_a_delay() {
        // ixgbe's starting EITR: IXGBE_20K_ITR = 200, microseconds shifted left by 2
        // (ixgbe.h), 50 us: at most 1 / 50 us = 20,000 interrupts/s.
        let cfg = ModerationConfig {
            min_interval_ns: 50_000.0,
            ..Default::default()
        };
        // A frame every microsecond for 1 ms (0 to 999 us): interrupts at 0, 50, ...,
        // 950 us, 20 of them within the millisecond (1 ms x 20,000/s), each as soon as
        // the interval since the last ran out, a frame always waiting; the frames after
        // 950 us raise one more at 1,000 us.
        let arrivals: Vec<SimTime> = (0..1_000).map(us).collect();
        let mut m = Moderation::new(&cfg);
        let got = interrupts(&mut m, &arrivals);
        let want: Vec<SimTime> = (0..=20).map(|k| us(50 * k)).collect();
        assert_eq!(got, want);
        assert_eq!(got.iter().filter(|&&t| t < us(1_000)).count(), 20);
        // A lone frame long after the last interrupt is not delayed: 10 us and 200 us,
        // 190 us apart (> 50 us), each interrupt at its frame.
        let mut m = Moderation::new(&cfg);
        assert_eq!(
            interrupts(&mut m, &[us(10), us(200)]),
            vec![us(10), us(200)]
        );
    }

    #[test]
    fn a_cq_period_needs_its_mode_and_no_intel_timer() {
        let mut p = Problems::default();
        ModerationConfig {
            cq_period_ns: 3_000.0,
            ..Default::default()
        }
        .validate(&mut p);
        ModerationConfig {
            packets: 32,
            cq_period_ns: 3_000.0,
            cq_period_mode: Some(CqPeriodMode::Cqe),
            packet_timer_ns: 3_000.0,
            ..Default::default()
        }
        .validate(&mut p);
        let text = format!("{:?}", p.list);
        assert_eq!(p.list.len(), 2, "{text}");
        assert!(text.contains("cq_period_mode"), "{text}");
        assert!(text.contains("one moderation timer"), "{text}");
        let mut ok = Problems::default();
        ModerationConfig {
            packets: 32,
            cq_period_ns: 3_000.0,
            cq_period_mode: Some(CqPeriodMode::Cqe),
            ..Default::default()
        }
        .validate(&mut ok);
        assert!(ok.is_empty(), "{:?}", ok.list);
    }

    /// ixgbe's dynamic ITR in the moderation: 50 us at the start (IXGBE_20K_ITR); after
    /// a poll that completes with 300 frames of 64 bytes received since the last, 22 us
    /// (ixgbe_update_itr's bulk branch, worked in `ixgbe_itr`'s test); the counts
    /// start again from zero, and an idle poll more than a jiffy later goes stale: the
    /// interval becomes 10 us. e1000's per-interrupt adaptation does not run with it.
    #[test]
    fn ixgbe_dynamic_itr_is_recomputed_at_each_completed_poll() {
        let cfg = ModerationConfig {
            adaptive: Some(Adaptive::Ixgbe),
            ..ModerationConfig::default()
        };
        let mut ok = Problems::new();
        cfg.validate(&mut ok);
        assert!(ok.is_empty(), "{:?}", ok.list);
        let mut m = Moderation::new(&cfg);
        m.set_ixgbe_clock(10e9, SimTime::from_ns_f64(1e6));
        assert_eq!(m.interval, SimTime::from_ns_f64(50_000.0));
        for k in 0..300 {
            m.packet(SimTime::from_ns_f64(k as f64 * 10.0), 64);
        }
        m.on_interrupt();
        assert_eq!(m.interval, SimTime::from_ns_f64(50_000.0));
        m.poll_completed(SimTime::from_ns_f64(5_000.0));
        assert_eq!(m.interval, SimTime::from_ns_f64(22_000.0));
        assert_eq!(m.ixgbe.as_ref().map(|x| (x.1, x.2)), Some((0, 0)));
        m.poll_completed(SimTime::from_ns_f64(3_000_000.0));
        assert_eq!(m.interval, SimTime::from_ns_f64(10_000.0));
        let mut c = std::collections::BTreeMap::new();
        m.counters("eth0", &mut c);
        assert_eq!(
            (
                c["eth0.moderation.itr_us"],
                c["eth0.moderation.itr_changes"]
            ),
            (10.0, 2.0)
        );
        // Refused with a fixed interval as well.
        let mut p = Problems::new();
        ModerationConfig {
            min_interval_ns: 8_000.0,
            ..cfg
        }
        .validate(&mut p);
        assert_eq!(p.list.len(), 1, "{:?}", p.list);
    }
}
