//! Damaged checkpoints and shard partials: the input damages the run files of an
//! interrupted sweep's checkpoint and of a one-shard partial result (bits flipped, bytes
//! replaced, files cut short, swapped, copied from another seed's run, or replaced by
//! the input itself), then the checkpoint is resumed (`Checkpoint::open(.., true, budget)` and
//! `runner::run_with`) and the partial merged (`shard::merge`).
//!
//! Each must end in a refusal of the user's files (a `CheckpointError` with exit code 2,
//! a `MergeError`), or in results byte-identical to a clean run's: never results mixed
//! from two runs. A panic, an accepted run whose results differ, or a refusal that does
//! not name a run file is a finding.
//!
//! The sweep is tiny (one flow of Poisson arrivals, load points 10 % and 30 %, two
//! replications, 0.005 s each: 4 runs), so one input runs in a few milliseconds.

#![no_main]

use irqsim::experiment::checkpoint::Checkpoint;
use irqsim::experiment::runner::{self, RunError};
use irqsim::config::scenario::{self, DiskFiles, Experiment};
use irqsim::experiment::shard::{self, Manifest, Shard};
use libfuzzer_sys::fuzz_target;
use retry::retry;

mod retry;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What every input starts from, made once.
struct Base {
    /// Kept so the directory lives as long as the process.
    _dir: tempfile::TempDir,
    exp: Experiment,
    /// results.json of a clean run (seed 1).
    clean: String,
    /// Checkpoints interrupted after 2 runs, seeds 1 and 7 (their `.checkpoint/`).
    checkpoint: [PathBuf; 2],
    /// One-shard partials, seeds 1 and 7.
    partial: [PathBuf; 2],
}

fn base() -> &'static Base {
    static CELL: OnceLock<Base> = OnceLock::new();
    CELL.get_or_init(|| {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = retry(tempfile::tempdir).expect("temp dir");
        let mut sc: serde_json::Value = serde_json::from_str(
            &retry(|| std::fs::read_to_string(repo.join("scenarios/dc21143-64b-1flow.json")))
                .expect("shipped scenario"),
        )
        .expect("JSON");
        let model = repo.join("models/p3-448-dc21143-freebsd4.json");
        sc["model"] = json!(model.to_str().expect("UTF-8 path"));
        sc.as_object_mut().expect("object").remove("measured");
        sc["workload"]["flows"][0]["arrivals"] = json!("poisson");
        sc["load"] = json!({"unit": "percent", "points": [10, 30]});
        sc["duration_s"] = json!(0.005);
        sc["drain_s"] = json!(0.005);
        sc["replications"] = json!(2);
        sc["timeline"] = json!({"bucket_ms": 1});
        sc["seed"] = json!(1);
        let path = dir.path().join("tiny.json");
        retry(|| std::fs::write(&path, sc.to_string())).expect("write");
        let exp = scenario::load(&path, &DiskFiles::default()).expect("the tiny sweep loads");
        let clean = runner::run(&exp, 1, &|| {}).expect("runs").to_json();
        let mut checkpoint = Vec::new();
        let mut partial = Vec::new();
        for seed in [1u64, 7] {
            let mut e = exp.clone();
            e.seed = seed;
            let out = dir.path().join(format!("cut-{seed}"));
            let ck = Checkpoint::open(&out, &e, false, &irqsim::config::read_limit::ReadBudget::command()).expect("open");
            let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
            let on_done = || {
                if done.fetch_add(1, Ordering::SeqCst) + 1 >= 2 {
                    stop.store(true, Ordering::SeqCst);
                }
            };
            match runner::run_with(&e, 1, &on_done, Some(&ck), Some(&stop)) {
                Err(RunError::Interrupted { .. }) => {}
                other => panic!("expected an interruption: {other:?}"),
            }
            checkpoint.push(out.join(irqsim::experiment::checkpoint::DIR));
            let p = dir.path().join(format!("partial-{seed}"));
            let m = Manifest::new(&e, Shard::new(1, 1).expect("1/1"));
            let runs = runner::run_selected(&e, 1, &|| {}, None, None, &m.runs).expect("runs");
            shard::write_partial(&p, &m, &runs, &irqsim::config::read_limit::ReadBudget::command()).expect("write the partial");
            partial.push(p);
        }
        Base {
            _dir: dir,
            exp,
            clean,
            checkpoint: checkpoint.try_into().expect("two"),
            partial: partial.try_into().expect("two"),
        }
    })
}

