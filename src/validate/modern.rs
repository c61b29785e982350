//! Today's Linux mechanisms against their authors' own measurements:
//!
//! - preferred busy polling (Linux 5.11, SO_PREFER_BUSY_POLL) against Björn Töpel's
//!   cover letter "Introduce preferred busy-polling" (netdev, 2020-11-12; UDP ping-pong
//!   on ice, busy_read 20): 490 k replies/s with the application on a core of its own
//!   (the calibration of its cost, within 1 %), 155 k sharing the core that takes the
//!   interrupts and 420 k with the option (predictions, within 25 %);
//!   `scenarios/prefer-busy-poll-udp-pingpong.json`; and the same letter's AF_XDP
//!   rxdrop rates (xdpsock on ice): 64 k frames/s on the softirq's core, 9.9 / 19.3 /
//!   21.4 / 21.7 M with preferred busy polling by budget 8 / 64 / 256 / 512 (budget 8
//!   the calibration of xdpsock's per-call cost, within 1 %; the rest predictions
//!   within 25 %) and 20.7 M on two cores; `scenarios/prefer-busy-poll-af-xdp.json`;
//! - IRQ suspension (Linux 6.13, `irq_suspend_timeout`) against Damato and Karsten's
//!   memcached runs (github martinkarsten/irqsuspend at d59592c6, results-v1): the CPU
//!   of each variant at 200 k - 1 M queries/s within 10 points, and the one calibration
//!   point (fullbusy at MAX, 1,159,578 queries/s, within 1 %);
//!   `scenarios/irq-suspend-memcached.json`. Its latencies are compared by their order
//!   only (the simulated latency is the host's; mutilate's adds its clients and the
//!   network), which `tests/it/irq_suspend.rs` checks; the scoreboard has no row for it.
//!
//! docs/model.md, "Preferred busy polling: Töpel's UDP ping-pong" and "IRQ suspension:
//! Damato and Karsten's memcached", gives every assumption and mechanism.

use super::Table;
use super::scoreboard::{Check, Tolerance};
use crate::config::scenario::Experiment;
use crate::results::{PointResult, Results};

/// Töpel's reply rates \[replies/s\]: (case, variant, measured, tolerance).
pub const PREFER_BUSY_POLL_RATES: [(&str, &str, f64, Tolerance); 5] = [
    (
        "blocking, 2 cores",
        "blocking-2-cores",
        490_000.0,
        Tolerance::relative(1.0),
    ),
    (
        "blocking, 1 core",
        "blocking-1-core",
        155_000.0,
        Tolerance::relative(25.0),
    ),
    (
        "non-blocking, 2 cores",
        "nonblocking-2-cores",
        475_000.0,
        Tolerance::relative(25.0),
    ),
    (
        "non-blocking, 1 core",
        "nonblocking-1-core",
        3_000.0,
        Tolerance::relative(25.0),
    ),
    (
        "prefer busy-poll, 1 core",
        "prefer-busy-poll-1-core",
        420_000.0,
        Tolerance::relative(25.0),
    ),
];

/// Preferred busy polling.
pub const PREFER_BUSY_POLL: Table = Table {
    name: "prefer-busy-poll",
    title: "preferred busy polling, UDP ping-pong (Töpel's cover letter, 2020)",
    scenario: "scenarios/prefer-busy-poll-udp-pingpong.json",
    source: "Björn Töpel, \"Introduce preferred busy-polling\" (netdev, 2020-11-12), \
             section \"Performance simple UDP ping-pong\", cases 1 to 5",
    checks: prefer_busy_poll,
};

fn prefer_busy_poll(_: &Table, _: &Experiment, r: &Results) -> Vec<Check> {
    PREFER_BUSY_POLL_RATES
        .iter()
        .map(|&(case, v, measured, tolerance)| Check {
            case: case.to_string(),
            quantity: "reply rate".into(),
            unit: "replies/s".into(),
            measured,
            simulated: super::seeds::variant(r, v).figures.total.forwarded_pps,
            tolerance,
        })
        .collect()
}

/// Töpel's AF_XDP rxdrop rates \[frames/s\]: (case, variant, measured, tolerance).
/// The budget-8 row calibrates xdpsock's per-call cost (`user.per_call`), within 1 %;
/// the rest are predictions within the 25 %.
pub const AF_XDP_RATES: [(&str, &str, f64, Tolerance); 6] = [
    (
        "rxdrop, 1 core",
        "rxdrop-1-core",
        64_000.0,
        Tolerance::relative(25.0),
    ),
    (
        "busy-poll budget 8, 1 core (calibration)",
        "busy-poll-budget-8",
        9_900_000.0,
        Tolerance::relative(1.0),
    ),
    (
        "busy-poll budget 64, 1 core",
        "busy-poll-budget-64",
        19_300_000.0,
        Tolerance::relative(25.0),
    ),
    (
        "busy-poll budget 256, 1 core",
        "busy-poll-budget-256",
        21_400_000.0,
        Tolerance::relative(25.0),
    ),
    (
        "busy-poll budget 512, 1 core",
        "busy-poll-budget-512",
        21_700_000.0,
        Tolerance::relative(25.0),
    ),
    (
        "rxdrop, 2 cores",
        "rxdrop-2-cores",
        20_700_000.0,
        Tolerance::relative(25.0),
    ),
];

