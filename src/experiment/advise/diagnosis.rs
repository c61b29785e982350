//! The diagnosis: what the counters' increases say, in words, each finding with the
//! counters and numbers it rests on.
//!
//! | finding | from | when (thresholds are this module's, estimates) |
//! |---|---|---|
//! | `vectors-on-one-core` | /proc/interrupts: each vector's interrupts by CPU column | a NIC with several queues has two or more vectors that interrupted, all on one CPU (irqbalance or a script put them there, or the driver's affinity hints were overridden) |
//! | `one-queue-busy` | the same rows | a NIC with several queues has one vector that interrupted: receive-side scaling sent every flow to one queue (one flow, or a hash over addresses that do not vary) |
//! | `time-squeeze` | softnet_stat field 3 | it grew: NET_RX stopped with work left, its `netdev_budget` frames or `netdev_budget_usecs` spent (net_rx_action, net/core/dev.c; the counter does not say which) |
//! | `backlog-drops` | softnet_stat field 2 | it grew: `enqueue_to_backlog` found a CPU's backlog at `netdev_max_backlog` (RPS, netif_rx: a driver without NAPI) |
//! | `ring-drops` | `ethtool -S`'s counters of frames the NIC had no descriptor for or its FIFO lost (per driver, [`ring_drop_counters`]), else /proc/net/dev's `fifo` | one grew |
//! | `interrupt-rate-at-moderation` | /proc/interrupts against `ethtool -c`'s `rx-usecs` (the model's `moderation.min_interval_ns`) | a vector interrupted at 80 % or more of 1 / rx-usecs: the moderation, not the traffic, sets the rate, and each frame may wait up to rx-usecs |
//! | `softirq-busy` | /proc/stat's softirq column against all the CPU's ticks | a CPU spent 50 % or more of the interval in softirq |
//!
//! The latency target (`--max-p99-us`) is judged by the model, not the counters
//! ([`super::predict`]): no Linux counter gives a latency percentile.

use super::deltas::{Deltas, VectorDelta};
use crate::config::import::interrupts::{Interrupts, Row, queue_vector};
use crate::config::model::ModelConfig;
use crate::model::nic::LinuxDriver;
use serde::Serialize;

/// What a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Every active vector of a NIC on one CPU.
    VectorsOnOneCore,
    /// One queue of a multi-queue NIC takes all its frames.
    OneQueueBusy,
    /// NET_RX runs squeezed by the budget or the time limit.
    TimeSqueeze,
    /// Backlog drops.
    BacklogDrops,
    /// Ring (or FIFO) drops.
    RingDrops,
    /// Interrupts at the moderation's cap.
    InterruptRateAtModeration,
    /// A CPU busy at softirq.
    SoftirqBusy,
    /// The model's p99 above the latency target.
    LatencyTarget,
}

/// A counter a finding rests on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evidence {
    /// The file (`softnet_stat`, `interrupts`, `ethtool-S-eth0`, ...).
    pub file: String,
    /// The counter (`cpu0 dropped`, `45 eth0-TxRx-0 CPU0`, `rx_missed_errors`).
    pub counter: String,
    /// Its increase over the interval.
    pub increase: u64,
    /// The same per second.
    pub per_s: f64,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// What it is about.
    pub kind: Kind,
    /// The NIC, when it is about one.
    pub nic: Option<String>,
    /// The finding in words, with its numbers.
    pub text: String,
    /// The counters it rests on.
    pub rests_on: Vec<Evidence>,
}

/// The counters of `ethtool -S` that count frames the NIC dropped before the kernel
/// saw them (no free descriptor, FIFO overflow), by driver (the names irqsim writes,
/// src/results/linux/ethtool.rs, from each driver's sources): mlx5 `rx_out_of_buffer`
/// (no WQE posted) and `rx_discards_phy` (port buffer); ixgbe `rx_missed_errors` (MPC)
/// and `rx_no_dma_resources` (QPRDC); e1000 `rx_missed_errors`; igb `rx_missed_errors`
/// (MPC) and the queues' `rx_queue_<k>_drops` (RQDPC); i40e `rx_dropped` (the VSI's
/// GLV_RDPC); ice `rx_discards`. Other drivers: none (/proc/net/dev's `fifo` is used).
pub fn ring_drop_counters(driver: Option<LinuxDriver>, name: &str) -> bool {
    match driver {
        Some(LinuxDriver::Mlx5) => matches!(name, "rx_out_of_buffer" | "rx_discards_phy"),
        Some(LinuxDriver::Ixgbe) => matches!(name, "rx_missed_errors" | "rx_no_dma_resources"),
        Some(LinuxDriver::E1000) => name == "rx_missed_errors",
        Some(LinuxDriver::Igb) => {
            name == "rx_missed_errors"
                || (name.starts_with("rx_queue_") && name.ends_with("_drops"))
        }
        Some(LinuxDriver::I40e) => name == "rx_dropped",
        Some(LinuxDriver::Ice) => name == "rx_discards",
        _ => false,
    }
}

