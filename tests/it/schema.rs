//! The JSON Schemas shipped in schemas/ are the ones generated from the Rust types, and
//! every shipped scenario and model validates against them.

use serde_json::Value;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn shipped_schemas_are_up_to_date() {
    // Regenerate with: irqsim schema scenario > schemas/scenario.schema.json (and model).
    let shipped = std::fs::read_to_string(format!("{ROOT}/schemas/scenario.schema.json")).unwrap();
    assert_eq!(
        shipped,
        irqsim::config::scenario::scenario_schema(),
        "schemas/scenario.schema.json is stale"
    );
    let shipped = std::fs::read_to_string(format!("{ROOT}/schemas/model.schema.json")).unwrap();
    assert_eq!(
        shipped,
        irqsim::config::scenario::model_schema(),
        "schemas/model.schema.json is stale"
    );
}

fn check_dir(dir: &str, schema: &str) -> usize {
    let schema = read_json(Path::new(&format!("{ROOT}/schemas/{schema}")));
    let v = jsonschema::validator_for(&schema).expect("a valid schema");
    let mut n = 0;
    for e in std::fs::read_dir(format!("{ROOT}/{dir}")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        let doc = read_json(&p);
        let errors: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", p.display());
        n += 1;
    }
    n
}

#[test]
fn every_shipped_scenario_and_model_validates() {
    assert!(check_dir("scenarios", "scenario.schema.json") >= 4);
    assert!(check_dir("models", "model.schema.json") >= 2);
}

#[test]
fn the_schema_rejects_what_the_loader_rejects() {
    let schema = read_json(Path::new(&format!("{ROOT}/schemas/scenario.schema.json")));
    let v = jsonschema::validator_for(&schema).unwrap();
    let mut doc = read_json(Path::new(&format!(
        "{ROOT}/scenarios/dc21143-64b-1flow.json"
    )));
    assert!(v.is_valid(&doc));
    doc["durations_s"] = Value::from(10); // unknown field
    assert!(!v.is_valid(&doc));
    let mut doc = read_json(Path::new(&format!(
        "{ROOT}/scenarios/dc21143-64b-1flow.json"
    )));
    doc["duration_s"] = Value::from("ten"); // wrong type
    assert!(!v.is_valid(&doc));
}

