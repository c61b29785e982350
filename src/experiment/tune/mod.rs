//! `irqsim tune`: the knobs of a Linux host searched for one goal under constraints, by
//! simulating each setting.
//!
//! - [`knobs`]: the catalog of knobs the model has (ethtool, sysctl, sysfs, IRQ
//!   affinity), each with its real range and step and its source;
//! - [`commands`]: the Linux commands that apply a setting;
//! - [`space`]: the knobs chosen and their grids; a point of the grid as a model;
//! - [`search`]: exhaustive grid or coordinate descent with seeded restarts;
//! - [`evaluate`]: a batch of settings run through the runner (or the NDR search), in
//!   parallel, and scored against the goal;
//! - [`pareto`]: the front of the goal against its main constraint;
//! - [`report`]: `tune.json` and `tune.txt`.
//!
//! **Goals**: `maximize ndr` (the NDR of [`crate::experiment::ndr`], at the scenario's
//! first flow's frame size), `minimize cpu` (the cores' busy time, in cores, at a rate)
//! and `minimize p99` (the 99th percentile of latency at a rate). **Constraints**: at
//! most a p99 latency, a loss (default 0: no frame lost), a number of cores doing any
//! work, a CPU time; a setting that misses one is infeasible, and among infeasible ones
//! the search prefers the one that misses by least (the sum of the relative excesses).
//! A trial at a rate offers the scenario's flows in the proportions of its first load
//! point (as `irqsim ndr` does), for the scenario's `duration_s`, with its seed: every
//! setting sees the same arrivals (common random numbers), so two settings differ by the
//! model only.
//!
//! The host as given (the scenario's model with its overrides) is always run first and
//! is what the best setting's gain is measured against; it is not counted in the budget.

pub mod commands;
pub mod evaluate;
pub mod knobs;
pub mod pareto;
pub mod report;
pub mod search;
pub mod space;

use crate::config::scenario::{Experiment, LoadUnit};
use knobs::KnobId;
use serde::{Deserialize, Serialize};

/// What to optimise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Goal {
    /// Maximise the NDR (no loss) [frames/s].
    MaximizeNdr,
    /// Minimise the CPU time at `--at`, in cores busy.
    MinimizeCpu,
    /// Minimise the p99 latency at `--at` \[us\].
    MinimizeP99,
}

/// The constraints a setting must meet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Constraints {
    /// Highest p99 latency \[us\].
    pub max_p99_us: Option<f64>,
    /// Highest loss [% of the frames sent] (default 0).
    pub max_loss_pct: f64,
    /// Most cores doing any work.
    pub max_cores: Option<u16>,
    /// Most CPU time, in cores busy.
    pub max_cpu_cores: Option<f64>,
}

/// What to search.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// The goal.
    pub goal: Goal,
    /// The rate the trials offer, all flows [frames/s] (`minimize` goals only).
    pub at_pps: Option<f64>,
    /// The constraints.
    pub constraints: Constraints,
    /// The knobs, in catalog order (empty: [`knobs::default_set`]).
    pub knobs: Vec<KnobId>,
    /// Settings run at most, the host as given not counted.
    pub budget: usize,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// The variant of the scenario tuned (its index).
    pub variant: usize,
    /// NDR search's final resolution [%] (`maximize ndr`).
    pub resolution_pct: f64,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            goal: Goal::MinimizeCpu,
            at_pps: None,
            constraints: Constraints::default(),
            knobs: Vec::new(),
            budget: DEFAULT_BUDGET,
            threads: 0,
            variant: 0,
            resolution_pct: 0.5,
        }
    }
}

/// `--budget`'s default: settings run besides the host as given.
pub const DEFAULT_BUDGET: usize = 60;

/// The largest `--budget`: a guard (each setting is a simulation of `duration_s`).
pub const MAX_BUDGET: usize = 100_000;

