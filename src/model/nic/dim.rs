//! Dynamic Interrupt Moderation: Linux's `net_dim`, the adaptive choice of a receive or
//! transmit queue's interrupt moderation (mlx5e, bnxt, virtio_net, enetc, ... use it).
//!
//! In a model: `nics[].dim` (a NIC, or each queue of a multi-queue NIC, with the `napi`
//! policy). The host samples the queue after each NAPI completion that re-enables the
//! interrupt (not after one that defers it: mlx5e_napi_poll returns before its DIM
//! call when napi_complete_done says no) and programs a new profile at once into the
//! queue's moderation (`packets` = `pkts`; `cq_period_ns` = `usec` in the CQ's period
//! mode: restarted by each completion in CQE mode, by each event in EQE mode, see
//! [`crate::model::nic::moderation`]); the work item's own CPU time and delay are not
//! modelled. Counters: `<nic>.dim.profile` (programmed at the end),
//! `.measurements`, `.profile_changes`, `.profile<k>_ms` (time in each profile).
//!
//! ## The mechanism
//!
//! A queue's completion interrupts are moderated by a pair (`usec`, `pkts`): the NIC
//! holds an interrupt until `usec` microseconds have passed or `pkts` completions are
//! waiting. DIM picks the pair from a table of 5 **profiles**, from the least moderated
//! (index 0) to the most (index 4), and moves along the table while the traffic rate
//! it measures improves, like a hill climber:
//!
//! ```text
//!  interrupt -> NAPI poll -> napi_complete_done -> net_dim(sample: time, events, packets, bytes)
//!      every DIM_NEVENTS = 64 events: rates (bytes, packets, events per ms) vs the last ones
//!        better -> keep going;  not better -> turn;  top found -> park;  10 steps -> park tired
//!      profile index moved -> schedule_work -> driver's work item programs (usec, pkts)
//! ```
//!
//! Every rule below is the kernel's; the file and function is named with each.
//!
//! - **Where it is called** ([`Dim::sample`]): after `napi_complete_done`, with the
//!   queue's running counters: mlx5e's `mlx5e_napi_poll` calls `mlx5e_handle_rx_dim`
//!   (`drivers/net/ethernet/mellanox/mlx5/core/en_txrx.c`), which passes the CQ's
//!   `event_ctr` (a `u16` in `struct mlx5e_cq`, incremented by each completion event in
//!   `mlx5e_completion_event`) and the ring's packet and byte totals to
//!   `dim_update_sample` (`include/linux/dim.h`), which keeps them as `u16`, `u32`,
//!   `u32` and stamps the sample with `ktime_get()` (ns).
//! - **Measurement** (`net_dim`, `lib/dim/net_dim.c`): in `DIM_START_MEASURE` the sample
//!   becomes the start sample (`DIM_MEASURE_IN_PROGRESS`); later calls wait until
//!   `BIT_GAP(16, events) >= DIM_NEVENTS` (64), then compute the rates and decide. If the
//!   profile index moved, the state becomes `DIM_APPLY_NEW_PROFILE` and the work item is
//!   scheduled; calls are ignored until the work item sets `DIM_START_MEASURE` again
//!   (mlx5e: `mlx5e_complete_dim_work`, `en_dim.c`; here: [`Dim::profile_applied`]).
//!   Otherwise the same sample starts the next measurement.
//! - **Rates** ([`calc_stats`]; `dim_calc_stats`, `lib/dim/dim.c`): `delta_us =
//!   ktime_us_delta(end, start)` (truncated to whole µs, then to `u32`); packet and byte
//!   counts by `BIT_GAP(32, ...)` (wrap-safe); `ppms`, `bpms` = `DIV_ROUND_UP(n *
//!   USEC_PER_MSEC, delta_us)` and `epms = DIV_ROUND_UP(DIM_NEVENTS * USEC_PER_MSEC,
//!   delta_us)` (always 64 events, whatever the real count); no rates (and no decision)
//!   if `delta_us` is 0.
//! - **Comparison** ([`compare`]; `net_dim_stats_compare`, `net_dim.c`): bytes per ms
//!   first, then packets per ms (higher is better), then events per ms (lower is
//!   better); a difference counts only if `IS_SIGNIFICANT_DIFF` (`dim.h`): `ref != 0 &&
//!   100 * |val - ref| / ref > 10` in integer arithmetic. A previous rate of 0 makes any
//!   non-zero rate better.
//! - **Decision** (`net_dim_decision`, `net_dim.c`, with `dim_on_top`, `dim_turn`,
//!   `dim_park_on_top`, `dim_park_tired` of `dim.c`):
//!   - `PARKING_ON_TOP`: leave parking if the rates are not the same as the ones it
//!     parked with (which it keeps: while parked the reference is not updated);
//!   - `PARKING_TIRED`: count `tired` down, leave parking when it reaches 0;
//!   - `GOING_RIGHT` / `GOING_LEFT`: if not better, turn (and zero the new direction's
//!     step count); if on top (going right after more than one step left and exactly one
//!     step right, or the mirror), park on top; else step (`net_dim_step`): at `tired ==
//!     2 * 5` park tired, at the table's edge park on top, else move one profile and
//!     count the step and `tired`.
//!   - Leaving parking (`net_dim_exit_parking`) goes left unless the index is 0, and
//!     steps at once.
//!
//! ## Parameters ([`DimConfig`])
//!
//! - `mode`: `"eqe"` or `"cqe"`, the CQ period mode, which selects the profile table
//!   (`DIM_CQ_PERIOD_MODE_START_FROM_EQE` / `_CQE`): whether the moderation timer starts
//!   at the event or restarts with each completion. Default `"cqe"`, what mlx5e takes for
//!   its receive queues when the device has `cq_period_start_from_cqe`
//!   (`mlx5e_build_nic_params`, `en_main.c`); its transmit queues use `"eqe"`.
//! - `direction`: `"rx"` or `"tx"`, the other half of the table choice. Default `"rx"`.
//! - `initial_profile`: the profile programmed before DIM's first decision [index
//!   0..=4]. Default 1 = `NET_DIM_DEF_PROFILE_CQE` = `NET_DIM_DEF_PROFILE_EQE` (`dim.h`),
//!   what `net_dim_get_def_rx_moderation` / `_tx_` return and mlx5e programs when DIM is
//!   on (`mlx5e_reset_rx_moderation`). The algorithm's own index starts at 0 whatever
//!   this is: mlx5e allocates `struct dim` zeroed (`mlx5e_dim_enable`, `en_dim.c`), so
//!   the first decision under traffic steps right from 0 to 1.
//!
//! The profile tables ([`profiles`]; `net_dim.c`, `rx_profile` and `tx_profile`),
//! (`usec`, `pkts`) by index 0..=4:
//!
//! | | 0 | 1 | 2 | 3 | 4 |
//! |---|---|---|---|---|---|
//! | RX EQE | (1, 256) | (8, 256) | (64, 256) | (128, 256) | (256, 256) |
//! | RX CQE | (2, 256) | (8, 128) | (16, 64) | (32, 64) | (64, 64) |
//! | TX EQE | (1, 128) | (8, 128) | (32, 128) | (64, 128) | (128, 128) |
//! | TX CQE | (5, 128) | (8, 64) | (16, 32) | (32, 32) | (64, 32) |
//!
//! ## Counters ([`DimCounters`])
//!
//! `measurements` (decisions taken), `profile_changes` (decisions that moved the index:
//! work items scheduled), `parks_on_top`, `parks_tired`, `zero_time` (measurements
//! dropped because `delta_us` was 0), `ignored_while_applying` (calls during
//! `DIM_APPLY_NEW_PROFILE`), and the time spent with each profile programmed in the NIC
//! ([`Dim::time_in_profiles`]).
//!
//! ## Left out
//!
//! - The work item's delay and cost: the caller says when it ran
//!   ([`Dim::profile_applied`]); the firmware command that reprograms the CQ
//!   (`mlx5e_modify_cq_moderation`) takes no time here.
//! - What the moderation does to interrupts: this module only chooses (`usec`, `pkts`);
//!   the NIC model applies them.
//! - The user's profile tables (`ethtool --set-irq-moderation`, `net_dim_init_irq_moder`
//!   copies the defaults here) and the `comps` field and completion rates (`cpms`,
//!   `cpe_ratio`), which only `rdma_dim` reads.
//! - Rates above 2^31 per ms, where the kernel's `int` fields would overflow (2^31 bytes
//!   per ms is 17 Tbit/s): here they are `u64`.
//!
//! Read from: `lib/dim/net_dim.c` of kernel-patches/bpf @ 93987391c44e; `lib/dim/dim.c`
//! of torvalds/linux @ 01bc4ac9da94; `include/linux/dim.h` of intel-lab-lkp/linux @
//! 0717db82f83c; `en_txrx.c` of torvalds/linux @ 0eaed89c18ae; `en_dim.c` of
//! Kingxukai/linux @ 0291023e7330.

