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

use crate::model::cpu::Level;
use crate::model::packet::Packet;
use crate::model::policy::env::{RingEnv, RxEnv, SchedEnv};
use crate::model::policy::interrupt::HandlerMode;
use crate::model::policy::{BuildCtx, PolicyConfig, RxPolicy};
use crate::sim::problems::Problems;
use crate::model::cpu::task::{PolicyTask, Step, Task};
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// A NIC's own parameters under the polling thread (`"kind": "mogul-ramakrishnan"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MogulParams {
    /// Packets taken from this interface per round-robin turn (default 5).
    #[serde(default = "d_quota")]
    #[schemars(range(min = 1))]
    pub quota: u32,
}

fn d_quota() -> u32 {
    5
}

impl MogulParams {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("quota", self.quota as u64, 1, "packet");
    }
}

/// System-wide parameters of the polling thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MogulConfig {
    /// Largest share of each period the thread may use [%] (default 100: no limit).
    #[serde(default = "d_limit")]
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 100))]
    pub cycle_limit_pct: f64,
    /// Period over which the cycle limit is measured \[ns\] (default 10 ms).
    #[serde(default = "d_period")]
    #[schemars(range(min = 1.0, max = crate::sim::problems::MAX_TIME_NS))]
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
    /// CPU time the thread may use per period.
    budget: SimTime,
    feedback: bool,
    /// Each NIC's quota [frames per turn] (0: the NIC is not served by the thread).
    quota: Vec<u32>,
    /// The service list: interfaces with work, masked.
    service: VecDeque<usize>,
    quota_left: u32,
    /// The frame being processed and its cost (charged when it completes).
    current: Option<(Packet, SimTime)>,
    used: SimTime,
    sleeping: bool,
    blocked: bool,
    turns: u64,
    sleeps: u64,
    feedback_stops: u64,
    /// Registry index (for the thread's task).
    kind: u8,
}

impl Mogul {
    /// State from the parameters and each NIC's quota (0 for NICs the thread does not
    /// serve).
    pub fn new(cfg: &MogulConfig, quota: Vec<u32>) -> Mogul {
        let period = SimTime::from_ns_f64(cfg.period_ns);
        Mogul {
            period,
            budget: SimTime::from_ns_f64(cfg.period_ns * cfg.cycle_limit_pct / 100.0),
            feedback: cfg.feedback,
            quota,
            service: VecDeque::new(),
            quota_left: 0,
            current: None,
            used: SimTime::ZERO,
            sleeping: false,
            blocked: false,
            turns: 0,
            sleeps: 0,
            feedback_stops: 0,
            kind: 0,
        }
    }

    /// The polling thread (a kernel thread).
    pub fn thread(&self) -> Task {
        Task::policy(self.kind, 0, Level::Kernel)
    }

    /// Frames held by the thread (the one being processed).
    pub fn held(&self) -> usize {
        self.current.is_some() as usize
    }

    /// The receive interrupt: put the interface on the service list, wake the thread.
    pub fn schedule(&mut self, nic: usize, env: &mut impl SchedEnv) {
        if !self.service.contains(&nic) {
            self.service.push_back(nic);
        }
        if !self.sleeping && !self.blocked {
            env.wake(self.thread());
        }
    }

    /// Start of a cycle-limit period: the budget is whole again and a sleeping thread
    /// with work wakes. The next period starts [`Mogul::period`] later.
    pub fn period_start(&mut self, env: &mut impl SchedEnv) {
        self.used = SimTime::ZERO;
        let wake = self.sleeping && !self.service.is_empty() && !self.blocked;
        self.sleeping = false;
        if wake {
            env.wake(self.thread());
        }
    }

    /// A downstream queue drained a little: resume input if feedback stopped it and
    /// some interface's downstream queue is now at most half full.
    pub fn output_drained(&mut self, env: &mut (impl RingEnv + SchedEnv)) {
        if !self.blocked {
            return;
        }
        let still = self.service.iter().all(|n| env.downstream_full(*n, true));
        if !still {
            self.blocked = false;
            if !self.sleeping && !self.service.is_empty() {
                env.wake(self.thread());
            }
        }
    }

    /// One step of the polling thread (`first`: it has just been given the CPU).
    pub fn step(&mut self, first: bool, env: &mut impl RxEnv) -> Step {
        if let Some((p, cost)) = self.current.take() {
            self.used += cost;
            env.forward(p);
        }
        if first {
            self.quota_left = 0;
        }
        if self.used >= self.budget {
            self.sleeping = true;
            self.sleeps += 1;
            return Step::Done;
        }
        let mut tried = 0;
        loop {
            let Some(&nic) = self.service.front() else {
                return Step::Done;
            };
            if self.quota_left == 0 {
                self.turns += 1;
                self.quota_left = self.quota[nic];
                debug_assert!(self.quota_left > 0, "only the thread's NICs are served");
            }
            if env.rx_empty(nic) {
                // Done with this interface: off the list, interrupt back on.
                self.service.pop_front();
                self.quota_left = 0;
                env.irq_unmask(nic);
                continue;
            }
            if self.feedback && env.downstream_full(nic, false) {
                // Leave the frames in the ring; try the next interface.
                self.feedback_stops += 1;
                self.quota_left = 0;
                self.service.rotate_left(1);
                tried += 1;
                if tried >= self.service.len() {
                    self.blocked = true;
                    return Step::Done;
                }
                continue;
            }
            let p = env.rx_pop(nic).expect("non-empty");
            let cost = env.rx_cost(nic, p.bytes) + env.forward_cost();
            self.quota_left -= 1;
            if self.quota_left == 0 {
                self.service.rotate_left(1);
            }
            self.current = Some((p, cost));
            return Step::Run(cost);
        }
    }

