//! One CPU with priority levels, preemption and time accounting.
//!
//! Models how a BSD or Linux kernel shares one processor: work at a higher level runs
//! first, work that becomes ready at a higher level preempts what runs below it, and the
//! preempted work resumes where it stopped.
//!
//! ```text
//!   Clock      the clock interrupt, hardclock (splclock: above every device)
//!   HardIrq    device interrupt handlers, and any work done at splimp/splnet, which
//!              blocks device interrupts until it ends (Linux hardirq)
//!   SoftIrq    software interrupts: BSD netisr (ipintr, polling), Linux NET_RX softirq
//!   SoftClock  softclock: timeout(9) callouts (below the network software interrupt)
//!   Kernel     kernel threads above user priority: polling threads, taskqueues
//!   User       user processes and normal-priority kernel threads (ksoftirqd), round robin
//!   IdleLoop   work done from the idle loop (FreeBSD poll_in_idle_loop)
//!   (idle)     nothing to run
//! ```
//!
//! Each level holds at most one *burst* (a remaining duration) and may be *wanting*: it
//! has a task ready but no burst yet. The model decides what a burst means and what
//! follows it; the CPU only decides, in [`Cpu::pick`], which level runs: the highest
//! level with a burst or a want. A want is turned into a burst by the model at the moment
//! the level actually gets the processor, so work that waits behind a higher level does
//! not start (e.g. dequeue its packet) early. Each dispatched burst carries a generation
//! number, so that a completion scheduled before a preemption is recognised as stale (the
//! host keeps one completion per core in its slot, replaced at every dispatch, and checks
//! the pair when it fires).
//!
//! Parameters ([`CpuConfig`]): `clock_mhz`, used to convert costs given in cycles;
//! `cores`, how many such processors the host has (default 1), and `irq_affinity`,
//! which core takes each interrupt line. A host with several cores has one [`Cpu`] per
//! core, each with its own levels, preemption and accounting.
//!
//! An idle core may sleep in an idle state ([`idle`], a model's `cpu.idle`): the first
//! burst after an idle period then runs only after the state's exit latency, time
//! counted as idle (the kernel's idle time ends at the interrupt's entry, after the
//! exit), and after a state that flushed the core's caches it takes the model's
//! `cache_refill_ns` longer, time counted as the burst's own (busy). Without `cpu.idle`
//! a core wakes at once.
//!
//! Counters: busy time per level and idle time (`busy_ps`), preemptions; with idle
//! states, each state's entries and residency, the exit latency paid, and the wake-ups
//! with cold caches and their refill time.
//!
//! Beside the core: [`idle`] (idle states and the menu governor), [`runq`] (which task
//! holds each level and which wait), [`cfs`] (Linux's fair scheduler for the User
//! level's tasks, when the kernel has it), [`task`] (what uses the CPU and the steps it
//! takes) and [`cputime`] (the time as Linux accounts it: mpstat's categories).
//!
//! Uses [`crate::sim`] (time, limits, problems) only: every other component builds on
//! it.

pub mod cfs;
pub mod cputime;
pub mod idle;
pub mod runq;
pub mod task;

use idle::{Idle, IdleConfig};

use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// CPU parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    /// Core clock \[MHz\], 1 MHz to 10 GHz (a lower clock turns a cost in cycles into more
    /// than 1,000 s); costs written in cycles are converted with it. Required.
    #[schemars(range(min = crate::sim::limits::MIN_CLOCK_MHZ, max = crate::sim::limits::MAX_CLOCK_MHZ))]
    pub clock_mhz: f64,
    /// Processors (cores) of the host, each with its own priority levels, preemption,
    /// time accounting, software interrupts and protocol input queue (ipintrq, Linux's
    /// per-CPU backlog) (default 1, at most 64). An interrupt handler runs on the core
    /// its line is bound to (`irq_affinity`), and so does the protocol work it queues;
    /// the user process, the sender and the clock interrupt run on core 0. Cache and
    /// lock contention between cores are not modelled beyond `kernel.shared_section`:
    /// without it a core runs as fast as a lone processor. With more than one core every NIC must use the `interrupt` or `napi` policy.
    #[serde(default = "d_cores", skip_serializing_if = "is_one")]
    #[schemars(range(min = 1, max = 64))]
    pub cores: u16,
    /// The core each interrupt line is bound to, by line name (a shared line's
    /// `irq_lines[].name`, a NIC's name for the line of its own, or `<nic>-q<k>` for
    /// queue `k`'s vector of a multi-queue NIC), as
    /// `/proc/irq/N/smp_affinity` with one CPU set. Lines not listed are spread round
    /// robin in line order (shared lines first, then the NICs' own lines in NIC order):
    /// line `i` on core `i % cores`, one vector per core as drivers' affinity hints set
    /// them (default: none listed).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub irq_affinity: BTreeMap<String, u16>,
    /// Each core's idle states and their governor (cpuidle; see [`idle`]) (default none:
    /// an idle core runs its next work at once, the FreeBSD models' HLT with no exit
    /// latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleConfig>,
}

