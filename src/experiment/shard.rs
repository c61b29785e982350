//! Sweeps in parts: `irqsim run SCENARIO --shard K/N` runs the K-th of N disjoint
//! slices of a sweep's runs and writes a *partial result*; `irqsim merge DIR...` checks
//! that the partials belong together and assembles exactly the results a single
//! machine would have written.
//!
//! **Slices.** A run is one replication of one load point of one variant. `K` is
//! 1-based (`1/N` to `N/N`, as Slurm's `--array=1-N` and GNU parallel's `{#}` count).
//! The runs are ordered by estimated cost (the point's offered frames per second, all
//! runs lasting the same time), most costly first, ties in sweep order, and dealt to the
//! shards like cards in a snake (`1, 2, .., N, N, .., 2, 1, 1, 2, ..`): every shard gets
//! the same number of runs to within one, and a mix of light and heavy points, so that
//! no shard is left with the whole top of a load sweep. The slicing depends only on the
//! scenario as resolved, so every machine computes the same one.
//!
//! **A partial result** is a directory holding `shard.json` (the [`Manifest`]: shard
//! `K/N`, scenario name, a hash of the scenario as resolved, seed, irqsim version and
//! build identity, the runs it holds, and the [`ResultsFrame`] the results are assembled
//! in) and `runs/v<variant>-p<point>-r<replication>.json`, one per run, in the format of
//! the checkpoint's saved runs ([`SavedRun`]; figures survive JSON to the last bit).
//! `shard.json` is written last: a directory without it is not a finished shard.
//!
//! **A finished shard run again** (a Slurm requeue, a script run twice) finds its
//! `shard.json` ([`finished`]): when it is the manifest this run would write (same
//! scenario as resolved, seed, irqsim version and build, shard `K/N`, runs) and every
//! run file it lists is there, the run would write the same bytes, so it stops without
//! simulating and leaves the files as they are. Any other partial there (another
//! sweep's, or one missing a run file) is simulated again and replaced.
//!
//! **The build identity** (`IRQSIM_BUILD_ID`, made by `build.rs`) hashes the sources,
//! `Cargo.lock`, the compiler version, target and profile. Unlike a hash of the
//! executable, it is the same for one checkout built on several machines; unlike a git
//! commit, it changes with uncommitted edits and needs no git. It cannot see the C
//! library's `exp`/`ln`, which differ between some systems: give every node the same
//! binary and system image when the last bit matters.
//!
//! **Merging** refuses, naming the directory and the field, partials of another
//! scenario (as resolved: models after overrides, flows, points, durations,
//! replications...), seed, irqsim version or build, or shard count; a shard given twice
//! or missing; a shard whose runs are not the ones its slice holds, or whose run files
//! are missing; and, naming the file, a run file that cannot be trusted
//! ([`run_file::read`]: another format, a checksum that fails, an identity that is not
//! the run the manifest lists there -- copied from another seed's shard, swapped --, or
//! books that do not balance). Only the run files a manifest lists are read.
//!
//! **Writing a partial over an earlier one** removes only irqsim's own files that it
//! replaces (a readable `shard.json`; in `runs/`, run files of this format whose
//! checksum holds and whose names the shard writes); a user's file, or another shard's
//! run file, stays. A file that is not irqsim's but has a name the shard writes is
//! refused before any work ([`check_dir`]).

use crate::config::read_limit::ReadBudget;
use crate::config::scenario::Experiment;
use crate::experiment::checkpoint::SavedRun;
pub use crate::experiment::identity::{BUILD_ID, scenario_hash};
use crate::experiment::run_file::{self, ExperimentIdentity, RunFileError};
use crate::results::{Results, ResultsFrame};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Name of a partial result's manifest in its directory.
pub const MANIFEST: &str = "shard.json";

/// Directory of a partial result's saved runs, under its directory.
pub const RUNS_DIR: &str = "runs";

/// Format tag of the manifest; another tag is refused.
pub const FORMAT: &str = "irqsim-shard/1";

/// The K-th of N slices of a sweep, K from 1 to N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which slice, 1-based.
    pub k: usize,
    /// How many slices.
    pub n: usize,
}

