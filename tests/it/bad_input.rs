//! Bad input is rejected by the real binary with exit code 2, a message naming the file,
//! the JSON path (or CSV line) and the reason, and nothing written under `--out`.
//!
//! Every test copies the reference scenario, its model and its measured table into a
//! temporary directory with the same layout (`scenarios/`, `scenarios/measured/`,
//! `models/`), so the relative paths inside the scenario still resolve, edits one thing
//! with serde_json and runs `irqsim run <scenario> --out <tmp>/out --quiet`.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const SCENARIO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/dc21143-64b-1flow.json"
);
const MODEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/models/p3-448-dc21143-freebsd4.json"
);
const MEASURED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/measured/test_25Mx64x1.csv"
);
/// File names as the scenario refers to them.
const MODEL_FILE: &str = "p3-448-dc21143-freebsd4.json";
const MEASURED_FILE: &str = "test_25Mx64x1.csv";

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// A scenario, its model and its measured table, to edit and then write into a temp dir.
struct Case {
    dir: tempfile::TempDir,
    scenario: Value,
    model: Value,
    /// Raw text written instead of `scenario` (for syntax errors).
    scenario_text: Option<String>,
    /// Raw text written instead of `model` (for syntax errors).
    model_text: Option<String>,
    /// Text of the measured table (the reference one unless replaced).
    csv_text: String,
}

/// What a run of the binary produced.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Case {
    /// The reference files, with a short duration so that an input the loader wrongly
    /// accepts fails the test quickly instead of simulating 14 points of 10 s.
    fn new() -> Case {
        let mut scenario: Value = serde_json::from_str(&read(SCENARIO)).expect("scenario JSON");
        scenario["duration_s"] = json!(0.01);
        let mut model: Value = serde_json::from_str(&read(MODEL)).expect("model JSON");
        // The cases switch NICs to other receive policies; the profile's TX_NOBUF
        // completions belong to the `interrupt` handler (a polled NIC without
        // `tx_completion: null` is refused, and that is not what these cases test).
        for nic in model["nics"].as_array_mut().expect("nics") {
            nic.as_object_mut().expect("nic").remove("tx_completion");
        }
        Case {
            dir: tempfile::tempdir().expect("temp dir"),
            scenario,
            model,
            scenario_text: None,
            model_text: None,
            csv_text: read(MEASURED),
        }
    }

    fn scenario_path(&self) -> PathBuf {
        self.dir.path().join("scenarios").join("case.json")
    }

    fn model_path(&self) -> PathBuf {
        self.dir.path().join("models").join(MODEL_FILE)
    }

    fn csv_path(&self) -> PathBuf {
        self.dir
            .path()
            .join("scenarios")
            .join("measured")
            .join(MEASURED_FILE)
    }

    fn out_dir(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    /// Write the files and run `irqsim run <scenario> --out <dir>/out --quiet`.
    fn run(&self) -> Run {
        self.write();
        self.run_on(&self.scenario_path())
    }

    /// Write the scenario, the model and the measured table into the temp dir.
    fn write(&self) {
        let write = |p: &Path, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
        write(
            &self.scenario_path(),
            self.scenario_text
                .as_deref()
                .unwrap_or(&pretty(&self.scenario)),
        );
        write(
            &self.model_path(),
            self.model_text.as_deref().unwrap_or(&pretty(&self.model)),
        );
        write(&self.csv_path(), &self.csv_text);
    }

    /// Run the binary on `scenario` (which may not exist) without writing anything.
    fn run_on(&self, scenario: &Path) -> Run {
        let o = Command::new(BIN)
            .arg("run")
            .arg(scenario)
            .arg("--out")
            .arg(self.out_dir())
            .arg("--quiet")
            .output()
            .expect("running irqsim");
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Exit code 2, the `error: invalid input` banner, nothing on stdout, and nothing
    /// written under `--out`. Returns the problem lines (indented by two spaces).
    fn rejected<'a>(&self, run: &'a Run) -> Vec<&'a str> {
        assert_eq!(
            run.code,
            Some(2),
            "expected exit code 2 (bad input)\nstderr:\n{}",
            run.stderr
        );
        let mut lines = run.stderr.lines();
        assert_eq!(
            lines.next(),
            Some("error: invalid input"),
            "stderr:\n{}",
            run.stderr
        );
        assert!(
            run.stdout.is_empty(),
            "nothing on stdout expected:\n{}",
            run.stdout
        );
        let out = self.out_dir();
        if out.exists() {
            let entries: Vec<_> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            assert!(entries.is_empty(), "bad input wrote {entries:?}");
        }
        let problems: Vec<&str> = lines.collect();
        assert!(!problems.is_empty(), "no problem reported");
        for l in &problems {
            assert!(l.starts_with("  "), "problem lines are indented: {l:?}");
        }
        problems
    }

    /// Assert the run was rejected with exactly one problem, in `file` at JSON `path`,
    /// whose line contains every one of `reason`.
    fn assert_one(&self, run: &Run, file: &Path, path: &str, reason: &[&str]) {
        let problems = self.rejected(run);
        assert_eq!(problems.len(), 1, "one problem expected:\n{}", run.stderr);
        assert_problem(&run.stderr, file, path, reason);
    }
}

/// The problem line for `file` at JSON `path`, which must contain every one of `reason`.
fn assert_problem(stderr: &str, file: &Path, path: &str, reason: &[&str]) {
    let prefix = format!("  {}: at `{path}`: ", file.display());
    let line = stderr
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in stderr:\n{stderr}"));
    for r in reason {
        assert!(
            line.contains(r),
            "{r:?} missing from the reason in {line:?}"
        );
    }
}

/// The 1-based number of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {text}"))
        + 1
}

// ---------------------------------------------------------------- missing files

#[test]
fn missing_scenario_file() {
    let c = Case::new();
    let missing = c.dir.path().join("scenarios").join("no-such-scenario.json");
    let run = c.run_on(&missing);
    let problems = c.rejected(&run);
    assert_eq!(problems.len(), 1, "{}", run.stderr);
    let want = format!("  {}: cannot read file: ", missing.display());
    assert!(problems[0].starts_with(&want), "{}", run.stderr);
    assert!(problems[0].contains("No such file"), "{}", run.stderr);
}

#[test]
fn scenario_naming_a_missing_model() {
    let mut c = Case::new();
    c.scenario["model"] = json!("../models/no-such-model.json");
    let run = c.run();
    let problems = c.rejected(&run);
    assert_eq!(problems.len(), 1, "{}", run.stderr);
    // Reported against the scenario's `model` field, naming the model path resolved
    // against the scenario's directory.
    let model = c.dir.path().join("models").join("no-such-model.json");
    let want = format!(
        "  {}: at `model`: cannot read model `{}`: ",
        c.scenario_path().display(),
        model.display()
    );
    assert!(problems[0].starts_with(&want), "{}", run.stderr);
    assert!(problems[0].contains("No such file"), "{}", run.stderr);
}

