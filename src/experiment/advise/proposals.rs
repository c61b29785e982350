//! The changes advise proposes for each finding, as ladders of candidates from the
//! least change up; [`super::predict`] runs every candidate in the model and keeps the
//! first that removes the finding.
//!
//! | finding | knob | candidates |
//! |---|---|---|
//! | `vectors-on-one-core` | `/proc/irq/N/smp_affinity_list` of each of the NIC's vectors | queue k on CPU k mod cores (what the drivers' affinity hints ask for: ixgbe_alloc_q_vector's `cpumask_set_cpu(v_idx)`, mlx5's per-channel CPU) |
//! | `time-squeeze` | `net.core.netdev_budget` | doubled from the model's up to 16 times it or twice Linux's default of 300 (net/core/dev.c), whichever is larger |
//! | `backlog-drops` | `net.core.netdev_max_backlog` | doubled up to 16 times the model's or twice Linux's default of 1,000, whichever is larger |
//! | `ring-drops` | `ethtool -G IF rx N` | the ring doubled up to the driver's maximum (`ethtool -g`'s `Pre-set maximums` when the host's dumps are there, else 4,096: ixgbe's IXGBE_MAX_RXD; an estimate for other drivers) |
//! | `latency-target` (`--max-p99-us`) | `ethtool -C IF rx-usecs N` (mlx5: `adaptive-rx off rx-usecs N`) | the interval halved step by step (1 us skipped: rx-usecs 1 is the Intel drivers' dynamic mode), then 0 |
//!
//! `one-queue-busy`, `interrupt-rate-at-moderation` and `softirq-busy` are said in
//! words and get no change of their own: the first is the traffic's (one flow hashes to
//! one queue), the second is judged by the latency target, the third is the sum of the
//! others.

use super::change::Change;
use super::diagnosis::{Finding, Kind};
use crate::config::model::ModelConfig;
use serde::Serialize;
use serde_json::{Value, json};

/// A ring's largest size when the host's dumps do not give it \[descriptors\]: 4,096,
/// ixgbe's `IXGBE_MAX_RXD` (drivers/net/ethernet/intel/ixgbe/ixgbe.h); an estimate for
/// other drivers (mlx5 allows 8,192, igb 4,096, e1000 4,096).
pub const DEFAULT_RING_MAX: u32 = 4096;

/// One proposal: a ladder of candidate settings for one finding.
#[derive(Clone, Debug, Serialize)]
pub struct Proposal {
    /// The finding it answers.
    pub kind: Kind,
    /// The NIC, when it is about one.
    pub nic: Option<String>,
    /// What it changes, in words.
    pub what: String,
    /// The candidates, least change first: each a set of changes applied together.
    pub candidates: Vec<Vec<Change>>,
}

/// What the host's dumps say that the model does not: per NIC (in the model's order)
/// its bus-info and its largest RX ring.
#[derive(Clone, Debug, Default)]
pub struct HostFacts {
    /// `ethtool -i`'s bus-info, per NIC.
    pub bus: Vec<Option<String>>,
    /// `ethtool -g`'s largest RX ring, per NIC.
    pub rx_max: Vec<Option<u32>>,
}

/// The values tried for a knob now at `old` whose Linux default is `default`: doubled
/// step by step from twice `old` up to 16 times `old` or twice the default, whichever
/// is larger (at most 10 steps).
fn ladder(old: u64, default: u64) -> Vec<u64> {
    let top = old.saturating_mul(16).max(default.saturating_mul(2));
    let mut v = Vec::new();
    let mut x = old.max(1).saturating_mul(2);
    while x <= top && v.len() < 10 {
        v.push(x);
        x = x.saturating_mul(2);
    }
    v
}

