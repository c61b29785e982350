//! What the charts draw, taken from one or more [`Results`]: simulated series (one per
//! result set and variant), measured tables, MLFRR, axis ranges and number formats.

use super::style::{self, MEASURED_MARKERS, Marker};
use super::timeline::TimelineRow;
use irqsim::results::output::variants;
use irqsim::results::summary::mlfrr;
use irqsim::results::{PointResult, Results};
use plotters::style::RGBColor;

/// A result set to plot, with the label its lines get when several sets are overlaid.
pub struct Source<'a> {
    /// Label (scenario name, or a name that tells the sets apart).
    pub label: String,
    /// The results.
    pub results: &'a Results,
}

/// One simulated line: a variant of a result set.
pub struct Series<'a> {
    /// Legend label.
    pub label: String,
    /// Line colour.
    pub colour: RGBColor,
    /// The points, by increasing offered rate.
    pub points: Vec<&'a PointResult>,
    /// Maximum loss-free receive rate [frames/s], see [`irqsim::results::summary::mlfrr`].
    pub mlfrr: Option<f64>,
}

/// One point of a measured table, in the simulated points' terms.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredPt {
    /// Offered load [% of line rate].
    pub load_pct: f64,
    /// Offered rate [frames/s].
    pub offered_pps: f64,
    /// Loss [% of sent].
    pub loss_pct: f64,
    /// Forwarded rate [frames/s].
    pub forwarded_pps: f64,
    /// Average latency [us] (None when nothing was received).
    pub avg_us: Option<f64>,
    /// Maximum latency [us] (None when nothing was received).
    pub max_us: Option<f64>,
}

/// A measured table drawn over the simulated lines.
pub struct MeasuredSeries {
    /// Legend label.
    pub label: String,
    /// Marker of its points (black, hollow).
    pub marker: Marker,
    /// Marker of its maximum latencies.
    pub marker_max: Marker,
    /// Its points, by load.
    pub points: Vec<MeasuredPt>,
}

/// What the x axis of the load charts shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XAxis {
    /// Offered load [% of line rate]: sweeps whose points are whole or half percents
    /// (SmartBits-style, `load.unit: percent`).
    LoadPct,
    /// Offered rate [frames/s]: any other sweep (e.g. `load.unit: pps`).
    OfferedPps,
}

impl XAxis {
    /// Axis description. With several flows it says what the number is of: a load point
    /// in percent is each flow's (`load.unit: percent` is per flow: eight flows at
    /// 12.5 % fill one input link), an offered rate is all flows' together
    /// ([`PointResult::offered_pps`]).
    pub fn desc(self, several_flows: bool) -> &'static str {
        match (self, several_flows) {
            (XAxis::LoadPct, false) => "offered load (% of line rate)",
            (XAxis::LoadPct, true) => "offered load per flow (% of line rate)",
            (XAxis::OfferedPps, false) => "offered rate (frames/s)",
            (XAxis::OfferedPps, true) => "offered rate, all flows (frames/s)",
        }
    }

    /// The coordinate of a point offered at `load_pct` % or `offered_pps` frames/s.
    pub fn of(self, load_pct: f64, offered_pps: f64) -> f64 {
        match self {
            XAxis::LoadPct => load_pct,
            XAxis::OfferedPps => offered_pps,
        }
    }

    /// Percent when every point of every set is a whole or half percent.
    fn choose(sources: &[Source]) -> XAxis {
        let round = sources
            .iter()
            .flat_map(|s| s.results.points.iter())
            .all(|p| {
                let twice = 2.0 * p.load_pct;
                (twice - twice.round()).abs() < 1e-6
            });
        if round {
            XAxis::LoadPct
        } else {
            XAxis::OfferedPps
        }
    }
}

/// Everything a chart needs.
pub struct Data<'a> {
    /// The x axis of the charts against load.
    pub x_axis: XAxis,
    /// The result sets.
    pub sources: &'a [Source<'a>],
    /// Simulated series, in order: sets in the order given, variants in order of first
    /// appearance.
    pub series: Vec<Series<'a>>,
    /// Measured tables (each distinct one once).
    pub measured: Vec<MeasuredSeries>,
    /// Offered rate by load for each set with a distinct ratio: (load %, frames/s).
    pub offered: Vec<Vec<(f64, f64)>>,
    /// Latency timeline rows, when one was recorded.
    pub timeline: Option<&'a [TimelineRow]>,
    /// Whether any point of any set has more than one flow (the load axes then say
    /// whether a number is per flow or of all flows).
    pub several_flows: bool,
}

