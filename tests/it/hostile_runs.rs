//! Hostile checkpoints and shard partials (issue 33, "trusts what it could check"): each
//! row of a table damages an interrupted run's checkpoint or a shard's partial result in
//! one way -- another seed's runs behind a deleted `experiment.id`, a counter edited
//! (with or without a new checksum), files swapped between runs, a file from another
//! seed's checkpoint or shard, a file cut short, a link to `/dev/zero`, a file in the
//! older format, files a user left there -- and `irqsim run --resume` or `irqsim merge`
//! must either refuse (exit 2, naming the file, writing no results) or write the bytes
//! a clean run writes: never results mixed from two runs. A property test then damages
//! them at random (flipped bits, cut files, swaps, copies from another seed) with the
//! same verdict. A new attack is one more row.
//!
//! Before these checks, the first row resumed 3 of 4 runs from seed 7 into seed 1's
//! results, the edited and swapped files were taken as they were, and `merge` took a
//! seed-7 run file into seed 1's results with exit 0.

use irqsim::experiment::run_file::{RunIdentity, SavedRun};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A tiny sweep: one flow of Poisson arrivals (so that seeds and replications differ in
/// every figure), load points 10 % and 30 %, two replications, 0.01 s each, a timeline:
/// 4 runs, `v0-p{0,1}-r{0,1}`.
fn write_scenario(dir: &Path) -> PathBuf {
    let mut sc: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/scenarios/dc21143-64b-1flow.json")).unwrap(),
    )
    .unwrap();
    sc["model"] = json!(format!("{ROOT}/models/p3-448-dc21143-freebsd4.json"));
    sc.as_object_mut().unwrap().remove("measured");
    sc["workload"]["flows"][0]["arrivals"] = json!("poisson");
    sc["load"] = json!({"unit": "percent", "points": [10, 30]});
    sc["duration_s"] = json!(0.01);
    sc["drain_s"] = json!(0.01);
    sc["replications"] = json!(2);
    sc["timeline"] = json!({"bucket_ms": 5});
    sc["seed"] = json!(1);
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("tiny.json");
    std::fs::write(&p, serde_json::to_string_pretty(&sc).unwrap()).unwrap();
    p
}

fn irqsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The files directly under `dir` (results.json, the SmartBits table, timeline.csv),
/// by name.
fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.is_file())
                .map(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().to_string();
                    (name, std::fs::read(&p).unwrap())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What every case starts from, made once: the scenario, the outputs of a clean run of
/// seed 1, checkpoints of seeds 1 and 7 interrupted after 3 runs, and the two shards of
/// seeds 1 and 7.
struct Fixture {
    /// Holds everything below.
    _tmp: tempfile::TempDir,
    scenario: PathBuf,
    /// results.json, smartbits.csv, timeline.csv of a clean `irqsim run` (seed 1).
    clean: BTreeMap<String, Vec<u8>>,
    /// An output directory holding only `.checkpoint/`, by seed (1 and 7).
    checkpoint: BTreeMap<u64, PathBuf>,
    /// Shard directories 1/2 and 2/2, by seed.
    shards: BTreeMap<u64, [PathBuf; 2]>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let scenario = write_scenario(tmp.path());
        let sc = scenario.to_str().unwrap();
        let clean_dir = tmp.path().join("clean");
        let c = clean_dir.to_str().unwrap();
        ok(&irqsim(&["run", sc, "--out", c, "--quiet", "--no-plots"]));
        let clean = outputs(&clean_dir);
        assert_eq!(clean.len(), 3, "{:?}", clean.keys());
        // Seed 7 gives other figures: a run of it mixed in would show.
        let seven = tmp.path().join("clean-seed7");
        let s7 = seven.to_str().unwrap();
        ok(&irqsim(&[
            "run",
            sc,
            "--seed",
            "7",
            "--out",
            s7,
            "--quiet",
            "--no-plots",
        ]));
        assert!(outputs(&seven)["results.json"] != clean["results.json"]);
        let mut checkpoint = BTreeMap::new();
        let mut shards = BTreeMap::new();
        for seed in [1u64, 7] {
            let out = tmp.path().join(format!("cut-seed{seed}"));
            interrupt(&scenario, &out, seed, 3);
            checkpoint.insert(seed, out);
            let dirs = [1, 2].map(|k| {
                let d = tmp.path().join(format!("seed{seed}-shard{k}"));
                let (spec, s) = (format!("{k}/2"), seed.to_string());
                let d_ = d.to_str().unwrap();
                ok(&irqsim(&[
                    "run", sc, "--shard", &spec, "--seed", &s, "--out", d_, "--quiet",
                ]));
                d
            });
            shards.insert(seed, dirs);
        }
        Fixture {
            _tmp: tmp,
            scenario,
            clean,
            checkpoint,
            shards,
        }
    })
}

