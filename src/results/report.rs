//! The table printed after a run: simulated figures per variant, with the measured
//! table's loss and latency beside them when the scenario names one, and each flow of
//! the points where flows fare differently ([`flows_differ`]); and the table of
//! `irqsim compare`, the points of several result sets side by side ([`compare_table`]).
//! Reads results only.
//!
//! With several flows a heading says what a number is of: the load point (`flow%`) is
//! each flow's, in % of its input link's line rate (a scenario's `load.unit` is per
//! flow), while `offered` and `fwd pps` are all flows' together.

use crate::config::smartbits::MeasuredPoint;
use crate::results::output::variants;
use crate::results::{FlowResult, GridResult, PointResult, Results};
use std::fmt::Write;

/// Render the sweep as fixed-width tables, one per variant.
pub fn table(r: &Results) -> String {
    let measured: Option<&[MeasuredPoint]> = r.measured.as_ref().map(|m| m.points.as_slice());
    let mut s = String::new();
    // The description and the model's path are the user's text: escaped for the terminal.
    let esc = crate::config::import::dump::escape;
    let _ = writeln!(s, "{} -- {}", r.scenario, esc(&r.description));
    let _ = writeln!(
        s,
        "model {}, {} s per point, seed {}, {} replication(s)",
        esc(&r.model),
        r.duration_s,
        r.seed,
        r.replications
    );
    let with_m = measured.is_some();
    let with_user = r.points.iter().any(|p| p.figures.user.is_some());
    // A Linux host's CPU time as mpstat shows it, in place of the model's levels.
    let mpstat = !r.points.is_empty() && r.points.iter().all(|p| p.figures.mpstat.is_some());
    let with_sender = r.points.iter().any(|p| p.figures.sender.is_some());
    let cores = r
        .points
        .iter()
        .map(|p| p.figures.cores.len())
        .max()
        .unwrap_or(0);
    let flows = max_flows(r);
    for v in variants(r) {
        let _ = writeln!(s, "\nvariant: {v}");
        let _ = write!(
            s,
            "{:>7} {:>9} {:>9} {:>8}",
            load_heading(flows),
            "offered",
            "fwd pps",
            "loss%"
        );
        if with_m {
            let _ = write!(s, " {:>8}", "meas%");
        }
        let _ = write!(s, " {:>9} {:>9}", "avg us", "max us");
        if with_m {
            let _ = write!(s, " {:>9} {:>9}", "meas avg", "meas max");
        }
        if mpstat {
            let _ = write!(
                s,
                " {:>8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>5}",
                "irq/s", "usr%", "sys%", "irq%", "soft%", "idle%", "pkt/i"
            );
        } else {
            let _ = write!(
                s,
                " {:>8} {:>6} {:>6} {:>6}",
                "irq/s", "intr%", "sirq%", "kern%"
            );
            if with_user {
                let _ = write!(s, " {:>6}", "user%");
            }
            let _ = write!(s, " {:>6} {:>5}", "idle%", "pkt/i");
        }
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
            match &p.figures.mpstat {
                Some(m) if mpstat => {
                    let a = &m.all;
                    let _ = write!(
                        s,
                        " {:>8.0} {:>6.1} {:>6.1} {:>6.1} {:>6.1} {:>6.1} {:>5.2}",
                        p.figures.interrupts_per_s,
                        a.usr,
                        a.sys,
                        a.irq,
                        a.soft,
                        a.idle,
                        p.figures.packets_per_interrupt
                    );
                }
                _ => {
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
                }
            }
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
        let differ: Vec<&PointResult> = r
            .points
            .iter()
            .filter(|p| p.variant == v && flows_differ(&p.figures.flows))
            .collect();
        if !differ.is_empty() {
            s.push_str(&flow_rows(&differ, r.duration_s));
        }
    }
    if flows > 1 {
        let _ = writeln!(
            s,
            "\nflow%: each flow's load (% of its input link's line rate, as `load.unit` counts it); offered, fwd pps: all {flows} flows together"
        );
    }
    if with_m {
        let _ = writeln!(
            s,
            "\nloss% / avg us / max us: simulated; meas*: measured table {}",
            r.measured.as_ref().map(|m| m.file.as_str()).unwrap_or("")
        );
    }
    if r.latency_from == crate::model::stats::LatencyFrom::FirstBit {
        let _ = writeln!(
            s,
            "latency: from the input frame's first bit to the output frame's first bit (FIFO)"
        );
    }
    if mpstat {
        let _ = writeln!(
            s,
            "\nusr% .. idle%: CPU time as mpstat shows it on Linux (%usr %sys %irq %soft %idle: a DPDK lcore is usr, ksoftirqd soft, a NAPI kthread and busy polling in a system call sys){}",
            if cores > 0 {
                format!(", over the host's {cores} cores; cpuK%: core K busy (100 - its idle%)")
            } else {
                String::new()
            }
        );
    } else if cores > 0 {
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
    if let Some(c) = &r.measured_rates {
        s.push_str(&crate::results::rates::table(c));
    }
    s
}

/// The flows of a point fare differently when their losses span more than this
/// [percentage points of the frames each sent]: beyond what the totals can hide.
pub const FLOWS_DIFFER_LOSS_PP: f64 = 1.0;

/// ... or when the average latency of one flow that delivered frames is more than this
/// times another's.
pub const FLOWS_DIFFER_LATENCY_RATIO: f64 = 1.5;

/// Flows listed one by one under a point whose flows differ; beyond this, the worst and
/// the best only.
pub const MAX_FLOW_ROWS: usize = 8;

/// Whether the flows of a point fare differently: losses more than
/// [`FLOWS_DIFFER_LOSS_PP`] apart, or average latencies more than
/// [`FLOWS_DIFFER_LATENCY_RATIO`] apart.
pub fn flows_differ(flows: &[FlowResult]) -> bool {
    if flows.len() < 2 {
        return false;
    }
    let (lo, hi) = min_max(flows.iter().map(|f| f.loss_pct));
    let (alo, ahi) = min_max(
        flows
            .iter()
            .filter(|f| f.received > 0.0)
            .map(|f| f.latency_us.avg),
    );
    hi - lo > FLOWS_DIFFER_LOSS_PP || (alo > 0.0 && ahi > FLOWS_DIFFER_LATENCY_RATIO * alo)
}

fn min_max(it: impl Iterator<Item = f64>) -> (f64, f64) {
    it.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    })
}

