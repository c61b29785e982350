//! Workload axes (issue 37, part 2): a variant's `workload` patch and a grid's
//! `workload.*` parameters. A cell or variant that changes the workload must run
//! exactly what a scenario written with that workload runs (the same figures to the
//! last bit), its load points must follow its own frame sizes, and problems in a patch
//! are reported where the patch sets them.

use irqsim::config::error::InputError;
use irqsim::config::scenario::{self, Experiment, FileSource};
use irqsim::experiment::runner;
use serde_json::{Value, json};
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A scenario in memory beside the files of the repository (its model path resolves
/// against `scenarios/`).
struct Mem(String);

impl FileSource for Mem {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        if path.file_name().is_some_and(|n| n == "case.json") {
            return Ok(self.0.clone());
        }
        std::fs::read_to_string(Path::new(ROOT).join(path))
    }
}

fn load(sc: &Value) -> Result<Experiment, InputError> {
    scenario::load(
        Path::new("scenarios/case.json"),
        &Mem(serde_json::to_string_pretty(sc).unwrap()),
    )
}

fn problems(sc: &Value) -> String {
    match load(sc) {
        Ok(_) => panic!("accepted: {sc}"),
        Err(e) => e.to_string(),
    }
}

/// The 21143 router, one flow of `frame_bytes`, two points, short.
fn base(frame_bytes: u32) -> Value {
    json!({
        "model": "../models/p3-448-dc21143-freebsd4.json",
        "workload": { "flows": [
            { "name": "a", "from": "dc0", "to": "dc1", "frame_bytes": frame_bytes, "arrivals": "poisson" }
        ] },
        "load": { "unit": "percent", "points": [20, 40] },
        "duration_s": 0.05,
        "drain_s": 0.02,
        "seed": 3
    })
}

/// The figures of every point of `exp`'s variant `v` (its name left out), as text:
/// every bit of every number.
fn figures(exp: &Experiment, v: usize) -> Vec<String> {
    let results = runner::run(exp, 1, &|| {}).expect("runs");
    let name = &exp.variants[v].name;
    results
        .points
        .iter()
        .filter(|p| &p.variant == name)
        .map(|p| {
            let mut p = p.clone();
            p.variant.clear();
            format!("{p:?}")
        })
        .collect()
}

#[test]
fn a_frame_size_grid_cell_runs_what_a_scenario_of_that_size_runs() {
    let mut sc = base(64);
    sc["grid"] = json!({ "parameters": [
        { "path": "workload.flows.*.frame_bytes", "values": [64, 600, 1518] }
    ] });
    let exp = load(&sc).expect("loads");
    let names: Vec<&str> = exp.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        ["frame_bytes=64", "frame_bytes=600", "frame_bytes=1518"]
    );
    for (v, bytes) in [64u32, 600, 1518].into_iter().enumerate() {
        let alone = load(&base(bytes)).expect("loads");
        assert_eq!(exp.variants[v].flows, alone.variants[0].flows, "{bytes}");
        assert_eq!(exp.variants[v].points, alone.variants[0].points, "{bytes}");
        assert_eq!(figures(&exp, v), figures(&alone, 0), "{bytes} bytes");
    }
    // The scenario's own flows stay as written.
    assert_eq!(
        exp.flows[0].frame_bytes,
        irqsim::model::traffic::FrameSize::Fixed(64)
    );
    // Each cell's rates follow its frame size: 40 % of 100 Mbit/s is 40 % of
    // 1e8 / ((bytes + 20) * 8) frames/s (preamble and gap 20 bytes, IEEE 802.3).
    for (v, bytes) in [64.0, 600.0, 1518.0].into_iter().enumerate() {
        let want = 0.4 * 1e8 / ((bytes + 20.0) * 8.0);
        let got = exp.variants[v].points[1].rates_pps[0];
        assert!((got - want).abs() < 1e-6 * want, "{bytes}: {got} vs {want}");
    }
}

