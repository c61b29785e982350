use super::*;
use serde_json::json;

#[test]
fn schema_descriptions_name_mechanisms_not_source_paths() {
    assert_eq!(
        unlink_text("see [`crate::model::nic::xps`]) and [`crate::config::grid`]."),
        "see `xps`) and `grid`."
    );
    assert_eq!(unlink_text("an open [`crate::x"), "an open [`crate::x");
    // A unit escaped for rustdoc reads as written in the schema.
    assert_eq!(unlink_text("Bucket width \\[ms\\]."), "Bucket width [ms].");
    for s in [scenario_schema(), model_schema()] {
        assert!(!s.contains("crate::"), "a source path is left in a schema");
    }
}

#[test]
fn merge_patch_by_name_and_index() {
    let mut m = json!({"a": 1, "nics": [{"name": "dc0", "x": 1}, {"name": "dc1", "x": 2}]});
    merge_patch(
        &mut m,
        &json!({"a": null, "nics": {"dc1": {"x": 5}, "0": {"y": 3}}}),
    );
    assert_eq!(
        m,
        json!({"nics": [{"name": "dc0", "x": 1, "y": 3}, {"name": "dc1", "x": 5}]})
    );
}

#[test]
fn override_attribution() {
    let model = json!({"kernel": {"q": 1}, "nics": [{"name": "dc0", "s": 1}]});
    let ov = json!({"nics": {"dc0": {"s": 0}}});
    assert_eq!(
        overridden(&ov, &model, "nics[0].s").as_deref(),
        Some("nics.dc0.s")
    );
    assert_eq!(overridden(&ov, &model, "kernel.q"), None);
}

#[test]
fn normalize_resolves_parent_dirs() {
    assert_eq!(
        normalize(Path::new("scenarios/../models/a.json")),
        PathBuf::from("models/a.json")
    );
    // A `..` never cancels a `..` (it used to: `../../m/a.json` became `m/a.json`).
    assert_eq!(
        normalize(Path::new("../../models/a.json")),
        PathBuf::from("../../models/a.json")
    );
    assert_eq!(
        normalize(Path::new("a/../../b/./c.json")),
        PathBuf::from("../b/c.json")
    );
    assert_eq!(normalize(Path::new("/../x")), PathBuf::from("/x"));
}

/// A scenario and a model in memory, for the stages.
struct Mem(Vec<(&'static str, String)>);

impl FileSource for Mem {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.0
            .iter()
            .find(|(p, _)| Path::new(p) == path)
            .map(|(_, t)| t.clone())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    }
}

/// The shipped reference scenario with `edit` applied, and its model, in memory.
fn mem(edit: impl FnOnce(&mut Value)) -> Mem {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sc: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("scenarios/dc21143-64b-1flow.json")).unwrap(),
    )
    .unwrap();
    sc["model"] = json!("m.json");
    sc.as_object_mut().unwrap().remove("measured");
    edit(&mut sc);
    let model = std::fs::read_to_string(root.join("models/p3-448-dc21143-freebsd4.json")).unwrap();
    Mem(vec![("s/x.json", sc.to_string()), ("s/m.json", model)])
}

#[test]
fn the_read_stage_gives_both_files_or_names_the_one_it_could_not_read() {
    let files = mem(|_| {});
    let inp = read_inputs(Path::new("s/x.json"), &files).expect("read");
    assert_eq!((inp.stem.as_str(), inp.mfile.as_str()), ("x", "s/m.json"));
    assert!(inp.wval.get("flows").is_some(), "the workload as written");
    let files = mem(|sc| sc["model"] = json!("none.json"));
    let Err(InputError::Invalid(p)) = read_inputs(Path::new("s/x.json"), &files) else {
        panic!("a missing model is a problem of the scenario's `model`");
    };
    assert_eq!(p[0].problem.path, "model");
    assert!(
        p[0].problem.reason.contains("s/none.json"),
        "{}",
        p[0].problem.reason
    );
}

