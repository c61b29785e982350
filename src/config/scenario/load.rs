//! Loading a scenario, as named stages:
//! read ([`read_inputs`]) -> name ([`check_name`]) -> patch ([`variant_specs`]) ->
//! expand ([`expand_grid`], [`build_variants`]) -> validate ([`check_scenario`],
//! [`check_against_models`]) -> tables ([`read_measured`]) -> the [`Experiment`]
//! ([`assemble`]). Each stage adds its problems to one list, so that a file with
//! several problems is reported whole; a stage that cannot go on without its input
//! stops the load there.

use super::*;

/// Load and validate a scenario and its model through `files`.
pub fn load(path: &Path, files: &dyn FileSource) -> Result<Experiment, InputError> {
    load_checked(path, files, &mut |_| Ok(()))
}

/// [`load`], with `check` given the captures the scenario names (each counted in the
/// command's budget by its size on disk) before any of them is read: the memory they
/// would take is checked there ([`crate::experiment::load::load`]).
pub fn load_checked(
    path: &Path,
    files: &dyn FileSource,
    check: CapturesCheck<'_>,
) -> Result<Experiment, InputError> {
    let inp = read_inputs(path, files)?;
    // Every capture counted, and checked, before any is read.
    check(&reserve_captures(files, (&inp.sfile, &inp.text), inp.dir)?)?;
    let mut problems: Vec<FileProblem> = Vec::new();
    problems.extend(check_name(&inp.stem).map(|p| inp.at_scenario(p)));
    let specs = variant_specs(&inp, &mut problems)?;
    let mut grid = inp.sc.grid.as_ref().and_then(|cfg| {
        let (grid, gp) = expand_grid(&inp, cfg, &specs);
        problems.extend(gp.list.into_iter().map(|p| inp.at_scenario(p)));
        grid
    });
    // Captures replayed by flows, read once each whatever the variants.
    let mut captures = CaptureCache::new();
    let (variants, variant_problems) =
        build_variants(&inp, &specs, grid.as_ref(), files, &mut captures);
    if variants.is_empty() {
        return Err(InputError::Invalid(problems));
    }
    let (values, p) = check_scenario(&inp.sc, specs.len(), &mut grid);
    problems.extend(p.list.into_iter().map(|p| inp.at_scenario(p)));
    let points = check_against_models(&inp, &variants, variant_problems, &values, &mut problems);
    let tables = read_measured(&inp, files, &variants, &points, &mut problems)?;
    if !problems.is_empty() {
        return Err(InputError::Invalid(problems));
    }
    Ok(assemble(
        inp,
        grid,
        variants,
        points,
        tables,
        files,
        &mut captures,
    ))
}

/// What the read stage gives: the scenario and its model, read and parsed.
pub(super) struct Inputs<'p> {
    /// The scenario's path, as given.
    pub(super) sfile: String,
    /// The scenario's text.
    pub(super) text: String,
    /// The scenario's directory, which its relative paths start from.
    pub(super) dir: &'p Path,
    /// The scenario as parsed.
    pub(super) sc: ScenarioFile,
    /// The file's stem: the scenario's name.
    pub(super) stem: String,
    /// The model's path, resolved from the scenario's directory.
    pub(super) mfile: String,
    /// The model's text.
    pub(super) mtext: String,
    /// The model as JSON, before any override.
    pub(super) mval: Value,
    /// The workload as written (the scenario was read, so it is there), which each
    /// variant's `workload` and the grid's `workload.*` parameters patch.
    pub(super) wval: Value,
}

impl Inputs<'_> {
    /// A problem of the scenario file.
    pub(super) fn at_scenario(&self, problem: Problem) -> FileProblem {
        FileProblem {
            file: self.sfile.clone(),
            problem,
        }
    }
}

