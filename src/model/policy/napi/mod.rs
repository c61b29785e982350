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

mod busy_poll;
mod config;
mod deferral;
mod softirq;
mod threaded;

pub use config::*;

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
mod tests;
