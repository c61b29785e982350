//! Fitting model parameters to a measured table by simulating it (`irqsim fit`).
//!
//! A scenario that names a measured SmartBits table, and a few numeric fields of its
//! model addressed by path (`kernel.netisr_per_packet.ns`, `irq_lines.irq11.dispatch.ns`,
//! `nics.dc0.driver.isr_entry.ns`: object keys, and elements of arrays of named objects
//! by `name` or by index), each with bounds. Every evaluation simulates the whole sweep
//! with the candidate values patched into the scenario's `overrides` (the same merge
//! patch a user would write) and compares it with the table, point by point.
//!
//! **Objective.** For each load point present in both the simulation and the table
//! (matched by load %, `Total` rows):
//!
//! - loss residual `r_loss` = simulated loss % - measured loss % (percentage points);
//! - latency residual `r_lat` = 100 ln(simulated avg latency / measured avg latency)
//!   (about the relative error in %, symmetric for over- and under-estimates).
//!
//! A side that forwarded nothing has no average latency; its frames' latency is
//! *censored at the run's horizon* `T = duration_s + drain_s` (a frame that has not come
//! out by then is never counted, and every frame that is counted waited at most `T`).
//! So where the table forwards and the candidate does not, `r_lat = 100 ln(T / measured
//! avg)`, the largest residual any candidate that forwards can reach at that point
//! (944 at 1.2 s against 95 us, against 23 for a
//! candidate 26 % slower); where the candidate forwards and the table does not,
//! `r_lat = 100 ln(simulated avg / T)`, likewise; a point where neither side forwards has
//! no latency residual and is not counted in the degrees of freedom. A candidate that
//! livelocks the table's top points therefore pays for it instead of being rewarded.
//!
//! The objective is the weighted sum of squares `sum w_loss r_loss^2 + w_lat r_lat^2`
//! ([`Weights`], both 1 by default: one percentage point of loss weighs as much as 1 %
//! of latency). The fitted parameters are the weighted least-squares estimate.
//!
//! **Resolution of the objective.** Below some size a change of the objective is not
//! evidence. The fit estimates that size `eps` at the best point found as the largest
//! of (a) the objective's change when the sweep is simulated with the next seed (the
//! random streams' noise: start phases, random arrivals and costs), (b) the objective
//! the table's own rounding would leave at the true values, `sum w_lat (100 q /
//! measured avg)^2 / 12` with `q` = 0.1 us, the SmartBits tables' print step of the
//! average latency (uniform rounding error), and (c) 0.1 % of the objective (the
//! descents' own tolerance), and reports it ([`FitReport::resolution`]).
//!
//! **Optimiser.** Constant-rate traffic makes the objective rugged (a cost that moves a
//! handler's end past the next arrival changes frames per interrupt in steps), so no
//! derivatives are used: a Halton sample of the bounds ([`FitOptions::samples`]), then
//! argmin's Nelder-Mead simplex from the best points of the start and the sample
//! ([`FitOptions::descents`]) on the parameters scaled to [0, 1] by their bounds (a
//! step outside is evaluated at the bound and penalised). Then restarts: each from the
//! next-best sample point not yet descended from (once all are used, from the best
//! point with a fresh simplex of another size), until [`FitOptions::restarts`] restarts
//! in a row lower the best objective by no more than `eps`; and a last local search
//! from the best of all descents with a fresh, small simplex, repeated while it
//! improves by more than `eps`. **Lattice search.** The model's costs are integer ns,
//! so the objective is piecewise constant: a simplex smaller than a step sees a
//! plateau and stops wherever it is. The search therefore ends on the lattice of the
//! fields' own steps (1 for an integer field, 2^-20 of the range for a real one) with
//! a pattern search: from the best point it polls the points a mesh step away along
//! each parameter and along each pair of them (costs trade off along diagonals), all
//! at once, moves to the lowest when it is lower, and otherwise halves the mesh (from
//! 0.5 % of the range down to one step). It stops on a point no poll of one step
//! beats, then again from the lowest point evaluated so far while that is lower, so
//! the reported optimum scores no worse than any point the search, its restarts or
//! the profiles evaluated within the bounds.
//!
//! **Neighbourhood scan.** A lattice search stops at the first point no neighbour one
//! step away beats, and on a table of constant-rate traffic that is almost any point:
//! a knife-edge load point (a handler's end just before or after the next arrival) can
//! move the objective by hundreds from one ns to the next (on the 64-byte router's
//! 26-36 % knee at 0.1 s per point, 0.0116 at the table's own costs against 188 with
//! the dispatch 1 ns higher), so the surface is a valley of isolated low points, and
//! no descent or pattern search finds the lowest. So the search ends with an
//! exhaustive scan: every lattice point within `w` steps of the optimum along each
//! parameter, `w` the largest half-width whose box holds at most
//! [`FitOptions::scan_points`] points (400 by default: `w` = 199 for one parameter, 9
//! for two, 3 for three, 1 for four or five, no scan for more), all simulated side by
//! side. From a lower point found there
//! the lattice search runs again and its box is scanned, up to eight boxes; so the
//! reported optimum is the lowest point of the box around it, unless the eighth box
//! still found a lower one. The scan costs at most `scan_points` sweeps per box
//! (cached points are free); it is a local stage with a stated budget, not a global
//! one: a lower point further than `w` steps from where the search arrives is found
//! only if the profiles pass by it (below). No descent starts once
//! [`FitOptions::max_simulations`] sweeps have been simulated; a search the budget
//! ended before its restarts stopped improving says so in a warning. Each evaluation runs
//! the sweep's points in parallel (rayon), independent evaluations (the sample, the
//! profile points) run side by side, and results are cached by parameter values,
//! so the fit is deterministic for a seed, whatever the thread count. Integer fields
//! (ring sizes, queue limits) are rounded before each evaluation.
//!
//! **Uncertainty.** Two intervals per parameter, both at 95 %:
//!
//! - **profile interval**: the range of the parameter over which the objective's
//!   profile stays under the likelihood-ratio threshold `SSR_min (1 + F(1, n-k) / (n-k))`
//!   (nonlinear least squares, Bates and Watts 1988, section 6.1). The profile is the
//!   objective with the other parameters re-optimised at each value of this one: a
//!   small Nelder-Mead over the others ([`FitOptions::profile_iters`] iterations),
//!   warm-started from the previous step's optimum moved along the conditional path
//!   linearised at the fit (`d_-j = -(J_-j^T J_-j)^-1 J_-j^T J_j`), then the lattice
//!   search over the others (from a mesh of 0.1 % of their ranges), then the
//!   neighbourhood scan over the others (this one held; the same half-width `w`), each
//!   point simulated. That is a local search: each profile value is the lowest
//!   objective it found at that value, an upper bound of the true profile, so a value
//!   is left out of the interval because the search found no combination of the others
//!   under the threshold there, not because none exists. The ends are searched
//!   outwards from the fitted value (steps doubling
//!   from the Jacobian's step, then four bisections); each end reported is the
//!   innermost value found *above* the threshold (the interval's true end lies between
//!   it and the last value found below), or the bound when the profile stays under the
//!   threshold up to it (reported). This is the interval to read on a rugged surface.
//!   It is **resolution-limited** ([`FittedParam::resolution_limited`], with its width,
//!   and a warning) when the threshold's margin `SSR_min F / (n-k)` is below `eps` (the
//!   threshold is then raised to `SSR_min + eps`: a rise the objective cannot resolve
//!   excludes nothing), or when no probed value besides the fit was under the
//!   threshold (the interval is narrower than the probes, so its width is only bounded
//!   by theirs): a zero-width interval is never reported as a confident one. Every
//!   point evaluated anywhere in the fit (the sample, the descents, the scans, the
//!   other profiles) that scores under the threshold is one the table does not
//!   exclude: the interval is widened to cover its value, with a warning. When the
//!   objective changes between lattice points one step apart around the fit by a
//!   median above the threshold's margin (the neighbourhood scan's pairs), the fit
//!   warns that it is rugged at the parameters' own steps: the points evaluated are
//!   not every one where the table might allow a value, so it cannot tell whether a
//!   value outside the intervals, or a point below the fit, exists.
//! - **linearised interval**: `s^2 (J^T J)^-1` with `s^2 = SSR / (n - k)` and Student's t,
//!   from the residuals' Jacobian `J` by central differences (steps of 2 % of the value,
//!   at least 1 % of the range). It describes the valley floor at the fit only; when
//!   the profile interval is more than twice as wide, the fit warns that the linearised
//!   one understates the uncertainty.
//!
//! Every profile point is a full evaluation: when one scores lower than the fit (by
//! any amount), the search stopped in a local minimum, so the fit runs the lattice
//! search and the neighbourhood scan again from there and redoes the uncertainty
//! around the new optimum; each
//! such restart is reported in [`FitReport::notes`]. After three, a lower point the
//! profiles still find is reported as the fit, with a warning that its intervals are
//! those searched around the previous point.
//!
//! The profile is also drawn over the whole range, for the plots (the same
//! re-optimisation at each point, warm-started from the linearised path). A
//! parameter is reported as **not identifiable** when moving it changes no residual (a
//! flat direction: `J`'s column is zero), two parameters as **confounded** when their
//! correlation exceeds 0.95 in magnitude (or `J^T J` is singular), and a parameter as
//! **poorly determined** when its interval (the profile one where there is one) is
//! wider than half its value or reaches a bound; the fit then warns instead of
//! returning a confident number.
//!
//! **Duration per point.** Start-up transients move a sweep's figures with the sending
//! time (a lossy point's queue fills in the first few ms, so its loss and average
//! latency converge as about 1/duration). The table's own duration per point is read
//! from its `Sent` column (sent frames / simulated sent frames x simulated duration,
//! the median over the points); when the fit's duration differs from it by more than
//! 5 %, the fitted values are simulated again at the table's duration, and when that
//! moves the figures at the table's points (the same weighted loss and latency terms)
//! by more in RMS than the fit's residuals, the fit warns and names the duration
//! needed ([`FitReport::duration_check`]).

use crate::config::error::InputError;
use crate::config::scenario::{self, FileSource};
use crate::config::smartbits::MeasuredPoint;
use crate::experiment::runner::{self, RunError};
use crate::results::Results;
use argmin::core::{CostFunction, Executor};
use argmin::solver::neldermead::NelderMead;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why a fit could not be done.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// The scenario, its model or its table could not be read or is invalid.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A `--param` option is malformed or names no numeric field of the model.
    #[error("--param `{spec}`: {reason}")]
    Param {
        /// The option as given.
        spec: String,
        /// What is wrong.
        reason: String,
    },
    /// The scenario cannot be fitted as it is.
    #[error("{file}: {reason}")]
    Scenario {
        /// The scenario file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A simulation failed.
    #[error("simulating {values}: {error}")]
    Run {
        /// The parameter values simulated.
        values: String,
        /// What went wrong.
        error: RunError,
    },
    /// The model refuses candidate values (checked at the bounds first, so only a
    /// combination of values can get here).
    #[error("the model refuses {values}: {error}")]
    Rejected {
        /// The parameter values.
        values: String,
        /// Why.
        error: InputError,
    },
    /// The optimiser failed.
    #[error("optimiser: {0}")]
    Optimiser(String),
}

