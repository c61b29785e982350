//! The expand stage's points: the load values a scenario asks for, and each variant's
//! load points against its model (line rates, frames per run).

use super::*;

/// The load points of one variant: each flow's rate from its input NIC's line rate in
/// `model`, with the checks that depend on the model (NICs named by the flows, rates
/// above line rate).
pub(super) fn variant_points(
    sc: &ScenarioFile,
    flows: &[FlowConfig],
    model: &ModelConfig,
    mfile: &str,
    values: &[f64],
    p: &mut Problems,
) -> Vec<LoadPoint> {
    if flows.is_empty() && model.sender.is_none() {
        p.push(
            "workload.flows",
            "at least one flow is required (or a `sender` in the model)",
        );
    }
    for (i, f) in flows.iter().enumerate() {
        p.at(format!("workload.flows[{i}]"), |p| {
            if model.nic_index(&f.from).is_none() {
                p.push("from", format!("no NIC named `{}` in {mfile}", f.from));
            }
            if model.nic_index(&f.to).is_none() {
                p.push("to", format!("no NIC named `{}` in {mfile}", f.to));
            }
        });
    }
    // Each flow's line rate in frames/s, where its NIC and frame size are valid.
    let line_fps: Vec<Option<f64>> = flows
        .iter()
        .map(|f| {
            let nic = model.nics.get(model.nic_index(&f.from)?)?;
            let mut fp = Problems::new();
            f.frame_bytes.validate(&mut fp);
            let (lo, hi) = crate::model::nic::LINE_RATE_BPS_RANGE;
            ((lo..=hi).contains(&nic.line_rate_bps) && fp.is_empty())
                .then(|| Link::new(nic.line_rate_bps).line_rate_fps(f.frame_bytes.mean_bytes()))
        })
        .collect();
    // Per flow, the points at which it would send no frame in the run: (point, rate).
    let mut silent: Vec<Vec<(usize, f64)>> = vec![Vec::new(); flows.len()];
    // Per flow, the points above its line rate: (point, value, percent of line rate).
    let mut over: Vec<Vec<(usize, f64, f64)>> = vec![Vec::new(); flows.len()];
    // Input ports whose flows together exceed its line rate, reported once each.
    let mut shared_over: Vec<String> = Vec::new();
    let mut points = Vec::new();
    for (j, v) in values.iter().enumerate() {
        let mut rates = Vec::new();
        let mut shares: Vec<(&FlowConfig, f64)> = Vec::new();
        let mut pct0 = None;
        for (i, (f, fps)) in flows.iter().zip(&line_fps).enumerate() {
            let Some(fps) = *fps else { continue };
            let (rate, pct) = match (f.rate_pps, sc.load.unit) {
                (Some(r), _) => (r, r / fps * 100.0),
                (None, LoadUnit::Percent) => (v / 100.0 * fps, *v),
                (None, LoadUnit::Pps) => (*v, v / fps * 100.0),
                (None, LoadUnit::Outstanding) => (v.round().max(1.0), 0.0),
            };
            if pct > 100.0 + 1e-9 && !sc.allow_overload {
                if f.rate_pps.is_some() {
                    // The flow's own rate, the same at every point: said once, at it.
                    if j == 0 {
                        p.push(
                            &format!("workload.flows[{i}].rate_pps"),
                            format!(
                                "{rate} frames/s is {pct:.1} % of the line rate of flow `{}` ({fps:.1} frames/s): above 100 %",
                                f.display_name()
                            ),
                        );
                    }
                } else {
                    over[i].push((j, *v, pct));
                }
            }
            // (Only with a valid duration: an invalid one is reported by itself.)
            if f.arrivals != crate::model::traffic::Arrivals::ClosedLoop
                && (1e-9..=MAX_RUN_S).contains(&sc.duration_s)
                && rate.is_finite()
                && rate > 0.0
                && frames_in_run(rate, sc.duration_s) < 1.0
            {
                silent[i].push((j, rate));
            }
            if f.rate_pps.is_none() && pct0.is_none() {
                pct0 = Some(pct);
            }
            rates.push(rate);
            shares.push((f, pct));
        }
        // Flows into the same NIC share its one input wire: together they may not offer
        // more than its line rate either.
        for (k, (f, _)) in shares.iter().enumerate() {
            if shares[..k].iter().any(|(g, _)| g.from == f.from) {
                continue;
            }
            let same: Vec<&(&FlowConfig, f64)> =
                shares.iter().filter(|(g, _)| g.from == f.from).collect();
            let sum: f64 = same.iter().map(|(_, pct)| pct).sum();
            // Said once per input port, at its first point above the line, and only
            // where no flow of it is above its own line (reported above).
            if same.len() > 1
                && sum > 100.0 + 1e-9
                && !sc.allow_overload
                && !shared_over.contains(&f.from)
                && same.iter().all(|(_, pct)| *pct <= 100.0 + 1e-9)
            {
                shared_over.push(f.from.clone());
                let names: Vec<String> = same
                    .iter()
                    .map(|(g, _)| format!("`{}`", g.display_name()))
                    .collect();
                p.push(
                    &load_field(&sc.load, j),
                    format!(
                        "flows {} into `{}` together offer {sum:.1} % of its line rate: above 100 %",
                        names.join(", "),
                        f.from
                    ),
                );
            }
        }
        points.push(LoadPoint {
            load: *v,
            load_pct: pct0.unwrap_or(0.0),
            outstanding: (sc.load.unit == LoadUnit::Outstanding).then(|| v.round().max(1.0)),
            rates_pps: rates,
        });
    }
    for ((f, fps), over) in flows.iter().zip(&line_fps).zip(&over) {
        if let (Some(fps), Some(&(j, v, pct))) = (fps, over.first()) {
            // The unit hint only when every point of the sweep would fit as frames/s.
            let as_pps = values.iter().all(|&x| x <= *fps);
            p.push(
                &load_field(&sc.load, j),
                over_line_rate(sc.load.unit, f, *fps, over, v, pct, as_pps),
            );
        }
    }
    for (i, (f, at)) in flows.iter().zip(&silent).enumerate() {
        let Some(&(j, rate)) = at.first() else {
            continue;
        };
        let field = if f
            .arrivals
            .capture()
            .is_some_and(|c| c.timing == crate::model::capture::CaptureTiming::AsCaptured)
        {
            format!("workload.flows[{i}].arrivals.pcap")
        } else if f.rate_pps.is_some() {
            format!("workload.flows[{i}].rate_pps")
        } else if sc.load.points.is_some() {
            format!("load.points[{j}]")
        } else {
            "load.from".into()
        };
        let how = if f.arrivals == crate::model::traffic::Arrivals::Constant {
            "a constant flow sends floor(rate x duration_s) frames"
        } else if f.arrivals.capture().is_some() {
            "a replayed capture sends about rate x duration_s frames"
        } else {
            "a Poisson flow sends rate x duration_s frames on average"
        };
        // Values that read as percentages in a pps scenario are most likely a unit slip.
        let unit_hint = if sc.load.unit == LoadUnit::Pps && values.iter().all(|v| *v <= 100.0) {
            "; `load.unit` is `pps` (frames/s per flow): for % of line rate write \
             \"unit\": \"percent\""
        } else {
            ""
        };
        p.push(
            &field,
            format!(
                "flow `{}` sends no frame in the run at {} of the {} load points (from {} {}): \
                 {} frames/s for {} s is {} frames ({how}): raise the load or `duration_s`\
                 {unit_hint}",
                f.display_name(),
                at.len(),
                values.len(),
                values[j],
                unit_name(sc.load.unit),
                sig4(rate),
                sc.duration_s,
                sig4(rate * sc.duration_s),
            ),
        );
    }
    points
}

