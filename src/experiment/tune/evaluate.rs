//! A batch of settings run and scored: every setting a variant of one experiment, run
//! by [`crate::experiment::runner`] (or searched by [`crate::experiment::ndr`]) on a
//! rayon pool, so the figures are the same whatever the thread count; each scored
//! against the goal and the constraints.

use super::search::Score;
use super::{Goal, TuneError, TuneOptions};
use crate::config::model::ModelConfig;
use crate::config::scenario::{Experiment, LoadPoint, Variant};
use crate::model::nic::link::Link;
use crate::model::traffic::FlowConfig;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What one setting did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The rate offered, all flows [frames/s] (`--at`, or the NDR found).
    pub offered_pps: f64,
    /// Frames lost [% of those sent].
    pub loss_pct: f64,
    /// 99th percentile of latency \[us\] (none: nothing delivered).
    pub p99_us: Option<f64>,
    /// Average latency \[us\] (none: nothing delivered).
    pub avg_us: Option<f64>,
    /// CPU time, all cores: the cores' busy share summed \[cores\].
    pub cpu_cores: f64,
    /// Cores that did any work.
    pub cores_used: u16,
    /// Interrupts taken per second of sending [1/s].
    pub interrupts_per_s: f64,
    /// The NDR [frames/s] (`maximize ndr` only; the other figures are a run at it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ndr_pps: Option<f64>,
}

/// The frame size of the first flow \[bytes\] (its mean when it is a distribution).
pub fn frame_bytes(flows: &[FlowConfig]) -> u32 {
    flows
        .first()
        .map_or(64, |f| f.frame_bytes.mean_bytes().round() as u32)
}

/// 100 %: the total at which the busiest input port carries its line rate, flows in
/// the proportions of `rates` [frames/s].
pub fn max_pps(m: &ModelConfig, flows: &[FlowConfig], rates: &[f64]) -> f64 {
    let total: f64 = rates.iter().sum();
    let mut per_nic: HashMap<usize, f64> = HashMap::new();
    let mut bytes: HashMap<usize, f64> = HashMap::new();
    for (f, r) in flows.iter().zip(rates) {
        if let Some(i) = m.nic_index(&f.from) {
            *per_nic.entry(i).or_default() += r / total;
            *bytes.entry(i).or_default() += r / total * f.frame_bytes.mean_bytes();
        }
    }
    per_nic
        .iter()
        .filter(|(_, s)| **s > 0.0)
        .map(|(i, s)| Link::new(m.nics[*i].line_rate_bps).line_rate_fps(bytes[i] / s) / s)
        .fold(f64::INFINITY, f64::min)
}

/// Runs batches of settings of one scenario's variant.
pub struct Evaluator<'a> {
    exp: &'a Experiment,
    opts: &'a TuneOptions,
    shares: Vec<f64>,
}

