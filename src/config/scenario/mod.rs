//! Scenario files: an experiment over a model.
//!
//! A scenario names a model file (path relative to the scenario), optional overrides
//! of that model, the offered workload, the load points, the duration of each point, the
//! seed, the number of replications, and optionally a measured SmartBits table to compare
//! with. Loading turns the files into an [`Experiment`], or into an [`InputError`] that
//! names the file, the JSON path and the reason. Unknown fields are rejected everywhere.
//!
//! ```json
//! {
//!   "description": "64-byte frames, one flow, SmartBits sweep",
//!   "model": "../models/p3-448-dc21143-freebsd4.json",
//!   "overrides": { "kernel": { "ipintrq_maxlen": 100 }, "nics": { "dc0": { "rx_ring_slots": 128 } } },
//!   "workload": { "flows": [ { "name": "100-101", "from": "dc0", "to": "dc1", "frame_bytes": 64 } ] },
//!   "load": { "unit": "percent", "from": 10, "to": 36, "step": 2 },
//!   "duration_s": 10,
//!   "seed": 1,
//!   "replications": 1,
//!   "measured": "measured/test_25Mx64x1.csv"
//! }
//! ```
//!
//! `overrides` is a JSON merge patch (RFC 7386) applied to the model before it is read,
//! with one extension: an object patching an array of named objects (such as `nics`)
//! patches the elements by `name` (or by index given as a string, or all of them by
//! `"*"`).
//!
//! A variant's `workload` is a merge patch of the scenario's `workload` in the same
//! form, and a grid parameter under `workload.` sets a number of it: each
//! [`Variant`] has its own flows, and its load points follow them.

use crate::config::capture::{CaptureCache, CaptureFile};
use crate::config::error::{FileProblem, InputError};
use crate::config::grid::{self, ALL_ELEMENTS, Grid, GridConfig};
use crate::config::model::ModelConfig;
use crate::config::read_limit::ReadBudget;
use crate::config::smartbits::{self, MeasuredPoint};
use crate::model::nic::link::Link;
use crate::model::stats::LatencyFrom;
use crate::model::traffic::{FlowConfig, TupleConfig};
use crate::sim::problems::{Problem, Problems};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

mod files;
mod json;
mod load;
mod patch;
mod points;
#[cfg(test)]
mod tests;
mod workload;

pub use files::*;
pub use json::*;
pub use load::*;
pub use patch::*;
use points::*;
use workload::*;

/// Unit of the load points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LoadUnit {
    /// Percent of the input link's line rate for the flow's (mean) frame size, per flow.
    Percent,
    /// Frames per second, per flow.
    Pps,
    /// Transactions kept outstanding by each closed-loop (request/response) flow.
    Outstanding,
}

/// The load points: a list, or a range `from`..=`to` by `step`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadSpec {
    /// `percent` (of line rate), `pps`, or `outstanding` (transactions per closed-loop
    /// flow).
    pub unit: LoadUnit,
    /// Explicit list of points (at least one, each more than 0; at most 100,000, as for
    /// a range; whole numbers for `outstanding`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = crate::sim::limits::MAX_POINTS),
        extend("items" = {"type": "number", "exclusiveMinimum": 0})
    )]
    pub points: Option<Vec<f64>>,
    /// First point of a range (more than 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub from: Option<f64>,
    /// Last point of a range (included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<f64>,
    /// Step of a range (more than 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub step: Option<f64>,
}

/// The offered workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Flows offered by the tester, each at the load point's rate (at most 10,000).
    #[schemars(length(max = crate::sim::limits::MAX_FLOWS))]
    pub flows: Vec<FlowConfig>,
}

