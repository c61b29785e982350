//! A variant's sweep in a few numbers: MLFRR, peak output, output at the highest load,
//! p99 latency at a chosen load; and the summary of a grid's cells.
//!
//! The **MLFRR** (maximum loss-free receive rate, Mogul and Ramakrishnan's figure of
//! merit; RFC 2544's throughput with a tolerance) is the largest offered rate `r` of the
//! sweep such that every point offered at most `r` lost less than [`LOSS_FREE_PCT`] % of
//! its frames. A loss-free point above a lossy one (the 21143 router's recovery at
//! 34-36 %) does not raise it: the MLFRR is where the first loss starts. The plots ring
//! the same point.
//!
//! The **peak** is the highest forwarded rate and the offered load where it occurs (the
//! lowest such load on a tie); the **top** is the point with the highest offered rate,
//! whose forwarded rate falls below the peak under livelock.

use crate::config::grid::Grid;
use crate::model::timeline::TimelineRow;
use crate::results::{
    GridCellFrame, GridCellResult, GridFrame, GridParameterResult, GridResult, PointFigures,
    PointResult, Results, ResultsFrame, VariantSummary,
};

/// Loss below which a point counts as loss-free for the MLFRR [% of frames sent].
pub const LOSS_FREE_PCT: f64 = 0.1;

/// The index of the MLFRR point among (offered rate, loss %) pairs sorted by offered
/// rate: the last of the leading run of loss-free points; `None` when the first point
/// already loses.
pub fn loss_free_end(points: impl Iterator<Item = (f64, f64)>) -> Option<usize> {
    let mut best = None;
    for (i, (_, loss)) in points.enumerate() {
        if loss < LOSS_FREE_PCT {
            best = Some(i);
        } else {
            break;
        }
    }
    best
}

/// Maximum loss-free receive rate of points sorted by offered rate [frames/s].
pub fn mlfrr(points: &[&PointResult]) -> Option<f64> {
    loss_free_end(
        points
            .iter()
            .map(|p| (p.offered_pps, p.figures.total.loss_pct)),
    )
    .map(|i| points[i].offered_pps)
}

/// Summarise one variant's points, given in sweep order; `latency_point` indexes them
/// (the point whose p99 latency is reported).
pub fn summarise(points: &[&PointResult], latency_point: Option<usize>) -> VariantSummary {
    let mut sorted: Vec<&PointResult> = points.to_vec();
    sorted.sort_by(|a, b| a.offered_pps.total_cmp(&b.offered_pps));
    let m = loss_free_end(
        sorted
            .iter()
            .map(|p| (p.offered_pps, p.figures.total.loss_pct)),
    )
    .map(|i| sorted[i]);
    let fwd = |p: &PointResult| p.figures.total.forwarded_pps;
    // The first of the highest (the lowest load on a tie).
    let peak = sorted
        .iter()
        .copied()
        .fold(None::<&PointResult>, |best, p| match best {
            Some(b) if fwd(b) >= fwd(p) => Some(b),
            _ => Some(p),
        });
    let top = sorted.last().copied();
    let p99 = latency_point
        .and_then(|j| points.get(j))
        .filter(|p| p.figures.total.received > 0.0)
        .map(|p| p.figures.total.latency_us.p99);
    VariantSummary {
        mlfrr_pps: m.map(|p| p.offered_pps),
        mlfrr_load_pct: m.map(|p| p.load_pct),
        peak_pps: peak.map_or(0.0, fwd),
        peak_load_pct: peak.map_or(0.0, |p| p.load_pct),
        peak_offered_pps: peak.map_or(0.0, |p| p.offered_pps),
        top_load_pct: top.map_or(0.0, |p| p.load_pct),
        top_offered_pps: top.map_or(0.0, |p| p.offered_pps),
        top_forwarded_pps: top.map_or(0.0, fwd),
        p99_us: p99,
    }
}

/// What the grid summary needs of a grid besides the points (kept by a
/// [`ResultsFrame`], so `irqsim merge` can summarise without the scenario files).
pub fn grid_frame(grid: &Grid) -> GridFrame {
    GridFrame {
        parameters: grid
            .axes
            .iter()
            .map(|a| GridParameterResult {
                name: a.name.clone(),
                path: a.path.clone(),
                values: a.values.clone(),
            })
            .collect(),
        latency_at: grid.latency_at,
        latency_point: grid.latency_point,
        cells: grid
            .cells
            .iter()
            .map(|c| GridCellFrame {
                variant: c.variant.clone(),
                base: grid.bases.get(c.base).cloned(),
                values: c.values(&grid.axes),
            })
            .collect(),
    }
}