use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// Events per measurement: a decision is taken once 64 events have passed since the
/// start sample (`DIM_NEVENTS`, `include/linux/dim.h`).
pub const DIM_NEVENTS: u16 = 64;

/// Profiles per table (`NET_DIM_PARAMS_NUM_PROFILES`, `dim.h`).
pub const NUM_PROFILES: usize = 5;

/// Default profile index, programmed before the first decision (`NET_DIM_DEF_PROFILE_CQE`
/// and `NET_DIM_DEF_PROFILE_EQE`, both 1, `dim.h`).
pub const DEF_PROFILE: u8 = 1;

/// Steps after which the algorithm parks tired (`NET_DIM_PARAMS_NUM_PROFILES * 2` in
/// `net_dim_step`, `lib/dim/net_dim.c`).
pub const TIRED_STEPS: u8 = (NUM_PROFILES * 2) as u8;

/// Microseconds per millisecond (`USEC_PER_MSEC`, `include/vdso/time64.h`).
const USEC_PER_MSEC: u64 = 1_000;

/// A moderation profile: what the driver programs into the queue's completion queue
/// (`struct dim_cq_moder`, `dim.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moderation {
    /// Longest hold of an interrupt \[µs\].
    pub usecs: u16,
    /// Completions that fire the interrupt at once \[packets\].
    pub pkts: u16,
}

