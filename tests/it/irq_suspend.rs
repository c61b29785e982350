//! IRQ suspension (Linux 6.13, `irq_suspend_timeout`) against J. Damato and M. Karsten,
//! "Suspend IRQs during application busy periods" (netdev, 2024-11), whose experiments
//! and raw results are github.com/martinkarsten/irqsuspend: memcached, 8 threads on the 8
//! cores that take the interrupts of 8 ConnectX-5 Ex channels (AMD EPYC 7662, mlx5),
//! driven by mutilate from 200 k to 1 M queries/s, in the variants base, defer20,
//! defer200, napibusy, fullbusy, suspend20 and suspend200 (run.sh gives their knobs). On
//! the shipped scenario `scenarios/irq-suspend-memcached.json` (its notes give every
//! assumption; docs/model.md "IRQ suspension: Damato and Karsten's memcached").
//!
//! The host is the shipped mlx5 Linux model with the EPYC's clock and acpi_idle states;
//! one of the 8 queue/core/thread triples runs at an eighth of the load; memcached's
//! per-request cost is calibrated on ONE point, fullbusy at MAX (1,159,578 queries/s
//! at 100 % of 8 cores); every 200 k - 1 M row is a prediction. The simulated latency
//! is the host's (first bit in, last bit out), mutilate's adds its clients and the
//! network, so latencies are compared by their order only. Simulated against measured
//! (results-v1; "(miss)": CPU more than 10 points off):
//!
//! | load | variant | measured k q/s, avg, p99 [us], CPU % | simulated (host only) |
//! |---|---|---|---|
//! | 200 k | base | 200.0, 114.0, 423.3, 27.7 | 199.5, 336.4, 839.7, 17.6 (miss) |
//! | 200 k | defer20 | 200.0, 59.1, 149.3, 26.2 | 199.6, 21.3, 34.9, 20.4 |
//! | 200 k | defer200 | 200.0, 164.7, 315.9, 17.9 | 199.4, 336.4, 612.4, 17.3 |
//! | 200 k | napibusy | 200.0, 100.4, 272.9, 56.1 | 199.6, 94.5, 599.0, 73.1 (miss) |
//! | 200 k | fullbusy | 200.0, 47.2, 158.0, 100.0 | 199.6, 9.2, 17.2, 100.0 |
//! | 200 k | suspend20 | 200.0, 57.8, 177.6, 28.6 | 199.6, 20.2, 34.2, 20.1 |
//! | 200 k | suspend200 | 200.0, 149.3, 298.0, 19.5 | 199.6, 256.6, 609.8, 17.4 |
//! | 400 k | base | 400.0, 141.2, 729.5, 42.5 | 401.4, 636.6, 1,501.2, 34.9 |
//! | 400 k | defer20 | 400.0, 66.9, 166.8, 46.0 | 401.8, 23.6, 41.2, 37.8 |
//! | 400 k | defer200 | 400.0, 183.4, 349.4, 33.6 | 401.3, 351.5, 622.6, 34.8 |
//! | 400 k | napibusy | 399.9, 77.9, 295.0, 83.4 | 401.8, 19.2, 386.6, 97.8 (miss) |
//! | 400 k | fullbusy | 400.1, 51.6, 148.9, 100.0 | 401.8, 10.4, 24.1, 100.0 |
//! | 400 k | suspend20 | 400.0, 61.1, 158.0, 47.1 | 401.8, 21.5, 40.2, 37.2 |
//! | 400 k | suspend200 | 400.0, 154.7, 326.4, 35.4 | 401.6, 281.3, 619.0, 34.8 |
//! | 600 k | base | 600.0, 164.3, 723.1, 64.3 | 593.8, 770.5, 1,337.3, 51.4 (miss) |
//! | 600 k | defer20 | 600.0, 78.0, 196.0, 67.9 | 595.0, 26.9, 52.6, 54.4 (miss) |
//! | 600 k | defer200 | 599.9, 204.4, 372.4, 48.2 | 594.9, 374.9, 634.4, 51.5 |
//! | 600 k | napibusy | 600.1, 66.2, 257.1, 96.1 | 595.0, 12.5, 34.2, 100.0 |
//! | 600 k | fullbusy | 599.9, 58.8, 201.9, 100.0 | 595.0, 12.4, 33.6, 100.0 |
//! | 600 k | suspend20 | 600.0, 68.8, 215.3, 64.5 | 595.0, 23.8, 49.7, 53.6 (miss) |
//! | 600 k | suspend200 | 600.0, 159.7, 360.3, 50.7 | 594.6, 270.4, 629.2, 51.5 |
//! | 800 k | base | 800.1, 366.8, 2,386.5, 84.0 | 800.0, 739.2, 1,150.0, 69.2 (miss) |
//! | 800 k | defer20 | 799.9, 283.3, 2,667.1, 89.3 | 801.4, 33.0, 78.8, 72.2 (miss) |
//! | 800 k | defer200 | 800.0, 264.2, 813.0, 73.2 | 800.7, 389.3, 646.1, 69.3 |
//! | 800 k | napibusy | 800.0, 80.4, 452.9, 99.3 | 801.4, 16.8, 54.7, 100.0 |
//! | 800 k | fullbusy | 800.0, 64.6, 191.3, 100.0 | 801.4, 16.8, 54.7, 100.0 |
//! | 800 k | suspend20 | 800.1, 111.5, 1,224.3, 80.9 | 801.4, 28.3, 74.8, 71.1 |
//! | 800 k | suspend200 | 800.1, 163.4, 379.9, 67.0 | 800.4, 283.1, 642.6, 69.2 |
//! | 1000 k | base | 962.7, 4,238.4, 7,568.9, 99.1 | 1,000.5, 682.8, 1,009.2, 86.5 (miss) |
//! | 1000 k | defer20 | 896.3, 4,759.8, 7,144.0, 99.5 | 1,001.9, 56.8, 191.5, 89.5 (miss) |
//! | 1000 k | defer200 | 979.7, 3,540.4, 7,475.5, 97.8 | 1,001.5, 374.1, 675.8, 86.6 (miss) |
//! | 1000 k | napibusy | 1,000.0, 108.5, 643.0, 99.9 | 1,002.0, 31.9, 120.1, 100.0 |
//! | 1000 k | fullbusy | 1,000.1, 89.5, 474.0, 100.0 | 1,002.0, 31.9, 120.1, 100.0 |
//! | 1000 k | suspend20 | 1,000.1, 115.7, 847.5, 92.4 | 1,001.9, 47.7, 164.4, 88.1 |
//! | 1000 k | suspend200 | 999.9, 181.9, 681.4, 83.5 | 1,001.1, 278.2, 662.0, 86.5 |
//! | MAX | base | 982.2, 4,455.9, 7,162.8, 99.5 | 1,118.0, 3,989.5, 4,130.8, 100.0 |
//! | MAX | defer20 | 966.1, 4,561.3, 6,065.3, 100.0 | 1,083.3, 4,087.3, 4,186.1, 100.0 |
//! | MAX | defer200 | 1,023.0, 4,283.5, 6,427.7, 99.5 | 1,116.9, 3,987.5, 4,118.5, 100.0 |
//! | MAX | napibusy | 1,067.1, 4,085.5, 9,845.9, 99.2 | 1,117.4, 3,982.0, 4,118.5, 100.0 |
//! | MAX | fullbusy | 1,159.6, 3,788.1, 4,389.9, 100.0 | 1,159.7, 7,043.3, 7,376.9, 100.0 |
//! | MAX | suspend20 | 1,150.8, 3,816.7, 4,370.4, 99.9 | 1,159.7, 7,043.3, 7,376.9, 100.0 |
//! | MAX | suspend200 | 1,128.9, 3,887.3, 4,468.9, 100.0 | 1,159.7, 7,043.3, 7,376.9, 100.0 |
//!
//! What is checked: the order of the variants at each load (66 of the 70 pairs whose
//! measured averages differ by more than 25 % are in the measured order; the orders the
//! paper's result rests on are asserted), CPU within 10 points (24 of 35 rows; each miss
//! is on the side its mechanism gives), and the 1 M point where the four variants that
//! hold in the measurements hold here too. Misses, printed and explained here and in
//! docs/model.md, never pinned as expected values:
//!
//! - the 1 M collapse of base and defer is not reproduced: the model's base pays what
//!   busy polling pays per query (6.91 us against 6.90), so its capacity stays above
//!   1 M, where the measured base pays 8.14 us a query at MAX; the missing 1.24 us (the
//!   thread's wake-ups, the softirq and the application taking turns on the core, the
//!   interrupts at their measured rate) is also the CPU misses of base and defer20;
//! - base's latency is too high: the model's DIM parks on its deepest CQE profile (64
//!   us, 64 completions), 12-44 queries an interrupt from 400 k on where the measured
//!   base takes 4-11, and C2's declared 400 us exit adds to it at 200 k;
//! - napibusy's CPU at 200 and 400 k is too high: its 64 us loop finds the next Poisson
//!   request before it times out more often than the real one.