/// One invalid file of the table below: an edit of the reference scenario or of its
/// model.
enum Edit {
    Scenario(&'static str, Value),
    Model(&'static str, Value),
}

/// Set the value at a `/`-separated pointer (creating nothing: the parent must exist).
fn set(doc: &mut Value, pointer: &str, v: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let p = doc
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no {parent}"));
    match p {
        Value::Array(a) => a[key.parse::<usize>().unwrap()] = v,
        Value::Object(o) => {
            o.insert(key.to_string(), v);
        }
        _ => panic!("{parent} holds no members"),
    }
}

/// Every per-field limit the loader enforces is in the schemas, so that an editor flags
/// what `irqsim run` would refuse: each file of the table is refused by the binary with
/// exit 2 and rejected by the shipped schema (the first 25 were added with the
/// scenario, traffic, NIC, CPU, kernel and cost limits, the other 19 with the components'
/// own fields; each passed the schema before its limit was carried).
/// Checks across fields and files (a flow's NIC, load above line rate) stay the
/// loader's.
#[test]
fn the_schema_rejects_every_per_field_limit_of_the_loader() {
    use Edit::*;
    use serde_json::json;
    let big = || serde_json::from_str::<Value>("18446744073709551616").unwrap();
    let table = vec![
        Scenario("/duration_s", json!(0)),
        Scenario("/duration_s", json!(1e-10)),
        Scenario("/duration_s", json!(100000)),
        Scenario("/drain_s", json!(-1)),
        Scenario("/replications", json!(0)),
        Scenario("/replications", json!(4294967296u64)),
        Scenario("/seed", big()),
        Scenario("/workload/flows/0/frame_bytes", json!(58)),
        Scenario("/workload/flows/0/frame_bytes", json!(20000)),
        Scenario(
            "/workload/flows/0/frame_bytes",
            json!({"dist": "uniform", "min": 60, "max": 128}),
        ),
        Scenario("/workload/flows/0/start_phase", json!(1.0)),
        Scenario("/workload/flows/0/clock_ppm", json!(2000)),
        Scenario("/workload/flows/0/rate_pps", json!(0)),
        Scenario("/workload/flows/0/turnaround_ns", json!(-1)),
        Scenario("/timeline", json!({"bucket_ms": 0})),
        Scenario("/variants", json!([{"name": "a/b"}])),
        Scenario("/load", json!({"unit": "percent", "points": []})),
        Scenario("/load", json!({"unit": "percent", "points": [10, 0]})),
        Scenario(
            "/load",
            json!({"unit": "percent", "from": 10, "to": 20, "step": 0}),
        ),
        Model("/nics/0/rx_ring_slots", json!(0)),
        Model("/nics/0/line_rate_bps", json!(1)),
        Model("/nics/0/queues", json!(0)),
        Model("/kernel/ipintrq_maxlen", json!(0)),
        Model("/cpu/clock_mhz", json!(0)),
        Model("/kernel/netisr_per_packet", json!({"ns": -5})),
        // The components' own fields (these 19 passed the schema before they carried
        // their limits).
        Model("/nics/0/policy", json!({"kind": "napi", "weight": 0})),
        Model("/kernel/napi", json!({"netdev_budget": 0})),
        Model("/kernel/napi", json!({"netdev_max_backlog": 0})),
        Model("/nics/0/policy", json!({"kind": "mogul", "quota": 0})),
        Model("/nics/0/policy", json!({"kind": "mogul", "period_ns": 0})),
        Model(
            "/nics/0/policy",
            json!({"kind": "deferred", "process_limit": 0}),
        ),
        Model("/nics/0/moderation", json!({"packet_timer_ns": -1})),
        Model("/bus/clock_mhz", json!(0)),
        Model("/bus/clock_mhz", json!(2e5)),
        Model("/bus/width_bytes", json!(0)),
        Model("/bus/read_latency_ns", json!(-1)),
        Model("/nics/0/dma/rx_fifo_bytes", json!(32)),
        Model("/nics/0/dma/tx_thresholds_bytes", json!([0, 256])),
        Model("/nics/0/driver/link_watch/tick_period_ns", json!(0)),
        Model(
            "/nics/0/stats_counters",
            json!({"threshold": 0, "overflow_harvest": 100}),
        ),
        Model(
            "/nics/0/stats_counters",
            json!({"threshold": 10, "bits": 33, "overflow_harvest": 100}),
        ),
        Model(
            "/nics/0/stats_counters",
            json!({"threshold": 10, "overflow_harvest": 100, "harvest_period_ns": 0}),
        ),
        Model(
            "/user",
            json!({"kind": "screend", "per_packet": 100, "queue_len": 0}),
        ),
        Model(
            "/user",
            json!({"kind": "screend", "per_packet": 100, "busy_read_us": -1}),
        ),
        // Idle states (cpu.idle).
        Model("/cpu/idle", json!({"states": []})),
        Model(
            "/cpu/idle",
            json!({"states": [{"name": "C6", "exit_latency_us": 200000, "target_residency_us": 0}]}),
        ),
        Model(
            "/cpu/idle",
            json!({"states": [{"name": "C6", "exit_latency_us": 1, "target_residency_us": 1}], "max_cstate": 0}),
        ),
        Model(
            "/cpu/idle",
            json!({"states": [{"name": "C6", "exit_latency_us": 1, "target_residency_us": 1}], "next_timer_us": 0}),
        ),
    ];
    assert_eq!(table.len(), 48);
    let scenario_schema = read_json(Path::new(&format!("{ROOT}/schemas/scenario.schema.json")));
    let model_schema = read_json(Path::new(&format!("{ROOT}/schemas/model.schema.json")));
    let sv = jsonschema::validator_for(&scenario_schema).unwrap();
    let mv = jsonschema::validator_for(&model_schema).unwrap();
    let base_s = read_json(Path::new(&format!(
        "{ROOT}/scenarios/dc21143-64b-1flow.json"
    )));
    let base_m = read_json(Path::new(&format!(
        "{ROOT}/models/p3-448-dc21143-freebsd4.json"
    )));
    let mut passed_schema = Vec::new();
    for edit in &table {
        let (mut s, mut m) = (base_s.clone(), base_m.clone());
        // Short points, so a file the loader wrongly accepted would not run long.
        s["duration_s"] = json!(0.01);
        s.as_object_mut().unwrap().remove("measured");
        let (what, schema_ok) = match edit {
            Scenario(at, v) => {
                set(&mut s, at, v.clone());
                (format!("scenario {at} = {v}"), sv.is_valid(&s))
            }
            Model(at, v) => {
                set(&mut m, at, v.clone());
                (format!("model {at} = {v}"), mv.is_valid(&m))
            }
        };
        // The loader: the binary refuses it with exit 2.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("scenarios")).unwrap();
        std::fs::create_dir_all(dir.path().join("models")).unwrap();
        let sp = dir.path().join("scenarios/case.json");
        std::fs::write(&sp, s.to_string()).unwrap();
        std::fs::write(
            dir.path().join("models/p3-448-dc21143-freebsd4.json"),
            m.to_string(),
        )
        .unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_irqsim"))
            .arg("run")
            .arg(&sp)
            .arg("--out")
            .arg(dir.path().join("out"))
            .args(["--quiet", "--no-plots"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{what}: the loader accepted it");
        if schema_ok {
            passed_schema.push(what);
        }
    }
    assert!(
        passed_schema.is_empty(),
        "the schema lets through {passed_schema:?}"
    );
}

/// The book's field reference pages are exactly what `irqsim schema KIND --markdown`
/// prints (generated from the config types' doc comments), so they cannot drift.
#[test]
fn the_books_field_reference_is_generated_from_the_types() {
    for (kind, page) in [
        ("scenario", "scenario-fields.md"),
        ("model", "model-fields.md"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_irqsim"))
            .args(["schema", kind, "--markdown"])
            .output()
            .expect("irqsim runs");
        assert!(out.status.success());
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("book/src")
            .join(page);
        let book = std::fs::read_to_string(&path).expect("the page exists");
        assert!(
            book == String::from_utf8_lossy(&out.stdout),
            "book/src/{page} differs from the types' docs: regenerate it with \
             `cargo run --release -- schema {kind} --markdown > book/src/{page}`"
        );
    }
}
