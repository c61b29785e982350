//! `irqsim tune`: the command around [`irqsim::experiment::tune`]: options, the
//! progress bar, and the files `tune.json`, `tune.txt`, `commands.sh` and
//! `plots/pareto.svg` (and `.png`).

use crate::plot;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use irqsim::config::scenario::DiskFiles;
use irqsim::experiment::tune::report::{self, TuneReport};
use irqsim::experiment::tune::{self, Constraints, Goal, TuneError, TuneOptions, commands, space};
use irqsim::results::output::write_atomic;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// What `--maximize` takes.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Maximize {
    /// The NDR (no loss), as `irqsim ndr` searches it, at the first flow's frame size.
    Ndr,
}

/// What `--minimize` takes.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Minimize {
    /// CPU time at --at, in cores busy (summed over the cores).
    Cpu,
    /// p99 latency at --at.
    P99,
}

/// Options of `irqsim tune`.
#[derive(clap::Args)]
pub struct TuneArgs {
    /// Scenario file (JSON): its model (a Linux host: NICs that name their driver), its
    /// flows in the proportions of its first load point, `duration_s` per trial, seed.
    scenario: PathBuf,
    /// Goal: maximise this figure (one of --maximize and --minimize is required).
    #[arg(long, value_enum, value_name = "FIGURE", conflicts_with = "minimize")]
    maximize: Option<Maximize>,
    /// Goal: minimise this figure at --at.
    #[arg(long, value_enum, value_name = "FIGURE")]
    minimize: Option<Minimize>,
    /// The rate the trials offer, all flows: frames/s, or with a suffix kpps, Mpps,
    /// Gpps (`2Mpps`, `500kpps`).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    at: Option<f64>,
    /// Constraint: p99 latency at most this [us].
    #[arg(long, value_name = "US")]
    max_p99_us: Option<f64>,
    /// Constraint: loss at most this [% of frames sent] (--minimize only).
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    max_loss: f64,
    /// Constraint: at most this many cores doing any work.
    #[arg(long, value_name = "N")]
    max_cores: Option<u16>,
    /// Constraint: CPU time at most this many cores busy.
    #[arg(long, value_name = "CORES")]
    max_cpu: Option<f64>,
    /// Knobs to turn, comma-separated (rx-usecs, rx-frames, adaptive-rx, combined,
    /// rx-ring, netdev_budget, netdev_budget_usecs, dev_weight, netdev_max_backlog,
    /// napi_defer_hard_irqs, gro_flush_timeout, threaded, rps, irq-affinity) [default:
    /// those of rx-usecs, rx-frames, combined and netdev_budget the model has].
    #[arg(long, value_name = "K,K,...", value_delimiter = ',')]
    knobs: Vec<String>,
    /// Settings run at most, the host as given not counted: a space with no more
    /// points is run whole, a larger one searched by coordinate descent.
    #[arg(long, value_name = "N", default_value_t = tune::DEFAULT_BUDGET)]
    budget: usize,
    /// The scenario's variant to tune [default: its first].
    #[arg(long, value_name = "NAME")]
    variant: Option<String>,
}

/// `2Mpps`, `500kpps`, `1.5e6`: frames/s.
fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = [("Gpps", 1e9), ("Mpps", 1e6), ("kpps", 1e3), ("pps", 1.0)]
        .iter()
        .find_map(|(suf, m)| t.strip_suffix(suf).map(|n| (n, *m)))
        .unwrap_or((t, 1.0));
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: a rate in frames/s, e.g. 2Mpps, 500kpps or 1500000"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("`{s}`: a rate above 0"));
    }
    Ok(v * mult)
}

