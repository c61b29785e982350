//! The one set of limits on what an experiment may ask for, whatever way it asks.
//!
//! A sweep can be asked for in several ways -- a `load.points` list or a `from`/`to`/
//! `step` range, plain `variants` or a `grid` of them, `replications` -- and each used
//! to have its own bound or none: a list of a million points passed while a range of
//! 100,001 was refused, 1,001 plain variants passed while a grid stopped at 1,000, and
//! `"replications": 4294967295` was accepted, then aborted allocating 103 GB (issue
//! 33). Every bound is here, and the scenario loader ([`crate::config::scenario::load`])
//! applies each one to every way of asking, before anything is simulated or written;
//! the JSON schema carries the per-field ones (`maxItems`, `maximum`).
//!
//! The values are chosen, not measured limits of the machine: each is far beyond the
//! shipped scenarios (at most 25 load points, 32 flows, 9 plain variants, 4
//! replications) and small enough that the bookkeeping of the whole sweep (a few
//! hundred bytes per run) stays far below the memory of a laptop. What a run needs
//! beyond that is estimated and checked against the machine by [`crate::experiment::memory`].
//! The book's chapter "Limits and refusals" (book/src/limits.md) lists them with the
//! message each refusal prints.

/// Load points per variant, as a list or a range: 100,000.
pub const MAX_POINTS: usize = 100_000;

/// Variants, plain (`variants`) or from a grid (cells x variants): 1,000.
pub const MAX_VARIANTS: usize = 1_000;

/// Replications of each point: 10,000 (the standard error of a mean falls as
/// 1/sqrt(n): 10,000 replications are already 100 times closer than one).
pub const MAX_REPLICATIONS: u32 = 10_000;

/// Runs of a sweep, variants x points x replications: 1,000,000. At the measured
/// fixed cost of a run ([`crate::experiment::memory`] and `Estimate` in the command) that is about
/// ten minutes of CPU before any packet is simulated.
pub const MAX_RUNS: usize = 1_000_000;

/// Flows of the tester's workload: 10,000 (a SmartBits-style test uses one to a few
/// streams per port; each flow keeps its own counters and latency histogram in every
/// run).
pub const MAX_FLOWS: usize = 10_000;

/// Lowest CPU clock a model may give \[MHz\]: 1 MHz, below the 4.77 MHz of the first
/// IBM PC. A cost in cycles converts at this clock; a lower one would turn a few
/// thousand cycles into more than [`crate::sim::problems::MAX_TIME_NS`], and a clock near 0
/// (1e-12 MHz) into costs that overflow simulated time.
pub const MIN_CLOCK_MHZ: f64 = 1.0;

/// Highest CPU clock a model may give \[MHz\]: 10 GHz, above any shipped processor's
/// clock (the fastest boost clocks are about 6 GHz).
pub const MAX_CLOCK_MHZ: f64 = 10_000.0;

/// Most CPU cycles a cost may give: 1e9, which at the lowest clock
/// ([`MIN_CLOCK_MHZ`]) is [`crate::sim::problems::MAX_TIME_NS`] (1,000 s), so that a cost in
/// cycles stays within the cap of a cost in nanoseconds at every accepted clock.
pub const MAX_COST_CYCLES: f64 = crate::sim::problems::MAX_TIME_NS * MIN_CLOCK_MHZ / 1e3;

/// Worker threads per available core that `--threads` may ask for: 4. More threads
/// than cores only share the cores (a sweep is CPU-bound); `--threads 10000` took 212 s
/// for a job of 0.03 s creating threads. Above this, the number is lowered to it and
/// the command says so; it is also never more than the runs.
pub const THREADS_PER_CORE: usize = 4;

/// Points of each parameter's drawn profile in `irqsim fit --profile-points`: 200. A
/// profile point costs a re-optimisation of the other parameters (`--profile-iters`
/// sweeps each), and a plot 1,000 pixels wide shows no more than a few hundred points.
pub const MAX_PROFILE_POINTS: usize = 200;

/// Lattice points of a box of `irqsim fit --scan-points`: 100,000. Each is a simulated
/// sweep, and a box is scanned around the optimum and again at every profile point.
pub const MAX_SCAN_POINTS: usize = 100_000;

/// The cores this process may use (1 when the system does not say).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The worker threads a sweep of `runs` runs uses when `requested` are asked for (0:
/// one per core): at most [`THREADS_PER_CORE`] per available core, at most one per run,
/// at least one. With a note to print when the request was lowered past the cores'
/// bound (lowering to the number of runs is silent: the extra threads would have had
/// nothing to do).
pub fn threads(requested: usize, runs: usize) -> (usize, Option<String>) {
    threads_on(requested, runs, available_cores())
}

/// [`threads`] on a machine of `cores` cores.
pub fn threads_on(requested: usize, runs: usize, cores: usize) -> (usize, Option<String>) {
    let cap = THREADS_PER_CORE * cores.max(1);
    let (n, note) = match requested {
        0 => (cores.max(1), None),
        n if n > cap => (
            cap,
            Some(format!(
                "--threads {n} is more than {THREADS_PER_CORE} per available core ({cores} \
                 core(s)): using {} threads",
                cap.min(runs).max(1)
            )),
        ),
        n => (n, None),
    };
    (n.min(runs).max(1), note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_bounded_by_cores_and_runs() {
        // 2 cores: at most 8 threads; 0 asks for one per core.
        assert_eq!(threads_on(0, 100, 2), (2, None));
        assert_eq!(threads_on(3, 100, 2), (3, None));
        let (n, note) = threads_on(100_000, 100, 2);
        assert_eq!(n, 8);
        assert!(note.unwrap().contains("--threads 100000"));
        // Never more than the runs, never 0.
        assert_eq!(threads_on(8, 3, 2), (3, None));
        assert_eq!(threads_on(8, 0, 2), (1, None));
    }

    #[test]
    fn a_cost_in_cycles_fits_the_time_cap_at_the_lowest_clock() {
        // 1e9 cycles at 1 MHz: 1e9 * 1e3 / 1 = 1e12 ns, the cap.
        assert_eq!(
            MAX_COST_CYCLES * 1e3 / MIN_CLOCK_MHZ,
            crate::sim::problems::MAX_TIME_NS
        );
    }
}
