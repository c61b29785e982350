//! CPU idle states (cpuidle) and the governor that picks one for each idle period.
//!
//! Models what Linux does when a core has nothing to run (`do_idle` ->
//! `cpuidle_idle_call`, kernel/sched/idle.c): the governor predicts how long the core
//! will stay idle and picks the deepest enabled state whose target residency fits that
//! prediction and whose exit latency fits the latency limits; the core sleeps in that
//! state until an interrupt (or the tick) wakes it, and the first instruction of the
//! handler runs only after the state's **exit latency**. A core that is never idle
//! never pays it; a core that goes idle between every two frames pays it on every
//! frame: the mechanism that makes a host slower at low rate than under load.
//!
//! The governor is Linux's **menu** governor (drivers/cpuidle/governors/menu.c, the
//! default of tickless kernels, the modelled 4.18 among them; teo, added in 5.1, must
//! be chosen), followed line by line as of v4.18 (docs/model.md, "Idle states", lists
//! every simplification): `menu_select` (the correction factor per bucket of the next
//! timer's distance, the repeating-interval detector over the last 8 idle periods,
//! `get_typical_interval`, the search from C1 unless a timer is due very soon
//! (`first_idx`), the performance multiplier with no I/O waiters, the latency limit,
//! the choice of state and whether the tick is stopped, the retreat to a state whose
//! target residency fits before the next tick when the tick is kept, and the stopped
//! tick's branch that replaces a short prediction by the next timer's distance), and
//! `menu_update` (the measured residency less the exit latency, the correction
//! factor's running average with decay 8, the interval history). When the tick is kept
//! and the core is still idle at the next tick, the tick wakes it and the governor
//! selects again (as `do_idle` loops); the tick's own CPU time is not modelled (as
//! `kernel.clock` says for these hosts), nor the exit latency of a wake-up by the tick
//! (the core is idle either way). A stopped tick stays stopped across wake-ups that
//! only run interrupts and softirqs (handled inside the idle loop) until the core runs
//! a task ([`Idle::restart_tick`], `tick_nohz_idle_exit`).
//!
//! Simplifications, each stated: the next timer event with the tick stopped
//! (`tick_nohz_get_sleep_length`) is a constant, `next_timer_us`, since irqsim models
//! no kernel timer on these cores but the tick (an estimate: see its doc); no task
//! waits for I/O (the performance multiplier is 1); only the tasks the model runs
//! restart a stopped tick (a real host's kworkers and daemons do too, now and then);
//! the polling state has no time limit
//! (`poll_idle`'s limit only matters when POLL is chosen for long idle periods, which
//! menu avoids unless the latency limit forces it); the exit latency charged is the
//! table's `exit_latency`, the figure the driver declares and the governor uses (an
//! upper bound: a measured exit is often shorter, so the model errs toward slow wakes).
//!
//! A state that flushes the core's caches (Intel's core C3 and C6) leaves the first work
//! after the wake-up **cold**: it refetches its code and data from the L3, CPU time the
//! model adds to that work as `cache_refill_ns` (a figure per model, since it depends
//! on the work's footprint; an estimate where no measurement exists).
//!
//! Parameters ([`IdleConfig`], a model's `cpu.idle`): `states` (name, `exit_latency_us`,
//! `target_residency_us`, `polling`, `flushes_caches`), shallowest first as the driver
//! registers them (cpuidle's POLL first on x86); `governor` ("menu");
//! `cache_refill_ns` (default 0); the knobs users set:
//! `max_cstate` (`intel_idle.max_cstate=N` / `processor.max_cstate=N`: only the first N
//! states after POLL are registered), `disable` (`.../cpuidle/stateK/disable`),
//! `idle_poll` (`idle=poll`: the core polls and never sleeps), `latency_limit_us` (a PM
//! QoS CPU latency request, `/dev/cpu_dma_latency`), and `next_timer_us`.
//!
//! Counters (per state, as `/sys/devices/system/cpu/cpuN/cpuidle/stateK/{usage,time}`):
//! entries and residency \[ps\]; wake-ups by work and the exit latency they paid \[ps\];
//! wake-ups with cold caches and the refill time they paid \[ps\].

