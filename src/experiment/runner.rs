//! Runs a sweep: every load point x replication, in parallel on a rayon pool.
//!
//! Each run draws from random streams keyed by (seed, point, replication), and results
//! are collected in sweep order, so the output is the same whatever the number of
//! threads. Variants share their streams (common random numbers): every variant sees the
//! same arrivals and cost draws, so the differences between variants are the model's, not
//! sampling noise.
//!
//! With a [`Checkpoint`], finished runs are saved as they complete and runs saved by an
//! earlier, interrupted attempt are reloaded instead of simulated; a `stop` flag (set by
//! Ctrl-C) makes the sweep start no new run.
//!
//! A sweep can also be run in parts ([`run_selected`]: some of the runs, by their index
//! in sweep order, as `irqsim run --shard` does); [`frame`] and
//! [`crate::results::ResultsFrame::assemble`] turn the runs of the whole sweep into [`Results`], the
//! same way whether they were simulated here or in shards merged later.

use crate::config::scenario::Experiment;
use crate::experiment::checkpoint::{Checkpoint, SavedRun};
pub use crate::experiment::identity::frame;
use crate::host::{RunSpec, SimError, simulate};
use crate::model::timeline::TimelineRow;
use crate::results::summary;
use crate::results::{PointFigures, Results};
use crate::sim::rng::RunKey;
use crate::sim::time::SimTime;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Why a sweep gave no results.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The sweep stopped before every run was done (the finished ones are
    /// checkpointed).
    #[error("interrupted: {done} of {total} runs done")]
    Interrupted {
        /// Runs finished (simulated or reloaded).
        done: usize,
        /// Runs in the sweep.
        total: usize,
    },
    /// A run failed: the first failing run in sweep order (every run before it in
    /// sweep order is still done, the runs after it are not started), so the same
    /// whatever the number of threads; named by variant, load point and replication.
    #[error("variant `{variant}`, load point {point} ({load}), replication {replication}: {error}")]
    Run {
        /// Variant name.
        variant: String,
        /// Index of the load point.
        point: usize,
        /// The load point as printed (`30 %`, `5 outstanding`).
        load: String,
        /// Replication index, from 0.
        replication: usize,
        /// What went wrong.
        error: SimError,
    },
    /// A finished run could not be saved to the checkpoint (a full disk, an I/O
    /// error): the first such failure. The sweep starts no new run after it, since a
    /// later `--resume` would simulate again what it believed saved.
    #[error("saving a finished run to the checkpoint failed, so the sweep stopped: {error}")]
    Save {
        /// The OS error, naming the file.
        error: String,
    },
}

/// Run every point of `exp` on `threads` threads (0: one per core) and summarise.
/// `on_done` is called after each finished run (for progress reporting).
pub fn run(
    exp: &Experiment,
    threads: usize,
    on_done: &(dyn Fn() + Sync),
) -> Result<Results, RunError> {
    run_with(exp, threads, on_done, None, None)
}

/// [`run`] with a checkpoint to save to and reload from, and a flag that stops the sweep.
pub fn run_with(
    exp: &Experiment,
    threads: usize,
    on_done: &(dyn Fn() + Sync),
    checkpoint: Option<&Checkpoint>,
    stop: Option<&AtomicBool>,
) -> Result<Results, RunError> {
    let all: Vec<usize> = (0..runs(exp).len()).collect();
    let done = run_selected(exp, threads, on_done, checkpoint, stop, &all)?;
    Ok(summary::assemble(
        &frame(exp),
        done.into_iter().map(|r| (r.figures, r.timeline)),
    ))
}

/// Every run of `exp` in sweep order: (variant, load point, replication), variant
/// slowest, replication fastest. A run's place in this list is its index in sweep order.
pub fn runs(exp: &Experiment) -> Vec<(usize, usize, usize)> {
    let (npoints, reps) = (exp.npoints(), exp.replications as usize);
    (0..exp.variants.len())
        .flat_map(|v| (0..npoints).flat_map(move |p| (0..reps).map(move |r| (v, p, r))))
        .collect()
}

/// What run (`v`, `p`, `r`) of `exp` simulates: its flows and rates, its length, its
/// random streams.
pub fn run_spec(exp: &Experiment, v: usize, p: usize, r: usize) -> RunSpec {
    let lp = &exp.variants[v].points[p];
    RunSpec {
        flows: exp.variants[v].flows.clone(),
        rates_pps: lp.rates_pps.clone(),
        duration: SimTime::from_secs_f64(exp.duration_s),
        drain: SimTime::from_secs_f64(exp.drain_s),
        timeline: exp
            .timeline_bucket_ms
            .map(|ms| SimTime::from_ns_f64(ms * 1e6)),
        latency_from: exp.latency_from,
        key: RunKey {
            seed: exp.seed,
            variant: 0,
            point: p as u64,
            replication: r as u64,
        },
    }
}

/// Simulate replication 0 of load point `p` of variant `v` again, recording `trace`'s
/// window (the run is the one the sweep did: its figures are the same).
pub fn trace(
    exp: &Experiment,
    v: usize,
    p: usize,
    trace: crate::trace::TraceSpec,
) -> Result<(crate::host::RunStats, crate::trace::TraceOutput), RunError> {
    let lp = &exp.variants[v].points[p];
    crate::host::simulate_traced(&exp.variants[v].model, &run_spec(exp, v, p, 0), trace).map_err(
        |error| RunError::Run {
            variant: exp.variants[v].name.clone(),
            point: p,
            load: lp.label(),
            replication: 0,
            error,
        },
    )
}