// ---------------------------------------------------------------- JSON syntax

#[test]
fn scenario_syntax_error_has_line_and_column() {
    let mut c = Case::new();
    let text = serde_json::to_string_pretty(&c.scenario).unwrap();
    // Drop the colon after "duration_s".
    let bad = text.replacen("\"duration_s\":", "\"duration_s\"", 1);
    let line = line_of(&bad, "\"duration_s\"");
    c.scenario_text = Some(bad);
    let run = c.run();
    let problems = c.rejected(&run);
    assert_eq!(problems.len(), 1, "{}", run.stderr);
    let p = problems[0];
    let want = format!("  {}: invalid JSON: ", c.scenario_path().display());
    assert!(p.starts_with(&want), "{}", run.stderr);
    assert!(p.contains("expected `:`"), "{}", run.stderr);
    assert!(
        p.contains(&format!("at line {line} column ")),
        "line {line} expected: {}",
        run.stderr
    );
}

#[test]
fn model_syntax_error_has_line_and_column() {
    let mut c = Case::new();
    let text = read(MODEL);
    // A trailing comma before a closing brace.
    let bad = text.replacen("\"clock_mhz\": 448.05", "\"clock_mhz\": 448.05,", 1);
    assert_ne!(bad, text, "the reference model changed; adapt the edit");
    // serde_json reports the character after the comma: the `}` on the next line.
    let line = line_of(&bad, "\"clock_mhz\"") + 1;
    c.model_text = Some(bad);
    let run = c.run();
    let problems = c.rejected(&run);
    assert_eq!(problems.len(), 1, "{}", run.stderr);
    let p = problems[0];
    let want = format!("  {}: invalid JSON: ", c.model_path().display());
    assert!(p.starts_with(&want), "{}", run.stderr);
    assert!(p.contains("trailing comma"), "{}", run.stderr);
    assert!(
        p.contains(&format!("at line {line} column ")),
        "line {line} expected: {}",
        run.stderr
    );
}

// ---------------------------------------------------------------- unknown fields

#[test]
fn unknown_top_level_scenario_field() {
    let mut c = Case::new();
    c.scenario["durations_s"] = json!(10);
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "durations_s",
        // The reason lists the accepted fields, so the intended `duration_s` is visible.
        &[
            "unknown field `durations_s`",
            "expected one of",
            "`duration_s`",
        ],
    );
}

#[test]
fn unknown_field_in_a_model_nic() {
    let mut c = Case::new();
    c.model["nics"][0]["rx_ring_slot"] = json!(128);
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[0].rx_ring_slot",
        &["unknown field `rx_ring_slot`", "`rx_ring_slots`"],
    );
    // The position points into the pretty-printed model file, not at a re-serialization.
    assert!(!run.stderr.contains("at line 1 column"), "{}", run.stderr);
}

#[test]
fn unknown_field_in_a_flow() {
    let mut c = Case::new();
    c.scenario["workload"]["flows"][0]["frame_size"] = json!(64);
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "workload.flows[0].frame_size",
        &["unknown field `frame_size`", "`frame_bytes`"],
    );
}

#[test]
fn unknown_latency_convention() {
    let mut c = Case::new();
    c.scenario["latency_from"] = json!("lifo");
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "latency_from",
        &["unknown variant `lifo`", "`last-bit`", "`first-bit`"],
    );
}

// ---------------------------------------------------------------- wrong types

#[test]
fn duration_of_the_wrong_type() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!("ten");
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "duration_s",
        &["must be a number of seconds, got the string \"ten\""],
    );
}

#[test]
fn ring_size_of_the_wrong_type() {
    let mut c = Case::new();
    c.model["nics"][0]["rx_ring_slots"] = json!("64");
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[0].rx_ring_slots",
        &[
            "must be a whole number from 0 to 4294967295",
            "got the string \"64\"",
        ],
    );
}

// ---------------------------------------------------------------- zero and negative

#[test]
fn zero_duration() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!(0);
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "duration_s",
        &["must be greater than 0 s", "got 0"],
    );
}

#[test]
fn negative_load_point() {
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "percent", "points": [10, -5] });
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "load.points[1]",
        &["must be greater than 0 %", "got -5"],
    );
}

#[test]
fn zero_rx_ring_slots() {
    let mut c = Case::new();
    c.model["nics"][0]["rx_ring_slots"] = json!(0);
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[0].rx_ring_slots",
        &["must be at least 1 slot", "got 0"],
    );
}

#[test]
fn zero_ipintrq_maxlen() {
    let mut c = Case::new();
    c.model["kernel"]["ipintrq_maxlen"] = json!(0);
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "kernel.ipintrq_maxlen",
        &["must be at least 1 packet", "got 0"],
    );
}

#[test]
fn zero_cpu_clock() {
    let mut c = Case::new();
    c.model["cpu"]["clock_mhz"] = json!(0);
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "cpu.clock_mhz",
        &["must be 1 to 10000 MHz", "got 0"],
    );
}

#[test]
fn negative_cost() {
    let mut c = Case::new();
    c.model["nics"][1]["driver"]["rx_per_packet"] = json!(-5);
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[1].driver.rx_per_packet",
        &["`ns` must be a finite number >= 0", "got -5"],
    );
}

#[test]
fn zero_line_rate() {
    let mut c = Case::new();
    c.model["nics"][0]["line_rate_bps"] = json!(0);
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[0].line_rate_bps",
        &["must be 1e6 to 1.6e12 bit/s", "got 0"],
    );
}

#[test]
fn busy_poll_nics_with_different_empty_poll_costs() {
    // One busy-poll loop polls every busy-poll NIC: a second, different empty-pass cost
    // would be silently ignored, so it is refused, naming the NIC that differs.
    let mut c = Case::new();
    c.model["nics"][0]["policy"] = json!({ "kind": "busy-poll", "empty_poll": 100 });
    c.model["nics"][1]["policy"] = json!({ "kind": "busy-poll", "empty_poll": 250 });
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[1].policy.empty_poll",
        &["differs from nics[0]'s", "same empty_poll"],
    );
}

#[test]
fn polling_at_another_rate_than_a_simulated_clock() {
    // FreeBSD polls from hardclock, so with the clock interrupt simulated (a hardclock
    // cost) the two rates are one HZ.
    let mut c = Case::new();
    c.model["kernel"]["clock"] = json!({ "hz": 100, "hardclock": 1000 });
    c.model["nics"][0]["policy"] = json!({ "kind": "freebsd-polling" });
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "kernel.polling.hz",
        &["must equal kernel.clock.hz (100)", "got 1000"],
    );
}

// ---------------------------------------------------------------- above line rate

#[test]
fn load_above_100_percent() {
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "percent", "points": [10, 120] });
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "load.points[1]",
        &[
            "load of 120 %",
            "120.0 % of the line rate",
            "`100-101`",
            "above 100 %",
        ],
    );
}