const fn m(usecs: u16, pkts: u16) -> Moderation {
    Moderation { usecs, pkts }
}

/// `NET_DIM_RX_EQE_PROFILES` (`net_dim.c`; `pkts` = `NET_DIM_DEFAULT_RX_CQ_PKTS_FROM_EQE`).
const RX_EQE: [Moderation; NUM_PROFILES] =
    [m(1, 256), m(8, 256), m(64, 256), m(128, 256), m(256, 256)];
/// `NET_DIM_RX_CQE_PROFILES` (`net_dim.c`).
const RX_CQE: [Moderation; NUM_PROFILES] = [m(2, 256), m(8, 128), m(16, 64), m(32, 64), m(64, 64)];
/// `NET_DIM_TX_EQE_PROFILES` (`net_dim.c`; `pkts` = `NET_DIM_DEFAULT_TX_CQ_PKTS_FROM_EQE`).
const TX_EQE: [Moderation; NUM_PROFILES] =
    [m(1, 128), m(8, 128), m(32, 128), m(64, 128), m(128, 128)];
/// `NET_DIM_TX_CQE_PROFILES` (`net_dim.c`).
const TX_CQE: [Moderation; NUM_PROFILES] = [m(5, 128), m(8, 64), m(16, 32), m(32, 32), m(64, 32)];

/// CQ period mode: when the NIC's moderation timer starts (`enum dim_cq_period_mode`,
/// `dim.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CqPeriodMode {
    /// The timer starts when the event is generated (`DIM_CQ_PERIOD_MODE_START_FROM_EQE`).
    Eqe,
    /// The timer restarts with each completion (`DIM_CQ_PERIOD_MODE_START_FROM_CQE`).
    Cqe,
}

/// Which queue the instance moderates: receive or transmit completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// A receive queue (`rx_profile`, `net_dim_get_rx_moderation`).
    Rx,
    /// A transmit queue (`tx_profile`, `net_dim_get_tx_moderation`).
    Tx,
}

/// The profile table of a direction and mode (`rx_profile[mode]` / `tx_profile[mode]`,
/// `lib/dim/net_dim.c`).
pub fn profiles(direction: Direction, mode: CqPeriodMode) -> &'static [Moderation; NUM_PROFILES] {
    match (direction, mode) {
        (Direction::Rx, CqPeriodMode::Eqe) => &RX_EQE,
        (Direction::Rx, CqPeriodMode::Cqe) => &RX_CQE,
        (Direction::Tx, CqPeriodMode::Eqe) => &TX_EQE,
        (Direction::Tx, CqPeriodMode::Cqe) => &TX_CQE,
    }
}

