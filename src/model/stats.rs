//! Streamed statistics: per-flow counters and latency distributions.
//!
//! Nothing is kept per packet. Latency goes into an HDR histogram (3 significant
//! digits, 1 ns to 1,000 s) for percentiles, plus exact min, max, and a Welford running
//! mean and variance, so memory does not grow with the number of frames.
//!
//! The histogram is made at a flow's first delivered frame and grows (hdrhistogram's
//! auto-resize) only as far as the largest latency seen: about 16 KiB for latencies
//! under 2 us, 8 KiB more per doubling of the largest, 248 KiB to span the full 1,000
//! s. Made up front over the full range it cost those 248 KiB per histogram, whatever
//! the run, held twice at the end of a run (about 0.5 MB a flow: 10,000 flows took 5
//! GB for a 500-frame run). A resized histogram keeps every value where the full one has it (the
//! bucket of a value depends only on the lowest value and the significant digits, not
//! on the highest), so percentiles are the same. A latency never exceeds the run
//! (sending plus drain), so [`latency_bytes_max`] bounds a histogram's memory from the
//! run alone, for the memory estimate made before a sweep.
//!
//! Latency is measured as test equipment measures a store-and-forward device (RFC 1242
//! "LIFO" latency): from the last bit of the frame entering the input port to the first
//! bit of it leaving the output port; or, with the scenario's `latency_from`
//! `"first-bit"` ([`LatencyFrom`]), from the first bit of the input frame ("FIFO"), as
//! a tester set up for bit-forwarding devices reports it.

use crate::sim::time::SimTime;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency the histogram can hold \[ns\] (1,000 s); larger values are clamped.
const HIST_MAX_NS: u64 = 1_000_000_000_000;

/// Where packets were lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// RX descriptor ring full on arrival -- counter.
    pub rx_ring: u64,
    /// ipintrq (IFQ_MAXLEN) full when the driver handed the packet up -- counter.
    pub ipintrq: u64,
    /// Output interface's if_snd full -- counter.
    pub if_snd: u64,
    /// The screend-like user process's queue full -- counter.
    pub user_queue: u64,
    /// NIC receive FIFO full because DMA could not keep up -- counter.
    pub rx_fifo: u64,
    /// Transmission aborted: the transmit FIFO ran dry (underrun) -- counter.
    pub tx_underrun: u64,
    /// Freed from the rings by a chip reset (dc_init) -- counter.
    pub reset: u64,
    /// Dropped by an XDP program in the driver's poll (XDP_DROP) -- counter.
    pub xdp: u64,
    /// Dropped by a netfilter rule before routing (`kernel.prerouting_drop`) -- counter.
    pub netfilter: u64,
    /// Received and freed by a user-space application that owns the NIC (a DPDK
    /// poll-mode driver's rxonly engine) -- counter.
    pub application: u64,
}

/// Where a frame was dropped: one of [`DropCounts`]'s counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropSite {
    /// RX descriptor ring full on arrival.
    RxRing,
    /// ipintrq (or the backlog) full.
    Ipintrq,
    /// The output interface's send queue full.
    IfSnd,
    /// The user process's queue full.
    UserQueue,
    /// The NIC's receive FIFO full.
    RxFifo,
    /// Aborted by a transmit underrun.
    TxUnderrun,
    /// Freed by a chip reset.
    Reset,
    /// Dropped by an XDP program (XDP_DROP).
    Xdp,
    /// Dropped by a netfilter rule before routing.
    Netfilter,
    /// Freed by a user-space application that owns the NIC (DPDK's rxonly).
    Application,
}

impl DropCounts {
    /// Count one frame dropped at `site`.
    #[inline(always)]
    pub fn count(&mut self, site: DropSite) {
        let c = match site {
            DropSite::RxRing => &mut self.rx_ring,
            DropSite::Ipintrq => &mut self.ipintrq,
            DropSite::IfSnd => &mut self.if_snd,
            DropSite::UserQueue => &mut self.user_queue,
            DropSite::RxFifo => &mut self.rx_fifo,
            DropSite::TxUnderrun => &mut self.tx_underrun,
            DropSite::Reset => &mut self.reset,
            DropSite::Xdp => &mut self.xdp,
            DropSite::Netfilter => &mut self.netfilter,
            DropSite::Application => &mut self.application,
        };
        *c += 1;
    }

    /// Sum over sites.
    pub fn total(&self) -> u64 {
        self.rx_ring
            + self.ipintrq
            + self.if_snd
            + self.user_queue
            + self.rx_fifo
            + self.tx_underrun
            + self.reset
            + self.xdp
            + self.netfilter
            + self.application
    }