impl<'a> Data<'a> {
    /// Gather the series and measured tables of `sources`.
    pub fn new(sources: &'a [Source<'a>], timeline: Option<&'a [TimelineRow]>) -> Data<'a> {
        let mut series = Vec::new();
        let mut measured: Vec<MeasuredSeries> = Vec::new();
        let mut offered: Vec<Vec<(f64, f64)>> = Vec::new();
        for src in sources {
            let r = src.results;
            let vs = variants(r);
            for v in &vs {
                let mut pts: Vec<&PointResult> =
                    r.points.iter().filter(|p| &p.variant == v).collect();
                pts.sort_by(|a, b| a.offered_pps.total_cmp(&b.offered_pps));
                let plain = vs.len() == 1 && v == "default";
                let label = match (sources.len(), plain) {
                    (1, true) => "simulated".to_string(),
                    (1, false) => v.clone(),
                    (_, true) => src.label.clone(),
                    (_, false) => format!("{} / {v}", src.label),
                };
                let m = mlfrr(&pts);
                series.push(Series {
                    label,
                    colour: style::series_colour(series.len()),
                    points: pts,
                    mlfrr: m,
                });
            }
            // Offered frames/s per load %: taken from the simulated points (same workload).
            let mut off: Vec<(f64, f64)> = r
                .points
                .iter()
                .filter(|p| p.variant == vs[0])
                .map(|p| (p.load_pct, p.offered_pps))
                .collect();
            off.sort_by(|a, b| a.0.total_cmp(&b.0));
            let ratio = off
                .iter()
                .find(|(l, _)| *l > 0.0)
                .map(|(l, o)| o / l)
                .unwrap_or(0.0);
            if !off.is_empty() && !offered.contains(&off) {
                offered.push(off);
            }
            if let Some(m) = &r.measured {
                let mut pts: Vec<MeasuredPt> = m
                    .points
                    .iter()
                    .map(|mp| {
                        let t = &mp.total;
                        let offered_pps = mp.load_pct * ratio;
                        let got = t.received > 0.0;
                        MeasuredPt {
                            load_pct: mp.load_pct,
                            offered_pps,
                            loss_pct: t.loss_pct(),
                            forwarded_pps: if t.sent > 0.0 {
                                offered_pps * t.received / t.sent
                            } else {
                                0.0
                            },
                            avg_us: got.then_some(t.avg_us),
                            max_us: got.then_some(t.max_us),
                        }
                    })
                    .collect();
                pts.sort_by(|a, b| a.load_pct.total_cmp(&b.load_pct));
                let file = m.file.rsplit(['/', '\\']).next().unwrap_or(&m.file);
                let label = format!("measured: {file}");
                if !measured.iter().any(|s| s.label == label && s.points == pts) {
                    let (marker, marker_max) =
                        MEASURED_MARKERS[measured.len() % MEASURED_MARKERS.len()];
                    measured.push(MeasuredSeries {
                        label,
                        marker,
                        marker_max,
                        points: pts,
                    });
                }
            }
        }
        let several_flows = sources
            .iter()
            .flat_map(|s| s.results.points.iter())
            .any(|p| p.figures.flows.len() > 1);
        Data {
            x_axis: XAxis::choose(sources),
            sources,
            series,
            measured,
            offered,
            timeline,
            several_flows,
        }
    }

    /// Description of the load axis ([`XAxis::desc`]).
    pub fn x_desc(&self) -> &'static str {
        self.x_axis.desc(self.several_flows)
    }

    /// Description of an axis of rates of all flows: `what` rate (frames/s).
    pub fn rate_desc(&self, what: &str) -> String {
        if self.several_flows {
            format!("{what} rate, all flows (frames/s)")
        } else {
            format!("{what} rate (frames/s)")
        }
    }

    /// The x coordinate of a simulated point.
    pub fn x(&self, p: &PointResult) -> f64 {
        self.x_axis.of(p.load_pct, p.offered_pps)
    }

    /// The x coordinate of a measured point.
    pub fn xm(&self, p: &MeasuredPt) -> f64 {
        self.x_axis.of(p.load_pct, p.offered_pps)
    }

    /// Smallest and largest x over simulated and measured points.
    pub fn x_span(&self) -> (f64, f64) {
        span(
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| self.x(p)))
                .chain(
                    self.measured
                        .iter()
                        .flat_map(|m| m.points.iter().map(|p| self.xm(p))),
                ),
        )
    }

    /// The offered rate of load `load_pct` in the first result set, if it has the point.
    pub fn offered_at(&self, load_pct: f64) -> Option<f64> {
        self.sources
            .first()?
            .results
            .points
            .iter()
            .find(|p| (p.load_pct - load_pct).abs() < 1e-9)
            .map(|p| p.offered_pps)
    }
}

/// (min, max) of some values; (0, 1) when there are none.
pub fn span(it: impl Iterator<Item = f64>) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in it.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi { (0.0, 1.0) } else { (lo, hi) }
}

/// A data span widened by 3 % on each side (or by 1 unit around a single value).
pub fn padded((lo, hi): (f64, f64)) -> std::ops::Range<f64> {
    let pad = if hi > lo { 0.03 * (hi - lo) } else { 1.0 };
    (lo - pad)..(hi + pad)
}

/// The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k that is at least `v`
/// (v > 0); 1 for v <= 0.
pub fn nice_ceil(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let e = 10f64.powf(v.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if m * e >= v * (1.0 - 1e-12) {
            return m * e;
        }
    }
    10.0 * e
}

/// The 1-2-5 steps of a log axis: 1, 2 and 5 times each power of ten.
const STEPS_125: [f64; 3] = [1.0, 2.0, 5.0];