#[test]
fn frames_per_second_written_as_percent_give_one_error_with_the_unit_hint() {
    // Five points meant as frames/s under the default unit, percent: one problem for
    // the flow, naming the points and the way out (`"unit": "pps"`), not five alike.
    let mut c = Case::new();
    c.scenario["load"] =
        json!({ "unit": "percent", "points": [10000, 20000, 50000, 80000, 100000] });
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "load.points[0]",
        &[
            "5 load points are above 100 %",
            "10000, 20000, 50000, 80000, 100000 %",
            "`100-101`",
            "write \"unit\": \"pps\"",
        ],
    );
    assert_eq!(
        run.stderr.matches("above 100 %").count(),
        1,
        "{}",
        run.stderr
    );
    // Points that would not fit as frames/s either get no such hint.
    c.scenario["load"] = json!({ "unit": "percent", "points": [120, 200_000] });
    let run = c.run();
    assert!(
        run.stderr.contains("2 load points are above 100 %"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("\"pps\""), "{}", run.stderr);
}

#[test]
fn a_duration_that_looks_like_milliseconds_is_pointed_out() {
    // `duration_s: 200` meant as 200 ms: it runs (200 s is a valid duration), but the
    // command says what it will simulate and how to write 200 ms, even with --quiet.
    let mut c = Case::new();
    c.scenario["duration_s"] = json!(200);
    c.scenario["load"] = json!({ "unit": "percent", "points": [1] });
    let run = c.run();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`duration_s` is in seconds: 200 s of simulated time per point")
            && run.stderr.contains("for 200 ms write 0.2"),
        "{}",
        run.stderr
    );
    // A duration such as the shipped scenarios' gets no note.
    c.scenario["duration_s"] = json!(10);
    let run = c.run();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stderr.contains("duration_s"), "{}", run.stderr);
}

#[test]
fn percentages_written_under_the_pps_unit_are_pointed_out() {
    // Points 10..50 meant as % of line rate under `"unit": "pps"`: at 0.1 s they run at
    // 10..50 frames/s, and the command says so and how to write percent; at 0.01 s the
    // first point sends no frame and the refusal carries the same hint.
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "pps", "points": [10, 30, 50] });
    c.scenario["duration_s"] = json!(0.1);
    let run = c.run();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`load.unit` is `pps`: the points are at most 50 frames/s per flow")
            && run.stderr.contains("\"unit\": \"percent\""),
        "{}",
        run.stderr
    );
    c.scenario["duration_s"] = json!(0.01);
    let run = c.run();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("sends no frame") && run.stderr.contains("\"unit\": \"percent\""),
        "{}",
        run.stderr
    );
    // A pps sweep above 100 frames/s gets no note.
    c.scenario["load"] = json!({ "unit": "pps", "points": [1000] });
    c.scenario["duration_s"] = json!(0.1);
    let run = c.run();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stderr.contains("load.unit"), "{}", run.stderr);
}

#[test]
fn pps_load_above_line_rate() {
    // 64-byte frames on 100 Mbit/s: 100e6 / (84 * 8) = 148,809.5 frames/s.
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "pps", "points": [148_810] });
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "load.points[0]",
        &[
            "load of 148810 frames/s",
            "148809.5 frames/s",
            "`100-101`",
            "above 100 %",
        ],
    );

    // The limit is the line rate itself: 148,809 frames/s is accepted.
    let mut ok = Case::new();
    ok.scenario["load"] = json!({ "unit": "pps", "points": [148_809] });
    ok.scenario["duration_s"] = json!(0.001);
    let run = ok.run();
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
}

// ---------------------------------------------------------------- the sweep

#[test]
fn empty_sweep() {
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "percent", "points": [] });
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "load.points",
        &["the sweep is empty", "at least one load point"],
    );
}

#[test]
fn inverted_range() {
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "percent", "from": 30, "to": 10, "step": 2 });
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "load",
        &["`from` (30) is greater than `to` (10)"],
    );
}

// ---------------------------------------------------------------- overrides

#[test]
fn error_from_an_override_is_reported_against_the_scenario() {
    let mut c = Case::new();
    c.scenario["overrides"] = json!({ "nics": { "dc0": { "rx_ring_slots": 0 } } });
    let run = c.run();
    // The model file itself is fine: the value came from the scenario, which is named,
    // with the path of the value inside `overrides` as the user wrote it (NIC by name).
    c.assert_one(
        &run,
        &c.scenario_path(),
        "overrides.nics.dc0.rx_ring_slots",
        &["must be at least 1 slot", "got 0"],
    );
    assert!(
        !run.stderr.contains(MODEL_FILE),
        "the model is not at fault:\n{}",
        run.stderr
    );
}

// ---------------------------------------------------------------- all problems

#[test]
fn several_problems_are_all_reported() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!(0);
    c.scenario["load"] = json!({ "unit": "percent", "points": [10, -5] });
    c.model["nics"][0]["rx_ring_slots"] = json!(0);
    c.model["kernel"]["ipintrq_maxlen"] = json!(0);
    let run = c.run();
    let problems = c.rejected(&run);
    assert_eq!(problems.len(), 4, "four problems expected:\n{}", run.stderr);
    let (s, m) = (c.scenario_path(), c.model_path());
    assert_problem(
        &run.stderr,
        &s,
        "duration_s",
        &["greater than 0 s", "got 0"],
    );
    assert_problem(
        &run.stderr,
        &s,
        "load.points[1]",
        &["greater than 0 %", "got -5"],
    );
    assert_problem(
        &run.stderr,
        &m,
        "nics[0].rx_ring_slots",
        &["at least 1 slot", "got 0"],
    );
    assert_problem(
        &run.stderr,
        &m,
        "kernel.ipintrq_maxlen",
        &["at least 1 packet", "got 0"],
    );
}

// ---------------------------------------------------------------- measured table

#[test]
fn missing_measured_table() {
    let mut c = Case::new();
    c.scenario["measured"] = json!("measured/no-such-table.csv");
    let run = c.run();
    let csv = c
        .dir
        .path()
        .join("scenarios")
        .join("measured")
        .join("no-such-table.csv");
    c.assert_one(
        &run,
        &c.scenario_path(),
        "measured",
        &[&format!("cannot read `{}`", csv.display()), "No such file"],
    );
}

