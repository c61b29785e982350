//! The interrupts figure: interrupts per second against offered load, with a note
//! where a low load has more interrupts than frames.

use super::*;

pub(super) fn interrupts<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let head = header(root, data, "Interrupts vs offered load");
    // The axis fits the interrupt rates; the reference line is cut at its top (policies
    // that poll take far fewer interrupts than there are frames).
    let (_, mut top) = span(
        data.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.figures.interrupts_per_s)),
    );
    if top <= 0.0 {
        top = span(data.offered.iter().flatten().map(|(_, o)| *o)).1;
    }
    let ytop = nice_ceil(top * 1.1);
    let lines: Vec<Vec<(f64, f64)>> = data
        .series
        .iter()
        .map(|s| xy(&s.points, |p| (data.x(p), p.figures.interrupts_per_s)))
        .collect();
    let mut legend = series_entries_noted(data, Some(Marker::Dot), &lines, ytop);
    legend.push(Entry::new(
        "one interrupt per\noffered frame",
        Swatch::Line(style::REFERENCE, Dash::Dashed, None),
    ));
    if let Some(note) = interrupts_note(data) {
        legend.push(Entry::new(
            frame::wrap(root, &note, style::LEGEND_SIZE, NOTE_W, 8).join("\n"),
            Swatch::Heading,
        ));
    }
    let area = frame::layout(root, &head, &legend)?;
    let mut chart = builder(&area, false).build_cartesian_2d(padded(data.x_span()), 0.0..ytop)?;
    mesh!(chart, data.x_desc(), "interrupts per second", &num, &num);
    let ct = chart.as_coord_spec();
    for off in &data.offered {
        let off: Vec<(f64, f64)> = off
            .iter()
            .map(|(l, o)| (data.x_axis.of(*l, *o), *o))
            .collect();
        line(
            root,
            ct,
            &clip_above(&off, ytop),
            style::REFERENCE,
            Dash::Dashed,
            None,
        )?;
    }
    for (s, pts) in data.series.iter().zip(&lines) {
        line(root, ct, pts, s.colour, Dash::Solid, Some(Marker::Dot))?;
    }
    Ok(())
}

/// Width of a note in the legend column [px] (the column is at most 330 px wide).
pub(super) const NOTE_W: u32 = 290;

/// Why a line of the interrupts figure rises above one interrupt per offered frame, when
/// one does: the interrupts that receive nothing. Those are the handler runs of ports
/// that take interrupts without receiving a frame (the output port's transmit
/// completions), named from the counters (`NIC.interrupts` with no `NIC.rx_frames`),
/// with their rate at the lowest such point; without such a port, the kinds it can be.
pub(super) fn interrupts_note(data: &Data) -> Option<String> {
    let above =
        |p: &PointResult| p.offered_pps > 0.0 && p.figures.interrupts_per_s > 1.005 * p.offered_pps;
    let (src, p) = data.sources.iter().find_map(|src| {
        let mut pts: Vec<&PointResult> = src.results.points.iter().filter(|p| above(p)).collect();
        pts.sort_by(|a, b| a.offered_pps.total_cmp(&b.offered_pps));
        Some((src, *pts.first()?))
    })?;
    let c = &p.figures.counters;
    let tx_only: Vec<(&str, f64)> = c
        .iter()
        .filter_map(|(k, v)| Some((k.strip_suffix(".interrupts")?, *v)))
        .filter(|(nic, v)| *v > 0.0 && c.get(&format!("{nic}.rx_frames")).is_none_or(|r| *r == 0.0))
        .collect();
    let at = match data.x_axis {
        XAxis::LoadPct => format!("{} %", fmt_num(p.load_pct)),
        XAxis::OfferedPps => format!("{} frames/s", fmt_num(p.offered_pps)),
    };
    let d = src.results.duration_s;
    Some(if tx_only.is_empty() || d <= 0.0 {
        "Above the dashed line: interrupts that receive nothing (transmit completions, \
         other ports, timers), counted per pass over a line"
            .to_string()
    } else {
        let names: Vec<String> = tx_only
            .iter()
            .map(|(n, v)| format!("{n} {}/s", fmt_num(v / d)))
            .collect();
        format!(
            "Above the dashed line: interrupts that receive nothing, the transmit \
             completions of the output {} ({} at {at}), counted per pass over a line \
             (one pass can serve several ports)",
            if names.len() > 1 { "ports" } else { "port" },
            names.join(", ")
        )
    })
}
