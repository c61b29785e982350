//! The NIC's own timing on the modern models (issue 52, item 2): mlx5's CQ period modes
//! and its adaptive receive moderation (DIM) as shipped, Intel's ITR as an interrupt-rate
//! limit, and the receive and transmit pipelines between the wire and memory. Each
//! expected value is derived in the test's comment from the model's parameters (their
//! sources are in the models' notes and docs/model.md, "The NIC's own timing").
//!
//! A frame alone (100 frames/s, 10 ms apart) meets no other frame, so two runs of the
//! same seed that differ in one timing parameter differ in each frame's latency by
//! exactly what that parameter adds to its path; the tests compare such pairs.

use crate::models::rss_balanced_flows;
use irqsim::config::model::ModelConfig;
use irqsim::host::{self, RunSpec, RunStats};
use irqsim::sim::rng::RunKey;
use irqsim::sim::time::SimTime;
use serde_json::{Value, json};

const MLX5: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/models/xeon-e5-1650v4-mlx5-linux.json"
);
const IXGBE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/models/xeon-e5-1650v4-10g-linux.json"
);

/// The model of `path` on one core with one queue per port, patched by `patch` (applied
/// to both ports).
fn model(path: &str, patch: impl Fn(&mut Value)) -> ModelConfig {
    let mut m: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("model")).expect("json");
    m["cpu"]["cores"] = json!(1);
    for n in m["nics"].as_array_mut().expect("nics") {
        n["queues"] = json!(1);
        patch(n);
    }
    serde_json::from_value(m).expect("model")
}

/// One flow eth0 -> eth1 of 64-byte frames at `pps` for `secs`.
fn run(cfg: &ModelConfig, pps: f64, secs: f64) -> RunStats {
    let flows = rss_balanced_flows(cfg, 1, "10.70.2.2");
    let spec = RunSpec {
        rates_pps: vec![pps; flows.len()],
        flows,
        duration: SimTime::from_secs_f64(secs),
        drain: SimTime::from_secs_f64(0.001),
        key: RunKey::single(52),
        timeline: None,
        latency_from: Default::default(),
    };
    host::simulate(cfg, &spec).expect("run")
}

/// Mean latency of lone frames (100 frames/s for 0.2 s: 20 frames) [ns], and their
/// count.
fn lone_latency_ns(cfg: &ModelConfig) -> (f64, u64) {
    let r = run(cfg, 100.0, 0.2);
    (r.total.latency.summary().avg * 1e3, r.total.received)
}

/// The receive pipeline (227 ns) and the transmit pipeline (1,319 ns) of the shipped
/// modern models (`nics[].rx_latency_ns`, `tx_latency_ns`): a lone forwarded frame's
/// latency grows by exactly their sum, 227 + 1,319 = 1,546 ns (within 1 ns: the
/// histogram is not used, the mean is exact), over the same model with both at 0. At
/// saturation (2.5 M frames/s offered to one core, which forwards 1.74 M) the rate is
/// unchanged within 0.2 % (the sampling error of 0.05 s of an exponential hold per
/// frame): the pipelines are latency, not occupancy, since frames are in flight in them
/// together.
#[test]
fn the_pipelines_add_to_a_lone_frames_latency_and_not_to_the_saturated_rate() {
    let shipped = model(MLX5, |_| {});
    assert_eq!(
        (shipped.nics[0].rx_latency_ns, shipped.nics[1].tx_latency_ns),
        (227.0, 1_319.0)
    );
    let none = model(MLX5, |n| {
        n["rx_latency_ns"] = json!(0);
        n["tx_latency_ns"] = json!(0);
    });
    let (with, k1) = lone_latency_ns(&shipped);
    let (without, k2) = lone_latency_ns(&none);
    eprintln!("lone frame: {with:.1} ns with the pipelines, {without:.1} ns without");
    assert_eq!((k1, k2), (20, 20));
    assert!((with - without - 1_546.0).abs() < 1.0, "{}", with - without);
    let sat = |cfg: &ModelConfig| run(cfg, 2_500_000.0, 0.05).total.received as f64 / 0.05;
    let (a, b) = (sat(&shipped), sat(&none));
    eprintln!("saturated: {a:.0} frames/s with the pipelines, {b:.0} without");
    assert!((a / b - 1.0).abs() < 0.002, "{a} vs {b}");
}