use irqsim::results::Results;
// The measured table, its variants in the paper's order and its loads: the one copy is
// the scoreboard's (src/validate/modern.rs), with its source.
use irqsim::validate::modern::{
    IRQ_SUSPEND_LOADS as LOADS, IRQ_SUSPEND_MEASURED as MEASURED, IRQ_SUSPEND_VARIANTS as VARIANTS,
    point,
};

/// The cores (and queues, and memcached threads) of the measured server; the model
/// runs one of them at an eighth of the load.
const CORES: f64 = 8.0;

/// The shipped scenario's sweep, simulated once for the test binary (shared with the
/// scoreboard, `tests/it/scoreboard.rs`).
fn results() -> &'static Results {
    &crate::scoreboard::table_run("irq-suspend-memcached").results
}

/// A row: queries/s (all 8 cores), average and p99 latency [us], CPU [%] (100 - %idle).
#[derive(Clone, Copy, Debug)]
struct Row {
    qps: f64,
    avg_us: f64,
    p99_us: f64,
    cpu_pct: f64,
}

fn simulated(r: &Results, qps: u32, variant: &str) -> Row {
    let p = point(r, qps, variant);
    let m = &p.figures.mpstat.as_ref().expect("mpstat").all;
    Row {
        qps: p.figures.total.forwarded_pps * CORES,
        avg_us: p.figures.total.latency_us.avg,
        p99_us: p.figures.total.latency_us.p99,
        cpu_pct: 100.0 - m.idle,
    }
}