/// Parameters of one DIM instance (one queue).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DimConfig {
    /// CQ period mode, selects the profile table (default `"cqe"`).
    #[serde(default = "d_mode")]
    pub mode: CqPeriodMode,
    /// Receive or transmit queue, selects the profile table (default `"rx"`).
    #[serde(default = "d_direction")]
    pub direction: Direction,
    /// Profile programmed before the first decision [index 0..=4] (default 1,
    /// `NET_DIM_DEF_PROFILE_*`).
    #[serde(default = "d_initial_profile")]
    pub initial_profile: u8,
}

fn d_mode() -> CqPeriodMode {
    CqPeriodMode::Cqe
}
fn d_direction() -> Direction {
    Direction::Rx
}
fn d_initial_profile() -> u8 {
    DEF_PROFILE
}

impl Default for DimConfig {
    fn default() -> Self {
        DimConfig {
            mode: d_mode(),
            direction: d_direction(),
            initial_profile: d_initial_profile(),
        }
    }
}

impl DimConfig {
    /// Range checks: `initial_profile` must name one of the 5 profiles.
    pub fn validate(&self, p: &mut Problems) {
        if self.initial_profile as usize >= NUM_PROFILES {
            p.push(
                "initial_profile",
                format!(
                    "must be a profile index 0 to {}, got {}",
                    NUM_PROFILES - 1,
                    self.initial_profile
                ),
            );
        }
    }
}

/// One sample of a queue's counters, as `dim_update_sample` keeps them (`struct
/// dim_sample`, `dim.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// `ktime_get()` at the sample \[ns\].
    pub time_ns: u64,
    /// Packets so far, modulo 2^32.
    pub pkt_ctr: u32,
    /// Bytes so far, modulo 2^32.
    pub byte_ctr: u32,
    /// Completion events so far, modulo 2^16.
    pub event_ctr: u16,
}

impl Sample {
    /// The sample `dim_update_sample(events, packets, bytes)` takes at `now`: the time in
    /// whole nanoseconds, the counters truncated to their kernel widths.
    pub fn at(now: SimTime, events: u64, packets: u64, bytes: u64) -> Sample {
        Sample {
            time_ns: now.0 / SimTime::PS_PER_NS,
            pkt_ctr: packets as u32,
            byte_ctr: bytes as u32,
            event_ctr: events as u16,
        }
    }
}

/// Rates over one measurement (`struct dim_stats`, `dim.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets per millisecond [packets/ms].
    pub ppms: u64,
    /// Bytes per millisecond [bytes/ms].
    pub bpms: u64,
    /// Events per millisecond [events/ms], from `DIM_NEVENTS` events.
    pub epms: u64,
}

/// `DIV_ROUND_UP(n, d)` for `d > 0`.
fn div_round_up(n: u64, d: u64) -> u64 {
    n.div_ceil(d)
}

/// The rates between two samples, or `None` when less than a whole microsecond passed
/// (`dim_calc_stats`, `lib/dim/dim.c`: it returns false for `delta_us == 0`).
///
/// `delta_us` is `ktime_us_delta(end, start)`: the nanosecond difference divided by 1,000,
/// truncated, then kept in a `u32`. Packet and byte counts are `BIT_GAP(32, end, start)`,
/// so a counter that wrapped between the samples still gives the right count.
pub fn calc_stats(start: &Sample, end: &Sample) -> Option<Stats> {
    let delta_us = (end.time_ns.wrapping_sub(start.time_ns) / 1_000) as u32 as u64;
    let npkts = end.pkt_ctr.wrapping_sub(start.pkt_ctr) as u64;
    let nbytes = end.byte_ctr.wrapping_sub(start.byte_ctr) as u64;
    if delta_us == 0 {
        return None;
    }
    Some(Stats {
        ppms: div_round_up(npkts * USEC_PER_MSEC, delta_us),
        bpms: div_round_up(nbytes * USEC_PER_MSEC, delta_us),
        epms: div_round_up(DIM_NEVENTS as u64 * USEC_PER_MSEC, delta_us),
    })
}

