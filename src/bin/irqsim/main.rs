//! The `irqsim` command: run scenarios, print tables, write result files and plots;
//! redraw and compare plots of saved results.

mod advise_cmd;
mod estimate;
mod fit_cmd;
mod import_cmd;
mod ndr_cmd;
mod plot;
mod shard_cmd;
mod trace_cmd;
mod tune_cmd;
mod validate;

use estimate::*;
use shard_cmd::{merge_cmd, run_shard};

use anyhow::Context;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use irqsim::config::error::InputError;
use irqsim::config::read_limit::ReadBudget;
use irqsim::config::scenario::{
    self, BUILTIN_SCENARIO, BuiltinFiles, DiskFiles, Experiment, FileSource,
};
use irqsim::experiment::out_lock::{LockError, OutLock};
use irqsim::experiment::runner;
use irqsim::experiment::shard::{self, Shard};
use irqsim::results::Results;
use irqsim::results::{output, report};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
    /// Writes DIR/results.json (every figure of every point), DIR/smartbits.csv (the
    /// SmartBits column layout) and the plots under DIR/plots/ (SVG and PNG, unless
    /// --no-plots), and prints a table; when the scenario names a measured table,
    /// measured figures are printed beside the simulated ones and drawn over the plots.
    /// Exit codes: 0 success, 2 bad input (nothing is written), 1 other failure.
    Run {
        /// Scenario file (JSON). Paths inside it are relative to it.
        scenario: PathBuf,
        /// Run only the K-th of N disjoint slices of the runs (K from 1 to N) and write
        /// a partial result into DIR [default: irqsim-out/<scenario name>/shard-K-of-N]:
        /// DIR/shard.json and DIR/runs/. `irqsim merge` combines the N partials into
        /// the output of a whole run. Runs are dealt by estimated cost, so every shard
        /// gets as many runs (to within one) and a mix of light and heavy load points.
        #[arg(long, value_name = "K/N", conflicts_with = "trace")]
        shard: Option<Shard>,
        /// Also write each point's counters as a Linux host shows them, in the layouts
        /// of /proc/net/softnet_stat, /proc/interrupts, /proc/net/dev and `ethtool -S`:
        /// DIR/linux/<variant>/<point>/softnet_stat, interrupts, net-dev and
        /// ethtool-S-<nic>, over the point's whole run (load and drain). For models
        /// whose NICs name their Linux driver (`nics[].linux_driver`); refused (exit 2)
        /// for others. A run without it removes the Linux files an earlier run wrote.
        #[arg(long, conflicts_with = "shard")]
        linux_counters: bool,
        #[command(flatten)]
        trace: trace_cmd::TraceArgs,
    },
    /// Redraw the plots of a saved results.json into DIR/plots/.
    ///
    /// DIR defaults to the directory of RESULTS. A timeline.csv beside RESULTS is drawn
    /// too. Exit codes: 0 success, 2 unreadable or invalid input, 1 other failure.
    Plot {
        /// A results.json written by `irqsim run`.
        results: PathBuf,
    },
    /// Overlay several result sets (models, policies, seeds) in one set of plots.
    ///
    /// Prints the points side by side (per load point, each series' forwarded rate, loss
    /// and average latency) and writes DIR/plots/ [default DIR: irqsim-out/compare];
    /// lines are labelled by scenario name (and variant), measured tables drawn once each.
    /// Exit codes: 0 success, 2 unreadable or invalid input, 1 other failure.
    Compare {
        /// Two or more results.json files.
        #[arg(required = true, num_args = 2..)]
        results: Vec<PathBuf>,
    },
    /// Fit numeric model parameters to the measured table the scenario names, by
    /// simulating it (weighted least squares of loss and average latency per load point;
    /// Nelder-Mead after a Halton sample, with restarts).
    ///
    /// Writes DIR/fit.json (fitted values, linearised 95 % intervals, correlations,
    /// residuals point by point, warnings), DIR/fitted-model.json (the model file with
    /// the fitted values and a note on each), DIR/residuals.csv, the start and fitted
    /// sweeps under DIR/start/ and DIR/fitted/, and plots under DIR/plots/ (residuals,
    /// the objective along each parameter, start and fitted sweeps against the table).
    /// Exit codes: 0 success, 2 bad input, 1 other failure.
    Fit(fit_cmd::FitArgs),
    /// Search each variant's non-drop rate (NDR: no loss) and partial-drop rate (PDR:
    /// loss at most --pdr-loss) per frame size, as FD.io CSIT's MLRsearch does: trials
    /// of a quarter, a half and all of the scenario's duration, each phase narrowing the
    /// bounds to its width goal; the answer is the highest load that met the goal below
    /// the lowest that did not (conservative when loss is not monotone in load).
    ///
    /// Writes DIR/ndr.json (per variant and frame size: frame_bytes, ndr_pps, ndr_pct,
    /// pdr_pps, pdr_pct, the bounds above them and every trial), DIR/ndr.txt (the
    /// NDR_LOWER/NDR_UPPER/PDR_LOWER/PDR_UPPER lines CSIT prints) and DIR/plots/ndr.svg
    /// and .png [default DIR: irqsim-out/<scenario name>-ndr], and prints a table.
    /// Exit codes: 0 success, 2 bad input (nothing is written), 1 other failure.
    Ndr(ndr_cmd::NdrArgs),
    /// Search the knobs of a Linux host (ethtool -C/-L/-G, net.core sysctls, NAPI's
    /// sysfs files, RPS, IRQ affinity) for one goal under constraints, by simulating
    /// each setting: `--maximize ndr`, `--minimize cpu --at 2Mpps --max-p99-us 50`,
    /// `--minimize p99 --at 1Mpps --max-cores 4`. Every point of the space when it has
    /// no more than --budget, else coordinate descent from the host as given with
    /// seeded restarts.
    ///
    /// Writes DIR/tune.json (every setting run with its figures, feasible or not and
    /// why, the best and its gain over the host as given, the Pareto front), DIR/tune.txt,
    /// DIR/commands.sh (the Linux commands that apply the best setting) and
    /// DIR/plots/pareto.svg and .png [default DIR: irqsim-out/<scenario name>-tune], and
    /// prints tune.txt. Exit codes: 0 success, 2 bad input (nothing is run or written),
    /// 1 other failure.
    Tune(tune_cmd::TuneArgs),
    /// Build a model skeleton from a directory of a host's own dumps (lscpu, sysctl
    /// net.core, ethtool -i/-g/-l/-c per interface, /proc/interrupts and the vectors'
    /// affinity lists): the structure and the real knobs filled in, each value with a
    /// note in the model's `notes` naming its file and line; costs taken from
    /// --profile MODEL or left to `irqsim fit`.
    ///
    /// Writes the model file (the format of models/*.json) to --out FILE [default:
    /// stdout], with --scenario FILE a starting scenario for it, and prints a report on
    /// stderr: the files read, what was not from the dumps, and every line not
    /// understood (file:line: reason; never used). examples/gather-host.sh writes the
    /// dumps on the host to import.
    /// Exit codes: 0 success, 2 bad input (a missing or malformed dump, a model the
    /// loader refuses; nothing is written), 1 other failure.
    ImportHost(import_cmd::ImportArgs),
    /// Combine the partial results of `irqsim run --shard K/N`, one directory per shard
    /// in any order, into exactly the output `irqsim run` writes on one machine.
    ///
    /// Writes DIR/results.json, the SmartBits CSVs, timeline.csv and the plots (unless
    /// --no-plots) [default DIR: irqsim-out/<scenario name>] and prints the table.
    /// Refuses, naming the directory and the field, partials of different scenarios,
    /// seeds, irqsim builds or shard counts, a shard given twice or missing, and
    /// missing runs. Exit codes: 0 success, 2 partials refused, 1 other failure.
    Merge {
        /// The N directories written by `irqsim run SCENARIO --shard K/N --out DIR`.
        #[arg(required = true, num_args = 1.., value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    Validate(validate::ValidateArgs),
    /// Read a live host's counters and say what to change: from two snapshots of
    /// /proc/net/softnet_stat, /proc/interrupts, /proc/net/dev and ethtool -S taken an
    /// interval apart (examples/gather-host.sh takes them), the findings in words
    /// (vectors all on one core, time_squeeze, backlog and ring drops, interrupts at
    /// the moderation's rate, CPUs busy at softirq), each naming its counters and
    /// numbers; then, with the host's model, the predicted effect (loss, CPU, p99) of
    /// each change proposed, and the Linux commands that make it.
    ///
    /// Writes DIR/advise.txt and DIR/advise.json [default DIR: irqsim-out/advise] and
    /// prints the text. Exit codes: 0 success, 2 bad input (a missing or malformed
    /// snapshot, a model refused; nothing is simulated or written), 1 other failure.
    Advise(advise_cmd::AdviseArgs),
    /// Print the JSON Schema of scenario or model files (generated from the Rust types;
    /// the same as schemas/*.schema.json), for editors that check files as they are typed.
    Schema {
        /// Which schema.
        #[arg(value_enum, default_value = "scenario")]
        kind: SchemaKind,
        /// Print the field reference (markdown, the book's scenario-fields.md and
        /// model-fields.md) instead of the schema.
        #[arg(long)]
        markdown: bool,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SchemaKind {
    /// Scenario files (scenarios/*.json).
    Scenario,
    /// Model files (models/*.json).
    Model,
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
    /// Print nothing but errors and notes: no table, no progress bar (run, ndr, fit),
    /// no report (import-host).
    #[arg(long, global = true)]
    quiet: bool,
    /// Continue an interrupted sweep from the runs saved under DIR/.checkpoint/ (the
    /// output is the same as an uninterrupted run's).
    #[arg(long, global = true)]
    resume: bool,
    /// Write no plots (for benchmarks and scripted sweeps).
    #[arg(long, global = true)]
    no_plots: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let opts = cli.opts;
    // The one budget of what this command reads, shared by every reader of it
    // (`irqsim::config::read_limit` states its value and rule).
    let budget = Arc::new(ReadBudget::command());
    let disk = DiskFiles::new(budget.clone());
    let (path, files, shard, trace, linux): (PathBuf, &dyn FileSource, _, _, _) = match cli.cmd {
        Some(Cmd::Run {
            scenario,
            shard,
            linux_counters,
            trace,
        }) => (scenario, &disk, shard, trace, linux_counters),
        None => (
            PathBuf::from(BUILTIN_SCENARIO),
            &BuiltinFiles,
            None,
            trace_cmd::TraceArgs::default(),
            false,
        ),
        Some(Cmd::Merge { dirs }) => return merge_cmd(&dirs, &opts, &budget),
        Some(Cmd::Plot { results }) => return plot_cmd(&[results], false, &opts, &budget),
        Some(Cmd::Compare { results }) => return plot_cmd(&results, true, &opts, &budget),
        Some(Cmd::Fit(args)) => {
            return fit_cmd::fit(
                &disk,
                &args,
                &opts.out,
                opts.seed,
                opts.threads,
                opts.quiet,
                opts.no_plots,
            );
        }
        Some(Cmd::Ndr(args)) => {
            return ndr_cmd::ndr(
                &disk,
                &args,
                &opts.out,
                opts.seed,
                opts.threads,
                opts.quiet,
                opts.no_plots,
            );
        }
        Some(Cmd::Advise(args)) => {
            return advise_cmd::advise(&args, &opts.out, opts.seed, opts.threads, opts.quiet);
        }
        Some(Cmd::Tune(args)) => {
            return tune_cmd::tune(
                &disk,
                &args,
                &opts.out,
                opts.seed,
                opts.threads,
                opts.quiet,
                opts.no_plots,
            );
        }
        Some(Cmd::ImportHost(args)) => {
            return import_cmd::import_host(&args, &opts.out, opts.quiet);
        }
        Some(Cmd::Validate(args)) => {
            let shipped = opts.seed.is_none() && !opts.resume;
            return validate::validate(&args, &opts.out, opts.threads, opts.quiet, shipped);
        }
        Some(Cmd::Schema { kind, markdown }) => {
            let (schema, title) = match kind {
                SchemaKind::Scenario => (scenario::scenario_schema(), "Scenario fields"),
                SchemaKind::Model => (scenario::model_schema(), "Model fields"),
            };
            if markdown {
                let v: serde_json::Value =
                    serde_json::from_str(&schema).expect("the generated schema is JSON");
                print!("{}", irqsim::config::field_reference::markdown(&v, title));
            } else {
                print!("{schema}");
            }
            return ExitCode::SUCCESS;
        }
    };
    let exp = match irqsim::experiment::load::load(&path, files) {
        Ok(e) => e,
        Err(e) => return input_error(&e),
    };
    if trace.trace.is_some() {
        // Refuse a window that does not fit the scenario before the sweep runs.
        if let Err(e) = trace_cmd::select(&exp, &trace).and_then(|_| trace_cmd::spec(&trace)) {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    }
    // The Linux files' hosts, refused before the sweep runs.
    let linux = if linux {
        match irqsim::results::linux::hosts(&exp) {
            Ok(h) => Some(h),
            Err((variant, e)) => {
                eprintln!("error: invalid input");
                eprintln!("  {}: --linux-counters, variant `{variant}`: {e}", exp.path);
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let trace_bytes = trace
        .trace
        .is_some()
        .then_some((trace.trace_limit_mb * 1e6) as u64);
    if let Err(code) = check_memory(&exp, &opts, shard, trace_bytes) {
        return code;
    }
    if !opts.quiet {
        for w in irqsim::config::hairpin::warnings(&exp) {
            eprintln!("warning: {w}");
        }
    }
    let out = out_dir(&exp, &opts, shard);
    let lock = match lock_out(&out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if linux.is_some()
        && let Err(code) = own_subdir(&out.join(output::LINUX_DIR))
    {
        return code;
    }
    match run(exp, opts, shard, trace, linux, lock, &budget) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(exit_code(&e))
        }
    }
}

/// The runs a command will simulate and the threads it will use (with the note to
/// print when `--threads` was lowered): every run, or a shard's share of them.
fn runs_and_threads(
    exp: &Experiment,
    opts: &RunOpts,
    shard: Option<Shard>,
) -> (usize, usize, Option<String>) {
    let all = exp.variants.len().max(1) * exp.npoints() * exp.replications as usize;
    let runs = shard.map_or(all, |s| all.div_ceil(s.n.max(1)));
    let (threads, note) = irqsim::sim::limits::threads(opts.threads.unwrap_or(0), runs);
    (runs, threads, note)
}

/// Refuse (exit 2, before anything is written) a sweep that cannot fit the memory
/// available, and warn of one that may not ([`irqsim::experiment::memory`] states the rule and the
/// figures).
fn check_memory(
    exp: &Experiment,
    opts: &RunOpts,
    shard: Option<Shard>,
    trace_bytes: Option<u64>,
) -> Result<(), ExitCode> {
    let (runs, threads, _) = runs_and_threads(exp, opts, shard);
    let mut mem = irqsim::experiment::memory::MemoryEstimate::new(exp, runs, threads);
    if let Some(t) = trace_bytes {
        mem = mem.with_trace(t);
    }
    let Some((avail, field)) = irqsim::experiment::memory::available() else {
        return Ok(());
    };
    if mem.least > avail {
        eprintln!(
            "error: {}: the sweep would need at least {} ({} with every latency histogram \
             at its largest), more than the {} of memory available ({field}); nothing was simulated or written. Use fewer flows, load \
             points, variants or replications, a shorter run, or fewer --threads",
            exp.path,
            irqsim::experiment::memory::bytes(mem.least),
            mem.describe(runs),
            irqsim::experiment::memory::bytes(avail)
        );
        return Err(ExitCode::from(2));
    }
    if mem.total > avail && !opts.quiet {
        eprintln!(
            "warning: {}: the sweep needs at least {}, but up to {} if its latencies grow \
             to the run's length (every latency histogram at its largest), more than the {} \
             of memory available ({field})",
            exp.path,
            irqsim::experiment::memory::bytes(mem.least),
            mem.describe(runs),
            irqsim::experiment::memory::bytes(avail)
        );
    }
    Ok(())
}

/// The exit code of a failed run: 2 when a file found in the output directory is
/// refused (a checkpoint or partial result that cannot be trusted, a file irqsim would
/// write over), 1 for a machine fault or a failed simulation.
fn exit_code(e: &anyhow::Error) -> u8 {
    if let Some(c) = e.downcast_ref::<irqsim::experiment::checkpoint::CheckpointError>() {
        c.exit_code()
    } else if let Some(p) = e.downcast_ref::<shard::PartialError>() {
        p.exit_code()
    } else {
        1
    }
}

pub(crate) fn input_error(e: &InputError) -> ExitCode {
    eprintln!("error: invalid input");
    for line in e.to_string().lines() {
        // A path given on the command line may hold an escape sequence: shown escaped.
        eprintln!("  {}", irqsim::config::import::dump::escape(line));
    }
    ExitCode::from(2)
}

/// A path as printed: its control characters escaped (a path given on the command
/// line may hold an escape sequence, which would act on the terminal).
pub(crate) fn shown(p: &Path) -> String {
    irqsim::config::import::dump::escape(&p.display().to_string())
}

/// Lock `out` for this command ([`irqsim::experiment::out_lock`]), creating it if needed: a
/// directory another command holds is refused (exit 2, naming its pid), one that cannot
/// be locked (read-only, full) is a machine fault (exit 1).
pub(crate) fn lock_out(out: &Path) -> Result<OutLock, ExitCode> {
    let lock = lock_dir(out)?;
    own_subdirs(out)?;
    Ok(lock)
}

/// Lock directory `dir` ([`OutLock::acquire`], which creates it if needed), a refusal
/// reported as every command reports it: one another command holds is exit 2 (naming
/// its pid), one that cannot be locked (read-only, full) exit 1; the message's lines
/// escaped (the path came from the command line).
pub(crate) fn lock_dir(dir: &Path) -> Result<OutLock, ExitCode> {
    OutLock::acquire(dir).map_err(|e| {
        let text = e.to_string();
        let lines: Vec<String> = text
            .split('\n')
            .map(irqsim::config::import::dump::escape)
            .collect();
        eprintln!("error: {}", lines.join("\n"));
        ExitCode::from(match e {
            LockError::Held { .. } => 2,
            LockError::Io { .. } => 1,
        })
    })
}

/// The directories irqsim writes and deletes in under `out` (`.checkpoint`, `runs`,
/// `plots`) must be directories of their own, or absent: a symbolic link there (or a
/// file) would lead its writes and deletions elsewhere, so it is refused with exit 2,
/// naming it, before any work.
fn own_subdirs(out: &Path) -> Result<(), ExitCode> {
    for name in [
        irqsim::experiment::checkpoint::DIR,
        irqsim::experiment::shard::RUNS_DIR,
        "plots",
    ] {
        own_subdir(&out.join(name))?;
    }
    Ok(())
}

/// [`own_subdirs`]'s check of one directory (also `linux/` with `--linux-counters`).
fn own_subdir(p: &Path) -> Result<(), ExitCode> {
    let what = match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => "a symbolic link",
        Ok(m) if !m.is_dir() => "not a directory",
        _ => return Ok(()),
    };
    eprintln!(
        "error: {} is {what}: irqsim writes and removes its own files there, so it must \
         be a directory of the output directory's own (or absent); move it away",
        shown(p)
    );
    Err(ExitCode::from(2))
}

/// The output directory of `irqsim run`: `--out`, or `irqsim-out/<scenario name>` (and
/// `shard-K-of-N` under it for a shard). The scenario's name passed
/// [`irqsim::config::names::check`] when it was loaded, so it stays under `irqsim-out/`.
fn out_dir(exp: &Experiment, opts: &RunOpts, shard: Option<Shard>) -> PathBuf {
    opts.out.clone().unwrap_or_else(|| {
        let dir = Path::new("irqsim-out").join(&exp.name);
        match shard {
            Some(s) => dir.join(format!("shard-{}-of-{}", s.k, s.n)),
            None => dir,
        }
    })
}

/// A note on a `duration_s` that looks like milliseconds: a whole number of 100 s or
/// more, longer than the at least 60 s RFC 2544 asks of a trial ("Trial duration") and
/// than any shipped scenario.
fn duration_note(duration_s: f64) -> Option<String> {
    (duration_s >= 100.0 && duration_s.fract() == 0.0).then(|| {
        format!(
            "`duration_s` is in seconds: {duration_s} s of simulated time per point (RFC 2544 \
             asks at least 60 s of a trial; the shipped scenarios run 0.002 to 60 s); for \
             {duration_s} ms write {}",
            duration_s / 1000.0
        )
    })
}

/// A note when a `pps` sweep's points are all at most 100 frames/s: most likely
/// percentages of line rate written under the wrong unit (shipped low-rate sweeps start
/// at 100 frames/s and go higher).
fn load_unit_note(exp: &Experiment) -> Option<String> {
    let max = (exp.variants.iter().flat_map(|v| &v.points))
        .map(|p| p.load)
        .fold(0.0f64, f64::max);
    let paced_by_load = exp.flows.iter().any(|f| f.rate_pps.is_none());
    (exp.load_unit == scenario::LoadUnit::Pps && paced_by_load && max <= 100.0).then(|| {
        format!(
            "`load.unit` is `pps`: the points are at most {max} frames/s per flow; for % \
                 of line rate write \"unit\": \"percent\""
        )
    })
}

/// An interrupted sweep (Ctrl-C): say where its finished runs are saved and how to
/// finish it, release the output directory and exit 130 (128 + SIGINT).
fn exit_interrupted(what: &str, i: &runner::RunError, out: &Path, lock: OutLock) -> ! {
    eprintln!(
        "irqsim: {what}{i}; they are saved under {}. Run the same command with --resume to finish.",
        shown(&out.join(irqsim::experiment::checkpoint::DIR))
    );
    drop(lock);
    std::process::exit(130);
}

/// `irqsim run`: simulate the sweep into the directory `lock` holds until it returns,
/// reading from the command's `budget`.
fn run(
    mut exp: Experiment,
    opts: RunOpts,
    shard: Option<Shard>,
    trace: trace_cmd::TraceArgs,
    linux: Option<Vec<irqsim::results::linux::LinuxHost>>,
    lock: OutLock,
    budget: &ReadBudget,
) -> anyhow::Result<()> {
    let out = &lock.dir().to_path_buf();
    if let Some(s) = opts.seed {
        exp.seed = s;
    }
    if let Some(s) = shard {
        return run_shard(&exp, &opts, s, out, lock, budget);
    }
    if let Some(note) = load_unit_note(&exp) {
        eprintln!("irqsim: note: {note}");
    }
    if let Some(note) = duration_note(exp.duration_s) {
        // Printed even with --quiet: a unit slip costs hours, and nothing else says so.
        eprintln!("irqsim: note: {note}");
    }
    let variants = exp.variants.len().max(1);
    let (runs, threads, note) = runs_and_threads(&exp, &opts, None);
    if !opts.quiet {
        if let Some(note) = note {
            eprintln!("irqsim: {note}");
        }
        let v = if variants > 1 {
            format!("{variants} variants x ")
        } else {
            String::new()
        };
        eprintln!(
            "irqsim: {} -- {v}{} points x {} replication(s), {} s each",
            exp.path,
            exp.npoints(),
            exp.replications,
            exp.duration_s
        );
    }
    let est = Estimate::new(&exp, threads);
    if !opts.quiet {
        eprintln!("{}", est.describe());
        let mut mem = irqsim::experiment::memory::MemoryEstimate::new(&exp, runs, threads);
        if trace.trace.is_some() {
            mem = mem.with_trace((trace.trace_limit_mb * 1e6) as u64);
        }
        eprintln!("estimated memory: {}", mem.describe(runs));
    }
    // A checkpoint that cannot be trusted is refused here, before any work.
    let checkpoint =
        irqsim::experiment::checkpoint::Checkpoint::open(out, &exp, opts.resume, budget)
            .with_context(|| format!("opening the checkpoint under {}", shown(out)))?;
    let t0 = Instant::now();
    let done = AtomicUsize::new(0);
    let offered = est.packets;
    let bar = progress_bar(runs, runs > exp.npoints(), opts.quiet);
    let stop = stop_on_ctrl_c();
    let outcome = runner::run_with(
        &exp,
        threads,
        &|| {
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            // Packets simulated so far, estimated from the runs done (runs differ in load).
            let pkts = offered * n as f64 / runs as f64;
            let secs = t0.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!("{}pkt/s", si(pkts / secs)));
            bar.inc(1);
        },
        Some(&checkpoint),
        Some(&stop),
    );
    bar.finish_and_clear();
    let results = match outcome {
        Ok(r) => r,
        Err(i @ runner::RunError::Interrupted { .. }) => exit_interrupted("", &i, out, lock),
        Err(e) => anyhow::bail!("{}: {e}", exp.path),
    };
    debug_assert_eq!(done.load(Ordering::Relaxed), runs);
    let wall = t0.elapsed().as_secs_f64();
    let mut written = write_outputs(out, &results, opts.no_plots, || {
        checkpoint
            .finish()
            .with_context(|| format!("removing the checkpoint under {}", shown(out)))
    })?;
    // The Linux files (or, without --linux-counters, the removal of an earlier run's).
    let linux_files = linux
        .map(|hosts| irqsim::results::linux::sweep_files(&exp, &hosts, &results))
        .unwrap_or_default();
    let files = output::write_linux(out, &linux_files).with_context(|| {
        format!(
            "writing the Linux counters under {}",
            shown(&out.join(output::LINUX_DIR))
        )
    })?;
    if !files.is_empty() {
        written.push(format!("{}/ ({} files)", output::LINUX_DIR, files.len()));
    }
    let mut traced = None;
    if trace.trace.is_some() {
        let (files, line) = trace_cmd::run(&exp, &trace, out, opts.no_plots)?;
        written.extend(files.into_iter().filter(|f| !f.starts_with(plot::DIR)));
        traced = Some(line);
    }
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
            shown(out),
            pkts,
        );
    }
    if let Some(line) = traced
        && (line.contains("warning:") || !opts.quiet)
    {
        eprintln!("{line}");
    }
    Ok(())
}

/// Ctrl-C: start no new run (the finished ones are already saved).
fn stop_on_ctrl_c() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    stop
}

