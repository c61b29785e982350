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

use crate::engine::Scheduler;
use crate::host::{Event, Host, Step, Task};
use crate::kernel::NET_RX;
use crate::packet::Packet;
use crate::policy::PolicyConfig;
use crate::problems::Problems;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

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

/// NAPI state.
#[derive(Clone, Debug)]
pub struct Napi {
    cfg: NapiConfig,
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
}

impl Napi {
    /// State from the parameters.
    pub fn new(cfg: &NapiConfig, timeslice: SimTime) -> Napi {
        Napi {
            cfg: cfg.clone(),
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

impl Host {
    /// napi_schedule: put `nic` on the poll list and raise NET_RX.
    pub(crate) fn napi_schedule(&mut self, nic: usize) {
        let Some(n) = &mut self.napi else { return };
        if !n.poll_list.contains(&nic) {
            n.poll_list.push_back(nic);
        }
        self.raise_net_rx();
    }

    fn raise_net_rx(&mut self) {
        let Some(n) = &mut self.napi else { return };
        n.raised = true;
        if n.ksoftirqd_awake {
            self.wake(Task::Ksoftirqd);
        } else {
            self.swi_raise(NET_RX);
        }
    }

    /// The softirq dispatcher reached the NET_RX bit: start a net_rx_action unless
    /// ksoftirqd has the job. Returns whether it started.
    pub(crate) fn net_rx_begin(&mut self, now: SimTime) -> bool {
        let Some(n) = &mut self.napi else {
            return false;
        };
        if n.ksoftirqd_awake || !n.raised {
            return false;
        }
        if n.restarts == 0 {
            n.softirq_start = now;
        }
        Self::net_rx_action_start(n, now);
        true
    }

    fn net_rx_action_start(n: &mut Napi, now: SimTime) {
        n.raised = false;
        n.softirq_runs += 1;
        n.budget_left = n.cfg.netdev_budget;
        n.t_end = now + SimTime::from_ns_f64(n.cfg.netdev_budget_usecs * 1e3);
        n.dev = None;
    }

    /// One step of net_rx_action in softirq context; at its end, __do_softirq's restart
    /// or hand-over to ksoftirqd.
    pub(crate) fn net_rx_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        match self.net_rx_action_step(now, s) {
            Step::Run(d) => Step::Run(d),
            _ => {
                let Some(n) = &mut self.napi else {
                    return Step::Done;
                };
                if n.raised {
                    let elapsed = now.saturating_sub(n.softirq_start);
                    n.restarts += 1;
                    if n.restarts < n.cfg.max_restart
                        && elapsed < SimTime::from_ns_f64(n.cfg.max_restart_ns)
                    {
                        // Restart at once (the dispatcher picks NET_RX again).
                        self.swi_raise(NET_RX);
                    } else {
                        n.restarts = 0;
                        n.ksoftirqd_awake = true;
                        n.ksoftirqd_wakeups += 1;
                        self.wake(Task::Ksoftirqd);
                    }
                } else {
                    n.restarts = 0;
                }
                Step::Done
            }
        }
    }

    /// ksoftirqd: run net_rx_action while NET_RX is raised; after a time slice, yield
    /// to other normal-priority tasks (cond_resched under a fair scheduler); sleep when
    /// nothing is pending.
    pub(crate) fn ksoftirqd_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let Some(n) = &mut self.napi else {
            return Step::Done;
        };
        if first {
            if !n.raised {
                n.ksoftirqd_awake = false;
                return Step::Done;
            }
            n.slice_start = now;
            Self::net_rx_action_start(n, now);
        }
        loop {
            match self.net_rx_action_step(now, s) {
                Step::Run(d) => return Step::Run(d),
                _ => {
                    let contended = self.user_level_contended();
                    let n = self.napi.as_mut().expect("napi");
                    if !n.raised {
                        n.ksoftirqd_awake = false;
                        return Step::Done;
                    }
                    if contended && now.saturating_sub(n.slice_start) >= n.timeslice {
                        return Step::Yield;
                    }
                    Self::net_rx_action_start(n, now);
                }
            }
        }
    }

    /// One frame or device switch of net_rx_action.
    fn net_rx_action_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        if let Some(p) = self.napi.as_mut().and_then(|n| n.current.take()) {
            self.forward(p, now, s);
        }
        loop {
            let n = self.napi.as_mut().expect("napi");
            let dev = match n.dev {
                Some(d) => d,
                None => {
                    if n.budget_left == 0 || now >= n.t_end {
                        if !n.poll_list.is_empty() {
                            n.time_squeeze += 1;
                            self.raise_net_rx();
                        }
                        return Step::Done;
                    }
                    let Some(&d) = n.poll_list.front() else {
                        return Step::Done;
                    };
                    n.dev = Some(d);
                    n.work = 0;
                    n.polls += 1;
                    return Step::Run(self.drivers[d].poll_call());
                }
            };
            let weight = match self.policies[dev] {
                PolicyConfig::Napi { weight } => weight,
                _ => unreachable!("only NAPI devices are on the poll list"),
            };
            if n.work < weight
                && n.budget_left > 0
                && let Some(p) = self.nics[dev].rx_ring.pop()
            {
                n.work += 1;
                n.budget_left -= 1;
                n.current = Some(p);
                let d = self.drivers[dev].rx(p.bytes) + self.netisr.forward_cost();
                return Step::Run(d);
            }
            // The poll of `dev` is over.
            n.dev = None;
            n.poll_list.pop_front();
            if n.work < weight && self.nics[dev].rx_ring.is_empty() {
                n.complete += 1;
                // napi_complete, then re-enable the interrupt and re-check the ring:
                // frames already there raise the interrupt again (irq_unmask), so none
                // is left waiting for a later frame's interrupt.
                self.irq_unmask(dev, now, s);
            } else {
                n.poll_list.push_back(dev);
            }
        }
    }

    /// Frames held by a NAPI poll step.
    pub(crate) fn napi_held(&self) -> usize {
        self.napi
            .as_ref()
            .map_or(0, |n| n.current.is_some() as usize)
    }
}
