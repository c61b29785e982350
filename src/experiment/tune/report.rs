//! What a search found: `tune.json` (every setting run, with its figures and whether
//! it met the constraints, the best, its gain over the host as given, the Pareto front)
//! and `tune.txt` (the same for a reader).

use super::evaluate::Figures;
use super::knobs::knob;
use super::search::{Method, Searched};
use super::space::Space;
use super::{Constraints, Goal, TuneOptions};
use crate::config::scenario::Experiment;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One setting run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Knob name to value, in catalog order.
    pub setting: serde_json::Map<String, serde_json::Value>,
    /// What it did (none: it was refused before running).
    pub figures: Option<Figures>,
    /// Whether it met every constraint.
    pub feasible: bool,
    /// Why not, constraint by constraint (empty when feasible).
    pub why: Vec<String>,
    /// The goal's figure, when feasible (NDR \[frames/s\], CPU \[cores\] or p99 \[us\]).
    pub objective: Option<f64>,
}

/// A knob as the search used it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnobUsed {
    /// Its name.
    pub name: String,
    /// What it is in Linux.
    pub linux: String,
    /// Where it sits in the model.
    pub model_field: String,
    /// Its unit.
    pub unit: String,
    /// Its real range and step, with the source.
    pub range: String,
    /// The values tried.
    pub grid: Vec<i64>,
    /// Its value on the host as given.
    pub host: i64,
}

/// The gain of the best setting over the host as given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gain {
    /// The host's figure (the goal's), feasible or not.
    pub host: Option<f64>,
    /// The best setting's.
    pub best: f64,
    /// Better by [% of the host's figure] (none when the host has no figure, or misses
    /// the constraints: then there is no gain to measure, only a setting that meets
    /// them).
    pub better_pct: Option<f64>,
}

/// The Pareto front of the goal against its main constraint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Front {
    /// The figure on the x axis (`cpu_cores`, `p99_us`, `cores_used`).
    pub x: String,
    /// The figure on the y axis.
    pub y: String,
    /// Indices into `candidates` of the front's settings, by increasing x.
    pub candidates: Vec<usize>,
}

/// `tune.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    /// Scenario name.
    pub scenario: String,
    /// Variant tuned.
    pub variant: String,
    /// Seed of every run and of the restarts.
    pub seed: u64,
    /// The goal.
    pub goal: Goal,
    /// The rate offered [frames/s] (`minimize` goals).
    pub at_pps: Option<f64>,
    /// The constraints.
    pub constraints: Constraints,
    /// The knobs, their grids and the host's values.
    pub knobs: Vec<KnobUsed>,
    /// Points in the space.
    pub space_points: u64,
    /// The budget.
    pub budget: usize,
    /// The method that ran.
    pub method: Method,
    /// Starting points used by the descent (1 for a grid).
    pub starts: usize,
    /// The host as given.
    pub host: Candidate,
    /// Every setting run, in the order run.
    pub candidates: Vec<Candidate>,
    /// Index of the best into `candidates` (none: no setting met the constraints).
    pub best: Option<usize>,
    /// The best's gain over the host.
    pub gain: Option<Gain>,
    /// The front.
    pub pareto: Front,
}

