//! Results of a sweep: what `results.json` holds.
//!
//! Every point carries its `variant` (`"default"` for scenarios without variants), the
//! offered load, the `total` over flows and each flow, the interrupt rate and the CPU
//! time by level. With more than one replication each figure is the mean over
//! replications and `ci95` holds, in the same shape, the half-width of its 95 %
//! confidence interval (Student t with n-1 degrees of freedom, from statrs), except the
//! extremes: latency `min` and `max` (and round-trip `min`, `max`) are the smallest and
//! largest value seen in any replication (of those that delivered a frame), and the
//! timeline's `max_latency_us` and the `*.high_water` counters the highest any
//! replication reached; their `ci95` entries are 0 (an extreme is not an estimate
//! of a mean). Percentiles (`p50`, `p99`, `p999`) are means of each replication's
//! percentile, with their confidence intervals. Latency figures are taken over the
//! replications that delivered a frame (one that delivered none has no latency). The
//! counters are the union over replications: one a replication lacks (a counter
//! published only once it counts, such as `napi.busy_polls`) counted 0 there.
//!
//! This folder also holds [`summary`] (a sweep in a few numbers), [`report`] (the table
//! printed after a run), [`output`] (the result files, written atomically), [`books`]
//! (the results' own arithmetic checked on reading) and [`linux`] (a point's counters in
//! the layouts of Linux's /proc files and `ethtool -S`).
//!
//! Uses [`crate::sim`], [`crate::model`] (per-flow statistics, the timeline, CPU levels),
//! [`crate::config`] (SmartBits tables, grids, names, bounded reads) and [`crate::host`]
//! (the [`RunStats`] of a run); not [`crate::trace`]. Nothing below
//! it imports it: [`crate::experiment`] and the binary do.

pub mod books;
pub mod linux;
mod mpstat;
pub mod output;
pub mod rates;
pub mod report;
pub mod summary;

use crate::config::smartbits::{self, MeasuredPoint};
use crate::host::RunStats;
use crate::model::cpu::{LEVELS, Level};
use crate::model::stats::FlowStats;
use crate::model::timeline::{TimelineRow, TimelineSummary};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::BTreeMap;

/// Latency of delivered frames \[us\]: the summary of one run's distribution
/// ([`LatencySummary`]), or across replications the extremes over them and the means of
/// the other figures.
pub use crate::model::stats::LatencySummary;
pub use mpstat::{MpstatResult, MpstatRow};

/// Frames lost, by where \[frames\].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DropsResult {
    /// RX descriptor ring full.
    pub rx_ring: f64,
    /// ipintrq full.
    pub ipintrq: f64,
    /// Output if_snd full.
    pub if_snd: f64,
    /// The screend-like user process's queue full.
    pub user_queue: f64,
    /// NIC receive FIFO overflowed (DMA too slow).
    #[serde(default)]
    pub rx_fifo: f64,
    /// Transmit FIFO underrun (frame aborted).
    #[serde(default)]
    pub tx_underrun: f64,
    /// Freed by a chip reset.
    #[serde(default)]
    pub reset: f64,
    /// Dropped by an XDP program (XDP_DROP); left out of results.json when none was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub xdp: f64,
    /// Dropped by a netfilter rule before routing (`kernel.prerouting_drop`); left out
    /// of results.json when none was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub netfilter: f64,
    /// Received and freed by a user-space application that owns the NIC (a DPDK
    /// poll-mode driver's rxonly engine, `nics[].policy` `dpdk`); left out of
    /// results.json when none was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub application: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Figures of one flow, or of the total.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    /// Flow name, or `Total`.
    pub name: String,
    /// Frames sent by the tester.
    pub sent: f64,
    /// Frames that left the host's output port.
    pub received: f64,
    /// `sent - received`: dropped, or still inside the host at the end.
    pub lost: f64,
    /// Loss [% of sent].
    pub loss_pct: f64,
    /// Frames received out of sequence (one per gap, as SmartBits counts).
    pub out_of_sequence: f64,
    /// Frames still held in the host when the run ended (counted in `lost`).
    pub in_flight_at_end: f64,
    /// Frames that left the host while the tester was sending, per second of sending
    /// time: the throughput under load [frames/s]. Frames delivered during the drain
    /// are in `received` and `drained`, not here.
    pub forwarded_pps: f64,
    /// Frames that left the host after the tester stopped sending (during `drain_s`):
    /// what the queues held at the end of the load, counted in `received` as a tester
    /// counts them.
    #[serde(default)]
    pub drained: f64,
    /// Drops by site \[frames\].
    pub drops: DropsResult,
    /// Latency \[us\].
    pub latency_us: LatencySummary,
    /// Request/response flows: round trip per transaction at the peer \[us\]
    /// (`forwarded_pps` is then the transaction rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<LatencySummary>,
}

