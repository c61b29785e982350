//! `irqsim run SCENARIO --trace FROM..TO`: a look inside one run of the sweep, written
//! beside its results (see [`irqsim::trace`] for what the files hold).

use crate::plot;
use anyhow::Context;
use irqsim::config::scenario::{Experiment, LoadUnit};
use irqsim::results::output::write_atomic;
use irqsim::sim::time::SimTime;
use irqsim::trace::{TraceOutput, TraceSpec};
use std::path::Path;

/// Options of a traced run.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TraceArgs {
    /// Record a window of simulated time of one run (e.g. `2s..2.005s`, `150ms..155ms`;
    /// units s, ms, us, ns) into DIR/trace.json (Chrome trace events: open it in
    /// https://ui.perfetto.dev or chrome://tracing), DIR/trace-window.json (the
    /// window's counters) and DIR/plots/trace.{png,svg}. The run traced is replication
    /// 0 of one load point, simulated again: its results are those of the sweep.
    #[arg(long, value_name = "FROM..TO", value_parser = parse_window)]
    pub trace: Option<(SimTime, SimTime)>,
    /// The load point to trace, in the scenario's `load.unit` as its `load` lists it:
    /// percent of line rate per flow (`percent`), frames/s per flow (`pps`), or
    /// transactions outstanding per flow (`outstanding`); required when the sweep has
    /// several.
    #[arg(long, value_name = "LOAD", requires = "trace")]
    pub trace_point: Option<f64>,
    /// The variant to trace; required when the scenario has several.
    #[arg(long, value_name = "NAME", requires = "trace")]
    pub trace_variant: Option<String>,
    /// Also write the frames entering and leaving the host in the window as pcap files,
    /// DIR/pcap/<nic>-in.pcap and <nic>-out.pcap (nanosecond time stamps; each frame
    /// carries its flow, sequence number and the tester's time stamp).
    #[arg(long, requires = "trace")]
    pub pcap: bool,
    /// Largest trace (trace.json plus the pcap files) to write [MB]; a window that
    /// would need more ends where the limit is reached, and the command says so.
    #[arg(long, value_name = "MB", default_value_t = 100.0, requires = "trace",
          value_parser = parse_limit_mb)]
    pub trace_limit_mb: f64,
    /// Draw flow arrows (arrival, interrupt, netisr, transmission) for the frames whose
    /// sequence number is a multiple of N (0: none).
    #[arg(long, value_name = "N", default_value_t = 16, requires = "trace")]
    pub trace_sample: u64,
}

/// Largest `--trace-limit-mb` [MB]: 1,000. The trace is held in memory until it is
/// written, so the limit bounds memory too (1e12 was taken).
pub const MAX_TRACE_LIMIT_MB: f64 = 1000.0;

/// Parse `--trace-limit-mb`: more than 0, at most [`MAX_TRACE_LIMIT_MB`].
fn parse_limit_mb(s: &str) -> Result<f64, String> {
    let mb: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of MB"))?;
    if !(mb.is_finite() && mb > 0.0 && mb <= MAX_TRACE_LIMIT_MB) {
        return Err(format!(
            "{s} MB: must be more than 0 and at most {MAX_TRACE_LIMIT_MB} MB (the trace is \
             held in memory until it is written)"
        ));
    }
    Ok(mb)
}

/// Parse `FROM..TO`.
fn parse_window(s: &str) -> Result<(SimTime, SimTime), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("`{s}`: expected FROM..TO, e.g. 2s..2.005s"))?;
    let (from, to) = (parse_time(a)?, parse_time(b)?);
    if to <= from {
        return Err(format!("`{s}`: the window must end after it starts"));
    }
    Ok((from, to))
}