/// Leave under `out` the checkpoint of `scenario` run with `seed` and stopped after `k`
/// finished runs, as an `irqsim run` stopped by Ctrl-C leaves it (on one thread the
/// costliest runs go first: the 30 % point's two replications, then the 10 % point's
/// first).
fn interrupt(scenario: &Path, out: &Path, seed: u64, k: usize) {
    use irqsim::experiment::checkpoint::Checkpoint;
    use irqsim::experiment::runner::{RunError, run_with};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let mut exp =
        irqsim::config::scenario::load(scenario, &irqsim::config::scenario::DiskFiles::default())
            .unwrap();
    exp.seed = seed;
    let ck = Checkpoint::open(
        out,
        &exp,
        false,
        &irqsim::config::read_limit::ReadBudget::command(),
    )
    .unwrap();
    let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
    let on_done = || {
        if done.fetch_add(1, Ordering::SeqCst) + 1 >= k {
            stop.store(true, Ordering::SeqCst);
        }
    };
    match run_with(&exp, 1, &on_done, Some(&ck), Some(&stop)) {
        Err(RunError::Interrupted { done, total }) => assert_eq!((done, total), (k, 4)),
        other => panic!("expected an interruption after {k} runs: {other:?}"),
    }
    let names: Vec<String> = std::fs::read_dir(out.join(".checkpoint"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    for f in [
        "experiment.id",
        "v0-p1-r0.json",
        "v0-p1-r1.json",
        "v0-p0-r0.json",
    ] {
        assert!(names.iter().any(|n| n == f), "{f} not in {names:?}");
    }
}

/// Copy the directory tree `from` to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let t = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

/// Rewrite the run file `path` with `edit` applied to its JSON and, if `reseal`, a
/// checksum made anew for the edited content (what a forger who read the docs does).
fn edit_run(path: &Path, reseal: bool, edit: impl Fn(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut v);
    let text = if reseal {
        let id: RunIdentity = serde_json::from_value(v["identity"].clone()).unwrap();
        let run: SavedRun = serde_json::from_value(v["run"].clone()).unwrap();
        irqsim::experiment::run_file::encode(&id, &run)
    } else {
        v.to_string()
    };
    std::fs::write(path, text).unwrap();
}

/// Apply `edit` to the `Total` row and the (one) flow's row of a run file's JSON.
fn rows(v: &mut Value, edit: impl Fn(&mut Value)) {
    edit(&mut v["run"]["figures"]["total"]);
    edit(&mut v["run"]["figures"]["flows"][0]);
}

/// What a case must end in.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Exit 2, no results written, and the error says every one of these.
    Refused(&'static [&'static str]),
    /// Exit 0 and the bytes of the clean run.
    Identical,
}

