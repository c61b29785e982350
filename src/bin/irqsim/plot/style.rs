//! Sizes, fonts and colours shared by every plot.
//!
//! Every plot is [`WIDTH`] x [`HEIGHT`] pixels, in both SVG and PNG. Simulated series take
//! the colours of [`PALETTE`] in order (Tableau 10 without its grey, chosen to stay
//! distinguishable for the common colour-vision deficiencies when combined with the
//! marker shapes); measured tables are always drawn in black with hollow markers, so
//! simulation and measurement never share a look.

use plotters::style::RGBColor;

/// Width of every plot [px].
pub const WIDTH: u32 = 1024;
/// Height of every plot [px].
pub const HEIGHT: u32 = 640;

/// Title [px].
pub const TITLE_SIZE: f64 = 24.0;
/// Subtitle lines under the title [px].
pub const SUBTITLE_SIZE: f64 = 14.0;
/// Axis descriptions [px].
pub const AXIS_DESC_SIZE: f64 = 18.0;
/// Tick labels [px]. Sizes here are plotters' (the SVG's font-size is 1/1.24 of them):
/// 20 gives a 16.1 px font whose digits are 12 px from top to baseline in the PNG
/// (DejaVu Sans: 0.73 em), 13 px of dark rows with anti-aliasing.
pub const TICK_SIZE: f64 = 20.0;
/// Legend entries [px].
pub const LEGEND_SIZE: f64 = 14.0;
/// Annotations inside a plot [px].
pub const NOTE_SIZE: f64 = 13.0;
/// Panel captions [px].
pub const PANEL_SIZE: f64 = 16.0;

/// Simulated lines [px].
pub const LINE_WIDTH: u32 = 2;

/// Colours of simulated series, in order.
pub const PALETTE: [RGBColor; 9] = [
    RGBColor(0x1f, 0x77, 0xb4), // blue
    RGBColor(0xff, 0x7f, 0x0e), // orange
    RGBColor(0x2c, 0xa0, 0x2c), // green
    RGBColor(0xd6, 0x27, 0x28), // red
    RGBColor(0x94, 0x67, 0xbd), // purple
    RGBColor(0x8c, 0x56, 0x4b), // brown
    RGBColor(0xe3, 0x77, 0xc2), // pink
    RGBColor(0xbc, 0xbd, 0x22), // olive
    RGBColor(0x17, 0xbe, 0xcf), // cyan
];

/// Colour of the `i`-th simulated series.
pub fn series_colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Measured points.
pub const MEASURED: RGBColor = RGBColor(0, 0, 0);
/// Reference lines (ideal y = x, one interrupt per frame).
pub const REFERENCE: RGBColor = RGBColor(0x80, 0x80, 0x80);
/// Text.
pub const TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);
/// Secondary text (subtitles, notes).
pub const TEXT_LIGHT: RGBColor = RGBColor(0x55, 0x55, 0x55);
/// Major grid lines.
pub const GRID_BOLD: RGBColor = RGBColor(0xd0, 0xd0, 0xd0);
/// Minor grid lines.
pub const GRID_LIGHT: RGBColor = RGBColor(0xee, 0xee, 0xee);

/// CPU levels, bottom to top of the stack: interrupt, softirq, kernel thread, user, idle.
pub const CPU_LEVELS: [(&str, RGBColor); 5] = [
    ("interrupt", RGBColor(0xd6, 0x27, 0x28)),
    ("softirq (netisr)", RGBColor(0xff, 0x9f, 0x40)),
    ("kernel thread", RGBColor(0x94, 0x67, 0xbd)),
    ("user", RGBColor(0x2c, 0xa0, 0x2c)),
    ("idle", RGBColor(0xe4, 0xe4, 0xe4)),
];

/// CPU time as mpstat shows it on a Linux host, stacked in this order (the colours of
/// the matching levels above: `%irq` the interrupts', `%soft` the softirqs', `%sys` the
/// kernel threads', `%usr` the user processes').
pub const CPU_MPSTAT: [(&str, RGBColor); 5] = [
    ("%irq", CPU_LEVELS[0].1),
    ("%soft", CPU_LEVELS[1].1),
    ("%sys", CPU_LEVELS[2].1),
    ("%usr", CPU_LEVELS[3].1),
    ("%idle", CPU_LEVELS[4].1),
];

/// Latency statistics when a single series is drawn: one colour each.
pub const LATENCY_STATS: [RGBColor; 3] = [
    RGBColor(0x1f, 0x77, 0xb4), // avg
    RGBColor(0xff, 0x7f, 0x0e), // p99
    RGBColor(0xd6, 0x27, 0x28), // max
];

/// How a line is stroked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dash {
    /// Continuous.
    Solid,
    /// Long dashes.
    Dashed,
    /// Short dots.
    Dotted,
}

impl Dash {
    /// (dash, gap) lengths [px], for dashed kinds.
    pub fn pattern(self) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((9, 5)),
            Dash::Dotted => Some((2, 4)),
        }
    }
}

/// Point markers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle (simulated points).
    Dot,
    /// Hollow circle.
    Circle,
    /// Hollow triangle.
    Triangle,
    /// Hollow square.
    Square,
    /// Diagonal cross.
    Cross,
    /// Hollow diamond.
    Diamond,
    /// Large ring around a point (the MLFRR).
    Ring,
    /// Filled triangle pointing up (simulated maxima, distinct from the average's dots
    /// where the lines meet).
    Peak,
}

/// Markers of measured tables, in order: (loss, rates and average latency; maximum
/// latency).
pub const MEASURED_MARKERS: [(Marker, Marker); 3] = [
    (Marker::Circle, Marker::Triangle),
    (Marker::Square, Marker::Diamond),
    (Marker::Diamond, Marker::Cross),
];

/// A colour for position `t` in [0, 1] on the whole viridis scale (dark purple to
/// yellow; perceptually uniform, readable in grey and with the common colour-vision
/// deficiencies): heat-map and timeline cells.
pub fn heat(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (0x44, 0x01, 0x54),
        (0x47, 0x2d, 0x7b),
        (0x3b, 0x52, 0x8b),
        (0x2c, 0x72, 0x8e),
        (0x21, 0x91, 0x8c),
        (0x28, 0xae, 0x80),
        (0x5e, 0xc9, 0x62),
        (0xad, 0xdc, 0x30),
        (0xfd, 0xe7, 0x25),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    } * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Text colour that reads on a background `c`: white on dark, [`TEXT`] on light.
pub fn text_on(c: RGBColor) -> RGBColor {
    let lum = 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
    if lum < 150.0 {
        RGBColor(0xff, 0xff, 0xff)
    } else {
        TEXT
    }
}

/// Heat-map and timeline cells without a value (no MLFRR, no frame delivered).
pub const NO_VALUE: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
