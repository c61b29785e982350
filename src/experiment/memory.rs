//! The memory a sweep will need, estimated before it starts, and the machine's memory
//! it is checked against.
//!
//! A sweep holds, at once: the runs being simulated (one per worker thread), each with
//! its flows' counters and latency histograms, and the figures of every finished run
//! (kept until results.json is written). Once nothing was estimated: 10,000
//! flows took 5 GB for a 500-frame run whose time estimate said "0.00 s". Now
//! `irqsim run` prints this estimate beside the time one and refuses, with exit 2 and
//! the figures, a sweep whose estimate exceeds the memory the kernel says is available
//! ([`available`]): the rule is `estimate > MemAvailable` (MemTotal when the kernel
//! gives no MemAvailable, and the process's address-space limit, `ulimit -v`, when that
//! is less); where neither is known there is no check. Captures are checked before any
//! is read, from their sizes on disk ([`crate::experiment::load::captures_fit`]).
//!
//! The figures per flow and per run were measured with `/usr/bin/time -f %M` (peak
//! resident memory) on `irqsim run --threads 1 --no-plots`, 64-byte frames through the
//! p3-448-dc21143 model, on the 2-core machine of docs/performance.md:
//! - 1 flow, 1 point: 7.4 MB (the process);
//! - 10,000 flows, 1 point: 64 MB, so about 5.7 KB per flow in a run (its source,
//!   counters and a small histogram) -- [`FLOW_LIVE_BYTES`];
//! - 10,000 points of 1 flow: 374 MB; 2,000 points of 100 flows: 1,082 MB; so about
//!   32 KB per finished run and 5 KB more per flow of it, up to the writing of
//!   results.json -- [`RUN_KEPT_BYTES`], [`FLOW_KEPT_BYTES`].
//!
//! A flow's latency histograms grow with the latencies they see, so two totals are
//! given: [`MemoryEstimate::total`] with every histogram at its largest for the run
//! ([`crate::model::stats::latency_bytes_max`]: latencies up to the run's length, as in a
//! deep livelock), an upper bound; and [`MemoryEstimate::least`] with every histogram
//! as it starts (latencies under 2 us), what the sweep needs whatever its latencies.
//! A sweep whose *least* exceeds the available memory cannot fit and is refused; one
//! whose upper bound alone exceeds it runs with a warning (10,000 flows of a 10 s run
//! are bounded at 2.2 GB but peaked at 77 MB: refusing on the bound would turn away
//! sweeps that fit).

use crate::config::scenario::Experiment;
use crate::sim::time::SimTime;

/// The process before any run \[bytes\]: 7.4 MB measured, rounded up.
pub const PROCESS_BYTES: u64 = 8 << 20;

/// A worker thread while it simulates, besides its flows \[bytes\]: its stack (2 MiB,
/// rayon's default) -- the host's rings and queues are within the process's figure.
pub const RUN_LIVE_BYTES: u64 = 2 << 20;

/// A flow in a run being simulated, besides its latency histograms \[bytes\]: 5.7 KB
/// measured, rounded up.
pub const FLOW_LIVE_BYTES: u64 = 6 << 10;

/// A finished run's figures, kept until the results are written \[bytes\]: 32 KB
/// measured.
pub const RUN_KEPT_BYTES: u64 = 32 << 10;

/// Each flow of a finished run, kept until the results are written \[bytes\]: 5 KB
/// measured.
pub const FLOW_KEPT_BYTES: u64 = 5 << 10;

/// What the inputs a sweep holds for its whole length take \[bytes\]: each replayed
/// capture's frames (a [`crate::model::capture::ReplayFrame`] each, counted once per
/// shared array: the loader makes one per capture and input link rate, which every flow
/// and variant replaying it shares, [`crate::config::capture::FramesCache`]) and the
/// rows of the measured
/// tables (a 256 MiB capture was not in the estimate at all). Sizes of the
/// data as held (`size_of` and the strings' lengths), not measured peaks: reading a
/// capture costs more while it is read (its bytes and the records being sorted), and
/// that peak is before the estimate.
pub fn inputs_bytes(exp: &Experiment) -> u64 {
    let mut seen: Vec<*const crate::model::capture::ReplayFrame> = Vec::new();
    let mut total = 0u64;
    for f in exp.variants.iter().flat_map(|v| &v.flows) {
        if let Some(r) = f.arrivals.capture().and_then(|c| c.replay.as_ref()) {
            let p = r.frames.as_ptr();
            if !seen.contains(&p) {
                seen.push(p);
                total += (r.frames.len()
                    * std::mem::size_of::<crate::model::capture::ReplayFrame>())
                    as u64;
            }
        }
    }
    if let Some((_, rows)) = &exp.measured {
        total +=
            (rows.len() * std::mem::size_of::<crate::config::smartbits::MeasuredPoint>()) as u64;
    }
    if let Some((_, rows)) = &exp.measured_rates {
        total += rows
            .iter()
            .map(|r| {
                (std::mem::size_of_val(r) + r.variant.len() + r.figure.len() + r.source.len())
                    as u64
            })
            .sum::<u64>();
    }
    total
}