/// The most flows any point has.
fn max_flows(r: &Results) -> usize {
    r.points
        .iter()
        .map(|p| p.figures.flows.len())
        .max()
        .unwrap_or(0)
}

/// Heading of the load point's column: `flow%` when there are several flows (the load
/// is each flow's), else `load%`.
fn load_heading(flows: usize) -> &'static str {
    if flows > 1 { "flow%" } else { "load%" }
}

/// Rows of each flow of `points` (whose flows differ); past [`MAX_FLOW_ROWS`] flows the
/// worst (most loss, then the longest average latency) and the best only.
fn flow_rows(points: &[&PointResult], duration_s: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  flows that differ (loss more than {FLOWS_DIFFER_LOSS_PP} percentage point apart, or average latency more than {FLOWS_DIFFER_LATENCY_RATIO} x):"
    );
    let w = points
        .iter()
        .flat_map(|p| p.figures.flows.iter().map(|f| f.name.len()))
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        s,
        "  {:>7} {:<w$} {:>9} {:>9} {:>8} {:>9} {:>9}",
        "flow%", "flow", "offered", "fwd pps", "loss%", "avg us", "max us"
    );
    for p in points {
        let mut flows: Vec<&FlowResult> = p.figures.flows.iter().collect();
        let mut more = 0;
        if flows.len() > MAX_FLOW_ROWS {
            let worse = |a: &&FlowResult, b: &&FlowResult| {
                (a.loss_pct, a.latency_us.avg).partial_cmp(&(b.loss_pct, b.latency_us.avg))
            };
            let worst = *flows
                .iter()
                .max_by(|a, b| worse(a, b).unwrap_or(std::cmp::Ordering::Equal))
                .expect("several flows");
            let best = *flows
                .iter()
                .min_by(|a, b| worse(a, b).unwrap_or(std::cmp::Ordering::Equal))
                .expect("several flows");
            more = flows.len() - 2;
            flows = vec![worst, best];
        }
        for (i, f) in flows.iter().enumerate() {
            let tag = match (more > 0, i) {
                (false, _) => "",
                (true, 0) => "  (worst)",
                (true, _) => "  (best)",
            };
            let offered = if duration_s > 0.0 {
                f.sent / duration_s
            } else {
                0.0
            };
            let _ = writeln!(
                s,
                "  {:>7.2} {:<w$} {:>9.0} {:>9.0} {:>8.2} {:>9.1} {:>9.1}{tag}",
                p.load_pct,
                f.name,
                offered,
                f.forwarded_pps,
                f.loss_pct,
                f.latency_us.avg,
                f.latency_us.max
            );
        }
        if more > 0 {
            let _ = writeln!(s, "  {:>7} ... and {more} more flows between", "");
        }
    }
    s
}

