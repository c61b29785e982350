//! A snapshot of a Linux host's receive counters, as `examples/gather-host.sh` takes two
//! of them a few seconds apart (`OUT/counters/0/`, `OUT/counters/1/`) and as `irqsim run
//! --linux-counters` writes them (`linux/<variant>/<point>/`, cumulative from the start
//! of the run): the input of `irqsim advise`.
//!
//! | file | command | |
//! |---|---|---|
//! | `softnet_stat` | `cat /proc/net/softnet_stat` | required |
//! | `interrupts` | `cat /proc/interrupts` | required |
//! | `net-dev` | `cat /proc/net/dev` | required |
//! | `ethtool-S-<if>` | `ethtool -S <if>` | optional, per interface |
//! | `stat` | `cat /proc/stat` | optional: the CPUs' time at softirq |
//! | `time` | `date +%s.%N` | optional: when the snapshot was taken \[s\] |
//!
//! Formats and their sources:
//!
//! - `softnet_stat`: `softnet_seq_show`, net/core/net-procfs.c: a line per online CPU
//!   of `%08x` fields. Linux 6.x prints 15 (torvalds/linux 0e0939c0, lines 146-175:
//!   processed, dropped, time_squeeze, six zeros, received_rps, flow_limit_count,
//!   backlog_len, the CPU's index, input_qlen, process_qlen); older kernels print the
//!   first 10 or 11 (no CPU index: line k is then the k-th online CPU, which is the
//!   CPU k of a host with every CPU online). Fields 1 (`processed`: frames taken by
//!   `__netif_receive_skb_core`), 2 (`dropped`: `enqueue_to_backlog` found the backlog
//!   at `netdev_max_backlog`), 3 (`time_squeeze`: `net_rx_action` stopped with work
//!   left, its `netdev_budget` frames or `netdev_budget_usecs` spent) and 10
//!   (`received_rps`: RPS IPIs taken) are read; the fields are 32 bits and wrap.
//! - `interrupts`: `show_interrupts`, kernel/irq/proc.c: [`super::interrupts::parse`],
//!   with each row's counts per CPU column (`%10u`: 32 bits, they wrap).
//! - `net-dev`: `dev_seq_show`, net/core/net-procfs.c: two header lines, then
//!   `%6s:` and 16 counters per interface (receive bytes, packets, errs, drop, fifo,
//!   frame, compressed, multicast; transmit bytes, packets, errs, drop, fifo, colls,
//!   carrier, compressed); 64 bits.
//! - `ethtool-S-<if>`: ethtool's `dump_stats`: `NIC statistics:`, then `     %s: %llu`
//!   per counter, named by the driver; 64 bits.
//! - `stat`: `show_stat`, fs/proc/stat.c: `cpu<N> user nice system idle iowait irq
//!   softirq steal guest guest_nice` in USER_HZ ticks; the aggregate `cpu` line and the
//!   other lines (`intr`, `ctxt`...) are understood and not used.
//!
//! A required file missing, or a line of one that is not in its layout, is a fault
//! (the command refuses before any work, naming the file, the line and the reason): a
//! counter misread would be a diagnosis made up. Every file is read bounded and never
//! through a symbolic link ([`Dump::read`]).

use super::dump::{Dump, Findings, Sourced, whole};
use super::interrupts::{self, Interrupts};
use crate::config::read_limit::ReadBudget;
use std::collections::BTreeMap;
use std::path::Path;

/// `/proc/net/softnet_stat`'s file.
pub const SOFTNET: &str = "softnet_stat";
/// `/proc/interrupts`' file.
pub const INTERRUPTS: &str = "interrupts";
/// `/proc/net/dev`'s file.
pub const NET_DEV: &str = "net-dev";
/// `/proc/stat`'s file.
pub const STAT: &str = "stat";
/// The time the snapshot was taken.
pub const TIME: &str = "time";
/// The prefix of `ethtool -S <if>`'s files.
pub const ETHTOOL_S: &str = "ethtool-S-";

