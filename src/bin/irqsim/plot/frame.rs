//! What every plot has around its axes: the title block, the legend column on the right,
//! and drawing helpers (lines, dashes, markers) in pixel coordinates.
//!
//! Everything here draws on the root drawing area, whose coordinates are the backend's
//! pixels; charts convert data coordinates with `ChartContext::backend_coord` and draw
//! lines and markers through these helpers, so the SVG and PNG renderings share one code
//! path and one layout.

use super::font::FAMILY;
use super::style::{self, Dash, Marker};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Result of drawing (errors of either backend).
pub type R<T = ()> = anyhow::Result<T>;

/// A drawing area in pixel coordinates.
pub type Area<DB> = DrawingArea<DB, Shift>;

/// Text in the plot font.
pub fn font(size: f64, colour: RGBColor) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&colour)
}

/// Text anchored at `h`, `v`.
pub fn anchored(size: f64, colour: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    font(size, colour).pos(Pos::new(h, v))
}

/// Width of `text` at `size` [px].
pub fn text_width<DB: DrawingBackend>(area: &Area<DB>, text: &str, size: f64) -> u32 {
    area.estimate_text_size(text, &font(size, style::TEXT))
        .map(|(w, _)| w)
        .unwrap_or((text.chars().count() as f64 * size * 0.6) as u32)
}

/// Break `text` into lines of at most `max_w` pixels, at most `max_lines` of them (the
/// last one ends with an ellipsis when text was left out).
pub fn wrap<DB: DrawingBackend>(
    area: &Area<DB>,
    text: &str,
    size: f64,
    max_w: u32,
    max_lines: usize,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut cut = false;
    for (i, w) in words.iter().enumerate() {
        let cand = if cur.is_empty() {
            w.to_string()
        } else {
            format!("{cur} {w}")
        };
        if cur.is_empty() || text_width(area, &cand, size) <= max_w {
            cur = cand;
            continue;
        }
        lines.push(std::mem::take(&mut cur));
        cur = w.to_string();
        if lines.len() == max_lines {
            cut = i < words.len();
            break;
        }
    }
    if !cut && !cur.is_empty() {
        lines.push(cur);
    }
    if cut && let Some(last) = lines.last_mut() {
        while !last.is_empty() && text_width(area, &format!("{last} …"), size) > max_w {
            match last.rfind(' ') {
                Some(k) => last.truncate(k),
                None => last.clear(),
            }
        }
        last.push_str(" …");
    }
    lines
}

/// Cut `text` to one line of at most `max_w` pixels.
pub fn one_line<DB: DrawingBackend>(area: &Area<DB>, text: &str, size: f64, max_w: u32) -> String {
    wrap(area, text, size, max_w, 1)
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// The title block: a title and a few smaller lines under it.
pub struct Header {
    /// What is plotted, and of what.
    pub title: String,
    /// Description, model, run parameters: each wrapped to the plot width.
    pub lines: Vec<String>,
}

/// What a legend entry shows beside its label.
#[derive(Clone, Copy, Debug)]
pub enum Swatch {
    /// A line sample, with an optional marker in its middle.
    Line(RGBColor, Dash, Option<Marker>),
    /// A marker alone (measured points).
    Points(RGBColor, Marker),
    /// A filled square (stacked areas).
    Fill(RGBColor),
    /// No sample: a heading.
    Heading,
}

/// One legend line.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Label; `\n` breaks it into several lines.
    pub label: String,
    /// The sample drawn before the label.
    pub swatch: Swatch,
}

impl Entry {
    /// An entry.
    pub fn new(label: impl Into<String>, swatch: Swatch) -> Entry {
        Entry {
            label: label.into(),
            swatch,
        }
    }
}

const PAD: i32 = 20;
const SAMPLE_W: i32 = 34;
const LEGEND_LINE: i32 = 20;

