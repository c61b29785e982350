//! `irqsim advise DIR`: what a live host's counters say, and what to change.
//!
//! ```text
//!  DIR/counters/0/, DIR/counters/1/   two snapshots (softnet_stat, interrupts, net-dev,
//!         |                            ethtool-S-<if>, stat, time), an interval apart
//!         v
//!  deltas  --------------------------> diagnosis: findings in words, each with the
//!         |                            counters and numbers it rests on
//!         v
//!  measured load (rate per queue)      proposals: ladders of candidate changes
//!         |                                   |
//!         +----------> the host's model (--model, or DIR/host imported with --profile)
//!                      run as given and with every candidate at that load
//!                                             |
//!                                             v
//!                      per proposal: the least change that removes the finding in the
//!                      model, its predicted loss, CPU and p99, and the Linux commands
//! ```
//!
//! Stages, each a function with its own checks: [`read_input`] (every file read and
//! checked: a fault refuses the command before any simulation), [`plan`] (deltas,
//! findings, load, proposals), [`run`] (the model's runs and the choice per proposal).
//! The files: [`crate::config::import::counters`] (the snapshots' layouts),
//! [`deltas`], [`diagnosis`], [`proposals`], [`change`] (the one record of a proposed
//! change), [`predict`] (the model at the measured load), [`report`] (advise.txt and
//! advise.json).

pub mod change;
pub mod deltas;
pub mod diagnosis;
pub mod predict;
pub mod proposals;
pub mod report;

use crate::config::error::InputError;
use crate::config::import::counters::{self, Snapshot};
use crate::config::import::dump::{Dump, Fault, Findings, escape};
use crate::config::import::{self, ImportError};
use crate::config::model::ModelConfig;
use crate::config::read_limit::ReadBudget;
use crate::experiment::runner::{self, RunError};
use change::Change;
use deltas::Deltas;
use diagnosis::{Finding, Kind};
use predict::{Candidate, MeasuredLoad, Predicted};
use proposals::{HostFacts, Proposal};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The snapshots' directory under DIR (as examples/gather-host.sh writes it).
pub const COUNTERS: &str = "counters";
/// The host's dumps under DIR.
pub const HOST: &str = "host";
/// The model's load per run by default \[s\]: 20 ms.
pub const DEFAULT_DURATION_S: f64 = 0.02;
/// The longest interval between two snapshots taken \[s\]: a day. A 32-bit counter
/// wraps more than once in a longer one at a few hundred thousand events a second.
pub const MAX_INTERVAL_S: f64 = 86_400.0;

/// What the user gives.
#[derive(Clone, Debug)]
pub struct Options {
    /// DIR.
    pub dir: PathBuf,
    /// `--model FILE`: the host's model.
    pub model: Option<PathBuf>,
    /// `--profile MODEL`: the costs when DIR/host is imported.
    pub profile: Option<PathBuf>,
    /// `--line-rate`: line rates when DIR/host is imported.
    pub line_rates: Vec<import::LineRate>,
    /// `--interval S`: the interval between the snapshots \[s\].
    pub interval_s: Option<f64>,
    /// `--max-p99-us`: the latency target \[us\].
    pub max_p99_us: Option<f64>,
    /// The model's load per run \[s\].
    pub duration_s: f64,
    /// The runs' seed.
    pub seed: u64,
    /// Worker threads (0: one per core).
    pub threads: usize,
}

