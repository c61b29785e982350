//! em(4) of FreeBSD 6.2 under netperf TCP_RR (seed 002, `../shared/reference/seeds/002_*`):
//! scenarios/em-rr-freebsd62.json against the thread's transaction rates, and the peer's
//! interrupt coalescing that sets them.

use irqsim::config::model::ModelConfig;
use irqsim::host::{RunSpec, simulate};
use irqsim::model::traffic::FlowConfig;
use irqsim::sim::rng::RunKey;
use irqsim::sim::time::SimTime;
use irqsim::validate::seeds::{self, EM_RR_TPS};
use serde_json::json;

/// Transactions/s of each variant of the scenario: the scoreboard's run of the table
/// (`crate::scoreboard`, simulated once for the test binary).
fn scenario_rates() -> (f64, f64) {
    let r = &crate::scoreboard::table_run("em-rr-freebsd62").results;
    let tps = |v: &str| seeds::variant(r, v).figures.total.forwarded_pps;
    (tps("stock"), tps("fast-intr"))
}

#[test]
fn fast_interrupt_rate_is_set_by_the_peers_coalescing_ticks() {
    // Seed: EM_FAST_INTR 6,165.46 and 6,163.75 transactions/s (two runs, 62 s and 60 s,
    // "+/-2.5% @ 99% conf."). The model: bge's send-coalescing tick (150 us, if_bge.c)
    // shows the peer the response 150 us after its request left, then the peer's 25 us
    // turnaround (an estimate) and the request's 0.57 us on the wire: about 5,680/s.
    // Tolerance 10 %: the turnaround is an estimate, not fitted; the model sits 8 %
    // below the seed.
    let (stock, fast) = scenario_rates();
    let seed_fast = EM_RR_TPS[1].1;
    assert_eq!(EM_RR_TPS[1].0, "fast-intr");
    assert!(
        (fast - seed_fast).abs() <= 0.10 * seed_fast,
        "fast-intr {fast:.0}/s, seed 6,165 +- 10 %"
    );
    // The model's own arithmetic (not the seed): one tick + turnaround + wire.
    assert!(
        (fast - 1e6 / 175.6).abs() <= 0.02 * fast,
        "fast-intr {fast:.0}/s, 1 / (150 + 25 + 0.6 us) = 5,695 +- 2 %"
    );
    // Not reproduced: the stock driver measured ~3,000/s (2,999.88, 2,999.61). In the
    // model its handler's costs are absorbed (ITR holds the em interrupts at 8,000/s
    // and the responses stay inside bge's 150 us window), so it runs within 5 % of
    // the fast handler (the model's own finding, asserted); see docs/validation.md "em(4)
    // in FreeBSD 6.2" for what the stock figure still lacks. The seed's 3,000/s is the
    // scoreboard's known miss (outside the seed's 10 %, the model far above it).
    assert!(
        (stock - fast).abs() <= 0.05 * fast,
        "stock {stock:.0}/s vs fast-intr {fast:.0}/s"
    );
    let miss = crate::scoreboard::known_miss("em-rr-freebsd62", "stock", "transaction rate", 10.0);
    assert!(miss.error > 10.0, "{miss:?}");
}

fn rr(server_ns: f64) -> f64 {
    let model: ModelConfig = serde_json::from_value(json!({
        "cpu": { "clock_mhz": 2000 },
        "kernel": { "netisr_per_packet": 3000 },
        "nics": [ {
            "name": "em0", "line_rate_bps": 1e9,
            "driver": { "isr_entry": 2000, "rx_per_packet": 1000, "isr_exit": 500 }
        } ],
        "user": { "kind": "screend", "per_packet": server_ns, "queue_len": 64 }
    }))
    .unwrap();
    let flow: FlowConfig = serde_json::from_value(json!({
        "name": "rr", "from": "em0", "to": "em0", "frame_bytes": 64,
        "arrivals": "closed-loop", "turnaround_ns": 100000,
        "peer_coalescing": { "rx_ticks_ns": 150000, "tx_ticks_ns": 150000 }
    }))
    .unwrap();
    let spec = RunSpec {
        flows: vec![flow],
        rates_pps: vec![1.0],
        duration: SimTime::from_secs_f64(1.0),
        drain: SimTime::from_secs_f64(0.01),
        key: RunKey::single(1),
        timeline: None,
        latency_from: Default::default(),
    };
    simulate(&model, &spec).unwrap().total.received as f64
}

#[test]
fn a_response_later_than_the_peers_send_tick_costs_a_second_tick() {
    // The host of tests/it/request_response.rs: from the request's last bit to the
    // response's last bit, handler 3.5 + netisr 3 + server + response wire 0.672 us.
    // Server 10 us: the response is back 17.172 us after the request left, inside the
    // peer's 150 us send tick, which shows it; a transaction is the request's wire time
    // 0.672 + 150 + the 100 us turnaround = 250.672 us: 3,989.3/s.
    let fast = rr(10_000.0);
    assert!((fast - 1e6 / 250.672).abs() <= 1.0, "{fast}");
    // Server 160 us: the response comes 167.172 us after the request, too late for
    // that tick; it starts the receive tick: 0.672 + 167.172 + 150 + 100 = 417.844 us,
    // 2,393.2/s. A host that answers a little slower than 150 us loses a whole tick:
    // the cliff between the seed's two rates.
    let slow = rr(160_000.0);
    assert!((slow - 1e6 / 417.844).abs() <= 1.0, "{slow}");
}
