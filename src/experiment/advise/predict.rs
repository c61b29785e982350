//! The model of the host at the load the counters measured, as given and with each
//! candidate change: one scenario whose variants are the host as given and every
//! candidate (their changes as the variant's `overrides`), run as `irqsim run` runs a
//! sweep (every variant sees the same arrivals: common random numbers).
//!
//! The load ([`measured_load`]): per NIC, the frames it received over the interval
//! (/proc/net/dev's receive packets) plus those it dropped before the kernel saw them
//! (the ring-drop counters of [`super::diagnosis::ring_drop_counters`]), split over its
//! queues as `ethtool -S`'s per-queue receive counters split them (`rx<k>_packets`,
//! `rx_queue_<k>_packets`, `rx-<k>.rx_packets`, `rx-queue-<k>.rx_packets`,
//! `queue_<k>_rx_cnt`), evenly without them. A flow per queue, of the mean frame size
//! (/proc/net/dev's bytes over packets, plus the 4-byte FCS the drivers strip), from an
//! address the model's RSS sends to that queue ([`crate::config::import::scenario`]),
//! forwarded out of the next NIC as import-host's starting scenario does, arriving as a
//! Poisson process (a live host's traffic is not paced). The model runs `duration`
//! (default 20 ms) of that load and 5 ms of drain: the counters' steady rates, not the
//! interval's history.

use super::change::{Change, patch_of};
use super::deltas::Deltas;
use super::diagnosis::ring_drop_counters;
use crate::config::error::InputError;
use crate::config::model::ModelConfig;
use crate::config::scenario::{Experiment, FileSource};
use crate::model::nic::LinuxDriver;
use crate::results::PointFigures;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Drain after the load \[s\].
pub const DRAIN_S: f64 = 0.005;

/// One flow of the measured load.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueLoad {
    /// The NIC.
    pub nic: String,
    /// Its receive queue.
    pub queue: u16,
    /// Frames offered \[frames/s\].
    pub pps: f64,
}

/// The load the counters measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeasuredLoad {
    /// Per queue with traffic.
    pub flows: Vec<QueueLoad>,
    /// Mean frame size \[bytes, FCS included\].
    pub frame_bytes: u32,
    /// How the split over the queues was found, per NIC.
    pub split: BTreeMap<String, String>,
}

/// The per-queue receive counter of `driver` for queue `k`.
fn queue_counter(driver: Option<LinuxDriver>, k: u16) -> Option<String> {
    Some(match driver? {
        LinuxDriver::Mlx5 => format!("rx{k}_packets"),
        LinuxDriver::Ixgbe | LinuxDriver::Igb | LinuxDriver::Ixgbevf => {
            format!("rx_queue_{k}_packets")
        }
        LinuxDriver::I40e => format!("rx-{k}.rx_packets"),
        LinuxDriver::Ice => format!("rx-queue-{k}.rx_packets"),
        LinuxDriver::Ena => format!("queue_{k}_rx_cnt"),
        _ => return None,
    })
}

/// The load `d` measured on the host `m`.
pub fn measured_load(d: &Deltas, m: &ModelConfig) -> MeasuredLoad {
    let (mut bytes, mut packets) = (0u64, 0u64);
    let mut flows = Vec::new();
    let mut split = BTreeMap::new();
    for n in &m.nics {
        let Some(nd) = d.net_dev.get(&n.name) else {
            split.insert(n.name.clone(), "not in /proc/net/dev: no load".into());
            continue;
        };
        bytes += nd[0];
        packets += nd[1];
        let es = d.ethtool.get(&n.name);
        let ring: u64 = es.map_or(nd[4], |es| {
            es.iter()
                .filter(|(k, _)| ring_drop_counters(n.linux_driver, k))
                .map(|(_, v)| v)
                .sum()
        });
        let offered = (nd[1] + ring) as f64 / d.interval_s;
        let q = n.queues.max(1);
        let per_q: Option<Vec<u64>> = es.and_then(|es| {
            (0..q)
                .map(|k| queue_counter(n.linux_driver, k).and_then(|c| es.get(&c).copied()))
                .collect()
        });
        let shares: Vec<f64> = match per_q {
            Some(v) if v.iter().sum::<u64>() > 0 => {
                split.insert(
                    n.name.clone(),
                    format!(
                        "by ethtool -S's per-queue counters ({})",
                        queue_counter(n.linux_driver, 0).unwrap_or_default()
                    ),
                );
                let s: u64 = v.iter().sum();
                v.iter().map(|x| *x as f64 / s as f64).collect()
            }
            _ => {
                split.insert(n.name.clone(), "evenly (no per-queue counters)".into());
                vec![1.0 / f64::from(q); q as usize]
            }
        };
        for (k, s) in shares.iter().enumerate() {
            if offered * s > 0.0 {
                flows.push(QueueLoad {
                    nic: n.name.clone(),
                    queue: k as u16,
                    pps: offered * s,
                });
            }
        }
    }
    let frame_bytes = if packets > 0 {
        ((bytes as f64 / packets as f64).round() as u32 + 4).clamp(64, 16384)
    } else {
        64
    };
    MeasuredLoad {
        flows,
        frame_bytes,
        split,
    }
}

