//! Setting up a fit ([`Fitter::new`]) and evaluating candidates: each evaluation simulates the sweep, is compared with the table and is cached by its values.

use super::*;

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
    pub(super) fn load_at(
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

    pub(super) fn round(&self, values: &[f64]) -> Vec<f64> {
        values
            .iter()
            .zip(&self.params)
            .map(|(v, p)| if p.integer { v.round() } else { *v })
            .collect()
    }

    pub(super) fn describe(&self, values: &[f64]) -> String {
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
    pub(super) fn evaluate_with(
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
    pub(super) fn cached(&self, values: &[f64]) -> Option<Arc<Evaluation>> {
        let mut key: Vec<u64> = self.round(values).iter().map(|v| v.to_bits()).collect();
        key.extend([self.seed, self.duration_s.to_bits()]);
        self.cache.lock().expect("cache lock").get(&key).cloned()
    }

    /// How rugged the objective is around `values`: the median of its change between
    /// evaluated lattice points one step apart along a parameter within the
    /// neighbourhood scan's box, and the number of such pairs (none when fewer than
    /// eight were evaluated).
    pub(super) fn ruggedness(&self, values: &[f64]) -> Option<(f64, usize)> {
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
    pub(super) fn evaluated(&self) -> Vec<Arc<Evaluation>> {
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
    pub(super) fn lowest(&self) -> Option<Arc<Evaluation>> {
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

    pub(super) fn to_unit(&self, values: &[f64]) -> Vec<f64> {
        values
            .iter()
            .zip(&self.params)
            .map(|(v, p)| (v - p.spec.lo) / (p.spec.hi - p.spec.lo))
            .collect()
    }

    pub(super) fn unit_to_values(&self, u: &[f64]) -> Vec<f64> {
        u.iter()
            .zip(&self.params)
            .map(|(x, p)| p.spec.lo + x * (p.spec.hi - p.spec.lo))
            .collect()
    }
}
