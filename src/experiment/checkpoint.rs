//! Checkpoints of a sweep in progress, so that an interrupted run can be resumed.
//!
//! Every finished run (variant x point x replication) is saved as
//! `DIR/.checkpoint/v<variant>-p<point>-r<replication>.json`, a run file
//! ([`crate::experiment::run_file`]: format tag, identity of the experiment and of the run, SHA-256
//! of its content), written atomically, next to `experiment.id`: a fingerprint of
//! everything that determines the results (models after overrides, flows, load points,
//! durations, seed, replications, timeline, latency convention, and irqsim's version
//! and build identity ([`crate::experiment::shard::BUILD_ID`]: sources, `Cargo.lock`, compiler,
//! target, profile), so a changed simulator does not resume an older one's runs; the
//! same build identity as the run files' and the shards').
//! `irqsim run --resume` reloads the saved runs of the same experiment, runs the
//! others, and writes exactly what an uninterrupted run writes (the saved figures
//! round-trip exactly through JSON).
//!
//! **What is resumed, what is refused** (decided in [`Checkpoint::open`], before any run
//! starts):
//! - `--resume`, and `experiment.id` is this experiment's fingerprint: the checkpoint is
//!   resumed. Every file in it named as a run file is read and checked (format,
//!   checksum, identity: the run of this experiment its name gives, books); one that
//!   fails any check (edited, cut short, swapped with another run's, copied from another
//!   seed's checkpoint or shard, a link to a device, in the older format) is refused:
//!   the command stops with exit 2 naming the file and what is wrong, and nothing is
//!   simulated or written.
//! - `--resume`, and `experiment.id` is another experiment's, or not a fingerprint: not
//!   resumed, refused with exit 2 ("run without --resume to start over").
//! - `--resume` and no `experiment.id` (irqsim writes it before its first run file, so
//!   a checkpoint without it is not irqsim's unfinished work), or no `--resume`: nothing
//!   is resumed, no run file there is read for its figures; the sweep starts afresh.
//! - Starting afresh removes only irqsim's own files: `experiment.id` holding a
//!   fingerprint, and files named as run files in this format whose checksum holds
//!   ([`crate::experiment::run_file::is_own`]). Anything else is left in place, and never read; a
//!   file that is not irqsim's but has the name of a run file this sweep will write is
//!   refused with exit 2 (irqsim would write over it), naming it.
//!
//! The directory and `experiment.id` are created when the first run is saved, not
//! before: a command refused, or stopped before it finished a run, leaves no
//! checkpoint. Once the results are written, the run files this sweep saved or
//! reloaded and `experiment.id` are removed, then the directory if it is empty (files
//! someone else left there stay).

use crate::config::read_limit::ReadBudget;
use crate::config::scenario::Experiment;
pub use crate::experiment::identity::{experiment_doc, fingerprint};
use crate::experiment::run_file::{self, ExperimentIdentity, RunFileError};
use crate::results::output::write_named;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use crate::experiment::run_file::SavedRun;

/// Name of the checkpoint directory under the output directory.
pub const DIR: &str = ".checkpoint";

/// Name of the experiment's fingerprint file in the checkpoint directory.
pub const ID_FILE: &str = "experiment.id";

/// A run by its (variant, load point, replication) indices.
type RunIndex = (usize, usize, usize);

/// What a checkpoint has put on disk.
#[derive(Debug, Default)]
struct Written {
    /// The directory and `experiment.id` exist (made at the first save, or resumed).
    created: bool,
    /// The run files this sweep wrote or reloaded.
    runs: BTreeSet<RunIndex>,
}

/// A checkpoint directory bound to one experiment.
#[derive(Debug)]
pub struct Checkpoint {
    dir: PathBuf,
    /// [`fingerprint`] of the experiment.
    id: String,
    /// Who the experiment is, for the identity of each run file.
    identity: ExperimentIdentity,
    /// Variant names, by index.
    variants: Vec<String>,
    /// Runs reloaded from an earlier attempt, checked, by (variant, point, replication).
    saved: BTreeMap<RunIndex, SavedRun>,
    /// Whether the directory and `experiment.id` exist (created at the first save), and
    /// the run files this sweep wrote or reloaded: what [`Checkpoint::finish`] removes.
    written: Mutex<Written>,
}