/// A parameter to fit, as given on the command line: `PATH=LO..HI` or
/// `PATH=LO..HI@START`, in the field's own units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamSpec {
    /// Dotted path of a numeric field of the model.
    pub path: String,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Starting value [default: the model's value, after the scenario's overrides].
    pub start: Option<f64>,
}

impl std::fmt::Display for ParamSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}..{}", self.path, self.lo, self.hi)?;
        match self.start {
            Some(s) => write!(f, "@{s}"),
            None => Ok(()),
        }
    }
}

impl std::str::FromStr for ParamSpec {
    type Err = FitError;

    fn from_str(s: &str) -> Result<Self, FitError> {
        let bad = |reason: &str| FitError::Param {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        let (path, rest) = s
            .split_once('=')
            .ok_or_else(|| bad("expected PATH=LO..HI or PATH=LO..HI@START"))?;
        let (range, start) = match rest.split_once('@') {
            Some((r, st)) => (r, Some(st)),
            None => (rest, None),
        };
        let (lo, hi) = range
            .split_once("..")
            .ok_or_else(|| bad("expected bounds as LO..HI"))?;
        let num = |t: &str, what: &str| -> Result<f64, FitError> {
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(&format!("{what} `{t}` is not a finite number")))
        };
        let (lo, hi) = (num(lo, "lower bound")?, num(hi, "upper bound")?);
        if lo >= hi {
            return Err(bad("the lower bound must be below the upper bound"));
        }
        let start = start.map(|t| num(t, "start")).transpose()?;
        if let Some(v) = start
            && !(lo..=hi).contains(&v)
        {
            return Err(bad("the start lies outside the bounds"));
        }
        let path = path.trim();
        if path.is_empty() {
            return Err(bad("empty path"));
        }
        Ok(ParamSpec {
            path: path.to_string(),
            lo,
            hi,
            start,
        })
    }
}

/// Weights of the objective's two terms per load point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// Weight of the squared loss residual [1/(percentage point)^2].
    pub loss: f64,
    /// Weight of the squared latency residual [1/%^2].
    pub latency: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            loss: 1.0,
            latency: 1.0,
        }
    }
}

/// How to fit.
#[derive(Clone, Debug)]
pub struct FitOptions {
    /// The parameters.
    pub params: Vec<ParamSpec>,
    /// The objective's weights.
    pub weights: Weights,
    /// Points of the global sample (a Halton sequence over the bounds) evaluated before
    /// the descents [default 12 per parameter; 0: descend from the start only].
    pub samples: usize,
    /// Descents from the best distinct points of the start and the sample [default 3].
    pub descents: usize,
    /// Restarts in a row that bring no improvement above the objective's resolution
    /// before the search stops (see the module docs) [default 3; 0: no restarts].
    pub restarts: usize,
    /// Sweeps simulated after which the search starts no further descent, so it ends
    /// within one descent (at most `max_iters` x (parameters + 1) sweeps) of it; the
    /// uncertainty and the profiles come on top (each profile point is at most
    /// `profile_iters` x parameters + parameters + 1 sweeps) [default 200 per
    /// parameter].
    pub max_simulations: usize,
    /// Iterations per descent [default 40].
    pub max_iters: u64,
    /// Sending time per point \[s\], replacing the scenario's (a shorter fit is faster;
    /// start-up transients weigh more).
    pub duration_s: Option<f64>,
    /// Seed, replacing the scenario's.
    pub seed: Option<u64>,
    /// Worker threads per sweep (0: one per core).
    pub threads: usize,
    /// Points per parameter of the objective's profile over the bounds, besides the
    /// fitted value and four points around it (0: no profile drawn; the profile
    /// interval is still searched) [default 9].
    pub profile_points: usize,
    /// Nelder-Mead iterations that re-optimise the other parameters at each point of a
    /// profile (with one parameter there are no others) [default 8].
    pub profile_iters: u64,
    /// Most lattice points in a box of the neighbourhood scan (see the module docs): its
    /// half-width is the largest number of steps per parameter whose box around the
    /// optimum holds at most this many; each profile point scans the same half-width
    /// over the other parameters [default 400; below 3^parameters: no scan].
    pub scan_points: usize,
}

impl FitOptions {
    /// Defaults for `params`.
    pub fn new(params: Vec<ParamSpec>) -> Self {
        let samples = 12 * params.len();
        let max_simulations = 200 * params.len();
        FitOptions {
            params,
            weights: Weights::default(),
            samples,
            descents: 3,
            restarts: 3,
            max_simulations,
            max_iters: 40,
            duration_s: None,
            seed: None,
            threads: 0,
            profile_points: 9,
            profile_iters: 8,
            scan_points: 400,
        }
    }
}

/// One load point compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointFit {
    /// Offered load [% of line rate].
    pub load_pct: f64,
    /// Measured loss [% of sent].
    pub measured_loss_pct: f64,
    /// Simulated loss [% of sent].
    pub loss_pct: f64,
    /// Measured average latency \[us\].
    pub measured_latency_us: f64,
    /// Simulated average latency \[us\].
    pub latency_us: f64,
    /// Loss residual [percentage points].
    pub loss_residual: f64,
    /// Latency residual, 100 ln(simulated / measured) [%], a side that forwarded
    /// nothing taken at the run's horizon (see the module docs); none where neither
    /// side forwarded.
    pub latency_residual: Option<f64>,
}

/// One simulation of the sweep at some parameter values.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// The values simulated (integers rounded), in parameter order.
    pub values: Vec<f64>,
    /// The objective.
    pub objective: f64,
    /// The points compared.
    pub points: Vec<PointFit>,
    /// The whole results of the sweep.
    pub results: Results,
}

/// A fitted parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedParam {
    /// Path in the model.
    pub path: String,
    /// Bounds.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Whether the field holds integers (fitted on integers).
    pub integer: bool,
    /// The model's own value (after the scenario's overrides).
    pub model_value: f64,
    /// Where the fit started.
    pub start: f64,
    /// The fitted value.
    pub value: f64,
    /// Linearised standard error (none when not identifiable or no residual degrees of
    /// freedom).
    pub std_error: Option<f64>,
    /// Linearised 95 % interval.
    pub ci95: Option<[f64; 2]>,
    /// Whether the table moves when the parameter does (see the module docs).
    pub identifiable: bool,
    /// 95 % interval from the objective's profile (see the module docs): the values
    /// whose profile (the others re-optimised) stays below the likelihood-ratio
    /// threshold, each end the innermost value found above it (none when not
    /// identifiable or no degrees of freedom are left).
    pub profile_ci95: Option<[f64; 2]>,
    /// When the profile interval is resolution-limited (the objective cannot resolve
    /// the threshold's margin, or no probe but the fit was under it): the interval's
    /// width, in the field's units; none when the interval is a confident one.
    pub resolution_limited: Option<f64>,
    /// The objective's profile along this parameter: (value, objective) pairs over the
    /// bounds, the other parameters re-optimised at each.
    pub profile: Vec<[f64; 2]>,
}

/// What a fit found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// Scenario file.
    pub scenario: String,
    /// Model file the fitted values belong to.
    pub model: String,
    /// Measured table fitted to.
    pub measured: String,
    /// Sending time per point of the simulations \[s\].
    pub duration_s: f64,
    /// Seed.
    pub seed: u64,
    /// Objective weights.
    pub weights: Weights,
    /// The parameters.
    pub params: Vec<FittedParam>,
    /// Correlation matrix of the estimates (rows and columns in parameter order; none
    /// when the covariance cannot be formed).
    pub correlation: Option<Vec<Vec<f64>>>,
    /// Objective at the model's own values (the profile as it is).
    pub model_objective: f64,
    /// Objective at the start.
    pub start_objective: f64,
    /// Objective at the fitted values.
    pub objective: f64,
    /// Residual degrees of freedom: residuals counted (a latency residual where
    /// neither side forwarded is not) minus parameters.
    pub dof: i64,
    /// The objective's resolution at the fit (see the module docs): changes below it
    /// are not evidence.
    pub resolution: f64,
    /// The fitted values simulated at the table's own duration per point, when the
    /// fit's differs from it (see the module docs).
    pub duration_check: Option<DurationCheck>,
    /// Sweeps simulated (cached repeats not counted).
    pub simulations: usize,
    /// Each point at the model's own values.
    pub model_points: Vec<PointFit>,
    /// Each point at the start.
    pub start_points: Vec<PointFit>,
    /// Each point at the fitted values.
    pub points: Vec<PointFit>,
    /// What the reader must know: unidentifiable, confounded, poorly determined or
    /// bound-hugging parameters.
    pub warnings: Vec<String>,
    /// What the search did besides its plan: each restart from a point the profiles
    /// found below the optimum of the time (see the module docs).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// How much the duration per point moves the fitted values' figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DurationCheck {
    /// The fit's sending time per point \[s\].
    pub fit_duration_s: f64,
    /// The table's, from its `Sent` column \[s\].
    pub table_duration_s: f64,
    /// RMS over the table's points of the change of the weighted loss and latency
    /// terms between the two durations (same units as the residuals).
    pub change_rms: f64,
    /// RMS of the fit's weighted residuals.
    pub residual_rms: f64,
    /// The point that moved most [% of line rate].
    pub worst_load_pct: f64,
}

/// A parameter resolved against the model.
#[derive(Clone, Debug)]
struct Param {
    spec: ParamSpec,
    /// Path segments.
    segs: Vec<String>,
    integer: bool,
    start: f64,
    /// The model's own value (after the scenario's overrides).
    model: f64,
}

/// A file source that serves one file's text from memory and the rest from `base`.
struct Overlay<'a> {
    base: &'a dyn FileSource,
    path: PathBuf,
    text: String,
}

impl FileSource for Overlay<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        if path == self.path {
            Ok(self.text.clone())
        } else {
            self.base.read(path)
        }
    }

    fn read_bytes(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.base.read_bytes(path)
    }

    fn identity(&self, path: &Path) -> Option<(u64, u64)> {
        self.base.identity(path)
    }

    fn reserve_capture(&self, path: &Path) -> std::io::Result<Option<u64>> {
        self.base.reserve_capture(path)
    }
}

