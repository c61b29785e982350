//! Linux NAPI (net/core/dev.c, kernel/softirq.c; NAPI_HOWTO).
//!
//! The receive interrupt handler (isr_entry + isr_exit) leaves the device's interrupt
//! masked and schedules a poll (napi_schedule): the device goes on the poll list and the
//! NET_RX softirq is raised. `net_rx_action` polls the devices on the list in turn; a
//! poll takes at most `weight` frames (each frame: `rx_per_packet` plus the whole
//! protocol path `netisr_per_packet`, since netif_receive_skb runs ip_rcv, ip_forward
//! and dev_queue_xmit inline). A device whose poll took fewer than `weight` frames is
//! done: napi_complete takes it off the list and re-enables its interrupt -- and then
//! re-checks its ring, so that a frame that arrived in between raises the interrupt
//! again instead of rotting until the next frame (the "rotting packet" race of
//! NAPI_HOWTO); one that used its whole weight goes to the tail
//! of the list. A softirq run stops when it has handled `netdev_budget` frames or run
//! `netdev_budget_usecs` (counted in `time_squeeze`) and raises NET_RX again.
//! `__do_softirq` restarts itself while softirqs are pending, at most `max_restart`
//! times and for at most `max_restart_ns`; after that it wakes ksoftirqd, a kernel
//! thread at normal priority that shares the CPU round robin with user processes, and
//! while ksoftirqd is awake raised softirqs are left to it.
//!
//! Parameters: per NIC `weight` (default 64); [`NapiConfig`] (`kernel.napi`) with
//! defaults `netdev_budget` 300 [frames], `netdev_budget_usecs` 2,000 [us],
//! `max_restart` 10, `max_restart_ns` 2,000,000 (MAX_SOFTIRQ_TIME 2 ms).
//!
//! Counters: `napi.polls`, `napi.complete`, `napi.time_squeeze`, `napi.softirq_runs`, `napi.ksoftirqd_wakeups`.

use crate::cpu::Level;
use crate::packet::Packet;
use crate::policy::env::RxEnv;
use crate::policy::interrupt::HandlerMode;
use crate::policy::{BuildCtx, PolicyConfig, RxPolicy};
use crate::problems::Problems;
use crate::softirq::NET_RX;
use crate::task::{PolicyTask, Step, Task};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// A NAPI NIC's own parameters (`nics[i].policy` with `"kind": "napi"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NapiParams {
    /// Packets one poll of this device may take (default 64).
    #[serde(default = "d_weight")]
    pub weight: u32,
}

fn d_weight() -> u32 {
    64
}

impl NapiParams {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("weight", self.weight as u64, 1, "packet");
    }
}

/// System-wide NAPI and softirq parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NapiConfig {
    /// Frames one NET_RX softirq run may handle [frames] (default 300).
    #[serde(default = "d_budget")]
    pub netdev_budget: u32,
    /// Time one NET_RX softirq run may take [us] (default 2000).
    #[serde(default = "d_budget_us")]
    pub netdev_budget_usecs: f64,
    /// Times __do_softirq restarts before waking ksoftirqd [restarts] (default 10).
    #[serde(default = "d_restart")]
    pub max_restart: u32,
    /// Time __do_softirq may run before waking ksoftirqd [ns] (default 2,000,000).
    #[serde(default = "d_restart_ns")]
    pub max_restart_ns: f64,
}

fn d_budget() -> u32 {
    300
}
fn d_budget_us() -> f64 {
    2000.0
}
fn d_restart() -> u32 {
    10
}
fn d_restart_ns() -> f64 {
    2_000_000.0
}

impl Default for NapiConfig {
    fn default() -> Self {
        NapiConfig {
            netdev_budget: d_budget(),
            netdev_budget_usecs: d_budget_us(),
            max_restart: d_restart(),
            max_restart_ns: d_restart_ns(),
        }
    }
}

impl NapiConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("netdev_budget", self.netdev_budget as u64, 1, "frame");
        p.period_ns("netdev_budget_usecs", self.netdev_budget_usecs * 1e3);
        p.period_ns("max_restart_ns", self.max_restart_ns);
    }
}