/// The read stage: the scenario's text parsed (every problem of it at once, with the
/// model's where the model can be read too), then its model's. Stops at the first file
/// that cannot be read or parsed.
pub(super) fn read_inputs<'p>(
    path: &'p Path,
    files: &dyn FileSource,
) -> Result<Inputs<'p>, InputError> {
    let sfile = path.display().to_string();
    let text = read(files, path)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let sc: ScenarioFile = match parse_json_all(&sfile, &text) {
        Ok(sc) => sc,
        Err(e) => return Err(with_model_problems(e, (&sfile, &text), dir, files)),
    };
    let model_path = files.resolve(dir, &sc.model);
    let mfile = model_path.display().to_string();
    let mtext = files.read(&model_path).map_err(|e| {
        InputError::Invalid(vec![FileProblem {
            file: sfile.clone(),
            problem: Problem {
                path: "model".into(),
                reason: format!("cannot read model `{mfile}`: {e}"),
            },
        }])
    })?;
    let mval: Value = parse_json(&mfile, &mtext)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let wval: Value = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get(WORKLOAD).cloned())
        .unwrap_or(Value::Null);
    Ok(Inputs {
        sfile,
        text,
        dir,
        sc,
        stem,
        mfile,
        mtext,
        mval,
        wval,
    })
}

/// The name stage: the file's stem is the scenario's name, which names its output
/// directory, so it must be a name irqsim can write ([`crate::config::names`]).
pub(super) fn check_name(stem: &str) -> Option<Problem> {
    crate::config::names::check(stem).err().map(|e| Problem {
        path: ".".into(),
        reason: format!("the file's name gives the scenario its name, and {e}: rename the file"),
    })
}

/// The patch stage's list: the variants as written (one `default` without `variants`),
/// their names checked. More variants than the limit stop the load before any is built
/// (each costs a model), however many other problems there are.
pub(super) fn variant_specs(
    inp: &Inputs<'_>,
    problems: &mut Vec<FileProblem>,
) -> Result<Vec<VariantFile>, InputError> {
    let specs: Vec<VariantFile> = match &inp.sc.variants {
        None => vec![VariantFile {
            name: "default".into(),
            description: String::new(),
            overrides: None,
            workload: None,
        }],
        Some(v) => {
            if v.is_empty() {
                problems.push(inp.at_scenario(Problem {
                    path: "variants".into(),
                    reason: "give at least one variant, or leave `variants` out".into(),
                }));
            }
            v.clone()
        }
    };
    if specs.len() > crate::sim::limits::MAX_VARIANTS {
        problems.push(inp.at_scenario(Problem {
            path: "variants".into(),
            reason: format!(
                "{} variants; at most {} (the limit on variants, plain or from a grid)",
                specs.len(),
                crate::sim::limits::MAX_VARIANTS
            ),
        }));
        return Err(InputError::Invalid(std::mem::take(problems)));
    }
    // Variant names are checked as written.
    if inp.sc.variants.is_some() {
        for (i, spec) in specs.iter().enumerate() {
            if let Err(e) = crate::config::names::check(&spec.name) {
                problems.push(inp.at_scenario(Problem {
                    path: format!("variants[{i}].name"),
                    reason: e.to_string(),
                }));
            }
            if specs[..i].iter().any(|o| o.name == spec.name) {
                problems.push(inp.at_scenario(Problem {
                    path: format!("variants[{i}].name"),
                    reason: format!("duplicate variant name `{}`", spec.name),
                }));
            }
        }
    }
    Ok(specs)
}

