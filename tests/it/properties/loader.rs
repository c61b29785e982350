//! 1. **Loader.** Arbitrary and mutated scenario and model files load or are refused
//!    with an error that says what is wrong; nothing panics.

use super::{Sandbox, config, shipped_files};
use irqsim::config::scenario::{self, DiskFiles};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::OnceLock;

/// A JSON document as text is written: objects may repeat keys and numbers are raw text
/// (so `1e999`, `-0`, `NaN` or 20-digit integers can be written).
#[derive(Clone, Debug)]
enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    fn from_value(v: &Value) -> J {
        match v {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Number(n) => J::Num(n.to_string()),
            Value::String(s) => J::Str(s.clone()),
            Value::Array(a) => J::Arr(a.iter().map(J::from_value).collect()),
            Value::Object(o) => J::Obj(
                o.iter()
                    .map(|(k, v)| (k.clone(), J::from_value(v)))
                    .collect(),
            ),
        }
    }

    fn render(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write(&self, out: &mut String) {
        let quote = |s: &str| serde_json::to_string(s).expect("string");
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(t) => out.push_str(t),
            J::Str(s) => out.push_str(&quote(s)),
            J::Arr(items) => {
                out.push('[');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    it.write(out);
                }
                out.push(']');
            }
            J::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&quote(k));
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// Nodes, in pre-order (the root is node 0).
    fn count(&self) -> usize {
        1 + match self {
            J::Arr(items) => items.iter().map(J::count).sum(),
            J::Obj(members) => members.iter().map(|(_, v)| v.count()).sum(),
            _ => 0,
        }
    }

    /// Every object and array, in pre-order.
    fn containers(&self, out: &mut Vec<J>) {
        match self {
            J::Arr(items) => {
                out.push(self.clone());
                items.iter().for_each(|v| v.containers(out));
            }
            J::Obj(members) => {
                out.push(self.clone());
                members.iter().for_each(|(_, v)| v.containers(out));
            }
            _ => {}
        }
    }
}

/// One edit of a JSON document at one node.
#[derive(Clone, Debug)]
enum Op {
    /// Drop the member or element (the root becomes `null`).
    Remove,
    /// Repeat the member (same key twice) or the element.
    Duplicate,
    /// Give the member another key.
    Rename(String),
    /// Put another value there.
    Replace(J),
    /// Multiply a number (by -1, 0, 1e-9, 1e300...).
    Scale(f64),
    /// Number to string and back, booleans and containers to strings.
    FlipType,
    /// Wrap the value in an array.
    Wrap,
    /// Bury the value under this many arrays (serde_json stops at 128).
    Nest(usize),
    /// Add a member to an object (or make the value an object holding it).
    Insert(String, J),
}

impl Op {
    /// Apply to a standalone value.
    fn on_value(&self, v: &mut J) {
        match self {
            Op::Remove => *v = J::Null,
            Op::Duplicate => *v = J::Arr(vec![v.clone(), v.clone()]),
            Op::Rename(k) => *v = J::Str(k.clone()),
            Op::Replace(j) => *v = j.clone(),
            Op::Scale(f) => {
                if let J::Num(t) = v
                    && let Ok(x) = t.parse::<f64>()
                {
                    *t = number_text(x * f);
                }
            }
            Op::FlipType => {
                *v = match std::mem::replace(v, J::Null) {
                    J::Num(t) => J::Str(t),
                    J::Str(s) if s.parse::<f64>().is_ok() => J::Num(s),
                    J::Str(s) => J::Arr(vec![J::Str(s)]),
                    J::Bool(b) => J::Str(b.to_string()),
                    J::Null => J::Str("null".into()),
                    other => J::Str(other.render()),
                }
            }
            Op::Wrap => *v = J::Arr(vec![std::mem::replace(v, J::Null)]),
            Op::Nest(n) => {
                let mut x = std::mem::replace(v, J::Null);
                for _ in 0..*n {
                    x = J::Arr(vec![x]);
                }
                *v = x;
            }
            Op::Insert(k, j) => match v {
                J::Obj(m) => m.push((k.clone(), j.clone())),
                _ => *v = J::Obj(vec![(k.clone(), j.clone())]),
            },
        }
    }