fn d_cores() -> u16 {
    1
}

fn is_one(n: &u16) -> bool {
    *n == 1
}

impl CpuConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        if !(1..=64).contains(&self.cores) {
            p.push(
                "cores",
                format!("must be between 1 and 64, got {}", self.cores),
            );
        }
        for (line, &c) in &self.irq_affinity {
            if c >= self.cores {
                p.push(
                    &format!("irq_affinity.{line}"),
                    format!(
                        "core {c} does not exist: the host has {} core(s), numbered from 0",
                        self.cores
                    ),
                );
            }
        }
        if let Some(idle) = &self.idle {
            p.at("idle", |p| idle.validate(p));
        }
        use crate::sim::limits::{MAX_CLOCK_MHZ, MIN_CLOCK_MHZ};
        if !(self.clock_mhz.is_finite()
            && (MIN_CLOCK_MHZ..=MAX_CLOCK_MHZ).contains(&self.clock_mhz))
        {
            p.push(
                "clock_mhz",
                format!(
                    "must be {MIN_CLOCK_MHZ} to {MAX_CLOCK_MHZ} MHz (1 MHz to 10 GHz: a                      lower clock turns a cost in cycles into more than 1,000 s), got {}",
                    self.clock_mhz
                ),
            );
        }
    }
}

/// Priority levels, highest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// The clock interrupt.
    Clock = 0,
    /// Hardware interrupt handlers and work at splimp.
    HardIrq = 1,
    /// Network software interrupts.
    SoftIrq = 2,
    /// Softclock callouts.
    SoftClock = 3,
    /// Kernel threads above user priority.
    Kernel = 4,
    /// User processes and normal-priority kernel threads.
    User = 5,
    /// Work run from the idle loop.
    IdleLoop = 6,
}

/// Number of levels.
pub const LEVELS: usize = 7;

impl Level {
    /// All levels, highest priority first.
    pub const ALL: [Level; LEVELS] = [
        Level::Clock,
        Level::HardIrq,
        Level::SoftIrq,
        Level::SoftClock,
        Level::Kernel,
        Level::User,
        Level::IdleLoop,
    ];
}

/// A dispatch decision: the burst at `level` runs from now and, unless preempted, ends
/// at `done`. The host puts its end in the core's CPU slot and keeps `generation` beside
/// it (`Core::due`), so that a completion of an earlier burst is known stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// Level whose burst runs.
    pub level: Level,
    /// Its generation; a completion with another generation is stale.
    pub generation: u32,
    /// When it completes if nothing preempts it.
    pub done: SimTime,
}

/// What [`Cpu::pick`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Nothing to run.
    Idle,
    /// The running burst goes on; its completion event is still valid.
    Unchanged,
    /// `Level` is the highest with work but has no burst: the model must give it one
    /// (or clear its want) and pick again.
    Begin(Level),
    /// A burst (re)starts: schedule its completion.
    Dispatch(Dispatch),
}

/// The processor state.
#[derive(Clone, Debug, Default)]
pub struct Cpu {
    burst: [Option<SimTime>; LEVELS],
    want: [bool; LEVELS],
    /// Bit `l` set when level `l` has a burst or a want.
    active: u8,
    fresh: [bool; LEVELS],
    tag: [u8; LEVELS],
    generation: [u32; LEVELS],
    running: Option<Level>,
    since: SimTime,
    /// A burst, want or clear changed what may run since the last pick.
    dirty: bool,
    /// Time spent per level \[ps\], then idle at index `LEVELS` -- counter.
    pub busy_ps: [u64; LEVELS + 1],
    /// Time spent per burst tag \[ps\] (tags tell apart tasks sharing a level) -- counter.
    pub tag_ps: [u64; TAGS],
    /// Bursts preempted by a higher level -- counter.
    pub preemptions: u64,
    /// The idle states and governor, if the core has them.
    idle: Option<Box<Idle>>,
    /// When the core went idle, while it is (only with idle states).
    idle_since: Option<SimTime>,
    /// What is left of the exit latency the running burst waits for \[ps\].
    wake_left: SimTime,
    /// The cache refill the next dispatched burst pays after a wake-up from a state
    /// that flushed the core's caches \[ps\].
    refill_next: SimTime,
}

/// Number of distinct burst tags.
pub const TAGS: usize = 8;

impl Cpu {
    /// An idle CPU at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// An idle CPU at time zero whose idle periods are spent in `idle`'s states.
    pub fn with_idle(idle: Idle) -> Self {
        Cpu {
            idle: Some(Box::new(idle)),
            idle_since: Some(SimTime::ZERO),
            ..Self::default()
        }
    }

    /// The idle states' governor and counters, if the core has idle states.
    pub fn idle(&self) -> Option<&Idle> {
        self.idle.as_deref()
    }

