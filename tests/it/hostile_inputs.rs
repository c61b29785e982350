//! Hostile inputs (issue 33): files and arguments a careless or hostile user could give,
//! each refused by the real binary at once, before anything is simulated or written --
//! exit 2, a message naming the file, the field and the reason, nothing under `--out`
//! -- or, for the few that are lowered rather than refused, bounded and said.
//!
//! One table, [`CASES`]: a new attack is one more row (what to edit in the reference
//! scenario and model, the command's arguments, the exit code and the phrases its
//! stderr must hold). Every run is killed after [`TIMEOUT`], failing the test, so an
//! input that makes irqsim hang (a FIFO) or simulate for hours cannot hang CI.
//! The "before" of each row is what issue 33 measured on the binary before the fixes.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Longest a refusal may take: the loader reads a few MB at most.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The reference scenario and model written into a temp dir (with the layout its
/// relative paths need), edited by a row.
struct Case {
    dir: tempfile::TempDir,
    scenario: Value,
    model: Value,
}

impl Case {
    fn new() -> Case {
        let read = |p: &str| -> Value {
            serde_json::from_str(&std::fs::read_to_string(format!("{ROOT}/{p}")).unwrap()).unwrap()
        };
        let mut scenario = read("scenarios/dc21143-64b-1flow.json");
        // Short points: an input wrongly accepted fails fast, not after 140 s.
        scenario["duration_s"] = json!(0.01);
        scenario["drain_s"] = json!(0.01);
        Case {
            dir: tempfile::tempdir().unwrap(),
            scenario,
            model: read("models/p3-448-dc21143-freebsd4.json"),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Write the files; the scenario's path.
    fn write(&self) -> PathBuf {
        let w = |rel: &str, text: String| {
            let p = self.path(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        };
        w(
            "scenarios/case.json",
            serde_json::to_string(&self.scenario).unwrap(),
        );
        w(
            "models/p3-448-dc21143-freebsd4.json",
            serde_json::to_string(&self.model).unwrap(),
        );
        std::fs::create_dir_all(self.path("scenarios/measured")).unwrap();
        std::fs::copy(
            format!("{ROOT}/scenarios/measured/test_25Mx64x1.csv"),
            self.path("scenarios/measured/test_25Mx64x1.csv"),
        )
        .unwrap();
        self.path("scenarios/case.json")
    }
}

/// Where a row's input goes: `SCENARIO` and `OUT` in its arguments are replaced by the
/// scenario's path and the output directory.
struct Row {
    /// The attack, as a test failure names it.
    name: &'static str,
    /// What it changes in the reference scenario and model.
    edit: fn(&mut Case),
    /// The command's arguments.
    args: &'static [&'static str],
    /// Exit code expected.
    code: i32,
    /// Phrases stderr must hold (file, field, reason).
    says: &'static [&'static str],
    /// Whether the command may write `--out` (only the rows that are bounded, not
    /// refused).
    writes: bool,
}

const RUN: &[&str] = &["run", "SCENARIO", "--out", "OUT", "--no-plots"];

fn no_edit(_: &mut Case) {}

/// A constant 64-byte flow of the reference scenario named `name`.
fn flow(name: String) -> Value {
    json!({"name": name, "from": "dc0", "to": "dc1", "frame_bytes": 64, "arrivals": "constant"})
}

const CASES: &[Row] = &[
    // Before: accepted with an estimate of 34,735 min, then `memory allocation of
    // 103079215080 bytes failed` (exit 134), `.checkpoint/experiment.id` left behind.
    Row {
        name: "replications 4294967295",
        edit: |c| c.scenario["replications"] = json!(4294967295u64),
        args: RUN,
        code: 2,
        says: &["case.json", "`replications`", "at most 10000 replications"],
        writes: false,
    },
    // Runs = variants x points x replications, bounded as a product: 200 points x
    // 10,000 replications (each within its own limit) is 2,000,000 runs.
    Row {
        name: "2e6 runs",
        edit: |c| {
            c.scenario["replications"] = json!(10000);
            c.scenario["load"] = json!({"unit": "percent", "from": 0.1, "to": 20, "step": 0.1});
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`replications`",
            "= 2000000 runs",
            "at most 1000000",
        ],
        writes: false,
    },
    // Before: a list of 1e6 points was accepted while a range of 100,001 was refused.
    Row {
        name: "points list of 100001",
        edit: |c| {
            let pts: Vec<f64> = (0..100_001).map(|i| 10.0 + i as f64 * 1e-4).collect();
            c.scenario["load"] = json!({"unit": "percent", "points": pts});
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`load.points`",
            "100001 points; at most 100000",
        ],
        writes: false,
    },
    Row {
        name: "points range of 100001",
        edit: |c| c.scenario["load"] = json!({"unit": "pps", "from": 1, "to": 100001, "step": 1}),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`load`",
            "range gives 100001 points; at most 100000",
        ],
        writes: false,
    },
    // Before: 1,001 plain variants passed while a grid stopped at 1,000.
    Row {
        name: "1001 plain variants",
        edit: |c| {
            let v: Vec<Value> = (0..1001)
                .map(|i| json!({"name": format!("v{i}")}))
                .collect();
            c.scenario["variants"] = json!(v);
        },
        args: RUN,
        code: 2,
        says: &["case.json", "`variants`", "1001 variants; at most 1000"],
        writes: false,
    },
    Row {
        name: "10001 flows",
        edit: |c| {
            let f: Vec<Value> = (0..10_001).map(|i| flow(format!("f{i}"))).collect();
            c.scenario["workload"]["flows"] = json!(f);
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`workload.flows`",
            "10001 flows; at most 10000",
        ],
        writes: false,
    },
    // 10,000 flows (the limit) x 100 points x 10,000 replications (1e6 runs, the
    // limit): every count within its own bound, but the runs' figures alone would be
    // 50 TB. Before: no estimate of memory at all (10,000 flows took 5 GB).
    Row {
        name: "sweep larger than the machine's memory",
        edit: |c| {
            let f: Vec<Value> = (0..10_000).map(|i| flow(format!("f{i}"))).collect();
            c.scenario["workload"]["flows"] = json!(f);
            let pts: Vec<f64> = (0..100).map(|i| 1.0 + i as f64 * 0.1).collect();
            c.scenario["load"] = json!({"unit": "pps", "points": pts});
            c.scenario["duration_s"] = json!(1);
            c.scenario["replications"] = json!(10000);
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "the sweep would need at least",
            "for the results of 1000000 run(s)",
            "of memory available (MemAvailable in /proc/meminfo)",
        ],
        writes: false,
    },
    // Before: 2,321 cycles at 1e-6 MHz were 2.3e12 ns and accepted; at 1e-12 MHz a
    // cost silently became about zero.
    Row {
        name: "clock_mhz 1e-6",
        edit: |c| c.model["cpu"]["clock_mhz"] = json!(1e-6),
        args: RUN,
        code: 2,
        says: &[
            "p3-448-dc21143-freebsd4.json",
            "`cpu.clock_mhz`",
            "must be 1 to 10000 MHz",
        ],
        writes: false,
    },
    Row {
        name: "clock_mhz 1e-12",
        edit: |c| c.model["cpu"]["clock_mhz"] = json!(1e-12),
        args: RUN,
        code: 2,
        says: &[
            "p3-448-dc21143-freebsd4.json",
            "`cpu.clock_mhz`",
            "must be 1 to 10000 MHz",
        ],
        writes: false,
    },
    Row {
        name: "cost of 2e9 cycles",
        edit: |c| c.model["nics"][0]["driver"]["rx_per_packet"] = json!({"cycles": 2e9}),
        args: RUN,
        code: 2,
        says: &[
            "p3-448-dc21143-freebsd4.json",
            "nics[0].driver.rx_per_packet",
            "`cycles` must be at most 1e9",
        ],
        writes: false,
    },
    // Before: ran as 1 transaction and printed load 0.00.
    Row {
        name: "outstanding 0.5",
        edit: |c| c.scenario["load"] = json!({"unit": "outstanding", "points": [0.5]}),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`load.points[0]`",
            "must be a whole number of outstanding transactions, got 0.5",
        ],
        writes: false,
    },
    // Before: refused, but as "ends at 18446744.07 s" (a saturated value).
    Row {
        name: "trace window ending at 1e9 s",
        edit: no_edit,
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--trace",
            "0s..1e9s",
            "--trace-point",
            "10",
        ],
        code: 2,
        says: &[
            "--trace",
            "`1e9s`: beyond the 18446744 s simulated time can hold",
        ],
        writes: false,
    },
    // Before: exit 134 (stack overflow) in 2.5 s.
    Row {
        name: "fit --profile-points 1000",
        edit: no_edit,
        args: &[
            "fit",
            "SCENARIO",
            "--param",
            "kernel.netisr_per_packet.ns=100..5000",
            "--profile-points",
            "1000",
            "--out",
            "OUT",
        ],
        code: 2,
        says: &["--profile-points 1000: at most 200 points per profile"],
        writes: false,
    },
    // Before: 212 s for a job of 0.03 s (10,000 threads); 100,000 spun until killed.
    // Lowered, said, and the sweep runs.
    Row {
        name: "--threads 100000",
        edit: no_edit,
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--no-plots",
            "--threads",
            "100000",
        ],
        code: 0,
        says: &["--threads 100000 is more than 4 per available core"],
        writes: true,
    },
    // Before: memory grew at 0.6-0.9 GB/s until the machine ran out; a FIFO blocked
    // for ever. (The read_limit primitive; these rows pin it.)
    Row {
        name: "model /dev/zero",
        edit: |c| c.scenario["model"] = json!("/dev/zero"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`model`",
            "/dev/zero",
            "a character device, not a regular file",
        ],
        writes: false,
    },
    Row {
        name: "model /dev/urandom",
        edit: |c| c.scenario["model"] = json!("/dev/urandom"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`model`",
            "/dev/urandom",
            "a character device, not a regular file",
        ],
        writes: false,
    },
    Row {
        name: "measured /dev/zero",
        edit: |c| c.scenario["measured"] = json!("/dev/zero"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`measured`",
            "/dev/zero",
            "a character device, not a regular file",
        ],
        writes: false,
    },
    Row {
        name: "measured_rates /dev/zero",
        edit: |c| c.scenario["measured_rates"] = json!("/dev/zero"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`measured_rates`",
            "/dev/zero",
            "a character device, not a regular file",
        ],
        writes: false,
    },
    Row {
        name: "measured_rates is a FIFO",
        edit: |c| {
            mkfifo(&c.path("scenarios/measured/rates-fifo.csv"));
            c.scenario["measured_rates"] = json!("measured/rates-fifo.csv");
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`measured_rates`",
            "rates-fifo.csv",
            "a FIFO (named pipe), not a regular file",
        ],
        writes: false,
    },
    Row {
        name: "model is a FIFO",
        edit: |c| {
            mkfifo(&c.path("scenarios/fifo.json"));
            c.scenario["model"] = json!("fifo.json");
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`model`",
            "fifo.json",
            "a FIFO (named pipe), not a regular file",
        ],
        writes: false,
    },
    Row {
        name: "measured is a FIFO",
        edit: |c| {
            mkfifo(&c.path("scenarios/measured/fifo.csv"));
            c.scenario["measured"] = json!("measured/fifo.csv");
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`measured`",
            "fifo.csv",
            "a FIFO (named pipe), not a regular file",
        ],
        writes: false,
    },
];