/// The peak of reading the captures a sweep replays \[bytes\], before it starts: each
/// capture's bytes and its records as parsed
/// ([`crate::config::capture::READ_RECORD_BYTES`] each), counted once per capture (by
/// its FNV-1a) however many flows and variants replay it, all captures together (the
/// loader holds each one read until the last). A 256 MiB capture peaked at
/// 852 MB while the estimate said 10.7 MB; the peak comes and goes before the sweep,
/// so the estimate's total is the larger of it and the sweep's.
pub fn reading_bytes(exp: &Experiment) -> u64 {
    let mut seen: Vec<&str> = Vec::new();
    let mut total = 0u64;
    for c in exp
        .variants
        .iter()
        .flat_map(|v| &v.flows)
        .filter_map(|f| f.arrivals.capture())
    {
        let (Some(id), Some(r)) = (c.fnv1a.as_deref(), c.replay.as_ref()) else {
            continue;
        };
        if !seen.contains(&id) {
            seen.push(id);
            total += r.file_bytes + r.capture_frames * crate::config::capture::READ_RECORD_BYTES;
        }
    }
    total
}

/// The latency timeline of a sweep (`timeline.bucket_ms`) \[bytes\]: (its buckets in
/// one run being simulated, its rows kept for the whole sweep). Counted as held, not
/// measured: a fine timeline (25 us buckets over 5.5 s, 60 runs) was estimated at
/// 1.3 GB, one row per bucket of every run, where the run peaked at 129 MB.
/// - Buckets: [`crate::model::timeline::bucket_count`] for the run's length (sending
///   and drain), a [`crate::model::timeline::Bucket`] (24 bytes) each.
/// - Rows: replication 0 of each variant and point keeps one row per bucket that
///   received a packet, so at most min(buckets of the sending period, frames offered
///   = rates x `duration_s`) rows (every bucket's, for request/response points, whose
///   frames are not known before). A row is held twice while the results are
///   assembled (the runs' vectors and the results' one, each of exactly its rows) and
///   has its variant's name on the heap once (a glibc chunk: the name and 8 bytes
///   rounded up to 16, at least 32): `rows x (2 x 64 + chunk)` bytes. The text of
///   timeline.csv, made once the runs' vectors are gone, is smaller than them (about
///   30 bytes and the variant's name a row, against 64).
pub fn timeline_bytes(exp: &Experiment) -> (u64, u64) {
    use crate::model::timeline::{Bucket, TimelineRow, bucket_count};
    let Some(ms) = exp.timeline_bucket_ms else {
        return (0, 0);
    };
    // As the runner makes them (run_spec).
    let width = SimTime::from_ns_f64(ms * 1e6);
    let duration = SimTime::from_secs_f64(exp.duration_s);
    let span = duration + SimTime::from_secs_f64(exp.drain_s);
    let live = (bucket_count(width, span) * std::mem::size_of::<Bucket>()) as u64;
    let sending = bucket_count(width, duration) as f64;
    let all = bucket_count(width, span) as f64;
    let row = 2 * std::mem::size_of::<TimelineRow>() as u64;
    let kept = exp
        .variants
        .iter()
        .map(|v| {
            let name = if v.name.is_empty() {
                0
            } else {
                (v.name.len() as u64 + 8).div_ceil(16).max(2) * 16
            };
            let rows: f64 = v
                .points
                .iter()
                .map(|p| match p.outstanding {
                    Some(_) => all,
                    None => sending.min((p.offered_pps() * exp.duration_s).ceil()),
                })
                .sum();
            rows as u64 * (row + name)
        })
        .sum();
    (live, kept)
}