    /// Residency in each idle state up to `now` \[ps\], an idle period still open at
    /// `now` included (booked to the states the governor would have chosen, without
    /// changing the core), if the core has idle states.
    pub fn idle_residency_at(&self, now: SimTime) -> Option<Vec<u64>> {
        let idle = self.idle.as_deref()?;
        Some(match self.idle_since {
            Some(since) if now > since => {
                let mut open = idle.clone();
                open.book_open(since, now);
                open.time_ps
            }
            _ => idle.time_ps.clone(),
        })
    }

    /// Remaining time of `level`'s burst at `now` (counting the time it has run since
    /// the last accounting).
    pub fn remaining_at(&self, now: SimTime, level: Level) -> Option<SimTime> {
        let r = self.burst[level as usize]?;
        Some(if self.running == Some(level) {
            // Time still in the exit latency is not the burst's.
            let ran = now
                .saturating_sub(self.since)
                .saturating_sub(self.wake_left);
            r.saturating_sub(ran)
        } else {
            r
        })
    }

    /// CPU time of `level` up to `now` \[ps\], the part of a burst running at `now`
    /// included (and an idle state's exit latency not).
    pub fn level_ps_at(&self, now: SimTime, level: Level) -> u64 {
        let mut t = self.busy_ps[level as usize];
        if self.running == Some(level) {
            t += now
                .saturating_sub(self.since)
                .saturating_sub(self.wake_left)
                .0;
        }
        t
    }

    /// When the running burst's work starts, `now` or later: after what is left of an
    /// idle state's exit latency.
    pub fn runs_from(&self, now: SimTime) -> SimTime {
        (self.since + self.wake_left).max(now)
    }

    /// The level that has the processor, if any (as of the last pick).
    pub fn running(&self) -> Option<Level> {
        self.running
    }

    /// Whether a completion event for (`level`, `generation`) is current.
    #[inline]
    pub fn is_current(&self, level: Level, generation: u32) -> bool {
        self.running == Some(level) && self.generation[level as usize] == generation
    }

    /// Charge the time since the last change to whatever ran.
    #[inline]
    fn account(&mut self, now: SimTime) {
        let mut dt = now.saturating_sub(self.since).0;
        if self.wake_left.0 != 0 {
            // The exit latency first: idle time, as the kernel counts it.
            let w = dt.min(self.wake_left.0);
            self.wake_left.0 -= w;
            self.busy_ps[LEVELS] += w;
            dt -= w;
        }
        match self.running {
            Some(l) => {
                self.busy_ps[l as usize] += dt;
                self.tag_ps[self.tag[l as usize] as usize] += dt;
                if let Some(r) = &mut self.burst[l as usize] {
                    *r = r.saturating_sub(SimTime(dt));
                }
            }
            None => self.busy_ps[LEVELS] += dt,
        }
        self.since = now;
    }

    /// Give `level` a new burst of `dur` (its next step), whose time is also counted
    /// under `tag` (< [`TAGS`]). Takes effect at the next pick.
    #[inline]
    pub fn set_burst(&mut self, now: SimTime, level: Level, dur: SimTime, tag: u8) {
        self.account(now);
        let l = level as usize;
        self.tag[l] = tag;
        self.dirty = true;
        self.burst[l] = Some(dur);
        self.want[l] = false;
        self.fresh[l] = true;
        self.active |= 1 << l;
    }

    /// [`Cpu::set_burst`] for the level that is running (its task's next step) or that
    /// [`Cpu::pick`] has just asked to begin, and, when no higher level has work, what
    /// `pick` would then decide: the burst runs from now (`Some`, already picked),
    /// without the general decision. `None`: a higher level has work, or another level
    /// holds the processor; pick as usual.
    #[inline(always)]
    pub fn next_burst(
        &mut self,
        now: SimTime,
        level: Level,
        dur: SimTime,
        tag: u8,
    ) -> Option<Dispatch> {
        self.set_burst(now, level, dur, tag);
        let l = level as usize;
        if self.running.is_some_and(|r| r != level) || self.active & ((1u8 << l) - 1) != 0 {
            return None;
        }
        // Level `l` is the highest with work and has a fresh burst, and it was running
        // or nothing was: no preemption, time accounted to `now` by `set_burst`. What
        // changed below it does not change the decision.
        self.dirty = false;
        Some(self.dispatch(level, now, dur))
    }

