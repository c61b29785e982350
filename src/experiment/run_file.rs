//! Run files: one finished run (variant x load point x replication) saved on disk, as a
//! checkpoint (`OUT/.checkpoint/`) and a shard's partial result (`OUT/runs/`) keep them,
//! in one format, so that what is read back is the run it claims to be, unchanged.
//!
//! A run file is named `v<variant>-p<point>-r<replication>.json` and holds a JSON object:
//! - `format`: [`FORMAT`] (`irqsim-run/2`); a file in another format, or in the first
//!   one (which had no tag, no identity and no checksum), is refused: it cannot be
//!   checked;
//! - `sha256`: the SHA-256 (hex) of the canonical JSON of `{"identity": ..., "run": ...}`
//!   as irqsim writes it (serde_json, fields in their order, floats to the last bit);
//! - `identity` ([`RunIdentity`]): the experiment (hash of the scenario as resolved,
//!   seed, irqsim version and build) and the run within it (variant index and name, load
//!   point, replication);
//! - `run` ([`SavedRun`]): the figures and timeline rows of the run.
//!
//! When it is read ([`decode`]), in this order: the format tag, the checksum, the
//! identity (it must be the run the file's place holds: in a checkpoint, the run of
//! this experiment its name gives; in a shard, the run its manifest lists there), and
//! the books ([`crate::results::books`]: conservation of frames per flow and in total, counters
//! whole and non-negative, every figure finite). Each refusal names the file and what
//! is wrong.
//!
//! **What the checksum protects against**: accidents and careless edits (a counter
//! changed by hand, a file cut short, a byte flipped on disk): any change to the
//! identity or the figures changes the hash. It is not a signature: SHA-256 is
//! unkeyed, so a deliberate forger can write a new hash. The identity still keeps a
//! forged or copied file from being taken for another run (a file of another seed, or
//! moved to another point's name, names the wrong run), and the books keep a forged
//! counter from breaking conservation. Nothing read from a run file is trusted without
//! all three.
//!
//! **What counts as irqsim's own file** ([`is_own`]): a file named as irqsim names run
//! files, in this format, whose checksum holds. Only such files are ever deleted.

use crate::config::read_limit::ReadBudget;
use crate::model::timeline::TimelineRow;
use crate::results::PointFigures;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};

/// Format tag of a run file; any other is refused.
pub const FORMAT: &str = "irqsim-run/2";

/// One saved run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedRun {
    /// Its figures.
    pub figures: PointFigures,
    /// Its timeline rows (replication 0 only).
    pub timeline: Vec<TimelineRow>,
}

/// Which run of which experiment a run file holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// Hash of the scenario as resolved, seed left out ([`crate::experiment::identity::scenario_hash`]).
    pub scenario_hash: String,
    /// Seed of the sweep.
    pub seed: u64,
    /// irqsim's package version.
    pub irqsim_version: String,
    /// irqsim's build identity ([`crate::experiment::identity::BUILD_ID`]: sources, `Cargo.lock`,
    /// compiler, target, profile).
    pub irqsim_build: String,
    /// Variant index, in the scenario's order.
    pub variant: usize,
    /// Variant name.
    pub variant_name: String,
    /// Load point index within the variant's sweep.
    pub point: usize,
    /// Replication index, from 0.
    pub replication: usize,
}

/// The experiment part of a [`RunIdentity`]: what every run of one sweep shares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExperimentIdentity {
    /// [`RunIdentity::scenario_hash`].
    pub scenario_hash: String,
    /// [`RunIdentity::seed`].
    pub seed: u64,
    /// [`RunIdentity::irqsim_version`].
    pub irqsim_version: String,
    /// [`RunIdentity::irqsim_build`].
    pub irqsim_build: String,
}

impl ExperimentIdentity {
    /// The experiment `exp` run by this irqsim.
    pub fn of(exp: &crate::config::scenario::Experiment) -> ExperimentIdentity {
        ExperimentIdentity {
            scenario_hash: crate::experiment::identity::scenario_hash(exp),
            seed: exp.seed,
            irqsim_version: env!("CARGO_PKG_VERSION").to_string(),
            irqsim_build: crate::experiment::identity::BUILD_ID.to_string(),
        }
    }