fn measured(qps: u32, variant: &str) -> Row {
    let m = MEASURED
        .iter()
        .find(|m| m.0 == qps && m.1 == variant)
        .unwrap_or_else(|| panic!("{variant} at {qps}"));
    Row {
        qps: m.2,
        avg_us: m.3,
        p99_us: m.4,
        cpu_pct: m.5,
    }
}

fn print_table(r: &Results) {
    eprintln!(
        "{:>7} {:>10} | {:>9} {:>7} {:>7} {:>5} | {:>9} {:>7} {:>7} {:>5}",
        "load", "variant", "meas qps", "avg", "p99", "cpu", "sim qps", "avg", "p99", "cpu"
    );
    for &(q, v, ..) in MEASURED.iter() {
        let (m, s) = (measured(q, v), simulated(r, q, v));
        let load = if q == 0 {
            "MAX".to_string()
        } else {
            format!("{}k", q / 1000)
        };
        eprintln!(
            "{load:>7} {v:>10} | {:>9.0} {:>7.1} {:>7.1} {:>5.1} | {:>9.0} {:>7.1} {:>7.1} {:>5.1}",
            m.qps, m.avg_us, m.p99_us, m.cpu_pct, s.qps, s.avg_us, s.p99_us, s.cpu_pct
        );
    }
}

/// The variants that hold at 1 M queries/s in the measurements (served at the target
/// rate, latency below 200 us); base and the defer variants collapse there.
const HOLD_AT_1M: [&str; 4] = ["napibusy", "fullbusy", "suspend20", "suspend200"];

/// The order of two variants' average latency at a load, measured and simulated, for
/// the pairs whose measured averages differ by more than 25 % (closer pairs are within
/// the repetitions' spread and have no order to keep). At 1 M only the variants that
/// hold are ranked (those that collapse are the collapse check's). Returns (agreeing
/// pairs, missed pairs as text).
fn latency_order(r: &Results) -> (usize, Vec<String>) {
    let mut agree = 0;
    let mut missed = Vec::new();
    for q in LOADS {
        let ranked: Vec<&str> = VARIANTS
            .iter()
            .copied()
            .filter(|v| q < 1_000_000 || HOLD_AT_1M.contains(v))
            .collect();
        for (i, a) in ranked.iter().enumerate() {
            for b in &ranked[i + 1..] {
                let (ma, mb) = (measured(q, a).avg_us, measured(q, b).avg_us);
                if ma.max(mb) / ma.min(mb) <= 1.25 {
                    continue;
                }
                let (sa, sb) = (simulated(r, q, a).avg_us, simulated(r, q, b).avg_us);
                if (ma < mb) == (sa < sb) {
                    agree += 1;
                } else {
                    missed.push(format!(
                        "{}k {a}/{b}: measured {ma:.0}/{mb:.0} us, simulated {sa:.0}/{sb:.0} us",
                        q / 1000
                    ));
                }
            }
        }
    }
    (agree, missed)
}

