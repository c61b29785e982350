//! The table printed after a run: simulated figures per variant, with the measured
//! table's loss and latency beside them when the scenario names one. Reads results only.

use crate::output::variants;
use crate::results::{GridResult, Results};
use crate::smartbits::MeasuredPoint;
use std::fmt::Write;

/// Render the sweep as fixed-width tables, one per variant.
pub fn table(r: &Results) -> String {
    let measured: Option<&[MeasuredPoint]> = r.measured.as_ref().map(|m| m.points.as_slice());
    let mut s = String::new();
    let _ = writeln!(s, "{} -- {}", r.scenario, r.description);
    let _ = writeln!(
        s,
        "model {}, {} s per point, seed {}, {} replication(s)",
        r.model, r.duration_s, r.seed, r.replications
    );
    let with_m = measured.is_some();
    let with_user = r.points.iter().any(|p| p.figures.user.is_some());
    let with_sender = r.points.iter().any(|p| p.figures.sender.is_some());
    let cores = r
        .points
        .iter()
        .map(|p| p.figures.cores.len())
        .max()
        .unwrap_or(0);
    for v in variants(r) {
        let _ = writeln!(s, "\nvariant: {v}");
        let _ = write!(
            s,
            "{:>7} {:>9} {:>9} {:>8}",
            "load%", "offered", "fwd pps", "loss%"
        );
        if with_m {
            let _ = write!(s, " {:>8}", "meas%");
        }
        let _ = write!(s, " {:>9} {:>9}", "avg us", "max us");
        if with_m {
            let _ = write!(s, " {:>9} {:>9}", "meas avg", "meas max");
        }
        let _ = write!(
            s,
            " {:>8} {:>6} {:>6} {:>6}",
            "irq/s", "intr%", "sirq%", "kern%"
        );
        if with_user {
            let _ = write!(s, " {:>6}", "user%");
        }
        let _ = write!(s, " {:>6} {:>5}", "idle%", "pkt/i");
        for k in 0..cores {
            let _ = write!(s, " {:>6}", format!("cpu{k}%"));
        }
        if with_sender {
            let _ = write!(s, " {:>9} {:>7} {:>6}", "snd pps", "Mbit/s", "snd%");
        }
        let _ = writeln!(s);
        for p in r.points.iter().filter(|p| p.variant == v) {
            let t = &p.figures.total;
            let m =
                measured.and_then(|ms| ms.iter().find(|m| (m.load_pct - p.load_pct).abs() < 1e-6));
            let _ = write!(
                s,
                "{:>7.2} {:>9.0} {:>9.0} {:>8.2}",
                p.load_pct, p.offered_pps, t.forwarded_pps, t.loss_pct
            );
            if with_m {
                let _ = match m {
                    Some(m) => write!(s, " {:>8.2}", m.total.loss_pct()),
                    None => write!(s, " {:>8}", "-"),
                };
            }
            let _ = write!(s, " {:>9.1} {:>9.1}", t.latency_us.avg, t.latency_us.max);
            if with_m {
                let _ = match m {
                    Some(m) => write!(s, " {:>9.1} {:>9.1}", m.total.avg_us, m.total.max_us),
                    None => write!(s, " {:>9} {:>9}", "-", "-"),
                };
            }
            let c = &p.figures.cpu;
            let _ = write!(
                s,
                " {:>8.0} {:>6.1} {:>6.1} {:>6.1}",
                p.figures.interrupts_per_s,
                100.0 * c.interrupt,
                100.0 * c.softirq,
                100.0 * c.kernel
            );
            if with_user {
                let _ = write!(s, " {:>6.1}", 100.0 * c.user);
            }
            let _ = write!(
                s,
                " {:>6.1} {:>5.2}",
                100.0 * c.idle,
                p.figures.packets_per_interrupt
            );
            for k in 0..cores {
                let _ = match p.figures.cores.get(k) {
                    Some(c) => write!(s, " {:>6.1}", 100.0 * (1.0 - c.idle)),
                    None => write!(s, " {:>6}", "-"),
                };
            }
            if with_sender {
                let _ = match &p.figures.sender {
                    Some(x) => write!(
                        s,
                        " {:>9.0} {:>7.1} {:>6.1}",
                        x.pps,
                        x.mbit_s,
                        100.0 * x.cpu_share
                    ),
                    None => write!(s, " {:>9} {:>7} {:>6}", "-", "-", "-"),
                };
            }
            let _ = writeln!(s);
        }
    }
    if with_m {
        let _ = writeln!(
            s,
            "\nloss% / avg us / max us: simulated; meas*: measured table {}",
            r.measured.as_ref().map(|m| m.file.as_str()).unwrap_or("")
        );
    }
    if r.latency_from == crate::stats::LatencyFrom::FirstBit {
        let _ = writeln!(
            s,
            "latency: from the input frame's first bit to the output frame's first bit (FIFO)"
        );
    }
    if cores > 0 {
        let _ = writeln!(
            s,
            "\nintr% .. idle%: the host's CPU time over its {cores} cores; cpuK%: core K busy (100 - its idle%)"
        );
    }
    if with_sender {
        let _ = writeln!(
            s,
            "\nsnd pps: the sender's frames on the wire per second; Mbit/s: its TCP payload; snd%: its CPU share (system time)"
        );
    }
    if let Some(g) = &r.grid {
        s.push_str(&grid_table(g));
    }
    s
}

/// The grid's summary: one row per cell, its parameter values, MLFRR, peak output,
/// output at the highest load and p99 latency at the chosen load.
pub fn grid_table(g: &GridResult) -> String {
    let mut s = String::new();
    let at = match g.latency_at_load_pct {
        Some(pct) => format!("{pct:.2} %"),
        None => "a point not run".into(),
    };
    let _ = writeln!(
        s,
        "\ngrid summary: {} cells; MLFRR: every point up to it loses < {} %; p99 at {at}",
        g.cells.len(),
        g.loss_free_pct
    );
    let with_base = g.cells.iter().any(|c| c.base.is_some());
    let base_w = g
        .cells
        .iter()
        .filter_map(|c| c.base.as_ref().map(|b| b.len()))
        .max()
        .unwrap_or(0)
        .max(7);
    let widths: Vec<usize> = g.parameters.iter().map(|p| p.name.len().max(8)).collect();
    if with_base {
        let _ = write!(s, "{:<base_w$} ", "variant");
    }
    for (p, w) in g.parameters.iter().zip(&widths) {
        let _ = write!(s, "{:>w$} ", p.name);
    }
    let _ = writeln!(
        s,
        "{:>9} {:>7} {:>9} {:>7} {:>9} {:>7} {:>9}",
        "MLFRR pps", "load%", "peak pps", "load%", "top fwd", "load%", "p99 us"
    );
    for c in &g.cells {
        if with_base {
            let _ = write!(s, "{:<base_w$} ", c.base.as_deref().unwrap_or(""));
        }
        for (v, w) in c.values.iter().zip(&widths) {
            let _ = write!(s, "{:>w$} ", crate::grid::fmt_value(*v));
        }
        let m = &c.summary;
        let opt =
            |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |x| format!("{x:.prec$}"));
        let _ = writeln!(
            s,
            "{:>9} {:>7} {:>9.0} {:>7.2} {:>9.0} {:>7.2} {:>9}",
            opt(m.mlfrr_pps, 0),
            opt(m.mlfrr_load_pct, 2),
            m.peak_pps,
            m.peak_load_pct,
            m.top_forwarded_pps,
            m.top_load_pct,
            opt(m.p99_us, 1)
        );
    }
    s
}
