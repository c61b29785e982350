//! A hostile file system (issue 33): read-only and full output directories, FIFOs and
//! devices where files are expected, symbolic links, names with `..`, stale files of
//! another run, and two commands into one directory.
//!
//! One table, one row per attack: a row prepares a world (a temporary tree holding the
//! reference scenario, shortened, its model and measured table), names the command and
//! the one directory it may write into, and the exit code and a phrase of the message
//! it must give. For every row the test also checks that nothing changed outside that
//! directory (a listing of the whole tree before and after) and that no `*.tmp` file is
//! left anywhere. A new attack is one more row.
//!
//! The full-disk and read-only rows mount a small tmpfs, which needs root (as in CI);
//! without it they print that they were skipped.

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A temporary tree: `<root>/a/b/c/work` is the commands' working directory (deep, so
/// that a `../../../X` escaping it stays inside the tree the test watches), holding
/// `scenarios/case.json` (the reference 64-byte sweep, 10 ms per point),
/// `scenarios/measured/` and `models/` as the repository lays them out.
struct World {
    root: tempfile::TempDir,
    work: PathBuf,
}

/// What a command did.
struct Out {
    code: Option<i32>,
    stderr: String,
}

impl World {
    fn new() -> World {
        let root = tempfile::tempdir().expect("temp dir");
        let work = root.path().join("a/b/c/work");
        std::fs::create_dir_all(work.join("scenarios/measured")).expect("dirs");
        std::fs::create_dir_all(work.join("models")).expect("dirs");
        for f in [
            "models/p3-448-dc21143-freebsd4.json",
            "scenarios/measured/test_25Mx64x1.csv",
        ] {
            std::fs::copy(Path::new(ROOT).join(f), work.join(f)).expect("copy");
        }
        let w = World { root, work };
        w.scenario("case.json", |_| {});
        w
    }

    /// Write `scenarios/<name>`: the reference scenario at 10 ms per point, edited.
    fn scenario(&self, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
        let text =
            std::fs::read_to_string(Path::new(ROOT).join("scenarios/dc21143-64b-1flow.json"))
                .expect("scenario");
        let mut s: Value = serde_json::from_str(&text).expect("JSON");
        s["duration_s"] = json!(0.01);
        s["drain_s"] = json!(0.01);
        edit(&mut s);
        let path = self.work.join("scenarios").join(name);
        std::fs::write(&path, s.to_string()).expect("write scenario");
        path
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.work.join(rel)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args).current_dir(&self.work);
        c
    }

    /// Run `irqsim args...` in the working directory.
    fn run(&self, args: &[&str]) -> Out {
        let o = self.command(args).output().expect("run irqsim");
        Out {
            code: o.status.code(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Run, and insist that it succeeded (preparing a row).
    fn ok(&self, args: &[&str]) {
        let o = self.run(args);
        assert_eq!(o.code, Some(0), "irqsim {args:?} (preparing): {}", o.stderr);
    }

    /// Every path under the root, relative, with its kind and size (directories by
    /// kind only), leaving out what lies under `except`.
    fn listing(&self, except: Option<&Path>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut stack = vec![self.root.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if except.is_some_and(|x| p.starts_with(x)) {
                    continue;
                }
                let m = std::fs::symlink_metadata(&p).expect("metadata");
                let rel = p.strip_prefix(self.root.path()).expect("under root");
                let what = if m.is_dir() {
                    "dir".to_string()
                } else {
                    format!("{:?} {} bytes", m.file_type(), m.len())
                };
                out.insert(format!("{} ({what})", rel.display()));
                if m.is_dir() {
                    stack.push(p);
                }
            }
        }
        out
    }

    /// Temporary files left anywhere in the tree (irqsim's are regular files: a link
    /// with such a name is one a row planted, and irqsim must leave it alone).
    fn tmp_files(&self) -> Vec<String> {
        self.listing(None)
            .into_iter()
            .filter(|l| l.split(' ').next().is_some_and(|n| n.ends_with(".tmp")))
            .filter(|l| !l.contains("is_symlink: true"))
            .collect()
    }

    /// Mount a tmpfs of `size` at `rel` (`ro`: read-only), unmounted when the guard
    /// drops; None when not root.
    fn mount(&self, rel: &str, options: &str) -> Option<Mount> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let at = self.path(rel);
        std::fs::create_dir_all(&at).expect("mount point");
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&at)
            .status()
            .expect("mount");
        assert!(
            st.success(),
            "mount -t tmpfs -o {options} at {}",
            at.display()
        );
        Some(Mount(at))
    }
}