    /// `level`'s fresh burst, `rem` long, gets the processor from `now`: [`Cpu::pick`]'s
    /// decision, shared with [`Cpu::next_burst`]. A core waking from an idle state
    /// first waits for the state's exit latency.
    #[inline(always)]
    fn dispatch(&mut self, level: Level, now: SimTime, rem: SimTime) -> Dispatch {
        // An idle period of no length (the last burst ended at this instant and the
        // next is decided at it) is not one: the core never left the running state.
        if let Some(since) = self.idle_since.take()
            && now > since
        {
            self.wake(since, now);
        }
        let l = level as usize;
        let mut rem = rem;
        if self.refill_next.0 != 0 {
            // Cold caches after the idle state: the first work takes longer.
            rem += std::mem::take(&mut self.refill_next);
            self.burst[l] = Some(rem);
        }
        let done = now + self.wake_left + rem;
        if matches!(level, Level::Kernel | Level::User)
            && let Some(idle) = self.idle.as_deref_mut()
        {
            // A task runs: the idle loop has exited and the tick runs again.
            idle.restart_tick();
        }
        self.running = Some(level);
        self.fresh[l] = false;
        self.generation[l] = self.generation[l].wrapping_add(1);
        Dispatch {
            level,
            generation: self.generation[l],
            done,
        }
    }

    /// `level` has no more work for now.
    #[inline]
    pub fn clear(&mut self, now: SimTime, level: Level) {
        self.account(now);
        let l = level as usize;
        self.dirty = true;
        self.burst[l] = None;
        self.want[l] = false;
        self.fresh[l] = false;
        self.active &= !(1 << l);
        if self.running == Some(level) {
            self.running = None;
        }
    }

    /// `level` has a task ready to begin.
    #[inline]
    pub fn set_want(&mut self, level: Level) {
        if self.burst[level as usize].is_none() {
            self.dirty = true;
            self.want[level as usize] = true;
            self.active |= 1 << level as usize;
        }
    }

    /// Whether anything changed since the last [`Cpu::pick`] (else it would return
    /// `Unchanged` or `Idle` and do nothing).
    #[inline(always)]
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Decide what runs now.
    #[inline(always)]
    pub fn pick(&mut self, now: SimTime) -> Pick {
        if !self.dirty {
            // Nothing changed since the last pick: the same burst runs on (its time is
            // accounted at the next change).
            return if self.running.is_some() {
                Pick::Unchanged
            } else {
                Pick::Idle
            };
        }
        self.dirty = false;
        self.account(now);
        if self.active == 0 {
            self.running = None;
            if self.idle.is_some() && self.idle_since.is_none() {
                self.idle_since = Some(now);
            }
            return Pick::Idle;
        }
        let top = Level::ALL[self.active.trailing_zeros() as usize];
        let t = top as usize;
        if let Some(r) = self.running
            && r > top
            && self.burst[r as usize].is_some()
        {
            self.preemptions += 1;
        }
        match self.burst[t] {
            None => {
                self.running = None;
                Pick::Begin(top)
            }
            Some(rem) => {
                if self.running == Some(top) && !self.fresh[t] {
                    return Pick::Unchanged;
                }
                Pick::Dispatch(self.dispatch(top, now, rem))
            }
        }
    }

    /// The core, idle since `since`, is woken at `now`: the governor's state's exit
    /// latency is still to run (the burst that follows waits for it), and if the state
    /// flushed the core's caches, that burst takes the refill longer.
    #[inline(never)]
    fn wake(&mut self, since: SimTime, now: SimTime) {
        if let Some(idle) = &mut self.idle {
            let w = idle.wake(since, now);
            self.wake_left = w.exit;
            self.refill_next = w.refill;
        }
    }

