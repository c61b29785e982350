//! The modern Linux profile (`models/xeon-e5-1650v4-10g-linux.json`: six cores, a
//! 10 Gbit/s six-queue port with RSS, NAPI per queue) against the XDP paper's
//! measurements of Linux forwarding on the same CPU (Hoiland-Jorgensen et al., CoNEXT
//! 2018, raw data bench01_baseline.org `linux_fwd`: 1,739,672 frames/s on one core,
//! then 3,370,584, 4,976,559, 6,488,625, 7,848,970 and 9,285,971 on 2-6 cores; 64-byte
//! frames, single route). The profile's two per-frame costs are derived from the
//! one-core figure (their sum is 575 ns), so the one-core point is a calibration check.
//! The model has no shared caches or locks, so its cores scale linearly; the measured
//! host does not. The 2-6 core points are therefore not a match but a reported
//! discrepancy, pinned here so that a change to it is seen: model / measured is
//! N x 1,739,130 / measured, 1.032 at two cores to 1.124 at six.

use crate::models::rss_balanced_flows;
use irqsim::config::model::ModelConfig;
use irqsim::host::{self, RunSpec, RunStats, queues};
use irqsim::model::traffic::FlowConfig;
use irqsim::sim::rng::RunKey;
use irqsim::sim::time::SimTime;
use serde_json::{Value, json};

const MODEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/models/xeon-e5-1650v4-10g-linux.json"
);

/// 10 Gbit/s of 64-byte frames (84 bytes on the wire) [frames/s].
const LINE_RATE: f64 = 1e10 / (84.0 * 8.0);

fn model(cores: u16) -> (Value, ModelConfig) {
    let mut m: Value =
        serde_json::from_str(&std::fs::read_to_string(MODEL).expect("model")).expect("json");
    m["cpu"]["cores"] = json!(cores);
    // ixgbe sets up one queue pair per online CPU, on both ports.
    m["nics"][0]["queues"] = json!(cores);
    m["nics"][1]["queues"] = json!(cores);
    let cfg: ModelConfig = serde_json::from_value(m.clone()).expect("model");
    (m, cfg)
}

fn run(cfg: &ModelConfig, flows: Vec<FlowConfig>, total_pps: f64, secs: f64) -> RunStats {
    let n = flows.len() as f64;
    let spec = RunSpec {
        rates_pps: vec![total_pps / n; flows.len()],
        flows,
        duration: SimTime::from_secs_f64(secs),
        drain: SimTime::from_secs_f64(0.005),
        key: RunKey::single(3),
        timeline: None,
        latency_from: Default::default(),
    };
    host::simulate(cfg, &spec).expect("run")
}

/// The steady forwarding rate: a 0.03 s run minus a 0.01 s run, over 0.02 s.
fn steady(cfg: &ModelConfig, flows: &[FlowConfig], total_pps: f64) -> f64 {
    let long = run(cfg, flows.to_vec(), total_pps, 0.03);
    let short = run(cfg, flows.to_vec(), total_pps, 0.01);
    (long.total.received - short.total.received) as f64 / 0.02
}

#[test]
fn one_core_forwards_the_papers_rate_and_more_cores_scale_above_the_measured_ones() {
    // The paper's Linux forwarding rates on 1-6 cores, single route [frames/s].
    let measured_all = crate::xdp_paper::single_route();
    let mut ratios = Vec::new();
    for cores in 1..=6u16 {
        let (_, cfg) = model(cores);
        let flows = rss_balanced_flows(&cfg, 4, "192.168.1.1");
        let got = steady(&cfg, &flows, LINE_RATE);
        let measured = measured_all[cores as usize - 1];
        ratios.push(got / measured);
        eprintln!(
            "{cores} cores: model {got:.0}, measured {measured:.0}, ratio {:.3}",
            got / measured
        );
        // Each core saturated: 1 / 575 ns = 1,739,130 frames/s per core.
        assert!(
            (got / (cores as f64 * 1e9 / 575.0) - 1.0).abs() < 0.005,
            "{cores} cores: {got}"
        );
    }
    // Calibration check: the one-core point (0.5 %).
    assert!((ratios[0] - 1.0).abs() < 0.005, "{}", ratios[0]);
    // The discrepancy of linear scaling against the measured rates, as documented in
    // docs/validation.md (0.5 %): what the model leaves out (contention between cores)
    // costs the real host this much.
    for (i, r) in ratios.iter().enumerate().skip(1) {
        let cores = (i + 1) as f64;
        let linear = cores * 1e9 / 575.0 / measured_all[i];
        assert!((r / linear - 1.0).abs() < 0.005, "{cores} cores: ratio {r}");
        assert!(
            *r > 1.0,
            "{cores} cores: the measured host scales worse than linearly"
        );
    }
}

#[test]
fn rss_spreads_random_flows_up_to_the_imbalance_of_their_hashes() {
    // The 24 flows of scenarios/modern-10g-24flows.json at 620,000 frames/s each (line
    // rate in all) on six cores: each queue forwards what it gets, up to a core's
    // 1 / 575 ns, so the total is the sum over queues of min(flows x 620,000,
    // 1,739,130) -- below six cores' worth when a queue gets few flows (0.5 %).
    let sc: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/modern-10g-24flows.json"
        ))
        .expect("scenario"),
    )
    .expect("json");
    let flows: Vec<FlowConfig> =
        serde_json::from_value(sc["workload"]["flows"].clone()).expect("flows");
    let (_, cfg) = model(6);
    let mut per_queue = [0u32; 6];
    for f in &flows {
        per_queue[queues::rss_queue(&cfg.nics[0], f.tuple.as_ref().expect("tuple")) as usize] += 1;
    }
    let per_flow = 620_000.0;
    let expected: f64 = per_queue
        .iter()
        .map(|&n| (n as f64 * per_flow).min(1e9 / 575.0))
        .sum();
    let got = steady(&cfg, &flows, per_flow * flows.len() as f64);
    eprintln!("flows per queue {per_queue:?}: expected {expected:.0}, got {got:.0}");
    assert!(
        per_queue
            .iter()
            .any(|&n| (n as f64) * per_flow < 1e9 / 575.0)
    );
    assert!((got / expected - 1.0).abs() < 0.005, "{got} vs {expected}");
}
