//! Simulated time: an integer count of picoseconds.
//!
//! Picoseconds (not nanoseconds) because the inter-arrival times of constant-rate
//! SmartBits traffic are not whole nanoseconds (at 26 % of 100 Mbit/s with 64-byte frames
//! a frame starts every 25,846.15 ns) and rounding them to ns would drift the offered rate.
//! A `u64` of picoseconds spans 213 days of simulated time.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, or a duration, in picoseconds \[ps\].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    /// Time zero: the start of a load point.
    pub const ZERO: SimTime = SimTime(0);
    /// Picoseconds per nanosecond.
    pub const PS_PER_NS: u64 = 1_000;
    /// Picoseconds per second.
    pub const PS_PER_S: u64 = 1_000_000_000_000;

    /// A duration of `ns` nanoseconds, rounded to the nearest picosecond; negative and
    /// non-finite values become zero (costs are validated before they get here).
    pub fn from_ns_f64(ns: f64) -> SimTime {
        if ns.is_finite() && ns > 0.0 {
            SimTime((ns * Self::PS_PER_NS as f64 + 0.5) as u64)
        } else {
            SimTime::ZERO
        }
    }

    /// A duration of `s` seconds, rounded to the nearest picosecond.
    pub fn from_secs_f64(s: f64) -> SimTime {
        Self::from_ns_f64(s * 1e9)
    }

    /// This time in nanoseconds.
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / Self::PS_PER_NS as f64
    }

    /// This time in microseconds.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// This time in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / Self::PS_PER_S as f64
    }

    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_sub(self, earlier: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(earlier.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        debug_assert!(self.0 >= rhs.0, "simulated time went backwards");
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} us", self.as_us_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_to_the_picosecond() {
        assert_eq!(SimTime::from_ns_f64(25_846.153_846).0, 25_846_154);
        assert_eq!(SimTime::from_secs_f64(10.0).0, 10 * SimTime::PS_PER_S);
        assert_eq!(SimTime::from_ns_f64(-3.0), SimTime::ZERO);
        assert!((SimTime(1_500_000).as_us_f64() - 1.5).abs() < 1e-12);
    }
}
