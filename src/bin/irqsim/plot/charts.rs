//! The charts. Each draws one figure on a root drawing area of either backend: the header
//! and legend through [`frame::layout`], the axes with plotters, and the data through
//! the pixel helpers of [`frame`].

use super::colour_scale;
use super::data::{Data, Series, XAxis, fmt_num, log_fit, nice_ceil, padded, span};
use super::frame::{self, Area, Entry, Header, R, Swatch, anchored, draw_marker, polyline};
use super::style::{self, Dash, Marker, WIDTH};
use super::timeline;
use irqsim::results::PointResult;
use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The figures, in the order they are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Loss vs offered load.
    Loss,
    /// Forwarded rate vs offered load (the other figures' load axis), ideal line, MLFRR.
    Forwarded,
    /// Latency (avg, p99, max) vs offered load, log axis.
    Latency,
    /// CPU time by level, stacked, vs offered load; one panel per series.
    Cpu,
    /// Interrupts per second vs offered load.
    Interrupts,
    /// Latency over time as a heat map, one row per load point; one panel per variant.
    Timeline,
    /// Each core's busy time vs offered load, a line per core; one panel per series
    /// (drawn only for results of hosts with several cores).
    Cores,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 7] = [
        Kind::Loss,
        Kind::Forwarded,
        Kind::Latency,
        Kind::Cpu,
        Kind::Interrupts,
        Kind::Timeline,
        Kind::Cores,
    ];

    /// File stem under `plots/`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Loss => "loss",
            Kind::Forwarded => "forwarded",
            Kind::Latency => "latency",
            Kind::Cpu => "cpu",
            Kind::Interrupts => "interrupts",
            Kind::Timeline => "timeline",
            Kind::Cores => "cores",
        }
    }
}

/// Draw figure `kind` of `data` on `root`.
pub fn draw<DB: DrawingBackend>(kind: Kind, data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    match kind {
        Kind::Loss => loss(data, root),
        Kind::Forwarded => forwarded(data, root),
        Kind::Latency => latency(data, root),
        Kind::Cpu => cpu(data, root),
        Kind::Interrupts => interrupts(data, root),
        Kind::Timeline => timeline_chart(data, root),
        Kind::Cores => cores(data, root),
    }
}

/// Title and subtitle lines: what was simulated.
fn header<DB: DrawingBackend>(root: &Area<DB>, data: &Data, what: &str) -> Header {
    let w = WIDTH - 40;
    let size = style::SUBTITLE_SIZE;
    if let [src] = data.sources {
        let r = src.results;
        let mut lines = Vec::new();
        if !r.description.is_empty() {
            lines.extend(frame::wrap(root, &r.description, size, w, 2));
        }
        let mut meta = format!(
            "model {} · {} s per point · seed {}",
            r.model,
            fmt_num(r.duration_s),
            r.seed
        );
        if r.replications > 1 {
            meta += &format!(" · mean of {} replications", r.replications);
        }
        if let Some(m) = &r.measured {
            meta += &format!(" · measured: {}", m.file);
        }
        lines.push(frame::one_line(root, &meta, size, w));
        Header {
            title: format!("{what} — {}", r.scenario),
            lines,
        }
    } else {
        let n = data.sources.len();
        let mut lines: Vec<String> = data
            .sources
            .iter()
            .take(4)
            .map(|s| {
                let r = s.results;
                let d = if r.description.is_empty() {
                    format!("model {}", r.model)
                } else {
                    r.description.clone()
                };
                frame::one_line(root, &format!("{}: {d}", s.label), size, w)
            })
            .collect();
        if n > 4 {
            lines.push(format!("… and {} more", n - 4));
        }
        Header {
            title: format!("{what} — {n} result sets compared"),
            lines,
        }
    }
}

/// A chart builder with the common margins and label areas.
pub(super) fn builder<'a, 'b, DB: DrawingBackend>(
    area: &'a Area<DB>,
    panel: bool,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.margin_top(if panel { 6 } else { 12 })
        .margin_right(20)
        .margin_left(10)
        .margin_bottom(8)
        .x_label_area_size(if panel { 54 } else { 60 })
        .y_label_area_size(if panel { 88 } else { 100 });
    b
}

