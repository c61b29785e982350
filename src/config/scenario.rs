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

/// Where input files come from: the disk, or the copies built into the binary.
pub trait FileSource {
    /// The file's text.
    fn read(&self, path: &Path) -> std::io::Result<String>;

    /// A binary file's bytes (a capture a flow replays); by default none can be read.
    fn read_bytes(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let _ = path;
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "binary files are read from the disk only",
        ))
    }

    /// The path of `rel` (as written in a file in `dir`) to read it by: `dir/rel` with
    /// `.` and `..` resolved lexically (see `normalize`).
    fn resolve(&self, dir: &Path, rel: &str) -> PathBuf {
        normalize(&dir.join(rel))
    }

    /// The file's identity (device, inode), when the source has one: two paths of one
    /// identity are one file, read once.
    fn identity(&self, path: &Path) -> Option<(u64, u64)> {
        let _ = path;
        None
    }

    /// Count the capture `path` in what the command reads, before any capture is read:
    /// its size (`stat`) when the source knows it (the disk), checked against the
    /// capture's limit and what is left of the command's budget; `Ok(None)` when the
    /// source has no sizes (the built-in files).
    fn reserve_capture(&self, path: &Path) -> std::io::Result<Option<u64>> {
        let _ = path;
        Ok(None)
    }
}

/// Files on disk, every read drawn from the command's one [`ReadBudget`] (made where
/// the command starts and shared with its other readers: checkpoints, results).
#[derive(Debug, Clone)]
pub struct DiskFiles {
    budget: Arc<ReadBudget>,
}

impl Default for DiskFiles {
    /// With a budget of its own ([`ReadBudget::command`]).
    fn default() -> Self {
        DiskFiles::new(Arc::new(ReadBudget::command()))
    }
}

impl DiskFiles {
    /// Reading from `budget`.
    pub fn new(budget: Arc<ReadBudget>) -> DiskFiles {
        DiskFiles { budget }
    }

    /// The budget every read draws from.
    pub fn budget(&self) -> &Arc<ReadBudget> {
        &self.budget
    }
}

impl FileSource for DiskFiles {
    /// A regular file of at most [`crate::config::read_limit::MAX_INPUT_BYTES`].
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.budget
            .read_text(path, crate::config::read_limit::MAX_INPUT_BYTES)
    }

    /// A regular file of at most [`crate::config::capture::MAX_CAPTURE_BYTES`].
    fn read_bytes(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.budget
            .read_bytes(path, crate::config::capture::MAX_CAPTURE_BYTES, true)
    }

    fn identity(&self, path: &Path) -> Option<(u64, u64)> {
        ReadBudget::identity(path).ok()
    }

    fn reserve_capture(&self, path: &Path) -> std::io::Result<Option<u64>> {
        self.budget
            .reserve(path, crate::config::capture::MAX_CAPTURE_BYTES)
            .map(Some)
    }

    /// As the file system resolves `dir/rel`: the lexical form (which messages print)
    /// when it names the same directory (or neither exists), else `dir/rel` as joined
    /// (a `..` after a symbolic link climbs from the link's target, which the lexical
    /// form cannot know).
    fn resolve(&self, dir: &Path, rel: &str) -> PathBuf {
        let joined = dir.join(rel);
        let lexical = normalize(&joined);
        let real_dir = |p: &Path| {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            std::fs::canonicalize(parent.unwrap_or(Path::new(".")))
        };
        match (real_dir(&joined), real_dir(&lexical)) {
            (Ok(a), Ok(b)) if a == b => lexical,
            (Ok(_), _) => joined,
            _ => lexical,
        }
    }
}

/// The default scenario, its model and its measured table, built into the binary so that
/// `irqsim` with no arguments works anywhere.
pub struct BuiltinFiles;

/// Path of the built-in default scenario.
pub const BUILTIN_SCENARIO: &str = "scenarios/dc21143-64b-1flow.json";

const BUILTIN: &[(&str, &str)] = &[
    (
        BUILTIN_SCENARIO,
        include_str!("../../scenarios/dc21143-64b-1flow.json"),
    ),
    (
        "models/p3-448-dc21143-freebsd4.json",
        include_str!("../../models/p3-448-dc21143-freebsd4.json"),
    ),
    (
        "scenarios/measured/test_25Mx64x1.csv",
        include_str!("../../scenarios/measured/test_25Mx64x1.csv"),
    ),
];

impl FileSource for BuiltinFiles {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        let want = normalize(path);
        BUILTIN
            .iter()
            .find(|(p, _)| Path::new(p) == want)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not a built-in file"))
    }
}

/// Lexically resolve `.` and `..` (no file-system access): a `..` removes the name
/// before it; one with no name before it (only `..`s, or nothing) is kept, and one
/// right after the root is dropped (`/..` is `/`).
fn normalize(p: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

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

/// The JSON Schema of scenario files, generated from the Rust types (schemars).
pub fn scenario_schema() -> String {
    schema_text(schemars::schema_for!(ScenarioFile))
}

/// The JSON Schema of model files, generated from the Rust types (schemars).
pub fn model_schema() -> String {
    schema_text(schemars::schema_for!(ModelConfig))
}

/// A generated schema as shipped: its descriptions in the file's words, without the
/// rustdoc links of the fields' doc comments (a link such as ``[`crate::model::nic::xps`]``
/// becomes `` `xps` ``: the name of the mechanism, not a path into the source, which a
/// reader of a model file cannot follow and a move of the code would change).
fn schema_text(schema: schemars::Schema) -> String {
    fn unlink(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match x {
                        Value::String(s) if k == "description" => *s = unlink_text(s),
                        _ => unlink(x),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(unlink),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(&schema).expect("schema");
    unlink(&mut v);
    serde_json::to_string_pretty(&v).expect("schema") + "\n"
}

/// `text` with every ``[`crate::a::b`]`` written `` `b` ``.
fn unlink_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("[`crate::") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 9..];
        match after.find("`]") {
            Some(j) => {
                let path = &after[..j];
                out.push('`');
                out.push_str(path.rsplit("::").next().unwrap_or(path));
                out.push('`');
                rest = &after[j + 2..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Parse JSON text into `T`, reporting syntax errors (with serde_json's line and
/// column) and the first wrong-type or unknown-field problem, with its path and its
/// position in `text`.
pub fn parse_json<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, InputError> {
    let v = parse_value(file, text)?;
    read_all(v).map_err(|mut list| {
        let p = located(text, list.swap_remove(0));
        InputError::Field {
            file: file.into(),
            path: p.path,
            msg: p.reason,
        }
    })
}

/// JSON text as a [`Value`], or its syntax error. Anything after the document (a
/// second value, stray bytes) is an error, not silently ignored; so is a key given
/// twice in one object ([`NoDuplicateKeys`]: JSON parsers keep the last or the first,
/// RFC 8259 section 4 leaves it open, and the last one used to win quietly).
fn parse_value(file: &str, text: &str) -> Result<Value, InputError> {
    let syntax = |e: serde_json::Error| InputError::Syntax {
        file: file.into(),
        msg: e.to_string(),
    };
    let v = serde_json::from_str::<Value>(text).map_err(syntax)?;
    serde_json::from_str::<NoDuplicateKeys>(text).map_err(syntax)?;
    Ok(v)
}

/// A JSON document walked only to find a key given twice in one object (an error
/// with the key, at its line and column).
struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeysVisitor)
    }
}

struct NoDuplicateKeysVisitor;

impl<'de> serde::de::Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = NoDuplicateKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<NoDuplicateKeys, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<NoDuplicateKeys, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !keys.insert(k.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{k}` is given twice in one object (irqsim refuses rather than \
                     keep one of the two)"
                )));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

/// `p` with the line and column of its path in `text` appended, where the text has it.
fn located(text: &str, mut p: Problem) -> Problem {
    if let Some((line, col)) = crate::config::json_pos::position(text, &p.path) {
        p.reason = format!("{} at line {line} column {col}", p.reason);
    }
    p
}

/// Read `text` into `T`, reporting every wrong-type or unknown-field problem, not only
/// the first ([`read_all`]), each with its position in `text`.
pub fn parse_json_all<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, InputError> {
    let v = parse_value(file, text)?;
    read_all(v).map_err(|mut list| {
        if list.len() == 1 {
            let p = located(text, list.pop().expect("one"));
            return InputError::Field {
                file: file.into(),
                path: p.path,
                msg: p.reason,
            };
        }
        InputError::Invalid(
            list.into_iter()
                .map(|p| FileProblem {
                    file: file.into(),
                    problem: located(text, p),
                })
                .collect(),
        )
    })
}

