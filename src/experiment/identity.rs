//! What a sweep's results depend on, in the forms that identify it on disk: the
//! experiment as resolved ([`experiment_doc`]), the frame the results are assembled in
//! ([`frame`]), the scenario's hash that shards and run files carry
//! ([`scenario_hash`]), the checkpoint's fingerprint ([`fingerprint`]) and the build
//! identity of this irqsim ([`BUILD_ID`], made by `build.rs`: a hash of the sources,
//! `Cargo.lock`, the compiler, target and profile). The checkpoint, the shards and the
//! run files all take their identities from here, so none of them needs another.

use crate::config::scenario::Experiment;
use crate::results::summary;
use crate::results::{Measured, PointFrame, ResultsFrame};
use crate::sim::rng::fnv1a;

/// The build identity of this irqsim: a hash of the sources, `Cargo.lock`, compiler,
/// target and profile (see the module documentation of [`crate::experiment::shard`]).
pub const BUILD_ID: &str = env!("IRQSIM_BUILD_ID");

/// What the results of an experiment depend on, seed and build left out: the models of
/// every variant after overrides, the flows, the load points, durations, replications,
/// timeline and latency convention. [`fingerprint`] and the shard's scenario hash add
/// what each of them also needs.
pub fn experiment_doc(exp: &Experiment) -> serde_json::Map<String, serde_json::Value> {
    let models: Vec<_> = exp.variants.iter().map(|v| (&v.name, &v.model)).collect();
    let points: Vec<Vec<_>> = exp
        .variants
        .iter()
        .map(|v| {
            v.points
                .iter()
                .map(|p| (&p.rates_pps, p.load_pct, p.outstanding))
                .collect()
        })
        .collect();
    let mut doc = serde_json::json!({
        "models": models,
        "flows": exp.flows,
        "points": points,
        "duration_s": exp.duration_s,
        "drain_s": exp.drain_s,
        "replications": exp.replications,
        "timeline": exp.timeline_bucket_ms,
        "latency_from": exp.latency_from,
    });
    // Each variant's own flows, when a variant's or the grid's `workload` patch made
    // them differ from the scenario's (absent otherwise, so that the identity of an
    // experiment without such patches is what it was before they existed).
    // The latency objective, when given (absent otherwise: the identity of an
    // experiment without one is what it was before it existed).
    if let Some(slo) = exp.latency_slo_us {
        doc["latency_slo_us"] = serde_json::json!(slo);
    }
    if exp.variants.iter().any(|v| v.flows != exp.flows) {
        let flows: Vec<_> = exp.variants.iter().map(|v| (&v.name, &v.flows)).collect();
        doc["variant_flows"] = serde_json::json!(flows);
    }
    match doc {
        serde_json::Value::Object(m) => m,
        _ => unreachable!("a JSON object literal"),
    }
}

/// The fingerprint of an experiment: what the results depend on.
pub fn fingerprint(exp: &Experiment) -> String {
    let mut doc = experiment_doc(exp);
    doc.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    doc.insert("build".into(), BUILD_ID.into());
    doc.insert("seed".into(), exp.seed.into());
    let doc = serde_json::Value::Object(doc);
    format!("{:016x}", fnv1a(doc.to_string().as_bytes()))
}

/// A hash of the scenario as resolved, seed left out: the models of every variant
/// after overrides, the flows, the load points, durations, replications, timeline and
/// latency convention, and what the results carry from it (name, description, model
/// path, measured table).
pub fn scenario_hash(exp: &Experiment) -> String {
    let mut frame = serde_json::to_value(frame(exp)).expect("plain data");
    if let Some(f) = frame.as_object_mut() {
        f.remove("seed");
    }
    let mut doc = experiment_doc(exp);
    doc.insert("frame".into(), frame);
    let doc = serde_json::Value::Object(doc);
    format!("{:016x}", fnv1a(doc.to_string().as_bytes()))
}

/// What the results of `exp` hold besides the runs' figures.
pub fn frame(exp: &Experiment) -> ResultsFrame {
    ResultsFrame {
        scenario: exp.name.clone(),
        description: exp.description.clone(),
        model: exp.model_path.clone(),
        seed: exp.seed,
        duration_s: exp.duration_s,
        replications: exp.replications,
        latency_from: exp.latency_from,
        latency_slo_us: exp.latency_slo_us,
        measured: exp.measured.as_ref().map(|(file, points)| Measured {
            file: file.clone(),
            points: points.clone(),
        }),
        measured_rates: exp.measured_rates.as_ref().map(|(file, rows)| {
            crate::results::rates::MeasuredRates {
                file: file.clone(),
                rows: rows.clone(),
            }
        }),
        points: exp
            .variants
            .iter()
            .flat_map(|v| {
                v.points.iter().map(|lp| PointFrame {
                    variant: v.name.clone(),
                    load_pct: lp.load_pct,
                    offered_pps: lp.offered_pps(),
                    outstanding: lp.outstanding,
                })
            })
            .collect(),
        grid: exp.grid.as_ref().map(summary::grid_frame),
    }
}
