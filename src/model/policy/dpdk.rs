//! A DPDK poll-mode driver: the NIC's queues belong to a user-space application whose
//! forwarding cores (lcores) spin on them, with the NIC's interrupts off, taking frames
//! in bursts and running each burst to completion (DPDK's `rte_eth_rx_burst` in
//! testpmd's forwarding loop, `app/test-pmd/testpmd.c` `run_pkt_fwd_on_lcore`; the
//! paper's DPDK 18.05 testpmd with the mlx5 PMD).
//!
//! - **Lcores.** One loop per core that has queues: queue device `k` of a port (ethtool's
//!   channel `k`; a NIC with one queue is queue 0) is polled by the loop of core
//!   `k mod cpu.cores`, as testpmd spreads one port's streams over its forwarding
//!   lcores in order (several single-queue DPDK ports therefore share core 0's lcore,
//!   where testpmd would spread their streams over its lcores). A loop polls its queues
//!   in turn, one burst call per step: up to
//!   `burst` frames from the ring, then each frame's work, then the next queue. A call
//!   that finds the ring empty costs `poll` alone. The loop never sleeps and runs at
//!   normal (user) priority: its core is never idle, and whatever else runs there
//!   (interrupts, kernel threads) takes time from it.
//! - **What a frame gets** (`action`): `rxonly` (testpmd's rxonly engine: received and
//!   freed; the frame ends there, counted under drops as `application`), or `io-fwd`
//!   (testpmd's io engine: sent unchanged out of its flow's output port with
//!   `rte_eth_tx_burst`, no kernel, no skb). As modelled a sent frame enters the output
//!   port through its if_output (if_snd, then the ring of the queue XPS gives the
//!   lcore's core) like an XDP_REDIRECT-ed frame, where the PMD writes the ring directly
//!   and drops what does not fit: the same unless the output port is the bottleneck.
//!   The transmit ring's reclaim is the PMD's own (inside `tx`): the output port needs
//!   no transmit-completion interrupt (give it `dpdk` too, as testpmd owns both ports;
//!   nothing checks that the output port is DPDK's).
//! - **Events.** An idle lcore spins: every empty call is an event (about 50 M a
//!   simulated second per idle lcore with a 20 ns `poll`), so a long drain with idle
//!   lcores is slow to simulate; the shipped scenarios run without one.
//!
//! Parameters (in each NIC's `policy`, the same for every NIC that uses it: one
//! application owns them all, which validation checks): `action` (`rxonly` or
//! `io-fwd`, required), `burst` \[frames\] (default 32: testpmd's `--burst`,
//! DEF_PKT_BURST), `poll` \[cost\] (one `rte_eth_rx_burst` call, required, at least
//! 1 ns), `rx` \[cost\] (the PMD's receive of one frame, with the engine's work on it:
//! rxonly's free, required), `tx` \[cost\] (the transmit of one frame for `io-fwd`:
//! required there, refused with `rxonly`). No figure splits the cost of a burst
//! between the call and its frames: a model gives the call an estimate and the frames
//! the rest of a measured rate (`models/xeon-e5-1650v4-mlx5-linux.json`'s notes); the
//! split sets only how soon an idle loop sees a frame.
//!
//! Counters, per NIC (per queue device `<nic>-q<k>`), after testpmd's port statistics:
//! `<nic>.dpdk.rx_packets` (frames taken from this queue's ring), with `io-fwd`
//! `<nic>.dpdk.tx_packets` (frames of this queue handed to the output port's transmit
//! when their burst's time is over; testpmd counts TX on the output port, and only the
//! frames its ring accepted: here the output port's if_snd and ring drops are
//! `drops.if_snd`); and
//! `<nic>.dpdk.rx_bursts`, `<nic>.dpdk.empty_polls` (burst calls, and those that found
//! nothing: with `poll`, the time the lcore spun). Frames the ring had no room for are
//! the port's RX-missed (`imissed`), irqsim's `drops.rx_ring`.
//!
//! CPU time: an lcore is a user thread at normal priority (the `User` level), spinning
//! in user space: mpstat's `%usr` (`mpstat` in results.json,
//! [`crate::model::cpu::cputime`]). The older `cpu` fields, by level, count it with
//! the kernel threads of that level in `cpu.softirq`.

use crate::model::cost::{Cost, CostParam};
use crate::model::cpu::Level;
use crate::model::cpu::task::{PolicyTask, Step, Task};
use crate::model::packet::Packet;
use crate::model::policy::env::{RingEnv, RxEnv, SchedEnv, StackEnv};
use crate::model::policy::interrupt::HandlerMode;
use crate::model::policy::{BuildCtx, PolicyConfig, RxPolicy, nic_name};
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the application does with each frame it receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DpdkAction {
    /// testpmd's rxonly engine: receive and free.
    Rxonly,
    /// testpmd's io engine: send out of the flow's output port, unchanged.
    IoFwd,
}

