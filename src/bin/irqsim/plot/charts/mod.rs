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

mod cores;
mod cpu;
mod forwarded;
mod interrupts;
mod latency;
mod latency_timeline;
mod loss;
#[cfg(test)]
mod tests;

use cores::*;
use cpu::*;
use forwarded::*;
use interrupts::*;
use latency::*;
use latency_timeline::*;
use loss::*;

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

/// Latency statistics: name, value, dash.
type Stat = (&'static str, fn(&PointResult) -> f64, Dash);
/// Panels for `n` series: (rows, columns).
fn grid(n: usize) -> (usize, usize) {
    let cols = if n <= 3 {
        n.max(1)
    } else {
        (n as f64).sqrt().ceil() as usize
    };
    (n.div_ceil(cols), cols)
}

/// The most cores any point of `data` has (0 or 1: a one-core host).
pub fn max_cores(data: &Data) -> usize {
    data.series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.figures.cores.len()))
        .max()
        .unwrap_or(0)
}
