//! The scenario loader on arbitrary bytes: the input is written to a temporary file
//! `scenarios/case.json` beside copies of the shipped models and measured tables (so the
//! relative paths of real scenarios resolve) and loaded with `irqsim::config::scenario::load`.
//! Every input must give an experiment or an error; a panic is a finding.
//!
//! Files are read from disk as `DiskFiles` does, except outside the temporary copy: a
//! scenario may name any path as its model or measured table, and the fuzzer must not
//! read /dev/zero or /dev/stdin forever.

#![no_main]

use irqsim::config::scenario::{self, DiskFiles, FileSource};
use libfuzzer_sys::fuzz_target;
use retry::retry;

mod retry;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

struct Sandbox {
    /// Kept so the directory lives as long as the process.
    _dir: tempfile::TempDir,
    root: PathBuf,
    scenario: PathBuf,
}

/// `DiskFiles` confined to the sandbox.
struct Confined<'a>(&'a Path);

impl FileSource for Confined<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        let real = std::fs::canonicalize(path)?;
        if !real.starts_with(self.0) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "outside the fuzzing sandbox",
            ));
        }
        DiskFiles::default().read(path)
    }
}

fn sandbox() -> &'static Sandbox {
    static CELL: OnceLock<Sandbox> = OnceLock::new();
    CELL.get_or_init(|| {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = retry(tempfile::tempdir).expect("temp dir");
        for sub in ["models", "scenarios/measured"] {
            retry(|| std::fs::create_dir_all(dir.path().join(sub))).expect("mkdir");
            for e in retry(|| std::fs::read_dir(repo.join(sub))).expect("shipped files") {
                let p = e.expect("entry").path();
                if p.is_file() {
                    let to = dir.path().join(sub).join(p.file_name().expect("name"));
                    retry(|| std::fs::copy(&p, &to)).expect("copy");
                }
            }
        }
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let scenario = dir.path().join("scenarios").join("case.json");
        Sandbox {
            _dir: dir,
            root,
            scenario,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let sb = sandbox();
    retry(|| std::fs::write(&sb.scenario, data)).expect("write the scenario");
    if let Err(e) = scenario::load(&sb.scenario, &Confined(&sb.root)) {
        // The message the CLI prints must not panic either.
        assert!(!e.to_string().is_empty());
    }
});