/// The value at `segs` in a model: object keys, and elements of arrays by `name` or by
/// index.
fn lookup<'v>(v: &'v Value, segs: &[String]) -> Option<&'v Value> {
    let mut cur = v;
    for s in segs {
        cur = match cur {
            Value::Object(m) => m.get(s)?,
            Value::Array(a) => a
                .iter()
                .find(|it| it.get("name").and_then(Value::as_str) == Some(s.as_str()))
                .or_else(|| s.parse::<usize>().ok().and_then(|i| a.get(i)))?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Where the last segment of `segs` is missing but its parent is an object (a cost
/// written in `cycles` fitted through `ns`, or the reverse): the numeric fields the
/// parent has, as a hint; empty otherwise.
fn sibling_hint(model: &Value, segs: &[String]) -> String {
    let Some((_, parent)) = segs.split_last() else {
        return String::new();
    };
    let m = match lookup(model, parent) {
        Some(Value::Object(m)) => m,
        Some(v) if v.is_number() && !parent.is_empty() => {
            return format!(
                "; `{}` is a plain number: fit `{}` itself",
                parent.join("."),
                parent.join(".")
            );
        }
        _ => return String::new(),
    };
    let numeric: Vec<String> = m
        .iter()
        .filter(|(_, v)| v.is_number())
        .map(|(k, _)| format!("`{}.{k}`", parent.join(".")))
        .collect();
    if numeric.is_empty() {
        return String::new();
    }
    format!(
        "; `{}` is written with {}: fit {}",
        parent.join("."),
        m.keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", "),
        numeric.join(" or ")
    )
}

/// [`lookup`], mutably.
fn lookup_mut<'v>(v: &'v mut Value, segs: &[String]) -> Option<&'v mut Value> {
    let mut cur = v;
    for s in segs {
        cur = match cur {
            Value::Object(m) => m.get_mut(s)?,
            Value::Array(a) => {
                let i = a
                    .iter()
                    .position(|it| it.get("name").and_then(Value::as_str) == Some(s.as_str()))
                    .or_else(|| s.parse::<usize>().ok().filter(|i| *i < a.len()))?;
                &mut a[i]
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// A merge patch setting `segs` to `v`.
fn patch_for(segs: &[String], v: Value) -> Value {
    segs.iter().rev().fold(v, |acc, s| {
        let mut m = serde_json::Map::new();
        m.insert(s.clone(), acc);
        Value::Object(m)
    })
}

fn number(v: f64, integer: bool) -> Value {
    if integer {
        Value::from(v.round() as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// Sets up and runs fits of one scenario.
pub struct Fitter<'a> {
    files: &'a (dyn FileSource + Sync),
    path: PathBuf,
    file: String,
    scenario: Value,
    model_path: String,
    measured_file: String,
    measured: Vec<MeasuredPoint>,
    params: Vec<Param>,
    opts: FitOptions,
    duration_s: f64,
    seed: u64,
    /// Evaluations by (value bits..., seed, duration bits).
    cache: Mutex<HashMap<Vec<u64>, Arc<Evaluation>>>,
}

impl<'a> Fitter<'a> {
    /// Read the scenario at `path` through `files` and check the parameters against its
    /// model.
    pub fn new(
        path: &Path,
        files: &'a (dyn FileSource + Sync),
        opts: FitOptions,
    ) -> Result<Self, FitError> {
        let file = path.display().to_string();
        let mut scenario: Value = {
            let text = files.read(path).map_err(|source| InputError::Read {
                file: file.clone(),
                source,
            })?;
            serde_json::from_str(&text).map_err(|e| InputError::Syntax {
                file: file.clone(),
                msg: e.to_string(),
            })?
        };
        if !scenario.is_object() {
            return Err(InputError::Field {
                file,
                path: ".".into(),
                msg: "a scenario is a JSON object".into(),
            }
            .into());
        }
        if let Some(d) = opts.duration_s {
            scenario["duration_s"] = Value::from(d);
        }
        if let Some(s) = opts.seed {
            scenario["seed"] = Value::from(s);
        }
        let refuse = |reason: String| FitError::Scenario {
            file: file.clone(),
            reason,
        };
        let overlay = Overlay {
            base: files,
            path: path.to_path_buf(),
            text: scenario.to_string(),
        };
        let exp = crate::experiment::load::load(path, &overlay)?;
        let Some((measured_file, measured)) = exp.measured.clone() else {
            let rates = if exp.measured_rates.is_some() {
                " (its `measured_rates` table is compared after a run, not fitted)"
            } else {
                ""
            };
            return Err(refuse(format!(
                "names no measured SmartBits table (`measured`){rates}: there is nothing to \
                 fit to"
            )));
        };
        if exp.variants.len() != 1 {
            return Err(refuse(format!(
                "has {} variants; a fit adjusts one model: remove `variants` (or keep one)",
                exp.variants.len()
            )));
        }
        if opts.params.is_empty() {
            return Err(FitError::Param {
                spec: String::new(),
                reason: "give at least one parameter to fit".into(),
            });
        }
        if opts.params.len() > PRIMES.len() {
            return Err(FitError::Param {
                spec: opts.params[PRIMES.len()].to_string(),
                reason: format!(
                    "at most {} parameters at once (one Halton base each; a fit of more \
                     needs far more simulations than a sweep is worth)",
                    PRIMES.len()
                ),
            });
        }
        // The model as simulated (with the scenario's overrides), to check the paths.
        let model_text =
            files
                .read(Path::new(&exp.model_path))
                .map_err(|source| InputError::Read {
                    file: exp.model_path.clone(),
                    source,
                })?;
        let mut model: Value =
            serde_json::from_str(&model_text).map_err(|e| InputError::Syntax {
                file: exp.model_path.clone(),
                msg: e.to_string(),
            })?;
        if let Some(ov) = scenario.get("overrides") {
            scenario::merge_patch(&mut model, ov);
        }
        let mut params = Vec::new();
        for spec in &opts.params {
            let bad = |reason: String| FitError::Param {
                spec: spec.to_string(),
                reason,
            };
            let segs: Vec<String> = spec.path.split('.').map(String::from).collect();
            if params.iter().any(|p: &Param| p.spec.path == spec.path) {
                return Err(bad("the same path is given twice".into()));
            }
            let Some(v) = lookup(&model, &segs) else {
                return Err(bad(format!(
                    "`{}` is not a field of the model `{}`{}",
                    spec.path,
                    exp.model_path,
                    sibling_hint(&model, &segs)
                )));
            };
            let Some(current) = v.as_f64() else {
                let hint = if v.get("ns").is_some() {
                    format!(" (a cost: fit its `{}.ns`)", spec.path)
                } else {
                    String::new()
                };
                return Err(bad(format!(
                    "`{}` is {}, not a number{hint}",
                    spec.path,
                    crate::config::grid::kind(v)
                )));
            };
            let integer = v.is_u64() || v.is_i64();
            if integer && spec.hi - spec.lo < 1.0 {
                return Err(bad("an integer field needs bounds at least 1 apart".into()));
            }
            let start = spec.start.unwrap_or(current.clamp(spec.lo, spec.hi));
            params.push(Param {
                spec: spec.clone(),
                segs,
                integer,
                start,
                model: current,
            });
        }
        let common = exp.variants[0]
            .points
            .iter()
            .filter(|p| measured_at(&measured, p.load_pct).is_some())
            .count();
        if common == 0 {
            return Err(refuse(
                "no load point of the sweep is in the measured table: nothing to compare".into(),
            ));
        }
        let fitter = Fitter {
            files,
            path: path.to_path_buf(),
            file,
            duration_s: exp.duration_s,
            seed: exp.seed,
            scenario,
            model_path: exp.model_path,
            measured_file,
            measured,
            params,
            opts,
            cache: Mutex::new(HashMap::new()),
        };
        // Every value within the bounds must be one the model accepts: check the ends
        // (loading only) rather than fail in the middle of a search.
        for (j, p) in fitter.params.iter().enumerate() {
            for end in [p.spec.lo, p.spec.hi] {
                let mut v = fitter.start();
                v[j] = end;
                if let Err(e) = fitter.load_at(&fitter.round(&v), fitter.seed, fitter.duration_s) {
                    return Err(FitError::Param {
                        spec: p.spec.to_string(),
                        reason: format!("the model refuses the bound {end}: {e}"),
                    });
                }
            }
        }
        Ok(fitter)
    }

    /// The experiment with `values` patched into the scenario's overrides, simulated
    /// with `seed` for `duration_s` per point.
    fn load_at(
        &self,
        values: &[f64],
        seed: u64,
        duration_s: f64,
    ) -> Result<crate::config::scenario::Experiment, InputError> {
        let mut sc = self.scenario.clone();
        sc["seed"] = Value::from(seed);
        sc["duration_s"] = Value::from(duration_s);
        let mut ov = sc.get("overrides").cloned().unwrap_or(Value::Null);
        if !ov.is_object() {
            ov = Value::Object(serde_json::Map::new());
        }
        for (p, v) in self.params.iter().zip(values) {
            scenario::merge_patch(&mut ov, &patch_for(&p.segs, number(*v, p.integer)));
        }
        sc["overrides"] = ov;
        let overlay = Overlay {
            base: self.files,
            path: self.path.clone(),
            text: sc.to_string(),
        };
        scenario::load(&self.path, &overlay)
    }

    /// The model's own values of the parameters (after the scenario's overrides).
    pub fn model_values(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.model).collect()
    }

    /// Number of parameters.
    pub fn dim(&self) -> usize {
        self.params.len()
    }

    /// Sweeps simulated so far.
    pub fn simulations(&self) -> usize {
        self.cache.lock().expect("cache lock").len()
    }

    /// The starting values.
    pub fn start(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.start).collect()
    }

    fn round(&self, values: &[f64]) -> Vec<f64> {
        values
            .iter()
            .zip(&self.params)
            .map(|(v, p)| if p.integer { v.round() } else { *v })
            .collect()
    }

    fn describe(&self, values: &[f64]) -> String {
        self.params
            .iter()
            .zip(values)
            .map(|(p, v)| format!("{}={v}", p.spec.path))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Simulate the sweep at `values` (integers rounded) and compare it with the table;
    /// cached. The search keeps to the bounds; the model's own values may lie outside.
    pub fn evaluate(&self, values: &[f64]) -> Result<Arc<Evaluation>, FitError> {
        self.evaluate_with(values, self.seed, self.duration_s)
    }

    /// [`Fitter::evaluate`] with another seed or sending time per point.
    fn evaluate_with(
        &self,
        values: &[f64],
        seed: u64,
        duration_s: f64,
    ) -> Result<Arc<Evaluation>, FitError> {
        let values = self.round(values);
        let mut key: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        key.extend([seed, duration_s.to_bits()]);
        if let Some(e) = self.cache.lock().expect("cache lock").get(&key) {
            return Ok(e.clone());
        }
        let exp = self
            .load_at(&values, seed, duration_s)
            .map_err(|error| FitError::Rejected {
                values: self.describe(&values),
                error,
            })?;
        let results =
            runner::run(&exp, self.opts.threads, &|| {}).map_err(|error| FitError::Run {
                values: self.describe(&values),
                error,
            })?;
        let horizon_us = (exp.duration_s + exp.drain_s) * 1e6;
        let points = compare(&results, &self.measured, horizon_us);
        let objective = points
            .iter()
            .map(|p| {
                self.opts.weights.loss * p.loss_residual.powi(2)
                    + p.latency_residual
                        .map_or(0.0, |r| self.opts.weights.latency * r * r)
            })
            .sum();
        let e = Arc::new(Evaluation {
            values,
            objective,
            points,
            results,
        });
        self.cache
            .lock()
            .expect("cache lock")
            .insert(key, e.clone());
        Ok(e)
    }

    /// The lowest objective evaluated so far within the bounds (the model's own values
    /// may lie outside) at the fit's seed and duration.
    pub fn lowest_evaluated(&self) -> Option<Arc<Evaluation>> {
        self.lowest()
    }

    /// The evaluation at `values` (integers rounded) if it is cached, at the fit's seed
    /// and duration.
    fn cached(&self, values: &[f64]) -> Option<Arc<Evaluation>> {
        let mut key: Vec<u64> = self.round(values).iter().map(|v| v.to_bits()).collect();
        key.extend([self.seed, self.duration_s.to_bits()]);
        self.cache.lock().expect("cache lock").get(&key).cloned()
    }

    /// How rugged the objective is around `values`: the median of its change between
    /// evaluated lattice points one step apart along a parameter within the
    /// neighbourhood scan's box, and the number of such pairs (none when fewer than
    /// eight were evaluated).
    fn ruggedness(&self, values: &[f64]) -> Option<(f64, usize)> {
        let w = self.scan_half_width() as i64;
        if w == 0 {
            return None;
        }
        let mut offsets: Vec<Vec<i64>> = vec![Vec::new()];
        for _ in 0..self.dim() {
            offsets = offsets
                .iter()
                .flat_map(|o| {
                    (-w..=w).map(move |m| {
                        let mut o = o.clone();
                        o.push(m);
                        o
                    })
                })
                .collect();
        }
        let at = |o: &[i64]| -> Option<Arc<Evaluation>> {
            let v: Vec<f64> = (0..self.dim())
                .map(|i| values[i] + o[i] as f64 * self.unit(i))
                .collect();
            let inside = v
                .iter()
                .zip(&self.params)
                .all(|(x, p)| (p.spec.lo..=p.spec.hi).contains(x));
            if inside { self.cached(&v) } else { None }
        };
        let mut changes = Vec::new();
        for o in &offsets {
            let Some(a) = at(o) else { continue };
            for i in 0..self.dim() {
                if o[i] == w {
                    continue;
                }
                let mut n = o.clone();
                n[i] += 1;
                if let Some(b) = at(&n) {
                    changes.push((a.objective - b.objective).abs());
                }
            }
        }
        if changes.len() < 8 {
            return None;
        }
        changes.sort_by(f64::total_cmp);
        Some((changes[changes.len() / 2], changes.len()))
    }

    /// Every evaluation so far within the bounds (the model's own values may lie
    /// outside) at the fit's seed and duration, in no particular order.
    fn evaluated(&self) -> Vec<Arc<Evaluation>> {
        let tail = [self.seed, self.duration_s.to_bits()];
        let cache = self.cache.lock().expect("cache lock");
        cache
            .iter()
            .filter(|(k, e)| {
                k[k.len() - 2..] == tail
                    && e.values
                        .iter()
                        .zip(&self.params)
                        .all(|(v, p)| (p.spec.lo..=p.spec.hi).contains(v))
            })
            .map(|(_, e)| e.clone())
            .collect()
    }

    /// The lowest objective evaluated so far within the bounds (the model's own values
    /// may lie outside) at the fit's seed and duration.
    fn lowest(&self) -> Option<Arc<Evaluation>> {
        self.evaluated()
            .into_iter()
            // Ties broken by the values, so the choice does not depend on hash order.
            .min_by(|a, b| {
                a.objective.total_cmp(&b.objective).then_with(|| {
                    a.values
                        .iter()
                        .zip(&b.values)
                        .map(|(x, y)| x.total_cmp(y))
                        .find(|o| o.is_ne())
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
            })
    }

    fn to_unit(&self, values: &[f64]) -> Vec<f64> {
        values
            .iter()
            .zip(&self.params)
            .map(|(v, p)| (v - p.spec.lo) / (p.spec.hi - p.spec.lo))
            .collect()
    }

    fn unit_to_values(&self, u: &[f64]) -> Vec<f64> {
        u.iter()
            .zip(&self.params)
            .map(|(x, p)| p.spec.lo + x * (p.spec.hi - p.spec.lo))
            .collect()
    }

    /// One Nelder-Mead descent from `u0` (unit coordinates of the free parameters:
    /// all of them, or all but `fixed`, which stays at its unit coordinate) with simplex
    /// edge `size` and at most `iters` iterations, stopping when the simplex's
    /// objectives agree to `tol` (the objective's resolution: finer is not evidence);
    /// the best point's evaluation.
    fn descend(
        &self,
        u0: &[f64],
        size: f64,
        iters: u64,
        fixed: Option<(usize, f64)>,
        tol: f64,
    ) -> Result<Arc<Evaluation>, FitError> {
        let cost = UnitCost { f: self, fixed };
        let mut simplex = vec![u0.to_vec()];
        for i in 0..u0.len() {
            let mut v = u0.to_vec();
            // Step towards the side with more room, so the vertex stays inside.
            v[i] += if u0[i] + size <= 1.0 { size } else { -size };
            simplex.push(v);
        }
        let solver = NelderMead::new(simplex)
            .with_sd_tolerance(tol)
            .map_err(|e| FitError::Optimiser(e.to_string()))?;
        let res = Executor::new(cost, solver)
            .configure(|s| s.max_iters(iters))
            .run()
            .map_err(|e| match e.downcast::<FitError>() {
                Ok(f) => f,
                Err(e) => FitError::Optimiser(e.to_string()),
            })?;
        let best = res
            .state
            .best_param
            .ok_or_else(|| FitError::Optimiser("no best point".into()))?;
        let full = UnitCost { f: self, fixed }.full(&best);
        self.evaluate(&self.unit_to_values(&full))
    }

    /// A full descent from `u0` (all parameters free), to the resolution `eps`.
    fn descent(&self, u0: &[f64], size: f64, eps: f64) -> Result<Arc<Evaluation>, FitError> {
        self.descend(u0, size, self.opts.max_iters, None, eps)
    }

    /// The objective's resolution at `best` (see the module docs).
    fn resolution(&self, best: &Evaluation) -> Result<f64, FitError> {
        let other = self.evaluate_with(&best.values, self.seed.wrapping_add(1), self.duration_s)?;
        let noise = (other.objective - best.objective).abs();
        let rounding: f64 = best
            .points
            .iter()
            .filter(|p| p.latency_residual.is_some() && p.measured_latency_us > 0.0)
            .map(|p| {
                self.opts.weights.latency
                    * (100.0 * TABLE_LATENCY_STEP_US / p.measured_latency_us).powi(2)
                    / 12.0
            })
            .sum();
        Ok(noise.max(rounding).max(1e-3 * best.objective).max(1e-9))
    }

    /// Whether the search may start another descent.
    fn budget_left(&self) -> bool {
        self.simulations() < self.opts.max_simulations
    }

    /// The search (see the module docs): the sample, the descents from its best points,
    /// restarts while they improve, and the last local search.
    /// Also whether the budget ([`FitOptions::max_simulations`]) ended the restarts
    /// before [`FitOptions::restarts`] of them in a row had brought nothing.
    fn search(&self, start_eval: &Evaluation) -> Result<(Arc<Evaluation>, bool), FitError> {
        // The start and a Halton sample of the box, best first.
        let mut candidates = vec![(start_eval.objective, self.to_unit(&start_eval.values))];
        // The sample's sweeps are independent: run them side by side (each also runs
        // its points in parallel); collected in sample order, so nothing depends on
        // which finishes first.
        let indices: Vec<usize> = (1..=self.opts.samples).collect();
        let sample: Vec<(f64, Vec<f64>)> = par_map_bounded(&indices, |&i| {
            let u: Vec<f64> = (0..self.dim()).map(|d| halton(i, PRIMES[d])).collect();
            self.evaluate(&self.unit_to_values(&u))
                .map(|e| (e.objective, u))
        })?;
        candidates.extend(sample);
        // A stable sort: ties keep the sample's order.
        candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut best = self.evaluate(&self.unit_to_values(&candidates[0].1))?;
        let mut eps = self.resolution(&best)?;
        let mut next = 0;
        while next < candidates.len().min(self.opts.descents.max(1)) && self.budget_left() {
            let e = self.descent(&candidates[next].1, 0.1, eps)?;
            next += 1;
            if e.objective < best.objective - eps {
                best = e;
                eps = self.resolution(&best)?;
            } else if e.objective < best.objective {
                best = e;
            }
        }
        // Restarts: from the next-best sample points, then from the best with fresh
        // simplices of other sizes, until `restarts` in a row bring nothing above `eps`.
        let sizes = [0.05, 0.2, 0.02];
        let (mut stale, mut fresh) = (0, 0);
        while stale < self.opts.restarts && self.budget_left() {
            let e = if next < candidates.len() {
                next += 1;
                self.descent(&candidates[next - 1].1, 0.1, eps)?
            } else {
                fresh += 1;
                let size = sizes[(fresh - 1) % sizes.len()];
                self.descent(&self.to_unit(&best.values), size, eps)?
            };
            if e.objective < best.objective - eps {
                best = e;
                eps = self.resolution(&best)?;
                stale = 0;
            } else {
                if e.objective < best.objective {
                    best = e;
                }
                stale += 1;
            }
        }
        let cut_short = stale < self.opts.restarts;
        let polished = self.polish(best)?;
        let settled = self.settle(polished)?;
        Ok((self.neighbourhood(settled)?, cut_short))
    }

    /// Step of parameter `i`'s lattice: 1 for an integer field (the model's costs are
    /// integer ns, so the objective is constant between integers), a 2^-20 of the
    /// range for a real one.
    fn unit(&self, i: usize) -> f64 {
        let p = &self.params[i];
        if p.integer {
            1.0
        } else {
            (p.spec.hi - p.spec.lo) / (1u64 << 20) as f64
        }
    }

    /// The lattice search (see the module docs) from `from` over the parameters other
    /// than `fixed`: polls the points a mesh step away along each free axis and each
    /// pair of them (the eight directions of the plane of the pair: costs trade off
    /// along diagonals), all in parallel, and moves to the lowest when it is lower
    /// than the current point; otherwise halves the mesh, down to one lattice step.
    /// The mesh starts at the power of two of lattice steps nearest `start_frac` of
    /// each parameter's range. It ends on a point no poll point of one step scores
    /// lower than: a local minimum of the stepped objective on its lattice.
    fn lattice(
        &self,
        from: Arc<Evaluation>,
        fixed: Option<usize>,
        start_frac: f64,
    ) -> Result<Arc<Evaluation>, FitError> {
        let free: Vec<usize> = (0..self.dim()).filter(|&i| Some(i) != fixed).collect();
        if free.is_empty() {
            return Ok(from);
        }
        let mut mult: Vec<f64> = free
            .iter()
            .map(|&i| {
                let n =
                    start_frac * (self.params[i].spec.hi - self.params[i].spec.lo) / self.unit(i);
                if n <= 1.0 {
                    1.0
                } else {
                    2f64.powi(n.log2().round() as i32)
                }
            })
            .collect();
        let mut best = from;
        loop {
            let mut dirs: Vec<Vec<(usize, f64)>> = Vec::new();
            for (a, &i) in free.iter().enumerate() {
                for sg in [-1.0, 1.0] {
                    dirs.push(vec![(i, sg * mult[a] * self.unit(i))]);
                }
                for (b, &l) in free.iter().enumerate().skip(a + 1) {
                    for (si, sl) in [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)] {
                        dirs.push(vec![
                            (i, si * mult[a] * self.unit(i)),
                            (l, sl * mult[b] * self.unit(l)),
                        ]);
                    }
                }
            }
            let mut polls: Vec<Vec<f64>> = Vec::new();
            for d in dirs {
                let mut v = best.values.clone();
                for (i, step) in d {
                    let p = &self.params[i];
                    v[i] = (v[i] + step).clamp(p.spec.lo, p.spec.hi);
                }
                let v = self.round(&v);
                if v != best.values && !polls.contains(&v) {
                    polls.push(v);
                }
            }
            // Collected in poll order, so the choice does not depend on which sweep
            // finishes first; ties go to the first.
            let evals = par_map_bounded(&polls, |v| self.evaluate(v))?;
            let lowest = evals
                .into_iter()
                .reduce(|a, b| if b.objective < a.objective { b } else { a });
            match lowest {
                Some(e) if e.objective < best.objective => best = e,
                _ => {
                    if mult.iter().all(|&m| m <= 1.0) {
                        return Ok(best);
                    }
                    for m in &mut mult {
                        *m = (*m / 2.0).max(1.0);
                    }
                }
            }
        }
    }

    /// Evaluates every lattice point of a box (per parameter, the lowest and highest
    /// value, within the bounds) one lattice step apart from `centre`, side by side;
    /// the evaluations in order.
    fn scan(&self, centre: &[f64], bounds: &[[f64; 2]]) -> Result<Vec<Arc<Evaluation>>, FitError> {
        let mut points: Vec<Vec<f64>> = vec![Vec::new()];
        for i in 0..self.dim() {
            let u = self.unit(i);
            // Whole lattice steps below and above the centre.
            let down = ((centre[i] - bounds[i][0]) / u + 1e-9).floor().max(0.0) as i64;
            let up = ((bounds[i][1] - centre[i]) / u + 1e-9).floor().max(0.0) as i64;
            points = points
                .iter()
                .flat_map(|v| {
                    (-down..=up).map(move |m| {
                        let mut w = v.clone();
                        w.push(centre[i] + m as f64 * u);
                        w
                    })
                })
                .collect();
        }
        let points: Vec<Vec<f64>> = points.iter().map(|v| self.round(v)).collect();
        par_map_bounded(&points, |v| self.evaluate(v))
    }

    /// Half-width in lattice steps of the neighbourhood scan's box around the optimum:
    /// the largest whose box holds at most [`FitOptions::scan_points`] points.
    fn scan_half_width(&self) -> u64 {
        let k = self.dim() as i32;
        let n = self.opts.scan_points as f64;
        let mut w = 0u64;
        while ((2 * w + 3) as f64).powi(k) <= n {
            w += 1;
        }
        w
    }

    /// The neighbourhood scan (see the module docs): every lattice point within
    /// [`Fitter::scan_half_width`] steps of `best` along each parameter; from a lower
    /// point found there, the lattice search and the scan again, at most
    /// [`MAX_SCANS`] boxes.
    fn neighbourhood(&self, mut best: Arc<Evaluation>) -> Result<Arc<Evaluation>, FitError> {
        let w = self.scan_half_width();
        if w == 0 {
            return Ok(best);
        }
        for _ in 0..MAX_SCANS {
            let bounds: Vec<[f64; 2]> = (0..self.dim())
                .map(|i| {
                    let (p, h) = (&self.params[i].spec, w as f64 * self.unit(i));
                    [
                        (best.values[i] - h).max(p.lo),
                        (best.values[i] + h).min(p.hi),
                    ]
                })
                .collect();
            self.scan(&best.values, &bounds)?;
            let low = self.lowest().expect("something was evaluated");
            if low.objective < best.objective {
                best = self.settle(low)?;
            } else {
                break;
            }
        }
        Ok(best)
    }

    /// The lattice search from `from`, then again from the lowest point evaluated so
    /// far while that is lower (the descents' simplices and the profiles may have
    /// passed through one), so that what is returned scores no worse than any point
    /// evaluated within the bounds.
    fn settle(&self, from: Arc<Evaluation>) -> Result<Arc<Evaluation>, FitError> {
        let mut best = self.lattice(from, None, LATTICE_START)?;
        for _ in 0..MAX_SETTLE {
            let low = self.lowest().expect("something was evaluated");
            if low.objective < best.objective {
                best = self.lattice(low, None, LATTICE_START)?;
            } else {
                return Ok(best);
            }
        }
        let low = self.lowest().expect("something was evaluated");
        Ok(if low.objective < best.objective {
            low
        } else {
            best
        })
    }

    /// The last local search from `best`: a fresh, small simplex, again while it
    /// improves by more than the resolution (within the budget after the first).
    fn polish(&self, mut best: Arc<Evaluation>) -> Result<Arc<Evaluation>, FitError> {
        let mut first = true;
        while first || self.budget_left() {
            first = false;
            let eps = self.resolution(&best)?;
            let e = self.descent(&self.to_unit(&best.values), 0.03, eps)?;
            let improved = e.objective < best.objective - eps;
            if e.objective < best.objective {
                best = e;
            }
            if !improved {
                break;
            }
        }
        Ok(best)
    }

    /// Fit: the search, then the uncertainty and the profiles (again from a lower
    /// point the profiles found, three times at most), then the duration check.
    pub fn fit(&self) -> Result<FitReport, FitError> {
        let start = self.start();
        let start_eval = self.evaluate(&start)?;
        let model_eval = self.evaluate(&self.model_values())?;
        let (mut best, cut_short) = self.search(&start_eval)?;
        let mut notes = Vec::new();
        let mut rounds = 0;
        let (a, eps) = loop {
            let eps = self.resolution(&best)?;
            // The intervals first; the drawn profiles once the fit stands (the intervals
            // are then taken from the cache).
            self.assess(&best, eps, false)?;
            let low = self.lowest().expect("something was evaluated");
            if low.objective < best.objective && rounds < MAX_PROFILE_RESTARTS {
                rounds += 1;
                notes.push(self.restart_note(&low, &best, "profile intervals"));
                best = self.neighbourhood(self.settle(low)?)?;
                continue;
            }
            let mut a = self.assess(&best, eps, true)?;
            let low = self.lowest().expect("something was evaluated");
            if low.objective < best.objective {
                if rounds < MAX_PROFILE_RESTARTS {
                    rounds += 1;
                    notes.push(self.restart_note(&low, &best, "drawn profiles"));
                    best = self.neighbourhood(self.settle(low)?)?;
                    continue;
                }
                // Out of restarts: the lowest point is what is reported, with the
                // intervals of the last point they were searched around.
                a.warnings.push(format!(
                    "the search stopped in a local minimum: after {rounds} restarts from \
                     points the profiles found, they found objective {} at {} against {} \
                     at {}; that lower point is reported as the fit, but its intervals, \
                     Jacobian and correlations are those around the other point and may \
                     exclude values the table allows; widen the search (--samples, \
                     --descents, --restarts) or start there",
                    fmt(low.objective),
                    self.describe(&low.values),
                    fmt(best.objective),
                    self.describe(&best.values)
                ));
                for (f, v) in a.params.iter_mut().zip(&low.values) {
                    f.value = *v;
                }
                best = low;
            }
            break (a, eps);
        };
        let mut warnings = a.warnings;
        if cut_short {
            warnings.push(format!(
                "the search ran out of its budget of {} simulated sweeps (--max-simulations) \
                 before {} restarts in a row brought nothing: the fit may not be the \
                 minimum; raise --max-simulations",
                self.opts.max_simulations, self.opts.restarts
            ));
        }
        if best.objective > model_eval.objective + eps {
            warnings.push(format!(
                "the fit ends worse than the model's own values (objective {} against {}): \
                 the search missed their basin; widen it (--samples, --descents) or start there",
                fmt(best.objective),
                fmt(model_eval.objective)
            ));
        }
        let duration_check = self.duration_check(&best)?;
        if let Some(c) = &duration_check
            && c.change_rms > c.residual_rms
        {
            warnings.push(format!(
                "the duration per point moves the table's figures more than the residuals: \
                 the fitted values simulated for the table's {} s per point (from its Sent \
                 column) instead of {} s move the weighted loss and latency terms by {} RMS \
                 (most at {} %), against a residual RMS of {}: the fitted values and both \
                 intervals are those of {} s per point and do not include that bias, so they \
                 may miss the values the table was measured with; fit with --duration {}",
                fmt(c.table_duration_s),
                fmt(c.fit_duration_s),
                fmt(c.change_rms),
                fmt(c.worst_load_pct),
                fmt(c.residual_rms),
                fmt(c.fit_duration_s),
                fmt(c.table_duration_s)
            ));
        }
        Ok(FitReport {
            scenario: self.file.clone(),
            model: self.model_path.clone(),
            measured: self.measured_file.clone(),
            duration_s: self.duration_s,
            seed: self.seed,
            weights: self.opts.weights,
            params: a.params,
            correlation: a.correlation,
            model_objective: model_eval.objective,
            start_objective: start_eval.objective,
            objective: best.objective,
            dof: a.dof,
            resolution: eps,
            duration_check,
            simulations: self.simulations(),
            model_points: model_eval.points.clone(),
            start_points: start_eval.points.clone(),
            points: best.points.clone(),
            warnings,
            notes,
        })
    }

    /// What a restart from `low`, found by `by`, below `best` says.
    fn restart_note(&self, low: &Evaluation, best: &Evaluation, by: &str) -> String {
        format!(
            "the {by} evaluated objective {} at {}, below the optimum of the time ({} at \
             {}): the search restarted from there (lattice search and neighbourhood \
             scan) and the uncertainty was searched again around the new optimum",
            fmt(low.objective),
            self.describe(&low.values),
            fmt(best.objective),
            self.describe(&best.values)
        )
    }

    /// The fitted values simulated at the table's own duration per point, when the
    /// fit's differs from it by more than 5 % (see the module docs).
    fn duration_check(&self, best: &Evaluation) -> Result<Option<DurationCheck>, FitError> {
        let mut ratios: Vec<f64> = best
            .results
            .points
            .iter()
            .filter_map(|p| {
                let m = measured_at(&self.measured, p.load_pct)?;
                let sent = p.figures.total.sent;
                (sent > 0.0 && m.total.sent > 0.0).then(|| m.total.sent / sent)
            })
            .collect();
        if ratios.is_empty() {
            return Ok(None);
        }
        ratios.sort_by(f64::total_cmp);
        let table_d = self.duration_s * ratios[ratios.len() / 2];
        if !(table_d.is_finite() && table_d > 0.0)
            || (table_d / self.duration_s - 1.0).abs() <= 0.05
            || self.load_at(&best.values, self.seed, table_d).is_err()
        {
            return Ok(None);
        }
        let other = self.evaluate_with(&best.values, self.seed, table_d)?;
        let w = self.opts.weights;
        let (mut sum, mut n, mut worst) = (0.0, 0usize, (0.0, best.points[0].load_pct));
        for p in &best.points {
            let Some(q) = other.points.iter().find(|q| q.load_pct == p.load_pct) else {
                continue;
            };
            let mut here = 0.0;
            if w.loss > 0.0 {
                here += w.loss * (q.loss_residual - p.loss_residual).powi(2);
                n += 1;
            }
            // A latency censored at the run's horizon (a side that forwards nothing)
            // moves with the duration itself: only points where both sides forward,
            // at both durations, compare.
            let forwards = |x: &PointFit| x.loss_pct < 100.0 && x.measured_loss_pct < 100.0;
            if w.latency > 0.0
                && forwards(p)
                && forwards(q)
                && let (Some(a), Some(b)) = (p.latency_residual, q.latency_residual)
            {
                here += w.latency * (b - a).powi(2);
                n += 1;
            }
            sum += here;
            if here > worst.0 {
                worst = (here, p.load_pct);
            }
        }
        let counted = counted(best, w).max(1);
        Ok(Some(DurationCheck {
            fit_duration_s: self.duration_s,
            table_duration_s: table_d,
            change_rms: (sum / n.max(1) as f64).sqrt(),
            residual_rms: (best.objective / counted as f64).sqrt(),
            worst_load_pct: worst.1,
        }))
    }

    /// The uncertainty of the fit at `best`: the Jacobian, the linearised and profile
    /// intervals, the drawn profiles and the warnings about them.
    fn assess(&self, best: &Evaluation, eps: f64, drawn: bool) -> Result<Assessment, FitError> {
        let values = best.values.clone();
        let (jac, steps) = self.jacobian(&values)?;
        let unc = uncertainty(&jac, best, self.opts.weights, values.len());
        let dirs = conditional_directions(&jac, values.len());
        let n_res = counted(best, self.opts.weights) as i64;
        let dof = n_res - values.len() as i64;
        // Likelihood-ratio threshold for one parameter's profile (nonlinear least
        // squares, e.g. Bates & Watts 1988, section 6.1): SSR <= SSR_min (1 + F / dof),
        // F the 95 % point of F(1, dof); its margin raised to the resolution.
        let threshold = (dof > 0).then(|| {
            use statrs::distribution::{ContinuousCDF, FisherSnedecor};
            let f = FisherSnedecor::new(1.0, dof as f64)
                .map(|d| d.inverse_cdf(0.95))
                .unwrap_or(3.84);
            let margin = best.objective * f / dof as f64;
            (best.objective + margin.max(eps), margin < eps, margin)
        });
        // The values of every point evaluated so far under the threshold.
        let under_threshold: Vec<Vec<f64>> = match threshold {
            Some((t, ..)) => self
                .evaluated()
                .into_iter()
                .filter(|e| e.objective <= t)
                .map(|e| e.values.clone())
                .collect(),
            None => Vec::new(),
        };
        let mut warnings = Vec::new();
        let mut params = Vec::new();
        for (j, p) in self.params.iter().enumerate() {
            let flat = jac.iter().all(|row| row[j] == 0.0);
            if flat {
                warnings.push(format!(
                    "`{}` is not identifiable from this table: moving it by {} (from {}) \
                     changes no residual; its value is where the search stopped, not an estimate",
                    p.spec.path,
                    fmt(steps[j]),
                    fmt(values[j])
                ));
            }
            let se = if flat {
                None
            } else {
                unc.as_ref().map(|u| u.se[j])
            };
            let ci95 = se.zip(unc.as_ref()).map(|(se, u)| {
                let h = u.t95 * se;
                [values[j] - h, values[j] + h]
            });
            let mut probes = Vec::new();
            let mut profile_ci95 = None;
            let mut resolution_limited = None;
            if let Some((t, coarse, margin)) = threshold
                && !flat
            {
                let iv = self.profile_interval(j, best, &dirs[j], steps[j], t, eps)?;
                probes = iv.probes;
                for (end, hit) in iv.ends.iter().zip(iv.at_bound) {
                    if hit {
                        warnings.push(format!(
                            "`{}`: the 95 % profile interval reaches the bound {}: the \
                             table does not bound it on that side",
                            p.spec.path,
                            fmt(*end)
                        ));
                    }
                }
                let narrow = iv.inner[0] == iv.inner[1];
                if coarse || narrow {
                    let width = iv.ends[1] - iv.ends[0];
                    resolution_limited = Some(width);
                    let why = if coarse {
                        format!(
                            "the objective's resolution {} exceeds the threshold's margin {}",
                            fmt(eps),
                            fmt(margin)
                        )
                    } else {
                        "no value probed but the fitted one was under the threshold".into()
                    };
                    warnings.push(format!(
                        "`{}`: the 95 % profile interval {}..{} is resolution-limited ({why}): \
                         its width {} is that of the objective's steps, not of the evidence; \
                         read it as the finest the search could resolve, with the others \
                         re-optimised by a local (lattice) search at each probe",
                        p.spec.path,
                        fmt(iv.ends[0]),
                        fmt(iv.ends[1]),
                        fmt(width)
                    ));
                }
                profile_ci95 = Some(iv.ends);
            }
            let mut profile = if drawn {
                self.profile(j, &values, &dirs[j], eps)?
            } else {
                Vec::new()
            };
            profile.extend(probes);
            profile.sort_by(|a, b| a[0].total_cmp(&b[0]));
            profile.dedup_by(|a, b| a[0] == b[0]);
            // A stepped profile can dip under the threshold again beyond an end found
            // from the fit: then the table allows values there too. So can any point
            // the search, its scans or the other profiles evaluated.
            if let (Some((t, ..)), Some([lo, hi])) = (threshold, profile_ci95.as_mut()) {
                let outside = |x: f64| x < *lo || x > *hi;
                let list = |mut xs: Vec<f64>| {
                    xs.sort_by(f64::total_cmp);
                    xs.dedup();
                    let shown: Vec<String> = xs.iter().take(6).map(|x| fmt(*x)).collect();
                    let more = xs.len().saturating_sub(6);
                    let tail = if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    };
                    (xs, format!("{}{tail}", shown.join(", ")))
                };
                let (in_profile, shown_profile) = list(
                    profile
                        .iter()
                        .filter(|s| s[1] <= t && outside(s[0]))
                        .map(|s| s[0])
                        .collect(),
                );
                let (in_cache, shown_cache) = list(
                    under_threshold
                        .iter()
                        .map(|v| v[j])
                        .filter(|x| outside(*x) && !in_profile.contains(x))
                        .collect(),
                );
                if !in_profile.is_empty() {
                    warnings.push(format!(
                        "`{}`: the profile is under the 95 % threshold again at {} (outside \
                         {}..{}): the table allows separate ranges; the interval is widened \
                         to cover them",
                        p.spec.path,
                        shown_profile,
                        fmt(*lo),
                        fmt(*hi)
                    ));
                }
                if !in_cache.is_empty() {
                    warnings.push(format!(
                        "`{}`: points the fit evaluated (its scans, descents or the other \
                         profiles) score under the 95 % threshold at {} (outside {}..{}, the \
                         interval searched outwards from the fit): the objective is rugged \
                         and the table does not exclude those values either; the interval \
                         is widened to cover them",
                        p.spec.path,
                        shown_cache,
                        fmt(*lo),
                        fmt(*hi)
                    ));
                }
                for x in in_profile.into_iter().chain(in_cache) {
                    *lo = lo.min(x);
                    *hi = hi.max(x);
                }
                if let Some(w) = resolution_limited.as_mut() {
                    *w = *hi - *lo;
                }
            }
            // The linearised interval reads the valley floor at the fit as a parabola;
            // a profile at least twice as wide says the objective is not one over the
            // values the table allows, and the narrow interval is not to be believed.
            if let (Some([plo, phi]), Some([llo, lhi])) = (profile_ci95, ci95)
                && phi - plo > 2.0 * (lhi - llo)
            {
                warnings.push(format!(
                    "`{}`: the linearised interval {}..{} understates the uncertainty (the \
                     profile interval {}..{} is {:.1} times as wide: the objective is not \
                     quadratic there); read the profile interval",
                    p.spec.path,
                    fmt(llo),
                    fmt(lhi),
                    fmt(plo),
                    fmt(phi),
                    (phi - plo) / (lhi - llo).max(f64::MIN_POSITIVE)
                ));
            }
            if let Some([lo, hi]) = profile_ci95.or(ci95)
                && (hi - lo) / 2.0 > 0.5 * values[j].abs()
            {
                warnings.push(format!(
                    "`{}` is poorly determined: 95 % interval {}..{} around {}",
                    p.spec.path,
                    fmt(lo),
                    fmt(hi),
                    fmt(values[j])
                ));
            }
            let range = p.spec.hi - p.spec.lo;
            if (values[j] - p.spec.lo) < 0.005 * range || (p.spec.hi - values[j]) < 0.005 * range {
                warnings.push(format!(
                    "`{}` stopped at a bound ({}): widen its bounds ({}..{})",
                    p.spec.path,
                    fmt(values[j]),
                    fmt(p.spec.lo),
                    fmt(p.spec.hi)
                ));
            }
            params.push(FittedParam {
                path: p.spec.path.clone(),
                lo: p.spec.lo,
                hi: p.spec.hi,
                integer: p.integer,
                model_value: p.model,
                start: self.params[j].start,
                value: values[j],
                std_error: se,
                ci95,
                profile_ci95,
                resolution_limited,
                identifiable: !flat,
                profile,
            });
        }
        if let Some((t, ..)) = threshold
            && let Some((median, pairs)) = self.ruggedness(&values)
            && median > (t - best.objective)
        {
            warnings.push(format!(
                "the objective is rugged at the parameters' own steps: between lattice points \
                 one step apart around the fit ({pairs} pairs scanned) it changes by a median \
                 of {}, more than the 95 % threshold's margin {}; the search, its scans and \
                 the profiles evaluated {} points, not every one where the table might allow \
                 a value, so the fit cannot tell whether a value outside the intervals (or a \
                 point scoring below the fit) exists: the optimum and the intervals are those \
                 of the points evaluated",
                fmt(median),
                fmt(t - best.objective),
                self.simulations()
            ));
        }
        let correlation = unc.as_ref().map(|u| u.corr.clone());
        let identifiable = params.iter().filter(|p| p.identifiable).count();
        if unc.is_none() && identifiable > 1 && jac.len() > values.len() {
            warnings.push(format!(
                "{} are confounded: the residuals move along one direction only (J^T J is \
                 singular), so the table fixes a combination of them, not each one",
                self.params
                    .iter()
                    .zip(&params)
                    .filter(|(_, f)| f.identifiable)
                    .map(|(p, _)| format!("`{}`", p.spec.path))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(c) = &correlation {
            for (i, row) in c.iter().enumerate() {
                for (j, r) in row.iter().enumerate().skip(i + 1) {
                    if r.abs() > 0.95 {
                        warnings.push(format!(
                            "`{}` and `{}` are confounded (correlation {r:.3}): the table fixes \
                             a combination of them, not each one",
                            self.params[i].spec.path, self.params[j].spec.path
                        ));
                    }
                }
            }
        }
        Ok(Assessment {
            params,
            correlation,
            dof,
            warnings,
        })
    }

    /// Jacobian of the weighted residuals at `values` by central differences (one-sided
    /// at a bound), and the steps used.
    fn jacobian(&self, values: &[f64]) -> Result<(Vec<Vec<f64>>, Vec<f64>), FitError> {
        let base = self.evaluate(values)?;
        let n = residuals(&base, self.opts.weights).len();
        let k = values.len();
        let mut jac = vec![vec![0.0; k]; n];
        let mut steps = Vec::new();
        for (j, p) in self.params.iter().enumerate() {
            let range = p.spec.hi - p.spec.lo;
            let mut h = (0.02 * values[j].abs()).max(0.01 * range);
            if p.integer {
                h = h.round().max(1.0);
            }
            let up = (values[j] + h).min(p.spec.hi);
            let down = (values[j] - h).max(p.spec.lo);
            let at = |x: f64| {
                let mut v = values.to_vec();
                v[j] = x;
                self.evaluate(&v)
            };
            let (eu, ed) = (at(up)?, at(down)?);
            let (ru, rd) = (
                residuals(&eu, self.opts.weights),
                residuals(&ed, self.opts.weights),
            );
            for i in 0..n {
                jac[i][j] = (ru[i] - rd[i]) / (up - down);
            }
            steps.push(h);
        }
        Ok((jac, steps))
    }

    /// The values at `x` for parameter `j` on its conditional path `d` from `values`.
    fn on_path(&self, j: usize, values: &[f64], d: &[f64], x: f64) -> Vec<f64> {
        values
            .iter()
            .zip(d)
            .zip(&self.params)
            .map(|((v, di), p)| (v + di * (x - values[j])).clamp(p.spec.lo, p.spec.hi))
            .collect()
    }

    /// The profile at `x` for parameter `j`: the other parameters re-optimised by a
    /// small Nelder-Mead from `warm` (see the module docs); with one parameter, the
    /// objective at `x`.
    fn profile_point(
        &self,
        j: usize,
        x: f64,
        warm: &[f64],
        eps: f64,
    ) -> Result<Arc<Evaluation>, FitError> {
        let mut v = warm.to_vec();
        v[j] = x;
        if self.dim() == 1 {
            return self.evaluate(&v);
        }
        if self.opts.profile_iters == 0 {
            let e = self.evaluate(&v)?;
            let e = self.lattice(e, Some(j), PROFILE_LATTICE_START)?;
            return self.profile_scan(j, e);
        }
        let u = self.to_unit(&v);
        let free: Vec<f64> = (0..u.len()).filter(|&i| i != j).map(|i| u[i]).collect();
        let e = self.descend(&free, 0.03, self.opts.profile_iters, Some((j, u[j])), eps)?;
        let e = self.lattice(e, Some(j), PROFILE_LATTICE_START)?;
        self.profile_scan(j, e)
    }

    /// The neighbourhood scan at a profile point: every lattice point of the others
    /// within [`Fitter::scan_half_width`] steps of `e` (parameter `j` held), then the
    /// lattice search from the lowest when it is lower than `e`.
    fn profile_scan(&self, j: usize, e: Arc<Evaluation>) -> Result<Arc<Evaluation>, FitError> {
        let w = self.scan_half_width();
        if w == 0 {
            return Ok(e);
        }
        let bounds: Vec<[f64; 2]> = (0..self.dim())
            .map(|i| {
                let (p, h) = (&self.params[i].spec, w as f64 * self.unit(i));
                if i == j {
                    [e.values[i], e.values[i]]
                } else {
                    [(e.values[i] - h).max(p.lo), (e.values[i] + h).min(p.hi)]
                }
            })
            .collect();
        let evals = self.scan(&e.values, &bounds)?;
        let low = evals
            .into_iter()
            .reduce(|a, b| if b.objective < a.objective { b } else { a })
            .expect("the centre is scanned");
        if low.objective < e.objective {
            self.lattice(low, Some(j), PROFILE_LATTICE_START)
        } else {
            Ok(e)
        }
    }

    /// The objective's profile along parameter `j` over its bounds, the others
    /// re-optimised at each point from the conditional path `d`.
    fn profile(
        &self,
        j: usize,
        values: &[f64],
        d: &[f64],
        eps: f64,
    ) -> Result<Vec<[f64; 2]>, FitError> {
        let n = self.opts.profile_points;
        let p = &self.params[j];
        let mut xs: Vec<f64> = (0..n)
            .map(|i| p.spec.lo + (p.spec.hi - p.spec.lo) * i as f64 / (n.max(2) - 1) as f64)
            .collect();
        if n > 0 {
            // The fitted value and its neighbourhood (+-3 % and +-8 %), where the
            // coarse grid says little about the basin's shape.
            xs.push(values[j]);
            for f in [-0.08, -0.03, 0.03, 0.08] {
                xs.push((values[j] * (1.0 + f)).clamp(p.spec.lo, p.spec.hi));
            }
        }
        let mut out: Vec<[f64; 2]> = par_map_bounded(&xs, |&x| {
            self.profile_point(j, x, &self.on_path(j, values, d, x), eps)
                .map(|e| [e.values[j], e.objective])
        })?;
        out.sort_by(|a, b| a[0].total_cmp(&b[0]));
        out.dedup_by(|a, b| a[0] == b[0]);
        Ok(out)
    }

    /// The profile interval of parameter `j` (see the module docs): from the fitted
    /// value outwards (steps doubling from `h`, then four bisections), each step's
    /// others re-optimised from the previous step's optimum moved along the conditional
    /// path `d`.
    fn profile_interval(
        &self,
        j: usize,
        best: &Evaluation,
        d: &[f64],
        h: f64,
        threshold: f64,
        eps: f64,
    ) -> Result<ProfileInterval, FitError> {
        let p = &self.params[j];
        let fitted = best.values[j];
        let snap = |x: f64| if p.integer { x.round() } else { x };
        let mut iv = ProfileInterval {
            ends: [fitted; 2],
            inner: [fitted; 2],
            at_bound: [false; 2],
            probes: Vec::new(),
        };
        for (side, sign) in [-1.0f64, 1.0].into_iter().enumerate() {
            let bound = if sign < 0.0 { p.spec.lo } else { p.spec.hi };
            let (mut inside, mut inside_at) = (fitted, best.values.clone());
            let mut step = h;
            let mut outside = None;
            loop {
                let x = snap(fitted + sign * step);
                let x = if sign < 0.0 {
                    x.max(bound)
                } else {
                    x.min(bound)
                };
                let e = self.profile_point(j, x, &self.on_path(j, &inside_at, d, x), eps)?;
                iv.probes.push([x, e.objective]);
                if e.objective > threshold {
                    outside = Some(x);
                    break;
                }
                (inside, inside_at) = (x, e.values.clone());
                if x == bound {
                    iv.at_bound[side] = true;
                    break;
                }
                step *= 2.0;
            }
            iv.ends[side] = match outside {
                Some(mut out) => {
                    for _ in 0..4 {
                        let mid = snap((inside + out) / 2.0);
                        if mid == inside || mid == out {
                            break;
                        }
                        let warm = self.on_path(j, &inside_at, d, mid);
                        let e = self.profile_point(j, mid, &warm, eps)?;
                        iv.probes.push([mid, e.objective]);
                        if e.objective > threshold {
                            out = mid;
                        } else {
                            (inside, inside_at) = (mid, e.values.clone());
                        }
                    }
                    out
                }
                None => bound,
            };
            iv.inner[side] = inside;
        }
        Ok(iv)
    }

    /// The model file with the fitted values set and a `notes` entry on each saying how
    /// it was fitted.
    pub fn fitted_model(&self, report: &FitReport) -> Result<Value, FitError> {
        let text = self
            .files
            .read(Path::new(&self.model_path))
            .map_err(|source| InputError::Read {
                file: self.model_path.clone(),
                source,
            })?;
        let mut model: Value = serde_json::from_str(&text).map_err(|e| InputError::Syntax {
            file: self.model_path.clone(),
            msg: e.to_string(),
        })?;
        let how = format!(
            "fitted by `irqsim fit` to {} (scenario {}, {} s per point, seed {}): weighted \
             least squares of loss (percentage points, weight {}) and 100 ln(avg latency ratio) \
             (weight {}) per load point, Nelder-Mead with restarts, lattice search and neighbourhood \
             scan; objective {} -> {} in {} \
             simulations (resolution {})",
            report.measured,
            report.scenario,
            fmt(report.duration_s),
            report.seed,
            report.weights.loss,
            report.weights.latency,
            fmt(report.start_objective),
            fmt(report.objective),
            report.simulations,
            fmt(report.resolution)
        );
        for (p, f) in self.params.iter().zip(&report.params) {
            if !f.identifiable {
                // No estimate: the file keeps the model's value, the note says why.
                let note = format!(
                    "kept at {}: `irqsim fit` could not identify it from {} (moving it \
                     changed no residual)",
                    fmt(f.model_value),
                    report.measured
                );
                if !model.get("notes").is_some_and(Value::is_object) {
                    model["notes"] = Value::Object(serde_json::Map::new());
                }
                model["notes"][p.spec.path.clone()] = Value::String(note);
                continue;
            }
            if let Some(slot) = lookup_mut(&mut model, &p.segs) {
                *slot = number(f.value, p.integer);
            } else {
                // Only the scenario's overrides have this field: write it as one.
                scenario::merge_patch(&mut model, &patch_for(&p.segs, number(f.value, p.integer)));
            }
            let unc = match (f.profile_ci95, f.ci95) {
                (Some([lo, hi]), lin) => format!(
                    "95 % profile interval {}..{}{}{}",
                    fmt(lo),
                    fmt(hi),
                    if f.resolution_limited.is_some() {
                        " (resolution-limited: the objective cannot resolve its ends)"
                    } else {
                        ""
                    },
                    lin.map_or(String::new(), |[a, b]| format!(
                        " (linearised {}..{})",
                        fmt(a),
                        fmt(b)
                    ))
                ),
                (None, _) if !f.identifiable => "not identifiable from the table".into(),
                (None, Some([lo, hi])) => {
                    format!("95 % interval {}..{} (linearised)", fmt(lo), fmt(hi))
                }
                (None, None) => "no interval (no residual degrees of freedom)".into(),
            };
            let note = format!(
                "{} (was {}; the fit started at {}): {how}; {unc}",
                fmt(f.value),
                fmt(f.model_value),
                fmt(f.start)
            );
            if !model.get("notes").is_some_and(Value::is_object) {
                model["notes"] = Value::Object(serde_json::Map::new());
            }
            model["notes"][p.spec.path.clone()] = Value::String(note);
        }
        Ok(model)
    }

    /// Whether the scenario's own overrides set one of the fitted paths (then the
    /// fitted model file alone does not reproduce the fit with this scenario).
    pub fn overridden_paths(&self) -> Vec<String> {
        let Some(ov) = self.scenario.get("overrides") else {
            return Vec::new();
        };
        self.params
            .iter()
            .filter(|p| lookup(ov, &p.segs).is_some())
            .map(|p| p.spec.path.clone())
            .collect()
    }
}

/// The lattice search's first mesh after the descents: this fraction of each
/// parameter's range (rounded to a power of two of lattice steps).
const LATTICE_START: f64 = 0.005;

/// The lattice search's first mesh at a profile point, over the other parameters.
const PROFILE_LATTICE_START: f64 = 0.001;

/// Lattice searches from the lowest point evaluated, after the first, before the
/// lowest point is taken as it is.
const MAX_SETTLE: usize = 4;

/// Restarts of the search from a point the profiles or the scan of the intervals' box
/// found below the optimum.
const MAX_PROFILE_RESTARTS: usize = 3;

/// Boxes of the neighbourhood scan, each around a lower point than the last, before
/// the search takes its optimum as it is.
const MAX_SCANS: usize = 8;

/// Bases of the Halton sequence, one per parameter (so at most eight parameters).
const PRIMES: [usize; 8] = [2, 3, 5, 7, 11, 13, 17, 19];

/// Element `i` of the van der Corput sequence in `base`: the Halton sequence's
/// coordinate, evenly spread over [0, 1) without a random stream.
fn halton(mut i: usize, base: usize) -> f64 {
    let (mut f, mut r) = (1.0, 0.0);
    while i > 0 {
        f /= base as f64;
        r += f * (i % base) as f64;
        i /= base;
    }
    r
}

fn fmt(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// The argmin cost function: parameters in unit coordinates (all, or all but `fixed`,
/// which stays at its unit coordinate); a point outside the box is evaluated at its
/// projection and penalised by its distance, so the simplex comes back.
struct UnitCost<'f, 'a> {
    f: &'f Fitter<'a>,
    fixed: Option<(usize, f64)>,
}

impl UnitCost<'_, '_> {
    /// All the unit coordinates, `u` the free ones.
    fn full(&self, u: &[f64]) -> Vec<f64> {
        let mut v: Vec<f64> = u.iter().map(|x| x.clamp(0.0, 1.0)).collect();
        if let Some((j, x)) = self.fixed {
            v.insert(j, x);
        }
        v
    }
}

impl CostFunction for UnitCost<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, u: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        let out: f64 = u.iter().map(|x| (x - x.clamp(0.0, 1.0)).abs()).sum();
        let e = self.f.evaluate(&self.f.unit_to_values(&self.full(u)))?;
        Ok(e.objective * (1.0 + 10.0 * out) + 10.0 * out)
    }
}

/// What [`Fitter::assess`] found.
struct Assessment {
    params: Vec<FittedParam>,
    correlation: Option<Vec<Vec<f64>>>,
    dof: i64,
    warnings: Vec<String>,
}

/// A profile interval as searched.
struct ProfileInterval {
    /// The innermost values found above the threshold (or the bounds).
    ends: [f64; 2],
    /// The outermost values found under it (the fitted value when none).
    inner: [f64; 2],
    /// Whether each end is a bound the profile stayed under the threshold to.
    at_bound: [bool; 2],
    /// The (value, profile) pairs evaluated.
    probes: Vec<[f64; 2]>,
}

/// Print step of the average latency in SmartBits tables \[us\] (the reference tables and
/// irqsim's `smartbits.csv` give one decimal).
const TABLE_LATENCY_STEP_US: f64 = 0.1;

/// The measured `Total` row at `load_pct`.
fn measured_at(m: &[MeasuredPoint], load_pct: f64) -> Option<&MeasuredPoint> {
    m.iter().find(|p| (p.load_pct - load_pct).abs() < 1e-6)
}

/// The points of `results` that the table has, compared; `horizon_us` is the run's
/// `duration_s + drain_s`, at which a side that forwarded nothing is censored (see the
/// module docs).
pub fn compare(results: &Results, measured: &[MeasuredPoint], horizon_us: f64) -> Vec<PointFit> {
    results
        .points
        .iter()
        .filter_map(|p| {
            let m = measured_at(measured, p.load_pct)?;
            let t = &p.figures.total;
            let (ml, sl) = (m.total.avg_us, t.latency_us.avg);
            let table_forwards = m.total.received > 0.0 && ml > 0.0;
            let sim_forwards = t.received > 0.0 && sl > 0.0;
            let latency_residual = match (table_forwards, sim_forwards) {
                (true, true) => Some(100.0 * (sl / ml).ln()),
                (true, false) => Some(100.0 * (horizon_us / ml).ln().max(0.0)),
                (false, true) => Some(100.0 * (sl / horizon_us).ln().min(0.0)),
                (false, false) => None,
            };
            Some(PointFit {
                load_pct: p.load_pct,
                measured_loss_pct: m.total.loss_pct(),
                loss_pct: t.loss_pct,
                measured_latency_us: ml,
                latency_us: sl,
                loss_residual: t.loss_pct - m.total.loss_pct(),
                latency_residual,
            })
        })
        .collect()
}

/// The weighted residual vector (terms with weight 0 left out), one loss and one
/// latency term per point; a latency residual that does not exist (neither side
/// forwarded) is 0 there, so the vector keeps its shape, and is not [`counted`].
fn residuals(e: &Evaluation, w: Weights) -> Vec<f64> {
    let mut r = Vec::new();
    for p in &e.points {
        if w.loss > 0.0 {
            r.push(w.loss.sqrt() * p.loss_residual);
        }
        if w.latency > 0.0 {
            r.push(w.latency.sqrt() * p.latency_residual.unwrap_or(0.0));
        }
    }
    r
}

/// The residuals that exist at `e` (the degrees of freedom before the parameters).
fn counted(e: &Evaluation, w: Weights) -> usize {
    e.points
        .iter()
        .map(|p| {
            usize::from(w.loss > 0.0) + usize::from(w.latency > 0.0 && p.latency_residual.is_some())
        })
        .sum()
}

/// For each parameter j, the direction in which the others follow it to their
/// least-squares optimum given j, linearised at the fit: `d_j = 1`,
/// `d_-j = -(J_-j^T J_-j)^-1 J_-j^T J_j` (zero where that cannot be solved).
fn conditional_directions(jac: &[Vec<f64>], k: usize) -> Vec<Vec<f64>> {
    (0..k)
        .map(|j| {
            let mut d = vec![0.0; k];
            d[j] = 1.0;
            let others: Vec<usize> = (0..k).filter(|&i| i != j).collect();
            let m = others.len();
            if m == 0 {
                return d;
            }
            let mut a = vec![vec![0.0; m]; m];
            let mut b = vec![0.0; m];
            for row in jac {
                for (x, &i) in others.iter().enumerate() {
                    b[x] += row[i] * row[j];
                    for (y, &l) in others.iter().enumerate() {
                        a[x][y] += row[i] * row[l];
                    }
                }
            }
            if let Some(inv) = invert(&a) {
                for (x, &i) in others.iter().enumerate() {
                    d[i] = -(0..m).map(|y| inv[x][y] * b[y]).sum::<f64>();
                }
            }
            d
        })
        .collect()
}

struct Uncertainty {
    se: Vec<f64>,
    corr: Vec<Vec<f64>>,
    t95: f64,
}

/// Linearised standard errors and correlations, or none when `J^T J` is singular or no
/// degrees of freedom are left.
fn uncertainty(jac: &[Vec<f64>], best: &Evaluation, w: Weights, k: usize) -> Option<Uncertainty> {
    let r = residuals(best, w);
    let n = counted(best, w);
    if n <= k {
        return None;
    }
    let ssr: f64 = r.iter().map(|x| x * x).sum();
    let s2 = ssr / (n - k) as f64;
    let mut jtj = vec![vec![0.0; k]; k];
    for row in jac {
        for a in 0..k {
            for b in 0..k {
                jtj[a][b] += row[a] * row[b];
            }
        }
    }
    let inv = invert(&jtj)?;
    let se: Vec<f64> = (0..k).map(|j| (s2 * inv[j][j]).max(0.0).sqrt()).collect();
    let corr = (0..k)
        .map(|a| {
            (0..k)
                .map(|b| inv[a][b] / (inv[a][a] * inv[b][b]).sqrt())
                .collect()
        })
        .collect();
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let t95 = StudentsT::new(0.0, 1.0, (n - k) as f64)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(1.96);
    Some(Uncertainty { se, corr, t95 })
}

/// Gauss-Jordan inverse of a small symmetric matrix; none when (nearly) singular.
fn invert(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let k = m.len();
    let scale = m.iter().flatten().fold(0.0f64, |a, x| a.max(x.abs()));
    if scale == 0.0 {
        return None;
    }
    let mut a: Vec<Vec<f64>> = m.to_vec();
    let mut inv: Vec<Vec<f64>> = (0..k)
        .map(|i| (0..k).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    for c in 0..k {
        let p = (c..k).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))?;
        if a[p][c].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(c, p);
        inv.swap(c, p);
        let d = a[c][c];
        for j in 0..k {
            a[c][j] /= d;
            inv[c][j] /= d;
        }
        for r in 0..k {
            if r != c {
                let f = a[r][c];
                for j in 0..k {
                    a[r][j] -= f * a[c][j];
                    inv[r][j] -= f * inv[c][j];
                }
            }
        }
    }
    Some(inv)
}

/// `f` of every item, side by side, but never more items started at once than the
/// pool has threads; in the order of `items`, or the first error in that order.
///
/// Each evaluation simulates its sweep on a rayon pool of its own
/// ([`runner::run`]), and a worker of the outer pool that waits for another pool does
/// not sleep: it runs the next item of the outer loop, on top of its own stack, which
/// starts another pool and waits again. Over one parallel iterator of all items a
/// worker could so nest one waiting evaluation per item: `fit --profile-points 1000`
/// overflowed the main stack in 2.5 s (exit 134), a pool per level. In
/// chunks of the pool's width, the nesting is at most a chunk deep.
fn par_map_bounded<T: Sync, R: Send, E: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let width = rayon::current_num_threads().max(1);
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(width) {
        let part: Vec<R> = chunk.par_iter().map(&f).collect::<Result<_, _>>()?;
        out.extend(part);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_specs_parse_and_refuse_clearly() {
        let p: ParamSpec = "kernel.netisr_per_packet.ns=2000..9000@7000"
            .parse()
            .unwrap();
        assert_eq!(p.path, "kernel.netisr_per_packet.ns");
        assert_eq!((p.lo, p.hi, p.start), (2000.0, 9000.0, Some(7000.0)));
        let q: ParamSpec = "a.b=1..2".parse().unwrap();
        assert_eq!(q.start, None);
        for bad in [
            "a.b",
            "a.b=1",
            "a.b=2..1",
            "a.b=1..x",
            "a.b=1..2@3",
            "=1..2",
        ] {
            assert!(bad.parse::<ParamSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_reach_named_array_elements() {
        let m: Value = serde_json::json!({
            "nics": [ {"name": "dc0", "driver": {"isr_entry": {"ns": 1000}}},
                      {"name": "dc1", "rx_ring_slots": 64} ]
        });
        let segs = |s: &str| s.split('.').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            lookup(&m, &segs("nics.dc0.driver.isr_entry.ns")),
            Some(&Value::from(1000))
        );
        assert_eq!(
            lookup(&m, &segs("nics.1.rx_ring_slots")),
            Some(&Value::from(64))
        );
        assert_eq!(lookup(&m, &segs("nics.dc9.rx_ring_slots")), None);
        // The patch for a path is the merge patch a user would write.
        let mut m2 = m.clone();
        scenario::merge_patch(
            &mut m2,
            &patch_for(&segs("nics.dc1.rx_ring_slots"), 128.into()),
        );
        assert_eq!(
            lookup(&m2, &segs("nics.dc1.rx_ring_slots")),
            Some(&Value::from(128))
        );
        *lookup_mut(&mut m2, &segs("nics.dc0.driver.isr_entry.ns")).unwrap() = 7.into();
        assert_eq!(m2["nics"][0]["driver"]["isr_entry"]["ns"], 7);
    }

    #[test]
    fn small_inverse_and_singular_matrices() {
        // [[4, 2], [2, 3]]^-1 = [[3, -2], [-2, 4]] / 8.
        let inv = invert(&[vec![4.0, 2.0], vec![2.0, 3.0]]).unwrap();
        let want = [[0.375, -0.25], [-0.25, 0.5]];
        for a in 0..2 {
            for b in 0..2 {
                assert!((inv[a][b] - want[a][b]).abs() < 1e-12);
            }
        }
        assert!(invert(&[vec![1.0, 2.0], vec![2.0, 4.0]]).is_none());
        assert!(invert(&[vec![0.0]]).is_none());
    }
}