/// Preferred busy polling from an AF_XDP socket.
pub const PREFER_BUSY_POLL_AF_XDP: Table = Table {
    name: "prefer-busy-poll-af-xdp",
    title: "preferred busy polling, AF_XDP rxdrop (Töpel's cover letter, 2020)",
    scenario: "scenarios/prefer-busy-poll-af-xdp.json",
    source: "Björn Töpel, \"Introduce preferred busy-polling\" (netdev, 2020-11-12), \
             section \"Performance XDP sockets\" (xdpsock -r, ice)",
    checks: af_xdp,
};

/// The frames xdpsock received per second of the run in variant `v` (its `rx` count).
pub fn af_xdp_rate(e: &Experiment, r: &Results, v: &str) -> f64 {
    super::seeds::variant(r, v).figures.counters["user.packets"] / e.duration_s
}

fn af_xdp(_: &Table, e: &Experiment, r: &Results) -> Vec<Check> {
    AF_XDP_RATES
        .iter()
        .map(|&(case, v, measured, tolerance)| Check {
            case: case.to_string(),
            quantity: "receive rate".into(),
            unit: "frames/s".into(),
            measured,
            simulated: af_xdp_rate(e, r, v),
            tolerance,
        })
        .collect()
}

/// IRQ suspension.
pub const IRQ_SUSPEND: Table = Table {
    name: "irq-suspend-memcached",
    title: "IRQ suspension, memcached on 8 cores (Damato and Karsten, 2024)",
    scenario: "scenarios/irq-suspend-memcached.json",
    source: "github martinkarsten/irqsuspend at d59592c6, results-v1 (mutilate's \"Total \
             QPS\", sar's 100 - %idle over cores 32-39, means over 10 repetitions)",
    checks: irq_suspend,
};

/// The measured table: (target queries/s, 0 for mutilate's MAX; variant; queries/s
/// achieved; average and 99th-percentile read latency \[us\]; CPU \[%\]; repetitions).
/// From github.com/martinkarsten/irqsuspend at commit
/// d59592c6f98d68facc56006d3ad20693ba10dfc1, results-v1/: `mutilate-<load>-<variant>-
/// <rep>.out` ("Total QPS" field 4, the "read" row's avg field 2 and 99th field 10) and
/// `sar-<load>-<variant>-<rep>.out` (100 - %idle of each core's "Average:" row, cores
/// 32-39), each the plain mean over the repetitions and, for CPU, over the 8 cores.
/// (`tests/it/irq_suspend.rs` holds the same table, as its own mechanism is being
/// changed; the two are the same figures.)
#[allow(clippy::type_complexity)]
pub const IRQ_SUSPEND_MEASURED: [(u32, &str, f64, f64, f64, f64, u32); 42] = [
    (200000, "base", 200042.0, 114.0, 423.3, 27.7, 10),
    (200000, "defer20", 199971.0, 59.1, 149.3, 26.2, 10),
    (200000, "defer200", 200025.0, 164.7, 315.9, 17.9, 10),
    (200000, "napibusy", 200022.0, 100.4, 272.9, 56.1, 10),
    (200000, "fullbusy", 200000.0, 47.2, 158.0, 100.0, 10),
    (200000, "suspend20", 199967.0, 57.8, 177.6, 28.6, 10),
    (200000, "suspend200", 199983.0, 149.3, 298.0, 19.5, 10),
    (400000, "base", 399983.0, 141.2, 729.5, 42.5, 10),
    (400000, "defer20", 400029.0, 66.9, 166.8, 46.0, 10),
    (400000, "defer200", 399964.0, 183.4, 349.4, 33.6, 10),
    (400000, "napibusy", 399897.0, 77.9, 295.0, 83.4, 10),
    (400000, "fullbusy", 400071.0, 51.6, 148.9, 100.0, 10),
    (400000, "suspend20", 400015.0, 61.1, 158.0, 47.1, 10),
    (400000, "suspend200", 399968.0, 154.7, 326.4, 35.4, 10),
    (600000, "base", 599951.0, 164.3, 723.1, 64.3, 10),
    (600000, "defer20", 599985.0, 78.0, 196.0, 67.9, 10),
    (600000, "defer200", 599924.0, 204.4, 372.4, 48.2, 10),
    (600000, "napibusy", 600077.0, 66.2, 257.1, 96.1, 10),
    (600000, "fullbusy", 599942.0, 58.8, 201.9, 100.0, 10),
    (600000, "suspend20", 599997.0, 68.8, 215.3, 64.5, 10),
    (600000, "suspend200", 599982.0, 159.7, 360.3, 50.7, 10),
    (800000, "base", 800057.0, 366.8, 2386.5, 84.0, 10),
    (800000, "defer20", 799931.0, 283.3, 2667.1, 89.3, 10),
    (800000, "defer200", 800013.0, 264.2, 813.0, 73.2, 10),
    (800000, "napibusy", 800007.0, 80.4, 452.9, 99.3, 10),
    (800000, "fullbusy", 799966.0, 64.6, 191.3, 100.0, 10),
    (800000, "suspend20", 800057.0, 111.5, 1224.3, 80.9, 10),
    (800000, "suspend200", 800079.0, 163.4, 379.9, 67.0, 10),
    (1000000, "base", 962651.0, 4238.4, 7568.9, 99.1, 10),
    (1000000, "defer20", 896278.0, 4759.8, 7144.0, 99.5, 10),
    (1000000, "defer200", 979727.0, 3540.4, 7475.5, 97.8, 10),
    (1000000, "napibusy", 999992.0, 108.5, 643.0, 99.9, 10),
    (1000000, "fullbusy", 1000099.0, 89.5, 474.0, 100.0, 10),
    (1000000, "suspend20", 1000059.0, 115.7, 847.5, 92.4, 10),
    (1000000, "suspend200", 999944.0, 181.9, 681.4, 83.5, 10),
    (0, "base", 982241.0, 4455.9, 7162.8, 99.5, 10),
    (0, "defer20", 966120.0, 4561.3, 6065.3, 100.0, 10),
    (0, "defer200", 1022960.0, 4283.5, 6427.7, 99.5, 10),
    (0, "napibusy", 1067116.0, 4085.5, 9845.9, 99.2, 10),
    (0, "fullbusy", 1159578.0, 3788.1, 4389.9, 100.0, 10),
    (0, "suspend20", 1150835.0, 3816.7, 4370.4, 99.9, 10),
    (0, "suspend200", 1128863.0, 3887.3, 4468.9, 100.0, 10),
];