    /// Busy time per level and idle time, and time per tag, up to `now` \[ps\], without
    /// changing state.
    pub fn snapshot(&self, now: SimTime) -> ([u64; LEVELS + 1], [u64; TAGS]) {
        let mut b = self.busy_ps;
        let mut g = self.tag_ps;
        let mut dt = now.saturating_sub(self.since).0;
        let w = dt.min(self.wake_left.0);
        b[LEVELS] += w;
        dt -= w;
        match self.running {
            Some(l) => {
                b[l as usize] += dt;
                g[self.tag[l as usize] as usize] += dt;
            }
            None => b[LEVELS] += dt,
        }
        (b, g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatch(p: Pick) -> Dispatch {
        match p {
            Pick::Dispatch(d) => d,
            other => panic!("expected a dispatch, got {other:?}"),
        }
    }

    #[test]
    fn preemption_keeps_the_remaining_time() {
        let mut c = Cpu::new();
        // Netisr starts a 10 us burst at t = 0.
        c.set_burst(SimTime(0), Level::SoftIrq, SimTime(10_000_000), 0);
        let d = dispatch(c.pick(SimTime(0)));
        assert_eq!(d.done, SimTime(10_000_000));
        // An interrupt at 4 us preempts it for 3 us.
        c.set_want(Level::HardIrq);
        assert_eq!(c.pick(SimTime(4_000_000)), Pick::Begin(Level::HardIrq));
        c.set_burst(SimTime(4_000_000), Level::HardIrq, SimTime(3_000_000), 0);
        let h = dispatch(c.pick(SimTime(4_000_000)));
        assert!(!c.is_current(Level::SoftIrq, d.generation));
        assert_eq!(h.done, SimTime(7_000_000));
        // The netisr resumes with 6 us left: done at 13 us.
        c.clear(h.done, Level::HardIrq);
        let r = dispatch(c.pick(h.done));
        assert_eq!((r.level, r.done), (Level::SoftIrq, SimTime(13_000_000)));
        c.clear(r.done, Level::SoftIrq);
        assert_eq!(c.pick(r.done), Pick::Idle);
        let (s, _) = c.snapshot(SimTime(20_000_000));
        assert_eq!(s[Level::HardIrq as usize], 3_000_000);
        assert_eq!(s[Level::SoftIrq as usize], 10_000_000);
        assert_eq!(s[LEVELS], 7_000_000);
        assert_eq!(c.preemptions, 1);
    }

    #[test]
    fn lower_level_work_waits_and_an_unchanged_burst_is_not_redispatched() {
        let mut c = Cpu::new();
        c.set_burst(SimTime(0), Level::HardIrq, SimTime(5), 0);
        let h = dispatch(c.pick(SimTime(0)));
        c.set_want(Level::User);
        assert_eq!(c.pick(SimTime(1)), Pick::Unchanged);
        c.clear(h.done, Level::HardIrq);
        assert_eq!(c.pick(h.done), Pick::Begin(Level::User));
    }

    /// `x` microseconds.
    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn nested_preemptions_resume_each_level_with_its_exact_remaining_time() {
        let mut c = Cpu::new();
        // A user process starts a 20 us burst at 0.
        c.set_burst(us(0), Level::User, us(20), 1);
        let u = dispatch(c.pick(us(0)));
        assert_eq!((u.level, u.done), (Level::User, us(20)));
        // At 2 us the netisr becomes ready with 10 us of work: done at 12 us.
        c.set_want(Level::SoftIrq);
        assert_eq!(c.pick(us(2)), Pick::Begin(Level::SoftIrq));
        c.set_burst(us(2), Level::SoftIrq, us(10), 0);
        let n = dispatch(c.pick(us(2)));
        assert_eq!(n.done, us(12));
        // At 5 us an interrupt handler of 4 us preempts the netisr: done at 9 us.
        c.set_want(Level::HardIrq);
        assert_eq!(c.pick(us(5)), Pick::Begin(Level::HardIrq));
        c.set_burst(us(5), Level::HardIrq, us(4), 0);
        let h = dispatch(c.pick(us(5)));
        assert_eq!(h.done, us(9));
        // Frozen remainders: netisr 10 - (5 - 2) = 7 us, user 20 - 2 = 18 us; they do
        // not shrink while preempted. The handler has 4 - 1 = 3 us left at 6 us.
        assert_eq!(c.remaining_at(us(8), Level::SoftIrq), Some(us(7)));
        assert_eq!(c.remaining_at(us(8), Level::User), Some(us(18)));
        assert_eq!(c.remaining_at(us(6), Level::HardIrq), Some(us(3)));
        assert_eq!(c.remaining_at(us(6), Level::Kernel), None);
        // Neither preempted completion is current any more.
        assert!(!c.is_current(Level::User, u.generation));
        assert!(!c.is_current(Level::SoftIrq, n.generation));
        assert!(c.is_current(Level::HardIrq, h.generation));
        // The handler ends at 9 us: the netisr resumes with 7 us, done at 16 us.
        c.clear(us(9), Level::HardIrq);
        let n2 = dispatch(c.pick(us(9)));
        assert_eq!((n2.level, n2.done), (Level::SoftIrq, us(16)));
        assert_ne!(n2.generation, n.generation);
        // The netisr ends at 16 us: the user process resumes with 18 us, done at 34 us.
        c.clear(us(16), Level::SoftIrq);
        let u2 = dispatch(c.pick(us(16)));
        assert_eq!((u2.level, u2.done), (Level::User, us(34)));
        c.clear(us(34), Level::User);
        assert_eq!(c.pick(us(34)), Pick::Idle);
        assert_eq!(c.running(), None);
        // Two bursts were preempted (user at 2 us, netisr at 5 us); each level got
        // exactly the time it asked for, and the CPU was never idle until 34 us.
        assert_eq!(c.preemptions, 2);
        let (b, _) = c.snapshot(us(40));
        assert_eq!(b[Level::User as usize], us(20).0);
        assert_eq!(b[Level::SoftIrq as usize], us(10).0);
        assert_eq!(b[Level::HardIrq as usize], us(4).0);
        assert_eq!(b[LEVELS], us(6).0); // idle from 34 to 40 us
        assert_eq!(b.iter().sum::<u64>(), us(40).0);
    }

    #[test]
    fn every_level_outranks_the_levels_below_it() {
        // Every level wants the CPU at once (asked lowest first): they are offered it
        // strictly in the order of the level table, highest first.
        let mut c = Cpu::new();
        for l in Level::ALL.iter().rev() {
            c.set_want(*l);
        }
        for l in Level::ALL {
            assert_eq!(c.pick(us(1)), Pick::Begin(l));
            c.clear(us(1), l);
        }
        assert_eq!(c.pick(us(1)), Pick::Idle);
        // Nothing had a burst, so nothing was preempted.
        assert_eq!(c.preemptions, 0);
        // Work from the idle loop runs only when nothing else is ready, and anything
        // else preempts it, here the clock.
        c.set_burst(us(1), Level::IdleLoop, us(100), 0);
        assert_eq!(dispatch(c.pick(us(1))).level, Level::IdleLoop);
        c.set_want(Level::Clock);
        assert_eq!(c.pick(us(2)), Pick::Begin(Level::Clock));
        assert_eq!(c.preemptions, 1);
    }

    #[test]
    fn a_higher_want_that_finds_nothing_to_do_gives_the_cpu_straight_back() {
        let mut c = Cpu::new();
        c.set_burst(us(0), Level::SoftIrq, us(10), 0);
        let d = dispatch(c.pick(us(0)));
        // An interrupt line is raised at 4 us but its handler finds no work: the model
        // clears the want at the same instant.
        c.set_want(Level::HardIrq);
        assert_eq!(c.pick(us(4)), Pick::Begin(Level::HardIrq));
        c.clear(us(4), Level::HardIrq);
        // The netisr is re-dispatched with the same end (0 + 10 us: no time was lost)
        // under a new generation, so its old completion event is stale.
        let r = dispatch(c.pick(us(4)));
        assert_eq!((r.level, r.done), (Level::SoftIrq, us(10)));
        assert_eq!(r.generation, d.generation.wrapping_add(1));
        assert!(!c.is_current(Level::SoftIrq, d.generation));
        assert!(c.is_current(Level::SoftIrq, r.generation));
        c.clear(us(10), Level::SoftIrq);
        let (b, _) = c.snapshot(us(10));
        assert_eq!(b[Level::SoftIrq as usize], us(10).0);
        assert_eq!(b[Level::HardIrq as usize], 0);
    }

    #[test]
    fn a_new_burst_at_the_running_level_is_dispatched_again() {
        let mut c = Cpu::new();
        c.set_burst(us(0), Level::HardIrq, us(5), 0);
        let a = dispatch(c.pick(us(0)));
        // The step ends at 5 us and the handler's next step is 3 us: done at 8 us.
        c.set_burst(a.done, Level::HardIrq, us(3), 0);
        let b = dispatch(c.pick(a.done));
        assert_eq!(b.done, us(8));
        assert_eq!(b.generation, a.generation + 1);
        // At 6 us the model shortens the running burst to 1 us (as the interrupt code
        // does when it cuts a handler): done at 7 us; the 8 us completion is stale.
        c.set_burst(us(6), Level::HardIrq, us(1), 0);
        let d = dispatch(c.pick(us(6)));
        assert_eq!(d.done, us(7));
        assert!(!c.is_current(Level::HardIrq, b.generation));
        assert!(c.is_current(Level::HardIrq, d.generation));
        c.clear(d.done, Level::HardIrq);
        // Re-dispatching one level is not a preemption; 5 + 1 + 1 us were used.
        assert_eq!(c.preemptions, 0);
        assert_eq!(c.snapshot(us(7)).0[Level::HardIrq as usize], us(7).0);
    }

    #[test]
    fn an_unchanged_cpu_is_not_dispatched_again() {
        let mut c = Cpu::new();
        // An idle CPU with nothing to do: Idle, and nothing is dirty.
        assert_eq!(c.pick(us(0)), Pick::Idle);
        assert!(!c.is_dirty());
        c.set_burst(us(0), Level::Kernel, us(10), 0);
        assert!(c.is_dirty());
        let d = dispatch(c.pick(us(0)));
        assert!(!c.is_dirty());
        assert_eq!(c.pick(us(1)), Pick::Unchanged);
        // A want at a level that already has a burst changes nothing.
        c.set_want(Level::Kernel);
        assert!(!c.is_dirty());
        // Lower-level work arriving, then leaving, does not disturb the running burst:
        // its completion event stays current.
        c.set_want(Level::User);
        assert_eq!(c.pick(us(2)), Pick::Unchanged);
        c.clear(us(3), Level::User);
        assert!(c.is_dirty());
        assert_eq!(c.pick(us(3)), Pick::Unchanged);
        assert!(c.is_current(Level::Kernel, d.generation));
        assert_eq!(c.running(), Some(Level::Kernel));
        assert_eq!(c.remaining_at(us(3), Level::Kernel), Some(us(7)));
    }

    #[test]
    fn time_is_charged_per_level_per_tag_and_to_idle() {
        let mut c = Cpu::new();
        // Idle 0-3 us; user (tag 1) 3-5 us; netisr (tag 0) 5-7 us; user again 7-10 us;
        // idle 10-12 us.
        c.set_burst(us(3), Level::User, us(5), 1);
        assert_eq!(dispatch(c.pick(us(3))).done, us(8));
        assert_eq!(c.remaining_at(us(4), Level::User), Some(us(4)));
        c.set_want(Level::SoftIrq);
        assert_eq!(c.pick(us(5)), Pick::Begin(Level::SoftIrq));
        c.set_burst(us(5), Level::SoftIrq, us(2), 0);
        assert_eq!(dispatch(c.pick(us(5))).done, us(7));
        c.clear(us(7), Level::SoftIrq);
        // The user burst had 5 - 2 = 3 us left: done at 10 us.
        assert_eq!(dispatch(c.pick(us(7))).done, us(10));
        // Mid-burst snapshot at 8 us: user 2 + 1 us, netisr 2 us, idle 3 us. It does
        // not change the state: the fields still stop at the last change (7 us).
        let (b, g) = c.snapshot(us(8));
        assert_eq!(
            (
                b[Level::User as usize],
                b[Level::SoftIrq as usize],
                b[LEVELS]
            ),
            (us(3).0, us(2).0, us(3).0)
        );
        assert_eq!((g[0], g[1]), (us(2).0, us(3).0));
        assert_eq!(c.busy_ps[Level::User as usize], us(2).0);
        assert_eq!(c.snapshot(us(8)), (b, g));
        c.clear(us(10), Level::User);
        assert_eq!(c.pick(us(10)), Pick::Idle);
        let (b, g) = c.snapshot(us(12));
        // User 2 + 3 = 5 us, netisr 2 us, idle 3 + 2 = 5 us; the tags split the busy
        // time the same way (idle time has no tag).
        assert_eq!(b[Level::User as usize], us(5).0);
        assert_eq!(b[Level::SoftIrq as usize], us(2).0);
        assert_eq!(b[LEVELS], us(5).0);
        assert_eq!(g[..4], [us(2).0, us(5).0, 0, 0]);
        assert!(g[4..].iter().all(|&x| x == 0));
        assert_eq!(b.iter().sum::<u64>(), us(12).0);
    }

    #[test]
    fn clock_rate_is_checked() {
        let bad = |mhz: f64| {
            let mut p = Problems::new();
            CpuConfig {
                clock_mhz: mhz,
                cores: 1,
                irq_affinity: BTreeMap::new(),
                idle: None,
            }
            .validate(&mut p);
            p.list.iter().map(|x| x.path.clone()).collect::<Vec<_>>()
        };
        // [1, 10,000] MHz (crate::sim::limits), finite; 1e-6 and 1e-12 MHz are the hostile inputs'
        // clocks that let a cost in cycles escape the 1,000 s cap or vanish.
        assert!(bad(448.0).is_empty());
        assert!(bad(1.0).is_empty());
        assert!(bad(1e4).is_empty());
        for mhz in [
            0.0,
            -1.0,
            1e-6,
            1e-12,
            0.999,
            1e4 + 1.0,
            1e6,
            f64::NAN,
            f64::INFINITY,
        ] {
            assert_eq!(bad(mhz), vec!["clock_mhz"], "{mhz}");
        }
    }

    #[test]
    fn the_next_burst_of_the_top_level_is_what_pick_would_decide() {
        // Two CPUs in the same state: one takes the general path (set_burst, pick), the
        // other next_burst. A handler burst of 3 us ends at 5 us; its next step is 2 us;
        // a softirq want arrived meanwhile (below it: no change).
        let us = |x: u64| SimTime(x * 1_000_000);
        let mut a = Cpu::new();
        a.set_burst(us(2), Level::HardIrq, us(3), 0);
        let first = dispatch(a.pick(us(2)));
        a.set_want(Level::SoftIrq);
        let mut b = a.clone();
        a.set_burst(us(5), Level::HardIrq, us(2), 0);
        let general = dispatch(a.pick(us(5)));
        let fast = b
            .next_burst(us(5), Level::HardIrq, us(2), 0)
            .expect("top level");
        assert_eq!(fast, general);
        assert_eq!(fast.done, us(7));
        assert_ne!(
            fast.generation, first.generation,
            "the old completion is stale"
        );
        assert!(!b.is_dirty() && b.is_current(Level::HardIrq, fast.generation));
        assert_eq!((b.busy_ps, b.preemptions), (a.busy_ps, a.preemptions));
        // The level asked to begin (nothing running) gets its first burst the same way.
        let mut c = Cpu::new();
        c.set_want(Level::SoftIrq);
        assert_eq!(c.pick(us(1)), Pick::Begin(Level::SoftIrq));
        let mut d = c.clone();
        c.set_burst(us(1), Level::SoftIrq, us(4), 0);
        assert_eq!(
            d.next_burst(us(1), Level::SoftIrq, us(4), 0),
            Some(dispatch(c.pick(us(1))))
        );
    }

    #[test]
    fn the_next_burst_waits_for_pick_when_a_higher_level_has_work() {
        // A netisr burst's next step while an interrupt is wanted: the interrupt
        // preempts, so the general decision is needed.
        let mut c = Cpu::new();
        c.set_burst(SimTime(0), Level::SoftIrq, SimTime(1_000), 0);
        dispatch(c.pick(SimTime(0)));
        c.set_want(Level::HardIrq);
        assert_eq!(
            c.next_burst(SimTime(1_000), Level::SoftIrq, SimTime(500), 0),
            None
        );
        assert!(c.is_dirty());
        assert_eq!(c.pick(SimTime(1_000)), Pick::Begin(Level::HardIrq));
    }

    #[test]
    fn a_task_restarts_the_tick_an_interrupt_does_not() {
        // One C6-like state (exit 100 us, residency 400 us): a 20 ms idle period stops
        // the tick (after 8 tick wake-ups each counted as 45 ms, the prediction is
        // above one tick: tick_nohz_idle_stop_tick; see idle.rs's tests); a hard
        // interrupt and its softirq run inside the idle loop and leave it stopped; a
        // process-level task (ksoftirqd, a NAPI kthread, a user process) exits the
        // idle loop and restarts it (tick_nohz_idle_exit).
        let cfg = idle::IdleConfig {
            states: vec![idle::IdleStateConfig {
                name: "C6".into(),
                exit_latency_us: 100,
                target_residency_us: 400,
                polling: false,
                flushes_caches: false,
            }],
            governor: idle::GovernorKind::Menu,
            max_cstate: None,
            disable: vec![],
            idle_poll: false,
            latency_limit_us: None,
            next_timer_us: 100_000,
            cache_refill_ns: 0,
        };
        let mut c = Cpu::with_idle(Idle::new(&cfg, 1000));
        let stopped = |c: &Cpu| c.idle().unwrap().tick_stopped();
        assert!(!stopped(&c));
        c.set_burst(us(20_000), Level::HardIrq, us(1), 0);
        let d = dispatch(c.pick(us(20_000)));
        assert_eq!(d.done, us(20_101)); // after the 100 us exit
        assert!(stopped(&c));
        c.clear(d.done, Level::HardIrq);
        c.set_burst(d.done, Level::SoftIrq, us(1), 0);
        let d = dispatch(c.pick(d.done));
        assert!(stopped(&c));
        c.clear(d.done, Level::SoftIrq);
        c.set_burst(d.done, Level::User, us(1), 0);
        dispatch(c.pick(d.done));
        assert!(!stopped(&c));
    }

    #[test]
    fn a_wake_from_a_state_that_flushed_the_caches_makes_the_first_burst_longer() {
        // One C6-like state that flushes the core's caches, a 2 us refill: a 20 ms idle
        // period, then a 1 us interrupt handler. It starts after the 100 us exit
        // latency (idle time) and runs 1 + 2 us (busy, at its level); the softirq after
        // it runs its warm 1 us.
        let cfg = idle::IdleConfig {
            states: vec![
                idle::IdleStateConfig {
                    name: "C1".into(),
                    exit_latency_us: 2,
                    target_residency_us: 2,
                    polling: false,
                    flushes_caches: false,
                },
                idle::IdleStateConfig {
                    name: "C6".into(),
                    exit_latency_us: 100,
                    target_residency_us: 400,
                    polling: false,
                    flushes_caches: true,
                },
            ],
            governor: idle::GovernorKind::Menu,
            max_cstate: None,
            disable: vec![],
            idle_poll: false,
            latency_limit_us: None,
            next_timer_us: 100_000,
            cache_refill_ns: 2_000,
        };
        let mut c = Cpu::with_idle(Idle::new(&cfg, 1000));
        c.set_burst(us(20_000), Level::HardIrq, us(1), 0);
        let d = dispatch(c.pick(us(20_000)));
        assert_eq!(d.done, us(20_103));
        c.clear(d.done, Level::HardIrq);
        c.set_burst(d.done, Level::SoftIrq, us(1), 0);
        let s = dispatch(c.pick(d.done));
        assert_eq!(s.done, us(20_104));
        c.clear(s.done, Level::SoftIrq);
        assert_eq!(c.pick(s.done), Pick::Idle);
        let (b, _) = c.snapshot(s.done);
        assert_eq!(b[Level::HardIrq as usize], us(3).0);
        assert_eq!(b[Level::SoftIrq as usize], us(1).0);
        assert_eq!(b[LEVELS], us(20_100).0);
        let idle = c.idle().unwrap();
        assert_eq!((idle.cold_wakeups, idle.cache_refill_ps), (1, us(2).0));
        // Preempted, the refill stays part of the burst's remaining time.
        let mut c = Cpu::with_idle(Idle::new(&cfg, 1000));
        c.set_burst(us(20_000), Level::SoftIrq, us(1), 0);
        let d = dispatch(c.pick(us(20_000)));
        assert_eq!(d.done, us(20_103));
        c.set_want(Level::HardIrq);
        assert_eq!(c.pick(us(20_101)), Pick::Begin(Level::HardIrq));
        assert_eq!(c.remaining_at(us(20_101), Level::SoftIrq), Some(us(2)));
    }
}
