//! `irqsim advise`: the command around [`irqsim::experiment::advise`]: options,
//! progress, advise.txt and advise.json.

use anyhow::Context;
use irqsim::config::read_limit::ReadBudget;
use irqsim::experiment::advise::{self, AdviseError, Options};
use irqsim::results::output::write_atomic;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `irqsim advise`.
#[derive(clap::Args)]
pub struct AdviseArgs {
    /// What examples/gather-host.sh wrote: DIR/counters/0/ and DIR/counters/1/ (two
    /// snapshots of softnet_stat, interrupts, net-dev, ethtool-S-<if>, and optionally
    /// stat and time), and DIR/host/ (the dumps import-host reads) unless --model is
    /// given.
    dir: PathBuf,
    /// The host's model (a model file, e.g. what `irqsim import-host` wrote, with
    /// costs) [default: DIR/host imported, with --profile's costs].
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// With DIR/host imported: the model whose costs it takes (as import-host's
    /// --profile).
    #[arg(long, value_name = "MODEL", conflicts_with = "model")]
    profile: Option<PathBuf>,
    /// With DIR/host imported: a NIC's line rate in bit/s (`eth0=10G`, or `25G` for
    /// every NIC), as import-host's --line-rate (a virtual NIC reports none).
    #[arg(long, value_name = "[IF=]RATE", conflicts_with = "model")]
    line_rate: Vec<irqsim::config::import::LineRate>,
    /// The interval between the snapshots [s] [default: from their `time` files];
    /// required without DIR/counters/0 (counters then taken from zero).
    #[arg(long, value_name = "S")]
    interval: Option<f64>,
    /// A latency target: propose a shorter interrupt moderation when the model's p99
    /// at the measured load is above it [us].
    #[arg(long, value_name = "US")]
    max_p99_us: Option<f64>,
    /// The model's load per run [ms].
    #[arg(long, value_name = "MS", default_value_t = advise::DEFAULT_DURATION_S * 1e3)]
    duration_ms: f64,
}

/// Diagnose, propose, predict, write.
pub fn advise(
    args: &AdviseArgs,
    out: &Option<PathBuf>,
    seed: Option<u64>,
    threads: Option<usize>,
    quiet: bool,
) -> ExitCode {
    let opts = Options {
        dir: args.dir.clone(),
        model: args.model.clone(),
        profile: args.profile.clone(),
        line_rates: args.line_rate.clone(),
        interval_s: args.interval,
        max_p99_us: args.max_p99_us,
        duration_s: args.duration_ms / 1e3,
        seed: seed.unwrap_or(1),
        threads: threads.unwrap_or(0),
    };
    // The dumps, two snapshots and a model: import-host's budget.
    let budget = ReadBudget::new(irqsim::config::import::dump::MAX_DUMPS_TOTAL_BYTES);
    let fail = |e: AdviseError| {
        // Line by line: a name a user wrote is shown escaped, the lines kept apart.
        for (i, line) in e.to_string().lines().enumerate() {
            let line = irqsim::config::import::dump::escape(line);
            if i == 0 {
                eprintln!("error: {line}");
            } else {
                eprintln!("{line}");
            }
        }
        ExitCode::from(if e.is_input() { 2 } else { 1 })
    };
    let input = match advise::read_input(&opts, &budget) {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    let plan = advise::plan(&input, &opts);
    let out = out
        .clone()
        .unwrap_or_else(|| Path::new("irqsim-out").join("advise"));
    let _lock = match crate::lock_out(&out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let runs = advise::runs(&plan);
    if !quiet {
        eprintln!(
            "irqsim advise: {} -- {} finding(s), {} run(s) of the model",
            crate::shown(&args.dir),
            plan.findings.len(),
            if input.has_costs { runs } else { 0 }
        );
    }
    let bar = crate::progress_bar(runs, true, quiet);
    let tick = || bar.inc(1);
    let advice = match advise::run(&input, plan, &opts, &tick) {
        Ok(a) => a,
        Err(e) => {
            bar.finish_and_clear();
            return fail(e);
        }
    };
    bar.finish_and_clear();
    let text = advise::report::text(&advice);
    match write(&advice, &text, &out) {
        Ok(()) => {
            if !quiet {
                print!("{text}");
                println!("wrote advise.txt, advise.json in {}", crate::shown(&out));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn write(a: &advise::Advice, text: &str, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", crate::shown(out)))?;
    for (name, bytes) in [
        ("advise.txt", text.as_bytes().to_vec()),
        (
            "advise.json",
            (serde_json::to_string_pretty(a)? + "\n").into_bytes(),
        ),
    ] {
        let p = out.join(name);
        write_atomic(&p, &bytes).with_context(|| format!("writing {}", crate::shown(&p)))?;
    }
    Ok(())
}
