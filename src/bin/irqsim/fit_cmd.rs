//! `irqsim fit`: the command around [`irqsim::experiment::fit`]: options, the printed tables, the
//! files and the plots.

use crate::plot;
use anyhow::Context;
use irqsim::config::scenario::DiskFiles;
use irqsim::experiment::fit::{FitError, FitOptions, FitReport, Fitter, ParamSpec, Weights};
use irqsim::results::output::{self, write_atomic};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Options of `irqsim fit`.
#[derive(clap::Args)]
pub struct FitArgs {
    /// Scenario file (JSON) naming a measured table (`measured`) and one variant.
    scenario: PathBuf,
    /// A parameter to fit: PATH=LO..HI or PATH=LO..HI@START, PATH a numeric field of the
    /// model as in overrides (`kernel.netisr_per_packet.ns`, `irq_lines.irq11.dispatch.ns`,
    /// `nics.dc0.driver.isr_entry.ns`), bounds and start in the field's units. START
    /// defaults to the model's value. Repeat for several.
    #[arg(long = "param", value_name = "PATH=LO..HI[@START]", required = true)]
    params: Vec<ParamSpec>,
    /// Weight of the squared loss residual (percentage points) per load point.
    #[arg(long, default_value_t = 1.0, value_name = "W")]
    weight_loss: f64,
    /// Weight of the squared latency residual (100 ln of the ratio, about %) per load
    /// point.
    #[arg(long, default_value_t = 1.0, value_name = "W")]
    weight_latency: f64,
    /// Sending time per point [s], replacing the scenario's: shorter is faster.
    #[arg(long, value_name = "S")]
    duration: Option<f64>,
    /// Points of the global Halton sample before the descents [default: 12 per
    /// parameter].
    #[arg(long, value_name = "N")]
    samples: Option<usize>,
    /// Nelder-Mead descents from the best points of the start and the sample.
    #[arg(long, default_value_t = 3, value_name = "N")]
    descents: usize,
    /// Restarts in a row (from the next-best sample points, then from the best with a
    /// fresh simplex) that improve the objective by no more than its resolution before
    /// the search stops.
    #[arg(long, default_value_t = 3, value_name = "N")]
    restarts: usize,
    /// Sweeps simulated after which the search starts no further descent (the
    /// uncertainty and the profiles come on top) [default: 200 per parameter].
    #[arg(long, value_name = "N")]
    max_simulations: Option<usize>,
    /// Points of each parameter's drawn objective profile over its bounds (0: none; the
    /// profile interval is searched anyway); at most 200.
    #[arg(long, default_value_t = 9, value_name = "N")]
    profile_points: usize,
    /// Nelder-Mead iterations re-optimising the other parameters at each profile point.
    #[arg(long, default_value_t = 8, value_name = "N")]
    profile_iters: u64,
    /// Most lattice points in a box of the neighbourhood scan: every point within the
    /// largest half-width (in steps of each parameter) whose box holds at most N is
    /// simulated around the optimum, and over the other parameters at each profile
    /// point (below 3^parameters: no scan).
    #[arg(long, default_value_t = 400, value_name = "N")]
    scan_points: usize,
}