/// Why a checkpoint is not opened.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The directory cannot be listed or a file removed (a machine fault: exit 1).
    #[error("{}: {err}", dir.display())]
    Io {
        /// The directory or file.
        dir: PathBuf,
        /// The I/O error.
        err: io::Error,
    },
    /// `--resume` on the checkpoint of another experiment.
    #[error(
        "{}: the checkpoint of a different experiment (scenario, model, seed or the irqsim build changed; {}); run without --resume to start over",
        dir.display(),
        why
    )]
    OtherExperiment {
        /// The checkpoint directory.
        dir: PathBuf,
        /// What its `experiment.id` holds.
        why: String,
    },
    /// A file irqsim would write over, which it did not write.
    #[error(
        "{}: not irqsim's own file ({why}), and this sweep would write over it: move it away (irqsim deletes only what it wrote)",
        file.display()
    )]
    NotOurs {
        /// The file.
        file: PathBuf,
        /// Why it is not irqsim's.
        why: String,
    },
    /// A run file of the checkpoint being resumed that cannot be trusted.
    #[error("{0}; remove it (or run without --resume to start over)")]
    RunFile(RunFileError),
}

impl CheckpointError {
    /// The exit code: 1 for a machine fault, 2 for what the user's files are.
    pub fn exit_code(&self) -> u8 {
        match self {
            CheckpointError::Io { .. } => 1,
            _ => 2,
        }
    }
}

/// Whether `text` is an `experiment.id` as irqsim writes it: 16 hex digits and a newline.
fn is_fingerprint(text: &str) -> bool {
    text.len() == 17 && text.ends_with('\n') && text[..16].bytes().all(|b| b.is_ascii_hexdigit())
}

