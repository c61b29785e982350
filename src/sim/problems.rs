//! Typed configuration problems, collected with their JSON path.
//!
//! Validation never stops at the first problem: each check pushes a [`Problem`] and the
//! caller reports them all, each with the JSON path where it was found.

use std::fmt;

/// Largest time or cost a model may give \[ns\] (1,000 s): sums of a few of them stay far
/// inside the 213 days a `u64` of picoseconds holds.
pub const MAX_TIME_NS: f64 = 1e12;

/// One thing wrong with a configuration value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// JSON path of the offending value, e.g. `nics[0].rx_ring_slots`.
    pub path: String,
    /// Why it is wrong, e.g. `must be at least 1 slot, got 0`.
    pub reason: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at `{}`: {}", self.path, self.reason)
    }
}

/// Collector of problems under a path prefix.
#[derive(Debug, Default)]
pub struct Problems {
    prefix: Vec<String>,
    /// Problems found so far.
    pub list: Vec<Problem>,
}

impl Problems {
    /// An empty collector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Run `f` with `seg` appended to the path (`.name` or `[i]`).
    pub fn at<R>(&mut self, seg: impl Into<String>, f: impl FnOnce(&mut Self) -> R) -> R {
        self.prefix.push(seg.into());
        let r = f(self);
        self.prefix.pop();
        r
    }

    /// The current path joined, e.g. `nics[0].driver`.
    pub fn path(&self) -> String {
        let mut s = String::new();
        for seg in &self.prefix {
            if !seg.starts_with('[') && !s.is_empty() {
                s.push('.');
            }
            s.push_str(seg);
        }
        s
    }

    /// Record a problem at `field` under the current path.
    pub fn push(&mut self, field: &str, reason: impl Into<String>) {
        let mut path = self.path();
        if !field.is_empty() {
            if !path.is_empty() && !field.starts_with('[') {
                path.push('.');
            }
            path.push_str(field);
        }
        self.list.push(Problem {
            path,
            reason: reason.into(),
        });
    }

    /// Require `v > 0` and finite.
    pub fn positive(&mut self, field: &str, v: f64, unit: &str) {
        if !(v.is_finite() && v > 0.0) {
            self.push(field, format!("must be greater than 0 {unit}, got {v}"));
        }
    }

    /// Require a period or time step of at least 1 ns and at most [`MAX_TIME_NS`]: a
    /// shorter one would not advance simulated time (picoseconds), a longer one would
    /// overflow it.
    pub fn period_ns(&mut self, field: &str, v: f64) {
        if !(v.is_finite() && (1.0..=MAX_TIME_NS).contains(&v)) {
            self.push(field, format!("must be 1 to {MAX_TIME_NS:e} ns, got {v}"));
        }
    }

    /// Require a time or cost of 0 to [`MAX_TIME_NS`] ns.
    pub fn time_ns(&mut self, field: &str, v: f64) {
        if !(v.is_finite() && (0.0..=MAX_TIME_NS).contains(&v)) {
            self.push(field, format!("must be 0 to {MAX_TIME_NS:e} ns, got {v}"));
        }
    }

    /// Require `v >= 0` and finite.
    pub fn non_negative(&mut self, field: &str, v: f64, unit: &str) {
        if !(v.is_finite() && v >= 0.0) {
            self.push(field, format!("must be 0 {unit} or more, got {v}"));
        }
    }

    /// Require an integer capacity of at least `min`.
    pub fn at_least(&mut self, field: &str, v: u64, min: u64, unit: &str) {
        if v < min {
            self.push(field, format!("must be at least {min} {unit}, got {v}"));
        }
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}