/// `v` to 4 significant digits, without an exponent in the common range (`0.1`,
/// `1.488e-7`).
pub(super) fn sig4(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if (-4..6).contains(&mag) {
        let d = (3 - mag).max(0) as usize;
        let t = format!("{v:.d$}");
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    } else {
        format!("{v:.3e}")
    }
}

/// Frames a flow of `rate` frames/s sends in `duration_s` (the constant source's
/// count before its floor, with its tolerance for the rounding of the product).
pub(super) fn frames_in_run(rate: f64, duration_s: f64) -> f64 {
    rate * duration_s + 1e-6
}

/// One problem for all the points above flow `f`'s line rate (`fps` frames/s at 100 %),
/// the first (`v`, `pct`) named, with a hint when the sweep's points, in percent, would
/// all fit as frames/s (`as_pps`: a `load.unit` left at its default).
pub(super) fn over_line_rate(
    unit: LoadUnit,
    f: &FlowConfig,
    fps: f64,
    over: &[(usize, f64, f64)],
    v: f64,
    pct: f64,
    as_pps: bool,
) -> String {
    let u = unit_name(unit);
    let mut m = if over.len() == 1 {
        format!(
            "load of {v} {u} is {pct:.1} % of the line rate of flow `{}` ({fps:.1} frames/s): above 100 %",
            f.display_name()
        )
    } else {
        let shown: Vec<String> = over
            .iter()
            .take(5)
            .map(|(_, v, _)| format!("{v}"))
            .collect();
        format!(
            "{} load points are above 100 % of the line rate of flow `{}` ({fps:.1} frames/s): {}{} {u} (the first is {pct:.1} %)",
            over.len(),
            f.display_name(),
            shown.join(", "),
            if over.len() > 5 { ", ..." } else { "" },
        )
    };
    if unit == LoadUnit::Percent && as_pps {
        m.push_str(
            "; `load.unit` is \"percent\" (of the line rate per flow): if these are frames/s \
             per flow, write \"unit\": \"pps\"",
        );
    }
    m
}