    /// Publish the counters.
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        c.insert("mogul.turns".into(), self.turns as f64);
        c.insert("mogul.cycle_limit_sleeps".into(), self.sleeps as f64);
        c.insert("mogul.feedback_stops".into(), self.feedback_stops as f64);
    }
}

impl RxPolicy for Mogul {
    const HANDLER: HandlerMode = HandlerMode::Schedule;
    const WATCHES_OUTPUT: bool = true;

    fn serves(p: &PolicyConfig) -> bool {
        matches!(p, PolicyConfig::MogulRamakrishnan(_))
    }
    fn build(ctx: &BuildCtx<'_>) -> Option<Self> {
        ctx.nics_of::<Self>().next()?;
        let quota = ctx
            .nics
            .iter()
            .map(|p| match p {
                PolicyConfig::MogulRamakrishnan(m) => m.quota,
                _ => 0,
            })
            .collect();
        let mut m = Mogul::new(&ctx.kernel.mogul, quota);
        m.kind = ctx.kind;
        Some(m)
    }
    fn held(&self) -> usize {
        Mogul::held(self)
    }
    fn counters(&self, _nic_names: &[String], c: &mut BTreeMap<String, f64>) {
        Mogul::counters(self, c)
    }
    fn task_name(_task: PolicyTask, _nic_names: &[String]) -> String {
        "polling thread".into()
    }
    fn schedule(&mut self, nic: usize, env: &mut impl SchedEnv) {
        Mogul::schedule(self, nic, env)
    }
    fn step(&mut self, _task: PolicyTask, first: bool, env: &mut impl RxEnv) -> Step {
        Mogul::step(self, first, env)
    }
    fn first_timer(&self) -> Option<SimTime> {
        Some(self.period)
    }
    fn timer(&mut self, env: &mut impl SchedEnv) -> Option<SimTime> {
        self.period_start(env);
        Some(self.period)
    }
    fn output_drained(&mut self, env: &mut (impl RingEnv + SchedEnv)) {
        Mogul::output_drained(self, env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policy::env::mock::{Script, Signal, ns};

    fn cfg(cycle_limit_pct: f64) -> MogulConfig {
        MogulConfig {
            cycle_limit_pct,
            ..MogulConfig::default()
        }
    }

    #[test]
    fn serves_interfaces_round_robin_by_quota_and_unmasks_an_empty_one() {
        // Two interfaces, quota 2: 3 frames on NIC 0, 1 on NIC 1.
        let mut env = Script::new(&[3, 1]);
        let mut m = Mogul::new(&cfg(100.0), vec![2, 2]);
        m.schedule(0, &mut env);
        m.schedule(1, &mut env);
        assert_eq!(env.take_log(), vec![Signal::Wake(m.thread()); 2]);
        let mut order = Vec::new();
        let mut first = true;
        while let Step::Run(d) = m.step(first, &mut env) {
            first = false;
            // Each frame: rx 1 us + the whole forwarding path 5 us.
            assert_eq!(d, ns(6_000));
        }
        for s in env.take_log() {
            order.push(s);
        }
        // NIC 0 twice (its quota), NIC 1 once; NIC 1 is then empty and unmasked; NIC 0's
        // third frame; NIC 0 empty and unmasked.
        assert_eq!(
            order,
            vec![
                Signal::Forward(0),
                Signal::Forward(1),
                Signal::Forward(100),
                Signal::Unmask(1),
                Signal::Forward(2),
                Signal::Unmask(0),
            ]
        );
        assert_eq!(m.turns, 3);
    }

    #[test]
    fn feedback_leaves_frames_in_the_ring_until_the_output_drains() {
        let mut env = Script::new(&[2]);
        env.full[0] = true;
        env.above_half[0] = true;
        let mut m = Mogul::new(&cfg(100.0), vec![5]);
        m.schedule(0, &mut env);
        env.take_log();
        // The output queue is full: no frame taken, the thread blocks.
        assert_eq!(m.step(true, &mut env), Step::Done);
        assert_eq!((m.feedback_stops, env.rings[0].len()), (1, 2));
        // Still above half (no longer full): nothing. Down to half: the thread is woken.
        env.full[0] = false;
        m.output_drained(&mut env);
        assert!(env.take_log().is_empty());
        env.above_half[0] = false;
        m.output_drained(&mut env);
        assert_eq!(env.take_log(), vec![Signal::Wake(m.thread())]);
        assert_eq!(m.step(true, &mut env), Step::Run(ns(6_000)));
    }

    #[test]
    fn the_cycle_limit_puts_the_thread_to_sleep_until_the_next_period() {
        // 0.01 % of 10 ms = 1 us: one 6 us frame uses the budget up.
        let mut env = Script::new(&[3]);
        let mut m = Mogul::new(&cfg(0.01), vec![5]);
        m.schedule(0, &mut env);
        assert_eq!(m.step(true, &mut env), Step::Run(ns(6_000)));
        assert_eq!(m.step(false, &mut env), Step::Done);
        assert_eq!(m.sleeps, 1);
        env.take_log();
        // A new interrupt does not wake a sleeping thread; the period start does.
        m.schedule(0, &mut env);
        assert!(env.take_log().is_empty());
        m.period_start(&mut env);
        assert_eq!(env.take_log(), vec![Signal::Wake(m.thread())]);
        assert_eq!(m.step(true, &mut env), Step::Run(ns(6_000)));
    }
}