impl TuneReport {
    /// Assemble the report of a search.
    pub fn new(
        exp: &Experiment,
        opts: &TuneOptions,
        sp: &Space,
        searched: Searched,
        candidates: Vec<Candidate>,
        host: Candidate,
    ) -> TuneReport {
        let best = candidates[searched.best].feasible.then_some(searched.best);
        let gain = best.map(|b| {
            let bo = candidates[b]
                .objective
                .expect("a feasible setting has its figure");
            let ho = host.figures.as_ref().and_then(|f| objective(opts.goal, f));
            Gain {
                host: ho,
                best: bo,
                better_pct: ho
                    .filter(|h| *h != 0.0 && host.feasible)
                    .map(|h| match opts.goal {
                        Goal::MaximizeNdr => (bo - h) / h * 100.0,
                        _ => (h - bo) / h * 100.0,
                    }),
            }
        });
        let (xname, yname) = axes(opts.goal);
        let pts: Vec<(f64, f64)> = candidates
            .iter()
            .map(
                |c| match (&c.figures, c.feasible || opts.goal != Goal::MaximizeNdr) {
                    (Some(f), true) if admissible(opts, f) => pair(opts.goal, f),
                    _ => (f64::NAN, f64::NAN),
                },
            )
            .collect();
        TuneReport {
            scenario: exp.name.clone(),
            variant: exp.variants[opts.variant].name.clone(),
            seed: exp.seed,
            goal: opts.goal,
            at_pps: opts.at_pps,
            constraints: opts.constraints.clone(),
            knobs: sp
                .axes
                .iter()
                .map(|(k, g)| {
                    let kn = knob(*k);
                    KnobUsed {
                        name: kn.name.into(),
                        linux: kn.linux.into(),
                        model_field: kn.model_field.into(),
                        unit: kn.unit.into(),
                        range: kn.range.into(),
                        grid: g.clone(),
                        host: kn.current(&sp.base),
                    }
                })
                .collect(),
            space_points: sp.points(),
            budget: opts.budget,
            method: searched.method,
            starts: searched.starts,
            host,
            best,
            gain,
            pareto: Front {
                x: xname.into(),
                y: yname.into(),
                candidates: super::pareto::front(&pts),
            },
            candidates,
        }
    }
}

/// The goal's figure of `f`.
fn objective(goal: Goal, f: &Figures) -> Option<f64> {
    match goal {
        Goal::MaximizeNdr => f.ndr_pps,
        Goal::MinimizeCpu => Some(f.cpu_cores),
        Goal::MinimizeP99 => f.p99_us,
    }
}

/// The front's axes: the goal's figure against its main constraint, both made small.
fn axes(goal: Goal) -> (&'static str, &'static str) {
    match goal {
        Goal::MinimizeCpu => ("p99_us", "cpu_cores"),
        Goal::MinimizeP99 => ("cpu_cores", "p99_us"),
        Goal::MaximizeNdr => ("cores_used", "ndr_pps"),
    }
}

/// (x, y) of the front, both to be made small (the NDR negated).
fn pair(goal: Goal, f: &Figures) -> (f64, f64) {
    match goal {
        Goal::MinimizeCpu => (f.p99_us.unwrap_or(f64::NAN), f.cpu_cores),
        Goal::MinimizeP99 => (f.cpu_cores, f.p99_us.unwrap_or(f64::NAN)),
        Goal::MaximizeNdr => (f64::from(f.cores_used), -f.ndr_pps.unwrap_or(0.0)),
    }
}

/// A setting on the front meets every constraint but the one the front trades against:
/// the loss, and the constraints on the other axis's figure stay.
fn admissible(opts: &TuneOptions, f: &Figures) -> bool {
    let k = &opts.constraints;
    let loss_ok = opts.goal == Goal::MaximizeNdr || f.loss_pct <= k.max_loss_pct;
    let cores_ok = opts.goal == Goal::MaximizeNdr || k.max_cores.is_none_or(|n| f.cores_used <= n);
    loss_ok && cores_ok
}

fn fmt_fig(goal: Goal, x: f64) -> String {
    match goal {
        Goal::MaximizeNdr => format!("{x:.0} frames/s"),
        Goal::MinimizeCpu => format!("{x:.3} cores"),
        Goal::MinimizeP99 => format!("{x:.2} us"),
    }
}