    /// Add another set.
    pub fn add(&mut self, o: &DropCounts) {
        self.rx_ring += o.rx_ring;
        self.ipintrq += o.ipintrq;
        self.if_snd += o.if_snd;
        self.user_queue += o.user_queue;
        self.rx_fifo += o.rx_fifo;
        self.tx_underrun += o.tx_underrun;
        self.reset += o.reset;
        self.xdp += o.xdp;
        self.netfilter += o.netfilter;
        self.application += o.application;
    }
}

/// Significant digits of the latency histogram.
const HIST_SIGFIG: u8 = 3;

/// An empty latency histogram that grows as values come (1 ns to 2 ns at first).
fn new_hist() -> Histogram<u64> {
    Histogram::new(HIST_SIGFIG).expect("3 significant digits are valid")
}

/// Largest memory of one latency histogram in a run whose sending plus drain time is
/// `horizon` \[bytes\]: the histogram spanning 1 ns to the horizon (at most to the 1,000
/// s cap), which no latency of the run can exceed.
pub fn latency_bytes_max(horizon: SimTime) -> usize {
    let top = (horizon.0 / SimTime::PS_PER_NS).clamp(2, HIST_MAX_NS);
    let h = Histogram::<u64>::new_with_bounds(1, top, HIST_SIGFIG).expect("valid bounds");
    h.distinct_values() * std::mem::size_of::<u64>()
}

/// Latency distribution of delivered packets.
#[derive(Clone, Debug)]
pub struct LatencyStats {
    /// Made at the first sample, grown to the largest (see the module doc).
    hist: Option<Histogram<u64>>,
    count: u64,
    mean_ns: f64,
    m2: f64,
    min: SimTime,
    max: SimTime,
}

impl Default for LatencyStats {
    fn default() -> Self {
        LatencyStats {
            hist: None,
            count: 0,
            mean_ns: 0.0,
            m2: 0.0,
            min: SimTime(u64::MAX),
            max: SimTime::ZERO,
        }
    }
}

/// Summary of a latency distribution \[us\].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Smallest \[us\].
    pub min: f64,
    /// Mean \[us\].
    pub avg: f64,
    /// Largest \[us\].
    pub max: f64,
    /// Population standard deviation \[us\].
    pub stddev: f64,
    /// Median \[us\] (histogram, 3 significant digits).
    pub p50: f64,
    /// 99th percentile \[us\].
    pub p99: f64,
    /// 99.9th percentile \[us\].
    pub p999: f64,
    /// Share of the delivered frames whose latency is at most the scenario's
    /// `latency_slo_us` (0 to 1; from the histogram, so a frame within 0.1 % of the
    /// objective may count on either side); absent without an objective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_under_slo: Option<f64>,
}

impl LatencyStats {
    /// Record one latency.
    #[inline]
    pub fn record(&mut self, lat: SimTime) {
        let ns_f = lat.as_ns_f64();
        self.count += 1;
        let d = ns_f - self.mean_ns;
        self.mean_ns += d / self.count as f64;
        self.m2 += d * (ns_f - self.mean_ns);
        self.min = self.min.min(lat);
        self.max = self.max.max(lat);
        let ns = (lat.0 / SimTime::PS_PER_NS).clamp(1, HIST_MAX_NS);
        let hist = self.hist.get_or_insert_with(new_hist);
        if hist.record(ns).is_err() {
            // Growing to at most 1e12 cannot fail with a 64-bit usize (the only error
            // of an auto-resizing record); were it to, the value is clamped to the
            // top as before the histograms grew.
            hist.saturating_record(ns);
        }
    }

