//! Model files, flows and run helpers shared by the integration tests.

use irqsim::config::model::ModelConfig;
use irqsim::host::{self, RunSpec, RunStats, queues};
use irqsim::model::traffic::{FlowConfig, TupleConfig};
use irqsim::sim::rng::RunKey;
use irqsim::sim::time::SimTime;
use serde_json::{Value, json};

/// The four-port dc21143 router profile's path.
pub const DC_MODEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/models/p3-448-dc21143-freebsd4.json"
);

/// The four-port dc21143 router profile as JSON, to be modified by a test.
pub fn dc_model() -> Value {
    serde_json::from_str(&std::fs::read_to_string(DC_MODEL).expect("model")).expect("json")
}

/// A simple model: NICs `names`, each on a line of its own, with 5 us handler entry,
/// 2 us per frame, 1 us exit; 5 us of forwarding in the netisr; ring 64, ipintrq 50,
/// if_snd 50, no bus, 1,000 MHz.
pub fn simple_model(names: &[&str]) -> Value {
    let nics: Vec<Value> = names
        .iter()
        .map(|n| {
            json!({
                "name": n,
                "driver": { "isr_entry": 5000, "rx_per_packet": 2000, "isr_exit": 1000 }
            })
        })
        .collect();
    json!({
        "cpu": { "clock_mhz": 1000 },
        "kernel": { "ipintrq_maxlen": 50, "if_snd_maxlen": 50, "netisr_per_packet": 5000 },
        "nics": nics
    })
}

/// A flow of 64-byte frames from NIC `from` to NIC `to`.
pub fn flow64(from: &str, to: &str) -> FlowConfig {
    serde_json::from_value(json!({ "from": from, "to": to, "frame_bytes": 64 })).expect("flow")
}

/// A run of `flows`, each at `rate_pps`, for `secs` (10 ms of drain), seeded with `seed`.
pub fn spec_seeded(flows: Vec<FlowConfig>, rate_pps: f64, secs: f64, seed: u64) -> RunSpec {
    RunSpec {
        rates_pps: vec![rate_pps; flows.len()],
        flows,
        duration: SimTime::from_secs_f64(secs),
        drain: SimTime::from_secs_f64(0.01),
        key: RunKey::single(seed),
        timeline: None,
        latency_from: Default::default(),
    }
}

/// Simulate `spec` on the model given as JSON.
pub fn run_json(model: &Value, spec: &RunSpec) -> RunStats {
    let cfg: ModelConfig = serde_json::from_value(model.clone()).expect("model");
    host::simulate(&cfg, spec).expect("run")
}

/// `per_queue` 64-byte UDP flows from eth0 to eth1, to `dst_addr`, for each receive
/// queue of the model's first NIC: source addresses tried in order (10.0.0.1, then
/// steps of 7,919), each kept if RSS sends it to a queue that still needs one (a
/// tester's balanced flow set; the XDP paper steered one set per ring with ethtool -N
/// rules, with the same effect).
pub fn rss_balanced_flows(cfg: &ModelConfig, per_queue: usize, dst_addr: &str) -> Vec<FlowConfig> {
    let nic = &cfg.nics[0];
    let mut need = vec![per_queue; nic.queues as usize];
    let mut flows = Vec::new();
    for i in 0u32.. {
        if need.iter().all(|&n| n == 0) {
            break;
        }
        let src = std::net::Ipv4Addr::from(0x0a00_0001 + i * 7919);
        let f: FlowConfig = serde_json::from_value(json!({
            "from": "eth0", "to": "eth1", "frame_bytes": 64,
            "tuple": { "src_addr": src.to_string(), "dst_addr": dst_addr, "src_port": 1024 }
        }))
        .expect("flow");
        let tuple: TupleConfig = f.tuple.clone().expect("tuple");
        let q = queues::rss_queue(nic, &tuple) as usize;
        if need[q] > 0 {
            need[q] -= 1;
            flows.push(f);
        }
    }
    flows
}
