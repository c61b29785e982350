//! The font every plot uses, shipped in the repository and compiled into the binary, so
//! PNG text needs no system fonts.
//!
//! `assets/fonts/DejaVuSans.ttf` (DejaVu Sans 2.37, Bitstream Vera licence, see
//! `assets/fonts/LICENSE`) is registered with plotters under the family name
//! `sans-serif`. The SVG files name the same family, so a viewer draws them with its own
//! sans-serif face; text positions are laid out with DejaVu Sans metrics either way.

use plotters::style::{FontStyle, register_font};
use std::sync::Once;

/// Family name the plots ask for.
pub const FAMILY: &str = "sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");

/// The shipped font, for the PNG text rasteriser ([`super::raster`]).
pub fn face() -> ab_glyph::FontRef<'static> {
    ab_glyph::FontRef::try_from_slice(DEJAVU_SANS)
        .expect("assets/fonts/DejaVuSans.ttf is a valid font")
}

/// Register the shipped font (idempotent; cheap after the first call).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_err() {
            panic!("assets/fonts/DejaVuSans.ttf is not a valid font");
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn shipped_font_parses() {
        super::register();
        let _ = super::face();
    }
}
