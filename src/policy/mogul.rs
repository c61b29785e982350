//! Mogul & Ramakrishnan's livelock-free receive path ("Eliminating receive livelock in
//! an interrupt-driven kernel", USENIX 1996 / ACM TOCS 15(3) 1997).
//!
//! The receive interrupt (isr_entry + isr_exit) does no packet work: it leaves the
//! interface masked, puts it on the service list and wakes a kernel polling thread. The
//! thread serves the interfaces round robin, taking at most `quota` frames from each per
//! turn and carrying each frame all the way to the output queue (`rx_per_packet` +
//! `netisr_per_packet`), so no work is wasted on frames dropped later. An interface
//! whose ring is empty leaves the list and has its interrupt re-enabled. Two controls:
//!
//! - **feedback**: while the queue downstream of the thread (the screend-like user
//!   process's queue, or the output if_snd) is full, the thread stops taking input and
//!   leaves frames in the ring, where the NIC drops them at no CPU cost; input resumes
//!   when that queue is down to half;
//! - **cycle limit**: the thread may use at most `cycle_limit_pct` % of each
//!   `period_ns`; past that it sleeps, interfaces still masked, until the next period,
//!   so user processes keep the rest of the CPU.
//!
//! Parameters: per NIC `quota` (default 5); [`MogulConfig`] (`kernel.mogul`) with
//! defaults `cycle_limit_pct` 100 (no limit), `period_ns` 10,000,000 (10 ms),
//! `feedback` true.
//!
//! Counters: `mogul.turns`, `mogul.cycle_limit_sleeps`, `mogul.feedback_stops`.

use crate::engine::Scheduler;
use crate::host::{Event, Host, Step, Task};
use crate::packet::Packet;
use crate::policy::PolicyConfig;
use crate::problems::Problems;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// System-wide parameters of the polling thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MogulConfig {
    /// Largest share of each period the thread may use [%] (default 100: no limit).
    #[serde(default = "d_limit")]
    pub cycle_limit_pct: f64,
    /// Period over which the cycle limit is measured [ns] (default 10 ms).
    #[serde(default = "d_period")]
    pub period_ns: f64,
    /// Stop input while the downstream queue is full (default true).
    #[serde(default = "d_true")]
    pub feedback: bool,
}

fn d_limit() -> f64 {
    100.0
}
fn d_period() -> f64 {
    10_000_000.0
}
fn d_true() -> bool {
    true
}

impl Default for MogulConfig {
    fn default() -> Self {
        MogulConfig {
            cycle_limit_pct: d_limit(),
            period_ns: d_period(),
            feedback: true,
        }
    }
}

impl MogulConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        if !(self.cycle_limit_pct > 0.0 && self.cycle_limit_pct <= 100.0) {
            p.push(
                "cycle_limit_pct",
                format!("must be in (0, 100] %, got {}", self.cycle_limit_pct),
            );
        }
        p.period_ns("period_ns", self.period_ns);
    }
}

/// Polling-thread state.
#[derive(Clone, Debug)]
pub struct Mogul {
    /// Cycle-limit period.
    pub period: SimTime,
    budget: SimTime,
    feedback: bool,
    service: VecDeque<usize>,
    quota_left: u32,
    /// The frame being processed and its cost (charged when it completes).
    pub current: Option<(Packet, SimTime)>,
    used: SimTime,
    sleeping: bool,
    blocked: bool,
    turns: u64,
    sleeps: u64,
    feedback_stops: u64,
}

impl Mogul {
    /// State from the parameters.
    pub fn new(cfg: &MogulConfig) -> Mogul {
        let period = SimTime::from_ns_f64(cfg.period_ns);
        Mogul {
            period,
            budget: SimTime::from_ns_f64(cfg.period_ns * cfg.cycle_limit_pct / 100.0),
            feedback: cfg.feedback,
            service: VecDeque::new(),
            quota_left: 0,
            current: None,
            used: SimTime::ZERO,
            sleeping: false,
            blocked: false,
            turns: 0,
            sleeps: 0,
            feedback_stops: 0,
        }
    }