/// `IS_SIGNIFICANT_DIFF(val, ref)` (`dim.h`): more than 10 % apart, in integer
/// arithmetic: `ref != 0 && 100 * |val - ref| / ref > 10`.
pub fn is_significant_diff(val: u64, reference: u64) -> bool {
    reference != 0 && 100 * val.abs_diff(reference) / reference > 10
}

/// Verdict of a measurement against the previous one (`enum dim_stats_state`, `dim.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `DIM_STATS_WORSE`.
    Worse,
    /// `DIM_STATS_SAME`.
    Same,
    /// `DIM_STATS_BETTER`.
    Better,
}

/// `net_dim_stats_compare` (`lib/dim/net_dim.c`): bytes per ms decide, then packets per
/// ms (more is better), then events per ms (fewer is better); only significant
/// differences count.
pub fn compare(curr: &Stats, prev: &Stats) -> Verdict {
    use Verdict::*;
    if prev.bpms == 0 {
        return if curr.bpms != 0 { Better } else { Same };
    }
    if is_significant_diff(curr.bpms, prev.bpms) {
        return if curr.bpms > prev.bpms { Better } else { Worse };
    }
    if prev.ppms == 0 {
        return if curr.ppms != 0 { Better } else { Same };
    }
    if is_significant_diff(curr.ppms, prev.ppms) {
        return if curr.ppms > prev.ppms { Better } else { Worse };
    }
    if prev.epms == 0 {
        return Same;
    }
    if is_significant_diff(curr.epms, prev.epms) {
        return if curr.epms < prev.epms { Better } else { Worse };
    }
    Same
}

/// Measurement state (`enum dim_state`, `dim.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeasureState {
    /// `DIM_START_MEASURE`: the next call takes the start sample.
    StartMeasure,
    /// `DIM_MEASURE_IN_PROGRESS`: waiting for `DIM_NEVENTS` events.
    MeasureInProgress,
    /// `DIM_APPLY_NEW_PROFILE`: the work item has not run yet; calls are ignored.
    ApplyNewProfile,
}

/// Tuning state (`enum dim_tune_state`, `dim.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuneState {
    /// `DIM_PARKING_ON_TOP`: a local best was found; leave on a significant change.
    ParkingOnTop,
    /// `DIM_PARKING_TIRED`: parked after too many steps; leave after `tired` decisions.
    ParkingTired,
    /// `DIM_GOING_RIGHT`: trying more moderation.
    GoingRight,
    /// `DIM_GOING_LEFT`: trying less moderation.
    GoingLeft,
}

/// Result of a step (`enum dim_step_result`, `dim.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepResult {
    Stepped,
    TooTired,
    OnEdge,
}

/// What a DIM instance counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DimCounters {
    /// Measurements that reached a decision (`net_dim_decision` calls) -- counter.
    pub measurements: u64,
    /// Decisions that moved the profile index (work items scheduled) -- counter.
    pub profile_changes: u64,
    /// Entries into `DIM_PARKING_ON_TOP` from a decision -- counter.
    pub parks_on_top: u64,
    /// Entries into `DIM_PARKING_TIRED` -- counter.
    pub parks_tired: u64,
    /// Measurements of 64 events or more dropped because less than 1 µs passed -- counter.
    pub zero_time: u64,
    /// Calls ignored while a new profile waited for the work item -- counter.
    pub ignored_while_applying: u64,
}

/// One queue's DIM instance (`struct dim`, `dim.h`) and its counters.
#[derive(Clone, Debug)]
pub struct Dim {
    table: &'static [Moderation; NUM_PROFILES],
    state: MeasureState,
    tune_state: TuneState,
    prev_stats: Stats,
    start_sample: Sample,
    profile_ix: u8,
    steps_right: u8,
    steps_left: u8,
    tired: u8,
    /// Profile programmed in the NIC, and since when.
    programmed: u8,
    programmed_since: SimTime,
    time_in_profile: [SimTime; NUM_PROFILES],
    counters: DimCounters,
}