/// Draw the mesh: grid, axes, tick labels, axis descriptions.
macro_rules! mesh {
    ($chart:expr, $xd:expr, $yd:expr, $xf:expr, $yf:expr) => {
        mesh!($chart, $xd, $yd, $xf, $yf, 1, 8)
    };
    ($chart:expr, $xd:expr, $yd:expr, $xf:expr, $yf:expr, $light:expr) => {
        mesh!($chart, $xd, $yd, $xf, $yf, $light, 8)
    };
    ($chart:expr, $xd:expr, $yd:expr, $xf:expr, $yf:expr, $light:expr, $xlabels:expr) => {
        $chart
            .configure_mesh()
            .x_desc($xd)
            .y_desc($yd)
            .x_label_formatter($xf)
            .y_label_formatter($yf)
            .x_labels($xlabels)
            .y_labels(8)
            .x_max_light_lines(1)
            .y_max_light_lines($light)
            .label_style(frame::font(style::TICK_SIZE, style::TEXT))
            .axis_desc_style(frame::font(style::AXIS_DESC_SIZE, style::TEXT))
            .bold_line_style(style::GRID_BOLD.stroke_width(1))
            .light_line_style(style::GRID_LIGHT.stroke_width(1))
            .axis_style(style::TEXT_LIGHT.stroke_width(1))
            .draw()?
    };
}

pub(super) use mesh;

/// Tick labels: numbers with thousands separators.
pub(super) fn num(v: &f64) -> String {
    fmt_num(*v)
}

/// A line through data points, with optional markers.
pub(super) fn line<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    root: &Area<DB>,
    ct: &CT,
    pts: &[(f64, f64)],
    colour: RGBColor,
    dash: Dash,
    marker: Option<Marker>,
) -> R
where
    DB::ErrorType: 'static,
{
    let px: Vec<(i32, i32)> = pts.iter().map(|p| ct.translate(p)).collect();
    polyline(root, &px, colour, dash, style::LINE_WIDTH)?;
    if let Some(m) = marker {
        for p in &px {
            draw_marker(root, *p, m, colour)?;
        }
    }
    Ok(())
}

/// Markers alone at data points.
fn points<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    root: &Area<DB>,
    ct: &CT,
    pts: &[(f64, f64)],
    colour: RGBColor,
    marker: Marker,
) -> R
where
    DB::ErrorType: 'static,
{
    for p in pts {
        draw_marker(root, ct.translate(p), marker, colour)?;
    }
    Ok(())
}

/// The part of a line (by increasing x) below `ymax`, ending where it first crosses it.
fn clip_above(pts: &[(f64, f64)], ymax: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for (i, &(x, y)) in pts.iter().enumerate() {
        if y <= ymax {
            out.push((x, y));
            continue;
        }
        if i > 0 {
            let (px, py) = pts[i - 1];
            if py < ymax {
                out.push((px + (x - px) * (ymax - py) / (y - py), ymax));
            }
        }
        break;
    }
    out
}

