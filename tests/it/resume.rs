//! A sweep killed in the middle resumes with --resume and ends with exactly the output an
//! uninterrupted run gives; results are never left half-written.

use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The reference sweep, 3 replications (42 runs, about 2 s on one thread).
fn scenario(dir: &Path) -> std::path::PathBuf {
    let mut sc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/scenarios/dc21143-64b-1flow.json")).unwrap(),
    )
    .unwrap();
    sc["model"] = json!(format!("{ROOT}/models/p3-448-dc21143-freebsd4.json"));
    sc["measured"] = json!(format!("{ROOT}/scenarios/measured/test_25Mx64x1.csv"));
    sc["replications"] = json!(3);
    let p = dir.join("sweep.json");
    std::fs::write(&p, serde_json::to_string_pretty(&sc).unwrap()).unwrap();
    p
}

fn run(sc: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args([
            "run",
            sc.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            "1",
            "--quiet",
            "--no-plots",
        ])
        .args(extra)
        .output()
        .unwrap()
}

fn saved_runs(out: &Path) -> usize {
    std::fs::read_dir(out.join(".checkpoint"))
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('v')
            })
            .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_killed_sweep_resumes_to_the_same_output() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path());
    let whole = tmp.path().join("whole");
    assert!(run(&sc, &whole, &[]).status.success());
    assert!(
        !whole.join(".checkpoint").exists(),
        "the checkpoint is removed at the end"
    );

    // Start the same sweep and kill it (SIGKILL: no chance to clean up) mid-way.
    let cut = tmp.path().join("cut");
    let mut child = Command::new(BIN)
        .args([
            "run",
            sc.to_str().unwrap(),
            "--out",
            cut.to_str().unwrap(),
            "--threads",
            "1",
            "--quiet",
            "--no-plots",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while saved_runs(&cut) < 5 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let saved = saved_runs(&cut);
    assert!((5..42).contains(&saved), "killed after {saved} of 42 runs");
    assert!(
        !cut.join("results.json").exists(),
        "no results.json before the sweep ends"
    );

    // Resume: the saved runs are reloaded, the rest simulated.
    let out = run(&sc, &cut, &["--resume"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["results.json", "smartbits.csv"] {
        let a = std::fs::read(whole.join(f)).unwrap();
        let b = std::fs::read(cut.join(f)).unwrap();
        assert!(a == b, "{f} differs after resuming");
    }
    assert!(!cut.join(".checkpoint").exists());
}

#[test]
fn resuming_a_different_experiment_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path());
    let out = tmp.path().join("out");
    std::fs::create_dir_all(out.join(".checkpoint")).unwrap();
    std::fs::write(out.join(".checkpoint/experiment.id"), "0000000000000000\n").unwrap();
    let r = run(&sc, &out, &["--resume"]);
    assert_eq!(
        r.status.code(),
        Some(2),
        "a checkpoint it cannot resume is refused as input"
    );
    assert!(String::from_utf8_lossy(&r.stderr).contains("different experiment"));
}

/// Interrupted after any number of runs, a resumed sweep writes the bytes of an
/// uninterrupted one. The runs reloaded from the checkpoint come back through JSON, so
/// every float must survive it to the last bit (serde_json's `float_roundtrip`; without
/// it the 28 % point's latency `stddev` came back one unit in the last place off). The
/// stop flag is what Ctrl-C sets; it is raised here after k finished runs, for several
/// k, so that different runs are reloaded each time.
#[test]
fn an_interrupted_sweep_resumes_to_the_same_bytes_at_any_moment() {
    use irqsim::experiment::checkpoint::Checkpoint;
    use irqsim::experiment::runner::{RunError, run_with};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("sweep.json");
    let mut sc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/scenarios/dc21143-64b-1flow.json")).unwrap(),
    )
    .unwrap();
    sc["model"] = json!(format!("{ROOT}/models/p3-448-dc21143-freebsd4.json"));
    sc["measured"] = json!(format!("{ROOT}/scenarios/measured/test_25Mx64x1.csv"));
    std::fs::write(&path, sc.to_string()).unwrap();
    let exp =
        irqsim::config::scenario::load(&path, &irqsim::config::scenario::DiskFiles::default())
            .unwrap();
    let whole = irqsim::experiment::runner::run(&exp, 1, &|| {})
        .unwrap()
        .to_json();
    for k in [1usize, 4, 7, 10, 13] {
        let out = tmp.path().join(format!("cut-{k}"));
        let ck = Checkpoint::open(
            &out,
            &exp,
            false,
            &irqsim::config::read_limit::ReadBudget::command(),
        )
        .unwrap();
        let stop = AtomicBool::new(false);
        let done = AtomicUsize::new(0);
        let on_done = || {
            if done.fetch_add(1, Ordering::SeqCst) + 1 >= k {
                stop.store(true, Ordering::SeqCst);
            }
        };
        match run_with(&exp, 1, &on_done, Some(&ck), Some(&stop)) {
            Err(RunError::Interrupted { done, total }) => assert_eq!((done, total), (k, 14)),
            other => panic!("expected an interruption after {k} runs: {other:?}"),
        }
        let ck = Checkpoint::open(
            &out,
            &exp,
            true,
            &irqsim::config::read_limit::ReadBudget::command(),
        )
        .unwrap();
        let resumed = run_with(&exp, 1, &|| {}, Some(&ck), None)
            .unwrap()
            .to_json();
        assert!(resumed == whole, "resumed after {k} runs: results differ");
    }
}

/// The shipped binary is built without dev-dependencies. jsonschema, a dev-dependency,
/// turns serde_json's `float_roundtrip` on in test builds only, which is how the resume
/// test above passed while the released binary resumed to a float one unit in the last
/// place off: irqsim must ask for exact float parsing itself, in `[dependencies]`.
#[test]
fn the_shipped_build_parses_floats_exactly() {
    let manifest = std::fs::read_to_string(format!("{ROOT}/Cargo.toml")).unwrap();
    let deps = manifest
        .split("\n[")
        .find(|s| s.starts_with("dependencies]"))
        .expect("[dependencies]");
    let line = deps
        .lines()
        .find(|l| l.starts_with("serde_json"))
        .expect("serde_json in [dependencies]");
    assert!(line.contains("\"float_roundtrip\""), "{line}");
}
