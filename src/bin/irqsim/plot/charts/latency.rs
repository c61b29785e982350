//! The latency figure: average, p99 and maximum against offered load, on a log axis.

use super::*;

pub(super) const STATS: [Stat; 3] = [
    ("avg", |p| p.figures.total.latency_us.avg, Dash::Solid),
    ("p99", |p| p.figures.total.latency_us.p99, Dash::Dashed),
    ("max", |p| p.figures.total.latency_us.max, Dash::Dotted),
];

/// Most tick labels on the latency axis (beyond it: the ends and the powers of ten).
pub(super) const LATENCY_TICKS: usize = 10;

/// Light grid lines of a log axis: 1 to 9 times each power of ten within `range`, other
/// than the `ticks`.
pub(super) fn light_125(range: &std::ops::Range<f64>, ticks: &[f64]) -> Vec<f64> {
    let k0 = range.start.log10().floor() as i32;
    let k1 = range.end.log10().ceil() as i32;
    (k0..=k1)
        .flat_map(|k| (1..10).map(move |m| m as f64 * 10f64.powi(k)))
        .filter(|v| {
            *v >= range.start * (1.0 - 1e-9)
                && *v <= range.end * (1.0 + 1e-9)
                && !ticks.iter().any(|t| (t / v - 1.0).abs() < 1e-9)
        })
        .collect()
}

/// From this many series on, the latency figure has one panel per statistic.
pub(super) const LATENCY_PANELS_FROM: usize = 3;

pub(super) fn latency<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let head = header(root, data, "Latency vs offered load");
    let single = data.series.len() == 1;
    let panels = data.series.len() >= LATENCY_PANELS_FROM;
    // One series: a colour per statistic. Several: a colour per series, and a dash per
    // statistic (or a panel per statistic when there are many series).
    let colour = |si: usize, k: usize| {
        if single {
            style::LATENCY_STATS[k]
        } else {
            data.series[si].colour
        }
    };
    let dash = |k: usize| if panels { Dash::Solid } else { STATS[k].2 };
    // The average has dots and the maximum, drawn last, filled triangles: where the
    // maximum meets the 99th percentile (few frames, or every frame alike) its points
    // still show on top of the p99 line.
    let marker = |k: usize| match (panels, k) {
        (true, _) | (false, 0) => Some(Marker::Dot),
        (false, 2) => Some(Marker::Peak),
        _ => None,
    };
    // The log axis fits the data (simulated and measured) to 1-2-5 steps, so no decade
    // of it is empty; its ticks are those steps.
    let (yr, yticks) = log_fit(
        span(
            data.series
                .iter()
                .flat_map(|s| {
                    s.points
                        .iter()
                        .flat_map(|p| STATS.iter().map(move |(_, f, _)| f(p)))
                })
                .chain(
                    data.measured
                        .iter()
                        .flat_map(|m| m.points.iter().flat_map(|p| [p.avg_us, p.max_us]))
                        .flatten(),
                )
                .filter(|v| *v > 0.0),
        ),
        LATENCY_TICKS,
    );
    let light: Vec<f64> = light_125(&yr, &yticks);
    let mut legend = Vec::new();
    if single {
        legend.push(Entry::new(data.series[0].label.clone(), Swatch::Heading));
        // On the log axis, lines coincide when their logarithms do.
        let lines: Vec<Vec<(f64, f64)>> = STATS
            .iter()
            .map(|(_, f, _)| {
                data.series[0]
                    .points
                    .iter()
                    .map(|p| (data.x(p), f(p).max(yr.start).log10()))
                    .collect()
            })
            .collect();
        let names: Vec<String> = STATS.iter().map(|(n, _, _)| n.to_string()).collect();
        let range = (yr.end / yr.start).log10();
        let labels = noting_coincidence(&names, &lines, COINCIDE_FRACTION * range);
        for (k, label) in labels.into_iter().enumerate() {
            legend.push(Entry::new(
                label,
                Swatch::Line(colour(0, k), dash(k), marker(k)),
            ));
        }
    } else {
        legend.extend(series_entries(data, Some(Marker::Dot)));
        if !panels {
            legend.push(Entry::new("line style", Swatch::Heading));
            for (k, (name, _, _)) in STATS.iter().enumerate() {
                legend.push(Entry::new(
                    *name,
                    Swatch::Line(style::TEXT_LIGHT, dash(k), marker(k)),
                ));
            }
        }
    }
    for m in &data.measured {
        legend.push(Entry::new(m.label.clone(), Swatch::Heading));
        legend.push(Entry::new("avg", Swatch::Points(style::MEASURED, m.marker)));
        legend.push(Entry::new(
            "max",
            Swatch::Points(style::MEASURED, m.marker_max),
        ));
    }
    let area = frame::layout(root, &head, &legend)?;
    let xr = padded(data.x_span());
    // (area, statistics drawn in it, caption)
    let layout: Vec<(Area<DB>, Vec<usize>, Option<&str>)> = if panels {
        area.split_evenly((1, STATS.len()))
            .into_iter()
            .zip(["average", "99th percentile", "maximum"])
            .enumerate()
            .map(|(k, (a, c))| (a, vec![k], Some(c)))
            .collect()
    } else {
        vec![(area, vec![0, 1, 2], None)]
    };
    for (i, (panel, stats, caption)) in layout.iter().enumerate() {
        let mut b = builder(panel, panels);
        if let Some(c) = caption {
            b.caption(*c, frame::font(style::PANEL_SIZE, style::TEXT));
        }
        let mut chart = b.build_cartesian_2d(
            xr.clone(),
            yr.clone()
                .log_scale()
                .with_key_points(yticks.clone())
                .with_light_points(light.clone()),
        )?;
        let yd = if i == 0 {
            "latency (µs, log scale)"
        } else {
            ""
        };
        if panels {
            mesh!(chart, data.x_desc(), yd, &num, &num, 10, 5);
        } else {
            mesh!(chart, data.x_desc(), yd, &num, &num, 10);
        }
        let ct = chart.as_coord_spec();
        for (si, s) in data.series.iter().enumerate() {
            for &k in stats {
                let f = STATS[k].1;
                for run in positive_runs(s.points.iter().map(|p| (data.x(p), f(p)))) {
                    line(root, ct, &run, colour(si, k), dash(k), marker(k))?;
                }
            }
        }
        for m in &data.measured {
            if stats.contains(&0) {
                let avg: Vec<(f64, f64)> = m
                    .points
                    .iter()
                    .filter_map(|p| Some((data.xm(p), p.avg_us?)))
                    .collect();
                points(root, ct, &avg, style::MEASURED, m.marker)?;
            }
            if stats.contains(&2) {
                let max: Vec<(f64, f64)> = m
                    .points
                    .iter()
                    .filter_map(|p| Some((data.xm(p), p.max_us?)))
                    .collect();
                points(root, ct, &max, style::MEASURED, m.marker_max)?;
            }
        }
    }
    Ok(())
}
