//! A sweep run as N shards (`irqsim run --shard K/N`) and merged (`irqsim merge`) gives
//! byte for byte the files a whole run writes -- results.json, the SmartBits tables, the
//! timeline and the plots -- and merging refuses partials that do not belong together.

use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `policies-64b` cut down: three variants (interrupt, moderation, FreeBSD polling),
/// three load points, two replications, a timeline and the measured table, 0.05 s per
/// run: 18 runs.
fn scenario(dir: &Path, duration_s: f64) -> PathBuf {
    let mut sc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/scenarios/policies-64b.json")).unwrap(),
    )
    .unwrap();
    sc["model"] = json!(format!("{ROOT}/models/p3-448-dc21143-freebsd4.json"));
    sc["measured"] = json!(format!("{ROOT}/scenarios/measured/test_25Mx64x1.csv"));
    sc["variants"] = json!(sc["variants"].as_array().unwrap()[..3]);
    sc["load"] = json!({"unit": "percent", "points": [10, 20, 30]});
    sc["duration_s"] = json!(duration_s);
    sc["drain_s"] = json!(0.02);
    sc["replications"] = json!(2);
    sc["timeline"] = json!({"bucket_ms": 5});
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("sweep.json");
    std::fs::write(&p, serde_json::to_string_pretty(&sc).unwrap()).unwrap();
    p
}

fn irqsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn run(sc: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        sc.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    irqsim(&args)
}

fn merge(dirs: &[PathBuf], out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["merge".to_string()];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap().to_string()));
    args.extend([
        "--out".into(),
        out.to_str().unwrap().into(),
        "--quiet".into(),
    ]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    irqsim(&args)
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every file under `dir`, by path relative to it.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Run shards 1..=n of `sc` into `base/shard-K` (extra arguments for each) and return
/// their directories.
fn shards(sc: &Path, base: &Path, n: usize, extra: &dyn Fn(usize) -> Vec<String>) -> Vec<PathBuf> {
    (1..=n)
        .map(|k| {
            let dir = base.join(format!("shard-{k}"));
            let spec = format!("{k}/{n}");
            let mut args = vec!["--shard".to_string(), spec];
            args.extend(extra(k));
            let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            ok(&run(sc, &dir, &args));
            dir
        })
        .collect()
}

#[test]
fn shards_merge_to_the_bytes_of_a_whole_run_for_1_2_3_and_7_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), 0.05);
    let whole = tmp.path().join("whole");
    ok(&run(&sc, &whole, &[]));
    let want = files(&whole);
    for f in [
        "results.json",
        "smartbits-interrupt.csv",
        "smartbits-moderation.csv",
        "smartbits-freebsd-polling.csv",
        "timeline.csv",
        "plots/forwarded.svg",
        "plots/forwarded.png",
        "plots/timeline.png",
    ] {
        assert!(
            want.contains_key(f),
            "a whole run writes {f}: {:?}",
            want.keys()
        );
    }
    for n in [1usize, 2, 3, 7] {
        let base = tmp.path().join(format!("n{n}"));
        // Shards on different thread counts, as on different machines.
        let dirs = shards(&sc, &base, n, &|k| {
            vec!["--threads".into(), (1 + k % 2).to_string()]
        });
        let mut held = 0;
        for d in &dirs {
            let got: Vec<String> = files(d).into_keys().collect();
            assert!(got.iter().any(|f| f == "shard.json"), "{got:?}");
            assert!(
                got.iter()
                    .all(|f| f == "shard.json" || f.starts_with("runs/")),
                "a partial holds shard.json and runs/ only (no checkpoint left): {got:?}"
            );
            let runs = got.len() - 1;
            // 18 runs over n shards: 18 / n, or one more.
            assert!(runs == 18 / n || runs == 18 / n + 1, "n = {n}: {runs} runs");
            held += runs;
        }
        assert_eq!(held, 18, "n = {n}");
        // Given in any order.
        let mut given = dirs.clone();
        given.reverse();
        let out = base.join("merged");
        ok(&merge(&given, &out, &[]));
        let got = files(&out);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "n = {n}: the same files"
        );
        for (f, bytes) in &want {
            assert!(
                got[f] == *bytes,
                "n = {n}: {f} differs from the whole run's"
            );
        }
    }
}