/// The expand stage's grid: its paths resolved in each variant's model (after the
/// scenario's and the variant's overrides, with defaults filled in) and workload
/// (addressed as `workload.*`), and the cells it multiplies the variants into.
pub(super) fn expand_grid(
    inp: &Inputs<'_>,
    cfg: &GridConfig,
    specs: &[VariantFile],
) -> (Option<Grid>, Problems) {
    let sc = &inp.sc;
    let bases: Vec<(String, Value)> = specs
        .iter()
        .map(|spec| {
            let mut v = inp.mval.clone();
            for ov in [&sc.overrides, &spec.overrides].into_iter().flatten() {
                if ov.is_object() {
                    merge_patch(&mut v, ov);
                }
            }
            let filled = serde_json::from_value::<ModelConfig>(v.clone())
                .ok()
                .and_then(|m| serde_json::to_value(m).ok());
            let mut base = filled.unwrap_or(v);
            // The workload is addressed as `workload.*`, beside the model's fields
            // (a model has no field of that name), as this variant offers it.
            let mut w = inp.wval.clone();
            if let Some(ov) = spec.workload.as_ref().filter(|ov| ov.is_object()) {
                merge_patch(&mut w, ov);
            }
            let w = serde_json::from_value::<WorkloadConfig>(w.clone())
                .ok()
                .and_then(|w| serde_json::to_value(w).ok())
                .unwrap_or(w);
            if let Value::Object(m) = &mut base {
                m.insert(WORKLOAD.into(), w);
            }
            let name = if sc.variants.is_some() {
                spec.name.clone()
            } else {
                String::new()
            };
            (name, base)
        })
        .collect();
    let mut gp = Problems::new();
    let grid = grid::expand(cfg, &bases, &mut gp);
    (grid, gp)
}

/// A variant as built: name, description, model and flows (`None` where they could
/// not be read).
pub(super) type Built = (
    String,
    String,
    Option<crate::config::model::ModelConfig>,
    Option<Vec<FlowConfig>>,
);

/// The expand stage's variants: each scenario variant, or each grid cell, built as the
/// model with its patches (the scenario's overrides, the variant's, the cell's) and the
/// workload with its own. Every variant is built whatever the others' problems, so
/// that all are reported at once; each variant's problems are returned apart, to be
/// grouped by [`check_against_models`].
pub(super) fn build_variants(
    inp: &Inputs<'_>,
    specs: &[VariantFile],
    grid: Option<&Grid>,
    files: &dyn FileSource,
    captures: &mut CaptureCache,
) -> (Vec<Built>, Vec<Vec<FileProblem>>) {
    let sc = &inp.sc;
    // What to build: (scenario variant, grid cell).
    let builds: Vec<(usize, Option<usize>)> = match grid {
        None => (0..specs.len()).map(|i| (i, None)).collect(),
        Some(g) => g
            .cells
            .iter()
            .enumerate()
            .map(|(c, cell)| (cell.base, Some(c)))
            .collect(),
    };
    let mut variants = Vec::new();
    let mut variant_problems: Vec<Vec<FileProblem>> = Vec::new();
    for (i, cell) in builds {
        let spec = &specs[i];
        let mut patches: Vec<(String, &Value)> = Vec::new();
        if let Some(ov) = &sc.overrides {
            patches.push(("overrides".into(), ov));
        }
        if let Some(ov) = &spec.overrides {
            patches.push((format!("variants[{i}].overrides"), ov));
        }
        let mut wpatches: Vec<(String, Value)> = Vec::new();
        if let Some(ov) = &spec.workload {
            wpatches.push((format!("variants[{i}].workload"), ov.clone()));
        }
        let (name, description, grid_patches) = match (cell, grid) {
            (Some(c), Some(g)) => {
                let cell = &g.cells[c];
                let mut desc: Vec<String> = g
                    .axes
                    .iter()
                    .zip(cell.values(&g.axes))
                    .map(|(a, v)| format!("{} = {}", a.path, grid::fmt_value(v)))
                    .collect();
                if !spec.description.is_empty() {
                    desc.push(spec.description.clone());
                }
                // A parameter under `workload.` patches the workload, any other the model.
                let mut gp: Vec<(String, Value)> = Vec::new();
                for ((k, a), &j) in g.axes.iter().enumerate().zip(&cell.index) {
                    let at = format!("grid.parameters[{k}].values[{j}]");
                    match a.segments.split_first() {
                        Some((grid::Segment::Key(w), rest)) if w == WORKLOAD => {
                            wpatches.push((at, grid::patch(rest, a.values[j])));
                        }
                        _ => gp.push((at, grid::patch(&a.segments, a.values[j]))),
                    }
                }
                (cell.variant.clone(), desc.join("; "), gp)
            }
            _ => (spec.name.clone(), spec.description.clone(), Vec::new()),
        };
        patches.extend(grid_patches.iter().map(|(at, v)| (at.clone(), v)));
        let (model, mut probs) = build_model(
            (&inp.sfile, &inp.text),
            (&inp.mfile, &inp.mtext),
            &inp.mval,
            &patches,
        );
        let wp: Vec<(String, &Value)> = wpatches.iter().map(|(at, v)| (at.clone(), v)).collect();
        let (flows, wprobs) = build_workload(
            (&inp.sfile, &inp.text),
            &inp.wval,
            &wp,
            sc.load.unit,
            &mut |rel| read_capture(files, inp.dir, rel, captures),
        );
        probs.extend(wprobs);
        variant_problems.push(probs);
        variants.push((name, description, model, flows));
    }
    (variants, variant_problems)
}