/// Split points into runs of positive values (for log axes and empty buckets).
fn positive_runs(pts: impl Iterator<Item = (f64, f64)>) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for (x, y) in pts {
        if y > 0.0 && y.is_finite() {
            out.last_mut().expect("never empty").push((x, y));
        } else if !out.last().expect("never empty").is_empty() {
            out.push(Vec::new());
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

fn xy(pts: &[&PointResult], f: impl Fn(&PointResult) -> (f64, f64)) -> Vec<(f64, f64)> {
    pts.iter().map(|p| f(p)).collect()
}

fn series_entries(data: &Data, marker: Option<Marker>) -> Vec<Entry> {
    data.series
        .iter()
        .map(|s| Entry::new(s.label.clone(), Swatch::Line(s.colour, Dash::Solid, marker)))
        .collect()
}

/// Two lines closer than this fraction of their axis' range at every point are drawn on
/// the same pixels: 0.2 % is under one pixel of a chart about 460 pixels tall, and
/// under half the width of a line ([`style::LINE_WIDTH`]).
const COINCIDE_FRACTION: f64 = 0.002;

/// Whether two lines coincide on the chart: the same x at every point, and y values no
/// further apart than `tol` (in axis units).
fn coincide(a: &[(f64, f64)], b: &[(f64, f64)], tol: f64) -> bool {
    !a.is_empty()
        && a.len() == b.len()
        && a.iter().zip(b).all(|(p, q)| {
            (p.0 - q.0).abs() <= 1e-9 * p.0.abs().max(1.0) && (p.1 - q.1).abs() <= tol
        })
}

/// Legend labels of lines drawn in order, each followed by the earlier line it hides
/// (a line drawn later covers one it [`coincide`]s with): `label\n  (coincides with
/// other)`.
fn noting_coincidence(labels: &[String], lines: &[Vec<(f64, f64)>], tol: f64) -> Vec<String> {
    labels
        .iter()
        .enumerate()
        .map(
            |(i, l)| match (0..i).find(|&j| coincide(&lines[i], &lines[j], tol)) {
                Some(j) => format!("{l}\n  (coincides with {})", labels[j]),
                None => l.clone(),
            },
        )
        .collect()
}

/// [`series_entries`] with coincident lines noted: `lines[i]` is series `i` as drawn,
/// on an axis whose range is `range`.
fn series_entries_noted(
    data: &Data,
    marker: Option<Marker>,
    lines: &[Vec<(f64, f64)>],
    range: f64,
) -> Vec<Entry> {
    let labels: Vec<String> = data.series.iter().map(|s| s.label.clone()).collect();
    noting_coincidence(&labels, lines, COINCIDE_FRACTION * range)
        .into_iter()
        .zip(&data.series)
        .map(|(l, s)| Entry::new(l, Swatch::Line(s.colour, Dash::Solid, marker)))
        .collect()
}

fn measured_entries(data: &Data) -> Vec<Entry> {
    data.measured
        .iter()
        .map(|m| Entry::new(m.label.clone(), Swatch::Points(style::MEASURED, m.marker)))
        .collect()
}

fn loss<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
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

fn forwarded<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
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
fn ideal_slopes(data: &Data) -> Vec<f64> {
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
const TOP_MARGIN: f64 = 0.05;

/// The top of an axis from 0 that fits values up to `max`: [`TOP_MARGIN`] above it
/// (1 when nothing is above 0).
fn fitted_top(max: f64) -> f64 {
    if max > 0.0 && max.is_finite() {
        max * (1.0 + TOP_MARGIN)
    } else {
        1.0
    }
}

/// Latency statistics: name, value, dash.
type Stat = (&'static str, fn(&PointResult) -> f64, Dash);
const STATS: [Stat; 3] = [
    ("avg", |p| p.figures.total.latency_us.avg, Dash::Solid),
    ("p99", |p| p.figures.total.latency_us.p99, Dash::Dashed),
    ("max", |p| p.figures.total.latency_us.max, Dash::Dotted),
];

/// Most tick labels on the latency axis (beyond it: the ends and the powers of ten).
const LATENCY_TICKS: usize = 10;

/// Light grid lines of a log axis: 1 to 9 times each power of ten within `range`, other
/// than the `ticks`.
fn light_125(range: &std::ops::Range<f64>, ticks: &[f64]) -> Vec<f64> {
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
const LATENCY_PANELS_FROM: usize = 3;

fn latency<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
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

/// Panels for `n` series: (rows, columns).
fn grid(n: usize) -> (usize, usize) {
    let cols = if n <= 3 {
        n.max(1)
    } else {
        (n as f64).sqrt().ceil() as usize
    };
    (n.div_ceil(cols), cols)
}

fn cpu<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    // A Linux host's results (every point of every series) show CPU time as mpstat
    // does (%usr %sys %irq %soft %idle); the others by the model's levels.
    let mpstat = data
        .series
        .iter()
        .flat_map(|s| &s.points)
        .all(|p| p.figures.mpstat.is_some());
    let (title, bands) = if mpstat {
        (
            "CPU time as mpstat shows it vs offered load",
            &style::CPU_MPSTAT,
        )
    } else {
        ("CPU time by level vs offered load", &style::CPU_LEVELS)
    };
    // Each band's share of a point's time [fraction], in the order of `bands`.
    let parts = |p: &PointResult| -> [f64; 5] {
        match &p.figures.mpstat {
            Some(m) if mpstat => {
                let a = &m.all;
                [a.irq, a.soft, a.sys, a.usr, a.idle].map(|x| x / 100.0)
            }
            _ => {
                let c = &p.figures.cpu;
                [c.interrupt, c.softirq, c.kernel, c.user, c.idle]
            }
        }
    };
    let head = header(root, data, title);
    // Levels that take no time at any point of any series (no kernel thread, no user
    // process) have nothing to show: no legend entry and no band.
    let used: Vec<bool> = (0..bands.len())
        .map(|k| {
            data.series
                .iter()
                .flat_map(|s| &s.points)
                .any(|p| parts(p)[k] > 0.0)
        })
        .collect();
    let legend: Vec<Entry> = bands
        .iter()
        .zip(&used)
        .rev()
        .filter(|(_, u)| **u)
        .map(|((name, c), _)| Entry::new(*name, Swatch::Fill(*c)))
        .collect();
    let area = frame::layout(root, &head, &legend)?;
    let n = data.series.len();
    let panels = area.split_evenly(grid(n));
    let xr = padded(data.x_span());
    let pad = (xr.end - xr.start) * 0.01;
    for (s, panel) in data.series.iter().zip(&panels) {
        let mut b = builder(panel, n > 1);
        if n > 1 {
            b.caption(&s.label, frame::font(style::PANEL_SIZE, s.colour));
        }
        let mut chart = b.build_cartesian_2d(xr.clone(), 0.0..100.0)?;
        if n > 1 {
            mesh!(chart, data.x_desc(), "CPU time (%)", &num, &num, 1, 5);
        } else {
            mesh!(
                chart,
                data.x_desc(),
                "CPU time (% of sending time)",
                &num,
                &num
            );
        }
        let ct = chart.as_coord_spec();
        let mut xs: Vec<f64> = s.points.iter().map(|p| data.x(p)).collect();
        let mut fracs: Vec<[f64; 5]> = s.points.iter().map(|p| parts(p)).collect();
        if xs.len() == 1 {
            // A single point: a narrow band so it still shows.
            xs = vec![xs[0] - pad, xs[0] + pad];
            fracs.push(fracs[0]);
        }
        let mut lower = vec![0.0; xs.len()];
        for (k, (_, c)) in bands.iter().enumerate() {
            if !used[k] {
                continue;
            }
            let upper: Vec<f64> = lower
                .iter()
                .zip(&fracs)
                .map(|(l, f)| (l + 100.0 * f[k]).min(100.0))
                .collect();
            let mut poly: Vec<(i32, i32)> = xs
                .iter()
                .zip(&upper)
                .map(|(x, y)| ct.translate(&(*x, *y)))
                .collect();
            poly.extend(
                xs.iter()
                    .zip(&lower)
                    .rev()
                    .map(|(x, y)| ct.translate(&(*x, *y))),
            );
            root.draw(&Polygon::new(poly, c.filled()))?;
            lower = upper;
        }
        // Boundaries between levels, and the data points along them.
        let mut cum = vec![0.0; xs.len()];
        for k in 0..bands.len() - 1 {
            for (c, f) in cum.iter_mut().zip(&fracs) {
                *c += 100.0 * f[k];
            }
            if !used[k] {
                continue;
            }
            let pts: Vec<(i32, i32)> = xs
                .iter()
                .zip(&cum)
                .map(|(x, y)| ct.translate(&(*x, *y)))
                .collect();
            polyline(root, &pts, WHITE, Dash::Solid, 1)?;
        }
    }
    Ok(())
}

/// The most cores any point of `data` has (0 or 1: a one-core host).
pub fn max_cores(data: &Data) -> usize {
    data.series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.figures.cores.len()))
        .max()
        .unwrap_or(0)
}

/// Top of the cores figure's busy axis [%]: a little above 100 so a saturated core's
/// line shows above the frame.
const CORES_TOP: f64 = 105.0;

fn cores<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let head = header(root, data, "Each core's busy time vs offered load");
    let n_cores = max_cores(data);
    let busy = |s: &Series, c: usize| -> Vec<(f64, f64)> {
        s.points
            .iter()
            .filter_map(|p| {
                let k = p.figures.cores.get(c)?;
                Some((data.x(p), 100.0 * (1.0 - k.idle)))
            })
            .collect()
    };
    // A core drawn over an earlier one it coincides with says so: in the legend when it
    // does in every panel that has it, else in the caption of each panel where it does.
    let tol = COINCIDE_FRACTION * CORES_TOP;
    let hidden = |s: &Series, c: usize| (0..c).find(|&o| coincide(&busy(s, c), &busy(s, o), tol));
    let names: Vec<String> = (0..n_cores).map(|c| format!("core {c}")).collect();
    let mut labels = names.clone();
    let mut in_legend = vec![false; n_cores];
    for c in 0..n_cores {
        let with: Vec<&Series> = data
            .series
            .iter()
            .filter(|s| !busy(s, c).is_empty())
            .collect();
        let first = with.first().and_then(|s| hidden(s, c));
        if let Some(o) = first
            && with.iter().all(|s| hidden(s, c) == Some(o))
        {
            labels[c] = format!("{}\n  (coincides with {})", names[c], names[o]);
            in_legend[c] = true;
        }
    }
    let legend: Vec<Entry> = labels
        .into_iter()
        .enumerate()
        .map(|(c, l)| {
            Entry::new(
                l,
                Swatch::Line(style::series_colour(c), Dash::Solid, Some(Marker::Dot)),
            )
        })
        .collect();
    let area = frame::layout(root, &head, &legend)?;
    let n = data.series.len();
    let panels = area.split_evenly(grid(n));
    let xr = padded(data.x_span());
    for (s, panel) in data.series.iter().zip(&panels) {
        let mut b = builder(panel, n > 1);
        if n > 1 {
            let same: Vec<String> = (0..n_cores)
                .filter(|c| !in_legend[*c])
                .filter_map(|c| Some(format!("core {c} = core {}", hidden(s, c)?)))
                .collect();
            let caption = if same.is_empty() {
                s.label.clone()
            } else {
                format!("{} ({})", s.label, same.join(", "))
            };
            b.caption(caption, frame::font(style::PANEL_SIZE, s.colour));
        }
        let mut chart = b.build_cartesian_2d(xr.clone(), 0.0..CORES_TOP)?;
        if n > 1 {
            mesh!(chart, data.x_desc(), "busy (%)", &num, &num, 1, 5);
        } else {
            mesh!(
                chart,
                data.x_desc(),
                "core busy (% of its time)",
                &num,
                &num
            );
        }
        let ct = chart.as_coord_spec();
        for c in 0..n_cores {
            let pts = busy(s, c);
            line(
                root,
                ct,
                &pts,
                style::series_colour(c),
                Dash::Solid,
                Some(Marker::Dot),
            )?;
        }
    }
    Ok(())
}

fn interrupts<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
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
const NOTE_W: u32 = 290;

/// Why a line of the interrupts figure rises above one interrupt per offered frame, when
/// one does: the interrupts that receive nothing. Those are the handler runs of ports
/// that take interrupts without receiving a frame (the output port's transmit
/// completions), named from the counters (`NIC.interrupts` with no `NIC.rx_frames`),
/// with their rate at the lowest such point; without such a port, the kinds it can be.
fn interrupts_note(data: &Data) -> Option<String> {
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

/// Width of the strip right of the timeline panels that holds the colour bar [px].
const TIMELINE_BAR_STRIP: i32 = 116;
/// Width of a time column of the timeline [px]: a spike one bucket wide stays visible
/// in print.
const TIMELINE_COLUMN_PX: i32 = 2;
/// Width of the column right of each timeline panel that gives the spike spacing [px].
const TIMELINE_SPACING_W: i32 = 64;
/// Rows at least this tall [px] have their spike spacing written beside them (in
/// [`style::NOTE_SIZE`] type, whose digits are 10 px high).
const TIMELINE_SPACING_ROW: f64 = 10.0;

/// Panels of the timeline for `n` variants: (rows, columns). Up to three are stacked,
/// so each keeps the full width for time; more share the grid of the other figures.
fn timeline_grid(n: usize) -> (usize, usize) {
    if n <= 3 { (n.max(1), 1) } else { grid(n) }
}

/// Which of `n` rows `row_px` tall get a tick label `text_px` high: every `step`-th from
/// the bottom, with at least a label's height and a fifth between two labels, and the
/// top row always (in place of the one below it when they would touch).
fn labelled_rows(n: usize, row_px: f64, text_px: f64) -> Vec<usize> {
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
fn runs<T: PartialEq + Copy>(v: &[T]) -> Vec<(usize, usize, T)> {
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
fn timeline_chart<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_break_at_non_positive_values() {
        let r = positive_runs([(0.0, 1.0), (1.0, 2.0), (2.0, 0.0), (3.0, 4.0)].into_iter());
        assert_eq!(r, vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 4.0)]]);
    }

    #[test]
    fn lines_are_clipped_at_the_top() {
        let l = [(0.0, 0.0), (1.0, 10.0), (2.0, 20.0), (3.0, 30.0)];
        assert_eq!(
            clip_above(&l, 15.0),
            vec![(0.0, 0.0), (1.0, 10.0), (1.5, 15.0)]
        );
        assert_eq!(clip_above(&l, 40.0), l.to_vec());
    }

    #[test]
    fn lines_coincide_within_the_tolerance_at_every_point() {
        let a = [(10.0, 0.0), (20.0, 50.0), (30.0, 99.0)];
        // 0.2 apart at one point: coincide at a tolerance of 0.2 (0.2 % of 100), not 0.1.
        let b = [(10.0, 0.0), (20.0, 50.2), (30.0, 99.0)];
        assert!(coincide(&a, &b, 0.2 + 1e-12));
        assert!(!coincide(&a, &b, 0.1));
        // Other x values, or another number of points: different lines.
        assert!(!coincide(
            &a,
            &[(10.0, 0.0), (25.0, 50.0), (30.0, 99.0)],
            1.0
        ));
        assert!(!coincide(&a, &a[..2], 1.0));
        assert!(!coincide(&[], &[], 1.0));
        // The line drawn later names the first earlier one it covers.
        let labels = ["a".to_string(), "b".to_string(), "c".to_string()];
        let lines = vec![a.to_vec(), b.to_vec(), a.to_vec()];
        assert_eq!(
            noting_coincidence(&labels, &lines, 0.1),
            vec!["a", "b", "c\n  (coincides with a)"]
        );
    }

    #[test]
    fn panel_grid() {
        assert_eq!(grid(1), (1, 1));
        assert_eq!(grid(3), (1, 3));
        assert_eq!(grid(4), (2, 2));
        assert_eq!(grid(5), (2, 3));
    }

    #[test]
    fn timeline_panels_keep_the_width_for_time() {
        // Up to three variants one above the other, each as wide as the figure.
        assert_eq!(timeline_grid(1), (1, 1));
        assert_eq!(timeline_grid(3), (3, 1));
        // The xl(4) scenario's four variants: two by two, as the other figures.
        assert_eq!(timeline_grid(4), (2, 2));
    }

    #[test]
    fn timeline_rows_are_labelled_as_space_allows() {
        // xl(4): 15 rates in rows of 11 px, 14 px labels: every other row from the
        // lowest (200 frames/s) to the highest (3,000 frames/s).
        assert_eq!(
            labelled_rows(15, 11.0, 14.0),
            vec![0, 2, 4, 6, 8, 10, 12, 14]
        );
        // Rows tall enough: every one.
        assert_eq!(labelled_rows(2, 200.0, 14.0), vec![0, 1]);
        // The top row is labelled in place of the one below it when they would touch.
        assert_eq!(labelled_rows(6, 11.0, 14.0), vec![0, 2, 5]);
        assert_eq!(labelled_rows(1, 400.0, 14.0), vec![0]);
        assert!(labelled_rows(0, 10.0, 14.0).is_empty());
    }

    #[test]
    fn equal_neighbours_make_one_run() {
        // One rectangle per run keeps the SVG small: a flat row is a single element.
        assert_eq!(
            runs(&[1, 1, 2, 1, 1, 1]),
            vec![(0, 2, 1), (2, 3, 2), (3, 6, 1)]
        );
        assert!(runs::<u8>(&[]).is_empty());
    }
}
