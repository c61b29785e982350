//! Checkpoints of a sweep in progress, so that an interrupted run can be resumed.
//!
//! Every finished run (variant x point x replication) is saved as
//! `DIR/.checkpoint/v<variant>-p<point>-r<replication>.json`, written atomically, next to
//! `experiment.id`: a fingerprint of everything that determines the results (models after
//! overrides, flows, load points, durations, seed, replications, timeline, latency
//! convention, and the irqsim executable itself, so a rebuilt simulator does not resume
//! an older one's runs). `irqsim run
//! --resume` reloads the saved runs of the same experiment, runs the others, and writes
//! exactly what an uninterrupted run writes (the saved figures round-trip exactly through
//! JSON). The directory is removed once the results are written.

use crate::output::write_named;
use crate::results::PointFigures;
use crate::rng::fnv1a;
use crate::scenario::Experiment;
use crate::timeline::TimelineRow;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// Name of the checkpoint directory under the output directory.
pub const DIR: &str = ".checkpoint";

/// One saved run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedRun {
    /// Its figures.
    pub figures: PointFigures,
    /// Its timeline rows (replication 0 only).
    pub timeline: Vec<TimelineRow>,
}

/// A checkpoint directory bound to one experiment.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    dir: PathBuf,
}

/// The running executable's size and modification time, so that runs saved by another
/// build are not resumed (a rebuilt or replaced binary has another time); empty if they
/// cannot be read (the package version in the fingerprint still tells releases apart).
fn build_id() -> String {
    std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}-{t}", m.len())
        })
        .unwrap_or_default()
}

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
    let doc = serde_json::json!({
        "models": models,
        "flows": exp.flows,
        "points": points,
        "duration_s": exp.duration_s,
        "drain_s": exp.drain_s,
        "replications": exp.replications,
        "timeline": exp.timeline_bucket_ms,
        "latency_from": exp.latency_from,
    });
    match doc {
        serde_json::Value::Object(m) => m,
        _ => unreachable!("a JSON object literal"),
    }
}

/// The fingerprint of an experiment: what the results depend on.
pub fn fingerprint(exp: &Experiment) -> String {
    let mut doc = experiment_doc(exp);
    doc.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    doc.insert("build".into(), build_id().into());
    doc.insert("seed".into(), exp.seed.into());
    let doc = serde_json::Value::Object(doc);
    format!("{:016x}", fnv1a(doc.to_string().as_bytes()))
}

impl Checkpoint {
    /// Open (and create) the checkpoint of `exp` under `out`. Without `resume`, saved
    /// runs from an earlier attempt are discarded. With `resume`, a checkpoint of a
    /// different experiment is an error.
    pub fn open(out: &Path, exp: &Experiment, resume: bool) -> io::Result<Checkpoint> {
        let dir = out.join(DIR);
        let id = fingerprint(exp);
        let id_file = dir.join("experiment.id");
        if resume {
            match crate::read_limit::read_text(&id_file, crate::read_limit::MAX_RESULT_BYTES) {
                Ok(old) if old.trim() == id => {}
                Ok(_) => {
                    return Err(io::Error::other(format!(
                        "{} holds the checkpoint of a different experiment (scenario, model, seed or the irqsim build changed); run without --resume to start over",
                        dir.display()
                    )));
                }
                Err(_) => {} // nothing to resume: start afresh
            }
        } else if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        write_named(&id_file, format!("{id}\n").as_bytes())?;
        Ok(Checkpoint { dir })
    }

    fn file(&self, v: usize, p: usize, r: usize) -> PathBuf {
        self.dir.join(format!("v{v}-p{p}-r{r}.json"))
    }

    /// A run saved earlier, if any (an unreadable file counts as not saved).
    pub fn load(&self, v: usize, p: usize, r: usize) -> Option<SavedRun> {
        let text =
            crate::read_limit::read_text(&self.file(v, p, r), crate::read_limit::MAX_RESULT_BYTES)
                .ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Save a finished run. The error names the file (a full disk: ENOSPC).
    pub fn save(&self, v: usize, p: usize, r: usize, run: &SavedRun) -> io::Result<()> {
        let text = serde_json::to_string(run).map_err(io::Error::other)?;
        let file = self.file(v, p, r);
        write_named(&file, text.as_bytes())
    }

    /// Remove the checkpoint (the results are written).
    pub fn finish(self) -> io::Result<()> {
        std::fs::remove_dir_all(&self.dir)
    }
}