impl<'a> Evaluator<'a> {
    /// For variant `opts.variant` of `exp`.
    pub fn new(exp: &'a Experiment, opts: &'a TuneOptions) -> Evaluator<'a> {
        let rates = &exp.variants[opts.variant].points[0].rates_pps;
        let total: f64 = rates.iter().sum();
        Evaluator {
            exp,
            opts,
            shares: rates.iter().map(|r| r / total).collect(),
        }
    }

    /// An experiment with one variant per model, each at its own rate.
    fn experiment(&self, models: &[(ModelConfig, f64)]) -> Experiment {
        let base = &self.exp.variants[self.opts.variant];
        let line = max_pps(&base.model, &base.flows, &base.points[0].rates_pps);
        let mut e = self.exp.clone();
        e.flows = base.flows.clone();
        e.grid = None;
        e.measured = None;
        e.measured_rates = None;
        e.timeline_bucket_ms = None;
        e.variants = models
            .iter()
            .enumerate()
            .map(|(i, (m, rate))| Variant {
                name: format!("setting-{i}"),
                description: String::new(),
                model: m.clone(),
                points: vec![LoadPoint {
                    load: *rate,
                    load_pct: rate / line * 100.0,
                    outstanding: None,
                    rates_pps: self.shares.iter().map(|s| s * rate).collect(),
                }],
                flows: base.flows.clone(),
            })
            .collect();
        e
    }

    /// Run `models` (a refused one is not run: `None`); `progress` is told how many
    /// finished.
    pub fn run(
        &self,
        models: &[Result<ModelConfig, String>],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<Option<Figures>>, TuneError> {
        let ok: Vec<(usize, ModelConfig)> = models
            .iter()
            .enumerate()
            .filter_map(|(i, m)| m.as_ref().ok().map(|m| (i, m.clone())))
            .collect();
        let mut out: Vec<Option<Figures>> = vec![None; models.len()];
        if ok.is_empty() {
            progress(models.len());
            return Ok(out);
        }
        let rates: Vec<Option<f64>> = match (self.opts.goal, self.opts.at_pps) {
            (Goal::MaximizeNdr, _) => {
                let e = self.experiment(
                    &ok.iter()
                        .map(|(_, m)| {
                            (
                                m.clone(),
                                self.exp.variants[self.opts.variant].points[0]
                                    .rates_pps
                                    .iter()
                                    .sum(),
                            )
                        })
                        .collect::<Vec<_>>(),
                );
                let ndr = crate::experiment::ndr::search(
                    &e,
                    &crate::experiment::ndr::NdrOptions {
                        frame_bytes: vec![frame_bytes(&e.flows)],
                        resolution_pct: self.opts.resolution_pct,
                        threads: self.opts.threads,
                        ..Default::default()
                    },
                )?;
                ndr.results.iter().map(|r| Some(r.ndr_pps)).collect()
            }
            (_, at) => vec![at; ok.len()],
        };
        // The run at each rate (an NDR of 0 has no run: nothing was loss-free).
        let runnable: Vec<(usize, ModelConfig, f64)> = ok
            .iter()
            .zip(&rates)
            .filter_map(|((i, m), r)| r.filter(|r| *r > 0.0).map(|r| (*i, m.clone(), r)))
            .collect();
        let e = self.experiment(
            &runnable
                .iter()
                .map(|(_, m, r)| (m.clone(), *r))
                .collect::<Vec<_>>(),
        );
        let res = if runnable.is_empty() {
            None
        } else {
            Some(crate::experiment::runner::run(
                &e,
                self.opts.threads,
                &|| {},
            )?)
        };
        for (k, (i, m, rate)) in runnable.iter().enumerate() {
            let p = &res.as_ref().expect("runs").points[k];
            let f = &p.figures;
            let cores = f64::from(m.cpu.cores.max(1));
            let busy: Vec<f64> = if f.cores.is_empty() {
                vec![1.0 - f.cpu.idle]
            } else {
                f.cores.iter().map(|c| 1.0 - c.idle).collect()
            };
            let delivered = f.total.received > 0.0;
            out[*i] = Some(Figures {
                offered_pps: *rate,
                loss_pct: f.total.loss_pct,
                p99_us: delivered.then_some(f.total.latency_us.p99),
                avg_us: delivered.then_some(f.total.latency_us.avg),
                cpu_cores: (1.0 - f.cpu.idle) * cores,
                cores_used: busy.iter().filter(|b| **b > 0.0).count() as u16,
                interrupts_per_s: f.interrupts_per_s,
                ndr_pps: (self.opts.goal == Goal::MaximizeNdr).then_some(*rate),
            });
        }
        if self.opts.goal == Goal::MaximizeNdr {
            for ((i, _), r) in ok.iter().zip(&rates) {
                if out[*i].is_none() {
                    out[*i] = Some(Figures {
                        offered_pps: 0.0,
                        loss_pct: 100.0,
                        p99_us: None,
                        avg_us: None,
                        cpu_cores: 0.0,
                        cores_used: 0,
                        interrupts_per_s: 0.0,
                        ndr_pps: *r,
                    });
                }
            }
        }
        progress(models.len());
        Ok(out)
    }

    /// The score of a setting (refused with `refused`, or run with `f`) and, when it is
    /// infeasible, why.
    pub fn score(&self, refused: Option<&String>, f: Option<&Figures>) -> (Score, Vec<String>) {
        let bad = |why: String| {
            (
                Score {
                    feasible: false,
                    violation: f64::INFINITY,
                    objective: f64::INFINITY,
                },
                vec![why],
            )
        };
        if let Some(r) = refused {
            return bad(r.clone());
        }
        let Some(f) = f else {
            return bad("not run".into());
        };
        let c = &self.opts.constraints;
        let mut why = Vec::new();
        let mut violation = 0.0;
        let ndr = self.opts.goal == Goal::MaximizeNdr;
        if !ndr && f.loss_pct > c.max_loss_pct {
            why.push(format!("loss {:.4} % > {} %", f.loss_pct, c.max_loss_pct));
            violation += (f.loss_pct - c.max_loss_pct) / c.max_loss_pct.max(1.0);
        }
        if ndr && f.ndr_pps.unwrap_or(0.0) <= 0.0 {
            return bad("no rate tried was loss-free".into());
        }
        if let Some(lim) = c.max_p99_us {
            match f.p99_us {
                Some(p) if p > lim => {
                    why.push(format!("p99 {p:.1} us > {lim} us"));
                    violation += (p - lim) / lim;
                }
                None => return bad("nothing delivered".into()),
                _ => {}
            }
        }
        if let Some(n) = c.max_cores
            && f.cores_used > n
        {
            why.push(format!("{} cores used > {n}", f.cores_used));
            violation += f64::from(f.cores_used - n) / f64::from(n);
        }
        if let Some(x) = c.max_cpu_cores
            && f.cpu_cores > x
        {
            why.push(format!("CPU {:.3} cores > {x}", f.cpu_cores));
            violation += (f.cpu_cores - x) / x;
        }
        let objective = match self.opts.goal {
            Goal::MaximizeNdr => -f.ndr_pps.unwrap_or(0.0),
            Goal::MinimizeCpu => f.cpu_cores,
            Goal::MinimizeP99 => match f.p99_us {
                Some(p) => p,
                None => return bad("nothing delivered".into()),
            },
        };
        (
            Score {
                feasible: why.is_empty(),
                violation,
                objective,
            },
            why,
        )
    }

    /// The objective as reported (the NDR positive).
    pub fn shown_objective(&self, o: f64) -> f64 {
        if self.opts.goal == Goal::MaximizeNdr {
            -o
        } else {
            o
        }
    }
}