#[test]
fn the_name_stage_refuses_what_cannot_name_an_output_directory() {
    assert!(check_name("dc21143-64b-1flow").is_none());
    for bad in ["..", "a b", ""] {
        let p = check_name(bad).expect(bad);
        assert!(p.reason.contains("rename the file"), "{bad}: {}", p.reason);
    }
}

#[test]
fn the_patch_stage_checks_variant_names_and_stops_past_the_limit() {
    let files = mem(|sc| {
        sc["variants"] = json!([{"name": "a"}, {"name": "a"}, {"name": "x/y"}]);
    });
    let inp = read_inputs(Path::new("s/x.json"), &files).unwrap();
    let mut problems = Vec::new();
    let specs = variant_specs(&inp, &mut problems).expect("under the limit");
    assert_eq!(specs.len(), 3);
    let paths: Vec<&str> = problems.iter().map(|p| p.problem.path.as_str()).collect();
    assert_eq!(paths, ["variants[1].name", "variants[2].name"]);
    // One variant past the limit stops the load before any is built.
    let n = crate::sim::limits::MAX_VARIANTS + 1;
    let files = mem(|sc| {
        sc["variants"] = Value::Array((0..n).map(|i| json!({"name": format!("v{i}")})).collect());
    });
    let inp = read_inputs(Path::new("s/x.json"), &files).unwrap();
    let Err(InputError::Invalid(p)) = variant_specs(&inp, &mut Vec::new()) else {
        panic!("{n} variants accepted");
    };
    assert!(
        p[0].problem.reason.contains(&format!("{n} variants")),
        "{}",
        p[0].problem.reason
    );
}

#[test]
fn the_validate_stage_counts_runs_against_the_limit() {
    let files = mem(|sc| {
        sc["load"] = json!({"unit": "percent", "points": [10, 20]});
        sc["replications"] = json!(crate::sim::limits::MAX_REPLICATIONS);
    });
    let inp = read_inputs(Path::new("s/x.json"), &files).unwrap();
    let (values, p) = check_scenario(&inp.sc, 1, &mut None);
    assert_eq!(values, [10.0, 20.0]);
    let runs = 2 * u64::from(crate::sim::limits::MAX_REPLICATIONS);
    let over = runs > crate::sim::limits::MAX_RUNS as u64;
    assert_eq!(
        p.list.iter().any(|q| q.reason.contains("runs in a sweep")),
        over
    );
    // Variants multiply the runs: enough of them pass the limit.
    let nspecs = (crate::sim::limits::MAX_RUNS as u64 / runs + 1) as usize;
    let (_, p) = check_scenario(&inp.sc, nspecs, &mut None);
    let q = p
        .list
        .iter()
        .find(|q| q.reason.contains("runs in a sweep"))
        .expect("over");
    assert_eq!(q.path, "replications");
    // Under 1 ns of sending time.
    let mut sc = inp.sc;
    sc.duration_s = 1e-10;
    let (_, p) = check_scenario(&sc, 1, &mut None);
    assert!(
        p.list
            .iter()
            .any(|q| q.path == "duration_s" && q.reason.contains("1 ns"))
    );
}

#[test]
fn a_range_of_2_to_the_64_steps_is_refused_not_wrapped() {
    // 0..=1.9e19 in steps of 1: 2^64 and more points, once an overflow of `n + 1` with
    // overflow checks on; counted as a float and refused against the limit.
    let spec = LoadSpec {
        unit: LoadUnit::Pps,
        points: None,
        from: Some(0.0),
        to: Some(1.9e19),
        step: Some(1.0),
    };
    let mut p = Problems::new();
    assert!(load_values(&spec, &mut p).is_empty());
    assert!(
        p.list[0].reason.contains("points; at most"),
        "{}",
        p.list[0].reason
    );
}