/// Write the output of a sweep into `out`: results.json, the SmartBits tables and the
/// timeline (output::write_all), then `after_data` (removing the checkpoint), then the
/// plots unless `no_plots`. `irqsim run` and `irqsim merge` both write through here, so
/// they write the same files. Returns what was written, for the closing line.
fn write_outputs(
    out: &Path,
    results: &Results,
    no_plots: bool,
    after_data: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<Vec<String>> {
    let mut written = output::write_all(out, results)
        .with_context(|| format!("writing results under {}", shown(out)))?;
    after_data()?;
    if !no_plots {
        // The timeline is drawn when this run wrote one (not from an older run), from
        // the rows it wrote (not read back: a long timeline may pass the input limit).
        let timeline = written
            .iter()
            .any(|w| w == plot::timeline::FILE)
            .then(|| plot::timeline::rows_of(&results.timeline));
        let sources = [plot::Source {
            label: results.scenario.clone(),
            results,
        }];
        let plots = out.join(plot::DIR);
        let files = plot::write(&plots, &sources, timeline.as_deref())
            .with_context(|| format!("writing plots under {}", shown(&plots)))?;
        written.push(format!("{}/ ({} files)", plot::DIR, files.len()));
    }
    Ok(written)
}

/// What reading a results.json takes, in multiples of the file: its text, the JSON
/// tree parsed from it (serde_json's `Value`: a number or a short string takes a few
/// times its text) and the results read from the tree. An estimate, on the high side.
const RESULTS_READ_FACTOR: u64 = 4;

/// Read a saved results.json, from the command's `budget`.
fn load_results(path: &Path, budget: &ReadBudget) -> Result<Results, InputError> {
    let file = path.display().to_string();
    let refused = |source: std::io::Error| InputError::Read {
        file: file.clone(),
        source,
    };
    // Counted, and checked against memory, before a byte is read: the text, the JSON
    // tree parsed from it and the results take a few times the file (an estimate:
    // RESULTS_READ_FACTOR).
    let size = budget
        .reserve(path, irqsim::config::read_limit::MAX_RESULT_BYTES)
        .map_err(refused)?;
    if let Some((avail, source)) = irqsim::experiment::memory::available() {
        let need = irqsim::experiment::memory::PROCESS_BYTES
            .saturating_add(size.saturating_mul(RESULTS_READ_FACTOR));
        if need > avail {
            return Err(refused(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "is {} on disk; reading and parsing it would take about {} ({}x the \
                     file, with the process), more than the {} of memory available \
                     ({source}): nothing read",
                    irqsim::experiment::memory::bytes(size),
                    irqsim::experiment::memory::bytes(need),
                    RESULTS_READ_FACTOR,
                    irqsim::experiment::memory::bytes(avail),
                ),
            )));
        }
    }
    let text = budget
        .read_text(path, irqsim::config::read_limit::MAX_RESULT_BYTES)
        .map_err(|source| InputError::Read {
            file: file.clone(),
            source,
        })?;
    let results = scenario::parse_json::<Results>(&file, &text)?;
    // Its names become file names (plots/grid-<metric>-<variant>.svg): none may lead out
    // of the output directory.
    let problems = results.name_problems();
    if !problems.is_empty() {
        return Err(InputError::Invalid(
            problems
                .into_iter()
                .map(|problem| irqsim::config::error::FileProblem {
                    file: file.clone(),
                    problem,
                })
                .collect(),
        ));
    }
    Ok(results)
}