use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// One idle state, as the cpuidle driver declares it (`struct cpuidle_state`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdleStateConfig {
    /// The state's name as `/sys/.../cpuidle/stateK/name` shows it (`POLL`, `C1`, `C1E`,
    /// `C6`, ...).
    #[schemars(length(min = 1, max = 16))]
    pub name: String,
    /// Worst-case time from the wake-up event to the first instruction \[us\]
    /// (`exit_latency`), 0 to 100,000.
    #[schemars(range(max = 100_000))]
    pub exit_latency_us: u32,
    /// Shortest stay for which the state saves energy \[us\] (`target_residency`), 0 to
    /// 1,000,000.
    #[schemars(range(max = 1_000_000))]
    pub target_residency_us: u32,
    /// The state polls instead of halting (`CPUIDLE_FLAG_POLLING`, cpuidle's POLL
    /// state) (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub polling: bool,
    /// The core's own caches are flushed on entry (default false): Intel's core C3 and
    /// C6 write back and empty the L1 instruction and data caches and the L2 into the
    /// shared L3 (the processor datasheets' "Core C-states" sections), and intel_idle
    /// marks the same states `CPUIDLE_FLAG_TLB_FLUSHED` (the TLBs are lost too). The
    /// first work after a wake-up from such a state pays the model's
    /// `cache_refill_ns` on top of its warm cost.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flushes_caches: bool,
}

/// The idle governor.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum GovernorKind {
    /// drivers/cpuidle/governors/menu.c.
    #[default]
    Menu,
}

/// A core's idle states and governor (`cpu.idle`; none by default: an idle core wakes
/// at once, as the FreeBSD models' HLT with no exit latency).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdleConfig {
    /// The states, shallowest first, as the driver registers them (at most 10:
    /// CPUIDLE_STATE_MAX). Required, at least one.
    #[schemars(length(min = 1, max = 10))]
    pub states: Vec<IdleStateConfig>,
    /// The governor (default "menu").
    #[serde(default)]
    pub governor: GovernorKind,
    /// `intel_idle.max_cstate=N` (or `processor.max_cstate=N` for acpi_idle): only the
    /// first N states after the polling state are used (default: all). 0 is refused:
    /// with intel_idle it hands the CPU to acpi_idle, whose table the model should give
    /// as `states` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_cstate: Option<u8>,
    /// States disabled by name (`echo 1 > /sys/devices/system/cpu/cpuN/cpuidle/stateK/
    /// disable`) (default none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disable: Vec<String>,
    /// `idle=poll` on the kernel command line: the core spins in the idle loop and
    /// never enters an idle state, so a wake-up costs nothing (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle_poll: bool,
    /// A PM QoS CPU latency limit \[us\] (a process holding `/dev/cpu_dma_latency`
    /// open with this value, as tuned's latency-performance profile does): no state
    /// with a longer exit latency is chosen; 0 keeps the core in the polling state
    /// (default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit_us: Option<u32>,
    /// The distance to the next timer event with the tick stopped \[us\], what
    /// `tick_nohz_get_sleep_length` returns; irqsim models no kernel timer on these
    /// cores but the tick, so it is a constant, 1 to 10,000,000 and more than one tick
    /// (1,000 us at HZ 1000: a model's validation checks it against `kernel.clock.hz`)
    /// (default 100,000: an estimate of an idle server core's timer wheel; it shapes
    /// the split of idle time between states at low load: docs/model.md).
    #[serde(default = "d_next_timer_us")]
    #[schemars(range(min = 1, max = 10_000_000))]
    pub next_timer_us: u32,
    /// CPU time the first work after a wake-up from a state that `flushes_caches` takes
    /// beyond its warm cost, refetching its code and data from the L3 \[ns\], 0 to
    /// 1,000,000 (default 0: not modelled). It depends on the work's footprint, not on
    /// the state, so it is one figure per model; it is CPU time (busy, at the level of
    /// that first work), not exit latency (idle).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    #[schemars(range(max = 1_000_000))]
    pub cache_refill_ns: u32,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn d_next_timer_us() -> u32 {
    100_000
}

