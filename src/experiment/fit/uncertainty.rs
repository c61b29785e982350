//! The uncertainty of the fitted values: profile intervals, the linearised intervals from the Jacobian, identifiability and correlation warnings (see the module docs of `fit`).

use super::*;

impl<'a> Fitter<'a> {
    /// The uncertainty of the fit at `best`: the Jacobian, the linearised and profile
    /// intervals, the drawn profiles and the warnings about them.
    pub(super) fn assess(
        &self,
        best: &Evaluation,
        eps: f64,
        drawn: bool,
    ) -> Result<Assessment, FitError> {
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
    pub(super) fn jacobian(&self, values: &[f64]) -> Result<(Vec<Vec<f64>>, Vec<f64>), FitError> {
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
    pub(super) fn on_path(&self, j: usize, values: &[f64], d: &[f64], x: f64) -> Vec<f64> {
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
    pub(super) fn profile_point(
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
    pub(super) fn profile_scan(
        &self,
        j: usize,
        e: Arc<Evaluation>,
    ) -> Result<Arc<Evaluation>, FitError> {
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
    pub(super) fn profile(
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
    pub(super) fn profile_interval(
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
}

/// What [`Fitter::assess`] found.
pub(super) struct Assessment {
    pub(super) params: Vec<FittedParam>,
    pub(super) correlation: Option<Vec<Vec<f64>>>,
    pub(super) dof: i64,
    pub(super) warnings: Vec<String>,
}

/// A profile interval as searched.
pub(super) struct ProfileInterval {
    /// The innermost values found above the threshold (or the bounds).
    pub(super) ends: [f64; 2],
    /// The outermost values found under it (the fitted value when none).
    pub(super) inner: [f64; 2],
    /// Whether each end is a bound the profile stayed under the threshold to.
    pub(super) at_bound: [bool; 2],
    /// The (value, profile) pairs evaluated.
    pub(super) probes: Vec<[f64; 2]>,
}