/// A named pipe at `p`: nobody ever writes to it, so a reader that blocks never returns.
fn mkfifo(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {p:?}"
    );
}

/// Run the binary with `args`, killed after [`TIMEOUT`]: (exit code, stderr).
fn run(args: &[String]) -> Result<(Option<i32>, String), String> {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stderr is read on a thread so that a chatty child cannot block on a full pipe.
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Ok((status.code(), reader.join().unwrap()));
        }
        if t0.elapsed() > TIMEOUT {
            child.kill().ok();
            child.wait().ok();
            return Err(format!("still running after {TIMEOUT:?}: killed"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_hostile_input_is_refused_or_bounded_at_once() {
    let mut failures = Vec::new();
    for row in CASES {
        let mut case = Case::new();
        (row.edit)(&mut case);
        let scenario = case.write();
        let out = case.path("out");
        let args: Vec<String> = row
            .args
            .iter()
            .map(|a| match *a {
                "SCENARIO" => scenario.display().to_string(),
                "OUT" => out.display().to_string(),
                a => a.to_string(),
            })
            .collect();
        let (code, stderr) = match run(&args) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{}: {e}", row.name));
                continue;
            }
        };
        if code != Some(row.code) {
            failures.push(format!(
                "{}: exit {code:?}, want {}; stderr:\n{}",
                row.name,
                row.code,
                stderr.chars().take(2000).collect::<String>()
            ));
            continue;
        }
        for phrase in row.says {
            if !stderr.contains(phrase) {
                failures.push(format!(
                    "{}: stderr lacks {phrase:?}:\n{}",
                    row.name,
                    stderr.chars().take(2000).collect::<String>()
                ));
            }
        }
        if !row.writes && out.exists() {
            failures.push(format!("{}: {} was written", row.name, out.display()));
        }
        if row.writes && !out.join("results.json").exists() {
            failures.push(format!("{}: no results.json", row.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