/// Why a `K/N` shard specification is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardSpecError {
    /// Not two integers separated by `/`.
    #[error("expected K/N, two whole numbers with K from 1 to N (e.g. 2/7), got `{0}`")]
    Syntax(String),
    /// N is 0.
    #[error("N (the number of shards) must be at least 1, got 0")]
    NoShards,
    /// K outside 1..=N.
    #[error("K must be from 1 to N = {n} (K is 1-based), got {k}")]
    OutOfRange {
        /// The K given.
        k: usize,
        /// The N given.
        n: usize,
    },
}

impl Shard {
    /// The K-th of N, checked: `1 <= k <= n`.
    pub fn new(k: usize, n: usize) -> Result<Shard, ShardSpecError> {
        if n == 0 {
            Err(ShardSpecError::NoShards)
        } else if k == 0 || k > n {
            Err(ShardSpecError::OutOfRange { k, n })
        } else {
            Ok(Shard { k, n })
        }
    }
}

impl FromStr for Shard {
    type Err = ShardSpecError;

    /// `K/N`, e.g. `2/7`.
    fn from_str(s: &str) -> Result<Shard, ShardSpecError> {
        let syntax = || ShardSpecError::Syntax(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(syntax)?;
        let num = |t: &str| t.trim().parse::<usize>().map_err(|_| syntax());
        Shard::new(num(k)?, num(n)?)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// The shard (0-based) of each run, given each run's estimated cost: most costly first
/// (ties in the given order), dealt in a snake over `n` shards. Every shard gets
/// `len / n` or `len / n + 1` runs.
pub fn assign(costs: &[f64], n: usize) -> Vec<usize> {
    assert!(n > 0, "at least one shard");
    let mut order: Vec<usize> = (0..costs.len()).collect();
    // A stable sort: equal costs keep their order.
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]));
    let mut shard = vec![0; costs.len()];
    for (i, &run) in order.iter().enumerate() {
        let (round, pos) = (i / n, i % n);
        shard[run] = if round % 2 == 0 { pos } else { n - 1 - pos };
    }
    shard
}

/// The runs of a sweep with this frame, in sweep order, as (variant, point,
/// replication) indices: the frame's points are in sweep order, variant by variant.
pub fn frame_runs(frame: &ResultsFrame) -> Vec<(usize, usize, usize)> {
    let reps = frame.replications as usize;
    let mut out = Vec::with_capacity(frame.runs());
    let (mut v, mut p) = (0, 0);
    for (i, pf) in frame.points.iter().enumerate() {
        if i > 0 {
            if pf.variant == frame.points[i - 1].variant {
                p += 1;
            } else {
                (v, p) = (v + 1, 0);
            }
        }
        out.extend((0..reps).map(|r| (v, p, r)));
    }
    out
}

/// The indices in sweep order of the runs of `shard`, increasing.
pub fn select(frame: &ResultsFrame, shard: Shard) -> Vec<usize> {
    let reps = frame.replications as usize;
    let costs: Vec<f64> = (0..frame.runs())
        .map(|k| frame.points[k / reps].offered_pps)
        .collect();
    assign(&costs, shard.n)
        .into_iter()
        .enumerate()
        .filter(|&(_, s)| s + 1 == shard.k)
        .map(|(k, _)| k)
        .collect()
}

/// What a partial result holds besides its runs (`shard.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: String,
    /// Scenario name.
    pub scenario: String,
    /// [`scenario_hash`] of the scenario as resolved.
    pub scenario_hash: String,
    /// Seed of the sweep.
    pub seed: u64,
    /// irqsim's package version.
    pub irqsim_version: String,
    /// irqsim's [`BUILD_ID`].
    pub irqsim_build: String,
    /// Which slice this is.
    pub shard: Shard,
    /// Runs in the whole sweep.
    pub total_runs: usize,
    /// The indices in sweep order of the runs held ([`select`]), increasing.
    pub runs: Vec<usize>,
    /// What the results are assembled in.
    pub frame: ResultsFrame,
}

impl Manifest {
    /// The manifest of `shard` of `exp`, built by this irqsim.
    pub fn new(exp: &Experiment, shard: Shard) -> Manifest {
        let frame = crate::experiment::identity::frame(exp);
        Manifest {
            format: FORMAT.to_string(),
            scenario: exp.name.clone(),
            scenario_hash: scenario_hash(exp),
            seed: exp.seed,
            irqsim_version: env!("CARGO_PKG_VERSION").to_string(),
            irqsim_build: BUILD_ID.to_string(),
            shard,
            total_runs: frame.runs(),
            runs: select(&frame, shard),
            frame,
        }
    }

