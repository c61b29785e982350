//! Sharded runs: `irqsim run SCENARIO --shard K/N` writes one shard's runs as a partial
//! result, and `irqsim merge DIR...` checks the partial results and writes what a whole
//! run writes.

use super::*;

/// `irqsim run SCENARIO --shard K/N`: simulate the shard's runs (saving each to the
/// checkpoint, so `--resume` works as for a whole run) and write them as a partial
/// result into `out` -- unless `out` already holds this shard, finished
/// ([`shard::finished`]): then say so and stop.
pub(super) fn run_shard(
    exp: &Experiment,
    opts: &RunOpts,
    shard: Shard,
    out: &Path,
    lock: OutLock,
    budget: &ReadBudget,
) -> anyhow::Result<()> {
    let manifest = shard::Manifest::new(exp, shard);
    if shard::finished(out, &manifest, budget) {
        eprintln!(
            "irqsim: shard {shard} is already finished in {} (its {} is this scenario's, \
             seed's and irqsim build's, with all its runs): nothing simulated, nothing \
             written; remove {} to run it again",
            crate::shown(out),
            shard::MANIFEST,
            crate::shown(&out.join(shard::MANIFEST))
        );
        return Ok(());
    }
    let runs = manifest.runs.len();
    if !opts.quiet {
        let reps = exp.replications as usize;
        let packets: f64 = manifest
            .runs
            .iter()
            .map(|&k| manifest.frame.points[k / reps].offered_pps * exp.duration_s)
            .sum::<f64>()
            + 0.0; // (an empty sum is -0.0)
        let (threads, note) = irqsim::sim::limits::threads(opts.threads.unwrap_or(0), runs);
        if let Some(note) = note {
            eprintln!("irqsim: {note}");
        }
        eprintln!(
            "irqsim: {} -- shard {shard}: {runs} of {} runs ({} variant(s) x {} points x {} \
             replication(s)), {} s each",
            exp.path,
            manifest.total_runs,
            exp.variants.len(),
            exp.npoints(),
            exp.replications,
            exp.duration_s
        );
        if runs == 0 {
            eprintln!(
                "irqsim: shard {shard} holds no run (more shards than runs); it is still needed by `irqsim merge`"
            );
        }
        let flows = mean_flows(exp);
        let cpu_s =
            packets / PACKETS_PER_S_PER_THREAD + runs as f64 * (RUN_FIXED_S + flows * FLOW_FIXED_S);
        eprintln!(
            "estimated work: {} packets; expected {} wall on {threads} thread(s)",
            si(packets).trim_end(),
            duration(cpu_s / threads as f64)
        );
    }
    // Refuse, before any work, a partial there that irqsim would write over but did
    // not write, and a checkpoint that cannot be trusted.
    shard::check_dir(out, &manifest, budget)
        .with_context(|| format!("writing the partial result under {}", crate::shown(out)))?;
    let checkpoint =
        irqsim::experiment::checkpoint::Checkpoint::open(out, exp, opts.resume, budget)
            .with_context(|| format!("opening the checkpoint under {}", crate::shown(out)))?;
    let t0 = Instant::now();
    let bar = progress_bar(runs, true, opts.quiet);
    let stop = stop_on_ctrl_c();
    let (_, threads, _) = runs_and_threads(exp, opts, Some(shard));
    let outcome = runner::run_selected(
        exp,
        threads,
        &|| bar.inc(1),
        Some(&checkpoint),
        Some(&stop),
        &manifest.runs,
    );
    bar.finish_and_clear();
    let saved = match outcome {
        Ok(r) => r,
        Err(i @ runner::RunError::Interrupted { .. }) => {
            super::exit_interrupted(&format!("shard {shard} "), &i, out, lock)
        }
        Err(e) => anyhow::bail!("{}: {e}", exp.path),
    };
    shard::write_partial(out, &manifest, &saved, budget)
        .with_context(|| format!("writing the partial result under {}", crate::shown(out)))?;
    checkpoint
        .finish()
        .with_context(|| format!("removing the checkpoint under {}", crate::shown(out)))?;
    if !opts.quiet {
        println!(
            "wrote shard {shard} ({runs} of {} runs: {}, {}/) in {} in {:.2} s wall; \
             `irqsim merge` the {} shard directories to get the results",
            manifest.total_runs,
            shard::MANIFEST,
            shard::RUNS_DIR,
            crate::shown(out),
            t0.elapsed().as_secs_f64(),
            shard.n,
        );
    }
    Ok(())
}

/// `irqsim merge DIR...`: check the partial results, assemble them and write what a
/// whole run writes.
pub(super) fn merge_cmd(dirs: &[PathBuf], opts: &RunOpts, budget: &ReadBudget) -> ExitCode {
    // Options of a run that a merge cannot honour are refused, not ignored.
    for (given, name) in [
        (opts.seed.is_some(), "--seed"),
        (opts.threads.is_some(), "--threads"),
        (opts.resume, "--resume"),
    ] {
        if given {
            eprintln!(
                "error: {name} does not apply to `irqsim merge` (the shards were run with their own)"
            );
            return ExitCode::from(2);
        }
    }
    let merged = match shard::merge(dirs, budget) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: cannot merge");
            eprintln!("  {e}");
            return ExitCode::from(2);
        }
    };
    let results = &merged.results;
    // The scenario's name passed irqsim::config::names::check in shard::read_manifest.
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| Path::new("irqsim-out").join(&results.scenario));
    let _lock = match lock_out(&out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match write_outputs(&out, results, opts.no_plots, || Ok(())) {
        Ok(written) => {
            if !opts.quiet {
                println!("{}", report::table(results));
                println!(
                    "wrote {} in {}; merged {} shards, {} runs",
                    written.join(", "),
                    crate::shown(&out),
                    merged.shards,
                    merged.runs
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