/// A measured-rates table (`measured_rates`) with a variant the scenario does not have,
/// beside a wrong figure: refused before any work, exit 2, naming the file, the line and
/// why, with the scenario's own problems reported together.
#[test]
fn measured_rates_naming_a_variant_the_scenario_lacks() {
    let mut c = Case::new();
    let rates = c.dir.path().join("scenarios").join("rates.csv");
    c.scenario["measured_rates"] = json!("rates.csv");
    c.scenario["duration_s"] = json!(0);
    c.write();
    std::fs::write(
        &rates,
        "# a table of rates\nvariant,figure,measured,source\n\
         default,forwarded_pps,1000,ok\n\
         two-cores,forwarded_pps,2000,not a variant\n",
    )
    .unwrap();
    let run = c.run_on(&c.scenario_path());
    let problems = c.rejected(&run);
    assert_eq!(problems.len(), 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "{}: line 4: column `variant`: `two-cores` is not a variant of the scenario (its variants: default)",
            rates.display()
        )),
        "{}",
        run.stderr
    );
    assert_problem(
        &run.stderr,
        &c.scenario_path(),
        "duration_s",
        &["greater than 0"],
    );
    // A figure irqsim does not have, alone.
    c.scenario["duration_s"] = json!(0.01);
    c.write();
    std::fs::write(&rates, "variant,figure,measured\ndefault,loss_pct,3\n").unwrap();
    let run = c.run_on(&c.scenario_path());
    assert_eq!(c.rejected(&run).len(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("line 2: column `figure`: `loss_pct` is not a figure"),
        "{}",
        run.stderr
    );
    // A good table on a sweep of 14 points with a drain: the rates are over the sending
    // period at one load point, so a counter with a drain and several points are refused.
    std::fs::write(
        &rates,
        "variant,figure,measured\ndefault,counters.dc0.interrupts_per_s,3\n",
    )
    .unwrap();
    c.scenario["drain_s"] = json!(0.5);
    c.write();
    let run = c.run_on(&c.scenario_path());
    assert_eq!(c.rejected(&run).len(), 2, "{}", run.stderr);
    assert_problem(
        &run.stderr,
        &c.scenario_path(),
        "drain_s",
        &[
            "must be 0 with `measured_rates`",
            "counters.dc0.interrupts_per_s",
        ],
    );
    assert_problem(
        &run.stderr,
        &c.scenario_path(),
        "load",
        &["has 14 points", "one load point"],
    );
}

/// A good table: the run prints the comparison after its table and writes it to
/// results.json, the simulated value the results' own figure.
#[test]
fn measured_rates_are_compared_in_the_table_and_results_json() {
    let mut c = Case::new();
    c.scenario["measured_rates"] = json!("rates.csv");
    c.scenario["load"] = json!({ "unit": "percent", "points": [10] });
    c.scenario["drain_s"] = json!(0);
    c.write();
    std::fs::write(
        c.dir.path().join("scenarios").join("rates.csv"),
        "variant,figure,measured\ndefault,forwarded_pps,14000\n\
         default,counters.dc0.interrupts_per_s,5\n",
    )
    .unwrap();
    let o = Command::new(BIN)
        .arg("run")
        .arg(c.scenario_path())
        .arg("--out")
        .arg(c.out_dir())
        .arg("--no-plots")
        .output()
        .expect("running irqsim");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("measured rates: "), "{stdout}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(c.out_dir().join("results.json")).unwrap())
            .unwrap();
    let rows = r["measured_rates"]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    let fwd = r["points"][0]["total"]["forwarded_pps"].as_f64().unwrap();
    assert_eq!(rows[0]["simulated"].as_f64(), Some(fwd));
    let err = rows[0]["error_pct"].as_f64().unwrap();
    assert!((err - 100.0 * (fwd / 14000.0 - 1.0)).abs() < 1e-9, "{err}");
    // A counter: the results' own count over the sending period (0.01 s).
    let n = r["points"][0]["counters"]["dc0.interrupts"]
        .as_f64()
        .unwrap();
    assert!(n > 0.0, "{n}");
    assert_eq!(rows[1]["simulated"].as_f64(), Some(n / 0.01));
    let err = rows[1]["error_pct"].as_f64().unwrap();
    assert!((err - 100.0 * (n / 0.01 / 5.0 - 1.0)).abs() < 1e-9, "{err}");
}

#[test]
fn measured_table_with_a_wrong_header() {
    let mut c = Case::new();
    c.csv_text = c.csv_text.replacen("Out Of Sequence", "Out Of Order", 1);
    let run = c.run();
    let problems = c.rejected(&run);
    assert_eq!(problems.len(), 1, "{}", run.stderr);
    // A CSV has no JSON path: the line number stands for it.
    let want = format!("  {}: line 1: ", c.csv_path().display());
    assert!(problems[0].starts_with(&want), "{}", run.stderr);
    assert!(
        problems[0].contains("not a SmartBits table")
            && problems[0].contains("expected header")
            && problems[0].contains("Out Of Sequence"),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------- good input

#[test]
fn valid_short_scenario_writes_results() {
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "percent", "points": [10, 20] });
    c.scenario["duration_s"] = json!(0.05);
    let run = c.run();
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
    assert!(run.stdout.is_empty(), "--quiet: {}", run.stdout);
    assert!(run.stderr.is_empty(), "--quiet: {}", run.stderr);

    let out = c.out_dir();
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
            .expect("results.json is JSON");
    assert!(results.is_object(), "{results}");

    let csv = std::fs::read_to_string(out.join("smartbits.csv")).unwrap();
    let reference = read(MEASURED);
    let header = reference.lines().next().unwrap();
    assert_eq!(csv.lines().next(), Some(header));
    // Per point: one Total row and one row for the flow.
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{csv}");
    assert!(rows[0].starts_with("Total,10.0000,"), "{csv}");
    assert!(rows[1].starts_with("100-101,10.0000,"), "{csv}");
    assert!(rows[2].starts_with("Total,20.0000,"), "{csv}");
    assert!(rows[3].starts_with("100-101,20.0000,"), "{csv}");
}

#[test]
fn help_exits_0() {
    let help = |args: &[&str]| {
        let o = Command::new(BIN)
            .args(args)
            .output()
            .expect("running irqsim");
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // The top-level help lists the `run` command; its options are on `run --help` only.
    let top = help(&["--help"]);
    assert!(top.contains("run"), "{top}");
    let run = help(&["run", "--help"]);
    for opt in ["--out", "--seed", "--threads", "--quiet"] {
        assert!(
            run.contains(opt),
            "{opt} missing from `irqsim run --help`:\n{run}"
        );
    }
    assert!(run.contains("2 bad input"), "exit codes documented:\n{run}");
}

// ---------------------------------------------------------------- reported together

#[test]
fn a_bad_measured_table_does_not_hide_other_problems() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!(0);
    c.csv_text = c.csv_text.replacen("Out Of Sequence", "Out Of Order", 1);
    let run = c.run();
    assert_eq!(c.rejected(&run).len(), 2, "{}", run.stderr);
    assert_problem(
        &run.stderr,
        &c.scenario_path(),
        "duration_s",
        &["greater than 0"],
    );
    assert!(run.stderr.contains(&format!(
        "{}: line 1: not a SmartBits table",
        c.csv_path().display()
    )));
}