/// The proposals for `findings` on model `m`; `irqs` gives each (NIC, queue)'s IRQ
/// number where /proc/interrupts shows it; `p99_target_us` adds the moderation ladder.
pub fn propose(
    findings: &[Finding],
    m: &ModelConfig,
    facts: &HostFacts,
    irqs: &dyn Fn(usize, u16) -> Option<u32>,
    p99_target_us: Option<f64>,
) -> Vec<Proposal> {
    let mut out = Vec::new();
    let napi = &m.kernel.napi;
    for f in findings {
        let nic = f
            .nic
            .as_ref()
            .and_then(|n| m.nics.iter().position(|x| &x.name == n));
        match (f.kind, nic) {
            (Kind::VectorsOnOneCore, Some(i)) => {
                let n = &m.nics[i];
                let cores = m.cpu.cores.max(1);
                let changes: Vec<Change> = (0..n.queues)
                    .map(|k| {
                        let line = crate::model::nic::queue_name(&n.name, k);
                        let cpu = k % cores;
                        let (knob, irq) = match irqs(i, k) {
                            Some(q) => (format!("/proc/irq/{q}/smp_affinity_list"), q.to_string()),
                            None => (
                                format!("/proc/irq/<IRQ of {line}>/smp_affinity_list"),
                                format!("<IRQ of {line}>"),
                            ),
                        };
                        Change {
                            knob,
                            pointer: format!("/cpu/irq_affinity/{line}"),
                            old: m
                                .cpu
                                .irq_affinity
                                .get(&line)
                                .map_or(Value::Null, |c| json!(c)),
                            new: json!(cpu),
                            command: format!("echo {cpu} > /proc/irq/{irq}/smp_affinity_list"),
                        }
                    })
                    .collect();
                out.push(Proposal {
                    kind: f.kind,
                    nic: f.nic.clone(),
                    what: format!(
                        "spread {}'s {} vectors over the {} cores, queue k on CPU k mod {} \
                         (stop irqbalance, or ban these IRQs from it, first: it would move \
                         them back)",
                        n.name, n.queues, cores, cores
                    ),
                    candidates: vec![changes],
                });
            }
            (Kind::TimeSqueeze, _) => out.push(Proposal {
                kind: f.kind,
                nic: None,
                what: format!(
                    "raise net.core.netdev_budget from {} frames a NET_RX run",
                    napi.netdev_budget
                ),
                candidates: ladder(napi.netdev_budget as u64, 300)
                    .into_iter()
                    .map(|v| {
                        vec![Change {
                            knob: "net.core.netdev_budget".into(),
                            pointer: "/kernel/napi/netdev_budget".into(),
                            old: json!(napi.netdev_budget),
                            new: json!(v),
                            command: format!("sysctl -w net.core.netdev_budget={v}"),
                        }]
                    })
                    .collect(),
            }),
            (Kind::BacklogDrops, _) => out.push(Proposal {
                kind: f.kind,
                nic: None,
                what: format!(
                    "raise net.core.netdev_max_backlog from {} frames a CPU",
                    napi.netdev_max_backlog
                ),
                candidates: ladder(napi.netdev_max_backlog as u64, 1000)
                    .into_iter()
                    .map(|v| {
                        vec![Change {
                            knob: "net.core.netdev_max_backlog".into(),
                            pointer: "/kernel/napi/netdev_max_backlog".into(),
                            old: json!(napi.netdev_max_backlog),
                            new: json!(v),
                            command: format!("sysctl -w net.core.netdev_max_backlog={v}"),
                        }]
                    })
                    .collect(),
            }),
            (Kind::RingDrops, Some(i)) => {
                let n = &m.nics[i];
                let max = facts
                    .rx_max
                    .get(i)
                    .copied()
                    .flatten()
                    .unwrap_or(DEFAULT_RING_MAX);
                let mut sizes = Vec::new();
                let mut s = n.rx_ring_slots.saturating_mul(2);
                while s <= max && sizes.len() < 6 {
                    sizes.push(s);
                    s = s.saturating_mul(2);
                }
                if sizes.last().is_none_or(|l| *l < max) && n.rx_ring_slots < max {
                    sizes.push(max);
                }
                if sizes.is_empty() {
                    continue;
                }
                out.push(Proposal {
                    kind: f.kind,
                    nic: f.nic.clone(),
                    what: format!(
                        "enlarge {}'s receive rings from {} descriptors (at most {max})",
                        n.name, n.rx_ring_slots
                    ),
                    candidates: sizes
                        .into_iter()
                        .map(|v| {
                            vec![Change {
                                knob: format!("ethtool -G {} rx", n.name),
                                pointer: format!("/nics/{i}/rx_ring_slots"),
                                old: json!(n.rx_ring_slots),
                                new: json!(v),
                                command: format!("ethtool -G {} rx {v}", n.name),
                            }]
                        })
                        .collect(),
                });
            }
            _ => {}
        }
    }
    if p99_target_us.is_some()
        && let Some(p) = moderation(m)
    {
        out.push(p);
    }
    out
}

/// The moderation ladder of every NIC with a fixed moderation interval.
fn moderation(m: &ModelConfig) -> Option<Proposal> {
    // (NIC, field, interval [us], mlx5)
    let nics: Vec<(usize, &str, u64, bool)> = m
        .nics
        .iter()
        .enumerate()
        .filter(|(_, n)| n.dim.is_none())
        .filter_map(|(i, n)| {
            let x = n.moderation.as_ref()?;
            if x.min_interval_ns > 0.0 {
                Some((
                    i,
                    "min_interval_ns",
                    (x.min_interval_ns / 1e3).round() as u64,
                    false,
                ))
            } else if x.cq_period_ns > 0.0 {
                Some((
                    i,
                    "cq_period_ns",
                    (x.cq_period_ns / 1e3).round() as u64,
                    true,
                ))
            } else {
                None
            }
        })
        .collect();
    let top = nics.iter().map(|n| n.2).max()?;
    let mut steps = Vec::new();
    let mut us = top / 2;
    while us >= 2 {
        steps.push(us);
        us /= 2;
    }
    steps.push(0);
    let candidates = steps
        .iter()
        .map(|&v| {
            nics.iter()
                .map(|&(i, field, old_us, mlx5)| {
                    let n = &m.nics[i];
                    let v = v.min(old_us);
                    Change {
                        knob: format!("ethtool -C {} rx-usecs", n.name),
                        pointer: format!("/nics/{i}/moderation/{field}"),
                        old: json!(old_us * 1000),
                        new: json!(v * 1000),
                        command: if mlx5 {
                            format!("ethtool -C {} adaptive-rx off rx-usecs {v}", n.name)
                        } else {
                            format!("ethtool -C {} rx-usecs {v}", n.name)
                        },
                    }
                })
                .collect()
        })
        .collect();
    Some(Proposal {
        kind: Kind::LatencyTarget,
        nic: None,
        what: format!(
            "shorten the interrupt moderation (rx-usecs, now {top} us at most) to meet the \
             p99 target"
        ),
        candidates,
    })
}