    /// The identity of run (`v`, `p`, `r`) of this experiment, `v` named `variant_name`.
    pub fn run(&self, v: usize, variant_name: &str, p: usize, r: usize) -> RunIdentity {
        RunIdentity {
            scenario_hash: self.scenario_hash.clone(),
            seed: self.seed,
            irqsim_version: self.irqsim_version.clone(),
            irqsim_build: self.irqsim_build.clone(),
            variant: v,
            variant_name: variant_name.to_string(),
            point: p,
            replication: r,
        }
    }
}

impl RunIdentity {
    /// Its fields by name, as written, for saying which one differs.
    fn fields(&self) -> [(&'static str, String); 8] {
        [
            (
                "scenario_hash (the scenario as resolved: models after overrides, flows, points, durations, replications...)",
                self.scenario_hash.clone(),
            ),
            ("seed", self.seed.to_string()),
            ("irqsim_version", self.irqsim_version.clone()),
            (
                "irqsim_build (the irqsim sources, Cargo.lock or compiler)",
                self.irqsim_build.clone(),
            ),
            ("variant", self.variant.to_string()),
            ("variant_name", self.variant_name.clone()),
            ("point", self.point.to_string()),
            ("replication", self.replication.to_string()),
        ]
    }
}

/// The name of run (`v`, `p`, `r`)'s file.
pub fn file_name(v: usize, p: usize, r: usize) -> String {
    format!("v{v}-p{p}-r{r}.json")
}

/// The run a file name names, if it is named as irqsim names run files (exactly: no
/// leading zeros, no other characters).
pub fn parse_name(name: &str) -> Option<(usize, usize, usize)> {
    let rest = name.strip_prefix('v')?.strip_suffix(".json")?;
    let (v, rest) = rest.split_once("-p")?;
    let (p, r) = rest.split_once("-r")?;
    let num = |s: &str| s.parse::<usize>().ok();
    let (v, p, r) = (num(v)?, num(p)?, num(r)?);
    (file_name(v, p, r) == name).then_some((v, p, r))
}

/// The file as written: tag, checksum, identity, run.
#[derive(Serialize, Deserialize)]
struct Stored {
    format: String,
    sha256: String,
    identity: RunIdentity,
    run: SavedRun,
}

/// What the checksum covers, in the order written.
#[derive(Serialize)]
struct Content<'a> {
    identity: &'a RunIdentity,
    run: &'a SavedRun,
}

/// SHA-256 (lowercase hex) of the canonical JSON of `identity` and `run`.
fn checksum(identity: &RunIdentity, run: &SavedRun) -> String {
    let text = serde_json::to_string(&Content { identity, run }).expect("plain data");
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The text of the run file of `run`, which is run `identity`.
pub fn encode(identity: &RunIdentity, run: &SavedRun) -> String {
    let stored = Stored {
        format: FORMAT.to_string(),
        sha256: checksum(identity, run),
        identity: identity.clone(),
        run: run.clone(),
    };
    serde_json::to_string(&stored).expect("plain data")
}

/// Why a run file is refused.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// It cannot be read (absent, not a regular file, too large, I/O).
    #[error("cannot read: {0}")]
    Read(io::Error),
    /// Not JSON, or not the fields of a run file.
    #[error("not a run file irqsim can read (format `{FORMAT}`): {0}")]
    Format(String),
    /// Another format, or the first one (no tag).
    #[error(
        "written in format `{0}`, but this irqsim reads only `{FORMAT}` (run files with an identity and a checksum); simulate the runs again (without --resume, or run the shard again)"
    )]
    OldFormat(String),
    /// The content does not hash to the checksum.
    #[error(
        "checksum fails: its identity or figures were changed after irqsim wrote it (the file says sha256 {stated}, its content hashes to {actual})"
    )]
    Checksum {
        /// The checksum written in the file.
        stated: String,
        /// The checksum of its content.
        actual: String,
    },
    /// The file holds another run than the one its place holds.
    #[error(
        "holds another run: its identity's {field} is `{found}`, but the run this file stands for has `{expected}` (a file copied from another sweep, seed or build, or moved between runs)"
    )]
    Identity {
        /// The field that differs.
        field: &'static str,
        /// Its value in the file.
        found: String,
        /// Its value for the run expected.
        expected: String,
    },
    /// The figures break an identity that every run satisfies.
    #[error("its books do not balance: {0}")]
    Books(String),
}

