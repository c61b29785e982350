//! The reference loop's model ([`super::reference`]) as irqsim input, and the comparison of the
//! two implementations' results.
//!
//! The model and the scenario are written as the JSON a user would write (one NIC `in`,
//! one NIC `out`, each on an interrupt line of its own since no `irq_lines` are given;
//! no `bus`; no clock interrupt (`kernel.clock.hardclock` left at 0); policy
//! `interrupt`; NIC latencies and the transmit poll 0; every number from the same
//! [`Params`]) and loaded through `irqsim::config::scenario::load` from memory, so the load
//! points become rates exactly as for a scenario file. The load points, the sending
//! time and the drain are those of the project's 64-byte sweep,
//! `scenarios/dc21143-64b-1flow.json` (10-36 % by 2 %, 10 s per point, 1 s of drain).

use super::reference::{Outcome, Params};
use irqsim::config::scenario::{self, Experiment, FileSource};
use irqsim::results::PointResult;
use serde_json::{Value, json};
use std::path::Path;

/// The project's 64-byte sweep, whose load points, sending time and drain are used.
const SWEEP_64B: &str = include_str!("../../scenarios/dc21143-64b-1flow.json");

/// The sweep's `load`, `duration_s` and `drain_s`.
fn sweep_64b() -> (Value, f64, f64) {
    let v: Value = serde_json::from_str(SWEEP_64B).expect("the 64-byte scenario parses");
    let secs = |k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("`{k}` in the scenario"))
    };
    (v["load"].clone(), secs("duration_s"), secs("drain_s"))
}

/// A scenario and its model held in memory.
struct InMemory {
    scenario: String,
    model: String,
}

impl FileSource for InMemory {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        match path.to_str() {
            Some("simple.json") => Ok(self.scenario.clone()),
            Some("simple-model.json") => Ok(self.model.clone()),
            _ => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} is not held in memory", path.display()),
            )),
        }
    }
}

/// The model of `p` as an irqsim model file.
pub fn model_json(p: &Params) -> Value {
    let ns = |ps: u64| ps as f64 / 1e3;
    let nic = |name: &str| {
        json!({
            "name": name,
            "line_rate_bps": p.line_rate_bps as f64,
            "rx_ring_slots": p.rx_ring_slots,
            "tx_ring_slots": p.tx_ring_slots,
            "rx_latency_ns": 0,
            "tx_latency_ns": 0,
            "tx_poll_interval_ns": 0,
            "policy": { "kind": "interrupt" },
        })
    };
    let mut input = nic("in");
    input["driver"] = json!({
        "isr_entry": { "ns": ns(p.isr_entry_ps) },
        "rx_per_packet": { "ns": ns(p.isr_per_frame_ps) },
        "isr_exit": { "ns": ns(p.isr_exit_ps) },
    });
    json!({
        "description": "the reference baseline's simple model (benches/reference)",
        "cpu": { "clock_mhz": 1000 },
        "kernel": {
            "ipintrq_maxlen": p.ipintrq_maxlen,
            "if_snd_maxlen": p.if_snd_maxlen,
            "netisr_per_packet": { "ns": ns(p.netisr_per_packet_ps) },
        },
        "nics": [input, nic("out")],
    })
}

/// The 64-byte sweep on the model of `p`: one constant-rate flow `in` -> `out` of
/// `p.frame_bytes` frames, the sweep's load points, `duration_s` per point (the sweep's
/// own 10 s when `None`) and the sweep's drain.
pub fn experiment(p: &Params, duration_s: Option<f64>) -> Experiment {
    let (load, sweep_s, drain_s) = sweep_64b();
    let scenario = json!({
        "description": "the reference baseline's simple model on the 64-byte sweep",
        "model": "simple-model.json",
        "workload": { "flows": [{
            "name": "in-out", "from": "in", "to": "out",
            "frame_bytes": p.frame_bytes, "arrivals": "constant",
        }] },
        "load": load,
        "duration_s": duration_s.unwrap_or(sweep_s),
        "drain_s": drain_s,
        "seed": 1,
        "replications": 1,
    });
    let files = InMemory {
        scenario: scenario.to_string(),
        model: model_json(p).to_string(),
    };
    scenario::load(Path::new("simple.json"), &files).unwrap_or_else(|e| panic!("{e}"))
}

