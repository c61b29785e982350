//! The search for the optimum: the Halton sample, Nelder-Mead descents and restarts, the lattice (pattern) search and the neighbourhood scan (see the module docs of `fit`).

use super::*;

impl<'a> Fitter<'a> {
    /// One Nelder-Mead descent from `u0` (unit coordinates of the free parameters:
    /// all of them, or all but `fixed`, which stays at its unit coordinate) with simplex
    /// edge `size` and at most `iters` iterations, stopping when the simplex's
    /// objectives agree to `tol` (the objective's resolution: finer is not evidence);
    /// the best point's evaluation.
    pub(super) fn descend(
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
    pub(super) fn descent(
        &self,
        u0: &[f64],
        size: f64,
        eps: f64,
    ) -> Result<Arc<Evaluation>, FitError> {
        self.descend(u0, size, self.opts.max_iters, None, eps)
    }

    /// The objective's resolution at `best` (see the module docs).
    pub(super) fn resolution(&self, best: &Evaluation) -> Result<f64, FitError> {
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
    pub(super) fn budget_left(&self) -> bool {
        self.simulations() < self.opts.max_simulations
    }

    /// The search (see the module docs): the sample, the descents from its best points,
    /// restarts while they improve, and the last local search.
    /// Also whether the budget ([`FitOptions::max_simulations`]) ended the restarts
    /// before [`FitOptions::restarts`] of them in a row had brought nothing.
    pub(super) fn search(
        &self,
        start_eval: &Evaluation,
    ) -> Result<(Arc<Evaluation>, bool), FitError> {
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
    pub(super) fn unit(&self, i: usize) -> f64 {
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
    pub(super) fn lattice(
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
    pub(super) fn scan(
        &self,
        centre: &[f64],
        bounds: &[[f64; 2]],
    ) -> Result<Vec<Arc<Evaluation>>, FitError> {
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
    pub(super) fn scan_half_width(&self) -> u64 {
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
    pub(super) fn neighbourhood(
        &self,
        mut best: Arc<Evaluation>,
    ) -> Result<Arc<Evaluation>, FitError> {
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
    pub(super) fn settle(&self, from: Arc<Evaluation>) -> Result<Arc<Evaluation>, FitError> {
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
    pub(super) fn polish(&self, mut best: Arc<Evaluation>) -> Result<Arc<Evaluation>, FitError> {
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
    pub(super) fn restart_note(&self, low: &Evaluation, best: &Evaluation, by: &str) -> String {
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
    pub(super) fn duration_check(
        &self,
        best: &Evaluation,
    ) -> Result<Option<DurationCheck>, FitError> {
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
}

/// Element `i` of the van der Corput sequence in `base`: the Halton sequence's
/// coordinate, evenly spread over [0, 1) without a random stream.
pub(super) fn halton(mut i: usize, base: usize) -> f64 {
    let (mut f, mut r) = (1.0, 0.0);
    while i > 0 {
        f /= base as f64;
        r += f * (i % base) as f64;
        i /= base;
    }
    r
}

/// The argmin cost function: parameters in unit coordinates (all, or all but `fixed`,
/// which stays at its unit coordinate); a point outside the box is evaluated at its
/// projection and penalised by its distance, so the simplex comes back.
pub(super) struct UnitCost<'f, 'a> {
    pub(super) f: &'f Fitter<'a>,
    pub(super) fixed: Option<(usize, f64)>,
}

impl UnitCost<'_, '_> {
    /// All the unit coordinates, `u` the free ones.
    pub(super) fn full(&self, u: &[f64]) -> Vec<f64> {
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

/// The lattice search's first mesh after the descents: this fraction of each
/// parameter's range (rounded to a power of two of lattice steps).
pub(super) const LATTICE_START: f64 = 0.005;

/// The lattice search's first mesh at a profile point, over the other parameters.
pub(super) const PROFILE_LATTICE_START: f64 = 0.001;

/// Lattice searches from the lowest point evaluated, after the first, before the
/// lowest point is taken as it is.
pub(super) const MAX_SETTLE: usize = 4;

/// Restarts of the search from a point the profiles or the scan of the intervals' box
/// found below the optimum.
pub(super) const MAX_PROFILE_RESTARTS: usize = 3;

/// Boxes of the neighbourhood scan, each around a lower point than the last, before
/// the search takes its optimum as it is.
pub(super) const MAX_SCANS: usize = 8;

/// Bases of the Halton sequence, one per parameter (so at most eight parameters).
pub(super) const PRIMES: [usize; 8] = [2, 3, 5, 7, 11, 13, 17, 19];