/// The validate stage, for what does not depend on the model: the run's length and
/// repetitions, the latency objective, the timeline, the load values, and the limits
/// on what a sweep may cost (runs, buckets); with a grid, the load its latency map is
/// drawn at. Returns the load values, and the problems.
pub(super) fn check_scenario(
    sc: &ScenarioFile,
    nspecs: usize,
    grid: &mut Option<Grid>,
) -> (Vec<f64>, Problems) {
    let mut p = Problems::new();
    p.positive("duration_s", sc.duration_s, "s");
    if sc.duration_s > 0.0 && sc.duration_s < 1e-9 {
        // Less than 1 ns is no sending time (it would round to a few picoseconds or to
        // 0, and every rate per second of it would be 0/0).
        p.push(
            "duration_s",
            format!("must be at least 1 ns (1e-9 s), got {}", sc.duration_s),
        );
    }
    p.non_negative("drain_s", sc.drain_s, "s");
    p.at_least("replications", sc.replications as u64, 1, "replication");
    if sc.replications > crate::sim::limits::MAX_REPLICATIONS {
        p.push(
            "replications",
            format!(
                "must be at most {} replications, got {}",
                crate::sim::limits::MAX_REPLICATIONS,
                sc.replications
            ),
        );
    }
    if sc.duration_s.is_finite() && sc.drain_s.is_finite() && sc.duration_s + sc.drain_s > MAX_RUN_S
    {
        p.push(
            "duration_s",
            format!("duration_s + drain_s must be at most {MAX_RUN_S} s per point"),
        );
    }
    if let Some(slo) = sc.latency_slo_us
        && !(0.001..=1_000_000.0).contains(&slo)
    {
        p.push(
            "latency_slo_us",
            format!("must be 0.001 to 1,000,000 us, got {slo}"),
        );
    }
    if let Some(tl) = &sc.timeline {
        p.positive("timeline.bucket_ms", tl.bucket_ms, "ms");
        if tl.bucket_ms > 0.0 && (sc.duration_s + sc.drain_s) * 1e3 / tl.bucket_ms > 10_000_000.0 {
            p.push(
                "timeline.bucket_ms",
                "more than 10 million buckets per point: use wider buckets",
            );
        }
    }
    let values = load_values(&sc.load, &mut p);
    // Runs: variants x points x replications, whichever way each was asked for.
    let nvariants = grid.as_ref().map_or(nspecs, |g| g.cells.len()).max(1);
    let runs = (nvariants as u128) * (values.len() as u128) * (sc.replications as u128);
    if runs > crate::sim::limits::MAX_RUNS as u128 {
        p.push(
            if sc.replications > 1 {
                "replications"
            } else {
                "load"
            },
            format!(
                "{nvariants} variant(s) x {} load point(s) x {} replication(s) = {runs} runs; \
                 at most {} runs in a sweep",
                values.len(),
                sc.replications,
                crate::sim::limits::MAX_RUNS
            ),
        );
    }
    if let (Some(g), Some(cfg)) = (grid.as_mut(), &sc.grid) {
        let lowest = values.iter().copied().fold(f64::INFINITY, f64::min);
        g.latency_at = cfg.latency_at.unwrap_or(lowest);
        g.latency_point = grid::find_point(&values, g.latency_at);
        if g.latency_point.is_none() && !values.is_empty() {
            let pts: Vec<String> = values.iter().map(|v| grid::fmt_value(*v)).collect();
            p.push(
                "grid.latency_at",
                format!(
                    "must be one of the load points ({} {}), got {}",
                    pts.join(", "),
                    unit_name(sc.load.unit),
                    grid::fmt_value(g.latency_at)
                ),
            );
        }
    }
    (values, p)
}