/// A shard killed in the middle resumes with `--resume` from its checkpoint, like a
/// whole run, and merges as if it had never stopped.
#[test]
fn a_killed_shard_resumes_from_its_checkpoint() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    // 2 points x 10 replications of 10 s: about 0.1 s a run, 10 runs in shard 1/2.
    let sc = small(tmp.path(), 10.0);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sc).unwrap()).unwrap();
    v["replications"] = json!(10);
    std::fs::write(&sc, v.to_string()).unwrap();
    let whole = tmp.path().join("whole");
    ok(&run(&sc, &whole, &["--no-plots"]));
    let s2 = tmp.path().join("s2");
    ok(&run(&sc, &s2, &["--shard", "2/2", "--threads", "2"]));

    let cut = tmp.path().join("cut");
    let mut child = Command::new(BIN)
        .args(["run", sc.to_str().unwrap(), "--shard", "1/2", "--out"])
        .arg(&cut)
        .args(["--threads", "1", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let saved = || {
        std::fs::read_dir(cut.join(".checkpoint"))
            .map(|d| {
                d.filter(|e| {
                    let name = e.as_ref().unwrap().file_name();
                    name.to_string_lossy().starts_with('v')
                })
                .count()
            })
            .unwrap_or(0)
    };
    let t0 = Instant::now();
    while saved() < 2 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let n = saved();
    assert!((2..10).contains(&n), "killed after {n} of 10 runs");
    assert!(
        !cut.join("shard.json").exists(),
        "no manifest before the end"
    );

    ok(&run(&sc, &cut, &["--shard", "1/2", "--resume"]));
    assert!(!cut.join(".checkpoint").exists());
    let out = tmp.path().join("merged");
    ok(&merge(&[cut, s2], &out, &["--no-plots"]));
    assert_eq!(files(&out), files(&whole));
}

/// A small sweep for the refusals: one variant, two points, 0.01 s per run.
fn small(dir: &Path, seconds: f64) -> PathBuf {
    let mut sc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/scenarios/dc21143-64b-1flow.json")).unwrap(),
    )
    .unwrap();
    sc["model"] = json!(format!("{ROOT}/models/p3-448-dc21143-freebsd4.json"));
    sc.as_object_mut().unwrap().remove("measured");
    sc["load"] = json!({"unit": "percent", "points": [10, 30]});
    sc["duration_s"] = json!(seconds);
    sc["drain_s"] = json!(0.01);
    sc["replications"] = json!(2);
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("small.json");
    std::fs::write(&p, sc.to_string()).unwrap();
    p
}