/// Read `v` into `T`, collecting every wrong-type or unknown-field problem, not only the
/// first (serde stops at the first): after each one the offending value is removed and
/// the reading retried. Each problem has its full path in `v` (inside tagged and
/// untagged forms too, see [`crate::sim::forms`]) and its reason in the file's words
/// ([`crate::sim::forms::plain`]), without a position. A required field left missing by a
/// removal is not reported twice.
pub fn read_all<T: DeserializeOwned>(mut v: Value) -> Result<T, Vec<Problem>> {
    let mut problems: Vec<Problem> = Vec::new();
    for _ in 0..100 {
        let (path, reason) = match crate::sim::forms::fields::<T>(v.clone()) {
            Ok(t) if problems.is_empty() => return Ok(t),
            Ok(_) => break,
            Err(e) => e,
        };
        let path = if path.is_empty() { ".".into() } else { path };
        let path = unknown_field_path(&v, path, &reason);
        let missing = reason.starts_with("missing field");
        // A field we removed is now missing: already reported.
        if missing && !problems.is_empty() {
            let name = reason.split('`').nth(1).unwrap_or("");
            let full = if path == "." {
                name.to_string()
            } else {
                join(&path, name)
            };
            if problems.iter().any(|p| p.path == full) {
                // Put a stand-in of another type there, so that reading goes on to the
                // problems after it; none is reported, as the problem already was.
                if stand_in::<T>(&mut v, &path, name, &full) {
                    continue;
                }
                break;
            }
        }
        let removed = !missing && remove_at(&mut v, &path);
        problems.push(Problem {
            reason: crate::sim::forms::plain_at(&path, &reason),
            path,
        });
        if !removed {
            break;
        }
    }
    Err(problems)
}

/// The path of an unknown field that serde reported at the object holding it (a
/// reader that buffers the object, such as a derived internally tagged enum, loses the
/// last step): the field's own path when that object has the field.
fn unknown_field_path(v: &Value, path: String, reason: &str) -> String {
    let Some(name) = reason
        .strip_prefix("unknown field `")
        .and_then(|r| r.split('`').next())
    else {
        return path;
    };
    if path.rsplit(['.', '[']).next() == Some(name) {
        return path;
    }
    let mut cur = v;
    for s in path.replace('[', ".[").split('.').filter(|s| !s.is_empty()) {
        let next = match (s.strip_prefix('[').and_then(|x| x.strip_suffix(']')), cur) {
            (Some(i), Value::Array(a)) => i.parse::<usize>().ok().and_then(|i| a.get(i)),
            (None, Value::Object(o)) => o.get(s),
            _ => None,
        };
        match next {
            Some(x) => cur = x,
            None => return path,
        }
    }
    match cur {
        Value::Object(o) if o.contains_key(name) => {
            if path == "." {
                name.to_string()
            } else {
                join(&path, name)
            }
        }
        _ => path,
    }
}

/// Remove the value at `path` (`a.b[2].c`, as serde_path_to_error prints it) from an
/// object; false if the path does not end in an object key.
/// Set field `name` of the object at `path` to the first stand-in value (a number, a
/// string, a boolean, an object, an array) with which reading `T` no longer stops at
/// `full` (the field's path); `false` (and the field left out) when none does.
fn stand_in<T: DeserializeOwned>(v: &mut Value, path: &str, name: &str, full: &str) -> bool {
    let stands = [
        Value::from(1),
        Value::from(""),
        Value::from(false),
        Value::Object(Default::default()),
        Value::Array(Vec::new()),
    ];
    for x in stands {
        let Some(Value::Object(o)) = value_at_mut(v, path) else {
            return false;
        };
        o.insert(name.to_string(), x);
        match crate::sim::forms::fields::<T>(v.clone()) {
            Ok(_) => return true,
            Err((p, reason)) => {
                let p = if p.is_empty() { ".".to_string() } else { p };
                let stuck = (p == full
                    || p.starts_with(&format!("{full}."))
                    || p.starts_with(&format!("{full}[")))
                    || (p == path && reason.contains(&format!("`{name}`")));
                if !stuck {
                    return true;
                }
            }
        }
    }
    if let Some(Value::Object(o)) = value_at_mut(v, path) {
        o.remove(name);
    }
    false
}

