//! FreeBSD DEVICE_POLLING (Rizzo, kern_poll.c; FreeBSD 4.x-6.x).
//!
//! Device interrupts are off. At every hardclock tick (`hz` per second)
//! `hardclock_device_poll` schedules the NETISR_POLL and NETISR_POLLMORE software
//! interrupts. `netisr_poll` calls every polling driver's poll routine for at most
//! `each_burst` frames (each frame: `rx_per_packet`, then ether_input into ipintrq);
//! the IP netisr then forwards them; `netisr_pollmore` schedules another round while
//! the tick's budget `poll_burst` is not used up. At the end of a tick's work it measures
//! the kernel time since the tick's first poll and adapts: if it exceeded
//! `(100 - user_frac)` % of the tick, `poll_burst` goes down by one, else up by one (to
//! `burst_max`). So at most about `(100 - user_frac)` % of the CPU goes to the network
//! and the rest stays with user processes. One tick in `reg_frac` polls with
//! POLL_AND_CHECK_STATUS: in that tick's first round each poll call also reads the
//! status register (the driver's `poll_status_check` cost; counter `status_checks`). With `idle_poll` the idle
//! loop polls as well (`poll_in_idle_loop`), using CPU nobody else wants.
//!
//! Parameters ([`PollingConfig`], `kernel.polling`) with kern_poll.c's defaults: `hz`
//! 1000, `burst_start` (poll_burst at the start of a run; default `burst_max`, see the
//! field), `burst_max` 150,
//! `each_burst` 5,
//! `user_frac` 50 [%], `reg_frac` 20 [ticks], `idle_poll` false. Invariant (checked):
//! 1 <= each_burst <= burst_max, 10 <= burst_max <= 1000.
//!
//! Counters (as sysctl kern.polling.*): `ticks`, `polls` (poll-routine calls),
//! `poll_burst` (final value), `lost_polls`, `suspect`, `stalled`, `pending_polls`,
//! `idle_polls`, and `status_checks` (poll calls with POLL_AND_CHECK_STATUS).

use crate::packet::Packet;
use crate::problems::Problems;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// kern.polling.* parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PollingConfig {
    /// Clock interrupts per second [1/s] (default 1000); must equal `kernel.clock.hz`
    /// when the clock interrupt is simulated (polling runs from hardclock, at HZ).
    #[serde(default = "d_hz")]
    pub hz: u32,
    /// poll_burst when the run starts [frames] (default: burst_max. kern_poll.c boots
    /// with 5 and adds one per tick while the kernel is under its share, so an idle
    /// system reaches burst_max within burst_max ticks, before any test traffic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_start: Option<u32>,
    /// Largest poll_burst [frames per tick] (default 150).
    #[serde(default = "d_burst_max")]
    pub burst_max: u32,
    /// Frames per poll-routine call [frames] (default 5).
    #[serde(default = "d_each")]
    pub each_burst: u32,
    /// CPU share reserved for user processes [%] (default 50).
    #[serde(default = "d_user_frac")]
    pub user_frac: u32,
    /// Ticks between status-register checks [ticks] (default 20).
    #[serde(default = "d_reg_frac")]
    pub reg_frac: u32,
    /// Also poll from the idle loop (default false).
    #[serde(default)]
    pub idle_poll: bool,
}

fn d_hz() -> u32 {
    1000
}
fn d_each() -> u32 {
    5
}
fn d_burst_max() -> u32 {
    150
}
fn d_user_frac() -> u32 {
    50
}
fn d_reg_frac() -> u32 {
    20
}

impl Default for PollingConfig {
    fn default() -> Self {
        PollingConfig {
            hz: d_hz(),
            burst_start: None,
            burst_max: d_burst_max(),
            each_burst: d_each(),
            user_frac: d_user_frac(),
            reg_frac: d_reg_frac(),
            idle_poll: false,
        }
    }
}