    /// Merge another distribution into this one (Chan et al. parallel variance).
    pub fn merge(&mut self, o: &LatencyStats) {
        if o.count == 0 {
            return;
        }
        let n = self.count + o.count;
        let d = o.mean_ns - self.mean_ns;
        self.mean_ns += d * o.count as f64 / n as f64;
        self.m2 += o.m2 + d * d * self.count as f64 * o.count as f64 / n as f64;
        self.count = n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        match (&mut self.hist, &o.hist) {
            (Some(h), Some(oh)) => {
                h.add(oh)
                    .expect("growing to at most 1e12 fits a 64-bit usize, the only error");
            }
            (None, Some(oh)) => self.hist = Some(oh.clone()),
            (_, None) => {}
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Summary in microseconds; all zero when nothing was recorded (as SmartBits prints).
    ///
    /// Percentiles come from the histogram: the highest value of the bucket that holds
    /// the quantile, within 0.1 % (3 significant digits) and 1 ns of the exact order
    /// statistic for latencies up to 1,000 s (the histogram's top; longer latencies are
    /// recorded as 1,000 s, so a percentile above that is 1,000 s), and clamped to the exact observed range [min, max], so that a
    /// percentile never lies outside what was seen (when every frame has the same
    /// latency, every percentile is that latency).
    pub fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        let (lo, hi) = (self.min.as_us_f64(), self.max.as_us_f64());
        let q = |p: f64| {
            let v = self.hist.as_ref().map_or(0, |h| h.value_at_quantile(p));
            (v as f64 / 1e3).clamp(lo, hi)
        };
        LatencySummary {
            min: lo,
            avg: self.mean_ns / 1e3,
            max: hi,
            stddev: (self.m2 / self.count as f64).sqrt() / 1e3,
            p50: q(0.5),
            p99: q(0.99),
            p999: q(0.999),
            share_under_slo: None,
        }
    }

    /// [`LatencyStats::summary`] with the share of frames whose latency is at most
    /// `slo` (none without an objective, or when nothing was delivered).
    pub fn summary_with_slo(&self, slo: Option<SimTime>) -> LatencySummary {
        let mut s = self.summary();
        if let (Some(slo), Some(h)) = (slo, &self.hist) {
            let top = (slo.0 / SimTime::PS_PER_NS).clamp(1, HIST_MAX_NS);
            s.share_under_slo = Some(h.count_between(0, top) as f64 / self.count as f64);
        }
        s
    }
}

/// Where a frame's latency starts (RFC 1242, section 3.8): the tester's convention.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum LatencyFrom {
    /// From the last bit of the input frame to the first bit of the output frame:
    /// RFC 1242's latency of a store-and-forward device, as RFC 2544 asks for it
    /// ("LIFO").
    #[default]
    LastBit,
    /// From the first bit of the input frame to the first bit of the output frame:
    /// RFC 1242's latency of a bit-forwarding device ("FIFO"), which for a
    /// store-and-forward device adds the input frame's time on the wire (its bytes,
    /// without preamble).
    FirstBit,
}

/// Everything measured for one flow (or the total over flows).
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    /// Frames the generator sent -- counter.
    pub sent: u64,
    /// Frames that left the output port -- counter.
    pub received: u64,
    /// Of those, frames whose first bit left after the tester stopped sending (during
    /// the drain) -- counter.
    pub drained: u64,
    /// Drops by site -- counters.
    pub drops: DropCounts,
    /// Frames still inside the host when the run ended -- counter.
    pub in_flight_at_end: u64,
    /// Frames received with a sequence number other than the next expected one
    /// (SmartBits counts one after each gap) -- counter.
    pub out_of_sequence: u64,
    next_seq: u64,
    /// Latency of received frames.
    pub latency: LatencyStats,
    /// Request/response flows: round-trip time of each transaction at the peer.
    pub rtt: Option<Box<LatencyStats>>,
}

impl FlowStats {
    /// A frame of sequence number `seq` left the host after `lat`.
    #[inline]
    pub fn deliver(&mut self, seq: u64, lat: SimTime) {
        self.received += 1;
        if seq != self.next_seq {
            self.out_of_sequence += 1;
        }
        self.next_seq = seq + 1;
        self.latency.record(lat);
    }

