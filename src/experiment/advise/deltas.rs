//! What the counters did between two snapshots: each counter's increase over the
//! interval.
//!
//! The 32-bit counters (softnet_stat's `%08x`, /proc/interrupts' `%10u`) wrap: a value
//! lower in the second snapshot is taken to have wrapped once (2^32 added), which is
//! right for an interval shorter than the time the counter takes to pass 2^32 (more than
//! 400 s at 10 M events/s). The 64-bit counters (/proc/net/dev, `ethtool -S`, /proc/stat)
//! never wrap in practice: one lower in the second snapshot means the counters were
//! reset (the driver reloaded, the NIC reset) between the snapshots, and the pair is
//! refused. Without a first snapshot the second's values are the increases (counters
//! cumulative from zero: `irqsim run --linux-counters`' files, or a host's since boot).

use crate::config::import::counters::{CpuTicks, NetDev, Snapshot, Softnet};
use crate::config::import::dump::Findings;
use std::collections::BTreeMap;

/// One CPU's softnet_stat increases.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SoftnetDelta {
    /// The CPU.
    pub cpu: u32,
    /// Frames processed.
    pub processed: u64,
    /// Frames dropped at a full backlog.
    pub dropped: u64,
    /// Squeezed NET_RX runs.
    pub time_squeeze: u64,
    /// RPS IPIs received.
    pub received_rps: u64,
}

/// One /proc/interrupts row's increases.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VectorDelta {
    /// The interrupt's number.
    pub irq: u32,
    /// Its row's names (handlers, chip).
    pub tokens: Vec<String>,
    /// Interrupts per CPU column.
    pub per_cpu: Vec<u64>,
}

impl VectorDelta {
    /// All its interrupts.
    pub fn total(&self) -> u64 {
        self.per_cpu.iter().sum()
    }
}

/// The increases between two snapshots.
#[derive(Clone, Debug, Default)]
pub struct Deltas {
    /// The interval \[s\].
    pub interval_s: f64,
    /// Whether there was no first snapshot (increases from zero).
    pub from_zero: bool,
    /// softnet_stat, a line per CPU, in the file's order.
    pub softnet: Vec<SoftnetDelta>,
    /// The CPU of each /proc/interrupts column.
    pub cpus: Vec<u32>,
    /// The numbered rows of /proc/interrupts in both snapshots.
    pub vectors: Vec<VectorDelta>,
    /// /proc/net/dev's 16 columns, by interface.
    pub net_dev: BTreeMap<String, [u64; 16]>,
    /// `ethtool -S`, by interface and counter.
    pub ethtool: BTreeMap<String, BTreeMap<String, u64>>,
    /// /proc/stat by CPU: (all ticks, softirq ticks, irq ticks).
    pub stat: Option<BTreeMap<u32, (u64, u64, u64)>>,
}

/// `b - a` for a 32-bit counter that may have wrapped once.
fn wrap32(a: u64, b: u64) -> u64 {
    if b >= a { b - a } else { b + (1u64 << 32) - a }
}

