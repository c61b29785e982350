//! Linux NAPI (net/core/dev.c, kernel/softirq.c; Documentation/networking/napi.rst and
//! scaling.rst), per core.
//!
//! **The softirq poll.** The receive interrupt handler (isr_entry + isr_exit) leaves the
//! device's interrupt masked and schedules a poll (napi_schedule): the device goes on the
//! poll list of the core the interrupt ran on (`softnet_data.poll_list`) and NET_RX is
//! raised there. That core's `net_rx_action` polls the devices on its list in turn; a
//! poll takes at most `weight` frames (each frame: `rx_per_packet` plus the whole
//! protocol path `netisr_per_packet`, since netif_receive_skb runs ip_rcv, ip_forward
//! and dev_queue_xmit inline). A device whose poll took fewer than `weight` frames is
//! done: napi_complete_done takes it off the list and the driver re-enables its
//! interrupt -- and then re-checks its ring, so that a frame that arrived in between
//! raises the interrupt again instead of rotting until the next frame (the "rotting
//! packet" race of NAPI_HOWTO); one that used its whole weight goes to the tail of the
//! list. A softirq run stops when it has handled `netdev_budget` frames or run
//! `netdev_budget_usecs` (counted in `time_squeeze`) and raises NET_RX again.
//! `__do_softirq` restarts itself while softirqs are pending, at most `max_restart`
//! times and for at most `max_restart_ns`; after that it wakes the core's ksoftirqd, a
//! kernel thread at normal priority that shares the core round robin with user
//! processes, and while it is awake raised softirqs are left to it. Each core has its
//! own poll list, softirq state and ksoftirqd.
//!
//! **Deferred hard interrupts** (`defer_hard_irqs`, `gro_flush_timeout_ns`, the
//! device's `napi_defer_hard_irqs` and `gro_flush_timeout`): napi_complete_done resets
//! the device's count to `defer_hard_irqs` after a poll that found work; while the count
//! is above zero each completion decrements it and, if `gro_flush_timeout_ns` is set,
//! leaves the interrupt masked and arms the device's hrtimer instead, pinned to the
//! core; when it fires (napi_watchdog) the device is scheduled again on that core. After
//! `defer_hard_irqs` empty polls in a row the interrupt is re-enabled.
//!
//! **Preferred busy polling** (Linux 5.11, net/core/dev.c `napi_busy_loop`,
//! `busy_poll_stop`, `napi_poll`, `napi_complete_done`, `napi_watchdog`): a process's
//! socket busy loop ([`Napi::busy_step`]) takes at most its SO_BUSY_POLL_BUDGET frames a
//! poll; with SO_PREFER_BUSY_POLL it marks a device the softirq or a thread owns
//! NAPI_STATE_PREFER_BUSY_POLL, whose next full-weight poll there completes it instead
//! of polling it again, and busy_poll_stop arms the hrtimer and leaves the interrupt
//! masked when `defer_hard_irqs` and `gro_flush_timeout_ns` are set. The hrtimer is
//! restarted by each arming. **IRQ suspension** (`irq_suspend_timeout_ns`, Linux 6.13,
//! `napi_suspend_irqs`, `napi_resume_irqs`): an epoll busy loop with the option that
//! ends with events re-arms the timer for the suspension; one that times out schedules
//! the device.
//!
//! **Threaded NAPI** (`threaded`, `/sys/class/net/<dev>/threaded`): napi_schedule wakes
//! the device's kernel thread `napi/<dev>` instead of raising NET_RX; the thread
//! (napi_threaded_poll) polls the device, `weight` frames a poll, until a poll completes
//! it, at normal priority: it yields to other normal-priority tasks after a time slice.
//! It runs on the core that woke it (the scheduler's wake-affine choice; the thread is
//! not pinned).
//!
//! **RPS** (`rps_cpus`, the rx queue's `/sys/class/net/<dev>/queues/rx-N/rps_cpus`):
//! netif_receive_skb asks get_rps_cpu for a core, `rps_cpus[reciprocal_scale(hash,
//! len)]` with the frame's flow hash (the NIC's RSS hash, skb->hash), and
//! enqueue_to_backlog puts the frame on that core's backlog (`input_pkt_queue`, at most
//! `netdev_max_backlog` frames, else dropped and counted in softnet_stat's `dropped` --
//! in results, a drop at ipintrq, the protocol input queue); the polling core pays
//! `rps_per_packet` for this. A backlog that was empty is scheduled as a NAPI device of
//! its own on its core (process_backlog, weight `dev_weight`), with NET_RX raised there
//! (by IPI when it is another core: the IPI's own cost is not modelled, and it is sent
//! at once rather than at the end of the running net_rx_action). Its poll runs the
//! protocol path (`netisr_per_packet`) for each frame. Every frame of a flow has the
//! same hash: a flow is steered to one core.
//!
//! **XDP** (`xdp`, [`XdpParams`]): a program the driver runs on each frame in its poll,
//! straight from the RX ring before an skb exists; XDP_DROP ends the frame there,
//! XDP_REDIRECT sends it out of its flow's output port without the protocol path,
//! XDP_TX back out of the port and channel it came in on, and XDP_PASS lets it go on as
//! without XDP, having paid the program.
//!
//! **Transmit completions** (the NIC's `tx_completion`): each frame sent leaves a
//! completion that can raise the device's interrupt (through its moderation); a poll
//! first reclaims up to `tx_work_limit` of them (mlx5e_poll_tx_cq, ixgbe_clean_tx_irq;
//! `driver.tx_per_packet` each) and runs the start routine for the freed descriptors,
//! then does its receive work; a poll that leaves completions is not done, like one
//! that used its weight. Such a device's channel counters are kept under mlx5's
//! `ethtool -S` names (`Channel`).
//!
//! Parameters: per NIC [`NapiParams`] (`weight` 64, `threaded` false, `defer_hard_irqs`
//! 0, `gro_flush_timeout_ns` 0, `irq_suspend_timeout_ns` 0, `watchdog_irq_ns` 0 (the
//! hrtimer interrupt's CPU time, charged to the poll napi_watchdog schedules),
//! `rps_cpus` none, `xdp` none, `tx_work_limit` 128 \[completions\]); [`NapiConfig`]
//! (`kernel.napi`):
//! `netdev_budget` 300 \[frames\], `netdev_budget_usecs` 2,000 \[us\], `max_restart` 10,
//! `max_restart_ns` 2,000,000 (MAX_SOFTIRQ_TIME 2 ms), `dev_weight` 64 \[frames\],
//! `netdev_max_backlog` 1,000 \[frames\], `rps_per_packet` 0 \[cost\].
//!
//! Counters: `napi.polls`, `napi.complete`, `napi.time_squeeze`, `napi.softirq_runs`,
//! `napi.ksoftirqd_wakeups`; when a device uses the mechanism, `napi.deferred_irqs` (completions that left the interrupt
//! masked), `napi.watchdog` (hrtimer polls), `napi.thread_polls`, `napi.rps_steered`,
//! `napi.backlog_dropped`; with socket busy polling `napi.busy_polls`,
//! `napi.busy_poll_packets`, and with SO_PREFER_BUSY_POLL
//! `napi.prefer_busy_poll_yields`; with `irq_suspend_timeout_ns`, `napi.irq_suspends` and
//! `napi.irq_resumes`; with XDP, per NIC, `<nic>.rx_xdp_drop`, `<nic>.rx_xdp_redirect`
//! (mlx5's ethtool -S names) and `<nic>.xdp_pass`; for a NIC whose transmit completions
//! interrupt, per channel `k` of its port, `<port>.ch<k>_poll`, `.ch<k>_events`,
//! `.ch<k>_arm`, `.tx<k>_cqes` (mlx5's names: polls, interrupts that scheduled it,
//! completions that re-armed it, transmit completions reclaimed); on a host with several cores, per core as in
//! /proc/net/softnet_stat: `cpu<k>.softnet.processed` (frames that went up the
//! protocol path on the core, __netif_receive_skb_core's count: an RPS-steered frame
//! counts once, on its target, when process_backlog takes it), `.dropped` (frames
//! enqueue_to_backlog refused because the core's backlog was full), `.time_squeeze`,
//! `.received_rps` (backlog schedulings by IPI from another core,
//! rps_trigger_softirq).

use crate::model::cost::{Cost, CostParam};
use crate::model::cpu::Level;
use crate::model::packet::Packet;
use crate::model::policy::env::{CostEnv, RingEnv, RxEnv, SchedEnv, StackEnv};
use crate::model::policy::interrupt::HandlerMode;
use crate::model::policy::xdp::{Xdp, XdpAction, XdpParams};
use crate::model::policy::{BuildCtx, PolicyConfig, RxPolicy, SocketBusyPoll};
use crate::sim::problems::Problems;
use crate::model::kernel::softirq::NET_RX;
use crate::model::cpu::task::{PolicyTask, Step, Task};
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// A NAPI NIC's own parameters (`nics[i].policy` with `"kind": "napi"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NapiParams {
    /// Packets one poll of this device may take (default 64).
    #[serde(default = "d_weight")]
    #[schemars(range(min = 1))]
    pub weight: u32,
    /// Poll in the device's own kernel thread, `napi/<dev>`, instead of the NET_RX
    /// softirq (`/sys/class/net/<dev>/threaded`; default false).
    #[serde(default)]
    pub threaded: bool,
    /// napi_defer_hard_irqs: empty polls after which the interrupt is re-enabled, while
    /// the hrtimer of `gro_flush_timeout_ns` polls instead \[polls\] (default 0: off).
    #[serde(default)]
    pub defer_hard_irqs: u32,
    /// gro_flush_timeout: the delay of that hrtimer \[ns\] (default 0: off; with it 0,
    /// `defer_hard_irqs` has no effect, as in the kernel).
    #[serde(default)]
    pub gro_flush_timeout_ns: f64,
    /// irq_suspend_timeout (Linux 6.13, per NAPI instance through netdev-genl's
    /// napi-set; Damato and Karsten, "Suspend IRQs during application busy periods"):
    /// when a process busy-polling in epoll_wait() with SO_PREFER_BUSY_POLL
    /// (`user.busy_poll_us`, `user.prefer_busy_poll`) gets events, napi_suspend_irqs
    /// arms the device's hrtimer for this long, so its interrupt stays masked while the
    /// application keeps finding work; when its busy loop times out without events,
    /// napi_resume_irqs schedules the device, and the `defer_hard_irqs` /
    /// `gro_flush_timeout_ns` behaviour takes over again \[ns\] (default 0: off).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub irq_suspend_timeout_ns: f64,
    /// CPU time of the interrupt in which the device's hrtimer expires and
    /// napi_watchdog schedules its poll (the local APIC timer's entry and exit,
    /// hrtimer_interrupt, napi_watchdog's napi_schedule and the softirq's start),
    /// charged to the poll it schedules \[ns\] (default 0: not modelled). What the
    /// device's own interrupt costs (`driver.isr_entry` + `driver.isr_exit`) is the
    /// natural estimate: the same entry, a handler that only schedules the poll, the
    /// same exit.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub watchdog_irq_ns: f64,
    /// RPS: the cores the device's received frames are steered to by flow hash
    /// (rps_cpus of its receive queues; default empty: RPS off).
    #[serde(default)]
    pub rps_cpus: Vec<u16>,
    /// An XDP program attached to the device, run in its poll on every frame before an
    /// skb exists (`ip link set dev <dev> xdp obj ...`; default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xdp: Option<XdpParams>,
    /// Transmit completions one poll reclaims at most, before its receive work, when
    /// the NIC's transmit completions interrupt (`tx_completion`): more left means the
    /// poll is not done (mlx5's MLX5E_TX_CQ_POLL_BUDGET, 128, the default; ixgbe's
    /// tx_work_limit is 256) \[completions\].
    #[serde(default = "d_tx_work_limit", skip_serializing_if = "is_d_tx_work_limit")]
    #[schemars(range(min = 1))]
    pub tx_work_limit: u32,
}

