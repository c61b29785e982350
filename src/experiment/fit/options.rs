//! The fit's inputs: the parameters to fit with their bounds ([`ParamSpec`]), the objective's weights and the search's options and budgets.

use super::*;

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