pub(super) fn load_field(l: &LoadSpec, j: usize) -> String {
    if l.points.is_some() {
        format!("load.points[{j}]")
    } else {
        "load.to".into()
    }
}

/// Expand the load spec into values, recording problems.
pub(super) fn load_values(l: &LoadSpec, p: &mut Problems) -> Vec<f64> {
    let range = (l.from, l.to, l.step);
    let max = crate::sim::limits::MAX_POINTS;
    let vals = match (&l.points, range) {
        (Some(pts), (None, None, None)) if pts.len() > max => {
            p.push(
                "load.points",
                format!("{} points; at most {max} (as for a range)", pts.len()),
            );
            return vec![];
        }
        (Some(pts), (None, None, None)) => pts.clone(),
        (None, (Some(from), Some(to), Some(step))) => {
            if !(step.is_finite() && step > 0.0) {
                p.push("load.step", format!("must be greater than 0, got {step}"));
                return vec![];
            }
            if from > to {
                p.push(
                    "load",
                    format!("`from` ({from}) is greater than `to` ({to})"),
                );
                return vec![];
            }
            let n = ((to - from) / step + 1e-9).floor() + 1.0;
            if !(n.is_finite() && n <= max as f64) {
                p.push("load", format!("range gives {n} points; at most {max}"));
                return vec![];
            }
            let n = n as usize;
            (0..n).map(|i| from + i as f64 * step).collect()
        }
        _ => {
            p.push(
                "load",
                "give either `points` or all of `from`, `to` and `step`",
            );
            return vec![];
        }
    };
    if vals.is_empty() {
        p.push(
            "load.points",
            "the sweep is empty: give at least one load point",
        );
    }
    if l.unit == LoadUnit::Outstanding {
        for (i, v) in vals.iter().enumerate() {
            if *v > 1_000_000.0 {
                p.push(
                    &format!("load.points[{i}]"),
                    format!("at most 1000000 outstanding transactions, got {v}"),
                );
            } else if v.is_finite() && v.fract() != 0.0 {
                // (It ran as the nearest whole number, at least 1: 0.5 ran as 1.)
                p.push(
                    &load_field(l, i),
                    format!("must be a whole number of outstanding transactions, got {v}"),
                );
            }
        }
    }
    if l.points.is_some() {
        for (i, v) in vals.iter().enumerate() {
            p.positive(&format!("load.points[{i}]"), *v, unit_name(l.unit));
        }
        // A point given twice would be run twice and reported as two rows of one load
        // (accepted quietly); found by sorting, not pair by pair.
        let mut order: Vec<(f64, usize)> = vals.iter().copied().zip(0..).collect();
        order.sort_by(|a, b| {
            a.0.partial_cmp(&b.0)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.1.cmp(&b.1))
        });
        let mut twice: Vec<(usize, usize)> = Vec::new();
        let mut k = 0;
        while k < order.len() {
            let mut e = k + 1;
            while e < order.len() && order[e].0 == order[k].0 {
                twice.push((order[e].1, order[k].1));
                e += 1;
            }
            k = e;
        }
        twice.sort_unstable();
        for (i, first) in twice {
            p.push(
                &format!("load.points[{i}]"),
                format!(
                    "{} is given twice (also `load.points[{first}]`): each load point once",
                    vals[i]
                ),
            );
        }
    } else if let Some(first) = vals.first() {
        p.positive("load.from", *first, unit_name(l.unit));
    }
    vals
}