/// The validate stage, for what depends on each variant's model (its NICs, their line
/// rates): each variant's load points, and its problems with the model's and
/// workload's from [`build_variants`]. A problem every variant has is reported once,
/// one only some have names them. The driver costs each NIC's role needs are located
/// in the model file.
pub(super) fn check_against_models(
    inp: &Inputs<'_>,
    variants: &[Built],
    variant_problems: Vec<Vec<FileProblem>>,
    values: &[f64],
    problems: &mut Vec<FileProblem>,
) -> Vec<Vec<LoadPoint>> {
    let (sc, mfile) = (&inp.sc, &inp.mfile);
    let mut found: Vec<(FileProblem, Vec<usize>)> = Vec::new();
    let mut points: Vec<Vec<LoadPoint>> = Vec::new();
    for ((vi, (_, _, model, flows)), model_problems) in
        variants.iter().enumerate().zip(variant_problems)
    {
        let mut p = Problems::new();
        let mut roles = Problems::new();
        // (A model or workload that could not be read has only its reading problems.)
        if let (Some(model), Some(flows)) = (model, flows) {
            points.push(variant_points(sc, flows, model, mfile, values, &mut p));
            model.check_roles(flows, &mut roles);
        }
        let located = model_problems
            .into_iter()
            .chain(p.list.into_iter().map(|p| inp.at_scenario(p)))
            .chain(roles.list.into_iter().map(|problem| FileProblem {
                file: mfile.clone(),
                problem,
            }));
        for prob in located {
            match found.iter_mut().find(|(q, _)| *q == prob) {
                // (The same problem twice in one variant still counts that variant once.)
                Some((_, vs)) if vs.last() == Some(&vi) => {}
                Some((_, vs)) => vs.push(vi),
                None => found.push((prob, vec![vi])),
            }
        }
    }
    for (mut prob, vs) in found {
        if vs.len() < variants.len() {
            let names: Vec<String> = vs.iter().map(|&i| format!("`{}`", variants[i].0)).collect();
            let which = if names.len() == 1 {
                "variant"
            } else {
                "variants"
            };
            prob.problem.reason = format!(
                "{} (with {which} {})",
                prob.problem.reason,
                names.join(", ")
            );
        }
        problems.push(prob);
    }

    points
}