/// The driver's name as `ethtool -i` prints it.
pub fn ethtool_driver(d: Option<LinuxDriver>) -> String {
    match d {
        Some(LinuxDriver::Mlx5) => "mlx5_core".into(),
        Some(d) => serde_json::to_value(d)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        None => String::new(),
    }
}

/// A multi-queue NIC's vectors as found in the rows: (queue, row).
pub fn nic_vectors<'a>(
    d: &'a Deltas,
    m: &ModelConfig,
    nic: usize,
    bus: Option<&str>,
) -> Vec<(u16, &'a VectorDelta)> {
    let n = &m.nics[nic];
    let driver = ethtool_driver(n.linux_driver);
    let lone = m
        .nics
        .iter()
        .filter(|x| x.linux_driver == n.linux_driver)
        .count()
        == 1;
    let ints = Interrupts {
        cpus: d.cpus.clone(),
        rows: d
            .vectors
            .iter()
            .map(|v| Row {
                irq: v.irq,
                counts: v.per_cpu.clone(),
                tokens: v.tokens.clone(),
                at: crate::config::import::dump::At {
                    file: String::new(),
                    line: 0,
                },
            })
            .collect(),
    };
    let mut out = Vec::new();
    for k in 0..n.queues.max(1) {
        // The host's bus-info when known, else the NIC's name (irqsim's own files put
        // it where the PCI address goes).
        let found = [bus, Some(n.name.as_str())]
            .into_iter()
            .flatten()
            .find_map(|b| {
                queue_vector(&ints, (&n.name, &driver, Some(b)), (k, n.queues), lone)
                    .ok()
                    .flatten()
            });
        if let Some(r) = found
            && let Some(v) = d.vectors.iter().find(|v| v.irq == r.irq)
        {
            out.push((k, v));
        }
    }
    out
}

/// The CPU column a vector interrupted most on.
fn main_cpu(d: &Deltas, v: &VectorDelta) -> u32 {
    let i = v
        .per_cpu
        .iter()
        .enumerate()
        .max_by_key(|(i, c)| (**c, std::cmp::Reverse(*i)))
        .map_or(0, |(i, _)| i);
    d.cpus.get(i).copied().unwrap_or(i as u32)
}

fn ev(d: &Deltas, file: &str, counter: String, increase: u64) -> Evidence {
    Evidence {
        file: file.into(),
        counter,
        increase,
        per_s: increase as f64 / d.interval_s,
    }
}

