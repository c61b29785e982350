//! What a sweep will cost before it runs (the time estimate printed, from measured
//! rates of this simulator), and the progress bar while it runs.

use super::*;

/// Simulated packets per wall-clock second on one worker thread, for the expected wall
/// time printed before a run: `cargo bench --bench sweeps -- all-points-1thread` (the
/// 64-byte dc21143 sweep, interrupt policy, full statistics, one thread) gave a median
/// of 4.62 M packets/s (rounded to 4.6 M) on the 2-core machine of docs/performance.md
/// (the shipped profile: four-port router with the PCI bus, the transmit poll and
/// TX_NOBUF completions, merged handler bursts).
/// Remeasure and update it when the hot path changes. Other scenarios run at other
/// rates: overloads that drop most frames at a full RX ring go faster (21 M packets/s
/// for the 1 Gbit/s NAPI sweep), light loads with a timeline slower (4.5 M for the
/// xl(4) sweep, 4.0 M for the 600-byte four-flow sweep), so the estimate is good to a
/// factor of a few.
pub(super) const PACKETS_PER_S_PER_THREAD: f64 = 4.6e6;

/// CPU time of a run besides its packets [s]: building the host, the figures, saving
/// them. Measured with `/usr/bin/time` on `irqsim run --threads 1 --no-plots` of 10,000
/// and 20,000 load points of one flow sending 1 frame each (64-byte dc21143 model): 4.1
/// and 17.5 CPU-s, 0.41 and 0.87 ms per run; 1e6 points took 10.5 min of
/// CPU where the packets alone gave 2 min, 0.51 ms per run. 0.5 ms.
pub(super) const RUN_FIXED_S: f64 = 0.5e-3;

/// CPU time of each flow of a run besides its packets [s]: measured as above with
/// 2,000 points of 100 flows (9.3 CPU-s, 4.7 ms per run, 42 us per flow after the run's
/// own 0.5 ms) and one point of 10,000 flows (0.54 CPU-s, 54 us per flow). 50 us.
pub(super) const FLOW_FIXED_S: f64 = 50e-6;

/// The work of a run, estimated from the experiment before it starts.
pub(super) struct Estimate {
    /// Frames the tester sends over all runs: rates x duration, summed over points,
    /// times variants and replications. Request/response flows are not counted (their
    /// rate is what the host makes of it).
    pub(super) packets: f64,
    pub(super) points: usize,
    pub(super) variants: usize,
    pub(super) replications: usize,
    /// Threads that will work: the requested number (0: one per core), at most one
    /// per run.
    pub(super) threads: usize,
    /// Runs of the sweep.
    pub(super) runs: usize,
    /// Flows of a run, on average over the variants.
    pub(super) flows: f64,
    /// Some flows are request/response.
    pub(super) closed_loop: bool,
}

/// Flows of a run of `exp`, on average over its variants (whose workloads may differ).
pub(super) fn mean_flows(exp: &Experiment) -> f64 {
    let n = exp.variants.len().max(1) as f64;
    exp.variants
        .iter()
        .map(|v| v.flows.len() as f64)
        .sum::<f64>()
        / n
}

impl Estimate {
    pub(super) fn new(exp: &Experiment, threads: usize) -> Estimate {
        let variants = exp.variants.len().max(1);
        let replications = exp.replications as usize;
        let runs = variants * exp.npoints() * replications;
        let (threads, _) = irqsim::sim::limits::threads(threads, runs);
        let all_points = || exp.variants.iter().flat_map(|v| v.points.iter());
        Estimate {
            packets: 0.0
                + all_points().map(|p| p.offered_pps()).sum::<f64>()
                    * exp.duration_s
                    * replications as f64,
            points: exp.npoints(),
            variants,
            replications,
            threads,
            runs,
            flows: mean_flows(exp),
            closed_loop: all_points().any(|p| p.outstanding.is_some()),
        }
    }

    /// CPU time of the simulation [s]: the packets, and each run's and each of its
    /// flows' fixed cost.
    pub(super) fn cpu_s(&self) -> f64 {
        self.packets / PACKETS_PER_S_PER_THREAD
            + self.runs as f64 * (RUN_FIXED_S + self.flows * FLOW_FIXED_S)
    }

    /// Expected wall time of the simulation [s] (plots and files not included).
    pub(super) fn wall_s(&self) -> f64 {
        self.cpu_s() / self.threads as f64
    }

    pub(super) fn describe(&self) -> String {
        let runs = self.points * self.variants * self.replications;
        let per_run = self.packets / runs.max(1) as f64;
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let mut s = format!(
            "estimated work: {} packets = {} packets/run x {} x {} x {}; expected {} wall on {} \
             ({}packets/s per thread, and {} ms per run and {} us per flow of it)",
            si(self.packets).trim_end(),
            si(per_run).trim_end(),
            plural(self.points, "point"),
            plural(self.variants, "variant"),
            plural(self.replications, "replication"),
            duration(self.wall_s()),
            plural(self.threads, "thread"),
            si(PACKETS_PER_S_PER_THREAD),
            RUN_FIXED_S * 1e3,
            FLOW_FIXED_S * 1e6,
        );
        if self.closed_loop {
            s.push_str("; request/response flows not counted");
        }
        s
    }
}

/// `0.42 s`, `12 s`, `3 min 20 s`.
pub(super) fn duration(secs: f64) -> String {
    if secs < 10.0 {
        format!("{secs:.2} s")
    } else if secs < 120.0 {
        format!("{secs:.0} s")
    } else {
        let s = secs.round() as u64;
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// Progress on stderr: runs done, simulated packets/s, time left. Hidden with --quiet or
/// when stderr is not a terminal.
pub(super) fn progress_bar(runs: usize, several_per_point: bool, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    // A run is one point of one variant, one replication.
    let unit = if several_per_point { "runs" } else { "points" };
    let bar = ProgressBar::new(runs as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} [{{bar:20}}] {{pos}}/{{len}} {unit} · {{msg}} · {{elapsed}} elapsed, {{eta}} left"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// `12.3 M`, `456 k`, `789`.
pub(super) fn si(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.1} G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.0} k", v / 1e3)
    } else {
        format!("{v:.0} ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_counts_the_frames_the_tester_sends() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/dc21143-64b-1flow.json");
        let exp = scenario::load(&path, &DiskFiles::default()).expect("scenario loads");
        let est = Estimate::new(&exp, 2);
        // 10-36 % of 148,810 frames/s, 14 points of 10 s; the runs send 4,791,660.
        assert!((est.packets - 4_791_667.0).abs() < 1.0, "{}", est.packets);
        assert_eq!(est.threads, 2);
        // The packets, plus 14 runs of one flow at 0.5 ms + 50 us each.
        let cpu = est.packets / PACKETS_PER_S_PER_THREAD + 14.0 * (0.5e-3 + 50e-6);
        assert!((est.wall_s() - cpu / 2.0).abs() < 1e-9);
        let text = est.describe();
        let want = format!(
            "estimated work: 4.8 M packets = 342 k packets/run x 14 points x 1 variant x \
             1 replication; expected {} wall on 2 threads",
            duration(est.wall_s())
        );
        assert!(text.starts_with(&want), "{text}");
        // Never more threads than runs.
        assert_eq!(
            Estimate::new(&exp, 64).threads,
            14.min(irqsim::sim::limits::THREADS_PER_CORE * irqsim::sim::limits::available_cores())
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(0.4234), "0.42 s");
        assert_eq!(duration(42.4), "42 s");
        assert_eq!(duration(200.0), "3 min 20 s");
    }
}