/// The timeline.csv beside `path` when `results` (read from `path`) was written with
/// it: results.json records the checksum of its timeline ([`output::timeline_checksum`]),
/// and a timeline.csv that is missing or has other bytes is another run's, so it is not
/// drawn (and a warning says why).
fn own_timeline(
    path: &Path,
    results: &Results,
    budget: &ReadBudget,
) -> Result<Option<Vec<plot::timeline::TimelineRow>>, InputError> {
    let tl = path.with_file_name(plot::timeline::FILE);
    let Some(sum) = &results.timeline_csv_fnv1a else {
        if tl.exists() {
            eprintln!(
                "warning: {} is not drawn: {} records no timeline, so it is another run's",
                shown(&tl),
                shown(path)
            );
        }
        return Ok(None);
    };
    let file = tl.display().to_string();
    let bytes = match budget.read_bytes(&tl, irqsim::config::read_limit::MAX_RESULT_BYTES, true) {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "warning: the timeline {} was written with is not drawn: {file}: {e}",
                shown(path)
            );
            return Ok(None);
        }
    };
    if output::timeline_checksum(&bytes) != *sum {
        eprintln!(
            "warning: {file} is not drawn: it is not the timeline {} was written with (its \
             checksum is {}, not {sum})",
            shown(path),
            output::timeline_checksum(&bytes)
        );
        return Ok(None);
    }
    let text = String::from_utf8(bytes).map_err(|e| InputError::Read {
        file: file.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })?;
    plot::timeline::parse(&file, &text).map(Some)
}