/// A DPDK-owned NIC's parameters (`"policy": { "kind": "dpdk", "action": "rxonly",
/// "poll": { "ns": 20 }, "rx": { "ns": 22.4 } }`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DpdkParams {
    /// What the application does with each frame.
    pub action: DpdkAction,
    /// Frames one burst call may take (default 32: testpmd's DEF_PKT_BURST).
    #[serde(default = "d_burst")]
    #[schemars(range(min = 1, max = 65536))]
    pub burst: u32,
    /// One `rte_eth_rx_burst` call, whether or not it finds frames \[cost\] (at least 1 ns).
    pub poll: CostParam,
    /// The PMD's receive of one frame, with the engine's work on it \[cost\].
    pub rx: CostParam,
    /// The transmit of one frame with `io-fwd` (`rte_eth_tx_burst`, the reclaim of sent
    /// descriptors included) \[cost\]; refused with `rxonly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx: Option<CostParam>,
}

fn d_burst() -> u32 {
    32
}

impl DpdkParams {
    /// Range checks (the poll's lower bound depends on the CPU clock: `validate_model`).
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("burst", self.burst as u64, 1, "frame");
        if self.burst > 65536 {
            p.push("burst", "must be at most 65536 frames".to_string());
        }
        for (name, c) in [("poll", &self.poll), ("rx", &self.rx)] {
            if let Err(e) = c.check() {
                p.push(name, e);
            }
        }
        match (self.action, &self.tx) {
            (DpdkAction::IoFwd, None) => p.push(
                "tx",
                "is required for `io-fwd`: the transmit of one frame".to_string(),
            ),
            (DpdkAction::Rxonly, Some(_)) => p.push(
                "tx",
                "is not taken with `rxonly`: nothing is sent".to_string(),
            ),
            (_, Some(c)) => {
                if let Err(e) = c.check() {
                    p.push("tx", e);
                }
            }
            (DpdkAction::Rxonly, None) => {}
        }
    }
}

/// One queue device's counters.
#[derive(Clone, Debug, Default)]
struct QueueCounters {
    rx_packets: u64,
    tx_packets: u64,
    rx_bursts: u64,
    empty_polls: u64,
}

/// One lcore's loop: the queue devices it polls, in turn.
#[derive(Clone, Debug)]
struct Lcore {
    core: usize,
    queues: Vec<usize>,
    /// Index in `queues` of the queue the next call polls.
    next: usize,
    /// The burst taken by the call in progress: handled when its time is over.
    held: Vec<Packet>,
    /// The queue device the held burst came from.
    held_from: usize,
}

/// The application's lcores and counters during a run.
#[derive(Clone, Debug)]
pub struct Dpdk {
    kind: u8,
    action: DpdkAction,
    burst: u32,
    poll: Cost,
    rx: Cost,
    tx: Cost,
    lcores: Vec<Lcore>,
    /// The lcore of each NIC device (by index), `None` for the others.
    lcore_of: Vec<Option<usize>>,
    counters: Vec<QueueCounters>,
}

impl Dpdk {
    /// The application with its costs, polling `queues` (NIC device index, the core of
    /// its lcore) in the order given.
    fn new(p: &DpdkParams, clock_mhz: f64, nics: usize, queues: &[(usize, usize)]) -> Dpdk {
        let mut lcores: Vec<Lcore> = Vec::new();
        let mut lcore_of = vec![None; nics];
        for &(nic, core) in queues {
            let i = match lcores.iter().position(|l| l.core == core) {
                Some(i) => i,
                None => {
                    lcores.push(Lcore {
                        core,
                        queues: Vec::new(),
                        next: 0,
                        held: Vec::with_capacity(p.burst as usize),
                        held_from: nic,
                    });
                    lcores.len() - 1
                }
            };
            lcores[i].queues.push(nic);
            lcore_of[nic] = Some(i);
        }
        Dpdk {
            kind: 0,
            action: p.action,
            burst: p.burst,
            poll: p.poll.build(clock_mhz),
            rx: p.rx.build(clock_mhz),
            tx: p
                .tx
                .as_ref()
                .map_or(Cost::Constant(SimTime::ZERO), |c| c.build(clock_mhz)),
            lcores,
            lcore_of,
            counters: vec![QueueCounters::default(); nics],
        }
    }

