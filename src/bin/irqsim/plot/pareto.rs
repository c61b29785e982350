//! The figure of a tuning search (`irqsim tune`), from its [`TuneReport`] alone:
//!
//! | file | what |
//! |---|---|
//! | `pareto` | every setting run (grey: infeasible; blue: feasible) with the goal's figure against its main constraint's, the Pareto front joined (solid), the host as given (black triangle) and the best (red circle) |

use super::charts::{builder, line, mesh, num};
use super::data::span;
use super::frame::{self, Area, Entry, Header, R, Swatch, draw_marker};
use super::style::{self, Dash, HEIGHT, Marker, WIDTH};
use super::{encode_png, font, raster};
use anyhow::Context;
use irqsim::experiment::tune::Goal;
use irqsim::experiment::tune::evaluate::Figures;
use irqsim::experiment::tune::report::TuneReport;
use irqsim::results::output::write_atomic;
use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use std::path::Path;

/// Write the search's figure into `dir` as SVG and PNG; returns the file names.
pub fn write(dir: &Path, rep: &TuneReport) -> anyhow::Result<Vec<String>> {
    font::register();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", crate::shown(dir)))?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        chart(rep, &root).context("drawing pareto")?;
        root.present()?;
    }
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = raster::Canvas::new(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        chart(rep, &root).context("drawing pareto")?;
        root.present()?;
    }
    let mut written = Vec::new();
    for (ext, bytes) in [("svg", svg.into_bytes()), ("png", encode_png(&rgb)?)] {
        let f = format!("pareto.{ext}");
        let path = dir.join(&f);
        write_atomic(&path, &bytes).with_context(|| format!("writing {}", crate::shown(&path)))?;
        written.push(f);
    }
    Ok(written)
}

/// (x, y) of a setting as drawn: the front's axes, the NDR in M frames/s.
fn xy(goal: Goal, f: &Figures) -> Option<(f64, f64)> {
    let p = match goal {
        Goal::MinimizeCpu => (f.p99_us?, f.cpu_cores),
        Goal::MinimizeP99 => (f.cpu_cores, f.p99_us?),
        Goal::MaximizeNdr => (f64::from(f.cores_used), f.ndr_pps? / 1e6),
    };
    (p.0.is_finite() && p.1.is_finite()).then_some(p)
}

fn chart<DB: DrawingBackend>(rep: &TuneReport, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let (xd, yd) = match rep.goal {
        Goal::MinimizeCpu => ("p99 latency (us)", "CPU time (cores busy)"),
        Goal::MinimizeP99 => ("CPU time (cores busy)", "p99 latency (us)"),
        Goal::MaximizeNdr => ("cores doing any work", "NDR (M frames/s)"),
    };
    let feasible = style::PALETTE[0];
    let front = style::PALETTE[1];
    let legend = vec![
        Entry::new("feasible setting", Swatch::Points(feasible, Marker::Dot)),
        Entry::new(
            "infeasible setting",
            Swatch::Points(style::REFERENCE, Marker::Dot),
        ),
        Entry::new(
            "Pareto front",
            Swatch::Line(front, Dash::Solid, Some(Marker::Circle)),
        ),
        Entry::new(
            "host as given",
            Swatch::Points(style::MEASURED, Marker::Triangle),
        ),
        Entry::new("best", Swatch::Points(front, Marker::Square)),
    ];
    let head = Header {
        title: format!("Tuning {} — {}", rep.scenario, rep.variant),
        lines: vec![format!(
            "{} settings run of {} points ({}), seed {}",
            rep.candidates.len(),
            rep.space_points,
            rep.knobs
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            rep.seed
        )],
    };
    let area = frame::layout(root, &head, &legend)?;
    let all: Vec<(f64, f64)> = rep
        .candidates
        .iter()
        .chain(std::iter::once(&rep.host))
        .filter_map(|c| c.figures.as_ref().and_then(|f| xy(rep.goal, f)))
        .collect();
    let (xlo, xhi) = span(all.iter().map(|p| p.0));
    let (ylo, yhi) = span(all.iter().map(|p| p.1));
    let pad = |lo: f64, hi: f64| {
        let w = (hi - lo).max(hi.abs() * 0.05).max(1e-9);
        ((lo - w * 0.05).max(0.0), hi + w * 0.05)
    };
    let (xlo, xhi) = pad(xlo, xhi);
    let (ylo, yhi) = pad(ylo, yhi);
    let mut chart = builder(&area, false).build_cartesian_2d(xlo..xhi, ylo..yhi)?;
    mesh!(chart, xd, yd, &num, &num);
    let ct = chart.as_coord_spec();
    for c in &rep.candidates {
        if let Some(p) = c.figures.as_ref().and_then(|f| xy(rep.goal, f)) {
            let colour = if c.feasible {
                feasible
            } else {
                style::REFERENCE
            };
            draw_marker(root, ct.translate(&p), Marker::Dot, colour)?;
        }
    }
    let fp: Vec<(f64, f64)> = rep
        .pareto
        .candidates
        .iter()
        .filter_map(|&i| {
            rep.candidates[i]
                .figures
                .as_ref()
                .and_then(|f| xy(rep.goal, f))
        })
        .collect();
    line(root, ct, &fp, front, Dash::Solid, Some(Marker::Circle))?;
    if let Some(p) = rep.host.figures.as_ref().and_then(|f| xy(rep.goal, f)) {
        draw_marker(root, ct.translate(&p), Marker::Triangle, style::MEASURED)?;
    }
    if let Some(p) = rep
        .best
        .and_then(|b| rep.candidates[b].figures.as_ref())
        .and_then(|f| xy(rep.goal, f))
    {
        draw_marker(root, ct.translate(&p), Marker::Square, front)?;
    }
    Ok(())
}