/// `irqsim plot` (one file) and `irqsim compare` (several).
fn plot_cmd(paths: &[PathBuf], compare: bool, opts: &RunOpts, budget: &ReadBudget) -> ExitCode {
    // Every results.json counted in the budget before any is read: files that add up to
    // more than it are refused, naming the one that goes past, with nothing read.
    for p in paths {
        if let Err(source) = budget.reserve(p, irqsim::config::read_limit::MAX_RESULT_BYTES) {
            return input_error(&InputError::Read {
                file: p.display().to_string(),
                source,
            });
        }
    }
    let mut sets = Vec::new();
    for p in paths {
        match load_results(p, budget) {
            Ok(r) => sets.push(r),
            Err(e) => return input_error(&e),
        }
    }
    let out = match (&opts.out, compare) {
        (Some(o), _) => o.clone(),
        (None, true) => Path::new("irqsim-out").join("compare"),
        (None, false) => match paths[0].parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        },
    };
    let timeline = if compare {
        None
    } else {
        match own_timeline(&paths[0], &sets[0], budget) {
            Ok(t) => t,
            Err(e) => return input_error(&e),
        }
    };
    let labels = plot::labels(paths, &sets);
    if compare && !opts.quiet {
        let named: Vec<(String, &Results)> = labels.iter().cloned().zip(&sets).collect();
        println!("{}", report::compare_table(&named));
    }
    let sources: Vec<plot::Source> = labels
        .into_iter()
        .zip(&sets)
        .map(|(label, results)| plot::Source { label, results })
        .collect();
    let dir = out.join(plot::DIR);
    let _lock = match lock_out(&out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match plot::write(&dir, &sources, timeline.as_deref()) {
        Ok(files) => {
            if !opts.quiet {
                println!("wrote {} in {}", files.join(", "), shown(&dir));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: writing plots under {}: {e:#}", shown(&dir));
            ExitCode::from(1)
        }
    }
}