/// A mounted tmpfs, unmounted when dropped.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A row's checks after its command ended, given the command's stderr.
type Check = Box<dyn FnOnce(&World, &str)>;

/// What a row prepared.
struct Setup {
    /// The command line after `irqsim`.
    args: Vec<String>,
    /// The only directory (relative to the working directory) it may write into.
    writes: Option<&'static str>,
    /// More checks once it ended, given its stderr.
    check: Option<Check>,
    /// A tmpfs to unmount at the end.
    mount: Option<Mount>,
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

impl Setup {
    fn new(a: &[&str], writes: Option<&'static str>) -> Option<Setup> {
        Some(Setup {
            args: args(a),
            writes,
            check: None,
            mount: None,
        })
    }

    fn then(mut self, check: impl FnOnce(&World, &str) + 'static) -> Setup {
        self.check = Some(Box::new(check));
        self
    }
}

/// One attack.
struct Row {
    name: &'static str,
    /// Prepares the world; None: skipped (why is printed).
    setup: fn(&World) -> Option<Setup>,
    code: i32,
    /// A phrase the message (stderr) must hold.
    phrase: &'static str,
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).expect("JSON")).expect("write");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// A full disk: a tmpfs of `size` as `--out`'s parent.
fn full_disk(w: &World, size: &str) -> Option<Setup> {
    let mount = w.mount("full", &format!("size={size}"))?;
    let mut s = Setup::new(
        &["run", "scenarios/case.json", "--out", "full/o", "--quiet"],
        Some("full"),
    )?;
    s.mount = Some(mount);
    Some(s)
}

/// An 8-core ixgbe router's dumps (tests/it/import_host.rs) in `dumps/`.
fn dumps(w: &World) {
    crate::import_host::ixgbe_host(&w.path("dumps"), 0);
}

/// A 2 x 2 grid over the case, so that `plot` draws heat maps named by its cells' base.
fn grid(s: &mut Value) {
    s["load"] = json!({ "unit": "percent", "points": [10, 20] });
    s["grid"] = json!({
        "parameters": [
            { "path": "nics.dc0.rx_ring_slots", "values": [16, 32] },
            { "path": "kernel.ipintrq_maxlen", "values": [25, 50] }
        ],
        "latency_at": 20
    });
    s.as_object_mut().expect("object").remove("measured");
}

/// `out/.checkpoint/` with an `experiment.id` as irqsim writes it, of another
/// experiment (so a run without `--resume` starts afresh over it).
fn checkpoint_of_another_run(w: &World) {
    std::fs::create_dir_all(w.path("out/.checkpoint")).expect("out");
    std::fs::write(
        w.path("out/.checkpoint/experiment.id"),
        b"0123456789abcdef\n",
    )
    .expect("id");
}

fn timeline(s: &mut Value) {
    s["timeline"] = json!({ "bucket_ms": 1 });
}