/// A scenario file as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// What the experiment shows.
    #[serde(default)]
    pub description: String,
    /// Model file, relative to the scenario file.
    pub model: String,
    /// Merge patch applied to the model (see the module doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("type" = ["object", "null"]))]
    pub overrides: Option<Value>,
    /// Named variants, each a further merge patch of the model; every load point is run
    /// for every variant (at most 1,000, as for a grid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::sim::limits::MAX_VARIANTS))]
    pub variants: Option<Vec<VariantFile>>,
    /// A cartesian product of model parameter values, each combination a variant (see
    /// [`crate::config::grid`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<GridConfig>,
    /// Offered traffic.
    pub workload: WorkloadConfig,
    /// Load points.
    pub load: LoadSpec,
    /// Sending time of each point \[s\]: 1 ns to a day (86,400 s, with `drain_s`).
    #[schemars(range(min = 1e-9, max = MAX_RUN_S))]
    pub duration_s: f64,
    /// Time after sending stops during which frames are still counted \[s\] (default 1).
    #[serde(default = "d_drain")]
    #[schemars(range(min = 0.0, max = MAX_RUN_S))]
    pub drain_s: f64,
    /// Seed of every random stream (default 1).
    #[serde(default = "d_seed")]
    #[schemars(range(min = 0, max = u64::MAX))]
    pub seed: u64,
    /// Independent replications of each point (default 1, at most 10,000).
    #[serde(default = "d_reps")]
    #[schemars(range(min = 1, max = crate::sim::limits::MAX_REPLICATIONS))]
    pub replications: u32,
    /// Measured SmartBits CSV to compare with, relative to the scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<String>,
    /// Measured rates per variant to compare with (a CSV `variant,figure,measured[,source]`,
    /// `src/config/measured_rates.rs`), relative to the scenario file: a paper's or a
    /// testbed's table of rates by configuration, compared after the run in the table
    /// printed and in results.json (`measured_rates`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_rates: Option<String>,
    /// Record a latency timeline (written to timeline.csv).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<TimelineConfig>,
    /// Accept load points above 100 % of line rate (the tester cannot send them on a
    /// real link; the model then sends back to back at line rate, except
    /// `poisson-unpaced` flows, which ignore the wire) (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_overload: bool,
    /// Where a frame's latency starts, as the tester measures it: `"last-bit"` (RFC
    /// 2544's store-and-forward latency, "LIFO") or `"first-bit"` (bit-forwarding
    /// latency, "FIFO": adds the input frame's time on the wire) (default
    /// `"last-bit"`).
    #[serde(default, skip_serializing_if = "is_last_bit")]
    pub latency_from: LatencyFrom,
    /// A latency objective \[us\], 0.001 to 1,000,000: each flow's and the total's
    /// `latency_us.share_under_slo` then gives the share of delivered frames whose
    /// latency is at most this (from the latency histogram: 3 significant digits)
    /// (default none: no share reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1_000_000.0))]
    pub latency_slo_us: Option<f64>,
}

fn is_last_bit(x: &LatencyFrom) -> bool {
    *x == LatencyFrom::LastBit
}

/// Latency-timeline request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineConfig {
    /// Bucket width \[ms\] (more than 0).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub bucket_ms: f64,
}

fn d_drain() -> f64 {
    1.0
}
fn d_seed() -> u64 {
    1
}
fn d_reps() -> u32 {
    1
}

/// One load point: its label and the rate of every flow.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadPoint {
    /// The point as the scenario's `load` gives it, in its unit ([`Experiment::load_unit`]:
    /// % of line rate or frames/s, per flow; transactions outstanding per flow).
    pub load: f64,
    /// Offered load [% of line rate] (for `pps` scenarios, computed from the first flow;
    /// 0 for request/response sweeps).
    pub load_pct: f64,
    /// Transactions outstanding per flow (request/response sweeps only).
    pub outstanding: Option<f64>,
    /// Offered rate of each flow [frames/s].
    pub rates_pps: Vec<f64>,
}

impl LoadPoint {
    /// Total offered rate [frames/s] (0 for request/response sweeps, whose rate is
    /// what the host makes of it).
    pub fn offered_pps(&self) -> f64 {
        if self.outstanding.is_some() {
            0.0
        } else {
            // (An empty float sum is -0.0; + 0.0 makes it print as 0.)
            self.rates_pps.iter().sum::<f64>() + 0.0
        }
    }

    /// The point as messages print it: `30.00 %`, or `5 outstanding`.
    pub fn label(&self) -> String {
        match self.outstanding {
            Some(n) => format!("{n} outstanding"),
            None => format!("{:.2} %", self.load_pct),
        }
    }
}

/// A variant of the experiment: a model after the scenario's and the variant's
/// overrides.
#[derive(Clone, Debug)]
pub struct Variant {
    /// Name (`default` when the scenario has no variants).
    pub name: String,
    /// What it stands for.
    pub description: String,
    /// The model to simulate.
    pub model: ModelConfig,
    /// The points of the sweep for this variant's model: the rates follow from its own
    /// NICs' line rates and flows' frame sizes (the same load values for every variant).
    pub points: Vec<LoadPoint>,
    /// The flows it offers: the scenario's `workload` after the variant's `workload`
    /// patch and the grid's `workload.*` parameters ([`Experiment::flows`] when neither
    /// touches it).
    pub flows: Vec<FlowConfig>,
}