/// NAPI state: the poll list, the running net_rx_action, __do_softirq's restarts and
/// ksoftirqd.
#[derive(Clone, Debug)]
pub struct Napi {
    cfg: NapiConfig,
    /// Each NIC's weight [frames per poll] (0: not a NAPI device).
    weight: Vec<u32>,
    poll_list: VecDeque<usize>,
    /// NET_RX raised and not yet handled.
    raised: bool,
    ksoftirqd_awake: bool,
    timeslice: SimTime,
    slice_start: SimTime,
    // The running net_rx_action.
    budget_left: u32,
    t_end: SimTime,
    dev: Option<usize>,
    work: u32,
    current: Option<Packet>,
    restarts: u32,
    softirq_start: SimTime,
    polls: u64,
    complete: u64,
    time_squeeze: u64,
    softirq_runs: u64,
    ksoftirqd_wakeups: u64,
    /// Registry index (for ksoftirqd's task).
    kind: u8,
}

impl Napi {
    /// State from the parameters, each NIC's weight (0 for NICs that do not use NAPI)
    /// and the scheduler's time slice (for ksoftirqd).
    pub fn new(cfg: &NapiConfig, weight: Vec<u32>, timeslice: SimTime) -> Napi {
        Napi {
            cfg: cfg.clone(),
            weight,
            poll_list: VecDeque::new(),
            raised: false,
            ksoftirqd_awake: false,
            timeslice,
            slice_start: SimTime::ZERO,
            budget_left: 0,
            t_end: SimTime::ZERO,
            dev: None,
            work: 0,
            current: None,
            restarts: 0,
            softirq_start: SimTime::ZERO,
            polls: 0,
            complete: 0,
            time_squeeze: 0,
            softirq_runs: 0,
            ksoftirqd_wakeups: 0,
            kind: 0,
        }
    }

    /// ksoftirqd: a kernel thread at normal priority (the User level).
    pub fn ksoftirqd(&self) -> Task {
        Task::policy(self.kind, 0, Level::User)
    }

    /// Frames held by a poll step.
    pub fn held(&self) -> usize {
        self.current.is_some() as usize
    }

    /// napi_schedule (from the receive interrupt): put `nic` on the poll list and raise
    /// NET_RX.
    pub fn schedule(&mut self, nic: usize, env: &mut impl RxEnv) {
        if !self.poll_list.contains(&nic) {
            self.poll_list.push_back(nic);
        }
        self.raise(env);
    }

    /// raise_softirq(NET_RX): to ksoftirqd while it is awake, else to the dispatcher.
    fn raise(&mut self, env: &mut impl RxEnv) {
        self.raised = true;
        if self.ksoftirqd_awake {
            env.wake(self.ksoftirqd());
        } else {
            env.raise_softirq(NET_RX);
        }
    }

    /// The softirq dispatcher reached the NET_RX bit: start a net_rx_action unless
    /// ksoftirqd has the job. Returns whether it started.
    pub fn softirq_begin(&mut self, now: SimTime) -> bool {
        if self.ksoftirqd_awake || !self.raised {
            return false;
        }
        if self.restarts == 0 {
            self.softirq_start = now;
        }
        self.action_start(now);
        true
    }

    fn action_start(&mut self, now: SimTime) {
        self.raised = false;
        self.softirq_runs += 1;
        self.budget_left = self.cfg.netdev_budget;
        self.t_end = now + SimTime::from_ns_f64(self.cfg.netdev_budget_usecs * 1e3);
        self.dev = None;
    }

    /// One step of net_rx_action in softirq context; at its end, __do_softirq's restart
    /// or hand-over to ksoftirqd.
    pub fn softirq_step(&mut self, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        if let Step::Run(d) = self.action_step(env) {
            return Step::Run(d);
        }
        if self.raised {
            let elapsed = now.saturating_sub(self.softirq_start);
            self.restarts += 1;
            if self.restarts < self.cfg.max_restart
                && elapsed < SimTime::from_ns_f64(self.cfg.max_restart_ns)
            {
                // Restart at once (the dispatcher picks NET_RX again).
                env.raise_softirq(NET_RX);
            } else {
                self.restarts = 0;
                self.ksoftirqd_awake = true;
                self.ksoftirqd_wakeups += 1;
                env.wake(self.ksoftirqd());
            }
        } else {
            self.restarts = 0;
        }
        Step::Done
    }