    /// One step of lcore `l`: finish the burst in hand (free it or send it), then call
    /// the next queue's burst receive.
    fn step(&mut self, l: usize, env: &mut (impl RingEnv + StackEnv)) -> Step {
        let lc = &mut self.lcores[l];
        let sent = &mut self.counters[lc.held_from].tx_packets;
        for p in lc.held.drain(..) {
            match self.action {
                DpdkAction::Rxonly => env.app_free(p),
                DpdkAction::IoFwd => {
                    env.app_tx(p);
                    *sent += 1;
                }
            }
        }
        let nic = lc.queues[lc.next];
        lc.held_from = nic;
        lc.next = (lc.next + 1) % lc.queues.len();
        let c = &mut self.counters[nic];
        c.rx_bursts += 1;
        while lc.held.len() < self.burst as usize
            && let Some(p) = env.rx_pop(nic)
        {
            lc.held.push(p);
        }
        let k = lc.held.len() as u64;
        if k == 0 {
            c.empty_polls += 1;
        }
        c.rx_packets += k;
        let mut d = env.kernel_cost(&self.poll);
        for _ in 0..k {
            d += env.kernel_cost(&self.rx);
            if self.action == DpdkAction::IoFwd {
                d += env.kernel_cost(&self.tx);
            }
        }
        Step::Run(d)
    }
}

impl RxPolicy for Dpdk {
    const HANDLER: HandlerMode = HandlerMode::Nothing;
    const MANY_CORES: bool = true;

