//! Property tests (proptest): the loader never panics, the model keeps its invariants
//! over random configurations, on one core and on several, and runs are deterministic.
//!
//! 1. **Loader.** Arbitrary JSON, arbitrary bytes, and mutations of every shipped scenario
//!    and model (keys dropped, duplicated, renamed or added; values replaced by other
//!    types, by negative, zero, huge, out-of-range or not-a-number texts, by strings for
//!    numbers, by deeply nested arrays, by pieces of other shipped files...), also inside
//!    `overrides` and `variants`, are written into a temporary copy of the repository
//!    layout and loaded with `scenario::load(path, &DiskFiles::default())`. Every input must give
//!    either an experiment or an error that names a file and a reason; a panic is caught
//!    with `catch_unwind` and reported with the input that caused it.
//! 2. **Model.** Random hosts (every receive policy, ring sizes 1-256, queue lengths
//!    1-200, costs constant or random, moderation, statistics counters, a user process,
//!    hardclock; and with the `devices` knob a DMA bus with per-NIC FIFOs and transmit
//!    thresholds down to store-and-forward, shared interrupt lines, the driver's link
//!    watch with chip resets and link checks down to 100 us, driver-reclaimed transmit
//!    completions, a ttcp-like sender, identical NICs) under 1-4 constant-rate or Poisson
//!    flows up to line rate, a few milliseconds each, run with `host::simulate`: packet
//!    conservation, CPU time accounting, no interrupt without a frame, a long enough
//!    drain empties the host, and a longer ipintrq never drops more at ipintrq on the
//!    classic interrupt path. Each test says why its property must hold.
//! 3. **Determinism.** One scenario and seed give byte-identical results JSON on 1, 2 and
//!    3 threads; different seeds give different samples.
//! 4. **Whole experiments.** Generated scenario files (`experiment`: constant, Poisson,
//!    fixed-rate and closed-loop flows; overrides and 1-3 variants built as merge patches
//!    that keep the model valid; 1-3 replications and load points in percent, frames/s
//!    or outstanding transactions; timelines, first-bit latency, a measured table; and
//!    on purpose the corner of chip resets under load, `Stress`) beside generated model
//!    files, loaded with `scenario::load` and run through `irqsim::experiment::runner` (panics
//!    caught, the files printed on failure): the results keep their books (conservation
//!    per flow and in total, in flight a small whole number, CPU fractions summing to 1,
//!    at most one transmit underrun per threshold), and are byte-identical on 1 and 2
//!    threads and after a sweep stopped after any number of runs is resumed from its
//!    checkpoint.
//! 5. **Many cores.** Generated multi-core hosts (`many_core_model`: 2-4 cores; NICs of
//!    1-4 queue pairs with RSS, XPS on or off, DIM; the `interrupt` and `napi` policies,
//!    NAPI threaded or not, with deferred hard interrupts and RPS; socket busy polling;
//!    lines pinned to cores; over every mechanism of section 2) are all valid, and the
//!    properties of sections 2 and 4 hold over them: one run's books exact to the frame
//!    and, per core, to the picosecond; whole experiments (with multi-core overrides and
//!    variants) conserve frames, split each core's CPU time into fractions adding up to
//!    1, and give the same bytes on 1 and 2 threads and after a resume.
//!
//! One file per section: `loader.rs`, `model.rs` (also the model generators the other
//! sections build on), `determinism.rs`, `experiments.rs` (also the scenario generator
//! and the runner machinery: `for_cases`, `check_results`, the thread and resume
//! checks), `many_cores.rs`; this file holds what they share (the case count, the
//! shipped files, the sandbox of the repository layout).
//!
//! `PROPTEST_CASES` overrides every test's number of cases (for a longer soak).
//!
//! The bugs these tests found in `src/` (huge `outstanding` values, load ranges of 2^64
//! steps, frames on a wire in the conservation check, times over 213 days, periods
//! rounding to 0 ps; a second frame started on a wire still busy after a chip reset,
//! resumed results differing in a float's last digit) are fixed; debug and release
//! builds test every input.

mod determinism;
mod experiments;
mod loader;
mod many_cores;
mod model;

use irqsim::config::error::InputError;
use irqsim::config::scenario::{self, DiskFiles};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `n` cases, or `PROPTEST_CASES` when set.
fn config(n: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(n);
    ProptestConfig {
        cases,
        // Failures print their input; nothing is written into the source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The shipped files of `dir` with extension `ext`: (file name, text), sorted.
fn shipped(dir: &str, ext: &str) -> Vec<(String, String)> {
    let path = Path::new(ROOT).join(dir);
    let mut v: Vec<(String, String)> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("shipped file"))
        })
        .collect();
    v.sort();
    v
}