    /// ksoftirqd: run net_rx_action while NET_RX is raised; after a time slice, yield
    /// to other normal-priority tasks (cond_resched under a fair scheduler); sleep when
    /// nothing is pending.
    pub fn ksoftirqd_step(&mut self, first: bool, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        if first {
            if !self.raised {
                self.ksoftirqd_awake = false;
                return Step::Done;
            }
            self.slice_start = now;
            self.action_start(now);
        }
        loop {
            if let Step::Run(d) = self.action_step(env) {
                return Step::Run(d);
            }
            if !self.raised {
                self.ksoftirqd_awake = false;
                return Step::Done;
            }
            if env.user_level_contended() && now.saturating_sub(self.slice_start) >= self.timeslice
            {
                return Step::Yield;
            }
            self.action_start(now);
        }
    }

    /// One frame or device switch of net_rx_action.
    fn action_step(&mut self, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        if let Some(p) = self.current.take() {
            env.forward(p);
        }
        loop {
            let dev = match self.dev {
                Some(d) => d,
                None => {
                    if self.budget_left == 0 || now >= self.t_end {
                        if !self.poll_list.is_empty() {
                            self.time_squeeze += 1;
                            self.raise(env);
                        }
                        return Step::Done;
                    }
                    let Some(&d) = self.poll_list.front() else {
                        return Step::Done;
                    };
                    self.dev = Some(d);
                    self.work = 0;
                    self.polls += 1;
                    return Step::Run(env.poll_call_cost(d));
                }
            };
            let weight = self.weight[dev];
            debug_assert!(weight > 0, "only NAPI devices are on the poll list");
            if self.work < weight
                && self.budget_left > 0
                && let Some(p) = env.rx_pop(dev)
            {
                self.work += 1;
                self.budget_left -= 1;
                self.current = Some(p);
                let d = env.rx_cost(dev, p.bytes) + env.forward_cost();
                return Step::Run(d);
            }
            // The poll of `dev` is over.
            self.dev = None;
            self.poll_list.pop_front();
            if self.work < weight && env.rx_empty(dev) {
                self.complete += 1;
                // napi_complete, then re-enable the interrupt and re-check the ring:
                // frames already there raise the interrupt again (irq_unmask), so none
                // is left waiting for a later frame's interrupt.
                env.irq_unmask(dev);
            } else {
                self.poll_list.push_back(dev);
            }
        }
    }

    /// Publish the counters.
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        for (k, v) in [
            ("polls", self.polls),
            ("complete", self.complete),
            ("time_squeeze", self.time_squeeze),
            ("softirq_runs", self.softirq_runs),
            ("ksoftirqd_wakeups", self.ksoftirqd_wakeups),
        ] {
            c.insert(format!("napi.{k}"), v as f64);
        }
    }
}

impl RxPolicy for Napi {
    const HANDLER: HandlerMode = HandlerMode::Schedule;
    const SWI_BITS: u32 = NET_RX;
    const SWI_NAME: Option<&'static str> = Some("NET_RX softirq");