fn d_weight() -> u32 {
    64
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

fn d_tx_work_limit() -> u32 {
    128
}

fn is_d_tx_work_limit(v: &u32) -> bool {
    *v == d_tx_work_limit()
}

impl Default for NapiParams {
    fn default() -> Self {
        NapiParams {
            weight: d_weight(),
            threaded: false,
            defer_hard_irqs: 0,
            gro_flush_timeout_ns: 0.0,
            irq_suspend_timeout_ns: 0.0,
            watchdog_irq_ns: 0.0,
            rps_cpus: Vec::new(),
            xdp: None,
            tx_work_limit: d_tx_work_limit(),
        }
    }
}

impl NapiParams {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("weight", self.weight as u64, 1, "packet");
        p.at_least("tx_work_limit", self.tx_work_limit as u64, 1, "completion");
        for (name, v) in [
            ("gro_flush_timeout_ns", self.gro_flush_timeout_ns),
            ("irq_suspend_timeout_ns", self.irq_suspend_timeout_ns),
            ("watchdog_irq_ns", self.watchdog_irq_ns),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                p.push(name, format!("must be a duration of 0 ns or more, got {v}"));
            }
        }
        let mut seen = self.rps_cpus.clone();
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            p.push("rps_cpus", "lists a core twice (it is a set of cores)".to_string());
        }
        if let Some(x) = &self.xdp {
            p.at("xdp", |p| x.validate(p));
        }
    }
}

/// How net_rx_action walks its poll list.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RxAction {
    /// Linux 2.6 to 3.19: one live list; a device that used its weight goes to its tail
    /// and may be polled again in the same run; the budget is checked before each poll.
    #[default]
    LiveList,
    /// Linux 4.0 on (commit d75b1ade, "net: less interrupt masking in NAPI"): the run
    /// takes the list as it was when it started and polls each device once; devices
    /// that used their weight and devices scheduled meanwhile wait for the next run;
    /// the budget is checked after each poll.
    Spliced,
}

/// System-wide NAPI and softirq parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NapiConfig {
    /// Frames one NET_RX softirq run may handle \[frames\] (default 300).
    #[serde(default = "d_budget")]
    #[schemars(range(min = 1))]
    pub netdev_budget: u32,
    /// Time one NET_RX softirq run may take \[us\] (default 2000).
    #[serde(default = "d_budget_us")]
    pub netdev_budget_usecs: f64,
    /// Times __do_softirq restarts before waking ksoftirqd \[restarts\] (default 10).
    #[serde(default = "d_restart")]
    pub max_restart: u32,
    /// Time __do_softirq may run before waking ksoftirqd \[ns\] (default 2,000,000).
    #[serde(default = "d_restart_ns")]
    pub max_restart_ns: f64,
    /// Frames one poll of a core's RPS backlog may take (net.core.dev_weight) \[frames\]
    /// (default 64).
    #[serde(default = "d_weight")]
    #[schemars(range(min = 1))]
    pub dev_weight: u32,
    /// Length of each core's RPS backlog (net.core.netdev_max_backlog) \[frames\]
    /// (default 1000).
    #[serde(default = "d_backlog")]
    #[schemars(range(min = 1))]
    pub netdev_max_backlog: u32,
    /// CPU cost of steering one frame to a backlog (get_rps_cpu and enqueue_to_backlog),
    /// on the polling core \[cost\] (default 0).
    #[serde(default)]
    pub rps_per_packet: CostParam,
    /// How net_rx_action walks its poll list: `live-list` (Linux 2.6-3.19) or
    /// `spliced` (Linux 4.0 on) (default `live-list`).
    #[serde(default)]
    pub net_rx_action: RxAction,
    /// CPU cost of one round of napi_busy_loop besides the driver's poll: the bottom-half
    /// disable and enable, the socket check, cpu_relax \[cost\] (default 100 ns, an
    /// estimate; more than 0: it paces a loop that finds nothing).
    #[serde(default = "d_busy_loop")]
    pub busy_poll_loop: CostParam,
}

fn d_busy_loop() -> CostParam {
    CostParam::ns(100.0)
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
fn d_backlog() -> u32 {
    1000
}

impl Default for NapiConfig {
    fn default() -> Self {
        NapiConfig {
            netdev_budget: d_budget(),
            netdev_budget_usecs: d_budget_us(),
            max_restart: d_restart(),
            max_restart_ns: d_restart_ns(),
            dev_weight: d_weight(),
            netdev_max_backlog: d_backlog(),
            rps_per_packet: CostParam::default(),
            net_rx_action: RxAction::LiveList,
            busy_poll_loop: d_busy_loop(),
        }
    }
}

impl NapiConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("netdev_budget", self.netdev_budget as u64, 1, "frame");
        p.period_ns("netdev_budget_usecs", self.netdev_budget_usecs * 1e3);
        p.period_ns("max_restart_ns", self.max_restart_ns);
        p.at_least("dev_weight", self.dev_weight as u64, 1, "frame");
        p.at_least("netdev_max_backlog", self.netdev_max_backlog as u64, 1, "frame");
        if let Err(e) = self.rps_per_packet.check() {
            p.push("rps_per_packet", e);
        }
        match self.busy_poll_loop.check() {
            Err(e) => p.push("busy_poll_loop", e),
            Ok(()) if self.busy_poll_loop.mean_ns(1.0) <= 0.0 => {
                p.push("busy_poll_loop", "must be more than 0 ns")
            }
            Ok(()) => {}
        }
    }
}

/// The bit of [`PolicyTask::nic`] that marks a core's ksoftirqd (the rest: the core);
/// without it the task is the kernel thread of threaded NAPI device `nic`.
const KSOFTIRQD: u16 = 0x8000;

/// A frame taken by a poll step, and where it goes when the step ends.
#[derive(Clone, Copy, Debug)]
struct Held {
    p: Packet,
    /// `Some(core)`: to that core's backlog (RPS); `None`: up the protocol path here.
    to: Option<u16>,
    /// The XDP verdict that ended its way here, if one did (drop, redirect).
    xdp: Option<XdpAction>,
}

/// One NAPI device's channel counters, under the names mlx5's `ethtool -S` gives a
/// channel (`struct mlx5e_ch_stats` and the SQ's `cqes`, en_stats.h; en_txrx.c,
/// en_tx.c): kept for a NIC whose poll reclaims transmit completions
/// (`tx_completion`), whose queue is channel `index` of port `port`.
#[derive(Clone, Debug, Default)]
struct Channel {
    port: String,
    index: u16,
    /// Polls of the device (`ch<k>_poll`, `ch_stats->poll++` at mlx5e_napi_poll's entry).
    poll: u64,
    /// Interrupts that scheduled it (`ch<k>_events`, mlx5e_completion_event).
    events: u64,
    /// Polls that completed it and re-enabled its interrupt (`ch<k>_arm`).
    arm: u64,
    /// Transmit completions its polls reclaimed (`tx<k>_cqes`, mlx5e_poll_tx_cq).
    cqes: u64,
}

impl Channel {
    fn counters(&self, c: &mut BTreeMap<String, f64>) {
        let (p, k) = (&self.port, self.index);
        c.insert(format!("{p}.ch{k}_poll"), self.poll as f64);
        c.insert(format!("{p}.ch{k}_events"), self.events as f64);
        c.insert(format!("{p}.ch{k}_arm"), self.arm as f64);
        c.insert(format!("{p}.tx{k}_cqes"), self.cqes as f64);
    }
}

/// A device NAPI polls: a NIC, or a core's RPS backlog.
#[derive(Clone, Debug, Default)]
struct Dev {
    weight: u32,
    threaded: bool,
    defer_hard_irqs: u32,
    gro_flush_timeout: SimTime,
    irq_suspend_timeout: SimTime,
    /// CPU time of the hrtimer interrupt that schedules a poll (`watchdog_irq_ns`).
    watchdog_irq: SimTime,
    /// napi_watchdog scheduled the device: its next poll pays `watchdog_irq`.
    watchdog_fired: bool,
    rps: Vec<u16>,
    /// Its XDP program, if any.
    xdp: Option<Xdp>,
    /// Transmit completions a poll reclaims at most.
    tx_work_limit: u32,
    /// The last poll left transmit completions unreclaimed: it is not done.
    tx_left: bool,
    /// Its channel's counters, kept when the NIC's poll reclaims its transmit
    /// completions (see [`Channel`]).
    channel: Option<Channel>,
    /// On a poll list, or its thread has it (NAPI_STATE_SCHED).
    scheduled: bool,
    /// napi->defer_hard_irqs_count.
    defer_count: u32,
    /// NAPI_STATE_PREFER_BUSY_POLL: a busy loop with SO_PREFER_BUSY_POLL found the
    /// device scheduled by the softirq or its thread, which then completes it at its
    /// next full-weight poll instead of polling it again.
    prefer_busy_poll: bool,
    /// When the device's hrtimer (napi->timer) fires, if it is armed: hrtimer_start
    /// restarts an armed timer, so an alarm for any other time is stale.
    timer_at: Option<SimTime>,
    // Its thread's poll in progress (threaded devices).
    thread_work: u32,
    thread_polling: bool,
    thread_current: Option<Held>,
    thread_slice_start: SimTime,
}

/// A busy loop in progress (napi_busy_loop, net/core/dev.c) on device `dev`.
#[derive(Clone, Debug)]
struct BusyLoop {
    dev: usize,
    deadline: SimTime,
    /// It took the device (NAPI_STATE_SCHED | NAPI_STATE_IN_BUSY_POLL).
    owned: bool,
    /// A poll round is in progress, with the frames it took.
    polling: bool,
    work: u32,
    /// busy_poll_stop's last poll is in progress.
    stopping: bool,
    /// busy_poll_stop armed the hrtimer (SO_PREFER_BUSY_POLL with napi_defer_hard_irqs
    /// and gro_flush_timeout): a last poll that uses its whole budget leaves the device
    /// idle with its interrupt masked instead of scheduling it.
    skip_schedule: bool,
    /// The socket's options: SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET.
    opts: SocketBusyPoll,
    current: Option<Held>,
}

