//! The timeline figure: latency over time as a heat map, a row per load point and a
//! panel per variant.

use super::*;

/// Width of the strip right of the timeline panels that holds the colour bar [px].
pub(super) const TIMELINE_BAR_STRIP: i32 = 116;
/// Width of a time column of the timeline [px]: a spike one bucket wide stays visible
/// in print.
pub(super) const TIMELINE_COLUMN_PX: i32 = 2;
/// Width of the column right of each timeline panel that gives the spike spacing [px].
pub(super) const TIMELINE_SPACING_W: i32 = 64;
/// Rows at least this tall [px] have their spike spacing written beside them (in
/// [`style::NOTE_SIZE`] type, whose digits are 10 px high).
pub(super) const TIMELINE_SPACING_ROW: f64 = 10.0;

/// Panels of the timeline for `n` variants: (rows, columns). Up to three are stacked,
/// so each keeps the full width for time; more share the grid of the other figures.
pub(super) fn timeline_grid(n: usize) -> (usize, usize) {
    if n <= 3 { (n.max(1), 1) } else { grid(n) }
}

/// Which of `n` rows `row_px` tall get a tick label `text_px` high: every `step`-th from
/// the bottom, with at least a label's height and a fifth between two labels, and the
/// top row always (in place of the one below it when they would touch).
pub(super) fn labelled_rows(n: usize, row_px: f64, text_px: f64) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let step = ((1.2 * text_px / row_px.max(1e-9)).ceil() as usize).max(1);
    let mut v: Vec<usize> = (0..n).step_by(step).collect();
    let top = n - 1;
    if *v.last().expect("n > 0") != top {
        if top - v.last().expect("n > 0") < step && v.len() > 1 {
            v.pop();
        }
        v.push(top);
    }
    v
}

/// Runs of equal values: (first index, end index, value).
pub(super) fn runs<T: PartialEq + Copy>(v: &[T]) -> Vec<(usize, usize, T)> {
    let mut out: Vec<(usize, usize, T)> = Vec::new();
    for (i, x) in v.iter().enumerate() {
        match out.last_mut() {
            Some((_, end, y)) if y == x => *end = i + 1,
            _ => out.push((i, i + 1, *x)),
        }
    }
    out
}