/// CPU time by level during the sending period [fraction of time, sums to 1]: the
/// model's levels, with the tasks at the user level that are not user processes
/// (ksoftirqd, a threaded NAPI kthread, a DPDK lcore) in `softirq`. How a Linux kernel
/// accounts the same time is [`MpstatResult`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuResult {
    /// Hardware interrupt handlers, the clock interrupt, work at splimp.
    pub interrupt: f64,
    /// Software interrupts (netisr, NET_RX, softclock), including NET_RX run by
    /// ksoftirqd, and the time of the other tasks of a receive policy at the user level
    /// (threaded NAPI kthreads, DPDK lcores).
    pub softirq: f64,
    /// Kernel threads (polling thread, taskqueue, busy poll) and idle-loop polling.
    pub kernel: f64,
    /// User processes.
    pub user: f64,
    /// Idle.
    pub idle: f64,
}

impl CpuResult {
    /// The split of `cpu_ps` (time per level, then idle \[ps\]), of which `ksoftirqd_ps`
    /// at the User level was the receive policies' tasks' there (ksoftirqd, NAPI
    /// kthreads, DPDK lcores; counted as software-interrupt time).
    pub fn split(cpu_ps: &[u64; LEVELS + 1], ksoftirqd_ps: u64) -> CpuResult {
        let busy: u64 = cpu_ps.iter().sum();
        let frac = |ps: u64| {
            if busy > 0 {
                ps as f64 / busy as f64
            } else {
                0.0
            }
        };
        CpuResult {
            interrupt: frac(cpu_ps[Level::Clock as usize] + cpu_ps[Level::HardIrq as usize]),
            softirq: frac(
                cpu_ps[Level::SoftIrq as usize] + cpu_ps[Level::SoftClock as usize] + ksoftirqd_ps,
            ),
            kernel: frac(cpu_ps[Level::Kernel as usize] + cpu_ps[Level::IdleLoop as usize]),
            user: frac(cpu_ps[Level::User as usize] - ksoftirqd_ps),
            idle: frac(cpu_ps[LEVELS]),
        }
    }
}

/// The user process's share and progress during the sending period.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UserResult {
    /// Fraction of CPU time it got.
    pub cpu_share: f64,
    /// Work units per second (cpu-bound) or packets per second (screend).
    pub work_per_s: f64,
}

/// The sending application's rate and CPU during the sending period.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SenderResult {
    /// Frames put on the wire per second [frames/s].
    pub pps: f64,
    /// TCP payload put on the wire, as ttcp reports it [Mbit/s].
    pub mbit_s: f64,
    /// Fraction of CPU time the process got (system time in vmstat's terms).
    pub cpu_share: f64,
}

/// The measured figures of a point (also the shape of its `ci95`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointFigures {
    /// All flows together.
    pub total: FlowResult,
    /// Each flow.
    pub flows: Vec<FlowResult>,
    /// Interrupts taken per second of sending time: passes over a line's handler chain
    /// (on a NIC's own line, its handler invocations) [1/s].
    pub interrupts_per_s: f64,
    /// Frames taken by interrupt handlers per interrupt taken (whole run).
    pub packets_per_interrupt: f64,
    /// CPU time by level (over all cores: each core's time counts once).
    pub cpu: CpuResult,
    /// CPU time by level on each core, on a host with more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<CpuResult>,
    /// CPU time as mpstat shows it, on a Linux host (a model whose NICs name their
    /// Linux driver, [`linux::is_linux_host`]); absent for the other models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpstat: Option<MpstatResult>,
    /// The user process, when the model has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserResult>,
    /// The sending application, when the model has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<SenderResult>,
    /// Latency timeline summary, when the scenario asks for a timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<TimelineSummary>,
    /// Policy counters by name (kern.polling.*, NAPI, moderation...), whole run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, f64>,
    /// Simulation events processed.
    pub events: f64,
}