/// One core's softirq state (its softnet_data): the poll list, the running
/// net_rx_action, __do_softirq's restarts, its ksoftirqd and its RPS backlog.
#[derive(Clone, Debug, Default)]
struct Softnet {
    poll_list: VecDeque<usize>,
    /// The running net_rx_action's own list and its repoll list (spliced mode).
    list: VecDeque<usize>,
    repoll: VecDeque<usize>,
    /// NET_RX raised and not yet handled.
    raised: bool,
    ksoftirqd_awake: bool,
    slice_start: SimTime,
    // The running net_rx_action.
    budget_left: i64,
    t_end: SimTime,
    dev: Option<usize>,
    work: u32,
    current: Option<Held>,
    restarts: u32,
    softirq_start: SimTime,
    /// input_pkt_queue: frames RPS steered here.
    backlog: VecDeque<Packet>,
    // softnet_stat.
    processed: u64,
    dropped: u64,
    time_squeeze: u64,
    received_rps: u64,
}

/// NAPI state: each device's, and each core's poll list, softirq and ksoftirqd.
#[derive(Clone, Debug)]
pub struct Napi {
    cfg: NapiConfig,
    rps_cost: Cost,
    /// Devices: the NICs by index (weight 0: not a NAPI device), then each core's backlog.
    devs: Vec<Dev>,
    /// The number of NICs (the index of core 0's backlog device).
    nics: usize,
    cores: Vec<Softnet>,
    timeslice: SimTime,
    polls: u64,
    complete: u64,
    softirq_runs: u64,
    ksoftirqd_wakeups: u64,
    deferred_irqs: u64,
    watchdog: u64,
    thread_polls: u64,
    rps_steered: u64,
    busy: Option<BusyLoop>,
    busy_loop_cost: Cost,
    busy_polls: u64,
    busy_packets: u64,
    /// Polls by the softirq or a NAPI thread that completed a device marked
    /// NAPI_STATE_PREFER_BUSY_POLL instead of polling it again.
    prefer_yields: u64,
    /// Whether a busy loop with SO_PREFER_BUSY_POLL has run (its counters are shown).
    prefer_used: bool,
    /// napi_suspend_irqs and napi_resume_irqs calls (irq_suspend_timeout).
    irq_suspends: u64,
    irq_resumes: u64,
    /// Registry index (for its tasks and alarms).
    kind: u8,
}

impl Napi {
    /// State from the parameters, each NIC's parameters (`None` for NICs that do not
    /// use NAPI), the number of cores, the CPU clock \[MHz\] and the scheduler's time
    /// slice (for ksoftirqd and the NAPI threads).
    pub fn new(
        cfg: &NapiConfig,
        nics: &[Option<&NapiParams>],
        cores: usize,
        clock_mhz: f64,
        timeslice: SimTime,
    ) -> Napi {
        let mut devs: Vec<Dev> = nics
            .iter()
            .map(|p| match p {
                Some(p) => Dev {
                    weight: p.weight,
                    threaded: p.threaded,
                    defer_hard_irqs: p.defer_hard_irqs,
                    gro_flush_timeout: SimTime::from_ns_f64(p.gro_flush_timeout_ns),
                    irq_suspend_timeout: SimTime::from_ns_f64(p.irq_suspend_timeout_ns),
                    watchdog_irq: SimTime::from_ns_f64(p.watchdog_irq_ns),
                    rps: p.rps_cpus.clone(),
                    xdp: p.xdp.as_ref().map(|x| Xdp::new(x, clock_mhz)),
                    tx_work_limit: p.tx_work_limit,
                    ..Dev::default()
                },
                None => Dev::default(),
            })
            .collect();
        devs.extend((0..cores).map(|_| Dev {
            weight: cfg.dev_weight,
            ..Dev::default()
        }));
        Napi {
            cfg: cfg.clone(),
            rps_cost: cfg.rps_per_packet.build(clock_mhz),
            devs,
            nics: nics.len(),
            cores: vec![Softnet::default(); cores],
            timeslice,
            polls: 0,
            complete: 0,
            softirq_runs: 0,
            ksoftirqd_wakeups: 0,
            deferred_irqs: 0,
            watchdog: 0,
            thread_polls: 0,
            rps_steered: 0,
            busy: None,
            busy_loop_cost: cfg.busy_poll_loop.build(clock_mhz),
            busy_polls: 0,
            busy_packets: 0,
            prefer_yields: 0,
            prefer_used: false,
            irq_suspends: 0,
            irq_resumes: 0,
            kind: 0,
        }
    }

    /// Keep channel counters for each NAPI NIC whose transmit completions interrupt,
    /// under its port's name and its queue's index (`queues`, by NIC).
    pub fn with_channels(mut self, queues: &[crate::model::policy::QueueOf]) -> Napi {
        for (d, q) in self.devs[..self.nics].iter_mut().zip(queues) {
            if d.weight > 0 && q.tx_completion {
                d.channel = Some(Channel {
                    port: q.port.clone(),
                    index: q.index,
                    ..Channel::default()
                });
            }
        }
        self
    }

    /// The start of a poll of NIC `dev`: the driver's poll call, and when its transmit
    /// completions interrupt, the reclaim of up to `tx_work_limit` of them first, as
    /// mlx5e_napi_poll (mlx5e_poll_tx_cq) and ixgbe_poll (ixgbe_clean_tx_irq) do before
    /// their receive work, then the start routine for the freed descriptors (the
    /// queue's wake-up). Returns the CPU time: the call and `driver.tx_per_packet` per
    /// completion.
    fn poll_begin(&mut self, dev: usize, env: &mut (impl RingEnv + CostEnv)) -> SimTime {
        let mut call = env.poll_call_cost(dev);
        let d = &mut self.devs[dev];
        if std::mem::take(&mut d.watchdog_fired) {
            call += d.watchdog_irq;
        }
        let Some(ch) = &mut d.channel else {
            return call;
        };
        ch.poll += 1;
        let (k, left) = env.reclaim_tx(dev, d.tx_work_limit);
        ch.cqes += k as u64;
        d.tx_left = left > 0;
        if k == 0 {
            return call;
        }
        let t = env.txeof_cost(dev, k);
        env.if_start(dev);
        call + t
    }

    /// Whether the poll of NIC `dev` that took `work` frames of its `weight` is done:
    /// fewer than its weight, an empty ring, and no transmit completion left.
    fn poll_done(&self, work: u32, weight: u32, dev: usize, env: &impl RingEnv) -> bool {
        work < weight && env.rx_empty(dev) && !self.devs[dev].tx_left
    }

    /// Core `c`'s ksoftirqd: a kernel thread at normal priority (the User level).
    pub fn ksoftirqd(&self, c: usize) -> Task {
        Task::policy(self.kind, KSOFTIRQD as usize | c, Level::User)
    }

    /// The kernel thread of threaded NAPI device `nic`, at normal priority.
    pub fn napi_thread(&self, nic: usize) -> Task {
        Task::policy(self.kind, nic, Level::User)
    }

    /// Frames held by poll steps and waiting in the backlogs.
    pub fn held(&self) -> usize {
        self.cores
            .iter()
            .map(|c| c.current.is_some() as usize + c.backlog.len())
            .sum::<usize>()
            + self
                .devs
                .iter()
                .filter(|d| d.thread_current.is_some())
                .count()
            + self
                .busy
                .as_ref()
                .is_some_and(|b| b.current.is_some()) as usize
    }

    /// napi_schedule on the current core (from the receive interrupt, or the hrtimer):
    /// wake the device's thread, or put it on the core's poll list and raise NET_RX.
    pub fn schedule(&mut self, dev: usize, env: &mut (impl StackEnv + SchedEnv)) {
        let c = env.core();
        self.schedule_on(c, dev, env);
    }

    fn schedule_on(&mut self, c: usize, dev: usize, env: &mut (impl StackEnv + SchedEnv)) {
        let d = &mut self.devs[dev];
        if d.scheduled {
            return;
        }
        d.scheduled = true;
        if d.threaded {
            env.wake_on(c, self.napi_thread(dev));
        } else {
            self.cores[c].poll_list.push_back(dev);
            self.raise(c, env);
        }
    }

    /// raise_softirq(NET_RX) on core `c`: to its ksoftirqd while it is awake, else to
    /// the core's dispatcher.
    fn raise(&mut self, c: usize, env: &mut (impl StackEnv + SchedEnv)) {
        self.cores[c].raised = true;
        if self.cores[c].ksoftirqd_awake {
            env.wake_on(c, self.ksoftirqd(c));
        } else {
            env.raise_softirq_on(c, NET_RX);
        }
    }

    /// The softirq dispatcher of the current core reached the NET_RX bit: start a
    /// net_rx_action unless ksoftirqd has the job. Returns whether it started.
    pub fn softirq_begin(&mut self, env: &mut impl RxEnv) -> bool {
        let now = env.now();
        let sn = &mut self.cores[env.core()];
        if sn.ksoftirqd_awake || !sn.raised {
            return false;
        }
        if sn.restarts == 0 {
            sn.softirq_start = now;
        }
        self.action_start(env.core(), now);
        true
    }

    fn action_start(&mut self, c: usize, now: SimTime) {
        self.softirq_runs += 1;
        let sn = &mut self.cores[c];
        sn.raised = false;
        sn.budget_left = self.cfg.netdev_budget as i64;
        if self.cfg.net_rx_action == RxAction::Spliced {
            sn.list = std::mem::take(&mut sn.poll_list);
        }
        sn.t_end = now + SimTime::from_ns_f64(self.cfg.netdev_budget_usecs * 1e3);
        sn.dev = None;
    }

    /// One step of net_rx_action in softirq context; at its end, __do_softirq's restart
    /// or hand-over to ksoftirqd.
    pub fn softirq_step(&mut self, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        let c = env.core();
        if let Step::Run(d) = self.action_step(c, env) {
            return Step::Run(d);
        }
        let sn = &mut self.cores[c];
        if sn.raised {
            let elapsed = now.saturating_sub(sn.softirq_start);
            sn.restarts += 1;
            if sn.restarts < self.cfg.max_restart
                && elapsed < SimTime::from_ns_f64(self.cfg.max_restart_ns)
            {
                // Restart at once (the dispatcher picks NET_RX again).
                env.raise_softirq_on(c, NET_RX);
            } else {
                sn.restarts = 0;
                sn.ksoftirqd_awake = true;
                self.ksoftirqd_wakeups += 1;
                env.wake_on(c, self.ksoftirqd(c));
            }
        } else {
            sn.restarts = 0;
        }
        Step::Done
    }

    /// ksoftirqd of the current core: run net_rx_action while NET_RX is raised; after a
    /// time slice, yield to other normal-priority tasks (cond_resched under a fair
    /// scheduler); sleep when nothing is pending.
    pub fn ksoftirqd_step(&mut self, first: bool, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        let c = env.core();
        if first {
            if !self.cores[c].raised {
                self.cores[c].ksoftirqd_awake = false;
                return Step::Done;
            }
            self.cores[c].slice_start = now;
            self.action_start(c, now);
        }
        loop {
            if let Step::Run(d) = self.action_step(c, env) {
                return Step::Run(d);
            }
            if !self.cores[c].raised {
                self.cores[c].ksoftirqd_awake = false;
                return Step::Done;
            }
            if env.user_level_contended()
                && now.saturating_sub(self.cores[c].slice_start) >= self.timeslice
            {
                return Step::Yield;
            }
            self.action_start(c, now);
        }
    }

