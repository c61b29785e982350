//! The objective: the simulated sweep compared with the measured table point by point, and the residuals and their count.

use super::*;

/// Print step of the average latency in SmartBits tables \[us\] (the reference tables and
/// irqsim's `smartbits.csv` give one decimal).
pub(super) const TABLE_LATENCY_STEP_US: f64 = 0.1;

/// The measured `Total` row at `load_pct`.
pub(super) fn measured_at(m: &[MeasuredPoint], load_pct: f64) -> Option<&MeasuredPoint> {
    m.iter().find(|p| (p.load_pct - load_pct).abs() < 1e-6)
}

/// The points of `results` that the table has, compared; `horizon_us` is the run's
/// `duration_s + drain_s`, at which a side that forwarded nothing is censored (see the
/// module docs).
pub fn compare(results: &Results, measured: &[MeasuredPoint], horizon_us: f64) -> Vec<PointFit> {
    results
        .points
        .iter()
        .filter_map(|p| {
            let m = measured_at(measured, p.load_pct)?;
            let t = &p.figures.total;
            let (ml, sl) = (m.total.avg_us, t.latency_us.avg);
            let table_forwards = m.total.received > 0.0 && ml > 0.0;
            let sim_forwards = t.received > 0.0 && sl > 0.0;
            let latency_residual = match (table_forwards, sim_forwards) {
                (true, true) => Some(100.0 * (sl / ml).ln()),
                (true, false) => Some(100.0 * (horizon_us / ml).ln().max(0.0)),
                (false, true) => Some(100.0 * (sl / horizon_us).ln().min(0.0)),
                (false, false) => None,
            };
            Some(PointFit {
                load_pct: p.load_pct,
                measured_loss_pct: m.total.loss_pct(),
                loss_pct: t.loss_pct,
                measured_latency_us: ml,
                latency_us: sl,
                loss_residual: t.loss_pct - m.total.loss_pct(),
                latency_residual,
            })
        })
        .collect()
}

/// The weighted residual vector (terms with weight 0 left out), one loss and one
/// latency term per point; a latency residual that does not exist (neither side
/// forwarded) is 0 there, so the vector keeps its shape, and is not [`counted`].
pub(super) fn residuals(e: &Evaluation, w: Weights) -> Vec<f64> {
    let mut r = Vec::new();
    for p in &e.points {
        if w.loss > 0.0 {
            r.push(w.loss.sqrt() * p.loss_residual);
        }
        if w.latency > 0.0 {
            r.push(w.latency.sqrt() * p.latency_residual.unwrap_or(0.0));
        }
    }
    r
}

/// The residuals that exist at `e` (the degrees of freedom before the parameters).
pub(super) fn counted(e: &Evaluation, w: Weights) -> usize {
    e.points
        .iter()
        .map(|p| {
            usize::from(w.loss > 0.0) + usize::from(w.latency > 0.0 && p.latency_residual.is_some())
        })
        .sum()
}
