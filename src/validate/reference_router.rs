//! The reference router's 64-byte, one-flow SmartBits sweep (FreeBSD 4.0 on a Pentium
//! III with four 21143 ports, March 2000): `scenarios/dc21143-64b-1flow.json` against
//! `scenarios/measured/test_25Mx64x1.csv` (the table the scenario names, a byte-equal
//! copy of the reference report's, checked by `.ci/run`). docs/validation.md, "The
//! reference router, reproduced", says why the model gives what it gives.
//!
//! Rows and tolerances (the fidelity issue's): the loss at every load, within 0.1
//! points where the table is loss-free (10-26 % and 34-36 %: the measured loss is at
//! most 16 frames, under 0.01 %) and 5 points in livelock (28-32 %); the average latency
//! at every load within 15 %; the maximum at the loss-free loads within a factor 1.5;
//! the smallest minimum below the knee within 0.5 us (a calibration check: the receive
//! and transmit latencies were derived from it) and the minima at 34-36 % within the
//! same 0.5 us.

use super::Table;
use super::scoreboard::{Check, Tolerance};
use crate::config::scenario::Experiment;
use crate::config::smartbits::MeasuredPoint;
use crate::results::{PointResult, Results};

/// The loss-free loads of the table \[% of 100 Mbit/s\].
pub const LOSS_FREE: [f64; 11] = [
    10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 34.0, 36.0,
];

/// The livelock loads of the table \[% of 100 Mbit/s\].
pub const LIVELOCK: [f64; 3] = [28.0, 30.0, 32.0];

/// Loss where the table is loss-free \[percentage points\].
pub const LOSS_FREE_TOLERANCE: Tolerance = Tolerance::absolute(0.1);
/// Loss in livelock \[percentage points\].
pub const LIVELOCK_LOSS_TOLERANCE: Tolerance = Tolerance::absolute(5.0);
/// Average latency at every load \[%\].
pub const AVG_LATENCY_TOLERANCE: Tolerance = Tolerance::relative(15.0);
/// Maximum latency at the loss-free loads (a factor either way).
pub const MAX_LATENCY_TOLERANCE: Tolerance = Tolerance::factor(1.5);
/// Minimum latency \[us\].
pub const MIN_LATENCY_TOLERANCE: Tolerance = Tolerance::absolute(0.5);

/// The table.
pub const TABLE_64B: Table = Table {
    name: "reference-router-64b",
    title: "the reference router, 64-byte frames, one flow (SmartBits, March 2000)",
    scenario: "scenarios/dc21143-64b-1flow.json",
    source: "`scenarios/measured/test_25Mx64x1.csv` (the reference report's SmartBits \
             table; `Total` rows)",
    checks,
};

/// The case name of a load.
pub fn case(load: f64) -> String {
    format!("{load} %")
}

/// The simulated point and the measured one at `load` \[%\].
pub fn point<'a>(
    r: &'a Results,
    measured: &'a [MeasuredPoint],
    load: f64,
) -> (&'a PointResult, &'a MeasuredPoint) {
    let p = r
        .points
        .iter()
        .find(|p| (p.load_pct - load).abs() < 1e-9)
        .expect("the scenario has the point");
    let m = measured
        .iter()
        .find(|p| (p.load_pct - load).abs() < 1e-9)
        .expect("the measured table has the point");
    (p, m)
}

fn checks(_: &Table, exp: &Experiment, r: &Results) -> Vec<Check> {
    let measured = &exp
        .measured
        .as_ref()
        .expect("the scenario names its table")
        .1;
    let at = |load: f64| point(r, measured, load);
    let row = |load: f64, quantity: &str, unit: &str, m: f64, s: f64, t: Tolerance| Check {
        case: case(load),
        quantity: quantity.to_string(),
        unit: unit.to_string(),
        measured: m,
        simulated: s,
        tolerance: t,
    };
    let mut loads: Vec<f64> = LOSS_FREE.iter().chain(&LIVELOCK).copied().collect();
    loads.sort_by(f64::total_cmp);
    let mut out = Vec::new();
    for &load in &loads {
        let (p, m) = at(load);
        let t = if LIVELOCK.contains(&load) {
            LIVELOCK_LOSS_TOLERANCE
        } else {
            LOSS_FREE_TOLERANCE
        };
        out.push(row(
            load,
            "loss",
            "%",
            m.total.loss_pct(),
            p.figures.total.loss_pct,
            t,
        ));
    }
    for &load in &loads {
        let (p, m) = at(load);
        out.push(row(
            load,
            "avg latency",
            "us",
            m.total.avg_us,
            p.figures.total.latency_us.avg,
            AVG_LATENCY_TOLERANCE,
        ));
    }
    for load in LOSS_FREE {
        let (p, m) = at(load);
        out.push(row(
            load,
            "max latency",
            "us",
            m.total.max_us,
            p.figures.total.latency_us.max,
            MAX_LATENCY_TOLERANCE,
        ));
    }
    // The smallest minimum: measured over the loss-free loads (28.7 us at 12-16 %),
    // simulated below the knee (10-26 %), where no frame shares a receive pass.
    let smallest = |f: &dyn Fn(f64) -> f64, below_knee: bool| {
        LOSS_FREE
            .iter()
            .filter(|&&l| !below_knee || l < 30.0)
            .map(|&l| f(l))
            .fold(f64::MAX, f64::min)
    };
    out.push(Check {
        case: "smallest, 10-26 %".to_string(),
        quantity: "min latency".to_string(),
        unit: "us".to_string(),
        measured: smallest(&|l| at(l).1.total.min_us, false),
        simulated: smallest(&|l| at(l).0.figures.total.latency_us.min, true),
        tolerance: MIN_LATENCY_TOLERANCE,
    });
    for load in [34.0, 36.0] {
        let (p, m) = at(load);
        out.push(row(
            load,
            "min latency",
            "us",
            m.total.min_us,
            p.figures.total.latency_us.min,
            MIN_LATENCY_TOLERANCE,
        ));
    }
    out
}
