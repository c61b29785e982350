//! Runs a sweep: every load point x replication, in parallel on a rayon pool.
//!
//! Each run draws from random streams keyed by (seed, variant, point, replication), and
//! results are collected in sweep order, so the output is the same whatever the number of
//! threads.

use crate::host::{RunSpec, simulate};
use crate::results::{Measured, PointFigures, PointResult, Results};
use crate::rng::RunKey;
use crate::scenario::Experiment;
use crate::time::SimTime;
use crate::timeline::TimelineRow;
use rayon::prelude::*;

/// Run every point of `exp` on `threads` threads (0: one per core) and summarise.
/// `on_done` is called after each finished run (for progress reporting).
pub fn run(exp: &Experiment, threads: usize, on_done: &(dyn Fn() + Sync)) -> Results {
    let reps = exp.replications as usize;
    let npoints = exp.points.len();
    let jobs: Vec<(usize, usize, usize)> = (0..exp.variants.len())
        .flat_map(|v| (0..npoints).flat_map(move |p| (0..reps).map(move |r| (v, p, r))))
        .collect();
    let work = || -> Vec<(PointFigures, Vec<TimelineRow>)> {
        jobs.par_iter()
            .map(|&(v, p, r)| {
                let model = &exp.variants[v].model;
                let spec = RunSpec {
                    flows: exp.flows.clone(),
                    rates_pps: exp.points[p].rates_pps.clone(),
                    duration: SimTime::from_secs_f64(exp.duration_s),
                    drain: SimTime::from_secs_f64(exp.drain_s),
                    timeline: exp
                        .timeline_bucket_ms
                        .map(|ms| SimTime::from_ns_f64(ms * 1e6)),
                    key: RunKey {
                        seed: exp.seed,
                        variant: 0,
                        point: p as u64,
                        replication: r as u64,
                    },
                };
                let stats = simulate(model, &spec).expect("experiment was validated");
                on_done();
                let rows = match (&stats.timeline, r) {
                    (Some(tl), 0) => tl.rows(&exp.variants[v].name, exp.points[p].load_pct),
                    _ => Vec::new(),
                };
                (PointFigures::from_run(&stats, model.user.is_some()), rows)
            })
            .collect()
    };
    let out = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    };
    let mut timeline = Vec::new();
    let figs: Vec<PointFigures> = out
        .into_iter()
        .map(|(f, rows)| {
            timeline.extend(rows);
            f
        })
        .collect();
    let points = figs
        .chunks(reps)
        .enumerate()
        .map(|(k, reps_figs)| {
            let (variant, lp) = (&exp.variants[k / npoints], &exp.points[k % npoints]);
            let (figures, ci95) = PointFigures::aggregate(reps_figs);
            PointResult {
                variant: variant.name.clone(),
                load_pct: lp.load_pct,
                offered_pps: lp.offered_pps(),
                outstanding: lp.outstanding,
                replications: exp.replications,
                figures,
                ci95,
            }
        })
        .collect();
    Results {
        scenario: exp.name.clone(),
        description: exp.description.clone(),
        model: exp.model_path.clone(),
        seed: exp.seed,
        duration_s: exp.duration_s,
        replications: exp.replications,
        measured: exp.measured.as_ref().map(|(file, points)| Measured {
            file: file.clone(),
            points: points.clone(),
        }),
        points,
        timeline,
    }
}
