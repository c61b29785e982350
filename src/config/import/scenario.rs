//! `irqsim import-host --scenario FILE`: a starting scenario for the imported host, one
//! that runs as written.
//!
//! What it holds (each choice and why):
//!
//! - **The model**: the file import-host wrote (`--out`), by a path relative to the
//!   scenario when both are in one directory, else absolute.
//! - **A flow per receive queue** of every port: 64-byte frames (RFC 2544's smallest,
//!   the most frames per second a line carries), UDP from an address picked so that the
//!   model's receive-side scaling (the Toeplitz hash of the addresses under Microsoft's
//!   key through Linux's round-robin indirection table, [`crate::host::queues::rss_queue`])
//!   sends flow k to queue k: every queue, and so every vector and core the import
//!   bound, gets one flow. A flow arriving on port i leaves by port i + 1 (the next port,
//!   the last one by the first): a router's forwarding. On a host with **one port** it
//!   leaves by the same one (a one-armed router): that is what a model can run with one
//!   NIC, and `irqsim run` says so with a warning ([`crate::config::hairpin`]) that
//!   points at what to write to have the frames consumed on receive instead.
//! - **A load sweep to the line rate**: `load.unit` `percent` is per flow, so the points
//!   are 10, 20, ..., 100 % of the busiest port's line rate divided by its flows: at the
//!   last point that port receives its line rate (a port with fewer queues, less).
//! - **Costs**: the imported model's when it has them (`--profile`). Without them a run
//!   is refused, so the scenario's one variant gives starting values: the driver costs
//!   (`rx_per_packet`, `isr_entry`, `isr_exit`) and `kernel.netisr_per_packet` of
//!   [`STARTING_COSTS_MODEL`] (mlx5 on a Xeon E5-1650 v4, measured by the XDP paper's
//!   authors), each NIC's own, said in the variant's description: not this host's,
//!   values to start `irqsim fit` from.
//! - 5 ms of load and 2 ms of drain per point (a sweep of seconds at 10 Gbit/s; lengthen
//!   it for rare events), seed 1, one replication.

use crate::config::model::ModelConfig;
use serde_json::{Map, Value, json};
use std::net::Ipv4Addr;

/// The shipped model whose costs start a scenario for a model that has none.
pub const STARTING_COSTS_MODEL: &str = "models/xeon-e5-1650v4-mlx5-linux.json";

const STARTING_COSTS_TEXT: &str = include_str!("../../../models/xeon-e5-1650v4-mlx5-linux.json");

/// How a scenario written by import-host starts its `description` (an earlier one may
/// be written over; any other file is refused).
pub const DESCRIPTION_PREFIX: &str = "Starting scenario for the host imported from ";

/// The frame size of the flows \[bytes\].
pub const FRAME_BYTES: u32 = 64;

/// The receive queue the model's RSS picks for UDP from `src` to `dst` on `nic`: the
/// Toeplitz hash under Microsoft's key through Linux's round-robin indirection table, as
/// the host routes a flow (`crate::host::queues::rss_queue`, which tests/it/import_vm.rs
/// checks this against; the config layer does not import the host).
fn rss_queue(nic: &crate::model::nic::NicConfig, src: Ipv4Addr, dst: Ipv4Addr) -> u16 {
    use crate::model::nic::rss::{DEFAULT_ENTRIES, DEFAULT_KEY, FlowTuple, Indirection, Protocol};
    let entries = nic.rss.indirection_entries.unwrap_or(DEFAULT_ENTRIES);
    let t = FlowTuple {
        src_addr: src,
        dst_addr: dst,
        src_port: 1024,
        dst_port: 9,
        protocol: Protocol::Udp,
    };
    Indirection::round_robin(entries, nic.queues)
        .queue(t.rss_hash(&DEFAULT_KEY, nic.rss.udp_4tuple))
}

/// The tuple of flow `k` of port `port` (its index among the model's NICs) landing on
/// receive queue `k`: UDP from 10.`port`.x.y to 10.255.0.1 port 9, the first source
/// address from 10.`port`.0.1 up that the model's RSS sends to queue `k`.
pub fn tuple_for(nic: &crate::model::nic::NicConfig, port: usize, k: u16) -> Value {
    let base = 0x0A00_0000u32 | ((port as u32 & 0xff) << 16);
    let dst = std::net::Ipv4Addr::new(10, 255, 0, 1);
    let pick = (1..=0xffffu32)
        .map(|j| std::net::Ipv4Addr::from(base + j))
        .find(|src| nic.queues <= 1 || rss_queue(nic, *src, dst) == k)
        .unwrap_or(std::net::Ipv4Addr::from(base + 1));
    json!({
        "src_addr": pick.to_string(),
        "dst_addr": dst.to_string(),
        "src_port": 1024,
        "dst_port": 9,
        "protocol": "udp"
    })
}

