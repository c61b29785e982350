//! The space a search walks: the knobs chosen, each with its grid of values on this
//! model, and a point of it (an index into each grid) as a model to simulate.

use super::knobs::{KnobId, catalog, default_set, knob};
use super::{TuneError, refuse};
use crate::config::model::ModelConfig;
use crate::sim::problems::Problems;

/// The knobs to turn, in catalog order: `asked`, each checked against the model, or the
/// default set when `asked` is empty.
pub fn knob_set(m: &ModelConfig, asked: &[KnobId]) -> Result<Vec<KnobId>, TuneError> {
    if asked.is_empty() {
        return Ok(default_set(m));
    }
    for &id in asked {
        if let Err(why) = knob(id).present(m) {
            return Err(refuse(
                "--knobs",
                format!("`{}`: not in this model: {why}", knob(id).name),
            ));
        }
    }
    let mut set = asked.to_vec();
    set.sort_unstable();
    set.dedup();
    Ok(set)
}

/// Parse `--knobs`' names (comma-separated on the command line).
pub fn parse_knobs(names: &[String]) -> Result<Vec<KnobId>, TuneError> {
    names
        .iter()
        .map(|n| {
            super::knobs::by_name(n.trim())
                .map(|k| k.id)
                .ok_or_else(|| {
                    refuse(
                        "--knobs",
                        format!(
                            "`{n}`: no such knob (known: {})",
                            catalog()
                                .iter()
                                .map(|k| k.name)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })
        })
        .collect()
}

/// The knobs and their grids on a model.
#[derive(Clone, Debug)]
pub struct Space {
    /// The model as given.
    pub base: ModelConfig,
    /// Each knob with its grid, in catalog order.
    pub axes: Vec<(KnobId, Vec<i64>)>,
}

impl Space {
    /// The space of `knobs` on `m`.
    pub fn new(m: &ModelConfig, knobs: &[KnobId]) -> Space {
        Space {
            base: m.clone(),
            axes: knobs.iter().map(|&k| (k, knob(k).grid(m))).collect(),
        }
    }

    /// Each knob's grid size.
    pub fn sizes(&self) -> Vec<usize> {
        self.axes.iter().map(|a| a.1.len()).collect()
    }

    /// Points in the space (saturating).
    pub fn points(&self) -> u64 {
        self.axes
            .iter()
            .fold(1u64, |a, x| a.saturating_mul(x.1.len() as u64))
    }

    /// The host as given, each knob snapped to the nearest value of its grid (the lower
    /// on a tie).
    pub fn host_point(&self) -> Vec<usize> {
        self.axes
            .iter()
            .map(|(k, g)| {
                let cur = knob(*k).current(&self.base);
                (0..g.len())
                    .min_by_key(|&i| ((g[i] - cur).unsigned_abs(), i))
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The setting of point `p`: (knob, value) in catalog order.
    pub fn setting(&self, p: &[usize]) -> Vec<(KnobId, i64)> {
        self.axes
            .iter()
            .zip(p)
            .map(|((k, g), &i)| (*k, g[i]))
            .collect()
    }

    /// Point `p` as `tune.json` writes a setting: knob name to value.
    pub fn setting_json(&self, p: &[usize]) -> serde_json::Map<String, serde_json::Value> {
        self.setting(p)
            .into_iter()
            .map(|(k, v)| (knob(k).name.to_string(), v.into()))
            .collect()
    }

    /// The host's own values of the knobs, with `adaptive-rx` when the host has it on
    /// and the space turns it off (setting rx-usecs or rx-frames on mlx5 does).
    pub fn host_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m: serde_json::Map<String, serde_json::Value> = self
            .axes
            .iter()
            .map(|(k, _)| {
                (
                    knob(*k).name.to_string(),
                    knob(*k).current(&self.base).into(),
                )
            })
            .collect();
        let has = |id| self.axes.iter().any(|a| a.0 == id);
        let adaptive = knob(KnobId::AdaptiveRx);
        if (has(KnobId::RxUsecs) || has(KnobId::RxFrames))
            && !has(KnobId::AdaptiveRx)
            && adaptive.present(&self.base).is_ok()
            && adaptive.current(&self.base) == 1
        {
            m.insert(adaptive.name.to_string(), 1.into());
        }
        m
    }

    /// The model of point `p`: the knobs applied in catalog order, then the model's
    /// own validation; `Err` is why it was refused.
    pub fn model(&self, p: &[usize]) -> Result<ModelConfig, String> {
        let mut m = self.base.clone();
        for (k, v) in self.setting(p) {
            knob(k).apply(&mut m, v);
        }
        let mut probs = Problems::new();
        m.validate(&mut probs);
        match probs.list.first() {
            None => Ok(m),
            Some(pr) => Err(format!("the model refuses it: {}: {}", pr.path, pr.reason)),
        }
    }
}
