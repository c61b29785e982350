//! Where a scenario's files come from ([`FileSource`]: the disk under the command's
//! read budget, or the copies built into the binary), and reading one with its problems
//! located.

use super::*;

/// Where input files come from: the disk, or the copies built into the binary.
pub trait FileSource {
    /// The file's text.
    fn read(&self, path: &Path) -> std::io::Result<String>;

    /// A binary file's bytes (a capture a flow replays); by default none can be read.
    fn read_bytes(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let _ = path;
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "binary files are read from the disk only",
        ))
    }

    /// The path of `rel` (as written in a file in `dir`) to read it by: `dir/rel` with
    /// `.` and `..` resolved lexically (see `normalize`).
    fn resolve(&self, dir: &Path, rel: &str) -> PathBuf {
        normalize(&dir.join(rel))
    }

    /// The file's identity (device, inode), when the source has one: two paths of one
    /// identity are one file, read once.
    fn identity(&self, path: &Path) -> Option<(u64, u64)> {
        let _ = path;
        None
    }

    /// Count the capture `path` in what the command reads, before any capture is read:
    /// its size (`stat`) when the source knows it (the disk), checked against the
    /// capture's limit and what is left of the command's budget; `Ok(None)` when the
    /// source has no sizes (the built-in files).
    fn reserve_capture(&self, path: &Path) -> std::io::Result<Option<u64>> {
        let _ = path;
        Ok(None)
    }
}

/// Files on disk, every read drawn from the command's one [`ReadBudget`] (made where
/// the command starts and shared with its other readers: checkpoints, results).
#[derive(Debug, Clone)]
pub struct DiskFiles {
    budget: Arc<ReadBudget>,
}

impl Default for DiskFiles {
    /// With a budget of its own ([`ReadBudget::command`]).
    fn default() -> Self {
        DiskFiles::new(Arc::new(ReadBudget::command()))
    }
}

impl DiskFiles {
    /// Reading from `budget`.
    pub fn new(budget: Arc<ReadBudget>) -> DiskFiles {
        DiskFiles { budget }
    }

    /// The budget every read draws from.
    pub fn budget(&self) -> &Arc<ReadBudget> {
        &self.budget
    }
}

impl FileSource for DiskFiles {
    /// A regular file of at most [`crate::config::read_limit::MAX_INPUT_BYTES`].
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.budget
            .read_text(path, crate::config::read_limit::MAX_INPUT_BYTES)
    }

    /// A regular file of at most [`crate::config::capture::MAX_CAPTURE_BYTES`].
    fn read_bytes(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.budget
            .read_bytes(path, crate::config::capture::MAX_CAPTURE_BYTES, true)
    }

    fn identity(&self, path: &Path) -> Option<(u64, u64)> {
        ReadBudget::identity(path).ok()
    }

    fn reserve_capture(&self, path: &Path) -> std::io::Result<Option<u64>> {
        self.budget
            .reserve(path, crate::config::capture::MAX_CAPTURE_BYTES)
            .map(Some)
    }

    /// As the file system resolves `dir/rel`: the lexical form (which messages print)
    /// when it names the same directory (or neither exists), else `dir/rel` as joined
    /// (a `..` after a symbolic link climbs from the link's target, which the lexical
    /// form cannot know).
    fn resolve(&self, dir: &Path, rel: &str) -> PathBuf {
        let joined = dir.join(rel);
        let lexical = normalize(&joined);
        let real_dir = |p: &Path| {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            std::fs::canonicalize(parent.unwrap_or(Path::new(".")))
        };
        match (real_dir(&joined), real_dir(&lexical)) {
            (Ok(a), Ok(b)) if a == b => lexical,
            (Ok(_), _) => joined,
            _ => lexical,
        }
    }
}

/// The default scenario, its model and its measured table, built into the binary so that
/// `irqsim` with no arguments works anywhere.
pub struct BuiltinFiles;

/// Path of the built-in default scenario.
pub const BUILTIN_SCENARIO: &str = "scenarios/dc21143-64b-1flow.json";

pub(super) const BUILTIN: &[(&str, &str)] = &[
    (
        BUILTIN_SCENARIO,
        include_str!("../../../scenarios/dc21143-64b-1flow.json"),
    ),
    (
        "models/p3-448-dc21143-freebsd4.json",
        include_str!("../../../models/p3-448-dc21143-freebsd4.json"),
    ),
    (
        "scenarios/measured/test_25Mx64x1.csv",
        include_str!("../../../scenarios/measured/test_25Mx64x1.csv"),
    ),
];

impl FileSource for BuiltinFiles {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        let want = normalize(path);
        BUILTIN
            .iter()
            .find(|(p, _)| Path::new(p) == want)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not a built-in file"))
    }
}

/// Lexically resolve `.` and `..` (no file-system access): a `..` removes the name
/// before it; one with no name before it (only `..`s, or nothing) is kept, and one
/// right after the root is dropped (`/..` is `/`).
pub(super) fn normalize(p: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

pub(super) fn read(files: &dyn FileSource, path: &Path) -> Result<String, InputError> {
    files.read(path).map_err(|source| InputError::Read {
        file: path.display().to_string(),
        source,
    })
}

/// A measured table named by the scenario's field `field` (`measured`,
/// `measured_rates`), resolved from its directory `dir`, read with the input limit and
/// parsed by `parse`: `Some((path, table))`, or `None` with the problem recorded (a
/// CSV error at its line in the table's file, an unreadable file at `field` in the
/// scenario's file `sfile`). Other errors end the load.
pub(super) fn read_table_file<T>(
    files: &dyn FileSource,
    dir: &Path,
    name: &str,
    field: &str,
    sfile: &str,
    problems: &mut Vec<FileProblem>,
    parse: impl FnOnce(&str, &str) -> Result<T, InputError>,
) -> Result<Option<(String, T)>, InputError> {
    let mpath = files.resolve(dir, name);
    let mf = mpath.display().to_string();
    match read(files, &mpath) {
        Ok(t) => match parse(&mf, &t) {
            Ok(table) => Ok(Some((mf, table))),
            Err(InputError::Csv { file, line, msg }) => {
                problems.push(FileProblem {
                    file,
                    problem: Problem {
                        path: format!("line {line}"),
                        reason: msg,
                    },
                });
                Ok(None)
            }
            Err(e) => Err(e),
        },
        Err(InputError::Read { source, .. }) => {
            problems.push(FileProblem {
                file: sfile.to_string(),
                problem: Problem {
                    path: field.into(),
                    reason: format!("cannot read `{mf}`: {source}"),
                },
            });
            Ok(None)
        }
        Err(e) => Err(e),
    }
}