/// One point of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// Variant name (`default` when the scenario has none).
    pub variant: String,
    /// Offered load [% of line rate].
    pub load_pct: f64,
    /// Offered rate, all flows [frames/s] (0 for request/response sweeps).
    pub offered_pps: f64,
    /// Transactions outstanding per flow (request/response sweeps only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outstanding: Option<f64>,
    /// Replications averaged.
    pub replications: u32,
    /// The figures (means over replications).
    #[serde(flatten)]
    pub figures: PointFigures,
    /// Half-widths of the 95 % confidence intervals, same shape (replications > 1 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<PointFigures>,
}

impl PointResult {
    /// This point as SmartBits rows: the `Total` row, then one per flow.
    pub fn smartbits_rows(&self) -> Vec<smartbits::Row> {
        let row = |r: &FlowResult, name: &str| {
            let l = &r.latency_us;
            smartbits::Row {
                name: name.to_string(),
                load_pct: self.load_pct,
                sent: r.sent,
                received: r.received,
                lost: r.lost,
                out_of_sequence: r.out_of_sequence,
                min_us: l.min,
                avg_us: l.avg,
                max_us: l.max,
                stddev_us: l.stddev,
            }
        };
        let mut rows = vec![row(&self.figures.total, "Total")];
        rows.extend(self.figures.flows.iter().map(|f| row(f, &f.name)));
        rows
    }
}

/// A measured SmartBits table carried along with the results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Path of the CSV as named by the scenario.
    pub file: String,
    /// Its rows, by load point.
    pub points: Vec<MeasuredPoint>,
}

/// A whole sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// Scenario name.
    pub scenario: String,
    /// Scenario description.
    pub description: String,
    /// Model file used.
    pub model: String,
    /// Seed.
    pub seed: u64,
    /// Sending time per point \[s\].
    pub duration_s: f64,
    /// Replications per point.
    pub replications: u32,
    /// Where the latencies start: the input frame's `last-bit` or `first-bit`.
    #[serde(default)]
    pub latency_from: crate::model::stats::LatencyFrom,
    /// The scenario's latency objective \[us\], whose share each flow's
    /// `latency_us.share_under_slo` gives (absent when the scenario sets none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_slo_us: Option<f64>,
    /// Measured table compared with, if any, copied in so the results are self-contained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
    /// Measured rates per variant beside the simulated ones, if the scenario names a
    /// table of them (`measured_rates`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_rates: Option<rates::RateComparison>,
    /// The grid's parameters and each cell's summary, when the scenario has a grid
    /// (before the points, so a reader finds it first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<GridResult>,
    /// The points, in sweep order.
    pub points: Vec<PointResult>,
    /// Latency timeline rows (replication 0 of each point), written to timeline.csv,
    /// not to results.json.
    #[serde(skip)]
    pub timeline: Vec<TimelineRow>,
    /// The checksum of the timeline.csv written beside this results.json
    /// ([`crate::results::output::timeline_checksum`] of its bytes), when it has one: `irqsim
    /// plot` draws a timeline.csv only when its bytes have this checksum, so never
    /// another run's. Set by [`crate::results::output::write_all`], which writes both (absent
    /// in results held in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline_csv_fnv1a: Option<String>,
}

