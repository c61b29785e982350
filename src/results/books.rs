//! The books of one run: the identities its figures must satisfy, checked when a saved
//! run (a checkpoint's or a shard's run file) is read back, so that an edited counter is
//! refused instead of averaged into the results.
//!
//! What holds exactly, and why (see `host::finish`, `results::flow_result`,
//! `stats::FlowStats::merge`):
//! - every frame the tester sent is delivered, dropped at one site, or still inside the
//!   host at the end: per flow and in total, `sent = received + drops (all sites) +
//!   in_flight_at_end` (the simulator refuses a run that breaks it);
//! - `lost` is `sent - received`, and `loss_pct` is `100 * lost / sent` (0 when nothing
//!   was sent), computed in that order, so equal to the last bit;
//! - `drained` and `out_of_sequence` count some of the frames received, so neither
//!   exceeds `received`;
//! - the `Total` row is the sum of the flows' rows, counter by counter (whole numbers
//!   below 2^53 add exactly in f64);
//! - every counter is a whole number, every figure finite and not negative (counts,
//!   rates, times, fractions), and each CPU fraction at most 1;
//! - the timeline rows (replication 0 only) hold finite, non-negative figures.
//!
//! Figures derived with a division by the run's duration (`forwarded_pps`,
//! `interrupts_per_s`...) are only checked to be finite and non-negative: the duration
//! is the scenario's, and the identity of the run file ties it to that scenario.

use crate::model::timeline::TimelineRow;
use crate::results::{FlowResult, PointFigures};

/// Largest count kept exact in an f64 (2^53).
const EXACT: f64 = 9_007_199_254_740_992.0;

/// The counters of a flow row that the `Total` row sums, by name.
fn counters(f: &FlowResult) -> [(&'static str, f64); 16] {
    let d = &f.drops;
    [
        ("sent", f.sent),
        ("received", f.received),
        ("lost", f.lost),
        ("drained", f.drained),
        ("in_flight_at_end", f.in_flight_at_end),
        ("out_of_sequence", f.out_of_sequence),
        ("drops.rx_ring", d.rx_ring),
        ("drops.ipintrq", d.ipintrq),
        ("drops.if_snd", d.if_snd),
        ("drops.user_queue", d.user_queue),
        ("drops.rx_fifo", d.rx_fifo),
        ("drops.tx_underrun", d.tx_underrun),
        ("drops.reset", d.reset),
        ("drops.xdp", d.xdp),
        ("drops.netfilter", d.netfilter),
        ("drops.application", d.application),
    ]
}

/// Check one flow's (or the total's) books; `at` names the row (`total`, `flows[2]`).
fn flow(f: &FlowResult, at: &str) -> Result<(), String> {
    for (name, x) in counters(f) {
        if !(x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= EXACT) {
            return Err(format!(
                "{at}.{name} is {x}, not a whole number of frames from 0 to 2^53"
            ));
        }
    }
    let d = &f.drops;
    let dropped = d.rx_ring
        + d.ipintrq
        + d.if_snd
        + d.user_queue
        + d.rx_fifo
        + d.tx_underrun
        + d.reset
        + d.xdp
        + d.netfilter
        + d.application;
    if f.sent != f.received + dropped + f.in_flight_at_end {
        return Err(format!(
            "{at}: sent ({}) is not received ({}) + dropped ({dropped}, all sites) + in_flight_at_end ({})",
            f.sent, f.received, f.in_flight_at_end
        ));
    }
    if f.lost != f.sent - f.received {
        return Err(format!(
            "{at}: lost ({}) is not sent ({}) - received ({})",
            f.lost, f.sent, f.received
        ));
    }
    let loss_pct = if f.sent > 0.0 {
        100.0 * f.lost / f.sent
    } else {
        0.0
    };
    if f.loss_pct != loss_pct {
        return Err(format!(
            "{at}: loss_pct ({}) is not 100 x lost / sent ({loss_pct})",
            f.loss_pct
        ));
    }
    for (name, x) in [
        ("drained", f.drained),
        ("out_of_sequence", f.out_of_sequence),
    ] {
        if x > f.received {
            return Err(format!(
                "{at}: {name} ({x}) exceeds received ({})",
                f.received
            ));
        }
    }
    Ok(())
}

/// Every number in `v` finite and not negative; `at` is its JSON path.
fn non_negative(v: &serde_json::Value, at: &str) -> Result<(), String> {
    match v {
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(()),
            _ => Err(format!("{at} is {n}, not a finite, non-negative figure")),
        },
        // serde_json writes a NaN or an infinity as null.
        serde_json::Value::Null => Err(format!("{at} is null, not a finite figure")),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| non_negative(x, &format!("{at}[{i}]"))),
        serde_json::Value::Object(o) => o.iter().try_for_each(|(k, x)| {
            let at = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            non_negative(x, &at)
        }),
        serde_json::Value::Bool(_) | serde_json::Value::String(_) => Ok(()),
    }
}

/// Check the books of one run's figures and timeline rows; the error says which
/// identity fails, with the figures (JSON paths as in the run file's `run.figures`).
pub fn check(fig: &PointFigures, timeline: &[TimelineRow]) -> Result<(), String> {
    // Optional parts that are absent are null in JSON, and are not figures.
    let mut v = serde_json::to_value(fig).map_err(|e| e.to_string())?;
    if let Some(o) = v.as_object_mut() {
        o.retain(|_, x| !x.is_null());
        let rows = o.values_mut().flat_map(|x| match x {
            serde_json::Value::Array(a) => a.iter_mut().collect::<Vec<_>>(),
            x => vec![x],
        });
        for f in rows {
            if let Some(f) = f.as_object_mut() {
                f.retain(|_, x| !x.is_null());
            }
        }
    }
    non_negative(&v, "")?;
    flow(&fig.total, "total")?;
    for (i, f) in fig.flows.iter().enumerate() {
        flow(f, &format!("flows[{i}]"))?;
    }
    if !fig.flows.is_empty() {
        for (k, (name, total)) in counters(&fig.total).into_iter().enumerate() {
            let sum: f64 = fig.flows.iter().map(|f| counters(f)[k].1).sum();
            if total != sum {
                return Err(format!(
                    "total.{name} ({total}) is not the sum of the flows' ({sum})"
                ));
            }
        }
    }
    let c = &fig.cpu;
    for (name, x) in [
        ("interrupt", c.interrupt),
        ("softirq", c.softirq),
        ("kernel", c.kernel),
        ("user", c.user),
        ("idle", c.idle),
    ] {
        if x > 1.0 {
            return Err(format!("cpu.{name} ({x}) is a fraction of time above 1"));
        }
    }
    for (i, r) in timeline.iter().enumerate() {
        for (name, x) in [
            ("load_pct", r.load_pct),
            ("t_ms", r.t_ms),
            ("avg_latency_us", r.avg_latency_us),
            ("max_latency_us", r.max_latency_us),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(format!(
                    "timeline[{i}].{name} is {x}, not a finite, non-negative figure"
                ));
            }
        }
    }
    Ok(())
}
