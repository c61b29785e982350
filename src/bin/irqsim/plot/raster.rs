//! The PNG canvas: plotters' bitmap backend with text rasterised here.
//!
//! plotters 0.3.7 places each glyph of its `ab_glyph` text at a whole pixel and ignores
//! the glyph's left side bearing, so digits and letters drift apart ("1 00"). This
//! backend delegates everything to [`BitMapBackend`] except `draw_text`, which lays the
//! text out with the font's advances and kerning at sub-pixel positions and places the
//! text as the SVG backend tells a viewer to: the same font size (plotters size / 1.24
//! per em) and the same anchor rules (`dy` of 0.76 em for top, 0.5 ex for centre,
//! -0.5 ex for bottom). Text sizes for layout are still estimated by plotters, so both
//! formats get one layout.

use super::font;
use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// DejaVu Sans x-height [em] (1120 / 2048 font units).
const X_HEIGHT_EM: f32 = 0.547;

/// An RGB bitmap with correctly placed text.
pub struct Canvas<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl<'a> Canvas<'a> {
    /// Draw into `buf` (RGB, `w * h * 3` bytes).
    pub fn new(buf: &'a mut [u8], (w, h): (u32, u32)) -> Canvas<'a> {
        Canvas {
            inner: BitMapBackend::with_buffer(buf, (w, h)),
            font: font::face(),
        }
    }
}

impl Canvas<'_> {
    /// A line wider than one pixel: each segment a filled quadrilateral of the stroke's
    /// width, whatever its angle (plotters' own thick lines thin out on steep segments),
    /// with round joins.
    fn thick_path<S: BackendStyle>(
        &mut self,
        pts: &[BackendCoord],
        style: &S,
    ) -> Result<(), DrawingErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>> {
        let half = style.stroke_width() as f64 / 2.0;
        let colour = style.color();
        for w in pts.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
            let len = (dx * dx + dy * dy).sqrt();
            if len == 0.0 {
                continue;
            }
            // Normal of the segment, scaled to half the width.
            let (nx, ny) = (-dy / len * half, dx / len * half);
            let c = |p: BackendCoord, s: f64| {
                (
                    (p.0 as f64 + 0.5 + s * nx).floor() as i32,
                    (p.1 as f64 + 0.5 + s * ny).floor() as i32,
                )
            };
            let quad = [c(a, 1.0), c(b, 1.0), c(b, -1.0), c(a, -1.0)];
            self.inner.fill_polygon(quad, &colour)?;
        }
        if half > 1.0 {
            for p in &pts[1..pts.len().saturating_sub(1)] {
                self.inner
                    .draw_circle(*p, (half - 0.5) as u32, &colour, true)?;
            }
        }
        Ok(())
    }
}

type Err<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

impl<'a> DrawingBackend for Canvas<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), Err<'a>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), Err<'a>> {
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Err<'a>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Err<'a>> {
        if style.stroke_width() > 1 {
            return self.thick_path(&[from, to], style);
        }
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Err<'a>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Err<'a>> {
        if style.stroke_width() > 1 {
            let pts: Vec<BackendCoord> = path.into_iter().collect();
            return self.thick_path(&pts, style);
        }
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Err<'a>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Err<'a>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Err<'a>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Err<'a>> {
        let colour = style.color();
        if colour.alpha == 0.0 {
            return Ok(());
        }
        let em = (style.size() / 1.24) as f32;
        let units = self.font.units_per_em().unwrap_or(2048.0);
        let scale = PxScale::from(em * self.font.height_unscaled() / units);
        let sf = self.font.as_scaled(scale);
        // Pen positions along the baseline, with kerning.
        let mut pens = Vec::with_capacity(text.len());
        let mut x = 0.0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = sf.glyph_id(c);
            if let Some(p) = prev {
                x += sf.kern(p, id);
            }
            pens.push((id, x));
            x += sf.h_advance(id);
            prev = Some(id);
        }
        let width = x;
        let anchor = style.anchor();
        let x0 = match anchor.h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let baseline = match anchor.v_pos {
            VPos::Top => 0.76 * em,
            VPos::Center => 0.5 * X_HEIGHT_EM * em,
            VPos::Bottom => -0.5 * X_HEIGHT_EM * em,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        for (id, pen) in pens {
            let g = id.with_scale_and_position(scale, point(x0 + pen, baseline));
            let Some(og) = self.font.outline_glyph(g) else {
                continue;
            };
            let b = og.px_bounds();
            let (bx, by) = (b.min.x as i32, b.min.y as i32);
            let mut px: Vec<(i32, i32, f32)> = Vec::new();
            og.draw(|gx, gy, cov| px.push((bx + gx as i32, by + gy as i32, cov)));
            for (lx, ly, cov) in px {
                if cov <= 0.0 {
                    continue;
                }
                let (dx, dy) = trans.transform(lx, ly);
                let (tx, ty) = (pos.0 + dx, pos.1 + dy);
                if tx >= 0 && ty >= 0 && (tx as u32) < w && (ty as u32) < h {
                    self.inner.draw_pixel(
                        (tx, ty),
                        BackendColor {
                            alpha: colour.alpha * cov.min(1.0) as f64,
                            rgb: colour.rgb,
                        },
                    )?;
                }
            }
        }
        Ok(())
    }
}