/// The 1-2-5 values (1, 2, 5 x 10^k) from a decade below `lo` to a decade above `hi`
/// (0 < lo <= hi).
fn steps_125(lo: f64, hi: f64) -> Vec<f64> {
    let k0 = lo.log10().floor() as i32 - 1;
    let k1 = hi.log10().ceil() as i32 + 1;
    (k0..=k1)
        .flat_map(|k| STEPS_125.map(|m| m * 10f64.powi(k)))
        .collect()
}

/// A log axis fitted to a positive span: from the largest 1-2-5 value at or below its
/// minimum to the smallest at or above its maximum (so no decade of the axis is empty),
/// with its tick values: every 1-2-5 value in the range when there are at most
/// `max_ticks` of them, else the two ends and the powers of ten between them.
pub fn log_fit((lo, hi): (f64, f64), max_ticks: usize) -> (std::ops::Range<f64>, Vec<f64>) {
    let lo = if lo > 0.0 && lo.is_finite() { lo } else { 1.0 };
    let hi = if hi.is_finite() { hi.max(lo) } else { lo };
    let mut all: Vec<f64> = steps_125(lo, hi).into_iter().filter(|v| *v > 0.0).collect();
    // The largest step at or below lo and the smallest at or above hi.
    let a = all
        .iter()
        .copied()
        .filter(|v| *v <= lo * (1.0 + 1e-9))
        .fold(f64::NAN, f64::max);
    let a = if a.is_finite() { a } else { all[0] };
    let b = all
        .iter()
        .copied()
        .filter(|v| *v >= hi * (1.0 - 1e-9))
        .fold(f64::NAN, f64::min);
    let mut b = if b.is_finite() {
        b
    } else {
        *all.last().expect("not empty")
    };
    if b <= a {
        // A single value on a step: the next step up.
        b = all.iter().copied().find(|v| *v > a).unwrap_or(a * 2.0);
    }
    all.retain(|v| *v >= a * (1.0 - 1e-9) && *v <= b * (1.0 + 1e-9));
    if all.len() > max_ticks {
        let decade = |v: &f64| {
            let e = 10f64.powf(v.log10().round());
            (v / e - 1.0).abs() < 1e-9
        };
        let n = all.len();
        all = all
            .into_iter()
            .enumerate()
            .filter(|(i, v)| *i == 0 || *i == n - 1 || decade(v))
            .map(|(_, v)| v)
            .collect();
    }
    (a..b, all)
}

/// A number with thousands separators and no more decimals than needed (at most 2):
/// `38,690`, `12.5`, `0.25`.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let neg = v < 0.0;
    let a = v.abs();
    let whole = (a - a.round()).abs() < 1e-9 * a.max(1.0);
    let mut s = if whole || a >= 100.0 {
        format!("{:.0}", a)
    } else {
        let t = format!("{:.2}", a);
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let dot = s.find('.').unwrap_or(s.len());
    let (int, frac) = s.split_at(dot);
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    s = grouped + frac;
    if neg && s.chars().any(|c| c != '0' && c != '.' && c != ',') {
        format!("-{s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_trimmed() {
        assert_eq!(fmt_num(38_690.0), "38,690");
        assert_eq!(fmt_num(1_000_000.0), "1,000,000");
        assert_eq!(fmt_num(12.5), "12.5");
        assert_eq!(fmt_num(0.25), "0.25");
        assert_eq!(fmt_num(100.0), "100");
        assert_eq!(fmt_num(-0.0), "0");
        assert_eq!(fmt_num(-2.5), "-2.5");
        assert_eq!(fmt_num(1234.56), "1,235");
    }

    #[test]
    fn nice_bounds() {
        assert_eq!(nice_ceil(90.3), 100.0);
        assert_eq!(nice_ceil(0.0), 1.0);
        assert_eq!(nice_ceil(2.2), 2.5);
        assert_eq!(nice_ceil(56_250.0), 60_000.0);
    }

    #[test]
    fn log_axes_fit_the_data_to_1_2_5_steps() {
        // The reference sweep's latencies (25.1 to 9,467 us): 20 to 10,000, every
        // 1-2-5 step a tick.
        let (r, t) = log_fit((25.1, 9467.0), 12);
        assert_eq!(r, 20.0..10_000.0);
        assert_eq!(
            t,
            vec![
                20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10_000.0
            ]
        );
        // Less than a decade: still ticks at both ends.
        let (r, t) = log_fit((29.1, 41.0), 12);
        assert_eq!(r, 20.0..50.0);
        assert_eq!(t, vec![20.0, 50.0]);
        // On a step: that step, and the next one up for a single value.
        assert_eq!(log_fit((100.0, 1000.0), 12).0, 100.0..1000.0);
        assert_eq!(log_fit((29.1, 29.1), 12).0, 20.0..50.0);
        // Many decades: the ends and the powers of ten.
        let (r, t) = log_fit((3.0, 2.5e6), 8);
        assert_eq!(r, 2.0..5.0e6);
        assert_eq!(
            t,
            vec![2.0, 10.0, 100.0, 1000.0, 1.0e4, 1.0e5, 1.0e6, 5.0e6]
        );
    }
}
