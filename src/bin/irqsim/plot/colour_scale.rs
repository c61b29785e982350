//! A colour scale for figures that colour cells by a value (the grid heat maps, the
//! latency timeline): values to viridis colours ([`style::heat`]), linear or
//! logarithmic, and the colour bar that labels the scale beside the cells.

use super::frame::{Area, R, anchored};
use super::style;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// How values map to colours: linearly or logarithmically from `lo` (darkest) to `hi`
/// (brightest).
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    /// Value at the dark end.
    pub lo: f64,
    /// Value at the bright end.
    pub hi: f64,
    /// Logarithmic (`lo` > 0) rather than linear.
    pub log: bool,
}

impl Scale {
    /// The range of `values`: logarithmic when `log_if_wide` and they are positive and
    /// span a factor of 10 or more, linear otherwise; (0, 1) linear when there are none.
    pub fn new(values: &[f64], log_if_wide: bool) -> Scale {
        let (lo, hi) = range(values);
        if !lo.is_finite() {
            return Scale {
                lo: 0.0,
                hi: 1.0,
                log: false,
            };
        }
        let log = log_if_wide && lo > 0.0 && hi / lo >= 10.0;
        Scale { lo, hi, log }
    }

    /// Logarithmic from the smallest positive value to the largest, over at least one
    /// decade: a range a few percent wide would otherwise spread jitter over the whole
    /// scale and make it look like the factors of ten the figure is there to show.
    /// (1, 10) when there are no positive values.
    pub fn log_decade(values: &[f64]) -> Scale {
        let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        let (lo, hi) = range(&pos);
        if !lo.is_finite() {
            return Scale {
                lo: 1.0,
                hi: 10.0,
                log: true,
            };
        }
        Scale {
            lo,
            hi: hi.max(10.0 * lo),
            log: true,
        }
    }