/// A scenario and its model held in memory.
struct Mem {
    files: BTreeMap<PathBuf, String>,
}

impl FileSource for Mem {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not in memory"))
    }
}

/// A variant to run: its name and changes.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Its variant's name.
    pub name: String,
    /// Its changes (none: the host as given).
    pub changes: Vec<Change>,
}

/// The scenario of `load` on the model (`model_text`, named `model_name` in messages)
/// with a variant per candidate, loaded.
pub fn experiment(
    model: (&str, &str, &ModelConfig),
    load: &MeasuredLoad,
    candidates: &[Candidate],
    (duration_s, seed): (f64, u64),
) -> Result<Experiment, InputError> {
    let (model_name, model_text, m) = (model.0, model.1, model.2);
    let n = m.nics.len().max(1);
    let flows: Vec<Value> = load
        .flows
        .iter()
        .filter(|f| f.pps * duration_s >= 10.0)
        .map(|f| {
            let i = m.nics.iter().position(|x| x.name == f.nic).unwrap_or(0);
            json!({
                "name": format!("{}-q{}", f.nic, f.queue),
                "from": f.nic,
                "to": m.nics[(i + 1) % n].name,
                "frame_bytes": load.frame_bytes,
                "arrivals": "poisson",
                "rate_pps": f.pps,
                "tuple": crate::config::import::scenario::tuple_for(&m.nics[i], i, f.queue),
            })
        })
        .collect();
    let variants: Vec<Value> = candidates
        .iter()
        .map(|c| {
            if c.changes.is_empty() {
                json!({"name": c.name})
            } else {
                json!({"name": c.name, "overrides": patch_of(&c.changes)})
            }
        })
        .collect();
    let sc = json!({
        "description": "irqsim advise: the host's model at the load its counters measured",
        "model": model_name,
        "workload": {"flows": flows},
        "load": {"unit": "pps", "points": [1]},
        "allow_overload": true,
        "duration_s": duration_s,
        "drain_s": DRAIN_S,
        "seed": seed,
        "replications": 1,
        "variants": variants,
    });
    let mut files = BTreeMap::new();
    let mem = Mem {
        files: BTreeMap::new(),
    };
    files.insert(
        mem.resolve(Path::new(""), model_name),
        model_text.to_string(),
    );
    files.insert(PathBuf::from("advise.json"), sc.to_string());
    let mem = Mem { files };
    crate::experiment::load::load(Path::new("advise.json"), &mem)
}

/// What the model predicts for one variant.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Predicted {
    /// Frames lost \[% of those offered\].
    pub loss_pct: f64,
    /// Frames lost at the rings or the NIC's FIFO \[frames/s\].
    pub ring_drops_per_s: f64,
    /// Frames lost at full backlogs \[frames/s\].
    pub backlog_drops_per_s: f64,
    /// NET_RX runs squeezed \[1/s\].
    pub time_squeeze_per_s: f64,
    /// Interrupts \[1/s\].
    pub interrupts_per_s: f64,
    /// CPU busy, all cores \[cores\].
    pub cpu_cores_busy: f64,
    /// The busiest core's busy share \[%\].
    pub busiest_core_pct: f64,
    /// 99th percentile of the latency of the frames delivered \[us\].
    pub p99_us: f64,
}

/// The figures of a run of `duration_s`.
pub fn predicted(f: &PointFigures, duration_s: f64) -> Predicted {
    let sum = |suffix: &str| -> f64 {
        f.counters
            .iter()
            .filter(|(k, _)| k.starts_with("cpu") && k.ends_with(suffix))
            .map(|(_, v)| v)
            .sum()
    };
    let busy: Vec<f64> = f.cores.iter().map(|c| 1.0 - c.idle).collect();
    Predicted {
        loss_pct: f.total.loss_pct,
        ring_drops_per_s: (f.total.drops.rx_ring + f.total.drops.rx_fifo) / duration_s,
        backlog_drops_per_s: sum(".softnet.dropped") / duration_s,
        time_squeeze_per_s: sum(".softnet.time_squeeze") / duration_s,
        interrupts_per_s: f.interrupts_per_s,
        cpu_cores_busy: busy.iter().sum(),
        busiest_core_pct: 100.0 * busy.iter().copied().fold(0.0, f64::max),
        p99_us: f.total.latency_us.p99,
    }
}