/// The memory a sweep will need, in parts \[bytes\].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// One run being simulated.
    pub per_run: u64,
    /// Runs simulated at once (the worker threads).
    pub at_once: u64,
    /// The figures of every run, kept until the results are written.
    pub kept: u64,
    /// The inputs held for the whole sweep ([`inputs_bytes`]).
    pub inputs: u64,
    /// The latency timeline's rows, kept until written ([`timeline_bytes`]; its
    /// buckets, live in each run, are in `per_run`).
    pub timeline: u64,
    /// A traced run's trace, held until written: twice its limit (the events' text,
    /// then the file's text made of it), 0 without a trace ([`MemoryEstimate::with_trace`]).
    pub trace: u64,
    /// The peak of reading the captures, before the sweep ([`reading_bytes`]).
    pub reading: u64,
    /// One run being simulated with each histogram as it starts.
    per_run_least: u64,
    /// Everything: the process, `per_run` x `at_once`, `kept` (histograms at their
    /// largest: an upper bound), `timeline`, `inputs` and `trace`; or the process and
    /// `reading`,
    /// when that is more.
    pub total: u64,
    /// Everything with each histogram as it starts (under 2 us of latency): what the
    /// sweep needs at the least (also at least the process and `reading`).
    pub least: u64,
}

impl MemoryEstimate {
    /// The estimate for `runs` runs of `exp` on `threads` worker threads.
    pub fn new(exp: &Experiment, runs: usize, threads: usize) -> MemoryEstimate {
        // (The variant with the most flows: variants may offer different workloads.)
        let flows = exp
            .variants
            .iter()
            .map(|v| v.flows.len())
            .max()
            .unwrap_or(0) as u64
            + u64::from(exp.variants.iter().any(|v| v.model.sender.is_some()));
        let horizon = SimTime::from_secs_f64(exp.duration_s + exp.drain_s);
        // A closed-loop flow has a round-trip histogram besides its latency one.
        let closed = exp
            .variants
            .iter()
            .flat_map(|v| &v.flows)
            .any(|f| f.arrivals == crate::model::traffic::Arrivals::ClosedLoop);
        let hists = if closed { 2 } else { 1 };
        let hist = crate::model::stats::latency_bytes_max(horizon) as u64;
        let small = crate::model::stats::latency_bytes_max(SimTime(2_000 * SimTime::PS_PER_NS))
            .min(hist as usize) as u64;
        let (buckets, timeline) = timeline_bytes(exp);
        let per_run = RUN_LIVE_BYTES + buckets + flows * (FLOW_LIVE_BYTES + hists * hist);
        let per_run_least = RUN_LIVE_BYTES + buckets + flows * (FLOW_LIVE_BYTES + hists * small);
        let runs = runs as u64;
        let kept = runs * (RUN_KEPT_BYTES + flows * FLOW_KEPT_BYTES);
        let at_once = (threads as u64).clamp(1, runs.max(1));
        MemoryEstimate {
            per_run,
            at_once,
            kept,
            inputs: inputs_bytes(exp),
            timeline,
            trace: 0,
            reading: reading_bytes(exp),
            per_run_least,
            total: 0,
            least: 0,
        }
        .summed()
    }

    /// [`MemoryEstimate::total`] and [`MemoryEstimate::least`] from the parts.
    fn summed(mut self) -> MemoryEstimate {
        let held = |per_run: u64| {
            PROCESS_BYTES
                .saturating_add(per_run.saturating_mul(self.at_once))
                .saturating_add(self.kept)
                .saturating_add(self.timeline)
                .saturating_add(self.inputs)
                .saturating_add(self.trace)
                .max(PROCESS_BYTES.saturating_add(self.reading))
        };
        self.total = held(self.per_run);
        self.least = held(self.per_run_least);
        self
    }

    /// With a traced run of at most `limit_bytes` of trace (`--trace-limit-mb`): the
    /// trace is held until written, beside the sweep's results.
    pub fn with_trace(mut self, limit_bytes: u64) -> MemoryEstimate {
        self.trace = limit_bytes.saturating_mul(2);
        self.summed()
    }

    /// `about 1.2 GB (15 MB per run x 2 at once, 640 MB for the results of 20,000 runs)`.
    pub fn describe(&self, runs: usize) -> String {
        let mut extra = String::new();
        if self.timeline > 0 {
            extra += &format!(", {} for the timeline", bytes(self.timeline));
        }
        if self.inputs > 0 {
            extra += &format!(", {} for captures and tables", bytes(self.inputs));
        }
        if self.trace > 0 {
            extra += &format!(", {} for the trace", bytes(self.trace));
        }
        if self.reading > 0 {
            extra += &format!(
                "; {} while the captures are read, before the sweep",
                bytes(PROCESS_BYTES + self.reading)
            );
        }
        format!(
            "about {} ({} per run x {} at once, {} for the results of {runs} run(s){extra})",
            bytes(self.total),
            bytes(self.per_run),
            self.at_once,
            bytes(self.kept)
        )
    }
}