/// Run `args`, then check `expect` on the output directory `out`.
fn verdict(case: &str, args: &[&str], out: &Path, expect: Expect) {
    let o = irqsim(args);
    let err = String::from_utf8_lossy(&o.stderr);
    match expect {
        Expect::Refused(needles) => {
            assert_eq!(o.status.code(), Some(2), "{case}: {err}");
            for n in needles {
                assert!(err.contains(n), "{case}: `{n}` not in: {err}");
            }
            assert!(
                !out.join("results.json").exists(),
                "{case}: nothing written: {err}"
            );
        }
        Expect::Identical => {
            assert_eq!(o.status.code(), Some(0), "{case}: {err}");
            assert!(
                outputs(out) == fixture().clean,
                "{case}: results differ from the clean run's"
            );
        }
    }
}

/// One damage to a checkpoint: what to do to `out/.checkpoint` (the seed-1 checkpoint
/// interrupted after 3 runs, copied), whether to run with `--resume`, what must follow.
struct CheckpointCase {
    name: &'static str,
    damage: fn(&Path),
    resume: bool,
    expect: Expect,
}

fn ck(out: &Path, f: &str) -> PathBuf {
    out.join(".checkpoint").join(f)
}

const NOTE: &[u8] = b"my notes on this run\n";

fn checkpoint_cases() -> Vec<CheckpointCase> {
    vec![
        CheckpointCase {
            name: "experiment.id deleted, another seed's runs behind it",
            damage: |out| {
                std::fs::remove_dir_all(out.join(".checkpoint")).unwrap();
                copy_dir(&fixture().checkpoint[&7], out);
                std::fs::remove_file(ck(out, "experiment.id")).unwrap();
            },
            resume: true,
            expect: Expect::Identical,
        },
        CheckpointCase {
            name: "a counter edited (lost + 5)",
            damage: |out| {
                edit_run(&ck(out, "v0-p1-r0.json"), false, |v| {
                    let l = &mut v["run"]["figures"]["total"]["lost"];
                    *l = json!(l.as_f64().unwrap() + 5.0);
                })
            },
            resume: true,
            expect: Expect::Refused(&["v0-p1-r0.json", "checksum fails"]),
        },
        CheckpointCase {
            name: "a counter edited (lost + 5), checksum made anew",
            damage: |out| {
                edit_run(&ck(out, "v0-p1-r0.json"), true, |v| {
                    rows(v, |f| f["lost"] = json!(f["lost"].as_f64().unwrap() + 5.0));
                })
            },
            resume: true,
            expect: Expect::Refused(&["v0-p1-r0.json", "books do not balance", "lost"]),
        },
        CheckpointCase {
            name: "two runs' files swapped",
            damage: |out| {
                let (a, b) = (ck(out, "v0-p0-r0.json"), ck(out, "v0-p1-r0.json"));
                let t = out.join("t");
                std::fs::rename(&a, &t).unwrap();
                std::fs::rename(&b, &a).unwrap();
                std::fs::rename(&t, &b).unwrap();
            },
            resume: true,
            expect: Expect::Refused(&["v0-p0-r0.json", "holds another run", "point"]),
        },
        CheckpointCase {
            name: "a run file from another seed's checkpoint",
            damage: |out| {
                std::fs::copy(
                    ck(&fixture().checkpoint[&7], "v0-p1-r1.json"),
                    ck(out, "v0-p1-r1.json"),
                )
                .unwrap();
            },
            resume: true,
            expect: Expect::Refused(&["v0-p1-r1.json", "seed"]),
        },
        CheckpointCase {
            name: "a run file from another seed's shard",
            damage: |out| {
                let from = fixture().shards[&7]
                    .iter()
                    .map(|d| d.join("runs/v0-p0-r1.json"))
                    .find(|p| p.exists())
                    .unwrap();
                std::fs::copy(from, ck(out, "v0-p0-r1.json")).unwrap();
            },
            resume: true,
            expect: Expect::Refused(&["v0-p0-r1.json", "seed"]),
        },
        CheckpointCase {
            name: "a run file cut short",
            damage: |out| {
                let p = ck(out, "v0-p1-r1.json");
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() / 2]).unwrap();
            },
            resume: true,
            expect: Expect::Refused(&["v0-p1-r1.json", "not a run file irqsim can read"]),
        },
        CheckpointCase {
            name: "a run file that is a link to /dev/zero",
            damage: |out| {
                let p = ck(out, "v0-p1-r1.json");
                std::fs::remove_file(&p).unwrap();
                std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
            },
            resume: true,
            expect: Expect::Refused(&["v0-p1-r1.json", "not a regular file"]),
        },
        CheckpointCase {
            name: "a run file in the older format (no tag, identity or checksum)",
            damage: |out| {
                let p = ck(out, "v0-p1-r1.json");
                let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
                std::fs::write(&p, v["run"].to_string()).unwrap();
            },
            resume: true,
            expect: Expect::Refused(&["v0-p1-r1.json", "irqsim-run/1", "irqsim-run/2"]),
        },
        CheckpointCase {
            name: "a user's file in .checkpoint/, resumed",
            damage: |out| std::fs::write(ck(out, "notes.txt"), NOTE).unwrap(),
            resume: true,
            expect: Expect::Identical,
        },
        CheckpointCase {
            name: "a user's file in .checkpoint/, run afresh",
            damage: |out| std::fs::write(ck(out, "notes.txt"), NOTE).unwrap(),
            resume: false,
            expect: Expect::Identical,
        },
        CheckpointCase {
            name: "a user's file named as a run file this sweep writes, run afresh",
            damage: |out| std::fs::write(ck(out, "v0-p0-r1.json"), NOTE).unwrap(),
            resume: false,
            expect: Expect::Refused(&["v0-p0-r1.json", "not irqsim's own file", "move it away"]),
        },
    ]
}

