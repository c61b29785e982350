//! `plots/trace.{png,svg}`: the slices of a `trace.json` drawn as Perfetto shows them,
//! for papers and for readers without a browser: one row per CPU level that ran
//! something (a bar per slice, coloured by task), then the queues' occupancy (RX rings,
//! ipintrq, if_snd) as step lines, with the drops marked under them.

use super::frame::{Area, R};
use super::style::{self, HEIGHT, WIDTH};
use super::{encode_png, font, raster};
use anyhow::Context;
use irqsim::output::write_atomic;
use plotters::prelude::*;
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
            (Some("X"), Some("cpu")) => {
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
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
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
        write_atomic(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
        written.push(f);
    }
    Ok(written)
}

/// Colour of a task: the CPU figure's colour of its kind (interrupts red, the netisr
/// orange, kernel threads purple, user green), other tasks from the palette.
fn task_colour(name: &str, others: &mut Vec<String>) -> RGBColor {
    let kind = |k: &str| style::CPU_LEVELS.iter().find(|(n, _)| *n == k).map(|c| c.1);
    let c = if name.starts_with("interrupt") {
        kind("interrupt")
    } else if name == "netisr" || name == "NET_RX softirq" {
        kind("softirq (netisr)")
    } else if name.contains("polling thread") || name.contains("taskqueue") || name == "busy poll" {
        kind("kernel thread")
    } else if name == "user process" || name == "sender" || name == "ksoftirqd" {
        kind("user")
    } else {
        None
    };
    c.unwrap_or_else(|| {
        let i = others.iter().position(|o| o == name).unwrap_or_else(|| {
            others.push(name.to_string());
            others.len() - 1
        });
        style::PALETTE[(4 + i) % style::PALETTE.len()]
    })
}

fn draw<DB: DrawingBackend>(t: &Trace, title: &str, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (head, body) = root.split_vertically(70);
    head.draw(&Text::new(
        title.to_string(),
        (20, 12),
        (font::FAMILY, style::TITLE_SIZE)
            .into_font()
            .color(&style::TEXT),
    ))?;
    head.draw(&Text::new(
        format!(
            "CPU slices and queues, {:.3} to {:.3} ms of simulated time (trace.json; open it in ui.perfetto.dev)",
            t.from / 1e3,
            t.to / 1e3
        ),
        (20, 44),
        (font::FAMILY, style::SUBTITLE_SIZE)
            .into_font()
            .color(&style::TEXT_LIGHT),
    ))?;
    // The CPU levels that ran something, in track order.
    let mut rows: Vec<u64> = t.slices.iter().map(|s| s.0).collect();
    rows.sort();
    rows.dedup();
    let (cpu, queues) = body.split_vertically((body.dim_in_pixel().1 as f64 * 0.45) as u32);
    let x0 = 0.0;
    let x1 = (t.to - t.from).max(1e-6);
    let nrows = rows.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&cpu)
        .margin_left(10)
        .margin_right(20)
        .x_label_area_size(0)
        .y_label_area_size(190)
        .build_cartesian_2d(x0..x1, 0.0..nrows)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(0)
        .draw()?;
    let mut others = Vec::new();
    let mut legend: Vec<(String, RGBColor)> = Vec::new();
    for (k, tid) in rows.iter().enumerate() {
        let y = nrows - k as f64 - 1.0;
        let name = t.tracks.get(tid).cloned().unwrap_or_default();
        // (backend_coord is in the whole figure's pixels; the text goes in `cpu`'s.)
        let (_, py) = chart.backend_coord(&(x0, y + 0.5));
        cpu.draw(&Text::new(
            name,
            (12, py - cpu.get_base_pixel().1 - 7),
            (font::FAMILY, style::TICK_SIZE)
                .into_font()
                .color(&style::TEXT),
        ))?;
        for (_, task, a, b) in t.slices.iter().filter(|s| s.0 == *tid) {
            let c = task_colour(task, &mut others);
            if !legend.iter().any(|(n, _)| n == task) {
                legend.push((task.clone(), c));
            }
            chart.draw_series(std::iter::once(Rectangle::new(
                [(a - t.from, y + 0.15), (b - t.from, y + 0.85)],
                c.filled(),
            )))?;
        }
    }
    // Legend: the tasks, in the order they first appear.
    let mut lx = 210;
    let ly = cpu.dim_in_pixel().1 as i32 - 18;
    for (name, c) in legend.iter().take(6) {
        cpu.draw(&Rectangle::new([(lx, ly), (lx + 14, ly + 12)], c.filled()))?;
        let label = if name.len() > 34 {
            format!("{}...", &name[..31])
        } else {
            name.clone()
        };
        cpu.draw(&Text::new(
            label.clone(),
            (lx + 18, ly - 1),
            (font::FAMILY, style::NOTE_SIZE)
                .into_font()
                .color(&style::TEXT),
        ))?;
        lx += 30 + 7 * label.len() as i32;
    }
    // Queues: the counters that ever hold something.
    let series: Vec<(&String, &Vec<(f64, f64)>)> = t
        .counters
        .iter()
        .filter(|(n, v)| !n.ends_with("tx ring") && v.iter().any(|p| p.1 > 0.0))
        .collect();
    let ymax = series
        .iter()
        .flat_map(|(_, v)| v.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.1;
    let mut q = ChartBuilder::on(&queues)
        .margin_left(10)
        .margin_right(20)
        .margin_top(10)
        .x_label_area_size(45)
        .y_label_area_size(190)
        .build_cartesian_2d(x0..x1, -0.08 * ymax..ymax)?;
    q.configure_mesh()
        .light_line_style(style::GRID_LIGHT)
        .bold_line_style(style::GRID_BOLD)
        .x_desc(format!("time since {:.6} s [us]", t.from / 1e6))
        .y_desc("frames queued")
        .axis_desc_style((font::FAMILY, style::AXIS_DESC_SIZE))
        .label_style((font::FAMILY, style::TICK_SIZE))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = style::series_colour(i);
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
        q.draw_series(LineSeries::new(steps, c.stroke_width(style::LINE_WIDTH)))?
            .label(name.to_string())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3)));
    }
    if !t.drops.is_empty() {
        let red = RGBColor(0xd6, 0x27, 0x28);
        q.draw_series(
            t.drops
                .iter()
                .map(|(ts, _)| Cross::new((ts - t.from, -0.04 * ymax), 4, red.stroke_width(1))),
        )?
        .label("drop")
        .legend(move |(x, y)| Cross::new((x + 9, y), 4, red.stroke_width(1)));
    }
    q.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(style::GRID_BOLD)
        .label_font((font::FAMILY, style::LEGEND_SIZE))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_read_back() {
        let json = br#"{"otherData":{"window_from_us":10.0,"window_to_us":20.0},"traceEvents":[
            {"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"cpu0 hardirq"}},
            {"ph":"X","cat":"cpu","name":"interrupt irq11: dc0","pid":1,"tid":2,"ts":11.5,"dur":2.0,"args":{}},
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
}