impl IdleConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        if self.states.is_empty() || self.states.len() > 10 {
            p.push(
                "states",
                format!(
                    "must list 1 to 10 states (CPUIDLE_STATE_MAX), got {}",
                    self.states.len()
                ),
            );
        }
        for (i, s) in self.states.iter().enumerate() {
            if s.name.is_empty()
                || s.name.len() > 16
                || !s.name.chars().all(|c| c.is_ascii_graphic())
            {
                p.push(
                    &format!("states[{i}].name"),
                    "must be 1 to 16 printable ASCII characters (CPUIDLE_NAME_LEN)".to_string(),
                );
            }
            if s.exit_latency_us > 100_000 {
                p.push(
                    &format!("states[{i}].exit_latency_us"),
                    format!("must be at most 100,000 us, got {}", s.exit_latency_us),
                );
            }
            if s.target_residency_us > 1_000_000 {
                p.push(
                    &format!("states[{i}].target_residency_us"),
                    format!(
                        "must be at most 1,000,000 us, got {}",
                        s.target_residency_us
                    ),
                );
            }
            if s.polling && s.flushes_caches {
                p.push(
                    &format!("states[{i}].flushes_caches"),
                    "a polling state keeps the core running (C0): it cannot flush its caches"
                        .to_string(),
                );
            }
            if self.states[..i].iter().any(|o| o.name == s.name) {
                p.push(
                    &format!("states[{i}].name"),
                    format!("'{}' is listed twice", s.name),
                );
            }
        }
        if self.max_cstate == Some(0) {
            p.push(
                "max_cstate",
                "0 disables intel_idle and hands the CPU to acpi_idle: give acpi_idle's \
                 states (the firmware's _CST table) as `states` instead"
                    .to_string(),
            );
        }
        for (i, d) in self.disable.iter().enumerate() {
            if !self.states.iter().any(|s| &s.name == d) {
                p.push(
                    &format!("disable[{i}]"),
                    format!(
                        "no state named '{d}' (states: {})",
                        self.states
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
        if self.cache_refill_ns > 1_000_000 {
            p.push(
                "cache_refill_ns",
                format!("must be at most 1,000,000 ns, got {}", self.cache_refill_ns),
            );
        }
        if self.cache_refill_ns > 0 && !self.states.iter().any(|s| s.flushes_caches) {
            p.push(
                "cache_refill_ns",
                "no state has `flushes_caches`: the refill would never be paid (mark the \
                 states that flush the core's caches, e.g. Intel's C3 and C6)"
                    .to_string(),
            );
        }
        if !(1..=10_000_000).contains(&self.next_timer_us) {
            p.push(
                "next_timer_us",
                format!("must be 1 to 10,000,000 us, got {}", self.next_timer_us),
            );
        }
    }
}

/// menu.c's constants.
const BUCKETS: usize = 12;
const INTERVALS: usize = 8;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
const MAX_INTERESTING: u64 = 50_000;
/// Tick wake-ups followed in one idle period, after which the rest of it is booked to
/// the last state without further selections (a bound on the work of one wake-up; menu
/// stops the tick within a few ticks, since a tick wake-up counts as 45 ms of idleness,
/// unless a latency limit keeps it running).
const MAX_TICK_WAKES: u32 = 64;

/// One state as the governor sees it.
#[derive(Clone, Debug)]
struct State {
    exit_us: u64,
    target_us: u64,
    polling: bool,
    enabled: bool,
    flushes: bool,
}

/// The menu governor's per-core state, the core's states, and their counters.
#[derive(Clone, Debug)]
pub struct Idle {
    states: Vec<State>,
    names: Vec<String>,
    /// Every idle period in the polling state, no governor (`idle=poll`).
    poll_only: bool,
    /// PM QoS limit \[us\] (`PM_QOS_CPU_DMA_LAT_DEFAULT_VALUE`, 2,000 s, when none).
    latency_req_us: u64,
    next_timer_us: u64,
    /// The tick period \[ps\] and \[us\].
    tick_ps: u64,
    tick_us: u64,
    /// The tick is stopped (see [`Idle::tick_stopped`]); it runs at time 0.
    tick_stopped: bool,
    correction_factor: [u64; BUCKETS],
    intervals: [u64; INTERVALS],
    interval_ptr: usize,
    /// Entries per state -- counter (`stateK/usage`).
    pub usage: Vec<u64>,
    /// Residency per state \[ps\] -- counter (`stateK/time`, of the periods that ended;
    /// a period ended by work holds the exit latency its wake-up paid, as
    /// cpuidle_enter_state measures it).
    pub time_ps: Vec<u64>,
    /// Wake-ups by work (not by the tick) -- counter.
    pub wakeups: u64,
    /// Exit latency paid by those wake-ups \[ps\] -- counter.
    pub exit_ps: u64,
    /// The refill cost of a wake-up from a state that flushes the core's caches \[ps\].
    refill_ps: u64,
    /// Wake-ups by work from a state that flushed the core's caches -- counter.
    pub cold_wakeups: u64,
    /// CPU time those wake-ups' first work spent refilling the caches \[ps\] -- counter.
    pub cache_refill_ps: u64,
}

/// What a wake-up by work costs: the exit latency before the first instruction (idle
/// time) and the cache refill added to the first work (CPU time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WakeCost {
    /// The state's exit latency.
    pub exit: SimTime,
    /// The cold caches' extra CPU time ([`IdleConfig::cache_refill_ns`]), or zero.
    pub refill: SimTime,
}

/// A selection: the state, and whether the tick keeps running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Selection {
    idx: usize,
    stop_tick: bool,
}

