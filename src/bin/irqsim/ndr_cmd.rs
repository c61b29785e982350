//! `irqsim ndr`: the command around [`irqsim::experiment::ndr`]: options, the printed
//! table, `ndr.json`, `ndr.txt` (the lines CSIT prints) and the plot.

use crate::plot;
use anyhow::Context;
use irqsim::config::scenario::DiskFiles;
use irqsim::experiment::ndr::{self, NdrError, NdrOptions, NdrReport};
use irqsim::results::output::write_atomic;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Options of `irqsim ndr`.
#[derive(clap::Args)]
pub struct NdrArgs {
    /// Scenario file (JSON): its flows, in the proportions of its first load point,
    /// and its variants; `duration_s` is the final trials' length.
    scenario: PathBuf,
    /// Frame sizes to search [bytes, FCS included], comma-separated [default: RFC
    /// 2544's 64,128,256,512,1024,1280,1518].
    #[arg(long, value_name = "B,B,...", value_delimiter = ',')]
    frame_bytes: Vec<u32>,
    /// PDR's loss goal [% of the frames sent].
    #[arg(long, default_value_t = 0.5, value_name = "PCT")]
    pdr_loss: f64,
    /// Final relative width of the interval between the bounds [%].
    #[arg(long, default_value_t = 0.5, value_name = "PCT")]
    resolution: f64,
}

/// Run the searches and report them.
pub fn ndr(
    files: &DiskFiles,
    args: &NdrArgs,
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
    let mut opts = NdrOptions {
        pdr_loss_pct: args.pdr_loss,
        resolution_pct: args.resolution,
        threads: threads.unwrap_or(0),
        ..NdrOptions::default()
    };
    if !args.frame_bytes.is_empty() {
        opts.frame_bytes = args.frame_bytes.clone();
    }
    if let Err(e) = ndr::check(&exp, &opts) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let out = out
        .clone()
        .unwrap_or_else(|| Path::new("irqsim-out").join(format!("{}-ndr", exp.name)));
    let _lock = match crate::lock_out(&out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if !quiet {
        eprintln!(
            "irqsim ndr: {} -- {} variant(s) x {} frame size(s), NDR and PDR ({} % loss), \
             resolution {} %",
            crate::shown(&args.scenario),
            exp.variants.len(),
            opts.frame_bytes.len(),
            opts.pdr_loss_pct,
            opts.resolution_pct
        );
    }
    let t0 = Instant::now();
    let rep = match ndr::search(&exp, &opts) {
        Ok(r) => r,
        Err(e @ NdrError::Refused { .. }) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    match write(&rep, &out, no_plots) {
        Ok(files) => {
            if !quiet {
                print!("{}", table(&rep));
                let trials: usize = rep.results.iter().map(|r| r.trials.len()).sum();
                println!(
                    "wrote {} in {}; {trials} trials in {wall:.1} s wall",
                    files.join(", "),
                    crate::shown(&out)
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

/// The printed table: a row per variant and frame size.
pub fn table(rep: &NdrReport) -> String {
    let w = rep
        .results
        .iter()
        .map(|r| r.variant.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let mut s = format!(
        "{:<w$} {:>6} {:>12} {:>8} {:>12} {:>8} {:>7}\n",
        "variant", "frame", "NDR pps", "NDR %", "PDR pps", "PDR %", "trials"
    );
    for r in &rep.results {
        s.push_str(&format!(
            "{:<w$} {:>6} {:>12.0} {:>8.2} {:>12.0} {:>8.2} {:>7}\n",
            r.variant,
            r.frame_bytes,
            r.ndr_pps,
            r.ndr_pct,
            r.pdr_pps,
            r.pdr_pct,
            r.trials.len()
        ));
    }
    s.push_str(&format!(
        "NDR: no loss; PDR: loss at most {} %; %: of the rate at which the busiest input port \
         carries its line rate; trials of {} s\n",
        rep.pdr_loss_pct,
        rep.phase_durations_s
            .iter()
            .map(|d| format!("{d}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s
}

fn write(rep: &NdrReport, out: &Path, no_plots: bool) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", crate::shown(out)))?;
    let mut written = Vec::new();
    for (name, bytes) in [
        (
            "ndr.json",
            (serde_json::to_string_pretty(rep)? + "\n").into_bytes(),
        ),
        ("ndr.txt", ndr::csit_text(rep).into_bytes()),
    ] {
        let p = out.join(name);
        write_atomic(&p, &bytes).with_context(|| format!("writing {}", crate::shown(&p)))?;
        written.push(name.to_string());
    }
    if !no_plots {
        let n = plot::ndr::write(&out.join(plot::DIR), rep)?.len();
        written.push(format!("{}/ ({n} files)", plot::DIR));
    }
    Ok(written)
}