#[test]
fn damaged_checkpoints_are_refused_or_resume_to_a_clean_runs_bytes() {
    let f = fixture();
    let sc = f.scenario.to_str().unwrap();
    for case in checkpoint_cases() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        copy_dir(&f.checkpoint[&1], &out);
        (case.damage)(&out);
        // What is not irqsim's stays as it was.
        let theirs: Vec<(PathBuf, Vec<u8>)> = ["notes.txt", "v0-p0-r1.json"]
            .iter()
            .map(|n| ck(&out, n))
            .filter(|p| std::fs::read(p).is_ok_and(|b| b == NOTE))
            .map(|p| (p, NOTE.to_vec()))
            .collect();
        let o = out.to_str().unwrap();
        let mut args = vec![
            "run",
            sc,
            "--out",
            o,
            "--quiet",
            "--no-plots",
            "--threads",
            "1",
        ];
        if case.resume {
            args.push("--resume");
        }
        verdict(case.name, &args, &out, case.expect);
        for (p, b) in &theirs {
            assert_eq!(
                std::fs::read(p).ok().as_ref(),
                Some(b),
                "{}: {} was left as it was",
                case.name,
                p.display()
            );
        }
        if matches!(case.expect, Expect::Identical) {
            let left: Vec<_> = std::fs::read_dir(out.join(".checkpoint"))
                .map(|d| d.map(|e| e.unwrap().file_name()).collect())
                .unwrap_or_default();
            assert_eq!(
                left.len(),
                theirs.len(),
                "{}: irqsim's own checkpoint files are removed, the user's stay: {left:?}",
                case.name
            );
        }
    }
}

/// One damage to the seed-1 shards (copied to `dirs`) before `irqsim merge`.
struct MergeCase {
    name: &'static str,
    damage: fn(&[PathBuf; 2]),
    expect: Expect,
}

/// The first run file of shard 1.
fn first_run(dirs: &[PathBuf; 2]) -> PathBuf {
    runs_of(&dirs[0])[0].clone()
}