#[test]
fn overload_is_reported_beside_other_problems() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!(0);
    c.scenario["load"] = json!({ "unit": "percent", "points": [10, 120] });
    let run = c.run();
    assert_eq!(c.rejected(&run).len(), 2, "{}", run.stderr);
    assert_problem(
        &run.stderr,
        &c.scenario_path(),
        "load.points[1]",
        &["above 100 %"],
    );
}

#[test]
fn a_range_starting_below_zero_is_one_problem() {
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "percent", "from": -10, "to": 10, "step": 5 });
    let run = c.run();
    c.assert_one(
        &run,
        &c.scenario_path(),
        "load.from",
        &["greater than 0", "got -10"],
    );
}

#[test]
fn an_absurd_duration_is_rejected_not_overflowed() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!(1e30);
    let run = c.run();
    c.assert_one(&run, &c.scenario_path(), "duration_s", &["at most 86400 s"]);
}

// ---------------------------------------------------------------- time bounds

#[test]
fn a_period_that_would_not_advance_time_is_rejected() {
    // 0.0001 ns rounds to 0 ps: the busy-poll loop would never let time advance.
    let mut c = Case::new();
    c.model["nics"][0]["policy"] = json!({ "kind": "busy-poll", "empty_poll": 0.0001 });
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[0].policy.empty_poll",
        &["at least 1 ns"],
    );
}

#[test]
fn a_time_that_would_overflow_the_clock_is_rejected() {
    let mut c = Case::new();
    c.model["nics"][0]["rx_latency_ns"] = json!(1e30);
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[0].rx_latency_ns",
        &["must be 0 to 1e12 ns"],
    );
}

#[test]
fn an_absurd_range_is_one_clean_problem() {
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "percent", "from": -1e300, "to": 10, "step": 1 });
    let run = c.run();
    c.assert_one(&run, &c.scenario_path(), "load", &["at most 100000"]);
}

#[test]
fn wrong_types_and_unknown_fields_are_all_reported_at_once() {
    let mut c = Case::new();
    c.scenario["durations_s"] = json!(3);
    c.scenario["duration_s"] = json!("ten");
    c.scenario["workload"]["flows"][0]["frame_size"] = json!(64);
    let run = c.run();
    assert_eq!(c.rejected(&run).len(), 3, "{}", run.stderr);
    let sc = c.scenario_path();
    assert_problem(&run.stderr, &sc, "durations_s", &["unknown field"]);
    assert_problem(
        &run.stderr,
        &sc,
        "duration_s",
        &["must be a number of seconds", "got the string"],
    );
    assert_problem(
        &run.stderr,
        &sc,
        "workload.flows[0].frame_size",
        &["unknown field"],
    );
}

// ---------------------------------------------------------------- variants, each on its own

/// A variant whose `overrides` replace `nics` by a list without the NIC the flow comes
/// from is refused (it used to pass validation against the first variant and panic in
/// the runner, leaving `.checkpoint/` behind), naming the variant.
#[test]
fn a_variant_without_the_flows_nic_is_refused_by_name() {
    let mut c = Case::new();
    let dc1 = c.model["nics"][1].clone();
    c.scenario["variants"] = json!([
        { "name": "base" },
        { "name": "no-dc0", "overrides": { "nics": [dc1] } },
    ]);
    let r = c.run();
    let problems = c.rejected(&r);
    assert_problem(
        &r.stderr,
        &c.scenario_path(),
        "workload.flows[0].from",
        &["no NIC named `dc0`", "(with variant `no-dc0`)"],
    );
    // The shared IRQ 11 chain names the NICs the variant removed: the same variant's
    // problem, in the model it gave.
    assert_eq!(problems.len(), 4, "{}", r.stderr);
    for (k, nic) in [(0, "dc3"), (1, "dc2"), (3, "dc0")] {
        assert_problem(
            &r.stderr,
            &c.model_path(),
            &format!("irq_lines[0].chain[{k}]"),
            &[&format!("no NIC named `{nic}`"), "(with variant `no-dc0`)"],
        );
    }
}

/// Each variant's rates follow from its own line rates: a variant whose input NIC runs
/// at 10 Mbit/s, at 90 % load, offers 90 % of 10 Mbit/s' 14,880.95 frames/s of 64
/// bytes (13,392.86 frames/s; it used to get the first variant's 133,929) and can
/// forward no more than that.
#[test]
fn each_variant_gets_its_own_rates() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!(0.2);
    c.scenario["drain_s"] = json!(0.05);
    c.scenario["load"] = json!({ "unit": "percent", "points": [90] });
    c.scenario["variants"] = json!([
        { "name": "fast" },
        { "name": "slow", "overrides": { "nics": { "dc0": { "line_rate_bps": 10e6 } } } },
    ]);
    let r = c.run();
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let res: Value =
        serde_json::from_str(&std::fs::read_to_string(c.out_dir().join("results.json")).unwrap())
            .unwrap();
    let pt = |v: &str| {
        res["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["variant"] == v)
            .unwrap_or_else(|| panic!("no point of {v}"))
            .clone()
    };
    let (fast, slow) = (pt("fast"), pt("slow"));
    let line = |bps: f64| bps / ((64.0 + 20.0) * 8.0);
    for (p, bps) in [(&fast, 100e6), (&slow, 10e6)] {
        let offered = p["offered_pps"].as_f64().unwrap();
        assert!((offered - 0.9 * line(bps)).abs() < 1e-6, "{offered}");
        assert_eq!(p["load_pct"], json!(90));
        // SmartBits' count: floor(rate x duration).
        let sent = p["total"]["sent"].as_f64().unwrap();
        assert_eq!(sent, (0.9 * line(bps) * 0.2).floor());
        assert!(p["total"]["forwarded_pps"].as_f64().unwrap() <= line(bps));
    }
}

