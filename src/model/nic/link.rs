//! Ethernet links: line rate and serialization time.
//!
//! Every frame occupies the wire for its own bytes plus 8 bytes of preamble and 12 bytes
//! of inter-frame gap (IEEE 802.3), so the line rate in frames/s for `b`-byte frames is
//! `line_rate_bps / ((b + 20) * 8)`: 148,809.5 fps for 64-byte frames at 100 Mbit/s,
//! 20,161.3 fps for 600-byte frames, 1,488,095 fps at 1 Gbit/s.

use crate::sim::time::SimTime;

/// Preamble (8) plus inter-frame gap (12) carried on the wire with every frame \[bytes\].
pub const WIRE_OVERHEAD_BYTES: u32 = 20;

/// A point-to-point link of a given line rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// Line rate [bit/s].
    pub line_rate_bps: f64,
    ps_per_byte: f64,
    /// `ps_per_byte` when it is a whole number below 2^20 (10 Mbit/s: 800,000; 100
    /// Mbit/s: 80,000; 1 Gbit/s: 8,000), else 0: the times are then computed in integers,
    /// equal to the floating-point ones (every product stays below 2^53).
    ps_per_byte_int: u64,
}

impl Link {
    /// A link of `line_rate_bps` bit/s (must be > 0).
    pub fn new(line_rate_bps: f64) -> Link {
        let ps_per_byte = 8.0 * 1e12 / line_rate_bps;
        let whole = ps_per_byte.fract() == 0.0 && ps_per_byte < (1u64 << 20) as f64;
        Link {
            line_rate_bps,
            ps_per_byte,
            ps_per_byte_int: if whole { ps_per_byte as u64 } else { 0 },
        }
    }

    /// Time a `frame_bytes` frame occupies the wire, preamble and gap included.
    #[inline]
    pub fn wire_time(&self, frame_bytes: u32) -> SimTime {
        self.bytes_time(frame_bytes + WIRE_OVERHEAD_BYTES)
    }

    /// Time `bytes` bytes take on the wire (no preamble or gap added).
    #[inline]
    pub fn bytes_time(&self, bytes: u32) -> SimTime {
        if self.ps_per_byte_int != 0 {
            return SimTime(bytes as u64 * self.ps_per_byte_int);
        }
        SimTime((bytes as f64 * self.ps_per_byte + 0.5) as u64)
    }

    /// Line rate in frames/s for frames of `frame_bytes` (mean size for a mix).
    pub fn line_rate_fps(&self, frame_bytes: f64) -> f64 {
        self.line_rate_bps / ((frame_bytes + WIRE_OVERHEAD_BYTES as f64) * 8.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_rates_match_the_standard_figures() {
        let fe = Link::new(100e6);
        assert!((fe.line_rate_fps(64.0) - 148_809.52).abs() < 0.01);
        assert!((fe.line_rate_fps(600.0) - 20_161.29).abs() < 0.01);
        assert!((Link::new(1e9).line_rate_fps(64.0) - 1_488_095.2).abs() < 0.1);
        assert_eq!(fe.wire_time(64), SimTime(6_720_000)); // 84 bytes * 80 ns
    }

    #[test]
    fn integer_times_equal_the_floating_point_ones() {
        // Whole ps per byte (10 Mbit/s .. 1 Gbit/s) take the integer path; the result
        // must be what the rounded floating-point product gives, for every frame size.
        for bps in [10e6, 100e6, 1e9, 40e9 / 3.0, 2.5e9] {
            let l = Link::new(bps);
            let p = 8.0 * 1e12 / bps;
            for b in (0..70_000u32).step_by(7).chain([u32::MAX / 2]) {
                let float = SimTime((b as f64 * p + 0.5) as u64);
                if p * (b as f64) < 2f64.powi(53) {
                    assert_eq!(l.bytes_time(b), float, "{bps} bit/s, {b} bytes");
                }
            }
        }
    }

    #[test]
    fn wire_time_is_the_frame_plus_preamble_and_gap_at_the_line_rate() {
        let fe = Link::new(100e6);
        // 64 bytes at 100 Mbit/s (80 ns per byte): 5.12 us of frame, plus 20 bytes of
        // preamble and gap (1.6 us) = 6.72 us on the wire.
        assert_eq!(fe.bytes_time(64), SimTime(5_120_000));
        assert_eq!(fe.wire_time(64), SimTime(6_720_000));
        assert_eq!(fe.wire_time(64).0 - fe.bytes_time(64).0, 1_600_000);
        // 1,518 bytes at 10 Mbit/s: 1,538 x 800 ns = 1,230.4 us.
        assert_eq!(Link::new(10e6).wire_time(1518), SimTime(1_230_400_000));
        // 64 bytes at 1 Gbit/s: 84 x 8 ns = 672 ns.
        assert_eq!(Link::new(1e9).wire_time(64), SimTime(672_000));
        // A zero-byte frame still costs its preamble and gap.
        assert_eq!(fe.wire_time(0), SimTime(1_600_000));
    }

    #[test]
    fn a_rate_without_whole_picoseconds_per_byte_rounds_to_the_nearest() {
        // OC-3's 155.52 Mbit/s: 8e12 / 155.52e6 = 51,440.329... ps per byte.
        let oc3 = Link::new(155.52e6);
        // 64 bytes: 3,292,181.07 ps -> 3,292,181; 84 bytes: 4,320,987.65 -> 4,320,988.
        assert_eq!(oc3.bytes_time(64), SimTime(3_292_181));
        assert_eq!(oc3.wire_time(64), SimTime(4_320_988));
        // The frame rate is the inverse of the wire time: 155.52e6 / 672 bits.
        assert!((oc3.line_rate_fps(64.0) - 231_428.571).abs() < 1e-3);
        let from_wire = 1e12 / oc3.wire_time(64).0 as f64;
        assert!((from_wire / oc3.line_rate_fps(64.0) - 1.0).abs() < 1e-6);
    }
}