/// Run the runs of `exp` whose indices in sweep order ([`runs`]) are in `selected`
/// (increasing), on `threads` threads (0: one per core), saving each to `checkpoint` and
/// reloading those it holds; returns them in the order of `selected`. A failure is the
/// first failing selected run in sweep order; `stop` makes it start no new run
/// ([`RunError::Interrupted`] counts the selected runs).
pub fn run_selected(
    exp: &Experiment,
    threads: usize,
    on_done: &(dyn Fn() + Sync),
    checkpoint: Option<&Checkpoint>,
    stop: Option<&AtomicBool>,
    selected: &[usize],
) -> Result<Vec<SavedRun>, RunError> {
    let reps = exp.replications as usize;
    let npoints = exp.npoints();
    // The sweep-order index of the first run known to have failed: runs after it are
    // not started, runs before it still are (one of them may fail first).
    let failed = AtomicUsize::new(usize::MAX);
    // The first checkpoint write that failed, in time: no run starts after it.
    let save_failed: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    let saving_failed = AtomicBool::new(false);
    let all = runs(exp);
    let jobs: Vec<(usize, usize, usize)> = selected.iter().map(|&k| all[k]).collect();
    let run_job = |&(v, p, r): &(usize, usize, usize)| {
        let k = (v * npoints + p) * reps + r;
        if let Some(saved) = checkpoint.and_then(|c| c.load(v, p, r)) {
            on_done();
            return Some(Ok((saved.figures, saved.timeline)));
        }
        if stop.is_some_and(|s| s.load(Ordering::SeqCst))
            || saving_failed.load(Ordering::SeqCst)
            || k > failed.load(Ordering::SeqCst)
        {
            return None;
        }
        let (model, lp) = (&exp.variants[v].model, &exp.variants[v].points[p]);
        let spec = run_spec(exp, v, p, r);
        let stats = match simulate(model, &spec) {
            Ok(s) => s,
            Err(e) => {
                failed.fetch_min(k, Ordering::SeqCst);
                return Some(Err(e));
            }
        };
        on_done();
        let rows = match (&stats.timeline, r) {
            (Some(tl), 0) => tl.rows(&exp.variants[v].name, lp.load_pct),
            _ => Vec::new(),
        };
        let slo = exp.latency_slo_us.map(|us| SimTime::from_ns_f64(us * 1e3));
        let mut figures = PointFigures::from_run(&stats, model.user.is_some(), slo);
        if crate::results::linux::is_linux_host(model) {
            figures = figures.with_mpstat(&stats);
        }
        if let Some(c) = checkpoint {
            let saved = SavedRun {
                figures,
                timeline: rows,
            };
            if let Err(e) = c.save(v, p, r, &saved) {
                let mut first = save_failed.lock().expect("no panic while holding it");
                first.get_or_insert_with(|| e.to_string());
                saving_failed.store(true, Ordering::SeqCst);
                return None;
            }
            return Some(Ok((saved.figures, saved.timeline)));
        }
        Some(Ok((figures, rows)))
    };
    // Longest runs first (offered frames as the estimate), each taken by the next free
    // thread: the sweep ends close to total work / threads instead of waiting for a
    // long run started last. Results go to their own slots, so the order of execution
    // changes nothing in them.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    let frames = |k: usize| -> f64 {
        let (v, p, _) = jobs[k];
        exp.variants[v].points[p].rates_pps.iter().sum()
    };
    order.sort_by(|&a, &b| frames(b).total_cmp(&frames(a)));
    type Out = Option<Result<(PointFigures, Vec<TimelineRow>), SimError>>;
    let work = || -> Vec<Out> {
        let slots: Vec<std::sync::Mutex<Out>> = (0..jobs.len())
            .map(|_| std::sync::Mutex::new(None))
            .collect();
        rayon::scope_fifo(|sc| {
            for &k in &order {
                let (slots, run_job, job) = (&slots, &run_job, &jobs[k]);
                sc.spawn_fifo(move |_| {
                    let out = run_job(job);
                    *slots[k].lock().expect("no panic while holding it") = out;
                });
            }
        });
        slots
            .into_iter()
            .map(|m| m.into_inner().expect("no panic while holding it"))
            .collect()
    };
    // At most THREADS_PER_CORE per core and one per run (crate::sim::limits): 100,000
    // threads asked for were all created, for nothing.
    let (threads, _) = crate::sim::limits::threads(threads, jobs.len());
    let out = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    };
    if let Some(error) = save_failed.into_inner().expect("no panic while holding it") {
        return Err(RunError::Save { error });
    }
    // The first failure in sweep order (not in order of completion), so that the error
    // is the same whatever the number of threads.
    if let Some((k, e)) = out.iter().enumerate().find_map(|(k, o)| match o {
        Some(Err(e)) => Some((k, e.clone())),
        _ => None,
    }) {
        let (v, p, r) = jobs[k];
        let lp = &exp.variants[v].points[p];
        return Err(RunError::Run {
            variant: exp.variants[v].name.clone(),
            point: p,
            load: lp.label(),
            replication: r,
            error: e,
        });
    }
    let done = out.iter().filter(|o| o.is_some()).count();
    if done < out.len() {
        return Err(RunError::Interrupted {
            done,
            total: out.len(),
        });
    }
    Ok(out
        .into_iter()
        .flatten()
        .flatten()
        .map(|(figures, timeline)| SavedRun { figures, timeline })
        .collect())
}