/// The memory the process may use \[bytes\], and where that figure came from:
/// `MemAvailable` of /proc/meminfo (or `MemTotal` when there is no `MemAvailable`), or
/// the process's address-space limit (`RLIMIT_AS`, `ulimit -v`) when that is less;
/// `None` when neither is known (another system, no limit): then nothing is refused.
pub fn available() -> Option<(u64, &'static str)> {
    let meminfo =
        crate::config::read_limit::read_text(std::path::Path::new("/proc/meminfo"), 64 << 10)
            .ok()
            .and_then(|t| parse_meminfo(&t));
    least(meminfo, address_space_limit())
}

/// The lesser of the kernel's figure and the address-space limit.
fn least(meminfo: Option<(u64, &'static str)>, limit: Option<u64>) -> Option<(u64, &'static str)> {
    let limit = limit.map(|l| {
        (
            l,
            "the process's address-space limit, RLIMIT_AS (ulimit -v)",
        )
    });
    match (meminfo, limit) {
        (Some(m), Some(l)) => Some(if l.0 < m.0 { l } else { m }),
        (m, l) => m.or(l),
    }
}

/// The process's address-space limit (`RLIMIT_AS`) \[bytes\], `None` when unlimited.
fn address_space_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given, nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0;
    (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// [`available`] from the text of /proc/meminfo (`MemAvailable:  1234 kB`).
pub fn parse_meminfo(text: &str) -> Option<(u64, &'static str)> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?.trim();
            let kb: u64 = rest.strip_suffix("kB")?.trim().parse().ok()?;
            kb.checked_mul(1024)
        })
    };
    field("MemAvailable")
        .map(|b| (b, "MemAvailable in /proc/meminfo"))
        .or_else(|| field("MemTotal").map(|b| (b, "MemTotal in /proc/meminfo")))
}

