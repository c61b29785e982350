//! `plots/trace.{png,svg}`: the slices of a `trace.json` drawn as Perfetto shows them,
//! for papers and for readers without a browser: one row per CPU level that ran
//! something (a bar per slice, coloured by task), then the queues' occupancy (RX rings,
//! ipintrq, if_snd) as step lines; the drops are a row of bars under the CPU rows,
//! frames lost per bin of the window. Each interrupt
//! line (one per NIC, or one shared by several) has a colour of its own; the legend,
//! right of the data, names every task and queue in full.

use super::data::fmt_num;
use super::frame::{self, Area, Entry, Header, R, Swatch};
use super::style::{self, Dash, HEIGHT, WIDTH};
use super::{encode_png, font, raster};
use anyhow::Context;
use irqsim::results::output::write_atomic;
use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// What the figure needs from a trace.
#[derive(Debug, Default)]
pub struct Trace {
    /// Window [us].
    pub from: f64,
    /// Window end [us].
    pub to: f64,
    /// Track names by thread id.
    pub tracks: BTreeMap<u64, String>,
    /// CPU slices: track, task name, start, end [us].
    pub slices: Vec<(u64, String, f64, f64)>,
    /// Counter samples by name: time [us], value.
    pub counters: BTreeMap<String, Vec<(f64, f64)>>,
    /// Drops: time [us], frames.
    pub drops: Vec<(f64, f64)>,
}

/// Whether a slice is on a CPU level's track (or, in an older file, in category `cpu`).
fn cpu_track(e: &Value) -> bool {
    e["cat"] == "cpu"
        || e["tid"]
            .as_u64()
            .is_some_and(irqsim::trace::chrome::is_cpu_tid)
}

/// Read what the figure needs from the bytes of a trace.json.
pub fn parse(json: &[u8]) -> anyhow::Result<Trace> {
    let v: Value = serde_json::from_slice(json).context("reading trace.json")?;
    let num = |e: &Value, k: &str| e[k].as_f64().unwrap_or(0.0);
    let mut t = Trace {
        from: num(&v["otherData"], "window_from_us"),
        to: num(&v["otherData"], "window_to_us"),
        ..Trace::default()
    };
    for e in v["traceEvents"].as_array().into_iter().flatten() {
        let tid = e["tid"].as_u64().unwrap_or(0);
        let name = e["name"].as_str().unwrap_or("").to_string();
        match (e["ph"].as_str(), e["cat"].as_str()) {
            (Some("M"), _) if name == "thread_name" => {
                let n = e["args"]["name"].as_str().unwrap_or("").to_string();
                t.tracks.insert(tid, n);
            }
            // CPU slices: category `host` on a CPU level's track (wire slices share the
            // category), or `cpu` in files written before slices and arrows shared one.
            (Some("X"), Some("cpu")) | (Some("X"), Some("host")) if cpu_track(e) => {
                let ts = num(e, "ts");
                t.slices.push((tid, name, ts, ts + num(e, "dur")));
            }
            (Some("C"), _) => t
                .counters
                .entry(name)
                .or_default()
                .push((num(e, "ts"), num(&e["args"], "frames"))),
            (Some("i"), Some("drop")) => t.drops.push((num(e, "ts"), num(&e["args"], "frames"))),
            _ => {}
        }
    }
    Ok(t)
}

/// Draw `trace.json`'s bytes into `dir` as trace.svg and trace.png; returns the names.
pub fn write(dir: &Path, json: &[u8], title: &str) -> anyhow::Result<Vec<String>> {
    font::register();
    let t = parse(json)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", crate::shown(dir)))?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&t, title, &root).context("drawing trace")?;
        root.present()?;
    }
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = raster::Canvas::new(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&t, title, &root).context("drawing trace")?;
        root.present()?;
    }
    let mut written = Vec::new();
    for (ext, bytes) in [("svg", svg.into_bytes()), ("png", encode_png(&rgb)?)] {
        let f = format!("trace.{ext}");
        let path = dir.join(&f);
        write_atomic(&path, &bytes).with_context(|| format!("writing {}", crate::shown(&path)))?;
        written.push(f);
    }
    Ok(written)
}