    /// One frame or device switch of core `c`'s net_rx_action. A poll takes up to the
    /// device's whole weight whatever is left of the budget (`n->poll(n, weight)`), so
    /// the budget can go below zero. [`RxAction::LiveList`] (Linux 2.6-3.19): before
    /// each poll, a spent budget or time ends the run (`time_squeeze` if devices are
    /// left) and re-raises NET_RX; a device that used its weight goes to the tail of the
    /// live list and may be polled again in this run. [`RxAction::Spliced`] (Linux 4.0
    /// on): the run polls the devices that were on the list when it started, each once;
    /// after each poll a spent budget or time ends it (`time_squeeze`); devices that
    /// used their weight (repoll) and devices scheduled meanwhile wait for the next run.
    fn action_step(&mut self, c: usize, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        if let Some(h) = self.cores[c].current.take() {
            self.deliver(h, env);
        }
        let spliced = self.cfg.net_rx_action == RxAction::Spliced;
        loop {
            let sn = &mut self.cores[c];
            let dev = match sn.dev {
                Some(d) => d,
                None => {
                    let list = if spliced { &sn.list } else { &sn.poll_list };
                    if !spliced && (sn.budget_left <= 0 || now >= sn.t_end) {
                        if !sn.poll_list.is_empty() {
                            sn.time_squeeze += 1;
                            self.raise(c, env);
                        }
                        return Step::Done;
                    }
                    let Some(&d) = list.front() else {
                        if spliced {
                            self.action_end(c, env);
                        }
                        return Step::Done;
                    };
                    sn.dev = Some(d);
                    sn.work = 0;
                    self.polls += 1;
                    if d < self.nics {
                        return Step::Run(self.poll_begin(d, env));
                    }
                    // process_backlog: no driver call to pay for.
                    continue;
                }
            };
            let weight = self.devs[dev].weight;
            debug_assert!(weight > 0, "only NAPI devices are on the poll list");
            if sn.work < weight
                && let Some((h, d)) = self.take(c, dev, env)
            {
                let sn = &mut self.cores[c];
                sn.work += 1;
                sn.budget_left -= 1;
                sn.current = Some(h);
                return Step::Run(d);
            }
            // The poll of `dev` is over.
            let sn = &mut self.cores[c];
            let work = sn.work;
            sn.dev = None;
            if spliced {
                sn.list.pop_front();
            } else {
                sn.poll_list.pop_front();
            }
            let done = if dev < self.nics {
                self.poll_done(work, weight, dev, env)
            } else {
                work < weight && self.dev_empty(c, dev, env)
            };
            if done {
                self.complete(dev, work, env);
            } else if self.devs[dev].prefer_busy_poll {
                // __napi_poll: more work, but busy polling is preferred: exit early.
                self.prefer_yields += 1;
                if self.napi_complete_done(dev, work, env) {
                    self.schedule_on(c, dev, env);
                }
            } else if spliced {
                self.cores[c].repoll.push_back(dev);
            } else {
                self.cores[c].poll_list.push_back(dev);
            }
            let sn = &mut self.cores[c];
            if spliced && (sn.budget_left <= 0 || now >= sn.t_end) {
                sn.time_squeeze += 1;
                self.action_end(c, env);
                return Step::Done;
            }
        }
    }

    /// The end of a spliced net_rx_action on core `c`: the devices left unpolled, then
    /// those scheduled during the run, then those that used their weight, make the
    /// poll list; NET_RX is raised again if it is not empty.
    fn action_end(&mut self, c: usize, env: &mut (impl StackEnv + SchedEnv)) {
        let sn = &mut self.cores[c];
        let mut list = std::mem::take(&mut sn.list);
        list.append(&mut sn.poll_list);
        list.append(&mut sn.repoll);
        sn.poll_list = list;
        if !sn.poll_list.is_empty() {
            self.raise(c, env);
        }
    }

    /// Whether `dev` has nothing left to poll (core `c`'s backlog when it is one).
    fn dev_empty(&self, c: usize, dev: usize, env: &impl RingEnv) -> bool {
        if dev < self.nics {
            env.rx_empty(dev)
        } else {
            debug_assert_eq!(dev - self.nics, c, "a backlog is polled by its core");
            self.cores[c].backlog.is_empty()
        }
    }

    /// Take the next frame of `dev` on core `c`, and the CPU time of handling it: the
    /// driver's receive work and, without RPS, the protocol path; with RPS, the
    /// steering; for a backlog, the protocol path.
    ///
    /// A frame that goes up the protocol path here counts in core `c`'s `processed`,
    /// which Linux bumps in __netif_receive_skb_core, on the core that runs it. With
    /// RPS, netif_receive_skb sends every frame get_rps_cpu places, on this core too,
    /// to enqueue_to_backlog instead: the frame counts once, when its target's
    /// process_backlog takes it (and not at all if that backlog drops it).
    fn take(&mut self, c: usize, dev: usize, env: &mut (impl RingEnv + CostEnv + StackEnv)) -> Option<(Held, SimTime)> {
        if dev >= self.nics {
            let p = self.cores[c].backlog.pop_front()?;
            self.cores[c].processed += 1;
            let h = Held {
                p,
                to: None,
                xdp: None,
            };
            return Some((h, env.forward_cost()));
        }
        let p = env.rx_pop(dev)?;
        // The XDP program first, on the frame as the ring holds it.
        let mut program = SimTime::ZERO;
        if let Some(x) = &mut self.devs[dev].xdp {
            program = env.kernel_cost(&x.program);
            match x.action {
                XdpAction::Drop | XdpAction::Redirect | XdpAction::Tx => {
                    let rx = env.kernel_cost(&x.rx);
                    match x.action {
                        XdpAction::Drop => x.drop += 1,
                        XdpAction::Redirect => x.redirect += 1,
                        _ => x.tx += 1,
                    }
                    let h = Held {
                        p,
                        to: None,
                        xdp: Some(x.action),
                    };
                    return Some((h, rx + program));
                }
                XdpAction::Pass => x.pass += 1,
            }
        }
        let rx = env.rx_cost(dev, p.bytes) + program;
        let rps = &self.devs[dev].rps;
        if rps.is_empty() {
            self.cores[c].processed += 1;
            let h = Held {
                p,
                to: None,
                xdp: None,
            };
            return Some((h, rx + env.forward_cost()));
        }
        // get_rps_cpu: reciprocal_scale(skb->hash, map->len).
        let k = ((env.flow_hash(&p) as u64 * rps.len() as u64) >> 32) as usize;
        let to = Some(rps[k]);
        self.rps_steered += 1;
        let h = Held { p, to, xdp: None };
        Some((h, rx + env.kernel_cost(&self.rps_cost)))
    }

    /// The end of a frame's step: up the protocol path (the output interface), or
    /// enqueue_to_backlog of the core RPS chose, scheduling its backlog if it was idle.
    fn deliver(&mut self, h: Held, env: &mut (impl StackEnv + SchedEnv)) {
        match h.xdp {
            Some(XdpAction::Drop) => return env.xdp_drop(h.p),
            // ndo_xdp_xmit on the output port's queue for this core.
            Some(XdpAction::Redirect) => return env.xdp_redirect(h.p),
            // The receiving channel's own transmit queue.
            Some(XdpAction::Tx) => return env.xdp_tx(h.p),
            Some(XdpAction::Pass) | None => {}
        }
        let Some(t) = h.to else {
            env.forward(h.p);
            return;
        };
        let t = t as usize;
        let sn = &mut self.cores[t];
        if sn.backlog.len() >= self.cfg.netdev_max_backlog as usize {
            sn.dropped += 1;
            env.backlog_drop(h.p);
            return;
        }
        sn.backlog.push_back(h.p);
        let dev = self.nics + t;
        if !self.devs[dev].scheduled {
            if t != env.core() {
                self.cores[t].received_rps += 1;
            }
            self.schedule_on(t, dev, env);
        }
    }

    /// napi_complete_done for `dev` after a poll that took `work` frames: off its list
    /// (a backlog: that is all), then the interrupt re-enabled -- or, while hard
    /// interrupts are deferred, the hrtimer armed instead.
    fn complete(&mut self, dev: usize, work: u32, env: &mut impl SchedEnv) {
        if !self.napi_complete_done(dev, work, env) {
            return;
        }
        // The driver's DIM sample, then re-enable the interrupt and re-check the ring:
        // frames already there raise the interrupt again (irq_unmask), so none is left
        // waiting for a later frame's interrupt.
        let d = &mut self.devs[dev];
        if let Some(ch) = &mut d.channel {
            ch.arm += 1;
        }
        env.poll_completed(dev);
        env.irq_unmask(dev);
    }

    /// napi_complete_done (net/core/dev.c, Linux 5.11) for `dev` after a poll that took
    /// `work` frames: off its list, NAPI_STATE_PREFER_BUSY_POLL cleared; for a NIC, the
    /// deferral count reset by a poll that found work, and while it is above zero,
    /// decremented with the hrtimer armed for `gro_flush_timeout` instead of the
    /// interrupt. Returns whether the driver may re-enable the interrupt (false for a
    /// backlog, which has none).
    fn napi_complete_done(&mut self, dev: usize, work: u32, env: &mut impl SchedEnv) -> bool {
        self.complete += 1;
        let d = &mut self.devs[dev];
        d.scheduled = false;
        d.prefer_busy_poll = false;
        if dev >= self.nics {
            return false;
        }
        if work > 0 {
            d.defer_count = d.defer_hard_irqs;
        }
        if d.defer_count > 0 {
            d.defer_count -= 1;
            if d.gro_flush_timeout > SimTime::ZERO {
                self.deferred_irqs += 1;
                self.arm_timer(dev, env);
                return false;
            }
        }
        true
    }

    /// hrtimer_start of `dev`'s timer for its `gro_flush_timeout`, pinned to the current
    /// core; an armed timer is restarted (the earlier expiry no longer fires).
    fn arm_timer(&mut self, dev: usize, env: &mut impl SchedEnv) {
        let t = self.devs[dev].gro_flush_timeout;
        self.arm_timer_for(dev, t, env);
    }

    /// hrtimer_start of `dev`'s timer for `after`, pinned to the current core.
    fn arm_timer_for(&mut self, dev: usize, after: SimTime, env: &mut impl SchedEnv) {
        self.devs[dev].timer_at = Some(env.now() + after);
        env.set_alarm(after, self.kind, dev as u16);
    }

    /// The end of a busy loop in epoll_wait() (ep_busy_loop, fs/eventpoll.c, Linux
    /// 6.13) of a process with SO_PREFER_BUSY_POLL, on `dev`: events found,
    /// napi_suspend_irqs arms the hrtimer for `irq_suspend_timeout`; none (the loop
    /// timed out), napi_resume_irqs schedules the device. Nothing when the device has
    /// no `irq_suspend_timeout`.
    fn epoll_busy_loop_end(&mut self, dev: usize, opts: SocketBusyPoll, env: &mut impl RxEnv) {
        let t = self.devs[dev].irq_suspend_timeout;
        if !(opts.epoll && opts.prefer_busy_poll) || t == SimTime::ZERO {
            return;
        }
        if env.socket_ready() {
            self.irq_suspends += 1;
            self.arm_timer_for(dev, t, env);
        } else {
            self.irq_resumes += 1;
            let c = env.core();
            self.schedule_on(c, dev, env);
        }
    }

