//! What a fit reports: each point compared, each evaluation, each fitted parameter with its intervals, the duration check.

use super::*;

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