impl Checkpoint {
    /// Open the checkpoint of `exp` under `out` (see the module documentation for what
    /// is resumed, refused or removed), reading its files from the command's `budget`.
    /// Nothing is created on disk here.
    pub fn open(
        out: &Path,
        exp: &Experiment,
        resume: bool,
        budget: &ReadBudget,
    ) -> Result<Checkpoint, CheckpointError> {
        let dir = out.join(DIR);
        let id = fingerprint(exp);
        let id_file = dir.join(ID_FILE);
        let io_err = |dir: &Path| {
            let dir = dir.to_path_buf();
            move |err| CheckpointError::Io { dir, err }
        };
        let mut cp = Checkpoint {
            dir: dir.clone(),
            id: id.clone(),
            identity: ExperimentIdentity::of(exp),
            variants: exp.variants.iter().map(|v| v.name.clone()).collect(),
            saved: BTreeMap::new(),
            written: Mutex::new(Written::default()),
        };
        let old_id = match budget.read_text(&id_file, 64) {
            Ok(t) => Some(Ok(t)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => Some(Err(e)),
        };
        // A run file larger than a run of this experiment can be is refused by its size
        // before a byte of it is read.
        let limit = run_file::max_bytes(exp);
        let found = run_file::scan(&dir, limit, budget).map_err(io_err(&dir))?;
        let (npoints, reps) = (exp.npoints(), exp.replications as usize);
        let in_sweep =
            |&(v, p, r): &(usize, usize, usize)| v < exp.variants.len() && p < npoints && r < reps;
        if resume && let Some(old) = old_id {
            match old {
                Ok(t) if t.trim() == id => {}
                Ok(t) => {
                    return Err(CheckpointError::OtherExperiment {
                        dir,
                        why: if is_fingerprint(&t) {
                            format!("its {ID_FILE} is {}, this experiment's is {id}", t.trim())
                        } else {
                            format!("its {ID_FILE} is not a fingerprint irqsim wrote")
                        },
                    });
                }
                Err(e) => {
                    return Err(CheckpointError::OtherExperiment {
                        dir,
                        why: format!("its {ID_FILE} cannot be read: {e}"),
                    });
                }
            }
            for f in found {
                let (v, p, r) = f.run;
                let name = cp.variants.get(v).map_or("", |s| s.as_str());
                let expected = cp.identity.run(v, name, p, r);
                if !in_sweep(&f.run) {
                    return Err(CheckpointError::RunFile(RunFileError {
                        file: f.path,
                        problem: run_file::Problem::Format(format!(
                            "this experiment has no run v{v}-p{p}-r{r} ({} variant(s) x {npoints} points x {reps} replication(s))",
                            exp.variants.len()
                        )),
                    }));
                }
                let run = run_file::read(&f.path, &expected, limit, budget)
                    .map_err(CheckpointError::RunFile)?;
                cp.saved.insert(f.run, run);
            }
            let keys = cp.saved.keys().copied().collect();
            *cp.written.get_mut().expect("not shared yet") = Written {
                created: true,
                runs: keys,
            };
            return Ok(cp);
        }
        // Start afresh: remove irqsim's own files only, and only once it is known that
        // nothing there is in the way (decided first, so a refusal removes nothing).
        let mut remove = Vec::new();
        match budget.read_text(&id_file, 64) {
            Ok(t) if is_fingerprint(&t) => remove.push(id_file.clone()),
            Ok(_) => {
                return Err(CheckpointError::NotOurs {
                    file: id_file,
                    why: "it does not hold a fingerprint".into(),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CheckpointError::NotOurs {
                    file: id_file,
                    why: e.to_string(),
                });
            }
        }
        for f in found {
            match f.own {
                Ok(()) => remove.push(f.path),
                Err(why) if in_sweep(&f.run) => {
                    return Err(CheckpointError::NotOurs {
                        file: f.path,
                        why: why.to_string(),
                    });
                }
                Err(_) => {} // not irqsim's, and not in the way: left as it is
            }
        }
        for path in remove {
            std::fs::remove_file(&path).map_err(io_err(&path))?;
        }
        // Only an empty directory goes; one holding someone else's files stays.
        let _ = std::fs::remove_dir(&dir);
        Ok(cp)
    }

    fn file(&self, v: usize, p: usize, r: usize) -> PathBuf {
        self.dir.join(run_file::file_name(v, p, r))
    }

    /// A run reloaded from an earlier attempt, if any (checked when the checkpoint was
    /// opened).
    pub fn load(&self, v: usize, p: usize, r: usize) -> Option<SavedRun> {
        self.saved.get(&(v, p, r)).cloned()
    }

    /// Save a finished run (creating the directory and `experiment.id` at the first).
    pub fn save(&self, v: usize, p: usize, r: usize, run: &SavedRun) -> io::Result<()> {
        let name = self.variants.get(v).map_or("", |s| s.as_str());
        let text = run_file::encode(&self.identity.run(v, name, p, r), run);
        let mut w = self.written.lock().unwrap_or_else(|e| e.into_inner());
        if !w.created {
            let existed = self.dir.exists();
            std::fs::create_dir_all(&self.dir)?;
            if let Err(e) =
                write_named(&self.dir.join(ID_FILE), format!("{}\n", self.id).as_bytes())
            {
                // A directory made here and left empty (a full disk) would be a
                // checkpoint without a fingerprint: removed again when it is empty.
                if !existed {
                    let _ = std::fs::remove_dir(&self.dir);
                }
                return Err(e);
            }
            w.created = true;
        }
        write_named(&self.file(v, p, r), text.as_bytes())?;
        w.runs.insert((v, p, r));
        Ok(())
    }

    /// Remove the checkpoint (the results are written): the run files this sweep saved
    /// or reloaded, `experiment.id`, then the directory if nothing else is left in it.
    pub fn finish(self) -> io::Result<()> {
        let Written { created, runs } =
            self.written.into_inner().unwrap_or_else(|e| e.into_inner());
        if !created {
            return Ok(());
        }
        for (v, p, r) in runs {
            let f = self.dir.join(run_file::file_name(v, p, r));
            match std::fs::remove_file(&f) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        match std::fs::remove_file(self.dir.join(ID_FILE)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        match std::fs::remove_dir(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            // Someone else's files are there: they stay, and so does the directory.
            Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => Ok(()),
            Err(e) => Err(e),
        }
    }
}