/// Colours of the interrupt lines, one per line (or NIC) in the order of their names: the
/// CPU figure's interrupt red first, then colours no other kind of task uses.
const INTERRUPT_COLOURS: [RGBColor; 6] = [
    RGBColor(0xd6, 0x27, 0x28), // red (style::CPU_LEVELS' interrupt)
    RGBColor(0x1f, 0x77, 0xb4), // blue
    RGBColor(0xe3, 0x77, 0xc2), // pink
    RGBColor(0x17, 0xbe, 0xcf), // cyan
    RGBColor(0x8c, 0x56, 0x4b), // brown
    RGBColor(0xbc, 0xbd, 0x22), // olive
];

/// Colours of tasks of no known kind, in order of first appearance.
const OTHER_COLOURS: [RGBColor; 3] = [
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0x39, 0x3b, 0x79),
    RGBColor(0x63, 0x79, 0x39),
];

/// Drop bars: the text colour, unlike any task's or queue's.
const DROP: RGBColor = style::TEXT;

/// What kind of CPU work a task is, in the order the legend lists them: interrupts, the
/// netisr or NET_RX softirq, kernel threads, user-level work, others.
fn task_kind(name: &str) -> usize {
    if name.starts_with("interrupt") {
        0
    } else if name == "netisr" || name == "NET_RX softirq" {
        1
    } else if name.contains("polling thread") || name.contains("taskqueue") || name == "busy poll" {
        2
    } else if name == "user process" || name == "sender" || name.starts_with("ksoftirqd") {
        3
    } else {
        4
    }
}

/// The colour of each task of `names` (distinct, in the legend's order): every interrupt
/// line its own ([`INTERRUPT_COLOURS`]), the netisr, kernel threads and user work the CPU
/// figure's colour of their level, others from [`OTHER_COLOURS`].
fn task_colours(names: &[String]) -> Vec<RGBColor> {
    let level = |k: &str| {
        style::CPU_LEVELS
            .iter()
            .find(|(n, _)| *n == k)
            .map_or(style::TEXT, |c| c.1)
    };
    let (mut irq, mut other) = (0, 0);
    names
        .iter()
        .map(|n| match task_kind(n) {
            0 => {
                irq += 1;
                INTERRUPT_COLOURS[(irq - 1) % INTERRUPT_COLOURS.len()]
            }
            1 => level("softirq (netisr)"),
            2 => level("kernel thread"),
            3 => level("user"),
            _ => {
                other += 1;
                OTHER_COLOURS[(other - 1) % OTHER_COLOURS.len()]
            }
        })
        .collect()
}

/// Widest legend label [px]: the legend column's widest ([`frame::layout`] keeps it
/// within 330 px) less its margins and the sample before the label.
const LEGEND_TEXT_W: u32 = 330 - 40 - 42;

/// A legend label wrapped to the legend column (whole, on up to three lines).
fn legend_label<DB: DrawingBackend>(root: &Area<DB>, text: &str) -> String {
    frame::wrap(root, text, style::LEGEND_SIZE, LEGEND_TEXT_W, 3).join("\n")
}

/// Tick labels of a count: whole numbers only (a step below one frame gets none).
fn count_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        fmt_num(v.round())
    } else {
        String::new()
    }
}

