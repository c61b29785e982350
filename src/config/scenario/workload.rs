//! The workload stage: the scenario's flows with a variant's and a grid cell's patches,
//! the captures its flows replay (counted before any is read, each read once), and the
//! checks of a flow that do not depend on the model.

use super::*;

/// Every `arrivals.pcap` string in the scenario `v` (its workload, its variants'
/// workload patches), with its JSON path, in document order.
pub(super) fn pcap_fields(v: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let here = join(at, k);
                if k == "arrivals"
                    && let Some(p) = x.get("pcap").and_then(Value::as_str)
                {
                    out.push((join(&here, "pcap"), p.to_string()));
                }
                pcap_fields(x, &here, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pcap_fields(x, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The captures the scenario `stext` (in `dir`) names, each file once, counted in the
/// command's budget ([`FileSource::reserve_capture`]: its size checked against the
/// capture limit and what is left, without a byte read): a capture that would take the
/// command past its budget ends the load, naming where the scenario names it. A capture
/// that cannot be counted for another reason (missing, not a regular file, too large)
/// is left to its read, which reports it at its flow.
pub(super) fn reserve_captures(
    files: &dyn FileSource,
    (sfile, stext): (&str, &str),
    dir: &Path,
) -> Result<Vec<NamedCapture>, InputError> {
    let mut fields = Vec::new();
    if let Ok(v) = serde_json::from_str::<Value>(stext) {
        pcap_fields(&v, "", &mut fields);
    }
    let mut out: Vec<NamedCapture> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (field, rel) in fields {
        let path = files.resolve(dir, &rel);
        if out.iter().any(|c| c.path == path)
            || files.identity(&path).is_some_and(|id| !ids.insert(id))
        {
            continue;
        }
        match files.reserve_capture(&path) {
            Ok(Some(bytes)) => out.push(NamedCapture {
                file: sfile.to_string(),
                field,
                path,
                bytes,
            }),
            Ok(None) => {}
            Err(e)
                if e.get_ref()
                    .and_then(|r| r.downcast_ref::<crate::config::read_limit::ReadLimitError>())
                    .is_some_and(|r| {
                        matches!(
                            r,
                            crate::config::read_limit::ReadLimitError::OverBudget { .. }
                        )
                    }) =>
            {
                return Err(InputError::Invalid(vec![FileProblem {
                    file: sfile.to_string(),
                    problem: Problem {
                        path: field,
                        reason: format!(
                            "cannot read capture `{}`: {e}; no capture was read",
                            path.display()
                        ),
                    },
                }]));
            }
            Err(_) => {}
        }
    }
    Ok(out)
}

/// The key of the workload in a scenario, and the first step of a grid path into it.
pub(super) const WORKLOAD: &str = "workload";

/// Apply `patches` (each with the path prefix it is written under: a variant's
/// `workload`, a grid value) to the scenario's workload `base` (as written) and read it,
/// with the checks that do not depend on the model; problems are located where the
/// value was set, as [`build_model`] locates them. The flows are `None` when the
/// workload could not be read; every problem found is returned either way.
pub(super) fn build_workload(
    (sfile, stext): (&str, &str),
    base: &Value,
    patches: &[(String, &Value)],
    unit: LoadUnit,
    capture: &mut dyn FnMut(&str) -> Result<Arc<CaptureFile>, String>,
) -> (Option<Vec<FlowConfig>>, Vec<FileProblem>) {
    let mut problems = Vec::new();
    // Problems already reported (path, reason): found by hashing, not by a scan of the
    // list (a patch of 10^5 flows by name has 10^5 unmatched keys).
    let mut reported: std::collections::HashSet<(String, String)> = Default::default();
    let mut w = base.clone();
    let here = |problem: Problem| FileProblem {
        file: sfile.into(),
        problem,
    };
    for (prefix, ov) in patches {
        if !ov.is_object() {
            problems.push(here(Problem {
                path: prefix.clone(),
                reason: "must be an object (a JSON merge patch of the workload)".into(),
            }));
            continue;
        }
        let mut un = Vec::new();
        unmatched_patch_keys(&w, ov, prefix, &mut un);
        for p in un {
            if reported.insert((p.path.clone(), p.reason.clone())) {
                problems.push(here(p));
            }
        }
        merge_patch(&mut w, ov);
    }
    // Where the value at `path` (inside the workload) was set: the last patch that
    // touched it, else the scenario's `workload`.
    let locate = |p: Problem| -> Problem {
        if let Some(path) = patch_site(patches, base, &p.path) {
            return Problem {
                path,
                reason: p.reason,
            };
        }
        let path = if p.path == "." {
            WORKLOAD.to_string()
        } else {
            join(WORKLOAD, &p.path)
        };
        Problem {
            path,
            reason: p.reason,
        }
    };
    let written = w.clone();
    let mut workload: WorkloadConfig = match read_all(w) {
        Ok(w) => w,
        Err(list) => {
            problems.extend(list.into_iter().map(|p| here(located(stext, locate(p)))));
            return (None, problems);
        }
    };
    let mut p = Problems::new();
    // More flows than the limit: said, and nothing more is read of them (no capture,
    // no check of each flow: a 160,000-flow workload ran for minutes otherwise).
    if workload.flows.len() > crate::sim::limits::MAX_FLOWS {
        p.push(
            "flows",
            format!(
                "{} flows; at most {}",
                workload.flows.len(),
                crate::sim::limits::MAX_FLOWS
            ),
        );
        problems.extend(p.list.into_iter().map(|p| here(locate(p))));
        return (None, problems);
    }
    // Flows replaying a capture: what the capture itself gives may not be written too,
    // and the capture is read (its sizes, rate and hash join the flow).
    let mut replayed = 0;
    let mut captures = 0;
    for (i, f) in workload.flows.iter_mut().enumerate() {
        if f.arrivals.capture().is_none() || i >= crate::sim::limits::MAX_FLOWS {
            replayed += 1;
            continue;
        }
        captures += 1;
        let as_written = &written["flows"][i];
        for (field, what) in [
            ("frame_bytes", "sizes"),
            ("tuple", "addresses, ports and protocols"),
        ] {
            if as_written.get(field).is_some() {
                p.push(
                    &format!("flows[{i}].{field}"),
                    format!("a replayed capture's {what} are the captured ones: remove it"),
                );
            }
        }
        let as_captured = f.arrivals.capture().map(|c| c.timing)
            == Some(crate::model::capture::CaptureTiming::AsCaptured);
        if as_captured && as_written.get("rate_pps").is_some() {
            p.push(
                &format!("flows[{i}].rate_pps"),
                "a capture replayed `as-captured` sends at its own rate: remove `rate_pps`, \
                 or replay it `scaled` (the default)",
            );
        }
        let pcap = f
            .arrivals
            .capture()
            .map(|c| c.pcap.clone())
            .unwrap_or_default();
        match capture(&pcap) {
            Ok(c) => {
                replayed += c.tuples.len();
                crate::config::capture::describe(f, &c);
            }
            Err(e) => p.push(&format!("flows[{i}].arrivals.pcap"), e),
        }
    }
    // (Without a capture, the count of flows below says it: a 10^5-flow
    // patch was refused with a message about a capture's 5-tuples.)
    if captures > 0 && replayed > crate::sim::limits::MAX_FLOWS {
        p.push(
            "flows",
            format!(
                "{replayed} flows once each capture's 5-tuples are flows of their own; at most {}",
                crate::sim::limits::MAX_FLOWS
            ),
        );
    }
    let flows = &workload.flows;
    if flows.len() > crate::sim::limits::MAX_FLOWS {
        p.push(
            "flows",
            format!(
                "{} flows; at most {}",
                flows.len(),
                crate::sim::limits::MAX_FLOWS
            ),
        );
    }
    if flows.len() <= crate::sim::limits::MAX_FLOWS {
        for (i, f) in flows.iter().enumerate() {
            p.at(format!("flows[{i}]"), |p| check_flow(f, unit, p));
        }
        // Results, traces and counters name each flow (its `name`, else `<from>-<to>`):
        // two flows of one name would be one in them (accepted quietly).
        let mut names: Vec<(String, usize)> =
            flows.iter().map(|f| f.display_name()).zip(0..).collect();
        names.sort();
        for w in names.windows(2).filter(|w| w[0].0 == w[1].0) {
            let (j, i) = (w[0].1, w[1].1);
            p.push(
                &format!("flows[{i}].name"),
                format!(
                    "`{}` is also the name of `flows[{j}]` (a flow without a `name` is named \
                     `<from>-<to>`): results name each flow, so give each a name of its own",
                    w[0].0
                ),
            );
        }
    }
    problems.extend(p.list.into_iter().map(|p| here(locate(p))));
    (Some(workload.flows), problems)
}

/// Where the value at `path` (inside the patched document `base`) was set: at the
/// path in the last of `patches` that touched it (a grid value at the grid's own
/// field), or `None` when no patch did.
pub(super) fn patch_site(patches: &[(String, &Value)], base: &Value, path: &str) -> Option<String> {
    patches.iter().rev().find_map(|(prefix, ov)| {
        if !ov.is_object() {
            return None;
        }
        let op = overridden(ov, base, path)?;
        Some(if prefix.starts_with("grid.") {
            prefix.clone()
        } else {
            join(prefix, &op)
        })
    })
}

/// The capture at `rel` (as written in the scenario, in `dir`), read and parsed once
/// per file: the same bytes for every variant that replays it.
pub(super) fn read_capture(
    files: &dyn FileSource,
    dir: &Path,
    rel: &str,
    cache: &mut CaptureCache,
) -> Result<Arc<CaptureFile>, String> {
    let path = files.resolve(dir, rel);
    if let Some(c) = cache.by_path.get(&path) {
        return c.clone();
    }
    let id = files.identity(&path);
    if let Some(c) = id.and_then(|id| cache.by_id.get(&id)) {
        let c = c.clone();
        cache.by_path.insert(path, c.clone());
        return c;
    }
    let shown = path.display();
    let read = files
        .read_bytes(&path)
        .map_err(|e| format!("cannot read capture `{shown}`: {e}"))
        .and_then(|bytes| {
            crate::config::capture::parse(&bytes)
                .map(Arc::new)
                .map_err(|e| format!("capture `{shown}`: {e}"))
        });
    if let Some(id) = id {
        cache.by_id.insert(id, read.clone());
    }
    cache.by_path.insert(path, read.clone());
    read
}

/// The flows a run offers: each flow replaying a capture becomes one flow per 5-tuple
/// of the capture ([`crate::config::capture::expand`]), with its share of the flow's
/// rate at every point; a flow beside them keeps the 5-tuple its number gave it.
pub(super) fn replayed_flows(
    flows: Vec<FlowConfig>,
    mut points: Vec<LoadPoint>,
    model: &ModelConfig,
    last_bit: bool,
    capture: &mut dyn FnMut(&str) -> Result<Arc<CaptureFile>, String>,
    frames: &mut crate::config::capture::FramesCache,
) -> (Vec<FlowConfig>, Vec<LoadPoint>) {
    if flows.iter().all(|f| f.arrivals.capture().is_none()) {
        return (flows, points);
    }
    let mut out = Vec::new();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); points.len()];
    for (i, f) in flows.into_iter().enumerate() {
        let read = f.arrivals.capture().map(|c| capture(&c.pcap));
        let nic = model.nic_index(&f.from).and_then(|n| model.nics.get(n));
        let at: Vec<f64> = points.iter().map(|p| p.rates_pps[i]).collect();
        match (read, nic) {
            (Some(Ok(c)), Some(nic)) => {
                let link = Link::new(nic.line_rate_bps);
                for (g, r) in crate::config::capture::expand(&f, &c, link, last_bit, &at, frames) {
                    for (j, x) in r.into_iter().enumerate() {
                        rates[j].push(x);
                    }
                    out.push(g);
                }
            }
            // (A capture that could not be read was refused before.)
            _ => {
                let mut g = f;
                if g.tuple.is_none() {
                    g.tuple = Some(TupleConfig::default_for(i));
                }
                for (j, x) in at.into_iter().enumerate() {
                    rates[j].push(x);
                }
                out.push(g);
            }
        }
    }
    for (p, r) in points.iter_mut().zip(rates) {
        p.rates_pps = r;
    }
    (out, points)
}

/// Checks of a flow that do not depend on the model.
pub(super) fn check_flow(f: &FlowConfig, unit: LoadUnit, p: &mut Problems) {
    if let Some(Err(e)) = f.name.as_deref().map(crate::config::names::check_flow) {
        p.push("name", e);
    }
    p.at("frame_bytes", |p| f.frame_bytes.validate(p));
    let closed = f.arrivals == crate::model::traffic::Arrivals::ClosedLoop;
    if closed != (unit == LoadUnit::Outstanding) {
        p.push(
            "arrivals",
            "closed-loop flows go with `load.unit` = `outstanding`, and only they",
        );
    }
    p.non_negative("turnaround_ns", f.turnaround_ns, "ns");
    if let Some(c) = &f.peer_coalescing {
        p.non_negative("peer_coalescing.rx_ticks_ns", c.rx_ticks_ns, "ns");
        p.non_negative("peer_coalescing.tx_ticks_ns", c.tx_ticks_ns, "ns");
        if !closed {
            p.push(
                "peer_coalescing",
                "applies to `closed-loop` flows only (a tester port does not answer)",
            );
        }
    }
    if let Some(r) = f.rate_pps {
        p.positive("rate_pps", r, "frames/s");
        if closed {
            p.push(
                "rate_pps",
                "a closed-loop flow's load is its outstanding transactions",
            );
        }
    }
    // The phase and clock of a tester port drive its constant-rate stream; a Poisson
    // or closed-loop flow has neither, and a value given there would be ignored.
    if f.arrivals != crate::model::traffic::Arrivals::Constant {
        for (field, v) in [("start_phase", f.start_phase), ("clock_ppm", f.clock_ppm)] {
            if v != crate::model::traffic::OrRandom::default() {
                p.push(
                    field,
                    "applies to `constant` arrivals only (a Poisson, closed-loop or replayed \
                     flow has no phase or period to shift): remove it",
                );
            }
        }
    }
    if let crate::model::traffic::OrRandom::Value(ppm) = f.clock_ppm
        && !(-1000.0..=1000.0).contains(&ppm)
    {
        p.push(
            "clock_ppm",
            format!("must be -1000 to 1000 ppm or \"random\", got {ppm}"),
        );
    }
    if let crate::model::traffic::OrRandom::Value(ph) = f.start_phase
        && !(0.0..1.0).contains(&ph)
    {
        p.push(
            "start_phase",
            format!(
                "must be in [0, 1) (a fraction of the inter-frame period) or \"random\", got {ph}"
            ),
        );
    }
}