/// Fill the background, draw the header and the legend, and return the area left for
/// the axes (below the header, left of the legend).
pub fn layout<DB: DrawingBackend>(root: &Area<DB>, header: &Header, legend: &[Entry]) -> R<Area<DB>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (w, _) = root.dim_in_pixel();
    let text_w = w - 2 * PAD as u32;
    let title = one_line(root, &header.title, style::TITLE_SIZE, text_w);
    root.draw(&Text::new(
        title,
        (PAD, 14),
        anchored(style::TITLE_SIZE, style::TEXT, HPos::Left, VPos::Top),
    ))?;
    let mut y = 14 + style::TITLE_SIZE as i32 + 6;
    for l in &header.lines {
        root.draw(&Text::new(
            l.clone(),
            (PAD, y),
            anchored(
                style::SUBTITLE_SIZE,
                style::TEXT_LIGHT,
                HPos::Left,
                VPos::Top,
            ),
        ))?;
        y += style::SUBTITLE_SIZE as i32 + 5;
    }
    let (_, body) = root.split_vertically(y + 4);

    // Legend column: as wide as its longest line, within bounds.
    let widest = legend
        .iter()
        .flat_map(|e| e.label.lines().map(move |l| (l, e)))
        .map(|(l, e)| {
            text_width(root, l, style::LEGEND_SIZE) as i32
                + match e.swatch {
                    Swatch::Heading => 0,
                    _ => SAMPLE_W + 8,
                }
        })
        .max()
        .unwrap_or(0);
    if legend.is_empty() {
        return Ok(body);
    }
    // Entries that do not fit under one another go on in further columns, so none is
    // cut off at the bottom of the figure.
    let (_, bh) = body.dim_in_pixel();
    let columns = legend_columns(legend, bh as i32 - LEGEND_TOP);
    let col_w = (widest + 2 * PAD).clamp(150, 330);
    let lw = col_w * columns.len().max(1) as i32;
    let (plot, leg) = body.split_horizontally(w as i32 - lw);
    for (c, col) in columns.iter().enumerate() {
        let area = leg
            .clone()
            .shrink((c as i32 * col_w, 0), (col_w as u32, bh));
        let mut ly = LEGEND_TOP;
        for e in &legend[col.clone()] {
            draw_entry(&area, e, ly)?;
            ly += entry_height(e);
        }
    }
    Ok(plot)
}

/// Top of the first legend entry in the legend column [px].
const LEGEND_TOP: i32 = 16;

/// Height of a legend entry [px].
fn entry_height(e: &Entry) -> i32 {
    LEGEND_LINE * e.label.lines().count().max(1) as i32 + 4
}

/// The entries of each legend column: as many under one another as fit in `height`
/// pixels, then the next column (at least one entry per column).
pub fn legend_columns(legend: &[Entry], height: i32) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, e) in legend.iter().enumerate() {
        let h = entry_height(e);
        if i > start && used + h > height {
            out.push(start..i);
            start = i;
            used = 0;
        }
        used += h;
    }
    if start < legend.len() {
        out.push(start..legend.len());
    }
    out
}

fn draw_entry<DB: DrawingBackend>(area: &Area<DB>, e: &Entry, y: i32) -> R
where
    DB::ErrorType: 'static,
{
    let mid = y + LEGEND_LINE / 2 - 1;
    let x0 = 4;
    let tx = match e.swatch {
        Swatch::Heading => x0,
        _ => x0 + SAMPLE_W + 8,
    };
    match e.swatch {
        Swatch::Line(c, dash, marker) => {
            polyline(
                area,
                &[(x0, mid), (x0 + SAMPLE_W, mid)],
                c,
                dash,
                style::LINE_WIDTH,
            )?;
            if let Some(m) = marker {
                draw_marker(area, (x0 + SAMPLE_W / 2, mid), m, c)?;
            }
        }
        Swatch::Points(c, m) => draw_marker(area, (x0 + SAMPLE_W / 2, mid), m, c)?,
        Swatch::Fill(c) => {
            area.draw(&Rectangle::new(
                [(x0 + 6, mid - 7), (x0 + SAMPLE_W - 6, mid + 7)],
                c.filled(),
            ))?;
            area.draw(&Rectangle::new(
                [(x0 + 6, mid - 7), (x0 + SAMPLE_W - 6, mid + 7)],
                style::TEXT_LIGHT.stroke_width(1),
            ))?;
        }
        Swatch::Heading => {}
    }
    let colour = match e.swatch {
        Swatch::Heading => style::TEXT_LIGHT,
        _ => style::TEXT,
    };
    for (i, l) in e.label.lines().enumerate() {
        area.draw(&Text::new(
            l.to_string(),
            (tx, mid + i as i32 * LEGEND_LINE),
            anchored(style::LEGEND_SIZE, colour, HPos::Left, VPos::Center),
        ))?;
    }
    Ok(())
}

/// A polyline in pixel coordinates.
pub fn polyline<DB: DrawingBackend>(
    area: &Area<DB>,
    pts: &[(i32, i32)],
    colour: RGBColor,
    dash: Dash,
    width: u32,
) -> R
where
    DB::ErrorType: 'static,
{
    if pts.len() < 2 {
        return Ok(());
    }
    let st = colour.stroke_width(width);
    match dash.pattern() {
        None => area.draw(&PathElement::new(pts.to_vec(), st))?,
        Some((on, off)) => {
            for seg in dashes(pts, on as f64, off as f64) {
                area.draw(&PathElement::new(seg, st))?;
            }
        }
    }
    Ok(())
}

