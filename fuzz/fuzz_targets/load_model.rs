//! The model loader on arbitrary text: the reference scenario (64-byte frames, one flow,
//! dc0 -> dc1, a measured table) over a model whose text is the input, through an
//! in-memory `FileSource` (no disk access, so it runs fast). Every input must give an
//! experiment or an error; a panic is a finding.

#![no_main]

use irqsim::config::scenario::{self, FileSource};
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;
use std::path::Path;

const SCENARIO: &str = r#"{
  "model": "../models/m.json",
  "overrides": { "kernel": { "ipintrq_maxlen": 100 }, "nics": { "dc0": { "rx_ring_slots": 128 } } },
  "variants": [ { "name": "a" }, { "name": "b", "overrides": { "nics": { "1": { "rx_ring_slots": 4 } } } } ],
  "workload": { "flows": [ { "name": "100-101", "from": "dc0", "to": "dc1", "frame_bytes": 64 } ] },
  "load": { "unit": "percent", "from": 10, "to": 36, "step": 2 },
  "duration_s": 0.01,
  "measured": "measured/test_25Mx64x1.csv"
}"#;

const MEASURED: &str = include_str!("../../scenarios/measured/test_25Mx64x1.csv");

thread_local! {
    static MODEL: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The scenario, the measured table, and the model being fuzzed.
struct Memory;

impl FileSource for Memory {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        match path.to_str() {
            Some("scenarios/case.json") => Ok(SCENARIO.to_string()),
            Some("models/m.json") => Ok(MODEL.with(|m| m.borrow().clone())),
            Some("scenarios/measured/test_25Mx64x1.csv") => Ok(MEASURED.to_string()),
            _ => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such file in memory",
            )),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    MODEL.with(|m| *m.borrow_mut() = text.to_string());
    if let Err(e) = scenario::load(Path::new("scenarios/case.json"), &Memory) {
        assert!(!e.to_string().is_empty());
    }
});
