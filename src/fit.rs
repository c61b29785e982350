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
//!   (about the relative error in %, symmetric for over- and under-estimates; left out
//!   where either side forwarded nothing),
//!
//! and the objective is the weighted sum of squares `sum w_loss r_loss^2 + w_lat r_lat^2`
//! ([`Weights`], both 1 by default: one percentage point of loss weighs as much as 1 %
//! of latency). The fitted parameters are the weighted least-squares estimate.
//!
//! **Optimiser.** Constant-rate traffic makes the objective rugged (a cost that moves a
//! handler's end past the next arrival changes frames per interrupt in steps), so no
//! derivatives are used: a Halton sample of the bounds ([`FitOptions::samples`]), then
//! argmin's Nelder-Mead simplex from the best points of the start and the sample
//! ([`FitOptions::descents`]) on the parameters scaled to [0, 1] by their bounds (a
//! step outside is evaluated at the bound and penalised), restarted from the best point with a fresh, smaller simplex ([`FitOptions::restarts`])
//! because a simplex can collapse on a plateau of a rugged surface. Each evaluation runs
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
//!   objective with the other parameters at their best given this one; the fit follows
//!   them along the conditional path linearised at the fit (`d_-j = -(J_-j^T J_-j)^-1
//!   J_-j^T J_j`) and evaluates the true objective there, by simulation. The ends are
//!   searched outwards from the fitted value (steps doubling, then bisection); an end
//!   that reaches a bound is reported. This is the interval to read on a rugged surface.
//! - **linearised interval**: `s^2 (J^T J)^-1` with `s^2 = SSR / (n - k)` and Student's t,
//!   from the residuals' Jacobian `J` by central differences (steps of 2 % of the value,
//!   at least 1 % of the range). It describes the valley floor at the fit only.
//!
//! The profile is also drawn over the whole range, for the plots. A parameter is
//! reported as **not identifiable** when moving it changes no residual (a flat
//! direction: `J`'s column is zero), two parameters as **confounded** when their
//! correlation exceeds 0.95 in magnitude (or `J^T J` is singular), and a parameter as
//! **poorly determined** when its interval (the profile one where there is one) is
//! wider than half its value or reaches a bound; the fit then warns instead of
//! returning a confident number.

use crate::error::InputError;
use crate::results::Results;
use crate::runner::{self, RunError};
use crate::scenario::{self, FileSource};
use crate::smartbits::MeasuredPoint;
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
    /// Nelder-Mead restarts from the best point after the descents [default 2].
    pub restarts: usize,
    /// Iterations per descent [default 40].
    pub max_iters: u64,
    /// Sending time per point [s], replacing the scenario's (a shorter fit is faster;
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
}

impl FitOptions {
    /// Defaults for `params`.
    pub fn new(params: Vec<ParamSpec>) -> Self {
        let samples = 12 * params.len();
        FitOptions {
            params,
            weights: Weights::default(),
            samples,
            descents: 3,
            restarts: 2,
            max_iters: 40,
            duration_s: None,
            seed: None,
            threads: 0,
            profile_points: 9,
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
    /// Measured average latency [us].
    pub measured_latency_us: f64,
    /// Simulated average latency [us].
    pub latency_us: f64,
    /// Loss residual [percentage points].
    pub loss_residual: f64,
    /// Latency residual, 100 ln(simulated / measured) [%]; none where either side
    /// forwarded nothing.
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
    /// along the conditional path whose objective stays below the likelihood-ratio
    /// threshold (none when not identifiable or no degrees of freedom are left).
    pub profile_ci95: Option<[f64; 2]>,
    /// The objective's profile along this parameter: (value, objective) pairs over the
    /// bounds, the other parameters following on the conditional path.
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
    /// Sending time per point of the simulations [s].
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
    /// Residual degrees of freedom: residuals compared minus parameters.
    pub dof: i64,
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
        let exp = scenario::load(path, &overlay)?;
        let Some((measured_file, measured)) = exp.measured.clone() else {
            return Err(refuse(
                "names no measured table (`measured`): there is nothing to fit to".into(),
            ));
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
                    "`{}` is not a field of the model `{}`",
                    spec.path, exp.model_path
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
                    crate::grid::kind(v)
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
                if let Err(e) = fitter.load_at(&fitter.round(&v)) {
                    return Err(FitError::Param {
                        spec: p.spec.to_string(),
                        reason: format!("the model refuses the bound {end}: {e}"),
                    });
                }
            }
        }
        Ok(fitter)
    }