/// One CPU's line of `/proc/net/softnet_stat`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Softnet {
    /// The CPU (field 13, else the line's rank).
    pub cpu: u32,
    /// Field 1: frames processed.
    pub processed: u64,
    /// Field 2: frames dropped at a full backlog.
    pub dropped: u64,
    /// Field 3: NET_RX runs stopped by the budget or the time limit with work left.
    pub time_squeeze: u64,
    /// Field 10: RPS IPIs received (0 when the line is shorter).
    pub received_rps: u64,
    /// Where.
    pub line: usize,
}

/// One interface's row of `/proc/net/dev`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetDev {
    /// The 16 counters in the kernel's order (receive bytes, packets, errs, drop, fifo,
    /// frame, compressed, multicast; transmit bytes, packets, errs, drop, fifo, colls,
    /// carrier, compressed).
    pub cols: [u64; 16],
    /// Where.
    pub line: usize,
}

impl NetDev {
    /// Receive packets.
    pub fn rx_packets(&self) -> u64 {
        self.cols[1]
    }
    /// Receive drop.
    pub fn rx_drop(&self) -> u64 {
        self.cols[3]
    }
    /// Receive fifo.
    pub fn rx_fifo(&self) -> u64 {
        self.cols[4]
    }
}

/// One CPU's line of `/proc/stat` \[USER_HZ ticks\].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// Every state's ticks summed (user to steal).
    pub total: u64,
    /// The softirq column.
    pub softirq: u64,
    /// The irq column.
    pub irq: u64,
    /// Where.
    pub line: usize,
}

/// One snapshot.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The snapshot's directory, as given.
    pub dir: String,
    /// `time` \[s since the epoch\], when given.
    pub time_s: Option<Sourced<f64>>,
    /// `softnet_stat`, a line per CPU.
    pub softnet: Vec<Softnet>,
    /// `interrupts`.
    pub interrupts: Interrupts,
    /// `net-dev`, by interface.
    pub net_dev: BTreeMap<String, NetDev>,
    /// `ethtool-S-<if>`: each interface's counters by name, with their lines.
    pub ethtool: BTreeMap<String, BTreeMap<String, (u64, usize)>>,
    /// `stat`, by CPU.
    pub stat: Option<BTreeMap<u32, CpuTicks>>,
    /// The files read.
    pub read: Vec<String>,
}

/// Most names a snapshot directory may hold: as the dump directory's.
pub const MAX_FILES: usize = super::MAX_FILES;