/// Parse a time with its unit (`2s`, `1.5ms`, `20us`, `300ns`).
pub fn parse_time(s: &str) -> Result<SimTime, String> {
    let t = s.trim();
    let units = [("ns", 1e3), ("us", 1e6), ("ms", 1e9), ("s", 1e12)];
    let (num, ps) = units
        .iter()
        .find_map(|(u, ps)| t.strip_suffix(u).map(|n| (n, *ps)))
        .ok_or_else(|| format!("`{t}`: give a unit: s, ms, us or ns (e.g. 2.005s)"))?;
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{t}`: `{num}` is not a number"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("`{t}`: must be a time of at least 0"));
    }
    // Beyond u64 picoseconds (213 days) the conversion saturated: a window ending at
    // 1e9 s was reported as ending at 18446744.07 s.
    let ps_f = (v * ps).round();
    if ps_f >= u64::MAX as f64 {
        return Err(format!(
            "`{t}`: beyond the {:.0} s simulated time can hold (u64 picoseconds); a run \
             is at most {} s",
            u64::MAX as f64 / 1e12,
            irqsim::config::scenario::MAX_RUN_S
        ));
    }
    Ok(SimTime(ps_f as u64))
}

/// Which (variant, point) the options name, or why none.
pub fn select(exp: &Experiment, args: &TraceArgs) -> anyhow::Result<(usize, usize)> {
    let v = match &args.trace_variant {
        Some(name) => exp
            .variants
            .iter()
            .position(|v| &v.name == name)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--trace-variant: the scenario has no variant `{name}`; it has {}",
                    names(exp)
                )
            })?,
        None if exp.variants.len() == 1 => 0,
        None => anyhow::bail!(
            "--trace: the scenario has {} variants; choose one with --trace-variant ({})",
            exp.variants.len(),
            names(exp)
        ),
    };
    let points = &exp.variants[v].points;
    // Points are named in the scenario's own unit: its `load.unit`, per flow.
    let unit = irqsim::config::scenario::unit_name(exp.load_unit);
    let per_flow = match exp.load_unit {
        LoadUnit::Percent => " of line rate per flow",
        LoadUnit::Pps => " per flow",
        LoadUnit::Outstanding => " outstanding per flow",
    };
    let round = |x: f64, k: f64| (x * k).round() / k;
    let label = |p: &irqsim::config::scenario::LoadPoint| match exp.load_unit {
        LoadUnit::Percent => format!(
            "{} ({} frames/s)",
            round(p.load, 1e4),
            round(p.offered_pps(), 1e3)
        ),
        LoadUnit::Pps => format!("{} ({} %)", round(p.load, 1e3), round(p.load_pct, 1e4)),
        LoadUnit::Outstanding => format!("{}", p.load),
    };
    let all = points.iter().map(label).collect::<Vec<_>>().join(", ");
    let p = match args.trace_point {
        Some(x) => points
            .iter()
            .position(|p| (p.load - x).abs() <= 1e-6 * p.load.abs().max(1.0))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--trace-point: the sweep has no load point {x} {unit}{per_flow} (the \
                     scenario's `load.unit`); its points are {all}"
                )
            })?,
        None if points.len() == 1 => 0,
        None => anyhow::bail!(
            "--trace: the sweep has {} load points; choose one with --trace-point, in {unit}{per_flow} \
             (the scenario's `load.unit`): {all}",
            points.len()
        ),
    };
    let (_, to) = args.trace.expect("a traced run");
    // The run's end as the run computes it.
    let run_end = SimTime::from_secs_f64(exp.duration_s) + SimTime::from_secs_f64(exp.drain_s);
    if to > run_end {
        anyhow::bail!(
            "--trace: the window ends at {} s, after the run ({} s of sending and {} s of drain)",
            to.as_secs_f64(),
            exp.duration_s,
            exp.drain_s
        );
    }
    Ok((v, p))
}

fn names(exp: &Experiment) -> String {
    exp.variants
        .iter()
        .map(|v| v.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The spec the options ask for.
pub fn spec(args: &TraceArgs) -> anyhow::Result<TraceSpec> {
    let (from, to) = args.trace.expect("a traced run");
    let mb = args.trace_limit_mb;
    if !(mb.is_finite() && mb > 0.0) {
        anyhow::bail!("--trace-limit-mb: must be more than 0, got {mb}");
    }
    Ok(TraceSpec {
        from,
        to,
        pcap: args.pcap,
        limit_bytes: (mb * 1e6) as u64,
        sample_every: args.trace_sample,
    })
}

/// Simulate the traced run and write its files into `out`; returns what was written
/// and a line saying what the window holds.
pub fn run(
    exp: &Experiment,
    args: &TraceArgs,
    out: &Path,
    no_plots: bool,
) -> anyhow::Result<(Vec<String>, String)> {
    let (v, p) = select(exp, args)?;
    let spec = spec(args)?;
    let (_, t) = irqsim::experiment::runner::trace(exp, v, p, spec.clone())
        .map_err(|e| anyhow::anyhow!("{}: {e}", exp.path))?;
    let mut written = write(out, &t, no_plots, exp, v, p)?;
    let w = &t.window;
    let frames: u64 = w.flows.iter().map(|f| f.frames_in).sum();
    let drops: u64 = w.drops.values().sum();
    let mut line = format!(
        "trace of `{}` at {}: {:.6}..{:.6} s, {} CPU slices, {} interrupts, {frames} frames in, {drops} dropped",
        exp.variants[v].name,
        exp.variants[v].points[p].label(),
        w.from_s,
        w.to_s,
        w.slices,
        w.interrupts,
    );
    if let Some(at) = t.truncated_at {
        line.push_str(&format!(
            "\nwarning: the trace reached --trace-limit-mb ({} MB) at {:.6} s, before the window's end at {:.6} s: \
             it stops there (ask for a shorter window or a larger limit)",
            args.trace_limit_mb,
            at.as_secs_f64(),
            spec.to.as_secs_f64()
        ));
    }
    written.sort();
    Ok((written, line))
}

fn write(
    out: &Path,
    t: &TraceOutput,
    no_plots: bool,
    exp: &Experiment,
    v: usize,
    p: usize,
) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", crate::shown(out)))?;
    let mut written = Vec::new();
    let path = out.join("trace.json");
    write_atomic(&path, &t.json).with_context(|| format!("writing {}", crate::shown(&path)))?;
    written.push("trace.json".to_string());
    let path = out.join("trace-window.json");
    let json = serde_json::to_string_pretty(&t.window)? + "\n";
    write_atomic(&path, json.as_bytes())
        .with_context(|| format!("writing {}", crate::shown(&path)))?;
    written.push("trace-window.json".to_string());
    if !t.pcaps.is_empty() {
        let dir = out.join("pcap");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("creating {}", crate::shown(&dir)))?;
        for (name, bytes) in &t.pcaps {
            let path = dir.join(name);
            write_atomic(&path, bytes)
                .with_context(|| format!("writing {}", crate::shown(&path)))?;
            written.push(format!("pcap/{name}"));
        }
    }
    if !no_plots {
        let title = format!(
            "{} — {} at {}",
            exp.name,
            exp.variants[v].name,
            exp.variants[v].points[p].label()
        );
        let dir = out.join(plot::DIR);
        for f in plot::trace::write(&dir, &t.json, &title)? {
            written.push(format!("{}/{f}", plot::DIR));
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_with_units() {
        assert_eq!(
            parse_window("2s..2.005s"),
            Ok((SimTime(2_000_000_000_000), SimTime(2_005_000_000_000)))
        );
        assert_eq!(
            parse_window("150ms..150500us"),
            Ok((SimTime(150_000_000_000), SimTime(150_500_000_000)))
        );
        assert!(parse_window("2..3").unwrap_err().contains("give a unit"));
        assert!(parse_window("3s..2s").unwrap_err().contains("end after"));
        assert!(parse_window("2s").unwrap_err().contains("FROM..TO"));
        // u64 picoseconds end at 18,446,744.07 s: 1e9 s is refused, not saturated.
        assert!(
            parse_window("0s..1e9s")
                .unwrap_err()
                .contains("beyond the 18446744 s")
        );
        assert!(parse_time("18446744s").is_ok());
    }
}
