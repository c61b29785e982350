//! Grids (`"grid"` in a scenario): the cells' order, names and models; each cell's
//! summary against the points of the same run and against a hand-computed case;
//! validation errors at their field paths; heat maps written by the binary.

use irqsim::config::error::InputError;
use irqsim::config::scenario::{self, DiskFiles, Experiment, FileSource};
use irqsim::experiment::runner;
use irqsim::results::{PointResult, Results};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const EXAMPLE: &str = "scenarios/grid-ring-x-ipintrq.json";
const MODEL: &str = "models/p3-448-dc21143-freebsd4.json";

/// A scenario in memory beside the files of the repository (its model path resolves
/// against `scenarios/`).
struct Mem {
    scenario: String,
    model: Option<String>,
}

impl FileSource for Mem {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        if path.file_name().is_some_and(|n| n == "case.json") {
            return Ok(self.scenario.clone());
        }
        if path.file_name().is_some_and(|n| n == "tiny-model.json")
            && let Some(m) = &self.model
        {
            return Ok(m.clone());
        }
        std::fs::read_to_string(Path::new(ROOT).join(path))
    }
}

fn example() -> Value {
    serde_json::from_str(&std::fs::read_to_string(Path::new(ROOT).join(EXAMPLE)).unwrap()).unwrap()
}

fn load(sc: &Value) -> Result<Experiment, InputError> {
    scenario::load(
        Path::new("scenarios/case.json"),
        &Mem {
            scenario: sc.to_string(),
            model: None,
        },
    )
}

/// The problem lines of a rejected scenario.
fn problems(sc: &Value) -> Vec<String> {
    match load(sc) {
        Ok(_) => panic!("accepted: {sc}"),
        Err(e) => e.to_string().lines().map(String::from).collect(),
    }
}

/// The one problem at `path`, which must contain every one of `reason`.
fn assert_problem(sc: &Value, path: &str, reason: &[&str]) {
    let lines = problems(sc);
    let prefix = format!("scenarios/case.json: at `{path}`: ");
    let line = lines
        .iter()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no problem at `{path}` in {lines:#?}"));
    for r in reason {
        assert!(line.contains(r), "{r:?} missing from {line:?}");
    }
}

#[test]
fn a_two_by_three_grid_gives_six_variants_in_row_major_order() {
    let mut sc = example();
    sc["grid"]["parameters"] = json!([
        {"path": "nics.dc0.rx_ring_slots", "values": [16, 128]},
        {"path": "kernel.ipintrq_maxlen", "values": [25, 50, 100]}
    ]);
    let exp = load(&sc).expect("loads");
    let names: Vec<&str> = exp.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "rx_ring_slots=16,ipintrq_maxlen=25",
            "rx_ring_slots=16,ipintrq_maxlen=50",
            "rx_ring_slots=16,ipintrq_maxlen=100",
            "rx_ring_slots=128,ipintrq_maxlen=25",
            "rx_ring_slots=128,ipintrq_maxlen=50",
            "rx_ring_slots=128,ipintrq_maxlen=100",
        ]
    );
    // Every cell's model has its values, and nothing else changed.
    let base = load(&{
        let mut s = sc.clone();
        s.as_object_mut().unwrap().remove("grid");
        s
    })
    .expect("loads")
    .variants[0]
        .model
        .clone();
    for (k, v) in exp.variants.iter().enumerate() {
        let ring = [16, 128][k / 3];
        let ipq = [25, 50, 100][k % 3];
        assert_eq!(v.model.nics[0].rx_ring_slots, ring, "{}", v.name);
        assert_eq!(v.model.kernel.ipintrq_maxlen, ipq, "{}", v.name);
        let mut same = v.model.clone();
        same.nics[0].rx_ring_slots = base.nics[0].rx_ring_slots;
        same.kernel.ipintrq_maxlen = base.kernel.ipintrq_maxlen;
        assert_eq!(same, base, "{} changes only its two values", v.name);
        assert!(v.description.contains("nics.dc0.rx_ring_slots = "));
        assert_eq!(v.points.len(), 10);
    }
    let g = exp.grid.as_ref().expect("grid");
    assert_eq!(g.latency_point, Some(8)); // 40 % is the ninth point
}