/// The line-rate check runs for each variant: 20,000 frames/s of 64 bytes is 13.4 % of
/// 100 Mbit/s but 134.4 % of 10 Mbit/s (14,880.95 frames/s), refused with the variant's
/// name unless `allow_overload` is set.
#[test]
fn the_line_rate_check_runs_for_every_variant() {
    let mut c = Case::new();
    c.scenario["load"] = json!({ "unit": "pps", "points": [20000] });
    c.scenario["variants"] = json!([
        { "name": "fast" },
        { "name": "slow", "overrides": { "nics": { "dc0": { "line_rate_bps": 10e6 } } } },
    ]);
    let r = c.run();
    c.assert_one(
        &r,
        &c.scenario_path(),
        "load.points[0]",
        &["134.4 %", "above 100 %", "(with variant `slow`)"],
    );
    let mut c2 = Case::new();
    c2.scenario = c.scenario.clone();
    c2.scenario["allow_overload"] = json!(true);
    let r = c2.run();
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

// ---------------------------------------------------------------- silently ignored input

/// `start_phase` and `clock_ppm` shape a constant-rate stream; on a Poisson flow they
/// were accepted and ignored. Both are refused, at once.
#[test]
fn phase_and_clock_on_a_poisson_flow_are_refused() {
    let mut c = Case::new();
    c.scenario["workload"]["flows"][0]["arrivals"] = json!("poisson");
    c.scenario["workload"]["flows"][0]["start_phase"] = json!(0.5);
    c.scenario["workload"]["flows"][0]["clock_ppm"] = json!("random");
    let r = c.run();
    let problems = c.rejected(&r);
    assert_eq!(problems.len(), 2, "{}", r.stderr);
    for f in ["start_phase", "clock_ppm"] {
        assert_problem(
            &r.stderr,
            &c.scenario_path(),
            &format!("workload.flows[0].{f}"),
            &["`constant` arrivals only"],
        );
    }
}

/// A NIC that only transmits needs no receive costs: dc1 (the output port) with a
/// driver block holding nothing but `isr_entry` and `isr_exit` (its underruns on the
/// bus interrupt) runs. The input port without its three handler costs gets all three
/// problems at once, each saying why the cost is needed.
#[test]
fn driver_costs_are_required_by_role_and_reported_together() {
    let mut c = Case::new();
    c.model["nics"][1]["driver"] = json!({ "isr_entry": 1000, "isr_exit": 400 });
    let r = c.run();
    assert_eq!(r.code, Some(0), "{}", r.stderr);

    let mut c = Case::new();
    let d = c.model["nics"][0]["driver"].as_object_mut().unwrap();
    for f in ["isr_entry", "rx_per_packet", "isr_exit"] {
        d.remove(f);
    }
    let r = c.run();
    let problems = c.rejected(&r);
    assert_eq!(problems.len(), 3, "{}", r.stderr);
    for f in ["isr_entry", "isr_exit"] {
        assert_problem(
            &r.stderr,
            &c.model_path(),
            &format!("nics[0].driver.{f}"),
            &[
                "required",
                "receives flow `100-101` with an interrupt-driven policy",
            ],
        );
    }
    assert_problem(
        &r.stderr,
        &c.model_path(),
        "nics[0].driver.rx_per_packet",
        &["required", "receives flow `100-101`"],
    );
}

/// The busy-poll loop's empty pass must take at least 1 ns at the model's own clock:
/// 2 cycles at 3,000 MHz is 0.67 ns (refused; the check used to assume 1 GHz, where it
/// is 2 ns), and 0.5 cycles at 100 MHz is 5 ns (accepted; it was refused as 0.5 ns).
#[test]
fn empty_poll_is_checked_at_the_cpu_clock() {
    let busy = |mhz: f64, cycles: f64| {
        let mut c = Case::new();
        // One short point and no drain: the busy loop spins every few ns.
        c.scenario["load"] = json!({ "unit": "percent", "points": [10] });
        c.scenario["drain_s"] = json!(0);
        c.model["cpu"]["clock_mhz"] = json!(mhz);
        c.model["nics"][0]["policy"] =
            json!({ "kind": "busy-poll", "empty_poll": { "cycles": cycles } });
        c
    };
    let c = busy(3000.0, 2.0);
    let r = c.run();
    c.assert_one(
        &r,
        &c.model_path(),
        "nics[0].policy.empty_poll",
        &["at least 1 ns", "cpu.clock_mhz = 3000"],
    );
    let c = busy(100.0, 0.5);
    let r = c.run();
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

// ---------------------------------------------------------------- found by the fuzzer

/// Bytes after the scenario's JSON document were ignored (the file ran); they are a
/// syntax error now. Found by the `run_experiment` fuzz target.
#[test]
fn trailing_bytes_after_the_document_are_an_error() {
    let mut c = Case::new();
    c.scenario_text =
        Some(serde_json::to_string_pretty(&c.scenario).unwrap() + "\n this is not JSON {{{");
    let r = c.run();
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("trailing characters"), "{}", r.stderr);
    assert!(!c.out_dir().exists(), "nothing written");
}

/// A sending time under 1 ns (here 1e-13 s) passed `> 0` but rounded to 0 ps: every
/// per-second figure came out 0/0 (`NaN` printed, `null` in results.json, which
/// `irqsim plot` then refused). Found by the `run_experiment` fuzz target.
#[test]
fn a_sending_time_under_a_nanosecond_is_refused() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!(1e-13);
    let r = c.run();
    c.assert_one(&r, &c.scenario_path(), "duration_s", &["at least 1 ns"]);
}

/// Two flows into the same NIC share its one input wire: at 60 % each they offer 120 %
/// of its line rate together, which is refused like one flow at 120 % (each alone
/// passed the per-flow check).
#[test]
fn flows_sharing_an_input_nic_may_not_exceed_its_line_rate_together() {
    let mut c = Case::new();
    let f = c.scenario["workload"]["flows"][0].clone();
    let mut g = f.clone();
    g["name"] = json!("second");
    c.scenario["workload"]["flows"] = json!([f, g]);
    c.scenario["load"] = json!({ "unit": "percent", "points": [60] });
    let r = c.run();
    c.assert_one(
        &r,
        &c.scenario_path(),
        "load.points[0]",
        &[
            "flows `100-101`, `second` into `dc0`",
            "120.0 %",
            "above 100 %",
        ],
    );
}

#[test]
fn a_parameter_another_policy_would_take_is_refused_not_ignored() {
    // Switching a NIC from NAPI to FreeBSD polling with `weight` left over: polling has
    // no per-NIC parameters, so the leftover is an error, as an unknown field is
    // anywhere else (the schema says so too: `additionalProperties: false`).
    let mut c = Case::new();
    c.model["nics"][0]["policy"] = json!({ "kind": "freebsd-polling", "weight": 64 });
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[0].policy.weight",
        &["unknown field `weight`", "this object takes no fields"],
    );
}

#[test]
fn transmit_completions_need_a_policy_that_reclaims_descriptors() {
    let mut c = Case::new();
    c.model["nics"][1]["policy"] = json!({ "kind": "freebsd-polling" });
    c.model["nics"][1]["tx_completion"] = json!({ "interrupt_every": 1 });
    let run = c.run();
    c.assert_one(
        &run,
        &c.model_path(),
        "nics[1].tx_completion",
        &["reclaim", "(`interrupt`, `napi`, `deferred`)"],
    );
}

// ---------------------------------------------------------------- issue 32: refuse before work, in the user's words

