//! Measured rates per variant beside the simulated ones (a scenario's `measured_rates`,
//! [`crate::config::measured_rates`]): for each measured figure, at each load point of
//! its variant, the simulated value, the measured one and the model's error. Written to
//! results.json (`measured_rates`) and printed after the run's table. Reads results only.

use crate::config::measured_rates::{Figure, MeasuredRate};
use crate::results::{DropsResult, PointResult};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// A measured-rates table carried with a sweep (its frame), to compare once the
/// points are simulated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasuredRates {
    /// Path of the CSV as named by the scenario.
    pub file: String,
    /// Its rows.
    pub rows: Vec<MeasuredRate>,
}

/// The table's figures beside the simulated ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateComparison {
    /// Path of the CSV as named by the scenario.
    pub file: String,
    /// One row per measured figure and load point of its variant, in the table's order.
    pub rows: Vec<RateRow>,
}

/// One measured figure at one load point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateRow {
    /// The variant.
    pub variant: String,
    /// The load point's offered load [% of line rate].
    pub load_pct: f64,
    /// What was measured (`forwarded_pps`, `drops.<site>_pps`, `counters.<name>_per_s`).
    pub figure: String,
    /// The measured value.
    pub measured: f64,
    /// The simulated value over the sending period (a counter the results lack is one
    /// published only once it counts: 0; the loader refused any name the variant's
    /// model does not publish); `null` for a figure irqsim cannot read.
    pub simulated: Option<f64>,
    /// 100 (simulated / measured - 1) [%]; `null` without a simulated value or with a
    /// measured 0.
    pub error_pct: Option<f64>,
    /// Where the measured number comes from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// Frames dropped at `site` (a name of [`crate::trace::DROP_SITES`]).
fn dropped(d: &DropsResult, site: &str) -> f64 {
    match site {
        "rx_ring" => d.rx_ring,
        "ipintrq" => d.ipintrq,
        "if_snd" => d.if_snd,
        "user_queue" => d.user_queue,
        "rx_fifo" => d.rx_fifo,
        "tx_underrun" => d.tx_underrun,
        "reset" => d.reset,
        "xdp" => d.xdp,
        "netfilter" => d.netfilter,
        "application" => d.application,
        _ => f64::NAN,
    }
}

/// The simulated value of `figure` at point `p` of a sweep of `duration_s` per point.
pub fn simulated(figure: &str, p: &PointResult, duration_s: f64) -> Option<f64> {
    let t = &p.figures.total;
    match Figure::parse(figure).ok()? {
        Figure::ForwardedPps => Some(t.forwarded_pps),
        Figure::DropsPps(site) => Some(dropped(&t.drops, &site) / duration_s),
        // (Absent: a counter published only once it counts, so 0 in this run; the
        // loader checked the name against the variant's counters.)
        Figure::CounterPerS(name) => Some(
            p.figures
                .counters
                .get(&name)
                .map_or(0.0, |c| c / duration_s),
        ),
    }
}

/// Compare `m` with the simulated `points`.
pub fn compare(m: &MeasuredRates, points: &[PointResult], duration_s: f64) -> RateComparison {
    let rows = m
        .rows
        .iter()
        .flat_map(|r| {
            points.iter().filter(|p| p.variant == r.variant).map(|p| {
                let simulated = simulated(&r.figure, p, duration_s);
                RateRow {
                    variant: r.variant.clone(),
                    load_pct: p.load_pct,
                    figure: r.figure.clone(),
                    measured: r.measured,
                    simulated,
                    error_pct: simulated
                        .filter(|_| r.measured > 0.0)
                        .map(|s| 100.0 * (s / r.measured - 1.0)),
                    source: r.source.clone(),
                }
            })
        })
        .collect();
    RateComparison {
        file: m.file.clone(),
        rows,
    }
}

/// The comparison as a fixed-width table.
pub fn table(c: &RateComparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\nmeasured rates: {}", c.file);
    let vw = c
        .rows
        .iter()
        .map(|r| r.variant.len())
        .chain([7])
        .max()
        .unwrap_or(7);
    let fw = c
        .rows
        .iter()
        .map(|r| r.figure.len())
        .chain([6])
        .max()
        .unwrap_or(6);
    let _ = writeln!(
        s,
        "{:<vw$} {:>7} {:<fw$} {:>15} {:>15} {:>8}",
        "variant", "load%", "figure", "simulated", "measured", "error%"
    );
    for r in &c.rows {
        let sim = r.simulated.map_or("-".to_string(), |x| format!("{x:.0}"));
        let err = r.error_pct.map_or("-".to_string(), |e| format!("{e:+.2}"));
        let _ = writeln!(
            s,
            "{:<vw$} {:>7.2} {:<fw$} {:>15} {:>15.0} {:>8}",
            r.variant, r.load_pct, r.figure, sim, r.measured, err
        );
    }
    s
}
