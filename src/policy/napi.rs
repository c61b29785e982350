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

use crate::packet::Packet;
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
    pub(crate) cfg: NapiConfig,
    pub(crate) poll_list: VecDeque<usize>,
    /// NET_RX raised and not yet handled.
    pub(crate) raised: bool,
    pub(crate) ksoftirqd_awake: bool,
    pub(crate) timeslice: SimTime,
    pub(crate) slice_start: SimTime,
    // The running net_rx_action.
    pub(crate) budget_left: u32,
    pub(crate) t_end: SimTime,
    pub(crate) dev: Option<usize>,
    pub(crate) work: u32,
    pub(crate) current: Option<Packet>,
    pub(crate) restarts: u32,
    pub(crate) softirq_start: SimTime,
    pub(crate) polls: u64,
    pub(crate) complete: u64,
    pub(crate) time_squeeze: u64,
    pub(crate) softirq_runs: u64,
    pub(crate) ksoftirqd_wakeups: u64,
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
