//! The `irqsim` command: run scenarios, print tables, write result files.

use anyhow::Context;
use clap::{Parser, Subcommand};
use irqsim::error::InputError;
use irqsim::scenario::{self, BUILTIN_SCENARIO, BuiltinFiles, DiskFiles, Experiment, FileSource};
use irqsim::{output, report, runner};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// irqsim: a discrete-event simulator of a host's packet receive and forwarding path
/// (NIC rings, interrupts, kernel queues, netisr) to reproduce and explain receive
/// livelock and latency under load.
///
/// With no command, runs the built-in default scenario (FreeBSD 4.0 router with 21143
/// NICs forwarding 64-byte frames, the reference SmartBits sweep) and prints simulated
/// against measured.
#[derive(Parser)]
#[command(name = "irqsim", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    #[command(flatten)]
    opts: RunOpts,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario: every load point x replication, in parallel.
    ///
    /// Writes DIR/results.json (every figure of every point) and DIR/smartbits.csv (the
    /// SmartBits column layout), and prints a table; when the scenario names a measured
    /// table, measured figures are printed beside the simulated ones.
    /// Exit codes: 0 success, 2 bad input (nothing is written), 1 other failure.
    Run {
        /// Scenario file (JSON). Paths inside it are relative to it.
        scenario: PathBuf,
    },
}

#[derive(clap::Args)]
struct RunOpts {
    /// Output directory [default: irqsim-out/<scenario name>].
    #[arg(long, global = true, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Seed for every random stream, replacing the scenario's `seed`.
    #[arg(long, global = true, value_name = "N")]
    seed: Option<u64>,
    /// Worker threads [default: one per core]. Results do not depend on it.
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,
    /// Print nothing but errors.
    #[arg(long, global = true)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let opts = cli.opts;
    let (path, files): (PathBuf, &dyn FileSource) = match cli.cmd {
        Some(Cmd::Run { scenario }) => (scenario, &DiskFiles),
        None => (PathBuf::from(BUILTIN_SCENARIO), &BuiltinFiles),
    };
    let exp = match scenario::load(&path, files) {
        Ok(e) => e,
        Err(e) => return input_error(&e),
    };
    match run(exp, opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn input_error(e: &InputError) -> ExitCode {
    eprintln!("error: invalid input");
    for line in e.to_string().lines() {
        eprintln!("  {line}");
    }
    ExitCode::from(2)
}

fn run(mut exp: Experiment, opts: RunOpts) -> anyhow::Result<()> {
    if let Some(s) = opts.seed {
        exp.seed = s;
    }
    let out = opts
        .out
        .unwrap_or_else(|| Path::new("irqsim-out").join(&exp.name));
    let runs = exp.points.len() * exp.replications as usize;
    if !opts.quiet {
        eprintln!(
            "irqsim: {} -- {} points x {} replication(s), {} s each",
            exp.path,
            exp.points.len(),
            exp.replications,
            exp.duration_s
        );
    }
    let t0 = Instant::now();
    let done = AtomicUsize::new(0);
    let results = runner::run(&exp, opts.threads.unwrap_or(0), &|| {
        done.fetch_add(1, Ordering::Relaxed);
    });
    debug_assert_eq!(done.load(Ordering::Relaxed), runs);
    let wall = t0.elapsed().as_secs_f64();
    let written = output::write_all(&out, &results)
        .with_context(|| format!("writing results under {}", out.display()))?;
    if !opts.quiet {
        println!("{}", report::table(&results));
        let pkts: f64 = results
            .points
            .iter()
            .map(|p| p.figures.total.sent)
            .sum::<f64>()
            * exp.replications as f64;
        println!(
            "wrote {} in {}; {runs} runs, {:.2e} packets in {wall:.2} s wall",
            written.join(", "),
            out.display(),
            pkts,
        );
    }
    Ok(())
}