#[test]
fn a_grid_applies_after_the_scenario_overrides_and_multiplies_variants() {
    let mut sc = example();
    sc["overrides"] =
        json!({"kernel": {"ipintrq_maxlen": 7}, "nics": {"dc0": {"rx_ring_slots": 8}}});
    sc["grid"]["parameters"] = json!([{"path": "nics[0].rx_ring_slots", "values": [32, 64]}]);
    sc["variants"] = json!([
        {"name": "small-q", "description": "short ipintrq"},
        {"name": "big-q", "overrides": {"kernel": {"ipintrq_maxlen": 200}}}
    ]);
    let exp = load(&sc).expect("loads");
    let got: Vec<(&str, u32, u32)> = exp
        .variants
        .iter()
        .map(|v| {
            (
                v.name.as_str(),
                v.model.nics[0].rx_ring_slots,
                v.model.kernel.ipintrq_maxlen,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("small-q,rx_ring_slots=32", 32, 7),
            ("small-q,rx_ring_slots=64", 64, 7),
            ("big-q,rx_ring_slots=32", 32, 200),
            ("big-q,rx_ring_slots=64", 64, 200),
        ]
    );
    assert!(exp.variants[0].description.ends_with("; short ipintrq"));
}

/// The example, shortened, run once.
fn example_results() -> &'static Results {
    static CELL: std::sync::OnceLock<Results> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let mut exp = scenario::load(&Path::new(ROOT).join(EXAMPLE), &DiskFiles::default())
            .expect("example loads");
        exp.duration_s = 0.1;
        exp.drain_s = 0.05;
        runner::run(&exp, 0, &|| {}).expect("runs")
    })
}

#[test]
fn each_cell_summary_agrees_with_its_points() {
    let r = example_results();
    let g = r.grid.as_ref().expect("grid summary");
    assert_eq!(g.cells.len(), 12);
    assert_eq!(g.latency_at, 40.0);
    assert_eq!(g.latency_at_load_pct, Some(40.0));
    assert_eq!(g.loss_free_pct, 0.1);
    assert_eq!(g.parameters[0].name, "rx_ring_slots");
    assert_eq!(g.parameters[1].values, vec![25.0, 50.0, 100.0]);
    let mut some_mlfrr = false;
    for c in &g.cells {
        let pts: Vec<&PointResult> = r.points.iter().filter(|p| p.variant == c.variant).collect();
        assert_eq!(pts.len(), 10);
        // MLFRR: the last point of the leading run that loses < 0.1 % (points in
        // increasing load already).
        let run = pts
            .iter()
            .take_while(|p| p.figures.total.loss_pct < 0.1)
            .last();
        assert_eq!(
            c.summary.mlfrr_pps,
            run.map(|p| p.offered_pps),
            "{}",
            c.variant
        );
        assert_eq!(c.summary.mlfrr_load_pct, run.map(|p| p.load_pct));
        some_mlfrr |= run.is_some();
        let peak = pts
            .iter()
            .map(|p| p.figures.total.forwarded_pps)
            .fold(0.0, f64::max);
        assert_eq!(c.summary.peak_pps, peak);
        let first_peak = pts
            .iter()
            .find(|p| p.figures.total.forwarded_pps == peak)
            .unwrap();
        assert_eq!(c.summary.peak_load_pct, first_peak.load_pct);
        let top = pts.last().unwrap();
        assert_eq!(top.load_pct, 50.0);
        assert_eq!(c.summary.top_forwarded_pps, top.figures.total.forwarded_pps);
        assert_eq!(c.summary.top_offered_pps, top.offered_pps);
        let at40 = pts.iter().find(|p| p.load_pct == 40.0).unwrap();
        assert_eq!(c.summary.p99_us, Some(at40.figures.total.latency_us.p99));
    }
    assert!(some_mlfrr, "the example has loss-free points");
    // At 40 % the ipintrq overflows or nearly: from a ring of 4 descriptors on (the
    // ring no longer fills), p99 latency grows with the queue's length.
    for ring in 1..4 {
        let p99: Vec<f64> = (0..3)
            .map(|q| g.cells[ring * 3 + q].summary.p99_us.unwrap())
            .collect();
        assert!(p99[0] < p99[1] && p99[1] < p99[2], "ring {ring}: {p99:?}");
    }
    // The summary round-trips through results.json.
    let back: Results = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(back.grid, r.grid);
}

#[test]
fn the_printed_table_lists_every_cell() {
    let text = irqsim::results::report::table(example_results());
    let at = text.find("grid summary: 12 cells").expect("grid table");
    let table: Vec<&str> = text[at..].lines().skip(1).collect();
    assert!(table[0].contains("rx_ring_slots") && table[0].contains("MLFRR pps"));
    assert_eq!(table.len(), 13, "{text}");
    assert!(table[1].trim_start().starts_with("2 "));
}