impl Idle {
    /// The governor for `cfg` on a kernel whose tick runs at `hz`.
    pub fn new(cfg: &IdleConfig, hz: u32) -> Idle {
        let mut after_poll = 0u32;
        let states = cfg
            .states
            .iter()
            .map(|s| {
                let within_max = if s.polling {
                    true
                } else {
                    after_poll += 1;
                    cfg.max_cstate.is_none_or(|m| after_poll <= u32::from(m))
                };
                State {
                    exit_us: u64::from(s.exit_latency_us),
                    target_us: u64::from(s.target_residency_us),
                    polling: s.polling,
                    enabled: within_max && !cfg.disable.contains(&s.name),
                    flushes: s.flushes_caches,
                }
            })
            .collect::<Vec<_>>();
        let n = states.len();
        let tick_ps = 1_000_000_000_000 / u64::from(hz.max(1));
        Idle {
            states,
            names: cfg.states.iter().map(|s| s.name.clone()).collect(),
            poll_only: cfg.idle_poll,
            latency_req_us: cfg.latency_limit_us.map_or(2_000_000_000, u64::from),
            next_timer_us: u64::from(cfg.next_timer_us),
            tick_ps,
            tick_us: tick_ps / 1_000_000,
            tick_stopped: false,
            correction_factor: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
            usage: vec![0; n],
            time_ps: vec![0; n],
            wakeups: 0,
            exit_ps: 0,
            refill_ps: u64::from(cfg.cache_refill_ns) * 1_000,
            cold_wakeups: 0,
            cache_refill_ps: 0,
        }
    }

    /// Whether a wake-up can pay a cache refill (a refill cost and a state that
    /// flushes the core's caches).
    pub fn refills(&self) -> bool {
        self.refill_ps > 0 && self.states.iter().any(|s| s.flushes)
    }

    /// The states' names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether the tick is stopped (`tick_nohz_tick_stopped`): it stops when the
    /// governor says so at an idle entry and stays stopped across wake-ups that only run
    /// interrupts and softirqs, since the idle loop (`do_idle`) does not exit for them.
    pub fn tick_stopped(&self) -> bool {
        self.tick_stopped
    }

    /// The core left the idle loop to run a task (a kernel thread or a process):
    /// `tick_nohz_idle_exit` restarts the tick, so the next idle entry finds it running.
    #[inline]
    pub fn restart_tick(&mut self) {
        self.tick_stopped = false;
    }

    /// The core went idle at `since` and work wakes it at `now`: follow the governor
    /// through the period (selecting at entry, and again at each tick that wakes the
    /// core while the tick runs) and return the exit latency of the state the core is in
    /// at `now`, which the work's first instruction waits for, and the cache refill the
    /// first work pays if a state of the period flushed the core's caches (one entered
    /// before a tick wake-up leaves them cold too: the tick's handler touches little of
    /// the network path's code and data).
    pub fn wake(&mut self, since: SimTime, now: SimTime) -> WakeCost {
        self.period(since, now, true)
    }

    /// The residencies of an idle period from `since` still open at `now`, booked as
    /// [`Idle::wake`] would book them but without the exit latency, which the core has
    /// not paid yet (for counters read mid-period; call it on a copy).
    pub fn book_open(&mut self, since: SimTime, now: SimTime) {
        self.period(since, now, false);
    }