    /// Apply to element `i` of an array.
    fn in_array(&self, items: &mut Vec<J>, i: usize) {
        match self {
            Op::Remove => {
                items.remove(i);
            }
            Op::Duplicate => items.insert(i + 1, items[i].clone()),
            _ => self.on_value(&mut items[i]),
        }
    }

    /// Apply to member `i` of an object.
    fn in_object(&self, members: &mut Vec<(String, J)>, i: usize) {
        match self {
            Op::Remove => {
                members.remove(i);
            }
            Op::Duplicate => members.insert(i + 1, members[i].clone()),
            Op::Rename(k) => members[i].0 = k.clone(),
            _ => self.on_value(&mut members[i].1),
        }
    }
}

/// A number as JSON text; non-finite results become an out-of-range literal.
fn number_text(x: f64) -> String {
    if !x.is_finite() {
        return if x < 0.0 { "-1e999" } else { "1e999" }.into();
    }
    if x.fract() == 0.0 && x.abs() < 9e15 {
        return format!("{}", x as i64);
    }
    serde_json::Number::from_f64(x)
        .map(|n| n.to_string())
        .unwrap_or_else(|| "0".into())
}

/// Apply `op` at pre-order node `target` of `root`.
fn apply(root: &mut J, target: usize, op: &Op) {
    fn visit(node: &mut J, target: usize, n: &mut usize, op: &Op) -> bool {
        match node {
            J::Arr(items) => {
                for i in 0..items.len() {
                    *n += 1;
                    if *n == target {
                        op.in_array(items, i);
                        return true;
                    }
                    if visit(&mut items[i], target, n, op) {
                        return true;
                    }
                }
                false
            }
            J::Obj(members) => {
                for i in 0..members.len() {
                    *n += 1;
                    if *n == target {
                        op.in_object(members, i);
                        return true;
                    }
                    if visit(&mut members[i].1, target, n, op) {
                        return true;
                    }
                }
                false
            }
            _ => false,
        }
    }
    if target == 0 {
        op.on_value(root);
    } else {
        visit(root, target, &mut 0, op);
    }
}

/// Apply the edits in order, each at a node chosen among the nodes of the document as
/// it is when that edit applies.
fn mutate(mut doc: J, edits: &[(Index, Op)]) -> J {
    for (at, op) in edits {
        let n = doc.count();
        apply(&mut doc, at.index(n), op);
    }
    doc
}

/// Number texts that break naive loaders: signs, zero, fractions for integers, beyond
/// u32/u64/i64/f64, not JSON at all.
const ODD_NUMBERS: &str = "0 -0 -1 1 0.5 -0.5 2 63 64 65 100 101 1e-9 1e-300 5e-324 1e9 1e12 \
    1e15 86400 86401 100000 100001 4294967295 4294967296 -4294967296 9007199254740993 \
    18446744073709551615 18446744073709551616 -9223372036854775808 1.7976931348623157e308 \
    -1.7976931348623157e308 1e308 1e999 -1e999 NaN Infinity -Infinity 01 1. .5 +1 0x10";

/// Keys and string values of the shipped files, plus names the loader knows that the
/// shipped files may not use, plus paths that exist or do not.
fn vocabulary() -> &'static Vec<String> {
    static CELL: OnceLock<Vec<String>> = OnceLock::new();
    CELL.get_or_init(|| {
        fn walk(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::String(s) if s.len() <= 60 => out.push(s.clone()),
                Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                Value::Object(o) => {
                    for (k, x) in o {
                        out.push(k.clone());
                        walk(x, out);
                    }
                }
                _ => {}
            }
        }
        let s = shipped_files();
        let names = "overrides variants timeline bucket_ms points from to step unit percent pps \
            outstanding turnaround_ns arrivals poisson constant closed-loop frame_bytes dist mix \
            uniform sizes weights min max user cpu-bound screend work_unit per_packet queue_len \
            moderation adaptive dynamic-conservative stats_counters threshold bits \
            overflow_harvest periodic_harvest harvest_period_ns harvest_phase_ns periodic_spl \
            splimp softclock clock hz hardclock polling napi mogul idle_poll burst_start kind \
            interrupt freebsd-polling mogul-ramakrishnan deferred busy-poll empty_poll \
            exponential normal lognormal cycles ns mean_ns stddev_ns min_ns max_ns 0 1 99";
        let paths = [
            "",
            ".",
            "..",
            "case.json",
            "../models",
            "../models/missing.json",
            "../models/p3-448-dc21143-freebsd4.json",
            "../models/p100-3c905b-freebsd41.json",
            "measured/test_25Mx64x1.csv",
            "measured/test_600x4.csv",
        ];
        let mut out: Vec<String> = names
            .split_whitespace()
            .chain(paths)
            .map(String::from)
            .collect();
        for (_, v) in s.scenarios.iter().chain(&s.models) {
            walk(v, &mut out);
        }
        out.sort();
        out.dedup();
        out
    })
}