fn draw<DB: DrawingBackend>(t: &Trace, title: &str, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    // The tasks, grouped by kind, by name within a kind.
    let mut tasks: Vec<String> = t.slices.iter().map(|s| s.1.clone()).collect();
    tasks.sort_by(|a, b| (task_kind(a), a).cmp(&(task_kind(b), b)));
    tasks.dedup();
    let colours = task_colours(&tasks);
    let colour_of = |task: &str| {
        tasks
            .iter()
            .position(|n| n == task)
            .map_or(style::TEXT, |i| colours[i])
    };
    // Queues: the counters that ever hold something.
    let series: Vec<(&String, &Vec<(f64, f64)>)> = t
        .counters
        .iter()
        .filter(|(n, v)| !n.ends_with("tx ring") && v.iter().any(|p| p.1 > 0.0))
        .collect();

    // The legends, right of the data: the tasks, then the queues and drops.
    let mut legend = vec![Entry::new("CPU slices", Swatch::Heading)];
    for (name, c) in tasks.iter().zip(&colours) {
        legend.push(Entry::new(legend_label(root, name), Swatch::Fill(*c)));
    }
    legend.push(Entry::new("frames queued", Swatch::Heading));
    for (i, (name, _)) in series.iter().enumerate() {
        legend.push(Entry::new(
            legend_label(root, name),
            Swatch::Line(style::series_colour(i), Dash::Solid, None),
        ));
    }
    // Drops: frames lost per bin of the window, as bars in a row of their own under the
    // CPU rows (one mark per drop would merge into a solid bar over a long window).
    let drops = DropBins::new(t);
    if let Some(d) = &drops {
        legend.push(Entry::new(
            legend_label(
                root,
                &format!(
                    "drops: frames lost per {} µs (a full row: {})",
                    fmt_num(d.width_us),
                    fmt_num(d.max())
                ),
            ),
            Swatch::Fill(DROP),
        ));
    }
    let head = Header {
        title: title.to_string(),
        lines: vec![format!(
            "CPU slices and queues, {} to {} ms of simulated time (trace.json; open it in ui.perfetto.dev)",
            fmt3(t.from / 1e3),
            fmt3(t.to / 1e3)
        )],
    };
    let body = frame::layout(root, &head, &legend)?;

    // The CPU levels that ran something, in track order.
    let mut rows: Vec<u64> = t.slices.iter().map(|s| s.0).collect();
    rows.sort();
    rows.dedup();
    let (cpu, queues) = body.split_vertically((body.dim_in_pixel().1 as f64 * 0.45) as u32);
    let x0 = 0.0;
    let x1 = (t.to - t.from).max(1e-6);
    // The drops' row, at the bottom, when there are drops.
    let drop_row = usize::from(drops.is_some());
    let nrows = (rows.len() + drop_row).max(1) as f64;
    // Left of the data, as wide as the longest track name: the CPU rows' names, and the
    // queues' tick labels and axis description under them, so both share one time axis.
    let label_w = rows
        .iter()
        .filter_map(|tid| t.tracks.get(tid))
        .map(String::as_str)
        .chain(drops.as_ref().map(|_| DROP_ROW))
        .map(|n| frame::text_width(root, n, style::TICK_SIZE) + 24)
        .max()
        .unwrap_or(0)
        .max(MIN_LABEL_W);
    let mut chart = ChartBuilder::on(&cpu)
        .margin_left(10)
        .margin_right(20)
        .x_label_area_size(0)
        .y_label_area_size(label_w)
        .build_cartesian_2d(x0..x1, 0.0..nrows)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(0)
        .axis_style(style::TEXT_LIGHT.stroke_width(1))
        .draw()?;
    for (k, tid) in rows.iter().enumerate() {
        let y = nrows - k as f64 - 1.0;
        let name = t.tracks.get(tid).cloned().unwrap_or_default();
        // (backend_coord is in the whole figure's pixels; the text goes in `cpu`'s.)
        let (_, py) = chart.backend_coord(&(x0, y + 0.5));
        cpu.draw(&Text::new(
            name,
            (12, py - cpu.get_base_pixel().1),
            frame::anchored(style::TICK_SIZE, style::TEXT, HPos::Left, VPos::Center),
        ))?;
        for (_, task, a, b) in t.slices.iter().filter(|s| s.0 == *tid) {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(a - t.from, y + 0.15), (b - t.from, y + 0.85)],
                colour_of(task).filled(),
            )))?;
        }
    }
    if let Some(d) = &drops {
        let (_, py) = chart.backend_coord(&(x0, 0.5));
        cpu.draw(&Text::new(
            DROP_ROW,
            (12, py - cpu.get_base_pixel().1),
            frame::anchored(style::TICK_SIZE, style::TEXT, HPos::Left, VPos::Center),
        ))?;
        let max = d.max();
        for (i, n) in d.frames.iter().enumerate().filter(|(_, n)| **n > 0.0) {
            let a = i as f64 * d.width_us;
            let b = (a + d.width_us).min(x1);
            // At least a tenth of the row, so a single frame shows.
            let h = 0.85 * (n / max).max(0.12);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(a, 0.1), (b, 0.1 + h)],
                DROP.filled(),
            )))?;
        }
    }
    // Frames are counted from 0: the axis starts there and ticks are whole frames.
    let top = series
        .iter()
        .flat_map(|(_, v)| v.iter().map(|p| p.1))
        .fold(1.0f64, f64::max);
    let ymax = (top * 1.1).ceil().max(2.0);
    let mut q = ChartBuilder::on(&queues)
        .margin_left(10)
        .margin_right(20)
        .margin_top(10)
        .x_label_area_size(58)
        .y_label_area_size(label_w)
        .build_cartesian_2d(x0..x1, 0.0..ymax)?;
    q.configure_mesh()
        .light_line_style(style::GRID_LIGHT)
        .bold_line_style(style::GRID_BOLD)
        .axis_style(style::TEXT_LIGHT.stroke_width(1))
        .x_desc(format!("time since {} s (µs)", fmt_s(t.from / 1e6)))
        .y_desc("frames queued")
        .axis_desc_style(frame::font(style::AXIS_DESC_SIZE, style::TEXT))
        .label_style(frame::font(style::TICK_SIZE, style::TEXT))
        .x_label_formatter(&|v| fmt_num(*v))
        .x_labels(6)
        .y_label_formatter(&count_label)
        .y_labels((ymax as usize + 1).min(8))
        .x_max_light_lines(1)
        .y_max_light_lines(1)
        .draw()?;
    let ct = q.as_coord_spec();
    for (i, (_, pts)) in series.iter().enumerate() {
        let mut steps = Vec::with_capacity(pts.len() * 2 + 1);
        let mut last = None;
        for &(ts, v) in pts.iter() {
            if let Some(l) = last {
                steps.push((ts - t.from, l));
            }
            steps.push((ts - t.from, v));
            last = Some(v);
        }
        if let Some(l) = last {
            steps.push((x1, l));
        }
        let px: Vec<(i32, i32)> = steps.iter().map(|p| ct.translate(p)).collect();
        frame::polyline(
            root,
            &px,
            style::series_colour(i),
            Dash::Solid,
            style::LINE_WIDTH,
        )?;
    }
    Ok(())
}

