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

mod fitter;
mod linearised;
mod objective;
mod options;
mod output;
mod paths;
mod report;
mod search;
#[cfg(test)]
mod tests;
mod uncertainty;

use linearised::*;
pub use objective::compare;
use objective::*;
pub use options::*;
use paths::*;
pub use report::*;
use search::*;

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

fn fmt(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".into()
    } else {
        s.into()
    }
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