/// What [`Results`] hold besides the figures of the runs: the header and, per point,
/// what it is. [`ResultsFrame::assemble`] fills it with the runs of a sweep; it is saved
/// with a shard's runs (`irqsim run --shard`) so that `irqsim merge` can assemble the
/// results without the scenario files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultsFrame {
    /// Scenario name.
    pub scenario: String,
    /// Scenario description.
    pub description: String,
    /// Model file used.
    pub model: String,
    /// Seed.
    pub seed: u64,
    /// Sending time per point \[s\].
    pub duration_s: f64,
    /// Replications per point.
    pub replications: u32,
    /// Where the latencies start.
    pub latency_from: crate::model::stats::LatencyFrom,
    /// The latency objective \[us\], if any.
    pub latency_slo_us: Option<f64>,
    /// Measured table compared with, if any.
    pub measured: Option<Measured>,
    /// Measured rates per variant to compare with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_rates: Option<rates::MeasuredRates>,
    /// The points of every variant, in sweep order (variant, then load point).
    pub points: Vec<PointFrame>,
    /// The grid, when the scenario has one: what its summary needs besides the points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<GridFrame>,
}

/// A grid as a [`ResultsFrame`] keeps it: its parameters and cells, without summaries
/// (`crate::results::summary` computes them from the assembled points).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridFrame {
    /// The swept parameters.
    pub parameters: Vec<GridParameterResult>,
    /// Load point of the p99 latency, in the unit of the scenario's `load.unit`.
    pub latency_at: f64,
    /// Its index in each variant's sweep (`None` when that point was not run).
    pub latency_point: Option<usize>,
    /// The cells, in variant order.
    pub cells: Vec<GridCellFrame>,
}

/// A cell of a [`GridFrame`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridCellFrame {
    /// Variant name.
    pub variant: String,
    /// The scenario's variant it builds on, when the scenario has variants.
    pub base: Option<String>,
    /// The value of each parameter.
    pub values: Vec<f64>,
}

/// One point of a [`ResultsFrame`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointFrame {
    /// Variant name.
    pub variant: String,
    /// Offered load [% of line rate].
    pub load_pct: f64,
    /// Offered rate, all flows [frames/s] (0 for request/response sweeps).
    pub offered_pps: f64,
    /// Transactions outstanding per flow (request/response sweeps only).
    pub outstanding: Option<f64>,
}

/// Problems with the names in results read back (a results.json or a shard's frame)
/// that irqsim would turn into paths ([`crate::config::names`]): the scenario's, each point's
/// variant, each grid cell's variant and base. A file irqsim wrote has none.
fn name_problems<'a>(
    scenario: &str,
    points: impl Iterator<Item = &'a str>,
    cells: impl Iterator<Item = (&'a str, Option<&'a str>)>,
    prefix: &str,
) -> Vec<crate::sim::problems::Problem> {
    use crate::config::names::{check, check_variant};
    use crate::sim::problems::Problem;
    let mut found = Vec::new();
    let mut put = |path: String, r: Result<(), crate::config::names::NameError>| {
        if let Err(e) = r {
            found.push(Problem {
                path,
                reason: e.to_string(),
            });
        }
    };
    put(format!("{prefix}scenario"), check(scenario));
    for (i, v) in points.enumerate() {
        put(format!("{prefix}points[{i}].variant"), check_variant(v));
    }
    for (i, (v, base)) in cells.enumerate() {
        put(format!("{prefix}grid.cells[{i}].variant"), check_variant(v));
        if let Some(b) = base {
            put(format!("{prefix}grid.cells[{i}].base"), check(b));
        }
    }
    found
}

impl ResultsFrame {
    /// Names that would be turned into paths and cannot be ([`crate::config::names`]), located
    /// by their JSON path under `prefix` (`frame.` in shard.json).
    pub fn name_problems(&self, prefix: &str) -> Vec<crate::sim::problems::Problem> {
        name_problems(
            &self.scenario,
            self.points.iter().map(|p| p.variant.as_str()),
            self.grid
                .iter()
                .flat_map(|g| &g.cells)
                .map(|c| (c.variant.as_str(), c.base.as_deref())),
            prefix,
        )
    }

    /// Runs in the sweep: points x replications.
    ///
    /// (The grid summary of the results is left to `crate::results::summary::assemble`.)
    pub fn runs(&self) -> usize {
        self.points.len() * self.replications as usize
    }