/// Objects and arrays of every shipped file: pieces to graft anywhere.
fn grafts() -> &'static Vec<J> {
    static CELL: OnceLock<Vec<J>> = OnceLock::new();
    CELL.get_or_init(|| {
        let s = shipped_files();
        let mut out = Vec::new();
        for (_, v) in s.scenarios.iter().chain(&s.models) {
            J::from_value(v).containers(&mut out);
        }
        // And values the shipped files do not contain.
        for t in [
            r#"{"dist": "exponential", "mean_ns": 0}"#,
            r#"{"dist": "lognormal", "mean_ns": 0, "stddev_ns": 0}"#,
            r#"{"dist": "lognormal", "mean_ns": 1e-300, "stddev_ns": 1e300}"#,
            r#"{"dist": "uniform", "min_ns": 5, "max_ns": 1}"#,
            r#"{"dist": "normal", "mean_ns": -1, "stddev_ns": -1}"#,
            r#"{"dist": "normal", "mean_ns": 1e308, "stddev_ns": 1e308}"#,
            r#"{"cycles": 1e308}"#,
            r#"{"ns": 1, "cycles": 1}"#,
            r#"{"dist": "mix", "sizes": [], "weights": []}"#,
            r#"{"dist": "mix", "sizes": [64, 128], "weights": [1]}"#,
            r#"{"dist": "mix", "sizes": [64], "weights": [0]}"#,
            r#"{"dist": "mix", "sizes": [64], "weights": [-1, 2]}"#,
            r#"{"dist": "uniform", "min": 1518, "max": 64}"#,
            r#"{"dist": "uniform", "min": 0, "max": 4294967295}"#,
            r#"{"kind": "napi", "weight": 0}"#,
            r#"{"kind": "mogul-ramakrishnan", "quota": 0}"#,
            r#"{"kind": "deferred", "process_limit": 0, "direct": true}"#,
            r#"{"kind": "busy-poll", "empty_poll": 0}"#,
            r#"{"kind": "freebsd-polling"}"#,
            r#"{"kind": "cpu-bound", "work_unit": 0}"#,
            r#"{"kind": "screend", "per_packet": 1000, "queue_len": 0}"#,
            r#"{"packets": 5}"#,
            r#"{"adaptive": "dynamic-conservative", "min_interval_ns": 1}"#,
            r#"{"threshold": 0, "bits": 33, "overflow_harvest": 1}"#,
            r#"{"threshold": 4294967295, "bits": 32, "overflow_harvest": 1}"#,
            r#"{"unit": "pps", "points": []}"#,
            r#"{"unit": "percent", "from": 10, "to": 5, "step": 1}"#,
            r#"{"unit": "percent", "from": 0, "to": 1e300, "step": 1e-300}"#,
            r#"{"unit": "outstanding", "points": [0, -1, 1e300]}"#,
            r#"{"unit": "pps", "points": [1e300]}"#,
            r#"{"flows": []}"#,
            r#"{"flows": [{"from": "dc0", "to": "dc0"}]}"#,
            r#"{"flows": [{"from": "dc0", "to": "dc1", "arrivals": "closed-loop"}]}"#,
            r#"[{"name": "a"}, {"name": "a"}]"#,
            r#"[{"name": "../x"}]"#,
            r#"[]"#,
            r#"{"nics": {"9": {"rx_ring_slots": 0}}}"#,
            r#"{"nics": {"dc0": null}}"#,
            r#"{"nics": []}"#,
            r#"{"bucket_ms": 1e-300}"#,
        ] {
            out.push(J::from_value(&serde_json::from_str(t).expect(t)));
        }
        out
    })
}

