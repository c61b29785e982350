//! The forwarded figure: the forwarded rate against offered load, with the ideal line
//! and the MLFRR.

use super::*;

pub(super) fn forwarded<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let head = header(root, data, "Forwarded rate vs offered load");
    let several = data.series.len() > 1;
    // Several series: each one's MLFRR goes in the legend rather than beside its ring,
    // where the labels would crowd each other; from ten series (a grid's cells) the
    // legend has room for their names only (the grid's table and heat maps give them).
    let crowded = data.series.len() >= 10;
    // The x axis is the other figures' load axis (the same unit and range, so the five
    // figures read side by side); the y axis fits the forwarded rates (simulated and
    // measured) with a margin, from 0.
    let xr = padded(data.x_span());
    let (_, ymax) = span(
        data.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.figures.total.forwarded_pps))
            .chain(
                data.measured
                    .iter()
                    .flat_map(|m| m.points.iter().map(|p| p.forwarded_pps)),
            ),
    );
    let top = fitted_top(ymax);
    // A line drawn over an earlier one it coincides with says so (policies that all
    // keep up forward alike).
    let lines: Vec<Vec<(f64, f64)>> = data
        .series
        .iter()
        .map(|s| xy(&s.points, |p| (data.x(p), p.figures.total.forwarded_pps)))
        .collect();
    let mut legend: Vec<Entry> = data
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut label = match (several, s.mlfrr) {
                (false, _) => s.label.clone(),
                (true, _) if crowded => s.label.clone(),
                (true, Some(r)) => format!("{}\n  MLFRR {} frames/s", s.label, fmt_num(r)),
                (true, None) => format!("{}\n  MLFRR: none (first point loses)", s.label),
            };
            let tol = COINCIDE_FRACTION * top;
            if let Some(j) = (0..i).find(|&j| coincide(&lines[i], &lines[j], tol)) {
                label += &format!("\n  (coincides with {})", data.series[j].label);
            }
            Entry::new(
                label,
                Swatch::Line(s.colour, Dash::Solid, Some(Marker::Dot)),
            )
        })
        .collect();
    legend.extend(measured_entries(data));
    // The ideal line: forwarded = offered, in frames/s per unit of the load axis (one
    // line per distinct ratio, as the interrupts figure's reference).
    let slopes = ideal_slopes(data);
    let mut ideal = "ideal: forwarded = offered".to_string();
    if let ([k], XAxis::LoadPct) = (&slopes[..], data.x_axis) {
        ideal += &format!("\n  (1 % = {} frames/s)", fmt_num(*k));
    }
    legend.push(Entry::new(
        ideal,
        Swatch::Line(style::REFERENCE, Dash::Dashed, None),
    ));
    if data.series.iter().any(|s| s.mlfrr.is_some()) {
        legend.push(Entry::new(
            "MLFRR: every point up to\nit loses < 0.1 %",
            Swatch::Points(style::TEXT, Marker::Ring),
        ));
    }
    let area = frame::layout(root, &head, &legend)?;
    let mut chart = builder(&area, false).build_cartesian_2d(xr.clone(), 0.0..top)?;
    mesh!(
        chart,
        data.x_desc(),
        data.rate_desc("forwarded"),
        &num,
        &num
    );
    let ct = chart.as_coord_spec();
    for k in &slopes {
        // y = k x across the axis, cut where it leaves 0..top.
        let a = xr.start.max(0.0);
        let b = xr.end.min(top / k);
        if b > a {
            line(
                root,
                ct,
                &[(a, k * a), (b, k * b)],
                style::REFERENCE,
                Dash::Dashed,
                None,
            )?;
        }
    }
    for (s, pts) in data.series.iter().zip(&lines) {
        line(root, ct, pts, s.colour, Dash::Solid, Some(Marker::Dot))?;
    }
    for m in &data.measured {
        let pts: Vec<(f64, f64)> = m
            .points
            .iter()
            .map(|p| (data.xm(p), p.forwarded_pps))
            .collect();
        points(root, ct, &pts, style::MEASURED, m.marker)?;
    }
    // MLFRR: a ring on the point and a dotted drop to the axis; with a single series its
    // value is written up and to the left, above the ideal line where no data can be
    // (nothing forwards more than it is offered).
    for s in &data.series {
        let Some(r) = s.mlfrr else { continue };
        let Some(p) = s.points.iter().find(|p| p.offered_pps == r) else {
            continue;
        };
        let at = ct.translate(&(data.x(p), p.figures.total.forwarded_pps));
        let foot = ct.translate(&(data.x(p), 0.0));
        polyline(
            root,
            &[(at.0, at.1 + 10), foot],
            s.colour,
            Dash::Dotted,
            style::LINE_WIDTH,
        )?;
        draw_marker(root, at, Marker::Ring, s.colour)?;
        if several {
            continue;
        }
        let text = format!("MLFRR {} frames/s", fmt_num(r));
        let (left, top) = ct.translate(&(xr.start, top));
        let tw = frame::text_width(root, &text, style::NOTE_SIZE) as i32;
        let y = (at.1 - 14).max(top + 20);
        let (x, h) = if at.0 - 14 - tw >= left + 4 {
            (at.0 - 14, HPos::Right)
        } else {
            (left + 8, HPos::Left)
        };
        root.draw(&Text::new(
            text,
            (x, y),
            anchored(style::NOTE_SIZE, s.colour, h, VPos::Bottom),
        ))?;
    }
    Ok(())
}

/// Offered frames/s per unit of the load axis, one per distinct ratio among the result
/// sets (1 when the axis is the offered rate itself; none without a point above 0).
pub(super) fn ideal_slopes(data: &Data) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for off in &data.offered {
        let Some(k) = off
            .iter()
            .map(|(l, o)| (data.x_axis.of(*l, *o), *o))
            .find(|(x, _)| *x > 0.0)
            .map(|(x, o)| o / x)
        else {
            continue;
        };
        if !out.iter().any(|o| (o / k - 1.0).abs() < 1e-6) {
            out.push(k);
        }
    }
    out
}

/// Margin above the largest value of an axis that starts at 0 (a fraction of it).
pub(super) const TOP_MARGIN: f64 = 0.05;

/// The top of an axis from 0 that fits values up to `max`: [`TOP_MARGIN`] above it
/// (1 when nothing is above 0).
pub(super) fn fitted_top(max: f64) -> f64 {
    if max > 0.0 && max.is_finite() {
        max * (1.0 + TOP_MARGIN)
    } else {
        1.0
    }
}