/// Cut a polyline into dashes of `on` pixels separated by `off`, the pattern running on
/// across vertices.
fn dashes(pts: &[(i32, i32)], on: f64, off: f64) -> Vec<Vec<(i32, i32)>> {
    let mut out: Vec<Vec<(i32, i32)>> = Vec::new();
    let mut cur: Vec<(i32, i32)> = Vec::new();
    let mut drawing = true;
    let mut left = on;
    let r = |x: f64, y: f64| (x.round() as i32, y.round() as i32);
    for w in pts.windows(2) {
        let (ax, ay) = (w[0].0 as f64, w[0].1 as f64);
        let (bx, by) = (w[1].0 as f64, w[1].1 as f64);
        let len = ((bx - ax).powi(2) + (by - ay).powi(2)).sqrt();
        if len == 0.0 {
            continue;
        }
        let mut pos = 0.0;
        if drawing && cur.is_empty() {
            cur.push(r(ax, ay));
        }
        while len - pos > left {
            pos += left;
            let p = r(ax + (bx - ax) * pos / len, ay + (by - ay) * pos / len);
            if drawing {
                cur.push(p);
                out.push(std::mem::take(&mut cur));
                left = off;
            } else {
                cur.push(p);
                left = on;
            }
            drawing = !drawing;
        }
        left -= len - pos;
        if drawing {
            cur.push(r(bx, by));
        }
    }
    if cur.len() > 1 {
        out.push(cur);
    }
    out
}

/// A marker centred on a pixel.
pub fn draw_marker<DB: DrawingBackend>(
    area: &Area<DB>,
    (x, y): (i32, i32),
    m: Marker,
    c: RGBColor,
) -> R
where
    DB::ErrorType: 'static,
{
    let hollow = c.stroke_width(2);
    match m {
        Marker::Dot => area.draw(&Circle::new((x, y), 4, c.filled()))?,
        // Hollow markers are not filled, so a simulated point under a measured one
        // still shows through.
        Marker::Circle => area.draw(&Circle::new((x, y), 7, hollow))?,
        Marker::Square => {
            area.draw(&Rectangle::new([(x - 6, y - 6), (x + 6, y + 6)], hollow))?;
        }
        Marker::Triangle => {
            let pts = vec![(x, y - 8), (x + 7, y + 5), (x - 7, y + 5), (x, y - 8)];
            area.draw(&PathElement::new(pts, hollow))?;
        }
        Marker::Diamond => {
            let pts = vec![(x, y - 8), (x + 8, y), (x, y + 8), (x - 8, y), (x, y - 8)];
            area.draw(&PathElement::new(pts, hollow))?;
        }
        Marker::Peak => {
            let pts = vec![(x, y - 6), (x + 6, y + 4), (x - 6, y + 4)];
            area.draw(&Polygon::new(pts, c.filled()))?;
        }
        Marker::Ring => area.draw(&Circle::new((x, y), 10, c.stroke_width(2)))?,
        Marker::Cross => {
            area.draw(&PathElement::new(
                vec![(x - 5, y - 5), (x + 5, y + 5)],
                hollow,
            ))?;
            area.draw(&PathElement::new(
                vec![(x - 5, y + 5), (x + 5, y - 5)],
                hollow,
            ))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::dashes;

    #[test]
    fn a_long_legend_goes_on_in_another_column() {
        use super::{Entry, Swatch, legend_columns};
        // 24 px per one-line entry, 44 per two-line one.
        let one = Entry::new("a", Swatch::Heading);
        let two = Entry::new("a\nb", Swatch::Heading);
        let l = vec![one.clone(), two.clone(), one.clone(), one.clone()];
        assert_eq!(legend_columns(&l, 1000), vec![0..4]);
        assert_eq!(legend_columns(&l, 70), vec![0..2, 2..4]);
        assert_eq!(legend_columns(&l, 10), vec![0..1, 1..2, 2..3, 3..4]);
        assert!(legend_columns(&[], 100).is_empty());
    }

    #[test]
    fn dashes_follow_the_pattern_across_vertices() {
        // A 30 px horizontal line with 5-on/5-off: dashes at 0-5, 10-15, 20-25.
        let d = dashes(&[(0, 0), (12, 0), (30, 0)], 5.0, 5.0);
        let spans: Vec<(i32, i32)> = d
            .iter()
            .map(|s| (s.first().unwrap().0, s.last().unwrap().0))
            .collect();
        assert_eq!(spans, vec![(0, 5), (10, 15), (20, 25)]);
        // The dash crossing the vertex at x = 12 keeps the vertex.
        assert_eq!(d[1], vec![(10, 0), (12, 0), (15, 0)]);
    }
}
