//! The figure of an NDR/PDR search (`irqsim ndr`), from its [`NdrReport`] alone:
//!
//! | file | what |
//! |---|---|
//! | `ndr` | per variant, NDR (solid) and PDR (dashed) against the frame size [M frames/s, log axis], with the line rate of the busiest input port (grey) |

use super::charts::{builder, line, mesh, num};
use super::data::{fmt_num, span};
use super::frame::{self, Area, Entry, Header, R, Swatch};
use super::style::{self, Dash, HEIGHT, Marker, WIDTH};
use super::{encode_png, font, raster};
use anyhow::Context;
use irqsim::experiment::ndr::NdrReport;
use irqsim::results::output::write_atomic;
use plotters::prelude::*;
use std::path::Path;

/// Write the search's figure into `dir` as SVG and PNG; returns the file names.
pub fn write(dir: &Path, rep: &NdrReport) -> anyhow::Result<Vec<String>> {
    font::register();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", crate::shown(dir)))?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        chart(rep, &root).context("drawing ndr")?;
        root.present()?;
    }
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = raster::Canvas::new(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        chart(rep, &root).context("drawing ndr")?;
        root.present()?;
    }
    let mut written = Vec::new();
    for (ext, bytes) in [("svg", svg.into_bytes()), ("png", encode_png(&rgb)?)] {
        let f = format!("ndr.{ext}");
        let path = dir.join(&f);
        write_atomic(&path, &bytes).with_context(|| format!("writing {}", crate::shown(&path)))?;
        written.push(f);
    }
    Ok(written)
}

/// The variants in the report's order, each once.
fn variants(rep: &NdrReport) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for r in &rep.results {
        if !v.contains(&r.variant.as_str()) {
            v.push(&r.variant);
        }
    }
    v
}

fn chart<DB: DrawingBackend>(rep: &NdrReport, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let names = variants(rep);
    let colour = |i: usize| style::PALETTE[i % style::PALETTE.len()];
    let mut legend: Vec<Entry> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        legend.push(Entry::new(
            format!("{n}: NDR"),
            Swatch::Line(colour(i), Dash::Solid, Some(Marker::Dot)),
        ));
        legend.push(Entry::new(
            format!("{n}: PDR ({} % loss)", fmt_num(rep.pdr_loss_pct)),
            Swatch::Line(colour(i), Dash::Dashed, Some(Marker::Dot)),
        ));
    }
    legend.push(Entry::new(
        "line rate (busiest input port)",
        Swatch::Line(style::REFERENCE, Dash::Dotted, None),
    ));
    let head = Header {
        title: format!("NDR and PDR against frame size — {}", rep.scenario),
        lines: vec![format!(
            "MLRsearch-style: trials of {} s, final width {} % · seed {}",
            rep.phase_durations_s
                .iter()
                .map(|d| fmt_num(*d))
                .collect::<Vec<_>>()
                .join(", "),
            fmt_num(rep.resolution_pct),
            rep.seed
        )],
    };
    let area = frame::layout(root, &head, &legend)?;
    let mpps = |v: f64| v / 1e6;
    let (xlo, xhi) = span(rep.results.iter().map(|r| r.frame_bytes as f64));
    let ys = rep
        .results
        .iter()
        .flat_map(|r| [r.ndr_pps, r.pdr_pps, r.max_pps])
        .filter(|v| *v > 0.0)
        .map(mpps);
    let (ylo, yhi) = span(ys);
    let (ylo, yhi) = (ylo.max(1e-6) / 1.5, yhi * 1.5);
    let x = (xlo * 0.9).max(1.0)..(xhi * 1.1).max(xlo + 1.0);
    let mut chart =
        builder(&area, false).build_cartesian_2d(x.log_scale(), (ylo..yhi).log_scale())?;
    mesh!(
        chart,
        "frame size (bytes, FCS included; log)",
        "rate (M frames/s; log)",
        &num,
        &num
    );
    let ct = chart.as_coord_spec();
    for (i, n) in names.iter().enumerate() {
        let rows: Vec<_> = rep.results.iter().filter(|r| r.variant == *n).collect();
        let pts = |f: &dyn Fn(&irqsim::experiment::ndr::NdrResult) -> f64| -> Vec<(f64, f64)> {
            rows.iter()
                .filter(|r| f(r) > 0.0)
                .map(|r| (r.frame_bytes as f64, mpps(f(r))))
                .collect()
        };
        line(
            root,
            ct,
            &pts(&|r| r.ndr_pps),
            colour(i),
            Dash::Solid,
            Some(Marker::Dot),
        )?;
        line(
            root,
            ct,
            &pts(&|r| r.pdr_pps),
            colour(i),
            Dash::Dashed,
            Some(Marker::Dot),
        )?;
        if i == 0 {
            line(
                root,
                ct,
                &pts(&|r| r.max_pps),
                style::REFERENCE,
                Dash::Dotted,
                None,
            )?;
        }
    }
    Ok(())
}