/// The run files (named `v*-p*-r*.json`) directly in `dir`, sorted.
fn run_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(irqsim::experiment::run_file::parse_name)
                .is_some()
        })
        .collect();
    v.sort();
    v
}

fn copy_dir(from: &Path, to: &Path) {
    retry(|| std::fs::create_dir_all(to)).expect("mkdir");
    for e in retry(|| std::fs::read_dir(from)).expect("list") {
        let p = e.expect("entry").path();
        let t = to.join(p.file_name().expect("name"));
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            retry(|| std::fs::copy(&p, &t)).expect("copy");
        }
    }
}

/// Damage `files` as `data` says: a sequence of (operation, file, argument) bytes; the
/// operation `5` replaces the file by the rest of the input. `twin` is the same file of
/// seed 7.
fn damage(data: &[u8], files: &[PathBuf], twin: &dyn Fn(&Path) -> PathBuf) {
    let mut i = 0;
    while i + 2 < data.len() {
        let (op, f, arg) = (data[i], data[i + 1] as usize, data[i + 2]);
        i += 3;
        let p = &files[f % files.len()];
        let mut b = retry(|| std::fs::read(p)).expect("read");
        match op % 6 {
            0 if !b.is_empty() => {
                let at = (arg as usize * 257 + f) % b.len();
                b[at] ^= 1 << (arg % 8);
            }
            1 if !b.is_empty() => {
                let at = (arg as usize * 131 + f) % b.len();
                b[at] = data.get(i).copied().unwrap_or(b'0');
            }
            2 => b.truncate(b.len() * arg as usize / 256),
            3 => {
                let q = &files[arg as usize % files.len()];
                let other = retry(|| std::fs::read(q)).expect("read");
                retry(|| std::fs::write(q, &b)).expect("write");
                b = other;
            }
            4 => b = retry(|| std::fs::read(twin(p))).expect("the twin"),
            5 => {
                b = data[i..].to_vec();
                i = data.len();
            }
            _ => {}
        }
        retry(|| std::fs::write(p, &b)).expect("write");
    }
}

fuzz_target!(|data: &[u8]| {
    let base = base();
    let tmp = retry(tempfile::tempdir).expect("temp dir");

    // The checkpoint, resumed.
    let out = tmp.path().join("out");
    let ck_dir = out.join(irqsim::experiment::checkpoint::DIR);
    copy_dir(&base.checkpoint[0], &ck_dir);
    let files = run_files(&ck_dir);
    damage(data, &files, &|p| {
        base.checkpoint[1].join(p.file_name().expect("name"))
    });
    match Checkpoint::open(&out, &base.exp, true, &irqsim::config::read_limit::ReadBudget::command()) {
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "refused as input: {e}");
            assert!(e.to_string().contains("/v0-p"), "names the run file: {e}");
        }
        Ok(ck) => {
            let r = runner::run_with(&base.exp, 1, &|| {}, Some(&ck), None)
                .expect("a resumed sweep runs");
            assert!(
                r.to_json() == base.clean,
                "accepted, but not the clean results"
            );
        }
    }

    // The partial, merged.
    let p = tmp.path().join("partial");
    copy_dir(&base.partial[0], &p);
    let files = run_files(&p.join(shard::RUNS_DIR));
    let seven = base.partial[1].join(shard::RUNS_DIR);
    damage(data, &files, &|f| seven.join(f.file_name().expect("name")));
    match shard::merge(&[p], &irqsim::config::read_limit::ReadBudget::command()) {
        Err(e) => assert!(
            e.to_string().contains("/v0-p"),
            "a refusal names the run file: {e}"
        ),
        Ok(m) => assert!(
            m.results.to_json() == base.clean,
            "merged, but not the clean results"
        ),
    }
});