/// Every finding of `d` on the host `m` (`bus`: each NIC's bus-info, when the host's
/// dumps give it).
pub fn diagnose(d: &Deltas, m: &ModelConfig, bus: &[Option<String>]) -> Vec<Finding> {
    let mut out = Vec::new();
    let secs = d.interval_s;
    let processed: u64 = d.softnet.iter().map(|s| s.processed).sum();
    // Imbalance, per NIC.
    for (i, n) in m.nics.iter().enumerate() {
        // A NIC that received nothing: its vectors' interrupts are its transmit
        // completions, which follow the transmitting CPUs, not the receive work.
        if n.queues < 2 || d.net_dev.get(&n.name).is_none_or(|c| c[1] == 0) {
            continue;
        }
        let vs = nic_vectors(d, m, i, bus.get(i).cloned().flatten().as_deref());
        let active: Vec<&(u16, &VectorDelta)> = vs.iter().filter(|(_, v)| v.total() > 0).collect();
        let rests: Vec<Evidence> = active
            .iter()
            .map(|(k, v)| {
                ev(
                    d,
                    "interrupts",
                    format!(
                        "IRQ {} ({}, queue {k}) on CPU{}",
                        v.irq,
                        v.tokens.last().cloned().unwrap_or_default(),
                        main_cpu(d, v)
                    ),
                    v.total(),
                )
            })
            .collect();
        if active.len() >= 2 && m.cpu.cores > 1 {
            let cpu = main_cpu(d, active[0].1);
            if active.iter().all(|(_, v)| main_cpu(d, v) == cpu) {
                let on = d
                    .softnet
                    .iter()
                    .find(|s| s.cpu == cpu)
                    .map_or(0, |s| s.processed);
                let mut rests = rests.clone();
                rests.push(ev(d, "softnet_stat", format!("cpu{cpu} processed"), on));
                out.push(Finding {
                    kind: Kind::VectorsOnOneCore,
                    nic: Some(n.name.clone()),
                    text: format!(
                        "all {} vectors of {} that interrupted did so on CPU{cpu} ({} \
                         interrupts/s in all), and CPU{cpu} processed {on} of the {processed} \
                         frames softnet_stat counts ({:.0} %): one core does the receive work \
                         of {} queues while {} other cores have none of it (IRQ affinity: \
                         irqbalance or a script bound them there)",
                        active.len(),
                        n.name,
                        active.iter().map(|(_, v)| v.total()).sum::<u64>() as f64 / secs,
                        100.0 * on as f64 / processed.max(1) as f64,
                        n.queues,
                        m.cpu.cores - 1
                    ),
                    rests_on: rests,
                });
            }
        } else if active.len() == 1 && vs.len() >= 2 {
            out.push(Finding {
                kind: Kind::OneQueueBusy,
                nic: Some(n.name.clone()),
                text: format!(
                    "of the {} vectors of {} found in /proc/interrupts only queue {}'s \
                     interrupted ({:.0}/s): receive-side scaling sent every frame to one \
                     queue (a single flow, or addresses the hash does not spread); more \
                     vectors or cores cannot help, RPS (rps_cpus) can spread the protocol work",
                    vs.len(),
                    n.name,
                    active[0].0,
                    active[0].1.total() as f64 / secs
                ),
                rests_on: rests,
            });
        }
    }
    // softnet_stat.
    let squeezed: Vec<Evidence> = d
        .softnet
        .iter()
        .filter(|s| s.time_squeeze > 0)
        .map(|s| {
            ev(
                d,
                "softnet_stat",
                format!("cpu{} time_squeeze", s.cpu),
                s.time_squeeze,
            )
        })
        .collect();
    if !squeezed.is_empty() {
        let total: u64 = squeezed.iter().map(|e| e.increase).sum();
        let napi = &m.kernel.napi;
        out.push(Finding {
            kind: Kind::TimeSqueeze,
            nic: None,
            text: format!(
                "time_squeeze grew by {total} ({:.0}/s) on {} CPU(s): NET_RX stopped {total} \
                 times with frames left, its budget spent (net.core.netdev_budget = {} frames \
                 or netdev_budget_usecs = {} us a run, of which the counter does not say which); \
                 the frames left wait for the next run or ksoftirqd",
                total as f64 / secs,
                squeezed.len(),
                napi.netdev_budget,
                napi.netdev_budget_usecs
            ),
            rests_on: squeezed,
        });
    }
    let dropped: Vec<Evidence> = d
        .softnet
        .iter()
        .filter(|s| s.dropped > 0)
        .map(|s| {
            ev(
                d,
                "softnet_stat",
                format!("cpu{} dropped", s.cpu),
                s.dropped,
            )
        })
        .collect();
    if !dropped.is_empty() {
        let total: u64 = dropped.iter().map(|e| e.increase).sum();
        let rps: u64 = d.softnet.iter().map(|s| s.received_rps).sum();
        out.push(Finding {
            kind: Kind::BacklogDrops,
            nic: None,
            text: format!(
                "softnet_stat's dropped grew by {total} ({:.0}/s) on {} CPU(s): frames lost \
                 because a CPU's backlog held net.core.netdev_max_backlog = {} frames \
                 (enqueue_to_backlog; the backlog is fed by RPS, {rps} RPS IPIs taken, or by \
                 netif_rx)",
                total as f64 / secs,
                dropped.len(),
                m.kernel.napi.netdev_max_backlog
            ),
            rests_on: dropped,
        });
    }
    // Ring drops, per NIC.
    for n in &m.nics {
        let mut rests: Vec<Evidence> = Vec::new();
        let file = format!("ethtool-S-{}", n.name);
        if let Some(es) = d.ethtool.get(&n.name) {
            for (k, v) in es {
                if *v > 0 && ring_drop_counters(n.linux_driver, k) {
                    rests.push(ev(d, &file, k.clone(), *v));
                }
            }
        } else if let Some(nd) = d.net_dev.get(&n.name)
            && nd[4] > 0
        {
            rests.push(ev(d, "net-dev", format!("{} rx fifo", n.name), nd[4]));
        }
        if !rests.is_empty() {
            let total: u64 = rests.iter().map(|e| e.increase).sum();
            let rx = d.net_dev.get(&n.name).map_or(0, |c| c[1]);
            out.push(Finding {
                kind: Kind::RingDrops,
                nic: Some(n.name.clone()),
                text: format!(
                    "{} dropped {total} frames ({:.0}/s, {:.2} % of the {} it received) \
                     before the kernel saw them: its receive rings of {} descriptors were \
                     full (the CPU did not empty them in time) or its FIFO overflowed",
                    n.name,
                    total as f64 / secs,
                    100.0 * total as f64 / (total + rx).max(1) as f64,
                    total + rx,
                    n.rx_ring_slots
                ),
                rests_on: rests,
            });
        }
    }
    // Interrupt rate against the moderation.
    for (i, n) in m.nics.iter().enumerate() {
        let Some(itv) = n
            .moderation
            .as_ref()
            .map(|x| x.min_interval_ns)
            .filter(|x| *x > 0.0)
        else {
            continue;
        };
        if n.dim.is_some() {
            continue;
        }
        let cap = 1e9 / itv;
        let vs = nic_vectors(d, m, i, bus.get(i).cloned().flatten().as_deref());
        let at_cap: Vec<Evidence> = vs
            .iter()
            .filter(|(_, v)| v.total() as f64 / secs >= 0.8 * cap)
            .map(|(k, v)| {
                ev(
                    d,
                    "interrupts",
                    format!("IRQ {} ({} queue {k})", v.irq, n.name),
                    v.total(),
                )
            })
            .collect();
        if !at_cap.is_empty() {
            out.push(Finding {
                kind: Kind::InterruptRateAtModeration,
                nic: Some(n.name.clone()),
                text: format!(
                    "{} vector(s) of {} interrupted at {:.0} to {:.0}/s against the {:.0}/s \
                     its moderation allows (rx-usecs {}: one interrupt per {} us at most): the \
                     moderation sets the rate, and a frame may wait up to {} us for it",
                    at_cap.len(),
                    n.name,
                    at_cap.iter().map(|e| e.per_s).fold(f64::INFINITY, f64::min),
                    at_cap.iter().map(|e| e.per_s).fold(0.0, f64::max),
                    cap,
                    itv / 1e3,
                    itv / 1e3,
                    itv / 1e3
                ),
                rests_on: at_cap,
            });
        }
    }
    // /proc/stat.
    if let Some(st) = &d.stat {
        let busy: Vec<Evidence> = st
            .iter()
            .filter(|(_, (t, s, _))| *t > 0 && *s * 2 >= *t)
            .map(|(c, (_, s, _))| ev(d, "stat", format!("cpu{c} softirq ticks"), *s))
            .collect();
        if !busy.is_empty() {
            let shares: Vec<String> = st
                .iter()
                .filter(|(_, (t, s, _))| *t > 0 && *s * 2 >= *t)
                .map(|(c, (t, s, _))| format!("CPU{c} {:.0} %", 100.0 * *s as f64 / *t as f64))
                .collect();
            out.push(Finding {
                kind: Kind::SoftirqBusy,
                nic: None,
                text: format!(
                    "{} CPU(s) spent half or more of the interval in softirq ({}): the \
                     receive path, not the application, takes them",
                    busy.len(),
                    shares.join(", ")
                ),
                rests_on: busy,
            });
        }
    }
    out
}