    /// Who the sweep is, as its run files name it.
    pub fn experiment(&self) -> ExperimentIdentity {
        ExperimentIdentity {
            scenario_hash: self.scenario_hash.clone(),
            seed: self.seed,
            irqsim_version: self.irqsim_version.clone(),
            irqsim_build: self.irqsim_build.clone(),
        }
    }

    /// The fields that must be equal in every partial of one sweep: (name, value).
    fn identity(&self) -> [(&'static str, String); 7] {
        [
            ("format", self.format.clone()),
            ("scenario", self.scenario.clone()),
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
            ("shard count N", self.shard.n.to_string()),
        ]
    }
}

/// The file of run (v, p, r) under a partial result's directory.
fn run_file(dir: &Path, (v, p, r): (usize, usize, usize)) -> PathBuf {
    dir.join(RUNS_DIR).join(run_file::file_name(v, p, r))
}

/// Why a partial result cannot be written into a directory.
#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    /// A machine fault (listing, removing or writing a file): exit 1.
    #[error("{}: {err}", file.display())]
    Io {
        /// The file or directory.
        file: PathBuf,
        /// The I/O error.
        err: io::Error,
    },
    /// A file irqsim would write over, which it did not write: exit 2.
    #[error(
        "{}: not irqsim's own file ({why}), and this shard would write over it: move it away (irqsim deletes only what it wrote)",
        file.display()
    )]
    NotOurs {
        /// The file.
        file: PathBuf,
        /// Why it is not irqsim's.
        why: String,
    },
}

impl PartialError {
    /// The exit code: 1 for a machine fault, 2 for a file in the way.
    pub fn exit_code(&self) -> u8 {
        match self {
            PartialError::Io { .. } => 1,
            PartialError::NotOurs { .. } => 2,
        }
    }
}

/// What of an earlier partial result in `dir` irqsim removes before writing this one:
/// its `shard.json` if it is a manifest irqsim can read, and, in `runs/`, irqsim's own
/// run files ([`run_file::is_own`]) that have the name of a run this shard writes.
/// Anything else stays (a run file of another shard, a file of the user's): `merge`
/// reads only the run files a manifest lists. A file that is not irqsim's but has the
/// name of a file this shard writes (`shard.json`, or one of its run files) is refused. Checked before the shard simulates anything, and again when it
/// writes.
fn removable(
    dir: &Path,
    manifest: &Manifest,
    budget: &ReadBudget,
) -> Result<Vec<PathBuf>, PartialError> {
    let mut remove = Vec::new();
    let mpath = dir.join(MANIFEST);
    if mpath.exists() || mpath.is_symlink() {
        match read_manifest(dir, budget) {
            Ok(_) => remove.push(mpath),
            Err(e) => {
                return Err(PartialError::NotOurs {
                    file: mpath,
                    why: e.to_string(),
                });
            }
        }
    }
    let rdir = dir.join(RUNS_DIR);
    // (The manifest does not hold the models: a shard's run files are bounded by the
    // limit on what irqsim reads back, not by its runs' size.)
    let found = run_file::scan(&rdir, crate::config::read_limit::MAX_RESULT_BYTES, budget)
        .map_err(|err| PartialError::Io {
            file: rdir.clone(),
            err,
        })?;
    let ids = frame_runs(&manifest.frame);
    let mine: std::collections::BTreeSet<_> = manifest.runs.iter().map(|&k| ids[k]).collect();
    for f in found {
        if !mine.contains(&f.run) {
            continue; // not in the way (another shard's run, or a file of the user's)
        }
        match f.own {
            Ok(()) => remove.push(f.path),
            Err(why) => {
                return Err(PartialError::NotOurs {
                    file: f.path,
                    why: why.to_string(),
                });
            }
        }
    }
    Ok(remove)
}

/// Check, before any work, that the partial result `manifest` can be written into `dir`
/// without writing over a file irqsim did not write (what is read of it drawn from the
/// command's `budget`).
pub fn check_dir(dir: &Path, manifest: &Manifest, budget: &ReadBudget) -> Result<(), PartialError> {
    removable(dir, manifest, budget).map(|_| ())
}

