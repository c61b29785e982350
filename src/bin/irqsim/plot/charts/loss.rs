//! The loss figure: loss against offered load.

use super::*;

pub(super) fn loss<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let head = header(root, data, "Packet loss vs offered load");
    let (_, top) = span(
        data.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.figures.total.loss_pct))
            .chain(
                data.measured
                    .iter()
                    .flat_map(|m| m.points.iter().map(|p| p.loss_pct)),
            ),
    );
    let ytop = if top > 50.0 {
        100.0
    } else {
        nice_ceil(top * 1.08).max(1.0)
    };
    let lines: Vec<Vec<(f64, f64)>> = data
        .series
        .iter()
        .map(|s| xy(&s.points, |p| (data.x(p), p.figures.total.loss_pct)))
        .collect();
    let mut legend = series_entries_noted(data, Some(Marker::Dot), &lines, ytop);
    legend.extend(measured_entries(data));
    let area = frame::layout(root, &head, &legend)?;
    let mut chart = builder(&area, false).build_cartesian_2d(padded(data.x_span()), 0.0..ytop)?;
    mesh!(chart, data.x_desc(), "loss (% of frames sent)", &num, &num);
    let ct = chart.as_coord_spec();
    for (s, pts) in data.series.iter().zip(&lines) {
        line(root, ct, pts, s.colour, Dash::Solid, Some(Marker::Dot))?;
    }
    for m in &data.measured {
        let pts: Vec<(f64, f64)> = m.points.iter().map(|p| (data.xm(p), p.loss_pct)).collect();
        points(root, ct, &pts, style::MEASURED, m.marker)?;
    }
    Ok(())
}