/// A variant as written in a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantFile {
    /// Name: letters, digits, `-`, `_`, `.`; unique; names `smartbits-<name>.csv`.
    #[schemars(pattern(r"^[A-Za-z0-9._-]+$"))]
    pub name: String,
    /// What it stands for.
    #[serde(default)]
    pub description: String,
    /// Merge patch applied to the model after the scenario's `overrides`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("type" = ["object", "null"]))]
    pub overrides: Option<Value>,
    /// Merge patch applied to the scenario's `workload` for this variant: its flows
    /// patched by `name`, by index written as a string, or all at once by `"*"`
    /// (`{"flows": {"*": {"frame_bytes": 1518}}}`), or replaced by a list
    /// (`{"flows": [...]}`, another flow count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("type" = ["object", "null"]))]
    pub workload: Option<Value>,
}

/// A loaded, validated experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// Scenario name (file stem).
    pub name: String,
    /// Scenario path as given.
    pub path: String,
    /// Description from the scenario.
    pub description: String,
    /// Model path as resolved.
    pub model_path: String,
    /// The variants (one, `default`, when the scenario lists none), each with its model
    /// after overrides.
    pub variants: Vec<Variant>,
    /// The scenario's flows as written, before any variant's or grid cell's `workload`
    /// patch: what a run offers is its variant's [`Variant::flows`].
    pub flows: Vec<FlowConfig>,
    /// Sending time of each point \[s\].
    pub duration_s: f64,
    /// Drain time \[s\].
    pub drain_s: f64,
    /// Seed.
    pub seed: u64,
    /// Replications per point.
    pub replications: u32,
    /// Unit of the load points ([`LoadPoint::load`]).
    pub load_unit: LoadUnit,
    /// Measured table, if named: its path and its points.
    pub measured: Option<(String, Vec<MeasuredPoint>)>,
    /// Measured rates per variant, if named: the table's path and its rows.
    pub measured_rates: Option<(String, Vec<crate::config::measured_rates::MeasuredRate>)>,
    /// Latency-timeline bucket width \[ms\], if asked for.
    pub timeline_bucket_ms: Option<f64>,
    /// Where latency starts.
    pub latency_from: LatencyFrom,
    /// The latency objective \[us\] whose share is reported, if given.
    pub latency_slo_us: Option<f64>,
    /// The grid, when the scenario has one: its variants are [`Experiment::variants`],
    /// in the order of [`Grid::cells`].
    pub grid: Option<Grid>,
}

/// Largest `duration_s + drain_s` accepted \[s\]: a day of simulated time per point is far
/// beyond any test-equipment run, and far inside the 213 days a picosecond `u64` spans.
pub const MAX_RUN_S: f64 = 86_400.0;

/// A capture a scenario names, counted in the command's budget before any capture is
/// read ([`load_checked`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedCapture {
    /// The scenario file.
    pub file: String,
    /// Where the scenario names it (`workload.flows[1].arrivals.pcap`), its first
    /// mention when several name one file.
    pub field: String,
    /// Its path, as read.
    pub path: PathBuf,
    /// Its size on disk (`stat`) \[bytes\].
    pub bytes: u64,
}

/// Check of the captures a scenario names, before any of them is read
/// ([`load_checked`]): an error ends the load.
pub type CapturesCheck<'a> = &'a mut dyn FnMut(&[NamedCapture]) -> Result<(), InputError>;

impl Experiment {
    /// Load points of the sweep (each variant has this many).
    pub fn npoints(&self) -> usize {
        self.variants.first().map_or(0, |v| v.points.len())
    }

    /// Keep only the load points for which `keep` holds on the first variant's point
    /// (the same points in every variant, so the variants stay aligned).
    pub fn retain_points(&mut self, keep: impl Fn(&LoadPoint) -> bool) {
        let Some(first) = self.variants.first() else {
            return;
        };
        let mask: Vec<bool> = first.points.iter().map(&keep).collect();
        if let Some(g) = &mut self.grid {
            g.latency_point = g
                .latency_point
                .filter(|&j| mask[j])
                .map(|j| mask[..j].iter().filter(|k| **k).count());
        }
        for v in &mut self.variants {
            let mut k = 0;
            v.points.retain(|_| {
                k += 1;
                mask[k - 1]
            });
        }
    }
}

/// The unit of load points as messages print it: `%`, `frames/s`, `transactions`.
pub fn unit_name(u: LoadUnit) -> &'static str {
    match u {
        LoadUnit::Percent => "%",
        LoadUnit::Pps => "frames/s",
        LoadUnit::Outstanding => "transactions",
    }
}
