//! Request/response (netperf TCP_RR-like) closed loops: the transaction rate is the
//! number of outstanding transactions over the time one takes (Little's law).

use irqsim::config::model::ModelConfig;
use irqsim::host::{RunSpec, simulate};
use irqsim::model::traffic::FlowConfig;
use irqsim::sim::rng::RunKey;
use irqsim::sim::time::SimTime;
use serde_json::json;

fn model() -> ModelConfig {
    serde_json::from_value(json!({
        "cpu": { "clock_mhz": 2000 },
        "kernel": { "netisr_per_packet": 3000 },
        "nics": [ {
            "name": "em0", "line_rate_bps": 1e9,
            "driver": { "isr_entry": 2000, "rx_per_packet": 1000, "isr_exit": 500 }
        } ],
        "user": { "kind": "screend", "per_packet": 10000, "queue_len": 64 }
    }))
    .unwrap()
}

fn run(outstanding: f64) -> irqsim::host::RunStats {
    let flow: FlowConfig = serde_json::from_value(json!({
        "name": "rr", "from": "em0", "to": "em0", "frame_bytes": 64,
        "arrivals": "closed-loop", "turnaround_ns": 100000
    }))
    .unwrap();
    let spec = RunSpec {
        flows: vec![flow],
        rates_pps: vec![outstanding],
        duration: SimTime::from_secs_f64(1.0),
        drain: SimTime::from_secs_f64(0.01),
        key: RunKey::single(1),
        timeline: None,
        latency_from: Default::default(),
    };
    simulate(&model(), &spec).unwrap()
}

#[test]
fn one_outstanding_transaction_is_a_pure_round_trip() {
    // The host's part of a transaction, from the request's first bit at the peer to the
    // response's last bit back at it: request wire time 0.672 us (84 bytes at 1 Gbit/s),
    // handler entry 2 + one frame 1 + exit 0.5, netisr 3, server 10, response wire 0.672
    // = 17.844 us. The peer then waits its 100 us turnaround: one transaction every
    // 117.844 us, 8,485.8 per second.
    let r = run(1.0);
    let rtt = r.total.rtt.as_ref().expect("rtt").summary();
    assert!((rtt.avg - 17.844).abs() < 0.01, "{}", rtt.avg);
    let tps = r.total.received as f64;
    assert!((tps - 1.0 / 117.844e-6).abs() <= 1.0, "{tps}");
}

#[test]
fn more_outstanding_transactions_queue_at_the_server() {
    // With N transactions in the loop the CPU saturates: each transaction costs the
    // handler (3.5 us alone, down to 1 us per frame when frames share an invocation),
    // the netisr (3 us) and the server (10 us), so the rate lies between
    // 1 / 16.5 us = 60,606/s and 1 / 14 us = 71,429/s, and the round trip grows so that
    // Little's law holds: N = rate x (rtt + turnaround).
    let r = run(32.0);
    let tps = r.total.received as f64;
    let rtt = r.total.rtt.as_ref().unwrap().summary().avg;
    assert!((60_000.0..=71_429.0).contains(&tps), "{tps}");
    let little = tps * (rtt + 100.0) * 1e-6;
    assert!((little - 32.0).abs() < 0.5, "Little's law gives {little}");
}