    /// The results of a sweep from all its runs in sweep order (each point's
    /// replications together), each as its figures and timeline rows: figures
    /// aggregated per point, timeline rows in order.
    ///
    /// # Panics
    /// If `runs` does not hold [`ResultsFrame::runs`] runs (a caller's bug).
    pub fn assemble(
        &self,
        runs: impl IntoIterator<Item = (PointFigures, Vec<TimelineRow>)>,
    ) -> Results {
        let reps = self.replications as usize;
        // The rows in one vector of exactly their number (grown run by run, it held up
        // to twice as many).
        let runs: Vec<(PointFigures, Vec<TimelineRow>)> = runs.into_iter().collect();
        let mut timeline = Vec::with_capacity(runs.iter().map(|(_, rows)| rows.len()).sum());
        let figs: Vec<PointFigures> = runs
            .into_iter()
            .map(|(figures, rows)| {
                timeline.extend(rows);
                figures
            })
            .collect();
        assert_eq!(
            figs.len(),
            self.runs(),
            "one run's figures per run of the sweep"
        );
        let points: Vec<PointResult> = figs
            .chunks(reps)
            .zip(&self.points)
            .map(|(reps_figs, pf)| {
                let (figures, ci95) = PointFigures::aggregate(reps_figs);
                PointResult {
                    variant: pf.variant.clone(),
                    load_pct: pf.load_pct,
                    offered_pps: pf.offered_pps,
                    outstanding: pf.outstanding,
                    replications: self.replications,
                    figures,
                    ci95,
                }
            })
            .collect();
        Results {
            scenario: self.scenario.clone(),
            description: self.description.clone(),
            model: self.model.clone(),
            seed: self.seed,
            duration_s: self.duration_s,
            replications: self.replications,
            latency_from: self.latency_from,
            latency_slo_us: self.latency_slo_us,
            measured: self.measured.clone(),
            measured_rates: self
                .measured_rates
                .as_ref()
                .map(|m| rates::compare(m, &points, self.duration_s)),
            points,
            grid: None,
            timeline,
            timeline_csv_fnv1a: None,
        }
    }
}

/// What a variant's sweep comes to, in a few numbers (see [`crate::results::summary`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VariantSummary {
    /// Maximum loss-free forwarding rate [frames/s]: the largest offered rate such that
    /// every point offered at most that much lost less than 0.1 % of its frames; `null`
    /// when the lowest point already loses.
    pub mlfrr_pps: Option<f64>,
    /// Offered load of the MLFRR point [% of line rate].
    pub mlfrr_load_pct: Option<f64>,
    /// Highest forwarded rate of the sweep [frames/s].
    pub peak_pps: f64,
    /// Offered load where it occurs (the lowest, on a tie) [% of line rate].
    pub peak_load_pct: f64,
    /// Offered rate where it occurs [frames/s].
    pub peak_offered_pps: f64,
    /// Offered load of the highest load point [% of line rate].
    pub top_load_pct: f64,
    /// Offered rate of the highest load point [frames/s].
    pub top_offered_pps: f64,
    /// Forwarded rate at the highest load point [frames/s]: below `peak_pps` under
    /// livelock.
    pub top_forwarded_pps: f64,
    /// 99th-percentile latency at the grid's `latency_at` point \[us\]; `null` when no
    /// frame was delivered there (or the point was not run).
    pub p99_us: Option<f64>,
}

/// A swept parameter of a grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridParameterResult {
    /// Name in variant names, tables and plots.
    pub name: String,
    /// Path in the model, as written.
    pub path: String,
    /// Its values, in order.
    pub values: Vec<f64>,
}

/// One cell of a grid: a variant and its summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridCellResult {
    /// Variant name (its points carry it).
    pub variant: String,
    /// The scenario's variant it builds on, when the scenario has variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The value of each parameter, in the order of `parameters`.
    pub values: Vec<f64>,
    /// The summary of its sweep.
    pub summary: VariantSummary,
}