/// Latency over time as heat maps, one panel per variant: time across, one row per load
/// point (the lowest at the bottom, named as on the other figures' load axis). A row is
/// cut into columns [`TIMELINE_COLUMN_PX`] wide (wider for a point that delivers fewer
/// frames than there are buckets: two of its typical gaps), each coloured by the
/// largest latency of the frames that arrived in the buckets it spans, on one
/// logarithmic scale for every panel that spans at least a decade
/// ([`colour_scale::Scale::log_decade`]); grey where no frame arrived.
///
/// A spike (a bucket above ten times its point's median bucket maximum, see
/// [`irqsim::model::timeline`]) is a bright stripe on a dark row: the lowest row with stripes
/// is the load at which spikes start, and their density across a row is their rate.
/// The mean time between spikes, from results.json, is written beside each row that has
/// spikes, and a panel with none at any load says so in its caption.
pub(super) fn timeline_chart<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let rows = data.timeline.unwrap_or(&[]);
    let summary = |variant: &str, load: f64| {
        data.sources.first().and_then(|s| {
            s.results
                .points
                .iter()
                .find(|p| p.variant == variant && (p.load_pct - load).abs() < 1e-9)
                .and_then(|p| p.figures.timeline.as_ref())
        })
    };
    let width_ms = data
        .sources
        .first()
        .and_then(|s| {
            s.results
                .points
                .iter()
                .find_map(|p| p.figures.timeline.as_ref())
        })
        .map(|t| t.bucket_ms)
        .filter(|w| *w > 0.0)
        .or_else(|| timeline::bucket_ms(rows))
        .unwrap_or(1.0);
    let groups = timeline::panels(rows);
    let loads = timeline::loads(rows);
    let spacing = groups.iter().any(|(v, pts)| {
        pts.iter()
            .any(|(l, _)| summary(v, *l).is_some_and(|t| t.spikes >= 1.0))
    });

    let mut head = header(root, data, "Latency over time");
    let mut note = format!(
        "colour: the largest latency of the frames that arrived in a {} ms bucket (of the buckets a column spans, the largest); grey: no frame",
        fmt_num(width_ms)
    );
    if spacing {
        note += "; right: mean time between spikes (buckets above 10 × the point's median)";
    }
    head.lines.extend(frame::wrap(
        root,
        &note,
        style::SUBTITLE_SIZE,
        WIDTH - 40,
        2,
    ));
    let area = frame::layout(root, &head, &[])?;
    let (aw, ah) = area.dim_in_pixel();
    let (maps, strip) = area.split_horizontally(aw as i32 - TIMELINE_BAR_STRIP);

    let scale = colour_scale::Scale::log_decade(
        &rows
            .iter()
            .filter(|r| r.packets > 0.0)
            .map(|r| r.max_latency_us)
            .collect::<Vec<f64>>(),
    );
    let t0 = span(rows.iter().map(|r| r.t_ms)).0;
    let t1 = span(rows.iter().map(|r| r.t_ms + width_ms)).1;
    let pps = data.x_axis == XAxis::OfferedPps;
    let row_name = |l: f64| match data.offered_at(l) {
        Some(o) if pps => fmt_num(o),
        _ => fmt_num(l),
    };
    let n = groups.len().max(1);
    let panels = maps.split_evenly(timeline_grid(n));
    let mut any_empty = false;
    for ((variant, pts), panel) in groups.iter().zip(&panels) {
        let summaries: Vec<_> = pts
            .iter()
            .filter_map(|(l, _)| summary(variant, *l))
            .collect();
        let spikes = summaries.iter().any(|t| t.spikes >= 1.0);
        let mut b = builder(panel, true);
        if n > 1 {
            // A dark panel is a result, not missing data: say so.
            let caption = if summaries.is_empty() || spikes {
                variant.clone()
            } else {
                format!("{variant}: no spikes")
            };
            b.caption(caption, frame::font(style::PANEL_SIZE, style::TEXT));
        } else if spacing {
            b.margin_top(24);
        }
        if spacing {
            b.margin_right(TIMELINE_SPACING_W);
        }
        let mut chart = b.build_cartesian_2d(t0..t1, 0.0..loads.len().max(1) as f64)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("time (ms)")
            .y_desc(data.x_desc())
            .x_label_formatter(&num)
            .x_labels(if timeline_grid(n).1 > 1 { 6 } else { 10 })
            .y_labels(0)
            .label_style(frame::font(style::TICK_SIZE, style::TEXT))
            .axis_desc_style(frame::font(style::AXIS_DESC_SIZE, style::TEXT))
            .axis_style(style::TEXT_LIGHT.stroke_width(1))
            .draw()?;
        let ct = chart.as_coord_spec();
        let (x0, _) = ct.translate(&(t0, 0.0));
        let (x1, _) = ct.translate(&(t1, 0.0));
        let w = (x1 - x0).max(1);
        let cols = (w / TIMELINE_COLUMN_PX).max(1) as usize;
        let row_px = |i: usize| {
            let (_, lo) = ct.translate(&(t0, i as f64));
            let (_, hi) = ct.translate(&(t0, (i + 1) as f64));
            (hi, lo)
        };
        let (h0, h1) = row_px(0);
        let row_h = (h1 - h0) as f64;
        // A pixel between rows when they are tall enough to spare it.
        let gap = i32::from(row_h >= 6.0);
        for (i, load) in loads.iter().enumerate() {
            // Rectangles are filled on [left, right) x [top, bottom) in both backends.
            let (top, bottom) = row_px(i);
            let top = (top + gap).min(bottom - 1);
            let buckets = pts
                .iter()
                .find(|(l, _)| l == load)
                .map_or(&[][..], |(_, b)| &b[..]);
            // Columns at least two of the row's sampling gaps wide, so a sparse row is
            // not striped with the buckets between its frames.
            let row_cols = timeline::typical_gap_ms(buckets)
                .map_or(cols, |g| cols.min(((t1 - t0) / (2.0 * g)).floor() as usize))
                .max(1);
            let edge = |k: usize| x0 + (k as i32 * w) / row_cols as i32;
            let colours: Vec<RGBColor> =
                timeline::column_max(buckets, (t0, t1), width_ms, row_cols)
                    .into_iter()
                    .map(|m| m.map_or(style::NO_VALUE, |v| scale.colour(v)))
                    .collect();
            for (a, e, c) in runs(&colours) {
                any_empty |= c == style::NO_VALUE;
                root.draw(&Rectangle::new(
                    [(edge(a), top), (edge(e), bottom)],
                    c.filled(),
                ))?;
            }
            if spacing
                && row_h >= TIMELINE_SPACING_ROW
                && let Some(t) = summary(variant, *load)
                && t.spikes >= 1.0
            {
                let text = if t.spikes >= 2.0 {
                    format!("{} ms", fmt_num(t.mean_spike_interval_ms))
                } else {
                    "1 spike".to_string()
                };
                root.draw(&Text::new(
                    text,
                    (x1 + 6, (top + bottom) / 2),
                    anchored(style::NOTE_SIZE, style::TEXT, HPos::Left, VPos::Center),
                ))?;
            }
        }
        for i in labelled_rows(loads.len(), row_h, style::TICK_SIZE) {
            let (top, bottom) = row_px(i);
            let y = (top + bottom) / 2;
            polyline(
                root,
                &[(x0 - 5, y), (x0, y)],
                style::TEXT_LIGHT,
                Dash::Solid,
                1,
            )?;
            root.draw(&Text::new(
                row_name(loads[i]),
                (x0 - 8, y),
                anchored(style::TICK_SIZE, style::TEXT, HPos::Right, VPos::Center),
            ))?;
        }
        if spikes && row_h >= TIMELINE_SPACING_ROW {
            let (top, _) = row_px(loads.len().saturating_sub(1));
            root.draw(&Text::new(
                "spacing",
                (x1 + 6, top - 4),
                anchored(
                    style::NOTE_SIZE,
                    style::TEXT_LIGHT,
                    HPos::Left,
                    VPos::Bottom,
                ),
            ))?;
        }
    }

    let (sw, _) = strip.dim_in_pixel();
    let bx = (sw as i32 - 24) / 2 - 12;
    let (top, bottom) = (40, ah as i32 - 90);
    colour_scale::draw_bar(
        &strip,
        &scale,
        &colour_scale::Bar {
            x: (bx, bx + 24),
            y: (top, bottom),
            unit: "max latency (µs)",
            fmt: &fmt_num,
            ticks: !rows.is_empty(),
        },
    )?;
    if any_empty {
        let y = bottom + 36;
        strip.draw(&Rectangle::new(
            [(bx, y), (bx + 24, y + 14)],
            style::NO_VALUE.filled(),
        ))?;
        strip.draw(&Text::new(
            "no frame",
            (bx + 30, y + 7),
            anchored(style::NOTE_SIZE, style::TEXT, HPos::Left, VPos::Center),
        ))?;
    }
    Ok(())
}
