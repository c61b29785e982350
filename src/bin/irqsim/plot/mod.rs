//! Plots of results, as SVG and PNG, under `DIR/plots/`.
//!
//! The plots read [`irqsim::results::Results`] only (and `timeline.csv` when a run wrote
//! one), never the model, so `irqsim plot` redraws them from a saved `results.json` and
//! `irqsim compare` overlays several. Each figure is [`style::WIDTH`] x
//! [`style::HEIGHT`] pixels in both formats, drawn by the same code on plotters' SVG and
//! bitmap backends, with the DejaVu Sans font compiled into the binary ([`font`]):
//!
//! | file | what |
//! |---|---|
//! | `loss` | loss (% of sent) vs offered load |
//! | `forwarded` | forwarded vs offered frames/s, the ideal y = x line, each series' MLFRR |
//! | `latency` | avg, p99 and max latency vs offered load, log axis |
//! | `cpu` | CPU time by level (interrupt, softirq, kernel, user, idle) stacked vs load, one panel per series; for a Linux host's results (points with `mpstat`) as mpstat shows it instead (%irq, %soft, %sys, %usr, %idle) |
//! | `interrupts` | interrupts/s vs offered load, with one interrupt per offered frame for reference |
//! | `timeline` | heat map of the largest latency per time bucket, time across, one row per load point, one panel per variant, with each row's mean spike spacing (only with `timeline.csv`) |
//! | `cores` | each core's busy time vs offered load, a line per core, one panel per series (only for hosts with several cores) |
//! | `grid-<metric>` | heat maps of a two-parameter grid's summaries ([`heatmap`]; `irqsim plot` and `run` only) |
//!
//! One line per series (a variant of a result set) on shared axes; measured tables are
//! drawn over them as black hollow markers. Rendering is deterministic: the same results
//! give byte-identical files.

mod charts;
mod colour_scale;
mod data;
pub mod fit;
mod font;
mod frame;
pub mod heatmap;
pub mod ndr;
pub mod pareto;
mod raster;
mod style;
pub mod timeline;
pub mod trace;

pub use charts::Kind;
pub use data::Source;
pub use style::{HEIGHT, WIDTH};

use anyhow::Context;
use irqsim::results::Results;
use irqsim::results::output::write_atomic;
use plotters::prelude::*;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Directory of the plots under an output directory.
pub const DIR: &str = "plots";

/// Render every figure of `sources` (and the timeline, when given and not empty) into
/// `dir` as `<name>.svg` and `<name>.png`, each written atomically, and the heat maps of
/// a single result set with a two-parameter grid ([`heatmap`]). A timeline figure or
/// heat maps left over from an earlier run are removed when this one has none. Returns
/// the file names written, in order.
pub fn write(
    dir: &Path,
    sources: &[Source],
    timeline: Option<&[timeline::TimelineRow]>,
) -> anyhow::Result<Vec<String>> {
    font::register();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", crate::shown(dir)))?;
    let timeline = timeline.filter(|t| !t.is_empty());
    // What an earlier irqsim wrote here: only those files, unchanged, are removed.
    let own = written_before(dir);
    let data = data::Data::new(sources, timeline);
    let many_cores = charts::max_cores(&data) > 1;
    let kinds: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| *k != Kind::Timeline || timeline.is_some())
        .filter(|k| *k != Kind::Cores || many_cores)
        .collect();
    for (kind, drawn) in [
        (Kind::Timeline, timeline.is_some()),
        (Kind::Cores, many_cores),
    ] {
        if drawn {
            continue;
        }
        for ext in ["svg", "png"] {
            let stale = dir.join(format!("{}.{ext}", kind.name()));
            if is_own(&own, &stale) {
                std::fs::remove_file(&stale)
                    .with_context(|| format!("removing {}", crate::shown(&stale)))?;
            }
        }
    }
    // Heat maps of a grid, for a single result set.
    let maps = match sources {
        [one] => heatmap::maps(one.results),
        _ => Vec::new(),
    };
    let figures: Vec<Figure> = kinds
        .into_iter()
        .map(Figure::Chart)
        .chain(maps.iter().map(Figure::Map))
        .collect();
    let rendered: Vec<anyhow::Result<(String, Vec<u8>)>> = figures
        .par_iter()
        .flat_map_iter(|f| {
            let name = f.name();
            match render(f, &data) {
                Ok((svg, png)) => vec![
                    Ok((format!("{name}.svg"), svg.into_bytes())),
                    Ok((format!("{name}.png"), png)),
                ],
                Err(e) => vec![Err(e.context(format!("drawing {name}")))],
            }
        })
        .collect();
    let mut written = Vec::new();
    let mut record = String::new();
    for r in rendered {
        let (name, bytes) = r?;
        let path = dir.join(&name);
        write_atomic(&path, &bytes).with_context(|| format!("writing {}", crate::shown(&path)))?;
        record.push_str(&format!(
            "{:016x} {name}\n",
            irqsim::sim::rng::fnv1a(&bytes)
        ));
        written.push(name);
    }
    // Heat maps of an earlier run in this directory that this one did not draw.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let figure = name.ends_with(".svg") || name.ends_with(".png");
            if figure
                && name.starts_with("grid-")
                && !written.contains(&name)
                && is_own(&own, &e.path())
            {
                std::fs::remove_file(e.path())
                    .with_context(|| format!("removing {}", crate::shown(&e.path())))?;
            }
        }
    }
    let record_path = dir.join(WRITTEN);
    write_atomic(&record_path, record.as_bytes())
        .with_context(|| format!("writing {}", crate::shown(&record_path)))?;
    Ok(written)
}