/// A run file refused, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", file.display())]
pub struct RunFileError {
    /// The file.
    pub file: PathBuf,
    /// What is wrong with it.
    pub problem: Problem,
}

/// Parse `text` as a run file with a good checksum (identity not yet compared).
fn parse(text: &str) -> Result<Stored, Problem> {
    #[derive(Deserialize)]
    struct Tag {
        format: Option<serde_json::Value>,
    }
    let tag: Tag = serde_json::from_str(text)
        .map_err(|e| Problem::Format(crate::sim::forms::readable(&e.to_string())))?;
    match tag.format {
        Some(serde_json::Value::String(f)) if f == FORMAT => {}
        Some(serde_json::Value::String(f)) => return Err(Problem::OldFormat(f)),
        Some(other) => return Err(Problem::OldFormat(other.to_string())),
        None => {
            return Err(Problem::OldFormat(
                "irqsim-run/1 (no `format` field)".to_string(),
            ));
        }
    }
    let stored: Stored = serde_json::from_str(text)
        .map_err(|e| Problem::Format(crate::sim::forms::readable(&e.to_string())))?;
    let actual = checksum(&stored.identity, &stored.run);
    if actual != stored.sha256 {
        return Err(Problem::Checksum {
            stated: stored.sha256,
            actual,
        });
    }
    Ok(stored)
}

/// Check the run file `text`: format, checksum, that it is run `expected`, and its
/// books; give its run.
pub fn decode(text: &str, expected: &RunIdentity) -> Result<SavedRun, Problem> {
    let stored = parse(text)?;
    for ((field, found), (_, want)) in stored.identity.fields().into_iter().zip(expected.fields()) {
        if found != want {
            return Err(Problem::Identity {
                field,
                found,
                expected: want,
            });
        }
    }
    crate::results::books::check(&stored.run.figures, &stored.run.timeline)
        .map_err(Problem::Books)?;
    if expected.replication != 0 && !stored.run.timeline.is_empty() {
        return Err(Problem::Books(format!(
            "replication {} holds {} timeline rows; only replication 0 keeps a timeline",
            expected.replication,
            stored.run.timeline.len()
        )));
    }
    Ok(stored.run)
}

/// The fixed part of a run file's bound ([`max_bytes`]) \[bytes\]: format, checksum,
/// identity (a variant name is at most 200 bytes), the totals and the model-wide
/// counters. 64 KiB; the reference run's whole file is 2.7 KB.
pub const RUN_BASE_BYTES: u64 = 64 << 10;

/// Each flow's figures in a run file, at most \[bytes\]: 4 KiB (a flow is 480 bytes in
/// the reference run; fewer than 60 numbers of at most 25 characters and its name).
pub const FLOW_BYTES: u64 = 4 << 10;

/// Each core's figures and counters (`cores`, `mpstat`, `cpu<k>.*`), at most \[bytes\]:
/// 4 KiB (about 800 bytes a core in modern-10g-24flows).
pub const CORE_BYTES: u64 = 4 << 10;

/// Each NIC's counters, with those of each of its queues, at most \[bytes\]: 64 KiB
/// (modern-10g-24flows: 235 counters of about 30 bytes for two six-queue NICs and six
/// cores).
pub const NIC_BYTES: u64 = 64 << 10;

/// Each timeline row (replication 0 only), at most \[bytes\]: 1 KiB (a variant name of at
/// most 200 bytes and five numbers).
pub const TIMELINE_ROW_BYTES: u64 = 1 << 10;