impl Case {
    /// Write the files and run `irqsim run <scenario> --out <dir>/out --quiet --no-plots
    /// <extra>`.
    fn run_with(&self, extra: &[&str]) -> Run {
        self.write();
        let o = Command::new(BIN)
            .arg("run")
            .arg(self.scenario_path())
            .arg("--out")
            .arg(self.out_dir())
            .args(["--quiet", "--no-plots"])
            .args(extra)
            .output()
            .expect("running irqsim");
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// `--trace` on a host with several cores was refused (issue 37, part 5 lifted the
/// refusal): it runs and writes the trace, one process per core.
#[test]
fn a_trace_of_a_multi_core_host_runs_and_writes_a_process_per_core() {
    let mut c = Case::new();
    c.scenario["overrides"] = json!({ "cpu": { "cores": 2 } });
    c.scenario["load"] = json!({ "unit": "percent", "points": [10] });
    c.scenario.as_object_mut().unwrap().remove("measured");
    let r = c.run_with(&["--trace", "1ms..2ms"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let trace = walk(&c.out_dir())
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "trace.json"))
        .expect("trace.json written");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).unwrap()).expect("trace.json is JSON");
    let procs: Vec<&str> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(procs, ["irqsim host", "cpu0", "cpu1"]);
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Typos in the overrides of two variants are both reported, each at its full path
/// (inside a policy too: `policy.wieght`, not `policy`) and at its line in the
/// scenario file (not "line 1 column 13312" of an internal copy).
#[test]
fn typos_in_two_variants_are_reported_together_at_their_lines() {
    let mut c = Case::new();
    c.scenario["variants"] = json!([
        { "name": "a", "overrides": { "kernel": { "ipintrq_maxln": 3 } } },
        { "name": "b", "overrides": { "nics": { "dc0": { "policy": { "kind": "napi", "wieght": 3 } } } } },
    ]);
    let text = serde_json::to_string_pretty(&c.scenario).unwrap();
    let (la, lb) = (
        line_of(&text, "\"ipintrq_maxln\""),
        line_of(&text, "\"wieght\""),
    );
    let r = c.run();
    let problems = c.rejected(&r);
    assert_eq!(problems.len(), 2, "{}", r.stderr);
    let sc = c.scenario_path();
    assert_problem(
        &r.stderr,
        &sc,
        "variants[0].overrides.kernel.ipintrq_maxln",
        &[
            "unknown field `ipintrq_maxln`",
            "`ipintrq_maxlen`",
            &format!("at line {la} column "),
        ],
    );
    assert_problem(
        &r.stderr,
        &sc,
        "variants[1].overrides.nics.dc0.policy.wieght",
        &[
            "unknown field `wieght`",
            "`weight`",
            &format!("at line {lb} column "),
        ],
    );
    assert!(!r.stderr.contains("at line 1 column"), "{}", r.stderr);
}

/// A required field of the wrong type does not hide the problems after it: its reading
/// goes on past a stand-in (serde would next report it missing, which it is not).
#[test]
fn a_wrong_typed_required_field_does_not_hide_a_later_typo() {
    let mut c = Case::new();
    c.scenario["workload"]["flows"][0]["to"] = json!(1);
    c.scenario["variants"] = json!([
        { "name": "a" },
        { "name": "b", "overides": { "kernel": { "ipintrq_maxlen": 3 } } },
    ]);
    let r = c.run();
    let problems = c.rejected(&r);
    assert_eq!(problems.len(), 2, "{}", r.stderr);
    let sc = c.scenario_path();
    assert_problem(&r.stderr, &sc, "workload.flows[0].to", &["string"]);
    assert_problem(
        &r.stderr,
        &sc,
        "variants[1].overides",
        &["unknown field `overides`"],
    );
    assert!(!r.stderr.contains("missing field"), "{}", r.stderr);
}

/// A typo in a model's own policy object is reported at its path and line in the model.
#[test]
fn a_typo_inside_a_models_policy_is_located_in_the_model() {
    let mut c = Case::new();
    c.model["nics"][1]["policy"] = json!({ "kind": "napi", "wieght": 3 });
    let text = serde_json::to_string_pretty(&c.model).unwrap();
    let line = line_of(&text, "\"wieght\"");
    let r = c.run();
    c.assert_one(
        &r,
        &c.model_path(),
        "nics[1].policy.wieght",
        &[
            "unknown field `wieght`",
            &format!("at line {line} column 9"),
        ],
    );
}

/// Real mistakes in fields with several forms are answered with the forms the field
/// accepts, never with serde's Rust words.
#[test]
fn serde_words_do_not_reach_users() {
    type Edit = Box<dyn Fn(&mut Case)>;
    let cases: Vec<(&str, Edit, &str, Vec<&str>)> = vec![
        (
            "frame size as an object",
            Box::new(|c| {
                c.scenario["workload"]["flows"][0]["frame_bytes"] = json!({ "bytes": 64 })
            }),
            "workload.flows[0].frame_bytes",
            vec![
                "frame size in bytes such as `64`",
                "\"dist\": \"uniform\"",
                "\"dist\": \"mix\"",
            ],
        ),
        (
            "frame size as a string",
            Box::new(|c| c.scenario["workload"]["flows"][0]["frame_bytes"] = json!("64")),
            "workload.flows[0].frame_bytes",
            vec!["such as `64`", "got the string \"64\""],
        ),
        (
            "distribution with a typo",
            Box::new(|c| {
                c.scenario["workload"]["flows"][0]["frame_bytes"] =
                    json!({ "dist": "uniform", "min": 64, "mx": 1518 })
            }),
            "workload.flows[0].frame_bytes.mx",
            vec!["unknown field `mx`", "`max`"],
        ),
        (
            "policy as a string",
            Box::new(|c| {
                c.scenario["overrides"] = json!({ "nics": { "dc0": { "policy": "napi" } } })
            }),
            "overrides.nics.dc0.policy",
            vec![
                "{\"kind\": \"napi\"}",
                "`freebsd-polling`",
                "got the string \"napi\"",
            ],
        ),
        (
            "policy of an unknown kind",
            Box::new(|c| {
                c.scenario["overrides"] =
                    json!({ "nics": { "dc0": { "policy": { "kind": "nap" } } } })
            }),
            "overrides.nics.dc0.policy.kind",
            vec!["unknown kind `nap`", "`napi`"],
        ),
        (
            "cost nested one level too deep",
            Box::new(|c| {
                c.scenario["overrides"] =
                    json!({ "kernel": { "netisr_per_packet": { "ns": { "ns": 5200 } } } })
            }),
            "overrides.kernel.netisr_per_packet.ns",
            vec!["a number of nanoseconds", "{\"ns\": 5200}", "got an object"],
        ),
        (
            "cost as a string",
            Box::new(|c| {
                c.scenario["overrides"] = json!({ "kernel": { "netisr_per_packet": "5us" } })
            }),
            "overrides.kernel.netisr_per_packet",
            vec![
                "a number of nanoseconds",
                "{\"cycles\": 1000}",
                "got the string \"5us\"",
            ],
        ),
        (
            "phase as a word",
            Box::new(|c| c.scenario["workload"]["flows"][0]["start_phase"] = json!("half")),
            "workload.flows[0].start_phase",
            vec!["a number or `\"random\"`", "got the string \"half\""],
        ),
    ];
    for (what, edit, path, want) in cases {
        let mut c = Case::new();
        edit(&mut c);
        let r = c.run();
        // (A typo inside a distribution also leaves the field it meant missing.)
        c.rejected(&r);
        assert_problem(&r.stderr, &c.scenario_path(), path, &want);
        for serde in [
            "untagged enum",
            "internally tagged",
            "invalid type",
            "expected f64",
            "map",
        ] {
            assert!(
                !r.stderr.contains(serde),
                "{what}: {serde:?} reached the user: {}",
                r.stderr
            );
        }
    }
}

/// A line rate of 1 bit/s (a unit slip) was accepted and its flow sent 0 frames, exit 0.
#[test]
fn a_line_rate_outside_ethernets_is_refused() {
    for bps in [1.0, 2e12] {
        let mut c = Case::new();
        c.model["nics"][0]["line_rate_bps"] = json!(bps);
        let r = c.run();
        c.assert_one(
            &r,
            &c.model_path(),
            "nics[0].line_rate_bps",
            &[
                "must be 1e6 to 1.6e12 bit/s",
                "unit slip",
                &format!("got {bps}"),
            ],
        );
    }
}

/// A flow that would send no frame in the run is refused, with how many it would send.
#[test]
fn a_flow_that_sends_no_frame_is_refused() {
    let mut c = Case::new();
    // 10 and 50 frames/s for 0.01 s: floor(0.1) = floor(0.5) = 0 frames; 1000: 10.
    c.scenario["load"] = json!({ "unit": "pps", "points": [10, 50, 1000] });
    let r = c.run();
    c.assert_one(
        &r,
        &c.scenario_path(),
        "load.points[0]",
        &[
            "flow `100-101` sends no frame in the run at 2 of the 3 load points",
            "10 frames/s for 0.01 s is 0.1 frames",
            "floor(rate x duration_s)",
        ],
    );
}

/// `--trace-point` takes the load in the scenario's own unit: frames/s per flow for
/// `pps` (it took the total offered frames/s, twice the per-flow rate with two flows).
#[test]
fn trace_point_is_in_the_scenarios_unit() {
    let mut c = Case::new();
    c.scenario["workload"]["flows"] = json!([
        { "name": "a", "from": "dc0", "to": "dc1" },
        { "name": "b", "from": "dc2", "to": "dc3" },
    ]);
    c.scenario["load"] = json!({ "unit": "pps", "points": [2000, 3000] });
    c.scenario["duration_s"] = json!(0.005);
    c.scenario["drain_s"] = json!(0.005);
    c.scenario.as_object_mut().unwrap().remove("measured");
    let r = c.run_with(&["--trace", "1ms..2ms", "--trace-point", "3000"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(c.out_dir().join("trace.json").is_file());
    // The total (6000 frames/s) is not a point of the sweep.
    let r = c.run_with(&["--trace", "1ms..2ms", "--trace-point", "6000"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("no load point 6000 frames/s per flow")
            && r.stderr.contains("2000 (1.344 %), 3000 (2.016 %)"),
        "{}",
        r.stderr
    );
}

/// `cd a/b && irqsim run x.json` with `"model": "../../models/m.json"` read
/// `models/m.json` (the lexical resolution cancelled the two `..`s); paths resolve
/// as the file system does, through a symbolic link too.
#[test]
fn model_paths_resolve_from_the_scenarios_directory() {
    let c = Case::new();
    let root = c.dir.path();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::create_dir_all(root.join("models")).unwrap();
    std::fs::write(
        root.join("models/m.json"),
        serde_json::to_string(&c.model).unwrap(),
    )
    .unwrap();
    let mut sc = c.scenario.clone();
    sc["model"] = json!("../../models/m.json");
    sc["load"] = json!({ "unit": "percent", "points": [10] });
    sc.as_object_mut().unwrap().remove("measured");
    std::fs::write(root.join("a/b/x.json"), serde_json::to_string(&sc).unwrap()).unwrap();
    let run_in = |dir: &Path, scenario: &str| {
        Command::new(BIN)
            .current_dir(dir)
            .args(["run", scenario, "--quiet", "--no-plots", "--out"])
            .arg(root.join("out"))
            .output()
            .expect("running irqsim")
    };
    let o = run_in(&root.join("a/b"), "x.json");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    #[cfg(unix)]
    {
        // `l` -> a/b: `l/../../models` is root/models for the file system, but
        // `../models` (beside root) lexically.
        std::os::unix::fs::symlink(root.join("a/b"), root.join("l")).unwrap();
        let o = run_in(root, "l/x.json");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// A scenario that cannot be read (a wrong type) no longer hides its model's problems:
/// both files' are reported at once.
#[test]
fn a_scenario_type_error_does_not_hide_the_models_problems() {
    let mut c = Case::new();
    c.scenario["duration_s"] = json!("ten");
    c.scenario["overrides"] = json!({ "kernel": { "ipintrq_maxlen": 0 } });
    c.model["nics"][0]["rx_ring_slots"] = json!(0);
    c.model["nics"][1]["rx_ring_slot"] = json!(64);
    let r = c.run();
    let problems = c.rejected(&r);
    assert_eq!(problems.len(), 2, "{}", r.stderr);
    assert_problem(
        &r.stderr,
        &c.scenario_path(),
        "duration_s",
        &["must be a number of seconds"],
    );
    // The model could not be read either (an unknown field): its reading problem is
    // reported; its range checks need it read.
    assert_problem(
        &r.stderr,
        &c.model_path(),
        "nics[1].rx_ring_slot",
        &["unknown field `rx_ring_slot`"],
    );
    let mut c = Case::new();
    c.scenario["duration_s"] = json!("ten");
    c.scenario["overrides"] = json!({ "kernel": { "ipintrq_maxlen": 0 } });
    c.model["nics"][0]["rx_ring_slots"] = json!(0);
    let r = c.run();
    assert_eq!(c.rejected(&r).len(), 3, "{}", r.stderr);
    assert_problem(
        &r.stderr,
        &c.scenario_path(),
        "overrides.kernel.ipintrq_maxlen",
        &["at least 1 packet", "got 0"],
    );
    assert_problem(
        &r.stderr,
        &c.model_path(),
        "nics[0].rx_ring_slots",
        &["at least 1 slot"],
    );
}

/// An unknown field in a form serde buffers (a user process tagged by `kind`) is
/// reported at its own path, not at the object holding it.
#[test]
fn an_unknown_field_in_a_user_process_is_reported_at_its_path() {
    let mut c = Case::new();
    c.model["user"] = json!({ "kind": "cpu-bound", "work_unt": 1000 });
    let r = c.run();
    c.assert_one(
        &r,
        &c.model_path(),
        "user.work_unt",
        &["unknown field `work_unt`", "`work_unit`"],
    );
}