#[test]
fn a_variant_patches_one_flow_all_flows_or_replaces_the_list() {
    let mut sc = base(64);
    sc["workload"]["flows"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "name": "b", "from": "dc1", "to": "dc0", "frame_bytes": 64 }));
    sc["variants"] = json!([
        { "name": "as-written" },
        { "name": "b-large", "workload": { "flows": { "b": { "frame_bytes": 1518 } } } },
        { "name": "all-128", "workload": { "flows": { "*": { "frame_bytes": 128, "arrivals": "constant" } } } },
        { "name": "one-flow", "workload": { "flows": [
            { "name": "c", "from": "dc0", "to": "dc1", "frame_bytes": 256 }
        ] } }
    ]);
    let exp = load(&sc).expect("loads");
    let sizes = |v: usize| -> Vec<f64> {
        exp.variants[v]
            .flows
            .iter()
            .map(|f| f.frame_bytes.mean_bytes())
            .collect()
    };
    assert_eq!(sizes(0), [64.0, 64.0]);
    assert_eq!(sizes(1), [64.0, 1518.0]);
    assert_eq!(sizes(2), [128.0, 128.0]);
    assert_eq!(sizes(3), [256.0]);
    assert!(
        exp.variants[2]
            .flows
            .iter()
            .all(|f| f.arrivals == irqsim::model::traffic::Arrivals::Constant)
    );
    // A run offers its variant's flows: one flow row for `one-flow`, two for the others.
    let results = runner::run(&exp, 1, &|| {}).expect("runs");
    for p in &results.points {
        let n = if p.variant == "one-flow" { 1 } else { 2 };
        assert_eq!(p.figures.flows.len(), n, "{}", p.variant);
    }
    // The one-flow variant runs what a scenario with that flow runs.
    let mut alone = base(256);
    alone["workload"]["flows"] =
        json!([{ "name": "c", "from": "dc0", "to": "dc1", "frame_bytes": 256 }]);
    let alone = load(&alone).expect("loads");
    assert_eq!(figures(&exp, 3), figures(&alone, 0));
    // Variants with other workloads have their own identity: a checkpoint or shard of
    // one cannot be taken for the other's.
    let plain = load(&base(64)).expect("loads");
    assert_ne!(
        irqsim::experiment::identity::fingerprint(&exp),
        irqsim::experiment::identity::fingerprint(&plain)
    );
}

#[test]
fn problems_in_a_workload_patch_are_reported_where_the_patch_sets_them() {
    // A flow the patch names that does not exist.
    let mut sc = base(64);
    sc["variants"] =
        json!([{ "name": "x", "workload": { "flows": { "nope": { "frame_bytes": 128 } } } }]);
    let e = problems(&sc);
    assert!(
        e.contains("variants[0].workload.flows.nope") && e.contains("no element named"),
        "{e}"
    );
    // A frame size out of range set by a variant, and one set by a grid value.
    let mut sc = base(64);
    sc["variants"] = json!([
        { "name": "ok" },
        { "name": "tiny", "workload": { "flows": { "*": { "frame_bytes": 32 } } } }
    ]);
    let e = problems(&sc);
    assert!(
        e.contains("variants[1].workload.flows.*.frame_bytes")
            && e.contains("(with variant `tiny`)"),
        "{e}"
    );
    let mut sc = base(64);
    sc["grid"] = json!({ "parameters": [
        { "path": "workload.flows.*.frame_bytes", "values": [64, 20000] }
    ] });
    let e = problems(&sc);
    assert!(e.contains("grid.parameters[0].values[1]"), "{e}");
    assert!(!e.contains("values[0]"), "{e}");
    // A grid path that leads to no number of the workload.
    let mut sc = base(64);
    sc["grid"] = json!({ "parameters": [
        { "path": "workload.flows.*.frame_size", "values": [64] }
    ] });
    let e = problems(&sc);
    assert!(
        e.contains("grid.parameters[0].path") && e.contains("no field `frame_size`"),
        "{e}"
    );
    // Two parameters on the same value, one through `*`.
    let mut sc = base(64);
    sc["grid"] = json!({ "parameters": [
        { "path": "workload.flows.*.frame_bytes", "values": [64] },
        { "path": "workload.flows[0].frame_bytes", "name": "first", "values": [128] }
    ] });
    let e = problems(&sc);
    assert!(
        e.contains("grid.parameters[1].path") && e.contains("sets the same value"),
        "{e}"
    );
    // A patch that is not an object.
    let mut sc = base(64);
    sc["variants"] = json!([{ "name": "x", "workload": [1] }]);
    let e = problems(&sc);
    assert!(
        e.contains("variants[0].workload") && e.contains("must be an object"),
        "{e}"
    );
    // A closed-loop flow brought in by a variant in a sweep of percent points.
    let mut sc = base(64);
    sc["variants"] =
        json!([{ "name": "rr", "workload": { "flows": { "a": { "arrivals": "closed-loop" } } } }]);
    let e = problems(&sc);
    assert!(
        e.contains("variants[0].workload.flows.a.arrivals") && e.contains("outstanding"),
        "{e}"
    );
}

#[test]
fn the_shipped_frame_size_by_policy_scenario_is_one_file() {
    let exp = scenario::load(
        &Path::new(ROOT).join("scenarios/frame-size-x-policy.json"),
        &scenario::DiskFiles::default(),
    )
    .expect("loads");
    assert_eq!(exp.variants.len(), 3 * 7);
    assert_eq!(exp.variants[0].name, "interrupt,frame_bytes=64");
    assert_eq!(exp.variants[20].name, "napi,frame_bytes=1518");
    // RFC 2544's seven sizes under every policy.
    for (i, v) in exp.variants.iter().enumerate() {
        let want = [64.0, 128.0, 256.0, 512.0, 1024.0, 1280.0, 1518.0][i % 7];
        assert_eq!(v.flows[0].frame_bytes.mean_bytes(), want, "{}", v.name);
    }
}