/// Name of the drops' row.
const DROP_ROW: &str = "drops";

/// Bins across the window for the drops' row: at most about this many.
const DROP_BINS: f64 = 100.0;

/// Frames dropped per bin of the window.
#[derive(Debug, PartialEq)]
struct DropBins {
    /// Bin width [us]: a 1-2-5 step, the smallest that cuts the window into at most
    /// [`DROP_BINS`] bins.
    width_us: f64,
    /// Frames dropped in each bin, from the window's start.
    frames: Vec<f64>,
}

impl DropBins {
    /// The bins of `t`'s drops; None without drops.
    fn new(t: &Trace) -> Option<DropBins> {
        if t.drops.is_empty() {
            return None;
        }
        let window = (t.to - t.from).max(1e-6);
        let want = window / DROP_BINS;
        let mut width_us = 10f64.powf(want.log10().floor());
        for m in [1.0, 2.0, 5.0, 10.0] {
            if m * width_us >= want * (1.0 - 1e-9) {
                width_us *= m;
                break;
            }
        }
        let n = ((window / width_us) - 1e-9).ceil().max(1.0) as usize;
        let mut frames = vec![0.0; n];
        for (ts, f) in &t.drops {
            let i = (((ts - t.from) / width_us).floor().max(0.0) as usize).min(n - 1);
            // A drop event without a count is one frame.
            frames[i] += if *f > 0.0 { *f } else { 1.0 };
        }
        Some(DropBins { width_us, frames })
    }