/// A size as people read it: `512 B`, `12.3 KB`, `45.6 MB`, `7.8 GB` (powers of 1,000).
pub fn bytes(b: u64) -> String {
    let f = b as f64;
    if f >= 1e9 {
        format!("{:.1} GB", f / 1e9)
    } else if f >= 1e6 {
        format!("{:.1} MB", f / 1e6)
    } else if f >= 1e3 {
        format!("{:.1} KB", f / 1e3)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_gives_available_or_total() {
        let both = "MemTotal:        8000000 kB\nMemFree:  10 kB\nMemAvailable:    6000000 kB\n";
        assert_eq!(
            parse_meminfo(both),
            Some((6_000_000 * 1024, "MemAvailable in /proc/meminfo"))
        );
        assert_eq!(
            parse_meminfo("MemTotal: 4 kB\n"),
            Some((4096, "MemTotal in /proc/meminfo"))
        );
        assert_eq!(parse_meminfo("nothing here\n"), None);
        // An address-space limit below the kernel's figure is what the process has.
        let m = Some((8000, "MemAvailable in /proc/meminfo"));
        assert_eq!(least(m, Some(9000)), m);
        assert_eq!(least(m, Some(7000)).map(|a| a.0), Some(7000));
        assert_eq!(least(None, Some(7000)).map(|a| a.0), Some(7000));
        assert_eq!(least(None, None), None);
    }

    #[test]
    fn estimate_adds_runs_at_once_and_results_kept() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/dc21143-64b-1flow.json");
        let exp =
            crate::config::scenario::load(&path, &crate::config::scenario::DiskFiles::default())
                .unwrap();
        // 14 points of one flow, 10 s + 1 s: the histogram spans 1 ns..11 s.
        let m = MemoryEstimate::new(&exp, 14, 2);
        let hist = crate::model::stats::latency_bytes_max(SimTime::from_secs_f64(11.0)) as u64;
        assert_eq!(m.per_run, RUN_LIVE_BYTES + FLOW_LIVE_BYTES + hist);
        assert_eq!(m.at_once, 2);
        assert_eq!(m.kept, 14 * (RUN_KEPT_BYTES + FLOW_KEPT_BYTES));
        // The measured table's 14 rows, as held.
        let rows = 14 * std::mem::size_of::<crate::config::smartbits::MeasuredPoint>() as u64;
        assert_eq!(m.inputs, rows);
        assert_eq!(m.total, PROCESS_BYTES + 2 * m.per_run + m.kept + m.inputs);
        let t = m.with_trace(100_000_000);
        assert_eq!(t.total, m.total + 200_000_000);
        assert!(
            t.describe(14).ends_with(", 200.0 MB for the trace)"),
            "{}",
            t.describe(14)
        );
        let small = crate::model::stats::latency_bytes_max(SimTime(2_000_000)) as u64;
        assert!(small < hist, "{small} {hist}");
        assert_eq!(
            m.least,
            PROCESS_BYTES + 2 * (RUN_LIVE_BYTES + FLOW_LIVE_BYTES + small) + m.kept + m.inputs
        );
        assert_eq!(bytes(1_500_000), "1.5 MB");
    }

    #[test]
    fn the_timeline_estimate_is_within_its_factor_of_what_a_sweep_holds() {
        // The xl(4) sweep (5 s + 0.5 s, 200-3,000 frames/s), one variant's 15 points, with
        // a 1 ms timeline and a fine one (25 us, where a bucket holds at most one frame):
        // the estimate against the rows the sweep really kept, counted as held (each row
        // twice while the results are assembled, its variant's name once). Before, the
        // estimate was one row per bucket of every run: 7.9 MB and 317 MB for 15 runs.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/xl-stats-overflow.json");
        let mut exp =
            crate::config::scenario::load(&path, &crate::config::scenario::DiskFiles::default())
                .unwrap();
        exp.variants.truncate(1);
        for ms in [1.0, 0.025] {
            exp.timeline_bucket_ms = Some(ms);
            let (live, est) = timeline_bytes(&exp);
            let r = crate::experiment::runner::run(&exp, 1, &|| {}).unwrap();
            let rows = &r.timeline;
            assert_eq!(rows.capacity(), rows.len(), "exactly its rows");
            let chunk = |n: usize| (n as u64 + 8).div_ceil(16).max(2) * 16;
            let held = rows
                .iter()
                .map(|row| 2 * std::mem::size_of_val(row) as u64 + chunk(row.variant.len()))
                .sum::<u64>();
            let ratio = est as f64 / held as f64;
            assert!(
                (1.0 / 1.2..=1.2).contains(&ratio),
                "{ms} ms: estimated {est} bytes for the rows, held {held} ({} rows)",
                rows.len()
            );
            // The buckets of one run, as the runner makes them.
            let width = SimTime::from_ns_f64(ms * 1e6);
            let span = SimTime::from_secs_f64(exp.duration_s) + SimTime::from_secs_f64(exp.drain_s);
            let tl = crate::model::timeline::Timeline::new(width, span);
            assert_eq!(live, (tl.buckets() * 24) as u64);
            // timeline.csv's text, made once the runs' vectors are gone, is smaller than
            // them: the estimate's rows bound the peak of writing it.
            let dir = tempfile::tempdir().unwrap();
            crate::results::output::write_all(dir.path(), &r).unwrap();
            let text = std::fs::metadata(dir.path().join("timeline.csv"))
                .unwrap()
                .len();
            assert!(text < (rows.len() * 64) as u64, "{text} bytes of text");
            // And the estimate's total counts it.
            let m = MemoryEstimate::new(&exp, 15, 1);
            assert_eq!(m.timeline, est);
            assert!(
                m.describe(15).contains(" for the timeline"),
                "{}",
                m.describe(15)
            );
        }
    }

    #[test]
    fn reading_the_captures_is_a_peak_of_its_own_before_the_sweep() {
        // 48 + 48 + 24 + 2 x 16 bytes a record on a 64-bit machine.
        assert_eq!(crate::config::capture::READ_RECORD_BYTES, 152);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/dc21143-64b-1flow.json");
        let exp =
            crate::config::scenario::load(&path, &crate::config::scenario::DiskFiles::default())
                .unwrap();
        let m = MemoryEstimate::new(&exp, 14, 2);
        assert_eq!(m.reading, 0);
        // A read peak larger than the sweep is the total; a smaller one changes nothing.
        let big = MemoryEstimate {
            reading: 800_000_000,
            ..m
        }
        .summed();
        assert_eq!(big.total, PROCESS_BYTES + 800_000_000);
        assert_eq!(big.least, PROCESS_BYTES + 800_000_000);
        assert!(
            big.describe(14)
                .ends_with("; 808.4 MB while the captures are read, before the sweep)"),
            "{}",
            big.describe(14)
        );
        let small = MemoryEstimate { reading: 1, ..m }.summed();
        assert_eq!((small.total, small.least), (m.total, m.least));
        // The trace adds to the sweep, not to the read peak.
        let t = big.with_trace(1_000_000_000);
        assert_eq!(t.total, m.total + 2_000_000_000);
    }
}