/// Read the snapshot in `dir` (its label in messages: `label`); faults go to `f`.
pub fn read(dir: &Path, label: &str, budget: &ReadBudget, f: &mut Findings) -> Snapshot {
    let mut s = Snapshot {
        dir: label.to_string(),
        ..Snapshot::default()
    };
    // Faults name the file by its path under the command's directory.
    let named = |name: &str| format!("{label}/{name}");
    let mut names = Vec::new();
    match std::fs::read_dir(dir) {
        Err(e) => {
            f.fault(label, format!("cannot read the snapshot directory: {e}"));
            return s;
        }
        Ok(entries) => {
            for e in entries.flatten() {
                if names.len() == MAX_FILES {
                    f.fault(
                        label,
                        format!("more than {MAX_FILES} names: not a counter snapshot"),
                    );
                    return s;
                }
                names.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    names.sort();
    let mut read = Vec::new();
    let mut get = |name: &str, required: bool, f: &mut Findings| -> Option<Dump> {
        match Dump::read(dir, name, budget) {
            Ok(Some(mut d)) => {
                d.name = named(name);
                read.push(name.to_string());
                Some(d)
            }
            Ok(None) => {
                if required {
                    f.fault(
                        named(name),
                        "missing: a snapshot needs softnet_stat, interrupts and net-dev \
                         (examples/gather-host.sh writes them)",
                    );
                }
                None
            }
            Err(e) => {
                f.fault(named(name), e);
                None
            }
        }
    };
    if let Some(d) = get(SOFTNET, true, f) {
        s.softnet = softnet(&d, f);
    }
    if let Some(d) = get(INTERRUPTS, true, f) {
        let before = f.unparsed.len();
        s.interrupts = interrupts::parse(&d, f);
        // A row not understood is a counter not seen: refused, not skipped.
        for u in f.unparsed.drain(before..).collect::<Vec<_>>() {
            f.faults.push(super::dump::Fault {
                file: u.at.file.clone(),
                line: Some((u.at.line, u.text.clone())),
                reason: u.reason.clone(),
            });
        }
        if s.interrupts.cpus.is_empty() {
            f.fault(
                named(INTERRUPTS),
                "no `CPU0 CPU1 ...` header: not /proc/interrupts",
            );
        }
    }
    if let Some(d) = get(NET_DEV, true, f) {
        s.net_dev = net_dev(&d, f);
    }
    if let Some(d) = get(STAT, false, f) {
        s.stat = Some(stat(&d, f));
    }
    if let Some(d) = get(TIME, false, f) {
        s.time_s = time(&d, f);
    }
    for n in &names {
        let Some(iface) = n.strip_prefix(ETHTOOL_S) else {
            continue;
        };
        if let Err(e) = crate::config::names::check(iface) {
            f.fault(named(n), format!("interface name {e}"));
            continue;
        }
        if let Some(d) = get(n, false, f) {
            s.ethtool.insert(iface.to_string(), ethtool_s(&d, f));
        }
    }
    s.read = read;
    s
}

/// Parse `/proc/net/softnet_stat`.
pub fn softnet(d: &Dump, f: &mut Findings) -> Vec<Softnet> {
    let mut out = Vec::new();
    for (rank, (n, line)) in d.numbered().enumerate() {
        let fields: Option<Vec<u64>> = line
            .split_whitespace()
            .map(|t| {
                (t.len() <= 16 && t.bytes().all(|b| b.is_ascii_hexdigit()))
                    .then(|| u64::from_str_radix(t, 16).ok())
                    .flatten()
            })
            .collect();
        match fields {
            Some(v) if (10..=15).contains(&v.len()) => out.push(Softnet {
                cpu: if v.len() >= 13 {
                    u32::try_from(v[12]).unwrap_or(u32::MAX)
                } else {
                    rank as u32
                },
                processed: v[0],
                dropped: v[1],
                time_squeeze: v[2],
                received_rps: v[9],
                line: n,
            }),
            Some(v) => f.fault_at(
                d,
                n,
                format!(
                    "{} fields: softnet_stat prints 10 to 15 hexadecimal fields a CPU",
                    v.len()
                ),
            ),
            None => f.fault_at(d, n, "not hexadecimal fields (`%08x`)"),
        }
    }
    if out.is_empty() && f.faults.iter().all(|x| x.file != d.name) {
        f.fault(d.name.clone(), "no CPU line: not /proc/net/softnet_stat");
    }
    out
}

/// Parse `/proc/net/dev`.
pub fn net_dev(d: &Dump, f: &mut Findings) -> BTreeMap<String, NetDev> {
    let mut out = BTreeMap::new();
    for (n, line) in d.numbered() {
        // The two header lines (`Inter-|   Receive ...`, ` face |bytes ...`).
        if line.contains('|') {
            continue;
        }
        let Some((name, rest)) = line.split_once(':') else {
            f.fault_at(d, n, "not `<interface>: <16 counters>`");
            continue;
        };
        let name = name.trim();
        let cols: Option<Vec<u64>> = rest.split_whitespace().map(whole).collect();
        match cols {
            Some(v) if v.len() == 16 => {
                let mut cols = [0u64; 16];
                cols.copy_from_slice(&v);
                out.insert(name.to_string(), NetDev { cols, line: n });
            }
            _ => f.fault_at(d, n, "not 16 whole numbers after the interface's name"),
        }
    }
    out
}

/// Parse `ethtool -S <if>`: counter name (trimmed) to (value, line).
pub fn ethtool_s(d: &Dump, f: &mut Findings) -> BTreeMap<String, (u64, usize)> {
    let mut out = BTreeMap::new();
    let mut lines = d.numbered();
    match lines.next() {
        Some((_, l)) if l.trim() == "NIC statistics:" => {}
        Some((n, _)) => {
            f.fault_at(d, n, "not `NIC statistics:`: not the output of ethtool -S");
            return out;
        }
        None => return out,
    }
    for (n, line) in lines {
        match line
            .rsplit_once(':')
            .map(|(k, v)| (k.trim(), whole(v.trim())))
        {
            Some((k, Some(v))) if !k.is_empty() => {
                out.entry(k.to_string()).or_insert((v, n));
            }
            _ => f.fault_at(d, n, "not `<counter>: <whole number>`"),
        }
    }
    out
}

/// Parse `/proc/stat`'s `cpu<N>` lines.
pub fn stat(d: &Dump, f: &mut Findings) -> BTreeMap<u32, CpuTicks> {
    let mut out = BTreeMap::new();
    let mut other = 0;
    for (n, line) in d.numbered() {
        let mut t = line.split_whitespace();
        let Some(cpu) = t.next().and_then(|c| c.strip_prefix("cpu")) else {
            other += 1;
            continue;
        };
        let Some(k) = (!cpu.is_empty())
            .then(|| whole(cpu).and_then(|x| u32::try_from(x).ok()))
            .flatten()
        else {
            other += 1;
            continue;
        };
        let v: Option<Vec<u64>> = t.map(whole).collect();
        match v {
            Some(v) if v.len() >= 7 => {
                // user nice system idle iowait irq softirq [steal]; guest and
                // guest_nice are inside user and nice already (account_guest_time).
                let total = v.iter().take(8).sum();
                out.insert(
                    k,
                    CpuTicks {
                        total,
                        irq: v[5],
                        softirq: v[6],
                        line: n,
                    },
                );
            }
            _ => f.fault_at(d, n, "not `cpu<N>` and at least 7 whole numbers of ticks"),
        }
    }
    f.ignore(&d.name, other, "lines other than cpu<N>");
    out
}

/// Parse `time`: seconds since the epoch (`date +%s.%N`).
pub fn time(d: &Dump, f: &mut Findings) -> Option<Sourced<f64>> {
    let (n, line) = d.numbered().next()?;
    match line.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Some(d.sourced(n, v)),
        _ => {
            f.fault_at(d, n, "not a time in seconds (`date +%s.%N`)");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softnet_lines_of_old_and_new_kernels() {
        let text = "00000010 00000002 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000007 00000000 00000000 00000005 00000000 00000000\n\
                    0000000a 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n";
        let mut f = Findings::default();
        let v = softnet(&Dump::from_text("softnet_stat", text), &mut f);
        assert!(f.faults.is_empty(), "{:?}", f.faults);
        assert_eq!((v[0].cpu, v[0].processed, v[0].dropped), (5, 16, 2));
        assert_eq!((v[0].time_squeeze, v[0].received_rps), (3, 7));
        // Ten fields: no CPU index, the line's rank stands for it.
        assert_eq!((v[1].cpu, v[1].processed), (1, 10));
        let mut f = Findings::default();
        softnet(&Dump::from_text("softnet_stat", "0000000g 1 2\n"), &mut f);
        assert_eq!(f.faults.len(), 1);
        assert_eq!(f.faults[0].line.as_ref().unwrap().0, 1);
    }

    #[test]
    fn net_dev_ethtool_and_stat_read_as_printed() {
        let nd = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n  eth0: 3133200   52220    0    7    0     0          0         0        0       0    0    0    0     0       0          0\n";
        let mut f = Findings::default();
        let m = net_dev(&Dump::from_text("net-dev", nd), &mut f);
        assert!(f.faults.is_empty());
        assert_eq!((m["eth0"].rx_packets(), m["eth0"].rx_drop()), (52220, 7));
        let es = "NIC statistics:\n     rx_packets: 52220\n       ucast pkts rx: 3\n";
        let e = ethtool_s(&Dump::from_text("ethtool-S-eth0", es), &mut f);
        assert_eq!(e["rx_packets"], (52220, 2));
        assert_eq!(e["ucast pkts rx"].0, 3);
        let st = "cpu  10 0 10 100 0 0 5 0 0 0\ncpu0 1 0 2 50 0 1 4 0 0 0\nintr 5\n";
        let s = stat(&Dump::from_text("stat", st), &mut f);
        assert!(f.faults.is_empty());
        assert_eq!((s[&0].total, s[&0].softirq, s[&0].irq), (58, 4, 1));
        assert_eq!(s.len(), 1);
    }
}