fn runs_of(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

fn merge_cases() -> Vec<MergeCase> {
    vec![
        MergeCase {
            name: "a run file copied from seed 7's shard",
            damage: |dirs| {
                let p = first_run(dirs);
                let from = fixture().shards[&7][0]
                    .join("runs")
                    .join(p.file_name().unwrap());
                std::fs::copy(from, &p).unwrap();
            },
            expect: Expect::Refused(&["runs/v0-", "holds another run", "seed"]),
        },
        MergeCase {
            name: "a counter edited (received + 1)",
            damage: |dirs| {
                edit_run(&first_run(dirs), false, |v| {
                    let r = &mut v["run"]["figures"]["total"]["received"];
                    *r = json!(r.as_f64().unwrap() + 1.0);
                })
            },
            expect: Expect::Refused(&["runs/v0-", "checksum fails"]),
        },
        MergeCase {
            name: "sent 1, received 9,594, lost 0, checksum made anew",
            damage: |dirs| {
                edit_run(&first_run(dirs), true, |v| {
                    rows(v, |f| {
                        f["sent"] = json!(1.0);
                        f["received"] = json!(9594.0);
                        f["lost"] = json!(0.0);
                    });
                })
            },
            expect: Expect::Refused(&["runs/v0-", "books do not balance", "sent"]),
        },
        MergeCase {
            name: "two run files of a shard swapped",
            damage: |dirs| {
                let r = runs_of(&dirs[0]);
                let t = dirs[0].join("t");
                std::fs::rename(&r[0], &t).unwrap();
                std::fs::rename(&r[1], &r[0]).unwrap();
                std::fs::rename(&t, &r[1]).unwrap();
            },
            expect: Expect::Refused(&["runs/v0-", "holds another run"]),
        },
        MergeCase {
            name: "a run file cut short",
            damage: |dirs| {
                let p = first_run(dirs);
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() - 10]).unwrap();
            },
            expect: Expect::Refused(&["runs/v0-", "not a run file irqsim can read"]),
        },
        MergeCase {
            name: "a run file that is a link to /dev/zero",
            damage: |dirs| {
                let p = first_run(dirs);
                std::fs::remove_file(&p).unwrap();
                std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
            },
            expect: Expect::Refused(&["runs/v0-", "not a regular file"]),
        },
        MergeCase {
            name: "a user's files in runs/ (notes, and another sweep's run file)",
            damage: |dirs| {
                std::fs::write(dirs[0].join("runs/notes.txt"), NOTE).unwrap();
                // Seed 7's shard 2's run: a name shard 1 does not list, so never read.
                let other = runs_of(&fixture().shards[&7][1])[0].clone();
                std::fs::copy(
                    &other,
                    dirs[0].join("runs").join(other.file_name().unwrap()),
                )
                .unwrap();
            },
            expect: Expect::Identical,
        },
    ]
}

#[test]
fn damaged_partials_are_refused_by_merge_or_merge_to_a_clean_runs_bytes() {
    let f = fixture();
    for case in merge_cases() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = [1, 2].map(|k| {
            let d = tmp.path().join(format!("shard-{k}"));
            copy_dir(&f.shards[&1][k - 1], &d);
            d
        });
        (case.damage)(&dirs);
        let out = tmp.path().join("merged");
        let args = [
            "merge",
            dirs[0].to_str().unwrap(),
            dirs[1].to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--no-plots",
        ];
        verdict(case.name, &args, &out, case.expect);
    }
}