fn num_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(ODD_NUMBERS.split_whitespace().collect::<Vec<_>>()).prop_map(String::from),
        1 => any::<i64>().prop_map(|i| i.to_string()),
        1 => any::<u64>().prop_map(|u| u.to_string()),
        1 => any::<f64>().prop_map(number_text),
        2 => (-300i64..=300).prop_map(|i| i.to_string()),
    ]
}

fn word() -> impl Strategy<Value = String> {
    // No `/` or `\`: a random path could otherwise name a device such as /dev/zero.
    prop_oneof![
        4 => select(vocabulary().clone()),
        1 => "[a-zA-Z0-9_.\\- ]{0,12}",
        1 => "\\PC{0,6}".prop_map(|s: String| s.replace(['/', '\\'], "")),
    ]
}

fn leaf() -> impl Strategy<Value = J> {
    prop_oneof![
        1 => Just(J::Null),
        1 => any::<bool>().prop_map(J::Bool),
        4 => num_text().prop_map(J::Num),
        3 => word().prop_map(J::Str),
    ]
}

/// Any JSON document (with repeated keys and odd numbers), keys mostly ones the loader
/// knows.
fn arb_json() -> impl Strategy<Value = J> {
    leaf().prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(J::Arr),
            prop::collection::vec((word(), inner), 0..8).prop_map(J::Obj),
        ]
    })
}

fn replacement() -> impl Strategy<Value = J> {
    prop_oneof![
        4 => leaf(),
        3 => select(grafts().clone()),
        1 => arb_json(),
        1 => Just(J::Arr(vec![])),
        1 => Just(J::Obj(vec![])),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Remove),
        2 => Just(Op::Duplicate),
        2 => word().prop_map(Op::Rename),
        4 => replacement().prop_map(Op::Replace),
        4 => num_text().prop_map(|t| Op::Replace(J::Num(t))),
        5 => select(vec![-1.0, 0.0, 1e-9, 1e-3, 0.5, 1.5, 10.0, 1e3, 1e6, 1e12, 1e300, -1e300])
            .prop_map(Op::Scale),
        2 => Just(Op::FlipType),
        1 => Just(Op::Wrap),
        1 => prop_oneof![1usize..8, 120usize..140].prop_map(Op::Nest),
        2 => (word(), replacement()).prop_map(|(k, v)| Op::Insert(k, v)),
    ]
}

fn edits(max: usize) -> impl Strategy<Value = Vec<(Index, Op)>> {
    prop::collection::vec((any::<Index>(), op()), 1..=max)
}

/// The model file a shipped scenario refers to.
fn model_of(scenario: &Value) -> String {
    let m = scenario["model"].as_str().expect("model path");
    Path::new(m)
        .file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned()
}

/// A model as a merge patch: the `nics` array becomes an object keyed by NIC name, so
/// the patch goes through the by-name path of the merge.
fn as_patch(model: &Value) -> Value {
    let mut p = model.clone();
    if let Some(nics) = model["nics"].as_array() {
        let by_name: serde_json::Map<String, Value> = nics
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let name = n["name"].as_str().map_or(i.to_string(), String::from);
                (name, n.clone())
            })
            .collect();
        p["nics"] = Value::Object(by_name);
    }
    p
}

/// Every shipped scenario loads in the sandbox: otherwise the mutation tests below would
/// only ever test the path of a missing file.
#[test]
fn sandbox_loads_every_shipped_scenario() {
    let mut sb = Sandbox::new();
    for (name, v) in &shipped_files().scenarios {
        std::fs::write(sb.scenario_path(), v.to_string()).expect("write");
        if let Err(e) = scenario::load(&sb.scenario_path(), &DiskFiles::default()) {
            panic!("{name} does not load in the sandbox: {e}");
        }
        sb.check(v.to_string().as_bytes(), None).expect("loads");
    }
}