/// Write a partial result into `dir` (created if needed): the runs of `manifest`, in
/// its order, then the manifest. An earlier partial there is replaced: irqsim's own
/// files of it are removed (see [`check_dir`]), anything else is left.
pub fn write_partial(
    dir: &Path,
    manifest: &Manifest,
    runs: &[SavedRun],
    budget: &ReadBudget,
) -> Result<(), PartialError> {
    assert_eq!(
        manifest.runs.len(),
        runs.len(),
        "one saved run per run held"
    );
    let io_err = |file: &Path| {
        let file = file.to_path_buf();
        move |err| PartialError::Io { file, err }
    };
    for f in removable(dir, manifest, budget)? {
        std::fs::remove_file(&f).map_err(io_err(&f))?;
    }
    let rdir = dir.join(RUNS_DIR);
    std::fs::create_dir_all(&rdir).map_err(io_err(&rdir))?;
    let ids = frame_runs(&manifest.frame);
    let experiment = manifest.experiment();
    let reps = manifest.frame.replications as usize;
    for (&k, run) in manifest.runs.iter().zip(runs) {
        let (v, p, r) = ids[k];
        let identity = experiment.run(v, &manifest.frame.points[k / reps].variant, p, r);
        let path = run_file(dir, ids[k]);
        crate::results::output::write_atomic(&path, run_file::encode(&identity, run).as_bytes())
            .map_err(io_err(&path))?;
    }
    let mpath = dir.join(MANIFEST);
    let text = serde_json::to_string_pretty(manifest).expect("plain data");
    crate::results::output::write_atomic(&mpath, format!("{text}\n").as_bytes())
        .map_err(io_err(&mpath))
}

/// Whether `dir` holds the finished partial result `manifest` describes: its
/// `shard.json` is `manifest` (the same scenario as resolved, seed, irqsim version and
/// build, shard and runs; the frame included) and every run file it lists exists. Such
/// a shard run again would write the same bytes. Whether the run files hold what they
/// should is for [`merge`] to check, as for any partial.
pub fn finished(dir: &Path, manifest: &Manifest, budget: &ReadBudget) -> bool {
    match read_manifest(dir, budget) {
        Ok(m) if m == *manifest => {
            let ids = frame_runs(&m.frame);
            m.runs.iter().all(|&k| run_file(dir, ids[k]).is_file())
        }
        _ => false,
    }
}

/// Why partial results cannot be merged. Every variant names the directory or file at
/// fault; all are problems of the input (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No directory given.
    #[error("no partial result given")]
    Nothing,
    /// The directory has no manifest.
    #[error(
        "{dir}: not a partial result (no {MANIFEST}); make one with `irqsim run SCENARIO --shard K/N --out {dir}`"
    )]
    NotPartial {
        /// The directory.
        dir: String,
    },
    /// A file that cannot be read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The file.
        file: String,
        /// The I/O error.
        source: io::Error,
    },
    /// A file that is not what irqsim writes.
    #[error("{file}: not a partial result this irqsim can read: {msg}")]
    Format {
        /// The file.
        file: String,
        /// What is wrong.
        msg: String,
    },
    /// Two partials of different sweeps.
    #[error(
        "{dir}: {field} is `{here}`, but `{there}` in {first}: partials of different sweeps cannot be merged"
    )]
    Mismatch {
        /// The directory that differs from the first.
        dir: String,
        /// The field that differs.
        field: &'static str,
        /// Its value there.
        here: String,
        /// The first directory given.
        first: String,
        /// The field's value in the first.
        there: String,
    },
    /// One shard given twice.
    #[error("{dir}: shard {shard} is given twice (also {first}); give each shard once")]
    Duplicate {
        /// The shard.
        shard: Shard,
        /// The directory given first.
        first: String,
        /// The directory given again.
        dir: String,
    },
    /// Shards not given.
    #[error("shard{} {} of {n} missing: give every shard's directory", if .missing.len() > 1 { "s" } else { "" }, .missing.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", "))]
    MissingShards {
        /// The missing K (1-based).
        missing: Vec<usize>,
        /// N.
        n: usize,
    },
    /// The runs listed are not the shard's slice.
    #[error(
        "{dir}: `runs` are not the runs of shard {shard} of this sweep ({MANIFEST} edited, or written with another slicing)"
    )]
    WrongRuns {
        /// The directory.
        dir: String,
        /// Its shard.
        shard: Shard,
    },
    /// A run file that cannot be trusted: unreadable, another format, its checksum
    /// failing, another run's identity, or books that do not balance.
    #[error("{0}")]
    RunFile(RunFileError),
    /// A run file listed but absent.
    #[error(
        "{file}: missing: the shard is incomplete; run it again (with --resume while its checkpoint is there)"
    )]
    MissingRun {
        /// The file.
        file: String,
        /// Index of the run in sweep order.
        run: usize,
    },
}

