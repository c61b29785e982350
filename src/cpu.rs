//! One CPU with interrupt priority levels, preemption and time accounting.
//!
//! Models the way a BSD or Linux kernel shares one processor: work at a higher level
//! runs first, and work that arrives at a higher level preempts what runs below it;
//! the preempted work resumes where it stopped when the higher level is done.
//!
//! ```text
//!   HardIrq   device interrupt handlers (splimp/splnet; Linux hardirq)
//!   SoftIrq   software interrupts: netisr / ipintr, NET_RX softirq
//!   Kernel    kernel threads: ksoftirqd, polling threads, taskqueues
//!   User      user processes
//!   (idle)    nothing to run
//! ```
//!
//! Each level holds at most one *burst* of work (a remaining duration). The model
//! decides what a burst means and what follows it; the CPU only decides which burst runs
//! and for how long. When a running burst is preempted its remaining time is kept; when it
//! resumes, its completion is rescheduled. Completion events carry a generation number so
//! a completion scheduled before a preemption is recognised as stale.
//!
//! Counters: busy time per level and idle time (`busy_ps`), bursts started and
//! preemptions (`preemptions`).
//!
//! Parameters ([`CpuConfig`]): `clock_mhz`, used to convert costs given in cycles.

use crate::problems::Problems;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// CPU parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    /// Core clock [MHz]; costs written in cycles are converted with it. Required.
    pub clock_mhz: f64,
}

impl CpuConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.positive("clock_mhz", self.clock_mhz, "MHz");
    }
}

/// Priority levels, highest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// Hardware interrupt handlers.
    HardIrq = 0,
    /// Software interrupts (netisr, NET_RX softirq).
    SoftIrq = 1,
    /// Kernel threads.
    Kernel = 2,
    /// User processes.
    User = 3,
}

/// Number of non-idle levels.
pub const LEVELS: usize = 4;

impl Level {
    /// All levels, highest priority first.
    pub const ALL: [Level; LEVELS] = [Level::HardIrq, Level::SoftIrq, Level::Kernel, Level::User];
}

/// A dispatch decision: the burst at `level` now runs and, unless preempted, ends at `done`.
/// The model must schedule a completion event carrying `generation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// Level whose burst runs.
    pub level: Level,
    /// Its generation; a completion with another generation is stale.
    pub generation: u32,
    /// When it completes if nothing preempts it.
    pub done: SimTime,
}

/// The processor state.
#[derive(Clone, Debug, Default)]
pub struct Cpu {
    remaining: [Option<SimTime>; LEVELS],
    generation: [u32; LEVELS],
    running: Option<Level>,
    since: SimTime,
    /// Time spent per level [ps], then idle at index `LEVELS` -- counter.
    pub busy_ps: [u64; LEVELS + 1],
    /// Bursts preempted by a higher level -- counter.
    pub preemptions: u64,
}

impl Cpu {
    /// An idle CPU at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `level` has a burst (running or preempted).
    #[inline]
    pub fn has_burst(&self, level: Level) -> bool {
        self.remaining[level as usize].is_some()
    }

    /// The level currently running, if any.
    #[inline]
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
        let dt = now.saturating_sub(self.since).0;
        match self.running {
            Some(l) => {
                self.busy_ps[l as usize] += dt;
                if let Some(r) = &mut self.remaining[l as usize] {
                    *r = r.saturating_sub(SimTime(dt));
                }
            }
            None => self.busy_ps[LEVELS] += dt,
        }
        self.since = now;
    }

    /// Give `level` a burst of `dur` starting now. The level must not already have one.
    /// Returns the dispatch to schedule if this burst runs immediately (it is the
    /// highest level with work, preempting a lower one if needed).
    #[inline]
    pub fn start(&mut self, now: SimTime, level: Level, dur: SimTime) -> Option<Dispatch> {
        debug_assert!(!self.has_burst(level), "level {level:?} already busy");
        self.account(now);
        self.remaining[level as usize] = Some(dur);
        match self.running {
            Some(r) if r <= level => None,
            prev => {
                if prev.is_some() {
                    self.preemptions += 1;
                }
                Some(self.run(level, now))
            }
        }
    }

    /// The running burst at `level` has completed. Returns the dispatch of the burst that
    /// resumes, if a lower level has one.
    ///
    /// Call [`Cpu::start`] for a follow-on burst at the same level *before* this if the
    /// work continues without a gap -- or, simpler, call [`Cpu::chain`].
    #[inline]
    pub fn finish(&mut self, now: SimTime, level: Level) -> Option<Dispatch> {
        debug_assert_eq!(self.running, Some(level));
        self.account(now);
        self.remaining[level as usize] = None;
        self.running = None;
        let next = Level::ALL.into_iter().find(|l| self.has_burst(*l))?;
        Some(self.run(next, now))
    }

    /// The running burst at `level` completed and the same level continues at once with a
    /// new burst of `dur` (the next step of a handler loop). Returns its dispatch.
    #[inline]
    pub fn chain(&mut self, now: SimTime, level: Level, dur: SimTime) -> Dispatch {
        debug_assert_eq!(self.running, Some(level));
        self.account(now);
        self.remaining[level as usize] = Some(dur);
        self.run(level, now)
    }

    #[inline]
    fn run(&mut self, level: Level, now: SimTime) -> Dispatch {
        self.running = Some(level);
        let g = &mut self.generation[level as usize];
        *g = g.wrapping_add(1);
        Dispatch {
            level,
            generation: *g,
            done: now + self.remaining[level as usize].unwrap_or_default(),
        }
    }

    /// Busy time per level and idle time up to `now` [ps], without changing state.
    pub fn snapshot(&self, now: SimTime) -> [u64; LEVELS + 1] {
        let mut b = self.busy_ps;
        let dt = now.saturating_sub(self.since).0;
        match self.running {
            Some(l) => b[l as usize] += dt,
            None => b[LEVELS] += dt,
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preemption_keeps_the_remaining_time() {
        let mut c = Cpu::new();
        // Netisr starts a 10 us burst at t = 0.
        let d = c
            .start(SimTime(0), Level::SoftIrq, SimTime(10_000_000))
            .unwrap();
        assert_eq!(d.done, SimTime(10_000_000));
        // An interrupt at 4 us preempts it for 3 us.
        let h = c
            .start(SimTime(4_000_000), Level::HardIrq, SimTime(3_000_000))
            .unwrap();
        assert!(!c.is_current(Level::SoftIrq, d.generation));
        assert_eq!(h.done, SimTime(7_000_000));
        // The netisr resumes with 6 us left: done at 13 us.
        let r = c.finish(h.done, Level::HardIrq).unwrap();
        assert_eq!((r.level, r.done), (Level::SoftIrq, SimTime(13_000_000)));
        assert!(c.finish(r.done, Level::SoftIrq).is_none());
        let s = c.snapshot(SimTime(20_000_000));
        assert_eq!(s[Level::HardIrq as usize], 3_000_000);
        assert_eq!(s[Level::SoftIrq as usize], 10_000_000);
        assert_eq!(s[LEVELS], 7_000_000);
        assert_eq!(c.preemptions, 1);
    }

    #[test]
    fn lower_level_work_waits() {
        let mut c = Cpu::new();
        let h = c.start(SimTime(0), Level::HardIrq, SimTime(5)).unwrap();
        assert!(c.start(SimTime(1), Level::User, SimTime(5)).is_none());
        let u = c.finish(h.done, Level::HardIrq).unwrap();
        assert_eq!((u.level, u.done), (Level::User, SimTime(10)));
    }
}