    /// napi_watchdog: `dev`'s hrtimer fired on the current core; schedule its poll
    /// (clearing NAPI_STATE_PREFER_BUSY_POLL) unless a busy loop or the softirq has it.
    /// An expiry the timer was restarted past is stale and does nothing.
    pub fn watchdog(&mut self, dev: usize, env: &mut (impl StackEnv + SchedEnv)) {
        let d = &mut self.devs[dev];
        if d.timer_at != Some(env.now()) {
            return;
        }
        d.timer_at = None;
        if !d.scheduled {
            d.prefer_busy_poll = false;
            d.watchdog_fired = d.watchdog_irq > SimTime::ZERO;
            self.watchdog += 1;
            self.schedule(dev, env);
        }
    }

    /// napi_threaded_poll of device `dev`'s thread: poll, `weight` frames a poll, until
    /// a poll completes the device; after a time slice, yield to other normal-priority
    /// tasks.
    pub fn thread_step(&mut self, dev: usize, first: bool, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        if first {
            if !self.devs[dev].scheduled {
                return Step::Done;
            }
            self.devs[dev].thread_slice_start = now;
        }
        if let Some(h) = self.devs[dev].thread_current.take() {
            self.deliver(h, env);
        }
        let c = env.core();
        loop {
            let d = &mut self.devs[dev];
            if !d.thread_polling {
                d.thread_polling = true;
                d.thread_work = 0;
                self.thread_polls += 1;
                return Step::Run(self.poll_begin(dev, env));
            }
            let weight = d.weight;
            if d.thread_work < weight
                && let Some((h, cost)) = self.take(c, dev, env)
            {
                let d = &mut self.devs[dev];
                d.thread_work += 1;
                d.thread_current = Some(h);
                return Step::Run(cost);
            }
            let d = &mut self.devs[dev];
            d.thread_polling = false;
            let work = d.thread_work;
            if self.poll_done(work, weight, dev, env) {
                self.complete(dev, work, env);
                return Step::Done;
            }
            if self.devs[dev].prefer_busy_poll {
                // __napi_poll: busy polling is preferred; completed, or rescheduled
                // (on this thread) when napi_complete_done lets the interrupt back.
                self.prefer_yields += 1;
                if !self.napi_complete_done(dev, work, env) {
                    return Step::Done;
                }
                self.devs[dev].scheduled = true;
            }
            if env.user_level_contended()
                && now.saturating_sub(self.devs[dev].thread_slice_start) >= self.timeslice
            {
                return Step::Yield;
            }
        }
    }

    /// One step of a process's busy loop on NIC `dev` (napi_busy_loop with
    /// sk_busy_loop_end, net/core/dev.c; `start`: recv() found the socket empty and
    /// begins the loop, which ends at `deadline`; `opts`: the socket's
    /// SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET). Each round: if the device is idle,
    /// take it (SCHED and IN_BUSY_POLL: its interrupt, if it fires, can no longer
    /// schedule it) and poll it for up to the budget's frames, which go up the stack to
    /// the socket; a poll that empties the ring does not complete the device
    /// (napi_complete_done refuses in busy poll); if the softirq or a thread has the
    /// device, just spin -- marking it NAPI_STATE_PREFER_BUSY_POLL when the socket
    /// prefers busy polling, so that their next full-weight poll lets it go. The loop
    /// ends when the socket has a packet or the deadline passes; busy_poll_stop then
    /// polls once more and completes the device (re-enabling its interrupt unless
    /// deferred) or, if that poll used its whole budget, hands it to the softirq of the
    /// current core. With SO_PREFER_BUSY_POLL and both `defer_hard_irqs` and
    /// `gro_flush_timeout_ns` set, busy_poll_stop first resets the deferral count and
    /// arms the hrtimer, and a full last poll leaves the device idle with its interrupt
    /// masked (`skip_schedule`, Linux 5.11): the timer is the safety net. Returns
    /// `Done` when the loop is over.
    pub fn busy_step(
        &mut self,
        dev: usize,
        start: bool,
        deadline: SimTime,
        opts: SocketBusyPoll,
        env: &mut impl RxEnv,
    ) -> Step {
        let now = env.now();
        if start {
            self.prefer_used |= opts.prefer_busy_poll;
            self.busy = Some(BusyLoop {
                dev,
                deadline,
                owned: false,
                polling: false,
                work: 0,
                stopping: false,
                skip_schedule: false,
                opts,
                current: None,
            });
        }
        let Some(mut b) = self.busy.take() else {
            return Step::Done;
        };
        if let Some(h) = b.current.take() {
            self.deliver(h, env);
        }
        let c = env.core();
        let budget = b.opts.budget;
        if b.polling || b.stopping {
            if b.work < budget
                && let Some((h, d)) = self.take(c, b.dev, env)
            {
                b.work += 1;
                b.current = Some(h);
                self.busy_packets += 1;
                self.busy = Some(b);
                return Step::Run(d);
            }
            b.polling = false;
            if b.stopping {
                // busy_poll_stop: the driver's napi_complete_done now counts.
                if self.poll_done(b.work, budget, b.dev, env) {
                    self.complete(b.dev, b.work, env);
                } else if b.skip_schedule {
                    // __busy_poll_stop with skip_schedule: NAPI_STATE_SCHED cleared,
                    // the interrupt left masked, the hrtimer armed.
                    self.devs[b.dev].scheduled = false;
                } else {
                    self.devs[b.dev].scheduled = false;
                    self.schedule_on(c, b.dev, env);
                }
                self.epoll_busy_loop_end(b.dev, b.opts, env);
                return Step::Done;
            }
        }
        // napi_busy_loop polls before it asks sk_busy_loop_end / ep_busy_loop_end: the
        // first round always runs, so a zero window (epoll_wait() with
        // SO_PREFER_BUSY_POLL and busy_poll_usecs 0) is one poll.
        if !start && (env.socket_ready() || now >= b.deadline) {
            if !b.owned {
                self.epoll_busy_loop_end(b.dev, b.opts, env);
                return Step::Done;
            }
            b.stopping = true;
            b.work = 0;
            let d = &mut self.devs[b.dev];
            if b.opts.prefer_busy_poll {
                d.defer_count = d.defer_hard_irqs;
                if d.defer_count > 0 && d.gro_flush_timeout > SimTime::ZERO {
                    self.arm_timer(b.dev, env);
                    b.skip_schedule = true;
                }
            }
            let call = self.poll_begin(b.dev, env);
            self.busy = Some(b);
            return Step::Run(call);
        }
        if !b.owned {
            let d = &mut self.devs[b.dev];
            if d.scheduled {
                d.prefer_busy_poll |= b.opts.prefer_busy_poll;
            } else {
                d.scheduled = true;
                b.owned = true;
            }
        }
        let round = env.kernel_cost(&self.busy_loop_cost);
        if b.owned {
            b.polling = true;
            b.work = 0;
            self.busy_polls += 1;
            let call = self.poll_begin(b.dev, env);
            self.busy = Some(b);
            return Step::Run(round + call);
        }
        self.busy = Some(b);
        Step::Run(round)
    }

    /// Publish the counters (per core ones when there are several cores).
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        let squeeze: u64 = self.cores.iter().map(|s| s.time_squeeze).sum();
        let dropped: u64 = self.cores.iter().map(|s| s.dropped).sum();
        let nics = &self.devs[..self.nics];
        let defer = nics.iter().any(|d| {
            d.defer_hard_irqs > 0 && d.gro_flush_timeout > SimTime::ZERO
                || d.irq_suspend_timeout > SimTime::ZERO
        });
        let threaded = nics.iter().any(|d| d.threaded);
        let suspend = nics.iter().any(|d| d.irq_suspend_timeout > SimTime::ZERO);
        let rps = nics.iter().any(|d| !d.rps.is_empty());
        // The counters of a mechanism no device uses are left out.
        for (k, v, used) in [
            ("polls", self.polls, true),
            ("complete", self.complete, true),
            ("time_squeeze", squeeze, true),
            ("softirq_runs", self.softirq_runs, true),
            ("ksoftirqd_wakeups", self.ksoftirqd_wakeups, true),
            ("deferred_irqs", self.deferred_irqs, defer),
            ("watchdog", self.watchdog, defer),
            ("thread_polls", self.thread_polls, threaded),
            ("rps_steered", self.rps_steered, rps),
            ("backlog_dropped", dropped, rps),
            ("busy_polls", self.busy_polls, self.busy_polls > 0),
            ("busy_poll_packets", self.busy_packets, self.busy_polls > 0),
            ("prefer_busy_poll_yields", self.prefer_yields, self.prefer_used),
            ("irq_suspends", self.irq_suspends, suspend),
            ("irq_resumes", self.irq_resumes, suspend),
        ] {
            if used {
                c.insert(format!("napi.{k}"), v as f64);
            }
        }
        if self.cores.len() > 1 {
            for (i, s) in self.cores.iter().enumerate() {
                for (k, v) in [
                    ("processed", s.processed),
                    ("dropped", s.dropped),
                    ("time_squeeze", s.time_squeeze),
                    ("received_rps", s.received_rps),
                ] {
                    c.insert(format!("cpu{i}.softnet.{k}"), v as f64);
                }
            }
        }
    }
}