/// The grid's parameters and a summary of each cell, from the points of the sweep (in
/// sweep order, each variant's together).
pub fn grid_result(grid: &GridFrame, points: &[PointResult]) -> GridResult {
    let of =
        |name: &str| -> Vec<&PointResult> { points.iter().filter(|p| p.variant == name).collect() };
    let at = grid.cells.first().and_then(|c| {
        grid.latency_point
            .and_then(|j| of(&c.variant).get(j).copied())
    });
    GridResult {
        parameters: grid.parameters.clone(),
        latency_at: grid.latency_at,
        latency_at_load_pct: at.map(|p| p.load_pct),
        latency_at_offered_pps: at.map(|p| p.offered_pps),
        loss_free_pct: LOSS_FREE_PCT,
        cells: grid
            .cells
            .iter()
            .map(|c| GridCellResult {
                variant: c.variant.clone(),
                base: c.base.clone(),
                values: c.values.clone(),
                summary: summarise(&of(&c.variant), grid.latency_point),
            })
            .collect(),
    }
}

/// The results of a sweep from all its runs in sweep order ([`ResultsFrame::assemble`])
/// with the grid summary, when the sweep is a grid.
pub fn assemble(
    frame: &ResultsFrame,
    runs: impl IntoIterator<Item = (PointFigures, Vec<TimelineRow>)>,
) -> Results {
    let mut r = frame.assemble(runs);
    r.grid = frame.grid.as_ref().map(|g| grid_result(g, &r.points));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(offered: f64, loss: f64, fwd: f64, p99: f64) -> PointResult {
        let mut p = PointResult {
            variant: "v".into(),
            load_pct: offered / 1000.0,
            offered_pps: offered,
            outstanding: None,
            replications: 1,
            figures: Default::default(),
            ci95: None,
        };
        p.figures.total.loss_pct = loss;
        p.figures.total.forwarded_pps = fwd;
        p.figures.total.received = if fwd > 0.0 { 1.0 } else { 0.0 };
        p.figures.total.latency_us.p99 = p99;
        p
    }

    #[test]
    fn mlfrr_is_the_end_of_the_loss_free_run() {
        let pts = [
            (10_000.0, 0.0),
            (20_000.0, 0.09),
            (30_000.0, 12.0),
            (40_000.0, 0.0),
        ];
        assert_eq!(loss_free_end(pts.into_iter()), Some(1));
        assert_eq!(loss_free_end(pts[2..].iter().copied()), None);
        assert_eq!(loss_free_end(pts[3..].iter().copied()), Some(0));
    }

    #[test]
    fn a_livelocked_sweep_by_hand() {
        // Given out of order: 10k (clean), 20k (clean), 30k (5 % loss, the peak),
        // 40k (recovers to no loss but forwards less), 50k (livelock).
        let pts = [
            point(30_000.0, 5.0, 28_500.0, 900.0),
            point(10_000.0, 0.0, 10_000.0, 60.0),
            point(20_000.0, 0.0, 20_000.0, 80.0),
            point(50_000.0, 60.0, 20_000.0, 2_000.0),
            point(40_000.0, 0.0, 28_500.0, 1_500.0),
        ];
        let refs: Vec<&PointResult> = pts.iter().collect();
        let s = summarise(&refs, Some(0));
        assert_eq!(s.mlfrr_pps, Some(20_000.0));
        assert_eq!(s.mlfrr_load_pct, Some(20.0));
        // Tie between 30k and 40k: the lower load.
        assert_eq!((s.peak_pps, s.peak_offered_pps), (28_500.0, 30_000.0));
        assert_eq!(s.peak_load_pct, 30.0);
        assert_eq!(
            (s.top_offered_pps, s.top_forwarded_pps),
            (50_000.0, 20_000.0)
        );
        assert_eq!(s.top_load_pct, 50.0);
        // The latency point indexes the sweep order, not the sorted one.
        assert_eq!(s.p99_us, Some(900.0));
        assert_eq!(summarise(&refs, Some(3)).p99_us, Some(2_000.0));
        assert_eq!(summarise(&refs, None).p99_us, None);
        // Losing from the first point: no MLFRR.
        assert_eq!(summarise(&refs[..1], Some(0)).mlfrr_pps, None);
        // Nothing delivered: no latency.
        let dead = [point(10_000.0, 100.0, 0.0, 0.0)];
        let refs: Vec<&PointResult> = dead.iter().collect();
        assert_eq!(summarise(&refs, Some(0)).p99_us, None);
    }
}