/// Why a search cannot run (refused before any run) or stopped.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// An option or the scenario does not allow the search (exit 2).
    #[error("{field}: {reason}")]
    Refused {
        /// The option or field.
        field: String,
        /// Why.
        reason: String,
    },
    /// A run failed.
    #[error("{0}")]
    Run(#[from] crate::experiment::runner::RunError),
    /// An NDR search failed.
    #[error("{0}")]
    Ndr(#[from] crate::experiment::ndr::NdrError),
}

fn refuse(field: &str, reason: String) -> TuneError {
    TuneError::Refused {
        field: field.into(),
        reason,
    }
}

/// Refuse, before any run, what cannot be searched: a knob the model does not have, a
/// rate above the line rate or missing, a constraint that does not fit the goal, a
/// budget of 0, a request/response scenario.
pub fn check(exp: &Experiment, opts: &TuneOptions) -> Result<(), TuneError> {
    if exp.load_unit == LoadUnit::Outstanding {
        return Err(refuse(
            "load.unit",
            "`outstanding`: a request/response workload offers no rate to tune at".into(),
        ));
    }
    let Some(variant) = exp.variants.get(opts.variant) else {
        return Err(refuse("--variant", "no such variant".into()));
    };
    let m = &variant.model;
    if !(1..=MAX_BUDGET).contains(&opts.budget) {
        return Err(refuse(
            "--budget",
            format!(
                "{}: at least 1 and at most {MAX_BUDGET} settings",
                opts.budget
            ),
        ));
    }
    let set = space::knob_set(m, &opts.knobs)?;
    if set.is_empty() {
        return Err(refuse(
            "--knobs",
            "the model has none of the default knobs (rx-usecs, rx-frames, combined, \
             netdev_budget): name the knobs to turn"
                .into(),
        ));
    }
    for k in &set {
        if knobs::knob(*k).grid(m).is_empty() {
            return Err(refuse(
                "--knobs",
                format!(
                    "`{}`: no value of its grid fits this model",
                    knobs::knob(*k).name
                ),
            ));
        }
    }
    let total: f64 = variant.points[0].rates_pps.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return Err(refuse(
            "load.points[0]",
            "offers nothing: its rates give the flows' proportions".into(),
        ));
    }
    let c = &opts.constraints;
    if !(c.max_loss_pct >= 0.0 && c.max_loss_pct < 100.0) {
        return Err(refuse(
            "--max-loss",
            format!("{}: a percentage, at least 0 and below 100", c.max_loss_pct),
        ));
    }
    if let Some(p) = c.max_p99_us
        && !(p > 0.0 && p.is_finite())
    {
        return Err(refuse("--max-p99-us", format!("{p}: a latency above 0 us")));
    }
    if let Some(n) = c.max_cores
        && !(1..=m.cpu.cores).contains(&n)
    {
        return Err(refuse(
            "--max-cores",
            format!("{n}: 1 to the model's {} cores", m.cpu.cores),
        ));
    }
    if let Some(x) = c.max_cpu_cores
        && !(x > 0.0 && x <= f64::from(m.cpu.cores))
    {
        return Err(refuse(
            "--max-cpu",
            format!("{x}: above 0 and at most the model's {} cores", m.cpu.cores),
        ));
    }
    let line = evaluate::max_pps(m, &variant.flows, &variant.points[0].rates_pps);
    match (opts.goal, opts.at_pps) {
        (Goal::MaximizeNdr, Some(_)) => {
            return Err(refuse(
                "--at",
                "not with --maximize ndr, which searches the rate itself".into(),
            ));
        }
        (Goal::MaximizeNdr, None) => {
            if c.max_loss_pct != 0.0 {
                return Err(refuse(
                    "--max-loss",
                    "not with --maximize ndr: the NDR is the rate with no loss".into(),
                ));
            }
            let first = &variant.flows[0].frame_bytes;
            if !matches!(first, crate::model::traffic::FrameSize::Fixed(_)) {
                return Err(refuse(
                    "workload.flows[0].frame_bytes",
                    "a distribution: the NDR is searched at one frame size".into(),
                ));
            }
            let ndr = crate::experiment::ndr::NdrOptions {
                frame_bytes: vec![evaluate::frame_bytes(&variant.flows)],
                resolution_pct: opts.resolution_pct,
                ..Default::default()
            };
            crate::experiment::ndr::check(exp, &ndr).map_err(|e| match e {
                crate::experiment::ndr::NdrError::Refused { field, reason } => {
                    refuse(&field, reason)
                }
                other => refuse("scenario", other.to_string()),
            })?;
        }
        (_, None) => {
            return Err(refuse(
                "--at",
                "required with --minimize: the rate the trials offer (e.g. 2Mpps)".into(),
            ));
        }
        (_, Some(r)) => {
            if !(r > 0.0 && r.is_finite()) {
                return Err(refuse("--at", format!("{r}: a rate above 0 frames/s")));
            }
            if r > line * (1.0 + 1e-9) {
                return Err(refuse(
                    "--at",
                    format!(
                        "{r:.0} frames/s: above the line rate of the busiest input port \
                         for these flows ({line:.0} frames/s)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Search (after [`check`]); `progress` is called with the settings finished by each
/// batch.
pub fn tune(
    exp: &Experiment,
    opts: &TuneOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<report::TuneReport, TuneError> {
    check(exp, opts)?;
    let variant = &exp.variants[opts.variant];
    let sp = space::Space::new(
        &variant.model,
        &space::knob_set(&variant.model, &opts.knobs)?,
    );
    let ev = evaluate::Evaluator::new(exp, opts);
    let host = ev.run(&[Ok(variant.model.clone())], progress)?.remove(0);
    let mut candidates: Vec<report::Candidate> = Vec::new();
    let mut eval = |pts: &[search::Point]| -> Result<Vec<search::Score>, TuneError> {
        let models: Vec<Result<_, String>> = pts.iter().map(|p| sp.model(p)).collect();
        let figs = ev.run(&models, progress)?;
        let mut scores = Vec::new();
        for ((p, m), f) in pts.iter().zip(&models).zip(figs) {
            let (score, why) = ev.score(m.as_ref().err(), f.as_ref());
            candidates.push(report::Candidate {
                setting: sp.setting_json(p),
                figures: f,
                feasible: score.feasible,
                why,
                objective: score
                    .feasible
                    .then_some(ev.shown_objective(score.objective)),
            });
            scores.push(score);
        }
        Ok(scores)
    };
    let searched = search::search(
        &sp.sizes(),
        &sp.host_point(),
        opts.budget,
        exp.seed,
        &mut eval,
    )?;
    let (host_score, host_why) = ev.score(None, host.as_ref());
    let host = report::Candidate {
        setting: sp.host_json(),
        figures: host,
        feasible: host_score.feasible,
        why: host_why,
        objective: host_score
            .feasible
            .then_some(ev.shown_objective(host_score.objective)),
    };
    Ok(report::TuneReport::new(
        exp, opts, &sp, searched, candidates, host,
    ))
}