/// Sending time and drain of `exp`'s points [ps], rounded from seconds as irqsim's
/// runner does (`SimTime::from_secs_f64`: via nanoseconds, to the nearest ps).
pub fn times_ps(exp: &Experiment) -> (u64, u64) {
    let ps = |s: f64| (s * 1e9 * 1e3 + 0.5) as u64;
    (ps(exp.duration_s), ps(exp.drain_s))
}

/// Every difference between irqsim's figures for `point` and the reference loop's outcome
/// `n` at the same load on the model `p`: the offered rate, counts, drops by site, the
/// latency's min, max, mean and standard deviation, handler invocations and netisr
/// preemptions, all compared exactly (the means and deviations are the same
/// floating-point operations on the same latencies in the same order). Empty when they
/// agree.
///
/// The flow's own row is compared, not the `Total` row: with one flow they hold the
/// same counts, but the total's mean is the flow's merged into an empty distribution
/// (`mean x n / n`), which can move it by one unit in the last place.
pub fn differences(point: &PointResult, p: &Params, n: &Outcome) -> Vec<String> {
    assert_eq!(point.figures.flows.len(), 1, "one flow");
    let t = &point.figures.flows[0];
    let l = &t.latency_us;
    let us = |ps: u64| ps as f64 / 1e6;
    let (min_us, max_us) = if n.latency.count == 0 {
        (0.0, 0.0)
    } else {
        (us(n.latency.min_ps), us(n.latency.max_ps))
    };
    let counter = |name: &str| {
        point
            .figures
            .counters
            .get(name)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let pairs: [(&str, f64, f64); 15] = [
        (
            "offered [frames/s]",
            point.offered_pps,
            p.rate_fps(point.load_pct),
        ),
        ("sent", t.sent, n.sent as f64),
        ("received", t.received, n.received as f64),
        ("drained", t.drained, n.drained as f64),
        ("drops.rx_ring", t.drops.rx_ring, n.drops_rx_ring as f64),
        ("drops.ipintrq", t.drops.ipintrq, n.drops_ipintrq as f64),
        ("drops.if_snd", t.drops.if_snd, n.drops_if_snd as f64),
        (
            "other drops",
            t.drops.user_queue + t.drops.rx_fifo + t.drops.tx_underrun + t.drops.reset,
            0.0,
        ),
        (
            "out_of_sequence",
            t.out_of_sequence,
            n.out_of_sequence as f64,
        ),
        ("latency min [us]", l.min, min_us),
        ("latency max [us]", l.max, max_us),
        ("latency mean [us]", l.avg, n.latency.mean_us()),
        ("latency stddev [us]", l.stddev, n.latency.stddev_us()),
        (
            "handler invocations",
            counter("in.interrupts"),
            n.interrupts as f64,
        ),
        (
            "netisr preemptions",
            counter("cpu.preemptions"),
            n.preemptions as f64,
        ),
    ];
    let mut diffs: Vec<String> = pairs
        .iter()
        .filter(|(_, a, b)| a != b)
        .map(|(what, a, b)| format!("{} %: {what}: irqsim {a}, reference {b}", point.load_pct))
        .collect();
    // The Welford mean both compute must be the exact mean up to rounding.
    let exact = n.latency.exact_mean_us();
    if (n.latency.mean_us() - exact).abs() > 1e-9 * exact {
        diffs.push(format!(
            "{} %: the running mean {} us is not the exact mean {exact} us",
            point.load_pct,
            n.latency.mean_us()
        ));
    }
    diffs
}