/// The starting scenario (JSON) of the imported `model`, whose file the scenario names
/// as `model_ref`; `dir` is the dump directory (for the description).
pub fn starting_scenario(model: &ModelConfig, model_ref: &str, dir: &str) -> Value {
    let n = model.nics.len();
    let mut flows = Vec::new();
    for (i, nic) in model.nics.iter().enumerate() {
        let to = &model.nics[(i + 1) % n.max(1)].name;
        for k in 0..nic.queues.max(1) {
            flows.push(json!({
                "name": if nic.queues > 1 { format!("{}-q{k}", nic.name) } else { nic.name.clone() },
                "from": nic.name,
                "to": to,
                "frame_bytes": FRAME_BYTES,
                "tuple": tuple_for(nic, i, k),
            }));
        }
    }
    let busiest = model
        .nics
        .iter()
        .map(|x| x.queues.max(1))
        .max()
        .unwrap_or(1);
    let points: Vec<f64> = (1..=10)
        .map(|p| {
            let v = f64::from(p) * 10.0 / f64::from(busiest);
            (v * 1e6).round() / 1e6
        })
        .collect();
    let mut variant = Map::new();
    variant.insert("name".into(), json!("as-imported"));
    let mut overrides = Map::new();
    let mut costs_words = String::from("the model's own costs");
    let missing: Vec<&str> = model
        .nics
        .iter()
        .filter(|x| {
            let d = &x.driver;
            d.rx_per_packet.is_none() || d.isr_entry.is_none() || d.isr_exit.is_none()
        })
        .map(|x| x.name.as_str())
        .collect();
    if !missing.is_empty() {
        let start: Value =
            serde_json::from_str(STARTING_COSTS_TEXT).expect("a shipped model parses");
        let driver = start["nics"][0]["driver"].clone();
        let mut nics = Map::new();
        for name in &missing {
            nics.insert((*name).into(), json!({ "driver": driver }));
        }
        overrides.insert("nics".into(), Value::Object(nics));
        if model.kernel.netisr_per_packet.mean_ns(model.cpu.clock_mhz) == 0.0 {
            overrides.insert(
                "kernel".into(),
                json!({ "netisr_per_packet": start["kernel"]["netisr_per_packet"] }),
            );
        }
        costs_words = format!(
            "starting costs of {STARTING_COSTS_MODEL} (mlx5 on a Xeon E5-1650 v4, the XDP \
             paper's testbed) for {}: the driver's rx_per_packet, isr_entry and isr_exit \
             {}, not measured on this host: fit them with irqsim fit against this host's \
             own measurements",
            missing.join(", "),
            if overrides.contains_key("kernel") {
                "and kernel.netisr_per_packet"
            } else {
                ""
            }
        );
    }
    variant.insert(
        "description".into(),
        json!(format!("The imported model with {costs_words}")),
    );
    if !overrides.is_empty() {
        variant.insert("overrides".into(), Value::Object(overrides));
    }
    let shape = if n == 1 {
        format!(
            "one port: each flow leaves by the port it arrived on ({0} -> {0}, a one-armed \
             router; irqsim run warns and says what to write to have the frames consumed on \
             receive instead)",
            model.nics[0].name
        )
    } else {
        "each port's flows leave by the next port (a router's forwarding)".to_string()
    };
    json!({
        "description": format!(
            "{DESCRIPTION_PREFIX}{dir} (irqsim import-host --scenario): a flow of \
             {FRAME_BYTES}-byte UDP frames per receive queue, each sent by the model's RSS to \
             its queue; {shape}; the load per flow from 10 to 100 % of the busiest port's \
             line rate over its {busiest} flow(s)"
        ),
        "model": model_ref,
        "workload": { "flows": flows },
        "load": { "unit": "percent", "points": points },
        "duration_s": 0.005,
        "drain_s": 0.002,
        "seed": 1,
        "replications": 1,
        "variants": [Value::Object(variant)]
    })
}