    /// Publish the counters.
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        c.insert("mogul.turns".into(), self.turns as f64);
        c.insert("mogul.cycle_limit_sleeps".into(), self.sleeps as f64);
        c.insert("mogul.feedback_stops".into(), self.feedback_stops as f64);
    }
}

impl Host {
    /// The receive interrupt: put the interface on the service list, wake the thread.
    pub(crate) fn mogul_schedule(&mut self, nic: usize) {
        let Some(m) = &mut self.mogul else { return };
        if !m.service.contains(&nic) {
            m.service.push_back(nic);
        }
        if !m.sleeping && !m.blocked {
            self.wake(Task::MogulThread);
        }
    }

    /// Start of a cycle-limit period.
    pub(crate) fn mogul_period(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(m) = &mut self.mogul else { return };
        m.used = SimTime::ZERO;
        let wake = m.sleeping && !m.service.is_empty() && !m.blocked;
        m.sleeping = false;
        let period = m.period;
        if wake {
            self.wake(Task::MogulThread);
        }
        s.at(now + period, Event::MogulPeriod);
    }

    /// Whether the queue after the thread is full for the frame at the head of `nic`.
    fn downstream_full(&self, nic: usize, half: bool) -> bool {
        if let Some(u) = &self.user
            && u.consumes_packets()
        {
            return if half {
                u.queue_above_half()
            } else {
                u.queue_full()
            };
        }
        let Some(p) = self.nics[nic].rx_ring.front() else {
            return false;
        };
        let q = &self.nics[self.flows[p.flow as usize].out_nic].if_snd;
        if half {
            q.len() * 2 > q.capacity()
        } else {
            q.is_full()
        }
    }

    /// A downstream queue drained a little: resume input if feedback stopped it.
    #[inline]
    pub(crate) fn output_drained(&mut self, _nic: usize, _now: SimTime) {
        let Some(m) = &self.mogul else { return };
        if !m.blocked {
            return;
        }
        let still = m.service.iter().all(|n| self.downstream_full(*n, true));
        if !still {
            let m = self.mogul.as_mut().expect("mogul");
            m.blocked = false;
            if !m.sleeping && !m.service.is_empty() {
                self.wake(Task::MogulThread);
            }
        }
    }

    /// One step of the polling thread.
    pub(crate) fn mogul_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        if let Some((p, cost)) = self.mogul.as_mut().and_then(|m| m.current.take()) {
            self.mogul.as_mut().expect("mogul").used += cost;
            self.forward(p, now, s);
        }
        let Some(m) = &mut self.mogul else {
            return Step::Done;
        };
        if first {
            m.quota_left = 0;
        }
        if m.used >= m.budget {
            m.sleeping = true;
            m.sleeps += 1;
            return Step::Done;
        }
        let mut tried = 0;
        loop {
            let m = self.mogul.as_mut().expect("mogul");
            let Some(&nic) = m.service.front() else {
                return Step::Done;
            };
            if m.quota_left == 0 {
                m.turns += 1;
                m.quota_left = match self.policies[nic] {
                    PolicyConfig::MogulRamakrishnan { quota } => quota,
                    _ => unreachable!("only Mogul-Ramakrishnan NICs are served"),
                };
            }
            if self.nics[nic].rx_ring.is_empty() {
                // Done with this interface: off the list, interrupt back on.
                let m = self.mogul.as_mut().expect("mogul");
                m.service.pop_front();
                m.quota_left = 0;
                self.irq_unmask(nic, now, s);
                continue;
            }
            if m.feedback && self.downstream_full(nic, false) {
                // Leave the frames in the ring; try the next interface.
                let m = self.mogul.as_mut().expect("mogul");
                m.feedback_stops += 1;
                m.quota_left = 0;
                m.service.rotate_left(1);
                tried += 1;
                if tried >= m.service.len() {
                    m.blocked = true;
                    return Step::Done;
                }
                continue;
            }
            let p = self.nics[nic].rx_ring.pop().expect("non-empty");
            let cost = self.drivers[nic].rx(p.bytes) + self.netisr.forward_cost();
            let m = self.mogul.as_mut().expect("mogul");
            m.quota_left -= 1;
            if m.quota_left == 0 {
                m.service.rotate_left(1);
            }
            m.current = Some((p, cost));
            return Step::Run(cost);
        }
    }
}