impl RxPolicy for Napi {
    const HANDLER: HandlerMode = HandlerMode::Schedule;
    const MANY_CORES: bool = true;
    const DRIVES_DIM: bool = true;
    const RECLAIMS_TX: bool = true;
    const SWI_BITS: u32 = NET_RX;
    const SWI_NAME: Option<&'static str> = Some("NET_RX softirq");
    /// Published once a busy loop has run ([`Napi::counters`]).
    const ONCE_COUNTED: &'static [&'static str] = &["napi.busy_polls", "napi.busy_poll_packets"];

    fn serves(p: &PolicyConfig) -> bool {
        matches!(p, PolicyConfig::Napi(_))
    }
    fn transmits_received(p: &PolicyConfig) -> bool {
        matches!(p, PolicyConfig::Napi(n)
            if n.xdp.as_ref().is_some_and(|x| x.action == XdpAction::Tx))
    }
    fn build(ctx: &BuildCtx<'_>) -> Option<Self> {
        ctx.nics_of::<Self>().next()?;
        let params: Vec<Option<&NapiParams>> = ctx
            .nics
            .iter()
            .map(|p| match p {
                PolicyConfig::Napi(n) => Some(n),
                _ => None,
            })
            .collect();
        let mut n = Napi::new(
            &ctx.kernel.napi,
            &params,
            ctx.cores,
            ctx.clock_mhz,
            ctx.timeslice,
        );
        n.kind = ctx.kind;
        Some(n.with_channels(ctx.queues))
    }
    fn validate_model(ctx: &BuildCtx<'_>, p: &mut Problems) {
        for (i, cfg) in ctx.nics_of::<Self>() {
            let PolicyConfig::Napi(n) = cfg else { continue };
            for &c in &n.rps_cpus {
                if c as usize >= ctx.cores {
                    p.push(
                        &format!("nics[{i}].policy.rps_cpus"),
                        format!(
                            "core {c} does not exist (the host has {} core{}: 0 to {})",
                            ctx.cores,
                            if ctx.cores == 1 { "" } else { "s" },
                            ctx.cores - 1
                        ),
                    );
                }
            }
        }
    }
    fn held(&self) -> usize {
        Napi::held(self)
    }
    fn backlog(&self, core: usize) -> Option<&VecDeque<Packet>> {
        self.cores.get(core).map(|s| &s.backlog)
    }
    fn counters(&self, nic_names: &[String], c: &mut BTreeMap<String, f64>) {
        Napi::counters(self, c);
        for (i, d) in self.devs[..self.nics].iter().enumerate() {
            if let Some(x) = &d.xdp {
                x.counters(&crate::model::policy::nic_name(nic_names, i as u16), c);
            }
            if let Some(ch) = &d.channel {
                ch.counters(c);
            }
        }
    }
    /// ksoftirqd's time is `%soft` (kernel/sched/cputime.c
    /// `irqtime_account_process_tick`: `this_cpu_ksoftirqd() == p` ->
    /// `CPUTIME_SOFTIRQ`); a device's `napi/<dev>` kthread's is `%sys` (its poll runs
    /// under `local_bh_disable()`, net/core/dev.c `napi_threaded_poll_loop`, not in a
    /// softirq: `CPUTIME_SYSTEM`).
    fn cputime(task: PolicyTask) -> crate::model::cpu::cputime::CpuTime {
        use crate::model::cpu::cputime::CpuTime;
        if task.nic & KSOFTIRQD != 0 {
            CpuTime::Soft
        } else {
            CpuTime::Sys
        }
    }
    fn task_name(task: PolicyTask, nic_names: &[String]) -> String {
        if task.nic & KSOFTIRQD != 0 {
            format!("ksoftirqd/{}", task.nic & !KSOFTIRQD)
        } else {
            format!("napi/{}", crate::model::policy::nic_name(nic_names, task.nic))
        }
    }
    fn schedule(&mut self, nic: usize, env: &mut (impl StackEnv + SchedEnv)) {
        // The interrupt's event (mlx5e_completion_event), whether or not the device
        // was already scheduled.
        if let Some(ch) = &mut self.devs[nic].channel {
            ch.events += 1;
        }
        Napi::schedule(self, nic, env)
    }
    fn step(&mut self, task: PolicyTask, first: bool, env: &mut impl RxEnv) -> Step {
        if task.nic & KSOFTIRQD != 0 {
            self.ksoftirqd_step(first, env)
        } else {
            self.thread_step(task.nic as usize, first, env)
        }
    }
    fn alarm(&mut self, arg: u16, env: &mut (impl StackEnv + SchedEnv)) {
        self.watchdog(arg as usize, env)
    }
    fn busy_poll(
        &mut self,
        nic: usize,
        start: bool,
        deadline: SimTime,
        opts: SocketBusyPoll,
        env: &mut impl RxEnv,
    ) -> Step {
        self.busy_step(nic, start, deadline, opts, env)
    }
    fn swi_begin(&mut self, _bit: u32, env: &mut impl RxEnv) -> bool {
        self.softirq_begin(env)
    }
    fn swi_step(&mut self, _bit: u32, env: &mut impl RxEnv) -> Step {
        self.softirq_step(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policy::env::mock::{Script, Signal, ns, pkt};

    fn napi_with(budget: u32, params: &[NapiParams], cores: usize) -> Napi {
        let cfg = NapiConfig {
            netdev_budget: budget,
            netdev_max_backlog: 3,
            ..NapiConfig::default()
        };
        let p: Vec<Option<&NapiParams>> = params.iter().map(Some).collect();
        Napi::new(&cfg, &p, cores, 1000.0, SimTime::from_ns_f64(1e6))
    }

    fn napi(budget: u32, weight: u32, nics: usize) -> Napi {
        let p = NapiParams {
            weight,
            ..NapiParams::default()
        };
        napi_with(budget, &vec![p; nics], 1)
    }

    /// Run one softirq from the dispatcher's start to its end: the steps' lengths.
    fn softirq(n: &mut Napi, env: &mut Script) -> Vec<SimTime> {
        assert!(n.softirq_begin(env));
        let mut runs = Vec::new();
        while let Step::Run(d) = n.softirq_step(env) {
            runs.push(d);
        }
        runs
    }

    /// A NIC whose transmit completions interrupt: each poll first reclaims up to
    /// `tx_work_limit` completions (the script's 200 ns each) and wakes the queue, and
    /// a poll that leaves some is not done, whatever its receive work: the device stays
    /// scheduled until a poll reclaims the rest, then is re-armed. Its channel's
    /// counters count the interrupt's event, each poll, the re-arm and the completions,
    /// under its port's name and channel number.
    #[test]
    fn a_poll_reclaims_transmit_completions_first_and_is_not_done_while_some_are_left() {
        let p = NapiParams {
            tx_work_limit: 4,
            ..NapiParams::default()
        };
        let mut n = napi_with(300, &[p], 1).with_channels(&[crate::model::policy::QueueOf {
            port: "eth1".into(),
            index: 2,
            tx_completion: true,
        }]);
        let mut env = Script::new(&[1]);
        env.tx_completions[0] = 6;
        RxPolicy::schedule(&mut n, 0, &mut env);
        env.take_log();
        // The poll call and 4 completions, then the one frame (rx + forward); the poll
        // is not done, so the device goes to the tail of the (live) list, and its next
        // poll reclaims the last 2, finds the ring empty and re-arms.
        assert_eq!(
            softirq(&mut n, &mut env),
            vec![ns(500 + 800), ns(6_000), ns(500 + 400)]
        );
        assert_eq!(
            env.take_log(),
            vec![
                Signal::IfStart(0),
                Signal::Forward(0),
                Signal::IfStart(0),
                Signal::Unmask(0)
            ]
        );
        assert_eq!(env.tx_completions[0], 0);
        let mut c = BTreeMap::new();
        RxPolicy::counters(&n, &[], &mut c);
        let got: Vec<(&str, f64)> = ["eth1.ch2_poll", "eth1.ch2_events", "eth1.ch2_arm", "eth1.tx2_cqes"]
            .iter()
            .map(|k| (*k, c[*k]))
            .collect();
        assert_eq!(
            got,
            [("eth1.ch2_poll", 2.0), ("eth1.ch2_events", 1.0), ("eth1.ch2_arm", 1.0), ("eth1.tx2_cqes", 6.0)]
        );
        // A NIC whose completions do not interrupt has no channel counters.
        let mut plain = napi(300, 64, 1).with_channels(&[crate::model::policy::QueueOf::default()]);
        let mut c = BTreeMap::new();
        RxPolicy::schedule(&mut plain, 0, &mut Script::new(&[0]));
        RxPolicy::counters(&plain, &[], &mut c);
        assert!(!c.keys().any(|k| k.contains("_poll")), "{c:?}");
    }

    /// The four verdicts of an XDP program, on a poll of three frames each (rx 1 us,
    /// forward 5 us in the script; the program 0.25 us, its receive without an skb
    /// 0.1 us): drop, redirect and tx cost the program's receive and run only and never
    /// reach the protocol path (no softnet `processed`), pass costs the program on top
    /// of the usual path; each verdict is counted.
    #[test]
    fn an_xdp_program_drops_redirects_sends_back_or_passes_each_frame_before_the_stack() {
        let xdp = |action: &str| -> NapiParams {
            let x: XdpParams = serde_json::from_value(match action {
                "pass" => serde_json::json!({ "action": "pass", "program": 250 }),
                a => serde_json::json!({ "action": a, "rx": 100, "program": 250 }),
            })
            .expect("xdp");
            let mut problems = Problems::default();
            x.validate(&mut problems);
            assert!(problems.is_empty(), "{problems:?}");
            NapiParams {
                xdp: Some(x),
                ..NapiParams::default()
            }
        };
        for (action, burst, signal) in [
            ("drop", ns(350), Signal::XdpDrop as fn(u64) -> Signal),
            ("redirect", ns(350), Signal::XdpRedirect),
            ("tx", ns(350), Signal::XdpTx),
            ("pass", ns(6_250), Signal::Forward),
        ] {
            let mut env = Script::new(&[3]);
            let mut n = napi_with(300, &[xdp(action)], 1);
            n.schedule(0, &mut env);
            env.take_log();
            assert_eq!(
                softirq(&mut n, &mut env),
                vec![ns(500), burst, burst, burst],
                "{action}"
            );
            assert_eq!(
                env.take_log(),
                vec![signal(0), signal(1), signal(2), Signal::Unmask(0)],
                "{action}"
            );
            let x = n.devs[0].xdp.as_ref().expect("xdp");
            assert_eq!((x.drop, x.redirect, x.tx, x.pass), match action {
                "drop" => (3, 0, 0, 0),
                "redirect" => (0, 3, 0, 0),
                "tx" => (0, 0, 3, 0),
                _ => (0, 0, 0, 3),
            });
            assert_eq!(n.cores[0].processed, if action == "pass" { 3 } else { 0 });
        }
        // The receive cost belongs to drop and redirect only.
        let mut problems = Problems::default();
        let x: XdpParams =
            serde_json::from_value(serde_json::json!({ "action": "drop", "program": 0 }))
                .expect("xdp");
        x.validate(&mut problems);
        let y: XdpParams = serde_json::from_value(
            serde_json::json!({ "action": "pass", "rx": 10, "program": 0 }),
        )
        .expect("xdp");
        y.validate(&mut problems);
        assert_eq!(problems.list.len(), 2, "{problems:?}");
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
        // Weight 2, budget 3: NIC 0 (3 frames) and NIC 1 (2 frames), Linux 2.6-3.19's
        // live list.
        let mut env = Script::new(&[3, 2]);
        let mut n = napi(3, 2, 2);
        n.schedule(0, &mut env);
        n.schedule(1, &mut env);
        env.take_log();
        let runs = softirq(&mut n, &mut env);
        // NIC 0: call + 2 frames (weight used: to the tail, budget 1 left); NIC 1: call
        // + 2 frames (a poll takes its whole weight: the budget goes to -1; weight used:
        // to the tail). The budget is spent with both still on the list: time_squeeze,
        // NET_RX again, and __do_softirq restarts.
        assert_eq!(runs.len(), 6);
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Forward(0),
                Signal::Forward(1),
                Signal::Forward(100),
                Signal::Forward(101),
                Signal::Raise(NET_RX),
                Signal::Raise(NET_RX),
            ]
        );
        assert_eq!(n.cores[0].time_squeeze, 1);
        assert_eq!(n.cores[0].poll_list, [0, 1]);
        assert_eq!(n.held(), 0);
    }

    #[test]
    fn a_spliced_run_polls_each_device_once_and_leaves_the_rest_to_the_next() {
        // Linux 4.0 on: weight 2, budget 300; NIC 0 has 5 frames, NIC 1 one. The run
        // polls NIC 0 once (2 frames, weight used: repoll) and NIC 1 once (completes),
        // then ends with NIC 0 back on the list and NET_RX raised, though the budget
        // is far from spent (no time_squeeze). The next run takes 2 more, the third
        // the last one and completes NIC 0.
        let mut env = Script::new(&[5, 1]);
        let p = NapiParams {
            weight: 2,
            ..NapiParams::default()
        };
        let cfg = NapiConfig {
            net_rx_action: RxAction::Spliced,
            ..NapiConfig::default()
        };
        let mut n = Napi::new(&cfg, &[Some(&p), Some(&p)], 1, 1000.0, ns(1_000_000));
        n.schedule(0, &mut env);
        n.schedule(1, &mut env);
        env.take_log();
        softirq(&mut n, &mut env);
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Forward(0),
                Signal::Forward(1),
                Signal::Forward(100),
                Signal::Unmask(1),
                // The run's end re-raises NET_RX; __do_softirq restarts.
                Signal::Raise(NET_RX),
                Signal::Raise(NET_RX),
            ]
        );
        assert_eq!(n.cores[0].poll_list, [0]);
        assert_eq!(n.cores[0].time_squeeze, 0);
        softirq(&mut n, &mut env);
        softirq(&mut n, &mut env);
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Forward(2),
                Signal::Forward(3),
                Signal::Raise(NET_RX),
                Signal::Raise(NET_RX),
                Signal::Forward(4),
                Signal::Unmask(0),
            ]
        );
        assert!(n.cores[0].poll_list.is_empty());
        // A device scheduled during a run waits for the next one.
        env.rings[1].push_back(pkt(7));
        env.rings[0].push_back(pkt(8));
        n.schedule(0, &mut env);
        env.take_log();
        assert!(n.softirq_begin(&mut env));
        assert!(matches!(n.softirq_step(&mut env), Step::Run(_))); // NIC 0's poll call
        n.schedule(1, &mut env);
        while let Step::Run(_) = n.softirq_step(&mut env) {}
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Raise(NET_RX),
                Signal::Forward(8),
                Signal::Unmask(0),
                Signal::Raise(NET_RX),
                Signal::Raise(NET_RX),
            ]
        );
        assert_eq!(n.cores[0].poll_list, [1]);
    }

    #[test]
    fn after_max_restart_restarts_the_work_goes_to_ksoftirqd() {
        // Budget 1, weight 1 and a long ring: every run ends squeezed.
        let mut env = Script::new(&[40]);
        let mut n = napi(1, 1, 1);
        n.schedule(0, &mut env);
        for _ in 0..10 {
            softirq(&mut n, &mut env);
        }
        let log = env.take_log();
        assert_eq!(log.last(), Some(&Signal::Wake(n.ksoftirqd(0))));
        assert_eq!(n.ksoftirqd_wakeups, 1);
        // While ksoftirqd is awake, the dispatcher leaves NET_RX to it.
        assert!(!n.softirq_begin(&mut env));
        // ksoftirqd polls until nothing is pending, then sleeps.
        let mut steps = 0;
        let mut first = true;
        while let Step::Run(_) = n.ksoftirqd_step(first, &mut env) {
            first = false;
            steps += 1;
        }
        // 30 frames left, each a poll call and a frame (budget 1 per net_rx_action);
        // the last poll used its weight too, so one more poll call finds the ring empty.
        assert_eq!(steps, 61);
        assert!(env.rings[0].is_empty() && !n.cores[0].ksoftirqd_awake);
    }

    #[test]
    fn each_core_polls_the_devices_its_interrupts_scheduled() {
        // NIC 0's interrupt on core 0, NIC 1's on core 1: separate poll lists, NET_RX
        // raised on each, each core's ksoftirqd its own task.
        let mut env = Script::new(&[1, 1]);
        let p = NapiParams::default();
        let mut n = napi_with(300, &[p.clone(), p], 2);
        n.schedule(0, &mut env);
        env.core = 1;
        n.schedule(1, &mut env);
        assert_eq!(
            env.take_log(),
            vec![Signal::Raise(NET_RX), Signal::Raise(NET_RX)]
        );
        assert_eq!(n.cores[0].poll_list, [0]);
        assert_eq!(n.cores[1].poll_list, [1]);
        // Core 1's softirq polls NIC 1 only.
        softirq(&mut n, &mut env);
        assert_eq!(env.take_log(), vec![Signal::Forward(100), Signal::Unmask(1)]);
        assert_eq!(n.cores[0].poll_list, [0]);
        assert_ne!(n.ksoftirqd(0), n.ksoftirqd(1));
        assert_eq!(
            Napi::task_name(
                match n.ksoftirqd(1) {
                    Task::Policy(t) => t,
                    _ => unreachable!(),
                },
                &[]
            ),
            "ksoftirqd/1"
        );
    }

    #[test]
    fn rps_steers_each_frame_to_the_backlog_of_the_core_its_hash_picks() {
        // One NIC polled on core 0, rps_cpus [1, 2]; hash 0x8000_0000 picks index
        // reciprocal_scale(2^31, 2) = 1: core 2.
        let mut env = Script::new(&[2]);
        env.hash = 0x8000_0000;
        let p = NapiParams {
            rps_cpus: vec![1, 2],
            ..NapiParams::default()
        };
        let mut n = napi_with(300, &[p], 3);
        n.schedule(0, &mut env);
        env.take_log();
        // Core 0: the poll call, then each frame's driver work only (1 us; steering
        // costs 0 by default), no protocol work.
        assert_eq!(
            softirq(&mut n, &mut env),
            vec![ns(500), ns(1_000), ns(1_000)]
        );
        // The first frame scheduled core 2's backlog (NET_RX raised there).
        assert_eq!(
            env.take_log(),
            vec![Signal::RaiseOn(2, NET_RX), Signal::Unmask(0)]
        );
        assert_eq!(n.cores[2].backlog.len(), 2);
        assert_eq!((n.rps_steered, n.cores[2].received_rps), (2, 1));
        assert_eq!(n.held(), 2);
        // Core 2 polls its backlog: the protocol path (5 us) for each frame.
        env.core = 2;
        assert_eq!(softirq(&mut n, &mut env), vec![ns(5_000), ns(5_000)]);
        assert_eq!(env.take_log(), vec![Signal::Forward(0), Signal::Forward(1)]);
        assert_eq!(n.held(), 0);
        assert!(!n.devs[1 + 2].scheduled);
    }

    #[test]
    fn a_full_backlog_drops_the_frame() {
        // netdev_max_backlog 3 (the test's): the fourth and fifth frames are dropped.
        let mut env = Script::new(&[5]);
        let p = NapiParams {
            rps_cpus: vec![1],
            ..NapiParams::default()
        };
        let mut n = napi_with(300, &[p], 2);
        n.schedule(0, &mut env);
        softirq(&mut n, &mut env);
        let log = env.take_log();
        assert_eq!(
            log.iter()
                .filter(|s| matches!(s, Signal::BacklogDrop(_)))
                .collect::<Vec<_>>(),
            [&Signal::BacklogDrop(3), &Signal::BacklogDrop(4)]
        );
        assert_eq!((n.cores[1].backlog.len(), n.cores[1].dropped), (3, 2));
    }

    /// The socket options of a busy loop: SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET.
    fn opts(prefer: bool, budget: u32) -> SocketBusyPoll {
        SocketBusyPoll {
            prefer_busy_poll: prefer,
            budget,
            epoll: false,
        }
    }

    /// A NIC with napi_defer_hard_irqs 2 and gro_flush_timeout 200 us, weight `weight`.
    fn deferring(weight: u32) -> Napi {
        let p = NapiParams {
            weight,
            defer_hard_irqs: 2,
            gro_flush_timeout_ns: 200_000.0,
            ..NapiParams::default()
        };
        napi_with(300, &[p], 1)
    }

    /// Run a busy loop from its start until it is over: the steps' lengths.
    fn busy_loop(n: &mut Napi, env: &mut Script, o: SocketBusyPoll, ready_after: usize) -> Vec<SimTime> {
        let deadline = env.now + ns(20_000);
        let mut runs = Vec::new();
        let mut start = true;
        while let Step::Run(d) = n.busy_step(0, start, deadline, o, env) {
            start = false;
            runs.push(d);
            if runs.len() == ready_after {
                env.socket_ready = true;
            }
        }
        runs
    }

    #[test]
    fn a_device_preferring_busy_polling_leaves_the_softirq_at_a_full_weight_poll() {
        // Weight 2, 5 frames; the softirq has the device. Linux 5.11 __napi_poll: a
        // poll that used its whole weight on a device marked
        // NAPI_STATE_PREFER_BUSY_POLL calls napi_complete_done and returns instead of
        // putting it back on the list; with defer_hard_irqs and gro_flush_timeout set,
        // that arms the hrtimer and leaves the interrupt masked.
        let mut env = Script::new(&[5]);
        let mut n = deferring(2);
        n.schedule(0, &mut env);
        env.take_log();
        // A busy loop with SO_PREFER_BUSY_POLL finds the device scheduled: it spins
        // (100 ns rounds) and marks it; then its socket is ready and it ends, owning
        // nothing.
        env.socket_ready = false;
        let runs = busy_loop(&mut n, &mut env, opts(true, 8), 1);
        assert_eq!(runs, vec![ns(100)]);
        assert!(n.devs[0].prefer_busy_poll && n.devs[0].scheduled);
        env.socket_ready = false;
        // The softirq polls 2 frames (its weight) and lets the device go: no repoll,
        // no unmask, the timer armed.
        assert_eq!(
            softirq(&mut n, &mut env),
            vec![ns(500), ns(6_000), ns(6_000)]
        );
        assert_eq!(
            env.take_log(),
            vec![Signal::Forward(0), Signal::Forward(1), Signal::Alarm(ns(200_000), 0)]
        );
        assert!(!n.devs[0].scheduled && !n.devs[0].prefer_busy_poll);
        assert_eq!((n.polls, n.prefer_yields, n.deferred_irqs), (1, 1, 1));
        // Now the busy loop takes the device itself (the 3 frames left).
        let runs = busy_loop(&mut n, &mut env, opts(true, 8), 2);
        assert_eq!(runs[0], ns(600), "a round (100 ns) and the poll call (500 ns)");
        assert_eq!(n.busy_packets, 3);
        // Without the mark the same softirq keeps the device: it goes to the tail of
        // the live list and is polled again in the same run.
        let mut env = Script::new(&[5]);
        let mut n = deferring(2);
        n.schedule(0, &mut env);
        env.take_log();
        assert_eq!(softirq(&mut n, &mut env).len(), 3 + 3 + 2);
        assert_eq!(n.prefer_yields, 0);
    }

    #[test]
    fn busy_poll_stop_with_deferral_keeps_the_interrupt_masked_and_arms_the_timer() {
        // The device is idle; the busy loop (budget 2) takes it, and its socket is
        // ready after the first round (the poll call and two frames).
        let run = |prefer: bool, defer: bool| {
            let mut env = Script::new(&[6]);
            let mut n = if defer { deferring(64) } else { napi(300, 64, 1) };
            let runs = busy_loop(&mut n, &mut env, opts(prefer, 2), 3);
            (runs, env.take_log(), n)
        };
        // busy_poll_stop with SO_PREFER_BUSY_POLL, defer_hard_irqs and
        // gro_flush_timeout: the hrtimer is armed before the last poll, which uses its
        // whole budget (2 of 4 frames left): skip_schedule, the device is left idle,
        // its interrupt masked, no softirq raised.
        let (runs, log, n) = run(true, true);
        assert_eq!(
            runs,
            vec![ns(600), ns(6_000), ns(6_000), ns(500), ns(6_000), ns(6_000)]
        );
        assert_eq!(
            log,
            vec![
                Signal::Forward(0),
                Signal::Forward(1),
                Signal::Alarm(ns(200_000), 0),
                Signal::Forward(2),
                Signal::Forward(3),
            ]
        );
        assert!(!n.devs[0].scheduled);
        assert_eq!(n.devs[0].defer_count, 2);
        // Without SO_PREFER_BUSY_POLL (or without the deferral) the full last poll
        // hands the device to the softirq.
        for (prefer, defer) in [(false, true), (true, false)] {
            let (_, log, n) = run(prefer, defer);
            assert_eq!(log.last(), Some(&Signal::Raise(NET_RX)), "{prefer} {defer}");
            assert!(n.devs[0].scheduled);
            assert!(!log.iter().any(|s| matches!(s, Signal::Alarm(..))));
        }
        // A last poll that empties the ring completes the device: with the deferral
        // it stays masked (the count reset by a poll with work), the timer re-armed.
        let mut env = Script::new(&[3]);
        let mut n = deferring(64);
        busy_loop(&mut n, &mut env, opts(true, 2), 3);
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Forward(0),
                Signal::Forward(1),
                Signal::Alarm(ns(200_000), 0),
                Signal::Forward(2),
                Signal::Alarm(ns(200_000), 0),
            ]
        );
        assert!(!n.devs[0].scheduled);
    }

    #[test]
    fn each_busy_poll_takes_at_most_its_budget() {
        // SO_BUSY_POLL_BUDGET 3 and the default 8 (BUSY_POLL_BUDGET): a round takes
        // that many frames of 20, then the next round begins with its 100 ns and the
        // poll call.
        for budget in [3, 8] {
            let mut env = Script::new(&[20]);
            let mut n = napi(300, 64, 1);
            let runs = busy_loop(&mut n, &mut env, opts(false, budget), 2 * budget as usize + 2);
            let rounds: Vec<usize> = runs
                .iter()
                .enumerate()
                .filter(|(_, d)| **d == ns(600))
                .map(|(i, _)| i)
                .collect();
            assert_eq!(rounds, vec![0, budget as usize + 1], "budget {budget}");
            assert_eq!(n.busy_polls, 2);
        }
    }

    #[test]
    fn epoll_with_irq_suspend_timeout_suspends_on_events_and_resumes_without() {
        // irq_suspend_timeout 20 ms besides the deferral (Linux 6.13). An epoll busy
        // loop with SO_PREFER_BUSY_POLL that ends with events: busy_poll_stop arms the
        // timer for gro_flush_timeout, then napi_suspend_irqs restarts it for 20 ms.
        let p = NapiParams {
            defer_hard_irqs: 2,
            gro_flush_timeout_ns: 200_000.0,
            irq_suspend_timeout_ns: 20e6,
            ..NapiParams::default()
        };
        let epoll = SocketBusyPoll {
            epoll: true,
            ..opts(true, 8)
        };
        let mut env = Script::new(&[2]);
        let mut n = napi_with(300, std::slice::from_ref(&p), 1);
        busy_loop(&mut n, &mut env, epoll, 2);
        let log = env.take_log();
        assert_eq!(
            &log[log.len() - 2..],
            &[Signal::Alarm(ns(200_000), 0), Signal::Alarm(ns(20_000_000), 0)]
        );
        assert_eq!(n.devs[0].timer_at, Some(ns(20_000_000)));
        assert_eq!((n.irq_suspends, n.irq_resumes), (1, 0));
        // The gro_flush_timeout expiry is stale: the interrupt stays suspended.
        env.now = ns(200_000);
        n.watchdog(0, &mut env);
        assert!(!n.devs[0].scheduled);
        // A loop that times out without events: napi_resume_irqs schedules the device
        // (the softirq then polls it, and the deferral re-enables its interrupt).
        env.socket_ready = false;
        let deadline = env.now + ns(1_000);
        let mut start = true;
        while let Step::Run(d) = n.busy_step(0, start, deadline, epoll, &mut env) {
            start = false;
            env.now += d;
        }
        assert_eq!((n.irq_suspends, n.irq_resumes), (1, 1));
        assert!(n.devs[0].scheduled);
        assert_eq!(env.take_log().last(), Some(&Signal::Raise(NET_RX)));
        // recv()'s loop (not epoll), or no SO_PREFER_BUSY_POLL: neither.
        for o in [opts(true, 8), SocketBusyPoll { epoll: true, ..opts(false, 8) }] {
            let mut env = Script::new(&[2]);
            let mut n = napi_with(300, std::slice::from_ref(&p), 1);
            busy_loop(&mut n, &mut env, o, 2);
            assert_eq!((n.irq_suspends, n.irq_resumes), (0, 0));
        }
    }

    #[test]
    fn a_zero_window_epoll_loop_polls_once_then_suspends_or_resumes() {
        // epoll_wait() with SO_PREFER_BUSY_POLL and busy_poll_usecs 0 (EPIOCSPARAMS):
        // ep_busy_loop_on holds for the preference alone, and napi_busy_loop polls
        // before it asks ep_busy_loop_end, so the loop is one poll. Frames found: the
        // events suspend the interrupt (irq_suspend_timeout 20 ms); none:
        // napi_resume_irqs schedules the device.
        let p = NapiParams {
            defer_hard_irqs: 100,
            gro_flush_timeout_ns: 20_000.0,
            irq_suspend_timeout_ns: 20e6,
            ..NapiParams::default()
        };
        let epoll = SocketBusyPoll {
            epoll: true,
            ..opts(true, 64)
        };
        for (frames, suspends, resumes) in [(3, 1, 0), (0, 0, 1)] {
            let mut env = Script::new(&[frames]);
            let mut n = napi_with(300, std::slice::from_ref(&p), 1);
            let deadline = env.now;
            let mut start = true;
            while let Step::Run(d) = n.busy_step(0, start, deadline, epoll, &mut env) {
                start = false;
                env.now += d;
                env.socket_ready = n.busy_packets > 0;
            }
            assert_eq!(n.busy_polls, 1, "{frames} frames");
            assert_eq!(n.busy_packets, frames);
            assert_eq!((n.irq_suspends, n.irq_resumes), (suspends, resumes));
            assert_eq!(n.devs[0].scheduled, frames == 0);
        }
    }

    #[test]
    fn the_hrtimer_interrupt_is_charged_to_the_poll_it_schedules() {
        // watchdog_irq_ns 700: the poll napi_watchdog schedules pays the timer
        // interrupt's 700 ns on top of its call; the polls after it do not.
        let p = NapiParams {
            defer_hard_irqs: 2,
            gro_flush_timeout_ns: 200_000.0,
            watchdog_irq_ns: 700.0,
            ..NapiParams::default()
        };
        let mut env = Script::new(&[0]);
        let mut n = napi_with(300, &[p], 1);
        let plain = n.poll_begin(0, &mut env);
        n.arm_timer(0, &mut env);
        env.now = ns(200_000);
        n.watchdog(0, &mut env);
        assert!(n.devs[0].scheduled);
        assert_eq!(n.poll_begin(0, &mut env), plain + ns(700));
        assert_eq!(n.poll_begin(0, &mut env), plain);
        // By default (0) the timer's interrupt costs nothing, as before.
        let mut n = deferring(64);
        n.arm_timer(0, &mut env);
        env.now = ns(400_000);
        n.watchdog(0, &mut env);
        assert_eq!(n.poll_begin(0, &mut env), plain);
    }

    #[test]
    fn a_restarted_hrtimer_fires_only_at_its_last_expiry() {
        // hrtimer_start restarts an armed timer: the first expiry is stale.
        let mut env = Script::new(&[0]);
        let mut n = deferring(64);
        n.arm_timer(0, &mut env);
        env.now = ns(50_000);
        n.arm_timer(0, &mut env);
        env.now = ns(200_000);
        n.watchdog(0, &mut env);
        assert_eq!((n.watchdog, n.devs[0].scheduled), (0, false));
        env.now = ns(250_000);
        n.devs[0].prefer_busy_poll = true;
        n.watchdog(0, &mut env);
        assert_eq!((n.watchdog, n.devs[0].scheduled), (1, true));
        // napi_watchdog clears NAPI_STATE_PREFER_BUSY_POLL.
        assert!(!n.devs[0].prefer_busy_poll);
    }

    #[test]
    fn deferred_hard_irqs_poll_from_the_timer_until_that_many_polls_find_nothing() {
        // defer_hard_irqs 2, gro_flush_timeout 20 us.
        let mut env = Script::new(&[1]);
        let p = NapiParams {
            defer_hard_irqs: 2,
            gro_flush_timeout_ns: 20_000.0,
            ..NapiParams::default()
        };
        let mut n = napi_with(300, &[p], 1);
        n.schedule(0, &mut env);
        env.take_log();
        // A poll with work: the count is reset to 2 and decremented to 1; the timer is
        // armed and the interrupt stays masked.
        softirq(&mut n, &mut env);
        assert_eq!(
            env.take_log(),
            vec![Signal::Forward(0), Signal::Alarm(ns(20_000), 0)]
        );
        // The timer: an empty poll (count 1 -> 0), the timer again.
        env.now = n.devs[0].timer_at.expect("armed");
        n.watchdog(0, &mut env);
        softirq(&mut n, &mut env);
        assert_eq!(
            env.take_log(),
            vec![Signal::Raise(NET_RX), Signal::Alarm(ns(20_000), 0)]
        );
        // The second empty poll: the count is 0, the interrupt is re-enabled.
        env.now = n.devs[0].timer_at.expect("armed");
        n.watchdog(0, &mut env);
        softirq(&mut n, &mut env);
        assert_eq!(env.take_log(), vec![Signal::Raise(NET_RX), Signal::Unmask(0)]);
        assert_eq!((n.deferred_irqs, n.watchdog), (2, 2));
        // Without a timeout the count has no effect.
        let p = NapiParams {
            defer_hard_irqs: 2,
            ..NapiParams::default()
        };
        let mut n = napi_with(300, &[p], 1);
        env.rings[0].push_back(pkt(7));
        n.schedule(0, &mut env);
        softirq(&mut n, &mut env);
        assert_eq!(
            env.take_log(),
            vec![Signal::Raise(NET_RX), Signal::Forward(7), Signal::Unmask(0)]
        );
    }

    #[test]
    fn a_threaded_device_is_polled_by_its_thread_until_a_poll_completes_it() {
        // Weight 2, 3 frames: the thread polls twice (the first uses its weight).
        let mut env = Script::new(&[3]);
        let p = NapiParams {
            weight: 2,
            threaded: true,
            ..NapiParams::default()
        };
        let mut n = napi_with(300, &[p], 1);
        n.schedule(0, &mut env);
        assert_eq!(env.take_log(), vec![Signal::Wake(n.napi_thread(0))]);
        let mut runs = Vec::new();
        let mut first = true;
        while let Step::Run(d) = n.thread_step(0, first, &mut env) {
            first = false;
            runs.push(d);
        }
        assert_eq!(
            runs,
            vec![ns(500), ns(6_000), ns(6_000), ns(500), ns(6_000)]
        );
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Forward(0),
                Signal::Forward(1),
                Signal::Forward(2),
                Signal::Unmask(0)
            ]
        );
        assert_eq!((n.thread_polls, n.polls, n.complete), (2, 0, 1));
        // Asleep: a step without a schedule does nothing.
        assert_eq!(n.thread_step(0, true, &mut env), Step::Done);
    }
}