    fn period(&mut self, since: SimTime, now: SimTime, ended: bool) -> WakeCost {
        self.wakeups += 1;
        if self.poll_only {
            return WakeCost::default();
        }
        let mut t = since.0;
        let end = now.0.max(t);
        let mut ticks = 0;
        let mut cold = false;
        loop {
            let to_tick_ps = self.tick_ps - t % self.tick_ps;
            let sel = self.select(to_tick_ps / 1_000_000);
            let idx = sel.idx;
            self.usage[idx] += 1;
            cold |= self.states[idx].flushes;
            // cpuidle_idle_call: `if (stop_tick || tick_nohz_tick_stopped())
            // tick_nohz_idle_stop_tick()`, which stops it only when no timer falls within
            // the next tick (tick_nohz_next_event).
            if sel.stop_tick && !self.tick_stopped && self.next_timer_us > self.tick_us {
                self.tick_stopped = true;
            }
            let tick_at = t + to_tick_ps;
            if !self.tick_stopped && tick_at < end && ticks < MAX_TICK_WAKES {
                // The tick wakes the core; it finds nothing to run and selects again.
                ticks += 1;
                self.time_ps[idx] += tick_at - t;
                self.update(idx, (tick_at - t) / 1_000_000, true);
                t = tick_at;
                continue;
            }
            let exit_us = self.states[idx].exit_us;
            let exit = SimTime(exit_us * 1_000_000);
            // cpuidle_enter_state (drivers/cpuidle/cpuidle.c, v4.18 L227-261): the
            // residency is `time_end - time_start`, read by local_clock() before the
            // state's enter and after it returns, so it holds the exit latency too;
            // `stateK/time` adds it whole, and menu_update takes it off again.
            self.time_ps[idx] += end - t + if ended { exit.0 } else { 0 };
            self.update(idx, (end - t) / 1_000_000 + exit_us, false);
            self.exit_ps += exit.0;
            let refill = if cold && self.refill_ps > 0 {
                self.cold_wakeups += 1;
                self.cache_refill_ps += self.refill_ps;
                SimTime(self.refill_ps)
            } else {
                SimTime::ZERO
            };
            return WakeCost { exit, refill };
        }
    }

    /// `menu_select` of Linux 4.18 (drivers/cpuidle/governors/menu.c at v4.18, read in
    /// linux-source-4.18.0), line by line, with `to_tick_us` the time to the next tick
    /// (`delta_next` while the tick runs; with it stopped, `delta_next` is the next
    /// timer's distance), no task waiting for I/O and no runnable load (the
    /// performance multiplier is 1).
    fn select(&self, to_tick_us: u64) -> Selection {
        let s = &self.states;
        let stopped = self.tick_stopped;
        let tick_us = self.tick_us;
        let mut latency_req = self.latency_req_us;
        // "Special case when user has set very strict latency requirement".
        if latency_req == 0 {
            return Selection {
                idx: 0,
                stop_tick: false,
            };
        }
        let next_timer_us = self.next_timer_us;
        let delta_next_us = if stopped {
            next_timer_us
        } else {
            to_tick_us.min(next_timer_us)
        };
        let bucket = which_bucket(next_timer_us);
        let mut predicted_us = (next_timer_us * self.correction_factor[bucket]
            + RESOLUTION * DECAY / 2)
            / (RESOLUTION * DECAY);
        let expected = self.typical_interval().min(next_timer_us);
        // Default to C1, not to polling, unless a timer is due really soon or C1's exit
        // latency exceeds the limit (first_idx).
        let mut first_idx = 0;
        if s[0].polling
            && let Some(c1) = s.get(1)
            && next_timer_us > c1.target_us.max(20)
            && latency_req > c1.exit_us
            && c1.enabled
        {
            first_idx = 1;
        }
        predicted_us = predicted_us.min(expected);
        if stopped {
            // With the tick stopped a short misprediction could leave the core in a
            // shallow state for long: the known time to the next timer decides.
            if predicted_us < tick_us {
                predicted_us = delta_next_us;
            }
        } else {
            latency_req = latency_req.min(predicted_us);
        }
        let mut expected_us = predicted_us;
        let mut idx: Option<usize> = None;
        for (i, st) in s.iter().enumerate().skip(first_idx) {
            if !st.enabled {
                continue;
            }
            let cur = *idx.get_or_insert(i);
            if st.target_us > predicted_us {
                if predicted_us < tick_us {
                    break;
                }
                if !stopped {
                    // A shallow state so far: keep the tick and select again at it.
                    expected_us = s[cur].target_us;
                    break;
                }
                // The tick is stopped: take this state if the one so far is shallow and
                // this one fits before the next timer (`goto out`, tick left stopped).
                let mut idx = cur;
                if s[cur].target_us < tick_us && st.target_us <= delta_next_us {
                    idx = i;
                }
                return Selection {
                    idx,
                    stop_tick: true,
                };
            }
            if st.exit_us > latency_req {
                // Stopped on the latency limit: the chosen state's target residency is
                // the expected idle duration (the tick is kept if it is short).
                expected_us = s[cur].target_us;
                break;
            }
            idx = Some(i);
        }
        let mut idx = idx.unwrap_or(0);
        let mut stop_tick = true;
        if (s[idx].polling || expected_us < tick_us) && !stopped {
            stop_tick = false;
            if idx > 0 && s[idx].target_us > delta_next_us {
                for i in (0..idx).rev() {
                    if !s[i].enabled {
                        continue;
                    }
                    idx = i;
                    if s[i].target_us <= delta_next_us {
                        break;
                    }
                }
            }
        }
        Selection { idx, stop_tick }
    }