/// Run the fit and report it.
pub fn fit(
    files: &DiskFiles,
    args: &FitArgs,
    out: &Option<PathBuf>,
    seed: Option<u64>,
    threads: Option<usize>,
    quiet: bool,
    no_plots: bool,
) -> ExitCode {
    for (name, w) in [
        ("--weight-loss", args.weight_loss),
        ("--weight-latency", args.weight_latency),
    ] {
        if !(w.is_finite() && w >= 0.0) {
            eprintln!("error: {name} {w}: a weight is a finite number >= 0");
            return ExitCode::from(2);
        }
    }
    if args.profile_points > irqsim::sim::limits::MAX_PROFILE_POINTS {
        eprintln!(
            "error: --profile-points {}: at most {} points per profile (each re-optimises the \
             other parameters; a plot shows no more)",
            args.profile_points,
            irqsim::sim::limits::MAX_PROFILE_POINTS
        );
        return ExitCode::from(2);
    }
    if args.scan_points > irqsim::sim::limits::MAX_SCAN_POINTS {
        eprintln!(
            "error: --scan-points {}: at most {} lattice points per box (each is a simulated \
             sweep)",
            args.scan_points,
            irqsim::sim::limits::MAX_SCAN_POINTS
        );
        return ExitCode::from(2);
    }
    if args.weight_loss == 0.0 && args.weight_latency == 0.0 {
        eprintln!("error: --weight-loss and --weight-latency are both 0: nothing to fit");
        return ExitCode::from(2);
    }
    if let Some(d) = args.duration
        && !(d.is_finite() && d > 0.0)
    {
        eprintln!("error: --duration {d}: a sending time is a number of seconds > 0");
        return ExitCode::from(2);
    }
    let mut opts = FitOptions::new(args.params.clone());
    opts.weights = Weights {
        loss: args.weight_loss,
        latency: args.weight_latency,
    };
    opts.duration_s = args.duration;
    opts.seed = seed;
    opts.threads = threads.unwrap_or(0);
    if let (Some(note), false) = (
        irqsim::sim::limits::threads(opts.threads, usize::MAX).1,
        quiet,
    ) {
        eprintln!("irqsim: {note}");
    }
    if let Some(n) = args.samples {
        opts.samples = n;
    }
    opts.descents = args.descents;
    opts.restarts = args.restarts;
    opts.profile_points = args.profile_points;
    opts.profile_iters = args.profile_iters;
    opts.scan_points = args.scan_points;
    if let Some(n) = args.max_simulations {
        opts.max_simulations = n;
    }
    let fitter = match Fitter::new(&args.scenario, files, opts) {
        Ok(f) => f,
        Err(FitError::Input(e)) => return crate::input_error(&e),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let stem = args
        .scenario
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    let out = out
        .clone()
        .unwrap_or_else(|| Path::new("irqsim-out").join(format!("{stem}-fit")));
    let _lock = match crate::lock_out(&out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if !quiet {
        eprintln!(
            "irqsim fit: {} -- {} parameter(s); each evaluation simulates the whole sweep",
            crate::shown(&args.scenario),
            fitter.dim()
        );
    }
    let t0 = Instant::now();
    let rep = match fitter.fit() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    match write(&fitter, &rep, &out, no_plots) {
        Ok(files) => {
            if !quiet {
                println!("{}", table(&rep));
                for w in fitter.overridden_paths() {
                    println!(
                        "note: the scenario's overrides also set `{w}`; with fitted-model.json, \
                         remove it from the overrides"
                    );
                }
                println!(
                    "wrote {} in {}; {} simulations in {wall:.1} s wall",
                    files.join(", "),
                    crate::shown(&out),
                    rep.simulations
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

fn write(f: &Fitter, rep: &FitReport, out: &Path, no_plots: bool) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", crate::shown(out)))?;
    let mut written = Vec::new();
    let mut put = |name: &str, bytes: Vec<u8>| -> anyhow::Result<()> {
        let p = out.join(name);
        write_atomic(&p, &bytes).with_context(|| format!("writing {}", crate::shown(&p)))?;
        written.push(name.to_string());
        Ok(())
    };
    put(
        "fit.json",
        (serde_json::to_string_pretty(rep)? + "\n").into_bytes(),
    )?;
    let model = f.fitted_model(rep)?;
    put(
        "fitted-model.json",
        (serde_json::to_string_pretty(&model)? + "\n").into_bytes(),
    )?;
    put("residuals.csv", residuals_csv(rep)?)?;
    let start: Vec<f64> = rep.params.iter().map(|p| p.start).collect();
    let fitted: Vec<f64> = rep.params.iter().map(|p| p.value).collect();
    let (s, e) = (f.evaluate(&start)?, f.evaluate(&fitted)?);
    output::write_all(&out.join("start"), &s.results)?;
    output::write_all(&out.join("fitted"), &e.results)?;
    written.push("start/".into());
    written.push("fitted/".into());
    if !no_plots {
        let dir = out.join(plot::DIR);
        let mut n = plot::fit::write(&dir, rep)?.len();
        let sources = [
            plot::Source {
                label: "start".into(),
                results: &s.results,
            },
            plot::Source {
                label: "fitted".into(),
                results: &e.results,
            },
        ];
        n += plot::write(&dir, &sources, None)?.len();
        written.push(format!("{}/ ({n} files)", plot::DIR));
    }
    Ok(written)
}

fn residuals_csv(rep: &FitReport) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record([
        "load_pct",
        "measured_loss_pct",
        "model_loss_pct",
        "start_loss_pct",
        "fitted_loss_pct",
        "measured_latency_us",
        "model_latency_us",
        "start_latency_us",
        "fitted_latency_us",
        "fitted_loss_residual",
        "fitted_latency_residual",
    ])?;
    for ((m, s), p) in rep
        .model_points
        .iter()
        .zip(&rep.start_points)
        .zip(&rep.points)
    {
        w.write_record([
            p.load_pct.to_string(),
            p.measured_loss_pct.to_string(),
            m.loss_pct.to_string(),
            s.loss_pct.to_string(),
            p.loss_pct.to_string(),
            p.measured_latency_us.to_string(),
            m.latency_us.to_string(),
            s.latency_us.to_string(),
            p.latency_us.to_string(),
            p.loss_residual.to_string(),
            p.latency_residual.map_or(String::new(), |r| r.to_string()),
        ])?;
    }
    Ok(w.into_inner()?)
}

/// `v` with four significant digits (objectives span from 1e-3 to 1e6).
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

fn table(rep: &FitReport) -> String {
    let mut s = format!(
        "fit of {} to {} ({} s per point, seed {}): objective {} at the start -> {} \
         fitted ({} with the model's own values; resolution {}, {} degrees of freedom)\n\n",
        rep.scenario,
        rep.measured,
        rep.duration_s,
        rep.seed,
        sig(rep.start_objective),
        sig(rep.objective),
        sig(rep.model_objective),
        sig(rep.resolution),
        rep.dof
    );
    s += &format!(
        "{:<34} {:>10} {:>10} {:>10} {:>23} {:>23}\n",
        "parameter", "model", "start", "fitted", "95 % profile interval", "95 % linearised"
    );
    for p in &rep.params {
        let ci = |c: Option<[f64; 2]>| match c {
            Some([a, b]) => format!("{a:.1} .. {b:.1}"),
            None if !p.identifiable => "not identifiable".into(),
            None => "-".into(),
        };
        // A resolution-limited interval is marked, and said in the warnings.
        let profile = match p.resolution_limited {
            Some(_) => format!("~ {}", ci(p.profile_ci95)),
            None => ci(p.profile_ci95),
        };
        s += &format!(
            "{:<34} {:>10.1} {:>10.1} {:>10.1} {:>23} {:>23}\n",
            p.path,
            p.model_value,
            p.start,
            p.value,
            profile,
            ci(p.ci95)
        );
    }
    if rep.params.iter().any(|p| p.resolution_limited.is_some()) {
        s += "~ resolution-limited: the objective cannot resolve the interval's ends (see the warnings)\n";
    }
    let row = |c: [&str; 9]| {
        format!(
            "{:>6} | {:>8} {:>8} {:>8} {:>8} | {:>9} {:>9} {:>9} {:>9}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        )
    };
    s += "\n";
    s += &row(["load %", "loss %", "", "", "", "avg us", "", "", ""]);
    s += &row([
        "", "measured", "model", "start", "fitted", "measured", "model", "start", "fitted",
    ]);
    for ((m, a), p) in rep
        .model_points
        .iter()
        .zip(&rep.start_points)
        .zip(&rep.points)
    {
        let (l, t) = (|v: f64| format!("{v:.2}"), |v: f64| format!("{v:.1}"));
        s += &row([
            &format!("{:.1}", p.load_pct),
            &l(p.measured_loss_pct),
            &l(m.loss_pct),
            &l(a.loss_pct),
            &l(p.loss_pct),
            &t(p.measured_latency_us),
            &t(m.latency_us),
            &t(a.latency_us),
            &t(p.latency_us),
        ]);
    }
    for n in &rep.notes {
        s += &format!("\nnote: {n}");
    }
    for w in &rep.warnings {
        s += &format!("\nwarning: {w}");
    }
    s
}