impl Dim {
    /// A new instance at time zero, as the driver enables it: every field of `struct dim`
    /// zero (`DIM_START_MEASURE`, `DIM_PARKING_ON_TOP`, profile index 0, no previous
    /// rates), the NIC running `cfg.initial_profile`. `cfg` must be valid
    /// ([`DimConfig::validate`]); an out-of-range `initial_profile` is taken as the last
    /// profile.
    pub fn new(cfg: &DimConfig) -> Dim {
        Dim {
            table: profiles(cfg.direction, cfg.mode),
            state: MeasureState::StartMeasure,
            tune_state: TuneState::ParkingOnTop,
            prev_stats: Stats::default(),
            start_sample: Sample::default(),
            profile_ix: 0,
            steps_right: 0,
            steps_left: 0,
            tired: 0,
            programmed: cfg.initial_profile.min(NUM_PROFILES as u8 - 1),
            programmed_since: SimTime::ZERO,
            time_in_profile: [SimTime::ZERO; NUM_PROFILES],
            counters: DimCounters::default(),
        }
    }

    /// `net_dim` (`lib/dim/net_dim.c`), called where the driver calls it: after
    /// `napi_complete_done`, with the queue's running totals of completion events,
    /// packets and bytes (truncated to 16, 32 and 32 bits as `dim_update_sample` keeps
    /// them). Returns the new profile's moderation when the algorithm moved; the instance
    /// then ignores calls until [`Dim::profile_applied`] (the driver's work item).
    pub fn sample(
        &mut self,
        now: SimTime,
        events: u64,
        packets: u64,
        bytes: u64,
    ) -> Option<Moderation> {
        let end = Sample::at(now, events, packets, bytes);
        match self.state {
            MeasureState::ApplyNewProfile => {
                self.counters.ignored_while_applying += 1;
                return None;
            }
            MeasureState::MeasureInProgress => {
                let nevents = end.event_ctr.wrapping_sub(self.start_sample.event_ctr);
                if nevents < DIM_NEVENTS {
                    return None;
                }
                let Some(curr) = calc_stats(&self.start_sample, &end) else {
                    self.counters.zero_time += 1;
                    return None;
                };
                self.counters.measurements += 1;
                if self.decide(&curr) {
                    self.counters.profile_changes += 1;
                    self.state = MeasureState::ApplyNewProfile;
                    return Some(self.moderation());
                }
                // Fall through to DIM_START_MEASURE: this sample starts the next one.
            }
            MeasureState::StartMeasure => {}
        }
        self.start_sample = end;
        self.state = MeasureState::MeasureInProgress;
        None
    }

    /// The driver's work item ran at `now`: the NIC now runs the current profile and the
    /// next call starts a measurement (`mlx5e_rx_dim_work` -> `mlx5e_complete_dim_work`,
    /// `en_dim.c`: program the CQ, then `dim->state = DIM_START_MEASURE`). Does nothing
    /// unless a profile is waiting to be applied.
    pub fn profile_applied(&mut self, now: SimTime) {
        if self.state != MeasureState::ApplyNewProfile {
            return;
        }
        self.account(now);
        self.programmed = self.profile_ix;
        self.state = MeasureState::StartMeasure;
    }

    /// The algorithm's profile index, 0..=4 (`dim->profile_ix`).
    pub fn profile(&self) -> usize {
        self.profile_ix as usize
    }

    /// The moderation of the algorithm's profile.
    pub fn moderation(&self) -> Moderation {
        self.table[self.profile()]
    }

    /// The profile programmed in the NIC: `initial_profile` until the first work item.
    pub fn programmed_profile(&self) -> usize {
        self.programmed as usize
    }