    /// `get_typical_interval`: the average of the last 8 idle periods when they are
    /// regular enough (stddev <= 20 us, or avg > 6 stddev with at least 6 of them),
    /// discarding the largest ones down to 3/4 of them; `u64::MAX` otherwise.
    fn typical_interval(&self) -> u64 {
        let mut thresh = u64::MAX;
        loop {
            let (mut max, mut sum, mut divisor) = (0u64, 0u64, 0u64);
            for &v in &self.intervals {
                if v <= thresh {
                    sum += v;
                    divisor += 1;
                    max = max.max(v);
                }
            }
            let avg = sum / divisor;
            let mut variance = 0u64;
            for &v in &self.intervals {
                if v <= thresh {
                    let d = v.abs_diff(avg);
                    variance = variance.saturating_add(d.saturating_mul(d));
                }
            }
            variance /= divisor;
            if variance <= u64::MAX / 36
                && ((avg.saturating_mul(avg) > variance * 36
                    && divisor * 4 >= INTERVALS as u64 * 3)
                    || variance <= 400)
            {
                return avg;
            }
            if divisor * 4 <= INTERVALS as u64 * 3 {
                return u64::MAX;
            }
            thresh = max - 1;
        }
    }

    /// `menu_update` after a period of `residency_us` (exit latency included) in state
    /// `idx`, ended by the tick or by work.
    fn update(&mut self, idx: usize, residency_us: u64, tick_wakeup: bool) {
        let next_timer_us = self.next_timer_us;
        let mut measured_us = if tick_wakeup && next_timer_us > self.tick_us {
            9 * MAX_INTERESTING / 10
        } else {
            let exit = self.states[idx].exit_us;
            if residency_us > 2 * exit {
                residency_us - exit
            } else {
                residency_us / 2
            }
        };
        measured_us = measured_us.min(next_timer_us);
        let bucket = which_bucket(next_timer_us);
        let mut f = self.correction_factor[bucket];
        f -= f / DECAY;
        if next_timer_us > 0 && measured_us < MAX_INTERESTING {
            f += RESOLUTION * measured_us / next_timer_us;
        } else {
            f += RESOLUTION;
        }
        self.correction_factor[bucket] = f;
        self.intervals[self.interval_ptr] = measured_us;
        self.interval_ptr = (self.interval_ptr + 1) % INTERVALS;
    }
}