/// The tables stage: the measured SmartBits table and the measured rates the scenario
/// names, read and checked against it (a rates table compares each variant at one
/// load point, over the sending period).
pub(super) fn read_measured(
    inp: &Inputs<'_>,
    files: &dyn FileSource,
    variants: &[Built],
    points: &[Vec<LoadPoint>],
    problems: &mut Vec<FileProblem>,
) -> Result<Tables, InputError> {
    let (sc, sfile, dir) = (&inp.sc, &inp.sfile, inp.dir);
    let measured = match &sc.measured {
        None => None,
        Some(m) => read_table_file(files, dir, m, "measured", sfile, problems, |f, t| {
            smartbits::read_table(f, t)
        })?,
    };
    let measured_rates = match &sc.measured_rates {
        None => None,
        Some(m) => {
            let names: Vec<String> = variants.iter().map(|(n, _, _, _)| n.clone()).collect();
            let table =
                read_table_file(files, dir, m, "measured_rates", sfile, problems, |f, t| {
                    crate::config::measured_rates::read_table(f, t, &names)
                })?;
            if let Some((_, rows)) = &table {
                // Rates over the sending period: drops and counters count the drain
                // too, and the table has no load column.
                let counted = rows.iter().find(|r| r.figure != "forwarded_pps");
                if let Some(r) = counted.filter(|_| sc.drain_s > 0.0) {
                    problems.push(inp.at_scenario(Problem {
                        path: "drain_s".into(),
                        reason: format!(
                            "must be 0 with `measured_rates` comparing `{}`: drops and \
                             counters count the drain too, and the table's rates are over \
                             the sending period",
                            r.figure
                        ),
                    }));
                }
                let n = points.first().map_or(0, |p| p.len());
                if n > 1 {
                    problems.push(inp.at_scenario(Problem {
                        path: "load".into(),
                        reason: format!(
                            "has {n} points; `measured_rates` compares each variant at one \
                             load point (the table has no load column)"
                        ),
                    }));
                }
            }
            table
        }
    };
    Ok(Tables {
        measured,
        measured_rates,
    })
}

/// The measured tables a scenario names, each with its path.
pub(super) struct Tables {
    /// The SmartBits table (`measured`).
    measured: Option<(String, Vec<MeasuredPoint>)>,
    /// The rates table (`measured_rates`).
    measured_rates: Option<(String, Vec<crate::config::measured_rates::MeasuredRate>)>,
}

/// The last stage: the [`Experiment`], from stages that found no problem (each
/// variant's flows with the frames its captures replay; every capture was read by
/// [`build_variants`]: these are the same bytes, from the cache).
pub(super) fn assemble(
    inp: Inputs<'_>,
    grid: Option<Grid>,
    variants: Vec<Built>,
    points: Vec<Vec<LoadPoint>>,
    tables: Tables,
    files: &dyn FileSource,
    captures: &mut CaptureCache,
) -> Experiment {
    let (sc, dir) = (inp.sc, inp.dir);
    let last_bit = sc.latency_from == crate::model::stats::LatencyFrom::LastBit;
    // One copy of each capture's frames for every flow and variant replaying it.
    let mut frames = crate::config::capture::FramesCache::default();
    let variants = variants
        .into_iter()
        .zip(points)
        .map(|((name, description, model, flows), points)| {
            let model = model.expect("read without problems");
            let flows = flows.expect("read without problems");
            // (Every capture was read above: these are the same bytes.)
            let (flows, points) = replayed_flows(
                flows,
                points,
                &model,
                last_bit,
                &mut |rel| read_capture(files, dir, rel, captures),
                &mut frames,
            );
            Variant {
                name,
                description,
                model,
                points,
                flows,
            }
        })
        .collect();
    Experiment {
        variants,
        name: inp.stem,
        path: inp.sfile,
        description: sc.description,
        model_path: inp.mfile,
        flows: sc.workload.flows,
        duration_s: sc.duration_s,
        drain_s: sc.drain_s,
        seed: sc.seed,
        replications: sc.replications,
        load_unit: sc.load.unit,
        measured: tables.measured,
        measured_rates: tables.measured_rates,
        timeline_bucket_ms: sc.timeline.as_ref().map(|t| t.bucket_ms),
        latency_from: sc.latency_from,
        latency_slo_us: sc.latency_slo_us,
        grid,
    }
}