/// The increases from `a` (none: zero) to `b` over `interval_s`; faults (a counter
/// reset, CPUs that changed) go to `f`.
pub fn between(a: Option<&Snapshot>, b: &Snapshot, interval_s: f64, f: &mut Findings) -> Deltas {
    let mut d = Deltas {
        interval_s,
        from_zero: a.is_none(),
        cpus: b.interrupts.cpus.clone(),
        ..Deltas::default()
    };
    let zero = Snapshot::default();
    let a = a.unwrap_or(&zero);
    let from_zero = d.from_zero;
    // softnet_stat: by CPU.
    for y in &b.softnet {
        let x = a
            .softnet
            .iter()
            .find(|x| x.cpu == y.cpu)
            .cloned()
            .unwrap_or_default();
        if !from_zero && !a.softnet.iter().any(|x| x.cpu == y.cpu) {
            f.fault(
                format!("{}/softnet_stat", b.dir),
                format!(
                    "line {}: CPU {} is not in {}/softnet_stat (a CPU went online between \
                     the snapshots)",
                    y.line, y.cpu, a.dir
                ),
            );
            continue;
        }
        let Softnet {
            processed,
            dropped,
            time_squeeze,
            received_rps,
            ..
        } = x;
        d.softnet.push(SoftnetDelta {
            cpu: y.cpu,
            processed: wrap32(processed, y.processed),
            dropped: wrap32(dropped, y.dropped),
            time_squeeze: wrap32(time_squeeze, y.time_squeeze),
            received_rps: wrap32(received_rps, y.received_rps),
        });
    }
    // /proc/interrupts: the same CPU columns, rows by number and names.
    if !from_zero && a.interrupts.cpus != b.interrupts.cpus {
        f.fault(
            format!("{}/interrupts", b.dir),
            format!(
                "its CPU columns ({:?}) are not those of {}/interrupts ({:?}): CPUs went \
                 on- or offline between the snapshots",
                b.interrupts.cpus, a.dir, a.interrupts.cpus
            ),
        );
    }
    for row in &b.interrupts.rows {
        let before = if from_zero {
            Some(vec![0; row.counts.len()])
        } else {
            a.interrupts
                .rows
                .iter()
                .find(|r| r.irq == row.irq && r.tokens == row.tokens)
                .map(|r| r.counts.clone())
        };
        // A row in the second snapshot only (a vector requested meanwhile): not used.
        let Some(before) = before else { continue };
        d.vectors.push(VectorDelta {
            irq: row.irq,
            tokens: row.tokens.clone(),
            per_cpu: row
                .counts
                .iter()
                .zip(before.iter().chain(std::iter::repeat(&0)))
                .map(|(y, x)| wrap32(*x, *y))
                .collect(),
        });
    }
    // 64-bit counters: a decrease is a reset.
    let mut reset = |file: String, line: usize, what: &str| {
        f.fault(
            file,
            format!(
                "line {line}: {what} is lower than in the first snapshot: the counters were \
                 reset between the snapshots (driver reloaded, NIC reset); take both again"
            ),
        );
    };
    for (name, y) in &b.net_dev {
        let x = a.net_dev.get(name);
        if x.is_none() && !from_zero {
            continue;
        }
        let x = x.cloned().unwrap_or(NetDev::default());
        let mut cols = [0u64; 16];
        for (i, c) in cols.iter_mut().enumerate() {
            match y.cols[i].checked_sub(x.cols[i]) {
                Some(v) => *c = v,
                None => reset(
                    format!("{}/net-dev", b.dir),
                    y.line,
                    &format!("`{name}` column {}", i + 1),
                ),
            }
        }
        d.net_dev.insert(name.clone(), cols);
    }
    for (iface, ys) in &b.ethtool {
        let xs = a.ethtool.get(iface);
        if xs.is_none() && !from_zero {
            continue;
        }
        let mut m = BTreeMap::new();
        for (k, (y, line)) in ys {
            let x = xs.and_then(|xs| xs.get(k)).map_or(0, |v| v.0);
            if xs.is_some_and(|xs| !xs.contains_key(k)) {
                continue;
            }
            match y.checked_sub(x) {
                Some(v) => {
                    m.insert(k.clone(), v);
                }
                None => reset(format!("{}/ethtool-S-{iface}", b.dir), *line, k),
            }
        }
        d.ethtool.insert(iface.clone(), m);
    }
    if let Some(ys) = &b.stat {
        let xs = a.stat.clone().unwrap_or_default();
        if from_zero || a.stat.is_some() {
            let mut m = BTreeMap::new();
            for (cpu, y) in ys {
                let x = xs.get(cpu).cloned().unwrap_or(CpuTicks::default());
                if y.total < x.total || y.softirq < x.softirq || y.irq < x.irq {
                    reset(format!("{}/stat", b.dir), y.line, &format!("cpu{cpu}"));
                    continue;
                }
                m.insert(
                    *cpu,
                    (y.total - x.total, y.softirq - x.softirq, y.irq - x.irq),
                );
            }
            d.stat = Some(m);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_two_bit_counters_wrap_once() {
        assert_eq!(wrap32(10, 15), 5);
        assert_eq!(wrap32(0xffff_fff0, 0x10), 0x20);
    }
}
