//! Heat maps of a two-parameter grid: one figure per summary metric (and per scenario
//! variant, when the grid multiplies variants), the first parameter's values across,
//! the second's up, each cell coloured by the metric (viridis, [`colour_scale`]) with
//! its value written in it, and a colour bar.
//!
//! | file | colour |
//! |---|---|
//! | `grid-mlfrr` | MLFRR [frames/s], the MLFRR point's load under it |
//! | `grid-peak` | peak forwarded rate [frames/s], and the load where it occurs |
//! | `grid-top` | forwarded rate at the highest load [frames/s], and its share of the peak |
//! | `grid-p99` | 99th-percentile latency at the grid's `latency_at` point [us] (log scale when the values span a factor of 10 or more) |
//!
//! With scenario variants the files are `grid-<metric>-<variant>`. Cells without a value
//! (no loss-free point, no frame delivered) are grey and say why.

use super::colour_scale::{self, Bar, Scale};
use super::data::fmt_num;
use super::frame::{self, Area, Header, R, anchored, font};
use super::style::{self, WIDTH};
use irqsim::results::{GridCellResult, GridResult, Results, VariantSummary};
use plotters::prelude::*;
use plotters::style::FontTransform;
use plotters::style::text_anchor::{HPos, VPos};

/// A summary metric drawn as a heat map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Maximum loss-free receive rate.
    Mlfrr,
    /// Highest forwarded rate.
    Peak,
    /// Forwarded rate at the highest load.
    Top,
    /// p99 latency at the chosen load.
    P99,
}

impl Metric {
    /// Every metric, in the order the files are written.
    pub const ALL: [Metric; 4] = [Metric::Mlfrr, Metric::Peak, Metric::Top, Metric::P99];

    /// Part of the file name.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Mlfrr => "mlfrr",
            Metric::Peak => "peak",
            Metric::Top => "top",
            Metric::P99 => "p99",
        }
    }

    fn value(self, s: &VariantSummary) -> Option<f64> {
        match self {
            Metric::Mlfrr => s.mlfrr_pps,
            Metric::Peak => Some(s.peak_pps),
            Metric::Top => Some(s.top_forwarded_pps),
            Metric::P99 => s.p99_us,
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Metric::P99 => "us",
            _ => "frames/s",
        }
    }
}

/// One heat map: a metric over the cells of one scenario variant.
pub struct Map<'a> {
    results: &'a Results,
    grid: &'a GridResult,
    /// The scenario variant, when the grid multiplies variants.
    base: Option<&'a str>,
    metric: Metric,
}

impl Map<'_> {
    /// File stem under `plots/`.
    pub fn file_stem(&self) -> String {
        match self.base {
            Some(b) => format!("grid-{}-{b}", self.metric.name()),
            None => format!("grid-{}", self.metric.name()),
        }
    }

    fn cells(&self) -> Vec<&GridCellResult> {
        self.grid
            .cells
            .iter()
            .filter(|c| c.base.as_deref() == self.base)
            .collect()
    }
}

/// The heat maps of `results`: every metric for each scenario variant, when it has a
/// grid of exactly two parameters; none otherwise.
pub fn maps(results: &Results) -> Vec<Map<'_>> {
    let Some(grid) = &results.grid else {
        return Vec::new();
    };
    if grid.parameters.len() != 2 {
        return Vec::new();
    }
    let mut bases: Vec<Option<&str>> = Vec::new();
    for c in &grid.cells {
        if !bases.contains(&c.base.as_deref()) {
            bases.push(c.base.as_deref());
        }
    }
    bases
        .into_iter()
        .flat_map(|base| {
            Metric::ALL.into_iter().map(move |metric| Map {
                results,
                grid,
                base,
                metric,
            })
        })
        .collect()
}

/// A value as written in a cell or on the colour bar.
fn fmt_value(v: f64, metric: Metric) -> String {
    match metric {
        Metric::P99 if v < 100.0 => format!("{v:.1}"),
        _ => fmt_num(v.round()),
    }
}