/// A grid's parameters and its cells' summaries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridResult {
    /// The swept parameters.
    pub parameters: Vec<GridParameterResult>,
    /// Load point of `p99_us`, in the unit of the scenario's `load.unit`.
    pub latency_at: f64,
    /// Offered load of the `latency_at` point [% of line rate] (null when not run).
    pub latency_at_load_pct: Option<f64>,
    /// Offered rate of the `latency_at` point [frames/s] (null when not run).
    pub latency_at_offered_pps: Option<f64>,
    /// Loss below which a point counts as loss-free for the MLFRR [% of frames sent].
    pub loss_free_pct: f64,
    /// The cells, in variant order (scenario variant, then the first parameter, ...,
    /// the last parameter fastest).
    pub cells: Vec<GridCellResult>,
}

fn flow_result(
    name: &str,
    s: &FlowStats,
    secs: f64,
    slo: Option<crate::sim::time::SimTime>,
) -> FlowResult {
    let l = s.latency.summary_with_slo(slo);
    FlowResult {
        name: name.to_string(),
        sent: s.sent as f64,
        received: s.received as f64,
        lost: (s.sent - s.received) as f64,
        loss_pct: if s.sent > 0 {
            100.0 * (s.sent - s.received) as f64 / s.sent as f64
        } else {
            0.0
        },
        out_of_sequence: s.out_of_sequence as f64,
        in_flight_at_end: s.in_flight_at_end as f64,
        forwarded_pps: (s.received - s.drained) as f64 / secs,
        drained: s.drained as f64,
        drops: DropsResult {
            rx_ring: s.drops.rx_ring as f64,
            ipintrq: s.drops.ipintrq as f64,
            if_snd: s.drops.if_snd as f64,
            user_queue: s.drops.user_queue as f64,
            rx_fifo: s.drops.rx_fifo as f64,
            tx_underrun: s.drops.tx_underrun as f64,
            reset: s.drops.reset as f64,
            xdp: s.drops.xdp as f64,
            netfilter: s.drops.netfilter as f64,
            application: s.drops.application as f64,
        },
        latency_us: l,
        rtt_us: s.rtt.as_ref().map(|r| r.summary()),
    }
}

impl PointFigures {
    /// Figures of one run.
    /// `slo`: the scenario's latency objective, whose share each flow reports.
    pub fn from_run(
        r: &RunStats,
        has_user: bool,
        slo: Option<crate::sim::time::SimTime>,
    ) -> PointFigures {
        let secs = r.duration.as_secs_f64();
        let busy: u64 = r.cpu_ps.iter().sum();
        let frac = |ps: u64| {
            if busy > 0 {
                ps as f64 / busy as f64
            } else {
                0.0
            }
        };
        let [user_ps, ksoftirqd_ps] = r.task_ps;
        PointFigures {
            total: flow_result("Total", &r.total, secs, slo),
            flows: r
                .flows
                .iter()
                .map(|(n, s)| flow_result(n, s, secs, slo))
                .collect(),
            interrupts_per_s: r.interrupts as f64 / secs,
            packets_per_interrupt: if r.interrupts_all > 0 {
                r.isr_packets as f64 / r.interrupts_all as f64
            } else {
                0.0
            },
            cpu: CpuResult::split(&r.cpu_ps, ksoftirqd_ps),
            cores: r
                .core_cpu_ps
                .iter()
                .zip(&r.core_ksoftirqd_ps)
                .map(|(c, &k)| CpuResult::split(c, k))
                .collect(),
            mpstat: None,
            user: has_user.then(|| UserResult {
                cpu_share: frac(user_ps),
                work_per_s: r.user_work / secs,
            }),
            sender: r.sender.as_ref().map(|snd| {
                let f = &r.flows[snd.flow].1;
                let frames = (f.received - f.drained) as f64;
                SenderResult {
                    pps: frames / secs,
                    mbit_s: frames * snd.payload_bytes as f64 * 8.0 / secs / 1e6,
                    cpu_share: frac(snd.cpu_ps),
                }
            }),
            timeline: r.timeline.as_ref().map(|t| t.summary()),
            counters: r.counters.clone(),
            events: r.events as f64,
        }
    }