    fn serves(p: &PolicyConfig) -> bool {
        matches!(p, PolicyConfig::Dpdk(_))
    }
    fn build(ctx: &BuildCtx<'_>) -> Option<Self> {
        let (_, first) = ctx.nics_of::<Self>().next()?;
        let PolicyConfig::Dpdk(params) = first else {
            return None;
        };
        let cores = ctx.cores.max(1);
        let queues: Vec<(usize, usize)> = ctx
            .nics_of::<Self>()
            .map(|(nic, _)| {
                let k = ctx.queues.get(nic).map_or(0, |q| q.index as usize);
                (nic, k % cores)
            })
            .collect();
        let mut d = Dpdk::new(params, ctx.clock_mhz, ctx.nics.len(), &queues);
        d.kind = ctx.kind;
        Some(d)
    }
    /// One application owns every DPDK NIC: one set of parameters, and a poll of at
    /// least 1 ns at this CPU's clock (a loop whose empty call takes no time would never
    /// let time advance).
    fn validate_model(ctx: &BuildCtx<'_>, p: &mut Problems) {
        let mhz = ctx.clock_mhz;
        let mut first: Option<(usize, &DpdkParams)> = None;
        for (i, n) in ctx.nics.iter().enumerate() {
            let PolicyConfig::Dpdk(d) = n else { continue };
            let ns = d.poll.mean_ns(mhz);
            if d.poll.check().is_ok() && ns < 1.0 {
                p.push(
                    &format!("nics[{i}].policy.poll"),
                    format!(
                        "must be at least 1 ns (an empty burst call takes time); it is {ns} ns \
                         at cpu.clock_mhz = {mhz}"
                    ),
                );
            }
            match first {
                None => first = Some((i, d)),
                Some((j, f)) if f != d => p.push(
                    &format!("nics[{i}].policy"),
                    format!(
                        "differs from nics[{j}]'s: one DPDK application owns every `dpdk` \
                         NIC, so they must give the same parameters"
                    ),
                ),
                Some(_) => {}
            }
        }
    }
    fn held(&self) -> usize {
        self.lcores.iter().map(|l| l.held.len()).sum()
    }
    fn counters(&self, nic_names: &[String], c: &mut BTreeMap<String, f64>) {
        for (nic, l) in self.lcore_of.iter().enumerate() {
            if l.is_none() {
                continue;
            }
            let q = &self.counters[nic];
            let name = nic_name(nic_names, nic as u16);
            c.insert(format!("{name}.dpdk.rx_packets"), q.rx_packets as f64);
            if self.action == DpdkAction::IoFwd {
                c.insert(format!("{name}.dpdk.tx_packets"), q.tx_packets as f64);
            }
            c.insert(format!("{name}.dpdk.rx_bursts"), q.rx_bursts as f64);
            c.insert(format!("{name}.dpdk.empty_polls"), q.empty_polls as f64);
        }
    }
    fn task_name(task: PolicyTask, nic_names: &[String]) -> String {
        format!("dpdk lcore ({})", nic_name(nic_names, task.nic))
    }
    /// An lcore is a user thread polling its queues from user space, with no system
    /// call: `%usr` (kernel/sched/cputime.c `irqtime_account_process_tick`, a
    /// `user_tick` -> `account_user_time`, `CPUTIME_USER`).
    fn cputime(_task: PolicyTask) -> crate::model::cpu::cputime::CpuTime {
        crate::model::cpu::cputime::CpuTime::Usr
    }
    fn step(&mut self, task: PolicyTask, _first: bool, env: &mut impl RxEnv) -> Step {
        match self.lcore_of.get(task.nic as usize).copied().flatten() {
            Some(l) => Dpdk::step(self, l, env),
            None => Step::Done,
        }
    }
    /// Each lcore's loop runs from the start, on its core.
    fn start(&mut self, env: &mut impl SchedEnv) {
        for l in &self.lcores {
            env.wake_on(l.core, Task::policy(self.kind, l.queues[0], Level::User));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policy::env::mock::{Script, Signal, ns};

    fn params(action: DpdkAction, burst: u32) -> DpdkParams {
        DpdkParams {
            action,
            burst,
            poll: CostParam::ns(20.0),
            rx: CostParam::ns(10.0),
            tx: (action == DpdkAction::IoFwd).then(|| CostParam::ns(5.0)),
        }
    }

    #[test]
    fn a_call_takes_up_to_a_burst_and_pays_the_call_and_each_frame() {
        // 40 frames in the ring, bursts of 32: 20 + 32 x 10 ns, then 20 + 8 x 10 ns.
        let mut env = Script::new(&[40]);
        let mut d = Dpdk::new(&params(DpdkAction::Rxonly, 32), 1000.0, 1, &[(0, 0)]);
        assert_eq!(d.step(0, &mut env), Step::Run(ns(340)));
        assert_eq!(d.held(), 32);
        assert!(env.take_log().is_empty(), "freed only when the burst's time is over");
        assert_eq!(d.step(0, &mut env), Step::Run(ns(100)));
        let log = env.take_log();
        assert_eq!(log.len(), 32);
        assert!(log.iter().all(|s| matches!(s, Signal::AppFree(_))));
        // Empty: the call alone, counted.
        assert_eq!(d.step(0, &mut env), Step::Run(ns(20)));
        assert_eq!(env.take_log().len(), 8);
        assert_eq!(d.step(0, &mut env), Step::Run(ns(20)));
        let q = &d.counters[0];
        assert_eq!((q.rx_packets, q.rx_bursts, q.empty_polls), (40, 4, 2));
    }

    #[test]
    fn io_fwd_sends_each_frame_and_pays_its_transmit() {
        let mut env = Script::new(&[3]);
        let mut d = Dpdk::new(&params(DpdkAction::IoFwd, 32), 1000.0, 1, &[(0, 0)]);
        // 20 + 3 x (10 + 5) ns.
        assert_eq!(d.step(0, &mut env), Step::Run(ns(65)));
        assert_eq!(d.step(0, &mut env), Step::Run(ns(20)));
        assert_eq!(
            env.take_log(),
            vec![Signal::AppTx(0), Signal::AppTx(1), Signal::AppTx(2)]
        );
        assert_eq!(d.counters[0].tx_packets, 3);
    }

    #[test]
    fn an_lcore_polls_its_queues_in_turn_and_each_core_has_its_own() {
        // Devices 0 and 2 on core 0, device 1 on core 1, device 3 not DPDK's.
        let mut env = Script::new(&[2, 1, 1, 5]);
        let mut d = Dpdk::new(
            &params(DpdkAction::Rxonly, 1),
            1000.0,
            4,
            &[(0, 0), (1, 1), (2, 0)],
        );
        assert_eq!(d.lcores.len(), 2);
        assert_eq!(d.lcore_of, vec![Some(0), Some(1), Some(0), None]);
        // Core 0 alternates 0, 2, 0, 2 with bursts of one frame.
        for _ in 0..4 {
            d.step(0, &mut env);
        }
        assert_eq!(env.take_log(), vec![Signal::AppFree(0), Signal::AppFree(200), Signal::AppFree(1)]);
        assert_eq!(
            (d.counters[0].rx_packets, d.counters[2].rx_packets, d.counters[2].empty_polls),
            (2, 1, 1)
        );
        assert_eq!(env.rings[3].len(), 5, "not polled");
        // Each loop is woken on its own core at the start, at user priority.
        let mut env = Script::new(&[0, 0, 0, 0]);
        d.start(&mut env);
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Wake(Task::policy(0, 0, Level::User)),
                Signal::WakeOn(1, Task::policy(0, 1, Level::User)),
            ]
        );
    }

    #[test]
    fn parameters_are_checked() {
        let mut p = Problems::default();
        let mut bad = params(DpdkAction::Rxonly, 0);
        bad.tx = Some(CostParam::ns(1.0));
        bad.validate(&mut p);
        let text = format!("{p:?}");
        assert!(text.contains("burst") && text.contains("tx"), "{text}");
        let mut p = Problems::default();
        let mut fwd = params(DpdkAction::IoFwd, 32);
        fwd.tx = None;
        fwd.validate(&mut p);
        assert!(format!("{p:?}").contains("required for `io-fwd`"));
        let mut p = Problems::default();
        params(DpdkAction::IoFwd, 32).validate(&mut p);
        assert!(p.is_empty(), "{p:?}");
    }
}