/// Read the manifest of the partial result in `dir`, from the command's `budget`.
pub fn read_manifest(dir: &Path, budget: &ReadBudget) -> Result<Manifest, MergeError> {
    let path = dir.join(MANIFEST);
    let file = path.display().to_string();
    let text = match budget.read_text(&path, crate::config::read_limit::MAX_RESULT_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(MergeError::NotPartial {
                dir: dir.display().to_string(),
            });
        }
        Err(source) => return Err(MergeError::Read { file, source }),
    };
    let m: Manifest = serde_json::from_str(&text).map_err(|e| MergeError::Format {
        file: file.clone(),
        msg: crate::sim::forms::readable(&e.to_string()),
    })?;
    let bad = |msg: String| MergeError::Format {
        file: file.clone(),
        msg,
    };
    if m.format != FORMAT {
        return Err(bad(format!(
            "format is `{}`, this irqsim reads `{FORMAT}`",
            m.format
        )));
    }
    if Shard::new(m.shard.k, m.shard.n).is_err() {
        return Err(bad(format!(
            "`shard` {} is not K/N with 1 <= K <= N",
            m.shard
        )));
    }
    // Its names become paths (irqsim-out/<scenario>/, smartbits-<variant>.csv).
    let mut names = m.frame.name_problems("frame.");
    if let Err(e) = crate::config::names::check(&m.scenario) {
        names.insert(
            0,
            crate::sim::problems::Problem {
                path: "scenario".into(),
                reason: e.to_string(),
            },
        );
    }
    if let Some(p) = names.first() {
        return Err(bad(p.to_string()));
    }
    if m.frame.replications == 0 || m.total_runs != m.frame.runs() {
        return Err(bad(format!(
            "`total_runs` is {}, the frame has {} points x {} replications",
            m.total_runs,
            m.frame.points.len(),
            m.frame.replications
        )));
    }
    Ok(m)
}

/// What [`merge`] gives.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The results, as a single run of the whole sweep gives them.
    pub results: Results,
    /// Shards merged (N).
    pub shards: usize,
    /// Runs in the sweep.
    pub runs: usize,
}

