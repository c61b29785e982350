//! Figures of a fit (`irqsim fit`), from its [`FitReport`] alone:
//!
//! | file | what |
//! |---|---|
//! | `fit-residuals` | loss residual (percentage points) and latency residual (100 ln ratio, %) per load point, at the start and at the fitted values |
//! | `fit-profile-<i>` | the objective's profile along parameter i over its bounds (the others re-optimised at each point), log axis, with the start (its own objective, inside the plot area), the fitted value and its 95 % profile and linearised intervals |

use super::charts::{builder, line, mesh, num};
use super::data::{fmt_num, padded, span};
use super::frame::{self, Area, Entry, Header, R, Swatch, draw_marker};
use super::style::{self, Dash, HEIGHT, Marker, WIDTH};
use super::{encode_png, font, raster};
use anyhow::Context;
use irqsim::experiment::fit::FitReport;
use irqsim::results::output::write_atomic;
use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use std::path::Path;

const START: RGBColor = style::REFERENCE;
const FITTED: RGBColor = style::PALETTE[0];

/// Write the fit's figures into `dir` as SVG and PNG; returns the file names.
pub fn write(dir: &Path, rep: &FitReport) -> anyhow::Result<Vec<String>> {
    font::register();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", crate::shown(dir)))?;
    let mut written = Vec::new();
    let mut figs: Vec<(String, Option<usize>)> = vec![("fit-residuals".into(), None)];
    figs.extend((0..rep.params.len()).map(|i| (format!("fit-profile-{}", i + 1), Some(i))));
    for (name, which) in figs {
        let draw = |root: &Area<SVGBackend>| match which {
            None => residuals(rep, root),
            Some(i) => profile(rep, i, root),
        };
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
            draw(&root).with_context(|| format!("drawing {name}"))?;
            root.present()?;
        }
        let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
        {
            let root = raster::Canvas::new(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
            match which {
                None => residuals(rep, &root),
                Some(i) => profile(rep, i, &root),
            }
            .with_context(|| format!("drawing {name}"))?;
            root.present()?;
        }
        for (ext, bytes) in [("svg", svg.into_bytes()), ("png", encode_png(&rgb)?)] {
            let f = format!("{name}.{ext}");
            let path = dir.join(&f);
            write_atomic(&path, &bytes)
                .with_context(|| format!("writing {}", crate::shown(&path)))?;
            written.push(f);
        }
    }
    Ok(written)
}

fn head(rep: &FitReport, what: &str) -> Header {
    let params: Vec<String> = rep
        .params
        .iter()
        .map(|p| format!("{} {} -> {}", p.path, fmt_num(p.start), fmt_num(p.value)))
        .collect();
    Header {
        title: format!("{what} — fit of {}", rep.scenario),
        lines: vec![
            format!(
                "measured: {} · {} s per point · seed {} · objective {} -> {} in {} simulations",
                rep.measured,
                fmt_num(rep.duration_s),
                rep.seed,
                fmt_num(rep.start_objective),
                fmt_num(rep.objective),
                rep.simulations
            ),
            params.join(" · "),
        ],
    }
}

fn residuals<DB: DrawingBackend>(rep: &FitReport, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let legend = vec![
        Entry::new(
            "at the start",
            Swatch::Line(START, Dash::Dashed, Some(Marker::Dot)),
        ),
        Entry::new(
            "fitted",
            Swatch::Line(FITTED, Dash::Solid, Some(Marker::Dot)),
        ),
    ];
    let area = frame::layout(root, &head(rep, "Residuals"), &legend)?;
    let panels = area.split_evenly((2, 1));
    let x = padded(span(rep.points.iter().map(|p| p.load_pct)));
    type Get = fn(&irqsim::experiment::fit::PointFit) -> Option<f64>;
    let rows: [(&str, Get); 2] = [
        ("loss: simulated - measured (points)", |p| {
            Some(p.loss_residual)
        }),
        ("latency: 100 ln(sim/measured) (%)", |p| p.latency_residual),
    ];
    for (panel, (desc, get)) in panels.iter().zip(rows) {
        let all = rep
            .points
            .iter()
            .chain(&rep.start_points)
            .filter_map(get)
            .chain([0.0]);
        let (lo, hi) = span(all);
        let mut chart = builder(panel, true).build_cartesian_2d(x.clone(), padded((lo, hi)))?;
        mesh!(chart, "offered load (% of line rate)", desc, &num, &num);
        let ct = chart.as_coord_spec();
        let zero = [(x.start, 0.0), (x.end, 0.0)];
        line(root, ct, &zero, style::TEXT_LIGHT, Dash::Solid, None)?;
        for (pts, colour, dash) in [
            (&rep.start_points, START, Dash::Dashed),
            (&rep.points, FITTED, Dash::Solid),
        ] {
            let xy: Vec<(f64, f64)> = pts
                .iter()
                .filter_map(|p| get(p).map(|r| (p.load_pct, r)))
                .collect();
            line(root, ct, &xy, colour, dash, Some(Marker::Dot))?;
        }
    }
    Ok(())
}