/// Why advise gives no advice.
#[derive(Debug, thiserror::Error)]
pub enum AdviseError {
    /// Input missing or malformed (exit 2).
    #[error(
        "{}: nothing to advise on ({} problem(s); nothing was simulated or written):\n{}",
        escape(.dir),
        .faults.len(),
        .faults.iter().map(|f| format!("  {f}")).collect::<Vec<_>>().join("\n")
    )]
    Refused {
        /// DIR.
        dir: String,
        /// Every fault found.
        faults: Vec<Fault>,
    },
    /// The model cannot be read (exit 2).
    #[error("--model: {0}")]
    Model(#[source] InputError),
    /// DIR/host cannot be imported (exit 2).
    #[error("{0}")]
    Import(#[source] ImportError),
    /// The model's scenario is refused (exit 2: the model and the load do not go together).
    #[error("the model at the measured load: {0}")]
    Scenario(#[source] InputError),
    /// A run failed (exit 1).
    #[error("{0}")]
    Run(#[source] RunError),
}

impl AdviseError {
    /// Whether it is bad input (exit 2).
    pub fn is_input(&self) -> bool {
        !matches!(self, AdviseError::Run(_))
    }
}

/// Everything read.
#[derive(Debug)]
pub struct Input {
    /// The increases.
    pub deltas: Deltas,
    /// Where the interval came from, in words.
    pub interval_from: String,
    /// The model.
    pub model: ModelConfig,
    /// Its text.
    pub model_text: String,
    /// Its name in messages (the --model path, or `DIR/host (imported)`).
    pub model_name: String,
    /// What the dumps say beside the model.
    pub facts: HostFacts,
    /// Whether the model has the costs a run needs.
    pub has_costs: bool,
    /// Notes for the report.
    pub notes: Vec<String>,
}

fn refused(dir: &Path, f: &Findings) -> AdviseError {
    AdviseError::Refused {
        dir: dir.display().to_string(),
        faults: f.faults.clone(),
    }
}

fn is_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Read and check everything `opts` names, from `budget`.
pub fn read_input(opts: &Options, budget: &ReadBudget) -> Result<Input, AdviseError> {
    let dir = &opts.dir;
    let label = dir.display().to_string();
    let mut f = Findings::default();
    let mut notes = Vec::new();
    if !is_dir(dir) {
        f.fault(
            &label,
            "not a directory (give the OUT of examples/gather-host.sh)",
        );
        return Err(refused(dir, &f));
    }
    if let Some(s) = opts.interval_s
        && !(s > 0.0 && s <= MAX_INTERVAL_S)
    {
        f.fault(
            "--interval",
            format!("{s} s: the interval is in seconds, more than 0 and at most {MAX_INTERVAL_S}"),
        );
    }
    if let Some(t) = opts.max_p99_us
        && !(t > 0.0 && t.is_finite())
    {
        f.fault(
            "--max-p99-us",
            format!("{t}: a latency target in us, more than 0"),
        );
    }
    if !(opts.duration_s >= 1e-4 && opts.duration_s <= 10.0) {
        f.fault(
            "--duration-ms",
            format!(
                "{} ms: the model's run is 0.1 ms to 10 s long",
                opts.duration_s * 1e3
            ),
        );
    }
    let c0 = dir.join(COUNTERS).join("0");
    let c1 = dir.join(COUNTERS).join("1");
    let l0 = format!("{label}/{COUNTERS}/0");
    let l1 = format!("{label}/{COUNTERS}/1");
    let second: Option<Snapshot> = if is_dir(&c1) {
        Some(counters::read(&c1, &l1, budget, &mut f))
    } else {
        f.fault(
            &l1,
            "missing: the second counter snapshot (examples/gather-host.sh writes \
             counters/0 and counters/1 under its OUT)",
        );
        None
    };
    let first: Option<Snapshot> = if is_dir(&c0) {
        Some(counters::read(&c0, &l0, budget, &mut f))
    } else {
        None
    };
    // The interval.
    let (interval_s, interval_from) = match (opts.interval_s, &first, &second) {
        (Some(s), _, _) => (s, "--interval".to_string()),
        (None, None, _) => {
            f.fault(
                &l0,
                "missing, and no --interval: without a first snapshot the second's counters \
                 are taken as cumulative from zero (irqsim run --linux-counters' files, or a \
                 host's since boot) over --interval seconds",
            );
            (1.0, String::new())
        }
        (None, Some(a), Some(b)) => match (&a.time_s, &b.time_s) {
            (Some(x), Some(y)) if y.value > x.value && y.value - x.value <= MAX_INTERVAL_S => (
                y.value - x.value,
                format!("the snapshots' time files ({l0}/time, {l1}/time)"),
            ),
            (Some(x), Some(y)) => {
                f.fault(
                    format!("{l1}/time"),
                    format!(
                        "{} s after {l0}/time: the second snapshot must be taken after the \
                         first, at most {MAX_INTERVAL_S} s later (or give --interval)",
                        y.value - x.value
                    ),
                );
                (1.0, String::new())
            }
            _ => {
                f.fault(
                    format!("{l0}/time"),
                    "a snapshot has no time file (`date +%s.%N > time`): give --interval",
                );
                (1.0, String::new())
            }
        },
        _ => (1.0, String::new()),
    };
    if !f.faults.is_empty() {
        return Err(refused(dir, &f));
    }
    let second = second.expect("checked above");
    let deltas = deltas::between(first.as_ref(), &second, interval_s, &mut f);
    if !f.faults.is_empty() {
        return Err(refused(dir, &f));
    }
    if first.is_none() {
        notes.push(format!(
            "no first snapshot ({l0}): {l1}'s counters are taken as increases from zero \
             over {interval_s} s (irqsim run --linux-counters' files are cumulative from the \
             start of the run)"
        ));
    }
    // The model.
    let host = dir.join(HOST);
    let (model, model_text, model_name) = match &opts.model {
        Some(p) => {
            let prof = import::profile::Profile::load(p, budget).map_err(AdviseError::Model)?;
            (prof.config, prof.json.to_string(), escape(&prof.path))
        }
        None => {
            if !is_dir(&host) {
                f.fault(
                    format!("{label}/{HOST}"),
                    "missing, and no --model: give the host's model (irqsim import-host \
                     writes one) or its dumps under DIR/host",
                );
                return Err(refused(dir, &f));
            }
            let imp = import::import(
                &host,
                &import::Options {
                    profile: opts.profile.clone(),
                    line_rates: opts.line_rates.clone(),
                    ..import::Options::default()
                },
                budget,
            )
            .map_err(AdviseError::Import)?;
            notes.push(format!(
                "model: imported from {label}/{HOST} ({})",
                match &opts.profile {
                    Some(p) => format!(
                        "costs from the profile {}",
                        escape(&p.display().to_string())
                    ),
                    None => "no --profile: no costs".into(),
                }
            ));
            (imp.model, imp.text, format!("{label}/{HOST} (imported)"))
        }
    };
    // The model's NICs must be the counters' interfaces.
    let names: Vec<&str> = model.nics.iter().map(|n| n.name.as_str()).collect();
    if !model
        .nics
        .iter()
        .any(|n| deltas.net_dev.contains_key(&n.name))
    {
        let have: Vec<&String> = deltas.net_dev.keys().collect();
        f.fault(
            format!("{l1}/net-dev"),
            format!(
                "has none of the model's interfaces ({}); it has {}: the model is not this \
                 host's",
                names.join(", "),
                if have.is_empty() {
                    "none".to_string()
                } else {
                    have.iter()
                        .map(|s| escape(s))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        );
        return Err(refused(dir, &f));
    }
    if let Some(s) = deltas
        .softnet
        .iter()
        .find(|s| s.cpu >= u32::from(model.cpu.cores) && s.processed > 0)
    {
        notes.push(format!(
            "softnet_stat's CPU {} processed frames, and the model has {} cores: the model \
             holds fewer CPUs than the host",
            s.cpu, model.cpu.cores
        ));
    }
    let facts = host_facts(&host, &model, budget);
    let has_costs = model.nics.iter().all(|n| {
        let d = &n.driver;
        d.rx_per_packet.is_some() && d.isr_entry.is_some() && d.isr_exit.is_some()
    });
    if !has_costs {
        notes.push(
            "the model has no driver costs (import with --profile, or fit them with irqsim \
             fit): the findings are given, the predictions are not"
                .into(),
        );
    }
    Ok(Input {
        deltas,
        interval_from,
        model,
        model_text,
        model_name,
        facts,
        has_costs,
        notes,
    })
}

/// Each NIC's bus-info and largest RX ring from DIR/host's `ethtool -i` and `-g`, when
/// there (what cannot be read is left out: the model gives the rest).
fn host_facts(host: &Path, m: &ModelConfig, budget: &ReadBudget) -> HostFacts {
    let mut facts = HostFacts::default();
    for n in &m.nics {
        let mut f = Findings::default();
        let read = |name: String| Dump::read(host, &name, budget).ok().flatten();
        facts
            .bus
            .push(read(format!("ethtool-i-{}", n.name)).and_then(|d| {
                import::ethtool::driver_info(&d, &mut f)
                    .bus
                    .map(|b| b.value)
            }));
        facts.rx_max.push(
            read(format!("ethtool-g-{}", n.name))
                .and_then(|d| import::ethtool::rings(&d, &n.name, &mut f).rx_max)
                .and_then(|s| s.value)
                .and_then(|v| u32::try_from(v).ok()),
        );
    }
    facts
}

/// The findings, the load and the proposals.
#[derive(Debug)]
pub struct Plan {
    /// The findings.
    pub findings: Vec<Finding>,
    /// The load.
    pub load: MeasuredLoad,
    /// The proposals.
    pub proposals: Vec<Proposal>,
}

/// Diagnose and propose.
pub fn plan(input: &Input, opts: &Options) -> Plan {
    let d = &input.deltas;
    let m = &input.model;
    let findings = diagnosis::diagnose(d, m, &input.facts.bus);
    let irq_of = |nic: usize, k: u16| -> Option<u32> {
        diagnosis::nic_vectors(
            d,
            m,
            nic,
            input.facts.bus.get(nic).cloned().flatten().as_deref(),
        )
        .into_iter()
        .find(|(q, _)| *q == k)
        .map(|(_, v)| v.irq)
    };
    let proposals = proposals::propose(&findings, m, &input.facts, &irq_of, opts.max_p99_us);
    Plan {
        findings,
        load: predict::measured_load(d, m),
        proposals,
    }
}

/// One candidate as run.
#[derive(Clone, Debug, Serialize)]
pub struct Tried {
    /// Its changes.
    pub changes: Vec<Change>,
    /// What the model predicts with them.
    pub predicted: Predicted,
}

/// A proposal as run.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The finding it answers.
    pub kind: Kind,
    /// The NIC.
    pub nic: Option<String>,
    /// What it changes.
    pub what: String,
    /// Whether the model as given shows the finding too.
    pub reproduced: bool,
    /// The candidate chosen (index into `candidates`): the first that removes the
    /// finding in the model, else the one that comes nearest.
    pub chosen: usize,
    /// Whether the chosen one removes it.
    pub removes: bool,
    /// Every candidate with its prediction.
    pub candidates: Vec<Tried>,
}

/// The advice.
#[derive(Clone, Debug, Serialize)]
pub struct Advice {
    /// DIR.
    pub dir: String,
    /// The interval \[s\].
    pub interval_s: f64,
    /// Where it came from.
    pub interval_from: String,
    /// The model.
    pub model: String,
    /// The model's run \[s of load\].
    pub duration_s: f64,
    /// The latency target \[us\].
    pub max_p99_us: Option<f64>,
    /// Notes.
    pub notes: Vec<String>,
    /// The findings.
    pub findings: Vec<Finding>,
    /// The measured load.
    pub load: MeasuredLoad,
    /// The model as given at that load (none without costs or load).
    pub as_given: Option<Predicted>,
    /// The proposals.
    pub proposals: Vec<Outcome>,
}

/// How far `p` is from removing the finding `k` (0: removed).
fn gap(k: Kind, p: &Predicted, base: &Predicted, target: Option<f64>) -> f64 {
    match k {
        Kind::TimeSqueeze => p.time_squeeze_per_s,
        Kind::BacklogDrops => p.backlog_drops_per_s,
        Kind::RingDrops => p.ring_drops_per_s,
        Kind::LatencyTarget => (p.p99_us - target.unwrap_or(f64::INFINITY)).max(0.0),
        // Removed when the busiest core is less busy and no more is lost.
        _ => {
            if p.busiest_core_pct < base.busiest_core_pct && p.loss_pct <= base.loss_pct + 1e-9 {
                0.0
            } else {
                1.0 + p.busiest_core_pct
            }
        }
    }
}

/// The runs per call of [`run`] (for a progress bar).
pub fn runs(plan: &Plan) -> usize {
    1 + plan
        .proposals
        .iter()
        .map(|p| p.candidates.len())
        .sum::<usize>()
}

/// Run the model as given and with every candidate; `on_done` after each run.
pub fn run(
    input: &Input,
    mut plan: Plan,
    opts: &Options,
    on_done: &(dyn Fn() + Sync),
) -> Result<Advice, AdviseError> {
    let mut advice = Advice {
        dir: opts.dir.display().to_string(),
        interval_s: input.deltas.interval_s,
        interval_from: input.interval_from.clone(),
        model: input.model_name.clone(),
        duration_s: opts.duration_s,
        max_p99_us: opts.max_p99_us,
        notes: input.notes.clone(),
        findings: std::mem::take(&mut plan.findings),
        load: plan.load.clone(),
        as_given: None,
        proposals: Vec::new(),
    };
    let offered: f64 = plan.load.flows.iter().map(|f| f.pps).sum();
    if !input.has_costs || offered * opts.duration_s < 10.0 {
        if offered * opts.duration_s < 10.0 {
            advice
                .notes
                .push("no frames received in the interval: nothing to run the model at".into());
        }
        return Ok(advice);
    }
    let mut cands = vec![Candidate {
        name: "as-given".into(),
        changes: Vec::new(),
    }];
    for (i, p) in plan.proposals.iter().enumerate() {
        for (j, c) in p.candidates.iter().enumerate() {
            cands.push(Candidate {
                name: format!("p{}-c{}", i + 1, j + 1),
                changes: c.clone(),
            });
        }
    }
    let exp = predict::experiment(
        (&input.model_name, &input.model_text, &input.model),
        &plan.load,
        &cands,
        (opts.duration_s, opts.seed),
    )
    .map_err(AdviseError::Scenario)?;
    let res = runner::run(&exp, opts.threads, on_done).map_err(AdviseError::Run)?;
    let pred: Vec<Predicted> = res
        .points
        .iter()
        .map(|p| predict::predicted(&p.figures, opts.duration_s))
        .collect();
    let base = pred[0].clone();
    if let Some(t) = opts.max_p99_us {
        if base.p99_us > t {
            advice.findings.push(Finding {
                kind: Kind::LatencyTarget,
                nic: None,
                text: format!(
                    "the model of this host at the measured load predicts a p99 latency of \
                     {:.1} us, above the target of {t} us (no Linux counter gives a latency: \
                     this is the model's)",
                    base.p99_us
                ),
                rests_on: Vec::new(),
            });
        } else {
            plan.proposals.retain(|p| p.kind != Kind::LatencyTarget);
        }
    }
    let mut at = 1;
    for p in &plan.proposals {
        let tried: Vec<Tried> = p
            .candidates
            .iter()
            .enumerate()
            .map(|(j, c)| Tried {
                changes: c.clone(),
                predicted: pred[at + j].clone(),
            })
            .collect();
        at += p.candidates.len();
        let gaps: Vec<f64> = tried
            .iter()
            .map(|t| gap(p.kind, &t.predicted, &base, opts.max_p99_us))
            .collect();
        let (chosen, removes) = match gaps.iter().position(|g| *g == 0.0) {
            Some(j) => (j, true),
            None => (
                gaps.iter()
                    .enumerate()
                    .min_by(|a, b| a.1.total_cmp(b.1))
                    .map_or(0, |(j, _)| j),
                false,
            ),
        };
        advice.proposals.push(Outcome {
            kind: p.kind,
            nic: p.nic.clone(),
            what: p.what.clone(),
            reproduced: gap(p.kind, &base, &base, opts.max_p99_us) > 0.0
                || matches!(p.kind, Kind::VectorsOnOneCore),
            chosen,
            removes,
            candidates: tried,
        });
    }
    // A proposal whose ladder was run but whose finding is not there is not reported.
    advice.as_given = Some(base);
    Ok(advice)
}
