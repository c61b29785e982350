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
//! not start (e.g. dequeue its packet) early. Completion events carry a generation
//! number so a completion scheduled before a preemption is recognised as stale.
//!
//! Parameters ([`CpuConfig`]): `clock_mhz`, used to convert costs given in cycles.
//!
//! Counters: busy time per level and idle time (`busy_ps`), preemptions.

use crate::problems::Problems;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// CPU parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    /// Core clock [MHz]; costs written in cycles are converted with it. Required.
    pub clock_mhz: f64,
}

impl CpuConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        if !(self.clock_mhz.is_finite() && self.clock_mhz > 0.0 && self.clock_mhz <= 1e6) {
            p.push(
                "clock_mhz",
                format!(
                    "must be greater than 0 MHz and at most 1e6 MHz, got {}",
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
/// at `done`. The model schedules a completion event carrying `generation`.
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
    /// Time spent per level [ps], then idle at index `LEVELS` -- counter.
    pub busy_ps: [u64; LEVELS + 1],
    /// Time spent per burst tag [ps] (tags tell apart tasks sharing a level) -- counter.
    pub tag_ps: [u64; TAGS],
    /// Bursts preempted by a higher level -- counter.
    pub preemptions: u64,
}

/// Number of distinct burst tags.
pub const TAGS: usize = 4;

impl Cpu {
    /// An idle CPU at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Remaining time of `level`'s burst at `now` (counting the time it has run since
    /// the last accounting).
    pub fn remaining_at(&self, now: SimTime, level: Level) -> Option<SimTime> {
        let r = self.burst[level as usize]?;
        Some(if self.running == Some(level) {
            r.saturating_sub(now.saturating_sub(self.since))
        } else {
            r
        })
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
        let dt = now.saturating_sub(self.since).0;
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
    #[inline]
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
                self.running = Some(top);
                self.fresh[t] = false;
                self.generation[t] = self.generation[t].wrapping_add(1);
                Pick::Dispatch(Dispatch {
                    level: top,
                    generation: self.generation[t],
                    done: now + rem,
                })
            }
        }
    }

    /// Busy time per level and idle time, and time per tag, up to `now` [ps], without
    /// changing state.
    pub fn snapshot(&self, now: SimTime) -> ([u64; LEVELS + 1], [u64; TAGS]) {
        let mut b = self.busy_ps;
        let mut g = self.tag_ps;
        let dt = now.saturating_sub(self.since).0;
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
}