    /// Position of `v` on the scale, 0 to 1 (0.5 when every value is the same); values
    /// outside the range are clamped by [`Scale::colour`], not here.
    pub fn t(&self, v: f64) -> f64 {
        if self.hi <= self.lo {
            return 0.5;
        }
        if self.log {
            (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    /// The colour of `v`.
    pub fn colour(&self, v: f64) -> RGBColor {
        style::heat(self.t(v))
    }

    /// Round values for the colour bar's ticks, within [lo, hi]: steps of 1, 2, 2.5 or
    /// 5 times a power of ten, three to six of them; on a log scale 1, 2 and 5 times
    /// the powers of ten inside the range (the ends too when that gives fewer than
    /// two).
    pub fn ticks(&self) -> Vec<f64> {
        if self.hi <= self.lo {
            return vec![self.lo];
        }
        if self.log {
            let mut v = Vec::new();
            let (e0, e1) = (
                self.lo.log10().floor() as i32,
                self.hi.log10().ceil() as i32,
            );
            for e in e0..=e1 {
                for m in [1.0, 2.0, 5.0] {
                    let x = m * 10f64.powi(e);
                    if x >= self.lo && x <= self.hi {
                        v.push(x);
                    }
                }
            }
            if v.len() >= 2 {
                return v;
            }
            return vec![self.lo, self.hi];
        }
        let raw = (self.hi - self.lo) / 4.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        let mut v = Vec::new();
        let mut x = (self.lo / step).ceil() * step;
        while x <= self.hi + 1e-9 * step {
            v.push(x);
            x += step;
        }
        v
    }
}

/// (min, max) of finite values; (inf, -inf) when there are none.
fn range(values: &[f64]) -> (f64, f64) {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// Where a colour bar goes and how it is labelled.
pub struct Bar<'a> {
    /// Left and right edges [px].
    pub x: (i32, i32),
    /// Top and bottom edges [px]: `hi` at the top, `lo` at the bottom.
    pub y: (i32, i32),
    /// Unit written above it.
    pub unit: &'a str,
    /// Tick labels.
    pub fmt: &'a dyn Fn(f64) -> String,
    /// Whether to draw ticks (not when no cell has a value).
    pub ticks: bool,
}

/// Draw the colour bar of `scale` on `area`: the scale in bands, a frame, the unit above,
/// the ticks on the right and "log scale" under it when it is one.
pub fn draw_bar<DB: DrawingBackend>(area: &Area<DB>, scale: &Scale, bar: &Bar) -> R
where
    DB::ErrorType: 'static,
{
    let ((x0, x1), (top, bottom)) = (bar.x, bar.y);
    let bands = 96;
    let span = (bottom - top) as f64;
    for k in 0..bands {
        let t0 = k as f64 / bands as f64;
        let t1 = (k + 1) as f64 / bands as f64;
        let y1 = bottom - (t0 * span).round() as i32;
        let y0 = bottom - (t1 * span).round() as i32;
        let c = style::heat((t0 + t1) / 2.0);
        area.draw(&Rectangle::new([(x0, y0), (x1, y1)], c.filled()))?;
    }
    area.draw(&Rectangle::new(
        [(x0, top), (x1, bottom)],
        style::TEXT_LIGHT.stroke_width(1),
    ))?;
    area.draw(&Text::new(
        bar.unit.to_string(),
        ((x0 + x1) / 2, top - 12),
        anchored(style::TICK_SIZE, style::TEXT, HPos::Center, VPos::Bottom),
    ))?;
    if !bar.ticks {
        return Ok(());
    }
    for v in scale.ticks() {
        let y = bottom - (scale.t(v) * span).round() as i32;
        area.draw(&PathElement::new(
            vec![(x1, y), (x1 + 5, y)],
            style::TEXT_LIGHT.stroke_width(1),
        ))?;
        area.draw(&Text::new(
            (bar.fmt)(v),
            (x1 + 8, y),
            anchored(style::TICK_SIZE, style::TEXT, HPos::Left, VPos::Center),
        ))?;
    }
    if scale.log {
        area.draw(&Text::new(
            "log scale",
            ((x0 + x1) / 2, bottom + 8),
            anchored(style::NOTE_SIZE, style::TEXT_LIGHT, HPos::Center, VPos::Top),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_map_values_to_the_bar() {
        let s = Scale::new(&[10.0, 20.0, 30.0], false);
        assert!(!s.log);
        assert_eq!((s.t(10.0), s.t(20.0), s.t(30.0)), (0.0, 0.5, 1.0));
        assert_eq!(s.ticks(), vec![10.0, 15.0, 20.0, 25.0, 30.0]);
        let s = Scale::new(&[44_643.0, 59_524.0], false);
        assert_eq!(s.ticks(), vec![45_000.0, 50_000.0, 55_000.0]);
        let s = Scale::new(&[10.0, 1000.0], true);
        assert!(s.log);
        assert!((s.t(100.0) - 0.5).abs() < 1e-12);
        assert_eq!(
            s.ticks(),
            vec![10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        // Less than a factor of ten apart: linear even when a log scale is allowed.
        assert!(!Scale::new(&[10.0, 99.0], true).log);
        let s = Scale::new(&[5.0, 5.0], false);
        assert_eq!((s.t(5.0), s.ticks()), (0.5, vec![5.0]));
    }

    #[test]
    fn a_log_decade_scale_spans_at_least_a_factor_of_ten() {
        // The xl(4) timeline: 52 us between spikes, 6.2 ms spikes. A spike is a bucket
        // above ten times the median bucket maximum, so it lands at least a decade up.
        let s = Scale::log_decade(&[52.0, 6240.0, 0.0]);
        assert_eq!((s.lo, s.hi, s.log), (52.0, 6240.0, true));
        assert!((s.t(520.0) - (10f64.ln() / 120f64.ln())).abs() < 1e-12);
        // A flat timeline, 52.0 to 53.0 us: 2 % jitter stays near the dark end instead of
        // spanning the whole scale.
        let s = Scale::log_decade(&[52.0, 53.0]);
        assert_eq!(s.hi, 520.0);
        assert!(s.t(53.0) < 0.01);
        assert_eq!(s.ticks(), vec![100.0, 200.0, 500.0]);
        // Nothing positive: a placeholder decade.
        assert_eq!(Scale::log_decade(&[0.0]), Scale::log_decade(&[]));
    }
}