/// Merge the partial results in `dirs` (in any order) into the results of the whole
/// sweep, after checking that they are the N shards of one sweep by one irqsim build,
/// each once, each complete; what is read drawn from the command's `budget`.
pub fn merge(dirs: &[PathBuf], budget: &ReadBudget) -> Result<Merged, MergeError> {
    let shown = |d: &Path| d.display().to_string();
    let manifests = dirs
        .iter()
        .map(|d| read_manifest(d, budget))
        .collect::<Result<Vec<_>, _>>()?;
    let first = manifests.first().ok_or(MergeError::Nothing)?;
    let want = first.identity();
    for (dir, m) in dirs.iter().zip(&manifests).skip(1) {
        for ((field, there), (_, here)) in want.iter().zip(m.identity()) {
            if *there != here {
                return Err(MergeError::Mismatch {
                    dir: shown(dir),
                    field,
                    here,
                    first: shown(&dirs[0]),
                    there: there.clone(),
                });
            }
        }
    }
    // The scenario hash covers the frame; a frame that differs all the same was edited.
    for (dir, m) in dirs.iter().zip(&manifests) {
        if m.frame != first.frame {
            return Err(MergeError::Format {
                file: shown(&dir.join(MANIFEST)),
                msg: format!(
                    "its `frame` differs from {}'s though the scenario hash is the same",
                    shown(&dirs[0])
                ),
            });
        }
    }
    let n = first.shard.n;
    let mut by_k: Vec<Option<usize>> = vec![None; n];
    for (i, m) in manifests.iter().enumerate() {
        if let Some(j) = by_k[m.shard.k - 1] {
            return Err(MergeError::Duplicate {
                shard: m.shard,
                first: shown(&dirs[j]),
                dir: shown(&dirs[i]),
            });
        }
        by_k[m.shard.k - 1] = Some(i);
    }
    let missing: Vec<usize> = (1..=n).filter(|k| by_k[k - 1].is_none()).collect();
    if !missing.is_empty() {
        return Err(MergeError::MissingShards { missing, n });
    }
    let ids = frame_runs(&first.frame);
    let mut runs: Vec<Option<SavedRun>> = (0..first.total_runs).map(|_| None).collect();
    for (dir, m) in dirs.iter().zip(&manifests) {
        if m.runs != select(&first.frame, m.shard) {
            return Err(MergeError::WrongRuns {
                dir: shown(dir),
                shard: m.shard,
            });
        }
        let experiment = m.experiment();
        let reps = m.frame.replications as usize;
        for &k in &m.runs {
            let path = run_file(dir, ids[k]);
            if !(path.exists() || path.is_symlink()) {
                return Err(MergeError::MissingRun {
                    file: shown(&path),
                    run: k,
                });
            }
            let (v, p, r) = ids[k];
            let expected = experiment.run(v, &m.frame.points[k / reps].variant, p, r);
            let run = run_file::read(
                &path,
                &expected,
                crate::config::read_limit::MAX_RESULT_BYTES,
                budget,
            )
            .map_err(MergeError::RunFile)?;
            runs[k] = Some(run);
        }
    }
    // The slices are disjoint and cover the sweep (checked above), so every run is here.
    let runs = runs.into_iter().map(|r| {
        let r = r.expect("the shards' slices cover the sweep");
        (r.figures, r.timeline)
    });
    Ok(Merged {
        results: crate::results::summary::assemble(&first.frame, runs),
        shards: n,
        runs: first.total_runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_are_checked() {
        assert_eq!("2/7".parse(), Ok(Shard { k: 2, n: 7 }));
        assert_eq!(" 1 / 1 ".parse(), Ok(Shard { k: 1, n: 1 }));
        assert_eq!(
            "0/3".parse::<Shard>(),
            Err(ShardSpecError::OutOfRange { k: 0, n: 3 })
        );
        assert_eq!(
            "4/3".parse::<Shard>(),
            Err(ShardSpecError::OutOfRange { k: 4, n: 3 })
        );
        assert_eq!("1/0".parse::<Shard>(), Err(ShardSpecError::NoShards));
        for bad in ["3", "a/b", "1/2/3", "-1/2", ""] {
            assert_eq!(
                bad.parse::<Shard>(),
                Err(ShardSpecError::Syntax(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(Shard { k: 2, n: 7 }.to_string(), "2/7");
    }

    #[test]
    fn slices_are_disjoint_balanced_and_mix_costs() {
        let costs: Vec<f64> = (0..30).map(|i| (i / 3) as f64).collect();
        for n in 1..=12 {
            let s = assign(&costs, n);
            let mut count = vec![0usize; n];
            let mut cost = vec![0.0; n];
            for (k, &sh) in s.iter().enumerate() {
                assert!(sh < n);
                count[sh] += 1;
                cost[sh] += costs[k];
            }
            let (lo, hi) = (count.iter().min().unwrap(), count.iter().max().unwrap());
            assert!(hi - lo <= 1, "n = {n}: counts {count:?}");
            // The snake: cost differs between shards by at most one costliest run.
            let (clo, chi) = (
                cost.iter().cloned().fold(f64::INFINITY, f64::min),
                cost.iter().cloned().fold(0.0, f64::max),
            );
            assert!(chi - clo <= 9.0, "n = {n}: costs {cost:?}");
        }
        // Most costly first (runs 27-29, then 24-26), dealt to shards 1, 2, 3, 3, 2, 1.
        assert_eq!(&assign(&costs, 3)[24..], &[2, 1, 0, 0, 1, 2]);
        // Equal costs: a snake in sweep order.
        assert_eq!(assign(&[0.0; 7], 3), vec![0, 1, 2, 2, 1, 0, 0]);
    }
}