/// mlx5 as shipped (Linux 4.18 with the `cq_moderation` capability): adaptive receive
/// moderation (DIM) in CQE mode, whose first profile is (8 us, 128 CQEs)
/// (`NET_DIM_DEF_PROFILE_CQE` 1 of `NET_DIM_RX_CQE_PROFILES`): a lone frame's event
/// comes 8 us after it. Without DIM the static CQE-mode period of 3 us
/// (`MLX5E_PARAMS_DEFAULT_RX_CQ_MODERATION_USEC_FROM_CQE`) holds it 3 us, 5 us less;
/// the same 3 us period in EQE mode, restarted at each event, has run out long before a
/// frame 10 ms after the last one, which raises its event at once: 3 us less again.
#[test]
fn mlx5s_default_dim_and_its_cq_period_modes_as_a_lone_frame_sees_them() {
    let shipped = model(MLX5, |_| {});
    assert!(shipped.nics[0].dim.is_some(), "DIM on as shipped");
    let cqe = model(MLX5, |n| n["dim"] = Value::Null);
    let eqe = model(MLX5, |n| {
        n["dim"] = Value::Null;
        n["moderation"]["cq_period_mode"] = json!("eqe");
    });
    let (d, _) = lone_latency_ns(&shipped);
    let (c, _) = lone_latency_ns(&cqe);
    let (e, _) = lone_latency_ns(&eqe);
    eprintln!("lone frame: DIM {d:.1} ns, static CQE 3 us {c:.1} ns, static EQE 3 us {e:.1} ns");
    assert!((d - c - 5_000.0).abs() < 1.0, "{}", d - c);
    assert!((c - e - 3_000.0).abs() < 1.0, "{}", c - e);
}

/// ixgbe's ITR (EITR, IXGBE_20K_ITR: 50 us) is a limit on the interrupt rate, not a
/// delay: a lone frame's latency is the same as with no moderation at all (its
/// interrupt comes at once, 10 ms after the last), and at 200,000 frames/s (5 us apart,
/// each poll done long before the next frame, so without a limit every frame would
/// interrupt: 200,000/s) the queue takes at most 1 / 50 us = 20,000 interrupts/s: in
/// 0.1 s of load at most 1 + 0.1 s / 50 us = 2,001 interrupts, one more in the 1 ms
/// drain at most, and not fewer than 1,900 (a frame is always waiting when the
/// interval runs out, and the poll that follows an interrupt, 1.2 us, is over by then).
#[test]
fn ixgbes_itr_limits_the_interrupt_rate_and_delays_no_lone_frame() {
    let itr = model(IXGBE, |_| {});
    assert_eq!(
        itr.nics[0].moderation.as_ref().map(|m| m.min_interval_ns),
        Some(50_000.0)
    );
    let free = model(IXGBE, |n| n["moderation"] = Value::Null);
    let (a, _) = lone_latency_ns(&itr);
    let (b, _) = lone_latency_ns(&free);
    eprintln!("lone frame: {a:.1} ns with ITR 50 us, {b:.1} ns without");
    assert!((a - b).abs() < 1.0, "{}", a - b);
    let r = run(&itr, 200_000.0, 0.1);
    let raised = r.counters["eth0.moderation.raised"];
    let free_irqs = run(&free, 200_000.0, 0.1).counters["eth0.interrupts"];
    eprintln!("200,000 frames/s for 0.1 s: {raised} interrupts with ITR, {free_irqs} without");
    assert!((1_900.0..=2_002.0).contains(&raised), "{raised}");
    assert!(free_irqs > 15_000.0, "{free_irqs}");
}