    /// Add another flow's counts (for the `Total` row).
    pub fn merge(&mut self, o: &FlowStats) {
        self.sent += o.sent;
        self.received += o.received;
        self.drained += o.drained;
        self.drops.add(&o.drops);
        self.in_flight_at_end += o.in_flight_at_end;
        self.out_of_sequence += o.out_of_sequence;
        self.latency.merge(&o.latency);
        if let Some(r) = &o.rtt {
            self.rtt.get_or_insert_with(Default::default).merge(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_summary_is_exact_for_mean_and_extremes() {
        let mut l = LatencyStats::default();
        for us in [10.0, 20.0, 30.0, 40.0] {
            l.record(SimTime::from_ns_f64(us * 1e3));
        }
        let s = l.summary();
        assert_eq!((s.min, s.max), (10.0, 40.0));
        assert!((s.avg - 25.0).abs() < 1e-9);
        assert!((s.stddev - 125f64.sqrt()).abs() < 1e-9); // population sd of 10,20,30,40
        let mut m = LatencyStats::default();
        m.merge(&l);
        m.merge(&l);
        assert!((m.summary().stddev - s.stddev).abs() < 1e-9);
    }

    #[test]
    fn percentiles_stay_inside_the_observed_range() {
        // Every frame takes 29.10012 us: the histogram's bucket (3 significant digits)
        // runs to 29.103 us, but no percentile may exceed the largest latency seen.
        let mut l = LatencyStats::default();
        for _ in 0..1000 {
            l.record(SimTime(29_100_120));
        }
        let s = l.summary();
        assert_eq!((s.p50, s.p99, s.p999), (s.min, s.min, s.min), "{s:?}");
        assert_eq!(s.max, 29.10012);
        // A spread: 1..=10,000 ns. The exact p99 is 9,900 ns; the histogram's answer is
        // within 0.1 % of it (3 significant digits), and p999 is at most the max.
        let mut l = LatencyStats::default();
        for ns in 1..=10_000u64 {
            l.record(SimTime(ns * 1000));
        }
        let s = l.summary();
        assert!((s.p99 - 9.9).abs() <= 9.9e-3, "{s:?}");
        assert!((s.p50 - 5.0).abs() <= 5e-3, "{s:?}");
        assert!(s.p999 <= s.max && s.p50 >= s.min, "{s:?}");
    }

    #[test]
    fn the_share_under_an_objective_counts_frames_at_most_it() {
        // Latencies 1 to 20 us in 1 us steps: 10 of the 20 are at most 10 us (10 us
        // itself included, as "at most" says), so 0.5; 11 of them at most 10.5 us is
        // still 10 (0.5); everything at most 20 us (1.0); none at most 0.5 us (0.0).
        // No objective, no share; nothing delivered, no share either.
        let mut l = LatencyStats::default();
        for us in 1..=20u64 {
            l.record(SimTime(us * 1_000_000));
        }
        let share = |slo_ns: u64| {
            l.summary_with_slo(Some(SimTime(slo_ns * 1_000)))
                .share_under_slo
                .unwrap()
        };
        assert_eq!(share(10_000), 0.5);
        assert_eq!(share(10_500), 0.5);
        assert_eq!(share(20_000), 1.0);
        assert_eq!(share(500), 0.0);
        assert_eq!(l.summary_with_slo(None).share_under_slo, None);
        assert_eq!(l.summary().share_under_slo, None);
        let empty = LatencyStats::default();
        assert_eq!(
            empty
                .summary_with_slo(Some(SimTime(1_000_000)))
                .share_under_slo,
            None
        );
    }

    #[test]
    fn grown_histogram_gives_the_full_ranges_percentiles_in_less_memory() {
        // The histogram made up front over 1 ns..1e12 ns (as before the resize) against
        // the one grown on demand, fed the same latencies: 1 ns to 1,000 s and beyond
        // (clamped to the cap), spread over every octave.
        let mut full = Histogram::<u64>::new_with_bounds(1, HIST_MAX_NS, 3).unwrap();
        let mut l = LatencyStats::default();
        assert!(l.hist.is_none(), "nothing allocated before the first frame");
        let mut ns = 1u64;
        while ns < 4 * HIST_MAX_NS {
            l.record(SimTime(ns * SimTime::PS_PER_NS));
            full.saturating_record(ns.clamp(1, HIST_MAX_NS));
            ns = ns * 3 / 2 + 1;
        }
        let grown = l.hist.as_ref().unwrap();
        for i in 0..=1000 {
            let q = i as f64 / 1000.0;
            assert_eq!(grown.value_at_quantile(q), full.value_at_quantile(q), "{q}");
        }
        // Merged into an empty one, still the same.
        let mut m = LatencyStats::default();
        m.merge(&l);
        assert_eq!(m.summary(), l.summary());
        // Memory: 2,048 counts of 8 bytes for latencies under 2,048 ns; the full range
        // has 31 buckets of 1,024 counts (2,048 x 2^29 > 1e12), 248 KiB.
        let mut small = LatencyStats::default();
        small.record(SimTime(1_500 * SimTime::PS_PER_NS));
        assert_eq!(small.hist.as_ref().unwrap().distinct_values() * 8, 16 << 10);
        assert_eq!(full.distinct_values() * 8, 31 * 1024 * 8);
        assert_eq!(latency_bytes_max(SimTime(u64::MAX)), 31 * 1024 * 8);
        // A run of 1 ms: 2,048 x 2^9 > 1e6 ns, so 10 buckets, 11 x 1,024 counts.
        assert_eq!(
            latency_bytes_max(SimTime::from_secs_f64(1e-3)),
            11 * 1024 * 8
        );
    }

    #[test]
    fn out_of_sequence_counts_gaps() {
        let mut f = FlowStats::default();
        for seq in [0, 1, 3, 4, 7] {
            f.deliver(seq, SimTime(1));
        }
        assert_eq!(f.out_of_sequence, 2);
    }
}