/// A tiny router whose capacity is plain arithmetic: per frame, 1.5 us of handler
/// (entry 0.5 + rx 0.5 + exit 0.5, one frame per interrupt at these rates) and the
/// netisr's cost. At 5 us the CPU forwards up to 1 / 6.5 us = 153,846 frames/s, so
/// 40,000, 80,000 and 120,000 frames/s are all loss-free; at 10 us, 1 / 11.5 us =
/// 86,957 frames/s: 80,000 is loss-free (92 % busy), 120,000 is not.
#[test]
fn a_tiny_grid_matches_the_hand_computed_mlfrr() {
    let model = json!({
        "cpu": {"clock_mhz": 1000},
        "kernel": {"netisr_per_packet": {"ns": 5000}},
        "nics": [
            {"name": "in", "driver": {"isr_entry": 500, "rx_per_packet": 500, "isr_exit": 500}},
            {"name": "out"}
        ]
    });
    let sc = json!({
        "model": "tiny-model.json",
        "grid": {
            "parameters": [{"path": "kernel.netisr_per_packet.ns", "values": [5000, 10000]}],
            "latency_at": 40000
        },
        "workload": {"flows": [{"from": "in", "to": "out"}]},
        "load": {"unit": "pps", "points": [40000, 80000, 120000]},
        "duration_s": 0.2,
        "drain_s": 0.1
    });
    let exp = scenario::load(
        Path::new("scenarios/case.json"),
        &Mem {
            scenario: sc.to_string(),
            model: Some(model.to_string()),
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(exp.variants[0].name, "ns=5000");
    let r = runner::run(&exp, 0, &|| {}).expect("runs");
    let g = r.grid.expect("grid");
    let fast = &g.cells[0].summary;
    let slow = &g.cells[1].summary;
    assert_eq!(fast.mlfrr_pps, Some(120_000.0));
    assert_eq!(slow.mlfrr_pps, Some(80_000.0));
    assert_eq!(fast.top_offered_pps, 120_000.0);
    assert!((fast.top_forwarded_pps - 120_000.0).abs() < 120.0);
    // Overloaded, the slow router forwards about its capacity (86,957/s), less what
    // livelock takes; never more.
    assert!(
        slow.top_forwarded_pps < 87_000.0,
        "{}",
        slow.top_forwarded_pps
    );
    assert!(slow.peak_pps >= 79_900.0);
    // Unloaded, a frame takes its handler, the netisr and nothing else: p99 at 40,000
    // frames/s is about 1 + 5 us and 1 + 10 us (plus wire and NIC latencies of 0).
    let (p_fast, p_slow) = (fast.p99_us.unwrap(), slow.p99_us.unwrap());
    assert!((p_slow - p_fast - 5.0).abs() < 0.5, "{p_fast} {p_slow}");
}

#[test]
fn bad_grids_are_refused_at_their_field() {
    let with = |params: Value| {
        let mut sc = example();
        sc["grid"]["parameters"] = params;
        sc
    };
    assert_problem(
        &with(json!([
            {"path": "kernel.ipintrq_maxlen", "values": [25]},
            {"path": "nics.dc0.rx_ring_slot", "values": [16]}
        ])),
        "grid.parameters[1].path",
        &["no field `rx_ring_slot` in `nics[0]`", "rx_ring_slots"],
    );
    assert_problem(
        &with(json!([{"path": "nics.dc7.rx_ring_slots", "values": [16]}])),
        "grid.parameters[0].path",
        &[
            "no element named or numbered `dc7` in `nics`",
            "dc0, dc1, dc2, dc3",
        ],
    );
    assert_problem(
        &with(json!([{"path": "kernel.netisr_per_packet", "values": [5000]}])),
        "grid.parameters[0].path",
        &[
            "`kernel.netisr_per_packet` is an object, not a number",
            "ns",
        ],
    );
    assert_problem(
        &with(json!([{"path": "nics.dc0.policy.kind", "values": [1]}])),
        "grid.parameters[0].path",
        &["is a string, not a number"],
    );
    assert_problem(
        &with(json!([{"path": "kernel.ipintrq_maxlen", "values": []}])),
        "grid.parameters[0].values",
        &["at least one value"],
    );
    assert_problem(
        &with(json!([{"path": "kernel.ipintrq_maxlen", "values": [25, 25.5]}])),
        "grid.parameters[0].values[1]",
        &["whole number"],
    );
    assert_problem(
        &with(json!([
            {"path": "nics.dc0.rx_ring_slots", "values": [16]},
            {"path": "nics[0].rx_ring_slots", "values": [32]}
        ])),
        "grid.parameters[1].path",
        &[
            "same value (`nics[0].rx_ring_slots`)",
            "grid.parameters[0].path",
        ],
    );
    assert_problem(
        &with(json!([
            {"path": "nics.dc0.rx_ring_slots", "values": (1..=40).collect::<Vec<u32>>()},
            {"path": "kernel.ipintrq_maxlen", "values": (1..=26).collect::<Vec<u32>>()}
        ])),
        "grid.parameters",
        &["40 x 26 = 1040 variants", "at most 1000"],
    );
    assert_problem(
        &with(json!([{"path": "nics..x", "values": [1]}])),
        "grid.parameters[0].path",
        &["empty key"],
    );
    // A value the model refuses is reported at that value, naming the cells that have it.
    assert_problem(
        &with(json!([
            {"path": "nics.dc0.rx_ring_slots", "values": [0, 16]},
            {"path": "kernel.ipintrq_maxlen", "values": [25]}
        ])),
        "grid.parameters[0].values[0]",
        &[
            "must be at least 1 slot, got 0",
            "variant `rx_ring_slots=0,ipintrq_maxlen=25`",
        ],
    );
    let mut sc = example();
    sc["grid"]["latency_at"] = json!(31);
    assert_problem(
        &sc,
        "grid.latency_at",
        &["one of the load points (10, 15, 20, 24, 26, 28, 30, 35, 40, 50 %), got 31"],
    );
    let mut sc = example();
    sc["grid"]["parameters"] = json!([]);
    assert_problem(&sc, "grid.parameters", &["at least one parameter"]);
    let mut sc = example();
    sc["grid"]["parameters"][0]["colour"] = json!("red");
    assert_problem(
        &sc,
        "grid.parameters[0].colour",
        &["unknown field `colour`"],
    );
}

#[test]
fn without_latency_at_the_lowest_point_is_used() {
    let mut sc = example();
    sc["grid"].as_object_mut().unwrap().remove("latency_at");
    let exp = load(&sc).expect("loads");
    let g = exp.grid.unwrap();
    assert_eq!((g.latency_at, g.latency_point), (10.0, Some(0)));
}

fn png_size(p: &Path) -> (u32, u32) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(p).unwrap()));
    let r = dec.read_info().unwrap();
    let i = r.info();
    (i.width, i.height)
}