    /// These figures with the run's CPU time as mpstat shows it ([`MpstatResult`]),
    /// for a Linux host.
    pub fn with_mpstat(mut self, r: &RunStats) -> PointFigures {
        self.mpstat = Some(MpstatResult::of(&r.core_cputime_ps, &r.core_idle_state_ps));
        self
    }

    /// Mean over replications and, for more than one, the 95 % CI half-widths.
    pub fn aggregate(reps: &[PointFigures]) -> (PointFigures, Option<PointFigures>) {
        assert!(!reps.is_empty());
        if reps.len() == 1 {
            return (reps[0].clone(), None);
        }
        let vals: Vec<Value> = reps
            .iter()
            .map(|r| serde_json::to_value(r).expect("plain data"))
            .collect();
        let (mean, half) = combine(&vals, &mean_ci95);
        let mut mean: PointFigures = serde_json::from_value(mean).expect("same shape");
        let mut half: PointFigures = serde_json::from_value(half).expect("same shape");
        // Latencies come from the replications that saw one (a replication that
        // delivered nothing reports zeros, which are not latencies): the extremes over
        // them, and the other figures means over them with their intervals.
        let extremes =
            |m: &mut LatencySummary, h: &mut LatencySummary, each: &[&LatencySummary]| {
                if each.is_empty() {
                    return;
                }
                m.min = each.iter().map(|l| l.min).fold(f64::INFINITY, f64::min);
                m.max = each.iter().map(|l| l.max).fold(0.0, f64::max);
                h.min = 0.0;
                h.max = 0.0;
                if each.len() < reps.len() {
                    if m.share_under_slo.is_some() {
                        let xs: Vec<f64> = each.iter().filter_map(|l| l.share_under_slo).collect();
                        let (ms, hs) = mean_ci95(&xs);
                        (m.share_under_slo, h.share_under_slo) = (Some(ms), Some(hs));
                    }
                    let get: [fn(&LatencySummary) -> f64; 5] =
                        [|l| l.avg, |l| l.stddev, |l| l.p50, |l| l.p99, |l| l.p999];
                    let (mut ms, mut hs) = ([0.0; 5], [0.0; 5]);
                    for (k, g) in get.iter().enumerate() {
                        let xs: Vec<f64> = each.iter().map(|l| g(l)).collect();
                        (ms[k], hs[k]) = mean_ci95(&xs);
                    }
                    [m.avg, m.stddev, m.p50, m.p99, m.p999] = ms;
                    [h.avg, h.stddev, h.p50, h.p99, h.p999] = hs;
                }
            };
        let flows = |r: &PointFigures| -> Vec<FlowResult> {
            std::iter::once(r.total.clone())
                .chain(r.flows.iter().cloned())
                .collect()
        };
        let reps_flows: Vec<Vec<FlowResult>> = reps.iter().map(flows).collect();
        let (mt, mf) = (&mut mean.total, &mut mean.flows);
        let (ht, hf) = (&mut half.total, &mut half.flows);
        let targets = std::iter::once((mt, ht)).chain(mf.iter_mut().zip(hf.iter_mut()));
        for (i, (m, h)) in targets.enumerate() {
            let lat: Vec<&LatencySummary> = reps_flows
                .iter()
                .filter(|f| f[i].received > 0.0)
                .map(|f| &f[i].latency_us)
                .collect();
            extremes(&mut m.latency_us, &mut h.latency_us, &lat);
            if let (Some(mr), Some(hr)) = (&mut m.rtt_us, &mut h.rtt_us) {
                let rtt: Vec<&LatencySummary> = reps_flows
                    .iter()
                    .filter_map(|f| f[i].rtt_us.as_ref())
                    .filter(|r| r.max > 0.0)
                    .collect();
                extremes(mr, hr, &rtt);
            }
        }
        if let (Some(mt), Some(ht)) = (&mut mean.timeline, &mut half.timeline) {
            mt.max_latency_us = reps
                .iter()
                .filter_map(|r| r.timeline.as_ref())
                .map(|t| t.max_latency_us)
                .fold(0.0, f64::max);
            ht.max_latency_us = 0.0;
        }
        for (k, v) in mean.counters.iter_mut() {
            if k.ends_with(".high_water") {
                *v = reps
                    .iter()
                    .filter_map(|r| r.counters.get(k))
                    .fold(0.0, |a, &b| f64::max(a, b));
                half.counters.insert(k.clone(), 0.0);
            }
        }
        (mean, Some(half))
    }
}