/// The value at `path` (`a.b[2].c`; `.` or empty for the root).
fn value_at_mut<'v>(v: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    let mut cur = v;
    for s in path.replace('[', ".[").split('.').filter(|s| !s.is_empty()) {
        cur = match (s.strip_prefix('[').and_then(|x| x.strip_suffix(']')), cur) {
            (Some(i), Value::Array(a)) => a.get_mut(i.parse::<usize>().ok()?)?,
            (None, Value::Object(o)) => o.get_mut(s)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn remove_at(v: &mut Value, path: &str) -> bool {
    let segs: Vec<String> = path
        .replace('[', ".[")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let Some((last, parents)) = segs.split_last() else {
        return false;
    };
    let mut cur = v;
    for s in parents {
        cur = match (s.strip_prefix('[').and_then(|x| x.strip_suffix(']')), cur) {
            (Some(i), Value::Array(a)) => {
                match i.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                    Some(x) => x,
                    None => return false,
                }
            }
            (None, Value::Object(o)) => match o.get_mut(s) {
                Some(x) => x,
                None => return false,
            },
            _ => return false,
        };
    }
    match cur {
        Value::Object(o) if !last.starts_with('[') => o.remove(last).is_some(),
        _ => false,
    }
}

fn read(files: &dyn FileSource, path: &Path) -> Result<String, InputError> {
    files.read(path).map_err(|source| InputError::Read {
        file: path.display().to_string(),
        source,
    })
}

/// A measured table named by the scenario's field `field` (`measured`,
/// `measured_rates`), resolved from its directory `dir`, read with the input limit and
/// parsed by `parse`: `Some((path, table))`, or `None` with the problem recorded (a
/// CSV error at its line in the table's file, an unreadable file at `field` in the
/// scenario's file `sfile`). Other errors end the load.
fn read_table_file<T>(
    files: &dyn FileSource,
    dir: &Path,
    name: &str,
    field: &str,
    sfile: &str,
    problems: &mut Vec<FileProblem>,
    parse: impl FnOnce(&str, &str) -> Result<T, InputError>,
) -> Result<Option<(String, T)>, InputError> {
    let mpath = files.resolve(dir, name);
    let mf = mpath.display().to_string();
    match read(files, &mpath) {
        Ok(t) => match parse(&mf, &t) {
            Ok(table) => Ok(Some((mf, table))),
            Err(InputError::Csv { file, line, msg }) => {
                problems.push(FileProblem {
                    file,
                    problem: Problem {
                        path: format!("line {line}"),
                        reason: msg,
                    },
                });
                Ok(None)
            }
            Err(e) => Err(e),
        },
        Err(InputError::Read { source, .. }) => {
            problems.push(FileProblem {
                file: sfile.to_string(),
                problem: Problem {
                    path: field.into(),
                    reason: format!("cannot read `{mf}`: {source}"),
                },
            });
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// RFC 7386 merge patch, plus patching arrays of named objects by name or index.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (Value::Array(items), Value::Object(p)) => {
            for (k, v) in p {
                for i in patched_elements(items, k) {
                    merge_patch(&mut items[i], v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// The elements of an array of named objects that the key `k` of a patch addresses:
/// the one named `k`, else the one numbered `k`, else, for `*` (when no element is
/// named `*`), every element.
fn patched_elements(items: &[Value], k: &str) -> std::ops::Range<usize> {
    let named = items
        .iter()
        .position(|it| it.get("name").and_then(Value::as_str) == Some(k))
        .or_else(|| k.parse::<usize>().ok().filter(|i| *i < items.len()));
    match named {
        Some(i) => i..i + 1,
        None if k == ALL_ELEMENTS => 0..items.len(),
        None => 0..0,
    }
}

/// Names in an array-patch object that match no element (reported as errors).
fn unmatched_patch_keys(target: &Value, patch: &Value, path: &str, out: &mut Vec<Problem>) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if let Some(tv) = t.get(k) {
                    unmatched_patch_keys(tv, v, &join(path, k), out);
                }
            }
        }
        (Value::Array(items), Value::Object(p)) => {
            for (k, v) in p {
                let hit = patched_elements(items, k);
                if hit.is_empty() && !(k == ALL_ELEMENTS && items.is_empty()) {
                    out.push(Problem {
                        path: join(path, k),
                        reason: format!("no element named or numbered `{k}` to override"),
                    });
                }
                for i in hit {
                    unmatched_patch_keys(&items[i], v, &join(path, k), out);
                }
            }
        }
        _ => {}
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// If the value at `path` (as `a.b[2].c`) was set by `overrides`, the path of that
/// value inside the patch, as the user wrote it (`nics.dc0.rx_ring_slots`).
fn overridden(overrides: &Value, model: &Value, path: &str) -> Option<String> {
    let segs: Vec<String> = path
        .replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let (mut o, mut m) = (overrides, Some(model));
    let mut out = String::new();
    for seg in &segs {
        let next_m = match m {
            Some(Value::Array(a)) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            Some(Value::Object(map)) => map.get(seg),
            _ => None,
        };
        let Value::Object(map) = o else {
            // A leaf of the patch replaced this whole subtree.
            return Some(out);
        };
        // Arrays of named objects are patched by name (or by index as a string).
        let name = next_m.and_then(|v| v.get("name")).and_then(Value::as_str);
        let (key, next_o) = match map.get(seg) {
            Some(v) => (seg.as_str(), v),
            None => match name.and_then(|n| map.get(n).map(|v| (n, v))) {
                Some(hit) => hit,
                // (An element patched with every other by `*`.)
                None if matches!(m, Some(Value::Array(_))) => {
                    map.get(ALL_ELEMENTS).map(|v| (ALL_ELEMENTS, v))?
                }
                None => return None,
            },
        };
        out = join(&out, key);
        o = next_o;
        m = next_m;
    }
    Some(out)
}

/// Apply `patches` (each with the path prefix it is written under) to the model and
/// read it; problems are located in the file, and at the path, that set the value. A
/// grid's patch (prefix `grid.parameters[i].values[j]`) sets one value, so a problem
/// with it is located at that value itself. A value of the wrong type or an unknown
/// field is also given the line and column of its path in that file (`stext` for the
/// scenario, `mtext` for the model). The model is `None` when it could not be read;
/// every problem found is returned either way.
fn build_model(
    (sfile, stext): (&str, &str),
    (mfile, mtext): (&str, &str),
    base: &Value,
    patches: &[(String, &Value)],
) -> (Option<ModelConfig>, Vec<FileProblem>) {
    let mut problems = Vec::new();
    let mut mval = base.clone();
    for (prefix, ov) in patches {
        if !ov.is_object() {
            problems.push(FileProblem {
                file: sfile.into(),
                problem: Problem {
                    path: prefix.clone(),
                    reason: "must be an object (a JSON merge patch of the model)".into(),
                },
            });
            continue;
        }
        let mut un = Vec::new();
        unmatched_patch_keys(&mval, ov, prefix, &mut un);
        problems.extend(un.into_iter().map(|problem| FileProblem {
            file: sfile.into(),
            problem,
        }));
        merge_patch(&mut mval, ov);
    }
    // A model error is reported against the scenario when an override put the value
    // there (the last patch that touched it).
    let locate = |p: Problem| -> FileProblem {
        match patch_site(patches, base, &p.path) {
            Some(path) => FileProblem {
                file: sfile.into(),
                problem: Problem {
                    path,
                    reason: p.reason,
                },
            },
            None => FileProblem {
                file: mfile.into(),
                problem: p,
            },
        }
    };
    let model: ModelConfig = match read_all(mval) {
        Ok(m) => m,
        Err(list) => {
            problems.extend(list.into_iter().map(|p| {
                let mut fp = locate(p);
                let text = if fp.file == sfile { stext } else { mtext };
                fp.problem = located(text, fp.problem);
                fp
            }));
            return (None, problems);
        }
    };
    let mut mp = Problems::new();
    model.validate(&mut mp);
    problems.extend(mp.list.into_iter().map(locate));
    (Some(model), problems)
}

/// A scenario that could not be read (`e`), with the problems of the model it names
/// (after its `overrides`) added, so that both files' problems are reported at once.
/// The scenario's other checks need the scenario read; they come with the next run.
fn with_model_problems(
    e: InputError,
    (sfile, stext): (&str, &str),
    dir: &Path,
    files: &dyn FileSource,
) -> InputError {
    let mut problems = match e {
        InputError::Field { file, path, msg } => vec![FileProblem {
            file,
            problem: Problem { path, reason: msg },
        }],
        InputError::Invalid(list) => list,
        other => return other,
    };
    let Ok(sv) = serde_json::from_str::<Value>(stext) else {
        return InputError::Invalid(problems);
    };
    let Some(model) = sv.get("model").and_then(Value::as_str) else {
        return InputError::Invalid(problems);
    };
    let mpath = files.resolve(dir, model);
    let mfile = mpath.display().to_string();
    let Ok(mtext) = files.read(&mpath) else {
        problems.push(FileProblem {
            file: sfile.into(),
            problem: Problem {
                path: "model".into(),
                reason: format!("cannot read model `{mfile}`"),
            },
        });
        return InputError::Invalid(problems);
    };
    let mval = match parse_value(&mfile, &mtext) {
        Ok(v) => v,
        Err(InputError::Syntax { file, msg }) => {
            problems.push(FileProblem {
                file,
                problem: Problem {
                    path: ".".into(),
                    reason: format!("invalid JSON: {msg}"),
                },
            });
            return InputError::Invalid(problems);
        }
        Err(e) => return e,
    };
    let patches: Vec<(String, &Value)> = sv
        .get("overrides")
        .map(|ov| ("overrides".to_string(), ov))
        .into_iter()
        .collect();
    let (_, found) = build_model((sfile, stext), (&mfile, &mtext), &mval, &patches);
    for p in found {
        if !problems.contains(&p) {
            problems.push(p);
        }
    }
    InputError::Invalid(problems)
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

/// Load and validate a scenario and its model through `files`.
pub fn load(path: &Path, files: &dyn FileSource) -> Result<Experiment, InputError> {
    load_checked(path, files, &mut |_| Ok(()))
}

/// Every `arrivals.pcap` string in the scenario `v` (its workload, its variants'
/// workload patches), with its JSON path, in document order.
fn pcap_fields(v: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let here = join(at, k);
                if k == "arrivals"
                    && let Some(p) = x.get("pcap").and_then(Value::as_str)
                {
                    out.push((join(&here, "pcap"), p.to_string()));
                }
                pcap_fields(x, &here, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pcap_fields(x, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The captures the scenario `stext` (in `dir`) names, each file once, counted in the
/// command's budget ([`FileSource::reserve_capture`]: its size checked against the
/// capture limit and what is left, without a byte read): a capture that would take the
/// command past its budget ends the load, naming where the scenario names it. A capture
/// that cannot be counted for another reason (missing, not a regular file, too large)
/// is left to its read, which reports it at its flow.
fn reserve_captures(
    files: &dyn FileSource,
    (sfile, stext): (&str, &str),
    dir: &Path,
) -> Result<Vec<NamedCapture>, InputError> {
    let mut fields = Vec::new();
    if let Ok(v) = serde_json::from_str::<Value>(stext) {
        pcap_fields(&v, "", &mut fields);
    }
    let mut out: Vec<NamedCapture> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (field, rel) in fields {
        let path = files.resolve(dir, &rel);
        if out.iter().any(|c| c.path == path)
            || files.identity(&path).is_some_and(|id| !ids.insert(id))
        {
            continue;
        }
        match files.reserve_capture(&path) {
            Ok(Some(bytes)) => out.push(NamedCapture {
                file: sfile.to_string(),
                field,
                path,
                bytes,
            }),
            Ok(None) => {}
            Err(e)
                if e.get_ref()
                    .and_then(|r| r.downcast_ref::<crate::config::read_limit::ReadLimitError>())
                    .is_some_and(|r| {
                        matches!(
                            r,
                            crate::config::read_limit::ReadLimitError::OverBudget { .. }
                        )
                    }) =>
            {
                return Err(InputError::Invalid(vec![FileProblem {
                    file: sfile.to_string(),
                    problem: Problem {
                        path: field,
                        reason: format!(
                            "cannot read capture `{}`: {e}; no capture was read",
                            path.display()
                        ),
                    },
                }]));
            }
            Err(_) => {}
        }
    }
    Ok(out)
}

/// [`load`], with `check` given the captures the scenario names (each counted in the
/// command's budget by its size on disk) before any of them is read: the memory they
/// would take is checked there ([`crate::experiment::load::load`]).
pub fn load_checked(
    path: &Path,
    files: &dyn FileSource,
    check: CapturesCheck<'_>,
) -> Result<Experiment, InputError> {
    let sfile = path.display().to_string();
    let text = read(files, path)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let sc: ScenarioFile = match parse_json_all(&sfile, &text) {
        Ok(sc) => sc,
        Err(e) => return Err(with_model_problems(e, (&sfile, &text), dir, files)),
    };
    let model_path = files.resolve(dir, &sc.model);
    let mfile = model_path.display().to_string();
    let mtext = files.read(&model_path).map_err(|e| {
        InputError::Invalid(vec![FileProblem {
            file: sfile.clone(),
            problem: Problem {
                path: "model".into(),
                reason: format!("cannot read model `{mfile}`: {e}"),
            },
        }])
    })?;
    let mval: Value = parse_json(&mfile, &mtext)?;
    // Every capture counted, and checked, before any is read.
    check(&reserve_captures(files, (&sfile, &text), dir)?)?;
    let mut problems: Vec<FileProblem> = Vec::new();
    let scen_problem = |problem: Problem| FileProblem {
        file: sfile.clone(),
        problem,
    };
    // The file's stem is the scenario's name, which names its output directory.
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Err(e) = crate::config::names::check(&stem) {
        problems.push(scen_problem(Problem {
            path: ".".into(),
            reason: format!(
                "the file's name gives the scenario its name, and {e}: rename the file"
            ),
        }));
    }

    // The workload as written (the scenario was read, so it is there), which each
    // variant's `workload` and the grid's `workload.*` parameters patch.
    let wval: Value = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get(WORKLOAD).cloned())
        .unwrap_or(Value::Null);
    // The variants: each is the model with the scenario's overrides, then its own.
    let specs: Vec<VariantFile> = match &sc.variants {
        None => vec![VariantFile {
            name: "default".into(),
            description: String::new(),
            overrides: None,
            workload: None,
        }],
        Some(v) => {
            if v.is_empty() {
                problems.push(scen_problem(Problem {
                    path: "variants".into(),
                    reason: "give at least one variant, or leave `variants` out".into(),
                }));
            }
            v.clone()
        }
    };
    // More variants than the limit are refused before any is built (each costs a
    // model), however many other problems there are.
    if specs.len() > crate::sim::limits::MAX_VARIANTS {
        problems.push(scen_problem(Problem {
            path: "variants".into(),
            reason: format!(
                "{} variants; at most {} (the limit on variants, plain or from a grid)",
                specs.len(),
                crate::sim::limits::MAX_VARIANTS
            ),
        }));
        return Err(InputError::Invalid(problems));
    }
    // Variant names are checked as written.
    if sc.variants.is_some() {
        for (i, spec) in specs.iter().enumerate() {
            if let Err(e) = crate::config::names::check(&spec.name) {
                problems.push(scen_problem(Problem {
                    path: format!("variants[{i}].name"),
                    reason: e.to_string(),
                }));
            }
            if specs[..i].iter().any(|o| o.name == spec.name) {
                problems.push(scen_problem(Problem {
                    path: format!("variants[{i}].name"),
                    reason: format!("duplicate variant name `{}`", spec.name),
                }));
            }
        }
    }
    // A grid multiplies the variants: its paths are resolved in each variant's model
    // (after the scenario's and the variant's overrides, with defaults filled in).
    let mut grid: Option<Grid> = None;
    if let Some(cfg) = &sc.grid {
        let bases: Vec<(String, Value)> = specs
            .iter()
            .map(|spec| {
                let mut v = mval.clone();
                for ov in [&sc.overrides, &spec.overrides].into_iter().flatten() {
                    if ov.is_object() {
                        merge_patch(&mut v, ov);
                    }
                }
                let filled = serde_json::from_value::<ModelConfig>(v.clone())
                    .ok()
                    .and_then(|m| serde_json::to_value(m).ok());
                let mut base = filled.unwrap_or(v);
                // The workload is addressed as `workload.*`, beside the model's fields
                // (a model has no field of that name), as this variant offers it.
                let mut w = wval.clone();
                if let Some(ov) = spec.workload.as_ref().filter(|ov| ov.is_object()) {
                    merge_patch(&mut w, ov);
                }
                let w = serde_json::from_value::<WorkloadConfig>(w.clone())
                    .ok()
                    .and_then(|w| serde_json::to_value(w).ok())
                    .unwrap_or(w);
                if let Value::Object(m) = &mut base {
                    m.insert(WORKLOAD.into(), w);
                }
                let name = if sc.variants.is_some() {
                    spec.name.clone()
                } else {
                    String::new()
                };
                (name, base)
            })
            .collect();
        let mut gp = Problems::new();
        grid = grid::expand(cfg, &bases, &mut gp);
        problems.extend(gp.list.into_iter().map(&scen_problem));
    }
    // What to build: (scenario variant, grid cell).
    let builds: Vec<(usize, Option<usize>)> = match &grid {
        None => (0..specs.len()).map(|i| (i, None)).collect(),
        Some(g) => g
            .cells
            .iter()
            .enumerate()
            .map(|(c, cell)| (cell.base, Some(c)))
            .collect(),
    };
    let mut variants = Vec::new();
    // Captures replayed by flows, read once each whatever the variants.
    let mut captures = CaptureCache::new();
    // Problems of each variant's model and of the scenario against it: a problem every
    // variant has is reported once, one only some have names them.
    let mut variant_problems: Vec<Vec<FileProblem>> = Vec::new();
    for (i, cell) in builds {
        let spec = &specs[i];
        let mut patches: Vec<(String, &Value)> = Vec::new();
        if let Some(ov) = &sc.overrides {
            patches.push(("overrides".into(), ov));
        }
        if let Some(ov) = &spec.overrides {
            patches.push((format!("variants[{i}].overrides"), ov));
        }
        let mut wpatches: Vec<(String, Value)> = Vec::new();
        if let Some(ov) = &spec.workload {
            wpatches.push((format!("variants[{i}].workload"), ov.clone()));
        }
        let (name, description, grid_patches) = match (cell, &grid) {
            (Some(c), Some(g)) => {
                let cell = &g.cells[c];
                let mut desc: Vec<String> = g
                    .axes
                    .iter()
                    .zip(cell.values(&g.axes))
                    .map(|(a, v)| format!("{} = {}", a.path, grid::fmt_value(v)))
                    .collect();
                if !spec.description.is_empty() {
                    desc.push(spec.description.clone());
                }
                // A parameter under `workload.` patches the workload, any other the model.
                let mut gp: Vec<(String, Value)> = Vec::new();
                for ((k, a), &j) in g.axes.iter().enumerate().zip(&cell.index) {
                    let at = format!("grid.parameters[{k}].values[{j}]");
                    match a.segments.split_first() {
                        Some((grid::Segment::Key(w), rest)) if w == WORKLOAD => {
                            wpatches.push((at, grid::patch(rest, a.values[j])));
                        }
                        _ => gp.push((at, grid::patch(&a.segments, a.values[j]))),
                    }
                }
                (cell.variant.clone(), desc.join("; "), gp)
            }
            _ => (spec.name.clone(), spec.description.clone(), Vec::new()),
        };
        patches.extend(grid_patches.iter().map(|(at, v)| (at.clone(), v)));
        // Every variant is read, whatever the others' problems, so that all of them are
        // reported at once.
        let (model, mut probs) = build_model((&sfile, &text), (&mfile, &mtext), &mval, &patches);
        let wp: Vec<(String, &Value)> = wpatches.iter().map(|(at, v)| (at.clone(), v)).collect();
        let (flows, wprobs) =
            build_workload((&sfile, &text), &wval, &wp, sc.load.unit, &mut |rel| {
                read_capture(files, dir, rel, &mut captures)
            });
        probs.extend(wprobs);
        variant_problems.push(probs);
        variants.push((name, description, model, flows));
    }
    if variants.is_empty() {
        return Err(InputError::Invalid(problems));
    }

    // The scenario itself: what does not depend on the model.
    let mut p = Problems::new();
    p.positive("duration_s", sc.duration_s, "s");
    if sc.duration_s > 0.0 && sc.duration_s < 1e-9 {
        // Less than 1 ns is no sending time (it would round to a few picoseconds or to
        // 0, and every rate per second of it would be 0/0).
        p.push(
            "duration_s",
            format!("must be at least 1 ns (1e-9 s), got {}", sc.duration_s),
        );
    }
    p.non_negative("drain_s", sc.drain_s, "s");
    p.at_least("replications", sc.replications as u64, 1, "replication");
    if sc.replications > crate::sim::limits::MAX_REPLICATIONS {
        p.push(
            "replications",
            format!(
                "must be at most {} replications, got {}",
                crate::sim::limits::MAX_REPLICATIONS,
                sc.replications
            ),
        );
    }
    if sc.duration_s.is_finite() && sc.drain_s.is_finite() && sc.duration_s + sc.drain_s > MAX_RUN_S
    {
        p.push(
            "duration_s",
            format!("duration_s + drain_s must be at most {MAX_RUN_S} s per point"),
        );
    }
    if let Some(slo) = sc.latency_slo_us
        && !(0.001..=1_000_000.0).contains(&slo)
    {
        p.push(
            "latency_slo_us",
            format!("must be 0.001 to 1,000,000 us, got {slo}"),
        );
    }
    if let Some(tl) = &sc.timeline {
        p.positive("timeline.bucket_ms", tl.bucket_ms, "ms");
        if tl.bucket_ms > 0.0 && (sc.duration_s + sc.drain_s) * 1e3 / tl.bucket_ms > 10_000_000.0 {
            p.push(
                "timeline.bucket_ms",
                "more than 10 million buckets per point: use wider buckets",
            );
        }
    }
    let values = load_values(&sc.load, &mut p);
    // Runs: variants x points x replications, whichever way each was asked for.
    let nvariants = grid.as_ref().map_or(specs.len(), |g| g.cells.len()).max(1);
    let runs = (nvariants as u128) * (values.len() as u128) * (sc.replications as u128);
    if runs > crate::sim::limits::MAX_RUNS as u128 {
        p.push(
            if sc.replications > 1 {
                "replications"
            } else {
                "load"
            },
            format!(
                "{nvariants} variant(s) x {} load point(s) x {} replication(s) = {runs} runs; \
                 at most {} runs in a sweep",
                values.len(),
                sc.replications,
                crate::sim::limits::MAX_RUNS
            ),
        );
    }
    if let (Some(g), Some(cfg)) = (&mut grid, &sc.grid) {
        let lowest = values.iter().copied().fold(f64::INFINITY, f64::min);
        g.latency_at = cfg.latency_at.unwrap_or(lowest);
        g.latency_point = grid::find_point(&values, g.latency_at);
        if g.latency_point.is_none() && !values.is_empty() {
            let pts: Vec<String> = values.iter().map(|v| grid::fmt_value(*v)).collect();
            p.push(
                "grid.latency_at",
                format!(
                    "must be one of the load points ({} {}), got {}",
                    pts.join(", "),
                    unit_name(sc.load.unit),
                    grid::fmt_value(g.latency_at)
                ),
            );
        }
    }
    problems.extend(p.list.into_iter().map(&scen_problem));

    // What depends on each variant's model (its NICs, their line rates), checked for
    // every variant on its own. The driver costs each NIC's role needs are located in
    // the model file.
    let mut found: Vec<(FileProblem, Vec<usize>)> = Vec::new();
    let mut points: Vec<Vec<LoadPoint>> = Vec::new();
    for ((vi, (_, _, model, flows)), model_problems) in
        variants.iter().enumerate().zip(variant_problems)
    {
        let mut p = Problems::new();
        let mut roles = Problems::new();
        // (A model or workload that could not be read has only its reading problems.)
        if let (Some(model), Some(flows)) = (model, flows) {
            points.push(variant_points(&sc, flows, model, &mfile, &values, &mut p));
            model.check_roles(flows, &mut roles);
        }
        let located = model_problems
            .into_iter()
            .chain(p.list.into_iter().map(&scen_problem))
            .chain(roles.list.into_iter().map(|problem| FileProblem {
                file: mfile.clone(),
                problem,
            }));
        for prob in located {
            match found.iter_mut().find(|(q, _)| *q == prob) {
                // (The same problem twice in one variant still counts that variant once.)
                Some((_, vs)) if vs.last() == Some(&vi) => {}
                Some((_, vs)) => vs.push(vi),
                None => found.push((prob, vec![vi])),
            }
        }
    }
    for (mut prob, vs) in found {
        if vs.len() < variants.len() {
            let names: Vec<String> = vs.iter().map(|&i| format!("`{}`", variants[i].0)).collect();
            let which = if names.len() == 1 {
                "variant"
            } else {
                "variants"
            };
            prob.problem.reason = format!(
                "{} (with {which} {})",
                prob.problem.reason,
                names.join(", ")
            );
        }
        problems.push(prob);
    }

    let measured = match &sc.measured {
        None => None,
        Some(m) => read_table_file(files, dir, m, "measured", &sfile, &mut problems, |f, t| {
            smartbits::read_table(f, t)
        })?,
    };
    let measured_rates = match &sc.measured_rates {
        None => None,
        Some(m) => {
            let names: Vec<String> = variants.iter().map(|(n, _, _, _)| n.clone()).collect();
            let table = read_table_file(
                files,
                dir,
                m,
                "measured_rates",
                &sfile,
                &mut problems,
                |f, t| crate::config::measured_rates::read_table(f, t, &names),
            )?;
            if let Some((_, rows)) = &table {
                // Rates over the sending period: drops and counters count the drain
                // too, and the table has no load column.
                let counted = rows.iter().find(|r| r.figure != "forwarded_pps");
                if let Some(r) = counted.filter(|_| sc.drain_s > 0.0) {
                    problems.push(scen_problem(Problem {
                        path: "drain_s".into(),
                        reason: format!(
                            "must be 0 with `measured_rates` comparing `{}`: drops and \
                             counters count the drain too, and the table's rates are over \
                             the sending period",
                            r.figure
                        ),
                    }));
                }
                let n = points.first().map_or(0, |p| p.len());
                if n > 1 {
                    problems.push(scen_problem(Problem {
                        path: "load".into(),
                        reason: format!(
                            "has {n} points; `measured_rates` compares each variant at one \
                             load point (the table has no load column)"
                        ),
                    }));
                }
            }
            table
        }
    };
    if !problems.is_empty() {
        return Err(InputError::Invalid(problems));
    }
    let last_bit = sc.latency_from == crate::model::stats::LatencyFrom::LastBit;
    let variants = variants
        .into_iter()
        .zip(points)
        .map(|((name, description, model, flows), points)| {
            let model = model.expect("read without problems");
            let flows = flows.expect("read without problems");
            // (Every capture was read above: these are the same bytes.)
            let (flows, points) = replayed_flows(flows, points, &model, last_bit, &mut |rel| {
                read_capture(files, dir, rel, &mut captures)
            });
            Variant {
                name,
                description,
                model,
                points,
                flows,
            }
        })
        .collect();
    Ok(Experiment {
        variants,
        name: stem,
        path: sfile,
        description: sc.description,
        model_path: mfile,
        flows: sc.workload.flows,
        duration_s: sc.duration_s,
        drain_s: sc.drain_s,
        seed: sc.seed,
        replications: sc.replications,
        load_unit: sc.load.unit,
        measured,
        measured_rates,
        timeline_bucket_ms: sc.timeline.as_ref().map(|t| t.bucket_ms),
        latency_from: sc.latency_from,
        latency_slo_us: sc.latency_slo_us,
        grid,
    })
}

/// The key of the workload in a scenario, and the first step of a grid path into it.
const WORKLOAD: &str = "workload";

/// Apply `patches` (each with the path prefix it is written under: a variant's
/// `workload`, a grid value) to the scenario's workload `base` (as written) and read it,
/// with the checks that do not depend on the model; problems are located where the
/// value was set, as [`build_model`] locates them. The flows are `None` when the
/// workload could not be read; every problem found is returned either way.
fn build_workload(
    (sfile, stext): (&str, &str),
    base: &Value,
    patches: &[(String, &Value)],
    unit: LoadUnit,
    capture: &mut dyn FnMut(&str) -> Result<Arc<CaptureFile>, String>,
) -> (Option<Vec<FlowConfig>>, Vec<FileProblem>) {
    let mut problems = Vec::new();
    let mut w = base.clone();
    let here = |problem: Problem| FileProblem {
        file: sfile.into(),
        problem,
    };
    for (prefix, ov) in patches {
        if !ov.is_object() {
            problems.push(here(Problem {
                path: prefix.clone(),
                reason: "must be an object (a JSON merge patch of the workload)".into(),
            }));
            continue;
        }
        let mut un = Vec::new();
        unmatched_patch_keys(&w, ov, prefix, &mut un);
        for p in un {
            if !problems.contains(&here(p.clone())) {
                problems.push(here(p));
            }
        }
        merge_patch(&mut w, ov);
    }
    // Where the value at `path` (inside the workload) was set: the last patch that
    // touched it, else the scenario's `workload`.
    let locate = |p: Problem| -> Problem {
        if let Some(path) = patch_site(patches, base, &p.path) {
            return Problem {
                path,
                reason: p.reason,
            };
        }
        let path = if p.path == "." {
            WORKLOAD.to_string()
        } else {
            join(WORKLOAD, &p.path)
        };
        Problem {
            path,
            reason: p.reason,
        }
    };
    let written = w.clone();
    let mut workload: WorkloadConfig = match read_all(w) {
        Ok(w) => w,
        Err(list) => {
            problems.extend(list.into_iter().map(|p| here(located(stext, locate(p)))));
            return (None, problems);
        }
    };
    let mut p = Problems::new();
    // Flows replaying a capture: what the capture itself gives may not be written too,
    // and the capture is read (its sizes, rate and hash join the flow).
    let mut replayed = 0;
    let mut captures = 0;
    for (i, f) in workload.flows.iter_mut().enumerate() {
        if f.arrivals.capture().is_none() || i >= crate::sim::limits::MAX_FLOWS {
            replayed += 1;
            continue;
        }
        captures += 1;
        let as_written = &written["flows"][i];
        for (field, what) in [
            ("frame_bytes", "sizes"),
            ("tuple", "addresses, ports and protocols"),
        ] {
            if as_written.get(field).is_some() {
                p.push(
                    &format!("flows[{i}].{field}"),
                    format!("a replayed capture's {what} are the captured ones: remove it"),
                );
            }
        }
        let as_captured = f.arrivals.capture().map(|c| c.timing)
            == Some(crate::model::capture::CaptureTiming::AsCaptured);
        if as_captured && as_written.get("rate_pps").is_some() {
            p.push(
                &format!("flows[{i}].rate_pps"),
                "a capture replayed `as-captured` sends at its own rate: remove `rate_pps`, \
                 or replay it `scaled` (the default)",
            );
        }
        let pcap = f
            .arrivals
            .capture()
            .map(|c| c.pcap.clone())
            .unwrap_or_default();
        match capture(&pcap) {
            Ok(c) => {
                replayed += c.tuples.len();
                crate::config::capture::describe(f, &c);
            }
            Err(e) => p.push(&format!("flows[{i}].arrivals.pcap"), e),
        }
    }
    // (Without a capture, the count of flows below says it: a 10^5-flow
    // patch was refused with a message about a capture's 5-tuples.)
    if captures > 0 && replayed > crate::sim::limits::MAX_FLOWS {
        p.push(
            "flows",
            format!(
                "{replayed} flows once each capture's 5-tuples are flows of their own; at most {}",
                crate::sim::limits::MAX_FLOWS
            ),
        );
    }
    let flows = &workload.flows;
    if flows.len() > crate::sim::limits::MAX_FLOWS {
        p.push(
            "flows",
            format!(
                "{} flows; at most {}",
                flows.len(),
                crate::sim::limits::MAX_FLOWS
            ),
        );
    }
    if flows.len() <= crate::sim::limits::MAX_FLOWS {
        for (i, f) in flows.iter().enumerate() {
            p.at(format!("flows[{i}]"), |p| check_flow(f, unit, p));
        }
        // Results, traces and counters name each flow (its `name`, else `<from>-<to>`):
        // two flows of one name would be one in them (accepted quietly).
        let mut names: Vec<(String, usize)> =
            flows.iter().map(|f| f.display_name()).zip(0..).collect();
        names.sort();
        for w in names.windows(2).filter(|w| w[0].0 == w[1].0) {
            let (j, i) = (w[0].1, w[1].1);
            p.push(
                &format!("flows[{i}].name"),
                format!(
                    "`{}` is also the name of `flows[{j}]` (a flow without a `name` is named \
                     `<from>-<to>`): results name each flow, so give each a name of its own",
                    w[0].0
                ),
            );
        }
    }
    problems.extend(p.list.into_iter().map(|p| here(locate(p))));
    (Some(workload.flows), problems)
}

/// Where the value at `path` (inside the patched document `base`) was set: at the
/// path in the last of `patches` that touched it (a grid value at the grid's own
/// field), or `None` when no patch did.
fn patch_site(patches: &[(String, &Value)], base: &Value, path: &str) -> Option<String> {
    patches.iter().rev().find_map(|(prefix, ov)| {
        if !ov.is_object() {
            return None;
        }
        let op = overridden(ov, base, path)?;
        Some(if prefix.starts_with("grid.") {
            prefix.clone()
        } else {
            join(prefix, &op)
        })
    })
}

/// The capture at `rel` (as written in the scenario, in `dir`), read and parsed once
/// per file: the same bytes for every variant that replays it.
fn read_capture(
    files: &dyn FileSource,
    dir: &Path,
    rel: &str,
    cache: &mut CaptureCache,
) -> Result<Arc<CaptureFile>, String> {
    let path = files.resolve(dir, rel);
    if let Some(c) = cache.by_path.get(&path) {
        return c.clone();
    }
    let id = files.identity(&path);
    if let Some(c) = id.and_then(|id| cache.by_id.get(&id)) {
        let c = c.clone();
        cache.by_path.insert(path, c.clone());
        return c;
    }
    let shown = path.display();
    let read = files
        .read_bytes(&path)
        .map_err(|e| format!("cannot read capture `{shown}`: {e}"))
        .and_then(|bytes| {
            crate::config::capture::parse(&bytes)
                .map(Arc::new)
                .map_err(|e| format!("capture `{shown}`: {e}"))
        });
    if let Some(id) = id {
        cache.by_id.insert(id, read.clone());
    }
    cache.by_path.insert(path, read.clone());
    read
}

/// The flows a run offers: each flow replaying a capture becomes one flow per 5-tuple
/// of the capture ([`crate::config::capture::expand`]), with its share of the flow's
/// rate at every point; a flow beside them keeps the 5-tuple its number gave it.
fn replayed_flows(
    flows: Vec<FlowConfig>,
    mut points: Vec<LoadPoint>,
    model: &ModelConfig,
    last_bit: bool,
    capture: &mut dyn FnMut(&str) -> Result<Arc<CaptureFile>, String>,
) -> (Vec<FlowConfig>, Vec<LoadPoint>) {
    if flows.iter().all(|f| f.arrivals.capture().is_none()) {
        return (flows, points);
    }
    let mut out = Vec::new();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); points.len()];
    for (i, f) in flows.into_iter().enumerate() {
        let read = f.arrivals.capture().map(|c| capture(&c.pcap));
        let nic = model.nic_index(&f.from).and_then(|n| model.nics.get(n));
        let at: Vec<f64> = points.iter().map(|p| p.rates_pps[i]).collect();
        match (read, nic) {
            (Some(Ok(c)), Some(nic)) => {
                let link = Link::new(nic.line_rate_bps);
                for (g, r) in crate::config::capture::expand(&f, &c, link, last_bit, &at) {
                    for (j, x) in r.into_iter().enumerate() {
                        rates[j].push(x);
                    }
                    out.push(g);
                }
            }
            // (A capture that could not be read was refused before.)
            _ => {
                let mut g = f;
                if g.tuple.is_none() {
                    g.tuple = Some(TupleConfig::default_for(i));
                }
                for (j, x) in at.into_iter().enumerate() {
                    rates[j].push(x);
                }
                out.push(g);
            }
        }
    }
    for (p, r) in points.iter_mut().zip(rates) {
        p.rates_pps = r;
    }
    (out, points)
}

/// Checks of a flow that do not depend on the model.
fn check_flow(f: &FlowConfig, unit: LoadUnit, p: &mut Problems) {
    p.at("frame_bytes", |p| f.frame_bytes.validate(p));
    let closed = f.arrivals == crate::model::traffic::Arrivals::ClosedLoop;
    if closed != (unit == LoadUnit::Outstanding) {
        p.push(
            "arrivals",
            "closed-loop flows go with `load.unit` = `outstanding`, and only they",
        );
    }
    p.non_negative("turnaround_ns", f.turnaround_ns, "ns");
    if let Some(c) = &f.peer_coalescing {
        p.non_negative("peer_coalescing.rx_ticks_ns", c.rx_ticks_ns, "ns");
        p.non_negative("peer_coalescing.tx_ticks_ns", c.tx_ticks_ns, "ns");
        if !closed {
            p.push(
                "peer_coalescing",
                "applies to `closed-loop` flows only (a tester port does not answer)",
            );
        }
    }
    if let Some(r) = f.rate_pps {
        p.positive("rate_pps", r, "frames/s");
        if closed {
            p.push(
                "rate_pps",
                "a closed-loop flow's load is its outstanding transactions",
            );
        }
    }
    // The phase and clock of a tester port drive its constant-rate stream; a Poisson
    // or closed-loop flow has neither, and a value given there would be ignored.
    if f.arrivals != crate::model::traffic::Arrivals::Constant {
        for (field, v) in [("start_phase", f.start_phase), ("clock_ppm", f.clock_ppm)] {
            if v != crate::model::traffic::OrRandom::default() {
                p.push(
                    field,
                    "applies to `constant` arrivals only (a Poisson, closed-loop or replayed \
                     flow has no phase or period to shift): remove it",
                );
            }
        }
    }
    if let crate::model::traffic::OrRandom::Value(ppm) = f.clock_ppm
        && !(-1000.0..=1000.0).contains(&ppm)
    {
        p.push(
            "clock_ppm",
            format!("must be -1000 to 1000 ppm or \"random\", got {ppm}"),
        );
    }
    if let crate::model::traffic::OrRandom::Value(ph) = f.start_phase
        && !(0.0..1.0).contains(&ph)
    {
        p.push(
            "start_phase",
            format!(
                "must be in [0, 1) (a fraction of the inter-frame period) or \"random\", got {ph}"
            ),
        );
    }
}

/// The load points of one variant: each flow's rate from its input NIC's line rate in
/// `model`, with the checks that depend on the model (NICs named by the flows, rates
/// above line rate).
fn variant_points(
    sc: &ScenarioFile,
    flows: &[FlowConfig],
    model: &ModelConfig,
    mfile: &str,
    values: &[f64],
    p: &mut Problems,
) -> Vec<LoadPoint> {
    if flows.is_empty() && model.sender.is_none() {
        p.push(
            "workload.flows",
            "at least one flow is required (or a `sender` in the model)",
        );
    }
    for (i, f) in flows.iter().enumerate() {
        p.at(format!("workload.flows[{i}]"), |p| {
            if model.nic_index(&f.from).is_none() {
                p.push("from", format!("no NIC named `{}` in {mfile}", f.from));
            }
            if model.nic_index(&f.to).is_none() {
                p.push("to", format!("no NIC named `{}` in {mfile}", f.to));
            }
        });
    }
    // Each flow's line rate in frames/s, where its NIC and frame size are valid.
    let line_fps: Vec<Option<f64>> = flows
        .iter()
        .map(|f| {
            let nic = model.nics.get(model.nic_index(&f.from)?)?;
            let mut fp = Problems::new();
            f.frame_bytes.validate(&mut fp);
            let (lo, hi) = crate::model::nic::LINE_RATE_BPS_RANGE;
            ((lo..=hi).contains(&nic.line_rate_bps) && fp.is_empty())
                .then(|| Link::new(nic.line_rate_bps).line_rate_fps(f.frame_bytes.mean_bytes()))
        })
        .collect();
    // Per flow, the points at which it would send no frame in the run: (point, rate).
    let mut silent: Vec<Vec<(usize, f64)>> = vec![Vec::new(); flows.len()];
    // Per flow, the points above its line rate: (point, value, percent of line rate).
    let mut over: Vec<Vec<(usize, f64, f64)>> = vec![Vec::new(); flows.len()];
    // Input ports whose flows together exceed its line rate, reported once each.
    let mut shared_over: Vec<String> = Vec::new();
    let mut points = Vec::new();
    for (j, v) in values.iter().enumerate() {
        let mut rates = Vec::new();
        let mut shares: Vec<(&FlowConfig, f64)> = Vec::new();
        let mut pct0 = None;
        for (i, (f, fps)) in flows.iter().zip(&line_fps).enumerate() {
            let Some(fps) = *fps else { continue };
            let (rate, pct) = match (f.rate_pps, sc.load.unit) {
                (Some(r), _) => (r, r / fps * 100.0),
                (None, LoadUnit::Percent) => (v / 100.0 * fps, *v),
                (None, LoadUnit::Pps) => (*v, v / fps * 100.0),
                (None, LoadUnit::Outstanding) => (v.round().max(1.0), 0.0),
            };
            if pct > 100.0 + 1e-9 && !sc.allow_overload {
                if f.rate_pps.is_some() {
                    // The flow's own rate, the same at every point: said once, at it.
                    if j == 0 {
                        p.push(
                            &format!("workload.flows[{i}].rate_pps"),
                            format!(
                                "{rate} frames/s is {pct:.1} % of the line rate of flow `{}` ({fps:.1} frames/s): above 100 %",
                                f.display_name()
                            ),
                        );
                    }
                } else {
                    over[i].push((j, *v, pct));
                }
            }
            // (Only with a valid duration: an invalid one is reported by itself.)
            if f.arrivals != crate::model::traffic::Arrivals::ClosedLoop
                && (1e-9..=MAX_RUN_S).contains(&sc.duration_s)
                && rate.is_finite()
                && rate > 0.0
                && frames_in_run(rate, sc.duration_s) < 1.0
            {
                silent[i].push((j, rate));
            }
            if f.rate_pps.is_none() && pct0.is_none() {
                pct0 = Some(pct);
            }
            rates.push(rate);
            shares.push((f, pct));
        }
        // Flows into the same NIC share its one input wire: together they may not offer
        // more than its line rate either.
        for (k, (f, _)) in shares.iter().enumerate() {
            if shares[..k].iter().any(|(g, _)| g.from == f.from) {
                continue;
            }
            let same: Vec<&(&FlowConfig, f64)> =
                shares.iter().filter(|(g, _)| g.from == f.from).collect();
            let sum: f64 = same.iter().map(|(_, pct)| pct).sum();
            // Said once per input port, at its first point above the line, and only
            // where no flow of it is above its own line (reported above).
            if same.len() > 1
                && sum > 100.0 + 1e-9
                && !sc.allow_overload
                && !shared_over.contains(&f.from)
                && same.iter().all(|(_, pct)| *pct <= 100.0 + 1e-9)
            {
                shared_over.push(f.from.clone());
                let names: Vec<String> = same
                    .iter()
                    .map(|(g, _)| format!("`{}`", g.display_name()))
                    .collect();
                p.push(
                    &load_field(&sc.load, j),
                    format!(
                        "flows {} into `{}` together offer {sum:.1} % of its line rate: above 100 %",
                        names.join(", "),
                        f.from
                    ),
                );
            }
        }
        points.push(LoadPoint {
            load: *v,
            load_pct: pct0.unwrap_or(0.0),
            outstanding: (sc.load.unit == LoadUnit::Outstanding).then(|| v.round().max(1.0)),
            rates_pps: rates,
        });
    }
    for ((f, fps), over) in flows.iter().zip(&line_fps).zip(&over) {
        if let (Some(fps), Some(&(j, v, pct))) = (fps, over.first()) {
            // The unit hint only when every point of the sweep would fit as frames/s.
            let as_pps = values.iter().all(|&x| x <= *fps);
            p.push(
                &load_field(&sc.load, j),
                over_line_rate(sc.load.unit, f, *fps, over, v, pct, as_pps),
            );
        }
    }
    for (i, (f, at)) in flows.iter().zip(&silent).enumerate() {
        let Some(&(j, rate)) = at.first() else {
            continue;
        };
        let field = if f
            .arrivals
            .capture()
            .is_some_and(|c| c.timing == crate::model::capture::CaptureTiming::AsCaptured)
        {
            format!("workload.flows[{i}].arrivals.pcap")
        } else if f.rate_pps.is_some() {
            format!("workload.flows[{i}].rate_pps")
        } else if sc.load.points.is_some() {
            format!("load.points[{j}]")
        } else {
            "load.from".into()
        };
        let how = if f.arrivals == crate::model::traffic::Arrivals::Constant {
            "a constant flow sends floor(rate x duration_s) frames"
        } else if f.arrivals.capture().is_some() {
            "a replayed capture sends about rate x duration_s frames"
        } else {
            "a Poisson flow sends rate x duration_s frames on average"
        };
        p.push(
            &field,
            format!(
                "flow `{}` sends no frame in the run at {} of the {} load points (from {} {}): \
                 {} frames/s for {} s is {} frames ({how}): raise the load or `duration_s`",
                f.display_name(),
                at.len(),
                values.len(),
                values[j],
                unit_name(sc.load.unit),
                sig4(rate),
                sc.duration_s,
                sig4(rate * sc.duration_s),
            ),
        );
    }
    points
}

/// `v` to 4 significant digits, without an exponent in the common range (`0.1`,
/// `1.488e-7`).
fn sig4(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if (-4..6).contains(&mag) {
        let d = (3 - mag).max(0) as usize;
        let t = format!("{v:.d$}");
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    } else {
        format!("{v:.3e}")
    }
}

/// Frames a flow of `rate` frames/s sends in `duration_s` (the constant source's
/// count before its floor, with its tolerance for the rounding of the product).
fn frames_in_run(rate: f64, duration_s: f64) -> f64 {
    rate * duration_s + 1e-6
}

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

/// One problem for all the points above flow `f`'s line rate (`fps` frames/s at 100 %),
/// the first (`v`, `pct`) named, with a hint when the sweep's points, in percent, would
/// all fit as frames/s (`as_pps`: a `load.unit` left at its default).
fn over_line_rate(
    unit: LoadUnit,
    f: &FlowConfig,
    fps: f64,
    over: &[(usize, f64, f64)],
    v: f64,
    pct: f64,
    as_pps: bool,
) -> String {
    let u = unit_name(unit);
    let mut m = if over.len() == 1 {
        format!(
            "load of {v} {u} is {pct:.1} % of the line rate of flow `{}` ({fps:.1} frames/s): above 100 %",
            f.display_name()
        )
    } else {
        let shown: Vec<String> = over
            .iter()
            .take(5)
            .map(|(_, v, _)| format!("{v}"))
            .collect();
        format!(
            "{} load points are above 100 % of the line rate of flow `{}` ({fps:.1} frames/s): {}{} {u} (the first is {pct:.1} %)",
            over.len(),
            f.display_name(),
            shown.join(", "),
            if over.len() > 5 { ", ..." } else { "" },
        )
    };
    if unit == LoadUnit::Percent && as_pps {
        m.push_str(
            "; `load.unit` is \"percent\" (of the line rate per flow): if these are frames/s \
             per flow, write \"unit\": \"pps\"",
        );
    }
    m
}

fn load_field(l: &LoadSpec, j: usize) -> String {
    if l.points.is_some() {
        format!("load.points[{j}]")
    } else {
        "load.to".into()
    }
}

/// Expand the load spec into values, recording problems.
fn load_values(l: &LoadSpec, p: &mut Problems) -> Vec<f64> {
    let range = (l.from, l.to, l.step);
    let max = crate::sim::limits::MAX_POINTS;
    let vals = match (&l.points, range) {
        (Some(pts), (None, None, None)) if pts.len() > max => {
            p.push(
                "load.points",
                format!("{} points; at most {max} (as for a range)", pts.len()),
            );
            return vec![];
        }
        (Some(pts), (None, None, None)) => pts.clone(),
        (None, (Some(from), Some(to), Some(step))) => {
            if !(step.is_finite() && step > 0.0) {
                p.push("load.step", format!("must be greater than 0, got {step}"));
                return vec![];
            }
            if from > to {
                p.push(
                    "load",
                    format!("`from` ({from}) is greater than `to` ({to})"),
                );
                return vec![];
            }
            let n = ((to - from) / step + 1e-9).floor() + 1.0;
            if !(n.is_finite() && n <= max as f64) {
                p.push("load", format!("range gives {n} points; at most {max}"));
                return vec![];
            }
            let n = n as usize;
            (0..n).map(|i| from + i as f64 * step).collect()
        }
        _ => {
            p.push(
                "load",
                "give either `points` or all of `from`, `to` and `step`",
            );
            return vec![];
        }
    };
    if vals.is_empty() {
        p.push(
            "load.points",
            "the sweep is empty: give at least one load point",
        );
    }
    if l.unit == LoadUnit::Outstanding {
        for (i, v) in vals.iter().enumerate() {
            if *v > 1_000_000.0 {
                p.push(
                    &format!("load.points[{i}]"),
                    format!("at most 1000000 outstanding transactions, got {v}"),
                );
            } else if v.is_finite() && v.fract() != 0.0 {
                // (It ran as the nearest whole number, at least 1: 0.5 ran as 1.)
                p.push(
                    &load_field(l, i),
                    format!("must be a whole number of outstanding transactions, got {v}"),
                );
            }
        }
    }
    if l.points.is_some() {
        for (i, v) in vals.iter().enumerate() {
            p.positive(&format!("load.points[{i}]"), *v, unit_name(l.unit));
        }
        // A point given twice would be run twice and reported as two rows of one load
        // (accepted quietly); found by sorting, not pair by pair.
        let mut order: Vec<(f64, usize)> = vals.iter().copied().zip(0..).collect();
        order.sort_by(|a, b| {
            a.0.partial_cmp(&b.0)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.1.cmp(&b.1))
        });
        let mut twice: Vec<(usize, usize)> = Vec::new();
        let mut k = 0;
        while k < order.len() {
            let mut e = k + 1;
            while e < order.len() && order[e].0 == order[k].0 {
                twice.push((order[e].1, order[k].1));
                e += 1;
            }
            k = e;
        }
        twice.sort_unstable();
        for (i, first) in twice {
            p.push(
                &format!("load.points[{i}]"),
                format!(
                    "{} is given twice (also `load.points[{first}]`): each load point once",
                    vals[i]
                ),
            );
        }
    } else if let Some(first) = vals.first() {
        p.positive("load.from", *first, unit_name(l.unit));
    }
    vals
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_descriptions_name_mechanisms_not_source_paths() {
        assert_eq!(
            unlink_text("see [`crate::model::nic::xps`]) and [`crate::config::grid`]."),
            "see `xps`) and `grid`."
        );
        assert_eq!(unlink_text("an open [`crate::x"), "an open [`crate::x");
        for s in [scenario_schema(), model_schema()] {
            assert!(!s.contains("crate::"), "a source path is left in a schema");
        }
    }

    #[test]
    fn merge_patch_by_name_and_index() {
        let mut m = json!({"a": 1, "nics": [{"name": "dc0", "x": 1}, {"name": "dc1", "x": 2}]});
        merge_patch(
            &mut m,
            &json!({"a": null, "nics": {"dc1": {"x": 5}, "0": {"y": 3}}}),
        );
        assert_eq!(
            m,
            json!({"nics": [{"name": "dc0", "x": 1, "y": 3}, {"name": "dc1", "x": 5}]})
        );
    }

    #[test]
    fn override_attribution() {
        let model = json!({"kernel": {"q": 1}, "nics": [{"name": "dc0", "s": 1}]});
        let ov = json!({"nics": {"dc0": {"s": 0}}});
        assert_eq!(
            overridden(&ov, &model, "nics[0].s").as_deref(),
            Some("nics.dc0.s")
        );
        assert_eq!(overridden(&ov, &model, "kernel.q"), None);
    }

    #[test]
    fn normalize_resolves_parent_dirs() {
        assert_eq!(
            normalize(Path::new("scenarios/../models/a.json")),
            PathBuf::from("models/a.json")
        );
        // A `..` never cancels a `..` (it used to: `../../m/a.json` became `m/a.json`).
        assert_eq!(
            normalize(Path::new("../../models/a.json")),
            PathBuf::from("../../models/a.json")
        );
        assert_eq!(
            normalize(Path::new("a/../../b/./c.json")),
            PathBuf::from("../b/c.json")
        );
        assert_eq!(normalize(Path::new("/../x")), PathBuf::from("/x"));
    }
}