/// Draw `map` on `root`.
pub fn draw<DB: DrawingBackend>(map: &Map, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let r = map.results;
    let g = map.grid;
    let (px, py) = (&g.parameters[0], &g.parameters[1]);
    let w = WIDTH - 40;
    let size = style::SUBTITLE_SIZE;
    let at = g
        .latency_at_load_pct
        .map_or("a point not run".to_string(), |p| {
            format!("{} %", fmt_num(p))
        });
    let top_load = map.cells().first().map_or(0.0, |c| c.summary.top_load_pct);
    let what = match map.metric {
        Metric::Mlfrr => "MLFRR".to_string(),
        Metric::Peak => "Peak forwarded rate".to_string(),
        Metric::Top => format!("Forwarded rate at {} % load", fmt_num(top_load)),
        Metric::P99 => format!("p99 latency at {at} load"),
    };
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
    lines.push(frame::one_line(root, &meta, size, w));
    let note = match map.metric {
        Metric::Mlfrr => format!(
            "MLFRR: the highest offered rate up to which every point loses < {} % of its frames; its load under it",
            fmt_num(g.loss_free_pct)
        ),
        Metric::Peak => "the highest forwarded rate of each sweep, and the offered load where it occurs".into(),
        Metric::Top => "forwarded rate at the sweep's highest offered load, and its share of the peak (below 100 %: livelock)".into(),
        Metric::P99 => format!("99th-percentile latency of the frames offered at {at} load, last bit in to first bit out"),
    };
    lines.push(frame::one_line(root, &note, size, w));
    let mut title = format!("{what} by {} and {}", px.name, py.name);
    if let Some(b) = map.base {
        title += &format!(" ({b})");
    }
    title += &format!(" — {}", r.scenario);
    let body = frame::layout(root, &Header { title, lines }, &[])?;
    let (bw, bh) = body.dim_in_pixel();
    let (bw, bh) = (bw as i32, bh as i32);

    // Plot box: room on the left for the y labels, below for the x labels, on the right
    // for the colour bar.
    let (left, right, top, bottom) = (120, bw - 170, 30, bh - 74);
    let (nx, ny) = (px.values.len().max(1), py.values.len().max(1));
    let cw = (right - left) as f64 / nx as f64;
    let ch = (bottom - top) as f64 / ny as f64;
    let cells = map.cells();
    let values: Vec<f64> = cells
        .iter()
        .filter_map(|c| map.metric.value(&c.summary))
        .collect();
    let scale = Scale::new(&values, map.metric == Metric::P99);
    let main_size = (ch * 0.22).clamp(13.0, 22.0);
    let sub_size = (main_size * 0.7).max(11.0);
    let fits = |text: &str, s: f64| frame::text_width(&body, text, s) as f64 <= cw - 6.0;
    for c in &cells {
        let Some(ix) = px.values.iter().position(|v| *v == c.values[0]) else {
            continue;
        };
        let Some(iy) = py.values.iter().position(|v| *v == c.values[1]) else {
            continue;
        };
        let x0 = left + (ix as f64 * cw).round() as i32;
        let x1 = left + ((ix + 1) as f64 * cw).round() as i32;
        // The first value of the second parameter at the bottom.
        let y1 = bottom - (iy as f64 * ch).round() as i32;
        let y0 = bottom - ((iy + 1) as f64 * ch).round() as i32;
        let s = &c.summary;
        let v = map.metric.value(s);
        let fill = v.map_or(style::NO_VALUE, |v| scale.colour(v));
        body.draw(&Rectangle::new(
            [(x0 + 1, y0 + 1), (x1 - 1, y1 - 1)],
            fill.filled(),
        ))?;
        let ink = style::text_on(fill);
        let (main, sub) = match (map.metric, v) {
            (Metric::Mlfrr, None) => ("none".to_string(), "first point loses".to_string()),
            (_, None) => ("—".to_string(), "no frame delivered".to_string()),
            (Metric::Mlfrr, Some(v)) => (
                fmt_value(v, map.metric),
                s.mlfrr_load_pct
                    .map_or(String::new(), |p| format!("{} %", fmt_num(p))),
            ),
            (Metric::Peak, Some(v)) => (
                fmt_value(v, map.metric),
                format!("at {} %", fmt_num(s.peak_load_pct)),
            ),
            (Metric::Top, Some(v)) => (
                fmt_value(v, map.metric),
                if s.peak_pps > 0.0 {
                    format!("{:.0} % of peak", 100.0 * v / s.peak_pps)
                } else {
                    String::new()
                },
            ),
            (Metric::P99, Some(v)) => (fmt_value(v, map.metric), String::new()),
        };
        let (cx, cy) = ((x0 + x1) / 2, (y0 + y1) / 2);
        let two = !sub.is_empty() && fits(&sub, sub_size) && ch >= main_size + sub_size + 10.0;
        let my = if two {
            cy - (sub_size * 0.6) as i32
        } else {
            cy
        };
        if fits(&main, main_size) {
            body.draw(&Text::new(
                main,
                (cx, my),
                anchored(main_size, ink, HPos::Center, VPos::Center),
            ))?;
        }
        if two {
            body.draw(&Text::new(
                sub,
                (cx, my + (main_size * 0.6 + sub_size * 0.6) as i32 + 2),
                anchored(sub_size, ink, HPos::Center, VPos::Center),
            ))?;
        }
    }
    // Frame and ticks.
    body.draw(&Rectangle::new(
        [(left, top), (right, bottom)],
        style::TEXT_LIGHT.stroke_width(1),
    ))?;
    for (i, v) in px.values.iter().enumerate() {
        let x = left + ((i as f64 + 0.5) * cw).round() as i32;
        body.draw(&PathElement::new(
            vec![(x, bottom), (x, bottom + 5)],
            style::TEXT_LIGHT.stroke_width(1),
        ))?;
        body.draw(&Text::new(
            fmt_num(*v),
            (x, bottom + 8),
            anchored(style::TICK_SIZE, style::TEXT, HPos::Center, VPos::Top),
        ))?;
    }
    for (i, v) in py.values.iter().enumerate() {
        let y = bottom - ((i as f64 + 0.5) * ch).round() as i32;
        body.draw(&PathElement::new(
            vec![(left - 5, y), (left, y)],
            style::TEXT_LIGHT.stroke_width(1),
        ))?;
        body.draw(&Text::new(
            fmt_num(*v),
            (left - 8, y),
            anchored(style::TICK_SIZE, style::TEXT, HPos::Right, VPos::Center),
        ))?;
    }
    let desc = |p: &irqsim::results::GridParameterResult| {
        if p.name == p.path {
            p.name.clone()
        } else {
            format!("{} ({})", p.name, p.path)
        }
    };
    body.draw(&Text::new(
        desc(px),
        ((left + right) / 2, bottom + 40),
        anchored(style::AXIS_DESC_SIZE, style::TEXT, HPos::Center, VPos::Top),
    ))?;
    body.draw(&Text::new(
        desc(py),
        (28, (top + bottom) / 2),
        font(style::AXIS_DESC_SIZE, style::TEXT)
            .pos(plotters::style::text_anchor::Pos::new(
                HPos::Center,
                VPos::Center,
            ))
            .transform(FontTransform::Rotate270),
    ))?;

    let fmt = |v: f64| fmt_value(v, map.metric);
    colour_scale::draw_bar(
        &body,
        &scale,
        &Bar {
            x: (right + 46, right + 70),
            y: (top, bottom),
            unit: map.metric.unit(),
            fmt: &fmt,
            ticks: !values.is_empty(),
        },
    )
}