/// The record irqsim keeps in a plots directory of the figures it wrote there, a line
/// each: the FNV-1a (64 bits, hex) of the bytes and the name. A figure of an earlier
/// run that this one does not draw is removed only when it is in that record with the
/// same bytes: a file of the user's (or one edited since) stays.
pub const WRITTEN: &str = ".irqsim-written";

/// The figures the record in `dir` lists, by name, with their checksums.
fn written_before(dir: &Path) -> std::collections::BTreeMap<String, String> {
    irqsim::config::read_limit::read_text(&dir.join(WRITTEN), 1 << 20)
        .map(|t| {
            t.lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(sum, name)| (name.to_string(), sum.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `path` is a figure the record lists, unchanged since irqsim wrote it.
fn is_own(own: &std::collections::BTreeMap<String, String>, path: &Path) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return false;
    };
    own.get(&name).is_some_and(|sum| {
        irqsim::config::read_limit::fnv1a_file(path, irqsim::config::read_limit::MAX_RESULT_BYTES)
            .is_ok_and(|h| format!("{h:016x}") == *sum)
    })
}

/// A figure to write: a chart of the series, or a heat map of a grid.
enum Figure<'a> {
    Chart(Kind),
    Map(&'a heatmap::Map<'a>),
}

impl Figure<'_> {
    fn name(&self) -> String {
        match self {
            Figure::Chart(k) => k.name().to_string(),
            Figure::Map(m) => m.file_stem(),
        }
    }

    fn draw<DB: DrawingBackend>(&self, data: &data::Data, root: &frame::Area<DB>) -> frame::R
    where
        DB::ErrorType: 'static,
    {
        match self {
            Figure::Chart(k) => charts::draw(*k, data, root),
            Figure::Map(m) => heatmap::draw(m, root),
        }
    }
}

/// One figure as SVG text and PNG bytes.
fn render(fig: &Figure, data: &data::Data) -> anyhow::Result<(String, Vec<u8>)> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        fig.draw(data, &root)?;
        root.present()?;
    }
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = raster::Canvas::new(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        fig.draw(data, &root)?;
        root.present()?;
    }
    Ok((svg, encode_png(&rgb)?))
}

/// RGB pixels to PNG bytes.
pub(crate) fn encode_png(rgb: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, WIDTH, HEIGHT);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc.write_header()?;
        w.write_image_data(rgb)?;
        w.finish()?;
    }
    Ok(out)
}

/// Labels that tell result sets apart: the scenario name, or, when two sets share it,
/// the scenario name and the directory the results came from (or their position).
pub fn labels(paths: &[PathBuf], results: &[Results]) -> Vec<String> {
    let base: Vec<&str> = results.iter().map(|r| r.scenario.as_str()).collect();
    let dirs: Vec<String> = paths
        .iter()
        .map(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let mut out: Vec<String> = (0..results.len())
        .map(|i| {
            if base.iter().filter(|b| **b == base[i]).count() == 1 {
                base[i].to_string()
            } else if !dirs[i].is_empty() && dirs[i] != base[i] {
                format!("{} ({})", base[i], dirs[i])
            } else {
                format!("{} (#{})", base[i], i + 1)
            }
        })
        .collect();
    // Still the same (e.g. same directory names): number them.
    for i in 0..out.len() {
        if out.iter().filter(|o| **o == out[i]).count() > 1 {
            out[i] = format!("{} (#{})", base[i], i + 1);
        }
    }
    out
}