/// Merging `dirs` fails with exit code 2, writes nothing, and says all of `needles`.
fn refused(dirs: &[PathBuf], needles: &[&str]) {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("merged");
    let r = merge(dirs, &target, &[]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    assert!(!target.exists(), "nothing written: {err}");
}

#[test]
fn merging_refuses_partials_that_do_not_belong_together() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = small(&tmp.path().join("a"), 0.01);
    let base = tmp.path().join("ok");
    let dirs = shards(&sc, &base, 2, &|_| Vec::new());
    let (s1, s2) = (dirs[0].clone(), dirs[1].clone());
    let shown = |d: &Path| d.display().to_string();
    // The good case, for contrast.
    let fine = tmp.path().join("fine");
    ok(&merge(&dirs, &fine, &["--no-plots"]));

    // Another seed.
    let seeded = tmp.path().join("seed2");
    ok(&run(&sc, &seeded, &["--shard", "2/2", "--seed", "2"]));
    refused(
        &[s1.clone(), seeded.clone()],
        &[&shown(&seeded), "seed is `2`", "`1`", &shown(&s1)],
    );

    // Another scenario of the same name (a longer duration).
    let other = small(&tmp.path().join("b"), 0.02);
    let changed = tmp.path().join("changed");
    ok(&run(&other, &changed, &["--shard", "2/2"]));
    refused(
        &[s1.clone(), changed.clone()],
        &[&shown(&changed), "scenario_hash"],
    );

    // Another irqsim build.
    let rebuilt = tmp.path().join("rebuilt");
    copy_dir(&s2, &rebuilt);
    let m = rebuilt.join("shard.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["irqsim_build"] = json!("0123456789abcdef");
    std::fs::write(&m, v.to_string()).unwrap();
    refused(
        &[s1.clone(), rebuilt.clone()],
        &[&shown(&rebuilt), "irqsim_build", "0123456789abcdef"],
    );

    // Another shard count.
    let of3 = tmp.path().join("of3");
    ok(&run(&sc, &of3, &["--shard", "2/3"]));
    refused(&[s1.clone(), of3.clone()], &[&shown(&of3), "shard count N"]);

    // A shard missing, a shard twice.
    refused(std::slice::from_ref(&s1), &["shard 2 of 2 missing"]);
    let twice = tmp.path().join("twice");
    copy_dir(&s1, &twice);
    refused(
        &[s1.clone(), twice.clone(), s2.clone()],
        &[&shown(&twice), "shard 1/2 is given twice", &shown(&s1)],
    );

    // A run missing from a shard.
    let holed = tmp.path().join("holed");
    copy_dir(&s2, &holed);
    let victim = std::fs::read_dir(holed.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::remove_file(&victim).unwrap();
    refused(&[s1.clone(), holed.clone()], &[&shown(&victim), "missing"]);

    // A directory that is not a partial, and a whole run's output.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    refused(
        std::slice::from_ref(&empty),
        &[&shown(&empty), "not a partial result"],
    );
    refused(
        &[s1.clone(), fine.clone()],
        &[&shown(&fine), "not a partial result"],
    );
}

#[test]
fn bad_shard_specifications_and_options_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = small(tmp.path(), 0.01);
    for (spec, why) in [
        ("0/3", "K must be from 1 to N = 3"),
        ("4/3", "K must be from 1 to N = 3"),
        ("1/0", "at least 1"),
        ("two/3", "expected K/N"),
    ] {
        let out = tmp.path().join("out");
        let r = run(&sc, &out, &["--shard", spec]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{spec}: {err}");
        assert!(
            err.contains("--shard") && err.contains(why),
            "{spec}: {err}"
        );
        assert!(!out.exists(), "{spec}: nothing written");
    }
    let dirs = shards(&sc, tmp.path(), 1, &|_| Vec::new());
    let r = merge(&dirs, &tmp.path().join("m"), &["--seed", "3"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--seed does not apply"));
}

fn copy_dir(from: &Path, to: &Path) {
    for (rel, bytes) in files(from) {
        let p = to.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

/// A grid (scenarios/grid-ring-x-ipintrq.json, 12 cells, cut to 3 points and 0.05 s) is
/// sharded over its cells like any variants, and the merge rebuilds its summary and its
/// heat maps from the partials alone: the same bytes as a whole run.
#[test]
fn a_grid_shards_and_merges_with_its_summary_and_heat_maps() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/scenarios/grid-ring-x-ipintrq.json")).unwrap(),
    )
    .unwrap();
    sc["model"] = json!(format!("{ROOT}/models/p3-448-dc21143-freebsd4.json"));
    sc["load"] = json!({"unit": "percent", "points": [20, 30, 40]});
    sc["duration_s"] = json!(0.05);
    sc["drain_s"] = json!(0.02);
    let sc_path = tmp.path().join("grid.json");
    std::fs::write(&sc_path, serde_json::to_string_pretty(&sc).unwrap()).unwrap();
    let whole = tmp.path().join("whole");
    ok(&run(&sc_path, &whole, &[]));
    let want = files(&whole);
    assert!(
        want.contains_key("plots/grid-mlfrr.png"),
        "{:?}",
        want.keys()
    );
    let results = String::from_utf8(want["results.json"].clone()).unwrap();
    assert!(
        results.contains("\"grid\""),
        "results.json has the grid summary"
    );
    for n in [2usize, 5] {
        let base = tmp.path().join(format!("n{n}"));
        let dirs = shards(&sc_path, &base, n, &|_| Vec::new());
        let out = base.join("merged");
        ok(&merge(&dirs, &out, &[]));
        let got = files(&out);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "n = {n}: the same files"
        );
        for (f, bytes) in &want {
            assert!(
                got[f] == *bytes,
                "n = {n}: {f} differs from the whole run's"
            );
        }
    }
}

/// Every file under `dir` with its modification time, by path relative to it.
fn mtimes(dir: &Path) -> BTreeMap<String, std::time::SystemTime> {
    files(dir)
        .into_keys()
        .map(|f| {
            let t = std::fs::metadata(dir.join(&f)).unwrap().modified().unwrap();
            (f, t)
        })
        .collect()
}

/// A finished shard run again (a Slurm requeue, examples/sweep-gnu-parallel.sh run
/// twice) finds its shard.json -- the same scenario as resolved, seed, irqsim build and
/// shard, with all its run files -- and stops without simulating: exit 0, a line on
/// stderr, no file rewritten (same bytes, same modification times). Another seed is
/// another run: it is simulated and replaces the partial; so is a shard missing a run
/// file, which then gets back the same bytes.
#[test]
fn a_finished_shard_run_again_stops_without_simulating() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = small(tmp.path(), 0.01);
    let dir = tmp.path().join("s1");
    ok(&run(&sc, &dir, &["--shard", "1/2"]));
    let bytes = files(&dir);
    let times = mtimes(&dir);
    assert_eq!(
        bytes.len(),
        3,
        "shard.json and two runs: {:?}",
        bytes.keys()
    );
    // Modification times have at least this resolution on the file systems tests run on.
    std::thread::sleep(std::time::Duration::from_millis(50));
    for extra in [&[][..], &["--resume"], &["--quiet"]] {
        let mut args = vec!["run", sc.to_str().unwrap(), "--shard", "1/2", "--out"];
        args.push(dir.to_str().unwrap());
        args.extend_from_slice(extra);
        let again = irqsim(&args);
        ok(&again);
        let err = String::from_utf8_lossy(&again.stderr);
        eprintln!("{extra:?}: {err}");
        assert!(
            err.contains("shard 1/2 is already finished") && err.contains("nothing simulated"),
            "{extra:?}: {err}"
        );
        assert!(
            again.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&again.stdout)
        );
        assert_eq!(files(&dir), bytes, "{extra:?}: the files are untouched");
        assert_eq!(mtimes(&dir), times, "{extra:?}: no file was rewritten");
        assert!(!dir.join(".checkpoint").exists());
    }

    // A run file missing: not finished; run again, it is restored to the same bytes.
    let (run_file, _) = bytes.iter().find(|(f, _)| f.starts_with("runs/")).unwrap();
    std::fs::remove_file(dir.join(run_file)).unwrap();
    let o = run(&sc, &dir, &["--shard", "1/2"]);
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("already finished"));
    assert_eq!(files(&dir), bytes);

    // Another seed: another run, simulated, and its manifest replaces this one's.
    let o = run(&sc, &dir, &["--shard", "1/2", "--seed", "7"]);
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("already finished"));
    let manifest: serde_json::Value = serde_json::from_slice(&files(&dir)["shard.json"]).unwrap();
    assert_eq!(manifest["seed"], 7);
}