/// The attacks.
const ROWS: &[Row] = &[
    Row {
        name: "read-only output directory: refused before simulating",
        setup: |w| {
            let Some(m) = w.mount("ro", "ro,size=64k") else {
                println!("skipped: read-only output directory (needs root to mount a tmpfs)");
                return None;
            };
            let mut s = Setup::new(&["run", "scenarios/case.json", "--out", "ro/out"], None)?;
            s.mount = Some(m);
            Some(s)
        },
        code: 1,
        phrase: "cannot lock the output directory: ro/out: Read-only file system",
    },
    Row {
        name: "full disk while saving the checkpoint: first failure reported, run stopped",
        setup: |w| {
            let s = full_disk(w, "8k");
            if s.is_none() {
                println!("skipped: full disk (needs root to mount a tmpfs)");
            }
            Some(s?.then(|w, _| {
                // Stopped at the first failed save: no run file is left but the
                // ones saved before it (none fit beside the lock and experiment.id).
                let saved = std::fs::read_dir(w.path("full/o/.checkpoint"))
                    .expect("checkpoint")
                    .filter(|e| e.as_ref().expect("entry").file_name() != "experiment.id")
                    .count();
                assert_eq!(saved, 0);
            }))
        },
        code: 1,
        phrase: "saving a finished run to the checkpoint failed, so the sweep stopped: full/o/.checkpoint/v0-p",
    },
    Row {
        name: "full disk while writing the results (the SmartBits table first, results.json last)",
        setup: |w| {
            let s = full_disk(w, "64k");
            if s.is_none() {
                println!("skipped: full disk (needs root to mount a tmpfs)");
            }
            s
        },
        code: 1,
        phrase: "writing results under full/o: full/o/smartbits.csv: No space left on device",
    },
    Row {
        name: "full disk while writing the plots",
        setup: |w| {
            let s = full_disk(w, "300k");
            if s.is_none() {
                println!("skipped: full disk (needs root to mount a tmpfs)");
            }
            s
        },
        code: 1,
        phrase: "No space left on device",
    },
    Row {
        name: "model file is a FIFO",
        setup: |w| {
            mkfifo(&w.path("models/fifo.json"));
            w.scenario("case.json", |s| s["model"] = json!("../models/fifo.json"));
            Setup::new(&["run", "scenarios/case.json", "--out", "out"], None)
        },
        code: 2,
        phrase: "is a FIFO (named pipe), not a regular file",
    },
    Row {
        name: "measured table is /dev/zero",
        setup: |w| {
            w.scenario("case.json", |s| s["measured"] = json!("/dev/zero"));
            Setup::new(&["run", "scenarios/case.json", "--out", "out"], None)
        },
        code: 2,
        phrase: "is a character device, not a regular file",
    },
    Row {
        name: "results.json given to plot is a FIFO",
        setup: |w| {
            mkfifo(&w.path("results.json"));
            Setup::new(&["plot", "results.json", "--out", "out"], None)
        },
        code: 2,
        phrase: "is a FIFO (named pipe), not a regular file",
    },
    Row {
        name: "a shard's run file is a symbolic link to /dev/zero",
        setup: |w| {
            w.ok(&[
                "run",
                "scenarios/case.json",
                "--shard",
                "1/1",
                "--out",
                "s1",
                "--quiet",
                "--no-plots",
            ]);
            let run = w.path("s1/runs/v0-p0-r0.json");
            std::fs::remove_file(&run).expect("run file");
            std::os::unix::fs::symlink("/dev/zero", &run).expect("link");
            Setup::new(&["merge", "s1", "--out", "merged"], None)
        },
        code: 2,
        phrase: "is a character device, not a regular file",
    },
    Row {
        name: "the lock file is a symbolic link: not followed, its target untouched",
        setup: |w| {
            std::fs::create_dir_all(w.path("out")).expect("out");
            std::fs::write(w.path("target"), "keep").expect("target");
            std::os::unix::fs::symlink("../target", w.path("out/.irqsim.lock")).expect("link");
            Some(
                Setup::new(&["run", "scenarios/case.json", "--out", "out"], None)?.then(|w, _| {
                    assert_eq!(
                        std::fs::read_to_string(w.path("target")).expect("target"),
                        "keep"
                    )
                }),
            )
        },
        code: 1,
        phrase: "out/.irqsim.lock: Too many levels of symbolic links",
    },
    Row {
        name: "scenario file `...json`, whose stem `..` would make the working directory the output",
        setup: |w| {
            w.scenario("...json", |_| {});
            Setup::new(&["run", "scenarios/...json", "--quiet"], None)
        },
        code: 2,
        phrase: "scenarios/...json: at `.`: the file's name gives the scenario its name, and `..` is only dots",
    },
    Row {
        name: "merge without --out of a shard.json whose scenario is `../../../X`",
        setup: |w| {
            w.ok(&[
                "run",
                "scenarios/case.json",
                "--shard",
                "1/1",
                "--out",
                "s1",
                "--quiet",
                "--no-plots",
            ]);
            let path = w.path("s1/shard.json");
            let mut m = read_json(&path);
            m["scenario"] = json!("../../../X");
            m["frame"]["scenario"] = json!("../../../X");
            write_json(&path, &m);
            Setup::new(&["merge", "s1", "--quiet"], None)
        },
        code: 2,
        phrase: "s1/shard.json: not a partial result this irqsim can read: at `scenario`: `../../../X` must be non-empty letters",
    },
    Row {
        name: "plot of a results.json whose grid cells' base is `x/../../../escaped`",
        setup: |w| {
            w.scenario("grid.json", grid);
            w.ok(&["run", "scenarios/grid.json", "--out", "out", "--quiet"]);
            let path = w.path("out/results.json");
            let mut r = read_json(&path);
            for c in r["grid"]["cells"].as_array_mut().expect("cells") {
                c["base"] = json!("x/../../../escaped");
            }
            write_json(&path, &r);
            // With this directory there, plots/grid-mlfrr-x/../../../escaped.svg is
            // beside out/, outside it.
            std::fs::create_dir_all(w.path("out/plots/grid-mlfrr-x")).expect("dir");
            Setup::new(&["plot", "out/results.json", "--quiet"], None)
        },
        code: 2,
        phrase: "out/results.json: at `grid.cells[0].base`: `x/../../../escaped` must be non-empty letters",
    },
    Row {
        name: "plot of a results.json whose variant is `../escaped`",
        setup: |w| {
            w.ok(&[
                "run",
                "scenarios/case.json",
                "--out",
                "out",
                "--quiet",
                "--no-plots",
            ]);
            let path = w.path("out/results.json");
            let mut r = read_json(&path);
            r["points"][0]["variant"] = json!("../escaped");
            write_json(&path, &r);
            Setup::new(&["plot", "out/results.json", "--quiet"], None)
        },
        code: 2,
        phrase: "out/results.json: at `points[0].variant`: `../escaped` must be non-empty letters",
    },
    Row {
        name: "a run without a timeline removes the timeline.csv of the run before it",
        setup: |w| {
            w.scenario("tl.json", timeline);
            w.ok(&["run", "scenarios/tl.json", "--out", "out", "--quiet"]);
            assert!(
                w.path("out/timeline.csv").exists() && w.path("out/plots/timeline.svg").exists()
            );
            Some(
                Setup::new(
                    &["run", "scenarios/case.json", "--out", "out", "--quiet"],
                    Some("out"),
                )?
                .then(|w, _| {
                    assert!(
                        !w.path("out/timeline.csv").exists(),
                        "irqsim's own stale timeline is removed"
                    );
                    assert!(!w.path("out/plots/timeline.svg").exists());
                }),
            )
        },
        code: 0,
        phrase: "",
    },
    Row {
        name: "a timeline.csv irqsim did not write is kept, and not drawn",
        setup: |w| {
            std::fs::create_dir_all(w.path("out")).expect("out");
            let mine =
                "variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us\ndefault,10,0,1,5,5\n";
            std::fs::write(w.path("out/timeline.csv"), mine).expect("user's file");
            w.ok(&["run", "scenarios/case.json", "--out", "out", "--quiet"]);
            Some(
                Setup::new(&["plot", "out/results.json", "--quiet"], Some("out"))?.then(
                    move |w, _| {
                        assert_eq!(
                            std::fs::read_to_string(w.path("out/timeline.csv")).expect("kept"),
                            mine
                        );
                        assert!(!w.path("out/plots/timeline.svg").exists());
                    },
                ),
            )
        },
        code: 0,
        phrase: "out/timeline.csv is not drawn: out/results.json records no timeline, so it is another run's",
    },
    Row {
        name: "plot does not draw another run's timeline.csv put beside results.json",
        setup: |w| {
            w.scenario("tl.json", timeline);
            w.ok(&["run", "scenarios/tl.json", "--out", "out", "--quiet"]);
            w.scenario("tl2.json", |s| {
                timeline(s);
                s["duration_s"] = json!(0.02);
            });
            w.ok(&[
                "run",
                "scenarios/tl2.json",
                "--out",
                "other",
                "--quiet",
                "--no-plots",
            ]);
            std::fs::copy(w.path("other/timeline.csv"), w.path("out/timeline.csv")).expect("swap");
            Some(
                Setup::new(&["plot", "out/results.json", "--quiet"], Some("out"))?.then(|w, _| {
                    assert!(
                        !w.path("out/plots/timeline.svg").exists(),
                        "the stale figure is removed, none drawn"
                    );
                }),
            )
        },
        code: 0,
        phrase: "out/timeline.csv is not drawn: it is not the timeline out/results.json was written with",
    },
    Row {
        name: "two runs into one --out: the second is refused with the first's pid",
        setup: |w| {
            // Long enough (10 s per point, one thread) that the second starts while the
            // first runs.
            w.scenario("long.json", |s| {
                s["duration_s"] = json!(10);
                s["workload"]["flows"][0]["arrivals"] = json!("poisson");
            });
            let one = [
                "run",
                "scenarios/long.json",
                "--threads",
                "1",
                "--no-plots",
                "--quiet",
            ];
            let mut reference = args(&one);
            reference.extend(args(&["--seed", "1", "--out", "reference"]));
            w.ok(&reference.iter().map(String::as_str).collect::<Vec<_>>());
            let mut first: Child = w
                .command(&one)
                .args(["--seed", "1", "--out", "out"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("first run");
            let t0 = Instant::now();
            while !w.path("out/.irqsim.lock").exists() {
                if t0.elapsed() > Duration::from_secs(30)
                    || first.try_wait().is_ok_and(|s| s.is_some())
                {
                    let _ = first.kill();
                    let _ = first.wait();
                    panic!("the first run never locked out/ (or ended first)");
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            let pid = first.id();
            let mut second = args(&one);
            second.extend(args(&["--seed", "2", "--out", "out"]));
            let s = Setup {
                args: second,
                writes: Some("out"),
                check: None,
                mount: None,
            };
            Some(s.then(move |w, stderr| {
                assert!(
                    stderr.contains(&format!("(pid {pid},")),
                    "the holder's pid {pid}"
                );
                let out = first.wait_with_output().expect("first run ends");
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                // All of the first run's points are seed 1's: its results are the
                // reference run's, byte for byte.
                assert_eq!(
                    std::fs::read(w.path("out/results.json")).expect("results"),
                    std::fs::read(w.path("reference/results.json")).expect("reference")
                );
                assert!(
                    !w.path("out/.irqsim.lock").exists(),
                    "the lock file goes with the lock"
                );
            }))
        },
        code: 2,
        phrase: "out is in use by another irqsim command (pid ",
    },
    Row {
        name: "a link planted at a temporary file's name is not followed (review: it overwrote the linked file outside --out, exit 0)",
        setup: |w| {
            std::fs::create_dir_all(w.path("out/.checkpoint")).expect("out");
            std::fs::write(w.path("victim.txt"), b"mine").expect("victim");
            for tmp in ["out/results.json.tmp", "out/.checkpoint/experiment.id.tmp"] {
                std::os::unix::fs::symlink(w.path("victim.txt"), w.path(tmp)).expect("link");
            }
            Some(
                Setup::new(
                    &["run", "scenarios/case.json", "--out", "out", "--quiet"],
                    Some("out"),
                )?
                .then(|w, _| {
                    assert_eq!(
                        std::fs::read(w.path("victim.txt")).expect("victim"),
                        b"mine"
                    );
                    let m = std::fs::symlink_metadata(w.path("out/results.json")).expect("results");
                    assert!(m.is_file(), "results.json is a file, not the link");
                }),
            )
        },
        code: 0,
        phrase: "",
    },
    Row {
        name: ".checkpoint is a link to another directory: refused before work (review: irqsim's files there were deleted)",
        setup: |w| {
            std::fs::create_dir_all(w.path("out")).expect("out");
            std::fs::create_dir_all(w.path("elsewhere")).expect("elsewhere");
            std::fs::write(w.path("elsewhere/experiment.id"), b"0123456789abcdef\n").expect("id");
            std::os::unix::fs::symlink(w.path("elsewhere"), w.path("out/.checkpoint"))
                .expect("link");
            Setup::new(&["run", "scenarios/case.json", "--out", "out"], None)
        },
        code: 2,
        phrase: "out/.checkpoint is a symbolic link",
    },
    Row {
        name: "plots is a file: refused before work (was exit 1 after simulating)",
        setup: |w| {
            std::fs::create_dir_all(w.path("out")).expect("out");
            std::fs::write(w.path("out/plots"), b"notes").expect("plots");
            Setup::new(&["run", "scenarios/case.json", "--out", "out"], None)
        },
        code: 2,
        phrase: "out/plots is not a directory",
    },
    Row {
        name: "a refusal to start afresh removes nothing (review: experiment.id and saved runs were deleted before it)",
        setup: |w| {
            checkpoint_of_another_run(w);
            std::fs::write(w.path("out/.checkpoint/v0-p0-r0.json"), b"my notes").expect("notes");
            Some(
                Setup::new(&["run", "scenarios/case.json", "--out", "out"], None)?.then(|w, _| {
                    assert!(w.path("out/.checkpoint/experiment.id").exists());
                }),
            )
        },
        code: 2,
        phrase: "v0-p0-r0.json",
    },
    Row {
        name: "a user's figure in plots/ stays (review: plot and run removed plots/cores.svg and grid-notes.png)",
        setup: |w| {
            std::fs::create_dir_all(w.path("out/plots")).expect("plots");
            for f in ["out/plots/cores.svg", "out/plots/grid-notes.png"] {
                std::fs::write(w.path(f), b"mine").expect("figure");
            }
            Some(
                Setup::new(
                    &["run", "scenarios/case.json", "--out", "out", "--quiet"],
                    Some("out"),
                )?
                .then(|w, _| {
                    for f in ["out/plots/cores.svg", "out/plots/grid-notes.png"] {
                        assert_eq!(std::fs::read(w.path(f)).expect(f), b"mine", "{f}");
                    }
                }),
            )
        },
        code: 0,
        phrase: "",
    },
    // --- Issue 53, case 3: `import-host --out` wrote over whatever was at the path
    // (exit 0), followed links, took no lock; dumps were followed out of DIR and
    // their lines printed; names were printed with their escape sequences. ---
    Row {
        name: "53.3 import-host --out a user's file: refused, the file kept",
        setup: |w| {
            dumps(w);
            std::fs::write(w.path("model.json"), b"my notes").expect("file");
            Setup::new(&["import-host", "dumps", "--out", "model.json"], None)
        },
        code: 2,
        phrase: "--out model.json: a file import-host did not write",
    },
    Row {
        name: "53.3 import-host --out a FIFO: refused",
        setup: |w| {
            dumps(w);
            mkfifo(&w.path("model.fifo"));
            Setup::new(&["import-host", "dumps", "--out", "model.fifo"], None)
        },
        code: 2,
        phrase: "--out model.fifo: not a regular file",
    },
    Row {
        name: "53.3 import-host --out a symbolic link: refused, its target kept",
        setup: |w| {
            dumps(w);
            std::fs::write(w.path("victim.txt"), b"mine").expect("victim");
            std::os::unix::fs::symlink("victim.txt", w.path("model.json")).expect("link");
            Setup::new(&["import-host", "dumps", "--out", "model.json"], None)
        },
        code: 2,
        phrase: "--out model.json: a symbolic link",
    },
    Row {
        name: "53.3 import-host --out one of its own dumps: refused",
        setup: |w| {
            dumps(w);
            Setup::new(&["import-host", "dumps", "--out", "dumps/lscpu"], None)
        },
        code: 2,
        phrase: "--out dumps/lscpu: inside the dump directory dumps",
    },
    Row {
        name: "53.3 import-host: a dump linked out of DIR is not read, its lines not printed",
        setup: |w| {
            dumps(w);
            let secret: String = (0..20).map(|i| format!("SECRET line {i}\n")).collect();
            std::fs::write(w.path("secret.txt"), secret).expect("secret");
            std::fs::remove_file(w.path("dumps/uname-r")).expect("uname-r");
            std::os::unix::fs::symlink("../secret.txt", w.path("dumps/uname-r")).expect("link");
            Some(
                Setup::new(&["import-host", "dumps"], None)?
                    .then(|_, err| assert!(!err.contains("SECRET"), "{err}")),
            )
        },
        code: 2,
        phrase: "uname-r: cannot read: is a symbolic link",
    },
    Row {
        name: "53.3 import-host: an interface name with a terminal escape is refused, escaped",
        setup: |w| {
            dumps(w);
            for k in ["i", "g", "l", "c"] {
                std::fs::copy(
                    w.path(&format!("dumps/ethtool-{k}-eth0")),
                    w.path(&format!("dumps/ethtool-{k}-e\u{1b}[31mx")),
                )
                .expect("copy");
            }
            Some(
                Setup::new(&["import-host", "dumps"], None)?
                    .then(|_, err| assert!(!err.contains('\u{1b}'), "{err:?}")),
            )
        },
        code: 2,
        phrase: "interface name `e\\u{1b}[31mx` must be non-empty letters",
    },
    Row {
        name: "53.3 import-host --out over its own earlier model: written, under the lock",
        setup: |w| {
            dumps(w);
            w.ok(&["import-host", "dumps", "--out", "o/host.json", "--quiet"]);
            Some(
                Setup::new(&["import-host", "dumps", "--out", "o/host.json"], Some("o"))?.then(
                    |w, _| {
                        assert!(w.path("o/host.json").is_file());
                        assert!(!w.path("o/.irqsim.lock").exists(), "the lock file is left");
                    },
                ),
            )
        },
        code: 0,
        phrase: "wrote o/host.json",
    },
    Row {
        // Before: an imported model the user had edited (a measured cost put in) was
        // replaced with exit 0. Its seal (`notes.import_sha256`) no longer matches.
        name: "53.3 import-host --out over its earlier model edited since: refused, the edit kept",
        setup: |w| {
            dumps(w);
            w.ok(&["import-host", "dumps", "--out", "host.json", "--quiet"]);
            let text = std::fs::read_to_string(w.path("host.json")).expect("model");
            let edited = text.replacen("\"description\"", "\"x_user\": 1,\n  \"description\"", 1);
            assert_ne!(edited, text);
            std::fs::write(w.path("host.json"), &edited).expect("edit");
            Some(
                Setup::new(&["import-host", "dumps", "--out", "host.json"], None)?.then(
                    move |w, _| {
                        assert_eq!(
                            std::fs::read_to_string(w.path("host.json")).expect("model"),
                            edited
                        );
                    },
                ),
            )
        },
        code: 2,
        phrase: "--out host.json: a model import-host wrote that has been edited since",
    },
    Row {
        name: "53.3 import-host --scenario ./M with --out M: one file by two spellings, refused",
        setup: |w| {
            dumps(w);
            Setup::new(
                &[
                    "import-host",
                    "dumps",
                    "--out",
                    "m.json",
                    "--scenario",
                    "./m.json",
                ],
                None,
            )
        },
        code: 2,
        phrase: "--scenario ./m.json: the same file as --out",
    },
    Row {
        name: "53.3 import-host --profile M --out M: never over its own input, M kept",
        setup: |w| {
            dumps(w);
            w.ok(&["import-host", "dumps", "--out", "m.json", "--quiet"]);
            let before = std::fs::read(w.path("m.json")).expect("model");
            Some(
                Setup::new(
                    &[
                        "import-host",
                        "dumps",
                        "--profile",
                        "m.json",
                        "--out",
                        "./m.json",
                    ],
                    None,
                )?
                .then(move |w, _| {
                    assert_eq!(std::fs::read(w.path("m.json")).expect("model"), before);
                }),
            )
        },
        code: 2,
        phrase: "--profile m.json: the same file as --out",
    },
    Row {
        name: "53.3 import-host: a DIR name with a terminal escape is printed escaped",
        setup: |_w| {
            Some(
                Setup::new(&["import-host", "g\u{1b}[31m"], None)?
                    .then(|_, err| assert!(!err.contains('\u{1b}'), "{err:?}")),
            )
        },
        code: 2,
        phrase: "g\\u{1b}[31m",
    },
    // --- Issue 53, case 11: a damaged 1 GiB checkpoint file was read whole (1 GiB of
    // memory) before it was refused. Now its size is checked against the largest run
    // file a run of this scenario can be (run_file::max_bytes: 64 KiB, 4 KiB for each of
    // its flow and the sender's, 4 KiB for its core, 64 KiB for each of its 4 NICs)
    // before a byte is read. A sparse file: made at once. ---
    Row {
        name: "53.11 a damaged 1 GiB checkpoint file: refused by its size, not read",
        setup: |w| {
            checkpoint_of_another_run(w);
            std::fs::File::create(w.path("out/.checkpoint/v0-p0-r0.json"))
                .and_then(|f| f.set_len(1 << 30))
                .expect("sparse");
            Setup::new(&["run", "scenarios/case.json", "--out", "out"], None)
        },
        code: 2,
        phrase: "v0-p0-r0.json: not irqsim's own file (cannot read: is larger than 339968 bytes (1073741824 bytes)",
    },
    // --- Issue 53, case 11: with no room left, a zero-byte `.irqsim.lock` stayed. ---
    Row {
        name: "53.11 the lock on a full disk: refused, no lock file left",
        setup: |w| {
            let Some(m) = w.mount("full", "size=16k") else {
                println!("skipped: lock on a full disk (needs root to mount a tmpfs)");
                return None;
            };
            use std::io::Write;
            let mut f = std::fs::File::create(w.path("full/fill")).expect("fill");
            while f.write_all(&[0u8; 4096]).is_ok() {}
            drop(f);
            let mut s = Setup::new(
                &["run", "scenarios/case.json", "--out", "full/o", "--quiet"],
                Some("full"),
            )?
            .then(|w, _| {
                assert!(
                    !w.path("full/o/.irqsim.lock").exists(),
                    "the lock file is left"
                )
            });
            s.mount = Some(m);
            Some(s)
        },
        code: 1,
        phrase: "cannot lock the output directory: full/o/.irqsim.lock: No space left on device",
    },
];
/// The message of a panic.
fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn hostile_file_systems_are_refused_or_survived() {
    let mut failures = Vec::new();
    for row in ROWS {
        let w = World::new();
        let setup = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (row.setup)(&w)))
        {
            Ok(Some(s)) => s,
            Ok(None) => continue,
            Err(e) => {
                failures.push(format!(
                    "{}: preparing it failed: {}",
                    row.name,
                    panic_text(&*e)
                ));
                continue;
            }
        };
        let writes = setup.writes.map(|d| w.path(d));
        let before = w.listing(writes.as_deref());
        let a: Vec<&str> = setup.args.iter().map(String::as_str).collect();
        let out = w.run(&a);
        let after = w.listing(writes.as_deref());
        let mut wrong = Vec::new();
        if out.code != Some(row.code) {
            wrong.push(format!("exit code {:?}, not {}", out.code, row.code));
        }
        if !out.stderr.contains(row.phrase) {
            wrong.push(format!("no `{}` in the message", row.phrase));
        }
        if before != after {
            let gone: Vec<_> = before.difference(&after).collect();
            let new: Vec<_> = after.difference(&before).collect();
            wrong.push(format!(
                "changed outside its directory: new {new:?}, gone {gone:?}"
            ));
        }
        let tmp = w.tmp_files();
        if !tmp.is_empty() {
            wrong.push(format!("temporary files left: {tmp:?}"));
        }
        if let Some(check) = setup.check
            && let Err(e) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&w, &out.stderr)))
        {
            wrong.push(format!("check failed: {}", panic_text(&*e)));
        }
        drop(setup.mount);
        if !wrong.is_empty() {
            failures.push(format!(
                "{}:\n  {}\n  stderr: {}",
                row.name,
                wrong.join("\n  "),
                out.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A path given on the command line with an escape sequence (`sc\e[2J.json`, `--out
/// o\e[2J`) is printed escaped, in the loader's error and in the run's "wrote ... in"
/// line: nothing raw reaches the terminal.
#[test]
fn paths_from_the_command_line_are_printed_escaped() {
    let t = tempfile::tempdir().unwrap();
    let bad = t.path().join("sc\u{1b}[2J.json");
    std::fs::write(&bad, "{").unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_irqsim"))
        .args(["run", bad.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        !err.contains('\u{1b}') && err.contains("\\u{1b}[2J"),
        "{err}"
    );
    let scenario =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/dc21143-64b-1flow.json");
    let sc = serde_json::json!({
        "model": std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models/p3-448-dc21143-freebsd4.json"),
        "workload": {"flows": [{"from": "dc0", "to": "dc1"}]},
        "load": {"unit": "percent", "points": [10]},
        "duration_s": 0.001
    });
    assert!(scenario.exists());
    let good = t.path().join("s.json");
    std::fs::write(&good, sc.to_string()).unwrap();
    let out = t.path().join("o\u{1b}[2J");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_irqsim"))
        .args(["run", good.to_str().unwrap(), "--no-plots", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{se}");
    assert!(!so.contains('\u{1b}') && !se.contains('\u{1b}'), "{so}{se}");
    assert!(so.contains("o\\u{1b}[2J"), "{so}");
}