    /// The most frames of a bin.
    fn max(&self) -> f64 {
        self.frames.iter().copied().fold(1.0, f64::max)
    }
}

/// Narrowest room left of the data [px]: the queues' tick labels and axis description.
const MIN_LABEL_W: u32 = 80;

/// Milliseconds with three decimals (microseconds): `20.000`.
fn fmt3(v: f64) -> String {
    format!("{v:.3}")
}

/// Seconds with six decimals (microseconds): `0.020000`.
fn fmt_s(v: f64) -> String {
    format!("{v:.6}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_read_back() {
        let json = br#"{"otherData":{"window_from_us":10.0,"window_to_us":20.0},"traceEvents":[
            {"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"cpu0 hardirq"}},
            {"ph":"X","cat":"host","name":"interrupt irq11: dc0","pid":1,"tid":2,"ts":11.5,"dur":2.0,"args":{}},
            {"ph":"X","cat":"host","name":"flow 0","pid":1,"tid":101,"ts":11.0,"dur":0.5,"args":{}},
            {"ph":"C","name":"dc0 rx ring","pid":1,"ts":12.0,"args":{"frames":3}},
            {"ph":"i","s":"t","cat":"drop","name":"drop: rx_ring","pid":1,"tid":100,"ts":13.0,"args":{"frames":2}}]}"#;
        let t = parse(json).unwrap();
        assert_eq!((t.from, t.to), (10.0, 20.0));
        assert_eq!(t.tracks[&2], "cpu0 hardirq");
        assert_eq!(
            t.slices,
            vec![(2, "interrupt irq11: dc0".to_string(), 11.5, 13.5)]
        );
        assert_eq!(t.counters["dc0 rx ring"], vec![(12.0, 3.0)]);
        assert_eq!(t.drops, vec![(13.0, 2.0)]);
    }

    #[test]
    fn each_interrupt_line_has_a_colour_of_its_own() {
        let names: Vec<String> = [
            "interrupt dc0.irq: dc0",
            "interrupt dc1.irq: dc1",
            "netisr",
            "polling thread",
            "something else",
        ]
        .map(String::from)
        .to_vec();
        let c = task_colours(&names);
        assert_eq!(
            c[0],
            style::CPU_LEVELS[0].1,
            "the first line: interrupt red"
        );
        assert_ne!(c[0], c[1]);
        assert_eq!(c[2], style::CPU_LEVELS[1].1);
        assert_eq!(c[3], style::CPU_LEVELS[2].1);
        assert!(!c[..4].contains(&c[4]), "{c:?}");
        // Drops in bins of a 1-2-5 step: a 100 ms window in 1 ms bins, a 1 ms one in
        // 10 us bins; a drop without a count is one frame.
        let t = Trace {
            from: 1000.0,
            to: 101_000.0,
            drops: vec![
                (1000.0, 2.0),
                (1999.0, 1.0),
                (2000.0, 0.0),
                (100_999.0, 3.0),
            ],
            ..Trace::default()
        };
        let d = DropBins::new(&t).unwrap();
        assert_eq!(d.width_us, 1000.0);
        assert_eq!(d.frames.len(), 100);
        assert_eq!(&d.frames[..2], &[3.0, 1.0]);
        assert_eq!(d.frames[99], 3.0);
        assert_eq!(d.max(), 3.0);
        let t = Trace {
            from: 0.0,
            to: 1000.0,
            drops: vec![(5.0, 1.0)],
            ..Trace::default()
        };
        assert_eq!(DropBins::new(&t).unwrap().width_us, 10.0);
        assert!(DropBins::new(&Trace::default()).is_none());
        // Whole frames only on the count axis.
        assert_eq!(count_label(&50.0), "50");
        assert_eq!(count_label(&12.5), "");
    }
}