/// `irqsim run --shard` writing a partial over an earlier one removes only irqsim's own
/// run files that it replaces: a user's file and a run file of another shard stay (they
/// were deleted with the whole `runs/`), and a file that is not irqsim's but has the
/// name of a run file the shard writes is refused before any work.
#[test]
fn a_shard_deletes_only_its_own_run_files() {
    let f = fixture();
    let sc = f.scenario.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shard-1");
    copy_dir(&f.shards[&1][0], &dir);
    let other = runs_of(&f.shards[&1][1])[0].clone();
    let other_here = dir.join("runs").join(other.file_name().unwrap());
    std::fs::copy(&other, &other_here).unwrap();
    std::fs::write(dir.join("runs/notes.txt"), NOTE).unwrap();
    // Seed 7 into the seed-1 partial: the shard is simulated and written anew.
    let d = dir.to_str().unwrap();
    ok(&irqsim(&[
        "run", sc, "--shard", "1/2", "--seed", "7", "--out", d, "--quiet",
    ]));
    assert_eq!(std::fs::read(dir.join("runs/notes.txt")).unwrap(), NOTE);
    assert_eq!(
        std::fs::read(&other_here).unwrap(),
        std::fs::read(&other).unwrap(),
        "another shard's run file stays"
    );
    // It merges with seed 7's second shard to seed 7's results (the strays not read).
    let (m1, m2) = (tmp.path().join("m1"), tmp.path().join("m2"));
    for (a, out) in [(&dir, &m1), (&f.shards[&7][0], &m2)] {
        ok(&irqsim(&[
            "merge",
            a.to_str().unwrap(),
            f.shards[&7][1].to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--no-plots",
        ]));
    }
    assert!(
        outputs(&m1) == outputs(&m2),
        "the seed-7 shard rewritten merges as the clean one"
    );

    // A user's file with the name of a run file this shard writes: refused, untouched.
    let mine = dir
        .join("runs")
        .join(runs_of(&f.shards[&1][0])[0].file_name().unwrap());
    std::fs::write(&mine, NOTE).unwrap();
    let o = irqsim(&["run", sc, "--shard", "1/2", "--out", d, "--quiet"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(mine.file_name().unwrap().to_str().unwrap()),
        "{err}"
    );
    assert!(err.contains("not irqsim's own file"), "{err}");
    assert_eq!(std::fs::read(&mine).unwrap(), NOTE);
}

/// A command refused before its work leaves no checkpoint behind: the checkpoint
/// directory and `experiment.id` are made when the first run is saved (they were made
/// as the run started, so a refused or aborted run left `.checkpoint/experiment.id`).
#[test]
fn no_checkpoint_is_made_before_the_first_run_is_saved() {
    let f = fixture();
    let mut exp = irqsim::config::scenario::load(
        &f.scenario,
        &irqsim::config::scenario::DiskFiles::default(),
    )
    .unwrap();
    exp.seed = 1;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let cp = irqsim::experiment::checkpoint::Checkpoint::open(
        &out,
        &exp,
        false,
        &irqsim::config::read_limit::ReadBudget::command(),
    )
    .unwrap();
    assert!(!out.exists(), "opened: nothing on disk yet");
    drop(cp);
    // A refused resume (another experiment's checkpoint) creates nothing either.
    let o = irqsim(&[
        "run",
        f.scenario.to_str().unwrap(),
        "--out",
        f.checkpoint[&7].to_str().unwrap(),
        "--resume",
        "--quiet",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!f.checkpoint[&7].join("results.json").exists());
}

/// A random damage to a checkpoint's or a partial's run files.
#[derive(Clone, Debug)]
enum Damage {
    /// Flip bit `bit` of the byte at `at` (a fraction of the file's length).
    Flip { file: usize, at: f64, bit: u8 },
    /// Keep the first `keep` (a fraction) of the file.
    Cut { file: usize, keep: f64 },
    /// Swap two files' contents.
    Swap { a: usize, b: usize },
    /// Replace a file by the file of the same name of seed 7.
    OtherSeed { file: usize },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (0usize..8, 0.0..1.0f64, 0u8..8).prop_map(|(file, at, bit)| Damage::Flip { file, at, bit }),
        (0usize..8, 0.0..1.0f64).prop_map(|(file, keep)| Damage::Cut { file, keep }),
        (0usize..8, 0usize..8).prop_map(|(a, b)| Damage::Swap { a, b }),
        (0usize..8).prop_map(|file| Damage::OtherSeed { file }),
    ]
}

/// Apply `d` to the run files `files` (`twin` gives a file's seed-7 counterpart).
fn apply(d: &Damage, files: &[PathBuf], twin: &dyn Fn(&Path) -> PathBuf) {
    let pick = |i: usize| &files[i % files.len()];
    match *d {
        Damage::Flip { file, at, bit } => {
            let p = pick(file);
            let mut b = std::fs::read(p).unwrap();
            let i = ((b.len() as f64 * at) as usize).min(b.len() - 1);
            b[i] ^= 1 << bit;
            std::fs::write(p, b).unwrap();
        }
        Damage::Cut { file, keep } => {
            let p = pick(file);
            let b = std::fs::read(p).unwrap();
            std::fs::write(p, &b[..(b.len() as f64 * keep) as usize]).unwrap();
        }
        Damage::Swap { a, b } => {
            let (x, y) = (
                std::fs::read(pick(a)).unwrap(),
                std::fs::read(pick(b)).unwrap(),
            );
            std::fs::write(pick(a), y).unwrap();
            std::fs::write(pick(b), x).unwrap();
        }
        Damage::OtherSeed { file } => {
            let p = pick(file);
            std::fs::copy(twin(p), p).unwrap();
        }
    }
}

/// After `d`, exit 2 naming a run file (and no results), or exit 0 and the clean
/// bytes: never anything else.
fn refused_or_identical(o: &Output, out: &Path) -> Result<(), TestCaseError> {
    let err = String::from_utf8_lossy(&o.stderr);
    match o.status.code() {
        Some(2) => {
            prop_assert!(
                err.contains("/v0-p"),
                "a refusal names the run file: {}",
                err
            );
            prop_assert!(
                !out.join("results.json").exists(),
                "refused: nothing written"
            );
        }
        Some(0) => prop_assert!(
            outputs(out) == fixture().clean,
            "accepted: not the clean bytes"
        ),
        c => prop_assert!(false, "exit {:?}: {}", c, err),
    }
    Ok(())
}

proptest! {
    // Each case is one resume and one merge of a 4-run, 0.01 s sweep (about 0.1 s).
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn randomly_damaged_runs_are_refused_or_give_the_clean_bytes(d in damage()) {
        let f = fixture();
        let tmp = tempfile::tempdir().unwrap();
        // The checkpoint, resumed.
        let out = tmp.path().join("out");
        copy_dir(&f.checkpoint[&1], &out);
        let files: Vec<PathBuf> = ["v0-p0-r0.json", "v0-p1-r0.json", "v0-p1-r1.json"]
            .iter()
            .map(|n| ck(&out, n))
            .collect();
        let seven = f.checkpoint[&7].join(".checkpoint");
        apply(&d, &files, &|p| seven.join(p.file_name().unwrap()));
        let o = irqsim(&[
            "run", f.scenario.to_str().unwrap(), "--out", out.to_str().unwrap(),
            "--quiet", "--no-plots", "--threads", "1", "--resume",
        ]);
        refused_or_identical(&o, &out)?;
        // The partials, merged.
        let dirs = [1, 2].map(|k| {
            let dd = tmp.path().join(format!("shard-{k}"));
            copy_dir(&f.shards[&1][k - 1], &dd);
            dd
        });
        let files: Vec<PathBuf> = dirs.iter().flat_map(|dd| runs_of(dd)).collect();
        let twin = |p: &Path| {
            let k = if p.starts_with(&dirs[0]) { 0 } else { 1 };
            f.shards[&7][k].join("runs").join(p.file_name().unwrap())
        };
        apply(&d, &files, &twin);
        let merged = tmp.path().join("merged");
        let o = irqsim(&[
            "merge", dirs[0].to_str().unwrap(), dirs[1].to_str().unwrap(),
            "--out", merged.to_str().unwrap(), "--quiet", "--no-plots",
        ]);
        refused_or_identical(&o, &merged)?;
    }
}