#[test]
fn the_binary_prints_the_summary_and_draws_heat_maps() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("scenarios")).unwrap();
    std::fs::create_dir_all(d.join("models")).unwrap();
    std::fs::copy(Path::new(ROOT).join(MODEL), d.join(MODEL)).unwrap();
    let mut sc = example();
    sc["duration_s"] = json!(0.05);
    sc["drain_s"] = json!(0.02);
    sc["load"]["points"] = json!([10, 30, 50]);
    sc["grid"]["latency_at"] = json!(30);
    std::fs::write(d.join(EXAMPLE), sc.to_string()).unwrap();
    let out: PathBuf = d.join("out");
    let o = Command::new(BIN)
        .args(["run", EXAMPLE, "--out"])
        .arg(&out)
        .current_dir(d)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("grid summary: 12 cells"), "{stdout}");
    let plots = out.join("plots");
    let names = ["grid-mlfrr", "grid-peak", "grid-top", "grid-p99"];
    for n in names {
        assert_eq!(
            png_size(&plots.join(format!("{n}.png"))),
            (1024, 640),
            "{n}"
        );
        let svg = std::fs::read_to_string(plots.join(format!("{n}.svg"))).unwrap();
        for text in [
            "rx_ring_slots (nics.dc0.rx_ring_slots)",
            "ipintrq_maxlen",
            "\n64\n",
        ] {
            assert!(svg.contains(text), "{n}.svg lacks {text:?}");
        }
    }
    // `irqsim plot` redraws them from results.json, byte for byte.
    let before: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(plots.join(format!("{n}.png"))).unwrap())
        .collect();
    let again = d.join("again");
    let o = Command::new(BIN)
        .arg("plot")
        .arg(out.join("results.json"))
        .arg("--out")
        .arg(&again)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (n, b) in names.iter().zip(before) {
        assert_eq!(
            std::fs::read(again.join("plots").join(format!("{n}.png"))).unwrap(),
            b,
            "{n}"
        );
    }
    // A one-parameter grid has no heat map.
    sc["grid"]["parameters"] = json!([{"path": "kernel.ipintrq_maxlen", "values": [25, 50]}]);
    std::fs::write(d.join(EXAMPLE), sc.to_string()).unwrap();
    let out1 = d.join("out1");
    let o = Command::new(BIN)
        .args(["run", EXAMPLE, "--quiet", "--out"])
        .arg(&out1)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out1.join("plots/grid-mlfrr.png").exists());
    assert!(out1.join("plots/forwarded.png").exists());
}

#[test]
fn a_bad_grid_exits_with_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("scenarios")).unwrap();
    std::fs::create_dir_all(d.join("models")).unwrap();
    std::fs::copy(Path::new(ROOT).join(MODEL), d.join(MODEL)).unwrap();
    let mut sc = example();
    sc["grid"]["parameters"][1]["path"] = json!("kernel.ipintrq_max");
    std::fs::write(d.join(EXAMPLE), sc.to_string()).unwrap();
    let o = Command::new(BIN)
        .args(["run", EXAMPLE, "--quiet", "--out", "out"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "  {EXAMPLE}: at `grid.parameters[1].path`: no field `ipintrq_max` in `kernel`"
        )),
        "{stderr}"
    );
    assert!(!d.join("out").exists());
}