/// The points of several result sets side by side, for `irqsim compare`: a row per
/// load point (its load and offered rate; sets that offer different rates at one load
/// get a row each), and per series (a variant of a set, named `label` or
/// `label / variant`) the forwarded rate [frames/s], the loss [% of sent] and the
/// average latency \[us\]; `-` where a series has no such point.
pub fn compare_table(sets: &[(String, &Results)]) -> String {
    // (name, points by offered rate)
    let mut series: Vec<(String, Vec<&PointResult>)> = Vec::new();
    for (label, r) in sets {
        let vs = variants(r);
        for v in &vs {
            let name = if vs.len() == 1 && v == "default" {
                label.clone()
            } else {
                format!("{label} / {v}")
            };
            series.push((name, r.points.iter().filter(|p| &p.variant == v).collect()));
        }
    }
    let same = |p: &PointResult, (l, o): (f64, f64)| {
        (p.load_pct - l).abs() < 1e-9 && (p.offered_pps - o).abs() <= 1e-9 * o.abs().max(1.0)
    };
    let mut rows: Vec<(f64, f64)> = Vec::new();
    for p in series.iter().flat_map(|(_, pts)| pts.iter()) {
        if !rows.iter().any(|r| same(p, *r)) {
            rows.push((p.load_pct, p.offered_pps));
        }
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let flows = sets.iter().map(|(_, r)| max_flows(r)).max().unwrap_or(0);
    let mut s = String::new();
    for (i, (name, _)) in series.iter().enumerate() {
        let _ = writeln!(s, "series {}: {name}", i + 1);
    }
    let _ = write!(s, "{:>7} {:>9}", load_heading(flows), "offered");
    for i in 0..series.len() {
        let k = i + 1;
        let _ = write!(
            s,
            " | {:>11} {:>9} {:>10}",
            format!("{k} fwd pps"),
            format!("{k} loss%"),
            format!("{k} avg us")
        );
    }
    let _ = writeln!(s);
    for row in &rows {
        let _ = write!(s, "{:>7.2} {:>9.0}", row.0, row.1);
        for (_, pts) in &series {
            let _ = match pts.iter().find(|p| same(p, *row)) {
                Some(p) => {
                    let t = &p.figures.total;
                    let avg = if t.received > 0.0 {
                        format!("{:.1}", t.latency_us.avg)
                    } else {
                        "-".to_string()
                    };
                    write!(
                        s,
                        " | {:>11.0} {:>9.2} {:>10}",
                        t.forwarded_pps, t.loss_pct, avg
                    )
                }
                None => write!(s, " | {:>11} {:>9} {:>10}", "-", "-", "-"),
            };
        }
        let _ = writeln!(s);
    }
    if flows > 1 {
        let _ = writeln!(
            s,
            "flow%: each flow's load (% of its input link's line rate); offered, fwd pps: all flows together"
        );
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
            let _ = write!(s, "{:>w$} ", crate::config::grid::fmt_value(*v));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(loss_pct: f64, avg_us: f64) -> FlowResult {
        let mut f = FlowResult {
            sent: 1000.0,
            received: 1000.0 * (1.0 - loss_pct / 100.0),
            loss_pct,
            ..FlowResult::default()
        };
        f.latency_us.avg = avg_us;
        f
    }

    #[test]
    fn flows_differ_beyond_the_stated_thresholds() {
        // One flow: nothing to compare.
        assert!(!flows_differ(&[flow(59.9, 100.0)]));
        // Losses 1 percentage point apart: within FLOWS_DIFFER_LOSS_PP; 1.1 beyond it.
        assert!(!flows_differ(&[flow(10.0, 100.0), flow(11.0, 100.0)]));
        assert!(flows_differ(&[flow(10.0, 100.0), flow(11.1, 100.0)]));
        // The case: 59.9 % beside 0 %.
        assert!(flows_differ(&[flow(0.0, 60.0), flow(59.9, 60.0)]));
        // Average latency 1.5 x another's: within; 1.6 x beyond.
        assert!(!flows_differ(&[flow(0.0, 100.0), flow(0.0, 150.0)]));
        assert!(flows_differ(&[flow(0.0, 100.0), flow(0.0, 160.0)]));
        // A flow that delivered nothing has no latency to compare (its loss differs).
        let mut dead = flow(0.0, 0.0);
        dead.received = 0.0;
        assert!(!flows_differ(&[flow(0.0, 100.0), flow(0.0, 101.0), dead]));
    }
}
