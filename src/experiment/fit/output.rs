//! The fitted model written back: the model file with the fitted values and a note on each.

use super::*;

impl<'a> Fitter<'a> {
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