/// The largest a run file of a run of `exp` can be \[bytes\], and so the most irqsim
/// reads of one (a damaged 1 GiB checkpoint file was read whole before it was
/// refused): for the variant with the most, [`RUN_BASE_BYTES`] and [`FLOW_BYTES`] per
/// flow, [`CORE_BYTES`] per core, [`NIC_BYTES`] per NIC, and [`TIMELINE_ROW_BYTES`] per
/// timeline bucket; at most [`crate::config::read_limit::MAX_RESULT_BYTES`]. The bounds
/// are 10 to 100 times the files measured, so no valid run file comes near them.
pub fn max_bytes(exp: &crate::config::scenario::Experiment) -> u64 {
    let run = exp
        .variants
        .iter()
        .map(|v| {
            let m = &v.model;
            RUN_BASE_BYTES
                + FLOW_BYTES * (v.flows.len() as u64 + 1)
                + CORE_BYTES * u64::from(m.cpu.cores)
                + NIC_BYTES * m.nics.len() as u64
        })
        .max()
        .unwrap_or(RUN_BASE_BYTES);
    let rows = exp.timeline_bucket_ms.map_or(0, |ms| {
        ((exp.duration_s + exp.drain_s) * 1e3 / ms).ceil() as u64
    });
    run.saturating_add(rows.saturating_mul(TIMELINE_ROW_BYTES))
        .min(crate::config::read_limit::MAX_RESULT_BYTES)
}

/// Read and check the run file at `path`, which must be run `expected`; a file of more
/// than `limit` bytes ([`max_bytes`]) or more than is left of the command's `budget` is
/// refused by its size, before it is read.
pub fn read(
    path: &Path,
    expected: &RunIdentity,
    limit: u64,
    budget: &ReadBudget,
) -> Result<SavedRun, RunFileError> {
    let err = |problem| RunFileError {
        file: path.to_path_buf(),
        problem,
    };
    let text = budget
        .read_text(path, limit)
        .map_err(|e| err(Problem::Read(e)))?;
    decode(&text, expected).map_err(err)
}

/// Whether the file at `path` is irqsim's own run file (named as irqsim names them, in
/// this format, its checksum holding, at most `limit` bytes), and if not, why not (read
/// from the command's `budget`).
pub fn is_own(path: &Path, limit: u64, budget: &ReadBudget) -> Result<(), Problem> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if parse_name(name).is_none() {
        return Err(Problem::Format(format!(
            "`{name}` is not named as irqsim names run files (v<variant>-p<point>-r<replication>.json)"
        )));
    }
    let text = budget.read_text(path, limit).map_err(Problem::Read)?;
    parse(&text).map(|_| ())
}

/// A file named as a run file in a directory irqsim keeps run files in.
#[derive(Debug)]
pub struct Found {
    /// Its path.
    pub path: PathBuf,
    /// The run its name names.
    pub run: (usize, usize, usize),
    /// Whether it is irqsim's own ([`is_own`]); if not, why not.
    pub own: Result<(), Problem>,
}

/// The files in `dir` named as run files, each checked by [`is_own`] (at most `limit`
/// bytes read of each, from the command's `budget`); other files are not looked at. A
/// missing directory holds none.
pub fn scan(dir: &Path, limit: u64, budget: &ReadBudget) -> io::Result<Vec<Found>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for e in entries {
        let e = e?;
        let name = e.file_name();
        let Some(run) = name.to_str().and_then(parse_name) else {
            continue;
        };
        let path = e.path();
        let own = is_own(&path, limit, budget);
        found.push(Found { path, run, own });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_parsed_exactly() {
        assert_eq!(parse_name("v0-p12-r3.json"), Some((0, 12, 3)));
        for bad in [
            "v00-p1-r0.json",
            "v0-p1-r0.json.tmp",
            "v0-p1-r0.JSON",
            "v+1-p1-r0.json",
            "notes.txt",
            "v0-p1.json",
            "v0-p1-r0-r1.json",
        ] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
    }
}
