//! Latency over time: per time bucket, the number of packets and their average and
//! maximum latency, by arrival time. Shows periodic spikes (a statistics harvest, a
//! clock callout) that averages hide.
//!
//! Parameter: the bucket width (`timeline.bucket_ms` in a scenario). Memory is one
//! bucket per width of simulated time, fixed by the run length, not by the packet rate.
//!
//! Output: `timeline.csv` (`variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us`)
//! and, in results.json, a summary per point: the spikes (buckets whose maximum is
//! above ten times the median bucket maximum) and their mean spacing.

use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// One bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bucket {
    /// Packets that arrived in it and were delivered.
    pub packets: u64,
    sum_ns: f64,
    max: SimTime,
}

/// A latency timeline.
#[derive(Clone, Debug)]
pub struct Timeline {
    width: SimTime,
    buckets: Vec<Bucket>,
}

/// Buckets of `width` a timeline covering `span` holds: one per width, and one more
/// (a packet that arrives at `span` itself).
pub fn bucket_count(width: SimTime, span: SimTime) -> usize {
    (span.0 / width.0.max(1) + 1) as usize
}

/// One row of timeline.csv.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineRow {
    /// Variant.
    pub variant: String,
    /// Offered load [% of line rate].
    pub load_pct: f64,
    /// Start of the bucket \[ms\].
    pub t_ms: f64,
    /// Packets that arrived in the bucket.
    pub packets: u64,
    /// Their mean latency \[us\].
    pub avg_latency_us: f64,
    /// Their largest latency \[us\].
    pub max_latency_us: f64,
}

/// What results.json says about a timeline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineSummary {
    /// Bucket width \[ms\].
    pub bucket_ms: f64,
    /// Buckets with packets.
    pub buckets: f64,
    /// Latency above which a bucket counts as a spike: 10 x the median bucket maximum \[us\].
    pub spike_threshold_us: f64,
    /// Number of spike buckets.
    pub spikes: f64,
    /// Mean time between the starts of consecutive spikes \[ms\] (0 with fewer than two).
    pub mean_spike_interval_ms: f64,
    /// Largest bucket maximum \[us\].
    pub max_latency_us: f64,
}

impl Timeline {
    /// A timeline of `width` buckets covering `span`.
    pub fn new(width: SimTime, span: SimTime) -> Timeline {
        Timeline {
            width,
            buckets: vec![Bucket::default(); bucket_count(width, span)],
        }
    }

    /// A packet that arrived at `t_in` was delivered after `lat`.
    #[inline]
    pub fn record(&mut self, t_in: SimTime, lat: SimTime) {
        let i = (t_in.0 / self.width.0.max(1)) as usize;
        if let Some(b) = self.buckets.get_mut(i) {
            b.packets += 1;
            b.sum_ns += lat.as_ns_f64();
            b.max = b.max.max(lat);
        }
    }

    /// Buckets held \[count\]: one per width of the run's span, and one more.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// Rows for timeline.csv (buckets with packets), in a vector of exactly their
    /// number (a vector grown row by row held up to twice as many).
    pub fn rows(&self, variant: &str, load_pct: f64) -> Vec<TimelineRow> {
        let mut rows = Vec::with_capacity(self.buckets.iter().filter(|b| b.packets > 0).count());
        rows.extend(
            self.buckets
                .iter()
                .enumerate()
                .filter(|(_, b)| b.packets > 0)
                .map(|(i, b)| TimelineRow {
                    variant: variant.to_string(),
                    load_pct,
                    t_ms: (i as u64 * self.width.0) as f64 / 1e9,
                    packets: b.packets,
                    avg_latency_us: b.sum_ns / b.packets as f64 / 1e3,
                    max_latency_us: b.max.as_us_f64(),
                }),
        );
        rows
    }

    /// Spikes and their spacing.
    pub fn summary(&self) -> TimelineSummary {
        let used: Vec<(usize, &Bucket)> = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, b)| b.packets > 0)
            .collect();
        let mut maxes: Vec<f64> = used.iter().map(|(_, b)| b.max.as_us_f64()).collect();
        maxes.sort_by(|a, b| a.total_cmp(b));
        let median = maxes.get(maxes.len() / 2).copied().unwrap_or(0.0);
        let threshold = 10.0 * median;
        let width_ms = self.width.0 as f64 / 1e9;
        // A spike is a run of consecutive buckets above the threshold; keep its start.
        let mut starts: Vec<usize> = Vec::new();
        let mut prev: Option<usize> = None;
        for (i, b) in &used {
            if b.max.as_us_f64() > threshold && threshold > 0.0 {
                if prev != Some(i.wrapping_sub(1)) {
                    starts.push(*i);
                }
                prev = Some(*i);
            }
        }
        let interval = if starts.len() >= 2 {
            (starts[starts.len() - 1] - starts[0]) as f64 * width_ms / (starts.len() - 1) as f64
        } else {
            0.0
        };
        TimelineSummary {
            bucket_ms: width_ms,
            buckets: used.len() as f64,
            spike_threshold_us: threshold,
            spikes: starts.len() as f64,
            mean_spike_interval_ms: interval,
            max_latency_us: maxes.last().copied().unwrap_or(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spikes_and_their_period_are_found() {
        let ms = |x: u64| SimTime(x * 1_000_000_000);
        let mut t = Timeline::new(ms(1), ms(100));
        for i in 0..100 {
            let lat = if i % 25 == 3 {
                SimTime(5_000_000_000)
            } else {
                SimTime(50_000_000)
            };
            t.record(ms(i), lat);
        }
        let s = t.summary();
        assert_eq!(s.spikes, 4.0);
        assert!((s.mean_spike_interval_ms - 25.0).abs() < 1e-9);
        assert_eq!(t.rows("v", 1.0).len(), 100);
    }
}