/// `which_bucket` with no I/O waiters.
fn which_bucket(duration_us: u64) -> usize {
    match duration_us {
        0..10 => 0,
        10..100 => 1,
        100..1_000 => 2,
        1_000..10_000 => 3,
        10_000..100_000 => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// intel_idle's bdw_cstates (C1 2/2, C1E 10/20, C3 40/100, C6 133/400 us) after
    /// cpuidle's POLL, the table of the E5-1650 v4 (see the model's notes).
    fn bdw() -> IdleConfig {
        let st = |name: &str, exit, target, polling| IdleStateConfig {
            name: name.into(),
            exit_latency_us: exit,
            target_residency_us: target,
            polling,
            // Core C3 and C6 flush the core's caches (intel_idle: CPUIDLE_FLAG_TLB_FLUSHED).
            flushes_caches: exit >= 40,
        };
        IdleConfig {
            states: vec![
                st("POLL", 0, 0, true),
                st("C1", 2, 2, false),
                st("C1E", 10, 20, false),
                st("C3", 40, 100, false),
                st("C6", 133, 400, false),
            ],
            governor: GovernorKind::Menu,
            max_cstate: None,
            disable: vec![],
            idle_poll: false,
            latency_limit_us: None,
            next_timer_us: 100_000,
            cache_refill_ns: 0,
        }
    }

    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// Idle periods of `gap_us` one after another, each ended by work (1 us of work
    /// between them).
    fn periodic(idle: &mut Idle, gap_us: u64, n: u64) {
        let mut t = 0;
        for _ in 0..n {
            let e = idle.wake(us(t), us(t + gap_us));
            t += gap_us + 1 + e.exit.0 / 1_000_000;
        }
    }

    /// A governor whose last 8 idle periods were `x_us` each (its correction factors at
    /// their initial unity: the next timer's 100 ms is the other prediction).
    fn seen(cfg: &IdleConfig, x_us: u64) -> Idle {
        let mut idle = Idle::new(cfg, 1000);
        idle.intervals = [x_us; INTERVALS];
        idle
    }

    #[test]
    fn regular_periods_pick_the_deepest_state_that_fits_them() {
        // Regular idle periods are found by the repeating-interval detector: the state
        // is the deepest whose target residency is within the period and whose exit
        // latency is below it (performance multiplier 1): 5 us -> C1 (2 <= 5 < 20),
        // 50 us -> C1E, 150 us -> C3, 600 us -> C6. Below a tick (1 ms) the tick is
        // kept; 2 ms periods stop it. 999 us before the next tick, nothing is cut.
        // Derived from menu_select.
        let c = bdw();
        for (gap, idx) in [(5, 1), (50, 2), (150, 3), (600, 4)] {
            let sel = seen(&c, gap).select(999);
            assert_eq!(
                sel,
                Selection {
                    idx,
                    stop_tick: false
                },
                "{gap} us"
            );
        }
        let sel = seen(&c, 2_000).select(999);
        assert_eq!(
            sel,
            Selection {
                idx: 4,
                stop_tick: true
            }
        );
        // Irregular periods (100 to 900 us: stddev 274 us around 500, and still over a
        // sixth of the average with the largest two dropped) give no typical interval:
        // the next timer times the correction factor (100 ms at unity) decides: C6,
        // tick stopped.
        let mut idle = seen(&c, 5);
        idle.intervals = [100, 900, 300, 700, 200, 800, 400, 600];
        assert_eq!(
            idle.select(999),
            Selection {
                idx: 4,
                stop_tick: true
            }
        );
        // But 5 and 600 us alternating are taken as 5 us: dropping the four 600s
        // leaves four 5s with no variance, which menu accepts (its variance <= 400
        // clause asks for no minimum count): C1, tick kept.
        idle.intervals = [5, 600, 5, 600, 5, 600, 5, 600];
        assert_eq!(
            idle.select(999),
            Selection {
                idx: 1,
                stop_tick: false
            }
        );
        // The exit latency the work waits for is the chosen state's: after 600 us
        // periods, entered just after a tick, C6's 133 us.
        let mut idle = seen(&c, 600);
        assert_eq!(idle.wake(us(100_001), us(100_601)).exit, us(133));
    }

    #[test]
    fn knobs_limit_the_states() {
        let idx = |c: &IdleConfig| seen(c, 600).select(999).idx;
        assert_eq!(idx(&bdw()), 4);
        // intel_idle.max_cstate=2: POLL, C1, C1E only.
        let mut c = bdw();
        c.max_cstate = Some(2);
        assert_eq!(idx(&c), 2);
        // C6 disabled: C3 for long periods.
        let mut c = bdw();
        c.disable = vec!["C6".into()];
        assert_eq!(idx(&c), 3);
        // A PM QoS limit of 20 us: nothing deeper than C1E.
        let mut c = bdw();
        c.latency_limit_us = Some(20);
        assert_eq!(idx(&c), 2);
        // A limit of 0: POLL.
        let mut c = bdw();
        c.latency_limit_us = Some(0);
        assert_eq!(idx(&c), 0);
        // idle=poll: no exit latency at all, whatever the period.
        let mut c = bdw();
        c.idle_poll = true;
        let mut idle = seen(&c, 600);
        assert_eq!(idle.wake(us(100_001), us(100_601)).exit, SimTime::ZERO);
    }

    #[test]
    fn a_kept_tick_bounds_the_state_and_a_long_idleness_stops_it() {
        // A fresh governor's interval history is zeros (menu_enable_device), so its
        // typical interval is 0; 4.18 starts its search at C1 (first_idx 1: the next
        // timer is beyond C1's 20 us polling threshold), so C1, tick kept.
        let idle = Idle::new(&bdw(), 1000);
        assert_eq!(
            idle.select(500),
            Selection {
                idx: 1,
                stop_tick: false
            }
        );
        // POLL only when a timer is due within the threshold, or C1's exit latency is
        // not below the PM QoS limit.
        let mut c = bdw();
        c.next_timer_us = 20;
        assert_eq!(Idle::new(&c, 1000).select(500).idx, 0);
        let mut c = bdw();
        c.latency_limit_us = Some(2);
        assert_eq!(Idle::new(&c, 1000).select(500).idx, 0);
        // After regular 300 us periods the prediction is 300 us, below the 1 ms tick:
        // the tick is kept and C3 chosen; 50 us before the tick, C1E (target 20 <= 50);
        // 10 us before it, C1.
        let mut idle = seen(&bdw(), 300);
        assert_eq!(
            idle.select(900),
            Selection {
                idx: 3,
                stop_tick: false
            }
        );
        assert_eq!(
            idle.select(50),
            Selection {
                idx: 2,
                stop_tick: false
            }
        );
        assert_eq!(
            idle.select(10),
            Selection {
                idx: 1,
                stop_tick: false
            }
        );
        // Then one 20 ms period from just after a tick: each tick wakes the core and
        // counts as 45 ms (menu_update's tick_wakeup rule); the 300 us periods still
        // win while any is left among the 8 (the detector drops the larger values and
        // a lone value has no variance), so C3 and the tick are kept for 8 ticks; at
        // the 9th entry all 8 are 45 ms, the correction factor's prediction (above a
        // tick) decides, the tick stops and the core sleeps in C6: the work waits 133 us.
        let e = idle.wake(us(1_000_001), us(1_020_001));
        assert_eq!(e.exit, us(133));
        assert_eq!(idle.usage, vec![0, 0, 0, 8, 1]);
        // The whole 20 ms is residency, and C6's exit latency with it (cpuidle counts
        // from before the state's enter to after it returns): 8 periods to the ticks in
        // C3 (999 us, then 7 ms; a tick's own wake-up pays no exit in the model), the
        // rest in C6 with its 133 us exit.
        assert_eq!(idle.time_ps[3], us(7_999).0);
        assert_eq!(idle.time_ps[4], us(20_000 - 7_999 + 133).0);
        assert_eq!(idle.time_ps.iter().sum::<u64>(), us(20_133).0);
        assert!(idle.tick_stopped());
    }

    #[test]
    fn a_stopped_tick_stays_stopped_until_a_task_runs() {
        // Regular 50 us periods pick C1E with the tick running (see above). With the
        // tick stopped (an earlier long idle period, and since then only interrupts and
        // softirqs, which do not leave the idle loop), 4.18's menu_select replaces a
        // prediction under one tick by the time to the next timer (100 ms here): C6,
        // and the work waits its 133 us.
        let mut idle = seen(&bdw(), 50);
        assert_eq!(idle.select(999).idx, 2);
        idle.tick_stopped = true;
        assert_eq!(
            idle.select(999),
            Selection {
                idx: 4,
                stop_tick: true
            }
        );
        assert_eq!(idle.wake(us(0), us(50)).exit, us(133));
        assert!(idle.tick_stopped());
        // A task ran (the idle loop exited, tick_nohz_idle_exit): the tick runs again
        // and the short periods' prediction decides once more.
        idle.restart_tick();
        idle.intervals = [50; INTERVALS];
        assert_eq!(
            idle.select(999),
            Selection {
                idx: 2,
                stop_tick: false
            }
        );
    }

    #[test]
    fn residency_is_counted_per_state() {
        let mut idle = Idle::new(&bdw(), 1000);
        periodic(&mut idle, 2_000, 40);
        // Every period's time is in some state, with the exit latency each wake-up
        // paid: 40 x 2 ms plus the exits (`exit_ps`, the states' declared latencies).
        assert_eq!(
            idle.time_ps.iter().sum::<u64>(),
            40 * us(2_000).0 + idle.exit_ps
        );
        assert!(idle.exit_ps >= 30 * us(133).0, "{}", idle.exit_ps);
        assert_eq!(idle.wakeups, 40);
        // Most of it in C6 once the pattern is learnt (2 ms periods stop the tick).
        assert!(idle.time_ps[4] > 30 * us(2_000).0, "{:?}", idle.time_ps);
    }

    #[test]
    fn configuration_is_checked() {
        let problems = |c: &IdleConfig| {
            let mut p = Problems::new();
            c.validate(&mut p);
            p.list.iter().map(|x| x.path.clone()).collect::<Vec<_>>()
        };
        assert!(problems(&bdw()).is_empty());
        let mut c = bdw();
        c.max_cstate = Some(0);
        c.disable = vec!["C7".into()];
        c.states[1].name = "C6".into();
        c.next_timer_us = 0;
        assert_eq!(
            problems(&c),
            vec![
                "states[4].name",
                "max_cstate",
                "disable[0]",
                "next_timer_us"
            ]
        );
    }
}
