//! Exact outputs of every shipped scenario, byte for byte: each scenario under
//! `scenarios/`, shortened (at most 0.05 s of sending and 0.02 s of drain per point, at
//! most two replications), is run and written with `output::write_all` (results.json,
//! the SmartBits tables, the latency timeline), and every file must equal the one under
//! `tests/golden/<scenario>/`. Any change of a simulated number, a tie order or an
//! output format fails here. A change that is meant regenerates the files with
//! `IRQSIM_BLESS=1 cargo test --release --test it golden` and says why in its commit.

use irqsim::config::scenario::{self, DiskFiles};
use irqsim::experiment::runner;
use irqsim::results::output;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The shipped scenarios, by name.
fn scenarios() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("scenarios"))
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

/// The files `write_all` writes for a shortened run of `path`, with the repository's
/// location taken out of the paths they mention.
fn outputs(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut exp = scenario::load(path, &DiskFiles::default()).expect("scenario loads");
    exp.duration_s = exp.duration_s.min(0.05);
    exp.drain_s = exp.drain_s.min(0.02);
    exp.replications = exp.replications.min(2);
    let r = runner::run(&exp, 0, &|| {}).expect("the sweep runs");
    let dir = tempfile::tempdir().expect("temp dir");
    let names = output::write_all(dir.path(), &r).expect("outputs written");
    let prefix = format!("{ROOT}/");
    names
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.path().join(&n)).expect("written file");
            let text = String::from_utf8(bytes).expect("text output");
            (n, text.replace(&prefix, "").into_bytes())
        })
        .collect()
}

#[test]
fn every_shipped_scenario_gives_the_recorded_bytes() {
    let bless = std::env::var_os("IRQSIM_BLESS").is_some();
    let mut differ = Vec::new();
    let all = scenarios();
    assert!(all.len() >= 10, "scenarios found: {all:?}");
    for path in all {
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .to_string();
        let golden = Path::new(ROOT).join("tests/golden").join(&name);
        let files = outputs(&path);
        if bless {
            let _ = std::fs::remove_dir_all(&golden);
            std::fs::create_dir_all(&golden).expect("golden dir");
            for (n, bytes) in &files {
                std::fs::write(golden.join(n), bytes).expect("golden file");
            }
            continue;
        }
        let mut recorded: Vec<String> = std::fs::read_dir(&golden)
            .unwrap_or_else(|_| panic!("no golden files for {name}: bless them"))
            .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
            .collect();
        recorded.sort();
        let mut written: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
        written.sort();
        if recorded != written {
            differ.push(format!("{name}: files {written:?}, recorded {recorded:?}"));
            continue;
        }
        for (n, bytes) in &files {
            let want = std::fs::read(golden.join(n)).expect("golden file");
            if &want != bytes {
                differ.push(format!("{name}/{n}"));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "outputs differ from tests/golden (IRQSIM_BLESS=1 regenerates them when the change is meant): {differ:?}"
    );
}