/// Run the search and write its files.
pub fn tune(
    files: &DiskFiles,
    args: &TuneArgs,
    out: &Option<PathBuf>,
    seed: Option<u64>,
    threads: Option<usize>,
    quiet: bool,
    no_plots: bool,
) -> ExitCode {
    let mut exp = match irqsim::experiment::load::load(&args.scenario, files) {
        Ok(e) => e,
        Err(e) => return crate::input_error(&e),
    };
    if let Some(s) = seed {
        exp.seed = s;
    }
    let refused = |e: TuneError| {
        eprintln!("error: {}: {e}", crate::shown(&args.scenario));
        ExitCode::from(2)
    };
    let variant = match &args.variant {
        None => 0,
        Some(n) => match exp.variants.iter().position(|v| &v.name == n) {
            Some(i) => i,
            None => {
                return refused(TuneError::Refused {
                    field: "--variant".into(),
                    reason: format!(
                        "`{n}`: no such variant (the scenario has {})",
                        exp.variants
                            .iter()
                            .map(|v| v.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        },
    };
    if args.maximize.is_none() && args.minimize.is_none() {
        return refused(TuneError::Refused {
            field: "--maximize/--minimize".into(),
            reason: "no goal: give --maximize ndr, --minimize cpu or --minimize p99".into(),
        });
    }
    let knobs = match space::parse_knobs(&args.knobs) {
        Ok(k) => k,
        Err(e) => return refused(e),
    };
    let opts = TuneOptions {
        goal: match (args.maximize, args.minimize) {
            (Some(Maximize::Ndr), _) => Goal::MaximizeNdr,
            (_, Some(Minimize::P99)) => Goal::MinimizeP99,
            _ => Goal::MinimizeCpu,
        },
        at_pps: args.at,
        constraints: Constraints {
            max_p99_us: args.max_p99_us,
            max_loss_pct: args.max_loss,
            max_cores: args.max_cores,
            max_cpu_cores: args.max_cpu,
        },
        knobs,
        budget: args.budget,
        threads: threads.unwrap_or(0),
        variant,
        ..TuneOptions::default()
    };
    if let Err(e) = tune::check(&exp, &opts) {
        return refused(e);
    }
    let out = out
        .clone()
        .unwrap_or_else(|| Path::new("irqsim-out").join(format!("{}-tune", exp.name)));
    let _lock = match crate::lock_out(&out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if !quiet {
        eprintln!(
            "irqsim tune: {} -- variant `{}`, budget {} settings",
            crate::shown(&args.scenario),
            exp.variants[variant].name,
            opts.budget
        );
    }
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(opts.budget as u64 + 1);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{bar:20}] {pos}/{len} settings (at most) · {elapsed} elapsed",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    };
    let t0 = Instant::now();
    let rep = match tune::tune(&exp, &opts, &|n| bar.inc(n as u64)) {
        Ok(r) => r,
        Err(e @ TuneError::Refused { .. }) => {
            bar.finish_and_clear();
            return refused(e);
        }
        Err(e) => {
            bar.finish_and_clear();
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    bar.finish_and_clear();
    let wall = t0.elapsed().as_secs_f64();
    match write(&rep, &exp.variants[variant].model, &out, no_plots) {
        Ok(files) => {
            if !quiet {
                print!("{}", report::text(&rep));
                println!(
                    "wrote {} in {}; {} settings in {wall:.1} s wall",
                    files.join(", "),
                    crate::shown(&out),
                    rep.candidates.len() + 1
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// `commands.sh` of the report's best setting (a script that says so when there is
/// none).
pub fn commands_sh(rep: &TuneReport, host: &irqsim::config::model::ModelConfig) -> String {
    let Some(b) = rep.best else {
        return "#!/bin/sh\n# irqsim tune found no setting that meets the constraints: \
                nothing to apply.\nexit 1\n"
            .to_string();
    };
    let setting: Vec<(tune::knobs::KnobId, i64)> = rep.candidates[b]
        .setting
        .iter()
        .filter_map(|(k, v)| tune::knobs::by_name(k).and_then(|kn| v.as_i64().map(|x| (kn.id, x))))
        .collect();
    let mut m = host.clone();
    for (k, v) in &setting {
        tune::knobs::knob(*k).apply(&mut m, *v);
    }
    commands::script(
        &m,
        &setting,
        &format!(
            "irqsim tune {} (variant {}), seed {}: the best setting found.\n{}",
            rep.scenario,
            rep.variant,
            rep.seed,
            report::text(rep)
                .lines()
                .find(|l| l.starts_with("gain:"))
                .unwrap_or("")
        ),
    )
}

fn write(
    rep: &TuneReport,
    host: &irqsim::config::model::ModelConfig,
    out: &Path,
    no_plots: bool,
) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", crate::shown(out)))?;
    let mut written = Vec::new();
    for (name, bytes) in [
        (
            "tune.json",
            (serde_json::to_string_pretty(rep)? + "\n").into_bytes(),
        ),
        ("tune.txt", report::text(rep).into_bytes()),
        ("commands.sh", commands_sh(rep, host).into_bytes()),
    ] {
        let p = out.join(name);
        write_atomic(&p, &bytes).with_context(|| format!("writing {}", crate::shown(&p)))?;
        written.push(name.to_string());
    }
    if !no_plots {
        let n = plot::pareto::write(&out.join(plot::DIR), rep)?.len();
        written.push(format!("{}/ ({n} files)", plot::DIR));
    }
    Ok(written)
}