/// The variants in the paper's order.
pub const IRQ_SUSPEND_VARIANTS: [&str; 7] = [
    "base",
    "defer20",
    "defer200",
    "napibusy",
    "fullbusy",
    "suspend20",
    "suspend200",
];

/// The loads of the paper's range \[queries/s\], MAX left out.
pub const IRQ_SUSPEND_LOADS: [u32; 5] = [200_000, 400_000, 600_000, 800_000, 1_000_000];

/// The measured server's cores; the model runs one of them at an eighth of the load.
const CORES: f64 = 8.0;

/// The simulated point of `variant` at the measured target `qps` (0: MAX, the
/// scenario's overload point of 200 k requests/s a core).
pub fn point<'a>(r: &'a Results, qps: u32, variant: &str) -> &'a PointResult {
    let per_core = if qps == 0 {
        200_000.0
    } else {
        qps as f64 / CORES
    };
    r.points
        .iter()
        .find(|p| p.variant == variant && (p.offered_pps - per_core).abs() < 1.0)
        .unwrap_or_else(|| panic!("the scenario has no point {variant} at {qps}"))
}

fn measured(qps: u32, variant: &str) -> &'static (u32, &'static str, f64, f64, f64, f64, u32) {
    IRQ_SUSPEND_MEASURED
        .iter()
        .find(|m| m.0 == qps && m.1 == variant)
        .expect("a measured row")
}

fn irq_suspend(_: &Table, _: &Experiment, r: &Results) -> Vec<Check> {
    let cpu = |p: &PointResult| 100.0 - p.figures.mpstat.as_ref().map_or(f64::NAN, |m| m.all.idle);
    let mut out = vec![Check {
        case: "MAX fullbusy (calibration)".into(),
        quantity: "query rate".into(),
        unit: "queries/s".into(),
        measured: measured(0, "fullbusy").2,
        simulated: point(r, 0, "fullbusy").figures.total.forwarded_pps * CORES,
        tolerance: Tolerance::relative(1.0),
    }];
    for q in IRQ_SUSPEND_LOADS {
        for v in IRQ_SUSPEND_VARIANTS {
            out.push(Check {
                case: format!("{}k {v}", q / 1000),
                quantity: "CPU".into(),
                unit: "%".into(),
                measured: measured(q, v).5,
                simulated: cpu(point(r, q, v)),
                tolerance: Tolerance::absolute(10.0),
            });
        }
    }
    out
}