/// Shipped scenarios and models, as JSON values.
struct Shipped {
    scenarios: Vec<(String, Value)>,
    models: Vec<(String, Value)>,
    csvs: Vec<(String, String)>,
    /// The tables of measured rates (`scenarios/measured-rates/`).
    rate_csvs: Vec<(String, String)>,
}

fn shipped_files() -> &'static Shipped {
    static CELL: OnceLock<Shipped> = OnceLock::new();
    CELL.get_or_init(|| {
        let parse = |v: Vec<(String, String)>| -> Vec<(String, Value)> {
            v.into_iter()
                .map(|(n, t)| {
                    let j = serde_json::from_str(&t).unwrap_or_else(|e| panic!("{n}: {e}"));
                    (n, j)
                })
                .collect()
        };
        Shipped {
            scenarios: parse(shipped("scenarios", "json")),
            models: parse(shipped("models", "json")),
            csvs: shipped("scenarios/measured", "csv"),
            rate_csvs: shipped("scenarios/measured-rates", "csv"),
        }
    })
}

/// A temporary copy of the repository layout (`scenarios/`, `scenarios/measured/`,
/// `scenarios/measured-rates/`, `models/`), so the relative paths inside scenarios resolve; each case writes its
/// scenario as `scenarios/case.json` and may replace one model.
struct Sandbox {
    dir: tempfile::TempDir,
    /// A model file replaced by the last case, to restore before the next one.
    dirty: Option<String>,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("temp dir");
        let s = shipped_files();
        std::fs::create_dir_all(dir.path().join("scenarios/measured")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("models")).expect("mkdir");
        for (name, text) in &s.csvs {
            std::fs::write(dir.path().join("scenarios/measured").join(name), text).expect("csv");
        }
        std::fs::create_dir_all(dir.path().join("scenarios/measured-rates")).expect("mkdir");
        for (name, text) in &s.rate_csvs {
            std::fs::write(dir.path().join("scenarios/measured-rates").join(name), text)
                .expect("csv");
        }
        let sb = Sandbox { dir, dirty: None };
        for (name, _) in &s.models {
            sb.restore(name);
        }
        sb
    }

    fn restore(&self, model: &str) {
        let text = std::fs::read(Path::new(ROOT).join("models").join(model)).expect("model");
        std::fs::write(self.dir.path().join("models").join(model), text).expect("model");
    }

    fn scenario_path(&self) -> PathBuf {
        self.dir.path().join("scenarios").join("case.json")
    }

    /// Write `scenario` (and `model`, replacing the shipped model of that name), load
    /// it, and fail on a panic or on an error that does not say what is wrong.
    fn check(
        &mut self,
        scenario: &[u8],
        model: Option<(&str, &[u8])>,
    ) -> Result<(), TestCaseError> {
        if let Some(name) = self.dirty.take() {
            self.restore(&name);
        }
        if let Some((name, text)) = model {
            std::fs::write(self.dir.path().join("models").join(name), text).expect("write");
            self.dirty = Some(name.to_string());
        }
        let path = self.scenario_path();
        std::fs::write(&path, scenario).expect("write");
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let r = scenario::load(&path, &DiskFiles::default());
            // The message the CLI prints must not panic either.
            let msg = r.as_ref().err().map(|e| e.to_string());
            (r, msg)
        }));
        let show = || {
            let mut s = format!("scenario:\n{}\n", String::from_utf8_lossy(scenario));
            if let Some((name, text)) = model {
                s += &format!("model {name}:\n{}\n", String::from_utf8_lossy(text));
            }
            s
        };
        match outcome {
            Err(p) => {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Err(TestCaseError::fail(format!(
                    "the loader panicked: {why}\n{}",
                    show()
                )))
            }
            Ok((Ok(_), _)) => Ok(()),
            Ok((Err(e), msg)) => clean_error(&e, msg.as_deref().unwrap_or_default())
                .map_err(|why| TestCaseError::fail(format!("{why}: {e:?}\n{}", show()))),
        }
    }
}

/// An error is clean when it names a file and says why, for every problem it lists.
fn clean_error(e: &InputError, msg: &str) -> Result<(), String> {
    if msg.trim().is_empty() {
        return Err("empty error message".into());
    }
    if let InputError::Invalid(list) = e {
        if list.is_empty() {
            return Err("an invalid-input error listing no problem".into());
        }
        if let Some(p) = list
            .iter()
            .find(|p| p.file.is_empty() || p.problem.reason.trim().is_empty())
        {
            return Err(format!("a problem without file or reason: {p:?}"));
        }
    }
    Ok(())
}