proptest! {
    #![proptest_config(config(1500))]

    /// Any JSON document as the scenario.
    #[test]
    fn loader_survives_arbitrary_json_scenarios(doc in arb_json()) {
        thread_local!(static SB: std::cell::RefCell<Sandbox> = std::cell::RefCell::new(Sandbox::new()));
        SB.with(|sb| sb.borrow_mut().check(doc.render().as_bytes(), None))?;
    }

    /// Any JSON document as the model of the reference scenario.
    #[test]
    fn loader_survives_arbitrary_json_models(doc in arb_json()) {
        thread_local!(static SB: std::cell::RefCell<Sandbox> = std::cell::RefCell::new(Sandbox::new()));
        let s = &shipped_files().scenarios;
        let (_, sc) = s.iter().find(|(n, _)| n == "dc21143-64b-1flow.json").expect("reference");
        let model = doc.render();
        SB.with(|sb| sb.borrow_mut().check(
            sc.to_string().as_bytes(),
            Some((&model_of(sc), model.as_bytes())),
        ))?;
    }

    /// Any bytes as the scenario: binary, invalid UTF-8, and JSON-like text.
    #[test]
    fn loader_survives_arbitrary_bytes(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..600),
            "[\\[\\]{}\",:0-9a-z_ .eE+\\-\n\\\\]{0,300}".prop_map(String::into_bytes),
        ],
    ) {
        thread_local!(static SB: std::cell::RefCell<Sandbox> = std::cell::RefCell::new(Sandbox::new()));
        SB.with(|sb| sb.borrow_mut().check(&bytes, None))?;
    }
}

proptest! {
    #![proptest_config(config(2500))]

    /// A shipped scenario with 1-4 edits anywhere in it.
    #[test]
    fn loader_survives_mutated_scenarios(which in any::<Index>(), e in edits(4)) {
        thread_local!(static SB: std::cell::RefCell<Sandbox> = std::cell::RefCell::new(Sandbox::new()));
        let s = &shipped_files().scenarios;
        let (_, sc) = &s[which.index(s.len())];
        let text = mutate(J::from_value(sc), &e).render();
        SB.with(|sb| sb.borrow_mut().check(text.as_bytes(), None))?;
    }

    /// A shipped scenario whose model has 1-4 edits anywhere in it.
    #[test]
    fn loader_survives_mutated_models(which in any::<Index>(), e in edits(4)) {
        thread_local!(static SB: std::cell::RefCell<Sandbox> = std::cell::RefCell::new(Sandbox::new()));
        let s = &shipped_files().scenarios;
        let (_, sc) = &s[which.index(s.len())];
        let name = model_of(sc);
        let m = &shipped_files().models.iter().find(|(n, _)| *n == name).expect("model").1;
        let text = mutate(J::from_value(m), &e).render();
        SB.with(|sb| sb.borrow_mut().check(sc.to_string().as_bytes(), Some((&name, text.as_bytes()))))?;
    }

    /// A shipped scenario with edited `overrides` and `variants`: merge patches built from
    /// its model (NICs by name, by index or as an array replacing the list), then edited.
    #[test]
    fn loader_survives_mutated_overrides_and_variants(
        which in any::<Index>(),
        base in 0usize..4,
        e in edits(4),
        variants in prop::option::of(prop::collection::vec((word(), 0usize..4, edits(3)), 0..4)),
    ) {
        thread_local!(static SB: std::cell::RefCell<Sandbox> = std::cell::RefCell::new(Sandbox::new()));
        let s = &shipped_files().scenarios;
        let (_, sc) = &s[which.index(s.len())];
        let name = model_of(sc);
        let m = &shipped_files().models.iter().find(|(n, _)| *n == name).expect("model").1;
        let patch = |b: usize| -> J {
            J::from_value(&match b {
                0 => as_patch(m),
                1 => m.clone(),
                2 => json!({ "nics": { "0": { "rx_ring_slots": 1 } }, "kernel": { "ipintrq_maxlen": 1 } }),
                _ => json!({}),
            })
        };
        let mut doc = J::from_value(sc);
        if let J::Obj(members) = &mut doc {
            members.retain(|(k, _)| k != "overrides" && k != "variants");
            members.push(("overrides".into(), mutate(patch(base), &e)));
            if let Some(vs) = &variants {
                let list = vs
                    .iter()
                    .map(|(n, b, ve)| {
                        J::Obj(vec![
                            ("name".into(), J::Str(n.clone())),
                            ("overrides".into(), mutate(patch(*b), ve)),
                        ])
                    })
                    .collect();
                members.push(("variants".into(), J::Arr(list)));
            }
        }
        SB.with(|sb| sb.borrow_mut().check(doc.render().as_bytes(), None))?;
    }
}