    /// The experiment with `values` patched into the scenario's overrides.
    fn load_at(&self, values: &[f64]) -> Result<crate::scenario::Experiment, InputError> {
        let mut sc = self.scenario.clone();
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
        let values = self.round(values);
        let key: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        if let Some(e) = self.cache.lock().expect("cache lock").get(&key) {
            return Ok(e.clone());
        }
        let exp = self.load_at(&values).map_err(|error| FitError::Rejected {
            values: self.describe(&values),
            error,
        })?;
        let results =
            runner::run(&exp, self.opts.threads, &|| {}).map_err(|error| FitError::Run {
                values: self.describe(&values),
                error,
            })?;
        let points = compare(&results, &self.measured);
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

    /// One Nelder-Mead descent from `u0` (unit coordinates) with simplex edge `size`.
    fn descend(&self, u0: &[f64], size: f64) -> Result<Vec<f64>, FitError> {
        // Stop when the simplex's objectives agree to 0.1 % of the starting vertex's
        // (plus an absolute floor for a perfect fit): finer is below the simulation's own
        // resolution of loss and latency.
        let f0 = self.evaluate(&self.unit_to_values(u0))?.objective;
        let tol = 1e-3 * f0 + 1e-6;
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
        let res = Executor::new(UnitCost { f: self }, solver)
            .configure(|s| s.max_iters(self.opts.max_iters))
            .run()
            .map_err(|e| match e.downcast::<FitError>() {
                Ok(f) => f,
                Err(e) => FitError::Optimiser(e.to_string()),
            })?;
        let best = res
            .state
            .best_param
            .ok_or_else(|| FitError::Optimiser("no best point".into()))?;
        Ok(best.iter().map(|x| x.clamp(0.0, 1.0)).collect())
    }

    /// Fit: a global sample, descents from its best points, restarts, then the
    /// uncertainty and the profiles.
    pub fn fit(&self) -> Result<FitReport, FitError> {
        let start = self.start();
        let start_eval = self.evaluate(&start)?;
        let model_eval = self.evaluate(&self.model_values())?;
        // The start and a Halton sample of the box, best first.
        let mut candidates = vec![(start_eval.objective, self.to_unit(&start))];
        // The sample's sweeps are independent: run them side by side (each also runs
        // its points in parallel); collected in sample order, so nothing depends on
        // which finishes first.
        let sample: Vec<(f64, Vec<f64>)> = (1..=self.opts.samples)
            .into_par_iter()
            .map(|i| {
                let u: Vec<f64> = (0..self.dim()).map(|d| halton(i, PRIMES[d])).collect();
                self.evaluate(&self.unit_to_values(&u))
                    .map(|e| (e.objective, u))
            })
            .collect::<Result<_, _>>()?;
        candidates.extend(sample);
        candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut best_u = candidates[0].1.clone();
        let mut best = self.evaluate(&self.unit_to_values(&best_u))?;
        for (_, u0) in candidates.iter().take(self.opts.descents.max(1)) {
            let u = self.descend(u0, 0.1)?;
            let e = self.evaluate(&self.unit_to_values(&u))?;
            if e.objective < best.objective {
                best = e;
                best_u = u;
            }
        }
        let mut size = 0.1;
        for _ in 0..self.opts.restarts {
            let u = self.descend(&best_u, size)?;
            let e = self.evaluate(&self.unit_to_values(&u))?;
            let improved = e.objective < best.objective;
            if improved {
                best = e;
                best_u = u;
            }
            size /= 3.0;
            if !improved {
                break;
            }
        }
        let values = best.values.clone();
        let (jac, steps) = self.jacobian(&values)?;
        let unc = uncertainty(&jac, &best, self.opts.weights, values.len());
        let dirs = conditional_directions(&jac, values.len());
        let n_res = residuals(&best, self.opts.weights).len() as i64;
        let dof = n_res - values.len() as i64;
        // Likelihood-ratio threshold for one parameter's profile (nonlinear least
        // squares, e.g. Bates & Watts 1988, section 6.1): SSR <= SSR_min (1 + F / dof),
        // F the 95 % point of F(1, dof).
        let threshold = (dof > 0).then(|| {
            use statrs::distribution::{ContinuousCDF, FisherSnedecor};
            let f = FisherSnedecor::new(1.0, dof as f64)
                .map(|d| d.inverse_cdf(0.95))
                .unwrap_or(3.84);
            best.objective * (1.0 + f / dof as f64)
        });
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
            let profile_ci95 = match threshold {
                Some(t) if !flat => {
                    let (ends, at_bound) =
                        self.profile_interval(j, &values, &dirs[j], steps[j], t)?;
                    for (end, hit) in ends.iter().zip(at_bound) {
                        if hit {
                            warnings.push(format!(
                                "`{}`: the 95 % profile interval reaches the bound {}: the \
                                 table does not bound it on that side",
                                p.spec.path,
                                fmt(*end)
                            ));
                        }
                    }
                    Some(ends)
                }
                _ => None,
            };
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
            let profile = self.profile(j, &values, &dirs[j])?;
            params.push(FittedParam {
                path: p.spec.path.clone(),
                lo: p.spec.lo,
                hi: p.spec.hi,
                integer: p.integer,
                model_value: p.model,
                start: start[j],
                value: values[j],
                std_error: se,
                ci95,
                profile_ci95,
                identifiable: !flat,
                profile,
            });
        }
        if best.objective > model_eval.objective {
            warnings.push(format!(
                "the fit ends worse than the model's own values (objective {} against {}): \
                 the search missed their basin; widen it (--samples, --descents) or start there",
                fmt(best.objective),
                fmt(model_eval.objective)
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
        Ok(FitReport {
            scenario: self.file.clone(),
            model: self.model_path.clone(),
            measured: self.measured_file.clone(),
            duration_s: self.duration_s,
            seed: self.seed,
            weights: self.opts.weights,
            params,
            correlation,
            model_objective: model_eval.objective,
            start_objective: start_eval.objective,
            objective: best.objective,
            dof,
            simulations: self.simulations(),
            model_points: model_eval.points.clone(),
            start_points: start_eval.points.clone(),
            points: best.points.clone(),
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

    /// The objective's profile along parameter `j` over its bounds, the others on the
    /// conditional path `d`.
    fn profile(&self, j: usize, values: &[f64], d: &[f64]) -> Result<Vec<[f64; 2]>, FitError> {
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
        let mut out: Vec<[f64; 2]> = xs
            .into_par_iter()
            .map(|x| {
                self.evaluate(&self.on_path(j, values, d, x))
                    .map(|e| [e.values[j], e.objective])
            })
            .collect::<Result<_, _>>()?;
        out.sort_by(|a, b| a[0].total_cmp(&b[0]));
        out.dedup_by(|a, b| a[0] == b[0]);
        Ok(out)
    }

    /// The profile interval of parameter `j`: from the fitted value outwards along the
    /// conditional path `d` (steps doubling from `h`, then six bisections), the last
    /// values whose objective stays at most `threshold`; and whether each end reached
    /// a bound.
    fn profile_interval(
        &self,
        j: usize,
        values: &[f64],
        d: &[f64],
        h: f64,
        threshold: f64,
    ) -> Result<([f64; 2], [bool; 2]), FitError> {
        let p = &self.params[j];
        let mut ends = [values[j]; 2];
        let mut at_bound = [false; 2];
        for (side, sign) in [-1.0f64, 1.0].into_iter().enumerate() {
            let bound = if sign < 0.0 { p.spec.lo } else { p.spec.hi };
            let (mut inside, mut step) = (values[j], h);
            let mut outside = None;
            loop {
                let x = values[j] + sign * step;
                let x = if sign < 0.0 {
                    x.max(bound)
                } else {
                    x.min(bound)
                };
                let e = self.evaluate(&self.on_path(j, values, d, x))?;
                if e.objective > threshold {
                    outside = Some(x);
                    break;
                }
                inside = x;
                if x == bound {
                    at_bound[side] = true;
                    break;
                }
                step *= 2.0;
            }
            if let Some(mut out) = outside {
                for _ in 0..6 {
                    if p.integer && (out - inside).abs() <= 1.0 {
                        break;
                    }
                    let mid = (inside + out) / 2.0;
                    let e = self.evaluate(&self.on_path(j, values, d, mid))?;
                    if e.objective > threshold {
                        out = mid;
                    } else {
                        inside = mid;
                    }
                }
            }
            ends[side] = if p.integer { inside.round() } else { inside };
        }
        Ok((ends, at_bound))
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
             (weight {}) per load point, Nelder-Mead with restarts; objective {} -> {} in {} \
             simulations",
            report.measured,
            report.scenario,
            fmt(report.duration_s),
            report.seed,
            report.weights.loss,
            report.weights.latency,
            fmt(report.start_objective),
            fmt(report.objective),
            report.simulations
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
                    "95 % profile interval {}..{}{}",
                    fmt(lo),
                    fmt(hi),
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

/// The argmin cost function: parameters in unit coordinates; a point outside the box is
/// evaluated at its projection and penalised by its distance, so the simplex comes back.
struct UnitCost<'f, 'a> {
    f: &'f Fitter<'a>,
}

impl CostFunction for UnitCost<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, u: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        let out: f64 = u.iter().map(|x| (x - x.clamp(0.0, 1.0)).abs()).sum();
        let clamped: Vec<f64> = u.iter().map(|x| x.clamp(0.0, 1.0)).collect();
        let e = self.f.evaluate(&self.f.unit_to_values(&clamped))?;
        Ok(e.objective * (1.0 + 10.0 * out) + 10.0 * out)
    }
}

/// The measured `Total` row at `load_pct`.
fn measured_at(m: &[MeasuredPoint], load_pct: f64) -> Option<&MeasuredPoint> {
    m.iter().find(|p| (p.load_pct - load_pct).abs() < 1e-6)
}

/// The points of `results` that the table has, compared.
pub fn compare(results: &Results, measured: &[MeasuredPoint]) -> Vec<PointFit> {
    results
        .points
        .iter()
        .filter_map(|p| {
            let m = measured_at(measured, p.load_pct)?;
            let t = &p.figures.total;
            let (ml, sl) = (m.total.avg_us, t.latency_us.avg);
            Some(PointFit {
                load_pct: p.load_pct,
                measured_loss_pct: m.total.loss_pct(),
                loss_pct: t.loss_pct,
                measured_latency_us: ml,
                latency_us: sl,
                loss_residual: t.loss_pct - m.total.loss_pct(),
                latency_residual: (ml > 0.0 && sl > 0.0 && t.received > 0.0)
                    .then(|| 100.0 * (sl / ml).ln()),
            })
        })
        .collect()
}

/// The weighted residual vector (terms with weight 0 left out).
fn residuals(e: &Evaluation, w: Weights) -> Vec<f64> {
    let mut r = Vec::new();
    for p in &e.points {
        if w.loss > 0.0 {
            r.push(w.loss.sqrt() * p.loss_residual);
        }
        if w.latency > 0.0 {
            // A missing latency counts as no residual, so the vector keeps its shape.
            r.push(w.latency.sqrt() * p.latency_residual.unwrap_or(0.0));
        }
    }
    r
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
    let n = r.len();
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