/// Mean of `xs` and the half-width of its 95 % confidence interval (Student t with n-1
/// degrees of freedom; 0 for a single value, which has no interval).
fn mean_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (m, 0.0);
    }
    let t = StudentsT::new(0.0, 1.0, n - 1.0)
        .expect("n > 1")
        .inverse_cdf(0.975);
    let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, t * (var / n).sqrt())
}

/// Walk the replications' JSON trees, combining numeric leaves with `f` (mean,
/// half-width); other leaves are taken from the first tree that has them.
///
/// An object's keys are the union over the trees, and a number missing from a tree
/// counts as 0 there. The trees differ only where the figures do: replications differ
/// only in seed, so every field, and every counter a mechanism publishes because the
/// model has it, is in all of them; the keys some lack are the counters published only
/// once they have counted something (`napi.busy_polls`, `napi.busy_poll_packets`), and
/// their absence means 0.
fn combine(vals: &[Value], f: &dyn Fn(&[f64]) -> (f64, f64)) -> (Value, Value) {
    let first = vals.iter().find(|v| !v.is_null()).unwrap_or(&vals[0]);
    match first {
        Value::Number(_) => {
            let xs: Vec<f64> = vals.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect();
            let (m, h) = f(&xs);
            (Value::from(m), Value::from(h))
        }
        Value::Object(_) => {
            let mut a = serde_json::Map::new();
            let mut b = serde_json::Map::new();
            let keys = vals
                .iter()
                .filter_map(|v| v.as_object())
                .flat_map(|o| o.keys());
            for k in keys {
                if a.contains_key(k) {
                    continue;
                }
                let sub: Vec<Value> = vals.iter().map(|v| v[k].clone()).collect();
                let (x, y) = combine(&sub, f);
                a.insert(k.clone(), x);
                b.insert(k.clone(), y);
            }
            (Value::Object(a), Value::Object(b))
        }
        Value::Array(arr) => {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for i in 0..arr.len() {
                let sub: Vec<Value> = vals.iter().map(|v| v[i].clone()).collect();
                let (x, y) = combine(&sub, f);
                a.push(x);
                b.push(y);
            }
            (Value::Array(a), Value::Array(b))
        }
        other => (other.clone(), other.clone()),
    }
}

/// Write whole-number floats as integers (`148809`, not `148809.0`).
pub fn tidy_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64()
                && n.is_f64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy_numbers),
        Value::Object(o) => o.values_mut().for_each(tidy_numbers),
        _ => {}
    }
}

impl Results {
    /// Names that would be turned into paths and cannot be ([`crate::config::names`]), located
    /// by their JSON path: `irqsim plot` and `compare` refuse such a results.json.
    pub fn name_problems(&self) -> Vec<crate::sim::problems::Problem> {
        name_problems(
            &self.scenario,
            self.points.iter().map(|p| p.variant.as_str()),
            self.grid
                .iter()
                .flat_map(|g| &g.cells)
                .map(|c| (c.variant.as_str(), c.base.as_deref())),
            "",
        )
    }

    /// Pretty JSON with tidy numbers.
    pub fn to_json(&self) -> String {
        self.to_json_with_timeline(self.timeline_csv_fnv1a.as_deref())
    }

    /// [`Results::to_json`] recording `checksum` as the timeline's (or none).
    pub fn to_json_with_timeline(&self, checksum: Option<&str>) -> String {
        let mut v = serde_json::to_value(self).expect("plain data");
        if let Some(o) = v.as_object_mut() {
            match checksum {
                Some(c) => o.insert("timeline_csv_fnv1a".into(), c.into()),
                None => o.remove("timeline_csv_fnv1a"),
            };
        }
        tidy_numbers(&mut v);
        serde_json::to_string_pretty(&v).expect("plain data") + "\n"
    }
}

#[cfg(test)]
mod tests;