fn profile<DB: DrawingBackend>(rep: &FitReport, i: usize, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let p = &rep.params[i];
    let mut legend = vec![
        Entry::new(
            "objective's profile (others\nre-optimised)",
            Swatch::Line(FITTED, Dash::Solid, Some(Marker::Dot)),
        ),
        Entry::new("start", Swatch::Points(START, Marker::Square)),
        Entry::new("fitted", Swatch::Points(style::PALETTE[3], Marker::Circle)),
    ];
    if p.profile_ci95.is_some() {
        legend.push(Entry::new(
            if p.resolution_limited.is_some() {
                "95 % profile interval\n(resolution-limited)"
            } else {
                "95 % profile interval"
            },
            Swatch::Line(style::PALETTE[2], Dash::Dashed, None),
        ));
    }
    if p.ci95.is_some() {
        legend.push(Entry::new(
            "95 % interval\n(linearised)",
            Swatch::Line(style::PALETTE[3], Dash::Dotted, None),
        ));
    }
    if !p.identifiable {
        legend.push(Entry::new("not identifiable", Swatch::Heading));
    }
    let area = frame::layout(
        root,
        &head(rep, &format!("Objective profile along {}", p.path)),
        &legend,
    )?;
    // Log axis: the objective spans orders of magnitude; a perfect fit's 0 sits on the
    // floor.
    let floor = rep.objective.max(1e-3) / 10.0;
    // The start's and the fit's objectives are in the range, so their markers sit
    // inside the plot area (the start's is usually far above the profile).
    let ys = p.profile.iter().map(|s| s[1].max(floor));
    let marks = [rep.start_objective.max(floor), rep.objective.max(floor)];
    let (lo, hi) = span(ys.chain([floor]).chain(marks));
    let mut chart = builder(&area, false)
        .build_cartesian_2d(padded((p.lo, p.hi)), (lo * 0.8..hi * 1.25).log_scale())?;
    mesh!(
        chart,
        p.path.as_str(),
        "objective (weighted sum of squares)",
        &num,
        &num
    );
    let ct = chart.as_coord_spec();
    let xy: Vec<(f64, f64)> = p.profile.iter().map(|s| (s[0], s[1].max(floor))).collect();
    line(root, ct, &xy, FITTED, Dash::Solid, Some(Marker::Dot))?;
    for (ci, colour, dash) in [
        (p.profile_ci95, style::PALETTE[2], Dash::Dashed),
        (p.ci95, style::PALETTE[3], Dash::Dotted),
    ] {
        for v in ci.into_iter().flatten() {
            if (p.lo..=p.hi).contains(&v) {
                let l = [(v, lo * 0.8), (v, hi * 1.25)];
                line(root, ct, &l, colour, dash, None)?;
            }
        }
    }
    // The start is where every parameter started, not a point of this profile: its
    // marker sits at the start's own objective.
    let y_start = rep.start_objective.max(floor);
    draw_marker(
        root,
        ct.translate(&(p.start, y_start)),
        Marker::Square,
        START,
    )?;
    draw_marker(
        root,
        ct.translate(&(p.value, rep.objective.max(floor))),
        Marker::Circle,
        style::PALETTE[3],
    )?;
    Ok(())
}
