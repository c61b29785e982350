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
        irqsim::scenario::scenario_schema(),
        "schemas/scenario.schema.json is stale"
    );
    let shipped = std::fs::read_to_string(format!("{ROOT}/schemas/model.schema.json")).unwrap();
    assert_eq!(
        shipped,
        irqsim::scenario::model_schema(),
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