    fn serves(p: &PolicyConfig) -> bool {
        matches!(p, PolicyConfig::Napi(_))
    }
    fn build(ctx: &BuildCtx<'_>) -> Option<Self> {
        ctx.nics_of::<Self>().next()?;
        let weight = ctx
            .nics
            .iter()
            .map(|p| match p {
                PolicyConfig::Napi(n) => n.weight,
                _ => 0,
            })
            .collect();
        let mut n = Napi::new(&ctx.kernel.napi, weight, ctx.timeslice);
        n.kind = ctx.kind;
        Some(n)
    }
    fn held(&self) -> usize {
        Napi::held(self)
    }
    fn counters(&self, _nic_names: &[String], c: &mut BTreeMap<String, f64>) {
        Napi::counters(self, c)
    }
    fn task_name(_task: PolicyTask, _nic_names: &[String]) -> String {
        "ksoftirqd".into()
    }
    fn schedule(&mut self, nic: usize, env: &mut impl RxEnv) {
        Napi::schedule(self, nic, env)
    }
    fn step(&mut self, _task: PolicyTask, first: bool, env: &mut impl RxEnv) -> Step {
        self.ksoftirqd_step(first, env)
    }
    fn swi_begin(&mut self, _bit: u32, env: &mut impl RxEnv) -> bool {
        self.softirq_begin(env.now())
    }
    fn swi_step(&mut self, _bit: u32, env: &mut impl RxEnv) -> Step {
        self.softirq_step(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::env::mock::{Script, Signal, ns};

    fn napi(budget: u32, weight: u32, nics: usize) -> Napi {
        let cfg = NapiConfig {
            netdev_budget: budget,
            ..NapiConfig::default()
        };
        Napi::new(&cfg, vec![weight; nics], SimTime::from_ns_f64(1e6))
    }

    /// Run one softirq from the dispatcher's start to its end: the steps' lengths.
    fn softirq(n: &mut Napi, env: &mut Script) -> Vec<SimTime> {
        assert!(n.softirq_begin(env.now));
        let mut runs = Vec::new();
        while let Step::Run(d) = n.softirq_step(env) {
            runs.push(d);
        }
        runs
    }

    #[test]
    fn a_poll_under_its_weight_completes_and_unmasks_the_device() {
        let mut env = Script::new(&[2]);
        let mut n = napi(300, 64, 1);
        n.schedule(0, &mut env);
        assert_eq!(env.take_log(), vec![Signal::Raise(NET_RX)]);
        // The poll call (0.5 us), two frames each received and forwarded (1 + 5 us).
        assert_eq!(
            softirq(&mut n, &mut env),
            vec![ns(500), ns(6_000), ns(6_000)]
        );
        assert_eq!(
            env.take_log(),
            vec![Signal::Forward(0), Signal::Forward(1), Signal::Unmask(0)]
        );
        assert_eq!((n.polls, n.complete), (1, 1));
    }

    #[test]
    fn a_device_that_uses_its_weight_goes_to_the_tail_and_the_budget_squeezes() {
        // Weight 2, budget 3: NIC 0 (3 frames) and NIC 1 (2 frames).
        let mut env = Script::new(&[3, 2]);
        let mut n = napi(3, 2, 2);
        n.schedule(0, &mut env);
        n.schedule(1, &mut env);
        env.take_log();
        let runs = softirq(&mut n, &mut env);
        // NIC 0: call + 2 frames (weight used: to the tail); NIC 1: call + 1 frame, then
        // the budget is spent with NIC 1 still on the list: time_squeeze, NET_RX again,
        // and __do_softirq restarts.
        assert_eq!(runs.len(), 5);
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Forward(0),
                Signal::Forward(1),
                Signal::Forward(100),
                Signal::Raise(NET_RX),
                Signal::Raise(NET_RX),
            ]
        );
        assert_eq!(n.time_squeeze, 1);
        assert!(n.held() == 0 && n.poll_list.len() == 2);
    }

    #[test]
    fn after_max_restart_restarts_the_work_goes_to_ksoftirqd() {
        // Budget 1 and a long ring: every run ends squeezed.
        let mut env = Script::new(&[40]);
        let mut n = napi(1, 64, 1);
        n.schedule(0, &mut env);
        for _ in 0..10 {
            softirq(&mut n, &mut env);
        }
        let log = env.take_log();
        assert_eq!(log.last(), Some(&Signal::Wake(n.ksoftirqd())));
        assert_eq!(n.ksoftirqd_wakeups, 1);
        // While ksoftirqd is awake, the dispatcher leaves NET_RX to it.
        assert!(!n.softirq_begin(env.now));
        // ksoftirqd polls until nothing is pending, then sleeps.
        let mut steps = 0;
        let mut first = true;
        while let Step::Run(_) = n.ksoftirqd_step(first, &mut env) {
            first = false;
            steps += 1;
        }
        // 30 frames left, each a poll call and a frame (budget 1 per net_rx_action).
        assert_eq!(steps, 60);
        assert!(env.rings[0].is_empty() && !n.ksoftirqd_awake);
    }
}