impl PollingConfig {
    /// Range checks (kern_poll.c rejects what it would otherwise clamp).
    pub fn validate(&self, p: &mut Problems) {
        if !(1..=100_000).contains(&self.hz) {
            p.push("hz", format!("must be 1 to 100000, got {}", self.hz));
        }
        if !(10..=1000).contains(&self.burst_max) {
            p.push(
                "burst_max",
                format!(
                    "must be 10 to 1000 (MIN/MAX_POLL_BURST_MAX), got {}",
                    self.burst_max
                ),
            );
        }
        if self.each_burst < 1 || self.each_burst > self.burst_max {
            p.push(
                "each_burst",
                format!(
                    "must be 1 to burst_max ({}), got {}",
                    self.burst_max, self.each_burst
                ),
            );
        }
        if let Some(b) = self.burst_start
            && (b < 1 || b > self.burst_max)
        {
            p.push(
                "burst_start",
                format!("must be 1 to burst_max ({}), got {b}", self.burst_max),
            );
        }
        if self.user_frac > 99 {
            p.push(
                "user_frac",
                format!("must be 0 to 99 %, got {}", self.user_frac),
            );
        }
        if self.reg_frac < 1 || self.reg_frac > self.hz.max(1) {
            p.push(
                "reg_frac",
                format!("must be 1 to hz ({}), got {}", self.hz, self.reg_frac),
            );
        }
    }
}

/// Where the poll handler is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PollStage {
    /// About to call the poll routine of `nics[idx]`.
    Call,
    /// Taking frames: `left` more allowed.
    Frames,
}

/// DEVICE_POLLING state (kern_poll.c's globals).
#[derive(Clone, Debug)]
pub struct Polling {
    pub(crate) cfg: PollingConfig,
    /// Clock period.
    pub tick: SimTime,
    /// Polling NICs, in registration order.
    pub(crate) nics: Vec<usize>,
    /// Frames per tick the kernel currently allows.
    pub(crate) poll_burst: u32,
    pub(crate) residual_burst: u32,
    pub(crate) reg_frac_count: u32,
    /// This round's poll calls read the status register (POLL_AND_CHECK_STATUS).
    pub(crate) check_status: bool,
    pub(crate) pending_polls: u32,
    pub(crate) phase: u32,
    pub(crate) poll_start: SimTime,
    /// Whether the idle loop polls.
    pub idle_poll: bool,
    // Current call.
    pub(crate) idx: usize,
    pub(crate) cycles: u32,
    pub(crate) left: u32,
    pub(crate) stage: PollStage,
    pub(crate) current: Option<Packet>,
    pub(crate) idle_current: Option<(usize, u32, Option<Packet>)>,
    pub(crate) ticks: u64,
    pub(crate) polls: u64,
    pub(crate) lost_polls: u64,
    pub(crate) suspect: u64,
    pub(crate) stalled: u64,
    pub(crate) idle_polls: u64,
    pub(crate) status_checks: u64,
}

impl Polling {
    /// State from kern.polling.* parameters.
    pub fn new(cfg: &PollingConfig) -> Polling {
        Polling {
            cfg: cfg.clone(),
            tick: SimTime::from_ns_f64(1e9 / cfg.hz as f64),
            nics: Vec::new(),
            poll_burst: cfg.burst_start.unwrap_or(cfg.burst_max),
            residual_burst: 0,
            reg_frac_count: 0,
            check_status: false,
            pending_polls: 0,
            phase: 0,
            poll_start: SimTime::ZERO,
            idle_poll: cfg.idle_poll,
            idx: 0,
            cycles: 0,
            left: 0,
            stage: PollStage::Call,
            current: None,
            idle_current: None,
            ticks: 0,
            polls: 0,
            lost_polls: 0,
            suspect: 0,
            stalled: 0,
            idle_polls: 0,
            status_checks: 0,
        }
    }

    /// Publish the counters.
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        for (k, v) in [
            ("ticks", self.ticks),
            ("polls", self.polls),
            ("poll_burst", self.poll_burst as u64),
            ("lost_polls", self.lost_polls),
            ("suspect", self.suspect),
            ("stalled", self.stalled),
            ("pending_polls", self.pending_polls as u64),
            ("idle_polls", self.idle_polls),
            ("status_checks", self.status_checks),
        ] {
            c.insert(format!("polling.{k}"), v as f64);
        }
    }
}