    /// The profile table in use.
    pub fn table(&self) -> &'static [Moderation; NUM_PROFILES] {
        self.table
    }

    /// Measurement state.
    pub fn state(&self) -> MeasureState {
        self.state
    }

    /// Tuning state.
    pub fn tune_state(&self) -> TuneState {
        self.tune_state
    }

    /// The counters.
    pub fn counters(&self) -> &DimCounters {
        &self.counters
    }

    /// Its counters as of `now` under NIC `nic`'s name: `<nic>.dim.profile` (the
    /// profile programmed at the end), `.dim.measurements`, `.dim.profile_changes` and
    /// `.dim.profile<i>_ms` (time with profile `i` programmed \[ms\]).
    pub fn report(&self, nic: &str, now: SimTime, c: &mut std::collections::BTreeMap<String, f64>) {
        let k = &self.counters;
        c.insert(
            format!("{nic}.dim.profile"),
            self.programmed_profile() as f64,
        );
        c.insert(format!("{nic}.dim.measurements"), k.measurements as f64);
        c.insert(
            format!("{nic}.dim.profile_changes"),
            k.profile_changes as f64,
        );
        for (i, t) in self.time_in_profiles(now).iter().enumerate() {
            c.insert(format!("{nic}.dim.profile{i}_ms"), t.as_secs_f64() * 1e3);
        }
    }

    /// Time spent with each profile programmed in the NIC, from time zero to `now` [ps
    /// per profile index].
    pub fn time_in_profiles(&self, now: SimTime) -> [SimTime; NUM_PROFILES] {
        let mut t = self.time_in_profile;
        t[self.programmed as usize] += now.saturating_sub(self.programmed_since);
        t
    }

    fn account(&mut self, now: SimTime) {
        self.time_in_profile[self.programmed as usize] += now.saturating_sub(self.programmed_since);
        self.programmed_since = now;
    }

    /// `net_dim_decision` (`lib/dim/net_dim.c`): whether the profile index moved.
    fn decide(&mut self, curr: &Stats) -> bool {
        let prev_state = self.tune_state;
        let prev_ix = self.profile_ix;
        match self.tune_state {
            TuneState::ParkingOnTop => {
                if compare(curr, &self.prev_stats) != Verdict::Same {
                    self.exit_parking();
                }
            }
            TuneState::ParkingTired => {
                self.tired = self.tired.wrapping_sub(1);
                if self.tired == 0 {
                    self.exit_parking();
                }
            }
            TuneState::GoingRight | TuneState::GoingLeft => {
                if compare(curr, &self.prev_stats) != Verdict::Better {
                    self.turn();
                }
                if self.on_top() {
                    self.park_on_top();
                } else {
                    match self.step() {
                        StepResult::OnEdge => self.park_on_top(),
                        StepResult::TooTired => self.park_tired(),
                        StepResult::Stepped => {}
                    }
                }
            }
        }
        if prev_state != TuneState::ParkingOnTop || self.tune_state != TuneState::ParkingOnTop {
            self.prev_stats = *curr;
        }
        self.profile_ix != prev_ix
    }

    /// `net_dim_step` (`lib/dim/net_dim.c`).
    fn step(&mut self) -> StepResult {
        if self.tired == TIRED_STEPS {
            return StepResult::TooTired;
        }
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                if self.profile_ix as usize == NUM_PROFILES - 1 {
                    return StepResult::OnEdge;
                }
                self.profile_ix += 1;
                self.steps_right += 1;
            }
            TuneState::GoingLeft => {
                if self.profile_ix == 0 {
                    return StepResult::OnEdge;
                }
                self.profile_ix -= 1;
                self.steps_left += 1;
            }
        }
        self.tired += 1;
        StepResult::Stepped
    }

    /// `net_dim_exit_parking` (`lib/dim/net_dim.c`): left unless at 0, and one step (its
    /// result ignored, as there).
    fn exit_parking(&mut self) {
        self.tune_state = if self.profile_ix != 0 {
            TuneState::GoingLeft
        } else {
            TuneState::GoingRight
        };
        self.step();
    }

    /// `dim_on_top` (`lib/dim/dim.c`).
    fn on_top(&self) -> bool {
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => true,
            TuneState::GoingRight => self.steps_left > 1 && self.steps_right == 1,
            TuneState::GoingLeft => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    /// `dim_turn` (`lib/dim/dim.c`).
    fn turn(&mut self) {
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                self.tune_state = TuneState::GoingLeft;
                self.steps_left = 0;
            }
            TuneState::GoingLeft => {
                self.tune_state = TuneState::GoingRight;
                self.steps_right = 0;
            }
        }
    }

    /// `dim_park_on_top` (`lib/dim/dim.c`): clears the steps and `tired`.
    fn park_on_top(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tired = 0;
        self.tune_state = TuneState::ParkingOnTop;
        self.counters.parks_on_top += 1;
    }

    /// `dim_park_tired` (`lib/dim/dim.c`): clears the steps, keeps `tired` (10) to count
    /// down.
    fn park_tired(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tune_state = TuneState::ParkingTired;
        self.counters.parks_tired += 1;
    }
}

#[cfg(test)]
mod tests;