/// The CPU misses (simulated more than 10 points from measured), with the side the
/// explanation predicts: `true` where the model is below the measurement (a per-wake-up
/// or per-interrupt cost of this host the model does not charge), `false` above it
/// (napibusy's busy loop spinning where the real one sleeps sooner). docs/model.md
/// gives the mechanisms.
const CPU_MISSES: [(u32, &str, bool); 11] = [
    (200_000, "base", true),
    (600_000, "base", true),
    (800_000, "base", true),
    (1_000_000, "base", true),
    (600_000, "defer20", true),
    (800_000, "defer20", true),
    (1_000_000, "defer20", true),
    (1_000_000, "defer200", true),
    (600_000, "suspend20", true),
    (200_000, "napibusy", false),
    (400_000, "napibusy", false),
];

#[test]
fn irq_suspension_against_the_memcached_runs() {
    let r = results();
    print_table(r);

    // The calibration point (MAX, fullbusy): memcached's per-request cost is set so
    // that the busy-polling core serves 1,159,578 queries/s; it predicts nothing.
    let cal = simulated(r, 0, "fullbusy").qps;
    assert!((cal / 1_159_578.0 - 1.0).abs() < 0.01, "calibration: {cal}");

    // CPU within 10 points, row by row; the misses are printed, and each is on the
    // side its mechanism gives.
    let mut cpu_missed = Vec::new();
    for q in LOADS {
        for v in VARIANTS {
            let (m, s) = (measured(q, v).cpu_pct, simulated(r, q, v).cpu_pct);
            if (s - m).abs() <= 10.0 {
                continue;
            }
            eprintln!(
                "CPU miss: {}k {v}: measured {m:.1} %, simulated {s:.1} %",
                q / 1000
            );
            cpu_missed.push((q, v));
            let under = CPU_MISSES
                .iter()
                .find(|c| c.0 == q && c.1 == v)
                .map(|c| c.2)
                .unwrap_or_else(|| panic!("an unexplained CPU miss: {}k {v}", q / 1000));
            assert_eq!(
                s < m,
                under,
                "{}k {v}: the miss is not on its explained side",
                q / 1000
            );
        }
    }
    eprintln!(
        "CPU within 10 points: {} of {} rows",
        LOADS.len() * VARIANTS.len() - cpu_missed.len(),
        LOADS.len() * VARIANTS.len()
    );

    // The order of the variants' average latency at each load: printed in full.
    let (agree, missed) = latency_order(r);
    eprintln!(
        "latency order: {agree} of {} pairs as measured",
        agree + missed.len()
    );
    for m in &missed {
        eprintln!("  order miss: {m}");
    }

    // What the order rests on, at each load (1 M: among the variants that hold).
    for q in LOADS {
        let s = |v: &str| simulated(r, q, v);
        let m = |v: &str| measured(q, v);
        for (what, sim, meas) in [
            // Busy polling all the time is the fastest.
            (
                "fullbusy fastest",
                VARIANTS
                    .iter()
                    .all(|v| s("fullbusy").avg_us <= s(v).avg_us + 0.5),
                VARIANTS.iter().all(|v| m("fullbusy").avg_us <= m(v).avg_us),
            ),
            // Suspension with a 20 us timer is as fast as deferral with it (its
            // interrupts are as rare) and faster than any 200 us timer.
            (
                "suspend20 <= defer20",
                s("suspend20").avg_us <= s("defer20").avg_us,
                m("suspend20").avg_us <= m("defer20").avg_us,
            ),
            (
                "suspend20 < defer200, suspend200",
                s("suspend20").avg_us < s("defer200").avg_us.min(s("suspend200").avg_us),
                m("suspend20").avg_us < m("defer200").avg_us.min(m("suspend200").avg_us),
            ),
            (
                "suspend200 < defer200",
                s("suspend200").avg_us < s("defer200").avg_us,
                m("suspend200").avg_us < m("defer200").avg_us,
            ),
            // CPU: suspension costs what deferral costs, not what busy polling costs.
            (
                "cpu suspend20 < napibusy <= fullbusy",
                s("suspend20").cpu_pct < s("napibusy").cpu_pct
                    && s("napibusy").cpu_pct <= s("fullbusy").cpu_pct,
                m("suspend20").cpu_pct < m("napibusy").cpu_pct
                    && m("napibusy").cpu_pct <= m("fullbusy").cpu_pct,
            ),
            (
                "cpu suspend200 < suspend20, defer200 < defer20",
                s("suspend200").cpu_pct < s("suspend20").cpu_pct
                    && s("defer200").cpu_pct < s("defer20").cpu_pct,
                m("suspend200").cpu_pct < m("suspend20").cpu_pct
                    && m("defer200").cpu_pct < m("defer20").cpu_pct,
            ),
        ] {
            if q == 1_000_000 && what.contains("defer") && !what.starts_with("cpu") {
                continue;
            }
            assert!(meas, "{}k: measured, {what}", q / 1000);
            assert!(sim, "{}k: simulated, {what}", q / 1000);
        }
    }

    // 1 M queries/s. Measured: base and the defer variants collapse (served short of
    // the target, milliseconds of latency: mutilate's 4,480 connections all waiting),
    // busy polling and suspension hold.
    for v in VARIANTS {
        let m = measured(1_000_000, v);
        let collapsed = m.avg_us > 1_000.0;
        assert_eq!(
            collapsed,
            !HOLD_AT_1M.contains(&v),
            "measured 1 M {v}: {m:?}"
        );
    }
    // Simulated: the holders hold (every query served, no queue drop, latency far
    // below a collapse's).
    for v in HOLD_AT_1M {
        let p = point(r, 1_000_000, v);
        let s = simulated(r, 1_000_000, v);
        assert!(s.qps > 0.99e6 && s.avg_us < 500.0, "1 M {v}: {s:?}");
        assert_eq!(
            p.figures.counters.get("user.queue_drops"),
            Some(&0.0),
            "{v}"
        );
    }
    // The collapse of base and defer is a miss: the model's base costs no more CPU per
    // query than busy polling (its interrupts are few under DIM and cost 0.7 us each),
    // so its capacity, 8 cores over that cost, stays above 1 M; the measured base costs
    // 8 / 982,241 = 8.14 us a query at MAX against fullbusy's 6.90 us (the calibration),
    // 1.24 us a query that the model does not have.
    let per_query_us = |q: u32, v: &str| {
        let s = simulated(r, q, v);
        s.cpu_pct / 100.0 * CORES / s.qps * 1e6
    };
    let busy = 8.0 / simulated(r, 0, "fullbusy").qps * 1e6;
    for v in ["base", "defer20", "defer200"] {
        let s = simulated(r, 1_000_000, v);
        let c = per_query_us(1_000_000, v);
        eprintln!(
            "1 M {v}: measured {:.0} queries/s, {:.0} us; simulated {:.0}, {:.0} us, \
             {c:.2} us of CPU a query (fullbusy at MAX {busy:.2})",
            measured(1_000_000, v).qps,
            measured(1_000_000, v).avg_us,
            s.qps,
            s.avg_us
        );
        assert!(s.qps > 0.99e6, "1 M {v}: {s:?}");
        assert!((c / busy - 1.0).abs() < 0.05, "1 M {v}: {c} us a query");
    }
    // The mechanism at work: with the deferral or the suspension the device's
    // interrupt is all but gone (measured: 0.000-0.002 interrupts a query, irq-*.out),
    // the suspension re-armed by memcached's busy loops; base takes one every few
    // queries (measured 0.09-0.77).
    for q in LOADS {
        let per_query = |v: &str| {
            let p = point(r, q, v);
            p.figures.interrupts_per_s / p.figures.total.forwarded_pps
        };
        for v in ["defer20", "defer200", "suspend20", "suspend200"] {
            assert!(per_query(v) < 0.002, "{}k {v}: {}", q / 1000, per_query(v));
        }
        assert!(
            per_query("base") > 0.02,
            "{}k base: {}",
            q / 1000,
            per_query("base")
        );
        for v in ["suspend20", "suspend200"] {
            let c = &point(r, q, v).figures.counters;
            assert!(c["napi.irq_suspends"] > 100.0, "{}k {v}: {c:?}", q / 1000);
        }
    }
    // The base miss of the latency order (base slower than the 200 us timers in the
    // model, faster in the measurements) is DIM's: net_dim, finding the same packet
    // rate with fewer interrupts better, parks on its deepest CQE profile (64 us, 64
    // CQEs), so a request waits for 64 completions: at 400 k and more the model takes
    // 12 to 45 queries an interrupt where the measured base takes 4 to 11 (rxpkts over
    // fired, each query two segments received, in irq-*.out).
    for q in [400_000, 600_000, 800_000, 1_000_000] {
        let p = point(r, q, "base");
        let per_irq = p.figures.total.forwarded_pps / p.figures.interrupts_per_s;
        assert!(
            per_irq > 10.0,
            "{}k base: {per_irq} queries an interrupt",
            q / 1000
        );
        let c = &p.figures.counters;
        let deep = c["eth0.dim.profile3_ms"] + c["eth0.dim.profile4_ms"];
        let all: f64 = (0..5).map(|k| c[&format!("eth0.dim.profile{k}_ms")]).sum();
        assert!(deep > 0.8 * all, "{}k base: DIM {c:?}", q / 1000);
    }
}