fn setting_text(s: &serde_json::Map<String, serde_json::Value>) -> String {
    s.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn goal_text(r: &TuneReport) -> String {
    let mut s = match r.goal {
        Goal::MaximizeNdr => "maximize the NDR".to_string(),
        Goal::MinimizeCpu => "minimize the CPU time".to_string(),
        Goal::MinimizeP99 => "minimize the p99 latency".to_string(),
    };
    if let Some(a) = r.at_pps {
        let _ = write!(s, " at {a:.0} frames/s");
    }
    let c = &r.constraints;
    let mut cs = Vec::new();
    if r.goal != Goal::MaximizeNdr {
        cs.push(format!("loss <= {} %", c.max_loss_pct));
    }
    if let Some(p) = c.max_p99_us {
        cs.push(format!("p99 <= {p} us"));
    }
    if let Some(n) = c.max_cores {
        cs.push(format!("cores used <= {n}"));
    }
    if let Some(x) = c.max_cpu_cores {
        cs.push(format!("CPU <= {x} cores"));
    }
    if !cs.is_empty() {
        let _ = write!(s, ", with {}", cs.join(", "));
    }
    s
}

/// `tune.txt`: the goal, the best setting and its gain, the front as a table.
pub fn text(r: &TuneReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "irqsim tune: {} (variant {}), seed {}",
        r.scenario, r.variant, r.seed
    );
    let _ = writeln!(s, "goal: {}", goal_text(r));
    let _ = writeln!(
        s,
        "search: {} over {} ({} points), {} settings run of a budget of {}{}",
        match r.method {
            Method::Grid => "every point of the grid",
            Method::CoordinateDescent => "coordinate descent with seeded restarts",
        },
        r.knobs
            .iter()
            .map(|k| k.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        r.space_points,
        r.candidates.len(),
        r.budget,
        if r.method == Method::CoordinateDescent {
            format!(", {} starts", r.starts)
        } else {
            String::new()
        }
    );
    let feasible = r.candidates.iter().filter(|c| c.feasible).count();
    let _ = writeln!(s, "feasible: {feasible} of {}", r.candidates.len());
    let _ = writeln!(s, "host as given: {}", setting_text(&r.host.setting));
    match (&r.host.figures, r.host.feasible) {
        (Some(f), ok) => {
            let _ = writeln!(
                s,
                "  {}{}",
                figures_text(f),
                if ok {
                    String::new()
                } else {
                    format!("; misses: {}", r.host.why.join(", "))
                }
            );
        }
        (None, _) => {
            let _ = writeln!(s, "  not run: {}", r.host.why.join(", "));
        }
    }
    match r.best {
        Some(b) => {
            let c = &r.candidates[b];
            let _ = writeln!(s, "best: {}", setting_text(&c.setting));
            if let Some(f) = &c.figures {
                let _ = writeln!(s, "  {}", figures_text(f));
            }
            if let Some(g) = &r.gain {
                let host = g.host.map_or("none".into(), |h| fmt_fig(r.goal, h));
                if r.host.feasible {
                    let _ = writeln!(
                        s,
                        "gain: {} against {host} as given{}",
                        fmt_fig(r.goal, g.best),
                        g.better_pct
                            .map_or(String::new(), |p| format!(" ({p:+.1} % better)"))
                    );
                } else {
                    let _ = writeln!(
                        s,
                        "gain: the host as given misses the constraints ({host}); the best \
                         meets them with {}",
                        fmt_fig(r.goal, g.best)
                    );
                }
            }
        }
        None => {
            let _ = writeln!(s, "best: none of the settings run meets the constraints");
        }
    }
    let _ = writeln!(
        s,
        "\nPareto front, {} against {} (settings no other beats on both):",
        r.pareto.y, r.pareto.x
    );
    let _ = writeln!(
        s,
        "{:>12} {:>12} {:>10} {:>10} {:>6}  setting",
        "cpu_cores", "p99_us", "loss_pct", "ndr_pps", "cores"
    );
    for &i in &r.pareto.candidates {
        let c = &r.candidates[i];
        if let Some(f) = &c.figures {
            let _ = writeln!(
                s,
                "{:>12.3} {:>12} {:>10.4} {:>10} {:>6}  {}{}",
                f.cpu_cores,
                f.p99_us.map_or("-".into(), |p| format!("{p:.2}")),
                f.loss_pct,
                f.ndr_pps.map_or("-".into(), |p| format!("{p:.0}")),
                f.cores_used,
                setting_text(&c.setting),
                if c.feasible { "" } else { "  (infeasible)" }
            );
        }
    }
    s
}

fn figures_text(f: &Figures) -> String {
    format!(
        "{}{:.0} frames/s offered: CPU {:.3} cores on {} cores, p99 {}, avg {}, loss {:.4} %, {:.0} interrupts/s",
        f.ndr_pps.map_or(String::new(), |_| "NDR: ".into()),
        f.offered_pps,
        f.cpu_cores,
        f.cores_used,
        f.p99_us.map_or("-".into(), |p| format!("{p:.2} us")),
        f.avg_us.map_or("-".into(), |p| format!("{p:.2} us")),
        f.loss_pct,
        f.interrupts_per_s
    )
}
