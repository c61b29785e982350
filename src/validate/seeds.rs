//! The mailing-list reports (*seeds*) whose figures a shipped scenario reproduces, each
//! cited in its scenario's `description` and its model's `notes`:
//!
//! - seed 002, em(4) in FreeBSD 6.2 under netperf TCP_RR
//!   (`scenarios/em-rr-freebsd62.json`): stock em 2,999.9 transactions/s, EM_FAST_INTR
//!   6,165/s; within 10 % (the peer's 25 us turnaround is an estimate, not fitted);
//! - seed 004, ttcp on a Xeon with bge(4) (`scenarios/tx-sender-mbuf.json`, the
//!   freebsd-performance thread of April 2003): about 20,000, 27,500 and 28,000
//!   packets/s before the mbuf patch, after it and on NetBSD, within 10 %; NetBSD's CPU
//!   12 % busy (top: 6.5 % system + 5.5 % interrupt) within 4 points; FreeBSD CPU-bound
//!   (vmstat: 0 % idle) within 1 point.
//!
//! - seed 003, xl(4)'s statistics-overflow spikes (`scenarios/xl-stats-overflow.json`,
//!   FreeBSD 4.1.1 on a Pentium 100 with two 3c905B): "The average forwarding latency
//!   time is 52us" below 1,000 packets/s, spikes "up to 6000us" from 1,000 packets/s on;
//!   each within 15 % (the variant `as-reported`; the remedies have no measurement).
//!
//! docs/validation.md, "em(4) in FreeBSD 6.2", "A host as sender" and "Statistics-counter
//! spikes: the xl(4) report", says why.

use super::Table;
use super::scoreboard::{Check, Tolerance};
use crate::config::scenario::Experiment;
use crate::results::{PointResult, Results};

/// Seed 002's transaction rates \[transactions/s\]: (variant, measured). The stock
/// figure is the mean of the thread's runs (2,999.88 and 2,999.61 in two of them), the
/// fast one the 62 s run's 6,165 (6,165.46; 6,163.75 in the 60 s run).
pub const EM_RR_TPS: [(&str, f64); 2] = [("stock", 2_999.9), ("fast-intr", 6_165.0)];

/// Seed 002's tolerance \[%\].
pub const EM_RR_TOLERANCE: Tolerance = Tolerance::relative(10.0);

/// Seed 004's send rates \[packets/s\], from the thread's table "PPS (MTU=4470)".
pub const TX_SENDER_PPS: [(&str, f64); 3] = [
    ("freebsd48-slow-mbuf", 20_000.0),
    ("freebsd48-patched", 27_500.0),
    ("netbsd", 28_000.0),
];

/// Seed 004's send-rate tolerance \[%\].
pub const TX_SENDER_TOLERANCE: Tolerance = Tolerance::relative(10.0);

/// NetBSD's busy CPU in seed 004 \[%\]: top's 6.5 % system + 5.5 % interrupt.
pub const NETBSD_BUSY_PCT: f64 = 12.0;

/// Seed 003's average forwarding latency below 1,000 packets/s \[us\].
pub const XL_AVG_US: f64 = 52.0;

/// Seed 003's latency spikes from 1,000 packets/s on \[us\].
pub const XL_SPIKE_US: f64 = 6000.0;

/// Seed 003's tolerance \[%\].
pub const XL_TOLERANCE: Tolerance = Tolerance::relative(15.0);

/// Seed 003's table.
pub const XL_SPIKES: Table = Table {
    name: "xl-stats-overflow",
    title: "xl(4)'s statistics-overflow latency spikes (seed 003)",
    scenario: "scenarios/xl-stats-overflow.json",
    source: "seed 003 (FreeBSD 4.1.1, Pentium 100, two 3c905B: \"The average forwarding \
             latency time is 52us\", spikes \"up to 6000us\" from 1000 pkt/s on)",
    checks: xl_spikes,
};

/// Seed 002's table.
pub const EM_RR: Table = Table {
    name: "em-rr-freebsd62",
    title: "em(4) of FreeBSD 6.2 under netperf TCP_RR (seed 002)",
    scenario: "scenarios/em-rr-freebsd62.json",
    source: "seed 002 (the thread's netperf TCP_RR runs: stock em and EM_FAST_INTR)",
    checks: em_rr,
};

/// Seed 004's table.
pub const TX_SENDER: Table = Table {
    name: "tx-sender-freebsd48",
    title: "ttcp as sender on a Xeon with bge(4), MTU 4470 (seed 004)",
    scenario: "scenarios/tx-sender-mbuf.json",
    source: "seed 004 (freebsd-performance, April 2003: the table \"PPS (MTU=4470)\", \
             vmstat and top)",
    checks: tx_sender,
};

/// The point of `variant` (these scenarios have one load point).
pub fn variant<'a>(r: &'a Results, variant: &str) -> &'a PointResult {
    r.points
        .iter()
        .find(|p| p.variant == variant)
        .unwrap_or_else(|| panic!("the scenario has no variant {variant}"))
}

fn em_rr(_: &Table, _: &Experiment, r: &Results) -> Vec<Check> {
    EM_RR_TPS
        .iter()
        .map(|&(v, measured)| Check {
            case: v.to_string(),
            quantity: "transaction rate".into(),
            unit: "transactions/s".into(),
            measured,
            simulated: variant(r, v).figures.total.forwarded_pps,
            tolerance: EM_RR_TOLERANCE,
        })
        .collect()
}

fn tx_sender(_: &Table, _: &Experiment, r: &Results) -> Vec<Check> {
    let mut out: Vec<Check> = TX_SENDER_PPS
        .iter()
        .map(|&(v, measured)| Check {
            case: v.to_string(),
            quantity: "send rate".into(),
            unit: "packets/s".into(),
            measured,
            simulated: variant(r, v)
                .figures
                .sender
                .as_ref()
                .map_or(f64::NAN, |s| s.pps),
            tolerance: TX_SENDER_TOLERANCE,
        })
        .collect();
    let busy = |v: &str| 100.0 * (1.0 - variant(r, v).figures.cpu.idle);
    out.push(Check {
        case: "netbsd".into(),
        quantity: "CPU busy".into(),
        unit: "%".into(),
        measured: NETBSD_BUSY_PCT,
        simulated: busy("netbsd"),
        tolerance: Tolerance::absolute(4.0),
    });
    for v in ["freebsd48-slow-mbuf", "freebsd48-patched"] {
        out.push(Check {
            case: v.to_string(),
            quantity: "CPU busy".into(),
            unit: "%".into(),
            measured: 100.0,
            simulated: busy(v),
            tolerance: Tolerance::absolute(1.0),
        });
    }
    out
}

fn xl_spikes(_: &Table, _: &Experiment, r: &Results) -> Vec<Check> {
    let mut out = Vec::new();
    for p in r.points.iter().filter(|p| p.variant == "as-reported") {
        let case = format!("{} pps", p.offered_pps);
        let l = &p.figures.total.latency_us;
        out.push(if p.offered_pps < 1000.0 {
            Check {
                case,
                quantity: "avg latency".into(),
                unit: "us".into(),
                measured: XL_AVG_US,
                simulated: l.avg,
                tolerance: XL_TOLERANCE,
            }
        } else {
            Check {
                case,
                quantity: "max latency".into(),
                unit: "us".into(),
                measured: XL_SPIKE_US,
                simulated: l.max,
                tolerance: XL_TOLERANCE,
            }
        });
    }
    out
}
